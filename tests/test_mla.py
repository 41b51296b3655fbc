"""DeepSeek's multi-head latent attention (MLA) in the decode step and ``passprice kv``, in both header generations
llama.cpp has written: the cache holds the compressed latent and the rope key a position (kv_lora_rank +
rope.dimension_count elements), not kv_heads × (key + value); the attention work is the absorbed form.

DeepSeek-V3 (published config): 61 main blocks + 1 MTP block, 128 heads, kv_lora_rank 512, qk_rope_head_dim 64,
qk_nope_head_dim 128, v_head_dim 128. Expected numbers are written out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cli_helpers import invoke
from passprice.decode import Deployment, LayerKind, MissingMetadata, Split, StageKind, decode_step
from passprice.gguf_header import GGUFHeader, read_header
from passprice.kv import kv_report
from passprice.synthetic import Latent, build, header_bytes, read_config
from passprice.typemix import Mix

REPO = Path(__file__).parent.parent


def deepseek(tmp_path: Path, latent: Latent) -> GGUFHeader:
    built = build(read_config(REPO / "examples" / "configs" / "deepseek-v3.json"), Mix.Q4_K_M, latent=latent)
    path = tmp_path / f"ds-{latent.value}.gguf"
    path.write_bytes(header_bytes(built))
    return read_header(path, cache=False)


@pytest.mark.parametrize("latent", list(Latent))
def test_deepseek_v3_kv_bytes_per_position(tmp_path: Path, latent: Latent) -> None:
    h = deepseek(tmp_path, latent)
    # Old headers say 128 KV heads of 192 + 128, new ones 1 of 576 + 512; both cache 512 + 64 elements a layer.
    assert h.meta_int("attention.head_count_kv") == (1 if latent is Latent.SPLIT else 128)
    report = kv_report(h, (4096,))
    assert report.bytes_per_token() == 61 * (512 + 64) * 2 == 70_272
    assert report.bytes_per_token(draft=True) == (512 + 64) * 2  # the MTP block's own cache
    assert 61 * 128 * (192 + 128) * 2 == 4_997_120  # what the MHA formula would have said
    assert report.at(4096).kv_bytes == 70_272 * 4096
    assert all(x.latent and x.kv_heads == 1 for x in report.layers)
    one_byte = kv_report(h, (4096,), kv_bytes=1.0)
    assert one_byte.bytes_per_token() == 61 * 576


@pytest.mark.parametrize("latent", list(Latent))
def test_absorbed_attention_work(tmp_path: Path, latent: Latent) -> None:
    h = deepseek(tmp_path, latent)
    step = decode_step(h, Deployment(ctx=1))
    attention = [s for s in step.stages if s.kind is StageKind.ATTENTION]
    assert len(attention) == 61  # the MTP block's only when drafting
    st = attention[0]
    # Every one of 128 query heads scores the 576-wide latent + rope key and sums the 512-wide latent, per position.
    assert st.split == Split(128, 1, 576, 512)
    assert st.ops == 2 * 128 * (576 + 512) == 278_528
    assert st.state_write == 576 * 2
    assert all(layer.kind is LayerKind.ATTENTION for layer in step.layers)
    # The key and value expansions are matrices a row crosses once (absorbed into the query and the output): the
    # same 512 × 128 × (128 + 128) elements in both generations, in projection stages.
    names = [n for s in step.stages if s.layer == 3 and s.kind is StageKind.PROJECT for n in s.tensors
             if n.endswith(("attn_kv_b.weight", "attn_k_b.weight", "attn_v_b.weight"))]
    assert len(names) == (2 if latent is Latent.SPLIT else 1)
    assert sum(math.prod(h.tensor(n).dims) for n in names) == 512 * 128 * 256  # type: ignore[union-attr]


def test_mla_without_its_widths_is_refused(tmp_path: Path) -> None:
    import attrs

    h = deepseek(tmp_path, Latent.SPLIT)
    meta = {k: v for k, v in h.metadata.items() if k != "deepseek2.attention.kv_lora_rank"}
    with pytest.raises(MissingMetadata) as e:
        decode_step(attrs.evolve(h, metadata=meta), Deployment())
    assert e.value.keys == ("deepseek2.attention.kv_lora_rank",)


def test_kv_command_shows_the_latent() -> None:
    r = invoke("kv", "deepseek-v3-q4_k_m", "--contexts", "4k", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["per_token_total"] == 70_272 and data["draft_per_token"] == 1_152
    assert data["contexts"][0]["kv_bytes"] == 70_272 * 4096
    text = invoke("kv", "deepseek-v3-q4_k_m", "--contexts", "4k").output
    assert "global attention (MLA: latent + rope key)      61         1       70,272" in text
