"""Session 40's merges attacked again (attack71, issue 13). ``reproduce DIGEST``'s history search ran a ``git grep``
of all of ``locks/`` at each of up to 20 commits its pickaxe found, outside its 10 s bound: 200 paths of one 5 MB
blob beside one small lock edited 20 times (a 327 KB pack) took 29.7 s; it now reads only the files whose count of
the digest's text each commit changed, and the whole search, every git it runs and every file it parses, within
:data:`passprice.locks.HISTORY_SEARCH_S`. A side's code of a review that started a daemon (fork, ``setsid``, fork)
and then killed its side's process, the daemon's subreaper, made the ask wait on the pipes the daemon held until it
ended or the time limit (a 60 s daemon: 60 s; at most 300 s), and the daemon ran on past the review; once the side's
process has ended its pipes are read for what they hold and whatever else holds them is killed."""

from __future__ import annotations

import subprocess
import types
from pathlib import Path
from typing import Any

import pytest
from tests.test_attack_70 import _DAEMON, _ended
from tests.test_sidecode_once import _package

from passprice import sidecode


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
    found, cut = locks.digest_in_history(Root(tmp_path), digest[:16])
    assert cut is None
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, check=True)
    date = subprocess.run(["git", "log", "-1", "--format=%cs"], cwd=tmp_path, capture_output=True, check=True)
    assert found == (head.stdout.decode()[:12], date.stdout.decode().strip(), "locks/x.lock.toml")
    # the pickaxe's log, sizing and read (gitread.pickaxe, git79), then the candidates' sizing and read
    assert [command for command, _ in asked] == ["log", "cat-file", "cat-file", "cat-file", "cat-file"]
    # the first commit's 30 files (one blob, sized once) and x.lock.toml at the three commits that changed it, by
    # their blobs' ids: no other file
    blobs = subprocess.run(["git", "rev-parse", "HEAD~3:locks/big00.lock.toml", *(
        f"HEAD~{n}:locks/x.lock.toml" for n in (2, 1, 0))], cwd=tmp_path, capture_output=True, check=True)
    assert asked[3][1].decode().splitlines() == blobs.stdout.decode().splitlines()


def test_a_blob_many_files_of_a_commit_hold_is_looked_up_and_parsed_once(tmp_path: Path, monkeypatch: Any) -> None:
    # main: each file named as COMMIT:PATH, which git looks up in the commit's tree, and parsed apiece (20,000 files
    # quoting the digest outside their [lock] table, a 358 KB pack: 10.4 s, the search's whole limit) -> 0.6 s.
    import tomllib

    from passprice import locks
    from passprice.registry import Root

    digest = f"{72:064x}"
    _git(tmp_path, "init", "-q")
    (tmp_path / "locks").mkdir()
    for n in range(300):
        (tmp_path / "locks" / f"m{n:03}.lock.toml").write_text(f'[other]\ndigest = "sha256:{digest}"\n',
                                                                 encoding="utf-8")
    (tmp_path / "locks" / "n.lock.toml").write_text(f'[lock]\ndigest = "sha256:{digest}"\n', encoding="utf-8")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "many")
    parsed: list[str] = []
    loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or loads(text))
    found, cut = locks.digest_in_history(Root(tmp_path), digest)
    assert found is not None and found[2] == "locks/n.lock.toml" and cut is None
    assert len(parsed) == 2  # the 300 copies' blob, and n's


@pytest.mark.parametrize("talk", [True, False], ids=["conversation", "one-ask process"])
def test_a_daemon_whose_side_process_the_code_killed_ends_with_the_ask(talk: bool, tmp_path: Path,
                                                                       monkeypatch: Any) -> None:
    # main: the ask read the pipes until the daemon holding them ended, here the time limit (20 s; 300 s in a
    # review), answered (None, 'took longer than 20 s'), and the daemon (asleep for a minute) ran on past it.
    monkeypatch.setattr(sidecode, "_STUCK", {})
    monkeypatch.setattr(sidecode, "TIMEOUT_S", 20)
    pids = tmp_path / "pids"
    # in a conversation the side's process is the asking child's parent; a one-ask process runs the code itself
    victim = "os.getppid()" if talk else "os.getpid()"
    code = _package(tmp_path, "", _DAEMON.format(pids=str(pids)) + f"    os.kill({victim}, 9)\n")
    root = types.SimpleNamespace(path=tmp_path)
    if talk:
        with sidecode.conversations():
            said = sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]})
    else:
        said = sidecode._ask(root, code, sidecode.DRIVER, {"locks": [{"key": "a"}]})
    assert said == (None, "exit status -9")
    assert _ended(pids) == [True]


def test_a_huge_requirements_file_of_the_locks_commit_is_not_read(tmp_path: Path, monkeypatch: Any) -> None:
    # main: `git show COMMIT:requirements.txt` read it whole (1 GiB of '#' after the line, a 1.3 MB pack: reproduce
    # of a lock whose pricing model changed, in a registry of one's own, took 16.4 s and 4.2 GB).
    from passprice import reproduce
    from passprice.registry import Root

    _git(tmp_path, "init", "-q")
    text = b"passprice==0.1\n" + b"#" * 1000 + b"\n"
    (tmp_path / "requirements.txt").write_bytes(text)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "r")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, check=True)
    commit = head.stdout.decode().strip()[:12]
    assert reproduce.requirement_at(Root(tmp_path), commit) == "passprice==0.1"
    asked: list[str] = []
    from passprice import gitread

    run_git = gitread.run_git
    monkeypatch.setattr(gitread, "run_git", lambda top, args, *more, **named: asked.append(
        " ".join(args)) or run_git(top, args, *more, **named))
    monkeypatch.setattr(reproduce, "MAX_REQUIREMENTS_BYTES", len(text) - 1)
    assert reproduce.requirement_at(Root(tmp_path), commit) is None
    assert asked == ["cat-file --batch-check=%(objectname) %(objecttype) %(objectsize)"]  # sized, not read
    assert reproduce.requirement_at(Root(tmp_path), "0" * 12) is None  # no such commit


@pytest.mark.parametrize("where", ["named by a .git file", "included"])
@pytest.mark.parametrize("command", [["diff"], ["fact", "show", "a40", "memory.capacity", "--history"]])
def test_a_fifo_where_git_reads_its_settings_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], where: str) -> None:
    # main: a work tree whose `.git` is a file (`gitdir: PATH`, git init --separate-git-dir) was not looked through
    # for the repository's config, nor any config for the files it includes (`[include] path = FIFO`): a FIFO there
    # blocked `diff` and `fact show --history` in git for ever (killed at 20 s) and `reproduce DIGEST`'s history
    # search for its 10 s.
    import os
    import shutil
    import sys

    from cli_helpers import REPO

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    repository = tmp_path / "repo.git"
    _git(path, "init", "-q", "--separate-git-dir", str(repository))
    fifo = repository / "config"
    if where == "included":
        fifo = tmp_path / "included"
        with open(repository / "config", "a", encoding="utf-8") as config:
            config.write(f"[include]\n\tpath = {fifo}\n")
    else:
        fifo.unlink()
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(path), *command], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"passprice: error: {fifo}: a FIFO (named pipe), where git reads its settings: git would "
        "block reading it (or read without end), so passprice runs no git here; make it a regular file or remove it"]


@pytest.mark.parametrize("name", ["packed-refs", "refs/heads/main", "objects/info/alternates", "shallow"])
def test_a_fifo_among_the_repositorys_own_files_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           name: str) -> None:
    # main: `diff` and `fact show --history` blocked in git for ever (killed at 15 s) on a FIFO where git reads the
    # repository's refs, shallow boundary or alternates, `reproduce DIGEST`'s search for its 10 s.
    import os
    import shutil
    import sys

    from cli_helpers import REPO

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for variable in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(variable, raising=False)
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "a registry")
    _git(path, "pack-refs", "--all")
    fifo = path / ".git" / name
    fifo.parent.mkdir(parents=True, exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "passprice", "--root", str(path), "diff"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"passprice: error: {fifo}: a FIFO (named pipe), where git reads its repository's own files: git would "
        "block reading it (or read without end), so passprice runs no git here; make it a regular file or remove it"]
