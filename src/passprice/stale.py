"""A price never shows a derived fact as sound when its inputs have moved: the facts a price rests on are recomputed
from their derivations (:func:`passprice.derivations.recheck`, the check ``passprice check`` makes), and a stale,
mismatched or broken one is named on one line beside the price or audit that rests on it, with the input that
changed, instead of a derivation that reads "derived from 4.8 TB/s" beside a bandwidth of 5.2 TB/s.

A fact's derivation names inputs of its own record (a card's facts, a drafting method's ``acceptance.i``, a routing
record's two facts), so each record is rechecked on its own facts; a serving stack's fitted facts carry their fit
as text and are not rechecked here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from passprice.derivations import Finding, recheck
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
        stale = [(p, f, w) for p, f, w in self.findings if f.kind == "stale"]
        other = [f for _, f, _ in self.findings if f.kind != "stale"]
        parts = []
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
