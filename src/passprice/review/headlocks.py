"""HEAD's lock files are reviewed as ``passprice check`` reads them on HEAD, in its words: a lock the change adds or
edits that does not reproduce from its own pinned inputs (:func:`unreproduced`, with HEAD's own code when HEAD is
priced by it: :func:`_own_code_unreproduced`), a lock duplicating another (:func:`_duplicates`), a symbolic link
naming a lock twice (:func:`_lock_links`), and ``check``'s lines written from the registry's root, not the review's
temporary folder (:func:`_unrooted`). Lines only; :class:`~passprice.review.verdict.Diff` decides what fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from passprice.errors import InputError
from passprice.files import shell_word
from passprice.locks import Lock, read_lock
from passprice.registry import lock_order
from passprice.review.impacts import _locks
from passprice.review.sides import Side, file_kind

if TYPE_CHECKING:

    pass


def _unrooted(side: Side, lines: Sequence[str]) -> tuple[str, ...]:
    """``check``'s ``lines`` on ``side`` as a review shows them: a git revision's files are read from a temporary
    folder, gone when ``diff`` ends, so a path in it is written relative to the registry (``facts/cards``) and the
    folder itself as the revision (its commit id, 12 digits). A review of a revision where a card was renamed said
    "card 'a40': not found in /tmp/passprice-diff-1_lpfmmh/facts/cards; … copy …/a40.toml into
    /tmp/passprice-diff-1_lpfmmh/facts/cards to use it here" (attack round 24). A folder or the work tree is shown
    as it is."""
    if side.info.revision is None:
        return tuple(lines)
    tops = {str(side.root.path), os.path.realpath(side.root.path)}
    out = []
    for line in lines:
        for top in tops:
            line = line.replace(top + os.sep, "").replace(top, side.info.revision[:12])
        out.append(line)
    return tuple(out)


def _duplicates(head: Side, changed: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines of :func:`passprice.check.duplicate_lines` on HEAD's lock files that read: those of each pair one of
    whose files the change adds or changes (``changed``: paths relative to the root), which the review names under
    their own heading (a lock copied under another name passed the review without a word), then the others, which
    ``check`` warns of on HEAD as it does of them."""
    from passprice.check import duplicate_lines

    touched = set(changed)
    locks = [(head.root.path / rel, lock) for rel, lock in sorted(_locks(head).items(), key=lambda i: lock_order(i[0]))
             if lock is not None]
    found = duplicate_lines(head.root, locks)
    return (tuple(line for pair, line in found if touched & set(pair)),
            tuple(line for pair, line in found if not touched & set(pair)))


def _lock_links(head: Side) -> tuple[str, ...]:
    """``check``'s warning of each symbolic link of HEAD's ``locks/`` that is a second name of a lock file beside it
    (:func:`passprice.check.alias_lines`, in its words), which the review, as ``check``, does not read as a lock of
    its own (:func:`passprice.gitread.lock_alias`). Raises nothing."""
    from passprice.check import alias_lines

    locks = head.root.locks
    try:
        with os.scandir(locks) as entries:
            if not any(entry.is_symlink() for entry in entries):
                return ()  # no link: nothing listed twice
    except OSError:
        return ()
    return tuple(alias_lines(head.root, head.root.scan(locks, ".lock.toml")).values())


def unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """The lines ``passprice check`` would fail HEAD on for its added or changed lock files (``changed``: paths
    relative to the root) that do not reproduce from their own pinned inputs with HEAD's code
    (:func:`passprice.reproduce.reproduce`): a lock whose recorded price, ``rests_on`` or floors were edited by hand
    and its digest recomputed reads, and priced with HEAD's inputs it may even agree with HEAD's facts, but its
    pinned facts do not give what it records. Only when HEAD is priced with the running code (its pricing model is
    this passprice's); a lock that does not read is already a problem of :func:`passprice.check.review_files`.

    A HEAD priced by its own code has its locks priced from their pins by that code, in its own process
    (:func:`passprice.sidecode.price_pins`), and compared here; a lock its code cannot price so fails. Without it,
    a lock's recorded price set by hand to HEAD's price of a raised ``streams.read`` (1,013.4 tokens/s), its pins
    left as BASE pinned them (0.9333, 996.1 tokens/s), beside a price-neutral edit of ``src/passprice``, read "re-pin
    …, re-locked" (exit 0) where ``check`` fails it (slip round 29)."""
    if not head.code.running and head.code.folder is not None:
        return _own_code_unreproduced(head, changed)
    from passprice.reproduce import reproduce

    out = []
    # A lock of one content (its own digest, checked when read: everything it holds but itself) is reproduced once,
    # whatever its file's name or bytes: 1,000 copies of a lock, each of its own bytes, were each reproduced (issue
    # 13, scale88). The line names each file (``rep.verdict(rel)``).
    reproduced: dict[str, Any] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        rep = reproduced.get(lock.info.digest) if lock.info.digest else None
        if rep is None:
            rep = reproduce(head.root, lock, with_today=False)
            if lock.info.digest:
                reproduced[lock.info.digest] = rep
        if not rep.equals:
            out.append(f"{rel}: {rep.verdict(rel)}")
    return tuple(out)


def _own_code_unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """:func:`unreproduced` for a HEAD priced by its own code: for each added or changed lock file of ``changed``,
    the line of :func:`_unpinned_records` (its recorded provenance is not its pins'), else the line saying its pinned
    inputs, priced with HEAD's code, do not give a figure it records (:func:`passprice.reproduce.moved` over
    :meth:`~passprice.locks.Lock.compared`), or that HEAD's code could not price them (it failed, or lacks the calls
    :data:`passprice.sidecode.PINNED_DRIVER` makes): a lock not reproduced is no lock that passes."""
    from passprice.reproduce import moved
    from passprice.sidecode import price_pins, shown_answer

    locks: dict[str, Lock] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            locks[rel] = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
    recorded = {line.split(": ", 1)[0]: line for line in _unpinned_records(head, locks)}
    priced = price_pins(head.root, head.code, [rel for rel in locks if rel not in recorded])
    out = []
    for rel, lock in locks.items():
        if rel in recorded:
            out.append(recorded[rel])
            continue
        answer = priced.get(rel, {})
        now = answer.get("price")
        if not isinstance(now, Mapping):
            # Not priced from its pins by HEAD's code (it failed, or is older than the calls it needs): no
            # reproduction, no pass. A HEAD whose find_checkpoint raised read "re-locked" on a forged price.
            why = answer.get("error", "no answer")
            out.append(f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code: they were not "
                       f"priced ({why}); check it with HEAD's code (passprice check, run from HEAD's src), then "
                       f"re-lock it with that code: passprice lock --update -o {shell_word(rel)}")
            continue
        diffs = moved(lock.price, now, lock.compared())
        if not diffs:
            continue
        first = diffs[0]
        if "refusal" in now:
            what = f"its pinned inputs are refused ({shown_answer(now['refusal'])})"
        else:
            what = (f"first: {first.field}: {_shown_figure(first.recorded)} recorded, {_shown_figure(first.now)} from "
                    "its pins")
        out.append(
            f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code ({what}): its recorded price "
            "is not what its pinned facts give (the lock was edited by hand, its digest recomputed, or written by "
            "other code than HEAD's); restore it, then re-lock it with HEAD's code: passprice lock --update -o "
            f"{shell_word(rel)}"
        )
    return tuple(out)


def _shown_figure(value: Any) -> str:
    """A recorded figure as a reproduction line shows it: a float to every digit (``repr``), a table as
    ``changed``, anything else as text of at most :data:`passprice.sidecode.MAX_ANSWER` characters."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict | list):
        return "changed"
    from passprice.sidecode import shown_answer

    return shown_answer(str(value))  # HEAD's own code answers what it likes: a text of any length


def _unpinned_records(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """For a HEAD priced by its own code (so :func:`unreproduced` cannot re-price its locks from their pins with the
    running code): the lines for its added or changed lock files whose recorded price says it rests on a fact at
    another provenance than the fact the lock pins there, a check of the file's own data that no pricing model
    decides. A lock whose floor and recorded ``rests_on`` were loosened by hand to ``assumed`` (its pin still
    ``measured``, its digest recomputed) beside a price-neutral edit of ``src/passprice`` read "re-locked, floors
    loosened" (exit 0; slip round 28), where the same lock without the code change fails as not reproducing."""
    out = []
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        recorded: dict[str, Any] = dict(lock.price.get("rests_on", {}))
        expected = lock.price.get("expected")
        if isinstance(expected, Mapping):
            recorded.update(expected.get("rests_on", {}))
        for path, provenance in sorted(recorded.items()):
            pinned = lock.facts.get(path)
            if pinned is not None and pinned.provenance.value != provenance:
                out.append(
                    f"{rel}: does NOT reproduce from its own pinned inputs: its price records {path} as {provenance}, "
                    f"and the lock pins {path} {pinned.provenance.value}: the lock was edited by hand (its digest "
                    f"recomputed); restore it, then re-lock it: passprice lock --update -o {shell_word(rel)}"
                )
                break
    return tuple(out)
