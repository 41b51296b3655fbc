"""Session 41's merges attacked (attack72, issue 13): attack71's guard of the files git reads as it finds a revision
looked at the refs, the index and the alternates but not at the object store's commit-graph or its packs' files, so a
FIFO as ``objects/info/commit-graph`` or as a pack's ``.idx`` held ``diff`` in git until git's time limit (past 20 s,
killed there); both are now refused by name before git runs (exit 2)."""

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
