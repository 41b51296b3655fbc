"""Attack round 62 (issue 13): what sessions 33-34 added — the list of pricing models' ``records``, its updates by
``passprice lock`` at once, and the record kinds and git refs the review reads. Each test builds its reproducer and
asserts the exit status and the words said (or, for the race, that no edit is lost and no read sees a partial
file)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import time
from pathlib import Path

import pytest

from cli_helpers import REPO

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
