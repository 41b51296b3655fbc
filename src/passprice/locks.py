"""A published price is pinned to the facts it rests on: a lock records them with digests, states the weakest
provenance each may have, and keeps the price, so it can be reproduced bit for bit whatever the facts say later,
and so no one publishes a price on weaker facts than agreed.

A lock file (``locks/NAME.lock.toml``, ``schema/lock.schema.json``) holds what was priced (the serving, every
parameter explicit; the checkpoint's name and header sha256; the card), the policy (a floor and per-path floors), the
pinned facts (every card fact and drafting figure, each with a digest) and the price (every field of the result, the
tool version and the pricing-model version). It is written deterministically (sorted keys, shortest round-trip
floats, ``\\n`` newlines, no timestamp) and atomically, and read back only after its schema and every digest check.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import PRICING_MODEL_VERSION, __version__, schema
from passprice.cards import Card, card_from_facts, is_card_path
from passprice.errors import InputError, SchemaError
from passprice.facts import Fact, Provenance, weakest
from passprice.files import write_atomically
from passprice.gguf_header import GGUFHeader
from passprice.registry import Root
from passprice.report import cost_json
from passprice.routing import ROUTING_PATHS, Routing
from passprice.serving import Serving, ServingCost, ServingRefusal, best_serving, price_serving
from passprice.servings import Resolved, ServingSpec, spec_from_document, spec_to_document, to_serving

if TYPE_CHECKING:
    from passprice.stacks import Stack

_DRAFT_PATH = re.compile(r"draft\.acceptance\.[1-9][0-9]*")


def is_fact_path(path: str) -> bool:
    """Whether ``path`` names a fact a price can rest on: a card path (``streams.rewrite``), a host-link path
    (``host.read``), a float-matrix rate (``tensor.f16``), a drafting figure (``draft.acceptance.1``), a routing
    figure (``routing.hot_share``) or a serving stack's fact (``stack.share.read``, issue 14), the names a lock's
    policy and pins use."""
    from passprice.stacks import is_stack_path

    return (
        is_card_path(path)
        or _DRAFT_PATH.fullmatch(path) is not None
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
    if stack is None:
        cost = evaluate(kind, header, card, serving)
        return cost_json(cost), cost.rests_on
    from passprice.report import expected_json
    from passprice.stacks import price_expected

    expected = price_expected(header, card, serving, stack, kind)
    return expected_json(expected), expected.expected.rests_on


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


def judge(name: str, policy: Policy, rests_on: tuple[tuple[str, Fact], ...]) -> Verdict:
    """Judge the facts a price rests on (path, fact) against ``policy``: every fact weaker than the floor its path
    allows is an offence."""
    offences = tuple(
        Offence(path, f.provenance, policy.allowed(path))
        for path, f in rests_on
        if f.provenance.weaker_than(policy.allowed(path))
    )
    provenance = weakest(f.provenance for _, f in rests_on)
    return Verdict(name, offences, provenance, tuple(p for p, f in rests_on if f.provenance is provenance))


@attrs.frozen
class Lock:
    """A lock file's content. ``facts`` are the pinned facts by path (every card fact, and ``draft.acceptance.i``);
    ``price`` is the recorded ``--json`` object of the price; ``digest`` the lock's own digest."""

    name: str
    kind: str
    tool_version: str
    pricing_model: str
    policy: Policy
    spec: ServingSpec
    checkpoint: str
    checkpoint_sha256: str
    card: str
    card_title: str
    card_hypothetical: bool
    facts: Mapping[str, Fact]
    price: Mapping[str, Any]
    digest: str = ""
    source: str = attrs.field(default="", eq=False)
    stack: Mapping[str, str] | None = None

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

        return stack_from_lock_facts(self.stack["name"], self.stack.get("title", ""), self.stack, self.facts)

    def pinned_card(self) -> Card:
        """The card as it was when the lock was written, from the pinned facts."""
        card_facts = {p: f for p, f in self.facts.items() if is_card_path(p)}
        return card_from_facts(self.card, self.card_title, card_facts, self.card_hypothetical)

    def pinned_routing(self) -> Routing | None:
        """The routing the lock priced with, from the pinned ``routing.*`` facts (``None`` when it names none)."""
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


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    return value


def lock_document(lock: Lock) -> dict[str, Any]:
    """The lock as a TOML-ready document with sorted keys and its digest computed (over everything but
    ``lock.digest``)."""
    facts = {path: {**f.to_entry(), "digest": f.digest()} for path, f in lock.facts.items()}
    policy: dict[str, Any] = {"floor": lock.policy.floor.value}
    if lock.policy.paths:
        policy["paths"] = {p: v.value for p, v in lock.policy.paths.items()}
    card: dict[str, Any] = {"name": lock.card, "title": lock.card_title}
    if lock.card_hypothetical:
        card["hypothetical"] = True
    body = {
        "lock": {
            "name": lock.name,
            "kind": lock.kind,
            "tool_version": lock.tool_version,
            "pricing_model": lock.pricing_model,
        },
        "policy": policy,
        "serving": spec_to_document(lock.spec),
        "checkpoint": {"name": lock.checkpoint, "sha256": lock.checkpoint_sha256},
        "card": card,
        "facts": facts,
        "price": dict(lock.price),
    }
    if lock.stack is not None:
        body["stack"] = dict(lock.stack)
    body = _sorted(body)
    body["lock"]["digest"] = "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
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


def make_lock(
    name: str, kind: str, resolved: Resolved, policy: Policy | None = None, stack: Stack | None = None
) -> Lock:
    """Price ``resolved`` as a lock of ``kind`` would and pin it: every card fact and drafting figure (and, with a
    serving ``stack``, its facts and routes), the price, and ``policy`` (default: a floor at the price's own weakest
    provenance, so the lock holds today and refuses any fact weaker than what the price rests on now).

    Raises :class:`~passprice.serving.ServingRefusal` when the serving cannot be priced."""
    price, rests_on = priced(kind, resolved.header, resolved.card, resolved.serving, stack)
    if policy is None:
        policy = Policy(weakest(f.provenance for _, f in rests_on))
    # A card's float-matrix rates (tensor.*, issue 14) are pinned only where the price rests on them, so a lock of a
    # price that never rides them keeps the bytes it had before cards gained them.
    used = {p for p, _ in rests_on}
    facts = {p: f for p, f in resolved.facts().items() if not p.startswith("tensor.") or p in used}
    if stack is not None:
        facts.update(
            {p: f for p, f in stack.lock_facts().items() if not p.startswith("stack.cards.")}
            | {p: f for p, f in stack.lock_facts().items() if p.startswith(f"stack.cards.{resolved.card.name}.")}
        )
    return Lock(
        name=name,
        kind=kind,
        tool_version=__version__,
        pricing_model=PRICING_MODEL_VERSION,
        policy=policy,
        spec=resolved.spec,
        checkpoint=resolved.spec.checkpoint,
        checkpoint_sha256=resolved.header.sha256,
        card=resolved.card.name,
        card_title=resolved.card.title,
        card_hypothetical=resolved.card.hypothetical,
        facts=facts,
        price=price,
        stack={"name": stack.name, "title": stack.title, **stack.routes()} if stack is not None else None,
    )


def write_lock(path: Path, lock: Lock, force: bool = False) -> None:
    """Write ``lock`` to ``path`` atomically; refuses to overwrite an existing file unless ``force``."""
    write_atomically(path, lock_text(lock), force)


def lock_from_document(document: Mapping[str, Any], source: str) -> Lock:
    """The lock a schema-valid ``document`` describes, after checking every pinned fact's digest and the lock's own.

    Raises :class:`InputError` naming the path of a fact whose digest fails (edited by hand), or the lock digest."""
    facts: dict[str, Fact] = {}
    for path, entry in document["facts"].items():
        where = f"{source}: facts.{schema.key_part(path)}"
        fact = Fact.from_entry(entry, where)
        if fact.digest() != entry["digest"]:
            raise InputError(
                f"{where}: digest mismatch: the pinned fact {path} was edited by hand "
                f"(its content hashes to {fact.digest()}, the lock says {entry['digest']}); re-lock it instead"
            )
        facts[path] = fact
    body = _sorted({k: v for k, v in document.items()})
    stated = body["lock"].pop("digest")
    actual = "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
    if stated != actual:
        raise InputError(
            f"{source}: lock.digest: the lock's contents do not match its digest (edited by hand?): they hash to "
            f"{actual}, the lock says {stated}; re-lock it"
        )
    policy = document["policy"]
    return Lock(
        name=document["lock"]["name"],
        kind=document["lock"]["kind"],
        tool_version=document["lock"]["tool_version"],
        pricing_model=document["lock"]["pricing_model"],
        policy=Policy(
            Provenance(policy["floor"]),
            {p: Provenance(v) for p, v in policy.get("paths", {}).items()},
        ),
        spec=spec_from_document(document["serving"], f"{source}: serving"),
        checkpoint=document["checkpoint"]["name"],
        checkpoint_sha256=document["checkpoint"]["sha256"],
        card=document["card"]["name"],
        card_title=document["card"]["title"],
        card_hypothetical=bool(document["card"].get("hypothetical", False)),
        facts=facts,
        price=document["price"],
        digest=stated,
        source=source,
        stack=document.get("stack"),
    )


#: The tables every lock has (``schema/lock.schema.json``, top level).
_TABLES = ("card", "checkpoint", "facts", "lock", "policy", "price", "serving")


def read_lock(path: Path, schema_folder: Path | None = None) -> Lock:
    """Read, validate and digest-check the lock at ``path``.

    Raises :class:`InputError` (unreadable, not TOML, incomplete, a digest that fails: one line each) or
    :class:`~passprice.errors.SchemaError` (every schema problem)."""
    try:
        document = schema.load(path, "lock", schema_folder)
    except SchemaError as e:
        # A lock cut short (a truncated file, or a partial write by something other than passprice) lacks its last
        # tables and keys and nothing else is wrong with it: one line says so instead of a cascade of problems.
        suffix = ": missing (required)"
        missing = [p[: -len(suffix)] for p in e.problems if p.endswith(suffix)]
        if len(missing) < 2 or len(missing) != len(e.problems):
            raise
        listed = [f"[{m}]" for m in missing if m in _TABLES] + [m for m in missing if m not in _TABLES]
        shown = ", ".join(listed[:6]) + (f" and {len(listed) - 6} more" if len(listed) > 6 else "")
        raise InputError(f"{path}: incomplete lock (truncated?): missing {shown}; re-lock it") from None
    return lock_from_document(document, str(path))


def lock_path(root: Root, ref: str) -> Path:
    """The lock ``ref``: a path to a file, or a name in ``root/locks`` (``NAME`` or ``NAME.lock.toml``).

    Raises :class:`InputError` listing the locks when ``ref`` names none."""
    candidate = Path(ref)
    if candidate.is_file():
        return candidate
    for name in (ref, f"{ref}.lock.toml"):
        path = root.locks / name
        if path.is_file():
            return path
    if ref and candidate.is_dir():
        raise InputError(f"{ref}: is a folder, not a lock file")
    known = ", ".join(root.names(root.locks, ".lock.toml")) or "none"
    raise InputError(f"lock {ref!r}: no such file, and not in {root.locks} (locks: {known})")


class HeaderMismatch(Exception):
    """The checkpoint's header today is not the one the lock pinned (its sha256 differs)."""

    name = "HeaderMismatch"

    def __init__(self, checkpoint: str, pinned: str, found: str) -> None:
        self.checkpoint = checkpoint
        self.pinned = pinned
        self.found = found
        super().__init__(
            f"checkpoint {checkpoint!r} has header sha256 {found}, but the lock pinned {pinned}: the lock was made "
            "for another checkpoint file; import the pinned header or re-lock"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "HeaderMismatch", ...}``."""
        return {
            "refusal": self.name,
            "checkpoint": self.checkpoint,
            "pinned": self.pinned,
            "found": self.found,
            "message": str(self),
        }


def pinned_header(root: Root, lock: Lock) -> GGUFHeader:
    """The checkpoint the lock names, read from ``root`` and checked against the pinned sha256.

    Raises :class:`HeaderMismatch` when the header differs, :class:`InputError` when it cannot be found."""
    from passprice.checkpoints import load_checkpoint

    header = load_checkpoint(root, lock.checkpoint)
    if header.sha256 != lock.checkpoint_sha256:
        raise HeaderMismatch(lock.checkpoint, lock.checkpoint_sha256, header.sha256)
    return header


def pinned_serving(lock: Lock) -> Serving:
    """The seed's serving the lock priced, its draft and routing resting on the pinned figures."""
    tokens = lock.spec.draft.tokens if lock.spec.draft is not None else 0
    return to_serving(lock.spec, lock.pinned_acceptance()[:tokens], lock.pinned_routing())


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


@attrs.frozen
class Reproduction:
    """A lock re-priced from its own pinned facts: ``price`` (the ``--json`` object now, or a refusal's), whether it
    ``equals`` the recorded one field for field, the fields that ``moved``, whether the pricing model differs, and
    the ``pricing_model`` version it was re-priced with (the lock records the one it was priced with)."""

    lock: Lock
    price: Mapping[str, Any]
    moved: tuple[Moved, ...]
    model_changed: bool
    pricing_model: str = PRICING_MODEL_VERSION

    @property
    def equals(self) -> bool:
        """True when every recorded field is reproduced exactly."""
        return not self.moved


def reproduce(root: Root, lock: Lock) -> Reproduction:
    """Re-price ``lock`` from its pinned facts and embedded serving (the checkpoint must match the pinned sha256),
    whatever the facts say today, and compare with the recorded price field by field.

    Raises :class:`HeaderMismatch` or :class:`InputError` (checkpoint missing)."""
    header = pinned_header(root, lock)
    try:
        now, _ = priced(lock.kind, header, lock.pinned_card(), pinned_serving(lock), lock.pinned_stack())
    except ServingRefusal as e:
        now = e.to_json()
    keys = list(dict.fromkeys([*lock.price, *now]))
    moved = tuple(
        Moved(k, lock.price.get(k), now.get(k)) for k in keys if lock.price.get(k) != now.get(k)
    )
    return Reproduction(lock, now, moved, lock.pricing_model != PRICING_MODEL_VERSION, PRICING_MODEL_VERSION)


@attrs.frozen
class Drift:
    """A pinned fact that differs from today's: ``path``, the ``pinned`` fact and today's (``None`` when gone)."""

    path: str
    pinned: Fact
    today: Fact | None

    def describe(self) -> str:
        """``streams.rewrite: 0.8333 (measured) → 0.8 (estimated)``, or ``… → gone``: values as written, with their
        unit (a share without its unit ``1``)."""
        old = f"{self.pinned.describe()} ({self.pinned.provenance.value})"
        if self.today is None:
            return f"{self.path}: {old} → gone"
        new = f"{self.today.describe()} ({self.today.provenance.value})"
        if old == new:
            new += " (citation or note changed)"
        return f"{self.path}: {old} → {new}"


def drift(lock: Lock, today: Mapping[str, Fact]) -> tuple[Drift, ...]:
    """Every pinned fact whose digest differs from today's fact at the same path (or which is gone today)."""
    out = []
    for path, pinned in lock.facts.items():
        now = today.get(path)
        if now is None or now.digest() != pinned.digest():
            out.append(Drift(path, pinned, now))
    return tuple(out)


def judge_price(lock: Lock, cost: ServingCost) -> Verdict:
    """Judge a price made with today's facts against ``lock``'s policy (``passprice price --lock``)."""
    return judge(lock.name, lock.policy, cost.rests_on)
