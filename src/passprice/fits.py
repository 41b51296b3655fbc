"""A fact read off measured runs names each run it came from and the figure it took from it, and its method, so a
check can take the same runs again and say which one moved.

A **run derivation** (the ``derivation`` table of a serving stack's fact, issue 14) is the structured derivation of
a fact that no formula gives: a fit of the stack's facts to its measured runs, or the range of batches and positions
those runs cover. It has:

- ``method``: ``nnls-relative-pass-time`` (the calibration's fit, :mod:`passprice.calibrate`: least squares on the
  relative error of the pass time, overheads ≥ 0 and shares ≤ 1 by non-negative least squares, ``terms.serial`` on
  a 0.05 grid), ``min`` or ``max`` (the least or the largest of the runs' figures);
- ``figure``: what each run contributed: ``tokens_per_s`` (what it measured, for a fit), ``rows`` (token-rows a pass:
  its batch, a run decoding one token a sequence), ``first`` or ``last`` (the cached positions its tokens ran from and
  to);
- ``runs``: the measurement records by id (``registry/measurements/``), each with the figure it contributed when
  the fact was made (``{ run = ID, value = FIGURE }``);
- for a fit, ``digits`` (the value is the fit rounded to that many significant digits), ``tolerance`` (the relative
  difference a re-fit may show and still agree: the fit is floating-point least squares, not exact arithmetic) and
  ``errors`` (its error in sample and held out, as ``passprice calibrate`` reported it; ``passprice check`` computes
  it again since slip 48).

``passprice check`` verifies it (:func:`passprice.calibrate.verify_stack`): every named run still exists, is still a
run of the stack and still has the figure recorded; a ``min``/``max`` is recomputed; a fit is re-run from the named
runs, today's records of them, and compared within its tolerance. A run that changed or disappeared is named.

The record itself (:class:`~passprice.derivations.RunDerivation`, :class:`~passprice.derivations.RunInput`,
:data:`~passprice.derivations.METHODS`, :data:`~passprice.derivations.FIGURES`) lives in
:mod:`passprice.derivations` beside a formula's, and is re-exported here: a lock made under a stack pins stack facts
derived so, and a warm price under such a lock, which unpickles them from the cache of built objects, imported this
module and :mod:`passprice.measurements` (whose ``Run`` it only annotates with) for the class alone (session 30).
What checks a run derivation against today's runs (:func:`changes`, :func:`pinned_apart`, :func:`agrees`) stays here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from passprice.derivations import FIGURES as FIGURES  # (re-exported: its home was this module)
from passprice.derivations import METHODS as METHODS
from passprice.derivations import RunDerivation as RunDerivation
from passprice.derivations import RunInput as RunInput
from passprice.derivations import shown_figure

if TYPE_CHECKING:
    from passprice.measurements import Run

def figure_of(run: Run, figure: str) -> float:
    """The ``figure`` of ``run``: its measured tokens/s, its token-rows a pass (its batch: a measured run decodes one
    token a sequence, no drafts), or its ``first`` / ``last`` cached position. Raises :class:`KeyError` for another
    name."""
    if figure == "tokens_per_s":
        return run.tokens_per_s
    if figure == "rows":
        return float(run.batch)
    if figure == "first":
        return float(run.first)
    if figure == "last":
        return float(run.last)
    raise KeyError(figure)


def relative_move(was: float, now: float) -> str:
    """How far a figure moved, relative to what it was: ``-3.636 %`` (four significant digits, signed, as every
    other relative change passprice prints); ``from 0`` when it was 0. Raises nothing."""
    return "from 0" if was == 0 else f"{100.0 * (now / was - 1.0):+.4g} %"


def rounded(value: float, digits: int | None) -> float:
    """``value`` to ``digits`` significant digits (as calibrate writes it); unchanged without ``digits``."""
    return value if digits is None else float(f"{value:.{digits}g}")


def extreme(method: str, values: Sequence[float]) -> float:
    """The least (``min``) or largest (``max``) of ``values``. Raises :class:`ValueError` for none, or another
    method."""
    if method == "min":
        return min(values)
    if method == "max":
        return max(values)
    raise ValueError(method)


def agrees(recorded: float, refit: float, tolerance: float) -> bool:
    """Whether a re-fit value agrees with the one recorded: within ``tolerance`` of it (relative), or both below
    1e-9 of the unit in magnitude (a value fitted to 0, as an overhead the runs do not ask for)."""
    if abs(recorded) < 1e-9 and abs(refit) < 1e-9:
        return True
    return abs(refit - recorded) <= tolerance * max(abs(recorded), abs(refit))


@attrs.frozen
class RunChange:
    """A run a derivation names that is not as recorded: its ``run`` id, the figure ``recorded`` and the figure
    ``now`` (``None``: no run has that id now, or it is no longer a run of the stack, ``why`` says which)."""

    run: str
    recorded: float
    now: float | None
    why: str = ""

    def describe(self, figure: str) -> str:
        """``run ID: 95.06 tokens/s when derived, 96 tokens/s now (+0.9889 %)`` (each figure with its unit, and how
        far it moved) or ``run ID: gone (no run has this id)``."""
        if self.now is None:
            return f"run {self.run}: {self.why}"
        unit = FIGURES[figure]
        return (f"run {self.run}: {shown_figure(self.recorded)} {unit} when derived, {shown_figure(self.now)} {unit} "
                f"now ({relative_move(self.recorded, self.now)})")


def changes(derivation: RunDerivation, runs: Mapping[str, Run], stack: str) -> tuple[RunChange, ...]:
    """The runs ``derivation`` names that moved: gone from ``runs`` (every run of the registry by id), moved to
    another stack than ``stack``, or with another figure than the one recorded."""
    out = []
    for r in derivation.runs:
        run = runs.get(r.run)
        if run is None:
            out.append(RunChange(r.run, float(r.value), None, "gone (no measured run has this id now)"))
        elif run.stack != stack:
            out.append(RunChange(r.run, float(r.value), None, f"now a run of stack {run.stack}, not {stack}"))
        elif figure_of(run, derivation.figure) != float(r.value):
            out.append(RunChange(r.run, float(r.value), figure_of(run, derivation.figure)))
    return tuple(out)


def runs_change(old: object, new: object) -> str | None:
    """What differs between the runs two fitted facts' derivations (:class:`RunDerivation`) rest on, in words, or
    ``None`` when either is no fit or both rest on the same runs with the same figures: ``fitted from other runs:
    w24.h200.b64 (6641.7) gone, w24.h200.b64.again (6641.7) new`` (at most 3 of each, the rest counted). A stack
    re-fitted to the same values from other runs read as pinned "as they are" by a lock check, and as "citation or
    note changed" in its drift (session 25): the runs a fit rests on are part of what it is a function of. Raises
    nothing."""
    if not isinstance(old, RunDerivation) or not isinstance(new, RunDerivation):
        return None
    before = {r.run: r.value for r in old.runs}
    after = {r.run: r.value for r in new.runs}
    if before == after:
        return None

    def some(items: list[str], what: str) -> str:
        more = f" and {len(items) - 3:,} more" if len(items) > 3 else ""
        return f"{', '.join(items[:3])}{more} {what}"

    parts = []
    gone = [f"{run} ({before[run]:g})" for run in before if run not in after]
    new_ = [f"{run} ({after[run]:g})" for run in after if run not in before]
    moved = [f"{run} {before[run]:g} → {after[run]:g}" for run in before if run in after and before[run] != after[run]]
    if gone:
        parts.append(some(gone, "gone"))
    if new_:
        parts.append(some(new_, "new"))
    if moved:
        parts.append(some(moved, "moved"))
    return f"fitted from other runs: {', '.join(parts)}"


def pinned_apart(pinned: Mapping[str, Any], today: Mapping[str, Any],
                 paths: Sequence[str]) -> tuple[tuple[str, ...], str | None]:
    """Of ``paths`` (lock paths of stack facts), those a lock pinned (``pinned``, path → fact) otherwise than
    ``today`` holds them: with another value, not at all, or fitted from other runs (:func:`runs_change`:
    a stack re-fitted to the same values from other runs read as pinned "as they are", session 25); and how the runs
    differ for the first that differs so (``None`` when none does). The one comparison of ``price --lock``'s stale-fit
    warning (:func:`passprice.stackreach.lock_fit`) and ``reproduce``'s stale line. Raises nothing."""
    apart, first = [], None
    for path in paths:
        now, was = today.get(path), pinned.get(path)
        if now is None or was is None or now.value != was.value:
            apart.append(path)
            continue
        runs = runs_change(was.derivation, now.derivation)
        if runs is not None:
            apart.append(path)
            first = first or runs
    return tuple(apart), first
