"""A mixture of experts measured above one token-row a pass (session 33, moe45): gpt-oss-20b (MXFP4) on one RTX
3090, llama-bench pp512 at microbatch sizes 1 to 512, the master column (617db241a) of ggml-org/llama.cpp PR #20586
(registry/measurements/llamacpp-pr20586-moe.toml), priced as the card's limit under the uniform routing record, and
the measured pass times set against the record's expected distinct experts D(T) = E · (1 − (1 − k / E)^T)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from cli_helpers import REPO
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

PREFIX = "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub"
# as the PR's table printed them: microbatch size -> 't/s 617db241a'
MEASURED = {1: 238.89, 2: 283.62, 4: 339.24, 8: 507.06, 16: 808.75, 32: 1228.01, 64: 1671.74, 128: 2036.35,
            256: 3086.19, 512: 4739.20}


@pytest.fixture(scope="module")
def priced() -> dict[str, list]:
    """The ten runs, validated as the card's limit (their stack is not registered) and under llamacpp-cuda-2405."""
    root = Root(REPO)
    runs = [r for r in load_runs(root) if r.id.startswith(PREFIX)]
    return {
        "runs": runs,
        "limit": validate(root, runs=runs).rows,
        "stack": validate(root, runs=[attrs.evolve(r, stack="llamacpp-cuda-2405") for r in runs]).rows,
    }


def test_the_runs_are_the_pr_table_rows_as_printed(priced: dict[str, list]) -> None:
    runs = priced["runs"]
    assert {r.batch: r.tokens_per_s for r in runs} == MEASURED
    assert [r.id.removeprefix(PREFIX) for r in runs] == [str(b) for b in MEASURED]
    assert {(r.card, r.checkpoint, r.routing, r.stack, r.source_id, r.first, r.last) for r in runs} == {
        ("rtx_3090", "gpt-oss-20b-mxfp4", "uniform", "llamacpp-cuda-2603", "ggml-org-llama-cpp-pr20586", 0, 512)}
    # each locator quotes its own row: the master figure, then the PR's
    # (the row as printed, padding kept: cite65; tests/test_cite65.py checks it against the thread's text)
    assert runs[0].locator.endswith("'| RTX 3090       | gpt-oss 20B MXFP4 MoE   |               1 | pp512 |        "
                                    "238.89 |        237.49 |    0.99 |' (t/s 617db241a 238.89 kept, t/s cc1232a41 "
                                    "237.49)")
    assert runs[-1].locator.endswith("|             512 | pp512 |       4739.20 |       4702.81 |    0.99 |' "
                                     "(t/s 617db241a 4739.20 kept, t/s cc1232a41 4702.81)")


def test_the_limit_over_batch(priced: dict[str, list]) -> None:
    rows = priced["limit"]
    # 504.7, 1433.7, 2566.3, 4933.1, 9353.1, 16948.9 before session 39 (window55): gpt-oss's windowed layers read 127
    # of their 128-position window (the row's own written besides), not 128
    assert [round(r.limit, 1) for r in rows] == [362.1, 504.8, 673.9, 928.3, 1433.8, 2566.5, 4933.8, 9355.6,
                                                 16957.1, 19695.2]
    assert [round(r.limit_ratio, 2) for r in rows] == [1.52, 1.78, 1.99, 1.83, 1.77, 2.09, 2.95, 4.59, 5.49, 4.16]
    assert [r.binds for r in rows] == ["memory"] * 9 + ["array"]
    assert all(r.expected is None for r in rows)
    # Memory-bound up to B = 256, the limit's pass is a + b·B + c·D(B): 1.303 GB of shared weights, 9.465 MB a
    # sequence (its cache at mean position 256 and embedding row), 318 MB an expert index over the 24 layers
    t = {r.run.batch: r.run.batch / r.limit for r in rows}
    d = {b: 32 * (1 - (7 / 8) ** b) for b in MEASURED}
    assert [round(d[b], 2) for b in (1, 2, 4, 8, 16, 32, 64)] == [4.0, 7.5, 13.24, 21.0, 28.22, 31.55, 31.99]
    # B = 32 to 64: the experts all but saturate (31.55 -> 31.99), so the limit's pass grows by 32 caches and 0.44
    # of an expert index only: 12.47 -> 12.97 ms, where the measured pass grows 26.06 -> 38.28 ms
    assert round(t[32] * 1e3, 2) == 12.47 and round(t[64] * 1e3, 2) == 12.97
    assert round(32 / MEASURED[32] * 1e3, 2) == 26.06 and round(64 / MEASURED[64] * 1e3, 2) == 38.28


def test_the_stack_prices_batch_1_only(priced: dict[str, list]) -> None:
    first, *rest = priced["stack"]
    assert round(first.expected, 1) == 142.1 and round(first.error * 100, 1) == -40.5
    assert first.expected_binds == "scale"
    assert all(r.expected is None for r in rest)
    assert rest[0].why == (
        "refused (BeyondStack): llamacpp-cuda-2405 was calibrated on batch 1 … 1; this price needs batch 2; calibrate "
        "the stack on runs at that batch, or name another stack for it")  # price's options left out (test_fix168.py)


def _fit(x: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """Least squares t = a + b·x: (a, b, root-mean-square residual), all in ms."""
    b, a = np.polyfit(x, t, 1)
    return float(a), float(b), float(np.sqrt(np.mean((t - (a + b * x)) ** 2)))


def test_the_measured_pass_grows_with_distinct_experts_up_to_16_rows(priced: dict[str, list]) -> None:
    """Up to B = 16 the measured pass time is linear in the uniform record's D(B) (0.60 ms RMS of 4.2-19.8 ms), not
    in B (1.94 ms); a Qwen3-like skew read onto gpt-oss's 32 experts (45.3 % of them taking 90 %) fits closer still
    (0.19 ms), with a fixed cost near zero. Past B = 32 the experts saturate and the pass keeps growing: the bytes no
    longer decide it."""
    bs = np.array([1, 2, 4, 8, 16], dtype=float)
    t = bs / np.array([MEASURED[int(b)] for b in bs]) * 1e3
    assert list(np.round(t, 2)) == [4.19, 7.05, 11.79, 15.78, 19.78]
    uniform = 32 * (1 - (1 - 4 / 32) ** bs)
    a, b, rms = _fit(uniform, t)
    assert (round(a, 2), round(b, 3), round(rms, 2)) == (2.31, 0.636, 0.6)
    assert round(_fit(bs, t)[2], 2) == 1.94
    h, s = 0.453125, 0.9  # the Qwen3-30B-A3B record's shares, as a shape only (it routes 8 of 128, not 4 of 32)
    p_hot, p_cold = 4 * s / (h * 32), 4 * (1 - s) / ((1 - h) * 32)
    skewed = h * 32 * (1 - (1 - p_hot) ** bs) + (1 - h) * 32 * (1 - (1 - p_cold) ** bs)
    a, b, rms = _fit(skewed, t)
    assert (round(a, 2), round(b, 3), round(rms, 3)) == (0.21, 0.988, 0.185)
    # the limit charges an expert index 0.346 ms (318 MB over the 24 layers at the card's read bandwidth, with the
    # sequences' caches beside); the measured pass, read through the uniform record, 0.636 ms: 1.84 × the limit's
    limit_t = np.array([r.run.batch / r.limit for r in priced["limit"][:5]]) * 1e3
    limit_b = _fit(uniform, limit_t)[1]
    assert round(limit_b, 3) == 0.346 and round(_fit(uniform, t)[1] / limit_b, 2) == 1.84
