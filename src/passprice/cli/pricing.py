"""The commands that price one serving's pass: ``new-serving`` (write one), ``price``, ``best``, ``compare`` and
``max-batch``, each a call of the library's pricing under the serving's locks, printed as a table or ``--json``."""

from __future__ import annotations

from typing import Any

import click

from passprice.cli.app import Refused, _echo_json, _finite, _json_option, _root, cli
from passprice.cli.options import (
    _STACK_HELP,
    _cap_named,
    _cap_unused,
    _defaulted_json,
    _echo_defaulted,
    _every_expert_json,
    _expected,
    _fit_check,
    _fit_stale,
    _fit_words,
    _kept_problems,
    _load_all,
    _lock_options,
    _lock_stack,
    _outside_line,
    _own_serving,
    _ratio_reach,
    _refuse,
    _resolve,
    _routing_note,
    _serving_options,
    _serving_span,
    _span_text,
    _spec,
    _stack_facts,
    _stack_warnings,
    _stale,
    _under_locks,
    _with_routing_note,
    _with_span,
)
from passprice.cli.params import _require_unicode
from passprice.errors import InputError, NotFound, escaped
from passprice.files import shell_word


@cli.command("new-serving")
@click.argument("name")
@_serving_options(with_batch=True)
@click.option(
    "--description", help="What the serving is for (one line; shown by `passprice servings`; not copied from SERVING)."
)
@click.option("--force", is_flag=True, help="Overwrite an existing serving file.")
@_json_option
@click.pass_context
def new_serving_command(
    ctx: click.Context, /, name: str, serving: str | None, description: str | None, force: bool, as_json: bool,
    **o: Any,
) -> None:
    """Write registry/servings/NAME.toml: the serving the options describe (SERVING with them applied, or
    --checkpoint on --card), every default made explicit, validated as every serving file is. Price it with
    `passprice price NAME`."""
    from passprice.edit import replacing
    from passprice.servingfile import own_description, write_serving

    description = _require_unicode(description, "--description")
    target = _root(ctx).servings / f"{name}.toml"
    ctx.with_resource(replacing(target, force))  # SERVING read and NAME replaced while no other writer can
    root, spec = _spec(ctx, serving, **o)
    if description is None:
        description = own_description(root, name, serving)
    from passprice.registry import require_not_other_record

    require_not_other_record(root, root.servings / f"{name}.toml")
    written = write_serving(root, name, spec, description=description, force=force)
    if written.warning is not None:
        click.echo(f"passprice: warning: {escaped(written.warning)}", err=True)
    if as_json:
        from passprice.servings import spec_to_document

        _echo_json({"serving": written.name, "path": str(written.path), "document": spec_to_document(written.spec)})
        return
    spec = written.spec
    contexts = ", ".join(f"{c.share:g} at position {c.position:g} of {c.limit}" for c in spec.contexts or ())
    from passprice.registry import named_in

    click.echo(f"wrote {named_in(root, written.path)}: {spec.checkpoint} on {spec.card}, batch {spec.batch}, contexts "
               f"{contexts}; price it with `passprice price {shell_word(written.name)}`")


@cli.command("price")
@_serving_options(with_batch=True)
@_lock_options
@click.option("--stack", metavar="S", help=_STACK_HELP)
@_json_option
@click.pass_context
def price_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Price one decode pass of SERVING (or of --checkpoint on --card), under its locks in locks/. With --lock L and
    no SERVING, price L's own serving (its kind: a best lock prices the best batch; a lock made under a stack, under
    it) with today's facts."""
    from passprice.locks import evaluate
    from passprice.report import (
        cost_json,
        cost_text,
        expected_json,
        float_matrices,
        routed_expert_bytes,
    )
    from passprice.serving import ServingRefusal

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    kind = the_lock.kind if the_lock is not None else "price"
    if kind != "best":  # accepted silently before (issue 13): a price at a batch given reads no memory headroom
        _cap_unused({**o, "max_tpot": None}, "price prices the serving's batch")
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    expected = None
    if stack is not None:
        expected = _expected(ctx, stack, resolved, kind)
        cost = expected.limit
    else:
        try:
            cost = evaluate(kind, resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            _refuse(e)
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(
        root, named, resolved, lock_ref, no_lock, cost.rests_on, _stack_facts(expected)
    )
    data = cost_json(cost) if expected is None else expected_json(expected)
    _finite(data)
    # a lock whose recorded price this is not, and why
    moved = g.moved(root, kind, data, resolved, _stack_facts(expected),
                    expected.stack if expected is not None else None)
    # a title, hypothetical mark, description the lock pinned; a citation changed, no number moved (slip 43)
    relabels, drifts = g.since(root, resolved, named, data, moved, _stack_facts(expected),
                               stack=expected.stack if expected is not None else None)
    given = g.options(root, resolved, named, moved)  # options that make the serving another than the locked one
    stale = _stale(resolved, data, expected)  # a derived fact it rests on whose inputs moved
    note = _routing_note(resolved, cost)
    reach = _ratio_reach(ctx, expected, resolved)
    fitted = _fit_check(ctx, expected, lock_ref)
    if as_json:
        from passprice.report import with_tpot

        _echo_json({**_with_span(_with_routing_note(with_tpot(data), note, resolved.header), reach),
                          **_every_expert_json(resolved),
                          **_defaulted_json(resolved.header),
                          **({} if fitted is None else {"stack_fit": fitted.to_json()}),
                          "stale": stale.to_json(), "lock": g.to_json(moved, relabels, drifts, given)})
    else:
        from passprice.cards import shown_title
        # a checkpoint named by a path holding U+202E is escaped for people, as --json escapes it (left43)
        title = f"{escaped(resolved.spec.checkpoint)} on {resolved.card.name} ({shown_title(resolved.card)})"
        text = cost_text(cost, title, resolved.spec, float_matrices(resolved.header, resolved.card),
                         under_stack=expected is not None, routing_note=note,
                         experts_held=routed_expert_bytes(resolved.header) if cost.routed is not None else None,
                         every=_every_expert_json(resolved).get("every_expert"))
        if o.get("max_tpot") is not None:  # the command line's cap, said so (as OverTPOT says it: _cap_named)
            text = text.replace("against the serving's cap of ", "against the --max-tpot cap of ", 1).replace(
                "(max_tpot bounds the best batch's search", "(it bounds the best batch's search", 1)
        click.echo(text)
        _echo_defaulted(resolved.header)
        if expected is not None:
            click.echo(_expected_text(expected))
            if reach is not None and reach.runs:
                click.echo(f"  fitted span   {reach.line(_fit_stale(fitted))}")
        if stale:
            click.echo(f"\n  stale         {stale.line()}")
        said = g.line(verdicts, moved, kind, given, relabels=relabels, drifted=drifts, stale_fit=_fit_words(fitted))
        click.echo(f"\n  lock          {said}")


def _spread(resolved: Any) -> tuple[Any, Any] | None:
    """A paged serving's memory bounds at its mean position and with every sequence at its last
    (:func:`passprice.serving.memory_bound`, :func:`passprice.serving.last_position_bound`); ``None`` for a
    contiguous cache."""
    from passprice.serving import last_position_bound, memory_bound

    last = last_position_bound(resolved.header, resolved.card, resolved.serving)
    if last is None:
        return None
    return memory_bound(resolved.header, resolved.card, resolved.serving), last


def _stack_spread(resolved: Any, stack: Any, batch: int) -> tuple[str, int, float, Any]:
    """``--stack``'s part of the spread (``best``, ``max-batch``): the stack's name, its batch ``batch`` (``best``'s
    best, ``max-batch``'s most), the bytes its runtime reserves and :func:`passprice.serving.last_position_bound` in
    the room it leaves (:func:`passprice.stacks.stack_room`)."""
    from passprice.cost import Pricing
    from passprice.serving import last_position_bound
    from passprice.stacks import stack_room

    room = stack_room(resolved.header, resolved.card, resolved.serving, stack)
    return (stack.name, batch, Pricing.limit(resolved.card).capacity - room.capacity,
            last_position_bound(resolved.header, resolved.card, resolved.serving, room))

def _expected_text(expected: Any) -> str:
    """:func:`passprice.report.expected_text` of ``expected`` (a price under a serving stack), its ``pass`` line
    naming the array term ``array (at the vector rate)`` under a stack whose ``integer_matrices = "vector"``: its
    integer matrices are priced at the card's vector rate, and "array 256.5 µs" read as the tensor cores' (a new
    user's ``price r1-qwen7b-h200 --stack llamacpp-cuda-2405``; tests/test_fix166.py). The table alone: ``--json``
    keeps ``array_s``. Said here, not in the report module, which is part of the pricing model that locks pin by
    digest. Raises nothing."""
    import re

    from passprice.report import expected_text

    text = expected_text(expected)
    if expected.stack.integer_matrices != "vector":
        return text
    # the array term on the pass line (``shares memory 1.025 ms · array 256.5 µs · …``), first or after another
    term = re.compile(r"(?<=shares )array (?=\d)|(?<= · )array (?=\d)")
    return "\n".join(term.sub("array (at the vector rate) ", line, count=1) if line.startswith("  pass ")
                     else line for line in text.split("\n"))


@cli.command("best")
@_serving_options(with_batch=False)
@_lock_options
@click.option("--stack", metavar="S", help=_STACK_HELP + " The stack's best batch may differ.")
@_json_option
@click.pass_context
def best_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """The batch that emits the most tokens per second, and its pass, under the serving's locks."""
    from passprice.report import (
        cost_json,
        cost_text,
        expected_json,
        float_matrices,
        routed_expert_bytes,
        spread_json,
        spread_text,
    )
    from passprice.serving import ServingRefusal, best_serving

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    expected = _expected(ctx, stack, resolved, "best") if stack is not None else None
    if expected is not None:
        cost = expected.limit
    else:
        try:
            cost = best_serving(resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            _refuse(_cap_named(ctx, e))
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(
        root, named, resolved, lock_ref, no_lock, cost.rests_on, _stack_facts(expected)
    )
    data = cost_json(cost) if expected is None else expected_json(expected)
    _finite(data)
    # a best lock whose recorded price this is not, and why
    moved = g.moved(root, "best", data, resolved, _stack_facts(expected),
                    expected.stack if expected is not None else None)
    # a title, hypothetical mark, description the lock pinned; a citation changed, no number moved (slip 43)
    relabels, drifts = g.since(root, resolved, named, data, moved, _stack_facts(expected),
                               stack=expected.stack if expected is not None else None)
    given = g.options(root, resolved, named, moved)  # options that make the serving another than the locked one
    stale = _stale(resolved, data, expected)  # a derived fact it rests on whose inputs moved
    note = _routing_note(resolved, cost)
    reach = _ratio_reach(ctx, expected, resolved)
    fitted = _fit_check(ctx, expected, lock_ref)
    spread = _spread(resolved)  # the limit's batch in card memory; under a stack its batch in the room it leaves too
    under = (_stack_spread(resolved, expected.stack, expected.expected.batch) if spread and expected is not None
             else None)
    if as_json:
        from passprice.report import with_tpot

        _echo_json({**_with_span(_with_routing_note(with_tpot(data), note, resolved.header), reach),
                          **_every_expert_json(resolved),
                          **_defaulted_json(resolved.header),
                          "memory_use": resolved.serving.memory_use,  # the searches' headroom (walkthrough 39)
                          "spread": spread_json(resolved.serving, *spread, under[3] if under else None)
                          if spread else None,
                          **({} if fitted is None else {"stack_fit": fitted.to_json()}),
                          "stale": stale.to_json(), "lock": g.to_json(moved, relabels, drifts, given)})
    else:
        from passprice.cards import shown_title
        title = (f"best batch: {escaped(resolved.spec.checkpoint)} on {resolved.card.name} "
                 f"({shown_title(resolved.card)})")
        click.echo(cost_text(cost, title, resolved.spec, float_matrices(resolved.header, resolved.card),
                             under_stack=expected is not None, routing_note=note,
                             experts_held=routed_expert_bytes(resolved.header) if cost.routed is not None else None,
                             best=True, every=_every_expert_json(resolved).get("every_expert"),
                             spread=spread_text(cost.batch, resolved.serving, *spread, under) if spread else None))
        _echo_defaulted(resolved.header)
        if expected is not None:
            click.echo(_expected_text(expected))
            if reach is not None and reach.runs:
                click.echo(f"  fitted span   {reach.line(_fit_stale(fitted))}")
        if stale:
            click.echo(f"\n  stale         {stale.line()}")
        said = g.line(verdicts, moved, 'best', given, relabels=relabels, drifted=drifts, stale_fit=_fit_words(fitted))
        click.echo(f"\n  lock          {said}")


@cli.command("compare")
@_serving_options(with_batch=False)
@click.option("--cards", default="all", show_default=True, help="Cards to compare, comma-separated, or 'all'.")
@click.option("--stack", metavar="S", help="Compare the best batch under serving stack S on each card (its expected "
              "price, as best --stack); a card the stack cannot price is refused by name.")
@_json_option
@click.pass_context
def compare_command(
    ctx: click.Context, /, serving: str | None, cards: str, stack: str | None, as_json: bool, **o: Any
) -> None:
    """The serving's best batch on each card, fastest first: which card serves it best. A what-if across cards,
    judged under no lock (the serving's locks lock its own card: `best SERVING` prices it under them)."""
    import attrs

    from passprice.compare import compare_cards, comparison_json, comparison_text, lock_note, refused_line
    from passprice.report import spec_summary
    from passprice.servings import resolve

    root = _root(ctx)
    if o.get("card"):
        raise click.UsageError("give the cards with --cards (comma-separated, or 'all'), not --card")
    if serving is None and not o.get("checkpoint"):
        raise click.UsageError("give a SERVING, or --checkpoint (with the serving options it is priced with)")
    from passprice.compare import parse_cards

    named_cards = parse_cards(cards)  # one reading of --cards for compare, sweep and kv (fix181)
    if named_cards is None:  # as `cards`: the good ones compared, each bad card file one error line (exit 2)
        from passprice.cards import load_card

        card_list = tuple(name for name, _ in _load_all(root.names(root.cards), lambda name: load_card(root, name),
                                                        root=root))
        if not card_list and root.names(root.cards):
            # no card reads: their problems are all there is to say, in the one JSON document --json promises (it
            # printed none, session 29): no card compared, each problem as its stderr line says it (exit 2)
            if as_json:
                _echo_json({"serving": serving, "cards": [], "problems": _kept_problems()})
            return
    else:
        card_list = named_cards
    if serving is None:
        o["card"] = card_list[0]  # a serving needs a card to be built; each row replaces it
    try:
        root, spec = _spec(ctx, serving, **o)
    except NotFound as e:  # a wrong serving said with every wrong --cards name (round 18: the serving alone)
        from passprice.compare import missing_cards

        raise InputError.of([*e.lines, *missing_cards(root, card_list)]) from None
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    rows = compare_cards(root, spec, card_list, the_stack)
    from passprice.enforce import LockRefusal

    try:
        note = lock_note(root, serving, spec.card)
    except LockRefusal as e:
        _refuse(e)
    cards_json = comparison_json(rows)
    reaches = _compare_spans(root, spec, rows) if the_stack is not None else {}
    for row_json in cards_json:  # each card's expected best against the stack's fitted span, as best --stack's
        if row_json["card"] in reaches:
            row_json["stack_span"] = reaches[row_json["card"]].to_json()
    data = {"serving": serving, "checkpoint": spec.checkpoint,
            "own_card": spec.card if serving is not None else None, "cards": cards_json, "lock": note}
    if stack is not None:
        data["stack"] = stack
    data["problems"] = _kept_problems()  # a card file that does not read, left out of "cards"
    if all(r.cost is None for r in rows):  # as speculate: nothing priced is a refusal (exit 1), not a table
        raise Refused(refused_line(rows), data)
    # the serving as completed against its checkpoint (contexts filled in for a --checkpoint alone)
    first = resolve(root, attrs.evolve(spec, card=card_list[0]))
    outside = ""
    if the_stack is not None:  # the cards priced that its runs never measured, in one line (as sweep --stack)
        _stack_warnings(root, the_stack, [r.card for r in rows if r.cost is not None], first.header)
        outside = _outside_line(the_stack.name, reaches)
        if outside:
            click.echo(f"passprice: warning: {outside}", err=True)
    if as_json:
        _echo_json({**data, **_defaulted_json(first.header)})
        return
    what = f"{serving + ': ' if serving else ''}{spec.checkpoint}"
    click.echo(comparison_text(rows, what, spec_summary(first.spec), note, stack))
    _echo_defaulted(first.header)  # as price says it (arch44: compare priced gemma2's 4,096 without a word)
    if reaches:
        some = next(iter(reaches.values()))
        out = [f"{card} {r.ratio:.4g}" for card, r in reaches.items() if not r.inside]
        # Each card's ratio is at its expected best's own batch, not the × limit column's (over the limit's best
        # batch): 0.1006 beside a column reading 0.01112 for the same card looked wrong (walkthrough 22).
        click.echo(f"  fitted span: its {some.runs} fitted runs measured {some.low:.4g} … {some.high:.4g} × their "
                   "limit; " + (f"outside it (an extrapolation of the fit): {', '.join(out)}" if out else
                                "every card's expected best lies inside")
                   + " (expected over the limit at the expected best's batch; the × limit column divides by the "
                     "limit's own best batch)")


def _compare_spans(root: Any, spec: Any, rows: list[Any]) -> dict[str, Any]:
    """Each compared card's expected best (``rows``: :func:`passprice.compare.compare_cards`'s under a stack)
    against the stack's fitted span, by card (:func:`passprice.stackreach.expected_reach`, at the expected best's
    batch as ``best --stack`` takes it); a card refused, or whose ratio cannot be taken, is left out."""
    import attrs

    from passprice.servings import resolve
    from passprice.stackreach import expected_reach

    out: dict[str, Any] = {}
    for row in rows:
        if row.expected is None:
            continue
        resolved = resolve(root, attrs.evolve(spec, card=row.card))
        reach = expected_reach(root, row.expected, resolved.header, resolved.card, resolved.serving)
        if reach is not None and reach.runs:
            out[row.card] = reach
    return out


@cli.command("max-batch")
@_serving_options(with_batch=False)
@_lock_options
@click.option("--stack", metavar="S", help="Also the most under serving stack S, whose runtime reserves memory.")
@_json_option
@click.pass_context
def max_batch_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """The most sequences the card carries: every larger batch is refused for capacity (under the serving's
    locks)."""
    from passprice.serving import ServingRefusal, max_batch

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    _cap_unused({**o, "memory_use": None}, "max-batch is what memory holds, whatever each sequence waits")
    under = None
    reach = None
    try:
        if stack is not None:
            from passprice.stacks import load_stack, max_batch_expected

            the_stack = load_stack(root, stack)
            n, under, reserved, held = max_batch_expected(
                resolved.header, resolved.card, resolved.serving, the_stack
            )
            _stack_warnings(root, the_stack, [resolved.card.name], resolved.header)
            reach = _serving_span(root, the_stack, resolved)
        else:
            n = max_batch(resolved.header, resolved.card, resolved.serving)
    except ServingRefusal as e:
        _refuse(e)
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(root, named, resolved, lock_ref, no_lock)
    relabels, drifts = g.since(root, resolved, named)  # said as price says them (slip 44)
    from passprice.report import spread_json, spread_text

    spread = _spread(resolved)
    # under a stack, what the room its runtime leaves holds at the last position too, as best --stack says it
    stack_spread = _stack_spread(resolved, the_stack, under) if spread and under is not None else None
    if as_json:
        data: dict[str, Any] = {"card": resolved.card.name, "checkpoint": resolved.spec.checkpoint, "max_batch": n,
                                 "memory_use": resolved.serving.memory_use,
                                 "spread": spread_json(resolved.serving, *spread, stack_spread[3] if stack_spread
                                                       else None) if spread else None}
        if under is not None:
            data.update({"stack": stack, "expected_max_batch": under, "reserved_bytes": reserved,
                         "stack_batches": list(held) if held is not None else None})
        _echo_json({**_with_span(data, reach), **_defaulted_json(resolved.header),
                          "lock": g.to_json(relabels=relabels, drifted=drifts)})
    else:
        use = resolved.serving.memory_use
        sequences = "sequence" if n == 1 else "sequences"
        click.echo(f"{escaped(resolved.spec.checkpoint)} on {resolved.card.name}: at most {n:,} {sequences} a pass"
                   + (f" filling at most {100.0 * use:.4g} % of card memory (memory use)" if use is not None else ""))
        _echo_defaulted(resolved.header)
        from passprice.serving import memory_bound
        from passprice.tables import si

        mb = memory_bound(resolved.header, resolved.card, resolved.serving)
        click.echo(f"  bounded by card memory: {si(mb.capacity, 'B')}"
                   + (f" ({100.0 * use:.4g} % of {si(resolved.card.memory.capacity.value, 'B')})" if use is not None
                      else "")
                   + f" less {si(mb.shared, 'B')} held once (weights, embedding table) holds "
                   f"⌊({si(mb.capacity, 'B')} − {si(mb.shared, 'B')}) / {si(mb.per_sequence, 'B')} a sequence (its "
                   f"KV cache, state and conv ring)⌋ = {mb.card_room:,}"
                   + (f"; host memory adds {mb.host_room:,}" if mb.host_room else ""))
        if spread:
            click.echo(f"  spread  {spread_text(n, resolved.serving, *spread, stack_spread, 'max batch')}")
        click.echo(f"  memory  {si(resolved.card.memory.capacity.value, 'B')} is {resolved.card.capacity_said()}")
        if under is not None:
            from passprice.tables import si

            click.echo(f"  under stack {stack}: at most {under:,} (its runtime reserves {si(reserved, 'B')})")
            if held is not None:  # what fits is memory's answer; the stack's prices hold only where it was measured
                click.echo(f"  its facts hold on batch {held[0]:,} … {held[1]:,} only (range.rows): a price at "
                           "another is refused (BeyondStack)")
            else:
                click.echo("  its facts hold at no batch of this serving (range.rows): every price is refused")
            _span_text(reach, resolved.serving.batch)
        click.echo(f"  lock  {g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)}")
