"""A sequence's memory is the decode step's, read at a context: every KV, state and ring byte here is a byte the
pricer holds, and how many sequences fit is the pricer's own count.

:func:`kv_report` answers the design's inference sketch's first question (``inference-sketch.rs``, ``kv_cache_mem``: how
much KV cache a model needs at 4K/32K/128K) from a real header instead of ``2 × layers × kv_heads × head_dim × bytes``.
It reads :func:`~passprice.decode.decode_step`: its ``layers`` (which blocks hold full attention, a sliding window, a
Gated-DeltaNet recurrence, or nothing; per-layer KV-head counts; draft (MTP) blocks), its attention stages' bytes per
cached position (``kv_heads × (key_length + value_length) × kv_bytes``, so GQA and gemma3's 256-wide heads are read, not
assumed), its ``recurrence`` (the dense state and the conv ring) and its ``held`` classes (the weights and the embedding
table, held once, tied or not). How many sequences fit beside the weights on a card is
:meth:`~passprice.serving.PassShape.card_room` of the serving at that context (contiguous cache), the number ``passprice
max-batch`` gives unless the card's on-chip memory binds first, which :class:`CardFit` says. """

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from passprice.architectures import windowed_held
from passprice.bounds import misspelt
from passprice.cards import Card
from passprice.decode import DecodeRefusal, Deployment, HeldClass, LayerKind, StageKind, decode_step
from passprice.errors import InputError
from passprice.gguf_header import GGUFHeader
from passprice.serving import (
    U32_MAX,
    ContextBeyondModel,
    ContextMix,
    OnChipOverflow,
    PassShape,
    Serving,
    ServingRefusal,
    Step,
    pass_shape,
)

#: Context sizes are counted in binary thousands, as model cards write them: 4K = 4,096 positions, 128K = 131,072.
_SUFFIX = {"": 1, "k": 1024, "m": 1024 * 1024}
_CONTEXT = re.compile(r"([0-9]+)([kKmM]?)")

#: The context sizes ``passprice kv`` shows by default, those below the model's own context (4K, 32K, 128K).
STANDARD_CONTEXTS = (4096, 32768, 131072)


def default_contexts(model_context: int | None) -> tuple[int, ...]:
    """The contexts ``passprice kv`` shows when none are given: the standard sizes (:data:`STANDARD_CONTEXTS`) below
    the model's context, then the model's own (a 2K model: 2,048 alone; gemma3 270M: 4K, 32K); the standard sizes
    when the header states no context length."""
    if not model_context or model_context <= 0:
        return STANDARD_CONTEXTS
    return (*(c for c in STANDARD_CONTEXTS if c < model_context), model_context)


#: Context sizes one report shows at most (each is a column of the fit table, and a decode step priced per card).
MAX_CONTEXTS = 64

#: The layer kinds of a report, in the order they are shown, with the label a person reads.
KIND_LABELS: dict[LayerKind, str] = {
    LayerKind.ATTENTION: "global attention",
    LayerKind.WINDOWED: "windowed attention",
    LayerKind.RECURRENT: "recurrent (no KV)",
    LayerKind.NONE: "none (no KV heads)",
}


def parse_contexts(text: str) -> tuple[int, ...]:
    """Context sizes from the command line: comma-separated positions, each a whole number with an optional ``k``
    (× 1,024) or ``m`` (× 1,048,576) suffix: ``4k,32k,128k`` → (4096, 32768, 131072). Duplicates are dropped, the
    order kept. Raises :class:`InputError` naming the item that is not a positive size, or for more than
    :data:`MAX_CONTEXTS` sizes."""
    out: list[int] = []
    items = text.split(",")
    if len(items) > MAX_CONTEXTS:
        raise InputError(f"--contexts: {len(items):,} sizes; a report shows at most {MAX_CONTEXTS}")
    for item in items:
        m = _CONTEXT.fullmatch(item)
        if m is None or int(m.group(1)) == 0:
            problem = misspelt(item)
            said = f"{problem}: write sizes in digits alone" if problem is not None else "is not a context size"
            raise InputError(f"--contexts: {item!r} {said} (positions: 4096, 4k, 128k, 1m)")
        value = int(m.group(1)) * _SUFFIX[m.group(2).lower()]
        if value not in out:
            out.append(value)
    return tuple(out)


def context_label(positions: int) -> str:
    """``131072`` → ``128K``; a size that is not a whole number of K is written out with thousands separators, as
    every other count in the tables is (``5,000``; ``1,000,000`` where ``--contexts 1000000`` printed ``1000000``
    beside ``262,144``: issue 13's leftovers, session 34)."""
    if positions % (1024 * 1024) == 0:
        return f"{positions // (1024 * 1024)}M"
    if positions % 1024 == 0:
        return f"{positions // 1024}K"
    return f"{positions:,}"


@attrs.frozen
class LayerKV:
    """One block as its sequence memory sees it: ``index``, ``kind``, whether it is a ``draft`` (MTP) block (held
    only when a serving drafts), its ``kv_heads``, its sliding ``window`` (positions) when windowed, and
    ``bytes_per_position``: the K and V rows one cached position adds, ``kv_heads × (key + value) × kv_bytes``
    (bytes; 0 for a block without a KV cache), or for DeepSeek's multi-head latent attention (``latent``) the latent
    and rope key every head shares, ``(kv_lora_rank + rope.dimension_count) × kv_bytes``. Read off the decode step's
    attention stage (DESIGN.md, The decode step)."""

    index: int
    kind: LayerKind
    draft: bool
    kv_heads: int
    window: int | None
    bytes_per_position: float
    latent: bool = False

    def positions(self, context: int) -> int:
        """Positions this block's cache holds for a sequence allowed ``context`` positions (contiguous cache):
        min(context, window) for a windowed block (:func:`passprice.architectures.windowed_held`), ``context`` for a
        global one, 0 without a cache."""
        if self.bytes_per_position == 0:
            return 0
        return context if self.window is None else windowed_held(context, self.window)


@attrs.frozen
class KindKV:
    """The blocks of one kind (main blocks only; draft blocks are :attr:`ContextKV.draft_bytes`) at one context:
    ``layers`` (how many), ``positions`` each holds (per layer; the largest when windows differ), ``bytes`` per
    sequence (Σ bytes per position × positions)."""

    kind: LayerKind
    layers: int
    positions: int
    bytes: float


@attrs.frozen
class CardFit:
    """How many sequences at one context fit beside the weights on ``card``.

    ``capacity`` (bytes of card memory), ``held_shared`` (weights and embedding table, bytes), ``held_per_sequence``
    (bytes a sequence holds in the pass: the seed's ``held_per_sequence``, which besides the cache, state and ring
    counts the ring row and state the pass writes), ``card_room`` (⌊(capacity − shared) / per sequence⌋, seed
    ``card_room``), ``on_chip_room`` (⌊on-chip capacity / token-row bytes per sequence⌋), ``max_batch`` (the seed's
    ``max_batch``: the first batch refused for capacity, less one), and ``limited_by``: ``memory``, ``on-chip``, or
    both joined by ``and``. ``refusal`` names what refused batch 1 when nothing fits."""

    card: str
    capacity: float
    held_shared: float
    held_per_sequence: float
    card_room: int
    on_chip_room: int
    max_batch: int
    limited_by: str
    refusal: str | None = None


@attrs.frozen
class ContextKV:
    """A sequence's memory at ``context`` positions (contiguous cache), or the ``refusal`` that stops it
    (:class:`~passprice.serving.ContextBeyondModel` past the model's context length).

    ``kinds``: main blocks by kind. ``kv_bytes`` (all main-block caches), ``draft_bytes`` (draft blocks' caches,
    held only when a serving drafts), ``state_bytes`` (dense recurrent states), ``ring_bytes`` (conv rings),
    ``total_bytes`` (KV + state + ring of the main blocks: the sequence's memory when it does not draft), all bytes
    per sequence; ``fits`` per registered card, or ``fit_refusal`` when the pass itself is refused."""

    context: int
    refusal: ServingRefusal | None = None
    kinds: tuple[KindKV, ...] = ()
    kv_bytes: float = 0.0
    draft_bytes: float = 0.0
    state_bytes: float = 0.0
    ring_bytes: float = 0.0
    fits: tuple[CardFit, ...] = ()
    fit_refusal: ServingRefusal | None = None

    @property
    def total_bytes(self) -> float:
        """KV + recurrent state + conv ring of the main blocks, bytes per sequence."""
        return self.kv_bytes + self.state_bytes + self.ring_bytes

    def kind(self, kind: LayerKind) -> KindKV | None:
        """The figures of ``kind``, or ``None`` when the checkpoint has no block of it."""
        return next((k for k in self.kinds if k.kind is kind), None)


@attrs.frozen
class KVReport:
    """A checkpoint's sequence memory at each context.

    ``layers``: every block (:class:`LayerKV`). ``kv_bytes_per_element`` / ``state_bytes_per_element``: the cache
    and state element sizes (bytes). ``weights`` and ``embedding_table``: bytes held once (``tied``: no
    ``output.weight``, the head reads the table). ``state_per_layer`` and ``ring_per_layer``: bytes of one recurrent
    block's dense state (heads × key × value × state bytes) and conv ring ((conv_kernel − 1) × channels × state
    bytes), 0 without recurrence. ``model_context``: the checkpoint's ``context_length`` (``None`` when absent).
    ``contexts``: one :class:`ContextKV` per requested context. ``draft_weights``: bytes of the draft (MTP) blocks'
    weights, not among ``weights`` (held once without drafts; a serving that drafts with them holds them too)."""

    checkpoint: str
    architecture: str
    layers: tuple[LayerKV, ...]
    kv_bytes_per_element: float
    state_bytes_per_element: float
    weights: float
    embedding_table: float
    tied: bool
    state_per_layer: float
    ring_per_layer: float
    model_context: int | None
    contexts: tuple[ContextKV, ...]
    draft_weights: float = 0.0

    def bytes_per_token(self, kind: LayerKind | None = None, draft: bool = False) -> float:
        """Bytes one cached position adds across the main blocks (draft blocks with ``draft``), of ``kind`` when
        given: Σ ``bytes_per_position``."""
        return sum(
            (x.bytes_per_position for x in self.layers if x.draft == draft and (kind is None or x.kind is kind)),
            0.0,
        )

    def count(self, kind: LayerKind, draft: bool = False) -> int:
        """How many main blocks (draft blocks with ``draft``) are of ``kind``."""
        return sum(1 for x in self.layers if x.kind is kind and x.draft == draft)

    def at(self, context: int) -> ContextKV:
        """The figures at ``context``. Raises :class:`KeyError` for a context not in the report."""
        for c in self.contexts:
            if c.context == context:
                return c
        raise KeyError(context)


def _layers(header: GGUFHeader, kv_bytes: float, state_bytes: float) -> tuple[LayerKV, ...]:
    """Every block's :class:`LayerKV`, from the decode step of a drafting deployment (so draft blocks have their
    attention stages too)."""
    step = decode_step(header, Deployment(ctx=1, kv_bytes=kv_bytes, state_bytes=state_bytes, speculative=True))
    per_position = {
        st.layer: st.state_write for st in step.stages if st.kind is StageKind.ATTENTION and st.layer is not None
    }
    return tuple(
        LayerKV(
            index=x.index,
            kind=x.kind,
            draft=x.draft,
            kv_heads=x.kv_heads,
            window=x.window,
            bytes_per_position=float(per_position.get(x.index, 0.0)),
            latent=x.latent,
        )
        for x in step.layers
    )


def _fit(shape: PassShape, card: Card) -> CardFit:
    """How many sequences of ``shape`` fit on ``card``: the seed's ``card_room`` and ``max_batch``, and which
    capacity stops the batch."""
    room = shape.card_room(card)
    per_row = shape.on_chip_per_sequence
    chip = int(min(math.floor(card.on_chip.capacity.value / per_row), U32_MAX)) if per_row > 0 else U32_MAX
    refusal = None
    try:
        most = shape.max_batch(card, False)
    except ServingRefusal as e:
        most, refusal = 0, e.name
    if refusal is not None:
        limited = "on-chip" if refusal == OnChipOverflow.name else "memory"
    else:
        limits = [name for name, n in (("memory", room), ("on-chip", chip)) if n == most]
        limited = " and ".join(limits) or "memory"
    return CardFit(
        card=card.name,
        capacity=card.memory.capacity.value,
        held_shared=shape.held_shared,
        held_per_sequence=shape.held_per_sequence,
        card_room=room,
        on_chip_room=chip,
        max_batch=most,
        limited_by=limited,
        refusal=refusal,
    )


def kv_report(
    header: GGUFHeader,
    contexts: Iterable[int],
    cards: Sequence[Card] = (),
    kv_bytes: float = 2.0,
    state_bytes: float = 4.0,
    name: str | None = None,
) -> KVReport:
    """Per sequence and per cached position, the KV cache (by layer kind), recurrent state and conv ring bytes of the
    checkpoint ``header`` describes, at each of ``contexts`` (positions, contiguous cache: a sequence holds its whole
    limit, a windowed block at most its window), and how many sequences fit beside the weights on each of ``cards``.

    Formulas: a block's cache holds ``kv_heads × (key_length + value_length) × kv_bytes`` bytes per position
    (DESIGN.md, The decode step) times min(context, window) positions; a recurrent block holds ``heads × key ×
    value × state_bytes`` of dense state and ``(conv_kernel − 1) × channels × state_bytes`` of conv ring (seed
    ``Recurrence``); the fit is the seed's ``card_room`` and ``max_batch`` of a serving at limit = context,
    position = context / 2 (what ``passprice max-batch --limit CONTEXT --contiguous`` prices), with ``kv_bytes`` and
    ``state_bytes``, no drafts. A context past the model's ``context_length`` carries
    :class:`~passprice.serving.ContextBeyondModel` and no figures.

    Raises :class:`~passprice.serving.Step` when the decode step is refused (an unplaceable tensor, missing ``ssm.*``
    or expert metadata), and :class:`InputError` for a non-positive element size. A mixture of experts is read: its
    KV cache and what fits do not depend on how its tokens route.
    """
    if not (kv_bytes > 0 and math.isfinite(kv_bytes)) or not (state_bytes > 0 and math.isfinite(state_bytes)):
        raise InputError(f"element sizes must be positive bytes, not kv {kv_bytes!r} and state {state_bytes!r}")
    try:
        layers = _layers(header, kv_bytes, state_bytes)
        base = decode_step(header, Deployment(ctx=1, kv_bytes=kv_bytes, state_bytes=state_bytes))
    except DecodeRefusal as e:
        raise Step(e) from None
    rec = base.recurrence
    state_per_layer = rec.state * state_bytes if rec is not None else 0.0
    ring_per_layer = rec.ring_rows * rec.channels * state_bytes if rec is not None else 0.0
    main = [x for x in layers if not x.draft]
    model = header.meta_int("context_length")

    out: list[ContextKV] = []
    for context in contexts:
        if model is not None and context > model:
            out.append(ContextKV(context, refusal=ContextBeyondModel(context, model)))
            continue
        kinds = []
        for kind in KIND_LABELS:
            of_kind = [x for x in main if x.kind is kind]
            if of_kind:
                kinds.append(
                    KindKV(
                        kind,
                        len(of_kind),
                        max(x.positions(context) for x in of_kind),
                        sum(x.bytes_per_position * x.positions(context) for x in of_kind),
                    )
                )
        fits: tuple[CardFit, ...] = ()
        fit_refusal: ServingRefusal | None = None
        try:
            # What fits does not depend on routing (a mixture of experts holds every expert): a routing-free shape.
            shape = pass_shape(
                header,
                Serving(contexts=ContextMix.uniform(context / 2, context), kv_bytes=kv_bytes, state_bytes=state_bytes),
                routing_free=True,
            )
            fits = tuple(_fit(shape, card) for card in cards)
        except ServingRefusal as e:
            fit_refusal = e
        # The totals are the decode step's own held bytes at this context (no drafts: the main blocks).
        step = decode_step(header, Deployment(ctx=context, kv_bytes=kv_bytes, state_bytes=state_bytes))
        out.append(
            ContextKV(
                context,
                kinds=tuple(kinds),
                kv_bytes=step.held_bytes(HeldClass.KV_CACHE),
                draft_bytes=sum(x.bytes_per_position * x.positions(context) for x in layers if x.draft),
                state_bytes=step.held_bytes(HeldClass.RECURRENT_STATE),
                ring_bytes=step.held_bytes(HeldClass.CONV_RING),
                fits=fits,
                fit_refusal=fit_refusal,
            )
        )
    return KVReport(
        checkpoint=name or header.source,
        architecture=header.architecture or "?",
        layers=layers,
        kv_bytes_per_element=kv_bytes,
        state_bytes_per_element=state_bytes,
        weights=base.held_bytes(HeldClass.WEIGHTS),
        embedding_table=base.held_bytes(HeldClass.EMBEDDING_TABLE),
        tied=header.tensor("output.weight") is None,
        state_per_layer=float(state_per_layer),
        ring_per_layer=float(ring_per_layer),
        model_context=model,
        contexts=tuple(out),
        draft_weights=base.draft_weights,
    )


def binary(value: float) -> str:
    """Bytes with a binary prefix, 4 significant digits: ``150994944`` → ``144 MiB``; below 1 KiB, ``512 B``."""
    for power, prefix in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(value) >= 1024**power:
            return f"{value / 1024**power:.4g} {prefix}"
    return f"{value:.4g} B"


def exact(value: float) -> str:
    """A byte count as written in a table: an integer with thousands separators, else two decimals."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def _kinds_present(report: KVReport) -> list[LayerKind]:
    return [k for k in KIND_LABELS if report.count(k) > 0]


def _draft_attention(report: KVReport) -> list[LayerKV]:
    return [x for x in report.layers if x.draft and x.bytes_per_position > 0]


def kv_json(report: KVReport) -> dict[str, Any]:
    """The ``--json`` object of ``passprice kv``: every figure in bytes (exact), per token (bytes one cached position
    adds) by layer kind, per layer, and per context (or its refusal) with each card's fit."""
    per_token = {k.value: report.bytes_per_token(k) for k in _kinds_present(report)}
    contexts: list[dict[str, Any]] = []
    for c in report.contexts:
        if c.refusal is not None:
            contexts.append({"context": c.context, **c.refusal.to_json()})
            continue
        entry: dict[str, Any] = {
            "context": c.context,
            "kinds": {k.kind.value: {"layers": k.layers, "positions": k.positions, "bytes": k.bytes} for k in c.kinds},
            "kv_bytes": c.kv_bytes,
            "draft_kv_bytes": c.draft_bytes,
            "state_bytes": c.state_bytes,
            "ring_bytes": c.ring_bytes,
            "total_bytes": c.total_bytes,
        }
        if c.fit_refusal is not None:
            entry["fit_refusal"] = c.fit_refusal.to_json()
        entry["fits"] = [attrs.asdict(f) for f in c.fits]
        contexts.append(entry)
    return {
        "checkpoint": report.checkpoint,
        "architecture": report.architecture,
        "model_context": report.model_context,
        "kv_bytes_per_element": report.kv_bytes_per_element,
        "state_bytes_per_element": report.state_bytes_per_element,
        "held_once": {"weights": report.weights, "embedding_table": report.embedding_table, "tied": report.tied,
                      "draft_weights_not_held": report.draft_weights},
        "recurrence": {"state_per_layer": report.state_per_layer, "ring_per_layer": report.ring_per_layer},
        "per_token": per_token,
        "per_token_total": report.bytes_per_token(),
        "draft_per_token": report.bytes_per_token(draft=True),
        "layers": [
            {
                "index": x.index,
                "kind": x.kind.value,
                "draft": x.draft,
                "kv_heads": x.kv_heads,
                "window": x.window,
                "bytes_per_position": x.bytes_per_position,
                "latent": x.latent,
            }
            for x in report.layers
        ],
        "contexts": contexts,
    }


def kv_text(report: KVReport) -> str:
    """``passprice kv`` for people: what is held once, bytes per cached position by layer kind, bytes per sequence
    at each context (positions each kind holds), and the sequences each card fits beside the weights."""
    from passprice.serving import held_once_counts
    from passprice.tables import si, text_table

    main = [x for x in report.layers if not x.draft]
    model = f"context length {report.model_context:,}" if report.model_context else "no context length"
    lines = [
        f"{report.checkpoint} ({report.architecture}): {len(main)} blocks, {model}; "
        f"KV elements {report.kv_bytes_per_element:g} B, state elements {report.state_bytes_per_element:g} B",
        # Decimal first, as card memory is written (GB) on the lines below, and binary beside it.
        f"  held once: weights {si(report.weights, 'B')} ({binary(report.weights)}) + embedding table "
        f"{si(report.embedding_table, 'B')} ({binary(report.embedding_table)})"
        + (" (tied: the head reads the table)" if report.tied else "")
        + held_once_counts(report.draft_weights, False, lambda b: f"{si(b, 'B')} ({binary(b)})", bracket=False),
        "",
    ]
    rows = []
    for kind in _kinds_present(report):
        of_kind = [x for x in main if x.kind is kind]
        heads = sorted({x.kv_heads for x in of_kind})
        windows = sorted({x.window for x in of_kind if x.window is not None})
        label = KIND_LABELS[kind] + (f" ({', '.join(str(w) for w in windows)})" if windows else "")
        if any(x.latent for x in of_kind):
            label += " (MLA: latent + rope key)"
        per_token = report.bytes_per_token(kind)
        if not per_token:
            heads_text = "-"
        elif len(heads) == 1:
            heads_text = str(heads[0])
        else:
            heads_text = f"{heads[0]}–{heads[-1]} (per layer)"
        rows.append([label, str(len(of_kind)), heads_text, exact(per_token)])
    for x in _draft_attention(report):
        # The block's index (blk.N), not a count: "block 61" read as 61 blocks.
        rows.append([f"draft (MTP): block index {x.index}", "1", str(x.kv_heads), exact(x.bytes_per_position)])
    rows.append(["all main blocks", str(len(main)), "", exact(report.bytes_per_token())])
    lines.append("bytes one cached position (one token) adds, K and V rows of every block")
    lines.append(text_table(["layer kind", "layers", "KV heads", "bytes/token"], rows, right=(1, 2, 3)))
    if report.state_per_layer:
        lines.append(
            f"  a recurrent block holds {exact(report.state_per_layer)} B of dense state and "
            f"{exact(report.ring_per_layer)} B of conv ring per sequence, whatever the context"
        )
    lines.append("")

    kinds = [k for k in _kinds_present(report) if report.bytes_per_token(k) > 0]
    recurrent = report.count(LayerKind.RECURRENT) > 0
    drafts = bool(_draft_attention(report))
    headers = ["context"]
    for k in kinds:
        short = KIND_LABELS[k].split()[0]
        headers += [f"{short}: positions", f"{short}: bytes"]
    if recurrent:
        headers += ["recurrent state", "conv ring"]
    headers += ["per sequence", "(binary)"]
    if drafts:
        headers.append("+ draft KV if drafting")
    rows = []
    for c in report.contexts:
        if c.refusal is not None:
            why = (
                f"past the model's context length {c.refusal.model:,}"
                if isinstance(c.refusal, ContextBeyondModel)
                else str(c.refusal)
            )
            rows.append([context_label(c.context), f"refused ({c.refusal.name}): {why}"])
            continue
        row = [context_label(c.context)]
        for k in kinds:
            got = c.kind(k)
            row += [f"{got.positions:,}", exact(got.bytes)] if got is not None else ["", ""]
        if recurrent:
            row += [exact(c.state_bytes), exact(c.ring_bytes)]
        row += [exact(c.total_bytes), binary(c.total_bytes)]
        if drafts:
            row.append(exact(c.draft_bytes))
        rows.append(row)
    lines.append("bytes per sequence at each context (contiguous cache: a sequence holds its whole limit)")
    lines.append(_table_with_notes(headers, rows, text_table))
    lines.append("")

    priced = [c for c in report.contexts if c.refusal is None and c.fits]
    if priced:
        cards = [f.card for f in priced[0].fits]
        rows = []
        for i, card in enumerate(cards):
            first = priced[0].fits[i]
            row = [card, si(first.capacity, "B")]
            for c in priced:
                f = c.fits[i]
                note = "" if f.limited_by == "memory" else f" ({f.limited_by})"
                row.append(f"{f.max_batch:,}{note}" if f.refusal is None else f"0 ({f.refusal})")
            rows.append(row)
        lines.append(
            f"sequences that fit beside the weights ({si(priced[0].fits[0].held_shared, 'B')} held once"
            f"{held_once_counts(report.draft_weights, False, lambda b: si(b, 'B'), bracket=False)}): the seed's "
            "card_room, ⌊(memory − held once) / held per sequence⌋,\n  = max-batch with a contiguous cache at "
            "limit = context (on-chip room checked; marked where it binds first)"
        )
        held = ", ".join(f"{context_label(c.context)} {exact(c.fits[0].held_per_sequence)} B" for c in priced)
        lines.append(f"  held per sequence in the pass (seed held_per_sequence): {held}")
        extra = {c.fits[0].held_per_sequence - c.total_bytes for c in priced}
        if extra != {0}:
            why = (
                "the conv-ring row each token-row appends in every recurrent block, held while the pass runs"
                if recurrent
                else "what the pass writes while it runs"
            )
            more = ", ".join(f"{context_label(c.context)} {exact(c.fits[0].held_per_sequence - c.total_bytes)} B"
                             for c in priced)
            lines.append(f"  (more than the per-sequence column above by {more}: {why})")
        lines.append(
            text_table(
                ["card", "memory", *(context_label(c.context) for c in priced)],
                rows,
                right=tuple(range(1, 2 + len(priced))),
            )
        )
    for c in report.contexts:
        if c.refusal is None and c.fit_refusal is not None:
            lines.append(f"  {context_label(c.context)}: the pass is refused ({c.fit_refusal.name}): {c.fit_refusal}")
    return "\n".join(lines)


def _table_with_notes(headers: list[str], rows: list[list[str]], table: Any) -> str:
    """A table whose refused rows are a single cell of text: laid out from the full rows, refusals appended below
    the rule in their own lines."""
    full = [r for r in rows if len(r) == len(headers)]
    text: str = table(headers, full, right=tuple(range(1, len(headers))))
    out = text.splitlines()
    order = iter(out[2:])
    lines = out[:2]
    for r in rows:
        lines.append(next(order) if len(r) == len(headers) else f"{r[0]}  {r[1]}")
    return "\n".join(lines)
