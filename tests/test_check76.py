"""A cold ``check``'s work cut without changing what it computes (check76): the NNLS's entering variable chosen in
one pass (:func:`passprice.calibrate._entering`) is round 37's two-pass choice on every gradient, NaNs and infinities
included; a module's kept tree is compressed at zlib level 1 (:data:`passprice.pins.TREE_LEVEL`), and a tree an
older passprice kept at level 6 is read back as it is."""

from __future__ import annotations

import base64
import math
import random
import zlib
from pathlib import Path

import pytest

from passprice import calibrate, pins


def two_passes(w: list[float], held: list[bool], tol: float) -> int:
    """Round 37's choice in :func:`passprice.calibrate.nnls`: stop unless a free gradient is past ``tol``, then
    :func:`passprice.calibrate._first_largest` of the gradients with every held one -inf."""
    if not any(v > tol for v, h in zip(w, held, strict=True) if not h):
        return -1
    return calibrate._first_largest([-math.inf if h else v for v, h in zip(w, held, strict=True)])


@pytest.mark.parametrize(
    ("w", "held", "tol", "index"),
    [
        ([0.5, 3.0, 3.0, math.nan], [False, False, False, True], 1.0, 1),  # a held NaN is no candidate; ties: first
        ([1.0, math.nan, 5.0, math.nan], [False] * 4, 1.0, 1),  # a free NaN is chosen first, as argmax chooses it
        ([math.nan, 2.0], [False, False], 1.0, 0),
        ([math.nan, 0.5], [False, False], 1.0, -1),  # no free gradient past tol: nothing enters
        ([-math.inf, 7.0, 3.0], [False, True, False], 0.0, 2),  # the held 7.0 is passed over
        ([2e-14, 1e-14], [False, False], 1e-14, 0),  # past tol strictly
        ([1e-14, 1e-14], [False, False], 1e-14, -1),
        ([0.0, -0.0, 1.0], [False, False, True], -1.0, 0),  # 0.0 and -0.0 are equal: the first
        ([math.inf, math.inf], [False, False], math.inf, -1),  # tol inf (an infinite a or b): nothing is past it
        ([], [], 0.0, -1),
    ],
)
def test_the_entering_variable_by_hand(w: list[float], held: list[bool], tol: float, index: int) -> None:
    assert calibrate._entering(w, held, tol) == index == two_passes(w, held, tol)


def test_the_entering_variable_is_round_37s_on_hostile_gradients() -> None:
    rng = random.Random(76)
    pool = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-14, 2e-14, 1.0, -1.0, 3.0, 3.0, 1e300, -1e300]
    entered = 0
    for _ in range(5000):
        n = rng.randint(1, 9)
        w = [rng.choice(pool) if rng.random() < 0.6 else rng.uniform(-2, 2) for _ in range(n)]
        held = [rng.random() < 0.3 for _ in range(n)]
        tol = rng.choice([1e-14, 1.0, math.inf, 0.0])
        got = calibrate._entering(w, held, tol)
        assert got == two_passes(w, held, tol), (w, held, tol)
        entered += got >= 0
    assert entered > 2000  # most draws enter a variable: the choice itself is compared, not only the stop


def test_a_kept_tree_is_level_1_and_a_level_6_one_still_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    from passprice import cache

    text = '["Module",["body",[["Pass"]]]]' * 40
    tree = pins._Tree(text, ("serving",), 12)
    pins._keep_tree("ab" * 32, tree)
    kept = cache.read(pins._tree_key("ab" * 32))
    assert kept is not None
    packed = base64.b64decode(kept["tree"])
    assert packed[:2] == b"\x78\x01"  # zlib's header: FLEVEL 0, the fastest (level 1)
    again = pins._kept_tree("ab" * 32)
    assert again is not None and (again.text, again.imports, again.tokens) == (text, ("serving",), 12)
    # What passprice before check76 kept (level 6: the header 78 9C) reads back as the same tree.
    old = base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")
    assert base64.b64decode(old)[:2] == b"\x78\x9c"
    cache.store(pins._tree_key("cd" * 32), {"tree": old, "imports": ["serving"], "tokens": 12})
    older = pins._kept_tree("cd" * 32)
    assert older is not None and (older.text, older.imports, older.tokens) == (text, ("serving",), 12)


def test_the_column_norms_are_numpys_bit_for_bit() -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(76)
    hostile = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1e-310, 1e154, 1e200, -1e-200]
    for m, k in [(1, 1), (3, 2), (72, 7), (111, 9), (5, 0), (0, 3)]:
        for spiked in (False, True):
            a = rng.normal(size=(m, k)) * rng.choice([1e-30, 1.0, 1e30], size=(m, k))
            if spiked and a.size:
                spikes = max(1, a.size // 5)
                a.flat[rng.integers(0, a.size, size=spikes)] = rng.choice(hostile, size=spikes)
            with np.errstate(over="ignore", invalid="ignore"):  # 1e200 squared: inf, as NumPy's own makes it
                got, want = calibrate._column_norms(a), np.linalg.norm(a, axis=0)
            assert got.dtype == want.dtype and got.shape == want.shape == (k,)
            assert got.tobytes() == want.tobytes(), (a, got, want)
    # By hand: the columns (3, 4) and (0, 0) are 5 and 0 long.
    assert calibrate._column_norms(np.array([[3.0, 0.0], [4.0, 0.0]])).tolist() == [5.0, 0.0]
