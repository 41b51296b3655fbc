"""Session 31, issue 13: ``--json`` and ``--format json`` print one JSON document on stdout, whatever happens.

Three breaks session 30 left (tests/test_json_30.py covers one bad input a command):

1. ``sweep --json`` to stdout failing after rows were streamed left a partial array (no ``]``; a failure at the
   first row, nothing at all): the array is now ended with the failure's document as its last element
   (:class:`passprice.jsonerror.StreamedArray`), or the document alone when no row was written; ``--jobs 1`` and
   ``--jobs 2`` alike.
2. ``--format json`` (``audit``, ``diff``, ``sweep``) printed no error document on bad input: it asks as ``--json``.
3. Every command with ``--json`` (and the three with ``--format json``), five bad inputs each where the command
   takes one (a missing file, bad TOML, a schema error, an unknown name, a refusal): exit 2 (1 for a refusal), one
   JSON document on stdout, each stderr line a ``passprice: error:`` line (``refused:`` for a refusal), one line
   where one file is bad. A measurement file that does not read under ``compare``/``calibrate``/``validate``/
   ``price``/``audit``/``sweep`` ``--stack`` is among them (the ``toml``/``schema`` roots break it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from cli_helpers import REPO, copy_root
from passprice.cli.app import _options_of, cli
from passprice.jsonerror import json_asked

S = "r1-qwen7b-h200"  # a serving; its lock has the same name
CARD = "h200_sxm_141gb"  # its card
CKPT = "deepseek-r1-distill-qwen-7b-q4_k_m"  # its checkpoint
STACK = "llamacpp-cuda-2405"
BIG = ["--checkpoint", "deepseek-v3-q4_k_m", "--card", "rtx_3080"]  # 671B on a 10 GB card: every batch refused
SET = ["--value", "5000", "--unit", "GB/s", "--provenance", "assumed", "--source", "nvidia-h200-datasheet",
       "--locator", "x"]

#: The registry files the ``toml`` and ``schema`` roots break: the serving, its card, checkpoint and lock, the stack
#: and one of its measurement files, one source record.
BROKEN = (f"registry/servings/{S}.toml", f"facts/cards/{CARD}.toml", f"registry/checkpoints/{CKPT}.toml",
          f"locks/{S}.lock.toml", f"facts/stacks/{STACK}.toml",
          "registry/measurements/xiongjiedai-llama3-llamabench.toml", "sources/nvidia-h200-datasheet.toml")

# Each case: (command, kind, arguments without --json, root, exit status). Kinds: missing (a path naming nothing, or
# a --root that is no folder), toml (a file that is not TOML, or not GGUF/JSON where the command reads those),
# schema (a key the schema does not allow), unknown (a name naming nothing), refusal (a named refusal, exit 1).
# Roots: repo (the checkout), toml and schema (copies with BROKEN broken so), gone (a folder that does not exist),
# copy (a private copy: a command that writes). A kind a command takes no input of is not listed.
CASES: list[tuple[str, str, list[str], str, int]] = []


def _case(command: str, kind: str, args: list[str], root: str = "repo", status: int = 2) -> None:
    CASES.append((command, kind, args, root, status))


for _c in ("audit", "best", "compare", "lock", "max-batch", "price", "speculate"):
    _out = ["-o", "{tmp}/x.lock.toml"] if _c == "lock" else []  # not over the lock there (already exists)
    _case(_c, "missing", [_c, "{tmp}/missing.toml", *_out])
    _case(_c, "toml", [_c, S, *_out], "toml")
    _case(_c, "schema", [_c, S, *_out], "schema")
    _case(_c, "unknown", [_c, "nosuch", *_out])
for _c, _args in (("audit", ["audit", S, "--batch", "100000"]), ("best", ["best", *BIG]),
                  ("compare", ["compare", *BIG[:2], "--cards", "rtx_3080"]),
                  ("lock", ["lock", S, "--batch", "100000", "-o", "{tmp}/x.lock.toml"]),
                  ("max-batch", ["max-batch", *BIG]), ("price", ["price", S, "--batch", "100000"]),
                  ("speculate", ["speculate", "qwen35-27b-h200-mtp", "--batch", "100000"])):
    _case(_c, "refusal", _args, "repo", 1)
for _c in ("cards", "checkpoints", "servings", "sources", "check"):
    _case(_c, "missing", [_c], "gone")
    _case(_c, "toml", [_c], "toml")
    _case(_c, "schema", [_c], "schema")
for _c, _args in (("calibrate", ["calibrate", "--stack"]), ("validate", ["validate", "--stack"])):
    _case(_c, "missing", [*_args, "{tmp}/missing.toml"])
    _case(_c, "toml", [*_args, STACK], "toml")
    _case(_c, "schema", [*_args, STACK], "schema")
    _case(_c, "unknown", [*_args, "nosuch"])
for _c, _args in (("facts", ["facts"]), ("fact show", ["fact", "show"]), ("fact recompute", ["fact", "recompute"]),
                  ("roofline", ["roofline"]), ("kv", ["kv"])):
    _name = CKPT if _c == "kv" else CARD
    _case(_c, "missing", [*_args, "{tmp}/missing.toml"])
    _case(_c, "toml", [*_args, _name], "toml")
    _case(_c, "schema", [*_args, _name], "schema")
    _case(_c, "unknown", [*_args, "nosuch"])
_case("fact set", "missing", ["fact", "set", "{tmp}/missing.toml", "memory.bandwidth", *SET])
_case("fact set", "toml", ["fact", "set", CARD, "memory.bandwidth", *SET], "toml")
_case("fact set", "schema", ["fact", "set", CARD, "memory.bandwidth", *SET], "schema")
_case("fact set", "unknown", ["fact", "set", "nosuch", "memory.bandwidth", *SET])
_case("reproduce", "missing", ["reproduce", "{tmp}/missing.lock.toml"])
_case("reproduce", "toml", ["reproduce", S], "toml")
_case("reproduce", "schema", ["reproduce", S], "schema")
_case("reproduce", "unknown", ["reproduce", "nosuch"])
_case("simulate", "missing", ["simulate", S, "--trace", "{tmp}/missing.jsonl"])
_case("simulate", "toml", ["simulate", S, "--synthetic", "4"], "toml")
_case("simulate", "schema", ["simulate", S, "--synthetic", "4"], "schema")
_case("simulate", "unknown", ["simulate", "nosuch", "--synthetic", "4"])
_case("simulate", "refusal", ["simulate", *BIG, "--synthetic", "4"], status=1)
_case("sweep", "missing", ["sweep", "{tmp}/missing.toml", "--batches", "1"])
_case("sweep", "toml", ["sweep", S, "--batches", "1"], "toml")
_case("sweep", "schema", ["sweep", S, "--batches", "1"], "schema")
_case("sweep", "unknown", ["sweep", "nosuch", "--batches", "1"])
_case("sweep", "refusal", ["sweep", S, "--batches", "100000"], status=1)  # every row refused: its rows, exit 1
_case("new-serving", "missing", ["new-serving", "x", "{tmp}/missing.toml"], "copy")
_case("new-serving", "toml", ["new-serving", "x", S], "toml")
_case("new-serving", "schema", ["new-serving", "x", S], "schema")
_case("new-serving", "unknown", ["new-serving", "x", "nosuch"], "copy")
_case("header", "missing", ["header", "{tmp}/missing.gguf"])
_case("header", "toml", ["header", "{tmp}/bad.gguf"])
_case("import", "missing", ["import", "{tmp}/missing.gguf"], "copy")
_case("import", "toml", ["import", "{tmp}/bad.gguf"], "copy")
_case("synth", "missing", ["synth", "{tmp}/missing.json", "-o", "{tmp}/out.gguf"])
_case("synth", "toml", ["synth", "{tmp}/bad.json", "-o", "{tmp}/out.gguf"])
_case("diff", "missing", ["diff", "{tmp}/missing", "{repo}"])
_case("diff", "toml", ["diff", "{repo}", "{toml}"])
_case("diff", "schema", ["diff", "{repo}", "{schema}"])
_case("diff", "unknown", ["diff", "nosuchrev", "{repo}"])
_case("explain", "unknown", ["explain", "nosuchterm"])
_case("init", "missing", ["init", "{tmp}/afile"])  # a file where the folder goes

#: The commands whose --format takes json: each case is run with --format json too.
FORMAT_JSON = ("audit", "diff", "sweep")


def make_roots(tmp: Path) -> dict[str, Path]:
    """The roots the cases run under, made in ``tmp``, with the files they name there (``bad.gguf``, ``bad.json``,
    ``afile``)."""
    roots = {"repo": REPO, "gone": tmp / "gone"}
    for kind in ("toml", "schema"):
        root = copy_root(tmp / kind)
        for rel in BROKEN:
            path = root / rel
            path.write_text("x = = 1\n" if kind == "toml" else "bogus_key = 1\n" + path.read_text(encoding="utf-8"),
                            encoding="utf-8")
        roots[kind] = root
    (tmp / "bad.gguf").write_bytes(b"NOTAGGUF" + bytes(64))
    (tmp / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp / "afile").write_text("", encoding="utf-8")
    return roots


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_roots(tmp_path_factory.mktemp("roots"))


def _run(args: list[str], root: Path) -> Result:
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), f"traceback: {result.exception!r}"
    return result


def _one_document(result: Result, status: int) -> Any:
    """Check a failed run under --json: the exit status, stderr's lines (each ``passprice: error:``, or one
    ``refused:`` line for exit 1, after any warnings), and stdout one JSON document; the document."""
    assert result.exit_code == status, result.output
    lines = [line for line in result.stderr.splitlines() if not line.startswith("passprice: warning: ")]
    assert lines, result.stderr
    document = json.loads(result.stdout)
    if status == 1:
        assert lines[-1].startswith("passprice: refused: "), lines
    else:
        assert all(line.startswith("passprice: error: ") for line in lines), lines
    if isinstance(document, dict) and "error" in document:
        assert document == {"error": {"status": 2, "problems": document["error"]["problems"]}}
        assert len(document["error"]["problems"]) == len(lines)
        for problem, line in zip(document["error"]["problems"], lines, strict=True):
            assert line.endswith(problem[-40:]) or "characters left out" in line, (problem, line)
    return document


_IDS = [f"{c[0]}-{c[1]}" for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_every_bad_input_under_json_prints_one_document(
    case: tuple[str, str, list[str], str, int], roots: dict[str, Path], tmp_path: Path
) -> None:
    command, kind, args, root_kind, status = case
    root = copy_root(tmp_path / "copy") if root_kind == "copy" else roots[root_kind]
    shutil.copy(roots["toml"].parent.parent / "bad.gguf", tmp_path / "bad.gguf")
    shutil.copy(roots["toml"].parent.parent / "bad.json", tmp_path / "bad.json")
    (tmp_path / "afile").write_text("", encoding="utf-8")
    given = {"{tmp}": str(tmp_path), "{repo}": str(REPO), "{toml}": str(roots["toml"]),
             "{schema}": str(roots["schema"])}
    words = []
    for word in args:
        for key, value in given.items():
            word = word.replace(key, value)
        words.append(word)
    hows = [["--json"], ["--format", "json"]] if command in FORMAT_JSON else [["--json"]]
    for how in hows:
        result = _run([*words, *how], root)
        document = _one_document(result, status)
        if command not in ("check", "diff", "sources", "sweep") or kind not in ("toml", "schema", "refusal"):
            assert result.stderr.count("passprice: ") == 1, result.stderr  # one file is bad: one line
        if status == 1 and command not in ("sweep", "speculate", "compare"):
            assert isinstance(document, dict) and "refusal" in document, document
        if status == 1 and command == "sweep":  # every row refused: the whole array, then "refused:" (exit 1)
            assert isinstance(document, list) and document and all("refusal" in row for row in document)
        if kind == "unknown" and command not in ("diff",):
            assert "error" in document or "problems" in document, document
    # without them: the same status; nothing on stdout where the document was the error document
    plain = _run(words, root)
    assert plain.exit_code == status
    if isinstance(document, dict) and "error" in document:
        assert plain.stdout == "", plain.stdout


def test_every_command_with_json_has_a_case() -> None:
    def walk(group: object, prefix: tuple[str, ...]) -> set[str]:
        found: set[str] = set()
        for name, command in getattr(group, "commands", {}).items():
            if hasattr(command, "commands"):
                found |= walk(command, (*prefix, name))
            elif any("--json" in p.opts for p in command.params):
                found.add(" ".join((*prefix, name)))
        return found

    assert {c[0] for c in CASES} == walk(cli, ())
    assert len(CASES) == 112  # 30 commands; the 14 of audit, diff and sweep run with --format json too


def test_json_asked_reads_format_json() -> None:
    asked = [
        (["audit", "x", "--format", "json"], True),
        (["audit", "x", "--format=json"], True),
        (["diff", "--format", "json", "a"], True),
        (["sweep", "x", "--format", "csv"], False),
        (["audit", "x", "--format", "json", "--format", "text"], False),  # the last one given, as click reads it
        (["audit", "x", "--format", "text", "--format", "json"], True),
        (["audit", "--stack", "--format", "json"], False),  # --stack's value is "--format"; json an argument
        (["audit", "--", "--format", "json"], False),
        (["price", "x", "--format", "json"], False),  # price takes no --format: click's own error, no document
        (["sweep", "x", "--format"], False),  # no value: click's error, and no json asked
    ]
    for args, wanted in asked:
        assert json_asked(args, _options_of) is wanted, args


# --- sweep --json failing after rows were streamed ---------------------------------------------------------------


def _poison(monkeypatch: pytest.MonkeyPatch, where: set[tuple[str, str]]) -> None:
    """Give the first priced row of each (serving, card) in ``where`` a memory_s that is not finite, in every process
    (the forked workers inherit it), as tests/test_sweep_jobs.py does."""
    from passprice.sweep import Sweeper

    made = Sweeper._refused_under_stack

    def poisoned(self: Sweeper, segment: Any) -> Any:
        key = (segment.common["serving"], segment.common["card"])
        rows = np.flatnonzero(segment.status == 0)
        if key in where and segment.priced is not None and len(rows):
            where.discard(key)
            segment.priced["memory_s"][rows[0]] = np.inf
        return made(self, segment)

    monkeypatch.setattr(Sweeper, "_refused_under_stack", poisoned)


GRID = ["gemma3-270m-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "--cards", "h200_sxm_141gb,sn40l,rtx_3080",
        "--positions", "0,2048", "--batches", "1,2,64"]
LATE = ("qwen35-27b-h200-mtp", "h200_sxm_141gb")  # the last serving's: in the last worker's part
INF = ("sweep: qwen35-27b-h200-mtp on h200_sxm_141gb, batch 1: memory_s is inf: a fact, element size or option is "
       "out of range (the pass has no finite price)")


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
@pytest.mark.parametrize("how", [["--json"], ["--format", "json"]], ids=["json", "format-json"])
def test_a_sweep_failing_after_its_rows_ends_the_array_with_the_error(
    jobs: str, how: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _run(["sweep", *GRID, *how, "--jobs", "1"], REPO)
    assert whole.exit_code == 0
    rows = json.loads(whole.stdout)
    assert len(rows) == 54  # 3 servings x 3 cards x 2 positions x 3 batches
    with monkeypatch.context() as patch:
        _poison(patch, {LATE})
        result = _run(["sweep", *GRID, *how, "--jobs", jobs], REPO)
    assert result.exit_code == 2
    assert result.stderr == f"passprice: error: {INF}\n"
    document = json.loads(result.stdout)  # before: 36 rows and no "]": not JSON
    # the rows before the failing one in grid order (2 servings x 3 cards x 2 positions x 3 batches), then the error
    assert document[:-1] == rows[:36]
    assert document[-1] == {"error": {"status": 2, "problems": [INF]}}
    assert result.stdout.endswith('},\n{"error": {"status": 2, "problems": ["' + INF + '"]}}\n]\n')


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sweep_failing_at_its_first_row_prints_the_error_document(
    jobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        _poison(patch, {("gemma3-270m-h100", "h200_sxm_141gb")})
        result = _run(["sweep", *GRID, "--json", "--jobs", jobs], REPO)
    assert result.exit_code == 2
    line = result.stderr.removeprefix("passprice: error: ").rstrip("\n")
    assert line.startswith("sweep: gemma3-270m-h100 on h200_sxm_141gb, batch 1: memory_s is inf")
    assert json.loads(result.stdout) == {"error": {"status": 2, "problems": [line]}}  # before: stdout empty


def test_the_console_script_ends_the_array_too(tmp_path: Path) -> None:
    # stdout a real file: the workers' parts copied in the kernel (files.append_file), the error after them
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import numpy as np\n"
        "from passprice.sweep import Sweeper\n"
        "made = Sweeper._refused_under_stack\n"
        f"where = {{{LATE!r}}}\n"
        "def poisoned(self, segment):\n"
        "    key = (segment.common['serving'], segment.common['card'])\n"
        "    rows = np.flatnonzero(segment.status == 0)\n"
        "    if key in where and segment.priced is not None and len(rows):\n"
        "        where.discard(key)\n"
        "        segment.priced['memory_s'][rows[0]] = np.inf\n"
        "    return made(self, segment)\n"
        "Sweeper._refused_under_stack = poisoned\n",
        encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "PYTHONPATH"))}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    env.update(PYTHONPATH=str(site), PASSPRICE_NO_MEMO="1")
    out = tmp_path / "out.json"
    with out.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(REPO), "sweep", *GRID, "--json",
                               "--jobs", "3"], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                              env=env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"passprice: error: {INF}\n")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert len(document) == 37 and document[-1] == {"error": {"status": 2, "problems": [INF]}}


def test_a_worker_killed_leaves_the_whole_array(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    from passprice import sweepjobs

    whole = _run(["sweep", *GRID, "--json", "--jobs", "1"], REPO)
    start = sweepjobs._start

    def killed(*args: Any, **kwargs: Any) -> Any:
        worker = start(*args, **kwargs)
        os.kill(worker.pid, signal.SIGKILL)
        return worker

    monkeypatch.setattr(sweepjobs, "_start", killed)
    result = _run(["sweep", *GRID, "--json", "--jobs", "2"], REPO)
    assert result.exit_code == 0 and result.stdout == whole.stdout  # its part priced here again


def test_streamed_array_closing() -> None:
    from passprice.jsonerror import StreamedArray

    refusal = {"refusal": "LockFloor", "lock": "x"}
    nothing = StreamedArray()
    assert nothing.closing(refusal) == '{\n  "refusal": "LockFloor",\n  "lock": "x"\n}\n'
    rows = StreamedArray()
    rows.wrote(b'[\n{"a": 1}')
    rows.wrote(b',\n{"a": 2}')
    text = '[\n{"a": 1},\n{"a": 2}' + (rows.closing(refusal) or "")
    assert json.loads(text) == [{"a": 1}, {"a": 2}, refusal]
    part = StreamedArray()
    part.wrote(b'[\n{"a": 1}')
    part.wrote(b'2}', whole=False)  # the tail of a part copied in the kernel
    assert part.closing({"x": 1}) == ',\n{"x": 1}\n]\n'
    part.wrote(b"\n]\n")
    assert part.closing({"x": 1}) is None  # closed: nothing may follow
    empty = StreamedArray()
    empty.wrote(b"[\n]\n")
    assert empty.closed and empty.closing({"x": 1}) is None


# --- a measurement file that does not read, under every command reading measurements (session 30's note) ----------

MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
READERS = [["compare", S, "--stack", STACK], ["calibrate", "--stack", STACK], ["validate", "--stack", STACK],
           ["validate"], ["price", S, "--stack", STACK], ["best", S, "--stack", STACK],
           ["audit", S, "--stack", STACK], ["sweep", S, "--stack", STACK, "--batches", "1"], ["check"]]


@pytest.fixture(scope="module")
def measured_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for kind, text in (("toml", "x = = 1\n"), ("schema", None), ("unreadable", None)):
        root = copy_root(tmp_path_factory.mktemp(kind))
        path = root / MEASURED
        if text is not None:
            path.write_text(text, encoding="utf-8")
        elif kind == "schema":
            path.write_text(path.read_text(encoding="utf-8").replace("batch = 1\n", 'batch = "one"\n', 1),
                            encoding="utf-8")
        made[kind] = root
    return made


@pytest.mark.parametrize("kind", ["toml", "schema", "unreadable"])
@pytest.mark.parametrize("args", READERS, ids=[" ".join(a[:2]) for a in READERS])
def test_a_measurement_file_that_does_not_read_under_json(
    kind: str, args: list[str], measured_roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "unreadable":  # permission denied (the tests may run as root, whom chmod 000 does not stop)
        import errno

        opened = os.open

        def denied(path: Any, *a: Any, **k: Any) -> int:
            if str(path).endswith(MEASURED):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return opened(path, *a, **k)

        monkeypatch.setattr(os, "open", denied)
    says = {"toml": "not valid TOML", "schema": "run.0.batch: 'one' is not of type 'integer'",
            "unreadable": "cannot read: Permission denied"}[kind]
    result = _run([*args, "--json"], measured_roots[kind])
    document = _one_document(result, 2)
    problems = document["error"]["problems"] if "error" in document else document["problems"]
    assert any(MEASURED in p and says in p for p in problems), problems
    lines = [line for line in result.stderr.splitlines() if line.startswith("passprice: error: ")]
    assert len(lines) == 1 and MEASURED in lines[0] and says in lines[0], result.stderr
