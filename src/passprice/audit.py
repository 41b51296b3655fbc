"""Every price can say which citations it rests on, which of them decide it, and how much it moves with each.

An audit lists every fact a price rests on (path, value and unit, provenance, citation), marks the facts of the term
the pass binds on, names the weakest, and gives each fact's *elasticity*: the % change of tokens/s for a +1 % change of
that fact, measured by re-pricing (a memory-bound price has elasticity ≈ +1 in ``memory.bandwidth`` and ≈ 0 in
``array``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from passprice.cards import Card, card_from_facts, is_card_path
from passprice.facts import Fact, Provenance
from passprice.routing import ROUTING_PATHS
from passprice.serving import Draft, Serving, ServingBind, ServingCost, ServingRefusal
from passprice.tables import text_table

#: The relative change of a fact an elasticity is measured over.
STEP = 0.01


@attrs.frozen
class AuditRow:
    """One fact a price rests on: its ``path`` and ``fact``; whether it belongs to the ``binding`` term; whether it
    carries the price's ``weakest`` provenance; its ``elasticity`` (% tokens/s per +1 % of the fact; ``None`` when
    both a +1 % and a −1 % change are refused) and the ``step`` it was measured over (+0.01, or −0.01 when +1 %
    leaves the fact's range)."""

    path: str
    fact: Fact
    binding: bool
    weakest: bool
    elasticity: float | None
    step: float


@attrs.frozen
class Audit:
    """An audited price: the ``cost`` and one :class:`AuditRow` per fact it rests on, in ``rests_on`` order."""

    cost: ServingCost
    rows: tuple[AuditRow, ...]

    @property
    def weakest(self) -> Provenance:
        """The price's provenance: the weakest fact's."""
        return self.cost.provenance


Pricer = Callable[[Card, Serving], ServingCost]


def binding_paths(cost: ServingCost) -> set[str]:
    """The fact paths of the term the pass binds on that carry part of it: for memory, the bandwidth and each stream
    share with bytes to move; for the host link, the direction that binds and the DMA share; else the one rate."""
    if cost.binds is ServingBind.MEMORY:
        out = {"memory.bandwidth"}
        if cost.weight_bytes > 0:
            out.add("streams.read")
        card_sequences = cost.batch - cost.host_sequences
        if card_sequences > 0 and cost.rewrite_bytes > 0:
            out.add("streams.rewrite")
        if card_sequences > 0 and cost.sequence_bytes - cost.rewrite_bytes > 0:
            out.add("streams.append")
        if cost.routed is not None and cost.routed.bytes > 0:
            # A mixture of experts: how its rows route sets how many experts' bytes the pass streams.
            out.update(ROUTING_PATHS)
        return out
    if cost.binds is ServingBind.HOST:
        return {"host.read", "host.write", "host.stream"}
    return {cost.binds.value}


def _with_fact(card: Card, serving: Serving, path: str, fact: Fact) -> tuple[Card, Serving]:
    """``card`` and ``serving`` with the fact at ``path`` replaced."""
    if path.startswith("draft.acceptance.") and serving.draft is not None:
        i = int(path.rsplit(".", 1)[1]) - 1
        acceptance = list(serving.draft.acceptance)
        acceptance[i] = fact
        draft: Draft = attrs.evolve(serving.draft, acceptance=tuple(acceptance))
        return card, attrs.evolve(serving, draft=draft)
    if path in ROUTING_PATHS and serving.routing is not None:
        if path == "routing.hot_experts":
            routing = attrs.evolve(serving.routing, hot_experts=fact)
        else:
            routing = attrs.evolve(serving.routing, hot_share=fact)
        return card, attrs.evolve(serving, routing=routing)
    facts = {p: f for p, f in card.facts().items() if is_card_path(p)}
    facts[path] = fact
    return card_from_facts(card.name, card.title, facts, card.hypothetical), serving


def audit(card: Card, serving: Serving, pricer: Pricer) -> Audit:
    """Price ``serving`` on ``card`` with ``pricer`` and audit it: every fact it rests on, the binding ones, the
    weakest, and each fact's elasticity by re-pricing with that fact 1 % higher (1 % lower when a higher value is
    refused, e.g. an acceptance of 1).

    Raises :class:`~passprice.serving.ServingRefusal` when the price itself is refused."""
    cost = pricer(card, serving)
    base = cost.tokens_per_s
    binding = binding_paths(cost)
    rows = []
    for path, fact in cost.rests_on:
        elasticity: float | None = None
        used = STEP
        for step in (STEP, -STEP):
            c2, s2 = _with_fact(card, serving, path, fact.scaled(1.0 + step))
            try:
                moved = pricer(c2, s2).tokens_per_s
            except ServingRefusal:
                continue
            elasticity = (moved / base - 1.0) / step
            used = step
            break
        rows.append(AuditRow(path, fact, path in binding, fact.provenance is cost.provenance, elasticity, used))
    return Audit(cost, tuple(rows))


def audit_json(a: Audit, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The audit for ``--json``: the price's tokens/s, bind and provenance, the weakest paths, and one object per
    fact (path, value and unit as written, base value, provenance, cite, binding, weakest, elasticity, step)."""
    return {
        **(extra or {}),
        "tokens_per_s": a.cost.tokens_per_s,
        "binds": a.cost.binds.value,
        "provenance": a.cost.provenance.value,
        "weakest": list(a.cost.weakest),
        "facts": [
            {
                "path": r.path,
                "value": r.fact.amount,
                "unit": r.fact.unit,
                "base_value": r.fact.value,
                "provenance": r.fact.provenance.value,
                "cite": r.fact.cite,
                "binding": r.binding,
                "weakest": r.weakest,
                "elasticity": r.elasticity,
                "step": r.step,
            }
            for r in a.rows
        ],
    }


def audit_text(a: Audit, title: str) -> str:
    """The audit for people: a table of the facts (binding ones marked ``*``, the weakest ``!``) with their
    elasticities, then each citation."""
    rows = []
    for r in a.rows:
        mark = ("*" if r.binding else "") + ("!" if r.weakest else "")
        e = "refused" if r.elasticity is None else f"{r.elasticity:+.3f}" + (" (−1 %)" if r.step < 0 else "")
        rows.append([mark, r.path, r.fact.describe(), r.fact.provenance.value, e])
    lines = [
        title,
        f"  {a.cost.tokens_per_s:,.1f} tokens/s at batch {a.cost.batch:,}, binds on {a.cost.binds.value}; "
        f"weakest provenance {a.cost.provenance.value} ({', '.join(a.cost.weakest)})",
        "",
        text_table(["", "fact", "value", "provenance", "elasticity"], rows, right=(2, 4)),
        "",
        "  * a fact of the binding term   ! carries the weakest provenance",
        "  elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing",
        "",
        "citations:",
    ]
    for r in a.rows:
        lines.append(f"  {r.path}: {r.fact.cite}")
    return "\n".join(lines)
