"""Four left-overs of the review and the audit (issue 13), each reproduced and kept, built in the test.

- (1) ``check`` warns of a symbolic link in ``locks/`` to a lock file beside it (the lock under a second name,
  judged once) and of a lock file duplicating another; a review refused a pull request adding such a link, "a
  symbolic link …; passprice diff compares the files themselves" (exit 2) where ``check`` on the same tree warned
  (exit 0), and left out the duplicate warnings of a pair the change did not touch. The review lists them among
  HEAD's ``check`` warnings in ``check``'s words and order, ⚠️, exit 0; a link elsewhere is still refused.
- (2) The flattening of a stored text (numbered lines, blanks, barriers) was written twice (a source's text, each
  part of it); once now (``sources._flat_lines``), the two read alike (``audit --source`` of every shipped source
  gave the same bytes, text and ``--json``, before and after).
- (3) ``fact show --history``: the first version that reads after one or more that do not (broken TOML, past the
  size cap) said ``value changed`` as if of the version just before it, and ``new`` where no earlier version read;
  it says what changed since the last commit whose version reads, naming it, or that it cannot be told.
- (4) The review's refusal for quote look-ups past its bound counted ``N quoted spans of M facts`` of changed facts
  and ``M facts`` alone of a rewritten excerpt's citing facts; both count the spans now.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from test_diff import commit_all, git, make_lock_file
from test_slip_34 import renderings

R1 = "r1-qwen7b-h200"


def _registry(tmp_path: Path) -> Path:
    """A git repository of the checkout's records and one lock of :data:`R1` on ``main``, ``pr`` checked out."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, R1, R1)
    return path


def _check_warnings(path: Path) -> list[str]:
    result = invoke("check", "--json", root=path)
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["warnings"])


LINK_LINE = ("locks/alias.lock.toml is a symbolic link to locks/r1-qwen7b-h200.lock.toml beside it: judged once, as "
             "locks/r1-qwen7b-h200.lock.toml (every command reads the link as that lock)")
COPY_LINE = (
    "locks/r1-copy.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: it locks serving r1-qwen7b-h200 (price) "
    "with the same pins, floors and price under another file name; locks/r1-copy.lock.toml is named "
    "'r1-qwen7b-h200' inside, not after its file; it guards nothing locks/r1-qwen7b-h200.lock.toml does not, and "
    "re-locking one leaves the other pinning the old facts: remove one"
)


def test_1_a_review_adding_a_lock_link_says_what_check_says_and_passes(tmp_path: Path) -> None:
    # before: exit 2, "passprice: error: locks/alias.lock.toml: a symbolic link at …; passprice diff compares the
    # files themselves (commit the file, or the folder's files, in place of the link)", check exit 0 with a warning
    path = _registry(tmp_path)
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "locks" / "r1-copy.lock.toml")  # a copy on main
    commit_all(path, "a lock and its copy")
    git(path, "checkout", "-q", "-b", "pr")
    os.symlink(f"{R1}.lock.toml", path / "locks" / "alias.lock.toml")
    warned = _check_warnings(path)
    assert warned[:2] == [LINK_LINE, COPY_LINE]  # and the standing line of the undated sources
    assert len(warned) == 3 and warned[2].startswith("22 source records say retrieved = \"unknown\"")
    for head in (None, "HEAD"):  # the work tree, then the committed revision
        if head == "HEAD":
            commit_all(path, "a second name of the lock")
        status, (text, markdown, as_json) = renderings(path, "text", "markdown", "json", head=head)
        assert status == 0, text  # the README: a warning of check on HEAD is shown, ⚠️, never failing the review
        out = json.loads(as_json)
        assert out["exit_status"] == 0
        assert out["head_warnings"] == warned  # check's lines, in its words and order
        assert out["duplicate_locks"] == []  # the change touches neither file of the pair
        lines = text.splitlines()
        assert lines[0].startswith("⚠️ passprice diff: main (")
        assert lines[1] == "no fact changed; no lock affected; 3 warnings of check on HEAD; 2 locks unaffected"
        assert f"  warning: {LINK_LINE}" in lines and f"  warning: {COPY_LINE}" in lines
        assert markdown.startswith("⚠️ **passprice diff**")
        assert "a symbolic link" in markdown and "duplicates" in markdown


@pytest.mark.parametrize("target", ["nowhere.lock.toml", "../facts/cards/h200_sxm_141gb.toml", "r1.toml",
                                    "sub/r1-qwen7b-h200.lock.toml"])
def test_1_a_link_that_is_no_second_name_of_a_lock_beside_it_is_still_refused(tmp_path: Path, target: str) -> None:
    path = _registry(tmp_path)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    os.symlink(target, path / "locks" / "alias.lock.toml")

    def review(*revisions: str) -> list[str]:
        done = subprocess.run([shutil.which("passprice") or "passprice", "--root", str(path), "diff", *revisions],
                              cwd=path, capture_output=True, text=True, check=False)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        return done.stderr.splitlines()

    said = ("passprice: error: locks/alias.lock.toml: a symbolic link{}; passprice diff compares the files "
            "themselves (commit the file, or the folder's files, in place of the link)")
    assert review("main") == [said.format("")]
    sha = commit_all(path, "a link")
    assert review("main", "pr") == [said.format(f" at {sha[:12]}")]


def test_1_a_copy_the_change_adds_is_named_under_its_own_heading_once(tmp_path: Path) -> None:
    path = _registry(tmp_path)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "locks" / "r1-copy.lock.toml")
    commit_all(path, "a copy")
    warned = _check_warnings(path)
    assert warned[0] == COPY_LINE and len(warned) == 2 and "retrieved = \"unknown\"" in warned[1]
    status, (text, as_json) = renderings(path, "text", "json")
    assert status == 0, text
    out = json.loads(as_json)
    # check's other warning, the undated sources, is listed beside the copy (tests/test_odds172.py: the count is
    # check's, "2 warnings of check on HEAD (1 under locks duplicating another)")
    assert out["duplicate_locks"] == [COPY_LINE] and out["head_warnings"] == warned[1:]
    assert text.count("duplicates locks/r1-qwen7b-h200.lock.toml") == 1


# --- (2) one flattening -------------------------------------------------------------------------------------------


def test_2_a_text_and_its_one_part_flatten_alike() -> None:
    from passprice.sources import _BARRIER, _excerpt_lines, _excerpt_parts

    data = ("# a header line\n== src docs/a.md https://example.invalid ==\n"
            "1\tGPU  Memory\n2\tBandwidth 4.8TB/s\n7\t141GB\tHBM3e\nplain  line\x01here\n")
    _, pages, paged, flat = _excerpt_lines(data, "src")
    assert flat == f"GPU Memory Bandwidth 4.8TB/s {_BARRIER} 141GB HBM3e plain line here"
    assert pages == {1: "GPU Memory", 2: "Bandwidth 4.8TB/s", 7: "141GB HBM3e"} and not paged
    assert _excerpt_parts(data, "src") == {"docs/a.md": flat}
    plain = "== src docs/a.md https://example.invalid ==\nno  numbered\x01line\n"
    assert _excerpt_lines(plain, "src")[3] == _excerpt_parts(plain, "src")["docs/a.md"] == "no numbered line"


def test_2_the_flattening_is_written_once() -> None:
    source = (REPO / "src" / "passprice" / "sources.py").read_text(encoding="utf-8")
    assert source.count("lines whose numbers are not next to each other do not join") == 1


# --- (3) the history across versions that do not read ---------------------------------------------------------------


def _history(tmp_path: Path, *steps: str) -> tuple[list[str], list[dict[str, object]], list[str]]:
    """The H200 card's ``memory.bandwidth`` history after ``steps`` (each ``broken``, ``large`` or a value) were
    committed over the checkout's card (the first commit): its text's fact lines, ``--json``'s versions, the
    commits (oldest first)."""
    from test_history import CARD, CARD_FILE, git, registry, set_bandwidth

    root = registry(tmp_path)
    file = root / CARD_FILE
    good = file.read_text(encoding="utf-8")
    for step in steps:
        if step == "broken":
            file.write_text("[[[ broken\n", encoding="utf-8")
        elif step == "large":  # past the 256 KiB a card may hold: refused by its size, unread
            file.write_text(good + "#" * 300_000 + "\n", encoding="utf-8")
        else:
            file.write_text(good, encoding="utf-8")
            set_bandwidth(file, step)
        git(root, "commit", "-qam", step)
    done = subprocess.run(["git", "log", "--reverse", "--format=%H"], cwd=root, capture_output=True, text=True,
                          check=True)
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root)
    said = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    assert text.exit_code == said.exit_code == 0, text.output
    lines = [line for line in text.stdout.splitlines() if line.startswith("  ") and "TB/s" in line
             and not line.startswith("  source")]
    return lines, json.loads(said.stdout)["versions"], done.stdout.split()


def test_3_a_version_read_after_a_gap_says_what_changed_since_the_last_that_reads(tmp_path: Path) -> None:
    # before: "  5 TB/s (published)   value changed" after a broken and an over-cap version
    lines, versions, commits = _history(tmp_path, "broken", "large", "5")
    first = commits[0][:12]
    assert lines == [f"  5 TB/s (published)   reads again: value changed since {first}, the last version that "
                     "reads", "  4.8 TB/s (published)   new"]
    assert [v["changed"] for v in versions] == [["value"], [], [], ["new"]]
    assert "larger than 256 KiB" in str(versions[1]["error"]) and "does not read" in str(versions[2]["error"])


def test_3_the_same_fact_after_a_gap_names_the_version_it_matches(tmp_path: Path) -> None:
    # before: "  4.8 TB/s (published)   reads again" (a later version the same as one before the gap: which one?)
    lines, versions, commits = _history(tmp_path, "5", "broken", "5", "6")
    second = commits[1][:12]
    assert lines == ["  6 TB/s (published)   value changed",
                     f"  5 TB/s (published)   reads again: as at {second}, the last version that reads",
                     "  5 TB/s (published)   value changed", "  4.8 TB/s (published)   new"]
    assert [v["changed"] for v in versions] == [["value"], ["reads again"], [], ["value"], ["new"]]


def test_3_with_no_earlier_version_that_reads_it_cannot_be_told(tmp_path: Path) -> None:
    from test_history import CARD, CARD_FILE, git

    # a card whose first commit does not read: before, the next version said "new"
    root = tmp_path / "root"
    shutil.copytree(REPO / "facts", root / "facts")
    for folder in ("registry", "locks", "sources"):
        shutil.copytree(REPO / folder, root / folder)
    git(root, "init", "-q")
    good = (root / CARD_FILE).read_bytes()
    (root / CARD_FILE).write_text("[[[ broken\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "broken from the start")
    (root / CARD_FILE).write_bytes(good)
    git(root, "commit", "-qam", "mended")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert [v["changed"] for v in json.loads(result.stdout)["versions"]] == [["reads again"], []]
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root).stdout
    assert "  4.8 TB/s (published)   reads again: what changed cannot be told (no earlier version reads)\n" in text
    # uncommitted: the work tree's version after a last commit that does not read says the same of it
    (root / CARD_FILE).write_text("[[[ broken\n", encoding="utf-8")
    git(root, "commit", "-qam", "broken again")
    from test_history import set_bandwidth

    (root / CARD_FILE).write_bytes(good)
    set_bandwidth(root / CARD_FILE, "5")
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=root).stdout
    mended = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=root, capture_output=True, text=True,
                            check=True).stdout.strip()
    assert text.split("\n\n")[1].splitlines()[:2] == [
        "work tree  uncommitted changes",
        f"  5 TB/s (published)   reads again: value changed since {mended[:12]}, the last version that reads"]


# --- (4) the look-up bound's refusal counts spans and facts alike --------------------------------------------------


def test_4_a_rewritten_excerpt_s_facts_past_the_bound_are_counted_by_span_too(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_helpers import copy_root
    from test_bound147 import _git, _grow_excerpt, _junk

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    repo = copy_root(tmp_path)
    _git(repo, "init", "-q", "-b", "main")
    _junk(repo, 80)  # 649 quoted spans of the H200 page: 80 on each of its 8 locators, 9 by derivation inputs
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "80 found quotes a locator")
    _grow_excerpt(repo, 200_000)  # a look-up of HEAD's excerpt: 401,087 characters; 649 of them pass the bound
    _git(repo, "commit", "-qam", "the excerpt rewritten")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 1, result.output
    (reason,) = [line for line in result.stderr.splitlines() if "quotes not checked:" in line]
    # before: "quotes not checked: 8 facts (…)", where changed facts' read "N quoted spans of M facts (…)"
    assert reason.startswith("passprice: refused: quotes not checked: 649 quoted spans of 8 facts "
                             "(h200_sxm_141gb:memory.capacity, "), reason
    assert "8 facts' quotes not checked (past the review's bound)" in result.stdout.splitlines()[1]
