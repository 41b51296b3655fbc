"""gpt-oss-120b on one card (session 34, moe46): its header-only checkpoint ``gpt-oss-120b-mxfp4`` (the MXFP4_MOE mix of
ggml-org's published GGUF), the servings ``gpt-oss-120b-h100`` and ``gpt-oss-120b-h200`` and the lock of the first, and
the public runs of gpt-oss the registry now holds beside llama.cpp PR #16834's and #20586's: InferenceX PR #1061
(gpt-oss-120b, one MI300X, vLLM, concurrency 64 to 256), InferenceMAX rows as a third party copied them (gpt-oss-120b,
one B200 at concurrency 4 to 128, one H200 at 4) and ggml-org/llama.cpp's gpt-oss guide (gpt-oss-20b tg128 on an RTX
3090 and an RTX 4090), priced as each card's limit under the uniform routing record."""

from __future__ import annotations

import math
import tomllib

import attrs
import numpy as np
import pytest

from cli_helpers import REPO
from passprice import ggml
from passprice.checkpoints import load_checkpoint
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

PREFIXES = ("ix1061.", "imx.", "d15396.")


def distinct(batch: int, experts: int = 128, used: int = 4) -> float:
    """D(T) of the uniform record: E · (1 − (1 − k/E)^T) distinct experts a layer for T token-rows."""
    return experts * (1 - (1 - used / experts) ** batch)


@pytest.fixture(scope="module")
def priced() -> dict[str, object]:
    """The 16 runs by id, validated as the card's limit (no stack of theirs is registered), and the four llama.cpp
    runs under llamacpp-cuda-2405."""
    root = Root(REPO)
    runs = [r for r in load_runs(root) if r.id.startswith(PREFIXES)]
    llama = [attrs.evolve(r, stack="llamacpp-cuda-2405") for r in runs if r.id.startswith("d15396.")]
    return {
        "runs": {r.id: r for r in runs},
        "limit": {row.run.id: row for row in validate(root, runs=runs).rows},
        "stack": validate(root, runs=llama).rows,
    }


def test_the_checkpoint_is_the_published_mxfp4_file_by_size_and_parameters() -> None:
    # By hand, per layer (36): 3 expert stacks 2880×2880×128 in MXFP4 (17 bytes a 32-block); q 2880×4096, k and v
    # 2880×512, o 4096×2880 in Q8_0 (34 bytes a 32-block), and the embedding and head 2880×201,088 in Q8_0; F32 the
    # norms (2 × 2880), biases (4096 + 2 × 512 + 2880), sinks (64), router (2880×128 + 128), expert biases
    # (3 × 2880×128), and the output norm (2880).
    mxfp4 = 36 * 3 * 2880 * 2880 * 128
    q8_0 = 36 * (2880 * 4096 + 2 * 2880 * 512 + 4096 * 2880) + 2 * 2880 * 201_088
    f32 = 36 * (2 * 2880 + 4096 + 2 * 512 + 2880 + 64 + 2880 * 128 + 128 + 3 * 2880 * 128) + 2880
    assert mxfp4 + q8_0 + f32 == 116_829_156_672  # llama-bench: '116.83 B'
    total = mxfp4 // 32 * 17 + q8_0 // 32 * 34 + 4 * f32
    assert total == 63_374_323_968 and f"{total / 2**30:.2f} GiB" == "59.02 GiB"  # llama-bench: '59.02 GiB'
    h = load_checkpoint(Root(REPO), "gpt-oss-120b-mxfp4")
    assert sum(ggml.by_name(t.type_name).bytes_for(math.prod(t.dims)) for t in h.tensors) == total
    types: dict[str, int] = {}
    for t in h.tensors:
        types[t.type_name] = types.get(t.type_name, 0) + 1
    assert types == {"F32": 433, "Q8_0": 146, "MXFP4": 108}
    assert (h.meta_int("expert_count"), h.meta_int("expert_used_count"), h.meta_int("block_count")) == (128, 4, 36)
    text = (REPO / "registry" / "checkpoints" / "gpt-oss-120b-mxfp4.toml").read_text(encoding="utf-8")
    origin = tomllib.loads(text[: text.index("\nshards = [")])["entry"]["origin"]
    assert "No header file was written (synth --import without -o)." in origin
    assert "not read: the published file's own tensor table or byte count" in origin


def test_the_h100_serving_fits_and_its_lock_pins_it() -> None:
    # 63.37 GB of weights, 5 GB of caches for 32 sequences at position 4096 of 8K: 68.37 of the H100's 80 GB
    lock = tomllib.loads((REPO / "locks" / "gpt-oss-120b-h100.lock.toml").read_text(encoding="utf-8"))
    price = lock["price"]
    assert (price["card"], price["batch"], price["binds"]) == ("h100_sxm5_80gb", 32, "memory")
    # 2,213.0 before session 39's window rule (window55); 2,213.1 once locks/gpt-oss-120b-h100 is re-locked
    assert round(price["tokens_per_s"], 1) == 2213.1 and round(price["held_bytes"] / 1e9, 2) == 68.37
    assert lock["checkpoint"]["name"] == "gpt-oss-120b-mxfp4"
    assert sorted(price["weakest"]) == ["routing.hot_experts", "routing.hot_share"]  # uniform routing, assumed
    for card in ("h100", "h200"):
        serving = tomllib.loads((REPO / "registry" / "servings" / f"gpt-oss-120b-{card}.toml").read_text("utf-8"))
        assert (serving["checkpoint"], serving["routing"], serving["batch"]) == ("gpt-oss-120b-mxfp4", "uniform", 32)


def test_the_runs_are_the_published_rows_as_printed(priced: dict) -> None:
    runs = priced["runs"]
    assert len(runs) == 16
    mi300x = {r.batch: r.tokens_per_s for r in runs.values() if r.id.startswith("ix1061.")}
    assert mi300x == {64: 2008, 96: 2561, 128: 2990, 256: 4271}  # 'Output TPS'
    b200 = {r.batch: r.tokens_per_s for r in runs.values() if r.id.startswith("imx.b200.")}
    # each figure as the row prints it (a locator quotes its run's own figure: tests/test_leftovers_s34.py)
    assert {b: round(t, 2) for b, t in b200.items()} == {
        4: 1010.88, 8: 1624.52, 16: 2564.09, 32: 3779.85, 64: 5812.11, 128: 8672.53}
    assert b200[4] == 1010.8763811026761
    assert runs["imx.b200.gpt-oss-120b-mxfp4.1k1k.c4"].locator.split(": ", 1)[1].startswith(
        "output throughput per GPU 1010.8763811026761 (output_throughput_per_gpu), ")
    assert runs["ix1061.mi300x.gpt-oss-120b-mxfp4.c256"].locator.endswith(
        "row '| 256 | 4,271 | 8,552 | 58.3 ms | +113% |' (Concurrency | Output TPS | Total TPS | Median TPOT | "
        "vs Baseline)")
    llama = {r.id.removeprefix("d15396.").replace(".gpt-oss-20b-mxfp4.tg128", ""): r.tokens_per_s
             for r in runs.values() if r.id.startswith("d15396.")}
    assert llama == {"rtx_3090.ub2048": 161.77, "rtx_3090.ub4096": 161.95, "rtx_4090.ub2048": 221.95,
                     "rtx_4090.ub4096": 225.22}
    assert {r.source_id for r in runs.values()} == {
        "semianalysis-inferencex-pr1061", "mantile-inferencemax-gpt-oss-120b", "ggml-org-llama-cpp-discussion15396"}
    assert {r.routing for r in runs.values()} == {"uniform"}


def test_the_limit_bounds_every_run_and_the_dense_fitted_stack_is_under_the_llama_runs(priced: dict) -> None:
    rows = priced["limit"]
    ratio = {i: round(row.limit_ratio, 2) for i, row in rows.items()}
    assert [ratio[f"imx.b200.gpt-oss-120b-mxfp4.1k1k.c{c}"] for c in (4, 8, 16, 32, 64, 128)] == [
        3.15, 2.27, 1.69, 1.46, 1.37, 1.55]
    assert [ratio[f"ix1061.mi300x.gpt-oss-120b-mxfp4.c{c}"] for c in (64, 96, 128, 256)] == [2.11, 2.22, 2.4, 2.99]
    assert ratio["imx.h200_sxm_141gb.gpt-oss-120b-mxfp4.1k1k.c4"] == 3.24
    assert ratio["imx.h200_sxm_141gb.gpt-oss-120b-mxfp4.1k8k.c4"] == 2.89
    assert {r.binds for r in rows.values()} == {"memory"} and all(r.expected is None for r in rows.values())
    # gpt-oss-20b at batch 1: the limit 363.0 (RTX 3090) and 391.0 (RTX 4090, as PR #16834's tg128); the stack fitted
    # on dense Llama-3 runs of May 2024 expects 142.6 and 176.5, under all four
    stack = priced["stack"]
    assert [round(r.limit, 1) for r in stack] == [363.0, 363.0, 391.0, 391.0]
    assert [round(r.expected, 1) for r in stack] == [142.6, 142.6, 176.5, 176.5]
    assert [round(100 * r.error, 1) for r in stack] == [-11.9, -12.0, -20.5, -21.6]


def test_the_b200_trend_follows_uniform_routing_up_to_64_and_the_mi300x_grows_with_rows(priced: dict) -> None:
    rows = sorted((r for i, r in priced["limit"].items() if i.startswith("imx.b200.")), key=lambda r: r.run.batch)
    b = np.array([r.run.batch for r in rows], float)
    measured = b / np.array([r.run.tokens_per_s for r in rows]) * 1e3  # ms a pass
    limit = b / np.array([r.limit for r in rows]) * 1e3
    d = np.array([distinct(int(x)) for x in b])
    assert list(d.round(2)) == [15.27, 28.71, 50.98, 81.66, 111.22, 125.8]
    # the limit's pass is exactly 0.229 ms + 64.92 µs an expert index + 8.98 µs a sequence (caches, embedding rows)
    fit, *_ = np.linalg.lstsq(np.vstack([np.ones_like(b), d, b]).T, limit, rcond=None)
    assert list(fit.round(4)) == [0.2293, 0.0649, 0.009]
    # measured minus limit: 2.56 to 2.99 ms from B = 4 to 64 (the runtime's own cost, near constant), then 5.21 ms
    gap = measured - limit
    assert list(gap.round(2)) == [2.7, 2.76, 2.56, 2.65, 2.99, 5.21]
    # a Qwen3-shaped skew (45.3 % of the experts take 90 % of the slots) would read fewer experts, so the gap it leaves
    # grows with the batch instead: 2.74 -> 5.11 ms over the same rows
    hot = 58 / 128 * 128
    skew = np.array([hot * (1 - (1 - 4 * 0.9 / hot) ** x) + (128 - hot) * (1 - (1 - 4 * 0.1 / (128 - hot)) ** x)
                     for x in b])
    skew_gap = measured - (fit[0] + fit[1] * skew + fit[2] * b)
    assert list(skew_gap.round(2)) == [2.74, 2.91, 3.05, 3.91, 5.11, 7.25]
    assert np.ptp(gap[:5]) < 0.45 < 2.3 < np.ptp(skew_gap[:5])
    # MI300X, B = 64 to 256: uniform D(B) saturates (111.2 -> 128.0) while the pass keeps growing 31.87 -> 59.94 ms,
    # 0.144 ms a sequence: a straight line in B fits (0.65 ms RMS), D(B) does not (6.08 ms)
    mi = sorted((r for i, r in priced["limit"].items() if i.startswith("ix1061.")), key=lambda r: r.run.batch)
    bm = np.array([r.run.batch for r in mi], float)
    tm = bm / np.array([r.run.tokens_per_s for r in mi]) * 1e3
    assert list(tm.round(2)) == [31.87, 37.49, 42.81, 59.94]

    def rms(x: np.ndarray) -> float:
        a = np.vstack([np.ones_like(x), x]).T
        c, *_ = np.linalg.lstsq(a, tm, rcond=None)
        return float(np.sqrt(np.mean((a @ c - tm) ** 2)))

    assert round(rms(bm), 2) == 0.65 and round(rms(np.array([distinct(int(x)) for x in bm])), 2) == 6.08
    # gpt-oss-20b's 32 experts are all but all read by B = 32 (31.55), gpt-oss-120b's 128 only by B = 128 (125.8)
    assert round(distinct(32, experts=32), 2) == 31.55 and round(distinct(32), 2) == 81.66
