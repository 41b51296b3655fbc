"""left57: three hostile-input leftovers -- a corrupt .gz named by its byte offset, ``init`` that fails midway,
``modelhistory``'s git call guarded."""

from __future__ import annotations

import errno
import gzip
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import bad, invoke
from test_left52 import _tiny_header


def test_a_corrupt_or_cut_gzip_member_is_named_by_its_offset(tmp_path: Path) -> None:
    # Before (gzip.GzipFile): a corrupt deflate block read "cannot decompress: Error -3 while decompressing data:
    # invalid block type", a bad method byte "cannot read: Unknown compression method": no byte offset, no word of
    # which member; reserved flag bits set were read as if clear. Now the member's first byte, as a corrupt .xz reads.
    data = _tiny_header(tmp_path / "h.gguf")
    first, second = gzip.compress(data[:100], mtime=0), bytearray(gzip.compress(data[100:], mtime=0))
    whole = tmp_path / "ok.gguf.gz"
    whole.write_bytes(first + bytes(second) + b"\0" * 3)
    assert invoke("header", str(whole)).exit_code == 0
    second[2] = 7  # the compression method: only 8 (deflate) is defined
    corrupt = tmp_path / "c.gguf.gz"
    corrupt.write_bytes(first + bytes(second))
    assert bad("header", str(corrupt)) == [
        f"passprice: error: {corrupt}: cannot decompress: byte {len(first):,}: the gzip member starting there: "
        f"Error -3 while decompressing data: unknown compression method (found within its first {len(second):,} "
        "bytes)"]
    # the task's own case: "Error -3 …" from the deflate data, found in the second member
    second[2] = 8
    second[10] = 0xFF  # the first deflate block's type: 3, reserved
    corrupt.write_bytes(first + bytes(second))
    assert bad("header", str(corrupt)) == [
        f"passprice: error: {corrupt}: cannot decompress: byte {len(first):,}: the gzip member starting there: "
        f"Error -3 while decompressing data: invalid block type (found within its first {len(second):,} bytes)"]
    header = bytearray(first)
    header[3] = 0xE0  # reserved flag bits set
    lone = tmp_path / "h.gguf.gz"
    lone.write_bytes(bytes(header))
    assert bad("header", str(lone)) == [
        f"passprice: error: {lone}: cannot decompress: byte 0: the gzip member starting there: Error -3 while "
        f"decompressing data: unknown header flags set (found within its first {len(first):,} bytes)"]
    cut = tmp_path / "cut.gguf.gz"
    cut.write_bytes(first + gzip.compress(data[100:], mtime=0)[:-5])
    assert bad("header", str(cut)) == [
        f"passprice: error: {cut}: cannot decompress: byte {len(first) + len(second) - 5:,}: the file ends inside "
        f"the gzip member starting at byte {len(first):,} (its end never came)"]
    junk = tmp_path / "junk.gguf.gz"
    junk.write_bytes(first + bytes(gzip.compress(data[100:], mtime=0)) + b"\0\0xyz")
    assert bad("header", str(junk)) == [
        f"passprice: error: {junk}: cannot decompress: byte {len(first) + len(second) + 2:,}: neither zero padding "
        "nor another gzip member"]


def _full_after(calls: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, which raises ``OSError(ENOSPC)`` (a full disk) from its ``calls + 1``-th call on."""
    count = [0]

    def full(*args: Any) -> Any:
        count[0] += 1
        if count[0] > calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args)

    return full


def _everything_below(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_init_on_a_disk_that_fills_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: `init a/b/reg` whose second file met a full disk said its one line (exit 2) but left the folders a/
    # and a/b/ it had made; a move into place that failed left reg/ too; and each file was written by
    # path.write_bytes, never flushed to disk before it was moved into place. Now each is flushed (os.fsync), and a
    # failure removes every folder init made: the folder is as it was.
    (tmp_path / "mine.txt").write_text("the user's\n", encoding="utf-8")
    dest = tmp_path / "a" / "b" / "reg"
    monkeypatch.setattr(os, "fsync", _full_after(1, os.fsync))
    assert bad("init", str(dest)) == [
        f"passprice: error: {dest}: cannot write: no space left on the device holding {dest.parent}"]
    assert _everything_below(tmp_path) == ["mine.txt"]
    monkeypatch.undo()
    monkeypatch.setattr(os, "rename", _full_after(1, os.rename))  # the first top-level entry moved, then full
    assert bad("init", str(dest)) == [
        f"passprice: error: {dest}: cannot write: no space left on the device holding {dest.parent}"]
    assert _everything_below(tmp_path) == ["mine.txt"]
    monkeypatch.undo()
    fsyncs = _full_after(10**6, os.fsync)
    flushed: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: (flushed.append(fd), fsyncs(fd))[1])
    assert invoke("init", str(dest)).exit_code == 0
    written = [p for p in dest.rglob("*") if p.is_file()]
    assert len(flushed) >= len(written) > 1  # each file flushed to disk before it was moved into place


def test_modelhistory_head_runs_git_through_the_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: modelhistory._head ran `git -C ROOT rev-parse HEAD` bare: a repository whose .git/config is a FIFO
    # held it the whole 10 s (git blocks reading its config), where every other git call of modelhistory and
    # gitread is refused at once by gitread's config guard. Now it goes through gitread.run_git: no git is started.
    import subprocess

    from passprice.modelhistory import _head
    from test_left52 import _git

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert _head(repo) == ""  # no commit yet
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "a")
    head = _git(repo, "rev-parse", "HEAD")
    assert _head(repo) == head[:12]
    started: list[list[str]] = []
    real = subprocess.run

    def recorded(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(list(argv))
        if "rev-parse" in argv:  # a FIFO config blocks git: its 10 s timeout, without the wait
            raise subprocess.TimeoutExpired(argv, 10)
        return real(argv, *args, **kwargs)

    config = repo / ".git" / "config"
    config.unlink()
    os.mkfifo(config)
    monkeypatch.setattr(subprocess, "run", recorded)
    assert _head(repo) == ""
    assert [argv for argv in started if "git" in argv[0]] == []
