"""A TOML text for a plain document (what ``tomllib`` reads: tables, arrays, strings, integers, floats, booleans),
written without ``tomlkit``: for a file nobody reads but passprice, where no comment or layout is to be kept.

``tomlkit`` keeps a file's comments and layout for an edit, at the price of a parser in Python that reads about a
megabyte a second: the 93 KB stack file a one-fact ``diff`` re-fits in its private copy of HEAD
(:func:`passprice.review.impacts.recomputed_prices`) took 0.11 s to parse (round 31, docs/PERFORMANCE.md), for a copy
that is priced and removed, never shown. :func:`dumps` gives text that ``tomllib`` reads back as exactly the document,
keys in the same order at every level (a table whose key comes before a plain value is written inline, so the order
holds), or ``None`` when it cannot (a date or time, a value of another type, a float that is not the same double read
back): the caller then writes with ``tomlkit`` as before. The format: TOML 1.0 (https://toml.io/en/v1.0.0)."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any


class _Unwritable(Exception):
    """A value :func:`dumps` does not write (the caller falls back to ``tomlkit``)."""


def _string(text: str) -> str:
    """A TOML basic string: ``\\``, ``"`` and every control character (below U+0020, and U+007F, which a basic
    string may not hold as it is) escaped, the rest as it is."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise _Unwritable("a lone surrogate")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _key(name: Any) -> str:
    if not isinstance(name, str):
        raise _Unwritable(f"a key of type {type(name).__name__}")
    return _string(name)


def _value(value: Any) -> str:
    """``value`` as an inline TOML value. Raises :class:`_Unwritable` for a type TOML has no plain form for here."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if getattr(value, "typed", None) is not None:
            # schema.Overflowed / Underflowed: ``1e400`` or ``1e-400`` as the file wrote it, which the schemas refuse
            # in the file's words; written "inf" or "0.0" it read back as a plain infinity or zero (attack round 56)
            raise _Unwritable("a number that keeps the text its file wrote")
        number = float(value)
        if math.isnan(number):  # float.__repr__ writes "nan" for either sign
            return "-nan" if math.copysign(1.0, number) < 0 else "nan"
        return float.__repr__(number)  # "inf", "1e-05": each a TOML float, the same double read back
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise _Unwritable(f"a value of type {type(value).__name__}")


def _table(lines: list[str], path: tuple[str, ...], table: Mapping[str, Any]) -> None:
    """Append ``table``'s lines: its header (under ``path``; none at the top), then each key in order, a table
    whose keys all come after the table's last plain value as a section of its own, any other inline."""
    items = list(table.items())
    tail = len(items)
    while tail > 0 and isinstance(items[tail - 1][1], Mapping):
        tail -= 1
    if path:
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for name, value in items[:tail]:
        lines.append(f"{_key(name)} = {_value(value)}")
    for name, value in items[tail:]:
        lines.append("")
        _table(lines, (*path, name), value)


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same document: equal values of the same types, tables' keys in the same
    order, floats the same bits (a NaN equal to itself, of the same sign and payload)."""
    if isinstance(a, Mapping):
        return (isinstance(b, Mapping) and list(a) == list(b)
                and all(same(v, b[k]) for k, v in a.items()))
    if isinstance(a, list | tuple):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):  # the bits: float.hex writes "nan" for a NaN of either sign and any payload
        return isinstance(b, float) and struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return type(b) is (int if isinstance(a, int) else str) and a == b


def dumps(document: Mapping[str, Any]) -> str | None:
    """TOML text that ``tomllib`` reads as exactly ``document`` (tables: mappings with string keys; arrays: lists or
    tuples; strings, integers, floats, booleans), keys in their order at every level, ending in one newline; or
    ``None`` when ``document`` holds anything else (a date or time, a value of another type, an integer of more
    digits than Python writes, a float keeping its file's text: ``schema.Overflowed``/``Underflowed``) or the text
    read back is not the same document (checked every time: a document :func:`dumps` cannot write exactly is never
    written approximately). Raises nothing."""
    import tomllib

    lines: list[str] = []
    try:
        _table(lines, (), document)
    except (_Unwritable, RecursionError, ValueError):  # ValueError: an integer past Python's 4,300 digits (round 56)
        return None
    text = "\n".join(lines).lstrip("\n") + "\n"
    try:
        back = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
    return text if same(document, back) else None
