"""Between two events of a served trace (an admission, a prompt chunk, a sequence finishing, an arrival that could be
admitted) its steps repeat: the same decoding sequences, each one pass further. Such a stretch is priced whole — every
step's sums at once, then every step's price at once — and each step gets the very double it gets priced alone.

:class:`Stretch` gives a stretch's per-step sums (:class:`~passprice.steps.StepSums`, arrays of one element a step)
for :meth:`~passprice.steps.StepPricer.price_many`. Two ways, both exact:

- **closed form**, when a pass emits a whole number ``e`` of tokens (every serving without drafts): positions are
  integers, so every sum is an exact integer in a double (below 2^53) whatever its order, and the sums of step ``i``
  follow from the sequences' positions at the stretch's start sorted once — Σ over the sequences still decoding of
  ``p + i·e``, of ``min(p + i·e, window)`` in a windowed group (a sequence reaches the window after
  ⌈(window − p) / e⌉ steps), and of the prefixes read once. Sequences may finish inside the stretch (each at its own
  step, ⌈(output − generated) / e⌉ steps on), so a stretch can run until its last sequence ends: O(sequences + steps)
  arithmetic, not O(sequences × steps);
- **step by step**, when ``e`` is fractional (a drafting serving's expected tokens a pass): each sequence's positions
  are accumulated one pass at a time, as the simulator advances them (``numpy.add.accumulate`` adds in order), and a
  step's sums are the rows of that matrix summed as the simulator sums one step's positions (a C-contiguous row sums
  pairwise as a one-dimensional array does; the tests check it). Such a stretch ends at its first finish.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from passprice.steps import AttentionGroup, StepSums

#: Elements of a step-by-step block (steps × sequences) computed at once.
BLOCK = 1 << 16


def _suffix(values: np.ndarray) -> np.ndarray:
    """``out[k]`` = Σ ``values[k:]``, one longer than ``values`` (its last element 0): exact for integers."""
    out = np.zeros(len(values) + 1, dtype=np.int64)
    out[:-1] = np.cumsum(values[::-1])[::-1]
    return out


class Stretch:
    """The decoding sequences of a stretch at its first step, for the sums of its steps in closed form (the
    module's docstring). ``positions``: cached positions each one's pass reads (whole numbers); ``shared``:
    positions of a prefix it reads with the batch (0 for none); ``finish``: steps until each finishes (it finishes
    in step ``finish − 1``; ≥ 1); ``emitted``: tokens a pass emits, a whole number; ``groups``: the pricer's
    attention groups; ``once``: for each sequence the shared prefix it reads once a step (its positions; 0 for
    none) and ``codes`` naming which (−1 for none): a prefix is streamed once a step while any sequence reading it
    decodes. Raises :class:`ValueError` for positions or a count of emitted tokens that are not whole numbers."""

    def __init__(
        self,
        positions: np.ndarray,
        shared: np.ndarray,
        finish: np.ndarray,
        emitted: float,
        groups: Sequence[AttentionGroup],
        once: np.ndarray | None = None,
        codes: np.ndarray | None = None,
    ) -> None:
        if not float(emitted).is_integer() or not np.all(np.floor(positions) == positions):
            raise ValueError("a stretch in closed form needs whole positions and a whole number of emitted tokens")
        self.n = len(positions)
        self.e = int(emitted)
        self.groups = tuple(groups)
        p = positions.astype(np.int64)
        f = finish.astype(np.int64)
        order = np.argsort(f, kind="stable")
        self.finish_sorted = f[order]
        self.p_after = _suffix(p[order])
        self.s_after = _suffix(shared.astype(np.int64)[order])
        # A windowed group: a sequence scores p + i·e until it reaches the window (step c), then the window, until it
        # finishes (step f).
        self.windows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        for g in self.groups:
            if g.window is None or g.window in self.windows:
                continue
            c = np.maximum(-((p - g.window) // self.e), 0)
            below = np.minimum(c, f)
            by_below = np.argsort(below, kind="stable")
            self.windows[g.window] = (below[by_below], _suffix(p[by_below]), np.sort(c), np.sort(np.maximum(c, f)))
        # Prefixes read once: streamed in a step while any of their sequences still decodes.
        self.once: tuple[np.ndarray, np.ndarray] | None = None
        if once is not None and codes is not None and (codes >= 0).any():
            reading = codes >= 0
            keys, where = np.unique(codes[reading], return_inverse=True)
            last = np.zeros(len(keys), dtype=np.int64)
            np.maximum.at(last, where, f[reading])
            size = np.zeros(len(keys), dtype=np.int64)
            size[where] = once[reading].astype(np.int64)
            by_last = np.argsort(last, kind="stable")
            self.once = (last[by_last], _suffix(size[by_last]))

    def sums(self, steps: np.ndarray) -> StepSums:
        """The sums of the stretch's steps ``steps`` (0-based indices from its start, an integer array)."""
        i = steps.astype(np.int64)
        gone = np.searchsorted(self.finish_sorted, i, side="right")
        d = self.n - gone
        attended = (self.p_after[gone] + i * self.e * d).astype(float)
        alone = attended - self.s_after[gone].astype(float)
        groups = []
        for g in self.groups:
            if g.window is None:
                groups.append((attended, alone, 0.0, 0.0))
                continue
            below_sorted, p_below, c_sorted, gone_sorted = self.windows[g.window]
            out = np.searchsorted(below_sorted, i, side="right")
            at_window = np.searchsorted(c_sorted, i, side="right") - np.searchsorted(gone_sorted, i, side="right")
            scored = (p_below[out] + i * self.e * (self.n - out) + g.window * at_window).astype(float)
            groups.append((scored, scored, 0.0, 0.0))
        shared_once: np.ndarray | float = 0.0
        if self.once is not None:
            last, size_after = self.once
            shared_once = size_after[np.searchsorted(last, i, side="right")].astype(float)
        return StepSums(d.astype(float), 0.0, 0.0, 0.0, shared_once, tuple(groups))


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
            scored = np.minimum(rows, float(g.window)).sum(axis=1)
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
