"""left98: session 44's leftovers of issue 13, each reproducer built in its test.

- (1) ``reproduce LOCK`` said "the pinned checkpoint … is gone" when the entry the lock names is there and does not
  parse (``audit`` said "does not read (…)"): the verdict now names the entry's file and its problem.
- (2) ``lock --name X`` wrote its lock (exit 0) beside a lock file of ``locks/`` holding ``"X"`` whose ``[lock]``
  table does not parse (passed over; ``check`` then named it, and once mended the two shared a name): refused now,
  naming that file and its problem.
- (3) the review of a first-format lock edited by hand whose name another current-format lock of the folder carries
  said "restore it from BASE, then re-lock it with passprice lock --update -o PATH", which is refused there (exit 2):
  it now says what ``check`` and ``reproduce`` say (``locks.first_format_clash``, the one place of that advice).
- (4) ``lock R1 -o l.json`` at the registry's top said ``l.json (relative to the working folder: l.json): …``, the
  name twice: the note is said only where its path is spelled otherwise than the name typed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.registry import embedded_root

R1 = "r1-qwen7b-h200"
ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"


def test_1_a_checkpoint_entry_that_does_not_parse_is_not_said_to_be_gone(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / f"{ENTRY}.toml"
    lines = entry.read_text(encoding="utf-8").count("\n")
    with entry.open("a", encoding="utf-8") as f:
        f.write("broken = = 1\n")
    result = invoke("reproduce", f"locks/{R1}.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    problem = (f"registry/checkpoints/{ENTRY}.toml: not valid TOML: Invalid value (at line {lines + 1}, "
               "column 10)")
    assert result.stdout.splitlines()[1] == (
        f"  cannot be reproduced here: the pinned checkpoint's entry does not read ({problem}), and no other entry "
        "holds the pinned content (checkpoint, below)")
    assert "is gone" not in result.stdout
    # audit said it all along, and still does: the two agree
    audit = invoke("audit", f"locks/{R1}.lock.toml", root=root)
    assert audit.exit_code == 1, audit.output
    assert f"checkpoint {ENTRY}: does not read ({problem})" in audit.stderr
    # an entry really absent is said so, with the fix first where passprice's own registry holds it (walk107); the
    # copy is no git work tree, so whether it was ever here is not known, and not said "gone" (tests/test_left122.py)
    entry.unlink()
    result = invoke("reproduce", f"locks/{R1}.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[1] == (
        f"  cannot be reproduced here: the pinned checkpoint {ENTRY} is not in this registry (no git history here says "
        "whether it ever was); passprice's own registry "
        f"holds it: cp {embedded_root().path / 'registry' / 'checkpoints' / f'{ENTRY}.toml'} {entry}, and run this "
        "again")


def test_2_a_lock_file_that_does_not_parse_and_holds_the_name_refuses_the_name(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    locks = root / "locks"
    # the only current-format lock named R1 broken in its [lock] table: passed over, `lock --name R1` wrote its lock
    text = (locks / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (locks / f"{R1}.lock.toml").unlink()
    line = text[:text.index("\n[lock]\n")].count("\n") + 3
    (locks / "other.lock.toml").write_text(text.replace("\n[lock]\n", "\n[lock]\nbroken = = 1\n"), encoding="utf-8")
    lines = bad("lock", R1, "--name", R1, "-o", str(locks / "new.lock.toml"), root=root)
    assert lines == [
        f"passprice: error: {locks}/new.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of "
        "locks/other.lock.toml, which does not read (locks/other.lock.toml: not valid TOML: Invalid value (at line "
        f"{line}, column 10)), though its [lock] table's name reads 'r1-qwen7b-h200' at line {line + 4}, read line "
        "by line: a lock's name must be unique (`passprice check` refuses the two once it is mended): fix it or "
        "remove it, or lock this one under another name (--name NAME, or -o locks/NAME.lock.toml); nothing written"]
    assert not (locks / "new.lock.toml").exists()
    # another name is written; the broken file mended, the name clash is the one refused as before
    result = invoke("lock", R1, "--name", "fresh", "-o", str(locks / "fresh.lock.toml"), root=root)
    assert result.exit_code == 0, result.output
    # (another serving's lock under R1's name: R1's own would be a copy of the mended file, let by as check lets one)
    (locks / "other.lock.toml").write_text(text, encoding="utf-8")
    bad("lock", "gemma3-270m-h100", "--name", R1, "-o", str(locks / "new.lock.toml"), root=root,
        says="lock.name: 'r1-qwen7b-h200' is also the name of locks/other.lock.toml, which pins other facts")


def _first_format_review(tmp_path: Path, beside_r1: bool) -> str:
    """The review line of ``locks/old.lock.toml``, a first-format lock named R1 edited by hand on HEAD (its card's
    title), with R1's current-format lock beside it or not."""
    from passprice.registry import Root
    from passprice.review import diff
    from test_diff import commit_all, git

    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, repo / folder)
    (repo / "locks").mkdir()
    if beside_r1:
        shutil.copy(REPO / "locks" / f"{R1}.lock.toml", repo / "locks")
    old = repo / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    git(repo, "switch", "-q", "-c", "pr")
    text = old.read_text(encoding="utf-8")
    edited = text.replace('title = "NVIDIA H200 SXM 141GB"', 'title = "NVIDIA H200 SXM 141 GB"', 1)
    assert edited != text
    old.write_text(edited, encoding="utf-8")
    commit_all(repo, "hand edit")
    d = diff(Root(repo), "main", None)
    lock = next(lock for lock in d.locks if lock.path == "locks/old.lock.toml")
    assert lock.head_unread
    return lock.review()


def test_3_the_review_of_a_hand_edited_first_format_lock_whose_name_is_taken_says_the_relock_that_works(
        tmp_path: Path) -> None:
    # before: "… restore it from BASE, then re-lock it with passprice lock --update -o locks/old.lock.toml", and that
    # update exits 2 ("lock.name: 'r1-qwen7b-h200' is also the name of locks/r1-qwen7b-h200.lock.toml: --update …")
    way = ("re-lock it under its file's name: `passprice lock r1-qwen7b-h200 --force -o locks/old.lock.toml` (the "
           "default policy; `lock --update` keeps its name, 'r1-qwen7b-h200', which locks/r1-qwen7b-h200.lock.toml "
           "holds, and is refused), or remove it")
    assert _first_format_review(tmp_path / "beside", True) == f"HEAD's lock file does not read (edited by hand?): {way}"
    # what check says of that file on HEAD: the same words (one place)
    root = copy_root(tmp_path / "check")
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    text = (REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (root / "locks" / "old.lock.toml").write_text(
        text.replace('title = "NVIDIA H200 SXM 141GB"', 'title = "NVIDIA H200 SXM 141 GB"', 1), encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and checked.stderr.rstrip().endswith(way), checked.stderr
    # alone in its folder, its --update is let by: restore and update, as before
    assert _first_format_review(tmp_path / "alone", False) == (
        "HEAD's lock file does not read (edited by hand?): restore it from BASE, then re-lock it with passprice lock "
        "--update -o locks/old.lock.toml")


def _lock_lines(monkeypatch: pytest.MonkeyPatch, at: Path, *args: str) -> list[str]:
    """``passprice ARGS…`` run in the folder ``at`` with no ``--root`` (the registry found around it): bad input, its
    error lines."""
    from passprice.cli import cli

    monkeypatch.chdir(at)
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2 and result.stdout == "", result.output
    return result.stderr.splitlines()


def test_4_the_relative_note_is_said_only_where_it_adds_something(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_root(tmp_path)
    rest = (": inside the registry, locks are read from {}NAME.lock.toml only: a lock written here would guard nothing "
            "(check, price and diff never read it); write it there (the default), or outside the registry; and its "
            "name ends in .json (a name that says JSON): name it NAME.lock.toml")
    # at the top: the name as typed is the file's name below the root; before, "l.json (relative to the working
    # folder: l.json)"
    assert _lock_lines(monkeypatch, root, "lock", R1, "-o", "l.json") == [
        "passprice: error: l.json" + rest.format("locks/")]
    assert _lock_lines(monkeypatch, root, "lock", R1, "-o", "locks/l.json") == [
        "passprice: error: locks/l.json: locks are read from locks/NAME.lock.toml only, and this name ends in .json (a "
        "name that says JSON): a lock written so would guard nothing (check, price and diff never read it); name it "
        "NAME.lock.toml"]
    # from a folder below it, the note says where in the registry the name lands, as the other paths are named
    assert _lock_lines(monkeypatch, root / "registry", "lock", R1, "-o", "l.json") == [
        "passprice: error: l.json (relative to the working folder: ../registry/l.json)" + rest.format("../locks/")]
    # --root typed from above it: the name typed is the path below it as typed
    assert _lock_lines(monkeypatch, tmp_path, "--root", "root", "lock", R1, "-o", "root/l.json") == [
        "passprice: error: root/l.json" + rest.format("root/locks/")]
    # outside the registry the note names the file absolute, as before
    from passprice.cli import cli

    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["lock", R1, "-o", "../x.lock.toml"])
    assert result.exit_code == 0, result.output
    assert f"was written to ../x.lock.toml (relative to the working folder: {tmp_path}/x.lock.toml), outside " \
        f"registry {root}" in result.stderr
