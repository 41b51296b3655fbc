"""Findings of the twenty-seventh walkthrough: the leftovers a README-only walkthrough found before it (its fixes
were lost with its machine), each kept as a reproducer, then what a new user following the README met."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

ROUTING = Path("facts") / "routing" / "qwen3-30b-a3b-measured.toml"


def _move_hot_share(root: Path, to: str = "0.85") -> None:
    record = root / ROUTING
    text = record.read_text()
    assert "\nvalue = 0.9\n" in text
    record.write_text(text.replace("\nvalue = 0.9\n", f"\nvalue = {to}\n"))


def test_reproduce_of_a_moe_lock_shows_the_routing_figures_that_moved(tmp_path: Path) -> None:
    # Was one row "routing  changed  changed  changed": the record priced is an object, shown whole.
    root = copy_root(tmp_path)
    _move_hot_share(root)
    result = invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "changed  " not in text.split("field ")[1]
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith("routing.")}
    assert set(rows) == {"routing.distinct", "routing.bytes"}
    recorded, reproduced, today = (float(v) for v in rows["routing.distinct"])
    assert recorded == reproduced == 94.44409867634815
    # D(T) = Σ_e 1 − (1 − p_e)^T at T = 64 token-rows, hot set 58 of 128 experts taking 0.85 of 8 slots a token.
    hot, cold = 8 * 0.85 / 58, 8 * 0.15 / 70
    assert abs(today - (58 * (1 - (1 - hot) ** 64) + 70 * (1 - (1 - cold) ** 64))) < 1e-9
    assert "facts          1 drifted: routing.hot_share: 0.9 (measured) → 0.85 (measured)" in text
    data = json.loads(invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml", "--json", root=root).stdout)
    assert data["today"]["routing"]["distinct"] == today
