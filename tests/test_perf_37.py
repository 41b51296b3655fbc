"""Round 37 (issue 16, a cold ``check`` toward 0.8 s): the stacks' fits and hold-out fits a cold ``check`` re-runs
(18 fits, 738 fixed-point solves, 1,217 NNLS solves, 7,081 least-squares steps) spent most of their time in NumPy
calls on arrays of one to eight numbers. :func:`passprice.calibrate.nnls` now holds its passive set and gradient as
Python lists and takes a step's columns as rows of ``a.T``; a run's binding term is found in five NumPy calls
(:func:`passprice.calibrate._binding`) instead of thirteen.

Behaviour only, no timing: every double is the same as round 36's (its ``_solve`` kept here as
:func:`reference_solve`, round 29's NNLS as ``reference_fits.reference_nnls``): the binding terms on hostile
components (zeros of either sign, NaN, infinities, ties), the NNLS on problems with cut-back steps, and the
registry's two stacks' fits and hold-outs (7 of a cold check's 18 fits), bit for bit. ``check`` and the reviews
with round 36's binding put back are byte for byte the same in test_same_bytes. No cache is added this round, so
nothing here can be stale."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from passprice import calibrate
from passprice.measurements import load_runs
from passprice.registry import embedded_root
from passprice.stacks import load_stack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from reference_fits import reference_binding, reference_nnls  # noqa: E402
from test_perf_30 import problems  # noqa: E402

STACKS = ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")


def reference_solve(runs: Any, fitted: tuple[str, ...], serial: float, start: dict[str, float] | None = None,
                    steps: Any = None) -> tuple[dict[str, float], float]:
    """Round 36's ``_solve`` (its binding terms :func:`reference_binding`, its NNLS round 29's)."""
    t, comp = runs.t, runs.comp
    share_cols = [calibrate.SHARES.index(p) for p in fitted if p in calibrate.SHARES]
    values = dict(start) if start is not None else {p: (1.0 if p in calibrate.SHARES else 0.0) for p in fitted}
    binding: np.ndarray | None = None
    for _ in range(12):
        now = reference_binding(runs, values)
        if binding is not None and (now == binding).all():
            break
        binding = now
        key = (serial, binding.tobytes())
        if steps is not None and key in steps:
            values.update(steps[key])
            continue
        weight = np.where(np.arange(5)[None, :] == binding[:, None], 1.0, serial)
        weighted = comp * weight[:, calibrate._TERM_INDEX]
        columns = []
        if "overhead.pass" in fitted:
            columns.append(np.ones(len(t)))
        if "overhead.layer" in fitted:
            columns.append(runs.layers)
        columns += [weighted[:, j] for j in share_cols]
        a = np.stack(columns, axis=1) / t[:, None]
        b = 1.0 - weighted.sum(axis=1) / t
        norms = np.linalg.norm(a, axis=0)
        norms[norms == 0] = 1.0
        x = reference_nnls(a / norms, b) / norms
        step = {p: float(x[k]) if p in calibrate.OVERHEADS else 1.0 / (1.0 + float(x[k]))
                for k, p in enumerate(fitted)}
        values.update(step)
        if steps is not None:
            steps[key] = step
    predicted = calibrate._predicted(comp, runs.layers, values, serial)
    return values, float(np.sum((predicted / t - 1.0) ** 2))


def bits(value: object) -> object:
    """``value`` with every float as its hex spelling (so -0.0, 0.0 and each NaN's sign compare as bits)."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: bits(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bits(v) for v in value]
    return value


def test_the_binding_terms_are_round_36s_on_hostile_components() -> None:
    assert calibrate._Runs.of([]).by_share.shape == (len(calibrate.SHARES), 0)
    rng = np.random.default_rng(37)
    specials = np.array([0.0, -0.0, np.nan, np.inf, 1.0, 2.0, 1e-300, 5e-324])
    for k in range(300):
        count = int(rng.integers(1, 40))
        comp = rng.random((count, len(calibrate.SHARES))) * 10.0 ** rng.integers(-6, 3)
        if k % 2:  # zeros of either sign, NaN, infinities and exact ties in some cells
            mask = rng.random(comp.shape) < 0.4
            comp[mask] = rng.choice(specials, size=int(mask.sum()))
        runs = calibrate._Runs(np.ones(count), comp, np.ones(count),
                               np.ascontiguousarray(comp.T[calibrate._BY_TERM]))
        values = {p: float(v) for p, v in zip(calibrate.SHARES, rng.random(len(calibrate.SHARES)) + 1e-3,
                                                 strict=True)} if k % 3 else {}
        got, want = calibrate._binding(runs, values), reference_binding(runs, values)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (comp, got, want)


def test_the_terms_rows_are_the_five_terms_in_order() -> None:
    # _binding's rows 2..6 after its three additions: memory (read, rewrite, append), host, array (+ float),
    # vector, scale; a share moved in SHARES would move a term and fail here, not silently.
    order = [calibrate.SHARES[j] for j in calibrate._BY_TERM]
    assert order[:3] == ["share.read", "share.rewrite", "share.append"]
    assert [calibrate.TERM_OF[p] for p in order[2:7]] == [0, 1, 2, 3, 4] and order[7] == "share.float"
    assert calibrate.TERM_OF["share.float"] == calibrate.TERM_OF[order[4]] == 2
    assert sorted(calibrate._BY_TERM) == list(range(len(calibrate.SHARES)))


def test_nnls_is_round_29s_bit_for_bit_with_cut_back_steps() -> None:
    cut = 0
    for a, b in problems(250, seed=37):
        want, got = reference_nnls(a, b), calibrate.nnls(a, b)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (a.shape, want, got)
    # A problem whose unconstrained step goes negative (x2 enters, then x1 must leave): the cut-back path.
    a = np.array([[1.0, 0.9], [0.9, 1.0], [0.2, 0.1]])
    b = np.array([1.0, 0.2, 0.1])
    assert calibrate.nnls(a, b).tobytes() == reference_nnls(a, b).tobytes()
    for a, b in problems(250, seed=38):
        n = a.shape[1]
        if n > 2:
            b = a @ np.linspace(-1.0, 1.0, n)  # half the true values negative: steps are cut back
            cut += 1
            assert calibrate.nnls(a, b).tobytes() == reference_nnls(a, b).tobytes()
    assert cut > 50


@pytest.fixture(scope="module")
def models() -> dict[str, list[calibrate.RunModel]]:
    root = embedded_root()
    every = load_runs(root)
    return {name: calibrate.model_runs(root, load_stack(root, name), [r for r in every if r.stack == name])
            for name in STACKS}


def fits(name: str, models: list[calibrate.RunModel]) -> object:
    """A stack's whole fit and its hold-outs, each fit solved afresh: by checkpoint, and by card but for the 111 runs
    of llamacpp-cuda-2405 (11 fits more; the other stack's runs are of one card, so its fits are all of a cold
    check's 3)."""
    calibrate._FITS.clear()
    whole = calibrate.fit(models)
    by_card = calibrate.hold_out(models, lambda r: r.card, "card").errors if name != STACKS[0] else {}
    by_checkpoint = calibrate.hold_out(models, lambda r: r.checkpoint, "checkpoint").errors
    calibrate._FITS.clear()
    return bits((whole.values, whole.serial, by_card, by_checkpoint))


def test_the_registrys_fits_are_round_36s_bit_for_bit(models: dict[str, list[calibrate.RunModel]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    now = {name: fits(name, m) for name, m in models.items()}
    monkeypatch.setattr(calibrate, "_solve", reference_solve)
    before = {name: fits(name, m) for name, m in models.items()}
    assert now == before
    values, serial, _, by_checkpoint = now["llamacpp-cuda-2405"]  # type: ignore[misc]
    assert len(by_checkpoint) == 111 and 0.0 <= float.fromhex(serial) <= 1.0
    assert {"overhead.pass", "overhead.layer", "share.read"} <= set(values)
    assert len(now["lmdeploy-turbomind-2312"][3]) == 17  # type: ignore[index]
