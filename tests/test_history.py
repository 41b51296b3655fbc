"""A fact's history read through git whatever the names and messages hold: NUL-separated output (``git log -z``,
``%x00``), file names as the file system has them (quotes, tabs, bytes that are not UTF-8), a version that does not
read shown as such, and each distinct table of the fact parsed once, so a long history costs git's time. Reproducers
of the attacker's findings 6 to 9."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import history
from passprice.history import fact_table

CARD = "h200_sxm_141gb"
CARD_FILE = f"facts/cards/{CARD}.toml"
BANDWIDTH = "value = 4.8\n"


def git(repo: Path, *args: str, name: str = "t") -> None:
    subprocess.run(["git", "-c", f"user.name={name}", "-c", "user.email=t@example.com", *args], cwd=repo, check=True,
                   capture_output=True)  # fmt: skip


def registry(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the registry")
    return root


def set_bandwidth(file: Path, value: str) -> None:
    text = file.read_text(encoding="utf-8")
    start = text.index("[memory.bandwidth]")
    at = text.index("value = ", start)
    end = text.index("\n", at)
    file.write_text(text[:at] + f"value = {value}" + text[end:], encoding="utf-8")


def versions(root: Path, card: str, path: str = "memory.bandwidth") -> list[tuple[str, object]]:
    result = invoke("fact", "show", card, path, "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["versions"]
    return [(v["subject"], v["fact"]["value"] if v["fact"] else v["error"]) for v in found]


@pytest.mark.parametrize("name", ['my "h200"', "caf\u00e9"])
def test_a_file_name_git_would_quote_has_its_history(tmp_path: Path, name: str) -> None:
    # Finding 9: git quoted such a name in its output, and the history had 1 version. (A name holding a tab or a
    # newline, which git quotes too, is refused before any history is read: test_a_name_that_does_not_print_...)
    root = registry(tmp_path)
    card = root / "facts" / "cards" / f"{name}.toml"
    card.write_bytes((root / CARD_FILE).read_bytes())
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a card with an odd name")
    set_bandwidth(card, "4.9")
    git(root, "commit", "-qam", "raised")
    # (git follows the copy back to the card it was copied from, whose history it continues.)
    assert versions(root, str(card)) == [("raised", 4.9), ("the registry", 4.8)]


def test_separators_in_a_subject_or_author_make_no_phantom_version(tmp_path: Path) -> None:
    root = registry(tmp_path)
    set_bandwidth(root / CARD_FILE, "4.9")
    git(root, "commit", "-qam", "sub\x1eject\x1fwith separators", name="x\x1fy")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{CARD} memory.bandwidth ({CARD_FILE}): 2 versions\n")
    assert "  x\ufffdy  sub\ufffdject\ufffdwith separators\n" in result.stdout  # no control character printed


def test_a_renamed_file_is_followed(tmp_path: Path) -> None:
    root = registry(tmp_path)
    git(root, "mv", CARD_FILE, "facts/cards/renamed.toml")
    git(root, "commit", "-qm", "renamed")
    set_bandwidth(root / "facts/cards/renamed.toml", "5")
    git(root, "commit", "-qam", "raised")
    assert versions(root, "renamed") == [("raised", 5), ("the registry", 4.8)]


def test_an_old_version_that_is_not_a_fact_is_shown_as_such(tmp_path: Path) -> None:
    # Finding 8: `derivation = { formula = 1, inputs = "zz" }` in an old commit raised AttributeError.
    root = registry(tmp_path)
    file = root / CARD_FILE
    good = file.read_text(encoding="utf-8")
    start = good.index("[streams.read]")
    end = good.index("[streams.rewrite]")
    block = "\n".join(line for line in good[start:end].splitlines() if not line.startswith("derivation"))
    file.write_text(good[:start] + block + '\nderivation = { formula = 1, inputs = "zz" }\n\n' + good[end:],
                    encoding="utf-8")  # fmt: skip
    git(root, "commit", "-qam", "bad")
    file.write_text(good, encoding="utf-8")
    git(root, "commit", "-qam", "mended")
    found = versions(root, CARD, "streams.read")
    assert [subject for subject, _ in found] == ["mended", "bad", "the registry"]
    assert found[0][1] == found[2][1] == 0.9333
    assert isinstance(found[1][1], str) and "streams.read: not a fact" in found[1][1]
    text = invoke("fact", "show", CARD, "streams.read", "--history", root=root).stdout
    first = subprocess.run(["git", "rev-parse", "HEAD~2"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.strip()
    # left53: was "changed: reads again"; tests/test_odds165.py: it names the last version that reads
    assert f"  0.9333 (measured)   reads again: as at {first[:12]}, the last version that reads\n" in text


def test_a_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    # Finding 7: UnicodeDecodeError in Checkout.of, for --history and for diff.
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xff"))
    odd.mkdir()
    root = registry(odd)
    set_bandwidth(root / CARD_FILE, "4.9")
    git(root, "commit", "-qam", "raised")
    assert versions(root, CARD) == [("raised", 4.9), ("the registry", 4.8)]
    result = invoke("diff", "HEAD~1", "HEAD", "--format", "json", root=root)
    assert result.exit_code == 1 and '"memory.bandwidth"' in result.stdout  # its locks move unreviewed


def test_each_distinct_table_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Finding 6: 2,000 commits to one card file took 16 s, a parse of the whole file a version. Commits changing
    # another fact leave the table as it was: no parse; the fact's table alone is parsed when it changes.
    root = registry(tmp_path)
    file = root / CARD_FILE
    for i in range(30):
        text = file.read_text(encoding="utf-8")
        file.write_text(text.replace("(132 SMs assumed from the H100).", f"(132 SMs assumed from the H100) {i}.", 1)
                        if i == 0 else text.replace(f"H100) {i - 1}.", f"H100) {i}.", 1), encoding="utf-8")  # fmt: skip
        if i % 10 == 5:
            set_bandwidth(file, f"4.{80 + i}")
        git(root, "commit", "-qam", f"c{i}")
    parsed: list[int] = []
    real = history.schema.toml_loads  # a plain table's parse need not reach tomllib (schema._plain_document)

    def counting(text: str, **options: Any) -> dict[str, object]:
        parsed.append(len(text))
        return real(text, **options)

    monkeypatch.setattr(history.schema, "toml_loads", counting)
    found = versions(root, CARD)
    assert [v for _, v in found] == [4.105, 4.95, 4.85, 4.8]  # the work tree is the last commit: no extra version
    # One parse for each distinct table (4.8, 4.85, 4.95, 4.105) and one of the work tree's file; none whole. The
    # rest of the file (the table's lines but its header taken out) is read to know the version reads (a break away
    # from the fact hid a version: tests/test_fix171.py): its 31 distinct texts (the first commit's and the 30
    # edits') were each parsed, about 0.5 ms of CPU each for this 16 KB card; they are one shape (the edits change a
    # note's text alone: history._VALUE_AT_END), parsed once (tests/test_bigread173.py).
    size = len(file.read_text(encoding="utf-8"))
    tables = [n for n in parsed if n < 1000]
    rests = [n for n in parsed if 1000 <= n < size - 200]
    assert len(tables) == 4 and len(rests) == 1 and parsed.count(size) == 1 and len(parsed) == 6


def test_fact_table() -> None:
    text = (REPO / CARD_FILE).read_bytes()
    table = fact_table(text, "streams.read")
    assert table is not None and table.startswith(b"[streams.read]\n") and table.endswith(b"\n\n")
    assert tomllib.loads(table.decode())["streams"]["read"]["derivation"]["formula"] == "dot / bandwidth"
    assert fact_table(b"[a]\nx = 1\n[a.derivation]\ny = 2\n[b]\nz = 3\n", "a") == b"[a]\nx = 1\n[a.derivation]\ny = 2\n"
    assert fact_table(b"[ a . b ]  # c\nx = 1\n", "a.b") == b"[ a . b ]  # c\nx = 1\n"
    assert fact_table(b"[a]\nb.x = 1\n", "a.b") is None  # not written as a table of its own: the whole file is read
    assert fact_table(b"[a]\nx = 1\n[a]\nx = 2\n", "a") is None  # twice (invalid TOML): the whole file is read


def test_a_merged_branch_makes_no_phantom_version(tmp_path: Path) -> None:
    """Read along the first-parent line (each commit against the one before it on the branch checked out): a side
    branch's later commit that changed the card's file but not the fact, merged after the fact changed on main, was
    listed as changing it back to 4.8, and the clean work tree as "uncommitted changes" bringing it to 4.9 again."""
    root = registry(tmp_path)
    card = root / CARD_FILE

    def commit(message: str, when: str) -> None:
        env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", message],
                       cwd=root, check=True, capture_output=True, env=env)  # fmt: skip

    git(root, "branch", "-M", "main")
    git(root, "checkout", "-qb", "side")
    text = card.read_text(encoding="utf-8")
    card.write_text(text + "\n# a comment the side branch adds\n", encoding="utf-8")
    commit("side: a comment", "2026-11-03T00:00:00")  # later than main's change below
    git(root, "checkout", "-q", "main")
    set_bandwidth(card, "4.9")
    commit("main: raised", "2026-11-02T00:00:00")
    git(root, "merge", "-q", "--no-edit", "side")
    assert versions(root, CARD) == [("main: raised", 4.9), ("the registry", 4.8)]
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root)
    assert "uncommitted changes" not in result.stdout


def test_a_card_deleted_and_restored_keeps_its_own_history(tmp_path: Path) -> None:
    """git's rename detection at its default 50 % took the restored H200 card for a copy of the H100's and showed the
    H100's 0.8657 share as the H200's first version; at 90 % the card's own versions and its deletion are shown."""
    root = registry(tmp_path)
    git(root, "rm", "-q", CARD_FILE)
    git(root, "commit", "-qm", "deleted")
    git(root, "checkout", "-q", "HEAD~1", "--", CARD_FILE)
    git(root, "commit", "-qm", "restored")
    found = versions(root, CARD, "streams.rewrite")
    assert [subject for subject, _ in found] == ["restored", "deleted", "the registry"], found
    assert found[0][1] == found[2][1] == 0.8333


def test_a_history_longer_than_the_bound_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: past ``MAX_COMMITS`` commits the history stopped silently and called its oldest version read "new"
    (a false first citation in an audit). Now that version's change is unknown and the listing says older history
    was not read. Bound lowered to 3 here; 5 commits each change the bandwidth."""
    monkeypatch.setattr(history, "MAX_COMMITS", 3)
    root = registry(tmp_path)
    file = root / CARD_FILE
    for i in range(5):
        set_bandwidth(file, f"4.{81 + i}")
        git(root, "commit", "-qam", f"b{i}")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    found = json.loads(result.stdout)["versions"]
    assert [(v["subject"], v["fact"]["value"], v["changed"], v["older_not_read"]) for v in found] == [
        ("b4", 4.85, ["value"], False),
        ("b3", 4.84, ["value"], False),
        ("b2", 4.83, [], True),  # it changed the value from b1's 4.82, but b1 was not read: unknown, not "new"
    ]
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root).stdout
    assert text.splitlines()[0] == (
        f"{CARD} memory.bandwidth ({CARD_FILE}): 3 versions in the newest 3 commits (older history not read)"
    )
    oldest = [line for line in text.splitlines() if line.startswith("  4.83 TB/s ")]
    assert len(oldest) == 1 and oldest[0].endswith("   change unknown (older history not read)")  # left53
    # Within the bound, nothing is cut: the first version is "new".
    monkeypatch.setattr(history, "MAX_COMMITS", 10)
    found = json.loads(invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root).stdout)
    assert found["versions"][-1]["changed"] == ["new"] and not any(v["older_not_read"] for v in found["versions"])


@pytest.mark.parametrize("name", ["t\tab", "new\nline"])
def test_a_name_that_does_not_print_is_refused_before_its_history_is_read(tmp_path: Path, name: str) -> None:
    """Attacker round 5: a record's name holding a control character would be printed on every line naming it; it
    is refused where the record is read, history or not (one line, exit 2)."""
    root = registry(tmp_path)
    card = root / "facts" / "cards" / f"{name}.toml"
    card.write_bytes((root / CARD_FILE).read_bytes())
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a card with an odd name")
    result = invoke("fact", "show", str(card), "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 2
    shown = name.encode("unicode_escape").decode("ascii")
    assert f"the name {shown} holds a character that does not print" in result.stderr


def test_the_versions_of_a_merged_branch_come_before_its_merge_marked_so(tmp_path: Path) -> None:
    """The newcomer walkthrough's finding: a branch that replaced a measured figure by an estimate, then merged,
    showed as one version at the merge; the step down in provenance was hidden. The branch's versions now come
    before the merge, each against the one before it on the branch, marked with the merge."""
    root = registry(tmp_path)
    card = root / CARD_FILE
    git(root, "branch", "-M", "main")
    git(root, "checkout", "-qb", "side")
    set_bandwidth(card, "4.0")
    git(root, "commit", "-qam", "side: measured")
    set_bandwidth(card, "4.5")
    git(root, "commit", "-qam", "side: estimated")
    git(root, "checkout", "-q", "main")
    (root / "notes.txt").write_text("another change on main\n", encoding="utf-8")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "main: notes")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["versions"]
    merge = found[0]["commit"]
    assert [(v["subject"], v["fact"]["value"], v["changed"], v["merged_by"]) for v in found] == [
        ("merge side", 4.5, ["value"], None),
        ("side: estimated", 4.5, ["value"], merge),
        ("side: measured", 4.0, ["value"], merge),
        ("the registry", 4.8, ["new"], None),
    ]
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root).stdout
    assert text.startswith(f"{CARD} memory.bandwidth ({CARD_FILE}): 4 versions\n")
    assert f"side: estimated\n  (on a branch merged by {merge[:12]})\n  4.5 TB/s" in text


def test_past_the_newest_merges_read_a_merge_says_its_branch_was_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each merge's branch costs a git log (round 8: 150 merges changing the fact took 1.8 s, against 0.2 s without);
    only the newest MAX_MERGES are read, and an older merge says its branch was not."""
    monkeypatch.setattr(history, "MAX_MERGES", 1)
    root = registry(tmp_path)
    card = root / CARD_FILE
    git(root, "branch", "-M", "main")
    for k, value in enumerate(("4.0", "4.5")):
        git(root, "checkout", "-qb", f"side{k}")
        set_bandwidth(card, value)
        git(root, "commit", "-qam", f"side{k}: {value}")
        git(root, "checkout", "-q", "main")
        (root / f"n{k}.txt").write_text("x\n", encoding="utf-8")
        git(root, "add", f"n{k}.txt")
        git(root, "commit", "-qm", f"main: n{k}")
        git(root, "merge", "-q", "--no-ff", "-m", f"merge side{k}", f"side{k}")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    found = json.loads(result.stdout)["versions"]
    assert [(v["subject"], v["merged_by"] is not None, v["merged_branch_not_read"]) for v in found] == [
        ("merge side1", False, False),
        ("side1: 4.5", True, False),
        ("merge side0", False, True),
        ("the registry", False, False),
    ]
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root).stdout
    assert "merge side0\n  (a merge: the versions on the branch it merged are not read, past the newest 1 merges" in (
        text)


def test_a_merged_branch_longer_than_the_bound_marks_its_oldest_version_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 8: a branch past the commits a history reads was cut without a word."""
    monkeypatch.setattr(history, "MAX_BRANCH_COMMITS", 1)
    root = registry(tmp_path)
    card = root / CARD_FILE
    git(root, "branch", "-M", "main")
    git(root, "checkout", "-qb", "side")
    for value in ("4.0", "4.5"):
        set_bandwidth(card, value)
        git(root, "commit", "-qam", f"side: {value}")
    git(root, "checkout", "-q", "main")
    (root / "n.txt").write_text("x\n", encoding="utf-8")
    git(root, "add", "n.txt")
    git(root, "commit", "-qm", "main: n")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    found = json.loads(invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root).stdout)
    assert [(v["subject"], v["older_not_read"], v["older_not_read_why"]) for v in found["versions"]] == [
        ("merge side", False, None),
        ("side: 4.5", True, "only the newest 1 commits of the branch are read"),
        ("the registry", False, None),
    ]
