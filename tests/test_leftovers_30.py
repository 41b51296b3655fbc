"""Issue 13's leftovers from session 29's closing note (task left30), each reproduced here first.

1. ``fact set``'s floor warning was uncapped: 1,000 locks below a new value printed 1,004 lines in 3.0 s.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke

SET_REWRITE = ("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1", "--source",
               "azure-ai-benchmarking-guide", "--locator", "BabelStream Mul share x 0.96 (an engineering estimate)",
               "--provenance", "estimated")


def _floor_line(file: str) -> str:
    return ("passprice: warning: facts/cards/h200_sxm_141gb.toml: streams.rewrite is estimated now, below the floor "
            "measured of lock qwen35-27b-h200-mtp: `passprice check` (the pre-commit hook) and the review fail it; "
            f"restore the fact, or loosen that floor on purpose (`passprice lock --update -o locks/{file} --force "
            "--require streams.rewrite=estimated`)")


def test_fact_set_names_five_locks_below_a_floor_then_counts_the_rest(tmp_path: Path) -> None:
    # Session 29: 1,000 copies of the one lock resting on the H200's streams.rewrite (at `measured`) gave 1,004
    # warning lines (1,001 floor lines) in 3.0 s. Now the first five by file name, then one line counting the rest.
    root = copy_root(tmp_path)
    lock = root / "locks" / "qwen35-27b-h200-mtp.lock.toml"
    for i in range(1, 1001):
        shutil.copyfile(lock, root / "locks" / f"copy{i:04}.lock.toml")
    out = invoke(*SET_REWRITE, root=root)
    assert out.exit_code == 0, out.output
    floors = [line for line in out.stderr.splitlines() if "below the floor" in line or "more lock" in line]
    assert floors == [*(_floor_line(f"copy{i:04}.lock.toml") for i in range(1, 6)),
                      "passprice: warning: facts/cards/h200_sxm_141gb.toml: and 996 more locks below their floors "
                      "for streams.rewrite (`passprice check` lists every one)"]
    assert len(out.stderr.splitlines()) == 8  # was 1,003: two notes on the entry, then 1,001 floor lines


def test_fact_set_with_two_locks_below_a_floor_names_both(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    shutil.copyfile(root / "locks" / "qwen35-27b-h200-mtp.lock.toml", root / "locks" / "copy.lock.toml")
    out = invoke(*SET_REWRITE, root=root)
    assert out.exit_code == 0, out.output
    floors = [line for line in out.stderr.splitlines() if "floor" in line]
    assert floors == [_floor_line("copy.lock.toml"), _floor_line("qwen35-27b-h200-mtp.lock.toml")]
