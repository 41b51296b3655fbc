"""A checkpoint's single-token decode is read off its header alone: every tensor belongs to exactly one stage, and a
tensor no rule places is refused by name, never skipped.

:func:`decode_step` turns a :class:`~passprice.gguf_header.GGUFHeader` into a :class:`DecodeStep`: the stages of one
token's pass in forward order (embedding row, projections, norms, attention over the KV cache, the Gated-DeltaNet
recurrence, the head) and what a deployment holds (weights, embedding table, KV cache, recurrent state, conv ring).
It is what the batch-one price and the serving pricer (:mod:`passprice.serving`) both read. The rules are DESIGN.md's
(The decode step): tensor → stage, which layers have what, sliding windows, draft (MTP) layers, held classes.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from passprice import ggml, schema
from passprice.architectures import (
    EXPERTS,
    KNOWN,
    MLA,
    RECURRENCE,
    WINDOW_KEY,
    defaulted_window,
    known_names,
    rules_of,
    windowed_held,
    windowed_reads,
)
from passprice.errors import InputError
from passprice.gguf_header import GGUFHeader, LongArray, TensorInfo
from passprice.gguf_records import KEEP_ARRAY_LIMIT


class DecodeRefusal(Exception):
    """A checkpoint whose decode step cannot be read off its header (seed ``DecodeRefusal``). ``name`` is the
    variant's name; :meth:`fields` its fields for ``--json``."""

    name: ClassVar[str] = "DecodeRefusal"

    def fields(self) -> dict[str, Any]:
        """The refusal's fields, JSON-ready."""
        return {}


class MissingMetadata(DecodeRefusal):
    """Metadata the step needs is absent: ``keys`` names each missing key (architecture prefix resolved); ``file``,
    when given, the header that lacks them (its ``source``: a ``.gguf`` path or a registry entry's file)."""

    name = "MissingMetadata"

    def __init__(self, keys: Sequence[str], why: str, file: str | None = None) -> None:
        self.keys = tuple(keys)
        self.why = why
        self.file = file
        where = f"{file}: " if file else ""
        super().__init__(f"{where}missing metadata {', '.join(self.keys)} ({why})")

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"keys": list(self.keys), "why": self.why}
        if self.file:
            out["file"] = self.file
        return out


def _quoted(text: str, limit: int = 80) -> str:
    """``text`` quoted (``repr``) for a refusal's line, cut to its ends and its length past ``limit`` characters: a
    header's string is as long as its file says, and a 10,000-character ``general.architecture`` or tensor name
    filled the one line ``price`` and ``sweep`` print (attack64). The refusal's fields keep it whole. Raises
    nothing."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:24]!r}…{text[-24:]!r} ({len(text):,} characters)"


class UnknownArchitecture(DecodeRefusal):
    """A header whose ``general.architecture`` is none passprice prices (:data:`passprice.architectures.KNOWN`): the
    rules of its layers are its architecture's, so a price read off its tensor names would be a guess (session 36: a
    header naming ``foo`` with llama's tensors was priced as llama, exit 0). ``file``: the header's ``source``;
    ``architecture``: the name it gives; ``known``: the names passprice prices."""

    name = "UnknownArchitecture"

    def __init__(self, file: str, architecture: str) -> None:
        self.file = file
        self.architecture = architecture
        self.known = tuple(KNOWN)
        super().__init__(
            f"{file}: general.architecture {_quoted(architecture)} is no architecture passprice prices (it prices "
            f"{known_names()}): which layers slide a window, and what a layer's tensors do, are the architecture's, "
            "so a price read off tensor names alone would be a guess; if the model is one of these, convert it with "
            "llama.cpp's convert_hf_to_gguf.py (which names its architecture), else add the architecture to "
            "passprice.architectures.KNOWN with its rules and a test"
        )

    def fields(self) -> dict[str, Any]:
        return {"file": self.file, "architecture": self.architecture, "known": list(self.known)}


class TensorNotInArchitecture(DecodeRefusal):
    """A header holding a tensor of a feature its architecture has none of
    (:attr:`~passprice.architectures.Architecture.features`: latent attention, routed experts, a recurrence): the
    feature is read off tensor names, so it was priced whatever the architecture (session 36: a ``llama`` header
    holding ``attn_kv_a_mqa`` priced with MLA, exit 0), but llama.cpp loads such a file by its architecture's tensor
    list and refuses a tensor the list lacks. ``file``: the header's ``source``; ``tensor``: the first such tensor;
    ``architecture``: the name the header gives; ``feature``: what the tensor is; ``known``: the architectures that
    have it."""

    name = "TensorNotInArchitecture"

    def __init__(self, file: str, tensor: str, architecture: str, feature: str) -> None:
        self.file = file
        self.tensor = tensor
        self.architecture = architecture
        self.feature = feature
        self.known = tuple(a.name for a in KNOWN.values() if feature in a.features)
        super().__init__(
            f"{file}: tensor {_quoted(tensor)} is {feature}, which the {architecture} architecture has none of "
            f"(llama.cpp loads a {architecture} file by {architecture}'s tensors and refuses one it does not read: "
            f"wrong number of tensors): name the architecture the model is ({', '.join(self.known)} have {feature}), "
            "as llama.cpp's convert_hf_to_gguf.py writes it"
        )

    def fields(self) -> dict[str, Any]:
        return {"file": self.file, "tensor": self.tensor, "architecture": self.architecture, "feature": self.feature,
                "known": list(self.known)}


class UnclassifiedTensor(DecodeRefusal):
    """A tensor no rule of DESIGN.md places in a stage: the step would be a guess, so it is refused."""

    name = "UnclassifiedTensor"

    def __init__(self, tensor: str) -> None:
        self.tensor = tensor
        super().__init__(f"tensor {_quoted(tensor)} belongs to no decode stage passprice knows")

    def fields(self) -> dict[str, Any]:
        return {"tensor": self.tensor}


class UnknownType(DecodeRefusal):
    """A tensor whose GGML type id the ``gguf`` package does not know, so its bytes are unknown."""

    name = "UnknownType"

    def __init__(self, tensor: str, type_id: int) -> None:
        self.tensor = tensor
        self.type_id = type_id
        super().__init__(
            f"tensor {tensor!r} has GGML type id {type_id}, unknown to the gguf package: requantize it to a type "
            "the gguf package knows (Q4_K, Q8_0, F16 …), or install a gguf that knows this id and import it again"
        )

    def fields(self) -> dict[str, Any]:
        return {"tensor": self.tensor, "type_id": self.type_id}


class StageKind(enum.Enum):
    """What a stage does with a token-row."""

    EMBED = "embed"
    PROJECT = "project"
    HEAD = "head"
    NORM = "norm"
    ROUTER = "router"
    EXPERTS = "experts"
    ATTENTION = "attention"
    RECURRENCE = "recurrence"


class HeldClass(enum.Enum):
    """What a deployment holds in the card's memory."""

    WEIGHTS = "weights"
    EMBEDDING_TABLE = "embedding_table"
    KV_CACHE = "kv_cache"
    RECURRENT_STATE = "recurrent_state"
    CONV_RING = "conv_ring"


class LayerKind(enum.Enum):
    """What a block's sequence-dependent part is: full attention, sliding-window attention, a Gated-DeltaNet
    recurrence, or neither (a block with no KV heads)."""

    ATTENTION = "attention"
    WINDOWED = "windowed"
    RECURRENT = "recurrent"
    NONE = "none"


@attrs.frozen
class Split:
    """An attention layer's heads: ``q`` query heads and ``kv`` KV heads (GQA when ``kv < q``), each query head
    ``key`` wide in its keys and ``value`` wide in its values (elements)."""

    q: int
    kv: int
    key: int
    value: int


@attrs.frozen
class Stage:
    """One stage of a token's pass.

    ``weight_bytes``: bytes streamed for one row (an ``embed`` stage: one table row; otherwise its tensors' bytes).
    ``state_read`` / ``state_write``: bytes a sequence's cache or state reads / writes (attention: the cache read
    at the deployment's context and the bytes one position adds; recurrence: the dense state plus the conv ring read,
    and the dense state plus one ring row written). ``ops``: for attention, floating-point operations per cached
    position per row, 2 × query heads × (key width + value width). ``split``: attention's heads. ``window``: the
    sliding window in positions of a windowed attention layer, else ``None``. ``layer``: the block index, or ``None``
    for the embedding, the final norm and the head.

    An ``experts`` stage (a mixture of experts' routed FFN, DESIGN.md extension, issue 15) holds every expert's
    stacked tensors: ``weight_bytes`` is all of them (what the card holds), ``experts`` how many routed experts the
    stacks hold (``expert_count``), ``used`` how many a token is routed to (``expert_used_count``), and
    ``expert_bytes`` the bytes of one expert's slice of every tensor of the stage (``weight_bytes`` / ``experts``,
    exact: an expert's slice is whole rows).
    """

    kind: StageKind
    layer: int | None
    tensors: tuple[str, ...] = ()
    weight_bytes: int = 0
    state_read: float = 0.0
    state_write: float = 0.0
    ops: int = 0
    split: Split | None = None
    window: int | None = None
    experts: int = 0
    used: int = 0
    expert_bytes: int = 0

    def __reduce__(self) -> tuple[type[Stage], tuple[Any, ...]]:
        """Pickled as its constructor's arguments, in field order, as :class:`passprice.gguf_records.TensorInfo` is:
        attrs' ``__getstate__`` made a dict of each of a decode step's stages (4,357 for the shipped checkpoints) for
        the cache of built objects (tests/test_cold135.py)."""
        return (Stage, (self.kind, self.layer, self.tensors, self.weight_bytes, self.state_read, self.state_write,
                        self.ops, self.split, self.window, self.experts, self.used, self.expert_bytes))


@attrs.frozen
class Held:
    """Bytes a deployment holds of one class."""

    held: HeldClass
    bytes: float


@attrs.frozen
class Deployment:
    """What a deployment of the checkpoint chooses: the context ``ctx`` (positions) its caches are sized for,
    ``kv_bytes`` bytes per KV-cache element, ``state_bytes`` bytes per recurrent-state element,
    ``activation_bytes`` bytes per activation element, and whether it drafts (``speculative``), which brings in the
    draft (MTP) layers. Weights are streamed as stored."""

    ctx: int = 1
    kv_bytes: float = 2.0
    state_bytes: float = 4.0
    activation_bytes: float = 2.0
    speculative: bool = False


@attrs.frozen
class Recurrence:
    """The shape of a Gated-DeltaNet layer, from ``ssm.*`` metadata (seed ``Recurrence``): ``heads`` value heads
    (``ssm.time_step_rank``), ``key`` key width (``ssm.state_size``), ``value`` = ``ssm.inner_size`` / heads,
    ``groups`` key groups (``ssm.group_count``), ``conv_kernel`` taps, ``channels`` the conv's channels.
    ``state`` = heads × key × value elements of dense state; ``log`` = groups × key + heads × value + 2 × heads
    elements one token adds to a layer's log (keys, values, decay exponent and gate)."""

    heads: int
    key: int
    value: int
    groups: int
    inner: int
    conv_kernel: int
    channels: int

    @property
    def state(self) -> int:
        """Elements of one layer's dense state: one key × value matrix per value head."""
        return self.heads * self.key * self.value

    @property
    def log(self) -> int:
        """Elements one token adds to one layer's log."""
        return self.groups * self.key + self.heads * self.value + 2 * self.heads

    @property
    def ring_rows(self) -> int:
        """Inputs the conv ring holds: the last ``conv_kernel − 1``."""
        return max(self.conv_kernel - 1, 0)


@attrs.frozen
class Layer:
    """One block: its ``kind``, whether it is a draft (MTP) layer, its KV heads, its sliding window (if windowed);
    ``latent``: its attention is DeepSeek's multi-head latent attention (MLA), whose cache is one latent vector and
    one rope key a position, shared by every head (``kv_heads`` 1); ``routed``: its FFN is a mixture of experts."""

    index: int
    kind: LayerKind
    draft: bool
    kv_heads: int
    window: int | None = None
    latent: bool = False
    routed: bool = False

    def __reduce__(self) -> tuple[type[Layer], tuple[Any, ...]]:
        """Pickled as its constructor's arguments, in field order (as :meth:`Stage.__reduce__`)."""
        return (Layer, (self.index, self.kind, self.draft, self.kv_heads, self.window, self.latent, self.routed))


@attrs.frozen
class DecodeStep:
    """One token's decode pass: ``stages`` in forward order and what the deployment ``holds``; ``layers`` describes
    each block (draft layers included whether or not the deployment drafts), ``recurrence`` the Gated-DeltaNet shape
    when the checkpoint has recurrent layers."""

    stages: tuple[Stage, ...]
    held: tuple[Held, ...]
    layers: tuple[Layer, ...]
    recurrence: Recurrence | None
    #: Bytes of the checkpoint's draft (MTP) blocks' tensors, whether or not the deployment drafts: among the
    #: ``WEIGHTS`` held when it does (``speculative``), held by none when it does not (0 without draft blocks).
    draft_weights: float = 0.0
    drafting: bool = False

    def held_bytes(self, *classes: HeldClass) -> float:
        """Bytes held of ``classes`` (all classes when none is named)."""
        return sum(h.bytes for h in self.held if not classes or h.held in classes)


#: Sliding-window period of the architectures whose layer pattern is known (DESIGN.md: layer ``i`` is windowed when
#: ``i % p < p − 1``), read from :data:`passprice.architectures.KNOWN` (each period cited there): gemma3 five windowed
#: then one global, gemma2 alternating, cohere2 three then one, gpt-oss alternating from a windowed layer.
WINDOW_PERIODS: Mapping[str, int] = {a.name: a.window_period for a in KNOWN.values() if a.window_period}


def architecture_refusal(header: GGUFHeader) -> DecodeRefusal | None:
    """Why ``header``'s architecture cannot be priced, or ``None`` when it can: :class:`UnknownArchitecture` when
    ``general.architecture`` is a string none of :data:`passprice.architectures.KNOWN` (nor an alias of one);
    :class:`TensorNotInArchitecture` naming the first tensor of a feature the architecture has none of
    (:attr:`~passprice.architectures.Architecture.features`: ``attn_kv_a_mqa``, ``ffn_*_exps``, ``ssm_*``);
    :class:`MissingMetadata` naming the file and the first key the architecture needs that the header lacks
    (:attr:`~passprice.architectures.Architecture.needs`: a windowed architecture's ``attention.sliding_window``; a
    gemma3 header without it was priced with every layer full). A missing or non-string ``general.architecture`` is
    :func:`header_problems`' (bad input), not this. Raises nothing."""
    arch = header.metadata.get("general.architecture")
    if not isinstance(arch, str):
        return None
    source = header.source or "checkpoint"
    rules = rules_of(arch)
    if rules is None:
        return UnknownArchitecture(source, arch)
    for t in header.tensors:
        feature = _feature(_split_name(t.name)[1])
        if feature is not None and feature not in rules.features:
            return TensorNotInArchitecture(source, t.name, arch, feature)
    missing = [f"{arch}.{key}" for key in rules.needs if header.meta(key) is None]
    if missing:
        why = (
            f"{arch} slides a window over {rules.window_period - 1} of every {rules.window_period} layers and this "
            "key is the window's width in positions; llama.cpp refuses such a file too: add the key the model's "
            "config.json gives (sliding_window)"
            if rules.window_period and missing == [f"{arch}.{WINDOW_KEY}"]
            else f"the {arch} architecture's rules read it"
        )
        return MissingMetadata(missing, why, source)
    return None


def _feature(base: str) -> str | None:
    """The architecture feature a tensor of base name ``base`` is (:data:`passprice.architectures.FEATURES`), or
    ``None``: ``attn_kv_a_mqa`` latent attention, ``ffn_*_exps`` routed experts, ``ssm_*`` a recurrence."""
    if base == "attn_kv_a_mqa":
        return MLA
    if base in _EXPERTS:
        return EXPERTS
    if base.startswith("ssm_"):
        return RECURRENCE
    return None


@functools.cache
def _block() -> re.Pattern[str]:
    """A block's tensor name, ``blk.N.REST`` (compiled on first use: a step read from the cache needs none)."""
    return re.compile(r"^blk\.([0-9]+)\.(.+)$")


_PROJECTIONS = frozenset(
    {
        "attn_q",
        "attn_k",
        "attn_v",
        "attn_qkv",
        "attn_output",
        "attn_gate",
        "ffn_up",
        "ffn_gate",
        "ffn_down",
        "ssm_in",
        "ssm_out",
        "ssm_alpha",
        "ssm_beta",
        "ssm_ba",
        "nextn.eh_proj",
        # DeepSeek's multi-head latent attention (MLA): the low-rank query pair, the latent and rope key, and the
        # per-head key and value expansions, joined (attn_kv_b) or split (attn_k_b, attn_v_b).
        "attn_q_a",
        "attn_q_b",
        "attn_kv_a_mqa",
        "attn_kv_b",
        "attn_k_b",
        "attn_v_b",
        # A shared expert: every token passes through it.
        "ffn_gate_shexp",
        "ffn_up_shexp",
        "ffn_down_shexp",
    }
)
#: A mixture of experts' routed FFN: stacks of every expert's matrices, the last dimension the expert.
_EXPERTS = frozenset({"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "ffn_gate_up_exps"})
#: What routes a token: the router, DeepSeek-V3's selection bias, Qwen3-Next's shared-expert gate.
_ROUTERS = frozenset({"ffn_gate_inp", "exp_probs_b", "ffn_gate_inp_shexp"})
_OUTPUT_SIDE = frozenset({"attn_output", "ssm_out"})


#: How many tensor names :func:`_split_name` remembers (a few hundred a checkpoint; a bound, so a hostile table of
#: millions of names costs no memory past a few MB).
_NAMES_KEPT = 1 << 14


@functools.lru_cache(maxsize=_NAMES_KEPT)
def _split_name(name: str) -> tuple[int | None, str, str]:
    """``blk.3.attn_q.weight`` → (3, ``attn_q``, ``weight``); ``output.weight`` → (None, ``output``, ``weight``).
    Remembered by name (a pure function of the text): a cold ``check`` split the same names 36,722 times, each
    entry's table once to validate it (:func:`header_problems`) and again for each decode step built from it, and
    checkpoints of one architecture share their names (``blk.0.attn_q.weight``)."""
    layer: int | None = None
    rest = name
    m = _block().match(name)
    if m:
        layer, rest = int(m.group(1)), m.group(2)
    base, dot, suffix = rest.rpartition(".")
    if not dot or suffix not in ("weight", "bias"):
        return layer, rest, ""
    return layer, base, suffix


def _classify(layer: int | None, base: str, name: str) -> StageKind:
    """The stage kind of tensor ``name`` (block ``layer``, base name ``base``), by DESIGN.md's tensor → stage rules.

    Raises :class:`UnclassifiedTensor` when no rule places it."""
    if base in ("token_embd", "position_embd", "nextn.embed_tokens"):
        return StageKind.EMBED
    if (layer is None and base == "output") or base == "nextn.shared_head_head":
        return StageKind.HEAD
    if base.startswith("ssm_"):
        return StageKind.PROJECT if base in _PROJECTIONS else StageKind.RECURRENCE
    if base.endswith("norm") or base == "rope_freqs":
        return StageKind.NORM
    if layer is not None and base in _PROJECTIONS:
        return StageKind.PROJECT
    if layer is not None and base in _ROUTERS:
        return StageKind.ROUTER
    if layer is not None and base in _EXPERTS:
        return StageKind.EXPERTS
    if layer is not None and base == "attn_sinks":
        # gpt-oss: one learned logit per query head, added to each softmax's denominator (a vector per row).
        return StageKind.NORM
    raise UnclassifiedTensor(name)


def _per_layer(header: GGUFHeader, key: str, layer: int) -> int | None:
    """A per-layer integer: the scalar at ``key``, or element ``layer`` of an array at ``key``."""
    raw = header.meta(key)
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, tuple) and layer < len(raw):
        item = raw[layer]
        if isinstance(item, int) and not isinstance(item, bool):
            return item
    return None


def _windowed_layers(header: GGUFHeader, blocks: int) -> tuple[int | None, list[bool]]:
    """The sliding window (positions) and, per layer, whether it is windowed (DESIGN.md, Sliding windows); a header
    without the key is priced with its architecture's default window when it has one (:func:`defaulted_window`)."""
    window = header.meta_int("attention.sliding_window")
    defaulted = defaulted_window(header) if window is None else None
    if defaulted is not None:
        window = defaulted.window
    if not window:
        return None, [False] * blocks
    pattern = header.meta("attention.sliding_window_pattern")
    if isinstance(pattern, tuple):
        flags = [bool(pattern[i]) if i < len(pattern) else False for i in range(blocks)]
        return window, flags
    period = pattern if isinstance(pattern, int) and not isinstance(pattern, bool) else None
    if period is None:
        rules = rules_of(header.architecture)
        period = rules.window_period if rules is not None else None
    if not period or period < 1:
        return window, [False] * blocks
    return window, [i % period < period - 1 for i in range(blocks)]


_SSM_KEYS = ("ssm.time_step_rank", "ssm.state_size", "ssm.inner_size", "ssm.group_count")


def recurrence_of(header: GGUFHeader) -> Recurrence:
    """The Gated-DeltaNet shape from ``ssm.*`` metadata (seed ``recurrence``). The conv's channels are the
    ``ssm_conv1d`` tensor's second dimension when one exists (GGUF order ``[kernel, channels]``), else
    ``inner + 2 × groups × key`` (the q, k and v channels); ``ssm.conv_kernel`` defaults to 1 (no ring), as the seed's.

    Raises :class:`MissingMetadata` naming every missing ``ssm.*`` key."""
    arch = header.architecture or "?"
    values = {k: header.meta_int(k) for k in _SSM_KEYS}
    missing = [f"{arch}.{k}" for k, v in values.items() if v is None]
    if missing:
        raise MissingMetadata(missing, "a recurrent (ssm_*) layer needs its Gated-DeltaNet shape")
    heads, key, inner, groups = (int(values[k] or 0) for k in _SSM_KEYS)
    if heads <= 0:
        raise MissingMetadata([f"{arch}.ssm.time_step_rank"], "the value-head count must be above 0")
    kernel = header.meta_int("ssm.conv_kernel") or 1
    channels = inner + 2 * groups * key
    for t in header.tensors:
        if t.name.endswith(".ssm_conv1d.weight") and len(t.dims) >= 2:
            channels = t.dims[1]
            break
    return Recurrence(heads, key, inner // heads, groups, inner, kernel, channels)


def _tensor_bytes(t: TensorInfo) -> int:
    if not ggml.known(t.type_id):
        raise UnknownType(t.name, t.type_id)
    return ggml.tensor_bytes(t.type_id, t.dims)


def _row_bytes(t: TensorInfo) -> int:
    """Bytes of one row (``dims[0]`` elements) of an embedding table."""
    if not ggml.known(t.type_id):
        raise UnknownType(t.name, t.type_id)
    return ggml.ggml_type(t.type_id).bytes_for(t.dims[0] if t.dims else 1)


def _expert_slice_bytes(t: TensorInfo) -> int:
    """Bytes of one expert's slice of an expert stack (its last dimension the expert): the elements of the other
    dimensions at the stack's type (whole rows, so the stack is exactly ``experts`` slices)."""
    if not ggml.known(t.type_id):
        raise UnknownType(t.name, t.type_id)
    return ggml.ggml_type(t.type_id).bytes_for(ggml.elements(t.dims[:-1]))


def expert_stacks(header: GGUFHeader) -> list[str]:
    """The names of the expert stacks ``header`` holds (``blk.N.ffn_{gate,up,down,gate_up}_exps.*``), in its
    order: a mixture of experts holds at least one, a dense checkpoint none. Raises nothing."""
    return [t.name for t in header.tensors if _split_name(t.name)[1] in _EXPERTS]


def _expert_counts(header: GGUFHeader) -> tuple[int, int]:
    """``expert_count`` and ``expert_used_count`` of a checkpoint holding expert stacks. Raises
    :class:`MissingMetadata` naming each that is missing or 0."""
    arch = header.architecture or "?"
    experts = header.meta_int("expert_count") or 0
    used = header.meta_int("expert_used_count") or 0
    missing = [f"{arch}.{k}" for k, v in (("expert_count", experts), ("expert_used_count", used)) if v <= 0]
    if missing:
        raise MissingMetadata(missing, "a mixture of experts needs how many experts exist and how many a token uses")
    return experts, used


def _mla_widths(header: GGUFHeader) -> tuple[int, int]:
    """DeepSeek's MLA cache widths: ``attention.kv_lora_rank`` (the latent) and ``rope.dimension_count`` (the
    decoupled rope key). Raises :class:`MissingMetadata` naming each that is missing or 0."""
    arch = header.architecture or "?"
    rank = header.meta_int("attention.kv_lora_rank") or 0
    rope = header.meta_int("rope.dimension_count") or 0
    missing = [f"{arch}.{k}" for k, v in (("attention.kv_lora_rank", rank), ("rope.dimension_count", rope)) if v <= 0]
    if missing:
        raise MissingMetadata(missing, "an MLA layer caches its latent (kv_lora_rank) and rope key a position")
    return rank, rope


#: Metadata the step reads as counts and widths (architecture prefix resolved): each, when present, a whole number
#: ≥ 0; those in :data:`_PER_LAYER_KEYS` may instead be an array of them, one per layer.
_COUNT_KEYS = (
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.sliding_window",
    "nextn_predict_layers",
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
    "expert_shared_count",
    "leading_dense_block_count",
    "attention.kv_lora_rank",
    "rope.dimension_count",
    "ssm.time_step_rank",
    "ssm.state_size",
    "ssm.inner_size",
    "ssm.group_count",
    "ssm.conv_kernel",
)
_PER_LAYER_KEYS = frozenset(
    {"embedding_length", "feed_forward_length", "attention.head_count", "attention.head_count_kv"}
)
#: Digits a block index may have: far more blocks than any file's tensor table could name.
_MAX_INDEX_DIGITS = 12


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: Why a window of 0 positions is refused, not priced (session 36, arch42): llama.cpp's own versions disagree on it.
ZERO_WINDOW_SOURCE = (
    "llama.cpp src/llama-hparams.cpp at 01b77b5793 (llama_hparams::is_masked_swa, LLAMA_SWA_TYPE_STANDARD: a "
    "position is masked when p1 - p0 >= n_swa, so with 0 every position, the token's own included; the same test "
    "at c392e5094d, src/llama-context.cpp line 179, pos - p0 >= n_swa); "
    "src/llama-model.cpp at a5410f046c (load_hparams: gemma3 and cohere2 read attention.sliding_window as required "
    "and set their pattern with no check of 0; gemma2 reads it optional, default 4096); a later llama-model.cpp in "
    "the same store (commit not named by the index) sets gemma3 STANDARD only when found_swa && n_swa > 0, else "
    "swa_type NONE (every layer global): the versions disagree on what 0 means, so passprice prices neither"
)


def _zero_window(source: str, key: str, arch: str, period: int) -> str:
    """The bad-input line for a windowed architecture whose window is 0 positions (:data:`ZERO_WINDOW_SOURCE`)."""
    return (
        f"{source}: metadata {key}: 0 ({arch} slides a window over {period - 1} of every {period} layers, and a "
        "window of 0 positions is none llama.cpp agrees on: some versions mask every position of a windowed layer, "
        "the token's own included, a later one reads gemma3's 0 as no window; give the window the model's "
        "config.json gives (sliding_window))"
    )


#: Why a window pattern of 0 is refused (attack69): llama.cpp's ``llama_hparams::set_swa_pattern`` windows every
#: layer for it, where passprice's period rule (``i % p < p − 1``) would window none.
ZERO_PATTERN_SOURCE = (
    "llama.cpp src/llama-hparams.cpp at 01b77b5793 (llama_hparams::set_swa_pattern: swa_layers[il] = n_pattern == 0 "
    "|| il % n_pattern < n_pattern - 1)"
)
#: The key of a header's own window pattern: a period, or one flag a layer (DESIGN.md, Sliding windows).
PATTERN_KEY = "attention.sliding_window_pattern"


def _pattern_problems(header: GGUFHeader, source: str, prefix: str, layers: int) -> list[str]:
    """What is wrong with ``header``'s ``attention.sliding_window_pattern`` (:func:`_windowed_layers` reads it in
    place of the architecture's period), one line naming the file and the key, or ``[]``: a period must be a whole
    number ≥ 1 (0 is refused: llama.cpp windows every layer for it, :data:`ZERO_PATTERN_SOURCE`, the period rule
    none; a negative, a float, a string or a bool is no period); one flag a layer must be an array of exactly
    ``layers`` (the header's blocks) true/false (or 0/1) values: an array naming more layers than exist (1,000 flags
    for gemma3's 18) read its first 18 and priced, exit 0; fewer left the rest full; a flag of 5 or -1 read as
    true (attack69). Raises nothing."""
    name = PATTERN_KEY if PATTERN_KEY in header.metadata and f"{prefix}{PATTERN_KEY}" not in header.metadata \
        else f"{prefix}{PATTERN_KEY}"
    value = header.metadata.get(name)
    if value is None:
        return []
    where = f"{source}: metadata {name}"
    if isinstance(value, int) and not isinstance(value, bool):
        if value == 0:
            return [f"{where}: 0 (a period of 0 windows every layer in llama.cpp and none by the period rule "
                    f"i % p < p - 1: give the period, or one flag a layer)"]
        if value < 0:
            return [f"{where}: {value} is not a period (a whole number >= 1) or one flag a layer"]
        return []
    if isinstance(value, LongArray):  # past KEEP_ARRAY_LIMIT (1,024) elements: llama.cpp has at most 512 layers
        if value.length == layers:
            return [f"{where}: {value.length:,} flags, an array longer than passprice keeps (at most "
                    f"{KEEP_ARRAY_LIMIT:,} elements), so which layers are windowed cannot be read"]
        return [f"{where}: an array of {value.length:,} {value.element_type} values, but the header has "
                f"{layers:,} blocks (one flag a layer)"]
    if isinstance(value, tuple):
        if len(value) != layers:
            return [f"{where}: {len(value):,} flags, but the header has {layers:,} blocks (one flag a layer: "
                    f"{'more layers than exist' if len(value) > layers else 'the rest would be read as full'})"]
        bad = [v for v in value if not (isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)))]
        if bad:
            return [f"{where}: {schema.shown_value(bad[0])} is not a flag (true/false or 0/1, one a layer)"]
        return []
    return [f"{where}: {schema.shown_value(value)} is not a period (a whole number >= 1) or one flag a layer"]


def _first_of(lines: list[str], what: str) -> list[str]:
    """``lines`` (one bad tensor each, of one kind) as one line: the first, then how many more ``what`` are bad
    alike (``…, and 143 more expert stacks alike``); ``[]`` for none. One bad input is one line, however many
    tensors show it."""
    if len(lines) <= 1:
        return lines
    return [f"{lines[0]}, and {len(lines) - 1:,} more {what} alike"]


#: The most lines :func:`header_problems` lists; past it the rest are counted on one more line. A header of 236
#: tensors each with a dimension of 0 printed 236 error lines (attack65).
MAX_HEADER_PROBLEMS = 20


def header_problems(header: GGUFHeader) -> list[str]:
    """:func:`all_header_problems` of ``header``, the first :data:`MAX_HEADER_PROBLEMS` lines, then one counting the
    rest (``FILE: and 216 more problems of this header, not listed``)."""
    out = all_header_problems(header)
    if len(out) <= MAX_HEADER_PROBLEMS:
        return out
    source = header.source or "checkpoint"
    more = len(out) - MAX_HEADER_PROBLEMS
    return [*out[:MAX_HEADER_PROBLEMS], f"{source}: and {more:,} more problems of this header, not listed"]


def all_header_problems(header: GGUFHeader) -> list[str]:
    """Every way ``header`` parses but describes no checkpoint the step can read, one line each naming the file, the
    metadata key or tensor, and what was wrong (many tensors bad the same way one line: the first, and how many more,
    :func:`_first_of`): ``general.architecture`` missing or not a string; a count or width
    (:data:`_COUNT_KEYS`) that is not a whole number ≥ 0; no ``embedding_length`` (a token-row's width); more blocks
    (``block_count``, or a ``blk.N`` tensor) than the tensor table could hold, every block holding a tensor; a tensor
    with a dimension of 0; a windowed architecture's ``attention.sliding_window`` of 0 (:data:`ZERO_WINDOW_SOURCE`:
    it was priced as no window, every layer global, exit 0). Empty when the header is fit to price. Cheap: one look
    at each tensor and key."""
    source = header.source or "checkpoint"
    out: list[str] = []
    arch = header.metadata.get("general.architecture")
    if arch is None:
        out.append(f"{source}: metadata general.architecture: missing (a checkpoint names its architecture)")
    elif not isinstance(arch, str):
        out.append(f"{source}: metadata general.architecture: {arch!r} is not a string")
    prefix = f"{arch}." if isinstance(arch, str) else ""
    for key in _COUNT_KEYS:
        name = key if key in header.metadata and f"{prefix}{key}" not in header.metadata else f"{prefix}{key}"
        value = header.metadata.get(name)
        if value is None:
            if key == "embedding_length":
                out.append(f"{source}: metadata {name}: missing (the width of a token-row)")
            continue
        if key in _PER_LAYER_KEYS and isinstance(value, tuple):
            bad = [v for v in value if not _whole(v)]
            if bad or not value:
                what = f"{bad[0]!r} (one per layer)" if bad else "an empty array"
                out.append(f"{source}: metadata {name}: {what} is not a whole number >= 0")
                continue
        elif not _whole(value):
            what = "a long array" if isinstance(value, LongArray) else schema.shown_value(value)
            out.append(f"{source}: metadata {name}: {what} is not a whole number >= 0")
            continue
        if key == "embedding_length" and (value == 0 or (isinstance(value, tuple) and max(value) == 0)):
            out.append(f"{source}: metadata {name}: 0 (a token-row is at least one element wide)")
        if key in ("attention.key_length", "attention.value_length") and value == 0:
            out.append(f"{source}: metadata {name}: 0 (an attention head is at least one element wide)")
        windows = rules_of(arch if isinstance(arch, str) else None) if key == WINDOW_KEY and value == 0 else None
        if windows is not None and windows.window_period:
            out.append(_zero_window(source, name, windows.name, windows.window_period))
    blocks = header.metadata.get(f"{prefix}block_count")
    layers = blocks if _whole(blocks) else 0
    assert isinstance(layers, int)
    named = 0
    # One line a kind of bad tensor, the first named and the rest counted (arch44: expert_count 10^6 beside stacks of
    # 128 said 144 lines, one a stack, for one bad key).
    digits: list[str] = []
    empty: list[str] = []
    rows: list[str] = []
    for t in header.tensors:
        m = _block().match(t.name)
        if m is not None:
            if len(m.group(1)) > _MAX_INDEX_DIGITS:
                shown = repr(t.name) if len(t.name) <= 60 else f"{t.name[:60]!r}…"
                digits.append(f"{source}: tensor {shown}: block index of {len(m.group(1))} digits")
            else:
                named = max(named, int(m.group(1)) + 1)
        if 0 in t.dims:
            empty.append(f"{source}: tensor {t.name!r}: dimension 0 in {list(t.dims)} (a tensor holds an element)")
        elif t.dims and ggml.known(t.type_id):
            block = ggml.ggml_type(t.type_id).block_elems
            if t.dims[0] % block:
                # ggml stores a row as whole blocks (ggml_row_size asserts it): such a tensor is no GGUF file's, and
                # ceil(elements / block) would price bytes no file holds.
                rows.append(
                    f"{source}: tensor {t.name!r}: rows of {t.dims[0]:,} elements (dims {list(t.dims)}) are not a "
                    f"whole number of {t.type_name} blocks of {block} elements: ggml stores whole blocks a row, so no "
                    "GGUF file holds such a tensor"
                )
    out += _first_of(digits, "tensors") + _first_of(empty, "tensors") + _first_of(rows, "tensors")
    layers = max(layers, named)
    if layers > len(header.tensors):
        out.append(
            f"{source}: metadata {prefix}block_count: the header names {layers:,} blocks (block_count or blk.N "
            f"tensors) but holds {len(header.tensors):,} tensors, and every block holds at least one"
        )
    out += _pattern_problems(header, source, prefix, layers)
    if named and (blocks is None or (isinstance(blocks, int) and _whole(blocks) and blocks < named)):
        # The draft (MTP) layers are the last nextn_predict_layers of block_count: a count that misses blocks the
        # tensors name would make real blocks drafts (or hide them).
        said = "missing" if blocks is None else f"{blocks:,}"
        out.append(f"{source}: metadata {prefix}block_count: {said}, but the tensors name {named:,} blocks (blk.0 …)")
    experts = header.metadata.get(f"{prefix}expert_count")
    unstacked: list[str] = []
    for t in header.tensors:
        _, base, _ = _split_name(t.name)
        if base in _EXPERTS and _whole(experts) and experts and (len(t.dims) < 2 or t.dims[-1] != experts):
            unstacked.append(
                f"{source}: tensor {t.name!r}: dims {list(t.dims)} do not stack {prefix}expert_count = {experts} "
                "experts (the last dimension is the expert)"
            )
    out += _first_of(unstacked, "expert stacks")
    if type(experts) is int and experts == 0 and expert_stacks(header):
        # attack64: decode_step read "missing metadata …expert_count", a key the header holds (as 0), and --routing
        # was refused "BadRouting: the checkpoint is dense".
        out.append(f"{source}: metadata {prefix}expert_count: 0 experts, but the header holds expert stacks "
                   f"({expert_stacks(header)[0]!r} …): a mixture of experts has at least one")
    used = header.metadata.get(f"{prefix}expert_used_count")
    if _whole(experts) and _whole(used) and isinstance(used, int) and isinstance(experts, int) and used > experts:
        out.append(f"{source}: metadata {prefix}expert_used_count: {used:,} experts a token, more than expert_count")
    elif isinstance(used, int) and isinstance(experts, int) and used == 0 and experts > 0:
        # walk45: it read "missing metadata …expert_used_count", a key the header holds (as 0).
        out.append(f"{source}: metadata {prefix}expert_used_count: 0 experts a token, but expert_count is "
                   f"{experts:,}: a mixture of experts routes each token to at least one")
    drafts = header.metadata.get(f"{prefix}nextn_predict_layers")
    if isinstance(drafts, int) and isinstance(blocks, int) and _whole(drafts) and _whole(blocks) and drafts >= blocks:
        # The draft layers are the last nextn_predict_layers of block_count: as many as block_count leaves the main
        # model no block (it was priced as a 1 GB model drafting with a 15 GB block).
        out.append(f"{source}: metadata {prefix}nextn_predict_layers: {drafts:,} draft layers, "
                   f"{'as many as' if drafts == blocks else 'more than'} block_count ({blocks:,}): the main model "
                   "would have no block")
    if not out and _whole(blocks):
        out += _draft_block_problems(header, source, prefix, blocks, drafts if _whole(drafts) else 0)
    if not out:
        out += _block_problems(header, source, prefix, blocks if _whole(blocks) else None)
    if not out:
        out += _latent_problems(header, source, prefix)
    return out


def _draft_block_problems(header: GGUFHeader, source: str, prefix: str, blocks: Any, drafts: Any) -> list[str]:
    """What ``nextn_predict_layers`` says against the tensors (round 18): the draft (MTP) blocks are the last
    ``drafts`` of ``blocks`` (:func:`decode_step`), and a draft block is one holding ``blk.N.nextn.*`` tensors (its
    ``nextn.eh_proj``, ``nextn.enorm``, ``nextn.hnorm`` …: llama.cpp's DeepSeek-V3, GLM-4.5 and Qwen3.5 MTP layers).
    A ``nextn.*`` tensor in a block before them (or with no ``nextn_predict_layers``) would be priced in every pass
    as part of the main model; a draft block holding none is a main-model block the price would leave out when the
    serving does not draft. Either is refused naming the tensor or the key."""
    assert isinstance(blocks, int) and isinstance(drafts, int)
    first = blocks - drafts
    holding: dict[int, str] = {}
    for t in header.tensors:
        layer, base, _ = _split_name(t.name)
        if layer is not None and base.startswith("nextn.") and len(str(layer)) <= _MAX_INDEX_DIGITS:
            holding.setdefault(layer, t.name)
    early = sorted(b for b in holding if b < first)
    if early:
        said = f"{drafts:,} (the last {drafts:,} of {blocks:,} blocks)" if drafts else "0 or missing"
        return [
            f"{source}: tensor {holding[early[0]]!r}: a draft (MTP) tensor in block {early[0]:,}, but "
            f"{prefix}nextn_predict_layers is {said}: it would be priced as part of the main model in every pass"
        ]
    lacking = [b for b in range(first, blocks) if b not in holding] if drafts else []
    if lacking:
        return [
            f"{source}: metadata {prefix}nextn_predict_layers: {drafts:,} draft (MTP) blocks, the last of "
            f"{blocks:,}, but block {lacking[0]:,} holds no nextn.* tensor (nextn.eh_proj …): a main-model block "
            "would be left out of every price that does not draft"
        ]
    return []


def _latent_problems(header: GGUFHeader, source: str, prefix: str) -> list[str]:
    """What an MLA checkpoint's widths say against each other (DeepSeek-V2 report, arXiv:2405.04434, §2.1.2-2.1.3;
    llama.cpp's DeepSeek2 graph): each ``attn_kv_a_mqa`` projects a token-row to the latent and the rope key, so its
    output width (``dims[1]``) is ``attention.kv_lora_rank`` + ``rope.dimension_count``; in the split form (``attn_k_b``
    / ``attn_v_b``, or ``attention.key_length_mla`` given, since ggml-org/llama.cpp#12801) one KV head caches that row,
    so ``attention.key_length`` is the same sum and ``attention.value_length`` the rank. A header that disagrees is
    refused naming the keys: the cache would be priced on widths its tensors do not have."""
    rank = header.meta("attention.kv_lora_rank")
    rope = header.meta("rope.dimension_count")
    latent = [t for t in header.tensors if _split_name(t.name)[1] == "attn_kv_a_mqa"]
    if not latent or not (_whole(rank) and _whole(rope)) or not rank or not rope:
        return []  # no MLA, or widths missing: decode_step names them (MissingMetadata)
    assert isinstance(rank, int) and isinstance(rope, int)
    out = []
    width = rank + rope
    sum_text = f"{prefix}attention.kv_lora_rank {rank:,} + {prefix}rope.dimension_count {rope:,} = {width:,}"
    wrong = next((t for t in latent if len(t.dims) < 2 or t.dims[1] != width), None)
    if wrong is not None:
        out.append(
            f"{source}: tensor {wrong.name!r}: dims {list(wrong.dims)}, but {sum_text}: the latent projection's output "
            "is the latent and the rope key"
        )
    split = header.meta("attention.key_length_mla") is not None or any(
        _split_name(t.name)[1] in ("attn_k_b", "attn_v_b") for t in header.tensors
    )
    if split:
        key, value = header.meta("attention.key_length"), header.meta("attention.value_length")
        if key is not None and key != width:
            out.append(
                f"{source}: metadata {prefix}attention.key_length: {schema.shown_value(key)}, but {sum_text}: a split "
                "MLA checkpoint caches the latent and the rope key as its one KV head's key"
            )
        if value is not None and value != rank:
            out.append(
                f"{source}: metadata {prefix}attention.value_length: {schema.shown_value(value)}, but "
                f"{prefix}attention.kv_lora_rank is {rank:,}: a split MLA checkpoint's value is the latent"
            )
    return out


def _block_problems(header: GGUFHeader, source: str, prefix: str, blocks: object) -> list[str]:
    """What the tensor table and the head counts say against each other, once the counts are whole numbers: a
    ``block_count`` past the blocks the tensors name (phantom blocks, which would be priced as blocks holding
    nothing); blocks holding attention (``attn_k`` or ``attn_qkv``, no ``ssm_*`` tensor) of which none has a KV
    head (a ``head_count_kv`` of 0: every cache would be priced as 0 bytes; one 0 in a per-layer array is a layer
    without attention, as DESIGN.md says, and stays allowed); a block with KV heads but no query heads
    (``head_count`` 0); KV heads outnumbering query heads (each query head reads one KV head: GQA and MQA have
    fewer, never more); query heads that KV heads do not share evenly (GQA gives each KV head ``head_count /
    head_count_kv`` query heads: 4 query heads over 3 KV heads is no attention a kernel runs); and an ``attn_k`` or
    ``attn_v`` weight whose output width is not the KV heads × the head width the metadata gives
    (``attention.key_length`` / ``value_length``, else ``embedding_length / head_count``, DESIGN.md): the cache is
    priced from the metadata, so a tensor that says otherwise is a contradiction refused, not a width guessed."""
    out: list[str] = []
    bases: dict[int, set[str]] = {}
    weights: dict[tuple[int, str], TensorInfo] = {}
    for t in header.tensors:
        layer, base, suffix = _split_name(t.name)
        if layer is not None:
            bases.setdefault(layer, set()).add(base)
            if suffix == "weight" and base in ("attn_k", "attn_v"):
                weights[(layer, base)] = t
    if isinstance(blocks, int) and blocks > 0:
        empty = [i for i in range(blocks) if i not in bases]
        if empty:
            shown = ", ".join(str(i) for i in empty[:8]) + (f" … ({len(empty):,} in all)" if len(empty) > 8 else "")
            out.append(
                f"{source}: metadata {prefix}block_count: {blocks:,}, but no tensor belongs to block {shown} "
                "(blk.N.…): a block holds tensors"
            )
    attention = [
        i
        for i in sorted(bases)
        if ("attn_k" in bases[i] or "attn_qkv" in bases[i]) and not any(b.startswith("ssm_") for b in bases[i])
    ]
    no_query: int | None = None
    wider: int | None = None
    uneven: list[int] = []
    widths: list[tuple[int, TensorInfo, int, str]] = []
    with_kv = 0
    for i in attention:
        q = _per_layer(header, "attention.head_count", i)
        kv = _per_layer(header, "attention.head_count_kv", i)
        kv = q if kv is None else kv
        if kv:
            with_kv += 1
            if not q and no_query is None:
                no_query = i
            if q and kv > q and wider is None:
                wider = i
            if q and kv <= q and q % kv and "attn_kv_a_mqa" not in bases[i]:
                uneven.append(i)
            if q and "attn_kv_a_mqa" not in bases[i]:
                embd = _per_layer(header, "embedding_length", i) or 0
                for base, key in (("attn_k", "attention.key_length"), ("attn_v", "attention.value_length")):
                    weight = weights.get((i, base))
                    given = header.meta_int(key)
                    width = given if given is not None else embd // q
                    how = key if given is not None else "embedding_length / head_count"
                    if weight is not None and len(weight.dims) >= 2 and weight.dims[1] != kv * width:
                        widths.append((i, weight, kv * width, f"{kv} KV heads × {width} ({how})"))
    if attention and not with_kv:
        value = header.meta("attention.head_count_kv")
        key = "attention.head_count_kv" if value is not None else "attention.head_count"
        said = "missing" if header.meta(key) is None else "0 for every block" if isinstance(value, tuple) else "0"
        out.append(
            f"{source}: metadata {prefix}{key}: {said}, but {len(attention):,} blocks hold attention "
            f"(blk.{attention[0]}.attn_k …): no KV cache would be priced; an attention layer has at least one KV head"
        )
    if no_query is not None:
        said = "missing" if header.meta("attention.head_count") is None else f"0 for block {no_query}"
        out.append(
            f"{source}: metadata {prefix}attention.head_count: {said}, but the block has KV heads and holds attention "
            f"(blk.{no_query}.attn_k): an attention layer has at least one query head"
        )
    if wider is not None:
        q, kv = _per_layer(header, "attention.head_count", wider), _per_layer(header, "attention.head_count_kv", wider)
        out.append(
            f"{source}: metadata {prefix}attention.head_count_kv: {kv} KV heads, more than the {q} query heads "
            f"(attention.head_count) of block {wider}: each query head reads one KV head"
        )
    if uneven:
        i = uneven[0]
        q, kv = _per_layer(header, "attention.head_count", i), _per_layer(header, "attention.head_count_kv", i)
        more = f" (and {len(uneven) - 1:,} more blocks)" if len(uneven) > 1 else ""
        out.append(
            f"{source}: metadata {prefix}attention.head_count: {q} query heads do not share {kv} KV heads "
            f"(attention.head_count_kv) evenly in block {i}{more}: GQA gives each KV head head_count / head_count_kv "
            "query heads, a whole number"
        )
    if widths:
        i, t, expected, how = widths[0]
        more = f" (and {len(widths) - 1:,} more tensors)" if len(widths) > 1 else ""
        out.append(
            f"{source}: tensor {t.name!r}: dims {list(t.dims)} are {t.dims[1]:,} wide, but the metadata gives "
            f"{how} = {expected:,}{more}: the header contradicts itself, and the KV cache would be priced from one "
            "of the two"
        )
    return out


def check_header(header: GGUFHeader) -> None:
    """Raise :class:`~passprice.errors.InputError` listing every :func:`header_problems` of ``header``, if any. For a
    header read from a registry entry through the cache of built objects (:func:`passprice.cache.identity`), that it
    has none is kept there too, keyed by the header's entry: ``check`` and ``diff`` looked at every tensor of the 18
    shipped entries on every run (round 28: about 4 % of a ``diff``'s CPU). A header with problems is looked at
    again on every run (the refusal names its path, which the key does not hold)."""
    from passprice import cache

    origin = cache.identity(header)
    if origin is None:
        _fit(header)
        return
    cache.built("header-fit", None, f"{origin}\0fit".encode(), lambda: _fit(header), bool)


def _fit(header: GGUFHeader) -> bool:
    """``True`` when ``header`` has no :func:`header_problems`; else raise :class:`~passprice.errors.InputError`
    listing them."""
    found = header_problems(header)
    if found:
        raise InputError.of(found)
    return True


def decode_step(header: GGUFHeader, deployment: Deployment, *, defer_recurrence: bool = False) -> DecodeStep:
    """The decode step of the checkpoint ``header`` describes, under ``deployment`` (DESIGN.md, The decode step).

    Raises :class:`~passprice.errors.InputError` for a header that parses but describes no checkpoint
    (:func:`header_problems`: counts that are negative or not numbers, more blocks than tensors, empty tensors, an
    expert stack that does not hold ``expert_count`` experts), :class:`UnclassifiedTensor` for a tensor no rule
    places, :class:`UnknownArchitecture` for a ``general.architecture`` passprice does not price and
    :class:`MissingMetadata` (file and key) for a key its architecture needs (:func:`architecture_refusal`),
    :class:`UnknownType` for a tensor type ``gguf`` does not know, :class:`MissingMetadata` for a mixture of
    experts without ``expert_count`` / ``expert_used_count``, an MLA layer without ``attention.kv_lora_rank`` /
    ``rope.dimension_count``, or a recurrent layer the deployment uses without its ``ssm.*`` shape — unless
    ``defer_recurrence``: then the step keeps each recurrence stage without its bytes and ``recurrence`` is ``None``,
    so the pricer refuses it where the seed does (at the stage, after its own checks). Draft layers the deployment
    does not use are not asked for their shape.

    A mixture of experts is read, not refused (DESIGN.md extension, issue 15): its routed experts are an ``experts``
    stage a layer; which of them a pass reads depends on routing, which the pricer takes from a routing record
    (:mod:`passprice.routing`) and refuses (``Routed``) without one.
    """
    check_header(header)
    refusal = architecture_refusal(header)
    if refusal is not None:
        raise refusal
    blocks = header.meta_int("block_count") or 0
    drafts = header.meta_int("nextn_predict_layers") or 0
    first_draft = max(blocks - drafts, 0)

    # Group tensors into (layer, base) stages in table order; classify every tensor first, so an unplaceable one is
    # refused whichever layer it sits in.
    groups: dict[tuple[int | None, str], list[TensorInfo]] = {}
    kinds: dict[tuple[int | None, str], StageKind] = {}
    for t in header.tensors:
        layer, base, _ = _split_name(t.name)
        kind = _classify(layer, base, t.name)
        groups.setdefault((layer, base), []).append(t)
        kinds[(layer, base)] = kind
    layer_bases: dict[int, list[str]] = {}
    for layer, base in groups:
        if layer is not None:
            layer_bases.setdefault(layer, []).append(base)
    n_layers = max(blocks, max(layer_bases, default=-1) + 1)

    window, windowed = _windowed_layers(header, n_layers)
    recurrent = {i for i, bases in layer_bases.items() if any(b.startswith("ssm_") for b in bases)}
    used = {i for i in recurrent if deployment.speculative or not (drafts > 0 and i >= first_draft)}
    rec: Recurrence | None = None
    if used:
        try:
            rec = recurrence_of(header)
        except MissingMetadata:
            if not defer_recurrence:
                raise

    routed_layers = {i for i, bases in layer_bases.items() if any(b in _EXPERTS for b in bases)}
    experts = used_experts = 0
    if routed_layers:
        experts, used_experts = _expert_counts(header)
    latent_layers = {i for i, bases in layer_bases.items() if "attn_kv_a_mqa" in bases and i not in recurrent}
    mla: tuple[int, int] | None = _mla_widths(header) if latent_layers else None

    layers: list[Layer] = []
    for i in range(n_layers):
        bases = set(layer_bases.get(i, ()))
        kv = _per_layer(header, "attention.head_count_kv", i)
        if kv is None:
            kv = _per_layer(header, "attention.head_count", i) or 0
        is_draft = i >= first_draft and drafts > 0
        has_attention = kv > 0 and ("attn_k" in bases or ("attn_qkv" in bases and i not in recurrent))
        if i in latent_layers:
            # MLA: one latent and one rope key a position, shared by every head, whatever head_count_kv says (128 in
            # llama.cpp's earlier DeepSeek files, 1 since the split of attn_kv_b).
            has_attention, kv = True, 1
        if i in recurrent:
            layer_kind = LayerKind.RECURRENT
        elif has_attention:
            layer_kind = LayerKind.WINDOWED if i < len(windowed) and windowed[i] else LayerKind.ATTENTION
        else:
            layer_kind = LayerKind.NONE
        windowed_at = window if layer_kind is LayerKind.WINDOWED else None
        layers.append(
            Layer(
                i,
                layer_kind,
                is_draft,
                kv if has_attention else 0,
                windowed_at,
                latent=has_attention and i in latent_layers,
                routed=i in routed_layers,
            )
        )

    def included(layer: int | None) -> bool:
        return layer is None or deployment.speculative or not layers[layer].draft

    stages: list[Stage] = []
    held_weights: dict[str, int] = {}
    embedding_table = 0
    kv_cache = 0.0
    state_bytes = 0.0
    ring_bytes = 0.0

    def add_tensor_stage(key: tuple[int | None, str]) -> None:
        nonlocal embedding_table
        layer, _base = key
        kind = kinds[key]
        tensors = groups[key]
        names = tuple(t.name for t in tensors)
        if kind is StageKind.EMBED:
            weight = sum(_row_bytes(t) for t in tensors)
        else:
            weight = sum(_tensor_bytes(t) for t in tensors)
        if kind is StageKind.EXPERTS:
            per_expert = sum(_expert_slice_bytes(t) for t in tensors)
            stages.append(
                Stage(kind, layer, names, weight, experts=experts, used=used_experts, expert_bytes=per_expert)
            )
        else:
            stages.append(Stage(kind, layer, names, weight))
        for t in tensors:
            if t.name == "token_embd.weight":
                embedding_table = _tensor_bytes(t)
            else:
                held_weights[t.name] = _tensor_bytes(t)

    def sequence_stage(info: Layer) -> Stage | None:
        nonlocal kv_cache, state_bytes, ring_bytes
        i = info.index
        if info.kind in (LayerKind.ATTENTION, LayerKind.WINDOWED):
            q = _per_layer(header, "attention.head_count", i) or 1
            if info.latent and mla is not None:
                # MLA in its absorbed form (DeepSeek-V2 report, arXiv:2405.04434, §2.1.2-2.1.3): the cache holds the
                # compressed latent (kv_lora_rank) and the decoupled rope key (rope.dimension_count) once a
                # position; every query head scores latent + rope key and sums over the latent. Keys and values
                # share the latent, so a position adds (rank + rope) elements, not kv_heads × (key + value).
                rank, rope = mla
                key, value = rank + rope, rank
                per_position = float(key) * deployment.kv_bytes
            else:
                # A head's widths: attention.key_length / value_length when present (gemma3: 256, not 640 / 4),
                # else the layer's embedding width over its query heads (DESIGN.md).
                embd = _per_layer(header, "embedding_length", i) or 0
                key_length = header.meta_int("attention.key_length")
                value_length = header.meta_int("attention.value_length")
                key = key_length if key_length is not None else embd // max(q, 1)
                value = value_length if value_length is not None else embd // max(q, 1)
                per_position = info.kv_heads * (key + value) * deployment.kv_bytes
            # A windowed layer holds at most `window` positions and reads at most `window − 1` cached ones (its row
            # written besides: it attends `window`, architectures.WINDOW_SOURCE).
            positions = deployment.ctx if info.window is None else windowed_held(deployment.ctx, info.window)
            read = deployment.ctx if info.window is None else windowed_reads(deployment.ctx, info.window)
            kv_cache += per_position * positions
            return Stage(
                StageKind.ATTENTION,
                i,
                (),
                0,
                state_read=per_position * read,
                state_write=per_position,
                ops=2 * q * (key + value),
                split=Split(q, info.kv_heads, key, value),
                window=info.window,
            )
        if info.kind is LayerKind.RECURRENT and rec is not None:
            dense = rec.state * deployment.state_bytes
            ring_row = rec.channels * deployment.state_bytes
            ring = rec.ring_rows * ring_row
            state_bytes += dense
            ring_bytes += ring
            return Stage(StageKind.RECURRENCE, i, (), 0, state_read=dense + ring, state_write=dense + ring_row)
        if info.kind is LayerKind.RECURRENT:
            # Its shape is missing and the caller defers the refusal to the stage (``defer_recurrence``).
            return Stage(StageKind.RECURRENCE, i)
        return None

    # Forward order: the embedding, each block (its projections and norms, with its attention or recurrence before
    # its output projection), then the final norm and the head.
    globals_before = [k for k in groups if k[0] is None and kinds[k] is StageKind.EMBED]
    globals_after = [k for k in groups if k[0] is None and kinds[k] is not StageKind.EMBED]
    for key in globals_before:
        add_tensor_stage(key)
    for info in layers:
        if not included(info.index):
            continue
        keys = [(info.index, b) for b in layer_bases.get(info.index, ())]
        seq = sequence_stage(info)
        recurrence_tensors = [k for k in keys if kinds[k] is StageKind.RECURRENCE]
        placed = False
        for key in keys:
            if kinds[key] is StageKind.RECURRENCE:
                continue
            if seq is not None and not placed and key[1] in _OUTPUT_SIDE:
                stages.append(_with_tensors(seq, recurrence_tensors, groups))
                placed = True
            add_tensor_stage(key)
        if seq is not None and not placed:
            stages.append(_with_tensors(seq, recurrence_tensors, groups))
        for key in recurrence_tensors:
            for t in groups[key]:
                held_weights[t.name] = _tensor_bytes(t)
    for key in globals_after:
        add_tensor_stage(key)
    has_head = any(s.kind is StageKind.HEAD and s.layer is None for s in stages)
    if not has_head and header.tensor("token_embd.weight") is not None:
        # Tied embeddings: the head reads the embedding table as a matrix; the table is still held once.
        table = next(t for t in header.tensors if t.name == "token_embd.weight")
        stages.append(Stage(StageKind.HEAD, None, (table.name,), _tensor_bytes(table)))

    held = (
        Held(HeldClass.WEIGHTS, float(sum(held_weights.values()))),
        Held(HeldClass.EMBEDDING_TABLE, float(embedding_table)),
        Held(HeldClass.KV_CACHE, kv_cache),
        Held(HeldClass.RECURRENT_STATE, state_bytes),
        Held(HeldClass.CONV_RING, ring_bytes),
    )
    return DecodeStep(tuple(stages), held, tuple(layers), rec, float(draft_bytes(header)), deployment.speculative)


def draft_bytes(header: GGUFHeader) -> int:
    """Bytes of the tensors of the checkpoint's draft (MTP) blocks, ``blk.N.*`` with ``N ≥ block_count −
    nextn_predict_layers`` (the rule :func:`decode_step` marks draft layers by); 0 without draft blocks. A tensor of
    a GGML type ``gguf`` does not know counts 0 (:func:`decode_step` refuses it). What ``kv``, ``checkpoints`` and a
    NotResident refusal say their held bytes count (:func:`passprice.serving.held_once_counts`)."""
    drafts = header.meta_int("nextn_predict_layers") or 0
    if drafts <= 0:
        return 0
    first = max((header.meta_int("block_count") or 0) - drafts, 0)
    total = 0
    for t in header.tensors:
        m = _block().match(t.name)
        if m is not None and int(m.group(1)) >= first and ggml.known(t.type_id):
            total += ggml.tensor_bytes(t.type_id, t.dims)
    return total


def _with_tensors(
    stage: Stage, keys: Sequence[tuple[int | None, str]], groups: Mapping[Any, list[TensorInfo]]
) -> Stage:
    """A recurrence stage with the layer's other ``ssm_*`` tensors (its ``ssm_a``, ``ssm_dt``, ``ssm_conv1d``,
    ``ssm_norm`` …) and their bytes; an attention stage unchanged."""
    if stage.kind is not StageKind.RECURRENCE or not keys:
        return stage
    tensors = [t for k in keys for t in groups[k]]
    return attrs.evolve(
        stage,
        tensors=tuple(t.name for t in tensors),
        weight_bytes=sum(_tensor_bytes(t) for t in tensors),
    )
