"""Between two events of a served trace (an admission, a prompt chunk, a sequence finishing, an arrival that could be
admitted) its steps repeat: the same decoding sequences, each one pass further. Such a stretch is priced whole — every
step's sums at once, then every step's price at once — and each step gets the very double it gets priced alone.

:class:`Stretch` gives a stretch's per-step sums (:class:`~passprice.steps.StepSums`, arrays of one element a step)
for :meth:`~passprice.steps.StepPricer.price_many`. Two ways, both exact:

- **closed form**, when a pass emits a whole number ``e`` of tokens (every serving without drafts): positions are
  integers, so every sum is an exact integer in a double (below 2^53) whatever its order, and the sums of step ``i``
  follow from the sequences' positions at the stretch's start sorted once — Σ over the sequences still decoding of
  ``p + i·e``, of ``min(p + i·e, r)`` in a windowed group, ``r = window − 1`` the most cached positions a windowed
  row reads (:func:`~passprice.architectures.window_reach`; a sequence reaches it after ⌈(r − p) / e⌉ steps), and
  of the prefixes read once. Sequences may finish inside the stretch (each at its own
  step, ⌈(output − generated) / e⌉ steps on), so a stretch can run until its last sequence ends: O(sequences + steps)
  arithmetic, not O(sequences × steps);
- **step by step**, when ``e`` is fractional (a drafting serving's expected tokens a pass): each sequence's positions
  are accumulated one pass at a time, as the simulator advances them (``numpy.add.accumulate`` adds in order), and a
  step's sums are the rows of that matrix summed as the simulator sums one step's positions (a C-contiguous row sums
  pairwise as a one-dimensional array does; the tests check it). Such a stretch ends at its first finish.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from passprice.architectures import window_reach, windowed_reads_array
from passprice.steps import AttentionGroup, StepPricer, StepSums

#: Elements of a step-by-step block (steps × sequences) computed at once.
BLOCK = 1 << 16
#: The largest window (or reach) the closed form computes with: one past it reads as it, which changes nothing
#: (every position a serving reaches is below 2^32, the largest limit, so min(p, window − 1) = p either way), and
#: keeps the int64 arithmetic exact: a gemma header's ``sliding_window`` of 2^64 − 1 raised OverflowError in
#: ``simulate`` (attack65), and a window times a count of sequences stays below 2^63 up to 2^23 of them.
WINDOW_CAP = 1 << 40


def _reach(window: int) -> int:
    """The most cached positions a windowed row reads (:func:`~passprice.architectures.window_reach`, ``window −
    1``) as the closed form computes with it: at most :data:`WINDOW_CAP`."""
    return min(window_reach(window), WINDOW_CAP)


def _hold(window: int) -> int:
    """The most positions a windowed layer holds for a sequence (``window``:
    :func:`~passprice.architectures.windowed_held`) as the closed form computes with it: at most
    :data:`WINDOW_CAP`."""
    return min(window, WINDOW_CAP)


class _Counted:
    """Integer ``keys`` (steps) with integer ``values``: how many keys are at or below a step, and the sum of their
    values, for an array of steps (``numpy.searchsorted`` on the keys sorted once)."""

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.sums = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(values[order], out=self.sums[1:])

    def count(self, steps: np.ndarray) -> np.ndarray:
        """Keys at or below each of ``steps``."""
        return np.searchsorted(self.keys, steps, side="right")

    def at(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(keys at or below each of ``steps``, the sum of their values)."""
        n = np.searchsorted(self.keys, steps, side="right")
        return n, self.sums[n]


class Stretch:
    """The decoding sequences of a stretch, for the sums of its steps in closed form (the module's docstring).

    One element a sequence: ``positions``, the cached positions its first pass in the stretch reads (whole
    numbers); ``shared``, positions of a prefix it reads with the batch (0 for none); ``start``, the step of that
    first pass (0, or 1 for a prompt that ends in the stretch's first step and decodes from the next); ``finish``,
    the step after its last pass (it finishes in step ``finish − 1``; a prompt of one output token that ends in step
    0 has ``start = finish = 1``: no pass). ``emitted``: tokens a pass emits, a whole number; ``groups``: the
    pricer's attention groups. ``once`` and ``codes``: the positions of the shared prefix each sequence reads once a
    step and which prefix it is (−1 for none), from step ``reads_from`` (0 or 1) until it finishes: a prefix is
    streamed in the steps where any of its sequences reads it. ``first``: what the stretch's first step carries
    besides (its prompt chunks' sums, :class:`~passprice.steps.StepSums` with ``decode`` 0 and no
    ``shared_once``), or ``None``. Raises :class:`ValueError` for positions or a count of emitted tokens that are
    not whole numbers."""

    def __init__(
        self,
        positions: np.ndarray,
        shared: np.ndarray,
        start: np.ndarray,
        finish: np.ndarray,
        emitted: float,
        groups: Sequence[AttentionGroup],
        once: np.ndarray | None = None,
        codes: np.ndarray | None = None,
        reads_from: np.ndarray | None = None,
        first: StepSums | None = None,
    ) -> None:
        whole = positions.astype(np.int64)
        if not float(emitted).is_integer() or not (whole == positions).all():
            raise ValueError("a stretch in closed form needs whole positions and a whole number of emitted tokens")
        self.e = e = int(emitted)
        self.groups = tuple(groups)
        self.first = first
        s = start.astype(np.int64)
        f = finish.astype(np.int64)
        q = whole - s * e  # where each sequence would be at step 0: p + (i − start)·e = q + i·e
        own = shared.astype(np.int64)
        self.begun = _Counted(s, q)
        self.ended = _Counted(f, q)
        self.begun_shared = _Counted(s, own) if own.any() else None
        self.ended_shared = _Counted(f, own) if own.any() else None
        # A windowed group: a sequence scores q + i·e from its start until it reaches the window's reach (step c)
        # or finishes, then the reach (window − 1) until it finishes.
        self.windows: dict[int, tuple[_Counted, _Counted, _Counted]] = {}
        for g in self.groups:
            if g.window is None or g.window in self.windows:
                continue
            c = np.maximum(-((q - _reach(g.window)) // e), s)
            self.windows[g.window] = (_Counted(np.minimum(c, f), q), _Counted(c, q), _Counted(np.maximum(c, f), q))
        # Prefixes read once: streamed from the first step any of their sequences reads them to the last.
        self.once: tuple[_Counted, _Counted] | None = None
        if once is not None and codes is not None and (codes >= 0).any():
            reading = codes >= 0
            keys, where = np.unique(codes[reading], return_inverse=True)
            begin = np.full(len(keys), np.iinfo(np.int64).max)
            np.minimum.at(begin, where, (s if reads_from is None else reads_from.astype(np.int64))[reading])
            last = np.zeros(len(keys), dtype=np.int64)
            np.maximum.at(last, where, f[reading])
            size = np.zeros(len(keys), dtype=np.int64)
            size[where] = once[reading].astype(np.int64)
            self.once = (_Counted(begin, size), _Counted(last, size))

    def sums(self, steps: np.ndarray) -> StepSums:
        """The decoding sums of the stretch's steps ``steps`` (0-based indices from its start, an integer array):
        without ``first``'s prompt chunks, which :meth:`priced` adds to the first step."""
        i = steps.astype(np.int64)
        ie = i * self.e
        n_begun, q_begun = self.begun.at(i)
        n_ended, q_ended = self.ended.at(i)
        d = n_begun - n_ended
        attended = ((q_begun - q_ended) + ie * d).astype(float)
        alone = attended
        if self.begun_shared is not None and self.ended_shared is not None:
            alone = attended - (self.begun_shared.at(i)[1] - self.ended_shared.at(i)[1]).astype(float)
        groups: list[tuple[Any, Any, Any, Any]] = []
        for g in self.groups:
            if g.window is None:
                groups.append((attended, alone, 0.0, 0.0))
                continue
            below, reached, left = self.windows[g.window]
            n_below, q_below = below.at(i)
            scored = ((q_begun - q_below) + ie * (n_begun - n_below)
                      + _reach(g.window) * (reached.count(i) - left.count(i))).astype(float)
            groups.append((scored, scored, 0.0, 0.0))
        shared_once: Any = 0.0
        if self.once is not None:
            begin, last = self.once
            shared_once = (begin.at(i)[1] - last.at(i)[1]).astype(float)
        return StepSums(d.astype(float), 0.0, 0.0, 0.0, shared_once, tuple(groups))

    def priced(self, pricer: StepPricer, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The seconds and binding terms of the stretch's steps ``steps`` (consecutive indices from its start):
        ``(pass_s, bind)`` as :meth:`~passprice.steps.StepPricer.price_many` gives them, one element a step. The
        first step, when it carries prompt chunks, is priced apart on floats (its decoding sums and ``first``'s,
        :meth:`~passprice.steps.StepPricer.price_one`), so the other steps' arrays skip the prompt terms (a prompt
        term of 0.0 adds nothing: x + 0.0 is x); either way each step gets the double it gets alone."""
        sums = self.sums(steps)
        if self.first is None or not len(steps) or steps[0] != 0:
            return pricer.price_many(sums)
        first = self.first
        head = StepSums(_at(sums.decode, 0), first.chunks, first.prompt_rows, first.lasts, _at(sums.shared_once, 0),
                        tuple((_at(attended, 0), _at(alone, 0), prompt_attended, prompt_read)
                              for (attended, alone, _, _), (_, _, prompt_attended, prompt_read)
                              in zip(sums.groups, first.groups, strict=True)))
        cost, bind = pricer.price_one(head)
        if len(steps) == 1:
            return np.array([cost]), np.array([bind])
        rest = StepSums(_at(sums.decode, 1), 0.0, 0.0, 0.0, _at(sums.shared_once, 1),
                        tuple((_at(attended, 1), _at(alone, 1), 0.0, 0.0) for attended, alone, _, _ in sums.groups))
        more, more_bind = pricer.price_many(rest)
        return np.concatenate(([cost], more)), np.concatenate(([bind], more_bind))


    def priced_chunked(
        self, pricer: StepPricer, n: int, at: np.ndarray, prompts: StepSums, bare: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """The seconds and binding terms of the stretch's first ``n`` steps, where the steps ``at`` (sorted, distinct)
        carry prompt chunks besides: ``prompts`` their sums (arrays, one element each of ``at``; ``decode`` and
        ``shared_once`` unused). Every step is priced in one :meth:`~passprice.steps.StepPricer.price_many` call,
        the others with prompt sums of 0.0 (a prompt term of 0.0 adds nothing: x + 0.0 is x, and a decoding
        step's weights do not depend on its last rows): every step gets the double it gets alone. With ``bare``,
        the steps ``at`` follow, priced without their prompt chunks (``n + len(at)`` elements: what each chunk step
        would take decoding alone)."""
        steps = np.concatenate((np.arange(n), at)) if bare else np.arange(n)
        sums = self.sums(steps)

        def spread(values: np.ndarray) -> np.ndarray:
            out = np.zeros(len(steps))
            out[at] = values
            return out

        return pricer.price_many(
            StepSums(sums.decode, spread(prompts.chunks), spread(prompts.prompt_rows), spread(prompts.lasts),
                     sums.shared_once,
                     tuple((attended, alone, spread(prompt_attended), spread(prompt_read))
                           for (attended, alone, _, _), (_, _, prompt_attended, prompt_read)
                           in zip(sums.groups, prompts.groups, strict=True))))


def _at(value: Any, start: int) -> Any:
    """A per-step array's element ``start`` as a float (``start`` 0), or its elements from ``start`` on (a view);
    a float shared by every step as it is."""
    if not isinstance(value, np.ndarray):
        return value
    return float(value[0]) if start == 0 else value[start:]


def stepwise_sums(
    positions: np.ndarray, shared: np.ndarray, groups: Sequence[AttentionGroup], shared_once: float
) -> StepSums:
    """The sums of steps whose decoding sequences sit at ``positions`` (one row a step, one column a sequence,
    C-contiguous; ``shared``: one element a sequence), as :meth:`~passprice.steps.StepPricer.price` sums one step's
    row: the fractional positions of a drafting serving, whose sums depend on their order."""
    rows = np.ascontiguousarray(positions)
    attended = rows.sum(axis=1)
    alone = (rows - shared).sum(axis=1)
    out = []
    for g in groups:
        if g.window is None:
            out.append((attended, alone, 0.0, 0.0))
        else:
            scored = windowed_reads_array(rows, g.window).sum(axis=1)
            out.append((scored, scored, 0.0, 0.0))
    return StepSums(float(rows.shape[1]), 0.0, 0.0, 0.0, shared_once, tuple(out))


def advance(start: np.ndarray, emitted: float, steps: int) -> np.ndarray:
    """``start`` and the ``steps`` values after it, ``emitted`` added one pass at a time as the simulator adds it:
    row ``i`` is each sequence's value after ``i`` passes (``steps + 1`` rows, C-contiguous)."""
    out = np.empty((steps + 1, len(start)))
    out[0] = start
    out[1:] = emitted
    np.add.accumulate(out, axis=0, out=out)
    return out


def _active_sums(steps: np.ndarray, begin: np.ndarray, end: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Σ of ``values`` (integers) over the sequences active at each of ``steps`` (sorted): sequence ``m`` is active
    at step ``i`` when ``begin[m] <= i < end[m]`` (an interval with ``end <= begin`` is empty)."""
    acc = np.zeros(len(steps) + 1, dtype=np.int64)
    np.add.at(acc, np.searchsorted(steps, begin, side="left"), values)
    np.add.at(acc, np.searchsorted(steps, np.maximum(end, begin), side="left"), -values)
    return np.cumsum(acc)[:-1]


def _pages_sums(steps: np.ndarray, begin: np.ndarray, end: np.ndarray, base: np.ndarray, e: int,
                page: int) -> np.ndarray:
    """Σ of ⌈L / page⌉ × page over the sequences active at each of ``steps`` (as :func:`_active_sums`), sequence
    ``m`` at ``L = base[m] + (i + 1) · e`` positions at the end of step ``i``: Σ L, and Σ (−L mod page) counted by
    the remainder of ``base`` (the rounding up of a remainder ``r`` at step ``i`` is (−(r + (i + 1) · e)) mod page)."""
    ones = np.ones(len(base), dtype=np.int64)
    counts = _active_sums(steps, begin, end, ones)
    positions = _active_sums(steps, begin, end, base) + counts * ((steps + 1) * e)
    left = base % page
    grid = np.zeros((page, len(steps) + 1), dtype=np.int64)
    np.add.at(grid, (left, np.searchsorted(steps, begin, side="left")), 1)
    np.add.at(grid, (left, np.searchsorted(steps, np.maximum(end, begin), side="left")), -1)
    by_left = np.cumsum(grid, axis=1)[:, :-1]
    rounding = np.mod(-(np.arange(page, dtype=np.int64)[:, None] + ((steps + 1) * e)[None, :]), page)
    result: np.ndarray = positions + (by_left * rounding).sum(axis=0)
    return result


#: The largest page :func:`held_totals` counts remainders of (a page of more positions is summed otherwise).
HELD_PAGE = 4096


def held_totals(pricer: StepPricer, base: np.ndarray, emitted: float, begin: np.ndarray, end: np.ndarray,
                steps: np.ndarray) -> np.ndarray | None:
    """Σ of :meth:`~passprice.steps.StepPricer.held` (bytes; no shared prefix) over the sequences active at each of
    ``steps`` (sorted, distinct integers), in closed form: sequence ``m`` is active at step ``i`` when ``begin[m] <=
    i < end[m]``, and then holds ``base[m] + (i + 1) · emitted`` positions. O(sequences + page × steps) integer
    arithmetic instead of O(sequences × steps): a contiguous cache holds its limit whatever the positions; a paged
    one ⌈L / page⌉ pages of each full layer (:func:`_pages_sums`), and of a windowed layer the same until ``L``
    passes the window's last whole page, then the window. Every term is a whole number of bytes, so each total is
    the exact integer a sum of held's doubles gives in any order (below 2^53). ``None`` where that does not hold: a
    sequence's bytes at no context or a group's bytes a position not whole (or negative), fractional ``emitted`` or
    ``base``, a page over :data:`HELD_PAGE`, or a total that could pass 2^53."""
    zero = pricer.zero.held_per_sequence
    groups = pricer.groups
    if not (float(zero).is_integer() and float(emitted).is_integer() and emitted > 0
            and all(float(g.held).is_integer() and g.held >= 0.0 for g in groups)):
        return None
    whole = base.astype(np.int64)
    if not np.array_equal(whole, base):
        return None
    e = int(emitted)
    begin = begin.astype(np.int64)
    end = end.astype(np.int64)
    steps = steps.astype(np.int64)
    most = pricer.held(base + np.maximum(end, 0) * emitted)  # what each holds at its last position, at the most
    if zero < 0.0 or float(most.sum()) >= 2.0**53 or not np.array_equal(most, np.floor(most)):
        return None
    counts = _active_sums(steps, begin, end, np.ones(len(whole), dtype=np.int64))
    page = pricer.kv_page
    if page is None:  # a contiguous cache: what a sequence holds does not depend on its positions
        each = pricer.held(np.zeros(1))
        if not np.array_equal(each, np.floor(each)):
            return None
        return (counts * int(each[0])).astype(float)
    if page > HELD_PAGE:
        return None
    total = counts * int(zero)
    for g in groups:
        if g.window is None:
            total = total + int(g.held) * _pages_sums(steps, begin, end, whole, e, page)
            continue
        last_page = _hold(g.window) // page * page
        past = (last_page - whole) // e  # the first step at which a sequence holds more than last_page positions
        below_end = np.minimum(end, past)
        above_begin = np.minimum(np.maximum(begin, past), end)
        scored = (_pages_sums(steps, begin, below_end, whole, e, page)
                  + _hold(g.window) * _active_sums(steps, above_begin, end, np.ones(len(whole), dtype=np.int64)))
        total = total + int(g.held) * scored
    return total.astype(float)
