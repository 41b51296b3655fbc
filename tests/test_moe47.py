"""Can the uniform routing record be told from Qwen3-30B-A3B's measured record by pass times above batch 1 (session
34, moe47)? The fit moe45 ran on gpt-oss-20b (pass time = fixed cost + per-expert cost × D(B), each record's
expected distinct experts D from :class:`passprice.routing.Router`), run here on the record's own model as passprice
prices it (Qwen3-30B-A3B Q4_K_M on an RTX 4090, the card of the registry's Qwen3 runs) and on the one public
multi-batch MoE table found beside moe45's (DeepSeek-V2-Lite on an RTX 3090, ggml-org/llama.cpp PR #15525: not
registered here, since no DeepSeek-V2-Lite configuration was found to cite for ``synth``; moe48 registered it,
tests/test_moe48.py). Finding: with a free fixed cost
and a free per-expert cost, neither table can decide, and the record's own model could not either at the noise
moe45 saw; pinning the per-expert cost to the bytes' price is what would."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest

from cli_helpers import REPO
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.routing import Router
from passprice.validate import validate

BATCHES = (1, 2, 4, 8, 16, 32, 64)
UNIFORM = Router(128, 8)
MEASURED = Router(128, 8, 0.453125, 0.9)  # facts/routing/qwen3-30b-a3b-measured.toml: 58 of 128 take 0.9

# ggml-org/llama.cpp PR #15525 ('CUDA: MoE helper in device code, better tile sizes'), description table, rows
# 'RTX 3090 | deepseek2 16B Q4_0 | B | pp512', read in stored excerpts: microbatch size -> (t/s master,
# t/s cuda-mmq-moe-device-4). DeepSeek-V2-Lite routes 6 of 64 experts a token (and 2 shared experts).
PR15525 = {1: (180.89, 180.53), 2: (158.03, 180.94), 4: (241.87, 291.18), 8: (374.09, 475.54),
           16: (499.68, 784.29), 32: (854.65, 1209.58)}


def fit(x: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """Least squares t = a + b·x over the points: (a fixed cost, b a cost per distinct expert, RMS residual), in the
    units of ``t`` (ms here). moe45's fit (tests/test_moe45.py), with D(B) from :meth:`Router.distinct`."""
    b, a = np.polyfit(x, t, 1)
    return float(a), float(b), float(np.sqrt(np.mean((t - (a + b * x)) ** 2)))


def through_first(x: np.ndarray, t: np.ndarray, k: int) -> tuple[float, float]:
    """The fit with its fixed cost pinned by the batch-1 point, t = t(1) + b·(D(B) − k) (D(1) = k whatever the
    routing): (b, RMS residual). One free parameter, so a record's shape is not absorbed by a fitted fixed cost."""
    y, z = t - t[0], x - k
    b = float(np.dot(z, y) / np.dot(z, z))
    return b, float(np.sqrt(np.mean((y - b * z) ** 2)))


@pytest.fixture(scope="module")
def qwen3_limits() -> dict[str, np.ndarray]:
    """Qwen3-30B-A3B Q4_K_M on one RTX 4090, positions 0-128, at each of BATCHES: the limit's pass time (ms) under
    each routing record, priced as validate prices a run (the registry's Qwen3 run at batch 1, moved)."""
    root = Root(Path(REPO))
    base = next(r for r in load_runs(root) if r.id == "pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg128")
    out = {}
    for record in ("uniform", "qwen3-30b-a3b-measured"):
        runs = [attrs.evolve(base, id=f"moe47.{record}.{b}", checkpoint="qwen3-30b-a3b-q4_k_m", batch=b,
                             routing=record) for b in BATCHES]
        rows = validate(root, runs=runs).rows
        assert [r.binds for r in rows] == ["memory"] * len(BATCHES)
        out[record] = np.array([r.run.batch / r.limit * 1e3 for r in rows])
    return out


def test_the_records_part_on_qwen3_from_4_rows(qwen3_limits: dict[str, np.ndarray]) -> None:
    """D(B) of 128 experts at 8 a token: equal at B = 1, 2 % apart at 2, 17 % at 8, 42 % at 32; the limit's pass
    (memory-bound throughout) 0.29 ms apart at B = 4, 2.67 ms (22 % of uniform's pass) at 16, 4.5 ms at 32."""
    b = np.array(BATCHES, dtype=float)
    assert list(np.round(UNIFORM.distinct(b), 2)) == [8.0, 15.5, 29.12, 51.62, 82.42, 111.77, 125.94]
    assert list(np.round(MEASURED.distinct(b), 2)) == [8.0, 15.1, 27.01, 44.06, 62.8, 78.71, 94.44]
    u, m = qwen3_limits["uniform"], qwen3_limits["qwen3-30b-a3b-measured"]
    assert list(np.round(u, 2)) == [1.91, 2.94, 4.81, 7.89, 12.14, 16.24, 18.39]
    assert list(np.round(m, 2)) == [1.91, 2.88, 4.52, 6.87, 9.47, 11.75, 14.11]
    assert list(np.round(u - m, 2)) == [0.0, 0.05, 0.29, 1.03, 2.67, 4.5, 4.29]
    # each record's limit is linear in its own D: 0.138-0.139 ms an expert index (the bytes' price), 0.78-0.79 ms
    # fixed, within 0.03 ms
    for pass_ms, router in ((u, UNIFORM), (m, MEASURED)):
        a, per_expert, rms = fit(router.distinct(b)[:6], pass_ms[:6])
        assert (round(a, 2), round(per_expert, 3)) in {(0.79, 0.138), (0.78, 0.139)} and rms < 0.03


def test_with_two_free_costs_even_qwen3_could_not_decide(qwen3_limits: dict[str, np.ndarray]) -> None:
    """Were Qwen3 to route as its record says and each pass cost the limit's, a fit of the uniform D over B = 1-32
    would leave 0.31 ms RMS (0.56 ms at moe45's 1.84 × the bytes' price): no more than the 0.60 ms moe45's
    uniform fit left on gpt-oss. The wrong record shows in its fitted costs instead: a per-expert cost 0.68 × the
    bytes' price (0.094 of 0.139 ms) and a doubled fixed cost, or, the other way, a fixed cost below zero."""
    b = np.array(BATCHES[:6], dtype=float)
    u, m = qwen3_limits["uniform"][:6], qwen3_limits["qwen3-30b-a3b-measured"][:6]
    a, per_expert, rms = fit(UNIFORM.distinct(b), m)
    assert (round(a, 2), round(per_expert, 3), round(rms, 2)) == (1.54, 0.094, 0.31)
    assert round(fit(UNIFORM.distinct(b), 1.84 * m)[2], 2) == 0.56
    a, per_expert, rms = fit(MEASURED.distinct(b), u)
    assert (round(a, 2), round(per_expert, 3), round(rms, 2)) == (-0.25, 0.201, 0.5)


def test_pr15525_deepseek_v2_lite_does_not_decide() -> None:
    """DeepSeek-V2-Lite (6 of 64) on an RTX 3090, pp512 at microbatch 1-32: the master column's B = 2 pass
    (12.66 ms) is slower than two B = 1 passes (5.53 ms each), a kernel's cost that no routing gives, and neither
    record fits within 1.2 ms RMS, two free costs or one; which leads swaps with the column (master: uniform 1.47 vs
    the Qwen3 record's shape 1.56 ms; the PR's kernels: 1.45 vs 1.21 ms)."""
    b = np.array(list(PR15525), dtype=float)
    uniform, skewed = Router(64, 6), Router(64, 6, 0.453125, 0.9)
    assert list(np.round(uniform.distinct(b), 2)) == [6.0, 11.44, 20.83, 34.88, 50.75, 61.26]
    assert list(np.round(skewed.distinct(b), 2)) == [6.0, 10.98, 18.62, 27.94, 36.39, 43.83]
    results = {}
    for column in (0, 1):
        t = b / np.array([v[column] for v in PR15525.values()]) * 1e3
        results[column] = [round(fit(r.distinct(b), t)[2], 2) for r in (uniform, skewed)]
        results[column] += [round(through_first(r.distinct(b), t, 6)[1], 2) for r in (uniform, skewed)]
        if column == 0:
            assert list(np.round(t, 2)) == [5.53, 12.66, 16.54, 21.39, 32.02, 37.44]
    assert results == {0: [1.47, 1.56, 1.93, 1.65], 1: [1.45, 1.21, 1.96, 1.46]}


def test_moe45_gpt_oss_with_the_fixed_cost_pinned() -> None:
    """moe45's five gpt-oss-20b passes (B = 1-16) with the fixed cost pinned by B = 1: uniform 0.73 ms RMS, the
    Qwen3 record's shape on 32 experts 0.19 ms, at 0.673 and 0.986 ms an expert index, 1.95 × and 2.85 × the
    0.346 ms the limit charges: the shape fits closer only by charging each expert near three times its bytes."""
    b = np.array([1, 2, 4, 8, 16], dtype=float)
    t = b / np.array([238.89, 283.62, 339.24, 507.06, 808.75]) * 1e3
    per_u, rms_u = through_first(Router(32, 4).distinct(b), t, 4)
    per_s, rms_s = through_first(Router(32, 4, 0.453125, 0.9).distinct(b), t, 4)
    assert (round(per_u, 3), round(rms_u, 2), round(per_s, 3), round(rms_s, 2)) == (0.673, 0.73, 0.986, 0.19)
    assert (round(per_u / 0.346, 2), round(per_s / 0.346, 2)) == (1.95, 2.85)
