"""Issue 16, round 26: ``diff`` of two revisions starts a bounded number of git processes (one ``git cat-file
--batch`` for every blob of both sides, one ``ls-tree -r`` a side for the registry's folders and the code, one
``rev-parse`` for the checkout's top and prefix), and prints the same text as when every read started its own git;
the sweep's JSON text is the row writer's, byte for byte. Processes are counted by a ``git`` wrapper put first on
``PATH`` (never by time)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice import gitread
from passprice.review import Checkout, sides
from passprice.review.sides import CODE, FOLDERS

CARD_FILE = "facts/cards/h200_sxm_141gb.toml"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True)  # fmt: skip
    return done.stdout.decode().strip()


def set_bandwidth(file: Path, value: str) -> None:
    text = file.read_text(encoding="utf-8")
    at = text.index("value = ", text.index("[memory.bandwidth]"))
    file.write_text(text[:at] + f"value = {value}" + text[text.index("\n", at):], encoding="utf-8")


def two_commits(tmp_path: Path) -> Path:
    """A checkout of the registry on ``main`` and a branch ``pr`` that changes one card's bandwidth."""
    root = copy_root(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the registry")
    git(root, "checkout", "-qb", "pr")
    set_bandwidth(root / CARD_FILE, "4.9")
    git(root, "commit", "-qam", "a card changed")
    return root


def counted_diff(root: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``passprice diff ARGS`` as a process in ``root``, with a ``git`` on ``PATH`` that logs each start (its
    arguments after passprice's ``-c`` settings) and runs the real git; the result and the git commands started."""
    folder = tmp_path / "wrapper"
    folder.mkdir(exist_ok=True)
    log = tmp_path / "git.log"
    log.write_text("")
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "PASSPRICE_NO_MEMO": "1"}
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(root), "diff", *args], cwd=root,
                          env=env, capture_output=True, text=True)  # fmt: skip
    settings = " ".join(gitread.SETTINGS) + " "
    started = [line.removeprefix(settings) for line in log.read_text().splitlines()]
    return done, started


def test_a_diff_of_two_revisions_starts_one_cat_file_and_at_most_fifteen_git_processes(tmp_path: Path) -> None:
    """Before round 26 this diff started 21 git processes (25 on the project's own 200-commit clone): a ``cat-file
    --batch`` for each read (4 here), ``ls-tree -r`` for the registry's folders and again for the code, and
    ``rev-parse`` twice for the top and the prefix. Now: one ``cat-file --batch`` for the whole diff, one
    ``rev-parse`` for top and prefix, and one ``ls-tree -r -l`` a side for the registry and the code together."""
    root = two_commits(tmp_path)
    done, started = counted_diff(root, tmp_path, "main", "pr")
    # exit 1: the review refuses the change (a derived fact not recomputed), after printing the whole diff
    assert done.returncode == 1 and done.stderr.startswith("passprice: refused: derived facts"), done.stderr
    assert done.stdout.splitlines()[1].startswith("1 fact changed in 1 file")
    names = [s.removeprefix("--literal-pathspecs ").split(" ")[0] for s in started]
    assert names.count("cat-file") == 1 and "cat-file --batch" in started
    assert started.count("rev-parse --show-toplevel --show-prefix") == 1
    assert not any(s in ("rev-parse --show-toplevel", "rev-parse --show-prefix") for s in started)
    recursive = [s for s in started if s.startswith("ls-tree -r -l")]
    assert len(recursive) == 2  # one a side, FOLDERS and CODE together
    assert all(s.endswith(" -- " + " ".join((*FOLDERS, CODE))) for s in recursive)
    assert len(started) <= 15, started


@contextlib.contextmanager
def _one_a_read(top: Path) -> Iterator[None]:
    yield


@pytest.mark.parametrize("how", [(), ("--json",), ("--format", "markdown")])
def test_a_diff_reads_the_same_text_through_one_cat_file_as_through_one_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: tuple[str, ...]
) -> None:
    """The shared ``cat-file --batch`` (:func:`passprice.gitread.one_batch`) and one listing a side change nothing
    printed: the same diff with a git process a read (the code before round 26's way) prints the same bytes."""
    root = two_commits(tmp_path)
    shared = invoke("diff", *how, "main", "pr", root=root)
    monkeypatch.setattr(gitread, "one_batch", _one_a_read)
    monkeypatch.setattr(Checkout, "_listing", lambda self, commit, specs: sides._run_git(
        self.top, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *specs]))
    apart = invoke("diff", *how, "main", "pr", root=root)
    assert shared.exit_code == apart.exit_code == 1, shared.output  # the review refuses the change: printed first
    assert shared.stdout
    assert shared.stdout == apart.stdout
    if how == ("--json",):
        assert json.loads(shared.stdout)["base"]["label"].startswith("main")


def test_one_batch_reads_every_blob_as_cat_file_blob_gives_it_and_leaves_out_a_missing_one(tmp_path: Path) -> None:
    """300 blobs (12,300 bytes of requests: three runs of at most 4,096 bytes), an empty one among them, and an id
    no object has: each blob's bytes are ``git cat-file blob``'s; the missing id is left out, as the one-shot read
    leaves it out. After the process is gone, a read falls back to a process of its own, with the same answer."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    texts = [b""] + [f"blob {i}\n".encode() * (i % 7) + bytes([i % 256]) for i in range(1, 300)]
    ids = [subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=t, capture_output=True,
                          check=True).stdout.decode().strip() for t in texts]  # fmt: skip
    missing = "0" * 40
    sizes = {**{i: len(t) for i, t in zip(ids, texts, strict=True)}, missing: 1}
    with gitread.one_batch(repo):
        batch = gitread._BATCHES[repo]
        got = gitread.read_blobs(repo, sizes)
        assert got == dict(zip(ids, texts, strict=True))
        assert missing not in got
        assert gitread.read_blobs(repo, {ids[5]: len(texts[5])}) == {ids[5]: texts[5]}  # the same process again
        assert batch.git is not None and batch.git.poll() is None
        batch.close()
        assert gitread.read_blobs(repo, {ids[7]: len(texts[7]), missing: 1}) == {ids[7]: texts[7]}
    assert repo not in gitread._BATCHES


def test_one_listing_a_side_keeps_exactly_what_git_lists_for_each_set_of_folders(tmp_path: Path) -> None:
    """:meth:`Checkout._listing` cut from one listing of the registry's folders and the code equals ``git ls-tree
    -r -l -z`` of the folders asked, record for record, in git's order: a file named like a folder's prefix
    (``facts2/x.toml``, ``src/passprice_old.py``) is not under it."""
    root = copy_root(tmp_path)
    (root / "src" / "passprice").mkdir(parents=True)
    (root / "src" / "passprice" / "a.py").write_text("A = 1\n")
    (root / "src" / "passprice_old.py").write_text("B = 2\n")
    (root / "facts2").mkdir()
    (root / "facts2" / "x.toml").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "c")
    commit = git(root, "rev-parse", "HEAD")
    checkout = Checkout.of(root)
    for folders in (FOLDERS, (CODE,), ("facts",)):
        specs = list(folders)
        direct = subprocess.run(["git", "ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *specs], cwd=root,
                                capture_output=True, check=True).stdout  # fmt: skip
        assert checkout._listing(commit, specs) == direct
    assert b"a.py" in checkout._listing(commit, [CODE]) and b"passprice_old" not in checkout._listing(commit, [CODE])


def test_a_diff_of_two_folders_in_a_checkout_starts_no_cat_file(tmp_path: Path) -> None:
    """The shared ``cat-file --batch`` starts at the first blob read, not when the checkout is found: two folders
    compared inside a checkout (each name looked up as a revision first, ``rev-parse``) read no blob, and start no
    ``cat-file`` (one started there unused would be a process more than before round 26)."""
    root = two_commits(tmp_path)
    for name in ("a", "b"):
        copy_root(root / name)
    done, started = counted_diff(root, tmp_path, "a/root", "b/root")
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()[1]
    assert said.startswith("no changes to facts, registry, locks or the pricing model"), done.stdout
    assert started and not any("cat-file" in s for s in started), started
