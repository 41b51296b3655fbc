"""A float's text is Python's own ``repr`` (the shortest decimal that reads back as the same double), whatever writes
it: these functions give that text for a whole NumPy array at once, character for character.

``repr`` of a float costs 0.2 to 1 µs a value in CPython (David Gay's shortest-digit search, one Python call a value);
a million-row sweep writes millions of them. orjson (a compiled JSON library) writes a float64 array's shortest
round-trip digits in C, tens of nanoseconds a value, in ``repr``'s layout (``1.5``, ``1e+16``,
``1.2345678901234568e+17``, ``0.0001``) except below 10^-4: ``repr`` writes an exponent of at least two digits
(``1.5e-07``, ``4.4e-05``) where orjson writes ``1.5e-7`` and ``0.000044``. Those are rewritten on the bytes, with
NumPy, all at once (:func:`_small_texts`): a ``0`` put before a one-digit negative exponent; ``0.0000DDD`` (orjson's
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
from numpy.lib.stride_tricks import as_strided

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

def _json(values: np.ndarray) -> bytes | bytearray:
    """orjson's JSON of ``values`` (a float array of any shape, every element finite) in ``repr``'s layout, as ASCII
    bytes. The values below 10^-4 are written apart (:func:`_small_texts`); where no value has its sign bit set (a
    sweep's prices, times and byte counts) they are put in place of stand-ins of their lengths (:func:`_patched`),
    else back where orjson wrote ``null`` for them (the text of NaN, which no finite value has): the text is cut at
    its nulls (one ``split``, whose search skips ahead on the rare ``l``; deleting ``u`` and ``l`` and cutting at
    ``n``, one byte, took 1.5 × the instructions: three passes over the text, and CPython cuts at one character a
    character at a time)."""
    assert _orjson is not None
    small = (np.abs(values) < SMALL) & (values != 0.0)
    if not small.any():
        return _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY)  # type: ignore[no-any-return]
    stand_ins = _stand_ins()
    if stand_ins is not None and not np.signbit(values).any():
        patched = _patched(values, small, stand_ins)
        if patched is not None:
            return patched
    text = _orjson.dumps(np.where(small, np.nan, values), option=_orjson.OPT_SERIALIZE_NUMPY)
    out = text.split(b"null")
    joined: list[bytes] = [b""] * (2 * len(out) - 1)
    joined[0::2] = out
    joined[1::2] = _small_texts(values[small]).split(b",")
    return b"".join(joined)


#: Below this magnitude ``repr``'s exponent layout differs from orjson's (:func:`_small_texts`).
SMALL = 1e-4

#: The longest ``repr`` of a double: ``-1.2345678901234567e-100``.
_LONGEST = 24


@functools.cache
def _stand_ins() -> np.ndarray | None:
    """For each length ``L`` from 5 to :data:`_LONGEST`, a negative double whose orjson text is ``L`` bytes long
    (``-10.0`` … ``-1000000000000000.0``, then ``-1.1…1e+300``), at index ``L``; ``None`` when orjson writes any of
    them at another length (then :func:`_json` cuts its text at its nulls instead)."""
    assert _orjson is not None
    table = np.zeros(_LONGEST + 1, dtype=np.float64)
    for length in range(5, _LONGEST + 1):
        table[length] = -float(10 ** (length - 4)) if length <= 19 else float(f"-1.{'1' * (length - 8)}e+300")
    texts = _orjson.dumps(table[5:], option=_orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",")
    return table if [len(t) for t in texts] == list(range(5, _LONGEST + 1)) else None


def _patched(values: np.ndarray, small: np.ndarray, stand_ins: np.ndarray) -> bytearray | None:
    """:func:`_json`'s text of ``values`` (no sign bit set anywhere) made in place: each value of ``small`` is
    replaced by the stand-in of its ``repr``'s length (a negative double, :func:`_stand_ins`), orjson writes the
    array once, and each stand-in's bytes — the only ``-`` in the text — are overwritten by that ``repr``
    (:func:`_small_texts`), with one NumPy scatter: no cut of the whole text and no join of its pieces (which took
    about as long as orjson's writing of the array). ``None`` if the text holds another ``-`` than the stand-ins'."""
    assert _orjson is not None
    table = _small_table(values[small])
    if table is None:  # pragma: no cover - no positive double's text is that long
        return None
    texts, lengths = table
    filled = values.copy()
    filled[small] = stand_ins[lengths]
    made = bytearray(_orjson.dumps(filled, option=_orjson.OPT_SERIALIZE_NUMPY))
    out = np.frombuffer(made, dtype=np.uint8)  # the bytearray's own bytes: written in place
    starts = np.flatnonzero(out == _MINUS)
    if len(starts) != len(lengths):
        return None
    _put(out, starts, texts, lengths)
    return made  # its bytes are decoded or cut where they lie (:func:`_inner`), not copied into a bytes object first

_MINUS, _ZERO, _COMMA, _CLOSE = (ord(c) for c in "-0,]")

#: The bytes :func:`_small_texts` puts in that orjson's text lacks: ``.`` (at 0), ``0`` (1), ``e-05`` (2 to 5).
_ADDED = np.frombuffer(b".0e-05", dtype=np.uint8)


def _small_texts(values: np.ndarray) -> bytes:
    """``repr`` of each of ``values`` (a 1-D float array, every element finite with 0 < |x| < 10^-4), joined by
    commas, from orjson's text of them: ``0.0000DDD`` (orjson's layout from 10^-5 to 10^-4, and only there)
    becomes ``D.DDe-05`` (``De-05`` for one digit), and a one-digit negative exponent ``e-N`` becomes ``e-0N``; the
    digits are orjson's. Each output value is cut from at most six runs of bytes (of orjson's text or of
    :data:`_ADDED`), gathered with one ``repeat`` and one ``take``: a few NumPy passes, no Python object a
    value."""
    return _small_runs(values, separated=True)[0].tobytes()


def _small_runs(values: np.ndarray, separated: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_small_texts`'s bytes (``separated``: with the commas between them; else the texts back to back) and
    each text's length (``(n,)``, its comma not counted)."""
    assert _orjson is not None
    a = np.frombuffer(_orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY), dtype=np.uint8)
    n = len(a)
    ends = np.flatnonzero((a == _COMMA) | (a == _CLOSE))  # each value's end: its , or the closing ]
    starts = np.empty_like(ends)
    starts[0] = 1
    starts[1:] = ends[:-1] + 1
    sign = (a[starts] == _MINUS).astype(np.int64)
    digit = starts + sign
    fixed = a[digit] == _ZERO  # 0.0000DDD (0 < |x| < 10^-4: a leading 0 is that layout's)
    short = ~fixed & (a[ends - 2] == _MINUS)  # De-N: an exponent of one digit
    count = ends - digit - 6  # the digits D of 0.0000D…
    whole = ends - starts
    source = np.empty((len(ends), 6), dtype=np.int64)
    length = np.zeros((len(ends), 6), dtype=np.int64)
    # The sign of 0.0000D… (then its first digit D, a "." when more digits follow, the rest, "e-05"); the text up
    # to an exponent's digit (then "0" and that digit); any other value whole. Then the value's , or ].
    source[:, 0] = starts
    length[:, 0] = np.where(fixed, sign, np.where(short, whole - 1, whole))
    source[:, 1] = np.where(fixed, digit + 6, n + 1)
    length[:, 1] = fixed | short
    source[:, 2] = np.where(fixed, n, ends - 1)
    length[:, 2] = (fixed & (count > 1)) | short
    source[:, 3] = digit + 7
    length[:, 3] = np.where(fixed, count - 1, 0)
    source[:, 4] = n + 2
    length[:, 4] = fixed * 4
    source[:, 5] = ends
    length[:, 5] = separated
    runs = length.ravel()
    index = np.repeat(source.ravel() - (np.cumsum(runs) - runs), runs) + np.arange(int(runs.sum()))
    texts = np.concatenate([a, _ADDED])[index[:-1] if separated else index]
    return texts, length[:, :5].sum(axis=1)


#: The width of a row of :func:`_small_table`: the longest text orjson writes for a positive value below 10^-4
#: (``0.0000`` and 17 digits, or ``1.2345678901234567e-100``: 23 bytes), and a byte more.
_WIDE = 24
_COLUMNS = np.arange(_WIDE, dtype=np.int64)
#: A :func:`_small_table` row as one item.
_ROW = np.dtype(f"V{_WIDE}")
_EXPONENT = np.frombuffer(b"e-05", dtype=np.uint8)


def _small_table(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``repr`` of each of ``values`` (a 1-D float array, every element finite with 0 < x < 10^-4, no sign bit
    set) as the rows of a ``(n, 24)`` byte table, each text left-aligned (the bytes after it undefined), and each
    text's length (``(n,)``): :func:`_small_runs`' texts without its six runs a value, each one index a byte (a
    repeat, a range and a gather of every byte, then the same again to put them in place: most of a sweep's JSON
    floats' time went to its 8 % of values below 10^-4, about 280 ns each). orjson's text of the values is read
    into the table a row a value (one gather of ``n × 24`` bytes, no repeat), ``0.0000DDD`` (orjson's layout from
    10^-5 to 10^-4) moved one column at a time for all its rows at once (``D.DD``, then ``e-05`` at each row's
    end), and a one-digit exponent's digit moved one byte on with a ``0`` before it: a few NumPy calls a table
    whatever its values. ``None`` when orjson writes a value longer than 23 bytes (the caller writes them as
    before)."""
    assert _orjson is not None
    a = np.frombuffer(_orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY), dtype=np.uint8)
    ends = np.flatnonzero((a == _COMMA) | (a == _CLOSE))  # each value's end: its , or the closing ]
    starts = np.empty_like(ends)
    starts[0] = 1
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts
    if int(lengths.max()) >= _WIDE:  # pragma: no cover - no positive double's text is that long
        return None
    # Row i: the 24 bytes from value i's start (a view of every 24-byte window of the text, rows gathered whole).
    padded = np.concatenate([a, np.zeros(_WIDE, dtype=np.uint8)])
    table = _rows(_windows(padded)[starts])
    fixed = np.flatnonzero(table[:, 0] == _ZERO)  # 0.0000D… (no sign: a leading 0 is that layout's)
    if len(fixed):
        # 0.0000 D1 D2 … Dk → D1 . D2 … Dk e-05 (D1 e-05 for one digit): the digits after the first moved back five
        # columns, D1 to the first, then e-05 after the last digit.
        # Every row moved in place (a few column copies), the rows of other layouts (a sweep's few) kept apart and
        # put back: no copy of the rows of this layout, most of a sweep's small values.
        others = np.flatnonzero(table[:, 0] != _ZERO) if len(fixed) < len(table) else None
        kept = _items(table)[others] if others is not None else None
        count = lengths[fixed] - 6
        table[:, 0] = table[:, 6]
        table[:, 1] = ord(".")
        table[:, 2 : _WIDE - 5] = table[:, 7:_WIDE]
        at = np.where(count > 1, count + 1, 1)
        # e-05 written as one 4-byte window a row, each in its own row (rows laid end to end, 24 bytes apart).
        flat = table.reshape(-1)
        as_strided(flat, shape=(len(flat) - 3, 4), strides=(1, 1))[fixed * _WIDE + at] = _EXPONENT
        if others is not None:
            _items(table)[others] = kept
        lengths[fixed] = at + 4
    short = np.flatnonzero(table[np.arange(len(ends)), np.maximum(lengths - 2, 0)] == _MINUS)  # De-N: one digit
    if len(short):
        last = lengths[short] - 1
        table[short, last + 1] = table[short, last]
        table[short, last] = _ZERO
        lengths[short] += 1
    return table, lengths


#: For each length from 0 to 24, which of a :func:`_small_table` row's 24 bytes hold a text of that length (255).
_INSIDE = np.where(np.arange(_WIDE + 1)[:, None] > _COLUMNS, 255, 0).astype(np.uint8)
_INSIDE_ITEMS = _INSIDE.reshape(-1).view(_ROW)


def _windows(text: np.ndarray) -> np.ndarray:
    """Every 24-byte window of ``text`` (a 1-D byte array), as one item each (``(len − 23,)``, 24-byte void items, a
    byte apart: a view, writable when ``text`` is): rows gathered or written whole, one copy an item, not a byte."""
    return np.ndarray(shape=(max(len(text) - _WIDE + 1, 0),), dtype=_ROW, buffer=text, strides=(1,))


def _items(rows: np.ndarray) -> np.ndarray:
    """``rows`` (a C-contiguous ``(n, 24)`` byte array) as ``(n,)`` 24-byte items: a view."""
    return rows.reshape(-1).view(_ROW)


def _rows(items: np.ndarray) -> np.ndarray:
    """``items`` (a contiguous ``(n,)`` array of 24-byte items) as ``(n, 24)`` bytes: a view."""
    return items.view(np.uint8).reshape(-1, _WIDE)


def _put(text: np.ndarray, starts: np.ndarray, texts: np.ndarray, lengths: np.ndarray) -> None:
    """Write the first ``lengths[i]`` bytes of row ``i`` of ``texts`` (:func:`_small_table`'s) at ``text[starts[i]:]``
    (``text``: a writable byte array; ``starts`` ascending, each text over a stand-in of its length in a JSON array
    of numbers, so at least 6 bytes after the one before). Each row is written whole, 24 bytes, its bytes past its
    text being those already there (read from the text, then written back): four rounds, every fourth row in a round
    (24 bytes from one stand-in's start, the fourth stand-in after it starts at the earliest), the bytes read again
    each round, so no round writes back a byte an earlier one wrote; rows too near the end of ``text`` are written
    byte by byte. A few NumPy calls whatever the rows (an index a byte, ``n × 24`` of them, and the bytes picked
    with it, cost 1.6 × the instructions of the rest of the small values' rewriting on a sweep's JSON)."""
    room = len(text) - _WIDE + 1
    windows = _windows(text)
    fits = int(np.searchsorted(starts, room))  # rows 0 … fits − 1 have 24 bytes from their start
    # The rows in the rounds' order, so each round's are one contiguous block (a where over contiguous rows).
    order = np.concatenate([np.arange(first, fits, 4) for first in range(4)]) if fits > 4 else np.arange(fits)
    # (Rows gathered as 24-byte items: one copy a row, not a loop over its bytes.)
    ordered = _rows(_items(texts)[order])
    inside, at = _rows(_INSIDE_ITEMS[lengths[order]]), starts[order]
    done = 0
    for first in range(min(4, fits)):
        end = done + len(range(first, fits, 4))
        rows = _rows(windows[at[done:end]])
        # The text's bytes where the mask is 255, the bytes read elsewhere: rows ^ ((rows ^ text) & mask).
        change = np.bitwise_xor(rows, ordered[done:end])
        change &= inside[done:end]
        rows ^= change
        windows[at[done:end]] = _items(rows)
        done = end
    for row in range(fits, len(starts)):
        text[starts[row] : starts[row] + lengths[row]] = texts[row, : lengths[row]]


def _inner(text: bytes | bytearray, brackets: int) -> str:
    """The ASCII ``text`` (:func:`_json`'s) without its first and last ``brackets`` bytes, decoded in one copy (a
    slice of the bytes, then their decoding, and a slice of the string were three copies of the whole text)."""
    return str(memoryview(text)[brackets:-brackets], "ascii")


@functools.cache
def fast() -> bool:
    """Whether orjson is installed and writes :data:`PROBES` (floats, in ``repr``'s layout once rewritten) and a few
    integers exactly as ``repr`` and ``str`` do (checked once a process)."""
    if _orjson is None:
        return False
    ints = (0, -1, 7, 10**15, -(2**63), 2**63 - 1)
    try:
        floats = _inner(_json(np.array(PROBES, dtype=np.float64)), 1).split(",")
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
    return _inner(_json(values), 1).split(",")


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
    if lead:
        # [[a,b],[c,d]] without its "[": a,b],c,d]] — cut at "]": a,b  ,c,d  ""  "".
        rows = bytes(_json(values)).replace(b"[", b"").decode("ascii").split("]")[:-2]
        rows[0] = "," + rows[0]
        return rows
    # [[a,b],[c,d]] cut at "],[" inside its outer brackets: a,b  c,d (CPython's search for the three bytes skips
    # ahead on the rare "[", fewer instructions than a cut at one byte, which it steps through a byte at a time).
    return _inner(_json(values), 2).split("],[")


def float_rows_bytes(values: Any) -> list[bytes]:
    """:func:`float_rows` (``lead=""``) as ASCII bytes: exactly ``[",".join(map(repr, row)).encode() for row in
    values.tolist()]`` (``values`` 2-D, ``(n, k)``, every element finite), cut from orjson's bytes without a ``str``
    made (a sweep's CSV is made as bytes: no text decoded, then encoded again to be written). Raises ``ValueError``
    for an array that is not 2-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_rows_bytes: a 2-D array, not shape {values.shape}")
    if values.size < FEW or not fast():
        return [",".join(map(repr, row)).encode("ascii") for row in values.tolist()]
    # [[a,b],[c,d]] cut at "],[", then "[[" cut off the first row and "]]" off the last: the text is not copied
    # whole before the cut (orjson's bytes as they are; a patched array's bytes copied once).
    text = _json(values)
    rows = (text if isinstance(text, bytes) else bytes(text)).split(b"],[")
    rows[0] = rows[0][2:]
    rows[-1] = rows[-1][:-2]
    return rows


def float_rows_keyed_bytes(values: Any, between: Any) -> list[bytes]:
    """Each row of ``values`` (a 2-D float64 array, ``(n, k)``, every element finite) as the ``repr`` of its ``k``
    floats with ``between[j]`` (ASCII bytes, ``k − 1`` of them) between its floats ``j`` and ``j + 1``, as ASCII
    bytes, in order: exactly ``[b"".join(repr(v).encode() + sep for v, sep in zip(row, (*between, b""))) for row
    in values.tolist()]`` (a sweep's JSON row's run of floats, each after its key: ``1.5, "pass_s": 0.25``).
    orjson writes the array once (:func:`_json_commas`: the values below 10^-4 put in place at the offsets of the
    commas, the text searched once), each comma inside a row is overwritten with a marker byte of its column (one
    NumPy scatter), each marker is replaced by its text (one ``bytes.replace`` a column, a
    search for one byte), and the text is sliced into rows at the markers of the commas between rows: one bytes
    object a row, not one a float and one a key (sweepjson100: a sweep's JSON laid out a cell at a time joined 16
    items a priced row). Raises ``ValueError`` for an array that is not 2-D or a ``between`` that is not ``k − 1``
    long."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_rows_keyed_bytes: a 2-D array, not shape {values.shape}")
    n, k = values.shape
    between = [bytes(b) for b in between]
    if len(between) != max(k - 1, 0):
        raise ValueError(f"float_rows_keyed_bytes: {max(k - 1, 0)} texts between {k} columns, not {len(between)}")
    if values.size < FEW or not fast() or k > len(_MARKS) or any(m in b for b in between for m in _MARKS[:k]):
        return [_keyed_row(row, between) for row in values.tolist()]
    if k == 1:
        return _cells_bytes(values.ravel())
    # The values in one run ([a,b,c,d]): each comma is a row's inner one or the one between two rows, which is
    # overwritten too (with the byte after the last column's), so the rows are cut at one byte, not at "],[".
    found = _json_commas(values.ravel())
    if found is None:  # pragma: no cover - a float's text holds no comma
        return [_keyed_row(row, between) for row in values.tolist()]
    text, commas = found
    a = np.frombuffer(text, dtype=np.uint8)
    # One scatter of the markers, a row's k laid end to end n times (the last one, after the last row, dropped):
    # two thirds of the time of k scatters at every k-th comma.
    a[commas] = np.tile(_MARK_BYTES[:k], n)[:-1]
    del a  # the bytearray's buffer is released before it is copied
    out = bytes(text)
    for j in range(k - 1):
        out = out.replace(_MARKS[j : j + 1], between[j])
    # Each row sliced at its bounds, found from the markers between rows: a row's inner markers each grew by their
    # text's length less one byte, so row i starts i rows' growth later and ends i + 1 rows' growth later (a cut at
    # the marker, a byte at a time over the whole text, took about twice the time and four times the instructions).
    grow = sum(len(b) for b in between) - (k - 1)
    rows_between = commas[k - 1 :: k]
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    starts[0], starts[1:] = 1, rows_between + 1
    ends[:-1], ends[-1] = rows_between, len(text) - 1
    shift = np.arange(n, dtype=np.int64) * grow
    starts += shift
    ends += shift + grow
    return [out[start:stop] for start, stop in zip(starts.tolist(), ends.tolist(), strict=True)]


def _json_commas(values: np.ndarray) -> tuple[bytearray, np.ndarray] | None:
    """:func:`_json`'s text of ``values`` (a 1-D float array, ``(n,)``, every element finite), as a ``bytearray``,
    and the offsets of its ``n − 1`` commas (``(n − 1,)`` integers), from one search of its bytes: where no value
    has its sign bit set, the values below 10^-4 are written over their stand-ins (:func:`_patched`'s way) at the
    offsets the commas give (value ``i`` starts one byte after comma ``i − 1``), not at a second search of the
    whole text for the stand-ins' ``-`` (two searches of every byte of the text, each a comparison and a
    ``flatnonzero``, were about a tenth of a sweep's JSON rows' instructions). ``None`` when the text holds
    another number of commas."""
    assert _orjson is not None
    n = len(values)
    small = (np.abs(values) < SMALL) & (values != 0.0)
    stand_ins = _stand_ins() if small.any() and not np.signbit(values).any() else None
    patch = False
    if stand_ins is not None:
        table = _small_table(values[small])
        if table is not None:
            patch = True
            texts, lengths = table
            filled = values.copy()
            filled[small] = stand_ins[lengths]
            text = bytearray(_orjson.dumps(filled, option=_orjson.OPT_SERIALIZE_NUMPY))
    if not patch:
        made = _json(values)
        text = made if isinstance(made, bytearray) else bytearray(made)
    a = np.frombuffer(text, dtype=np.uint8)
    commas = np.flatnonzero(a == _COMMA)
    if len(commas) != n - 1:
        return None
    if patch:
        at = np.flatnonzero(small)
        starts = np.where(at == 0, 1, commas[at - 1] + 1)
        # Each stand-in's text is its value's length, a "-" first (:func:`_stand_ins`); a value above 10^-4 has
        # none (no sign bit set, no negative exponent): where another "-" stood, the text is written again.
        if not (a[starts] == _MINUS).all():  # pragma: no cover - orjson writes a stand-in at another place
            del a
            made = _json(values)
            text = made if isinstance(made, bytearray) else bytearray(made)
            a = np.frombuffer(text, dtype=np.uint8)
            commas = np.flatnonzero(a == _COMMA)
            return (text, commas) if len(commas) == n - 1 else None
        _put(a, starts, texts, lengths)
    del a  # the bytearray's buffer is released: the caller may resize it
    return text, commas


#: The marker bytes :func:`float_rows_keyed_bytes` puts in place of a row's commas, by column (none is in a float's
#: text, nor in a JSON key's).
_MARKS = bytes(range(1, 32))
_MARK_BYTES = np.frombuffer(_MARKS, dtype=np.uint8)


def _keyed_row(row: list[float], between: list[bytes]) -> bytes:
    """:func:`float_rows_keyed_bytes`'s text of one row, made with ``repr``."""
    texts = [repr(v).encode("ascii") for v in row]
    out = texts[0]
    for sep, text in zip(between, texts[1:], strict=True):
        out += sep + text
    return out


def float_cells(values: Any) -> list[str]:
    """``repr`` of each element of ``values`` (a 2-D float64 array, ``(n, k)``, every element finite), row by row:
    exactly ``list(map(repr, values.ravel().tolist()))``, the ``n × k`` texts from one orjson call. Raises
    ``ValueError`` for an array that is not 2-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_cells: a 2-D array, not shape {values.shape}")
    if values.size < FEW or not fast():
        return list(map(repr, values.ravel().tolist()))
    return _inner(_json(values.ravel()), 1).split(",")


def int_texts(values: Any) -> list[str]:
    """``str`` of each element of ``values`` (a 1-D integer array, ``(n,)``), in order: exactly
    ``list(map(str, values.tolist()))``. Raises ``ValueError`` for an array that is not 1-D."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError(f"int_texts: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return list(map(str, values.tolist()))
    return str(_orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY), "ascii")[1:-1].split(",")


def _cells_bytes(values: np.ndarray) -> list[bytes]:
    """``repr`` of each of ``values`` (a 1-D float64 array, every element finite), as ASCII bytes: orjson's text of
    the array cut at its commas (its brackets cut off the first and last texts), then the texts of the values below
    10^-4, whose layout is not ``repr``'s there, put in their places in the list (:func:`_small_texts`, a few NumPy
    passes over those values alone). A text cut into one item a value needs no stand-ins written and patched in the
    whole text (:func:`_json`'s way, for a text cut into rows: a copy of the array, a search of every byte of the
    text and a scatter into it); on a million-row sweep's JSON cells (2.0 M values, 8 % of them below 10^-4) the
    cells took 0.164 s of CPU that way and 0.153 s this way (json75; the whole JSON text: below the noise)."""
    assert _orjson is not None
    cells: list[bytes] = _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY).split(b",")
    cells[0] = cells[0][1:]  # [a  …  z]: the brackets cut off
    cells[-1] = cells[-1][:-1]
    small = (np.abs(values) < SMALL) & (values != 0.0)
    if small.any():
        for at, text in zip(np.flatnonzero(small).tolist(), _small_texts(values[small]).split(b","), strict=True):
            cells[at] = text
    return cells


def float_reprs_bytes(values: Any) -> list[bytes]:
    """:func:`float_reprs` as ASCII bytes: exactly ``[repr(v).encode() for v in values.tolist()]``, each text cut
    from orjson's bytes without a ``str`` made (a sweep's JSON rows are made as bytes: no text decoded, then
    encoded again to be written). Raises ``ValueError`` for an array that is not 1-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"float_reprs_bytes: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return [repr(v).encode("ascii") for v in values.tolist()]
    return _cells_bytes(values)


def float_cells_bytes(values: Any) -> list[bytes]:
    """:func:`float_cells` as ASCII bytes: exactly ``[repr(v).encode() for v in values.ravel().tolist()]`` (``values``
    2-D, ``(n, k)``, every element finite), the ``n × k`` texts from one orjson call. Raises ``ValueError`` for an
    array that is not 2-D."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"float_cells_bytes: a 2-D array, not shape {values.shape}")
    if values.size < FEW or not fast():
        return [repr(v).encode("ascii") for v in values.ravel().tolist()]
    return _cells_bytes(values.ravel())


def int_texts_bytes(values: Any) -> list[bytes]:
    """:func:`int_texts` as ASCII bytes: exactly ``[str(v).encode() for v in values.tolist()]`` (``values`` 1-D
    integers, ``(n,)``). Raises ``ValueError`` for an array that is not 1-D."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.ndim != 1:
        raise ValueError(f"int_texts_bytes: a 1-D array, not shape {values.shape}")
    if len(values) < FEW or not fast():
        return [str(v).encode("ascii") for v in values.tolist()]
    return _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",")  # type: ignore[no-any-return]
