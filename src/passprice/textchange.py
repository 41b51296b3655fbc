"""A changed text is shown by what changed in it: a reviewer of a 400-character derivation whose one run moved
(``… p1-o128 = 100.02 …`` → ``… p1-o128 = 90.02 …``) is shown that run's figure in its words around it, not both
texts whole (a stack's re-fit printed 13 facts' derivations twice over, 800 characters each, for one figure)."""

from __future__ import annotations

import difflib
import re
import unicodedata

#: Texts this long or shorter are shown whole, old → new.
WHOLE = 100
#: Words of unchanged text kept on each side of a changed span.
CONTEXT = 4
#: More changed spans than this are counted, not shown.
SPANS = 4
#: Texts of more tokens than this together are compared by their common start and end alone (one span):
#: ``SequenceMatcher`` is quadratic at worst (two 10,000-token texts of two repeated words took 19 s), and a note is
#: at most 4,000 characters, a derivation's text a few hundred.
MATCHED = 2000

#: Tokens: words (a number keeps its decimal point), runs of spaces, and each other character on its own, so a
#: figure followed by ``),`` is one token and its punctuation others.
_TOKENS = re.compile(r"\w[\w.]*\w|\w|\s+|[^\w\s]")
#: A word longer than this is compared character by character: a script written without spaces (Chinese, Japanese,
#: Thai) is one word to ``\w``, and a note of 4,000 such characters with one of them changed was shown whole, twice
#: (attack round 33).
LONG_WORD = 40
#: The most characters of unchanged text kept on each side of a changed span (cut at a character, after
#: :data:`CONTEXT` words): a text without spaces kept 2,000 characters around one changed one.
CONTEXT_CHARS = 60


def normalisation_only(old: str, new: str) -> str | None:
    """What to say of two texts that differ only in their Unicode normalisation (``Café`` with ``é`` as U+00E9, NFC,
    and as ``e`` + U+0301, NFD: other code points, the same text printed): ``the same text in another Unicode
    normalisation, NFD → NFC: it prints the same``; ``None`` when they are equal or differ otherwise
    (:func:`unicodedata.normalize`). A lock's pinned ``checkpoint.origin`` re-digested in NFD under an entry in NFC
    was said relabelled as ``Zo[ë Café Ångströ → ë Café Ångströ]m`` by ``price --lock`` and ``reproduce``: a change
    that prints as none (attack round 49). Raises nothing."""
    if old == new or unicodedata.normalize("NFC", old) != unicodedata.normalize("NFC", new):
        return None

    def form(text: str) -> str:
        return "NFC" if unicodedata.is_normalized("NFC", text) else (
            "NFD" if unicodedata.is_normalized("NFD", text) else "neither NFC nor NFD")

    return f"the same text in another Unicode normalisation, {form(old)} → {form(new)}: it prints the same"


def _tokens(text: str) -> list[str]:
    """``text``'s tokens (:data:`_TOKENS`): a combining mark (an accent written as its own code point, ``e`` +
    U+0301) kept with the character before it, never a token alone (``cafe[́ → ̀]`` put the accent on a bracket,
    attack round 33), and a word past :data:`LONG_WORD` characters split into its characters (so kept). A token's
    pieces are joined once, at the end: added one by one to a text, 200,000 combining marks on one letter (400 KB)
    took 2.1 s, quadratic (attack round 37)."""
    out: list[list[str]] = []
    for token in _TOKENS.findall(text):
        if out and unicodedata.combining(token[0]) and not out[-1][-1][-1:].isspace():
            out[-1].append(token)
        elif len(token) > LONG_WORD and not token[0].isspace():
            for char in token:
                if out and unicodedata.combining(char):
                    out[-1].append(char)
                else:
                    out.append([char])
        else:
            out.append([token])
    return ["".join(pieces) for pieces in out]


def _cut_start(text: str) -> str:
    """The last :data:`CONTEXT_CHARS` characters of ``text`` after ``…`` when it holds more (not starting on a
    combining mark)."""
    if len(text) <= CONTEXT_CHARS:
        return text
    at = len(text) - CONTEXT_CHARS
    while at < len(text) and unicodedata.combining(text[at]):
        at += 1
    space = text.find(" ", at - 1, len(text) - 1)  # cut at a space where one is: ``100.02`` cut read ``0.02``
    return "…" + (text[space + 1:] if space >= 0 else text[at:])


def _cut_end(text: str) -> str:
    """The first :data:`CONTEXT_CHARS` characters of ``text`` before ``…`` when it holds more (with any combining
    marks on the last)."""
    if len(text) <= CONTEXT_CHARS:
        return text
    at = CONTEXT_CHARS
    while at < len(text) and unicodedata.combining(text[at]):
        at += 1
    space = text.rfind(" ", 1, at + 1)  # cut at a space where one is: ``100.02`` cut read ``100.0``
    return (text[:space] if space > 0 else text[:at]) + "…"


def cut_at_word(text: str, limit: int) -> str:
    """``text`` when at most ``limit`` characters, else its first ``limit`` cut back to the last space (or after the
    last ``,`` or ``;``) with ``…``; a text with no space in its first ``limit`` characters is cut at ``limit``.
    Raises nothing."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 1, limit + 1)
    return (text[:space] if space > 0 else text[:limit]).rstrip(" ,;:") + "…"


#: The characters a number or a name runs on from, as a regular expression's class body (between ``[`` and ``]``):
#: a letter, ``_``, a digit, ``.`` and ``,``. :data:`NUMBER` starts after none of them, and the review's setting
#: names start after none of them either (:data:`passprice.review.changes._no_start`, which adds ``=``). Left56: diff
#: wrote the class out again by hand.
RUNS_INTO = r"A-Za-z_\d.,"

#: A number's digits, the one place they are written: digits, thousands commas and a decimal part (``154.55``,
#: ``1,979``), before any power of ten. :data:`NUMBER`, :data:`QUOTED` and :data:`POWERED` are built on them. Left59:
#: addedfacts' ranges, bounds, percentages, parts of a whole and powers of ten each wrote their own
#: (``\d+(?:\.\d+)?``; ``\d{1,3}(?:,\d{3})+`` for a part), so ``1,000-2,000`` was no range and ``4,800 x 10^9 B/s``
#: read ``9 B/s``.
DIGITS = r"\d[\d,]*(?:\.\d+)?"
#: Where no name or other number runs into a number (``pp512`` and ``b2824`` are names; the ``400`` of ``1e-400`` is
#: a power's): the look-behinds of every pattern below.
_FREE = rf"(?<![{RUNS_INTO}])(?<!\d[eE][+-])"

#: A number as a locator writes it, the one pattern every reader of a locator's figures uses (the review's quoted
#: figures, :func:`passprice.review.changes._quoted_figures`; the quote a cut keeps, :func:`cut_keeping_figure` and
#: :func:`passprice.review.quotes._cut_keeping`): digits, thousands commas, a decimal part and a power of ten
#: (``154.55``, ``1,979``, ``4.8e12``, ``1e-400``), where no name or other number runs into it (``pp512`` and ``b2824``
#: are names; the ``400`` of ``x1e-400`` is a power's, the number glued to a name). Its amount is :func:`figure_read`'s.
#: Left52: the two cuts had patterns of their own, each without the power of ten, which read ``1e-400`` as the figures 1
#: and 400 (``x1e-400`` as 400 alone in one of them) and ``2e3`` as 2.
NUMBER = rf"{_FREE}{DIGITS}(?:[eE][+-]?\d+(?![\d.]))?"
_NUMBER = re.compile(NUMBER)
#: A number a phrase quotes bare, as a range's ends (``85-90%``), a bound (``over 75%``), a percentage or a part of a
#: whole (``58/128``) write it: :data:`DIGITS` where no name or number runs into them, not ending on a comma
#: (``85-90, then`` quotes ``90``), with no power of ten (their readers see a text whose powers are written out,
#: :func:`passprice.addedfacts._plain`). Its amount is :func:`figure_read`'s.
QUOTED = rf"{_FREE}{DIGITS}(?<!,)"
#: A number written with a power of ten, ``e`` or ``x 10^`` (``4.8e12``, ``4.8E+12``, ``4.8 x 10^12``, ``4,800 ×
#: 10^9``): its digits in the first group (:data:`DIGITS`, where no name or number runs into them), the exponent in
#: the second (``e``) or the third (``x 10^``), of any length (as :data:`NUMBER`'s), where no word character or point
#: follows. Left59: addedfacts' own (``_EXPONENT``: no thousands comma, 1 to 3 digits of power, after no letter of any
#: script) read ``1 x 10^4000 GB/s`` as ``4000 GB/s``, ``4,800 x 10^9 B/s`` as ``9 B/s`` and ``带宽4.8 x 10^12 B/s``
#: as ``12 B/s``: the power's digits, read as :data:`NUMBER` reads them.
POWERED = rf"{_FREE}({DIGITS})(?:[eE]([+-]?\d+)|\s?[x×]\s?10\^([+-]?\d+))(?![\w.])"
#: A count written after ``x`` or ``×`` and glued to it (``a x16 PCIe Gen 5 link``), in the first group: quoted,
#: though :data:`NUMBER` reads ``x16`` as a name. The ``x`` is no word's letter (no word character or point before
#: it: ``max16``, ``0x16``); a comma before it is a list's (``x2,x3`` quotes 2 and 3), not a thousands separator.
TIMES_COUNT = r"(?<![\w.])[x×](\d+)\b"


def figure_read(written: str) -> float | None:
    """The amount a number written in digits (``1,024``, ``4.8``, ``1e-300``: :data:`NUMBER`) is, or ``None`` where a
    float cannot hold it: infinite (``1e+999``), read as 0 though a digit of its own is not 0 (``1e-400``,
    ``5e-325``), or below the least normal float, its digits lost (``5e-324`` reads 4.94065645841247e-324, a tenth of
    it 0). Left50: ``1e-400 GB/s`` in a locator was read as ``0 GB/s`` and compared with the fact's value as 0
    (attack69's ``1e+999`` as its digits 999); a number past a float is now one passprice cannot read, as a unit it
    does not read is (:func:`passprice.addedfacts.unreadable` lists it). Raises nothing."""
    import math
    import sys

    try:
        amount = float(written.replace(",", ""))
    except ValueError:
        return None
    if not math.isfinite(amount):
        return None
    if amount == 0:
        return None if any(c in "123456789" for c in re.split("[eE]", written, maxsplit=1)[0]) else amount
    return amount if abs(amount) >= sys.float_info.min else None


def cut_keeping_figure(text: str, limit: int, figure: float) -> str:
    """``text`` (a locator) cut as :func:`cut_at_word` cuts it, except that the quoted span holding ``figure`` (the
    text between the nearest ``'`` or ``"`` before a number equal to it and the same mark after) is kept whole: the
    text before the quote cut at a word to ``limit`` characters, the quote whole, anything after it ``…``. Left46: a
    stack lock's ``runs`` line cut ``… row '| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA…`` at
    100 characters, before the ``154.55 ± 0.80`` the reviewer checks. So the result may pass ``limit`` by the quote's
    length: the quote is what the reviewer searches the source for, whitespace included, and the text before it
    names where to search (a notebook), so neither is shortened into something not found. A text with no such quote
    is cut as :func:`cut_at_word` cuts it. Raises nothing."""
    if len(text) <= limit:
        return text
    import bisect

    # each mark's offsets, found once: a search from every number (str.rfind back to the text's start) cost time
    # growing as the square of the text (attack74: 240,000 numbers equal to the figure in a 1 MB locator, 9.6 s)
    marks = [[found.start() for found in re.finditer(re.escape(mark), text)] for mark in "'\""]
    for number in _NUMBER.finditer(text):
        if figure_read(number.group()) != figure:
            continue
        spans = []
        for at in marks:
            before, after = bisect.bisect_left(at, number.start()), bisect.bisect_left(at, number.end())
            if before and after < len(at):
                spans.append((at[before - 1], at[after]))
        if not spans:
            continue
        start, end = max(spans)  # the nearest opening mark
        head, quote, tail = text[:start], text[start:end + 1], text[end + 1:]
        cut = cut_at_word(head, limit)
        joined = cut + (" " if cut != head and cut.endswith("…") else "") + quote
        return joined + ("…" if tail.strip() else tail)
    return cut_at_word(text, limit)


def text_change(old: str, new: str) -> str:
    """``old → new`` for people: both whole when either is at most :data:`WHOLE` characters or they share little;
    otherwise each changed span in square brackets (``[old → new]``, ``[+ added]``, ``[- removed]``) with up to
    :data:`CONTEXT` words of unchanged text on each side and ``…`` for what is left out, at most :data:`SPANS` spans
    (then ``and N more changes``). Tokens are words, runs of spaces and single other characters, compared by
    ``difflib.SequenceMatcher`` (Ratcliff–Obershelp matching, Python's standard library), so the result is a function
    of the two texts alone. Equal texts give ``unchanged``. Raises nothing."""
    if old == new:
        return "unchanged"
    note = normalisation_only(old, new)
    if note is not None:
        return _spelled_change(old, new, note)
    if len(old) <= WHOLE or len(new) <= WHOLE:
        return f"{old} → {new}"
    a, b = _tokens(old), _tokens(new)
    ops: list[tuple[str, int, int, int, int]]
    ends = _ends(a, b)
    if ends is not None and all(op[2] - op[1] <= CONTEXT and op[4] - op[3] <= CONTEXT
                                for op in ends if op[0] != "equal"):
        # One short change between a common start and end (a figure, a character): said at once, in linear time.
        # SequenceMatcher on 999 characters of one kind (a text without spaces, compared character by character)
        # took 110 ms to say the same.
        ops = ends
    elif len(a) + len(b) > MATCHED:
        ends = _ends(a, b)  # one span between the common start and end: linear in the texts
        if ends is None:
            return f"{old} → {new}"
        ops = ends
    else:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        # Mostly rewritten: the spans would say less than the texts. The two bounds of the ratio from above
        # (lengths alone, then the tokens as multisets) are linear and decide most rewrites without the quadratic
        # matching: a note of 3,900 characters replacing one of 120 took 40 ms (207 such facts 8.4 s of a review).
        if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5 or matcher.ratio() < 0.5:
            return f"{old} → {new}"
        ops = [(str(tag), i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    spans = sum(1 for op in ops if op[0] != "equal")
    out: list[str] = []
    shown = 0
    for i, (tag, a0, a1, b0, b1) in enumerate(ops):
        if tag == "equal":
            out.append(_kept(a[a0:a1], first=i == 0, last=i == len(ops) - 1 or shown == SPANS))
            continue
        shown += 1
        if shown > SPANS:
            break
        was, now = "".join(a[a0:a1]), "".join(b[b0:b1])
        body = f"[{_shown(was)} → {_shown(now)}]" if tag == "replace" else (
            f"[+ {_shown(now)}]" if tag == "insert" else f"[- {_shown(was)}]"
        )
        text = was or now
        lead = " " if text[:1].isspace() and out and not out[-1][-1:].isspace() else ""
        trail = " " if text[-1:].isspace() and not (was[-1:].isspace() and now[-1:].isspace()) else ""
        out.append(lead + body + trail)
    text = "".join(out)
    more = spans - SPANS
    if more <= 0:
        return text
    # What is left out is marked where the shown text stops, at a word: the unchanged run before the first change
    # left out read ``…experts for 90% coverage,  and 4 more changes`` (its trailing space, then ours; walkthrough 49).
    text = text.rstrip(" ,;:")
    return (text if text.endswith("…") else text + " …") + f" and {more} more change{'s' if more != 1 else ''}"


def _spelled_change(old: str, new: str, note: str) -> str:
    """The one span where ``old`` and ``new``, texts that differ only in their Unicode normalisation, differ: from
    the letter the marks sit on to the end of its marks, each side's code points spelled (:func:`ascii`), up to
    :data:`CONTEXT_CHARS` characters of unchanged text either side, then ``note`` (:func:`normalisation_only`):
    ``…Zo['\\xeb' → 'e\\u0308']m… (the same text in another Unicode normalisation, NFC → NFD: it prints the same)``.
    Written whole, ``Zoë → Zoë`` read as no change at all (attack round 49). Each side is spelled to
    :data:`passprice.errors.SPELL_MOST` code points (:func:`passprice.errors.spell`). Raises nothing."""
    from passprice.errors import spell

    n = min(len(old), len(new))
    a = next((i for i in range(n) if old[i] != new[i]), n)
    b = next((i for i in range(n - a) if old[-1 - i] != new[-1 - i]), n - a)
    while a > 0 and any(a < len(t) and unicodedata.combining(t[a]) for t in (old, new)):
        a -= 1
    while b > 0 and unicodedata.combining(old[len(old) - b]):
        b -= 1
    was, now = old[a:len(old) - b], new[a:len(new) - b]
    return f"{_cut_start(old[:a])}[{spell(was)} → {spell(now)}]{_cut_end(old[len(old) - b:])} ({note})"


def _shown(span: str) -> str:
    """A changed span as shown in its brackets: without its spaces at either end, or, when it is only spaces (two
    spaces for one, a no-break space for a space), written as a Python string (``'\\xa0'``): a change of spacing
    alone read ``[ → ]`` or ``[+ ]`` (attack round 32)."""
    return span.strip() or repr(span)


def _ends(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]] | None:
    """The opcodes (as ``SequenceMatcher.get_opcodes``) of one changed span between the tokens ``a`` and ``b`` have
    in common at their start and at their end, or ``None`` when that shares less than half of the longer."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    if 2 * (start + end) < max(len(a), len(b)):
        return None
    tag = "replace" if len(a) - end > start and len(b) - end > start else (
        "insert" if len(b) - end > start else "delete"
    )
    ops = [("equal", 0, start, 0, start)] if start else []
    ops.append((tag, start, len(a) - end, start, len(b) - end))
    if end:
        ops.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return ops


def _kept(tokens: list[str], first: bool, last: bool) -> str:
    """Unchanged ``tokens`` between changed spans: whole when at most ``2 * CONTEXT + 1`` words (cut only at
    spaces), else its first and last ``CONTEXT + 1`` words around `` … ``; only its last words before the first span
    (``first``) and its first after the last (``last``), with ``…`` where words are left out; each side at most
    :data:`CONTEXT_CHARS` characters (a text without spaces is cut at a character). The spaces at its edges are
    kept but counted as no word. A run of spaces shows as one (the texts compared keep theirs): a padded table row's
    context read ``…    | [100.02 → 90.02]                | 76.55   | …``, mostly padding, and now reads
    ``…| 1 | 128 | [100.02 → 90.02] | 76.55 | 0.011 | …``, the figure's neighbours in the row (cite67)."""
    text = re.sub(" {2,}", " ", "".join(tokens))
    if first and last:
        return text
    # The spaces at either edge are no word: counted, ``bandwidth = the fact memory.bandwidth, `` kept its last 4
    # "words" as ``= the fact memory.bandwidth,`` plus the empty one after the trailing space (issue 13).
    core = text.strip(" ")
    lead, trail = text[:len(text) - len(text.lstrip(" "))], text[len(text.rstrip(" ")):]
    words = core.split(" ")
    if first:
        return _cut_start(text if len(words) <= CONTEXT + 1 else "…" + " ".join(words[-CONTEXT - 1:]) + trail)
    if last:
        return _cut_end(text if len(words) <= CONTEXT + 1 else lead + " ".join(words[:CONTEXT + 1]) + " …")
    if len(words) <= 2 * CONTEXT + 1 and len(text) <= 2 * CONTEXT_CHARS:
        return text
    head = lead + " ".join(words[:CONTEXT + 1]) if len(words) > 2 * CONTEXT + 1 else text
    tail = " ".join(words[-CONTEXT - 1:]) + trail if len(words) > 2 * CONTEXT + 1 else text
    return _cut_end(head).removesuffix("…").rstrip(" ") + " … " + _cut_start(tail).removeprefix("…").lstrip(" ")
