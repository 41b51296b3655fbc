"""Every word a command's text output labels something with is defined (left32): the column headers of its tables,
the labels of its summary lines and of a two-column table's rows, and the words issue 13's leftovers found
undefined (rung, Tcycle, "by hand", extrapolation), collected from what price, best, audit, reproduce, validate,
calibrate, sources, diff, kv, roofline, speculate and simulate print, each with a glossary entry and
``passprice explain WORD`` answering it (exit 0, the entry's text)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import glossary
from passprice.errors import InputError

#: One run of each command, between them printing every table and label each prints on the shipped registry.
COMMANDS = {
    "price": ("price", "r1-qwen7b-h200"),
    "best": ("best", "r1-qwen7b-h200"),
    "audit": ("audit", "r1-qwen7b-h200", "--batch", "1", "--stack", "llamacpp-cuda-2405"),
    "audit lock": ("audit", "r1-qwen7b-h200.lock.toml"),
    "reproduce": ("reproduce", "r1-qwen7b-h200"),
    "validate": ("validate",),
    "calibrate": ("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run"),
    "sources": ("sources",),
    "kv": ("kv", "qwen3-30b-a3b-q4_k_m"),
    "roofline": ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200"),
    "speculate": ("speculate", "qwen35-27b-h200-mtp"),
    "simulate": ("simulate", "r1-qwen7b-h200", "--trace", str(REPO / "examples" / "requests.jsonl")),
}


def headers(text: str) -> list[str]:
    """The column headers of every table in ``text`` (a line of dashes and spaces under a header line: each run
    of dashes spans a column), and the first cells of the rows of a table whose first column has no header (the
    row labels of ``simulate``'s static / continuous table)."""
    out: list[str] = []
    lines = text.splitlines()
    for i in range(1, len(lines)):
        rule = lines[i]
        if not re.fullmatch(r" *-+( +-+)* *", rule) or not lines[i - 1].strip():
            continue
        runs = list(re.finditer(r"-+", rule))
        head = lines[i - 1]
        for n, run in enumerate(runs):
            end = runs[n + 1].start() if n + 1 < len(runs) else len(head)
            out.append(head[run.start():end].strip())
        if not head[runs[0].start():runs[0].end()].strip():  # row labels
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                out.append(row[runs[0].start():runs[0].end()].strip())
    return [h for h in out if h]


def labels(text: str) -> list[str]:
    """The labels of the summary lines (``  tokens/s      33,339.2``, ``    floors    held → BROKEN``): an indented
    lower-case phrase followed by two spaces or more."""
    return [m[1] for line in text.splitlines() if (m := re.match(r"^ {2,4}([a-z][a-z/' ]*?)\s{2,}\S", line))]


def words(phrase: str) -> list[str]:
    """The words a header or label names, for a glossary lookup: a parenthesis taken off (``reproduced (pinned
    inputs)``), kept when it is all there is (``(binary)``); a list of percentiles or a pair cut to
    its first (``TTFT p50 / p90 / p99``, ``best / largest``); a layer kind's column (``global: positions``) as both
    words; a context's figure (``4K``) none."""
    if re.fullmatch(r"\((.*)\)", phrase):
        return [phrase]
    phrase = re.sub(r"\s*\(.*\)$", "", phrase)
    phrase = re.split(r" p50| / ", phrase)[0].strip()
    if re.fullmatch(r"[\d.,]+[KM]?", phrase) or not re.search(r"[A-Za-z]", phrase):  # a figure, or a mark (*, !)
        return []
    if ": " in phrase:
        return [part.strip() for part in phrase.split(": ")]
    return [phrase]


def _undefined(found: set[str]) -> list[str]:
    missing = []
    for word in sorted(found):
        try:
            glossary.lookup(word)
        except InputError:
            missing.append(word)
    return missing


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``passprice diff`` of a change weakening one fact every H200 lock rests on: its changed fact, locks affected
    and servings no lock pins."""
    base = copy_root(tmp_path_factory.mktemp("base"))
    head = tmp_path_factory.mktemp("head") / "root"
    shutil.copytree(base, head)
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    edited = invoke("fact", "set", "h200_sxm_141gb", "scale", "--value", "20", "--unit", "Tcycle/s", "--provenance",
                    "assumed", "--source", "passprice-card-review", "--locator", "a guess", root=head)
    assert edited.exit_code == 0, edited.output
    assert card.read_text(encoding="utf-8").count('value = 20') == 1
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 1, result.output  # the weakened fact breaks the H200 locks' floors
    return result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_word_a_command_prints_is_defined(name: str) -> None:
    result = invoke(*COMMANDS[name])
    assert result.exit_code == 0, result.output
    found = {w for phrase in headers(result.stdout) + labels(result.stdout) for w in words(phrase)}
    assert found, name
    assert _undefined(found) == []


def test_every_word_a_review_prints_is_defined(review: str) -> None:
    found = {w for phrase in headers(review) + labels(review) for w in words(phrase)}
    assert {"changed", "floors", "tokens/s", "recorded", "pass", "binds", "lock it"} <= found
    assert _undefined(found | {"WEAKER", "BROKEN", "NOT LOCKED"}) == []
    assert "(WEAKER)" in review and "→ BROKEN" in review and "NOT LOCKED" in review


def test_the_collector_finds_the_tables_words() -> None:
    # the collector is what the test above rests on: hand-checked on three outputs
    kv = invoke(*COMMANDS["kv"]).stdout
    assert {"layer kind", "layers", "KV heads", "bytes/token", "global: positions", "(binary)", "card",
            "memory", "4K"} <= set(headers(kv))
    simulate = invoke(*COMMANDS["simulate"]).stdout
    assert {"static", "continuous", "throughput", "TTFT p50 / p90 / p99", "makespan", "steps (by bind)",
            "waited for memory", "prompt rows computed"} <= set(headers(simulate))
    assert {"trace", "engine", "provenance", "lock"} <= set(labels(simulate))
    reproduce = invoke(*COMMANDS["reproduce"]).stdout
    assert headers(reproduce)[:4] == ["field", "recorded", "reproduced (pinned inputs)", "today's inputs"]
    assert {"facts", "checkpoint", "serving", "pricing model", "floors"} <= set(labels(reproduce))
    assert words("global: positions") == ["global", "positions"] and words("(binary)") == ["(binary)"]
    assert words("TTFT p50 / p90 / p99") == ["TTFT"] and words("40K") == []


@pytest.mark.parametrize(
    ("word", "said", "name"),
    [
        # left32: issue 13's leftovers found these printed and undefined
        ("rung", "margin: rungs above it", "margin"),
        ("rungs", "margin: rungs above it", "margin"),
        ("Tcycle", "33.5 Tcycle/s", "scale"),
        ("Tcycle/s", "33.5 Tcycle/s", "scale"),
        ("by hand", "  by hand: tokens/s = batch × emitted_per_sequence / pass time", "by hand"),
        ("extrapolation", "the fit is extrapolated here", "extrapolation"),
        ("extrapolated", "the fit is extrapolated here", "extrapolation"),
        ("re-derived", "re-derived", "elasticity"),
        ("lock digest", "  lock digest sha256:", "lock digest"),
        ("retrieved", "retrieved", "source"),
    ],
)
def test_the_words_found_undefined_are_printed_and_explained(word: str, said: str, name: str) -> None:
    printed = "".join(
        invoke(*args).output for args in (COMMANDS["audit"], COMMANDS["audit lock"], COMMANDS["reproduce"],
                                          COMMANDS["sources"])
    )
    assert said in printed
    result = invoke("explain", word)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{name}: ")
    assert glossary.lookup(word).name == name


def test_explain_answers_every_word_collected(review: str) -> None:
    found = {w for phrase in headers(review) + labels(review) for w in words(phrase)}
    for args in COMMANDS.values():
        out = invoke(*args).stdout
        found |= {w for phrase in headers(out) + labels(out) for w in words(phrase)}
    assert len(found) >= 95  # 98 words when written (left32)
    for word in sorted(found):
        result = invoke("explain", word)
        assert result.exit_code == 0, (word, result.output)
        term = glossary.lookup(word)
        assert result.stdout.startswith(f"{term.name}: "), word


def test_the_readme_glossary_has_the_new_entries() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("by hand", "extrapolation", "batch", "lock digest", "intensity", "trace", "not locked"):
        assert f"- **{name}**: {glossary.TERMS[name].long}" in readme, name
    assert Path(REPO / "src" / "passprice" / "glossary.py").is_file()
