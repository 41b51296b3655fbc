"""Session 41's merges attacked (attack72, issue 13): attack71's guard of the files git reads as it finds a revision
looked at the refs, the index and the alternates but not at the object store's commit-graph or its packs' files, so a
FIFO as ``objects/info/commit-graph`` or as a pack's ``.idx`` held ``diff`` in git until git's time limit (past 20 s,
killed there); both are now refused by name before git runs (exit 2). A SIGTERM that came while a Ctrl-C's own
handler said "passprice: interrupted" raised there, and click said "Aborted!" and exited 1 (4 of 32 Ctrl-Cs of
``--no-cache check`` followed 4 ms later by a SIGTERM); past the command's body it ends the process at once, 143."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import REPO
from tests.test_attack_71 import _git


@pytest.mark.parametrize("name", ["objects/info/commit-graph", "a pack's .idx"])
def test_a_fifo_in_the_object_store_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # main: `diff` blocked in git opening the FIFO (killed at 20 s; git's own limit is 60 s).
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for variable in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(variable, raising=False)
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "a registry")
    _git(path, "repack", "-a", "-d", "-q")
    _git(path, "commit-graph", "write", "--reachable")
    if name.startswith("a pack"):
        (fifo,) = (path / ".git" / "objects" / "pack").glob("*.idx")
    else:
        fifo = path / ".git" / name
    assert fifo.is_file()
    fifo.unlink()
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(path), "diff"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"passprice: error: {fifo}: a FIFO (named pipe), where git reads its repository's own files: git would "
        "block reading it (or read without end), so passprice runs no git here; make it a regular file or remove it"]


#: ``passprice cards`` as the console script runs it (:func:`passprice.entry._interrupted` SIGINT's handler when
#: :func:`passprice.cli.main` starts): a Ctrl-C as it prints its first line, and a SIGTERM as the Ctrl-C's own handler
#: is about to say "passprice: interrupted" (one sent 4 ms after a Ctrl-C, as ``timeout`` or a CI job's cancel can).
_TWICE = """
import os, signal, sys
import click
from passprice import cli, entry

_echo = click.echo

def echo(message=None, *args, **kwargs):
    if message == "passprice: interrupted":
        os.kill(os.getpid(), signal.SIGTERM)
    elif message is not None and not echo.fired:
        echo.fired = True
        os.kill(os.getpid(), signal.SIGINT)
    return _echo(message, *args, **kwargs)

echo.fired = False
click.echo = echo
signal.signal(signal.SIGINT, entry._interrupted)
sys.argv = ["passprice", "cards"]
cli.main()
"""


def test_a_sigterm_during_a_ctrl_cs_handling_ends_the_command_with_its_status() -> None:
    done = subprocess.run([sys.executable, "-c", _TWICE], capture_output=True, text=True, timeout=50)
    # main: the SIGTERM raised Terminated in the Ctrl-C's handler; click said '\nAborted!' and exited 1
    assert (done.returncode, done.stderr) == (143, "passprice: terminated\n")
