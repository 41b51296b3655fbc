"""A checkpoint the pricer needs is its header, and a header follows from the model's published configuration: a
header-only GGUF is built from a ``config.json`` and a type mix, with the tensor names llama.cpp gives the
architecture and the types ``llama-quantize`` would choose, and no weights.

:func:`read_config` reads a published configuration (Hugging Face ``config.json`` keys, optionally wrapped as
``{"source": URL, "config": {...}}``), validated against ``schema/model-config.schema.json``. :func:`plan` lays out its
tensor table (names and GGUF dims of llama.cpp's ``convert_hf_to_gguf.py`` for ``llama``, ``qwen2``, ``qwen3``,
``qwen3_moe``, ``qwen3_next``, ``gpt_oss``, ``mixtral`` (and ``llama`` with routed experts), ``mistral`` and
``deepseek_v2``/``deepseek_v3``, including DeepSeek's multi-head latent
attention in both header generations), :func:`metadata` its GGUF keys, :mod:`passprice.typemix` its types, and
:func:`write_header` writes the header with ``gguf.GGUFWriter`` (metadata and tensor-info table; tensor offsets laid
out as if the data followed). ``passprice synth`` runs it from the command line.

A real header is the better source where one exists: built from DeepSeek-R1-Distill-Qwen-7B's published config with
the Q4_K_M mix, the tensor table (names, dims, types, offsets) equals the real file's (``tests/test_synthetic.py``).
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from passprice import schema
from passprice.errors import InputError, SchemaError
from passprice.files import read_regular, refuse_bom
from passprice.typemix import Mix, Model, Planned, assign

#: Hugging Face ``model_type`` → GGUF ``general.architecture`` (llama.cpp's ``MODEL_ARCH_NAMES``).
ARCHITECTURES: Mapping[str, str] = {
    "llama": "llama",
    # Mixtral is llama's architecture with routed experts (llama.cpp's convert_hf_to_gguf.py converts
    # MixtralForCausalLM as LlamaModel: arch llama, expert_count and expert_used_count, the experts stacked in
    # ffn_{gate,up,down}_exps).
    "mixtral": "llama",
    # Mistral too: convert_hf_to_gguf.py registers MistralForCausalLM with LlamaModel (arch llama). llama.cpp's llama
    # architecture has no sliding window, so a configuration's sliding_window (Mistral-7B-v0.1's 4,096) is not
    # written and every position attends to the whole context, as llama.cpp serves it (Built.origin says so).
    "mistral": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3moe",
    "qwen3_next": "qwen3next",
    "gpt_oss": "gpt-oss",
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
}

#: Model types llama.cpp builds dense whatever their configuration says of experts, and the type of their mixture
#: of experts: a configuration of these declaring routed experts is refused (built dense, its header would carry an
#: expert count and no expert, and be priced as a dense model).
DENSE_ONLY: Mapping[str, str] = {"qwen2": "qwen2_moe (not built here)", "qwen3": "qwen3_moe", "mistral": "mixtral"}

#: The most bytes a built checkpoint's tensors may take (1 PiB): past it the configuration is no model a card holds,
#: and offsets would near the 64-bit range GGUF stores them in.
MAX_MODEL_BYTES = 1 << 50


class Latent(enum.Enum):
    """How a DeepSeek (MLA) header stores its attention (the two generations llama.cpp has written).

    ``split`` (llama.cpp since April 2025, ggml-org/llama.cpp#12801): ``attn_k_b`` and ``attn_v_b`` per head, and
    ``head_count_kv`` = 1, ``key_length`` = ``kv_lora_rank`` + rope width, ``value_length`` = ``kv_lora_rank``,
    ``key_length_mla`` / ``value_length_mla`` the per-head widths. ``joined`` (earlier files): one ``attn_kv_b``,
    ``head_count_kv`` = heads, ``key_length`` = nope + rope width, ``value_length`` = ``v_head_dim``."""

    SPLIT = "split"
    JOINED = "joined"


@attrs.frozen
class ModelConfig:
    """The keys of a published Hugging Face ``config.json`` the builder reads (their names and meanings are the
    configuration's; a key not listed is ignored). Counts are whole numbers, widths in elements."""

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    vocab_size: int
    intermediate_size: int = 0
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    max_position_embeddings: int = 4096
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    rope_scaling: dict[str, Any] | None = None
    sliding_window: int | None = None
    # Mixtures of experts: the routed experts go by three names (Qwen, gpt-oss, DeepSeek).
    num_experts: int | None = None
    num_local_experts: int | None = None
    n_routed_experts: int | None = None
    num_experts_per_tok: int | None = None
    moe_intermediate_size: int | None = None
    shared_expert_intermediate_size: int | None = None
    n_shared_experts: int | None = None
    first_k_dense_replace: int = 0
    norm_topk_prob: bool | None = None
    scoring_func: str | None = None
    routed_scaling_factor: float | None = None
    n_group: int | None = None
    topk_group: int | None = None
    # DeepSeek's multi-head latent attention and its multi-token-prediction module.
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    num_nextn_predict_layers: int = 0
    # Qwen3-Next's Gated-DeltaNet layers.
    linear_num_value_heads: int | None = None
    linear_num_key_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int | None = None
    full_attention_interval: int | None = None
    partial_rotary_factor: float | None = None
    # Qwen-MoE's dense blocks among the routed ones (config keys read only to refuse them in a mixture of experts,
    # ignored on a dense model: see config_from_document).
    decoder_sparse_step: int | None = None
    mlp_only_layers: tuple[int, ...] = ()

    @property
    def arch(self) -> str:
        """The GGUF architecture (:data:`ARCHITECTURES`)."""
        return ARCHITECTURES[self.model_type]

    @property
    def kv_heads(self) -> int:
        """KV heads: ``num_key_value_heads``, else one per query head."""
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def head(self) -> int:
        """A head's width: ``head_dim``, else hidden / heads."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def experts(self) -> int:
        """Routed experts (0 for a dense model)."""
        return self.num_experts or self.num_local_experts or self.n_routed_experts or 0

    @property
    def expert_ffn(self) -> int:
        """One expert's FFN width: ``moe_intermediate_size`` (gpt-oss: ``intermediate_size``)."""
        return self.moe_intermediate_size or self.intermediate_size


@attrs.frozen
class Published:
    """A configuration and where it was published (``source``: a URL, or the file it was read from), and ``file``,
    what errors about it name: the file it was read from (with ``: config`` when the configuration is wrapped in
    one), ``source`` when not given."""

    config: ModelConfig
    source: str
    file: str = ""
    #: Whether ``source`` says where the configuration was published (a wrapped document's ``source``); a bare
    #: ``config.json`` records no such place, ``source`` being only the file it was read from.
    stated: bool = True

    @property
    def where(self) -> str:
        """What an error names: :attr:`file`, else :attr:`source`."""
        return self.file or self.source


_converter = cattrs.Converter()


def config_from_document(document: Mapping[str, Any], source: str, folder: Path | None = None) -> Published:
    """The configuration a parsed ``config.json`` document holds (bare, or wrapped as ``{"source", "config"}``),
    validated against ``schema/model-config.schema.json``.

    Raises :class:`passprice.errors.SchemaError` listing every problem (key path and what was wrong), and
    :class:`InputError` for keys that agree with the schema but not with each other (query heads not a multiple of
    KV heads, no head width, more dense leading layers than layers, more experts a token than experts, dense
    blocks among routed ones: ``decoder_sparse_step`` other than 1, ``mlp_only_layers`` not empty, in a mixture of
    experts; a dense model's are ignored)."""
    try:
        schema.validate(document, "model-config", source, folder)
    except SchemaError as e:  # a model type synth does not build: say what does instead
        hint = (" — synth builds no other; for another architecture import a real GGUF header of the model "
                "(`passprice import FILE.gguf`: the header alone is enough, e.g. the first megabytes of the file)")
        raise SchemaError(e.source, [
            p + hint if p.startswith(("model_type:", "config.model_type:")) and "is not allowed here" in p else p
            for p in e.problems
        ]) from None
    body = document.get("config", document)
    where = source
    if "config" in document:
        source = str(document["source"])
        where = f"{where}: config"
    config = _converter.structure(dict(body), ModelConfig)
    if config.num_attention_heads % config.kv_heads != 0:
        raise InputError(
            f"{where}: num_attention_heads {config.num_attention_heads} is not a multiple of num_key_value_heads "
            f"{config.kv_heads}"
        )
    if config.head < 1:
        raise InputError(
            f"{where}: hidden_size {config.hidden_size} over {config.num_attention_heads} heads leaves no head width: "
            "give head_dim"
        )
    if config.first_k_dense_replace > config.num_hidden_layers:
        raise InputError(
            f"{where}: first_k_dense_replace {config.first_k_dense_replace} is past num_hidden_layers "
            f"{config.num_hidden_layers}"
        )
    # Qwen-MoE makes block i dense when i is in mlp_only_layers or (i + 1) is no multiple of decoder_sparse_step;
    # passprice builds a routed FFN in every block (as llama.cpp's qwen3moe header has one in every block), so a
    # configuration with dense blocks is refused by the key, never built as all-MoE. On a dense model (no experts)
    # every block is dense whatever they say: ignored (tests/test_fix157.py: llama-3.1-8b.json with
    # "decoder_sparse_step": 2 was refused as if passprice built it routed).
    if config.experts and config.decoder_sparse_step not in (None, 1):
        digits = len(str(abs(config.decoder_sparse_step)))
        shown = f"{config.decoder_sparse_step}" if digits <= 40 else f"of {digits:,} digits"
        raise InputError(
            f"{where}: decoder_sparse_step {shown}: passprice builds a routed FFN in every block (a step of 1); a "
            "step other than 1 makes blocks dense, which it does not build"
        )
    if config.experts and config.mlp_only_layers:
        first = ", ".join(str(i) for i in config.mlp_only_layers[:3])
        more = f" … ({len(config.mlp_only_layers):,} layers)" if len(config.mlp_only_layers) > 3 else ""
        raise InputError(
            f"{where}: mlp_only_layers [{first}{more}]: passprice builds a routed FFN in every block; dense blocks "
            "among routed ones are not built (give [])"
        )
    if config.experts and config.model_type in DENSE_ONLY:
        key = "num_experts" if config.num_experts else "num_local_experts" if config.num_local_experts else (
            "n_routed_experts")
        raise InputError(
            f"{where}: {key} {config.experts}: a {config.model_type} configuration is dense in llama.cpp, which would "
            f"write its expert count but no expert (give model_type {DENSE_ONLY[config.model_type]} for its mixture "
            "of experts)"
        )
    counts = {k: getattr(config, k) for k in ("num_experts", "num_local_experts", "n_routed_experts")}
    given = {k: v for k, v in counts.items() if v is not None}
    if len(set(given.values())) > 1:
        raise InputError(
            f"{where}: " + " and ".join(f"{k} {v}" for k, v in given.items()) + " disagree: give the routed experts "
            "once"
        )
    if config.experts and config.arch == "llama":
        # llama.cpp's llama architecture (Mixtral's) sizes an expert by feed_forward_length and has no shared
        # expert: a width or a shared expert the header cannot carry would be built into tensors the pricer then
        # reads against another width, or left out.
        if config.moe_intermediate_size not in (None, config.intermediate_size):
            raise InputError(
                f"{where}: moe_intermediate_size {config.moe_intermediate_size}: a {config.model_type} mixture's "
                f"experts are intermediate_size ({config.intermediate_size}) wide in llama.cpp, which writes no "
                "expert width (give intermediate_size the expert width, or leave moe_intermediate_size out)"
            )
        if config.first_k_dense_replace:
            raise InputError(
                f"{where}: first_k_dense_replace {config.first_k_dense_replace}: a {config.model_type} mixture routes "
                "every block in llama.cpp (no leading dense blocks; a model with them is another architecture: "
                "deepseek)"
            )
        shared = [k for k in ("shared_expert_intermediate_size", "n_shared_experts") if getattr(config, k)]
        if shared:
            raise InputError(
                f"{where}: {shared[0]} {getattr(config, shared[0])}: a {config.model_type} mixture has no shared "
                "expert in llama.cpp (a model with one is another architecture: qwen2_moe, deepseek)"
            )
    if config.num_experts_per_tok is not None and config.num_experts_per_tok > config.experts:
        raise InputError(
            f"{where}: num_experts_per_tok {config.num_experts_per_tok} is more than the {config.experts} experts"
        )
    return Published(config, source, where, stated="config" in document)


def looks_like_config(path: Path) -> bool:
    """Whether the regular file ``path`` opens as a JSON object (its first byte past white space ``{``), as a
    ``config.json`` does: what a GGUF reader refusing its magic can send to ``passprice synth`` (walkthrough 39:
    ``import config.json`` said only "bad magic"). Reads at most 4 KiB; raises nothing (``False`` when unreadable)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            start = f.read(4096)
    except (OSError, ValueError):
        return False
    return start.lstrip(b" \t\r\n").startswith(b"{")


def read_config(path: Path, folder: Path | None = None) -> Published:
    """The configuration in the JSON file ``path`` (:func:`config_from_document`). Raises :class:`InputError` when
    the file cannot be read or is not JSON (naming its line and column), or what :func:`config_from_document`
    raises."""
    data = read_regular(path, schema.MAX_TOML_BYTES)  # a FIFO or a device is refused before a byte is read
    refuse_bom(path, data)  # as every text file passprice reads (json.loads said "Unexpected UTF-8 BOM")
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_repeats,
                              parse_float=schema.parse_float)
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except (RecursionError, ValueError) as e:
        raise InputError(f"{path}: not valid JSON: {str(e).split(';')[0]}") from None
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a model configuration (a JSON object)")
    return config_from_document(document, str(path), folder)


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are distinct (``json`` keeps the last of a repeated key silently: a config naming
    its ``source`` twice would be cited by whichever came second)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a configuration holds")


# --- the tensor table --------------------------------------------------------------------------------------------


def _p(name: str, *dims: int) -> Planned:
    return Planned(name, tuple(dims))


def _standard_attention(c: ModelConfig, b: str) -> list[Planned]:
    """A GQA attention block as llama.cpp names it: q, k, v, output (their biases when the architecture has them),
    qwen3's per-head q/k norms, gpt-oss's per-head sinks."""
    q, kv = c.num_attention_heads * c.head, c.kv_heads * c.head
    bias = c.model_type == "qwen2" or c.attention_bias
    out = [_p(f"{b}.attn_norm.weight", c.hidden_size)]
    out += [_p(f"{b}.attn_q.weight", c.hidden_size, q), _p(f"{b}.attn_k.weight", c.hidden_size, kv)]
    out += [_p(f"{b}.attn_v.weight", c.hidden_size, kv), _p(f"{b}.attn_output.weight", q, c.hidden_size)]
    if bias:
        out += [_p(f"{b}.attn_q.bias", q), _p(f"{b}.attn_k.bias", kv), _p(f"{b}.attn_v.bias", kv)]
    if c.model_type == "gpt_oss":
        out += [_p(f"{b}.attn_output.bias", c.hidden_size), _p(f"{b}.attn_sinks.weight", c.num_attention_heads)]
    if c.model_type in ("qwen3", "qwen3_moe"):
        out += [_p(f"{b}.attn_q_norm.weight", c.head), _p(f"{b}.attn_k_norm.weight", c.head)]
    return out


def _dense_ffn(c: ModelConfig, b: str, width: int, norm: str = "ffn_norm") -> list[Planned]:
    return [
        _p(f"{b}.{norm}.weight", c.hidden_size),
        _p(f"{b}.ffn_gate.weight", c.hidden_size, width),
        _p(f"{b}.ffn_up.weight", c.hidden_size, width),
        _p(f"{b}.ffn_down.weight", width, c.hidden_size),
    ]


def _routed(c: ModelConfig, b: str) -> list[Planned]:
    """The routed experts: the router ``ffn_gate_inp`` [hidden, experts] and the stacked expert matrices
    ``ffn_{gate,up}_exps`` [hidden, expert FFN, experts], ``ffn_down_exps`` [expert FFN, hidden, experts]."""
    e, f, n = c.hidden_size, c.expert_ffn, c.experts
    out = [
        _p(f"{b}.ffn_gate_inp.weight", e, n),
        _p(f"{b}.ffn_gate_exps.weight", e, f, n),
        _p(f"{b}.ffn_up_exps.weight", e, f, n),
        _p(f"{b}.ffn_down_exps.weight", f, e, n),
    ]
    if c.model_type == "gpt_oss":
        out += [
            _p(f"{b}.ffn_gate_inp.bias", n),
            _p(f"{b}.ffn_gate_exps.bias", f, n),
            _p(f"{b}.ffn_up_exps.bias", f, n),
            _p(f"{b}.ffn_down_exps.bias", e, n),
        ]
    return out


def _shared(c: ModelConfig, b: str, width: int) -> list[Planned]:
    """A shared expert every token passes through: ``ffn_{gate,up,down}_shexp``."""
    return [
        _p(f"{b}.ffn_gate_shexp.weight", c.hidden_size, width),
        _p(f"{b}.ffn_up_shexp.weight", c.hidden_size, width),
        _p(f"{b}.ffn_down_shexp.weight", width, c.hidden_size),
    ]


def _mla(c: ModelConfig, b: str, latent: Latent) -> list[Planned]:
    """DeepSeek's multi-head latent attention (DeepSeek-V2 report, arXiv:2405.04434, §2.1): queries through a
    low-rank ``attn_q_a``/``attn_q_b`` pair (or one ``attn_q`` without ``q_lora_rank``), the latent and the rope key
    from ``attn_kv_a_mqa``, the per-head keys and values expanded by ``attn_kv_b`` (joined) or ``attn_k_b`` and
    ``attn_v_b`` (split)."""
    heads, e = c.num_attention_heads, c.hidden_size
    rope, nope, v, rank = (int(c.qk_rope_head_dim or 0), int(c.qk_nope_head_dim or 0), int(c.v_head_dim or 0),
                           int(c.kv_lora_rank or 0))
    out = [_p(f"{b}.attn_norm.weight", e)]
    if c.q_lora_rank:
        out += [
            _p(f"{b}.attn_q_a.weight", e, c.q_lora_rank),
            _p(f"{b}.attn_q_a_norm.weight", c.q_lora_rank),
            _p(f"{b}.attn_q_b.weight", c.q_lora_rank, heads * (nope + rope)),
        ]
    else:
        out.append(_p(f"{b}.attn_q.weight", e, heads * (nope + rope)))
    out += [_p(f"{b}.attn_kv_a_mqa.weight", e, rank + rope), _p(f"{b}.attn_kv_a_norm.weight", rank)]
    if latent is Latent.SPLIT:
        out += [_p(f"{b}.attn_k_b.weight", nope, rank, heads), _p(f"{b}.attn_v_b.weight", rank, v, heads)]
    else:
        out.append(_p(f"{b}.attn_kv_b.weight", rank, heads * (nope + v)))
    out.append(_p(f"{b}.attn_output.weight", heads * v, e))
    return out


def _deepseek_block(c: ModelConfig, i: int, latent: Latent) -> list[Planned]:
    b = f"blk.{i}"
    out = _mla(c, b, latent)
    if i < c.first_k_dense_replace:
        return out + _dense_ffn(c, b, c.intermediate_size)
    out += [_p(f"{b}.ffn_norm.weight", c.hidden_size), *_routed(c, b)]
    if c.scoring_func == "sigmoid":
        # DeepSeek-V3's auxiliary-loss-free balancing: a bias per expert added before top-k selection.
        out.append(_p(f"{b}.exp_probs_b.bias", c.experts))
    if c.n_shared_experts:
        out += _shared(c, b, c.expert_ffn * c.n_shared_experts)
    return out


def _qwen3next_block(c: ModelConfig, i: int) -> list[Planned]:
    """A Qwen3-Next block: gated full attention every ``full_attention_interval``-th layer, else a Gated-DeltaNet
    layer (``ssm_in`` holds q, k, v and the gate z; ``ssm_ba`` the decay and beta of each value head), each followed
    by routed experts and a gated shared expert."""
    b, e = f"blk.{i}", c.hidden_size
    interval = c.full_attention_interval or 4
    if (i + 1) % interval == 0:
        q, kv = c.num_attention_heads * c.head, c.kv_heads * c.head
        out = [
            _p(f"{b}.attn_norm.weight", e),
            _p(f"{b}.attn_q.weight", e, 2 * q),
            _p(f"{b}.attn_k.weight", e, kv),
            _p(f"{b}.attn_v.weight", e, kv),
            _p(f"{b}.attn_q_norm.weight", c.head),
            _p(f"{b}.attn_k_norm.weight", c.head),
            _p(f"{b}.attn_output.weight", q, e),
        ]
    else:
        vh, kh = int(c.linear_num_value_heads or 0), int(c.linear_num_key_heads or 0)
        vd, kd = int(c.linear_value_head_dim or 0), int(c.linear_key_head_dim or 0)
        inner, keys = vh * vd, kh * kd
        out = [
            _p(f"{b}.attn_norm.weight", e),
            _p(f"{b}.ssm_in.weight", e, 2 * keys + 2 * inner),
            _p(f"{b}.ssm_ba.weight", e, 2 * vh),
            _p(f"{b}.ssm_a", vh),
            _p(f"{b}.ssm_dt.bias", vh),
            _p(f"{b}.ssm_conv1d.weight", int(c.linear_conv_kernel_dim or 4), inner + 2 * keys),
            _p(f"{b}.ssm_norm.weight", kd),
            _p(f"{b}.ssm_out.weight", inner, e),
        ]
    out += [_p(f"{b}.post_attention_norm.weight", e), *_routed(c, b)]
    if c.shared_expert_intermediate_size:
        out += [_p(f"{b}.ffn_gate_inp_shexp.weight", e), *_shared(c, b, c.shared_expert_intermediate_size)]
    return out


def _mtp_block(c: ModelConfig, i: int, latent: Latent) -> list[Planned]:
    """DeepSeek-V3's multi-token-prediction module as block ``i`` (the report, arXiv:2412.19437, §2.2): the
    previous hidden state and the next token's embedding, each normed (``nextn.hnorm``, ``nextn.enorm``), joined by
    ``nextn.eh_proj`` [2 × hidden, hidden], one full transformer block, and the head's norm; it shares the main
    model's embedding and output head, so neither is repeated."""
    b, e = f"blk.{i}", c.hidden_size
    return [
        *_deepseek_block(c, i, latent),
        _p(f"{b}.nextn.enorm.weight", e),
        _p(f"{b}.nextn.hnorm.weight", e),
        _p(f"{b}.nextn.eh_proj.weight", 2 * e, e),
        _p(f"{b}.nextn.shared_head_norm.weight", e),
    ]


def plan(c: ModelConfig, latent: Latent = Latent.SPLIT, mtp: bool = True) -> list[Planned]:
    """The tensor table of the architecture ``c`` describes (names and GGUF dims, before types), in
    ``llama-quantize``'s order. ``latent``: the MLA header generation (DeepSeek only). ``mtp``: include the
    multi-token-prediction blocks the configuration declares (``num_nextn_predict_layers``; DeepSeek only)."""
    from passprice.typemix import order

    e = c.hidden_size
    out = [_p("token_embd.weight", e, c.vocab_size), _p("output_norm.weight", e)]
    if not c.tie_word_embeddings:
        out.append(_p("output.weight", e, c.vocab_size))
    if c.model_type == "llama" and (c.rope_scaling or {}).get("rope_type") == "llama3":
        # Llama 3.1's frequency factors: llama.cpp writes them as one tensor of head / 2 floats.
        out.append(_p("rope_freqs.weight", c.head // 2))
    for i in range(c.num_hidden_layers):
        b = f"blk.{i}"
        if c.model_type in ("deepseek_v2", "deepseek_v3"):
            out += _deepseek_block(c, i, latent)
        elif c.model_type == "qwen3_next":
            out += _qwen3next_block(c, i)
        elif c.model_type == "gpt_oss":
            out += [*_standard_attention(c, b), _p(f"{b}.post_attention_norm.weight", e), *_routed(c, b)]
        elif c.model_type == "qwen3_moe" or (c.model_type in ("llama", "mixtral") and c.experts):
            out += [*_standard_attention(c, b), _p(f"{b}.ffn_norm.weight", e), *_routed(c, b)]
        else:
            out += [*_standard_attention(c, b), *_dense_ffn(c, b, c.intermediate_size)]
    if mtp and c.model_type in ("deepseek_v2", "deepseek_v3"):
        for j in range(c.num_nextn_predict_layers):
            out += _mtp_block(c, c.num_hidden_layers + j, latent)
    return order(out)


# --- metadata ------------------------------------------------------------------------------------------------------


#: A metadata entry: key (architecture prefix included), value, and GGUF value type name (``uint32``, ``float32``,
#: ``bool``, ``string``).
Meta = tuple[str, Any, str]


def blocks(c: ModelConfig, mtp: bool = True) -> int:
    """``block_count``: the main blocks, and the MTP blocks when built (DeepSeek)."""
    extra = c.num_nextn_predict_layers if mtp and c.model_type in ("deepseek_v2", "deepseek_v3") else 0
    return c.num_hidden_layers + extra


def metadata(c: ModelConfig, mix: Mix, name: str, latent: Latent = Latent.SPLIT, mtp: bool = True) -> list[Meta]:
    """The GGUF metadata of the header (llama.cpp's key names, ``gguf.Keys``): shapes, attention widths, experts,
    MLA ranks, Gated-DeltaNet shape, sliding window, rope; ``general.name`` is ``name``."""
    a = c.arch
    u, f = "uint32", "float32"
    out: list[Meta] = [
        ("general.type", "model", "string"),
        ("general.name", name, "string"),
        (f"{a}.block_count", blocks(c, mtp), u),
        (f"{a}.context_length", c.max_position_embeddings, u),
        (f"{a}.embedding_length", c.hidden_size, u),
        (f"{a}.feed_forward_length", c.intermediate_size, u),
        (f"{a}.attention.head_count", c.num_attention_heads, u),
    ]
    deepseek = c.model_type in ("deepseek_v2", "deepseek_v3")
    if deepseek:
        rope, nope, v, rank = (int(c.qk_rope_head_dim or 0), int(c.qk_nope_head_dim or 0), int(c.v_head_dim or 0),
                               int(c.kv_lora_rank or 0))
        if latent is Latent.SPLIT:
            out += [
                (f"{a}.attention.head_count_kv", 1, u),
                (f"{a}.attention.key_length", rank + rope, u),
                (f"{a}.attention.value_length", rank, u),
                (f"{a}.attention.key_length_mla", nope + rope, u),
                (f"{a}.attention.value_length_mla", v, u),
            ]
        else:
            out += [
                (f"{a}.attention.head_count_kv", c.num_attention_heads, u),
                (f"{a}.attention.key_length", nope + rope, u),
                (f"{a}.attention.value_length", v, u),
            ]
        if c.q_lora_rank:
            out.append((f"{a}.attention.q_lora_rank", c.q_lora_rank, u))
        out += [(f"{a}.attention.kv_lora_rank", rank, u), (f"{a}.rope.dimension_count", rope, u)]
    else:
        rot = c.head
        if c.partial_rotary_factor:
            rot = int(c.head * c.partial_rotary_factor)
        out += [
            (f"{a}.attention.head_count_kv", c.kv_heads, u),
            (f"{a}.attention.key_length", c.head, u),
            (f"{a}.attention.value_length", c.head, u),
            (f"{a}.rope.dimension_count", rot, u),
        ]
    out += [(f"{a}.rope.freq_base", float(c.rope_theta), f), (f"{a}.attention.layer_norm_rms_epsilon",
                                                                float(c.rms_norm_eps), f)]
    scaling = c.rope_scaling or {}
    if scaling.get("rope_type", scaling.get("type")) == "yarn":
        out += [(f"{a}.rope.scaling.type", "yarn", "string"), (f"{a}.rope.scaling.factor", float(scaling["factor"]), f)]
        if "original_max_position_embeddings" in scaling:
            # The schema bounds it to a uint32 and takes 4096.0 as an integer, as JSON Schema does: pack it as one.
            out.append((f"{a}.rope.scaling.original_context_length", int(scaling["original_max_position_embeddings"]),
                        u))
    if c.sliding_window and c.model_type == "gpt_oss":
        out.append((f"{a}.attention.sliding_window", c.sliding_window, u))
    if c.experts:
        out += [(f"{a}.expert_count", c.experts, u), (f"{a}.expert_used_count", c.num_experts_per_tok or 1, u)]
        if c.arch != "llama":
            # llama.cpp writes it from moe_intermediate_size, which a Mixtral configuration has not: its experts
            # are feed_forward_length wide (the pricer reads that when the key is absent).
            out.append((f"{a}.expert_feed_forward_length", c.expert_ffn, u))
        if c.shared_expert_intermediate_size:
            out.append((f"{a}.expert_shared_feed_forward_length", c.shared_expert_intermediate_size, u))
        if deepseek:
            out += [
                (f"{a}.leading_dense_block_count", c.first_k_dense_replace, u),
                (f"{a}.expert_shared_count", c.n_shared_experts or 0, u),
                (f"{a}.expert_weights_scale", float(c.routed_scaling_factor or 1.0), f),
                (f"{a}.expert_weights_norm", bool(c.norm_topk_prob), "bool"),
                (f"{a}.expert_gating_func", 2 if c.scoring_func == "sigmoid" else 1, u),
            ]
            if c.n_group:
                out += [(f"{a}.expert_group_count", c.n_group, u), (f"{a}.expert_group_used_count",
                                                                    c.topk_group or c.n_group, u)]
    if c.model_type == "qwen3_next":
        out += [
            (f"{a}.ssm.conv_kernel", c.linear_conv_kernel_dim or 4, u),
            (f"{a}.ssm.state_size", c.linear_key_head_dim or 0, u),
            (f"{a}.ssm.group_count", c.linear_num_key_heads or 0, u),
            (f"{a}.ssm.time_step_rank", c.linear_num_value_heads or 0, u),
            (f"{a}.ssm.inner_size", (c.linear_num_value_heads or 0) * (c.linear_value_head_dim or 0), u),
            (f"{a}.full_attention_interval", c.full_attention_interval or 4, u),
        ]
    if deepseek and mtp and c.num_nextn_predict_layers:
        out.append((f"{a}.nextn_predict_layers", c.num_nextn_predict_layers, u))
    out += [("general.quantization_version", 2, u), ("general.file_type", mix.file_type, u)]
    return out


# --- the header ----------------------------------------------------------------------------------------------------


@attrs.frozen
class Built:
    """A header-only checkpoint: its ``config``, ``mix``, MLA generation, whether its MTP blocks are in, its
    ``metadata`` and its ``tensors`` (each with its GGML type name), in file order."""

    published: Published
    mix: Mix
    latent: Latent
    mtp: bool
    metadata: tuple[Meta, ...]
    tensors: tuple[tuple[Planned, str], ...]

    def tensor_bytes(self) -> int:
        """Bytes of every tensor: Σ ceil(elements / block) × block bytes."""
        from passprice import ggml

        return sum(ggml.by_name(ty).bytes_for(math.prod(t.dims)) for t, ty in self.tensors)

    def origin(self, note: str = "", written: bool = True) -> str:
        """The entry's origin note: built, header only, from which configuration, with which type mix and rules;
        without ``written`` (``synth --import`` without ``-o``) :data:`NO_FILE_WRITTEN`; ``note`` appended."""
        c = self.published.config
        # A bare config.json names no place it was published: the file it was read from is all that is known, and
        # calling it "the published configuration" claimed a publication nobody recorded (walkthrough 27).
        built_from = (f"the published configuration {self.published.source} (model_type {c.model_type})"
                      if self.published.stated else
                      f"the configuration {self.published.source} (model_type {c.model_type}; a bare config.json: "
                      "where it was published is not recorded)")
        parts = [
            f"Synthetic, header only: built by passprice synth from {built_from}; no weights exist. Tensor names and "
            f"shapes are llama.cpp's for {c.arch}"
        ]
        if c.model_type in ("deepseek_v2", "deepseek_v3"):
            stored = "attn_k_b/attn_v_b" if self.latent is Latent.SPLIT else "attn_kv_b"
            parts.append(f", MLA stored {self.latent.value} ({stored})")
            if self.mtp and c.num_nextn_predict_layers:
                parts.append(f", {c.num_nextn_predict_layers} MTP block(s) sharing the embedding and head")
        if c.model_type == "mistral" and c.sliding_window:
            parts.append(
                f", the configuration's sliding_window {c.sliding_window} not written (llama.cpp's llama architecture "
                "attends to the whole context)"
            )
        parts.append(
            f"; types: the {self.mix.value} mix by llama.cpp's rules (src/llama-quant.cpp, llama_tensor_get_type)."
        )
        if not written:
            parts.append(" " + NO_FILE_WRITTEN)
        if note:
            parts.append(" " + note)
        return "".join(parts)


def build(
    published: Published, mix: Mix, name: str | None = None, latent: Latent = Latent.SPLIT, mtp: bool = True
) -> Built:
    """The header-only checkpoint of ``published`` with type mix ``mix`` (:func:`plan`, :func:`metadata`,
    :func:`passprice.typemix.assign`); ``name`` for ``general.name`` (default: the model type).

    Raises :class:`InputError` when a tensor's rows fit no block of its type (:func:`passprice.typemix.assign`), a
    tensor would have a dimension of 0 (a DeepSeek config without ``qk_rope_head_dim`` …), the tensors would
    take more than :data:`MAX_MODEL_BYTES`, or there would be more tensors than the reader reads
    (:func:`passprice.gguf_header.tensor_limit`)."""
    from passprice.gguf_header import tensor_limit

    c = published.config
    tensors = plan(c, latent, mtp)
    problem = tensor_limit(len(tensors))
    if problem is not None:  # refused before types are assigned or bytes written (4,096 layers took 1.3 s)
        raise InputError(f"{published.where}: num_hidden_layers {c.num_hidden_layers}: {problem}")
    layers = blocks(c, mtp)
    large = c.model_type in ("llama", "qwen2") and layers == 80 and c.kv_heads < c.num_attention_heads
    model = Model(c.arch, layers, c.experts, large=large, tied=c.tie_word_embeddings)
    try:
        typed = assign(tensors, model, mix)
    except InputError as e:
        raise InputError.of(f"{published.where}: {line}" for line in e.lines) from None
    meta = metadata(c, mix, name or c.model_type, latent, mtp)
    built = Built(published, mix, latent, mtp, tuple(meta), tuple(typed))
    empty = next((t.name for t, _ in typed if 0 in t.dims), None)
    if empty is not None:
        raise InputError(f"{published.where}: tensor {empty!r} would have a dimension of 0: check the configuration")
    if built.tensor_bytes() > MAX_MODEL_BYTES:
        raise InputError(
            f"{published.where}: the tensors would take {built.tensor_bytes():,} bytes, more than "
            f"{MAX_MODEL_BYTES:,}: not a checkpoint a card holds"
        )
    return built


def header_bytes(built: Built) -> bytes:
    """``built`` as the bytes of a GGUF v3 file holding its header, metadata and tensor-info table, the tensor
    offsets laid out (``general.alignment`` 32) as if the data followed, but no data (``gguf.GGUFWriter``)."""
    import tempfile

    import numpy as np
    from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter

    from passprice import ggml

    with tempfile.TemporaryDirectory(prefix="passprice-synth-") as folder:
        tmp = Path(folder) / "header.gguf"
        w = GGUFWriter(tmp, built.published.config.arch)
        for key, value, kind in built.metadata:
            w.add_key_value(key, value, GGUFValueType[kind.upper()])
        for t, ty in built.tensors:
            nbytes = ggml.by_name(ty).bytes_for(math.prod(t.dims))
            # add_tensor_info takes the numpy shape (GGUF dims reversed); a float dtype keeps it as elements.
            w.add_tensor_info(
                t.name, tuple(reversed(t.dims)), np.dtype(np.float32), nbytes, raw_dtype=GGMLQuantizationType[ty]
            )
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_ti_data_to_file()
        w.close()
        return tmp.read_bytes()


def compression(path: Path) -> str | None:
    """How ``synth -o`` compresses the header it writes to ``path``, by the file's suffix (a link's: its target's):
    ``"xz"`` for ``.gguf.xz`` (any ``.xz``), ``"gz"`` for ``.gguf.gz``, else ``None`` (a plain ``.gguf``, or a suffix
    naming no format passprice writes), as the reader takes them. ``-o h.gguf.xz`` wrote the plain header under the
    name, which ``xz -d`` then refused (attack round 27). Raises :class:`InputError` for a suffix naming another
    format passprice writes (``.toml``, ``.json`` …: :func:`passprice.files.suffix_format`), or for a compressed
    name whose inner suffix does (``h.json.gz``, ``h.gguf.xz.gz``): what ``gunzip`` or ``xz -d`` leaves would be named
    as JSON, or as an xz file, and hold a plain header (attack round 28: written, exit 0)."""
    from passprice.files import SUFFIX_FORMATS, name_suffix, shown, suffix_format, target

    names = ".gguf (or .gguf.xz, .gguf.gz to compress it)"
    said = suffix_format(path, "-o", (".gguf", ".xz", ".gz"), "a GGUF header", names)
    if said not in (".xz", ".gz"):
        return None
    inner = name_suffix(Path(target(path).name[: -len(said)]))
    if inner in SUFFIX_FORMATS and inner != ".gguf":
        raise InputError(
            f"{shown(path)}: -o would write a {SUFFIX_FORMATS[said]}-compressed GGUF header into a file whose name "
            f"ends in {inner}{said} (a name that says {SUFFIX_FORMATS[said]}-compressed {SUFFIX_FORMATS[inner]}): "
            f"name it {names}"
        )
    return said.lstrip(".")


def compressed(data: bytes, how: str | None) -> bytes:
    """``data`` as :func:`compression` names it: xz (lzma's default preset, CRC64) or gzip (level 9, no time
    stamp, so the same header gives the same bytes), or as it is. Raises nothing."""
    if how == "xz":
        import lzma

        return lzma.compress(data)
    if how == "gz":
        import gzip

        return gzip.compress(data, mtime=0)
    return data


def write_header(built: Built, path: Path, force: bool = False) -> Path:
    """Write :func:`header_bytes` of ``built`` to ``path`` atomically (:func:`passprice.files.write_atomically`),
    compressed as its suffix says (:func:`compression`), once passprice's own reader has read the bytes back (what
    synth writes, passprice reads: a configuration of 4,096 layers made 73,738 tensors, past the reader's bound, and
    was written). Returns ``path``. Raises :class:`InputError` when the reader refuses the header (naming the
    configuration), when ``path`` exists and not ``force``, cannot be written, or has a suffix naming another
    format."""
    import tempfile

    from passprice.files import write_atomically
    from passprice.gguf_header import read_header

    how = compression(path)
    try:
        data = compressed(header_bytes(built), how)
        with tempfile.TemporaryDirectory(prefix="passprice-synth-") as folder:
            probe = Path(folder) / "header.gguf"
            probe.write_bytes(data)
            try:
                read_header(probe, cache=False)
            except InputError as e:
                said = e.lines[0].removeprefix(f"{probe}: ")
                raise InputError(f"{built.published.where}: the header it makes does not read back: {said}") from None
    except OSError as e:
        # The scratch copies in the temporary folder (GGUFWriter writes a file): under `ulimit -f 8` (or a full
        # /tmp) their write failed without a file name, and the command line's last resort said "standard output:
        # File too large" (attack round 42).
        from passprice.files import shown

        raise InputError(f"{shown(path)}: cannot write: {e.strerror or e} (writing its scratch copy in the temporary "
                         f"folder {tempfile.gettempdir()}; TMPDIR names another)") from None  # fmt: skip
    write_atomically(path, data, force)
    return path


#: What the origin of an entry ``synth --import`` wrote without ``-o`` says: the entry's ``source``
#: (``NAME.header.gguf``) names a file that was never written, which ``audit`` then says (walkthrough 39: it said "the
#: name it was imported from").
NO_FILE_WRITTEN = "No header file was written (synth --import without -o)."


def entry_text(
    built: Built, name: str, note: str = "", file: str | None = None, unwritten: bool = False
) -> tuple[str, Any]:
    """The registry entry (``registry/checkpoints/{name}.toml`` text, :func:`passprice.checkpoints.import_header`)
    of ``built``, whose header file is named ``file`` (the name of the file ``synth -o`` writes it to, as ``import``
    records the file it read; without one, ``{name}.header.gguf``) and whose origin is :meth:`Built.origin` with
    ``note``; and the :class:`~passprice.gguf_header.GGUFHeader` read back from the built bytes. ``unwritten``
    (``synth --import`` without ``-o``): the origin says no header file was written (:data:`NO_FILE_WRITTEN`); the
    shipped entries, rebuilt by ``tests/synthesized.py`` with the default, keep their text (and their locks' pins).

    Raises :class:`InputError` for a name that is not a file stem of letters, digits, ``.``, ``_`` and ``-``."""
    import tempfile

    from passprice.checkpoints import import_header
    from passprice.gguf_header import read_header

    with tempfile.TemporaryDirectory(prefix="passprice-synth-") as folder:
        path = Path(folder) / "header.gguf"
        path.write_bytes(header_bytes(built))
        try:
            header = read_header(path, cache=False)
        except InputError as e:
            said = e.lines[0].removeprefix(f"{path}: ")
            raise InputError(f"{built.published.where}: the header it makes does not read back: {said}") from None
    # The entry names the file the header was (or, without -o, would have been) written to: walkthrough 16's
    # `synth … -o ../mixtral-8x7b.header.gguf --import my-mixtral` recorded my-mixtral.header.gguf, a file that never
    # existed. A shard's file name is not its identity (the content digest leaves it out), so no lock moves.
    file = file or f"{name}.header.gguf"
    shards = (attrs.evolve(header.shards[0], file=file), *header.shards[1:])
    header = attrs.evolve(header, shards=shards, source=file)
    return import_header(header, name, built.origin(note, not unwritten)), header


def type_counts(built: Built) -> dict[str, int]:
    """How many tensors of each GGML type ``built`` holds, most first (ties by name)."""
    counts: dict[str, int] = {}
    for _, ty in built.tensors:
        counts[ty] = counts.get(ty, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


#: Where llama-quantize's handling of a tensor already quantized was read: ggml-org/llama.cpp's src/llama-quant.cpp
#: at the commit :mod:`passprice.typemix` ports (``llama_model_quantize_impl``, line 877: ``bool quantize = cur_type
#: != new_type;`` at line 1168, then, for a quantized ``cur_type``, ``throw std::runtime_error(format("requantizing
#: from type %s is disabled", ...))`` at line 1236 unless ``params->allow_requantize`` (tested at 1235);
#: ``llama_tensor_get_type`` (line 679) keeps a tensor's own type only where ``tensor_allows_quantization`` (line 289)
#: refuses it (lines 680-681), and its rules (``llama_tensor_get_type_impl``, lines 424-676) keep none, and
#: ``tensor_type_fallback`` (line 374) takes a Q4_K whose rows are not a multiple of 256 to Q5_0 (line 400), a Q6_K
#: to Q8_0 (line 402)). Every line number checked against the stored text of that commit's file (session 33, moe43).
LLAMA_QUANT_READ = "ggml-org/llama.cpp src/llama-quant.cpp at 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714"


def requantized_experts(built: Built) -> str | None:
    """The warning for a gpt-oss header whose expert tensors ``built`` gives a type other than MXFP4, ``None`` for
    any other (moe42). gpt-oss publishes its experts in MXFP4 and llama.cpp's converter keeps them so; the mix's
    rules (:func:`passprice.typemix.assign`) give them the mix's type as they would a BF16 tensor (Q4_K_M: 2,880-wide
    rows fill no 256-element Q4_K or Q6_K block, so Q5_0 and Q8_0 by ``tensor_type_fallback``), which
    ``llama-quantize`` writes from an MXFP4 source only with ``--allow-requantize`` (without it, it stops:
    "requantizing from type MXFP4 is disabled", :data:`LLAMA_QUANT_READ`). Published gpt-oss files of the K mixes
    keep the experts MXFP4 by per-tensor overrides (bartowski's gpt-oss-20b GGUF card: "all FFN kept at
    MXFP4_MOE"), the size ``--mix MXFP4`` builds. Raises nothing."""
    if built.published.config.model_type != "gpt_oss":
        return None
    experts = [ty for t, ty in built.tensors if len(t.dims) > 2 and t.dims[2] > 1]
    if not experts or all(ty == "MXFP4" for ty in experts):
        return None
    counts: dict[str, int] = {}
    for ty in experts:
        counts[ty] = counts.get(ty, 0) + 1
    listed = ", ".join(f"{n} {ty}" for ty, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"gpt-oss publishes its {len(experts)} expert tensors in MXFP4; this header gives them {listed}, as "
        f"llama-quantize's {built.mix.value} rules type a tensor that is not quantized yet, which it writes from "
        "the published MXFP4 only with --allow-requantize (without it: 'requantizing from type MXFP4 is "
        f"disabled', {LLAMA_QUANT_READ}); published gpt-oss GGUFs of the K mixes keep the experts MXFP4 by "
        "per-tensor overrides: `--mix MXFP4` builds that size"
    )
