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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from passprice.measurements import Run

#: The methods a run derivation may name, and what each does (in words, for people and for DESIGN.md).
METHODS: dict[str, str] = {
    "nnls-relative-pass-time": (
        "least squares on the relative error of the pass time (NNLS: overheads >= 0, shares <= 1; terms.serial on a "
        "0.05 grid)"
    ),
    "min": "the least of the runs' figures",
    "max": "the largest of the runs' figures",
}

#: The figure of a run a derivation may take, and its unit in words.
FIGURES: dict[str, str] = {
    "tokens_per_s": "tokens/s",
    "rows": "token-rows a pass",
    "first": "positions",
    "last": "positions",
}


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


@attrs.frozen
class RunInput:
    """One run a derivation rests on: its measurement ``run`` id and the ``value`` of the figure it contributed."""

    run: str
    value: int | float

    def to_entry(self) -> dict[str, Any]:
        """The input as its TOML inline table: ``{ run = ID, value = FIGURE }``."""
        return {"run": self.run, "value": self.value}


@attrs.frozen
class RunDerivation:
    """A fact's derivation from measured runs (module docstring): ``method``, ``figure``, ``runs`` (in the order
    written), and for a fit ``digits``, ``tolerance`` (relative) and ``errors`` (name → relative error, as
    reported)."""

    method: str = attrs.field(validator=attrs.validators.in_(tuple(METHODS)))
    figure: str = attrs.field(validator=attrs.validators.in_(tuple(FIGURES)))
    runs: tuple[RunInput, ...]
    digits: int | None = None
    tolerance: float | None = None
    errors: Mapping[str, float] | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> RunDerivation:
        """The derivation a schema-valid ``derivation`` table with a ``method`` describes."""
        errors = entry.get("errors")
        return cls(
            method=entry["method"],
            figure=entry["figure"],
            runs=tuple(RunInput(r["run"], r["value"]) for r in entry["runs"]),
            digits=entry.get("digits"),
            tolerance=entry.get("tolerance"),
            errors=dict(errors) if errors is not None else None,
        )

    def to_entry(self) -> dict[str, Any]:
        """The derivation as its TOML table (the keys it was written with, in a fixed order)."""
        out: dict[str, Any] = {"method": self.method, "figure": self.figure}
        if self.digits is not None:
            out["digits"] = self.digits
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        if self.errors is not None:
            out["errors"] = dict(self.errors)
        out["runs"] = [r.to_entry() for r in self.runs]
        return out

    def ids(self) -> tuple[str, ...]:
        """The run ids, in order."""
        return tuple(r.run for r in self.runs)

    def describe(self) -> str:
        """One line: the method in words, the figure, how many runs (the first and the last named), and for a fit
        its rounding and tolerance."""
        n = len(self.runs)
        if n == 0:
            named = "no runs"
        elif n == 1:
            named = f"run {self.runs[0].run} ({_shown(self.runs[0].value)})"
        else:
            named = (
                f"{n} measured runs ({self.runs[0].run} = {_shown(self.runs[0].value)} … {self.runs[-1].run} = "
                f"{_shown(self.runs[-1].value)})"
            )
        text = f"{self.method}: {METHODS[self.method]}, of the {FIGURES[self.figure]} of {named}"
        if self.digits is not None:
            text += f", to {self.digits} significant digits"
        if self.tolerance is not None:
            text += f"; passprice check re-fits it within {100 * self.tolerance:g} %"
        return text


def _shown(value: float) -> str:
    return f"{value:g}" if float(f"{value:g}") == value else repr(value)


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
        return (f"run {self.run}: {_shown(self.recorded)} {unit} when derived, {_shown(self.now)} {unit} now "
                f"({relative_move(self.recorded, self.now)})")


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
