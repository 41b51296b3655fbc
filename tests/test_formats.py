"""MXFP4 and NVFP4: their block sizes from ``gguf`` (MXFP4 type 39: 32 elements in 17 bytes, one E8M0 scale and 16
bytes of E2M1 codes; NVFP4 type 40: 64 elements in 36 bytes, four E4M3 scales and 32 bytes of codes), and the
datapath that reads them: the integer array, two passes a weight (the E2M1 value doubled is an int8 table value up to
±12, ggml-common.h ``kvalues_mxfp4``), their scales on the block-scale lanes. Expected numbers by hand."""

from __future__ import annotations

import pytest

from passprice import ggml
from passprice.serving import (
    ActScaling,
    ContextMix,
    Serving,
    array_passes,
    lane_cycles,
    pass_shape,
)
from synth import header


def test_block_layouts_from_gguf() -> None:
    mx, nv = ggml.by_name("MXFP4"), ggml.by_name("NVFP4")
    assert (mx.id, mx.block_elems, mx.block_bytes) == (39, 32, 1 + 16)
    assert (nv.id, nv.block_elems, nv.block_bytes) == (40, 64, 4 + 32)


def test_an_mxfp4_expert_stack_and_an_nvfp4_matrix() -> None:
    # gpt-oss-20b's expert stack: 2880 × 2880 × 32 elements = 8,294,400 blocks of 17 bytes.
    assert ggml.tensor_bytes(39, (2880, 2880, 32)) == 2880 * 2880 * 32 // 32 * 17 == 141_004_800
    # An NVFP4 matrix of 4096 × 4096: 262,144 blocks of 36 bytes (4.5 bits a weight).
    assert ggml.tensor_bytes(40, (4096, 4096)) == 4096 * 4096 // 64 * 36 == 9_437_184


def test_passes_and_lane_cycles() -> None:
    mx, nv = ggml.by_name("MXFP4"), ggml.by_name("NVFP4")
    assert array_passes(mx) == array_passes(nv) == 2
    # MXFP4: the block's one scale, at least a cycle; sub32 adds nothing (its block is 32).
    assert lane_cycles(mx, ActScaling.PER_BLOCK) == lane_cycles(mx, ActScaling.SUB32) == 1.0
    # NVFP4: four sub-block scales = 4 / 16 products a cycle → one cycle; sub32 gives a 64-block two terms.
    assert lane_cycles(nv, ActScaling.PER_BLOCK) == 1.0
    assert lane_cycles(nv, ActScaling.SUB32) == 2.0


META = {"block_count": 1, "context_length": 256, "embedding_length": 256, "feed_forward_length": 512,
        "attention.head_count": 2, "attention.head_count_kv": 2}


def model(ty: str) -> object:
    return header(META, [
        ("token_embd.weight", (256, 64), "Q8_0"),
        ("blk.0.attn_norm.weight", (256,), "F32"),
        ("blk.0.attn_q.weight", (256, 256), "Q8_0"),
        ("blk.0.attn_k.weight", (256, 256), "Q8_0"),
        ("blk.0.attn_v.weight", (256, 256), "Q8_0"),
        ("blk.0.attn_output.weight", (256, 256), "Q8_0"),
        ("blk.0.ffn_up.weight", (256, 512), ty),
        ("output.weight", (256, 64), "Q8_0"),
    ])


@pytest.mark.parametrize(("ty", "block", "size", "cycles"), [("MXFP4", 32, 17, 1.0), ("NVFP4", 64, 36, 1.0)])
def test_priced_on_the_array(ty: str, block: int, size: int, cycles: float) -> None:
    s = Serving(contexts=ContextMix.uniform(10.0, 100))
    q8 = pass_shape(model("Q8_0"), s)
    fp4 = pass_shape(model(ty), s)
    # The FFN matrix: 131,072 elements; streamed at its block size instead of Q8_0's 34 / 32.
    assert fp4.weight_bytes - q8.weight_bytes == 131072 // block * size - 131072 // 32 * 34
    # Both two passes a weight: the same array work; lanes: one cycle a block instead of Q8_0's one per 32.
    assert fp4.array_macs == q8.array_macs
    assert fp4.scale_cycles - q8.scale_cycles == 131072 // block * cycles - 131072 // 32 * 1.0
