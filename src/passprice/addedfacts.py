"""A fact a change adds is asked about where what it cites disagrees with what else cites the same place: passprice
reads no source, but one place of one document does not state two figures, and a citation that names no registered
source can be traced to nothing.

A place is a source id with a locator in it (whitespace collapsed). What a place states, as the registry records it
on HEAD, is each fact's figure (its amount in its unit, compared in base units: ``4.8 TB/s`` is ``4800 GB/s``) and
each figure input of a derivation (``derivation.inputs.dot = { value = 4.48, unit = "TB/s", locator = … }``). Two
derived facts citing one place are not compared by their own figures (a share borrowed over another card's bandwidth
cites the rate it divides, not the share): their figure inputs are. A card copied with its ``streams.read`` raised
0.9333 → 0.9633 under the H200's "Dot 4.48 TB/s" citation (its derivation left out) was added with nothing to verify
(slip round 32): the H200's ``streams.read`` at that very place reads 0.9333.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from passprice.derivations import Derivation, quantity
from passprice.errors import InputError, escaped
from passprice.facts import Fact, Provenance, counted_unit, dimension
from passprice.textchange import DIGITS, NUMBER, POWERED, QUOTED, TIMES_COUNT
from passprice.textchange import figure_read as figure_read  # the one reader of a written number

#: A figure with its unit in a locator's text: ``4.8TB/s``, ``3,958 TOPS``, ``141GB`` (a number glued to a letter
#: before it, ``pp512``, is a name, not a figure). Its number is :data:`passprice.textchange.NUMBER`, the one pattern
#: every reader of a locator's figures uses, its amount :func:`figure_read`'s: a power of ten :func:`_plain` does not
#: write out (``1e+308 GB/s``, ``1e-4000 GB/s``, ``2E3GB``) is read with its number (attack69: ``1e+308 GB/s`` read as
#: ``308 GB/s``). Left54: this module had its own number (a power of ten only as ``e``, a sign and 1 to 3 digits;
#: anything but a letter of any script, a digit, ``_``, ``.`` or ``,`` before it), which read ``1e-4000 GB/s`` and
#: ``x1e-400 GB/s`` as ``4000 GB/s`` and ``400 GB/s`` (the power's digits), ``2E3GB`` as no figure, and no figure
#: glued to a letter of another script (``带宽4.8TB/s``); the review (:mod:`passprice.review`) read each as
#: :data:`~passprice.textchange.NUMBER` does. No difference was needed: a look-alike letter before a figure
#: (``Н100``, Cyrillic) is a Latin one by then (:func:`_plain`), so the name rule reads it as a name.
_WITH_UNIT = re.compile(rf"({NUMBER}) ?([A-Za-z]+(?:/[A-Za-z]+)?)")
#: A figure written with a power of ten: ``4.8e12``, ``4.8E+12``, ``4.8 x 10^12`` (:data:`passprice.textchange.POWERED`;
#: ``4.8×10¹²`` is read once its superscript is written out, :data:`_SUPERSCRIPT`).
_EXPONENT = re.compile(POWERED)
#: A prefix written as a word (``terabytes per second``).
_PREFIX_WORDS = {"kilo": "k", "mega": "M", "giga": "G", "tera": "T", "peta": "P"}
_BYTES_IN_WORDS = re.compile(r"(?i)\b(kilo|mega|giga|tera|peta)bytes?(\s*(?:per\s+second|/\s*s(?:ec(?:ond)?)?)\b)?")
#: A rate of operations with its prefix as a word: ``3,958 teraFLOPS``, ``624 TeraOPS``.
_RATE_IN_WORDS = re.compile(r"(?i)\b(kilo|mega|giga|tera|peta)(flops|ops)\b")
#: A rate of bytes written another way: ``TB/sec``, ``TB/second``, ``TBps``.
_BYTES_PER = re.compile(r"\b([kKMGTP]i?B)(?:ps|/sec(?:ond)?)\b")
#: Kilobytes written ``KB`` (``228 KB shared memory``), as whitepapers write them.
_KB = re.compile(r"(?<=[\d ])KB\b")
#: A rate of bytes typeset with blanks around its slash (``4.8 TB / s``, ``141 GB / sec``), read without them: 5.2 TB/s
#: under ``'Peak Memory Bandwidth 4.8 TB / s'`` read no figure and passed ``check`` (tests/test_attack56.py).
_SPACED_SLASH = re.compile(r"(?<![A-Za-z])([kKMGTP]?i?B)[ \t]*/[ \t]*(?=(?:s|S|sec|second)\b)")
#: A number in a locator's text, with or without a unit: :data:`passprice.textchange.NUMBER` (left54: see
#: :data:`_WITH_UNIT`).
_NUMBER = re.compile(NUMBER)
#: Numbers written in words (``four point eight``, ``one hundred forty-one``, ``four thousand eight hundred``).
_ONES = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                     "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                     "seventeen", "eighteen", "nineteen"))}
_TENS = {w: 10 * i for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                          "ninety"), 2)}
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER_WORD = "|".join(sorted([*_ONES, *_TENS, *_SCALES], key=len, reverse=True))
_IN_WORDS = re.compile(rf"(?i)\b(?:{_NUMBER_WORD})(?:(?:[ \t]+(?:and[ \t]+)?|-)(?:{_NUMBER_WORD}|point)\b)*\b")
#: Spaces and slashes as typeset (a no-break, narrow or thin space; a division slash) and exponents written as
#: superscripts (``10¹²``), read as their plain forms.
_TYPESET = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " ", "\u2215": "/", "\u2044": "/",
                          "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None})
#: Cyrillic and Greek letters that look like Latin ones (``4.8ТB/s`` with a Cyrillic Т), read as the letters a
#: reviewer sees: slip round 36, a copy at 5.2 TB/s under ``'GPU Memory Bandwidth 4.8ТB/s'`` read no figure, and its
#: locator was another place than the H200's, so it was added with nothing to verify.
_LOOK_ALIKE = str.maketrans("АВЕКМНОРСТХаеорсхуіЅѕЈјΑΒΕΖΗΙΚΜΝΟΡΤΥΧον",
                            "ABEKMHOPCTXaeopcxyiSsJjABEZHIKMNOPTYXov")
_SUPERSCRIPT = re.compile("10([\u207b\u207a]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)")
_SUPERSCRIPT_DIGITS = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a",
                                    "0123456789-+")
#: Bytes as a word after a prefix letter or alone (``4.8 Tbyte/s``, ``4.8e12 bytes/s``), and a byte unit's rate
#: written ``per second`` (``4.8 TB per second``) or with a capital ``S`` (``4.8 TB/S``).
_BYTE_WORD = re.compile(r"(?<![A-Za-z])([kKMGTP]i?)?[Bb]ytes?(?=\b|/)")
_PER_SECOND = re.compile(r"\b([kKMGTP]?i?B)(?: per second\b|/S\b)")
#: A percentage written as a word after its number (``90 percent``, ``ninety per cent``): slip round 36, a copied
#: routing record's ``hot_share`` 0.8 under ``capture ninety percent of its routing mass`` was asked nothing.
_PERCENT_WORD = re.compile(r"(?i)(?<=\d) ?(?:per ?cent|percent)\b")
#: A prefix set apart from its unit after a figure (``4.8 T B/s``, ``141 G B``), read as one unit: a reviewer reads
#: ``TB/s`` (slip round 36: nothing was read, and 5.2 TB/s under it was asked nothing).
_SPLIT_PREFIX = re.compile(r"(?<=\d) ?\b([kKMGTP]i?) (B(?:/s)?|FLOPS|OPS|TOPS)\b")


def _words_value(words: Sequence[str]) -> str | None:
    """The number ``words`` (lower case, split at spaces, ``and`` and hyphens) write, in digits, or ``None`` when they
    are not one number as a reader reads one: ``nine hundred nine hundred`` (two numbers run together), ``four point
    eight four point eight``, ``thousand million`` (a scale after a scale), ``twenty twenty``. Slip round 36: the
    words were read as 90,909,090,900 TB/s and asked about a figure no one wrote."""
    whole, group, fraction, after = 0, 0, "", False
    last, last_scale, hundreds = "", 10**15, False
    for w in words:
        if w == "point":
            if after:
                return None
            after = True
        elif after:
            if w not in _ONES or _ONES[w] > 9:
                return None
            fraction += str(_ONES[w])
        elif w in _ONES:
            if last not in ("", "hundred", "scale") and not (last == "tens" and 0 < _ONES[w] < 10):
                return None
            group += _ONES[w]
            last = "ones" if 0 < _ONES[w] < 10 else "teen"
        elif w in _TENS:
            if last not in ("", "hundred", "scale"):
                return None
            group += _TENS[w]
            last = "tens"
        elif w == "hundred":
            if hundreds or last == "hundred" or group >= 100:
                return None
            group, hundreds, last = max(group, 1) * 100, True, "hundred"
        else:
            if last == "scale" or _SCALES[w] >= last_scale:
                return None
            whole += max(group, 1) * _SCALES[w]
            group, hundreds, last, last_scale = 0, False, "scale", _SCALES[w]
    if after and not fraction:
        return None
    return f"{whole + group}" + (f".{fraction}" if fraction else "")


def _split_words(text: str) -> list[str]:
    return re.split(r"(?:[ \t]+(?:and[ \t]+)?|-)", text.lower())


def _from_words(found: re.Match[str]) -> str:
    """A number written in words as digits (``four point eight`` → ``4.8``), or the words unchanged where they do
    not read as one number (:func:`_words_value`)."""
    value = _words_value(_split_words(found.group(0)))
    return found.group(0) if value is None else value


#: How many texts (locators, notes) the text readers below remember: a review of many added cards reads the same
#: locator once a fact of each card and once a figure it is held against (session 32: 999 copies of a card, 45 ms a
#: file, most of it reading the same texts again).
_TEXTS_KEPT = 4096


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _plain(text: str) -> str:
    """``text`` with the notations :data:`_WITH_UNIT` does not read rewritten as ones it does: a power of ten
    written out (``4.8e12 B/s`` → ``4800000000000 B/s``), a rate's unit spelled another way (``4.8 TB/sec``,
    ``4.8 TBps``, ``4.8 terabytes per second`` → ``4.8 TB/s``, ``3,958 teraFLOPS`` → ``3,958 TFLOPS``), ``228 KB``
    as ``228 kB``: slip round 33, 5.2 TB/s under each of them was asked nothing. Slip round 34: so was 5.2 TB/s under
    a figure in words (``four point eight terabytes per second`` → ``4.8 TB/s``), a typeset space or slash (``4.8
    TB/s`` with a no-break space, ``4.8 TB∕s``), a superscript power (``4.8×10¹² B/s``), bytes as a word (``4.8
    Tbyte/s``, ``4.8 x 10^12 bytes/s``) or ``4.8 TB per second`` / ``4.8 TB/S``."""

    def power(found: re.Match[str]) -> str:
        if found.group(2) is not None and "," in found.group(1):
            return found.group(0)  # read whole as written by NUMBER (``1,000e3 GB``: left54), its commas kept
        exponent = found.group(2) or found.group(3)
        digits = exponent.lstrip("+-").lstrip("0") or "0"  # as written, never int(): 5,000 digits of power raise
        written = f"{found.group(1)}e{'-' if exponent[0] == '-' and digits != '0' else '+'}{digits}"
        # left50: a power past a float (``1e-400``, ``1 x 10^400``) is kept as ``1e-400``, which
        # :func:`figure_read` reads as no number (it read ``0 GB/s``; ``10^400``'s ``400 GB/s`` after its ``^``)
        amount = figure_read(written)
        return written if amount is None else f"{amount:.15g}"

    def words(found: re.Match[str]) -> str:
        prefix = _PREFIX_WORDS[found.group(1).lower()]
        return f"{prefix}B/s" if found.group(2) else f"{prefix}B"

    text = text[:10_000].translate(_TYPESET).translate(_LOOK_ALIKE)
    text = _SUPERSCRIPT.sub(lambda found: "10^" + found.group(1).translate(_SUPERSCRIPT_DIGITS), text)
    text = _IN_WORDS.sub(_from_words, text)
    text = _EXPONENT.sub(power, text)
    text = _BYTES_IN_WORDS.sub(words, text)
    text = _SPACED_SLASH.sub(lambda found: f"{found.group(1)}/", text)
    text = _RATE_IN_WORDS.sub(lambda found: _PREFIX_WORDS[found.group(1).lower()] + found.group(2).upper(), text)
    text = _BYTES_PER.sub(lambda found: f"{found.group(1)}/s", text)
    text = _BYTE_WORD.sub(lambda found: f"{found.group(1) or ''}B", text)
    text = _PER_SECOND.sub(lambda found: f"{found.group(1)}/s", text)
    text = _PERCENT_WORD.sub("%", text)
    text = _SPLIT_PREFIX.sub(lambda found: f" {found.group(1)}{found.group(2)}", text)
    return _KB.sub("kB", text)


def _reads(unit: str) -> bool:
    """Whether passprice reads ``unit`` as a unit."""
    try:
        quantity(1, unit)
    except InputError:
        return False
    return True


def stated_with_unit(text: str) -> list[tuple[str, float, Fraction, tuple[tuple[str, int], ...], str]]:
    """The figures ``text`` writes with a unit passprice reads, as ``(as written, amount, value in base units,
    dimension, unit as written)``, after :func:`_plain`; a number whose following word is no unit is left out.
    Raises nothing. Each text is read once a process (a new list each call)."""
    return list(_stated_with_unit(text))


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _stated_with_unit(text: str) -> tuple[tuple[str, float, Fraction, tuple[tuple[str, int], ...], str], ...]:
    out = []
    for found in _WITH_UNIT.finditer(_plain(text)):
        try:
            amount = figure_read(found.group(1))
            if amount is None:  # ``1e+999 GB/s``, ``1e-400 GB/s``: past a float, no figure (attack69, left50)
                continue
            q = quantity(amount, found.group(2))
        except (InputError, ValueError, OverflowError):
            continue
        out.append((found.group(0), amount, q.value, q.dims, found.group(2)))
    return tuple(out)


def _in_macs(value: Fraction, dims: tuple[tuple[str, int], ...]) -> tuple[Fraction, tuple[tuple[str, int], ...]]:
    """A quantity of FLOP or op counted in MACs, two a MAC (a multiply-add is two operations: ``989 TFLOPS`` is
    494.5 TMAC/s); others unchanged."""
    counts = dict(dims)
    for name in ("FLOP", "op"):
        if name in counts:
            exponent = counts.pop(name)
            counts["MAC"] = counts.get("MAC", 0) + exponent
            value = value / Fraction(2) ** exponent
    return value, tuple(sorted((k, v) for k, v in counts.items() if v))


def _size_alike(amount: float, unit: str, other_amount: float, other_unit: str,
                dims: tuple[tuple[str, int], ...]) -> bool:
    """Whether two figures are one size written in decimal and binary prefixes (``50 MB`` for 50 MiB, as
    datasheets write caches): the same amount, a size in bytes of a kilo or mega prefix, the units alike but for the
    binary ``i``. A memory's ``141 GiB`` under ``'GPU Memory 141GB'`` (every card here records its capacity in the
    datasheet's decimal GB), a rate (``4.8 TiB/s`` under ``4.8TB/s``) or a count in another unit (``624 TMAC/s`` under
    ``624 TFLOPS``) is not: it is another figure (slip round 33: each was asked nothing)."""
    def bare(u: str) -> str:
        return u.replace("i", "").lower()

    return (amount == other_amount and dims == (("B", 1),) and bare(unit) == bare(other_unit)
            and bare(unit) in ("kb", "mb"))


#: What follows a bare number that shares the unit written after the next (``733 | 1,466 TOPS``, ``1,979/3,958
#: TFLOPS``, ``4.8 or 5.2 TB/s``): a list's separator, then a number.
_LISTED = re.compile(r"\s*(?:[|/,;\u2013-]|\bor\b|\band\b|\bto\b)\s*(?=\d)")


def other_figures(amount: float, unit: str, text: str | None) -> list[str] | None:
    """The figures ``text`` quotes with their unit of the dimension of ``amount`` ``unit`` (FLOP and op counted as
    MACs for a figure in MACs) when none is that figure: ``None`` when it quotes no figure of that dimension, ``[]``
    when one is its own (the same quantity, or the same size in a binary prefix: :func:`_size_alike`) or the text
    writes its amount as a bare number (``'INT8 Tensor Core 733 | 1,466 TOPS'`` for 733 TOPS). Raises nothing."""
    found = _other_figures(amount, unit, text)
    return None if found is None else list(found)


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _other_figures(amount: float, unit: str, text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    plain = _plain(text)
    with_unit = {found.start() for found in _WITH_UNIT.finditer(plain) if _reads(found.group(2))}
    bare = False  # a bare number equal to ``amount`` the text writes
    for found in _NUMBER.finditer(plain):
        if found.start() not in with_unit and figure_read(found.group(0)) == amount:
            if _LISTED.match(plain, found.end()):
                return ()  # one of a list sharing the unit after it (``733 | 1,466 TOPS``)
            bare = True
    try:
        mine = quantity(amount, unit)
    except (InputError, ValueError, OverflowError):  # (a NaN or infinite amount: no Fraction holds it; attack69)
        return () if bare else None
    if bare and not mine.dims:
        return ()  # a count or share: a bare number is one
    in_macs = any(name == "MAC" for name, _ in mine.dims)
    alike = []
    for shown, their_amount, value, dims, their_unit in stated_with_unit(text):
        if in_macs and dims != mine.dims:
            value, dims = _in_macs(value, dims)
        if dims != mine.dims:
            continue
        if value == mine.value or _size_alike(amount, unit, their_amount, their_unit, dims):
            return ()
        alike.append(shown)
    return tuple(alike) or (() if bare else None)


#: A unit written as a reader reads a size or rate but passprice does not (``tb/s``, ``gb``, ``TBPS``): which one is
#: meant is a guess (``tb`` is tera-bytes or tera-bits), so it is said plainly, not read.
_UNIT_LIKE = re.compile(r"(?i)(?:[kmgtp]i?b(?:/s|ps)?|[kmgtp]?(?:flops|ops))")
#: What may follow a figure as its unit.
_AFTER = re.compile(r" ?([A-Za-z]+(?:/[A-Za-z]+)?)")


def unreadable(text: str | None) -> list[str]:
    """The figures ``text`` writes that passprice cannot read as one figure with its unit, as written: a number with
    a unit-like word it does not read (``4.8 tb/s``, :data:`_UNIT_LIKE`), and number words before a unit that are no
    one number (``nine hundred nine hundred TB/s``, :func:`_words_value`), and a number past a float before a unit it
    reads (``1e-400 GB/s``, :func:`figure_read`; left50: read as ``0 GB/s``). Raises nothing."""
    if text is None:
        return []
    plain = _plain(text)
    out = []
    for found in _WITH_UNIT.finditer(plain):
        unit = found.group(2)
        # a unit-like word it does not read (``4.8 tb/s``), or a unit it reads after a number past a float
        # (``1e-400 GB/s``: left50)
        if _UNIT_LIKE.fullmatch(unit) if not _reads(unit) else figure_read(found.group(1)) is None:
            out.append(found.group(0))
    for found in _IN_WORDS.finditer(plain):
        if _words_value(_split_words(found.group(0))) is not None:
            continue
        unit = _AFTER.match(plain, found.end())
        if unit is not None and (_reads(unit.group(1)) or _UNIT_LIKE.fullmatch(unit.group(1))):
            out.append(found.group(0) + unit.group(0))
    return out


#: How near an estimate must come to a figure its locator quotes scaled by a bare number there to be read as
#: resting on it (:func:`from_basis`): a relative 0.1 %.
BASIS_TOLERANCE = 1e-3
#: A number that names a place in a document, not a factor of a figure (:func:`from_basis`): a page, section,
#: table, figure, line, row, column, chapter, appendix, equation, footnote, step or version number (``p. 18``,
#: ``Table 3``, ``§ 8.3``, ``v2``), its word right before it.
_PLACE_NUMBER = re.compile(r"(?i)(?:\b(?:pp?|pages?|sections?|sect|sec|tables?|tab|figures?|figs?|lines?|rows?|"
                           r"columns?|cols?|chapters?|ch|appendix|eqs?|equations?|footnotes?|steps?|slides?|"
                           r"versions?|rev|v)\.?|§)\s*$")


def from_basis(amount: float, unit: str, text: str) -> bool:
    """Whether ``amount`` ``unit`` is a figure ``text`` quotes with a unit of its dimension (:func:`stated_with_unit`)
    multiplied or divided by a bare number ``text`` quotes (``6 HBM3E stacks x 16 GB`` gives 96 GB; ``50,000 lanes
    at 2.0 GHz`` gives 100 Tcycle/s), or by a percentage it writes with ``%`` (or ``percent``), or raised or lowered
    by one (``4.8 TB/s less 5 %``; a bare ``5`` is no percentage: ``(5 stacks)`` does not lower a figure by 5 %),
    within :data:`BASIS_TOLERANCE`: an estimate or assumption whose locator states its basis. A number naming a place
    (:data:`_PLACE_NUMBER`: ``p. 18``, ``Table 3``) is no factor: an assumed 3.953 TB/s under ``'GPU Memory Bandwidth
    3.35TB/s 3.9TB/s' (p. 18)`` read as 3.35 TB/s raised by 18 % and passed ``check`` (tests/test_attack56.py). Nor
    is the figure itself, written in the locator beside its quote: an assumed 6.5 TB/s under ``'Peak Memory
    Bandwidth 6 TB/s' (1 card: 6.5 TB/s)`` read as 6.5 TB/s times 1. Raises nothing."""
    try:
        mine = quantity(amount, unit)
    except InputError:
        return False
    plain = _plain(text)
    with_unit = {found.start() for found in _WITH_UNIT.finditer(plain) if _reads(found.group(2))}
    bare: set[tuple[float, bool]] = set()  # (number, written as a percentage)
    for found in [*_NUMBER.finditer(plain), *_TIMES.finditer(plain)]:
        if found.start() in with_unit or _PLACE_NUMBER.search(plain[max(0, found.start() - 12):found.start()]):
            continue
        number = figure_read(found.group(found.lastindex or 0))
        if number is not None:  # (``1e-400`` is no factor of 0: left50)
            bare.add((number, plain[found.end():found.end() + 2].lstrip().startswith("%")))
    factors = {f for n, percent in bare if n
               for f in ((n, 1 / n, n / 100, 1 + n / 100, 1 - n / 100) if percent else (n, 1 / n)) if f}
    in_macs = any(name == "MAC" for name, _ in mine.dims)
    target = float(mine.value)
    for _, _, value, dims, _ in stated_with_unit(text):
        if in_macs and dims != mine.dims:
            value, dims = _in_macs(value, dims)
        if dims != mine.dims or abs(float(value) - target) <= BASIS_TOLERANCE * abs(target):
            continue  # (the figure itself, written beside the quote, is no basis of it)
        if any(abs(float(value) * f - target) <= BASIS_TOLERANCE * abs(target) for f in factors):
            return True
    return False


#: A range a locator quotes (``0.80-0.86``, ``85–90%``, ``85 to 90 %``, ``1,000-2,000``) and a bound (``over 75%``,
#: ``at most 0.9``): each number :data:`passprice.textchange.QUOTED` (the second a range's end after its dash, so
#: after anything; read with :func:`_amount`).
_RANGE = re.compile(rf"({QUOTED})\s*(?:-|–|to)\s*({DIGITS})(?<!,)(?![\w.])\s*(%?)")
_BOUND = re.compile(rf"(?i)\b(over|above|more than|at least|under|below|less than|at most|up to)\s+({QUOTED})"
                    r"(?![\w.])\s*(%?)")


def _amount(written: str) -> float:
    """A number :data:`_RANGE`, :data:`_BOUND`, :data:`_PERCENT` or :data:`_PART_OF` reads (digits, thousands commas,
    a decimal part) as a float (``inf`` past one). Raises nothing."""
    return float(written.replace(",", ""))


def _in_range(amount: float, text: str) -> bool:
    """Whether ``amount`` lies in a range ``text`` quotes (``0.87`` in ``85-90%``, a percentage read over 100): the
    source states the span, and a figure inside it is one it states as a span (slip round 36: a published 0.87 under
    ``85-90%`` was asked whether the place gives it)."""
    for lo, hi, percent in _RANGE.findall(text[:10_000]):
        scale = 100 if percent else 1
        if _amount(lo) / scale <= amount <= _amount(hi) / scale:
            return True
    return False


def _within(amount: float, text: str) -> bool:
    """Whether ``amount`` lies in a range (:func:`_in_range`) or meets a bound ``text`` quotes (a percentage read
    over 100): an estimate taken from a quoted span (``0.85`` in ``the 0.80-0.86 DMA shares``, ``0.8`` under ``over
    75%``)."""
    if _in_range(amount, text):
        return True
    for word, bound, percent in _BOUND.findall(text[:10_000]):
        limit = _amount(bound) / (100 if percent else 1)
        above = word.lower() in ("over", "above", "more than", "at least")
        if (amount >= limit) if above else (amount <= limit):
            return True
    return False


#: A percentage a locator quotes (``85%``, ``15 %``, its number :data:`passprice.textchange.QUOTED`).
_PERCENT = re.compile(rf"({QUOTED})\s?%")

#: A ratio a locator states as a part of a whole: ``A of B``, ``A of the B``, ``A out of (the) B`` (``12 of the 32
#: experts``) or ``A/B`` (``58/128``, ``921.85 / 1,008``), each number in digits (``1,024`` too). A slash between
#: three or more numbers (``2024/05/14``, ``1/2/3``) is a date or a list, not a ratio. The part is
#: :data:`passprice.textchange.QUOTED`, the whole its digits after ``of`` or ``/`` (not ending on a comma).
_PART_OF = re.compile(rf"(?i)(?<!/)(?<!/\s)({QUOTED})(?:\s+(?:out\s+)?of\s+(?:the\s+)?|\s?/\s?(?!\s))"
                      rf"({DIGITS})(?<!,)(?![\w.,]?\d)(?!\s?/\s?\d)")


def parts_of(text: str) -> dict[float, str]:
    """The ratios ``text`` states as ``A of (the) B``, ``A out of (the) B`` or ``A/B`` (:data:`_PART_OF`), each
    ``A / B`` → the words stating it (``12 of the 32`` → 0.375, ``58/128`` → 0.453125), those with ``0 < A <= B``
    alone (``70 of 50`` is no part of a whole). A routing record's ``hot_experts`` 0.375 under ``12 of the 32 experts
    take 70 %`` was asked whether the place gives it, its locator said to quote only 70 % (slip round 39); 0.453125
    under ``58/128 experts take 90 %`` likewise until session 25 (a slash was not read). Raises nothing."""
    out: dict[float, str] = {}
    for found in _PART_OF.finditer(text[:10_000]):
        part, whole = (_amount(g) for g in found.groups())
        if 0 < part <= whole:
            out.setdefault(part / whole, found.group(0))
    return out


def percents_of(text: str) -> dict[float, str]:
    """The ratios ``text`` quotes as percentages (:data:`_PERCENT`, in any notation :func:`_plain` reads, ``90
    percent`` too), each ``P / 100`` → the words stating it (``capture 90% of its routing mass`` → 0.9: ``90%``;
    ``85-90%`` quotes 0.85 and 0.9).
    Walkthrough 55: a routing record's ``hot_share`` moved 0.9 → 0.85 under that unchanged locator was asked only
    whether the place says 0.85, not told the locator quotes 90 %, as ``58/128`` under ``hot_experts`` is
    (:func:`parts_of`). Raises nothing."""
    plain = _plain(text[:10_000])
    out: dict[float, str] = {}
    for found in _PERCENT.finditer(plain):
        out.setdefault(_amount(found.group(1)) / 100, found.group(0))
    for found in _RANGE.finditer(plain):  # both ends of a range of percentages (``85-90%`` quotes 85 % too)
        if found.group(3):
            for end in found.group(1, 2):
                out.setdefault(_amount(end) / 100, found.group(0))
    return out


def in_own_unit(amount: float, unit: str, text: str | None) -> list[str]:
    """The figures of the dimension of ``amount`` ``unit`` that ``text`` quotes and that are not that figure
    (:func:`other_figures`), each as written, followed by its amount in ``unit`` where written in another unit:
    ``'Memory Bandwidth 3352 GB/s'`` under 3.35 TB/s →
    ``["3352 GB/s (3.352 TB/s)"]``; a figure in ``unit`` itself as written (``3.352 TB/s``); empty when ``text``
    quotes none or quotes the figure itself. The amount in ``unit`` is the quoted value divided by ``unit``'s size
    (:func:`passprice.units.quantity` of 1 ``unit``), FLOP and op counted as MACs for a figure in MACs, to 6
    significant digits. Left45 (as :func:`percents_of` for ratios): the H100's bandwidth kept at 3.35 TB/s and re-cited
    to a locator quoting 3352 GB/s was asked only "does … state 3.35 TB/s?", the digits that differ left to the
    reader's arithmetic. Raises nothing."""
    others = other_figures(amount, unit, text)
    if not others or text is None:
        return []
    try:
        mine = quantity(1.0, unit)
    except InputError:
        return list(others)
    in_macs = any(name == "MAC" for name, _ in mine.dims)
    out = []
    seen: set[str] = set()  # each figure once, as written: `shown in out` compared it with "3352 GB/s (3.352 TB/s)"
    for shown, _, value, dims, their_unit in stated_with_unit(text):  # and a locator quoting it twice said it twice
        if shown not in others or shown in seen:
            continue
        seen.add(shown)
        if in_macs and dims != mine.dims:
            value, dims = _in_macs(value, dims)
        own = float(value / mine.value) if dims == mine.dims and mine.value else None
        # to 6 digits, or as many as tell it from ``amount`` (attack54: ``4.8TB/s (4.36557 TiB/s), not its value
        # 4.36557 TiB/s`` said a value rounded from the quote was not what the quote stated, in the same digits)
        digits = next((d for d in range(6, 18) if float(f"{own:.{d}g}") != amount), 17) if own is not None else 6
        said = shown if own is None or their_unit == unit else f"{shown} ({own:.{digits}g} {unit})"
        out.append(said)
    return out


def _count_asks(fact: Fact, quoted: Callable[[str], set[float]]) -> str | None:
    """What an added ratio or count (unit ``1``) without a derivation asks when its locator quotes candidates for it
    and none is it: for a ratio (at most 1) the percentages it quotes (``85-90%`` states 0.85 and 0.9), its bare
    numbers up to 1 and the parts of a whole it states (:func:`parts_of`: ``12 of the 32`` states 0.375, met within
    :data:`BASIS_TOLERANCE`); for a count its bare numbers (``quoted``, with a count after ``x``; a number written
    with a unit is not one). An estimate or assumption asks only when no product or quotient of two numbers it
    quotes (numbers in words read, ``the two busiest``; a percentage also over 100) gives it within
    :data:`BASIS_TOLERANCE`, and it lies in no range and meets no bound the locator quotes (:func:`_within`: the 2
    shipped estimates of a share, 0.85 under ``the 0.80-0.86 DMA shares`` and 0.8 under ``over 75%``). A copied
    drafting method's ``acceptance.1`` 0.95, estimated, under a reworded ``second-token acceptance of 85-90%`` was
    added with nothing to verify (slip round 34). ``None`` otherwise."""
    if fact.locator is None:
        return None
    plain = _plain(fact.locator)
    united = {amount for _, amount, _, _, _ in stated_with_unit(fact.locator)}
    # each percentage as the locator writes it (left48: `60 %` was shown `60%`), a range's ends as P%
    as_written: dict[float, str] = {}
    for found in _PERCENT.finditer(plain):
        as_written.setdefault(_amount(found.group(1)) / 100, found.group(0))
    percents = set(as_written)
    percents |= {_amount(end) / 100 for lo, hi, percent in _RANGE.findall(plain) if percent for end in (lo, hi)}
    written = {n for n in _counts_quoted(fact.locator, quoted) if n not in united}  # in digits
    bare = written | {n for n in _counts_quoted(plain, quoted) if n not in united}  # and in words
    ratios = parts_of(plain) if fact.amount <= 1 else {}
    candidates = (percents | {n for n in written if n <= 1} | set(ratios)) if fact.amount <= 1 else written - {
        p * 100 for p in percents}
    mine = float(f"{fact.amount:.12g}")
    if not candidates or any(abs(c - mine) <= 1e-12 * max(1.0, abs(mine)) for c in candidates):
        return None
    if any(abs(r - fact.amount) <= BASIS_TOLERANCE * abs(fact.amount) for r in ratios):
        return None  # ``12 of the 32`` quotes 0.375 (and 0.3750 written to its digits, within 0.1 %)
    if fact.amount <= 1 and _in_range(fact.amount, plain):
        return None
    if fact.provenance not in (Provenance.PUBLISHED, Provenance.MEASURED):
        if _within(fact.amount, plain):
            return None
        factors = [*bare, *percents, *(n / 100 for n in bare)]
        if any(abs(op - fact.amount) <= BASIS_TOLERANCE * abs(fact.amount)
               for a in factors for b in [1.0, *factors] for op in (a * b, a / b if b else a)):
            return None
    shown = ", ".join(escaped(as_written[c]) if c in as_written else f"{c * 100:g}%" if c in percents
                      else f"{escaped(ratios[c])} ({c:.4g})" if c in ratios
                      else f"{c:g}" for c in sorted(candidates)[:5])
    said = _shown(fact.amount, fact.unit) + ("" if fact.provenance in (Provenance.PUBLISHED, Provenance.MEASURED)
                                             else f", {fact.provenance.value}")
    return (f"it is {_shown(fact.amount, fact.unit)} but its locator quotes {shown}: does "
            f"{escaped(fact.source or '')}: {escaped(fact.locator)} give {said}?")


def states(amount: float, unit: str, text: str | None) -> bool:
    """Whether ``text`` quotes ``amount`` ``unit`` with a unit (:func:`stated_with_unit`: in any notation it reads,
    ``4,800 GB/s`` for 4.8 TB/s; FLOP and op as MACs for a figure in MACs), not as a bare number. Raises nothing."""
    if text is None:
        return False
    try:
        mine = quantity(amount, unit)
    except InputError:
        return False
    in_macs = any(name == "MAC" for name, _ in mine.dims)
    for _, their_amount, value, dims, their_unit in stated_with_unit(text):
        if in_macs and dims != mine.dims:
            value, dims = _in_macs(value, dims)
        if dims == mine.dims and (value == mine.value or _size_alike(amount, unit, their_amount, their_unit, dims)):
            return True
    return False


def quotes_another(fact: Fact, quoted: Callable[[str], set[float]] | None = None) -> str | None:
    """What an added fact without a derivation asks when its locator writes figures of its dimension with their unit
    and none is its own (:func:`other_figures`: ``40 MB`` read as 40 MiB is its own, ``4.8 TiB/s`` under
    ``4.8TB/s`` or ``624 TMAC/s`` under ``624 TFLOPS`` is not): a card copied as the H200 NVL's with
    ``memory.bandwidth`` 5.2 TB/s under ``'GPU Memory Bandwidth 4.8TB/s'`` was added with nothing to verify (slip
    round 32). An estimated or assumed fact cites its basis, not its figure: it asks only when no quoted figure
    scaled by a bare number there gives it (:func:`from_basis`; ``96 GB`` under ``6 HBM3E stacks x 16 GB`` and
    ``100 Tcycle/s`` under ``50,000 block-scale lanes at 2.0 GHz`` are the 2 shipped ones), so that 5.2 TB/s,
    estimated, under ``'GPU Memory Bandwidth 4.8TB/s'`` is asked (slip round 34: it was not). A count or ratio (unit
    ``1``) is held against the bare numbers its locator quotes, with ``quoted`` (:func:`_count_asks`; without it,
    not read). ``None`` otherwise."""
    if fact.derivation is not None or fact.locator is None:
        return None
    if fact.unit == "1":
        return _count_asks(fact, quoted) if quoted is not None else None
    others = other_figures(fact.amount, fact.unit, fact.locator)
    if others is None:
        unread = unreadable(fact.locator)
        if unread and not states(fact.amount, fact.unit, fact.locator):
            return (f"its locator writes {', '.join(escaped(u) for u in unread[:3])}, which passprice cannot read "
                    f"as one figure with its unit: does {escaped(fact.source or '')}: {escaped(fact.locator)} state "
                    f"{_shown(fact.amount, fact.unit)}?")
    if not others:
        return None
    if fact.provenance not in (Provenance.PUBLISHED, Provenance.MEASURED) and from_basis(fact.amount, fact.unit,
                                                                                           fact.locator):
        return None
    cited = fact.provenance in (Provenance.PUBLISHED, Provenance.MEASURED)
    said = _shown(fact.amount, fact.unit) + ("" if cited else f", {fact.provenance.value}")
    verb = "state" if cited else "give"
    return (f"its locator quotes {', '.join(others[:3])}, not {_shown(fact.amount, fact.unit)}: does "
            f"{escaped(fact.source or '')}: {escaped(fact.locator)} {verb} {said}?")


def derived_quotes_another(fact: Fact) -> str | None:
    """What an added derived fact asks when its own locator quotes figures (with their unit) of a dimension that it
    or a figure input of its derivation has, and none of them is its figure or that input's: the place it cites
    states something its derivation does not read. A measured fact's locator is held against its figure
    (:func:`quotes_another`); a derived fact's was not held against anything (slip round 38: a copied H200 whose
    ``array``, derived from ``sparse`` 3958 TOPS, cites ``H200 NVL column: 'INT8 Tensor Core 3,341 TOPS'`` was added
    with nothing to verify). A figure of a dimension neither it nor its inputs have (``50 MB L2`` beside a clock) is
    context, not asked. ``None`` otherwise. Raises nothing."""
    if not isinstance(fact.derivation, Derivation) or not fact.locator:
        return None
    own = [(fact.amount, fact.unit)] + [(i.amount, i.unit) for i in fact.derivation.inputs if i.kind == "figure"]
    others: list[str] = []
    for amount, unit in own:
        found = other_figures(amount, unit, fact.locator)
        if found == []:
            return None
        others += [x for x in found or [] if x not in others]
    if not others:
        return None
    return (f"its locator quotes {', '.join(escaped(x) for x in others[:3])}, neither its figure "
            f"({_shown(fact.amount, fact.unit)}) nor a figure its derivation ({escaped(fact.derivation.formula)}) "
            f"reads: does {escaped(fact.source or '')}: {escaped(fact.locator)} give it?")


#: A count written after ``x`` (``a x16 PCIe Gen 5 link``): quoted, though glued to a letter
#: (:data:`passprice.textchange.TIMES_COUNT`).
_TIMES = re.compile(TIMES_COUNT)


def _counts_quoted(text: str, quoted: Callable[[str], set[float]]) -> set[float]:
    """The bare numbers ``text`` quotes (``quoted``: :func:`passprice.review.changes._quoted_figures`), with a count
    after ``x`` (``x16``)."""
    return quoted(text) | {float(found.group(1)) for found in _TIMES.finditer(text[:10_000])}


def inputs_quote_another(fact: Fact, quoted: Callable[[str], set[float]] | None = None) -> list[str]:
    """What each figure input of an added fact's derivation asks when the place it cites quotes figures of its
    dimension with their unit and none its own (:func:`other_figures`): the input's locator, or, where that quotes
    none of its dimension and the input cites the fact's own source, the fact's locator. A copied card's
    ``streams.read`` with its input ``dot`` raised 4.48 → 4.624 TB/s under a reworded input locator, the fact's own
    still quoting ``Dot 4.48 TB/s``, was added with nothing to verify (slip round 33). A count (unit ``1``) is held
    against the bare numbers its own locator quotes (``quoted``), as itself or a percentage: a copied routing record's
    ``hot`` 48 under a reworded ``experts for 90% coverage, 58 of 128`` (77 shipped counts each quote their own).
    Raises nothing."""
    if not isinstance(fact.derivation, Derivation):
        return []
    asks = []
    for i in fact.derivation.inputs:
        if i.kind != "figure":
            continue
        source = i.source or fact.source
        if i.unit == "1" and quoted is not None and i.locator:
            numbers = _counts_quoted(i.locator, quoted)
            mine = {float(f"{i.amount:.12g}"), float(f"{i.amount * 100:.12g}")}
            if numbers and not numbers & mine:
                shown = ", ".join(f"{n:g}" for n in sorted(numbers)[:5])
                asks.append(f"its input {escaped(i.name)} is {i.shown()} but its locator quotes {shown}: does "
                            f"{escaped(source or '')}: {escaped(i.locator)} state {i.shown()}?")
            continue
        texts = [i.locator] + ([fact.locator] if source == fact.source else [])
        for text in texts:
            others = other_figures(i.amount, i.unit, text)
            if others is None:
                continue
            if others:
                asks.append(f"its input {escaped(i.name)} is {i.shown()} but the place quotes {', '.join(others[:3])}:"
                            f" does {escaped(source or '')}: {escaped(text or '')} state {i.shown()}?")
            break
    return asks


@attrs.frozen
class Stated:
    """One figure the registry records at a place: ``where`` (``FILE: PATH``, or ``FILE: PATH input NAME``) names
    it, ``shown`` is its amount and unit as written (``0.9333``, ``4.48 TB/s``), ``value`` and ``dims`` the quantity
    in base units, ``derived`` whether it is a derived fact's own figure, ``key`` the ``(file, fact path)`` holding
    it, ``input`` whether it is a derivation's figure input, ``amount`` the figure as written."""

    where: str
    shown: str
    value: Fraction
    dims: tuple[tuple[str, int], ...]
    derived: bool
    key: tuple[str, str]
    input: bool = False
    amount: float = 0.0
    unit: str = ""


def _place(source: str | None, locator: str | None) -> tuple[str, str] | None:
    """A citation as a place: the source id and the locator with whitespace collapsed and look-alike letters read as
    Latin (:data:`_LOOK_ALIKE`), so a copy's ``4.8ТB/s`` with a Cyrillic Т cites the H200's place."""
    if source is None or locator is None:
        return None
    return source, " ".join(locator.translate(_TYPESET).translate(_LOOK_ALIKE).split())


def _shown(amount: float, unit: str) -> str:
    return f"{amount:g}" if unit == "1" else f"{amount:g} {counted_unit(unit, amount)}"


def _stated(rel: str, path: str, fact: Fact) -> Iterable[tuple[tuple[str, str], Stated]]:
    """Each ``(place, Stated)`` fact ``path`` of file ``rel`` records: its own figure at its own citation (derived
    when the fact carries a derivation of any kind), and each figure input of its derivation at that input's. A unit
    passprice cannot read states nothing (its file's own error says so)."""
    derived = fact.derivation is not None  # a stack's figure read off runs (a fit) too
    own = _place(fact.source, fact.locator)
    try:
        if own is not None:
            q = quantity(fact.amount, fact.unit)
            yield own, Stated(f"{rel}: {path}", _shown(fact.amount, fact.unit), q.value, q.dims, derived, (rel, path),
                               False, fact.amount, fact.unit)
        if isinstance(fact.derivation, Derivation):
            for i in fact.derivation.inputs:
                at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
                if at is not None:
                    q = i.quantity()
                    yield at, Stated(f"{rel}: {path} input {i.name}", i.shown(), q.value, q.dims, False, (rel, path),
                                     True, i.amount, i.unit)
    except InputError:
        return


def _comparable(a: Stated, b: Stated) -> bool:
    """Whether ``a`` and ``b`` are figures one place states alike: a derived fact's own figure is computed, not read
    there, so it is held only against a plain fact's own figure (a derivation left out of a copy), never against
    another derived fact's or a figure input (the H200's ``host.read`` 64 GB/s is half the 128 GB/s it cites)."""
    if a.derived or b.derived:
        return not (a.derived and b.derived) and not (a.input or b.input)
    return True


def _kind(stated: Stated) -> tuple[bool, bool]:
    return stated.derived, stated.input


class _Place:
    """The figures the registry records at one place, grouped so that what :func:`asked` holds against each added
    fact's figure there is found without reading them all again: 139 copies of a card citing its 20 places made
    2,780 figures read 139 times each, 4.1 s of CPU for a review (attack round 38). A group is ``(dims, kind,
    quoted)``: the quantity's dimension, ``(derived, input)`` (:func:`_comparable`) and whether the locator quotes
    the figure."""

    def __init__(self, stated: Sequence[Stated], figures: set[float]) -> None:
        self.figures = figures
        self.groups: dict[tuple[tuple[tuple[str, int], ...], tuple[bool, bool], bool], list[tuple[int, Stated]]] = {}
        for i, s in enumerate(stated):
            self.groups.setdefault(self._group(s), []).append((i, s))
        self.counts = {g: Counter(s.value for _, s in items) for g, items in self.groups.items()}
        # For each member, the next member of its group holding another value (len(group) when none).
        self.next: dict[tuple[tuple[tuple[str, int], ...], tuple[bool, bool], bool], list[int]] = {}
        for g, items in self.groups.items():
            after, n = [len(items)] * len(items), len(items)
            for j in range(len(items) - 2, -1, -1):
                after[j] = j + 1 if items[j + 1][1].value != items[j][1].value else after[j + 1]
            self.next[g] = after if n else []
        #: Each group's members by the amount as written: a figure the locator quotes is held against another
        #: quoted figure of the same amount in another unit (4.8 TiB/s under ``4.8TB/s``, slip round 33), and a size
        #: equal by amount in a kilo or mega prefix (``50 MB`` for 50 MiB, :func:`_size_alike`) is no other figure.
        self.by_amount: dict[tuple[tuple[tuple[tuple[str, int], ...], tuple[bool, bool], bool], float],
                             list[tuple[int, Stated]]] = {}
        for g, items in self.groups.items():
            for item in items:
                self.by_amount.setdefault((g, item[1].amount), []).append(item)

    def _group(self, s: Stated) -> tuple[tuple[tuple[str, int], ...], tuple[bool, bool], bool]:
        return s.dims, _kind(s), float(f"{s.amount:.12g}") in self.figures

    def others(self, mine: Stated, own: Sequence[Stated]) -> tuple[Stated | None, int]:
        """The first figure at this place (in the registry's order) that ``mine`` is held against, and how many
        there are: another fact's (not one of ``own``, the figures of ``mine``'s fact), of its dimension, another
        value, :func:`_comparable`, and not both figures the locator quotes."""
        quoted = float(f"{mine.amount:.12g}") in self.figures
        first: tuple[int, Stated] | None = None
        n = 0
        for kind in ((False, False), (True, False), (False, True)):
            if not _comparable(Stated("", "", Fraction(0), (), kind[0], ("", ""), kind[1]), mine):
                continue
            for in_figures in (False, True):
                g = (mine.dims, kind, in_figures)
                items = self.groups.get(g)
                if not items:
                    continue
                same = [item for item in self.by_amount.get((g, mine.amount), ())
                        if item[1].value != mine.value and item[1].key != mine.key]
                if quoted and in_figures:
                    # both figures quoted: only the same amount in another unit is another figure (slip round 33)
                    for item in same:
                        if not _size_alike(item[1].amount, item[1].unit, mine.amount, mine.unit, mine.dims):
                            n += 1
                            if first is None or item[0] < first[0]:
                                first = item
                    continue
                n += len(items) - self.counts[g][mine.value]
                n -= sum(1 for s in own if self._group(s) == g and s.value != mine.value)
                n -= sum(1 for _, s in same if _size_alike(s.amount, s.unit, mine.amount, mine.unit, mine.dims))
                j, after = 0, self.next[g]
                while j < len(items):
                    if items[j][1].value == mine.value:
                        j = after[j]
                    elif items[j][1].key == mine.key or _size_alike(items[j][1].amount, items[j][1].unit,
                                                                    mine.amount, mine.unit, mine.dims):
                        j += 1
                    else:
                        if first is None or items[j][0] < first[0]:
                            first = items[j]
                        break
        return (first[1] if first is not None else None), n


def asked(facts: Mapping[str, Mapping[str, Fact]], registered: Iterable[str],
          added: Iterable[tuple[str, str]], quoted: Callable[[str], set[float]],
          carried: Callable[[str], Carried | None] | None = None) -> dict[tuple[str, str], str]:
    """What a reviewer must verify of each added fact, by ``(file, fact path)``: ``facts`` holds HEAD's facts of every
    file holding facts (file → fact path → fact), ``registered`` the source ids HEAD registers
    (``sources/ID.toml``), ``added`` the ``(file, fact path)`` pairs the change adds. An added fact is asked about
    when its citation (or an input's) names no registered source, when its locator quotes another figure of its
    dimension and not its own (:func:`quotes_another`), or when a figure it records at a place differs
    (in base units, the same dimension) from one another fact records there (:class:`Stated`; two derived facts'
    own figures aside, and two figures the locator quotes both, ``quoted`` giving the figures a locator quotes:
    ``114 SMs, 14,592 FP32 cores`` states both), or, an estimate or assumption, when its basis names figures nothing
    the registry recorded of its source before the change names (``carried``, :func:`uncarried`). Facts asked
    nothing are left out. Raises nothing."""
    wanted = [(rel, path) for rel, path in added if path in facts.get(rel, {})]
    if not wanted:
        return {}
    sources = set(registered)
    at: dict[tuple[str, str], list[Stated]] = {}
    for rel, held in facts.items():
        for path, fact in held.items():
            for place, stated in _stated(rel, path, fact):
                at.setdefault(place, []).append(stated)
    places: dict[tuple[str, str], _Place] = {}
    added_keys = set(wanted)
    said = _constants(facts, added_keys)
    out = {}
    for rel, path in wanted:
        fact = facts[rel][path]
        asks = []
        cited = [fact.source] if fact.source is not None else []
        if isinstance(fact.derivation, Derivation):
            cited += [i.source for i in fact.derivation.inputs if i.kind == "figure" and i.source is not None]
        unknown = [s for s in dict.fromkeys(cited) if s not in sources]
        if fact.source is None:
            asks.append(f"it cites no registered source ({escaped(fact.cite or '')!r}): where does it come from?")
        for source in unknown:
            asks.append(f"its source {escaped(source)!r} is not registered (no sources/{escaped(source)}.toml): "
                        "its citation traces to nothing")
        other = quotes_another(fact, quoted)
        if other is not None:
            asks.append(other)
        asks += inputs_quote_another(fact, quoted)
        derived = derived_quotes_another(fact)
        if derived is not None:
            asks.append(derived)
        basis = uncarried(fact, carried) if carried is not None else None
        if basis is not None:
            asks.append(basis)
        bare = figureless(fact, at.get(own_place, ()) if (own_place := _place(fact.source, fact.locator)) else (),
                          added_keys)
        if bare is not None:
            asks.append(bare)
        own = list(_stated(rel, path, fact))
        for place, mine in own:
            if place not in places:
                # the ratios the locator states as parts of a whole or percentages are quoted figures too: a
                # routing record's two facts citing `'32 of the 128 experts take 60 % of …'` were each asked of
                # the other's figure there (walkthrough 56)
                said_ratios = {float(f"{r:.12g}") for r in (*parts_of(place[1]), *percents_of(place[1]))}
                places[place] = _Place(at.get(place, []), quoted(place[1]) | said_ratios)
            first, n = places[place].others(mine, [s for at_, s in own if at_ == place])
            if first is not None:
                more = f" (and {n - 1} more)" if n > 1 else ""
                asks.append(f"{escaped(first.where)} reads {first.shown} at the place {escaped(mine.where)} cites as "
                            f"{mine.shown}{more}: does {escaped(place[0])}: {escaped(place[1])} state {mine.shown}?")
        asks += _constant_asks(rel, path, fact, said)
        asks += _cited_constant_asks(rel, path, fact, facts, added_keys)
        asks += _formula_asks(rel, path, fact, facts, added_keys)
        if asks:
            out[(rel, path)] = "; ".join(asks)
    return out


def names_figure(text: str | None) -> bool:
    """Whether ``text`` names any number at all (in digits or in words, :func:`_plain`) other than one after a word
    naming a place in a document (``page 2``, ``Table 3``: :data:`_PLACE`). Raises nothing."""
    if not text:
        return False
    plain = _plain(text)
    for found in _NUMBER.finditer(plain):
        before = plain[:found.start()].split()[-1:]
        if before and before[0].lower().strip(".:#([,") in _PLACE:
            continue
        return True
    return False


def figureless(fact: Fact, there: Iterable[Stated], added: set[tuple[str, str]]) -> str | None:
    """What an added estimated or assumed fact without a derivation asks when neither its locator nor its note names
    any figure (:func:`names_figure`): its basis is a claim with nothing to hold it against (slip round 38: a WS1
    copy's ``memory.bandwidth`` raised 6 → 9 TB/s, estimated, under ``design point: the designer's judgement`` was
    added with nothing to verify). ``there`` holds the figures the registry records at the fact's place
    (:func:`_stated`); one the change does not add recording the same quantity there is the basis's precedent, and
    nothing is asked (a copy's ``host.write`` 100 GB/s under WS1's ``(full duplex with host.read)``). ``added`` holds
    the ``(file, fact path)`` pairs the change adds. ``None`` otherwise. Raises nothing."""
    if (fact.provenance in (Provenance.PUBLISHED, Provenance.MEASURED) or fact.derivation is not None
            or names_figure(fact.locator) or names_figure(fact.note)):
        return None
    try:
        mine = quantity(fact.amount, fact.unit)
    except InputError:
        return None
    if any(not s.input and s.key not in added and (s.value, s.dims) == (mine.value, mine.dims) for s in there):
        return None
    return (f"it is {_shown(fact.amount, fact.unit)}, {fact.provenance.value}, but its basis names no figure (its "
            f"locator and note quote no number): what gives {_shown(fact.amount, fact.unit)}? does "
            f"{escaped(fact.source or fact.cite or '')}: {escaped(fact.locator or '')} give it?")


#: A number written in a formula that is not a whole number up to 10 (``/ 2``, a mean of two, is): a factor no input
#: names (``dot * 1.05 / bandwidth``).
_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+[eE][+-]?\d+|\d{2,})(?![\w.])")


def _formula_asks(rel: str, path: str, fact: Fact, facts: Mapping[str, Mapping[str, Fact]],
                  added: set[tuple[str, str]]) -> list[str]:
    """What an added fact's formula asks: a number in it no input names, other than a whole number up to 10 (the 3
    shipped formulas write ``/ 2``, a mean of two), and a formula other than the one a fact of the same path the
    change does not add derives from the same citation. A copied H200 with its ``streams.read`` formula ``dot * 1.05 /
    bandwidth`` (0.9333 → 0.98 under "Dot 4.48 TB/s") was added with nothing to verify (slip round 34): two derived
    figures at one place are not compared (:func:`_comparable`)."""
    if not isinstance(fact.derivation, Derivation):
        return []
    asks = []
    formula = fact.derivation.formula
    literals = [found.group(1) for found in _LITERAL.finditer(formula)]
    if literals:
        asks.append(f"its formula {escaped(formula)} writes {', '.join(escaped(x) for x in literals[:3])}, a number "
                    "no input names: where does it come from?")
    place = _place(fact.source, fact.locator)
    if place is None:
        return asks
    for other_rel, held in facts.items():
        other = held.get(path)
        if ((other_rel, path) in added or other is None or not isinstance(other.derivation, Derivation)
                or _place(other.source, other.locator) != place):
            continue
        if " ".join(other.derivation.formula.split()) != " ".join(formula.split()):
            asks.append(f"its formula {escaped(formula)} is not {escaped(other.derivation.formula)}, which "
                        f"{escaped(other_rel)}: {escaped(path)} derives from the same citation: does "
                        f"{escaped(place[0])}: {escaped(place[1])} give it so?")
        break
    return asks


def _words(text: str) -> str:
    return " ".join(text.split()).lower()


def _constants(facts: Mapping[str, Mapping[str, Fact]], added: set[tuple[str, str]]
               ) -> dict[str, list[tuple[tuple[str, str], str, str, Fraction, tuple[tuple[str, int], ...]]]]:
    """Each constant of a derivation the registry records, but those of the ``added`` facts, by its words
    (whitespace collapsed, lower case): ``(key, where, shown, value, dims)``."""
    out: dict[str, list[tuple[tuple[str, str], str, str, Fraction, tuple[tuple[str, int], ...]]]] = {}
    for rel, held in facts.items():
        for path, fact in held.items():
            if (rel, path) in added or not isinstance(fact.derivation, Derivation):
                continue
            for i in fact.derivation.inputs:
                if i.kind != "constant" or not i.constant:
                    continue
                try:
                    q = i.quantity()
                except InputError:
                    continue
                out.setdefault(_words(i.constant), []).append(((rel, path), f"{rel}: {path} input {i.name}",
                                                               i.shown(), q.value, q.dims))
    return out


def _constant_asks(rel: str, path: str, fact: Fact, said: Mapping[str, Sequence[tuple[tuple[str, str], str, str,
                                                                                         Fraction,
                                                                                         tuple[tuple[str, int], ...]]]]
                   ) -> list[str]:
    """What each constant of an added fact's derivation asks when another fact's constant of the same words records
    another number: a card copied with its ``array``'s ``sparsity`` 2 → 1 under "2:4 structured sparsity doubles the
    dense rate" (989.5 → 1979 TMAC/s) was added with nothing to verify (slip round 34)."""
    if not isinstance(fact.derivation, Derivation):
        return []
    asks = []
    for i in fact.derivation.inputs:
        if i.kind != "constant" or not i.constant:
            continue
        try:
            q = i.quantity()
        except InputError:
            continue
        for key, where, shown, value, dims in said.get(_words(i.constant), ()):
            if key != (rel, path) and (value, dims) != (q.value, q.dims):
                asks.append(f"its constant {escaped(i.name)} is {i.shown()} where {escaped(where)} reads {shown} "
                            f"under the same words: is '{escaped(i.constant)}' {i.shown()}?")
                break
    return asks


def _cited_constant_asks(rel: str, path: str, fact: Fact, facts: Mapping[str, Mapping[str, Fact]],
                         added: set[tuple[str, str]]) -> list[str]:
    """What each constant of an added fact's derivation asks when a fact of the same path the change does not add,
    citing the same place (source and locator, whitespace collapsed), records another number for the constant of
    that name: a copied H200 with its ``array``'s ``sparsity`` 2 -> 1 under new words ('the dense rate as listed',
    989.5 -> 1979 TMAC/s under 'INT8 Tensor Core 3,958 TOPS' (with sparsity)) was added with nothing to verify
    (slip round 35): :func:`_constant_asks` holds a constant by its words, and these were new."""
    if not isinstance(fact.derivation, Derivation) or fact.source is None:
        return []
    place = (fact.source, " ".join((fact.locator or "").split()))
    mine = {i.name: i for i in fact.derivation.inputs if i.kind == "constant"}
    if not mine:
        return []
    for other_rel, held in facts.items():
        other = held.get(path)
        if (other_rel, path) in added or other is None or not isinstance(other.derivation, Derivation) or (
                other.source, " ".join((other.locator or "").split())) != place:
            continue
        asks = []
        for j in other.derivation.inputs:
            i = mine.get(j.name)
            if i is None or j.kind != "constant":
                continue
            try:
                if (i.quantity().value, i.quantity().dims) == (j.quantity().value, j.quantity().dims):
                    continue
            except InputError:
                continue
            asks.append(f"its constant {escaped(i.name)} is {i.shown()} where {escaped(other_rel)}: {escaped(path)} "
                        f"reads {j.shown()} from the same citation: does {escaped(fact.source)}: "
                        f"{escaped(place[1])} give {i.shown()}?")
        if asks:
            return asks
    return []


def moved(added: Iterable[tuple[str, str, Fact]],
          removed: Iterable[tuple[str, str, Fact]]) -> dict[tuple[str, str], str]:
    """What a reviewer must verify of each added fact ``(file, fact path, fact)`` whose place (its source and locator)
    a fact the same change removes ``(file, fact path, fact)`` cited under another file or path: it was moved, and the
    place states it of what the old file described, not necessarily of the new. The H100's ``tensor.f8`` (989.5
    TMAC/s under the H100 datasheet's FP8 row) moved into the A100's card, which has no FP8 path, read "1 fact
    added", nothing to verify, exit 0 (slip round 33); so did one whose locator was reworded in the move (the same
    source and figure). By ``(file, fact path)``; facts asked nothing are left out.
    Raises nothing."""
    gone: dict[tuple[str, str], list[str]] = {}
    figures: dict[tuple[str, float, str], list[str]] = {}
    for rel, path, fact in removed:
        place = _place(fact.source, fact.locator)
        if place is not None:
            gone.setdefault(place, []).append(f"{rel}: {path}")
            figures.setdefault((place[0], fact.value, dimension(fact.unit)), []).append(f"{rel}: {path}")
    out = {}
    for rel, path, fact in added:
        place = _place(fact.source, fact.locator)
        if place is None:
            continue
        same = [o for o in gone.get(place, []) if o != f"{rel}: {path}"]
        # Its locator reworded in the move (``…(with sparsity), copied``): the same source and figure.
        alike = [o for o in figures.get((place[0], fact.value, dimension(fact.unit)), []) if o != f"{rel}: {path}"]
        if same or alike:
            how = "under the same citation" if same else "with the same source and figure"
            out[(rel, path)] = (f"moved from {escaped((same or alike)[0])} (removed by this change) {how}: does "
                                f"{escaped(place[0])}: {escaped(place[1])} state {_shown(fact.amount, fact.unit)} of "
                                f"what {escaped(rel)} describes?")
    return out


def _places_of(fact: Fact) -> list[tuple[str, str]]:
    """The places ``fact`` cites (:func:`_place`): its own, then each figure input's of its derivation, each once."""
    out = [own] if (own := _place(fact.source, fact.locator)) is not None else []
    if isinstance(fact.derivation, Derivation):
        for i in fact.derivation.inputs:
            at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
            if at is not None and at not in out:
                out.append(at)
    return out


def another_cards(cards: Mapping[str, Mapping[str, Fact]], added: Iterable[tuple[str, str]]) -> dict[tuple[str, str],
                                                                                                   str]:
    """What a reviewer must verify of each added card fact ``(file, fact path)`` of ``added`` that cites a place (its
    source and locator, or a figure input's: :func:`_place`) a fact of another card file of ``cards`` (file → fact
    path → fact, HEAD's card files) cites: the place states its figure of what that other file describes (the H200
    SXM column of NVIDIA's datasheet), not necessarily of the card added. A card copied from the H200's file, one fact
    re-cited to its own new datasheet and 16 still citing the H200's columns and measurements, read "1 to verify in
    its source" (the new source) and nothing of the 16 (session 29's note, issue 13; left30b): now each such fact is
    asked, naming the first other card's file and fact (by file name) citing the place. Only a card file citing a
    source of its own (one no card file but those ``added`` adds facts to cites: its own datasheet, or one the copies
    added beside it share), or re-citing a fact to a place of its own with another figure (base units) than the card
    file it copies (the one left by the change sharing the most places with it) states at that fact path, is asked
    (an "H100 NVL" copied from the H100 SXM5's file, 94 GB and 3.9 TB/s under the datasheet's NVL column, asked 0 of
    its 17 facts; slip52: now 14): a copy citing only the sources
    other cards cite (a plain copy, or one with a locator reworded) describes what the card it copies describes, as
    slip round 32 decided, and is asked what :func:`asked` asks. An
    ``assumed`` fact is a placeholder, not a figure read at the place (every real card's 512 GiB ``host.capacity``):
    not asked. By
    ``(file, fact path)``; facts asked nothing are left out. Linear in the facts ``cards`` holds. Raises nothing."""
    wanted = [(rel, path) for rel, path in added if path in cards.get(rel, {})]
    if not wanted:
        return {}
    holders: dict[tuple[str, str], dict[str, list[str]]] = {}  # place -> file -> its fact paths citing it
    for rel in sorted(cards):
        for path, fact in cards[rel].items():
            for place in _places_of(fact):
                holders.setdefault(place, {}).setdefault(rel, []).append(path)
    sources: dict[str, set[str]] = {}  # source id -> the card files citing it
    for place, files in holders.items():
        sources.setdefault(place[0], set()).update(files)

    adding = set(rel for rel, _ in wanted)

    def own_place(rel: str) -> bool:
        # A source of ``rel``'s that only files this change adds facts to cite: its own document, or one the copies
        # it comes with share (two or 1,000 copies of the H200's file re-citing one fact to one new datasheet each
        # held a source another card file cites, and none was asked a thing; attack round 55).
        return any(sources[place[0]] <= adding for fact in cards[rel].values() for place in _places_of(fact))

    def moved_from_copied(rel: str) -> bool:
        # A copy stating another figure than a card file it shares places with, at the same fact path, describes
        # another card (the H100 SXM5's file retitled "H100 NVL", its capacity and bandwidth re-cited to the same
        # datasheet's NVL column, 15 facts still citing the SXM column and benchmark: 0 of 17 asked; slip52).
        # The card copied: the file this change leaves that shares the most places with ``rel`` (a place every card
        # cites, the CUDA guide's shared-memory banks, names no one card).
        mine = cards[rel]
        shared: dict[str, int] = {}
        for fact in mine.values():
            for place in _places_of(fact):
                for r in holders.get(place, {}):
                    if r not in adding:
                        shared[r] = shared.get(r, 0) + 1
        if not shared:
            return False
        copied = cards[max(sorted(shared), key=lambda r: shared[r])]
        theirs = {place for fact in copied.values() for place in _places_of(fact)}
        # Re-cited to a place of its own with another figure (a figure moved under the copied card's own citation
        # is asked by :func:`asked`, as slip round 32 decided, and is no sign of another card).
        return any(path in copied and copied[path].value != fact.value
                   and not set(_places_of(fact)) <= theirs
                   for path, fact in mine.items() if fact.provenance is not Provenance.ASSUMED)

    borrowing = {rel for rel in dict.fromkeys(rel for rel, _ in wanted) if own_place(rel) or moved_from_copied(rel)}
    out = {}
    for rel, path in wanted:
        fact = cards[rel][path]
        if rel not in borrowing or fact.provenance is Provenance.ASSUMED:
            continue
        for place in _places_of(fact):
            held = holders.get(place, {})  # a card file this change leaves as it was first (the one copied)
            found = next(((r, p) for r, p in held.items() if r not in adding), None) or next(
                ((r, p) for r, p in held.items() if r != rel), None)
            if found is not None:
                # that file's fact at the same path when it cites the place too, else its first: a copy's scale read
                # "h100_sxm5_80gb.toml: on_chip.bandwidth cites the same place" (walkthrough 41)
                other = (found[0], path if path in found[1] else found[1][0])
                out[(rel, path)] = (f"{escaped(other[0])}: {escaped(other[1])} cites the same place, another card's: "
                                    f"does {escaped(place[0])}: {escaped(place[1])} state "
                                    f"{_asked_figure(fact, place)} of what {escaped(rel)} describes?")
                break
    return out


def borrowed_measurements(cards: Mapping[str, Mapping[str, Fact]]) -> dict[tuple[str, str], str]:
    """The measured card facts of ``cards`` (file → fact path → fact) that cite a place (source and locator, or a
    figure input's: :func:`_places_of`) a measured fact of another card file cites, each with what
    :func:`another_cards` (the one ``diff`` asks of an added card's facts) asks of it: the other file and fact citing
    it, and whether the place states that figure of what this file describes. One measurement is of one device: two
    card files whose facts both call it ``measured`` are a card and its copy (the MI300X's file copied for an MI325X,
    its bandwidth set to 6 TB/s and the stream shares recomputed: the MI300X's BabelStream rate over the MI325X's
    bandwidth, still "measured"; walkthrough 117: ``check`` said it only while the shares were stale, ``fact
    recompute`` and ``fact set``'s hint never). A fact citing another card's measurement as ``estimated`` or
    ``assumed`` says so and is not named (the A100 PCIe's shares from the SXM4's benchmark). Which of the two files
    is the copy no file says: both are named. By ``(file, fact path)``; linear in the facts ``cards`` holds. Raises
    nothing."""
    holders: dict[tuple[str, str], set[str]] = {}
    measured = [(rel, path, fact) for rel in sorted(cards) for path, fact in cards[rel].items()
                if fact.provenance is Provenance.MEASURED]
    for rel, _, fact in measured:
        for place in _places_of(fact):
            holders.setdefault(place, set()).add(rel)
    added = [(rel, path) for rel, path, fact in measured
             if any(len(holders[place]) > 1 for place in _places_of(fact))]
    if not added:
        return {}
    shared = {rel: facts for rel, facts in cards.items()}
    asked_of = another_cards(shared, added)
    out = {}
    for rel, path in added:
        ask = asked_of.get((rel, path))
        if ask is None:  # another_cards asks only a card it takes for a copy: the place, said plainly
            fact = cards[rel][path]
            place = next(p for p in _places_of(fact) if len(holders[p]) > 1)
            other = sorted(holders[place] - {rel})[0]
            ask = (f"{escaped(other)} cites the same place, another card's: does {escaped(place[0])}: "
                   f"{escaped(place[1])} state {_asked_figure(fact, place)} of what {escaped(rel)} describes?")
        out[(rel, path)] = ask
    return out


#: The stable ``code`` of a warning of :func:`borrowed_lines` in ``--json`` (``fact set``, ``fact recompute``,
#: ``check``'s ``coded_warnings``): a measured fact citing the place another card's measured fact cites.
MEASURED_ELSEWHERE = "measured_elsewhere"


def warning_json(code: str, text: str) -> dict[str, str]:
    """``{"code", "text"}``: one warning as ``--json`` gives it (``fact set``, ``fact recompute`` ``warnings``;
    ``check``'s ``coded_warnings``), ``code`` stable (:data:`MEASURED_ELSEWHERE`, …), ``text`` the line stderr
    prints after ``passprice: warning:``. Raises nothing."""
    return {"code": code, "text": text}


def warning_code(line: str) -> str:
    """The code of one of ``check``'s warning lines: :data:`MEASURED_ELSEWHERE` for a line of :func:`borrowed_lines`,
    :data:`passprice.sources.UNPINNED_EXCERPT` for one of :func:`passprice.sources.unpinned_line`,
    :data:`passprice.sources.PAGES_DECLARATION` for one of :func:`passprice.sources.pages_declaration_lines`,
    ``other`` for a warning given no code of its own yet. Raises nothing."""
    from passprice.lineage import COPIED_INPUTS
    from passprice.sources import (
        PAGES_DECLARATION,
        PAGES_DECLARATION_WORDS,
        PAGES_NAMED_WORDS,
        UNPINNED_EXCERPT,
        UNPINNED_WORDS,
    )

    if f" is measured but {COPIED_INPUTS} measured fact (" in line:
        return MEASURED_ELSEWHERE
    if PAGES_DECLARATION_WORDS in line or PAGES_NAMED_WORDS in line:
        return PAGES_DECLARATION
    return UNPINNED_EXCERPT if ": source.excerpt: " in line and UNPINNED_WORDS in line else "other"


def borrowed_lines(cards: Mapping[str, Mapping[str, Fact]], file: str | None = None) -> list[str]:
    """One line for each fact :func:`borrowed_measurements` names (of ``file`` alone when given): ``FILE: PATH is
    measured but cites the same place as another card's measured fact (…): …; re-cite it to a measurement of this
    card, or mark it estimated (`passprice fact set`)``. ``check``, ``fact set`` and ``fact recompute`` print them as
    warnings. Raises nothing."""
    from passprice.lineage import COPIED_INPUTS

    return [f"{escaped(rel)}: {escaped(path)} is measured but {COPIED_INPUTS} measured fact ({ask}): one measurement "
            "is of one device; re-cite it to a measurement of this card, or mark it estimated (`passprice fact set "
            "--provenance estimated`, saying whose figure it is in its note)"
            for (rel, path), ask in sorted(borrowed_measurements(cards).items()) if file is None or rel == file]


def copied_words(cards: Mapping[str, Mapping[str, Fact]], tables: Mapping[str, Mapping[str, Any]],
                 added: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """What a reviewer must verify of the words a card copy keeps as copied while its figures moved: each added card
    file of ``added`` (``(file, fact path)``) that copies another file of ``cards`` (file → fact path → fact, HEAD's
    card files; the copied one is the file the change leaves that shares the most places with it, as
    :func:`another_cards` finds it) and moves at least one figure from that file's at the same path (an assumed or a
    derived fact aside: a derived one moves with its inputs). Asked, by ``(file, fact path)``: a fact's note left word
    for word as the copied file's, under a value that moved (the H100 SXM5's ``memory.capacity`` note, "from 5 x 16
    GiB HBM3 stacks", under an NVL copy's 94 GB) or stating a figure the copy moved (:func:`states`); and, on the
    copy's first moved fact, its ``[card]`` ``variant`` left as the copied file's (``tables``: file → its ``[card]``
    table; "SXM5, 700 W, HBM3" under the NVL copy) and its ``[card]`` ``note`` when that states a figure the copy
    moved. Both stood unasked (issue 13). Linear in the facts ``cards`` holds. Raises nothing."""
    wanted = {(rel, path) for rel, path in added if path in cards.get(rel, {})}
    adding = {rel for rel, _ in wanted}
    holders: dict[tuple[str, str], set[str]] = {}
    for rel in sorted(cards):
        if rel in adding:
            continue
        for fact in cards[rel].values():
            for place in _places_of(fact):
                holders.setdefault(place, set()).add(rel)
    out: dict[tuple[str, str], str] = {}

    def ask(key: tuple[str, str], what: str) -> None:
        out[key] = f"{out[key]}; {what}" if key in out else what

    for rel in sorted(adding):
        shared: dict[str, int] = {}
        for fact in cards[rel].values():
            for place in _places_of(fact):
                for r in holders.get(place, ()):
                    shared[r] = shared.get(r, 0) + 1
        if not shared:
            continue
        copied = max(sorted(shared), key=lambda r: shared[r])
        theirs = cards[copied]
        # a derived figure moves with its inputs (check recomputes it): its note, a rule for every card, is not asked
        # for that (an H200 copy at 4.8 TiB/s asked the 3 stream shares' notes)
        moved = [(path, theirs[path], fact) for path, fact in cards[rel].items()
                 if path in theirs and theirs[path].value != fact.value and fact.provenance is not Provenance.ASSUMED
                 and fact.derivation is None]
        if not moved:
            continue

        def moved_stated(text: str | None, moved: list[tuple[str, Fact, Fact]] = moved) -> list[str]:
            return [f"{path} {_shown(old.amount, old.unit)} (here {_shown(new.amount, new.unit)})"
                    for path, old, new in moved if states(old.amount, old.unit, text)]

        for path, fact in cards[rel].items():
            old = theirs.get(path)
            if (rel, path) not in wanted or fact.note is None or old is None or fact.note != old.note:
                continue
            if old.value != fact.value and fact.derivation is None:
                ask((rel, path), f"its note is {escaped(copied)}: {escaped(path)}'s word for word, written of "
                                 f"{_shown(old.amount, old.unit)}: is it true of {_shown(fact.amount, fact.unit)}?")
            elif stated := moved_stated(fact.note):
                ask((rel, path), f"its note, as {escaped(copied)} has it, states {', '.join(stated)}: is it this "
                                 "card's?")
        first = next(((rel, path) for path, _, _ in moved if (rel, path) in wanted), None)
        mine, their = tables.get(rel) or {}, tables.get(copied) or {}
        if first is None:
            continue
        variant = mine.get("variant")
        if isinstance(variant, str) and variant and variant == their.get("variant"):
            ask(first, f"its [card] variant '{escaped(variant)}' is {escaped(copied)}'s as copied, whose figures "
                       f"this card moved ({', '.join(escaped(p) for p, _, _ in moved)}): does it describe this card?")
        note = mine.get("note")
        if isinstance(note, str) and note == their.get("note") and (stated := moved_stated(note)):
            ask(first, f"its [card] note is {escaped(copied)}'s as copied and states {', '.join(stated)}: is it "
                       "this card's?")
    return out


def _asked_figure(fact: Fact, place: tuple[str, str]) -> str:
    """What a derived ``fact`` takes from ``place``, as a reviewer finds it there: each figure input of its
    derivation read at ``place`` (at the fact's own citation: each read in the fact's own source), by name and as
    written, and the
    formula (``dot 3.18 TB/s, the input its derivation dot / bandwidth reads there``); a copied stream share was asked
    whether ``'Dot 3.18 TB/s'`` states 0.9493, a figure no document states (issue 13). The fact's own figure for a
    fact without a derivation, or one whose figure inputs none read at ``place``. Raises nothing."""
    if isinstance(fact.derivation, Derivation):
        own = place == _place(fact.source, fact.locator)
        read = [i for i in fact.derivation.inputs if i.kind == "figure"
                and (_place(i.source or fact.source, i.locator) == place
                     or (own and (i.source or fact.source) == fact.source))]
        if read:
            said = ", ".join(f"{i.name} {i.shown()}" for i in read)
            return (f"{said}, the {'input' if len(read) == 1 else 'inputs'} its derivation {fact.derivation.formula} "
                    f"reads there (not its {_shown(fact.amount, fact.unit)})")
    return _shown(fact.amount, fact.unit)


#: A number and the word after it in a locator (``7 HBM3E``, ``16 GB``, ``2.0 GHz``, ``50,000 block-scale``): a
#: figure a basis names, held by the word that says what it counts.
_TERM = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?) ?([A-Za-z][\w/-]*)")
#: Words after a number that name the estimate's own arithmetic or a place in a document, not a figure a source
#: states (``0.96 x the Mul share``, ``page 2``).
_NOT_FIGURE = frozenset({"x", "times", "less", "more", "of", "the", "a", "an", "and", "or", "to", "per", "at", "in",
                         "on", "from", "by", "for", "with", "is", "as"})
_PLACE = frozenset({"page", "pages", "p", "pp", "table", "figure", "fig", "section", "row", "column", "slide",
                    "chapter", "line", "lines", "step", "item", "note"})


def basis_terms(text: str | None) -> dict[tuple[float, str], str]:
    """The figures ``text`` names with the word after each (:data:`_TERM`, after :func:`_plain`), as ``(number, word
    in lower case) → as written``: neither a number after a word naming a place (``page 2``, ``Table 3``) nor one
    whose next word is the estimate's own arithmetic (``0.96 x``, :data:`_NOT_FIGURE`). Raises nothing."""
    if not text:
        return {}
    plain = _plain(text)
    out: dict[tuple[float, str], str] = {}
    for found in _TERM.finditer(plain):
        before = plain[:found.start()].split()[-1:]
        if before and before[0].lower().strip(".:#([,") in _PLACE:
            continue
        word = found.group(2).lower().rstrip("-/")
        if word in _NOT_FIGURE:
            continue
        try:
            number = float(found.group(1).replace(",", ""))
        except ValueError:
            continue
        out.setdefault((number, word), found.group(0))
    return out


@attrs.frozen
class Carried:
    """What the registry recorded of one source before a change: ``terms`` the figures its record, the registry
    document it names and the facts citing it named (:func:`basis_terms` of each), ``what`` those in words (``its
    record, the document facts/cards/ws1_hypothetical.toml and 14 facts citing it``)."""

    terms: frozenset[tuple[float, str]]
    what: str


def uncarried(fact: Fact, carried: Callable[[str], Carried | None]) -> str | None:
    """What an added estimated or assumed fact (no derivation) asks when its locator names figures (:func:`basis_terms`)
    that nothing the registry recorded of its source before the change carries (``carried``: ``None`` for a source
    the change registers, which the review lists under *Sources* to verify as a whole). A card copied from WS1 with
    ``memory.capacity`` 112 GB under ``(7 HBM3E stacks x 16 GB)``, citing the design that says 6 stacks, was added
    with nothing to verify (slip round 36): its basis agrees with itself (:func:`from_basis`), and passprice reads no
    source, but the registry's own record of the source (the design document, the facts citing it) names no 7 HBM3E
    stacks. ``None`` otherwise. Raises nothing."""
    if (fact.provenance in (Provenance.PUBLISHED, Provenance.MEASURED) or fact.derivation is not None
            or fact.source is None or not fact.locator):
        return None
    known = carried(fact.source)
    if known is None:
        return None
    missing = [shown for key, shown in basis_terms(fact.locator).items() if key not in known.terms]
    if not missing:
        return None
    return (f"its basis names {', '.join(escaped(m) for m in missing[:3])}, which nothing the registry recorded of "
            f"{escaped(fact.source)} before this change names ({escaped(known.what)}): does {escaped(fact.source)}: "
            f"{escaped(fact.locator)} give {_shown(fact.amount, fact.unit)}, {fact.provenance.value}?")


def quote_holds_another(amount: float, unit: str, spans: Sequence[str]) -> list[str]:
    """The figures the quoted ``spans`` of a locator state with a unit of the dimension of ``amount`` ``unit`` when
    none of their numbers is that figure: each as written, with its amount in ``unit`` where written in another
    (:func:`in_own_unit`, the reading behind the review's ``the locator quotes …``; ``8 TB/s`` is ``8000 GB/s``, a
    size in a binary prefix its decimal one as :func:`other_figures` reads it, and a bare number equal to ``amount``
    is its figure). Empty where the spans state no figure of that dimension, or one is its own, or ``unit`` is ``1``
    (a count or share has no unit to read a quoted figure by). The one rule ``check``, ``audit`` and the review
    (:func:`passprice.sources.quote_check`, state ``MISMATCH``) hold a figure of any provenance without a derivation
    (save :func:`passprice.sources.quotes_basis`'s estimates), and each figure a derivation reads from a document,
    to: a new user's card kept ``memory.bandwidth`` 8.2 TB/s under its quote
    ``'Peak Memory Bandwidth 8 TB/s'``, and ``audit`` said ``checked`` (tests/test_fix53w.py). Raises nothing."""
    if unit == "1" or not spans:
        return []
    return in_own_unit(amount, unit, " | ".join(spans))  # (joined so that no span's number reads the next's word)
