"""A second mixture of experts checked against a measurement (session 33, moe44): Qwen3-30B-A3B (Q4_0) on one RTX
4090, llama-bench tg128/tg256/tg512 of ggml-org/llama.cpp PR #16834's 'master' column (the same table as moe43's
gpt-oss-20b rows, registry/measurements/llamacpp-pr16834-moe.toml), priced as the card's limit and under the
registered llama.cpp stack, beside the gpt-oss rows; and its header-only checkpoint ``qwen3-30b-a3b-q4_0``."""

from __future__ import annotations

import math
import tomllib

import attrs
import pytest

from cli_helpers import REPO
from passprice import ggml
from passprice.checkpoints import load_checkpoint
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

QWEN = "pr16834.rtx_4090.qwen3-30b-a3b-q4_0."
MEASURED = {"tg128": 161.55, "tg256": 162.39, "tg512": 159.14}  # as the PR's table printed them ('t/s master')


@pytest.fixture(scope="module")
def priced() -> dict[str, list]:
    """The six PR #16834 runs (gpt-oss-20b's three, then Qwen3-30B-A3B's), validated as the card's limit (their own
    stack is not registered) and under llamacpp-cuda-2405."""
    root = Root(REPO)
    runs = [r for r in load_runs(root) if r.id.startswith("pr16834.")]
    return {
        "runs": runs,
        "limit": validate(root, runs=runs).rows,
        "stack": validate(root, runs=[attrs.evolve(r, stack="llamacpp-cuda-2405") for r in runs]).rows,
    }


def test_the_qwen_runs_are_the_pr_table_rows_as_printed(priced: dict[str, list]) -> None:
    qwen = [r for r in priced["runs"] if r.id.startswith(QWEN)]
    assert {r.id.removeprefix(QWEN): r.tokens_per_s for r in qwen} == MEASURED
    assert {(r.card, r.checkpoint, r.routing, r.batch, r.stack, r.source_id) for r in qwen} == {
        ("rtx_4090", "qwen3-30b-a3b-q4_0", "uniform", 1, "llamacpp-cuda-2510", "ggml-org-llama-cpp-pr16834")}
    assert [(r.first, r.last) for r in qwen] == [(0, 128), (0, 256), (0, 512)]
    # each locator quotes its own row of the table: the master figure and the PR's
    # (the row as printed, padding kept: cite65; tests/test_cite65.py checks it against the thread's text)
    assert [r.locator.rsplit("|' ", 1)[1] for r in qwen] == [
        "(t/s master 161.55 kept, t/s set-row 163.48)", "(t/s master 162.39 kept, t/s set-row 163.33)",
        "(t/s master 159.14 kept, t/s set-row 160.86)"]
    assert qwen[0].locator.endswith("row '| qwen3moe 30B.A3B Q4_0 | tg128  |       161.55 |        163.48 |      1.01 "
                                    "|' (t/s master 161.55 kept, t/s set-row 163.48)")


def test_the_checkpoint_is_llama_cpps_q4_0_mix_of_qwen3_30b_a3b() -> None:
    # By hand: 48 layers × (q 2048×4096 + k 2048×512 + v 2048×512 + o 4096×2048 + 3 expert stacks 2048×768×128)
    # elements + the embedding 2048×151,936 at Q4_0 (18 bytes a 32-block); the head 2048×151,936 at Q6_K (210 bytes a
    # 256-block); the norms and routers F32 (48 × (2 × 2048 + 2 × 128 + 2048×128) + 2048 elements, 4 bytes each).
    q4_0 = 48 * (2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 3 * 2048 * 768 * 128) + 2048 * 151_936
    f32 = 48 * (2 * 2048 + 2 * 128 + 2048 * 128) + 2048
    total = q4_0 // 32 * 18 + 2048 * 151_936 // 256 * 210 + 4 * f32
    assert total == 17_298_520_064  # 16.11 GiB (llama-bench printed 16.18 GiB for another maker's file)
    h = load_checkpoint(Root(REPO), "qwen3-30b-a3b-q4_0")
    assert sum(ggml.by_name(t.type_name).bytes_for(math.prod(t.dims)) for t in h.tensors) == total
    types: dict[str, int] = {}
    for t in h.tensors:
        types[t.type_name] = types.get(t.type_name, 0) + 1
    assert types == {"Q4_0": 337, "F32": 241, "Q6_K": 1}
    assert (h.meta_int("expert_count"), h.meta_int("expert_used_count")) == (128, 8)
    text = (REPO / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_0.toml").read_text(encoding="utf-8")
    origin = tomllib.loads(text[: text.index("\nshards = [")])["entry"]["origin"]
    assert "No header file was written (synth --import without -o)." in origin


def test_the_limit_is_3_4_times_qwen_and_2_1_times_gpt_oss(priced: dict[str, list]) -> None:
    rows = priced["limit"]
    assert [r.run.id.split(".")[2] for r in rows] == ["gpt-oss-20b-mxfp4"] * 3 + ["qwen3-30b-a3b-q4_0"] * 3
    # gpt-oss at 0..256: 390.4 before session 39 (window55), whose windowed layers read 127 of their 128 window
    assert [round(r.limit, 1) for r in rows] == [391.0, 390.5, 389.9, 547.2, 545.1, 541.1]
    assert [round(r.limit_ratio, 2) for r in rows] == [2.1, 2.11, 2.12, 3.39, 3.36, 3.4]
    assert {r.binds for r in rows} == {"memory"} and all(r.expected is None for r in rows)
    # What the limit leaves, per layer: the measured pass less the limit's pass over the layers (gpt-oss-20b 24, Qwen3
    # 48): 117 to 120 µs and 90 to 92 µs, beside the stack's fitted overhead.layer of 96.63 µs (dense Llama-3 runs).
    layers = [24] * 3 + [48] * 3
    per_layer = [(1 / r.run.tokens_per_s - 1 / r.limit) / n * 1e6 for r, n in zip(rows, layers, strict=True)]
    assert [round(u) for u in per_layer] == [117, 119, 120, 91, 90, 92]


def test_the_dense_fitted_stack_is_under_both_more_for_qwen(priced: dict[str, list]) -> None:
    rows = priced["stack"]
    # llamacpp-cuda-2405 (fitted on dense Llama-3 runs of May 2024): 176.5/176.2/176.0 and 141.9/141.5/140.9 expected
    assert [round(r.expected, 1) for r in rows] == [176.5, 176.2, 176.0, 141.9, 141.5, 140.9]
    assert [round(100 * r.error, 1) for r in rows] == [-5.2, -4.5, -4.3, -12.2, -12.8, -11.5]
