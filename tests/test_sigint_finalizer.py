"""A Ctrl-C whose handler raised inside a finalizer (an object's ``__del__`` run by the collector) is not lost: the
command ends with ``passprice: interrupted`` and 130, never Python's "Exception ignored in: …" traceback and exit 0
(flaky41: one Ctrl-C in 35 during ``--no-cache check`` printed a traceback;
:func:`passprice.cli.signals._stopped_again`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: ``passprice cards`` run by :func:`passprice.cli.main`, the first line it prints preceded by an object whose
#: ``__del__`` sends the process SIGINT and runs on, so that Python's handler raises ``KeyboardInterrupt`` inside
#: it; ``{after}`` runs after it (a minute's sleep: the Ctrl-C must interrupt it).
_SCRIPT = """
import os, signal, sys, time
import click
from passprice import cli

class Bomb:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10000):
            pass

_echo = click.echo
fired = []

def echo(*args, **kwargs):
    if not fired:
        fired.append(1)
        Bomb()
        {after}
    return _echo(*args, **kwargs)

click.echo = echo
sys.argv = ["passprice", "cards"]
cli.main()
"""


@pytest.mark.parametrize("after", ["pass", "time.sleep(60)"])
def test_a_ctrl_c_raised_in_a_finalizer_stops_the_command(after: str) -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(after=after)], capture_output=True, text=True,
                          timeout=50)
    # before: 'Exception ignored in: <function Bomb.__del__ …>' and Python's KeyboardInterrupt traceback on stderr,
    # the cards listed and exit 0 (or, after the sleep, the minute waited out)
    assert (done.returncode, done.stderr) == (130, "passprice: interrupted\n"), (done.returncode, done.stderr[-3000:])
    if after != "pass":
        assert done.stdout == ""  # stopped in its sleep, before the line was printed


def test_another_unraisable_exception_is_python_s_to_say() -> None:
    script = _SCRIPT.replace("os.kill(os.getpid(), signal.SIGINT)", "raise ValueError('in a finalizer')")
    done = subprocess.run([sys.executable, "-c", script.format(after="pass")], capture_output=True, text=True,
                          timeout=50)
    assert done.returncode == 0 and "ValueError: in a finalizer" in done.stderr
    assert done.stderr.startswith("Exception ignored in: <function Bomb.__del__")
