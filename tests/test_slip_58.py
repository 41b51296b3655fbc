"""Slip 58 (issue 13): a lock whose floors were loosened by hand, its ``[lock] digest`` recomputed, read in the review
as "re-locked, floors loosened" (⚠️, exit 0), exactly as an honest ``passprice lock --update --force --require …``.
Every lock ``passprice lock`` writes into ``locks/`` of a checkout of passprice has its digest listed among its
pricing model's records (slip 57), a hand-made one not: the review now refuses it by name. Each test builds its
reproducer (a scratch git repository: the registry with one lock and passprice's ``src/passprice``)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, invoke
from test_diff import commit_all, git
from test_slip_53 import R1
from test_slip_57 import LISTED, _checkout

SAYS = "not written by passprice lock: its digest is in no record of the pricing model list"


def _loosen_by_hand(root: Path) -> str:
    """R1's floors on ``streams.read`` and ``memory.bandwidth`` and its floor loosened to ``assumed``, every digest
    recomputed as passprice computes it (:func:`passprice.locks.lock_text`); the new ``[lock] digest``."""
    from passprice.facts import Provenance
    from passprice.locks import Policy, lock_text, read_lock

    lock = read_lock(root / R1)
    paths = {**lock.policy.paths, "streams.read": Provenance.ASSUMED, "memory.bandwidth": Provenance.ASSUMED}
    (root / R1).write_text(lock_text(attrs.evolve(lock, policy=Policy(Provenance.ASSUMED, paths))), encoding="utf-8")
    return read_lock(root / R1).info.digest


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``main``: the registry with the r1-qwen7b-h200 lock alone, and passprice's ``src/passprice``; branch ``hand``:
    the lock's floors loosened by hand (:func:`_loosen_by_hand`); branch ``honest``: ``passprice lock --update --force
    --require streams.read=assumed`` (the lock and its record in the list). Returns the repository and the hand-made
    lock's digest."""
    root = _checkout(tmp_path_factory.mktemp("slip58"))
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name != "r1-qwen7b-h200.lock.toml":
            lock.unlink()
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    git(root, "checkout", "-q", "-b", "hand")
    digest = _loosen_by_hand(root)
    commit_all(root, "loosen by hand")
    git(root, "checkout", "-q", "-b", "honest", "main")
    result = invoke("lock", "r1-qwen7b-h200", "--update", "--force", "--require", "streams.read=assumed",
                    "-o", str(root / R1), root=root)  # -o absolute: a relative one is the working directory's
    assert result.exit_code == 0, result.output
    commit_all(root, "re-lock, streams.read's floor loosened")
    return root, digest


def test_a_lock_loosened_by_hand_is_refused_by_name(repo: tuple[Path, str]) -> None:
    """Before: "1 re-locked, 1 with floors loosened", the row "⚠️ re-locked, floors loosened", exit 0. Now its
    digest, in none of the records of HEAD's list under its pricing model, fails the review in every format."""
    from passprice.locks import read_lock
    from passprice.registry import Root
    from passprice.review import diff, diff_markdown, diff_text

    root, digest = repo
    assert digest not in (root / LISTED).read_text(encoding="utf-8")
    model = read_lock(root / R1).info.pricing_model  # main's, the same code's
    d = diff(Root(root), "main", "hand")
    assert d.exit_status == 1
    assert d.head_check == (
        f"{R1}: lock.digest: {digest[7:19]}…: {SAYS}; run passprice lock --update -o {R1} (every lock passprice lock "
        f"writes into locks/ has its digest listed in {LISTED} under the code that wrote it: {model[7:19]}…'s "
        "records; a lock edited by hand, its digest recomputed, has none)",)
    text = diff_text(d)
    assert "1 lock affected, 1 not written by passprice lock, 1 with floors loosened; HEAD fails passprice" in text
    assert "re-locked" not in text
    assert (f"  r1-qwen7b-h200 ({R1}, card h200_sxm_141gb, price): {SAYS} (edited by hand, its digest recomputed?): "
            "see HEAD fails passprice check") in text.splitlines()
    markdown = diff_markdown(d)
    assert markdown.startswith("❌ ")
    assert f"| ❌ {SAYS} (edited by hand, its digest recomputed?): see HEAD fails passprice check |" in markdown
    assert (f"- `r1-qwen7b-h200`: {SAYS} (edited by hand, its digest recomputed?): re-lock it with `passprice lock "
            f"--update -o {R1}`") in markdown
    said = d.to_json()
    assert said["unrecorded"] == ["r1-qwen7b-h200"] and said["head_check"] == list(d.head_check)
    assert said["summary"].startswith("no fact changed; 1 lock affected, 1 not written by passprice lock, ")


def test_an_honest_re_lock_loosening_a_floor_passes_with_its_warning(repo: tuple[Path, str]) -> None:
    """``passprice lock --update --force --require streams.read=assumed`` lists the lock's digest under its model:
    "re-locked, floors loosened", ⚠️, exit 0, as before."""
    from passprice.locks import read_lock
    from passprice.modelhistory import read_known
    from passprice.registry import Root
    from passprice.review import diff, diff_markdown

    root, _ = repo
    git(root, "checkout", "-q", "honest")
    lock = read_lock(root / R1)
    assert lock.info.digest in read_known(root / LISTED)[lock.info.pricing_model].records
    d = diff(Root(root), "main", "honest")
    assert d.exit_status == 0 and d.head_check == () and d.to_json()["unrecorded"] == []
    assert [lock.review() for lock in d.locks] == ["re-locked, floors loosened"]
    assert diff_markdown(d).startswith("⚠️ **passprice diff** `main (")


def test_the_records_rule_itself() -> None:
    """:func:`passprice.modellist.unrecorded_locks`: a listed record passes; a digest not among its model's records,
    or a model the list does not hold, is named; a list recording no lock (from before slip 57) judges none. The
    review asks it only of ``locks/NAME.lock.toml`` (a lock file elsewhere is no lock file of the review's), and not
    at all where HEAD's code is not its own (a user's registry: no list records its locks)."""
    from types import SimpleNamespace

    from passprice.modelhistory import KnownModel
    from passprice.modellist import unrecorded_locks
    from passprice.review.impacts import _unrecorded_locks

    a, b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    listed = {a: KnownModel(a, "0.1.0", "2026-12-01", "", (b,))}
    assert unrecorded_locks([("locks/x.lock.toml", a, b)], listed) == ()
    [line] = unrecorded_locks([("locks/x.lock.toml", a, a)], listed)
    assert line.startswith(f"locks/x.lock.toml: lock.digest: aaaaaaaaaaaa…: {SAYS}; run passprice lock --update -o "
                           "locks/x.lock.toml (") and "aaaaaaaaaaaa…'s records" in line
    [line] = unrecorded_locks([("locks/x.lock.toml", b, b)], listed)
    assert "no entry: its pricing model bbbbbbbbbbbb… is not listed" in line
    assert unrecorded_locks([("locks/x.lock.toml", a, a)], {a: KnownModel(a, "0.1.0", "2026-12-01", "")}) == ()
    assert unrecorded_locks([("locks/x.lock.toml", a, a)], "does not read") == ()
    head = SimpleNamespace(root=SimpleNamespace(path=REPO, schema=REPO / "schema"))
    assert _unrecorded_locks(head, [R1], None) == ()  # type: ignore[arg-type]
    assert _unrecorded_locks(head, [R1], ({}, listed)) != ()  # type: ignore[arg-type]
    assert _unrecorded_locks(head, [f"locks/sub/{R1[6:]}", f"facts/{R1[6:]}"], ({}, listed)) == ()  # type: ignore[arg-type]

