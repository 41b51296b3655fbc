"""Hostile inputs against the review's in-process pricing, NNLS's verified guess and the checkpoint header's shape
judgement (issue 13), each escape kept as its reproducer, built in the test.

- (1) A review priced a side in this process when its pricing-model digest and every other module and compiled file
  of its ``src/passprice`` matched the running code's; but a root's JSON Schemas are always its code's
  (``Root.schema`` is the package's ``schema_dir``): the checkout's ``schema/``, or the copy a built package keeps in
  ``src/passprice/_data/schema``. A pull request lowering ``card.name``'s ``maxLength`` to 3 made HEAD's own
  ``check`` refuse every card (20 problems, exit 2) and so every locked price, while the review, validating HEAD
  against the running package's schemas, said "10 locks unaffected" (exit 0; only a warning that the copy differs)
  or, for the copy under ``_data``, "no changes to facts, registry, locks or the pricing model; 10 locks unaffected".
- (2) ``calibrate.nnls``'s verified guess returned another answer than the iteration's (2 of 1,100,000 random
  problems): three columns in a plane, whose third normal-equations pivot was all rounding (LAPACK's minimum-norm
  step returned), and columns of lengths 10^11 beside 10^-1, where the iteration keeps two variables rounded to
  10^-17 that the minimiser holds at 0. Now 0 of 1,200,000 (a hypothesis search of 2,000 kept here).
- (3) A revision's build files (``pyproject.toml``, ``hatch_build.py``, ``src/passprice_sigint.pth``) were neither
  read nor named by the review, though the wheel installs the ``.pth`` where ``site`` runs it at every start: a pull
  request rewriting it read "no changes to facts, registry, locks or the pricing model" (exit 0). Now named under
  "passprice's own code changed".
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

# --- (1) the JSON Schemas a side's code validates against ----------------------------------------------------------


#: What a side copied from the running package leaves out: compiled files, the JSON records, and a wheel's ``_data``
#: (an installed package's copy of the registry and schemas; a checkout has none: its schemas are ``schema/``).
CHECKOUT_ONLY = shutil.ignore_patterns("__pycache__", "*.json", "_data")

def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def _repo(tmp_path: Path) -> Path:
    from passprice import pins

    root = copy_root(tmp_path / "repo")
    if not (root / "schema").exists():
        shutil.copytree(REPO / "schema", root / "schema")
    shutil.copytree(pins.PACKAGE, root / "src" / "passprice", ignore=CHECKOUT_ONLY)
    return root


def _shorten_card_names(folder: Path) -> None:
    path = folder / "card.schema.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["properties"]["card"]["properties"]["name"]["maxLength"] = 3
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


def test_1_a_side_whose_schemas_differ_is_priced_by_its_own_code(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import pins, sidecode

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _repo(tmp_path)
    package = root / "src" / "passprice"
    assert sidecode.code_of(package).running
    assert sidecode.schema_folder(package) == root / "schema"
    _shorten_card_names(root / "schema")
    assert sidecode.schema_changes(package) == ("schema/card.schema.json",)
    code = sidecode.code_of(package)
    assert (code.model, code.running) == (pins.pricing_model_digest(), False)
    (root / "schema" / "extra.schema.json").write_text("{}", encoding="utf-8")  # a file added counts too
    assert sidecode.schema_changes(package) == ("schema/card.schema.json", "schema/extra.schema.json")
    shutil.copytree(REPO / "schema", package / "_data" / "schema")  # a built copy is read in its place
    assert sidecode.schema_folder(package) == package / "_data" / "schema"
    assert sidecode.schema_changes(package) == ()
    (package / "_data" / "schema" / "lock.schema.json").unlink()
    assert sidecode.schema_changes(package) == ("src/passprice/_data/schema/lock.schema.json",)


@pytest.mark.parametrize("where", ["schema", "src/passprice/_data/schema"])
def test_1_the_review_sees_locks_broken_by_a_schema_the_code_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   where: str) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _repo(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    if where != "schema":
        shutil.copytree(root / "schema", root / where)
    _shorten_card_names(root / where)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "card names of at most 3 characters")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    # was exit 0: "10 locks unaffected" (schema/: with a warning that the copy differs; _data/schema: "no changes to
    # facts, registry, locks or the pricing model")
    assert result.exit_code == 1, result.output
    assert "10 locks affected, 10 not judged" in result.stdout.splitlines()[1]
    assert ("    HEAD cannot price: facts/cards/h200_sxm_141gb.toml: card.name: 'NVIDIA H200 SXM 141GB' is too long "
            "(21 characters; at most 3)") in result.stdout.splitlines()
    if where != "schema":
        assert "  src/passprice/_data/schema/card.schema.json" in result.stdout.splitlines()
    assert result.stderr.startswith("passprice: refused: the change breaks locks gemma3-270m-h100, ")


# --- (2) NNLS's verified guess on columns in too few dimensions ------------------------------------------------------

#: 3 × 3, a zero row, the first two columns 10^-4 apart: the three columns lie in a plane (rank 2), and the normal
#: equations' third pivot came out 6.9e-9 of its square length, all rounding (found by a random search of 1,100,000
#: problems: 1 such on the code before, 0 after).
PLANE_A = [["-0x1.37020985ba70cp+0", "-0x1.3700de942333ap+0", "-0x1.37bc001e59018p+0"],
           ["0x0.0p+0", "0x0.0p+0", "0x0.0p+0"],
           ["0x1.cd11fdaab7254p-4", "0x1.cd8ae91c3c0e5p-4", "-0x1.1b5c22b56e6c7p-1"]]
PLANE_B = ["-0x1.141c191df6022p-2", "-0x1.2534c0dbffeabp-31", "0x1.9955666d3d633p-6"]


#: 7 × 4, columns of length about 10^11 but one of 10^-1: the verified minimiser holds columns 1 and 3 at 0 (free
#: gradients -12,678 and -998, past -10^5 × tol = -299), while the iteration's last LAPACK step on {1, 2, 3} rounds
#: them to 1.2e-17 and 1.4e-16, kept (1 of 1,100,000 random problems, after the pivot margin; the columns of unlike
#: scale now go to the iteration).
SCALES_A = [["0x1.bacfe1717ea1dp+37", "0x1.1d32001988a39p+37", "0x1.250836f808f5bp-6", "0x1.df5c887cee6b1p+32"],
            ["0x1.dd79e947cc51ep+35", "0x1.6f508022eda24p+36", "0x1.58c2b04dc4e07p-3", "0x1.18bbd6b9e26e2p+34"],
            ["0x1.254ab197f8b1fp+37", "0x1.a4df23c358f02p+36", "0x1.2a6dbd23b462bp-3", "0x1.c0eba647e150cp+32"],
            ["0x1.e514c16d246a3p+35", "0x1.050916ccc3fcbp+36", "0x1.72d63f7e32bc8p-4", "0x1.8e2595fe87394p+32"],
            ["0x1.3a3c305806614p+35", "0x1.013be880c6140p+36", "0x1.045ef93ae699bp-3", "0x1.2b42db0c40344p+33"],
            ["0x1.1dcc1ea367243p+36", "0x1.937a1aa37c6c4p+33", "0x1.eea2bdf7e497ap-5", "0x1.21c5d0abfccd3p+33"],
            ["0x1.39ff2a23f89dcp+37", "0x1.ebc335daf5950p+35", "0x1.4b66e36950122p-7", "0x1.a0728117bf3fcp+32"]]
SCALES_B = ["0x1.389a212f9c73dp-6", "0x1.6fcc8679106edp-3", "0x1.3e5ed444c7e13p-3", "0x1.8ba0b31f022e0p-4",
            "0x1.15c535d843ffcp-3", "0x1.07d7fc34f5d49p-4", "0x1.61956bceeec93p-7"]


@pytest.mark.parametrize(("rows", "rhs", "want"), [
    (PLANE_A, PLANE_B, [0.221943, 4e-06, 0.0]),
    (SCALES_A, SCALES_B, [0.0, 0.0, 1.066825, 0.0]),
], ids=["plane", "scales"])
def test_2_the_iteration_s_end_is_returned(rows: list[list[str]], rhs: list[str], want: list[float]) -> None:
    import numpy as np

    from passprice import calibrate
    from reference_fits import reference_nnls

    a = np.array([[float.fromhex(v) for v in row] for row in rows])
    b = np.array([float.fromhex(v) for v in rhs])
    a_t = a.T
    tol = 1e-14 * max(1.0, float(np.abs(a).max()) * float(np.abs(b).max()) * a.shape[0])
    assert calibrate._verified(a, b, a_t, np.ascontiguousarray(a_t), tol) is None  # was: another minimiser's step
    expected = reference_nnls(a, b)
    assert calibrate.nnls(a, b).tobytes() == expected.tobytes()
    assert [round(float(v), 6) for v in expected] == want


def _problem(seed: int) -> tuple[object, object]:
    """One adversarial NNLS problem of the search that found :data:`PLANE_A`: near-collinear pairs, columns scaled
    10^±12, zero columns and rows, duplicated runs, coarse values, right-hand sides of any scale."""
    import numpy as np

    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 12)), int(rng.integers(1, 8))
    a = rng.standard_normal((m, n))
    if rng.random() < .5:
        a = np.abs(a)
    if rng.random() < .4:
        for _ in range(int(rng.integers(1, 3))):
            i, j = rng.integers(0, n, 2)
            a[:, j] = (a[:, i] * (1 + 10.0 ** -int(rng.integers(2, 17)) * rng.standard_normal())
                       + 10.0 ** -int(rng.integers(2, 17)) * rng.standard_normal(m))
    if rng.random() < .4:
        a = a * (10.0 ** rng.integers(-12, 12, size=n))
    if rng.random() < .2:
        a[:, rng.integers(0, n)] = 0
    if rng.random() < .2:
        a[rng.integers(0, m)] = 0
    if rng.random() < .2:
        a = np.round(a * 4) / 4
    if rng.random() < .2:
        a = np.vstack([a, a[: int(rng.integers(1, m + 1))]])
    b = a @ (rng.standard_normal(n) * (rng.random(n) < .6))
    b = b + 10.0 ** -int(rng.integers(0, 17)) * rng.standard_normal(a.shape[0])
    if rng.random() < .2:
        b = b * 10.0 ** int(rng.integers(-100, 100))
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def test_2_a_verified_answer_is_the_iterations_bit_for_bit() -> None:
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from passprice import calibrate

    taken = []

    @settings(max_examples=2000, deadline=None, derandomize=True)
    @given(st.integers(0, 2**32 - 1))
    def check(seed: int) -> None:
        a, b = _problem(seed)
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
        a_t = a.T
        tol = 1e-14 * max(1.0, float(np.abs(a).max(initial=0.0)) * float(np.abs(b).max(initial=0.0)) * a.shape[0])
        by_column = np.ascontiguousarray(a_t)
        with np.errstate(all="ignore"):
            got = calibrate._verified(a, b, a_t, by_column, tol)
            if got is not None:
                taken.append(seed)
                assert got.tobytes() == calibrate._active_set(a, b, a_t, by_column, tol).tobytes(), seed

    check()
    assert len(taken) > 400  # the verified path is walked (about a third of the problems)


# --- (3) what the build installs beside the package -------------------------------------------------------------


def test_3_a_pth_the_build_installs_is_named_by_the_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``src/passprice_sigint.pth`` is force-included into site-packages (pyproject.toml) and ``site`` runs it at
    every start of the interpreter: a pull request rewriting it can patch any module of an installed HEAD, and the
    review said "no changes to facts, registry, locks or the pricing model; 10 locks unaffected" (exit 0), naming
    nothing. Now the file is named as the code's change is (the verdict's code being BASE's in CI)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _repo(tmp_path)
    shutil.copy(REPO / "src" / "passprice_sigint.pth", root / "src")
    shutil.copy(REPO / "pyproject.toml", root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    hook = "import sys; exec('import passprice.schema')\n"
    (root / "src" / "passprice_sigint.pth").write_text(hook, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "a start hook")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0, result.output  # a changed code file is named, not refused, as src/passprice's are
    lines = result.stdout.splitlines()
    assert lines[1] == "no fact changed; no lock affected; 10 locks unaffected; passprice's own code changed (1 file)"
    assert "  src/passprice_sigint.pth (read by the build, or installed with the package)" in lines
