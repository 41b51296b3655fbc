"""Every price can say which citations it rests on, which of them decide it, and how much it moves with each.

An audit lists every fact a price rests on (path, value and unit, provenance, source and locator), marks the facts
of the term the pass binds on, names the weakest, and gives each fact's *elasticity*: the % change of tokens/s for a
+1 % change of that fact, measured by re-pricing (a memory-bound price has elasticity ≈ +1 in ``memory.bandwidth``
and ≈ 0 in ``array``). A lock's audit also gives each fact's floor and its margin over it; every audit gives each
fact's note and derivation, and its citations grouped by source. (Backwards, from a source to what rests on it, is
:mod:`passprice.lineage`.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.cards import Card, card_from_facts, is_card_path
from passprice.errors import escaped
from passprice.facts import Fact, Provenance
from passprice.routing import ROUTING_PATHS
from passprice.serving import Draft, Serving, ServingBind, ServingCost, ServingRefusal
from passprice.sources import (  # the quote check lives with the stored texts, which audit --source reads too
    Lookups,
    QuoteCheck,
    quote_check,
    quotes_counted,
    quotes_summary,
)
from passprice.tables import markdown_code, markdown_prose, markdown_table, markdown_text, text_table

if TYPE_CHECKING:
    from passprice.derivations import Input
    from passprice.gguf_header import GGUFHeader
    from passprice.locks import Lock, Policy, RecordPin
    from passprice.registry import Root
    from passprice.servings import Resolved
    from passprice.sources import Source, StoredText
    from passprice.stacks import Stack
    from passprice.stale import Stale

#: The relative change of a fact an elasticity is measured over (``audit --step PERCENT`` sets another).
STEP = 0.01
#: The largest step ``audit --step`` takes, in percent: a fact 100 % lower is zero, which no price reads.
MAX_STEP_PERCENT = 50.0
#: The smallest step ``audit --step`` takes, in percent (a fraction of 1e-6): a smaller one measures rounding, not
#: the price (attack round 52, ``r1-qwen7b-h200``: ``--step 1e-12`` moved ``streams.read``'s +0.972 to +0.977,
#: ``--step 1e-16`` printed +0.000 for every fact, its fact scaled by ``1 + 1e-18 == 1``, and ``--step 4.9e-324``,
#: 0 once divided by 100, a ZeroDivisionError traceback). At 1e-6 a double's rounding moves an elasticity by about
#: 1e-10, far under the three decimals shown.
MIN_STEP_PERCENT = 1e-4


def parse_step(text: str) -> float:
    """``audit --step``'s ``text``: a percent from :data:`MIN_STEP_PERCENT` to :data:`MAX_STEP_PERCENT`, as
    :func:`passprice.bounds.option_bound` bounds it. Decided in left31 (session 30 listed "``--step`` +N % only"): a
    step is a size, not a direction — each elasticity is measured with the fact that much higher, or that much lower
    where higher is refused (marked ``(−N %)``), so ``-10`` asks nothing ``10`` does not; and a step is relative, the
    audited facts being in different units (B/s, bytes, shares), so one absolute step cannot apply to them all. Raises
    :class:`~passprice.errors.InputError`, one line: the bound's own problem, then what is accepted for a negative
    step, a step written with ``%`` and a step written with a unit."""
    from passprice.bounds import option_bound
    from passprice.errors import InputError

    try:
        return float(option_bound("--step").parse(text))
    except InputError as e:
        raise InputError(f"{e}{_step_hint(text)}") from None


def _step_hint(text: str) -> str:
    """What :func:`parse_step` adds to its line for ``text``: empty for a plain number, else what is accepted."""
    import math
    import re

    size = "a step is a size, not a direction: each fact is moved that much higher, or that much lower where higher "
    number = re.fullmatch(r"\s*([-+]?)\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%?)\s*(.*?)\s*", text)
    if number is None or len(text) > 40:
        return ""
    sign, digits, percent, rest = number.groups()
    magnitude = float(digits)
    if rest:
        return ("; the step is a percent of each fact, not an amount in a unit: the facts audited are in different "
                "units (--step 10 moves each 10 %)")
    fits = math.isfinite(magnitude) and MIN_STEP_PERCENT <= magnitude <= MAX_STEP_PERCENT
    give = f"--step {digits}" if fits else "a percent from 0.0001 to 50"
    if sign == "-" and magnitude != 0:
        return f"; {size}is refused (marked (−N %)): give {give}"
    if percent:
        return f"; write the percent without its % sign: {give}"
    return ""


def step_percent(step: float) -> str:
    """A relative step as the audit prints it, in percent without a trailing zero: 0.01 is ``1 %``, 0.1 ``10 %``,
    0.025 ``2.5 %`` (``%g`` of the percentage, rounded to 6 significant digits)."""
    return f"{abs(step) * 100:.6g} %"


@attrs.frozen
class AuditRow:
    """One fact a price rests on: its ``path`` and ``fact``; whether it belongs to the ``binding`` term; whether it
    carries the price's ``weakest`` provenance; its ``elasticity`` (% tokens/s per +1 % of the fact; ``None`` when
    both a +1 % and a −1 % change are refused) and the ``step`` it was measured over (+0.01, or −0.01 when +1 %
    leaves the fact's range); the ``floor`` a lock's policy sets for it (``None`` without a lock); ``refused``: the
    name of the refusal each step that was refused gave, in the order tried (+1 % first), so an audit can say why an
    elasticity is measured 1 % lower or not at all (walkthrough 29: uniform routing's ``routing.hot_share`` read
    ``refused`` and ``routing.hot_experts`` ``(−1 %)``, and neither the legend nor ``explain`` said what that meant)."""

    path: str
    fact: Fact
    binding: bool
    weakest: bool
    elasticity: float | None
    step: float
    floor: Provenance | None = None
    refused: tuple[str, ...] = ()
    #: For a fact other rows derive from (:func:`derived_from`): the elasticity over the same step with those facts
    #: re-derived from it by their formulas (:func:`rederived_elasticity`); ``None`` for any other fact, or when the
    #: re-derived price is refused or a formula cannot be evaluated (left31).
    rederived: float | None = None
    #: The message of each refusal in :attr:`refused`, in the same order (what ``diff`` says beside a fact whose
    #: elasticity was not measured: "a changed fact is refused" hid that +1 % took a share past 1).
    refused_why: tuple[str, ...] = ()

    @property
    def margin(self) -> int | None:
        """Rungs of the provenance ladder between the fact and its floor: 0 at the floor, 2 for ``published`` over
        a ``derived`` floor, negative below it; ``None`` without a floor."""
        return None if self.floor is None else self.floor.rank - self.fact.provenance.rank


@attrs.frozen
class Audit:
    """An audited price: the ``cost`` and one :class:`AuditRow` per fact it rests on, in ``rests_on`` order."""

    cost: ServingCost
    rows: tuple[AuditRow, ...]
    #: The relative change each elasticity was measured over: :data:`STEP` (1 %), or ``audit --step``'s.
    step: float = STEP

    @property
    def weakest(self) -> Provenance:
        """The price's provenance: the weakest fact's."""
        return self.cost.provenance


Pricer = Callable[[Card, Serving], ServingCost]
#: The pricer of a price made under a serving stack with one of the stack's facts replaced (its lock path, the fact).
Restack = Callable[[str, Fact], Pricer]

#: The card facts whose term a serving stack's share scales (``stack.share.read`` → ``streams.read``): a share is
#: a fact of the binding term when its card fact is.
SHARE_OF = {
    "share.read": ("streams.read",),
    "share.rewrite": ("streams.rewrite",),
    "share.append": ("streams.append",),
    "share.host": ("host.read", "host.write", "host.stream"),
    "share.array": ("array",),
    "share.vector": ("vector",),
    "share.scale": ("scale",),
    "share.float": ("tensor.f16", "tensor.bf16", "tensor.f8"),
}


def stack_binding(path: str, binding: set[str]) -> bool:
    """Whether the stack fact at lock ``path`` (``stack.share.read``, ``stack.cards.CARD.share.read``) scales a
    term of ``binding`` (:func:`binding_paths`): its share of a binding card fact (:data:`SHARE_OF`)."""
    rest = path.removeprefix("stack.")
    if rest.startswith("cards."):
        rest = rest.split(".", 2)[2] if rest.count(".") >= 2 else rest
    return any(p in binding for p in SHARE_OF.get(rest, ()))


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


def audit(
    card: Card, serving: Serving, pricer: Pricer, policy: Policy | None = None, restack: Restack | None = None,
    step: float = STEP,
) -> Audit:
    """Price ``serving`` on ``card`` with ``pricer`` and audit it: every fact it rests on, the binding ones, the
    weakest, each fact's floor under ``policy`` (a lock's), and each fact's elasticity by re-pricing with that fact
    1 % higher (1 % lower when a higher value is refused, e.g. an acceptance of 1). A price made under a serving
    stack rests on the stack's facts too (``stack.share.read`` …): ``restack`` gives its pricer with one of them
    replaced, and a share is binding when the card fact it scales is (:func:`stack_binding`). ``step`` (a
    fraction, from :data:`MIN_STEP_PERCENT` to :data:`MAX_STEP_PERCENT` percent) is the relative change each
    elasticity is measured over, 1 % by default: with 0.1 the
    elasticity column is each fact's average elasticity over a 10 % error, so the fact whose 10 % error moves the
    price most has the largest magnitude (walkthrough 35: "which fact, 10 % wrong, moves this price most?" had no
    answer from passprice but a 1 % slope, which a bound or a best batch's jump can make another ranking).

    Raises :class:`~passprice.serving.ServingRefusal` when the price itself is refused, :class:`ValueError` when
    ``step`` is outside that range (a caller's bug: ``audit --step`` bounds it, :mod:`passprice.bounds`)."""
    from passprice.stacks import is_stack_path

    if not MIN_STEP_PERCENT / 100 <= step <= MAX_STEP_PERCENT / 100:
        raise ValueError(f"audit step {step!r} is outside {MIN_STEP_PERCENT / 100:g} … {MAX_STEP_PERCENT / 100:g}")

    cost = pricer(card, serving)
    base = cost.tokens_per_s
    binding = binding_paths(cost)
    rows = []
    for path, fact in cost.rests_on:
        elasticity: float | None = None
        used = step
        refused: list[str] = []
        why: list[str] = []
        stacked = restack is not None and is_stack_path(path)
        for tried in (step, -step):
            try:
                if stacked:
                    assert restack is not None
                    moved = restack(path, fact.scaled(1.0 + tried))(card, serving).tokens_per_s
                else:
                    c2, s2 = _with_fact(card, serving, path, fact.scaled(1.0 + tried))
                    moved = pricer(c2, s2).tokens_per_s
            except ServingRefusal as e:
                refused.append(e.name)
                why.append(str(e))
                continue
            elasticity = (moved / base - 1.0) / tried
            used = tried
            break
        floor = policy.allowed(path) if policy is not None else None
        binds = path in binding or (stacked and stack_binding(path, binding))
        rows.append(AuditRow(path, fact, binds, fact.provenance is cost.provenance, elasticity, used, floor,
                             tuple(refused), refused_why=tuple(why)))
    facts = {r.path: r.fact for r in rows}
    for i, r in enumerate(rows):
        if r.elasticity is not None and _derived_of(facts, r.path) and not (restack and is_stack_path(r.path)):
            rows[i] = attrs.evolve(r, rederived=rederived_elasticity(card, serving, pricer, facts, r.path, r.step,
                                                                     base))
    return Audit(cost, tuple(rows), step)


def _record_prefix(path: str) -> str:
    """The prefix a record's fact paths take in an audit (``draft.``, ``stack.``, ``routing.``; ``""`` for a card's):
    a derivation names its inputs within its own record (``acceptance.1``)."""
    return next((p for p in ("draft.", "stack.", "routing.") if path.startswith(p)), "")


def _derived_of(facts: Mapping[str, Fact], path: str) -> list[str]:
    """The paths among ``facts`` whose derivation takes the fact at ``path`` as an input, in ``facts``' order."""
    from passprice.derivations import Derivation

    out = []
    for p, f in facts.items():
        if isinstance(f.derivation, Derivation):
            prefix = _record_prefix(p)
            if any(i.fact is not None and path in (i.fact, prefix + i.fact) for i in f.derivation.inputs):
                out.append(p)
    return out


def rederived_elasticity(card: Card, serving: Serving, pricer: Pricer, facts: Mapping[str, Fact], path: str,
                         step: float, base: float) -> float | None:
    """The elasticity of tokens/s in the fact at ``path`` (of ``facts``, the audited facts by path) over ``step``
    (a fraction, signed), with every fact derived from it — directly, or from such a fact — re-derived by its
    formula: each derived fact is scaled by the ratio of its formula's result with the moved inputs to its result
    with today's (so a value rounded to ``digits`` moves by the exact ratio), then the price is made with all of
    them replaced. ``base``: today's tokens/s. The H200's ``streams.read`` is BabelStream's 4.48 TB/s over
    ``memory.bandwidth``: re-derived, a bandwidth 1 % higher gives the same bytes a second and the same price, so its
    elasticity is +0.000 where the table's, the shares held as written, is +1.000 (walkthrough 35; left31). ``None``
    when the re-derived price is refused or a formula cannot be evaluated. Raises nothing else."""
    from passprice.derivations import Derivation, FormulaError, quantity
    from passprice.errors import InputError

    moved = {path: facts[path].scaled(1.0 + step)}
    try:
        for _ in range(len(facts)):  # a derivation chain is at most as long as the facts (check refuses a cycle)
            before = dict(moved)
            for p, f in facts.items():
                derivation = f.derivation
                if p == path or not isinstance(derivation, Derivation):
                    continue
                prefix = _record_prefix(p)
                today: dict[str, Any] = {}
                then: dict[str, Any] = {}
                for i in derivation.inputs:
                    src = None if i.fact is None else i.fact if i.fact in facts else prefix + i.fact
                    if src is not None and src in moved and src in facts:
                        today[i.name] = quantity(facts[src].amount, facts[src].unit)
                        then[i.name] = quantity(moved[src].amount, moved[src].unit)
                if then:
                    ratio = derivation.result(then).value / derivation.result(today).value
                    moved[p] = f.scaled(float(ratio))
            if moved.keys() == before.keys() and all(moved[k] == before[k] for k in moved):
                break
        c2, s2 = card, serving
        for p, f in moved.items():
            c2, s2 = _with_fact(c2, s2, p, f)
        return (pricer(c2, s2).tokens_per_s / base - 1.0) / step
    except (ServingRefusal, FormulaError, InputError, ArithmeticError, ValueError):
        return None


@attrs.frozen
class RoutingShown:
    """The routing record a mixture of experts' price rests on, as an audit names it (walkthrough 19: an audit
    listed ``routing.hot_experts`` and ``routing.hot_share`` but named neither the record nor its file, and its
    ``note``, the record's caveat, showed nowhere): the record's ``name``, ``title``, ``file`` (registry-relative;
    ``None`` when the registry no longer holds it) and ``note``; ``today``: the note is today's record's while the
    facts audited are a lock's pinned ones (a lock pins the facts, not the note)."""

    name: str
    title: str
    file: str | None
    note: str | None
    today: bool = False
    #: The title and note are the ones a lock's ``[routing]`` or ``[draft]`` table pinned (walkthrough 31).
    pinned: bool = False

    def describe(self, registry: str = "") -> str:
        """``NAME — TITLE (FILE)``, FILE prefixed ``registry`` (``the built-in registry's ``, :data:`BUILT_IN`)."""
        where = f" ({registry}{self.file})" if self.file is not None else " (not in this registry)"
        return f"{self.name} — {self.title}{where}"

    def note_line(self) -> str | None:
        """The note, labelled today's record's when the facts are pinned; ``None`` without one."""
        if not self.note:
            return None
        label = "note (today's record)" if self.today else "note (as the lock pinned it)" if self.pinned else "note"
        return f"{label}: {self.note}"

    def to_json(self) -> dict[str, Any]:
        """``{"record", "title", "file", "note"}``."""
        return {"record": self.name, "title": self.title, "file": self.file, "note": self.note}


def routing_shown(
    root: Root, serving: Serving, pinned: bool = False, pin: RecordPin | None = None
) -> RoutingShown | None:
    """The :class:`RoutingShown` of ``serving``'s routing record (``None`` without one): its file and note read
    from ``root`` when the registry holds the record (``pinned``: the serving is a lock's, whose routing carries its
    pinned facts only, so the title and note are today's record's, unless the lock's ``[routing]`` table ``pin``
    records them: then they are the pinned ones, walkthrough 31)."""
    routing = serving.routing
    if routing is None:
        return None
    if pin is not None:
        where = root.routing / f"{routing.name}.toml"
        file = f"facts/routing/{where.name}" if where.is_file() else None
        return RoutingShown(routing.name, pin.title, file, pin.note, pinned=True)
    from passprice.errors import InputError
    from passprice.routing import load_routing

    path = root.routing / f"{routing.name}.toml"
    try:
        record = load_routing(root, routing.name) if pinned else routing
    except InputError:
        return RoutingShown(routing.name, routing.title, None, routing.note)
    file = f"facts/routing/{path.name}" if path.is_file() else None
    return RoutingShown(routing.name, record.title, file, record.note, today=pinned)


def draft_shown(
    root: Root, serving: Serving, pin: RecordPin | None = None, pinned: bool = False
) -> RoutingShown | None:
    """The drafting method a speculative-decoding price rests on, as an audit names it (walkthrough 31: an audit
    listed ``draft.acceptance.1`` and ``draft.acceptance.2`` with their citations but named neither the method nor
    its file, and its ``note``, which ``qwen35-mtp-review`` cites for the placeholders, showed nowhere): the method's
    registry ``name``, ``title``, ``file`` (registry-relative; ``None`` when the registry no longer holds it) and
    ``note``, in the shape of a :class:`RoutingShown`. ``None`` without drafts. For a lock (``pinned``): the title
    and note its ``[draft]`` table ``pin`` records, else (a lock written before that table) today's method's,
    labelled so. Raises nothing."""
    draft = serving.draft
    if draft is None or draft.tokens <= 0 or draft.method is None:
        return None
    from passprice.drafts import draft_path, load_draft_method
    from passprice.errors import InputError

    try:
        method = load_draft_method(root, draft.method)
        path: Path | None = draft_path(root, draft.method)
    except InputError:
        method, path = None, None
    file = None
    if path is not None and path.is_file():
        file = f"facts/drafts/{path.name}" if path.parent.resolve() == root.drafts.resolve() else str(path)
    if pin is not None:
        return RoutingShown(draft.method, pin.title, file, pin.note, pinned=True)
    if method is None:
        return RoutingShown(draft.method, draft.method, None, None)
    return RoutingShown(draft.method, method.title, file, method.note, today=pinned)


@attrs.frozen
class Calibration:
    """The measured runs of one measurement ``file`` (``registry/measurements/NAME.toml``) a serving stack's fitted
    facts were fitted to: how many (``runs``), on which ``cards``, and the ``source`` they cite (its id)."""

    file: str
    source: str
    runs: int
    cards: tuple[str, ...]
    #: The routing records its runs price (a mixture of experts' runs), each (name, weakest provenance of its facts,
    #: or ``"?"`` when the record does not read): the fit rests on their figures as on the runs'.
    routings: tuple[tuple[str, str], ...] = ()
    #: The card facts the runs' limits read (:data:`passprice.lineage.RUN_CARD_PATHS`, those :attr:`cards` hold), by
    #: path, and how many of them the cards hold in all: the fit rests on them as on the runs (walk53: ``audit LOCK``
    #: named the 111 runs on 11 cards, not their datasheet facts, which walk51's ``audit --fact`` follows).
    card_paths: tuple[str, ...] = ()
    card_facts: int = 0
    #: The sources those card facts cite (their own, or a derivation figure's), each with how many of the facts cite
    #: it, most first (``None``: a fact citing no registered source, by free text).
    card_sources: tuple[tuple[str | None, int], ...] = ()
    #: Those of :attr:`cards` that do not read today (missing, not a card file): their facts are not counted, and the
    #: line says so (attack68: a card removed under a stack lock's audit read "the 11 cards' … (60 facts)", exit 0,
    #: where a FIFO in its place refused the audit; ``check`` names the problem).
    unread: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"file", "source", "runs", "cards", "routings", "card_facts"}`` (``routings``: ``[{"routing",
        "provenance"}]``; ``card_facts``: ``{"paths", "facts", "sources": [{"source", "facts"}]}``)."""
        return {"file": self.file, "source": self.source, "runs": self.runs, "cards": list(self.cards),
                "routings": [{"routing": r, "provenance": p} for r, p in self.routings],
                "card_facts": {"paths": list(self.card_paths), "facts": self.card_facts,
                               "sources": [{"source": s, "facts": n} for s, n in self.card_sources],
                               "unread": list(self.unread)}}

    def cards_line(self, most: int = 4) -> str | None:
        """``the fit reads the 11 cards' memory.bandwidth, streams.read, … (64 facts), citing nvidia-a100-datasheet
        (6), … and 5 more sources``: the card facts the fit rests on and their sources, the ``most`` most cited
        named (``None`` when no card fact is known), then the cards that do not read (:attr:`unread`)."""
        unread = ""
        if self.unread:
            many = len(self.unread) > 1
            unread = (f"; card{'s' if many else ''} {', '.join(self.unread)} do{'' if many else 'es'} not read today "
                      f"(passprice check says why): {'their' if many else 'its'} facts are not counted")
        if not self.card_facts:
            return f"the fit reads no card's facts{unread}" if unread else None
        n = len(self.cards)
        named = [f"{s or 'a free-text cite'} ({k})" for s, k in self.card_sources[:most]]
        rest = len(self.card_sources) - most
        more = f" and {rest} more source{'' if rest == 1 else 's'}" if rest > 0 else ""
        return (f"the fit reads the {'card' if n == 1 else f'{n} cards'}' {', '.join(self.card_paths)} "
                f"({self.card_facts} facts), citing {', '.join(named)}{more}{unread}")

    def describe(self, registry: str = "") -> str:
        """``registry/measurements/x.toml: 111 runs on 11 cards (a100_pcie_80gb, a40 …), citing SOURCE``, and for
        runs of a mixture of experts the routing records they price with their provenance: the fitted facts are
        ``derived`` from runs priced on those records, so an assumed record (``uniform``) is said to be one
        (walkthrough 27: it went unsaid)."""
        cards = ", ".join(self.cards[:4]) + (" …" if len(self.cards) > 4 else "")
        n = len(self.cards)
        runs = f"{self.runs:,} run{'' if self.runs == 1 else 's'}"
        text = f"{registry}{self.file}: {runs} on {n} card{'' if n == 1 else 's'} ({cards}), citing {self.source}"
        for name, provenance in self.routings:
            text += f"; priced on routing record {name} ({provenance})"
            if provenance in ("estimated", "assumed"):
                text += (f": the stack's fitted facts, derived, rest on this {provenance} routing as on the runs "
                         "(a measured record of the runs' routing would replace it)")
        return text


@attrs.frozen
class StackReach:
    """How far a price audited under a serving stack lies from where the stack was fitted: ``span``, its expected /
    limit ratio against the measured / limit ratios of the stack's fitted runs
    (:class:`~passprice.stackreach.RatioReach`; ``None`` when the ratio cannot be taken), and ``warnings``, one line
    each for a card or a kind of model the stack's runs never measured
    (:meth:`passprice.stackreach.CardReach.warning`, :meth:`~passprice.stackreach.ModelReach.warning`). ``price
    --stack`` says these on its ``fitted span`` line and on stderr; an audit carries them in its body, so the
    Markdown or JSON of a ticket keeps them (walkthrough 38: ``audit LOCK`` of the llama.cpp H200 lock, 0.2384 × the
    limit against the 0.3425 … 0.8519 its 111 runs measured, on a card none of them ran on, said neither)."""

    span: Any
    warnings: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The text lines: ``  fitted span   its 111 fitted runs measured … lies outside: an extrapolation of the
        fit``, then ``  fit reach     stack S was fitted on runs on 11 cards (…), not CARD: …`` for each warning."""
        out = [] if self.span is None or not self.span.runs else [f"  fitted span   {self.span.line()}"]
        return out + [f"  fit reach     {w}" for w in self.warnings]

    def markdown_lines(self) -> list[str]:
        """The same as Markdown bullets, a span outside the fit and each warning marked ⚠️."""
        out = []
        if self.span is not None and self.span.runs:
            mark = "" if self.span.inside else "⚠️ "
            out.append(f"- {mark}**fitted span**: {markdown_prose(self.span.line())}")
        return out + [f"- ⚠️ **fit reach**: {markdown_prose(w)}" for w in self.warnings]

    def to_json(self) -> dict[str, Any]:
        """``{"stack_span": RatioReach.to_json() or null, "stack_reach": [warning lines]}``, as ``price --json
        --stack`` gives ``stack_span``."""
        span = None if self.span is None or not self.span.runs else self.span.to_json()
        return {"stack_span": span, "stack_reach": list(self.warnings)}


def stack_reach(root: Root, subject: Subject) -> StackReach | None:
    """:class:`StackReach` of ``subject``'s expected price under its stack (``None`` without one, or when the stack
    refuses the price: the audit reports its own refusal). The span is judged from ``root``'s measured runs, those
    the stack's fitted facts (a lock's as pinned) name in their derivations, each run's limit priced as ``validate``
    prices it (:func:`passprice.stackreach.expected_reach`). Raises :class:`~passprice.errors.InputError` for a
    measurement file that does not read."""
    if subject.stack is None:
        return None
    from passprice.stackreach import card_reach, expected_reach, model_reach
    from passprice.stacks import price_expected

    try:
        expected = price_expected(subject.header, subject.card, subject.serving, subject.stack, subject.kind)
    except ServingRefusal:
        return None
    span = expected_reach(root, expected, subject.header, subject.card, subject.serving)
    card = card_reach(root, subject.stack, subject.card.name)
    model = model_reach(root, subject.stack, subject.header)
    warnings = tuple(w for w in (card.warning(), model.warning()) if w is not None)
    return StackReach(span, warnings)


def calibrated_on(root: Root, stack: Stack) -> tuple[Calibration, ...]:
    """The measured runs ``stack``'s fitted facts name in their derivations
    (:class:`~passprice.derivations.RunDerivation`), as registered today (:func:`~passprice.measurements.load_runs`),
    by measurement file and the source they cite: what a price under the stack rests on beyond its facts. A run the
    derivations name that is not registered is ``check``'s to report (a re-fit is due); a measurement file that does
    not read leaves its runs out.

    Raises nothing: an audit still lists the stack's own facts and their sources."""
    from passprice.derivations import RunDerivation
    from passprice.measurements import load_runs

    named: set[str] = set()
    for fact in stack.lock_facts().values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(fact.derivation.ids())
    groups: dict[tuple[str, str], list[Any]] = {}
    for run in load_runs(root, stack.name, problems=[]):
        if run.id in named:
            groups.setdefault((f"registry/measurements/{run.source}.toml", run.source_id), []).append(run)
    weakest: dict[str, str] = {}

    def provenance(name: str) -> str:
        if name not in weakest:
            from passprice.errors import InputError
            from passprice.routing import load_routing

            try:
                record = load_routing(root, name)
                weakest[name] = max(f.provenance for f in record.facts().values()).value  # max: the weakest
            except InputError:
                weakest[name] = "?"
        return weakest[name]

    return tuple(
        Calibration(file, source, len(runs), tuple(sorted({r.card for r in runs})),
                    tuple((name, provenance(name)) for name in sorted({r.routing for r in runs if r.routing})),
                    *_card_citations(root, sorted({r.card for r in runs})))
        for (file, source), runs in groups.items()
    )


def _card_citations(root: Root, cards: Iterable[str]
                    ) -> tuple[tuple[str, ...], int, tuple[tuple[str | None, int], ...], tuple[str, ...]]:
    """For :class:`Calibration`: the paths of :data:`passprice.lineage.RUN_CARD_PATHS` ``cards`` hold, how many such
    facts they hold, and the sources those facts cite (a fact's own, or each figure input's of its derivation, the
    fact's own where the input names none), each with its count of facts, most first, then by id. A card that does
    not read is left out (``check``'s to report) and named last. Raises nothing."""
    from passprice.cards import load_card
    from passprice.derivations import Derivation
    from passprice.errors import InputError
    from passprice.lineage import RUN_CARD_PATHS

    paths: set[str] = set()
    facts = 0
    counts: dict[str | None, int] = {}
    unread: list[str] = []
    for name in cards:
        try:
            held = load_card(root, name).facts()
        except (InputError, OSError):
            unread.append(name)
            continue
        for path in RUN_CARD_PATHS:
            fact = held.get(path)
            if fact is None:
                continue
            paths.add(path)
            facts += 1
            cited = {fact.source}
            if isinstance(fact.derivation, Derivation):
                cited |= {i.source or fact.source for i in fact.derivation.inputs if i.kind == "figure"}
            for source in cited:
                counts[source] = counts.get(source, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0] or ""))
    return tuple(p for p in RUN_CARD_PATHS if p in paths), facts, tuple(ranked), tuple(unread)


def names_lock(root: Root, target: str) -> bool:
    """Whether ``target`` (an audit's TARGET) names a lock rather than a serving: a lock file (``*.lock.toml``), or
    a name only a lock has (``locks/NAME.lock.toml`` and neither ``servings/NAME.toml`` nor a serving file of that
    path). A name that is both (locks are often named after their serving) is the serving, priced with today's
    facts: ``NAME.lock.toml`` audits its lock. A lock's digest (:func:`passprice.locks.digest_ref`) that names no
    serving is taken for a lock, so the error names the lock whose digest it is (walkthrough 38)."""
    from passprice.files import is_there
    from passprice.locks import digest_ref
    from passprice.registry import spelled_apart

    if target.endswith(".lock.toml"):
        return True
    if is_there(root.servings / f"{target}.toml") or (target.endswith(".toml") and is_there(target)):
        return False
    if is_there(root.locks / f"{target}.lock.toml") or digest_ref().match(target):
        return True
    # R1-QWEN7B-H200-BEST, a lock's name but for case (or '-'/'_') and no serving's: the lock's error, which names it
    # (walkthrough 117: the serving's listed the servings alone)
    return (spelled_apart(target, root.names(root.servings)) is None
            and spelled_apart(target, root.names(root.locks, ".lock.toml")) is not None)


#: What a lock pins that each serving option would change (the rest change its serving's other choices).
_PINNED_BY_OPTION = {
    "--batch": "batch", "--card": "card", "--checkpoint": "checkpoint", "--stack": "stack (or none)",
    "--routing": "routing", "--max-tpot": "TPOT cap", "--draft": "drafting", "--draft-tokens": "drafting",
    "--head-rows": "drafting",
}


def lock_options_problem(root: Root, target: str, given: Sequence[tuple[str, str]]) -> str | None:
    """The one error line for serving options ``given`` (each the option as typed, ``--batch``, and the words it
    was given with, ``--batch 3``) to an audit of the lock ``target`` (:func:`names_lock`: a lock file, a name only a
    lock has, or a lock's ``[lock] digest``): a lock pins its card, checkpoint, serving (batch, contexts, every
    choice) and stack, so an option has nothing to change; the line names the lock (the one whose digest ``target``
    is), each option and what it would change, and says what to do: audit the lock without them, or its serving
    with them. ``None`` for a digest no lock (or several) here has, whose own error (no such lock) says more.
    Left32: ``audit DIGEST --batch 3`` said the digest "is a lock", and ``--no-host-memory`` on a lock was ignored,
    exit 0. Raises :class:`InputError` (one line naming the file) when the lock file is no regular file (a FIFO),
    before any word on the options."""
    from passprice.files import is_there, shell_word
    from passprice.locks import digest_owners, digest_ref, lock_file_document, locked_serving

    named = target
    path = root.locks / f"{target}.lock.toml"
    if target.endswith(".lock.toml") or is_there(path):
        if target.endswith(".lock.toml"):
            candidate = Path(target)
            path = candidate if is_there(candidate) else root.locks / candidate.name
        lock = path.name.removesuffix(".lock.toml")
        named = f"lock {lock}" if target in (lock, path.name) else f"lock {lock} ({target})"
    elif digest_ref().match(target):
        files = [n for n in root.names(root.locks, ".lock.toml") if is_there(root.locks / f"{n}.lock.toml")]
        owners = digest_owners(root, target, files)
        if len(owners) != 1:
            return None
        lock, path = owners[0], root.locks / f"{owners[0]}.lock.toml"
        named = f"lock {lock} (whose [lock] digest {target} is)"
    else:
        return None
    if is_there(path):
        # A FIFO, device or socket named as the lock is refused first, as `audit LOCK` refuses it (slip 54: `audit ff
        # --batch 3` of a FIFO locks/ff.lock.toml said the option cannot apply to lock ff); opened without blocking.
        from passprice.files import open_regular

        open_regular(path).close()
    # As a lock is read (lock_file_document: a FIFO named x.lock.toml refused unopened, its size and parse bounded); one
    # that does not read: the audit without the options says what is wrong with the file.
    document = lock_file_document(path)
    serving = locked_serving(document, lock) if document is not None else None
    options = [option for option, _ in given]
    what = sorted({_PINNED_BY_OPTION.get(option, "serving's choices") for option in options})
    words = " ".join(text for _, text in given)
    own = shell_word(target if target.endswith(".lock.toml") else f"{lock}.lock.toml")
    from passprice.reproduce import registered

    them, s = ("them", "s") if len(given) > 1 else ("it", "")
    if serving is not None and registered(root, serving):
        elsewhere = f", or its serving with {them}: passprice audit {shell_word(serving)} {words}"
    else:
        elsewhere = f"; to try {them}, audit a SERVING (a registered name or a serving file)"
    return (f"audit: {', '.join(options)} cannot apply to {named}: a lock pins its {' and its '.join(what)} (it is "
            f"audited as it was priced), so the option{s} would change nothing; audit the lock without {them}, "
            f"passprice audit {own}{elsewhere}")


@attrs.frozen
class Subject:
    """What an audit prices and judges: a lock's pinned ``header``, ``card`` and ``serving`` (``lock`` set: its
    recorded price is checked against them), or a serving's today (``lock`` ``None``); the price's ``kind``
    (``price`` or ``best``); the ``policy`` whose floors each fact is shown against (the lock's own, or the strictest
    of the serving's locks', ``None`` without one); ``facts``, every fact by lock path (what a stale derivation is
    looked for in); and the report's ``title``."""

    header: GGUFHeader
    card: Card
    serving: Serving
    kind: str
    policy: Policy | None
    facts: Mapping[str, Fact]
    title: str
    lock: Lock | None = None
    reference: str | None = None
    #: The serving stack the price is made under (``audit SERVING --stack S``): the expected price is audited, its
    #: stack facts with the card's (``None``: the card's limit); ``calibration`` the measured runs it was fitted to.
    stack: Stack | None = None
    calibration: tuple[Calibration, ...] = ()
    #: Under a stack, the stack facts a lock of the serving judges (those its recorded price rests on: a lock made
    #: under the stack); the others are floored by none (a lock of the limit judges the limit's facts only).
    judged: frozenset[str] = frozenset()
    #: The routing record a mixture of experts' price rests on (:func:`routing_shown`), named with its note.
    routing: RoutingShown | None = None
    #: The drafting method a speculative-decoding price rests on (:func:`draft_shown`), named with its note.
    draft: RoutingShown | None = None


def lock_subject(root: Root, target: str) -> Subject:
    """The subject of an audit of the lock ``target`` (a lock file, or a name in ``locks/``): its pinned facts,
    checkpoint content and serving, its kind and policy.

    Raises :class:`~passprice.reproduce.CheckpointGone` when no registered entry holds the content it pinned (a
    refusal, exit 1), :class:`~passprice.errors.InputError` for a lock that does not read."""
    from passprice.locks import lock_path, pinned_serving, read_lock_in
    from passprice.reproduce import pinned_header

    the_lock = read_lock_in(root, lock_path(root, target))
    header = pinned_header(root, the_lock)
    title = f"audit of lock {the_lock.name} (pinned facts): {the_lock.checkpoint} on {the_lock.card}"
    stack = the_lock.pinned_stack()
    serving = pinned_serving(the_lock)
    routing = routing_shown(root, serving, pinned=True, pin=the_lock.routing)
    draft = draft_shown(root, serving, pin=the_lock.draft, pinned=True)
    if stack is None:
        return Subject(header, the_lock.pinned_card(), serving, the_lock.kind, the_lock.policy,
                       the_lock.facts, title, the_lock, target, routing=routing, draft=draft)
    # A lock made under a serving stack records its expected price beside the limit: the audit is of that price, on
    # the stack facts it pinned (walkthrough 11: the audit left them out and said the lock did not reproduce).
    title += f", expected under stack {stack.name} (pinned)"
    return Subject(header, the_lock.pinned_card(), serving, the_lock.kind, the_lock.policy,
                   the_lock.facts, title, the_lock, target, stack=stack, calibration=calibrated_on(root, stack),
                   judged=frozenset(the_lock.rests_on), routing=routing, draft=draft)


def serving_subject(root: Root, target: str | None, resolved: Resolved, stack: Stack | None = None) -> Subject:
    """The subject of an audit of a serving (``resolved``: ``target`` as the command line named it, with its
    options applied; ``None`` for ``--checkpoint``/``--card`` alone) with today's facts, each shown against the
    floors its locks set together (:meth:`passprice.enforce.Guard.policy`: the strictest of theirs), as its price
    is judged; under ``stack`` (``price --stack S``'s expected price), resting on the stack's facts too.

    Raises :class:`~passprice.enforce.LockRefusal` when what a lock of the serving locks changed under it."""
    from passprice.enforce import guard, serving_name

    spec = resolved.spec
    title = f"audit of {target or spec.checkpoint} (today's facts): {spec.checkpoint} on {resolved.card.name}"
    if stack is not None:
        title += f", expected under stack {stack.name}"
    under = guard(root, serving_name(root, target), resolved)
    if under.locks:
        title += f", floors of lock{'s' if len(under.locks) > 1 else ''} {', '.join(under.names())}"
    facts = resolved.facts()
    if stack is not None:
        facts.update(stack.lock_facts())
    routing = routing_shown(root, resolved.serving)
    draft = draft_shown(root, resolved.serving)
    if stack is None:
        return Subject(resolved.header, resolved.card, resolved.serving, "price", under.policy(), facts, title,
                       routing=routing, draft=draft)
    judged = frozenset(p for lock, _ in under.locks for p in lock.rests_on)
    return Subject(resolved.header, resolved.card, resolved.serving, "price", under.policy(), facts, title,
                   stack=stack, calibration=calibrated_on(root, stack), judged=judged, routing=routing, draft=draft)


@attrs.frozen
class Report:
    """An audit of a :class:`Subject`: the ``audit`` itself, the derived facts it rests on that no longer follow
    from their inputs (``stale``), and for a lock whether its pinned inputs still give the price it records
    (``reproduces``, ``None`` for a serving) with the ``warning`` line saying which field moved when they do not."""

    subject: Subject
    audit: Audit
    stale: Stale
    reproduces: bool | None = None
    warning: str | None = None

    def extra(self) -> dict[str, Any]:
        """The fields :func:`audit_json` adds to the audit's JSON: the title, and a lock's ``reproduces`` and
        ``recorded_tokens_per_s``."""
        out: dict[str, Any] = {"title": self.subject.title}
        if self.subject.routing is not None and self.audit.cost.routed is not None:
            out["routing"] = self.subject.routing.to_json()
        if self.subject.draft is not None:
            out["draft"] = self.subject.draft.to_json()
        if self.subject.stack is not None:
            out["stack"] = self.subject.stack.name
            out["calibration"] = [c.to_json() for c in self.subject.calibration]
        lock = self.subject.lock
        if lock is not None:
            out["reproduces"] = self.reproduces
            out["recorded_tokens_per_s"] = lock.price.get("tokens_per_s")
        return out


def audit_subject(
    subject: Subject, check: Callable[[ServingCost], None] | None = None, step: float = STEP
) -> Report:
    """Price ``subject`` (its kind: :func:`passprice.locks.evaluate`), ``check`` the price first when given (the
    command line refuses one that is not finite: elasticities need a finite, nonzero price), then audit it
    (:func:`audit`), find its stale derived facts (:func:`passprice.stale.stale_rested_on`) and, for a lock, compare
    the price with the one it records (:func:`passprice.reproduce.moved`); ``step``: as :func:`audit`'s.

    Raises :class:`~passprice.serving.ServingRefusal` when the price itself is refused, and what ``check`` raises."""
    from passprice.locks import evaluate
    from passprice.report import cost_json
    from passprice.reproduce import moved
    from passprice.stale import stale_rested_on

    s = subject

    def limit(c: Card, v: Serving) -> ServingCost:
        return evaluate(s.kind, s.header, c, v)

    pricer: Pricer = limit
    restack: Restack | None = None
    if s.stack is not None:
        from passprice.stacks import price_expected, stack_from_lock_facts

        def under(stack: Stack) -> Pricer:
            return lambda c, v: price_expected(s.header, c, v, stack, s.kind).expected

        def replaced(path: str, fact: Fact) -> Pricer:
            assert s.stack is not None
            facts = {**s.stack.lock_facts(), path: fact}
            return under(stack_from_lock_facts(s.stack.name, s.stack.title, s.stack.routes(), facts))

        pricer, restack = under(s.stack), replaced
    if check is not None:
        check(pricer(s.card, s.serving))
    result = audit(s.card, s.serving, pricer, s.policy, restack, step)
    if s.stack is not None:  # a stack fact no lock's price rests on is floored by none (enforce.Guard.judge)
        from passprice.stacks import is_stack_path

        rows = (attrs.evolve(r, floor=None) if is_stack_path(r.path) and r.path not in s.judged else r
                for r in result.rows)
        result = attrs.evolve(result, rows=tuple(rows))
    stale = stale_rested_on(s.facts, (r.path for r in result.rows))
    if s.lock is None:
        return Report(s, result, stale)
    recorded = s.lock.price
    if s.stack is not None and isinstance(recorded.get("expected"), Mapping):
        recorded = recorded["expected"]  # the expected price audited, against the one the lock records
        differ = moved(recorded, cost_json(result.cost), tuple(recorded))
    else:
        differ = moved(recorded, cost_json(result.cost), s.lock.compared())
    warning = None
    if differ:
        warning = (
            f"WARNING: the lock records {recorded.get('tokens_per_s')!r} tokens/s, its pinned inputs give "
            f"{result.cost.tokens_per_s!r} with today's code (first: {differ[0].field}); `passprice reproduce "
            f"{s.reference or s.lock.name}` says why"
        )
    return Report(s, result, stale, not differ, warning)


def _copy_lines(record: Source, registry: str = "", problem: str | None = None, home: Path | None = None) -> list[str]:
    """The lines under a cited document's ``at:`` and ``read:`` in an audit saying which copy was read and when:
    ``    retrieved: DATE[, sha256 …]``, ``    copies: ADDRESS; …`` and ``    stored excerpt: PATH (…)``, each only
    where the record states it (:meth:`Source.retrieved_text`, :meth:`Source.copies_text`, ``Source.excerpt``: a
    path from the registry's top folder). Walkthrough 35: an auditor following a citation needs the day the copy was
    retrieved and the copies checked, which only the record's file held; walkthrough 106 (finding 3): the stored
    text a locator's quote can be checked against was named only by ``audit --source ID``, one source a run.
    ``registry``: how the text names the registry the excerpt lies in when it is not the working one (``the built-in
    registry's `` outside any registry, as :meth:`Source.where` takes it): ``audit LOCK`` run outside a registry named
    ``sources/excerpts/X.txt (the text read, from the registry's top folder)``, a folder the reader had not, where
    ``audit --source ID`` names the built-in registry's file (:func:`passprice.sources.excerpt_named`). ``problem``:
    what is wrong with the excerpt file (:func:`passprice.sources.excerpt_problem`, as ``check`` and ``audit --source``
    say it), said after ``, but``: ``audit LOCK`` named a FIFO, a folder or a missing file as the text read.
    ``home``: the built-in registry's folder, whose absolute path of the excerpt the line gives
    (:func:`passprice.sources.excerpt_words`)."""
    lines = []
    retrieved = record.retrieved_text()
    if retrieved is not None:
        lines.append(f"    retrieved: {retrieved}")
    copies = record.copies_text()
    if copies is not None:
        lines.append(f"    copies: {copies}")
    if record.excerpt is not None:  # worded as audit --source words it (lineage.source_text)
        from passprice.sources import EXCERPT_HOLDS, excerpt_words

        but = f", but {problem}" if problem is not None else ""
        if registry and home is None:
            named = f"{registry}{record.excerpt} ({EXCERPT_HOLDS})"
        else:
            named = excerpt_words(record.excerpt, home if registry else None)
        lines.append(f"    stored excerpt: {named}{but}")
    return lines


def _stale_by_path(stale: Stale | None) -> dict[str, str]:
    return {p: f.message for p, f, _ in stale.findings} if stale is not None else {}


#: The clause a fitted fact's derivation ends with (:meth:`passprice.derivations.RunDerivation.text`): not said of a
#: fact its fit no longer gives ("passprice check re-fits it within 0.1 % — STALE", audit LOCK).
_REFITS = re.compile(r"; passprice check re-fits it within [0-9.e+-]+ %")


def _derivation_said(path: str, fact: Any, stale: Stale | None) -> tuple[str, str]:
    """A derivation line's text and its STALE mark, as the text and markdown audits say them: a fact of a stale fit
    (its finding tells the fix and the move: a serving stack's) without the claim that ``check`` re-fits it within
    its tolerance, and its mark the move alone (``re-fitted today: share.scale 0.002051 → 0.00824``), the fit said
    stale once, in the ``STALE:`` line; any other finding's whole message; ``""`` when it follows. Raises nothing."""
    text = fact.derivation_text() or ""
    finding = next((f for p, f, _ in stale.findings if p == path), None) if stale is not None else None
    if finding is None:
        return text, ""
    short = path.removeprefix("stack.")
    if finding.fix and finding.move and finding.path == short:
        tolerance = _REFITS.search(text)
        past = (f", past the {tolerance.group(0).rsplit(' ', 2)[-2]} % its derivation allows" if tolerance
                else "")
        return _REFITS.sub("", text), f"re-fitted today: {finding.move}{past}"
    return text, finding.message


def audit_json(
    a: Audit,
    extra: Mapping[str, Any] | None = None,
    stale: Stale | None = None,
    sources: Mapping[str, Source] | None = None,
    routing: RoutingShown | None = None,
    texts: Mapping[str, StoredText] | None = None,
    registry: str | None = None,
) -> dict[str, Any]:
    """The audit for ``--json``: the price's batch, tokens/s, bind and provenance, the weakest paths, and one object per
    fact (path, value and unit as written, base value, provenance, source, locator, cite (the citation in one line),
    note, derivation (its table, and as text), ``stale`` (what recomputing its derivation found, when it does not
    follow from today's inputs: :mod:`passprice.stale`; else ``null``), floor and margin (``null`` without a lock),
    binding, weakest, elasticity, step, ``derived_by`` (the rows whose derivation reads it) and
    ``elasticity_rederived`` (:attr:`AuditRow.rederived`)); with ``sources``, a ``sources`` object: for each
    registered source a fact or a figure of its derivation cites (:func:`cited_sources`), its title, publisher,
    date, where it is (``where``, one line; ``url``; ``copies``), how it was read (``read``; ``retrieved``,
    ``sha256``) and the stored text read (``excerpt``, a path from the registry's top folder, or ``None``: walkthrough
    106); ``stale_descriptions``: the
    text audit's "to verify" lines, a source's ``read`` or the ``routing`` record's title still naming a row no fact
    cites (:func:`description_notes`, :meth:`DescriptionNote.to_json`; ``[]`` when none). With ``texts`` (the cited
    documents' stored excerpts, :func:`passprice.sources.stored_texts`): each source's ``excerpt_problem`` (what is
    wrong with its excerpt file, or ``None``), each fact's ``quote_check`` (:meth:`QuoteCheck.to_json`) and
    ``quotes_checked`` (``checked``, ``not_found``, ``facts``: :func:`quotes_summary`'s counts). With ``registry``
    (:func:`passprice.registry.registry_named`: ``"built-in"`` or the registry's folder), each source's
    ``registry``, the registry its ``excerpt`` path is relative to (the README's promise for the built-in registry's
    files, which a new user found unkept: tests/test_walk128.py)."""
    found = _stale_by_path(stale)
    checks = {c.path: c for c in quote_checks(a, texts)} if texts is not None else {}
    derived = derived_from(a)
    cited = set(cited_sources(a))
    cited.update(c["source"] for c in (extra or {}).get("calibration", ()))
    documents = {
        sid: {"title": record.title, "by": record.by, "date": record.date, "where": record.where(),
              "url": record.url, "copies": list(record.copies), "retrieved": record.retrieved,
              "sha256": record.sha256, "read": record.read, "excerpt": record.excerpt,
              **({"excerpt_problem": texts[sid].problem if sid in texts else None} if texts is not None else {}),
              **({"registry": registry} if registry is not None else {})}
        for sid, record in (sources or {}).items() if sid in cited
    }
    return {
        **(extra or {}),
        "batch": a.cost.batch,  # the batch audited (fix181: `audit S --batch 167 --json` said it nowhere)
        "tokens_per_s": a.cost.tokens_per_s,
        "by_hand": by_hand(a),
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
                "source": r.fact.source,
                "locator": r.fact.locator,
                "cite": r.fact.citation(),
                "note": r.fact.note,
                "derivation": r.fact.to_entry().get("derivation"),
                "derivation_text": r.fact.derivation_text(),
                "stale": found.get(r.path),
                "cancelled": [{"input": name, "powers": list(powers)} for name, powers in cancelled(r.fact)],
                "floor": r.floor.value if r.floor is not None else None,
                "margin": r.margin,
                "binding": r.binding,
                "weakest": r.weakest,
                "elasticity": r.elasticity,
                "step": r.step,
                "refused": list(r.refused),
                "derived_by": list(derived.get(r.path, ())),
                "elasticity_rederived": r.rederived,
                **({"quote_check": checks[r.path].to_json()} if texts is not None else {}),
            }
            for r in a.rows
        ],
        **({"sources": documents} if sources is not None else {}),
        "stale_descriptions": [n.to_json() for n in description_notes(a, sources, routing)],
        **({"quotes_checked": quotes_counted(tuple(checks.values()))} if texts is not None else {}),
    }


def cancelled(fact: Fact) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The inputs of ``fact``'s derivation whose figure cancels out of its formula
    (:meth:`passprice.derivations.Derivation.cancelled`), each with its powers; empty for a fact of no such
    derivation."""
    from passprice.derivations import Derivation

    return fact.derivation.cancelled() if isinstance(fact.derivation, Derivation) else ()


def cancels_text(path: str, fact: Fact) -> str:
    """`` — lanes cancels (+1, −1): its figure does not move scale`` after a derivation whose input cancels
    (the H200's ``scale = lanes * (vector / (lanes * lane_rate))``: 16,896 or 20,000 lanes, the same 33.5 Tcycle/s,
    which "no change" read as a moved figure that moved nothing); empty when none does."""
    found = cancelled(fact)
    if not found:
        return ""
    parts = [f"{name} cancels ({', '.join(f'{p:+d}'.replace('-', '−') for p in powers)})" for name, powers in found]
    what = "its figure does not" if len(found) == 1 else "their figures do not"
    return f" — {', '.join(parts)}: {what} move {path}"


def by_hand(a: Audit) -> str:
    """The sentence that checks the audited price's tokens/s by hand, with its numbers (walkthrough 21: the audit
    never said how tokens/s follows from the pass): ``tokens/s = batch × emitted_per_sequence / pass time = 16 ×
    2.4875 / 10.92 ms = 3,644.2``, and what the pass time is (the largest term, the limit's; under a stack, the
    stack's expected pass). The formula is :meth:`passprice.serving.ServingCost`'s ``tokens_per_s``."""
    from passprice.tables import si

    c = a.cost
    stacked = any(r.path.startswith("stack.") for r in a.rows)
    what = ("the stack's expected pass: its fixed cost, the binding term at its shares and terms.serial × the others"
            if stacked else f"the largest term, {c.binds.value}")
    return (f"tokens/s = batch × emitted_per_sequence / pass time = {c.batch:,} × {c.emitted_per_sequence:.6g} / "
            f"{si(c.pass_s, 's')} = {c.tokens_per_s:,.1f} (the pass time is {what})")


def _margin(r: AuditRow) -> str:
    if r.margin is None:
        return "–"
    return "at floor" if r.margin == 0 else (f"+{r.margin}" if r.margin > 0 else f"{r.margin} BELOW")


def _value(fact: Fact) -> str:
    """A fact's value as written (``115088 KiB``: what its file and citation say) and, for a byte count or a byte
    rate written in binary prefixes, as ``price`` shows bytes (``(117.9 MB)``, decimal SI), so the audit and the
    price read the same figure (walkthrough 9: ``115088 KiB`` here, ``117.9 MB`` there)."""
    from passprice.facts import dimension
    from passprice.tables import si

    shown = fact.describe()
    if "iB" in fact.unit and dimension(fact.unit) in ("bytes", "bytes/s"):
        shown += f" ({si(fact.value, 'B' if dimension(fact.unit) == 'bytes' else 'B/s')})"
    return shown


def _step_said(a: Audit) -> str:
    """What the elasticity legend adds when ``audit --step`` measured over another step than 1 %: ``, measured over
    a 10 % change: the fact 10 % higher moves tokens/s by 10 × its elasticity %``; ``""`` at 1 %."""
    if a.step == STEP:
        return ""
    pct = step_percent(a.step)
    return f", measured over a {pct} change: the fact {pct} higher moves tokens/s by {pct[:-2]} × its elasticity %"


def _elasticity(r: AuditRow) -> str:
    """An elasticity to three decimals, a sign a reader can act on: one that rounds to zero is ``+0.000`` (a routing
    fact of a batch that reads every expert showed ``-0.000``, walkthrough 21)."""
    if r.elasticity is None:
        return "refused"
    shown = f"{r.elasticity:+.3f}"
    return ("+0.000" if shown == "-0.000" else shown) + (f" (−{step_percent(r.step)})" if r.step < 0 else "")


def elasticity_notes(a: Audit) -> list[str]:
    """What the elasticity column's marks mean, for the audit ``a``'s rows that carry one (walkthrough 29: the
    legend said "+1 % change" only, so ``(−1 %)`` and ``refused`` went unexplained, and ``passprice explain
    refused`` defined a refusal, exit status 1, not a column of an audit that exits 0): one sentence for the rows
    measured 1 % lower, naming each fact and the refusal its +1 % step gave, and one for the rows not measured at
    all, naming each fact and its refusals; and, for a mixture of experts routing 1 token-row a pass, why its
    ``routing.*`` rows read +0.000 (D(1) = k whatever the skew). Empty when none applies. Raises nothing."""

    def named(rows: list[AuditRow]) -> str:
        return ", ".join(f"{r.path} ({' and '.join(dict.fromkeys(r.refused)) or 'refused'})" for r in rows)

    lower = [r for r in a.rows if r.elasticity is not None and r.step < 0]
    unmeasured = [r for r in a.rows if r.elasticity is None]
    pct = step_percent(a.step)
    out = []
    if lower:
        out.append(f"(−{pct}): measured with the fact {pct} lower, since {pct} higher is refused: {named(lower)}")
    if unmeasured:
        out.append(f"refused: not measured, since {pct} higher and {pct} lower are both refused: {named(unmeasured)}; "
                   "the price itself is not refused and rests on the fact as written")
        # Why each step was refused, which the line above named by the refusal's name alone: a new user read
        # uniform routing's hot_share "refused" as a side left unmeasured that the other could have measured
        # (tests/test_fix55w.py); a row with one side refused is measured from the other (the (−1 %) line).
        facts = {r.path: r.fact for r in a.rows}
        hot = facts.get("routing.hot_experts")
        for r in unmeasured:
            if len(r.refused_why) < 2:
                continue
            tied = (", so while hot_experts is 1 no value of hot_share but 1 is a routing (the routing is uniform "
                    "whatever hot_share says): routing.hot_experts' row measures the skew"
                    if r.path == "routing.hot_share" and hot is not None and hot.value >= 1.0 else "")
            out.append(f"{r.path}: {pct} higher refused: {r.refused_why[0]}; {pct} lower refused: "
                       f"{r.refused_why[1]}{tied}")
    routed = a.cost.routed
    still = [r.path for r in a.rows if r.path.startswith("routing.") and r.elasticity == 0.0]
    if routed is not None and routed.tokens == 1 and still:
        # moe42: at batch 1 the routing rows read +0.000, unexplained
        out.append(f"{', '.join(still)} +0.000: 1 token-row a pass reads exactly its {routed.used} experts a layer "
                   "whatever the routing (D(1) = k), so no routing fact moves this price; from 2 token-rows a pass "
                   "up the skew does")
    stepless = [r.path for r in unmeasured if r.path.startswith("routing.")]
    if routed is not None and routed.tokens == 1 and stepless:
        # walk44: uniform routing's hot_share (1, a share's bound) read `refused` at batch 1, as if it could move the
        # price, and the D(1) = k line named hot_experts alone
        out.append(f"{', '.join(stepless)}: refused both ways, but at 1 token-row a pass no routing fact moves this "
                   f"price either (D(1) = k: its {routed.used} experts a layer whatever the routing)")
    return out


def derived_from(a: Audit) -> dict[str, tuple[str, ...]]:
    """For each fact of the audit that another of its facts derives from (a ``fact`` input of that fact's derivation,
    of the same record: ``memory.bandwidth`` of ``streams.read``, ``acceptance.1`` of ``draft.acceptance.2``), the
    paths of those derived facts, in row order. An elasticity moves one fact alone, holding the facts derived from
    it as written, so its figure is not what an error of the fact would do once they are re-derived: the H200's
    stream shares are BabelStream rates over ``memory.bandwidth``, and re-derived with the bandwidth 10 % higher
    they give the same bytes a second, and the same price, where ``memory.bandwidth`` reads +1.000 (walkthrough
    35). Raises nothing."""
    from passprice.derivations import Derivation

    paths = {r.path for r in a.rows}
    out: dict[str, list[str]] = {}
    for r in a.rows:
        derivation = r.fact.derivation
        if not isinstance(derivation, Derivation):  # none, free text, or a stack's fit to its runs
            continue
        prefix = next((p for p in ("draft.", "stack.", "routing.") if r.path.startswith(p)), "")
        for i in derivation.inputs:
            if i.fact is None:
                continue
            source = i.fact if i.fact in paths else prefix + i.fact
            if source in paths and r.path not in out.setdefault(source, []):
                out[source].append(r.path)
    order = [r.path for r in a.rows]
    return {p: tuple(out[p]) for p in sorted(out, key=order.index)}


def derived_note(a: Audit) -> str | None:
    """The line under an audit's table naming the facts other rows derive from (:func:`derived_from`), ``None``
    when none does: ``derived from another row: memory.bandwidth (streams.read, streams.append), … — each
    elasticity moves the fact alone, holding what derives from it as written``."""
    found = derived_from(a)
    if not found:
        return None
    rows = {r.path: r for r in a.rows}

    def through(path: str) -> str:
        r = rows[path]
        if r.elasticity is None:
            return ""
        return f" {r.rederived:+.3f} re-derived" if r.rederived is not None else " (re-derived: refused)"

    named = "; ".join(f"{p} (of {', '.join(d)}){through(p)}" for p, d in found.items())
    return (f"inputs of other rows' derivations: {named} — each elasticity in the table moves the fact alone, the "
            "facts derived from it held as written; re-derived, they are recomputed from it by their formulas")


def rederived_cell(r: AuditRow, found: Mapping[str, tuple[str, ...]]) -> str:
    """A row's ``re-derived`` cell (``found``: :func:`derived_from`): for a fact another row derives from, its
    elasticity with those facts re-derived from it (:attr:`AuditRow.rederived`, ``+0.000``), ``refused`` when that
    price is refused, ``–`` where the plain elasticity itself was not measured; empty for any other fact. Left32:
    ``elasticity_rederived`` was in ``--json`` alone, under a note of the text table and absent from markdown."""
    if r.path not in found:
        return ""
    if r.elasticity is None:
        return "–"
    return f"{r.rederived:+.3f}" if r.rederived is not None else "refused"


def by_source(a: Audit) -> dict[str | None, list[AuditRow]]:
    """The audit's facts grouped by the source they cite (``None`` for facts pinned with a free-text cite), in the
    order each source first appears."""
    out: dict[str | None, list[AuditRow]] = {}
    for r in a.rows:
        out.setdefault(r.fact.source, []).append(r)
    return out


def input_citations(a: Audit) -> list[tuple[str, str, Input]]:
    """Each figure a derivation of a fact the audit rests on reads from a document of its own: ``(source id, fact
    path, input)`` for every input naming a ``source`` other than its fact's, in the order of the facts and then of
    each derivation's inputs. Slip round 41: the MI300X's ``on_chip.capacity`` reads its ``vgpr`` (512 KiB a CU) from
    ``amd-rocm-gpu-specs``, which no fact of the price cites, so the audit's citations, its ``--json`` ``sources``,
    the documents' caveats and the records changed since a lock left that document out (the derivation line named
    its id alone). Raises nothing."""
    from passprice.derivations import Derivation

    out = []
    for r in a.rows:
        derivation = r.fact.derivation
        if not isinstance(derivation, Derivation):
            continue
        for i in derivation.inputs:
            if i.source is not None and i.source != r.fact.source:
                out.append((i.source, r.path, i))
    return out


def cited_sources(a: Audit) -> list[str]:
    """The ids of every document the audited price rests on, each once, in the order first cited: the facts' own
    sources, then those only their derivations' figures cite (:func:`input_citations`). Raises nothing."""
    ids = [r.fact.source for r in a.rows if r.fact.source is not None]
    return list(dict.fromkeys([*ids, *(sid for sid, _, _ in input_citations(a))]))


def quote_checks(a: Audit, texts: Mapping[str, StoredText]) -> tuple[QuoteCheck, ...]:
    """:func:`quote_check` of each fact of ``a``, in its rows' order, one :class:`passprice.sources.Lookups` spent
    in all (:data:`QUOTES_MOST` spans). Raises nothing."""
    left = Lookups()
    return tuple(quote_check(r.path, r.fact, texts, left, where=True) for r in a.rows)


def lock_pins(lock: Lock, reference: str | None = None) -> tuple[str, str]:
    """What identifies the audited ``lock``'s price, for a paper or a report citing it: ``(pins, cite)``.

    ``pins`` names the lock, its digest (``[lock] digest``: sha256 over the canonical JSON of everything the lock
    holds but the digest itself, so over every pinned fact, the checkpoint's content, the serving, the policy, the
    pricing model's digest and the recorded price; :func:`passprice.locks.lock_document`) and its pricing model's
    digest (``[lock] pricing_model``; a format-1 lock pins none); ``cite`` says what to cite and how to re-check it
    (``passprice reproduce REFERENCE``, ``reference`` as the command line named the lock, as one shell word:
    :func:`passprice.files.shell_word`; attack round 54: a lock file named ``a$(id)'x.lock.toml`` was pasted bare, so
    the command ran ``id``, and a newline in its name split the line). Walkthrough 36: the audit a researcher pastes
    under a published figure named neither digest, and no README line said what to cite."""
    from passprice.files import shell_word

    model = (lock.info.pricing_model if lock.info.format >= 2
             else f"none (lock format {lock.info.format} pins no pricing model)")
    pins = f"{lock.name}: digest {lock.info.digest}; pricing model {model}"
    again = shell_word(reference or lock.name)
    cite = (
        "to cite this price: the lock's name and digest, which cover every pinned fact, the checkpoint's content, "
        f"the serving, the pricing model and the recorded price; `passprice reproduce {again}` "
        "re-prices it from them bit for bit"
    )
    return pins, cite


def _fact_locators(fact: Fact) -> list[str]:
    """``fact``'s locator and each of its derivation's inputs' (what names the rows it reads)."""
    from passprice.derivations import Derivation

    out = [fact.locator] if fact.locator else []
    if isinstance(fact.derivation, Derivation):
        out += [i.locator for i in fact.derivation.inputs if i.locator]
    return out


@attrs.frozen
class DescriptionNote:
    """A description an audit's price does not read that still names a table row none of its facts cites
    (:mod:`passprice.rowcite`; walkthrough 49's routing record re-cited from row 'narrow (single-domain Python)' to
    row 'diverse (prose, code, math)'): ``record`` is ``"source"`` (``field`` ``"read"``: the source's read line) or
    ``"routing"`` (``field`` ``"title"``: the routing record's title), ``id`` the source id or routing record name,
    ``rows_named`` the rows it still names (those a source's read quotes that no fact citing it cites), ``rows_cited``
    the rows the facts cite, ``note`` the line the text audit prints after ``to verify:``. Said, never failed."""

    record: str
    id: str
    field: str
    rows_named: tuple[str, ...]
    rows_cited: tuple[str, ...]
    note: str

    def to_json(self) -> dict[str, Any]:
        """``{"record", "id", "field", "rows_named", "rows_cited", "note"}`` (``audit --json``'s
        ``stale_descriptions`` items)."""
        return {"record": self.record, "id": self.id, "field": self.field, "rows_named": list(self.rows_named),
                "rows_cited": list(self.rows_cited), "note": self.note}


def description_notes(
    a: Audit, sources: Mapping[str, Source] | None = None, routing: RoutingShown | None = None
) -> tuple[DescriptionNote, ...]:
    """The audit's stale descriptions, in the order the text audit prints them: each registered source (of
    ``sources``) a fact cites whose ``read`` names a row none of the facts citing it cites
    (:func:`passprice.rowcite.read_note`), then the ``routing`` record's title when it still says words of such a row
    alone (:func:`passprice.rowcite.title_note`; only when the price is routed). One list for the text, markdown and
    ``--json`` audits, so they carry the same findings (session 37: ``--json`` had none). Raises nothing."""
    from passprice.rowcite import read_note, title_note, uncited_rows
    from passprice.rowcite import rows as cited_rows

    out: list[DescriptionNote] = []
    old_rows: list[str] = []  # rows a source's read names that no fact citing it cites
    for source_id, group in by_source(a).items():
        record = (sources or {}).get(source_id) if source_id is not None else None
        if source_id is None or record is None:
            continue
        locators = [loc for r in group for loc in _fact_locators(r.fact)]
        said = read_note(record.read, locators)
        if said is not None:
            named = uncited_rows(record.read, cited_rows(locators))
            old_rows += named
            out.append(DescriptionNote("source", source_id, "read", named, cited_rows(locators), said))
    if routing is not None and a.cost.routed is not None:
        locators = [loc for r in a.rows if r.path.startswith("routing.") for loc in _fact_locators(r.fact)]
        titled = title_note("its title", routing.title, old_rows, locators)
        if titled is not None:
            out.append(DescriptionNote("routing", routing.name, "title", tuple(dict.fromkeys(old_rows)),
                                       cited_rows(locators), titled))
    return tuple(out)


def audit_text(
    a: Audit,
    title: str,
    sources: Mapping[str, Source] | None = None,
    stale: Stale | None = None,
    calibration: tuple[Calibration, ...] = (),
    routing: RoutingShown | None = None,
    draft: RoutingShown | None = None,
    registry: str = "",
    texts: Mapping[str, StoredText] | None = None,
    home: Path | None = None,
) -> str:
    """The audit for people: a table of the facts (binding ones marked ``*``, the weakest ``!``) with their floors and
    margins (a lock's, or the serving's locks') and elasticities; a line naming the ``stale`` derived facts it rests
    on, if any; then the citations grouped by source (with each source's title, from ``sources``), each fact's
    derivation (marked STALE where it no longer gives the fact) and note. ``registry`` prefixes each registry file it
    names (:data:`passprice.registry.BUILT_IN` for the embedded registry, as a lock or checkpoint entry of it is
    named). With ``texts`` (the cited documents' stored excerpts, :func:`passprice.sources.stored_texts`), a stored
    excerpt that is not a regular file is said on its line, and a ``quotes checked against a stored text:`` section
    gives each fact's :class:`QuoteCheck` under :func:`quotes_summary`'s line. ``home``: the built-in registry's
    folder (with ``registry``), whose absolute path of each stored excerpt is given (the README's promise)."""
    found = _stale_by_path(stale)
    problems = {sid: t.problem for sid, t in (texts or {}).items() if t.problem is not None}
    described = description_notes(a, sources, routing)
    read_notes = {n.id: n.note for n in described if n.record == "source"}
    with_floors = any(r.floor is not None for r in a.rows)
    inputs = derived_from(a)
    rows = []
    for r in a.rows:
        mark = ("*" if r.binding else "") + ("!" if r.weakest else "")
        if r.path in found:  # a fact that does not follow from today's inputs (its line under derivations)
            mark = f"{mark} STALE" if mark else "STALE"
        row = [mark, r.path, _value(r.fact), r.fact.provenance.value]
        if with_floors:
            row += [r.floor.value if r.floor is not None else "–", _margin(r)]
        rows.append([*row, _elasticity(r), *([rederived_cell(r, inputs)] if inputs else [])])
    headers = ["", "fact", "value", "provenance", *(["floor", "margin"] if with_floors else []), "elasticity",
               *(["re-derived"] if inputs else [])]
    lines = [
        escaped(title),  # a checkpoint path's U+202E, as --json escapes it (left43)
        f"  {a.cost.tokens_per_s:,.1f} tokens/s at batch {a.cost.batch:,}, binds on {a.cost.binds.value}; "
        f"weakest provenance {a.cost.provenance.value} ({', '.join(a.cost.weakest)})",
        "",
        text_table(headers, rows, right=(2, *range(len(headers) - (2 if inputs else 1), len(headers)))),
        "",
        "  * a fact of the binding term   ! carries the weakest provenance"
        + ("   STALE does not follow from today's inputs (below)" if found else ""),
        f"  elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing{_step_said(a)}",
        *(f"  {line}" for line in elasticity_notes(a)),
    ]
    if with_floors:
        lines.append(
            "  floor: the weakest provenance the lock allows the fact (of several locks, the strictest); margin: "
            "rungs above it"
        )
    lines.append(f"  by hand: {by_hand(a)}")
    note = derived_note(a)
    if note is not None:
        lines.append(f"  {note}")
    if stale:
        lines += ["", f"STALE: {stale.summary()}"]  # each finding whole under its fact (derivations, below)
    lines += ["", "citations, by source:"]
    groups = by_source(a)
    figures: dict[str, list[str]] = {}  # a derivation's figure read from another document (slip round 41)
    for sid, path, i in input_citations(a):
        figures.setdefault(sid, []).append(f"    {path}, its figure {i.name} = {i.shown()}: {i.locator}")
    for source_id in [*groups, *(sid for sid in figures if sid not in groups)]:
        group = groups.get(source_id, [])
        if source_id is None:
            lines.append("  (pinned before sources: free-text cites)")
            lines += [f"    {r.path}: {r.fact.cite}" for r in group]
            continue
        record = (sources or {}).get(source_id)
        lines.append(f"  {source_id}" + (f" — {record.describe()}" if record is not None else " (not registered)"))
        if record is not None:  # where to open it, and how it was read (what a reviewer checks a locator against)
            lines.append(f"    at: {record.where(registry)}")
            lines.append(f"    read: {record.read}")
            # A record re-cited to another row of the source's table leaves the read line on the old one
            # (walkthrough 49): said, never failed.
            if source_id in read_notes:
                lines.append(f"    to verify: {read_notes[source_id]}")
            lines += _copy_lines(record, registry, problems.get(source_id), home)
        lines += [f"    {r.path}: {r.fact.locator}" for r in group]
        lines += figures.get(source_id, [])
    if texts is not None:
        checks = quote_checks(a, texts)
        lines += ["", f"quotes checked against a stored text: {quotes_summary(checks)}"]
        for qc in checks:
            lines.append(f"  {qc.line()}")
            if qc.places() is not None:  # each quote's line in its stored excerpt, for an auditor to open
                lines.append(f"    {qc.places()}")
    if routing is not None and a.cost.routed is not None:
        lines += ["", "routing record (how the mixture of experts' rows route: the routing.* facts above):",
                  f"  {routing.describe(registry)}"]
        lines += [f"  to verify: {n.note}" for n in described if n.record == "routing"]
        note = routing.note_line()
        if note is not None:
            lines.append(f"  {note}")
    if draft is not None:
        lines += ["", "drafting method (how the drafts are accepted: the draft.acceptance.* facts above):",
                  f"  {draft.describe(registry)}"]
        note = draft.note_line()
        if note is not None:
            lines.append(f"  {note}")
    if calibration:
        lines += ["", "calibrated on (the measured runs the stack's fitted facts were fitted to):"]
        for c in calibration:
            lines.append(f"  {c.describe(registry)}")
            record = (sources or {}).get(c.source)
            if record is not None:
                lines.append(f"    {c.source} — {record.describe()}")
                lines.append(f"    at: {record.where(registry)}")
                lines += _copy_lines(record, registry, problems.get(c.source), home)
            if (read := c.cards_line()) is not None:
                lines.append(f"    {read}")
    derived = [r for r in a.rows if r.fact.derivation is not None]
    if derived:
        lines += ["", "derivations:"]
        for r in derived:
            text, mark = _derivation_said(r.path, r.fact, stale)
            lines.append(f"  {r.path}: {text}" + (f" — STALE: {mark}" if mark else "") + cancels_text(r.path, r.fact))
    noted = [r for r in a.rows if r.fact.note]
    if noted:
        lines += ["", "notes:"]
        lines += [f"  {r.path}: {r.fact.note}" for r in noted]
    return "\n".join(lines)


def audit_markdown(
    a: Audit,
    title: str,
    sources: Mapping[str, Source] | None = None,
    stale: Stale | None = None,
    calibration: tuple[Calibration, ...] = (),
    routing: RoutingShown | None = None,
    draft: RoutingShown | None = None,
    registry: str = "",
    texts: Mapping[str, StoredText] | None = None,
    home: Path | None = None,
) -> str:
    """The audit as a pull-request comment: a summary line, a table of the facts (value, provenance, floor and
    margin, elasticity, its ``term`` role: binds or weakest, source and locator), the sources, the ``routing``
    record and the runs a stack was ``calibration``-fitted on, each fact's derivation and note, and a warning naming
    the ``stale`` derived facts it rests on; with ``texts``, as :func:`audit_text` gives them, each stored excerpt's
    problem and the quotes checked against a stored text; ``home`` as :func:`audit_text` takes it."""
    rows = []
    problems = {sid: t.problem for sid, t in (texts or {}).items() if t.problem is not None}
    inputs = derived_from(a)
    for r in a.rows:
        mark = " ".join([*(["**binds**"] if r.binding else []), *(["⚠️ weakest"] if r.weakest else []),
                         *(["**STALE**"] if stale is not None and r.path in stale.paths() else [])])  # as text's
        floor = "–" if r.floor is None else f"{r.floor.value} ({_margin(r)})"
        record = (sources or {}).get(r.fact.source or "")
        cite = (f"{markdown_code(r.fact.source)} {markdown_text(r.fact.locator or '')}" if r.fact.source is not None
                else markdown_text(r.fact.cite or ""))
        if record is not None:
            cite = (f"{markdown_text(record.title)} ({markdown_code(r.fact.source or '')}): "
                    f"{markdown_text(r.fact.locator or '')}")
        rows.append([markdown_code(r.path), _value(r.fact), r.fact.provenance.value, floor, _elasticity(r),
                     *([rederived_cell(r, inputs)] if inputs else []), mark.strip(), cite])
    head = (
        f"**{markdown_text(title)}**: {a.cost.tokens_per_s:,.1f} tokens/s at batch {a.cost.batch:,}, binds on "
        f"{a.cost.binds.value}; weakest provenance {a.cost.provenance.value}\n\nBy hand: {markdown_text(by_hand(a))}"
    )
    table = markdown_table(
        ["fact", "value", "provenance", "floor (margin)", "elasticity", *(["re-derived"] if inputs else []), "term",
         "source: locator"], rows, right=(1, 4, 5) if inputs else (1, 4)
    )
    notes = elasticity_notes(a)
    if notes:
        table += (f"\n\nElasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing{_step_said(a)}.\n"
                  + "\n".join(f"- {markdown_text(line)}" for line in notes))
    derived_line = derived_note(a)
    if derived_line is not None:  # as the text says it under its table (left32)
        table += f"\n\nRe-derived: {markdown_text(derived_line)}"
    # the text audit's one short line (Stale.summary), not the whole of each finding (each under its derivation)
    # (said last, after the derivations: their details lie above it)
    warning = (f"\n\n⚠️ **stale**: {markdown_prose(stale.summary().replace('details below', 'details above'))}"
               if stale else "")
    cited = cited_sources(a)
    documents = [
        f"- {markdown_code(sid)}: {markdown_text(record.where(registry))}. Read: {markdown_text(record.read)}"
        + (f" ({markdown_text('; '.join(line.strip() for line in copied))})"
           if (copied := _copy_lines(record, registry, problems.get(sid), home)) else "")
        for sid in cited if (record := (sources or {}).get(sid)) is not None
    ]
    listing = "\n\nSources:\n" + "\n".join(documents) if documents else ""
    if texts is not None:
        checks = quote_checks(a, texts)
        listing += (f"\n\nQuotes checked against a stored text: {markdown_text(quotes_summary(checks))}\n"
                    + "\n".join(f"- {'⚠️ ' if c.state != 'checked' or c.unquoted else ''}{markdown_code(c.path)}: "
                                 f"{markdown_text(c.line().split(': ', 1)[1])}" for c in checks))
    if routing is not None and a.cost.routed is not None:
        note = routing.note_line()
        listing += (f"\n\nRouting record: {markdown_text(routing.describe(registry))}"
                    + (f"\n- {markdown_text(note)}" if note is not None else ""))
    described = description_notes(a, sources, routing)
    if described:  # as the text audit's "to verify" lines (walkthrough 49)
        listing += "\n\nTo verify:\n" + "\n".join(
            f"- ⚠️ {'routing record' if n.record == 'routing' else n.record} {markdown_code(n.id)}: "
            f"{markdown_text(n.note)}" for n in described)
    if draft is not None:
        note = draft.note_line()
        listing += (f"\n\nDrafting method: {markdown_text(draft.describe(registry))}"
                    + (f"\n- {markdown_text(note)}" if note is not None else ""))
    if calibration:
        listing += "\n\nCalibrated on (the measured runs the stack's fitted facts were fitted to):\n" + "\n".join(
            f"- {markdown_text(c.describe(registry))}"
            + (f"\n  - {markdown_text(read)}" if (read := c.cards_line()) is not None else "") for c in calibration
        )
    # Each derivation and note, as the text audit gives them (walkthrough 19: the markdown had neither, so a reviewer
    # could not trace streams.read's 0.9333 to BabelStream's Dot 4.48 TB/s over 4.8 TB/s).
    derived = [r for r in a.rows if r.fact.derivation is not None]
    if derived:
        said = {r.path: _derivation_said(r.path, r.fact, stale) for r in derived}
        listing += "\n\nDerivations:\n" + "\n".join(
            f"- {markdown_code(r.path)}: {markdown_text(said[r.path][0])}"
            + (f" — **STALE**: {markdown_prose(said[r.path][1])}" if said[r.path][1] else "")
            + markdown_text(cancels_text(r.path, r.fact))
            for r in derived
        )
    noted = [r for r in a.rows if r.fact.note]
    if noted:
        listing += "\n\nNotes:\n" + "\n".join(
            f"- {markdown_code(r.path)}: {markdown_text(r.fact.note or '')}" for r in noted
        )
    return f"{head}\n\n{table}{listing}{warning}"
