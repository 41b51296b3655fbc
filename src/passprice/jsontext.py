"""A program's indented JSON is exactly the text ``json.dumps(data, indent=2)`` writes, with its long lists of flat
records (a simulated request's figures) encoded by the standard library's C encoder: an indented dump otherwise goes
through ``json``'s pure-Python encoder. ``simulate --json`` of a 900 KB trace (15,000 requests, 19 MB printed) spent
1.34 s of CPU in it and 0.39 s more encoding it again to check it finite; ``dumps`` takes 0.79 s and checks
finiteness as it encodes (``allow_nan=False``). Anything but such a list is handed to ``json.dumps`` itself.
"""

from __future__ import annotations

import json
from itertools import chain
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
_TEXT = frozenset((str,))
_DICT = frozenset((dict,))


def _scalar(value: Any, allow_nan: bool) -> str:
    """One scalar as ``json.dumps`` writes it (``ensure_ascii``): the same functions it calls."""
    if isinstance(value, str):
        return json.encoder.encode_basestring_ascii(value)
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


def _records(records: list[dict[str, Any]], pad: str, allow_nan: bool) -> str:
    """The list ``records`` of flat records (:func:`_all_flat`) indented at ``pad``: the list by the standard library's
    compact (C) encoder with ``",\\n" + indent`` between its items, then each record's braces put on lines of their
    own, which is the text the indented encoder writes for records holding no list or dict."""
    inner = pad + "  "
    deeper = inner + "  "
    # The whole list in one call of the C encoder, every item separated by ",\n" + deeper; the text between two
    # records, "}" ",\n" + deeper "{", is then put on the indented encoder's lines. It can stand nowhere else: a
    # record holds no list or dict, and an encoded string holds no raw newline (json writes it "\n").
    text = json.JSONEncoder(separators=(",\n" + deeper, ": "), allow_nan=allow_nan).encode(records)
    between = "\n" + inner + "},\n" + inner + "{\n" + deeper
    return ("[\n" + inner + "{\n" + deeper + text[2:-2].replace("},\n" + deeper + "{", between) + "\n" + inner
            + "}\n" + pad + "]")


def _encode(data: Any, pad: str, allow_nan: bool) -> str:
    if type(data) is list and len(data) > 1 and _all_flat(data):
        return _records(data, pad, allow_nan)
    if type(data) is dict and data and all(type(k) is str for k in data):
        inner = pad + "  "
        parts = [f"{inner}{json.encoder.encode_basestring_ascii(k)}: {_encode(v, inner, allow_nan)}"
                 for k, v in data.items()]  # fmt: skip
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    if type(data) is list and data:
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + _encode(item, inner, allow_nan) for item in data) + "\n" + pad + "]"
    if type(data) in _SCALARS:
        return _scalar(data, allow_nan)
    # anything else (an empty list or dict, a tuple, keys that are not text): json's own text, indented at pad
    text = json.dumps(data, indent=2, allow_nan=allow_nan)
    return text.replace("\n", "\n" + pad) if pad else text


def dumps(data: Any, allow_nan: bool = True) -> str:
    """``json.dumps(data, indent=2, allow_nan=allow_nan)``, the same text (a property test holds the two equal on
    generated documents); raises what it raises (``ValueError`` for a number that is not finite unless
    ``allow_nan``, ``TypeError`` for a value JSON has no form of, ``RecursionError`` past its nesting)."""
    return _encode(data, "", allow_nan)
