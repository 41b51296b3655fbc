"""The one JSON document a command given ``--json`` prints when it fails as bad input or usage (issue 13, session 30).

Every command with ``--json`` promises one JSON document on standard output, whatever happens: a result, a named
refusal (``{"refusal": NAME, ...}``, exit 1), a listing that leaves files out (its own shape, the files' lines in
``"problems"``), and, for every other failure with exit status 2, :func:`error_document`:
``{"error": {"status": 2, "problems": [LINE, ...]}}``, each line as ``passprice: error:`` prints it on standard error,
without that prefix and unescaped (JSON escapes it). Before session 30 such a failure printed nothing on standard
output (29 of 30 commands; ``compare`` since session 29 printed its listing's shape), so a program reading the
output had to tell "no output" apart from "empty output".

The command line decides from its arguments alone whether ``--json`` was asked (:func:`json_asked`), since a usage
error (an unknown option, a missing argument) stops click before any option of the command is read. ``--format json``
(``audit``, ``diff``, ``sweep``) asks exactly as ``--json`` does (session 31: it printed no error document).

A command whose JSON is an array streamed as it is made (``sweep --json`` to standard output, a row a line) may fail
after some rows were written: :class:`StreamedArray` follows what was written, and its :meth:`StreamedArray.closing`
is the text that ends the array with the failure's document (the error document, or a refusal's ``{"refusal": …}``)
as its last element, so standard output is still one document (session 31: it held a partial array).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The options of ``passprice`` itself (before the command) that take a value.
TOP_LEVEL_VALUED = frozenset({"--root"})

#: The option whose value ``json`` asks for JSON as ``--json`` does (``audit``, ``diff``, ``sweep``: ``--format``).
FORMAT_OPTION = "--format"


def error_document(problems: Sequence[str], status: int = 2) -> dict[str, Any]:
    """The JSON document of a failed command: ``{"error": {"status": STATUS, "problems": [LINE, ...]}}``.

    ``problems``: each line the command prints on standard error, without ``passprice: error:`` (text, unescaped;
    each once, in order). ``status``: the process's exit status (2: bad input or usage). Raises nothing."""
    return {"error": {"status": status, "problems": list(dict.fromkeys(problems))}}


def json_asked(args: Sequence[str], options_of: Callable[[tuple[str, ...]], Mapping[str, bool] | None]) -> bool:
    """Whether the command line ``args`` (``sys.argv[1:]``: passprice's own options, the command's name or names,
    then the command's arguments) gives the command ``--json``.

    ``options_of(path)``: for a command path (``("price",)``, ``("fact", "show")``), each option string it takes
    mapped to whether that option takes a value (``{"--json": False, "--batch": True, ...}``); an empty mapping for
    a group (``("fact",)``), ``None`` when the path names no command. ``--json`` counts after the command's name and
    before a ``--`` (after which every word is an argument), and not as the value of an option that takes one
    (``new-serving --name --json``); so does ``--format json`` (or ``--format=json``) of a command taking
    ``--format`` (session 31), the last ``--format`` given deciding, as click reads a repeated option. Raises
    nothing: a command line that names no command asks for no JSON."""
    words = list(args)
    i = 0
    while i < len(words) and words[i].startswith("-"):  # passprice's own options
        i += 2 if words[i] in TOP_LEVEL_VALUED else 1
    path: tuple[str, ...] = ()
    options: Mapping[str, bool] | None = None
    while i < len(words):
        found = options_of((*path, words[i]))
        if found is None:
            break
        path, options, i = (*path, words[i]), found, i + 1
        if found:  # a command (a group has no options here): its arguments follow
            break
    if not options:
        return False
    fmt: str | None = None
    while i < len(words):
        word = words[i]
        if word == "--":
            break
        if word == "--json":
            return True
        if FORMAT_OPTION in options and word.startswith(f"{FORMAT_OPTION}="):
            fmt = word.partition("=")[2]
        elif FORMAT_OPTION in options and word == FORMAT_OPTION and i + 1 < len(words):
            fmt = words[i + 1]
        i += 2 if options.get(word, False) else 1
    return fmt == "json"


class StreamedArray:
    """A JSON array a command streams onto standard output a chunk at a time (``sweep --json``: ``[``, then a row a
    line, ``{…}`` each, then ``]``), followed so that a failure met after some of it was written can still end it as
    one document (session 31; before, standard output held the rows written and no ``]``).

    :meth:`wrote` is told each chunk written, in order (text or ASCII bytes; the last bytes of a part copied in the
    kernel are enough, :meth:`wrote` reads only whether a row began and how the text ends). Raises nothing."""

    def __init__(self) -> None:
        #: Whether ``[`` has been written (the array is open, unless :attr:`closed`).
        self.opened = False
        #: Whether a row (an object: ``{``) has been written after ``[``.
        self.rows = False
        #: Whether the closing ``]`` has been written: nothing may follow it.
        self.closed = False

    def wrote(self, chunk: str | bytes, *, whole: bool = True) -> None:
        """Note ``chunk``, the next text written. ``whole=False``: ``chunk`` is only the tail of a longer text (a part
        copied in the kernel), which is known to hold rows when it is not empty."""
        # Only the ends of a chunk are read (a chunk may be a megabyte of rows): where it starts and how it ends,
        # and whether a row began, until one has.
        data = chunk.encode("utf-8", "replace") if isinstance(chunk, str) else chunk
        head, tail = data[:64].lstrip(), data[-64:].rstrip()
        if not tail:
            return
        if not self.opened and head.startswith(b"["):
            self.opened = True
        self.rows = self.rows or not whole or b"{" in data
        self.closed = self.opened and tail.endswith(b"]")

    def closing(self, document: Mapping[str, Any]) -> str | None:
        """The text that ends the array with ``document`` (the error document, a refusal's payload) as its last
        element, on a line of its own as a row is (``,`` after the rows before it); ``document`` alone (indented, as
        every command prints it) when nothing was written yet (a failure at the first row); ``None`` when the array
        was closed already (nothing may follow it: the failure came after the last row, its exit status and stderr
        line say it). Raises nothing (``document`` is plain JSON data)."""
        if self.closed:
            return None
        from passprice.tables import finite_or_null

        document = finite_or_null(document)  # JSON, always (left59): a figure past a float is null
        if not self.opened:
            return json.dumps(document, indent=2, allow_nan=False) + "\n"
        return f"{',' if self.rows else ''}\n{json.dumps(document, allow_nan=False)}\n]\n"
