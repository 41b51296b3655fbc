"""The environment variables that set a bound passprice keeps (issue 13), checked once before any command runs.

A bad value of one (``PASSPRICE_MAX_FILE_BYTES=abc``) is no file's problem: a listing that kept each file's
problems for the end still printed what read (``cards --json`` printed ``{"cards": []}`` and exited 2, so a program
reading standard output saw "no cards"; left26b). :func:`require_settings` reads each variable that is set, before
the command starts, so such a command prints nothing on standard output and one line on standard error (exit 2).
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: Each variable that sets a bound, and the check of its value (a function of no argument raising
#: :class:`~passprice.errors.InputError` with the one line of a bad value; imported only when the variable is set,
#: so the numpy behind ``calibrate`` costs nothing to a run that sets none).
VARIABLES: tuple[tuple[str, str], ...] = (
    ("PASSPRICE_MAX_FILE_BYTES", "file_bytes"),
    ("PASSPRICE_MAX_HEADER_BYTES", "header_bytes"),
    ("PASSPRICE_MAX_FIT_RUNS", "fit_runs"),
    ("PASSPRICE_MAX_VALIDATE_RUNS", "validate_runs"),
    ("PASSPRICE_MAX_SIDE_FILES", "side_files"),
    ("PASSPRICE_MAX_SIDE_FACT_FILES", "side_fact_files"),
)


def file_bytes() -> None:
    """Check ``PASSPRICE_MAX_FILE_BYTES`` (:func:`passprice.schema.kind_cap`, of a kind it covers)."""
    from passprice.schema import kind_cap

    kind_cap("card")


def header_bytes() -> None:
    """Check ``PASSPRICE_MAX_HEADER_BYTES`` (:func:`passprice.gguf_header.header_cap`)."""
    from passprice.gguf_header import header_cap

    header_cap()


def fit_runs() -> None:
    """Check ``PASSPRICE_MAX_FIT_RUNS`` (:func:`passprice.calibrate.runs_cap`)."""
    from passprice.calibrate import runs_cap

    runs_cap()


def validate_runs() -> None:
    """Check ``PASSPRICE_MAX_VALIDATE_RUNS`` (:func:`passprice.calibrate.runs_cap` of validate's variable)."""
    from passprice.calibrate import runs_cap
    from passprice.validate import MAX_RUNS, RUNS_VARIABLE

    runs_cap(RUNS_VARIABLE, MAX_RUNS)


def side_files() -> None:
    """Check ``PASSPRICE_MAX_SIDE_FILES`` (:func:`passprice.gitread.side_files_cap`)."""
    from passprice.gitread import side_files_cap

    side_files_cap()


def side_fact_files() -> None:
    """Check ``PASSPRICE_MAX_SIDE_FACT_FILES`` (:func:`passprice.gitread.side_fact_files_cap`)."""
    from passprice.gitread import side_fact_files_cap

    side_fact_files_cap()


def require_settings() -> None:
    """Raise :class:`~passprice.errors.InputError` (one line a bad variable, in :data:`VARIABLES`' order) when a
    variable of :data:`VARIABLES` that is set and not empty does not hold a value its check accepts. A variable unset
    or empty is its default, as each reader takes it; nothing is read, written or imported for an unset one."""
    from passprice.errors import InputError

    problems: list[str] = []
    for variable, check in VARIABLES:
        if os.environ.get(variable):
            run: Callable[[], None] = globals()[check]
            try:
                run()
            except InputError as e:
                problems.extend(e.lines)
    if problems:
        raise InputError.of(problems)
