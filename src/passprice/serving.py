"""A card that holds its token-rows and streams its weights pays for each weight once a pass.

Port of the seed ``serving.rs`` (the Rust pricing module docs/DESIGN.md describes). Every weight crosses the card once a
pass and multiplies every token-row the batch holds: each sequence's verified token and the tokens drafted after it.
What does not amortize is each sequence's own: the recurrent state it reads and writes back, its KV cache, its log, its
conv ring. A pass therefore costs the weights once plus each sequence's bytes, against the arithmetic of all the rows.
Five terms overlap — the card's memory, the host link, the integer array, the f32 vector units, the block-scale lanes —
so a pass takes the largest, and that term is what it *binds* on.

The array multiplies 4-bit weight codes by 8-bit activation codes: a wider code is split into 4-bit digits and a
two-word activation into two words, one pass each (:func:`array_passes`). Every weight block's integer sums leave the
array for a block-scale lane (:func:`lane_cycles`). A float matrix rides the vector units (:func:`is_float`). A
format neither reads is refused by name (:class:`Undecoded`), never priced as a guess.

Where DESIGN.md extends the seed (sliding-window layers, per-layer head widths, the facts a price rests on) the
extension is marked; everything else follows the seed's arithmetic, refusal order and tie rules exactly.
"""

from __future__ import annotations

import enum
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from passprice import ggml
from passprice.architectures import paged_cap, paged_held, windowed_held, windowed_reads
from passprice.bounds import position_text
from passprice.cards import TENSOR_FORMATS, Card
from passprice.cost import Pricing, pass_seconds, pass_terms
from passprice.errors import InputError
from passprice.facts import Fact, Provenance, weakest
from passprice.gguf_records import GGUFHeader
from passprice.tables import byte_figure

if TYPE_CHECKING:  # a mixture of experts' routing is read only when a serving names one
    from passprice.decode import DecodeRefusal, DecodeStep, Deployment
    from passprice.routing import Router, Routing

#: Rust's ``u32::MAX``: the seed counts sequences in ``u32`` and saturates there.
U32_MAX = 2**32 - 1

#: Vector multiply-add slots per score a softmax takes (seed ``SOFTMAX_MACS_PER_SCORE``): the exponential's twelve
#: f32 operations plus the running maximum, the sum and the rescale, fifteen operations, two to a slot.
SOFTMAX_MACS_PER_SCORE = 7.5

#: Sub-block multipliers a block-scale lane applies in one cycle (seed ``LANE_PRODUCTS``).
LANE_PRODUCTS = 16.0

#: Positions one block of attention's weighted sum on the array spans: its probabilities share a scale (seed
#: ``VALUE_BLOCK``).
VALUE_BLOCK = 32.0


class StateFlushMode(enum.Enum):
    """The three ways of :class:`StateFlush`."""

    EVERY_PASS = "every-pass"
    EVERY = "every"
    TRAILING = "trailing"


@attrs.frozen
class StateFlush:
    """How the recurrent state is carried from one token to the next (seed ``StateFlush``).

    ``every-pass``: the dense state is read and written back every pass (with drafts, the state after every
    candidate prefix is written and the accepted one kept). ``every:N``: written back once every ``N`` accepted
    tokens; between flushes a log of each token's key, value, decay exponent and gate carries it, read with the
    state every pass. ``trailing:N``: written back a window behind, each window of ``N`` logged tokens replayed over
    the next window; the log holds at most ``2N`` tokens.
    """

    mode: StateFlushMode = StateFlushMode.EVERY_PASS
    tokens: int = 1

    @classmethod
    def parse(cls, text: str) -> StateFlush:
        """``every-pass``, ``every:N`` or ``trailing:N`` (N ≥ 1). Raises :class:`ValueError` with the accepted forms."""
        if text == "every-pass":
            return cls()
        m = re.fullmatch(r"(every|trailing):([1-9][0-9]{0,9})", text)
        if m is not None:
            return cls(StateFlushMode(m.group(1)), int(m.group(2)))
        raise ValueError(f"{text!r} is not a state flush (every-pass, every:N or trailing:N, N >= 1)")

    def __str__(self) -> str:
        return "every-pass" if self.mode is StateFlushMode.EVERY_PASS else f"{self.mode.value}:{self.tokens}"


@attrs.frozen
class Draft:
    """The drafted tokens each sequence verifies in a pass (seed ``Draft``).

    ``acceptance[i]`` is the chance draft ``i + 1`` is accepted given every draft before it was, each a fact (its
    lock path is ``draft.acceptance.{i+1}``). ``head_rows``: vocabulary rows the drafting head reads (the most
    frequent tokens), or ``None`` for the whole head; verification always reads the whole head. ``method`` names the
    drafting method whose facts these are.
    """

    tokens: int
    acceptance: tuple[Fact, ...]
    head_rows: int | None = None
    method: str | None = None

    def facts(self) -> dict[str, Fact]:
        """The acceptance facts by lock path: ``draft.acceptance.1`` …"""
        return {f"draft.acceptance.{i + 1}": f for i, f in enumerate(self.acceptance)}


@attrs.frozen
class ContextClass:
    """A class of the batch's sequences by context (seed ``ContextClass``): its ``share`` of the batch, the mean
    ``position`` its sequences have reached, and the context ``limit`` each is allowed (positions)."""

    share: float
    position: float
    limit: int


@attrs.frozen
class ContextMix:
    """The contexts of a batch's sequences (seed ``ContextMix``). Per-position costs of full-attention layers are
    linear in position, so a pass reads, and a paged cache holds, what the mean position says; a contiguous cache
    holds what the mean limit says. A sliding-window layer caps each class at the window (DESIGN.md), so its terms
    are computed per class (:meth:`windowed_position`, :meth:`windowed_held`). Each mean is an exactly rounded sum
    (:func:`math.fsum`), so the order the classes are written in moves no bit of a price (a plain sum of three
    classes rounds by its order; of one or two it is the same number, so no recorded price moved: slip round 43)."""

    classes: tuple[ContextClass, ...]

    @classmethod
    def uniform(cls, position: float, limit: int) -> ContextMix:
        """Every sequence at ``position`` of ``limit``."""
        return cls((ContextClass(1.0, position, limit),))

    def mean_position(self) -> float:
        """Σ share × position (positions)."""
        return math.fsum(c.share * c.position for c in self.classes)

    def mean_limit(self) -> float:
        """Σ share × limit (positions)."""
        return math.fsum(c.share * float(c.limit) for c in self.classes)

    def longest(self) -> int:
        """The longest context any class is allowed (0 for none)."""
        return max((c.limit for c in self.classes), default=0)

    def paged_held(self, kv_page: int) -> float:
        """Positions a full layer's paged cache holds per sequence: the seed's mean position + page / 2, each class
        at most the whole pages its limit needs (:func:`passprice.architectures.paged_held`; DESIGN.md, Contexts).
        A mix no class of which reaches that cap is the seed's sum to the bit (every shipped lock's)."""
        half = kv_page / 2.0
        if all(c.position + half <= float(paged_cap(c.limit, kv_page)) for c in self.classes):
            return self.mean_position() + half
        return math.fsum(c.share * paged_held(c.position, kv_page, c.limit) for c in self.classes)

    def windowed_position(self, window: int) -> float:
        """Σ share × min(position, window − 1): the mean cached positions a windowed layer reads, its row's own
        written besides, so it attends ``window`` (:func:`passprice.architectures.windowed_reads`; DESIGN.md
        extension)."""
        return math.fsum(c.share * windowed_reads(float(c.position), window) for c in self.classes)

    def windowed_held(self, window: int, kv_page: int | None) -> float:
        """Positions a windowed layer holds per sequence: Σ share × min(limit, window) for a contiguous cache, or
        Σ share × min(position + page / 2, window) for a paged one, position + page / 2 at most the pages the
        class's limit needs (:func:`passprice.architectures.windowed_held`, :func:`~passprice.architectures.paged_held`;
        DESIGN.md extension)."""
        if kv_page is None:
            return math.fsum(c.share * windowed_held(float(c.limit), window) for c in self.classes)
        return math.fsum(c.share * windowed_held(paged_held(c.position, kv_page, c.limit), window)
                         for c in self.classes)


class AttentionMath(enum.Enum):
    """Where attention's two products over the cache run (seed ``AttentionMath``): ``vector`` (f32, over the cache
    as stored) or ``array`` (int8 queries against an int8 cache and 8-bit probabilities against it, two passes
    each; the softmax stays on the vector units)."""

    VECTOR = "vector"
    ARRAY = "array"


class ActScaling(enum.Enum):
    """How the activations a matrix reads are scaled: per the matrix format's block (``per-block``) or per 32
    elements (``sub32``) (the seed's ``ActScaling``)."""

    PER_BLOCK = "per-block"
    SUB32 = "sub32"


@attrs.frozen
class Serving:
    """One serving configuration of a checkpoint on a card (seed ``Serving``).

    ``batch``: sequences that ride a pass. ``contexts``: their context mix. ``kv_page``: positions per KV page
    when caches are paged (each sequence holds its length and half a page), ``None`` for contiguous caches (each
    holds its whole limit). ``kv_bytes``: bytes per KV-cache element; ``state_bytes``: bytes per recurrent-state
    element. ``activation_words``: words each activation crosses the array in (1 or 2). ``scaling``: activation
    scaling. ``kv_rotated``: Walsh–Hadamard rotation of cached heads. ``draft``: drafted tokens, or ``None``.
    ``flush``: how the recurrent state is carried. ``host_memory``: whether sequences may live in host memory.

    DESIGN.md extension (issue 8, prefix caching): ``shared_prefix``: positions at the start of every sequence's
    context that the batch shares (a system prompt). With a paged cache its whole pages are held once for the batch
    instead of once per sequence (vLLM's automatic prefix caching shares full blocks only); ``prefix_read_once``:
    attention streams those pages once a pass for the whole batch, as it streams the weights, instead of once per
    sequence. Both default to the seed's behaviour (no sharing), which leaves every price bit for bit as before.

    DESIGN.md extension (issue 15, mixtures of experts): ``routing``: how the checkpoint's tokens route (a routing
    record's facts), which the pricer needs for a mixture of experts and refuses it (:class:`Routed`) without.

    Extension (a service-level cap): ``max_tpot``: the slowest time per output token a sequence may see, in
    seconds; the best-batch search (:meth:`PassShape.best`) looks only at batches whose TPOT (the pass over the
    tokens each sequence emits) is at most it, and refuses :class:`~passprice.batching.OverTPOT` when batch 1 is
    already slower. ``None`` (the default): no cap, the seed's search. A price at a given batch does not read it.

    Extension (memory headroom, walkthrough 39): ``memory_use``: the fraction (0 < f ≤ 1) of the card memory the
    serving may fill (:attr:`passprice.cost.Pricing.capacity`: the card's, less a stack's ``memory.reserved``) that
    the best-batch and largest-batch searches may fill: they run at capacity × f (:func:`passprice.batching.use_of`).
    ``None`` (the default): all of it, the seed's searches (which picked a batch at 99.9 % of an H200). A price at a
    given batch does not read it.
    """

    batch: int = 1
    contexts: ContextMix = attrs.field(factory=lambda: ContextMix.uniform(2048.0, 4096))
    kv_page: int | None = None
    attention: AttentionMath = AttentionMath.VECTOR
    kv_bytes: float = 2.0
    state_bytes: float = 4.0
    activation_words: int = 1
    scaling: ActScaling = ActScaling.PER_BLOCK
    kv_rotated: bool = False
    draft: Draft | None = None
    flush: StateFlush = StateFlush()
    host_memory: bool = False
    shared_prefix: int = 0
    prefix_read_once: bool = False
    routing: Routing | None = None
    max_tpot: float | None = None
    memory_use: float | None = attrs.field(default=None, validator=lambda _, __, v: _check_use(v))


def _check_use(value: float | None) -> None:
    """:attr:`Serving.memory_use`'s rule (the serving schema states it for files): ``None`` or 0 < value ≤ 1.
    Raises :class:`ValueError`."""
    if value is not None and not 0.0 < value <= 1.0:
        raise ValueError(f"memory_use must lie above 0 and at most 1, not {value!r}")


_ONE_PASS = frozenset({"Q2_K", "Q3_K", "Q4_0", "Q4_1", "Q4_K"})
_TWO_PASSES = frozenset({"Q5_0", "Q5_1", "Q5_K", "Q6_K", "Q8_0", "IQ4_NL", "IQ4_XS", "MXFP4", "NVFP4"})
_LANE_PRODUCTS_BY_TYPE = {
    "Q4_0": 0.0,
    "Q4_1": 0.0,
    "Q5_0": 0.0,
    "Q5_1": 0.0,
    "Q8_0": 0.0,
    "IQ4_NL": 0.0,
    "MXFP4": 0.0,
    "NVFP4": 4.0,
    "IQ4_XS": 8.0,
    "Q3_K": 16.0,
    "Q4_K": 16.0,
    "Q5_K": 16.0,
    "Q6_K": 16.0,
    "Q2_K": 32.0,
}


def array_passes(ty: ggml.GgmlType) -> int | None:
    """Passes of the 4-bit array one weight of ``ty`` takes, or ``None`` for a type the array does not read
    (seed ``array_passes``): codes of up to four bits (Q2_K, Q3_K, Q4_0, Q4_1, Q4_K) one pass; five-, six- and
    eight-bit codes (Q5_0, Q5_1, Q5_K, Q6_K, Q8_0, and the int8 table values IQ4_NL/IQ4_XS index) two 4-bit digits,
    two passes, recombined exactly as ``lo + 16·hi``.

    DESIGN.md extension (issue 15): MXFP4 and NVFP4 are read as IQ4_NL is, a 4-bit code indexing an int8 table
    value: the E2M1 value doubled, 0, ±1, ±2, ±3, ±4, ±6, ±8, ±12 (ggml-common.h ``kvalues_mxfp4``, which
    ``ggml_vec_dot_mxfp4_q8_0`` multiplies by 8-bit activations), five bits signed, so two passes; the halving folds
    into the block scale."""
    if ty.name in _ONE_PASS:
        return 1
    if ty.name in _TWO_PASSES:
        return 2
    return None


def lane_cycles(ty: ggml.GgmlType, scaling: ActScaling) -> float | None:
    """Cycles a block-scale lane spends on one weight block of ``ty`` read against one activation word, or ``None``
    for a type the array does not read (seed ``lane_cycles``).

    A lane applies the block's sub-block scales and mins, :data:`LANE_PRODUCTS` a cycle (Q4_0…IQ4_NL: none;
    IQ4_XS: 8; Q3_K…Q6_K: 16; Q2_K: 32), at least one cycle a block; activations scaled per 32 elements against a
    larger block give the block one term per 32 elements, one cycle each. DESIGN.md extension (issue 15): MXFP4's
    block of 32 has one E8M0 scale (none beyond the block's); NVFP4's GGUF block of 64 has four E4M3 scales, one per
    16 elements (4 products: one cycle a block, two under ``sub32``).
    """
    products = _LANE_PRODUCTS_BY_TYPE.get(ty.name)
    if products is None:
        return None
    per_block = max(products / LANE_PRODUCTS, 1.0)
    if scaling is ActScaling.PER_BLOCK:
        return per_block
    return max(per_block, ty.block_elems / 32.0)


def is_float(ty: ggml.GgmlType) -> bool:
    """Whether the vector units read ``ty`` as a float matrix: F32, F16, BF16 (seed ``is_float``)."""
    return ty.name in ("F32", "F16", "BF16")


class ServingRefusal(Exception):
    """Why a serving could not be priced (seed ``ServingRefusal``). ``name`` is the variant's seed name;
    :meth:`fields` gives its fields for ``--json`` (``{"refusal": name, ...fields}``); ``str()`` says what to fix."""

    name: ClassVar[str] = "ServingRefusal"

    def fields(self) -> dict[str, Any]:
        """The refusal's fields, JSON-ready."""
        return {}

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": NAME, ...fields, "message": text}``."""
        return {"refusal": self.name, **self.fields(), "message": str(self)}


class Step(ServingRefusal):
    """The checkpoint's decode step itself is refused (wraps a :class:`~passprice.decode.DecodeRefusal`)."""

    name = "Step"

    def __init__(self, refusal: DecodeRefusal) -> None:
        self.refusal = refusal
        # The reason's name on the line (walk48: `Step: decode step refused: …olmoe…` named no word `explain` reads,
        # where import's warning and a sweep's cell say `UnknownArchitecture`).
        super().__init__(f"decode step refused ({refusal.name}): {refusal}")

    def fields(self) -> dict[str, Any]:
        return {"step": {"refusal": self.refusal.name, **self.refusal.fields()}}


class Undecoded(ServingRefusal):
    """A matrix in a format neither the array nor the vector units read."""

    name = "Undecoded"

    def __init__(self, tensor: str, ty: str) -> None:
        self.tensor = tensor
        self.ty = ty
        super().__init__(
            f"tensor {tensor!r} is {ty}, which neither the integer array nor the vector units read: "
            "requantize it to a K-quant, Q4_0…Q8_0, IQ4_NL/IQ4_XS, MXFP4/NVFP4, or a float type"
        )

    def fields(self) -> dict[str, Any]:
        return {"tensor": self.tensor, "ty": self.ty}


class MissingTensor(ServingRefusal):
    """A tensor a stage names that the header does not hold."""

    name = "MissingTensor"

    def __init__(self, tensor: str) -> None:
        self.tensor = tensor
        super().__init__(f"the checkpoint has no tensor {tensor!r}")

    def fields(self) -> dict[str, Any]:
        return {"tensor": self.tensor}


def held_once_counts(
    draft: float, drafting: bool, unit: Callable[[float], str] | None = None, bracket: bool = True
) -> str:
    """What a figure of bytes held once (weights and embedding table, :attr:`PassShape.held_shared`) counts of a
    checkpoint with ``draft`` bytes of draft (MTP) blocks (:attr:`passprice.decode.DecodeStep.draft_weights`):
    ``""`` without any, else a parenthesis saying whether they are in it (``drafting``: the serving drafts with
    them, so it holds them) or not (a deployment that does not draft never reads them). ``unit`` writes the bytes
    (default: every digit, as a refusal writes bytes); without ``bracket``, a clause after a comma instead. The one
    wording ``price``, ``kv`` and ``checkpoints`` use."""
    if draft <= 0:
        return ""
    shown = unit(draft) if unit is not None else f"{byte_figure(draft)}-byte"
    if drafting:
        said = f"with the {shown} draft (MTP) block the serving drafts with"
    else:
        said = f"without the {shown} draft (MTP) block, held only when drafting with it"
    return f" ({said})" if bracket else f", {said}"


class NotResident(ServingRefusal):
    """What the serving holds (bytes) exceeds the card's memory, and the host's if it may use it."""

    name = "NotResident"

    def __init__(
        self, needed: float, capacity: float, memory: str = "card", weights: float = 0.0, draft: float = 0.0,
        drafting: bool = False, use: tuple[float, float] | None = None, per_sequence: float = 0.0,
        paged: bool = False,
    ) -> None:
        self.needed = needed
        self.capacity = capacity
        self.memory = memory
        self._given = (weights, draft, drafting)
        self._per_sequence = per_sequence
        # walk44: a batch past the card's room said how many bytes, never how many sequences fit (the number a user
        # lowers the batch to): the seed's card_room, ⌊(capacity − held once) / held per sequence⌋, as max-batch.
        self.fits: int | None = None
        #: Bytes held once (weights, embedding table, draft) and whether they alone pass the card's capacity: no
        #: batch, context or cache choice helps (a measured run is told to correct its card or checkpoint, not its
        #: batch or positions: :func:`passprice.measurements.run_refusal`).
        self.held_once = weights
        self.weights_alone = memory == "card" and weights > capacity
        if memory == "card" and per_sequence > 0 and 0 < weights <= capacity:
            self.fits = int(min(math.floor((capacity - weights) / per_sequence), U32_MAX))
        ways = ["lower the context limit" if self.fits == 0 else "lower the batch or the context limit",
                *([] if paged else ["page the KV cache (--kv-page)"]),
                "let sequences use host memory (--host-memory)",
                *([] if use is None else ["give a larger memory use (--memory-use)"])]
        advice = f"{', '.join(ways[:-1])}, or {ways[-1]}"
        if self.fits is not None:
            room = {0: "no sequence fits", 1: "at most 1 sequence fits"}.get(
                self.fits, f"at most {self.fits:,} sequences fit")
            where = "" if self.fits == 0 else " (passprice max-batch)"
            advice = (f"{room} beside the {byte_figure(weights)} bytes held once, {byte_figure(per_sequence)} bytes "
                      f"a sequence{where}: {advice}")
        larger = (", a larger card or a larger memory use (--memory-use)" if use is not None
                  else " or a larger card")
        if weights > capacity:
            # What is held once (weights, embedding table) alone does not fit: no batch or cache choice helps.
            # walk44: DeepSeek-V3 (403.5 GB) on a 192 GB MI300X was refused the same with --host-memory, which a
            # user reads as offloading weights (llama.cpp's --n-cpu-moe): it moves sequences only. Say so, and how
            # many times the capacity the weights take.
            advice = (f"the weights and embedding table alone take {byte_figure(weights)} bytes"
                      f"{held_once_counts(draft, drafting)}, {weights / capacity:.3g} times what it holds: no batch "
                      f"fits; a smaller type mix{larger} (--host-memory holds sequences in host memory, never "
                      "weights: passprice prices no weights held off the card)")
        # Under a memory use the capacity is the searches' share of the card (attack 60: "--memory-use 1e-9" said
        # "the card memory … holds 80" of an 80 GB card, naming no fraction).
        of = f" (memory use {use[0]:.4g} of its {byte_figure(use[1])})" if use is not None else ""
        held = byte_figure(capacity)
        lacking = f"the {memory} memory must hold {byte_figure(needed)} bytes but holds {held}{of}"
        #: What does not fit and, when some sequences do, how many: without the advice, which names options of
        #: price and best (a measured run has none of them).
        self.shortfall = lacking
        if self.fits is not None and weights <= capacity:
            self.shortfall += f" ({room} beside the {byte_figure(weights)} bytes held once)"
        super().__init__(f"{lacking}: {advice}")

    def under_use(self, use: float, whole: float) -> NotResident:
        """This refusal said of a search's share ``use`` (0 < use ≤ 1, :attr:`Serving.memory_use`) of the card
        memory's ``whole`` (bytes): the same figures, the fraction and the whole named. Raises nothing."""
        return NotResident(self.needed, self.capacity, self.memory, *self._given, use=(use, whole),
                           per_sequence=self._per_sequence)

    def paged(self) -> NotResident:
        """This refusal said of a serving whose KV cache is paged already (walk44: its advice to page the cache,
        ``--kv-page``, was said of ``qwen3-30b-a3b-h200`` whose cache is paged 16 positions a page): the same
        figures, that advice left out. Raises nothing."""
        return NotResident(self.needed, self.capacity, self.memory, *self._given, per_sequence=self._per_sequence,
                           paged=True)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"needed": self.needed, "capacity": self.capacity, "memory": self.memory}
        if self.fits is not None:
            out["fits"] = self.fits
        return out


class OnChipOverflow(ServingRefusal):
    """The batch's token-rows (bytes) exceed the card's on-chip memory."""

    name = "OnChipOverflow"

    def __init__(self, needed: float, capacity: float) -> None:
        self.needed = needed
        self.capacity = capacity
        super().__init__(
            f"the batch's token-rows take {byte_figure(needed)} bytes on chip but the card holds "
            f"{byte_figure(capacity)}: lower the batch or the drafted tokens"
        )

    def fields(self) -> dict[str, Any]:
        return {"needed": self.needed, "capacity": self.capacity}


class BadDraft(ServingRefusal):
    """A draft whose acceptance list is not one probability in [0, 1] per drafted token.

    ``method`` and ``figures``: the registered drafting method (``facts/drafts/METHOD.toml``) whose acceptance
    figures, ``figures`` of them, are fewer than the tokens drafted; the message then says what to do (draft at most
    ``figures`` tokens, or add the next figure to the method's file with its source) rather than ask for a figure the
    command line cannot give (walkthrough 36: ``price deepseek-v3-h200 --draft-tokens 2`` read ``give one acceptance
    figure in [0, 1] per drafted token``)."""

    name = "BadDraft"

    def __init__(self, detail: str, method: str | None = None, figures: int | None = None) -> None:
        self.detail = detail
        self.method = method
        self.figures = figures
        if method is not None and figures is not None:
            plural = "s" if figures != 1 else ""
            super().__init__(
                f"bad draft: {detail}: drafting method {method} gives acceptance figures for {figures} draft{plural} "
                f"(facts/drafts/{method}.toml), so a longer draft would be priced on a guess: draft at most "
                f"{figures} token{plural} (--draft-tokens {figures}), or add acceptance.{figures + 1} to that file, "
                "cited as every fact is"
            )
        else:
            super().__init__(f"bad draft: {detail}: give one acceptance figure in [0, 1] per drafted token")

    def fields(self) -> dict[str, Any]:
        return {"detail": self.detail}


class NoDrafter(ServingRefusal):
    """Drafting with ``method`` on ``checkpoint`` without its drafter in the header: the checkpoint carries no
    drafting (MTP) blocks (``nextn_predict_layers`` 0), or the method drafts with a separate draft model. The seed
    prices each drafting step through the checkpoint's own MTP blocks; without them a drafted token would cost
    only the head's rows, a speedup bought with a drafter priced as free. Refused, not priced on a guess."""

    name = "NoDrafter"

    def __init__(self, method: str | None, checkpoint: str | None, why: str) -> None:
        self.method = method
        self.checkpoint = checkpoint
        self.why = why
        what = f"drafting method {method!r}" if method else "drafting"
        on = f" on {checkpoint!r}" if checkpoint else ""
        super().__init__(
            f"{what}{on}: {why}, so its drafted tokens would be priced as if drafting cost nothing but the head's "
            "rows; price without drafts, or a checkpoint that carries its drafter (MTP blocks: nextn_predict_layers)"
        )

    def fields(self) -> dict[str, Any]:
        return {"method": self.method, "checkpoint": self.checkpoint, "why": self.why}


class Empty(ServingRefusal):
    """A serving of no sequences, or no activation words."""

    name = "Empty"

    def __init__(self, what: str = "batch") -> None:
        self.what = what
        if what == "activation words":
            message = (
                "no activation words: --activation-words is 0, but each activation enters the integer array as at "
                "least one 8-bit word (1: 8-bit activations, 2: 16-bit); give 1 or more"
            )
        else:
            message = f"an empty serving: the {what} is 0 sequences; give a batch of at least 1"
        super().__init__(message)

    def fields(self) -> dict[str, Any]:
        return {"what": self.what}


class Routed(ServingRefusal):
    """A mixture of experts priced without a routing record: which experts a pass reads depends on how its rows
    route, and that is a fact the serving must name (DESIGN.md, Routing)."""

    name = "Routed"

    def __init__(self, experts: int, header: GGUFHeader | None = None) -> None:
        self.experts = experts
        #: The checkpoint refused (not in the JSON payload): the routing records offered are those whose
        #: ``checkpoints`` scope holds it (:func:`passprice.routing.records_for`).
        self.header = header
        super().__init__(
            f"a mixture of {experts} experts: which experts a pass reads depends on how its rows route; name a "
            "routing record (facts/routing/NAME.toml) with --routing NAME or `routing = NAME` in the serving "
            "(facts/routing/uniform.toml states uniform routing as an assumption)"
        )

    def fields(self) -> dict[str, Any]:
        return {"expert_count": self.experts}


class BadRouting(ServingRefusal):
    """A routing record that does not describe the checkpoint's router (DESIGN.md extension, issue 15): it names
    another expert count or experts a token, or shares no router of this size can take, or the checkpoint is dense
    and has no router at all."""

    name = "BadRouting"

    def __init__(
        self, routing: str, detail: str, experts: int | None = None, header: GGUFHeader | None = None
    ) -> None:
        self.routing = routing
        self.detail = detail
        # walk44: of a mixture of experts, its expert count and header, so the command line can name the records
        # that fit it as a Routed refusal does (`… the checkpoint has 8` said nothing of which record to name)
        self.experts = experts
        self.header = header
        super().__init__(f"routing {routing} does not fit this checkpoint: {detail}")

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"routing": self.routing, "detail": self.detail}
        if self.experts is not None:
            out["expert_count"] = self.experts
        return out


class NoHostLink(ServingRefusal):
    """A serving that may use host memory, on a card with no host link."""

    name = "NoHostLink"

    def __init__(self, card: str) -> None:
        self.card = card
        super().__init__(f"card {card!r} has no host link (host.* facts): price it without --host-memory")

    def fields(self) -> dict[str, Any]:
        return {"card": self.card}


#: What ``price``'s refusal of a class at or past its limit advises, in its options' words; a sweep's summary says
#: it in the sweep's (:data:`SWEEP_PAST_LIMIT`, :meth:`BadContexts.for_sweep`).
PAST_LIMIT = "raise --limit or lower --position"
SWEEP_PAST_LIMIT = "raise --limit or lower --positions"


class BadContexts(ServingRefusal):
    """A context mix whose shares do not sum to one, or a class at or past its own limit (position ≥ limit)."""

    name = "BadContexts"

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"bad context mix: {detail}")

    def for_sweep(self) -> BadContexts:
        """This refusal as a sweep says it: its advice names the sweep's ``--positions``, not ``price``'s
        ``--position`` (left182: a sweep's refusal summary quoted price's option). Raises nothing."""
        if self.detail.endswith(PAST_LIMIT):
            return BadContexts(self.detail.removesuffix(PAST_LIMIT) + SWEEP_PAST_LIMIT)
        return self

    def fields(self) -> dict[str, Any]:
        return {"detail": self.detail}


class ContextBeyondModel(ServingRefusal):
    """A context limit (positions) past the checkpoint's own context length."""

    name = "ContextBeyondModel"

    def __init__(self, limit: int, model: int) -> None:
        self.limit = limit
        self.model = model
        super().__init__(f"context limit {limit} is past the checkpoint's context length {model}: lower --limit")

    def fields(self) -> dict[str, Any]:
        return {"limit": self.limit, "model": self.model}


class WideCacheOnArray(ServingRefusal):
    """Attention on the array over a cache whose elements are wider than its 8-bit codes (and a scale share)."""

    name = "WideCacheOnArray"

    def __init__(self, kv_bytes: float) -> None:
        self.kv_bytes = kv_bytes
        super().__init__(
            f"attention on the array needs an 8-bit cache (kv_bytes <= 1.25), not {kv_bytes:g} bytes an element: "
            "use --kv-bytes 1 or --attention vector"
        )

    def fields(self) -> dict[str, Any]:
        return {"kv_bytes": self.kv_bytes}


class BadPrefix(ServingRefusal):
    """A shared prefix the serving cannot share (DESIGN.md extension, issue 8): a contiguous cache (each sequence
    holds its own region, so no page can be shared), or a prefix past a context class's position (its sequences
    have not reached the end of the prefix they would share)."""

    name = "BadPrefix"

    def __init__(self, shared_prefix: int, detail: str) -> None:
        self.shared_prefix = shared_prefix
        self.detail = detail
        super().__init__(f"a shared prefix of {shared_prefix} positions {detail}")

    def fields(self) -> dict[str, Any]:
        return {"shared_prefix": self.shared_prefix, "detail": self.detail}


class ServingBind(enum.Enum):
    """The term a pass is bound by (seed ``ServingBind``), in the seed's order."""

    MEMORY = "memory"
    HOST = "host"
    ARRAY = "array"
    VECTOR = "vector"
    SCALE = "scale"


def emitted_per_pass(acceptance: Sequence[float]) -> float:
    """Tokens a sequence emits per pass: its verified token plus each draft accepted after every draft before it,
    1 + a₁ + a₁a₂ + … (seed ``emitted_per_pass``; Leviathan et al. 2023, arXiv:2211.17192, with the bonus token)."""
    run = 1.0
    total = 1.0
    for a in acceptance:
        run *= a
        total += run
    return total


@attrs.frozen
class RoutedRead:
    """What a mixture of experts' pass read of its routed experts (DESIGN.md extension, issue 15): the ``routing``
    record's name and its one-line ``description`` (uniform or the skew, with its provenance), ``experts`` E and
    ``used`` k a token, the ``tokens`` (token-rows) the main layers route in this pass, the expected ``distinct``
    experts they read a layer, and the ``bytes`` of experts the pass streams (every MoE layer, MTP blocks
    included). Shown beside a price; not one of the seed's fields."""

    routing: str
    description: str
    experts: int
    used: int
    tokens: float
    distinct: float
    bytes: float

    def to_json(self) -> dict[str, Any]:
        """The ``routing`` object of a price's ``--json``."""
        return attrs.asdict(self)


@attrs.frozen
class ServingCost:
    """One pass of a serving on a card (seed ``ServingCost``), every quantity in base units.

    Bytes: ``weight_bytes`` (streamed, shared by the batch, embedding rows included), ``sequence_bytes`` (moved
    for each sequence), ``rewrite_bytes`` (of those, read and written back in place), ``held_bytes`` /
    ``capacity_bytes`` (card memory), ``host_held_bytes`` / ``host_capacity_bytes``, ``on_chip_bytes`` /
    ``on_chip_capacity``. Work: ``array_macs``, ``vector_macs`` (multiply-adds), ``scale_cycles``. Seconds: the five
    terms ``memory_s``, ``host_s``, ``array_s``, ``vector_s``, ``scale_s`` and ``pass_s``, the largest, which the
    pass ``binds`` on. ``provenance`` is the weakest fact the price rests on; ``rests_on`` lists those facts by path.

    DESIGN.md extension (issue 14, tensor cores): ``float_matrix_macs``, the multiply-adds of float matrices that ride
    a matrix rate (a card's ``tensor.*`` facts) instead of the vector units; their seconds join ``array_s`` (the matrix
    datapath) and they are not in ``vector_macs``. 0 when none do, and then left out of ``--json``.
    """

    card: str
    batch: int
    host_sequences: int
    rows_per_sequence: int
    emitted_per_sequence: float
    weight_bytes: float
    sequence_bytes: float
    rewrite_bytes: float
    array_macs: float
    vector_macs: float
    scale_cycles: float
    memory_s: float
    host_s: float
    array_s: float
    vector_s: float
    scale_s: float
    pass_s: float
    binds: ServingBind
    held_bytes: float
    capacity_bytes: float
    host_held_bytes: float
    host_capacity_bytes: float
    on_chip_bytes: float
    on_chip_capacity: float
    provenance: Provenance
    rests_on: tuple[tuple[str, Fact], ...] = attrs.field(default=(), eq=False, repr=False)
    routed: RoutedRead | None = attrs.field(default=None, eq=False, repr=False)
    float_matrix_macs: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        """Tokens the card emits per second: batch × emitted per sequence / pass seconds (seed ``tokens_per_s``)."""
        return self.batch * self.emitted_per_sequence / self.pass_s

    @property
    def weakest(self) -> tuple[str, ...]:
        """The paths of the facts that carry the price's (weakest) provenance."""
        return tuple(path for path, fact in self.rests_on if fact.provenance is self.provenance)

    def terms(self) -> dict[ServingBind, float]:
        """The five terms' seconds, by bind."""
        return {
            ServingBind.MEMORY: self.memory_s,
            ServingBind.HOST: self.host_s,
            ServingBind.ARRAY: self.array_s,
            ServingBind.VECTOR: self.vector_s,
            ServingBind.SCALE: self.scale_s,
        }


#: Fields of :class:`ServingCost` in the seed's order (the ``--json`` keys, before ``tokens_per_s``).
COST_FIELDS = tuple(
    f.name for f in attrs.fields(ServingCost) if f.name not in ("rests_on", "routed", "float_matrix_macs")
)

#: The card facts every pass rests on, in the seed's ``PassShape::cost`` order (its ``facts`` list); the host link's
#: facts follow when some of the batch lives in host memory.
COST_PATHS = (
    "memory.bandwidth",
    "memory.capacity",
    "streams.read",
    "streams.rewrite",
    "streams.append",
    "array",
    "vector",
    "scale",
    "on_chip.capacity",
)
HOST_COST_PATHS = ("host.capacity", "host.read", "host.write", "host.stream")


def rested_on(
    shape: PassShape, card: Card, host_used: bool, pricing: Pricing | None = None
) -> tuple[tuple[str, Fact], ...]:
    """The facts a pass of ``shape`` on ``card`` reads, by lock path, in :data:`COST_PATHS` order (DESIGN.md extends
    the seed here: the seed lists every card fact): ``memory.*``, ``on_chip.capacity`` always (they decide what fits);
    ``streams.read`` when weights stream; ``streams.rewrite`` only when a sequence rewrites state in place (a
    recurrent layer); ``streams.append`` when a sequence reads or appends a cache; ``array``, ``vector``, ``scale``
    when the pass has work for them; the host link's facts only when ``host_used`` (some sequences live in host
    memory); then the card's float-matrix rates (``tensor.f16`` …, issue 14) the shape's float matrices ride at
    ``pricing`` (default: the card's limit, where a card has the rate for a matrix's type); then the drafting
    figures. A fact no term reads (``on_chip.bandwidth``) is never rested on, so a change to it moves no price and
    no lock.

    The one place "rests on" is decided: :meth:`PassShape.cost`, the sweep and the step pricer call it."""
    facts = card.facts()
    reads = {
        "memory.bandwidth": True,
        "memory.capacity": True,
        "streams.read": shape.weight_bytes + shape.embed_bytes > 0,
        "streams.rewrite": shape.rewrite_bytes > 0,
        "streams.append": shape.read_bytes + shape.write_bytes - shape.rewrite_bytes > 0,
        "array": shape.array_macs > 0,
        "vector": shape.vector_macs > 0,
        "scale": shape.scale_cycles > 0,
        "on_chip.capacity": True,
    }
    paths = [p for p in COST_PATHS if reads[p]]
    if host_used and card.host is not None:
        paths += HOST_COST_PATHS
    if shape.float_macs:
        if pricing is None:
            riding = (TENSOR_FORMATS.get(ty) for ty, _ in shape.float_macs)
        else:
            riding = (pricing.float_path(ty) for ty, _ in shape.float_macs)
        paths += [p for p in dict.fromkeys(riding) if p is not None and p in facts and p not in COST_PATHS]
    return tuple((p, facts[p]) for p in paths) + shape.facts


@attrs.frozen
class Basis:
    """What every pass of one :class:`PassShape` on one card has in common, gathered once for a search over
    batches and host splits rather than once a pass: the ``pricing`` (rates and capacities), the facts a pass rests
    on (``rests_on``: path and fact, in the seed's order) and their weakest ``provenance`` when the whole batch is
    in card memory, and the same (``host_rests_on``, ``host_provenance``) when some of it is in host memory."""

    pricing: Pricing
    rests_on: tuple[tuple[str, Fact], ...]
    provenance: Provenance
    host_rests_on: tuple[tuple[str, Fact], ...]
    host_provenance: Provenance


@attrs.frozen
class ExpertStream:
    """The routed experts of a pass's mixture-of-experts layers that route the same rows (DESIGN.md extension,
    issue 15): ``bytes`` of one expert's slices summed over those layers' expert stacks, the token-``rows`` each
    sequence routes through them in one read (1 + drafts for the main layers, 1 for an MTP block's drafting step),
    ``reads`` of them a pass (1, or the drafted tokens for an MTP block), the ``router``, and whether they are an
    MTP block's (``draft``). A pass of b sequences streams ``bytes × reads × router.distinct(b × rows)`` bytes of
    them (:mod:`passprice.routing`)."""

    bytes: float
    rows: float
    reads: float
    router: Router
    draft: bool = False

    def streamed(self, batch: Any) -> Any:
        """Bytes a pass of ``batch`` sequences streams (a float, or an array of batches elementwise)."""
        return self.bytes * self.reads * self.router.distinct(batch * self.rows)


@attrs.frozen
class PassShape:
    """A pass as a function of its batch (seed ``PassShape``): everything a pass costs is shared by the batch or
    paid by each sequence, so the cost is affine in the batch and in how it splits between card and host memory.

    Per pass, shared: ``weight_bytes``, ``held_shared`` (weights and embedding table, bytes). Per sequence:
    ``embed_bytes``, ``read_bytes``, ``write_bytes``, ``rewrite_bytes`` (bytes), ``array_macs``, ``vector_macs``,
    ``scale_cycles``, ``held_per_sequence`` and ``on_chip_per_sequence`` (bytes). ``rows_per_sequence``: token-rows
    (1 + drafts); ``emitted_per_sequence``: tokens emitted per pass, expected. ``provenance``: the weakest acceptance
    (and routing) fact; ``facts``: the acceptance (and routing) facts by path.

    DESIGN.md extension (issue 15): ``experts``, a mixture of experts' routed experts, which the batch shares but
    reads more of the larger it is (:meth:`expert_bytes`, not affine: weights are no longer paid once a pass);
    empty for a dense checkpoint, whose cost is the seed's bit for bit.

    DESIGN.md extensions (issue 14): ``layers``, the blocks a pass runs through (each draft block once per drafting
    step), which a serving stack's fixed cost per layer multiplies; ``float_macs``, (GGML type name, multiply-adds
    per sequence) of the float matrices among ``vector_macs``, which ride a card's float-matrix rate where it has one.
    ``held_draft``: bytes of the checkpoint's draft (MTP) blocks, among ``held_shared`` when ``drafting`` (the serving
    drafts), else held by no one: what a refusal says the held bytes count (:func:`held_once_counts`).
    """

    rows_per_sequence: int
    emitted_per_sequence: float
    weight_bytes: float
    embed_bytes: float
    read_bytes: float
    write_bytes: float
    rewrite_bytes: float
    array_macs: float
    vector_macs: float
    scale_cycles: float
    held_shared: float
    held_per_sequence: float
    on_chip_per_sequence: float
    provenance: Provenance
    facts: tuple[tuple[str, Fact], ...] = ()
    experts: tuple[ExpertStream, ...] = ()
    routing_name: str = ""
    routing_description: str = ""
    layers: int = 0
    float_macs: tuple[tuple[str, float], ...] = ()
    held_draft: float = 0.0
    drafting: bool = False

    def expert_bytes(self, batch: Any) -> Any:
        """Bytes of routed experts a pass of ``batch`` sequences streams, expected (Σ :meth:`ExpertStream.streamed`;
        0.0 for a dense checkpoint); a float, or an array of batches elementwise."""
        total: Any = 0.0
        for e in self.experts:
            total = total + e.streamed(batch)
        return total

    def shared_bytes(self, batch: Any) -> Any:
        """Bytes a pass of ``batch`` sequences streams once for the whole batch: the weights, each sequence's
        embedding rows, and (a mixture of experts) the routed experts its rows read."""
        shared = self.weight_bytes + batch * self.embed_bytes
        if self.experts:
            shared = shared + self.expert_bytes(batch)
        return shared

    def basis(self, card: Card, pricing: Pricing | None = None) -> Basis:
        """What every pass of this shape on ``card`` shares (:class:`Basis`): ``pricing`` (default: the card's
        limit, :meth:`Pricing.limit`), and the facts a pass rests on with their weakest provenance, without and with
        sequences in host memory (seed ``PassShape::cost``'s ``facts``: the card's cost paths, the host link's
        when some of the batch lives there, then the shape's acceptance facts; which of them, :func:`rested_on`)."""
        if pricing is None:
            pricing = Pricing.limit(card)

        def resting(host_used: bool) -> tuple[tuple[tuple[str, Fact], ...], Provenance]:
            rests_on = rested_on(self, card, host_used, pricing)
            return rests_on, max(weakest(f.provenance for _, f in rests_on), self.provenance)

        rests_on, provenance = resting(False)
        host_rests_on, host_provenance = resting(True) if card.host is not None else (rests_on, provenance)
        return Basis(pricing, rests_on, provenance, host_rests_on, host_provenance)

    def cost(
        self,
        card: Card,
        batch: int,
        host_sequences: int,
        pricing: Pricing | None = None,
        basis: Basis | None = None,
    ) -> ServingCost:
        """The pass of ``batch`` sequences, ``host_sequences`` of them held in host memory, on ``card`` (seed
        ``PassShape::cost``), its terms from the one cost formula (:func:`passprice.cost.pass_terms`) at
        ``pricing``'s rates and capacities (default: the card's limit, :meth:`Pricing.limit`). A search that prices
        many passes of one shape on one card passes their :meth:`basis` (then ``pricing`` is the basis's), so the
        facts and their provenance are gathered once, not once a pass.

        Raises :class:`Empty` (batch 0), :class:`NoHostLink`, :class:`NotResident` (card, then host memory),
        :class:`OnChipOverflow`, in that order.
        """
        if batch == 0:
            raise Empty("batch")
        if basis is None:
            basis = self.basis(card, pricing)
        pricing = basis.pricing
        host_sequences = min(host_sequences, batch)
        b = float(batch)
        bh = float(host_sequences)
        bd = b - bh
        held_bytes = self.held_shared + bd * self.held_per_sequence
        capacity_bytes = pricing.capacity
        host_held_bytes = bh * self.held_per_sequence
        host_capacity_bytes = pricing.host_capacity
        if host_sequences > 0 and card.host is None:
            raise NoHostLink(card.name)
        if held_bytes > capacity_bytes:
            raise NotResident(held_bytes, capacity_bytes, "card", self.held_shared, self.held_draft, self.drafting,
                              per_sequence=self.held_per_sequence)
        if host_held_bytes > host_capacity_bytes:
            raise NotResident(host_held_bytes, host_capacity_bytes, "host")
        on_chip_bytes = b * self.on_chip_per_sequence
        on_chip_capacity = pricing.on_chip
        if on_chip_bytes > on_chip_capacity:
            raise OnChipOverflow(on_chip_bytes, on_chip_capacity)
        weight_bytes = self.shared_bytes(b)
        sequence_bytes = self.read_bytes + self.write_bytes
        array_macs = b * self.array_macs
        vector_macs = b * self.vector_macs
        scale_cycles = b * self.scale_cycles
        terms = pass_terms(
            pricing,
            batch=b,
            card_sequences=bd,
            host_sequences=bh,
            shared_bytes=weight_bytes,
            read_bytes=self.read_bytes,
            write_bytes=self.write_bytes,
            rewrite_bytes=self.rewrite_bytes,
            array_macs=self.array_macs,
            vector_macs=self.vector_macs,
            scale_cycles=self.scale_cycles,
            float_macs=self.float_macs,
        )
        riding = [macs for ty, macs in self.float_macs if pricing.float_rate(ty) is not None]
        float_matrix_macs = 0.0
        if riding:
            float_matrix_macs = b * sum(riding)
            vector_macs = b * (self.vector_macs - sum(riding))
        memory_s, host_s, array_s, vector_s, scale_s = terms.as_tuple()
        binding_s, binds = terms.binding(tuple(ServingBind))
        pass_s = pass_seconds(pricing, terms, binding_s)
        routed = None
        if self.experts:
            main = max(self.experts, key=lambda e: e.rows)
            rtr = main.router
            routed = RoutedRead(
                self.routing_name,
                self.routing_description,
                rtr.experts,
                rtr.used,
                b * main.rows,
                rtr.distinct(b * main.rows),
                self.expert_bytes(b),
            )
        if card.host is not None and host_sequences > 0:
            rests_on, provenance = basis.host_rests_on, basis.host_provenance
        else:
            rests_on, provenance = basis.rests_on, basis.provenance
        return ServingCost(
            card=card.name,
            batch=batch,
            host_sequences=host_sequences,
            rows_per_sequence=self.rows_per_sequence,
            emitted_per_sequence=self.emitted_per_sequence,
            weight_bytes=weight_bytes,
            sequence_bytes=sequence_bytes,
            rewrite_bytes=self.rewrite_bytes,
            array_macs=array_macs,
            vector_macs=vector_macs,
            scale_cycles=scale_cycles,
            memory_s=memory_s,
            host_s=host_s,
            array_s=array_s,
            vector_s=vector_s,
            scale_s=scale_s,
            pass_s=pass_s,
            binds=binds,
            held_bytes=held_bytes,
            capacity_bytes=capacity_bytes,
            host_held_bytes=host_held_bytes,
            host_capacity_bytes=host_capacity_bytes,
            on_chip_bytes=on_chip_bytes,
            on_chip_capacity=on_chip_capacity,
            provenance=provenance,
            rests_on=rests_on,
            routed=routed,
            float_matrix_macs=float_matrix_macs,
        )

    def card_room(self, card: Card, pricing: Pricing | None = None) -> int:
        """Most sequences the card's memory holds beside the weights: ⌊(capacity − shared) / per sequence⌋, at
        least 0, at most ``u32::MAX`` (seed ``card_room``; the capacity is ``pricing``'s, by default the card's)."""
        capacity = pricing.capacity if pricing is not None else card.memory.capacity.value
        room = (capacity - self.held_shared) / max(self.held_per_sequence, 1.0)
        return int(min(math.floor(max(room, 0.0)), U32_MAX))

    def host_room(self, card: Card) -> int:
        """Most sequences the host memory holds (0 without a host link) (seed ``host_room``)."""
        if card.host is None:
            return 0
        return int(min(math.floor(card.host.capacity.value / max(self.held_per_sequence, 1.0)), U32_MAX))

    def cost_split(
        self,
        card: Card,
        batch: int,
        host_memory: bool,
        basis: Basis | None = None,
        pricing: Pricing | None = None,
    ) -> ServingCost:
        """The pass of ``batch`` sequences split between the card's memory and the host's as fast as the split
        allows (seed ``cost_split``): a ternary search over the sequences the card holds for where the card's
        memory time and the host link's cross, then the fastest of the last few (ties to fewer held on the card).
        ``basis``: this shape's :meth:`basis` on ``card`` when the caller has it (a search over batches); else one
        at ``pricing`` (default: the card's limit; a serving stack's, issue 14).

        Raises :class:`NoHostLink` when ``host_memory`` and the card has none, else what :meth:`cost` raises
        (when neither memory holds the batch, the refusal names what would not fit).
        """
        if basis is None:
            basis = self.basis(card, pricing)
        if not host_memory:
            return self.cost(card, batch, 0, basis=basis)
        if card.host is None:
            raise NoHostLink(card.name)
        lo = max(batch - self.host_room(card), 0)
        hi = min(batch, self.card_room(card, basis.pricing))
        if lo > hi:
            return self.cost(card, batch, batch - hi, basis=basis)

        def card_time(held: int) -> float:
            c = self.cost(card, batch, batch - held, basis=basis)
            return max(c.memory_s, c.host_s)

        a, z = lo, hi
        while z - a > 2:
            m1 = a + (z - a) // 3
            m2 = z - (z - a) // 3
            if card_time(m1) <= card_time(m2):
                z = m2
            else:
                a = m1
        best: ServingCost | None = None
        for held in range(a, z + 1):
            c = self.cost(card, batch, batch - held, basis=basis)
            if best is None or c.pass_s < best.pass_s:
                best = c
        assert best is not None  # a nonempty range
        return best

    def most(self, card: Card, host_memory: bool, pricing: Pricing | None = None) -> int:
        """The largest batch either memory could hold: card room, plus host room when host memory is used."""
        if host_memory:
            return min(self.card_room(card, pricing) + self.host_room(card), U32_MAX)
        return self.card_room(card, pricing)

    def best(
        self,
        card: Card,
        host_memory: bool,
        pricing: Pricing | None = None,
        batches: tuple[int, int] | None = None,
        max_tpot: float | None = None,
        memory_use: float | None = None,
    ) -> ServingCost:
        """The batch that makes ``card`` emit the most tokens per second, and its pass: the seed's answer
        (:meth:`best_by_scan`), found without pricing every batch (:func:`passprice.batching.best`); at
        ``pricing`` (default: the card's limit; a serving stack's, issue 14), among ``batches`` (lo, hi; default
        every batch) whose TPOT is at most ``max_tpot`` seconds (default: no cap) and that hold at most
        ``memory_use`` of the card memory (default: all of it)."""
        from passprice.batching import best

        return best(self, card, host_memory, pricing, batches, max_tpot, memory_use)

    def max_batch(
        self, card: Card, host_memory: bool, pricing: Pricing | None = None, memory_use: float | None = None
    ) -> int:
        """The most sequences the serving carries on ``card``: the seed's answer (:meth:`max_batch_by_scan`),
        found without pricing every batch (:func:`passprice.batching.max_batch`); at ``pricing``'s capacity, times
        ``memory_use`` when given."""
        from passprice.batching import max_batch

        return max_batch(self, card, host_memory, pricing, memory_use)

    def best_by_scan(
        self,
        card: Card,
        host_memory: bool,
        pricing: Pricing | None = None,
        batches: tuple[int, int] | None = None,
        max_tpot: float | None = None,
    ) -> ServingCost:
        """The batch that makes ``card`` emit the most tokens per second, and its pass (seed ``PassShape::best``):
        every batch from 1 up to what memory holds is priced; a batch replaces the best only when it is faster by
        more than a relative 1e-12, so ties go to the smaller batch; the scan stops at the first batch refused for
        capacity. Raises what :meth:`cost_split` raises for batch 1 when no batch fits.

        This is the seed's scanning algorithm, kept as the reference the closed form is tested against and as its
        fallback for near-ties it cannot settle. ``batches`` (lo, hi): scan from ``lo`` to at most ``hi`` (a
        serving stack's calibrated batches, issue 14); default from 1, the seed's. ``max_tpot``: the scan also
        stops at the first batch whose TPOT (``pass_s / emitted_per_sequence``, seconds) exceeds it, and raises
        :class:`~passprice.batching.OverTPOT` when that is the first batch scanned.
        """
        best: ServingCost | None = None
        basis = self.basis(card, pricing)
        lo, hi = batches if batches is not None else (1, U32_MAX)
        for batch in range(lo, min(max(self.most(card, host_memory, basis.pricing), 1), hi) + 1):
            try:
                c = self.cost_split(card, batch, host_memory, basis)
            except (NotResident, OnChipOverflow):
                break
            if max_tpot is not None and c.pass_s / c.emitted_per_sequence > max_tpot:
                if best is None:
                    from passprice.batching import OverTPOT

                    raise OverTPOT(batch, c.pass_s / c.emitted_per_sequence, max_tpot)
                break
            if best is None or c.tokens_per_s > best.tokens_per_s * (1.0 + 1e-12):
                best = c
        return best if best is not None else self.cost_split(card, lo, host_memory, basis)

    def max_batch_by_scan(self, card: Card, host_memory: bool, pricing: Pricing | None = None) -> int:
        """The most sequences the serving carries on ``card``: every larger batch is refused for capacity (seed
        ``max_batch``). Raises what batch 1 raises when no batch fits."""
        n = 0
        basis = self.basis(card, pricing)
        for batch in range(1, min(self.most(card, host_memory, basis.pricing) + 1, U32_MAX) + 1):  # saturating
            try:
                self.cost_split(card, batch, host_memory, basis)
            except (NotResident, OnChipOverflow):
                break
            n = batch
        if n == 0:
            self.cost_split(card, 1, host_memory, basis)
        return n


def _check_serving(header: GGUFHeader, s: Serving, routing_free: bool = False) -> None:
    """The seed's refusals before the decode step, in its order: no activation words, a mixture of experts (without
    a routing, unless ``routing_free``), a bad draft, a bad context mix, a context past the model's, a wide cache on
    the array; then the extensions': a shared prefix it cannot share, a routing that does not fit."""
    if s.activation_words == 0:
        raise Empty("activation words")
    experts = header.meta_int("expert_count")
    if experts is not None or s.routing is not None:
        # A header that does not read as a mixture of experts (k > E, k = 0, expert tensors that do not stack E, E = 0
        # beside k = 8) is the header's fault, said as kv and check say it (bad input, exit 2, naming the file and
        # key), before Routed and BadRouting send the reader after a routing record: walk45's header of 9 experts a
        # token of 8 was refused Routed, then "BadRouting: routing uniform does not fit"; attack64's of 10^6 experts
        # whose tensors stack 128 was refused Routed (advising uniform, which then said exit 2) or BadRouting, and
        # one of expert_count = 0 beside 8 a token "BadRouting: the checkpoint is dense". (Kept once per header:
        # :func:`~passprice.decode.check_header`.)
        from passprice.decode import check_header

        check_header(header)
    if (experts is not None and experts > 0 and s.routing is None and not routing_free
            and not every_expert_read(header)):
        _check_architecture(header)
        raise Routed(experts, header)
    if s.draft is not None:
        d = s.draft
        values = [a.value for a in d.acceptance]
        if len(values) != d.tokens or any(not (0.0 <= v <= 1.0) for v in values):
            too_few = d.method is not None and len(values) < d.tokens and all(0.0 <= v <= 1.0 for v in values)
            raise BadDraft(f"{d.tokens} drafted tokens with acceptance {values}",
                           d.method if too_few else None, len(values) if too_few else None)
    classes = s.contexts.classes
    shares = sum(c.share for c in classes)
    if (
        not classes
        or abs(shares - 1.0) > 1e-9
        or any(not (c.share > 0.0) or not (c.position >= 0.0) or _past_limit(c) for c in classes)
    ):
        raise BadContexts(_contexts_problem(classes, shares))
    model = header.meta_int("context_length")
    if model is not None and s.contexts.longest() > model:
        raise ContextBeyondModel(s.contexts.longest(), model)
    if s.attention is AttentionMath.ARRAY and s.kv_bytes > 1.25:
        raise WideCacheOnArray(s.kv_bytes)
    if s.shared_prefix > 0:
        # DESIGN.md extension (issue 8), after every seed refusal so their order is unchanged.
        if s.kv_page is None:
            raise BadPrefix(s.shared_prefix, "needs a paged KV cache (--kv-page N): a contiguous cache shares no page")
        short = [c.position for c in classes if c.position < float(s.shared_prefix)]
        if short:
            reached = position_text(min(short))
            raise BadPrefix(s.shared_prefix, f"is past the position {reached} a context class has reached")
    used = header.meta_int("expert_used_count")
    if not experts and s.routing is not None and not _holds_stacks(header):
        # A routing record on a dense checkpoint would be silently ignored: refused by name, as the likelier case is
        # the wrong checkpoint or card (DESIGN.md, Routing).
        raise BadRouting(
            s.routing.name,
            f"the checkpoint is dense ({'no expert_count' if experts is None else f'expert_count {experts}'}): "
            "a routing record says how a mixture of experts' tokens route; "
            "price it without --routing (or name a mixture of experts)",
        )
    if experts and used and s.routing is not None:
        # DESIGN.md extension (issue 15), after every seed refusal. (A header without expert_used_count is refused
        # by its decode step, MissingMetadata.)
        from passprice.routing import mismatch

        problem = mismatch(s.routing, experts, used)
        if problem is not None:
            _check_architecture(header)
            raise BadRouting(s.routing.name, problem, experts, header)


def every_expert_read(header: GGUFHeader) -> bool:
    """Whether ``header`` is a mixture of experts whose every token reads every expert (``expert_used_count`` equal to
    ``expert_count``, at least 1): its experts are read whole every pass, as a dense layer's weights are, whatever
    the routing, so it is priced as dense experts (:func:`pass_shape`), no routing record asked (``Routed``) nor
    rested on: ``Routed`` was refused without ``--routing``, and ``--routing uniform`` made the routing facts the
    price's weakest, marked ``*!`` by ``audit``, though no routing can move the price (tests/test_fix179.py).
    Raises nothing."""
    experts = header.meta_int("expert_count")
    return experts is not None and experts > 0 and header.meta_int("expert_used_count") == experts


def _holds_stacks(header: GGUFHeader) -> bool:
    """Whether ``header`` holds expert stacks (:func:`passprice.decode.expert_stacks`): one without
    ``expert_count`` is no dense checkpoint, and its decode step refuses it by the missing key (attack64: it was
    refused "BadRouting: the checkpoint is dense (no expert_count)")."""
    from passprice.decode import expert_stacks

    return bool(expert_stacks(header))


def _check_architecture(header: GGUFHeader) -> None:
    """Raise :class:`Step` when ``header``'s architecture cannot be priced
    (:func:`passprice.decode.architecture_refusal`: ``UnknownArchitecture``, ``TensorNotInArchitecture``,
    ``MissingMetadata``), before ``Routed`` or ``BadRouting`` send the reader after a routing record no record can
    help (walk48: an ``olmoe`` header was refused ``Routed``, and once given ``--routing uniform``, ``Step:
    UnknownArchitecture``). Raises nothing for an architecture passprice prices."""
    from passprice.decode import architecture_refusal

    refusal = architecture_refusal(header)
    if refusal is not None:
        raise Step(refusal)


def _contexts_problem(classes: Sequence[ContextClass], shares: float) -> str:
    """What is wrong with a context mix, in words: no classes, shares that do not sum to 1, or a class whose share
    or position is out of range."""
    if not classes:
        return "no context classes"
    for c in classes:
        if not c.share > 0.0:
            return f"a class has share {c.share:g}; every share must be above 0"
        if not c.position >= 0.0:
            return f"a class has position {position_text(c.position)}; positions start at 0"
        if _past_limit(c):
            return (
                f"position {position_text(c.position)} is not below its limit {c.limit}: a pass at a position writes "
                f"that position's row, and a sequence allowed {c.limit} positions holds rows 0 to {c.limit - 1}: "
                f"{PAST_LIMIT}"
            )
    return f"the shares sum to {shares:.12g}, not 1"


def _past_limit(c: ContextClass) -> bool:
    """Whether a class's mean position leaves no room for the row its pass writes: position ≥ limit. A pass at
    position ``p`` reads the ``p`` cached positions and writes row ``p`` (seed ``PassShape::of``: reads ``position``,
    writes ``rows``), so a sequence allowed ``limit`` positions decodes at most at position ``limit − 1``; the seed
    refused only position > limit, and ``price --position 4096`` of a 4,096 limit read and wrote 4,097 positions a
    sequence (DESIGN.md, Contexts). Limit 0 at position 0 is the shape at no context every attention term of which
    is zero (:mod:`passprice.steps`); no user's limit is 0 (``--limit`` and a serving file's are at least 1)."""
    return c.position > float(c.limit) or (c.limit > 0 and c.position >= float(c.limit))


def _widest(header: GGUFHeader, key: str) -> int:
    """An integer width: the scalar at ``key``, or the largest of a per-layer array there (0 when absent)."""
    raw = header.meta(key)
    if isinstance(raw, bool):
        return 0
    if isinstance(raw, int):
        return raw
    if isinstance(raw, tuple):
        return max((v for v in raw if isinstance(v, int) and not isinstance(v, bool)), default=0)
    return 0


def pass_shape(header: GGUFHeader, s: Serving, *, routing_free: bool = False) -> PassShape:
    """The shape of a pass of ``s`` over the checkpoint ``header`` describes (seed ``PassShape::of``): the batch and
    host split are the cost's arguments, everything else in ``s`` is read here.

    Raises, in the seed's order: :class:`Empty` (no activation words), :class:`Routed` (a mixture of experts
    without ``s.routing``), :class:`BadDraft`, :class:`BadContexts`, :class:`ContextBeyondModel`,
    :class:`WideCacheOnArray`, :class:`BadPrefix` (a shared prefix on a contiguous cache or past a class's
    position), :class:`BadRouting` (a routing that does not fit the router, or a routing for a dense checkpoint),
    :class:`Step` (the decode step's
    refusal), :class:`MissingTensor`, :class:`Undecoded`.

    A mixture of experts (DESIGN.md extension, issue 15, Routing): each MoE layer's router is a matrix every row
    crosses plus a gating function over its E logits (:data:`SOFTMAX_MACS_PER_SCORE` vector multiply-adds a score);
    every row multiplies its k experts (k / E of each expert stack's work); the experts' bytes are streamed as the
    routing says (:class:`ExpertStream`): the main layers route every sequence's 1 + drafts rows together, an MTP
    block each drafting step's one row a sequence. The routing's facts join the facts the price rests on. A mixture
    whose every token reads every expert (:func:`every_expert_read`, k = E) streams its experts whole each read, in
    ``weight_bytes`` as a dense layer's weights (what uniform routing gives, E distinct experts for any rows), and
    needs and rests on no routing. ``routing_free``: a shape for what does not depend on routing (what the card
    holds and how many sequences fit, :mod:`passprice.kv`): no routing is needed, and none of the experts' stream is
    priced.

    A shared prefix (``s.shared_prefix`` > 0, DESIGN.md extension, issue 8) counts its whole pages only: each full
    layer holds ``position + page / 2 − shared`` positions a sequence and ``shared`` once (in ``held_shared``); with
    ``s.prefix_read_once`` each sequence reads ``position − shared`` and the pass streams ``shared`` once (in
    ``weight_bytes``, at ``streams.read``). The arithmetic is unchanged: every row still scores every position.
    """
    _check_serving(header, s, routing_free)
    # The decode step's module is imported here, not with this one, and after the serving's own checks: a warm
    # process reads its pass shapes from the cache of built objects and never builds a step, and a shape refused
    # before any step (a sweep's position past a serving's limit, never cached: rebuilt every run) costs no import.
    from passprice.decode import DecodeRefusal, Deployment, HeldClass, StageKind, UnknownType

    k = s.draft.tokens if s.draft is not None else 0
    deployment = Deployment(
        ctx=1, kv_bytes=s.kv_bytes, state_bytes=s.state_bytes, activation_bytes=2.0, speculative=k > 0
    )
    try:
        # A recurrent layer without its ssm.* shape is refused at its stage, after the token_embd check, as the
        # seed refuses it.
        step = _step_of(header, deployment)
    except DecodeRefusal as e:
        raise Step(e) from None
    blocks = header.meta_int("block_count") or 0
    drafts = header.meta_int("nextn_predict_layers") or 0
    if k > 0 and drafts < 1 and s.draft is not None and s.draft.method is not None:
        # A registry drafting method drafts with the checkpoint's own blocks; a bare Draft (the seed's own, with no
        # method: its tests) prices as the seed does, the drafting steps through the head alone.
        raise NoDrafter(s.draft.method, None, "its header carries no drafting blocks (nextn_predict_layers 0)")

    def is_draft(layer: int | None) -> bool:
        return layer is not None and layer >= max(blocks - drafts, 0)

    n = float(1 + k)
    kf = float(k)
    acceptance = [a.value for a in s.draft.acceptance] if s.draft is not None else []
    emitted = emitted_per_pass(acceptance)
    words = float(s.activation_words)
    embd_table = header.tensor("token_embd.weight")
    if embd_table is None or len(embd_table.dims) < 2:
        raise MissingTensor("token_embd.weight")
    vocab = float(embd_table.dims[1])
    head_rows = s.draft.head_rows if s.draft is not None else None
    # An empty vocabulary reads the whole (empty) head, as the seed's r / 0.0 = inf, capped at 1.
    head_share = min(head_rows / vocab, 1.0) if head_rows is not None and vocab > 0 else 1.0

    # The tokens a flush replays, whether the state is lazy, the windows its log holds at its longest, and the mean
    # log length a pass starts with (seed: the log grows by the emitted tokens each pass from empty to the flush, or
    # under a trailing flush from one window to two).
    if s.flush.mode is StateFlushMode.EVERY_PASS:
        flush_tokens, lazy, windows, window = 1.0, False, 0.0, 0.0
    elif s.flush.mode is StateFlushMode.EVERY:
        every = float(max(s.flush.tokens, 1))
        flush_tokens, lazy, windows, window = every, True, 1.0, max((every - emitted) / 2.0, 0.0)
    else:
        every = float(max(s.flush.tokens, 1))
        flush_tokens, lazy, windows, window = every, True, 2.0, every + max((every - emitted) / 2.0, 0.0)

    position = s.contexts.mean_position()
    kv_positions = s.contexts.paged_held(s.kv_page) if s.kv_page is not None else s.contexts.mean_limit()

    weight_bytes = embed_bytes = read_bytes = write_bytes = rewrite_bytes = 0.0
    array_macs = vector_macs = scale_cycles = held_per_sequence = 0.0
    # DESIGN.md extension (issue 8): the shared prefix's whole pages (positions), the bytes of it the batch holds
    # once, and the bytes of it a pass streams once; all zero, and untouched, without a shared prefix.
    shared = float(s.shared_prefix // s.kv_page * s.kv_page) if s.shared_prefix > 0 and s.kv_page else 0.0
    shared_held = shared_read = 0.0
    rec = step.recurrence
    draft_facts = tuple(s.draft.facts().items()) if s.draft is not None else ()
    # DESIGN.md extension (issue 15): a mixture of experts' router, and one expert's bytes by (rows, reads) a pass.
    experts_total = header.meta_int("expert_count") or 0
    used = header.meta_int("expert_used_count") or 0
    rtr = None
    # every expert read by every token (k = E): the experts stream whole each read, as a dense layer's weights do,
    # whatever the routing (uniform routing's D(t) = E for every t >= 1 gives the same bytes): no routing rested on
    dense_experts = experts_total > 0 and used == experts_total
    if s.routing is not None and experts_total > 0 and not dense_experts:
        from passprice.routing import router

        rtr = router(s.routing, experts_total, used)
    streams: dict[tuple[float, float, bool], float] = {}
    routed = False
    float_macs: dict[str, float] = {}
    # DESIGN.md extension (issue 14): the blocks a pass runs through, each draft block once a drafting step.
    main_layers = {st.layer for st in step.stages if st.layer is not None and not is_draft(st.layer)}
    draft_layers = {st.layer for st in step.stages if st.layer is not None and is_draft(st.layer)}
    layers = len(main_layers) + k * len(draft_layers)

    for st in step.stages:
        draft = is_draft(st.layer)
        # Rows the stage multiplies per pass, per sequence: every verified row, or one row per drafting step.
        rows = kf if draft else n
        if st.kind is StageKind.EMBED:
            # One table row for every verified row and every drafting step's input token.
            embed_bytes += st.weight_bytes * (n + kf)
        elif st.kind in (StageKind.PROJECT, StageKind.HEAD, StageKind.NORM, StageKind.ROUTER):
            if st.kind is StageKind.HEAD and not draft:
                # The verifying head, and each drafting step's head over its rows.
                reads = 1.0 + kf * head_share
            elif draft:
                reads = kf
            else:
                reads = 1.0
            weight_bytes += st.weight_bytes * reads
            matrix_rows = n + kf * head_share if st.kind is StageKind.HEAD else rows
            if st.kind is StageKind.ROUTER and any(name.endswith("ffn_gate_inp.weight") for name in st.tensors):
                # DESIGN.md extension (issue 15): the gating function (softmax or sigmoid) over the E expert logits
                # and the top-k choice, on the vector units, a score at the softmax's cost.
                vector_macs += SOFTMAX_MACS_PER_SCORE * float(experts_total) * rows
            for name in st.tensors:
                t = header.tensor(name)
                if t is None:
                    raise MissingTensor(name)
                if not ggml.known(t.type_id):
                    raise Step(UnknownType(name, t.type_id))
                ty = ggml.ggml_type(t.type_id)
                elems = float(ggml.elements(t.dims))
                passes = array_passes(ty)
                if st.kind is StageKind.NORM or len(t.dims) < 2:
                    # A norm (or a bias, a vector): a sum of squares and a scale per element.
                    vector_macs += 2.0 * elems * rows
                elif passes is not None:
                    array_macs += elems * passes * words * matrix_rows
                    lane = lane_cycles(ty, s.scaling)
                    assert lane is not None  # the array reads every type it passes
                    scale_cycles += elems / ty.block_elems * lane * words * matrix_rows
                elif is_float(ty):
                    vector_macs += elems * matrix_rows
                    # DESIGN.md extension (issue 14): the float matrices by type, for a card's float-matrix rate.
                    float_macs[ty.name] = float_macs.get(ty.name, 0.0) + elems * matrix_rows
                else:
                    raise Undecoded(name, ty.name)
        elif st.kind is StageKind.EXPERTS:
            # DESIGN.md extension (issue 15): every row multiplies its k experts; the experts' bytes stream as the
            # routing says (ExpertStream), one read a pass (an MTP block: one a drafting step, its one row).
            if dense_experts:  # every expert a read: E experts' bytes, shared by the batch (an MTP block's kf)
                weight_bytes += float(st.expert_bytes) * float(experts_total) * (kf if draft else 1.0)
            else:
                routed = True
            if rtr is not None:
                key = (1.0, kf, True) if draft else (n, 1.0, False)
                streams[key] = streams.get(key, 0.0) + float(st.expert_bytes)
            share = float(st.used) / float(st.experts) if st.experts else 0.0
            for name in st.tensors:
                t = header.tensor(name)
                if t is None:
                    raise MissingTensor(name)
                if not ggml.known(t.type_id):
                    raise Step(UnknownType(name, t.type_id))
                ty = ggml.ggml_type(t.type_id)
                elems = float(ggml.elements(t.dims)) * share
                passes = array_passes(ty)
                if name.endswith(".bias") or len(t.dims) < 3:
                    vector_macs += 2.0 * elems * rows
                elif passes is not None:
                    array_macs += elems * passes * words * rows
                    lane = lane_cycles(ty, s.scaling)
                    assert lane is not None  # the array reads every type it passes
                    scale_cycles += elems / ty.block_elems * lane * words * rows
                elif is_float(ty):
                    vector_macs += elems * rows
                    # DESIGN.md extension (issue 14): float experts ride a card's float-matrix rate too.
                    float_macs[ty.name] = float_macs.get(ty.name, 0.0) + elems * rows
                else:
                    raise Undecoded(name, ty.name)
        elif st.kind is StageKind.ATTENTION:
            weight_bytes += st.weight_bytes * (kf if draft else 1.0)
            # DESIGN.md extension: a windowed layer reads at most `window − 1` cached positions per class (its row
            # written besides: it attends `window`) and holds at most `window`.
            if st.window is not None:
                at = s.contexts.windowed_position(st.window)
                held_positions = s.contexts.windowed_held(st.window, s.kv_page)
            else:
                at = position
                held_positions = kv_positions
            # One read of the cache serves every row of the pass; every row's key and value are written.
            per_position = st.state_write
            at_read = at
            if shared > 0.0 and st.window is None:
                # DESIGN.md extension (issue 8): a full layer's prefix pages are held once for the batch; read once
                # a pass (each drafting step of a draft layer once) when the serving reads the prefix once. A
                # windowed layer shares nothing: its window slides past the prefix.
                held_positions = held_positions - shared
                shared_held += per_position * shared
                if s.prefix_read_once:
                    at_read = at - shared
                    shared_read += per_position * shared * (kf if draft else 1.0)
            read_bytes += per_position * at_read * (kf if draft else 1.0)
            write_bytes += per_position * rows
            # Scores and the weighted sum: a multiply-add per head per key and value element per position.
            products = st.ops / 2.0 * at * rows
            split = st.split
            heads = float(split.q) if split is not None else 1.0
            value_width = float(split.value) if split is not None else 0.0
            key_width = float(split.key) if split is not None else 0.0
            vector_macs += SOFTMAX_MACS_PER_SCORE * heads * at * rows
            if s.attention is AttentionMath.VECTOR:
                vector_macs += products
            else:
                array_macs += 2.0 * products
                # A lane rounds every score, and every value element's sum over each block of positions.
                scale_cycles += heads * at * rows * (1.0 + value_width / VALUE_BLOCK)
            if s.kv_rotated:
                # Every cached key and value head rotated, every query head, every weighted sum rotated back: a
                # transform of `n` elements is n·log2 n additions.
                kv_heads = float(split.kv) if split is not None else 0.0
                both = _transform(key_width) + _transform(value_width)
                vector_macs += (kv_heads * both + heads * both) * rows
            held_per_sequence += per_position * held_positions
        elif st.kind is StageKind.RECURRENCE:
            weight_bytes += st.weight_bytes
            if rec is None:
                raise Step(_missing_ssm(header))
            state = float(rec.state)
            dense = state * s.state_bytes
            # The conv ring is a log of the last inputs: a pass reads the ring and appends its rows.
            taps = float(header.meta_int("ssm.conv_kernel") or 1)
            ring = max(st.state_read - dense, 0.0)
            ring_row = ring / max(taps - 1.0, 1.0)
            read_bytes += dense + ring
            write_bytes += ring_row * n
            vector_macs += taps * ring_row / s.state_bytes * n
            held_per_sequence += ring + ring_row * n
            if lazy:
                log = rec.log * s.state_bytes
                # The state is read once; the log since the last flush is read with it; the pass appends its rows;
                # the state is written once every `flush_tokens` emitted tokens, all at once or a 1/flush_tokens
                # share an emitted token.
                read_bytes += window * log
                write_bytes += n * log + emitted / flush_tokens * dense
                # A pass that flushes reads the state and writes it back, the others read it alone; under a trailing
                # flush every pass reads and writes back its emitted tokens' shares.
                flushing = min(emitted / flush_tokens, 1.0)
                rewrite_bytes += flushing * dense + emitted / flush_tokens * dense
                # Each row reads the state once through its folded query and walks the log back to the flush point;
                # a flush folds `flush_tokens` rank-one updates into the state.
                walk = window + (n - 1.0) / 2.0
                vector_macs += (
                    n * state + n * rec.heads * walk * (2.0 * rec.key + rec.value) + 2.0 * emitted * state
                )
                held_per_sequence += dense + (windows * flush_tokens + n) * log
            else:
                # Every row's decay, rank-one update and read-out; every candidate prefix's state written.
                write_bytes += n * dense
                rewrite_bytes += dense + n * dense
                vector_macs += n * 3.0 * state
                held_per_sequence += n * dense

    # Through a layer the card holds each row's f32 residual and its widest activations in their words.
    width = float(_widest(header, "embedding_length"))
    ffn = float(_widest(header, "feed_forward_length"))
    if routed:
        # DESIGN.md extension (issue 15): a routed row's FFN activations are its k experts' and the shared experts'.
        # An expert is expert_feed_forward_length wide; a Mixtral header (arch llama) has no such key and its
        # experts are feed_forward_length wide, as llama.cpp sizes them (src/llama-model.cpp at c392e5094d,
        # load_tensors' case LLM_ARCH_LLAMA, line 1501: ffn_gate_exps and ffn_up_exps {n_embd,   n_ff, n_expert} on
        # lines 1555 and 1557, n_ff (line 1384) the feed_forward_length load_hparams reads on line 439;
        # tests/test_cite69.py).
        expert_ffn = float(_widest(header, "expert_feed_forward_length") or _widest(header, "feed_forward_length"))
        shared_ffn = float(_widest(header, "expert_shared_feed_forward_length")) or float(
            header.meta_int("expert_shared_count") or 0
        ) * expert_ffn
        ffn = max(ffn, float(used) * expert_ffn + shared_ffn)
    routing_facts: tuple[tuple[str, Fact], ...] = ()
    provenance = weakest(a.provenance for a in s.draft.acceptance) if s.draft is not None else Provenance.PUBLISHED
    if routed and s.routing is not None:
        routing_facts = tuple(s.routing.facts().items())
        provenance = max(provenance, weakest(f.provenance for _, f in routing_facts))
    held_shared = step.held_bytes(HeldClass.WEIGHTS, HeldClass.EMBEDDING_TABLE)
    if shared > 0.0:
        # DESIGN.md extension (issue 8): the prefix pages are held once, beside the weights, and a prefix read once
        # a pass joins the stream the batch shares (one long read, as the weights are read).
        held_shared += shared_held
        weight_bytes += shared_read
    shape = PassShape(
        rows_per_sequence=1 + k,
        emitted_per_sequence=emitted,
        weight_bytes=weight_bytes,
        embed_bytes=embed_bytes,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        rewrite_bytes=rewrite_bytes,
        array_macs=array_macs,
        vector_macs=vector_macs,
        scale_cycles=scale_cycles,
        held_shared=held_shared,
        held_per_sequence=held_per_sequence,
        on_chip_per_sequence=n * (4.0 * width + words * (ffn + width)),
        provenance=provenance,
        facts=draft_facts + routing_facts,
        experts=tuple(
            ExpertStream(b, rows, reads, rtr, draft)
            for (rows, reads, draft), b in streams.items()
            if rtr is not None and reads > 0
        ),
        routing_name=s.routing.name if routed and s.routing is not None else "",
        routing_description=s.routing.describe() if routed and s.routing is not None else "",
        layers=layers,
        float_macs=tuple(float_macs.items()),
        held_draft=step.draft_weights,
        drafting=step.drafting,
    )
    _check_finite(shape)
    return shape


#: The fields of a :class:`PassShape` that are quantities (bytes, multiply-adds, cycles).
_SHAPE_QUANTITIES = (
    "weight_bytes",
    "embed_bytes",
    "read_bytes",
    "write_bytes",
    "rewrite_bytes",
    "array_macs",
    "vector_macs",
    "scale_cycles",
    "held_shared",
    "held_per_sequence",
    "on_chip_per_sequence",
)


def _check_finite(shape: PassShape) -> None:
    """Raise :class:`~passprice.errors.InputError` when a quantity of ``shape`` is not finite: an element size or a
    header figure so large that bytes or work overflow a double (``inf``, or ``nan`` from ``inf − inf``), which no
    pass, room or batch can be priced from."""
    for name in _SHAPE_QUANTITIES:
        value = getattr(shape, name)
        if not math.isfinite(value):
            raise InputError(
                f"the pass's {name} is {value!r}: an element size (--kv-bytes, --state-bytes) or a header figure is "
                "too large for a double"
            )


def _transform(n: float) -> float:
    """Additions of a Walsh–Hadamard transform of ``n`` elements: n·log2 n (seed, ``kv_rotated``)."""
    return n * math.log2(max(n, 1.0))


def _missing_ssm(header: GGUFHeader) -> DecodeRefusal:
    """The refusal of a recurrence stage without its Gated-DeltaNet shape, naming each missing ``ssm.*`` key."""
    from passprice.decode import MissingMetadata, recurrence_of

    try:
        recurrence_of(header)
    except MissingMetadata as e:
        return e
    arch = header.architecture or "?"  # pragma: no cover - only called when the shape is missing
    return MissingMetadata([f"{arch}.ssm.*"], "a recurrent stage needs its Gated-DeltaNet shape")


#: Pass shapes already built, most recently used last: (pricing-model version, id of the header, the serving's fields
#: but its batch and host memory) → (the header, its shape). The header is kept so that its id cannot be reused while
#: it is cached; the version, so that a shape is never served across a change of the pricing model. A refusal is kept
#: in its place (without its traceback), and raised again.
_SHAPES: OrderedDict[tuple[Any, ...], tuple[GGUFHeader, PassShape | ServingRefusal]] = OrderedDict()
_SHAPES_KEPT = 64
#: Fields of :class:`Serving` the shape does not read: the batch and whether host memory may be used.
_NOT_SHAPE = frozenset({"batch", "host_memory"})
#: Pass shapes (never refusals) of headers read from registry entries, by content: (pricing-model version, the
#: entry's content key, :func:`passprice.checkpoints.entry_content`, the serving's fields but its batch and host
#: memory) → the shape. Two header objects of one entry's bytes (diff's BASE and HEAD sides, each read from its own
#: folder) build one shape: a shape is a function of the header's content and the serving, never of the path it was
#: read from (only a refusal's text names that, and a refusal is not shared).
_SHARED_SHAPES: OrderedDict[tuple[Any, ...], PassShape] = OrderedDict()


def _entry_content(header: GGUFHeader) -> str | None:
    """:func:`passprice.checkpoints.entry_content` of ``header``; ``None`` when no entry was read in this process
    (the module not imported). Raises nothing."""
    import sys

    module = sys.modules.get("passprice.checkpoints")
    return None if module is None else module.entry_content(header)


#: Decode steps already built for :func:`pass_shape`: (id of the header, deployment) → (the header, its step).
_STEPS: OrderedDict[tuple[int, Deployment], tuple[GGUFHeader, DecodeStep]] = OrderedDict()


def _step_of(header: GGUFHeader, deployment: Deployment) -> DecodeStep:
    """``decode_step(header, deployment, defer_recurrence=True)``, built once per header object and deployment: the
    step does not depend on the contexts, so a sweep's positions, a trace's steps and a search's servings share it.
    A refusal is not kept. Raises what :func:`~passprice.decode.decode_step` raises."""
    key = (id(header), deployment)
    hit = _STEPS.get(key)
    if hit is not None and hit[0] is header:
        _STEPS.move_to_end(key)
        return hit[1]
    step = _stored_step(header, deployment)
    _STEPS[key] = (header, step)
    while len(_STEPS) > _SHAPES_KEPT:
        _STEPS.popitem(last=False)
    return step


def _stored_step(header: GGUFHeader, deployment: Deployment) -> DecodeStep:
    """``decode_step(header, deployment, defer_recurrence=True)``; for a header read from a registry entry through
    the cache of validated files (:func:`passprice.cache.identity`), kept there too, keyed by the header's entry and
    the deployment, so a process pricing an unchanged checkpoint does not rebuild its step from the tensor table.
    Raises what :func:`~passprice.decode.decode_step` raises (a refusal is not kept)."""
    from passprice import cache
    from passprice.decode import DecodeStep, decode_step

    origin = cache.identity(header)
    if origin is None:
        return decode_step(header, deployment, defer_recurrence=True)
    return cache.built(
        "decode-step", None, f"{origin}\0{deployment!r}\0deferred".encode(),
        lambda: decode_step(header, deployment, defer_recurrence=True), DecodeStep,
    )


#: Pass shapes a process stores in the cache of built objects, at most: a command prices a serving or a few; a process
#: pricing hundreds of servings in a loop keeps them in memory (:data:`_SHAPES`) and would only pay to write them.
_SHAPES_STORED = 16
#: Pass shapes this process has built (not found in the cache of built objects).
_shapes_missed = 0


def _stored_shape(header: GGUFHeader, s: Serving, fields: tuple[Any, ...]) -> PassShape:
    """``pass_shape(header, s)``; for a header read from a registry entry through the cache of validated files
    (:func:`passprice.cache.identity`), kept there too (the first :data:`_SHAPES_STORED` a process builds), keyed by
    the header's entry, the pricing model's version and the ``repr`` of ``fields`` (the serving's fields the shape
    reads: every value's exact ``repr``, floats included, so two servings that differ anywhere differ in the key;
    equal ones written differently only miss). Raises what :func:`pass_shape` raises (a refusal is not kept)."""
    import passprice
    from passprice import cache

    origin = cache.identity(header)
    if origin is None:
        return pass_shape(header, s)

    def build() -> PassShape:
        # Only a shape built counts: a hit counted too (round 28), so a diff, whose 31 lookups found its first 16
        # kept, rebuilt the other 15 on every run and never kept them.
        global _shapes_missed
        _shapes_missed += 1
        return pass_shape(header, s)

    material = f"{origin}\0{passprice.PRICING_MODEL_VERSION}\0{fields!r}"
    return cache.built("pass-shape", None, material.encode("utf-8", "surrogateescape"), build, PassShape,
                       store=_shapes_missed < _SHAPES_STORED)


def shape_of(header: GGUFHeader, s: Serving) -> PassShape:
    """:func:`pass_shape` of ``header`` and ``s``, built once per header object and serving (``s.batch`` and
    ``s.host_memory`` apart, which the shape does not read) and then reused, so repeated prices of one serving
    (a batch scan, an audit's elasticities, a lock's re-pricing) do not rebuild the pass from the tensor table;
    for a registry entry's header, across processes too (:func:`_stored_shape`). A refusal is kept in this process
    only (a sweep of a registry of thousands of servings meets the same refusal for every serving of a mixture of
    experts that names no routing): the same refusal object is raised again, its traceback dropped. Raises what
    :func:`pass_shape` raises."""
    import passprice

    version = passprice.PRICING_MODEL_VERSION
    key = (version, id(header), *(getattr(s, f.name) for f in attrs.fields(Serving) if f.name not in _NOT_SHAPE))
    try:
        hit = _SHAPES.get(key)
    except TypeError:  # a field that does not hash: build without caching
        return pass_shape(header, s)
    if hit is not None and hit[0] is header:
        _SHAPES.move_to_end(key)
        if isinstance(hit[1], ServingRefusal):
            raise hit[1].with_traceback(None)
        return hit[1]
    made: PassShape | ServingRefusal
    content = _entry_content(header)
    shared = None if content is None else _SHARED_SHAPES.get((version, content, *key[2:]))
    if shared is not None:
        made = shared
    else:
        try:
            made = _stored_shape(header, s, key[2:])
        except ServingRefusal as e:
            made = e.with_traceback(None)
        if content is not None and isinstance(made, PassShape):
            _SHARED_SHAPES[(version, content, *key[2:])] = made
            while len(_SHARED_SHAPES) > _SHAPES_KEPT:
                _SHARED_SHAPES.popitem(last=False)
    _SHAPES[key] = (header, made)
    while len(_SHAPES) > _SHAPES_KEPT:
        _SHAPES.popitem(last=False)
    if isinstance(made, ServingRefusal):
        raise made
    return made


def price_serving(header: GGUFHeader, card: Card, s: Serving) -> ServingCost:
    """One pass of ``s`` over the checkpoint ``header`` describes, on ``card`` (seed ``price_serving``).

    Raises :class:`Empty` for batch 0, else what :func:`pass_shape` and :meth:`PassShape.cost_split` raise; for a
    mixture of experts without a routing record, the batch's capacity refusal (``NotResident``, ``OnChipOverflow``:
    what the routing-free :func:`fit_shape` refuses) before ``Routed``, since no routing record makes it fit."""
    if s.batch == 0:
        raise Empty("batch")
    try:
        try:
            shape = shape_of(header, s)
        except Routed:
            # Whether the batch fits reads no routing (fit_shape): a batch no routing record can make fit is refused
            # for capacity, not Routed (walk48: gpt-oss-120b on a 10 GB card said Routed, sending the reader after a
            # routing record that could never price it).
            fit_shape(header, s).cost_split(card, s.batch, s.host_memory)
            raise
        return shape.cost_split(card, s.batch, s.host_memory)
    except NotResident as e:
        if s.kv_page is None:
            raise
        raise e.paged() from None


def fit_shape(header: GGUFHeader, s: Serving) -> PassShape:
    """The shape that says how many sequences of ``s`` fit: :func:`shape_of`, except for a mixture of experts
    without a routing record, which gets the routing-free shape (:func:`pass_shape` with ``routing_free``) rather
    than the ``Routed`` refusal. Whether a batch fits reads only what is held (every expert, whatever the routing),
    each sequence's bytes and its on-chip rows (a routed row's widest activations are its k experts' either way), so
    routing cannot change the answer. Raises what :func:`pass_shape` raises."""
    experts = header.meta_int("expert_count") or 0
    if s.routing is None and experts > 0:
        return pass_shape(header, s, routing_free=True)  # not kept: shape_of's key cannot tell it from a Routed one
    return shape_of(header, s)


def max_batch(header: GGUFHeader, card: Card, s: Serving) -> int:
    """The most sequences ``s`` can carry on ``card``: every larger batch is refused for capacity (seed
    ``max_batch``; ``s.batch`` is ignored). A mixture of experts needs no routing record for it (:func:`fit_shape`).
    Raises what :func:`pass_shape` raises, or batch 1's refusal."""
    return fit_shape(header, s).max_batch(card, s.host_memory, memory_use=s.memory_use)


@attrs.frozen
class MemoryBound:
    """What bounds :func:`max_batch` (issue 13: ``at most 580 sequences a pass`` said nothing of why): ``capacity``
    (bytes of card memory the serving may fill: the card's times ``memory_use`` when given), ``shared`` (bytes held
    once: weights and embedding table, :attr:`PassShape.held_shared`), ``per_sequence`` (bytes each sequence holds:
    its KV cache, recurrent state and conv ring, :attr:`PassShape.held_per_sequence`), ``card_room``
    (⌊(capacity − shared) / per sequence⌋, :meth:`PassShape.card_room`) and ``host_room`` (sequences host memory
    adds, 0 without host memory)."""

    capacity: float
    shared: float
    per_sequence: float
    card_room: int
    host_room: int


def memory_bound(header: GGUFHeader, card: Card, s: Serving, room: Pricing | None = None) -> MemoryBound:
    """The bytes that bound :func:`max_batch` for ``s`` on ``card`` (:class:`MemoryBound`; ``s.batch`` ignored);
    ``room``: the :class:`~passprice.cost.Pricing` whose ``capacity`` (bytes) the serving may fill, a stack's (the
    card's less its ``memory.reserved``, :func:`passprice.stacks.expected_pricing`), by default the card's. Raises
    what :func:`pass_shape` raises."""
    from passprice.batching import use_of

    shape = fit_shape(header, s)
    pricing = use_of(card, room, s.memory_use)
    capacity = pricing.capacity if pricing is not None else card.memory.capacity.value
    return MemoryBound(capacity, shape.held_shared, shape.held_per_sequence, shape.card_room(card, pricing),
                       shape.host_room(card) if s.host_memory else 0)  # fmt: skip


def last_position_bound(header: GGUFHeader, card: Card, s: Serving, room: Pricing | None = None) -> (
        MemoryBound | None):
    """What card memory holds were every sequence of a paged ``s`` at its last position: :func:`memory_bound` of
    ``s`` with each context class at position ``limit − 1`` (its limit's whole pages, :func:`~passprice.architectures
    .paged_held`; ``price … --position L−1`` holds the same), or ``None`` for a contiguous cache, which holds its limit
    whatever the position. A paged batch is counted at the mix's mean position (the seed's ``position + page / 2``
    a sequence): it fits only while positions stay spread about that mean, and this bound is the batch that fits
    however they stand (issue 13: 605 sequences of ``qwen3-30b-a3b-h200`` at mean position 2,048, 304 at 4,095).
    ``room`` as :func:`memory_bound`'s (a stack's, ``best --stack``). Raises what :func:`pass_shape` raises."""
    if s.kv_page is None:
        return None
    last = ContextMix(tuple(attrs.evolve(c, position=float(max(c.limit - 1, 0))) for c in s.contexts.classes))
    return memory_bound(header, card, attrs.evolve(s, contexts=last), room)


def best_serving(header: GGUFHeader, card: Card, s: Serving) -> ServingCost:
    """The batch at which ``s`` emits the most tokens per second on ``card``, and its pass (seed ``best_serving``;
    ``s.batch`` is ignored; ties go to the smaller batch). Raises what :func:`pass_shape` raises, or batch 1's
    refusal when no batch fits; for a mixture of experts without a routing record, batch 1's capacity refusal
    (``NotResident``) before ``Routed`` when not one sequence fits (:func:`price_serving`)."""
    try:
        shape = shape_of(header, s)
    except Routed:
        fit_shape(header, s).max_batch(card, s.host_memory, memory_use=s.memory_use)
        raise
    return shape.best(card, s.host_memory, max_tpot=s.max_tpot, memory_use=s.memory_use)

