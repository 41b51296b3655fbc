"""A serving stack reaches only a share of each rate a card allows and pays fixed costs the card does not: its
expected price is the card's limit re-priced at those shares, plus those costs, its terms overlapping or adding as its
kernels do.

A **stack** (``facts/stacks/NAME.toml``, ``schema/stack.schema.json``) is a serving runtime of a build range —
llama.cpp's CUDA backend, vLLM, TensorRT-LLM … — described, like a card, by cited facts, each with a value, a unit, a
provenance and a citation (DESIGN.md, Stacks):

- ``overhead.pass``, ``overhead.layer`` (seconds): what every pass pays, and each block it runs through (kernel
  launches and synchronisation), whatever the bytes and the work;
- ``share.read``, ``share.rewrite``, ``share.append``, ``share.host`` (shares of the card's ``memory.bandwidth ×
  streams.*`` and host link): the bytes its kernels move; ``share.array`` (of the rate its integer-matrix kernels run
  at), ``share.float`` (its float-matrix kernels), ``share.vector`` (everything else on the vector units: norms,
  attention, recurrence), ``share.scale`` (block-scale lanes);
- ``terms.serial`` (a share in [0, 1]): how much of the non-binding terms adds to the binding one (0: they overlap,
  the card's limit; 1: they run one after another);
- ``memory.reserved`` (bytes): card memory the runtime keeps for itself (its context, workspaces, graphs), which a
  serving cannot fill.

Where its kernels run is the stack's, not a fact: ``integer_matrices = "array" | "vector"`` (llama.cpp's quantised
mat-vec kernels run on the CUDA cores, not the tensor cores) and ``float_matrices = "tensor" | "vector"``. A fact may
differ by card (``[cards.NAME.share.read]``); the card's own value is used where one is given.

The expected pass goes through the one cost formula (:mod:`passprice.cost`) at a :class:`~passprice.cost.Pricing`
built here (:func:`expected_pricing`), so it is priced by the same arithmetic as the limit, and the limit is untouched.
A stack that lacks a fact a serving needs refuses it by name (:class:`StackLacks`), never guesses.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.cards import Card
from passprice.cost import Pricing
from passprice.errors import InputError
from passprice.facts import Fact, Provenance, dimension, weakest
from passprice.files import is_there
from passprice.gguf_header import GGUFHeader
from passprice.registry import Root, not_found
from passprice.serving import (
    PassShape,
    Serving,
    ServingCost,
    ServingRefusal,
    pass_shape,
)

#: Every path a stack fact may have, with its dimension.
STACK_PATHS: dict[str, str] = {
    "overhead.pass": "seconds",
    "overhead.layer": "seconds",
    "share.read": "share",
    "share.rewrite": "share",
    "share.append": "share",
    "share.host": "share",
    "share.array": "share",
    "share.float": "share",
    "share.vector": "share",
    "share.scale": "share",
    "terms.serial": "share",
    "memory.reserved": "bytes",
}

#: Where a stack's matrix kernels may run.
INTEGER_ROUTES = ("array", "vector")
FLOAT_ROUTES = ("tensor", "vector")

#: The prefix of a stack fact's path in a lock (``stack.share.read``, ``stack.cards.rtx_4090.share.read``).
LOCK_PREFIX = "stack."


class StackLacks(ServingRefusal):
    """The stack has no value for a fact this serving needs (refused, not guessed)."""

    name = "StackLacks"

    def __init__(self, stack: str, path: str, why: str) -> None:
        self.stack = stack
        self.path = path
        self.why = why
        super().__init__(
            f"stack {stack!r} has no {path} fact, and this serving needs one ({why}): add it to "
            f"facts/stacks/{stack}.toml (a measured, derived or estimated value with its citation), or run "
            f"`passprice calibrate --stack {stack}`"
        )

    def fields(self) -> dict[str, Any]:
        return {"stack": self.stack, "path": self.path, "why": self.why}


@attrs.frozen
class Stack:
    """A serving stack: ``name`` (its file's stem), ``title``, where its matrix kernels run (``integer_matrices``:
    ``array`` or ``vector``; ``float_matrices``: ``tensor`` or ``vector``), its ``facts`` by path (the module's
    paths), and per-card facts (``cards``: card name → path → fact) that replace the stack's own for that card."""

    name: str
    title: str
    integer_matrices: str = attrs.field(validator=attrs.validators.in_(INTEGER_ROUTES))
    float_matrices: str = attrs.field(validator=attrs.validators.in_(FLOAT_ROUTES))
    facts: Mapping[str, Fact] = attrs.field(factory=dict)
    cards: Mapping[str, Mapping[str, Fact]] = attrs.field(factory=dict)
    note: str | None = None

    def fact(self, path: str, card: str) -> tuple[str, Fact] | None:
        """The fact at ``path`` for ``card`` and its lock path: the card's own (``stack.cards.CARD.PATH``) where
        the stack gives one, else the stack's (``stack.PATH``); ``None`` when it has neither."""
        own = self.cards.get(card, {}).get(path)
        if own is not None:
            return f"{LOCK_PREFIX}cards.{card}.{path}", own
        found = self.facts.get(path)
        return (f"{LOCK_PREFIX}{path}", found) if found is not None else None

    def lock_facts(self) -> dict[str, Fact]:
        """Every fact of the stack by its lock path (``stack.share.read`` …, then each card's)."""
        out = {f"{LOCK_PREFIX}{p}": f for p, f in self.facts.items()}
        for card, facts in self.cards.items():
            out.update({f"{LOCK_PREFIX}cards.{card}.{p}": f for p, f in facts.items()})
        return out

    def routes(self) -> dict[str, str]:
        """Where its matrix kernels run: ``{"integer_matrices": …, "float_matrices": …}`` (a lock records them)."""
        return {"integer_matrices": self.integer_matrices, "float_matrices": self.float_matrices}


def is_stack_path(path: str) -> bool:
    """Whether ``path`` names a stack fact in a lock: ``stack.PATH`` or ``stack.cards.CARD.PATH``."""
    if not path.startswith(LOCK_PREFIX):
        return False
    rest = path[len(LOCK_PREFIX) :]
    if rest.startswith("cards."):
        parts = rest.split(".", 2)
        return len(parts) == 3 and parts[2] in STACK_PATHS
    return rest in STACK_PATHS


def stack_from_lock_facts(
    name: str, title: str, routes: Mapping[str, str], facts: Mapping[str, Fact]
) -> Stack:
    """The stack a lock pinned: its ``routes`` and its ``stack.*`` facts (other paths ignored)."""
    own: dict[str, Fact] = {}
    cards: dict[str, dict[str, Fact]] = {}
    for path, fact in facts.items():
        if not is_stack_path(path):
            continue
        rest = path[len(LOCK_PREFIX) :]
        if rest.startswith("cards."):
            _, card, sub = rest.split(".", 2)
            cards.setdefault(card, {})[sub] = fact
        else:
            own[rest] = fact
    return Stack(name, title, routes["integer_matrices"], routes["float_matrices"], own, cards)


def _facts_at(node: Mapping[str, Any], source: str, prefix: str = "") -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    for path, want in STACK_PATHS.items():
        entry: Any = node
        for part in path.split("."):
            entry = entry.get(part) if isinstance(entry, Mapping) else None
        if isinstance(entry, Mapping):
            fact = Fact.from_entry(entry, f"{source}: {prefix}{path}")
            if dimension(fact.unit) != want:
                raise InputError(f"{source}: {prefix}{path}: unit {fact.unit!r} is not a unit of {want}")
            out[path] = fact
    return out


def stack_from_document(name: str, document: Mapping[str, Any], source: str) -> Stack:
    """The stack a validated ``stack`` document describes. Raises :class:`InputError` for a unit of the wrong
    dimension (the schema names each path's units; this is its check of the conversion)."""
    meta = document["stack"]
    cards = {
        card: _facts_at(node, source, f"cards.{card}.") for card, node in document.get("cards", {}).items()
    }
    return Stack(
        name=name,
        title=str(meta["name"]),
        integer_matrices=str(meta["integer_matrices"]),
        float_matrices=str(meta["float_matrices"]),
        facts=_facts_at(document, source),
        cards=cards,
        note=meta.get("note"),
    )


def stack_path(root: Root, ref: str) -> Path:
    """The file of the stack ``ref`` (a registry name, or a path to a ``.toml`` file). Raises :class:`InputError`
    listing the registered stacks when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    path = root.stacks / f"{ref}.toml"
    if not is_there(path):
        raise not_found("stack", ref, root.stacks, root.names(root.stacks))
    return path


def load_stack(root: Root, ref: str) -> Stack:
    """The stack ``ref`` in ``root`` (or at the path ``ref``), validated against ``schema/stack.schema.json``, every
    source its facts cite registered in ``sources/``. Raises :class:`InputError` or
    :class:`~passprice.errors.SchemaError`."""
    from passprice.sources import require_sources

    path = stack_path(root, ref)
    document = schema.load(path, "stack", root.schema)
    stack = stack_from_document(path.name[: -len(".toml")], document, str(path))
    require_sources(root, stack.lock_facts(), str(path))
    return stack


def expected_pricing(
    stack: Stack, card: Card, shape: PassShape, host_memory: bool = False
) -> tuple[Pricing, tuple[tuple[str, Fact], ...]]:
    """The :class:`~passprice.cost.Pricing` a pass of ``shape`` on ``card`` runs at under ``stack``, and the stack
    facts it rests on (lock path, fact), in the order they enter.

    Each rate is the card's limit rate (:meth:`Pricing.limit`) times the stack's share; integer matrices run at the
    card's ``array`` rate, or at its ``vector`` rate when ``integer_matrices = "vector"``; float matrices at the card's
    ``tensor.*`` rate for their format when the stack routes them to tensor cores and the card has one, else at its
    ``vector`` rate, times ``share.float``. Capacity = the card's − ``memory.reserved``; fixed seconds =
    ``overhead.pass`` + layers × ``overhead.layer``; ``serial`` = ``terms.serial``.

    Raises :class:`StackLacks` for a fact the pass needs that the stack does not give (a term with work or bytes in
    it needs its share; every pass needs the overheads, the serial share, the reserve and ``share.read``).
    """
    used: list[tuple[str, Fact]] = []

    def need(path: str, why: str) -> float:
        found = stack.fact(path, card.name)
        if found is None:
            raise StackLacks(stack.name, path, why)
        if found not in used:
            used.append(found)
        return found[1].value

    limit = Pricing.limit(card)
    fixed = need("overhead.pass", "every pass pays it") + shape.layers * need(
        "overhead.layer", f"the pass runs through {shape.layers} blocks"
    )
    serial = need("terms.serial", "whether the pass's terms overlap or add")
    reserved = need("memory.reserved", "the runtime's own memory sits beside the serving's")
    read = limit.read * need("share.read", "every pass streams its weights")
    rewrite, append = limit.rewrite, limit.append
    if shape.rewrite_bytes > 0:
        rewrite = limit.rewrite * need("share.rewrite", "the pass rewrites a recurrent state in place")
    if shape.read_bytes + shape.write_bytes - shape.rewrite_bytes > 0:
        append = limit.append * need("share.append", "the pass reads and appends each sequence's cache")
    host_read, host_write = limit.host_read, limit.host_write
    if host_memory and card.host is not None:
        share = need("share.host", "sequences may live in host memory")
        host_read, host_write = limit.host_read * share, limit.host_write * share
    array = limit.array
    if shape.array_macs > 0:
        base = card.array.value if stack.integer_matrices == "array" else card.vector.value
        array = base * need("share.array", "the pass multiplies integer-quantised matrices")
    float_rates: list[tuple[str, float, str]] = []
    riding = 0.0
    for ty, macs in shape.float_macs:
        rate = card.tensor_rate(ty) if stack.float_matrices == "tensor" else None
        path = "vector"
        if rate is not None:
            from passprice.cards import TENSOR_FORMATS

            path = TENSOR_FORMATS[ty]
            value = rate.value
        elif stack.float_matrices == "vector":
            value = card.vector.value
        else:
            continue  # no tensor rate for this format on this card: the vector units, at share.vector
        float_rates.append((ty, value * need("share.float", f"the pass multiplies {ty} matrices"), path))
        riding += macs
    vector = limit.vector * need("share.vector", "the pass's norms and attention run on the vector units")
    scale = limit.scale
    if shape.scale_cycles > 0:
        scale = limit.scale * need("share.scale", "the pass scales integer blocks")
    pricing = attrs.evolve(
        limit,
        read=read,
        rewrite=rewrite,
        append=append,
        host_read=host_read,
        host_write=host_write,
        array=array,
        vector=vector,
        scale=scale,
        capacity=limit.capacity - reserved,
        fixed_s=fixed,
        serial=serial,
        float_rates=tuple(float_rates),
    )
    return pricing, tuple(used)


def with_stack(cost: ServingCost, stack_facts: tuple[tuple[str, Fact], ...]) -> ServingCost:
    """``cost`` resting on ``stack_facts`` too: its ``rests_on`` extended and its provenance the weakest of all."""
    provenance = max(cost.provenance, weakest(f.provenance for _, f in stack_facts))
    return attrs.evolve(cost, rests_on=cost.rests_on + stack_facts, provenance=provenance)


@attrs.frozen
class Expected:
    """A price beside its card's limit: ``limit`` (the seed's price, every term at the card's own rates), and
    ``expected`` (the same serving under ``stack``: its rates, fixed costs and serial terms; it rests on the
    stack's facts too), with ``fixed_s``, the fixed seconds each of its passes pays."""

    stack: Stack
    limit: ServingCost
    expected: ServingCost
    fixed_s: float

    @property
    def ratio(self) -> float:
        """Expected tokens/s over the limit's (≤ 1 when the stack's shares are ≤ 1 at the same batch)."""
        return self.expected.tokens_per_s / self.limit.tokens_per_s

    @property
    def provenance(self) -> Provenance:
        """The expected price's provenance (the weakest of card, draft and stack facts)."""
        return self.expected.provenance


def price_expected(header: GGUFHeader, card: Card, serving: Serving, stack: Stack, kind: str = "price") -> Expected:
    """The limit and the expected price of ``serving`` on ``card`` under ``stack``. ``kind``: ``price`` (the
    serving's batch, both) or ``best`` (each at its own best batch: the stack's may be smaller, its memory smaller by
    ``memory.reserved``). Raises what :func:`~passprice.serving.pass_shape` and the pricers raise, and
    :class:`StackLacks`."""
    shape = pass_shape(header, serving)
    pricing, used = expected_pricing(stack, card, shape, serving.host_memory)
    if kind == "best":
        limit = shape.best(card, serving.host_memory)
        expected = shape.best(card, serving.host_memory, pricing)
    else:
        from passprice.serving import Empty

        if serving.batch == 0:
            raise Empty("batch")
        limit = shape.cost_split(card, serving.batch, serving.host_memory)
        expected = shape.cost_split(card, serving.batch, serving.host_memory, pricing=pricing)
    return Expected(stack, limit, with_stack(expected, used), pricing.fixed_s)


def max_batch_expected(header: GGUFHeader, card: Card, serving: Serving, stack: Stack) -> tuple[int, int, float]:
    """(the limit's largest batch, the stack's, the memory it reserves in bytes): the stack's serving fills the
    card less ``memory.reserved``; a mixture of experts needs no routing record for it (what fits does not depend on
    routing, :func:`~passprice.serving.fit_shape`). Raises as :func:`price_expected`."""
    from passprice.serving import fit_shape

    shape = fit_shape(header, serving)
    pricing, _ = expected_pricing(stack, card, shape, serving.host_memory)
    return (
        shape.max_batch(card, serving.host_memory),
        shape.max_batch(card, serving.host_memory, pricing),
        Pricing.limit(card).capacity - pricing.capacity,
    )
