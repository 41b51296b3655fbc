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
  serving cannot fill;
- ``range.rows.min``, ``range.rows.max`` (token-rows a pass: batch × (1 + draft tokens)) and ``range.position.min``,
  ``range.position.max`` (cached positions): where its facts hold, the passes its measured runs covered. A stack's
  facts hold only where they were measured: an expected price outside is refused (:class:`BeyondStack`), and a best
  batch is sought only inside.

Where its kernels run is the stack's, not a fact: ``integer_matrices = "array" | "vector"`` (llama.cpp's quantised
mat-vec kernels run on the CUDA cores, not the tensor cores) and ``float_matrices = "tensor" | "vector"``. A fact may
differ by card (``[cards.NAME.share.read]``); the card's own value is used where one is given.

The expected pass goes through the one cost formula (:mod:`passprice.cost`) at a :class:`~passprice.cost.Pricing`
built here (:func:`expected_pricing`), so it is priced by the same arithmetic as the limit, and the limit is untouched.
A stack that lacks a fact a serving needs refuses it by name (:class:`StackLacks`), never guesses; a serving outside
where the facts hold is refused by name too (:class:`BeyondStack`).
"""

from __future__ import annotations

import os
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
from passprice.registry import Root, against_root, entry_name, not_found, outside, stays_in
from passprice.serving import (
    ContextMix,
    PassShape,
    Serving,
    ServingCost,
    ServingRefusal,
    pass_shape,
)
from passprice.tables import byte_figure

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
    "range.rows.min": "rows",
    "range.rows.max": "rows",
    "range.position.min": "positions",
    "range.position.max": "positions",
}

#: The stack facts every price under a stack reads that ``passprice calibrate`` never fits: written by hand.
UNFITTED = ("memory.reserved",)

#: The facts that say where a stack's facts hold (issue 14): token-rows a pass, cached positions.
RANGE_PATHS = ("range.rows.min", "range.rows.max", "range.position.min", "range.position.max")

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
        if path in UNFITTED:
            # calibrate never writes it (walkthrough 24: the advice to add runs and re-run calibrate was followed
            # for memory.reserved, which no fit gives, and README called the fact optional).
            how = (
                f"add it to facts/stacks/{stack}.toml by hand (a measured or estimated value with its citation; "
                "`passprice calibrate` does not fit it, and every price under a stack reads it: 0 GiB if the runtime "
                "keeps none)"
            )
        else:
            how = (
                f"add it to facts/stacks/{stack}.toml (a measured, derived or estimated value with its citation), or "
                f"add measured runs under this stack that exercise it (registry/measurements/) and run `passprice "
                f"calibrate --stack {stack}`"
            )
        super().__init__(
            f"stack {stack!r} has no {path} fact, and this serving needs one ({why}): {how}; or price the limit "
            "(without --stack)"
        )

    def fields(self) -> dict[str, Any]:
        """The refusal's fields for ``--json`` (beside ``refusal`` and ``message``): ``stack`` (its name), ``path``
        (the stack fact it lacks, ``share.rewrite``) and ``why`` (what in the serving needs it)."""
        return {"stack": self.stack, "path": self.path, "why": self.why}


class BeyondStack(ServingRefusal):
    """The price needs a pass outside where the stack's facts hold (its ``range.*`` facts, the passes its measured
    runs covered): refused, not extrapolated. ``path``: ``range.rows`` (token-rows a pass) or ``range.position``
    (a cached position); ``low`` … ``high``: the range; ``needs``: what the price needs; ``what``: that in words
    (``batch 578``); ``fix``: what would calibrate the stack there (``runs at that batch``); ``batches``: for a
    batch outside, the batches whose passes lie inside (lo, hi), so the refusal names the nearest one to price at
    (``price at batch 1 (--batch 1)``: walkthrough 9, ``audit … --stack`` at batch 64 did not say so); ``nearest``:
    for a position outside, that refusal's own advice (``price at --position 2,112 …``)."""

    name = "BeyondStack"

    def __init__(
        self, stack: str, path: str, low: float, high: float, needs: float, what: str, fix: str,
        batches: tuple[int, int] | None = None, nearest: str = "",
    ) -> None:
        self.stack = stack
        self.path = path
        self.low = low
        self.high = high
        self.needs = needs
        self.what = what
        if path == "range.position":
            span = f"cached positions {low:,.0f} … {high:,.0f}"
        elif what.startswith("batch"):
            span = f"batch {low:,.0f} … {high:,.0f}"  # its runs decode one token a sequence: a batch is its rows
        else:
            span = f"passes of {low:,.0f} … {high:,.0f} token-rows (batch × (1 + draft tokens))"
        if batches is not None:
            batch, end = (batches[1], "largest") if needs > high else (batches[0], "smallest")
            nearest = f"price at batch {batch:,} (--batch {batch}, the {end} its runs reach), "
        super().__init__(
            f"{stack} was calibrated on {span}; this price needs {what}; {nearest}price the limit (without --stack), "
            f"or calibrate the stack on {fix}"
        )

    def fields(self) -> dict[str, Any]:
        """The refusal's fields for ``--json``: ``stack``, ``path`` (``range.rows`` or ``range.position``), ``low``
        and ``high`` (the range its facts hold on), ``needs`` (what the price needs) and ``what`` (that in words)."""
        return {
            "stack": self.stack,
            "path": self.path,
            "low": self.low,
            "high": self.high,
            "needs": self.needs,
            "what": self.what,
        }


@attrs.frozen
class Held:
    """Where a stack's facts hold (its ``range.*`` facts): ``rows`` (token-rows a pass, lo … hi) and ``positions``
    (cached positions, lo … hi), for the stack named ``stack``."""

    stack: str
    rows: tuple[int, int]
    positions: tuple[float, float]

    def batches(self, rows_per_sequence: int) -> tuple[int, int] | None:
        """The batches whose passes of ``rows_per_sequence`` token-rows a sequence lie within ``rows``: (lo, hi), or
        ``None`` when none does."""
        lo = -(-self.rows[0] // rows_per_sequence)
        hi = self.rows[1] // rows_per_sequence
        return (max(lo, 1), hi) if max(lo, 1) <= hi else None

    def check_rows(
        self, rows: float, what: str, fix: str = "runs at that batch", batches: tuple[int, int] | None = None
    ) -> None:
        """Raises :class:`BeyondStack` when a pass of ``rows`` token-rows (``what``, in words) lies outside
        (``batches``: the batches that lie inside, named in the refusal)."""
        if not self.rows[0] <= rows <= self.rows[1]:
            raise BeyondStack(self.stack, "range.rows", self.rows[0], self.rows[1], rows, what, fix, batches)

    def check_batch(self, batch: int, rows_per_sequence: int) -> None:
        """Raises :class:`BeyondStack` when a pass of ``batch`` sequences of ``rows_per_sequence`` token-rows each
        lies outside."""
        inside = self.batches(rows_per_sequence)
        if rows_per_sequence == 1:
            self.check_rows(batch, f"batch {batch:,}", batches=inside)
        else:
            self.check_rows(
                batch * rows_per_sequence,
                f"{batch * rows_per_sequence:,} token-rows a pass (batch {batch:,}, {rows_per_sequence - 1} draft "
                f"token{'s' if rows_per_sequence > 2 else ''} a sequence)",
                "runs at that batch and draft length",
                inside,
            )

    def check_position(self, position: float, what: str = "", nearest: str = "") -> None:
        """Raises :class:`BeyondStack` when a token reading ``position`` cached positions lies outside (``what``:
        that in words, default ``position N``; ``nearest``: the refusal's advice of a price inside, if any)."""
        if not self.positions[0] <= position <= self.positions[1]:
            raise BeyondStack(
                self.stack, "range.position", self.positions[0], self.positions[1], position,
                what or f"position {position:,.0f}",
                f"runs at that context (measured runs near position {position:,.0f}, then passprice calibrate "
                f"--stack {self.stack})", nearest=nearest,
            )

    def check_contexts(self, contexts: ContextMix) -> None:
        """Raises :class:`BeyondStack` for a context class whose mean position lies outside, naming the class (its
        share of the batch, mean position and limit; which of several) and the position to price at instead: the
        nearest end of where the stack's runs were measured, every class at it (``--position``; walkthrough 27:
        the refusal read only "this price needs position 16,384", not which class or what to do)."""
        n = len(contexts.classes)
        for i, c in enumerate(contexts.classes, 1):
            inside = self.positions[1] if c.position > self.positions[1] else self.positions[0]
            end = "largest" if c.position > self.positions[1] else "smallest"
            which = f"context class {i} of {n} ({c.share:.4g} of the batch: " if n > 1 else "contexts ("
            self.check_position(
                c.position,
                f"{which}mean position {c.position:,.0f} of a {c.limit:,} limit)",
                f"price at position {inside:,.0f} (--position {inside:.0f}, the {end} its runs reach"
                + (", every class at it" if n > 1 else "") + "), ",
            )


def held(stack: Stack, card: str) -> tuple[Held | None, tuple[tuple[str, Fact], ...]]:
    """Where ``stack``'s facts hold on ``card``, and the ``range.*`` facts that say so (lock path, fact); ``(None,
    ())`` for a stack pinned in a lock written before stacks had a range (its price is reproduced as it was made).
    Raises :class:`StackLacks` for a stack that lacks one of them."""
    if not stack.ranged:
        return None, ()
    found = []
    for path in RANGE_PATHS:
        fact = stack.fact(path, card)
        if fact is None:
            raise StackLacks(stack.name, path, "a stack's facts hold only where its runs were measured")
        found.append(fact)
    values = [f.value for _, f in found]
    return Held(stack.name, (int(values[0]), int(values[1])), (values[2], values[3])), tuple(found)


@attrs.frozen
class Stack:
    """A serving stack: ``name`` (its file's stem), ``title``, where its matrix kernels run (``integer_matrices``:
    ``array`` or ``vector``; ``float_matrices``: ``tensor`` or ``vector``), its ``facts`` by path (the module's
    paths), and per-card facts (``cards``: card name → path → fact) that replace the stack's own for that card.
    ``ranged``: whether it states where its facts hold (``range.*``, required of every stack file; ``False`` only
    for a stack pinned in a lock written before stacks had a range)."""

    name: str
    title: str
    integer_matrices: str = attrs.field(validator=attrs.validators.in_(INTEGER_ROUTES))
    float_matrices: str = attrs.field(validator=attrs.validators.in_(FLOAT_ROUTES))
    facts: Mapping[str, Fact] = attrs.field(factory=dict)
    cards: Mapping[str, Mapping[str, Fact]] = attrs.field(factory=dict)
    note: str | None = None
    ranged: bool = True
    #: The ``[stack]`` table's ``runtime`` and ``builds`` texts (what runs, which builds): no number rests on them,
    #: yet a lock pins them as it pins the title (:class:`passprice.locks.StackPin`, session 27); ``None`` where the
    #: stack was rebuilt from a lock that pins neither.
    runtime: str | None = None
    builds: str | None = None

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
    ranged = any(p in own for p in RANGE_PATHS)
    return Stack(name, title, routes["integer_matrices"], routes["float_matrices"], own, cards, ranged=ranged)


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
    dimension (the schema names each path's units; this is its check of the conversion), or a range whose
    ``min`` is above its ``max`` (``range.rows``, ``range.position``, its own or a card's)."""
    meta = document["stack"]
    cards = {
        card: _facts_at(node, source, f"cards.{card}.") for card, node in document.get("cards", {}).items()
    }
    own = _facts_at(document, source)
    for prefix, facts in (("", own), *((f"cards.{c}.", f) for c, f in cards.items())):
        for what in ("rows", "position"):
            lo, hi = facts.get(f"range.{what}.min"), facts.get(f"range.{what}.max")
            if lo is not None and hi is not None and lo.value > hi.value:
                def shown(v: float) -> str:
                    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"

                raise InputError(
                    f"{source}: {prefix}range.{what}.min: {shown(lo.value)} is above {prefix}range.{what}.max "
                    f"{shown(hi.value)}: a range runs from its least to its largest value"
                )
    return Stack(
        name=name,
        title=str(meta["name"]),
        integer_matrices=str(meta["integer_matrices"]),
        float_matrices=str(meta["float_matrices"]),
        facts=own,
        cards=cards,
        note=meta.get("note"),
        runtime=str(meta["runtime"]) if "runtime" in meta else None,
        builds=str(meta["builds"]) if "builds" in meta else None,
    )


def stack_path(root: Root, ref: str) -> Path:
    """The file of the stack ``ref`` (a registry name, or a path to a ``.toml`` file). Raises :class:`InputError`
    listing the registered stacks when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    beneath = against_root(root, ref, "stack")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    if ("/" in ref or os.sep in ref) and not stays_in(root.stacks, ref):  # ../../other/a40: a file of another folder
        raise outside("stack", ref, root.stacks, root.names(root.stacks), root)
    path = root.stacks / f"{ref}.toml"
    if not is_there(path):
        raise not_found("stack", ref, root.stacks, root.names(root.stacks), root)
    return path


def load_stack(root: Root, ref: str) -> Stack:
    """The stack ``ref`` in ``root`` (or at the path ``ref``), validated against ``schema/stack.schema.json``, every
    source its facts cite registered in ``sources/``. Raises :class:`InputError` or
    :class:`~passprice.errors.SchemaError`."""
    from passprice.sources import require_sources

    path = stack_path(root, ref)
    document = schema.load(path, "stack", root.schema)
    stack = stack_from_document(entry_name(path), document, str(path))
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
    it needs its share; every pass needs the ``range.*`` facts, the overheads, the serial share, the reserve and
    ``share.read``), and :class:`InputError` for a ``memory.reserved`` at or above the card's capacity. The
    ``range.*`` facts are among those it rests on; whether a pass lies within them is the caller's to check
    (:func:`held`), which knows the batch.
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
    for found in held(stack, card.name)[1]:
        if found not in used:
            used.append(found)
    fixed = need("overhead.pass", "every pass pays it") + shape.layers * need(
        "overhead.layer", f"the pass runs through {shape.layers} blocks"
    )
    serial = need("terms.serial", "whether the pass's terms overlap or add")
    reserved = need("memory.reserved", "the runtime's own memory sits beside the serving's")
    if reserved >= limit.capacity:
        # The card would hold less than nothing ("holds -1,048,575 bytes"): the stack's reserve and the card's
        # capacity contradict each other, named by both.
        path = next(p for p, f in used if p.endswith("memory.reserved"))
        raise InputError(
            f"facts/stacks/{stack.name}.toml: {path.removeprefix(LOCK_PREFIX)}: {byte_figure(reserved)} bytes "
            f"reserved exceeds card {card.name}'s memory.capacity of {byte_figure(limit.capacity)} bytes: the "
            "runtime's reserve must leave the card memory to hold a serving"
        )
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
    stack's facts too), with ``fixed_s``, the fixed seconds each of its passes pays, and ``held``, where the
    stack's facts hold (``None`` for a stack pinned before stacks had a range)."""

    stack: Stack
    limit: ServingCost
    expected: ServingCost
    fixed_s: float
    held: Held | None = None

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
    ``memory.reserved``; the stack's only among the batches where its facts hold). Raises what
    :func:`~passprice.serving.pass_shape` and the pricers raise, :class:`StackLacks`, and :class:`BeyondStack` for a
    batch (``price``) or a context position outside where the stack's facts hold, or a draft length whose passes
    lie outside at every batch (``best``)."""
    shape = pass_shape(header, serving)
    pricing, used = expected_pricing(stack, card, shape, serving.host_memory)
    bounds, _ = held(stack, card.name)
    if kind == "best":
        limit = shape.best(card, serving.host_memory, max_tpot=serving.max_tpot, memory_use=serving.memory_use)
        batches = None
        if bounds is not None:
            bounds.check_contexts(serving.contexts)
            batches = bounds.batches(shape.rows_per_sequence)
            if batches is None:  # even batch 1 carries more rows than the stack was measured on
                bounds.check_batch(1, shape.rows_per_sequence)
        from passprice.batching import OverTPOT

        try:
            expected = shape.best(card, serving.host_memory, pricing, batches, serving.max_tpot, serving.memory_use)
        except OverTPOT as e:
            raise OverTPOT(e.batch, e.tpot_s, e.max_tpot_s, stack.name) from None
    else:
        from passprice.serving import Empty

        if serving.batch == 0:
            raise Empty("batch")
        limit = shape.cost_split(card, serving.batch, serving.host_memory)
        if bounds is not None:
            bounds.check_contexts(serving.contexts)
            bounds.check_batch(serving.batch, shape.rows_per_sequence)
        expected = shape.cost_split(card, serving.batch, serving.host_memory, pricing=pricing)
    return Expected(stack, limit, with_stack(expected, used), pricing.fixed_s, bounds)


def stack_room(header: GGUFHeader, card: Card, serving: Serving, stack: Stack) -> Pricing:
    """The :class:`~passprice.cost.Pricing` of ``serving`` on ``card`` under ``stack`` (:func:`expected_pricing`),
    whose ``capacity`` is the card memory (bytes) its runtime leaves the serving: the card's less ``memory.reserved``,
    the room :func:`~passprice.serving.last_position_bound` takes for ``best --stack``'s ``spread``. A mixture of
    experts needs no routing record for it (:func:`~passprice.serving.fit_shape`). Raises as
    :func:`expected_pricing`."""
    from passprice.serving import fit_shape

    return expected_pricing(stack, card, fit_shape(header, serving), serving.host_memory)[0]


def max_batch_expected(
    header: GGUFHeader, card: Card, serving: Serving, stack: Stack
) -> tuple[int, int, float, tuple[int, int] | None]:
    """(the limit's largest batch, the stack's, the memory it reserves in bytes, the batches its facts hold on for
    this serving's rows a sequence, or ``None``: none, or a stack pinned before ranges): the stack's serving fills
    the card less ``memory.reserved``, whatever its range (what fits is memory's answer, not a price); a mixture of
    experts needs no routing record for it (what fits does not depend on routing, :func:`~passprice.serving.fit_shape`).
    Raises as :func:`price_expected`."""
    from passprice.serving import fit_shape

    shape = fit_shape(header, serving)
    pricing, _ = expected_pricing(stack, card, shape, serving.host_memory)
    bounds, _ = held(stack, card.name)
    return (
        shape.max_batch(card, serving.host_memory, memory_use=serving.memory_use),
        shape.max_batch(card, serving.host_memory, pricing, serving.memory_use),
        Pricing.limit(card).capacity - pricing.capacity,
        bounds.batches(shape.rows_per_sequence) if bounds is not None else None,
    )
