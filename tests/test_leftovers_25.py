"""Leftovers of session 24 (issue 13), each reproduced first.

1. Eleven derived facts whose derivation reads another fact (B200 ×3, H100 SXM5 ×2, H200 ×2, SN40L ×2, qwen35-mtp ×2)
   had no ``derivation.digits``: exact, so an edit of the fact they read that gives a repeating decimal (B200
   bandwidth 8 → 7.7 TB/s: 7.35 / 7.7 = 0.954545…) left ``fact recompute`` unable to write them (exit 2). Each now
   states the significant digits its value is rounded to, chosen so that no recorded value changes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from cli_helpers import copy_root, invoke
from passprice.registry import embedded_root


def _undigited(table: dict[str, Any], path: str = "") -> list[str]:
    """The dotted paths of ``table``'s facts whose derivation reads another fact and states no ``digits``."""
    found = []
    for key, value in table.items():
        if not isinstance(value, dict):
            continue
        here = f"{path}.{key}" if path else key
        derivation = value.get("derivation")
        if isinstance(derivation, dict) and "formula" in derivation:
            reads_a_fact = any("fact" in one for one in derivation.get("inputs", {}).values())
            if reads_a_fact and "digits" not in derivation:
                found.append(here)
        found += _undigited(value, here)
    return found


def test_1_every_derivation_reading_a_fact_states_its_digits() -> None:
    facts = embedded_root().path / "facts"
    missing = [f"{file.relative_to(facts).as_posix()}: {path}" for file in sorted(facts.rglob("*.toml"))
               for path in _undigited(tomllib.loads(file.read_text(encoding="utf-8")))]
    assert missing == []  # was 11: b200 on_chip.bandwidth, streams.read, scale; h100/h200 on_chip.bandwidth, scale; …


def test_1_the_recompute_a_bandwidth_edit_asks_for_writes_the_share(tmp_path: Path) -> None:
    # Was: `fact recompute b200` exit 2 ("streams.read: measured / bandwidth gives 0.9545454545…"), digits missing.
    root = copy_root(tmp_path)
    edit = invoke("fact", "set", "b200", "memory.bandwidth", "--value", "7.7", "--unit", "TB/s", "--provenance",
                  "published", "--source", "glennklockwood-b200", "--locator", "later HGX B200 datasheet: 7.7 TB/s",
                  "--note", "7.7", root=root)
    assert edit.exit_code == 0, edit.output
    assert "derivation.digits" not in edit.stderr
    done = invoke("fact", "recompute", "b200", root=root)
    assert done.exit_code == 0, done.output
    # By hand: 7.35 / 7.7 = 0.9545454… → 0.95455 (5 digits: the recorded 0.91875 is 7.35 / 8 to 5); append = read ×
    # (2.97/3.18 + 4.15/4.48) / 2 = 0.95455 × 0.930151 = 0.88787 → 0.8879; rewrite = read × (2.9/3.18 + 4.0/4.48) / 2
    # = 0.95455 × 0.902404 = 0.86139 → 0.8614.
    assert round(0.95455 * (2.97 / 3.18 + 4.15 / 4.48) / 2, 4) == 0.8879
    assert round(0.95455 * (2.9 / 3.18 + 4.0 / 4.48) / 2, 4) == 0.8614
    assert done.stdout.splitlines() == [
        "facts/cards/b200.toml: streams.read: 0.91875 -> 0.95455 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.append: 0.8546 -> 0.8879 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.rewrite: 0.8291 -> 0.8614 (recomputed from today's inputs)",
    ]
    assert invoke("check", root=root).exit_code == 0
