"""Where a pass turns from memory-bound to compute-bound follows from its coefficients: the pass is the weights once
plus each sequence's own bytes against each sequence's arithmetic, so each term is affine in the batch and the bind
changes where two lines cross, which pricing then confirms batch by batch.

This answers the sketch's step 6 (the design's inference sketch, ``inference-sketch.rs``: ops:byte, crossover = FLOPS /
bandwidth) with the pricer's own terms. A datapath's **ridge point** is the work per byte of memory traffic at which
it takes as long as the memory: ``rate / (memory.bandwidth × streams.read)`` (:func:`ridges`). The share is
``streams.read`` because the bytes arithmetic amortizes over a batch are the weights, streamed once a pass as one long
read; a sequence's own bytes (a cache read with rows appended, a state rewritten in place, at the ``append`` and
``rewrite`` shares) grow with the batch exactly as its arithmetic does, so they lower the pass's intensity, never the
ridge. A serving's **arithmetic intensity** at a batch is its work per *read-equivalent* byte, ``memory_s ×
bandwidth × streams.read`` (each byte weighted by ``streams.read`` over its own stream's share), so a datapath binds
exactly when its intensity reaches its ridge, the seed's comparison of terms restated (``PassShape::cost``).
:func:`roofline` returns everything ``passprice roofline`` prints and its ``--plot`` draws (:func:`draw`).
"""

from __future__ import annotations

import io
import itertools
import math
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.cachefolder import make_folders
from passprice.cards import Card
from passprice.cost import Lines, Pricing, binding
from passprice.errors import InputError, escaped
from passprice.files import check_writable, write_atomically, written_suffix
from passprice.gguf_header import GGUFHeader
from passprice.serving import (
    PassShape,
    Serving,
    ServingBind,
    ServingCost,
    pass_shape,
)

if TYPE_CHECKING:
    from passprice.registry import Root

#: What ``--plot`` needs, and how to get it (printed, exit 2, when matplotlib is missing).
PLOT_INSTALL = "pip install '.[plot]' in a checkout of passprice ('passprice[plot]' from a package index)"


#: Distinct batches the plot prices at most, log-spaced between 1 and the largest batch that fits (every batch when
#: fewer fit), besides the bind changes, the best batch and the largest.
PLOT_POINTS = 240


#: With host memory, the bind is found by pricing every batch up to this many (half a millisecond each); beyond it,
#: by pricing the plot's grid and bisecting between neighbours that bind differently.
PRICE_EVERY = 4096


def require_card_first(root: Root, card: str, serving: str | None) -> None:
    """Refuse ``roofline CARD [SERVING]`` given a registered serving as CARD where ``root`` (a
    registry) registers no card of that name, and ``serving`` is none or a registered card:
    the two swapped, or the serving given alone. Raises :class:`InputError` naming the command to run (the serving's
    card read from its file when it reads). ``roofline r1-qwen7b-h200 h200_sxm_141gb`` said only that
    h200_sxm_141gb was "a registered card, not a serving" (walkthrough 43)."""
    import re

    from passprice.files import is_there
    from passprice.registry import serving_card

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", card, flags=re.ASCII):
        return
    if is_there(root.cards / f"{card}.toml"):
        return
    if not is_there(root.servings / f"{card}.toml"):
        return
    plain = serving is None or re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", serving, flags=re.ASCII)
    if serving is not None and (not plain or not is_there(root.cards / f"{serving}.toml")):
        return
    named = serving if serving is not None else serving_card(root.servings / f"{card}.toml")
    then = f"passprice roofline {named} {card}" if named else f"passprice roofline CARD {card}"
    raise InputError(f"roofline takes CARD [SERVING], the card first: {card} is a registered serving, not a card; "
                     f"run `{then}`")

@attrs.frozen
class Ridge:
    """One datapath's ridge point: ``datapath`` (``array``, ``vector`` or ``scale``), its ``rate`` (MAC/s, or
    cycle/s for the scale lanes; ``work`` names the unit), the card's ``bandwidth`` (B/s) and ``share``
    (``streams.read``), and ``ridge`` = rate / (bandwidth × share): work per byte at which the datapath takes as long
    as the memory (MAC/B, or cycle/B)."""

    datapath: str
    rate: float
    work: str
    bandwidth: float
    share: float

    @property
    def ridge(self) -> float:
        """rate / (bandwidth × streams.read), work per byte."""
        return self.rate / (self.bandwidth * self.share)


def ridges(card: Card) -> tuple[Ridge, ...]:
    """The ridge points of ``card``'s integer array, f32 vector units and block-scale lanes (module docstring for
    the formula and the share)."""
    bandwidth = card.memory.bandwidth.value
    share = card.streams.read.value
    return (
        Ridge("array", card.array.value, "MAC", bandwidth, share),
        Ridge("vector", card.vector.value, "MAC", bandwidth, share),
        Ridge("scale", card.scale.value, "cycle", bandwidth, share),
    )


@attrs.frozen
class Coefficients:
    """The pass's terms as lines in the batch *b* (seconds), its sequences all in card memory (seed
    ``PassShape::cost`` with no host sequences): memory = ``memory_shared_s`` + b × ``memory_per_sequence_s``; array,
    vector, scale = b × ``array_s``, ``vector_s``, ``scale_s``. ``memory_shared_s`` = weight bytes / (bandwidth ×
    read); ``memory_per_sequence_s`` = embedding rows / (bandwidth × read) + rewritten bytes / (bandwidth × rewrite) +
    the other sequence bytes / (bandwidth × append)."""

    memory_shared_s: float
    memory_per_sequence_s: float
    array_s: float
    vector_s: float
    scale_s: float

    @classmethod
    def of(cls, shape: PassShape, card: Card, pricing: Pricing | None = None) -> Coefficients:
        """The coefficients of ``shape`` on ``card``: the one cost formula's lines (:class:`passprice.cost.Lines`),
        at the card's limit or at ``pricing`` (a serving stack's rates, issue 14)."""
        lines = Lines.of(pricing if pricing is not None else Pricing.limit(card), shape)
        return cls(
            memory_shared_s=lines.shared_s,
            memory_per_sequence_s=lines.embed_s + lines.sequence_s,
            array_s=lines.array_s,
            vector_s=lines.vector_s,
            scale_s=lines.scale_s,
        )

    def compute(self) -> tuple[float, ServingBind]:
        """The largest arithmetic coefficient and its bind (the last of equal maxima, as the seed's ``max_by``):
        every arithmetic term is proportional to the batch, so this one is the largest at every batch."""
        return binding(
            [(self.array_s, ServingBind.ARRAY), (self.vector_s, ServingBind.VECTOR), (self.scale_s, ServingBind.SCALE)]
        )

    def crossing(self) -> float | None:
        """The batch (a real number) at which the largest arithmetic term reaches the memory term:
        ``memory_shared_s / (compute − memory_per_sequence_s)``; ``None`` when the arithmetic grows no faster than
        the memory, so memory binds at every batch."""
        per, _ = self.compute()
        if per <= self.memory_per_sequence_s:
            return None
        return self.memory_shared_s / (per - self.memory_per_sequence_s)

    def predicted_change(self) -> int | None:
        """The first batch the coefficients say binds on arithmetic: ⌈crossing⌉ (at the crossing itself the
        arithmetic term wins the tie, being later in the seed's order), at least 1; ``None`` when it never does."""
        cross = self.crossing()
        if cross is None:
            return None
        return max(1, math.ceil(cross))


@attrs.frozen
class Point:
    """One priced batch: ``batch``, ``host_sequences``, ``bytes_moved`` (card-memory bytes a pass moves: weights,
    embedding rows, and each card-held sequence's own), ``read_equivalent`` (memory_s × bandwidth × streams.read,
    bytes), the intensities ``array``, ``vector`` (MAC per read-equivalent byte) and ``scale`` (cycles per
    read-equivalent byte), the same work per byte actually moved (``array_moved``, ``vector_moved``), ``pass_s``,
    ``tokens_per_s``, ``binds`` (the seed's) and the five ``terms`` (seconds, the seed's order)."""

    batch: int
    host_sequences: int
    bytes_moved: float
    read_equivalent: float
    array: float
    vector: float
    scale: float
    array_moved: float
    vector_moved: float
    pass_s: float
    tokens_per_s: float
    binds: ServingBind
    terms: tuple[float, float, float, float, float]


def point(cost: ServingCost, card: Card) -> Point:
    """The intensities of a priced pass on ``card`` (module docstring for read-equivalent bytes)."""
    read_equivalent = cost.memory_s * card.memory.bandwidth.value * card.streams.read.value
    per = 1.0 / read_equivalent if read_equivalent > 0 else math.inf
    moved = cost.weight_bytes + (cost.batch - cost.host_sequences) * cost.sequence_bytes
    return Point(
        batch=cost.batch,
        host_sequences=cost.host_sequences,
        bytes_moved=moved,
        read_equivalent=read_equivalent,
        array=cost.array_macs * per,
        vector=cost.vector_macs * per,
        scale=cost.scale_cycles * per,
        array_moved=cost.array_macs / moved if moved > 0 else math.inf,
        vector_moved=cost.vector_macs / moved if moved > 0 else math.inf,
        pass_s=cost.pass_s,
        tokens_per_s=cost.tokens_per_s,
        binds=cost.binds,
        terms=(cost.memory_s, cost.host_s, cost.array_s, cost.vector_s, cost.scale_s),
    )


@attrs.frozen
class Change:
    """The bind changes from ``before`` to ``after`` at ``batch`` (the first batch of ``after``; the pass of
    ``batch − 1`` binds on ``before``, both priced). ``predicted``: the batch the coefficients give (``None`` when
    they do not predict it: a host-memory split); ``crossing``: their real-valued crossing."""

    batch: int
    before: ServingBind
    after: ServingBind
    predicted: int | None = None
    crossing: float | None = None

    @property
    def agrees(self) -> bool:
        """Whether the priced change is where the coefficients put it."""
        return self.predicted == self.batch


@attrs.frozen
class Region:
    """Batches ``first`` … ``last`` (inclusive) whose passes bind on ``binds``."""

    binds: ServingBind
    first: int
    last: int

    def __contains__(self, batch: object) -> bool:
        return isinstance(batch, int) and self.first <= batch <= self.last


@attrs.frozen
class Roofline:
    """A serving's roofline on a card: the card's ``ridges``; the pass's ``coefficients`` (card memory only); the
    priced ``points`` the plot is drawn from (batch ascending, 1 … ``max_batch``); the bind ``changes`` and the
    ``regions`` they cut; the ``best`` pass (``passprice best``) and ``max_batch`` (``passprice max-batch``);
    ``title`` and ``context`` name what was priced. ``host_memory``: whether sequences may live in host memory (then
    the memory term is not affine, the changes are found by pricing alone)."""

    card: Card
    ridges: tuple[Ridge, ...]
    coefficients: Coefficients
    points: tuple[Point, ...]
    changes: tuple[Change, ...]
    regions: tuple[Region, ...]
    best: ServingCost
    max_batch: int
    host_memory: bool
    title: str
    routed: bool = False

    def region_of(self, batch: int) -> Region:
        """The region holding ``batch``. Raises :class:`KeyError` for a batch outside 1 … ``max_batch``."""
        for r in self.regions:
            if batch in r:
                return r
        raise KeyError(batch)

    def at(self, batch: int) -> Point:
        """The priced point at ``batch``. Raises :class:`KeyError` when the plot did not price it."""
        for p in self.points:
            if p.batch == batch:
                return p
        raise KeyError(batch)


def _grid(top: int, extra: Sequence[int]) -> list[int]:
    """Batches to price: every batch up to :data:`PLOT_POINTS`, else that many log-spaced from 1 to ``top``, plus
    ``extra`` (clipped to 1 … ``top``)."""
    if top <= PLOT_POINTS:
        batches = set(range(1, top + 1))
    else:
        step = math.log(top) / (PLOT_POINTS - 1)
        batches = {min(top, max(1, round(math.exp(i * step)))) for i in range(PLOT_POINTS)}
    batches |= {min(top, max(1, b)) for b in extra}
    return sorted(batches)


def _powers(top: int) -> list[int]:
    """Powers of two up to ``top``."""
    return [2**i for i in range(max(top, 1).bit_length()) if 2**i <= top]


def roofline(header: GGUFHeader, card: Card, serving: Serving, title: str = "") -> Roofline:
    """The roofline of ``serving`` on ``card``: ridge points, the pass's coefficients, every bind change and the
    regions between them, intensities and prices on a batch grid, the best batch and the largest that fits.

    Without host memory the pass binds on memory until its largest arithmetic term (a line through 0) overtakes the
    memory term (a line above 0), and on that term after: at most one change, predicted by
    :meth:`Coefficients.predicted_change` and confirmed by pricing the batch before and the batch of the change
    (seed ``PassShape::cost_split``). Should rounding put the priced change a batch away, the priced one is kept and
    :attr:`Change.agrees` is false. With host memory the split (seed ``cost_split``) makes the memory term
    non-affine: changes are found by pricing the grid and bisecting between neighbours that bind differently. So
    are they for a mixture of experts (DESIGN.md extension, issue 15, ``routed``): the routed experts' bytes grow
    with the batch as the expected distinct experts do, concave, so arithmetic − memory is convex and negative at
    batch 0 and the bind changes at most once, where the bisection finds it.

    Raises what :func:`~passprice.serving.pass_shape` raises, and batch 1's refusal when no batch fits
    (:class:`~passprice.serving.NotResident`, :class:`~passprice.serving.OnChipOverflow`).
    """
    shape = pass_shape(header, serving)
    use = serving.memory_use  # the headroom the searches keep (walkthrough 39)
    top = shape.max_batch(card, serving.host_memory, memory_use=use)  # raises batch 1's refusal when nothing fits
    best = shape.best(card, serving.host_memory, max_tpot=serving.max_tpot, memory_use=use)
    coefficients = Coefficients.of(shape, card)
    priced: dict[int, ServingCost] = {}

    def cost(batch: int) -> ServingCost:
        if batch not in priced:
            priced[batch] = shape.cost_split(card, batch, serving.host_memory)
        return priced[batch]

    changes: list[Change] = []
    predicted = coefficients.predicted_change()
    routed = bool(shape.experts)
    if not serving.host_memory and not routed:
        if predicted is not None and 1 < predicted <= top:
            batch = predicted
            # Rounding may move the priced change a batch or two from the real crossing: walk to it.
            while batch > 1 and cost(batch - 1).binds is not ServingBind.MEMORY:
                batch -= 1
            while batch <= top and cost(batch).binds is ServingBind.MEMORY:
                batch += 1
            if 1 < batch <= top:
                changes.append(
                    Change(batch, cost(batch - 1).binds, cost(batch).binds, predicted, coefficients.crossing())
                )
        grid = _grid(top, [*_powers(top), best.batch, *(c.batch for c in changes), *(c.batch - 1 for c in changes)])
        for b in grid:
            cost(b)
    else:
        grid = list(range(1, top + 1)) if top <= PRICE_EVERY else _grid(top, [*_powers(top), best.batch])
        for before, after in itertools.pairwise(grid):
            lo, hi = before, after
            if cost(lo).binds is cost(hi).binds:
                continue
            # Bisect to the first batch after `lo` that binds otherwise (one change between the two assumed).
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if cost(mid).binds is cost(before).binds:
                    lo = mid
                else:
                    hi = mid
            changes.append(Change(hi, cost(lo).binds, cost(hi).binds))
            cost(hi - 1)
    points = tuple(point(cost(b), card) for b in sorted(priced) if b <= top)
    regions: list[Region] = []
    first = 1
    for c in changes:
        regions.append(Region(c.before, first, c.batch - 1))
        first = c.batch
    regions.append(Region(cost(top).binds if top >= 1 else best.binds, first, top))
    return Roofline(
        card=card,
        ridges=ridges(card),
        coefficients=coefficients,
        points=points,
        changes=tuple(changes),
        regions=tuple(regions),
        best=best,
        max_batch=top,
        host_memory=serving.host_memory,
        title=title,
        routed=routed,
    )


def table_batches(line: Roofline) -> list[int]:
    """The batches the table shows: powers of two up to the largest that fits, each bind change and the batch
    before it, the best batch and the largest."""
    wanted = set(_powers(line.max_batch))
    wanted |= {line.best.batch, line.max_batch}
    for c in line.changes:
        wanted |= {c.batch - 1, c.batch}
    priced = {p.batch for p in line.points}
    return sorted(b for b in wanted if b in priced)


def ridges_json(items: Sequence[Ridge]) -> list[dict[str, Any]]:
    """Ridge points for ``--json``: datapath, rate (per second), work unit, bandwidth (B/s), share, ridge (work per
    byte)."""
    return [
        {
            "datapath": r.datapath,
            "rate": r.rate,
            "work": r.work,
            "bandwidth": r.bandwidth,
            "share": r.share,
            "share_path": "streams.read",
            "ridge": r.ridge,
        }
        for r in items
    ]


def roofline_json(line: Roofline) -> dict[str, Any]:
    """The ``--json`` object of ``passprice roofline CARD SERVING``: ridges, coefficients (seconds), every priced
    point the plot is drawn from (intensities in work per read-equivalent byte), the bind changes (priced and
    predicted), the regions, the best batch and the largest that fits."""
    out = {
        "card": line.card.name,
        "title": line.title,
        "ridges": ridges_json(line.ridges),
        "coefficients": attrs.asdict(line.coefficients),
        "crossing": line.coefficients.crossing() if not line.routed else None,
        "host_memory": line.host_memory,
        "changes": [
            {
                "batch": c.batch,
                "before": c.before.value,
                "after": c.after.value,
                "predicted": c.predicted,
                "crossing": c.crossing,
                "agrees": c.agrees if c.predicted is not None else None,
            }
            for c in line.changes
        ],
        "regions": [{"binds": r.binds.value, "first": r.first, "last": r.last} for r in line.regions],
        "best": {"batch": line.best.batch, "tokens_per_s": line.best.tokens_per_s, "binds": line.best.binds.value},
        "max_batch": line.max_batch,
        "points": [
            {
                "batch": p.batch,
                "host_sequences": p.host_sequences,
                "bytes_moved": p.bytes_moved,
                "read_equivalent_bytes": p.read_equivalent,
                "array_macs_per_byte": p.array,
                "vector_macs_per_byte": p.vector,
                "scale_cycles_per_byte": p.scale,
                "array_macs_per_byte_moved": p.array_moved,
                "vector_macs_per_byte_moved": p.vector_moved,
                "pass_s": p.pass_s,
                "tokens_per_s": p.tokens_per_s,
                "binds": p.binds.value,
            }
            for p in line.points
        ],
    }
    if line.routed:
        # A mixture of experts: the coefficients leave out the routed experts, whose bytes grow with the batch.
        out["routed"] = True
    return out


def ridges_text(card: Card) -> str:
    """A card's ridge points for people, with the share used and why."""
    from passprice.tables import si, text_table, titled

    items = ridges(card)
    first = items[0]
    rows = [[r.datapath, si(r.rate, f"{r.work}/s"), f"{r.ridge:,.4g} {r.work}/B"] for r in items]
    return "\n".join(
        [
            f"{titled(card.name, card.title)}: memory {si(first.bandwidth, 'B/s')} × streams.read {first.share:g} = "
            f"{si(first.bandwidth * first.share, 'B/s')} on one long read",
            "",
            "ridge points: work per byte of memory traffic at which a datapath takes as long as the memory,",
            "rate / (memory.bandwidth × streams.read)",
            text_table(["datapath", "rate", "ridge"], rows, right=(1, 2)),
            "  streams.read, because the bytes a batch's arithmetic amortizes are the weights, streamed once a pass",
            "  as one long read; each sequence's own cache and state bytes (streams.append, streams.rewrite) grow",
            "  with the batch as its arithmetic does, so they lower a pass's intensity, never the ridge.",
        ]
    )


def routing_caption(header: GGUFHeader, serving: Serving) -> str | None:
    """The title line naming the routing record a mixture of experts' expert reads rest on, as ``price`` says it
    (:func:`passprice.routing.description`): ``routed experts: a hot set of 58 of 128 experts (45.31 %) takes 90 % of
    the routed token-slots, measured (qwen3-30b-a3b-measured)``; ``None`` for a dense checkpoint or a serving with
    no record. The title is the plot's and the text's (walkthrough 36: ``roofline --plot`` of a MoE named no record,
    so a reader could not tell which routing its curve assumed; left31). Raises nothing."""
    from passprice.routing import description

    experts = header.meta_int("expert_count") or 0
    routing = serving.routing
    if experts <= 0 or routing is None:
        return None
    return f"routed experts: {description(routing.name, routing.hot_experts, routing.hot_share, experts)}"


def roofline_text(line: Roofline) -> str:
    """``passprice roofline CARD SERVING`` for people: the ridges, the pass's coefficients and where the bind
    changes (predicted and priced), the intensity by batch, the regions, the best batch and the largest."""
    from passprice.tables import si, text_table

    co = line.coefficients
    per, compute = co.compute()
    lines = [ridges_text(line.card), "", "\n".join(escaped(t) for t in line.title.split("\n")), ""]
    lines.append(
        f"  the pass as lines in the batch b (seconds): memory {si(co.memory_shared_s, 's')} + "
        f"{si(co.memory_per_sequence_s, 's')} × b;"
    )
    lines.append(
        f"  array {si(co.array_s, 's')} × b; vector {si(co.vector_s, 's')} × b; scale {si(co.scale_s, 's')} × b"
    )
    cross = co.crossing()
    if line.routed:
        lines.append(
            "  a mixture of experts: the memory term adds the routed experts a pass reads, which grow with b as the "
            "expected distinct experts do (not a line); changes found by pricing"
        )
    elif cross is None:
        lines.append(
            f"  {compute.value} ({si(per, 's')} a sequence) never overtakes memory ({si(co.memory_per_sequence_s, 's')}"
            " a sequence beside the weights): memory binds at every batch"
        )
    else:
        first = co.predicted_change() or 0
        past = "" if first <= line.max_batch else f", past the largest that fits ({line.max_batch:,})"
        lines.append(
            f"  {compute.value} reaches memory at b = {si(co.memory_shared_s, 's')} / ({si(per, 's')} − "
            f"{si(co.memory_per_sequence_s, 's')}) = {cross:,.2f}, so it binds from batch {first:,}" + past
        )
    if line.host_memory:
        lines.append("  host memory allowed: the split makes the memory term non-affine; changes found by pricing")
    for c in line.changes:
        check = ""
        if c.predicted is not None:
            check = " = the coefficients' batch" if c.agrees else f" (the coefficients said {c.predicted:,})"
        lines.append(
            f"  priced: batch {c.batch - 1:,} binds on {c.before.value}, batch {c.batch:,} on {c.after.value}{check}"
        )
    lines.append("")
    rows = []
    for b in table_batches(line):
        p = line.at(b)
        marks = [m for m, hit in (("best", b == line.best.batch), ("max", b == line.max_batch)) if hit]
        rows.append(
            [
                f"{b:,}",
                si(p.bytes_moved, "B"),
                si(p.read_equivalent, "B"),
                f"{p.array:,.4g}",
                f"{p.vector:,.4g}",
                f"{p.scale:,.4g}",
                si(p.pass_s, "s"),
                f"{p.tokens_per_s:,.1f}",
                p.binds.value,
                ", ".join(marks),
            ]
        )
    lines.append(
        "arithmetic intensity by batch: work per read-equivalent byte (memory_s × bandwidth × streams.read); a datapath"
    )
    lines.append("binds when its intensity reaches its ridge")
    lines.append(
        text_table(
            [
                # the intensities divide by the read-equivalent bytes, not the bytes moved: both shown, so the
                # division works by hand (tests/test_fix171.py)
                "batch", "bytes moved", "read-eq bytes", "array MAC/B", "vector MAC/B", "scale cyc/B", "pass",
                "tokens/s", "binds", "best / largest",
            ],
            rows,
            right=(0, 1, 2, 3, 4, 5, 6, 7),
        )
    )
    lines.append("")
    regions = "; ".join(f"{r.binds.value} {r.first:,}–{r.last:,}" for r in line.regions)
    lines.append(f"  regions: {regions}")
    lines.append(
        f"  best batch {line.best.batch:,} ({line.best.tokens_per_s:,.1f} tokens/s, binds on {line.best.binds.value});"
        f" largest batch that fits {line.max_batch:,}"
    )
    return "\n".join(lines)


# --- drawing -------------------------------------------------------------------------------------------------------

#: Region colours by bind (colour-blind-safe Okabe–Ito hues).
COLOURS = {
    ServingBind.MEMORY: "#56B4E9",
    ServingBind.HOST: "#CC79A7",
    ServingBind.ARRAY: "#E69F00",
    ServingBind.VECTOR: "#009E73",
    ServingBind.SCALE: "#F0E442",
}


def _writable_folder(path: str) -> bool:
    try:
        make_folders(path)
    except OSError:
        return False
    return os.path.isdir(path) and os.access(path, os.W_OK)


def _matplotlib_folder() -> None:
    """Point ``MPLCONFIGDIR`` at a temporary folder (removed at exit) when it is unset and matplotlib's default
    config or cache folder (``$XDG_CONFIG_HOME/matplotlib``, ``$XDG_CACHE_HOME/matplotlib``, under ``~/.config``
    and ``~/.cache`` by default) cannot be written — a read-only or missing HOME in CI — so matplotlib does not
    print its several-line warning on stderr (passprice's stderr holds one line a problem), or is a relative path,
    which matplotlib would create under the folder the command runs in."""
    if os.environ.get("MPLCONFIGDIR"):
        return
    home = os.path.expanduser("~")
    folders = (
        os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "matplotlib"),
        os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "matplotlib"),
    )
    # A relative base (``XDG_CACHE_HOME=cache``, ``HOME=.``) is a folder under the one the command runs in, which
    # matplotlib would create and fill (``./cache/matplotlib/fontlist-v3.11.0.json`` in a registry: attack round 42);
    # the XDG Base Directory specification ignores it, as :func:`passprice.cachefolder.folder` does.
    if all(os.path.isabs(f) and _writable_folder(f) for f in folders):
        return
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="passprice-matplotlib-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = folder


def check_matplotlib() -> None:
    """Refuse ``--plot`` before any work when matplotlib is not installed, without importing it: its import is about
    0.5 s of CPU, paid by :func:`require_matplotlib` when the picture is drawn, never by a run refused before it
    draws (a simulate past ``--max-work``, a sweep's grid). Raises :class:`InputError` saying how to install it
    (:data:`PLOT_INSTALL`) when no ``matplotlib`` can be found (``importlib.util.find_spec``)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # a parent that is no package, a module set to None
        found = False
    if not found:
        raise InputError(f"--plot needs matplotlib, an optional extra: {PLOT_INSTALL}")


def require_matplotlib() -> Any:
    """The ``matplotlib.pyplot`` module with the file-only Agg backend, its config folder writable
    (:func:`_matplotlib_folder`). Raises :class:`InputError` saying how to install it (:data:`PLOT_INSTALL`) when
    matplotlib is missing; raises the :class:`ImportError` of a library that could not be mapped for want of memory
    (``ulimit -v``: "failed to map segment from shared object"), which the command line says is out of memory:
    ``roofline --plot`` under ``ulimit -v 120000`` said matplotlib was not installed (attack round 42)."""
    _matplotlib_folder()
    try:
        import matplotlib
    except ImportError as e:
        if any(sign in str(e) for sign in ("failed to map segment", "Cannot allocate memory")):
            raise
        raise InputError(f"--plot needs matplotlib, an optional extra: {PLOT_INSTALL}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def literal_texts(fig: Any) -> None:
    """Draw every title, legend entry and annotation of ``fig`` as written, not as mathtext: a registry name holding
    ``$`` (a serving ``c$\\frac{1}{0}$``) was drawn as a formula, and one mathtext cannot parse (``d$\\nosuch$``)
    raised from matplotlib (a traceback, exit 0, no picture). Tick labels keep theirs (a log axis's 2^n). Call it
    before the figure is laid out or saved."""
    for ax in fig.axes:
        texts = [ax.title, *ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            texts += legend.get_texts()
        for text in texts:
            text.set_parse_math(False)


#: The least ratio of the top to the bottom of a log axis's figures :func:`log_span` leaves to matplotlib: figures
#: closer are one figure as passprice prints it (to 6 significant digits).
FLAT_SPAN = 1.0 + 1e-6


def log_span(ax: Any, values: Sequence[float]) -> None:
    """Give the log y axis of ``ax`` a decade about the geometric middle of ``values`` (their positive finite ones;
    none: the axis is left alone) when they span less than :data:`FLAT_SPAN`, as matplotlib scales a line of one
    figure. A line of figures an ulp apart, which it does not (a card at the schema's most bandwidth, 1e18 TB/s, so
    every batch binds on the vector datapath: 60,564.201785370475 and …48 tokens/s), was scaled to a span of 1e-16
    of the figure: the roofline's top panel drew nothing, and matplotlib's ``RuntimeWarning`` lines (divide by zero,
    with its files and lines) reached stderr, exit 0 (tests/test_attack163.py)."""
    shown = [v for v in values if math.isfinite(v) and v > 0]
    if not shown or max(shown) >= min(shown) * FLAT_SPAN:
        return
    middle = math.sqrt(min(shown)) * math.sqrt(max(shown))
    ax.set_ylim(middle / math.sqrt(10.0), middle * math.sqrt(10.0))


#: The characters a line of the roofline picture's title holds at its 8-inch width and 10-point type before it is
#: wrapped (a 92-character line fills about nine tenths of it).
TITLE_CHARS = 96


def render(line: Roofline, fmt: str) -> bytes:
    """The roofline's picture as ``png`` or ``svg`` bytes: tokens/s (top) and pass time (bottom) against the batch,
    on log axes, each bind's region shaded, the best batch and the largest that fits marked.

    Raises :class:`InputError` when matplotlib is missing or ``fmt`` is neither."""
    if fmt not in ("png", "svg"):
        raise InputError(f"--plot: {fmt!r} is not a picture format passprice writes (png, svg)")
    plt = require_matplotlib()
    batches = [p.batch for p in line.points]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8.0, 6.4), dpi=100)
    try:
        top.plot(batches, [p.tokens_per_s for p in line.points], color="black", linewidth=1.6)
        bottom.plot(batches, [p.pass_s * 1e3 for p in line.points], color="black", linewidth=1.6)
        shown: set[ServingBind] = set()
        end = batches[-1]
        for r in line.regions:
            # Shade from half a batch before the region's first batch to half a batch after its last, never past the
            # last batch drawn (the shading ran on past the line's end to the frame: tests/test_fix171.py).
            left, right = max(r.first - 0.5, 0.5), min(r.last + 0.5, end)
            for ax in (top, bottom):
                ax.axvspan(
                    left,
                    right,
                    color=COLOURS[r.binds],
                    alpha=0.25,
                    linewidth=0,
                    label=f"binds on {r.binds.value}" if ax is top and r.binds not in shown else None,
                )
            shown.add(r.binds)
        best, most = line.best, line.max_batch
        for ax in (top, bottom):
            ax.axvline(
                best.batch,
                color="#D55E00",
                linestyle="--",
                linewidth=1.2,
                label=f"best batch {best.batch:,} ({best.tokens_per_s:,.0f} tokens/s)" if ax is top else None,
            )
            ax.axvline(
                most,
                color="#0072B2",
                linestyle=":",
                linewidth=1.4,
                label=f"largest batch that fits {most:,}" if ax is top else None,
            )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.3)
        log_span(top, [p.tokens_per_s for p in line.points])
        log_span(bottom, [p.pass_s * 1e3 for p in line.points])
        top.plot([best.batch], [best.tokens_per_s], marker="o", color="#D55E00")
        top.set_ylabel("throughput (tokens/s)")
        bottom.set_ylabel("pass time (ms)")
        bottom.set_xlabel("batch (sequences per pass)")
        # A margin past the largest batch, so its marker is not drawn on the frame.
        top.set_xlim(0.7, max(line.max_batch * 1.25, line.max_batch + 1.0))
        last = line.points[-1]
        top.plot([last.batch], [last.tokens_per_s], marker="s", color="#0072B2")
        # the pass time at the largest batch marked too: a line of one batch draws no segment, so with a largest batch
        # of 1 the pass-time panel showed no point (tests/test_fix171.py)
        bottom.plot([last.batch], [last.pass_s * 1e3], marker="s", color="#0072B2")
        top.legend(loc="best", fontsize=8)
        # Each title line wrapped to the picture's width: a MoE's routing line (routing_caption) ran past both
        # edges, the record's name cut off (left31).
        title = line.title or f"decode roofline on {line.card.name}"
        top.set_title("\n".join(textwrap.fill(part, TITLE_CHARS) for part in title.split("\n")), fontsize=10)
        literal_texts(fig)
        fig.tight_layout()
        buffer = io.BytesIO()
        # A fixed salt for the SVG's element ids (random by default), so the same roofline writes the same bytes.
        with plt.rc_context({"svg.hashsalt": "passprice"}):
            fig.savefig(buffer, format=fmt, metadata=_metadata(fmt))
    finally:
        plt.close(fig)
    return buffer.getvalue()


def _metadata(fmt: str) -> dict[str, Any]:
    """Picture metadata without a creation date, so the same roofline writes the same bytes."""
    if fmt == "svg":
        return {"Date": None}
    return {"Software": "passprice (matplotlib)"}


def draw(line: Roofline, path: Path, force: bool = False) -> None:
    """Write the roofline's picture to ``path`` (``.png`` or ``.svg``, by its suffix) atomically: rendered whole,
    written to a temporary file in the same folder, then renamed, so a reader never sees half a picture and a
    failure leaves nothing behind. Without ``force`` an existing file is not replaced.

    Raises :class:`InputError` for another suffix, an existing file without ``force``, a folder that cannot be
    written, or missing matplotlib (before anything is written)."""
    fmt = written_suffix(path, "--plot").lstrip(".")  # a link's target's suffix
    if fmt not in ("png", "svg"):
        raise InputError(f"--plot {path}: the file must end in .png or .svg")
    check_writable(path, force)  # before the picture is rendered
    write_atomically(path, render(line, fmt), force)


def stack_lines(header: GGUFHeader, card: Card, serving: Serving, stack: Any) -> dict[str, Any]:
    """The roofline under a serving stack (issue 14): the pass's coefficients at the stack's rates, the batch at
    which its arithmetic overtakes its memory there (``None``: never), its fixed seconds a pass, and its best batch
    beside the limit's (:func:`passprice.stacks.price_expected`). Raises what the pricers raise, and
    :class:`~passprice.stacks.StackLacks`."""
    from passprice.stacks import expected_pricing, price_expected

    shape = pass_shape(header, serving)
    pricing, _ = expected_pricing(stack, card, shape, serving.host_memory)
    co = Coefficients.of(shape, card, pricing)
    per, binds = co.compute()
    best = price_expected(header, card, serving, stack, "best")
    return {
        "stack": stack.name,
        "fixed_s": pricing.fixed_s,
        "serial": pricing.serial,
        "memory_shared_s": co.memory_shared_s,
        "memory_per_sequence_s": co.memory_per_sequence_s,
        "compute_per_sequence_s": per,
        "compute": binds.value,
        "crossing": co.crossing(),
        "best": {
            "batch": best.expected.batch,
            "tokens_per_s": best.expected.tokens_per_s,
            "binds": best.expected.binds.value,
        },
        "limit_best": {"batch": best.limit.batch, "tokens_per_s": best.limit.tokens_per_s},
        "ratio": best.ratio,
    }


def stack_lines_text(data: dict[str, Any]) -> str:
    """:func:`stack_lines` for people."""
    from passprice.tables import si

    cross = data["crossing"]
    where = (
        f"{data['compute']} ({si(data['compute_per_sequence_s'], 's')} a sequence) reaches memory at b = {cross:,.2f}"
        if cross is not None
        else f"{data['compute']} never overtakes memory"
    )
    best, limit = data["best"], data["limit_best"]
    return "\n".join(
        [
            "",
            f"under stack {data['stack']}: every pass pays {si(data['fixed_s'], 's')} fixed, terms.serial "
            f"{data['serial']:g}; memory {si(data['memory_shared_s'], 's')} + b × "
            f"{si(data['memory_per_sequence_s'], 's')}; {where}",
            f"  expected best batch {best['batch']:,} ({best['tokens_per_s']:,.1f} tokens/s, binds on "
            f"{best['binds']}): {data['ratio']:.4g} × the limit's best ({limit['batch']:,}, "
            f"{limit['tokens_per_s']:,.1f} tokens/s)",
        ]
    )
