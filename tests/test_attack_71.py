"""Session 40's merges attacked again (attack71, issue 13). ``reproduce DIGEST``'s history search ran a ``git grep``
of all of ``locks/`` at each of up to 20 commits its pickaxe found, outside its 10 s bound: 200 paths of one 5 MB
blob beside one small lock edited 20 times (a 327 KB pack) took 29.7 s; it now reads only the files whose count of
the digest's text each commit changed, and the whole search, every git it runs and every file it parses, within
:data:`passprice.locks.HISTORY_SEARCH_S`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgSign=false", *args],
                   cwd=folder, check=True, capture_output=True)


def test_the_history_search_reads_only_the_files_its_commits_changed(tmp_path: Path, monkeypatch: Any) -> None:
    # main: each commit the pickaxe found ran `git grep -l` over every file of locks/ at that commit (200 paths of a
    # 5 MB blob, 20 commits: 29.7 s, 20 GB grepped); the files the pickaxe names are the only candidates now.
    from passprice import gitread, locks
    from passprice.registry import Root

    digest = f"{71:064x}"
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    for n in range(30):  # quoting the digest, unchanged by the commits the search finds after the first
        (tmp_path / "locks" / f"big{n:02}.lock.toml").write_text(f'# digest = "sha256:{digest}"\n' + "#\n" * 500,
                                                                  encoding="utf-8")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "big")
    for n in (1, 2, 3):
        text = "".join(f'[other{k}]\ndigest = "sha256:{digest}"\n' for k in range(n))
        if n == 3:
            text += f'[lock]\ndigest = "sha256:{digest}"\n'
        (tmp_path / "locks" / "x.lock.toml").write_text(text, encoding="utf-8")
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", f"x{n}")
    asked: list[tuple[str, bytes]] = []
    run_git = gitread.run_git
    monkeypatch.setattr(gitread, "run_git", lambda top, args, stdin=None, **named: asked.append(
        (args[0], stdin or b"")) or run_git(top, args, stdin, **named))
    found = locks.digest_in_history(Root(tmp_path), digest[:16])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, check=True)
    date = subprocess.run(["git", "log", "-1", "--format=%cs"], cwd=tmp_path, capture_output=True, check=True)
    assert found == (head.stdout.decode()[:12], date.stdout.decode().strip(), "locks/x.lock.toml")
    assert [command for command, _ in asked] == ["log", "cat-file", "cat-file"]
    # the first commit's 30 files and x.lock.toml at the three commits that changed it, no other file
    names = [line.split(":", 1)[1] for line in asked[1][1].decode().splitlines()]
    assert names == [f"locks/big{n:02}.lock.toml" for n in range(30)] + ["locks/x.lock.toml"] * 3
