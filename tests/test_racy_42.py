"""Issue 16 (session 36, racy42): a file whose status was recorded when its bytes were last hashed, and which had last
changed before that read by more than the clock's tick, is named by the recorded digest without being hashed again
(git's racy-clean rule, :mod:`passprice.filestamps`); any other is hashed. An edit of the same size with its
modification time put back is still read and refused; a file changed just before it was read is hashed on every
read; a record of another passprice is never read; a damaged record file is ignored. No timing: hashes are counted.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import passprice
from cli_helpers import REPO
from passprice import cache, digests, filestamps, locks, schema, snapshot
from passprice.digests import blake2b
from passprice.errors import SchemaError

CARD = REPO / "facts" / "cards" / "a100_pcie_80gb.toml"
R1_LOCK = REPO / "locks" / "r1-qwen7b-h200.lock.toml"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder of this test's own, the records of the process before it forgotten (written) and this
    test's forgotten after it."""
    filestamps.flush()
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    yield folder
    filestamps.flush()


def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read from now on starts 10 s from now: a file written by the test is an old one (no test sleeps)."""
    monkeypatch.setattr(filestamps, "_clock", lambda: time.time_ns() + 10 * 10**9)


def run(monkeypatch: pytest.MonkeyPatch, path: Path, kind: str = "card") -> tuple[Any, list[int]]:
    """``schema.load`` of ``path`` in one snapshot, as one process would (then its records written and forgotten, as
    at its exit): the document or the error, and the sizes of the file-sized bytes hashed meanwhile."""
    size = path.stat().st_size
    hashed: list[int] = []

    def counted(data: bytes | memoryview = b"") -> digests.Hash:
        if len(data) == size:
            hashed.append(len(data))
        return blake2b(data)

    with monkeypatch.context() as m:
        m.setattr(digests, "blake2b", counted)
        try:
            with snapshot.reading():
                got: Any = schema.load(path, kind, REPO / "schema")
        except SchemaError as e:
            got = e
    filestamps.flush()
    return got, hashed


def card_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "a100.toml"
    shutil.copyfile(CARD, copy)
    return copy


def test_an_old_file_is_named_by_its_recorded_digest_not_hashed(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = card_copy(tmp_path)
    later(monkeypatch)
    first, hashed = run(monkeypatch, card)
    assert hashed == [card.stat().st_size]  # hashed once (its cache key), its digest recorded for its status
    assert len(list((cache_dir / "stamps").glob("*.stamps"))) == 1
    again, hashed = run(monkeypatch, card)
    assert hashed == []  # status as recorded, changed long before the record: not hashed
    assert again == first and again["memory"]["bandwidth"]["value"] == 1935


def test_a_same_size_edit_with_its_mtime_put_back_is_read_and_refused(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = card_copy(tmp_path)
    later(monkeypatch)
    run(monkeypatch, card)
    st = card.stat()
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("value = 1935", 'value = "19"', 1), encoding="utf-8")  # same size
    os.utime(card, ns=(st.st_atime_ns, st.st_mtime_ns))  # the modification time the record holds
    now = card.stat()
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    assert now.st_ctime_ns != st.st_ctime_ns  # what no user can put back
    refused, hashed = run(monkeypatch, card)
    assert hashed == [st.st_size]  # read and hashed again: not served the old document
    assert isinstance(refused, SchemaError)
    assert "memory.bandwidth.value: '19' is not of type 'number'" in str(refused)
    assert str(card) in str(refused)


def test_a_racily_clean_file_is_hashed_on_every_read(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = card_copy(tmp_path)
    st = card.stat()
    # Every read starts at the instant the file last changed: within TRUST_NS of it, as a read just after a write
    # is. Read off the real clock, both reads had to begin within 0.1 s of the copy; on a busy machine the first
    # read's validation alone can take longer, and the second read then found the digest the first recorded.
    monkeypatch.setattr(filestamps, "_clock", lambda: st.st_ctime_ns)
    for _ in range(2):
        _, hashed = run(monkeypatch, card)
        assert hashed == [st.st_size]
    # The same status both times: still hashed, as it could have changed unseen. (Not the whole stat result: the
    # first read after the copy moves the access time on a relatime mount, as CI's clean clone at 9c89333a showed.)
    now = card.stat()
    assert (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
    )
    # Nothing recorded of it. (The schema files the first read of a process validates with are old files: recorded
    # when this test runs first in its process, as it does alone; "no record file" failed there on every run.)
    key = filestamps._key()
    stamps = cache_dir / "stamps" / f"{key}.stamps"
    parsed = filestamps._parsed(stamps.read_bytes(), key) if stamps.exists() else (0, {})
    assert parsed is not None and (st.st_dev, st.st_ino) not in parsed[1]


def _status(ctime_ns: int, mtime_ns: int | None = None) -> os.stat_result:
    return cast(os.stat_result, SimpleNamespace(st_ctime_ns=ctime_ns, st_mtime_ns=ctime_ns if mtime_ns is None
                                                else mtime_ns))


def test_racy_is_a_change_within_the_margin_before_the_read_or_after_it() -> None:
    since = 1_700_000_000_500_000_000  # a read at ...000.5 s
    assert filestamps.racy(_status(since - 99_999_999), since)  # 0.099999999 s before: within 100 ms
    assert not filestamps.racy(_status(since - 100_000_001), since)
    assert filestamps.racy(_status(since + 1), since)  # after the read (a clock set back)
    # a whole-second ctime (a file system of whole seconds): 3 s of margin
    assert filestamps.racy(_status(1_699_999_998_000_000_000), since)  # 2.5 s before
    assert not filestamps.racy(_status(1_699_999_997_000_000_000), since)  # 3.5 s before
    # an mtime set into the future (utime) is racy though ctime is old
    assert filestamps.racy(_status(since - 10**10, since + 10**9), since)


@pytest.mark.parametrize("other", ["version", "code", "format"])
def test_a_record_of_another_passprice_is_never_read(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, other: str
) -> None:
    card = card_copy(tmp_path)
    later(monkeypatch)
    run(monkeypatch, card)
    if other == "version":
        monkeypatch.setattr(passprice, "__version__", "0.0.0+other")
    elif other == "code":
        monkeypatch.setattr(cache, "_code_stamp", lambda: "another checkout's code")
    else:
        monkeypatch.setattr(filestamps, "FORMAT", "passprice-stamps-0")
    _, hashed = run(monkeypatch, card)
    assert hashed == [card.stat().st_size]
    assert len(list((cache_dir / "stamps").glob("*.stamps"))) == 2  # each passprice its own file


@pytest.mark.parametrize("damage", ["flip", "truncate", "other-shape"])
def test_a_damaged_record_file_is_ignored(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    card = card_copy(tmp_path)
    later(monkeypatch)
    first, _ = run(monkeypatch, card)
    (stamps,) = (cache_dir / "stamps").glob("*.stamps")
    raw = stamps.read_bytes()
    if damage == "flip":
        raw = raw[:-1] + bytes([raw[-1] ^ 1])
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    else:  # whole (its checksum holds) but records of another shape: a record that is no tuple of four
        import marshal

        body = marshal.dumps({"key": stamps.name[:64], "records": {(st := card.stat()).st_dev: 1,
                                                                    (st.st_dev, st.st_ino): ("x",)}})
        raw = blake2b(body).hexdigest().encode("ascii") + b"\n" + body
    stamps.write_bytes(raw)
    again, hashed = run(monkeypatch, card)
    assert again == first and hashed == [card.stat().st_size]  # hashed, no error, and recorded afresh
    _, hashed = run(monkeypatch, card)
    assert hashed == []


def test_a_schema_edited_to_the_same_size_and_mtime_is_hashed_again(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "schema"
    folder.mkdir()
    path = folder / "card.schema.json"
    shutil.copyfile(REPO / "schema" / "card.schema.json", path)
    later(monkeypatch)

    def key() -> str:
        with snapshot.reading():
            k = cache.key("card", cache._schema_bytes(path), b"the card's bytes")
        filestamps.flush()
        return k

    before = key()
    st = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace('"GB/s"', '"GX/s"', 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    after = key()
    assert after != before  # every card validated against it misses: validated again
    assert after == cache.key("card", path.read_bytes(), b"the card's bytes")


def test_old_lock_files_are_not_hashed_on_a_warm_read(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [tmp_path / f"l{i}-r1.lock.toml" for i in range(3)]
    for p in paths:
        shutil.copyfile(R1_LOCK, p)
    later(monkeypatch)
    size = R1_LOCK.stat().st_size
    read = []
    for _ in ("cold", "warm"):
        hashed: list[int] = []

        def counted(data: bytes | memoryview = b"", hashed: list[int] = hashed) -> digests.Hash:
            if len(data) == size:  # a lock's bytes (the lock schema's too, cold: 43 KB)
                hashed.append(len(data))
            return blake2b(data)

        with monkeypatch.context() as m:
            m.setattr(digests, "blake2b", counted)
            with snapshot.reading():
                read.append([locks.read_lock(p, REPO / "schema", batch="r1") for p in paths])
        filestamps.flush()
        assert hashed == ([size] * 3 if len(read) == 1 else [])
    assert read[0] == read[1] and [lock.source for lock in read[1]] == [str(p) for p in paths]
