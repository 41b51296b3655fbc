"""git79 (issue 13: no input under 1 MB runs a command past 2 s): git's reads bounded without listing every loose
object, a FIFO git never opens left alone, and the history's pickaxe bounded. Each failing input built here."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from test_left52 import _git


def _changed_card(tmp_path: Path) -> tuple[Path, Path]:
    """A repository of the registry (no locks) whose second commit changes one card's capacity (141 -> 140): its
    root and the path of that card's new blob as a loose object."""
    root = copy_root(tmp_path)
    for lock in (root / "locks").glob("*.lock.toml"):
        lock.unlink()
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "one")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("\nvalue = 141\n") == 1
    card.write_text(text.replace("\nvalue = 141\n", "\nvalue = 140\n"), encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "two")
    blob = _git(root, "rev-parse", "HEAD:facts/cards/h200_sxm_141gb.toml")
    return root, root / ".git" / "objects" / blob[:2] / blob[2:]


def test_1_a_fifo_past_the_loose_objects_listed_is_named_in_time(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: past gitread.MAX_LOOSE_LISTED (200,000) loose objects the look-through stopped, and `diff HEAD~1 HEAD`
    # with the changed card's blob a FIFO waited in `git ls-tree -l` for git's time limit: 200,001 empty loose objects
    # before it took 60.8 s, "git ls-tree: took longer than 60.0 s", naming nothing. Now a git found waiting to open
    # a FIFO (/proc/PID/syscall) is stopped and the FIFO named. The cap is forced to 0 here: no object is listed.
    from passprice import gitread

    if not Path("/proc/self/syscall").exists():
        pytest.skip("no /proc/PID/syscall: the look-through's bound is all there is")
    root, loose = _changed_card(tmp_path)
    loose.unlink()
    os.mkfifo(loose)
    monkeypatch.setattr(gitread, "MAX_LOOSE_LISTED", 0)
    started = time.monotonic()
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {loose}: a FIFO (named pipe), where git reads an object of its repository: git ls-tree "
        "waited to open it (a FIFO's writer never comes), so passprice stopped git; make it a regular file or remove "
        "it"]
    assert time.monotonic() - started < 20.0  # was 60.8 s, git's time limit
    # a ref that is a FIFO, past the refs listed (gitread.MAX_REFS_LISTED forced to 0): the same, named as a file
    loose.unlink()
    ref = root / ".git" / "refs" / "heads" / "side"
    os.mkfifo(ref)
    monkeypatch.setattr(gitread, "MAX_REFS_LISTED", -1)
    monkeypatch.setattr(gitread, "_repository_files", lambda dot_git: [])
    with pytest.raises(gitread.GitFailed) as raised:
        gitread.run_git(root, ["rev-parse", "--verify", "side"])
    assert str(raised.value) == (
        f"{ref}: a FIFO (named pipe), where git reads a file of its repository: git rev-parse waited to open it (a "
        "FIFO's writer never comes), so passprice stopped git; make it a regular file or remove it")


def test_2_a_fifo_named_unlike_an_object_is_not_refused(tmp_path: Path) -> None:
    # Before: a FIFO at .git/objects/ab/not-hex (a name git never opens as an object) refused `diff`: "…: a FIFO
    # (named pipe), where git reads an object of its repository …", exit 2, a false refusal. Now only a name an
    # object id spells (two hex digits, then 38 or 62) is looked at; the diff reads as without the FIFO.
    root, _ = _changed_card(tmp_path)
    plain = invoke("diff", "HEAD~1", "HEAD", root=root)
    objects = root / ".git" / "objects"
    (objects / "ab").mkdir(exist_ok=True)
    os.mkfifo(objects / "ab" / "not-hex")
    (objects / "zz").mkdir()
    os.mkfifo(objects / "zz" / ("0" * 38))  # a fan-out folder no id begins with
    os.mkfifo(objects / "ab" / ("0" * 37))  # one digit short
    done = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert (done.exit_code, done.stdout) == (plain.exit_code, plain.stdout)
    assert done.exit_code == 0, done.output
    assert "memory.capacity" in done.stdout, done.stdout
    # a name an object id spells is still refused, before git runs
    os.mkfifo(objects / "ab" / ("c" * 38))
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {objects / 'ab' / ('c' * 38)}: a FIFO (named pipe), where git reads an object of its "
        "repository: git would block reading it (or read without end), so passprice runs no git here; make it a "
        "regular file or remove it"]
