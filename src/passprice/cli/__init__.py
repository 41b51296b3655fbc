"""The command line, ``passprice``: a package, one concern a module. :mod:`~passprice.cli.app` is the frame (the
group, how a failure is said, the console script's :func:`main`) over :mod:`~passprice.cli.signals` (a command stopped
by a signal) and :mod:`~passprice.cli.params` (click's parameters, built on first use); :mod:`~passprice.cli.options`
is what several commands share; each other module defines the commands of one concern, registered on the group as it
is imported. Nothing in the library imports the command line; the console script (:mod:`passprice.entry`) calls
:func:`main`."""

from __future__ import annotations

# isort: off
from passprice.cli import params
from passprice.cli.app import cli, main
from passprice.cli.signals import Terminated

# The commands, registered on the group as each module is imported, in this order: the group's own, which an error
# naming the commands that take an option follows (`cards --stack`: "an option of price, best, compare, …").
from passprice.cli import registering  # noqa: F401
from passprice.cli import pricing  # noqa: F401
from passprice.cli import checking  # noqa: F401
from passprice.cli import editing  # noqa: F401
from passprice.cli import sweeping  # noqa: F401
from passprice.cli import exploring  # noqa: F401
from passprice.cli import calibrating  # noqa: F401

# isort: on

params.click_as_it_was()  # every command is defined: click's own parameters from here on

__all__ = ["Terminated", "cli", "main"]
