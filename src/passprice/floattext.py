"""A float's text is Python's own ``repr`` (the shortest decimal that reads back as the same double), whatever writes
it: these functions give that text for a whole NumPy array at once, character for character.

``repr`` of a float costs 0.2 to 1 µs a value in CPython (David Gay's shortest-digit search, one Python call a value);
a million-row sweep writes millions of them. orjson (a compiled JSON library) writes a float64 array's shortest
round-trip digits in C, tens of nanoseconds a value, in the same layout as ``repr`` (``1.5``, ``1e+16``,
``1.2345678901234568e+17``, ``0.0001``) except below 10^-4, where ``repr`` switches to an exponent of two digits
(``1.5e-07``, ``4.4e-05``) and orjson writes ``1.5e-7`` and ``0.000044``: those few are written by ``repr`` itself.
Without orjson installed every value is written by ``repr``: the same text, slower. ``tests/test_floattext.py``
holds the texts equal to ``repr`` on random bit patterns, every decade's edges and a whole sweep's columns.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; an old environment still writes the same text
    _orjson = None

#: Below this magnitude ``repr`` writes an exponent of at least two digits (``1e-05``, ``1.5e-07``), which orjson
#: writes otherwise: such values are written by ``repr``.
SMALL = 1e-4

#: Arrays shorter than this are written by ``repr`` (orjson's call costs more than a few ``repr`` s).
FEW = 8


#: Values whose texts show each layout ``repr`` uses from 10^-4 up (a whole number, a fraction, the exponent's turn at
#: 10^16, the largest and smallest normal magnitudes, a sign): orjson's texts of them are compared with ``repr`` once
#: a process, and a version of orjson that writes any of them otherwise is not used.
PROBES = (
    0.0, -0.0, 1.0, -2.5, 0.1, 0.0001, 0.00012345, 1.0000000000000002, 123.456, 1e15, 9999999999999998.0, 1e16,
    1.2345678901234568e17, 2.0**63, 1e22, 1e100, 1.7976931348623157e308, -1.5e-4, 0.30000000000000004,
)


def _orjson_texts(values: np.ndarray) -> list[str]:
    assert _orjson is not None
    blob: bytes = _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY)
    return blob[1:-1].decode("ascii").split(",")


@functools.cache
def fast() -> bool:
    """Whether orjson is installed and writes :data:`PROBES` (floats) and a few integers exactly as ``repr`` and
    ``str`` do (checked once a process)."""
    if _orjson is None:
        return False
    ints = (0, -1, 7, 10**15, -(2**63), 2**63 - 1)
    try:
        return _orjson_texts(np.array(PROBES, dtype=np.float64)) == list(map(repr, PROBES)) and _orjson_texts(
            np.array(ints, dtype=np.int64)
        ) == list(map(str, ints))
    except Exception:  # pragma: no cover - an orjson that cannot write arrays: repr writes everything
        return False


def float_reprs(values: Any) -> list[str]:
    """``repr`` of each element of ``values`` (a 1-D float64 array, ``(n,)``, every element finite), in order:
    exactly ``list(map(repr, values.tolist()))``. Raises ``ValueError`` for an array that is not 1-D; the text of a
    value that is not finite is undefined (a caller checks first, as the sweep does)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"float_reprs: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return list(map(repr, values.tolist()))
    texts = _orjson_texts(values)
    small = np.flatnonzero((np.abs(values) < SMALL) & (values != 0.0))
    if len(small):
        for i, text in zip(small.tolist(), map(repr, values[small].tolist()), strict=True):
            texts[i] = text
    return texts


def int_texts(values: Any) -> list[str]:
    """``str`` of each element of ``values`` (a 1-D integer array, ``(n,)``), in order: exactly
    ``list(map(str, values.tolist()))``. Raises ``ValueError`` for an array that is not 1-D."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError(f"int_texts: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return list(map(str, values.tolist()))
    return _orjson_texts(values)
