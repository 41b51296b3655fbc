"""The pricing model's fitting steps as earlier rounds left them, kept to compare the current ones against, bit for
bit: round 29's NNLS (:func:`reference_nnls`, test_perf_30) and round 36's binding terms (:func:`reference_binding`,
test_perf_37). A module of their own, importing NumPy and :mod:`passprice.calibrate` alone, so that a process
test_same_bytes starts with every old path put back imports neither pytest nor a test module (suite49: importing
them through test_perf_30 and test_perf_37 cost each such process ~0.1 s of CPU, three a run of that file)."""

from __future__ import annotations

from typing import Any

import numpy as np

from passprice import calibrate


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


def reference_binding(runs: Any, values: dict[str, float]) -> np.ndarray:
    """Round 36's binding terms: every share's part added into a (runs, 5) array of zeros, in SHARES order."""
    u = np.array([1.0 / values.get(p, 1.0) for p in calibrate.SHARES])
    parts = runs.comp * u
    terms = np.zeros((len(runs.t), 5))
    for j, term in enumerate(calibrate._TERM_INDEX.tolist()):
        terms[:, term] += parts[:, j]
    found: np.ndarray = np.argmax(terms, axis=1)
    return found
