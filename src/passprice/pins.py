"""What a price is a function of is pinned by digests computed from the thing itself, never by a number someone
types: the pricing model by a digest of the code that prices, a checkpoint by a digest of what the pricer reads from
its entry.

- :func:`pricing_model_digest`: the modules a recorded price flows through (the import closure, inside the
  package, of :data:`PRICING_ROOTS`: ``locks``, whose ``priced`` makes every price a lock records — through
  ``serving``, ``servings``, ``report.cost_json``, ``stacks`` … — and ``reproduce``, whose ``side_json`` prices a
  review's side; less the modules that only find, validate, write or show files), each parsed and
  reduced to its syntax tree without docstrings (comments never reach the tree), dumped in a form that does not
  depend on the Python version, and hashed together with the module names. A docstring or comment edit is not a
  model change; any change to a formula, a constant or a rule is. Computed from source files (the running package's,
  or another checkout's ``src/passprice``), in under a second, only when a lock is written, reproduced,
  checked or diffed, and kept in passprice's cache under the sha256 of every module file's bytes, each module's
  tree kept too under the sha256 of its own (:func:`_kept_tree`: a tree with one module edited parses that one); a
  build records it beside the modules (:func:`record`), which answers only for the very bytes it records.
- :func:`checkpoint_digest`: the canonical JSON of the metadata (every key with its type and value, a long array as
  its element type and length) and the tensor table (name, GGML type id, dims, in table order): what
  :mod:`passprice.decode` and :mod:`passprice.serving` read. The header's sha256, byte counts, offsets, shard files
  and the entry's name are claims about a file, not what a price is computed from, and are left out, so an entry
  renamed or re-imported from another copy of the same header keeps its digest, and an entry whose tensor table was
  edited does not.

DESIGN.md, "What a lock pins", says why the code digest was chosen over a golden-corpus fingerprint.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import keyword
import os
import re
from json.encoder import encode_basestring as _json_string  # what json.dumps(ensure_ascii=False) writes a str as
from pathlib import Path
from typing import Any

from passprice.digests import sha256
from passprice.errors import InputError
from passprice.files import is_there, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from passprice.gguf_records import GGUFHeader, MetaValue

#: The lock file format this code writes. 1: the first locks (``tool_version`` and a hand-typed ``pricing_model``,
#: the checkpoint pinned by name and header sha256, a fixed list of facts a price rests on). 2: the pricing model and
#: the checkpoint's content pinned by digest, the registered serving named, ``rests_on`` what the price reads.
LOCK_FORMAT = 2

#: The modules a recorded price starts from, found from the functions that make one, not from the pricer: ``locks``
#: (``priced``: the ``--json`` object a lock records, for ``lock``, ``reproduce``, ``check``, today's price and a
#: review side; it reaches the pricer ``serving``, the resolver ``servings``, ``report.cost_json`` and
#: ``report.expected_json``, ``stacks`` …) and ``reproduce`` (``side_json``: how a review prices a lock on one side,
#: and ``find_checkpoint``: which entry a lock is re-priced from). Every package module they import, at top level or
#: inside a function, is part of the pricing model, except :data:`NOT_PRICING`: so a change to any code a recorded
#: figure passes through (``cost_json`` scaling tokens/s, say) changes the digest, and a review prices each side
#: with its own code.
PRICING_ROOTS = ("locks", "reproduce")

#: Package modules that cannot change a figure: errors, where files are, schema validation, atomic writes, tables,
#: the glossary's words, the version string.
NOT_PRICING = frozenset({"__init__", "errors", "registry", "schema", "files", "tables", "glossary"})

#: The folder of the running package's source modules.
PACKAGE = Path(__file__).resolve().parent

#: The most bytes a module file of a package whose digest is taken may hold (the largest of passprice's is about
#: 100 KB): a larger one is refused unread, as a FIFO or a device named ``*.py`` is
#: (:func:`passprice.files.read_regular`).
MODULE_BYTES = 4 * 1024 * 1024

#: The most tokens (:func:`_count_tokens`: a run of word characters, one other non-blank character, or a line break
#: since session 43, counted at C speed before anything is parsed; since session 44 only what the parser pays for: a
#: comment none, a string literal other than an f-string one) the pricing model's modules of *another* checkout may
#: hold together: about 1.3 times this package's own (:func:`own_tokens`; 156,403 in 29 modules when the cap was set at
#: 250,000 in session 11, 248,612 in 35 modules in session 25, when it was raised to 400,000 to keep that ratio: a
#: review of the project's own next commit would otherwise have been refused as not judged; 378,074 in session 29, past
#: 80 % of 400,000, when it was raised to 560,000, 1.48 times: the 2 s bound, not the ratio, sets it now). Parsing is
#: the cost, not bytes: a 960 KB module ``x = [a,a,…]`` (480,000 names, 960,004 tokens) took ``ast.parse`` 3.3 s and 668
#: MB, and ``check`` 4.1–5.1 s and 833 MB; at 400,000 the same form (199,990 names, 399,984 tokens) parsed and was
#: digested in 0.79 s of CPU and 297 MB (session 25, load 1); at 560,000 (279,990 names) in 1.32 s and 407 MB, at
#: 640,000 in 1.56 s and 462 MB (session 29, load 4: too near 2 s with a command's start). In session 37 the package's
#: own code reached 453,282 tokens, past 80 % of 560,000: raised to 600,000 (1.32 times), short of 640,000's 1.56 s. In
#: session 42 it reached 481,266, past 80 % of 600,000: raised to 700,000 (1.45 times its own), the dense form's count,
#: parse and tree text taking 1.16 s and 424 MB at 600,004 tokens, 1.25 s and 492 MB at 700,004 (in process, load 2.5; a
#: whole `--no-cache check` of such a checkout: 2.24 s at 599,998 tokens, 2.45 s at 699,998, 1.32 s with none of it:
#: past 2 s either way). In session 43 (digest77) the tree text of that form was cut from 218 to 82 ms (3,115 -> 1,229 M
#: instructions) and the whole command from 2.50 to 2.38 s (load 5-7): still past 2 s, the parse alone 0.8 s of it. A
#: line break was no token, though each line is a statement to the parser: 499,999 lines of ``a`` (999,998 bytes,
#: 499,999 tokens) were parsed: line breaks are counted now (docs/PERFORMANCE.md, round digest77; the package's own code
#: 487,587 -> 522,605 tokens, 74.7 % of the cap).
#: The running package's own digest is never capped.
#: In session 44 (digest89) the count became what the parser pays for (:func:`_count_tokens`): comments and the
#: bodies of string literals (docstrings, messages), which cost the parser next to nothing, were half the package's
#: own count (535,857 -> 288,280 tokens, a ``{`` 3: :data:`FIELD_TOKENS`), so a cap 1.3 times the package's own let
#: code of none of them 2 to 3 times the package's parse (its 54 modules parsed and written as text in 0.29 s, 0.54
#: µs a token as counted before, about 1 µs as counted now; the dense form 1.14 µs, one name a line 1.63 µs, load
#: 6). 400,000 is 1.39 times the package's own (72.1 %; docs/PERFORMANCE.md, round digest89: a whole ``--no-cache
#: check`` of a checkout at it). Raised to 420,000 when the package's own passed 80 % of 400,000 (328,121 tokens,
#: 82.0 %: 1.28 times it now; the cost of a checkout at the cap grows with it, about 0.7 µs a token more: a
#: ``--no-cache check`` at 400,000 was 1.87-2.03 s installed at load 11-14, tests/test_bound111.py's measure). Raised
#: to 440,000 when it passed 80 % of 420,000 (337,857 tokens, 80.4 %: 1.30 times it now; a checkout at the cap costs
#: about 5 % more to parse than at 420,000, past the issue's 2 s bound at load 11-13 as it was). Raised to 460,000
#: when it passed 80 % of 440,000 (353,936 tokens, 80.4 %: 1.30 times it now, 76.9 %; a ``--no-cache check`` of a
#: checkout at the cap, installed, medians of 5 in two runs at load 7-9: the dense form 1.67-1.73 s at 440,000 ->
#: 1.72-1.75 s at 460,000, one name a line 1.75-1.84 -> 1.88-1.91 s, peak 410 -> 427 MiB, a tiny module 1.02-1.08 s,
#: ``python -c pass`` 11-13 ms: under the 2 s bound, 0.09-0.12 s from it; docs/PERFORMANCE.md, round cap170). Raised
#: to 480,000 when it passed 80 % of 460,000 (369,189 tokens, 80.3 %: 1.30 times it now, 76.9 %; a checkout at the
#: cap not re-measured at 480,000: about 4 % more to parse than at 460,000 by the rounds above).
MODEL_TOKENS = 480_000


@functools.cache
def _token() -> re.Pattern[bytes]:
    """A token (:data:`MODEL_TOKENS`), compiled when another checkout's modules are counted, not on every import: a
    run of word characters, one other non-blank character, or a line break (``\\r\\n``, ``\\r`` or ``\\n``: each line a
    statement to the parser, the costliest unit it parses; 499,999 lines of ``a``, 999,998 bytes, were 499,999 tokens
    without ``\\n``, under the cap, and a ``check`` of them took 3.6 s and 903 MiB, session 43, digest77; a lone
    ``\\r`` ends a line to the parser as ``\\n`` does, and 499,999 lines of ``a`` ended by ``\\r`` were counted 499,999
    tokens and parsed, 3.5-3.7 s and 903-925 MiB, session 44, digest89). Counted on :func:`_parsed_text`, where a
    comment is no token and a literal not an f-string one."""
    return re.compile(rb"\w+|[^\w\s]|\r\n?|\n")


#: The most work :func:`_fstring_work` may count in another checkout's pricing-model modules together before they are
#: parsed: each f-string literal's ``{`` characters times its bytes, summed. Python 3.11's parser finds each
#: replacement field's line by scanning its f-string from the start (``fstring_find_expr_location``): a field costs
#: the bytes before it, so one f-string of N fields costs N² — ``x = f'{a}{a}…'`` of 200,000 fields (600,008 bytes,
#: 600,006 tokens, under :data:`MODEL_TOKENS`) held ``check`` of its checkout past 30 s (40,000 fields: 1.05 s of
#: ``ast.parse`` for 4.8e9 of this work; attack87). 10^8 is about 0.02 s of that scan; the package's own modules
#: count 229,176 together. Counted for a module about to be parsed (its tree not kept).
FSTRING_WORK = 100_000_000

#: The string prefixes of an f-string, in every case and order.
_F_PREFIXES = frozenset({b"f", b"F", b"rf", b"rF", b"Rf", b"RF", b"fr", b"fR", b"Fr", b"FR"})


#: A string literal's body, without its prefix: triple-quoted (to its closing quotes or the file's end) or not (to
#: its closing quote or its line's end); a backslash escapes the next character, or a ``\\r\\n`` line break whole (a
#: backslash and ``\\r`` alone left the ``\\n`` to end the literal early, and the closing quote then opened one).
#: Written as runs of plain bytes between escapes (``[^'\\]*(?:\\.[^'\\]*)*``), not one alternation a byte: the same
#: matches (tests/test_cap123.py: every module of this checkout, some of the standard library's, fuzzed texts), in
#: half the time (the package's pricing modules' literals and comments cut in 33 ms instead of 65, in process;
#: docs/PERFORMANCE.md).
_BODY = (rb"'''[^'\\]*(?:(?:\\(?:\r\n|.)|'(?!''))[^'\\]*)*(?:'''|\Z)"
         rb'|"""[^"\\]*(?:(?:\\(?:\r\n|.)|"(?!""))[^"\\]*)*(?:"""|\Z)'
         rb"|'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'?"
         rb'|"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"?')

#: A string prefix where Python's tokenizer reads one: letters not preceded by a word character (``xf'…'`` is the
#: name ``xf`` and a plain string). A quote with no prefix opens a literal wherever it stands outside one: the
#: pattern required a word boundary before it, so ``('a', f'{a}…')`` was read as the literal ``', f'`` and the
#: f-string's fields as code (session 44, digest89: 200,000 fields counted no f-string work).
_PREFIX = rb"(?:(?<!\w)([rRbBuUfF]{1,2}))?"

#: What a comment or a literal starts with, looked ahead for first: a position that cannot start one is passed at
#: once (the alternatives tried at every byte cost the package's modules 0.114 s to substitute, 0.057 s so).
_STARTS = rb"(?=[#'\"rRbBuUfF])"


@functools.cache
def _literal() -> re.Pattern[bytes]:
    """A comment, or a string literal with its prefix (group 1) and body (group 2): how :func:`_fstring_work` finds
    f-strings without tokenizing, matched left to right as Python's tokenizer reads them (a comment is matched so
    that a quote in it starts nothing; an unclosed literal runs to its line's end, or the file's for a
    triple-quoted one)."""
    return re.compile(_STARTS + rb"(?:#[^\r\n]*|" + _PREFIX + rb"(" + _BODY + rb"))", re.DOTALL)


@functools.cache
def _unspoken() -> re.Pattern[bytes]:
    """What :func:`_parsed_text` replaces: an f-string literal (group 1, kept whole: its fields are parsed), a comment
    (dropped), another string literal (group 2: its opening quote, kept as the literal's one token)."""
    fstring = rb"((?<!\w)(?:[fF][rR]?|[rR][fF])(?:" + _BODY + rb"))"
    other = rb"(?:(?<!\w)[rRbBuU]{1,2})?(?=(['\"]))(?:" + _BODY + rb")"
    return re.compile(_STARTS + rb"(?:#[^\r\n]*|" + fstring + rb"|" + other + rb")", re.DOTALL)


@functools.cache
def _coding() -> re.Pattern[bytes]:
    """A coding declaration (PEP 263), as Python's tokenizer finds one on a module's first or second line.
    Compiled when first used (afresh101: a warm price reads the code digest from the cache, no module)."""
    return re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


#: Codecs whose decoding costs the square of the bytes, as normalized by :func:`codecs.lookup`: a module declaring
#: one (PEP 263) is refused before it is parsed (:func:`slow_coding`), since Python's parser decodes the whole module
#: first. ``punycode``: 160 KB decoded in 2.2 s of CPU, and a ``--no-cache check`` of a checkout whose ``locks.py``
#: was ``# coding: punycode`` and 900,000 bytes of one run (one token, far under :data:`MODEL_TOKENS`) took 47 s of
#: CPU, the checkout's code then said not to read (its decoding fails at the line break the parser reads last: no
#: module in punycode parses; left103, load 9; the same check of the checkout as it is: 1.8 s, load 4). Each other
#: codec of the standard library decoded 200 KB of ASCII, of random bytes and of one UTF-7 run within 4 times its
#: 50 KB time (Python 3.11).
SLOW_CODECS = frozenset({"punycode"})


def slow_coding(data: bytes) -> tuple[int, str] | None:
    """The line (1 or 2) and the codec's name of a coding declaration (PEP 263) in a module's bytes ``data`` that
    names a codec of :data:`SLOW_CODECS`, or ``None``. The second line declares only after a first line that is
    blank or a comment, as Python's tokenizer reads it (``x = 1`` then ``# coding: punycode`` parses). Raises
    nothing."""
    import codecs

    for number, line in enumerate(re.split(rb"\r\n|\r|\n", data, maxsplit=2)[:2], 1):
        found = _coding().match(line)
        if found is None:
            if line.lstrip(b" \t\f")[:1] not in (b"", b"#"):
                return None  # code on the first line: the second declares nothing
            continue
        try:
            name = codecs.lookup(found.group(1).decode("ascii")).name
        except (LookupError, UnicodeError, ValueError):
            return None
        return (number, name) if name in SLOW_CODECS else None
    return None


def slow_coding_said(rel: str, data: bytes) -> str | None:
    """What is wrong with a module of another checkout (``rel``: its path below ``src/passprice``) whose bytes
    ``data`` declare a codec of :data:`SLOW_CODECS` (:func:`slow_coding`), in one line naming the file and the line;
    ``None`` for any other. Raises nothing."""
    slow = slow_coding(data)
    if slow is None:
        return None
    return (f"src/passprice/{rel}: line {slow[0]}: declares the {slow[1]} encoding, whose decoding costs the square "
            "of the module's bytes (no module in it parses): not parsed nor imported; write it in UTF-8")


def _as_parsed(data: bytes) -> tuple[bytes, ...]:
    """A module's bytes as the parser may read them, in UTF-8: ``data`` itself, and, when its first or second line
    (ended by ``\\r\\n``, ``\\r`` or ``\\n``) declares another encoding, ``data`` decoded by it and encoded in UTF-8
    (each reading counted apart and the counts summed: more than either has; one text of both let a literal the bytes
    leave open swallow the decoded reading). A module in UTF-7 holds its code in base64 runs, one token to
    :func:`_token` each: 999,987 bytes of it parse as 187,494 statements (session 44, digest89). An encoding Python
    does not know, or bytes it does not decode, are left as they are: the parser refuses them before parsing a
    statement."""
    import codecs

    for line in re.split(rb"\r\n|\r|\n", data, maxsplit=2)[:2]:
        found = _coding().match(line)
        if found is None:
            continue
        try:
            name = codecs.lookup(found.group(1).decode("ascii")).name
            if name in ("utf-8", "ascii", "punycode", "idna"):  # punycode's decoding is quadratic; what it
                return (data,)  # decodes from a module's bytes is no ASCII that the bytes do not hold themselves
            return data, data.decode(name).encode("utf-8", "surrogatepass")
        except (LookupError, UnicodeError, ValueError):
            return (data,)
    return (data,)


def _fstring_work(data: bytes) -> int:
    """The parser's work on the f-strings of a module's bytes, as :data:`FSTRING_WORK` counts it: for each f-string
    literal (one whose prefix is in :data:`_F_PREFIXES`), its ``{`` characters times its bytes (at least what its
    fields' location scans read; ``{{`` counted too), in the bytes as the parser reads them (:func:`_as_parsed`: an
    f-string in UTF-7 holds its braces in base64). Found at C speed (``findall``), the f-strings summed; bytes
    without a ``{`` are not searched (the dense form of ``tests/test_hostile_11.py``)."""
    return sum(
        sum(body.count(b"{") * len(body) for prefix, body in _literal().findall(text) if prefix in _F_PREFIXES)
        for text in _as_parsed(data)
        if b"{" in text
    )


@functools.cache
def own_tokens() -> int:
    """The tokens (:func:`_token`) of the running package's pricing-model modules (:func:`pricing_modules`)
    together: what :data:`MODEL_TOKENS` is set against (about 1.3 times this: 369,189 tokens when it was raised to
    480,000). Reads the package's own files; an ``OSError`` there is the installation's fault and propagates."""
    return sum(_count_tokens((PACKAGE / f"{name}.py").read_bytes()) for name in pricing_modules())


class CodeNotJudged(InputError):
    """Another checkout's pricing-model code past :data:`MODEL_TOKENS`: its digest is not taken (``path``: the
    module that passed the cap, named in the message as ``src/passprice/NAME.py``, the side's own path whatever
    folder it was read from; ``size``: its bytes; ``tokens``: the closure's tokens up to it)."""

    def __init__(self, path: Path, size: int, tokens: int) -> None:
        super().__init__(
            f"src/passprice/{path.name}: {size:,} bytes; the pricing model's modules reach {tokens:,} tokens with "
            f"it, past the {MODEL_TOKENS:,} passprice parses of another checkout's code (its own is "
            f"{own_tokens():,})"
        )
        self.path, self.size, self.tokens = path, size, tokens


class FStringsNotJudged(CodeNotJudged):
    """Another checkout's pricing-model code whose f-strings are past :data:`FSTRING_WORK` (``work``: the closure's
    count up to the module ``path``, of ``size`` bytes): not parsed, as :class:`CodeNotJudged` code is not."""

    def __init__(self, path: Path, size: int, work: int) -> None:
        InputError.__init__(
            self,
            f"src/passprice/{path.name}: {size:,} bytes; the pricing model's f-strings reach {work:,} of the "
            f"parser's work (an f-string's replacement fields times its bytes) with it, past the {FSTRING_WORK:,} "
            "passprice parses of another checkout's code: split f-strings of many fields",
        )
        self.path, self.size, self.tokens = path, size, 0


class SlowCodingNotJudged(CodeNotJudged):
    """Another checkout's module ``path`` (of ``size`` bytes) declaring a codec of :data:`SLOW_CODECS`: not parsed,
    as :class:`CodeNotJudged` code is not, and not imported by a side's process either (left103: a ``locks.py`` of
    900,000 bytes in punycode held a ``check`` of its checkout 47 s; ``message``: :func:`slow_coding_said`)."""

    def __init__(self, path: Path, size: int, message: str) -> None:
        InputError.__init__(self, message)
        self.path, self.size, self.tokens = path, size, 0


def _note_import(node: ast.Import | ast.ImportFrom, out: set[str]) -> None:
    """Add to ``out`` the package modules (``serving``, ``decode`` …) one import statement names, absolute
    (``from passprice.serving import …``) or relative to the package (``from .serving import …``, ``from . import
    serving``: once left out, a package importing its modules so had a closure of its two roots, and an edit to
    ``cost.py`` left the digest as it was)."""
    if isinstance(node, ast.ImportFrom):
        module = node.module
        if node.level == 1:  # the package's own folder (a level of 2 or more is above the package)
            module = f"passprice.{module}" if module else "passprice"
        elif node.level != 0:
            return
        if module is None:
            return
        parts = module.split(".")
        if parts[0] != "passprice":
            return
        if len(parts) == 1:
            out.update(a.name for a in node.names)  # from passprice import ggml
            out.add("__init__")
        else:
            out.add(parts[1])
        return
    for alias in node.names:
        parts = alias.name.split(".")
        if parts[0] == "passprice" and len(parts) > 1:
            out.add(parts[1])


#: The nodes whose body may open with a docstring (a leading string statement), which the digest drops.
_WITH_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _without_docstring(body: list[Any]) -> list[Any]:
    first = body[0].value if body and isinstance(body[0], ast.Expr) else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return body[1:] or [ast.Pass()]
    return body


#: Each syntax-tree class's writer (:func:`_writer`), made once a class the walk meets: a function that appends the
#: node's canonical text (:func:`_emit`) to ``out``, its fields written one by one in the order of the class's
#: ``_fields`` with no loop over them and no lookup of a field's name (the walk visits hundreds of thousands of
#: nodes: for each, a generic loop over a layout cost more than the text it wrote).
_WRITERS: dict[type, Any] = {}

#: A name's whole text (``["Name",["id","x"],["ctx",["Load"]]]``) by its identifier and its context's class: the
#: commonest node, written once a process for each pair (a module's names repeat).
_NAMES: dict[tuple[str, type], str] = {}

#: The contexts a name is read or written in: classes without fields, each one text whatever the instance.
_CONTEXTS = frozenset({ast.Load, ast.Store, ast.Del})


def _field_code(field: str, strip: bool, pieces: str) -> list[str]:
    """The lines of a writer (:func:`_writer`) that write one field, as :func:`_emit` always has: a string as JSON
    writes it, an exact ``int`` as its ``repr``, a list (when not empty) item by item (the docstring of a ``body``
    dropped when ``strip``), a node of a class without fields as its whole pair from the table named ``pieces``
    (:func:`_pieces`), another value (a node, a float, a bool …) by its writer or :func:`_emit_value`, and a ``None``
    not at all."""
    head = f',["{field}",'  # a field's name is an ASCII identifier: a JSON string as it is
    read = f"node.{field}" if field.isidentifier() and not keyword.iskeyword(field) else f"getattr(node, {field!r})"
    lines = [
        f"    v = {read}",
        "    k = type(v)",
        "    if k is str:",
        f"        append({head!r} + js(v) + ']')",
        "    elif k is list:",
        "        if v:",
    ]
    if strip and field == "body":
        lines.append("            v = without(v)")
    lines += [
        f"            append({head + '['!r})",
        "            for item in v:",
        "                (get(type(item)) or value)(item, imports, out)",
        "                append(',')",
        "            out[-1] = ']]'",
        "    elif k is int:",
        f"        append({head!r} + int_repr(v) + ']')",
        "    elif v is not None:",
        f"        piece = {pieces}.get(k)",
        "        if piece is not None:",
        "            append(piece)",
        "        else:",
        f"            append({head!r})",
        "            (get(k) or value)(v, imports, out)",
        "            append(']')",
    ]
    return lines


@functools.cache
def _fieldless() -> tuple[type, ...]:
    """The syntax-tree classes of :mod:`ast` without fields: contexts (``Load`` …) and operators (``Add``, ``Eq`` …),
    a third of the nodes of passprice's own modules, each written as one constant text."""
    return tuple(
        cls for cls in vars(ast).values()
        if isinstance(cls, type) and issubclass(cls, ast.AST) and not getattr(cls, "_fields", ())
    )  # fmt: skip


def _pieces(head: str) -> dict[type, str]:
    """The whole pair ``head`` + text + ``]`` of each class without fields (:func:`_fieldless`) as one field's value:
    ``,["ctx",["Load"]]``, what :func:`_emit` writes of it piece by piece."""
    return {cls: f'{head}["{cls.__name__}"]]' for cls in _fieldless()}


def _writer(cls: type) -> Any:
    """The writer of the syntax-tree class ``cls`` (kept in :data:`_WRITERS`): a function ``(node, imports, out)``
    made from the class's fields (:func:`_field_code`), which notes an import statement's package modules
    (:func:`_note_import`) and drops a docstring where one may stand (:data:`_WITH_DOCSTRING`). A class without
    fields is one constant text; a ``Name`` is written once for each identifier and context (:data:`_NAMES`)."""
    fields = tuple(getattr(cls, "_fields", ()))
    strip = issubclass(cls, _WITH_DOCSTRING)
    opening = f'["{cls.__name__}"'  # a class's name is an ASCII identifier: a JSON string as it is
    scope: dict[str, Any] = {
        "js": _json_string, "int_repr": int.__repr__, "without": _without_docstring, "note": _note_import,
        "get": _WRITERS.get, "value": _emit_value,
    }  # fmt: skip
    lines = ["def write(node, imports, out):", "    append = out.append"]
    if issubclass(cls, ast.Import | ast.ImportFrom):
        lines.append("    note(node, imports)")
    if not fields:
        lines.append(f"    append({opening + ']'!r})")
    else:
        lines.append(f"    append({opening!r})")
        for i, field in enumerate(fields):
            scope[f"pieces{i}"] = _pieces(f',["{field}",')
            lines += _field_code(field, strip, f"pieces{i}")
        lines.append("    append(']')")
    exec(compile("\n".join(lines), f"<passprice.pins writer of {cls.__name__}>", "exec"), scope)
    write = scope["write"]
    if cls is ast.Name:
        plain = write

        def write(node: Any, imports: set[str], out: list[str]) -> None:
            name, context = node.id, type(node.ctx)
            if type(name) is not str or context not in _CONTEXTS:
                plain(node, imports, out)
                return
            key = (name, context)
            text = _NAMES.get(key)
            if text is None:
                one: list[str] = []
                plain(node, imports, one)
                text = _NAMES[key] = "".join(one)
            out.append(text)

    _WRITERS[cls] = write
    return write


def _emit(node: ast.AST, imports: set[str], out: list[str]) -> None:
    """Append to ``out`` the canonical form of the syntax tree ``node`` as JSON text (``json.dumps`` with
    ``separators=(",", ":")`` and ``ensure_ascii=False``, piece by piece): each node a list of its class name and its
    fields, each field a ``[name, value]`` pair, skipping positions and fields that are ``None`` or empty (so a newer
    Python's extra empty fields, such as ``type_params``, leave it unchanged), and the docstring of the module and of
    every class and function. The package modules its import statements name (at top level or inside functions) are
    added to ``imports`` on the way: the tree is walked once. The form is what it always was (nested lists dumped by
    ``json.dumps``, which ``tests/test_digest_text.py`` holds it to on every module of the package and a dozen of
    the standard library's); written straight as text it takes a fifth of the time, which an editable install's first
    ``check`` pays in full."""
    (_WRITERS.get(type(node)) or _writer(type(node)))(node, imports, out)


def _emit_value(value: Any, imports: set[str], out: list[str]) -> None:
    """:func:`_emit` of a field's value or a list's item that may be other than a node: a list, a constant (bytes
    and complex numbers as their ``repr``, a float as ``float.hex``, ``...`` as ``"..."``, anything else as JSON
    writes it: a string, an integer, ``true``, ``false``, ``null``)."""
    if isinstance(value, ast.AST):
        _emit(value, imports, out)
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _emit_value(item, imports, out)
        out.append("]")
    elif isinstance(value, bytes | complex):
        out.append(_json_string(repr(value)))
    elif isinstance(value, float):
        out.append(_json_string(float.hex(value)))
    elif value is Ellipsis:
        out.append('"..."')
    else:
        out.append(json.dumps(value, ensure_ascii=False))


def _tree_text(tree: ast.AST, imports: set[str]) -> str:
    """The canonical form of ``tree`` as JSON text (:func:`_emit`)."""
    out: list[str] = []
    _emit(tree, imports, out)
    return "".join(out)


def pricing_modules(folder: Path = PACKAGE) -> tuple[str, ...]:
    """The modules of the package at ``folder`` (a ``passprice`` source folder) the pricing model digest covers:
    :data:`PRICING_ROOTS` and the package modules they import, transitively, less :data:`NOT_PRICING`, sorted.
    A module named but missing from ``folder`` is left out. The running package's are the names its digest's walk
    found when one ran in this process (:data:`_OWN_MODULES`), not walked again."""
    if folder == PACKAGE and _OWN_MODULES:
        return _OWN_MODULES[0]
    return tuple(sorted(_trees(str(folder))))


#: The running package's pricing modules as the last walk of its folder (:func:`_trees`) found them, or its build's
#: record (:func:`_recorded`) named them, once either was read: a refusal's message names the package's own tokens
#: (:func:`own_tokens`), and naming its modules walked every tree again, 0.44 s of a ``--no-cache check`` of a
#: checkout not judged (session 44, digest89).
_OWN_MODULES: list[tuple[str, ...]] = []


def _trees(
    folder: str,
    files: dict[str, str | None] | None = None,
    capped: bool = False,
    kept: bool = True,
    read: dict[str, tuple[bytes, str]] | None = None,
) -> dict[str, str]:
    """The canonical trees, as JSON text (:func:`_tree_text`), of the modules :func:`pricing_modules` names, by module
    name. When ``files`` is given, every module name the walk looked up is added to it with the sha256 of its file's
    bytes, or ``None`` when it has no file (what :func:`record` pins). ``capped`` (another checkout's code): each
    module's tokens are counted before it is parsed (or read with its cached tree), and the closure past
    :data:`MODEL_TOKENS` raises :class:`CodeNotJudged`. ``kept`` (the default): each module's tree is taken from,
    and stored in, passprice's cache under the sha256 of its file's bytes (:func:`_kept_tree`), so a tree with one
    module edited parses that module alone; ``False`` parses every module (:func:`record`, run by the build).
    ``read`` (:func:`_sources`' reading): each module file's bytes and their sha256 by file name, taken from there
    instead of reading and hashing the file again (a cold ``check`` read and hashed the 54 modules twice)."""
    from passprice import cache

    kept = kept and cache.enabled()  # bypassed (``--no-cache``): no key made, no tree compressed that is not kept
    own = folder == str(PACKAGE)
    base = Path(folder)
    seen: dict[str, str] = {}
    todo = list(PRICING_ROOTS)
    tokens = work = 0
    while todo:
        name = todo.pop()
        if name in seen or name in NOT_PRICING:
            continue
        path = base / f"{name}.py"
        done = read.get(path.name) if read is not None else None
        if done is not None:
            data, sha = done
        else:
            if not is_there(path):
                if files is not None:
                    files[name] = None
                continue
            data = read_regular(path, MODULE_BYTES)
            sha = sha256(data).hexdigest()
        found = _kept_tree(sha) if kept else None
        if found is None:
            found = _OWN_TREES.get(sha)
        counted: int | None = None
        if capped:
            counted = found.tokens if found is not None and found.tokens is not None else _count_tokens(data)
            tokens += counted
            if tokens > MODEL_TOKENS:
                raise CodeNotJudged(path, len(data), tokens)
        if files is not None:
            files[name] = sha
        if found is None:
            if capped:  # a tree not kept is parsed: its f-strings bounded first (a kept one was parsed before)
                work += _fstring_work(data)
                if work > FSTRING_WORK:
                    raise FStringsNotJudged(path, len(data), work)
                slow = slow_coding_said(path.name, data)  # left103: the parser decodes the whole module first
                if slow is not None:
                    raise SlowCodingNotJudged(path, len(data), slow)
            imports: set[str] = set()
            try:
                text = _tree_text(ast.parse(data, filename=str(path)), imports)
            except SyntaxError as e:  # a NUL byte is refused before the parse, its error naming no file (attack87)
                e.filename = e.filename or str(path)
                raise
            except (RecursionError, MemoryError) as e:  # nested deeper than the parser goes: the module named
                e.add_note(f"src/passprice/{path.name}")
                raise
            found = _Tree(text, tuple(sorted(imports)), counted)
            if kept:
                _keep_tree(sha, found)
            if own:
                _OWN_TREES[sha] = found
        seen[name] = found.text
        todo.extend(found.imports)
    if folder == str(PACKAGE):
        _OWN_MODULES[:] = [tuple(sorted(seen))]
    return seen


#: The running package's module trees (:class:`_Tree`) that :func:`_trees` parsed in this process, by the sha256 (hex)
#: of the module's bytes: another folder's module holding the very same bytes (a checkout of passprice with one
#: module edited, checked by an editable install whose build record is stale, ``--no-cache``) takes its tree from
#: here instead of being parsed again: the tree is a function of the bytes (and of this module and the interpreter,
#: the same in one process), so the digest is the one a parse gives. Only the running package's trees are kept (its
#: own code: at most a few MB of text, 5.7 MB today); another checkout's, which may be at :data:`MODEL_TOKENS`, are
#: not. Used under ``--no-cache`` too: it is this process's own work, as :data:`_COUNTED` and :data:`_TAKEN` are,
#: never read from or written to the cache folder.
_OWN_TREES: dict[str, _Tree] = {}


def _parsed_text(data: bytes) -> bytes:
    """What of a module's bytes the parser pays for, as :func:`_token` counts it (:func:`_count_tokens`): each
    comment dropped (the tokenizer skips it at C speed), each string literal that is not an f-string cut to its
    opening quote (one token: its body is copied, not parsed; the package's docstrings and messages were half its
    count), an f-string kept whole (its fields are parsed). Made at C speed: one substitution by a template, no call
    a literal. ``data`` is one reading of a module (:func:`_as_parsed`)."""
    return _unspoken().sub(rb"\1\2", data)


#: The tokens a ``{`` outside comments and plain string literals counts beyond its own (:func:`_count_tokens`): in an
#: f-string it opens a replacement field, which Python 3.11 parses by a parser run of its own
#: (``fstring_compile_expr``): 33,332 f-strings of three fields ``{a}`` (399,989 tokens as counted without it) parsed
#: in 0.83 s, the dense form's 400,000 tokens in about 0.55-0.73 s (session 44, load 10); with it 22,221 such
#: f-strings reach the cap, parsed in 0.35 s. A brace in code (a dict, a set) counts so too: 770 of the package's
#: 4,527.
FIELD_TOKENS = 2


def _count_tokens(data: bytes) -> int:
    """The tokens (:func:`_token`) of a module's bytes, as the parser pays for them (:func:`_parsed_text` of each
    reading, :func:`_as_parsed`, and :data:`FIELD_TOKENS` more for each ``{`` there), counted at C speed
    (:func:`_tokens_in`), once a process for the same bytes (:data:`_COUNTED`)."""
    key = sha256(data).digest()
    count = _COUNTED.get(key)
    if count is None:
        count = 0
        for reading in _as_parsed(data):
            text = _parsed_text(reading)
            count += _tokens_in(text) + FIELD_TOKENS * text.count(b"{")
        _COUNTED[key] = count
    return count


#: :func:`_count_tokens`' counts in this process, by the sha256 of the module's bytes: a review counts every module
#: of both sides' ``src/passprice`` (:func:`passprice.sidecode.code_of`, each side not the running code's) and, under
#: ``--no-cache``, each side's pricing modules again for its digest (:func:`_trees`), and the two sides share all but
#: the modules a change touched.
_COUNTED: dict[bytes, int] = {}


@functools.cache
def _classes() -> bytes:
    """Each byte's class as :func:`_tokens_in` counts it, a :meth:`bytes.translate` table (made when another
    checkout's modules are first counted, not on every import): ``w`` a word character (``\\w`` of a bytes
    pattern: ASCII letters, digits, ``_``), ``r`` and ``n`` the line breaks' ``\\r`` and ``\\n``, a space the other
    blanks of ``\\s`` (space, tab, vertical tab, form feed), ``o`` every other byte (``[^\\w\\s]``: one token
    each, a byte past ASCII included)."""
    word = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
    return bytes(
        ord("w") if b in word else ord("r") if b == 13 else ord("n") if b == 10
        else ord(" ") if b in (9, 11, 12, 32) else ord("o")
        for b in range(256)
    )  # fmt: skip


def _tokens_in(text: bytes) -> int:
    """``len(_token().findall(text))`` (:func:`_token`: a run of word characters, another non-blank byte, or a line
    break, ``\\r\\n`` one), counted without a match: ``text``'s bytes classed by :func:`_classes` in one
    ``translate``, then the non-blank others, the line breaks (``\\r`` and ``\\n``, less each ``\\r\\n``) and the
    word runs (a word byte first, or after any other class) counted by ``bytes.count``, each a scan at C speed
    with no object a token: the package's 54 modules counted in a tenth of ``findall``'s time, which made a
    ``bytes`` object a token (29 ms for 420,000 of them; docs/PERFORMANCE.md)."""
    c = text.translate(_classes())
    words = c.count(b"ow") + c.count(b" w") + c.count(b"rw") + c.count(b"nw") + c.startswith(b"w")
    return c.count(b"o") + c.count(b"r") + c.count(b"n") - c.count(b"rn") + words


#: The version of a module's canonical tree (:func:`_emit`) as its cache entry holds it (:func:`_kept_tree`):
#: bump it when the form changes, so no tree of the old form is read (the code's own stamp misses too).
TREE_FORM = 1


class _Tree:
    """One module's canonical tree as :func:`_trees` uses it: ``text`` (:func:`_tree_text`), ``imports`` (the
    package modules its import statements name, sorted) and ``tokens`` (:func:`_count_tokens` of its bytes, or
    ``None`` when they were not counted)."""

    __slots__ = ("imports", "text", "tokens")

    def __init__(self, text: str, imports: tuple[str, ...], tokens: int | None) -> None:
        self.text, self.imports, self.tokens = text, imports, tokens


def _tree_key(sha: str) -> str:
    """The cache key of the tree of a module whose bytes have the sha256 ``sha`` (hex): the BLAKE2b digest of the
    cache's format, passprice's version, the interpreter (implementation and full version: its parser and ``json``'s
    string encoder make the text), the BLAKE2b digest of this module's own bytes (which decide the tree's form:
    :func:`_emit`, :func:`_note_import`), :data:`TREE_FORM` and ``sha``. Not :func:`passprice.cache.key`, whose key
    holds the status of every module of the running package: a review prices HEAD in a child run from a fresh
    checkout of HEAD's code, whose every module file is new, and each of its trees missed there."""
    import sys

    from passprice import __version__, cache
    from passprice.digests import blake2b

    h = blake2b()
    for part in (cache.FORMAT, __version__, sys.implementation.name, sys.version, _own_bytes(), str(TREE_FORM), sha):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    key: str = h.hexdigest()
    return key


@functools.cache
def _own_bytes() -> str:
    """The BLAKE2b digest (hex) of this module's bytes, once a process."""
    from passprice.digests import blake2b

    return blake2b(Path(__file__).read_bytes()).hexdigest()


#: The most bytes (UTF-8) a cached tree may expand to (:func:`_kept_tree`): a module's canonical tree is a few times
#: its bytes (passprice's own pricing modules make 5.7 MB of trees), and a module holds at most :data:`MODULE_BYTES`.
TREE_BYTES = 32 * MODULE_BYTES


def _kept_tree(sha: str) -> _Tree | None:
    """The canonical tree kept in passprice's cache for a module whose bytes have the sha256 ``sha``, or ``None``:
    none kept, the cache bypassed (``--no-cache``), or an entry that is not whole or not of this shape (a key more or
    fewer than its three, its tree not zlib of at most :data:`TREE_BYTES` of UTF-8, an import not a name, a count not
    a count: ignored, and overwritten when the tree is parsed again). Raises nothing."""
    import base64
    import binascii
    import zlib

    from passprice import cache

    kept = cache.read(_tree_key(sha))
    if kept is None:
        return None
    packed, imports, tokens = kept.get("tree"), kept.get("imports"), kept.get("tokens")
    if kept.keys() != {"tree", "imports", "tokens"} or not isinstance(packed, str) or not isinstance(imports, list):
        return None
    if not all(isinstance(i, str) and i.isidentifier() for i in imports):
        return None
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        return None
    try:
        unpacker = zlib.decompressobj()
        raw = unpacker.decompress(base64.b64decode(packed, validate=True), TREE_BYTES)
        if not unpacker.eof or unpacker.unconsumed_tail:
            return None
        text = raw.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        return None
    return _Tree(text, tuple(imports), tokens)


#: The zlib level a kept tree is compressed at (:func:`_keep_tree`): 1, the fastest. A cold ``check`` of an editable
#: install keeps all 53 trees (5.8 MB of text), and at level 6 compressing them was 52 ms of its CPU for 640 KB; at 1
#: it is 21 ms for 1.0 MB, and reading them all back 14 ms instead of 11 (check76, in process). ``zlib.decompress``
#: reads any level, so an entry kept at another level is read as it is.
TREE_LEVEL = 1


def _keep_tree(sha: str, tree: _Tree) -> None:
    """Keep ``tree`` in passprice's cache for the module whose bytes have the sha256 ``sha``, its text compressed
    (zlib at :data:`TREE_LEVEL`, base64: a sixth of its size, and a third of the time to read back that JSON text
    takes; nothing when the cache is bypassed or cannot be written)."""
    import base64
    import zlib

    from passprice import cache

    packed = base64.b64encode(zlib.compress(tree.text.encode("utf-8"), TREE_LEVEL)).decode("ascii")
    cache.store(_tree_key(sha), {"tree": packed, "imports": list(tree.imports), "tokens": tree.tokens})


def _sources(folder: str) -> tuple[bytes, dict[str, tuple[bytes, str]]]:
    """Every module file of the package at ``folder``: its name and the sha256 of its bytes, sorted by name (a
    superset of what :func:`_trees` reads, so a change to any module the digest covers changes these), and what was
    read: each file's bytes and their sha256 by file name (for :func:`_trees`, so the trees are made from the very
    bytes the cache's key names)."""
    base = Path(folder)
    read: dict[str, tuple[bytes, str]] = {}
    for p in base.glob("*.py"):
        if is_there(p):
            data = read_regular(p, MODULE_BYTES)
            read[p.name] = (data, sha256(data).hexdigest())
    # A file name that is not UTF-8 (bytes the file system holds, which Python reads as surrogates) is keyed by its
    # own bytes: it stopped the digest with a UnicodeEncodeError, and a side's own code priced nothing (round 19).
    listed = "\n".join(f"{name}:{read[name][1]}" for name in sorted(read)).encode("utf-8", "surrogateescape")
    return listed, read


def _digest(folder: str, capped: bool = False) -> str:
    """The digest of the package at ``folder``, kept in passprice's cache under the sha256 of every module's bytes
    (and of this module's own, which decides how the digest is taken): the syntax trees are parsed and walked only
    when some module's content changed (and then only the modules whose own content changed: :func:`_trees`), never
    trusted from a file's size or time."""
    from passprice import cache

    recorded = _recorded(folder)
    if recorded is not None:
        return recorded
    import sys

    listed, read = _sources(folder)
    # The interpreter too: its parser makes the trees (cache.key names the libraries' folders, not the Python).
    entry = cache.key("pricing-model", Path(__file__).read_bytes(), f"{sys.version}\n".encode() + listed)
    known = _TAKEN.get(entry)
    if known is not None:
        return known
    kept = cache.read(entry)
    if kept is not None and kept.keys() == {"digest"} and isinstance(kept.get("digest"), str):
        return str(kept["digest"])
    digest = _compute(folder, capped=capped, read=read)
    cache.store(entry, {"digest": digest})
    _TAKEN[entry] = digest
    return digest


#: The digests :func:`_digest` computed in this process, by their cache entry's key (every module's bytes, this
#: module's, the interpreter): a checkout holding the running package's very files (a clone of passprice checking
#: itself, issue 13's scale88 reproducer) was parsed and walked twice by ``--no-cache check``, the running code's and
#: the checkout's (0.4 s of CPU), where the cache of a cold run answered the second.
_TAKEN: dict[str, str] = {}


#: The running package's record of its own digest (:func:`record`), written beside its modules when the package is
#: built (``hatch_build.py``: into the wheel, or into ``src/passprice`` for an editable install; git ignores it).
RECORD = PACKAGE / "pricing_model.json"

#: The most bytes :data:`RECORD` may hold (it holds some 40 module names and digests, about 3 KB).
RECORD_BYTES = 256 * 1024


def _python() -> str:
    import sys

    return f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"


def record(folder: Path = PACKAGE) -> dict[str, Any]:
    """The pricing model's digest of the package at ``folder``, with what it is a function of, as JSON-ready data:
    ``digest`` (:func:`pricing_model_digest`'s), ``modules`` (every module name the walk of :func:`_trees` looked
    up: the sha256 of its file's bytes, or ``None`` for a name with no file), ``algorithm`` (the sha256 of this
    module's own bytes, which decide how the digest is taken: roots, the modules left out, the tree's form) and
    ``python`` (the interpreter that parsed them). The walk's result depends on nothing else: the same bytes under
    the same names visit the same modules in the same order and give the same trees.

    Written into the package when it is built (``hatch_build.py``), so a first ``check``, ``diff`` or ``lock`` with
    an empty cache (a fresh CI machine) takes the running package's digest by hashing its module files (a few ms)
    instead of parsing and walking them (about 0.2 s). Raises what :func:`pricing_model_digest` raises."""
    files: dict[str, str | None] = {}
    digest = _compute(str(folder), files, kept=False)
    return {
        "format": 1,
        "python": _python(),
        "algorithm": sha256(Path(__file__).read_bytes()).hexdigest(),
        "modules": dict(sorted(files.items())),
        "digest": digest,
    }


def _recorded(folder: str) -> str | None:
    """The digest the running package's build record (:func:`_record_file`: :data:`RECORD`, or an editable install's
    in site-packages; never a record found in another folder) gives the package at
    ``folder``, when every module it names holds, in ``folder``, the very bytes it records (or is still absent), and
    this module and the interpreter are the ones that made it; else ``None`` (no record, a damaged one, one byte of
    one module different, another algorithm or Python): the digest is then computed from the trees. So an edited
    module can never be given a stale record's digest: the record is a shortcut to a result, checked against the
    bytes that result is a function of, as the cache's entries are.

    A record in a source tree (an editable install: :func:`_in_source_tree`) is never used: there it is a file of
    the checkout, which a branch can carry (``git add -f``) and ``git checkout`` puts in place without a build, and a
    record stating the closure's roots alone with their true bytes and an old digest made ``check`` say "pricing
    model: same" of edited code; its digest cannot be checked without computing it. An editable install's own
    record is read instead (:func:`_record_file`): the one its build put in the interpreter's site-packages, outside
    the checkout, checked against the checkout's bytes as any record is."""
    found = _record_file()
    if found is None:
        return None
    try:
        kept = json.loads(read_regular(found, RECORD_BYTES))
    except (InputError, OSError, ValueError, RecursionError):  # a record of arrays nested 100,000 deep (within its
        return None  # 256 KiB) stopped every command taking the digest with a traceback (tests/test_attack114.py)
    if not isinstance(kept, dict) or kept.get("format") != 1 or kept.get("python") != _python():
        return None
    digest, modules = kept.get("digest"), kept.get("modules")
    if not isinstance(digest, str) or not digest.startswith("sha256:") or not isinstance(modules, dict):
        return None
    if not modules or not set(PRICING_ROOTS) <= modules.keys():
        return None
    try:
        if kept.get("algorithm") != sha256(Path(__file__).read_bytes()).hexdigest():
            return None
        base = Path(folder)
        for name, sha in modules.items():
            if not isinstance(name, str) or not name.isidentifier():
                return None
            path = base / f"{name}.py"
            if sha is None:
                if is_there(path):
                    return None
            elif not is_there(path) or sha256(read_regular(path, MODULE_BYTES)).hexdigest() != sha:
                return None
    except (InputError, OSError):
        return None  # the walk meets it again and raises it
    if folder == str(PACKAGE):  # the names its walk looked up, those with a file: the package's pricing modules
        _OWN_MODULES[:] = [tuple(sorted(name for name, sha in modules.items() if sha is not None))]
    return digest


#: Where an editable install's build puts the record of the checkout's code (``hatch_build.py``): in each
#: site-packages folder of the interpreter, under the package's name, beside the embedded data the editable wheel
#: installs there (``passprice/_data``), never in the checkout.
SITE_RECORD = Path("passprice") / "pricing_model.json"


def _record_file() -> Path | None:
    """The running package's build record to read (:func:`_recorded`): :data:`RECORD` beside the modules of an
    installed package; for a package in a source tree (an editable install, :func:`_in_source_tree`, where a record
    beside the modules is a file a branch can carry and is never read), the record the editable install's build
    wrote into a site-packages folder of this interpreter (:data:`SITE_RECORD`: the first there, its folder itself in
    no source tree), as trusted as the installed files beside it (a ``.pth`` file there runs code at every start).
    ``None`` when there is none (no ``site`` module: ``python -S``). Raises nothing."""
    if not _in_source_tree(RECORD.parent):
        return RECORD
    import sys

    site = sys.modules.get("site")
    if site is None:
        return None
    folders: list[str] = []
    with contextlib.suppress(AttributeError):  # (a virtualenv of old made its own site module)
        folders += site.getsitepackages()
    if getattr(site, "ENABLE_USER_SITE", False):
        with contextlib.suppress(AttributeError):
            folders.append(site.getusersitepackages())
    for folder in folders:
        path = Path(folder) / SITE_RECORD
        try:
            if path.parent != RECORD.parent and not _in_source_tree(path.parent) and is_there(path):
                return path
        except (InputError, OSError):  # a folder that cannot be looked at holds no record
            continue
    return None


def _in_source_tree(package: Path) -> bool:
    """Whether the package folder ``package`` lies in a project's source tree (its folder or the one above, as in a
    ``src`` layout, holds ``pyproject.toml``, ``setup.py`` or ``.git``) rather than in an installed package."""
    return any(
        os.path.lexists(folder / name)
        for folder in (package.parent, package.parent.parent)
        for name in ("pyproject.toml", "setup.py", ".git")
    )


def _compute(
    folder: str,
    files: dict[str, str | None] | None = None,
    capped: bool = False,
    kept: bool = True,
    read: dict[str, tuple[bytes, str]] | None = None,
) -> str:
    """``sha256:`` + the hash of the canonical trees of the package at ``folder`` (:func:`_trees`, which fills
    ``files`` when given, takes each module's tree from the cache unless ``kept`` is false and each module's bytes
    from ``read`` when given), dumped as JSON in module name order."""
    import gc
    import hashlib  # OpenSSL's: the trees of every module, hundreds of KB

    # Hundreds of thousands of syntax-tree nodes, none in a cycle, all dropped at the end: a collection finds no
    # garbage among them, and the young generation they fill made each one scan tens of thousands (0.07 s of a cold
    # check, when the trees were also nested lists).
    collecting = gc.isenabled()
    gc.disable()
    try:
        h = hashlib.sha256()
        for name, tree in sorted(_trees(folder, files, capped, kept, read).items()):
            text = f"[{_json_string(name)},{tree}]"  # json.dumps([name, tree]) of the tree's nested lists
            h.update(text.encode("utf-8"))
            h.update(b"\n")
    finally:
        if collecting:
            gc.enable()
    return "sha256:" + h.hexdigest()


@functools.cache
def _running() -> str:
    return _digest(str(PACKAGE))


def pricing_model_digest(folder: Path | None = None) -> str:
    """``sha256:`` + the digest of the pricing model's code in the ``passprice`` source folder ``folder`` (default:
    the running package, computed once a process): the syntax trees of :func:`pricing_modules`, docstrings dropped.

    Raises :class:`SyntaxError` for a module that does not parse (not in an installed package);
    :class:`~passprice.errors.InputError` for a module file that is not a regular file (a FIFO, a device, a link
    loop) or holds more than :data:`MODULE_BYTES`, never read; :class:`CodeNotJudged` (an ``InputError``) for
    another folder's modules past :data:`MODEL_TOKENS`, never parsed; :class:`RecursionError` or
    :class:`MemoryError` for a module nested deeper than the parser goes."""
    if folder is None:
        return _running()
    return _digest(str(folder.resolve()), capped=folder.resolve() != PACKAGE)


def _meta(value: MetaValue) -> Any:
    from passprice.gguf_records import LongArray, LongString

    if isinstance(value, LongArray):
        return {"element_type": value.element_type, "length": value.length}
    if isinstance(value, LongString):  # past KEEP_STRING_LIMIT: its length in bytes is all that is kept (attack93)
        return {"length": value.length}
    if isinstance(value, tuple):
        return [_meta(v) for v in value]
    if isinstance(value, float):
        return {"float": float.hex(value)}  # nan and inf have no JSON number; hex is exact
    return value


def checkpoint_content(header: GGUFHeader) -> dict[str, Any]:
    """What the pricer reads from a checkpoint, as JSON-ready data: ``metadata`` (key → [type, value], keys sorted)
    and ``tensors`` ([name, GGML type id, dims] in table order)."""
    return {
        "metadata": {k: [header.value_types.get(k, ""), _meta(header.metadata[k])] for k in sorted(header.metadata)},
        "tensors": [[t.name, t.type_id, list(t.dims)] for t in header.tensors],
    }


def checkpoint_digest(header: GGUFHeader) -> str:
    """``sha256:`` + the digest of :func:`checkpoint_content`'s canonical JSON (sorted keys, no spaces): any change
    to a metadata value or type, a tensor's name, type or dims, or the tensors' order changes it; the entry's name,
    the header's sha256 and the file it came from do not.

    Inside a snapshot (:mod:`passprice.snapshot`), a header read from a registry entry is digested once for its
    content (:func:`passprice.checkpoints.entry_content`: the entry's bytes and schema folder), whichever folder's
    entry it came from: a review priced each lock on BASE, on HEAD and on its private copy, each time writing the
    whole tensor table as JSON and hashing it (39 digests of 1.04 MB, 1.6 % of a one-fact review's CPU;
    tests/test_reviewfast175.py). Raises nothing."""
    from passprice import snapshot

    if snapshot.active():
        from passprice.checkpoints import entry_content

        content = entry_content(header)
        if content is not None:
            return snapshot.made(("checkpoint-digest", content), lambda: _checkpoint_digest(header))
    return _checkpoint_digest(header)


def _checkpoint_digest(header: GGUFHeader) -> str:
    """:func:`checkpoint_digest` of ``header``, computed."""
    text = json.dumps(checkpoint_content(header), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()



def checkout_note(root: Path) -> str:
    """What a lock's "pricing model: same" (``check``) or "unchanged" (``reproduce``) must add when ``root`` is a
    checkout of passprice whose code is not the running package's (:func:`checkout_model`): ``" (the running
    passprice's; this checkout's src/passprice prices with sha256:… — see the warning)"``, or the empty string. The
    newcomer walkthrough (session 11) read "pricing model: same" on every lock of a checkout whose formulas it had
    edited, the one warning line above the report the only word that the code judged was another copy's."""
    differs = checkout_model(root)
    if differs is None:
        return ""
    theirs = differs[0]
    if theirs.startswith(("not judged: ", "not read: ")):
        return " (the running passprice's; this checkout's src/passprice was not judged: see the warning)"
    return f" (the running passprice's; this checkout's src/passprice prices with {theirs[:19]}…: see the warning)"


def checkout_model(root: Path) -> tuple[str, str] | None:
    """When ``root`` is a checkout of passprice itself (it holds ``src/passprice/pins.py``) other than the running
    package, and its code prices with another pricing model: the checkout's digest and the running package's
    (:func:`pricing_model_digest`), else ``None``. A registry in a checkout is locked, checked and reproduced by the
    running code: after ``pip install .`` (not editable), an edit to the checkout's formulas moved its digest but
    ``lock --update`` rewrote the lock byte for byte with the old code and ``check`` said "pricing model: same"
    (the newcomer walkthrough). Cached as :func:`pricing_model_digest` is (a few ms once computed); a checkout whose
    code does not parse is ``None`` (``check`` of that code is a developer's own), and so is one that cannot be read
    as plain module files (a ``src/passprice`` that is a file or a link loop, a module that is a FIFO — it blocked
    ``check`` forever —, over :data:`MODULE_BYTES`, or nested past the parser's depth: a traceback). A checkout
    whose pricing-model modules are past :data:`MODEL_TOKENS` is not parsed: its "digest" is then ``not judged:``
    and why (the module, its bytes), for the warning to say so.

    Inside a snapshot (:func:`passprice.snapshot.reading`) it is judged once a root: ``check`` asks for every lock,
    and each ask hashed the checkout's module files again (about 10 ms a lock; session 37, left42), though the
    snapshot is one reading of the checkout."""
    from passprice import snapshot

    return snapshot.made(("checkout-model", str(root)), lambda: _checkout_model(root))


def _checkout_model(root: Path) -> tuple[str, str] | None:
    """:func:`checkout_model`, judged afresh."""
    source = root / "src" / "passprice"
    try:
        if not is_there(source / "pins.py") or source.resolve() == PACKAGE:
            return None
    except (OSError, RuntimeError, InputError):
        return None  # no package there to read: a file, a loop of links
    ours = pricing_model_digest()  # first: its walk names the modules a refusal's message counts (own_tokens)
    try:
        theirs = pricing_model_digest(source)
    except CodeNotJudged as e:
        return f"not judged: {e}", ours
    except (SyntaxError, ValueError, OSError, RuntimeError, InputError, MemoryError) as e:
        # RecursionError is a RuntimeError; ValueError a source that is not UTF-8 or holds a NUL. Code that cannot
        # be read or parsed is not the running package's, which was (round 18: a FIFO or a module that does not
        # parse let `lock` into the checkout through silently).
        return f"not read: {_unread(e)}", ours
    return None if theirs == ours else (theirs, ours)


def _unread(e: BaseException) -> str:
    """Why a checkout's pricing-model code could not be read or parsed, in one line: the module and the problem."""
    from passprice.errors import escaped

    if isinstance(e, SyntaxError):
        where = Path(e.filename).name if e.filename else "a module"
        line = "" if e.lineno is None else f"line {e.lineno}: "
        return escaped(f"src/passprice/{where}: {line}{e.msg}")
    if isinstance(e, RecursionError | MemoryError):
        notes = getattr(e, "__notes__", None) or ["a module"]
        return escaped(f"{notes[-1]}: nested deeper than the parser goes")
    if isinstance(e, InputError):
        return e.lines[0] if e.lines else escaped(str(e))
    return escaped(f"{type(e).__name__}: {e}")


def require_checkout_code(root: Path) -> None:
    """Refuse to write a lock into ``root`` when ``root`` is a checkout of passprice whose code prices with another
    pricing model than the running package (:func:`checkout_model`): the lock would record the running code's
    ``pricing_model`` and prices, which this checkout's own review (``diff``, CI's ``check`` after ``pip install .``
    of this checkout) does not use. The newcomer walkthrough of session 9: after ``pip install .`` (not editable), a
    code change's re-lock advice (``lock --update -o …``) printed "locked …", exit 0, and wrote the same bytes, and
    ``diff`` still failed. A checkout whose code cannot be judged is let through (the warning says so).

    Raises :class:`~passprice.errors.InputError` (exit 2) naming both digests and the fix (``pip install -e .``)."""
    differs = checkout_model(root)
    if differs is None or differs[0].startswith("not judged: "):
        return
    theirs, ours = differs
    if theirs.startswith("not read: "):
        raise InputError(
            f"{root / 'src' / 'passprice'}: this checkout's code cannot be read ({theirs.split(': ', 1)[1]}), so it "
            f"is not the code of the passprice running (pricing model {ours[:19]}…): a lock written now would record "
            "prices this checkout's review does not reproduce; fix the module (and `pip install -e .` here), then "
            "run the same command again"
        )
    raise InputError(
        f"{root / 'src' / 'passprice'}: this checkout's code prices with pricing model {theirs[:19]}…, the "
        f"passprice running with {ours[:19]}… (installed from another copy): a lock written now would record the "
        "running code's prices, which this checkout's review does not use; run `pip install -e .` in this checkout, "
        "then run the same command again"
    )
