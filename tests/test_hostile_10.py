"""Attack round 10 (issue 13) on the main of round 9's fixes: each test builds the input that broke it and asserts
what passprice now does with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

# --- a registered serving named by a path is under its locks ------------------------------------------------------


def _bandwidth_assumed(root: Path) -> None:
    """The H200's memory.bandwidth made an assumption, below the published floor of lock r1-qwen7b-h200."""
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    old = 'value = 4.8\nunit = "TB/s"\nprovenance = "published"\n'
    assert old in text
    card.write_text(text.replace(old, 'value = 4.8\nunit = "TB/s"\nprovenance = "assumed"\n', 1), encoding="utf-8")


@pytest.mark.parametrize("ref", ["./r1-qwen7b-h200", "../servings/r1-qwen7b-h200", "link"])
def test_a_registered_serving_named_by_a_path_is_priced_under_its_lock(tmp_path: Path, ref: str) -> None:
    """``price ./r1-qwen7b-h200`` (or ``../servings/r1-qwen7b-h200``) reads the registered serving's file, but the
    lock guard took a name holding ``/`` for a serving kept elsewhere: with the H200's bandwidth made an assumption
    below the lock's published floor, ``price r1-qwen7b-h200`` was refused LockFloor and ``price ./r1-qwen7b-h200``
    priced it, exit 0, 'not a registered serving: no lock applies'. So was a link kept elsewhere to the registered
    file (it was taken for a serving named after the link)."""
    root = copy_root(tmp_path)
    _bandwidth_assumed(root)
    if ref == "link":
        ref = str(tmp_path / "elsewhere.toml")
        Path(ref).symlink_to(root / "registry" / "servings" / "r1-qwen7b-h200.toml")
    result = invoke("price", ref, "--json", root=root)
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["refusal"] == "LockFloor" and out["locks"][0].startswith("r1-qwen7b-h200"), out
    assert result.stderr == (
        "passprice: refused: LockFloor: lock r1-qwen7b-h200 refuses this price: memory.bandwidth is assumed, below "
        "the floor published (the price's weakest provenance is assumed, carried by memory.bandwidth)\n"
    )
