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
    import platform

    from passprice import gitread

    if platform.machine() not in gitread._OPENING or not os.access("/proc/self/syscall", os.R_OK):
        pytest.skip("no /proc/PID/syscall of a known machine: the look-through's bound is all there is")
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


def test_1_a_long_input_is_written_whole_while_git_is_watched(tmp_path: Path) -> None:
    # Found on the way (git79's first watch retried Popen.communicate after each 0.05 s, which writes no more of its
    # input after a timeout): 40,000 blob ids to `git cat-file --batch-check` waited past the history search's 10 s
    # (git waiting for the rest of its input). Now the input is written as the pipe takes it: every line answered.
    from passprice import gitread

    _git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a\n", encoding="utf-8")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "--no-verify", "-m", "one")
    blob = _git(tmp_path, "rev-parse", "HEAD:a")
    said = gitread.run_git(tmp_path, ["cat-file", "--batch-check"], f"{blob}\n".encode() * 50_000)
    assert said == f"{blob} blob 2\n".encode() * 50_000


def test_2_a_fifo_named_unlike_an_object_is_not_refused(tmp_path: Path) -> None:
    # Before: a FIFO at .git/objects/ab/not-hex (a name git never opens as an object) refused `diff`: "…: a FIFO
    # (named pipe), where git reads an object of its repository …", exit 2, a false refusal (`fact show --history`
    # too). Now only a name an object id spells (two hex digits, then 38 or 62) is looked at.
    root, _ = _changed_card(tmp_path)
    objects = root / ".git" / "objects"
    (objects / "ab").mkdir(exist_ok=True)
    os.mkfifo(objects / "ab" / "not-hex")
    (objects / "zz").mkdir()
    os.mkfifo(objects / "zz" / ("0" * 38))  # a fan-out folder no id begins with
    os.mkfifo(objects / "ab" / ("0" * 37))  # one digit short
    done = invoke("fact", "show", "h200_sxm_141gb", "memory.capacity", "--history", root=root)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "h200_sxm_141gb memory.capacity (facts/cards/h200_sxm_141gb.toml): 2 versions"
    assert [lines[3], lines[7]] == ["  140 GB (published)   value changed", "  141 GB (published)   new"]
    # a name an object id spells is still refused, before git runs
    os.mkfifo(objects / "ab" / ("c" * 38))
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {objects / 'ab' / ('c' * 38)}: a FIFO (named pipe), where git reads an object of its "
        "repository: git would block reading it (or read without end), so passprice runs no git here; make it a "
        "regular file or remove it"]


def test_3_the_history_search_reads_each_blob_once_and_no_huge_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the search ran `git log -S 'digest = "sha256:HEX' -- locks/`, which inflated and searched every version
    # of every file each commit changed: a 256 MiB lock of zeros changed in 6 commits after the lock sought (a 464 KB
    # .git) held digest_in_history and model_commit 10.1 s each, their limit, and both found nothing (so `reproduce
    # DIGEST` said less, 20 s late). Now passprice's own pickaxe (gitread.pickaxe) reads each blob once, none over
    # gitread.PICKAXE_BLOB_BYTES (4 MiB; forced to 256 KiB here, the huge blob 512 KiB, the largest lock 170 KB):
    # 0.06 s, the commit found. The registry is a folder of its repository here: its files were named from the
    # repository's top and none passed the search's `locks/` test, so the search found nothing (`git show` takes
    # that name).
    import subprocess
    import tomllib

    from passprice import gitread

    root = copy_root(tmp_path)  # tmp_path/root, a registry in a folder of the repository (tmp_path)
    lock = sorted((root / "locks").glob("*.lock.toml"))[0]
    digest = tomllib.loads(lock.read_text(encoding="utf-8"))["lock"]["digest"].removeprefix("sha256:")
    _git(tmp_path, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "locked")
    wrote = _git(root, "rev-parse", "--short=12", "HEAD")
    date = _git(root, "log", "-1", "--format=%cs")
    _git(root, "rm", "-q", str(lock))
    _git(root, "commit", "-q", "--no-verify", "-m", "re-locked")
    huge = root / "locks" / "huge.lock.toml"
    for n in range(3):
        huge.write_bytes(b"0" * (512 << 10) + f"{n}\n".encode())
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--no-verify", "-m", f"huge {n}")
    monkeypatch.setattr(gitread, "PICKAXE_BLOB_BYTES", 256 << 10)
    ran: list[list[str]] = []
    read: list[int] = []
    run_git, read_blobs = gitread.run_git, gitread.read_blobs
    monkeypatch.setattr(gitread, "run_git", lambda top, args, *more, **named: ran.append(list(args)) or run_git(
        top, args, *more, **named))
    monkeypatch.setattr(gitread, "read_blobs", lambda top, sizes, **named: read.extend(sizes.values()) or read_blobs(
        top, sizes, **named))
    done = invoke("reproduce", digest[:12], root=root)
    assert done.exit_code == 2 and done.stdout == "", done.output
    [line] = done.stderr.splitlines()
    name = lock.name.removesuffix(".lock.toml")
    assert line.endswith(
        f": re-locked since; commit {wrote} ({date}) wrote it as root/locks/{lock.name}: write it out, `git show "
        f"{wrote}:root/locks/{lock.name} > {name}-{wrote}.lock.toml`, then `passprice reproduce "
        f"{name}-{wrote}.lock.toml`"
    ), line
    assert not [args for args in ran if "-S" in args]  # git's own pickaxe, which reads every version whole
    # each lock blob of the history read once by the pickaxe (the huge one never), the one found once more to parse
    locks = subprocess.run(["git", "ls-tree", "-r", "-l", "HEAD~4", "locks/"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    sizes = sorted(int(row.split()[3]) for row in locks)
    found = next(int(row.split()[3]) for row in locks if row.endswith(f"\tlocks/{lock.name}"))
    assert sorted(read) == sorted([*sizes, found])
    assert max(read) < 256 << 10
