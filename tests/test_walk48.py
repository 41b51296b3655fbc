"""Findings of the forty-eighth walkthrough, a new user pricing the mixtures of experts a team serves (gpt-oss-120b,
Qwen3-30B-A3B, DeepSeek-V2-Lite on every card, with and without a routing record) and headers of their own built with
``gguf.GGUFWriter``. A refusal must name what to change, and the one to fix first:

1. A header of an architecture llama.cpp knows but passprice does not (``olmoe``) was refused ``Routed``: the reader
   wrote a routing record, and was then refused ``Step: UnknownArchitecture``. The architecture is said first.
2. A mixture of experts whose weights alone overflow the card (gpt-oss-120b's 63.37 GB on a 10 GB RTX 3080) was
   refused ``Routed``, in ``price``, ``best`` and every row of ``sweep``: no routing record makes it fit, so
   ``NotResident`` (5.9 times the card's memory) is said first, and a batch past the most that fit likewise.
3. Hand checks of a small Mixtral-like llama MoE built with GGUFWriter: its tensors' bytes, KV bytes a token and the
   experts it reads at 8 token-rows under uniform routing."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import invoke

GPT_OSS = "gpt-oss-120b-mxfp4"
QWEN = "qwen3-30b-a3b-q4_k_m"


def tiny_moe(path: Path, arch: str, experts: int = 8, used: int = 2) -> Path:
    """A header-only GGUF of a 4-block mixture of experts (width 1,024, expert FFN 512, 16 heads, 4 KV heads,
    vocabulary 32,000), written with ``gguf.GGUFWriter`` as a user would: Q4_K attention, gate and up, Q6_K V, down
    and head, F32 norms and router."""
    import gguf
    from gguf import GGMLQuantizationType as Q

    d, ff, vocab, blocks = 1024, 512, 32000, 4
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(32768)
    w.add_embedding_length(d)
    w.add_block_count(blocks)
    w.add_feed_forward_length(ff)
    w.add_head_count(16)
    w.add_head_count_kv(4)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(experts)
    w.add_expert_used_count(used)

    def tensor(name: str, shape: list[int], q: Q) -> None:  # shape in ggml order (ne0 first)
        n = int(np.prod(shape))
        if q is Q.F32:
            w.add_tensor_info(name, list(reversed(shape)), np.dtype(np.float32), n * 4, raw_dtype=q)
            return
        block, size = gguf.GGML_QUANT_SIZES[q]
        rows = list(reversed(shape))
        rows[-1] = rows[-1] // block * size  # GGUFWriter takes a quantized tensor's shape in bytes a row
        w.add_tensor_info(name, rows, np.dtype(np.uint8), n // block * size, raw_dtype=q)

    tensor("token_embd.weight", [d, vocab], Q.Q4_K)
    for i in range(blocks):
        b = f"blk.{i}."
        tensor(b + "attn_norm.weight", [d], Q.F32)
        tensor(b + "attn_q.weight", [d, d], Q.Q4_K)
        tensor(b + "attn_k.weight", [d, 256], Q.Q4_K)
        tensor(b + "attn_v.weight", [d, 256], Q.Q6_K)
        tensor(b + "attn_output.weight", [d, d], Q.Q4_K)
        tensor(b + "ffn_norm.weight", [d], Q.F32)
        tensor(b + "ffn_gate_inp.weight", [d, experts], Q.F32)
        tensor(b + "ffn_gate_exps.weight", [d, ff, experts], Q.Q4_K)
        tensor(b + "ffn_up_exps.weight", [d, ff, experts], Q.Q4_K)
        tensor(b + "ffn_down_exps.weight", [ff, d, experts], Q.Q6_K)
    tensor("output_norm.weight", [d], Q.F32)
    tensor("output.weight", [d, vocab], Q.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("walk48")
    return {
        "mixtral": tiny_moe(tmp / "tiny-mixtral.gguf", "llama"),
        "olmoe": tiny_moe(tmp / "tiny-olmoe.gguf", "olmoe", 64, 8),
    }


def rows(output: str) -> list[dict[str, str]]:
    """A sweep's CSV rows."""
    return list(csv.DictReader(io.StringIO(output)))


@pytest.mark.parametrize("routing", [(), ("--routing", "uniform")])
def test_unknown_architecture_is_said_before_routed(headers: dict[str, Path], routing: tuple[str, ...]) -> None:
    """olmoe, 64 experts: refused for its architecture with or without a routing record, never Routed first."""
    r = invoke("price", "--checkpoint", str(headers["olmoe"]), "--card", "h200_sxm_141gb", "--batch", "8", *routing)
    assert r.exit_code == 1, r.output
    assert "refused: Step: decode step refused (UnknownArchitecture):" in r.output
    assert "general.architecture 'olmoe' is no architecture passprice prices" in r.output
    assert "Routed" not in r.output


def test_mixtral_like_header_by_hand(headers: dict[str, Path]) -> None:
    """Weights: embedding 32,768,000 Q4_K elements = 18,432,000 B, head Q6_K 26,880,000 B; a block 9,701,376 B
    quantized + 40,960 B F32; the experts 2 × 2,359,296 + 3,440,640 = 8,159,232 B a block. KV: 4 blocks × 2 (K, V)
    × 4 heads × 64 × 2 B = 4,096 B a token. Uniform routing at 8 token-rows reads D(8) = 8 (1 − (1 − 2/8)^8) = 7.199
    experts a layer, 7.199 / 8 × 32.64 MB = 29.37 MB."""
    path = str(headers["mixtral"])
    header = invoke("header", path)
    assert header.exit_code == 0, header.output
    total = 18_432_000 + 26_880_000 + 4 * (9_701_376 + 40_960) + 4096
    assert f"tensors       43, {total:,} bytes" in header.output and total == 84_285_440
    kv = invoke("kv", path, "--contexts", "4k")
    assert "global attention       4         4        4,096" in kv.output
    priced = invoke("price", "--checkpoint", path, "--card", "h200_sxm_141gb", "--batch", "8", "--routing", "uniform")
    assert priced.exit_code == 0, priced.output
    d8 = 8 * (1 - 0.75**8)
    assert f"{d8:.3f}" == "7.199"
    assert "experts       7.199 of 8 experts a layer for 8 token-rows (2 a token)" in priced.output
    assert f"{d8 / 8 * 4 * 8_159_232 / 1e6:.2f}" == "29.37"
    assert "29.37 MB of them" in priced.output
    assert "(all 8 experts of every layer hold 32.64 MB)" in priced.output
    bare = invoke("price", "--checkpoint", path, "--card", "h200_sxm_141gb", "--batch", "8")
    assert bare.exit_code == 1 and "refused: Routed: a mixture of 8 experts" in bare.output


@pytest.mark.parametrize("command", [("price", "--batch", "1"), ("best",)])
def test_weights_past_the_card_are_not_resident_before_routed(command: tuple[str, ...]) -> None:
    """gpt-oss-120b's 63,374,323,968 bytes on a 10 GB RTX 3080, no routing record: NotResident, 5.9 times."""
    r = invoke(command[0], "--checkpoint", GPT_OSS, "--card", "rtx_3080", *command[1:])
    assert r.exit_code == 1, r.output
    assert "refused: NotResident:" in r.output and "5.9 times what it holds: no batch fits" in r.output
    assert "Routed" not in r.output


def test_price_past_the_most_sequences_is_not_resident_before_routed() -> None:
    """Qwen3-30B-A3B on an RTX 3090, a contiguous 4,096-position cache: ⌊(25.77 GB − 18.55 GB) / 402.7 MB⌋ = 17
    sequences fit; batch 17 still needs a routing record, batch 18 no record can price."""
    at17 = invoke("price", "--checkpoint", QWEN, "--card", "rtx_3090", "--batch", "17")
    at18 = invoke("price", "--checkpoint", QWEN, "--card", "rtx_3090", "--batch", "18")
    assert "refused: Routed:" in at17.output
    assert "refused: NotResident:" in at18.output and "at most 17 sequences fit" in at18.output


def test_sweep_rows_say_what_price_says() -> None:
    """Each row of a sweep with no routing record is refused as price refuses it: NotResident where no routing
    makes the batch fit, Routed where one would price it (batch 0 is refused on the command line: test_fix181.py)."""
    r = invoke("sweep", "--checkpoint", GPT_OSS, "--cards", "rtx_3080,sn40l,h200_sxm_141gb", "--batches", "1,64")
    assert r.exit_code == 1
    got = [(row["card"], row["batch"], row["refusal"]) for row in rows(r.stdout)]
    assert got == [
        ("rtx_3080", "1", "NotResident"), ("rtx_3080", "64", "NotResident"),
        ("sn40l", "1", "Routed"), ("sn40l", "64", "NotResident"),
        ("h200_sxm_141gb", "1", "Routed"), ("h200_sxm_141gb", "64", "Routed"),
    ]  # fmt: skip
    qwen = invoke("sweep", "--checkpoint", QWEN, "--cards", "rtx_3090", "--batches", "17,18")
    assert [row["refusal"] for row in rows(qwen.stdout)] == ["Routed", "NotResident"]


def test_a_capped_sweeps_best_says_a_batch_between_may_be_faster() -> None:
    """Qwen3-30B-A3B on the measured record, an H200, position 512, TPOT ≤ 20 ms: the doubling grid's best is 256
    (36,057.7 tokens/s), where `best` finds 304 (39,322.5): the line says a batch between 256 and 512 may be faster.
    A grid with every batch around the best (303, 304, 305) says nothing more."""
    args = ("sweep", "--checkpoint", QWEN, "--routing", "qwen3-30b-a3b-measured", "--cards", "h200_sxm_141gb",
            "--positions", "512", "--max-tpot", "0.02", "--batches")
    gaps = invoke(*args, "128,256,512")
    assert gaps.exit_code == 0, gaps.output
    summary, refused = gaps.stderr.splitlines()
    assert summary == (
        f"passprice: {QWEN} on h200_sxm_141gb: best batch within TPOT ≤ 20 ms: 256, 36,057.7 tokens/s at 7.1 ms — the "
        "best of the batches swept; one between 256 and 512 may be faster (`passprice best --max-tpot` searches every "
        "batch)"
    )
    # batch 512 does not fit (304 do), said as a sweep says its refusals (tests/test_fix185.py)
    assert refused.startswith(f"passprice: refused: NotResident (1 of 3 rows, 2 priced) — {QWEN} on h200_sxm_141gb at "
                              "position 512, batch 512: "), refused
    dense = invoke(*args, "303,304,305")
    best_line, refused = dense.stderr.splitlines()
    assert best_line == f"passprice: {QWEN} on h200_sxm_141gb: best batch within TPOT ≤ 20 ms: 304, 39,322.5 " \
                        "tokens/s at 7.731 ms"
    assert refused.startswith("passprice: refused: NotResident (1 of 3 rows, 2 priced) — "), refused  # 305
    best = invoke("best", "--checkpoint", QWEN, "--routing", "qwen3-30b-a3b-measured", "--card", "h200_sxm_141gb",
                  "--position", "512", "--max-tpot", "0.02")
    assert "batch 304 sequences" in best.stdout and "39,322.5" in best.stdout
