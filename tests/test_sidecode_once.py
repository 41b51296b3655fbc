"""A side's code asked several times in one review answers from one process (issue 16), and each ask reads as it did
from a process of its own: the same answers and the same errors from a package that writes garbage when imported,
reads its standard input or exits in the middle of the conversation; from one that fails at exit after answering, keeps
state from one ask to the next, or forges the end of its answer (session 40's side57: each ask answers from a child
forked after the import, which ends through the interpreter's normal exit, and the end of an answer is said on a pipe
the side's code does not hold)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
from tests.cli_helpers import side_processes, until

from passprice import sidecode

_REGISTRY = "class Root:\n    def __init__(self, path):\n        self.path = path\n"
_ANSWER = ("def side_json(root, locks):\n    {before}\n"
           "    return {{'results': {{r['key']: {{'error': 'e' + r['key']}} for r in locks}}}}\n")

#: Each hostile (or plain) package: its __init__.py and what side_json does before it answers.
CASES = {
    "plain": ("", "pass"),
    "garbage on import": ("print('garbage')\n", "pass"),
    "reads its stdin": ("import sys\nsys.stdin.read()\n", "pass"),
    "exits mid-conversation": ("", "import sys; sys.exit(4)"),
    # (a) It answers, then fails at exit: an atexit hook ending the process with status 3 (one raising leaves the
    # status 0, in a process of its own too).
    "fails at exit": ("", "import atexit, os; atexit.register(os._exit, 3)"),
    "raises at exit": ("", "import atexit; atexit.register(lambda: 1 / 0)"),
    # (b) It keeps a module's state from one ask to the next: the second ask of its locks answers for key 'bb'.
    "keeps state across asks": ("", "global SEEN; SEEN = globals().get('SEEN', 0) + 1; "
                                    "locks = [dict(r, key=r['key'] * SEEN) for r in locks]"),
    # (c) It forges the end of its answer and an answer for the next ask: on every descriptor it holds, and with any
    # mark its argv holds (side56's answers ended with a mark the driver was given as sys.argv[1]), then exits 7.
    "forges the end of its answer": (
        "def forge():\n    import json, os, sys\n    forged = json.dumps({'results': {'forged': {}}})\n"
        "    print(forged, flush=True)\n    for fd in range(3, 64):\n        try:\n"
        "            os.write(fd, b'ready\\nexit 0\\nexit 0\\n')\n        except OSError:\n            pass\n"
        "    for mark in sys.argv[1:]:\n        print('\\n' + mark + '\\n' + forged + '\\n' + mark, flush=True)\n"
        "    os._exit(7)\n",
        "import passprice; passprice.forge()"),
}


def _package(folder: Path, init: str, before: str) -> Path:
    code = folder / "src" / "passprice"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text(init, encoding="utf-8")
    (code / "registry.py").write_text(_REGISTRY, encoding="utf-8")
    (code / "reproduce.py").write_text(_ANSWER.format(before=before), encoding="utf-8")
    return code


def _asks(root: Any, code: Path) -> list[tuple[Any, str]]:
    """Its locks, its locks' pins (this package cannot price them: no passprice.errors), its locks again."""
    return [sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]}),
            sidecode._ask(root, code, sidecode.PINNED_DRIVER, {"pinned": ["l.lock.toml"]}),
            sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "b"}]})]


@pytest.mark.parametrize("case", list(CASES))
def test_one_process_answers_every_ask_as_one_process_each_did(case: str, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sidecode, "_STUCK", {})
    init, before = CASES[case]
    code = _package(tmp_path, init, before)
    root = types.SimpleNamespace(path=tmp_path)
    alone = _asks(root, code)
    started = side_processes(monkeypatch)
    with sidecode.conversations():
        talked = _asks(root, code)
        # The review's line for a lock of this side (a fourth ask of the same process).
        priced = sidecode.price_locks(root, sidecode.Code(code, "sha256:0", True, False), [{"key": "a"}])
    assert talked == alone
    assert all(proc.poll() is not None for proc in started)  # none outlives the conversations
    if case == "plain":
        assert alone == [({"a": {"error": "ea"}}, "exit status 0"),
                         (None, "its code cannot price a lock from its pins (No module named 'passprice.errors')"),
                         ({"b": {"error": "eb"}}, "exit status 0")]
        assert len(started) == 1  # three one-ask processes before
    if case == "garbage on import":
        assert alone[0] == (None, "Expecting value: line 1 column 1 (char 0)")
        assert len(started) == 1
    if case == "exits mid-conversation":
        assert alone[0] == (None, "exit status 4") and len(started) == 1  # its child ended, not it (2 in side56)
    if case == "fails at exit":
        assert alone[0] == alone[2] == (None, "exit status 3") and len(started) == 1  # side56 read both answers
        assert priced == {"a": {"error": "its own code could not price it: exit status 3"}}
    if case == "raises at exit":
        assert alone[0] == ({"a": {"error": "ea"}}, "ZeroDivisionError: division by zero")  # read: it exits 0
    if case == "keeps state across asks":
        assert alone[2] == ({"b": {"error": "eb"}}, "exit status 0")  # side56 answered {"bb": …}
        assert priced == {"a": {"error": "ea"}}  # side56: "… it gave no result for it" (it answered for "aaa")
    if case == "forges the end of its answer":
        assert alone[0] == alone[2] == (None, "exit status 7")  # side56 read the forged {"forged": {}}
        assert priced == {"a": {"error": "its own code could not price it: exit status 7"}}


_SPAWN = ("def spawn(pids):\n    import os, time\n    pid = os.fork()\n    if pid == 0:\n        time.sleep(60)\n"
          "        os._exit(0)\n    with open(pids, 'a') as f:\n        f.write('%d\\n' % pid)\n")


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for its new parent counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rpartition(")")[2].split()[0] in "ZX"
    except FileNotFoundError:
        return True


def test_a_process_an_ask_forked_ends_with_that_ask(tmp_path: Path, monkeypatch: Any) -> None:
    """(b) A process the side's code forks while answering one ask does not live on into the next (side56 left it
    running until the review ended)."""
    monkeypatch.setattr(sidecode, "_STUCK", {})
    code = _package(tmp_path, _SPAWN, f"import passprice; passprice.spawn({str(tmp_path / 'pids')!r})")
    root = types.SimpleNamespace(path=tmp_path)
    with sidecode.conversations():
        for key in ("a", "b"):
            answered = sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": key}]})
            assert answered == ({key: {"error": "e" + key}}, "exit status 0")
            pid = int((tmp_path / "pids").read_text().split()[-1])
            # SIGKILL is sent before the ask is answered; it lands within a moment (20 s given: a busy machine)
            assert until(lambda pid=pid: _gone(pid), within_s=20), key
