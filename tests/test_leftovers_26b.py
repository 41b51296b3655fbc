"""Leftovers of issue 13, round 26b: each reproduced first, kept as a test of exit status and exact text.

- (1) A bound set badly in the environment (``PASSPRICE_MAX_FILE_BYTES=abc``) is no file's problem: ``cards --json``
  printed ``{"cards": []}`` and exited 2, so a program reading standard output saw "no cards" (7 command and
  variable pairs of 132 printed on stdout and exited 2: cards, servings, sources, check, validate under
  PASSPRICE_MAX_FILE_BYTES; check and diff under PASSPRICE_MAX_FIT_RUNS). Now refused before any command runs.
"""

from __future__ import annotations

import pytest

from cli_helpers import invoke
from passprice import calibrate, gguf_header, gitread, schema, settings, validate

FILE_BYTES = "is not a number of bytes (a whole number from 1 to 67108864)"


@pytest.mark.parametrize("value", ["abc", "-1", "1e999"])
@pytest.mark.parametrize("command", [("cards", "--json"), ("servings", "--json"), ("sources", "--json"),
                                     ("check", "--json"), ("validate", "--json")])
def test_1_a_bad_file_cap_prints_nothing_on_stdout(monkeypatch: pytest.MonkeyPatch, value: str,
                                                  command: tuple[str, ...]) -> None:
    # Before: `cards --json` printed {"cards": []} (and check --json its report, "ok": false), exit 2.
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", value)
    result = invoke(*command)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"passprice: error: PASSPRICE_MAX_FILE_BYTES: {value!r} {FILE_BYTES}\n"


BAD = {
    "PASSPRICE_MAX_FILE_BYTES": f"PASSPRICE_MAX_FILE_BYTES: 'x' {FILE_BYTES}",
    "PASSPRICE_MAX_HEADER_BYTES": "PASSPRICE_MAX_HEADER_BYTES: 'x' is not a number of bytes (a whole number, at "
                                  "least 24)",
    "PASSPRICE_MAX_FIT_RUNS": "PASSPRICE_MAX_FIT_RUNS: 'x' is not a number of runs (a whole number from 1 to 10^9)",
    "PASSPRICE_MAX_VALIDATE_RUNS": "PASSPRICE_MAX_VALIDATE_RUNS: 'x' is not a number of runs (a whole number from 1 "
                                   "to 10^9)",
    "PASSPRICE_MAX_SIDE_FILES": "PASSPRICE_MAX_SIDE_FILES: 'x' is not a number of files (a whole number from 1 to "
                                "10^9)",
    "PASSPRICE_MAX_SIDE_FACT_FILES": "PASSPRICE_MAX_SIDE_FACT_FILES: 'x' is not a number of files (a whole number "
                                     "from 1 to 10^9)",
}


def test_1_the_variables_checked_are_those_the_readers_read() -> None:
    assert [v for v, _ in settings.VARIABLES] == [
        schema.FILE_BYTES_VARIABLE, gguf_header.CAP_VARIABLE, calibrate.RUNS_VARIABLE, validate.RUNS_VARIABLE,
        gitread.FILES_VARIABLE, gitread.FACT_FILES_VARIABLE]
    assert list(BAD) == [v for v, _ in settings.VARIABLES]


@pytest.mark.parametrize("variable", list(BAD))
def test_1_each_bad_variable_is_one_line_and_no_output(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    # Before, under PASSPRICE_MAX_FIT_RUNS=x: check --json printed its report and named the stack file
    # ("facts/stacks/llamacpp-cuda-2405.toml: overhead.pass, …"), exit 2.
    monkeypatch.setenv(variable, "x")
    result = invoke("check", "--json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"passprice: error: {BAD[variable]}\n"


def test_1_two_bad_variables_two_lines_and_a_command_that_reads_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    # A bound set badly is refused by every command (`explain` exited 0 before): the setting is wrong whichever
    # command meets it first. Empty is unset, as each reader takes it.
    monkeypatch.setenv("PASSPRICE_MAX_SIDE_FILES", "x")
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "x")
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", "")
    result = invoke("explain", "array")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"passprice: error: {BAD['PASSPRICE_MAX_FILE_BYTES']}\n"
                             f"passprice: error: {BAD['PASSPRICE_MAX_SIDE_FILES']}\n")
    monkeypatch.delenv("PASSPRICE_MAX_SIDE_FILES")
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", "")
    assert invoke("explain", "array").exit_code == 0
