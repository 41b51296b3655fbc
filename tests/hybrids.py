"""Header-only synthetic hybrid checkpoints: Gated-DeltaNet layers beside full-attention layers, with and without a
multi-token-prediction (MTP) block, written with ``gguf.GGUFWriter`` as a header, its metadata and its tensor-info
table, and no tensor data.

No public dense hybrid GGUF fits in a test suite, so these stand in for them. Their shapes follow published model
configurations (each builder cites its source); their tensor names are llama.cpp's for the architecture
(``gguf.constants.MODEL_TENSORS``); their types are what a Q4_K_M file holds (Q4_K matrices, Q6_K for ``ffn_down`` and
``output``, F32 for norms, vectors and the conv kernel, Q8_0 for the small matrices whose rows do not fill 256).

The files under ``tests/data/`` and the entries under ``registry/checkpoints/`` are generated from the builders here:

    .venv/bin/python tests/hybrids.py            # rewrite tests/data/*.header.gguf and the registry entries

and ``tests/test_hybrids.py`` checks that both are up to date.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType, GGUFWriter

T = GGMLQuantizationType
V = GGUFValueType

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent

#: A tensor: name, dims in GGUF order (the row length first), GGML type.
Tensor = tuple[str, tuple[int, ...], GGMLQuantizationType]
#: A metadata key (architecture prefix included) with its value and GGUF value type.
Meta = tuple[str, Any, GGUFValueType]


def tensor_bytes(dims: Sequence[int], ty: GGMLQuantizationType) -> int:
    """ceil(elements / block elements) × block bytes."""
    per, size = GGML_QUANT_SIZES[ty]
    elements = 1
    for d in dims:
        elements *= d
    return -(-elements // per) * size


def write_header_only(path: Path, arch: str, meta: Sequence[Meta], tensors: Sequence[Tensor]) -> Path:
    """A GGUF v3 file at ``path``: its header, ``meta`` (after ``general.architecture``) and the tensor-info table of
    ``tensors``, offsets laid out as if the data followed; the data itself is not written."""
    w = GGUFWriter(path, arch)
    for key, value, vtype in meta:
        w.add_key_value(key, value, vtype)
    for name, dims, ty in tensors:
        # add_tensor_info takes the numpy shape (GGUF dims reversed); any dtype but uint8 keeps it as elements.
        w.add_tensor_info(name, tuple(reversed(dims)), np.dtype(np.float32), tensor_bytes(dims, ty), raw_dtype=ty)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


# --- Qwen3.5-27B-like: a dense Gated-DeltaNet hybrid with one MTP block -------------------------------------------

QWEN35 = "qwen35-27b-like"
QWEN35_ORIGIN = (
    "Synthetic, header only: written by tests/hybrids.py (qwen35_27b_like) with gguf.GGUFWriter; no weights exist. "
    "Shapes follow Qwen3.5-27B as THUDM/slime scripts/models/qwen3.5-27B.sh configures it (--num-layers 64 "
    "--hidden-size 5120 --ffn-hidden-size 17408 --num-attention-heads 24 --num-query-groups 4 --kv-channels 256 "
    "--vocab-size 248320 --attention-output-gate --rotary-percent 0.25 --rotary-base 10000000), plus one MTP block "
    "(nextn_predict_layers 1). The linear-attention (Gated DeltaNet) figures, a full-attention layer every 4th, and "
    "context 262144 are those of passprice issue 3: ssm.conv_kernel 4, ssm.state_size 128, ssm.group_count 16, "
    "ssm.time_step_rank 48, ssm.inner_size 6144. Tensor names are llama.cpp's qwen35 ones; types as a Q4_K_M file "
    "(Q4_K matrices, Q6_K ffn_down and output, Q8_0 ssm_alpha/ssm_beta, F32 norms, vectors and ssm_conv1d)."
)

Q35_BLOCKS = 64  # main blocks; block 64 is the MTP block
Q35_EMBD = 5120
Q35_FFN = 17408
Q35_VOCAB = 248320
Q35_HEADS = 24
Q35_KV_HEADS = 4
Q35_HEAD_DIM = 256
Q35_SSM = {"conv_kernel": 4, "state_size": 128, "group_count": 16, "time_step_rank": 48, "inner_size": 6144}


def qwen35_full_attention(i: int) -> bool:
    """Whether main block ``i`` of the Qwen3.5-like checkpoint is a full-attention layer: every 4th, the last of
    each 4 (``(i + 1) % 4 == 0``); the others are Gated-DeltaNet layers."""
    return (i + 1) % 4 == 0


def _q35_ffn(b: str) -> list[Tensor]:
    return [
        (f"{b}.post_attention_norm.weight", (Q35_EMBD,), T.F32),
        (f"{b}.ffn_gate.weight", (Q35_EMBD, Q35_FFN), T.Q4_K),
        (f"{b}.ffn_up.weight", (Q35_EMBD, Q35_FFN), T.Q4_K),
        (f"{b}.ffn_down.weight", (Q35_FFN, Q35_EMBD), T.Q6_K),
    ]


def _q35_attention(b: str) -> list[Tensor]:
    """A gated full-attention layer: attn_q holds the queries and their output gate (2 × 24 × 256 = 12288)."""
    q = Q35_HEADS * Q35_HEAD_DIM  # 6144
    kv = Q35_KV_HEADS * Q35_HEAD_DIM  # 1024
    return [
        (f"{b}.attn_norm.weight", (Q35_EMBD,), T.F32),
        (f"{b}.attn_q.weight", (Q35_EMBD, 2 * q), T.Q4_K),
        (f"{b}.attn_k.weight", (Q35_EMBD, kv), T.Q4_K),
        (f"{b}.attn_v.weight", (Q35_EMBD, kv), T.Q4_K),
        (f"{b}.attn_q_norm.weight", (Q35_HEAD_DIM,), T.F32),
        (f"{b}.attn_k_norm.weight", (Q35_HEAD_DIM,), T.F32),
        (f"{b}.attn_output.weight", (q, Q35_EMBD), T.Q4_K),
        *_q35_ffn(b),
    ]


def _q35_recurrent(b: str) -> list[Tensor]:
    """A Gated-DeltaNet layer: q, k (16 groups × 128) and v (48 heads × 128) in attn_qkv (2048 + 2048 + 6144 =
    10240 channels, the conv's), the output gate z in attn_gate, a decay and a beta per value head."""
    s = Q35_SSM
    heads, inner = s["time_step_rank"], s["inner_size"]
    channels = inner + 2 * s["group_count"] * s["state_size"]  # 10240
    return [
        (f"{b}.attn_norm.weight", (Q35_EMBD,), T.F32),
        (f"{b}.attn_qkv.weight", (Q35_EMBD, channels), T.Q4_K),
        (f"{b}.attn_gate.weight", (Q35_EMBD, inner), T.Q4_K),
        (f"{b}.ssm_alpha.weight", (Q35_EMBD, heads), T.Q8_0),
        (f"{b}.ssm_beta.weight", (Q35_EMBD, heads), T.Q8_0),
        (f"{b}.ssm_a", (heads,), T.F32),
        (f"{b}.ssm_dt.bias", (heads,), T.F32),
        (f"{b}.ssm_conv1d.weight", (s["conv_kernel"], channels), T.F32),
        (f"{b}.ssm_norm.weight", (s["state_size"],), T.F32),
        (f"{b}.ssm_out.weight", (inner, Q35_EMBD), T.Q4_K),
        *_q35_ffn(b),
    ]


def _q35_mtp(b: str) -> list[Tensor]:
    """The MTP block: the previous hidden state and the next token's embedding, each normed, joined by eh_proj
    (2 × 5120 → 5120), then a full-attention layer and its FFN, then the shared head's norm (it reads the main
    model's token_embd and output)."""
    return [
        (f"{b}.nextn.enorm.weight", (Q35_EMBD,), T.F32),
        (f"{b}.nextn.hnorm.weight", (Q35_EMBD,), T.F32),
        (f"{b}.nextn.eh_proj.weight", (2 * Q35_EMBD, Q35_EMBD), T.Q4_K),
        *_q35_attention(b),
        (f"{b}.nextn.shared_head_norm.weight", (Q35_EMBD,), T.F32),
    ]


def qwen35_tensors() -> list[Tensor]:
    tensors: list[Tensor] = [("token_embd.weight", (Q35_EMBD, Q35_VOCAB), T.Q4_K)]
    for i in range(Q35_BLOCKS):
        b = f"blk.{i}"
        tensors += _q35_attention(b) if qwen35_full_attention(i) else _q35_recurrent(b)
    tensors += _q35_mtp(f"blk.{Q35_BLOCKS}")
    tensors += [("output_norm.weight", (Q35_EMBD,), T.F32), ("output.weight", (Q35_EMBD, Q35_VOCAB), T.Q6_K)]
    return tensors


def qwen35_meta() -> list[Meta]:
    a = "qwen35"
    return [
        ("general.type", "model", V.STRING),
        ("general.name", "Qwen3.5-27B-like (synthetic, header only)", V.STRING),
        ("general.file_type", 15, V.UINT32),  # MOSTLY_Q4_K_M
        ("general.quantization_version", 2, V.UINT32),
        (f"{a}.block_count", Q35_BLOCKS + 1, V.UINT32),
        (f"{a}.context_length", 262144, V.UINT32),
        (f"{a}.embedding_length", Q35_EMBD, V.UINT32),
        (f"{a}.feed_forward_length", Q35_FFN, V.UINT32),
        (f"{a}.attention.head_count", Q35_HEADS, V.UINT32),
        (f"{a}.attention.head_count_kv", Q35_KV_HEADS, V.UINT32),
        (f"{a}.attention.key_length", Q35_HEAD_DIM, V.UINT32),
        (f"{a}.attention.value_length", Q35_HEAD_DIM, V.UINT32),
        (f"{a}.attention.layer_norm_rms_epsilon", 1e-6, V.FLOAT32),
        (f"{a}.rope.freq_base", 10000000.0, V.FLOAT32),
        (f"{a}.rope.dimension_count", Q35_HEAD_DIM // 4, V.UINT32),
        (f"{a}.full_attention_interval", 4, V.UINT32),
        *((f"{a}.ssm.{k}", v, V.UINT32) for k, v in Q35_SSM.items()),
        (f"{a}.nextn_predict_layers", 1, V.UINT32),
    ]


def qwen35_27b_like(folder: Path = DATA) -> Path:
    """``{folder}/qwen35-27b-like.header.gguf``: 64 main blocks (48 Gated-DeltaNet, 16 full attention) and one MTP
    block. Returns its path."""
    return write_header_only(folder / f"{QWEN35}.header.gguf", "qwen35", qwen35_meta(), qwen35_tensors())


# --- Qwen3-Next-80B-A3B-like: the mixture-of-experts sibling --------------------------------------------------------

QWEN3NEXT = "qwen3next-80b-a3b-like"
#: Its published configuration (examples/configs/): passprice.synthetic builds the header from it.
QWEN3NEXT_CONFIG = REPO / "examples" / "configs" / "qwen3-next-80b-a3b.json"
QWEN3NEXT_NOTE = (
    "Its MTP layer is left out. Shapes: 48 blocks, every 4th full attention (16 query heads, 2 KV heads of 256, the "
    "query projection doubled for its output gate), the rest Gated DeltaNet (32 value heads, 16 key heads of 128, "
    "conv kernel 4); every block 512 routed experts of width 512 (10 a token) and a gated shared expert of 512."
)


def _qwen3next_built() -> Any:
    from passprice.synthetic import build, read_config
    from passprice.typemix import Mix

    return build(read_config(QWEN3NEXT_CONFIG), Mix.Q4_K_M, "Qwen3-Next-80B-A3B-like (synthetic, header only)")


def qwen3next_origin() -> str:
    """The registry entry's origin note: the library's, with :data:`QWEN3NEXT_NOTE`."""
    return str(_qwen3next_built().origin(QWEN3NEXT_NOTE))


def qwen3next_80b_a3b_like(folder: Path = DATA) -> Path:
    """``{folder}/qwen3next-80b-a3b-like.header.gguf``: 48 blocks (36 Gated-DeltaNet, 12 full attention), each with
    512 routed experts (10 used) and a shared expert, built by :mod:`passprice.synthetic` from the published
    configuration. Returns its path."""
    from passprice.synthetic import header_bytes

    path = folder / f"{QWEN3NEXT}.header.gguf"
    path.write_bytes(header_bytes(_qwen3next_built()))
    return path


#: Every synthetic checkpoint: entry name → (builder, origin note).
CHECKPOINTS: dict[str, tuple[Callable[[Path], Path], str]] = {
    QWEN35: (qwen35_27b_like, QWEN35_ORIGIN),
    QWEN3NEXT: (qwen3next_80b_a3b_like, qwen3next_origin()),
}


def main() -> None:
    """Rewrite ``tests/data/*.header.gguf`` and import them into ``registry/checkpoints/``."""
    from passprice.checkpoints import import_header, write_entry
    from passprice.gguf_header import read_header

    for name, (build, origin) in CHECKPOINTS.items():
        path = build(DATA)
        text = import_header(read_header(path, cache=False), name, origin)
        entry = REPO / "registry" / "checkpoints" / f"{name}.toml"
        write_entry(entry, text, force=True)
        print(f"{path.relative_to(REPO)} ({path.stat().st_size:,} bytes) -> {entry.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
