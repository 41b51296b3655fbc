"""A price is shown with everything it rests on: each term's seconds, the bind, held bytes against capacity, and the
weakest provenance with the facts that carry it. Text for people, JSON (exact base units) for programs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from passprice.errors import InputError, escaped
from passprice.gguf_records import LongArray, LongString, nonfinite_text
from passprice.tables import count, percent, printable, si, text_table, titled

if TYPE_CHECKING:  # types only: a price's JSON, or a header's, needs none of these modules imported
    from passprice.cards import Card
    from passprice.facts import Fact
    from passprice.gguf_records import GGUFHeader
    from passprice.serving import MemoryBound, Serving, ServingCost
    from passprice.servings import ServingSpec


def cost_json(cost: ServingCost) -> dict[str, Any]:
    """The documented ``--json`` object of a priced pass (DESIGN.md, Command line): the seed's field names in
    snake_case, quantities in base units (bytes, seconds, multiply-adds, cycles), ``binds`` and ``provenance`` as
    strings, ``float_matrix_macs`` only when float matrices ride a card's float-matrix rate, then ``tokens_per_s``,
    ``rests_on`` (fact path → provenance) and ``weakest`` (the paths carrying the weakest provenance)."""
    from passprice.serving import COST_FIELDS

    out: dict[str, Any] = {}
    for name in COST_FIELDS:
        value = getattr(cost, name)
        out[name] = value.value if hasattr(value, "value") and not isinstance(value, int | float) else value
    if cost.float_matrix_macs:
        # Only where float matrices ride a card's float-matrix rate (issue 14), so every other price keeps its keys.
        out["float_matrix_macs"] = cost.float_matrix_macs
    out["tokens_per_s"] = cost.tokens_per_s
    out["rests_on"] = {path: fact.provenance.value for path, fact in cost.rests_on}
    out["weakest"] = list(cost.weakest)
    if cost.routed is not None:
        # DESIGN.md extension (issue 15): a mixture of experts' routing and what it read (absent for a dense price).
        out["routing"] = cost.routed.to_json()
    return out


def with_tpot(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a price's ``--json`` object, :func:`cost_json`, or :func:`expected_json`'s with its ``expected``)
    with ``tpot_s`` after ``tokens_per_s``: the time per output token a sequence sees, ``pass_s /
    emitted_per_sequence`` seconds (the seed's ``best_by_scan`` cap, :func:`passprice.batching._tpot`; the figure the
    text's ``TPOT`` shows and ``compare --json``'s ``tpot_s``), in each priced object. Added after a lock's
    comparison of the price (a lock records no ``tpot_s``). Raises nothing."""

    def keyed(obj: dict[str, Any]) -> dict[str, Any]:
        if "pass_s" not in obj or "emitted_per_sequence" not in obj or "tokens_per_s" not in obj:
            return obj
        out: dict[str, Any] = {}
        for key, value in obj.items():
            out[key] = value
            if key == "tokens_per_s":
                out["tpot_s"] = obj["pass_s"] / obj["emitted_per_sequence"]
        return out

    data = keyed(data)
    if isinstance(data.get("expected"), dict):
        data = {**data, "expected": keyed(data["expected"])}
    return data


#: How to leave card memory room under a best batch (``best``'s and ``compare``'s headroom lines say the same; fix181:
#: compare said "(a smaller --limit, or --max-tpot)", --max-tpot given or not, and not --memory-use).
ROOM_BEST = ("seek the best batch within a share of card memory with `--memory-use 0.9`, price a smaller batch with "
             "`passprice price … --batch N`, or give a smaller --limit")


def host_reason(cost: ServingCost, memory_use: float | None = None) -> str:
    """Why ``cost`` holds sequences in host memory, for its ``host why`` line: card memory holds no other sequence
    within its share ``memory_use`` (``None``: all of it; the serving's ``memory_use``, ``--memory-use``) — a sequence
    held takes ``host_held_bytes / host_sequences`` bytes (:meth:`passprice.serving.PassShape.cost`'s
    ``held_per_sequence``) — or, where it holds room, the host split's search (seed ``cost_split``) found the pass
    faster with them there: the host link reads their KV cache beside card memory's stream, the two terms
    overlapped. Either way the price then rests on ``host.*`` facts (``host.capacity`` is assumed on most cards).
    Fix181: `best … --host-memory` put 2 sequences in host memory at 78.7 % of an 80 GB card, its weakest
    ``host.capacity``, with no word of its 0.8 cap. Pass ``memory_use`` only where the batch was searched under it
    (``best``): a fixed batch (``price``, ``--batch``) ignores the cap, and tests/test_fix184.py's price at
    ``--memory-use 0.2 --batch 300`` was said to be held by a 28.2 GB cap while 74.2 GB was held. ``--no-host-memory``
    is advised only where the whole batch fits card memory (``capacity_bytes - held_bytes`` holds the host
    sequences' bytes); otherwise the line names the largest batch card memory holds (its sequences there plus those
    the room left takes), as ``NotResident`` would (tests/test_fix184.py: batch 700, 580 fit). Raises nothing."""
    per_sequence = cost.host_held_bytes / cost.host_sequences
    share = 1.0 if memory_use is None else memory_use
    room = share * cost.capacity_bytes - cost.held_bytes
    n = cost.host_sequences
    them = f"{n:,} sequence{'s' if n != 1 else ''}"
    whole_room = cost.capacity_bytes - cost.held_bytes
    if whole_room >= cost.host_held_bytes:
        keep = "--no-host-memory keeps every sequence in card memory"
    else:
        fit = cost.batch - n + int(max(whole_room, 0.0) // per_sequence)
        keep = (f"card memory holds {fit:,} sequence{'s' if fit != 1 else ''} of this serving, so --no-host-memory "
                f"keeps every sequence there only with a batch of at most {fit:,}")
    after = f"; the price now rests on host.* facts (its weakest may be host.capacity): {keep}"
    if room < per_sequence:
        within = ("card memory" if share >= 1.0 else
                  f"the memory-use cap, {100.0 * share:.4g} % of card memory ({si(share * cost.capacity_bytes, 'B')} "
                  f"of {si(cost.capacity_bytes, 'B')}: the serving's memory_use or --memory-use)")
        return (f"{them} in host memory: {within} holds no more ({si(max(room, 0.0), 'B')} left, "
                f"{si(per_sequence, 'B')} a sequence){after}")
    return (f"{them} in host memory though card memory has room for {int(room // per_sequence):,} more: the pass is "
            f"faster so, the host link reading {'its' if n == 1 else 'their'} KV cache beside card memory's stream "
            f"(memory and host terms overlap){after}")


def every_expert(header: GGUFHeader, routing: str | None) -> dict[str, Any] | None:
    """A price's ``--json`` ``every_expert`` object for a mixture of experts whose every token reads every expert
    (:func:`passprice.serving.every_expert_read`, k = E): ``experts`` (E) and ``routing_unused`` (the routing
    record the command line or serving named, which no price of it rests on; ``None``: none named); ``None`` for any
    other checkpoint. A 4-of-4 mixture never said so, and ``--routing uniform`` was taken without a word
    (tests/test_fix184.py). Raises nothing."""
    from passprice.serving import every_expert_read

    if not every_expert_read(header):
        return None
    return {"experts": header.meta_int("expert_count"), "routing_unused": routing}


def every_expert_text(data: dict[str, Any] | None) -> list[str]:
    """The ``experts`` line of :func:`every_expert`'s object (none for ``None``): ``4 of 4 experts a layer: every
    token reads every expert``, and, where a routing record was named, that it is not needed. Raises nothing."""
    if data is None:
        return []
    n = data["experts"]
    line = f"  experts       {n:,} of {n:,} experts a layer: every token reads every expert"
    if data["routing_unused"] is not None:
        line += (f"; --routing {escaped(data['routing_unused'])} is not needed (no price of this checkpoint rests on "
                 "a routing record)")
    return [line]


def spec_summary(spec: ServingSpec) -> str:
    """One line of a serving's choices: contexts, cache layout, drafts, flush, host memory."""
    parts = []
    for c in spec.contexts or ():
        share = "" if c.share == 1 else f"{c.share:g} × "
        parts.append(f"{share}contexts at mean position {c.position:g} of a {c.limit:,} limit")
    cache = f"paged KV ({spec.kv_page} positions a page)" if spec.kv_page else "contiguous KV"
    bits = [
        "; ".join(parts),
        f"{cache} at {spec.kv_bytes:g} B/element",
        f"state {spec.state_bytes:g} B/element",
        f"attention on {spec.attention}",
        f"{spec.activation_words} activation word{'s' if spec.activation_words != 1 else ''}",
        f"{spec.scaling} scaling",
    ]
    if spec.kv_rotated:
        bits.append("rotated KV")
    if spec.draft is not None:
        rows = f", head rows {spec.draft.head_rows:,}" if spec.draft.head_rows else ""
        bits.append(f"drafts {spec.draft.tokens} ({spec.draft.method}{rows})")
    bits.append(f"flush {spec.flush}")
    if spec.host_memory:
        bits.append("host memory allowed")
    if spec.shared_prefix:
        once = ", read once a pass" if spec.prefix_read_once else ""
        bits.append(f"shared prefix {spec.shared_prefix:,} positions{once}")
    if spec.max_tpot is not None:
        bits.append(f"TPOT cap {si(spec.max_tpot, 's')} on the best batch")
    if spec.memory_use is not None:
        bits.append(f"memory use {100.0 * spec.memory_use:.4g} % of card memory at most for the best and largest batch")
    return " · ".join(bits)


#: Held bytes above this share of card memory get a word about headroom under a price.
HEADROOM_WARNING = 0.95


def routed_expert_bytes(header: GGUFHeader) -> float:
    """The bytes every routed expert of ``header`` holds, all layers together: its ``*_exps`` tensors (llama.cpp's
    names for the stacked routed experts; shared experts are ``*_shexp``). A pass that reads D(T) of E experts in
    each layer (no draft block routing apart) streams D(T) / E of it: shown beside the expected bytes so they can be
    checked by hand (walkthrough 19)."""
    from passprice import ggml

    return float(sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors
                     if "_exps" in t.name and ggml.known(t.type_id)))


def float_matrices(header: GGUFHeader, card: Card | None = None) -> dict[str, tuple[int, int]]:
    """The float matrices of ``header`` the pricer runs on the vector units (:func:`passprice.serving.is_float`), by
    type name: (tensors, bytes). A matrix is a tensor of two or more dimensions that is not a norm nor an expert
    stack's bias (``ffn_*_exps.bias``, added, not multiplied); the embedding
    table counts only when the head reads it (no ``output.weight``: tied embeddings), since its rows are otherwise
    looked up, not multiplied. With ``card``, the types that ride one of its float-matrix rates (``tensor.*``,
    issue 14) are left out: they are not priced on the vector units."""
    from passprice import ggml
    from passprice.serving import is_float

    tied = header.tensor("output.weight") is None
    out: dict[str, tuple[int, int]] = {}
    for t in header.tensors:
        if len(t.dims) < 2 or "norm" in t.name or not ggml.known(t.type_id):
            continue
        if "_exps." in t.name and t.name.endswith(".bias"):
            # gpt-oss's expert biases, [width, experts]: each row adds its k experts' rows (the pricer's bias
            # adds, ExpertStream), not a matrix (walkthrough 40: "144 F32 (212.3 MB) matrices" for 36 routers).
            continue
        if t.name == "token_embd.weight" and not tied:
            continue
        ty = ggml.ggml_type(t.type_id)
        if is_float(ty) and (card is None or card.tensor_rate(ty.name) is None):
            n, size = out.get(ty.name, (0, 0))
            out[ty.name] = (n + 1, size + ggml.tensor_bytes(t.type_id, t.dims))
    return out


def spread_json(s: Serving, mean: MemoryBound, last: MemoryBound | None,
                stack_last: MemoryBound | None = None) -> dict[str, Any] | None:
    """``--json``'s ``spread`` of a paged serving ``s`` (``None`` for a contiguous cache, ``last`` ``None``): the
    ``mean_position`` its batch is counted at and the ``held_per_sequence`` bytes there (``mean``,
    :func:`~passprice.serving.memory_bound`), each class's last position (``last_positions``: limit − 1), the bytes a
    sequence holds there (``last_held_per_sequence``) and the sequences memory holds were every one there
    (``last_max_batch``: card room plus host room, :func:`~passprice.serving.last_position_bound`). Under a stack
    (``best --stack``, ``stack_last``: :func:`~passprice.serving.last_position_bound` in the room its runtime leaves,
    the card less ``memory.reserved``) also ``stack_last_max_batch``, the sequences that room holds were every one
    there (``max-batch --stack`` too: tests/test_fix157.py)."""
    if last is None:
        return None
    out = {
        "mean_position": s.contexts.mean_position(),
        "held_per_sequence": mean.per_sequence,
        "last_positions": [max(c.limit - 1, 0) for c in s.contexts.classes],
        "last_held_per_sequence": last.per_sequence,
        "last_max_batch": last.card_room + last.host_room,
    }
    if stack_last is not None:
        out["stack_last_max_batch"] = stack_last.card_room + stack_last.host_room
    return out


def spread_text(batch: int, s: Serving, mean: MemoryBound, last: MemoryBound | None,
                stack: tuple[str, int, float, MemoryBound] | None = None, said: str = "best batch") -> str | None:
    """The ``spread`` line of ``best`` and ``max-batch`` for a paged serving ``s`` carrying ``batch`` sequences
    (``None`` for a contiguous cache): the batch is counted with every sequence at the mix's mean position (the seed's
    ``position + page / 2`` a sequence, ``mean``), so it fits only while positions stay spread about that mean; what
    memory would hold were every sequence at its last position (``last``, :func:`spread_json`'s figures) and how to
    price it (``--position``, for one context class). Issue 13: ``best qwen3-30b-a3b-h200``'s 605 sequences at mean
    position 2,048 said nothing of the 304 that fit at 4,095. ``stack`` (``best --stack``): the stack's name, its
    best batch, the bytes its runtime reserves (``memory.reserved``) and
    :func:`~passprice.serving.last_position_bound` in the room it leaves (the card less them), said after the limit's:
    whether that batch fits with every sequence at its last position; ``said`` names that batch (``best batch``;
    ``max-batch --stack``: ``max batch``, its most under the stack)."""
    if last is None:
        return None
    under = ""
    if stack is not None:
        name, stack_batch, reserved, room = stack
        held = room.card_room + room.host_room
        fits = "fits however their positions stand" if stack_batch <= held else (
            "fits only while their positions stay spread")
        under = (f"; under stack {name}, whose runtime reserves {si(reserved, 'B')}, "
                 f"{count(held)} would fit were every sequence there, so its {said} {count(stack_batch)} {fits}")
    at_last = last.card_room + last.host_room
    classes = s.contexts.classes
    sequences = "sequence" if batch == 1 else "sequences"
    if len(classes) == 1:
        c = classes[0]
        where = (f"at its last position, {count(max(c.limit - 1, 0))} of its {count(c.limit)} limit "
                 f"({si(last.per_sequence, 'B')} a sequence: its limit's whole pages)")
        hint = f" (`--position {max(c.limit - 1, 0)}`)"
    else:
        where = (f"at its class's last position, its limit − 1 ({si(last.per_sequence, 'B')} a sequence on "
                 "average: each limit's whole pages)")
        hint = ""
    head = (f"{count(batch)} {sequences} counted each at the mean position {count(s.contexts.mean_position())} "
            f"({si(mean.per_sequence, 'B')} a sequence, the paged cache's position + half a page)")
    if batch > at_last:
        return (f"{head}: they fit only while their positions stay spread about it; were every sequence {where}, "
                f"memory would hold {count(at_last)}{hint}{under}")
    return (f"{head}; were every sequence {where}, memory would still hold {count(at_last)}{hint}, so the batch "
            f"fits however their positions stand{under}")


def cost_text(
    cost: ServingCost,
    title: str,
    spec: ServingSpec | None = None,
    floats: Mapping[str, tuple[int, int]] | None = None,
    under_stack: bool = False,
    routing_note: str | None = None,
    experts_held: float | None = None,
    best: bool = False,
    spread: str | None = None,
    every: dict[str, Any] | None = None,
) -> str:
    """A priced pass for people: the five terms with the bind marked and a one-line legend (from
    :mod:`passprice.glossary`), tokens/s and time per output token (TPOT), bytes and work per pass, held bytes
    against capacity (with a word about headroom above :data:`HEADROOM_WARNING`, pointing at a serving stack unless
    ``under_stack``: the command already prices under one), the float matrices priced on the vector units
    (``floats``, :func:`float_matrices`), and the provenance it rests on. A mixture of experts' price shows its
    routing record's ``routing_note`` (the record's caveat, its ``note``) under the routing line (walkthrough 19:
    the caveat showed in neither ``price`` nor ``audit``), and the bytes all its routed experts hold
    (``experts_held``, :func:`routed_expert_bytes`) beside the expected bytes a pass reads of them. Of ``best``'s
    pass (``best``), the headroom line names the command that prices a smaller batch: ``best`` takes no
    ``--batch`` (walkthrough 39). ``every``: :func:`every_expert`'s object, shown as its ``experts`` line."""
    from passprice.glossary import legend

    lines = [title]
    if spec is not None:
        lines.append(f"  {spec_summary(spec)}")
    host = f"{cost.host_sequences:,} of them in host memory" if cost.host_sequences else "all in card memory"
    rows_per = cost.rows_per_sequence
    emitted = cost.emitted_per_sequence
    lines.append(
        f"  batch {cost.batch:,} sequence{'s' if cost.batch != 1 else ''} ({host}); each carries {rows_per} "
        f"token-row{'s' if rows_per != 1 else ''} through a pass and emits {emitted:.4g} token"
        f"{'' if emitted == 1 else 's'}"
    )
    lines.append("")
    rows = []
    for bind, seconds in cost.terms().items():
        mark = "← binds" if bind is cost.binds else ""
        rows.append([bind.value, si(seconds, "s"), percent(seconds, cost.pass_s), mark])
    rows.append(["pass", si(cost.pass_s, "s"), "", ""])
    lines.append(text_table(["term", "time", "of pass", "bind"], rows, right=(1, 2)))
    lines.append(f"  {legend('memory', 'host', 'array', 'vector', 'scale', 'binds')}")
    lines.append("")
    tpot = cost.pass_s / cost.emitted_per_sequence
    shared_what = "weights and embedding rows"
    if spec is not None and spec.shared_prefix and spec.prefix_read_once:
        shared_what = "weights, embedding rows and the shared prefix's KV (read once a pass)"
    lines.append(f"  tokens/s      {count(round(cost.tokens_per_s, 1))}  (TPOT {si(tpot, 's')} per sequence)")
    if spec is not None and spec.max_tpot is not None and tpot > spec.max_tpot:
        lines.append(
            f"  TPOT cap      over it: {si(tpot, 's')} against the serving's cap of {si(spec.max_tpot, 's')} "
            "(max_tpot bounds the best batch's search, `passprice best`; a price at a batch given is not held to it)"
        )
    lines.append(
        f"  bytes/pass    {si(cost.weight_bytes, 'B')} of {shared_what}, shared by the batch; "
        f"{si(cost.sequence_bytes, 'B')} per sequence ({si(cost.rewrite_bytes, 'B')} rewritten in place)"
    )
    lines += every_expert_text(every)  # a mixture every token reads whole (:func:`every_expert`)
    if cost.routed is not None:
        r = cost.routed
        lines.append(
            f"  experts       {r.distinct:.4g} of {r.experts:,} experts a layer for {r.tokens:,.0f} token-row"
            f"{'s' if r.tokens != 1 else ''} ({r.used} a token), the mean over routing: {si(r.bytes, 'B')} of them "
            "in the bytes shared by the batch"
            + (f" (all {r.experts:,} experts of every layer hold {si(experts_held, 'B')})" if experts_held else "")
        )
        facts = dict(cost.rests_on)
        hot, share = facts.get("routing.hot_experts"), facts.get("routing.hot_share")
        if hot is not None and share is not None:
            from passprice.routing import description

            # The hot set counted in experts (58 of 128), not only as a share (45.31 %) as the record's text has it.
            lines.append(f"  routing       {description(r.routing, hot, share, r.experts)}")
        else:
            lines.append(f"  routing       {r.description}")
        if routing_note:
            lines.append(f"  routing note  {routing_note}")
    array = f"array {si(cost.array_macs, 'MAC')}"
    if cost.float_matrix_macs:  # the float matrices riding a tensor.* rate are the array term's too (DESIGN.md)
        rates = ", ".join(p for p, _ in cost.rests_on if p.startswith("tensor.")) or "tensor.*"
        array = (f"array {si(cost.array_macs, 'MAC')} integer + {si(cost.float_matrix_macs, 'MAC')} float matrices "
                 f"(float_matrix_macs, on {rates})")
    lines.append(
        f"  work/pass     {array} · vector {si(cost.vector_macs, 'MAC')} · scale {si(cost.scale_cycles, 'cycle')}"
    )
    lines.append(
        f"  held          {si(cost.held_bytes, 'B')} of {si(cost.capacity_bytes, 'B')} card memory "
        f"({percent(cost.held_bytes, cost.capacity_bytes)})"
    )
    if cost.capacity_bytes > 0 and cost.held_bytes > HEADROOM_WARNING * cost.capacity_bytes:
        left = 1.0 - cost.held_bytes / cost.capacity_bytes
        # walk106: best's own option for it, --memory-use, was not named
        room = ROOM_BEST if best else "a smaller --batch or --limit"
        stack = ("or read the expected price below, which keeps the stack's memory.reserved free" if under_stack else
                 "or price it under a serving stack (--stack S), whose memory.reserved is what its runtime keeps")
        lines.append(
            f"  headroom      {100.0 * left:.1f} % of card memory left: passprice counts no runtime workspace, "
            f"activations or fragmentation, so leave room ({room}) before serving this, {stack}"
        )
    if spread:
        lines.append(f"  spread        {spread}")
    if cost.host_sequences or (spec is not None and spec.host_memory):
        lines.append(
            f"  host held     {si(cost.host_held_bytes, 'B')} of {si(cost.host_capacity_bytes, 'B')} "
            f"({percent(cost.host_held_bytes, cost.host_capacity_bytes)})"
        )
    if cost.host_sequences:
        lines.append(f"  host why      {host_reason(cost, spec.memory_use if spec is not None and best else None)}")
    lines.append(
        f"  on chip       {si(cost.on_chip_bytes, 'B')} of {si(cost.on_chip_capacity, 'B')} "
        f"({percent(cost.on_chip_bytes, cost.on_chip_capacity)})"
    )
    if floats:
        shown = ", ".join(f"{n} {name} ({si(size, 'B')})" for name, (n, size) in sorted(floats.items()))
        lines.append(
            f"  float         {shown} matrices priced on the vector units at the card's f32 rate (the card has no "
            "tensor-core rate for their type; F16 and BF16 matrices ride tensor.f16 and tensor.bf16 where a card "
            "has them: passprice explain vector)"
        )
    lines.append("")
    lines.append(f"  provenance    {cost.provenance.value} — weakest: {', '.join(cost.weakest)}")
    from passprice.audit import binding_paths

    binding = binding_paths(cost)
    rests = ", ".join(f"{p}{'*' if p in binding else ''} ({f.provenance.value})" for p, f in cost.rests_on)
    lines.append(f"  rests on      {rests}")
    lines.append("                (* a fact of the binding term)")
    return "\n".join(lines)


def cards_table(cards: list[Card]) -> str:
    """Registered cards, one row each: memory, bandwidth, array and vector rates, the weakest provenance of the
    card's own facts (the ones every price rests on), and the host link with its weakest fact (a price rests on
    those only when sequences live in host memory)."""
    from passprice.cards import HOST_PATHS, shown_title

    rows = []
    for c in cards:
        facts = c.facts()
        own = c.weakest()
        host = "no"
        if c.host is not None:
            host = "yes, " + max(f.provenance for p, f in facts.items() if p in HOST_PATHS).value
        rows.append(
            [
                c.name,
                shown_title(c),
                si(c.memory.capacity.value, "B"),
                si(c.memory.bandwidth.value, "B/s"),
                si(c.array.value, "MAC/s"),
                si(c.vector.value, "MAC/s"),
                own.value,
                host,
                c.capacity_basis(),
            ]
        )
    # "memory is": the capacity figure's kind (Card.capacity_basis): a datasheet's marketed decimal GB, or what the
    # device reports (nvidia-smi's MiB), which for one 80 GB part differ by 7 %.
    headers = ["card", "title", "memory", "bandwidth", "array", "vector", "weakest", "host link", "memory is"]
    table = text_table(headers, rows)
    bases = {c.capacity_basis() for c in cards}
    if {"datasheet", "device"} <= bases:
        table += ("\n\nmemory is: `datasheet`, the figure the maker markets (published, decimal GB); `device`, what "
                  "the device reports (measured: nvidia-smi's MiB, some GB above the marketed figure on one part): a "
                  "max-batch bounded by memory compares the two as given")
    return table


def card_json(card: Card) -> dict[str, Any]:
    """One card of ``cards --json``: ``name``, ``title``, ``hypothetical``, ``host_link`` (whether it has a host
    link), ``weakest`` and ``weakest_with_host_link`` (provenance names) and ``facts`` (each :func:`fact_json`, by
    fact path). Raises nothing."""
    return {**_card_head(card), "facts": {p: fact_json(f) for p, f in card.facts().items()}}


def _card_head(card: Card) -> dict[str, Any]:
    """:func:`card_json` but its last key, ``facts``. Raises nothing."""
    weakest = card.weakest()
    return {
        "name": card.name,
        "title": card.title,
        "hypothetical": card.hypothetical,
        "host_link": card.host is not None,
        "weakest": weakest.value,
        "weakest_with_host_link": (weakest if card.host is None else card.weakest(include_host=True)).value,
    }


#: How many facts' texts ``cards --json`` keeps to write again (:func:`cards_json_chunks`): a bound on what it holds
#: (a fact's text is about 1.5 KB), well above the few hundred distinct fact objects thousands of cards copied from
#: a few dozen share.
FACT_TEXTS_KEPT = 4096


def cards_json_chunks(cards: Iterable[Card], problems: Callable[[], list[str]]) -> Iterator[str]:
    """``cards --json``'s document ``{"cards": [CARD, …], "problems": [LINE, …]}`` (each card :func:`card_json`),
    in pieces to write one after another: the very text :func:`passprice.tables.json_text` gives for the whole
    document, without the whole in memory at once. Each card's table is made, written and dropped in turn
    (:func:`passprice.tables.nested_json_text`): 10,000 cards (a 157 MB registry, 265 MB of JSON) held every
    card's table and then the text, 1.7 GB and 24 s; now one card's at a time. ``problems`` is called once the
    cards are done (the lines of the files left out). Nothing is yielded before the first card's text is made
    (a failure there leaves stdout empty, for the error document). No trailing newline.

    A fact's text (:func:`fact_json`, written at its depth) is made once for each fact *object* and written again
    for every card holding that very object (kept by identity, the object held with its text so its ``id`` is
    never another's; at most :data:`FACT_TEXTS_KEPT`, the oldest let go first): cards read from equal bytes share
    their fact objects (the snapshot's parts, the cache's batch pickles), and a fact's text is a function of the
    object alone. Equal but distinct objects are never taken for one another (``1 == 1.0``, ``0.0 == -0.0``: their
    texts differ). 2,000 copies of the 17 shipped cards share 466 fact objects of 28,242 (scale36: 3.7 → 1.0 s).

    Raises :class:`InputError` naming the key path when a card's table holds a number that is not finite
    (:func:`require_finite`; the card schemas bound every value, so none reaches here): the cards before it are
    written by then."""
    from passprice.tables import nested_json_text

    kept: dict[int, tuple[Fact, str]] = {}
    keys: dict[str, str] = {}
    inner = "\n" + "  " * 4  # a fact of a card of the list of the document
    close = "\n" + "  " * 2 + "}"  # the card's own closing brace, after its last key
    prefix = '{\n  "cards": [\n    '  # the document's opening goes with the first card: nothing is written before it
    for index, card in enumerate(cards):
        try:
            head = nested_json_text(_card_head(card), 2)
            entries = []
            for path, fact in card.facts().items():
                got = kept.get(id(fact))
                if got is None or got[0] is not fact:
                    got = (fact, nested_json_text(fact_json(fact), 4))
                    if len(kept) >= FACT_TEXTS_KEPT:
                        del kept[next(iter(kept))]
                    kept[id(fact)] = got
                key = keys.get(path)
                if key is None:
                    key = keys[path] = nested_json_text(path, 0)
                entries.append(key + ": " + got[1])
        except ValueError:
            require_finite({"cards": [None] * index + [card_json(card)]})
            raise
        facts = "{" + inner + ("," + inner).join(entries) + "\n" + "  " * 3 + "}" if entries else "{}"
        yield prefix + head[: -len(close)] + ",\n" + "  " * 3 + '"facts": ' + facts + close
        prefix = ",\n    "
    closing = '{\n  "cards": []' if prefix.startswith("{") else "\n  ]"
    yield closing + ',\n  "problems": ' + nested_json_text(problems(), 1) + "\n}"


def fact_json(fact: Fact) -> dict[str, Any]:
    """A fact for ``--json``: as written (``value``, ``unit``, ``provenance``, ``source``, ``locator``, ``note``,
    ``derivation`` as its table), in base units (``base_value``), ``cite`` (the citation in one line:
    ``SOURCE: LOCATOR``, or a pinned fact's free-text cite), ``derivation_text`` and ``digest``."""
    from passprice.facts import entry_digest

    entry = fact.to_entry()  # once: the digest is of this very table (Fact.digest unstructured it a second time)
    return {
        **entry,
        "cite": fact.citation(),
        "derivation_text": fact.derivation_text(),
        "base_value": fact.value,
        "digest": entry_digest(entry),
    }


def facts_text(title: str, facts: Mapping[str, Fact]) -> str:
    """Facts for people: path, value as written, provenance, then the source and locator, derivation and note on
    their own lines."""
    lines = [title, ""]
    width = max((len(p) for p in facts), default=0)
    for path, f in facts.items():
        lines.append(f"{path.ljust(width)}  {f.describe():>14}  {f.provenance.value}")
        if f.source is not None:
            lines.append(f"{'':{width}}  source: {f.source} — {f.locator}")
        else:
            lines.append(f"{'':{width}}  cite: {f.cite}")
        if f.derivation:
            lines.append(f"{'':{width}}  derivation: {f.derivation_text()}")
        if f.note:
            lines.append(f"{'':{width}}  note: {f.note}")
    return "\n".join(lines)


_SUMMARY_KEYS = (
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.sliding_window",
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
    "expert_shared_count",
    "nextn_predict_layers",
    "ssm.conv_kernel",
    "ssm.state_size",
    "ssm.inner_size",
    "ssm.time_step_rank",
    "ssm.group_count",
)


def metadata_json(value: Any) -> Any:
    """A metadata value for JSON: a long array as ``{"long_array": TYPE, "length": N}``, a long string as
    ``{"long_string": true, "length": BYTES}``, a NaN or an infinity as the string ``"nan"``, ``"inf"`` or ``"-inf"``
    (JSON has neither; a checkpoint entry writes them so too), tuples as lists."""
    if isinstance(value, float) and nonfinite_text(value) is not None:
        return nonfinite_text(value)
    if isinstance(value, LongArray):
        return {"long_array": value.element_type, "length": value.length}
    if isinstance(value, LongString):
        return {"long_string": True, "length": value.length}
    if isinstance(value, tuple):
        return [metadata_json(v) for v in value]
    return value


def metadata_text(value: Any) -> str:
    """A metadata value for a table: a string as it is unless a character would not print (then quoted and escaped,
    :func:`~passprice.tables.printable`), a float as Python writes it (``nan``, ``inf``), an array as ``[…]`` of
    its items (strings quoted), a long array or string as its type and length."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(repr(v) if isinstance(v, str) else metadata_text(v) for v in value) + "]"
    if isinstance(value, LongArray | LongString):
        return str(metadata_json(value))
    return repr(value) if isinstance(value, float) else str(value)


def header_json(header: GGUFHeader, tensors: bool = True) -> dict[str, Any]:
    """A header for ``--json``: identity, layout, metadata (long arrays as type and length), the tensor table."""
    from passprice import ggml

    total = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors if ggml.known(t.type_id))
    out: dict[str, Any] = {
        "source": header.source,
        "architecture": header.architecture,
        "version": header.version,
        "byte_order": header.byte_order,
        "header_bytes": header.header_bytes,
        "alignment": header.alignment,
        "data_offset": header.data_offset,
        "sha256": header.sha256,
        "shards": len(header.shards),
        "tensor_count": len(header.tensors),
        "tensor_bytes": total,
        "metadata": {k: metadata_json(v) for k, v in header.metadata.items()},
    }
    if tensors:
        out["tensors"] = [
            {
                "name": t.name,
                "type": t.type_name,
                "dims": list(t.dims),
                "bytes": ggml.tensor_bytes(t.type_id, t.dims) if ggml.known(t.type_id) else None,
            }
            for t in header.tensors
        ]
    return out



def architecture_cell(header: GGUFHeader) -> str:
    """How ``header``'s ``general.architecture`` is shown: the name (:func:`~passprice.tables.printable`), ``''
    (empty)`` for an empty one, the value and its type for one that is not a string, and ``(missing: no
    general.architecture key)`` only when the key is absent (attack64: an empty name and a uint32 both read
    "missing", a key the header holds). Raises nothing."""
    value = header.metadata.get("general.architecture")
    if value is None:
        return "(missing: no general.architecture key)"
    if not isinstance(value, str):
        return f"(not a string: {printable(repr(value)[:40])})"
    return printable(value) if value else "'' (empty)"

def header_text(header: GGUFHeader, show_metadata: bool = False, show_tensors: bool = False) -> str:
    """A header for people: identity and layout, the shape figures the pricer reads, tensor types and bytes, and,
    on request, every metadata key and every tensor."""
    from passprice import ggml

    by_type: dict[str, list[int]] = {}
    for t in header.tensors:
        size = ggml.tensor_bytes(t.type_id, t.dims) if ggml.known(t.type_id) else 0
        entry = by_type.setdefault(t.type_name, [0, 0])
        entry[0] += 1
        entry[1] += size
    total = sum(v[1] for v in by_type.values())
    # A type the gguf package does not know has no byte count: "unknown", not 0 (import attack round 40: 236
    # tensors of id 255 read "236, 0 bytes").
    unknown = sum(1 for t in header.tensors if not ggml.known(t.type_id))
    counted = f"{total:,} bytes" + (f" ({unknown:,} of an unknown type not counted)" if unknown else "")
    architecture = architecture_cell(header)
    lines = [
        printable(f"{header.source}"),
        f"  architecture  {architecture}   GGUF v{header.version}, {header.byte_order}-endian, "
        f"{len(header.shards)} file{'s' if len(header.shards) != 1 else ''}",
        # A split checkpoint's header bytes are its files' sum, and its data offset the first file's: said so
        # (walk45: "header 1,870 bytes; tensor data at byte 896" read as data starting inside the header).
        f"  header        {header.header_bytes:,} bytes; tensor data at byte {header.data_offset:,} "
        f"(alignment {header.alignment})" if len(header.shards) < 2 else
        f"  header        {header.header_bytes:,} bytes in {len(header.shards):,} files, "
        f"{header.shards[0].header_bytes:,} in the first, its tensor data at byte {header.shards[0].data_offset:,} "
        f"(alignment {header.alignment})",
        f"  sha256        {header.sha256}",
        f"  tensors       {len(header.tensors):,}, {counted}",
        "",
    ]
    shape_rows = []
    for key in _SUMMARY_KEYS:
        value = header.meta(key)
        if value is not None:
            shape_rows.append([printable(f"{header.architecture}.{key}"), metadata_text(value)])
    lines.append(text_table(["shape", "value"], shape_rows))
    lines.append("")
    lines.append(
        text_table(
            ["type", "tensors", "bytes"],
            [[name, str(n), f"{b:,}" if not name.startswith("type#") else "unknown"]
             for name, (n, b) in sorted(by_type.items())],
            right=(1, 2),
        )
    )
    if show_metadata:
        lines.append("")
        rows = []
        for k, v in header.metadata.items():
            shown = metadata_text(v)
            shown = shown if len(shown) < 100 else shown[:97] + "..."
            rows.append([printable(k), header.value_types.get(k, "?"), shown])
        lines.append(text_table(["key", "type", "value"], rows))
    if show_tensors:
        lines.append("")
        rows = [
            [
                printable(t.name),
                t.type_name,
                "×".join(str(d) for d in t.dims),
                f"{ggml.tensor_bytes(t.type_id, t.dims):,}" if ggml.known(t.type_id) else "?",
            ]
            for t in header.tensors
        ]
        lines.append(text_table(["tensor", "type", "dims", "bytes"], rows, right=(3,)))
    return "\n".join(lines)


def expected_json(expected: Any) -> dict[str, Any]:
    """The ``--json`` object of a price under a serving stack (issue 14): the limit's documented object, then
    ``stack`` (its name), ``expected`` (the same object for the stack's expected pass), ``ratio`` (expected tokens/s
    over the limit's) and ``fixed_s`` (the fixed seconds each expected pass pays)."""
    out = cost_json(expected.limit)
    out["stack"] = expected.stack.name
    out["expected"] = cost_json(expected.expected)
    out["ratio"] = expected.ratio
    out["fixed_s"] = expected.fixed_s
    return out


def expected_text(expected: Any) -> str:
    """The lines a price under a serving stack adds after the limit's table: the expected tokens/s beside the
    limit's and their ratio, the expected pass (its fixed seconds and terms at the stack's shares), the memory the
    runtime reserves, and the expected price's provenance."""
    e, limit, stack = expected.expected, expected.limit, expected.stack
    tpot = e.pass_s / e.emitted_per_sequence
    batch = "" if e.batch == limit.batch else f" at batch {e.batch:,}, its best where its facts hold"
    terms = " · ".join(f"{b.value} {si(s, 's')}" for b, s in e.terms().items() if s > 0)
    # How the line's figures add up to the pass (walk45: "4.211 ms: fixed 2.706 ms, … memory 1.025 ms · array
    # 256.5 µs …" did not say the others add at terms.serial, so no reader could sum it).
    serial_fact = stack.fact("terms.serial", e.card)
    serial = serial_fact[1].value if serial_fact is not None else 0.0
    others = any(s > 0 for b, s in e.terms().items() if b != e.binds)
    adds = f"fixed + {e.binds.value}" + (f" + terms.serial {serial:g} × the others" if serial > 0 and others else "")
    reserved = limit.capacity_bytes - e.capacity_bytes
    lines = [
        "",
        # its title after a dash: a title holding parentheses nested in them (leftovers 28)
        f"  stack         {titled(stack.name, stack.title)}",
        # At another batch than the limit's, the ratio is best against best, and says so: the fitted span's line
        # gives another, at the same batch (leftovers 28: "0.007122 × … at its own best batch" beside "0.2384 × the
        # limit at its batch, 1" read as two figures of one thing).
        f"  expected      {count(round(e.tokens_per_s, 1))} tokens/s{batch} (TPOT {si(tpot, 's')} per sequence): "
        f"{expected.ratio:.4g} × the limit's {count(round(limit.tokens_per_s, 1))}"
        + ("" if e.batch == limit.batch else f", best against best (the limit at its own best batch, {limit.batch:,})"),
        f"  pass          {si(e.pass_s, 's')}: fixed {si(expected.fixed_s, 's')}, terms at the stack's shares "
        f"{terms} (binds on {e.binds.value}; pass = {adds})",
        f"  held          {si(e.held_bytes, 'B')} of {si(e.capacity_bytes, 'B')} card memory the runtime leaves "
        f"({si(reserved, 'B')} reserved)",
        f"  provenance    {e.provenance.value} — weakest: {', '.join(e.weakest)}",
    ]
    if expected.held is not None:  # where the stack's facts hold (range.*, issue 14)
        h = expected.held
        rows = f"batch {h.rows[0]:,} … {h.rows[1]:,}" if e.rows_per_sequence == 1 else (
            f"{h.rows[0]:,} … {h.rows[1]:,} token-rows a pass")
        lines.insert(-1, f"  holds on      {rows}, cached positions {h.positions[0]:,.0f} … {h.positions[1]:,.0f} "
                         "(range.*: where its runs were measured)")
    return "\n".join(lines)


def non_finite(data: Any, path: str = "") -> tuple[str, float] | None:
    """The key path and value of the first number in ``data`` that is not finite (``inf``, ``nan``), if any."""
    if isinstance(data, float):
        return None if math.isfinite(data) else (path or "(top level)", data)
    items: Any = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list | tuple) else ()
    for key, value in items:
        found = non_finite(value, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def require_finite(data: Any) -> None:
    """Raise :class:`~passprice.errors.InputError` (one line naming the key path and the value) when a result (the
    JSON-able ``data`` of a price, a lock's recorded price …) holds a number that is not finite: the facts or options
    priced are out of any physical range (a bandwidth, rate or share so small that a pass never ends), and JSON
    cannot carry it."""
    try:
        json.dumps(data, allow_nan=False)  # the C encoder's walk; only a result that fails it is walked for the path
        return
    except (TypeError, ValueError):
        pass
    found = non_finite(data)
    if found is not None:
        raise InputError(
            f"the result's {found[0]} is {found[1]!r}: a fact or option is out of range (a bandwidth, rate or share so "
            "small, or a figure so large, that the pass takes no finite time)"
        )
