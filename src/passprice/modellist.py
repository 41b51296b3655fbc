"""A pull request's change to passprice's list of pricing models is a change to history, shown and judged by the review.

The list (:data:`passprice.modelhistory.KNOWN`, ``src/passprice/pricing_models.json``) says which code passprice
locked this repository with, and the running package believes it: a lock pinning a listed digest reads as an honest
upgrade, one pinning no listed digest is refused as forged (:class:`passprice.enforce.LockModelForged`). So the list
is a fact about history, not code to review by eye: an entry is added only by a re-lock
(:func:`passprice.modelhistory.add_running` lists the code it locked with, and the locks it wrote as ``records``),
of HEAD's code or of a commit's of the branch that re-locked with it, and is never edited or removed. Nothing
here prices: the module is outside the pricing model's digest (only :mod:`passprice.review` imports it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from passprice.files import shell_word
from passprice.modelhistory import KNOWN, KnownModel

#: Where the list lies in a checkout of passprice (a POSIX path from its root): the review reads it on each side.
LISTED = f"src/passprice/{KNOWN.name}"


@attrs.frozen
class ListChanges:
    """How a pull request changes the list (:func:`list_changes`): ``named``, one line for each entry added, removed
    or edited (the review shows each with passprice's own code, :attr:`passprice.review.verdict.Diff.code_files`), and
    ``failing``, the lines of the changes that fail the review (shown with HEAD's problems)."""

    named: tuple[str, ...] = ()
    failing: tuple[str, ...] = ()


def asked_models(base: Mapping[str, KnownModel], head: Mapping[str, KnownModel]) -> frozenset[str]:
    """The models whose locks' records :func:`list_changes` asks of the branch (``branch``): each entry HEAD adds,
    and each whose ``records`` HEAD adds to (but in the list's first change to records, :func:`_first_records`).
    Raises nothing."""
    if _first_records(base):
        return frozenset(d for d in head if d not in base)
    return frozenset(d for d, m in head.items() if d not in base or set(m.records) - set(base[d].records))


def _first_records(base: Mapping[str, KnownModel]) -> bool:
    """Whether BASE's list records no lock at all: a list from before slip 57, to which the first change adds every
    model's records (from ``git log -p -- locks/``)."""
    return not any(m.records for m in base.values())


def _records_line(digest: str, records: Iterable[str], known: frozenset[str]) -> str | None:
    """The failing words for ``records`` listed under ``digest`` that no lock of the branch (``known``) was written
    with, or ``None`` when each was."""
    stray = sorted(set(records) - known)
    if not stray:
        return None
    short = digest.removeprefix("sha256:")[:12]
    return (f"{LISTED}: entry {short}…: {len(stray):,} record{'s' if len(stray) != 1 else ''} (first: lock digest "
            f"{stray[0].removeprefix('sha256:')[:12]}…) that no lock in locks/ of HEAD or of this branch's commits "
            "pinning that code holds: only passprice lock adds a record, the [lock] digest of the lock it writes; "
            "remove them")


def list_changes(base: Mapping[str, KnownModel] | None, head: Mapping[str, KnownModel] | str | None,
                 head_model: str, base_pins: Mapping[str, Sequence[str]] | None = None,
                 branch: Mapping[str, frozenset[str]] | None = None) -> ListChanges:
    """What HEAD does to the list (:data:`LISTED`; ``base`` and ``head`` its entries on each side by digest
    (:func:`passprice.modelhistory.read_known`), ``None`` where a side has none, ``head`` the error line where
    HEAD's does not read) in a review whose HEAD code's pricing-model digest is ``head_model``; ``base_pins``: the
    BASE locks pinning each digest (lock names), named beside a removed entry; ``branch``: for each model of
    :func:`asked_models` whose code this branch had (HEAD's, or a commit's between BASE and HEAD whose locks pin it:
    :func:`passprice.review.impacts._branch_records`), the ``[lock] digest`` of every lock pinning it in ``locks/`` of
    HEAD or of those commits.

    The list is a fact about history: an entry says passprice locked this repository with that code, and the running
    package believes it (:func:`passprice.modelhistory.is_known`: a lock pinning a listed digest is an upgrade, not a
    forgery), and its ``records`` which locks it wrote with it (an older-model lock in ``locks/`` of a checkout of
    passprice must be among them, :class:`passprice.enforce.LockUnlisted`). Slip 56 (issue 13): a pull request
    removing the entry every BASE lock pins read "no changes to facts, registry, locks or the pricing model" (exit 0),
    and one adding ``sha256:111…`` beside a lock pinning it named the list nowhere. So every entry added, removed or
    edited is named, and each fails the review but an added entry of code this branch had: HEAD's own (``passprice
    lock``'s re-lock adds exactly that, :func:`passprice.modelhistory.add_running`) or, slip 57, a commit's of the
    branch that re-locked with it (a branch that re-locked twice: before, its first code failed the review as "the
    digest of no code of this review"); and records added pass only when each is a lock of the branch pinning that
    code (their entry's or one HEAD adds to). In the list's first change to records (BASE's records none), records
    added to BASE's entries are named and pass. A list HEAD removes, or that does not read on HEAD, fails; one BASE
    lacks counts each HEAD entry as added. Never raises."""
    if base == head:
        return ListChanges()
    if head is None:
        line = (f"{LISTED}: removed: the list of every pricing model passprice locked this repository with goes with "
                "the code that reads it; restore it")
        return ListChanges((line,), (line,))
    if isinstance(head, str):
        line = f"{LISTED}: does not read on HEAD ({head})"
        return ListChanges((line,), (line,))
    new, old = head, base or {}
    pins = base_pins or {}
    had = branch or {}
    first = base is not None and _first_records(old)
    named: list[str] = []
    failing: list[str] = []
    firsts = first_records = 0
    for digest in sorted({*old, *new}, key=lambda d: (d not in old, d)):
        was, now = old.get(digest), new.get(digest)
        short = digest.removeprefix("sha256:")[:12]
        if was == now:
            continue
        if now is None:
            assert was is not None
            locks = pins.get(digest, ())
            pinned = (f"; {len(locks)} BASE lock{'s' if len(locks) != 1 else ''} pin{'' if len(locks) != 1 else 's'} "
                      f"it ({', '.join(locks[:3])}{' and more' if len(locks) > 3 else ''})" if locks else "")
            line = (f"{LISTED}: entry {short}… removed ({was.describe()}){pinned}: the list records what passprice "
                    "locked this repository with, and an entry leaves it never; restore it")
            failing.append(line)
        elif was is None:
            stray = _records_line(digest, now.records, had.get(digest, frozenset()))
            if digest == head_model:
                line = f"{LISTED}: entry {short}… added ({now.describe()}): HEAD's own pricing model, a re-lock's"
            elif digest in had:
                line = (f"{LISTED}: entry {short}… added ({now.describe()}): the code of a commit of this branch, "
                        "which re-locked with it (since re-locked again)")
            else:
                line = (f"{LISTED}: entry {short}… added ({now.describe()}): the digest of no code of this review "
                        f"(HEAD's is {head_model.removeprefix('sha256:')[:12]}…) nor of a commit of this branch "
                        "that re-locked with it: only a re-lock adds to the list, and only the code it locked with "
                        "(passprice lock adds it); remove the entry")
                failing.append(line)
                stray = None
            if stray is not None:
                named.append(line)
                line = stray
                failing.append(line)
        elif (was.version, was.first_locked, was.commit) != (now.version, now.first_locked, now.commit):
            line = (f"{LISTED}: entry {short}… edited ({was.describe()} → {now.describe()}): an entry records when "
                    "passprice first locked with that code and is never rewritten; restore it")
            failing.append(line)
        elif gone := sorted(set(was.records) - set(now.records)):
            line = (f"{LISTED}: entry {short}…: {len(gone):,} record{'s' if len(gone) != 1 else ''} removed (first: "
                    f"lock digest {gone[0].removeprefix('sha256:')[:12]}…): a record says passprice wrote that lock "
                    "with that code, and a lock restored from the commit holding it prices by it; restore them")
            failing.append(line)
        else:
            added = set(now.records) - set(was.records)
            many = f"{len(added):,} record{'s' if len(added) != 1 else ''}"
            stray = None if first else _records_line(digest, added, had.get(digest, frozenset()))
            if stray is not None:
                line = stray
                failing.append(line)
            elif first:
                firsts += 1
                first_records += len(added)
                continue  # one line for them all, below
            else:
                line = f"{LISTED}: entry {short}…: {many} added, of locks this branch wrote with that code"
        named.append(line)
    if firsts:
        named.insert(0, f"{LISTED}: {first_records:,} record{'s' if first_records != 1 else ''} listed under "
                        f"{firsts} entr{'ies' if firsts != 1 else 'y'}, the locks passprice wrote with each code (the "
                        "list's first records)")
    return ListChanges(tuple(named), tuple(failing))


#: What :func:`unrecorded_locks` says of a lock file (after ``FILE: lock.digest: DIGEST…``): the review's row and
#: summary find its lines in HEAD's problems by these words (:func:`passprice.review.verdict._unrecorded`).
UNRECORDED_SAYS = "not written by passprice lock: its digest is in no record of the pricing model list"


def unrecorded_locks(locks: Iterable[tuple[str, str, str]], head: Mapping[str, KnownModel] | str | None
                     ) -> tuple[str, ...]:
    """One line for each lock of ``locks`` — ``(path, pricing_model, digest)`` of each format-2 lock file HEAD adds
    or rewrites directly in ``locks/`` of a checkout of passprice (paths from the registry root; the caller reads
    them) — whose ``[lock] digest`` is none of the ``records`` HEAD's list (``head``, read from HEAD's own
    ``src/passprice`` as :func:`list_changes` reads it) holds under its ``pricing_model`` (or whose model HEAD's list
    does not hold): ``locks/r1-qwen7b-h200.lock.toml: lock.digest: 2ec925b3bca1…: not written by passprice lock: its
    digest is in no record of the pricing model list; run passprice lock --update -o …``. Every lock ``passprice
    lock`` writes there has its digest added to its model's records (:func:`passprice.modelhistory.add_running`),
    and a hand-made one does not; slip 58 (issue 13): a lock whose floors were loosened by hand and its digest
    recomputed read "re-locked, floors loosened" (⚠️, exit 0), exactly as an honest ``passprice lock --update
    --force --require …``. Nothing when HEAD has no list, one that does not read (:func:`list_changes` fails it), or
    a list recording no lock at all (from before slip 57). Never raises."""
    if not isinstance(head, Mapping) or not any(m.records for m in head.values()):
        return ()
    out = []
    for rel, model, digest in locks:
        known = head.get(model)
        if known is not None and digest in known.records:
            continue
        where = (f"{model.removeprefix('sha256:')[:12]}…'s records" if known is not None else
                 f"no entry: its pricing model {model.removeprefix('sha256:')[:12]}… is not listed")
        out.append(f"{rel}: lock.digest: {digest.removeprefix('sha256:')[:12]}…: {UNRECORDED_SAYS}; run passprice "
                   f"lock --update -o {shell_word(rel)} (every lock passprice lock writes into locks/ has its digest "
                   f"listed in {LISTED} under the code that wrote it: {where}; a lock edited by hand, its digest "
                   "recomputed, has none)")
    return tuple(out)
