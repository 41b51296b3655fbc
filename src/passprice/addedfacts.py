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

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

import attrs

from passprice.derivations import Derivation, quantity
from passprice.errors import InputError, escaped
from passprice.facts import Fact, Provenance

#: A figure with its unit in a locator's text: ``4.8TB/s``, ``3,958 TOPS``, ``141GB`` (a number glued to a letter
#: before it, ``pp512``, is a name, not a figure).
_WITH_UNIT = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?) ?([A-Za-z]+(?:/[A-Za-z]+)?)")


def stated_with_unit(text: str) -> list[tuple[str, float, Fraction, tuple[tuple[str, int], ...]]]:
    """The figures ``text`` writes with a unit passprice reads, as ``(as written, amount, value in base units,
    dimension)``; a number whose following word is no unit is left out. Raises nothing."""
    out = []
    for found in _WITH_UNIT.finditer(text[:10_000]):
        try:
            amount = float(found.group(1).replace(",", ""))
            q = quantity(amount, found.group(2))
        except (InputError, ValueError, OverflowError):
            continue
        out.append((found.group(0), amount, q.value, q.dims))
    return out


def quotes_another(fact: Fact) -> str | None:
    """What an added published or measured fact without a derivation asks when its locator writes figures of its
    dimension with their unit and none is its own (by amount or by quantity: ``40 MB`` read as 40 MiB is its own):
    a card copied as the H200 NVL's with ``memory.bandwidth`` 5.2 TB/s under ``'GPU Memory Bandwidth 4.8TB/s'``
    was added with nothing to verify (slip round 32). ``None`` otherwise."""
    if fact.derivation is not None or fact.locator is None or fact.provenance not in (Provenance.PUBLISHED,
                                                                                      Provenance.MEASURED):
        return None
    try:
        mine = quantity(fact.amount, fact.unit)
    except InputError:
        return None
    alike = [(shown, amount, value) for shown, amount, value, dims in stated_with_unit(fact.locator)
             if dims == mine.dims]
    if not alike or any(value == mine.value or amount == fact.amount for _, amount, value in alike):
        return None
    quoted = ", ".join(shown for shown, _, _ in alike[:3])
    return (f"its locator quotes {quoted}, not {_shown(fact.amount, fact.unit)}: does {escaped(fact.source or '')}: "
            f"{escaped(fact.locator)} state {_shown(fact.amount, fact.unit)}?")


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


def _place(source: str | None, locator: str | None) -> tuple[str, str] | None:
    if source is None or locator is None:
        return None
    return source, " ".join(locator.split())


def _shown(amount: float, unit: str) -> str:
    return f"{amount:g}" if unit == "1" else f"{amount:g} {unit}"


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
                               False, fact.amount)
        if isinstance(fact.derivation, Derivation):
            for i in fact.derivation.inputs:
                at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
                if at is not None:
                    q = i.quantity()
                    yield at, Stated(f"{rel}: {path} input {i.name}", i.shown(), q.value, q.dims, False, (rel, path),
                                     True, i.amount)
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
            for in_figures in ((False,) if quoted else (False, True)):
                g = (mine.dims, kind, in_figures)
                items = self.groups.get(g)
                if not items:
                    continue
                n += len(items) - self.counts[g][mine.value]
                n -= sum(1 for s in own if self._group(s) == g and s.value != mine.value)
                j, after = 0, self.next[g]
                while j < len(items):
                    if items[j][1].value == mine.value:
                        j = after[j]
                    elif items[j][1].key == mine.key:
                        j += 1
                    else:
                        if first is None or items[j][0] < first[0]:
                            first = items[j]
                        break
        return (first[1] if first is not None else None), n


def asked(facts: Mapping[str, Mapping[str, Fact]], registered: Iterable[str],
          added: Iterable[tuple[str, str]], quoted: Callable[[str], set[float]]) -> dict[tuple[str, str], str]:
    """What a reviewer must verify of each added fact, by ``(file, fact path)``: ``facts`` holds HEAD's facts of every
    file holding facts (file → fact path → fact), ``registered`` the source ids HEAD registers
    (``sources/ID.toml``), ``added`` the ``(file, fact path)`` pairs the change adds. An added fact is asked about
    when its citation (or an input's) names no registered source, when its locator quotes another figure of its
    dimension and not its own (:func:`quotes_another`), or when a figure it records at a place differs
    (in base units, the same dimension) from one another fact records there (:class:`Stated`; two derived facts'
    own figures aside, and two figures the locator quotes both, ``quoted`` giving the figures a locator quotes:
    ``114 SMs, 14,592 FP32 cores`` states both). Facts asked nothing are left out. Raises nothing."""
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
        other = quotes_another(fact)
        if other is not None:
            asks.append(other)
        own = list(_stated(rel, path, fact))
        for place, mine in own:
            if place not in places:
                places[place] = _Place(at.get(place, []), quoted(place[1]))
            first, n = places[place].others(mine, [s for at_, s in own if at_ == place])
            if first is not None:
                more = f" (and {n - 1} more)" if n > 1 else ""
                asks.append(f"{escaped(first.where)} reads {first.shown} at the place {escaped(mine.where)} cites as "
                            f"{mine.shown}{more}: does {escaped(place[0])}: {escaped(place[1])} state {mine.shown}?")
        if asks:
            out[(rel, path)] = "; ".join(asks)
    return out
