"""Issue 13 (diff59): ``diff`` of a side holding hundreds of files under ``locks/`` that are no locks. Before: a branch
adding 3,700 files ``x = {i}`` there made ``diff`` call ``read_lock`` 29,610 times (each file sized, hashed and looked
up 8 times, once a pass) and print 3,789 lines; now a lock file is read once a snapshot, and past
:data:`~passprice.review.sides.MAX_LOCKLESS` such files the side is refused in one line before its tree is written
(speed48: also past that many lock files that surely do not read, :func:`~passprice.review.sides.surely_unread`)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from tests.test_diff import commit_all, git

from passprice import locks, snapshot
from passprice.errors import InputError
from passprice.registry import Root
from passprice.review import diff, diff_text
from passprice.review.sides import MAX_LOCKLESS

#: Count the locks built by this module's own commands: none kept from another test's (tests/conftest.py).
FRESH_LASTING = True

REPO = Path(__file__).parent.parent
NOT_A_LOCK = (
    "not a lock file (no [lock] table; it is some other file): a lock is locks/NAME.lock.toml, written by "
    "`passprice lock SERVING`"
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with no locks: the repository's facts, registry, schemas and sources."""
    path = tmp_path_factory.mktemp("diff59") / "base"
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    return path


def _with_lockless(base: Path, dest: Path, count: int) -> Path:
    shutil.copytree(base, dest)
    for i in range(count):
        (dest / f"locks/u{i}.lock.toml").write_text(f"x = {i}\n", encoding="utf-8")
    return dest


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    real = getattr(locks, name)

    def counted(path: Path, *args: object) -> object:
        seen[str(path)] += 1
        return real(path, *args)

    monkeypatch.setattr(locks, name, counted)
    return seen


def test_each_lock_file_of_a_side_is_read_once_and_each_refused_by_its_line(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 files that are no locks: before, each was read by ``read_lock`` 8 times (160 reads); now once each, and the
    diff still names each by its own line."""
    head = _with_lockless(base, tmp_path / "head", 20)
    reads = _counted(monkeypatch, "_read_lock")
    text = diff_text(diff(Root(head), str(base), str(head)))
    assert sorted(reads) == sorted(str(head / f"locks/u{i}.lock.toml") for i in range(20))
    assert set(reads.values()) == {1}
    refused = [line.strip() for line in text.splitlines() if NOT_A_LOCK in line]
    expected = [f"locks/u{i}.lock.toml: {NOT_A_LOCK}" for i in sorted(range(20), key=str)]
    # under each file once (listed again under what HEAD fails `check` on before, tests/test_bound147.py), and counted
    # there as check counts them (tests/test_walk138.py, tests/test_budget140.py)
    assert refused == expected, text
    assert ("HEAD fails passprice check (20 problems):\n  20 problems listed above, under the lock files that do not "
            "read (locks/u0.lock.toml, locks/u1.lock.toml, locks/u10.lock.toml and 17 more)") in text, text


def test_a_lock_read_again_in_a_snapshot_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a snapshot the same lock path (good or refused) is read once however often asked; outside one, each time."""
    path = tmp_path / "u.lock.toml"
    path.write_text("x = 1\n", encoding="utf-8")
    reads = _counted(monkeypatch, "_read_lock")
    with snapshot.reading():
        for _ in range(3):
            with pytest.raises(InputError, match=rf"^{path}: not a lock file"):
                locks.read_lock(path)
    assert reads[str(path)] == 1
    for _ in range(2):
        with pytest.raises(InputError, match=rf"^{path}: not a lock file"):
            locks.read_lock(path)
    assert reads[str(path)] == 3


def test_hundreds_of_files_that_are_no_locks_refuse_the_side_in_one_line(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 files ``x = {i}`` under ``locks/``, on a branch and in a folder: one line naming their count and the first
    file's refusal, and not one of them parsed (before: 300 'does not read on HEAD' entries, 2,400 lock reads)."""
    repo = _with_lockless(base, tmp_path / "repo", 0)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "no locks")
    _with_lockless(repo, tmp_path / "folder", 300)
    git(repo, "checkout", "-q", "-b", "bad")
    for i in range(300):
        (repo / f"locks/u{i}.lock.toml").write_text(f"x = {i}\n", encoding="utf-8")
    sha = commit_all(repo, "300 files that are no locks")
    git(repo, "checkout", "-q", "main")
    parsed = _counted(monkeypatch, "_lock_of_file")
    line = (f"300 files under locks/ are no lock (past {MAX_LOCKLESS}, the side is refused whole); the first: "
            f"locks/u0.lock.toml: {NOT_A_LOCK}")
    with pytest.raises(InputError) as raised:
        diff(Root(repo), "main", "bad")
    assert str(raised.value) == f"HEAD bad ({sha[:12]}): {line}"
    with pytest.raises(InputError) as raised:
        diff(Root(repo), str(tmp_path / "folder"), "main")
    assert str(raised.value) == f"BASE {tmp_path / 'folder'}: {line}"
    assert not parsed


def test_hundreds_of_lock_files_that_do_not_read_refuse_the_side_after_the_101st(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 files ``[lock]`` + ``x = {i}`` (a lock table, so not told from their bytes): before, each was validated
    and refused by its own line (3,700 of them: 7.5 s of CPU); then the side was refused once the 101st did not
    read, 101 parsed, not 300; now (speed48) before HEAD's tree is written, the first alone parsed."""
    repo = _with_lockless(base, tmp_path / "repo", 0)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "no locks")
    git(repo, "checkout", "-q", "-b", "bad")
    for i in range(300):
        (repo / f"locks/u{i}.lock.toml").write_text(f"[lock]\nx = {i}\n", encoding="utf-8")
    sha = commit_all(repo, "300 lock files that do not read")
    git(repo, "checkout", "-q", "main")
    parsed = _counted(monkeypatch, "_lock_of_file")
    written = _written(monkeypatch)
    with pytest.raises(InputError) as raised:
        diff(Root(repo), "main", "bad")
    assert str(raised.value) == (
        f"HEAD bad ({sha[:12]}): more than {MAX_LOCKLESS} of its 300 lock files that differ from the other side's "
        "do not read (the side is refused whole); the first: locks/u0.lock.toml: card: missing (required)"
    )
    # speed48: all 300 surely fail (no key of the lock schema's top but `lock` spelled): the first is parsed alone
    assert len(parsed) == 1 and next(iter(parsed)).endswith("/locks/u0.lock.toml")
    # speed48: refused from the bytes before HEAD's tree is written: one side's folder (BASE's, no lock in it) written
    folders = {next(part for part in Path(w).parts if part.startswith("passprice-diff-")) for w in written}
    assert len(folders) == 1 and not [w for w in written if "/locks/" in w]


def _written(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths :mod:`passprice.review.sides` opens to write a side's tree, in order."""
    from passprice.review import sides

    written: list[str] = []

    def opened(path: str, mode: str = "r", *args: object, **kwargs: object) -> object:
        if "w" in mode:
            written.append(path)
        return open(path, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sides, "open", opened, raising=False)
    return written


def test_both_sides_holding_locks_that_do_not_read_name_base_first(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BASE and HEAD each adding 150 lock files that surely do not read (speed48: HEAD's are judged from their bytes
    before its tree is written): BASE's line, as the comparison gives it, not HEAD's; with HEAD the work tree (the
    comparison's own check), the same line, BASE's first lock alone parsed."""
    repo = _with_lockless(base, tmp_path / "repo", 0)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "no locks")
    for branch, key in (("one", "x"), ("two", "y")):
        git(repo, "checkout", "-q", "-b", branch, "main")
        (repo / "locks").mkdir(exist_ok=True)  # main holds no file there: git left no folder
        for i in range(150):
            (repo / f"locks/{branch}{i}.lock.toml").write_text(f"[lock]\n{key} = {i}\n", encoding="utf-8")
        commit_all(repo, f"150 lock files that do not read ({branch})")
    sha = git(repo, "rev-parse", "one").strip()
    line = (
        f"BASE one ({sha[:12]}): more than {MAX_LOCKLESS} of its 150 lock files that differ from the other side's "
        "do not read (the side is refused whole); the first: locks/one0.lock.toml: card: missing (required)"
    )
    with pytest.raises(InputError) as raised:
        diff(Root(repo), "one", "two")
    assert str(raised.value) == line
    parsed = _counted(monkeypatch, "_lock_of_file")
    with pytest.raises(InputError) as raised:
        diff(Root(repo), "one")  # HEAD: the work tree, branch two
    assert str(raised.value) == line
    assert len(parsed) == 1 and next(iter(parsed)).endswith("/locks/one0.lock.toml")


def test_a_lock_surely_unread_is_told_from_its_bytes_alone() -> None:
    """:func:`passprice.review.sides.surely_unread` is sure only where the lock schema's required keys are not all
    spelled in the bytes; every shipped lock (which reads) is not surely unread, and a key spelled by an escape says
    nothing."""
    from passprice.review.sides import surely_unread

    shipped = sorted((REPO / "locks").glob("*.lock.toml"))
    assert len(shipped) >= 10 and not any(surely_unread(p.read_bytes()) for p in shipped)
    assert surely_unread(b"[lock]\nx = 1\n") and surely_unread(b"x = 1\n")
    full = (REPO / "locks" / "r1-qwen7b-h200.lock.toml").read_bytes()
    assert not surely_unread(full.replace(b"[policy]\n", b"[polish]\n"))  # [policy.paths] still spells policy
    assert surely_unread(full.replace(b"policy", b"polish"))
    assert not surely_unread(b'[lock]\n"\\u0070olicy" = 1\n')  # an escape may spell any key
