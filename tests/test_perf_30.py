"""Round 30 (issue 16, the review path's speed): a cold ``check`` re-runs the two serving stacks' fits and their
hold-out fits (slip 48's errors re-check: 18 fits, 1,217 NNLS solves, 7,081 least-squares steps), and NumPy's
wrappers around arrays of one to seven numbers were a sixth of that time. :func:`passprice.calibrate.nnls` now takes
each least-squares step through the LAPACK call ``numpy.linalg.lstsq`` makes (:data:`passprice.calibrate._LSTSQ`)
and makes its choices on Python floats.

Behaviour only, no timing: every double is the same as before (the step against ``numpy.linalg.lstsq``, the NNLS
against round 29's code, ``reference_fits.reference_nnls``, the registry's fits and hold-out errors; the reviews
of a changed card fact, checkpoint entry and source record, and ``check``, byte for byte with the reference put back,
are in test_same_bytes). No cache is added this round, so nothing here can be stale."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from passprice import calibrate
from passprice.measurements import load_runs
from passprice.registry import embedded_root
from passprice.stacks import load_stack
from reference_fits import reference_nnls

HERE = Path(__file__).resolve().parent
STACKS = ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")


def problems(count: int, seed: int = 30) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` NNLS problems as the fit makes them and worse: 1 to 120 rows, 1 to 7 columns, unit-length columns
    of mixed scale, some columns zero or repeated, some right-hand sides negative (an x of zeros)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        m, n = int(rng.integers(1, 121)), int(rng.integers(1, 8))
        a = rng.random((m, n)) * 10.0 ** rng.integers(-6, 3, size=n)
        if k % 7 == 0:
            a[:, 0] = 0.0
        if k % 5 == 0 and n > 1:
            a[:, -1] = a[:, 0]
        norms = np.linalg.norm(a, axis=0)
        norms[norms == 0] = 1.0
        b = rng.normal(size=m) * (1.0 if k % 3 else -1.0)
        out.append((a / norms, b))
    return out


def test_the_step_is_numpys_lstsq_bit_for_bit() -> None:
    assert calibrate._lapack_lstsq() is not None  # NumPy 2 here: the LAPACK call is taken
    for a, b in problems(300):
        for cols in ([0], list(range(a.shape[1])), list(range(0, a.shape[1], 2))):
            sub = a[:, cols]
            want = np.linalg.lstsq(sub, b, rcond=None)[0]
            got = calibrate._LSTSQ(sub, b)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()
            assert calibrate._lstsq(sub, b).tobytes() == want.tobytes()  # the fallback


def test_a_step_that_does_not_converge_raises_as_lstsq_does() -> None:
    a, b = np.array([[np.nan, 1.0], [1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 2.0, 3.0])
    with pytest.raises(np.linalg.LinAlgError) as numpys:
        np.linalg.lstsq(a, b, rcond=None)
    with pytest.raises(np.linalg.LinAlgError) as ours:
        calibrate._LSTSQ(a, b)
    assert str(ours.value) == str(numpys.value) == "SVD did not converge in Linear Least Squares"


@pytest.mark.parametrize(
    ("values", "index"),
    [([1.0, 3.0, 2.0], 1), ([3.0, 3.0, 1.0], 0), ([-np.inf, 2.0, 2.0], 1), ([-np.inf, -np.inf], 0),
     ([1.0, np.nan, 5.0, np.nan], 1), ([np.nan], 0), ([0.0, -0.0], 0), ([-0.0, 0.0], 0), ([-1e300, -np.inf], 0)],
)
def test_the_entering_variable_is_argmaxs(values: list[float], index: int) -> None:
    assert calibrate._first_largest(values) == index == int(np.argmax(np.array(values)))


def test_nnls_is_round_29s_bit_for_bit() -> None:
    nonzero = 0
    for a, b in problems(400, seed=31):
        want, got = reference_nnls(a, b), calibrate.nnls(a, b)
        assert got.tobytes() == want.tobytes(), (a.shape, want, got)
        nonzero += bool(want.any())
    assert nonzero > 100  # most problems have a solution away from zero


def test_nnls_on_a_hand_solved_problem() -> None:
    # min |a x - b|, x >= 0, a = [[1, 1], [1, 0], [0, 1]], b = (3, 2, -1): the normal equations [[2, 1], [1, 2]] x =
    # (5, 2) give x = (8/3, -1/3), infeasible; with x2 = 0, x1 = (a1 . b) / (a1 . a1) = 5 / 2, and x2's gradient
    # a2 . (b - a1 x1) = (3 - 2.5) + (-1 - 0) = -0.5 < 0 keeps it at the bound.
    a = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    b = np.array([3.0, 2.0, -1.0])
    x = calibrate.nnls(a, b)
    assert abs(x[0] - 2.5) < 1e-12 and x[1] == 0.0
    assert x.tobytes() == reference_nnls(a, b).tobytes()


def fits_of_the_registry() -> dict[str, object]:
    """Both shipped stacks' whole fits (values, serial share) and hold-out errors by card and by checkpoint."""
    root = embedded_root()
    runs = load_runs(root)
    out: dict[str, object] = {}
    for name in STACKS:
        stack = load_stack(root, name)
        models = calibrate.model_runs(root, stack, [r for r in runs if r.stack == name])
        whole = calibrate.fit(models)
        by_card = calibrate.hold_out(models, lambda r: r.card, "card")
        by_checkpoint = calibrate.hold_out(models, lambda r: r.checkpoint, "checkpoint")
        out[name] = (whole.values, whole.serial, by_card.errors, by_checkpoint.errors)
    return out


def test_the_registrys_fits_and_hold_out_errors_are_the_same_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    now = fits_of_the_registry()
    monkeypatch.setattr(calibrate, "nnls", reference_nnls)
    before = fits_of_the_registry()
    assert now == before
    values, serial, by_card, by_checkpoint = now["llamacpp-cuda-2405"]  # type: ignore[misc]
    assert len(by_card) == 111 and len(by_checkpoint) == 111 and 0.0 <= serial <= 1.0
    assert set(values) >= {"overhead.pass", "overhead.layer"}

