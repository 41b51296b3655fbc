"""A review shows a stored excerpt the change rewrote, not only names it (issue 13).

A new user raised the H200's ``memory.bandwidth`` 4.8 -> 4.9 TB/s with a new quote, edited the product page's stored
excerpt (``4.8TB/s`` -> ``4.9TB/s`` on its lines 33-34) to print it, re-pinned ``excerpt_sha256``: the review said the
quote was checked against an excerpt the change edited, but not what was edited. Its "sources whose document
changed" entry now shows (a) the lines of the source's own section that changed, BASE -> HEAD, bounded, control
characters escaped; (b) ``quotes_gained``, the citing facts whose quotes HEAD's excerpt holds and BASE's did not; (c)
whether the record's ``retrieved``/``read``/``copies`` are unchanged (no new reading recorded).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke, repin_excerpt

CARD = "facts/cards/h200_sxm_141gb.toml"
EXCERPT = "sources/excerpts/cite102-excerpt.txt"
RECORD = "sources/nvidia-h200-product-page.toml"
SOURCE = "nvidia-h200-product-page"
HEADING = "its stored excerpt's lines for it that changed, BASE → HEAD (what audit now checks quotes against):"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, (rel, old)
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _line_of(root: Path, text: str) -> int:
    return (root / EXCERPT).read_text(encoding="utf-8").splitlines().index(text) + 1


def _the_pr(root: Path) -> None:
    """The pull request: the value, its quote, the excerpt's two cells, the pin."""
    _edit(root, CARD, "[memory.bandwidth]\nvalue = 4.8\n", "[memory.bandwidth]\nvalue = 4.9\n")
    _edit(root, CARD, "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'", "'GPU Memory Bandwidth 4.9TB/s 4.9TB/s'")
    _edit(root, EXCERPT, "33\t4.8TB/s\n34\t4.8TB/s\n", "33\t4.9TB/s\n34\t4.9TB/s\n")
    repin_excerpt(root, EXCERPT)


def _source(data: dict[str, object]) -> dict[str, object]:
    (entry,) = [s for s in data["sources_changed"] if s["id"] == SOURCE]  # type: ignore[attr-defined]
    return entry  # type: ignore[no-any-return]


def test_the_rewritten_lines_the_quotes_gained_and_no_new_reading_are_shown(repo: Path) -> None:
    first, second = _line_of(repo, "33\t4.8TB/s"), _line_of(repo, "34\t4.8TB/s")
    _the_pr(repo)
    # (the derived stream shares still read 4.8: check says so; the review of the excerpt is what is tested here)
    _git(repo, "commit", "-qam", "bandwidth 4.9, its excerpt edited to say so")
    data = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    entry = _source(data)
    # (a) the two lines, BASE's then HEAD's, with their line numbers in the file (tabs escaped, as the review does)
    changes = [f"BASE line {first}: 33\\t4.8TB/s", f"BASE line {second}: 34\\t4.8TB/s",
               f"HEAD line {first}: 33\\t4.9TB/s", f"HEAD line {second}: 34\\t4.9TB/s"]
    assert entry["excerpt_changes"] == changes
    # (b) the quote the edited excerpt supplies: was found in neither list (quotes_lost is of the other direction)
    assert entry["quotes_gained"] == ["h200_sxm_141gb:memory.bandwidth"]
    assert entry["quotes_lost"] == []
    # (c) retrieved, read and copies as on BASE
    assert entry["reading_unchanged"] is True
    said = ("(on HEAD, the quote of h200_sxm_141gb:memory.bandwidth from it is found in its stored excerpt, NOT FOUND "
            "in BASE's: the edited excerpt supplies those words; read them in the document itself): does it state each "
            "of h200_sxm_141gb:memory.capacity, h200_sxm_141gb:memory.bandwidth, ")
    assert said in str(entry["to_verify"])
    assert str(entry["to_verify"]).endswith(
        "(a lock pins the id, not the document). No new reading of the document is recorded for the new excerpt: its "
        "record's retrieved, read, copies are as on BASE.")
    text = invoke("diff", "HEAD~1", "HEAD", root=repo).stdout.splitlines()
    at = text.index(f"    {HEADING}")
    assert text[at + 1: at + 5] == [f"      {line}" for line in changes]
    assert any(said in line for line in text)
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout.splitlines()
    at = markdown.index("  - its stored excerpt's lines for it that changed, BASE → HEAD (what audit now checks quotes "
                        "against):")
    assert markdown[at + 1] == f"    - BASE line {first}: 33\\\\t4.8TB/s"


def test_a_new_reading_recorded_is_said_so(repo: Path) -> None:
    _the_pr(repo)
    _edit(repo, RECORD, 'retrieved = "2026-09-07"', 'retrieved = "2026-12-07"')
    _git(repo, "commit", "-qam", "re-read, the excerpt edited")
    entry = _source(json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout))
    assert entry["reading_unchanged"] is False
    assert "no new reading" not in str(entry["to_verify"])
    assert "retrieved: 2026-09-07 → 2026-12-07" in entry["changed"]  # type: ignore[operator]


def test_a_source_whose_excerpt_did_not_change_says_nothing_of_it(repo: Path) -> None:
    _edit(repo, RECORD, 'retrieved = "2026-09-07"', 'retrieved = "2026-12-07"')
    _git(repo, "commit", "-qam", "re-read")
    entry = _source(json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout))
    assert (entry["excerpt_changes"], entry["quotes_gained"], entry["reading_unchanged"]) == ([], [], None)


def test_the_lines_shown_are_bounded_cut_and_escaped(repo: Path) -> None:
    path = repo / EXCERPT
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = _line_of(repo, "33\t4.8TB/s")
    # 12 lines of the section rewritten: one long, one holding ESC and a right-to-left override
    for i in range(start - 1, start + 11):
        lines[i] = lines[i].rstrip("\n") + " edited\n"
    lines[start - 1] = "33\t" + "x" * 500 + "\n"
    lines[start] = "34\t\x1b[31m4.9TB/s\u202e\n"
    path.write_text("".join(lines), encoding="utf-8")
    repin_excerpt(repo, EXCERPT)
    _git(repo, "commit", "-qam", "many lines")
    data = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    changes = _source(data)["excerpt_changes"]
    assert isinstance(changes, list) and len(changes) == 11  # 10 shown, then the count of the other 14
    assert changes[-1] == "and 14 more changed lines"
    heads = [c for c in changes if c.startswith("HEAD")]
    # the first 10 of 24: BASE's 12, HEAD's none (the block's BASE lines first)
    assert heads == [] and len([c for c in changes if c.startswith("BASE")]) == 10
    # HEAD's lines shown where they come first: the long one cut, the controls escaped
    _edit(repo, EXCERPT, "33\t" + "x" * 500 + "\n", "33\t" + "y" * 500 + "\n")
    _edit(repo, EXCERPT, "34\t\x1b[31m4.9TB/s\u202e\n", "34\t\x1b[32m4.9TB/s\u202e\n")
    repin_excerpt(repo, EXCERPT)
    _git(repo, "commit", "-qam", "two lines")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    data = json.loads(invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=repo).stdout)
    assert _source(data)["excerpt_changes"] == [
        f"BASE line {start}: 33\t{'x' * 197}…".replace("\t", "\\t"),
        f"BASE line {start + 1}: 34\\t\\x1b[31m4.9TB/s\\u202e",
        f"HEAD line {start}: 33\t{'y' * 197}…".replace("\t", "\\t"),
        f"HEAD line {start + 1}: 34\\t\\x1b[32m4.9TB/s\\u202e"]
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    markdown = invoke("diff", "HEAD~1", "HEAD", "--format", "markdown", root=repo).stdout
    assert "\x1b" not in markdown and "\u202e" not in markdown
