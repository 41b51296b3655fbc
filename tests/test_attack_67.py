"""Hostile cases against session 38's first wave (attack67): a header served unread must not be stale when the file
changed through a writable shared mapping, whose writes after the first do not move the file's change time (Linux:
a page already made writable is written without a fault, on ext4 until its writeback, on tmpfs for ever)."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import pytest

from passprice.gguf_header import clear_cache, read_header
from test_header_seen_before import write
from test_header_status_50 import aged, cache_dir  # noqa: F401  (a fixture)


def test_a_header_written_through_a_held_mapping_is_not_served_stale(
    tmp_path: Path, cache_dir: Path  # noqa: F811
) -> None:
    first = write(tmp_path / "a.gguf", after=7).read_bytes()
    second = write(tmp_path / "b.gguf", after=9).read_bytes()
    assert len(first) == len(second)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"\0" * len(first))
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), len(first)) as mapped:
        mapped[:] = first  # every page made writable (the change time moves once, here)
        aged(path)
        for _ in range(2):  # parsed and kept, then its status vouched for
            clear_cache()
            assert read_header(path, array_digests=False).metadata["t.after"] == 7
        before = os.stat(path)
        mapped[:] = second  # no fault: no time moves
        after = os.stat(path)
        if (before.st_ctime_ns, before.st_mtime_ns) != (after.st_ctime_ns, after.st_mtime_ns):
            pytest.skip("this kernel moved the change time on a mapped page's second write")
        clear_cache()
        assert read_header(path, array_digests=False).metadata["t.after"] == 9  # was 7: the stale header served


def test_a_link_swapped_between_the_status_and_the_read_vouches_for_nothing(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """The status is the resolved file's, the bytes were read through the link: a link re-pointed between the two
    (to a copy of the header kept before) vouched the resolved file's new status for the old header's sha256."""
    from passprice import gguf_header

    real = write(tmp_path / "a.gguf", after=7)
    old = real.read_bytes()
    (tmp_path / "copy.gguf").write_bytes(old)
    link = tmp_path / "m.gguf"
    link.symlink_to(real)
    clear_cache()
    assert read_header(link, array_digests=False).metadata["t.after"] == 7  # parsed and kept (sha256 of 7)
    real.write_bytes(write(tmp_path / "b.gguf", after=9).read_bytes())  # the file now says 9
    aged(real)
    stamp = gguf_header._status_stamp

    def swapping(resolved: str) -> str | None:
        taken = stamp(resolved)  # a.gguf's status (saying 9) ...
        (tmp_path / "new").symlink_to(tmp_path / "copy.gguf")
        os.replace(tmp_path / "new", link)  # ... then the link re-pointed to the copy saying 7
        return taken

    monkeypatch.setattr(gguf_header, "_status_stamp", swapping)
    clear_cache()
    assert read_header(link, array_digests=False).metadata["t.after"] == 7  # what was read: the copy's
    monkeypatch.setattr(gguf_header, "_status_stamp", stamp)
    (tmp_path / "new").symlink_to(real)
    os.replace(tmp_path / "new", link)
    clear_cache()
    assert read_header(link, array_digests=False).metadata["t.after"] == 9  # was 7: a.gguf's status vouched stale


def test_an_edit_with_its_modification_time_put_back_misses_the_process_cache(
    tmp_path: Path, cache_dir: Path  # noqa: F811
) -> None:
    """The headers kept in the process were keyed by path, size and modification time alone: a same-size edit with
    its modification time put back (``touch -d``, ``cp -p``, ``rsync -t``) was served the old header in process."""
    path = write(tmp_path / "m.gguf", after=7)
    clear_cache()
    assert read_header(path, array_digests=False).metadata["t.after"] == 7
    st = path.stat()
    path.write_bytes(write(tmp_path / "b.gguf", after=9).read_bytes())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert read_header(path, array_digests=False).metadata["t.after"] == 9  # was 7
    replaced = tmp_path / "c.gguf"
    replaced.write_bytes(write(tmp_path / "d.gguf", after=11).read_bytes())
    os.utime(replaced, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(replaced, path)  # another file (inode) of the same size and time
    assert read_header(path, array_digests=False).metadata["t.after"] == 11


def test_a_card_held_by_a_writable_mapping_is_hashed_and_its_change_priced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A status recorded while a writer held the file named its old digest after a write through the mapping (no
    time moved): the cache served the card's old bandwidth, 1935 where the file said 1635. Now nothing is recorded
    for a file a writer holds as it is read, and the edit is read."""
    from passprice import filestamps
    from test_racy_42 import card_copy, later, run

    filestamps.flush()
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    card = card_copy(tmp_path)
    data = card.read_bytes()
    at = data.index(b"value = 1935") + len(b"value = 1")
    later(monkeypatch)
    with open(card, "r+b") as f, mmap.mmap(f.fileno(), len(data)) as mapped:
        mapped[:] = data
        first, hashed = run(monkeypatch, card)
        assert first["memory"]["bandwidth"]["value"] == 1935 and hashed == [len(data)]
        mapped[at:at + 1] = b"6"  # 1935 -> 1635, no time moved
        again, hashed = run(monkeypatch, card)
        assert again["memory"]["bandwidth"]["value"] == 1635  # was 1935: the old document, its digest vouched
    assert memo_writers(card) == 0


def memo_writers(path: Path) -> int:
    from passprice import memo

    return memo.writers(str(path))


def test_writers_tells_a_writer_from_none() -> None:
    from passprice import memo

    here = Path(__file__)
    assert memo.writers(str(here)) in (0, -1)  # -1: a file of another user, leases off
    assert memo.writers(str(here.parent / "no such file")) == -1
    assert memo.unwritten(str(here.parent / "no such file")) is False


def test_the_memo_keeps_no_run_that_read_a_file_a_writer_holds(tmp_path: Path) -> None:
    """A run that read a card a writer held by a writable mapping was kept, its status trusted at the lookup: after
    a write through the mapping (no time moved) `price` replayed 11,733.7 tokens/s where the card gave 10,682.9."""
    import time

    from passprice import memorecord

    path = tmp_path / "card.toml"
    path.write_bytes(b"x" * 4096)
    st = os.stat(path)
    stamp = (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    later = time.time_ns() + 10 * 10**9  # the file an old one

    def world() -> memorecord._World:
        return memorecord._World(later, memorecord.Recorder(str(tmp_path), str(tmp_path / "cache")), None)

    free = world()
    free.file(str(path), stamp, True)
    assert free.recorder.spoiled is None and free.items[-1][3] is False  # trusted by its status
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), 4096):
        held = world()
        held.file(str(path), stamp, True)
    assert held.recorder.spoiled == f"{path} is open for writing"
