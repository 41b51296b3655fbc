"""Issue 13 (session 33, scale34): registries of many locks, memory and time.

- A snapshot's memo keys name a file's bytes by their length and BLAKE2b digest (:func:`snapshot.fingerprint`), and
  the locks a price reads as one serving's batch keep no bytes in the snapshot: 2,000 locks of one serving held their
  131 MB of bytes three times over until the lock line was printed. An edited lock is still seen, and refused by
  name.
- ``check``'s duplicate locks are found by attrs' equality within a rough group (then by their whole text past
  :data:`passprice.check.DUPLICATE_CANDIDATES`), not by unstructuring each lock twice and digesting every fact:
  the same lines either way.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import check, snapshot
from passprice.locks import Lock, read_lock
from passprice.registry import Root

R1 = "r1-qwen7b-h200"


def test_fingerprint_names_long_bytes_by_length_and_digest() -> None:
    short = b"x" * snapshot.FINGERPRINT_AFTER
    assert snapshot.fingerprint(short) is short
    long = b"y" * (snapshot.FINGERPRINT_AFTER + 1)
    size, digest = snapshot.fingerprint(long)
    assert size == 1025 and len(digest) == 32
    assert snapshot.fingerprint(long) == (1025, digest)
    assert snapshot.fingerprint(b"z" + long[1:]) != (1025, digest)


def test_a_batched_lock_keeps_no_bytes_in_the_snapshot() -> None:
    path = REPO / "locks" / f"{R1}.lock.toml"
    with snapshot.reading():
        lock = read_lock(path, REPO / "schema", batch="scale34")
        assert lock.name == R1
        assert snapshot.kept_bytes(path) is None
        assert read_lock(path, REPO / "schema") == lock  # read alone, as one file: kept
        assert snapshot.kept_bytes(path) == path.read_bytes()


@pytest.fixture(scope="module")
def twenty_locks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The registry with 20 copies of R1's lock (past the 16 a batch begins after)."""
    root = copy_root(tmp_path_factory.mktemp("scale34"))
    for i in range(20):
        shutil.copyfile(root / "locks" / f"{R1}.lock.toml", root / "locks" / f"l{i:02d}-{R1}.lock.toml")
    return root


def test_price_under_twenty_locks_names_each_and_sees_an_edit(twenty_locks: Path) -> None:
    result = invoke("price", R1, root=twenty_locks)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.lstrip().startswith("lock "))
    # 23 locks (the 20 copies, R1's own, its best batch's and its llamacpp stack's): eight named, then a count
    assert line.startswith(f"  lock          under locks {R1} (locks/l00-{R1}.lock.toml), ")
    assert f"{R1} (locks/l07-{R1}.lock.toml) and 15 more: floors hold, and the price is the one {R1}, " in line
    assert line.endswith(" and 14 more record")
    # The last copy (read as one of the batch) edited by hand: refused by name, cache or no cache.
    edited = twenty_locks / "locks" / f"l19-{R1}.lock.toml"
    text = edited.read_text()
    edited.write_text(text.replace("value = 989.5", "value = 989.6", 1))
    try:
        result = invoke("price", R1, root=twenty_locks)
        assert result.exit_code == 2, result.output
        assert f"l19-{R1}.lock.toml" in result.output and "array" in result.output
    finally:
        edited.write_text(text)


def _locks(n: int) -> list[tuple[Path, Lock]]:
    """``n`` copies of R1's lock and of its best batch's, alternating, under file names of their own."""
    kept = {name: read_lock(REPO / "locks" / f"{name}.lock.toml", REPO / "schema") for name in (R1, f"{R1}-best")}
    return [(REPO / "locks" / f"c{i:02d}-{name}.lock.toml", kept[name])
            for i in range(n) for name in [(R1, f"{R1}-best")[i % 2]]]


def test_duplicates_by_equality_and_by_text_say_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    locks = _locks(20)
    # one copy of R1's lock with one pinned fact moved is no duplicate of the others
    path, lock = locks[4]
    moved = attrs.evolve(lock, facts={**lock.facts, "array": attrs.evolve(lock.facts["array"], value=990.0)})
    locks[4] = (path.with_name(f"moved-{R1}.lock.toml"), moved)
    root = Root(REPO)
    lines = check.duplicate_lines(root, locks)
    assert len(lines) == 17  # 9 of R1's 10 copies (one moved) less the first, 9 of the best's less the first
    assert lines[0] == (
        (f"locks/c00-{R1}.lock.toml", f"locks/c02-{R1}.lock.toml"),
        f"locks/c02-{R1}.lock.toml duplicates locks/c00-{R1}.lock.toml: it locks serving {R1} (price) with the same "
        f"pins, floors and price under another file name; locks/c02-{R1}.lock.toml is named '{R1}' inside, not "
        f"after its file; it guards nothing locks/c00-{R1}.lock.toml does not, and re-locking one leaves the other "
        "pinning the old facts: remove one",
    )
    assert not any(f"moved-{R1}" in pair[0] + pair[1] for pair, _ in lines)
    monkeypatch.setattr(check, "DUPLICATE_CANDIDATES", 1)  # past one unlike lock a group keys the rest by text
    assert check.duplicate_lines(root, locks) == lines
