"""A stack's facts are fitted to the runs it was measured on, and a fit is only as good as its error on runs it did
not see: every calibration reports its hold-out error by card and by checkpoint.

**The model.** A run's expected pass (:mod:`passprice.stacks`) is ``overhead.pass + layers × overhead.layer`` plus
the largest of its five terms plus ``terms.serial`` × the others, each term a sum of components, each component a
quantity over a card rate divided by the stack's share of that rate: the weights over ``read``, each sequence's cache
over ``append`` (memory); integer matrices over ``array`` and float matrices over ``float`` (array); norms and
attention over ``vector``; block scales over ``scale``. So with ``u = 1 / share`` the pass is linear in the overheads
and the ``u``'s once the binding term and the serial share are fixed. The components are read off the one cost
formula itself (:func:`passprice.cost.pass_terms`, through :func:`passprice.stacks.expected_pricing`): a run is
priced at every share 1 and at each share in turn 1/2, and the difference is that share's component.

**The fit.** Least squares on the *relative* error of the pass time, Σ (predicted / measured − 1)² — every run
weighs the same whether it takes 7 ms or 70 ms, and the relative error of tokens/s is the same to first order —
subject to what the facts mean: overheads ≥ 0 and shares ≤ 1 (``u ≥ 1``; a stack cannot beat the card's own
rate). With ``u = 1 + v``, that is a non-negative least-squares problem in (overheads, v), solved exactly by
Lawson and Hanson's active-set algorithm (:func:`nnls`; Lawson & Hanson, *Solving Least Squares Problems*, 1974,
ch. 23) on NumPy; the binding term of each run is found by iterating to a fixed point (from every share at 1, and
from the best values found so far), and ``terms.serial`` by a grid over [0, 1] in steps of 0.05. No SciPy: the
problem is small (a dozen unknowns, a few hundred runs) and NNLS is forty lines.

**Hold-out error.** Leave one card out: fit on every other card's runs, predict the card's; leave one checkpoint
out likewise. The error of a run is |predicted tokens/s / measured − 1|; the mean and the largest are reported.
Shares and overheads a stack's runs never exercise (a column of zeros: no run rewrites a recurrent state, none uses
host memory) are not fitted and not written: a serving that needs them is refused (:class:`~passprice.stacks
.StackLacks`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from passprice.cards import Card
from passprice.derivations import Finding, RunDerivation, RunInput
from passprice.errors import InputError, NotFound, SchemaError
from passprice.facts import Fact, Provenance, shown_unit
from passprice.files import shell_word, shown
from passprice.fits import extreme, figure_of, rounded
from passprice.gguf_header import GGUFHeader
from passprice.measurements import (
    Run,
    load_runs,
    past_context,
    ratio_too_large,
    refused_run,
    run_inputs,
    run_serving,
)
from passprice.registry import Root, in_root
from passprice.serving import ServingRefusal, shape_of
from passprice.stackfits import METHOD
from passprice.stackfits import review_stacks as review_stacks  # (re-exported: its home was this module)
from passprice.stackfits import stack_findings as stack_findings
from passprice.stackfits import unfitted_runs as unfitted_runs
from passprice.stacks import Stack, expected_pricing, load_stack, stack_path

#: The facts a calibration fits, in order: the two overheads, then the shares.
OVERHEADS = ("overhead.pass", "overhead.layer")
SHARES = (
    "share.read",
    "share.rewrite",
    "share.append",
    "share.host",
    "share.array",
    "share.float",
    "share.vector",
    "share.scale",
)
PARAMETERS = OVERHEADS + SHARES

#: The term (index in the seed's order: memory, host, array, vector, scale) each share's component belongs to.
TERM_OF = {
    "share.read": 0,
    "share.rewrite": 0,
    "share.append": 0,
    "share.host": 1,
    "share.array": 2,
    "share.float": 2,
    "share.vector": 3,
    "share.scale": 4,
}

_TERM_INDEX = np.array([TERM_OF[p] for p in SHARES])

#: The serial shares tried (a grid over [0, 1]).
SERIAL_GRID = tuple(round(0.05 * i, 2) for i in range(21))

#: The source record a calibrated fact cites (``sources/passprice-stack-calibration.toml``): the fit and its runs.
CALIBRATION_SOURCE = "passprice-stack-calibration"

#: Relative column size below which a parameter counts as not exercised by the runs.
UNUSED = 1e-9


def _unit(seconds: float) -> Fact:
    return Fact(seconds, seconds, "s", Provenance.ASSUMED, "calibration probe (not a fact)")


def _share(value: float) -> Fact:
    return Fact(value, value, "1", Provenance.ASSUMED, "calibration probe (not a fact)")


def probe_stack(stack: Stack, shares: dict[str, float] | None = None) -> Stack:
    """``stack``'s routes with every share 1 (or ``shares``), no overhead, overlapping terms, nothing reserved, and
    no range (a probe prices each run wherever it lies): the pricing a calibration reads each component from."""
    facts = {p: _share(1.0) for p in SHARES}
    facts.update({p: _share(v) for p, v in (shares or {}).items()})
    facts.update({"overhead.pass": _unit(0.0), "overhead.layer": _unit(0.0), "terms.serial": _share(0.0)})
    facts["memory.reserved"] = Fact(0.0, 0, "B", Provenance.ASSUMED, "calibration probe (not a fact)")
    return attrs.evolve(stack, facts=facts, cards={}, ranged=False)


@attrs.frozen
class RunModel:
    """A run as the fit sees it: its ``run``, ``layers`` (blocks a pass runs through), ``measured_s`` (seconds a
    pass took: batch / measured tokens/s), ``batch``, and ``components`` (seconds at share 1, one per share in
    :data:`SHARES` order)."""

    run: Run
    layers: float
    measured_s: float
    batch: float
    components: np.ndarray


#: The probe prices :func:`model_runs` made in this process: by the pricing model's version and the exact text
#: (``repr``) of the probe stack (:func:`probe_stack`: the stack's routes, name and texts; its facts are the probe's
#: own) and of the card, each run's (pass shape, batch) → (the shape, its terms at share 1, its components). A run's
#: terms and components are a function of exactly these (the probe's pricing of the card and shape, and the shape's
#: cost at the run's batch: :func:`passprice.stacks.expected_pricing`, :meth:`passprice.serving.PassShape.cost`).
#: The text names every field of every object (attrs' ``repr``, which none of these classes overrides) and tells
#: apart what ``==`` does not (``-0.0`` and ``0.0``, ``1`` and ``1.0``), so a hit gives the very doubles a pricing
#: gives; pickled bytes do not serve, for they differ with which equal strings are one object. A one-fact review
#: priced every run of a stack twice: HEAD's ``check`` re-runs the stack's fit (:func:`verify_stack`) and the
#: private copy's re-fit (:func:`calibrate`, in :func:`passprice.review.impacts._refit`) priced the same runs on cards
#: of the same bytes again, about 0.08 s of CPU for the 111 runs of ``llamacpp-cuda-2405`` (docs/PERFORMANCE.md, "A
#: one-fact review's runs priced once"). A shape is the object :func:`passprice.serving.shape_of` shares by content
#: across roots; it is kept with the entry and compared by identity. At most :data:`_PRICED_KEPT` probe and card pairs,
#: the oldest dropped.
_PRICED: OrderedDict[tuple[str, str, str], dict[tuple[int, str], tuple[Any, list[float], list[float]]]] = (
    OrderedDict())
_PRICED_KEPT = 64


def _priced_runs(version: str, probe: str, card: Card, made: dict[int, Any]) -> dict[Any, Any]:
    """The entry of :data:`_PRICED` for ``card`` under the probe whose text is ``probe``, found or made once a
    :func:`model_runs` call a card (``made``, by the card object's identity). Raises nothing."""
    found = made.get(id(card))
    if found is not None:
        return found  # type: ignore[no-any-return]
    key = (version, probe, repr(card))
    entry = _PRICED.get(key)
    if entry is None:
        entry = _PRICED[key] = {}
        while len(_PRICED) > _PRICED_KEPT:
            _PRICED.popitem(last=False)
    else:
        _PRICED.move_to_end(key)
    made[id(card)] = entry
    return entry


def model_runs(root: Root, stack: Stack, runs: Sequence[Run]) -> list[RunModel]:
    """Each run of ``runs`` read for the fit: its pass shape, and each share's component from the one cost formula
    (the probes' prices of a card and shape made once a process: :data:`_PRICED`).
    Raises :class:`InputError` naming a run whose card or checkpoint does not load, or that the pricer refuses."""
    import passprice

    cards: dict[str, Card] = {}
    headers: dict[str, GGUFHeader] = {}  # one header object a checkpoint, so runs of one model share its decode step
    base_stack = probe_stack(stack)
    halves = {p: probe_stack(stack, {p: 0.5}) for p in SHARES}
    version, probe = str(passprice.PRICING_MODEL_VERSION), repr(base_stack)
    made: dict[int, Any] = {}  # each card's entry of _PRICED, by the card object's identity
    # The pricing of a probe depends on the probe, the card and the pass shape alone, never on the run's batch: made
    # once for the runs sharing a shape (a serving at one position, measured at many batches), not once a run.
    pricings: dict[tuple[str | None, str, int], Any] = {}

    def pricing_of(share: str | None, card: Card, shape: Any) -> Any:
        key = (share, card.name, id(shape))
        found = pricings.get(key)
        if found is None or found[0] is not shape or found[1] is not card:
            found = pricings[key] = (
                shape, card, expected_pricing(base_stack if share is None else halves[share], card, shape)[0])
        return found[2]

    out = []
    for run in runs:
        card, header = run_inputs(root, run, cards, headers)
        beyond = past_context(root.measurements, run, header.meta_int("context_length"))
        if beyond is not None:
            raise InputError(beyond)
        try:
            serving = run_serving(root, run, header)
            shape = shape_of(header, serving)  # built once for runs of one serving and position
            entry = _priced_runs(version, probe, card, made)
            at = (id(shape), repr(run.batch))
            hit = entry.get(at)
            if hit is not None and hit[0] is shape:
                base_terms, components = hit[1], hit[2]
            else:
                base_pricing = pricing_of(None, card, shape)
                base = shape.cost(card, run.batch, 0, base_pricing).terms()
                base_terms = list(base.values())
                components = []
                for p in SHARES:
                    pricing = pricing_of(p, card, shape)
                    terms = list(shape.cost(card, run.batch, 0, pricing).terms().values())
                    components.append(max(terms[TERM_OF[p]] - base_terms[TERM_OF[p]], 0.0))
                entry[at] = (shape, base_terms, components)
        except ServingRefusal as e:
            if e.name == "Routed":
                raise InputError(f"run {run.id} ({run.source}): {run.unrouted(str(e))}") from None
            raise InputError(refused_run(run, e)) from None
        except InputError as e:
            raise InputError(f"run {run.id} ({run.source}): {e}") from None
        measured = run.batch * shape.emitted_per_sequence / run.tokens_per_s
        # The fit divides the measured pass by the priced one (at share 1, the fastest the stack may price it).
        small = ratio_too_large(root.measurements, run, 1.0 / max(base_terms)) if max(base_terms) > 0 else None
        if small is not None:
            raise InputError(small)
        out.append(RunModel(run, float(shape.layers), measured, float(run.batch), np.array(components)))
    return out


def _lapack_lstsq() -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """The least-squares solve :func:`numpy.linalg.lstsq` makes for a float64 ``a`` (m, k) and ``b`` (m,) with
    ``rcond=None``, without its wrapper: the same LAPACK call (``gelsd`` through NumPy's ``_umath_linalg.lstsq``
    gufunc) on the same arrays with the same ``rcond`` (machine epsilon × max(m, k)), so the same doubles, under the
    same error state (a failure to converge raises :class:`numpy.linalg.LinAlgError` as ``lstsq`` does). The
    wrapper's checks and copies were about 0.04 s of the 0.42 s CPU a cold ``check``'s 18 stack fits took (7,081
    solves of one to seven unknowns: round 30). ``None`` where this NumPy's private gufunc is not the one of NumPy 2
    (then :func:`numpy.linalg.lstsq` itself is used); ``tests/test_perf_30.py`` holds the two bit-equal."""
    try:
        from numpy._core import _ufunc_config
        from numpy.linalg import _linalg

        private: Any = _linalg  # (NumPy's private names: typed as nothing)
        gufunc = private._umath_linalg.lstsq
        raised = private._raise_linalgerror_lstsq
        config: Any = _ufunc_config
        state, make = config._extobj_contextvar, config._make_extobj
    except (ImportError, AttributeError):
        return None
    if int(np.__version__.split(".")[0]) < 2:
        return None
    eps = float(np.finfo(np.float64).eps)

    def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        m, k = a.shape
        # np.errstate(call=raised, invalid="call", over/divide/under="ignore") as its __enter__ and __exit__ set
        # it, without making the errstate object (round 37: 7,081 steps a cold check)
        token = state.set(make(call=raised, invalid="call", over="ignore", divide="ignore", under="ignore"))
        try:
            x = gufunc(a, b[:, np.newaxis], eps * max(k, m), signature="ddd->ddid")[0]
        finally:
            state.reset(token)
        if m == 0:
            x[...] = 0
        solved: np.ndarray = x.reshape(k)  # (k, 1), fresh and contiguous: its one column as a (k,) view
        return solved

    return solve


def _lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``numpy.linalg.lstsq(a, b, rcond=None)[0]`` (see :func:`_lapack_lstsq`)."""
    return np.linalg.lstsq(a, b, rcond=None)[0]  # type: ignore[no-any-return]


_LSTSQ: Callable[[np.ndarray, np.ndarray], np.ndarray] = _lapack_lstsq() or _lstsq


def _first_largest(values: Sequence[float]) -> int:
    """The index :func:`numpy.argmax` gives ``values`` (floats): the first NaN, else the first largest."""
    for k, v in enumerate(values):
        if v != v:
            return k
    return max(range(len(values)), key=values.__getitem__)


def _entering(w: Sequence[float], held: Sequence[bool], tol: float) -> int:
    """The variable :func:`nnls` moves into the passive set next, or -1 when none is to enter: none of the free
    ones (``held`` false) has a gradient ``w`` past ``tol``. The one entering is :func:`_first_largest`'s choice of
    ``w`` with every held variable's gradient -inf (a NaN first, as :func:`numpy.argmax` chooses it; else the first
    largest), made in one pass over the free ones (check76: round 37's two passes and the list they built were an
    eighth of a cold ``check``'s 1,217 NNLS solves; ``tests/test_perf_30.py`` holds the two choices the same)."""
    chosen, top, past = -1, -math.inf, False
    for k, v in enumerate(w):
        if held[k]:
            continue
        if v > tol:
            past = True
        if chosen < 0 or (top == top and (v != v or v > top)):  # a NaN chosen stays chosen
            chosen, top = k, v
    return chosen if past else -1


#: How far past the active-set iteration's own tests a passive set found on the normal equations must be before
#: :func:`nnls` takes its least-squares step as the iteration's end (:func:`_verified`): every free variable's
#: gradient below ``-MARGIN_GRADIENT × tol`` (the iteration's entering tolerance; 10^-9 at the least), every passive
#: value above ``MARGIN_VALUE`` times the largest, and each passive column's part not in the span of the ones before
#: it (a Cholesky pivot of the normal equations, columns of unit length) above ``MARGIN_PIVOT`` of its square length.
MARGIN_GRADIENT = 1e5
MARGIN_VALUE = 1e-9
MARGIN_PIVOT = 1e-10
#: How far above the normal equations' rounding a pivot must be (:func:`_extend`): a pivot's share of its column's
#: square length is only known to about machine epsilon over the least share of the pivots before it (the normal
#: equations square the columns' condition), so it must exceed ``MARGIN_ROUNDING × eps`` over that share as well.
#: Without it, three columns in a plane (a 3 × 3 ``a`` with a zero row, two columns 10^-4 apart) gave a third pivot of
#: 6.9 × 10^-9 of its square length, all rounding; the passive set of three was "verified" (no free variable left to
#: test) and ``nnls`` returned LAPACK's minimum-norm step (0.110956, 0.110974, 1.9e-5) where the iteration ends on
#: (0.221943, 4.2e-6, 0) (tests/test_attack118.py).
MARGIN_ROUNDING = 1e6
_EPS = 2.0**-52
#: The most the columns' square lengths may differ (largest over smallest) for :func:`_verified` to guess: LAPACK's
#: step on columns of unlike scale rounds a variable the minimiser holds at 0 to a value of either sign, so the
#: iteration may end on it, positive and kept (a 7 × 4 ``a`` with columns of length 10^11 and 10^-1: the iteration
#: ended with 1.2e-17 and 1.4e-16 on two columns the verified minimiser holds at 0, tests/test_attack118.py). The
#: fits' columns are scaled to unit length (:func:`_solve`), so their solves are all within it.
MARGIN_SCALE = 1e8


def _extend(g: Sequence[Sequence[float]], rows: list[list[float]], order: list[int], j: int) -> bool:
    """Add variable ``j`` to ``order`` and its row to ``rows``, the lower Cholesky factor of ``g``'s (the normal
    equations' matrix, a list of rows) rows and columns ``order``; ``False`` (nothing added) when its pivot is not
    above :data:`MARGIN_PIVOT` of ``g[j][j]`` (its column nearly in the span of the others, or zero), or not above
    the rounding the pivots before it leave (:data:`MARGIN_ROUNDING`)."""
    gj = g[j]
    row: list[float] = []
    for i, p in enumerate(order):
        ri = rows[i]
        s = gj[p]
        for t in range(i):
            s -= ri[t] * row[t]
        row.append(s / ri[i])
    d = gj[j]
    for v in row:
        d -= v * v
    least = min((rows[i][i] * rows[i][i] / g[p][p] for i, p in enumerate(order)), default=1.0)
    if not (d > MARGIN_PIVOT * gj[j] and d * least > MARGIN_ROUNDING * _EPS * gj[j]):
        return False
    row.append(math.sqrt(d))
    rows.append(row)
    order.append(j)
    return True


def _through(rows: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float]:
    """The z with ``L Lᵀ z = rhs``, ``L`` the lower-triangular ``rows`` (:func:`_extend`): forward, then back."""
    k = len(rows)
    y = [0.0] * k
    for i in range(k):
        ri = rows[i]
        s = rhs[i]
        for t in range(i):
            s -= ri[t] * y[t]
        y[i] = s / ri[i]
    for i in range(k - 1, -1, -1):
        s = y[i]
        for t in range(i + 1, k):
            s -= rows[t][i] * y[t]
        y[i] = s / rows[i][i]
    return y


def _candidate(g: Sequence[Sequence[float]], c: Sequence[float], tol: float) -> list[int] | None:
    """The passive set (indices, ascending) Lawson and Hanson's iteration ends on for the normal equations ``g x =
    c`` (``g = aᵀa``, ``c = aᵀb``, as lists), run in Python floats with an incremental Cholesky factor: a guess for
    :func:`nnls` to verify, not its answer (its doubles are not LAPACK's). ``None`` when it gives up: a column nearly
    in the span of the passive ones (:func:`_extend`), a value or gradient off its margin, or no end within 3 n + 3
    entering steps."""
    n = len(c)
    margin = -MARGIN_GRADIENT * tol
    held = [False] * n
    order: list[int] = []
    rows: list[list[float]] = []
    x = [0.0] * n
    w = list(c)
    for _ in range(3 * n + 3):
        j, top = -1, tol
        for k in range(n):
            if not held[k] and w[k] > top:
                j, top = k, w[k]
        if j < 0:
            if all(w[k] < margin for k in range(n) if not held[k]):
                return sorted(order)
            return None  # a free gradient near zero: which end the iteration reaches is not clear from here
        if not _extend(g, rows, order, j):
            return None
        held[j] = True
        while True:
            z = _through(rows, [c[p] for p in order])
            if min(z) > 0:
                x = [0.0] * n
                for p, v in zip(order, z, strict=True):
                    x[p] = v
                break
            alpha = min(x[p] / (x[p] - v) for p, v in zip(order, z, strict=True) if v <= 0)
            keep = []
            for p, v in zip(order, z, strict=True):
                x[p] += alpha * (v - x[p])
                if x[p] > 1e-15:
                    keep.append(p)
                else:
                    x[p] = 0.0
                    held[p] = False
            order, rows = [], []
            for p in keep:
                if not _extend(g, rows, order, p):
                    return None
            if not order:
                break
        for k in range(n):
            if not held[k]:
                gk = g[k]
                s = c[k]
                for p in order:
                    s -= gk[p] * x[p]
                w[k] = s
    return None


def _verified(a: np.ndarray, b: np.ndarray, a_t: np.ndarray, by_column: np.ndarray, tol: float) -> np.ndarray | None:
    """:func:`nnls`'s answer without its iteration, or ``None`` (then the iteration runs). The iteration ends on a
    step whose values are all positive and after which no free gradient is past ``tol``, and its answer is that
    step: :data:`_LSTSQ` on ``by_column.take(passive).T`` and ``b``, written into zeros. Here the passive set is
    guessed (:func:`_candidate`), that very step is taken, and it is returned only when the iteration's own tests
    pass it with room to spare (:data:`MARGIN_GRADIENT`, :data:`MARGIN_VALUE`; the passive columns independent by
    :data:`MARGIN_PIVOT`).

    Why the answers are the same: in exact arithmetic, a passive set whose least-squares values are all positive,
    with every free gradient negative and independent columns, is the one minimiser's support (every minimiser has
    the same residual, so the same gradient; a negative gradient holds its variable at 0; the passive columns
    determine the rest), and Lawson and Hanson's iteration ends on the minimiser's support. In floating point this
    is not a proof: the margins keep the rounding (of relative size 10^-16 times the columns' condition, at most
    about 10^5 here) far from every sign the argument reads. ``tests/test_fit115.py`` holds the two bit for bit on
    the registry's 1,217 solves of a cold ``check`` and on hostile problems (collinear and zero columns, ties,
    negative right-hand sides), where the margins turn the near-degenerate ones to the iteration. Non-finite input,
    or a step LAPACK cannot solve, goes to the iteration as well."""
    g = (a_t @ a).tolist()
    c = (a_t @ b).tolist()
    if not math.isfinite(sum(c) + sum(map(sum, g))):  # a NaN or infinity anywhere (or sums past the largest float)
        return None
    lengths = [g[k][k] for k in range(len(c))]
    if lengths and not min(lengths) * MARGIN_SCALE >= max(lengths):  # unlike scales (or a zero column): iterate
        return None
    passive = _candidate(g, c, tol)
    if passive is None:
        return None
    n = len(c)
    try:
        solved = _LSTSQ(by_column.take(passive, axis=0).T, b)
    except np.linalg.LinAlgError:
        return None
    values = solved.tolist()
    floor = MARGIN_VALUE * max(values, default=0.0)
    if not all(v > 0 and v > floor for v in values):
        return None
    x = np.zeros(n)
    x[passive] = solved
    w = (a_t @ (b - a @ x)).tolist()
    margin = -MARGIN_GRADIENT * tol
    held = set(passive)
    if not all(w[k] < margin for k in range(n) if k not in held):
        return None
    return x


def nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The x ≥ 0 that minimises |a x − b|² (Lawson & Hanson's active-set NNLS, 1974, algorithm 23.10): variables
    enter the passive set by the largest gradient; a step that would make one negative is cut back to the boundary
    and the variable leaves. ``a``: (m, n) float64, ``b``: (m,) float64. Terminates in finitely many steps (capped at
    30 n). Each least-squares step is :data:`_LSTSQ` (``numpy.linalg.lstsq``'s LAPACK call, the same doubles).

    The passive set and the gradient are held as Python lists (round 37: n is one to seven, and NumPy's calls on
    them, with each step's ``tolist``, were two thirds of a cold ``check``'s 7,081 steps); every array NumPy or
    LAPACK computes with (the columns a step solves on, ``x``, the gradient's two products, a cut-back step's
    ``alpha``) is the one round 30 computed, so every double is the same (``tests/test_perf_37.py``). The entering
    variable is chosen in one pass (:func:`_entering`), and a step whose solution is all positive writes it into a
    fresh ``x`` directly (check76).

    A solve first tries the passive set :func:`_candidate` finds on the normal equations (in floats, no NumPy
    call), and returns that set's least-squares step when it is the algorithm's own end by a margin
    (:func:`_verified`): one LAPACK step instead of one an entering variable, the same doubles (the step the
    algorithm ends on is that very call on that very array). Otherwise the active-set iteration runs from x = 0 as
    before (:func:`_active_set`)."""
    m = a.shape[0]
    a_t = a.T
    by_column = np.ascontiguousarray(a_t)  # (n, m): a step's columns taken as rows, the same doubles
    tol = 1e-14 * max(1.0, float(np.abs(a).max(initial=0.0)) * float(np.abs(b).max(initial=0.0)) * m)
    found = _verified(a, b, a_t, by_column, tol)
    if found is not None:
        return found
    return _active_set(a, b, a_t, by_column, tol)


def _active_set(a: np.ndarray, b: np.ndarray, a_t: np.ndarray, by_column: np.ndarray, tol: float) -> np.ndarray:
    """:func:`nnls`'s active-set iteration from x = 0 (``a_t``: ``a.T``; ``by_column``: ``a.T`` C-contiguous;
    ``tol``: the gradient past which a variable enters), as check76 left it: every NumPy and LAPACK call the same."""
    n = a.shape[1]
    held = [False] * n  # the passive set
    lstsq = _LSTSQ
    x = np.zeros(n)
    w = (a_t @ (b - a @ x)).tolist()
    for _ in range(30 * max(n, 1)):
        # The choices read as Python floats, the same comparisons: a NaN gradient is chosen first, as ``argmax``
        # chooses it.
        j = _entering(w, held, tol)
        if j < 0:
            break
        held[j] = True
        while True:
            cols = [k for k in range(n) if held[k]]
            solved = lstsq(by_column.take(cols, axis=0).T, b)  # the passive columns in order: a[:, passive]
            if all(v > 0 for v in solved.tolist()):
                x = np.zeros(n)
                x[cols] = solved
                break
            z = np.zeros(n)
            z[cols] = solved
            passive = np.array(held)
            blocking = passive & (z <= 0)
            alpha = float(np.min(x[blocking] / (x[blocking] - z[blocking])))
            x = x + alpha * (z - x)
            passive &= x > 1e-15
            x[~passive] = 0.0
            held = passive.tolist()
            if not any(held):
                break
        w = (a_t @ (b - a @ x)).tolist()
    return x


@attrs.frozen
class Fit:
    """A fitted stack: ``values`` by fact path (overheads in seconds, shares in (0, 1]; only the fitted ones),
    ``serial`` (``terms.serial``), ``fitted`` (the parameters the runs exercise, in order), and the ``runs`` it used."""

    values: dict[str, float]
    serial: float
    fitted: tuple[str, ...]
    runs: tuple[Run, ...]

    def predict(self, model: RunModel) -> float:
        """The pass seconds the fit gives ``model``."""
        return _predict(model, self.values, self.serial)


def _predict(model: RunModel, values: dict[str, float], serial: float) -> float:
    terms = [0.0] * 5
    for p, c in zip(SHARES, model.components, strict=True):
        terms[TERM_OF[p]] += c / values.get(p, 1.0)
    top = max(terms)
    return (
        values.get("overhead.pass", 0.0)
        + model.layers * values.get("overhead.layer", 0.0)
        + top
        + serial * (sum(terms) - top)
    )


@attrs.frozen
class _Runs:
    """The arrays every solve of one fit reads, built once a fit (not once a solve: a fit solves about 40 times, and
    building them from 1,000 runs each time was a tenth of a calibrate): ``t`` (runs,) measured seconds, ``comp``
    (runs, shares) components, ``layers`` (runs,)."""

    t: np.ndarray
    comp: np.ndarray
    layers: np.ndarray
    #: ``comp`` transposed, (shares, runs), C-contiguous, its rows in :data:`_BY_TERM` order: what :func:`_binding`
    #: scales and sums a row at a time.
    by_share: np.ndarray = attrs.field(eq=False, repr=False)

    @classmethod
    def of(cls, models: Sequence[RunModel]) -> _Runs:
        comp = np.array([m.components for m in models])
        return cls(
            np.array([m.measured_s for m in models]),
            comp,
            np.array([m.layers for m in models]),
            np.ascontiguousarray(comp.T.reshape(len(SHARES), len(models))[_BY_TERM]),
        )


#: The shares in the order :func:`_binding` reads them: :data:`SHARES`'s with ``share.float`` last, so that once
#: ``read`` and ``rewrite`` are added into ``append``'s row and ``float`` into ``array``'s, the five terms are the
#: rows 2 to 6 in term order (memory, host, array, vector, scale).
_BY_TERM = [SHARES.index(p) for p in ("share.read", "share.rewrite", "share.append", "share.host", "share.array",
                                      "share.vector", "share.scale", "share.float")]


def _binding(runs: _Runs, values: Mapping[str, float]) -> np.ndarray:
    """The index of each run's binding term (its largest; the first of equals, the first NaN, as
    :func:`numpy.argmax` chooses) at ``values``: (runs,) int. Each term is the sum of its shares' components, each
    times ``u = 1 / share``, added in :data:`SHARES` order; the sums are the doubles round 36's
    ``terms[:, term] += parts[:, j]`` made from zeros (but the sign of a sum of zeros, which no comparison reads: 0.0
    + -0.0 is 0.0), so the same terms bind, in five NumPy calls rather than thirteen (``tests/test_perf_37.py``)."""
    u = np.array([1.0 / values.get(SHARES[j], 1.0) for j in _BY_TERM])
    parts = runs.by_share * u[:, None]
    parts[1] += parts[0]  # read + rewrite
    parts[2] += parts[1]  # (read + rewrite) + append: the memory term
    parts[4] += parts[7]  # array + float: the array term
    found: np.ndarray = parts[2:7].argmax(axis=0)
    return found


#: A fit's solved steps: (serial share, the binding term of each run) → the fitted parameters' values the NNLS step
#: gives (the step reads nothing else of the runs: the same key is the same least-squares problem, the same doubles).
_Steps = dict[tuple[float, bytes], dict[str, float]]


def _column_norms(a: np.ndarray) -> np.ndarray:
    """``numpy.linalg.norm(a, axis=0)`` of a real float64 ``a`` (m, k): each column's Euclidean length, (k,). The
    arithmetic NumPy's own makes for a real array (``sqrt(add.reduce((a.conj() * a).real, axis=0))``, ``conj()``
    a copy of the same doubles), without its wrapper's checks and conversions (check76: 1,217 calls a cold
    ``check``); ``tests/test_check76.py`` holds the two bit-equal, NaNs, infinities and subnormals included."""
    norms: np.ndarray = np.sqrt(np.add.reduce(a * a, axis=0))
    return norms


def _solve(
    runs: _Runs,
    fitted: tuple[str, ...],
    serial: float,
    start: dict[str, float] | None = None,
    steps: _Steps | None = None,
) -> tuple[dict[str, float], float]:
    """The NNLS fit at one serial share, the binding terms iterated to a fixed point from ``start`` (default: every
    share 1); (values, objective). ``steps``: the NNLS steps this fit has already solved, by serial share and binding
    terms (the fixed points sought from two starts, and the hold-out fits' many serial shares, meet the same
    bindings: two of three steps of a calibrate were solved before), read and added to."""
    t, comp = runs.t, runs.comp
    share_cols = [SHARES.index(p) for p in fitted if p in SHARES]
    n_overheads = ("overhead.pass" in fitted) + ("overhead.layer" in fitted)
    values = dict(start) if start is not None else {p: (1.0 if p in SHARES else 0.0) for p in fitted}
    binding: bytes | None = None  # the binding terms' bytes (int64 each): equal bytes, equal terms
    for _ in range(12):
        now = _binding(runs, values)
        found = now.tobytes()
        if found == binding:
            break
        binding = found
        key = (serial, found)
        if steps is not None and key in steps:
            values.update(steps[key])
            continue
        # Each share's weight: 1 where its term binds the run, the serial share elsewhere ((runs, shares), made at
        # once from each share's term rather than per term and then spread over the shares: the same 1.0 or serial).
        weighted = comp * np.where(_TERM_INDEX[None, :] == now[:, None], 1.0, serial)
        # The columns (the overheads', then the shares' in ``fitted`` order) written into one array and divided in
        # place: the doubles ``np.stack`` of the columns divided by ``t`` made (check76: the set-up round 37 left as
        # the next to measure, 1,217 times a cold check).
        a = np.empty((len(t), n_overheads + len(share_cols)))
        k = 0
        if "overhead.pass" in fitted:
            a[:, k] = 1.0
            k += 1
        if "overhead.layer" in fitted:
            a[:, k] = runs.layers
            k += 1
        a[:, k:] = weighted[:, share_cols]
        a /= t[:, None]
        b = 1.0 - weighted.sum(axis=1) / t  # every share starts at u = 1: v = u − 1 ≥ 0
        # Columns scaled to unit length (seconds a layer and a share's seconds differ by orders of magnitude), so
        # the active set's tolerance means the same for each; the solution scaled back.
        norms = _column_norms(a)
        norms[norms == 0] = 1.0
        x = nnls(a / norms, b) / norms
        step = {p: float(x[k]) if p in OVERHEADS else 1.0 / (1.0 + float(x[k])) for k, p in enumerate(fitted)}
        values.update(step)
        if steps is not None:
            steps[key] = step
    predicted = _predicted(comp, runs.layers, values, serial)
    return values, float(np.sum((predicted / t - 1.0) ** 2))


def _predicted(comp: np.ndarray, layers: np.ndarray, values: dict[str, float], serial: float) -> np.ndarray:
    """:func:`_predict` of every run at once (``comp``: (runs, shares) components, ``layers``: (runs,)), the same
    operations in the same order, so each figure is the same double: a fit evaluates its objective about 40 times,
    and 1,000 runs (a 240 KB measurement file) made the per-run Python loop 8.6 s of a 17 s calibrate."""
    parts = comp / np.array([values.get(p, 1.0) for p in SHARES])
    terms = np.zeros((len(comp), 5))
    for j, term in enumerate(_TERM_INDEX.tolist()):  # in SHARES order, as _predict adds them
        terms[:, term] += parts[:, j]
    top = terms.max(axis=1)
    total = terms[:, 0] + terms[:, 1] + terms[:, 2] + terms[:, 3] + terms[:, 4]
    predicted: np.ndarray = (
        values.get("overhead.pass", 0.0) + layers * values.get("overhead.layer", 0.0) + top + serial * (total - top)
    )
    return predicted


def exercised(models: Sequence[RunModel]) -> tuple[str, ...]:
    """The parameters the runs inform: both overheads, and each share whose component is not zero in every run."""
    comp = np.array([m.components for m in models])
    total = np.array([m.measured_s for m in models])
    out = list(OVERHEADS)
    for j, p in enumerate(SHARES):
        if (comp[:, j] / total > UNUSED).any():
            out.append(p)
    return tuple(out)


#: The fits this process has solved, by :func:`_fit_key` (oldest first; at most :data:`_FITS_KEPT`): (values,
#: serial). A cold one-fact ``diff`` fitted the same runs twice, HEAD's ``check`` and the re-fit of a private copy
#: whose recomputed card no run reads (15 of its 33 fits: round 31, docs/PERFORMANCE.md).
_FITS: dict[bytes, tuple[dict[str, float], float]] = {}

#: How many fits :data:`_FITS` holds (a calibrate fits 1 + cards + checkpoints times; each key is about 70 bytes a
#: run).
_FITS_KEPT = 64


def _fit_key(runs: _Runs, fitted: tuple[str, ...]) -> bytes:
    """Everything :func:`fit`'s result is a function of, as bytes: the fitted parameters in order, each array's
    shape and float64 bytes (``t``, ``comp``, ``layers``: the solve reads nothing else of the runs; NaNs and signed
    zeros keep their bits), and the grid. The same key is the same arithmetic on the same doubles."""
    parts = [repr((fitted, SERIAL_GRID, runs.t.shape, runs.comp.shape, runs.layers.shape)).encode()]
    for array in (runs.t, runs.comp, runs.layers):
        parts.append(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return b"\0".join(parts)


#: The kind of a fit's entry in the cache of built objects (:func:`_kept_fit`).
FIT_KIND = "calibrate-fit-1"
#: Whether :func:`fit` looks in (and keeps to) the cache folder: only inside :func:`fits_kept`.
_ACROSS: list[bool] = [False]
#: (cache folder, :func:`_fit_key` key) of each fit this process kept in, or read from, that folder (not kept again).
_ON_DISK: set[tuple[str, bytes]] = set()


def _on_disk(key: bytes) -> tuple[str, bytes]:
    """``key`` in the cache folder in use now, as :data:`_ON_DISK` holds it."""
    from passprice import cache

    try:
        return str(cache.cache_dir()), key
    except RuntimeError:  # no home folder: nothing is kept anyway
        return "", key


@contextlib.contextmanager
def fits_kept() -> Iterator[None]:
    """Within the ``with``, :func:`fit` gives a fit another process solved and kept (:func:`_kept_fit`) and keeps
    those it solves. For a one-fact ``diff``'s re-fit of its private copy (:func:`passprice.review.impacts._refit`),
    which solved the same 15 fits every run, about half of a warm review (speed50); ``check`` keeps its stacks' findings
    whole (:mod:`passprice.stackfits`), and a fit asked for anywhere else is solved in the process as ever."""
    before = _ACROSS[0]
    _ACROSS[0] = True
    try:
        yield
    finally:
        _ACROSS[0] = before


def _fit_data(key: bytes) -> bytes:
    """What a fit's entry is keyed by besides passprice's code and libraries (every object entry's key): NumPy's
    installed files (:func:`passprice.stackfits._numpy_stamp`: the least squares' arithmetic) and :func:`_fit_key`."""
    from passprice.stackfits import _numpy_stamp

    return _numpy_stamp().encode("utf-8", "surrogateescape") + b"\0" + key


def _kept_fit(key: bytes) -> tuple[dict[str, float], float] | None:
    """The fit of :func:`_fit_key` ``key`` another process solved and kept (:func:`_keep_fit`), or ``None``: the
    cache bypassed, no entry, or one that is not a (``{parameter: float}``, float) pair. Raises nothing."""
    from passprice import cache

    if not _ACROSS[0] or not cache.enabled():
        return None
    kept = cache.kept_object(FIT_KIND, _fit_data(key), tuple)
    if kept is None or len(kept) != 2:
        return None
    values, serial = kept
    if type(serial) is not float or type(values) is not dict:
        return None
    if not all(type(k) is str and type(v) is float for k, v in values.items()):
        return None
    _ON_DISK.add(_on_disk(key))
    return values, serial


def _keep_fit(key: bytes, solved: tuple[dict[str, float], float]) -> None:
    """Keep the fit ``solved`` of :func:`_fit_key` ``key`` in the cache folder for a later process
    (:func:`_kept_fit`); silently nothing when the cache is bypassed or cannot be written."""
    from passprice import cache

    if _ACROSS[0] and cache.enabled():
        cache.keep_object(FIT_KIND, _fit_data(key), (dict(solved[0]), solved[1]))
        _ON_DISK.add(_on_disk(key))


def fit(models: Sequence[RunModel], fitted: tuple[str, ...] | None = None) -> Fit:
    """The least-squares fit of ``models`` (module docstring): the best ``terms.serial`` on the grid, and for it the
    NNLS values. Raises :class:`InputError` for no runs. A fit of the same numbers (:func:`_fit_key`: measured
    seconds, components, layers, fitted parameters) solved before in this process, or in another and kept in the
    cache folder (:func:`_kept_fit`, within :func:`fits_kept`; NumPy's installed files in its key), is given again,
    not re-solved: the same doubles (pickled floats keep their bits), a fresh ``values`` dict, ``runs`` those of
    ``models``."""
    if not models:
        raise InputError("calibrate: no runs to fit")
    fitted = fitted if fitted is not None else exercised(models)
    runs = _Runs.of(models)
    key = _fit_key(runs, fitted)
    known = _FITS.get(key)
    if known is not None:
        if _ACROSS[0] and _on_disk(key) not in _ON_DISK:  # solved before fits_kept (HEAD's check): kept for later
            _keep_fit(key, known)
    else:
        known = _kept_fit(key)
        if known is not None:
            _remember(key, known)
    if known is not None:
        return Fit(dict(known[0]), known[1], fitted, tuple(m.run for m in models))
    solved = _fit(runs, fitted)
    _keep_fit(key, solved)
    _remember(key, solved)
    return Fit(solved[0], solved[1], fitted, tuple(m.run for m in models))


def _remember(key: bytes, solved: tuple[dict[str, float], float]) -> None:
    """Hold the fit ``solved`` of :func:`_fit_key` ``key`` in :data:`_FITS` (its oldest dropped past
    :data:`_FITS_KEPT`)."""
    if _FITS_KEPT > 0:
        while len(_FITS) >= _FITS_KEPT:
            del _FITS[next(iter(_FITS))]
        _FITS[key] = (dict(solved[0]), solved[1])


def _fit(runs: _Runs, fitted: tuple[str, ...]) -> tuple[dict[str, float], float]:
    """:func:`fit`'s solve of ``runs`` for ``fitted``: (values, serial)."""
    steps: _Steps = {}
    best: tuple[float, dict[str, float], float] | None = None
    for serial in SERIAL_GRID:
        # Which term binds a run depends on the values, so the fixed point may be a local one: it is sought from
        # every share at 1 and from the best values found so far, and the better kept.
        starts: list[dict[str, float] | None] = [None] if best is None else [None, best[1]]
        for start in starts:
            values, objective = _solve(runs, fitted, serial, start, steps)
            if best is None or objective < best[0] - 1e-15:
                best = (objective, values, serial)
    assert best is not None
    return best[1], best[2]


def error(fitted: Fit, model: RunModel) -> float:
    """The relative error of the predicted tokens/s: measured pass / predicted pass − 1."""
    return model.measured_s / fitted.predict(model) - 1.0


@attrs.frozen
class HoldOut:
    """Hold-out errors by group (``by``: ``card`` or ``checkpoint``): ``errors`` (run id → relative error of the
    tokens/s predicted by a fit without the run's group), ``groups`` (group → its runs' ids)."""

    by: str
    errors: dict[str, float]
    groups: dict[str, tuple[str, ...]]

    @property
    def mean(self) -> float:
        """Mean absolute relative error over every held-out run."""
        return float(np.mean([abs(e) for e in self.errors.values()])) if self.errors else 0.0

    @property
    def possible(self) -> bool:
        """Whether any run was held out: not when every run is of one group (the runs measured one card, or one
        checkpoint), for a fit without that group has no run left."""
        return bool(self.errors)

    @property
    def worst(self) -> tuple[str, float]:
        """The run with the largest absolute error, and its error. Raises :class:`ValueError` when no run was held
        out (:attr:`possible` false)."""
        if not self.errors:
            raise ValueError(f"no run was held out by {self.by}: every run is of one {self.by}")
        run = max(self.errors, key=lambda r: abs(self.errors[r]))
        return run, self.errors[run]


def hold_out(models: Sequence[RunModel], key: Callable[[Run], str], by: str) -> HoldOut:
    """Fit without each group (``key`` of a run) and predict it; the fit keeps the parameters the whole set
    exercises. A group whose removal leaves no run is skipped."""
    fitted_params = exercised(models)
    groups: dict[str, list[RunModel]] = {}
    for m in models:
        groups.setdefault(key(m.run), []).append(m)
    errors: dict[str, float] = {}
    for name, held in groups.items():
        rest = [m for m in models if key(m.run) != name]
        if not rest:
            continue
        f = fit(rest, fitted_params)
        errors.update({m.run.id: error(f, m) for m in held})
    return HoldOut(by, errors, {g: tuple(m.run.id for m in ms) for g, ms in groups.items()})


@attrs.frozen
class Calibration:
    """A stack calibrated: the ``stack``, its ``fit`` on every run, the in-sample ``errors`` (run id → relative
    error), and the hold-out errors ``by_card`` and ``by_checkpoint``."""

    stack: Stack
    fit: Fit
    errors: dict[str, float]
    by_card: HoldOut
    by_checkpoint: HoldOut
    models: tuple[RunModel, ...] = attrs.field(repr=False)


#: The most runs a stack is fitted from unless :data:`RUNS_VARIABLE` says otherwise: 250, more than twice the largest
#: published set (111 llama-bench runs). A calibrate prices each run ten times (one pass shape a run: about 4 ms when
#: the runs' positions differ) and fits them 1 + cards + checkpoints times (the hold-out fits), so the runs times the
#: fits are bounded too, at :data:`FITS_PER_RUN` times the runs' bound (4,000: 250 runs on up to 15 cards and
#: checkpoints, fewer on more): 250 runs fitted 27 times took 2.1 to 2.5 s, 250 fitted 15 times 1.5 s, the
#: registered 111 fitted 15 times 1.1 s; the 1,000 runs one measurement file may hold (schema/measurement.schema.json)
#: took 5.3 s fitted 15 times.
MAX_RUNS = 250
#: Fits a calibrate may make per run of its bound (:data:`MAX_RUNS`): runs × (1 + cards + checkpoints) ≤ 16 × 250.
FITS_PER_RUN = 16
#: The environment variable that raises (or lowers) :data:`MAX_RUNS`, and with it the runs × fits bound.
RUNS_VARIABLE = "PASSPRICE_MAX_FIT_RUNS"


def runs_cap(variable: str = RUNS_VARIABLE, default: int = MAX_RUNS) -> int:
    """The most runs a command prices: the environment's ``variable`` when set (and not empty), else ``default``
    (calibrate's: :data:`RUNS_VARIABLE`, :data:`MAX_RUNS`; validate's: :data:`passprice.validate.RUNS_VARIABLE`).
    Raises :class:`InputError` when the variable is not a whole number from 1 to 10^9."""
    text = os.environ.get(variable)
    if not text:
        return default
    digits = text.strip()
    if not re.fullmatch(r"[0-9]{1,10}", digits, flags=re.ASCII) or not 1 <= int(digits) <= 10**9:
        raise InputError(f"{variable}: {text[:40]!r} is not a number of runs (a whole number from 1 to 10^9)")
    return int(digits)


def stack_to_fit(root: Root, stack_name: str) -> Path:
    """The file of stack ``stack_name`` that ``calibrate`` fits (:func:`passprice.stacks.stack_path`).

    Raises :class:`~passprice.errors.NotFound` when there is none, and, when measured runs of ``root`` name it,
    saying how a stack is started: calibrate fits the facts of a stack that exists, and a new one is a file written
    by hand first (three runs naming ``vllm-gaudi-2410`` were told only "stack 'vllm-gaudi-2410': not found
    (registered: …)", and the README said nowhere what the file must hold: walkthrough 23)."""
    import shlex

    from passprice.registry import OWN_STACK

    try:
        return stack_path(root, stack_name)
    except NotFound as e:
        if ": not found in " not in str(e):
            raise
        said = str(e).split(OWN_STACK, 1)[0]  # the hint `price --stack` gives (copy a file, calibrate it): its own here
        try:
            runs = load_runs(root, stack_name)
        except InputError:
            runs = []
        if not runs:
            raise NotFound(said) from None
        raise NotFound(
            f"{said}; {len(runs):,} measured run{'s' if len(runs) != 1 else ''} of {_files(runs)} name it: calibrate "
            f"fits the facts of a stack that exists, so write {shown(root.stacks / f'{stack_name}.toml')} first, a "
            "[stack] table with its name, integer_matrices (array or vector: where its integer-quantised matrix "
            "kernels run) and float_matrices (tensor or vector), and a memory.reserved fact, the memory its runtime "
            "keeps for itself (every price under a stack reads it and calibrate does not fit it: 0 GiB if it keeps "
            "none; schema/stack.schema.json; the registered stacks' files show each key); then run "
            f"passprice calibrate --stack {shlex.quote(stack_name)} again: it writes the fitted facts"
        ) from None  # quoted: a stack 'a b' was told to run "calibrate --stack a b again" (attack round 38)


def calibrate(root: Root, stack_name: str, runs: Sequence[Run] | None = None) -> Calibration:
    """Fit stack ``stack_name`` to its measured runs (``runs``, default every run of the stack in ``root``), with
    both hold-out errors. Raises :class:`InputError` (no runs, more runs than :func:`runs_cap`, a run that does not
    price; a stack not registered, :func:`stack_to_fit`); a measurement file that does not read, and a run that does
    not price, are named relative to ``root`` (:func:`passprice.validate.registry_relative`, as ``validate`` names
    them: session 28 named them ROOT/registry/… under ``--root``)."""
    stack_to_fit(root, stack_name)
    stack = load_stack(root, stack_name)
    from passprice.validate import registry_relative

    try:
        runs = list(runs) if runs is not None else load_runs(root, stack.name)
    except InputError as e:  # a file named as validate, check and the listings name it (not ROOT/registry/…)
        raise InputError.of(registry_relative(root, e.lines)) from None
    if not runs:
        # named as every registry file is (registry.in_root): it read ROOT/registry/measurements under --root ROOT
        raise InputError(f"calibrate: no measured runs of stack {stack.name!r} in {in_root(root, root.measurements)}")
    cap = runs_cap()
    fits = 1 + len({r.card for r in runs}) + len({r.checkpoint for r in runs})
    if len(runs) > cap or len(runs) * fits > FITS_PER_RUN * cap:
        most = min(cap, FITS_PER_RUN * cap // fits)
        raise InputError(
            f"{_files(runs)}: {len(runs):,} runs of stack {stack.name}, past the {most:,} a stack is fitted from "
            f"when a calibrate fits them {fits} times (all, and without each card and each checkpoint: runs × fits "
            f"at most {FITS_PER_RUN * cap:,}, runs at most {cap:,}); keep fewer runs of the stack, or set "
            f"{RUNS_VARIABLE} to allow more"
        )
    try:
        models = model_runs(root, stack, runs)
    except InputError as e:
        raise InputError.of(registry_relative(root, e.lines)) from None
    whole = fit(models)
    errors = {m.run.id: error(whole, m) for m in models}
    return Calibration(
        stack,
        whole,
        errors,
        hold_out(models, lambda r: r.card, "card"),
        hold_out(models, lambda r: r.checkpoint, "checkpoint"),
        tuple(models),
    )


#: Significant digits a calibrated figure is written to (it is not known better), and the relative difference a re-fit
#: by ``passprice check`` may show from it and still agree (four digits are within 0.05 %; the rest is room for
#: floating-point least squares run on another machine).
DIGITS = 4
TOLERANCE = 0.001



def _rounded(value: float) -> float:
    """Four significant digits (a calibrated figure is not known better)."""
    return rounded(value, DIGITS)


def _files(runs: Sequence[Run]) -> str:
    return ", ".join(f"registry/measurements/{s}.toml" for s in sorted({r.source for r in runs}))


def range_facts(stack: str, runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """Where a stack's facts hold, read off the runs they were fitted to, as TOML entries by path (``derived``,
    each with a run derivation naming every run and the figure it gave): ``range.rows.min``/``max`` (the least and
    most token-rows a pass: a measured run decodes one token a sequence, so its batch) and
    ``range.position.min``/``max`` (the least first and the largest last cached position). Raises
    :class:`ValueError` for no runs."""
    out: dict[str, dict[str, Any]] = {}
    for path, method, figure, unit, what in (
        ("range.rows.min", "min", "rows", "rows", "the least batch"),
        ("range.rows.max", "max", "rows", "rows", "the largest batch"),
        ("range.position.min", "min", "first", "positions", "the least first position"),
        ("range.position.max", "max", "last", "positions", "the largest last position"),
    ):
        inputs = [RunInput(r.id, int(figure_of(r, figure))) for r in runs]
        out[path] = {
            "value": int(extreme(method, [i.value for i in inputs])),
            "unit": unit,
            "provenance": "derived",
            "source": CALIBRATION_SOURCE,
            "locator": f"{what} of the {len(runs)} runs stack {stack} was calibrated on, in {_files(runs)}",
            "derivation": RunDerivation(method, figure, tuple(inputs)).to_entry(),
        }
    return out


def fit_errors(cal: Calibration) -> dict[str, float]:
    """The fit's errors as a fitted fact's derivation records them (``errors``): the mean and largest |relative
    error| of tokens/s in sample (``in_sample_mean``, ``in_sample_max``) and with each card and each checkpoint held
    out (``card_out_*``, ``checkpoint_out_*``), each a fraction rounded to 4 decimals. A hold-out that was not
    possible (every run on one card, or of one checkpoint) writes no error: an absent ``card_out_*`` is what
    :mod:`passprice.stackreach` reads as "no measured error across cards", never a 0."""
    mean, most = summary(cal.errors.values())
    errors = {"in_sample_mean": round(mean, 4), "in_sample_max": round(most, 4)}
    for h, key in ((cal.by_card, "card_out"), (cal.by_checkpoint, "checkpoint_out")):
        if h.possible:
            errors[f"{key}_mean"] = round(h.mean, 4)
            errors[f"{key}_max"] = round(abs(h.worst[1]), 4)
    return errors


#: How far (a fraction, absolute) a recorded fit error may lie from the one ``passprice check`` computes again and
#: still agree: the rounding to 4 decimals (0.00005) and room for least squares run on another machine; a hand edit
#: of 6.9 % to 0.9 % is 0.06.
ERRORS_SLACK = 0.0005


def _percent(fraction: float) -> str:
    """A recorded error ``fraction`` as a percentage to 4 significant digits, a ``-0.0`` written by hand as ``0``
    (``in_sample_mean = -0.0`` read "-0 % (re-fitted: 1.09 %)", attack round 53)."""
    return f"{100 * float(fraction) + 0.0:.4g}"


def errors_disagree(recorded: Mapping[str, float], again: Mapping[str, float]) -> list[str]:
    """Each error of ``recorded`` (a derivation's ``errors``) that ``again`` (:func:`fit_errors` of today's re-fit)
    does not give, one ``KEY: RECORDED % (re-fitted: NOW %)`` phrase each, in ``again``'s order then the recorded
    names it lacks (``KEY: RECORDED % (re-fitted: not possible)``); a key ``again`` has that ``recorded`` lacks is
    ``KEY: none recorded (re-fitted: NOW %)``. Empty when every key agrees within :data:`ERRORS_SLACK`."""
    out: list[str] = []
    for key, now in again.items():
        if key not in recorded:
            out.append(f"{key}: none recorded (re-fitted: {100 * now:.4g} %)")
        elif abs(float(recorded[key]) - now) > ERRORS_SLACK:
            out.append(f"{key}: {_percent(recorded[key])} % (re-fitted: {100 * now:.4g} %)")
    out += [f"{key}: {_percent(v)} % (re-fitted: not possible)" for key, v in recorded.items()
            if key not in again]
    return out


def derived_facts(cal: Calibration) -> dict[str, dict[str, Any]]:
    """The fitted facts as TOML entries (``derived``, citing :data:`CALIBRATION_SOURCE` with a locator naming the
    runs' files), by path: the fitted overheads (in µs) and shares, ``terms.serial``, then where the facts hold
    (:func:`range_facts`). A fitted fact's derivation is a :class:`~passprice.derivations.RunDerivation`: the method
    (:data:`METHOD`), every run by id with the tokens/s it measured, the rounding, the tolerance a re-fit by
    ``passprice check`` must meet, and the fit's errors in sample and held out as reported."""
    runs = cal.fit.runs
    locator = (
        f"the {len(runs)} runs of stack {cal.stack.name} in {_files(runs)} (each named, with its tokens/s, in the "
        f"derivation), fitted by passprice calibrate --stack {cal.stack.name}"
    )
    derivation = RunDerivation(
        METHOD,
        "tokens_per_s",
        tuple(RunInput(r.id, r.tokens_per_s) for r in runs),
        DIGITS,
        TOLERANCE,
        fit_errors(cal),
    ).to_entry()
    out: dict[str, dict[str, Any]] = {}
    for p in (*cal.fit.fitted, "terms.serial"):
        v = cal.fit.serial if p == "terms.serial" else cal.fit.values[p]
        if p in OVERHEADS:
            entry: dict[str, Any] = {"value": _rounded(v * 1e6), "unit": "us"}
        else:
            entry = {"value": _rounded(v), "unit": "1"}
        entry.update(
            {"provenance": "derived", "source": CALIBRATION_SOURCE, "locator": locator, "derivation": derivation}
        )
        if p in SHARES and v >= 1.0 - 1e-9:
            entry["note"] = "At its bound: the runs ask for no less than the card's own rate here."
        out[p] = entry
    out.update(range_facts(cal.stack.name, runs))
    return out


#: The keys of a fitted fact's table, in the order :func:`stack_text_with` writes them (``derivation`` last).
_ENTRY_KEYS = ("value", "unit", "provenance", "source", "locator", "note")


def _plain_text_with(before: str, entries: dict[str, dict[str, Any]]) -> str | None:
    """:func:`stack_text_with`'s document without its layout: ``before`` read by ``tomllib``, each entry set at its
    path as :func:`stack_text_with` sets it (an existing table replaced where it stands, a new one appended, its
    keys in :data:`_ENTRY_KEYS` order), written by :func:`passprice.plaintoml.dumps`; ``None`` where that cannot be
    done exactly (the caller then writes with tomlkit). Raises nothing."""
    import tomllib

    from passprice import plaintoml, schema

    try:
        document: Any = schema.toml_loads(before)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    for key, entry in entries.items():
        parent = document
        parts = key.split(".")
        for part in parts[:-1]:
            parent = parent.setdefault(part, {})
            if not isinstance(parent, dict):
                return None
        table = {k: entry[k] for k in _ENTRY_KEYS if k in entry}
        if "derivation" in entry:
            table["derivation"] = entry["derivation"]
        parent[parts[-1]] = table
    return plaintoml.dumps(document)


def stack_text_with(path: Path, entries: dict[str, dict[str, Any]], keep_layout: bool = True) -> str:
    """The stack file's text with each entry set at its path (tomlkit: the rest of the file, its comments, key
    order and line endings, stay as written; an existing table is replaced whole, a new one appended). With
    ``keep_layout`` false (a private copy's file, read only by passprice:
    :func:`passprice.review.impacts.recomputed_prices`) the same document, comments and layout not kept
    (:func:`_plain_text_with`; tomlkit where it cannot write the document exactly). Raises :class:`InputError` for a
    file that is not a regular file or holds more than :data:`passprice.edit.MAX_EDITED_BYTES`
    (:func:`passprice.edit.edited_bytes`)."""
    import tomlkit

    from passprice.edit import edited_bytes, in_line_endings

    # No newline translation: a CRLF file stays CRLF. At most MAX_EDITED_BYTES, as `fact set` (round 23: a valid
    # 993 KB stack, its facts and 900 KB of comments, took `calibrate` 7.9 s of CPU, 6 s of it tomlkit's parse).
    before = edited_bytes(path).decode("utf-8")
    if not keep_layout:
        plain = _plain_text_with(before, entries)
        if plain is not None:
            return plain
    document = tomlkit.parse(before)
    arrays: dict[str, Any] = {}  # the runs of one fit, built once for its facts (_derivation_table)
    for key, entry in entries.items():
        parent: Any = document
        parts = key.split(".")
        for part in parts[:-1]:
            if part not in parent:
                parent[part] = tomlkit.table(is_super_table=True)
            parent = parent[part]
        table = tomlkit.table()
        for k in _ENTRY_KEYS:
            if k in entry:
                table[k] = entry[k]
        if "derivation" in entry:
            table["derivation"] = _derivation_table(entry["derivation"], arrays)
            table["derivation"].add(tomlkit.nl())  # a blank line after each fact, as written by hand
        else:
            table.add(tomlkit.nl())
        parent[parts[-1]] = table
    return in_line_endings(tomlkit.dumps(document).rstrip("\r\n") + "\n", before)


def _derivation_table(derivation: Any, arrays: dict[str, Any] | None = None) -> Any:
    """A run derivation as a TOML table: its scalars, ``errors`` inline, ``runs`` one inline table a line.

    ``arrays``: the ``runs`` arrays already built, by the text of their runs, each reused as it is for another
    derivation naming the same runs (a fit's 13 facts each list its 111 runs: built 13 times, the runs arrays were a
    fifth of a calibrate that writes; tomlkit renders the one array object the same at each place)."""
    import tomlkit

    if not isinstance(derivation, dict):
        return derivation
    table = tomlkit.table()
    for k, v in derivation.items():
        if k == "errors":
            inline = tomlkit.inline_table()
            inline.update(v)
            table[k] = inline
        elif k == "runs":
            known = repr(v)
            array = arrays.get(known) if arrays is not None else None
            if array is None:
                array = tomlkit.array()
                for r in v:
                    item = tomlkit.inline_table()
                    item.update(r)
                    array.append(item)
                array.multiline(True)
                if arrays is not None:
                    arrays[known] = array
            table[k] = array
        else:
            table[k] = v
    return table


def _current_stack(root: Root, path: Path) -> dict[str, Any] | None:
    """The stack file at ``path`` as any read of it gives it (:func:`passprice.schema.load`: parsed and validated,
    or from the cache of validated files where the same bytes, schema and passprice were validated before), or
    ``None`` where it does not read or validate (its writer then says why, as before)."""
    from passprice import schema

    try:
        return schema.load(path, "stack", root.schema)
    except (InputError, SchemaError):
        return None


def _holds(document: dict[str, Any], entries: dict[str, dict[str, Any]]) -> bool:
    """Whether ``document`` already holds every one of ``entries`` as :func:`_plain_text_with` would set it: the
    table at its path the same (:func:`passprice.plaintoml.same`: keys in the same order, values of the same types,
    floats of the same bits), so setting them all gives the same document."""
    from passprice import plaintoml

    for key, entry in entries.items():
        parent: Any = document
        *parents, leaf = key.split(".")
        for part in parents:
            parent = parent.get(part) if isinstance(parent, dict) else None
        table = {k: entry[k] for k in _ENTRY_KEYS if k in entry}
        if "derivation" in entry:
            table["derivation"] = entry["derivation"]
        if not isinstance(parent, dict) or leaf not in parent or not plaintoml.same(table, parent[leaf]):
            return False
    return True


def write_calibration(root: Root, cal: Calibration, keep_layout: bool = True) -> Path:
    """Write the fitted facts into the stack's file (read again and validated under the file's lock,
    :func:`passprice.edit.locked`, then written atomically). Returns its path. ``keep_layout`` false: the file's
    comments and layout are not kept (:func:`stack_text_with`; for a private copy only passprice reads), and a file
    already holding every fitted fact as it would be written (:func:`_holds`) is left as it is: a one-fact diff's copy
    re-fits a stack no run of which is on the changed card, so its fit is the file's, and the file's unchanged bytes
    are read from the cache of validated files, not parsed and validated again (round 33). Raises
    :class:`InputError` when the result would not validate, or another edit holds the file past the lock's wait."""
    from passprice import schema
    from passprice.files import write_atomically
    from passprice.stacks import stack_from_document

    path = stack_path(root, cal.stack.name)
    from passprice.edit import locked

    # The read-modify-write holds the file's lock, as `fact set` does (attacker round 16: two writers of one stack
    # file, a calibrate and an edit, could lose one): the file is read again under it, its fitted facts replaced.
    with locked(path):
        entries = derived_facts(cal)
        current = None if keep_layout else _current_stack(root, path)
        if current is not None and _holds(current, entries):
            stack_from_document(cal.stack.name, current, str(path))  # as a written document is checked
            return path  # the private copy's fit is the file's: nothing to write (round 33)
        text = stack_text_with(path, entries, keep_layout)
        document = schema.toml_loads(text)
        try:
            schema.validate(document, "stack", str(path), root.schema)
        except SchemaError as e:
            raise unwritable_fit(cal, e) from None
        stack_from_document(cal.stack.name, document, str(path))
        write_atomically(path, text, force=True)
    return path


def unwritable_fit(cal: Calibration, error: SchemaError) -> InputError:
    """One line for a fit the stack's file cannot hold (``error``: the stack schema's problems with the fitted
    facts written in): the runs, not the stack file, are what to look at.

    Schema-valid runs whose tokens/s no stack fits (every other run of 0.01 tokens/s, the rest 1e9) gave a fit
    missing them by 4,079,869 %: the 54 derivation errors past the 1,000 a stack file records were each printed as a
    problem of ``facts/stacks/S.toml`` (``overhead.pass.derivation.errors.in_sample_max: 40798.6941 is greater than
    the maximum of 1000``), a file the user did not write and a calibrate had not written (attack round 45). Runs all
    at 0.01 tokens/s fit an overhead of 99,980,000 µs a pass, past the 1,000,000 µs an overhead may be, said the
    same way. Now: the stack, the runs' files, the first figure that cannot be written and how many more, and the
    run the fit misses most, with its error."""
    first = error.problems[0] if error.problems else "the fitted facts do not validate"
    more = f" (and {len(error.problems) - 1:,} more)" if len(error.problems) > 1 else ""
    run = max(cal.errors, key=lambda r: abs(cal.errors[r])) if cal.errors else None
    off = 100 * cal.errors[run] if run is not None else 0.0
    worst = f"; the run it misses most: {run} (tokens/s predicted {off:+,.1f} %)" if abs(off) >= 1 else ""
    return InputError(
        f"{_files([m.run for m in cal.models])}: calibrate --stack {cal.stack.name}: the fit of its "
        f"{len(cal.models):,} runs is no stack a file holds: {first}{more}{worst}; check the runs' tokens_per_s "
        "(nothing written)"
    )


def summary(values: Iterable[float]) -> tuple[float, float]:
    """(mean, max) of the absolute values."""
    xs = [abs(v) for v in values]
    return (float(np.mean(xs)), float(np.max(xs))) if xs else (0.0, 0.0)


def points(runs: Iterable[Run]) -> int:
    """How many points ``runs`` stand at: distinct (card, checkpoint, batch, first and last position, routing), what
    prices a run (:meth:`passprice.measurements.Run.spec`); runs at one point differ to the fit in tokens/s alone.
    Raises nothing."""
    return len({(r.card, r.checkpoint, r.batch, r.first, r.last, r.routing) for r in runs})


def calibration_cautions(cal: Calibration) -> list[str]:
    """What a user should not read into the fit, one line each: fewer runs than fitted facts (``terms.serial``
    counted): the fit matching every run (in-sample error 0.0 %) says nothing, and one that misses them (its facts
    bounded, or the runs not telling them apart) says only what it could not match; and a hold-out that was not
    possible (every run of one card, or of one checkpoint), so nothing says how the facts do on another card or
    model; and a stack without the ``memory.reserved`` every price under it reads, which no fit writes.
    Walkthrough 2 (session 11): 2 runs on one card and one checkpoint fitted 8 facts, "in sample 0.0 %", written as
    derived facts without a word. Runs are counted by the points they stand at (:func:`points`): 200 runs repeating
    one card, checkpoint, batch and positions fitted 8 facts without a word, as many runs as that being no more than
    one to the fit (tests/test_attack187.py)."""
    runs = len(cal.fit.runs)
    at = points(cal.fit.runs)
    facts = len(cal.fit.fitted) + 1
    out = []
    if at <= facts:
        # Slip52: 3 runs fitting 8 facts read "the fit can match every run, so its in-sample error says nothing"
        # beside a 4.0 % mean error: the facts are bounded (shares in (0, 1], overheads at least 0) and runs may not
        # move each apart, so no more runs than facts need not be matched. Said as the errors are.
        mean, _ = summary(cal.errors[r.id] for r in cal.fit.runs if r.id in cal.errors)
        more = "measure more runs (other batches, positions, cards, checkpoints)"
        head = f"{runs} run{'s' * (runs != 1)} fit {facts} facts (terms.serial included)"
        if at < runs:
            head = (f"{runs} runs at {at} point{'s' * (at != 1)} (a run at another's card, checkpoint, batch and "
                    f"positions tells the fit nothing new) fit {facts} facts (terms.serial included)")
        if round(mean * 100, 1) == 0:
            out.append(f"{head}: the fit matches every run (in-sample error 0.0 %), as so few runs let it, so its "
                       f"in-sample error says nothing; {more}")
        else:
            out.append(f"{head}: no more runs than facts, yet the fit misses them by {mean * 100:.1f} % mean (its "
                       "facts are bounded, or these runs do not tell them apart): that error is what the fit could not "
                       f"match, not a check of how it prices anything else; {more}")
    alone = [h.by for h in (cal.by_card, cal.by_checkpoint) if not h.possible]
    if alone:
        what = " and ".join(f"one {by}" for by in alone)
        out.append(
            f"every run is of {what}: no held-out check was possible, so nothing says how these facts price "
            f"another {' or '.join(alone)}; add runs of others before trusting them there"
        )
    stack = cal.stack
    for path in (*cal.fit.fitted, "terms.serial"):
        had = stack.facts.get(path)
        if had is not None and Provenance.DERIVED.weaker_than(had.provenance):
            # Walkthrough 24: a per-pass overhead measured with a profiler (overhead.pass 2 ms, measured) was
            # replaced by the fit's derived 2000 us without a word: calibrate holds no fact fixed.
            out.append(
                f"{path} is {had.describe()} ({had.provenance.value}) in facts/stacks/{stack.name}.toml: calibrate "
                "fits every overhead and share its runs exercise and holds none fixed, so it replaces it with the "
                "fit (derived, a weaker provenance); keep your figure's citation in the measured runs' notes, or "
                "leave the stack unfitted"
            )
    if "memory.reserved" not in stack.facts and not any("memory.reserved" in f for f in stack.cards.values()):
        # Walkthrough 24: a stack written with no memory.reserved calibrated without a word, then every price
        # under it was refused StackLacks.
        out.append(
            f"stack {stack.name} has no memory.reserved fact, which every price under it reads and calibrate does "
            f"not fit: write it in facts/stacks/{stack.name}.toml by hand (0 GiB with its citation if the runtime "
            "keeps none), else every price under the stack is refused StackLacks"
        )
    return out


def calibration_json(cal: Calibration) -> dict[str, Any]:
    """The calibration for ``--json``: the stack, the runs, the fitted values (base units), ``terms.serial``, the
    in-sample and hold-out errors (mean, max, and each run's), and the parameters not fitted."""

    def holdout(h: HoldOut) -> dict[str, Any] | None:
        if not h.possible:
            return None  # every run of one group: nothing could be held out
        run, worst = h.worst
        return {"by": h.by, "mean": h.mean, "max": abs(worst), "worst": run, "errors": h.errors}

    mean, most = summary(cal.errors.values())
    return {
        "stack": cal.stack.name,
        "runs": [r.id for r in cal.fit.runs],
        "fitted": {p: cal.fit.values[p] for p in cal.fit.fitted},
        "terms.serial": cal.fit.serial,
        "not_fitted": [p for p in PARAMETERS if p not in cal.fit.fitted],
        "in_sample": {"mean": mean, "max": most, "errors": cal.errors},
        "leave_one_card_out": holdout(cal.by_card),
        "leave_one_checkpoint_out": holdout(cal.by_checkpoint),
        "range": {p: e["value"] for p, e in range_facts(cal.stack.name, cal.fit.runs).items()},
        "cautions": calibration_cautions(cal),
    }


def calibration_text(cal: Calibration, written: Path | None = None) -> str:
    """The calibration for people: the fit's method, each fitted fact beside the stack's value before, the error
    in sample and held out (by card and by checkpoint, each group's mean and max), and where the facts were written."""
    from passprice.tables import si, text_table

    runs = cal.fit.runs
    cards = sorted({r.card for r in runs})
    checkpoints = sorted({r.checkpoint for r in runs})
    sources = ", ".join(sorted({f"registry/measurements/{r.source}.toml" for r in runs}))
    lines = [
        f"calibrate {cal.stack.name}: {len(runs)} runs, {len(cards)} card{'s' * (len(cards) != 1)}, "
        f"{len(checkpoints)} checkpoint{'s' * (len(checkpoints) != 1)} ({sources})",
        "  least squares on the relative error of the pass time: overheads >= 0 and shares <= 1 (NNLS),",
        "  terms.serial on a 0.05 grid; shares the runs never exercise are not fitted",
        "",
    ]
    rows = []
    for p in (*cal.fit.fitted, "terms.serial"):
        v = cal.fit.serial if p == "terms.serial" else cal.fit.values[p]
        bound = " (at its bound of 1)" if p in SHARES and v >= 1 - 1e-9 else ""
        shown = si(v, "s") if p in OVERHEADS else f"{v:.4g}" + bound
        before = cal.stack.facts.get(p)
        if p in OVERHEADS and before is not None:
            shown = _in_unit(before, v)  # in the unit the fact is written in, as the column beside it
        rows.append([p, shown, f"{before.describe()} ({before.provenance.value})" if before else "–"])
    lines.append(text_table(["fact", "fitted", "before"], rows))
    skipped = [p for p in PARAMETERS if p not in cal.fit.fitted]
    if skipped:
        lines.append(f"  not fitted (no run exercises them): {', '.join(skipped)}")
    lines.append("")
    mean, most = summary(cal.errors.values())
    worst_in = max(cal.errors, key=lambda r: abs(cal.errors[r]))
    err_rows = [["in sample", f"{100 * mean:.1f} %", f"{100 * most:.1f} %", worst_in]]
    for h, label in ((cal.by_card, "leave one card out"), (cal.by_checkpoint, "leave one checkpoint out")):
        if not h.possible:
            err_rows.append([label, "–", "–", f"not possible: every run is of one {h.by}"])
            continue
        run, worst = h.worst
        err_rows.append([label, f"{100 * h.mean:.1f} %", f"{100 * abs(worst):.1f} %", run])
    lines.append(text_table(["|error| of tokens/s", "mean", "max", "worst run"], err_rows, right=(1, 2)))
    for h in (cal.by_card, cal.by_checkpoint):
        if not h.possible:
            continue
        lines.append("")
        lines.append(f"  held out by {h.by}:")
        rows = []
        for group, ids in sorted(h.groups.items()):
            errs = [h.errors[i] for i in ids if i in h.errors]
            if not errs:
                continue
            m, x = summary(errs)
            rows.append([group, f"{len(ids)}", f"{100 * m:.1f} %", f"{100 * x:.1f} %"])
        lines.append(text_table([h.by, "runs", "mean", "max"], rows, right=(1, 2, 3)))
    lines.append("")
    ranged = range_facts(cal.stack.name, runs)
    rows_lo, rows_hi = ranged["range.rows.min"]["value"], ranged["range.rows.max"]["value"]
    pos_lo, pos_hi = ranged["range.position.min"]["value"], ranged["range.position.max"]["value"]
    lines.append(
        f"  the facts hold where the runs were measured: batch {rows_lo:,} … {rows_hi:,} (range.rows), cached "
        f"positions {pos_lo:,} … {pos_hi:,} (range.position); a price outside is refused (BeyondStack)"
    )
    if written is not None:
        lines.append("")
        lines.append(f"wrote {len(cal.fit.fitted) + 1 + len(ranged)} derived facts to {written}")
    return "\n".join(lines)


# --- what check verifies -----------------------------------------------------------------------------------------


def _in_unit(fact: Fact, base: float) -> str:
    """``base`` (base units) written in ``fact``'s unit, to the fit's digits: ``97.1 µs``, ``0.9812``."""
    from passprice.facts import UNITS

    amount = base / float(UNITS[fact.unit][1])
    text = f"{amount:.{DIGITS}g}"
    return text if fact.unit == "1" else f"{text} {shown_unit(fact.unit, float(text))}"


#: The changed runs a finding names one by one; the rest are counted (a stack fitted from 115 runs whose
#: measurement file is gone is one line, not 115 of them).
NAMED_RUNS = 5


def _named(changed: Sequence[Any], figure: str) -> str:
    """The first :data:`NAMED_RUNS` changed runs described, and how many more changed (each with its change)."""
    shown = "; ".join(c.describe(figure) for c in changed[:NAMED_RUNS])
    rest = len(changed) - NAMED_RUNS
    return shown + (f"; and {rest} more run{'s' if rest > 1 else ''} changed or gone" if rest > 0 else "")


def _named_twice(derivation: RunDerivation) -> tuple[str, int, int] | None:
    """The first run ``derivation`` names a second time: (its id, the index of the second, of the first); ``None``
    when each is named once."""
    first: dict[str, int] = {}
    for at, r in enumerate(derivation.runs):
        if r.run in first:
            return r.run, at, first[r.run]
        first[r.run] = at
    return None


def verify_stack(root: Root, stack: Stack, runs: Sequence[Run] | None = None) -> list[Finding]:
    """What ``passprice check`` finds in ``stack``'s facts read off measured runs (their
    :class:`~passprice.derivations.RunDerivation`), each a :class:`~passprice.derivations.Finding` (``stale``,
    ``mismatch`` or ``broken``) naming the fact, and every run that changed or disappeared:

    - a run named twice is ``broken`` (a re-fit would weigh it twice);
    - a run named that no measured run has now, that is now another stack's, or whose figure differs from the one
      recorded makes the facts resting on it ``stale``, with what today's runs give;
    - a ``min``/``max`` fact is recomputed from the figures it records (``mismatch`` when its value is not theirs);
    - the fit is re-run (:func:`model_runs`, :func:`fit`) from the runs it names, as today's records give them, on
      today's cards and checkpoints, once for all the facts naming the same runs; a fitted fact whose re-fit differs
      by more than its derivation's ``tolerance`` (relative) is a ``mismatch``, and one the runs no longer fit is
      ``broken``; the fit's errors its derivations record (in sample and held out) are computed again and one that
      differs is a ``mismatch`` (:func:`_errors_findings`; slip 48: they were "not re-checked", and a price under the
      stack prints them).

    ``runs``: every measured run of the registry (default: read from ``root``). Raises nothing for a fit that cannot
    be re-run: that is a ``broken`` finding."""
    from passprice.fits import agrees, changes

    everything = {r.id: r for r in (runs if runs is not None else load_runs(root))}
    out: list[Finding] = []
    fitted: dict[tuple[tuple[str, ...], float], list[tuple[str, Fact, RunDerivation]]] = {}
    facts = [(p, f) for p, f in stack.facts.items()]
    for card, own in stack.cards.items():
        facts += [(f"cards.{card}.{p}", f) for p, f in own.items()]
    for path, fact in facts:
        d = fact.derivation
        if not isinstance(d, RunDerivation):
            continue
        twice = _named_twice(d)
        if twice is not None:
            # A fit re-run from the runs named weighs a run named twice twice: a hand-edited stack file listing one
            # run twice passed check, its fit re-run on a sample calibrate never fitted (attack round 31).
            out.append(Finding(path, "broken", f"{path}.derivation.runs.{twice[1]}.run: {twice[0]!r} is named twice "
                               f"(runs.{twice[2]} too): a derivation names each measured run once (run passprice "
                               f"calibrate --stack {stack.name})"))
            continue
        if d.method == METHOD:
            fitted.setdefault((d.ids(), d.tolerance or TOLERANCE), []).append((path, fact, d))
            continue
        moved = changes(d, everything, stack.name)
        written = float(fact.amount)
        recorded = extreme(d.method, [float(r.value) for r in d.runs])
        if moved:
            left = [figure_of(everything[r.run], d.figure) for r in d.runs if r.run not in {c.run for c in moved
                    if c.now is None}]
            now = extreme(d.method, left) if left else None
            again = f"run passprice calibrate --stack {shell_word(stack.name)}"
            if now == written:
                out.append(Finding(path, "stale", f"{path} derives from runs that moved ({_named(moved, d.figure)}); "
                                   f"its value {fact.describe()} still follows, but the derivation records the old "
                                   f"runs: {again}"))
            else:
                shown = (f"{now:g} {shown_unit(fact.unit, now)}" if now is not None
                         else "nothing (no run it names is left)")
                out.append(Finding(path, "stale", f"{path} is stale: {_named(moved, d.figure)}; from today's runs it "
                                   f"is {shown}, not {fact.describe()}: {again}"))
        elif recorded != written:
            out.append(Finding(path, "mismatch", f"{path}: {fact.describe()} does not follow from its derivation: the "
                               f"{d.method} of the {d.figure} of the {len(d.runs)} runs it records is {recorded:g}"))
    out += _untraced(stack.name, facts, everything, {f.path for f in out})
    for (ids, tolerance), members in fitted.items():
        first = members[0][2]
        moved = changes(first, everything, stack.name)
        gone = {c.run for c in moved if c.now is None}
        present = [everything[i] for i in ids if i not in gone]
        paths = ", ".join(p for p, _, _ in members)
        if not present:
            out.append(Finding(members[0][0], "broken", f"{paths}: no run their fit names is left "
                               f"({_named(moved, first.figure)})", also=tuple(p for p, _, _ in members[1:])))
            continue
        try:
            if len(present) > runs_cap():  # as calibrate refuses them: a fit of more takes past 2 s
                raise InputError(f"{len(present):,} runs, past the {runs_cap():,} a stack is fitted from (set "
                                 f"{RUNS_VARIABLE} to allow more)")
            models = model_runs(root, stack, present)
            refit = fit(models)
        except InputError as e:
            out.append(Finding(members[0][0], "broken", f"{paths}: their fit cannot be re-run: {e}",
                               also=tuple(p for p, _, _ in members[1:])))
            continue
        refits: list[tuple[str, Fact, float | None]] = []
        for path, fact, _ in members:
            fitted_as = ".".join(path.split(".")[-2:])  # a card's own fact (cards.NAME.share.read): share.read
            value = refit.serial if fitted_as == "terms.serial" else refit.values.get(fitted_as)
            refits.append((path, fact, value))
        if moved:
            values = "; ".join(
                f"{p} {_in_unit(f, v)}" if v is not None else f"{p} not fitted" for p, f, v in refits
            )
            # (a run gone leaves a fit of fewer runs: whatever else moved is not told apart from it)
            besides = "" if gone else _moved_besides_runs(root, stack, present, first, members, tolerance)
            out.append(Finding(members[0][0], "stale", f"{paths} are stale: their fit's runs moved: "
                               f"{_named(moved, first.figure)}; re-fitted from today's runs: {values}{besides} (run "
                               f"passprice calibrate --stack {stack.name})", also=tuple(p for p, _, _ in members[1:])))
            continue
        out += _errors_findings(stack, members, models, refit)
        for path, fact, value in refits:
            if value is None:
                out.append(Finding(path, "broken", f"{path}: re-fitted from its {len(ids)} runs, no run exercises it "
                                   "any more (its share is not fitted)"))
            elif not agrees(fact.value, value, tolerance):
                out.append(Finding(
                    path, "mismatch",
                    f"{path}: re-fitted from its {len(ids)} runs (as registered today, on today's cards, checkpoints "
                    f"and routing records) it is {_in_unit(fact, value)}, not {fact.describe()}: more than the "
                    f"{100 * tolerance:g} % its derivation allows (a fact of a card, checkpoint or routing record its "
                    "runs price changed, or passprice's pricing code did: review the re-fit with "
                    f"`passprice calibrate --stack {shell_word(stack.name)} --dry-run`, then run it without --dry-run)",
                    moved=abs(value / fact.value - 1) if fact.value else None,
                    move=f"{'.'.join(path.split('.')[-2:])} {fact.describe()} → {_in_unit(fact, value)}",
                    fix=f"passprice calibrate --stack {shell_word(stack.name)}",
                ))
    return out


def _errors_findings(
    stack: Stack, members: Sequence[tuple[str, Fact, RunDerivation]], models: Sequence[RunModel], whole: Fit,
) -> list[Finding]:
    """A ``mismatch`` :class:`~passprice.derivations.Finding` naming the fitted facts (``members``, one fit's) whose
    derivation's ``errors`` are not the fit's errors computed again from its runs (``models``, ``whole``: the re-fit),
    in sample and held out (:func:`fit_errors`, :func:`errors_disagree`); none when every member's agree or none
    records errors. A price under the stack prints them ("with a card held out of the fit, its error was 6.9 % on
    average, 20.4 % at most", :mod:`passprice.stackreach`) and they were "not re-checked": rewritten 6.9 % → 0.9 %
    and re-locked, the review read "1 re-locked", ✅ (slip 48). The hold-out fits are made only when an error is
    recorded (1 + cards + checkpoints fits, as calibrate makes them: 0.4 s of CPU for the 111 runs of
    ``llamacpp-cuda-2405``), within calibrate's bound on runs × fits (:data:`FITS_PER_RUN`), past which the errors
    cannot be computed again and that is the finding. A member recording no errors (its ``errors`` table removed, or
    left empty) is checked as one recording none of them: calibrate writes them for every fitted fact, and a fit
    with its errors deleted passed ``check`` while a price under the stack on another card said "no card could be
    held out of its fit: its error on another card was never measured" of a fit held out on 11 cards (attack round
    53)."""
    recorded = [(path, dict(d.errors or {})) for path, _, d in members]
    if not recorded:
        return []
    fits = 1 + len({m.run.card for m in models}) + len({m.run.checkpoint for m in models})
    if len(models) * fits > FITS_PER_RUN * runs_cap():  # the bound calibrate keeps (it would not write these)
        return [Finding(recorded[0][0], "mismatch", (
            f"{', '.join(p for p, _ in recorded)}: the fit's errors recorded cannot be computed again: "
            f"{len(models):,} runs fitted {fits} times (all, and without each card and each checkpoint) is past the "
            f"{FITS_PER_RUN * runs_cap():,} run-fits calibrate makes (set {RUNS_VARIABLE} to allow more)"),
            also=tuple(p for p, _ in recorded[1:]), of_errors=True)]
    cal = Calibration(stack, whole, {m.run.id: error(whole, m) for m in models},
                      hold_out(models, lambda r: r.card, "card"),
                      hold_out(models, lambda r: r.checkpoint, "checkpoint"), tuple(models))
    again = fit_errors(cal)
    wrong = [(path, errors_disagree(errors, again)) for path, errors in recorded]
    wrong = [(path, said) for path, said in wrong if said]
    if not wrong:
        return []
    paths = ", ".join(p for p, _ in wrong)
    return [Finding(wrong[0][0], "mismatch", (
        f"{paths}: the fit's errors recorded are not the ones its {len(models)} runs give again: "
        f"{'; '.join(wrong[0][1][:6])} (a price under the stack prints them; run passprice calibrate --stack "
        f"{shell_word(stack.name)})"), also=tuple(p for p, _ in wrong[1:]), of_errors=True)]


def _moved_besides_runs(
    root: Root, stack: Stack, present: Sequence[Run], first: RunDerivation,
    members: Sequence[tuple[str, Fact, RunDerivation]], tolerance: float,
) -> str:
    """Whether the fit moved for more than its runs: re-fitted from today's runs with each one's figure as the
    derivation recorded it (on today's cards, checkpoints and routing records), a fact that still differs from its
    written value by more than ``tolerance`` moved for another reason. Returns ``""`` when none does (or the fit
    cannot be re-run), else ``"; and with the runs as recorded the fit still gives share.read 0.912, not 0.8564:
    a card, checkpoint or routing record (qwen3-30b-a3b-measured) its runs price changed too"``. Walkthrough 27:
    with a run and the routing record its runs price both changed, check's stale line named the run alone."""
    if first.figure != "tokens_per_s":
        return ""
    recorded = {r.run: float(r.value) for r in first.runs}
    try:
        again = fit(model_runs(root, stack, [attrs.evolve(r, tokens_per_s=recorded.get(r.id, r.tokens_per_s))
                                             for r in present]))
    except InputError:
        return ""
    from passprice.fits import agrees

    moved = []
    for path, fact, _ in members:
        fitted_as = ".".join(path.split(".")[-2:])
        value = again.serial if fitted_as == "terms.serial" else again.values.get(fitted_as)
        if value is not None and not agrees(fact.value, value, tolerance):
            moved.append(f"{path} {_in_unit(fact, value)}, not {fact.describe()}")
    if not moved:
        return ""
    routings = sorted({r.routing for r in present if r.routing})
    named = f" ({', '.join(routings)})" if routings else ""
    return (f"; and with the runs as recorded the fit still gives {'; '.join(moved)}: a card, checkpoint or routing "
            f"record{named} its runs price changed too (or passprice's pricing code did)")


#: A measurement file as a run-derived fact's locator names it (:func:`_files`).
_MEASUREMENT_FILE = r"registry/measurements/[^\s,()'\"]+?\.toml"


def _untraced(
    stack: str, facts: Sequence[tuple[str, Fact]], everything: Mapping[str, Run], found: set[str]
) -> list[Finding]:
    """The run-derived facts of ``facts`` (not already in ``found``) whose locator no longer leads to their runs:
    it names a measurement file (``registry/measurements/NAME.toml``, as :func:`_files` writes it) that holds none
    of the runs the derivation names today, or leaves out a file that does. A measurement file renamed keeps every
    run (found by id) and every fit, so ``check`` passed while the citation named a file that was gone. One
    ``stale`` finding per locator, naming its facts, the files it names and where the runs are now (``passprice
    calibrate`` writes the locator again)."""
    import re

    groups: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for path, fact in facts:
        d = fact.derivation
        if path in found or not isinstance(d, RunDerivation) or not fact.locator:
            continue
        named = tuple(sorted(set(re.findall(_MEASUREMENT_FILE, fact.locator))))
        runs = [everything[r.run] for r in d.runs if r.run in everything]
        if not named or not runs:
            continue  # a locator written by hand, naming no file; or no run left (a stale or broken fit, said so)
        now = tuple(sorted({f"registry/measurements/{r.source}.toml" for r in runs}))
        if named != now:
            groups.setdefault((fact.locator, named, now), []).append(path)
    out = []
    for (_, named, now), paths in groups.items():
        one = len(paths) == 1
        out.append(Finding(paths[0], "stale", (
            f"{', '.join(paths)}: the locator names {', '.join(named)}, but the runs "
            f"{'it derives' if one else 'they derive'} from are in {', '.join(now)} now (a measurement file renamed, "
            "or runs moved): a citation that does not lead to the runs; run passprice calibrate --stack "
            f"{shell_word(stack)}"
        )))
    return out


