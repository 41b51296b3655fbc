"""Issue 16, a cold ``check`` toward 0.8 s: :func:`passprice.calibrate.nnls` verifies a guessed passive set instead of
walking to it. The guess is Lawson and Hanson's iteration on the normal equations in Python floats
(:func:`passprice.calibrate._candidate`); the answer is that set's one LAPACK step, taken only when the iteration's
own end tests pass it with a margin (:func:`passprice.calibrate._verified`), else the iteration runs as before
(:func:`passprice.calibrate._active_set`).

Behaviour only, no timing: every answer is the iteration's, bit for bit, on the registry's 1,217 solves of a cold
``check`` (which the verified path answers for the most part) and on hostile problems (zero, repeated and nearly
repeated columns, negative right-hand sides, ties), where the margins send the near-degenerate ones to the
iteration; non-finite input goes to the iteration."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from passprice import calibrate
from passprice.measurements import load_runs
from passprice.registry import embedded_root
from passprice.stacks import load_stack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from reference_fits import reference_nnls  # noqa: E402
from test_perf_30 import problems  # noqa: E402


def tol_of(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`passprice.calibrate.nnls`'s entering tolerance for ``a``, ``b``."""
    return 1e-14 * max(1.0, float(np.abs(a).max(initial=0.0)) * float(np.abs(b).max(initial=0.0)) * a.shape[0])


def verified(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """:func:`passprice.calibrate._verified` as :func:`passprice.calibrate.nnls` calls it."""
    return calibrate._verified(a, b, a.T, np.ascontiguousarray(a.T), tol_of(a, b))


def iterated(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The active-set iteration alone (:func:`passprice.calibrate._active_set`)."""
    return calibrate._active_set(a, b, a.T, np.ascontiguousarray(a.T), tol_of(a, b))


def near_degenerate(count: int, seed: int = 115) -> list[tuple[np.ndarray, np.ndarray]]:
    """Problems whose end is hard to tell from the normal equations: a column repeated exactly or to 10^-13, 10^-8
    or 10^-4, a right-hand side in the span of some columns (gradients of zero off the passive set), and two
    columns of one direction and opposite signs; unit-length columns as the fit makes them."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        m, n = int(rng.integers(3, 60)), int(rng.integers(2, 9))
        a = rng.random((m, n))
        i, j = int(rng.integers(0, n)), int(rng.integers(0, n))
        if i != j:
            a[:, j] = a[:, i] + (0.0, 1e-13, 1e-8, 1e-4)[k % 4] * rng.random(m)
        if k % 3 == 0:
            b = a[:, : max(1, n // 2)] @ rng.random(max(1, n // 2))
        elif k % 3 == 1:
            b = -a[:, 0] + 0.5 * a[:, -1]
        else:
            b = rng.normal(size=m)
        if k % 5 == 0 and n > 2:
            a[:, 1] = -a[:, 2]
        norms = np.linalg.norm(a, axis=0)
        norms[norms == 0] = 1.0
        out.append((a / norms, b))
    return out


def test_a_hand_solved_problem_is_verified() -> None:
    # min |a x - b|, x >= 0, a = [[1, 1], [1, 0], [0, 1]], b = (3, 2, -1): x = (5/2, 0), the free gradient
    # a2 . (b - a1 x1) = -1/2 (test_perf_30's hand-solved problem); the normal equations [[2, 1], [1, 2]] x = (5, 2)
    # guess the passive set {0}.
    a = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    b = np.array([3.0, 2.0, -1.0])
    assert calibrate._candidate([[2.0, 1.0], [1.0, 2.0]], [5.0, 2.0], tol_of(a, b)) == [0]
    x = verified(a, b)
    assert x is not None and abs(x[0] - 2.5) < 1e-12 and x[1] == 0.0
    assert x.tobytes() == iterated(a, b).tobytes() == calibrate.nnls(a, b).tobytes() == reference_nnls(a, b).tobytes()


def test_a_right_hand_side_of_no_positive_direction_is_zero_either_way() -> None:
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.array([-1.0, -2.0])
    assert calibrate._candidate([[1.0, 0.0], [0.0, 1.0]], [-1.0, -2.0], tol_of(a, b)) == []
    x = verified(a, b)
    assert x is not None and x.tobytes() == np.zeros(2).tobytes() == calibrate.nnls(a, b).tobytes()


def test_a_repeated_column_is_left_to_the_iteration() -> None:
    # Two equal columns: either may end passive (the other's gradient is 0, not below the margin), so the guess is
    # not taken: which one the iteration keeps is its path's, and nnls gives exactly that.
    a = np.array([[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]) / 3.0
    b = np.array([1.0, 1.0, 1.0])
    assert verified(a, b) is None
    assert calibrate.nnls(a, b).tobytes() == iterated(a, b).tobytes() == reference_nnls(a, b).tobytes()


def test_a_gradient_at_zero_off_the_passive_set_is_left_to_the_iteration() -> None:
    # b is the first column: x = (1, 0) with the second column's gradient a2 . 0 = 0, inside the margin.
    a = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    b = np.array([1.0, 0.0, 0.0])
    assert verified(a, b) is None
    x = calibrate.nnls(a, b)
    assert x.tolist() == [1.0, 0.0] and x.tobytes() == reference_nnls(a, b).tobytes()


def test_non_finite_input_goes_to_the_iteration() -> None:
    a = np.array([[np.nan, 1.0], [1.0, 2.0], [3.0, 4.0]])
    b = np.array([1.0, 2.0, 3.0])
    assert verified(a, b) is None
    assert calibrate.nnls(a, b).tobytes() == reference_nnls(a, b).tobytes()
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    # an infinity, a NaN, or sums past the largest double (aᵀb 2e308): the iteration's
    for b in (np.array([np.inf, 1.0]), np.array([np.nan, 1.0]), np.array([1e308, 1e308])):
        assert verified(a, b) is None
        assert calibrate.nnls(a, b).tobytes() == reference_nnls(a, b).tobytes()


@pytest.mark.parametrize("make", [problems, near_degenerate], ids=["hostile", "near-degenerate"])
def test_every_answer_is_the_iterations_bit_for_bit(make: object) -> None:
    taken = left = 0
    for a, b in make(1500, seed=115):  # type: ignore[operator]
        want = reference_nnls(a, b)
        assert iterated(a, b).tobytes() == want.tobytes()
        got = verified(a, b)
        if got is None:
            left += 1
        else:
            taken += 1
            assert got.tobytes() == want.tobytes(), (a.shape, got, want)
        assert calibrate.nnls(a, b).tobytes() == want.tobytes()
    assert taken > 300 and left > 100  # both paths are walked


def test_the_registrys_cold_check_solves_are_the_iterations_and_mostly_verified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 18 fits of a cold ``check`` (both stacks' whole fits and hold-outs): 1,217 NNLS problems, each solved the
    new way and by the iteration alone, bit for bit."""
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    monkeypatch.setattr(calibrate, "_FITS", {})
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    nnls = calibrate.nnls

    def recording(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        x = nnls(a, b)
        seen.append((a, b, x))
        return x

    monkeypatch.setattr(calibrate, "nnls", recording)
    root = embedded_root()
    runs = load_runs(root)
    for name in ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312"):
        calibrate.verify_stack(root, load_stack(root, name), runs)
    assert len(seen) == 1217
    taken = 0
    for a, b, x in seen:
        assert x.tobytes() == iterated(a, b).tobytes()
        taken += verified(a, b) is not None
    assert taken >= 1000  # 1,022 when written: the rest are near-degenerate (hold-outs with collinear overheads)


# A checkpoint entry's tensors: each (dims, type) judged once (checkpoints.header_from_entry), the tensor named the
# same as when each was judged.

ENTRY = HERE.parent / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"


def entry_rows(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each tensor row of an entry's text."""
    return [(k, line) for k, line in enumerate(text.splitlines()) if line.lstrip().startswith("{ name = ")]


def read_entry(text: str) -> object:
    import tomllib

    from passprice import schema
    from passprice.checkpoints import header_from_entry

    document = tomllib.loads(text)
    schema.validate(document, "checkpoint", "entry")
    return header_from_entry(document, "entry")


def test_each_tensor_shape_is_judged_once_and_the_header_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import gguf_header

    text = ENTRY.read_text(encoding="utf-8")
    asked: list[tuple[tuple[int, ...], int | None]] = []
    judge = gguf_header.dims_problem

    def counting(dims: tuple[int, ...], type_id: int | None = None) -> str | None:
        asked.append((dims, type_id))
        return judge(dims, type_id)

    monkeypatch.setattr(gguf_header, "dims_problem", counting)
    header = read_entry(text)
    tensors = header.tensors  # type: ignore[attr-defined]
    shapes = {(t.dims, t.type_id) for t in tensors}
    assert len(asked) == len(shapes) == len(set(asked)) < len(tensors)  # 236 tensors, 10 shapes
    assert all(judge(t.dims, t.type_id) is None for t in tensors)


def test_a_shape_past_int64_is_named_at_its_first_tensor_though_its_shape_repeats() -> None:
    text = ENTRY.read_text(encoding="utf-8")
    lines = text.splitlines()
    rows = entry_rows(text)
    bad = "dims = [4294967296, 2147483648]"
    # the tensors 3 and 7 made one bad shape: tensor 3 is named; the tensors before it, of repeated sound shapes,
    # pass
    for index in (7, 3):
        at, line = rows[index]
        lines[at] = line[:line.index("dims = [")] + bad + line[line.index("]", line.index("dims = [")) + 1:]
    with pytest.raises(Exception) as refused:
        read_entry("\n".join(lines) + "\n")
    assert str(refused.value).startswith("entry: header.tensors.3.dims: dims [4294967296, 2147483648] hold "
                                         "9,223,372,036,854,775,808 elements, beyond int64")
