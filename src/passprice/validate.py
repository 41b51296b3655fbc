"""A price is checked against what was measured: every registered run priced as the card's limit and as its stack's
expected price, side by side with the tokens/s the run published.

The limit (the seed's price) must stay an upper bound on every run of a registered stack: a run faster than its
limit means a card fact, a checkpoint or the run's record is wrong, and :attr:`Row.above_limit` flags it. The
expected price's error, |expected / measured − 1|, is what a stack's calibration is judged by.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from passprice.cards import Card
from passprice.errors import InputError
from passprice.files import check_writable, is_there, written_suffix
from passprice.gguf_header import GGUFHeader
from passprice.measurements import (
    Run,
    first_run_problems,
    load_runs,
    past_context,
    ratio_too_large,
    run_inputs,
    run_refusal,
    run_serving,
)
from passprice.registry import Root, name_problem
from passprice.serving import ServingRefusal
from passprice.stacks import Stack, load_stack, price_expected


@attrs.frozen
class Row:
    """One run priced: the ``run``; the ``limit`` tokens/s and the term it ``binds`` on; the ``expected`` tokens/s
    under the run's stack and its binding term (``None`` when the stack is not registered or refuses the serving,
    ``why`` says which); the expected price's ``provenance``."""

    run: Run
    limit: float | None
    binds: str | None
    expected: float | None = None
    expected_binds: str | None = None
    provenance: str | None = None
    why: str | None = None

    @property
    def limit_ratio(self) -> float | None:
        """Limit over measured (≥ 1 when the limit bounds the run)."""
        return self.limit / self.run.tokens_per_s if self.limit is not None else None

    @property
    def error(self) -> float | None:
        """Expected over measured − 1 (the signed relative error of the expected price)."""
        return self.expected / self.run.tokens_per_s - 1.0 if self.expected is not None else None

    @property
    def above_limit(self) -> bool:
        """Whether the run measured more tokens/s than its card's limit allows."""
        return self.limit is not None and self.run.tokens_per_s > self.limit


@attrs.frozen
class Validation:
    """Every run priced (``rows``), with the stacks named (``stacks``: name → registered stack or ``None``), and
    ``problems``: one line a run left out as bad input (its file and key: a tokens/s too small to divide by, a
    limit or expected price over it that overflows), for the command to report after showing the good runs."""

    rows: tuple[Row, ...]
    stacks: dict[str, Stack | None]
    problems: tuple[str, ...] = ()
    #: The stacks ``facts/stacks/`` registers, by name (any a run of an unregistered stack may be priced under).
    registered: tuple[str, ...] = ()

    def unregistered(self) -> list[Row]:
        """The rows of runs whose stack no ``facts/stacks/`` file describes: priced as the card's limit only."""
        return [r for r in self.rows if r.run.stack in self.stacks and self.stacks[r.run.stack] is None]

    def errors(self) -> list[float]:
        """The absolute relative errors of every expected price."""
        return [abs(r.error) for r in self.rows if r.error is not None]

    def in_fit(self, row: Row) -> bool | None:
        """Whether ``row``'s run is one its stack was fitted on (:func:`passprice.stackfits.fit_ids`): its expected
        error is then in-sample; ``False`` for a run the fit never saw (out-of-sample: added since, or of a stack
        with no fitted fact), ``None`` for a run of a stack not registered. Raises nothing."""
        from passprice.stackfits import fit_ids

        stack = self.stacks.get(row.run.stack)
        return None if stack is None else row.run.id in fit_ids(stack)

    def split_errors(self) -> tuple[list[float], list[float]]:
        """The absolute relative errors of the expected prices of the runs their stacks were fitted on (in-sample),
        then of the others (out-of-sample: :meth:`in_fit`). ``validate --stack S`` pooled the two into one mean over
        112 runs, one of them never fitted (tests/test_fix54w.py). Raises nothing."""
        fitted: list[float] = []
        unseen: list[float] = []
        for r in self.rows:
            if r.error is not None:
                (fitted if self.in_fit(r) else unseen).append(abs(r.error))
        return fitted, unseen

    def mean_error(self) -> float | None:
        """Mean |expected / measured − 1| over the rows with an expected price."""
        e = self.errors()
        return sum(e) / len(e) if e else None

    def max_error(self) -> float | None:
        """Largest |expected / measured − 1|."""
        e = self.errors()
        return max(e) if e else None

    def above_limit(self) -> list[Row]:
        """The rows of registered stacks that beat their limit."""
        return [r for r in self.rows if r.above_limit and self.stacks.get(r.run.stack) is not None]


#: The most runs a validate prices unless :data:`RUNS_VARIABLE` says otherwise (issue 13: no input under 1 MB may
#: run a command past 2 s). Each run is priced as limit and as expected, about 2 ms of CPU a run when the runs'
#: positions differ (a pass shape each, :func:`passprice.serving.pass_shape`): 1,111 runs (a 469 KB measurement
#: file beside the registered 127) took 2.4 to 2.9 s; 600 runs about 1.5 s. The registry holds 127.
MAX_RUNS = 600
#: The environment variable that raises (or lowers) :data:`MAX_RUNS`.
RUNS_VARIABLE = "PASSPRICE_MAX_VALIDATE_RUNS"


def registry_relative(root: Root, lines: Sequence[str]) -> list[str]:
    """``lines`` with every path below ``root`` named relative to it (``registry/measurements/x.toml``), wherever in a
    line it starts (after the line's start, a blank, a parenthesis, a quote, ``=``, ``,``, ``:`` or ``[``): the rule
    :func:`passprice.check.relative_lines` holds ``check`` and the listings to, for lines that name a file after a
    run's id too (``run ID (SOURCE): FILE: …``); the one rule, :func:`passprice.check.relative_lines`. Raises
    nothing."""
    from passprice.check import relative_lines

    return relative_lines(root, lines)


def validate(root: Root, stack: str | None = None, runs: Sequence[Run] | None = None) -> Validation:
    """Price every measured run (or ``stack``'s, or ``runs``) as limit and as expected. A run whose stack is not
    registered gets its limit only; a run whose figures do not divide (:func:`passprice.measurements.too_small`, or
    a limit or expected tokens/s over measured that overflows) is left out, its line in
    :attr:`Validation.problems`, as is a measurement file that does not read (every run of it) and a run whose card
    or checkpoint does not load. Raises :class:`InputError` for a ``stack`` that is not registered, and for more runs
    than :data:`MAX_RUNS` (or :data:`RUNS_VARIABLE`'s bound), before any is priced."""
    if stack is not None:
        load_stack(root, stack)  # an unknown stack is bad input, named with the registered ones
    problems: list[str] = []
    runs = list(runs) if runs is not None else load_runs(root, stack, problems)
    from passprice.calibrate import runs_cap

    cap = runs_cap(RUNS_VARIABLE, MAX_RUNS)
    if len(runs) > cap:  # refused before any is priced
        files = ", ".join(f"registry/measurements/{s}.toml" for s in sorted({r.source for r in runs}))
        which = f"of stack {stack}" if stack else "(every stack)"
        raise InputError(
            f"{files}: {len(runs):,} measured runs {which}, past the {cap:,} a validate prices (about 2 ms of CPU "
            f"each); validate one stack (--stack S), or set {RUNS_VARIABLE} to allow more"
        )
    cards: dict[str, Card] = {}
    headers: dict[str, GGUFHeader] = {}  # one header object a checkpoint, so runs of one model share its pass
    stacks: dict[str, Stack | None] = {}
    unread: set[str] = set()  # stacks whose file does not read: their runs are left out, the file named once
    rows = []
    of_runs: dict[str, list[str]] = {}  # each measurement file's runs' problem lines (first_run_problems)
    for run in runs:
        if run.stack not in stacks and run.stack not in unread:
            try:
                there = is_there(root.stacks / f"{run.stack}.toml")
                stacks[run.stack] = load_stack(root, run.stack) if there else None
            except InputError as e:
                unread.add(run.stack)
                problems.extend(e.lines)
        if run.stack in unread:
            continue
        said = of_runs.setdefault(run.source, [])  # a file's first lines listed, the rest counted
        try:
            card, header = run_inputs(root, run, cards, headers)
        except InputError as e:  # left out, its lines kept (each names its file and key), the rest shown
            said.extend(e.lines)
            continue
        try:
            serving = run_serving(root, run, header)
        except InputError as e:  # its file names what does not load: left out, its lines kept, the rest shown
            said.extend(f"run {run.id} ({run.source}): {line}" for line in e.lines)
            continue
        beyond = past_context(root.measurements, run, header.meta_int("context_length"))
        if beyond is not None:  # bad input, not a serving the model refuses: left out and named
            said.append(beyond)
            continue
        st = stacks[run.stack]
        try:
            if st is None:
                from passprice.serving import price_serving

                limit = price_serving(header, card, serving)
                rows.append(Row(run, limit.tokens_per_s, limit.binds.value, why="stack not registered"))
                continue
            priced = price_expected(header, card, serving, st)
        except ServingRefusal as e:
            # The stack refuses the run (outside where its facts hold, a fact it lacks): the limit still bounds it.
            from passprice.serving import price_serving

            # Each refusal's advice said as what to correct in the run, never an option of price (a batch the card
            # cannot hold said "page the KV cache (--kv-page)": tests/test_fix168.py); a run of a mixture of experts
            # naming no routing record is told to add one to the run (walkthrough 22). No run's key on the row: runs
            # refused alike keep one reason, which review groups (tests/test_slip_32.py).
            why = f"refused ({e.name}): {run_refusal(run, e)[1]}"
            try:
                alone = price_serving(header, card, serving)
            except ServingRefusal:
                rows.append(Row(run, None, None, why=why))
                continue
            rows.append(Row(run, alone.tokens_per_s, alone.binds.value, why=why))
            continue
        rows.append(
            Row(
                run,
                priced.limit.tokens_per_s,
                priced.limit.binds.value,
                priced.expected.tokens_per_s,
                priced.expected.binds.value,
                priced.provenance.value,
            )
        )
    problems += first_run_problems(of_runs, root.measurements)
    kept = []
    for row in rows:
        small = ratio_too_large(root.measurements, row.run, row.limit) or ratio_too_large(
            root.measurements, row.run, row.expected
        )
        if small is None:
            kept.append(row)
        else:
            problems.append(small)
    try:
        # a stack file check refuses by its name (facts/stacks/a\u202eb.toml) is no stack: it was listed raw in
        # validate --json's "registered" (attack round 63)
        registered = tuple(name for name in root.names(root.stacks) if name_problem(name) is None)
    except InputError:  # a facts/stacks/ that does not read names nothing here; check says what is wrong with it
        registered = ()
    # each file named relative to the registry, as check and the listings name it (leftovers 28c: under --root DIR
    # a measurement file that did not read was DIR/registry/measurements/…, absolute)
    return Validation(tuple(kept), stacks, tuple(registry_relative(root, problems)), registered)


def under_stack_line(v: Validation) -> str | None:
    """For a validation holding runs of stacks no ``facts/stacks/`` file describes (priced as the card's limit only,
    ``stack not registered``), the line saying how to see what a registered stack expects of one: the ``price``
    command of its serving (:meth:`passprice.measurements.Run.price_command`) for the first such run, and the
    registered stacks. Walkthrough 29: a blog's gpt-oss run on an H100 read "limit 1,233.5, 4.93 × measured, stack
    not registered", and nothing said the llama.cpp stack's expected price of it (223.1 tokens/s) was one command
    away, nor which positions the run was priced at. ``None`` when every run's stack is registered."""
    rows = v.unregistered()
    if not rows:
        return None
    stacks = sorted({r.run.stack for r in rows})
    shown = ", ".join(stacks[:8]) + (f" and {len(stacks) - 8} more" if len(stacks) > 8 else "")
    first = rows[0].run
    registered = ", ".join(v.registered) if v.registered else "none: write facts/stacks/NAME.toml"
    return (
        f"  stack not registered: {len(rows)} run{'s' if len(rows) != 1 else ''} of {shown} priced as the card's "
        f"limit only; what a registered stack expects of one is its serving priced under it, e.g. "
        f"{first.id}: `{first.price_command('S')}` (--limit its last position, --position the mean of its "
        f"positions; stacks registered: {registered})"
    )


def unregistered_json(v: Validation) -> dict[str, Any] | None:
    """What :func:`under_stack_line` says, for ``--json``: ``stacks`` (the unregistered stacks the runs name,
    sorted), ``registered`` (the stacks ``facts/stacks/`` registers, any of which may stand for ``S``) and ``runs``:
    one ``{id, stack, price_command}`` a run of an unregistered stack, in the rows' order, ``price_command`` its
    serving's ``passprice price … --stack S`` (:meth:`passprice.measurements.Run.price_command`, ``S`` written as
    is, for the stack to price it under). ``None`` when every run's stack is registered. Raises nothing."""
    rows = v.unregistered()
    if not rows:
        return None
    return {
        "stacks": sorted({r.run.stack for r in rows}),
        "registered": list(v.registered),
        "runs": [{"id": r.run.id, "stack": r.run.stack, "price_command": r.run.price_command("S")} for r in rows],
    }


def to_json(v: Validation) -> dict[str, Any]:
    """The validation for ``--json``: every row (run id, its ``file``, ``source`` and ``locator``: where it is cited;
    stack, card, checkpoint, batch, positions, measured,
    limit, limit_ratio, binds, expected, error, expected_binds, provenance, why), the summary, and
    ``unregistered`` (:func:`unregistered_json`: the runs of unregistered stacks and each one's ``price`` command
    under a registered stack ``S``; ``None`` when there are none)."""
    rows = []
    for r in v.rows:
        rows.append(
            {
                "id": r.run.id,
                # where the run is cited (walkthrough 38: an auditor of a stack price found no command naming a
                # fitted run's source and locator): its measurement file, source record and locator in it
                "file": f"registry/measurements/{r.run.source}.toml",
                "source": r.run.source_id,
                "locator": r.run.locator,
                "stack": r.run.stack,
                "card": r.run.card,
                "checkpoint": r.run.checkpoint,
                "batch": r.run.batch,
                "positions": [r.run.first, r.run.last],
                "measured": r.run.tokens_per_s,
                "limit": r.limit,
                "limit_ratio": r.limit_ratio,
                "binds": r.binds,
                "expected": r.expected,
                "error": r.error,
                "expected_binds": r.expected_binds,
                "provenance": r.provenance,
                "why": r.why,
                "in_fit": v.in_fit(r),
            }
        )
    fitted, unseen = v.split_errors()
    return {
        "runs": rows,
        "mean_error": v.mean_error(),
        "max_error": v.max_error(),
        # the two apart (tests/test_fix54w.py): the runs the stacks were fitted on, and those their fits never saw
        "in_fit": {"runs": len(fitted), "mean_error": sum(fitted) / len(fitted) if fitted else None,
                   "max_error": max(fitted) if fitted else None},
        "not_in_fit": {"runs": len(unseen), "mean_error": sum(unseen) / len(unseen) if unseen else None,
                       "max_error": max(unseen) if unseen else None},
        "above_limit": [r.run.id for r in v.above_limit()],
        "unregistered": unregistered_json(v),
    }


def plot(v: Validation, path: Path, force: bool = False) -> None:
    """Draw measured against priced tokens/s, log-log, one colour per card (limits hollow, expected filled, the
    diagonal dashed), as PNG or SVG by ``path``'s suffix, written atomically. Raises :class:`InputError` when
    matplotlib is missing, the suffix is neither, or nothing was priced."""
    from passprice.roofline import _metadata

    fmt = written_suffix(path, "--plot").lstrip(".")  # a link's target's suffix
    if fmt not in ("png", "svg"):
        raise InputError(f"--plot {path}: the file must end in .png or .svg")
    check_writable(path, force)  # the one writer's checks, before anything is priced or drawn
    from passprice.roofline import literal_texts, require_matplotlib

    plt = require_matplotlib()
    import io

    from passprice.files import write_atomically

    priced = [r for r in v.rows if r.limit is not None]
    if not priced:
        raise InputError("validate --plot: no run was priced")
    cards = sorted({r.run.card for r in priced})
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    for i, card in enumerate(cards):
        rows = [r for r in priced if r.run.card == card]
        c = colours(i % 20)
        measured = [r.run.tokens_per_s for r in rows]
        limits = [r.limit or 0.0 for r in rows]
        ax.scatter(measured, limits, facecolors="none", edgecolors=[c], s=28, label=f"{card} limit")
        exp = [r for r in rows if r.expected is not None]
        if exp:
            ax.scatter([r.run.tokens_per_s for r in exp], [r.expected or 0.0 for r in exp], color=c, s=16,
                       label=f"{card} expected")
    values = [r.run.tokens_per_s for r in priced] + [r.limit for r in priced if r.limit is not None]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    ax.plot([lo, hi], [lo, hi], "k--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured tokens/s")
    ax.set_ylabel("priced tokens/s (hollow: the card's limit; filled: the stack's expected price)")
    mean = v.mean_error()
    title = "measured vs priced"
    if mean is not None:
        title += f" — expected: mean |error| {100 * mean:.1f} %, max {100 * (v.max_error() or 0):.1f} %"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    literal_texts(fig)  # a card name holding "$" is drawn as written, not parsed as mathtext
    fig.tight_layout()
    buffer = io.BytesIO()
    try:
        # Fixed SVG ids and no date, so the same validation writes the same bytes (as roofline's pictures).
        with plt.rc_context({"svg.hashsalt": "passprice"}):
            fig.savefig(buffer, format=fmt, metadata=_metadata(fmt))
    finally:
        plt.close(fig)
    write_atomically(path, buffer.getvalue(), force)


def short_why(why: str | None) -> str:
    """The error cell of a run with no expected price: a refusal's name alone (``refused (NotResident)``), its
    whole message said once below :func:`validation_text`'s table; ``stack not registered`` as it is. One refused
    run's message of 200 characters padded every row of the table to its width (tests/test_fix56.py). Raises
    nothing."""
    if not why:
        return ""
    head = re.match(r"refused \(\w+\)", why)
    return head.group(0) if head is not None else why


def validation_text(v: Validation, stack: str | None = None) -> str:
    """Every run priced, for people: measured, limit (its ratio to measured and the term it binds on, ``limit
    binds``), expected (its error and the term it binds on, ``expected binds``: walkthrough 19, both columns were
    headed ``binds``), then the expected price's mean and max error and whether the limit bounds every run of a
    registered stack."""
    from passprice.tables import count, text_table

    which = f"stack {stack}" if stack else "every stack"
    lines = [f"validate: {len(v.rows)} measured runs ({which})", ""]
    rows = []
    for r in v.rows:
        rows.append(
            [
                r.run.id,
                f"{r.run.batch:,}",
                f"{r.run.first}-{r.run.last}",
                count(round(r.run.tokens_per_s, 2)),
                count(round(r.limit, 1)) if r.limit is not None else "–",
                f"{r.limit_ratio:.3g}" if r.limit_ratio is not None else "",
                r.binds or "",
                count(round(r.expected, 1)) if r.expected is not None else "–",
                f"{100 * r.error:+.1f} %" if r.error is not None else short_why(r.why),
                r.expected_binds or "",
            ]
        )
    lines.append(
        text_table(
            ["run", "batch", "positions", "measured", "limit", "limit/meas", "limit binds", "expected", "error",
             "expected binds"],
            rows,
            right=(1, 3, 4, 5, 7),
        )
    )
    refused = [f"  {r.run.id}: {r.why}" for r in v.rows if r.error is None and r.why and short_why(r.why) != r.why]
    if refused:  # each refused run's whole message once, below the table (it padded every row to its width)
        lines += ["", "refused runs, each with the model's reason:", *refused]
    lines.append("")
    fitted, unseen = v.split_errors()
    said = [f"mean |error| {100 * sum(e) / len(e):.1f} %, max {100 * max(e):.1f} % over {count(len(e))} "
            f"run{'s' if len(e) != 1 else ''} {what} its stack's fit ({sample})"
            for e, what, sample in ((fitted, "in", "in-sample"), (unseen, "not in", "out-of-sample")) if e]
    if said:
        lines.append(f"  expected price: {'; '.join(said)}")
    registered = [r for r in v.rows if v.stacks.get(r.run.stack) is not None and r.limit_ratio is not None]
    if registered:
        ratios = [r.limit_ratio for r in registered if r.limit_ratio is not None]
        above = v.above_limit()
        lines.append(
            f"  limit: an upper bound on {len(registered) - len(above)} of {len(registered)} runs of registered stacks "
            f"(limit / measured {min(ratios):.3g} to {max(ratios):.3g})"
        )
        for r in above:
            lines.append(f"    above its limit: {r.run.id} ({r.run.tokens_per_s:g} > {r.limit:.6g} tokens/s)")
    under = under_stack_line(v)
    if under is not None:
        lines.append(under)
    return "\n".join(lines)
