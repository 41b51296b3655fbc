"""Session 30, issue 13: with ``--json`` every command prints exactly one JSON document on stdout, on bad input and
usage errors too: ``{"error": {"status": 2, "problems": [LINE, ...]}}`` (:mod:`passprice.jsonerror`), each problem
the ``passprice: error:`` line stderr holds, without that prefix; exit 2 as before. Before, 29 of the 30 commands
printed nothing on stdout for the inputs below (``compare`` printed its listing's shape only when no card read).
tests/test_leftovers_28b.py runs every command again with a bad file of each kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.cli.app import _options_of, cli
from passprice.jsonerror import error_document, json_asked

NOT_SERVING = "serving 'nosuch': not found in registry/servings"
NOT_CARD = "card 'nosuch': not found in facts/cards"

#: Every command with --json, a bad input each, and what its one problem line says. ``{tmp}`` is the test's own
#: folder (holding ``afile``, a file); ``@copy`` runs under a private copy of the registry (a command that writes).
CASES = [
    (("audit", "nosuch"), NOT_SERVING),
    (("best", "nosuch"), NOT_SERVING),
    (("calibrate", "--stack", "nosuch"), "stack 'nosuch': not found in facts/stacks"),
    (("cards", "--nosuch"), "No such option '--nosuch'."),
    (("check", "--nosuch"), "No such option '--nosuch'."),
    (("checkpoints", "--nosuch"), "No such option '--nosuch'."),
    (("compare", "nosuch"), NOT_SERVING),
    (("diff", "--repository-url", "https://example.invalid/r"), "give --repository-url and --ref together"),
    (("explain", "nosuchterm"), "explain: 'nosuchterm' is not a term passprice defines"),
    (("fact", "recompute", "nosuch"), NOT_CARD),
    (("fact", "set", "nosuch", "memory.bandwidth"),
     "Missing options '--value', '--unit', '--provenance', '--source', '--locator'."),
    (("fact", "show", "nosuch"), NOT_CARD),
    (("facts", "nosuch"), NOT_CARD),
    (("header", "{tmp}/missing.gguf"), "/missing.gguf: no such file"),
    (("@copy", "import", "{tmp}/missing.gguf"), "/missing.gguf: no such file"),
    (("init", "{tmp}/afile"), "/afile: is a regular file; give a folder for the new registry"),
    (("kv", "nosuch"), "checkpoint 'nosuch': not found in registry/checkpoints"),
    (("@copy", "lock", "nosuch"), NOT_SERVING),
    (("max-batch", "nosuch"), NOT_SERVING),
    (("@copy", "new-serving", "x", "nosuch"), NOT_SERVING),
    (("price", "r1-qwen7b-h200", "--batch", "abc"), "Invalid value for '--batch': 'abc' is not a whole number"),
    (("reproduce", "nosuch"), "lock 'nosuch': no such file, and not in "),
    (("roofline", "nosuch"), NOT_CARD),
    (("servings", "--nosuch"), "No such option '--nosuch'."),
    (("simulate", "r1-qwen7b-h200"), "give one of --trace FILE.jsonl and --synthetic N"),
    (("sources", "--nosuch"), "No such option '--nosuch'."),
    (("speculate", "nosuch"), NOT_SERVING),
    (("sweep", "nosuch"), NOT_SERVING),
    (("synth", "{tmp}/config.json"), "give -o FILE.gguf, --import NAME, or both"),
    (("validate", "--stack", "nosuch"), "stack 'nosuch': not found in facts/stacks"),
]


def _commands_with_json() -> set[tuple[str, ...]]:
    def walk(group: object, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        for name, command in getattr(group, "commands", {}).items():
            if hasattr(command, "commands"):
                found |= walk(command, (*prefix, name))
            elif any("--json" in p.opts for p in command.params):
                found.add((*prefix, name))
        return found

    return walk(cli, ())


def test_every_command_with_json_has_a_case() -> None:
    listed = set()
    for args, _ in CASES:
        words = [w for w in args if not w.startswith("@")]
        listed.add(tuple(words[:2]) if words[0] == "fact" else (words[0],))
    assert listed == _commands_with_json()
    assert len(listed) == 30


def _error_of(result: object) -> str:
    """The one stderr line's problem, after checking the run: exit 2, one ``passprice: error:`` line on stderr, and
    stdout exactly the error document naming that problem."""
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = result.stderr.splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("passprice: error: "), lines
    problem = lines[0].removeprefix("passprice: error: ")
    document = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert document == {"error": {"status": 2, "problems": [problem]}}
    return problem


@pytest.mark.parametrize("case", CASES, ids=[" ".join(a for a in c[0] if not a.startswith("@"))[:40] for c in CASES])
def test_a_bad_input_under_json_prints_one_error_document(tmp_path: Path, case: tuple[tuple[str, ...], str]) -> None:
    args, says = case
    (tmp_path / "afile").write_text("", encoding="utf-8")
    root = REPO
    if args[0] == "@copy":
        root, args = copy_root(tmp_path / "copy"), args[1:]
    words = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = invoke(*words, "--json", root=root)
    assert says in _error_of(result)
    # without --json: the same line, nothing on stdout (unchanged)
    plain = invoke(*words, root=root)
    assert plain.exit_code == 2 and plain.stdout == "" and plain.stderr == result.stderr


def test_json_before_the_bad_option_or_after_it_is_the_same() -> None:
    before = invoke("sources", "--json", "--nosuch")
    after = invoke("sources", "--nosuch", "--json")
    assert _error_of(before) == _error_of(after) == "No such option '--nosuch'. (see 'cli sources --help')"


def test_a_bad_option_of_passprice_itself_before_a_json_command(tmp_path: Path) -> None:
    result = invoke("--bogus", "cards", "--json")
    assert _error_of(result) == "No such option '--bogus'. (see 'cli --help')"  # in-process: click's name "cli"


def test_a_root_that_is_no_registry(tmp_path: Path) -> None:
    result = invoke("cards", "--json", root=tmp_path)
    assert _error_of(result) == f"{tmp_path}: not a passprice root (it needs facts/ and registry/ folders)"


def test_a_bound_set_badly_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # left26b: nothing on stdout (cards --json had printed {"cards": []}); now the error document, no listing
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", "abc")
    result = invoke("cards", "--json")
    assert _error_of(result) == ("PASSPRICE_MAX_HEADER_BYTES: 'abc' is not a number of bytes (a whole number, at "
                                 "least 24)")


def test_json_as_a_value_or_after_double_dash_asks_for_no_document() -> None:
    # `--card --json`: click reads --json as the card's name; `-- --json`: an argument. No JSON was asked.
    for args, says in ((("price", "--card", "--json"), "give a SERVING, or both --checkpoint and --card"),
                       (("explain", "--", "--json"), "explain: '--json' is not a term passprice defines")):
        result = invoke(*args)
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert result.stderr.count("\n") == 1 and says in result.stderr


def test_a_refusal_keeps_its_own_document() -> None:
    # exit 1 and {"refusal": NAME, ...}, as before: no error document beside it
    result = invoke("price", "r1-qwen7b-h200", "--batch", "100000", "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["refusal"] == "NotResident"


def test_the_console_script_prints_the_document_too(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(REPO), "best", "nosuch", "--json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    problem = done.stderr.removeprefix("passprice: error: ").rstrip("\n")
    assert problem.startswith(NOT_SERVING)
    assert json.loads(done.stdout) == {"error": {"status": 2, "problems": [problem]}}


def test_json_asked_reads_the_command_line() -> None:
    asked = [
        (["price", "x", "--json"], True),
        (["--root", "price", "cards", "--json"], True),  # --root's value is the folder "price"; the command: cards
        (["--no-cache", "fact", "show", "h200", "--json"], True),
        (["fact", "--json"], False),  # the group takes no --json
        (["price", "--card", "--json"], False),  # --card's value
        (["explain", "--", "--json"], False),
        (["nosuch", "--json"], False),  # no such command: click's own error, no document
        (["price", "x", "--json=1"], False),
        ([], False),
    ]
    for args, wanted in asked:
        assert json_asked(args, _options_of) is wanted, args


def test_error_document_lists_each_problem_once_in_order() -> None:
    assert error_document(["b", "a", "b"]) == {"error": {"status": 2, "problems": ["b", "a"]}}
