"""Use 45 (the three product uses end to end, in a scratch git clone): each kind of pull request a reviewer meets,
run through ``passprice diff``'s Markdown; old locks reproduced from history; each lock audited to its sources.

Found: a lock file whose recorded ``tokens_per_s`` was edited by hand (996.1 -> 1,095.7, its digest recomputed) failed
the review with the right row ("does NOT reproduce from its own pinned inputs (edited by hand?)") and summary, but the
one line on standard error a CI log shows began "refused: lock r1-qwen7b-h200 already out of date on BASE", false:
BASE's copy recorded BASE's price and reproduced. Slip 50 had fixed the row, the summary and the note, not that line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

from passprice import cache, snapshot
from passprice.diff import diff
from passprice.locks import lock_text, read_lock
from passprice.registry import find_root
from test_pin_27 import _copy

LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _review(base: Path, head: Path) -> tuple[int, list[str]]:
    """``passprice diff BASE HEAD``'s exit status and its refusal reasons (stderr's ``refused:`` line, split), in
    process."""
    cache.configure(enabled=True)
    with snapshot.reading():
        result = diff(find_root(str(head)), str(base), str(head))
        return result.exit_status, result.refusal_reasons()


def test_a_recorded_price_forged_is_not_called_out_of_date_on_base(tmp_path: Path) -> None:
    base = _copy(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    lock = read_lock(head / LOCK)
    assert round(lock.price["tokens_per_s"], 1) == 996.1
    forged = attrs.evolve(lock, price={**lock.price, "tokens_per_s": lock.price["tokens_per_s"] * 1.1})
    (head / LOCK).write_text(lock_text(forged), encoding="utf-8")
    status, reasons = _review(base, head)
    assert status == 1
    # before: ["lock r1-qwen7b-h200 already out of date on BASE", "HEAD fails passprice check (1 problem); …"]
    assert not any("out of date on BASE" in reason for reason in reasons), reasons
    assert len(reasons) == 1
    assert reasons[0].startswith("HEAD fails passprice check (1 problem); first: locks/r1-qwen7b-h200.lock.toml: does "
                                 "NOT reproduce, although the pricing model's code is the lock's (first: tokens_per_s)")


def test_a_lock_out_of_date_on_both_sides_is_still_said_so(tmp_path: Path) -> None:
    # Where the locks really are behind on BASE (the H200's capacity 141 -> 140 GB on both sides, so nothing moved
    # between them and each H200 lock's recorded capacity_bytes is not BASE's price), the line stays.
    base = _copy(tmp_path / "base", with_schema=True)
    card = base / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("value = 141\n") == 1
    card.write_text(text.replace("value = 141\n", "value = 140\n"), encoding="utf-8")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    status, reasons = _review(base, head)
    assert status == 1
    assert reasons == ["locks qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, "
                       "r1-qwen7b-h200 already out of date on BASE"]
