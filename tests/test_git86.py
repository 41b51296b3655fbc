"""git86: the bounded history search (gitread.pickaxe) says what its caps left unread wherever its answer is shown,
and model_commit answers a renamed lock as `git log -S` did. Each failing input built here."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from test_left52 import _git


def _lock(path: Path, digest: str, pad: int = 0) -> None:
    path.write_text(f'[lock]\ndigest = "sha256:{digest}"\npricing_model = "sha256:{digest}"\n' + "#" * pad + "\n",
                    encoding="utf-8")


def _commit(repo: Path, message: str) -> tuple[str, str]:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", message)
    return _git(repo, "rev-parse", "--short=12", "HEAD"), _git(repo, "log", "-1", "--format=%cs")


def test_1_a_search_cut_by_its_total_cap_says_so_in_reproduce_digest(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the blobs past gitread.PICKAXE_TOTAL_BYTES (oldest first) counted as holding no match, and `reproduce
    # DIGEST` of a lock written past the cap said "the lock cited may have been re-locked since, or be of another
    # registry", as if the whole history had been searched. The cap forced here to the registry's first commit's
    # lock blobs: the lock written in the third commit (and removed in the fourth) is past it.
    from passprice import gitread

    root = copy_root(tmp_path)
    _git(root, "init", "-q")
    _commit(root, "locked")
    first = _git(root, "ls-tree", "-r", "-l", "HEAD", "locks/").splitlines()
    read = sum({row.split()[2]: int(row.split()[3]) for row in first}.values())
    (root / "locks" / "README").write_text("locks\n", encoding="utf-8")
    _commit(root, "a readme")
    digest = f"{86:064x}"
    _lock(root / "locks" / "old.lock.toml", digest)
    wrote, date = _commit(root, "old")
    size = (root / "locks" / "old.lock.toml").stat().st_size
    (root / "locks" / "old.lock.toml").unlink()
    _commit(root, "re-locked")
    done = invoke("reproduce", digest[:12], root=root)
    assert done.exit_code == 2 and done.stderr.splitlines()[-1].endswith(
        f": re-locked since; commit {wrote} ({date}) wrote it as locks/old.lock.toml: write it out, `git show "
        f"{wrote}:locks/old.lock.toml > old-{wrote}.lock.toml`, then `passprice reproduce old-{wrote}.lock.toml`")
    monkeypatch.setattr(gitread, "PICKAXE_TOTAL_BYTES", read + 6)  # the README's 6 bytes fit; old's do not
    done = invoke("reproduce", digest[:12], root=root)
    assert done.exit_code == 2 and done.stdout == "", done.output
    assert done.stderr.splitlines()[-1].endswith(
        f"passprice audit NAME prints a lock's digest): in its git history's locks/, not found in the 2 oldest of the "
        f"4 commits searched; 1 blob ({size:,} bytes) past the cap was not read (gitread.PICKAXE_BLOB_BYTES "
        f"4,194,304 bytes a blob, PICKAXE_TOTAL_BYTES {read + 6:,} in all, oldest first)"), done.stderr


def test_1_model_commit_says_an_older_blob_was_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: a lock over gitread.PICKAXE_BLOB_BYTES counted as holding no match, so model_commit named a newer
    # commit as "the oldest commit whose locks record" the digest, with nothing said; and a search cut by the total
    # answered None, as "no lock recorded it".
    from passprice import gitread
    from passprice.registry import Root
    from passprice.reproduce import model_commit

    digest = f"{87:064x}"
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    _lock(tmp_path / "locks" / "big.lock.toml", digest, pad=2000)
    _commit(tmp_path, "big")
    big = (tmp_path / "locks" / "big.lock.toml").stat().st_size
    _lock(tmp_path / "locks" / "small.lock.toml", digest)
    small, date = _commit(tmp_path, "small")
    assert model_commit(Root(tmp_path), f"sha256:{digest}")[1] is None
    monkeypatch.setattr(gitread, "PICKAXE_BLOB_BYTES", big - 1)
    assert model_commit(Root(tmp_path), f"sha256:{digest}") == (
        (small, date), f"1 blob ({big:,} bytes) of that commit or older ones past the cap was not read "
        f"(gitread.PICKAXE_BLOB_BYTES {big - 1:,} bytes a blob, PICKAXE_TOTAL_BYTES 134,217,728 in all, oldest "
        "first): an older commit may have written it")
    monkeypatch.setattr(gitread, "PICKAXE_BLOB_BYTES", 4 << 20)
    monkeypatch.setattr(gitread, "PICKAXE_TOTAL_BYTES", big)  # the big one read; the small one, newer, past it
    assert model_commit(Root(tmp_path), f"sha256:{digest}")[0] == (_git(tmp_path, "rev-parse", "--short=12",
                                                                        "HEAD~1"), date)
    monkeypatch.setattr(gitread, "PICKAXE_TOTAL_BYTES", big - 1)  # nothing read
    size = (tmp_path / "locks" / "small.lock.toml").stat().st_size
    assert model_commit(Root(tmp_path), f"sha256:{digest}") == (
        None, f"not searched: none of the 2 commits read whole; 2 blobs ({big + size:,} bytes) past the cap "
        f"were not read (gitread.PICKAXE_BLOB_BYTES 4,194,304 bytes a blob, PICKAXE_TOTAL_BYTES {big - 1:,} in all, "
        "oldest first)")


def test_2_model_commit_of_a_renamed_lock_is_the_commit_git_log_s_named(tmp_path: Path) -> None:
    # Git79's pickaxe runs `git log --no-renames`; main before it ran `git log -S DIGEST -- locks/`, which pairs a
    # renamed file (diff.renames). A rename adds only commits after the one that wrote the digest (its old path's
    # removal, its new path's addition), so the oldest, model_commit's answer, is the same: checked against git.
    from passprice.registry import Root
    from passprice.reproduce import model_commit

    digest = f"{88:064x}"
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    _lock(tmp_path / "locks" / "a.lock.toml", digest)
    wrote, date = _commit(tmp_path, "wrote")
    _git(tmp_path, "mv", "locks/a.lock.toml", "locks/b.lock.toml")
    _commit(tmp_path, "renamed")
    _git(tmp_path, "mv", "locks/b.lock.toml", "locks/c.lock.toml")
    with (tmp_path / "locks" / "c.lock.toml").open("a", encoding="utf-8") as c:
        c.write("# renamed and edited\n")
    _commit(tmp_path, "renamed and edited")

    def git_s(*more: str) -> list[str]:
        return subprocess.run(["git", "log", *more, "--format=%h", "--abbrev=12", "-S", digest, "--", "locks/"],
                              cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()

    assert git_s() == [wrote]  # renames paired: only the commit that wrote it
    assert len(git_s("--no-renames")) == 3  # each rename a removal and an addition
    assert model_commit(Root(tmp_path), f"sha256:{digest}") == ((wrote, date), None)


def _fifo_blob(tmp_path: Path) -> tuple[str, str, Path]:
    """A repository of two files as loose objects: the first's blob id, the second's, and the second's loose object
    file, made a FIFO."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("a\n", encoding="utf-8")
    (tmp_path / "b").write_text("bb\n", encoding="utf-8")
    _commit(tmp_path, "one")
    a, b = _git(tmp_path, "rev-parse", "HEAD:a"), _git(tmp_path, "rev-parse", "HEAD:b")
    loose = tmp_path / ".git" / "objects" / b[:2] / b[2:]
    loose.unlink()
    os.mkfifo(loose)
    return a, b, loose


def test_3_the_long_lived_cat_file_and_blob_sha256_are_watched(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: gitread._Batch.read (diff's one `git cat-file --batch`) and gitread.blob_sha256 (`git cat-file blob`,
    # a document past the cap on what is read whole) read git's output with blocking reads, unwatched: an object
    # swapped for a FIFO after the look-through (forced to list none here, gitread.MAX_LOOSE_LISTED 0) held them for
    # ever. Now both are watched as run_git is: the FIFO named, git stopped.
    import platform

    from passprice import gitread

    if platform.machine() not in gitread._OPENING or not os.access("/proc/self/syscall", os.R_OK):
        pytest.skip("no /proc/PID/syscall of a known machine: the look-through's bound is all there is")
    a, b, loose = _fifo_blob(tmp_path)
    monkeypatch.setattr(gitread, "MAX_LOOSE_LISTED", 0)
    line = (f"{loose}: a FIFO (named pipe), where git reads an object of its repository: git cat-file waited to open "
            "it (a FIFO's writer never comes), so passprice stopped git; make it a regular file or remove it")
    with pytest.raises(gitread.GitFailed) as raised:
        gitread.blob_sha256(tmp_path, b)
    assert str(raised.value) == line
    assert gitread.blob_sha256(tmp_path, a) == "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
    with gitread.one_batch(tmp_path):
        assert gitread.read_blobs(tmp_path, {a: 2}) == {a: b"a\n"}  # the batch started, answering
        batch = gitread._BATCHES[tmp_path]
        assert batch.read([b]) is None and batch.git is None  # seen waiting on the FIFO: ended
        with pytest.raises(gitread.GitFailed) as raised:
            gitread.read_blobs(tmp_path, {b: 3})  # read the one-shot way, which names it
        assert str(raised.value) == line


def test_1_reproduce_lock_says_the_model_commits_search_was_cut(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: a lock whose pricing model changed, its model_commit search cut by the cap, read as if no commit of
    # the history recorded its model: the verdict fell back to the commit that last changed the lock, and the
    # pricing model line said nothing. The cap forced to 0 here (walk56's old lock, written out of this checkout's
    # history): the line says the search read none of it.
    from passprice import gitread
    from test_walk56 import BEFORE_WINDOW55, needs_history

    if needs_history.args[0]:
        pytest.skip("the checkout's git history is not here")
    old = tmp_path / "gemma-old.lock.toml"
    old.write_bytes(subprocess.run(["git", "show", f"{BEFORE_WINDOW55}:locks/gemma3-270m-h100.lock.toml"],
                                   cwd=REPO, capture_output=True, check=True).stdout)
    monkeypatch.setattr(gitread, "PICKAXE_TOTAL_BYTES", 0)
    result = invoke("reproduce", str(old))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "the passprice of the commit that last changed the lock" in lines[1], lines[1]
    model = next(line for line in lines if line.startswith("    pricing model  changed ("))
    head, _, cut = model.partition("; the commit whose locks record ")
    assert cut.startswith(f"{head[len('    pricing model  changed ('):][:12]}: not searched: none of the "), model
    assert cut.endswith(" past the cap were not read (gitread.PICKAXE_BLOB_BYTES 4,194,304 bytes a blob, "
                        "PICKAXE_TOTAL_BYTES 0 in all, oldest first)"), model
    done = invoke("reproduce", str(old), "--json")
    said = json.loads(done.stdout)["pricing_model"]
    assert said["commit"] is None and said["commit_search_cut"] == cut.partition(": ")[2], said
