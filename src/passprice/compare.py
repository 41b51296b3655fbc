"""Cards compared for one serving: each card's best batch, priced by the one best-batch search every command uses.

A comparison across cards is a what-if: a serving's locks lock its own card, so no row is judged under them (the
table says so, and names the command that prices the serving's own card under its locks). A card the serving does
not fit on, or cannot be priced on, is a row carrying its refusal by name, never a guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from passprice.errors import escaped
from passprice.files import shell_word

if TYPE_CHECKING:
    from passprice.registry import Root
    from passprice.serving import ServingCost, ServingRefusal
    from passprice.servings import ServingSpec
    from passprice.stacks import Expected, Stack


@attrs.frozen
class CardBest:
    """One card's row: ``card`` (its registry name) and ``title``; ``cost``, the best batch's priced pass
    (:func:`passprice.serving.best_serving`: tokens/s, seconds, bytes) or ``None`` when refused; ``refusal``, the
    :class:`~passprice.serving.ServingRefusal` that refused it (``NotResident``, ``OverTPOT`` …) or ``None``;
    under a serving stack, ``expected`` (:class:`~passprice.stacks.Expected`: the limit's best and the stack's,
    each at its own best batch) and ``cost`` the stack's best pass."""

    card: str
    title: str
    cost: ServingCost | None = attrs.field(default=None, eq=False)
    refusal: ServingRefusal | None = attrs.field(default=None, eq=False)
    expected: Expected | None = attrs.field(default=None, eq=False)
    #: What its memory capacity figure is (:meth:`passprice.cards.Card.capacity_said`), ``None`` when not given.
    capacity: str | None = attrs.field(default=None, eq=False)
    #: A paged serving's ``spread`` as ``best --json`` gives it (:func:`passprice.report.spread_json`: the mean
    #: position the batch is counted at, the last positions, ``last_max_batch`` and under a stack
    #: ``stack_last_max_batch``); ``None`` for a contiguous cache or a refused card.
    spread: dict[str, Any] | None = attrs.field(default=None, eq=False)

    @property
    def spread_batch(self) -> int | None:
        """The sequences memory holds were every one of the row's batch at its last position (``spread``'s
        ``stack_last_max_batch`` under a stack, whose best batch the row is, else ``last_max_batch``); ``None``
        without a spread."""
        if self.spread is None:
            return None
        return int(self.spread.get("stack_last_max_batch", self.spread["last_max_batch"]))

    @property
    def tpot(self) -> float | None:
        """Time per output token of a sequence at the best batch, seconds: the pass over the tokens a sequence
        emits in it (``None`` when refused)."""
        return None if self.cost is None else self.cost.pass_s / self.cost.emitted_per_sequence


#: What ``--cards`` takes, said by each of :func:`parse_cards`' refusals.
CARDS_TAKE = "give names, comma-separated, or 'all'"


def parse_cards(text: str, option: str = "--cards") -> tuple[str, ...] | None:
    """The cards a ``--cards`` value names, the one reading of it ``compare``, ``sweep`` and ``kv`` share: ``None``
    for ``all`` (every registered card), else the names (registry names or card files), each stripped of spaces, in
    the order given. Raises :class:`~passprice.errors.InputError` (exit 2), one line naming ``option``, for no name
    (``''``, ``','``), an empty name between commas (``b200,,mi300x``, which compare read as two cards), ``all``
    beside names (``all,b200``, read as a card named ``all``: not found), and a name given twice (``b200,b200``,
    which compare priced twice; sweep refused it). Fix181: each command read the list its own way."""
    from passprice.errors import InputError

    if text.strip() == "all":
        return None
    names = [part.strip() for part in text.split(",")]
    if not any(names):
        raise InputError(f"{option}: no cards ({CARDS_TAKE})")
    if not all(names):
        raise InputError(f"{option}: {escaped(text)!r} holds an empty name between commas ({CARDS_TAKE})")
    if "all" in names:
        raise InputError(f"{option}: 'all' is every card, not a name beside others: give 'all' alone, or names, "
                         "comma-separated")
    seen: set[str] = set()
    twice = next((n for n in names if n in seen or seen.add(n)), None)  # type: ignore[func-returns-value]
    if twice is not None:
        raise InputError(f"{option}: {escaped(twice)!r} is given more than once: each card is priced once")
    return tuple(names)


def missing_cards(root: Root, cards: Sequence[str]) -> list[str]:
    """One ``--cards: …`` line for each of ``cards`` (registry names or card files) that names no card file: what
    :func:`compare_cards` says of them, for a command that stops before it (a wrong serving said with them). Raises
    nothing."""
    from passprice.cards import card_path
    from passprice.errors import InputError
    from passprice.registry import MAX_NOT_FOUND

    problems: list[str] = []
    not_looked = 0
    for card in dict.fromkeys(cards):
        if len(problems) >= MAX_NOT_FOUND:
            not_looked += 1
            continue
        try:
            card_path(root, card)
        except InputError as e:
            problems.append(f"--cards: {e}")
    return problems + ([_not_looked(not_looked)] if not_looked else [])


def _not_looked(count: int) -> str:
    """The line counting the ``count`` card names not looked up past :data:`passprice.registry.MAX_NOT_FOUND`."""
    from passprice.registry import MAX_NOT_FOUND

    return f"--cards: {count:,} more card names not looked up after {MAX_NOT_FOUND} not found: correct these first"


def compare_cards(
    root: Root, spec: ServingSpec, cards: Iterable[str], stack: Stack | None = None
) -> list[CardBest]:
    """``spec`` (a serving's choices: checkpoint, contexts, cache, drafts, ``max_tpot`` …) priced at its best batch
    on each card of ``cards`` (registry names or card files), fastest first; refused cards last, in the order given.

    The best batch is :func:`passprice.serving.best_serving`'s (the seed's ``best_serving``, bounded by the serving's
    TPOT cap when it has one); under a serving ``stack``, the stack's best batch where its facts hold
    (:func:`passprice.stacks.price_expected`, kind ``best``, as ``best --stack``), fastest by its expected tokens/s,
    a card the stack cannot price refused by name (``StackLacks``, ``BeyondStack``). Raises
    :class:`~passprice.errors.InputError` for a card or checkpoint that does not read, and for a serving file whose
    own ``card`` names no card (exit 2, as every command); a card the price refuses is a row with its refusal."""
    from passprice.cards import card_path
    from passprice.errors import InputError, NotFound
    from passprice.registry import named_in
    from passprice.serving import ServingRefusal, best_serving
    from passprice.servings import resolve

    if spec.source is not None:  # the serving file's own card, which its locks lock (the table's closing note)
        try:
            card_path(root, spec.card)
        except NotFound as e:
            raise InputError(f"{named_in(root, spec.source)}: card: {e}") from None
    from passprice.registry import MAX_NOT_FOUND

    files: dict[str, str] = {}  # one row a card file: its name and its path (or a link to it) name it once
    problems: list[str] = []
    not_looked = 0
    for card in dict.fromkeys(cards):  # a name the registry lacks is the option's error, not the serving file's card's
        if len(problems) >= MAX_NOT_FOUND:  # 5,000 unknown names took 12.7 s (attack round 47)
            not_looked += 1
            continue
        try:
            files.setdefault(os.path.realpath(card_path(root, card)), card)
        except InputError as e:
            problems.append(f"--cards: {e}")
    if not_looked:
        problems.append(_not_looked(not_looked))
    if problems:  # every wrong card said, and a wrong checkpoint with them (round 18: the first card alone)
        from passprice.checkpoints import load_checkpoint

        try:
            load_checkpoint(root, spec.checkpoint)
        except InputError as e:
            where = (f"{named_in(root, spec.source)}: checkpoint: " if spec.source is not None
                     and isinstance(e, NotFound) else "")
            problems[:0] = [f"{where}{line}" for line in e.lines]
        raise InputError.of(problems)
    cards = tuple(files.values())
    priced: list[CardBest] = []
    refused: list[CardBest] = []
    for card in cards:
        resolved = resolve(root, attrs.evolve(spec, card=card))
        title = resolved.card.title
        try:
            if stack is not None:
                from passprice.stacks import price_expected

                expected = price_expected(resolved.header, resolved.card, resolved.serving, stack, "best")
                priced.append(CardBest(resolved.card.name, title, cost=expected.expected, expected=expected,
                                       capacity=resolved.card.capacity_said(),
                                       spread=_spread(resolved, stack)))
                continue
            cost = best_serving(resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            refused.append(CardBest(resolved.card.name, title, refusal=e, capacity=resolved.card.capacity_said()))
            continue
        priced.append(CardBest(resolved.card.name, title, cost=cost, capacity=resolved.card.capacity_said(),
                               spread=_spread(resolved)))
    priced.sort(key=lambda row: -row.cost.tokens_per_s if row.cost is not None else 0.0)
    return priced + refused


def _spread(resolved: Any, stack: Stack | None = None) -> dict[str, Any] | None:
    """A priced card's ``spread`` (:func:`passprice.report.spread_json`) of ``resolved`` (a
    :class:`passprice.servings.Resolved`): ``None`` for a contiguous cache; under ``stack`` with the room its runtime
    leaves (:func:`passprice.stacks.stack_room`), as ``best --stack`` gives it. A new user read ``compare``'s 605 on
    the H200 with no word that 304 fit at the last position, which ``best`` says (tests/test_fix166.py). Raises what
    :func:`passprice.serving.memory_bound` raises (nothing the best batch did not raise first)."""
    from passprice.report import spread_json
    from passprice.serving import last_position_bound, memory_bound

    last = last_position_bound(resolved.header, resolved.card, resolved.serving)
    if last is None:
        return None
    room = None
    if stack is not None:
        from passprice.stacks import stack_room

        room = last_position_bound(resolved.header, resolved.card, resolved.serving,
                                   stack_room(resolved.header, resolved.card, resolved.serving, stack))
    return spread_json(resolved.serving, memory_bound(resolved.header, resolved.card, resolved.serving), last, room)


def comparison_json(rows: list[CardBest]) -> list[dict[str, Any]]:
    """The rows for ``--json``: ``card``, ``title``, then the best batch's price as ``best --json`` gives it
    (:func:`passprice.report.cost_json`) with ``tpot_s``, or ``refusal`` (the refusal's own JSON); under a stack,
    as ``best --stack --json`` gives it (:func:`passprice.report.expected_json`: the limit's best, ``stack``,
    ``expected``, ``ratio``, ``fixed_s``) with the expected best's ``tpot_s``; a priced row's ``spread`` as ``best
    --json`` names it (:attr:`CardBest.spread`, ``null`` for a contiguous cache)."""
    from passprice.report import cost_json, expected_json

    out: list[dict[str, Any]] = []
    for row in rows:
        if row.expected is not None:
            out.append({"card": row.card, "title": row.title, **expected_json(row.expected), "tpot_s": row.tpot,
                        "spread": row.spread})
        elif row.cost is not None:
            out.append({"card": row.card, "title": row.title, **cost_json(row.cost), "tpot_s": row.tpot,
                        "spread": row.spread})
        elif row.refusal is not None:
            out.append({"card": row.card, "title": row.title, **row.refusal.to_json()})
    return out


def refused_line(rows: list[CardBest]) -> str:
    """What ``compare`` says when no card of ``rows`` (every one refused, at least one) prices the serving: the
    first card's refusal in full, and on which card; ``the others likewise`` when every other card is refused by
    the same refusal, else how many are and each other refusal by name with its cards (``NotResident on 7 cards
    (a100_sxm4_80gb, b200, h100_sxm5_80gb +4 more)``), since one card's refusal said of all misleads (``--host-memory``
    is refused ``NoHostLink`` by a card without a host link, ``NotResident`` by one with)."""
    by_name: dict[str, list[str]] = {}
    for row in rows:
        if row.refusal is not None:
            by_name.setdefault(row.refusal.name, []).append(row.card)
    first = next(r.refusal for r in rows if r.refusal is not None)
    line = f"no card of the {len(rows)} compared prices it: {first.name}: {first}"
    if len(rows) == 1:
        return line
    if len(by_name) == 1:
        return line + f" (on {rows[0].card}; the others likewise)"
    alike = len(by_name[first.name]) - 1
    line += f" (on {rows[0].card}" + (f"; {alike:,} other{'s' if alike != 1 else ''} likewise)" if alike else ")")
    others = [f"{name} on {len(cards):,} card{'s' if len(cards) != 1 else ''} ({_first(tuple(cards))})"
              for name, cards in by_name.items() if name != first.name]
    return line + "; refused otherwise: " + "; ".join(others)


REASON_CHARS = 100
"""The most characters of a refusal's first clause a row shows (walkthrough 11: a row ~240 characters wide)."""
HEADROOM = 0.95
"""The share of card memory past which a best batch is said to leave no room (as ``best``'s headroom line)."""


def _first(paths: tuple[str, ...], most: int = 3) -> str:
    """The first ``most`` fact paths, and how many more."""
    return ", ".join(paths[:most]) + (f" +{len(paths) - most} more" if len(paths) > most else "")


def comparison_text(rows: list[CardBest], what: str, summary: str, note: str, stack: str | None = None) -> str:
    """The table for people, under ``what`` (the serving and checkpoint) and ``summary`` (its choices,
    :func:`passprice.report.spec_summary`): one line a card (best batch, tokens/s, TPOT, the binding term, card
    memory held, the weakest provenance and the facts carrying it), refused cards with their refusal's name and
    first clause, a headroom line when best batches fill over :data:`HEADROOM` of card memory, and ``note``
    (:func:`lock_note`) on the lock line. Under a serving ``stack`` (its name) the rows are the stack's best
    batches, with a column of each one's expected tokens/s over the limit's best (``× limit``)."""
    from passprice.tables import count, percent, si, text_table

    table = []
    for row in rows:
        if row.cost is not None and row.tpot is not None:
            c = row.cost
            ratio = [f"{row.expected.ratio:.4g}"] if row.expected is not None else []
            table.append([
                row.card, f"{c.batch:,}", count(round(c.tokens_per_s, 1)), *ratio, si(row.tpot, "s"), c.binds.value,
                percent(c.held_bytes, c.capacity_bytes), f"{c.provenance.value} ({_first(c.weakest)})",
            ])
        elif row.refusal is not None:
            reason = str(row.refusal).split(";")[0]
            if len(reason) > REASON_CHARS:  # the whole line is in --json and in `best --card CARD`
                reason = reason[: REASON_CHARS - 1].rstrip() + "…"
            dashes = ["—"] * (6 if stack is not None else 5)
            table.append([row.card, *dashes, f"refused: {row.refusal.name}: {reason}"])
    under = f" under stack {stack}" if stack is not None else ""
    lines = [f"best batch{under} on each card, fastest first: {escaped(what)}", f"  {summary}"]
    routed = next((r.cost for r in rows if r.cost is not None and r.cost.routed is not None), None)
    if routed is not None and routed.routed is not None:
        # A mixture of experts ranks the cards on the routing record it was priced on, which the summary did not
        # name (walkthrough 27: the MI300X-against-H200 choice rested on a record shown nowhere).
        from passprice.routing import description

        facts = dict(routed.rests_on)
        hot, share = facts.get("routing.hot_experts"), facts.get("routing.hot_share")
        r = routed.routed
        said = description(r.routing, hot, share, r.experts) if hot is not None and share is not None else r.description
        lines.append(f"  routing {said}: every row rests on it (--routing NAME prices another)")
    lines.append("")
    head = ["card", "batch", "tokens/s", *(["× limit"] if stack is not None else []), "TPOT", "binds", "held",
            "weakest provenance"]
    right = (1, 2, 3, 4, 6) if stack is not None else (1, 2, 3, 5)
    lines.append(text_table(head, table, right=right))
    kinds: dict[str, list[str]] = {}
    for row in rows:
        if row.capacity is not None:
            kinds.setdefault(row.capacity.split(" (")[0], []).append(row.card)
    if len(kinds) > 1:  # an 80 GB datasheet figure beside nvidia-smi's 81,559 MiB: the batches compare the two as given
        lines.append("\n  memory        " + "; ".join(f"{kind}: {', '.join(cards)}" for kind, cards in kinds.items())
                     + " (a batch bounded by memory compares the two as given; `passprice max-batch` names each "
                     "source)")
    lines += spread_lines(rows, stack)
    full = [r.card for r in rows if r.cost is not None and r.cost.held_bytes > HEADROOM * r.cost.capacity_bytes]
    if full:
        # Of the cards priced (walk45: "on 9 of 17 cards" for gpt-oss-120b, whose 8 others refuse it NotResident:
        # every card that holds it was full, which "9 of 17" hid).
        priced = sum(1 for r in rows if r.cost is not None)
        among = f"{len(full)} of {len(rows)} cards" if priced == len(rows) else (
            f"{len(full)} of the {priced} cards priced ({len(rows) - priced} refused)")
        from passprice.report import ROOM_BEST

        lines.append(f"\n  headroom      the best batch holds over {HEADROOM * 100:.0f} % of card memory on "
                     f"{among}: passprice counts no runtime workspace, activations or "
                     f"fragmentation, so leave room ({ROOM_BEST}) before serving one of these")
    held = next((r.expected for r in rows if r.expected is not None and r.expected.held is not None), None)
    if held is not None and held.held is not None:
        # Walkthrough 49: every row read batch 1 under llamacpp-cuda-2405, and nothing said the stack's range, not
        # the cards, chose it ("which batch gives the lowest TPOT" could not be read off the table).
        h, rows_per = held.held, held.expected.rows_per_sequence
        within = f"batch {h.rows[0]:,} … {h.rows[1]:,}" if rows_per == 1 else (
            f"{h.rows[0]:,} … {h.rows[1]:,} token-rows a pass")
        lines.append(f"\n  holds on      {within}, cached positions {h.positions[0]:,.0f} … {h.positions[1]:,.0f} "
                     "(range.*: where the stack's runs were measured): each card's best batch is sought within it")
    lines.append(f"\n  lock          {note}")
    return "\n".join(lines)


def spread_lines(rows: Sequence[CardBest], stack: str | None = None) -> list[str]:
    """The ``spread`` lines of :func:`comparison_text`: for a paged serving, one line a priced card whose best batch
    (``rows``' ``cost.batch``) is more than memory holds were every sequence at its last position
    (:attr:`CardBest.spread_batch`, in the room the ``stack``'s runtime leaves under one), under one line saying the
    batches are counted at the mean position and fit only while positions stay spread about it, as ``best``'s
    spread line says of one card (``h200_sxm_141gb  605, 304 at the last position``); empty when every batch fits
    however positions stand, or the cache is contiguous. Raises nothing."""
    from passprice.tables import count, text_table

    over = [(r, r.spread_batch) for r in rows if r.cost is not None and r.spread is not None
            and r.spread_batch is not None and r.cost.batch > r.spread_batch]
    if not over:
        return []
    spread = over[0][0].spread
    assert spread is not None
    positions = spread["last_positions"]
    last = (f"its last position, {count(positions[0])}" if len(positions) == 1
            else "its class's last position (its limit − 1)")
    room = " in the room the stack's runtime leaves" if stack is not None else ""
    table = text_table(["card", "batch", "at the last position"],
                       [[r.card, count(r.cost.batch if r.cost is not None else 0), count(n)] for r, n in over],
                       right=(1, 2))
    return [f"\n  spread        each batch is counted with every sequence at the mean position "
            f"{count(spread['mean_position'])}: it fits only while positions stay spread about it; were every "
            f"sequence at {last}, memory{room} would hold fewer (`--position` prices that case):",
            *(f"                {line}" for line in table.splitlines())]


def lock_note(root: Root, serving: str | None, own_card: str) -> str:
    """What the comparison says about locks: none applies (a what-if across cards); for a registered serving with
    locks in ``locks/``, which (by file name) and that they lock ``own_card`` (``best SERVING`` prices under them),
    else that the serving has none (walkthrough 11: the line named locks of a serving that had none). Raises
    :class:`~passprice.errors.InputError` for a lock file that does not read and
    :class:`~passprice.enforce.LockForged` for one whose pinned inputs do not give its record (as every pricing
    command)."""
    from passprice.enforce import serving_name
    from passprice.locks import locks_of

    head = "none: a comparison across cards is a what-if"
    name = serving_name(root, serving) if serving is not None else None
    if name is None:
        return head
    locks = locks_of(root, name)
    if not locks:
        return f"{head} (no lock of {name} in locks/)"
    from passprice.enforce import require_unforged_files

    # a forged lock refuses the comparison as every pricing command (slip 53); compare takes no --no-lock
    require_unforged_files(root, locks, no_lock=False)
    names = ", ".join(p.name.removesuffix(".lock.toml") for p in locks)
    best = f"passprice best {shell_word(serving or name)}"  # a command to paste (attack round 44)
    return f"{head} (the serving's locks, {names}, lock {own_card}; `{best}` prices it under them)"
