"""A serving stack's expected price on a card its runs never measured is an extrapolation across cards, and says so
with the error its fit reported for a card held out.

A stack's facts are fitted to measured runs (``passprice calibrate``; each fitted fact's derivation names every run
and the errors of the fit, in sample and with each card left out in turn: ``card_out_mean`` and ``card_out_max``).
The stack's ``range.*`` facts bound the batches and positions it holds on, and a price outside them is refused
(:class:`~passprice.stacks.BeyondStack`); the cards are not bounded, since the leave-one-card-out error is the
fit's own measure of how it carries to a card it did not see. :func:`card_reach` says which case a price is in.

So for the kind of model: a stack fitted only on dense checkpoints has a fixed cost a layer and shares of the card's
rates that dense layers reached; a mixture of experts (its routed expert reads and gating) or a recurrent hybrid
(its state rewritten in place) runs other kernels. :func:`model_reach` says when a price is of a kind of model none
of the stack's runs measured, with the error its fit reported for a checkpoint held out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.derivations import RunDerivation
from passprice.gguf_header import GGUFHeader
from passprice.registry import Root
from passprice.stacks import Stack

if TYPE_CHECKING:
    from passprice.stale import Stale


@attrs.frozen
class CardReach:
    """Where a stack's expected price on ``card`` stands: ``fitted`` (the cards whose runs its facts were fitted to,
    sorted), and ``card_out_mean``/``card_out_max`` (the fit's relative error on a card held out, as it reported
    them; ``None`` when it reported none)."""

    stack: str
    card: str
    fitted: tuple[str, ...]
    card_out_mean: float | None = None
    card_out_max: float | None = None
    #: ``card``'s ``[card] vendor``, and the vendors of the ``fitted`` cards that name one (sorted); ``None`` and
    #: ``()`` where unknown. A stack fitted on one vendor's cards (llama.cpp's CUDA backend on NVIDIA's) priced an
    #: AMD card with no word that its kernels had never run on such a card (walkthrough 22).
    vendor: str | None = None
    fitted_vendors: tuple[str, ...] = ()

    @property
    def measured(self) -> bool:
        """True when the stack's runs measured ``card`` (or when the fit named no runs to judge by)."""
        return not self.fitted or self.card in self.fitted

    def warning(self, others: list[str] | None = None, vendors: Mapping[str, str | None] | None = None) -> str | None:
        """One line for a card the stack's runs never measured (``None`` otherwise): the cards they did, and the
        held-out-card error the fit reported; ``others``: more unmeasured cards the same line names (a sweep's), with
        their ``vendors`` by card. The cards of a vendor none of the fitted cards is of are named too."""
        if self.measured:
            return None
        if self.card_out_mean is not None and self.card_out_max is not None:
            errors = (f" (with a card held out of the fit, its error was {100 * self.card_out_mean:.3g} % on average, "
                      f"{100 * self.card_out_max:.3g} % at most)")
        else:  # runs on one card: none could be held out, so no error across cards was ever measured
            errors = " (no card could be held out of its fit: its error on another card was never measured)"
        cards = "card" if len(self.fitted) == 1 else "cards"
        named = [self.card, *(others or [])]
        shown = ", ".join(named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
        where = "here" if len(named) == 1 else "there"
        price = "price" if len(named) == 1 else "prices"
        vendor = ""
        of = {**(vendors or {}), self.card: self.vendor}
        fitted_as = {v.casefold() for v in self.fitted_vendors}  # "Nvidia" is NVIDIA (attack round 36)
        foreign = [c for c in named if (v := of.get(c)) is not None and v.casefold() not in fitted_as]
        if self.fitted_vendors and foreign:
            which = ", ".join(f"{c} has vendor {_vendor_shown(of[c])}" for c in foreign[:4]) + (
                f" and {len(foreign) - 4} more" if len(foreign) > 4 else "")
            fitted = " or ".join(map(_vendor_shown, self.fitted_vendors[:MAX_VENDORS_SHOWN])) + (
                f" (or {len(self.fitted_vendors) - MAX_VENDORS_SHOWN} more vendors)"
                if len(self.fitted_vendors) > MAX_VENDORS_SHOWN else "")
            # "has vendor X", never "X's": a vendor is free text, and "ws1_hypothetical is hypothetical's" read as
            # garbled English (walkthrough 36; left31)
            vendor = (f"; and every card its runs measured has vendor {fitted}, {which}: the "
                      "stack's kernels never ran on such a card as measured, so its facts may not describe the "
                      "runtime there at all")
        return (f"stack {self.stack} was fitted on runs on {len(self.fitted)} {cards} ({', '.join(self.fitted)}), "
                f"not {shown}: its expected {price} {where} extrapolate{'s' if len(named) == 1 else ''} across "
                f"cards{errors}{vendor}")


#: The most fitted cards' vendors a card-reach warning names, and the characters of each it shows
#: (:func:`_vendor_shown`): a card's ``[card] vendor`` has no length cap in its schema, and a vendor of 100,000
#: characters made a 104 KB warning line on every price under the stack (attack round 36).
MAX_VENDORS_SHOWN = 4
MAX_VENDOR_CHARS = 40


def _vendor_shown(vendor: str | None) -> str:
    """``vendor`` for the warning line, its first :data:`MAX_VENDOR_CHARS` characters and ``…`` when longer."""
    text = vendor or ""
    return text if len(text) <= MAX_VENDOR_CHARS else f"{text[:MAX_VENDOR_CHARS]}…"


def card_reach(root: Root, stack: Stack, card: str) -> CardReach:
    """Which cards ``stack``'s fitted facts were fitted on (the cards of the runs their derivations name, read from
    ``root``'s measured runs; a card the stack gives facts of its own counts too), and the held-out-card errors its
    fit reported. A run its derivations name that the registry no longer holds is skipped (``check`` reports it).
    Raises :class:`~passprice.errors.InputError` for a measurement file that does not read."""
    from passprice.measurements import load_runs

    named: set[str] = set()
    errors: dict[str, float] = {}
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
            errors.update(fact.derivation.errors or {})
    cards = {run.card for run in load_runs(root, stack.name) if run.id in named} if named else set()
    cards.update(stack.cards)
    reach = CardReach(stack.name, card, tuple(sorted(cards)), errors.get("card_out_mean"), errors.get("card_out_max"))
    if reach.measured:
        return reach
    vendors = {v for v in map(lambda c: card_vendor(root, c), cards) if v is not None}
    return attrs.evolve(reach, vendor=card_vendor(root, card), fitted_vendors=tuple(sorted(vendors)))


def stack_vendors(root: Root, stack: Stack, card: str) -> tuple[str | None, tuple[str, ...]]:
    """What a price of ``card`` under ``stack`` reads of vendors (:func:`card_reach`'s ``vendor`` and
    ``fitted_vendors``, whether or not the stack's runs measured the card): the card's ``[card] vendor`` (``None``
    when it gives none) and the vendors of the cards the stack was fitted on, sorted, each once. A lock made under a
    stack pins both (:class:`passprice.locks.StackPin`): the warning that the stack's kernels never ran on a card of
    that vendor rests on them, and the MI300X's vendor rewritten AMD → NVIDIA silenced it under a lock while
    ``check``, ``reproduce``, ``price --lock`` and the review said nothing (slip 48). Raises
    :class:`~passprice.errors.InputError` for a measurement file that does not read."""
    from passprice.measurements import load_runs

    named: set[str] = set()
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
    cards = {run.card for run in load_runs(root, stack.name) if run.id in named} if named else set()
    cards.update(stack.cards)
    vendors = {v for v in map(lambda c: card_vendor(root, c), cards) if v is not None}
    return card_vendor(root, card), tuple(sorted(vendors))


def card_vendor(root: Root, card: str) -> str | None:
    """The ``[card] vendor`` of the card ``card`` names in ``root`` (``NVIDIA``, ``AMD`` …), or ``None`` when the file
    gives none or does not read (the price reports that file itself). Never raises."""
    from passprice import schema
    from passprice.cards import card_path
    from passprice.errors import InputError

    try:
        vendor = schema.load(card_path(root, card), "card", root.schema).get("card", {}).get("vendor")
    except InputError:
        return None
    return vendor if isinstance(vendor, str) and vendor else None


def model_kind(header: GGUFHeader) -> str:
    """The kind of model ``header`` holds, as far as a serving stack's kernels differ: ``mixture of experts`` (an
    ``expert_count`` above 0), ``recurrent hybrid`` (``ssm.*`` metadata: Gated-DeltaNet or Mamba layers) or
    ``dense``."""
    if (header.meta_int("expert_count") or 0) > 0:
        return "mixture of experts"
    if header.meta_int("ssm.state_size") is not None or header.meta_int("ssm.inner_size") is not None:
        return "recurrent hybrid"
    return "dense"


@attrs.frozen
class ModelReach:
    """Where a stack's expected price of a checkpoint of kind ``kind`` (:func:`model_kind`) stands: ``fitted``
    (the kinds of the checkpoints its runs measured, sorted), and ``checkpoint_out_mean``/``checkpoint_out_max``
    (the fit's relative error on a checkpoint held out, as it reported them; ``None`` when it reported none)."""

    stack: str
    kind: str
    fitted: tuple[str, ...]
    checkpoint_out_mean: float | None = None
    checkpoint_out_max: float | None = None

    @property
    def measured(self) -> bool:
        """True when the stack's runs measured a checkpoint of this kind (or when the fit named no runs)."""
        return not self.fitted or self.kind in self.fitted

    def warning(self) -> str | None:
        """One line for a kind of model the stack's runs never measured (``None`` otherwise)."""
        if self.measured:
            return None
        errors = ""
        if self.checkpoint_out_mean is not None and self.checkpoint_out_max is not None:
            errors = (f" (with a checkpoint held out of the fit, its error was {100 * self.checkpoint_out_mean:.3g} % "
                      f"on average, {100 * self.checkpoint_out_max:.3g} % at most, on the kinds it saw)")
        return (f"stack {self.stack} was fitted on runs of {' and '.join(self.fitted)} checkpoints only, not a "
                f"{self.kind}: its fixed costs and shares here are extrapolated from other kernels{errors}")


def model_reach(root: Root, stack: Stack, header: GGUFHeader) -> ModelReach:
    """The kinds of model (:func:`model_kind`) the checkpoints of ``stack``'s fitted runs are, against ``header``'s,
    and the held-out-checkpoint errors its fit reported. A run's checkpoint the registry no longer holds, or one that
    does not read, is skipped (``check`` reports it). Raises :class:`~passprice.errors.InputError` for a
    measurement file that does not read."""
    from passprice.checkpoints import load_checkpoint
    from passprice.errors import InputError
    from passprice.measurements import load_runs

    named: set[str] = set()
    errors: dict[str, float] = {}
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
            errors.update(fact.derivation.errors or {})
    checkpoints = {run.checkpoint for run in load_runs(root, stack.name) if run.id in named} if named else set()
    kinds: set[str] = set()
    for name in sorted(checkpoints):
        try:
            kinds.add(model_kind(load_checkpoint(root, name)))
        except InputError:
            continue
    return ModelReach(stack.name, model_kind(header), tuple(sorted(kinds)), errors.get("checkpoint_out_mean"),
                      errors.get("checkpoint_out_max"))


@attrs.frozen
class RatioReach:
    """Where a price's ``ratio`` (expected tokens/s over the card's limit) stands against the ratios the stack's
    fitted runs measured (measured tokens/s over their limit): ``low`` … ``high`` over ``runs`` runs (``runs`` 0:
    none could be priced, and nothing is judged). The README's span ("the limit is 1.17 to 2.92 × what was
    measured") is its inverse."""

    stack: str
    ratio: float
    low: float
    high: float
    runs: int
    #: The batch the ratio was taken at, when the price's own limit lies at another (a best price's own best batch).
    at_batch: int | None = None

    @property
    def inside(self) -> bool:
        """True when the ratio lies within the runs' span (or no run could be priced), each compared as
        :meth:`line` shows it, to 4 significant digits: a price at a fitted run's own setting, priced on facts the
        fit rounded to 4 digits, gave 0.61543296 against the run's 0.61543511 and read "this price's 0.6154 … lies
        outside" the "0.6154 … 0.6223" span it printed (walkthrough 37)."""
        if self.runs == 0:
            return True
        low, ratio, high = (float(f"{x:.4g}") for x in (self.low, self.ratio, self.high))
        return low <= ratio <= high

    def to_json(self) -> dict[str, Any]:
        """``{"runs", "low", "high", "ratio", "batch", "inside"}``: the fitted runs' measured / limit span, the
        price's expected / limit ratio (at ``batch``, the expected price's, when the limit shown lies at another;
        else ``null``) and whether it lies in the span."""
        return {"runs": self.runs, "low": self.low, "high": self.high, "ratio": self.ratio, "batch": self.at_batch,
                "inside": self.inside}

    def _price(self) -> str:
        # at the expected price's batch: the limit re-priced there, not the limit's best (leftovers 28)
        at = "" if self.at_batch is None else f" × the limit at the same batch {self.at_batch:,}"
        return f"this price's {self.ratio:.4g}{at}"

    def line(self, stale: bool = False) -> str:
        """The span, for a price's text: ``its 111 fitted runs measured 0.3425 … 0.8547 × their limit (the limit
        1.17 … 2.92 × measured)``, and, outside it, that this price extrapolates. ``stale``: the stack's fit no
        longer follows from today's runs (:class:`FitCheck`), and the span, read from today's runs, is said to be
        theirs, not the fit's (``its 111 fitted runs, as today's registry holds them, not as the stale fit read
        them, measured …``)."""
        today = ", as today's registry holds them, not as the stale fit read them," if stale else ""
        span = (f"its {self.runs} fitted runs{today} measured {self.low:.4g} … {self.high:.4g} × their limit (the "
                f"limit {1 / self.high:.3g} … {1 / self.low:.3g} × measured)")
        if self.inside:
            return f"{span}; {self._price()} lies inside"
        return (f"{span}; {self._price()} (the limit {1 / self.ratio:.3g} × expected) lies outside: an extrapolation "
                "of the fit")

    def warning(self) -> str | None:
        """One line for a ratio outside the span (``None`` inside it)."""
        if self.inside:
            return None
        at = "" if self.at_batch is None else f" at batch {self.at_batch:,}"
        return (f"stack {self.stack}'s expected price here is {self.ratio:.4g} × the limit{at} (the limit "
                f"{1 / self.ratio:.3g} × expected), outside the {self.low:.4g} … {self.high:.4g} × (limit "
                f"{1 / self.high:.3g} … {1 / self.low:.3g} × measured) its {self.runs} fitted runs measured: the fit "
                "is extrapolated here")


def ratio_span(root: Root, stack: Stack) -> tuple[float, float, int]:
    """The least and largest measured / limit ratio of ``stack``'s fitted runs (those its fitted facts' derivations
    name), and how many were priced: each run's limit priced on its card and checkpoint as ``validate`` prices it. A
    run that does not load or price is skipped (``check`` and ``validate`` report it). Kept in the cache of built
    objects, keyed by the bytes of the stack, its measurement files and every card, checkpoint entry and routing
    record its runs name, so a second price under the stack prices no run; one of those that is there but does not
    read (a FIFO, a device) keys it by the line saying why, its runs skipped, as a missing one or a folder (left50).
    Raises :class:`~passprice.errors.InputError` for a measurement file that does not read."""
    from passprice import cache
    from passprice.errors import InputError
    from passprice.files import is_there
    from passprice.schema import read_bytes

    runs = fitted_runs(root, stack)
    if not runs:
        return (0.0, 0.0, 0)
    files = [root.stacks / f"{stack.name}.toml"]
    files += [root.measurements / f"{s}.toml" for s in sorted({r.source for r in runs})]
    files += [root.cards / f"{c}.toml" for c in sorted({r.card for r in runs})]
    files += [root.checkpoints / f"{c}.toml" for c in sorted({r.checkpoint for r in runs})]
    # a mixture of experts' run is priced on the routing record it names (walkthrough 22): its bytes key the span too
    files += [root.routing / f"{n}.toml" for n in sorted({r.routing for r in runs if r.routing is not None})]

    def read(path: Path) -> bytes:
        # left50: a card (checkpoint entry, routing record) that is there but does not read, a FIFO, device or
        # socket, keys the span by the line saying why, as a missing one or a folder keys it by nothing: its runs
        # are skipped (run_ratios) and the audit names the card (attack69: a FIFO refused the whole audit, exit 2)
        try:
            return read_bytes(path) if is_there(path) else b""
        except InputError as e:
            return b"\1" + str(e).encode("utf-8", "surrogateescape")

    key = b"".join(str(p).encode("utf-8", "surrogateescape") + b"\0" + read(p) + b"\0" for p in files)

    def build() -> Span:
        return _span(root, runs)

    span = cache.built("stack-span", None, key, build, Span)
    return (span.low, span.high, span.runs)


@attrs.frozen
class Span:
    """The measured / limit span of a stack's fitted runs: ``low`` … ``high`` over ``runs`` runs priced."""

    low: float
    high: float
    runs: int


def _span(root: Root, runs: list[Any]) -> Span:
    ratios = list(run_ratios(root, runs).values())
    if not ratios:
        return Span(0.0, 0.0, 0)
    return Span(min(ratios), max(ratios), len(ratios))


def fitted_runs(root: Root, stack: Stack) -> list[Any]:
    """The measured runs of ``root`` that ``stack``'s fitted facts' derivations name (:class:`passprice.measurements`
    runs, in the registry's order). Raises :class:`~passprice.errors.InputError` for a measurement file that does
    not read."""
    from passprice.measurements import load_runs

    named: set[str] = set()
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
    return [run for run in load_runs(root, stack.name) if run.id in named] if named else []


#: How far past the span the other fitted runs measured (measured / limit) one run must lie to be said to be far
#: from them: 1.25 × beyond the nearest end. Calibrate then warns that the fit rests on it (a run edited to 3.98 ×
#: below its limit, where the other 111 were 1.17 … 2.92 ×, 1.36 × past them, was fitted without a word; the
#: shipped stacks' extreme runs lie 1.3 % and 2.2 % past their neighbours, tests/test_fix188.py).
APART_FROM_SPAN = 1.25


def runs_apart(ratios: Mapping[str, float]) -> list[str]:
    """One line for each run of ``ratios`` (:func:`run_ratios`: run id → measured / limit) lying past the span of
    the others by more than :data:`APART_FROM_SPAN`: ``run ID measured 0.2513 × its limit (the limit 3.98 ×
    measured), outside the 0.3425 … 0.8519 × (the limit 1.17 … 2.92 × measured) the other 111 runs measured: the
    fit rests on it; check its figure in its source``. Empty for fewer than 3 runs (no span of others to be apart
    from). Raises nothing."""
    if len(ratios) < 3:
        return []
    ordered = sorted(ratios.items(), key=lambda item: item[1])
    out = []
    for at, (run, ratio) in enumerate(ordered):
        others = [r for i, (_, r) in enumerate(ordered) if i != at]
        low, high = others[0], others[-1]
        if ratio <= 0 or not (ratio * APART_FROM_SPAN < low or ratio > high * APART_FROM_SPAN):
            continue
        out.append(f"run {run} measured {ratio:.4g} × its limit (the limit {1 / ratio:.3g} × measured), outside the "
                   f"{low:.4g} … {high:.4g} × (the limit {1 / high:.3g} … {1 / low:.3g} × measured) the other "
                   f"{len(others):,} runs measured: the fit rests on it; check its figure in its source")
    return out


def run_ratios(root: Root, runs: list[Any]) -> dict[str, float]:
    """Each run's measured tokens/s over its limit (the card's, priced as ``validate`` prices it), by run id; a run
    that does not load or price, or has no positive figure, is left out."""
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.errors import InputError
    from passprice.measurements import run_serving
    from passprice.serving import ServingRefusal, price_serving

    cards: dict[str, Any] = {}
    headers: dict[str, Any] = {}
    ratios: dict[str, float] = {}
    for run in runs:
        try:
            card = cards.get(run.card) or load_card(root, run.card)
            cards[run.card] = card
            header = headers.get(run.checkpoint) or load_checkpoint(root, run.checkpoint)
            headers[run.checkpoint] = header
            limit = price_serving(header, card, run_serving(root, run, header))
        except (InputError, ServingRefusal):
            continue
        if limit.tokens_per_s > 0 and run.tokens_per_s > 0:
            ratios[run.id] = run.tokens_per_s / limit.tokens_per_s
    return ratios


def ratio_reach(root: Root, stack: Stack, ratio: float, at_batch: int | None = None) -> RatioReach:
    """Where a price under ``stack`` whose expected tokens/s is ``ratio`` × its limit (at ``at_batch`` when given)
    stands against the measured / limit span of the stack's fitted runs (:func:`ratio_span`)."""
    low, high, runs = ratio_span(root, stack)
    return RatioReach(stack.name, ratio, low, high, runs, at_batch)


def expected_reach(root: Root, expected: Any, header: GGUFHeader, card: Any, serving: Any) -> RatioReach | None:
    """Where ``expected`` (:class:`~passprice.stacks.Expected`, priced on ``header``, ``card`` and ``serving``)
    stands against its stack's fitted span (:func:`ratio_reach`), ``None`` when the ratio cannot be taken. Its ratio
    is taken at one batch: a best price's limit lies at its own best batch (580 under llama.cpp, whose expected best
    is 1), so the limit is priced again at the expected price's batch, as each fitted run's is (then ``at_batch``);
    ``None`` when that is refused. Raises :class:`~passprice.errors.InputError` for a measurement file that does not
    read."""
    ratio, at = expected.ratio, None
    batch = expected.expected.batch
    if batch != expected.limit.batch:
        at = batch
        from passprice.serving import ServingRefusal
        from passprice.stacks import price_expected

        try:
            ratio = price_expected(header, card, attrs.evolve(serving, batch=batch), expected.stack).ratio
        except ServingRefusal:
            return None
    return ratio_reach(root, expected.stack, ratio, at)


def serving_reach(root: Root, stack: Stack, header: GGUFHeader, card: Any, serving: Any) -> RatioReach | None:
    """:func:`expected_reach` of ``serving``'s own expected price under ``stack`` (at its own batch and contexts), as
    ``price --stack`` prices it: what ``max-batch``, ``lock``, ``roofline``, ``speculate``, ``simulate``, ``sweep``
    and ``compare`` under a stack judge against the fitted span. ``None`` when the stack refuses that price (the
    command reports its own refusals) or no fitted run could be priced."""
    from passprice.serving import ServingRefusal
    from passprice.stacks import price_expected

    try:
        expected = price_expected(header, card, serving, stack)
    except ServingRefusal:
        return None
    reach = expected_reach(root, expected, header, card, serving)
    return None if reach is None or not reach.runs else reach


@attrs.frozen
class FitCheck:
    """What re-running a stack's fit from today's registry finds (:func:`fit_check`): ``findings``, each a
    :class:`~passprice.derivations.Finding` of :func:`passprice.calibrate.verify_stack` (``stale``: its runs moved;
    ``mismatch``: a card, checkpoint or routing record its runs price changed, or the pricing code did; ``broken``).
    Empty when the fit holds."""

    stack: str
    findings: tuple[Any, ...] = ()

    def facts(self) -> tuple[str, ...]:
        """The stack's fact paths the findings cover (``share.read``, a card's own ``cards.NAME.share.read``), each
        once, in the findings' order."""
        return tuple(dict.fromkeys(p for f in self.findings for p in (f.path, *f.also)))

    def guard_words(self) -> str | None:
        """What a lock line says a price rests on when the fit does not hold (:meth:`passprice.enforce.Guard.line`'s
        ``stale_fit``): ``stack S's stale fit (N fitted facts no longer follow from today's runs)``, then a NUL and
        :meth:`command`; ``None`` when it holds. Raises nothing."""
        if not self.findings:
            return None
        n = len(self.facts())
        return (f"stack {self.stack}'s stale fit ({n} fitted fact{'s' if n != 1 else ''} no longer follow"
                f"{'s' if n == 1 else ''} from today's registry)\0{self.command()}")

    def command(self) -> str:
        """The command that re-fits the stack: ``passprice calibrate --stack NAME``."""
        from passprice.files import shell_word

        return f"passprice calibrate --stack {shell_word(self.stack)}"

    def warning(self, rests_on: Iterable[str] | None = None) -> str | None:
        """One line for a price under the stack whose fit no longer follows from today's registry (``None`` when it
        does): the stack, how many of its fitted facts and which kinds of finding, the first finding's message (less the
        facts it names first) cut at 240 characters, and the command that re-fits it. ``rests_on``: the price's lock
        paths (:meth:`summary`)."""
        line = self.summary(rests_on)
        return None if line is None else (f"{line}: this expected price rests on its facts as written; re-fit it "
                                          f"with `{self.command()}`")

    def summary(self, rests_on: Iterable[str] | None = None) -> str | None:
        """``stack S's fit does not follow from today's registry (N fitted facts KINDS: PATHS; FIRST)``, what
        :meth:`warning` opens with and ``lock``'s ``StaleFacts`` refusal says (:class:`passprice.locking.
        LockOnStaleFacts`); ``None`` when the fit holds. With ``rests_on`` (a price's lock paths, ``stack.share.read``)
        PATHS are the fitted facts the price rests on, ``N fitted facts KINDS, M the price rests on: PATHS`` (an audit
        named ``share.float``, which its price does not read), and FIRST one of theirs. Raises nothing."""
        if not self.findings:
            return None
        facts = self.facts()
        kinds = " and ".join(k for k in ("stale", "mismatch", "broken") if any(f.kind == k for f in self.findings))
        count = f"{len(facts)} fitted fact{'s' if len(facts) != 1 else ''} {kinds}"
        rested = facts
        if rests_on is not None:
            rests = set(rests_on)
            rested = tuple(p for p in facts if f"stack.{p}" in rests)
            if rested != facts:
                count += f", {len(rested)} the price rests on"
        # a fact's own finding first: the fit's recorded errors move with its facts (a stack edited by hand read
        # "the fit's errors recorded are not the ones …" where share.read had moved, tests/test_fix179.py)
        mine = [f for f in self.findings if {f.path, *f.also} & set(rested)] or list(self.findings)
        shown = next((f for f in mine if not f.of_errors), mine[0])
        first = shown.message
        own = ", ".join((shown.path, *shown.also))
        if own == ", ".join(facts) and first.startswith(own):  # the facts are named once, before it
            first = first[len(own):]
            for lead in (" are stale: ", " is stale: ", ": "):
                if first.startswith(lead):
                    first = first[len(lead):]
                    break
        first = first if len(first) <= 240 else first[:239] + "…"
        return f"stack {self.stack}'s fit does not follow from today's registry ({count}: {', '.join(rested)}; {first})"

    def stale(self, facts: Mapping[str, Any], rests_on: Iterable[str], apart: Iterable[str] = ()) -> Stale:
        """The :class:`passprice.stale.Stale` an audit marks of the fit: each fitted fact the findings cover that the
        price rests on (``rests_on``: lock paths, ``stack.share.read``), by lock path, with its finding and its
        value as ``facts`` (by lock path) hold it; a finding of the fit's recorded errors only where none of a fact's
        value is (as ``check`` and ``diff`` name them, :func:`passprice.review.impacts.stack_refit_findings`); none of
        ``apart`` (stack paths a lock pinned other than today's file holds them: :class:`LockFit`). ``audit
        SERVING --stack S`` and ``audit LOCK`` said nothing of a fit ``price --stack`` warned of
        (tests/test_fix179.py). Raises nothing."""
        from passprice.stale import Stale

        values = tuple(f for f in self.findings if not f.of_errors) or self.findings
        rests = set(rests_on)
        skip = set(apart)
        out = []
        for finding in values:
            for path in (finding.path, *finding.also):
                at = f"stack.{path}"
                fact = facts.get(at)
                if at in rests and path not in skip and fact is not None:
                    out.append((at, finding, fact.describe()))
        return Stale(tuple(out))

    def to_json(self) -> dict[str, Any] | None:
        """``{"stack", "facts", "kinds", "command", "findings"}`` for ``--json`` (``findings``: each finding's
        :meth:`~passprice.derivations.Finding.to_json`); ``None`` when the fit holds."""
        if not self.findings:
            return None
        return {"stack": self.stack, "facts": list(self.facts()),
                "kinds": sorted({f.kind for f in self.findings}), "command": self.command(),
                "findings": [f.to_json() for f in self.findings]}


def fit_check(root: Root, name: str) -> FitCheck:
    """Whether registered stack ``name``'s fitted facts still follow from today's registry: its fit re-run from the
    runs its derivations name (:func:`passprice.calibrate.verify_stack`, what ``passprice check`` and ``diff`` run).
    Re-fitting costs up to about 0.35 s (llama.cpp's 111 runs), so the result is kept in the cache of built objects
    keyed by the bytes of the stack file, every measurement file (a run gone, moved to another stack or edited) and
    each card, checkpoint entry and routing record its named runs price, as :func:`ratio_span` is: a second price
    under an unchanged registry re-fits nothing. A stack that does not load, a name leading out of ``facts/stacks``
    or measurement files that do not read give no finding (``check`` reports those files). Raises nothing."""
    from passprice import cache
    from passprice.calibrate import verify_stack
    from passprice.errors import InputError
    from passprice.files import is_there
    from passprice.registry import stays_in
    from passprice.schema import read_bytes
    from passprice.stacks import load_stack

    if not stays_in(root.stacks, name):
        return FitCheck(name)
    try:
        stack = load_stack(root, str(root.stacks / f"{name}.toml"))
        runs = fitted_runs(root, stack)
        files = [root.stacks / f"{name}.toml"]
        files += [root.measurements / f"{s}.toml" for s in root.names(root.measurements)]
        files += [root.cards / f"{c}.toml" for c in sorted({r.card for r in runs})]
        files += [root.checkpoints / f"{c}.toml" for c in sorted({r.checkpoint for r in runs})]
        files += [root.routing / f"{n}.toml" for n in sorted({r.routing for r in runs if r.routing is not None})]
        key = b"".join(str(p).encode("utf-8", "surrogateescape") + b"\0" + (read_bytes(p) if is_there(p) else b"")
                       + b"\0" for p in files)

        def build() -> FitCheck:
            return FitCheck(name, tuple(verify_stack(root, stack)))

        return cache.built("stack-fit", None, key, build, FitCheck)
    except InputError:
        return FitCheck(name)


@attrs.frozen
class LockFit:
    """A stale fit (:class:`FitCheck`, ``checked``) found for a price made for a lock made under the same stack
    (``price``/``best --lock L``): the check re-fits today's ``facts/stacks/S.toml``, which that price is priced
    under, not the stack facts lock ``lock`` pinned (slip 40: the warning named the stack alone, read as the lock's).
    ``apart``: the fitted facts the findings cover (:meth:`FitCheck.facts`) whose value today's file holds other than
    the lock pinned it (or that the lock does not pin), in the findings' order; empty when the lock pinned each as
    today's file holds it, so the finding is the pinned fit's too (:func:`lock_fit`)."""

    checked: FitCheck
    lock: str
    apart: tuple[str, ...] = ()
    #: How the runs the first of ``apart`` fitted from today differ from those the lock pinned it fitted from
    #: (:func:`passprice.fits.runs_change`), where that is how it is apart; ``None`` otherwise.
    runs: str | None = None

    def file(self) -> str:
        """The stack file the check re-fitted, relative to the root: ``facts/stacks/S.toml``."""
        return f"facts/stacks/{self.checked.stack}.toml"

    def which(self) -> str:
        """What the check compared, for the warning: ``the facts of facts/stacks/S.toml today, which lock L pinned as
        they are`` or ``… today, not as lock L pinned N of them (PATHS)``."""
        if not self.apart:
            return f"the facts of {self.file()} today, which lock {self.lock} pinned as they are"
        runs = f"; {self.runs}" if self.runs else ""
        return (f"the facts of {self.file()} today, not as lock {self.lock} pinned {len(self.apart)} of them "
                f"({', '.join(self.apart)}{runs})")

    def warning(self, rests_on: Iterable[str] | None = None) -> str | None:
        """:meth:`FitCheck.warning` (of the facts ``rests_on`` names, where given), naming the stack as ``stack S's
        fit (WHICH)`` (:meth:`which`); ``None`` when the fit holds."""
        line = self.checked.warning(rests_on)
        if line is None:
            return None
        lead = f"stack {self.checked.stack}'s fit "
        return f"{lead}({self.which()}) {line[len(lead):]}"

    def to_json(self) -> dict[str, Any] | None:
        """:meth:`FitCheck.to_json` with ``"file"`` (:meth:`file`), ``"lock"`` and ``"pinned_apart"`` (``apart``);
        ``None`` when the fit holds."""
        out = self.checked.to_json()
        if out is None:
            return None
        return {**out, "file": self.file(), "lock": self.lock, "pinned_apart": list(self.apart)}


def lock_fit(root: Root, checked: FitCheck, lock: Any) -> LockFit:
    """``checked`` (today's stack file's fit check) set against what ``lock`` (a :class:`passprice.locks.Lock` made
    under the stack ``checked.stack``) pinned: each fitted fact of the findings is compared by value, today's file's
    ``stack.PATH`` fact (:meth:`passprice.stacks.Stack.lock_facts`) against the lock's pinned one. A stack file that
    does not load leaves every fact apart. Raises nothing."""
    from passprice.errors import InputError
    from passprice.stacks import load_stack

    try:
        today = load_stack(root, str(root.stacks / f"{checked.stack}.toml")).lock_facts()
    except InputError:
        today = {}
    from passprice.fits import pinned_apart

    paths = [f"stack.{path}" for path in checked.facts()]
    apart, runs = pinned_apart(lock.facts, today, paths)
    return LockFit(checked, lock.name, tuple(p.removeprefix("stack.") for p in apart), runs)

