"""Issue 13 (session 33, scale35): many locks of one serving, bounded memory.

The locks of one serving pin mostly the same facts; read in one snapshot they share each equal pinned fact
(:func:`passprice.locks._shared`: found by its path and digest, equality decides), so a batch chunk pickles it once and
reads it back shared. 5,000 locks of one serving held 0.12 MiB a lock until the lock line printed (665 MiB); shared,
a ``price`` under them peaks at 133 MiB. The lock line is the same, and an edited lock is still refused by name.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import cache, snapshot
from passprice.locks import _shared, lock_text, read_lock
from passprice.pins import pricing_model_digest

R1 = "r1-qwen7b-h200"


def test_a_pinned_fact_is_shared_only_with_an_equal_one() -> None:
    fact = read_lock(REPO / "locks" / f"{R1}.lock.toml", REPO / "schema").facts["array"]
    same, other = attrs.evolve(fact), attrs.evolve(fact, note="another note")
    assert _shared("array", "sha256:x", same) is same  # outside a snapshot: nothing shared
    with snapshot.reading():
        assert _shared("array", "sha256:x", fact) is fact
        assert _shared("array", "sha256:x", same) is fact
        assert _shared("array", "sha256:x", other) is other  # the same digest given, not equal: its own
        assert _shared("vector", "sha256:x", same) is same  # another path: its own


def _copies(folder: Path, n: int) -> list[Path]:
    for i in range(n):
        shutil.copyfile(REPO / "locks" / f"{R1}.lock.toml", folder / f"l{i:02d}-{R1}.lock.toml")
    return [folder / f"l{i:02d}-{R1}.lock.toml" for i in range(n)]


def test_a_batch_of_locks_shares_its_pinned_facts_read_back_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "BATCH_CHUNK", 2)  # the 4 batched locks in two chunks: shared across them too
    paths = _copies(tmp_path, cache.BATCH_AFTER + 4)
    alone = read_lock(paths[0], REPO / "schema")
    for _ in range(2):  # built (and the batch written when the snapshot ends), then read back from the batch entry
        with snapshot.reading():
            locks = [read_lock(p, REPO / "schema", batch="scale35") for p in paths]
            last, first = locks[-1], locks[cache.BATCH_AFTER]  # past the first BATCH_AFTER: batched
            assert last == first == attrs.evolve(alone, source=last.source)
            assert len(last.facts) == 14
            assert all(last.facts[p] is first.facts[p] for p in last.facts)


@pytest.fixture(scope="module")
def twenty_locks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The registry with 20 copies of R1's lock (past the 16 a batch begins after)."""
    root = copy_root(tmp_path_factory.mktemp("scale35"))
    _copies(root / "locks", 20)
    return root


def test_price_under_twenty_locks_says_the_same_warm_and_refuses_a_forged_copy(twenty_locks: Path) -> None:
    lines = []
    for _ in range(2):  # the batch built, then read from the cache
        result = invoke("price", R1, root=twenty_locks)
        assert result.exit_code == 0, result.output
        lines.append(next(x for x in result.stdout.splitlines() if x.lstrip().startswith("lock ")))
    assert lines[0] == lines[1]
    assert lines[0].startswith(f"  lock          under locks {R1} (locks/l00-{R1}.lock.toml), ")
    assert f"{R1} (locks/l07-{R1}.lock.toml) and 15 more: floors hold, and the price is the one {R1}, " in lines[0]
    # The last copy pins another memory bandwidth, its digests recomputed (and its pricing model the running code's,
    # so its pins must give its record): its pinned fact is its own, and the copy is refused by name.
    forged = twenty_locks / "locks" / f"l19-{R1}.lock.toml"
    text = forged.read_text()
    lock = read_lock(forged)
    facts = {**lock.facts, "memory.bandwidth": attrs.evolve(lock.facts["memory.bandwidth"], value=5.0, amount=5.0)}
    info = attrs.evolve(lock.info, pricing_model=pricing_model_digest())
    forged.write_text(lock_text(attrs.evolve(lock, facts=facts, info=info)))
    try:
        result = invoke("price", R1, root=twenty_locks)
        assert result.exit_code == 1, result.output
        assert f"LockForged: lock {R1} (locks/l19-{R1}.lock.toml) is forged" in result.output
        assert "first: memory_s: recorded 0.0010039186836974126, its pins give 0.0009637619363495162" in result.output
    finally:
        forged.write_text(text)
