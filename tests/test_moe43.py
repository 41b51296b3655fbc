"""The first mixture-of-experts decode runs checked against a measurement (session 33, moe43): gpt-oss-20b (MXFP4)
on one RTX 4090, llama-bench tg128/tg256/tg512 of ggml-org/llama.cpp PR #16834's 'master' column
(registry/measurements/llamacpp-pr16834-moe.toml), priced as the card's limit and under the registered llama.cpp
stack; and ``sweep --memory-use``."""

from __future__ import annotations

import attrs
import pytest

from cli_helpers import REPO
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

MEASURED = {"tg128": 186.10, "tg256": 184.63, "tg512": 183.95}  # as the PR's table printed them


@pytest.fixture(scope="module")
def moe_runs() -> list:
    root = Root(REPO)
    runs = [r for r in load_runs(root) if r.id.startswith("pr16834.")]
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
    assert [round(r.limit, 1) for r in rows] == [391.0, 390.4, 389.9]
    assert [round(r.limit_ratio, 2) for r in rows] == [2.1, 2.11, 2.12]
    assert {r.binds for r in rows} == {"memory"} and all(r.expected is None for r in rows)
    # Under the registered llama.cpp stack (fitted on dense Llama-3 runs of May 2024): 176.5, 176.2, 176.0 expected,
    # 4.3 to 5.2 % under what was measured.
    rows = validate(root, runs=[attrs.evolve(r, stack="llamacpp-cuda-2405") for r in runs]).rows
    assert [round(r.expected, 1) for r in rows] == [176.5, 176.2, 176.0]
    assert [round(100 * r.error, 1) for r in rows] == [-5.2, -4.5, -4.3]
