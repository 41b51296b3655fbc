"""Slip 50 (issue 13: can a change slip past a lock or a review?), aimed at what a lock priced under a serving stack
adds: ``r1-qwen7b-h200`` locked under ``llamacpp-cuda-2405`` (as branch stacklock30's
``locks/r1-qwen7b-h200-llamacpp.lock.toml``), each key its price is a function of edited one at a time in a scratch
copy and run through ``check``, ``check --frozen``, ``reproduce``, ``price --lock``, ``audit`` and the review (text,
``--json``, Markdown); then here in a copy of passprice's own registry.

Found: a lock edited by hand with its digests recomputed (its pinned ``stack.overhead.layer`` 96.63 → 115.96 µs, or
its expected price 237.4 → 250 tokens/s, or its recorded provenance) failed the review (exit 1) and its row said
"does NOT reproduce from its own pinned inputs (edited by hand?)", but the summary line a reviewer reads first called
it "1 re-locked" (the fact forged) or "1 out of date already on BASE" (the price forged, where BASE's lock reproduced
and recorded BASE's price), the JSON had no list of such locks, and the Markdown note told the author "its price was
out of date already on BASE … once the move is reviewed, re-lock it". Such a lock is now counted as "not reproducing
from its own pinned inputs (edited by hand?)", listed under ``unreproduced``, and told to restore its file or re-lock.

Found too: a lock re-digested to record another provenance than its pins give (``provenance`` "measured" where the
price is "estimated", or the expected price's ``weakest``), no figure moved, read ``price --lock``: "floors hold, and
the price is the one r1-stack records" (exit 0), while ``check``, ``reproduce`` and the review failed it. A lock
publishes its weakest provenance with its figures: when the record's is not today's and no pinned fact the price
reads drifted (a drift says itself), ``price --lock`` now says the price is NOT the one the lock records, and why.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from cli_helpers import REPO, invoke
from passprice import schema
from passprice.locks import lock_text, read_lock
from test_slip_34 import renderings  # one in-process review rendered per format
from test_slip_46 import _stack_locked

LOCK = "locks/r1-stack.lock.toml"
FORGED = "1 not reproducing from its own pinned inputs (edited by hand?)"


def _forge(path: Path, change: object) -> None:
    """Rewrite the lock at ``path`` through ``change`` (a function of a :class:`~passprice.locks.Lock`), its digests
    recomputed by :func:`~passprice.locks.lock_text`: a lock edited by hand that still reads."""
    lock = read_lock(path, schema.schema_dir())
    path.write_text(lock_text(change(lock)), encoding="utf-8")  # type: ignore[operator]


def _layer_forged(lock):  # type: ignore[no-untyped-def]
    facts = dict(lock.facts)
    pinned = facts["stack.overhead.layer"]
    assert pinned.amount == 96.63
    facts["stack.overhead.layer"] = attrs.evolve(pinned, value=pinned.value * 1.2, amount=115.96)
    return attrs.evolve(lock, facts=facts)


def _expected_forged(lock):  # type: ignore[no-untyped-def]
    price = dict(lock.price)
    assert round(price["expected"]["tokens_per_s"], 1) == 237.4
    price["expected"] = {**price["expected"], "tokens_per_s": 250.0}
    return attrs.evolve(lock, price=price)


def _review(base: Path, head: Path) -> tuple[int, list[str], dict[str, object], list[str]]:
    # one review (``passprice diff BASE HEAD``) as text, JSON and markdown
    status, (text, as_json, markdown) = renderings(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    review = json.JSONDecoder().raw_decode(as_json)[0]
    return status, text.splitlines(), review, markdown.splitlines()


def test_a_pinned_stack_fact_forged_is_counted_as_not_reproducing_not_re_locked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _layer_forged)
    checked = invoke("check", "--frozen", root=head)
    assert checked.exit_code == 1, checked.output
    assert invoke("reproduce", LOCK, root=head).exit_code == 1
    status, lines, review, markdown = _review(base, head)
    assert status == 1
    # before: "no fact changed; 1 lock affected, 1 re-locked; HEAD fails passprice check (2 problems); …"
    # the forged pin is a rule of the review's own, which check does not check (tests/test_fix53w.py)
    assert lines[1] == (f"no fact changed; 1 lock affected, {FORGED}; HEAD fails passprice check and the review's "
                        "rules (2 problems: 1 of the review's rules, which passprice check does not check); 10 locks "
                        "unaffected")
    assert ("  r1-stack (locks/r1-stack.lock.toml, card h200_sxm_141gb, price): does NOT reproduce from its own "
            "pinned inputs (edited by hand?): see HEAD fails passprice check") in lines
    assert review["unreproduced"] == ["r1-stack"]
    assert markdown[0].startswith("❌ **passprice diff**")
    assert "re-locked" not in markdown[0]
    assert ("- `r1-stack`: its file does not reproduce from its own pinned inputs (edited by hand?): restore it as "
            "BASE has it (`git checkout BASE -- FILE`), or re-lock it with `passprice lock --update -o "
            "locks/r1-stack.lock.toml`") in markdown


def test_an_expected_price_forged_is_not_called_out_of_date_on_base(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _expected_forged)
    status, lines, review, markdown = _review(base, head)
    assert status == 1
    # before: "no fact changed; 1 lock affected, 1 out of date already on BASE; HEAD fails passprice check (1 …"
    assert lines[1] == (f"no fact changed; 1 lock affected, {FORGED}; HEAD fails passprice check (1 problem); 10 "
                        "locks unaffected")
    assert review["unreproduced"] == ["r1-stack"]
    assert review["stale"] == ["r1-stack"]  # it does not record HEAD's price: still true
    assert not any("out of date already on BASE" in line for line in markdown)  # before: the note said so


def test_a_lock_re_locked_honestly_is_still_re_locked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    path = head / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count("FlashAttention off (the default then)") == 1
    path.write_text(text.replace("FlashAttention off (the default then)", "FlashAttention on"), encoding="utf-8")
    assert invoke("lock", "--update", "-o", str(head / LOCK), root=head).exit_code == 0
    status, lines, review, _ = _review(base, head)
    assert status == 0, lines
    # The shipped stack lock (r1-qwen7b-h200-llamacpp, session 30) pins the stack's runtime too and is not re-locked
    # here: it is to re-pin, as an honest runtime edit asks.
    # walkthrough 57: the runtime rewritten under locks made under the stack is to verify (it read nothing of it)
    assert lines[1] == ("no fact changed; 1 record retitled or re-noted under a locked price, to verify; 2 locks "
                        "affected, 1 to re-pin (lock --update) for check --frozen, 1 re-locked; 9 locks unaffected")
    assert review["unreproduced"] == []


def _claim(key: str, value: object, expected: bool = False):  # type: ignore[no-untyped-def]
    def change(lock):  # type: ignore[no-untyped-def]
        price = dict(lock.price)
        if expected:
            price["expected"] = {**price["expected"], key: value}
        else:
            price[key] = value
        return attrs.evolve(lock, price=price)

    return change


def _priced(root: Path) -> list[str]:
    priced = invoke("price", "--lock", LOCK, root=root)
    assert priced.exit_code == 0, priced.output
    return [line.strip() for line in priced.stdout.splitlines()]


def _refused_forged(root: Path) -> str:
    """``price --lock LOCK --json`` of a forged lock: refused by name (exit 1, slip 53); its JSON document."""
    result = invoke("price", "--lock", LOCK, "--json", root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1].startswith("passprice: refused: LockForged: lock r1-stack "), result.stderr
    assert json.loads(result.stdout)["refusal"] == "LockForged"
    return result.stdout


def test_a_forged_provenance_is_not_the_locked_price_under_price_lock(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _claim("provenance", "measured"))  # today's (and the pins') is estimated
    # before: "lock under lock r1-stack (locks/r1-stack.lock.toml): floors hold, and the price is the one r1-stack
    # records", nothing more; this round: "but the price is NOT the one r1-stack records", exit 0; slip 53: a lock
    # whose pins do not give its record under the code that wrote it is refused by name, exit 1
    out = json.loads(_refused_forged(head))
    assert (out["lock"], out["first"], out["recorded"], out["pinned"]) == (
        "r1-stack", "provenance", "measured", "estimated")
    assert invoke("reproduce", LOCK, root=head).exit_code == 1
    assert invoke("check", "--frozen", root=head).exit_code == 1


def test_a_forged_expected_weakest_is_said_by_price_lock_too(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    _forge(head / LOCK, _claim("weakest", ["scale"], expected=True))  # it is scale, on_chip.capacity, stack.memory…
    out = json.loads(_refused_forged(head))  # slip 53: refused, not said
    assert out["first"] == "expected" and out["recorded"]["weakest"] == ["scale"]


def test_a_fact_whose_provenance_drifted_still_reads_as_drift_not_a_forged_record(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    table = text.index("\n[scale]\n")
    end = text.index('provenance = "estimated"', table) + len('provenance = "estimated"')
    card.write_text(text[:table] + text[table:end].replace('"estimated"', '"measured"') + text[end:],
                    encoding="utf-8")
    lines = _priced(head)
    # the price's weakest moved with the fact (scale leaves it); the lock's record is BASE's: a drift, as before
    assert ("lock          under lock r1-stack (locks/r1-stack.lock.toml): floors hold, and the price is the one "
            "r1-stack records; drifted since the lock (below)") in lines
    assert "drifted since the lock: scale: 33.5 Tcycle/s (estimated) → 33.5 Tcycle/s (measured)" in lines
