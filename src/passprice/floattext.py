"""A float's text is Python's own ``repr`` (the shortest decimal that reads back as the same double), whatever writes
it: these functions give that text for a whole NumPy array at once, character for character.

``repr`` of a float costs 0.2 to 1 µs a value in CPython (David Gay's shortest-digit search, one Python call a value);
a million-row sweep writes millions of them. orjson (a compiled JSON library) writes a float64 array's shortest
round-trip digits in C, tens of nanoseconds a value, in ``repr``'s layout (``1.5``, ``1e+16``,
``1.2345678901234568e+17``, ``0.0001``) except below 10^-4: ``repr`` writes an exponent of at least two digits
(``1.5e-07``, ``4.4e-05``) where orjson writes ``1.5e-7`` and ``0.000044``. Those are rewritten on the bytes, with
NumPy, all at once (:func:`_repr_layout`): a ``0`` put before a one-digit negative exponent; ``0.0000DDD`` (orjson's
layout from 10^-5 to 10^-4 only) rewritten ``D.DDe-05``; the digits are orjson's. Once a process, orjson's texts of
:data:`PROBES` (every layout) are compared with ``repr``; without orjson, or with one that writes any probe otherwise,
every value is written by ``repr``: the same text, slower. ``tests/test_floattext.py`` holds the texts equal to
``repr`` on random bit patterns, every decade's edges and values like a sweep's; ``benchmarks/bench.py`` compares a
whole million-row sweep's CSV and JSON written both ways.
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

#: Arrays shorter than this are written by ``repr`` (orjson's call costs more than a few ``repr`` s).
FEW = 8

#: Values whose texts show each layout ``repr`` uses (a whole number, a fraction, the exponent's turn at 10^16 and at
#: 10^-4, one-, two- and three-digit exponents, the extremes, a sign, zero): orjson's texts of them, rewritten to
#: ``repr``'s layout, are compared with ``repr`` once a process, and an orjson that writes any otherwise is not used.
PROBES = (
    0.0, -0.0, 1.0, -2.5, 0.1, 0.0001, 0.00012345, 1.0000000000000002, 123.456, 1e15, 9999999999999998.0, 1e16,
    1.2345678901234568e17, 2.0**63, 1e22, 1e100, 1.7976931348623157e308, -1.5e-4, 0.30000000000000004,
    9.999999999999999e-05, 4.4e-05, -1.5e-05, 1e-05, 1.234e-05, 9.9e-06, 1.5e-07, -2.5e-09, 1e-10, 3e-300,
    2.2250738585072014e-308, 5e-324,
)

_E, _MINUS, _DOT, _ZERO, _COMMA, _CLOSE, _OPEN = (ord(c) for c in "e-.0,][")
_EXPONENT = np.frombuffer(b"e-05", dtype=np.uint8)


def _json(values: np.ndarray) -> bytes:
    """orjson's JSON of ``values`` (a float array of any shape, every element finite) in ``repr``'s layout, as ASCII
    bytes. The values below 10^-4 are written apart (:func:`_repr_layout` on their own JSON) and put back where
    orjson wrote ``null`` for them (the text of NaN, which no finite value has): the rewriting reads only their
    bytes. The text is cut at the nulls on one byte (``u`` and ``l`` deleted first: no number has them), which
    bytes.split and bytes.replace find with memchr, not a search for a four-byte pattern at every character."""
    assert _orjson is not None
    small = (np.abs(values) < SMALL) & (values != 0.0)
    if not small.any():
        return _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY)  # type: ignore[no-any-return]
    text = _orjson.dumps(np.where(small, np.nan, values), option=_orjson.OPT_SERIALIZE_NUMPY)
    tiny = np.frombuffer(_orjson.dumps(values[small], option=_orjson.OPT_SERIALIZE_NUMPY), dtype=np.uint8)
    out = text.replace(b"u", b"").replace(b"l", b"").split(b"n")
    joined: list[bytes] = [b""] * (2 * len(out) - 1)
    joined[0::2] = out
    joined[1::2] = _repr_layout(tiny)[1:-1].tobytes().split(b",")
    return b"".join(joined)


#: Below this magnitude ``repr``'s exponent layout differs from orjson's (:func:`_repr_layout`).
SMALL = 1e-4


def _repr_layout(a: np.ndarray) -> np.ndarray:
    """``a`` (the bytes of orjson's JSON of a float array) with every number below 10^-4 rewritten in ``repr``'s
    layout: ``De-N`` and ``D.DDe-N`` with one digit N get a ``0`` before it; ``0.0000DDD`` (``-0.0000DDD``) becomes
    ``D.DDe-05`` (``De-05`` for one digit). A number starts after ``[``, ``,`` or ``-`` and ends at ``,`` or ``]``."""
    n = len(a)
    # A one-digit negative exponent: e, -, a digit, then the number's end.
    es = np.flatnonzero(a == _E)
    es = es[es + 3 < n]
    es = es[(a[es + 1] == _MINUS) & ((a[es + 3] == _COMMA) | (a[es + 3] == _CLOSE))]
    # 0.0000 at a number's start (orjson writes 10^-5 <= |x| < 10^-4 so, and nothing else).
    dots = np.flatnonzero(a == _DOT)
    dots = dots[(dots >= 2) & (dots + 5 < n)]
    if len(dots):
        fours = (a[dots + 1] == _ZERO) & (a[dots + 2] == _ZERO) & (a[dots + 3] == _ZERO) & (a[dots + 4] == _ZERO)
        dots = dots[fours & (a[dots - 1] == _ZERO)]
        before = a[dots - 2]
        dots = dots[(before == _OPEN) | (before == _COMMA) | (before == _MINUS)]
    if not len(es) and not len(dots):
        return a
    positions = [es + 2]
    inserted = [np.full(len(es), _ZERO, dtype=np.uint8)]
    keep = np.ones(n, dtype=bool)
    if len(dots):
        starts = dots - 1  # the number's leading 0
        ends = np.flatnonzero((a == _COMMA) | (a == _CLOSE))
        ends = ends[np.searchsorted(ends, starts)]  # the first , or ] after each
        for k in range(6):  # "0.0000"
            keep[starts + k] = False
        longer = ends - (starts + 6) > 1
        positions += [starts[longer] + 7, np.repeat(ends, 4)]
        inserted += [np.full(int(longer.sum()), _DOT, dtype=np.uint8), np.tile(_EXPONENT, len(ends))]
    where = np.concatenate(positions)
    if len(dots):
        # Bytes removed before each insertion: six for each 0.0000 that starts before it (none holds one).
        where = where - 6 * np.searchsorted(starts, where)
    return np.insert(a[keep], where, np.concatenate(inserted))


@functools.cache
def fast() -> bool:
    """Whether orjson is installed and writes :data:`PROBES` (floats, in ``repr``'s layout once rewritten) and a few
    integers exactly as ``repr`` and ``str`` do (checked once a process)."""
    if _orjson is None:
        return False
    ints = (0, -1, 7, 10**15, -(2**63), 2**63 - 1)
    try:
        floats = _json(np.array(PROBES, dtype=np.float64)).decode()[1:-1].split(",")
        integers = str(_orjson.dumps(np.array(ints), option=_orjson.OPT_SERIALIZE_NUMPY), "ascii")[1:-1].split(",")
        return floats == list(map(repr, PROBES)) and integers == list(map(str, ints))
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
    return _json(values)[1:-1].decode("ascii").split(",")


def float_rows(values: Any, lead: str = "") -> list[str]:
    """Each row of ``values`` (a 2-D float64 array, ``(n, k)``, every element finite) as ``lead`` and the ``repr``
    of its ``k`` floats joined by commas, in order: exactly ``[lead + ",".join(map(repr, row)) for row in
    values.tolist()]`` (a CSV line's run of float cells; ``lead=","`` gives each its separator too). Raises
    ``ValueError`` for an array that is not 2-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_rows: a 2-D array, not shape {values.shape}")
    if values.size < FEW or not fast() or lead not in ("", ","):
        return [lead + ",".join(map(repr, row)) for row in values.tolist()]
    # [[a,b],[c,d]] without its "[": a,b],c,d]] — cut at "]" (one byte: memchr): a,b  ,c,d  ""  "".
    rows = _json(values).replace(b"[", b"").decode("ascii").split("]")[:-2]
    if lead:
        rows[0] = "," + rows[0]
    else:
        rows[1:] = [row[1:] for row in rows[1:]]
    return rows


def float_cells(values: Any) -> list[str]:
    """``repr`` of each element of ``values`` (a 2-D float64 array, ``(n, k)``, every element finite), row by row:
    exactly ``list(map(repr, values.ravel().tolist()))``, the ``n × k`` texts from one orjson call. Raises
    ``ValueError`` for an array that is not 2-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_cells: a 2-D array, not shape {values.shape}")
    if values.size < FEW or not fast():
        return list(map(repr, values.ravel().tolist()))
    return _json(values.ravel())[1:-1].decode("ascii").split(",")


def int_texts(values: Any) -> list[str]:
    """``str`` of each element of ``values`` (a 1-D integer array, ``(n,)``), in order: exactly
    ``list(map(str, values.tolist()))``. Raises ``ValueError`` for an array that is not 1-D."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError(f"int_texts: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return list(map(str, values.tolist()))
    return str(_orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY), "ascii")[1:-1].split(",")
