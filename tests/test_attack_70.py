"""Session 40's merges attacked (attack70, issue 13): a pull request's package whose ask starts a daemon (fork,
``setsid``, fork) left it running after the review, holding the answer's pipe (a one-ask process waited on it until
the time limit, 300 s); each side's process is now the subreaper of what its code starts and kills what is left when
each ask ends (:data:`passprice.sidecode._REAP`)."""

from __future__ import annotations

import time
import types
from pathlib import Path
from typing import Any

from tests.test_sidecode_once import _gone, _package

from passprice import sidecode

#: side_json, before it answers: a daemon (fork, setsid, fork) whose pid goes to ``pids``, asleep for a minute.
_DAEMON = ("import os, time\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
           "            with open({pids!r}, 'a') as f:\n                f.write('%d\\n' % os.getpid())\n"
           "            time.sleep(60)\n        os._exit(0)\n    os.wait()\n"
           "    while not os.path.exists({pids!r}):\n        time.sleep(0.005)\n")


def _ended(pids: Path) -> list[bool]:
    """Whether each daemon written to ``pids`` has ended (a moment given to the kill to land)."""
    numbers = [int(p) for p in pids.read_text().split()]
    for _ in range(100):
        if all(_gone(p) for p in numbers):
            break
        time.sleep(0.01)
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
    assert time.monotonic() - started < 10 and _ended(pids) == [True]
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
