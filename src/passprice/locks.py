"""A published price is pinned to everything it is a function of, as a lockfile pins a build: the facts it rests on,
the checkpoint's content, the serving, the policy, and the pricing model's code, each by digest; so it can be
reproduced bit for bit whatever changes later, and no one publishes it on weaker facts than agreed.

A lock file (``locks/NAME.lock.toml``, ``schema/lock.schema.json``) holds ``[lock]`` (its name, kind, format, the
registered serving it locks, the pricing model's digest), ``[policy]`` (a floor and per-path floors), ``[serving]``
(every parameter explicit), ``[checkpoint]`` (entry name or path, header sha256, content digest), ``[card]``,
``[facts]`` (every card fact and drafting figure, each with a digest) and ``[price]`` (the ``--json`` object). It is
structured and unstructured with a cattrs converter, written deterministically (sorted keys, shortest round-trip
floats, ``\\n`` newlines, no timestamp) and atomically, and read back only after its schema and every digest check
(an unchanged lock file's checks are kept in the cache of validated files, :mod:`passprice.cache`, with its
document).

Lock format 1 (the first locks: a hand-typed ``pricing_model``, ``tool_version``, no checkpoint content, no serving
name, a fixed ``rests_on`` list) is still read; :func:`older_format` says what to do with one.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.cards import Card, card_from_facts, is_card_path
from passprice.digests import blake2b_digest, sha256
from passprice.errors import InputError, Refusals, SchemaError
from passprice.facts import Fact, Provenance, weakest
from passprice.files import is_folder, is_there
from passprice.gguf_records import GGUFHeader
from passprice.pins import LOCK_FORMAT
from passprice.registry import Root
from passprice.serving import COST_FIELDS, Serving, ServingCost, best_serving, price_serving
from passprice.servings import Resolved, ServingSpec, spec_from_document, spec_to_document, to_serving
from passprice.tables import byte_figure

if TYPE_CHECKING:
    import cattrs

    from passprice.routing import Routing
    from passprice.stacks import Stack

@functools.cache
def _draft_path() -> re.Pattern[str]:
    """A drafting method's acceptance fact path (compiled on first use)."""
    return re.compile(r"draft\.acceptance\.[1-9][0-9]*")

#: What a lock records: ``price`` the serving's batch, ``best`` the batch with the most tokens/s.
KINDS = ("price", "best")

#: The figures of a price (every ``--json`` field but ``provenance``, ``rests_on`` and ``weakest``): what a lock of an
#: older format is reproduced on, and what "a locked price moved" means in a review.
FIGURES = (*(f for f in COST_FIELDS if f != "provenance"), "tokens_per_s")


def holds_host(*prices: Mapping[str, Any] | None) -> bool:
    """Whether any of ``prices`` (``--json`` price objects, or their ``expected`` parts) holds sequences in host
    memory (``host_sequences``): only then does a price rest on the card's host capacity, so only then is a moved
    ``host_capacity_bytes`` a moved price (the seed's record shows the card's host capacity either way)."""
    return any(isinstance(p, Mapping) and bool(p.get("host_sequences")) for p in prices)


def priced_figures(recorded: Mapping[str, Any], now: Mapping[str, Any], host: bool) -> list[str]:
    """The :data:`~passprice.locks.FIGURES` either of ``recorded`` and ``now`` holds that a lock guarantees: all,
    but ``host_capacity_bytes`` where no side holds sequences in host memory (``host``, :func:`holds_host`; session
    29: `price --lock` said "NOT the locked price (tokens/s did not move, first moved: host_capacity_bytes)" when
    the H200's assumed 512 GiB host placeholder was edited, where the review, rightly, said no lock was affected)."""
    return [f for f in FIGURES if (f in recorded or f in now) and (host or f != "host_capacity_bytes")]


def is_fact_path(path: str) -> bool:
    """Whether ``path`` names a fact a price can rest on: a card path (``streams.rewrite``), a host-link path
    (``host.read``), a float-matrix rate (``tensor.f16``), a drafting figure (``draft.acceptance.1``), a routing
    figure (``routing.hot_share``) or a serving stack's fact (``stack.share.read``, issue 14), the names a lock's
    policy and pins use."""
    from passprice.routing import ROUTING_PATHS
    from passprice.stacks import is_stack_path

    return (
        is_card_path(path)
        or _draft_path().fullmatch(path) is not None
        or path in ROUTING_PATHS
        or is_stack_path(path)
    )


def evaluate(kind: str, header: GGUFHeader, card: Card, serving: Serving) -> ServingCost:
    """The price a lock of ``kind`` records: :func:`~passprice.serving.price_serving` for ``price``,
    :func:`~passprice.serving.best_serving` for ``best``. Raises what they raise."""
    if kind == "best":
        return best_serving(header, card, serving)
    return price_serving(header, card, serving)


def priced(
    kind: str, header: GGUFHeader, card: Card, serving: Serving, stack: Stack | None = None
) -> tuple[dict[str, Any], tuple[tuple[str, Fact], ...]]:
    """The price a lock of ``kind`` records (its ``--json`` object) and the facts it rests on: the limit's, or, with
    a serving ``stack`` (issue 14), the limit's object with the stack's expected price in it (``expected``,
    ``ratio``, ``stack``, ``fixed_s``), resting on the expected price's facts (card, draft and stack). Raises what
    :func:`evaluate` and :func:`~passprice.stacks.price_expected` raise."""
    from passprice.report import cost_json

    if stack is None:
        cost = evaluate(kind, header, card, serving)
        return cost_json(cost), cost.rests_on
    from passprice.report import expected_json
    from passprice.stacks import price_expected

    expected = price_expected(header, card, serving, stack, kind)
    return expected_json(expected), expected.expected.rests_on


# --- policy ----------------------------------------------------------------------------------------------------------


@attrs.frozen
class Policy:
    """The provenance floors a lock allows: ``floor`` for every fact, ``paths`` per fact path (stricter or looser
    than the floor)."""

    floor: Provenance = attrs.field(validator=attrs.validators.instance_of(Provenance))
    paths: Mapping[str, Provenance] = attrs.field(
        factory=dict,
        validator=attrs.validators.deep_mapping(
            attrs.validators.instance_of(str), attrs.validators.instance_of(Provenance)
        ),
    )

    def allowed(self, path: str) -> Provenance:
        """The weakest provenance ``path`` may have."""
        return self.paths.get(path, self.floor)


def default_policy(rests_on: Iterable[tuple[str, Provenance]]) -> Policy:
    """The policy of a lock made without ``--floor``: every fact the price rests on floored at its provenance at lock
    time (any weakening breaks the lock), and the floor, for a path the price comes to rest on later, at the weakest
    of them."""
    pairs = list(rests_on)
    return Policy(weakest(p for _, p in pairs), {path: p for path, p in pairs})


def policy_from_flags(
    rests_on: Iterable[tuple[str, Provenance]], floor: Provenance | None, requires: Mapping[str, Provenance]
) -> Policy:
    """The policy ``passprice lock`` writes: :func:`default_policy` without ``floor``; with one, that floor for every
    path; then each ``requires`` path floored as given (tighter or looser)."""
    base = default_policy(rests_on) if floor is None else Policy(floor)
    return Policy(base.floor, {**base.paths, **requires})


class UnreadFloor(InputError):
    """A floor on a path the price does not rest on (it would guard nothing)."""

    def __init__(self, lock: str, paths: tuple[str, ...], rests_on: tuple[str, ...]) -> None:
        listed = ", ".join(paths)
        super().__init__(
            f"lock {lock}: the price does not rest on {listed}, so a floor there would guard nothing (it rests on "
            f"{', '.join(rests_on)}); drop the floor{'s' if len(paths) > 1 else ''}"
        )


def unread_floors(policy: Policy, rests_on: Iterable[str]) -> tuple[str, ...]:
    """The per-path floors of ``policy`` on paths not in ``rests_on``."""
    read = set(rests_on)
    return tuple(p for p in policy.paths if p not in read)


@attrs.frozen
class FloorChange:
    """A floor that differs between two policies: ``path`` (``*`` for the lock's floor), the floor ``before`` and
    ``after`` as written (``None`` where the policy has none for the path), and what the path is allowed on each side
    (``was``, ``now``: its own floor or the lock's)."""

    path: str
    before: Provenance | None
    after: Provenance | None
    was: Provenance
    now: Provenance

    @property
    def loosens(self) -> bool:
        """True when the path is now allowed weaker facts than before."""
        return self.now.weaker_than(self.was)

    @property
    def tightens(self) -> bool:
        """True when the path now requires stronger facts than before."""
        return self.was.weaker_than(self.now)

    @property
    def change(self) -> str:
        """``removed``, ``added``, ``loosened``, ``tightened`` or ``restated`` (same effect)."""
        if self.path != "*" and self.after is None and self.loosens:
            return "removed"
        if self.loosens:
            return "loosened"
        if self.tightens:
            return "tightened"
        return "added" if self.before is None else "removed" if self.after is None else "restated"

    def describe(self) -> str:
        """``floor on memory.bandwidth removed: published → estimated (the lock's floor)``."""
        what = "the lock's floor" if self.path == "*" else f"floor on {self.path}"
        suffix = " (the lock's floor)" if self.path != "*" and self.after is None else ""
        return f"{what} {self.change}: {self.was.value} → {self.now.value}{suffix}"


def compare_policies(old: Policy, new: Policy) -> tuple[FloorChange, ...]:
    """Every floor that differs between ``old`` and ``new``: the lock's floor, then each path whose allowed
    provenance differs, sorted. A path's own floor dropped for a lock's floor that allows the same (``assumed``
    written per path, then ``--floor assumed``) is no change, and was shown as ``removed: assumed → assumed``."""
    out = []
    if old.floor is not new.floor:
        out.append(FloorChange("*", old.floor, new.floor, old.floor, new.floor))
    for path in sorted({*old.paths, *new.paths}):
        before, after = old.paths.get(path), new.paths.get(path)
        if before is not after and old.allowed(path) is not new.allowed(path):
            out.append(FloorChange(path, before, after, old.allowed(path), new.allowed(path)))
    return tuple(out)


@attrs.frozen
class Offence:
    """A fact a price rests on that is weaker than its floor."""

    path: str
    provenance: Provenance
    floor: Provenance


@attrs.frozen
class Verdict:
    """Whether a price's facts hold a lock's floors: the ``offences`` (none when it holds), the price's
    ``provenance`` (its weakest) and the ``weakest`` paths carrying it."""

    lock: str
    offences: tuple[Offence, ...]
    provenance: Provenance
    weakest: tuple[str, ...]

    @property
    def holds(self) -> bool:
        """True when no fact is below its floor."""
        return not self.offences

    def message(self) -> str:
        """One line: which paths are below which floors, and the price's weakest provenance."""
        if self.holds:
            return f"lock {self.lock} holds; the price's weakest provenance is {self.provenance.value}"
        parts = "; ".join(f"{o.path} is {o.provenance.value}, below the floor {o.floor.value}" for o in self.offences)
        return (
            f"lock {self.lock} refuses this price: {parts} (the price's weakest provenance is "
            f"{self.provenance.value}, carried by {', '.join(self.weakest)})"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "LockFloor", ...}`` for a refused price, ``{"holds": true, ...}`` otherwise."""
        out: dict[str, Any] = {"refusal": "LockFloor"} if not self.holds else {"holds": True}
        out.update(
            {
                "lock": self.lock,
                "offending": [
                    {"path": o.path, "provenance": o.provenance.value, "floor": o.floor.value} for o in self.offences
                ],
                "provenance": self.provenance.value,
                "weakest": list(self.weakest),
                "message": self.message(),
            }
        )
        return out


def judge(name: str, policy: Policy, rests_on: Iterable[tuple[str, Fact | Provenance]]) -> Verdict:
    """Judge the facts a price rests on (path, fact or its provenance) against ``policy``: every fact weaker than
    the floor its path allows is an offence."""
    pairs = [(p, f.provenance if isinstance(f, Fact) else f) for p, f in rests_on]
    offences = tuple(Offence(p, v, policy.allowed(p)) for p, v in pairs if v.weaker_than(policy.allowed(p)))
    provenance = weakest(v for _, v in pairs)
    return Verdict(name, offences, provenance, tuple(p for p, v in pairs if v is provenance))


# --- the lock --------------------------------------------------------------------------------------------------------


@attrs.frozen
class LockInfo:
    """The ``[lock]`` table: ``name``, ``kind`` (``price`` or ``best``), ``format`` (1 or :data:`LOCK_FORMAT`),
    ``serving`` (the registered serving it locks; ``None`` for a lock of an unregistered or overridden serving),
    ``pricing_model`` (its code's digest; ``"1"`` in format 1), ``tool_version`` (format 1 only) and ``digest`` (of
    everything but itself)."""

    name: str
    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    pricing_model: str
    format: int = 1
    serving: str | None = None
    tool_version: str | None = None
    digest: str = ""


@attrs.frozen
class CheckpointPin:
    """The ``[checkpoint]`` table: the ``name`` the serving gave (an entry name, or a path relative to the root),
    the header's ``sha256`` as the entry states it, (format 2) the ``content`` digest of what the pricer reads
    (:func:`passprice.pins.checkpoint_digest`), and (session 27, issue 13) the entry's ``origin``: which model, which
    file, its licence, the text ``audit`` cites the checkpoint by (:mod:`passprice.checkpointcite`). The origin moves
    no number, yet a rewritten one passed ``check``, ``reproduce`` and ``price --lock`` silently (slip round 45): a
    lock pins it as a card's title, said as relabelled when it changes (:func:`passprice.reproduce.relabelled`:
    ``checkpoint.origin: …[x → y]… (the lock pinned the old)``). ``None``: a lock written before, or of a checkpoint
    given as a GGUF file (no entry, no origin): not pinned, said nowhere, and its digest is as it was. And (slip
    round 46) the entry's ``source``, the header file it was imported from, which ``audit`` cites the checkpoint by
    too (``header file: …``): a rewritten one passed ``check``, ``reproduce`` and ``price --lock`` silently, so a lock
    pins it as the origin (``checkpoint.source: 'a' → 'b' (the lock pinned the old)``); ``None`` as the origin's."""

    name: str
    sha256: str
    content: str | None = None
    origin: str | None = None
    source: str | None = None


@attrs.frozen
class CardPin:
    """The ``[card]`` table: the card's registry ``name``, ``title``, and whether it is ``hypothetical``."""

    name: str
    title: str
    hypothetical: bool = False


@attrs.frozen
class RecordPin:
    """The ``[routing]`` or ``[draft]`` table (slip round 44): the routing record's or drafting method's registry
    ``name``, its ``title`` (the record's own ``name`` key) and ``note`` (``None`` when it has none). Neither moves a
    number, yet a price prints a routing record's note and ``audit`` both: a lock pins them as it pins a card's title,
    so a retitle or a rewritten note is said as relabelled (:func:`passprice.reproduce.relabelled`). A lock written
    before this table pins neither (absent: not pinned, said nowhere)."""

    name: str
    title: str
    note: str | None = None


@attrs.frozen
class StackPin:
    """The ``[stack]`` table of a lock made under a serving stack (issue 14): its ``name``, where its matrix kernels
    run (``integer_matrices``, ``float_matrices``), its ``title``, and (session 27) its ``runtime`` and ``builds``
    texts; its facts are pinned under ``stack.``. The texts move no number, yet say which runtime and builds the
    overhead facts pinned beside them were measured on: a lock pins them as a routing record's title and note
    (:class:`RecordPin`), said as relabelled when they change (:func:`passprice.reproduce.relabelled`). A lock written
    before pins neither (absent: ``None``, not pinned, said nowhere), and its digest is as it was. Slip 48: the
    vendors a price under the stack reads (:func:`passprice.stackreach.stack_vendors`): ``card_vendor``, the priced
    card's ``[card] vendor`` (``None`` when it gives none), and ``fitted_vendors``, those of the cards the stack was
    fitted on (``None``: not pinned, a lock written before); the warning that the stack's kernels never ran on a card
    of another vendor rests on them, and they are said as relabelled as the texts are."""

    name: str
    integer_matrices: str
    float_matrices: str
    title: str = ""
    runtime: str | None = None
    builds: str | None = None
    card_vendor: str | None = None
    fitted_vendors: tuple[str, ...] | None = None


@attrs.frozen
class Lock:
    """A lock file's content, one attribute a table: ``info`` (``[lock]``), ``policy``, ``serving`` (the spec
    priced, every default explicit), ``checkpoint_pin`` (``[checkpoint]``), ``card_pin`` (``[card]``), ``facts``
    (the pinned facts by path: every card fact, ``draft.acceptance.i`` and ``routing.*``), ``price`` (the recorded
    ``--json`` object), ``stack`` (the serving stack of an expected price, issue 14; its facts are pinned under
    ``stack.``). ``source`` is the file it was read from. ``card``, ``checkpoint`` and the like read the pins
    as the first format's lock did.
    """

    info: LockInfo
    policy: Policy
    serving: ServingSpec
    checkpoint_pin: CheckpointPin
    card_pin: CardPin
    facts: Mapping[str, Fact]
    price: Mapping[str, Any]
    source: str = attrs.field(default="", eq=False)
    stack: StackPin | None = None
    #: The routing record's and drafting method's title and note as priced (:class:`RecordPin`; ``None``: the price
    #: names none, or the lock was written before slip round 44 and pins neither).
    routing: RecordPin | None = None
    draft: RecordPin | None = None

    @property
    def name(self) -> str:
        """The lock's name (its file's stem)."""
        return self.info.name

    @property
    def kind(self) -> str:
        """``price`` or ``best``."""
        return self.info.kind

    @property
    def spec(self) -> ServingSpec:
        """The serving the lock priced."""
        return self.serving

    @property
    def card(self) -> str:
        """The card's registry name."""
        return self.card_pin.name

    @property
    def card_title(self) -> str:
        """The card's title."""
        return self.card_pin.title

    @property
    def card_hypothetical(self) -> bool:
        """Whether the card is hypothetical."""
        return self.card_pin.hypothetical

    @property
    def checkpoint(self) -> str:
        """The checkpoint as the serving named it (an entry name, or a path relative to the root)."""
        return self.checkpoint_pin.name

    @property
    def checkpoint_sha256(self) -> str:
        """The header sha256 the checkpoint entry stated."""
        return self.checkpoint_pin.sha256

    @property
    def checkpoint_origin(self) -> str | None:
        """The checkpoint entry's ``origin`` the lock pins (``None``: not pinned, a lock written before session 27 or
        of a checkpoint given as a GGUF file)."""
        return self.checkpoint_pin.origin

    @property
    def checkpoint_source(self) -> str | None:
        """The checkpoint entry's ``source`` (the header file it was imported from) the lock pins (``None``: not
        pinned, a lock written before slip round 46 or of a checkpoint given as a GGUF file)."""
        return self.checkpoint_pin.source

    @property
    def rests_on(self) -> tuple[str, ...]:
        """The paths the recorded price rests on (with a stack, the expected price's too)."""
        paths = dict.fromkeys(self.price.get("rests_on", {}))
        paths.update(dict.fromkeys(self.price.get("expected", {}).get("rests_on", {})))
        return tuple(paths)

    def pinned_stack(self) -> Stack | None:
        """The serving stack as it was when the lock was written (its routes and pinned ``stack.*`` facts), or
        ``None`` for a lock without one."""
        if self.stack is None:
            return None
        from passprice.stacks import stack_from_lock_facts

        pin = self.stack
        routes = {"integer_matrices": pin.integer_matrices, "float_matrices": pin.float_matrices}
        return stack_from_lock_facts(pin.name, pin.title, routes, self.facts)

    def pinned_card(self) -> Card:
        """The card as it was when the lock was written, from the pinned facts."""
        card_facts = {p: f for p, f in self.facts.items() if is_card_path(p)}
        return card_from_facts(self.card, self.card_title, card_facts, self.card_hypothetical)

    def pinned_routing(self) -> Routing | None:
        """The routing the lock priced with, from the pinned ``routing.*`` facts (``None`` when it names none)."""
        from passprice.routing import ROUTING_PATHS, Routing

        if self.spec.routing is None or not all(p in self.facts for p in ROUTING_PATHS):
            return None
        hot, share = (self.facts[p] for p in ROUTING_PATHS)
        return Routing(self.spec.routing, self.spec.routing, hot, share)

    def pinned_acceptance(self) -> tuple[Fact, ...]:
        """The pinned drafting figures, in draft order."""
        out = []
        i = 1
        while f"draft.acceptance.{i}" in self.facts:
            out.append(self.facts[f"draft.acceptance.{i}"])
            i += 1
        return tuple(out)

    def compared(self) -> tuple[str, ...]:
        """The fields of the recorded price a reproduction compares, in the ``--json`` order: every one in the current
        format, the :data:`FIGURES` in an older one (its ``rests_on``, ``weakest`` and ``provenance`` came from a fixed
        list)."""
        order = (*COST_FIELDS, "tokens_per_s", "rests_on", "weakest")
        if self.info.format >= LOCK_FORMAT:
            return tuple(dict.fromkeys([*(f for f in order if f in self.price), *self.price]))
        return tuple(f for f in FIGURES if f in self.price)


def expected_line(price: Mapping[str, Any]) -> str | None:
    """What a lock made under a serving stack records beside the card's limit (``price["expected"]``, the
    ``[price.expected]`` table): ``"expected under stack S: 237.4 tokens/s at batch 1, binds on memory, weakest
    estimated (0.2384 × the limit's 996.1)"``; ``None`` for a lock made without a stack. ``lock`` and ``reproduce``
    print it, so the locked expected price is shown where the limit is."""
    expected = price.get("expected")
    if not isinstance(expected, Mapping) or "tokens_per_s" not in expected:
        return None
    ratio = price.get("ratio")
    of_limit = (f" ({ratio:.4g} × the limit's {price['tokens_per_s']:,.1f})"
                if isinstance(ratio, int | float) and "tokens_per_s" in price else "")
    return (f"expected under stack {price.get('stack', '?')}: {expected['tokens_per_s']:,.1f} tokens/s at batch "
            f"{expected.get('batch', '?')}, binds on {expected.get('binds', '?')}, weakest "
            f"{expected.get('provenance', '?')}{of_limit}")


def _figure(price: Mapping[str, Any] | None) -> float | None:
    """``price["tokens_per_s"]`` as a float, ``None`` where there is none."""
    value = price.get("tokens_per_s") if isinstance(price, Mapping) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _change(a: float | None, b: float | None) -> float | None:
    """``b / a − 1``, ``None`` where a side is missing, ``a`` is 0, or the ratio is past a float (an old price of
    5e-324 tokens/s, which the lock schema admits: attack64's ``lock --update --json`` wrote the lock, then exited 2
    on an infinite ``relative_change``). Raises nothing."""
    if a is None or b is None or a == 0:
        return None
    change = b / a - 1.0
    return change if math.isfinite(change) else None


def _rate(value: float, digits: int = 1) -> str:
    """A tokens/s figure: grouped with ``digits`` decimals, or in ``g`` notation when that would print 0 for a
    figure that is not (5e-324 read "0.0") or more than 15 digits (1.7e308 printed 309). Raises nothing."""
    if value != 0 and not (10.0 ** -digits <= abs(value) < 1e15):
        return f"{value:.6g}"
    return f"{value:,.{digits}f}"


def replaced(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, float | None]:
    """What ``lock --update`` replaced, for ``--json``: the old lock's ``tokens_per_s`` and (under a stack) its
    expected ``expected_tokens_per_s``, and each one's ``relative_change`` (new / old − 1; ``None`` where a side has no
    such figure or the old one is 0). ``old`` and ``new`` are the two locks' ``price`` tables. Raises nothing."""
    out: dict[str, float | None] = {}
    for key, a, b in (("", _figure(old), _figure(new)),
                      ("expected_", _figure(old.get("expected")), _figure(new.get("expected")))):
        out[f"{key}tokens_per_s"] = a
        out[f"{key}relative_change"] = _change(a, b)
    return out


def replaced_lines(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What ``lock --update`` prints of the price it replaces (walkthrough 47: it printed the new price alone): the
    limit's ``"214.9 -> 215.3 tokens/s (+0.1861 %)"``, or ``"214.9 tokens/s, unchanged"`` when equal, then under a
    stack the expected price's the same way (``"expected 122.7 -> 123.0 tokens/s (+0.2191 %)"``). Two figures that
    differ are shown with the decimals it takes to tell them apart (up to 17). ``old`` and ``new`` are the two
    locks' ``price`` tables; a figure one side lacks is left out. Raises nothing."""
    lines = []
    for label, a, b in (("", _figure(old), _figure(new)),
                        ("expected ", _figure(old.get("expected")), _figure(new.get("expected")))):
        if a is None or b is None:
            continue
        if a == b:
            lines.append(f"{label}{_rate(a)} tokens/s, unchanged")
            continue
        shown = (_rate(a), _rate(b))
        for digits in range(2, 18):
            if shown[0] != shown[1]:
                break
            shown = (_rate(a, digits), _rate(b, digits))
        change = _change(a, b)
        move = f"{100.0 * change:+.4g} %" if change is not None else "from 0" if a == 0 else "a ratio past a float"
        lines.append(f"{label}{shown[0]} -> {shown[1]} tokens/s ({move})")
    return lines


def older_format(
    lock: Lock, where: str | None = None, root: Root | None = None, path: Path | None = None
) -> str | None:
    """What to say of a lock of an older format (``None`` for the current one): which format, what it lacks, and
    the commands that re-lock it (``where``: the lock's path as the user names it; default its source). With
    ``root`` and ``path`` (the lock's file), a first-format lock whose name another current-format lock of
    ``root/locks`` holds (:func:`update_name_clash`) is told the command that works: ``lock --update`` keeps the name
    and is refused (:func:`passprice.locking.require_unique_update_name`), so the hint names the re-lock under its
    file's name (``lock SERVING --force -o FILE``, its serving named where one is registered under the lock's name),
    or removing it. Left59: ``check`` and ``reproduce`` of ``locks/old.lock.toml`` (format 1, named
    ``r1-qwen7b-h200`` beside ``locks/r1-qwen7b-h200.lock.toml``) said ``passprice lock --update -o
    locks/old.lock.toml`` keeps its policy, which exits 2 since left58. Raises nothing."""
    if lock.info.format >= LOCK_FORMAT:
        return None
    from passprice.files import shell_word

    where = shell_word(where or lock.source or f"locks/{lock.name}.lock.toml")  # a command to paste (round 44)
    said = (
        f"lock format {lock.info.format}, older than {LOCK_FORMAT}: it pins no pricing-model digest and no checkpoint "
        f"content, and its rests_on is the first format's fixed list, so it is reproduced on its figures only; "
    )
    way = (first_format_clash(root, path, lock.name, where) if root is not None and path is not None
           and lock.info.format < 2 else None)
    if way is None:
        return said + (
            f"re-lock it: `passprice lock --update -o {where}` keeps its policy, `passprice lock SERVING --force -o "
            f"{where}` gives it the default one"
        )
    return said + way


def first_format_clash(root: Root, path: Path, name: str, where: str) -> str | None:
    """The one way out said for a first-format lock named ``name``, at ``path`` (named ``where`` in the command to
    paste, as a shell word already), whose name another current-format lock of ``root/locks`` carries
    (:func:`name_holders`): ``lock --update`` keeps the name and is refused
    (:func:`passprice.locking.require_unique_name`, left58), so the re-lock under its file's name, ``passprice lock
    SERVING --force -o FILE`` (its serving named where ``root`` registers one of the lock's name, as
    :func:`first_format_serving` finds it; it needs no restore of a file edited by hand), or removing it. ``None``
    when no other lock carries the name, or ``path`` is not in ``root/locks``. Said by :func:`older_format`
    (``check``, ``reproduce``), by a hand-edited lock's refusal (:func:`_edited_way`) and by the review of such a
    lock (:meth:`passprice.review.impacts.LockImpact.review`, left98: it said ``restore it from BASE, then re-lock it
    with passprice lock --update -o PATH``, exit 2 when run). Raises nothing."""
    from passprice.files import shell_word

    holders = name_holders(root, path, name)
    if not holders:
        return None
    served = None
    with contextlib.suppress(OSError, ValueError):
        served = name if is_there(root.servings / f"{name}.toml") else None
    return (f"re-lock it under its file's name: `passprice lock {shell_word(served or 'SERVING')} --force -o "
            f"{where}` (the default policy; `lock --update` keeps its name, {name!r}, which {holders[0][0]} holds, "
            "and is refused), or remove it")


def first_format_serving(root: Root, lock: Lock) -> str | None:
    """The registered serving a first-format ``lock`` (which named none) locks: the serving of its own name when
    ``root`` registers one (``servings/NAME.toml``), else ``None``; a later format's its recorded serving. As
    :func:`passprice.locking.locked_serving` reads it for ``--update``. Raises nothing."""
    if lock.info.serving is not None or lock.info.format >= 2:
        return lock.info.serving
    with contextlib.suppress(OSError, ValueError):
        if is_there(root.servings / f"{lock.name}.toml"):
            return lock.name
    return None


def update_name_clash(root: Root, output: Path, name: str, old: Lock | None) -> str | None:
    """The other lock file of ``root/locks`` (``locks/FILE``) that a ``--update`` of the first-format lock ``old``
    at ``output`` in that folder, written in today's format under ``name``, would share its name with: the first
    current-format lock whose ``[lock] name`` is ``name`` (:func:`name_holders`); ``None`` when there is none,
    ``old`` is not of the first format, or ``output`` lies elsewhere. A first-format lock's name is the serving it
    locks, so ``check`` lets it share one (an older lock kept beside its re-lock), and a current-format lock's name
    must be unique (:func:`passprice.check.shared_name_lines`) (left58, left59). Raises nothing."""
    if old is None or old.info.format >= 2:
        return None
    holders = name_holders(root, output, name)
    return holders[0][0] if holders else None


def name_holders(root: Root, output: Path, name: str,
                 unparsed: list[tuple[str, str, str]] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Each other current-format lock file of ``root/locks`` whose ``[lock] name`` is ``name``, by file name: its
    ``locks/FILE`` and its ``[lock]`` table. Empty when ``output`` lies outside ``root/locks`` or the folder does not
    read. One look over the folder serves both of a ``lock`` run's tests of the name
    (:func:`passprice.locking.require_unique_name`: a first-format lock's ``--update``, and any lock's write): each
    file is read as bytes (:func:`passprice.schema.read_unkept`), and only one holding ``name`` as written, or a
    backslash (a TOML escape could spell it), is parsed, its ``[lock]`` table alone where it is laid out as
    passprice writes it (:func:`lock_table_of`; files of the same bytes once). left92: the first-format test parsed
    every file of the folder whole, then the write's test parsed each holding the name whole again (see
    docs/PERFORMANCE.md). A file that does not read or parse, is ``output``
    itself, or is of the first format (its name is the serving it locks, which ``check`` lets two share) is passed
    over; one whose ``[lock]`` table does not parse is read line by line (:func:`name_as_read`) and added to
    ``unparsed``, when given, as ``(locks/FILE, its problem, what was found)`` where its ``[lock]`` table's name
    reads ``name`` (what was found begins ``its [lock] table's name reads``), or where that cannot be told while its
    bytes hold ``name`` quoted (``"NAME"`` or ``'NAME'``), its problem the first line :func:`read_lock` gives
    (left98: ``lock --name X`` beside such a file wrote its lock, exit 0; left103: one whose name reads otherwise,
    quoting ``name`` in a note, was refused). Raises nothing."""
    from passprice.registry import LOCK_SUFFIX

    try:
        if output.resolve().parent != root.locks.resolve():
            return []
        names = root.names(root.locks, LOCK_SUFFIX)
    except (OSError, RuntimeError, InputError):
        return []
    spelled = name.encode("utf-8", "surrogateescape")
    quoted = (b'"' + spelled + b'"', b"'" + spelled + b"'")
    tables: dict[bytes, Any] = {}
    found = []
    for stem in names:
        other = root.locks / f"{stem}{LOCK_SUFFIX}"
        try:
            data = schema.read_unkept(other, "lock")
            if spelled not in data and b"\\" not in data:
                continue
            if is_there(output) and other.samefile(output):
                continue
            if data not in tables:  # copies of one lock (1,000 of them) parsed once
                tables[data] = lock_table_of(data)
            table = tables[data]
        except (OSError, InputError):
            continue
        rel = f"locks/{stem}{LOCK_SUFFIX}"
        if table is None and unparsed is not None:
            held = any(q in data for q in quoted)
            named, said = name_as_read(data, name)
            if named or (named is None and held):  # left103: a note quoting the name is no name
                problem = unread_problem(root, other)
                if problem is not None:
                    unparsed.append((rel, problem, said if named else f"{said}, and it holds {name!r} quoted"))
        if isinstance(table, dict) and table.get("name") == name and table.get("format", 1) != 1:
            found.append((rel, table))
    return found


@functools.cache
def _line_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A table header line of plain keys (``[lock]``, ``[facts.array]``), read without ``tomllib``, and a line's key
    up to its ``=`` (:func:`name_as_read`, :func:`_line_key`); compiled on first use, not at import."""
    return (re.compile(r"\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\][ \t]*(?:#.*)?"),
            re.compile(rf"[ \t]*((?:{schema._KEY_PART}[ \t]*\.[ \t]*)*{schema._KEY_PART})[ \t]*="))


def name_as_read(data: bytes, name: str) -> tuple[bool | None, str]:
    """Whether the ``[lock]`` table of a lock file that does not parse (its bytes ``data``) gives ``name`` as the
    lock's name, as far as it can be read line by line, and what was found, in words for an error line: ``(True,
    "its [lock] table's name reads 'X' at line N")`` (whatever its format: a table mended may gain one); ``(False,
    ...)`` where its name reads otherwise or it has none (a note or another table quoting ``name`` is no name);
    ``(None, why)`` where it cannot be told: the text does not decode, holds a multi-line string (a line may then be
    a string's), a table header does not read, or a line of the ``[lock]`` table (or before any header) that does
    not read may give the name (its key is ``name``, or unreadable while the line holds ``name`` or a backslash).
    Each line is parsed alone (:func:`passprice.schema.toml_loads`), only those at the top or in a ``lock`` table: a
    line of another table gives no ``lock.name`` whatever it holds. left103: ``lock --name X`` was refused beside
    any broken lock file holding ``"X"`` anywhere. Raises nothing."""
    try:
        # A byte-order mark is what such a file is refused for ("save it as UTF-8 without BOM"), which mends it: its
        # first line read with the mark was no header, and a [lock] table opening the file read "has no name", so
        # lock --name wrote a second lock of the name (tests/test_attack114.py).
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None, "it does not decode as UTF-8"
    if '"""' in text or "\'\'\'" in text:
        return None, "it holds a multi-line string, so its lines are not read apart"
    spelled = (name, "\\")
    path: list[str] = []
    names: list[tuple[int, object]] = []
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        bare = line.strip()
        if not bare or bare.startswith("#"):
            continue
        if bare.startswith("["):
            plain = _line_patterns()[0].fullmatch(bare)
            if plain is not None:
                path = plain.group(1).split(".")
                continue
            header = _line_document(bare)
            if header is None:
                return None, f"its line {number}, a table header, does not read"
            path = _header_path(header)
            continue
        if path and path[0] != "lock":
            continue  # another table's line gives no lock.name
        document = _line_document(line)
        if document is None:
            key = _line_key(line)
            if key is None:
                if any(s in line for s in spelled):
                    held = repr(name) if name in line else "a backslash"
                    return None, f"its line {number} does not read and holds {held}"
                continue
            full = path + key
            if full[:2] == ["lock", "name"] or full == ["lock"]:
                return None, f"its line {number}, the [lock] table's name, does not read"
            continue
        table: object = document
        for part in path:
            table = {part: table}
        if not isinstance(table, dict):
            continue
        lock = table.get("lock")
        if isinstance(lock, dict) and "name" in lock:
            names.append((number, lock["name"]))
    for number, value in names:
        if value == name:
            return True, f"its [lock] table's name reads {name!r} at line {number}"
    if names:
        return False, f"its [lock] table's name reads {repr(names[0][1])[:80]} at line {names[0][0]}"
    return False, "its [lock] table has no name"


def _line_document(line: str) -> dict[str, Any] | None:
    """One line of TOML parsed alone (:func:`passprice.schema.toml_loads`), or ``None`` where it does not parse."""
    import tomllib

    try:
        return schema.toml_loads(line)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None


def _header_path(header: dict[str, Any]) -> list[str]:
    """The key path of a table header parsed alone (``["a", "b"]`` of ``[a.b]``), an array of tables marked by a part
    ``[]`` after its key (``["a", "b", "[]"]`` of ``[[a.b]]``): a ``name`` under ``[[lock]]`` is no ``lock.name``, the
    file's ``lock`` being an array (was read as the lock's name, a clash said of a file whose lock has none)."""
    path: list[str] = []
    value: object = header
    while True:
        if isinstance(value, list) and value:
            path.append("[]")
            value = value[-1]
        if not isinstance(value, dict) or len(value) != 1:
            return path
        key = next(iter(value))
        path.append(key)
        value = value[key]


def _line_key(line: str) -> list[str] | None:
    """The key path of a ``KEY = …`` line whose value does not parse (``["name"]`` of ``name = "x``), its key read
    alone; ``None`` where no key reads before an ``=``."""
    found = _line_patterns()[1].match(line)
    if found is None:
        return None
    document = _line_document(f"{found.group(1)} = 0")
    return None if document is None else _header_path(document)


def unread_problem(root: Root, path: Path) -> str | None:
    """The first problem line :func:`read_lock` gives for the lock file at ``path`` (the root's folder left out, as
    ``check`` names it), ``None`` when it reads. Raises nothing (:func:`passprice.locking.require_unique_name` asks
    it of a file whose ``[lock]`` table read alone holds the name, before saying that file pins other facts)."""
    from passprice.errors import problem_lines

    try:
        read_lock(path, root.schema)
    except InputError as e:
        return problem_lines(e)[0].replace(f"{root.path}/", "")
    except (OSError, RecursionError, ValueError) as e:
        return f"{path.name}: does not read ({e.__class__.__name__})"
    return None


#: The tables of a lock structured and unstructured field for field (fields at their default left out).
_PLAIN_TABLES = (LockInfo, CheckpointPin, CardPin, Policy, StackPin, RecordPin)


@functools.cache
def converter() -> cattrs.Converter:
    """Lock ↔ its TOML document, with cattrs. Facts use :func:`passprice.facts.converter`'s hooks, the serving
    :func:`~passprice.servings.spec_to_document` / :func:`~passprice.servings.spec_from_document`; fields at their
    default (no serving, no content, not hypothetical, no per-path floors) are left out. Made on first use, each
    class's hooks generated when first needed (reading a lock never generates the writing ones), so a command that
    reads no lock does not import cattrs for it."""
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    from passprice.facts import converter as fact_converter

    c = fact_converter().copy(forbid_extra_keys=True)
    c.register_unstructure_hook(ServingSpec, spec_to_document)
    c.register_structure_hook(ServingSpec, lambda d, _: spec_from_document(d, "lock: serving"))
    c.register_structure_hook(Provenance, lambda v, _: Provenance(v))
    c.register_unstructure_hook_factory(
        lambda t: t in _PLAIN_TABLES, lambda t: make_dict_unstructure_fn(t, c, _cattrs_omit_if_default=True)
    )
    c.register_unstructure_hook_factory(
        lambda t: t is Lock,
        lambda t: make_dict_unstructure_fn(
            Lock, c, info=override(rename="lock"), checkpoint_pin=override(rename="checkpoint"),
            card_pin=override(rename="card"), source=override(omit=True), stack=override(omit_if_default=True),
            routing=override(omit_if_default=True), draft=override(omit_if_default=True),
        ),
    )
    c.register_structure_hook_factory(
        lambda t: t is Lock,
        lambda t: make_dict_structure_fn(
            Lock, c, _cattrs_forbid_extra_keys=True, info=override(rename="lock"),
            checkpoint_pin=override(rename="checkpoint"), card_pin=override(rename="card"),
            source=override(omit=True),
        ),
    )
    return c


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    return value


def _require_utf8(value: Any, name: str, where: str = "") -> None:
    """Refuse a lock document holding a text that is not UTF-8: a lone surrogate, which is how Python holds a byte
    of a file name that is not UTF-8 (a card file ``\\xff.toml`` names its card ``\\udcff``). A lock is UTF-8
    TOML and its digest hashes UTF-8 bytes, so such a name cannot be pinned (it was a ``UnicodeEncodeError``
    traceback). Raises :class:`InputError` naming the lock and the key."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            from passprice.errors import escaped

            raise InputError(
                f"lock {escaped(name)}: {where}: {escaped(value)} is not UTF-8 text (a name taken from a file name "
                "whose bytes are not UTF-8): a lock records names as UTF-8; rename the file"
            ) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _require_utf8(item, name, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _require_utf8(item, name, f"{where}.{i}")


def lock_document(lock: Lock) -> dict[str, Any]:
    """The lock as a TOML-ready document with sorted keys, each pinned fact with its digest, and the lock's digest
    computed over everything but ``lock.digest``."""
    body: dict[str, Any] = converter().unstructure(attrs.evolve(lock, info=attrs.evolve(lock.info, digest="")))
    for path, entry in body["facts"].items():
        entry["digest"] = lock.facts[path].digest()
    body = _sorted(body)
    _require_utf8(body, lock.name)
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    out: dict[str, Any] = _sorted(body)
    return out


_PREAMBLE = (
    "#:schema ../schema/lock.schema.json\n"
    "# A passprice lock: the facts a price rests on, pinned with digests, and the price itself.\n"
    "# Written by `passprice lock`; do not edit by hand (`passprice reproduce` and `passprice check` verify it).\n\n"
)


def lock_text(lock: Lock) -> str:
    """The lock file's text: deterministic (same lock, same bytes), ``\\n`` newlines."""
    import tomlkit

    return _PREAMBLE + tomlkit.dumps(lock_document(lock))


def write_lock(path: Path, lock: Lock, force: bool = False) -> None:
    """Write ``lock`` to ``path`` atomically; refuses to overwrite an existing file unless ``force``, to write
    through a link in a registry to a file outside it (:func:`passprice.schema.require_link_inside`: the lock would
    not read back), and to write a lock its reader refuses (:func:`_require_read_back`)."""
    from passprice.files import require_no_lookalike, write_atomically
    from passprice.schema import require_link_inside

    require_link_inside(path)
    require_no_lookalike(path)
    text = lock_text(lock)
    _require_read_back(path, text)
    write_atomically(path, text, force)


def _require_read_back(path: Path, text: str) -> None:
    """Refuse to write the lock ``text`` to ``path`` when it would not read back (:func:`read_lock`'s schema and
    digests): ``lock R1 --checkpoint FILE`` of a header file whose name holds U+202E (or a control character) wrote a
    lock, exit 0, pinning that name as its checkpoint, which the lock schema's one-line rule then refused, so
    ``check`` failed and every price of the serving stopped on the lock (attack73). Raises :class:`InputError`
    with the reader's lines, each saying nothing was written."""
    from passprice.errors import problem_lines
    from passprice.registry import schema_dir

    try:
        _lock_of_file(path, schema_dir(), text.encode("utf-8", "surrogateescape"))
    except InputError as e:  # a SchemaError is one
        raise InputError.of(
            f"{line} (the lock would not read back: nothing written)" for line in problem_lines(e)) from None


def _pinned_facts(document: Mapping[str, Any], source: str, check: bool) -> dict[str, Fact]:
    """The pinned facts of a schema-valid lock ``document``, by path; with ``check``, each fact's digest and the
    lock's own checked first. Raises :class:`InputError` naming a fact that does not read, or (``check``) the path
    of a fact whose digest fails (edited by hand), or the lock digest."""
    facts: dict[str, Fact] = {}
    for path, entry in document["facts"].items():
        where = f"{source}: facts.{schema.key_part(path)}"
        fact = Fact.from_entry({k: v for k, v in entry.items() if k != "digest"}, where)
        if check and fact.digest() != entry["digest"]:
            raise InputError(
                f"{where}: digest mismatch: the pinned fact {path} was edited by hand "
                f"(its content hashes to {fact.digest()}, the lock says {entry['digest']}); re-lock it instead"
            )
        facts[path] = _shared(path, entry["digest"], fact)
    if not check:
        return facts
    body = _sorted(dict(document))
    stated = body["lock"].pop("digest")
    actual = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    if stated != actual:
        raise InputError(
            f"{source}: lock.digest: the lock's contents do not match its digest {stated} (edited by hand?): a lock "
            f"is written by passprice only; {_edited_way(document, source)}"
        )
    return facts


def _edited_way(document: Mapping[str, Any], source: str) -> str:
    """The way out for the lock file ``source`` (its ``document``, valid against the schema) whose contents do not
    match its ``[lock] digest``: restore it, then ``lock --update`` it (which keeps its kind and policy) — but for
    a first-format lock in a ``locks/`` folder whose name a current-format lock there carries
    (:func:`name_holders`), whose ``--update`` is refused (:func:`passprice.locking.require_unique_name`, left58),
    the re-lock under its file's name, ``lock SERVING --force -o FILE`` (its serving named where the registry beside
    the folder registers one of the lock's name, as :func:`first_format_serving` finds it), which needs no restore,
    or removing it (left92: it said ``lock --update -o FILE``, exit 2 when run). Raises nothing."""
    from passprice.files import shell_word

    table = document.get("lock")
    name = table.get("name") if isinstance(table, Mapping) else None
    path = Path(source)
    if isinstance(table, Mapping) and table.get("format", 1) == 1 and isinstance(name, str) and (
            path.parent.name == "locks"):
        way = first_format_clash(Root(path.parent.parent), path, name, shell_word(source))
        if way is not None:
            return way
    word = shell_word(source)
    held = _last_written(path)
    then = (f"then change it with `passprice lock --update -o {word}` (it keeps the lock's kind and policy; "
            "`--force --require PATH=PROVENANCE` loosens a floor, which the review shows)")
    if held is None:
        return (f"no commit here holds it as written: restore it from a copy of it as written, {then}; or write it "
                f"anew, `passprice lock SERVING --force -o {word}`")
    return f"restore it from the last commit that holds it as written (`git checkout {held} -- {word}`), {then}"


#: The most commits :func:`_last_written` reads the lock file of, newest first.
LAST_WRITTEN_COMMITS = 20


def _last_written(path: Path) -> str | None:
    """The last commit of the git work tree holding the lock file ``path`` whose bytes there read as written (its
    ``[lock] digest`` that of its contents): ``HEAD`` when HEAD's do, else the commit's 12 hex digits, of the last
    :data:`LAST_WRITTEN_COMMITS` changing it. A hand-edited lock's error said ``git checkout REV -- FILE``, with
    placeholders to fill (tests/test_fix190.py). ``None`` when it is in no git work tree, git fails, or none of them
    holds it as written. Raises nothing."""
    import subprocess
    import tomllib

    from passprice.gitread import run_git

    try:
        where = path.resolve()
        top = Path(run_git(where.parent, ["rev-parse", "--show-toplevel"]).decode("utf-8", "surrogateescape").strip())
        rel = where.relative_to(top.resolve()).as_posix()
        head = run_git(top, ["rev-parse", "--verify", "-q", f"HEAD:{rel}"]).decode("ascii", "replace").strip()
        listed = run_git(top, ["log", f"-{LAST_WRITTEN_COMMITS}", "--format=%H", "--",
                               f":(literal){rel}"]).decode("ascii", "replace")
        for commit in listed.split():
            blob = run_git(top, ["rev-parse", "--verify", "-q", f"{commit}:{rel}"]).decode("ascii", "replace").strip()
            data = run_git(top, ["cat-file", "blob", blob]) if blob else b""
            if not data or len(data) > MAX_HISTORY_LOCK_BYTES:
                continue
            body = _sorted(schema.toml_loads(data.decode("utf-8")))
            table = body.get("lock")
            if not isinstance(table, dict) or not isinstance(table.get("digest"), str):
                continue
            stated = table.pop("digest")
            if stated == "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest():
                return "HEAD" if blob == head else commit[:12]
    except (InputError, OSError, ValueError, TypeError, AttributeError, UnicodeDecodeError, tomllib.TOMLDecodeError,
            RecursionError, subprocess.CalledProcessError):
        return None
    return None


def _shared(path: str, digest: str, fact: Fact) -> Fact:
    """``fact`` (pinned at ``path`` under ``digest``), or an equal one already built in this snapshot: the locks of one
    serving pin mostly the same facts (its card's, its checkpoint's), and 5,000 of them each with its own 28 facts
    held 0.11 MiB a lock (issue 13, session 33). Shared, they are pickled once a batch chunk
    (:data:`passprice.cache.BATCH_CHUNK` objects) and read back shared. Equality (attrs') decides, the digest only
    finds the candidate; the digest (canonical JSON: ``2`` and ``2.0`` differ) keeps apart what equality would not,
    and a forged or edited fact has another digest, so it is always its own. Raises nothing."""
    from passprice import snapshot

    if not snapshot.active():
        return fact
    kept = snapshot.made(("pinned fact", path, digest), lambda: fact)
    return kept if kept is fact or kept == fact else fact


def check_digests(document: Mapping[str, Any], source: str) -> None:
    """Check every pinned fact's digest and the lock's own in a schema-valid lock ``document`` read from
    ``source``. Raises :class:`InputError` naming the path of a fact whose digest fails (edited by hand), or the
    lock digest."""
    _require_whole_format(document, source)
    _require_sorted_vendors(document, source)
    _pinned_facts(document, source, check=True)


def _require_sorted_vendors(document: Mapping[str, Any], source: str) -> None:
    """Refuse a lock whose ``[stack] fitted_vendors`` is not sorted (by code point, as :func:`sorted` sorts them):
    the lock schema states the rule (JSON Schema cannot say it) and passprice writes them so
    (:func:`passprice.stackreach.stack_vendors`); a list re-digested out of order read as the vendors relabelled
    (``NVIDIA[, AMD → ]``), exit 0 (session 29). An empty list stays a lock's own: it is what a stack fitted on
    cards that give no vendor pins. Raises :class:`InputError` naming the key and the first pair out of order."""
    table = document.get("stack")
    vendors = table.get("fitted_vendors") if isinstance(table, Mapping) else None
    if not isinstance(vendors, list) or not all(isinstance(v, str) for v in vendors):
        return
    pair = next(((a, b) for a, b in itertools.pairwise(vendors) if not a < b), None)
    if pair is not None:
        from passprice.reproduce import _side  # only on a refusal: a warm price imports no reproduce (test_perf_25)

        raise InputError(
            f"{source}: stack.fitted_vendors: {_side(pair[0])!r} before {_side(pair[1])!r} is "
            "not in order (the vendors are sorted, each once, as passprice writes them): re-lock it, or restore the "
            "lock from the last commit that holds it as written"
        )


def _require_whole_format(document: Mapping[str, Any], source: str) -> None:
    """Refuse a lock whose ``lock.format`` is a TOML float (``2.0``): JSON Schema counts 2.0 an integer, so the
    schema's ``enum`` let it by, and a lock re-digested with it read as format 2 (attack round 28), where passprice
    writes the integer. Raises :class:`InputError` naming the key."""
    table = document.get("lock")
    value = table.get("format") if isinstance(table, Mapping) else None
    if isinstance(value, float):
        raise InputError(
            f"{source}: lock.format: {value!r} is not allowed here (one of 2: a whole number, written without a "
            "decimal point)"
        )


def _require_record_name(document: Mapping[str, Any], source: str) -> None:
    """Refuse a lock whose ``lock.name`` is no record name (:func:`passprice.registry.name_problem`, the rule of
    every card, serving and checkpoint name): the lock schema's one-line rule let U+00AD, U+00A0 and U+E000 by, so a
    lock could be named like another and shown so on every line naming it (attack round 44). A name ending in
    ``.toml`` is left to the rule of lock file names. Raises :class:`InputError` naming the key."""
    from passprice.registry import name_problem

    table = document.get("lock")
    name = table.get("name") if isinstance(table, Mapping) else None
    if isinstance(name, str):
        problem = name_problem(name, fix="re-lock it under another name", toml=False)
        if problem is not None:
            raise InputError(f"{source}: lock.name: {problem}")


def lock_from_document(document: Mapping[str, Any], source: str, *, checked: bool = False) -> Lock:
    """The lock a schema-valid ``document`` describes, after checking every pinned fact's digest and the lock's own
    (``checked``: the caller has, :func:`check_digests`, on these very bytes).

    Raises :class:`InputError` naming the path of a fact whose digest fails (edited by hand), or the lock digest."""
    import cattrs

    if not checked:
        _require_whole_format(document, source)
    _require_record_name(document, source)
    facts = _pinned_facts(document, source, check=not checked)
    data = {**document, "facts": {}, "lock": dict(document["lock"])}
    try:
        lock = converter().structure(data, Lock)
    except (cattrs.BaseValidationError, ValueError, TypeError) as e:
        detail = "; ".join(cattrs.transform_error(e)) if isinstance(e, cattrs.BaseValidationError) else str(e)
        raise InputError(f"{source}: not a lock: {detail}") from None
    _require_read_floors(lock, source)
    _require_pinned_checkpoint(lock, source)
    _require_no_cycle(facts, source)
    _require_own_records(lock, facts, source)
    _require_own_stack(lock, facts, source)
    _require_reserve_fits(lock, facts, source)
    _require_ranges_ordered(facts, source)
    _require_read_pins(lock, facts, source)
    return attrs.evolve(lock, facts=facts, source=source)


def _require_pinned_checkpoint(lock: Lock, source: str) -> None:
    """Refuse a lock whose ``checkpoint.name`` is not its serving's ``serving.checkpoint``: a lock pins the
    checkpoint its serving names, as :func:`make_lock` writes both from one reference. Left55 (attack 73's leftover):
    ``checkpoint.name = "/etc/passwd"``, re-digested, passed ``check`` (the content was found under the serving's
    entry, "renamed or moved"), since only ``serving.checkpoint`` is held inside the registry
    (:func:`passprice.registry.require_inside`); the schema refuses a ``.`` or ``..`` part. Raises
    :class:`InputError` naming the key and both names."""
    if lock.checkpoint_pin.name != lock.serving.checkpoint:
        raise InputError(
            f"{source}: checkpoint.name: {lock.checkpoint_pin.name!r} is not the checkpoint the lock's serving names "
            f"(serving.checkpoint = {lock.serving.checkpoint!r}): a lock pins its serving's checkpoint; re-lock it"
        )


def _require_no_cycle(facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock one of whose pinned facts derives, through its inputs' ``fact`` references, from itself
    (:func:`passprice.derivations.cycle_through`, as ``check`` refuses it in a card): no source ever gave such a
    figure. Left55 (attack 73's leftover): a pin's input ``fact = "array"`` inside ``facts.array``, re-digested,
    passed ``check`` (exit 0); only ``--frozen`` said "derivation changed". Facts none of whose derivations names a
    fact are not walked. Raises :class:`InputError`: one line naming the lock file, the pin's key and the loop."""
    from passprice.derivations import Derivation, cycle_through

    linked = [path for path, fact in facts.items()
              if isinstance(fact.derivation, Derivation) and fact.derivation.facts()]
    for path in sorted(linked):
        cycle = cycle_through(facts, path)
        if cycle:
            raise InputError(
                f"{source}: facts.{schema.key_part(path)}.derivation: a cycle of derivations: {' -> '.join(cycle)} "
                "(a fact cannot derive from itself; a lock passprice writes never pins one: re-lock it)"
            )


def _record_name(ref: str) -> str:
    """The registry name a serving's routing or drafting reference ``ref`` reads (a name, or a path whose file name
    less ``.toml`` is the record's, as :func:`passprice.registry.entry_name` names it). Raises nothing."""
    name = Path(ref).name if "/" in ref or "\\" in ref or ref.endswith(".toml") else ref
    return name[: -len(".toml")] if name.endswith(".toml") else name


def _require_own_records(lock: Lock, facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock (its pinned ``facts`` by path) whose ``[routing]`` or ``[draft]`` table pins a record its own
    serving does not price with: a lock of a dense serving with a ``[routing]`` table, or one naming another record
    than ``serving.routing`` (or ``serving.draft.method``). Such a pin is compared with nothing
    (:func:`passprice.reproduce.relabelled` compares a pin with the record of its name only), so a re-digested lock
    whose ``routing.name = "uniform"`` (its serving routes with ``qwen3-30b-a3b-measured``) passed ``check``,
    ``reproduce`` and ``price --lock`` silently (attack round 48). So is a pinned ``draft.acceptance.i`` past
    ``serving.draft.tokens`` (or of a serving that drafts nothing), and a pinned ``routing.*`` figure of a serving
    that routes with no record: ``passprice lock`` pins only what the price reads, and a re-digested lock pinning
    ``draft.acceptance.3`` to ``draft.acceptance.62`` for a two-token draft passed ``check`` and ``check --frozen``
    ("0 problems") while the review failed it as pins no registry holds. Raises :class:`InputError` naming the file
    and the key."""
    from passprice.schema import shown_value  # not passprice.routing: a warm price imports no cattrs (test_cache)

    tokens = lock.spec.draft.tokens if lock.spec.draft is not None else 0
    past = sorted(int(p.rsplit(".", 1)[1]) for p in facts if _draft_path().fullmatch(p) is not None
                  and int(p.rsplit(".", 1)[1]) > tokens)
    if past:
        reads = f"it drafts {tokens} token{'s' if tokens != 1 else ''} a pass" if tokens else "it drafts nothing"
        more = f" (and {len(past) - 1:,} more past it)" if len(past) > 1 else ""
        raise InputError(
            f"{source}: facts.{schema.key_part(f'draft.acceptance.{past[0]}')}{more}: a figure the lock's serving does "
            f"not read ({reads}: serving.draft.tokens): passprice lock pins only what the price reads; re-lock it"
        )
    for path in facts:
        if path.startswith("routing.") and lock.spec.routing is None:
            raise InputError(
                f"{source}: facts.{schema.key_part(path)}: a figure the lock's serving does not read (it routes with "
                "no record: serving.routing): passprice lock pins only what the price reads; re-lock it"
            )
    draft = lock.spec.draft.method if lock.spec.draft is not None else None
    for table, pin, ref, key, what, none in (
        ("routing", lock.routing, lock.spec.routing, "serving.routing", "routing record", "routes with no record"),
        ("draft", lock.draft, draft, "serving.draft.method", "drafting method", "drafts with no method"),
    ):
        if pin is None or (ref is not None and _record_name(ref) == pin.name):
            continue
        uses = f"its serving {none}" if ref is None else f"its serving's is {shown_value(_record_name(ref))} ({key})"
        raise InputError(
            f"{source}: {table}.name: {shown_value(pin.name)} is not the {what} the lock priced with ({uses}): a lock "
            "pins the title and note of its own serving's record only; re-lock it"
        )


#: What a lock that pins a figure it should not (or lacks one it should) is told to do: a lock is written by passprice.
_RESTORE = ("(edited by hand?): restore the lock from the last commit that holds it as written, or re-lock it")


def _require_own_stack(lock: Lock, facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock (format 2; its pinned ``facts`` by path) whose ``[stack]`` table, ``stack.*`` facts and recorded
    price disagree on the serving stack the price was made under: ``passprice lock --stack S`` writes all three
    (``[stack]`` naming S, ``price.stack = S`` beside the expected price, every stack fact the expected price rests
    on), a lock without ``--stack`` none. Which stack a lock prices under is read from its ``[stack]`` table alone, so
    a re-digested lock with a ``[stack]`` table added to a lock priced under none made ``price --lock`` price the
    serving under that stack, exit 0, "the price is the one L records" (whose recorded price has no expected price to
    compare), while ``check`` and ``reproduce`` said "does NOT reproduce" (exit 1: StackLacks); the table removed
    from a lock made under a stack, or its ``stack.*`` facts removed, did the same the other way (attack round 49).
    Such a lock is malformed input, as a ``[routing]`` table pinning another record is
    (:func:`_require_own_records`). Raises :class:`InputError` naming the file and the key."""
    from passprice.schema import shown_value

    if lock.info.format < 2:
        return
    recorded = lock.price.get("stack")
    recorded = recorded if isinstance(recorded, str) else None
    pin = lock.stack
    if pin is not None:
        _require_stack_name(pin.name, source)
    if pin is not None and pin.name != recorded:
        uses = ("its recorded price is under no stack: price.stack" if recorded is None
                else f"its recorded price's is {shown_value(recorded)}: price.stack")
        raise InputError(
            f"{source}: stack.name: {shown_value(pin.name)} is not the serving stack the lock priced under ({uses}): "
            "a lock pins the stack its price was made under only; re-lock it"
        )
    if pin is None and recorded is not None:
        raise InputError(
            f"{source}: stack: missing, and the lock's recorded price is under stack {shown_value(recorded)} "
            f"(price.stack): passprice lock pins the stack a price is made under {_RESTORE}"
        )
    if pin is None:
        # The fields only a price under a stack records: with the [stack] table, price.stack and every stack.* fact
        # removed, price.expected left made `reproduce` say "does NOT reproduce" (exit 1) and `price --lock` exit 0,
        # "the price is the one L records" (attack round 51).
        for key in ("expected", "ratio", "fixed_s"):
            if key in lock.price:
                raise InputError(
                    f"{source}: price.{key}: a figure of a price under a stack, in a lock priced under none (no stack "
                    f"table, no price.stack) {_RESTORE}"
                )
        for path in facts:
            if path.startswith("stack."):
                raise InputError(
                    f"{source}: facts.{schema.key_part(path)}: a figure the lock's price does not read (it is priced "
                    "under no stack: price.stack): passprice lock pins only what the price reads; re-lock it"
                )
        return
    expected = lock.price.get("expected")
    read = expected.get("rests_on", {}) if isinstance(expected, Mapping) else {}
    for path in read:
        if isinstance(path, str) and path.startswith("stack.") and path not in facts:
            raise InputError(
                f"{source}: facts.{schema.key_part(path)}: missing, and the lock's expected price under stack "
                f"{shown_value(pin.name)} rests on it (price.expected.rests_on): passprice lock pins every figure "
                f"the price reads {_RESTORE}"
            )


def _require_reserve_fits(lock: Lock, facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock (its pinned ``facts`` by path) whose stack reserve for its card (``stack.cards.CARD.memory.
    reserved`` where pinned, else ``stack.memory.reserved``) is at or above its pinned ``memory.capacity``: no pass
    prices under such a stack (:func:`passprice.stacks.expected_pricing` refuses it). Re-digested with a reserve of 1e18
    B, ``price --lock`` exited 0 ("floors hold, but the price is NOT the one … records"), the forged record never
    re-priced, and ``reproduce`` and ``check`` named ``facts/stacks/NAME.toml``, a file that holds no such figure
    (attack round 60). Both values are in bytes, units differing (GB beside MiB), so no schema rule states it.
    Raises :class:`InputError` naming the file and the key."""
    if lock.stack is None:
        return
    capacity = facts.get("memory.capacity")
    own = f"stack.cards.{lock.card_pin.name}.memory.reserved"
    path = own if own in facts else "stack.memory.reserved"
    reserved = facts.get(path)
    if capacity is None or reserved is None or reserved.value < capacity.value:
        return
    raise InputError(
        f"{source}: facts.{schema.key_part(path)}: {byte_figure(reserved.value)} bytes reserved is at or above the "
        f"pinned memory.capacity of card {lock.card_pin.name} ({byte_figure(capacity.value)} bytes): the runtime's "
        f"reserve must leave the card memory to hold a serving {_RESTORE}"
    )


def _require_ranges_ordered(facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock (its pinned ``facts`` by path) whose stack range runs backwards: ``stack.range.rows.min`` above
    ``stack.range.rows.max``, or ``stack.range.position.min`` above ``stack.range.position.max`` (batches and
    positions, counts). A stack file saying so is refused by ``check`` (``range.rows.min: 5 is above range.rows.max
    2``, exit 2); re-digested into a lock, ``reproduce`` said "its pinned inputs are refused (BeyondStack …)" and
    ``price --lock`` "LockForged", both exit 1, where the lock itself is bad input (attack round attack55). One value
    against another, so no schema rule states it (the lock schema makes both whole numbers). Raises
    :class:`InputError` naming the file and the key."""
    for what in ("rows", "position"):
        low, high = facts.get(f"stack.range.{what}.min"), facts.get(f"stack.range.{what}.max")
        if low is None or high is None or low.value <= high.value:
            continue
        raise InputError(
            f'{source}: facts."stack.range.{what}.min": {int(low.value)} is above stack.range.{what}.max '
            f"{int(high.value)}: a range runs from its least to its largest value {_RESTORE}"
        )


def _require_stack_name(name: str, source: str) -> None:
    """Refuse a lock's ``[stack] name`` that names no file of ``facts/stacks`` (``NAME.toml``, read by name by
    ``price --lock``, ``check`` and ``reproduce``): one holding a slash (``a/b``, ``../../etc``), ``.`` or ``..``,
    more bytes than a file's name holds beside ``.toml`` (255 in all), or failing the rule every record's name keeps
    (:func:`passprice.registry.name_problem`), or holding a backslash (Windows' folder separator), another character
    no file name on Windows holds or naming a Windows device (:func:`passprice.registry.windows_problem`: ``check``
    refuses such a stack file; under ``a\\b`` a plain ``price`` said "floors hold", exit 0, attack round 55).
    Re-digested with ``name = "a/b"`` and ``price.stack = "a/b"`` (the two agreeing), ``reproduce`` and ``audit``
    exited 0, ``check`` failed the lock with "today's files do not read" (exit 1) and ``price --lock`` exited 2
    naming the stack file, not the lock (attack round 51). Raises
    :class:`InputError` naming the file and the key."""
    import os

    from passprice.registry import name_problem, windows_problem
    from passprice.schema import shown_value

    problem = None
    if "/" in name or "\\" in name or os.sep in name or name in (".", ".."):  # "\\": Windows' folder separator
        problem = "a stack's name is a file's name in facts/stacks, without a folder"
    elif len(f"{name}.toml".encode("utf-8", "surrogatepass")) > 255:
        problem = (f"{len(name.encode('utf-8', 'surrogatepass')):,} bytes, where a stack file's name holds at most 250 "
                   "before .toml")
    else:
        problem = name_problem(name, "re-lock it")
    if problem is None and windows_problem(name) is not None:  # "a:b", "con": no stack file of a clone has it
        problem = f"{windows_problem(name)}, so no registry's stack file is named so (check refuses one)"
    if problem is not None:
        raise InputError(f"{source}: stack.name: {shown_value(name)} is no stack's name: {problem}"
                         + ("" if problem.endswith("re-lock it") else "; re-lock it"))


def folder_batch(root: Root, i: int) -> str:
    """The cache batch (:func:`read_lock`'s ``batch``) a command reading every lock of ``root/locks`` (``check``,
    :func:`passprice.lineage.registered_locks`) reads its ``i``-th lock in (0 first, in the order it lists them):
    the folder and which :data:`passprice.enforce.LOCKS_A_BATCH` of its locks, as ``price`` batches a serving's
    (``FOLDER/*N``, where a serving's is ``FOLDER/SERVING.lock.toml*N``). One entry a lock, 5,000 locks passed the
    cache's :data:`~passprice.cache.MAX_ENTRIES` (4,096) and every ``check`` built them all again (slip 54). Raises
    nothing."""
    from passprice.enforce import LOCKS_A_BATCH

    return f"{root.locks}{os.sep}*{i // LOCKS_A_BATCH}"


def read_lock_in(root: Root, path: Path, batch: str | None = None) -> Lock:
    """The lock at ``path`` as :func:`read_lock` reads it (``batch`` as it takes it), checked against ``root``'s
    registered stacks (:func:`require_named_stack`): what ``check``, ``reproduce``, ``audit`` and ``price --lock``
    read. Raises what :func:`read_lock` and :func:`require_named_stack` raise."""
    lock = read_lock(path, root.schema, batch)
    require_named_stack(root, lock, str(path))
    return lock


def require_named_stack(root: Root, lock: Lock, source: str) -> None:
    """Refuse a lock whose ``[stack] name`` (and ``price.stack``, the two agreeing) names a registered stack other
    than the one its ``[stack]`` pins describe: the named stack's title, runtime and builds differ from the pinned
    ones while another registered stack's are exactly those. A lock made under ``llamacpp-cuda-2405`` re-digested to
    name ``lmdeploy-turbomind-2312`` read as drift (``check`` exit 1, "stack lmdeploy-turbomind-2312
    integer_matrices: vector → array"), ``reproduce`` and ``audit`` exit 0 under the wrong name (session 29): a lock
    names the stack its price was made under (DESIGN, Locks), so a relabel is malformed input, not drift. A stack
    merely edited since the lock (its title or runtime rewritten) matches no other stack and stays drift. Raises
    :class:`InputError` naming the file and the key; nothing when the lock has no stack or a stack does not read
    (the price reports that)."""
    if lock.stack is None:
        return
    pinned = (lock.stack.title, lock.stack.runtime, lock.stack.builds)

    def texts(name: str) -> tuple[str, str | None, str | None] | None:
        # The stack file's own [stack] table, read as every registry file is (schema-checked, kept in the document
        # cache), not through passprice.stacks: a plain `price` judges the serving's locks through here, and
        # importing the stack model (and the GGUF reader with it) on every price cost the fast path (lead, s30).
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            return None
        from passprice import snapshot

        # once a snapshot (one version of each file): 1,667 locks of one serving under a stack read it 1,667 times
        return snapshot.made(("stack-texts", str(root.stacks), str(root.schema), name), lambda: _stack_texts(name))

    def _stack_texts(name: str) -> tuple[str, str | None, str | None] | None:
        # The three texts are kept as a built object of the file's bytes and the stack schema (cache.built), not read
        # off the whole validated document: a price's lock of r1-qwen7b-h200 under llamacpp-cuda-2405 read that 93 KB
        # file's cached document (an 84 KB JSON entry, checksummed and parsed) for three strings, about 8.6 M of a
        # price's 425 M instructions (issue 16, afresh101). A file that does not read or validate is None, as before,
        # and nothing is kept of it (a build that raises stores nothing).
        from passprice import cache

        path = root.stacks / f"{name}.toml"

        def build() -> tuple[str, str | None, str | None]:
            meta = schema.load(path, "stack", root.schema, data=data)["stack"]
            runtime, builds = meta.get("runtime"), meta.get("builds")
            return (str(meta["name"]), None if runtime is None else str(runtime),
                    None if builds is None else str(builds))

        try:
            data = schema.read_bytes(path, "stack")
            return cache.built("stack+texts", root.schema / "stack.schema.json", data, build, tuple)
        except (InputError, OSError, KeyError, TypeError):
            return None

    if texts(lock.stack.name) in (pinned, None):
        return
    try:
        names = root.names(root.stacks)
    except InputError:
        return
    other = next((n for n in names if n != lock.stack.name and texts(n) == pinned), None)
    if other is not None:
        raise InputError(
            f"{source}: stack.name: {lock.stack.name!r} is not the stack this lock's pins describe: its [stack] "
            f"title, runtime and builds are those of registered stack {other!r} (a lock names the stack its price was "
            "made under); re-lock it, or restore the lock from the last commit that holds it as written"
        )


def _require_read_pins(lock: Lock, facts: Mapping[str, Fact], source: str) -> None:
    """Refuse a lock (its pinned ``facts`` by path) that lacks a figure its own serving's price reads:
    ``draft.acceptance.1`` to ``draft.acceptance.N`` for a serving drafting N tokens a pass (``serving.draft.tokens``),
    and both ``routing.hot_experts`` and ``routing.hot_share`` for one routing with a record whose price rests on
    routing (a pinned ``routing.*`` figure, ``rests_on`` or the recorded ``routing``). ``passprice lock`` pins every
    figure the price reads, so such a lock is malformed input: re-digested without ``draft.acceptance.2``,
    ``reproduce`` said "does not reproduce" (exit 1: BadDraft, or Routed for a missing ``routing.hot_share``) and
    ``price --lock`` priced today's figure under it, exit 0 (leftovers round 27b). The complement of
    :func:`_require_own_records`, which refuses figures past what the serving reads. Raises :class:`InputError`
    naming the file and the first missing key."""
    # passprice.routing.ROUTING_PATHS, spelled here: importing passprice.routing brings cattrs to a warm price.
    routing_paths = ("routing.hot_experts", "routing.hot_share")
    tokens = lock.spec.draft.tokens if lock.spec.draft is not None else 0
    wanted = [f"draft.acceptance.{i}" for i in range(1, tokens + 1)]
    why = {p: f"the lock's serving drafts {tokens} token{'s' if tokens != 1 else ''} a pass (serving.draft.tokens)"
           for p in wanted}
    routed = lock.spec.routing is not None and (
        any(p.startswith("routing.") for p in (*facts, *lock.rests_on)) or "routing" in lock.price
    )
    if routed:
        wanted += routing_paths
        record = _record_name(lock.spec.routing or "")
        why.update(dict.fromkeys(
            routing_paths, f"the lock's serving routes with {record} (serving.routing) and its price rests on routing"
        ))
    for path in wanted:
        if path not in facts:
            raise InputError(
                f"{source}: facts.{schema.key_part(path)}: missing, and {why[path]}: passprice lock pins every "
                "figure the price reads (edited by hand?): restore the lock from the last commit that holds it as "
                "written, or re-lock it"
            )


#: The most characters of a floor's path :func:`_require_read_floors` shows (a fact path is at most about 40).
_FLOOR_KEY_MOST = 100


def _require_read_floors(lock: Lock, source: str) -> None:
    """Refuse a lock (format 2) with a per-path floor on a path its recorded price does not rest on: passprice never
    writes one (:class:`UnreadFloor`), and the floor guards nothing. A lock edited by hand and digested again with
    ``array``'s floor moved to ``аrray`` (a Cyrillic ``а``) passed ``check`` and ``reproduce`` as ``ok`` while the
    floor it seemed to keep was gone (attack round 27). Raises :class:`InputError` naming the file and the key."""
    if lock.info.format < 2:  # the first format's rests_on was a fixed list, not the price's own
        return
    unread = unread_floors(lock.policy, lock.rests_on)
    if unread:
        from passprice.errors import escaped, spell

        path = unread[0]
        # A key of 5,000 characters printed twice made a 3,551-character line (cut by the command line's backstop
        # only; attack round 53): the key is shown once, cut, in the key path, and what is shown is what is spelled.
        cut = path[:_FLOOR_KEY_MOST]
        spelled = "" if path.isascii() else f" (spelled {spell(cut)}: it prints like another name)"
        key = (schema.key_part(path) if len(path) <= _FLOOR_KEY_MOST
               else f"{schema.key_part(cut)}… ({len(path):,} characters)")
        named = escaped(path) if len(path) <= _FLOOR_KEY_MOST else "it"
        raise InputError(
            f"{source}: policy.paths.{key}: a floor on {named}{spelled}, a path the "
            f"recorded price does not rest on (it rests on {', '.join(lock.rests_on)}), guards nothing, and passprice "
            "never writes one (edited by hand?): restore the lock from the last commit that holds it as written, or "
            "re-lock it"
        )


#: The tables every lock has (``schema/lock.schema.json``, top level).
_TABLES = ("card", "checkpoint", "facts", "lock", "policy", "price", "serving")


def read_lock(path: Path, schema_folder: Path | None = None, batch: str | None = None) -> Lock:
    """Read, validate and digest-check the lock at ``path``. An unchanged lock file comes from the cache of validated
    files with its digests checked when it was stored (:func:`check_digests`), so only its facts and tables are
    built again. ``batch``: a name for the locks a command reads together (a serving's, :func:`locks_of`), past the
    first few kept in one cache entry (:func:`passprice.cache.built`'s ``batch``): 10,001 locks of one serving kept
    one entry each passed the cache's :data:`~passprice.cache.MAX_ENTRIES` and every price built them all again
    (issue 13, session 32: 16 s). A lock read as one of a ``batch`` does not keep its bytes in the snapshot
    (:func:`passprice.schema.read_unkept`): 2,000 locks of one serving kept 131 MB of them for the whole of a
    ``price`` (issue 13, session 33); what is built from them is still made once a snapshot.

    Raises :class:`InputError` (unreadable, not TOML, incomplete, a digest that fails: one line each) or
    :class:`~passprice.errors.SchemaError` (every schema problem)."""
    from passprice import snapshot
    from passprice.registry import schema_dir

    folder = schema_folder or schema_dir()
    if not snapshot.active():
        return _read_lock(path, folder, batch)
    # Inside a snapshot a path's bytes are fixed once read (:func:`passprice.snapshot.file_bytes`), so what they make
    # (the lock or its refusal) is kept by the path: `diff` of a branch adding 3,700 files under locks/ that are no
    # locks read each one 8 times (its comparison, the review, the lineage, the pins' forgery checks, ...), each
    # time sized, hashed and looked up again: 29,610 calls (issue 13, diff59). A path whose bytes the snapshot does
    # not keep (a ``batch`` read of a file not read before) is never kept: its bytes may change under it.
    key = ("read-lock", os.fspath(path), os.fspath(folder))
    known = snapshot.kept(key)
    if isinstance(known, InputError):
        raise known
    if known is not None:
        return known  # type: ignore[no-any-return]
    try:
        lock = _read_lock(path, folder, batch)
    except InputError as e:
        _keep(path, key, e)
        raise
    _keep(path, key, lock)
    return lock


def _keep(path: Path, key: tuple[str, str, str], made: Lock | InputError) -> None:
    """Keep ``made`` (a lock or its refusal) in the snapshot under ``key`` when the snapshot holds the bytes of the
    file at ``path`` (so they cannot change while it lasts). Raises nothing."""
    from passprice import snapshot

    if snapshot.kept_bytes(path) is not None:
        snapshot.made(key, lambda: made)


def _read_lock(path: Path, folder: Path, batch: str | None) -> Lock:
    """:func:`read_lock` of ``path`` against the schemas in ``folder``, read from the snapshot's bytes or the file.
    Raises what :func:`read_lock` raises."""
    from passprice import cache

    data = schema.read_bytes(path, "lock") if batch is None else schema.read_unkept(path, "lock")
    schema.require_size(path, "lock", len(data))  # a kept object answers for a file under the cap only (issue 13)
    schema.require_shape(path, "lock", data)  # its separators and dots too (tests/test_bound111.py)
    # What a lock file builds depends on its path, bytes and schema alone (the cache keeps a good one by them), so a
    # refusal is kept by them too, once a process: `check` reads every lock twice (its files, then its review), and
    # a 256 KiB lock file of one array of 131,000 integers was parsed four times, 1.4 s of CPU (attack round 61).
    # Looked up only once something was refused: hashing every good lock's bytes again would cost a cold `price`
    # under 5,000 locks of one serving what scale36 saved.
    # The bytes are hashed once here, and that digest names them in every key that follows (the refusal memo's, the
    # cache's, the snapshot's memo of a content): the cache's key joined the path to the bytes (a new 66 KB object
    # hashed whole) and the snapshot's named the bytes alone, so a cold price hashed each lock file two or three
    # times (issue 13, scale37).
    digest = blake2b_digest(data)
    if _REFUSED:
        refused = _REFUSED.get(_refusal_key(path, folder, digest))
        if refused is not None:
            raise refused
    try:
        # the key names the path and the bytes (their digest): a lock's object holds its path (``source``)
        return cache.built(
            "lock", Path(folder) / "lock.schema.json",
            str(path).encode("utf-8", "surrogateescape") + b"\0" + len(data).to_bytes(8, "big") + digest,
            lambda: _same_bytes_built(path, folder, data, digest), Lock, batch=batch,
        )
    except InputError as e:
        _REFUSED.keep(_refusal_key(path, folder, digest), e)
        raise


def _refusal_key(path: Path, folder: Path | str, digest: bytes) -> tuple[str, str, bytes]:
    """:data:`_REFUSED`'s key for the lock file at ``path``: its path, schema folder and ``digest``, the BLAKE2b
    digest of its bytes (:func:`passprice.digests.blake2b_digest`)."""
    return (str(path), str(folder), digest)


#: Lock files refused in this process, by path, schema folder and the blake2b of their bytes (never across processes,
#: as :data:`passprice.schema._REFUSED`; bounded as :class:`passprice.errors.Refusals` says: 64 kept made ``diff``
#: of a branch adding 3,700 files that are no locks read each 8 times, attack 62).
_REFUSED = Refusals()


def _same_bytes_built(path: Path, schema_folder: Path, data: bytes, digest: bytes) -> Lock:
    """:func:`_lock_of_file`'s lock; inside a snapshot, built once for each content (bytes and schema folder): a
    file of the same bytes as one built before is that lock with its own ``source`` (``attrs.evolve``), since the
    path enters the lock only there and in the lines of a refusal, which is never kept (each file refused is
    refused again, naming itself). A cold ``price`` under 5,000 copies of a serving's three locks parsed or read
    back the same three documents and structured the same three locks 5,000 times (issue 13, scale36). A copy that
    differs in one byte (a forged or edited lock) is its own content, read and checked as ever. ``digest``: the
    BLAKE2b digest of ``data`` (:func:`passprice.digests.blake2b_digest`), which names the content (as
    :func:`passprice.snapshot.fingerprint` would, without hashing the bytes again)."""
    from passprice import cache, snapshot

    where = str(path)
    # Kept past the snapshot (:func:`passprice.snapshot.lasting`), by the bytes, the schemas' bytes and the cache
    # folder in use (its entries written by the first command that builds the lock there): a review reads the same
    # locks from each side's new temporary folder, and a process (the tests) runs many commands on one registry.
    first, lock = snapshot.lasting(
        ("lock-of-bytes", cache.scope(), snapshot.folder_fingerprint(schema_folder), (len(data), digest)),
        lambda: (where, _lock_of_file(path, schema_folder, data)),
    )
    return lock if first == where else attrs.evolve(lock, source=where)


def _lock_of_file(path: Path, schema_folder: Path, data: bytes) -> Lock:
    """The lock in the file at ``path`` (whose bytes are ``data``), validated and digest-checked: what
    :func:`read_lock` keeps. Raises what :func:`read_lock` raises."""
    from passprice import cache, snapshot

    if not data:  # `git show REV:PATH > old.lock.toml` whose REV lacks PATH leaves 0 bytes: no lock was cut short
        raise InputError(f"{path}: empty (0 bytes): no lock was written to it (a `git show REV:PATH > FILE` whose "
                         "revision does not hold PATH leaves such a file: `git log --oneline -- PATH` lists the "
                         "commits that changed it)")
    if b"[lock]" not in data:  # no lock table (every lock passprice writes has one): told before the schema, whose
        _not_a_lock(path, data)  # check cost 1 ms a file (attack 62: a branch adding 3,700 tiny files under locks/)
    if not snapshot.active():
        return _lock_of_document(path, schema_folder, data, None)
    # Inside a snapshot, built once for each content as parsed (the order of its keys aside): a file of other bytes
    # that parses to what a lock built before was parsed from (a comment, spacing, its keys in another order) is
    # that lock with its own ``source``. 1,000 such copies were each validated, digest-checked and structured:
    # `check --no-cache` 8.5 s of CPU (issue 13, scale88). Each file is still parsed (a syntax error names it), and
    # a refusal is never kept: a copy that differs in what it holds is its own content, refused naming itself.
    document = schema.parse_bytes(path, data)
    content = schema.content_digest(document)
    if content is None:
        return _lock_of_document(path, schema_folder, data, document)
    where = str(path)
    first, lock = snapshot.lasting(
        ("lock-of-content", cache.scope(), snapshot.folder_fingerprint(schema_folder), content),
        lambda: (where, _lock_of_document(path, schema_folder, data, document)),
    )
    return lock if first == where else attrs.evolve(lock, source=where)


def _lock_of_document(path: Path, schema_folder: Path, data: bytes, parsed: dict[str, Any] | None) -> Lock:
    """:func:`_lock_of_file`'s lock, from ``parsed`` (the document of ``data``, when parsed already) or ``data``.
    Raises what :func:`read_lock` raises."""
    try:
        document = schema.load(path, "lock", schema_folder, data=data, check=("digests", check_digests),
                               parsed=parsed)
    except SchemaError as e:
        _not_a_lock(path, data, e.document)
        # A lock cut short (a truncated file, or a partial write by something other than passprice) lacks its last
        # tables and keys and nothing else is wrong with it: one line says so instead of a cascade of problems.
        suffix = ": missing (required)"
        missing = [p[: -len(suffix)] for p in e.problems if p.endswith(suffix)]
        if len(missing) < 2 or len(missing) != len(e.problems):
            raise
        listed = [f"[{m}]" for m in missing if m in _TABLES] + [m for m in missing if m not in _TABLES]
        shown = ", ".join(listed[:6]) + (f" and {len(listed) - 6} more" if len(listed) > 6 else "")
        raise InputError(f"{path}: incomplete lock (truncated?): missing {shown}; re-lock it") from None
    return lock_from_document(document, str(path), checked=True)


def lockless_line(path: Path, data: bytes) -> str | None:
    """The one line :func:`read_lock` would refuse the file at ``path`` (whose bytes are ``data``) by for holding no
    ``[lock]`` table, told from its bytes alone (no schema check): ``not a lock file`` (:func:`_not_a_lock`) or
    ``no [lock] table``; ``None`` for a file holding one. Raises nothing."""
    if b"[lock]" in data:
        return None
    try:
        _not_a_lock(path, data)
    except InputError as e:
        return str(e).splitlines()[0]
    return f"{path}: no [lock] table (not a whole lock): re-lock it"


def _not_a_lock(path: Path, data: bytes, document: dict[str, Any] | None = None) -> None:
    """Raise one :class:`InputError` line for a file that is not a lock at all (no ``[lock]`` table), naming the
    kind its ``#:schema`` line declares (a serving, a card …), instead of every lock key it lacks. ``document``: the
    file's parsed document, when the caller has it (parsed here otherwise)."""
    import re
    import tomllib

    if document is None:
        try:
            document = schema.toml_loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return
    declared = re.match(rb"#:schema [^\n]*?([a-z-]+)\.schema\.json", data)
    kind = declared[1].decode("ascii") if declared is not None else None
    if "lock" in document or kind == "lock" or (kind is None and (not document or set(document) & set(_TABLES))):
        return  # a lock, perhaps cut short (said so by the caller), or nothing to tell it by
    what = f"a {kind} file" if kind is not None else "some other file"
    named = str(path)
    try:  # a link says so: `locks/bad.lock.toml -> ../registry/servings/x.toml` (it read as the file it names)
        if os.path.islink(path):
            named, what = f"{path} -> {os.readlink(path)}", f"a symbolic link to {what}"
    except OSError:
        pass
    raise InputError(
        f"{named}: not a lock file (no [lock] table; it is {what}): a lock is locks/NAME.lock.toml, written by "
        "`passprice lock SERVING`"
    ) from None


# --- making a lock ---------------------------------------------------------------------------------------------------


def portable(ref: str, root: Root, folder: Path) -> str:
    """A serving's checkpoint or card reference as a lock records it: a registry name as is; a path to a file in
    the registry's ``folder`` as its name; any other existing file relative to the root (POSIX), or absolute when it
    lies outside it; so the lock reads the same from any working folder. A name with a folder in it that stays in
    ``folder`` (``./a40``, ``../cards/a40``: :func:`passprice.registry.stays_in`) is the entry it reads, recorded by
    its name: ``lock --checkpoint .//m --card ./a40`` recorded ``".//m"`` and ``"./a40"`` (attack round 28)."""
    path = Path(ref)
    if "/" not in ref and "\\" not in ref and not is_there(path):
        return ref
    named = _entry_named(ref, folder)
    if named is not None:
        return named
    if not is_there(path):
        return ref
    full = path.resolve()
    if full.parent == folder.resolve() and full.suffix == ".toml":
        return full.name[: -len(".toml")]
    try:
        return full.relative_to(root.path.resolve()).as_posix()
    except ValueError:
        return str(full)


def _entry_named(ref: str, folder: Path) -> str | None:
    """The name of the entry of ``folder`` that ``ref``, a name with a folder in it that stays in ``folder``
    (:func:`passprice.registry.stays_in`: ``./a40``, ``../cards/a40``), reads, as every loader reads it; ``None``
    for any other reference (a plain name, a path ending in ``.toml`` or a GGUF suffix, a name leading out, an entry
    not there)."""
    import os

    from passprice.registry import stays_in

    if ref.endswith((".toml", ".gguf", ".xz", ".gz")) or ("/" not in ref and os.sep not in ref):
        return None
    if not stays_in(folder, ref):
        return None
    entry = Path(os.path.normpath(os.path.join(folder, f"{ref}.toml")))
    return entry.name[: -len(".toml")] if is_there(entry) else None


def rooted(ref: str, root: Root) -> str:
    """A recorded reference made usable from any working folder: a relative path that names a file below the root
    becomes that file's path; anything else is returned as is."""
    path = Path(ref)
    if ("/" in ref or ref.endswith((".gguf", ".xz", ".gz", ".toml"))) and not path.is_absolute():
        below = root.path / path
        if is_there(below):
            return str(below)
    return ref


def portable_spec(spec: ServingSpec, root: Root) -> ServingSpec:
    """``spec`` with its checkpoint and card references made :func:`portable`, and a drafting method or routing
    record named with a folder that stays in its own (``--draft ./qwen35-mtp``) by its name (:func:`_entry_named`)."""
    draft, routing = spec.draft, spec.routing
    if draft is not None:
        draft = attrs.evolve(draft, method=_entry_named(draft.method, root.drafts) or draft.method)
    if routing is not None:
        routing = _entry_named(routing, root.routing) or routing
    return attrs.evolve(
        spec,
        checkpoint=portable(spec.checkpoint, root, root.checkpoints),
        card=portable(spec.card, root, root.cards),
        draft=draft,
        routing=routing,
    )


def rooted_spec(spec: ServingSpec, root: Root) -> ServingSpec:
    """``spec`` with recorded relative paths resolved against ``root`` (:func:`rooted`)."""
    return attrs.evolve(spec, checkpoint=rooted(spec.checkpoint, root), card=rooted(spec.card, root))


def make_lock(
    name: str,
    kind: str,
    resolved: Resolved,
    root: Root,
    policy: Policy | None = None,
    serving: str | None = None,
    floor: Provenance | None = None,
    requires: Mapping[str, Provenance] | None = None,
    stack: Stack | None = None,
) -> Lock:
    """Price ``resolved`` as a lock of ``kind`` would and pin it: the registered ``serving`` it locks (if any), the
    pricing model's digest, the checkpoint (portable reference, header sha256, content digest, entry origin and
    source), every card fact and drafting figure (and, with a serving ``stack``, its facts and routes: the price
    records its expected price too), the price, and ``policy`` (default: :func:`policy_from_flags` of the price's
    facts, ``floor`` and ``requires``).

    Raises :class:`~passprice.serving.ServingRefusal` when the serving cannot be priced, and :class:`UnreadFloor`
    when the policy floors a path the price does not rest on."""
    from passprice.checkpoints import checkpoint_origin, checkpoint_source
    from passprice.pins import checkpoint_digest, pricing_model_digest

    price, rests_on = priced(kind, resolved.header, resolved.card, resolved.serving, stack)
    rests = tuple((p, f.provenance) for p, f in rests_on)
    if policy is None:
        policy = policy_from_flags(rests, floor, requires or {})
    unread = unread_floors(policy, (p for p, _ in rests))
    if unread:
        raise UnreadFloor(name, unread, tuple(p for p, _ in rests))
    spec = portable_spec(resolved.spec, root)
    # A card's float-matrix rates (tensor.*, issue 14) are pinned only where the price rests on them, so a lock of a
    # price that never rides them keeps the bytes it had before cards gained them.
    used = {p for p, _ in rests}
    facts = {p: f for p, f in resolved.facts().items() if not p.startswith("tensor.") or p in used}
    pin = None
    if stack is not None:
        own = f"stack.cards.{resolved.card.name}."
        pinned = stack.lock_facts()
        facts.update({p: f for p, f in pinned.items() if not p.startswith("stack.cards.") or p.startswith(own)})
        from passprice.stackreach import stack_vendors

        card_vendor, fitted_vendors = stack_vendors(root, stack, resolved.card.name)
        pin = StackPin(stack.name, stack.integer_matrices, stack.float_matrices, stack.title, stack.runtime,
                       stack.builds, card_vendor, fitted_vendors)
    return Lock(
        info=LockInfo(name, kind, pricing_model_digest(), LOCK_FORMAT, serving),
        policy=policy,
        serving=spec,
        checkpoint_pin=CheckpointPin(spec.checkpoint, resolved.header.sha256, checkpoint_digest(resolved.header),
                                     checkpoint_origin(root, resolved.spec.checkpoint),
                                     checkpoint_source(root, resolved.spec.checkpoint)),
        card_pin=CardPin(resolved.card.name, resolved.card.title, resolved.card.hypothetical),
        facts=facts,
        price=price,
        stack=pin,
        routing=routing_pin(resolved, facts),
        draft=draft_pin(resolved),
    )


def routing_pin(resolved: Resolved, facts: Mapping[str, Fact] | None = None) -> RecordPin | None:
    """The ``[routing]`` table of a lock of ``resolved``: the routing record's name, title and note, where the lock
    pins its ``routing.*`` figures (``facts``: the lock's; default ``resolved.facts()``), else ``None``. Raises
    nothing."""
    routing = resolved.serving.routing
    pinned = resolved.facts() if facts is None else facts
    if routing is None or not any(p.startswith("routing.") for p in pinned):
        return None
    return RecordPin(routing.name, routing.title, routing.note)


def draft_pin(resolved: Resolved) -> RecordPin | None:
    """The ``[draft]`` table of a lock of ``resolved``: the drafting method's name, title and note (``None`` when
    the serving drafts with no registered method). Raises nothing."""
    method = resolved.method
    if method is None:
        return None
    return RecordPin(method.name, method.title, method.note)


# --- finding locks ---------------------------------------------------------------------------------------------------


def _regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (links followed). Raises :class:`InputError` as :func:`~passprice.files.look`
    does."""
    import stat

    from passprice.files import look

    found = look(path)
    return found is not None and stat.S_ISREG(found.st_mode)


def _not_at_revision(root: Root, revision: str, inside: str) -> str | None:
    """Why ``git show REVISION:INSIDE`` would write no lock, read through :mod:`passprice.gitread` in ``root``'s
    checkout: ``git has no revision REV`` or ``REV does not hold PATH``, with the last commits that changed PATH
    (at most 3, newest first) or that none did; ``None`` when it holds a file there, or git cannot tell (no
    checkout, no git: the advice to write it out stands). ``reproduce main~3:locks/X.lock.toml`` advised a `git
    show` that failed, leaving a 0-byte file read as a truncated lock. Raises nothing."""
    import subprocess

    from passprice.gitread import run_git

    try:
        run_git(root.path, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"])
    except subprocess.CalledProcessError:
        try:
            run_git(root.path, ["rev-parse", "--git-dir"])
        except (subprocess.CalledProcessError, InputError):
            return None
        return f"git has no revision {revision!r} here (`git log --oneline` lists the commits)"
    except InputError:
        return None
    try:
        kind = run_git(root.path, ["cat-file", "-t", "--end-of-options", f"{revision}:{inside}"]).strip()
    except subprocess.CalledProcessError:
        kind = b""
    except InputError:
        return None
    if kind == b"blob":
        return None
    try:
        changed = run_git(root.path, ["log", "-3", "--format=%h %cs", "--end-of-options", "HEAD", "--", inside]
                          ).decode("utf-8", "replace").splitlines()
    except (subprocess.CalledProcessError, InputError):
        changed = []
    which = (f"the last commits that changed it: {', '.join(changed)}" if changed
             else "no commit of HEAD's history changed it")
    return (f"revision {revision} does not hold {inside} ({which}): `git show` would write no lock, and a file it "
            "left would be empty")


def lock_path(root: Root, ref: str) -> Path:
    """The lock ``ref``: a path to a file, a name in ``root/locks`` (``NAME`` or ``NAME.lock.toml``), or a path
    relative to the root (``locks/NAME.lock.toml``, as the README writes it, from any working folder).

    Raises :class:`InputError` listing the locks when ``ref`` names none."""
    candidate = Path(ref)
    if is_there(candidate):
        return candidate
    for name in (ref, f"{ref}.lock.toml"):
        path = root.locks / name
        if is_there(path):
            return path
    if not candidate.is_absolute() and candidate.parts[:1] == ("locks",) and is_there(root.path / candidate):
        return root.path / candidate
    if ref and is_folder(candidate):
        raise InputError(f"{ref}: is a folder, not a lock file")
    revision, colon, inside = ref.partition(":")
    if colon and revision and inside.endswith(".lock.toml") and "/" not in revision and not revision.startswith("-"):
        # `reproduce C:locks/X.lock.toml`, a lock as it was at commit C, was offered the registry's lock names
        # (walkthrough 28): say how to read it out of git instead.
        from passprice.files import shell_word

        old = f"old-{Path(inside).name}"
        absent = _not_at_revision(root, revision, inside)
        if absent is not None:
            raise InputError(f"lock {ref!r}: {absent}")
        raise InputError(
            f"lock {ref!r}: a lock at a git revision is not read from git: write it out first, `git show "
            f"{shell_word(ref)} > {shell_word(old)}`, then name that file (`passprice reproduce {shell_word(old)}`); "
            "to run the code that wrote it too, see the README's 'The price a lock recorded, from the code that "
            "wrote it'"
        )
    # The lock files: a folder or a FIFO named NAME.lock.toml is listed by check as what is wrong, not offered here.
    files = [n for n in root.names(root.locks, ".lock.toml") if _regular(root.locks / f"{n}.lock.toml")]
    known = ", ".join(files) or "none"
    from passprice.registry import did_you_mean, shipped_hint, spelled_apart

    slip = spelled_apart(ref.removesuffix(".lock.toml"), files)
    if slip is not None:  # R1-QWEN7B-H200-BEST for r1-qwen7b-h200-best: the suggestion alone (walkthrough 117)
        raise InputError(f"lock {ref!r}: no such file, and not in {root.folder_named(root.locks)}; did you mean "
                         f"{slip[0]}? ({slip[1]})")

    # `reproduce GEMMA3-270M-H100` listed the locks without the hint every other name lookup gives (round 33)
    hint = shipped_hint("lock", ref, root.locks, root.path) or did_you_mean(ref.removesuffix(".lock.toml"), files)
    if digest_ref().match(ref):  # a price cited by its lock's digest, as the README asks (walkthrough 38)
        owners = digest_owners(root, ref, files)
        if len(owners) == 1:  # the one lock here whose [lock] digest is (or begins with) it: that lock (walk117)
            return root.locks / f"{owners[0]}.lock.toml"
        raise InputError(digest_ref_problem(root, ref, files, known, owners))
    raise InputError(f"lock {ref!r}: no such file, and not in {root.folder_named(root.locks)}{hint} (locks: {known})")


@functools.cache
def digest_ref() -> re.Pattern[str]:
    """A lock named by its ``[lock] digest`` (or the first 8 or more hex digits of it), as a paper cites a price.
    Compiled when first used (issue 16, afresh101: a price names its serving, not a lock, and never asks)."""
    return re.compile(r"^(?:sha256:)?[0-9a-fA-F]{8,64}$")


def lock_file_document(path: Path) -> dict[str, Any] | None:
    """The parsed TOML of the lock file ``path`` read as a lock is read (a regular file under a lock's cap, refused
    unopened otherwise, :func:`passprice.schema.read_bytes`; parsed by :func:`passprice.schema.toml_loads`), not
    validated; ``None`` when it does not read (the caller passes it over: ``check`` or the lock's own read reports
    it). ``tomllib`` alone raised ``RecursionError`` (a lock file of ``x = [[[…]]]`` 10^5 deep) and ``ValueError``
    (an integer of 5,000 digits) as tracebacks from ``audit DIGEST``, and spent 6.6 s on a 40 KB dotted key of 20,000
    parts (attack round 58). Raises nothing."""
    import tomllib

    try:
        return schema.toml_loads(schema.read_bytes(path, "lock").decode("utf-8"))
    except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def digest_owners(root: Root, ref: str, files: Iterable[str]) -> list[str]:
    """The names, of ``files`` (lock names in ``root/locks``), of the locks whose ``[lock] digest`` is ``ref`` or
    begins with it (``ref``: :func:`digest_ref`, ``sha256:`` optional, any case). A lock file that does not read, or
    is no regular file (a FIFO named ``x.lock.toml``: refused unopened, :func:`passprice.schema.read_bytes`), is
    passed over (``check`` reports it). Raises nothing."""
    wanted = ref.lower().removeprefix("sha256:")
    found = []
    for name in files:
        document = lock_file_document(root.locks / f"{name}.lock.toml")
        table = document.get("lock") if document is not None else None
        digest = table.get("digest") if isinstance(table, Mapping) else None
        if isinstance(digest, str) and digest.lower().removeprefix("sha256:").startswith(wanted):
            found.append(name)
    return found


def digest_ref_problem(root: Root, ref: str, files: list[str], known: str, found: list[str] | None = None) -> str:
    """The one error line for a lock named by a digest that names no one lock here (``ref``: :func:`digest_ref`,
    matched against the ``[lock] digest`` of each of ``files``, the lock names in ``root/locks``, giving ``found``,
    :func:`digest_owners`, when not given; ``known``: them joined for the line): the locks whose digests begin with
    it (give more of it), copies of one lock, or that none here has it (and where the git history has it). A lock
    file that does not read is passed over (``check`` reports it). A digest that names exactly one lock here is that
    lock (:func:`lock_path`), as the README's ``audit DIGEST`` has it: it was refused, "name the lock by its name or
    file", while the README cited prices by it (walkthrough 117); the line for one is kept for a caller that asks."""
    found = digest_owners(root, ref, files) if found is None else found
    if len(found) == 1:
        return (f"lock {ref!r}: no such file; it is the [lock] digest of lock {found[0]} in {root.locks}: name the "
                f"lock by its name or file, {found[0]}")
    if found and len(ref.removeprefix("sha256:")) == 64:  # the whole digest: more cannot be given (round 58)
        return (f"lock {ref!r}: no such file; {len(found)} locks in {root.locks} have that [lock] digest "
                f"({', '.join(found)}: copies of one lock): name the lock by its name or file")
    if found:
        return (f"lock {ref!r}: no such file; the [lock] digests of {len(found)} locks in {root.locks} begin with "
                f"it ({', '.join(found)}): give more of the digest, or name the lock")
    said = (f"lock {ref!r}: no such file, and no lock in {root.locks} has that [lock] digest (locks: {known}; "
            "passprice audit NAME prints a lock's digest)")
    past, cut = digest_in_history(root, ref)
    if past is None:
        if cut is not None:  # git86: a search cut by its cap said only "may have been re-locked"
            return f"{said}: in its git history's locks/, {cut}"
        return said + ": the lock cited may have been re-locked since, or be of another registry"
    from passprice.files import shell_word

    commit, date, path = past
    old = f"{Path(path).name.removesuffix('.lock.toml')}-{commit}.lock.toml"
    return (f"{said}: re-locked since; commit {commit} ({date}) wrote it as {path}: write it out, `git show "
            f"{shell_word(f'{commit}:{path}')} > {shell_word(old)}`, then `passprice reproduce {shell_word(old)}`"
            + ("" if cut is None else f" ({cut})"))


def lock_commit(root: Root, lock_file: Path, notes: list[str] | None = None) -> tuple[Path, str, str] | None:
    """The commit of ``root``'s git history that holds the lock file ``lock_file`` as it is, byte for byte: the git
    work tree's top folder, the commit (40 hex digits) and its date (ISO 8601). A lock file committed at its path and
    unchanged since (neither ignored nor untracked, its path read literally, never as a pattern) is that path's last
    commit (``git log -1``); any other (written out of an older commit, ``git show C:LOCK > old.lock.toml``, put
    back at its own path, ``git checkout C -- LOCK``, or an ignored file at a path a commit once held) is found by
    its ``[lock] digest``, as ``reproduce DIGEST`` finds a re-locked one (:func:`digest_in_history`, the pickaxe of
    :func:`passprice.gitread.pickaxe`), and taken only where the blob that commit holds has the file's bytes. A new
    user's audit of an old lock written out of git said "no commit here holds this lock file" and showed today's
    source document beside the lock's figures, where reproduce found the commit (tests/test_fix188.py). ``None``
    when ``root`` is embedded or no git work tree, git fails, the file does not read or is over
    :data:`MAX_HISTORY_LOCK_BYTES`, or no commit holds it. Raises nothing.

    A lock file git's index marks ``assume-unchanged`` or ``skip-worktree`` (:func:`index_flag`) is never taken as
    committed at its path: ``git status`` does not look at such a file, so an edited lock read as clean and its
    path's last commit was taken for it; it is found by its digest and bytes as any other, and the reason is added
    to ``notes`` (one line; :func:`index_state`, whose one ``ls-files`` now says whether the file is as the index
    holds it, where ``status --porcelain --ignored`` did, and the path's last commit is taken only where the blob it
    wrote there is the index's). The path's lookup (``rev-parse``, ``ls-files``, ``log -1``) runs within
    :data:`HISTORY_SEARCH_S` in all, as the history's search does (it was bound only by git's 60 s); a git stopped
    there adds ``LOCK: its commit not searched: GIT'S LINE`` to ``notes`` (as ``reproduce`` says ``not searched:``)."""
    import hashlib
    import subprocess
    import time
    import tomllib

    from passprice.gitread import GitFailed, run_git

    if root.embedded:
        return None
    deadline = time.monotonic() + HISTORY_SEARCH_S

    def left() -> float:
        return max(deadline - time.monotonic(), 0.001)

    try:
        top = Path(run_git(root.path, ["rev-parse", "--show-toplevel"],
                           timeout=left()).decode("utf-8", "surrogateescape").strip())
        try:
            rel_lock: str | None = Path(lock_file).resolve().relative_to(top.resolve()).as_posix()
        except ValueError:
            rel_lock = None  # outside the work tree: only its digest can find it
        # the path literal: a lock file named 'l*.lock.toml' (or '[l]ocks/…') is no pattern matching every lock,
        # whose last commit touching any of them was taken for its own; and ignored files said (`!!`): status said
        # nothing of one, whose path's last commit (one deleting it) was taken (tests/test_attack53.py)
        literal = f":(literal){rel_lock}"
        staged, flag = index_state(top, literal, timeout=left()) if rel_lock is not None else (None, None)
        if flag is not None and notes is not None:
            notes.append(f"{lock_file}: {flag}: git status does not look at it, so it is not taken as committed at "
                         "its path (its commit is found by its [lock] digest and bytes)")
        if staged is not None:
            # the path's last commit, and the blob it wrote there (`-m`: a merge's too), which must be the index's:
            # a change staged and not committed is not the commit's file (status said `M ` of it)
            said = run_git(top, ["log", "-1", "-m", "--raw", "--no-abbrev", "--no-renames", "--format=%H%x00%cI",
                                 "--", literal], timeout=left()).decode("ascii", "replace")
            head, _, raw = said.strip().partition("\n")
            wrote = next((line.split()[3] for line in raw.splitlines() if line.startswith(":")
                          and len(line.split()) > 3), None)
            if "\0" in head and wrote == staged:
                commit, when = head.split("\0", 1)
                return top, commit, when
        with open(lock_file, "rb") as f:
            held = f.read(MAX_HISTORY_LOCK_BYTES + 1)
        if len(held) > MAX_HISTORY_LOCK_BYTES:
            return None
        table = tomllib.loads(held.decode("utf-8")).get("lock")
        digest = table.get("digest") if isinstance(table, Mapping) else None
        if not isinstance(digest, str) or not digest.startswith("sha256:"):
            return None
        found, _ = digest_in_history(root, digest)
        if found is None:
            return None
        short, _, path = found
        named = run_git(top, ["rev-parse", f"{short}^{{commit}}",
                              f"{short}:{path}"]).decode("ascii", "replace").split()
        if len(named) != 2:
            return None
        commit, blob = named
        # the blob's id as git computes it (sha1 of "blob SIZE\0" and the bytes): the file as committed, or not
        algorithm = hashlib.sha256 if len(blob) == 64 else hashlib.sha1
        if algorithm(b"blob %d\0" % len(held) + held).hexdigest() != blob:
            return None
        when = run_git(top, ["log", "-1", "--format=%cI", commit]).decode("ascii", "replace").strip()
        return top, commit, when
    except GitFailed as e:  # stopped past the bound, blocked or not started: said, as reproduce says it
        if notes is not None:
            # the bound as a whole, not what was left of it when this git started (9.987532933002512 s)
            said = re.sub(r"took longer than \S+ s", f"took longer than {HISTORY_SEARCH_S} s (locks.HISTORY_SEARCH_S, "
                          "the look-up at its path in all)", str(e))
            notes.append(f"{lock_file}: its commit not searched: {said}")
        return None
    except (InputError, OSError, ValueError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError,
            subprocess.CalledProcessError):
        return None


def index_state(top: Path, literal: str, timeout: float | None = None) -> tuple[str | None, str | None]:
    """The blob git's index holds for the file ``literal`` (a pathspec, ``:(literal)PATH``) of the work tree at
    ``top`` when the file is as the index holds it, and what the index marks it as that keeps ``git status`` from
    looking at it, from one ``git ls-files -v -s -c -m -d`` (its tags: ``H`` a tracked file, ``C`` changed, ``R``
    removed, ``M`` unmerged, ``S`` skip-worktree, lower case assume-unchanged; nothing for a file the index does not
    hold, ignored or not). The blob (40 or 64 hex digits) only when the one entry is tagged ``H`` at stage 0, so not
    for an ignored or untracked file, an edited or removed one, nor a flagged one; the mark as :func:`index_flag`
    words it, ``None`` for none. ``status --porcelain --ignored`` said nothing of a lock marked ``git update-index
    --assume-unchanged LOCK`` (or ``--skip-worktree``) and edited, which was taken as committed (issue 13). Raises what
    :func:`passprice.gitread.run_git` raises."""
    from passprice.gitread import run_git

    listed = run_git(top, ["ls-files", "-v", "-s", "-c", "-m", "-d", "-z", "--", literal],
                     timeout=timeout).decode("utf-8", "replace")
    entries = [entry.split("\t", 1)[0].split() for entry in listed.split("\0") if entry]
    flag = _flag_words(entries[0][0]) if entries and entries[0] else None
    if len(entries) == 1 and len(entries[0]) == 4 and entries[0][0] == "H" and entries[0][3] == "0":
        return entries[0][2], flag
    return None, flag


def index_flag(top: Path, literal: str, timeout: float | None = None) -> str | None:
    """What git's index marks the tracked file ``literal`` (a pathspec, ``:(literal)PATH``) as, in the work tree at
    ``top``, that keeps ``git status`` from looking at it: ``"git's index marks it assume-unchanged (git ls-files -v:
    h)"`` (a lower-case tag), ``"… skip-worktree (… S)"``, or both (``s``); ``None`` for neither, or an untracked file
    (:func:`index_state`). Raises what :func:`passprice.gitread.run_git` raises."""
    return index_state(top, literal, timeout)[1]


def _flag_words(tag: str) -> str | None:
    """The words for ``git ls-files -v``'s ``tag`` of a file marked assume-unchanged (lower case) or skip-worktree
    (``S``, ``s``); ``None`` for any other."""
    marks = [name for name, marked in (("assume-unchanged", tag.islower()), ("skip-worktree", tag in ("S", "s")))
             if marked]
    return f"git's index marks it {' and '.join(marks)} (git ls-files -v: {tag})" if marks else None


#: The most bytes a lock file of the git history may have to be read as :func:`digest_in_history`'s candidate (the
#: largest lock registered holds 170 KB): a 50 MB lock of an old commit, a few hundred KB in git's pack, took 8.9 s
#: and 358 MB to parse (attack70).
MAX_HISTORY_LOCK_BYTES = 4 << 20
#: The most bytes of lock files :func:`digest_in_history` reads in all (its candidates, in up to 20 commits).
MAX_HISTORY_READ_BYTES = 16 << 20
#: Seconds the git history's search for a digest (``git log -S``, :func:`digest_in_history`,
#: :func:`passprice.reproduce.model_commit`) may take; past it, nothing is found. The search reads every version of
#: every lock: 500 versions of a 1 MB lock, 1.3 MB packed, took 0.6 s, so a pack of a few MB could hold minutes of it
#: (attack70).
HISTORY_SEARCH_S = 10.0


def digest_in_history(root: Root, ref: str) -> tuple[tuple[str, str, str] | None, str | None]:
    """The lock file of ``root``'s git history whose ``[lock] digest`` is ``ref`` (:func:`digest_ref`) or begins
    with it: the oldest commit that wrote it (12 hex digits), its date (YYYY-MM-DD) and the file's path, from the
    commits ``git log -S 'digest = "sha256:HEX'`` finds changing the text under ``locks/`` (each file whose count
    of the text the commit changed, as ``--raw`` names it and its blob, read at that commit and its ``[lock]``
    table's digest compared: a fact's or checkpoint's digest may begin so too; the other files of the commit are
    not read, and a blob many files hold is read and parsed once).
    ``None`` when ``root`` is no git work tree, git fails, the whole search (every git it runs, every file parsed)
    runs past :data:`HISTORY_SEARCH_S`, or no lock file of its history has it (one over
    :data:`MAX_HISTORY_LOCK_BYTES`, or past :data:`MAX_HISTORY_READ_BYTES` read in all, is not read; the search
    reads each file as committed, no ``textconv`` driver of
    the repository's run on it). A price is cited by
    its lock's name and digest; once re-locked, ``reproduce DIGEST`` said only "may have been re-locked since",
    leaving ``git log -S`` to the reader (walkthrough 56). Returned with what the search did not read
    (:meth:`passprice.gitread.Pickaxe.cut`, ``None`` when it read all it needed: git86, a search cut by its cap said
    "not found" as if it had read all). Raises nothing."""
    import subprocess
    import time
    import tomllib

    from passprice.gitread import pickaxe, read_blobs, run_git

    wanted = ref.lower().removeprefix("sha256:")
    written = f'digest = "sha256:{wanted}'  # how a lock file writes a digest: hex inside another one is passed over
    if root.embedded:
        return None, None
    deadline = time.monotonic() + HISTORY_SEARCH_S

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise InputError("the history search took its time")
        return remaining

    try:
        # The files each commit's pickaxe found (their count of the text changed), not every lock of the commit:
        # a `git grep` of each of 20 commits read all of locks/ at it (200 paths of one 5 MB blob, a 327 KB pack,
        # ran 29.7 s past the 10 s of the search, attack71); each by its blob's id, not COMMIT:PATH, which git looks
        # up in the commit's tree (20,000 files of one commit: 10.4 s, a quadratic lookup). The pickaxe is
        # passprice's own, each blob read once and within caps (gitread.pickaxe): `git log -S` read every version
        # whole, a 256 MiB lock of zeros changed in 4 commits (448 KB of .git) 7.1 s (git79).
        search = pickaxe(root.path, written, "locks/", timeout=left())
        commits = [(commit, date, [(path, blob) for path, blob in files
                                   if blob.strip("0") and path.endswith(".lock.toml") and "\r" not in path])
                   for commit, date, files in search.found[:20]]
        blobs = list(dict.fromkeys(blob for _, _, files in commits for _, blob in files))
        if not blobs:
            return None, search.cut()
        # Each blob's size first, then the ones within the caps read, all in two git processes (a commit of 2,000
        # files quoting the digest outside their [lock] table took 8 s at two processes a file); each blob parsed
        # once, whatever the number of files holding it.
        checked = run_git(root.path, ["cat-file", "--batch-check=%(objecttype) %(objectsize)"],
                          "".join(f"{b}\n" for b in blobs).encode("ascii", "replace"), timeout=left())
        chosen: dict[str, int] = {}
        budget = MAX_HISTORY_READ_BYTES
        for blob, kind_size in zip(blobs, checked.decode("ascii", "replace").splitlines(), strict=False):
            kind, _, size = kind_size.partition(" ")
            if kind == "blob" and size.isdigit() and int(size) <= min(MAX_HISTORY_LOCK_BYTES, budget):
                chosen[blob] = int(size)
                budget -= int(size)
        texts = read_blobs(root.path, chosen, timeout=left())  # sized above: read by id (left54)
        holds: dict[str, bool] = {}
        for blob, text in texts.items():
            left()
            try:
                table = tomllib.loads(text.decode("utf-8", "replace")).get("lock")
            except (tomllib.TOMLDecodeError, ValueError, RecursionError):
                continue
            digest = table.get("digest") if isinstance(table, Mapping) else None
            holds[blob] = isinstance(digest, str) and digest.lower().removeprefix("sha256:").startswith(wanted)
        for commit, date, files in commits:
            for path, blob in files:
                if holds.get(blob):
                    return (commit[:12], date, path), search.cut(commit)
    except (InputError, OSError, subprocess.CalledProcessError):
        return None, None
    return None, search.cut()


def locked_serving(document: Mapping[str, Any], file_stem: str) -> str | None:
    """The registered serving a parsed lock document locks: ``lock.serving`` in the current format; in format 1,
    which recorded none, the serving of the lock's own name."""
    table = document.get("lock")
    if not isinstance(table, Mapping):
        return None
    if "format" in table:
        value = table.get("serving")
        return value if isinstance(value, str) else None
    name = table.get("name")
    return name if isinstance(name, str) else file_stem


def locks_of(root: Root, serving: str) -> tuple[Path, ...]:
    """The lock files in ``root/locks`` that lock the registered serving ``serving``, by name, sorted. Only each
    file's ``[lock]`` table is looked at (the files are read whole, validated and digest-checked by who uses them).

    A lock file whose ``[lock]`` table cannot be read — a file that is not a regular file or cannot be read, does not
    decode or parse, or has no ``[lock]`` table — may lock ``serving`` as well as any other: it is refused
    (:class:`InputError`, the first line reading it whole gives, exit 2) rather than left out. Left out, a damaged
    ``locks/SERVING.lock.toml`` (a bad merge, a FIFO, a stray byte) turned its lock off: ``price`` said "no lock of
    this serving in locks/" and priced a changed card with exit 0. A file whose table reads but that fails its
    schema is read whole, and refused, by whoever uses it (a pricing command, for the locks of its serving; ``check``).

    Which serving each file locks is kept in the cache (:mod:`passprice.cache`, kind ``locks+servings+stamps``) under
    the names and :func:`~passprice.cache.file_stamp` of every lock file of the folder (:func:`_lock_index`), so a
    price under an unchanged folder of locks reads none of them but its serving's: a file added, removed, renamed or
    edited (its change time moves; one changed lately is hashed) misses. Inside a snapshot
    (:mod:`passprice.snapshot`: one read of the registry) the folder is looked at once, whatever the number of
    servings asked about."""
    from passprice import snapshot

    index, unread = snapshot.made(("locks-of", str(root.locks)), lambda: _lock_index(root))
    if unread:
        raise _unread_lock(root, unread[0], serving)
    return _once(tuple((path, ident) for path, locked, ident in index if locked == serving))


def _once(entries: tuple[tuple[Path, tuple[int, int] | None], ...]) -> tuple[Path, ...]:
    """The lock files of ``entries`` (each a path of ``root/locks``, sorted, and the file's ``(st_dev, st_ino)``,
    links followed, from the stat :func:`_lock_index` takes anyway; ``None`` when it has none) with each file counted
    once: a symbolic link to a lock kept under its own name (``alias.lock.toml → r1-qwen7b-h200.lock.toml``) is that
    lock, left out; two hard links of one file (one inode, two names) are one lock, kept under the name after the
    lock it holds (its ``[lock]`` table's ``name``: the name ``check``'s duplicate warning keeps), else the first;
    links to one file elsewhere are one lock, kept under the first; ``entries``' order otherwise. Left55 (attack 73's
    leftover): a symbolic link made ``price``'s lock line name ``r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml)``
    twice; left58: a hard link named the lock twice too (only symbolic links were resolved). No path is resolved
    (scale 38: each lock path resolved on every price cost 52 × 6 calls): the identity is the one ``os.stat`` the
    folder's stamps take. A file with no identity (a dangling link, a loop) is kept as it is, for its reader to
    refuse."""
    idents = [ident for _, ident in entries if ident is not None]
    links = {path for path, _ in entries if path.is_symlink()}
    if not links and len(set(idents)) == len(idents):
        return tuple(path for path, _ in entries)
    kept: dict[tuple[int, int], Path] = {}
    for path, ident in entries:  # a file's own name first, then links to it
        if ident is not None and path not in links:
            kept.setdefault(ident, path)
    names = [ident for path, ident in entries if ident is not None and path not in links]
    for ident in {ident for ident in names if names.count(ident) > 1}:
        # Hard links (left182): the name the file is named after its lock by, as `check`'s duplicate warning keeps
        # it ("locks/hard.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml"); else the sorted first, as there.
        # Before, ``price`` said "under lock r1-qwen7b-h200 (locks/hard.lock.toml)" while `check` named that file
        # the copy to remove. The file is read (its [lock] table) only here, where two names hold one file.
        try:
            table = lock_table_of(schema.read_unkept(kept[ident], "lock"))
        except InputError:
            continue  # its reader refuses it, under whichever name
        name = table.get("name") if isinstance(table, Mapping) else None
        own = next((path for path, other in entries
                    if other == ident and path not in links and path.name == f"{name}.lock.toml"), None)
        if own is not None:
            kept[ident] = own
    for path, ident in entries:
        if ident is not None and path in links:
            kept.setdefault(ident, path)
    return tuple(path for path, ident in entries if ident is None or kept[ident] == path)


def locks_of_none(root: Root) -> tuple[Path, ...]:
    """The lock files in ``root/locks`` that lock no registered serving (made with options, ``lock SERVING --limit
    1024 -o …``, or from ``--checkpoint``/``--card``), by name, sorted: :func:`passprice.enforce.guard` reads these
    to find one whose pinned serving is the one a command prices. A file whose ``[lock]`` table does not read is
    left to :func:`locks_of` (a registered serving's price refuses it) and ``check``."""
    from passprice import snapshot

    index, _ = snapshot.made(("locks-of", str(root.locks)), lambda: _lock_index(root))
    return _once(tuple((path, ident) for path, locked, ident in index if locked is None))


#: How many locks ``fact set``'s floor warning names one by one; the rest are one "and K more locks" line, as the
#: other listings cut theirs (issue 13: 1,000 locks under one floor printed 1,004 lines).
MAX_FLOOR_WARNINGS = 5


def floors_below(root: Root, card: str, path: str, provenance: Provenance) -> tuple[tuple[str, Path, Provenance], ...]:
    """The locks of ``root`` a fact ``path`` of card ``card`` at ``provenance`` breaks: each lock whose recorded price
    rests on that fact (its ``[price.rests_on]``) and whose policy floors ``path`` above ``provenance``, as (the
    lock's name, its file, the floor), by file name. ``fact set`` warns of them when an edit weakens a fact
    (walkthrough 34: the H200's ``memory.bandwidth`` set ``estimated`` under a lock flooring it at ``published`` said
    nothing until the pre-commit hook's ``check`` refused the commit). A lock file that does not read, or a
    ``locks`` that is no folder, is left out (``check`` names it). Each lock's floors come from one cache entry keyed
    by the bytes of every lock file and the lock schema (:func:`_floor_index`), so a warm edit reads no lock whole.
    Raises nothing."""
    out: list[tuple[str, Path, Provenance]] = []
    for file, summary in _floor_index(root):
        if summary is None:
            continue
        name, locked_card, floors = summary
        floor = floors.get(path)
        if locked_card != card or floor is None:
            continue
        if provenance.weaker_than(Provenance(floor)):
            out.append((name, file, Provenance(floor)))
    return tuple(out)


def _floor_index(root: Root) -> list[tuple[Path, tuple[str, str, dict[str, str]] | None]]:
    """Each lock file of ``root/locks``, by name, with (its lock's name, the card it locks, the floor of each fact
    its price rests on) or ``None`` when it does not read. Files with the same bytes are read once (issue 13: 1,000
    copies of one lock took 3.0 s); the whole index is kept in the cache under the bytes of every lock file and of
    the lock schema, unless a lock file changed while it was read (its floors would be stored under bytes it no
    longer holds, and served when those bytes came back). Raises nothing."""
    from passprice import cache

    try:
        names = root.names(root.locks, ".lock.toml")
    except InputError:
        return []
    files: list[tuple[str, Path, bytes | None]] = []
    for name in names:
        file = root.locks / f"{name}.lock.toml"
        try:
            files.append((name, file, schema.read_bytes(file)))
        except (InputError, OSError):
            files.append((name, file, None))
    folder = root.schema
    try:
        schema_bytes = (folder / "lock.schema.json").read_bytes()
    except OSError:
        schema_bytes = b""
    listing = b"".join(
        b"%s\0%d\0%s" % (name.encode("utf-8", "surrogateescape"), -1 if data is None else len(data), data or b"")
        for name, _, data in files
    )
    entry_key = cache.key("lock floors", schema_bytes + str(folder).encode("utf-8", "surrogateescape"), listing)
    stored = cache.read(entry_key)
    index = stored.get("locks") if stored is not None else None
    if not isinstance(index, dict) or set(index) != {name for name, _, _ in files}:
        index = {}
        by_bytes: dict[bytes, list[Any] | None] = {}
        moved = False  # a lock file rewritten while it was read: its floors are not those of the bytes keyed
        for name, file, data in files:
            if data is None:
                index[name] = None
                continue
            if data not in by_bytes:
                by_bytes[data] = _floors_of(file, root.schema)
                try:
                    moved = moved or schema.read_bytes(file) != data
                except (InputError, OSError):
                    moved = True
            index[name] = by_bytes[data]
        if not moved:  # attack round 54: a lock edited between the two reads left its new floors under its old bytes
            cache.store(entry_key, {"locks": index})
    out: list[tuple[Path, tuple[str, str, dict[str, str]] | None]] = []
    for name, file, _ in files:
        entry = index.get(name)
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], dict):
            out.append((file, (str(entry[0]), str(entry[1]), {str(k): str(v) for k, v in entry[2].items()})))
        else:
            out.append((file, None))
    return out


def _floors_of(file: Path, schema_folder: Path | None) -> list[Any] | None:
    """[the lock's name, the card it locks, {each fact its price rests on: that fact's floor}] of the lock at
    ``file``, or ``None`` when it does not read (:func:`read_lock`). Raises nothing."""
    try:
        lock = read_lock(file, schema_folder)
    except (InputError, OSError):
        return None
    rests_on = lock.price.get("rests_on")
    if not isinstance(rests_on, Mapping):
        return [lock.info.name, _record_name(lock.card), {}]
    return [lock.info.name, _record_name(lock.card), {p: lock.policy.allowed(p).value for p in rests_on}]


def _unread_lock(root: Root, path: Path, serving: str) -> InputError:
    """The refusal of a price of ``serving`` while the lock file at ``path`` does not read (:func:`locks_of`): the
    first line reading it whole gives, and why it stops the price."""
    why = (f"a lock file that does not read may lock {serving}: fix it (passprice check says what is wrong) or "
           "remove it")
    try:
        read_lock(path, root.schema)
    except InputError as e:
        return InputError(f"{e.lines[0]} ({why})")
    return InputError(f"{path}: its [lock] table does not read ({why})")


def _lock_index(
    root: Root,
) -> tuple[tuple[tuple[Path, str | None, tuple[int, int] | None], ...], tuple[Path, ...]]:
    """Each lock file of ``root/locks`` whose ``[lock]`` table reads, by name, with the serving it locks (``None``:
    no registered serving) and the file's ``(st_dev, st_ino)`` (links followed; taken by the stamp's own stat, never
    cached: :func:`_once` counts a file of two names once), and the files whose ``[lock]`` table does not read
    (:func:`locks_of`).

    Kept in the cache (kind ``locks+servings+stamps``) under the folder's names and each file's
    :func:`passprice.cache.file_stamp` (its device, inode, size and times once its change time is a few seconds old,
    else the digest of its bytes: an edit of the same size within the same second still misses), so a price under an
    unchanged folder reads no lock file but its serving's (issue 13, session 32: 10,000 locks of other servings read
    whole on every price held 474 MB). On a miss each file is read, its ``[lock]`` table looked at and its bytes let
    go, one file at a time; the index is stored only when every stamp, taken again for the same moment, is the same
    after the reads (a file changed meanwhile would key its old status to its new serving)."""
    import time

    from passprice import cache
    from passprice.digests import blake2b

    def stamped(now: int) -> tuple[list[tuple[str, Path, str | None, tuple[int, int] | None]], bytes]:
        files = []
        h = blake2b()
        for name in root.names(root.locks, ".lock.toml"):
            path = root.locks / f"{name}.lock.toml"
            stamp, ident = cache.file_stamp_and_id(path, now)
            files.append((name, path, stamp, ident))
            # a name not UTF-8 (\xff.lock.toml) is its bytes: strict UTF-8 made every price a traceback
            h.update(b"%s\0%s\0" % (name.encode("utf-8", "surrogateescape"), (stamp or "-").encode("ascii")))
        return files, h.digest()

    now = time.time_ns()
    files, folder = stamped(now)
    entry_key = cache.key("locks+servings+stamps", b"", folder)
    index = cache.read(entry_key) if cache.enabled() else None
    servings = index.get("servings") if index is not None else None
    broken = index.get("unread") if index is not None else None
    if (not isinstance(servings, dict) or not isinstance(broken, list)
            or not _index_holds(servings, broken, [name for name, _, _, _ in files])):
        servings, broken = {}, []
        for name, path, stamp, _ in files:
            try:
                # read here, not through the snapshot's kept bytes: only the serving's own locks are read again
                ok, serving = (_locks_serving(name, schema.read_unkept(path, "lock")) if stamp is not None
                               else (False, None))
            except InputError:
                ok, serving = False, None
            if ok:
                servings[name] = serving
            else:
                broken.append(name)
        # taken again at the same time: an unchanged file stamps alike, a changed one's change time is now past it
        if cache.enabled() and stamped(now)[1] == folder:
            cache.store(entry_key, {"servings": servings, "unread": broken})
    unread = [path for name, path, _, _ in files if name not in servings]
    return (
        tuple((path, servings.get(name), ident) for name, path, _, ident in files if name in servings),
        tuple(sorted(unread)),
    )


def _index_holds(servings: object, broken: object, names: list[str]) -> bool:
    """Whether a kept index of the locks folder (``servings``: each lock that reads, by name, to the serving it locks
    or ``None``; ``broken``: the names of those that do not) is of the shape it is written in and names each of
    ``names`` once: an entry forged with its checksum agreeing, a lock dropped from ``servings`` or named in both,
    made ``price`` refuse a lock that reads ("its [lock] table does not read", exit 2; tests/test_forge110.py).
    Raises nothing."""
    if not isinstance(servings, dict) or not isinstance(broken, list):
        return False
    if not all(type(k) is str and (v is None or type(v) is str) for k, v in servings.items()):
        return False
    if not all(type(n) is str for n in broken) or len(servings) + len(broken) != len(names):
        return False
    return set(servings).union(broken) == set(names)


def _locks_serving(name: str, data: bytes) -> tuple[bool, str | None]:
    """Whether the ``[lock]`` table of the lock file ``name`` holding ``data`` reads (it decodes, parses and is a
    table: :func:`lock_table_of`), and the registered serving the file locks (:func:`locked_serving`)."""
    table = lock_table_of(data)
    if not isinstance(table, Mapping):
        return False, None
    return True, locked_serving({"lock": table}, name)


def lock_table_of(data: bytes) -> object:
    """The ``[lock]`` value of the lock file holding ``data`` (a table, as a lock's is, or whatever else the file
    gives the key), ``None`` where it has none or does not decode or parse. The ``[lock]`` table alone, as passprice
    writes it (a table of plain keys: :func:`lock_table_in`), is parsed where it is found and parses; a file laid out
    otherwise is parsed whole (a 169 KB lock costs ``tomllib`` about 30 ms whole, its ``[lock]`` table well under one:
    issue 13, scale36; left92). A ``\\r\\n`` line break is read as ``\\n``, so the pattern sees ``\\n`` only; a
    lone ``\\r`` (no TOML line break) is left as it is, and a file starting with a byte-order mark is ``None``:
    attack105, both were read alone (universal newlines, the mark before the table) though ``tomllib`` refuses the
    file, so ``lock --name`` said such a file "pins other facts" where it does not read. Raises nothing."""
    import tomllib

    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):  # tomllib refuses it (and read_lock names it): no table read alone
            return None
        if "\r" in text:  # a CR LF line break is TOML's; a lone CR is not, and stays to be refused (attack105)
            text = text.replace("\r\n", "\n")
        section = lock_table_in(text)
        if section is not None and _whole_table(text, section):
            with contextlib.suppress(tomllib.TOMLDecodeError):
                document = schema.toml_loads(section.group(0))
                if "lock" in document:
                    return document["lock"]
        return schema.toml_loads(text).get("lock")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None


@functools.cache
def _table_end() -> re.Pattern[str]:
    """What may follow a ``[lock]`` table read alone (:func:`_whole_table`): blank or comment lines, then a table's
    header or the end of the file. Compiled when first used (afresh101: a warm price reads no lock's text)."""
    return re.compile(r"(?:[ \t]*(?:#.*)?\n)*(?:[ \t]*\[|[ \t]*(?:#.*)?\Z)")


def _whole_table(text: str, section: re.Match[str]) -> bool:
    """Whether the ``[lock]`` table ``section`` (:func:`lock_table_in`) found in a lock's ``text`` is the file's
    whole ``[lock]`` table as ``tomllib`` reads a file that parses: no multi-line string opens before it (its
    ``[lock]`` line could be a string's: ``x = \"\"\"`` then ``[lock]``, ``serving = "other"``), and after its
    keys come only blank or comment lines, then a header or the end (a blank line, then ``serving = …``, is still
    the table's: read alone, the lock locked no serving). attack97: either read otherwise than ``tomllib``; either
    is now read whole. Raises nothing."""
    start = section.start()
    return (text.find('"""', 0, start) == -1 and text.find("'''", 0, start) == -1
            and _table_end().match(text, section.end()) is not None)


def lock_table_in(text: str) -> re.Match[str] | None:
    """``_lock_table().search(text)``, the first ``[lock]`` table of plain keys in ``text``, found by looking for
    each ``[lock]`` line with ``str.find`` and matching the pattern only there: the search tried the pattern at
    every line of the file, about 2 ms for the 169 KB measured lock, so a cold index of 5,000 lock files spent
    seconds in it (issue 13, scale36). The same match, or ``None``. Raises nothing."""
    pattern = _lock_table()
    at = 0 if text.startswith("[lock]\n") else text.find("\n[lock]\n")
    while at != -1:
        start = at if at == 0 and text.startswith("[lock]\n") else at + 1
        found = pattern.match(text, start)
        if found is not None:
            return found
        at = text.find("\n[lock]\n", start)
    return None


#: The ``[lock]`` table of a lock file as :func:`lock_text` writes it: its header line and its plain keys.
@functools.cache
def _lock_table() -> re.Pattern[str]:
    """A lock file's ``[lock]`` table (compiled on first use)."""
    return re.compile(r"(?m)^\[lock\]\n(?:[A-Za-z_]+ = .*\n)+")


def pinned_serving(lock: Lock) -> Serving:
    """The seed's serving the lock priced, its draft and routing resting on the pinned figures."""
    tokens = lock.spec.draft.tokens if lock.spec.draft is not None else 0
    return to_serving(lock.spec, lock.pinned_acceptance()[:tokens], lock.pinned_routing())


def judge_price(lock: Lock, cost: ServingCost) -> Verdict:
    """Judge a price made with today's facts against ``lock``'s policy (``passprice price --lock``)."""
    return judge(lock.name, lock.policy, cost.rests_on)


# --- what moved (reproduce, check and price --lock say a recorded field that differs) ---------------------------


@attrs.frozen
class Moved:
    """A recorded field of a price that reproduces differently: its ``field``, the ``recorded`` and ``now`` values."""

    field: str
    recorded: Any
    now: Any

    def change(self) -> str:
        """The relative change of a numeric field (``+1.25 %``), else ``changed``."""
        if isinstance(self.recorded, int | float) and isinstance(self.now, int | float) and self.recorded:
            return f"{100.0 * (self.now - self.recorded) / self.recorded:+.4g} %"
        return "changed"

    def line(self) -> str:
        """``FIELD: RECORDED → NOW (CHANGE)``, each value as Python writes it (:func:`moved_value`: at most
        :data:`MOVED_MOST` characters a side), as ``check`` lists the fields of a lock that does not reproduce. A
        stack lock's ``expected`` price, a table on both sides, is said by the first :data:`SUBFIELDS_SHOWN` of its own
        fields that differ, each so, and how many more: ``expected.vector_macs: 1109458944.0 → 1117847552.0
        (+0.7561 %); …`` (walkthrough 37: a passprice upgrade read ``expected: {'array_macs': 0.0, … (1,402
        characters) → {'card': …}… (1,402 characters) (changed)``, both sides cut before any figure that moved)."""
        if self.field == "expected" and isinstance(self.recorded, Mapping) and isinstance(self.now, Mapping):
            keys = [k for k in dict.fromkeys([*self.recorded, *self.now])
                    if self.recorded.get(k) != self.now.get(k)]
            # a field name passprice writes; a key of a lock edited by hand past that is shown as before (attack 53)
            if keys and all(isinstance(k, str) and len(k) <= SUBFIELD_NAME_MOST for k in keys):
                parts = [Moved(f"{self.field}.{k}", self.recorded.get(k), self.now.get(k)).line()
                         for k in keys[:SUBFIELDS_SHOWN]]
                more = len(keys) - SUBFIELDS_SHOWN
                return "; ".join(parts) + (f"; and {more} more field{'s' if more > 1 else ''} of {self.field}"
                                           if more > 0 else "")
        return f"{self.field}: {moved_value(self.recorded)} → {moved_value(self.now)} ({self.change()})"


#: The most fields of a moved table :meth:`Moved.line` names.
SUBFIELDS_SHOWN = 4
#: The longest field name :meth:`Moved.line` names a moved table's field by.
SUBFIELD_NAME_MOST = 40


#: The most characters :func:`moved_value` shows of one side of a moved field.
MOVED_MOST = 120


def moved_value(value: Any) -> str:
    """``repr(value)``, cut to its first 100 characters and a count past :data:`MOVED_MOST`: a lock re-digested with
    a ``price.rests_on`` key of 5,000 characters made ``check`` print a 5,482-character line (the whole table, both
    sides), and one of 200,000 (the lock file cap is 256 KiB) would print as much (attack round 53). Raises
    nothing."""
    text = repr(value)
    return text if len(text) <= MOVED_MOST else f"{text[:100]}… ({len(text):,} characters)"
