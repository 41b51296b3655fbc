"""Header-only Llama checkpoints, built from the models' published configurations and llama.cpp's quantisation mix,
for the measured runs of ``registry/measurements/`` (no public header of these files fits in the repository).

Each builder writes a GGUF v3 header with ``gguf.GGUFWriter`` (tests/hybrids.py's ``write_header_only``): the
metadata a llama.cpp ``convert`` writes for the architecture, and the tensor-info table, tensor names as llama.cpp's
``llama`` architecture names them, types as ``llama-quantize`` chose them in the builds of 2024
(``llama_tensor_get_type`` in ``llama.cpp``, ggml-org/llama.cpp):

- ``Q4_K_M``: every matrix Q4_K except ``output`` (Q6_K), and ``attn_v`` and ``ffn_down`` in the layers
  ``use_more_bits`` picks (the first and last eighth, and every third layer between: i < n/8, i ≥ 7n/8, or
  (i − n/8) mod 3 = 2), which are Q6_K; in a 70B model an ``attn_v`` left Q4_K becomes Q5_K. Norms F32.
- ``F16``: every matrix F16, norms F32.

The files' sizes equal what llama.cpp printed for the measured checkpoints (llama-bench's "size" column), which
tests/test_measurements.py checks: Llama-3-8B Q4_K_M 4.58 GiB, F16 14.96 GiB; Llama-3-70B Q4_K_M 39.59 GiB.

    .venv/bin/python tests/llamas.py            # rewrite the registry entries registry/checkpoints/llama3-*.toml
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from gguf import GGMLQuantizationType, GGUFValueType

sys.path.insert(0, str(Path(__file__).parent))

from hybrids import REPO, Meta, Tensor, write_header_only

T = GGMLQuantizationType
V = GGUFValueType

#: Published configurations (Hugging Face ``config.json`` of each model): hidden size, intermediate size, attention
#: heads, key-value heads, layers, vocabulary, context length, RoPE base.
LLAMA3_8B = {
    "hidden": 4096, "ffn": 14336, "heads": 32, "kv_heads": 8, "layers": 32, "vocab": 128256, "context": 8192,
    "rope": 500000.0,
}
LLAMA3_70B = {
    "hidden": 8192, "ffn": 28672, "heads": 64, "kv_heads": 8, "layers": 80, "vocab": 128256, "context": 8192,
    "rope": 500000.0,
}
CONFIG_CITE = {
    "Meta-Llama-3-8B": "meta-llama/Meta-Llama-3-8B config.json (hidden_size 4096, intermediate_size 14336, "
    "num_attention_heads 32, num_key_value_heads 8, num_hidden_layers 32, vocab_size 128256, "
    "max_position_embeddings 8192, rope_theta 500000)",
    "Meta-Llama-3-70B": "meta-llama/Meta-Llama-3-70B config.json (hidden_size 8192, intermediate_size 28672, "
    "num_attention_heads 64, num_key_value_heads 8, num_hidden_layers 80, vocab_size 128256, "
    "max_position_embeddings 8192, rope_theta 500000)",
}

#: ``general.file_type`` (llama_ftype): F16 1, Q4_K_M 15.
FILE_TYPE = {"F16": 1, "Q4_K_M": 15}


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's ``use_more_bits``: the layers a K-quant mix gives more bits (first and last eighth, every third
    between)."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def llama_tensors(cfg: dict[str, float], ftype: str) -> list[Tensor]:
    """The tensor table of a ``llama`` checkpoint of configuration ``cfg`` quantised as ``ftype`` (``Q4_K_M`` or
    ``F16``), in llama.cpp's order: the embedding, each block, the final norm, the head."""
    h, ffn, heads, kv, n = (int(cfg[k]) for k in ("hidden", "ffn", "heads", "kv_heads", "layers"))
    vocab = int(cfg["vocab"])
    kv_width = kv * (h // heads)
    base = T.Q4_K if ftype == "Q4_K_M" else T.F16
    out: list[Tensor] = [("token_embd.weight", (h, vocab), base)]
    for i in range(n):
        b = f"blk.{i}"
        v = down = base
        if ftype == "Q4_K_M":
            if use_more_bits(i, n):
                v = down = T.Q6_K
            if n == 80 and v == T.Q4_K:  # llama.cpp's MODEL_70B rule for attn_v
                v = T.Q5_K
        out += [
            (f"{b}.attn_norm.weight", (h,), T.F32),
            (f"{b}.attn_q.weight", (h, h), base),
            (f"{b}.attn_k.weight", (h, kv_width), base),
            (f"{b}.attn_v.weight", (h, kv_width), v),
            (f"{b}.attn_output.weight", (h, h), base),
            (f"{b}.ffn_norm.weight", (h,), T.F32),
            (f"{b}.ffn_gate.weight", (h, ffn), base),
            (f"{b}.ffn_up.weight", (h, ffn), base),
            (f"{b}.ffn_down.weight", (ffn, h), down),
        ]
    out += [("output_norm.weight", (h,), T.F32), ("output.weight", (h, vocab), T.Q6_K if ftype == "Q4_K_M" else base)]
    return out


def llama_meta(cfg: dict[str, float], name: str, ftype: str) -> list[Meta]:
    """The metadata llama.cpp's converter writes for a ``llama`` checkpoint (tokenizer arrays left out: the pricer
    reads the vocabulary from ``token_embd``)."""
    a = "llama"
    return [
        ("general.name", f"{name} (synthetic, header only)", V.STRING),
        ("general.file_type", FILE_TYPE[ftype], V.UINT32),
        ("general.quantization_version", 2, V.UINT32),
        (f"{a}.vocab_size", int(cfg["vocab"]), V.UINT32),
        (f"{a}.context_length", int(cfg["context"]), V.UINT32),
        (f"{a}.embedding_length", int(cfg["hidden"]), V.UINT32),
        (f"{a}.block_count", int(cfg["layers"]), V.UINT32),
        (f"{a}.feed_forward_length", int(cfg["ffn"]), V.UINT32),
        (f"{a}.rope.dimension_count", int(cfg["hidden"]) // int(cfg["heads"]), V.UINT32),
        (f"{a}.attention.head_count", int(cfg["heads"]), V.UINT32),
        (f"{a}.attention.head_count_kv", int(cfg["kv_heads"]), V.UINT32),
        (f"{a}.attention.layer_norm_rms_epsilon", 1e-5, V.FLOAT32),
        (f"{a}.rope.freq_base", float(cfg["rope"]), V.FLOAT32),
    ]


#: Every Llama checkpoint the measured runs name: entry name → (model, configuration, file type).
CHECKPOINTS: dict[str, tuple[str, dict[str, float], str]] = {
    "llama3-8b-q4_k_m": ("Meta-Llama-3-8B", LLAMA3_8B, "Q4_K_M"),
    "llama3-8b-f16": ("Meta-Llama-3-8B", LLAMA3_8B, "F16"),
    "llama3-70b-q4_k_m": ("Meta-Llama-3-70B", LLAMA3_70B, "Q4_K_M"),
}


def origin(entry: str) -> str:
    """The ``origin`` note of a built entry: how it was made and from what."""
    model, _, ftype = CHECKPOINTS[entry]
    return (
        f"Synthetic, header only: written by tests/llamas.py ({entry}) with gguf.GGUFWriter; no weights exist. Shapes "
        f"from {CONFIG_CITE[model]}; types as llama.cpp's llama-quantize chooses them for {ftype} "
        "(llama_tensor_get_type, 2024 builds: Q4_K matrices, Q6_K output and the use_more_bits layers' attn_v and "
        "ffn_down, Q5_K attn_v elsewhere in a 70B model; F16 matrices for F16; F32 norms). Its size equals what "
        "llama-bench printed for the measured file."
    )


def build(entry: str, folder: Path) -> Path:
    """Write ``{folder}/{entry}.header.gguf`` and return its path."""
    model, cfg, ftype = CHECKPOINTS[entry]
    return write_header_only(
        folder / f"{entry}.header.gguf", "llama", llama_meta(cfg, model, ftype), llama_tensors(cfg, ftype)
    )


def main() -> None:
    """Rewrite ``registry/checkpoints/llama3-*.toml`` from freshly built headers."""
    from passprice.checkpoints import import_header, write_entry
    from passprice.gguf_header import read_header

    with tempfile.TemporaryDirectory() as tmp:
        for entry in CHECKPOINTS:
            path = build(entry, Path(tmp))
            text = import_header(read_header(path, cache=False), entry, origin(entry))
            target = REPO / "registry" / "checkpoints" / f"{entry}.toml"
            write_entry(target, text, force=True)
            print(f"{entry}: {path.stat().st_size:,} header bytes -> {target.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
