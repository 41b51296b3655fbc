"""A price reads only the locks of its serving, and still sees every lock added, removed or edited (session 32,
issue 13's registries of many files): which serving each lock file locks is kept in the cache under each file's
status (device, inode, size, modification and change times once its change time is a few seconds old, else its
bytes), so an unchanged folder of 10,000 locks of other servings is not read by a price; an edit of the same size
with the modification time put back moves the change time, so it misses whether the file is trusted by its status
or hashed."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice import cache, files, locks
from passprice.registry import Root

#: Count the locks built by this module's own commands: none kept from another test's (tests/conftest.py).
FRESH_LASTING = True


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder of this test's own, the result memo off (each run prices afresh)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.setenv("PASSPRICE_NO_MEMO", "1")
    return folder


@pytest.fixture(params=["hashed", "trusted"])
def clock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``hashed``: the clock 10 s behind, so every file changed "lately" and its bytes key the index; ``trusted``: the
    clock 10 s ahead, so every file's change time is old enough for its status alone to key it (git's racy-clean
    rule, :func:`passprice.cache.file_stamp`)."""
    real = time.time_ns
    ahead = 10_000_000_000 if request.param == "trusted" else -10_000_000_000
    monkeypatch.setattr(time, "time_ns", lambda: real() + ahead)
    yield request.param


def same_size_same_mtime(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` (as long) in ``path``, its size and modification time (ns) kept."""
    assert len(old.encode()) == len(new.encode())
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def lock_line(root: Path) -> str:
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if line.lstrip().startswith("lock "))


def test_a_lock_added_edited_or_removed_is_seen_by_the_next_price(tmp_path: Path, cache_dir: Path, clock: str) -> None:
    root = copy_root(tmp_path)
    folder = root / "locks"
    assert "locks/extra.lock.toml" not in lock_line(root)
    # added: a fourth lock of the serving (a copy of its own) is applied at once
    shutil.copyfile(folder / "r1-qwen7b-h200.lock.toml", folder / "extra.lock.toml")
    assert "(locks/extra.lock.toml)" in lock_line(root)
    # edited within the same second, same size, modification time put back: it now locks another serving
    same_size_same_mtime(folder / "extra.lock.toml", 'serving = "r1-qwen7b-h200"', 'serving = "r1-qwen7b-h201"')
    assert "extra.lock.toml" not in lock_line(root)
    assert locks.locks_of(Root(root), "r1-qwen7b-h201") == (folder / "extra.lock.toml",)
    # and back, the same way
    same_size_same_mtime(folder / "extra.lock.toml", 'serving = "r1-qwen7b-h201"', 'serving = "r1-qwen7b-h200"')
    assert "(locks/extra.lock.toml)" in lock_line(root)
    # an edit of a lock of the serving is read: one byte of its name breaks its digest, and the price refuses
    same_size_same_mtime(folder / "extra.lock.toml", 'name = "r1-qwen7b-h200"\n', 'name = "r1-qwen7b-h20X"\n')
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 2
    assert "extra.lock.toml" in result.output and "digest" in result.output
    # removed: gone from the next price
    (folder / "extra.lock.toml").unlink()
    line = lock_line(root)
    assert "extra.lock.toml" not in line and "(locks/r1-qwen7b-h200.lock.toml)" in line


def test_a_price_reads_none_of_the_other_servings_locks(
    tmp_path: Path, cache_dir: Path, clock: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_root(tmp_path)
    folder = root / "locks"
    for i in range(30):
        shutil.copyfile(folder / "gemma3-270m-h100.lock.toml", folder / f"other{i:02d}.lock.toml")
    lock_line(root)  # the index built, each file's [lock] table looked at once
    opened: list[str] = []
    real = files.open_regular

    def recording(path: Path | str, *args: object, **kwargs: object) -> object:
        opened.append(os.path.basename(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "open_regular", recording)
    assert "(locks/r1-qwen7b-h200.lock.toml)" in lock_line(root)
    read = sorted(name for name in opened if name.endswith(".lock.toml"))
    assert read == ["r1-qwen7b-h200-best.lock.toml", "r1-qwen7b-h200-llamacpp.lock.toml", "r1-qwen7b-h200.lock.toml"]


def test_file_stamp_trusts_an_old_status_and_hashes_a_recent_one(tmp_path: Path) -> None:
    path = tmp_path / "a.lock.toml"
    path.write_bytes(b"x = 1\n")
    st = path.stat()
    now = time.time_ns()
    assert cache.file_stamp(path, now) == "#" + cache.blake2b(b"x = 1\n").hexdigest()
    later = now + 10_000_000_000
    assert cache.file_stamp(path, later) == f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    assert cache.file_stamp(tmp_path, later) is None  # a folder
    assert cache.file_stamp(tmp_path / "missing", later) is None
    os.mkfifo(tmp_path / "fifo")
    assert cache.file_stamp(tmp_path / "fifo", later) is None  # never opened: no read blocks


def test_many_locks_of_one_serving_are_one_cache_entry_past_the_first_few(tmp_path: Path, cache_dir: Path) -> None:
    # 10,001 locks of one serving, one entry each, passed the cache's 4,096 entries and every price built them anew
    root = copy_root(tmp_path)
    folder = root / "locks"
    for i in range(40):
        shutil.copyfile(folder / "r1-qwen7b-h200.lock.toml", folder / f"copy{i:02d}.lock.toml")
    first = lock_line(root)
    assert "and 35 more" in first
    kept = sorted((cache_dir / "objects").glob("*.pickle"))
    assert len(kept) < 40 + 3 - cache.BATCH_AFTER + 20  # not one a lock: the batch holds those past the first 16
    assert lock_line(root) == first


def test_a_lock_of_measured_runs_pickles_its_runs_as_values_and_reads_back_equal() -> None:
    # A RunInput pickles as (class, (run, value)): a lock of over a thousand runs unpickled in about a quarter of the
    # time attrs' state dictionaries took; the cache's unpickler (passprice's attrs classes only) reads it back equal.
    import pickle

    from cli_helpers import REPO
    from passprice.derivations import RunInput

    lock = locks.read_lock(REPO / "locks" / "r1-qwen7b-h200-llamacpp.lock.toml", REPO / "schema")
    body = pickle.dumps(("k", lock), protocol=5)
    assert b"value" not in pickle.dumps(RunInput("r1", 2.5), protocol=5)  # no state dictionary
    key, again = cache._unpickle(body)
    assert key == "k" and again == lock
    runs = [r for f in again.facts.values() for r in getattr(f.derivation, "runs", ())]
    assert len(runs) > 1000 and all(type(r) is RunInput for r in runs)
    assert RunInput("r1", 2.5) == pickle.loads(pickle.dumps(RunInput("r1", 2.5)))


def test_a_batch_is_written_in_chunks_each_its_own_pickle_and_reads_back_whole(tmp_path: Path) -> None:
    # One pickle of 2,000 locks kept every object in the pickler's memo and the pickle twice in memory (847 MiB for
    # a cold price, 533 before batching); chunks of BATCH_CHUNK objects each by a pickler of its own bound both.
    from passprice.derivations import RunInput

    objects = {f"k{i:04d}": RunInput(f"run-{i % 7}", float(i)) for i in range(3 * cache.BATCH_CHUNK + 5)}
    path = tmp_path / "batch.pickle"
    cache._write_batch(path, "KEY", objects)
    raw = path.read_bytes()
    assert raw[:64] == cache.blake2b(raw[65:]).hexdigest().encode("ascii") and raw[64:65] == b"\n"
    # the head, the table of shared facts (empty here: scale35) and four chunks, each a protocol-5 pickle
    assert raw.count(b"\x80\x05") == 1 + 1 + 4
    assert cache._read_batch(path, "KEY") == objects
    assert cache._read_batch(path, "OTHER") is None
    path.write_bytes(raw[:-1])  # torn: its digest fails
    assert cache._read_batch(path, "KEY") is None
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_servings_locks_are_kept_in_batches_of_locks_a_batch(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One batch of 5,000 locks of one serving (185 MB) passed the largest entry the cache reads, so every price built
    # them all again (21.7 s warm; 8.5 s in batches of 500). Here batches of 20: 43 locks, three batches, all served.
    from passprice import enforce

    monkeypatch.setattr(enforce, "LOCKS_A_BATCH", 20)
    root = copy_root(tmp_path)
    folder = root / "locks"
    for i in range(40):
        shutil.copyfile(folder / "r1-qwen7b-h200.lock.toml", folder / f"copy{i:02d}.lock.toml")
    first = lock_line(root)
    held = [cache._read_batch(p, p.stem) for p in (cache_dir / "objects").glob("*.pickle")]
    batches = [b for b in held if b is not None]
    # the first two twenties past their first 16 (4 locks each); the last 3 have entries of their own
    assert sorted(len(b) for b in batches) == [4, 4]
    assert all(isinstance(lock, locks.Lock) for b in batches for lock in b.values())
    built: list[str] = []
    real = locks._lock_of_file
    monkeypatch.setattr(locks, "_lock_of_file", lambda path, *a: built.append(path.name) or real(path, *a))
    assert lock_line(root) == first
    assert built == []  # every lock from its entry or its batch
