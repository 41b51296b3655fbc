"""People read tables, programs read JSON: this module only lays out what other modules computed, and never
rounds a figure a program will read (``--json`` output is built elsewhere, from the exact values).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_SMALL = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]


def titled(name: str, title: str) -> str:
    """``NAME — TITLE``: a record's name with its title after a dash, never in parentheses, since a title may hold its
    own (``a40 (Acme X (rev. 2))`` nested them: leftovers 28 for a stack's and a drafting method's title, session 29
    for roofline's card). The one way a line shows a name beside its title. Raises nothing."""
    return f"{name} — {title}"


def si(value: float, unit: str, digits: int = 4) -> str:
    """``value`` with a decimal SI prefix and ``digits`` significant digits: ``si(4.8e12, "B/s")`` → ``4.8 TB/s``,
    ``si(0.00102, "s")`` → ``1.02 ms``. Zero is ``0 unit``; non-finite values print as they are."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}".strip()
    magnitude = abs(value)
    table = _PREFIXES if magnitude >= 1 else _SMALL
    for scale, prefix in table:
        if magnitude >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}".strip()
    scale, prefix = table[-1]
    return f"{value / scale:.{digits}g} {prefix}{unit}".strip()


def _true_to(was: float, now: float, shown_was: float, shown_now: float) -> bool:
    """Whether the rounded pair ``shown_was`` → ``shown_now`` reads as the move ``was`` → ``now``: equal when those
    are, else apart and its relative change within a tenth of the true one."""
    if was == now:
        return True
    if shown_was == shown_now or not was or not shown_was:
        return False
    true, shown = now / was - 1.0, shown_now / shown_was - 1.0
    return abs(shown - true) <= 0.1 * abs(true)


def si_pair(was: float, now: float, unit: str, digits: int = 4) -> tuple[str, str]:
    """``was`` and ``now`` as :func:`si` writes them, with at least ``digits`` significant digits and as many more
    (up to 17) as the pair needs to read as the move it is: ``fixed_s`` 2.70564 → 2.70536 ms (-0.01035 %) was
    written ``2.706 ms → 2.705 ms``, a move of -0.037 % to a reader checking it by hand, and is ``2.7056 ms → 2.7054
    ms`` (walkthrough 56). Equal figures keep ``digits``. Raises nothing."""
    if math.isfinite(was) and math.isfinite(now):
        while digits < 17 and not _true_to(was, now, float(f"{was:.{digits}g}"), float(f"{now:.{digits}g}")):
            digits += 1
    return si(was, unit, digits), si(now, unit, digits)


def decimals_pair(was: float, now: float, decimals: int = 1) -> tuple[str, str]:
    """``was`` and ``now`` with thousands separators and at least ``decimals`` decimals, and as many more (up to 17)
    as the pair needs to read as the move it is (:func:`si_pair`'s rule): an expected price 237.4479 → 237.4555
    tokens/s (+0.003218 %) read ``237.4 → 237.5`` and reads ``237.448 → 237.456`` (walkthrough 56). Raises
    nothing."""
    if math.isfinite(was) and math.isfinite(now):
        while decimals < 17 and not _true_to(was, now, round(was, decimals), round(now, decimals)):
            decimals += 1
    return f"{was:,.{decimals}f}", f"{now:,.{decimals}f}"


def count(value: float) -> str:
    """An integer-valued count with thousands separators; else, from 100,000 up, rounded to a whole count with
    separators (``2,826,380``, never ``2.82638e+06``); else ``value`` to 6 significant digits (``33,339.2``)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    if math.isfinite(value) and abs(value) >= 1e5:
        return f"{value:,.0f}"
    return f"{value:,.6g}"


def byte_figure(value: float) -> str:
    """A figure of bytes as a line of text writes it: from one byte up, whole bytes with thousands separators
    (``15,625,109,504``), as refusals always wrote them; below one byte, 4 significant digits (``1e-09``, ``0.5``),
    never rounded to ``0``: ``NotResident`` said a card whose ``memory.capacity`` is 1e-9 B "holds 0" (issue 13's
    leftovers, session 34). ``0`` is ``0``; a value that is not finite is written as it is (``inf``). The one way a
    refusal writes bytes (:class:`passprice.serving.NotResident`, ``OnChipOverflow``, a stack's or lock's reserve
    past the card's memory). Raises nothing."""
    if not math.isfinite(value):
        return f"{value:g}"
    if value == 0 or abs(value) >= 1:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def printable(text: str) -> str:
    """``text`` for a terminal: as it is when every character prints, else its Python ``repr`` — quoted, with each
    control character (a NUL, a newline, ESC, DEL, C1), line or paragraph separator (U+2028, U+2029) and bidi control
    (U+202A–U+202E, U+2066–U+2069) written as an escape — so a header's strings can neither hide in nor rewrite the
    output around them."""
    return text if text.isprintable() else repr(text)


#: The most characters a table cell taken from a header's string shows (:func:`cut`).
CELL_CHARS = 40


def cut(text: str, limit: int = CELL_CHARS) -> str:
    """``text`` (:func:`printable`) for a table cell, cut to its ends and its length when longer than ``limit``
    characters: one checkpoint whose ``general.architecture`` held 10,000 characters padded every row of
    ``checkpoints`` to 10,094 characters (attack64). Raises nothing."""
    shown = printable(text)
    if len(shown) <= limit:
        return shown
    half = (limit - 1) // 2
    return f"{shown[:half]}…{shown[-half:]} ({len(text):,} characters)"


def percent(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` (``–`` when ``whole`` is 0)."""
    return "–" if whole == 0 else f"{100.0 * part / whole:.1f} %"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A plain-text table: columns padded to their widest cell, the columns in ``right`` right-aligned, a rule under
    the header. Each cell is shown, never obeyed (:func:`passprice.errors.escaped`): a registry name is a file name,
    and one holding a newline, ESC or U+202E split a row of ``cards`` in two, coloured or reordered it."""
    from passprice.errors import escaped

    rows = [[escaped(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


#: The ASCII punctuation that opens Markdown inline markup (emphasis, links, images, code spans, strikethrough) or
#: escapes it: each is written with a backslash in free text (CommonMark lets any ASCII punctuation be escaped). An
#: underscore between two letters or digits (``memory_s``, ``Azure_Results``) opens no emphasis and stays as it is.
@functools.cache
def _markup() -> re.Pattern[str]:
    """What markdown would read as markup (compiled on first use)."""
    return re.compile(r"[\\`*\[\]~$]|(?<![^\W_])_|_(?![^\W_])")  # "$": GitHub's math ($x$, $$x$$)


def _one_line(text: str) -> str:
    """``text`` on one line: a line break as a space, any other character that does not print as U+FFFD — a control
    character (C0, DEL, C1), U+2028/U+2029, a bidi control (U+202A–U+202E, U+2066–U+2069: a card file
    ``ev\u202eil.toml`` added in a pull request reordered its line of the review comment), a lone surrogate."""
    out = text.replace("\r\n", " ").replace("\n", " ")
    if out.isprintable():
        return out
    return "".join(ch if ch.isprintable() or ch == " " else "\ufffd" for ch in out)


def markdown_text(text: str) -> str:
    """Free text (a cite, a locator, a note, an error line) for a Markdown page, shown as written and never as
    markup: ``&``, ``<`` and ``>`` as entities (no raw HTML reaches the page), the punctuation that opens emphasis,
    a link, an image, a code span, a strikethrough or GitHub's math (``\\ ` * _ [ ] ~ $``) escaped with a
    backslash, control characters as U+FFFD, a line break as a space. A bare address stays text (GitHub may link
    it, showing where it goes). An ``@`` is followed by a zero-width space (``&#8203;``, as Renovate writes it), so
    a name in a cite or a locator (``@octocat``) is shown but never mentions, and so notifies, anyone from a pull
    request's comment (attacker round 16)."""
    out = _markup().sub(lambda m: "\\" + m.group(0), _one_line(text))
    return out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "@&#8203;")


#: What may follow the backtick that closes a quoted passprice command: the end, a space, or ``,;:.)``.
_CLOSES = ",;:.)"


def _commands(shown: str) -> Iterator[tuple[int, int]]:
    """The passprice commands the one-line ``shown`` quotes, as (start, end) of each backtick span: a backtick,
    ``passprice`` (then a space and its words, or nothing), a backtick followed by the end, a space or punctuation
    that closes a clause (``,;:.)``); a backtick within the words followed by anything else (a shell-quoted name
    holding one, ``'a`b'``) stays in them, and one followed by a backtick ends no span (the span is not a command).

    One pass over ``shown``: each backtick is looked at once. The regular expression this replaces scanned to the
    end again from every quoted passprice that did not close: 112,000 characters of a quoted "passprice a", a
    backtick and "b", over and over, took 13 s of CPU (attack round 40); the spans are the same."""
    at = 0
    while (start := shown.find("`passprice", at)) >= 0:
        i = start + len("`passprice")
        if i < len(shown) and shown[i] not in " `":  # `passpricex: no command; a later one may start inside
            at = start + 1
            continue
        while True:
            tick = shown.find("`", i)
            if tick < 0:  # no closing backtick: nor for any later start
                return
            after = shown[tick + 1:tick + 2]
            if not after or after.isspace() or after in _CLOSES:
                yield start, tick + 1
                at = tick + 1
                break
            if after == "`" or tick == start + len("`passprice"):  # "``", or "`passprice`x": not a command, but
                at = tick  # another may start at this backtick ("`passprice`passprice` …")
                break
            i = tick + 1


def markdown_prose(text: str) -> str:
    """A line passprice wrote (a ``check`` problem or warning, a refusal) for a Markdown page: the passprice
    commands it quotes in backticks (``review the re-fit with `passprice calibrate --stack S --dry-run```) as code
    spans (:func:`markdown_code`), everything else as free text (:func:`markdown_text`). The command's words may
    hold names read from files: inside a code span nothing is markup, HTML and mentions included, so a name is
    shown as written either way (free text escaped whole showed ``\\`passprice calibrate …\\``` with its backslashes,
    leftovers round 20). A backtick span not starting with ``passprice`` stays escaped text."""
    shown = _one_line(text)
    out, at = [], 0
    for start, end in _commands(shown):
        out += [markdown_text(shown[at:start]), markdown_code(shown[start + 1:end - 1])]
        at = end
    out.append(markdown_text(shown[at:]))
    return "".join(out)


def markdown_code(text: str) -> str:
    """``text`` (a file name, a fact path, a lock name, anything read from a file) as a Markdown code span that
    shows it as written whatever it holds: fenced by one backtick more than its longest run of backticks, padded
    with a space inside when it starts or ends with a backtick (CommonMark strips one), on one line (control
    characters as U+FFFD). Inside a code span nothing is markup, HTML included."""
    shown = _one_line(text)
    longest = max((len(run) for run in re.findall("`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A GitHub-flavoured Markdown table; the columns in ``right`` right-aligned. Every cell is kept on its row
    whatever its caller made of it: ``|`` escaped, a line break as a space and any other character that does not
    print as U+FFFD (:func:`_one_line`, as :func:`markdown_text` and :func:`markdown_code` do): a cell built without
    them (a figure, a provenance, a change) holding a carriage return or a vertical tab would end its row."""

    def esc(cell: str) -> str:
        return _one_line(cell).replace("|", "\\|")

    align = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(esc(h) for h in headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


#: Keys of a ``--json`` document (at any depth) that count bytes or tokens without a ``_bytes`` suffix: a price's
#: ``on_chip_capacity`` (bytes), ``tokens`` (the token-rows routed a pass), ``bytes``; a refusal's ``needed`` and
#: ``capacity`` (``NotResident``, ``OnChipOverflow``); ``kv``'s ``held_shared``, ``held_per_sequence``, its
#: ``held_once`` split (``weights``, ``embedding_table``, ``draft_weights_not_held``), ``state_per_layer``,
#: ``ring_per_layer``, ``per_token_total``, ``draft_per_token``, ``bytes_per_position`` and ``per_token`` (a count
#: by layer kind), ``kv_bytes_per_element`` and ``state_bytes_per_element`` (2, as a serving's ``kv_bytes``; 0.5625
#: for Q4_0 stays a float); ``roofline``'s ``bytes_moved``. Not counts, and left as they are: rates (``rate``,
#: ``bandwidth``), means (``mean_sequences``, ``emitted_per_pass``).
_COUNT_KEYS = frozenset((
    "on_chip_capacity", "tokens", "bytes", "needed", "capacity", "held_shared", "held_per_sequence",
    "last_held_per_sequence", "weights", "embedding_table", "draft_weights_not_held", "state_per_layer",
    "ring_per_layer", "per_token", "per_token_total", "draft_per_token", "bytes_per_position", "bytes_moved",
    "kv_bytes_per_element", "state_bytes_per_element",
))

#: Keys whose value is a file's own figures, typed as the file types them (a GGUF header's ``metadata``: an F32
#: value stays a float whatever its key), which :func:`whole_counts` leaves as they are.
_AS_READ_KEYS = frozenset(("metadata",))


def whole_counts(data: Any) -> Any:
    """``data`` (any command's ``--json`` document, a refusal's payload) with each float under a key that counts
    bytes or tokens (``*_bytes``, ``*_tokens``, and :data:`_COUNT_KEYS`: ``bytes``, ``on_chip_capacity``,
    ``tokens``, ``kv``'s ``held_per_sequence`` …; each value of a count key's object, ``kv``'s ``per_token`` by
    layer kind) written as an ``int`` when it is a whole number below 2^53 (a float holds each such integer
    exactly): ``held_bytes`` 4912001024, not 4912001024.0 (leftovers round 21); ``kv``'s ``total_bytes``, ``simulate``'s
    ``peak_held_bytes`` and ``roofline``'s ``bytes_moved`` too (left53: they printed 20447232.0). A count that is
    not whole (the expected bytes a mixture of experts reads) stays a float, and no number changes
    (``int(v) == v``). A header's ``metadata`` (:data:`_AS_READ_KEYS`) is left as the file types it. Every
    ``--json`` document goes through it (:func:`json_text`, the refusal payload, ``simulate``'s); ``sweep`` writes
    its rows' counts its own way, column by column (:func:`passprice.sweep.whole`). Locks record the price object
    as made (:func:`passprice.report.cost_json`), floats and all: rewriting them would change every lock. Raises
    nothing."""
    if isinstance(data, dict):
        return {k: data[k] if k in _AS_READ_KEYS else _whole_count(v) if _counts(k) else whole_counts(v)
                for k, v in data.items()}
    if isinstance(data, list):
        return [whole_counts(v) for v in data]
    return data


def _counts(key: object) -> bool:
    return isinstance(key, str) and (key.endswith(("_bytes", "_tokens")) or key in _COUNT_KEYS)


def _whole_count(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):  # counts by kind (kv's per_token): each value is one
        return {k: _whole_count(v) for k, v in value.items()}
    return whole_counts(value) if isinstance(value, list) else value


def nested_json_text(data: Any, level: int) -> str:
    """``data`` as :func:`json_text` writes it with ``indent=2`` when it sits ``level`` levels deep in a larger
    document (every line after the first indented by ``2 * level`` more spaces): one element of a listing streamed
    element by element (``cards --json``: 10,000 cards' 265 MB of text were one string, 1.7 GB of memory), the
    same bytes ``json_text`` gives for the whole document. Written by one recursive walk (``json.dumps`` with an
    indent runs its pure-Python generators: 7 s for 10,000 cards here, about a third of that this way); a value
    the walk does not know (a key that is not a string, a type beyond dict, list, tuple, str, int, float, bool and
    ``None``) falls back to ``json.dumps``.

    Raises :class:`ValueError` for a float that is not finite (JSON cannot carry it: the caller names its key path,
    :func:`passprice.report.require_finite`)."""
    from json.encoder import encode_basestring  # the C encoder's, as json.dumps(ensure_ascii=False) uses

    parts: list[str] = []
    try:
        texts: dict[type, Callable[[Any], str]] = {
            str: encode_basestring, float: _float_text, int: int.__repr__, bool: _bool_text, type(None): _null_text,
        }
        _walk(data, parts, "\n" + "  " * level, texts)
        text = "".join(parts)
    except TypeError:
        import json

        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + "  " * level)
    return _escaped(text)


def _walk(value: Any, parts: list[str], newline: str, texts: dict[type, Callable[[Any], str]]) -> None:
    scalar = texts.get(type(value))
    if scalar is not None:
        parts.append(scalar(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + "  "
        opening = "{" + inner
        encode = texts[str]
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(key)
            parts.append(opening)
            parts.append(encode(key))
            text = texts.get(type(item))  # a leaf written here: most values are, one call each saved
            if text is not None:
                parts.append(": " + text(item))
            else:
                parts.append(": ")
                _walk(item, parts, inner, texts)
            opening = "," + inner
        parts.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            parts.append("[]")
            return
        inner = newline + "  "
        opening = "[" + inner
        for item in value:
            parts.append(opening)
            _walk(item, parts, inner, texts)
            opening = "," + inner
        parts.append(newline + "]")
    elif isinstance(value, str):  # a subclass (an enum's str, int or float), written as json.dumps writes it
        parts.append(texts[str](value))
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float_text(value))
    else:
        raise TypeError(value)


def _float_text(value: float) -> str:
    if value != value or value in (math.inf, -math.inf):
        raise ValueError(f"{value!r} is not finite")
    return float.__repr__(value)


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


def _null_text(value: None) -> str:
    return "null"


def _escaped(text: str) -> str:
    """``text`` with each character that does not print (a lone surrogate, U+202E, U+2028, DEL, C1 …) written as its
    ``\\uXXXX`` escape (:func:`passprice.errors.json_escaped`, :func:`json_text`)."""
    from passprice.errors import json_escaped

    return json_escaped(text)


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` as JSON text for output (``json.dumps``, non-ASCII characters as they are), each character that does
    not print written as its ``\\uXXXX`` escape (:func:`passprice.errors.json_escaped`): a lone surrogate (a file
    name byte that is not UTF-8, kept by ``os.fsdecode`` as a surrogate) cannot be written as UTF-8, and escaped it
    reads back (``json.loads``, then ``os.fsencode``) as the very byte; a U+202E (a header's architecture, arch44)
    reads back as itself and reorders no line of the terminal. Always JSON (RFC 8259, which has no infinity and no
    NaN): a number that is not finite is written ``null`` (:func:`finite_or_null`), as ``--json`` writes every
    figure there is none of (a batch that never reaches memory, a relative change from 0). A priced result never
    holds one here: ``--json`` refuses it first, naming its key (:func:`passprice.report.require_finite`, exit 2).
    Left59: ``json.dumps`` wrote ``Infinity`` and ``NaN``, tokens a strict parser refuses. Each whole count of bytes
    or tokens is written as an integer (:func:`whole_counts`), here, where every ``--json`` document is written
    (``cli.app._echo_json``, ``diff --json``, ``audit --json``'s lineage): walk95, ``diff --json`` wrote a lock's
    ``"held_bytes": 61153984512.0`` where ``price --json`` wrote 61153984512."""
    import json

    data = whole_counts(data)
    try:
        text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a number that is not finite (walked only then)
        text = json.dumps(finite_or_null(data), indent=indent, ensure_ascii=False, allow_nan=False)
    return _escaped(text)


def finite_or_null(data: Any) -> Any:
    """``data`` (JSON-able: dicts, lists, tuples, scalars) with each float that is not finite (``inf``, ``-inf``,
    ``nan``) replaced by ``None``, JSON's ``null`` (:func:`json_text`); a dict's key that is such a float by the
    string ``json.dumps`` wrote for it (``"Infinity"``, ``"-Infinity"``, ``"NaN"``: a key is a string in JSON, and
    ``None`` would be ``"null"``, another key's text; attack87: such a key raised ``ValueError``); a list for a
    tuple; anything else as it is. Raises nothing."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {_key_text(key): finite_or_null(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [finite_or_null(value) for value in data]
    return data


def _key_text(key: Any) -> Any:
    """A dict key for :func:`finite_or_null`: a float that is not finite as the text ``json.dumps`` gives it
    (``Infinity``, ``-Infinity``, ``NaN``), anything else as it is."""
    if isinstance(key, float) and not math.isfinite(key):
        return "NaN" if key != key else "Infinity" if key > 0 else "-Infinity"
    return key
