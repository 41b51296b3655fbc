"""A price never shows a derived fact as sound when its inputs have moved: the facts a price rests on are recomputed
from their derivations (:func:`passprice.derivations.recheck`, the check ``passprice check`` makes), and a stale,
mismatched or broken one is named on one line beside the price or audit that rests on it, with the input that
changed, instead of a derivation that reads "derived from 4.8 TB/s" beside a bandwidth of 5.2 TB/s.

A fact's derivation names inputs of its own record (a card's facts, a drafting method's ``acceptance.i``, a routing
record's two facts), so each record is rechecked on its own facts; a serving stack's fitted facts carry their fit
as text and are not rechecked here. Across records, one figure of a source is quoted once per derivation that reads
it (a share measured on one card and borrowed by another quotes the same figure in both): :func:`figure_quotes`
finds a figure quoted with two values, so correcting it on one card leaves the borrowing cards' facts flagged as
stale, not silently apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from passprice.derivations import Derivation, Finding, recheck
from passprice.errors import InputError
from passprice.facts import Fact

#: Lock-path prefixes of the records a price reads besides the card, and the prefix a fact has in its own file.
_RECORDS = (("draft.", ""), ("routing.", ""))


def _record(path: str, facts: Mapping[str, Fact]) -> tuple[str, dict[str, Fact]]:
    """The path of ``path`` (a lock path) inside its record, and that record's facts by their own paths."""
    for prefix, own in _RECORDS:
        if path.startswith(prefix):
            return own + path[len(prefix) :], {
                own + p[len(prefix) :]: f for p, f in facts.items() if p.startswith(prefix)
            }
    return path, {p: f for p, f in facts.items() if not p.startswith(("draft.", "routing.", "stack."))}


#: The longest :meth:`Stale.line` an audit prints whole as its ``STALE:`` line; a longer one is summarised.
SUMMARY_CHARS = 300
#: How many of the largest moves a summarised ``STALE:`` line names.
SUMMARY_MOVES = 3


@attrs.frozen
class Stale:
    """The facts a price rests on whose derivation does not give them today: ``findings``, each (lock path, what
    recomputing it found, its value as written)."""

    findings: tuple[tuple[str, Finding, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.findings)

    def paths(self) -> tuple[str, ...]:
        """The lock paths of the facts found."""
        return tuple(p for p, _, _ in self.findings)

    def line(self) -> str:
        """One line: which facts are stale (or mismatched, or broken), the inputs that changed since they were
        derived, and their written values against what today's inputs give; empty when none is."""
        if not self.findings:
            return ""
        # a stale finding naming no input is a stack fit's (its runs moved: its message says which), said as it is
        stale = [(p, f, w) for p, f, w in self.findings if f.kind == "stale" and not f.follows and f.changed]
        # a stack fit's finding covers several facts (one a lock path each): its message said once
        other = list(dict.fromkeys(f for _, f, _ in self.findings
                                   if f.kind != "stale" or (not f.follows and not f.changed)))
        parts = []
        follow = [(p, f) for p, f, _ in self.findings if f.kind == "stale" and f.follows]
        if follow:
            # A written value that still follows from today's inputs was "stale … priced on its written value
            # (streams.read 0.9493, recomputed 0.9493)": a warning of a move the price does not make (round 33).
            many = len(follow) > 1
            inputs = list(dict.fromkeys(f"{c.path} {c.recorded} when derived, {c.now or 'gone'} now"
                                        for _, f in follow for c in f.changed))
            parts.append(
                f"{', '.join(p for p, _ in follow)} {'record' if many else 'records'} inputs that changed "
                f"({'; '.join(inputs)}), but {'their values still follow' if many else 'its value still follows'} "
                f"from them; `passprice check` names {'each' if many else 'it'} (update the derivation)"
            )
        if stale:
            names = ", ".join(p for p, _, _ in stale)
            many = len(stale) > 1
            inputs = list(dict.fromkeys(f"{c.path} {c.recorded} when derived, {c.now or 'gone'} now"
                                        for _, f, _ in stale for c in f.changed))
            recomputed = "; ".join(f"{p} {w}, recomputed {f.expected}" for p, f, w in stale if f.expected)
            parts.append(
                f"{names} {'are stale derived facts' if many else 'is a stale derived fact'}: input "
                f"{'; '.join(inputs)} — priced on {'their' if many else 'its'} written value{'s' if many else ''} "
                f"({recomputed}); `passprice check` names {'each' if many else 'it'}"
            )
        parts += [f.message for f in other]
        return "; ".join(parts)

    def summary(self, most: int = SUMMARY_CHARS) -> str:
        """:meth:`line`, when it is at most ``most`` characters or names one finding; else one short line: how many
        facts do not follow, the largest moves (:data:`SUMMARY_MOVES` of them, by the relative change
        :attr:`~passprice.derivations.Finding.moved`), the command that fixes them when the findings tell one, and
        that each fact's details are under it. Left182: ``audit SERVING --stack S`` of a stale fit printed one
        ``STALE:`` line of about 2,400 characters, each of six findings' whole message, repeated under each fact."""
        whole = self.line()
        if len(whole) <= most or len(self.findings) < 2:
            return whole
        paths = list(dict.fromkeys(q for p, f, _ in self.findings for q in (p, *f.also)))
        ranked = sorted((f for _, f, _ in self.findings if f.moved is not None and f.move),
                        key=lambda f: -(f.moved or 0.0))[:SUMMARY_MOVES]
        fixes = list(dict.fromkeys(f.fix for _, f, _ in self.findings if f.fix))
        said = f"{len(paths):,} derived facts the price rests on do not follow from today's inputs"
        if ranked:
            said += f" (largest moves: {', '.join(str(f.move) for f in ranked)})"
        said += f"; fix: `{'`, `'.join(fixes)}`" if fixes else "; `passprice check` names each"
        return said + "; each fact's details below, marked STALE"

    def to_json(self) -> list[dict[str, Any]]:
        """One object a fact: ``{"path", "kind", "changed", "expected", "message", "value"}`` (``path`` its lock
        path, ``value`` as written)."""
        return [{**f.to_json(), "path": p, "value": w} for p, f, w in self.findings]


def stale_rested_on(facts: Mapping[str, Fact], rests_on: Iterable[str]) -> Stale:
    """Recompute each fact of ``facts`` (by lock path, as :meth:`passprice.servings.Resolved.facts` gives them) that
    the price rests on (``rests_on``) from its derivation, against the other facts of its record; the ones that do
    not follow (stale: an input moved; mismatch; broken), in ``rests_on`` order."""
    out = []
    for path in rests_on:
        fact = facts.get(path)
        if fact is None or fact.derivation is None:
            continue
        own, record = _record(path, facts)
        found = recheck(own, fact, record)
        if found is not None:
            out.append((path, found, fact.describe()))
    return Stale(tuple(out))


def figure_quotes(records: Iterable[tuple[str, Mapping[str, Fact]]]) -> list[str]:
    """One line per figure of a source that two derivations quote with different values: derivation inputs read from
    a source (``figure`` inputs) with the same source, locator and input name are one figure, and must carry one
    value (compared in base units). ``records`` are (file, facts by path); each line names the source, the locator,
    every value with where it is quoted, and says that the facts derived from the copy that differs are stale."""
    quotes: dict[tuple[str, str, str], dict[Any, list[tuple[str, str]]]] = {}
    shown: dict[tuple[str, str, str], dict[Any, str]] = {}
    for file, facts in records:
        for path, fact in facts.items():
            derivation = fact.derivation
            if not isinstance(derivation, Derivation):
                continue
            for i in derivation.inputs:
                if i.kind != "figure":
                    continue
                try:
                    value = i.quantity()
                except InputError:
                    continue  # a unit passprice cannot read: check reports the derivation as broken
                key = (i.source or fact.source or "", i.locator or "", i.name)
                quotes.setdefault(key, {}).setdefault(value, []).append((file, path))
                shown.setdefault(key, {}).setdefault(value, i.shown())
    out = []
    for (source, locator, name), values in quotes.items():
        if len(values) < 2:
            continue
        where = "; ".join(f"{shown[(source, locator, name)][v]} in {_places(w)}" for v, w in values.items())
        out.append(
            f"figure {name} of source {source} ({locator}) is quoted with {len(values)} values: {where}; the facts "
            "derived from the copy that differs from the source are stale: quote it as the source gives it"
        )
    return out


def _places(where: Iterable[tuple[str, str]]) -> str:
    """``facts/cards/a40.toml (streams.rewrite, streams.append), …``: fact paths grouped by file, in order."""
    files: dict[str, list[str]] = {}
    for file, path in where:
        files.setdefault(file, []).append(path)
    return ", ".join(f"{file} ({', '.join(paths)})" for file, paths in files.items())
