"""The review's walk of a branch's re-locks made cheaper, its answers the same (issue 16; issue 13's review use).

``passprice diff a0187f68 main`` (a BASE from before the list of pricing models, 2,444 commits back) asks the
history behind every entry of HEAD's list (:func:`passprice.review.impacts._branch_records`): it ran one ``git ls-tree``
for each of the 327 commits that changed ``locks/``, parsed 2,983 lock blobs (1,507 distinct), asked 236 ``git
merge-base --is-ancestor`` and wrote out and digested 145 commits' code, every time: 13.7 s of the review's 17 s of CPU
(docs/PERFORMANCE.md, round review137). Now:

1. each commit's ``locks/`` is listed from its tree objects, all commits in three or four git processes
   (:func:`~passprice.review.impacts._lock_listings`), the same blobs as ``ls-tree -r -l`` gives (test_1_*);
2. ancestry is one ``git rev-list`` an end point (:class:`~passprice.review.impacts._Ancestry`), the same answers as
   ``merge-base --is-ancestor`` (test_2_*);
3. each distinct lock blob is parsed once, and its ``[lock]`` pin kept in the cache by blob id; each commit's code
   is digested once a code folder (its tree id), and kept in the cache under it: a review asked again parses and
   digests nothing (test_3_*);
4. a committed lock whose ``pricing_model`` is a table or an array was a ``TypeError`` (a traceback) in the walk;
   it is a lock that pins nothing (test_4_*).

Outputs are compared whole: the same review with an empty cache and with the kept answers (test_3_*).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import test_slip_57
from cli_helpers import REPO, invoke
from test_diff import commit_all, git
from test_slip_57 import LISTED

#: slip 57's branch that re-locked twice (a fixture of that file, used here too)
twice_repo = test_slip_57.twice_repo


#: A lock file's ``[lock]`` table alone: what the walk reads of it.
LOCK_A = '[lock]\npricing_model = "sha256:aa"\ndigest = "sha256:1"\n'


def _run(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _ls_tree_locks(top: Path, prefix: str, commit: str, cap: int) -> dict[str, int]:
    """What the walk read before: one ``git ls-tree -r -l`` a commit, its ``*.lock.toml`` blobs within ``cap``."""
    listing = subprocess.run(["git", "ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", f"{prefix}locks"],
                             cwd=top, check=True, capture_output=True).stdout
    sizes = {}
    for record in os.fsdecode(listing).split("\0"):
        meta, _, name = record.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit() and name.endswith(".lock.toml") \
                and int(parts[3]) <= cap:
            sizes[parts[2]] = int(parts[3])
    return sizes


@pytest.fixture
def odd_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository whose ``reg/locks`` takes every shape over five commits: locks beside a text file, in a folder
    nested 40 deep, a symbolic link named as a lock, a submodule entry named as one, a lock of 300 bytes (past the
    test's cap of 200), the same blob under two names; then ``locks`` a file; then no ``locks``; then locks again.
    Returns the repository and its commits, newest first."""
    root = tmp_path / "repo"
    locks = root / "reg" / "locks"
    locks.mkdir(parents=True)
    _run(root, "init", "-q", "-b", "main")
    _run(root, "config", "user.email", "t@example.com")
    _run(root, "config", "user.name", "t")
    (locks / "a.lock.toml").write_text(LOCK_A)
    (locks / "copy.lock.toml").write_text(LOCK_A)
    (locks / "notes.txt").write_text("not a lock\n")
    deep = locks.joinpath(*[f"d{i}" for i in range(40)])
    deep.mkdir(parents=True)
    (deep / "deep.lock.toml").write_text('[lock]\npricing_model = "sha256:bb"\ndigest = "sha256:2"\n')
    (locks / "big.lock.toml").write_text("# " + "x" * 300 + "\n")
    os.symlink("a.lock.toml", locks / "link.lock.toml")
    _run(root, "add", "-A")
    _run(root, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},reg/locks/mod.lock.toml")
    _run(root, "commit", "-q", "-m", "every shape")
    _run(root, "rm", "-q", "--cached", "reg/locks/mod.lock.toml")
    shutil.rmtree(locks)
    (root / "reg" / "locks").write_text("a file\n")
    _run(root, "add", "-A")
    _run(root, "commit", "-q", "-m", "locks a file")
    (root / "reg" / "other").write_text("x\n")
    _run(root, "rm", "-q", "reg/locks")
    _run(root, "add", "-A")
    _run(root, "commit", "-q", "-m", "no locks")
    locks.mkdir()
    (locks / "a.lock.toml").write_text('[lock]\npricing_model = "sha256:aa"\ndigest = "sha256:3"\n')
    _run(root, "add", "-A")
    _run(root, "commit", "-q", "-m", "locks again")
    return root, _run(root, "rev-list", "HEAD").split()


# --- 1. each commit's locks, listed in a few git processes ----------------------------------------------------------


@pytest.mark.parametrize("prefix", ["reg/", "re[g]/"])
def test_1_the_listing_is_ls_tree_s_in_every_shape(odd_repo: tuple[Path, list[str]], prefix: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``re[g]/`` (pathspec magic) is listed the ``ls-tree`` way; ``reg/`` from the trees: the same blobs."""
    from passprice import schema
    from passprice.review import Checkout
    from passprice.review.impacts import _lock_listings

    root, commits = odd_repo
    if prefix != "reg/":
        shutil.move(root / "reg", root / "re[g]")
        _run(root, "add", "-A")
        _run(root, "commit", "-q", "-m", "renamed")
        commits = _run(root, "rev-list", "HEAD").split()
    monkeypatch.setattr(schema, "MAX_TOML_BYTES", 200)
    got = _lock_listings(Checkout(root, prefix), commits)
    want = {c: _ls_tree_locks(root, prefix, c, 200) for c in commits}
    assert got == want
    every = want[commits[-1]] if prefix == "reg/" else want[commits[0]]  # (re[g]/ holds the last commit's)
    # the hand count of the first commit: a, its copy (one blob), the deep one and the link; not big, mod, notes
    assert sorted(every.values()) == ([len("a.lock.toml"), len(LOCK_A), len(LOCK_A)] if prefix == "reg/"
                                      else [len(LOCK_A.replace("1", "3"))])


def test_1_the_listing_of_this_repository_s_history_is_ls_tree_s() -> None:
    """The 40 newest commits that changed ``locks/`` of passprice's own history, listed both ways."""
    from passprice import schema
    from passprice.review import Checkout
    from passprice.review.impacts import _lock_listings

    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    top = Path(_run(REPO, "rev-parse", "--show-toplevel").strip())
    prefix = _run(REPO, "rev-parse", "--show-prefix").strip()
    commits = _run(top, "rev-list", "--full-history", "--max-count=40", "HEAD", "--", f"{prefix}locks").split()
    got = _lock_listings(Checkout(top, prefix), commits)
    assert got == {c: _ls_tree_locks(top, prefix, c, schema.MAX_TOML_BYTES) for c in commits}
    assert sum(len(v) for v in got.values()) >= 40


def test_1_the_listing_takes_a_few_git_processes_whatever_the_commits(odd_repo: tuple[Path, list[str]],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: one ``ls-tree`` a commit (327 in the old-BASE review). Now: the commits' folders in one
    ``--batch-check``, their trees level by level in ``cat-file --batch`` (here 41 levels: the folder nested 40
    deep), the blobs' sizes in one ``--batch-check``: no ``ls-tree``."""
    from passprice import gitread
    from passprice.review import impacts, sides

    root, commits = odd_repo
    calls: list[list[str]] = []
    run, read = sides._run_git, gitread.read_blobs
    monkeypatch.setattr(impacts, "_run_git", lambda top, args, *a, **k: calls.append(list(args)) or run(top, args, *a,
                                                                                                          **k))
    batches: list[int] = []
    monkeypatch.setattr(gitread, "read_blobs", lambda top, sizes, *a, **k: batches.append(len(sizes)) or read(
        top, sizes, *a, **k))
    impacts._lock_listings(sides.Checkout(root, "reg/"), commits * 20)  # each commit 20 times: asked once each
    # and each level's trees sized first, one --batch-check a level (tests/test_blobcap169.py: a folder's tree is
    # read only within diff.LOCK_TREE_BYTES), so a folder nested 40 deep takes 41 more git processes
    assert [c[0] for c in calls] == ["cat-file"] * 42 and len(batches) == 41
    assert calls[0][1] == "--batch-check=%(objectname) %(objecttype)"
    assert {c[1] for c in calls[1:]} == {"--batch-check=%(objectname) %(objecttype) %(objectsize)"}


# --- 2. ancestry, one rev-list an end point ---------------------------------------------------------------------------


def test_2_ancestry_answers_as_merge_base_does(tmp_path: Path) -> None:
    from passprice.review.impacts import _Ancestry

    root = tmp_path / "repo"
    root.mkdir()
    _run(root, "init", "-q", "-b", "main")
    _run(root, "config", "user.email", "t@example.com")
    _run(root, "config", "user.name", "t")
    for i in range(3):
        _run(root, "commit", "-q", "--allow-empty", "-m", f"m{i}")
    _run(root, "checkout", "-q", "-b", "side", "HEAD~1")
    _run(root, "commit", "-q", "--allow-empty", "-m", "s")
    _run(root, "checkout", "-q", "main")
    _run(root, "merge", "-q", "--no-ff", "-m", "merge", "side")
    every = _run(root, "rev-list", "--all").split()
    ancestry = _Ancestry(root)
    for a in every:
        for b in every:
            said = subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=root).returncode == 0
            assert ancestry.holds(a, b) is said, (a, b)
    assert len(ancestry.reach) == len(every)  # one rev-list an end point
    assert ancestry.holds(every[0], "0" * 40) is False  # git cannot say: False, as before


# --- 3. each blob parsed once, each code digested once; kept for the next review ---------------------------


def test_3_a_review_asked_again_parses_and_digests_nothing_and_says_the_same(
        twice_repo: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """slip 57's branch that re-locked twice: its review with an empty cache digests the first code once and parses
    each lock blob once; asked again, none; both say the same, byte for byte, text and JSON."""
    from passprice.review import impacts, sides

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    parsed: list[bytes] = []
    written: list[str] = []
    pin, materialize = impacts._lock_pin, sides.Checkout.materialize
    monkeypatch.setattr(impacts, "_lock_pin", lambda data: parsed.append(data) or pin(data))

    def counted(self: sides.Checkout, commit: str, dest: Path, folders: tuple[str, ...] = sides.FOLDERS,
                judge: object = None) -> dict[str, bytes]:
        if Path(dest).name.startswith("passprice-branch-"):  # the walk's (diff._CommitCode)
            written.append(commit)
        return materialize(self, commit, dest, folders, judge)  # type: ignore[arg-type]

    monkeypatch.setattr(sides.Checkout, "materialize", counted)
    root, first = twice_repo
    runs = []
    for _ in range(2):
        parsed.clear()
        written.clear()
        text, doc = invoke("diff", "main", root=root), invoke("diff", "main", "--format", "json", root=root)
        runs.append((text.exit_code, text.stdout, text.stderr, doc.exit_code, doc.stdout, len(parsed),
                     len(set(parsed)), len(written)))
    (code1, out1, err1, jcode1, json1, parses1, distinct1, codes1), (code2, out2, err2, jcode2, json2, parses2, _,
                                                                       codes2) = runs
    assert (code1, jcode1) == (code2, jcode2) == (0, 0) and (out1, err1, json1) == (out2, err2, json2)
    assert json.loads(json1)["code_changed"] == [
        f"{LISTED}: entry {first[7:19]}… added (passprice 0.1.0's, first locked 2026-12-05): the code of a commit "
        "of this branch, which re-locked with it (since re-locked again)"]
    # the first run: the branch's two lock blobs (the first code's lock, and main's again) parsed once each (by the
    # text run; the JSON run finds them kept), the first re-lock's code written out once (the JSON run finds its
    # digest kept)
    assert (parses1, distinct1, codes1) == (2, 2, 1), (parses1, distinct1, codes1)
    assert (parses2, codes2) == (0, 0)


def test_3_a_kept_entry_not_of_its_shape_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import cache
    from passprice.review import impacts

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / "locks").mkdir(parents=True)
    _run(root, "init", "-q", "-b", "main")
    (root / "locks" / "a.lock.toml").write_text('[lock]\npricing_model = "sha256:aa"\ndigest = "sha256:1"\n')
    blob = _run(root, "hash-object", "-w", "locks/a.lock.toml").strip()
    assert impacts._lock_pins(root, {blob: 50}) == {blob: ("sha256:aa", "sha256:1")}
    for forged in ({blob: ["sha256:aa"]}, {blob: [1, 2]}, {blob: "sha256:aa"}, []):
        cache.store(impacts._pins_key(), {"pins": forged})
        assert impacts._lock_pins(root, {blob: 50}) == {blob: ("sha256:aa", "sha256:1")}
    # a right-shaped entry is believed (the cache is trusted as the user's own files are: passprice.cache._trusted)
    cache.store(impacts._pins_key(), {"pins": {blob: None}})
    assert impacts._lock_pins(root, {blob: 50}) == {blob: None}


# --- 4. a lock whose pricing_model is a table -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["{ a = 1 }", "[1, 2]", "1"])
def test_4_a_pricing_model_that_is_no_string_pins_nothing(value: str) -> None:
    from passprice.review.impacts import _lock_pin

    assert _lock_pin(f'[lock]\npricing_model = {value}\ndigest = "sha256:1"\n'.encode()) is None
    assert _lock_pin(b'[lock]\npricing_model = "sha256:aa"\ndigest = "sha256:1"\n') == ("sha256:aa", "sha256:1")
    assert _lock_pin(b'lock = 1\n') is None and _lock_pin(b'[lock\n') is None and _lock_pin(b'\xff') is None


def test_4_a_branch_committing_such_a_lock_is_reviewed_without_a_traceback(twice_repo: tuple[Path, str],
                                                                            tmp_path: Path) -> None:
    """Before: ``TypeError: unhashable type: 'dict'`` out of the walk (``model in asked``). Now the file pins
    nothing; the review of the branch says what it said (its other rules judge the file as a lock)."""
    root = tmp_path / "repo"
    shutil.copytree(twice_repo[0], root, symlinks=True)
    git(root, "checkout", "-q", "twice")
    (root / "locks" / "odd.lock.toml").write_text('[lock]\npricing_model = { a = 1 }\ndigest = "sha256:1"\n',
                                                   encoding="utf-8")
    commit_all(root, "a lock whose model is a table")
    git(root, "rm", "-q", "locks/odd.lock.toml")
    commit_all(root, "gone again")
    result = invoke("diff", "main", "--format", "json", root=root)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["code_changed"] == [
        f"{LISTED}: entry {twice_repo[1][7:19]}… added (passprice 0.1.0's, first locked 2026-12-05): the code of a "
        "commit of this branch, which re-locked with it (since re-locked again)"]


@pytest.mark.parametrize(("prefix", "keyed"), [("reg/", True), ("re[g]/", False)])
def test_3_a_code_folder_under_pathspec_magic_is_not_keyed_by_its_tree(tmp_path: Path, prefix: str,
                                                                      keyed: bool) -> None:
    """``materialize`` lists a prefix holding ``[`` as a pattern (which may match other folders), so no one tree
    names what it writes out: such a commit's code is digested each time, never found by a tree id."""
    from passprice.review import Checkout
    from passprice.review.impacts import _CommitCode

    root = tmp_path / "repo"
    code = root / prefix / "src" / "passprice"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("")
    _run(root, "init", "-q", "-b", "main")
    _run(root, "config", "user.email", "t@example.com")
    _run(root, "config", "user.name", "t")
    _run(root, "add", "-A")
    _run(root, "commit", "-q", "-m", "code")
    commit = _run(root, "rev-parse", "HEAD").strip()
    trees = _CommitCode(Checkout(root, prefix), [commit]).trees
    assert trees == ({commit: _run(root, "rev-parse", f"HEAD:{prefix}src/passprice").strip()} if keyed else {})
