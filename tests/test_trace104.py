"""No session label left where a user reads a citation (issue 13, the audit use; trace104).

tests/test_trace96.py took the session labels (cite70, left31, moe45 …: names of internal work rounds nobody outside
can look up) out of source records' read/note and card notes. Left were:

1. facts/cards/rtx_a6000.toml: four locators framed the card review's old quote with "before cite73"; now the commit
   that changed them and the test that checks them ("before commit 9aa71f49, tests/test_cite73.py"). The quoted
   text and the values are unchanged (test_1_*).
2. Six source records' read said "(session 33, …)" / "(session 34, …)" beside the test file; the examples config
   of DeepSeek-V2-Lite "(session 34, moe48)"; facts/cards/README.md "(cite73)" and "(cite74)"; the workflow
   ``init`` writes (and the project's own) "(left31)". Every string of every record, lock, example and template
   is held free of labels here, the schemas' descriptions too ("a lock written before session 27", "0001-01-01 read
   until session 29": now the commit, and tests/test_leftovers_29.py) (test_2_*).
3. The README's prose named sessions ("since session 27", "Session 40 (branch hdr54 …)") and 64 Speed rows' cells
   "session 44's whole `--quick` run": now a commit, a test file or a section of docs/PERFORMANCE.md ("round
   hdr54", each a heading there) (test_3_*). The git history a transcript shows (commit subjects) is left as git
   prints it. docs/DESIGN.md's round labels likewise, and since tests/test_trace112.py its 87 "session N" too: each
   now the test file that checks the change, the docs/PERFORMANCE.md round, the commit, or nothing (test_3_design_*).
4. What a user reads of a citation (``audit``, ``audit --source``, ``facts``, ``sources``) names no label
   (test_4_*).
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke

#: A session's label standing alone (cite73, left31, hdr54, speed50 …, "session 34"): not a file's name
#: (tests/test_cite73.py, sources/excerpts/cite70-excerpt.txt, test_cite66).
LABEL = re.compile(
    r"(?<![\w/.-])(?:cite|left|walk|attack|scale|slip|digest|trace|moe|newcomer|hostile|hdr|head|use|arch|check|cold"
    r"|diff|flaky|git|perf|pin|racy|side|speed|suite|sweep|window|lead|json)\d{2,3}[a-z]?(?![\w-])(?!\.py|\.txt)"
    r"|\b[Ss]ession \d")

#: docs/PERFORMANCE.md's rounds, each a heading ``## Round NAME (…``: "round NAME" names that section.
ROUNDS = frozenset(re.findall(r"^## Round (\S+) \(", (REPO / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8"),
                              re.M))


def labels(text: str) -> list[str]:
    """The labels in ``text``, less a round of docs/PERFORMANCE.md named as one ("round hdr54", "Round head39")."""
    out = []
    for m in LABEL.finditer(text):
        before = text[max(0, m.start() - 6):m.start()]
        if before.lower() == "round " and m.group() in ROUNDS:
            continue
        out.append(m.group())
    return out


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def _prose(markdown: str) -> Iterator[tuple[int, str]]:
    # (line number, line) of a Markdown text outside its fenced blocks (a transcript prints what a command prints:
    # git's commit subjects in `fact show --history`)
    fenced = False
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield number, line


# --- 0. the pattern -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "found"), [
    ("the card review's quote read 154.8/309.7 before cite73)", ["cite73"]),
    ("read in a stored copy (session 34, tests/test_moe46.py)", ["session 3"]),
    ("Session 40 (branch hdr54, 2026-12-06)", ["Session 4", "hdr54"]),
    ("read in stored excerpts (tests/test_moe48.py): from", []),
    ("sources/excerpts/cite70-excerpt.txt and test_cite66 checks", []),
    ("(docs/PERFORMANCE.md, round hdr54)", []),  # a heading of that document
    ("round hdr99", ["hdr99"]),  # no such heading
    ("sm90, gfx942, bf16, fp8, int8, Q4_0, base64", []),
])
def test_0_the_pattern_finds_a_label_and_no_file_name(text: str, found: list[str]) -> None:
    assert labels(text) == found


# --- 1. rtx_a6000's locators ----------------------------------------------------------------------------------------


def test_1_the_a6000_locators_name_the_commit_and_the_test_not_the_label() -> None:
    card = tomllib.loads((REPO / "facts" / "cards" / "rtx_a6000.toml").read_text(encoding="utf-8"))
    framed = "the card review's quote read 154.8/309.7 before commit 9aa71f49, tests/test_cite73.py)"
    facts = [card["tensor"][k] for k in ("f16", "bf16")]
    locators = [f["locator"] for f in facts] + [f["derivation"]["inputs"]["dense"]["locator"] for f in facts]
    assert [loc.endswith(framed) for loc in locators] == [True] * 4
    # the source's words and the values as they were
    assert all("154.8 dense (sparse 309.6 in the third-party text;" in loc for loc in locators)
    assert [f["value"] for f in facts] == [77.4, 77.4]
    assert [f["derivation"]["inputs"]["dense"]["value"] for f in facts] == [154.8, 154.8]
    assert (REPO / "tests" / "test_cite73.py").is_file()


def test_1_each_commit_named_is_in_the_history() -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    # rtx_a6000's locators (cite73's), the README's Ctrl-C handler, SIGTERM, the lock's checkpoint pin, the routing
    # decision and the sweep's older figures
    named = ["9aa71f49", "f67ce189", "748e082b", "eeb6d017", "6416001d", "8b869011"]
    found = subprocess.run(["git", "-C", str(REPO), "cat-file", "--batch-check"], input="\n".join(named) + "\n",
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line.split()[1] for line in found] == ["commit"] * len(named), found
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert [c for c in named[1:] if f"{c}" not in readme] == []
    # the schemas' (the checkpoint origin's pin, the stack's runtime and builds pinned, the calendar-date format, the
    # 1900/1990 bounds of a date) and docs/DESIGN.md's merges of rounds without a test file of their name
    schemas = " ".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "schema").glob("*.json")))
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    more = {"eeb6d017": schemas, "8b63161c": schemas, "7450a9fa": schemas, "24fefcc4": schemas,
            "17f75277": design, "f0f1dac2": design, "497b625e": design, "253c9061": design, "1e975d74": design,
            "d62bb13b": design, "2b8649ed": design}
    assert [c for c, text in more.items() if f"commit {c}" not in text] == []
    found = subprocess.run(["git", "-C", str(REPO), "cat-file", "--batch-check"], input="\n".join(more) + "\n",
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert [line.split()[1] for line in found] == ["commit"] * len(more), found


# --- 2. records, locks, examples, templates -------------------------------------------------------------------------


def _files() -> Iterator[Path]:
    for top in ("facts", "sources", "registry", "locks", "examples", "schema"):
        yield from sorted(p for p in (REPO / top).rglob("*") if p.is_file() and p.suffix in (
            ".toml", ".json", ".jsonl", ".md"))
    yield from sorted((REPO / "src" / "passprice" / "templates").iterdir())
    yield from sorted((REPO / ".github" / "workflows").glob("*.yml"))


def test_2_no_string_of_a_record_lock_example_or_template_names_a_label() -> None:
    found: dict[str, list[str]] = {}
    count = 0
    for path in _files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(REPO).as_posix()
        if path.suffix == ".toml":  # every value, a locator's framing included
            parts = list(_strings(tomllib.loads(text), name))
        elif path.suffix == ".json":
            parts = list(_strings(json.loads(text), name))
        else:
            parts = [(f"{name}:{n}", line) for n, line in enumerate(text.splitlines(), 1)]
        count += 1
        for where, value in parts:
            if labels(value):
                found[where] = labels(value)
    assert count >= 150  # 17 cards, 46 sources, the registry's, 10 locks, the examples, the schemas, the workflows
    assert found == {}


def test_2_the_six_records_read_at_a_session_name_the_test_file() -> None:
    tests = {"ggml-org-llama-cpp-discussion15396": "(tests/test_moe46.py; 68 comments shown",
             "ggml-org-llama-cpp-pr15525": "(tests/test_moe47.py and tests/test_moe48.py)",
             "ggml-org-llama-cpp-pr16834": "(tests/test_moe43.py)",
             "ggml-org-llama-cpp-pr20586": "(tests/test_moe45.py)",
             "mantile-inferencemax-gpt-oss-120b": "(tests/test_moe46.py)",
             "semianalysis-inferencex-pr1061": "(tests/test_moe46.py)"}
    for sid, named in tests.items():
        read = tomllib.loads((REPO / "sources" / f"{sid}.toml").read_text(encoding="utf-8"))["source"]["read"]
        assert named in read and "session" not in read, (sid, read[:120])
    config = json.loads((REPO / "examples" / "configs" / "deepseek-v2-lite.json").read_text(encoding="utf-8"))
    assert "read in stored excerpts (tests/test_moe48.py): from" in config["note"]


def test_2_the_workflow_init_writes_names_the_test() -> None:
    for path in (REPO / "src" / "passprice" / "templates" / "facts.yml", REPO / ".github" / "workflows" / "facts.yml"):
        assert 'labelled "work tree" (tests/test_leftovers_31.py).' in path.read_text(encoding="utf-8")


# --- 3. the README --------------------------------------------------------------------------------------------------


def test_3_the_readme_prose_names_no_session() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = [(n, labels(line)) for n, line in _prose(readme) if labels(line)]
    assert found == []
    # every round it names is a heading of docs/PERFORMANCE.md
    rounds = set(re.findall(r"(?i)\bround ([a-z]+\d+[a-z]?)\b", readme))
    assert rounds and rounds <= ROUNDS, rounds - ROUNDS
    assert readme.count("the machine quiet: the whole `--quick` run named above the table)") == 64
    # the git history a transcript prints is as git wrote it
    assert "Merge cite67: Azure guide's 62 locators" in readme


def test_3_design_names_each_round_by_its_test_file_or_merge() -> None:
    # docs/DESIGN.md: 284 labels of a round with a test file of its name became that file ("(left45)" ->
    # "(`tests/test_left45.py`)", "before cite90" -> "before the change `tests/test_cite90.py` checks"; dropped where
    # the line names the file already), 7 without one the commit merging it ("sweep51" -> "commit 253c9061"), two
    # rounds of docs/PERFORMANCE.md that section. "session N" (87 mentions, 86 lines' worth) were left until
    # tests/test_trace112.py: a user cannot trace a session; each is now the test file that checks the change ("until
    # session 36" -> "until the change `tests/test_architectures.py` checks"), the round of docs/PERFORMANCE.md
    # ("(docs/PERFORMANCE.md, round 36)"), the commit (pins.MODEL_TOKENS' raises) or nothing where no one file
    # stands for it ("(session 40)" dropped). None is left, in prose or in a fenced block.
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    found = [label for _, line in _prose(design) for label in labels(line)]
    assert found == []
    assert re.findall(r"\b[Ss]essions? \d", design) == []
    assert "(`tests/test_left45.py`;" not in design and "`3352 GB/s (3.352 TB/s)`, `tests/test_left45.py`;" in design
    assert "found by commit 253c9061" in design


# --- 4. what a user reads -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("audit", "r1-qwen7b-h200"),
    ("audit", "locks/r1-qwen7b-h200-llamacpp.lock.toml"),
    ("facts", "rtx_a6000"),
    ("sources",),
    ("audit", "--source", "ggml-org-llama-cpp-pr15525"),
    ("audit", "--source", "semianalysis-inferencex-pr1061"),
    ("audit", "--source", "nvidia-ampere-ga102-whitepaper"),
])
def test_4_the_output_names_no_label(args: tuple[str, ...]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert labels(result.output) == []
