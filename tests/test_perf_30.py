"""Round 30 (issue 16, the review path's speed): a cold ``check`` re-runs the two serving stacks' fits and their
hold-out fits (slip 48's errors re-check: 18 fits, 1,217 NNLS solves, 7,081 least-squares steps), and NumPy's
wrappers around arrays of one to seven numbers were a sixth of that time. :func:`passprice.calibrate.nnls` now takes
each least-squares step through the LAPACK call ``numpy.linalg.lstsq`` makes (:data:`passprice.calibrate._LSTSQ`)
and makes its choices on Python floats.

Behaviour only, no timing: every double is the same as before (the step against ``numpy.linalg.lstsq``, the NNLS
against the round-29 code kept here as :func:`reference_nnls`, the registry's fits and hold-out errors, and the
reviews of a changed card fact, checkpoint entry and source record, and ``check``, byte for byte with the
reference put back). No cache is added this round, so nothing here can be stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from passprice import calibrate
from passprice.measurements import load_runs
from passprice.registry import embedded_root
from passprice.stacks import load_stack

HERE = Path(__file__).resolve().parent
STACKS = ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")


def reference_nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`passprice.calibrate.nnls` as round 29 left it (``numpy.linalg.lstsq``, NumPy's choices)."""
    m, n = a.shape
    passive = np.zeros(n, dtype=bool)
    x = np.zeros(n)
    w = a.T @ (b - a @ x)
    tol = 1e-14 * max(1.0, float(np.abs(a).max(initial=0.0)) * float(np.abs(b).max(initial=0.0)) * m)
    for _ in range(30 * max(n, 1)):
        if passive.all() or not (w[~passive] > tol).any():
            break
        j = int(np.argmax(np.where(passive, -np.inf, w)))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            blocking = passive & (z <= 0)
            alpha = float(np.min(x[blocking] / (x[blocking] - z[blocking])))
            x = x + alpha * (z - x)
            passive &= x > 1e-15
            x[~passive] = 0.0
            if not passive.any():
                break
        w = a.T @ (b - a @ x)
    return x


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


# --- whole processes: the reviews and check the same bytes with round 29's NNLS put back ---------------------------

DRIVER = """
import runpy, sys
sys.path.insert(0, {tests!r})
if {reference!r}:
    import passprice.calibrate
    from test_perf_30 import reference_nnls
    passprice.calibrate.nnls = reference_nnls
sys.argv = ["passprice", *sys.argv[1:]]
runpy.run_module("passprice", run_name="__main__")
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A git repository of the shipped registry, ``base`` and one commit on it each changing one card fact (the
    H200's memory.bandwidth), one checkpoint entry's origin and one source record's read note (round 29's)."""
    sys.path.insert(0, str(HERE))
    from test_perf_29 import copy_registry, git

    path = copy_registry(tmp_path_factory.mktemp("perf30") / "registry")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--no-verify", "-m", "base")
    made: dict[str, object] = {"path": path, "base": git(path, "rev-parse", "HEAD")}
    for name, rel, old, new in (
        ("fact", "facts/cards/h200_sxm_141gb.toml", "[memory.bandwidth]\nvalue = 4.8\n",
         "[memory.bandwidth]\nvalue = 4.9\n"),
        ("entry", "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml",
         'origin = "DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: ', 'origin = "DeepSeek-R1-Distill-Qwen-7B (Q4_K_M): '),
        ("source", "sources/nvidia-h200-datasheet.toml", 'read = "', 'read = "Read: '),
    ):
        git(path, "checkout", "-q", "-b", name, str(made["base"]))
        file = path / rel
        text = file.read_text(encoding="utf-8")
        assert text.count(old) == 1
        file.write_text(text.replace(old, new), encoding="utf-8")
        git(path, "commit", "-q", "--no-verify", "-am", name)
        made[name] = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    return made


def run(cwd: Path, tmp: Path, reference: bool, *args: str) -> tuple[int, str, str]:
    """``passprice --no-cache ARGS`` in a process of its own (the fits re-run), the memo bypassed, with round 29's
    NNLS when ``reference``: exit status, stdout, stderr."""
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp / "unused"), "PASSPRICE_NO_MEMO": "1"}
    env.pop("PASSPRICE_MAX_FIT_RUNS", None)
    code = DRIVER.format(tests=str(HERE), reference=reference)
    done = subprocess.run([sys.executable, "-c", code, "--no-cache", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("change", ["fact", "entry", "source"])
def test_a_markdown_review_is_the_same_bytes_with_round_29s_nnls(
    repo: dict[str, object], tmp_path: Path, change: str
) -> None:
    path, base, head = Path(str(repo["path"])), str(repo["base"]), str(repo[change])
    args = ("diff", base, head, "--format", "markdown")
    now = run(path, tmp_path, False, *args)
    assert now == run(path, tmp_path, True, *args)
    status, out, err = now
    if change == "fact":
        assert status == 1, err
        assert "4.8 TB/s → 4.9 TB/s" in out
    else:
        assert (status, err) == (0, ""), err


def test_check_is_the_same_bytes_with_round_29s_nnls(repo: dict[str, object], tmp_path: Path) -> None:
    path = Path(str(repo["path"]))
    now = run(path, tmp_path, False, "check")
    assert now[0] == 0, now[2]
    assert now == run(path, tmp_path, True, "check")
    # 104: the 9 shipped locks, the stack lock r1-qwen7b-h200-llamacpp among them (103 with 8); 106 with moe43's
    # MoE measurement file and its source record; 107 with moe44's checkpoint qwen3-30b-a3b-q4_0
    assert now[1].startswith("checked 107 files (") and now[1].endswith("all holds\n")
