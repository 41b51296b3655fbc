"""Issue 3 end to end: Gated-DeltaNet hybrids, their MTP draft block, drafting facts, the three state flushes and host
memory, from a synthetic header (``tests/hybrids.py``) through the decode step and the pass shape to the command line.

The checkpoint is Qwen3.5-27B-like: 64 main blocks (every 4th full attention, the rest Gated DeltaNet) and one MTP
block; hidden 5120, 24 query heads, 4 KV heads of 256, FFN 17408, vocabulary 248320; ssm.conv_kernel 4,
ssm.state_size 128, ssm.group_count 16, ssm.time_step_rank 48, ssm.inner_size 6144. Every expected number below is
written out by hand from the seed (``serving.rs``; docs/DESIGN.md describes it) and DESIGN.md: tensor bytes as
``ceil(elements / block) × block bytes`` from the GGML block table as published, each term as the seed's arithmetic.
Nothing is computed by calling the code under test to get an expectation.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner
from gguf.constants import MODEL_ARCH, MODEL_TENSORS, TENSOR_NAMES

from hybrids import (
    CHECKPOINTS,
    QWEN3NEXT,
    QWEN35,
    qwen35_meta,
    qwen35_tensors,
    write_header_only,
)
from passprice.cards import load_card
from passprice.checkpoints import import_header, load_checkpoint
from passprice.cli import cli
from passprice.decode import (
    Deployment,
    HeldClass,
    LayerKind,
    MissingMetadata,
    StageKind,
    decode_step,
)
from passprice.drafts import load_draft_method
from passprice.facts import Provenance
from passprice.gguf_header import GGUFHeader, read_header
from passprice.registry import Root
from passprice.routing import load_routing
from passprice.serving import (
    BadDraft,
    ContextClass,
    ContextMix,
    Draft,
    NoHostLink,
    NotResident,
    Routed,
    Serving,
    StateFlush,
    StateFlushMode,
    Step,
    best_serving,
    emitted_per_pass,
    max_batch,
    pass_shape,
    price_serving,
)
from passprice.servings import load_spec, resolve
from synth import card, fact

REPO = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
ROOT = Root(REPO)
P = Provenance
REL = 1e-12


def approx(x: float) -> object:
    return pytest.approx(x, rel=REL, abs=0.0)


# ---------------------------------------------------------------------------------------------------------------------
# The shape, written out.

E, FF, V = 5120, 17408, 248320
Q_HEADS, KV_HEADS, HEAD = 24, 4, 256
REC_HEADS, KEY, GROUPS, INNER, TAPS = 48, 128, 16, 6144, 4
VALUE = INNER // REC_HEADS  # 128
CHANNELS = INNER + 2 * GROUPS * KEY  # 10240: q and k (16 groups × 128 each) and v (48 heads × 128)
STATE = REC_HEADS * KEY * VALUE  # 786,432 elements
LOG = GROUPS * KEY + REC_HEADS * VALUE + 2 * REC_HEADS  # 2048 + 6144 + 96 = 8288 elements a token
N_REC, N_ATT = 48, 16
FULL = [i for i in range(64) if (i + 1) % 4 == 0]  # 3, 7, …, 63
MTP = 64

# The GGML block table as published: (elements per block, bytes per block).
BLOCK = {"F32": (1, 4), "Q4_K": (256, 144), "Q6_K": (256, 210), "Q8_0": (32, 34)}


def nbytes(ty: str, elements: int) -> int:
    per, size = BLOCK[ty]
    return -(-elements // per) * size


# Bytes of the tensors each stage streams.
REC_PROJECT_NORM = (
    2 * nbytes("F32", E)  # attn_norm, post_attention_norm
    + nbytes("Q4_K", E * CHANNELS)  # attn_qkv
    + nbytes("Q4_K", E * INNER)  # attn_gate
    + 2 * nbytes("Q8_0", E * REC_HEADS)  # ssm_alpha, ssm_beta
    + nbytes("Q4_K", INNER * E)  # ssm_out
    + 2 * nbytes("Q4_K", E * FF)  # ffn_gate, ffn_up
    + nbytes("Q6_K", FF * E)  # ffn_down
)
REC_STAGE = 2 * nbytes("F32", REC_HEADS) + nbytes("F32", TAPS * CHANNELS) + nbytes("F32", KEY)  # a, dt, conv1d, norm
ATT_LAYER = (
    2 * nbytes("F32", E)
    + 2 * nbytes("F32", HEAD)  # q_norm, k_norm
    + nbytes("Q4_K", E * 2 * Q_HEADS * HEAD)  # attn_q: queries and their output gate
    + 2 * nbytes("Q4_K", E * KV_HEADS * HEAD)  # attn_k, attn_v
    + nbytes("Q4_K", Q_HEADS * HEAD * E)  # attn_output
    + 2 * nbytes("Q4_K", E * FF)
    + nbytes("Q6_K", FF * E)
)
MTP_LAYER = ATT_LAYER + 3 * nbytes("F32", E) + nbytes("Q4_K", 2 * E * E)  # + enorm, hnorm, shared_head_norm, eh_proj
OUTPUT_NORM = nbytes("F32", E)
OUTPUT = nbytes("Q6_K", E * V)
TABLE = nbytes("Q4_K", E * V)
EMBED_ROW = nbytes("Q4_K", E)  # 20 blocks × 144 = 2880
W_MAIN = N_REC * (REC_PROJECT_NORM + REC_STAGE) + N_ATT * ATT_LAYER + OUTPUT_NORM + OUTPUT

# Multiply-adds on the array per row (Q4_K one pass; Q6_K and Q8_0 two), and block-scale cycles per row (one a block
# for every type here: K-quants 16 sub-block products = one lane cycle; Q8_0 none, at least one).
REC_ARRAY = E * CHANNELS + E * INNER + 2 * 2 * E * REC_HEADS + INNER * E + 2 * E * FF + 2 * FF * E
ATT_ARRAY = E * 2 * Q_HEADS * HEAD + 2 * E * KV_HEADS * HEAD + Q_HEADS * HEAD * E + 2 * E * FF + 2 * FF * E
MTP_ARRAY = ATT_ARRAY + 2 * E * E
OUT_ARRAY = 2 * E * V
REC_SCALE = (E * CHANNELS + E * INNER + INNER * E + 2 * E * FF + FF * E) / 256 + 2 * E * REC_HEADS / 32
ATT_SCALE = (E * 2 * Q_HEADS * HEAD + 2 * E * KV_HEADS * HEAD + Q_HEADS * HEAD * E + 2 * E * FF + FF * E) / 256
MTP_SCALE = ATT_SCALE + 2 * E * E / 256
OUT_SCALE = E * V / 256
# Norm work per row (2 multiply-adds per element); the ssm_norm rides the recurrence stage, not a norm stage.
REC_NORM = 2 * (2 * E)
ATT_NORM = 2 * (2 * E + 2 * HEAD)
MTP_NORM = ATT_NORM + 2 * (3 * E)
FINAL_NORM = 2 * E
# Attention per position per row: a multiply-add per head per key and value element, and 7.5 softmax slots per head.
ATT_PER_POSITION = Q_HEADS * (HEAD + HEAD) + 7.5 * Q_HEADS  # 12,288 + 180


def pp(kv_bytes: float = 2.0) -> float:
    """KV bytes one full-attention layer adds per position: kv heads × (key + value) × kv_bytes."""
    return KV_HEADS * (HEAD + HEAD) * kv_bytes


EVERY_PASS = StateFlush()


def expected(
    k: int = 0,
    acceptance: tuple[float, ...] = (),
    share: float = 1.0,
    flush: StateFlush = EVERY_PASS,
    position: float = 2048.0,
    kv_positions: float = 4096.0,
    sb: float = 4.0,
    kvb: float = 2.0,
) -> dict[str, float]:
    """The seed's PassShape of this checkpoint, term by term, by hand."""
    n = 1 + k
    emitted = 1.0
    run = 1.0
    for a in acceptance:
        run *= a
        emitted += run
    if flush.mode is StateFlushMode.EVERY_PASS:
        t, lazy, windows, window = 1.0, False, 0.0, 0.0
    elif flush.mode is StateFlushMode.EVERY:
        t = float(flush.tokens)
        lazy, windows, window = True, 1.0, max((t - emitted) / 2, 0.0)
    else:
        t = float(flush.tokens)
        lazy, windows, window = True, 2.0, t + max((t - emitted) / 2, 0.0)
    dense, ring_row = STATE * sb, CHANNELS * sb
    ring = (TAPS - 1) * ring_row
    log = LOG * sb
    per_position = pp(kvb)
    if lazy:
        rec_read = dense + ring + window * log
        rec_write = ring_row * n + n * log + emitted / t * dense
        rec_rewrite = min(emitted / t, 1.0) * dense + emitted / t * dense
        walk = window + (n - 1) / 2
        rec_vector = TAPS * CHANNELS * n + n * STATE + n * REC_HEADS * walk * (2 * KEY + VALUE) + 2 * emitted * STATE
        rec_held = ring + ring_row * n + dense + (windows * t + n) * log
    else:
        rec_read = dense + ring
        rec_write = ring_row * n + n * dense
        rec_rewrite = dense + n * dense
        rec_vector = TAPS * CHANNELS * n + n * 3 * STATE
        rec_held = ring + ring_row * n + n * dense
    return {
        "rows_per_sequence": n,
        "emitted_per_sequence": emitted,
        "weight_bytes": W_MAIN - OUTPUT + OUTPUT * (1 + k * share) + k * MTP_LAYER,
        "embed_bytes": EMBED_ROW * (n + k),
        "read_bytes": N_ATT * per_position * position + k * per_position * position + N_REC * rec_read,
        "write_bytes": N_ATT * per_position * n + k * per_position + N_REC * rec_write,
        "rewrite_bytes": N_REC * rec_rewrite,
        "array_macs": N_REC * REC_ARRAY * n + N_ATT * ATT_ARRAY * n + k * MTP_ARRAY + OUT_ARRAY * (n + k * share),
        "scale_cycles": N_REC * REC_SCALE * n + N_ATT * ATT_SCALE * n + k * MTP_SCALE + OUT_SCALE * (n + k * share),
        "vector_macs": (
            N_REC * REC_NORM * n
            + N_ATT * ATT_NORM * n
            + k * MTP_NORM
            + FINAL_NORM * n
            + N_ATT * ATT_PER_POSITION * position * n
            + k * ATT_PER_POSITION * position
            + N_REC * rec_vector
        ),
        "held_shared": W_MAIN + (MTP_LAYER if k > 0 else 0) + TABLE,
        "held_per_sequence": N_ATT * per_position * kv_positions
        + (per_position * kv_positions if k > 0 else 0.0)
        + N_REC * rec_held,
        "on_chip_per_sequence": n * (4 * E + (FF + E)),
    }


SHAPE_FIELDS = (
    "rows_per_sequence",
    "emitted_per_sequence",
    "weight_bytes",
    "embed_bytes",
    "read_bytes",
    "write_bytes",
    "rewrite_bytes",
    "array_macs",
    "scale_cycles",
    "vector_macs",
    "held_shared",
    "held_per_sequence",
    "on_chip_per_sequence",
)


def check_shape(shape: object, want: dict[str, float]) -> None:
    for name in SHAPE_FIELDS:
        assert getattr(shape, name) == approx(want[name]), name


@pytest.fixture(scope="module")
def q35() -> GGUFHeader:
    return read_header(DATA / f"{QWEN35}.header.gguf")


@pytest.fixture(scope="module")
def qnext() -> GGUFHeader:
    return read_header(DATA / f"{QWEN3NEXT}.header.gguf")


def drafted(*acceptance: float, head_rows: int | None = None, prov: tuple[Provenance, ...] = ()) -> Draft:
    provs = prov or (P.PUBLISHED,) * len(acceptance)
    facts = tuple(fact(a, "1", p, f"acc{i + 1}") for i, (a, p) in enumerate(zip(acceptance, provs, strict=True)))
    return Draft(len(acceptance), facts, head_rows)


def serving(**kw: object) -> Serving:
    kw.setdefault("contexts", ContextMix.uniform(2048.0, 4096))
    return Serving(**kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------------
# The synthetic checkpoints: files and registry entries regenerate from the builders.


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_data_file_is_the_builders_output(name: str, tmp_path: Path) -> None:
    build, _ = CHECKPOINTS[name]
    built = build(tmp_path)
    assert built.name == f"{name}.header.gguf"
    assert built.read_bytes() == (DATA / built.name).read_bytes()


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_registry_entry_is_what_import_header_makes_of_the_builder(name: str, tmp_path: Path) -> None:
    build, origin = CHECKPOINTS[name]
    text = (REPO / "registry" / "checkpoints" / f"{name}.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text)["entry"]["origin"] == origin
    assert import_header(read_header(build(tmp_path), cache=False), name, origin) == text
    # By entry name and by file the same header.
    assert load_checkpoint(ROOT, name) == read_header(DATA / f"{name}.header.gguf")


def test_files_are_header_only(q35: GGUFHeader, qnext: GGUFHeader) -> None:
    for h, name, count in ((q35, QWEN35, 866), (qnext, QWEN3NEXT, 807)):
        size = (DATA / f"{name}.header.gguf").stat().st_size
        assert h.header_bytes == size < h.data_offset  # no tensor data, not even the alignment padding
        assert len(h.tensors) == count


def test_tensor_names_are_llama_cpps(q35: GGUFHeader, qnext: GGUFHeader) -> None:
    nextn = [TENSOR_NAMES[t] for t in TENSOR_NAMES if ".nextn." in TENSOR_NAMES[t]]
    for h, arch, extra in ((q35, MODEL_ARCH.QWEN35, nextn), (qnext, MODEL_ARCH.QWEN3NEXT, [])):
        templates = [TENSOR_NAMES[t] for t in MODEL_TENSORS[arch]] + extra
        patterns = [
            re.compile("^" + re.escape(t).replace(r"\{bid\}", r"\d+") + r"(\.weight|\.bias)?$") for t in templates
        ]
        for t in h.tensors:
            assert any(p.match(t.name) for p in patterns), t.name


def test_the_tensor_table_total(q35: GGUFHeader) -> None:
    # 17,210,261,504 bytes: the main model, the MTP block and the embedding table.
    assert W_MAIN + MTP_LAYER + TABLE == 17_210_261_504
    assert q35.meta_int("block_count") == 65 and q35.meta_int("nextn_predict_layers") == 1


# ---------------------------------------------------------------------------------------------------------------------
# The decode step: which layers have what, the issue's right values.


def test_layers(q35: GGUFHeader) -> None:
    step = decode_step(q35, Deployment())
    kinds = {layer.index: (layer.kind, layer.draft, layer.kv_heads) for layer in step.layers}
    assert len(kinds) == 65
    for i in range(64):
        if i in FULL:
            assert kinds[i] == (LayerKind.ATTENTION, False, 4), i
        else:
            assert kinds[i] == (LayerKind.RECURRENT, False, 0), i  # no KV cache though head_count_kv is a scalar
    assert kinds[MTP] == (LayerKind.ATTENTION, True, 4)  # the MTP block: a draft layer, not a recurrent one
    assert sum(1 for v in kinds.values() if v[0] is LayerKind.RECURRENT) == 48
    r = step.recurrence
    assert r is not None
    assert (r.heads, r.key, r.value, r.groups, r.inner, r.conv_kernel, r.channels) == (48, 128, 128, 16, 6144, 4, 10240)
    assert r.state == 786_432 and r.log == 8288 and r.ring_rows == 3


def test_issue_right_values(q35: GGUFHeader) -> None:
    step = decode_step(q35, Deployment(ctx=1, kv_bytes=2.0, state_bytes=4.0))
    # 16 full-attention layers: 16 × 4 × (256 + 256) × 2 = 65,536 bytes a position (not 64 layers' worth).
    assert step.held_bytes(HeldClass.KV_CACHE) == 16 * 4 * (256 + 256) * 2 == 65_536
    # Each recurrent layer's dense state: 48 × 128 × 128 = 786,432 elements, 3 MiB at 4 bytes; 48 layers 144 MiB.
    assert 48 * 128 * 128 == 786_432 and 786_432 * 4 == 3 * 2**20
    assert step.held_bytes(HeldClass.RECURRENT_STATE) == 48 * 3 * 2**20 == 144 * 2**20
    # The conv rings: 48 × 3 × (6144 + 2 × 16 × 128) × 4 bytes ≈ 5.62 MiB.
    assert step.held_bytes(HeldClass.CONV_RING) == 48 * 3 * (6144 + 2 * 16 * 128) * 4 == 5_898_240
    assert 5_898_240 / 2**20 == 5.625
    # At 4096 positions the cache is 4096 times the per-position bytes.
    step4k = decode_step(q35, Deployment(ctx=4096))
    assert step4k.held_bytes(HeldClass.KV_CACHE) == 65_536 * 4096


def test_stages(q35: GGUFHeader) -> None:
    step = decode_step(q35, Deployment(ctx=1))
    att = [s for s in step.stages if s.kind is StageKind.ATTENTION]
    rec = [s for s in step.stages if s.kind is StageKind.RECURRENCE]
    assert [s.layer for s in att] == FULL  # the MTP block's attention is left out when the serving does not draft
    assert len(rec) == 48
    for s in att:
        assert s.state_write == 4 * 512 * 2 == 4096
        assert s.ops == 2 * 24 * (256 + 256) == 24_576
        assert s.split is not None and (s.split.q, s.split.kv, s.split.key, s.split.value) == (24, 4, 256, 256)
    for s in rec:
        assert s.state_read == 786_432 * 4 + 3 * 10_240 * 4
        assert s.state_write == 786_432 * 4 + 10_240 * 4
        assert s.weight_bytes == REC_STAGE
        bases = {t.split(".", 2)[2] for t in s.tensors}
        assert bases == {"ssm_a", "ssm_dt.bias", "ssm_conv1d.weight", "ssm_norm.weight"}
    assert all(s.layer != MTP for s in step.stages)
    assert step.held_bytes(HeldClass.WEIGHTS) == W_MAIN
    assert step.held_bytes(HeldClass.EMBEDDING_TABLE) == TABLE


def test_mtp_block_only_when_drafting(q35: GGUFHeader) -> None:
    plain = decode_step(q35, Deployment(ctx=1))
    spec = decode_step(q35, Deployment(ctx=1, speculative=True))
    # Drafting brings in the MTP block's weights and its own attention cache (4 × 512 × 2 bytes a position).
    assert spec.held_bytes(HeldClass.WEIGHTS) - plain.held_bytes(HeldClass.WEIGHTS) == MTP_LAYER
    assert spec.held_bytes(HeldClass.KV_CACHE) == 65_536 + 4096
    assert spec.held_bytes(HeldClass.RECURRENT_STATE) == plain.held_bytes(HeldClass.RECURRENT_STATE)
    mtp = [s for s in spec.stages if s.layer == MTP]
    assert [s.kind for s in mtp].count(StageKind.ATTENTION) == 1
    assert not any(s.kind is StageKind.RECURRENCE for s in mtp)
    assert sum(s.weight_bytes for s in mtp) == MTP_LAYER


# ---------------------------------------------------------------------------------------------------------------------
# The pass shape, every branch, by hand.


def test_shape_without_drafts_spelled_out(q35: GGUFHeader) -> None:
    s = pass_shape(q35, serving())
    check_shape(s, expected())
    # Exact integers: the cache at position 2048 of 4096, the dense states read, rewritten, written.
    assert s.read_bytes == 16 * 4096 * 2048 + 48 * (3_145_728 + 122_880) == 291_110_912
    assert s.write_bytes == 16 * 4096 + 48 * (40_960 + 3_145_728) == 153_026_560
    assert s.rewrite_bytes == 48 * 2 * 3_145_728 == 301_989_888
    assert s.held_per_sequence == 16 * 4096 * 4096 + 48 * (122_880 + 40_960 + 3_145_728) == 427_294_720
    assert s.weight_bytes == W_MAIN
    assert s.held_shared == W_MAIN + TABLE
    assert s.embed_bytes == 2880


@pytest.mark.parametrize(
    "flush",
    [
        StateFlush(),
        StateFlush(StateFlushMode.EVERY, 8),
        StateFlush(StateFlushMode.TRAILING, 16),
        StateFlush(StateFlushMode.EVERY, 1),
        StateFlush(StateFlushMode.TRAILING, 2),
    ],
    ids=str,
)
@pytest.mark.parametrize(
    ("acceptance", "head_rows"),
    [((), None), ((0.85,), None), ((0.85, 0.75), 32768), ((0.85, 0.75, 0.65), 32768), ((0.85, 0.75, 0.65), 10**6)],
)
def test_shape_every_branch(
    q35: GGUFHeader, flush: StateFlush, acceptance: tuple[float, ...], head_rows: int | None
) -> None:
    k = len(acceptance)
    d = drafted(*acceptance, head_rows=head_rows) if k else None
    s = pass_shape(q35, serving(flush=flush, draft=d))
    share = min(head_rows / V, 1.0) if head_rows is not None else 1.0
    check_shape(s, expected(k, acceptance, share, flush))


def test_lazy_numbers_spelled_out(q35: GGUFHeader) -> None:
    # every:8, 2 drafts at 0.85 and 0.75: 2.4875 emitted, the log starts at (8 − 2.4875) / 2 = 2.75625 tokens.
    s = pass_shape(q35, serving(flush=StateFlush(StateFlushMode.EVERY, 8), draft=drafted(0.85, 0.75)))
    assert s.emitted_per_sequence == 2.4875
    log = 8288 * 4
    dense = 3_145_728
    assert s.read_bytes == approx(16 * 4096 * 2048 + 2 * 4096 * 2048 + 48 * (dense + 122_880 + 2.75625 * log))
    # The state is rewritten on 2.4875 / 8 of the passes and a 2.4875 / 8 share of it written each pass.
    assert s.rewrite_bytes == approx(48 * (0.3109375 + 0.3109375) * dense)
    # It holds the state once, a window of 8 logged tokens plus the pass's 3 rows, the ring and 3 new ring rows.
    assert s.held_per_sequence == approx(
        16 * 4096 * 4096 + 4096 * 4096 + 48 * (122_880 + 3 * 40_960 + dense + (8 + 3) * log)
    )
    # trailing:16 at 2.4875 emitted: the log holds two windows, a pass starts 16 + 6.75625 tokens into it.
    t = pass_shape(q35, serving(flush=StateFlush(StateFlushMode.TRAILING, 16), draft=drafted(0.85, 0.75)))
    assert t.read_bytes == approx(16 * 4096 * 2048 + 2 * 4096 * 2048 + 48 * (dense + 122_880 + 22.75625 * log))
    assert t.rewrite_bytes == approx(48 * 2 * (2.4875 / 16) * dense)
    assert t.held_per_sequence == approx(
        16 * 4096 * 4096 + 4096 * 4096 + 48 * (122_880 + 3 * 40_960 + dense + (32 + 3) * log)
    )


def test_eager_with_drafts_writes_every_candidate_prefix(q35: GGUFHeader) -> None:
    # every-pass with 3 drafts: 4 rows, so 4 dense states written (and held) a layer, the old one read once.
    s = pass_shape(q35, serving(draft=drafted(0.85, 0.75, 0.65)))
    dense = 3_145_728
    assert s.rows_per_sequence == 4
    assert s.rewrite_bytes == 48 * (dense + 4 * dense)
    assert s.write_bytes == 16 * 4096 * 4 + 3 * 4096 + 48 * (4 * 40_960 + 4 * dense)
    assert s.held_per_sequence == 17 * 4096 * 4096 + 48 * (122_880 + 4 * 40_960 + 4 * dense)


def test_draft_rows_and_head_share(q35: GGUFHeader) -> None:
    base = pass_shape(q35, serving(draft=drafted(0.85, 0.75)))
    part = pass_shape(q35, serving(draft=drafted(0.85, 0.75, head_rows=32768)))
    share = 32768 / 248320
    # Verification reads the whole head for the 3 rows; each of the 2 drafting steps reads 32,768 of 248,320 rows.
    assert base.weight_bytes - part.weight_bytes == approx(OUTPUT * 2 * (1 - share))
    assert base.array_macs - part.array_macs == approx(2 * E * V * 2 * (1 - share))
    assert part.array_macs - pass_shape(q35, serving()).array_macs == approx(
        N_REC * REC_ARRAY * 2 + N_ATT * ATT_ARRAY * 2 + 2 * MTP_ARRAY + OUT_ARRAY * (2 + 2 * share)
    )
    # Rows drafted: the MTP block multiplies one row a drafting step, the main model 1 + 2 rows.
    assert part.rows_per_sequence == 3
    # Every verified row and every drafting step's input token reads an embedding row.
    assert part.embed_bytes == 2880 * (3 + 2)
    # head_rows past the vocabulary is the whole head.
    whole = pass_shape(q35, serving(draft=drafted(0.85, 0.75, head_rows=10**9)))
    assert whole.weight_bytes == base.weight_bytes and whole.array_macs == base.array_macs


def test_held_and_weights_with_and_without_drafts(q35: GGUFHeader) -> None:
    plain = pass_shape(q35, serving(kv_page=16))
    mtp = pass_shape(q35, serving(kv_page=16, draft=drafted(0.85)))
    # Paged at 16: 2048 + 8 positions held. With one draft the MTP block's cache joins, and each recurrent layer
    # holds two candidate states and two new ring rows.
    positions = 2048 + 8
    assert plain.held_per_sequence == 16 * 4096 * positions + 48 * (122_880 + 40_960 + 3_145_728)
    assert mtp.held_per_sequence == 17 * 4096 * positions + 48 * (122_880 + 2 * 40_960 + 2 * 3_145_728)
    assert mtp.held_shared - plain.held_shared == MTP_LAYER
    # Weights a pass streams: the MTP block once per drafting step, the head once plus once per drafting step.
    assert plain.weight_bytes == W_MAIN
    assert mtp.weight_bytes == W_MAIN + MTP_LAYER + OUTPUT


def test_emitted_per_pass_by_hand() -> None:
    assert emitted_per_pass([]) == 1.0
    assert emitted_per_pass([0.85]) == 1.85
    assert emitted_per_pass([0.85, 0.75]) == approx(1 + 0.85 + 0.85 * 0.75)  # 2.4875
    assert emitted_per_pass([0.85, 0.75, 0.65]) == approx(1 + 0.85 + 0.6375 + 0.6375 * 0.65)  # 2.901875


# ---------------------------------------------------------------------------------------------------------------------
# Refusals.


def _without(tmp_path: Path, drop: set[str]) -> GGUFHeader:
    meta = [m for m in qwen35_meta() if m[0] not in drop]
    return read_header(write_header_only(tmp_path / "x.gguf", "qwen35", meta, qwen35_tensors()), cache=False)


def test_missing_ssm_metadata_names_the_keys(tmp_path: Path) -> None:
    keys = {"qwen35.ssm.time_step_rank", "qwen35.ssm.state_size", "qwen35.ssm.inner_size", "qwen35.ssm.group_count"}
    with pytest.raises(Step) as e:
        pass_shape(_without(tmp_path, keys), serving())
    inner = e.value.refusal
    assert isinstance(inner, MissingMetadata)
    assert set(inner.keys) == keys
    assert e.value.to_json()["step"]["refusal"] == "MissingMetadata"
    with pytest.raises(Step) as one:
        pass_shape(_without(tmp_path, {"qwen35.ssm.state_size"}), serving())
    assert isinstance(one.value.refusal, MissingMetadata)
    assert one.value.refusal.keys == ("qwen35.ssm.state_size",)


def test_qwen3next_parses_and_is_routed(qnext: GGUFHeader) -> None:
    assert qnext.architecture == "qwen3next"
    assert qnext.meta_int("expert_count") == 512 and qnext.meta_int("expert_used_count") == 10
    assert qnext.tensor("blk.0.ffn_gate_exps.weight").dims == (2048, 512, 512)  # type: ignore[union-attr]
    assert qnext.tensor("blk.0.ffn_down_shexp.weight").dims == (512, 2048)  # type: ignore[union-attr]
    # The decode step reads the experts: one stage per stack, each expert's slice whole rows (gate and up 2048 × 512
    # at Q4_K, 144 B / 256; down 512 × 2048 at Q6_K in layer 0, 210 B / 256).
    step = decode_step(qnext, Deployment())
    layer0 = {s.tensors[0]: s for s in step.stages if s.kind is StageKind.EXPERTS and s.layer == 0}
    gate, down = layer0["blk.0.ffn_gate_exps.weight"], layer0["blk.0.ffn_down_exps.weight"]
    assert (gate.experts, gate.used, gate.expert_bytes) == (512, 10, 2048 * 512 * 144 // 256)
    assert down.expert_bytes == 512 * 2048 * 210 // 256 and down.weight_bytes == 512 * down.expert_bytes
    assert sum(1 for s in step.stages if s.kind is StageKind.EXPERTS) == 48 * 3
    # Without a routing record the pricer still refuses it by name; how many sequences fit needs none (every expert
    # is held whatever routes), so max_batch answers, as it does under any record.
    c = card()
    for price in (price_serving, best_serving):
        with pytest.raises(Routed) as e:
            price(qnext, c, serving())
        assert e.value.fields() == {"expert_count": 512}
    uniform = load_routing(ROOT, "uniform")
    assert max_batch(qnext, c, serving()) == max_batch(qnext, c, attrs.evolve(serving(), routing=uniform)) > 0


def test_bad_draft_when_the_method_has_too_few_figures(q35: GGUFHeader) -> None:
    method = load_draft_method(ROOT, "qwen35-mtp")
    assert len(method.acceptance) == 3
    d = Draft(4, method.first(4), None, "qwen35-mtp")
    with pytest.raises(BadDraft):
        pass_shape(q35, serving(draft=d))


def test_no_host_link(q35: GGUFHeader) -> None:
    hostless = card(memory_capacity=141e9)
    with pytest.raises(NoHostLink):
        price_serving(q35, hostless, serving(host_memory=True))
    with pytest.raises(NoHostLink):
        best_serving(q35, hostless, serving(host_memory=True, draft=drafted(0.85)))
    assert price_serving(q35, hostless, serving()).host_sequences == 0


def test_not_resident_when_neither_memory_holds_the_batch(q35: GGUFHeader) -> None:
    shared = W_MAIN + TABLE
    per = 427_294_720  # held a sequence at 4096 positions, every-pass, no drafts (above)
    c = card(memory_capacity=shared + 2 * per + per / 2, host=True, host_capacity=3 * per + per / 2)
    # Batch 5: 2 on the card, 3 on the host. Batch 6: the card holds 2, the host must hold 4.
    ok = price_serving(q35, c, serving(batch=5, host_memory=True))
    assert (ok.host_sequences, ok.held_bytes, ok.host_held_bytes) == (3, shared + 2 * per, 3 * per)
    with pytest.raises(NotResident) as e:
        price_serving(q35, c, serving(batch=6, host_memory=True))
    assert (e.value.memory, e.value.needed, e.value.capacity) == ("host", 4 * per, 3 * per + per / 2)
    # Without host memory, batch 3 does not fit the card.
    with pytest.raises(NotResident) as e:
        price_serving(q35, c, serving(batch=3))
    assert (e.value.memory, e.value.needed) == ("card", shared + 3 * per)
    assert max_batch(q35, c, serving(host_memory=True)) == 5
    assert max_batch(q35, c, serving()) == 2


# ---------------------------------------------------------------------------------------------------------------------
# The host split against an exhaustive scan of every split, on this checkpoint's shape.


@pytest.mark.parametrize("host_read", [8e9, 64e9, 1e12])
@pytest.mark.parametrize("flush", [StateFlush(), StateFlush(StateFlushMode.TRAILING, 16)], ids=str)
def test_cost_split_matches_every_split(q35: GGUFHeader, host_read: float, flush: StateFlush) -> None:
    shape = pass_shape(q35, serving(flush=flush, draft=drafted(0.85, 0.75)))
    per, shared = shape.held_per_sequence, shape.held_shared
    for card_room in range(0, 5):
        for host_room in range(0, 5):
            c = card(
                memory_capacity=shared + card_room * per + per / 2,
                memory_bandwidth=4.8e12,
                streams_read=0.9,
                streams_rewrite=0.8,
                streams_append=0.85,
                host=True,
                host_capacity=host_room * per + per / 2,
                host_read=host_read,
                host_write=host_read / 2,
                host_stream=0.8,
            )
            assert (shape.card_room(c), shape.host_room(c)) == (card_room, host_room)
            for batch in range(1, card_room + host_room + 2):
                splits = [
                    shape.cost(c, batch, batch - held)
                    for held in range(max(batch - host_room, 0), min(batch, card_room) + 1)
                ]
                if not splits:
                    with pytest.raises(NotResident):
                        shape.cost_split(c, batch, True)
                    continue
                got = shape.cost_split(c, batch, True)
                assert got.pass_s == min(x.pass_s for x in splits), (card_room, host_room, batch)


def test_split_by_hand(q35: GGUFHeader) -> None:
    # Batch 4 on a card streaming 1e12 B/s. The pass reads the weights and 4 embedding rows (W) and each sequence on
    # the card moves S bytes: memory (W + h·S) / 1e12 s with h held on the card. The host link is set so each host
    # sequence takes (W/2 + S) / 1e12 s: at h = 2 both are (W + 2S) / 1e12 s; h = 1 leaves the host slower, h = 3 the
    # memory. The arithmetic is far below both.
    w = W_MAIN + 4 * 2880
    read, write = 291_110_912, 153_026_560
    s = read + write
    per_host = (w / 2 + s) / 1e12
    shape = pass_shape(q35, serving())
    c = card(
        memory_capacity=W_MAIN + TABLE + 4 * 427_294_720,
        memory_bandwidth=1e12,
        host=True,
        host_capacity=4 * 427_294_720,
        host_read=read / per_host,
        host_write=1e18,
    )
    got = shape.cost_split(c, 4, True)
    assert got.host_sequences == 2
    assert got.memory_s == approx((w + 2 * s) / 1e12)
    assert got.host_s == approx(2 * per_host)
    assert got.pass_s == approx((w + 2 * s) / 1e12) and got.binds.value in ("memory", "host")
    for held in (0, 1, 3, 4):
        assert shape.cost(c, 4, 4 - held).pass_s > got.pass_s


# ---------------------------------------------------------------------------------------------------------------------
# Provenance: a drafted price names the acceptance fact when it is the weakest.


def test_weakest_names_the_acceptance_fact(q35: GGUFHeader) -> None:
    h200 = load_card(ROOT, "h200_sxm_141gb")
    method = load_draft_method(ROOT, "qwen35-mtp")
    assert [f.provenance for f in method.acceptance] == [P.ESTIMATED, P.ASSUMED, P.ASSUMED]
    card_paths = [
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
    facts = h200.facts()
    # The premise: without its host link, the H200's weakest fact is estimated.
    assert max(facts[p].provenance for p in card_paths) is P.ESTIMATED
    two = price_serving(q35, h200, serving(batch=4, draft=Draft(2, method.first(2), 32768, "qwen35-mtp")))
    assert two.provenance is P.ASSUMED
    assert two.weakest == ("draft.acceptance.2",)
    three = price_serving(q35, h200, serving(batch=4, draft=Draft(3, method.first(3), None, "qwen35-mtp")))
    assert three.weakest == ("draft.acceptance.2", "draft.acceptance.3")
    # A tie: one draft at estimated, as weak as the H200's estimated facts. Every path of that provenance is named, in
    # the order the price rests on them (the card's, then the draft's).
    one = price_serving(q35, h200, serving(batch=4, draft=Draft(1, method.first(1), None, "qwen35-mtp")))
    assert one.provenance is P.ESTIMATED
    assert one.weakest == (*(p for p in card_paths if facts[p].provenance is P.ESTIMATED), "draft.acceptance.1")
    # A published acceptance is never the weakest here.
    ds = load_draft_method(ROOT, "deepseek-v3-mtp")
    pub = price_serving(q35, h200, serving(batch=4, draft=Draft(1, ds.first(1), None, "deepseek-v3-mtp")))
    assert "draft.acceptance.1" not in pub.weakest and pub.provenance is P.ESTIMATED


def test_weakest_ties_on_a_synthetic_card(q35: GGUFHeader) -> None:
    c = card(provenance={"scale": P.ESTIMATED}, host=True, memory_capacity=1e12)
    d = drafted(0.85, 0.75, prov=(P.ESTIMATED, P.PUBLISHED))
    r = price_serving(q35, c, serving(draft=d))
    assert (r.provenance, r.weakest) == (P.ESTIMATED, ("scale", "draft.acceptance.1"))
    assert [p for p, _ in r.rests_on][-2:] == ["draft.acceptance.1", "draft.acceptance.2"]
    # Host facts join only when a sequence rides the host.
    assert not any(p.startswith("host.") for p, _ in r.rests_on)


def test_drafting_facts_files() -> None:
    ds = load_draft_method(ROOT, "deepseek-v3-mtp")
    assert [(f.value, f.provenance) for f in ds.acceptance] == [(0.85, P.PUBLISHED)]
    assert ds.acceptance[0].source == "deepseek-v3-technical-report" and "5.4.3" in (ds.acceptance[0].locator or "")
    q = load_draft_method(ROOT, "qwen35-mtp")
    assert [(f.value, f.provenance) for f in q.acceptance] == [
        (0.85, P.ESTIMATED),
        (0.75, P.ASSUMED),
        (0.65, P.ASSUMED),
    ]
    assert all(f.note for f in q.acceptance)  # each says its basis
    for name in ("deepseek-v3-mtp", "qwen35-mtp"):
        first = (REPO / "facts" / "drafts" / f"{name}.toml").read_text(encoding="utf-8").splitlines()[0]
        assert first == "#:schema ../../schema/draft.schema.json"


# ---------------------------------------------------------------------------------------------------------------------
# The registry servings: each prices, or is refused by name.

SERVINGS = ["qwen35-27b-h200-mtp", "qwen35-27b-ws1-trailing", "qwen35-27b-h100-every8", "qwen3next-80b-a3b-h200"]


@pytest.mark.parametrize("name", SERVINGS)
def test_registry_servings_resolve(name: str) -> None:
    resolved = resolve(ROOT, load_spec(ROOT, name))
    if name.startswith("qwen35"):
        assert resolved.serving.draft is not None and resolved.method is not None
        assert resolved.serving.draft.acceptance == resolved.method.first(resolved.serving.draft.tokens)


def test_registry_serving_h200_mtp_by_hand() -> None:
    r = resolve(ROOT, load_spec(ROOT, "qwen35-27b-h200-mtp"))
    s = r.serving
    assert (s.batch, s.draft.tokens, s.draft.head_rows, str(s.flush)) == (16, 2, 32768, "every-pass")  # type: ignore[union-attr]
    shape = pass_shape(r.header, s)
    check_shape(shape, expected(2, (0.85, 0.75), 32768 / V, StateFlush(), 16384.0, 32768.0))


def test_registry_serving_ws1_multi_class_mix() -> None:
    r = resolve(ROOT, load_spec(ROOT, "qwen35-27b-ws1-trailing"))
    s = r.serving
    assert s.contexts.classes == (ContextClass(0.75, 2048.0, 8192), ContextClass(0.25, 65536.0, 131072))
    # Full layers are linear in position: the mean position 0.75 × 2048 + 0.25 × 65536 = 17,920, the mean limit
    # 0.75 × 8192 + 0.25 × 131072 = 38,912 (contiguous).
    want = expected(3, (0.85, 0.75, 0.65), 1.0, StateFlush(StateFlushMode.TRAILING, 16), 17920.0, 38912.0)
    check_shape(pass_shape(r.header, s), want)
    cost = price_serving(r.header, r.card, s)
    assert 0 < cost.host_sequences < 64
    assert cost.host_held_bytes == approx(cost.host_sequences * want["held_per_sequence"])
    assert cost.held_bytes == approx(want["held_shared"] + (64 - cost.host_sequences) * want["held_per_sequence"])


# ---------------------------------------------------------------------------------------------------------------------
# The command line, end to end.


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["--root", str(REPO), *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


BASE = ("--checkpoint", QWEN35, "--card", "h200_sxm_141gb")


def test_cli_price_without_drafts() -> None:
    code, out = run("price", *BASE)
    assert code == 0
    assert (out["batch"], out["rows_per_sequence"], out["emitted_per_sequence"]) == (1, 1, 1.0)
    assert out["weight_bytes"] == W_MAIN + 2880  # the weights once and one embedding row
    assert out["sequence_bytes"] == 291_110_912 + 153_026_560
    assert out["rewrite_bytes"] == 301_989_888
    assert out["held_bytes"] == W_MAIN + TABLE + 427_294_720
    assert out["capacity_bytes"] == 141e9
    assert out["binds"] == "memory" and out["host_sequences"] == 0
    assert not any(p.startswith("draft.") for p in out["rests_on"])


@pytest.mark.parametrize(
    ("flush", "rewrite"),
    [
        ("every-pass", 48 * 2 * 3_145_728),
        ("every:8", 48 * (1 / 8 + 1 / 8) * 3_145_728),  # one token a pass: rewritten on an 8th of the passes
        ("trailing:16", 48 * (1 / 16 + 1 / 16) * 3_145_728),
    ],
)
def test_cli_each_flush(flush: str, rewrite: float) -> None:
    code, out = run("price", *BASE, "--flush", flush)
    assert code == 0
    assert out["rewrite_bytes"] == approx(rewrite)


def test_cli_price_with_drafts() -> None:
    code, out = run("price", *BASE, "--draft", "qwen35-mtp", "--draft-tokens", "3", "--head-rows", "32768")
    assert code == 0
    assert (out["rows_per_sequence"], out["emitted_per_sequence"]) == (4, approx(2.901875))
    want = expected(3, (0.85, 0.75, 0.65), 32768 / V)
    assert out["weight_bytes"] == approx(want["weight_bytes"] + want["embed_bytes"])
    assert out["provenance"] == "assumed"
    assert out["weakest"] == ["draft.acceptance.2", "draft.acceptance.3"]
    assert out["rests_on"]["draft.acceptance.1"] == "estimated"
    assert out["tokens_per_s"] == approx(2.901875 / out["pass_s"])


def test_cli_registry_servings_price_best_max_batch() -> None:
    # qwen35-27b-h100-every8's best batch puts sequences in host memory, resting on the H100's assumed host capacity:
    # its lock (floor estimated) refuses it, by name, unless asked not to price under the lock.
    code, out = run("best", "qwen35-27b-h100-every8")
    assert (code, out["refusal"], out["lock"]) == (1, "LockFloor", "qwen35-27b-h100-every8")
    assert {"path": "host.capacity", "provenance": "assumed", "floor": "estimated"} in out["offending"]
    for name in SERVINGS[:3]:
        for command in ("price", "best"):
            code, out = run(command, name, "--no-lock")
            assert code == 0, (command, name, out)
            assert out["tokens_per_s"] > 0 and out["binds"] in ("memory", "host", "array", "vector", "scale")
            assert any(p.startswith("draft.acceptance.") for p in out["rests_on"])
        code, out = run("max-batch", name)
        assert code == 0 and out["max_batch"] >= 1
    code, out = run("price", "qwen35-27b-h200-mtp")
    assert (out["batch"], out["rows_per_sequence"], out["weakest"]) == (16, 3, ["draft.acceptance.2"])
    code, out = run("price", "qwen35-27b-ws1-trailing")
    assert 0 < out["host_sequences"] < 64
    assert {"host.read", "host.write", "host.stream", "host.capacity"} <= set(out["rests_on"])


def test_cli_max_batch_by_hand() -> None:
    # Every-pass, no drafts, 4096-position contiguous caches on 141 GB: ⌊(141e9 − shared) / per sequence⌋.
    code, out = run("max-batch", *BASE)
    assert code == 0
    assert out["max_batch"] == math.floor((141e9 - (W_MAIN + TABLE)) / 427_294_720)
    code, drafted_out = run("max-batch", *BASE, "--draft", "qwen35-mtp", "--draft-tokens", "2")
    per = 17 * 4096 * 4096 + 48 * (122_880 + 3 * 40_960 + 3 * 3_145_728)
    assert drafted_out["max_batch"] == math.floor((141e9 - (W_MAIN + MTP_LAYER + TABLE)) / per)


def test_cli_best_with_host_memory() -> None:
    draft = ("--draft", "qwen35-mtp", "--draft-tokens", "2")
    code, out = run("best", *BASE, "--host-memory", *draft, "--flush", "every:8")
    assert code == 0
    assert out["batch"] >= 1 and out["rows_per_sequence"] == 3


def test_cli_price_with_host_memory() -> None:
    card_room = math.floor((141e9 - (W_MAIN + TABLE)) / 427_294_720)
    # At batch 1 the H200's memory is faster than its host link: the sequence stays on the card, no host fact used.
    code, out = run("price", *BASE, "--host-memory")
    assert (code, out["host_sequences"]) == (0, 0)
    assert not any(p.startswith("host.") for p in out["rests_on"])
    # Past the card's room the rest ride the host, and the price rests on the host link (host.capacity: assumed).
    batch = card_room + 10
    code, out = run("price", *BASE, "--host-memory", "--batch", str(batch))
    assert code == 0
    assert out["host_sequences"] >= 10
    assert out["held_bytes"] == W_MAIN + TABLE + (batch - out["host_sequences"]) * 427_294_720
    assert out["host_held_bytes"] == out["host_sequences"] * 427_294_720
    assert {"host.capacity", "host.read", "host.write", "host.stream"} <= set(out["rests_on"])
    assert (out["provenance"], out["weakest"]) == ("assumed", ["host.capacity"])
    # Without host memory that batch does not fit.
    code, out = run("price", *BASE, "--batch", str(batch))
    assert (code, out["refusal"]) == (1, "NotResident")


def test_cli_refusals(tmp_path: Path) -> None:
    for command in ("price", "best", "max-batch"):
        code, out = run(command, "qwen3next-80b-a3b-h200", "--checkpoint", "qwen3next-80b-a3b-like", "--routing",
                        "qwen3-30b-a3b-measured")
        # The measured record applies to qwen3-30b-a3b-q4_k_m only: refused by its scope before E and k compare.
        assert (code, out["refusal"], out["record"]) == (1, "OutOfScope", "qwen3-30b-a3b-measured")
        code, out = run(command, "--checkpoint", "qwen3next-80b-a3b-like", "--card", "h200_sxm_141gb")
        if command == "max-batch":  # how many fit does not depend on routing: no record needed
            assert code == 0 and out["max_batch"] > 0
        else:
            assert (code, out["refusal"], out["expert_count"]) == (1, "Routed", 512)
    code, out = run("price", *BASE, "--draft", "qwen35-mtp", "--draft-tokens", "4")
    assert (code, out["refusal"]) == (1, "BadDraft")
    code, out = run("price", *BASE, "--batch", "100000")
    assert (code, out["refusal"], out["memory"]) == (1, "NotResident", "card")
    # A card without a host link: the H200's facts less its host.* tables.
    text = (REPO / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(encoding="utf-8")
    hostless = tmp_path / "h200_hostless.toml"
    hostless.write_text(text[: text.index("[host.capacity]")], encoding="utf-8")
    for command in ("price", "best", "max-batch"):
        code, out = run(command, "--checkpoint", QWEN35, "--card", str(hostless), "--host-memory")
        assert (code, out["refusal"]) == (1, "NoHostLink"), command
    code, out = run("price", "--checkpoint", QWEN35, "--card", str(hostless))
    assert code == 0
    # Missing ssm.* metadata, given as a .gguf path.
    meta = [m for m in qwen35_meta() if m[0] != "qwen35.ssm.group_count"]
    path = write_header_only(tmp_path / "no-groups.gguf", "qwen35", meta, qwen35_tensors())
    code, out = run("price", "--checkpoint", str(path), "--card", "h200_sxm_141gb")
    assert (code, out["refusal"]) == (1, "Step")
    assert out["step"] == {
        "refusal": "MissingMetadata",
        "keys": ["qwen35.ssm.group_count"],
        "why": out["step"]["why"],
    }


def _seed_best_and_max(shape: object, c: object, host_memory: bool) -> tuple[int, float, int]:
    """The seed's own scans (``PassShape::best``, ``max_batch``), written out here: every batch from 1 up to what the
    memories hold, a batch replacing the best only when faster by more than a relative 1e-12, stopping at the first
    batch refused for capacity."""
    from passprice.serving import OnChipOverflow

    most = shape.card_room(c) + (shape.host_room(c) if host_memory else 0)  # type: ignore[attr-defined]
    best = None
    n = 0
    for batch in range(1, most + 2):
        try:
            cost = shape.cost_split(c, batch, host_memory)  # type: ignore[attr-defined]
        except (NotResident, OnChipOverflow):
            break
        n = batch
        if batch <= max(most, 1) and (best is None or cost.tokens_per_s > best.tokens_per_s * (1 + 1e-12)):
            best = cost
    assert best is not None
    return best.batch, best.pass_s, n


@pytest.mark.parametrize("name", SERVINGS[:3])
def test_best_and_max_batch_are_the_seeds_scans(name: str) -> None:
    r = resolve(ROOT, load_spec(ROOT, name))
    shape = pass_shape(r.header, r.serving)
    batch, pass_s, most = _seed_best_and_max(shape, r.card, r.serving.host_memory)
    got = best_serving(r.header, r.card, r.serving)
    assert (got.batch, got.pass_s) == (batch, pass_s)
    assert max_batch(r.header, r.card, r.serving) == most
