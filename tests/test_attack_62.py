"""Attack round 62 (issue 13): what sessions 33-34 added — the list of pricing models' ``records``, its updates by
``passprice lock`` at once, and the record kinds and git refs the review reads. Each test builds its reproducer and
asserts the exit status and the words said (or, for the race, that no edit is lost and no read sees a partial
file)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import shutil
import time
from pathlib import Path

import pytest

from cli_helpers import REPO

#: Count the locks built by this module's own commands: none kept from another test's (tests/conftest.py).
FRESH_LASTING = True

LISTED = "src/passprice/pricing_models.json"


def _record(tag: str, i: int) -> str:
    return "sha256:" + hashlib.sha256(f"{tag}{i}".encode()).hexdigest()


def _adds(root: str, tag: str, count: int) -> None:
    """One ``passprice lock``'s update of the list, ``count`` times over (a process of the race). The list is taken
    as the checkout's without judging the checkout's code (17 ms an update; the race is in the read-modify-write)."""
    from passprice import modelhistory

    modelhistory.list_to_update = lambda where: where / LISTED  # type: ignore[assignment]  # a forked process's own
    for i in range(count):
        modelhistory.add_running(Path(root), record=_record(tag, i))


# --- 1. two `lock` runs at once each add their record to the list --------------------------------------------------


def test_locks_at_once_lose_no_record_and_leave_no_partial_list(tmp_path: Path) -> None:
    """Before: two processes adding 100 records each to the checkout's list (as two ``passprice lock -o A`` /
    ``-o B`` runs do, :func:`passprice.modelhistory.add_running`) lost 91 of the 200 (each read the list, the second
    rename dropped the first's record; the lock whose record went is refused ``LockUnlisted`` once its code is
    older). Now the read-modify-write holds the list's lock: all 200 land, and every read meanwhile parses."""
    from passprice.modelhistory import read_known
    from passprice.pins import pricing_model_digest

    root = tmp_path / "checkout"
    listed = root / LISTED
    listed.parent.mkdir(parents=True)
    doc = json.loads((REPO / LISTED).read_text(encoding="utf-8"))
    doc["models"] = doc["models"][:1]  # one older entry: the race is the same, each edit cheaper
    listed.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    count = 100
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_adds, args=(str(root), tag, count)) for tag in "ab"]
    for worker in workers:
        worker.start()
    reads = 0
    while any(worker.is_alive() for worker in workers):
        read_known(listed)  # raises on a partial file
        reads += 1
        time.sleep(0.01)
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    listed_now = read_known(listed)
    records = set(listed_now[pricing_model_digest()].records)
    assert records == {_record(tag, i) for tag in "ab" for i in range(count)}
    assert len(listed_now) == 2 and reads > 0


# --- 2. the list's records: one listed twice, and a list with no room for one more lock's record -------------------


def _list_of(tmp_path: Path, records: list[str], about: str = "") -> Path:
    """A list of one model (the running code's) holding ``records``, padded by an ``about`` text."""
    from passprice.pins import pricing_model_digest

    path = tmp_path / LISTED
    path.parent.mkdir(parents=True, exist_ok=True)
    model = {"digest": pricing_model_digest(), "version": "0.1.0", "first_locked": "2026-12-01",
             "commit": "c23cf4390948", "records": records}
    path.write_text(json.dumps({"about": about, "models": [model]}, indent=1) + "\n", encoding="utf-8")
    return path


def test_a_record_listed_twice_is_named_with_its_two_places(tmp_path: Path) -> None:
    """Before: a ``records`` of 13,600 digests holding one twice was refused by a line of 915,335 characters
    quoting every record ("[…] has non-unique elements"). Now: the record and its two places."""
    from passprice.errors import InputError
    from passprice.modelhistory import read_known

    records = [_record("r", i) for i in range(3000)]
    path = _list_of(tmp_path, [*records, records[7]])
    with pytest.raises(InputError) as raised:
        read_known(path)
    assert str(raised.value) == (f"{path}: not passprice's list of pricing models: models[0].records: "
                                 f"{records[7]!r} is listed twice ([7] and [3000])")


def test_lock_refuses_a_list_it_would_take_past_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ``lock`` into a checkout whose list was 137 bytes short of :data:`KNOWN_BYTES` added its record
    (exit 0, the list 1,048,720 bytes), and every later price of an older-model lock refused the list as over the
    cap (exit 2). Now the list is refused before the lock is written (under :data:`ROOM` bytes left), and
    :func:`add_running` never writes a list past the cap (the file left as it was)."""
    from passprice import modelhistory
    from passprice.errors import InputError

    monkeypatch.setattr(modelhistory, "list_to_update", lambda where: where / LISTED)
    path = _list_of(tmp_path, [_record("r", 0)])
    pad = modelhistory.KNOWN_BYTES - path.stat().st_size - 40  # 40 bytes short: room for no record (77 bytes)
    path = _list_of(tmp_path, [_record("r", 0)], "x" * pad)
    before = path.read_bytes()
    size = len(before)
    assert size == modelhistory.KNOWN_BYTES - 40
    said = (f"{path}: holds {size:,} bytes, and with one more lock's record would pass the 1,048,576 bytes "
            "passprice reads (modelhistory.KNOWN_BYTES; it refuses a larger list on every price): passprice's list "
            "of pricing models, which passprice lock updates when it locks this checkout (the code it locked with "
            "and the lock's [lock] digest); raise the cap in the code that reads it before locking with it")
    with pytest.raises(InputError) as raised:
        modelhistory.require_updatable(path)
    assert str(raised.value) == said + "; the lock was not written"
    with pytest.raises(InputError) as raised:
        modelhistory.add_running(tmp_path, record=_record("r", 1))
    assert str(raised.value) == said
    assert path.read_bytes() == before
    assert modelhistory.add_running(tmp_path, record=_record("r", 0)) is None  # listed already: nothing to write


def test_the_review_counts_stray_records_with_thousands_separators() -> None:
    """A branch adding 12,000 records no lock holds: one failing line, its count written as every count is
    (was ``12000 records``)."""
    from passprice.modelhistory import KnownModel
    from passprice.modellist import list_changes

    old = KnownModel("sha256:" + "a" * 64, "0.1.0", "2026-12-01", "", (_record("r", 0),))
    new = KnownModel(old.digest, old.version, old.first_locked, old.commit,
                     (*old.records, *(_record("s", i) for i in range(12_000))))
    changes = list_changes({old.digest: old}, {new.digest: new}, "sha256:" + "b" * 64)
    assert len(changes.failing) == 1
    assert changes.failing[0].startswith(f"{LISTED}: entry aaaaaaaaaaaa…: 12,000 records (first: lock digest ")


# --- 3. a side of a diff holding thousands of files that are no locks -------------------------------------------------


def test_files_refused_are_parsed_once_a_process_however_many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: 64 refusals were kept, so ``diff`` of a branch adding 3,700 tiny files under ``locks/`` that are no
    locks parsed and validated each 8 times (29,650 lock reads: 15.8 s CPU, 53 s wall); now once each (4.9 s). Here:
    200 such files read 3 times over are parsed 200 times, not 600, and each is refused again by its own line."""
    from passprice import locks
    from passprice.errors import InputError

    parsed: list[str] = []
    real = locks._lock_of_file

    def counted(path: Path, *args: object) -> object:
        parsed.append(str(path))
        return real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(locks, "_lock_of_file", counted)
    files = []
    for i in range(200):
        files.append(tmp_path / f"u{i}.lock.toml")
        files[-1].write_text(f"x = {i}\n", encoding="utf-8")
    for _ in range(3):
        for path in files:
            with pytest.raises(InputError, match=rf"^{path}: not a lock file \(no \[lock\] table"):
                locks.read_lock(path)
    assert len(parsed) == 200 and len(set(parsed)) == 200


def test_refusals_kept_are_bounded_by_count_and_characters() -> None:
    from passprice.errors import InputError, Refusals

    kept = Refusals(most=3, chars=100)
    for i in range(5):
        kept.keep(i, InputError(f"line {i}"))
    assert [kept.get(i) is not None for i in range(5)] == [False, False, True, True, True]
    kept.keep("big", InputError("x" * 95))  # 95 + 6 characters of line 4 pass 100: only the newest stays
    assert [kept.get(k) is not None for k in (2, 3, 4, "big")] == [False, False, False, True]
    kept.keep("huge", InputError("y" * 101))  # alone past the bound: kept by none
    assert kept.get("huge") is None and not kept


# --- 4. one value breaking two bounds of one side is one line --------------------------------------------------------


@pytest.mark.parametrize(("amount", "said"), [
    (-1.0, "-1.0 is less than or equal to the minimum of 0"),
    (1e308, "1e+308 is greater than the maximum of 1"),
])
def test_a_pinned_share_past_two_bounds_is_one_line(tmp_path: Path, amount: float, said: str) -> None:
    """Before: a lock pinning ``routing.hot_share`` at -1 (digests recomputed) was refused by two lines, the
    share's ``exclusiveMinimum`` 0 and every fact's ``minimum`` 0 (at 1e308: the share's maximum 1 and every
    fact's 1e18); now one, the tighter bound's."""
    import attrs

    from passprice.errors import InputError
    from passprice.locks import lock_text, read_lock

    target = tmp_path / "qwen3-30b-a3b-h200.lock.toml"
    shutil.copyfile(REPO / "locks" / target.name, target)
    lock = read_lock(target)
    was = lock.facts["routing.hot_share"]
    pinned = attrs.evolve(was, amount=amount, value=was.value / was.amount * amount)
    target.write_text(lock_text(attrs.evolve(lock, facts={**lock.facts, "routing.hot_share": pinned})),
                      encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_lock(target)
    assert raised.value.lines == (f'{target}: facts."routing.hot_share".value: {said}',)
