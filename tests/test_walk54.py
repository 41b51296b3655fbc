"""Hand-checked prices of the servings people run (session 38, walk54): one of each kind priced beyond a dense GQA
block, every figure recomputed here from the header's tensor table and the card's facts, not from passprice's
pricing modules.

- bytes a tensor takes: ``elements / block_elements × block_bytes`` from GGML's block structs (ggml-common.h:
  ``block_q4_0`` 2 + 16 = 18 B per 32, ``block_q8_0`` 2 + 32 = 34 per 32, ``block_mxfp4`` 1 + 16 = 17 per 32,
  ``block_q5_0`` 2 + 4 + 16 = 22 per 32, ``block_q4_K`` 2·2 + 12 + 128 = 144 per 256, ``block_q5_K`` 2·2 + 12 + 32 +
  128 = 176 per 256, ``block_q6_K`` 128 + 64 + 16 + 2 = 210 per 256; F32 4 B, F16/BF16 2);
  literal below, never read from ``gguf`` or ``passprice.ggml``;
- weights a pass streams: every tensor but the routed experts and the embedding table, one embedding row a sequence
  (the whole table as the head when the header has no ``output.weight``), and each MoE layer's experts ×
  D(T) = Σ_e 1 − (1 − p_e)^T, the distinct experts T token-rows read (DESIGN.md, Routing);
- KV cache a sequence reads at position P: each attention layer's KV heads × (key + value length) × 2 B (MLA: the
  latent, kv_lora_rank + rope dims, 576 × 2 B), a windowed layer at most window − 1 cached positions (gpt-oss: even
  layers, 127 of a window of 128; gemma3: five of six, 511 of 512), plus one position written a layer, so a windowed
  row attends ``window`` positions, its own included: llama.cpp's mask (src/llama-context.cpp at c392e5094d, line
  179: masked when pos − p0 >= n_swa) and Transformers' (masking_utils ``sliding_window_overlay``: kv_idx > q_idx −
  sliding_window), this file's rule since session 39 (window55; session 38 read min(P, window): window + 1); a
  windowed layer holds at most its window (128, 512); a Gated-DeltaNet layer reads and writes back its
  F32 state (time_step_rank × state_size × inner / time_step_rank) and reads its conv ring ((conv_kernel − 1) ×
  (inner + 2 × groups × state_size) F32) and appends a row (llama.cpp's ``n_embd_s`` / ``n_embd_r`` for qwen3next);
- memory seconds: weights / (memory.bandwidth × streams.read) + batch × (rewritten / (bandwidth × streams.rewrite)
  + the rest / (bandwidth × streams.append)).
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import pytest

from passprice.checkpoints import load_checkpoint
from passprice.gguf_records import GGUFHeader, TensorInfo
from passprice.registry import find_root
from passprice.serving import ServingCost, best_serving, price_serving
from passprice.servings import Resolved, load_spec, override, resolve

ROOT = find_root(Path(__file__).resolve().parent.parent)

#: GGML type id -> (elements a block, bytes a block), from ggml-common.h's block structs (ids: ggml.h's enum).
BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 6: (32, 22), 8: (32, 34), 39: (32, 17), 12: (256, 144),
         13: (256, 176), 14: (256, 210)}  # fmt: skip
H200 = (4.8e12, 0.9333, 0.8333, 0.8646)  # facts/cards/h200_sxm_141gb.toml: bandwidth, read, rewrite, append
H100 = (3.35e12, 0.9493, 0.0, 0.8866)  # facts/cards/h100_sxm5_80gb.toml (no state rewritten here)


def _bytes(t: TensorInfo) -> int:
    elements, (per, size) = math.prod(t.dims), BLOCK[t.type_id]
    assert elements % per == 0, t.name
    return elements // per * size


def _streamed(header: GGUFHeader) -> tuple[int, int, dict[int, int]]:
    """(bytes streamed once a pass but the experts, one embedding row, each MoE layer's whole expert stacks)."""
    names = {t.name for t in header.tensors}
    dense, row, stacks = 0, 0, dict[int, int]()
    for t in header.tensors:
        if "_exps" in t.name:
            layer = int(t.name.split(".")[1])
            stacks[layer] = stacks.get(layer, 0) + _bytes(t)
        elif t.name == "token_embd.weight":
            row = _bytes(t) // t.dims[1]
            dense += _bytes(t) if "output.weight" not in names else 0
        else:
            dense += _bytes(t)
    return dense, row, stacks


def _distinct(tokens: int, experts: int, used: int, hot: float = 1.0, share: float = 1.0) -> float:
    if tokens == 1:
        return float(used)
    if hot == 1.0:
        return experts * (1 - (1 - used / experts) ** tokens)
    p_hot, p_cold = used * share / (hot * experts), used * (1 - share) / ((1 - hot) * experts)
    return hot * experts * (1 - (1 - p_hot) ** tokens) + (1 - hot) * experts * (1 - (1 - p_cold) ** tokens)


def _weights(header: GGUFHeader, batch: int, distinct: float) -> tuple[float, float]:
    dense, row, stacks = _streamed(header)
    experts = header.meta_int("expert_count") or 1
    routed = sum(stack / experts * distinct for stack in stacks.values())
    return dense + batch * row + routed, routed


@pytest.fixture(scope="module")
def resolved() -> dict[str, Resolved]:
    out = {
        name: resolve(ROOT, load_spec(ROOT, name))
        for name in ("gpt-oss-20b-h200", "qwen3-30b-a3b-h200", "gemma3-270m-h100", "qwen3next-80b-a3b-h200")
    }
    # DeepSeek-V2-Lite's MLA on the H200, 2K of 4K contexts, paged, 2-byte cache, uniform routing.
    lite = override(load_spec(ROOT, "qwen3-30b-a3b-h200"), checkpoint="deepseek-v2-lite-q4_0", routing="uniform")
    out["deepseek-v2-lite"] = resolve(ROOT, lite)
    return out


def _price(r: Resolved, batch: int) -> ServingCost:
    return price_serving(r.header, r.card, attrs.evolve(r.serving, batch=batch))


def _memory_s(
    card: tuple[float, float, float, float], weights: float, batch: int, sequence: float, rewrite: float = 0.0
) -> float:
    bandwidth, read, rewritten, append = card
    own = (rewrite / (bandwidth * rewritten) if rewrite else 0.0) + (sequence - rewrite) / (bandwidth * append)
    return weights / (bandwidth * read) + batch * own


def test_gpt_oss_20b_mxfp4_experts_and_window_by_hand(resolved: dict[str, Resolved]) -> None:
    """gpt-oss-20b (MXFP4 experts, 32 of them, 4 a token; 12 windowed layers of 128 and 12 full) at position 4,096:
    24 expert stacks of 424,120,320 B (3 × 2880 × 2880 × 32 MXFP4 = 423,014,400, their F32 biases 1,105,920),
    a 2,880-wide Q8_0 embedding row 3,060 B, 8 KV heads × (64 + 64) × 2 B = 2,048 B a position and layer."""
    r = resolved["gpt-oss-20b-h200"]
    dense, row, stacks = _streamed(r.header)
    assert (dense, row, set(stacks.values()), len(stacks)) == (1_302_341_376, 3_060, {424_120_320}, 24)
    sequence = 12 * 4096 * 2048 + 12 * 127 * 2048 + 24 * 2048
    for batch, distinct in ((1, 4.0), (32, 32 * (1 - (1 - 4 / 32) ** 32))):
        weights, _ = _weights(r.header, batch, distinct)
        cost = _price(r, batch)
        assert cost.sequence_bytes == sequence == 103_833_600  # 103,858,176 − 12 × 2,048 in session 38
        assert cost.weight_bytes == pytest.approx(weights, rel=1e-14)
        assert cost.memory_s == pytest.approx(_memory_s(H200, weights, batch, sequence), rel=1e-14)
    assert _price(r, 1).weight_bytes == 2_574_705_396
    # The best batch is the most that fit: every tensor (12,096,558,336 B) plus each sequence's paged cache, a
    # full layer 4,096 + 16 / 2 positions, a windowed one its 128.
    held = 12 * (4096 + 8) * 2048 + 12 * 128 * 2048
    fits = (141_000_000_000 - 12_096_558_336) // held
    assert fits == 1239
    best = best_serving(r.header, r.card, r.serving)
    assert (best.batch, best.held_bytes) == (1239, 12_096_558_336 + 1239 * held)
    assert best.weight_bytes == pytest.approx(_weights(r.header, 1239, 32 * (1 - (1 - 4 / 32) ** 1239))[0], rel=1e-14)


def test_qwen3_30b_measured_routing_at_its_best_batch_by_hand(resolved: dict[str, Resolved]) -> None:
    """Qwen3-30B-A3B Q4_K_M under its measured record (58 of 128 experts take 90 %) at the best batch, 605: 4 KV
    heads × (128 + 128) × 2 B × 48 layers = 98,304 B a position."""
    r = resolved["qwen3-30b-a3b-h200"]
    best = best_serving(r.header, r.card, r.serving)
    assert best.batch == 605
    weights, _ = _weights(r.header, 605, _distinct(605, 128, 8, 58 / 128, 0.9))
    sequence = 2048 * 98_304 + 98_304
    assert best.sequence_bytes == sequence
    assert best.weight_bytes == pytest.approx(weights, rel=1e-14)
    assert best.memory_s == pytest.approx(_memory_s(H200, weights, 605, sequence), rel=1e-14)
    assert _price(r, 1).weight_bytes == _weights(r.header, 1, 8.0)[0] == 1_919_597_696


def test_deepseek_v2_lite_latent_cache_and_shared_experts_by_hand(resolved: dict[str, Resolved]) -> None:
    """DeepSeek-V2-Lite Q4_0 (MLA, 64 routed experts of 6 a token, 2 shared experts streamed as projections, layer 0
    dense): a position caches (512 + 64) × 2 B a layer, 27 layers, whatever its 16 heads."""
    r = resolved["deepseek-v2-lite"]
    sequence = 27 * 576 * 2 * 2048 + 27 * 576 * 2
    for batch in (1, 64):
        weights, _ = _weights(r.header, batch, _distinct(batch, 64, 6))
        cost = _price(r, batch)
        assert cost.sequence_bytes == sequence
        assert cost.weight_bytes == pytest.approx(weights, rel=1e-14)
        assert cost.memory_s == pytest.approx(_memory_s(H200, weights, batch, sequence), rel=1e-14)
    assert len(_streamed(r.header)[2]) == 26


def test_gemma3_270m_window_over_a_context_mix_by_hand(resolved: dict[str, Resolved]) -> None:
    """Gemma 3 270M (18 layers, 1 KV head × (256 + 256) × 2 B, 15 windowed at 512, tied head: the whole Q4_K_M
    table streamed as the head plus a row) over 75 % at 1,024 and 25 % at 16,384."""
    r = resolved["gemma3-270m-h100"]
    sequence = 1024 * (15 * 511 + 3 * (0.75 * 1024 + 0.25 * 16384)) + 18 * 1024
    cost = _price(r, 1)
    assert cost.sequence_bytes == sequence == 22_809_600  # 22,824,960 − 15 × 1,024 in session 38
    assert cost.weight_bytes == 246_587_904 + 680 == sum(_bytes(t) for t in r.header.tensors) + 680
    assert cost.memory_s == pytest.approx(_memory_s(H100, cost.weight_bytes, 1, sequence), rel=1e-14)


def test_qwen3next_recurrent_state_and_conv_ring_by_hand(resolved: dict[str, Resolved]) -> None:
    """Qwen3-Next-80B-A3B-like at batch 16: 36 Gated-DeltaNet layers, each reading and writing back 32 × 128 × 128
    F32 state elements and reading 3 × 8,192 F32 conv inputs and appending 8,192; 12 attention layers of 2 KV heads
    × (256 + 256) × 2 B; 512 experts, 10 a token, uniform."""
    r = resolved["qwen3next-80b-a3b-h200"]
    rewrite = 36 * 32 * 128 * 128 * 4 * 2
    sequence = 12 * 2048 * 2049 + rewrite + 36 * 4 * 8192 * 4
    weights, _ = _weights(r.header, 16, _distinct(16, 512, 10))
    cost = _price(r, 16)
    assert (cost.rewrite_bytes, cost.sequence_bytes) == (rewrite, sequence) == (150_994_944, 206_069_760)
    assert cost.weight_bytes == pytest.approx(weights, rel=1e-14)
    assert cost.memory_s == pytest.approx(_memory_s(H200, weights, 16, sequence, rewrite), rel=1e-14)


def test_checkpoint_bytes_by_block_size_match_the_registered_headers() -> None:
    """Every tensor of the checkpoints above takes the bytes GGML's block structs give (the table stands)."""
    for name in ("gpt-oss-20b-mxfp4", "qwen3-30b-a3b-q4_k_m", "deepseek-v2-lite-q4_0", "gemma3-270m-q4_k_m"):
        header = load_checkpoint(ROOT, name)
        assert all(t.type_id in BLOCK for t in header.tensors), name
    assert sum(_bytes(t) for t in load_checkpoint(ROOT, "gpt-oss-20b-mxfp4").tensors) == 12_096_558_336


def test_qwen35_drafting_two_tokens_with_its_mtp_block_by_hand() -> None:
    """Qwen3.5-27B-like drafting 2 tokens a pass with its MTP block (blk.64) at batch 16, position 16,384, every-pass
    flush: 3 rows a sequence (1 + 0.85 + 0.85 × 0.75 = 2.4875 emitted); the main blocks stream once, the MTP block
    once a drafting step (2), 48 + 32 embedding rows (each row, then each drafting step's token), the head's 32,768
    most frequent rows of 4,200 B once a drafting step. Each of 48 Gated-DeltaNet layers reads its 48 × 128 × 128 F32
    state and writes one per candidate prefix (3), reads its 3 × 10,240 F32 conv inputs and appends 3; each of 16
    full-attention layers reads 16,384 positions of 4 × (256 + 256) × 2 B and writes 3, the MTP block's reads its
    cache and writes a row once a drafting step."""
    r = resolve(ROOT, load_spec(ROOT, "qwen35-27b-h200-mtp"))
    dense, row, _ = _streamed(r.header)
    draft = sum(_bytes(t) for t in r.header.tensors if t.name.startswith("blk.64."))
    head_row = next(_bytes(t) // t.dims[1] for t in r.header.tensors if t.name == "output.weight")
    assert (draft, row, head_row) == (261_961_728, 2_880, 4_200)
    weights = (dense - draft) + 2 * draft + (16 * 3 + 2 * 16) * row + 2 * 32_768 * head_row
    state = 48 * 128 * 128 * 4
    rewrite = 48 * (state + 3 * state)
    sequence = rewrite + 48 * (3 * 10_240 * 4 + 3 * 10_240 * 4) + 16 * 4096 * (16_384 + 3) + 2 * 4096 * (16_384 + 1)
    cost = price_serving(r.header, r.card, r.serving)
    assert (cost.rows_per_sequence, cost.emitted_per_sequence) == (3, 2.4875)
    assert (cost.weight_bytes, cost.rewrite_bytes, cost.sequence_bytes) == (weights, rewrite, sequence)
    assert weights == 17_032_543_232
    assert cost.memory_s == pytest.approx(_memory_s(H200, weights, 16, sequence, rewrite), rel=1e-14)
