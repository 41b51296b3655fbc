"""Issue 13 (session 34, scale37): a lock file's bytes are hashed once a read, and that digest names them in every
key that needs it (the cache's, the snapshot's memo of a content, the refusal memo's); a bytes object hashed
recently is not hashed again though other bytes were hashed in between. The locks read are the same, each with its
own source, and a forged copy is still refused by its own name, cold or warm.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO
from passprice import digests, filestamps, locks, snapshot
from passprice.digests import blake2b
from passprice.errors import InputError

R1_LOCK = REPO / "locks" / "r1-qwen7b-h200.lock.toml"


@pytest.fixture(scope="module")
def lock_copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    """Three copies of the r1 lock under other names, and a forged one (a pinned figure changed, its digest kept)."""
    folder = tmp_path_factory.mktemp("scale37")
    paths = [folder / f"l{i}-r1.lock.toml" for i in range(3)]
    for p in paths:
        shutil.copyfile(R1_LOCK, p)
    forged = folder / "forged-r1.lock.toml"
    forged.write_text(R1_LOCK.read_text(encoding="utf-8").replace("value = 989.5", "value = 989.6", 1),
                      encoding="utf-8")
    return paths, forged


def _read_counting(
    monkeypatch: pytest.MonkeyPatch, paths: list[Path], forged: Path
) -> tuple[list[locks.Lock], list[int]]:
    """The locks at ``paths`` read in one snapshot (the forged one refused, by its name), with the sizes of the
    lock-sized bytes hashed meanwhile (a lock's bytes, or anything holding them)."""
    size = R1_LOCK.stat().st_size
    hashed: list[int] = []

    def counted(data: bytes | memoryview = b"") -> digests.Hash:
        # the lock schema's bytes (43 KB) are named by their digest as any file's: hashed once, cold (racy42)
        if len(data) >= size and len(data) != (REPO / "schema" / "lock.schema.json").stat().st_size:
            hashed.append(len(data))
        return blake2b(data)

    monkeypatch.setattr(digests, "blake2b", counted)
    # every read as if at the moment the files were copied (racily clean: hashed, never named by a recorded digest),
    # so the count does not hang on how long ago the fixture copied them (an old file's status names its digest
    # unhashed: tests/test_racy_42.py)
    monkeypatch.setattr(filestamps, "_clock", lambda: paths[0].stat().st_ctime_ns)
    with snapshot.reading():
        read = [locks.read_lock(p, REPO / "schema", batch="r1") for p in paths]
        with pytest.raises(InputError, match=r"forged-r1\.lock\.toml: .*facts\.array"):
            locks.read_lock(forged, REPO / "schema", batch="r1")
        with pytest.raises(InputError, match=r"forged-r1\.lock\.toml: .*facts\.array"):
            locks.read_lock(forged, REPO / "schema", batch="r1")  # refused again from the refusal memo
    monkeypatch.undo()
    return read, hashed


def test_each_lock_file_is_hashed_once_cold_and_warm(
    lock_copies: tuple[list[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, forged = lock_copies
    size = R1_LOCK.stat().st_size
    forged_size = forged.stat().st_size
    # cold (the first read of this process's private cache), then warm (the entries it stored): each of the three
    # copies' bytes once, and the forged file's once each time it is read; no key holds a lock's bytes joined to
    # anything (a path), so nothing longer than a lock file is hashed
    for _ in ("cold", "warm"):
        read, hashed = _read_counting(monkeypatch, paths, forged)
        assert sorted(hashed) == sorted([size] * 3 + [forged_size] * 2)
        assert [lock.source for lock in read] == [str(p) for p in paths]
        assert read[1] == attrs.evolve(read[0], source=str(paths[1]))


def test_the_lock_read_is_the_lock_read_outside_a_snapshot(lock_copies: tuple[list[Path], Path]) -> None:
    paths, _ = lock_copies
    with snapshot.reading():
        inside = locks.read_lock(paths[2], REPO / "schema", batch="r1")
    alone = locks.read_lock(paths[2], REPO / "schema")
    assert inside == alone and inside.source == str(paths[2])


def test_a_digest_is_kept_for_a_few_recent_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = b"e" * 40_000  # a checkpoint entry read once a snapshot
    others = [bytes([i]) * 66_000 for i in range(digests.KEPT_DIGESTS - 1)]  # locks hashed between its uses
    expected = {id(d): blake2b(d).digest() for d in [entry, *others]}
    hashed: list[int] = []

    def counted(data: bytes | memoryview = b"") -> digests.Hash:
        hashed.append(len(data))
        return blake2b(data)

    monkeypatch.setattr(digests, "blake2b", counted)
    monkeypatch.setattr(digests, "_recent", {})
    for other in others:
        assert digests.blake2b_digest(entry) == expected[id(entry)]
        assert digests.blake2b_digest(other) == expected[id(other)]
    assert hashed == [40_000] + [66_000] * len(others)  # the entry once, though others came between
    # the least recently asked for goes first: past KEPT_DIGESTS others, the entry is hashed again
    for i in range(digests.KEPT_DIGESTS):
        digests.blake2b_digest(bytes([100 + i]) * 10)
    hashed.clear()
    assert digests.blake2b_digest(entry) == expected[id(entry)]
    assert hashed == [40_000]
    # an equal object that is another one is hashed (kept by identity), with the same digest
    assert digests.blake2b_digest(bytes(bytearray(entry))) == expected[id(entry)]
    assert len(digests._recent) == digests.KEPT_DIGESTS and hashed == [40_000, 40_000]
