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

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from passprice.cost import Lines, Pricing, pass_terms
from passprice.serving import U32_MAX, NotResident, OnChipOverflow, ServingCost

if TYPE_CHECKING:
    from passprice.cards import Card
    from passprice.serving import PassShape

#: The seed's tie tolerance: a larger batch replaces the best only when faster by more than this, relatively.
TIE = 1e-12

#: A relative margin on the upper bound for floating-point rounding in the priced terms (each is a handful of
#: products and sums, so its relative error is a few 1e-16).
ROUNDING = 1e-13

#: Ranges this narrow get a bound for each batch (vectorized) instead of one for the range.
CHUNK = 4096

#: Exact prices after which the search gives up and the seed's scan answers (a guard against pathological inputs;
#: the registered servings need a few dozen).
BUDGET = 5_000


class _Undecided(Exception):
    """The bounds could not prove the answer (near-ties on both sides, or the budget): use the scan."""


class _Curve:
    """Tokens/s of a :class:`PassShape` on a card as a function of the batch: exact values (priced with the seed's
    ``cost_split``, cached) and upper bounds, for one batch or a range of batches, from the pass's coefficients."""

    def __init__(self, shape: PassShape, card: Card, host_memory: bool, pricing: Pricing | None = None) -> None:
        self.shape = shape
        self.card = card
        self.host_memory = host_memory
        self.pricing = pricing
        self.priced: dict[int, ServingCost] = {}
        # The one cost formula (passprice.cost) as lines in the batch: seconds of card memory shared (weights),
        # per sequence of the batch (embedding rows), per card-held sequence (its own bytes); of host link per
        # host-held sequence (the slower direction); of arithmetic per sequence (the largest of array, vector and
        # scale lanes).
        self.split = host_memory and card.host is not None
        # A stack's fixed cost and serial terms only lengthen a pass, so the bound at its rates still holds.
        self.rates = pricing if pricing is not None else Pricing.limit(card)
        lines = Lines.of(self.rates, shape, host=self.split)
        self.weights_s = lines.shared_s
        self.embed_s = lines.embed_s
        self.sequence_s = lines.sequence_s
        self.host_s = lines.host_s
        self.compute_s = max(lines.array_s, lines.vector_s, lines.scale_s)
        self.card_room = shape.card_room(card, pricing)
        self.host_room = shape.host_room(card) if self.split else 0
        self.emitted = shape.emitted_per_sequence

    def cost(self, batch: int) -> ServingCost:
        """The seed's pass of ``batch`` sequences (its host split search included), priced once."""
        found = self.priced.get(batch)
        if found is None:
            if len(self.priced) >= BUDGET:
                raise _Undecided
            found = self.shape.cost_split(self.card, batch, self.host_memory, self.pricing)
            self.priced[batch] = found
        return found

    def tps(self, batch: int) -> float:
        """Tokens/s of the seed's pass of ``batch`` sequences."""
        return self.cost(batch).tokens_per_s

    def memory_floor(self, batch: np.ndarray) -> np.ndarray:
        """For each batch, the least of max(card-memory seconds, host-link seconds) over every whole number of
        card-held sequences the seed's split search may choose (its ternary search finds that least, and the pass
        is never faster): at the floor or ceiling of the real crossing of the two, within the rooms. Non-decreasing
        in the batch.

        A mixture of experts (DESIGN.md extension, issue 15) adds the seconds of the routed experts a pass of the
        batch streams (:meth:`~passprice.serving.PassShape.expert_bytes`, through the one cost formula): they grow
        with the batch, never shrink, so the floor stays non-decreasing and the bounds stay sound."""
        base = self.weights_s + self.embed_s * batch
        if self.shape.experts:
            base = base + self.experts_s(batch)
        if not self.split:
            return base + self.sequence_s * batch
        lo = np.maximum(batch - self.host_room, 0)
        hi = np.minimum(batch, self.card_room)
        rate = self.sequence_s + self.host_s
        cross = (self.host_s * batch - base) / rate if rate > 0 else hi.astype(float)
        out = None
        for held in (np.floor(cross), np.ceil(cross)):
            held = np.clip(held, lo, hi)
            value = np.maximum(base + self.sequence_s * held, self.host_s * (batch - held))
            out = value if out is None else np.minimum(out, value)
        assert out is not None
        return out

    def experts_s(self, batch: np.ndarray) -> np.ndarray:
        """Seconds of card memory the routed experts of a pass of each ``batch`` take (0 for a dense shape)."""
        zero = np.zeros_like(batch)
        terms = pass_terms(
            self.rates,
            batch=zero,
            card_sequences=zero,
            host_sequences=zero,
            shared_bytes=self.shape.expert_bytes(batch),
            read_bytes=0.0,
            write_bytes=0.0,
            rewrite_bytes=0.0,
            array_macs=0.0,
            vector_macs=0.0,
            scale_cycles=0.0,
        )
        out: np.ndarray = terms.memory_s
        return out

    def bound(self, lo: int, hi: int) -> float:
        """An upper bound on tokens/s over batches ``lo``…``hi``: a pass of *b* sequences takes at least
        max(b × arithmetic seconds per sequence, memory floor at ``lo``), and b ≤ ``hi``."""
        floor = float(self.memory_floor(np.array([lo], dtype=float))[0])
        per_sequence = max(self.compute_s, floor / hi)
        return math.inf if per_sequence <= 0 else (1.0 + ROUNDING) * self.emitted / per_sequence

    def bounds(self, lo: int, hi: int) -> np.ndarray:
        """An upper bound on tokens/s for each batch ``lo``…``hi`` (an array of ``hi − lo + 1``)."""
        batch = np.arange(lo, hi + 1, dtype=float)
        per_sequence = np.maximum(self.compute_s, self.memory_floor(batch) / batch)
        with np.errstate(divide="ignore"):
            return np.where(per_sequence > 0, (1.0 + ROUNDING) * self.emitted / per_sequence, np.inf)


def _first(curve: _Curve, lo: int, hi: int, keep: Callable[[float], bool], floor: float) -> int | None:
    """The smallest batch in ``lo``…``hi`` whose tokens/s satisfies ``keep``, pricing only batches whose bound is
    at least ``floor`` (every value ``keep`` accepts is at least ``floor``)."""
    stack = [(lo, hi)]
    while stack:
        a, z = stack.pop()
        if a > z or curve.bound(a, z) < floor:
            continue
        if z - a < CHUNK:
            for offset in np.nonzero(curve.bounds(a, z) >= floor)[0]:
                b = a + int(offset)
                if keep(curve.tps(b)):
                    return b
            continue
        mid = (a + z) // 2
        stack.append((mid + 1, z))
        stack.append((a, mid))
    return None


def _last_fitting(shape: PassShape, card: Card, host_memory: bool, upper: int, pricing: Pricing | None = None) -> int:
    """The largest batch in 1…``upper`` the seed's scan reaches before its first capacity refusal (0 when batch 1
    is refused for capacity). Batches that fit form a prefix, so the capacities' own limit is checked, then its
    neighbour; a binary search settles any disagreement from rounding."""

    def fits(batch: int) -> bool:
        try:
            shape.cost_split(card, batch, host_memory, pricing)
        except (NotResident, OnChipOverflow):
            return False
        return True

    if upper < 1 or not fits(1):
        return 0
    limit = upper
    if shape.on_chip_per_sequence > 0:
        on_chip = pricing.on_chip if pricing is not None else card.on_chip.capacity.value
        limit = min(limit, max(int(on_chip // shape.on_chip_per_sequence), 1))
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


def max_batch(shape: PassShape, card: Card, host_memory: bool, pricing: Pricing | None = None) -> int:
    """The most sequences the serving carries on ``card`` (seed ``max_batch``, without its scan): the last batch up
    to card room (+ host room) + 1 before the first capacity refusal. Raises batch 1's refusal when nothing fits,
    and any other refusal batch 1 raises."""
    # The seed's loop runs to `most.saturating_add(1)`: u32 arithmetic stops at u32::MAX.
    n = _last_fitting(shape, card, host_memory, min(shape.most(card, host_memory, pricing) + 1, U32_MAX), pricing)
    if n == 0:
        shape.cost_split(card, 1, host_memory, pricing)
    return n


def best(shape: PassShape, card: Card, host_memory: bool, pricing: Pricing | None = None) -> ServingCost:
    """The batch that makes ``card`` emit the most tokens per second, and its pass, identical to the seed's scan
    (``PassShape::best``: ties within a relative 1e-12 go to the smaller batch), found by branch and bound.

    ``pricing``: the rates and capacities (default: the card's limit; a serving stack's expected pricing gives the
    stack's best batch). Raises what batch 1 raises when no batch fits (or batch 1's other refusals)."""
    first = shape.cost_split(card, 1, host_memory, pricing)
    top = _last_fitting(shape, card, host_memory, max(shape.most(card, host_memory, pricing), 1), pricing)
    if top <= 1:
        return first
    curve = _Curve(shape, card, host_memory, pricing)
    curve.priced[1] = first
    try:
        return curve.cost(_best_batch(curve, top))
    except _Undecided:
        return shape.best_by_scan(card, host_memory, pricing)


def _best_batch(curve: _Curve, top: int) -> int:
    # A first estimate of the maximum: both ends and the best of a coarse sample.
    candidates = {1, top, *(max(1, min(top, round(top * f))) for f in (0.125, 0.25, 0.5, 0.75))}
    high = max(curve.tps(b) for b in candidates)
    while True:
        # The first batch within the tie tolerance of the best value known…
        threshold = high / (1.0 + TIE)
        found = _first(curve, 1, top, lambda v, t=threshold: v >= t, threshold)  # type: ignore[misc]
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
    if _first(curve, 1, found - 1, lambda v, t=below: v >= t, below) is not None:  # type: ignore[misc]
        raise _Undecided
    return found
