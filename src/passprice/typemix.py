"""A quantized GGUF's tensor types follow from its file type by llama.cpp's rules, so a header built from a published
configuration carries the type mix ``llama-quantize`` would have written, tensor by tensor.

Port of the rules of llama.cpp's ``src/llama-quant.cpp`` (ggml-org/llama.cpp, ``tensor_allows_quantization`` at line
289, ``llama_tensor_get_type_impl`` at 424, ``tensor_type_fallback`` at 374, ``init_quantize_state_counters`` at 857;
read at commit
``007dbbf3fd17eefe9b47fee45f48f7ba5e62b714``) for the file types passprice builds: ``Q4_K_M``, ``Q4_0``, ``Q8_0``,
``F16``, ``BF16``, ``MXFP4_MOE`` and ``NVFP4``. The rules read the tensors in the order ``llama-quantize`` does
(``llama_model_loader::weight_name_comparer``: by block index, tensors outside a block first, then by name), which is
also the order it writes them in; :func:`assign` sorts them so. Checked against a real file:
DeepSeek-R1-Distill-Qwen-7B Q4_K_M's 339 tensor types are reproduced exactly (``tests/test_synthetic.py``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

import attrs

from passprice.errors import InputError

#: ``blk.N.`` at the start of a tensor name.
_BLOCK = re.compile(r"^blk\.([0-9]+)\.")


class Mix(enum.Enum):
    """A GGUF file type (llama.cpp's ``llama_ftype``) whose type mix :func:`assign` reproduces. The value is its
    name on the command line; :attr:`file_type` the id ``general.file_type`` records."""

    Q4_K_M = "Q4_K_M"
    Q4_0 = "Q4_0"
    Q8_0 = "Q8_0"
    F16 = "F16"
    BF16 = "BF16"
    MXFP4_MOE = "MXFP4_MOE"
    NVFP4 = "NVFP4"

    @classmethod
    def parse(cls, text: str) -> Mix:
        """A mix by name, case-insensitive; ``MXFP4`` is ``MXFP4_MOE``. Raises :class:`InputError` naming the
        accepted ones."""
        key = text.upper()
        if key == "MXFP4":
            key = "MXFP4_MOE"
        for m in cls:
            if m.value == key:
                return m
        known = ", ".join(m.value for m in cls)
        raise InputError(f"{text!r} is not a type mix passprice builds (one of {known}, or MXFP4)")

    @property
    def file_type(self) -> int:
        """``general.file_type``: the ``gguf.LlamaFileType`` id (Q4_K_M 15, Q4_0 2, Q8_0 7, F16 1, BF16 32,
        MXFP4_MOE 38, NVFP4 39)."""
        from gguf import LlamaFileType

        return int(LlamaFileType[f"MOSTLY_{self.value}"].value)

    @property
    def default(self) -> str:
        """The GGML type of a tensor no rule singles out (``llama_ftype_get_default_type``)."""
        return {
            Mix.Q4_K_M: "Q4_K",
            Mix.Q4_0: "Q4_0",
            Mix.Q8_0: "Q8_0",
            Mix.F16: "F16",
            Mix.BF16: "BF16",
            Mix.MXFP4_MOE: "MXFP4",
            Mix.NVFP4: "NVFP4",
        }[self]

    @property
    def quantized(self) -> bool:
        """Whether the default type is a block-quantized one (the per-tensor rules apply only then)."""
        return self not in (Mix.F16, Mix.BF16)


@attrs.frozen
class Planned:
    """A tensor before its type is chosen: ``name``, ``dims`` (GGUF order, row length first), and ``kept``: the type
    it keeps when llama.cpp does not quantize it (``F32`` for norms, vectors, routers, conv kernels)."""

    name: str
    dims: tuple[int, ...]
    kept: str = "F32"


#: Tensors ``llama-quantize`` never quantizes, by a part of their name (``tensor_allows_quantization``; the ones a
#: language model of the architectures built here can hold).
_NEVER = ("_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d", "attn_rel_b.weight", "position_embd")


def quantizable(t: Planned) -> bool:
    """Whether ``llama-quantize`` quantizes ``t``: a 2-D or 3-D tensor whose name ends in ``weight``, except norms,
    expert routers (``ffn_gate_inp``), conv kernels and position embeddings (``tensor_allows_quantization``)."""
    if len(t.dims) < 2:
        return False
    return t.name.endswith("weight") and not any(part in t.name for part in _NEVER)


class _Category(enum.Enum):
    """llama.cpp's ``tensor_category``, from the tensor's name."""

    TOKEN_EMBD = "token_embd"
    OUTPUT = "output"
    ATTENTION_V = "attn_v"  # attn_v, attn_qkv and attn_kv_b: the tensors its attention-V rule counts
    ATTENTION_K = "attn_k"
    ATTENTION_OUTPUT = "attn_output"
    FFN_DOWN = "ffn_down"
    OTHER = "other"


def _category(name: str) -> _Category:
    """``tensor_get_category``, for the categories whose rules the mixes built here use."""
    if name == "output.weight":
        return _Category.OUTPUT
    if name == "token_embd.weight":
        return _Category.TOKEN_EMBD
    if any(part in name for part in ("attn_qkv.weight", "attn_kv_b.weight", "attn_v.weight")):
        return _Category.ATTENTION_V
    if "attn_k.weight" in name:
        return _Category.ATTENTION_K
    if "attn_q.weight" in name:
        return _Category.OTHER
    if "attn_output.weight" in name:
        return _Category.ATTENTION_OUTPUT
    if "ffn_up" in name or "ffn_gate" in name:
        return _Category.OTHER
    if "ffn_down" in name:
        return _Category.FFN_DOWN
    return _Category.OTHER


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's ``use_more_bits``: the first and last eighth of the layers, and every third one between."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def _block_elems(name: str) -> int:
    from passprice import ggml

    return ggml.by_name(name).block_elems


#: ``tensor_type_fallback``: the type a tensor whose rows do not fill the chosen type's block falls back to
#: (ggml-org/llama.cpp src/llama-quant.cpp at 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714, ``tensor_type_fallback`` at
#: line 374, its ``switch (target_type)`` at 385: ``case GGML_TYPE_Q4_K: return_type = GGML_TYPE_Q5_0`` at 400,
#: Q5_K → Q5_1 at 401, Q6_K → Q8_0 at 402, Q2_K/Q3_K → Q4_0, IQ4_XS → IQ4_NL, F16 when even that does not fit). A
#: tensor's own type plays no part in the choice: ``llama_tensor_get_type`` (line 679) returns it only for a tensor
#: ``tensor_allows_quantization`` (line 289) refuses (lines 680-681: norms, routers, 1-D), and its rules
#: (``llama_tensor_get_type_impl``, lines 424-676) have none keeping an MXFP4 tensor MXFP4 under Q4_K_M, so
#: gpt-oss's 2,880-wide experts, Q4_K or Q6_K by the rules, fall back to Q5_0 or Q8_0; from a file whose experts are
#: MXFP4 already ``llama_model_quantize_impl`` (line 877) writes them so only with ``--allow-requantize``
#: ("requantizing from type %s is disabled" without it, line 1236), and published gpt-oss K-mix files keep them
#: MXFP4 by per-tensor overrides instead (:func:`passprice.synthetic.requantized_experts` warns; moe42,
#: ``tests/test_moe42.py`` pins gpt-oss-120b's types and bytes). Every line number checked against the stored text of
#: that commit's file (session 33, moe43: 61,384 characters, each line as cited).
_FALLBACK = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0", "Q2_K": "Q4_0", "Q3_K": "Q4_0", "IQ4_XS": "IQ4_NL"}


def order(tensors: Sequence[Planned]) -> list[Planned]:
    """``tensors`` in ``llama-quantize``'s order (``weight_name_comparer``): tensors outside a block first, then
    block by block, each group by name."""

    def key(t: Planned) -> tuple[int, str]:
        m = _BLOCK.match(t.name)
        return (int(m.group(1)) if m else -1, t.name)

    return sorted(tensors, key=key)


@attrs.frozen
class Model:
    """What the rules read of the model besides its tensors: ``arch`` (GGUF architecture), ``layers``
    (``block_count``), ``experts`` (``expert_count``, 0 for a dense model), ``large`` (llama.cpp's
    ``LLM_TYPE_70B``: an 80-layer llama or qwen2 with GQA, whose attention V gets Q5_K), ``tied`` (no
    ``output.weight``: the embedding table is quantized as the head)."""

    arch: str
    layers: int
    experts: int = 0
    large: bool = False
    tied: bool = False


def assign(tensors: Sequence[Planned], model: Model, mix: Mix) -> list[tuple[Planned, str]]:
    """Each tensor of ``tensors`` with the GGML type name ``llama-quantize`` gives it under ``mix``, in its order
    (:func:`order`).

    The rules (``llama_tensor_get_type_impl``, for the mixes of :class:`Mix`): a tensor it does not quantize keeps
    its type (:func:`quantizable`). The head (and the embedding table when tied): Q8_0 under MXFP4_MOE or when its
    rows do not fill the default type's block, else Q6_K (Q8_0 stays Q8_0). Under MXFP4_MOE every 3-D tensor (the
    experts) is MXFP4 and every other matrix Q8_0. Under Q4_K_M: the attention-V tensors (attn_v, attn_qkv,
    attn_kv_b), counted in order, and ``ffn_down`` of each layer (the layer read from the name when the model has
    experts) are Q6_K where ``use_more_bits``; an 80-layer GQA model's attention V Q5_K; with 8 experts, attention K
    and V Q8_0 and the attention output Q5_K. Then a type whose block the rows do not fill falls back
    (Q4_K → Q5_0, Q6_K → Q8_0, Q5_K → Q5_1, else F16 when even that does not fit).

    Raises :class:`InputError` naming a tensor whose rows fill no block of its type and that has no fallback (a
    Q4_0, Q8_0, MXFP4 or NVFP4 tensor whose row length is not a multiple of 32, 32, 32 or 64).
    """
    ordered = order(tensors)
    experts = max(1, model.experts)
    attention_v = sum(1 for t in ordered if quantizable(t) and _category(t.name) is _Category.ATTENTION_V)
    i_v = i_down = 0
    out: list[tuple[Planned, str]] = []
    for t in ordered:
        if not quantizable(t):
            out.append((t, t.kept))
            continue
        cat = _category(t.name)
        chosen = mix.default
        if mix.quantized:
            if cat is _Category.OUTPUT or (model.tied and cat is _Category.TOKEN_EMBD):
                if mix is Mix.MXFP4_MOE or t.dims[0] % _block_elems(chosen) != 0:
                    chosen = "Q8_0"
                elif chosen != "Q8_0":
                    chosen = "Q6_K"
            elif mix is Mix.MXFP4_MOE:
                chosen = "MXFP4" if len(t.dims) > 2 and t.dims[2] > 1 else "Q8_0"
            elif cat is _Category.TOKEN_EMBD:
                pass
            elif cat is _Category.ATTENTION_V:
                if mix is Mix.Q4_K_M and use_more_bits(i_v, attention_v):
                    chosen = "Q6_K"
                if model.large and chosen in ("Q3_K", "Q4_K"):
                    chosen = "Q5_K"
                if experts == 8:
                    chosen = "Q8_0"
                i_v += 1
            elif cat is _Category.ATTENTION_K and experts == 8:
                chosen = "Q8_0"
            elif cat is _Category.FFN_DOWN:
                layer = i_down
                if experts > 1:
                    m = _BLOCK.match(t.name)
                    layer = int(m.group(1)) if m else i_down
                if mix is Mix.Q4_K_M and use_more_bits(layer, model.layers):
                    chosen = "Q6_K"
                i_down += 1
            elif cat is _Category.ATTENTION_OUTPUT and experts == 8 and mix is Mix.Q4_K_M:
                chosen = "Q5_K"
            chosen = _fallback(t, chosen)
        out.append((t, chosen))
    return out


def _fallback(t: Planned, chosen: str) -> str:
    """``tensor_type_fallback``: a type whose block the tensor's rows do not fill falls back, or is refused."""
    if t.dims[0] % _block_elems(chosen) == 0:
        return chosen
    fallback = _FALLBACK.get(chosen)
    if fallback is None:
        raise InputError(
            f"tensor {t.name!r}: rows of {t.dims[0]} elements fill no {chosen} block ({_block_elems(chosen)} "
            "elements) and llama.cpp defines no fallback for it: choose another type mix"
        )
    return fallback if t.dims[0] % _block_elems(fallback) == 0 else "F16"
