"""``sweep``: a grid of servings, cards, batches and positions priced row by row, streamed as CSV or JSON (and a
plot), its refusals counted and said once, with the grid's own bounds on rows and memory."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from passprice.cli.app import STREAMED, _escaped_lines, _printed_json, _records_said, _root, _routed_records, cli
from passprice.cli.options import (
    _check_inputs,
    _check_output,
    _check_plot,
    _lock_options,
    _lock_stack,
    _outside_line,
    _plot_option,
    _problems,
    _read_through,
    _refuse,
    _resolve,
    _spec,
    _stack_warnings,
    _sweep_spans,
    _terminal,
    _whole_limit,
)
from passprice.cli.params import _FilePath, _float, _int, _OutputPath
from passprice.errors import InputError, NotFound, escaped
from passprice.files import shown as shown_path


@cli.command("sweep")
@click.argument("servings", nargs=-1)
@click.option("--file", "sweep_file", type=_FilePath(), help="A sweep TOML file.")
@click.option("--cards", help="Cards, comma-separated, or 'all' (default: each serving's own card).")
@click.option("--batches", default="1-4096*2", show_default=True, help="Batches: 1,2,8 or 1-64 or 1-4096*2.")
@click.option("--positions", help="Mean context positions (default: each serving's own contexts).")
@click.option("--limit", type=_int("--limit"),
              help="Context each sequence is allowed (positions), in place of each serving's contexts, as price's "
                   "--limit (at its half, or at each of --positions; default: each serving's own).")
@click.option("--draft-tokens", "draft_tokens", help="Drafted tokens per pass, e.g. 0,1,2,3 (default: the serving's).")
@click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path, swept on every card (or --cards) "
                                   "with no serving; with SERVINGS, in place of each one's, as price's --checkpoint.")
@click.option("--routing", help="Routing record (facts/routing name) a mixture of experts is priced with, in place of "
                                "each serving's, as price's --routing.")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]),
              help="Rows as csv or json (default: the -o file's suffix, .json or .csv; csv on stdout).")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("-o", "--output", type=_OutputPath(stdout=True), help="Write here (default or '-': stdout).")
@_plot_option("tokens/s against the batch, one line a serving on a card, the best batch marked")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--stack", metavar="S", help="Add serving stack S's expected price (facts/stacks) to every row.")
@click.option("--max-tpot", "max_tpot", type=_float("--max-tpot"), metavar="SECONDS",
              help="TPOT cap: add each row's tpot_s and within_max_tpot, mark each line's best batch within the cap "
                   "(--plot, and a summary on stderr); rows keep their prices.")
@click.option("--memory-use", "memory_use", type=_float("--memory-use"), metavar="FRACTION",
              help="Memory headroom for every serving swept (default: each serving's own memory_use, else 1): a row "
                   "holding more than that fraction of card memory is refused (NotResident), its capacity_bytes the "
                   "fraction's.")
@click.option("--max-rows", "max_rows", type=_int("--max-rows"), default=1 << 20,  # sweep.DEFAULT_MAX_ROWS
              show_default=True,
              help="Refuse a larger grid (a row under --stack counts as 20, a JSON row as 2, a pass shape as 2,000, "
                   "a position past 64 as 150).")
@click.option("--jobs", "jobs", type=_int("--jobs"), default=None,
              help="Processes pricing the grid, the same text whatever their number (at most the CPUs, 2 at least; "
                   "default: the idle CPUs, at most 4, for 131,072 rows or more; 1 with --plot or --max-tpot).")
@_lock_options
@click.pass_context
def sweep_command(
    ctx: click.Context,
    servings: tuple[str, ...],
    sweep_file: Path | None,
    cards: str | None,
    batches: str,
    positions: str | None,
    limit: int | None,
    draft_tokens: str | None,
    checkpoint: str | None,
    routing: str | None,
    fmt: str | None,
    as_json: bool,
    output: Path | None,
    plot_path: Path | None,
    force: bool,
    stack: str | None,
    max_tpot: float | None,
    memory_use: float | None,
    max_rows: int,
    jobs: int | None,
    lock_ref: str | None,
    no_lock: bool,
) -> None:
    """Price a grid: SERVINGS (default: every registered serving; with --checkpoint C and no SERVINGS, C with no
    serving, on every card) x cards x draft tokens x positions x batches, as CSV or JSON rows, each with its bind
    and weakest provenance (or its refusal)."""
    import numpy as np

    from passprice.serving import U32_MAX
    from passprice.sweep import (
        ROUTING_REFUSALS,
        Grid,
        Sweeper,
        grid_from_file,
        nothing_priced,
        output_format,
        parse_batches,
        parse_numbers,
        refused_row,
        require_suffix,
        routing_refusal,
        text_chunks,
    )
    from passprice.sweepjobs import default_jobs, shared_chunks

    root = _root(ctx)
    _check_output(output, force)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
    _check_inputs([("--file", sweep_file), *(("SERVINGS", s) for s in servings),
                   *(("--cards", c) for c in (cards or "").split(",") if c.endswith(".toml"))],  # else a name
                  [("-o", output), ("--plot", plot_path)])
    _check_plot(plot_path, force, root, output)
    locked_stack = _lock_stack(root, lock_ref, None, None)  # --lock L made under a stack: its expected price
    if stack is None and locked_stack is not None:
        if max_tpot is None:
            stack = locked_stack
        else:  # one line, never the limit shown silently as the lock's price
            click.echo(f"passprice: warning: lock {lock_ref} was made under stack {locked_stack}, but --max-tpot caps "
                       f"the limit's TPOT: these rows are the card's limit, without {locked_stack}'s expected price",
                       err=True)
    if max_tpot is not None and stack is not None:
        raise click.UsageError("--max-tpot caps the limit's TPOT, not a stack's expected price: give --max-tpot or "
                               "--stack, not both (best SERVING --stack S --max-tpot T caps the expected best)")
    if sweep_file is not None:
        # The file describes the whole grid: an axis given on the command line too would be silently ignored.
        given = [f"--{name.replace('_', '-')}" for name in ("cards", "batches", "positions", "draft_tokens")
                 if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
        if checkpoint is not None or routing is not None or limit is not None:  # a sweep file names servings only
            what = " and ".join(o for o, v in (("--checkpoint", checkpoint), ("--routing", routing), ("--limit", limit))
                                if v is not None)
            raise click.UsageError(f"--file describes the whole grid, and a sweep file takes no {what}: sweep the "
                                   f"file's servings on the command line with {what} (sweep SERVINGS {what} …)")
        if servings or given:
            what = ", ".join((["SERVINGS"] if servings else []) + given)
            raise click.UsageError(f"--file describes the whole grid: give {what} in the file, not on the command line")
        grid = grid_from_file(sweep_file, root)
    else:
        from passprice.compare import parse_cards

        _whole_limit(limit, positions is not None, "--positions 0")
        card_list = None
        named_cards = parse_cards(cards) if cards is not None else ()  # one reading of --cards (fix181)
        if named_cards is None or (cards is None and checkpoint is not None and not servings):
            card_list = tuple(root.names(root.cards))  # a checkpoint alone has no card of its own: every card
        elif cards is not None:
            card_list = named_cards
        names, checkpoint, routing = _swept(ctx, servings, card_list, checkpoint, routing)
        grid = Grid(
            servings=names,
            checkpoint=checkpoint,
            routing=routing,
            limit=limit,
            batches=parse_batches(batches, "--batches", most=U32_MAX),
            cards=card_list,
            positions=parse_numbers(positions, float, "--positions") if positions is not None else None,
            draft_tokens=(
                parse_numbers(draft_tokens, int, "--draft-tokens", most=64) if draft_tokens is not None else None
            ),
        )
    if as_json and fmt == "csv":
        raise click.UsageError("--json and --format csv ask for two formats: give one")
    named_format = "json" if as_json else fmt  # None: the -o file's suffix says it (or stdout: csv)
    fmt = output_format(named_format, output)
    # Every registered serving (or card) swept: names that differ only by case or Unicode normalization, or that name
    # a Windows device, are a problem, as the listings say (rows of two servings that print alike, exit 0: attack
    # round 33); the grid is still swept, and the command exits 2 after it.
    from passprice.check import relative_lines
    from passprice.sweep import every_registered_problems

    twins = every_registered_problems(root, grid)

    _problems(relative_lines(root, twins))
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        try:
            the_stack = load_stack(root, stack)
        except NotFound as e:  # said with every wrong name of the grid (round 18: the stack alone, 1 of 3)
            try:
                Sweeper(root, None, max_rows, fmt == "json", memory_use).check(grid)
            except InputError as more:
                raise InputError.of([*more.lines, *e.lines]) from None
            raise
    sweeper = Sweeper(root, the_stack, max_rows, fmt == "json", memory_use)
    try:
        sweeper.check(grid)
    except InputError as e:
        # A sweep of every registered card or serving is a listing: a registry file that does not read is named as
        # check and the listings name it, relative to the root (`sweep --cards all` with one broken card said
        # /…/root/facts/cards/zz.toml: issue 13's leftovers, session 26); a sweep of named ones, as every pricing
        # command names its files (as given).
        relative = relative_lines(root, e.lines)
        if sweep_file is None and ((cards or "").strip() == "all" or not servings) and relative != list(e.lines):
            raise InputError.of(relative) from None
        raise
    named = "SERVINGS" if grid.source is None else f"{grid.source}: servings"
    from passprice.sweep import swept_spec

    _check_inputs(_read_through(root, [(f"{named}.{i}" if grid.source else named, ref)
                                       for i, ref in enumerate(grid.servings) if isinstance(ref, str)],
                                [(f"{grid.source}: cards.{i}" if grid.source else "--cards", ref)
                                 for i, ref in enumerate(grid.cards or ())], stack,
                                [swept_spec(root, grid, ref) for ref in grid.servings if not isinstance(ref, str)]),
                  [("-o", output), ("--plot", plot_path)])
    require_suffix(output, named_format)  # after the refusals that say more: a record, an input
    # A serving's memory_use (its file's, or --memory-use for all) bounds each row's capacity_bytes (moe43): a row
    # holding more is refused as the best and largest batch's searches exclude it (it was read and ignored, with a
    # warning since left34).
    if the_stack is not None:  # the cards swept that its runs never measured, in one line

        own = [swept_spec(root, grid, ref).card for ref in grid.servings] if grid.cards is None else list(grid.cards)
        _stack_warnings(root, the_stack, [Path(c).name.removesuffix(".toml") for c in own])
        outside = _outside_line(the_stack.name, _sweep_spans(root, the_stack, grid))
        if outside:  # as price --stack says it, for each (serving, card) of the grid (walkthrough 21)
            # the contexts --limit N set, where it is given (they were said to be each serving's own)
            at = ("each serving's own batch and contexts" if grid.limit is None
                  else f"each serving's own batch, at the contexts --limit {grid.limit:,} sets")
            click.echo(f"passprice: warning: {outside} ({at}; a row lies outside where its expected_tokens_per_s / "
                       "tokens_per_s does)", err=True)
    under: list[str] = []

    def judged() -> None:
        # The servings judged under their locks (a floor breached exits 1 before a row is written): done once the
        # grid's workers are forked, while they price their parts (passprice.sweepjobs), else before pricing.
        under.extend(_sweep_locks(root, grid.servings, lock_ref, no_lock, grid.cards, grid.positions, max_tpot,
                                  grid.draft_tokens, memory_use, grid.checkpoint, grid.routing, grid.limit))

    total = grid.size()
    if total >= 1 << 16:  # its text made a group of rows at a time: the heap's freed pages kept (passprice.heapkeep)
        from passprice.heapkeep import keep_freed

        keep_freed()
    # Rows are streamed a block at a time, never held whole: to stdout as they are priced, or to a temporary file
    # renamed into place at the end (so -o FILE is never half-written). A fact or element size far out of range
    # overflows in the arrays; text_chunks refuses such a row (on stdout, after the blocks before it). A picture
    # gathers its lines' points as the blocks go (a line of many batches thinned: plots.SweepLines), and is drawn
    # and written before -o FILE is put in place, so a picture that cannot be drawn or written leaves no file.
    lines = None
    if plot_path is not None:
        from passprice.plots import SweepLines

        lines = SweepLines()
    best = None
    if max_tpot is not None:  # each line's best batch within the cap (passprice.sweepcap)
        from passprice.sweepcap import BestWithin

        best = BestWithin(max_tpot)

    def keep(segments: Iterator[Any]) -> Iterator[Any]:
        for segment in segments:
            if lines is not None:
                c = segment.common
                lines.add(c["serving"] or c["checkpoint"], c["card"], c["position"], c["draft_tokens"],
                          *segment.prices())
            if best is not None:
                best.add(segment)
            yield segment

    def drawn(chunks: Iterator[Any]) -> Generator[Any, None, None]:
        if lines is None or plot_path is None:
            yield from chunks
            return
        # The last block (the JSON's closing `]`) is held until the picture is written, before -o's rename too: a
        # picture that fails (a full disk) then ends the streamed array with the error document, never after a
        # whole array that reads as a success (attack round 57: `sweep --json --plot /sys/x.png` printed every row
        # and the `]`, then exit 2; the folder's probe, files.check_writable, now refuses that one up front).
        held = None
        for chunk in chunks:
            if held is not None:
                yield held
            held = chunk
        from passprice.plots import draw_sweep, picture_format, write_picture

        capped, cap = (best.capped(), best.cap) if best is not None else (None, "")
        write_picture(plot_path, draw_sweep(lines.lines(), picture_format(plot_path), "", capped, cap), force)
        if held is not None:
            yield held

    with contextlib.ExitStack() as exits:
        exits.enter_context(np.errstate(all="ignore"))
        progress: Callable[[int], None] | None = None
        if total >= 20_000 and _terminal():
            bar: Any = exits.enter_context(click.progressbar(length=total, label="pricing", file=sys.stderr))
            progress = _every_percent(bar.update, total)
        # The grid shared among processes (passprice.sweepjobs), the same text; a picture's lines are gathered from
        # every segment here, so a sweep with --plot is one process.
        jobs = 1 if lines is not None or best is not None else jobs or default_jobs(grid)
        if best is not None:
            from passprice.sweepcap import capped_chunks

            judged()
            made: Iterator[Any] = capped_chunks(
                keep(sweeper.segments(grid, progress=progress)), fmt, best.max_tpot, binary=True
            )
        elif jobs > 1 and output is not None:
            # The processes write their blocks straight into the output's temporary file, each at its turn.
            from passprice.files import Placed, target
            from passprice.sweepjobs import write_shared

            folder = target(output).parent
            made = iter([Placed(lambda fd, at: write_shared(sweeper, grid, fmt, jobs, fd, at, progress, folder,
                                                            judged))])
        elif jobs > 1:
            # To standard output: blocks taken by whichever process is free, as -o FILE's; a block given as it is
            # made when its turn has come, else copied from the file it was made into, in the kernel
            # (files.append_to_stream), never read into this process.
            made = shared_chunks(sweeper, grid, fmt, jobs, progress, None, ready=judged)
        else:
            judged()
            # CSV to standard output stays text: click writes a name that is not ASCII in the stream's encoding.
            binary = output is not None or fmt == "json"
            made = text_chunks(keep(sweeper.segments(grid, progress=progress)), fmt, binary=binary)
        chunks = exits.enter_context(contextlib.closing(drawn(made)))  # closed (workers reaped) on any way out
        if output is None:
            from passprice.files import Appended, append_to_stream

            streamed = None
            if fmt == "json":
                from passprice.jsonerror import StreamedArray

                # Its rows stream: a failure after some ends the array with its document as the last element
                # (_failure_document; session 31: a partial array), never a second document.
                _printed_json()
                streamed = ctx.meta[STREAMED] = StreamedArray()
            for chunk in chunks:
                if isinstance(chunk, Appended):  # a block made ahead of its turn (--jobs N), copied from its file
                    copied = append_to_stream(chunk.fd, sys.stdout, chunk.start, chunk.stop)
                    if streamed is not None and copied:
                        # Its first bytes (the grid's first block, made by a worker, opens the array) and its last.
                        head = os.pread(chunk.fd, min(copied, 64), chunk.start)
                        tail = min(copied, 8)
                        streamed.wrote(head + os.pread(chunk.fd, tail, chunk.start + copied - tail), whole=False)
                    continue
                # JSON comes as bytes (ASCII), written as they are; ASCII text without an escape character (CSV
                # unless a name holds one) is written as bytes too: the text click would write, without its search
                # for ANSI codes over the whole text (0.07 s of CPU per 100 MB).
                plain = isinstance(chunk, str) and chunk.isascii() and "\x1b" not in chunk
                click.echo(chunk.encode("ascii") if plain else chunk, nl=False)
                if streamed is not None:
                    streamed.wrote(chunk)
        else:
            from passprice.files import write_atomically

            write_atomically(output, chunks, force=force)
    if output is not None:
        click.echo(f"{total:,} row{'' if total == 1 else 's'} -> {shown_path(output)}", err=True)
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)
    # Lines for people: a checkpoint path's U+202E escaped, as --json escapes it (its CSV cell keeps the bytes; left43)
    # (each line of a message escaped, its own line breaks kept: a lock's drift lines follow it; test_slip_44)
    def explain(common: Any, batch: int) -> Any:
        return refused_row(sweeper, grid, common, batch)

    for line in best.summary(explain) if best is not None else ():
        click.echo(f"passprice: {_escaped_lines(line)}", err=True)
    for line in under:
        click.echo(f"passprice: {_escaped_lines(line)}", err=True)
    # A window priced from llama.cpp's default (gemma2 without its key): one line a checkpoint on stderr, as price's
    # `defaulted` line says it, never a column of every row (arch44: the sweep priced 4,096 without a word).
    for line in sweeper.defaulted(grid):
        click.echo(f"passprice: defaulted: {escaped(line)}", err=True)
    # Written, but nothing priced: exit 1. A row priced with a price (sweeper.saw_price; with --jobs N every
    # process's, passprice.sweepjobs adding each block's tally) settles it without the probe, which prices the
    # grid's smallest batch again (nothing_priced: 14-20 ms of the bench grid's run, its first 170 lines refused).
    first: dict[str, Any] = {}
    if total and not sweeper.saw_price and (nothing := nothing_priced(sweeper, grid, first)) is not None:
        # each refusal with the message price says of its first line's row (fix181: the names alone said nothing
        # of what to change, where price says "position 8192 is not below its limit 8192 … raise --limit")
        said = "; ".join(_refusal_said(sweeper, grid, name, f"{n:,} line{'s' if n != 1 else ''}", first)
                         for name, n in nothing.items())
        advice = ""
        if ROUTING_REFUSALS & set(nothing) and (routed := routing_refusal(sweeper, grid)) is not None:
            # price's words, with the records that fit its checkpoint (the summary said the name alone: sweep51)
            payload = routed.to_json()
            _routed_records(ctx, payload, routed.header)
            advice = f"; {routed.name}: {routed}{_records_said(payload, routed.header)}"
        click.echo(f"passprice: refused: no row of the sweep has a price: every line is refused at its smallest "
                   f"batch, and at every larger one: {said}; the rows and their refusals were written{advice}",
                   err=True)
        ctx.exit(1)
    elif sweeper.refused:
        # Some rows refused, some priced (the whole grid's, --jobs N or not: passprice.sweepjobs adds every block's
        # tally in grid order, so these lines are the one-process sweep's): one line a refusal on stderr, its count
        # and its first row's message, in the all-refused summary's words (_refusal_said), so a sweep piped to a
        # file is not silent of them. Exit 0: a sweep's refusals are rows, not a failure.
        rows = sweeper.priced_rows + sum(sweeper.refused.values())
        # fewer rows than the grid's only were a block's tally lost: said so, never as the grid's
        share = "" if rows >= total else f" counted of the grid's {total:,}"
        for name, n in sweeper.refused.items():
            said = _refusal_said(sweeper, grid, name, f"{n:,} of {rows:,} row{'s' if rows != 1 else ''}{share}, "
                                 f"{sweeper.priced_rows:,} priced", sweeper.first_refused)
            click.echo(f"passprice: refused: {_escaped_lines(said)}", err=True)


def _refusal_said(sweeper: Any, grid: Any, name: str, count: str, first: Mapping[str, Any]) -> str:
    """What a sweep's summary on stderr says of the refusal ``name``: ``NAME (COUNT)``, and where ``first`` holds its
    first row (``common``, batch) and it is no routing refusal (whose advice follows, with the records that fit),
    that row and the message ``price`` says of it (the names alone said nothing of what to change). The one
    wording of a sweep every row of which is refused and of one some rows of which are."""
    from passprice.bounds import position_text
    from passprice.sweep import ROUTING_REFUSALS, refused_row

    text = f"{name} ({count})"
    refused = refused_row(sweeper, grid, *first[name]) if name in first and name not in ROUTING_REFUSALS else None
    if refused is not None:
        common, at = first[name]
        text += (f" — {common['serving'] or common['checkpoint']} on {common['card']} at position "
                 f"{position_text(common['position'])}, batch {at:,}: {refused}")
    return text


def _every_percent(update: Callable[[int], None], total: int) -> Callable[[int], None]:
    """``update`` (a progress bar's) called with the rows done since its last call once they reach 1 % of
    ``total``, or all of it, not after every block of rows: a bar drawn a hundred times, not a thousand."""
    step = max(1, total // 100)
    pending = done = 0

    def progress(rows: int) -> None:
        nonlocal pending, done
        pending += rows
        done += rows
        if pending >= step or done >= total:
            update(pending)
            pending = 0

    return progress


def _swept(
    ctx: click.Context, servings: tuple[str, ...], cards: tuple[str, ...] | None, checkpoint: str | None,
    routing: str | None,
) -> tuple[tuple[Any, ...], str | None, str | None]:
    """What a sweep of ``servings`` (every registered one when empty) prices, with ``--checkpoint`` and
    ``--routing``: the grid's servings and the checkpoint and routing record that replace each one's. Each is read
    by ``price``'s own path (:func:`_spec`, then :func:`_resolve`: the same names accepted, the same refusals, said
    the same way), so a sweep's rows are priced on what ``price SERVING --checkpoint C --routing R`` prices. With
    ``--checkpoint C`` and no SERVINGS: C alone, with no serving (one spec, the grid's servings), on ``cards``."""
    root = _root(ctx)
    if checkpoint is None and routing is None:
        return servings or tuple(root.names(root.servings)), None, None
    if checkpoint is not None and not servings:
        if ctx.params.get("lock_ref") is not None:  # price --lock L judges a serving L locks; here there is none
            raise click.UsageError("--checkpoint with no SERVINGS sweeps no registered serving, so no lock judges its "
                                   "rows: give --lock L with the serving it locks (sweep SERVING --checkpoint C), or "
                                   "leave --lock out")
        if not cards:  # `--cards ''`, or a registry with none: as the grid says it (sweep.check_grid)
            raise InputError("--cards: no cards (give names, comma-separated, or 'all')")
        # its card is the first swept, a stand-in: the grid's cards replace it (each row's card is the grid's)
        spec = _spec(ctx, None, checkpoint=checkpoint, card=cards[0] if cards else None, routing=routing)[1]
        with _every_name(root, (), cards, cards[:1]):
            _resolve(root, spec, ctx.params.get("stack"))  # a wrong --stack said with them, as price says it
        return (spec,), None, None
    names = servings or tuple(root.names(root.servings))
    from passprice.servings import load_spec

    for ref in names:
        try:
            load_spec(root, ref)
        except InputError:
            continue  # a serving that does not read: the sweep's own check names it with the others
        spec = _spec(ctx, ref, checkpoint=checkpoint, routing=routing)[1]
        with _every_name(root, names, cards):
            _resolve(root, spec, ctx.params.get("stack"))
        if checkpoint is not None:
            checkpoint = spec.checkpoint  # as price names it (`.//M` is the entry M)
    return names, checkpoint, routing


@contextlib.contextmanager
def _every_name(
    root: Any, servings: tuple[str, ...], cards: tuple[str, ...] | None, said: tuple[str, ...] = ()
) -> Iterator[None]:
    """Around price's resolution of a swept serving (or checkpoint): an :class:`InputError` it raises (a
    ``--checkpoint`` or ``--routing`` that names nothing) said with every serving and card of the grid that names
    nothing (:meth:`passprice.sweep.Sweeper.not_found`, the sweep's own look-up; ``said``: the cards the resolution
    looked at itself), one line each: ``sweep --checkpoint nope --cards h200_sxm_141gb,nocard`` named the checkpoint
    alone, and ``nocard`` once it was fixed (sweep51)."""
    try:
        yield
    except InputError as e:
        from passprice.sweep import Grid, Sweeper

        grid = Grid(servings=servings, batches=(1,), cards=cards)
        try:
            more = Sweeper(root).not_found(grid, skip=said)
        except InputError as other:  # a serving or card found that does not read: said too
            more = list(other.lines)
        raise InputError.of(list(dict.fromkeys([*e.lines, *more]))) from None


def _sweep_locks(
    root: Any, servings: tuple[Any, ...], lock_ref: str | None, no_lock: bool, cards: tuple[str, ...] | None = None,
    positions: tuple[float, ...] | None = None, max_tpot: float | None = None,
    draft_tokens: tuple[int, ...] | None = None, memory_use: float | None = None, checkpoint: str | None = None,
    routing: str | None = None, limit: int | None = None,
) -> list[str]:
    """:func:`passprice.enforce.sweep_under` (each registered serving of a sweep judged under its locks): the lines
    naming the locks each is priced under; a floor breached, or ``--lock L`` locking none of them, exits 1."""
    from passprice.enforce import LockFloor, LockRefusal, sweep_under

    if lock_ref is not None and no_lock:
        raise click.UsageError("give --lock L or --no-lock, not both")
    try:
        return sweep_under(root, servings, lock_ref, no_lock, cards, positions, max_tpot, draft_tokens, memory_use,
                           checkpoint, routing, limit)
    except (LockRefusal, LockFloor) as e:
        _refuse(e)
