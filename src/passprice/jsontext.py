"""A program's indented JSON is exactly the text ``json.dumps(data, indent=2)`` writes, with its long lists of flat
records (a simulated request's figures) written column by column: an indented dump otherwise goes through ``json``'s
pure-Python encoder. ``simulate --json`` of a 900 KB trace (15,000 requests, 19 MB printed) spent 1.34 s of CPU in it
and 0.39 s more encoding it again to check it finite. Records that share one key order (every record ``simulate``
writes) are written as one list of pieces — each key's text once, each column's values by the standard library's own
functions for their type (``float.__repr__``, ``int.__repr__``, the ASCII string encoder), the pieces joined once —
other lists of flat records by the C encoder; finiteness is checked as it encodes (``allow_nan=False``). Anything but
such a list is handed to ``json.dumps`` itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
_TEXT = frozenset((str,))
_DICT = frozenset((dict,))
_FLOAT_OR_NONE = frozenset((float, type(None)))
_ENCODE = json.encoder.encode_basestring_ascii  # what json.dumps writes a string with (ensure_ascii)
_BOOLS = ("false", "true")


def _scalar(value: Any, allow_nan: bool) -> str:
    """One scalar as ``json.dumps`` writes it (``ensure_ascii``): the same functions it calls."""
    if isinstance(value, str):
        return _ENCODE(value)
    return json.dumps(value, allow_nan=allow_nan)


def _all_flat(records: list[Any]) -> bool:
    """Whether every item of ``records`` is a non-empty dict of ``str`` keys and scalar values of exactly the JSON
    types (a subclass, an ``IntEnum``, is left to ``json``, which writes it its own way)."""
    # Asked of all the records' types at once, in C (set.issuperset over map and chain): 15,000 requests' records are
    # 30,000 dicts and 570,000 keys and values to look at, which a function call a record cost 0.3 s.
    return (
        _DICT.issuperset(map(type, records))
        and all(records)
        and _TEXT.issuperset(map(type, chain.from_iterable(records)))
        and _SCALAR_TYPES.issuperset(map(type, chain.from_iterable(map(dict.values, records))))
    )


def _value_text(value: Any) -> str:
    """A finite scalar of exactly a JSON type as the C encoder writes it (a column of several types)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is str:
        return _ENCODE(value)
    if type(value) is float:
        return float.__repr__(value)
    return int.__repr__(value)


def _float_texts(values: list[float], texts: dict[float, str]) -> list[str]:
    """``float.__repr__`` of each of ``values`` (finite floats), each distinct value's written once: ``texts`` holds
    those written before (a record list's columns share it: a request's admission, first token and finish are
    often another's, or its queue time and latencies themselves when it arrived at 0). A zero is written for
    itself (0.0 and -0.0 are one key of a dict, and two texts)."""
    distinct = set(values)
    zero = 0.0 in distinct
    distinct.discard(0.0)
    distinct.difference_update(texts)
    texts.update(zip(distinct, map(float.__repr__, distinct), strict=True))
    if zero:
        return [texts[v] if v else float.__repr__(v) for v in values]
    return list(map(texts.__getitem__, values))


def _column(values: list[Any], texts: dict[float, str]) -> list[str] | None:
    """The texts of one key's values, as the C encoder writes each (``float.__repr__``, ``int.__repr__``,
    ``true``/``false``, ``null``, the ASCII string encoder), each type's values by that function mapped over them
    (floats by :func:`_float_texts`, ``texts`` their cache); ``None`` for a value of another type than a JSON
    scalar's exactly, or a float that is not finite (the encoder decides what that is: ``NaN``, or a
    ``ValueError``)."""
    kinds = set(map(type, values))
    if not _SCALAR_TYPES.issuperset(kinds):
        return None
    if kinds == {float}:
        return _float_texts(values, texts) if all(map(math.isfinite, values)) else None
    if kinds == _FLOAT_OR_NONE:  # a figure some records lack (a TPOT of one output token)
        floats = [v for v in values if v is not None]
        if not all(map(math.isfinite, floats)):
            return None
        written = iter(_float_texts(floats, texts))
        return ["null" if v is None else next(written) for v in values]
    if float in kinds and not all(math.isfinite(v) for v in values if type(v) is float):
        return None
    if len(kinds) > 1:
        return list(map(_value_text, values))
    kind = kinds.pop()
    if kind is int:
        return list(map(int.__repr__, values))
    if kind is str:
        return list(map(_ENCODE, values))
    if kind is bool:
        return list(map(_BOOLS.__getitem__, values))
    return ["null"] * len(values)


class Table:
    """Flat records given column by column: ``keys`` (text) and ``columns``, one list of values a key in record
    order. :func:`dumps` writes it as ``json.dumps`` writes the list of dicts :meth:`records` makes (the same text),
    from its columns, without making the dicts (``simulate --json`` writes 30,000 requests' records); ``json``
    itself cannot write it. Not changed after it is made."""

    __slots__ = ("columns", "keys")

    def __init__(self, keys: tuple[str, ...], columns: tuple[list[Any], ...]) -> None:
        if len(keys) != len(columns) or len({len(c) for c in columns}) > 1:
            raise ValueError("a table has one column a key, all of one length")
        self.keys = keys
        self.columns = columns

    def records(self) -> list[dict[str, Any]]:
        """The records as dicts, in order."""
        if not self.keys:
            return []
        return [dict(zip(self.keys, row, strict=True)) for row in zip(*self.columns, strict=True)]


def _table(keys: tuple[str, ...], columns: Sequence[list[Any]], pad: str) -> str | None:
    """The list of records ``columns`` make (one list of values a key of ``keys``, at least one record) indented at
    ``pad``, when the keys are text and the values JSON scalars of exactly their types, every float finite: the
    indented encoder's text, written as pieces — before each record its opening (the previous one's closing),
    before each value its key — joined once. ``None`` otherwise."""
    if not keys or not _TEXT.issuperset(map(type, keys)):
        return None
    n = len(columns[0])
    texts: dict[float, str] = {}
    written: list[list[str]] = []
    for values in columns:
        column = _column(values, texts)
        if column is None:
            return None
        written.append(column)
    inner = pad + "  "
    deeper = inner + "  "
    names = [_ENCODE(k) + ": " for k in keys]
    width = 2 * len(keys)
    pieces: list[str] = [""] * (width * n + 1)
    pieces[0::width] = ["\n" + inner + "},\n" + inner + "{\n" + deeper + names[0]] * n + [
        "\n" + inner + "}\n" + pad + "]"]
    pieces[0] = "[\n" + inner + "{\n" + deeper + names[0]
    for f, column in enumerate(written):
        if f:
            pieces[2 * f::width] = [",\n" + deeper + names[f]] * n
        pieces[2 * f + 1::width] = column
    return "".join(pieces)


def _columns(records: list[dict[str, Any]], pad: str) -> str | None:
    """The list ``records`` of dicts indented at ``pad`` by :func:`_table`, when every record has the first one's
    keys in its order; ``None`` otherwise."""
    keys = tuple(records[0])
    if not all(map(keys.__eq__, map(tuple, records))):
        return None
    return _table(keys, [list(map(itemgetter(k), records)) for k in keys], pad)


def _records(records: list[dict[str, Any]], pad: str, allow_nan: bool) -> str:
    """The list ``records`` of flat records (:func:`_all_flat`) indented at ``pad``: the list by the standard
    library's compact (C) encoder with ``",\\n" + indent`` between its items, then each record's braces put on lines
    of their own, which is the text the indented encoder writes for records holding no list or dict."""
    inner = pad + "  "
    deeper = inner + "  "
    # The whole list in one call of the C encoder, every item separated by ",\n" + deeper; the text between two
    # records, "}" ",\n" + deeper "{", is then put on the indented encoder's lines. It can stand nowhere else: a
    # record holds no list or dict, and an encoded string holds no raw newline (json writes it "\n").
    text = json.JSONEncoder(separators=(",\n" + deeper, ": "), allow_nan=allow_nan).encode(records)
    between = "\n" + inner + "},\n" + inner + "{\n" + deeper
    return ("[\n" + inner + "{\n" + deeper + text[2:-2].replace("},\n" + deeper + "{", between) + "\n" + inner
            + "}\n" + pad + "]")


def _encode(data: Any, pad: str, allow_nan: bool, out: list[str]) -> None:
    """Append the pieces of ``data``'s text, indented at ``pad``, to ``out`` (joined once by :func:`dumps`: a record
    list's megabytes are not copied again at each level of the document)."""
    if type(data) is Table:
        text = _table(data.keys, data.columns, pad) if data.keys and data.columns[0] else None
        if text is not None:
            out.append(text)
        else:  # no records, records without keys, or a figure that is not finite: as json writes the dicts
            _encode(data.records(), pad, allow_nan, out)
    elif type(data) is list and len(data) > 1 and _DICT.issuperset(map(type, data)) and (
            (text := _columns(data, pad)) is not None or _all_flat(data)):
        out.append(text if text is not None else _records(data, pad, allow_nan))
    elif type(data) is dict and data and all(type(k) is str for k in data):
        inner = pad + "  "
        first = True
        for k, v in data.items():
            out.append(("{\n" if first else ",\n") + inner + _ENCODE(k) + ": ")
            first = False
            _encode(v, inner, allow_nan, out)
        out.append("\n" + pad + "}")
    elif type(data) is list and data:
        inner = pad + "  "
        for n, item in enumerate(data):
            out.append(("[\n" if n == 0 else ",\n") + inner)
            _encode(item, inner, allow_nan, out)
        out.append("\n" + pad + "]")
    elif type(data) in _SCALARS:
        out.append(_scalar(data, allow_nan))
    else:
        # anything else (an empty list or dict, a tuple, keys that are not text): json's own text, indented at pad
        text = json.dumps(data, indent=2, allow_nan=allow_nan)
        out.append(text.replace("\n", "\n" + pad) if pad else text)


def dumps(data: Any, allow_nan: bool = True) -> str:
    """``json.dumps(data, indent=2, allow_nan=allow_nan)``, the same text (a property test holds the two equal on
    generated documents); raises what it raises (``ValueError`` for a number that is not finite unless
    ``allow_nan``, ``TypeError`` for a value JSON has no form of, ``RecursionError`` past its nesting)."""
    out: list[str] = []
    _encode(data, "", allow_nan, out)
    return "".join(out)
