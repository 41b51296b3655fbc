"""Which of the figures a quote states is the card's: a spec row quoting every column's figure, an nvidia-smi
``used / total`` line, a host link's total and per-direction rates.

A figure moved to another figure of its own quote (the H200's FP32 67 → 60 TFLOPS under ``'FP32 67 TFLOPS 60
TFLOPS'``, the row's H200 NVL figure) passed ``check``: the MISMATCH rule
(:func:`passprice.addedfacts.quote_holds_another`) asks only whether one of the quoted figures is the fact's. Where
the record says which figure is the card's, this module reads it (:func:`selected`): the column its locator names,
placed by the locator's own words (``H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL
figure)``, ``A100 80GB SXM column (the second)``, ``row '…' (P100, V100, A100)`` of an ``A100 column``); the total
of ``used / total`` for a capacity; the total or the per-direction rate of a host link by the fact's meaning (a
``both_ways`` input is the total). A moved figure then fails ``check`` and the review (:func:`column_mismatch`,
through :func:`passprice.sources.figures_quoted`'s ``MISMATCH``); where nothing says which, ``check`` warns naming
the figures (:func:`undecided`). tests/test_fix56.py."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

import attrs

from passprice.facts import Fact

#: Ordinal words a locator places a column by (``A100 80GB PCIe column (the first)``).
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
#: A column the locator names: the words before ``column`` (``H200 SXM column``, ``A100 column``), after a comma,
#: colon or the locator's start.
_COLUMN = re.compile(r"(?:^|[,;:(]\s*)((?:[A-Za-z0-9][\w.+-]*\s+){0,4}?[A-Za-z0-9][\w.+-]*)\s+column\b")
_ORDINAL_AFTER = re.compile(r"\s*\(the (" + "|".join(_ORDINALS) + r")\b")
#: A parenthesized list of a row's cells (``(P100, V100, A100)``, ``(a row: its label, the H200 SXM figure, …)``).
_LIST = re.compile(r"\(([^()']*,[^()']*)\)")


@attrs.frozen
class Figure:
    """A figure a quoted span states in the fact's dimension: ``shown`` as written, ``start`` its offset in the
    span as read (:func:`passprice.addedfacts._plain`), ``value`` in base units."""

    shown: str
    start: int
    end: int
    value: Fraction


@attrs.frozen
class Selection:
    """What a quoted span says of which of its ``figures`` is the card's: ``chosen`` (an index into ``figures``,
    ``None`` when nothing says) and ``why`` (``in the H200 SXM column``, ``the total of used / total``)."""

    figures: tuple[Figure, ...]
    chosen: int | None
    why: str


def _figures(span: str, unit: str) -> tuple[str, tuple[Figure, ...]]:
    """The span as read and the figures it states in ``unit``'s dimension (FLOP and op counted as MACs for a unit
    in MACs), in order."""
    from passprice.addedfacts import _WITH_UNIT, _in_macs, _plain, _reads
    from passprice.derivations import quantity
    from passprice.errors import InputError
    from passprice.textchange import figure_read

    try:
        mine = quantity(1.0, unit)
    except InputError:
        return span, ()
    in_macs = any(name == "MAC" for name, _ in mine.dims)
    plain = _plain(span[:10_000])
    out = []
    for found in _WITH_UNIT.finditer(plain):
        if not _reads(found.group(2)):
            continue
        amount = figure_read(found.group(1))
        if amount is None:
            continue
        try:
            q = quantity(amount, found.group(2))
        except (InputError, ValueError, OverflowError):
            continue
        value, dims = q.value, q.dims
        if in_macs and dims != mine.dims:
            value, dims = _in_macs(value, dims)
        if dims == mine.dims:
            out.append(Figure(found.group(0), found.start(), found.end(), value))
    return plain, tuple(out)


def is_own(amount: float, unit: str, figure: Figure) -> bool:
    """Whether ``figure`` is ``amount`` ``unit`` (the same quantity, or one size in a decimal and a binary prefix,
    as :func:`passprice.addedfacts.other_figures` reads it)."""
    from passprice.addedfacts import _WITH_UNIT, _size_alike
    from passprice.derivations import quantity
    from passprice.errors import InputError
    from passprice.textchange import figure_read

    try:
        mine = quantity(amount, unit)
    except (InputError, ValueError, OverflowError):
        return False
    if figure.value == mine.value:
        return True
    written = _WITH_UNIT.fullmatch(figure.shown)
    their = figure_read(written.group(1)) if written is not None else None
    return written is not None and their is not None and _size_alike(amount, unit, their, written.group(2),
                                                                       (("B", 1),))


def _bytes(unit: str) -> bool:
    """Whether ``unit`` is a size in bytes (a capacity: nvidia-smi's ``used / total`` states it second)."""
    from passprice.derivations import quantity
    from passprice.errors import InputError

    try:
        return quantity(1.0, unit).dims == (("B", 1),)
    except InputError:
        return False


def _column(locator: str, before: int) -> tuple[str, int | None] | None:
    """The column ``locator`` names last before offset ``before`` (its name, and its place where an ordinal right
    after it gives one: ``(the second)`` → 1)."""
    found = None
    for m in _COLUMN.finditer(locator[:before]):
        found = m
    if found is None:
        return None
    ordinal = _ORDINAL_AFTER.match(locator, found.end())
    return found.group(1), (_ORDINALS.index(ordinal.group(1)) if ordinal is not None else None)


def _cells(locator: str, opening: int, closing: int) -> list[str] | None:
    """The row's cells a locator lists in parentheses right after the quote ending at ``closing`` (``'…' (P100,
    V100, A100)``), else in the last such list before the quote opening at ``opening`` (``(a row: its label, the
    H200 SXM figure, the H200 NVL figure): '…'``); a label cell left out."""
    rest = locator[closing + 1:]
    listed = _LIST.match(locator, closing + 1 + len(rest) - len(rest.lstrip()))
    if listed is None:
        found = list(_LIST.finditer(locator[:opening]))
        listed = found[-1] if found else None
    if listed is None:
        return None
    text = listed.group(1).split(":", 1)[1] if ":" in listed.group(1).split(",")[0] else listed.group(1)
    cells = [c.strip() for c in text.split(",")]
    return [c for c in cells if c and not c.lower().endswith("label")]


def _place(name: str, cells: Sequence[str]) -> int | None:
    """Where the column ``name`` is among ``cells``: the one cell that is it, or else the one naming it in whole
    words (``the H200 SXM figure``)."""
    exact = [i for i, c in enumerate(cells) if c.lower() == name.lower()]
    if len(exact) == 1:
        return exact[0]
    pattern = re.compile(rf"(?i)(?<![\w.+-]){re.escape(name)}(?![\w.+-])")
    named = [i for i, c in enumerate(cells) if pattern.search(c)]
    return named[0] if len(named) == 1 else None


#: A host link's total, and its rate in each direction, as a sentence says which (``128 GB/sec total bandwidth (64
#: GB/sec in each direction)``).
_TOTAL_AFTER = re.compile(r"(?i)\s*(?:total|bidirectional|both ways|in both directions)\b")
_EACH_AFTER = re.compile(r"(?i)[\w\s]{0,12}?\b(?:in each direction|per direction|each way|one way)\b")


#: A figure another card's, written after ``vs`` (``164 KB (vs 96 KB on V100)``).
_COMPARED = re.compile(r"(?i)\b(?:vs\.?|versus|compared (?:to|with))\s*$")
#: A host link's figure in a cell listing links: the one after ``PCIe`` (``PCIe Gen5: 128GB/s``).
_PCIE_BEFORE = re.compile(r"(?i)\bPCIe\b[^|]{0,12}$")


def selected(path: str, name: str, unit: str, locator: str, opening: int, span: str) -> Selection | None:
    """Which of the figures of ``unit``'s dimension that the quoted ``span`` (opening at offset ``opening`` of
    ``locator``) states is the card's, when it states two or more distinct ones: ``None`` when it states fewer. The
    fact's key ``path`` and its figure's ``name`` (a derivation input's, else ``""``) give its meaning: a capacity
    (unit of bytes) under ``used / total`` is the total; a host link's (``host.*``) ``both_ways`` figure is the one a
    sentence calls total, another host figure the one in each direction; a column the locator names (its place by an
    ordinal after it, or among the cells the locator lists next to the quote) picks the figure at its place, a host
    figure among those after ``PCIe``. Raises nothing."""
    plain, figures = _figures(span, unit)
    if len({f.value for f in figures}) < 2:
        return None
    every = tuple(figures)
    if len(figures) == 2 and plain[figures[0].end:figures[1].start].strip() == "/" and _bytes(unit):
        return Selection(every, 1, "as the total of its used / total")
    host = re.search(r"(?:^|[.:])host\.", path) is not None  # host.read, cards.b200.host.read, b200:host.read
    compared = [i for i, f in enumerate(figures) if _COMPARED.search(plain[max(0, f.start - 12):f.start])]
    if compared and len({figures[i].value for i in range(len(figures)) if i not in compared}) == 1:
        first = next(i for i in range(len(figures)) if i not in compared)
        return Selection(every, first, "as the figure not compared with")
    if host:
        pcie = [i for i, f in enumerate(figures) if _PCIE_BEFORE.search(plain[:f.start])]
        if pcie and len({figures[i].value for i in pcie}) == 1:
            return Selection(every, pcie[0], "as its PCIe figure")
        totals = [i for i, f in enumerate(figures) if _TOTAL_AFTER.match(plain, f.end)]
        each = [i for i, f in enumerate(figures) if _EACH_AFTER.match(plain, f.end)]
        if totals and each:
            both = name in ("both_ways", "total", "bidirectional")
            chosen = totals if both else each
            if len(chosen) == 1:
                return Selection(every, chosen[0], "as its total" if both else "as its rate in each direction")
            return Selection(every, None, "")
    column = _column(locator, opening)
    if column is None:
        return Selection(every, None, "")
    col_name, place = column
    if place is None:
        cells = _cells(locator, opening, opening + 1 + len(span))
        place = _place(col_name, cells) if cells else None
        if place is None or cells is None:
            return Selection(every, None, "")
        count = len(cells)
    else:
        count = None
    candidates = list(range(len(figures)))
    if host:
        candidates = [i for i, f in enumerate(figures) if _PCIE_BEFORE.search(plain[:f.start])]
    if count is not None and len(candidates) != count:
        return Selection(every, None, "")
    if place >= len(candidates):
        return Selection(every, None, "")
    return Selection(every, candidates[place], f"in its {col_name} column")


def _spans_of(locator: str) -> list[tuple[int, str]]:
    from passprice.sources import _PLACE_AFTER_QUOTE, _compiled, _quotes

    text = locator[:10_000]
    return [(opening, span) for opening, span in _quotes(text)
            if not span.isspace() and not _compiled(_PLACE_AFTER_QUOTE).match(text, opening + 1 + len(span))]


def _listed(figures: Sequence[Figure]) -> str:
    shown = list(dict.fromkeys(f.shown for f in figures))
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def column_mismatch(path: str, name: str, amount: float, unit: str, locator: str, mine: str = "its ") -> list[str]:
    """For each quoted span of ``locator`` that states ``amount`` ``unit`` among other figures of its dimension and
    says another is the card's (:func:`selected`): ``'SPAN' states F in its COLUMN column, not its own A`` (its
    figure moved to the row's other column's). Raises nothing."""
    from passprice.addedfacts import _shown

    out = []
    for opening, span in _spans_of(locator):
        chosen = selected(path, name, unit, locator, opening, span)
        if chosen is None or chosen.chosen is None:
            continue
        if not any(is_own(amount, unit, f) for f in chosen.figures):
            continue
        if is_own(amount, unit, chosen.figures[chosen.chosen]):
            continue
        out.append(f"{span[:80]!r} states {chosen.figures[chosen.chosen].shown} {chosen.why} (of "
                   f"{_listed(chosen.figures)}), not {mine}{_shown(amount, unit)}")
    return out


def undecided(path: str, name: str, amount: float, unit: str, locator: str) -> list[str]:
    """For each quoted span of ``locator`` that states ``amount`` ``unit`` among other figures of its dimension,
    nothing saying which is the card's (:func:`selected`): ``'SPAN' states A, B and C``. Raises nothing."""
    out = []
    for opening, span in _spans_of(locator):
        chosen = selected(path, name, unit, locator, opening, span)
        if chosen is None or chosen.chosen is not None:
            continue
        if any(is_own(amount, unit, f) for f in chosen.figures):
            out.append(f"{span[:80]!r} states {_listed(chosen.figures)}")
    return out


def which_figures(path: str, fact: Fact, only: str | None = None) -> list[str]:
    """``check``'s warnings of ``fact`` (at key ``path``): for its own locator (a fact without a derivation, save
    :func:`passprice.sources.quotes_basis`'s) and each figure input's of its derivation, citing source ``only`` (any
    with ``None``), each quoted span stating its figure among others of its dimension, nothing in the record saying
    which is the card's (:func:`undecided`): ``its quote of SOURCE 'SPAN' states 1480 MHz, 1530 MHz and 1410 MHz:
    which is this card's?`` and how to say it. A figure moved to another of them would pass unseen. Raises
    nothing."""
    from passprice.derivations import Derivation
    from passprice.sources import RUN_UNIT, quotes_basis

    if fact.unit == RUN_UNIT:
        return []
    checks: list[tuple[str, str, str | None, str, float, str]] = []
    if fact.derivation is None and fact.locator and not quotes_basis(fact):
        checks.append(("its quote", "", fact.source, fact.locator, fact.amount, fact.unit))
    if isinstance(fact.derivation, Derivation):
        checks += [(f"its {i.name} figure's quote", i.name, i.source or fact.source, i.locator, i.amount, i.unit)
                   for i in fact.derivation.inputs if i.kind == "figure" and i.locator]
    out = []
    for what, name, sid, locator, amount, unit in checks:
        if unit == "1" or (only is not None and sid != only):
            continue
        out += [f"{what} of {sid} {said}: which is this card's? name its column in the locator (`NAME column (the "
                "first)`), or quote its figure alone" for said in undecided(path, name, amount, unit, locator)]
    return out
