"""A header the pricer cannot read honestly is refused by name before it is priced: a quantised tensor whose rows are
not whole blocks of its type (ggml stores whole blocks a row, so no GGUF file holds one, and ceil(elements / block)
would price bytes no file has), and an MLA header whose widths disagree (the latent projection's output, key_length
and value_length against kv_lora_rank + rope.dimension_count). Reproducers of the attacker's finding 12."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from passprice import ggml
from passprice.checkpoints import load_checkpoint
from passprice.decode import header_problems
from passprice.registry import Root

OSS = "registry/checkpoints/gpt-oss-20b-mxfp4.toml"
DOWN = '{ name = "blk.0.ffn_down_exps.weight", type = "MXFP4", dims = [2880, 2880, 32]'
DEEPSEEK = "registry/checkpoints/deepseek-v3-q4_k_m.toml"
RANK = '"deepseek2.attention.kv_lora_rank" = { type = "uint32", value = 512 }'


def edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.parametrize("dims", ["[2881, 2880, 32]", "[31, 2880, 32]"])
def test_mxfp4_rows_that_are_not_whole_blocks_are_refused(tmp_path: Path, dims: str) -> None:
    root = copy_root(tmp_path)
    edit(root, OSS, DOWN, DOWN.replace("[2880, 2880, 32]", dims))
    rows = dims[1:].split(",")[0]
    bad("price", "gpt-oss-20b-h200", "--routing", "uniform", "--no-lock", root=root,
        says=f"{root / OSS}: tensor 'blk.0.ffn_down_exps.weight': rows of {int(rows):,} elements (dims {dims}) are not "
        "a whole number of MXFP4 blocks of 32 elements: ggml stores whole blocks a row")  # fmt: skip


def test_every_quantised_type_is_held_to_its_block() -> None:
    # NVFP4 (64 weights a block): a row of 7 is refused, a row of 14,336 (224 blocks) is not; F32 rows are any width.
    assert ggml.by_name("NVFP4").block_elems == 64
    real = load_checkpoint(Root(REPO), "llama3-8b-q4_k_m")
    assert header_problems(real) == []
    nvfp4, f32 = ggml.by_name("NVFP4").id, ggml.by_name("F32").id
    changed = {"blk.0.attn_q.weight": ((7, 14336), nvfp4), "blk.0.attn_k.weight": ((14336, 7), nvfp4),
               "blk.0.attn_norm.weight": ((4095,), f32)}  # fmt: skip
    tensors = tuple(
        attrs.evolve(t, dims=changed[t.name][0], type_id=changed[t.name][1]) if t.name in changed else t
        for t in real.tensors
    )
    assert header_problems(attrs.evolve(real, tensors=tensors)) == [
        f"{real.source}: tensor 'blk.0.attn_q.weight': rows of 7 elements (dims [7, 14336]) are not a whole number of "
        "NVFP4 blocks of 64 elements: ggml stores whole blocks a row, so no GGUF file holds such a tensor"
    ]


def test_an_mla_header_whose_widths_disagree_is_refused_naming_the_keys(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    edit(root, DEEPSEEK, RANK, RANK.replace("512", "513"))
    lines = bad("kv", "deepseek-v3-q4_k_m", "--contexts", "4k", root=root)
    where = f"passprice: error: {root / DEEPSEEK}: "
    assert lines == [
        f"{where}tensor 'blk.0.attn_kv_a_mqa.weight': dims [7168, 576], but deepseek2.attention.kv_lora_rank 513 + "
        "deepseek2.rope.dimension_count 64 = 577: the latent projection's output is the latent and the rope key",
        f"{where}metadata deepseek2.attention.key_length: 576, but deepseek2.attention.kv_lora_rank 513 + "
        "deepseek2.rope.dimension_count 64 = 577: a split MLA checkpoint caches the latent and the rope key as its one "
        "KV head's key",
        f"{where}metadata deepseek2.attention.value_length: 512, but deepseek2.attention.kv_lora_rank is 513: a split "
        "MLA checkpoint's value is the latent",
    ]
    # The registered entry's widths agree: 61 × (512 + 64) × 2 = 70,272 bytes a position at 2-byte elements.
    result = invoke("kv", "deepseek-v3-q4_k_m", "--contexts", "4k", "--json")
    assert result.exit_code == 0 and "70272" in result.stdout.replace(",", "")
