"""The first mixture-of-experts decode runs checked against a measurement (session 33, moe43): gpt-oss-20b (MXFP4)
on one RTX 4090, llama-bench tg128/tg256/tg512 of ggml-org/llama.cpp PR #16834's 'master' column
(registry/measurements/llamacpp-pr16834-moe.toml), priced as the card's limit and under the registered llama.cpp
stack; and ``sweep --memory-use``."""

from __future__ import annotations

import attrs
import pytest

from cli_helpers import REPO, invoke
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

MEASURED = {"tg128": 186.10, "tg256": 184.63, "tg512": 183.95}  # as the PR's table printed them


@pytest.fixture(scope="module")
def moe_runs() -> list:
    root = Root(REPO)
    # gpt-oss-20b's rows (the same table's Qwen3-30B-A3B rows: tests/test_moe44.py)
    runs = [r for r in load_runs(root) if r.id.startswith("pr16834.rtx_4090.gpt-oss-20b-mxfp4.")]
    return [root, runs]


def test_the_moe_runs_are_the_pr_table_rows_as_printed(moe_runs: list) -> None:
    _, runs = moe_runs
    assert {r.id.rsplit(".", 1)[1]: r.tokens_per_s for r in runs} == MEASURED
    assert {(r.card, r.checkpoint, r.routing, r.batch, r.stack) for r in runs} == {
        ("rtx_4090", "gpt-oss-20b-mxfp4", "uniform", 1, "llamacpp-cuda-2510")}
    assert [(r.first, r.last) for r in runs] == [(0, 128), (0, 256), (0, 512)]
    assert {r.source_id for r in runs} == {"ggml-org-llama-cpp-pr16834"}


def test_the_limit_bounds_them_2_1_times_over_and_the_dense_fitted_stack_is_5_percent_under(moe_runs: list) -> None:
    root, runs = moe_runs
    # The run's own stack (llama.cpp master of 2025-10-29) is not registered: the card's limit only.
    rows = validate(root, runs=runs).rows
    # 390.4 at 0..256 before session 39 (window55): gpt-oss's windowed layers read 127 of their 128 window
    assert [round(r.limit, 1) for r in rows] == [391.0, 390.5, 389.9]
    assert [round(r.limit_ratio, 2) for r in rows] == [2.1, 2.11, 2.12]
    assert {r.binds for r in rows} == {"memory"} and all(r.expected is None for r in rows)
    # Under the registered llama.cpp stack (fitted on dense Llama-3 runs of May 2024): 176.5, 176.2, 176.0 expected,
    # 4.3 to 5.2 % under what was measured.
    rows = validate(root, runs=[attrs.evolve(r, stack="llamacpp-cuda-2405") for r in runs]).rows
    assert [round(r.expected, 1) for r in rows] == [176.5, 176.2, 176.0]
    assert [round(100 * r.error, 1) for r in rows] == [-5.2, -4.5, -4.3]


# sweep --memory-use (moe43): the headroom best, max-batch, compare and roofline keep, a serving field a lock pins.
R1 = "r1-qwen7b-h200"  # DeepSeek-R1-Distill-Qwen-7B Q4_K_M on an H200 (141 GB)


def _rows(text: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","), strict=True)) for line in lines[1:]]


def test_sweep_memory_use_refuses_the_rows_past_the_fraction_by_hand() -> None:
    # By hand: the serving holds 4,677,120,000 B shared and 234,881,024 B a sequence; 0.9 of 141e9 B is 126.9e9 B.
    # Batch 520 holds 4,677,120,000 + 520 × 234,881,024 = 126,815,252,480 B (fits); 521 holds 127,050,133,504 B (does
    # not), the largest batch max-batch --memory-use 0.9 finds; without it 521 fits the card's 141e9 B.
    result = invoke("sweep", R1, "--batches", "520,521", "--memory-use", "0.9", "--no-lock")
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert [(r["batch"], r["held_bytes"], r["capacity_bytes"], r["refusal"]) for r in rows] == [
        ("520", str(4_677_120_000 + 520 * 234_881_024), "126900000000", ""),
        ("521", "", "", "NotResident")]
    plain = _rows(invoke("sweep", R1, "--batches", "521", "--no-lock").stdout)
    assert (plain[0]["held_bytes"], plain[0]["capacity_bytes"], plain[0]["refusal"]) == (
        str(4_677_120_000 + 521 * 234_881_024), "141000000000", "")
    # the prices of the rows that fit are not changed by it
    assert rows[0]["tokens_per_s"] == _rows(invoke("sweep", R1, "--batches", "520", "--no-lock").stdout)[0][
        "tokens_per_s"]
    refused = invoke("sweep", R1, "--memory-use", "1.5")
    assert refused.exit_code == 2 and refused.stderr.startswith(
        "passprice: error: Invalid value for '--memory-use': 1.5 is out of range (a finite number above 0 and at most "
        "1)")


def test_sweep_memory_use_is_a_change_of_the_locked_serving() -> None:
    result = invoke("sweep", R1, "--batches", "1", "--memory-use", "0.9")
    assert result.exit_code == 0, result.output
    assert "serving differs from the locked one: memory_use: (none) → 0.9" in result.stderr
