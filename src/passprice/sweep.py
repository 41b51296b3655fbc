"""A grid of prices is the scalar pricer's arithmetic done on arrays: the same operations in the same order on every
element, so each row equals what ``passprice price`` gives for that point.

``passprice sweep`` prices cards × servings × draft tokens × context positions × batches. For each (card, serving,
draft tokens, position) the pass's shape is read once (:func:`~passprice.serving.pass_shape`); the batch axis is
then priced with NumPy: the seed's ``PassShape::cost`` elementwise, and its host-split search (``cost_split``) run
for every batch at once, a ternary step per iteration. Each row carries its bind, the price's weakest provenance and
the facts carrying it, or the refusal that stops it.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from passprice import schema
from passprice.cards import TENSOR_FORMATS, Card, load_card
from passprice.cost import Pricing, binding_index, pass_seconds, pass_terms
from passprice.drafts import DraftMethod, load_draft_method
from passprice.errors import InputError
from passprice.facts import weakest
from passprice.registry import Root
from passprice.routing import Routing, load_routing
from passprice.serving import (
    COST_PATHS,
    HOST_COST_PATHS,
    U32_MAX,
    BadContexts,
    BadDraft,
    ContextMix,
    Empty,
    NoHostLink,
    NotResident,
    OnChipOverflow,
    PassShape,
    Routed,
    Serving,
    ServingBind,
    ServingRefusal,
    pass_shape,
)
from passprice.servings import DraftSpec, ServingSpec, complete, load_spec, override, to_serving

#: The columns of a sweep row, in order.
COLUMNS = (
    "card",
    "serving",
    "checkpoint",
    "draft_tokens",
    "position",
    "limit",
    "batch",
    "host_sequences",
    "tokens_per_s",
    "pass_s",
    "memory_s",
    "host_s",
    "array_s",
    "vector_s",
    "scale_s",
    "binds",
    "held_bytes",
    "capacity_bytes",
    "provenance",
    "weakest",
    "refusal",
)

#: The columns a sweep under a serving stack adds (issue 14): the stack's expected price beside the limit.
STACK_COLUMNS = (
    "stack",
    "expected_tokens_per_s",
    "expected_pass_s",
    "expected_binds",
    "expected_provenance",
    "expected_refusal",
)

_BINDS = [b.value for b in ServingBind]
# Refusal codes of the vectorized cost, in the seed's order of checks.
_OK, _NO_HOST, _CARD_FULL, _HOST_FULL, _ON_CHIP = 0, 1, 2, 3, 4


@attrs.frozen
class Grid:
    """What a sweep prices: ``servings`` (registry names or paths), each on every card of ``cards`` (``None``: the
    serving's own card), with every number of drafted tokens in ``draft_tokens`` (``None``: the serving's own; 0
    means no drafts; a serving without a drafting method takes only 0), at every mean position in ``positions``
    (``None``: the serving's own contexts; a position replaces them by one class at the serving's longest limit),
    and every batch in ``batches``."""

    servings: tuple[str, ...]
    batches: tuple[int, ...]
    cards: tuple[str, ...] | None = None
    positions: tuple[float, ...] | None = None
    draft_tokens: tuple[int, ...] | None = None

    def size(self) -> int:
        """Points in the grid (rows of the sweep)."""
        return (
            len(self.servings)
            * (len(self.cards) if self.cards else 1)
            * (len(self.draft_tokens) if self.draft_tokens else 1)
            * (len(self.positions) if self.positions else 1)
            * len(self.batches)
        )


#: Pass shapes a sweep reads at most (each takes one to seven milliseconds: this bounds a sweep to about half a
#: minute).
MAX_SHAPES = 4_000

#: Rows a sweep prices at most (about ten seconds and 110 MB of CSV on a laptop): a larger grid is refused before
#: anything is priced, not left to run for minutes.
MAX_ROWS = 1_000_000


def parse_numbers(
    text: str, kind: Callable[[str], Any], what: str, least: float = 0, most: float | None = None
) -> tuple[Any, ...]:
    """A list of numbers from the command line: ``1,2,8``, ranges ``1-64`` or ``1..64`` (every integer, as
    ``speculate --tokens`` reads them), doubling ranges ``1-4096*2`` (1, 2, 4 … 4096), or a mix; each a finite
    number from ``least`` to ``most``, at most :data:`MAX_ROWS` of them. Raises :class:`InputError` naming ``what``
    for anything else."""
    out: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        start = len(out)
        if ".." in part:
            part = part.replace("..", "-", 1)
        try:
            if "-" in part[1:]:
                first, _, rest = part.partition("-") if not part.startswith("-") else ("", "", part)
                last, _, factor = rest.partition("*")
                lo, hi = int(first), int(last)
                if lo < 0 or hi < lo:
                    raise ValueError
                if factor:
                    f = int(factor)
                    if f < 2 or lo < 1:
                        raise ValueError
                    v = lo
                    while v <= hi:
                        out.append(kind(str(v)))
                        v *= f
                else:
                    if hi - lo >= MAX_ROWS:
                        raise InputError(
                            f"{what}: {part!r} gives {hi - lo + 1:,} values, more than the {MAX_ROWS:,} rows a sweep "
                            "prices"
                        )
                    out.extend(kind(str(v)) for v in range(lo, hi + 1))
            else:
                out.append(kind(part))
        except ValueError:
            raise InputError(f"{what}: {part!r} is not a number, a range A-B, or a doubling range A-B*2") from None
        bad = [
            v
            for v in out[start:]
            if not ((isinstance(v, int) or math.isfinite(v)) and v >= least and (most is None or v <= most))
        ]
        if bad:
            span = f"from {least:,} to {most:,}" if most is not None else f"at least {least:,}"
            raise InputError(f"{what}: {part!r}: {bad[0]!r} is out of range (each must be a finite number {span})")
        if len(out) > MAX_ROWS:
            raise InputError(f"{what}: more than the {MAX_ROWS:,} values a sweep prices")
    if not out:
        raise InputError(f"{what}: no values")
    return tuple(out)


def check_grid(grid: Grid) -> None:
    """Refuse a grid with no servings or more than :data:`MAX_ROWS` rows, before anything is priced. Raises
    :class:`InputError`."""
    if not grid.servings:
        raise InputError("sweep: no servings to price (none registered, and none given)")
    if grid.cards is not None and not grid.cards:
        raise InputError("--cards: no cards (give names, comma-separated, or 'all')")
    size = grid.size()
    if size > MAX_ROWS:
        axes = (
            f"{len(grid.servings):,} servings × {len(grid.cards) if grid.cards else 1:,} cards × "
            f"{len(grid.draft_tokens) if grid.draft_tokens else 1:,} draft lengths × "
            f"{len(grid.positions) if grid.positions else 1:,} positions × {len(grid.batches):,} batches"
        )
        raise InputError(
            f"sweep: {size:,} rows ({axes}) is more than the {MAX_ROWS:,} a sweep prices; split the grid or use a "
            "doubling range of batches (1-4096*2)"
        )


def grid_from_file(path: Path, root: Root) -> Grid:
    """The grid a sweep file describes (``schema/sweep.schema.json``): ``servings``, ``batches``, and optionally
    ``cards``, ``positions``, ``draft_tokens``; each list a TOML array, or for batches a table
    ``{from, to, factor}`` (factor 1: every batch); ``cards = ["all"]`` (or ``servings = ["all"]``) means every
    registered one, as ``--cards all`` does. Raises :class:`InputError` or :class:`~passprice.errors.SchemaError`."""
    document = schema.load(path, "sweep", root.schema)
    raw = document["batches"]
    if isinstance(raw, dict):
        lo, hi, factor = int(raw["from"]), int(raw["to"]), int(raw.get("factor", 1))
        if lo > hi:
            raise InputError(f"{path}: batches: from {lo:,} is past to {hi:,}")
        batches = parse_numbers(f"{lo}-{hi}" + (f"*{factor}" if factor > 1 else ""), int, f"{path}: batches")
    else:
        batches = tuple(int(b) for b in raw)

    def opt(key: str, kind: Callable[[Any], Any]) -> tuple[Any, ...] | None:
        return tuple(kind(v) for v in document[key]) if key in document else None

    cards = opt("cards", str)
    if cards == ("all",):
        cards = tuple(root.names(root.cards))
    servings = tuple(document["servings"])
    if servings == ("all",):
        servings = tuple(root.names(root.servings))
    return Grid(
        servings=servings,
        batches=batches,
        cards=cards,
        positions=opt("positions", float),
        draft_tokens=opt("draft_tokens", int),
    )


class _Batches:
    """The seed's ``PassShape::cost`` and ``cost_split`` for an array of batches: every field an array, computed
    with the scalar code's operations in its order, so each element equals the scalar result exactly."""

    def __init__(self, shape: PassShape | _ShapeByPosition, card: Card, pricing: Pricing | None = None) -> None:
        self.shape = shape
        self.card = card
        self.pricing = pricing if pricing is not None else Pricing.limit(card)

    def cost(self, batch: np.ndarray, host_sequences: np.ndarray) -> dict[str, np.ndarray]:
        """Every field of the pass for each (batch, host sequences) pair, and ``refusal``: the code of the first
        capacity check it fails (0 when it fits)."""
        sh, card, pricing = self.shape, self.card, self.pricing
        host_sequences = np.minimum(host_sequences, batch)
        b = batch.astype(float)
        bh = host_sequences.astype(float)
        bd = b - bh
        held_bytes = sh.held_shared + bd * sh.held_per_sequence
        capacity_bytes = pricing.capacity
        host_held_bytes = bh * sh.held_per_sequence
        host_capacity_bytes = pricing.host_capacity
        on_chip_bytes = b * sh.on_chip_per_sequence
        on_chip_capacity = pricing.on_chip
        refusal = np.full(batch.shape, _OK)
        checks = [
            ((host_sequences > 0) & (card.host is None), _NO_HOST),
            (held_bytes > capacity_bytes, _CARD_FULL),
            (host_held_bytes > host_capacity_bytes, _HOST_FULL),
            (on_chip_bytes > on_chip_capacity, _ON_CHIP),
        ]
        for failed, code in reversed(checks):
            refusal = np.where(failed, code, refusal)
        terms = pass_terms(
            pricing,
            batch=b,
            card_sequences=bd,
            host_sequences=bh,
            shared_bytes=sh.shared_bytes(b),
            read_bytes=sh.read_bytes,
            write_bytes=sh.write_bytes,
            rewrite_bytes=sh.rewrite_bytes,
            array_macs=sh.array_macs,
            vector_macs=sh.vector_macs,
            scale_cycles=sh.scale_cycles,
            float_macs=sh.float_macs,
        )
        stacked = np.stack(np.broadcast_arrays(*terms.as_tuple()))
        memory_s, host_s, array_s, vector_s, scale_s = stacked
        # The last of equal maxima binds, as Rust's max_by does.
        binds = binding_index(stacked)
        pass_s = pass_seconds(pricing, terms, np.take_along_axis(stacked, binds[None, ...], axis=0)[0])
        return {
            "batch": batch,
            "host_sequences": host_sequences,
            "memory_s": memory_s,
            "host_s": host_s,
            "array_s": array_s,
            "vector_s": vector_s,
            "scale_s": scale_s,
            "pass_s": pass_s,
            "binds": binds,
            "held_bytes": held_bytes,
            "capacity_bytes": np.full(batch.shape, capacity_bytes),
            "tokens_per_s": b * sh.emitted_per_sequence / pass_s,
            "refusal": refusal,
        }

    def cost_split(self, batch: np.ndarray, host_memory: bool) -> dict[str, np.ndarray]:
        """The seed's ``cost_split`` for every batch at once: without host memory the plain cost; with it, the
        ternary search over card-held sequences run on all batches together, then the fastest of the final window
        (ties to fewer held on the card). Batches whose search meets a refusal are marked with it."""
        zero = np.zeros(batch.shape, dtype=np.int64)
        if not host_memory:
            return self.cost(batch, zero)
        if self.card.host is None:
            out = self.cost(batch, zero)
            out["refusal"] = np.full(batch.shape, _NO_HOST)
            return out
        card_room, host_room = _rooms(self.shape, self.card)
        lo = np.maximum(batch - host_room, 0)
        hi = np.minimum(batch, card_room)
        a, z = lo.copy(), hi.copy()
        trouble = np.zeros(batch.shape, dtype=bool)
        while True:
            active = (z - a > 2) & (lo <= hi)
            if not active.any():
                break
            m1 = a + (z - a) // 3
            m2 = z - (z - a) // 3
            c1 = self.cost(batch, batch - m1)
            c2 = self.cost(batch, batch - m2)
            t1 = np.maximum(c1["memory_s"], c1["host_s"])
            t2 = np.maximum(c2["memory_s"], c2["host_s"])
            trouble |= active & ((c1["refusal"] != _OK) | (c2["refusal"] != _OK))
            left = active & (t1 <= t2)
            z = np.where(left, m2, z)
            a = np.where(active & ~left, m1, a)
        # The fastest of the final window [a, z] (at most three), the first on ties.
        best = self.cost(batch, np.where(lo <= hi, batch - a, batch - hi))
        trouble |= (lo <= hi) & (best["refusal"] != _OK)
        for offset in (1, 2):
            held = a + offset
            inside = (lo <= hi) & (held <= z)
            if not inside.any():
                continue
            other = self.cost(batch, batch - np.minimum(held, z))
            trouble |= inside & (other["refusal"] != _OK)
            take = inside & (other["pass_s"] < best["pass_s"])
            for key in best:
                best[key] = np.where(take, other[key], best[key])
        best["trouble"] = trouble
        return best


def _rooms(shape: Any, card: Card) -> tuple[Any, Any]:
    """The seed's ``card_room`` and ``host_room`` for a shape whose per-sequence bytes may be an array (one value a
    context position): ⌊(capacity − shared) / max(per sequence, 1)⌋ and ⌊host capacity / max(per sequence, 1)⌋, at
    least 0, at most ``u32::MAX``."""
    if isinstance(shape, PassShape):
        return shape.card_room(card), shape.host_room(card)
    per = np.maximum(shape.held_per_sequence, 1.0)
    card_room = np.minimum(np.floor(np.maximum((card.memory.capacity.value - shape.held_shared) / per, 0.0)), U32_MAX)
    host_cap = card.host.capacity.value if card.host is not None else 0.0
    host_room = np.minimum(np.floor(host_cap / per), U32_MAX) if card.host is not None else np.zeros_like(per)
    return card_room.astype(np.int64), host_room.astype(np.int64)


@attrs.frozen
class _ShapeByPosition:
    """A pass's shape at every context position of a sweep at once: :class:`~passprice.serving.PassShape`'s fields,
    those that depend on the position as a column of one value a position (shape ``(P, 1)``). Built from the pass
    at no context plus each attention group's cost per position read and held (the step pricer's decomposition,
    :func:`passprice.steps.attention_groups`): equal to the seed's pass at each position to rounding (the sums are
    grouped differently; the tests hold it to 1e-12)."""

    rows_per_sequence: int
    emitted_per_sequence: float
    weight_bytes: float
    embed_bytes: float
    read_bytes: np.ndarray
    write_bytes: float
    rewrite_bytes: float
    array_macs: np.ndarray
    vector_macs: np.ndarray
    scale_cycles: np.ndarray
    held_shared: float
    held_per_sequence: np.ndarray
    on_chip_per_sequence: float
    experts: tuple[Any, ...] = ()
    float_macs: tuple[tuple[str, float], ...] = ()

    def expert_bytes(self, batch: Any) -> Any:
        """The routed experts a pass streams (:meth:`~passprice.serving.PassShape.expert_bytes`): they depend on
        the batch, not the position."""
        return PassShape.expert_bytes(self, batch)  # type: ignore[arg-type]

    def shared_bytes(self, batch: Any) -> Any:
        """Bytes streamed once for the batch (:meth:`~passprice.serving.PassShape.shared_bytes`, the same
        operations)."""
        return PassShape.shared_bytes(self, batch)  # type: ignore[arg-type]

    @classmethod
    def of(cls, header: Any, serving: Serving, positions: np.ndarray) -> _ShapeByPosition:
        """The shape of ``serving`` (one context class, its limit) at each of ``positions``. Raises what
        :func:`~passprice.serving.pass_shape` raises at no context."""
        from passprice.steps import attention_groups

        zero = pass_shape(header, attrs.evolve(serving, contexts=ContextMix.uniform(0.0, 0), kv_page=None))
        k = serving.draft.tokens if serving.draft is not None else 0
        limit = float(serving.contexts.longest())
        p = positions.astype(float)[:, None]
        read, vector, array, scale, held = (np.zeros_like(p) for _ in range(5))
        for g in attention_groups(header, serving, k):
            # The seed's positions read (the mean position, at most the window) and held (the limit, or the
            # position and half a page, at most the window), for one class.
            held_at = limit if serving.kv_page is None else p + serving.kv_page / 2.0
            if g.window is None:
                at, kept = p, held_at
            else:
                at, kept = np.minimum(p, float(g.window)), np.minimum(held_at, float(g.window))
            read = read + g.read * at
            vector = vector + g.vector * at
            array = array + g.array * at
            scale = scale + g.scale * at
            held = held + g.held * kept
        return cls(
            rows_per_sequence=zero.rows_per_sequence,
            emitted_per_sequence=zero.emitted_per_sequence,
            weight_bytes=zero.weight_bytes,
            embed_bytes=zero.embed_bytes,
            read_bytes=zero.read_bytes + read,
            write_bytes=zero.write_bytes,
            rewrite_bytes=zero.rewrite_bytes,
            array_macs=zero.array_macs + array,
            vector_macs=zero.vector_macs + vector,
            scale_cycles=zero.scale_cycles + scale,
            held_shared=zero.held_shared,
            held_per_sequence=zero.held_per_sequence + held,
            on_chip_per_sequence=zero.on_chip_per_sequence,
            experts=zero.experts,
            float_macs=zero.float_macs,
        )


def _row_refusal(code: int) -> str:
    return {_NO_HOST: NoHostLink.name, _CARD_FULL: NotResident.name, _HOST_FULL: NotResident.name}.get(
        code, OnChipOverflow.name
    )


class Sweeper:
    """Prices a :class:`Grid` from a root, loading each card, checkpoint and drafting method once."""

    def __init__(self, root: Root, stack: Any = None) -> None:
        self.root = root
        self.stack = stack
        self._cards: dict[str, Card] = {}
        self._methods: dict[str, DraftMethod] = {}
        self._routings: dict[str, Routing] = {}
        self._checked: Grid | None = None

    def card(self, name: str) -> Card:
        """The card ``name``, loaded once."""
        if name not in self._cards:
            self._cards[name] = load_card(self.root, name)
        return self._cards[name]

    def method(self, name: str) -> DraftMethod:
        """The drafting method ``name``, loaded once."""
        if name not in self._methods:
            self._methods[name] = load_draft_method(self.root, name)
        return self._methods[name]

    def routing(self, name: str | None) -> Routing | None:
        """The routing record ``name`` (``None`` for none), loaded once."""
        if name is None:
            return None
        if name not in self._routings:
            self._routings[name] = load_routing(self.root, name)
        return self._routings[name]

    def check(self, grid: Grid) -> None:
        """Refuse, before anything is priced, a grid :func:`check_grid` refuses, a batch outside a u32, or one that
        reads more than :data:`MAX_SHAPES` pass shapes: a shape is read once a (serving, card, draft tokens), and once
        a position too for a serving with a shared prefix (its positions are not priced on arrays). Raises
        :class:`InputError`, also for a serving, checkpoint, card or drafting method that does not load, and for
        drafts asked of a serving without a drafting method (so nothing fails once a progress bar is shown)."""
        from passprice.checkpoints import load_checkpoint

        check_grid(grid)
        if any(b < 0 or b > U32_MAX for b in grid.batches):
            raise InputError(f"batches: each must be from 0 to {U32_MAX:,} (the seed's batch is a u32)")
        for card in grid.cards or ():
            self.card(card)
        per = (len(grid.cards) if grid.cards else 1) * (len(grid.draft_tokens) if grid.draft_tokens else 1)
        positions = len(grid.positions) if grid.positions else 1
        shapes = 0
        for name in grid.servings:
            spec = load_spec(self.root, name)
            load_checkpoint(self.root, spec.checkpoint)
            if grid.cards is None:
                self.card(spec.card)
            if spec.draft is not None:
                self.method(spec.draft.method)
            self.routing(spec.routing)
            for tokens in grid.draft_tokens or ():
                if tokens:
                    self._spec(spec, tokens, None, name)
            alone = positions if spec.shared_prefix else 1
            shapes += per * alone
            if shapes > MAX_SHAPES:
                why = ""
                if alone > 1:
                    why = f" ({name} shares a prefix, so each of its {positions:,} positions is read alone)"
                raise InputError(
                    f"sweep: more than {MAX_SHAPES:,} pass shapes to read{why}, milliseconds each; split the grid"
                )
        self._checked = grid

    def rows(self, grid: Grid, progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Every row of the sweep, in grid order (serving, card, draft tokens, position, batch); ``progress`` is
        called with the number of rows done after each block. Raises :class:`InputError` for a serving, card or
        method that does not load, or a grid :meth:`check` refuses."""
        from passprice.checkpoints import load_checkpoint

        if grid is not self._checked:
            self.check(grid)
        batches = np.array(grid.batches, dtype=np.int64)
        for serving_name in grid.servings:
            base = load_spec(self.root, serving_name)
            header = load_checkpoint(self.root, base.checkpoint)
            base = complete(base, header)
            for card_name in grid.cards or (base.card,):
                card = self.card(card_name)
                for tokens in grid.draft_tokens or ((base.draft.tokens if base.draft else 0),):
                    specs = [self._spec(base, tokens, p, serving_name) for p in grid.positions or (None,)]
                    if grid.positions is not None and len(specs) > 1 and not base.shared_prefix:
                        block = self._positions(grid, batches, header, card, serving_name, specs)
                    else:
                        block = (
                            row
                            for spec in specs
                            for row in self._block(grid, batches, header, card, serving_name, spec)
                        )
                    if self.stack is None:
                        yield from block
                    else:
                        # A row refused before it was priced carries the stack's columns too, empty.
                        for row in block:
                            yield {**dict.fromkeys(STACK_COLUMNS), "stack": self.stack.name, **row}
                    if progress is not None:
                        progress(len(batches) * len(specs))

    def _spec(self, base: ServingSpec, tokens: int, position: float | None, name: str = "serving") -> ServingSpec:
        draft = base.draft
        if tokens == 0:
            draft = None
        elif draft is not None:
            draft = DraftSpec(draft.method, tokens, draft.head_rows)
        else:
            raise InputError(
                f"{name} draws no drafts (no drafting method), so it cannot draft {tokens} tokens: give "
                "--draft-tokens 0"
            )
        spec = attrs.evolve(base, draft=draft)
        if position is not None:
            spec = override(spec, position=position)
        return spec

    def _serving(self, spec: ServingSpec) -> Serving:
        acceptance = self.method(spec.draft.method).first(spec.draft.tokens) if spec.draft else ()
        return to_serving(spec, acceptance, self.routing(spec.routing))

    def _common(self, card: Card, serving_name: str, spec: ServingSpec) -> dict[str, Any]:
        contexts = spec.contexts or ()
        return {
            "card": card.name,
            "serving": serving_name,
            "checkpoint": spec.checkpoint,
            "draft_tokens": spec.draft.tokens if spec.draft else 0,
            "position": sum(c.share * (c.position or 0.0) for c in contexts),
            "limit": max((c.limit or 0 for c in contexts), default=0),
        }

    def _expected(
        self, shape: PassShape, columns: Any, card: Card, batches: np.ndarray, host_memory: bool
    ) -> _Expected:
        """The block priced under the sweep's stack: its pricing from ``shape`` (the pass, or its probe at position
        0), the arrays of ``columns`` (the shape, or its column of positions) at it."""
        from passprice.stacks import StackLacks, expected_pricing

        try:
            pricing, used = expected_pricing(self.stack, card, shape, host_memory)
        except StackLacks as e:
            return _Expected(None, (), None, e.name)
        return _Expected(pricing, used, _Batches(columns, card, pricing).cost_split(batches, host_memory))

    def _block(
        self,
        grid: Grid,
        batches: np.ndarray,
        header: Any,
        card: Card,
        serving_name: str,
        spec: ServingSpec,
    ) -> Iterator[dict[str, Any]]:
        """The rows of one (card, serving, draft tokens, contexts): the shape read once, the batches on arrays."""
        common = self._common(card, serving_name, spec)
        serving = self._serving(spec)
        try:
            shape = pass_shape(header, serving)
        except ServingRefusal as e:
            yield from _refused(common, grid.batches, e.name)
            return
        priced = _Batches(shape, card).cost_split(batches, serving.host_memory)
        rows = _emit(common, grid.batches, priced, (), card, shape, lambda: shape, serving.host_memory)
        if self.stack is None:
            yield from rows
            return
        expected = self._expected(shape, shape, card, batches, serving.host_memory)
        yield from _with_expected(rows, expected, (), card, lambda: shape, serving.host_memory, self.stack.name)

    def _positions(
        self,
        grid: Grid,
        batches: np.ndarray,
        header: Any,
        card: Card,
        serving_name: str,
        specs: list[ServingSpec],
    ) -> Iterator[dict[str, Any]]:
        """The rows of one (card, serving, draft tokens) at every position at once: the pass's shape as a column
        of positions (:class:`_ShapeByPosition`), priced over positions × batches on arrays."""
        positions = np.array([sum(c.share * (c.position or 0.0) for c in s.contexts or ()) for s in specs])
        serving = self._serving(specs[0])
        limit = serving.contexts.longest()
        valid = (positions >= 0.0) & (positions <= float(limit))
        probe = attrs.evolve(serving, contexts=ContextMix.uniform(0.0, limit))
        try:
            shape = pass_shape(header, probe)
        except ServingRefusal as e:
            # The seed refuses these before it reads the contexts; the others after a bad context mix.
            early = isinstance(e, Empty | Routed | BadDraft)
            for spec, ok in zip(specs, valid, strict=True):
                name = e.name if early or ok else BadContexts.name
                yield from _refused(self._common(card, serving_name, spec), grid.batches, name)
            return
        kept = np.nonzero(valid)[0]
        columns = _ShapeByPosition.of(header, probe, positions[kept]) if len(kept) else None
        priced = None
        if columns is not None:
            grid2d = np.broadcast_to(batches, (len(kept), len(batches))).copy()
            priced = _Batches(columns, card).cost_split(grid2d, serving.host_memory)
        row_of = {int(k): i for i, k in enumerate(kept)}
        expected: _Expected | None = None
        for n, spec in enumerate(specs):
            common = self._common(card, serving_name, spec)
            if n not in row_of or priced is None:
                yield from _refused(common, grid.batches, BadContexts.name)
                continue
            exact = functools.partial(pass_shape, header, self._serving(spec))
            rows = _emit(common, grid.batches, priced, (row_of[n],), card, shape, exact, serving.host_memory)
            if self.stack is None:
                yield from rows
                continue
            if expected is None:
                assert columns is not None
                grid2d = np.broadcast_to(batches, (len(kept), len(batches))).copy()
                expected = self._expected(shape, columns, card, grid2d, serving.host_memory)
            yield from _with_expected(
                rows, expected, (row_of[n],), card, exact, serving.host_memory, self.stack.name
            )


@attrs.frozen
class _Expected:
    """A block priced under a serving stack (issue 14): its ``pricing`` and the stack facts it rests on (``used``),
    the priced arrays (``priced``; ``None`` when the stack refuses the serving, ``refusal`` names why)."""

    pricing: Any
    used: tuple[tuple[str, Any], ...]
    priced: Mapping[str, np.ndarray] | None
    refusal: str | None = None


def _with_expected(
    rows: Iterator[dict[str, Any]],
    expected: _Expected,
    index: tuple[int, ...],
    card: Card,
    exact: Callable[[], PassShape],
    host_memory: bool,
    stack: str,
) -> Iterator[dict[str, Any]]:
    """``rows`` with the stack's expected price in :data:`STACK_COLUMNS`, from ``expected``'s arrays (a batch whose
    host split met a refusal priced alone, as the limit's rows are)."""
    weakest_stack = weakest(f.provenance for _, f in expected.used)
    for j, row in enumerate(rows):
        row.update({"stack": stack, **dict.fromkeys(STACK_COLUMNS[1:])})
        at = (*index, j)
        if expected.priced is None:
            row["expected_refusal"] = expected.refusal
            yield row
            continue
        priced = expected.priced
        trouble = priced.get("trouble")
        if row["batch"] == 0:
            row["expected_refusal"] = "Empty"
        elif trouble is not None and trouble[at]:
            try:
                c = exact().cost_split(card, row["batch"], host_memory, expected.pricing)
                row.update(
                    expected_tokens_per_s=c.tokens_per_s, expected_pass_s=c.pass_s, expected_binds=c.binds.value
                )
            except ServingRefusal as e:
                row["expected_refusal"] = e.name
        elif int(priced["refusal"][at]) != _OK:
            row["expected_refusal"] = _row_refusal(int(priced["refusal"][at]))
        else:
            row.update(
                expected_tokens_per_s=float(priced["tokens_per_s"][at]),
                expected_pass_s=float(priced["pass_s"][at]),
                expected_binds=_BINDS[int(priced["binds"][at])],
            )
        if row["expected_tokens_per_s"] is not None and row["provenance"] is not None:
            from passprice.facts import Provenance

            row["expected_provenance"] = max(Provenance(row["provenance"]), weakest_stack).value
        yield row


def _refused(common: Mapping[str, Any], batches: Sequence[int], name: str) -> Iterator[dict[str, Any]]:
    """Rows refused as ``name`` (batch 0 as ``Empty``: ``price_serving`` refuses an empty batch before anything)."""
    for b in batches:
        yield {**dict.fromkeys(COLUMNS, None), **common, "batch": b, "refusal": "Empty" if b == 0 else name}


def _emit(
    common: Mapping[str, Any],
    batches: Sequence[int],
    priced: Mapping[str, np.ndarray],
    index: tuple[int, ...],
    card: Card,
    shape: PassShape,
    exact: Callable[[], PassShape],
    host_memory: bool,
) -> Iterator[dict[str, Any]]:
    """The rows of one block from its priced arrays (``priced[key][index + (j,)]`` for the j-th batch). ``shape``
    gives the facts the price rests on; ``exact`` the block's exact :class:`PassShape`, for batches whose split
    search met a refusal (the scalar pricer then says what the seed would)."""
    # The facts the price rests on, in the scalar pricer's order: the card's, the host link's when the batch uses
    # host memory, the drafting figures.
    facts = card.facts()
    own = [(p, facts[p]) for p in COST_PATHS]
    # The card's float-matrix rates the pass's float matrices ride (issue 14), after the host link's, as the scalar
    # pricer lists them.
    riding = dict.fromkeys(TENSOR_FORMATS.get(ty, "") for ty, _ in shape.float_macs)
    tensor = [(p, facts[p]) for p in riding if p in facts]
    host_facts = [(p, facts[p]) for p in HOST_COST_PATHS] if card.host is not None else []
    rests = {False: own + tensor + list(shape.facts), True: own + host_facts + tensor + list(shape.facts)}
    provenance = {flag: max(weakest(f.provenance for _, f in rests[flag]), shape.provenance) for flag in rests}
    carriers = {flag: ";".join(p for p, f in rests[flag] if f.provenance is provenance[flag]) for flag in rests}
    trouble = priced.get("trouble")
    for j, b in enumerate(batches):
        at = (*index, j)
        row = {**dict.fromkeys(COLUMNS, None), **common, "batch": b}
        if b == 0:
            row["refusal"] = "Empty"
            yield row
            continue
        if trouble is not None and trouble[at]:
            try:
                c = exact().cost_split(card, b, host_memory)
            except ServingRefusal as e:
                row["refusal"] = e.name
                yield row
                continue
            yield {**row, **_scalar_row(c)}
            continue
        code = int(priced["refusal"][at])
        if code != _OK:
            row["refusal"] = _row_refusal(code)
            yield row
            continue
        host_used = bool(priced["host_sequences"][at] > 0)
        row.update(
            {
                "host_sequences": int(priced["host_sequences"][at]),
                "tokens_per_s": float(priced["tokens_per_s"][at]),
                "pass_s": float(priced["pass_s"][at]),
                "memory_s": float(priced["memory_s"][at]),
                "host_s": float(priced["host_s"][at]),
                "array_s": float(priced["array_s"][at]),
                "vector_s": float(priced["vector_s"][at]),
                "scale_s": float(priced["scale_s"][at]),
                "binds": _BINDS[int(priced["binds"][at])],
                "held_bytes": float(priced["held_bytes"][at]),
                "capacity_bytes": float(priced["capacity_bytes"][at]),
                "provenance": provenance[host_used].value,
                "weakest": carriers[host_used],
            }
        )
        yield row


def _scalar_row(c: Any) -> dict[str, Any]:
    return {
        "host_sequences": c.host_sequences,
        "tokens_per_s": c.tokens_per_s,
        "pass_s": c.pass_s,
        "memory_s": c.memory_s,
        "host_s": c.host_s,
        "array_s": c.array_s,
        "vector_s": c.vector_s,
        "scale_s": c.scale_s,
        "binds": c.binds.value,
        "held_bytes": c.held_bytes,
        "capacity_bytes": c.capacity_bytes,
        "provenance": c.provenance.value,
        "weakest": ";".join(c.weakest),
    }


def _check_finite(row: Mapping[str, Any]) -> None:
    """Raise :class:`InputError` when a priced row holds a number that is not finite (``nan``, ``inf``): a fact or
    element size so far out of range that the pass has no finite price, which neither CSV nor JSON should carry."""
    for key, value in row.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                f"sweep: {row.get('serving')} on {row.get('card')}, batch {row.get('batch')}: {key} is {value!r}: a "
                "fact, element size or option is out of range (the pass has no finite price)"
            )


def write_rows(
    rows: Iterator[Mapping[str, Any]], fmt: str, out: io.TextIOBase | Any, columns: Sequence[str] = COLUMNS
) -> int:
    """Write ``rows`` to ``out`` as CSV (a header line of ``columns``, then one line a row; empty cells for none) or
    JSON (an array of objects, one a line). Returns the number of rows. Raises :class:`InputError` at a row holding
    a number that is not finite (what was written before it is incomplete: write to a buffer)."""
    n = 0
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            _check_finite(row)
            writer.writerow({k: _cell(v) for k, v in row.items()})
            n += 1
        return n
    out.write("[")
    for row in rows:
        _check_finite(row)
        out.write(("\n" if n == 0 else ",\n") + json.dumps(row, allow_nan=False))
        n += 1
    out.write("\n]\n")
    return n


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return value


def scalar_rows(root: Root, grid: Grid) -> Iterator[dict[str, Any]]:
    """The same rows as :meth:`Sweeper.rows`, each priced alone with
    :func:`~passprice.serving.price_serving` (the reference the vectorized sweep is tested and benchmarked against)."""
    from passprice.checkpoints import load_checkpoint
    from passprice.serving import price_serving

    sweeper = Sweeper(root)
    for serving_name in grid.servings:
        base = load_spec(root, serving_name)
        header = load_checkpoint(root, base.checkpoint)
        base = complete(base, header)
        for card_name in grid.cards or (base.card,):
            card = sweeper.card(card_name)
            for tokens in grid.draft_tokens or ((base.draft.tokens if base.draft else 0),):
                for position in grid.positions or (None,):
                    spec = sweeper._spec(base, tokens, position)
                    acceptance = sweeper.method(spec.draft.method).first(spec.draft.tokens) if spec.draft else ()
                    for b in grid.batches:
                        serving = to_serving(attrs.evolve(spec, batch=b), acceptance, sweeper.routing(spec.routing))
                        try:
                            c = price_serving(header, card, serving)
                        except ServingRefusal as e:
                            yield {"batch": b, "refusal": e.name}
                            continue
                        yield {"batch": b, "refusal": None, **_scalar_row(c)}
