"""The console script's first code: a Ctrl-C that comes while the command line is still being imported exits 130 with
one line, as a Ctrl-C during a command does, never with the interpreter's ``KeyboardInterrupt`` traceback.

Importing :mod:`passprice.cli` (click and the command definitions) takes 0.1 to 0.9 s, depending on the machine's
load and whether bytecode is cached; the ``passprice`` script used to import it before any of passprice's code ran,
so a Ctrl-C in that time printed a traceback of whatever module was being imported. Nothing is read or written
before :func:`passprice.cli.main` starts, so that Ctrl-C ends the process at once (``os._exit``); once the command
line runs, Python's own handler is back and the command's handler (``passprice: interrupted``, exit 130) reports it.
"""

from __future__ import annotations

import os
import signal
from types import FrameType


def _interrupted(number: int, frame: FrameType | None) -> None:
    """Ctrl-C before the command line runs: one line on stderr, exit 130 (128 + SIGINT), nothing to clean up."""
    os.write(2, b"passprice: interrupted\n")
    os._exit(128 + number)


def main() -> None:
    """The ``passprice`` console script: :func:`passprice.cli.main`, imported under :func:`_interrupted` (left as it
    is when SIGINT is ignored, as a shell's background job has it). :func:`passprice.cli.main` restores Python's
    handler where its own reporting of a Ctrl-C begins."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)
    from passprice.cli import main as command_line

    command_line()
