"""What a second new user found on main (issue 13), each reproduced in a registry ``passprice init --examples``
made, as the README starts one (a temporary, git-initialised folder).

1. A FIFO or a folder in place of a lock file: the review said ``1 lock affected, 1 removed`` and exited 0 while
   ``check`` on the same tree exited 2 (``1 lock file does not read``). Now the review refuses it, named, in
   ``check``'s words (a symbolic link there was already refused).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import bad, invoke
from test_left52 import _git

LOCK = "locks/r1-qwen7b-h200.lock.toml"  # every floor it sets is kept by another lock: removing it fails nothing


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry as the README starts one: ``passprice init --examples``, then git init and a first commit."""
    root = tmp_path_factory.mktemp("fix157") / "mine"
    assert invoke("init", "--examples", str(root)).exit_code == 0
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "start")
    return root


def _copy(started: Path, tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "mine"
    shutil.copytree(started, root, symlinks=True)
    return root


# --- (1) a FIFO or a folder in place of a lock ---------------------------------------------------------------------


def test_1_the_example_lock_removed_alone_fails_nothing(started: Path, tmp_path: Path) -> None:
    # The yardstick: the file really gone is a removal the review passes (exit 0), as it said of the FIFO.
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    result = invoke("diff", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    assert "no fact changed; 1 lock affected, 1 removed; 9 locks unaffected" in result.stdout


def test_1_a_fifo_in_place_of_a_lock_is_refused_as_check_fails_it(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    os.mkfifo(root / LOCK)
    check = invoke("check", root=root)
    assert check.exit_code == 2 and "1 lock file does not read" in check.stdout, check.output
    line = f"{LOCK}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"
    assert f"passprice: error: {line}" in check.stderr.splitlines()
    # Was exit 0, "1 lock affected, 1 removed".
    assert bad("diff", "HEAD", root=root) == [f"passprice: error: {line}"]


def test_1_a_folder_in_place_of_a_lock_is_refused_as_check_fails_it(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    (root / LOCK).mkdir()
    check = invoke("check", root=root)
    assert check.exit_code == 2, check.output
    assert f"passprice: error: {LOCK}: is a folder, not a file" in check.stderr.splitlines()
    assert bad("diff", "HEAD", root=root) == [f"passprice: error: {LOCK}: is a folder, not a file"]
    # Committed (a folder holding a file: git keeps no empty one), the revision's side says so too.
    (root / LOCK / "a").write_text("", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "folder")
    head = _git(root, "rev-parse", "--short=12", "HEAD")
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {LOCK} at {head}: is a folder, not a file"]


def test_1_a_symbolic_link_in_place_of_a_lock_is_still_refused(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    (root / LOCK).symlink_to("r1-qwen7b-h200-best.lock.toml")
    assert bad("diff", "HEAD", root=root) == [
        f"passprice: error: {LOCK}: a symbolic link; passprice diff compares the files themselves (commit the file, "
        "or the folder's files, in place of the link)"]
