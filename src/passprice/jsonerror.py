"""The one JSON document a command given ``--json`` prints when it fails as bad input or usage (issue 13, session 30).

Every command with ``--json`` promises one JSON document on standard output, whatever happens: a result, a named
refusal (``{"refusal": NAME, ...}``, exit 1), a listing that leaves files out (its own shape, the files' lines in
``"problems"``), and, for every other failure with exit status 2, :func:`error_document`:
``{"error": {"status": 2, "problems": [LINE, ...]}}``, each line as ``passprice: error:`` prints it on standard error,
without that prefix and unescaped (JSON escapes it). Before session 30 such a failure printed nothing on standard
output (29 of 30 commands; ``compare`` since session 29 printed its listing's shape), so a program reading the
output had to tell "no output" apart from "empty output".

The command line decides from its arguments alone whether ``--json`` was asked (:func:`json_asked`), since a usage
error (an unknown option, a missing argument) stops click before any option of the command is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The options of ``passprice`` itself (before the command) that take a value.
TOP_LEVEL_VALUED = frozenset({"--root"})


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
    (``new-serving --name --json``). Raises nothing: a command line that names no command asks for no JSON."""
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
    while i < len(words):
        word = words[i]
        if word == "--":
            return False
        if word == "--json":
            return True
        i += 2 if options.get(word, False) else 1
    return False
