"""A sweep whose every row is refused says so and exits 1 (newcomer walkthrough 12: it wrote the rows, exit 0)."""

from __future__ import annotations

from pathlib import Path

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
            "at every larger one: BadContexts (1 line); the rows and their refusals were written") in done.stderr
    done = invoke("sweep", "deepseek-v3-h200", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb", "--batches", "1-2",
                  "-o", str(out), "--force")
    assert done.exit_code == 0, done.output  # r1 prices on the H200
    assert "no row of the sweep has a price" not in done.stderr
    done = invoke("sweep", "deepseek-v3-h200", "--cards", "h200_sxm_141gb,rtx_4090", "--batches", "1-2", "-o",
                  str(out), "--force")
    assert done.exit_code == 1, done.output
    assert "every line is refused at its smallest batch, and at every larger one: NotResident (2 lines)" in done.stderr


def test_a_sweep_under_a_stack_beyond_its_runs_still_has_the_limits_prices(tmp_path: Path) -> None:
    """Under llamacpp-cuda-2405 (runs at batch 1 alone) batches 2-4 are BeyondStack in the expected columns, but each
    row's limit is priced: no claim that nothing priced (exit 0)."""
    done = invoke("sweep", "r1-qwen7b-h200", "--batches", "2-4", "--stack", "llamacpp-cuda-2405", "-o",
                  str(tmp_path / "g.csv"))
    assert done.exit_code == 0, done.output
    assert "no row of the sweep has a price" not in done.stderr
