"""A checkpoint entry's tensor table is read as ``tomllib`` reads it, without its pure-Python parser, when every line
of it has the one shape ``passprice import`` writes; any other text is ``tomllib``'s alone.

The 18 shipped entries hold 0.9 MB of TOML, nearly all of it one inline table a tensor
(``{ name = "blk.0.attn_q.weight", type = "Q4_K", dims = [3584, 3584], offset = 0, shard = 0 },``): ``tomllib``
parsed them in 0.25 to 0.38 s of CPU, a fifth of a cold ``check`` or ``diff`` (issue 13: no command past 2 s).
:func:`loads` reads the lines of such a table with one regular expression each and hands ``tomllib`` the rest of the
file with the table's lines replaced by one placeholder string; the document is then the very one ``tomllib`` gives
(the same keys in the same order, the same values and types). A table with any other line (an escape, a tab, a
comment, another key, an integer written otherwise, CRLF line ends), a file in which the placeholder could be read
as anything else, and every file that does not parse, goes to ``tomllib`` whole, so every error is its own.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

#: The line that opens the tensor table, as ``import`` writes it (under ``[header]``).
_OPEN = "\ntensors = [\n"
#: A TOML decimal integer as ``import`` writes one (no sign, underscore or leading zero; a uint64's 20 digits at most).
_INT = "(?:0|[1-9][0-9]{0,19})"
#: A basic string's characters with no escape, tab or other control character in it.
_TEXT = '[^"\\\\\\x00-\\x1f\\x7f]*'
#: One tensor line, as ``import`` writes it.
_LINE = re.compile(
    rf'  \{{ name = "({_TEXT})", type = "({_TEXT})", dims = \[((?:{_INT}(?:, {_INT})*)?)\], offset = ({_INT}), '
    rf"shard = ({_INT}) \}},"
)
#: What stands for the table's lines in the text ``tomllib`` reads.
_PLACEHOLDER = "passprice: the tensor lines, read apart"

#: How many tables :func:`loads` read apart in this process (what its tests count).
READ_APART = 0


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``: the same document, its ``header.tensors`` table read apart when every line of it has
    the shape ``import`` writes. Raises what ``tomllib.loads(text)`` raises."""
    global READ_APART
    start = text.find(_OPEN)
    if start < 0 or _PLACEHOLDER in text:
        return tomllib.loads(text)
    body = start + len(_OPEN)
    closing = text.find("\n]", body - 1)
    if closing < body or text.find(_OPEN, body) >= 0:
        return tomllib.loads(text)
    tensors = []
    match = _LINE.fullmatch
    for line in text[body:closing].split("\n"):
        found = match(line)
        if found is None:
            return tomllib.loads(text)
        name, kind, dims, offset, shard = found.groups()
        tensors.append({
            "name": name,
            "type": kind,
            "dims": [int(d) for d in dims.split(", ")] if dims else [],
            "offset": int(offset),
            "shard": int(shard),
        })
    try:
        document = tomllib.loads(f'{text[:body]}  "{_PLACEHOLDER}",{text[closing:]}')
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return tomllib.loads(text)  # its own error, at its own line
    header = document.get("header")
    if not isinstance(header, dict) or header.get("tensors") != [_PLACEHOLDER]:
        return tomllib.loads(text)
    header["tensors"] = tensors
    READ_APART += 1
    return document
