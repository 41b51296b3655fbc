"""The commands that hold prices to account: ``lock`` records one, ``reproduce`` and ``check`` prove the locks
still hold, ``audit`` says what a price rests on, and ``diff`` reviews what a change does to every locked price."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from passprice.cli.app import STATUS, Refused, _echo_json, _finite, _json_option, _printed_json, _root, cli
from passprice.cli.options import (
    _audit_fit,
    _cap_unused,
    _check_inputs,
    _check_plot,
    _defaulted_json,
    _echo_defaulted,
    _plot_option,
    _problems,
    _ratio_reach,
    _read_through,
    _refuse,
    _relative,
    _serving_options,
    _spec,
    _stack_warnings,
    _warn_code,
)
from passprice.cli.params import _OutputPath, _require_unicode, _Step
from passprice.files import shown as shown_path

# --- locks -----------------------------------------------------------------------------------------------------------


def _parse_requires(requires: tuple[str, ...]) -> dict[str, Any]:
    from passprice.facts import Provenance
    from passprice.locks import is_fact_path
    from passprice.routing import ROUTING_PATHS

    out = {}
    for item in requires:
        path, sep, level = item.partition("=")
        if not sep or not path:
            raise click.BadParameter(f"{item!r} is not PATH=PROVENANCE", param_hint="--require")
        if path == "routing.*":
            # the routing record's facts together, as the README's qwen3 lock "requires routing.* >= measured": the
            # policy stores each path (a new user's `--require 'routing.*=measured'` was not a fact path)
            floor = Provenance.parse(level, f"--require {path}")
            out.update(dict.fromkeys(ROUTING_PATHS, floor))
            continue
        if not is_fact_path(path):
            # A path that prints like a fact path (a Cyrillic а in `аrray`) is spelled by its code points: "'аrray'
            # is not a fact path" read as a refusal of `array` itself (attack round 31).
            spelled = "" if ascii(path) == repr(path) else f" (spelled {path!a}: it prints like another name)"
            raise click.BadParameter(
                f"{path!r}{spelled} is not a fact path (memory.bandwidth, streams.rewrite, array, host.read, "
                "draft.acceptance.1, routing.hot_share, routing.* for both routing facts …)",
                param_hint="--require",
            )
        out[path] = Provenance.parse(level, f"--require {path}")
    return out


def _given(o: dict[str, Any]) -> list[str]:
    """The serving options given on the command line (``--batch`` …), by name."""
    return sorted(f"--{k.replace('_', '-')}" for k, v in o.items() if v is not None and v is not False)


@cli.command("lock")
@_serving_options(with_batch=True)
@click.option("-o", "--output", type=_OutputPath(stdout=False),
              help="Lock file to write, relative to the working folder (not to --root), as every -o is (default: the "
              "registry's locks/NAME.lock.toml). check, price and diff read the registry's locks/ only: a lock "
              "written elsewhere is yours to keep, and said to be.")
@click.option("--name", help="Lock name (default: NAME of -o NAME.lock.toml, else the serving's name).")
@click.option("--best", "kind", flag_value="best", help="Lock the best batch's price instead of the serving's batch.")
@click.option("--floor", type=click.Choice(["published", "measured", "derived", "estimated", "assumed"]),
              help="Weakest provenance any fact may have (default: each fact the price rests on floored at its "
              "provenance today).")
@click.option("--require", "requires", multiple=True, metavar="PATH=PROVENANCE",
              help="A per-path floor, e.g. streams.rewrite=measured (repeatable; routing.* floors both routing "
              "facts); the price must rest on PATH.")
@click.option("--update", is_flag=True,
              help="Re-lock the existing lock with today's facts, checkpoint, serving and code, keeping its name, "
              "kind, serving, stack and policy (with --force --require PATH=PROVENANCE: PATH's floor set as given).")
@click.option("--force", is_flag=True,
              help="Overwrite an existing lock (its policy rebuilt from the flags; every floor loosened or removed is "
              "printed).")
@click.option("--stack", metavar="S", help="Lock the expected price under serving stack S too, pinning its facts.")
@_json_option
@click.pass_context
def lock_command(
    ctx: click.Context,
    /,
    serving: str | None,
    output: Path | None,
    name: str | None,
    kind: str | None,
    floor: str | None,
    requires: tuple[str, ...],
    update: bool,
    force: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Price SERVING and write a lock pinning everything the price is a function of: the facts it rests on, the
    checkpoint's content, the serving, the policy and the pricing model's code."""
    from passprice import locking
    from passprice.facts import Provenance
    from passprice.locks import replaced, replaced_lines
    from passprice.serving import ServingRefusal

    if name is not None and not locking.LOCK_NAME.fullmatch(name):  # .match let "x\n" through ($ before a \n)
        raise click.BadParameter(
            f"{name!r} is not a lock name: use letters, digits, '.', '_' and '-' (first a letter or digit)",
            param_hint="--name",
        )
    if name is not None and len(name) > locking.MAX_LOCK_NAME:
        from passprice.schema import shown_value

        raise click.BadParameter(
            f"{shown_value(name)} is not a lock name: {len(name):,} characters, where a lock file locks/NAME.lock.toml "
            f"holds at most {locking.MAX_LOCK_NAME} before .lock.toml",
            param_hint="--name",
        )
    from passprice.registry import windows_problem

    problem = windows_problem(name) if name is not None else None
    if problem is not None:
        raise click.BadParameter(f"{name!r} is not a lock name: {problem}, where no file of that name can be checked "
                                 "out", param_hint="--name")
    if update and (floor is not None or kind is not None or (requires and not force)):
        raise click.UsageError(
            "--update keeps the lock's kind and policy: give --force (with --floor/--require/--best) to change them; "
            "--update --force --require PATH=PROVENANCE changes PATH's floor alone, keeping the rest"
        )
    overridden = bool(_given({k: v for k, v in o.items() if k != "serving"}))
    if update and overridden:
        raise click.UsageError("--update re-locks the lock's own serving as it is today: give no serving options")
    root = _root(ctx)
    given = output is not None
    if output is None:
        locking.require_no_lock_as_serving(serving, update)
        if serving is None and name is None:
            raise click.UsageError("give -o FILE (or a SERVING or --name to write locks/NAME.lock.toml)")
        output = locking.default_output(root, name or Path(serving or "").stem)
    from passprice.registry import within

    if not root.embedded and within(root, output):  # a lock outside the checkout is the user's own (round 17)
        from passprice.pins import require_checkout_code

        require_checkout_code(root.path)  # a lock of the running code, not this checkout's: refused (exit 2)
    _warn_code(root)
    locking.require_place(root, output, (ctx.find_root().obj or {}).get("root"))
    _check_inputs([("SERVING", serving), ("--checkpoint", o.get("checkpoint")), ("--card", o.get("card"))],
                  [("-o", output)])
    from passprice.edit import replacing

    ctx.with_resource(replacing(output, update or force))  # the old lock read and replaced while no other writer can
    old = locking.previous(root, output, update, force)
    base = locking.update_base(root, old) if update and old is not None and serving is None else None
    root, spec = _spec(ctx, serving, base=base, **o)
    _check_inputs(_read_through(root, [], stack=stack, specs=[spec]), [("-o", output)])
    locking.require_suffix(output)
    lock_name = _require_unicode(
        locking.lock_name(output, serving, name, old if update else None), "lock name"
    )
    locking.require_file_name(root, output)
    try:
        written = locking.write(
            root, output, spec, lock_name,
            kind=kind,
            locked=locking.locked_serving(root, serving, overridden, old if update else None),
            old=old,
            update=update,
            force=force,
            floor=Provenance(floor) if floor is not None else None,
            requires=_parse_requires(requires),
            stack=stack,
        )
    except (locking.LockNotWritten, locking.LockOnStaleFacts) as e:
        e.shown_as = locking.written_as(root, output, given, (ctx.find_root().obj or {}).get("root"))
        _refuse(e)
    except ServingRefusal as e:
        from passprice.files import shell_word
        from passprice.stacks import BeyondStack

        if isinstance(e, BeyondStack) and serving is not None and locking.best_instead(root, spec, stack, kind):
            # the user's own options that still apply (-o, --name, --floor, --require, the serving's): the advice
            # without -o wrote locks/SERVING.lock.toml, "already exists" (a new user's -o /tmp/x.lock.toml dropped)
            kept = [words for _, words in _typed_options(ctx, {p.name for p in ctx.command.params if p.name}
                                                         - {"serving", "kind", "batch", "stack", "requires"})]
            kept += [f"--require {shell_word(item)}" for item in requires]
            hint = (f"or lock its best price inside the stack's range: "
                    f"`passprice lock {shell_word(serving)} --best --stack {shell_word(str(stack))}"
                    + "".join(f" {words}" for words in kept) + "`")
            raise Refused(f"{e}; {hint}", {**e.to_json(), "message": f"{e}; {hint}", "best_instead": True},
                          None) from None
        _refuse(e)
    lock = written.lock
    if lock.kind != "best":
        _cap_unused(o, f"a {lock.kind} lock records the price at the serving's batch, whatever its TPOT (lock --best "
                       "records the best batch within the cap)")
    for change in written.loosened:
        click.echo(f"passprice: warning: lock {lock.name}: {change.describe()}", err=True)
    reach = None
    if lock.stack is not None:  # the cards and kinds of model its runs never measured, as price --stack warns
        from passprice.servings import resolve
        from passprice.stacks import load_stack, price_expected

        resolved = resolve(root, spec)
        the_stack = load_stack(root, lock.stack.name)
        _stack_warnings(root, the_stack, [lock.card], resolved.header)
        # the recorded expected price against the stack's fitted span, as price and best say it (walkthrough 21)
        with contextlib.suppress(ServingRefusal):
            reach = _ratio_reach(ctx, price_expected(resolved.header, resolved.card, resolved.serving, the_stack,
                                                     lock.kind), resolved)
    if root.embedded:  # README: outside a registry, `lock` says so (newcomer walkthrough 12: it did not)
        click.echo(f"passprice: note: not in a registry: lock {lock.name} pins the facts passprice ships "
                   f"({shown_path(root.path)}); `passprice reproduce` of it outside a registry reads them again",
                   err=True)
    shown_as = locking.written_as(root, output, given, (ctx.find_root().obj or {}).get("root"))
    unread = locking.unread_note(root, output, lock.name, shown_as, (ctx.find_root().obj or {}).get("root"))
    if unread is not None:  # issue 13: walk42's `--root COPY lock -o locks/x.lock.toml` wrote the checkout's, unsaid
        click.echo(f"passprice: note: {unread}", err=True)
    if as_json:  # "path" as the text line names it (left28d: it was absolute where the line was relative)
        _echo_json(
            {
                "lock": lock.name,
                "path": shown_as,
                "absolute_path": locking.absolute_path(output),
                "serving": lock.info.serving,
                "price": lock.price,
                "loosened": [c.describe() for c in written.loosened],
                # the price --update replaced (walkthrough 47); null for a lock written anew
                "replaced": replaced(old.price, lock.price) if update and old is not None else None,
                **({"stack_span": reach.to_json()} if reach is not None and reach.runs else {}),
            }
        )
    else:
        locks = f"locks serving {lock.info.serving}" if lock.info.serving else "locks no registered serving"
        click.echo(
            f"locked {lock.name} ({lock.kind}, {locks}): {lock.price['tokens_per_s']:,.1f} tokens/s at batch "
            f"{lock.price['batch']}, binds on {lock.price['binds']}, weakest {lock.price['provenance']} "
            f"-> {shown_as}"
        )
        from passprice.locks import expected_line

        expected = expected_line(lock.price)
        if expected is not None:
            click.echo(f"  {expected}")
        if reach is not None and reach.runs:
            click.echo(f"  fitted span   {reach.line()}")
        if update and old is not None:  # the price it replaces (walkthrough 47: the new one alone was printed)
            for line in replaced_lines(old.price, lock.price):
                click.echo(f"  replaces  {line}")


@cli.command("reproduce")
@click.argument("lock")
@_json_option
@click.pass_context
def reproduce_command(ctx: click.Context, lock: str, as_json: bool) -> None:
    """Re-price LOCK from its own pinned facts, checkpoint content and serving with today's code, show it equals
    the recorded price, and say which of its inputs changed since (facts, checkpoint content, serving, pricing
    model) with the recorded and re-priced figures side by side. Exit 1 when it does not reproduce."""
    from passprice.errors import spelled_lines
    from passprice.locks import lock_path, older_format, read_lock_in
    from passprice.reproduce import reproduce, reproduction_json, reproduction_text

    root = _root(ctx)
    _warn_code(root)
    path = lock_path(root, lock)
    the_lock = read_lock_in(root, path)
    from passprice.enforce import LockRefusal, require_known_model

    try:  # a pricing model no passprice had is no code to blame a move on: forged (slip 55)
        require_known_model(the_lock, no_lock=False, root=root.path)  # and, in locks/, a record not listed (slip 57)
    except LockRefusal as e:
        _refuse(e)
    rep = reproduce(root, the_lock, grouped=True)  # a fact with those derived from it, as diff groups them
    if the_lock.stack is not None:  # today's expected column on a fit its runs no longer give (walkthrough 27)
        import attrs

        from passprice.review import stale_stack_facts

        rep = attrs.evolve(rep, stale_stack=stale_stack_facts(root, the_lock.stack.name, rep.today.price))
    shown = _relative(root, path)
    older = older_format(the_lock, str(path.resolve()) if root.embedded else shown, root, path)  # a path to paste
    ctx.meta[STATUS] = 0 if rep.equals else 1  # the verdict stands if the reader leaves mid-report (`| head`)
    from passprice.pins import LOCK_FORMAT, checkout_note
    from passprice.reproduce import model_commit, requirement_at

    commit, cut = (model_commit(root, the_lock.info.pricing_model)
                   if rep.model_changed and the_lock.info.format >= LOCK_FORMAT else (None, None))
    requirement = requirement_at(root, commit[0]) if commit is not None and not rep.holds_code else None
    if as_json:
        _echo_json(reproduction_json(rep, older, commit, requirement, cut))
    else:
        text = reproduction_text(rep, shown, older, "" if root.embedded else checkout_note(root.path), commit,
                                 requirement, cut)
        # A look-alike name (a card copied under a Cyrillic х) reads as the name it copies: spelled out (slip 32).
        click.echo(spelled_lines(text))
    if rep.bad_input is not None:  # a file of today's that does not read: bad input, after the report, as check
        _problems([rep.bad_input])
    if not rep.equals:
        moved = rep.checkpoint.moved_to
        if rep.price is None and moved is not None:  # the entry is here, its file renamed (tests/test_fix146.py)
            from passprice.tables import printable

            moved = printable(moved)
            click.echo(f"passprice: refused: lock {the_lock.name} cannot be reproduced here: the entry holding its "
                       f"pinned checkpoint, registry/checkpoints/{moved}.toml, does not read (its file's name is not "
                       "its [entry] name), so no price is made to compare with the recorded one", err=True)
        elif rep.price is None:  # no price was made (its pinned checkpoint is not here): no mismatch to report
            click.echo(f"passprice: refused: lock {the_lock.name} cannot be reproduced here: no entry of this registry "
                       "holds its pinned checkpoint, so no price is made to compare with the recorded one", err=True)
        else:
            click.echo(f"passprice: refused: lock {the_lock.name} does not reproduce its recorded price", err=True)
        if rep.checkpoint.status != "same" and rep.checkpoint.found is None and moved is None:
            # (an entry renamed is set right where it is: a copy would register the checkpoint twice)
            from passprice.checkpointcite import packaged_hint

            hint = packaged_hint(root, the_lock)  # a fresh registry lacking it (walkthrough 25)
            if hint is not None:
                click.echo(hint, err=True)
        ctx.exit(1)


@cli.command("check")
@click.option("--frozen", is_flag=True, help="Make drift of any pinned fact an error (as cargo --locked).")
@_json_option
@click.pass_context
def check_command(ctx: click.Context, frozen: bool, as_json: bool) -> None:
    """Validate every file against its schema and judge every lock against today's facts."""
    from passprice.check import check

    root = _root(ctx)
    _warn_code(root)
    report = check(root)
    ctx.meta[STATUS] = 2 if report.unreadable else 0 if report.ok(frozen) else 1  # stands if the reader leaves
    if as_json:
        _echo_json(report.to_json(frozen))
    else:
        click.echo(report.text(frozen))
    if report.unreadable:  # files that do not read are bad input: on stderr, exit 2, after the rest of the report
        _problems(report.error_lines())
    elif not report.ok(frozen):
        ctx.exit(1)


def _typed_options(ctx: click.Context, names: set[str]) -> list[tuple[str, str]]:
    """The options of ``names`` (parameter names) the command line gave (its own or from the environment, not a
    default), in the command's order: each as ``(option, words)``, the option as typed (``--no-host-memory`` for a
    flag pair's off side) and the words that give it (``--batch 3``). A ``False`` off flag counts as given: a
    ``v is not False`` test let ``audit LOCK --no-host-memory`` pass silently (left32)."""
    from click.core import ParameterSource

    given = []
    for param in ctx.command.params:
        if param.name not in names or not isinstance(param, click.Option):
            continue
        if ctx.get_parameter_source(param.name) not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            continue
        value = ctx.params.get(param.name)
        if param.is_flag:
            option = param.opts[0] if value or not param.secondary_opts else param.secondary_opts[0]
            given.append((option, option))
        else:
            given.append((param.opts[0], f"{param.opts[0]} {_typed_word(value)}"))
    return given


def _typed_word(value: object) -> str:
    """An option's value as a user types it, one shell word: a number as a number (a whole float without ``.0``,
    another as its shortest text, ``0.9``), anything else as :func:`passprice.files.shell_word` quotes it. The
    advice after a ``lock --stack`` refusal said ``--position 4000.0`` where the user typed ``--position 4000``.
    Raises nothing."""
    from passprice.files import shell_word

    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return shell_word(str(value))


@cli.command("audit")
@click.argument("target", required=False)
@_serving_options(with_batch=True, serving_shown=False)
@click.option("--source", "source_id", metavar="ID",
              help="Audit backwards: every fact citing source ID, the servings and locks resting on them, and which "
              "locks break if it is withdrawn.")
@click.option("--fact", "fact_ref", metavar="CARD:PATH",
              help="The same for one fact (CARD:PATH, METHOD:acceptance.N or ROUTING:hot_share).")
@click.option("--stack", "stack_ref", metavar="S",
              help="Audit SERVING's expected price under serving stack S (facts/stacks), as price --stack S makes it: "
                   "the stack's fitted facts and their sources with the card's.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
    help="text for people, markdown for a pull-request comment, json for programs.",
)
@click.option("--step", "step_pct", type=_Step(), default=1.0, show_default=True, metavar="PERCENT",
              help="Measure each elasticity over a change of PERCENT (e.g. 10: which fact, 10 % wrong, moves the "
                   "price most).")
@_plot_option("each fact's elasticity as a bar chart")
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@_json_option
@click.pass_context
def audit_command(
    ctx: click.Context, /, target: str | None, source_id: str | None, fact_ref: str | None, stack_ref: str | None,
    step_pct: float, fmt: str, plot_path: Path | None, force: bool, as_json: bool, **o: Any,
) -> None:
    """Audit the facts a price rests on: TARGET is a SERVING (today's facts, options apply) or a lock (its pinned
    facts): a lock file, NAME.lock.toml, or a name in locks/ that names no serving. With --source ID or --fact
    CARD:PATH, audit backwards: what rests on that source or fact."""
    from passprice.audit import audit_json, audit_markdown, audit_text, cited_sources
    from passprice.registry import BUILT_IN
    from passprice.reproduce import CheckpointGone
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve

    serving_arg = o.pop("serving", None)
    if serving_arg is not None:
        raise click.UsageError(f"audit takes one TARGET (a lock or a serving), not also {serving_arg!r}")
    fmt = "json" if as_json else fmt
    root = _root(ctx)
    _check_plot(plot_path, force, root)
    if source_id is not None or fact_ref is not None:
        given = sorted(f"--{k.replace('_', '-')}" for k, v in o.items() if v is not None and v is not False)
        if (target is not None or given or (source_id is not None and fact_ref is not None) or plot_path is not None
                or stack_ref is not None or step_pct != 1.0):
            raise click.UsageError("--source and --fact audit the registry: give one of them, and no TARGET, "
                                   "serving option, --stack, --step or --plot")
        from passprice.lineage import fact_lineage, parse_fact_ref, render, source_lineage

        lineage = (
            source_lineage(root, source_id) if source_id is not None
            else fact_lineage(root, parse_fact_ref(root, fact_ref or ""))
        )
        if fmt == "json":
            _echo_json(lineage.to_json())
        else:
            click.echo(render(lineage, fmt))
        return
    from passprice.audit import audit_subject, lock_pins, lock_subject, names_lock, serving_subject

    if target is not None and names_lock(root, target):
        from passprice.audit import lock_options_problem

        typed = _typed_options(ctx, {*o, "stack_ref"})
        if typed:
            # left32: a lock (named by its digest too) pins what each option would change: one line, exit 2
            problem = lock_options_problem(root, target, typed)
            if problem is not None:
                raise click.UsageError(problem)
        _check_inputs([("TARGET", target)], [("--plot", plot_path)])
        try:
            subject = lock_subject(root, target)
        except CheckpointGone as e:
            raise Refused(str(e), e.to_json()) from None
        from passprice.enforce import LockRefusal, require_unforged

        try:  # a forged lock is no price to audit or cite, as every pricing command refuses it (slip 53)
            require_unforged(root, [(subject.lock, target)] if subject.lock is not None else [], subject.header)
        except LockRefusal as e:
            _refuse(e)
    else:
        from passprice.enforce import LockRefusal

        root, spec = _spec(ctx, target, **o)
        # --plot over the header or card it prices (`audit --checkpoint h.png --plot h.png --force` drew over the
        # header, exit 0: attack round 26)
        _check_inputs([("TARGET", target), *_read_through(root, [], stack=stack_ref, specs=[spec])],
                      [("--plot", plot_path)])
        resolved = resolve(root, spec)
        _cap_unused(o, "audit prices the serving's batch, as price does")
        the_stack = None
        if stack_ref is not None:
            from passprice.stacks import load_stack

            the_stack = load_stack(root, stack_ref)
            _stack_warnings(root, the_stack, [resolved.card.name], resolved.header)
            from passprice.stacks import price_expected

            # the expected price's ratio against its stack's fitted span (a refusal is the audit's to report)
            with contextlib.suppress(ServingRefusal):
                _ratio_reach(ctx, price_expected(resolved.header, resolved.card, resolved.serving, the_stack),
                             resolved)
        try:
            subject = serving_subject(root, target, resolved, the_stack)
        except LockRefusal as e:
            _refuse(e)
    from passprice.report import cost_json

    try:
        report = audit_subject(subject, lambda cost: _finite(cost_json(cost)), step_pct / 100)
    except ServingRefusal as e:
        _refuse(e)
    from passprice.sources import load_sources

    sources = load_sources(root)
    result, stale, title = report.audit, report.stale, subject.title
    if subject.stack is not None:  # the stack's fitted facts are derived too: a fit that does not follow is marked
        stale = _audit_fit(root, subject, stale, [r.path for r in result.rows])
    if plot_path is not None:
        from passprice.plots import audit_picture, picture_format, write_picture

        write_picture(plot_path, audit_picture(result, title, picture_format(plot_path)), force)
    calibration = subject.calibration
    from passprice.checkpointcite import checkpoint_cited

    # the checkpoint the pass's bytes are read from, and where it came from (walkthrough 25)
    cited = checkpoint_cited(root, subject.header, cost_json(result.cost))
    if subject.lock is not None:  # the origin the lock pinned, where today's entry states another (leftovers 28)
        cited = cited.pinned_by(subject.lock)
    from passprice.sourcenotes import notes_lines, notes_markdown, with_notes

    # each cited document's caveat, its source record's note (walkthrough 25)
    cited_ids = cited_sources(result)  # the facts' documents and those their derivations' figures cite
    from passprice.sources import stored_texts

    # each cited document's stored excerpt, read once: its problem said, and the quotes checked against it
    texts = stored_texts(root, sources, [*cited_ids, *(c.source for c in calibration)])
    since: tuple[Any, ...] = ()
    compared = True  # whether a lock's source records could be compared with those at its commit
    at: Any = None  # the lock's commit and its stored excerpts there
    excerpted = any(t.excerpt for t in texts.values())
    if subject.lock is not None and subject.reference is not None:
        # a lock pins source ids, not documents: a record changed since the lock was committed is said (session 24)
        from passprice.locks import lock_path
        from passprice.sourcechange import read_at_lock

        # walkthrough 31: a lock no commit holds (handed over outside git) is said to be audited on today's records;
        # the excerpts committed with the lock read by the same git calls (tests/test_left131.py)
        looked: list[str] = []  # why its commit was not taken at its path (issue 13: an index flag, a git stopped)
        since, compared, at = read_at_lock(root, lock_path(root, subject.reference), cited_ids, sources,
                                           list(texts) if excerpted else [], looked)
        for line in looked:
            click.echo(f"passprice: warning: {line}", err=True)
    from passprice.sourcechange import UNCOMPARED

    uncompared = [] if compared else [f"  sources       {UNCOMPARED}"]
    at_lock: dict[str, Any] | None = None  # which stored excerpts a lock's quotes were checked against
    excerpts_said: str | None = None
    if subject.lock is not None and subject.reference is not None and excerpted:
        from passprice.sourcechange import excerpts_line

        # the excerpts committed with the lock where today's differ, and say which were read (a new user's audit of
        # an old lock found a hyphen NOT FOUND in an excerpt that an em dash had since replaced)
        replaced = []
        for sid, then in (at[1] if at is not None else {}).items():
            now = texts.get(sid)
            # the text and its pages: a line moved to another page is another stored text for a quote naming a page
            if now is not None and now.problem is None and (then.flat, dict(then.pages)) != (now.flat, dict(now.pages)):
                texts[sid] = then
                replaced.append(sid)
        at_lock = {"commit": at[0] if at is not None else None, "replaced": sorted(replaced)}
        if at is None or replaced:
            excerpts_said = excerpts_line(at[0] if at is not None else None, replaced)
    from passprice.audit import stack_reach

    # how far the expected price lies from where its stack was fitted, in the audit's body (walkthrough 38)
    reach = stack_reach(root, subject)
    if reach is not None and subject.lock is not None:  # as audit SERVING --stack and price --stack warn
        spanned = reach.span.warning() if reach.span is not None and reach.span.runs else None
        for line in [*reach.warnings, *([spanned] if spanned else [])]:
            click.echo(f"passprice: warning: {line}", err=True)
    if fmt == "json":
        from passprice.registry import registry_named

        data = audit_json(result, report.extra(), stale, sources, subject.routing, texts, registry_named(root))
        data["sources"] = with_notes(data["sources"], sources)
        extra: dict[str, Any] = {}
        if subject.lock is not None:
            extra = {"sources_since_lock": [s.to_json() for s in since], "sources_compared": compared,
                     # what identifies the price a paper cites (walkthrough 36)
                     "lock_digest": subject.lock.info.digest,
                     "excerpts_at_lock": at_lock,
                     "pricing_model": subject.lock.info.pricing_model if subject.lock.info.format >= 2 else None}
        if reach is not None:
            extra.update(reach.to_json())
        _echo_json({**data, "checkpoint": cited.to_json(), **extra, **_defaulted_json(subject.header)})
    elif fmt == "markdown":
        from passprice.tables import markdown_prose

        click.echo(audit_markdown(result, title, sources, stale, calibration, subject.routing, subject.draft,
                                  BUILT_IN if root.embedded else "", texts, root.path if root.embedded else None))
        from passprice.architectures import defaulted_window

        said = defaulted_window(subject.header)
        if said is not None:  # as price says it (arch44: audit priced gemma2's 4,096 without a word)
            click.echo(f"\n- **defaulted** {markdown_prose(said.line())}")
        pinned: list[str] = []
        if subject.lock is not None:  # what identifies the price a paper cites (walkthrough 36)
            pins, cite = lock_pins(subject.lock, subject.reference)
            pinned = ["", f"**lock** {markdown_prose(pins)} ({markdown_prose(cite)})"]
        reached = [] if reach is None or not reach.markdown_lines() else ["", *reach.markdown_lines()]
        click.echo("\n".join([*reached, "", *notes_markdown(sources, cited_ids), *pinned, "", *cited.markdown_lines(),
                              *([""] + [f"- ⚠️ {markdown_prose(s.line())}" for s in since] if since else []),
                              *(["", f"- {markdown_prose(excerpts_said)}"] if excerpts_said else []),
                              *(["", f"- {markdown_prose(UNCOMPARED)}"] if uncompared else [])]))
    else:
        click.echo(audit_text(result, title, sources, stale, calibration, subject.routing, subject.draft,
                              BUILT_IN if root.embedded else "", texts, root.path if root.embedded else None))
        _echo_defaulted(subject.header)  # as price says it (arch44: audit priced gemma2's 4,096 without a word)
        noted = notes_lines(sources, cited_ids)
        pinned = []
        if subject.lock is not None:  # what identifies the price a paper cites (walkthrough 36)
            pins, cite = lock_pins(subject.lock, subject.reference)
            pinned = ["", f"lock          {pins}", f"              {cite}"]
        reached = [] if reach is None or not reach.lines() else ["", *reach.lines()]
        click.echo("\n".join([*reached, *(["", *noted] if noted else []), *pinned, "", *cited.text_lines(),
                              *(["", *(f"  since lock    {s.line()}" for s in since)] if since else []),
                              *(["", f"  excerpts      {excerpts_said}"] if excerpts_said else []),
                              *(["", *uncompared] if uncompared else [])]))
    for s in since:
        click.echo(f"passprice: warning: {s.line()}", err=True)
    if report.warning and fmt != "json":
        click.echo(f"\n{report.warning}")
    if report.warning:
        click.echo(f"passprice: warning: lock {target} does not reproduce its recorded price", err=True)
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)


# --- reviewing fact changes ------------------------------------------------------------------------------------------


@cli.command("diff")
@click.argument("base", required=False)
@click.argument("head", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "markdown", "comment", "json"]), default="text", show_default=True,
    help="text for people, markdown for a pull-request comment (comment: the same behind the marker the sticky "
    "comment is found by), json for programs.",
)
@click.option("--repository-url", metavar="URL", help="Link files and changed lines in markdown: the repository's "
              "address (https://github.com/OWNER/NAME).")
@click.option("--ref", metavar="SHA", help="The commit (or branch) --repository-url links to (the head of the change).")
@_json_option
@click.pass_context
def diff_command(
    ctx: click.Context, base: str | None, head: str | None, fmt: str, repository_url: str | None, ref: str | None,
    as_json: bool,
) -> None:
    """Compare BASE and HEAD: each changed fact (old and new value, provenance, citation), checkpoint, serving, lock
    policy and the pricing model, and every lock re-priced with each side's inputs and code. BASE and HEAD are git
    revisions or folders (default: the merge base with main, else origin/main, master or origin/master, and the
    work tree). Exit 1 when a change breaks a
    lock's floors, moves a locked price without re-locking it, or leaves a derived fact stale (the locks resting on
    it are marked), 2 when a file does not read on HEAD."""
    from passprice.comment import Links
    from passprice.review import diff, render

    if (repository_url is None) != (ref is None):
        raise click.UsageError("give --repository-url and --ref together")
    links = Links.of(repository_url, ref)
    result = diff(_root(ctx), base, head)
    ctx.meta[STATUS] = result.exit_status  # the review's verdict stands if the reader leaves mid-report
    if as_json or fmt == "json":
        _printed_json()
    click.echo(render(result, "json" if as_json else fmt, links))
    if result.exit_status == 2:
        for line in result.head_error_lines():
            click.echo(f"passprice: error: {line}", err=True)
    elif result.exit_status == 1:
        click.echo(f"passprice: refused: {'; '.join(result.refusal_reasons())}", err=True)
    ctx.exit(result.exit_status)
