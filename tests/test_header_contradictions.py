"""A header that contradicts itself is refused naming the keys or the tensor, never priced from one side: 4 query
heads over 3 KV heads (GQA shares each KV head among head_count / head_count_kv query heads) was priced at 384 B a
token; an attn_k weight 48 wide where the metadata implies 32 had its KV cache priced from the metadata, silently.
Every registered checkpoint still reads and prices as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gguf import GGUFValueType as V

from cli_helpers import REPO, bad, invoke
from gguf_bytes import Meta, Tensor, decode, encode, meta_index
from passprice import ggml
from passprice.checkpoints import load_checkpoint
from passprice.decode import header_problems
from passprice.gguf_header import read_header
from passprice.registry import find_root

F32 = ggml.by_name("F32").id
H200 = "h200_sxm_141gb"


def _tiny(q: int, kv: int, k_width: int, v_width: int) -> bytes:
    """A 2-block llama of width 64: ``q`` query heads, ``kv`` KV heads (head width 64 / q from the metadata), and
    attn_k / attn_v weights ``k_width`` / ``v_width`` wide."""
    meta = [
        Meta("general.architecture", V.STRING, "llama"),
        Meta("llama.block_count", V.UINT32, 2),
        Meta("llama.embedding_length", V.UINT32, 64),
        Meta("llama.context_length", V.UINT32, 4096),
        Meta("llama.feed_forward_length", V.UINT32, 128),
        Meta("llama.attention.head_count", V.UINT32, q),
        Meta("llama.attention.head_count_kv", V.UINT32, kv),
    ]
    tensors = [Tensor("token_embd.weight", (64, 256), F32)]
    for i in range(2):
        tensors += [
            Tensor(f"blk.{i}.attn_norm.weight", (64,), F32),
            Tensor(f"blk.{i}.attn_q.weight", (64, 64), F32),
            Tensor(f"blk.{i}.attn_k.weight", (64, k_width), F32),
            Tensor(f"blk.{i}.attn_v.weight", (64, v_width), F32),
            Tensor(f"blk.{i}.attn_output.weight", (64, 64), F32),
            Tensor(f"blk.{i}.ffn_norm.weight", (64,), F32),
            Tensor(f"blk.{i}.ffn_up.weight", (64, 128), F32),
            Tensor(f"blk.{i}.ffn_down.weight", (128, 64), F32),
        ]
    tensors += [Tensor("output_norm.weight", (64,), F32), Tensor("output.weight", (64, 256), F32)]
    return encode(meta, tensors)


def test_a_consistent_tiny_header_prices(tmp_path: Path) -> None:
    # The control: 4 query heads over 2 KV heads of width 16, attn_k and attn_v 32 wide: 2 blocks × 2 heads ×
    # (16 + 16) × 2 bytes = 256 B of KV cache a token.
    path = tmp_path / "fine.gguf"
    path.write_bytes(_tiny(4, 2, 32, 32))
    result = invoke("kv", str(path), "--contexts", "1k", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["per_token_total"] == 256


@pytest.mark.parametrize("command", [("kv", "{f}"), ("price", "--checkpoint", "{f}", "--card", H200),
                                     ("header", "{f}", "--json"), ("best", "--checkpoint", "{f}", "--card", H200)])
def test_query_heads_not_shared_evenly_are_refused(command: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "uneven.gguf"
    path.write_bytes(_tiny(4, 3, 48, 48))  # the tensors agree with 3 KV heads of width 16; GQA does not
    args = [a.format(f=path) for a in command]
    if command[0] == "header":
        result = invoke(*args)  # header shows what a file holds, contradictions and all
        assert result.exit_code == 0, result.output
        return
    bad(*args, says=(
        f"{path}: metadata llama.attention.head_count: 4 query heads do not share 3 KV heads "
        "(attention.head_count_kv) evenly in block 0 (and 1 more blocks): GQA gives each KV head head_count / "
        "head_count_kv query heads, a whole number"
    ))


def test_an_attn_k_wider_than_the_metadata_says_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.gguf"
    path.write_bytes(_tiny(4, 2, 48, 32))  # 2 KV heads × 64 / 4 = 32, but attn_k is 48 wide
    lines = bad("kv", str(path), says=(
        f"{path}: tensor 'blk.0.attn_k.weight': dims [64, 48] are 48 wide, but the metadata gives 2 KV heads × 16 "
        "(embedding_length / head_count) = 32 (and 1 more tensors): the header contradicts itself, and the KV cache "
        "would be priced from one of the two"
    ))
    assert len(lines) == 1
    path.write_bytes(_tiny(4, 2, 32, 8))
    bad("price", "--checkpoint", str(path), "--card", H200,
        says=f"{path}: tensor 'blk.0.attn_v.weight': dims [64, 8] are 8 wide, but the metadata gives 2 KV heads × 16")


def test_a_real_header_with_a_kv_head_count_its_tensors_deny(tmp_path: Path) -> None:
    # DeepSeek-R1-Distill-Qwen-7B: 28 query heads over 4 KV heads of 128, attn_k 512 wide. Saying 3 KV heads
    # breaks both rules; each is named.
    meta, tensors = decode(read_header(REPO / "tests/data/deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz",
                                       cache=False))
    i = meta_index(meta, "attention.head_count_kv")
    meta[i] = Meta(meta[i].key, meta[i].type, 3)
    path = tmp_path / "r1.gguf"
    path.write_bytes(encode(meta, tensors))
    bad("kv", str(path), says=(
        f"{path}: metadata qwen2.attention.head_count: 28 query heads do not share 3 KV heads "
        "(attention.head_count_kv) evenly in block 0 (and 27 more blocks)",
        f"{path}: tensor 'blk.0.attn_k.weight': dims [3584, 512] are 512 wide, but the metadata gives 3 KV heads × "
        "128 (embedding_length / head_count) = 384 (and 55 more tensors)",
    ))


def test_every_registered_checkpoint_still_reads() -> None:
    root = find_root(REPO)
    for name in root.names(root.checkpoints):
        assert header_problems(load_checkpoint(root, name)) == [], name
