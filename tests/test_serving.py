"""The serving pricer against the seed (``serving.rs``; docs/DESIGN.md describes it), item by item.

Every expected number here is written out by hand from the seed's formulas (and DESIGN.md's decisions where the seed
is silent): block sizes from the GGML type table as published, bytes as ``ceil(elements / block) × block bytes``,
and each term as the seed's arithmetic. Nothing is computed by calling the code under test to get an expectation.
"""

from __future__ import annotations

import math

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passprice import ggml
from passprice.decode import MissingMetadata, UnclassifiedTensor, UnknownType
from passprice.facts import Provenance
from passprice.serving import (
    LANE_PRODUCTS,
    SOFTMAX_MACS_PER_SCORE,
    VALUE_BLOCK,
    ActScaling,
    AttentionMath,
    BadContexts,
    BadDraft,
    ContextBeyondModel,
    ContextClass,
    ContextMix,
    Draft,
    Empty,
    MissingTensor,
    NoHostLink,
    NotResident,
    OnChipOverflow,
    PassShape,
    Routed,
    Serving,
    ServingBind,
    StateFlush,
    StateFlushMode,
    Step,
    Undecoded,
    WideCacheOnArray,
    array_passes,
    best_serving,
    emitted_per_pass,
    is_float,
    lane_cycles,
    max_batch,
    pass_shape,
    price_serving,
)
from synth import card, fact, header

P = Provenance
REL = 1e-12

# ---------------------------------------------------------------------------------------------------------------------
# The GGML block table, written out (elements per block, bytes per block), and a tensor's bytes from it.

BLOCK = {
    "F32": (1, 4),
    "F16": (1, 2),
    "BF16": (1, 2),
    "Q4_0": (32, 18),
    "Q4_1": (32, 20),
    "Q5_0": (32, 22),
    "Q5_1": (32, 24),
    "Q8_0": (32, 34),
    "Q2_K": (256, 84),
    "Q3_K": (256, 110),
    "Q4_K": (256, 144),
    "Q5_K": (256, 176),
    "Q6_K": (256, 210),
    "Q8_K": (256, 292),
    "IQ2_XXS": (256, 66),
    "IQ4_NL": (32, 18),
    "IQ4_XS": (256, 136),
}


def nbytes(ty: str, elements: int) -> int:
    per, size = BLOCK[ty]
    return -(-elements // per) * size


def test_block_table_is_the_gguf_one() -> None:
    for name, (per, size) in BLOCK.items():
        t = ggml.by_name(name)
        assert (t.block_elems, t.block_bytes) == (per, size), name


def approx(x: float) -> object:
    return pytest.approx(x, rel=REL, abs=0.0)


def draft(*acceptance: float, tokens: int | None = None, head_rows: int | None = None, prov: Provenance = P.PUBLISHED):
    return Draft(
        tokens=len(acceptance) if tokens is None else tokens,
        acceptance=tuple(fact(a, "1", prov, f"acc{i}") for i, a in enumerate(acceptance)),
        head_rows=head_rows,
    )


# ---------------------------------------------------------------------------------------------------------------------
# A dense model ("llama"): embedding 256, FFN 512, vocabulary 1024, 4 query heads of 64, 2 KV heads, 2 blocks, every
# matrix in a different format. Block 0 also has a bias on its query projection.

E, FF, V = 256, 512, 1024
Q_HEADS, KV_HEADS, HEAD_W = 4, 2, 64

DENSE_META = {
    "block_count": 2,
    "context_length": 4096,
    "embedding_length": E,
    "feed_forward_length": FF,
    "attention.head_count": Q_HEADS,
    "attention.head_count_kv": KV_HEADS,
}


def dense_layer(i: int, bias: bool = False) -> list:
    out = [
        (f"blk.{i}.attn_norm.weight", (E,), "F32"),
        (f"blk.{i}.attn_q.weight", (E, E), "Q4_K"),
        (f"blk.{i}.attn_k.weight", (E, KV_HEADS * HEAD_W), "Q8_0"),
        (f"blk.{i}.attn_v.weight", (E, KV_HEADS * HEAD_W), "Q4_0"),
        (f"blk.{i}.attn_output.weight", (E, E), "IQ4_XS"),
        (f"blk.{i}.ffn_norm.weight", (E,), "F32"),
        (f"blk.{i}.ffn_gate.weight", (E, FF), "Q4_K"),
        (f"blk.{i}.ffn_up.weight", (E, FF), "F16"),
        (f"blk.{i}.ffn_down.weight", (FF, E), "Q6_K"),
    ]
    if bias:
        out.insert(2, (f"blk.{i}.attn_q.bias", (E,), "F32"))
    return out


def dense_tensors(layers: int = 2, output: bool = True) -> list:
    out = [("token_embd.weight", (E, V), "Q4_K")]
    for i in range(layers):
        out += dense_layer(i, bias=i == 0)
    out.append(("output_norm.weight", (E,), "F32"))
    if output:
        out.append(("output.weight", (E, V), "Q6_K"))
    return out


def dense(**meta) -> object:
    return header({**DENSE_META, **meta}, dense_tensors())


# Bytes, by hand.
EMBD_ROW = 256 // 256 * 144  # one Q4_K row of 256
EMBD_TABLE = 256 * 1024 // 256 * 144
LAYER_BYTES = (
    256 * 4  # attn_norm F32
    + 256 * 256 // 256 * 144  # attn_q Q4_K
    + 256 * 128 // 32 * 34  # attn_k Q8_0
    + 256 * 128 // 32 * 18  # attn_v Q4_0
    + 256 * 256 // 256 * 136  # attn_output IQ4_XS
    + 256 * 4  # ffn_norm F32
    + 256 * 512 // 256 * 144  # ffn_gate Q4_K
    + 256 * 512 * 2  # ffn_up F16
    + 512 * 256 // 256 * 210  # ffn_down Q6_K
)
BIAS_BYTES = 256 * 4
OUTPUT_NORM = 256 * 4
OUTPUT = 256 * 1024 // 256 * 210  # Q6_K

# Work a layer's matrices do per row and per activation word: elements × array passes.
LAYER_ARRAY = 65536 * 1 + 32768 * 2 + 32768 * 1 + 65536 * 2 + 131072 * 1 + 131072 * 2
# Block-scale lane cycles per row and word: blocks × lane cycles, per-block and sub32.
LAYER_SCALE = 65536 // 256 * 1 + 32768 // 32 * 1 + 32768 // 32 * 1 + 65536 // 256 * 1 + 131072 // 256 + 131072 // 256
LAYER_SCALE_SUB32 = (
    65536 // 256 * 8 + 32768 // 32 + 32768 // 32 + 65536 // 256 * 8 + 131072 // 256 * 8 + 131072 // 256 * 8
)
# Vector work per row: the two norms (2 per element) and the F16 ffn_up (1 per element).
LAYER_VECTOR = 2 * 256 + 2 * 256 + 256 * 512
BIAS_VECTOR = 2 * 256
OUTPUT_ARRAY = 256 * 1024 * 2  # Q6_K: two passes
OUTPUT_SCALE = 256 * 1024 // 256 * 1
OUTPUT_SCALE_SUB32 = 256 * 1024 // 256 * 8

# Attention per layer: ops = 2 × q × (key + value); products = ops / 2 × position × rows; softmax 7.5 × q per score.
ATT_OPS = 2 * 4 * (64 + 64)
ATT_SOFTMAX = 7.5 * 4


def per_position(kv_bytes: float) -> float:
    return 2 * (64 + 64) * kv_bytes  # kv heads × (key + value) × bytes


def test_dense_step_bytes_by_hand() -> None:
    assert LAYER_BYTES == 1024 + 36864 + 34816 + 18432 + 34816 + 1024 + 73728 + 262144 + 107520 == 570368


def test_dense_shape() -> None:
    s = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200)))
    pos, lim = 100, 200
    assert s.rows_per_sequence == 1
    assert s.emitted_per_sequence == 1.0
    assert s.weight_bytes == (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT
    assert s.embed_bytes == EMBD_ROW * (1 + 0)
    assert s.read_bytes == 2 * per_position(2) * pos
    assert s.write_bytes == 2 * per_position(2) * 1
    assert s.rewrite_bytes == 0.0
    assert s.array_macs == 2 * LAYER_ARRAY + OUTPUT_ARRAY
    assert s.scale_cycles == 2 * LAYER_SCALE + OUTPUT_SCALE
    assert s.vector_macs == approx(
        2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + 2 * (ATT_OPS / 2 * pos + ATT_SOFTMAX * pos)
    )
    assert s.held_shared == 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE
    assert s.held_per_sequence == 2 * per_position(2) * lim
    assert s.on_chip_per_sequence == 1 * (4 * 256 + 1 * (512 + 256))
    assert s.provenance is P.PUBLISHED


def test_dense_two_words_sub32() -> None:
    s = pass_shape(
        dense(), Serving(contexts=ContextMix.uniform(100.0, 200), activation_words=2, scaling=ActScaling.SUB32)
    )
    assert s.array_macs == 2 * (2 * LAYER_ARRAY + OUTPUT_ARRAY)
    assert s.scale_cycles == 2 * (2 * LAYER_SCALE_SUB32 + OUTPUT_SCALE_SUB32)
    assert s.on_chip_per_sequence == 1 * (4 * 256 + 2 * (512 + 256))


def test_attention_on_the_array() -> None:
    pos, lim = 100, 200
    for words in (1, 2):
        s = pass_shape(
            dense(),
            Serving(
                contexts=ContextMix.uniform(100.0, 200),
                attention=AttentionMath.ARRAY,
                kv_bytes=1.0,
                activation_words=words,
            ),
        )
        # Two products on the array (not times the activation words), the softmax on the vector units, and a lane
        # rounding every score and every value element's sum over each block of VALUE_BLOCK positions.
        assert s.array_macs == words * (2 * LAYER_ARRAY + OUTPUT_ARRAY) + 2 * (2 * (ATT_OPS / 2 * pos * 1))
        assert s.scale_cycles == words * (2 * LAYER_SCALE + OUTPUT_SCALE) + 2 * (4 * pos * 1 * (1 + 64 / 32))
        assert s.vector_macs == approx(2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + 2 * ATT_SOFTMAX * pos)
        assert s.read_bytes == 2 * per_position(1) * pos
        assert s.held_per_sequence == 2 * per_position(1) * lim
    # 1.25 bytes (an 8-bit code and its share of a scale) is still allowed.
    s = pass_shape(
        dense(), Serving(contexts=ContextMix.uniform(100.0, 200), attention=AttentionMath.ARRAY, kv_bytes=1.25)
    )
    assert s.held_per_sequence == 2 * (2 * 128 * 1.25) * lim


def test_kv_rotated() -> None:
    base = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200)))
    rot = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200), kv_rotated=True))
    t64 = 64 * math.log2(64)  # = 384
    assert t64 == 384
    per_layer = (2 * (t64 + t64) + 4 * (t64 + t64)) * 1
    assert rot.vector_macs == approx(base.vector_macs + 2 * per_layer)
    assert (rot.read_bytes, rot.array_macs, rot.held_per_sequence) == (
        base.read_bytes,
        base.array_macs,
        base.held_per_sequence,
    )


def test_paged_vs_contiguous() -> None:
    contiguous = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200)))
    paged = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200), kv_page=16))
    assert contiguous.held_per_sequence == 2 * 512 * 200
    assert paged.held_per_sequence == 2 * 512 * (100 + 16 / 2)
    assert paged.read_bytes == contiguous.read_bytes == 2 * 512 * 100


def test_context_mix_helpers() -> None:
    mix = ContextMix((ContextClass(0.25, 40.0, 100), ContextClass(0.75, 120.0, 300)))
    assert mix.mean_position() == 0.25 * 40 + 0.75 * 120 == 100
    assert mix.mean_limit() == 0.25 * 100 + 0.75 * 300 == 250
    assert mix.longest() == 300
    assert ContextMix(()).longest() == 0
    assert ContextMix.uniform(5.0, 9) == ContextMix((ContextClass(1.0, 5.0, 9),))


def test_multi_class_mix_on_full_layers() -> None:
    mix = ContextMix((ContextClass(0.25, 40.0, 100), ContextClass(0.75, 120.0, 300)))
    s = pass_shape(dense(), Serving(contexts=mix))
    mean_pos = 0.25 * 40 + 0.75 * 120
    mean_lim = 0.25 * 100 + 0.75 * 300
    assert s.read_bytes == 2 * 512 * mean_pos
    assert s.held_per_sequence == 2 * 512 * mean_lim
    assert s.vector_macs == approx(
        2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + 2 * (ATT_OPS / 2 + ATT_SOFTMAX) * mean_pos
    )
    paged = pass_shape(dense(), Serving(contexts=mix, kv_page=32))
    assert paged.held_per_sequence == 2 * 512 * (mean_pos + 32 / 2)


# ---------------------------------------------------------------------------------------------------------------------
# A sliding-window layer next to a full one: gemma2 (period 2: block 0 windowed, block 1 full), window 64, and tied
# embeddings (no output.weight: the head reads token_embd as a matrix, the table held once).


def windowed() -> object:
    return header({**DENSE_META, "attention.sliding_window": 64}, dense_tensors(output=False), arch="gemma2")


MIX = ContextMix((ContextClass(0.25, 10.0, 100), ContextClass(0.75, 150.0, 300)))


def test_windowed_layer_beside_a_full_layer() -> None:
    s = pass_shape(windowed(), Serving(contexts=MIX))
    mean_pos = 0.25 * 10 + 0.75 * 150  # 115
    # A windowed row reads at most 64 − 1 cached positions and writes its own: it attends 64, as llama.cpp's and
    # Transformers' masks do (architectures.WINDOW_SOURCE); it holds at most 64.
    win_pos = 0.25 * min(10, 63) + 0.75 * min(150, 63)  # 49.75
    mean_lim = 0.25 * 100 + 0.75 * 300  # 250
    win_lim = 0.25 * min(100, 64) + 0.75 * min(300, 64)  # 64
    assert s.read_bytes == 512 * win_pos + 512 * mean_pos
    assert s.write_bytes == 512 * 1 + 512 * 1
    assert s.held_per_sequence == 512 * win_lim + 512 * mean_lim
    assert s.vector_macs == approx(
        2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + (ATT_OPS / 2 + ATT_SOFTMAX) * (win_pos + mean_pos)
    )
    # The tied head: the whole table read as a Q4_K matrix; the table held once.
    assert s.weight_bytes == (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + EMBD_TABLE
    assert s.held_shared == 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + EMBD_TABLE
    assert s.array_macs == 2 * LAYER_ARRAY + 256 * 1024 * 1
    assert s.scale_cycles == 2 * LAYER_SCALE + 256 * 1024 // 256 * 1
    assert s.embed_bytes == EMBD_ROW


def test_windowed_layer_paged_and_on_the_array() -> None:
    s = pass_shape(windowed(), Serving(contexts=MIX, kv_page=16))
    mean_pos = 0.25 * 10 + 0.75 * 150
    win_held = 0.25 * min(10 + 16 / 2, 64) + 0.75 * min(150 + 16 / 2, 64)  # 52.5
    assert s.held_per_sequence == 512 * win_held + 512 * (mean_pos + 16 / 2)
    a = pass_shape(windowed(), Serving(contexts=MIX, attention=AttentionMath.ARRAY, kv_bytes=1.0))
    win_pos = 0.25 * 10 + 0.75 * 63  # read at most 64 − 1 cached positions
    assert a.array_macs == 2 * LAYER_ARRAY + 256 * 1024 + 2 * (ATT_OPS / 2) * (win_pos + mean_pos)
    assert a.scale_cycles == 2 * LAYER_SCALE + 1024 + 4 * (1 + 64 / VALUE_BLOCK) * (win_pos + mean_pos)


def test_windowed_uniform_short_context_is_the_full_arithmetic() -> None:
    # Below the window the windowed layer costs what a full layer does.
    s = pass_shape(windowed(), Serving(contexts=ContextMix.uniform(30.0, 60)))
    assert s.read_bytes == 2 * 512 * 30
    assert s.held_per_sequence == 2 * 512 * 60


# ---------------------------------------------------------------------------------------------------------------------
# Drafts: a three-block model whose last block is a draft (MTP) layer with its own projection, norm and head.


def mtp() -> object:
    tensors = dense_tensors(layers=3)
    tensors += [
        ("blk.2.nextn.eh_proj.weight", (2 * E, E), "Q8_0"),
        ("blk.2.nextn.enorm.weight", (E,), "F32"),
        ("blk.2.nextn.shared_head_head.weight", (E, V), "Q8_0"),
    ]
    return header({**DENSE_META, "block_count": 3, "nextn_predict_layers": 1}, tensors)


EH_PROJ = 512 * 256 // 32 * 34
ENORM = 256 * 4
SHARED_HEAD = 256 * 1024 // 32 * 34


def test_draft_layers_absent_without_drafts() -> None:
    a = pass_shape(mtp(), Serving(contexts=ContextMix.uniform(100.0, 200)))
    b = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200)))
    # the draft block (blk.2: a dense layer and its nextn tensors) is held by no one without drafts; the shape only
    # records its bytes, for what a NotResident refusal says the held bytes count
    assert a.held_draft == LAYER_BYTES + EH_PROJ + ENORM + SHARED_HEAD == 989_184 and not a.drafting
    assert attrs.evolve(a, held_draft=0.0) == b
    assert a.held_shared == 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE


def test_drafts_rows_reads_and_head_share() -> None:
    d = draft(0.8, 0.5, head_rows=256, prov=P.ESTIMATED)
    s = pass_shape(mtp(), Serving(contexts=ContextMix.uniform(100.0, 200), draft=d))
    n, k, hs = 3, 2, min(256 / 1024, 1.0)
    pos, lim = 100, 200
    assert s.rows_per_sequence == 1 + 2
    assert s.emitted_per_sequence == 1 + 0.8 + 0.8 * 0.5
    draft_layer = LAYER_BYTES + EH_PROJ + ENORM + SHARED_HEAD
    # Verified blocks read once; the draft block once per drafting step (k); the head 1 + k × head share.
    assert s.weight_bytes == approx(
        (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + k * draft_layer + OUTPUT_NORM + OUTPUT * (1 + k * hs)
    )
    assert s.embed_bytes == EMBD_ROW * (n + k)
    # Matrices: verified blocks multiply n rows, the draft block k rows; a head (the draft block's shared head too,
    # as the seed writes it) n + k × head share rows.
    assert s.array_macs == approx(
        n * (2 * LAYER_ARRAY)
        + k * (LAYER_ARRAY + 131072 * 2)
        + 262144 * 2 * (n + k * hs)  # shared_head_head, Q8_0
        + OUTPUT_ARRAY * (n + k * hs)
    )
    assert s.scale_cycles == approx(
        n * (2 * LAYER_SCALE) + k * (LAYER_SCALE + 131072 // 32) + (262144 // 32) * (n + k * hs) + 1024 * (n + k * hs)
    )
    # Attention: verified blocks read the cache once, the draft block once per drafting step; writes per row.
    assert s.read_bytes == 512 * pos * 1 * 2 + 512 * pos * k
    assert s.write_bytes == 512 * n * 2 + 512 * k
    assert s.vector_macs == approx(
        n * (2 * LAYER_VECTOR + BIAS_VECTOR)
        + k * (LAYER_VECTOR + 2 * 256)  # the draft block's norms, F16 ffn_up, enorm
        + 2 * 256 * n  # output_norm
        + (ATT_OPS / 2 + ATT_SOFTMAX) * pos * (n * 2 + k)
    )
    # The draft layer's attention has its own cache.
    assert s.held_per_sequence == 3 * 512 * lim
    assert s.held_shared == 3 * LAYER_BYTES + BIAS_BYTES + EH_PROJ + ENORM + SHARED_HEAD + OUTPUT_NORM + OUTPUT + (
        EMBD_TABLE
    )
    assert s.on_chip_per_sequence == n * (4 * 256 + 1 * (512 + 256))
    assert s.provenance is P.ESTIMATED


def test_head_share_is_capped_at_one_and_defaults_to_one() -> None:
    for rows in (4096, None):
        s = pass_shape(dense(), Serving(contexts=ContextMix.uniform(100.0, 200), draft=draft(0.5, head_rows=rows)))
        n, k, hs = 2, 1, 1.0
        assert s.weight_bytes == (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT * (1 + k * hs)
        assert s.array_macs == n * 2 * LAYER_ARRAY + OUTPUT_ARRAY * (n + k * hs)


# ---------------------------------------------------------------------------------------------------------------------
# The recurrence: a qwen3next-like header, block 0 Gated DeltaNet, block 1 full attention (key 32, value 16 wide).

SSM = {
    "ssm.time_step_rank": 4,  # value heads
    "ssm.state_size": 16,  # key width
    "ssm.inner_size": 128,  # value width 128 / 4 = 32
    "ssm.group_count": 2,
    "ssm.conv_kernel": 4,
}
REC_META = {
    "block_count": 2,
    "context_length": 4096,
    "embedding_length": 64,
    "feed_forward_length": 128,
    "attention.head_count": 4,
    "attention.head_count_kv": 2,
    "attention.key_length": 32,
    "attention.value_length": 16,
    **SSM,
}


def rec_tensors() -> list:
    ffn = [
        ("post_attention_norm.weight", (64,), "F32"),
        ("ffn_gate.weight", (64, 128), "Q8_0"),
        ("ffn_up.weight", (64, 128), "Q8_0"),
        ("ffn_down.weight", (128, 64), "Q8_0"),
    ]
    return [
        ("token_embd.weight", (64, 256), "Q8_0"),
        ("blk.0.attn_norm.weight", (64,), "F32"),
        ("blk.0.attn_qkv.weight", (64, 320), "Q8_0"),
        ("blk.0.attn_gate.weight", (64, 128), "Q8_0"),
        ("blk.0.ssm_a", (4,), "F32"),
        ("blk.0.ssm_conv1d.weight", (4, 192), "F32"),
        ("blk.0.ssm_dt.bias", (4,), "F32"),
        ("blk.0.ssm_alpha.weight", (64, 4), "F32"),
        ("blk.0.ssm_beta.weight", (64, 4), "F32"),
        ("blk.0.ssm_norm.weight", (32,), "F32"),
        ("blk.0.ssm_out.weight", (128, 64), "Q8_0"),
        *[(f"blk.0.{n}", d, t) for n, d, t in ffn],
        ("blk.1.attn_norm.weight", (64,), "F32"),
        ("blk.1.attn_q.weight", (64, 128), "Q8_0"),
        ("blk.1.attn_k.weight", (64, 64), "Q8_0"),
        ("blk.1.attn_v.weight", (64, 32), "Q8_0"),
        ("blk.1.attn_output.weight", (128, 64), "Q8_0"),
        *[(f"blk.1.{n}", d, t) for n, d, t in ffn],
        ("output_norm.weight", (64,), "F32"),
        ("output.weight", (64, 256), "Q8_0"),
    ]


def recurrent(**meta) -> object:
    return header({**REC_META, **meta}, rec_tensors(), arch="qwen3next")


STATE = 4 * 16 * 32  # heads × key × value elements
LOG = 2 * 16 + 4 * 32 + 2 * 4  # groups × key + heads × value + 2 × heads
CHANNELS = 128 + 2 * 2 * 16  # = ssm_conv1d's 192
TAPS = 4
REC_HEADS, REC_KEY, REC_VALUE = 4, 16, 32
# The attention block: per position 2 × (32 + 16) × kv_bytes; ops 2 × 4 × (32 + 16).
REC_PP = 2 * (32 + 16) * 2
REC_OPS = 2 * 4 * (32 + 16)
# Vector work per row outside attention and the recurrence: five norms of 64, ssm_alpha and ssm_beta (F32 matrices).
REC_ROW_VECTOR = 5 * (2 * 64) + 64 * 4 + 64 * 4
REC_WEIGHTS = (
    64 * 4  # attn_norm
    + 64 * 320 // 32 * 34  # attn_qkv
    + 64 * 128 // 32 * 34  # attn_gate
    + 4 * 4  # ssm_a
    + 4 * 192 * 4  # ssm_conv1d
    + 4 * 4  # ssm_dt
    + 64 * 4 * 4 * 2  # ssm_alpha, ssm_beta
    + 32 * 4  # ssm_norm
    + 128 * 64 // 32 * 34  # ssm_out
    + 2 * (64 * 4 + 3 * (64 * 128 // 32 * 34))  # post_attention_norm + ffn, both blocks
    + 64 * 4  # blk.1 attn_norm
    + 64 * 128 // 32 * 34
    + 64 * 64 // 32 * 34
    + 64 * 32 // 32 * 34
    + 128 * 64 // 32 * 34
    + 64 * 4  # output_norm
    + 64 * 256 // 32 * 34  # output
)
REC_ARRAY = 2 * (
    64 * 320
    + 64 * 128
    + 128 * 64
    + 3 * 8192  # block 0 (Q8_0: two passes)
    + 64 * 128
    + 64 * 64
    + 64 * 32
    + 128 * 64
    + 3 * 8192  # block 1
)
REC_OUTPUT_ARRAY = 2 * 64 * 256


def rec_serving(flush: StateFlush, d: Draft | None = None, state_bytes: float = 4.0) -> Serving:
    return Serving(contexts=ContextMix.uniform(100.0, 200), flush=flush, draft=d, state_bytes=state_bytes)


def test_recurrence_eager() -> None:
    s = pass_shape(recurrent(), rec_serving(StateFlush()))
    n, pos, lim, sb = 1, 100, 200, 4
    dense_b = STATE * sb
    ring_row = CHANNELS * sb
    ring = (TAPS - 1) * ring_row
    assert s.weight_bytes == REC_WEIGHTS
    assert s.held_shared == REC_WEIGHTS + 64 * 256 // 32 * 34
    assert s.embed_bytes == 64 // 32 * 34
    assert s.array_macs == REC_ARRAY + REC_OUTPUT_ARRAY
    assert s.read_bytes == dense_b + ring + REC_PP * pos
    assert s.write_bytes == ring_row * n + n * dense_b + REC_PP * n
    assert s.rewrite_bytes == dense_b + n * dense_b
    assert s.vector_macs == approx(
        REC_ROW_VECTOR * n + TAPS * ring_row / sb * n + n * 3 * STATE + (REC_OPS / 2 + 7.5 * 4) * pos * n
    )
    # The recurrent block has no KV cache although head_count_kv is a scalar.
    assert s.held_per_sequence == ring + ring_row * n + n * dense_b + REC_PP * lim
    assert s.on_chip_per_sequence == n * (4 * 64 + 1 * (128 + 64))


def test_recurrence_eager_with_drafts_and_two_byte_state() -> None:
    s = pass_shape(recurrent(), rec_serving(StateFlush(), draft(0.5, 0.5), state_bytes=2.0))
    n, pos, lim, sb = 3, 100, 200, 2
    dense_b = STATE * sb
    ring_row = CHANNELS * sb
    ring = 3 * ring_row
    assert s.read_bytes == dense_b + ring + REC_PP * pos
    assert s.write_bytes == ring_row * n + n * dense_b + REC_PP * n
    assert s.rewrite_bytes == dense_b + n * dense_b
    assert s.held_per_sequence == ring + ring_row * n + n * dense_b + REC_PP * lim
    assert s.vector_macs == approx(
        REC_ROW_VECTOR * n + TAPS * ring_row / sb * n + n * 3 * STATE + (REC_OPS / 2 + 7.5 * 4) * pos * n
    )


@pytest.mark.parametrize(
    ("flush", "windows", "window"),
    [
        # every:N: the log holds one window; a pass starts with (N − emitted) / 2 logged tokens on average.
        (StateFlush(StateFlushMode.EVERY, 8), 1.0, max((8 - 1.75) / 2, 0.0)),
        # trailing:N: one window being replayed behind the newer one: N + (N − emitted) / 2.
        (StateFlush(StateFlushMode.TRAILING, 8), 2.0, 8 + max((8 - 1.75) / 2, 0.0)),
        # every:1 with 1.75 emitted a pass: the mean log clamps at 0, the flushing share at 1.
        (StateFlush(StateFlushMode.EVERY, 1), 1.0, max((1 - 1.75) / 2, 0.0)),
        (StateFlush(StateFlushMode.TRAILING, 1), 2.0, 1 + max((1 - 1.75) / 2, 0.0)),
    ],
)
def test_recurrence_lazy(flush: StateFlush, windows: float, window: float) -> None:
    s = pass_shape(recurrent(), rec_serving(flush, draft(0.5, 0.5)))
    n, pos, lim, sb = 3, 100, 200, 4
    emitted = 1 + 0.5 + 0.25
    t = float(flush.tokens)
    dense_b = STATE * sb
    ring_row = CHANNELS * sb
    ring = 3 * ring_row
    log = LOG * sb
    flushing = min(emitted / t, 1.0)
    walk = window + (n - 1) / 2
    assert s.emitted_per_sequence == emitted
    assert s.read_bytes == approx(dense_b + ring + window * log + REC_PP * pos)
    assert s.write_bytes == approx(ring_row * n + n * log + emitted / t * dense_b + REC_PP * n)
    assert s.rewrite_bytes == approx(flushing * dense_b + emitted / t * dense_b)
    assert s.vector_macs == approx(
        REC_ROW_VECTOR * n
        + TAPS * ring_row / sb * n
        + n * STATE
        + n * REC_HEADS * walk * (2 * REC_KEY + REC_VALUE)
        + 2 * emitted * STATE
        + (REC_OPS / 2 + 7.5 * 4) * pos * n
    )
    assert s.held_per_sequence == approx(ring + ring_row * n + dense_b + (windows * t + n) * log + REC_PP * lim)


def test_recurrence_lazy_numbers_spelled_out() -> None:
    # every:8 at 1.75 emitted: the window is 3.125 tokens, the flushing share 0.21875.
    s = pass_shape(recurrent(), rec_serving(StateFlush(StateFlushMode.EVERY, 8), draft(0.5, 0.5)))
    assert s.read_bytes == 8192 + 2304 + 3.125 * 672 + 192 * 100
    assert s.rewrite_bytes == 0.21875 * 8192 + 0.21875 * 8192
    assert s.held_per_sequence == 2304 + 768 * 3 + 8192 + (8 + 3) * 672 + 192 * 200


def test_state_flush_parse() -> None:
    assert StateFlush.parse("every-pass") == StateFlush()
    assert StateFlush.parse("every:16") == StateFlush(StateFlushMode.EVERY, 16)
    assert StateFlush.parse("trailing:4") == StateFlush(StateFlushMode.TRAILING, 4)
    for bad in ("every:0", "trailing:", "sometimes", "every:-1"):
        with pytest.raises(ValueError):
            StateFlush.parse(bad)
    assert str(StateFlush(StateFlushMode.TRAILING, 4)) == "trailing:4"


# ---------------------------------------------------------------------------------------------------------------------
# The small functions and constants.


def test_constants() -> None:
    assert SOFTMAX_MACS_PER_SCORE == 7.5 == 15 / 2
    assert LANE_PRODUCTS == 16.0
    assert VALUE_BLOCK == 32.0


ONE_PASS = {"Q2_K", "Q3_K", "Q4_0", "Q4_1", "Q4_K"}
# MXFP4 and NVFP4 (issue 15): E2M1 codes read as int8 table values up to ±12, as IQ4_NL's are.
TWO_PASSES = {"Q5_0", "Q5_1", "Q5_K", "Q6_K", "Q8_0", "IQ4_NL", "IQ4_XS", "MXFP4", "NVFP4"}
# Lane cycles per block: (per-block, sub32). Sub-block products / 16, at least 1; sub32: at least block / 32.
LANES = {
    "Q4_0": (1.0, 1.0),
    "Q4_1": (1.0, 1.0),
    "Q5_0": (1.0, 1.0),
    "Q5_1": (1.0, 1.0),
    "Q8_0": (1.0, 1.0),
    "IQ4_NL": (1.0, 1.0),
    "MXFP4": (1.0, 1.0),
    "NVFP4": (max(4 / 16, 1.0), 64 / 32),
    "IQ4_XS": (max(8 / 16, 1.0), 256 / 32),
    "Q3_K": (16 / 16, 256 / 32),
    "Q4_K": (16 / 16, 256 / 32),
    "Q5_K": (16 / 16, 256 / 32),
    "Q6_K": (16 / 16, 256 / 32),
    "Q2_K": (32 / 16, max(32 / 16, 256 / 32)),
}


def every_type() -> list:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    return [ggml.by_name(t.name) for t in GGMLQuantizationType if t in GGML_QUANT_SIZES]


def test_array_passes_every_type() -> None:
    for ty in every_type():
        want = 1 if ty.name in ONE_PASS else 2 if ty.name in TWO_PASSES else None
        assert array_passes(ty) == want, ty.name


def test_lane_cycles_every_type() -> None:
    assert LANES["Q2_K"] == (2.0, 8.0)
    for ty in every_type():
        want = LANES.get(ty.name)
        got = (lane_cycles(ty, ActScaling.PER_BLOCK), lane_cycles(ty, ActScaling.SUB32))
        assert got == (want if want is not None else (None, None)), ty.name
        # The array and the lanes read the same types.
        assert (array_passes(ty) is None) == (want is None)


def test_is_float() -> None:
    for ty in every_type():
        assert is_float(ty) == (ty.name in ("F32", "F16", "BF16")), ty.name


def test_emitted_per_pass_by_hand() -> None:
    assert emitted_per_pass([]) == 1.0
    assert emitted_per_pass([0.5]) == 1.5
    assert emitted_per_pass([0.8, 0.5]) == 1 + 0.8 + 0.8 * 0.5
    assert emitted_per_pass([1.0, 1.0, 1.0]) == 4.0
    assert emitted_per_pass([0.0, 1.0]) == 1.0


@given(st.lists(st.floats(0.0, 1.0), max_size=6), st.data())
@settings(max_examples=200, deadline=None)
def test_emitted_per_pass_bounds_and_monotone(acc: list[float], data: st.DataObject) -> None:
    e = emitted_per_pass(acc)
    assert 1.0 <= e <= 1.0 + len(acc)
    if acc:
        i = data.draw(st.integers(0, len(acc) - 1))
        raised = data.draw(st.floats(acc[i], 1.0))
        more = list(acc)
        more[i] = raised
        assert emitted_per_pass(more) >= e


# ---------------------------------------------------------------------------------------------------------------------
# cost, on hand-built shapes: every term, every bind, the tie rule, capacities, provenance.


def shape(**kw) -> PassShape:
    base = {
        "rows_per_sequence": 1,
        "emitted_per_sequence": 1.0,
        "weight_bytes": 0.0,
        "embed_bytes": 0.0,
        "read_bytes": 0.0,
        "write_bytes": 0.0,
        "rewrite_bytes": 0.0,
        "array_macs": 0.0,
        "vector_macs": 0.0,
        "scale_cycles": 0.0,
        "held_shared": 0.0,
        "held_per_sequence": 0.0,
        "on_chip_per_sequence": 0.0,
        "provenance": P.PUBLISHED,
    }
    base.update(kw)
    return PassShape(**base)


def test_cost_every_field() -> None:
    sh = shape(
        rows_per_sequence=2,
        emitted_per_sequence=1.5,
        weight_bytes=1000.0,
        embed_bytes=10.0,
        read_bytes=300.0,
        write_bytes=200.0,
        rewrite_bytes=100.0,
        array_macs=7.0,
        vector_macs=11.0,
        scale_cycles=13.0,
        held_shared=5000.0,
        held_per_sequence=400.0,
        on_chip_per_sequence=50.0,
    )
    c = card(
        memory_capacity=9000,
        memory_bandwidth=1e4,
        streams_read=0.5,
        streams_rewrite=0.25,
        streams_append=0.8,
        array=100.0,
        vector=1000.0,
        scale=10.0,
        on_chip_capacity=1000,
        host=True,
        host_capacity=1000,
        host_read=20.0,
        host_write=50.0,
        host_stream=0.5,
    )
    r = sh.cost(c, 4, 1)
    b, bh, bd = 4, 1, 3
    assert (r.card, r.batch, r.host_sequences, r.rows_per_sequence, r.emitted_per_sequence) == (
        "synthetic",
        4,
        1,
        2,
        1.5,
    )
    assert r.weight_bytes == 1000 + 4 * 10
    assert r.sequence_bytes == 300 + 200
    assert r.rewrite_bytes == 100
    assert (r.array_macs, r.vector_macs, r.scale_cycles) == (4 * 7, 4 * 11, 4 * 13)
    assert r.memory_s == approx((1000 + b * 10) / (1e4 * 0.5) + bd * (100 / (1e4 * 0.25) + (500 - 100) / (1e4 * 0.8)))
    assert r.host_s == approx(max(bh * 300 / (20 * 0.5), bh * 200 / (50 * 0.5)))  # 30
    assert r.array_s == 28 / 100
    assert r.vector_s == 44 / 1000
    assert r.scale_s == 52 / 10
    assert r.host_s == 30.0
    assert (r.pass_s, r.binds) == (30.0, ServingBind.HOST)
    assert (r.held_bytes, r.capacity_bytes) == (5000 + 3 * 400, 9000)
    assert (r.host_held_bytes, r.host_capacity_bytes) == (1 * 400, 1000)
    assert (r.on_chip_bytes, r.on_chip_capacity) == (4 * 50, 1000)
    assert r.tokens_per_s == 4 * 1.5 / 30.0
    # Host sequences above the batch are clamped to it.
    assert sh.cost(c, 2, 5).host_sequences == 2


def test_cost_host_write_direction_can_bind() -> None:
    sh = shape(read_bytes=10.0, write_bytes=300.0)
    c = card(host=True, host_read=100.0, host_write=100.0, host_stream=0.5)
    r = sh.cost(c, 2, 2)
    assert r.host_s == max(2 * 10 / (100 * 0.5), 2 * 300 / (100 * 0.5)) == 12.0
    # Sequences held on the card do not cross the link; without host sequences the host term is 0.
    assert sh.cost(c, 2, 0).host_s == 0.0


@pytest.mark.parametrize(
    ("kw", "bind"),
    [
        ({"weight_bytes": 2.0**30}, ServingBind.MEMORY),
        ({"array_macs": 1e20}, ServingBind.ARRAY),
        ({"vector_macs": 1e20}, ServingBind.VECTOR),
        ({"scale_cycles": 1e20}, ServingBind.SCALE),
    ],
)
def test_every_bind(kw: dict, bind: ServingBind) -> None:
    r = shape(**kw).cost(card(), 1, 0)
    assert r.binds is bind
    assert r.pass_s == r.terms()[bind] == max(r.terms().values())


def test_host_bind() -> None:
    r = shape(read_bytes=1e12).cost(card(host=True), 1, 1)
    assert r.binds is ServingBind.HOST
    assert r.memory_s == 0.0
    assert r.host_s == 1e12 / (5e10 * 1.0)


def tie_card(scale: float = 2.0, vector: float = 2.0, array: float = 2.0, host_read: float = 2.0**20) -> object:
    return card(memory_bandwidth=2.0**21, array=array, vector=vector, scale=scale, host=True, host_read=host_read)


TIE = {"weight_bytes": 2.0**20, "read_bytes": 2.0**20, "array_macs": 1.0, "vector_macs": 1.0, "scale_cycles": 1.0}


def test_tie_rule_last_of_equal_maxima() -> None:
    # Batch 2, one on the card and one on the host: memory_s = 2^20/2^21 + 1 × 2^20/2^21 = 1, host_s = 2^20/2^20 = 1,
    # array_s = vector_s = scale_s = 2 × 1 / 2 = 1: all five exactly equal, and Rust's max_by picks the last.
    sh = shape(**TIE)
    r = sh.cost(tie_card(), 2, 1)
    assert (r.memory_s, r.host_s, r.array_s, r.vector_s, r.scale_s) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert r.binds is ServingBind.SCALE
    assert sh.cost(tie_card(scale=4.0), 2, 1).binds is ServingBind.VECTOR
    assert sh.cost(tie_card(scale=4.0, vector=4.0), 2, 1).binds is ServingBind.ARRAY
    assert sh.cost(tie_card(scale=4.0, vector=4.0, array=4.0), 2, 1).binds is ServingBind.HOST
    r = sh.cost(tie_card(scale=4.0, vector=4.0, array=4.0, host_read=2.0**21), 2, 1)
    assert (r.memory_s, r.host_s, r.binds) == (1.0, 0.5, ServingBind.MEMORY)


def test_tie_memory_and_array_binds_array() -> None:
    sh = shape(weight_bytes=2.0**20, array_macs=3.0)
    r = sh.cost(card(memory_bandwidth=2.0**20, array=3.0), 1, 0)
    assert r.memory_s == r.array_s == 1.0
    assert r.binds is ServingBind.ARRAY
    # Memory and vector tied: vector, the later.
    r = shape(weight_bytes=2.0**20, vector_macs=5.0).cost(card(memory_bandwidth=2.0**20, vector=5.0), 1, 0)
    assert (r.memory_s, r.vector_s, r.binds) == (1.0, 1.0, ServingBind.VECTOR)
    # All terms zero: scale, the last.
    assert shape().cost(card(), 1, 0).binds is ServingBind.SCALE


def test_capacities_are_inclusive() -> None:
    sh = shape(held_shared=1000.0, held_per_sequence=100.0, on_chip_per_sequence=30.0)
    c = card(memory_capacity=1000 + 3 * 100, on_chip_capacity=5 * 30, host=True, host_capacity=2 * 100)
    r = sh.cost(c, 5, 2)
    assert (r.held_bytes, r.host_held_bytes, r.on_chip_bytes) == (1300.0, 200.0, 150.0)
    with pytest.raises(NotResident) as e:
        sh.cost(c, 5, 1)  # four on the card
    assert (e.value.needed, e.value.capacity, e.value.memory) == (1000 + 4 * 100, 1300, "card")
    with pytest.raises(NotResident) as e:
        sh.cost(c, 5, 3)  # two on the card, three on the host
    assert (e.value.needed, e.value.capacity, e.value.memory) == (3 * 100, 200, "host")
    c = card(memory_capacity=1000 + 3 * 100, on_chip_capacity=5 * 30 - 1, host=True, host_capacity=2 * 100)
    with pytest.raises(OnChipOverflow) as e:
        sh.cost(c, 5, 2)
    assert (e.value.needed, e.value.capacity) == (5 * 30, 149)


def test_cost_refusal_order() -> None:
    sh = shape(held_shared=1000.0, held_per_sequence=100.0, on_chip_per_sequence=30.0)
    with pytest.raises(Empty):
        sh.cost(card(memory_capacity=1), 0, 1)
    # No host link before anything does not fit.
    with pytest.raises(NoHostLink):
        sh.cost(card(memory_capacity=1, on_chip_capacity=1), 2, 1)
    # The card's memory before the on-chip memory.
    with pytest.raises(NotResident):
        sh.cost(card(memory_capacity=1, on_chip_capacity=1), 2, 0)
    # The card's memory before the host's.
    with pytest.raises(NotResident) as e:
        sh.cost(card(memory_capacity=1, host=True, host_capacity=1), 2, 1)
    assert e.value.memory == "card"


# ---------------------------------------------------------------------------------------------------------------------
# Provenance, rests_on, weakest.

CARD_PATHS_USED = [
    "memory.bandwidth",
    "memory.capacity",
    "streams.read",
    "streams.rewrite",
    "streams.append",
    "array",
    "vector",
    "scale",
    "on_chip.capacity",
]
HOST_PATHS_USED = ["host.capacity", "host.read", "host.write", "host.stream"]


def test_provenance_of_card_facts_used() -> None:
    # A pass with work for every term: weights to stream, a state rewritten in place, a cache read and appended.
    sh = shape(weight_bytes=1.0, read_bytes=3.0, write_bytes=1.0, rewrite_bytes=2.0, array_macs=1.0,
               vector_macs=1.0, scale_cycles=1.0)
    # on_chip.bandwidth is no fact a pass rests on.
    c = card(provenance={"on_chip.bandwidth": P.ASSUMED, "streams.rewrite": P.DERIVED})
    r = sh.cost(c, 1, 0)
    assert [p for p, _ in r.rests_on] == CARD_PATHS_USED
    assert r.provenance is P.DERIVED
    assert r.weakest == ("streams.rewrite",)
    # A pass without recurrent state does not read streams.rewrite: a weaker share there is no weaker price.
    dense_shape = attrs.evolve(sh, rewrite_bytes=0.0)
    r = dense_shape.cost(c, 1, 0)
    assert [p for p, _ in r.rests_on] == [p for p in CARD_PATHS_USED if p != "streams.rewrite"]
    assert r.provenance is P.PUBLISHED and r.weakest == tuple(p for p, _ in r.rests_on)
    # Only the terms with work rest on their rates: weights alone read memory, streams.read and the capacities.
    r = shape(weight_bytes=1.0).cost(c, 1, 0)
    assert [p for p, _ in r.rests_on] == ["memory.bandwidth", "memory.capacity", "streams.read", "on_chip.capacity"]
    # Host facts count only when sequences live there.
    c = card(host=True, provenance={"host.stream": P.ASSUMED, "vector": P.MEASURED, "scale": P.MEASURED})
    r = sh.cost(c, 2, 0)
    assert [p for p, _ in r.rests_on] == CARD_PATHS_USED
    assert (r.provenance, r.weakest) == (P.MEASURED, ("vector", "scale"))
    r = sh.cost(c, 2, 1)
    assert [p for p, _ in r.rests_on] == CARD_PATHS_USED + HOST_PATHS_USED
    assert (r.provenance, r.weakest) == (P.ASSUMED, ("host.stream",))
    # Every rests_on fact is the card's own.
    assert all(c.facts()[p] is f for p, f in r.rests_on)


def test_provenance_with_acceptance_facts() -> None:
    h = dense()
    s = Serving(contexts=ContextMix.uniform(100.0, 200), draft=draft(0.7, 0.6, prov=P.ESTIMATED))
    c = card(provenance={"array": P.MEASURED})
    r = price_serving(h, c, s)
    dense_paths = [p for p in CARD_PATHS_USED if p != "streams.rewrite"]  # no recurrent state in dense()
    assert [p for p, _ in r.rests_on] == [*dense_paths, "draft.acceptance.1", "draft.acceptance.2"]
    assert r.provenance is P.ESTIMATED
    assert r.weakest == ("draft.acceptance.1", "draft.acceptance.2")
    # Acceptance stronger than the card: the card's weakest wins.
    s = Serving(contexts=ContextMix.uniform(100.0, 200), draft=draft(0.7, prov=P.PUBLISHED))
    r = price_serving(h, card(provenance={"memory.capacity": P.ASSUMED}), s)
    assert (r.provenance, r.weakest) == (P.ASSUMED, ("memory.capacity",))
    # Mixed acceptance provenances: the weakest of them.
    d = Draft(2, (fact(0.7, "1", P.MEASURED), fact(0.5, "1", P.DERIVED)))
    assert pass_shape(h, Serving(contexts=ContextMix.uniform(100.0, 200), draft=d)).provenance is P.DERIVED


# ---------------------------------------------------------------------------------------------------------------------
# The dense model end to end on a card: every term from the hand-computed shape.


def test_price_dense_end_to_end() -> None:
    weights = (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT
    read, write = 2 * 512 * 100, 2 * 512 * 1
    array = 2 * LAYER_ARRAY + OUTPUT_ARRAY
    vector = 2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + 2 * (ATT_OPS / 2 + ATT_SOFTMAX) * 100
    scale = 2 * LAYER_SCALE + OUTPUT_SCALE
    bw, rd, ap = 1e9, 0.8, 0.6
    c = card(memory_bandwidth=bw, streams_read=rd, streams_append=ap, array=1e12, vector=1e12, scale=1e12)
    s = Serving(batch=3, contexts=ContextMix.uniform(100.0, 200))
    r = price_serving(dense(), c, s)
    memory_s = (weights + 3 * EMBD_ROW) / (bw * rd) + 3 * (0 / (bw * 1.0) + (read + write) / (bw * ap))
    assert r.memory_s == approx(memory_s)
    assert r.weight_bytes == weights + 3 * EMBD_ROW
    assert r.sequence_bytes == read + write
    assert r.array_s == approx(3 * array / 1e12)
    assert r.vector_s == approx(3 * vector / 1e12)
    assert r.scale_s == approx(3 * scale / 1e12)
    assert r.binds is ServingBind.MEMORY
    assert r.tokens_per_s == approx(3 * 1.0 / memory_s)
    assert r.held_bytes == 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE + 3 * 2 * 512 * 200
    # Each arithmetic term binds when its rate drops.
    assert price_serving(dense(), card(memory_bandwidth=bw, array=3 * array / 1.0), s).binds is ServingBind.ARRAY
    assert price_serving(dense(), card(memory_bandwidth=bw, vector=3 * vector / 1.0), s).binds is ServingBind.VECTOR
    assert price_serving(dense(), card(memory_bandwidth=bw, scale=3 * scale / 1.0), s).binds is ServingBind.SCALE


# ---------------------------------------------------------------------------------------------------------------------
# Refusals, by name, in the seed's order.

U = ContextMix.uniform(100.0, 200)


def test_empty() -> None:
    with pytest.raises(Empty):
        price_serving(dense(), card(), Serving(batch=0, contexts=U))
    with pytest.raises(Empty):
        pass_shape(dense(), Serving(contexts=U, activation_words=0))
    # Batch 0 is refused before the shape is read: even a routed checkpoint.
    with pytest.raises(Empty):
        price_serving(dense(expert_count=8), card(), Serving(batch=0, contexts=U))
    # No activation words before routed.
    with pytest.raises(Empty):
        pass_shape(dense(expert_count=8), Serving(contexts=U, activation_words=0))


def test_routed_before_bad_draft() -> None:
    with pytest.raises(Routed) as e:
        pass_shape(dense(expert_count=8), Serving(contexts=U, draft=draft(0.5, tokens=3)))
    assert e.value.experts == 8
    # expert_count 0 is dense.
    pass_shape(dense(expert_count=0), Serving(contexts=U))


@pytest.mark.parametrize(
    "d",
    [
        draft(0.5, tokens=2),  # one acceptance for two drafted tokens
        draft(0.5, 0.5, tokens=1),
        draft(1.5),
        draft(-0.1),
        draft(float("nan")),
    ],
)
def test_bad_draft(d: Draft) -> None:
    # A bad draft is named before a bad context mix.
    with pytest.raises(BadDraft):
        pass_shape(dense(), Serving(contexts=ContextMix(()), draft=d))


def test_acceptance_bounds_inclusive() -> None:
    # 0 and 1 are acceptances (the seed's check is 0.0..=1.0): emitted 1 + a1 + a1*a2.
    assert pass_shape(dense(), Serving(contexts=U, draft=draft(0.0, 1.0))).emitted_per_sequence == 1.0 + 0.0 + 0.0
    shape = pass_shape(dense(), Serving(contexts=U, draft=draft(1.0, 0.0)))
    assert shape.emitted_per_sequence == 1.0 + 1.0 + 1.0 * 0.0
    assert shape.rows_per_sequence == 3


@pytest.mark.parametrize(
    "mix",
    [
        ContextMix(()),
        ContextMix((ContextClass(0.5, 10.0, 100), ContextClass(0.4, 10.0, 100))),
        ContextMix((ContextClass(1.0, 101.0, 100),)),
        ContextMix((ContextClass(1.0, -1.0, 100),)),
        ContextMix((ContextClass(1.0, float("nan"), 100),)),
        ContextMix((ContextClass(1.0, 10.0, 100), ContextClass(0.0, 10.0, 100))),
        # Before a context past the model's.
        ContextMix((ContextClass(0.5, 10.0, 100), ContextClass(0.6, 10.0, 100_000))),
    ],
)
def test_bad_contexts(mix: ContextMix) -> None:
    with pytest.raises(BadContexts):
        pass_shape(dense(), Serving(contexts=mix, attention=AttentionMath.ARRAY))


def test_context_edges_allowed() -> None:
    # A class at its last position (limit − 1), a class at position 0, and shares within the seed's 1e-9 of one
    # are priced: two layers' caches read at the position and held at the limit (contiguous). The seed priced a
    # class at its limit too; that pass writes a row past it (BadContexts, DESIGN.md, Contexts; test_walk138.py).
    at_limit = pass_shape(dense(), Serving(contexts=ContextMix.uniform(199.0, 200)))
    assert at_limit.read_bytes == 2 * per_position(2) * 199
    assert at_limit.held_per_sequence == 2 * per_position(2) * 200
    with pytest.raises(BadContexts, match="position 200 is not below its limit 200"):
        pass_shape(dense(), Serving(contexts=ContextMix.uniform(200.0, 200)))
    at_zero = pass_shape(dense(), Serving(contexts=ContextMix.uniform(0.0, 4096)))
    assert at_zero.read_bytes == 0.0
    assert at_zero.held_per_sequence == 2 * per_position(2) * 4096
    nearly_one = pass_shape(dense(), Serving(contexts=ContextMix((ContextClass(1 - 1e-10, 1.0, 10),))))
    assert nearly_one.read_bytes == pytest.approx(2 * per_position(2) * 1.0, rel=1e-9)


def test_context_beyond_model_before_wide_cache() -> None:
    with pytest.raises(ContextBeyondModel) as e:
        pass_shape(
            dense(),
            Serving(
                contexts=ContextMix((ContextClass(0.5, 10.0, 100), ContextClass(0.5, 10.0, 8192))),
                attention=AttentionMath.ARRAY,
            ),
        )
    assert (e.value.limit, e.value.model) == (8192, 4096)
    # No context_length: no limit to check.
    h = header({k: v for k, v in DENSE_META.items() if k != "context_length"}, dense_tensors())
    pass_shape(h, Serving(contexts=ContextMix.uniform(10.0, 1_000_000)))


def test_wide_cache_on_array_before_step() -> None:
    bad = header(DENSE_META, [*dense_tensors(), ("blk.0.mystery.weight", (4, 4), "F32")])
    with pytest.raises(WideCacheOnArray) as e:
        pass_shape(bad, Serving(contexts=U, attention=AttentionMath.ARRAY, kv_bytes=2.0))
    assert e.value.kv_bytes == 2.0
    with pytest.raises(WideCacheOnArray):
        pass_shape(dense(), Serving(contexts=U, attention=AttentionMath.ARRAY, kv_bytes=1.2500001))
    # On the vector units any width is fine.
    pass_shape(dense(), Serving(contexts=U, kv_bytes=4.0))


def test_step_refusals() -> None:
    bad = header(DENSE_META, [*dense_tensors(), ("blk.0.mystery.weight", (4, 4), "F32")])
    with pytest.raises(Step) as e:
        pass_shape(bad, Serving(contexts=U))
    assert isinstance(e.value.refusal, UnclassifiedTensor)
    assert e.value.refusal.tensor == "blk.0.mystery.weight"
    tensors = dense_tensors()
    assert tensors[4][0] == "blk.0.attn_k.weight"
    tensors[4] = ("blk.0.attn_k.weight", (256, 128), 9999)
    with pytest.raises(Step) as e:
        pass_shape(header(DENSE_META, tensors), Serving(contexts=U))
    assert isinstance(e.value.refusal, UnknownType)
    assert (e.value.refusal.tensor, e.value.refusal.type_id) == ("blk.0.attn_k.weight", 9999)
    # Step before MissingTensor: no token_embd and an unclassified tensor.
    no_embd = [*dense_tensors()[1:], ("blk.0.mystery.weight", (4, 4), "F32")]
    with pytest.raises(Step):
        pass_shape(header(DENSE_META, no_embd), Serving(contexts=U))


def test_step_missing_ssm_metadata_names_the_keys() -> None:
    meta = {k: v for k, v in REC_META.items() if k not in ("ssm.group_count", "ssm.state_size")}
    with pytest.raises(Step) as e:
        pass_shape(header(meta, rec_tensors(), arch="qwen3next"), rec_serving(StateFlush()))
    refusal = e.value.refusal
    assert isinstance(refusal, MissingMetadata)
    assert set(refusal.keys) == {"qwen3next.ssm.state_size", "qwen3next.ssm.group_count"}
    assert e.value.fields()["step"]["refusal"] == "MissingMetadata"


def test_missing_token_embd() -> None:
    with pytest.raises(MissingTensor) as e:
        pass_shape(header(DENSE_META, dense_tensors()[1:]), Serving(contexts=U))
    assert e.value.tensor == "token_embd.weight"
    # Missing token_embd before an undecoded matrix.
    tensors = dense_tensors()[1:]
    tensors[-1] = ("output.weight", (256, 1024), "IQ2_XXS")
    with pytest.raises(MissingTensor):
        pass_shape(header(DENSE_META, tensors), Serving(contexts=U))


@pytest.mark.parametrize(
    ("index", "name", "ty"), [(-1, "output.weight", "IQ2_XXS"), (10, "blk.0.ffn_down.weight", "Q8_K")]
)
def test_undecoded_names_tensor_and_type(index: int, name: str, ty: str) -> None:
    tensors = dense_tensors()
    _, dims, _ = tensors[index]
    assert tensors[index][0] == name
    tensors[index] = (name, dims, ty)
    with pytest.raises(Undecoded) as e:
        pass_shape(header(DENSE_META, tensors), Serving(contexts=U))
    assert (e.value.tensor, e.value.ty) == (name, ty)
    assert name in str(e.value) and ty in str(e.value)
    assert e.value.to_json()["refusal"] == "Undecoded"


def test_undecoded_vector_is_a_norm() -> None:
    # A tensor of fewer than two dimensions is a norm's or a bias's work whatever its type.
    tensors = dense_tensors()
    assert tensors[3][0] == "blk.0.attn_q.bias"
    tensors[3] = ("blk.0.attn_q.bias", (256,), "Q8_0")
    s = pass_shape(header(DENSE_META, tensors), Serving(contexts=U))
    assert s.array_macs == 2 * LAYER_ARRAY + OUTPUT_ARRAY


def test_not_resident_and_on_chip() -> None:
    held_shared = 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE
    per_seq = 2 * 512 * 200
    s = Serving(batch=2, contexts=U)
    with pytest.raises(NotResident) as e:
        price_serving(dense(), card(memory_capacity=held_shared + 2 * per_seq - 1), s)
    assert (e.value.needed, e.value.capacity) == (held_shared + 2 * per_seq, held_shared + 2 * per_seq - 1)
    price_serving(dense(), card(memory_capacity=held_shared + 2 * per_seq), s)
    with pytest.raises(OnChipOverflow) as e:
        price_serving(dense(), card(on_chip_capacity=2 * 1792 - 1), s)
    assert e.value.needed == 2 * (4 * 256 + 512 + 256)


def test_no_host_link() -> None:
    with pytest.raises(NoHostLink):
        price_serving(dense(), card(), Serving(contexts=U, host_memory=True))
    with pytest.raises(NoHostLink):
        shape().cost(card(), 3, 1)


# ---------------------------------------------------------------------------------------------------------------------
# cost_split: the ternary search over sequences held on the card.


def test_cost_split_by_hand() -> None:
    # Each sequence on the card costs 1 s of memory time (read 100 B at 100 B/s), each on the host 3 s (read 100 B
    # at 100 × 1/3 B/s): at batch 8 the times cross at 6 held on the card: max(6, 2 × 3) = 6.
    sh = shape(read_bytes=100.0, held_per_sequence=1.0)
    c = card(memory_bandwidth=100.0, streams_append=1.0, host=True, host_read=100.0, host_stream=1 / 3)
    r = sh.cost_split(c, 8, True)
    assert (r.batch, r.host_sequences) == (8, 2)
    assert r.memory_s == 6.0
    assert r.host_s == approx(6.0)
    # Without host memory: all on the card.
    r = sh.cost_split(c, 8, False)
    assert (r.host_sequences, r.memory_s) == (0, 8.0)


def test_cost_split_no_host_link() -> None:
    with pytest.raises(NoHostLink):
        shape().cost_split(card(), 2, True)
    # Without host memory a hostless card is fine.
    assert shape().cost_split(card(), 2, False).host_sequences == 0


def test_cost_split_lo_above_hi_names_what_does_not_fit() -> None:
    # Card room 3, host room 2: batch 6 puts 3 on the card and 3 on the host, which holds 2.
    sh = shape(held_shared=100.0, held_per_sequence=10.0)
    c = card(memory_capacity=100 + 3 * 10 + 5, host=True, host_capacity=2 * 10 + 5)
    assert (sh.card_room(c), sh.host_room(c)) == (3, 2)
    with pytest.raises(NotResident) as e:
        sh.cost_split(c, 6, True)
    assert (e.value.memory, e.value.needed, e.value.capacity) == ("host", 3 * 10, 2 * 10 + 5)
    assert sh.cost_split(c, 5, True).host_sequences == 2


def exhaustive(sh: PassShape, c, batch: int):
    lo = max(batch - sh.host_room(c), 0)
    hi = min(batch, sh.card_room(c))
    costs = [sh.cost(c, batch, batch - held) for held in range(lo, hi + 1)]
    return costs


@given(
    per=st.integers(1, 50),
    shared=st.integers(0, 200),
    card_room=st.integers(0, 12),
    host_room=st.integers(0, 12),
    weight=st.integers(0, 2000),
    read=st.integers(0, 400),
    write=st.integers(0, 400),
    rewrite_part=st.integers(0, 100),
    host_read=st.integers(1, 200),
    host_write=st.integers(1, 200),
    arith=st.integers(0, 40),
    bw=st.integers(50, 5000),
    batch=st.integers(1, 24),
)
@settings(max_examples=300, deadline=None)
def test_cost_split_matches_exhaustive_scan(
    per, shared, card_room, host_room, weight, read, write, rewrite_part, host_read, host_write, arith, bw, batch
) -> None:
    sh = shape(
        weight_bytes=float(weight),
        read_bytes=float(read),
        write_bytes=float(write),
        rewrite_bytes=float(min(rewrite_part, read + write)),
        vector_macs=float(arith),
        held_shared=float(shared),
        held_per_sequence=float(per),
    )
    c = card(
        memory_capacity=shared + card_room * per,
        memory_bandwidth=float(bw),
        streams_rewrite=0.5,
        streams_append=0.75,
        vector=10.0,
        host=True,
        host_capacity=host_room * per,
        host_read=float(host_read),
        host_write=float(host_write),
        host_stream=0.5,
    )
    assert (sh.card_room(c), sh.host_room(c)) == (card_room, host_room)
    costs = exhaustive(sh, c, batch)
    if not costs:
        with pytest.raises(NotResident):
            sh.cost_split(c, batch, True)
        return
    got = sh.cost_split(c, batch, True)
    fastest = min(x.pass_s for x in costs)
    assert got.pass_s == fastest
    # Where the memories bind (the arithmetic does not flatten the minimum), the split is the exhaustive scan's first
    # fastest: the fewest sequences held on the card.
    card_times = [max(x.memory_s, x.host_s) for x in costs]
    if min(card_times) >= got.vector_s:
        first = next(x for x in costs if x.pass_s == fastest)
        assert got.host_sequences == first.host_sequences


# ---------------------------------------------------------------------------------------------------------------------
# best and max_batch.


def test_best_flat_region_goes_to_the_smallest_batch() -> None:
    # Vector-bound at every batch: tokens/s = b × 1 / (b × 10 / 1000) = 100, flat in the batch.
    sh = shape(vector_macs=10.0, weight_bytes=1.0, held_per_sequence=100.0)
    c = card(vector=1000.0, memory_capacity=7 * 100)
    r = sh.best(c, False)
    assert r.batch == 1
    assert r.binds is ServingBind.VECTOR
    assert r.tokens_per_s == approx(100.0)


def test_best_ties_within_relative_1e12() -> None:
    # Batch 1 is memory-bound at 1 s (tokens/s 1); batch b ≥ 2 vector-bound at b × v s (tokens/s 1/v).
    for v, want in ((1 - 1e-13, 1), (1 - 1e-11, 2)):
        sh = shape(weight_bytes=2.0**20, vector_macs=v, held_per_sequence=1.0)
        c = card(memory_bandwidth=2.0**20, vector=1.0, memory_capacity=5)
        assert sh.best(c, False).batch == want


def test_best_memory_bound_takes_the_largest_batch_that_fits() -> None:
    sh = shape(weight_bytes=1e6, read_bytes=10.0, held_shared=50.0, held_per_sequence=10.0, on_chip_per_sequence=1.0)
    c = card(memory_capacity=50 + 9 * 10 + 3, on_chip_capacity=100)
    assert sh.best(c, False).batch == 9
    # The on-chip memory stops the scan first.
    c = card(memory_capacity=50 + 9 * 10 + 3, on_chip_capacity=4)
    assert sh.best(c, False).batch == 4
    # With host memory the scan runs through card room + host room.
    c = card(
        memory_capacity=50 + 9 * 10 + 3,
        on_chip_capacity=100,
        host=True,
        host_capacity=3 * 10,
        host_read=1e12,
        host_write=1e12,
    )
    r = sh.best(c, True)
    assert (r.batch, r.host_sequences) == (12, 3)


def test_best_when_nothing_fits_is_batch_ones_refusal() -> None:
    sh = shape(held_shared=1000.0, held_per_sequence=10.0, on_chip_per_sequence=5.0)
    with pytest.raises(NotResident) as e:
        sh.best(card(memory_capacity=1005), False)
    assert (e.value.needed, e.value.capacity) == (1010, 1005)
    with pytest.raises(OnChipOverflow):
        sh.best(card(on_chip_capacity=4), False)
    with pytest.raises(NoHostLink):
        sh.best(card(), True)
    with pytest.raises(NotResident):
        sh.max_batch(card(memory_capacity=1005), False)
    with pytest.raises(NoHostLink):
        sh.max_batch(card(), True)


def test_max_batch_dense_by_hand() -> None:
    held_shared = 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE
    per_seq = 2 * 512 * 200
    on_chip = 1 * (4 * 256 + 1 * (512 + 256))
    s = Serving(contexts=U)
    c = card(memory_capacity=held_shared + 5 * per_seq + 1000)
    assert max_batch(dense(), c, s) == (held_shared + 5 * per_seq + 1000 - held_shared) // per_seq == 5
    # Exactly full is still resident.
    assert max_batch(dense(), card(memory_capacity=held_shared + 5 * per_seq), s) == 5
    # The on-chip memory limits first.
    c = card(memory_capacity=held_shared + 5 * per_seq, on_chip_capacity=3 * on_chip + 7)
    assert max_batch(dense(), c, s) == 3
    # With host memory: card room plus host room.
    c = card(memory_capacity=held_shared + 5 * per_seq, host=True, host_capacity=4 * per_seq + 5)
    assert max_batch(dense(), c, Serving(contexts=U, host_memory=True)) == 5 + 4
    assert max_batch(dense(), c, s) == 5
    # Nothing fits: batch 1's refusal.
    with pytest.raises(NotResident):
        max_batch(dense(), card(memory_capacity=held_shared + per_seq - 1), s)
    # Paged caches hold less: floor((capacity − shared) / (2 × 512 × (100 + 8))).
    c = card(memory_capacity=held_shared + 5 * per_seq)
    assert max_batch(dense(), c, Serving(contexts=U, kv_page=16)) == (5 * per_seq) // (2 * 512 * 108) == 9


def test_best_serving_dense_by_hand() -> None:
    held_shared = 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE
    per_seq = 2 * 512 * 200
    s = Serving(batch=1, contexts=U)
    # Memory-bound at every batch: the weights amortize, so the largest batch that fits is fastest.
    c = card(memory_capacity=held_shared + 6 * per_seq, memory_bandwidth=1e9)
    r = best_serving(dense(), c, s)
    assert r.batch == 6
    weights = (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT
    assert r.memory_s == approx((weights + 6 * EMBD_ROW) / 1e9 + 6 * (2 * 512 * 100 + 2 * 512) / 1e9)
    # Vector-bound everywhere (a slow vector unit): tokens/s is flat, so batch 1.
    r = best_serving(dense(), card(memory_capacity=held_shared + 6 * per_seq, vector=1e3), s)
    assert (r.batch, r.binds) == (1, ServingBind.VECTOR)


def test_cost_split_flat_minimum_keeps_the_seeds_ternary_window() -> None:
    # Each sequence on the card: 96 B at 96 B/s = 1 s; on the host: 96 B at 32 B/s = 3 s. At batch 10 the card time
    # max(held, 3 (10 − held)) is 21, 15, 12, 9, 8, 9 at held 3, 5, 6, 7, 8, 9, and the vector term is a flat 20 s.
    # The seed's ternary search: [0, 10] → m 3, 7: 21 > 9 → a = 3; [3, 10] → 5, 8: 15 > 8 → a = 5; [5, 10] → 6, 9:
    # 12 > 9 → a = 6; [6, 10] → 7, 9: 9 ≤ 9 → z = 9; [6, 9] → 7, 8: 9 > 8 → a = 7; [7, 8]: both 20 s, the first wins.
    # So 7 held on the card, although every held from 4 up is as fast (the seed's rule, kept as written).
    sh = shape(read_bytes=96.0, vector_macs=2.0, held_per_sequence=1.0)
    c = card(memory_bandwidth=96.0, host=True, host_read=32.0, vector=1.0)
    r = sh.cost_split(c, 10, True)
    assert (r.pass_s, r.binds, 10 - r.host_sequences) == (20.0, ServingBind.VECTOR, 7)
    assert sh.cost(c, 10, 10 - 4).pass_s == 20.0


def test_per_layer_kv_heads_zero_means_no_cache() -> None:
    h = dense(**{"attention.head_count_kv": (2, 0)})
    s = pass_shape(h, Serving(contexts=U))
    assert s.read_bytes == 1 * 512 * 100
    assert s.write_bytes == 1 * 512
    assert s.held_per_sequence == 1 * 512 * 200
    assert s.vector_macs == approx(2 * LAYER_VECTOR + BIAS_VECTOR + 2 * 256 + 1 * (ATT_OPS / 2 + ATT_SOFTMAX) * 100)


def test_unequal_key_and_value_widths() -> None:
    # The recurrent model's attention block: 4 query heads, 2 KV heads, key 32 and value 16 wide (from metadata).
    s = pass_shape(
        recurrent(),
        Serving(contexts=U, attention=AttentionMath.ARRAY, kv_bytes=1.0, kv_rotated=True),
    )
    base = pass_shape(recurrent(), Serving(contexts=U, kv_bytes=1.0))
    pos, n = 100, 1
    products = 2 * 4 * (32 + 16) / 2 * pos * n
    t32, t16 = 32 * math.log2(32), 16 * math.log2(16)  # 160, 64
    rotation = (2 * (t32 + t16) + 4 * (t32 + t16)) * n
    # The lanes round every score and every value element's sum over each block of 32 positions: value width 16.
    assert s.scale_cycles == base.scale_cycles + 4 * pos * n * (1 + 16 / 32)
    assert s.array_macs == base.array_macs + 2 * products
    assert s.vector_macs == approx(base.vector_macs - products + rotation)
    assert s.read_bytes == base.read_bytes == 8192 + 2304 + 2 * (32 + 16) * 1 * pos


def test_best_peaks_at_the_card_room_with_a_slow_host() -> None:
    # Card room 4, host room 10. On the card: 1 s of weights + 0.1 s a sequence; on the host 10 s a sequence. Up to
    # batch 4 all ride the card (tokens/s b / (1 + 0.1 b), 2.857 at 4); from 5 one must ride the host: 10 s a pass.
    sh = shape(weight_bytes=100.0, read_bytes=10.0, held_per_sequence=1.0)
    c = card(memory_capacity=4, memory_bandwidth=100.0, host=True, host_capacity=10, host_read=1.0)
    r = sh.best(c, True)
    assert (r.batch, r.host_sequences) == (4, 0)
    assert r.pass_s == approx(1 + 4 * 10 / 100)
    assert r.tokens_per_s == approx(4 / 1.4)
    assert sh.max_batch(c, True) == 14


def test_price_with_host_memory_end_to_end() -> None:
    # Card room 2 at batch 3; the host link as fast as the memory. The weights dominate the card's memory time, which
    # only grows with the sequences it holds, so all three ride the host.
    held_shared = 2 * LAYER_BYTES + BIAS_BYTES + OUTPUT_NORM + OUTPUT + EMBD_TABLE
    per_seq = 2 * 512 * 200
    weights = (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT
    c = card(
        memory_capacity=held_shared + 2 * per_seq,
        memory_bandwidth=1e9,
        host=True,
        host_read=1e9,
        host_write=1e9,
        provenance={"host.stream": P.ESTIMATED},
    )
    r = price_serving(dense(), c, Serving(batch=3, contexts=U, host_memory=True))
    assert (r.batch, r.host_sequences) == (3, 3)
    assert r.memory_s == approx((weights + 3 * EMBD_ROW) / 1e9)
    assert r.host_s == approx(max(3 * 2 * 512 * 100 / 1e9, 3 * 2 * 512 / 1e9))
    assert (r.held_bytes, r.host_held_bytes) == (held_shared, 3 * per_seq)
    assert r.binds is ServingBind.MEMORY
    assert [p for p, _ in r.rests_on] == [p for p in CARD_PATHS_USED if p != "streams.rewrite"] + HOST_PATHS_USED
    assert (r.provenance, r.weakest) == (P.ESTIMATED, ("host.stream",))


def test_refusal_names_are_the_seeds() -> None:
    names = {
        Step: "Step",
        Undecoded: "Undecoded",
        MissingTensor: "MissingTensor",
        NotResident: "NotResident",
        OnChipOverflow: "OnChipOverflow",
        BadDraft: "BadDraft",
        Empty: "Empty",
        Routed: "Routed",
        NoHostLink: "NoHostLink",
        BadContexts: "BadContexts",
        ContextBeyondModel: "ContextBeyondModel",
        WideCacheOnArray: "WideCacheOnArray",
    }
    for cls, name in names.items():
        assert cls.name == name
    assert NotResident(5.0, 4.0).to_json()["refusal"] == "NotResident"


def test_serving_defaults() -> None:
    s = Serving()
    assert (s.batch, s.kv_page, s.attention, s.kv_bytes, s.state_bytes) == (1, None, AttentionMath.VECTOR, 2.0, 4.0)
    assert (s.activation_words, s.scaling, s.kv_rotated, s.draft) == (1, ActScaling.PER_BLOCK, False, None)
    assert (s.flush, s.host_memory) == (StateFlush(StateFlushMode.EVERY_PASS, 1), False)


def test_cost_split_ternary_tie_moves_the_upper_end() -> None:
    # Card and host each 1 s a sequence (96 B at 96 B/s), a flat 3 s vector term at batch 3. [0, 3] → m 1, 2: card
    # times max(1, 2) = 2 and max(2, 1) = 2 tie, and the seed's `<=` keeps the lower part: [0, 2], every pass 3 s, the
    # first wins: none held on the card.
    sh = shape(read_bytes=96.0, vector_macs=1.0, held_per_sequence=1.0)
    c = card(memory_bandwidth=96.0, host=True, host_read=96.0, vector=1.0)
    r = sh.cost_split(c, 3, True)
    assert (r.host_sequences, r.pass_s, r.host_s, r.vector_s) == (3, 3.0, 3.0, 3.0)
    assert r.binds is ServingBind.VECTOR  # host and vector tie at 3 s: the later


def test_kv_rotated_with_drafts() -> None:
    d = draft(0.8, 0.5)
    base = pass_shape(mtp(), Serving(contexts=U, draft=d))
    rot = pass_shape(mtp(), Serving(contexts=U, draft=d, kv_rotated=True))
    n, k = 3, 2
    per_row = 2 * (384 + 384) + 4 * (384 + 384)  # kv heads and query heads, key and value of 64: 64 log2 64 = 384
    assert rot.vector_macs == approx(base.vector_macs + per_row * (n + n + k))
