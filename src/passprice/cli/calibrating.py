"""A serving stack against its measured runs: ``calibrate`` fits the stack's facts to them, ``validate`` says how
far each run's price is from what was measured."""

from __future__ import annotations

from pathlib import Path

import click

from passprice.cli.app import _echo_json, _finite, _json_option, _root, cli
from passprice.cli.options import _check_output, _kept_problems, _problems
from passprice.cli.params import _OutputPath
from passprice.files import shown as shown_path

# --- stacks and measured runs (issue 14) ----------------------------------------------------------------------------


@cli.command("calibrate")
@click.option("--stack", "stack", required=True, metavar="S", help="The stack to fit (facts/stacks/S.toml).")
@click.option("--dry-run", is_flag=True, help="Print the fit and its hold-out errors; write nothing.")
@_json_option
@click.pass_context
def calibrate_command(ctx: click.Context, stack: str, dry_run: bool, as_json: bool) -> None:
    """Fit stack S's facts to its measured runs (registry/measurements) and write them as derived facts, with the
    fit's error in sample, leaving one card out and leaving one checkpoint out."""
    from passprice.calibrate import (
        calibrate,
        calibration_cautions,
        calibration_json,
        calibration_text,
        stack_to_fit,
        write_calibration,
    )

    root = _root(ctx)
    if not dry_run:  # round 18: a read-only stack file was refused after the fit's seconds of work
        from passprice.files import check_writable

        check_writable(stack_to_fit(root, stack), force=True)
    cal = calibrate(root, stack)
    written = None if dry_run else write_calibration(root, cal)
    if as_json:
        data = calibration_json(cal)
        data["written"] = str(written) if written is not None else None
        _finite(data)
        _echo_json(data)
    else:
        shown = written.relative_to(root.path) if written is not None and written.is_relative_to(root.path) else written
        click.echo(calibration_text(cal, shown))
    for line in calibration_cautions(cal):
        click.echo(f"passprice: warning: calibrate {stack}: {line}", err=True)
    from passprice.stackreach import run_ratios, runs_apart

    # a run far from the others' measured / limit span, which the fit rests on: said here, not only by the review of
    # the change later ("outside BASE's span"; tests/test_fix188.py)
    for line in runs_apart(run_ratios(root, list(cal.fit.runs))):
        click.echo(f"passprice: warning: calibrate {stack}: {line}", err=True)


@cli.command("validate")
@click.option("--stack", "stack", metavar="S", help="Only stack S's runs (default: every measured run).")
@click.option("--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE",
              help="Draw measured vs priced tokens/s, log-log, one colour per card (.png or .svg; needs matplotlib).")
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@_json_option
@click.pass_context
def validate_command(
    ctx: click.Context, stack: str | None, plot_path: Path | None, force: bool, as_json: bool
) -> None:
    """Price every measured run as the card's limit and as its stack's expected price, beside what was measured."""
    from passprice.validate import plot, to_json, validate, validation_text

    root = _root(ctx)
    if plot_path is not None:
        from passprice.plots import picture_format
        from passprice.registry import require_not_record

        _check_output(plot_path, force)
        require_not_record(root, plot_path, "--plot")
        picture_format(plot_path)  # its suffix (a link's: its target's), before the runs are priced
    v = validate(root, stack)
    _problems(v.problems)  # runs left out as bad input: reported after the good ones, exit 2
    data = to_json(v)
    _finite(data)
    if plot_path is not None:
        plot(v, plot_path, force=force)
    if as_json:
        # the runs left out, as the listings' "problems" (stderr alone named them, session 29)
        _echo_json({**data, "problems": _kept_problems()})
    else:
        click.echo(validation_text(v, stack))
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)
