"""A sweep whose every row is refused says so and exits 1 (newcomer walkthrough 12: it wrote the rows, exit 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli_helpers import invoke


def test_a_sweep_past_the_limit_or_on_a_card_too_small_prices_nothing_and_says_so(tmp_path: Path) -> None:
    """`--positions 8000` past r1-qwen7b-h200's 4,096 limit refuses every row as BadContexts, and DeepSeek-V3 on one
    H200 every row as NotResident: the rows are written with their refusals, one `refused:` line names each
    refusal and its lines, exit 1. A sweep with one priced line is untouched (exit 0)."""
    out = tmp_path / "g.csv"
    done = invoke("sweep", "r1-qwen7b-h200", "--positions", "8000", "--batches", "1-4", "-o", str(out))
    assert done.exit_code == 1, done.output
    assert out.read_text().count("BadContexts") == 4
    assert ("passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and "
            "at every larger one: BadContexts (1 line) — r1-qwen7b-h200 on h200_sxm_141gb at position 8000, batch 1: "
            "bad context mix: position 8000 is not below its limit 4096: a pass at a position writes that position's "
            "row, and a sequence allowed 4096 positions holds rows 0 to 4095: raise --limit or lower --positions; the "
            "rows and their refusals were written") in done.stderr
    done = invoke("sweep", "deepseek-v3-h200", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--batches", "1-2",
                  "-o", str(out), "--force")
    assert done.exit_code == 0, done.output  # r1 prices on the H200
    assert "no row of the sweep has a price" not in done.stderr
    done = invoke("sweep", "deepseek-v3-h200", "--cards", "h200_sxm_141gb,rtx_4090", "--batches", "1-2", "-o",
                  str(out), "--force")
    assert done.exit_code == 1, done.output
    assert ("every line is refused at its smallest batch, and at every larger one: NotResident (2 lines) — "
            in done.stderr)


def test_a_sweep_under_a_stack_beyond_its_runs_still_has_the_limits_prices(tmp_path: Path) -> None:
    """Under llamacpp-cuda-2405 (runs at batch 1 alone) batches 2-4 are BeyondStack in the expected columns, but each
    row's limit is priced: no claim that nothing priced (exit 0)."""
    done = invoke("sweep", "r1-qwen7b-h200", "--batches", "2-4", "--stack", "llamacpp-cuda-2405", "-o",
                  str(tmp_path / "g.csv"))
    assert done.exit_code == 0, done.output
    assert "no row of the sweep has a price" not in done.stderr


def test_a_sweep_that_priced_a_row_does_not_probe_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe that prices the grid's smallest batch again (nothing_priced) runs only where this process saw no
    price (issue 16, sweep38: 14-20 ms of the bench grid's whole run, its first 170 lines refused): DeepSeek-V3
    refused on the H200, r1 priced, exit 0 without the probe; every row refused, the probe runs and says so (exit 1);
    with --jobs 2 the parent adds every block's tally (the workers' too), so it never probes a grid with a price."""
    import passprice.sweep as sweep

    probed: list[int] = []
    real = sweep.nothing_priced

    def counted(*args: object) -> object:
        probed.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep, "nothing_priced", counted)
    out = tmp_path / "g.csv"
    done = invoke("sweep", "deepseek-v3-h200", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--batches", "1-2",
                  "--jobs", "1", "-o", str(out))
    assert done.exit_code == 0, done.output
    assert probed == []
    assert out.read_text().count("NotResident") == 2  # the refused rows are written all the same
    done = invoke("sweep", "deepseek-v3-h200", "--cards", "h200_sxm_141gb", "--batches", "1-2", "--jobs", "1", "-o",
                  str(out), "--force")
    assert done.exit_code == 1, done.output
    assert probed == [1]
    assert "NotResident (1 line)" in done.stderr
    # --jobs 2: each process takes the next serving whenever it is free (session 38), so the parent prices r1,
    # DeepSeek-V3, both or neither: it probed where it saw no price itself (DeepSeek-V3's alone, or no block), once,
    # which found r1's price; each block's tally is added now (a worker's included), so no probe whoever priced r1.
    import os

    import passprice.sweepjobs as sweepjobs

    parent, made, mine = os.getpid(), sweepjobs._held_text, []

    def noted(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() == parent:
            mine.append(args[4])  # a block (here a serving) this process made
        return made(*args, **kwargs)

    monkeypatch.setattr(sweepjobs, "_held_text", noted)
    r1_first, deepseek_first = ("r1-qwen7b-h200", "deepseek-v3-h200"), ("deepseek-v3-h200", "r1-qwen7b-h200")
    for order in (r1_first, deepseek_first):
        probed.clear()
        mine.clear()
        done = invoke("sweep", *order, "--cards", "h200_sxm_141gb", "--batches", "1-2", "--jobs", "2", "-o",
                      str(out), "--force")
        assert done.exit_code == 0, done.output
        assert probed == [], (order, mine)
        assert "no row of the sweep has a price" not in done.stderr
        assert "passprice: refused: NotResident (2 of 4 rows, 2 priced) — deepseek-v3-h200 on h200_sxm_141gb" in (
            done.stderr)


def test_a_segment_says_whether_it_has_a_price() -> None:
    """Segment.has_price: a row priced on the arrays, or priced alone, is a price; refusals alone are not."""
    import numpy as np

    from passprice.sweep import _ALONE, _PRICED, Segment

    def segment(status: list[int], priced: bool, alone: dict[int, dict[str, object]]) -> Segment:
        return Segment({}, np.arange(1, len(status) + 1), np.array(status), ("NotResident",),
                       {"tokens_per_s": np.ones(len(status))} if priced else None, alone, ("", ""), ("", ""))

    assert segment([1, _PRICED], True, {}).has_price()
    assert not segment([1, 1], False, {}).has_price()
    assert not segment([1, 1], True, {}).has_price()  # arrays made, every row refused
    assert segment([1, _ALONE], False, {1: {"tokens_per_s": 2.0}}).has_price()
