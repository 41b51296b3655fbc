"""The commands that explore one serving beyond its price: ``kv`` (what the KV cache holds), ``roofline`` (where
the pass is bound), ``speculate`` (drafting lengths) and ``simulate`` (a trace of requests served step by step)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from passprice.cli.app import Refused, _echo_json, _finite, _json_option, _printed_json, _root, cli
from passprice.cli.options import (
    _STACK_HELP,
    _cap_unused,
    _check_inputs,
    _check_output,
    _check_plot,
    _defaulted_json,
    _draft_lengths,
    _echo_defaulted,
    _kept_problems,
    _load_all,
    _lock_options,
    _lock_stack,
    _own_serving,
    _plot_option,
    _read_through,
    _reasons,
    _refuse,
    _resolve,
    _serving_options,
    _serving_span,
    _span_text,
    _spec,
    _terminal,
    _under_locks,
    _with_span,
)
from passprice.cli.params import _FilePath, _float, _int, _OutputPath
from passprice.errors import InputError, escaped
from passprice.files import shown as shown_path

# --- the sketch's questions: KV memory by context, ops:byte, speculative decoding ----------------------------------


@cli.command("kv")
@click.argument("checkpoint")
@click.option(
    "--contexts",
    help="Context sizes in positions (k = 1,024) [default: 4k, 32k, 128k below the model's context, and its own].",
)
@click.option(
    "--kv-bytes", type=_float("--kv-bytes"), default=2.0, show_default=True,
    help="Bytes per KV-cache element: 2 (16-bit), 1 (8-bit), 0.5625 (4-bit codes with their scales).",
)
@click.option(
    "--state-bytes", type=_float("--state-bytes"), default=4.0, show_default=True,
    help="Bytes per recurrent-state element.",
)
@click.option("--cards", default="all", show_default=True,
              help="Cards to list how many sequences fit on, comma-separated, or 'all'.")
@_json_option
@click.pass_context
def kv_command(
    ctx: click.Context, checkpoint: str, contexts: str | None, kv_bytes: float, state_bytes: float, cards: str,
    as_json: bool,
) -> None:
    """KV cache (by layer kind), recurrent state and conv ring bytes per token and per sequence of CHECKPOINT at each
    context, and how many sequences fit beside the weights on each registered card (or the --cards given). A context
    past the model's is shown refused; exit 1 only when every context is."""
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.kv import default_contexts, kv_json, kv_report, kv_text, parse_contexts
    from passprice.serving import ServingRefusal

    root = _root(ctx)
    from passprice.compare import parse_cards

    named_cards = parse_cards(cards)  # one reading of --cards for compare, sweep and kv (fix181)
    if named_cards is None:  # as `cards` and compare: the good ones listed, each bad card file one line (exit 2)
        # load_cards stopped at the first card file that did not read: one bad file hid the whole table, the
        # checkpoint's own bytes a token included (attack round 59)
        the_cards = [c for _, c in _load_all(root.names(root.cards), lambda name: load_card(root, name), root=root)]
    else:  # as compare's --cards: every wrong name said at once (exit 2), before the checkpoint is read
        from passprice.compare import missing_cards

        names = named_cards
        missing = missing_cards(root, names)
        if missing:
            raise InputError.of(missing)
        the_cards = [load_card(root, name) for name in names]
    header = load_checkpoint(root, checkpoint)
    sizes = parse_contexts(contexts) if contexts is not None else default_contexts(header.meta_int("context_length"))
    try:
        report = kv_report(header, sizes, the_cards, kv_bytes, state_bytes, name=checkpoint)
    except ServingRefusal as e:
        _refuse(e)
    data = kv_json(report)
    data["problems"] = _kept_problems()  # each card file that does not read, left out of each context's "fits"
    if all(c.refusal is not None for c in report.contexts):
        raise Refused(f"every context is past {checkpoint}'s context length {report.model_context:,}", data)
    _finite(data)
    if as_json:
        _echo_json({**data, **_defaulted_json(header)})
    else:
        click.echo(kv_text(report))
        _echo_defaulted(header)


@cli.command("roofline")
@click.argument("card_name", metavar="CARD")
@_serving_options(with_batch=False)
@_lock_options
@click.option(
    "--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE.png|svg",
    help="Draw tokens/s and pass time against the batch (needs matplotlib: pip install '.[plot]' in a checkout).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@click.option("--stack", metavar="S", help="Also the lines, crossing and best batch under serving stack S.")
@_json_option
@click.pass_context
def roofline_command(
    ctx: click.Context, /, card_name: str, serving: str | None, plot_path: Path | None, force: bool,
    stack: str | None, as_json: bool, lock_ref: str | None, no_lock: bool, **o: Any,
) -> None:
    """Ridge points of CARD's datapaths; with SERVING (or --checkpoint), its arithmetic intensity by batch on CARD,
    the batch at which the bind changes, the best batch and the largest that fits."""
    from passprice.cards import load_card
    from passprice.roofline import (
        check_matplotlib,
        draw,
        ridges,
        ridges_json,
        ridges_text,
        roofline,
        roofline_json,
        roofline_text,
    )
    from passprice.serving import ServingRefusal

    if o.get("card"):
        raise click.UsageError("give the card as CARD, not --card")
    from passprice.roofline import require_card_first

    require_card_first(_root(ctx), card_name, serving)
    if plot_path is not None:
        from passprice.files import name_suffix, written_suffix
        from passprice.plots import picture_format

        if name_suffix(plot_path) not in (".png", ".svg"):  # the name typed; a link's target's suffix below
            picture_format(plot_path)  # the one line audit, sweep and simulate give (it was click's usage line)
        _check_output(plot_path, force)
        from passprice.registry import require_not_record

        require_not_record(_root(ctx), plot_path, "--plot")
        written_suffix(plot_path, "--plot")  # a link named .png onto an .svg: after the refusals that say more
        check_matplotlib()
    # --lock L without a serving: L's own serving on CARD (it ignored the lock without a word)
    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    if serving is None and not o.get("checkpoint") and base is None:
        if plot_path is not None:
            raise click.UsageError("--plot draws a serving: give a SERVING or --checkpoint")
        card = load_card(_root(ctx), card_name)
        data: dict[str, Any] = {"card": card.name, "ridges": ridges_json(ridges(card))}
        _finite(data)  # the text shows the same figures: `inf MAC/B` is no ridge either
        if as_json:
            _echo_json(data)
        else:
            click.echo(ridges_text(card))
        return
    spec = None if serving is None and base is None else _spec(ctx, serving, base=base, **o)[1]
    if spec is None or spec.card != card_name:  # CARD is the serving's own: its file's spec, still naming the file
        # (its `contexts.1.limit` past the model was refused `ContextBeyondModel … lower --limit`, exit 1, as if of
        # an option: tests/test_fix171.py); another card keeps the file of its contexts (servings.unsourced)
        spec = _spec(ctx, serving, base=base, **{**o, "card": card_name})[1]
    root = _root(ctx)
    # --plot over the header or card it draws (`roofline CARD --checkpoint h.png --plot h.png --force` drew over
    # the header, exit 0: attack round 26)
    _check_inputs([("SERVING", serving), *_read_through(root, [], stack=stack, specs=[spec])], [("--plot", plot_path)])
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    if the_lock is not None:
        serving = the_lock.info.serving
    from passprice.report import spec_summary

    summary = " · ".join(spec_summary(resolved.spec).split(" · ")[:2])
    from passprice.cards import shown_title
    from passprice.roofline import routing_caption

    caption = routing_caption(resolved.header, resolved.serving)
    title = (f"{serving or spec.checkpoint}: {resolved.spec.checkpoint} on {shown_title(resolved.card)}\n{summary}"
             + (f"\n{caption}" if caption else ""))
    under = None
    reach = None
    try:
        line = roofline(resolved.header, resolved.card, resolved.serving, title)
        if stack is not None:
            from passprice.roofline import stack_lines
            from passprice.stacks import load_stack

            the_stack = load_stack(root, stack)
            under = stack_lines(resolved.header, resolved.card, resolved.serving, the_stack)
            reach = _serving_span(root, the_stack, resolved)
    except ServingRefusal as e:
        _refuse(e)
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock)
    relabels, drifts = g.since(root, resolved, serving)  # said as price says them (slip 44)
    data = roofline_json(line)
    if under is not None:
        data["stack"] = under
    # a paged serving's best and largest batch counted at the mean position: the caveat best and max-batch print
    # (roofline said nothing of the 304 of qwen3-30b-a3b-h200's 605 that fit at position 4,095)
    from passprice.cli.pricing import _spread
    from passprice.report import spread_json, spread_text

    spread = _spread(resolved)
    if spread is not None:
        data["spread"] = spread_json(resolved.serving, *spread)
    data = _with_span(data, reach)
    _finite(data)  # before the plot is written: a roofline JSON cannot carry is no picture either
    if plot_path is not None:
        draw(line, plot_path, force=force)
    if as_json:
        _echo_json({**data, **_defaulted_json(resolved.header), "lock": g.to_json(relabels=relabels, drifted=drifts)})
    else:
        click.echo(roofline_text(line))
        if spread is not None:
            click.echo(f"  spread: {spread_text(line.max_batch, resolved.serving, *spread)}")
        _echo_defaulted(resolved.header)  # as price says it (arch44: roofline priced gemma2's 4,096 without a word)
        if under is not None:
            from passprice.roofline import stack_lines_text

            click.echo(stack_lines_text(under))
            _span_text(reach, resolved.serving.batch)
        said = g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)
        click.echo(f"  lock: {said}")
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)


@cli.command("speculate")
@_serving_options(with_batch=True)
@_lock_options
@click.option("--tokens", "tokens_text", default="1..8", show_default=True, help="Draft lengths: 1..8, 1,2,4 or 3.")
@click.option("--best", "at_best", is_flag=True, help="Price each draft length at its own best batch.")
@click.option(
    "--passes", type=_int("--passes"), default=100_000, show_default=True,
    help="Passes of the Monte-Carlo accept/reject loop simulated for each draft length.",
)
@click.option(
    "--seed", type=_int("--seed"), default=0, show_default=True, help="Seed of the Monte-Carlo loop."
)
@click.option("--stack", metavar="S", help=_STACK_HELP + " Each draft length's, with its speedup under the stack.")
@_json_option
@click.pass_context
def speculate_command(
    ctx: click.Context, /, serving: str | None, tokens_text: str, at_best: bool, passes: int, seed: int,
    stack: str | None, as_json: bool, lock_ref: str | None, no_lock: bool, **o: Any,
) -> None:
    """Tokens/s and speedup over no drafting of SERVING for each draft length (--tokens), at its batch (or --batch N,
    or each at its own --best batch), with a Monte-Carlo check of the tokens each pass emits."""
    from passprice.serving import ServingRefusal
    from passprice.speculate import (
        parse_tokens,
        resolve_speculation,
        speculate,
        speculation_json,
        speculation_text,
    )

    if o.pop("draft_tokens", None) is not None:
        raise click.UsageError("speculate varies the draft length itself: give --tokens, not --draft-tokens")
    if at_best and o.get("batch") is not None:
        raise click.UsageError("give --batch N or --best, not both")
    tokens = _draft_lengths(parse_tokens, tokens_text)
    method_name = o.pop("draft_method", None)
    head_rows = o.pop("head_rows", None)
    root, spec = _spec(ctx, serving, **o)
    # Without a serving, the options given are what names no method ("gemma3-270m-q4_k_m names no drafting method"
    # read as if the checkpoint were a serving; walkthrough 43).
    label = serving or f"--checkpoint {spec.checkpoint} --card {spec.card}"
    resolved, method, head_rows = resolve_speculation(root, spec, method_name, head_rows, label)
    batch = None if at_best else resolved.spec.batch
    if not at_best:
        _cap_unused(o, "speculate prices each draft length at the serving's batch (add --best to search within it)")
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    try:
        result = speculate(
            resolved.header, resolved.card, resolved.serving, method, tokens, batch, head_rows, passes, seed,
            the_stack,
        )
    except ServingRefusal as e:
        _refuse(e)
    stack_facts = the_stack.lock_facts() if the_stack is not None else None
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock, stack_facts=stack_facts)
    # said as price says them (slip 44; speculate since session 26), the method's acceptance facts today's
    relabels, drifts = g.since(root, resolved, serving, stack_facts=stack_facts,
                              method_facts={f"draft.{p}": f for p, f in method.facts().items()})
    reach = _serving_span(root, the_stack, resolved)
    data = {**_with_span(speculation_json(result), reach), "lock": g.to_json(relabels=relabels, drifted=drifts)}
    if all(r.refusal is not None for r in result.rows):
        from passprice.serving import Routed

        if all(isinstance(r.refusal, Routed) for r in result.rows):
            # no routing record: no draft length is the cause, so refused once as price refuses it, naming the
            # records that could price it (walkthrough 36: the line named none of them)
            _refuse(result.rows[0].refusal)
        raise Refused(f"every draft length is refused: {_reasons([r.refusal for r in result.rows])}", data)
    if the_stack is not None and all(r.expected_refusal is not None for r in result.rows if r.refusal is None):
        # as `price --stack`: a stack that prices none of the lengths is a refusal (exit 1), not a table of them;
        # its line says why and how to fix it, as price --stack's does (session 9's walkthrough: only the name)
        reasons = _reasons([r.expected_refusal for r in result.rows if r.refusal is None])
        raise Refused(f"stack {the_stack.name} refuses every draft length: {reasons}", data)
    _finite(data)  # the table shows the same figures: a pass of `inf s` is no price
    if as_json:
        _echo_json(data)
    else:
        click.echo(speculation_text(result, f"{serving or spec.checkpoint}: {resolved.spec.checkpoint} on "
                                    f"{resolved.card.name}"))
        _span_text(reach, resolved.serving.batch)
        said = g.line(verdicts, differs=g.differs(root, resolved, drafting=(method.name, head_rows)),
                      relabels=relabels, drifted=drifts)
        click.echo(f"  lock: {said}")


@cli.command("simulate")
@click.argument("serving", required=False)
@click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path (without SERVING: with --card).")
@click.option("--trace", "trace_path", type=_FilePath(), metavar="FILE.jsonl",
              help="Requests, one JSON object a line: arrival_s, prompt_tokens, output_tokens[, prefix_id, "
              "prefix_tokens].")
@click.option("--synthetic", type=_int("--synthetic"), metavar="N", help="N synthetic heavy-tailed requests.")
@click.option("--seed", type=_int("--seed"), default=0, show_default=True, help="Seed of the synthetic trace.")
@click.option("--rate", type=_float("--rate"), help="Synthetic arrivals per second [50].")
@click.option("--prefix", "synthetic_prefix", type=_int("--prefix"), default=0,
              help="Synthetic prompts all start with one shared prefix of this many tokens.")
@click.option("--policy", type=click.Choice(["static", "continuous", "both"]), default="both", show_default=True)
@click.option("--chunk", type=_int("--chunk"), default=2048, show_default=True,
              help="Token-rows a step carries (decode rows first, then prompt rows).")
@click.option("--max-batch", type=_int("--max-batch"), default=256, show_default=True,
              help="Sequences admitted at once.")
@click.option("--card", help="Card: registry name or a card .toml path (default: the serving's).")
@click.option("--limit", type=_int("--limit"), help="Context limit each request may reach (positions).")
@click.option("--kv-page", type=_int("--kv-page"), help="Page the KV cache, N positions a page.")
@click.option("--contiguous", is_flag=True, help="Contiguous KV cache (undo a serving's --kv-page).")
@click.option("--prefix-read-once/--no-prefix-read-once", default=None,
              help="Stream each shared prefix once a step for all the sequences that read it.")
@click.option("--no-prefix-caching", is_flag=True, help="Hold and prefill every prompt whole, shared prefix or not.")
@click.option("--max-steps", type=_int("--max-steps"), default=500_000, show_default=True,  # simulate.MAX_STEPS
              help="Steps simulated at most, every policy together; a longer run is refused.")
@click.option("--max-work", type=_int("--max-work"), default=90_000, show_default=True,  # simulate.MAX_WORK
              help="Work done at most, every policy together, in units of about 10 µs of CPU (a step priced "
              "alone 8 and 1 a 48 sequences, a stretch of steps priced together 40 and more; 8 to 12 "
              "µs a unit, fitted): the default bounds simulating to about 1 s; a run past it is refused by name, "
              "saying where.")
@click.option("-o", "--output", type=_OutputPath(stdout=True), help="Write here (default or '-': stdout).")
@_plot_option("throughput and end-to-end latency over time, one colour a policy")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--routing", help="Routing record (facts/routing name) a mixture of experts is priced with.")
@click.option("--stack", metavar="S", help="Price every step under serving stack S (its rates, fixed costs, reserve).")
@_lock_options
@_json_option
@click.pass_context
def simulate_command(
    ctx: click.Context,
    serving: str | None,
    checkpoint: str | None,
    trace_path: Path | None,
    synthetic: int | None,
    seed: int,
    rate: float | None,
    synthetic_prefix: int,
    policy: str,
    chunk: int,
    max_batch: int,
    card: str | None,
    limit: int | None,
    kv_page: int | None,
    contiguous: bool,
    prefix_read_once: bool | None,
    no_prefix_caching: bool,
    max_steps: int,
    max_work: int,
    output: Path | None,
    plot_path: Path | None,
    force: bool,
    routing: str | None,
    stack: str | None,
    lock_ref: str | None,
    no_lock: bool,
    as_json: bool,
) -> None:
    """Serve a request trace on SERVING (or on --checkpoint with --card), every step priced as the pass of the rows
    it carries: static against continuous batching, chunked prefill, shared prefixes. Give --trace FILE.jsonl or
    --synthetic N --seed S."""
    from passprice.serving import ServingRefusal
    from passprice.simulate import (
        Policy,
        Settings,
        Simulation,
        require_steps,
        serve,
        simulation_json,
        simulation_text,
        written_as_json,
    )
    from passprice.steps import StepPricer
    from passprice.trace import Synthetic, read_trace
    from passprice.trace import synthetic as make_synthetic

    if (trace_path is None) == (synthetic is None):
        raise click.UsageError("give one of --trace FILE.jsonl and --synthetic N")
    if trace_path is not None and (rate is not None or synthetic_prefix):
        raise click.UsageError("--rate and --prefix shape a --synthetic trace; a --trace file has its own")
    _check_output(output, force)
    _check_inputs([("--trace", trace_path), ("SERVING", serving), ("--checkpoint", checkpoint), ("--card", card)],
                  [("-o", output), ("--plot", plot_path)])
    _check_plot(plot_path, force, _root(ctx), output)
    root, spec = _spec(ctx, serving, checkpoint=checkpoint, card=card, limit=limit, kv_page=kv_page,
                       contiguous=contiguous, prefix_read_once=prefix_read_once, routing=routing)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
    _check_inputs(_read_through(root, [], stack=stack, specs=[spec]), [("-o", output), ("--plot", plot_path)])
    as_json = written_as_json(as_json, output)  # after the refusals that say more: a record, an input
    resolved = _resolve(root, spec, stack)
    # a serving file's memory_use was read and ignored here without a word (issue 13)
    _cap_unused({"memory_use": resolved.serving.memory_use},
                "simulate admits requests while the card's memory holds them, up to --max-batch")
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    try:
        pricer = StepPricer.of(resolved.header, resolved.card, resolved.serving, the_stack)
    except ServingRefusal as e:
        _refuse(e)
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock, pricer.rests_on())
    relabels, drifts = g.since(root, resolved, serving)  # said as price says them (slip 44)
    lock_json = g.to_json(relabels=relabels, drifted=drifts)
    model = resolved.header.meta_int("context_length")
    if trace_path is not None:
        trace = read_trace(trace_path, pricer.limit, model)
    else:
        assert synthetic is not None
        trace = make_synthetic(Synthetic(synthetic, seed, rate or 50.0, prefix=synthetic_prefix), pricer.limit)
    settings = Settings(chunk, max_batch, not no_prefix_caching, resolved.serving.prefix_read_once)
    policies = [Policy.STATIC, Policy.CONTINUOUS] if policy == "both" else [Policy(policy)]
    require_steps(pricer, trace, policies, settings, max_steps)  # before the bar: a refusal is its one line
    total = len(trace.requests) * len(policies)
    try:
        shown = (
            click.progressbar(length=total, label="simulating", file=sys.stderr)
            if total >= 4000 and _terminal() else None
        )
        with shown or contextlib.nullcontext() as bar:
            outcomes = serve(pricer, trace, policies, settings, bar.update if bar else None, max_steps, max_work)
    except ServingRefusal as e:
        _refuse(e)
    from passprice.cards import shown_title
    title = (f"simulate {serving}: " if serving is not None else "simulate: ") + (
        f"{resolved.spec.checkpoint} on {resolved.card.name} ({shown_title(resolved.card)})")
    if stack is not None:
        title += f" under stack {stack}"
    sim = Simulation(title, serving, trace.summary(), settings, pricer, tuple(outcomes), resolved.spec.max_tpot)
    reach = _serving_span(root, the_stack, resolved)  # its decode pass against the stack's fitted span
    # The request records as a table of columns, which jsontext writes as json.dumps writes their dicts
    defaulted = _defaulted_json(resolved.header)  # as price says it (arch44: simulate said no word of gemma2's 4,096)
    data = {**_with_span(simulation_json(sim, with_requests=as_json, as_table=True), reach), **defaulted,
            "lock": lock_json}
    from passprice.tables import whole_counts  # its byte counts as every --json writes them (peak_held_bytes)

    data = whole_counts(data)
    from passprice import jsontext  # json.dumps(data, indent=2)'s text, its request records column by column

    text = ""
    if as_json:
        with contextlib.suppress(ValueError):  # a figure that is not finite: named below
            text = jsontext.dumps(data, allow_nan=False) + "\n"
        if not text:  # the records as dicts, for the line below
            data = whole_counts({**_with_span(simulation_json(sim), reach), **defaulted, "lock": lock_json})
    if not text:  # the text shows the same figures: a TTFT of `inf s` is no latency
        _finite(data)  # the line naming the figure (encoding a --json document checked it already)
        text = jsontext.dumps(data) + "\n" if as_json else ""
    if plot_path is not None:
        from passprice.plots import picture_format, simulation_picture, write_picture

        write_picture(plot_path, simulation_picture(sim, picture_format(plot_path)), force)
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)
    if not as_json:
        span = "" if reach is None else (f"  fitted span {reach.line()} (the serving's decode pass, batch "
                                         f"{resolved.serving.batch:,})\n")
        if defaulted:
            from passprice.architectures import defaulted_window

            said = defaulted_window(resolved.header)
            span += f"  defaulted   {escaped(said.line())}\n" if said is not None else ""
        text = (f"{simulation_text(sim)}\n{span}  lock        "
                f"{g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)}\n")
    if output is None:
        if as_json:
            _printed_json()
        click.echo(text, nl=False)
    else:
        from passprice.files import write_atomically

        write_atomically(output, text, force=force)
        click.echo(f"{len(trace.requests):,} requests x {len(policies)} polic{'ies' if len(policies) > 1 else 'y'} "
                   f"-> {shown_path(output)}", err=True)
