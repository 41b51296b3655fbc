"""Bad input is named, not raised as a traceback: every error here says which file, which key or byte offset, and
what was wrong, in one line a person can act on (the command line exits with status 2)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any


def escaped(text: str) -> str:
    """``text`` for one line of a terminal: each character that does not print — a control character (a newline, a
    tab, ESC, DEL, C1), a line or paragraph separator (U+2028, U+2029), a bidi control (U+202A–U+202E,
    U+2066–U+2069), a lone surrogate (a byte of a file name that is not UTF-8) — written as its Python escape
    (``\\n``, ``\\x1b``, ``\\u202e``, ``\\udcff``); every other character, spaces included, as it is. A file name with a
    newline or a right-to-left override can then neither split an error line in two nor reorder it."""
    if text.isprintable():
        return text
    return "".join(c if _prints(c) else repr(c)[1:-1] for c in text)


def _prints(c: str) -> bool:
    """Whether the character ``c`` is shown as it is (:func:`escaped`, :func:`json_escaped`): printable, or a space."""
    return c.isprintable() or c == " "


def json_escaped(text: str) -> str:
    """JSON text ``text`` (``json.dumps`` with ``ensure_ascii=False``) with each character :func:`escaped` would
    escape written as JSON's ``\\uXXXX`` escape (beyond U+FFFF its UTF-16 pair): a bidi control (U+202E), a line
    separator, DEL, a C1 control or a lone surrogate reads back (``json.loads``) as itself, yet can neither reorder
    nor split a terminal's line. ``json.dumps`` escapes the C0 controls itself; the newlines of an indented text,
    outside any string, are kept. Every ``--json`` goes through it (:func:`passprice.tables.json_text`): ``header
    --json`` wrote a ``general.architecture`` holding U+202E raw, where ``check --json`` escapes it (attack63,
    arch44). Cheap on ASCII text (one scan); past it, one regex match a run of characters from a character outside
    ASCII (or DEL) to the next control (the spaces and ASCII between words included), kept whole when it all prints
    (one ``str.isprintable`` call), else written a character at a time: 1 MB of non-ASCII JSON took one callback a
    character, 0.38-0.61 s (left44; ``benchmarks/json_escaped.py``).

    A lone high surrogate followed by a lone low one (two characters, ``"\\ud83d" + "\\ude00"``) is written
    ``\\ud83d\\ude00``, which JSON reads back as one character (U+1F600), not two. Kept, as the standard library does
    it (attack69, session 38's leftover): ``json.dumps(..., ensure_ascii=True)`` writes the same twelve characters,
    and JSON has no other spelling of either string (RFC 8259 section 7: a character past U+FFFF is written as the
    escapes of its UTF-16 pair, so the two texts are one JSON text). No reader of passprice's makes such a pair:
    a file name's undecodable bytes are low surrogates alone (``surrogateescape``: U+DC80-U+DCFF), GGUF strings
    are decoded with ``errors="replace"``, ``tomllib`` refuses a surrogate and ``json.loads`` joins two adjacent
    escapes itself. The text form (:func:`escaped`) tells them apart: ``\\ud83d\\ude00`` against the emoji as it
    is."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _run().sub(_escaped_run, text)


@functools.cache
def _run() -> re.Pattern[str]:
    """A run :func:`json_escaped` looks at: a character outside printable ASCII (DEL, or past U+007E), then
    everything up to the next C0 control (an indented text's newline; ``json.dumps`` escapes those within strings).
    Compiled when first used (issue 16, afresh101): a price's ``--json`` is ASCII and never asks, and compiling it
    at import was 0.5 M instructions of every command."""
    return re.compile("[^\x00-\x7e][^\x00-\x1f]*")


class _Escapes(dict[int, str]):
    """A :meth:`str.translate` table from a code point to what :func:`json_escaped` writes for it (the character
    itself when it prints, else its JSON escape), each entry made when first asked, forgotten all at once past
    :data:`_ESCAPES_KEPT` (a hostile megabyte of distinct code points would hold tens of MB)."""

    def __missing__(self, code: int) -> str:
        if len(self) >= _ESCAPES_KEPT:
            self.clear()
        c = chr(code)
        made = self[code] = c if _prints(c) else _json_escape(c)
        return made


_ESCAPES_KEPT = 1 << 16
_ESCAPES = _Escapes()


def _escaped_run(m: re.Match[str]) -> str:
    """:func:`_run`'s match with each character that does not print written as JSON's ``\\uXXXX`` escape (beyond
    U+FFFF its UTF-16 pair)."""
    run = m.group(0)
    if run.isprintable():
        return run
    # A run that does not print: each character through a table that learns each one it is asked (:class:`_Escapes`),
    # in C after the first of each (a bidi control a word: 0.21 -> 0.05 s a MB, where a callback a character of the
    # run cost as much as the old escaper).
    return run.translate(_ESCAPES)


def _json_escape(c: str) -> str:
    """The JSON escape of the one character ``c``: ``\\u202e``; beyond U+FFFF its UTF-16 surrogate pair."""
    code = ord(c)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def spelled(name: str) -> str:
    """``name`` (a registered name: a card, serving, checkpoint …) for a line a reviewer reads, :func:`escaped`, with
    its code points spelled out after it when it is not ASCII: ``h200_sхm_141gb (spelled 'h200_s\\u0445m_141gb')``.
    A card copied under a name with a Cyrillic ``х`` and a serving pointed at it read ``card: h200_sxm_141gb →
    h200_sxm_141gb`` in the review, a change that prints as none (slip round 30). A name holding a character that
    does not print as well is spelled too: ``escaped`` writes only that one as its escape (``h200_sхm_141gb\u200b``
    showed the Cyrillic ``х`` as it is, attack round 36)."""
    shown = escaped(name)
    if name.isascii() or shown.isascii():  # escaped wrote each character that is not plain: it reads as spelled
        return shown  # (ev\u202eil once read "ev\u202eil (spelled 'ev\u202eil')", session 18's CI)
    return f"{shown} (spelled {name!a})"


#: Characters outside ASCII that a line may show as they are, naming no name: the micro sign of ``µs``.
_PLAIN_SYMBOLS = frozenset("µ")

#: What separates the names a line holds: spaces, and the punctuation around a name in a path or a key
#: (``facts/cards/NAME.toml:``, ``policy.paths."NAME"``).
_BETWEEN_NAMES = r"[\s/\\.:;,()\[\]{}'\"`=<>]+"


#: The most code points of a text :func:`spell` spells out before it counts the rest.
SPELL_MOST = 64


def spell(text: str) -> str:
    """``text``'s code points spelled out (:func:`ascii`: ``'e\\u0308'``), at most :data:`SPELL_MOST` of them, then
    ``…`` and how many it holds: ``'e\\u0308\\u0308…' (3,991 code points)``. Unbounded, a lock's pinned origin of one
    letter and 3,990 combining marks, in NFD beside today's NFC, printed one line of 48,034 characters from
    ``check``, ``reproduce`` and ``price --lock``, and ``check`` one of 28,202 spelling the word (attack round 51).
    Raises nothing."""
    if len(text) <= SPELL_MOST:
        return ascii(text)
    return f"{text[:SPELL_MOST]!a}… ({len(text):,} code points)"


#: The most words of a line :func:`spelled_words` spells; the rest are counted.
MAX_SPELLED = 3


def spelled_words(line: str) -> str:
    """``line`` with each word holding a letter or digit outside ASCII (or a mark over a letter) spelled out after
    it, as :func:`spelled` spells a name: ``… card h200_sхm_141gb … (spelled 'h200_s\\u0445m_141gb')``. A look-alike
    card (a Cyrillic ``х``) read the same as the card it copies in ``check``'s and ``reproduce``'s lines (``serving
    changed: card: h200_sxm_141gb → h200_sxm_141gb``), where the review spells it (slip round 32); so is a word of
    combining marks alone, which prints as nothing. Words of symbols alone (``→``, ``…``, ``⚠️``, ``µs``) are left as
    they are, and so is a name the line spells already; the first :data:`MAX_SPELLED` are spelled, the rest counted; a
    line that is all ASCII is returned as it is."""
    if line.isascii():
        return line
    import unicodedata

    def names(word: str) -> bool:  # a letter or digit outside ASCII, a mark over a letter (e + U+0301), or marks
        # alone: a card named three U+0301 read "card '́́́': not found", the marks drawn over the quotes (attack 38)
        odd = [unicodedata.category(c)[0] for c in word if not c.isascii() and c not in _PLAIN_SYMBOLS]
        alone = len(odd) == len(word) and set(odd) == {"M"}
        return any(k in "LN" for k in odd) or ("M" in odd and (alone or any(c.isalnum() for c in word)))

    import re

    # A name is a run between spaces and punctuation (the card of facts/cards/h200_sхm_141gb.toml); one the line
    # spells already (a lock's error line spelling its floor's path) is not spelled again.
    words = [w for w in dict.fromkeys(w for w in re.split(_BETWEEN_NAMES, line) if w and not w.isascii() and names(w))
             if f"spelled {w!a}" not in line and f"spelled {spell(w)}" not in line]
    # The first MAX_SPELLED, the rest counted: a card not found listed the 100 registered cards of Cyrillic names and
    # spelled each (a 4 KB line; check's 1,000 such runs printed 4 MB, attack round 38).
    more = f" (and {len(words) - MAX_SPELLED:,} more names not ASCII)" if len(words) > MAX_SPELLED else ""
    return line + "".join(f" (spelled {spell(w)})" for w in words[:MAX_SPELLED]) + more


def spelled_lines(text: str) -> str:
    """``text`` with :func:`spelled_words` applied to each of its lines."""
    return "\n".join(spelled_words(line) for line in text.split("\n"))


class InputError(Exception):
    """Input passprice cannot use: a file that does not parse, validate, or exist; a bad option value.

    ``str(error)`` is the message to print: one line per problem, each naming the file and the key path or byte
    offset. The command line prints it on stderr and exits with status 2.

    ``lines``: the problems, one a line. An error of one problem (``InputError(message)``) has one line whatever
    its text holds — a newline in a file name it quotes is data, printed escaped, never a second line; an error of
    several problems is built with :meth:`of`, and its lines are those problems.
    """

    def __init__(self, message: str, *, lines: Sequence[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.lines: tuple[str, ...] = (message,) if lines is None else tuple(lines)

    @classmethod
    def of(cls, problems: Iterable[str]) -> InputError:
        """One error listing ``problems``, one a line (each may hold any character: it stays one line)."""
        lines = tuple(problems)
        return InputError("\n".join(lines), lines=lines)

    def __str__(self) -> str:
        return self.message


class NotFound(InputError):
    """A name or path that names nothing (no such file, no such registered entry): raised by the lookups, so whoever
    read the name from a file (a serving naming its checkpoint) can say which file and key named it."""


class Unreadable(InputError):
    """A file that is there but cannot be read: a folder, FIFO, device or socket where a file belongs, a file this
    user may not open, a folder on the way that may not be searched, a loop of symbolic links, a name too long
    (:func:`passprice.files.open_regular`, :func:`passprice.files.look`). Bad input whoever meets it, never
    :class:`NotFound`: ``reproduce`` of a lock whose checkpoint entry was a folder, a FIFO or mode 000 said the
    checkpoint was "gone" and exited 1 (left39); a record that is really absent stays gone."""


class SchemaError(InputError):
    """A file that does not match its JSON Schema; ``problems`` lists every mismatch, each as
    ``FILE: KEY.PATH: what was wrong`` (all of a file's problems together, not only the first)."""

    #: The parsed document that failed, where the reader that raised it had one (:func:`passprice.schema.load`): a
    #: caller that looks again at the document to word its refusal need not parse the file a second time (a 256 KiB
    #: lock of one array cost 0.3 s of CPU a parse, attack round 61).
    document: dict[str, Any] | None = None

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = [f"{source}: {p}" for p in problems]
        super().__init__("\n".join(lines), lines=lines)


def problem_lines(error: BaseException) -> list[str]:
    """The problems ``error`` states, one a line: an :class:`InputError`'s :attr:`~InputError.lines` (a newline a
    problem quotes stays inside its line), else the lines of its text."""
    if isinstance(error, InputError):
        return list(error.lines)
    return str(error).splitlines()


class Refusals:
    """The refusals of files a process made, each by a key naming the file's path and bytes (never across processes:
    an invalid file is parsed and refused again on every run), so that a file read again in the same process is
    refused again without being parsed and validated again. Bounded by ``most`` refusals and by ``chars``
    characters of their lines in all; the oldest go first.

    Attack 62: with 64 refusals kept, a branch adding 3,700 tiny files under ``locks/`` that are no locks made
    ``diff`` parse and validate each one 8 times (8 readers of a side's locks, each pass evicting the last's
    refusals): 29,650 lock reads, 15.8 s of CPU. One refusal is a few hundred characters (a lock file's problems
    are its lines, under the file's 256 KiB cap): 16,384 refusals is four diff sides at the most files a side may
    hold, and 16 Mi characters bounds what they keep."""

    def __init__(self, most: int = 16_384, chars: int = 16 * 1024 * 1024) -> None:
        self._most = most
        self._budget = chars
        self._chars = 0
        self._kept: dict[Any, tuple[InputError, int]] = {}

    def __bool__(self) -> bool:
        return bool(self._kept)

    def get(self, key: Any) -> InputError | None:
        """The refusal kept under ``key``, or ``None``. Raises nothing."""
        kept = self._kept.get(key)
        return None if kept is None else kept[0]

    def keep(self, key: Any, error: InputError) -> None:
        """Keep ``error`` under ``key``, dropping the oldest refusals past the bounds (``error`` too, alone past
        ``chars``). Raises nothing."""
        size = sum(len(line) for line in error.lines)
        old = self._kept.pop(key, None)
        if old is not None:
            self._chars -= old[1]
        self._kept[key] = (error, size)
        self._chars += size
        while self._kept and (len(self._kept) > self._most or self._chars > self._budget):
            oldest = next(iter(self._kept))
            self._chars -= self._kept.pop(oldest)[1]

    def clear(self) -> None:
        """Forget every refusal (a test's fresh start). Raises nothing."""
        self._kept.clear()
        self._chars = 0
