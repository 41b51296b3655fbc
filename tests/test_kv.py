"""``passprice kv``: a sequence's KV cache, recurrent state and conv ring at each context, from real headers, and how
many sequences fit beside the weights (issue 7, part 1).

Every expected number is written out by hand from the header's metadata (``passprice header NAME`` shows it) and
DESIGN.md's rules: a block's cache holds ``kv_heads × (key_length + value_length) × kv_bytes`` bytes per position,
a windowed block at most its window; a Gated-DeltaNet block holds ``heads × key × value`` state elements and
``(conv_kernel − 1) × channels`` ring elements. Nothing is computed by calling the code under test to get an
expectation, except the fit, which is checked against ``passprice max-batch`` (the seed's own count).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passprice.cards import load_cards
from passprice.checkpoints import load_checkpoint
from passprice.cli import cli
from passprice.decode import LayerKind
from passprice.errors import InputError
from passprice.kv import kv_report, parse_contexts
from passprice.registry import find_root
from passprice.serving import ContextBeyondModel
from synth import header

ROOT = find_root(Path(__file__).resolve().parent.parent)
ROOT_ARG = str(ROOT.path)
GEMMA3 = "gemma3-270m-q4_k_m"
QWEN2 = "deepseek-r1-distill-qwen-7b-q4_k_m"
QWEN35 = "qwen35-27b-like"
K = 1024


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", ROOT_ARG, *args])
    return result.exit_code, result.stdout, result.stderr


def report(name: str, contexts: tuple[int, ...], **kw: float):  # type: ignore[no-untyped-def]
    return kv_report(load_checkpoint(ROOT, name), contexts, load_cards(ROOT), name=name, **kw)


def test_gemma3_at_32k_caps_windowed_layers_at_512_and_global_layers_at_32768() -> None:
    # gemma3-270m: 18 blocks, 1 KV head, key and value 256 wide (attention.key_length, not 640 / 4 heads), a
    # 512-position window on five layers of every six (the first five), 16-bit cache elements.
    r = report(GEMMA3, (32 * K,))
    per_layer = 1 * (256 + 256) * 2
    assert per_layer == 1024
    windowed = [x.index for x in r.layers if x.kind is LayerKind.WINDOWED]
    globals_ = [x.index for x in r.layers if x.kind is LayerKind.ATTENTION]
    assert globals_ == [5, 11, 17]
    assert windowed == [i for i in range(18) if i % 6 != 5]
    assert all(x.bytes_per_position == per_layer for x in r.layers)
    at = r.at(32 * K)
    win = at.kind(LayerKind.WINDOWED)
    glob = at.kind(LayerKind.ATTENTION)
    assert win is not None and glob is not None
    assert (win.layers, win.positions, win.bytes) == (15, 512, 15 * 1024 * 512)
    assert (glob.layers, glob.positions, glob.bytes) == (3, 32_768, 3 * 1024 * 32_768)
    assert at.kv_bytes == 7_864_320 + 100_663_296 == 108_527_616
    assert (at.state_bytes, at.ring_bytes) == (0, 0)
    # Per token: every block adds one position's row (a windowed block overwrites its oldest once full).
    assert r.bytes_per_token(LayerKind.WINDOWED) == 15 * 1024
    assert r.bytes_per_token(LayerKind.ATTENTION) == 3 * 1024
    # Tied embeddings: no output.weight, the table is held once, weights + table = every tensor's bytes.
    assert r.tied
    assert r.weights + r.embedding_table == 246_587_904


def test_gemma3_kv_command_shows_the_caps_and_refuses_128k() -> None:
    code, out, _ = run("kv", GEMMA3, "--contexts", "4k,32k,128k", "--json")
    assert code == 0
    data = json.loads(out)
    by = {c["context"]: c for c in data["contexts"]}
    assert by[32 * K]["kinds"]["windowed"] == {"layers": 15, "positions": 512, "bytes": 7_864_320}
    assert by[32 * K]["kinds"]["attention"] == {"layers": 3, "positions": 32_768, "bytes": 100_663_296}
    assert by[4 * K]["kinds"]["windowed"]["positions"] == 512
    assert by[4 * K]["kinds"]["attention"]["positions"] == 4096
    # 128K is past gemma3's context_length (32,768): shown refused, not priced.
    assert by[128 * K]["refusal"] == "ContextBeyondModel"
    assert (by[128 * K]["limit"], by[128 * K]["model"]) == (131_072, 32_768)
    assert "kinds" not in by[128 * K]
    code, text, _ = run("kv", GEMMA3, "--contexts", "32k,128k")
    assert code == 0
    row = next(line for line in text.splitlines() if line.startswith("32K"))
    assert row.split()[:5] == ["32K", "32,768", "100,663,296", "512", "7,864,320"]
    assert "128K  refused (ContextBeyondModel)" in text


def test_every_context_refused_is_a_refusal() -> None:
    code, out, err = run("kv", GEMMA3, "--contexts", "64k,128k", "--json")
    assert code == 1
    assert "every context is past" in err
    assert {c["refusal"] for c in json.loads(out)["contexts"]} == {"ContextBeyondModel"}
    r = report(GEMMA3, (64 * K,))
    assert isinstance(r.at(64 * K).refusal, ContextBeyondModel)


def test_qwen2_at_128k_is_57344_bytes_a_position() -> None:
    # qwen2 (DeepSeek-R1-Distill-Qwen-7B): 28 blocks, 28 query heads and 4 KV heads (GQA) of 3584 / 28 = 128.
    r = report(QWEN2, (128 * K,))
    per_layer = 4 * (128 + 128) * 2
    assert per_layer == 2048
    assert [x.bytes_per_position for x in r.layers] == [per_layer] * 28
    assert r.bytes_per_token() == 28 * per_layer == 57_344
    at = r.at(128 * K)
    assert at.kv_bytes == at.total_bytes == 57_344 * 131_072 == 7_516_192_768
    assert not r.tied
    code, out, _ = run("kv", QWEN2, "--contexts", "128k", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["contexts"][0]["total_bytes"] == 7_516_192_768
    assert data["per_token_total"] == 57_344
    code, text, _ = run("kv", QWEN2, "--contexts", "128k")
    assert "7,516,192,768" in text and "57,344" in text


def test_kv_bytes_scale_the_cache_exactly() -> None:
    # 4-bit codes with their scales (0.5625 bytes an element) and 8-bit: exact fractions of the 16-bit cache.
    assert report(QWEN2, (128 * K,), kv_bytes=0.5625).at(128 * K).kv_bytes == 7_516_192_768 * 0.5625 / 2
    assert report(QWEN2, (4 * K,), kv_bytes=1).bytes_per_token() == 28_672
    code, out, _ = run("kv", QWEN2, "--contexts", "128k", "--kv-bytes", "0.5625", "--json")
    assert code == 0
    assert json.loads(out)["contexts"][0]["kv_bytes"] == 2_113_929_216


def test_hybrid_qwen35_full_attention_layers_state_and_rings() -> None:
    # 64 main blocks: every fourth (3, 7, …, 63) full attention with 4 KV heads of 256, the other 48 Gated DeltaNet;
    # block 64 is the MTP draft block. Recurrence: 48 value heads, key 128, value 6144 / 48 = 128, 16 key groups,
    # conv kernel 4 over 6144 + 2 × 16 × 128 = 10,240 channels; states and rings at 4 bytes an element.
    r = report(QWEN35, (4 * K, 32 * K))
    full = [x for x in r.layers if x.kind is LayerKind.ATTENTION and not x.draft]
    recurrent = [x for x in r.layers if x.kind is LayerKind.RECURRENT]
    assert [x.index for x in full] == list(range(3, 64, 4))
    assert len(recurrent) == 48
    assert r.bytes_per_token(LayerKind.ATTENTION) == 16 * 4 * (256 + 256) * 2 == 65_536
    assert r.bytes_per_token(LayerKind.RECURRENT) == 0
    assert r.state_per_layer == 48 * 128 * 128 * 4 == 3_145_728
    assert r.ring_per_layer == 3 * 10_240 * 4 == 122_880
    at = r.at(32 * K)
    assert at.state_bytes == 48 * 3_145_728 == 144 * 2**20
    assert at.ring_bytes == 48 * 122_880 == 5_898_240
    assert at.kv_bytes == 65_536 * 32_768
    assert at.total_bytes == 65_536 * 32_768 + 144 * 2**20 + 5_898_240
    # The state does not grow with the context; the cache does.
    assert r.at(4 * K).state_bytes == at.state_bytes
    # The MTP block's own cache (4 KV heads of 256) is held only when a serving drafts.
    assert r.bytes_per_token(draft=True) == 4 * 512 * 2
    assert at.draft_bytes == 4096 * 32_768
    code, out, _ = run("kv", QWEN35, "--contexts", "32k", "--json")
    assert code == 0
    entry = json.loads(out)["contexts"][0]
    assert (entry["state_bytes"], entry["ring_bytes"]) == (150_994_944, 5_898_240)
    assert entry["kinds"]["attention"] == {"layers": 16, "positions": 32_768, "bytes": 2_147_483_648}
    assert entry["kinds"]["recurrent"] == {"layers": 48, "positions": 0, "bytes": 0}


@pytest.mark.parametrize(
    ("checkpoint", "context", "cards"),
    [
        (QWEN2, 128 * K, ("h200_sxm_141gb", "a100_sxm4_80gb", "sn40l")),
        (QWEN35, 32 * K, ("h200_sxm_141gb", "mi300x")),
        (GEMMA3, 4 * K, ("b200",)),
    ],
)
def test_fit_is_max_batch_with_a_contiguous_cache(checkpoint: str, context: int, cards: tuple[str, ...]) -> None:
    r = report(checkpoint, (context,))
    fits = {f.card: f for f in r.at(context).fits}
    assert set(fits) == set(ROOT.names(ROOT.cards))
    for card in cards:
        f = fits[card]
        code, out, _ = run(
            "max-batch", "--checkpoint", checkpoint, "--card", card, "--limit", str(context), "--contiguous", "--json"
        )
        assert code == 0
        assert json.loads(out)["max_batch"] == f.max_batch
        # The card's memory binds (the on-chip memory holds more token-rows), so max-batch is card_room:
        # ⌊(capacity − weights and table) / held per sequence⌋.
        assert f.limited_by == "memory" and f.on_chip_room > f.max_batch
        assert f.max_batch == int((f.capacity - f.held_shared) // f.held_per_sequence)
    # Hand check on one: H200 holds 141 GB; qwen2 holds 4,677,120,000 bytes of weights and table.
    if checkpoint == QWEN2:
        assert fits["h200_sxm_141gb"].max_batch == (141_000_000_000 - 4_677_120_000) // 7_516_192_768 == 18


def test_fit_names_the_on_chip_limit_when_it_binds_first() -> None:
    from synth import card

    h = _gqa_header()
    tight = card("tight", on_chip_capacity=2 * 576 + 1, memory_capacity=1e12)
    r = kv_report(h, (64,), (tight,))
    f = r.at(64).fits[0]
    # A row takes 4 × width + (ffn + width) = 4 × 64 + 256 + 64 = 576 bytes on chip, so 1,153 bytes hold 2 rows.
    assert f.on_chip_room == 2 and f.max_batch == 2 and f.limited_by == "on-chip"
    assert f.card_room > 2


def _gqa_header():  # type: ignore[no-untyped-def]
    """Four blocks with a per-layer KV-head array [8, 0, 2, 4] (block 1 has no KV heads) under 8 query heads,
    width 64 (so 8 wide heads), F16 tensors, untied head."""
    width, ffn, vocab = 64, 256, 100
    tensors = [
        ("token_embd.weight", (width, vocab), "F16"),
        ("output.weight", (width, vocab), "F16"),
        ("output_norm.weight", (width,), "F32"),
    ]
    kv_heads = [8, 0, 2, 4]
    for i, kv in enumerate(kv_heads):
        b = f"blk.{i}"
        tensors += [
            (f"{b}.attn_norm.weight", (width,), "F32"),
            (f"{b}.attn_q.weight", (width, width), "F16"),
            (f"{b}.attn_output.weight", (width, width), "F16"),
            (f"{b}.ffn_up.weight", (width, ffn), "F16"),
            (f"{b}.ffn_down.weight", (ffn, width), "F16"),
        ]
        if kv:
            tensors += [(f"{b}.attn_k.weight", (width, 8 * kv), "F16"), (f"{b}.attn_v.weight", (width, 8 * kv), "F16")]
    meta = {
        "block_count": 4,
        "context_length": 4096,
        "embedding_length": width,
        "feed_forward_length": ffn,
        "attention.head_count": 8,
        "attention.head_count_kv": tuple(kv_heads),
    }
    return header(meta, tensors)


def test_per_layer_kv_head_arrays() -> None:
    r = kv_report(_gqa_header(), (1000, 4096))
    # Head width 64 / 8 = 8 (key and value): per position kv × (8 + 8) × 2 bytes.
    assert [x.bytes_per_position for x in r.layers] == [8 * 16 * 2, 0, 2 * 16 * 2, 4 * 16 * 2]
    assert [x.kind for x in r.layers] == [LayerKind.ATTENTION, LayerKind.NONE, LayerKind.ATTENTION, LayerKind.ATTENTION]
    assert r.at(1000).kv_bytes == (256 + 64 + 128) * 1000
    code_kinds = r.at(4096).kind(LayerKind.NONE)
    assert code_kinds is not None and (code_kinds.layers, code_kinds.bytes) == (1, 0)


def test_parse_contexts() -> None:
    assert parse_contexts("4k,32k,128k") == (4096, 32_768, 131_072)
    assert parse_contexts("4096,1m,4K,4096") == (4096, 1_048_576)
    for bad in ("", "0", "4x", "-4k", "1.5k", "4096, 1m", " 4k", "+4k", "4_096"):
        with pytest.raises(InputError):
            parse_contexts(bad)
    code, _, err = run("kv", QWEN2, "--contexts", "4kb")
    assert code == 2 and err.startswith("passprice: error: --contexts:") and len(err.strip().splitlines()) == 1


def test_bad_input_and_refusals_exit_codes() -> None:
    code, _, err = run("kv", "no-such-checkpoint")
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run("kv", QWEN2, "--kv-bytes", "0")
    assert code == 2
    # A mixture of experts: its KV cache does not depend on routing. 12 full-attention layers of 2 KV heads of
    # 256 + 256 elements at 2 B: 24,576 B a position.
    code, out, _ = run("kv", "qwen3next-80b-a3b-like", "--json")
    assert code == 0 and json.loads(out)["per_token_total"] == 12 * 2 * 512 * 2 == 24_576
