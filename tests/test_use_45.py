"""Use 45 (the three product uses end to end, in a scratch git clone): each kind of pull request a reviewer meets,
run through ``passprice diff``'s Markdown; old locks reproduced from history; each lock audited to its sources.

Found: a lock file whose recorded ``tokens_per_s`` was edited by hand (996.1 -> 1,095.7, its digest recomputed) failed
the review with the right row ("does NOT reproduce from its own pinned inputs (edited by hand?)") and summary, but the
one line on standard error a CI log shows began "refused: lock r1-qwen7b-h200 already out of date on BASE", false:
BASE's copy recorded BASE's price and reproduced. Slip 50 had fixed the row, the summary and the note, not that line.

Found too: a stack's fitted fact nudged by hand inside the 0.1 % its fit is re-fitted within (``overhead.layer``
96.63 -> 96.72 µs), no run changed, its lock re-locked: the review read ✅ with nothing to verify. It now asks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from passprice import cache, snapshot
from passprice.locks import lock_text, read_lock
from passprice.registry import find_root
from passprice.review import diff
from test_pin_27 import _copy

LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _review(base: Path, head: Path) -> tuple[int, list[str], list[str | None]]:
    """``passprice diff BASE HEAD``'s exit status, its refusal reasons (stderr's ``refused:`` line, split) and what
    it asks to verify of each fact, in process (one review, ~1 s)."""
    cache.configure(enabled=True)
    with snapshot.reading():
        result = diff(find_root(str(head)), str(base), str(head))
        return result.exit_status, result.refusal_reasons(), [change.to_verify for _, change in result.to_verify]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list[str], list[str | None]]:
    """One review of two hand edits: ``r1-qwen7b-h200``'s recorded tokens/s forged 996.1 -> 1,095.7 (its digest
    recomputed), and the stack ``llamacpp-cuda-2405``'s fitted ``overhead.layer`` nudged 96.63 -> 96.72 µs (+0.093 %,
    inside the fit's 0.1 % tolerance), no run changed."""
    tmp_path = tmp_path_factory.mktemp("use45")
    base = _copy(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    lock = read_lock(head / LOCK)
    assert round(lock.price["tokens_per_s"], 1) == 996.1
    forged = attrs.evolve(lock, price={**lock.price, "tokens_per_s": lock.price["tokens_per_s"] * 1.1})
    (head / LOCK).write_text(lock_text(forged), encoding="utf-8")
    stack = head / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = stack.read_text(encoding="utf-8")
    assert text.count("value = 96.63\n") == 1
    stack.write_text(text.replace("value = 96.63\n", "value = 96.72\n"), encoding="utf-8")
    return _review(base, head)


def test_a_recorded_price_forged_is_not_called_out_of_date_on_base(
    reviewed: tuple[int, list[str], list[str | None]],
) -> None:
    status, reasons, _ = reviewed
    assert status == 1
    # before: "lock r1-qwen7b-h200 already out of date on BASE" came first
    assert not any("out of date on BASE" in reason for reason in reasons), reasons
    assert reasons[-1].startswith("HEAD fails passprice check (1 problem); first: locks/r1-qwen7b-h200.lock.toml: "
                                  "does NOT reproduce, although the pricing model's code is the lock's (first: "
                                  "tokens_per_s)")


def test_a_fitted_stack_fact_nudged_by_hand_is_to_verify(reviewed: tuple[int, list[str], list[str | None]]) -> None:
    # Its lock re-locked, the review read ✅ "1 stack fact changed in 1 file; …", nothing to verify: check re-fits
    # within the tolerance, so only the review, which sees that no run moved, can say it.
    _, _, asks = reviewed
    assert asks == ["the value moved (96.63 µs → 96.72 µs) but its derivation did not (the same runs): a fitted "
                    "figure moves only with what it is fitted to; was it edited by hand? (`passprice check` re-fits "
                    "it only within 0.1 %)"]


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
    status, reasons, _ = _review(base, head)
    assert status == 1
    # walkthrough 57: the line said no way out (each row said "re-lock it"); it names the command for each
    # left53: the locks by name (r1-qwen7b-h200 was last)
    assert reasons == ["locks qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200, r1-qwen7b-h200-best, "
                       "r1-qwen7b-h200-llamacpp already out of date on BASE (BASE's inputs no longer give the price "
                       "their files record: re-lock each, `passprice lock --update -o "
                       "locks/qwen3-30b-a3b-h200.lock.toml`, "
                       "`passprice lock --update -o locks/qwen35-27b-h200-mtp.lock.toml`, `passprice lock --update -o "
                       "locks/r1-qwen7b-h200.lock.toml`, `passprice lock --update -o "
                       "locks/r1-qwen7b-h200-best.lock.toml`, `passprice lock --update -o "
                       "locks/r1-qwen7b-h200-llamacpp.lock.toml`)"]
