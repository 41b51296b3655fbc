"""Leftovers of issue 13, round 26b: each reproduced first, kept as a test of exit status and exact text.

- (1) A bound set badly in the environment (``PASSPRICE_MAX_FILE_BYTES=abc``) is no file's problem: ``cards --json``
  printed ``{"cards": []}`` and exited 2, so a program reading standard output saw "no cards" (7 command and
  variable pairs of 132 printed on stdout and exited 2: cards, servings, sources, check, validate under
  PASSPRICE_MAX_FILE_BYTES; check and diff under PASSPRICE_MAX_FIT_RUNS). Now refused before any command runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice import calibrate, gguf_header, gitread, schema, settings, validate
from test_diff import commit_all
from test_slip_34 import H200, branch, h200_copy, registry, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

FILE_BYTES = "is not a number of bytes (a whole number from 1 to 67108864)"


@pytest.mark.parametrize("value", ["abc", "-1", "1e999"])
@pytest.mark.parametrize("command", [("cards", "--json"), ("servings", "--json"), ("sources", "--json"),
                                     ("check", "--json"), ("validate", "--json")])
def test_1_a_bad_file_cap_prints_no_listing_on_stdout(monkeypatch: pytest.MonkeyPatch, value: str,
                                                     command: tuple[str, ...]) -> None:
    # Before: `cards --json` printed {"cards": []} (and check --json its report, "ok": false), exit 2. Then nothing
    # on stdout; since session 30 the one error document (no listing, no report).
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", value)
    result = invoke(*command)
    assert result.exit_code == 2
    said = f"PASSPRICE_MAX_FILE_BYTES: {value!r} {FILE_BYTES}"
    assert json.loads(result.stdout) == _error(said)
    assert result.stderr == f"passprice: error: {said}\n"


def _error(*problems: str) -> dict[str, object]:
    """The one JSON document a failed ``--json`` command prints since session 30."""
    return {"error": {"status": 2, "problems": list(problems)}}


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
    assert result.exit_code == 2
    assert json.loads(result.stdout) == _error(BAD[variable])  # session 30: the error document, no report
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


# (2) An added derived fact citing a source the same change adds: a changed one gets "… records nothing independent of
# itself" (slip round 38); an added one got nothing of it (walkthrough 30: a new card's bandwidth derived from a source
# added in the same pull request read nothing to verify of that).
SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "H200 refresh note"
kind = "datasheet"
publisher = "NVIDIA"
date = "2025"
url = "https://example.com/h200-refresh.pdf"
retrieved = "2025-01-01"
read = "Read in full."
"""

DERIVED = ('[memory.bandwidth]\nvalue = 4.8\nunit = "TB/s"\nprovenance = "derived"\nsource = "h200-refresh-note"\n'
           'locator = "page 1: six HBM3e stacks, 0.8 TB/s a stack"\nderivation.formula = "stacks * per_stack"\n'
           'derivation.inputs.stacks = { value = 6, unit = "1", locator = "page 1: six HBM3e stacks" }\n'
           'derivation.inputs.per_stack = { value = 0.8, unit = "TB/s", locator = "page 1: 0.8 TB/s a stack" }\n')
# the H200's bandwidth cites its product page's row since cite102 (tests/test_cite102.py)
PUBLISHED = ('[memory.bandwidth]\nvalue = 4.8\nunit = "TB/s"\nprovenance = "published"\n'
             'source = "nvidia-h200-product-page"\n'
             "locator = \"Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL "
             "figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\"\n")


FRESH = ("its source h200-refresh-note is added by this same change: the registry records nothing of it from before, "
         "so the change records nothing independent of itself for 4.8 TB/s: read the document itself")


def test_2_an_added_derived_fact_under_a_source_the_change_adds(registry: Path) -> None:
    # Before: "17 facts added in 1 new file; 1 source added; no lock affected; …", to_verify [], exit 0.
    path = branch(registry, "added-fresh")
    (path / "sources" / "h200-refresh-note.toml").write_text(SOURCE, encoding="utf-8")
    # the copy's own [card] note: a copied note is check's warning (slip55), which this test is not about
    h200_copy(path, (PUBLISHED, DERIVED), ('note = "Same GH100 die', 'note = "A copy of the H200: same GH100 die'))
    commit_all(path, "a copy whose bandwidth is derived from a new source")
    status, text, out = review(path)
    assert status == 0, text  # a question for the reviewer, not a failure: no lock rests on the new card
    # left30b: the copy cites a source of its own, so each of its 15 other figures still citing a place the H200's
    # file cites is asked too (was "1 to verify in its source", the others None); host.capacity, assumed, is not.
    # 9 warnings of check on HEAD, as check prints them: the measured facts of the copy and of the card it copies
    # citing one place, and the retrieved "unknown" line (tests/test_fix154.py)
    assert ("17 facts added in 1 new file, 16 to verify in their sources (15 copied citations: each cites what another "
            "card's fact cites); 1 source added; no lock affected; 9 warnings of check on HEAD; 10 locks unaffected"
            ) in text, text.splitlines()[1]
    assert f"                     to verify: {FRESH}\n" in text
    assert len(out["to_verify"]) == 16 and "h200_copy:memory.bandwidth" in out["to_verify"]
    (bandwidth,) = [f for f in out["files"][0]["facts"] if f["path"] == "memory.bandwidth"]
    assert (bandwidth["change"], bandwidth["to_verify"]) == ("added", FRESH)
    others = {f["path"]: f["to_verify"] for f in out["files"][0]["facts"] if f["path"] != "memory.bandwidth"}
    assert others.pop("host.capacity") is None and len(others) == 15
    assert all("cites the same place, another card's" in said for said in others.values())
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path)
    assert markdown.exit_code == 0
    assert FRESH in markdown.stdout and "h200_copy" in markdown.stdout


def test_2_an_added_fact_under_a_source_base_held_is_not_asked_so(registry: Path) -> None:
    # The same copy, its bandwidth derived and citing the H200 datasheet, which main registers: nothing of the kind.
    path = branch(registry, "added-old-source")
    h200_copy(path, (PUBLISHED, DERIVED.replace('source = "h200-refresh-note"', 'source = "nvidia-h200-datasheet"')))
    commit_all(path, "a copy whose bandwidth is derived from the datasheet")
    _, text, out = review(path)
    assert "records nothing independent" not in text
    assert "h200_copy:memory.bandwidth" not in out["to_verify"]


# (3) A card NOT marked hypothetical whose title says so (`RTX 4090 (Hypothetical)`) read as a made-up card in every
# table while it is priced, locked and reviewed as a real one. Not made a `check` problem (exit 2): WS1 made real by
# removing its mark (test_slip_42::test_1_a_hypothetical_card_made_real_is_drift, exit 1 with --frozen, and
# test_slip_38's E1, review exit 0) keeps its title "WS1 (hypothetical weight-streaming card)" and would turn from
# drift into bad input. Instead check warns (exit unchanged), the title is shown as what it is priced as, and the
# review asks it.
RTX = "NVIDIA H200 SXM 141GB (Hypothetical)"
WARNED = (f"card.name: {RTX!r} says hypothetical, but the card is not marked hypothetical = true: it is priced, locked "
          "and reviewed as a real card; mark it hypothetical, or retitle it")


def retitled_h200(root: Path) -> None:
    card = root / H200
    text = card.read_text(encoding="utf-8")
    assert 'name = "NVIDIA H200 SXM 141GB"\n' in text
    card.write_text(text.replace('name = "NVIDIA H200 SXM 141GB"\n', f'name = "{RTX}"\n', 1), encoding="utf-8")


def test_3_check_warns_and_tables_show_what_it_is_priced_as(tmp_path: Path) -> None:
    # Before: check "0 problems", no warning; `cards` showed "NVIDIA H200 SXM 141GB (Hypothetical)" bare.
    root = copy_root(tmp_path)
    retitled_h200(root)
    plain = invoke("check", root=root)
    assert plain.exit_code == 0, plain.output
    assert f"  warning: facts/cards/h200_sxm_141gb.toml: {WARNED}" in plain.stdout.splitlines()
    out = json.loads(invoke("check", "--json", root=root).stdout)
    assert f"facts/cards/h200_sxm_141gb.toml: {WARNED}" in out["warnings"]
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1  # the retitle is the four H200 locks' drift, as any retitle is (slip 42)
    listing = invoke("cards", root=root)
    assert listing.exit_code == 0
    (row,) = [line for line in listing.stdout.splitlines() if line.startswith("h200_sxm_141gb ")]
    assert f"{RTX}, not marked hypothetical" in row
    (listed,) = [c for c in json.loads(invoke("cards", "--json", root=root).stdout)["cards"]
                 if c["name"] == "h200_sxm_141gb"]
    assert (listed["title"], listed["hypothetical"]) == (RTX, False)  # as written, and what it is priced as
    price = invoke("price", "r1-qwen7b-h200", root=root)
    assert f"{RTX}, not marked hypothetical" in price.stdout


def test_3_a_marked_card_or_one_whose_title_says_nothing_is_not_warned(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / H200
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace('name = "NVIDIA H200 SXM 141GB"\n', 'name = "NVIDIA H200 Nonhypothetical"\n', 1),
                    encoding="utf-8")
    assert "says hypothetical" not in invoke("check", root=root).stdout  # WS1 is marked; the word inside another
    # word is no claim


def test_3_the_review_asks_it(registry: Path) -> None:
    # Before: "[card] changed: name", "1 card retitled or made hypothetical, to verify" only (of the four locks).
    path = branch(registry, "titled-hypothetical")
    retitled_h200(path)
    commit_all(path, "the H200 titled hypothetical, not marked")
    status, text, out = review(path)
    assert status == 0, text
    said = ("card h200_sxm_141gb's title 'NVIDIA H200 SXM 141GB (Hypothetical)' says hypothetical, but it is not "
            "marked hypothetical = true: its prices read and lock as a real card's under a title that says it is "
            "made up; mark it hypothetical, or retitle it")
    assert "1 card titled hypothetical and not marked so, to verify" in text
    assert f"  to verify: {said}" in text.splitlines()
    assert out["title_contradicts_mark"] == {H200: said}
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path)
    assert f"⚠️ **to verify**: {said}" in markdown.stdout
    # marked as well: nothing asked of the title
    path = branch(registry, "titled-and-marked")
    retitled_h200(path)
    card = path / H200
    card.write_text(card.read_text().replace('variant = "SXM5, up to 700 W, HBM3e"\n',
                                             'variant = "SXM5, up to 700 W, HBM3e"\nhypothetical = true\n', 1))
    commit_all(path, "the H200 titled and marked hypothetical")
    _, text, out = review(path)
    assert out["title_contradicts_mark"] == {}


def test_3_an_added_card_so_titled_is_asked(registry: Path) -> None:
    path = branch(registry, "added-titled")
    h200_copy(path, ('name = "NVIDIA H200 SXM 141GB, a copy"', 'name = "RTX 4090 (Hypothetical)"'))
    commit_all(path, "a copy titled hypothetical")
    status, text, out = review(path)
    assert status == 0, text
    assert list(out["title_contradicts_mark"]) == ["facts/cards/h200_copy.toml"]
    assert "card h200_copy's title 'RTX 4090 (Hypothetical)' says hypothetical" in text
