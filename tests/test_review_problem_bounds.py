"""A review lists at most 20 problem lines of each kind and counts the rest (#13): what HEAD's ``check`` fails on,
and the errors of changed files that do not read, in markdown, text and JSON, as it already bounded check's
warnings on HEAD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_helpers import REPO, copy_root, invoke
from tests.test_slip_34 import renderings  # one in-process review rendered per format

from passprice.review import verdict

MISSING = ("date", "read", "retrieved", "url", "publisher")  # what a web-page record without them lacks, in order


def _roots(tmp_path: Path, count: int) -> tuple[Path, Path]:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    for i in range(count):
        (head / "sources" / f"n{i:04d}.toml").write_text('[source]\nkind = "web-page"\ntitle = "ttt"\n',
                                                         encoding="utf-8")
    return base, head


def test_204_invalid_source_records_make_a_short_comment_naming_the_first_problems(tmp_path: Path) -> None:
    # Leftover of #13: 3,000 source records missing five keys each made `passprice diff --format markdown` a 2.4 MB
    # pull-request comment (15,000 problem lines under "HEAD fails passprice check", the same 15,000 again in the
    # table of files that do not read), past GitHub's 65,536 characters. 204 records show the same bounds at a
    # fifteenth of the cost: 1,020 problems (1,000 left out: every count past a thousand, as 3,000 gave), past every
    # bound of the review (20 problems, 20 other files, 50 serving files), and unbounded they would print about
    # 150,000 characters (1,020 lines of each list), far past the 20,000 asserted.
    base, head = _roots(tmp_path, 204)
    status, (markdown, text, as_json) = renderings(REPO, "markdown", "text", "json", base=str(base), head=str(head))
    assert status == 2, markdown[-3000:]
    assert len(markdown) < 20_000
    md = markdown.splitlines()
    assert "HEAD fails passprice check (1,020 problems)" in md[0] and "204 files do not read" in md[0]
    at = md.index("#### ❌ HEAD fails passprice check (1,020 problems)")
    assert md[at + 2] == "- sources/n0000.toml: source.date: missing (required)"
    assert md[at + 6] == "- sources/n0000.toml: source.publisher: missing (required)"
    assert md[at + 21] == "- sources/n0003.toml: source.publisher: missing (required)"
    assert md[at + 22] == "- and 1,000 more problems: `passprice check` on HEAD lists each"
    table = md.index("#### Files that do not read")
    assert md[table + 4] == "| `sources/n0000.toml` | HEAD | source.date: missing (required) |"
    assert md[table + 23] == "| `sources/n0003.toml` | HEAD | source.publisher: missing (required) |"
    assert md[table + 25] == "- and 1,000 more errors (200 files not listed): `passprice check` lists each"
    assert sum("missing (required)" in line for line in md) == 40

    assert len(text) < 20_000  # the same review as text: exit 2 too
    lines = text.splitlines()
    assert "and 200 more changed files that do not read: passprice check lists each" in lines
    assert "  and 1,000 more problems: passprice check on HEAD lists each" in lines
    assert "sources/n0004.toml (source n0004): added" not in lines

    out = json.loads(as_json)
    assert out["head_check"] == [f"sources/n{i:04d}.toml: source.{key}: missing (required)"
                                 for i in range(4) for key in MISSING]
    assert out["head_check_left_out"] == 1000
    assert len(out["head_unreadable"]) == 20 and out["head_unreadable_left_out"] == 1000
    files = {f["path"]: f for f in out["files"]}
    assert len(files) == 204
    last = files["sources/n0003.toml"]["errors"]["head"][-1]
    assert last == "sources/n0003.toml: source.publisher: missing (required)"
    assert files["sources/n0003.toml"]["errors_left_out"] == 0
    assert files["sources/n0004.toml"]["errors"] == {"base": [], "head": []}
    assert files["sources/n0004.toml"]["errors_left_out"] == 5
    assert files["sources/n0004.toml"]["compared"] is False
    assert sum(f["errors_left_out"] for f in files.values()) == 1000


def test_a_file_cut_mid_way_says_how_many_of_its_errors_are_left_out(tmp_path: Path) -> None:
    # Six records lacking three keys each (18 errors, all listed), then one lacking five: the cut at 20 falls
    # inside the last one's errors, and the text says how many of its own are not listed.
    base, head = _roots(tmp_path, 0)
    for i in range(6):
        (head / "sources" / f"n{i:04d}.toml").write_text(
            '[source]\nkind = "web-page"\ntitle = "ttt"\nread = "read it all"\npublisher = "pp"\n', encoding="utf-8")
    d_lines = invoke("diff", str(base), str(head)).stdout.splitlines()
    assert sum(line.startswith("    sources/n") for line in d_lines) == 18
    (head / "sources" / "n0006.toml").write_text('[source]\nkind = "web-page"\ntitle = "ttt"\n', encoding="utf-8")
    lines = invoke("diff", str(base), str(head)).stdout.splitlines()
    at = lines.index("sources/n0006.toml (source n0006): added")
    assert lines[at + 1:at + 5] == [
        "  does not read on HEAD:",
        "    sources/n0006.toml: source.date: missing (required)",
        "    sources/n0006.toml: source.read: missing (required)",
        "    and 3 more errors: passprice check lists each",
    ]


def test_the_bound_is_20() -> None:
    assert verdict.MAX_HEAD_PROBLEMS == 20


def test_check_loads_each_source_record_once_with_the_same_lines(tmp_path: Path, monkeypatch: Any) -> None:
    # Leftover of #13: `check` loaded every record of sources/ twice (lineage's check_sources, then read_sources for
    # the same unreadable lines): 4,000 uncited records, 8,000 schema loads. Once now, every line as it was.
    from passprice import lineage, sources

    root = copy_root(tmp_path)
    (root / "sources" / "bad1.toml").write_text('[source]\nkind = "web-page"\ntitle = "ttt"\n', encoding="utf-8")
    (root / "sources" / "bad2.toml").write_text("not toml [[", encoding="utf-8")
    (root / "sources" / "uncited.toml").write_text(
        '[source]\nkind = "web-page"\ntitle = "ttt"\nread = "read it all"\npublisher = "pp"\nurl = "unknown"\n'
        'date = "unknown"\nretrieved = "unknown"\n', encoding="utf-8")
    loads: list[str] = []
    real = sources.load_source

    def counted(where: Any, ref: str) -> Any:
        loads.append(ref)
        return real(where, ref)

    monkeypatch.setattr(sources, "load_source", counted)
    # lineage's document_hashes loaded each record again (its own import of load_source, which this test did not
    # count until session 19: with 4,000 records, about a tenth of a cold check)
    monkeypatch.setattr(lineage, "load_source", counted)
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert sorted(loads) == sorted(p.stem for p in (root / "sources").glob("*.toml"))  # each once
    assert result.stderr.splitlines() == [
        f"passprice: error: sources/bad1.toml: source.{key}: missing (required)" for key in MISSING
    ] + ["passprice: error: sources/bad2.toml: not valid TOML: Expected '=' after a key in a key/value pair "
         "(at line 1, column 5)"]
    assert "warning: sources/uncited.toml: cited by no fact: cite it, or remove it" in result.stdout
