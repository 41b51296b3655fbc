"""The best batch and the largest batch follow from a pass's coefficients, not from pricing every batch: the answer
is the seed's, found in a number of prices that hardly depends on how many sequences the card could hold.

Every term of a pass is affine in the batch and in its host split (seed ``PassShape``), so tokens/s as a function of
the batch is bounded above, over any range of batches, by a formula of the coefficients (:meth:`_Curve.bound`). The
seed's scan (``PassShape::best``) keeps a batch only when it beats the best so far by more than a relative 1e-12; its
answer is therefore the first batch *b* whose tokens/s is within 1e-12 of the maximum and that beats every smaller
batch by more than 1e-12. :func:`best` finds that batch by branch and bound over ranges of batches, pricing exactly
(with the seed's own host-split search) only batches the bound cannot rule out, and proves the two conditions; when it
cannot (tokens/s values within 1e-12 of each other on both sides), it falls back to the seed's scan, so the answer is
always the scan's. :func:`max_batch` finds the last batch that fits from the capacities and checks it and the next.

The seed's scanning algorithms stay in :class:`~passprice.serving.PassShape` (``best_by_scan``,
``max_batch_by_scan``) as the reference the tests compare against.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from passprice.cost import Lines, Pricing, pass_terms
from passprice.serving import U32_MAX, NotResident, OnChipOverflow, ServingCost, ServingRefusal
from passprice.tables import count, si

if TYPE_CHECKING:
    from passprice.cards import Card
    from passprice.serving import Basis, PassShape

#: The seed's tie tolerance: a larger batch replaces the best only when faster by more than this, relatively.
TIE = 1e-12

#: A relative margin on the upper bound for floating-point rounding in the priced terms (each is a handful of
#: products and sums, so its relative error is a few 1e-16).
ROUNDING = 1e-13

#: Ranges this narrow get a bound for each batch instead of one for the range (a range's bound is one formula, so
#: bisecting further is cheap; plain Python, not NumPy, whose import alone costs more than a whole search).
CHUNK = 16

#: Exact prices after which the search gives up and the seed's scan answers (a guard against pathological inputs;
#: the registered servings need a few dozen).
BUDGET = 5_000


#: The most batches the seed's scan may price as the fallback (about a second): past it, a curve the bounds cannot
#: settle is refused as :class:`FlatCurve` rather than scanned (a serving whose sequences hold no memory could
#: otherwise have the scan walk 10^9 batches).
SCAN_LIMIT = 50_000


def use_of(card: Card, pricing: Pricing | None, memory_use: float | None) -> Pricing | None:
    """``pricing`` (default: the card's limit, :meth:`Pricing.limit`) with its ``capacity`` (bytes of card memory
    the serving may fill) times ``memory_use`` (a fraction, 0 < f ≤ 1: :attr:`passprice.serving.Serving.memory_use`),
    what the best- and largest-batch searches fit batches to: ``--memory-use 0.9`` on a 141 GB card searches batches
    holding at most 126.9 GB (walkthrough 39: the searches filled 99.9 %). ``pricing`` itself when ``memory_use`` is
    ``None``. Raises nothing (the serving's validator holds the fraction in range)."""
    if memory_use is None:
        return pricing
    import attrs

    base = pricing if pricing is not None else Pricing.limit(card)
    return attrs.evolve(base, capacity=base.capacity * memory_use)


class _Undecided(Exception):
    """The bounds could not prove the answer (near-ties on both sides, or the budget): use the scan."""


class FlatCurve(ServingRefusal):
    """Tokens/s so flat over so many batches that which one is best is a matter of rounding: the bounds cannot prove
    the seed's answer and its scan would price more than :data:`SCAN_LIMIT` batches (a serving whose sequences
    hold no memory, so only the on-chip rows or u32 bound the batch)."""

    name = "FlatCurve"

    def __init__(self, top: int, tokens_per_s: float) -> None:
        self.top = top
        self.tokens_per_s = tokens_per_s
        super().__init__(
            f"tokens/s levels off (toward {count(tokens_per_s)}) within a relative 1e-12 over so many of the batches "
            f"up to {top:,} that which is best is a matter of rounding, and the seed's scan would price more than "
            f"{SCAN_LIMIT:,} of them: price a batch (--batch N), or give the sequences memory that bounds the batch"
        )

    def fields(self) -> dict[str, Any]:
        return {"top": self.top, "tokens_per_s": self.tokens_per_s}


class OverTPOT(ServingRefusal):
    """The serving's TPOT cap (``max_tpot``, seconds) is below the TPOT of the smallest batch searched: no batch
    meets it, so there is no best batch within it (a service-level cap, not the seed's)."""

    name = "OverTPOT"

    def __init__(self, batch: int, tpot_s: float, max_tpot_s: float, stack: str | None = None,
                 given: bool = False) -> None:
        """``given``: the cap came from the command line (``--max-tpot``), not the serving's ``max_tpot``: said so
        (``best … --max-tpot 0.0005`` read "the serving's TPOT cap … (max_tpot)", tests/test_fix184.py)."""
        self.batch = batch
        self.tpot_s = tpot_s
        self.max_tpot_s = max_tpot_s
        self.stack = stack
        # Under a stack the TPOT is the expected one (its overheads added): the limit may meet the cap where the
        # expected price does not, and the refusal said only 'batch 1 already takes 18.52 ms' (the limit's 15.68 ms)
        takes = (f"under stack {stack}, batch {batch:,} is expected to take" if stack is not None
                 else f"batch {batch:,} already takes")
        super().__init__(
            f"{takes} {si(tpot_s, 's')} per output token, over "
            + (f"the TPOT cap of {si(max_tpot_s, 's')} (--max-tpot)" if given else
               f"the serving's TPOT cap of {si(max_tpot_s, 's')} (max_tpot)")
            + ": no batch meets it; raise the cap (--max-tpot SECONDS), or price a "
            "smaller model, a shorter context or a faster card" + (" (or the limit, without --stack)" if stack else "")
        )

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"batch": self.batch, "tpot_s": self.tpot_s, "max_tpot_s": self.max_tpot_s}
        if self.stack is not None:
            out["stack"] = self.stack
        return out


def _tpot(cost: ServingCost) -> float:
    """Seconds per output token a sequence sees: the pass over the tokens each sequence emits a pass."""
    return cost.pass_s / cost.emitted_per_sequence


class _Curve:
    """Tokens/s of a :class:`PassShape` on a card as a function of the batch: exact values (priced with the seed's
    ``cost_split``, cached) and upper bounds, for one batch or a range of batches, from the pass's coefficients."""

    def __init__(self, shape: PassShape, card: Card, host_memory: bool, pricing: Pricing | None = None) -> None:
        self.shape = shape
        self.card = card
        self.host_memory = host_memory
        self.priced: dict[int, ServingCost] = {}
        # The one cost formula (passprice.cost) as lines in the batch: seconds of card memory shared (weights),
        # per sequence of the batch (embedding rows), per card-held sequence (its own bytes); of host link per
        # host-held sequence (the slower direction); of arithmetic per sequence (the largest of array, vector and
        # scale lanes).
        self.split = host_memory and card.host is not None
        # The pricing and the facts every pass rests on, gathered once for the whole search.
        # A serving stack's pricing (issue 14) only lengthens a pass (fixed costs, serial terms), so the bounds at
        # its rates still hold.
        self.basis: Basis = shape.basis(card, pricing)
        self.pricing = self.basis.pricing
        lines = Lines.of(self.pricing, shape, host=self.split)
        self.weights_s = lines.shared_s
        self.embed_s = lines.embed_s
        self.sequence_s = lines.sequence_s
        self.host_s = lines.host_s
        self.compute_s = max(lines.array_s, lines.vector_s, lines.scale_s)
        self.card_room = shape.card_room(card, self.pricing)
        self.host_room = shape.host_room(card) if self.split else 0
        self.emitted = shape.emitted_per_sequence

    def cost(self, batch: int) -> ServingCost:
        """The seed's pass of ``batch`` sequences (its host split search included), priced once."""
        found = self.priced.get(batch)
        if found is None:
            if len(self.priced) >= BUDGET:
                raise _Undecided
            found = self.shape.cost_split(self.card, batch, self.host_memory, self.basis)
            self.priced[batch] = found
        return found

    def tps(self, batch: int) -> float:
        """Tokens/s of the seed's pass of ``batch`` sequences."""
        return self.cost(batch).tokens_per_s

    def memory_floor(self, batch: int) -> float:
        """The least of max(card-memory seconds, host-link seconds) over every whole number of card-held sequences
        the seed's split search may choose for a pass of ``batch`` (its ternary search finds that least, and the
        pass is never faster): at the floor or ceiling of the real crossing of the two, within the rooms.
        Non-decreasing in the batch.

        A mixture of experts (DESIGN.md extension, issue 15) adds the seconds of the routed experts a pass of the
        batch streams (:meth:`~passprice.serving.PassShape.expert_bytes`, through the one cost formula): they grow
        with the batch, never shrink, so the floor stays non-decreasing and the bounds stay sound."""
        b = float(batch)
        base = self.weights_s + self.embed_s * b
        if self.shape.experts:
            base = base + self.experts_s(b)
        if not self.split:
            return base + self.sequence_s * b
        lo = max(b - self.host_room, 0.0)
        hi = min(b, float(self.card_room))
        rate = self.sequence_s + self.host_s
        cross = (self.host_s * b - base) / rate if rate > 0 else hi
        out = math.inf
        for whole in (math.floor(cross), math.ceil(cross)):
            held = min(max(float(whole), lo), hi)
            out = min(out, max(base + self.sequence_s * held, self.host_s * (b - held)))
        return out

    def experts_s(self, batch: float) -> float:
        """Seconds of card memory the routed experts of a pass of ``batch`` sequences take (0 for a dense shape)."""
        terms = pass_terms(
            self.pricing,
            batch=0.0,
            card_sequences=0.0,
            host_sequences=0.0,
            shared_bytes=self.shape.expert_bytes(batch),
            read_bytes=0.0,
            write_bytes=0.0,
            rewrite_bytes=0.0,
            array_macs=0.0,
            vector_macs=0.0,
            scale_cycles=0.0,
        )
        out: float = terms.memory_s
        return out

    def memory_per_sequence(self, lo: int, hi: int) -> float:
        """A lower bound on the memory floor per sequence, floor(b) / b, over batches ``lo``…``hi``: with x the
        share of a batch held on the card, floor(b) / b = max(shared(b) / b + embed + sequence × x, host × (1 − x)),
        least over the shares the rooms allow; shared(b) / b (the weights, and a mixture of experts' routed experts,
        which never shrink with the batch) is at least shared(``lo``) / ``hi``, and the shares the rooms allow at any
        b ≥ ``lo`` lie within those they allow at ``lo``, so the least over those (where the two lines cross,
        clipped) bounds every batch of the range. Exact at ``hi`` for a dense pass with nothing in host memory."""
        shared = self.weights_s + (self.experts_s(float(lo)) if self.shape.experts else 0.0)
        fixed = shared / hi + self.embed_s
        if not self.split:
            return fixed + self.sequence_s
        least = max(0.0, 1.0 - self.host_room / lo)
        most = min(1.0, self.card_room / lo)
        if least > most:
            return 0.0
        rate = self.sequence_s + self.host_s
        share = (self.host_s - fixed) / rate if rate > 0 else most
        share = min(max(share, least), most)
        return max(fixed + self.sequence_s * share, self.host_s * (1.0 - share))

    def bound(self, lo: int, hi: int) -> float:
        """An upper bound on tokens/s over batches ``lo``…``hi``: a pass of *b* sequences takes at least
        max(b × arithmetic seconds per sequence, its memory floor), and its memory floor per sequence is at least
        the floor at ``lo`` over ``hi`` and at least :meth:`memory_per_sequence`."""
        memory = max(self.memory_floor(lo) / hi, self.memory_per_sequence(lo, hi))
        per_sequence = max(self.compute_s, memory)
        return math.inf if per_sequence <= 0 else (1.0 + ROUNDING) * self.emitted / per_sequence


def _first(curve: _Curve, lo: int, hi: int, keep: Callable[[float], bool], floor: float) -> int | None:
    """The smallest batch in ``lo``…``hi`` whose tokens/s satisfies ``keep``, pricing only batches whose bound is
    at least ``floor`` (every value ``keep`` accepts is at least ``floor``)."""
    stack = [(lo, hi)]
    while stack:
        a, z = stack.pop()
        if a > z or curve.bound(a, z) < floor:
            continue
        if z - a < CHUNK:
            for b in range(a, z + 1):
                if curve.bound(b, b) >= floor and keep(curve.tps(b)):
                    return b
            continue
        mid = (a + z) // 2
        stack.append((mid + 1, z))
        stack.append((a, mid))
    return None


def _last_fitting(
    shape: PassShape, card: Card, host_memory: bool, upper: int, basis: Basis | None = None
) -> int:
    """The largest batch in 1…``upper`` the seed's scan reaches before its first capacity refusal (0 when batch 1
    is refused for capacity). Batches that fit form a prefix, so the capacities' own limit is checked, then its
    neighbour; a binary search settles any disagreement from rounding. ``basis``: the shape's on ``card``, when
    the caller has it."""
    if basis is None:
        basis = shape.basis(card)

    def fits(batch: int) -> bool:
        try:
            shape.cost_split(card, batch, host_memory, basis)
        except (NotResident, OnChipOverflow):
            return False
        return True

    if upper < 1 or not fits(1):
        return 0
    limit = upper
    if shape.on_chip_per_sequence > 0:
        limit = min(limit, max(int(basis.pricing.on_chip // shape.on_chip_per_sequence), 1))
    if fits(limit) and (limit == upper or not fits(limit + 1)):
        return limit
    good, bad = 1, upper + 1
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good


def max_batch(
    shape: PassShape, card: Card, host_memory: bool, pricing: Pricing | None = None, memory_use: float | None = None
) -> int:
    """The most sequences the serving carries on ``card`` (seed ``max_batch``, without its scan): the last batch up
    to card room (+ host room) + 1 before the first capacity refusal; at ``pricing``'s capacities (a serving
    stack's, less the memory its runtime reserves; default the card's), card memory times ``memory_use`` when given
    (:func:`use_of`). Raises batch 1's refusal when nothing fits, and any other refusal batch 1 raises."""
    # The seed's loop runs to `most.saturating_add(1)`: u32 arithmetic stops at u32::MAX.
    whole = (pricing if pricing is not None else Pricing.limit(card)).capacity
    pricing = use_of(card, pricing, memory_use)
    basis = shape.basis(card, pricing)
    n = _last_fitting(
        shape, card, host_memory, min(shape.most(card, host_memory, basis.pricing) + 1, U32_MAX), basis
    )
    if n == 0:
        try:
            shape.cost_split(card, 1, host_memory, basis)
        except NotResident as e:
            if memory_use is None or e.memory != "card":
                raise
            raise e.under_use(memory_use, whole) from None
    return n


def best(
    shape: PassShape,
    card: Card,
    host_memory: bool,
    pricing: Pricing | None = None,
    batches: tuple[int, int] | None = None,
    max_tpot: float | None = None,
    memory_use: float | None = None,
) -> ServingCost:
    """The batch that makes ``card`` emit the most tokens per second, and its pass, identical to the seed's scan
    (``PassShape::best``: ties within a relative 1e-12 go to the smaller batch), found by branch and bound.
    ``pricing``: the rates and capacities (default: the card's limit; a serving stack's expected pricing gives the
    stack's best batch). ``batches``: (lo, hi), search only those batches (a serving stack's facts hold on the
    batches its runs covered, issue 14), as the seed's scan would from ``lo`` to the last that fits up to ``hi``;
    ``None``: every batch from 1, the seed's. ``max_tpot``: only batches whose TPOT (``pass_s`` over the tokens a
    sequence emits a pass, seconds) is at most it (a service-level cap): the pass grows with the batch (every term
    is a sum of nonnegative per-sequence parts), so they are a prefix of the batches, found by bisection, and the
    search runs on that prefix (the seed's scan, :meth:`PassShape.best_by_scan`, stopped at the first slower batch).

    Raises :class:`OverTPOT` when the first batch searched is already slower than ``max_tpot``; what batch 1 raises
    when no batch fits (or batch 1's other refusals), and :class:`FlatCurve` when the bounds cannot settle the
    answer and the seed's scan would price more than :data:`SCAN_LIMIT` batches: the time is bounded for every input
    (at most :data:`BUDGET` exact prices, or a scan of at most :data:`SCAN_LIMIT`).

    ``memory_use``: only batches holding at most that fraction of the card memory ``pricing`` lets the serving fill
    (:func:`use_of`; walkthrough 39); the pass returned states the whole of it as its ``capacity_bytes``, so its
    held share reads against the card (89.9 %, not 99.9 % of the fraction)."""
    if memory_use is not None:
        import attrs

        whole = (pricing if pricing is not None else Pricing.limit(card)).capacity
        try:
            found = best(shape, card, host_memory, use_of(card, pricing, memory_use), batches, max_tpot)
        except NotResident as e:
            if e.memory != "card":
                raise
            raise e.under_use(memory_use, whole) from None
        return attrs.evolve(found, capacity_bytes=whole)
    lo, hi = batches if batches is not None else (1, U32_MAX)
    curve = _Curve(shape, card, host_memory, pricing)
    first = curve.cost(lo)
    upper = min(max(shape.most(card, host_memory, curve.pricing), 1), hi)
    top = _last_fitting(shape, card, host_memory, upper, curve.basis) if upper >= lo else lo
    if max_tpot is not None:
        if _tpot(first) > max_tpot:
            raise OverTPOT(lo, _tpot(first), max_tpot)
        if top > lo:
            top = _last_within(curve, lo, top, max_tpot)
    if top <= lo:
        return first
    try:
        return curve.cost(_best_batch(curve, top, lo))
    except _Undecided:
        if top - lo + 1 > SCAN_LIMIT:
            raise FlatCurve(top, max(c.tokens_per_s for c in curve.priced.values())) from None
        return shape.best_by_scan(card, host_memory, pricing, (lo, top))


def _last_within(curve: _Curve, lo: int, top: int, max_tpot: float) -> int:
    """The largest batch in ``lo``…``top`` (every one fitting) whose TPOT is at most ``max_tpot`` seconds, ``lo``'s
    known to be: bisection, as the TPOT does not fall as the batch grows."""
    if _tpot(curve.cost(top)) <= max_tpot:
        return top
    good, bad = lo, top
    while bad - good > 1:
        mid = (good + bad) // 2
        if _tpot(curve.cost(mid)) <= max_tpot:
            good = mid
        else:
            bad = mid
    return good


def _maximum(curve: _Curve, top: int, high: float, bottom: int = 1) -> float:
    """Tokens/s within the tie tolerance of the largest of any batch in ``bottom``…``top`` (``high``: one already
    priced):
    best-first branch and bound, the range with the highest bound split first, until no range's bound beats the
    best value priced by more than the tolerance (a flat top, where a compute term binds every batch alike, is
    not priced batch by batch)."""
    ranges = [(-curve.bound(bottom, top), bottom, top)]
    while ranges:
        negative, a, z = heapq.heappop(ranges)
        if -negative <= high * (1.0 + TIE):
            break  # every range left is bounded by this one's bound
        if z - a < CHUNK:
            for b in range(a, z + 1):
                if curve.bound(b, b) > high * (1.0 + TIE):
                    high = max(high, curve.tps(b))
            continue
        mid = (a + z) // 2
        for lo, hi in ((a, mid), (mid + 1, z)):
            bound = curve.bound(lo, hi)
            if bound > high * (1.0 + TIE):
                heapq.heappush(ranges, (-bound, lo, hi))
    return high


def _best_batch(curve: _Curve, top: int, bottom: int = 1) -> int:
    # A first estimate of the maximum: both ends and the best of a coarse sample; then the maximum itself, so the
    # search below finds the answer's candidate at once instead of climbing through every batch that beats the
    # one before it (a slowly rising curve has thousands).
    candidates = {bottom, top, *(max(bottom, min(top, round(top * f))) for f in (0.125, 0.25, 0.5, 0.75))}
    high = _maximum(curve, top, max(curve.tps(b) for b in candidates), bottom)
    while True:
        # The first batch within the tie tolerance of the best value known…
        threshold = high / (1.0 + TIE)
        found = _first(curve, bottom, top, lambda v, t=threshold: v >= t, threshold)  # type: ignore[misc]
        if found is None:  # cannot happen with a sound bound (the batch that gave `high` qualifies)
            raise _Undecided
        value = curve.tps(found)
        # …is the answer's candidate once no larger batch beats it by more than the tolerance.
        beat = value * (1.0 + TIE)
        better = _first(curve, found + 1, top, lambda v, t=beat: v > t, beat)  # type: ignore[misc]
        if better is None:
            break
        high = max(high, curve.tps(better))
    # The scan keeps `found` only if it beats every smaller batch by more than the tolerance; otherwise which batch
    # the scan holds depends on the order of near-ties, and only the scan can say.
    below = value / ((1.0 + TIE) * (1.0 + ROUNDING / 10))
    if _first(curve, bottom, found - 1, lambda v, t=below: v >= t, below) is not None:  # type: ignore[misc]
        raise _Undecided
    return found
