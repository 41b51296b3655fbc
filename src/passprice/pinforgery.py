"""A pinned fact comes from a registry, never from a hand: every fact a lock file the change adds or rewrites pins
must be one the registry holds (HEAD's fact at that path today, or BASE's) or the one BASE's lock already pinned (for a
lock file new to the change, one a BASE lock of the same card and checkpoint pinned: a lock renamed or copied).

A lock's pinned citation rewritten by hand (``memory.bandwidth`` re-cited to another registered source with a made-up
locator) and its digests recomputed priced exactly as it records, and its citation was registered: ``check`` passed
and ``passprice diff`` said "re-locked" (exit 0), though ``audit LOCK`` now traced the locked price to a document no
card ever cited for it (slip round 10).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from passprice.errors import InputError
from passprice.facts import Fact
from passprice.files import shell_word
from passprice.locks import Lock, read_lock
from passprice.registry import Root


def _today(root: Root, lock: Lock) -> Mapping[str, Fact] | None:
    """The facts ``lock``'s price reads in ``root`` today (card, drafting method, routing, stack: lock paths), with
    the running code (:func:`passprice.reproduce.price_today`); ``None`` when its inputs do not resolve there."""
    from passprice.reproduce import price_today

    today = price_today(root, lock)
    return today.facts if today.facts else None


def forged_pins(base: Root, head: Root, base_files: Iterable[str], changed: Iterable[str]) -> tuple[str, ...]:
    """One line for each lock file of ``changed`` (paths relative to the roots, added or rewritten on HEAD) pinning a
    fact that is neither HEAD's nor BASE's fact at that path today, nor the one BASE's copy of the lock pinned:
    ``locks/x.lock.toml: facts.memory.bandwidth: pins 4.8 TB/s (published) cited nvidia-hopper-whitepaper: …, which
    no registry side holds …``. A lock file that does not read, or whose inputs do not resolve on either side, is left
    to the review's other rules. Also when HEAD prices with its own code: a pin at a path no side holds a fact at
    was left out there, as a fact HEAD's code might add, and a made-up ``stack.overhead.pass`` (3 µs, "published",
    cited to the H200 datasheet) pinned in a lock of no stack beside a price-neutral edit of ``src/passprice`` read
    "re-locked" (exit 0; slip round 30). A path HEAD's code adds is no path of the running code's lock schema, so
    HEAD's lock pinning it does not read, and fails the review as such already. Never raises."""
    on_base = set(base_files)
    out: list[str] = []
    earlier: list[Lock] | None = None  # BASE's locks, read once when a lock file is new to the change
    for rel in changed:
        if not rel.startswith("locks/") or not rel.endswith(".lock.toml"):
            continue
        try:
            lock = read_lock(head.path / rel, head.schema)
        except InputError:
            continue
        known: dict[str, set[str]] = {}
        # HEAD's facts today, BASE's (a lock made before the change's fact edit: drift, which the review flags), and
        # what BASE's copy of this lock pinned (a pin the change leaves alone).
        sides = [_today(head, lock), _today(base, lock)]
        if rel in on_base:
            try:
                before = read_lock(base.path / rel, base.schema)
                sides.append(dict(before.facts))
            except InputError:
                pass
        else:
            # A lock renamed or copied (``git mv``) pins what BASE's lock of the same card and checkpoint pinned: a
            # lock that drifted since (a historic price) renamed failed as "written by hand" (round 19).
            if earlier is None:
                earlier = _base_locks(base, on_base)
            sides += [dict(other.facts) for other in earlier
                      if other.card_pin == lock.card_pin and other.checkpoint_pin == lock.checkpoint_pin]
        if sides[0] is None and sides[1] is None:
            continue
        for facts in sides:
            for path, fact in (facts or {}).items():
                known.setdefault(path, set()).add(fact.digest())
        for path, pinned in lock.facts.items():
            if pinned.digest() in known.get(path, set()):
                continue
            today = (sides[0] or {}).get(path)
            now = "none" if today is None else f"{today.describe()} ({today.provenance.value}) cited {today.citation()}"
            out.append(
                f"{rel}: facts.{path}: pins {pinned.describe()} ({pinned.provenance.value}) cited "
                f"{pinned.citation()}, a fact no side of the change holds (HEAD's today: {now}) and BASE's lock did "
                "not pin: a lock's facts are pinned by passprice lock from a registry, and a pin neither side holds "
                "(written by hand, or made before a later commit of the change edited the fact) cannot be traced; "
                f"re-lock it: passprice lock --update -o {shell_word(rel)}"
            )
    return tuple(out)


def _base_locks(base: Root, files: Iterable[str]) -> list[Lock]:
    """The lock files of ``files`` (BASE's, relative to ``base``) that read. Never raises."""
    found = []
    for rel in sorted(files):
        if rel.startswith("locks/") and rel.endswith(".lock.toml"):
            try:
                found.append(read_lock(base.path / rel, base.schema))
            except InputError:
                continue
    return found
