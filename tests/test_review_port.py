"""Independent review of the port of ``serving.rs`` and of DESIGN.md's decode-step rules.

Every test here demonstrated one discrepancy found in review: each failed against the port as reviewed, and passes
since the fix (commit "Review fixes and a second round of bad-input hardening"). They stay as regression tests;
each quotes the seed line or the DESIGN rule it checks, and its comment says what the port did before.
"""

from __future__ import annotations

import attrs
import pytest

from passprice.decode import Deployment, StageKind, decode_step
from passprice.errors import InputError
from passprice.serving import (
    U32_MAX,
    ContextMix,
    MissingTensor,
    Serving,
    ServingRefusal,
    max_batch,
    pass_shape,
)
from synth import card, header

# --------------------------------------------------------------------------------------------------------------------
# Helpers: a tiny dense llama and a tiny hybrid, every byte count computable by hand.


def _llama_tensors(layers: int) -> list[tuple[str, tuple[int, ...], str]]:
    t: list[tuple[str, tuple[int, ...], str]] = [
        ("token_embd.weight", (64, 100), "Q8_0"),
        ("output_norm.weight", (64,), "F32"),
        ("output.weight", (64, 100), "Q8_0"),
    ]
    for i in range(layers):
        t += [
            (f"blk.{i}.attn_norm.weight", (64,), "F32"),
            (f"blk.{i}.attn_q.weight", (64, 64), "Q8_0"),
            (f"blk.{i}.attn_k.weight", (64, 32), "Q8_0"),
            (f"blk.{i}.attn_v.weight", (64, 32), "Q8_0"),
            (f"blk.{i}.attn_output.weight", (64, 64), "Q8_0"),
        ]
    return t


def _llama_meta(**extra: object) -> dict[str, object]:
    meta: dict[str, object] = {
        "block_count": 1,
        "embedding_length": 64,
        "feed_forward_length": 128,
        "attention.head_count": 2,
        "attention.head_count_kv": 1,
        "context_length": 4096,
    }
    meta.update(extra)
    return meta


SERVING = Serving(contexts=ContextMix.uniform(10.0, 100))

# Q8_0: 32 elements in 34 bytes. One block of the tiny llama streams attn_q + attn_k + attn_v + attn_output + attn_norm.
_BLOCK_BYTES = (64 * 64 // 32 * 34) * 2 + (64 * 32 // 32 * 34) * 2 + 64 * 4
_HEAD_AND_NORM = 64 * 100 // 32 * 34 + 64 * 4


# --------------------------------------------------------------------------------------------------------------------
# 1. max_batch's loop bound saturates at u32::MAX.


def test_max_batch_loop_bound_saturates_at_u32_max() -> None:
    # Seed, max_batch: `for batch in 1..=most.saturating_add(1) {` — `most` is a u32, so when the card's room saturates
    # at u32::MAX (`room.max(0.0).floor().min(u32::MAX as f64) as u32`) the scan stops at u32::MAX, and a serving whose
    # every batch fits answers u32::MAX. The port's bound was `most + 1` in Python ints (batching.max_batch:
    # `shape.most(card, host_memory) + 1`; PassShape.max_batch_by_scan: `range(1, most + 2)`), one past the seed's;
    # both now saturate at U32_MAX.
    meta = {
        "block_count": 1,
        "embedding_length": 32,
        "feed_forward_length": 32,
        "attention.head_count": 1,
        "attention.head_count_kv": 1,
        "attention.key_length": 1,
        "attention.value_length": 1,
        "context_length": 4096,
    }
    tensors = [
        ("token_embd.weight", (32, 100), "Q8_0"),
        ("output.weight", (32, 100), "Q8_0"),
        ("blk.0.attn_k.weight", (32, 1), "F32"),
        ("blk.0.attn_v.weight", (32, 1), "F32"),
    ]
    h = header(meta, tensors)
    s = Serving(contexts=ContextMix.uniform(0.0, 1))
    # 4 bytes a sequence (1 KV head × (1 + 1) × 2 bytes × 1 position), 192 on chip: 10^12 bytes of memory hold far more
    # than u32::MAX sequences and the on-chip memory is no limit.
    c = card(memory_capacity=1e12, on_chip_capacity=1e15)
    shape = pass_shape(h, s)
    assert shape.card_room(c) == U32_MAX
    assert max_batch(h, c, s) == U32_MAX  # the port answers U32_MAX + 1 = 4294967296


# --------------------------------------------------------------------------------------------------------------------
# 2. is_draft with block_count absent (or below the blocks the tensor table names): every block becomes a draft layer.


@pytest.mark.parametrize("block_count", [None, 1])
def test_no_block_is_a_draft_layer_without_nextn_predict_layers(block_count: int | None) -> None:
    # DESIGN, The decode step: "The last `nextn_predict_layers` blocks are draft (multi-token-prediction) layers: used
    # only when the serving drafts." With no `nextn_predict_layers`, no block is a draft layer, and port's own
    # decode_step agrees (Layer.draft is False, the blocks' tensors are staged and held). But the serving's is_draft
    # (seed: `layer.is_some_and(|l| l >= blocks.saturating_sub(drafts))` with `blocks` = `block_count.unwrap_or(0)`)
    # calls every block at or past `block_count` a draft layer, so a header without `block_count` (which
    # header_problems accepts) or with fewer than its `blk.N` tensors name has those blocks' weights streamed kf = 0
    # times and their arithmetic dropped, while they are still held: a silent under-price. Either the block is priced
    # (expected here) or the header is refused by name.
    full = pass_shape(header(_llama_meta(block_count=2), _llama_tensors(2)), SERVING)
    meta = _llama_meta(block_count=2)
    if block_count is None:
        del meta["block_count"]
    else:
        meta["block_count"] = block_count
    h = header(meta, _llama_tensors(2))
    try:
        shape = pass_shape(h, SERVING)
    except (ServingRefusal, InputError):
        return  # a named refusal would also resolve this
    assert full.weight_bytes == 2 * _BLOCK_BYTES + _HEAD_AND_NORM
    assert shape.held_shared == full.held_shared  # held: the decode step includes both blocks
    assert shape.weight_bytes == full.weight_bytes  # streamed: the port streams only the blocks below block_count
    assert shape.array_macs == full.array_macs


# --------------------------------------------------------------------------------------------------------------------
# 3. Head widths when embedding_length is a per-layer array (which the port accepts).


def test_head_width_default_reads_a_per_layer_embedding_length() -> None:
    # DESIGN, The decode step: "An attention layer's per-position cache bytes are
    # `kv_heads × (key_length + value_length) × kv_bytes`, with key_length/value_length from
    # `attention.key_length`/`value_length` when present ..., else `embedding_length / head_count`."
    # decode.header_problems accepts `embedding_length` as one value per layer (_PER_LAYER_KEYS), and the on-chip term
    # reads its widest value (serving._widest), but the head-width default reads `meta_int("embedding_length") or 0`,
    # which is 0 for an array: every layer's key and value width, and so its KV cache, come out 0 bytes.
    meta = {"block_count": 2, "embedding_length": (64, 64), "attention.head_count": 2, "attention.head_count_kv": 1}
    tensors = [("token_embd.weight", (64, 100), "Q8_0")] + [
        (f"blk.{i}.attn_k.weight", (64, 32), "Q8_0") for i in range(2)
    ]
    h = header(meta, tensors)
    step = decode_step(h, Deployment(kv_bytes=2.0))
    attention = [st for st in step.stages if st.kind is StageKind.ATTENTION]
    assert len(attention) == 2
    # 1 KV head × (64/2 + 64/2) × 2 bytes = 128 bytes a position, per layer (the port: 0.0).
    assert [st.state_write for st in attention] == [128.0, 128.0]
    shape = pass_shape(h, Serving(contexts=ContextMix.uniform(10.0, 100)))
    assert shape.held_per_sequence == 2 * 128.0 * 100  # contiguous: the mean limit, 100 positions (port: 0.0)


# --------------------------------------------------------------------------------------------------------------------
# 4. attention.key_length / value_length present but 0.


def test_key_length_present_is_used_even_when_zero() -> None:
    # DESIGN: "with key_length/value_length from attention.key_length/value_length when present ..., else
    # embedding_length / head_count"; seed head_widths: `h.meta_u64("attention.key_length").unwrap_or(embd / heads)`.
    # A present value is used as it is — never silently replaced by embd / heads. The port used to write
    # `meta_int(...) or embd // q`, so a present 0 fell back to 32 here. A head 0 elements wide describes no
    # attention, so the header check now refuses it by name instead of pricing it.
    h = header(_llama_meta(**{"attention.key_length": 0}), _llama_tensors(1))
    with pytest.raises(InputError, match=r"attention\.key_length: 0 \(an attention head"):
        decode_step(h, Deployment(kv_bytes=2.0))
    # attn_k 8 wide (1 KV head × 8): the header check refuses an attn_k whose width contradicts key_length.
    tensors = [(n, (64, 8) if n == "blk.0.attn_k.weight" else d, t) for n, d, t in _llama_tensors(1)]
    h = header(_llama_meta(**{"attention.key_length": 8}), tensors)
    step = decode_step(h, Deployment(kv_bytes=2.0))
    (att,) = [st for st in step.stages if st.kind is StageKind.ATTENTION]
    assert att.split is not None and att.split.key == 8
    assert att.state_write == 1 * (8 + 32) * 2.0


# --------------------------------------------------------------------------------------------------------------------
# 5. Metadata lookup resolves the architecture prefix.


def test_metadata_lookup_reads_the_architecture_prefixed_key() -> None:
    # DESIGN, Checkpoints: "Metadata lookup resolves the architecture prefix: asking for `block_count` reads
    # `{general.architecture}.block_count`." GGUFHeader.meta looks the bare key up first and only then the prefixed
    # one, so a stray unprefixed `block_count` (or `context_length`, `expert_count` ...) shadows the architecture's.
    h = header(_llama_meta(block_count=1), _llama_tensors(1))
    metadata = dict(h.metadata)
    metadata["block_count"] = 7  # an unprefixed key beside llama.block_count = 1
    h = attrs.evolve(h, metadata=metadata)
    assert h.meta("block_count") == 1  # the port read 7 before the fix


# --------------------------------------------------------------------------------------------------------------------
# 6. The recurrence's metadata is refused eagerly, in the decode step, not where the seed refuses it.


def _hybrid_tensors(recurrent_layer: int, layers: int) -> list[tuple[str, tuple[int, ...], str]]:
    t = _llama_tensors(layers)
    t = [x for x in t if not x[0].startswith(f"blk.{recurrent_layer}.")]
    t += [
        (f"blk.{recurrent_layer}.attn_norm.weight", (64,), "F32"),
        (f"blk.{recurrent_layer}.ssm_in.weight", (64, 64), "Q8_0"),
        (f"blk.{recurrent_layer}.ssm_a", (2,), "F32"),
        (f"blk.{recurrent_layer}.ssm_conv1d.weight", (4, 64), "F32"),
        (f"blk.{recurrent_layer}.ssm_out.weight", (64, 64), "Q8_0"),
    ]
    return t


def test_missing_ssm_metadata_of_an_unused_draft_layer_is_not_refused() -> None:
    # Seed, PassShape::of, StageKind::Recurrence arm: `let r = rec.as_ref().ok_or_else(|| ServingRefusal::Step(
    # DecodeRefusal::MissingMetadata("ssm.time_step_rank / ssm.state_size / ssm.inner_size / ssm.group_count"...)))?;`
    # — the seed refuses a missing Gated-DeltaNet shape only when it prices a recurrence stage. DESIGN: draft layers
    # are "used only when the serving drafts" and, when it does not, "neither streamed nor held". Here the only
    # `ssm_*` tensors sit in the MTP block (layer 1 of 2, nextn_predict_layers = 1) and the serving does not draft, so
    # no recurrence stage is priced; the port's decode_step computes the recurrence for every layer holding `ssm_*`
    # tensors, draft or not, and refuses the whole serving with Step(MissingMetadata).
    meta = _llama_meta(block_count=2, nextn_predict_layers=1)
    # the MTP block holds its nextn.enorm, as a draft block must (round 18: decode.header_problems); a norm is not
    # among the bytes a pass without drafts reads
    # qwen3next: a recurrence is the architecture's (arch42: llama holds no ssm_* tensor, TensorNotInArchitecture)
    h = header(meta, [*_hybrid_tensors(recurrent_layer=1, layers=2), ("blk.1.nextn.enorm.weight", (64,), "F32")],
               "qwen3next")
    shape = pass_shape(h, SERVING)  # the port raised Step(MissingMetadata) before the fix
    assert shape.weight_bytes == _BLOCK_BYTES + _HEAD_AND_NORM


def test_missing_token_embd_is_refused_before_missing_ssm_metadata() -> None:
    # Seed, PassShape::of: `let vocab = tensors.get("token_embd.weight")...ok_or_else(||
    # ServingRefusal::MissingTensor("token_embd.weight".into()))?` comes before the stage loop, and the missing-ssm
    # refusal (`rec.as_ref().ok_or_else(...)`) only inside it, at the first recurrence stage. (That in-loop check would
    # be dead code if the seed's DecodeStep::of refused a missing shape itself.) So a hybrid header with neither
    # `token_embd.weight` nor its `ssm.*` keys is refused as MissingTensor; the port refuses it as Step, from the
    # decode step.
    tensors = [x for x in _hybrid_tensors(recurrent_layer=0, layers=1) if x[0] != "token_embd.weight"]
    h = header(_llama_meta(), tensors, "qwen3next")  # a recurrence is qwen3next's, not llama's (arch42)
    with pytest.raises(MissingTensor):
        pass_shape(h, SERVING)
