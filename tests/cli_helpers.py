"""Running passprice's command line in tests: in-process (click's runner), asserting no Python traceback escapes,
and the three outcomes a command may have — a result, a named refusal (exit 1), bad input (exit 2, one
``passprice: error:`` line per problem)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from passprice.cli.app import _cut, _options_of, cli
from passprice.errors import escaped
from passprice.jsonerror import json_asked

REPO = Path(__file__).resolve().parent.parent


def retitled(card_text: str, title: str) -> str:
    """A card file's text with its ``[card]`` table's ``name`` (the card's title) replaced by ``title``: a copy of a
    registered card needs a title of its own, since ``check`` refuses two cards of one title (session 24)."""
    pattern = r'(?m)^(\[card\]\n(?:[^\[\n][^\n]*\n)*?name = )"[^"\n]*"'
    text, count = re.subn(pattern, lambda m: f"{m[1]}{json.dumps(title)}", card_text, count=1)
    assert count == 1, "no [card] name to retitle"
    return text


def copy_card(source: Path, target: Path) -> None:
    """Copy the card file ``source`` to ``target`` with a title of its own (``source``'s title + `` (copy TARGET)``,
    TARGET the new file's stem), as a user copying a registered card must give it."""
    text = source.read_text(encoding="utf-8")
    title = re.search(r'(?m)^name = "([^"\n]*)"', text.split("[card]", 1)[1])
    assert title is not None, source
    target.write_text(retitled(text, f"{title[1]} (copy {target.stem})"), encoding="utf-8")


def invoke(*args: str, root: Path = REPO) -> Result:
    """``passprice --root ROOT ARGS…`` in-process; any Python exception other than an exit fails the test."""
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback for {args}: {result.exception!r}\n{result.output}"
    )
    return result


def bad(*args: str, root: Path = REPO, says: str | Sequence[str] = ()) -> list[str]:
    """Run a command that must fail as bad input: exit 2, only ``passprice: error:`` lines on stderr (one per
    problem, no usage block), containing each of ``says`` in order; the lines. On stdout nothing, or, when the
    command was given ``--json``, its one JSON document: the error document (``{"error": {"status": 2, "problems"}}``,
    each problem one of the stderr lines, escaped as printed) or the command's own (a listing's, with its
    ``"problems"``; ``diff``'s report) (session 30)."""
    result = invoke(*args, root=root)
    assert result.exit_code == 2, f"exit {result.exit_code} for {args}:\n{result.output}"
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("passprice: error: ") for line in lines), result.stderr
    if json_asked(["--root", str(root), *args], _options_of):
        document = json.loads(result.stdout)
        if "error" in document:
            assert document == {"error": {"status": 2, "problems": document["error"]["problems"]}}, document
            shown = [f"passprice: error: {_cut(escaped(p))}" for p in document["error"]["problems"]]
            assert "\n".join(shown) == "\n".join(lines), (shown, lines)
    else:
        assert result.stdout == "", result.stdout
    wanted = [says] if isinstance(says, str) else list(says)
    assert len(lines) >= len(wanted), result.stderr
    for line, want in zip(lines, wanted, strict=False):
        assert want in line, f"{want!r} not in {line!r}"
    return lines


def refused(*args: str, root: Path = REPO, name: str) -> dict[str, Any]:
    """Run a pricing command the model must refuse by ``name``: exit 1, ``{"refusal": NAME, …}`` on stdout, one
    ``passprice: refused:`` line on stderr."""
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 1, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    assert out["refusal"] == name, out
    assert result.stderr.startswith("passprice: refused: ") and len(result.stderr.splitlines()) == 1
    return out


def copy_root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry and locks, to break and to write into."""
    root = tmp_path / "root"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    return root

#: A pricing model passprice really locked with (the first, listed in ``src/passprice/pricing_models.json``): a test
#: standing a lock "written by other code" pins it, since a digest of no code is refused as forged (slip 55).
LISTED_MODEL = "sha256:d82efb38ac4484db2f213716078153839f163d99696ae2274cf103681a94fc2e"


def side_processes(monkeypatch: Any) -> list[Any]:
    """The side's-code processes (``python -E -P -B -c``) started from now on, as they are started."""
    import subprocess

    started: list[Any] = []
    real = subprocess.Popen

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **named: Any) -> None:
            super().__init__(args, *rest, **named)
            if list(args[1:5]) == ["-E", "-P", "-B", "-c"]:
                started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Counted)
    return started


def until(done: Callable[[], bool], within_s: float = 60.0) -> bool:
    """Wait until ``done()`` holds, checking every 5 ms for at most ``within_s`` seconds: whether it held. A test
    waiting for another process waits for a condition, returning as soon as it holds, never for a fixed time: the
    project's CI runs the suite on two busy cores, where a moment can take seconds."""
    import time

    end = time.monotonic() + within_s
    while not done():
        if time.monotonic() > end:
            return done()
        time.sleep(0.005)
    return True


def catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler of its own for SIGTERM (``SigCgt`` in ``/proc/PID/status``): in a
    ``passprice`` command, once ``passprice_sigint.pth`` has run (its SIGINT, SIGTERM and SIGHUP handlers are put in
    place together), before that the interpreter's own start, where SIGTERM kills with no line and SIGINT prints
    Python's traceback. True where ``/proc`` cannot say (the process ended, another system): the caller goes on."""
    import signal

    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            caught = next((line.split()[1] for line in f if line.startswith("SigCgt:")), None)
    except OSError:
        return True
    return caught is None or bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


def repin_excerpt(root: Path, excerpt: str) -> None:
    """Pin the stored excerpt ``excerpt`` (a path from ``root``) as it is now: each source record of ``root`` naming
    it gets its bytes' sha256 under ``excerpt_sha256`` (an edited excerpt whose pin is left is a problem of check's:
    tests/test_walk128.py), so a test of what audit says of an edited excerpt edits it as its pin allows."""
    import hashlib

    digest = hashlib.sha256((root / excerpt).read_bytes()).hexdigest()
    for record in (root / "sources").glob("*.toml"):
        text = record.read_text(encoding="utf-8")
        if f'excerpt = "{excerpt}"\n' in text:
            text = re.sub(r'(?m)^excerpt_sha256 = "[0-9a-f]{64}"$', f'excerpt_sha256 = "{digest}"', text)
            record.write_text(text, encoding="utf-8")
