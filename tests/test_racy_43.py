"""Issue 13 and 16 (session 37, racy43): a file's status vouches for its bytes only on a file system that keeps
``ctime`` itself (:func:`passprice.memo.keeps_ctime`, the device's type read from the mount table). Where ``ctime``
follows ``mtime`` (FAT, exFAT, sshfs and other FUSE, network file systems), a same-size edit with its ``mtime`` put
back leaves size, ``mtime`` and ``ctime`` as they were: before, a warm read named the edited card by the digest of its
old bytes and served the document validated then (a warm ``price`` at 4.8 TB/s, 996.1 tokens/s, where the card said
2.4 TB/s, 498.0). The file system here is made one such by an injected status (``ctime`` is ``mtime``) and a mount
table naming the device ``vfat``; no test sleeps, none times anything: hashes are counted.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO
from passprice import cache, digests, filestamps, memo, memorecord, schema, snapshot
from passprice.digests import blake2b
from passprice.errors import SchemaError

CARD = REPO / "facts" / "cards" / "a100_pcie_80gb.toml"


class _Follows:
    """A status whose ``ctime`` is its ``mtime``, as a file system that keeps no change time of its own reports it
    (Linux's FAT keeps ``ctime`` identical to ``mtime``; sshfs reports ``mtime`` as ``ctime``)."""

    def __init__(self, st: os.stat_result) -> None:
        self._st = st

    def __getattr__(self, name: str) -> Any:
        return getattr(self._st, name)

    @property
    def st_ctime_ns(self) -> int:
        return int(self._st.st_mtime_ns)


def mount_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Make ``text`` the mount table :func:`memo.keeps_ctime` reads, its answers so far forgotten."""
    table = tmp_path / "mountinfo"
    table.write_text(text, encoding="ascii")
    monkeypatch.setattr(memo, "MOUNTINFO", str(table))
    monkeypatch.setattr(memo, "_kept", {})
    monkeypatch.setattr(memo, "_mounts", None)


def line(dev: int, kind: str, mount_id: int = 27) -> str:
    """A mount table line for device ``dev`` of file system type ``kind``."""
    return f"{mount_id} 1 {os.major(dev)}:{os.minor(dev)} / /mnt{mount_id} rw,relatime shared:1 - {kind} /dev/x rw\n"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder of this test's own; every file read as an old one (its reads start 10 s from now)."""
    filestamps.flush()
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.setattr(filestamps, "_clock", lambda: time.time_ns() + 10 * 10**9)
    yield folder
    filestamps.flush()


def on_vfat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str = "vfat") -> None:
    """``tmp_path``'s file system made one whose ``ctime`` follows ``mtime``: the status every read sees, and the
    mount table naming its device ``kind``."""
    seen = filestamps.seen
    monkeypatch.setattr(filestamps, "seen", lambda b, a, *rest: seen(_Follows(b), _Follows(a), *rest))
    mount_table(tmp_path, monkeypatch, line(os.stat(tmp_path).st_dev, kind))


def load(monkeypatch: pytest.MonkeyPatch, path: Path) -> tuple[Any, int]:
    """``schema.load`` of card ``path`` in one snapshot, as one process would (its records written and forgotten, as
    at its exit): the document or the error, and how many times bytes of the file's size were hashed."""
    size = path.stat().st_size
    hashed = []

    def counted(data: bytes | memoryview = b"") -> digests.Hash:
        if len(data) == size:
            hashed.append(size)
        return blake2b(data)

    with monkeypatch.context() as m:
        m.setattr(digests, "blake2b", counted)
        try:
            with snapshot.reading():
                got: Any = schema.load(path, "card", REPO / "schema")
        except SchemaError as e:
            got = e
    filestamps.flush()
    return got, len(hashed)


def edit_same_size_mtime_back(card: Path) -> None:
    """The card's memory bandwidth 1935 made the string "19" (same size), its ``mtime`` put back (``touch -m -d``)."""
    st = card.stat()
    card.write_text(card.read_text(encoding="utf-8").replace("value = 1935", 'value = "19"', 1), encoding="utf-8")
    os.utime(card, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (card.stat().st_size, card.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize("kind", ["vfat", "fuse.sshfs"])
def test_where_ctime_follows_mtime_every_read_is_hashed_and_an_edit_with_its_mtime_put_back_is_seen(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    card = tmp_path / "a100.toml"
    shutil.copyfile(CARD, card)
    on_vfat(tmp_path, monkeypatch, kind)
    first, hashed = load(monkeypatch, card)
    assert first["memory"]["bandwidth"]["value"] == 1935 and hashed == 1
    again, hashed = load(monkeypatch, card)
    assert again == first and hashed == 1  # warm, old, status unchanged: hashed all the same
    assert not (cache_dir / "stamps").exists()  # no record made there
    edit_same_size_mtime_back(card)
    refused, hashed = load(monkeypatch, card)
    assert hashed == 1
    assert isinstance(refused, SchemaError)  # the edit seen: before, the 1935 TB/s document was served
    assert "memory.bandwidth.value: '19' is not of type 'number'" in str(refused)


def test_the_same_injected_status_on_a_file_system_that_keeps_ctime_keeps_the_unhashed_warm_read(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = tmp_path / "a100.toml"
    shutil.copyfile(CARD, card)
    on_vfat(tmp_path, monkeypatch, "ext4")
    assert [load(monkeypatch, card)[1] for _ in range(2)] == [1, 0]  # hashed cold, named by its record warm


def test_keeps_ctime_reads_the_type_the_mount_table_gives_the_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev = os.makedev
    mount_table(tmp_path, monkeypatch, "".join([
        line(dev(254, 0), "ext4", 27),
        line(dev(0, 50), "fuse.sshfs", 28),
        line(dev(8, 17), "vfat", 29),
        line(dev(0, 60), "btrfs", 30),  # a btrfs subvolume reports a device of its own (0:61): not in the table
        line(dev(0, 70), "tmpfs", 31),
        line(dev(0, 70), "exfat", 32),  # two types for one device: trusted only when every one is
        "33 1 0:80 / /m rw - tmpfs 8:1 rw\n",  # 8:1 only in a later field (a source named so)
        "34 1 0:81 / /m rw\n",  # no separator: no type
    ]))
    assert memo.keeps_ctime(dev(254, 0)) and memo.keeps_ctime(dev(0, 80))
    for unsure in (dev(0, 50), dev(8, 17), dev(0, 61), dev(0, 70), dev(8, 1), dev(0, 81), dev(9, 9)):
        assert not memo.keeps_ctime(unsure), unsure
    assert memo._kept[dev(8, 17)] is False  # answered once a process


def test_no_mount_table_no_status_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "MOUNTINFO", str(tmp_path / "missing"))  # not Linux, or no /proc
    monkeypatch.setattr(memo, "_kept", {})
    monkeypatch.setattr(memo, "_mounts", None)
    assert not memo.keeps_ctime(os.stat(tmp_path).st_dev)


def test_the_code_stamp_and_the_memo_hash_where_ctime_follows_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "facts.py"
    path.write_bytes(b"old = 1\n")
    old_sha = memo._sha256(b"old = 1\n").digest()
    path.write_bytes(b"new = 2\n")  # same size; its status now is what ctime-follows-mtime leaves after the edit
    st = os.stat(path)
    later = time.time_ns() + 10 * 10**9
    item = (str(path), "f", memo._stamp(st), False, old_sha)  # a world stamp's item recorded before the edit
    mount_table(tmp_path, monkeypatch, line(st.st_dev, "ext4"))
    assert cache._file_stamp(str(path), st, later).count(":") == 4  # by its status
    mount_table(tmp_path, monkeypatch, line(st.st_dev, "vfat"))
    assert cache._file_stamp(str(path), st, later) == "#" + blake2b(b"new = 2\n").hexdigest()
    assert not memo._holds(item)  # hashed: the old bytes' sha256 no longer holds
    assert memo._holds((*item[:4], memo._sha256(b"new = 2\n").digest()))


def test_the_mount_table_read_during_a_recorded_run_is_no_input_of_it(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    r = memorecord.Recorder(str(tmp_path), str(tmp_path / "cache"))
    r.hook("open", (memo.MOUNTINFO, "rb", os.O_RDONLY))  # read by keeps_ctime: which files to hash, not the output
    r.hook("open", (str(CARD), "rb", os.O_RDONLY))
    assert list(r.opened) == [str(CARD)] and r.spoiled is None
    r.hook("open", (memo.MOUNTINFO, "wb", os.O_WRONLY))  # a write there is one
    assert r.spoiled == f"wrote {memo.MOUNTINFO}"


def test_a_recorded_run_hashes_a_file_the_previous_entry_stamped_where_ctime_follows_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "card.toml"
    path.write_bytes(b"value = 1\n")
    old_sha = memo._sha256(b"value = 1\n").digest()
    path.write_bytes(b"value = 2\n")  # same size, and (ctime following mtime) the status the entry recorded
    st = memo._stamp(os.stat(path))
    old = {"items": [(str(path), "f", st, False, old_sha)]}
    (tmp_path / "cache").mkdir()
    r = memorecord.Recorder(str(tmp_path), str(tmp_path / "cache"))
    later = time.time_ns() + 10 * 10**9
    mount_table(tmp_path, monkeypatch, line(st[1], "vfat"))
    w = memorecord._World(later, r, old)
    w.file(str(path), st, read=True)
    # the new bytes' digest beside the new output: the old one's, kept, replayed that output once edited back
    assert w.items == [(str(path), "f", st, False, memo._sha256(b"value = 2\n").digest())]
    mount_table(tmp_path, monkeypatch, line(st[1], "ext4"))  # where ctime moves, the status proves the old digest
    w = memorecord._World(later, r, old)
    w.file(str(path), st, read=True)
    assert w.items == [(str(path), "f", st, False, old_sha)]


@pytest.mark.parametrize(("kind", "kept"), [("btrfs", True), ("vfat", False)])
def test_a_device_the_table_does_not_list_is_told_by_the_mount_its_file_was_opened_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, kept: bool
) -> None:
    path = tmp_path / "card.toml"
    path.write_bytes(b"x")
    dev = os.stat(path).st_dev
    with open(path, "rb") as f:
        info = Path(f"/proc/self/fdinfo/{f.fileno()}").read_text(encoding="ascii")
        mount = int(info.split("mnt_id:", 1)[1].split()[0])
        # the file's mount listed under another device, as btrfs lists a subvolume's
        mount_table(tmp_path, monkeypatch, f"{mount} 1 0:999 / /m rw - {kind} /dev/x rw\n" + line(dev + 1, "ext4"))
        assert not memo.keeps_ctime(dev) and dev not in memo._kept  # no line names it; nothing said where it is
        assert memo.keeps_ctime(dev, f.fileno()) is kept
    monkeypatch.setattr(memo, "_kept", {})
    assert memo.keeps_ctime(dev, str(path)) is kept  # by its path, opened O_PATH
    monkeypatch.setattr(memo, "_kept", {})
    assert not memo.keeps_ctime(dev, str(tmp_path / "missing"))
