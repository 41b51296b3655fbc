"""What several commands share, defined once: the options that name a serving and the pass it prices, and how the pass
is resolved from them (under its locks, under a serving stack); outputs and inputs checked before any work; the
registry's files read with their problems kept for the end."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from passprice.cli.app import F, Refused, T, _as_given, _root, _root_or_none
from passprice.cli.params import _DeferredArgument, _float, _int, _OutputPath
from passprice.errors import InputError, escaped, problem_lines


def _read_only(root: Any) -> str:
    """:func:`passprice.registry.read_only`: the embedded default named as a command that will not write into it."""
    from passprice.registry import read_only

    return read_only(root)


def _check_output(path: Path | None, force: bool) -> None:
    """Refuse an output file before any work is done (a sweep or a simulation can take seconds, and used to fail
    only when it came to write), for every reason the writer would (:func:`passprice.files.check_writable`: a
    folder, a device or FIFO, a read-only file, an existing file without ``--force``, a folder that does not exist).
    Raises :class:`InputError`."""
    if path is not None:
        from passprice.files import check_writable

        check_writable(path, force)


def _relative(root: Any, path: Path) -> str:
    """``path`` relative to the root when it lies below it (``locks/NAME.lock.toml``; the embedded registry's said
    so: :func:`passprice.registry.in_root`), else as given."""
    from passprice.registry import in_root

    return str(in_root(root, path))


def _plot_option(what: str) -> Callable[[F], F]:
    """``--plot FILE.png|svg``: draw ``what`` (matplotlib, the plot extra)."""
    return click.option(
        "--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE.png|svg",
        help=f"Draw {what} (needs matplotlib: pip install '.[plot]' in a checkout); --force overwrites.",
    )


def _check_plot(path: Path | None, force: bool, root: Any, output: Path | None = None) -> None:
    """Refuse a bad ``--plot`` file (its suffix, an existing file without --force, the file ``-o`` names too:
    :func:`passprice.files.require_apart`, a link to a record of ``root``:
    :func:`passprice.registry.require_not_record`) and a missing matplotlib before any work is done. Raises
    :class:`InputError`."""
    if path is None:
        return
    from passprice.files import require_apart

    require_apart(("--plot", path), ("-o", output))
    from passprice.files import name_suffix
    from passprice.plots import picture_format
    from passprice.registry import require_not_record
    from passprice.roofline import check_matplotlib

    if name_suffix(path) not in (".png", ".svg"):  # the name typed; a link's target's suffix below
        picture_format(path)
    _check_output(path, force)
    require_not_record(root, path, "--plot")
    picture_format(path)  # a link named .png onto an .svg: after the refusals that say more (a record, an input)
    check_matplotlib()  # imported when the picture is drawn (about 0.5 s), not by a run refused before it


def _check_inputs(inputs: list[tuple[str, str | Path | None]], outputs: list[tuple[str, Path | None]]) -> None:
    """Refuse an output (``-o``, ``--plot``) landing on a file the command reads (each input an ``(option,
    value)``; a value that names no file, such as a registry name, is none: :func:`passprice.files.require_not_input`).
    Raises :class:`InputError` before anything is written. Without an output nothing is looked up: ``sweep --cards``
    of 100,000 names (600 KB) spent 1.5 s of CPU looking up each name in the working folder, with no ``-o`` to
    compare them with (tests/test_attack187.py)."""
    from passprice.files import look, require_not_input

    if all(output is None or str(output) == "-" for _, output in outputs):
        return
    for label, value in inputs:
        try:
            if value is None or look(Path(value)) is None:
                continue
        except InputError:  # no file name (too long, a loop of links): the input's own lookup says so
            continue
        for output in outputs:
            require_not_input((label, Path(value)), output)


def _read_through(root: Any, servings: Sequence[tuple[str, str]], cards: Sequence[tuple[str, str]] = (),
                  stack: str | None = None, specs: Sequence[Any] = ()) -> list[tuple[str, str | Path | None]]:
    """The files a command reads through the names it was given, for :func:`_check_inputs`: each serving's file
    (``(label, ref)``) and the files it names (:func:`passprice.servings.named_files`; its card left out where
    ``cards`` replace it), each of ``specs``' named files, each card's file, the stack's. A sweep file's servings and
    cards, a serving file's card and checkpoint, ``--stack FILE.toml``: ``-o`` over any of them replaced the input,
    exit 0, since only the command line's own names were looked at (attack round 26). A name that names nothing is
    left out (the command's own lookup says so). Raises nothing."""
    from passprice.cards import card_path
    from passprice.servings import load_spec, named_files, serving_path
    from passprice.stacks import stack_path

    out: list[tuple[str, str | Path | None]] = []
    for label, ref in servings:
        try:
            out.append((label, serving_path(root, ref)))
            specs = [*specs, load_spec(root, ref)]
        except InputError:
            continue
    for spec in specs:
        out.extend(named_files(root, spec, card=not cards))
    for label, ref in cards:
        with contextlib.suppress(InputError):
            out.append((label, card_path(root, ref)))
    if stack is not None:
        with contextlib.suppress(InputError):
            out.append(("--stack", stack_path(root, stack)))
    return out


def _problems(lines: Any) -> None:
    """Keep ``lines`` (problems of files that do not read) for the end of the command: the command still shows what
    does read, then the group prints each line on stderr (``passprice: error: …``) and exits 2."""
    click.get_current_context().meta.setdefault("passprice.problems", []).extend(lines)


def _kept_problems() -> list[str]:
    """The lines :func:`_problems` kept so far, each once, in order: a listing's ``--json`` holds them as
    ``"problems"`` (as ``check --json`` holds the files that do not read), so a program reading stdout knows the list
    leaves those files out (leftovers 28d: only stderr named them). Each line as the group prints it on stderr,
    without ``passprice: error:`` and unescaped (JSON escapes it), its paths as the group writes them
    (:func:`_as_given`: a folder of the built-in registry that may not be searched was the package's absolute path in
    ``servings --json`` where stderr said ``the built-in registry's facts/cards``, left40). Raises nothing."""
    ctx = click.get_current_context()
    kept = list(dict.fromkeys(ctx.meta.get("passprice.problems", [])))
    return _as_given(ctx, kept, _root_or_none(ctx)) if kept else kept


def _load_all(names: list[str], load: Callable[[str], T], folder: Path | None = None,
              root: Any = None) -> list[tuple[str, T]]:
    """Each of ``names`` loaded: those that load, in order; the problems of every file that does not (not only the
    first), one line each, are kept for the end of the command (:func:`_problems`), so a listing still shows every
    good file and then reports the bad ones on stderr with exit status 2. Names of ``folder``'s files that differ
    only by case or Unicode normalization, or that name a Windows device, are such a problem too, as ``check`` says
    (:func:`passprice.check.name_problems`: ``cards`` listed ``é40`` twice, exit 0; ``nul.toml`` without a word).
    Given the ``root`` the files lie in, those name lines and the lines of files that do not read name the file
    relative to it, as ``check`` does (:func:`passprice.check.relative_lines`)."""
    loaded: list[tuple[str, T]] = []
    problems: list[str] = []
    if folder is not None:
        from passprice.check import name_problems

        found = name_problems(folder)
        if root is not None:
            from passprice.check import relative_lines

            found = relative_lines(root, found)
        problems.extend(found)
    for name in names:
        try:
            loaded.append((name, load(name)))
        except InputError as e:
            lines = problem_lines(e)
            if root is not None:  # a file that does not read, named as check names it (issue 13)
                from passprice.check import relative_lines

                lines = relative_lines(root, lines)
            problems.extend(lines)
    _problems(problems)
    return loaded


# --- pricing ---------------------------------------------------------------------------------------------------------


class _UnshownArgument(_DeferredArgument):
    """A positional argument read but not shown in the usage line: ``audit``'s second word, which it refuses by name
    ("audit takes one TARGET …"). Walkthrough 106: ``audit --help`` showed ``[TARGET] [SERVING]`` while ``audit A B``
    refused the second. Built when first used, as every parameter here (:class:`_Deferred`)."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        """None: the usage line names the command's own TARGET alone."""
        del ctx
        return []


def _whole_limit(limit: int | None, positioned: bool, instead: str) -> None:
    """Refuse ``--limit 1`` where no position is given (``positioned``): its default mean position, limit / 2, is
    0.5, and positions are whole tokens (a sequence allowed 1 position holds row 0 alone; it priced position 0.5).
    ``instead``: the command's own option that prices row 0 (``--position 0``, ``--positions 0``). Raises
    :class:`click.BadParameter` (exit 2), naming ``--limit``."""
    from passprice.servings import no_whole_mean

    lone = no_whole_mean(limit, "--limit 2 or more", instead) if limit is not None and not positioned else None
    if lone is not None:
        raise click.BadParameter(lone, param_hint="--limit")


def _serving_options(with_batch: bool, serving_shown: bool = True) -> Callable[[F], F]:
    """The options every pricing command takes (DESIGN.md, Command line); ``serving_shown=False``: the SERVING
    argument is read (for the command to refuse by name) but not shown in the usage line."""

    def decorate(f: F) -> F:
        options = [
            click.argument("serving", required=False, **({} if serving_shown else {"cls": _UnshownArgument})),
            click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path."),
            click.option("--card", help="Card: registry name or a card .toml path."),
            click.option("--position", type=_float("--position"), help="Mean position reached (positions)."),
            click.option("--limit", type=_int("--limit"), help="Context each sequence is allowed (positions)."),
            click.option("--kv-page", type=_int("--kv-page"), help="Page the KV cache, N positions a page."),
            click.option("--contiguous", is_flag=True, help="Contiguous KV cache (undo a serving's --kv-page)."),
            click.option(
                "--kv-bytes", type=_float("--kv-bytes"), help="Bytes per KV element."
            ),
            click.option(
                "--state-bytes", type=_float("--state-bytes"),
                help="Bytes per recurrent-state element.",
            ),
            click.option(
                "--activation-words", type=_int("--activation-words"), help="Words an activation crosses the array in."
            ),
            click.option("--scaling", type=click.Choice(["per-block", "sub32"]), help="Activation scaling."),
            click.option("--attention", type=click.Choice(["vector", "array"]), help="Where attention's products run."),
            click.option("--kv-rotated/--no-kv-rotated", default=None, help="Walsh–Hadamard-rotated KV cache."),
            click.option("--draft", "draft_method", help="Drafting method (facts/drafts name)."),
            click.option("--draft-tokens", type=_int("--draft-tokens"), help="Drafted tokens per pass (0: no drafts)."),
            click.option(
                "--head-rows", type=_int("--head-rows"), help="Vocabulary rows the drafting head reads."
            ),
            click.option("--flush", help="State flush: every-pass, every:N or trailing:N."),
            click.option("--host-memory/--no-host-memory", default=None, help="Let sequences live in host memory."),
            click.option(
                "--shared-prefix", type=_int("--shared-prefix"), metavar="N",
                help="Positions every sequence shares (a system prompt), held once with a paged cache (0: none).",
            ),
            click.option(
                "--prefix-read-once/--no-prefix-read-once", default=None,
                help="Read the shared prefix once a pass for the whole batch, as the weights are read.",
            ),
            click.option(
                "--routing", help="Routing record (facts/routing name) a mixture of experts is priced with.",
            ),
            click.option(
                "--max-tpot", type=_float("--max-tpot"), metavar="SECONDS",
                help="TPOT cap: the best batch is sought only among batches whose time per output token is at most "
                "this (seconds, e.g. 0.05).",
            ),
            click.option(
                "--memory-use", type=_float("--memory-use"), metavar="FRACTION",
                help="Memory headroom: the fraction of card memory the best and largest batch may fill (above 0, at "
                "most 1, e.g. 0.9; default 1, every byte).",
            ),
        ]
        if with_batch:
            options.insert(3, click.option("--batch", type=_int("--batch"), help="Sequences per pass (at least 1)."))
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def _spec(ctx: click.Context, serving: str | None, base: Any = None, **o: Any) -> Any:
    """The serving spec the command line describes: a registry serving (or file, or ``base``) with the options
    applied."""
    from passprice.serving import StateFlush
    from passprice.servings import DraftSpec, ServingSpec, load_spec, override

    root = _root(ctx)
    if o.get("checkpoint"):
        from passprice.registry import entry_named

        # `--checkpoint .//M` is the entry M, and every title and record names it so (attack round 29)
        o["checkpoint"] = entry_named(o["checkpoint"], root.checkpoints) or o["checkpoint"]
    if base is not None:
        spec = base
    elif serving is not None:
        spec = load_spec(root, serving)
    else:
        for key in ("checkpoint", "card"):
            if o.get(key) == "":  # round 17: `--checkpoint ''` was told to give both --checkpoint and --card
                raise click.BadParameter("an empty name: give a registry name or a file", param_hint=f"--{key}")
        if not o.get("checkpoint") or not o.get("card"):
            raise click.UsageError("give a SERVING, or both --checkpoint and --card")
        spec = ServingSpec(checkpoint=o["checkpoint"], card=o["card"])
    if o.get("flush") is not None:
        try:
            StateFlush.parse(o["flush"])
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--flush") from None
    draft = spec.draft
    tokens = o.get("draft_tokens")
    method = o.get("draft_method")
    if tokens == 0:
        draft = None
    elif method is not None or tokens is not None or o.get("head_rows") is not None:
        base_method = method or (draft.method if draft else None)
        base_tokens = tokens or (draft.tokens if draft else None)
        if base_method is None or base_tokens is None:
            raise click.UsageError("drafting needs both --draft METHOD and --draft-tokens K")
        head_rows = o.get("head_rows") or (draft.head_rows if draft else None)
        draft = DraftSpec(base_method, base_tokens, head_rows)
    if "position" in o:  # a command with --position (simulate's --limit is a request's, its own refusal says it)
        _whole_limit(o.get("limit"), o.get("position") is not None, "--position 0")
    spec = override(
        spec,
        position=o.get("position"),
        limit=o.get("limit"),
        checkpoint=o.get("checkpoint"),
        card=o.get("card"),
        batch=o.get("batch"),
        kv_page=o.get("kv_page"),
        kv_bytes=o.get("kv_bytes"),
        state_bytes=o.get("state_bytes"),
        activation_words=o.get("activation_words"),
        scaling=o.get("scaling"),
        attention=o.get("attention"),
        kv_rotated=o.get("kv_rotated"),
        flush=o.get("flush"),
        host_memory=o.get("host_memory"),
        shared_prefix=o.get("shared_prefix"),
        prefix_read_once=o.get("prefix_read_once"),
        routing=o.get("routing"),
        max_tpot=o.get("max_tpot"),
        memory_use=o.get("memory_use"),
    )
    if o.get("contiguous"):
        import attrs

        spec = attrs.evolve(spec, kv_page=None)
    if draft is not spec.draft:
        import attrs

        from passprice.servings import unsourced

        spec = attrs.evolve(spec, draft=draft, **unsourced(spec))  # as servings.override: the option's, not the file's
    return root, spec


def _warn_code(root: Any) -> None:
    """A warning line on stderr when ``root`` is a checkout of passprice whose code prices with another pricing
    model than the passprice running (:func:`passprice.pins.checkout_model`)."""
    from passprice.pins import checkout_model

    differs = None if root.embedded else checkout_model(root.path)
    if differs is not None and differs[0].startswith("not judged: "):
        click.echo(
            f"passprice: warning: this checkout's src/passprice was not judged ({differs[0].split(': ', 1)[1]}): "
            "whether it prices with the running passprice's pricing model is unknown; locks are written, checked "
            "and reproduced by the running code",
            err=True,
        )
    elif differs is not None and differs[0].startswith("not read: "):
        click.echo(
            f"passprice: warning: this checkout's src/passprice cannot be read ({differs[0].split(': ', 1)[1]}): it "
            "does not price as the running passprice; locks are written, checked and reproduced by the running code",
            err=True,
        )
    elif differs is not None:
        theirs, ours = differs
        click.echo(
            f"passprice: warning: this checkout's src/passprice prices with pricing model {theirs[:19]}…, the "
            f"passprice running with {ours[:19]}… (installed from another copy): locks are written, checked and "
            "reproduced by the running code; `pip install -e .` here to use the checkout's (the checkout's digest "
            "is taken by the running passprice's rules, which an older passprice did not share: it matches the "
            "pricing_model its own locks record only when both passprices digest alike)",
            err=True,
        )


def _reasons(refusals: list[Any]) -> str:
    """The refusals of several rows in one line: each refusal named once, as ``Name: its first message`` (and how
    many rows it refused with other figures), joined by ``; ``."""
    by_name: dict[str, list[str]] = {}
    for e in refusals:
        if e is not None:
            by_name.setdefault(e.name, []).append(str(e))
    said = []
    for name, messages in by_name.items():
        others = len(dict.fromkeys(messages)) - 1  # the same refusal with other figures (BeyondStack's needs …)
        more = f" (and {others} more draft length{'s' if others > 1 else ''} alike)" if others else ""
        said.append(f"{name}: {messages[0]}{more}")
    return "; ".join(said)


def _refuse(e: Any) -> NoReturn:
    from passprice.serving import BadRouting, Routed

    raise Refused(str(e), e.to_json(), e.header if isinstance(e, (Routed, BadRouting)) else None)


_STACK_HELP = "Also price the pass under serving stack S (facts/stacks): its expected price beside the card's limit."


def _resolve(root: Any, spec: Any, stack: str | None = None) -> Any:
    """:func:`passprice.servings.resolve` of ``spec``; when it fails on bad input and a ``--stack`` was given too, the
    stack's own problem (a name that names nothing) is said with the serving's (round 18: three wrong names, two
    lines)."""
    from passprice.servings import resolve

    try:
        return resolve(root, spec)
    except InputError as e:
        if stack is None:
            raise
        from passprice.stacks import load_stack

        try:
            load_stack(root, stack)
        except InputError as s:
            raise InputError.of([*e.lines, *s.lines]) from None
        raise


def _expected(ctx: click.Context, stack: str, resolved: Any, kind: str) -> Any:
    """The limit and the expected price under ``stack`` (issue 14); a refusal exits 1."""
    from passprice.serving import ServingRefusal
    from passprice.stacks import load_stack, price_expected

    the_stack = load_stack(_root(ctx), stack)
    try:
        expected = price_expected(resolved.header, resolved.card, resolved.serving, the_stack, kind)
    except ServingRefusal as e:
        _refuse(_cap_named(ctx, e))
    _stack_warnings(_root(ctx), the_stack, [resolved.card.name], resolved.header)
    return expected


def _cap_named(ctx: click.Context, e: Any) -> Any:
    """``e``, and an :class:`~passprice.batching.OverTPOT` of a command given ``--max-tpot`` made to name that
    option's cap, not the serving's ``max_tpot`` (the one place both ``best`` and ``best --stack S`` say it: under a
    stack it read "the serving's TPOT cap … (max_tpot)" for the command line's cap). Raises nothing."""
    from passprice.batching import OverTPOT

    if isinstance(e, OverTPOT) and ctx.params.get("max_tpot") is not None:
        return OverTPOT(e.batch, e.tpot_s, e.max_tpot_s, e.stack, given=True)
    return e


def _ratio_reach(ctx: click.Context, expected: Any, resolved: Any) -> Any:
    """Where ``expected``'s ratio to the limit at the same batch stands against the measured / limit span of its
    stack's fitted runs (:func:`passprice.stackreach.expected_reach`), ``None`` without a stack; a ratio outside it
    is a warning on stderr (walkthrough 19: llama.cpp's H200 price at 0.2384 × the limit, the limit 4.2 × expected,
    outside the 1.17 … 2.92 its 111 runs measured, said nothing). A best price's expected and limit lie at their own
    best batches (1 and 580 under llama.cpp): its ratio is taken against the limit at the expected price's batch,
    as each run's is (``resolved``: the serving priced)."""
    if expected is None:
        return None
    from passprice.stackreach import expected_reach

    reach = expected_reach(_root(ctx), expected, resolved.header, resolved.card, resolved.serving)
    if reach is None:
        return None
    warning = reach.warning()
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return reach


def _fit_check(ctx: click.Context, expected: Any, lock_ref: str | None = None) -> Any:
    """Whether the stack ``expected`` was priced under still fits today's registry
    (:func:`passprice.stackreach.fit_check`: its runs, or a card, checkpoint or routing record they price, changed
    since it was fitted, as ``check`` and ``diff`` find it): one warning line on stderr naming the stack and the
    command that re-fits it when it does not, and the check for ``--json``'s ``stack_fit`` (``None`` without a
    stack). Session 24: ``price``/``best --stack`` on a stale fit said nothing. With ``--lock L`` (``lock_ref``)
    made under that stack, the line says the check re-fitted today's stack file and whether L pinned its facts as
    they are (:func:`passprice.stackreach.lock_fit`, slip 40)."""
    if expected is None:
        return None
    from passprice.stackreach import fit_check, lock_fit

    root = _root(ctx)
    checked: Any = fit_check(root, expected.stack.name)
    if lock_ref is not None and checked.findings:
        from passprice.locks import lock_path, read_lock

        the_lock = read_lock(lock_path(root, lock_ref), root.schema)
        if the_lock.stack is not None and the_lock.stack.name == checked.stack:
            checked = lock_fit(root, checked, the_lock)
    warning = checked.warning()
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return checked


def _fit_stale(fitted: Any) -> bool:
    """Whether ``fitted`` (:func:`_fit_check`'s) found the stack's fit no longer following from today's registry."""
    checked = getattr(fitted, "checked", fitted)  # a LockFit (price --lock L) holds today's stack file's check
    return checked is not None and bool(checked.findings)


def _fit_words(fitted: Any) -> str | None:
    """The lock line's words for a stale fit (:meth:`passprice.stackreach.FitCheck.guard_words`, of today's stack
    file, which the price is made under); ``None`` when the fit holds or no stack was priced under. Raises
    nothing."""
    return getattr(fitted, "checked", fitted).guard_words() if _fit_stale(fitted) else None


def _audit_fit(root: Any, subject: Any, stale: Any, rests_on: list[str]) -> Any:
    """``stale`` (an audit's :class:`passprice.stale.Stale`) with the fitted facts of ``subject``'s stack that no
    longer follow from today's registry (:func:`passprice.stackreach.fit_check`; a lock's compared with what it
    pinned, :func:`passprice.stackreach.lock_fit`, its facts pinned otherwise not marked), after one warning line on
    stderr as ``price --stack`` (``--lock L``) says it: ``audit SERVING --stack S`` and ``audit LOCK`` said nothing
    of the fit ``price --stack`` warned of (tests/test_fix179.py)."""
    from passprice.stackreach import fit_check, lock_fit
    from passprice.stale import Stale

    checked: Any = fit_check(root, subject.stack.name)
    if not checked.findings:
        return stale
    apart: tuple[str, ...] = ()
    if subject.lock is not None and subject.lock.stack is not None and subject.lock.stack.name == checked.stack:
        said: Any = lock_fit(root, checked, subject.lock)
        apart = said.apart
    else:
        said = checked
    warning = said.warning(rests_on)  # the fitted facts the price rests on (it named share.float, read by none)
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return Stale(stale.findings + checked.stale(subject.facts, rests_on, apart).findings)


def _serving_span(root: Any, the_stack: Any, resolved: Any) -> Any:
    """The fitted-span reach of ``resolved``'s own expected price under ``the_stack``
    (:func:`passprice.stackreach.serving_reach`), its warning on stderr when it lies outside, as ``price --stack``
    says it (walkthrough 21: ``compare``, ``sweep``, ``roofline``, ``max-batch``, ``speculate``, ``simulate`` and
    ``lock`` under a stack said nothing of a price outside the span); ``None`` without a stack, when the stack
    refuses the price, or when no fitted run prices."""
    if the_stack is None:
        return None
    from passprice.stackreach import serving_reach

    reach = serving_reach(root, the_stack, resolved.header, resolved.card, resolved.serving)
    if reach is not None and not reach.inside:
        click.echo(f"passprice: warning: {reach.warning()}", err=True)
    return reach


def _span_text(reach: Any, batch: int | None = None) -> None:
    """The ``fitted span`` line of a command under a stack (``reach``: :func:`_serving_span`'s; nothing for
    ``None``); ``batch``: the serving's own batch, named when the command's figures are at others."""
    if reach is None:
        return
    at = "" if batch is None else f" (the serving's own price, batch {batch:,})"
    click.echo(f"  fitted span   {reach.line()}{at}")


def _with_span(data: dict[str, Any], reach: Any) -> dict[str, Any]:
    """A price's ``--json`` object with ``stack_span`` (:meth:`passprice.stackreach.RatioReach.to_json`) under a
    stack."""
    return data if reach is None else {**data, "stack_span": reach.to_json()}


def _cap_unused(options: dict[str, Any], why: str) -> None:
    """A warning on stderr when ``--max-tpot`` was given to a command that does not search for the best batch: the
    cap bounds that search only, so the option was accepted and had no effect (``why`` says what the command does
    instead)."""
    if options.get("max_tpot") is not None:
        click.echo(f"passprice: warning: --max-tpot bounds the best batch's search (best, lock --best); it does not "
                   f"change this result: {why}", err=True)
    if options.get("memory_use") is not None:
        click.echo(f"passprice: warning: --memory-use bounds the best and largest batch's searches (best, max-batch, "
                   f"compare, lock --best); it does not change this result: {why}", err=True)


def _stack_warnings(root: Any, the_stack: Any, cards: list[str], header: Any = None) -> None:
    """The warnings on stderr of a price under ``the_stack`` on ``cards`` (of a checkpoint ``header``) that its
    runs never measured (:func:`passprice.stackreach.card_reach`, :func:`~passprice.stackreach.model_reach`): one
    line for the cards, one for the kind of model."""
    from passprice.stackreach import card_reach, model_reach

    reaches = [card_reach(root, the_stack, card) for card in dict.fromkeys(cards)]
    unmeasured = [r for r in reaches if not r.measured]
    vendors = {r.card: r.vendor for r in unmeasured}
    warnings = [unmeasured[0].warning([r.card for r in unmeasured[1:]], vendors)] if unmeasured else []
    if header is not None:
        warnings.append(model_reach(root, the_stack, header).warning())
    for warning in warnings:
        if warning is not None:
            click.echo(f"passprice: warning: {warning}", err=True)


def _lock_options(f: F) -> F:
    """``--lock L`` and ``--no-lock``: every pricing command prices a registered serving under its locks."""
    f = click.option(
        "--no-lock", is_flag=True, help="Do not price under the serving's locks in locks/ (they apply by default)."
    )(f)
    return click.option(
        "--lock", "lock_ref", metavar="L",
        help="Price under lock L (a file, or a name in locks/) alone; it must lock the serving, card and checkpoint "
        "priced.",
    )(f)


def _under_locks(
    root: Any,
    serving: str | None,
    resolved: Any,
    lock_ref: str | None,
    no_lock: bool,
    rests_on: Any = (),
    stack_facts: Any = None,
) -> tuple[Any, Any]:
    """:func:`passprice.enforce.priced_under` (the locks a result is priced under, and their verdicts on today's
    facts); a lock of something else or a floor breached exits 1 (:class:`Refused`)."""
    from passprice.enforce import LockFloor, LockRefusal, priced_under

    if lock_ref is not None and no_lock:
        raise click.UsageError("give --lock L or --no-lock, not both")
    try:
        return priced_under(root, serving, resolved, lock_ref, no_lock, rests_on, stack_facts)
    except (LockRefusal, LockFloor) as e:
        _refuse(e)


def _stale(resolved: Any, data: dict[str, Any], expected: Any = None) -> Any:
    """The derived facts a price (its ``--json`` object ``data``) rests on that do not follow from their inputs
    today (:func:`passprice.stale.stale_rested_on`)."""
    from passprice.stale import stale_rested_on

    facts = resolved.facts()
    facts.update(_stack_facts(expected) or {})
    rests = dict.fromkeys([*data.get("rests_on", {}), *data.get("expected", {}).get("rests_on", {})])
    return stale_rested_on(facts, rests)


def _every_expert_json(resolved: Any) -> dict[str, Any]:
    """``{"every_expert": …}`` (:func:`passprice.report.every_expert`) for a mixture whose every token reads every
    expert, ``{}`` otherwise: a price's and best's ``--json`` key."""
    from passprice.report import every_expert

    found = every_expert(resolved.header, resolved.spec.routing)
    return {} if found is None else {"every_expert": found}


def _routing_note(resolved: Any, cost: Any) -> str | None:
    """The note (caveat) of the routing record a mixture of experts' price ``cost`` rests on, if it has one."""
    routing = resolved.serving.routing
    return routing.note if cost.routed is not None and routing is not None and routing.note else None


def _with_routing_note(data: dict[str, Any], note: str | None, header: Any = None) -> dict[str, Any]:
    """A price's ``--json`` object with ``note`` (the routing record's caveat; left out when it has none) and
    ``experts_held_bytes`` (every routed expert's bytes, :func:`passprice.report.routed_expert_bytes` of ``header``)
    added to its ``routing`` object (and its expected price's, under a stack). Added for output only: a lock records
    the price without them."""
    if "routing" not in data:
        return data
    extra: dict[str, Any] = {} if note is None else {"note": note}
    if header is not None:
        from passprice.report import routed_expert_bytes

        extra["experts_held_bytes"] = routed_expert_bytes(header)
    out = {**data, "routing": {**data["routing"], **extra}}
    if isinstance(out.get("expected"), dict) and "routing" in out["expected"]:
        out["expected"] = {**out["expected"], "routing": {**out["expected"]["routing"], **extra}}
    return out


def _defaulted_json(header: Any) -> dict[str, Any]:
    """``{"defaulted": [{"key", "value", "source"}]}`` when ``header``'s window is priced from llama.cpp's default
    (:func:`passprice.architectures.defaulted_window`: a gemma2 header without its window), else ``{}``. Added for
    output only, as the routing note is. Imports no decode step (a warm price imports none: test_cache)."""
    from passprice.architectures import defaulted_window

    d = defaulted_window(header)
    return {} if d is None else {"defaulted": [d.to_json()]}


def _echo_defaulted(header: Any) -> None:
    """The text line of :func:`_defaulted_json`: ``  defaulted     KEY N positions: …`` (nothing without one)."""
    from passprice.architectures import defaulted_window

    d = defaulted_window(header)
    if d is not None:
        click.echo(f"  defaulted     {escaped(d.line())}")


def _stack_facts(expected: Any) -> dict[str, Any] | None:
    """The facts of the stack an expected price was made under, by lock path (``None`` without one)."""
    return expected.stack.lock_facts() if expected is not None else None


def _lock_stack(root: Any, lock_ref: str | None, the_lock: Any, stack: str | None) -> str | None:
    """The serving stack a command prices under: ``--stack S`` when given, else that of ``--lock L`` when L was
    made under one (``lock SERVING --stack S``), so ``best``/``sweep``/``roofline --lock L`` price L's expected price
    as ``price --lock L`` does (walkthrough 9: they showed the limit alone); else ``None``."""
    if stack is not None or lock_ref is None:
        return stack
    if the_lock is None:
        from passprice.locks import lock_path, read_lock_in

        the_lock = read_lock_in(root, lock_path(root, lock_ref))
    return the_lock.stack.name if the_lock.stack is not None else None


def _own_serving(root: Any, lock_ref: str | None, serving: str | None, o: dict[str, Any]) -> tuple[Any, Any]:
    """With ``--lock L`` and no SERVING (nor ``--checkpoint``/``--card``): L's own serving as it is today (the
    registered serving it locks, else its embedded one) and L; else ``(None, None)``."""
    if lock_ref is None or serving is not None or o.get("checkpoint") or o.get("card"):
        return None, None
    from passprice.locks import lock_path, read_lock_in
    from passprice.reproduce import today_spec

    the_lock = read_lock_in(root, lock_path(root, lock_ref))
    return today_spec(root, the_lock)[0], the_lock


def _draft_lengths(parse: Any, text: str) -> tuple[int, ...]:
    """``speculate --tokens``' draft lengths (``parse``: :func:`passprice.speculate.parse_tokens`), its refusal of a
    part starting at 0 saying that row 0 (no drafting), the yardstick, is every table's first row already: a new
    user's ``--tokens 0..3`` read only "draft lengths run from 1 to 64" (tests/test_fix166.py). Raises what ``parse``
    raises."""
    try:
        return tuple(parse(text))
    except InputError as e:
        zero = next((p for p in text.split(",") if (p.partition("..")[0] if ".." in p else p.partition("-")[0]
                                                    ).strip() == "0"), None)
        if zero is None or f"--tokens: {zero!r}: draft lengths run from 1" not in str(e):
            raise
        last = (zero.partition("..") if ".." in zero else zero.partition("-"))[2].strip()
        fix = f": write 1..{last}" if last.isdigit() and int(last) >= 1 else ""
        raise InputError(f"{e}; row 0 (no drafting) is always shown{fix}") from None


def _sweep_spans(root: Any, the_stack: Any, grid: Any, most: int = 64) -> dict[str, Any]:
    """The fitted-span reach (:func:`passprice.stackreach.serving_reach`) of each serving of ``grid`` on each of its
    cards (its own card without ``--cards``), at the serving's own batch and contexts (those ``--limit`` sets, where
    given: :func:`~passprice.sweep.swept_spec`), by ``SERVING on CARD``; the
    first ``most`` pairs (each one price); a pair that does not load or price is left out (the sweep reports it)."""
    import attrs

    from passprice.errors import InputError
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve
    from passprice.stackreach import serving_reach
    from passprice.sweep import entry_name, swept_spec

    out: dict[str, Any] = {}
    pairs = 0
    for ref in grid.servings:
        try:
            spec = swept_spec(root, grid, ref)
        except InputError:
            continue
        # each card as swept (a path priced as that file, not as the registry's card of its stem: cards.same_card)
        for ref_card in [spec.card] if grid.cards is None else list(grid.cards):
            card = Path(ref_card).name.removesuffix(".toml")
            pairs += 1
            if pairs > most:
                return out
            try:
                resolved = resolve(root, attrs.evolve(spec, card=ref_card))
                reach = serving_reach(root, the_stack, resolved.header, resolved.card, resolved.serving)
            except (InputError, ServingRefusal):
                continue
            if reach is not None:
                shown = entry_name(ref) if not isinstance(ref, str) else Path(ref).name.removesuffix(".toml")
                out[f"{shown} on {card}"] = reach
    return out


def _outside_line(stack: str, reaches: dict[str, Any]) -> str:
    """One line naming the cards (of ``reaches``, by card) whose expected price lies outside stack ``stack``'s
    fitted span, with each one's ratio; empty when none does."""
    out = [(card, r) for card, r in reaches.items() if not r.inside]
    if not out:
        return ""
    some = out[0][1]
    named = ", ".join(f"{card} ({r.ratio:.4g}{'' if r.at_batch is None else f' at batch {r.at_batch:,}'})"
                      for card, r in out[:8]) + (f" and {len(out) - 8} more" if len(out) > 8 else "")
    return (f"stack {stack}'s expected price lies outside the {some.low:.4g} … {some.high:.4g} × the limit its "
            f"{some.runs} fitted runs measured, for {named}: the fit is extrapolated there")


def _terminal() -> bool:
    """Whether standard error is a terminal: a progress bar is drawn there only (in a log or a pipe, click's bar
    printed a bare ``pricing`` line and nothing else)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False
