"""A review's side process that the side's package cannot lie through (side58, issue 13): import-time code of a hostile
package ran inside the one process that also waited for each ask's child and said its exit status, so it could patch
``os.waitstatus_to_exitcode`` or dup the pipe the status is said on and report exit 0 for a child that exited 7,
reap the children from a thread (every ask failed), move that pipe's descriptor (the review waited for the 300 s
limit), or keep state from one ask to the next in a thread or an ``os.register_at_fork`` hook. Now a supervisor that
never imports the side's code waits for each ask's process and says its status and its answer's end; the process
that imported the package (the zygote) is used only while it is one thread with no process and no descriptor of its
own protocol besides its three pipe ends, and only for an ask's process the supervisor is the parent of, else each
ask runs in a process of its own (:data:`sidecode.SERVE_DRIVER`). Each reproducer's asks in a review read exactly as
the same asks in processes of their own."""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

import pytest
from tests.cli_helpers import side_processes
from tests.test_sidecode_once import _asks, _package

from passprice import sidecode

#: Dups every descriptor from 3 it holds (the status pipe among them) and keeps the copies for an ask.
_DUPS = ("import os\nCOPIES = []\nfor _fd in range(3, 64):\n    try:\n        COPIES.append(os.dup(_fd))\n"
         "    except OSError:\n        pass\n")
#: Its answer, written before it ends with status 7 (``forge`` first writes "exit 0" on every copy it holds).
_SEVEN = ("import json, os, sys, passprice; getattr(passprice, 'forge', lambda: None)(); "
          "print(json.dumps({'results': {r['key']: {'error': 'forged'} for r in locks}}), flush=True); os._exit(7)")
#: A thread counting the processes its own process forks (children seen in /proc), for the answer's key.
_COUNTER = ("import os, threading, time\nSEEN = set()\ndef _watch():\n    while True:\n"
            "        for task in os.listdir('/proc/self/task'):\n            try:\n"
            "                with open('/proc/self/task/%s/children' % task) as f:\n"
            "                    SEEN.update(f.read().split())\n            except OSError:\n                pass\n"
            "        time.sleep(0.002)\nthreading.Thread(target=_watch, daemon=True).start()\n")

#: Each hostile package: its ``__init__.py`` and what ``side_json`` does before it answers (as test_sidecode_once).
CASES = {
    # main: the side process's os.waitstatus_to_exitcode was the package's: "exit 0" for a child that exited 7, and its
    # answer read as the lock's.
    "patches waitstatus_to_exitcode": ("import os\nos.waitstatus_to_exitcode = lambda status: 0\n", _SEVEN),
    # main: the import's copy of the status pipe, which each ask's child held, said "exit 0" before the child
    # exited 7.
    "dups the status pipe": (_DUPS + "def forge():\n    for fd in COPIES:\n        try:\n"
                                     "            os.write(fd, b'exit 0\\n')\n        except OSError:\n"
                                     "            pass\n", _SEVEN),
    # main: a thread of the import reaped every child first: each ask failed (ChildProcessError).
    "reaps children from a thread": (
        "import os, threading, time\ndef _reap():\n    while True:\n        try:\n            os.waitpid(-1, 0)\n"
        "        except ChildProcessError:\n            time.sleep(0.002)\n"
        "threading.Thread(target=_reap, daemon=True).start()\n", "pass"),
    # main: the status pipe moved to another descriptor and /dev/null put in its place: "ready" went to /dev/null and
    # the review waited for the time limit (300 s).
    "moves the status pipe": ("import os\nfor _fd in range(3, 64):\n    try:\n        os.dup(_fd)\n"
                              "        _null = os.open(os.devnull, os.O_WRONLY)\n        os.dup2(_null, _fd)\n"
                              "        os.close(_null)\n    except OSError:\n        pass\n", "pass"),
    # main: a thread of the import saw each ask's child: the third ask answered for 'bb', or 'bbb'.
    "keeps state in a thread": (_COUNTER, "import passprice; "
                                          "locks = [dict(r, key=r['key'] * (len(passprice.SEEN) + 1)) for r in locks]"),
    # main: the hooks ran in the side process around each fork: the first ask answered for 'aaaa' (before, child), the
    # third for 'bbbbbbbbb'; none runs in a one-ask process, which forks nothing.
    "keeps state in at-fork hooks": (
        "import os\nFORKS = [0]\nos.register_at_fork(before=lambda: FORKS.__setitem__(0, FORKS[0] + 1),\n"
        "                      after_in_parent=lambda: FORKS.__setitem__(0, FORKS[0] + 1),\n"
        "                      after_in_child=lambda: FORKS.__setitem__(0, FORKS[0] + 1))\n",
        "import passprice; locks = [dict(r, key=r['key'] * (passprice.FORKS[0] + 1)) for r in locks]"),
    # It rewrites the zygote's own loop (its __main__) to name pid 1 as each ask's process: pid 1 is no child of the
    # supervisor's, and the real one, which would have printed its answer before the one-ask process printed it again
    # ("Extra data"), waits for the supervisor's word and is killed.
    "names another process as the ask's": (
        "import __main__, os\nif hasattr(__main__, '_write'):\n    _real = __main__._write\n"
        "    def _forged(fd, data):\n        return _real(fd, b'child 1\\n' if data.startswith(b'child ') else data)\n"
        "    __main__._write = _forged\n", "pass"),
    # main: its SIGUSR1 handler ran in the zygote, sent by the first ask's process: the third ask answered for 'bb'
    # (attack72; the zygote now waits for asks with every signal blocked, its mask the import's again in the ask's).
    "keeps state in a signal handler": (
        "import os, signal\nZYGOTE, SEEN = os.getpid(), [0]\n"
        "signal.signal(signal.SIGUSR1, lambda *_: SEEN.__setitem__(0, SEEN[0] + 1))\n",
        "import os, signal, passprice; locks = [dict(r, key=r['key'] * (passprice.SEEN[0] + 1)) for r in locks]\n"
        "    if passprice.ZYGOTE != os.getpid():\n        os.kill(passprice.ZYGOTE, signal.SIGUSR1)"),
    # main: the zygote flushed the import's sys.stdout before each ask: a flush counting there gave the first ask 'aa'
    # and the third 'bbbb' (attack72; the zygote calls nothing of the import's now, and its buffer is flushed by each
    # ask's process as it exits, as by a one-ask process).
    "keeps state in sys.stdout's flush": (
        "import sys\nSEEN = [0]\nclass _Out:\n    def __init__(self, f):\n        self.f = f\n"
        "    def flush(self):\n        SEEN[0] += 1\n        self.f.flush()\n"
        "    def __getattr__(self, name):\n        return getattr(self.f, name)\nsys.stdout = _Out(sys.stdout)\n",
        "import passprice; locks = [dict(r, key=r['key'] * (passprice.SEEN[0] + 1)) for r in locks]"),
    # main: each ask's process read the zygote's pid as its main thread's native id (threading sets it once; no fork
    # updates it): 'aa' and 'bb' (attack72).
    "reads its main thread's native id": (
        "import threading\n", "import os, threading; locks = [dict(r, key=r['key'] * "
                               "(1 + (threading.main_thread().native_id != os.getpid()))) for r in locks]"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_import_gets_each_ask_judged_as_a_one_ask_process(case: str, tmp_path: Path,
                                                                    monkeypatch: Any) -> None:
    monkeypatch.setattr(sidecode, "_STUCK", {})
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 60)  # "moves the status pipe" waited for it on main
    init, before = CASES[case]
    code = _package(tmp_path, init, before)
    root = types.SimpleNamespace(path=tmp_path)
    alone = _asks(root, code)
    started = side_processes(monkeypatch)
    with sidecode.conversations():
        talked = _asks(root, code)
    assert talked == alone
    assert len(started) == 1 and all(proc.poll() is not None for proc in started)
    pins = (None, "its code cannot price a lock from its pins (No module named 'passprice.errors')")
    if before == _SEVEN:
        assert alone == [(None, "exit status 7"), pins, (None, "exit status 7")]  # main: ({"a": … "forged"}}, …)
    else:
        assert alone == [({"a": {"error": "ea"}}, "exit status 0"), pins, ({"b": {"error": "eb"}}, "exit status 0")]


#: Makes a session (and a process group) of its own, out of the group the review kills at the time limit (a one-ask
#: process, a session leader already, cannot).
_SETSID = "import os\ntry:\n    os.setsid()\nexcept OSError:\n    pass\n"
#: Appends its process's pid to the file ``imports`` when imported.
_COUNTED = "import os\nwith open({imports!r}, 'a') as _f:\n    _f.write('%d\\n' % os.getpid())\n"


@pytest.mark.parametrize(("case", "imports"), [("plain", 1), ("keeps state in at-fork hooks", 1),
                                               ("keeps state in a thread", 4), ("moves the status pipe", 4),
                                               ("leaves its process group", 4),
                                               ("names another process as the ask's", 4)])
def test_the_package_is_imported_once_unless_its_import_left_more_than_one_lone_thread(
        case: str, imports: int, tmp_path: Path, monkeypatch: Any) -> None:
    """Three asks: one import when the zygote is used (a plain package, at-fork hooks: they do not run in it), four
    when it is not (its import left a thread, moved a descriptor of the pipes to the supervisor, or left the
    supervisor's process group): the zygote's and each ask's own process's."""
    monkeypatch.setattr(sidecode, "_STUCK", {})
    init, before = {**CASES, "leaves its process group": (_SETSID, "pass")}.get(case, ("", "pass"))
    code = _package(tmp_path, _COUNTED.format(imports=str(tmp_path / "imports")) + init, before)
    root = types.SimpleNamespace(path=tmp_path)
    with sidecode.conversations():
        talked = _asks(root, code)
    assert len((tmp_path / "imports").read_text().split()) == imports
    assert talked[0] == ({"a": {"error": "ea"}}, "exit status 0")


def test_a_zygote_that_died_leaves_each_later_ask_to_a_process_of_its_own(tmp_path: Path, monkeypatch: Any) -> None:
    """The zygote killed between two asks: the next asks are answered as before, each by a process of its own (one
    import each), and the review's process is the same one (it is the supervisor that answers)."""
    import signal

    monkeypatch.setattr(sidecode, "_STUCK", {})
    imports = tmp_path / "imports"
    code = _package(tmp_path, _COUNTED.format(imports=str(imports)), "pass")
    root = types.SimpleNamespace(path=tmp_path)
    started = side_processes(monkeypatch)
    with sidecode.conversations():
        first = _asks(root, code)
        supervisor = started[0].pid
        with open(f"/proc/{supervisor}/task/{supervisor}/children", encoding="ascii") as f:
            (zygote,) = (int(p) for p in f.read().split())
        assert imports.read_text().split() == [str(zygote)]
        os.kill(zygote, signal.SIGKILL)
        second = _asks(root, code)
    pins = (None, "its code cannot price a lock from its pins (No module named 'passprice.errors')")
    assert second == first == [({"a": {"error": "ea"}}, "exit status 0"), pins,
                               ({"b": {"error": "eb"}}, "exit status 0")]
    assert len(started) == 1 and len(imports.read_text().split()) == 1 + 3


def test_a_supervisor_an_ask_stopped_ends_with_the_review_as_it_should(tmp_path: Path, monkeypatch: Any) -> None:
    """An ask that stops its parent (SIGSTOP to the supervisor) runs past the time limit, and the review's end
    continues the supervisor, which ends itself (status 0) and kills what the asks left; main waited the whole
    _CLOSE_S (10 s) for it and then killed it (status -9), leaving the daemons it was the subreaper of to init."""
    monkeypatch.setattr(sidecode, "_STUCK", {})
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 1)
    code = _package(tmp_path, "", "import os, signal; os.kill(os.getppid(), signal.SIGSTOP)")
    root = types.SimpleNamespace(path=tmp_path)
    started = side_processes(monkeypatch)
    with sidecode.conversations():
        answered = sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]})
    assert answered == (None, "took longer than 1 s")
    assert [proc.returncode for proc in started] == [0]


def test_a_zygote_an_ask_stopped_answers_the_next_ask(tmp_path: Path, monkeypatch: Any) -> None:
    """The first ask stops the zygote (SIGSTOP): the next asks are answered as by processes of their own; main held the
    second ask to the time limit ('took longer than 20 s') and did not ask the third ('… not run again')."""
    monkeypatch.setattr(sidecode, "_STUCK", {})
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 20)
    code = _package(tmp_path, "import os\nIMPORTED_IN = os.getpid()\n",
                    "import os, signal, passprice\n    if passprice.IMPORTED_IN != os.getpid():\n"
                    "        os.kill(passprice.IMPORTED_IN, signal.SIGSTOP)")
    root = types.SimpleNamespace(path=tmp_path)
    with sidecode.conversations():
        talked = _asks(root, code)
    pins = (None, "its code cannot price a lock from its pins (No module named 'passprice.errors')")
    assert talked == [({"a": {"error": "ea"}}, "exit status 0"), pins, ({"b": {"error": "eb"}}, "exit status 0")]
