"""What ``diff`` and ``fact show --history`` read from git and the work tree, as an attacker shapes it (issue 13,
the git-reading escapes): a file is sized before it is read and refused past the TOML cap naming ``revision:path``
and its size; a file passprice never parses is never read; a submodule is refused by name; a shallow clone's cut is
said, never taken for the start of a history or for a missing ``main``; a commit of thousands of files costs one
``git cat-file --batch``. Each test builds its reproducer: sparse files (``truncate``) and tiny repositories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from passprice import gitread, schema
from passprice.review import Checkout, sides

CARD = "h200_sxm_141gb"
CARD_FILE = f"facts/cards/{CARD}.toml"
#: The cap the tests that commit an oversized blob lower the TOML cap to (every registry file is under 130 KB), so
#: the blob git stores is 1 MiB, not 64.
CAP = 1 << 20


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True)  # fmt: skip
    return done.stdout.decode().strip()


def registry(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the registry")
    return root


def sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes holding no data blocks (``truncate``): nothing is allocated to make it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)


def set_bandwidth(file: Path, value: str) -> None:
    text = file.read_text(encoding="utf-8")
    at = text.index("value = ", text.index("[memory.bandwidth]"))
    file.write_text(text[:at] + f"value = {value}" + text[text.index("\n", at):], encoding="utf-8")


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """Every batch ``gitread.read_blobs`` is asked to read (blob id → size): what git hands passprice whole."""
    asked: list[dict[str, int]] = []
    real = gitread.read_blobs

    def reading(top: Path, sizes: dict[str, int]) -> dict[str, bytes]:
        asked.append(dict(sizes))
        return real(top, sizes)

    monkeypatch.setattr(gitread, "read_blobs", reading)
    return asked


# --- 1. size ---------------------------------------------------------------------------------------------------------


def test_a_blob_past_the_cap_is_refused_by_revision_path_and_size_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[dict[str, int]]
) -> None:
    """Before: a commit adding 400 MB of zeros under facts/cards/ (607 KiB packed) took 16 s and 813 MB RSS: every
    blob was read whole by ``git cat-file --batch`` before its size was known. Now ``ls-tree -l`` sizes it and the
    review is refused in one line; the blob never reaches ``cat-file --batch``."""
    monkeypatch.setattr(schema, "MAX_TOML_BYTES", CAP)
    root = registry(tmp_path)
    git(root, "checkout", "-qb", "pr")
    sparse(root / "facts" / "cards" / "zeros.toml", CAP + 1)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "zeros")
    sha = git(root, "rev-parse", "HEAD")
    bad("diff", "main", "pr", root=root,
        says=f"{sha[:12]}:facts/cards/zeros.toml: 1,048,577 bytes, past the 1,048,576-byte cap on a passprice file "
             "(not read)")  # fmt: skip
    assert all(size <= CAP for batch in spy for size in batch.values())


def test_work_tree_files_are_sized_by_stat_and_one_never_parsed_is_never_read(tmp_path: Path) -> None:
    """Before: ``truncate -s 1G facts/cards/x.bin; passprice diff`` read the gigabyte (12 s, 1.1 GB RSS; 3 GB under
    ``ulimit -v`` ended in a MemoryError traceback). Now a .bin is not read at all (3 GiB here, sparse) and a .toml
    past the real 64 MiB cap is refused by its ``stat`` size."""
    root = registry(tmp_path)
    sparse(root / "facts" / "cards" / "x.bin", 3 << 30)
    result = invoke("diff", "main", root=root)
    assert result.exit_code == 0, result.output
    assert "no changes to facts, registry, locks or the pricing model" in result.stdout
    assert "x.bin" not in result.output
    sparse(root / "facts" / "cards" / "y.toml", 1 << 30)
    bad("diff", "main", root=root,
        says=f"{root / 'facts' / 'cards' / 'y.toml'}: 1,073,741,824 bytes, past the 67,108,864-byte cap on a "
             "passprice file (not read)")  # fmt: skip
    (root / "facts" / "cards" / "y.toml").unlink()
    # The side's own code: a module the pricing-model digest would hash is sized the same way.
    (root / "src" / "passprice").mkdir(parents=True)
    (root / "src" / "passprice" / "__init__.py").write_text("")
    sparse(root / "src" / "passprice" / "big.py", 1 << 30)
    bad("diff", "main", root=root,
        says=f"{root / 'src' / 'passprice' / 'big.py'}: 1,073,741,824 bytes, past the 67,108,864-byte cap")


def test_a_version_past_the_cap_in_history_is_shown_as_such_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[dict[str, int]]
) -> None:
    """Before: a 300 MB version of a card in its history took ``fact show --history`` to 909 MB. Now each blob is
    sized with ``cat-file --batch-check``; one past the cap is a version that does not read, named
    ``commit:path`` with its size; the work tree's file (1 GiB, sparse, the real cap) is sized by ``stat``."""
    root = registry(tmp_path)
    card = root / CARD_FILE
    kept = card.read_bytes()
    sparse(card, 2 * CAP)
    git(root, "commit", "-qam", "huge")
    huge = git(root, "rev-parse", "HEAD")
    card.write_bytes(kept)
    git(root, "commit", "-qam", "back")
    sparse(card, 1 << 30)
    monkeypatch.setattr(schema, "MAX_TOML_BYTES", CAP)
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=root)
    assert result.exit_code == 0, result.output
    found = [(v["subject"], v["error"], v["changed"]) for v in json.loads(result.stdout)["versions"]]
    assert found == [
        ("uncommitted changes",
         f"{card}: 1,073,741,824 bytes, past the 1,048,576-byte cap on a passprice file (not read)", []),
        ("back", None, ["reads again"]),
        ("huge", f"{huge[:12]}:{CARD_FILE}: 2,097,152 bytes, past the 1,048,576-byte cap on a passprice file "
                 "(not read)", []),
        ("the registry", None, ["new"]),
    ]  # fmt: skip
    assert spy and all(size <= CAP for batch in spy for size in batch.values())


# --- 2. submodules ---------------------------------------------------------------------------------------------------


def test_a_submodule_is_refused_by_name_in_diff_and_history(tmp_path: Path) -> None:
    """Before: with facts/cards made a submodule, ``diff`` reported "238 facts changed in 17 files; 8 locks
    affected" (every card "added" — ``materialize`` dropped the submodule entry) and ``--history`` showed the work
    tree's file as "changed: new". Now both refuse it by name (exit 2)."""
    root = registry(tmp_path)
    main = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "pr")
    git(root, "rm", "-rq", "--cached", "facts/cards")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{main},facts/cards")  # a gitlink, not checked out
    git(root, "commit", "-qm", "cards as a submodule")
    pr = git(root, "rev-parse", "HEAD")
    what = "passprice reads no submodules (keep the files in this repository: git rm --cached facts/cards"
    bad("diff", "main", "pr", root=root, says=f"facts/cards: a git submodule at {pr[:12]}; {what}")
    bad("diff", root=root, says=f"facts/cards: a git submodule; {what}")  # the work tree: the index holds it
    bad("fact", "show", CARD, "memory.bandwidth", "--history", root=root,
        says=f"facts/cards: a git submodule at HEAD; {what}")  # fmt: skip
    git(root, "init", "-q", "facts/cards")  # checked out: a folder with its own .git
    bad("fact", "show", CARD, "memory.bandwidth", "--history", root=root, says=f"facts/cards: a git submodule; {what}")
    bad("diff", "main", str(root), root=root, says=f"facts/cards: a git submodule; {what}")


# --- 3. shallow clones -----------------------------------------------------------------------------------------------


def test_a_shallow_clone_says_where_its_history_is_cut(tmp_path: Path) -> None:
    """Before: in ``git clone --depth 1`` of two commits (bandwidth 4.8, then 4.9) the history printed "1 version …
    4.9 TB/s changed: new", exit 0 — a first citation that is not one. Now the cut is said, as for MAX_COMMITS."""
    origin = registry(tmp_path / "o")
    set_bandwidth(origin / CARD_FILE, "4.9")
    git(origin, "commit", "-qam", "4.9")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    tip = git(clone, "rev-parse", "HEAD")
    result = invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=clone)
    assert result.exit_code == 0, result.output
    (only,) = json.loads(result.stdout)["versions"]
    why = f"a shallow clone: history cut at {tip[:12]}; git fetch --unshallow (or fetch-depth: 0 in actions/checkout)"
    assert (only["fact"]["value"], only["changed"], only["older_not_read"]) == (4.9, [], True)
    assert only["older_not_read_why"].startswith(why)
    text = invoke("fact", "show", CARD, "memory.bandwidth", "--history", root=clone).stdout.splitlines()
    assert text[0].startswith(f"{CARD} memory.bandwidth ({CARD_FILE}): 1 version (older history not read: {why}")
    assert text[3] == "  4.9 TB/s (published)   change unknown (older history not read)"  # left53: "changed: unknown"
    # The full repository: both versions, the first one "new", nothing cut.
    full = json.loads(invoke("fact", "show", CARD, "memory.bandwidth", "--history", "--json", root=origin).stdout)
    assert [(v["fact"]["value"], v["changed"], v["older_not_read"]) for v in full["versions"]] == [
        (4.9, ["value"], False), (4.8, ["new"], False)]  # fmt: skip


def test_a_shallow_clone_without_the_merge_base_refuses_the_default_base_by_name(tmp_path: Path) -> None:
    """Before: a CI checkout (depth 1) of a pull request, main moved on, fell back to comparing HEAD with the work
    tree — a review of nothing, exit 0. Now the missing merge base (or branch) is named, exit 2."""
    origin = registry(tmp_path / "o")
    git(origin, "checkout", "-qb", "pr")
    set_bandwidth(origin / CARD_FILE, "5.0")
    git(origin, "commit", "-qam", "pr: 5.0")
    git(origin, "checkout", "-q", "main")
    set_bandwidth(origin / CARD_FILE, "4.9")
    git(origin, "commit", "-qam", "main: 4.9")
    both = tmp_path / "both"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "pr", f"file://{origin}", str(both))
    bad("diff", root=both, says="origin/main: no merge base with HEAD in this shallow clone")
    bad("diff", "origin/main~1", root=both, says="origin/main~1: neither a folder nor a revision of the git checkout")
    assert "(this is a shallow clone: older commits are not here" in bad("diff", "origin/main~1", root=both)[0]
    alone = tmp_path / "alone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "pr", f"file://{origin}", str(alone))
    bad("diff", root=alone,
        says=f"{alone}: a shallow clone with no main, origin/main, master, origin/master branch: the default BASE")
    # Given BASE by name, the same clone reviews (exit 1: the pull request's 5.0 leaves derived shares stale).
    result = invoke("diff", "HEAD", root=alone)
    # ❌ heads a failing review (tests/test_walk108.py)
    assert result.exit_code == 1 and result.stdout.startswith("❌ passprice diff: HEAD ("), result.output


# --- 4. many files ---------------------------------------------------------------------------------------------------


def test_a_commit_of_thousands_of_files_costs_one_cat_file_and_reads_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: list[dict[str, int]]
) -> None:
    """Before: 20,000 tiny files in one commit made ``diff main pr`` take 3.9 s CPU, 16 s wall: each was read and
    written into the temporary side, and compared. Now the folders passprice compares are listed once
    (``ls-tree -r -l``) and only the files it parses are read, all in one ``git cat-file --batch``; 2,000 files
    here, none of which it parses (a deeper folder, a .txt, a .bin)."""
    root = registry(tmp_path)
    git(root, "checkout", "-qb", "pr")
    many = root / "facts" / "cards" / "many"
    many.mkdir()
    for i in range(1000):
        (many / f"f{i}.toml").write_text(f"x = {i}\n")
        (root / "facts" / "cards" / f"n{i}.txt").write_text(f"{i}\n")
    (root / "facts" / "cards" / "bogus.toml").mkdir()  # a folder named like a card: only a deeper file in it
    (root / "facts" / "cards" / "bogus.toml" / "inner").write_text("x\n")
    set_bandwidth(root / CARD_FILE, "4.9")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "many")
    calls: list[list[str]] = []
    real = gitread.run_git

    def counting(cwd: Path, args: list[str], stdin: bytes | None = None, timeout: float | None = None) -> bytes:
        calls.append(list(args))
        return real(cwd, args, stdin, timeout=timeout)

    monkeypatch.setattr(gitread, "run_git", counting)
    monkeypatch.setattr(sides, "_run_git", counting)  # Checkout.materialize reads it there
    side = tmp_path / "side"
    checkout, pr = Checkout.of(root), git(root, "rev-parse", "pr")
    calls.clear()
    files = checkout.materialize(pr, side)
    # and a second `cat-file --batch` for the stored excerpts the source records just read name (their bytes
    # reviewed since tests/test_walk128.py: the shipped registry's)
    assert [c[0] for c in calls] == ["ls-tree", "cat-file", "cat-file"] and calls[1][1] == calls[2][1] == "--batch"
    assert not any("many/" in rel or rel.endswith(".txt") for rel in files)
    assert len(spy) == 2 and 0 < len(spy[0]) <= len(files)
    assert not (side / "facts" / "cards" / "n0.txt").exists()
    # The cards, the README a source names by path (its bytes: a stored excerpt is compared with the document it
    # copies, read in the excerpts' cat-file, tests/test_fix56.py; it was written empty), and the
    # folders holding unread files (a folder named bogus.toml is still there for check to report), their .toml files
    # named but empty (check's stray-folder rule counts their names: slip round 10), nothing else written.
    assert sorted(os.listdir(side / "facts" / "cards")) == sorted(
        ["README.md", "many", *(p.name for p in (root / "facts" / "cards").glob("*.toml"))])
    assert sorted(os.listdir(side / "facts" / "cards" / "many")) == sorted(f"f{i}.toml" for i in range(1000))
    assert {(side / "facts" / "cards" / "many" / "f7.toml").read_bytes()} == {b""}
    assert os.listdir(side / "facts" / "cards" / "bogus.toml") == []
    readme = "facts/cards/README.md"
    assert (side / readme).read_bytes() == (root / readme).read_bytes()
    result = invoke("diff", "main", "pr", root=root)
    assert result.stdout.splitlines()[1].startswith("1 fact changed in 1 file"), result.output
    assert result.exit_code == 2 and "facts/cards/bogus.toml: is a folder, not a card file" in result.stderr
