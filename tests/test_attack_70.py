"""Session 40's merges attacked (attack70, issue 13): a pull request's package whose ask starts a daemon (fork,
``setsid``, fork) left it running after the review, holding the answer's pipe (a one-ask process waited on it until
the time limit, 300 s); each side's process is now the subreaper of what its code starts and kills what is left when
each ask ends (:data:`passprice.sidecode._REAP`)."""

from __future__ import annotations

import time
import types
from pathlib import Path
from typing import Any

import pytest
from tests.cli_helpers import side_processes, until
from tests.test_sidecode_once import _gone, _package

from passprice import sidecode

#: side_json, before it answers: a daemon (fork, setsid, fork) whose pid goes to ``pids``, asleep for a minute. The
#: pid is written to ``pids.new`` and renamed to ``pids``: side_json answers once ``pids`` exists, and a file opened
#: for appending exists before its pid is written (the project's CI, session 40: the ask ended and killed the daemon
#: between the two, ``pids`` was empty and ``_ended`` read ``[]``).
_DAEMON = ("import os, time\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
           "            with open({pids!r} + '.new', 'w') as f:\n                f.write('%d\\n' % os.getpid())\n"
           "            os.replace({pids!r} + '.new', {pids!r})\n"
           "            time.sleep(60)\n        os._exit(0)\n    os.wait()\n"
           "    while not os.path.exists({pids!r}):\n        time.sleep(0.005)\n")


def _ended(pids: Path) -> list[bool]:
    """Whether each daemon written to ``pids`` has ended (up to 20 s given to the kill to land, returning as soon as
    it has: a second was short on a busy machine)."""
    numbers = [int(p) for p in pids.read_text().split()]
    until(lambda: all(_gone(p) for p in numbers), within_s=20)
    return [_gone(p) for p in numbers]


def test_a_daemon_an_ask_started_ends_with_the_ask(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sidecode, "_STUCK", {})
    pids = tmp_path / "pids"
    code = _package(tmp_path, "", _DAEMON.format(pids=str(pids)))
    root = types.SimpleNamespace(path=tmp_path)
    # A process of its own (no review open): main waited 300 s (TIMEOUT_S) on the pipe the daemon held.
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 20)
    started = time.monotonic()
    assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]}) == ({"a": {"error": "ea"}},
                                                                                     "exit status 0")
    assert time.monotonic() - started < 10
    assert _ended(pids) == [True]
    # A review's conversation: the answer came at once, but the daemon outlived the review.
    pids.unlink()
    with sidecode.conversations():
        assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "b"}]}) == ({"b": {"error": "eb"}},
                                                                                         "exit status 0")
        assert _ended(pids) == [True]  # ended with its ask, before the next one
        pids.unlink()
        assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "c"}]})[1] == "exit status 0"
        assert _ended(pids) == [True]


#: A package registering at-fork hooks that print (its import): a one-ask process forks nothing, so they never ran.
_HOOKS = ("import os\nos.register_at_fork(before=lambda: print('before'), after_in_parent=lambda: print('parent'),\n"
          "                      after_in_child=lambda: print('child'))\n")


def test_at_fork_hooks_of_the_import_print_into_no_answer(tmp_path: Path, monkeypatch: Any) -> None:
    # main: 'before' (copied into the child's buffer) and 'child' began the answer, and 'parent' the next one's:
    # every ask read "Expecting value: line 1 column 1 (char 0)".
    monkeypatch.setattr(sidecode, "_STUCK", {})
    code = _package(tmp_path, _HOOKS, "pass")
    root = types.SimpleNamespace(path=tmp_path)
    with sidecode.conversations():
        for key in ("a", "b"):
            assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": key}]}) == (
                {key: {"error": "e" + key}}, "exit status 0")


def _git(folder: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgSign=false", *args],
                   cwd=folder, check=True, capture_output=True)


def _history(tmp_path: Path, digests: list[str]) -> Path:
    """A repository whose ``locks/a.lock.toml`` is committed once with each digest as its lock's and its model's."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    for digest in digests:
        (tmp_path / "locks" / "a.lock.toml").write_text(
            f'[lock]\ndigest = "sha256:{digest}"\npricing_model = "sha256:{digest}"\n', encoding="utf-8")
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", digest[:4])
    return tmp_path


def test_the_history_search_runs_no_textconv_driver_of_the_repository(tmp_path: Path, monkeypatch: Any) -> None:
    # main: `git log -S` ran the repository's textconv driver on every version of every lock (a second apiece for
    # one that sleeps; any program the config names).
    from passprice.locks import digest_in_history
    from passprice.registry import Root
    from passprice.reproduce import model_commit

    digests = [f"{n:064x}" for n in (10, 11, 12)]
    (tmp_path / "r").mkdir()
    root = _history(tmp_path / "r", digests)
    ran = tmp_path / "ran"
    (root / ".git" / "info" / "attributes").write_text("locks/* diff=slow\n", encoding="utf-8")
    _git(root, "config", "diff.slow.textconv", f"sh -c 'echo ran >> {ran}; cat \"$0\"'")
    found, cut = model_commit(Root(root), f"sha256:{digests[1]}")
    assert found is not None and len(found[0]) == 12 and cut is None
    assert digest_in_history(Root(root), digests[1]) == ((found[0], found[1], "locks/a.lock.toml"), None)
    assert not ran.exists()
    # A search past its time limit finds nothing (main: no limit; 500 versions of a 1 MB lock, 1.3 MB packed, 0.6 s).
    from passprice import locks
    from passprice.gitread import GitFailed, run_git

    with pytest.raises(GitFailed, match=r"^git log: took longer than 1e-09 s$"):
        run_git(root, ["log"], timeout=1e-9)
    monkeypatch.setattr(locks, "HISTORY_SEARCH_S", 1e-9)
    # said, not dropped silently (tests/test_bound111.py)
    assert model_commit(Root(root), f"sha256:{digests[1]}") == (
        None, "not searched: git log: the search of locks/ took longer than 1e-09 s")
    assert digest_in_history(Root(root), digests[1]) == (None, None)


def test_a_huge_lock_of_the_history_is_not_read(tmp_path: Path, monkeypatch: Any) -> None:
    # main: a 50 MB lock of an old commit (a few hundred KB in git's pack) took 8.9 s and 358 MB to parse.
    from passprice import locks
    from passprice.registry import Root

    digest = f"{13:064x}"
    root = _history(tmp_path, [digest])
    size = len((root / "locks" / "a.lock.toml").read_bytes())  # 136 bytes
    monkeypatch.setattr(locks, "MAX_HISTORY_LOCK_BYTES", size)
    assert locks.digest_in_history(Root(root), digest)[0] is not None
    monkeypatch.setattr(locks, "MAX_HISTORY_LOCK_BYTES", size - 1)
    assert locks.digest_in_history(Root(root), digest) == (None, None)


def test_a_commit_of_many_candidates_is_read_in_a_few_git_processes(tmp_path: Path, monkeypatch: Any) -> None:
    # main: two git processes a file quoting the digest (2,000 files of one commit outside their [lock] table: 8 s).
    from passprice import gitread, locks
    from passprice.registry import Root

    digest = f"{14:064x}"
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    for n in range(300):
        (tmp_path / "locks" / f"l{n:03}.lock.toml").write_text(f'[other]\ndigest = "sha256:{digest}"\n',
                                                                 encoding="utf-8")
    (tmp_path / "locks" / "z.lock.toml").write_text(f'[lock]\ndigest = "sha256:{digest}"\n', encoding="utf-8")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "many")
    calls: list[str] = []
    run_git = gitread.run_git
    monkeypatch.setattr(gitread, "run_git",
                        lambda top, args, *more, **named: calls.append(args[0]) or run_git(top, args, *more, **named))
    found, _ = locks.digest_in_history(Root(tmp_path), digest[:20])
    assert found is not None and found[2] == "locks/z.lock.toml"
    # the pickaxe names the candidates (attack71), reading each blob once itself (gitread.pickaxe: git79)
    assert calls == ["log", "cat-file", "cat-file", "cat-file", "cat-file"]
    # The bytes read in all are bounded: past the budget, no candidate is read.
    monkeypatch.setattr(locks, "MAX_HISTORY_READ_BYTES", 100)
    assert locks.digest_in_history(Root(tmp_path), digest) == (None, None)


def test_a_daemon_of_an_ask_past_the_time_limit_ends_with_the_review(tmp_path: Path, monkeypatch: Any) -> None:
    # The ask is stopped at the limit (its child's group killed); the side's process, the daemon's subreaper, kills
    # it once its asks' pipe closes, before it is killed itself (main: the daemon ran on after the review).
    # The limit must pass after the daemon has started: its process's start, the package's import and three forks
    # fit in 1 s on a quiet machine, not always on a busy one (no pid written, nothing to test): the limit is doubled
    # until the daemon had started within it.
    pids = tmp_path / "pids"
    code = _package(tmp_path, "", _DAEMON.format(pids=str(pids)) + "    time.sleep(60)\n")
    root = types.SimpleNamespace(path=tmp_path)
    for limit in (1, 2, 4, 8, 16, 32):
        monkeypatch.setattr(sidecode, "_STUCK", {})
        monkeypatch.setattr(sidecode, "TIMEOUT_S", limit)
        with sidecode.conversations():
            assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]}) == (
                None, f"took longer than {limit} s")
        if pids.exists():
            break
    assert _ended(pids) == [True]


def test_a_daemon_the_import_started_ends_with_the_review(tmp_path: Path, monkeypatch: Any) -> None:
    # Started by the package's import, it is no ask's: the side's process kills it when the review ends (once the
    # review closed its pipe), before it is killed itself; main left it running.
    monkeypatch.setattr(sidecode, "_STUCK", {})
    pids = tmp_path / "pids"
    code = _package(tmp_path, f"def _start():\n    {_DAEMON.format(pids=str(pids))}_start()\n", "pass")
    root = types.SimpleNamespace(path=tmp_path)
    with sidecode.conversations():
        for key in ("a", "b"):
            assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": key}]})[1] == "exit status 0"
    assert _ended(pids) == [True]


def test_a_daemon_ends_with_the_review_when_the_side_s_process_is_slow_to_end(tmp_path: Path, monkeypatch: Any) -> None:
    # The review closes the asks' pipe and gives the side's process _CLOSE_S to kill what is left and end; it was
    # 1 s, then the process was killed with its group, and the daemon (a session of its own, out of the group) ran
    # on, adopted by init: a side's process not run for a second on a busy machine. Here it is stopped for 1.5 s.
    import os
    import signal
    import threading

    monkeypatch.setattr(sidecode, "_STUCK", {})
    pids = tmp_path / "pids"
    code = _package(tmp_path, f"def _start():\n    {_DAEMON.format(pids=str(pids))}_start()\n", "pass")
    root = types.SimpleNamespace(path=tmp_path)
    started = side_processes(monkeypatch)
    with sidecode.conversations():
        assert sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]})[1] == "exit status 0"
        assert len(started) == 1
        os.kill(started[0].pid, signal.SIGSTOP)
        threading.Timer(1.5, lambda: started[0].poll() is None and os.kill(started[0].pid, signal.SIGCONT)).start()
    assert _ended(pids) == [True]  # 1 s: [False] (killed with its group, the side's process left the daemon)
    assert started[0].returncode == 0  # it ended by itself, once continued (1 s: -9)
