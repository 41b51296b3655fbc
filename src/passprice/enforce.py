"""A registered serving that has a lock is priced under it, by every command, as cargo builds from Cargo.lock: its
floors are judged on today's facts and a breach refuses the result; ``--no-lock`` opts out, ``--lock L`` names the
lock, and a lock of another serving, card or checkpoint is refused rather than judged.

Which locks apply: ``--lock L`` alone when given (it must lock the serving priced: the registered serving it names,
its card, its checkpoint's content); else every lock in ``locks/`` that names the registered serving priced (a
serving may have several, e.g. a ``price`` lock and a ``best`` lock: the result must hold all of them), when it
locks the card and checkpoint priced (an override of either prices something no lock of the serving covers, and the
output says so); none for an unregistered serving or with ``--no-lock``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice.facts import Fact
from passprice.files import is_there
from passprice.locks import Lock, Verdict, judge, lock_path, locks_of, read_lock
from passprice.registry import Root
from passprice.servings import Resolved


class LockMismatch(Exception):
    """A lock named with ``--lock`` that locks another serving, card or checkpoint than the one priced: ``what``
    differs, the ``locked`` and the ``priced`` one."""

    name = "LockMismatch"

    def __init__(self, lock: str, what: str, locked: str, priced: str) -> None:
        self.lock = lock
        self.what = what
        self.locked = locked
        self.priced = priced
        super().__init__(
            f"lock {lock} locks {what} {locked}, not {priced} (the {what} priced): a lock guards only what it was "
            "made for; price its own serving (no SERVING), or give the lock of this one"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "LockMismatch", ...}``."""
        return {
            "refusal": self.name,
            "lock": self.lock,
            "what": self.what,
            "locked": self.locked,
            "priced": self.priced,
            "message": str(self),
        }


def serving_name(root: Root, ref: str | None) -> str | None:
    """The registered serving a command's SERVING argument names: a registry name, or the path of a file in
    ``registry/servings``; ``None`` for none or a serving file kept elsewhere."""
    if ref is None:
        return None
    if is_there(root.servings / f"{ref}.toml") and "/" not in ref:
        return ref
    path = Path(ref)
    if path.suffix == ".toml" and is_there(path) and path.resolve().parent == root.servings.resolve():
        return path.name[: -len(".toml")]
    return None


def mismatch(
    lock: Lock, serving: str | None, resolved: Resolved, content: Callable[[], str] | None = None
) -> LockMismatch | None:
    """Why ``lock`` does not lock what ``resolved`` prices (the registered ``serving``, card, checkpoint content),
    or ``None`` when it does. ``content`` gives the priced checkpoint's content digest
    (:func:`passprice.pins.checkpoint_digest` of its header, computed when not given)."""
    from passprice.pins import checkpoint_digest

    if lock.info.serving is not None and serving is not None and lock.info.serving != serving:
        return LockMismatch(lock.name, "serving", lock.info.serving, serving)
    if lock.card != resolved.card.name:
        return LockMismatch(lock.name, "card", lock.card, resolved.card.name)
    pin = lock.checkpoint_pin
    if pin.content is not None:
        digest = checkpoint_digest(resolved.header) if content is None else content()
        if digest != pin.content:
            return LockMismatch(
                lock.name, "checkpoint", f"{pin.name} (content {pin.content[7:19]}…)",
                f"{resolved.spec.checkpoint} (content {digest[7:19]}…)",
            )
    elif pin.sha256 != resolved.header.sha256:
        return LockMismatch(
            lock.name, "checkpoint", f"{pin.name} (header {pin.sha256[:12]}…)",
            f"{resolved.spec.checkpoint} (header {resolved.header.sha256[:12]}…)",
        )
    return None


@attrs.frozen
class Guard:
    """The locks a result is priced under (``locks``, each with the path it was read from), or, when none applies,
    the ``note`` saying why (``None`` when the serving simply has none)."""

    locks: tuple[tuple[Lock, str], ...] = ()
    note: str | None = None

    def names(self) -> list[str]:
        """The names of the locks applied."""
        return [lock.name for lock, _ in self.locks]

    def judge(self, facts: Mapping[str, Fact], rests_on: Iterable[tuple[str, Fact]] = ()) -> tuple[Verdict, ...]:
        """Each lock's verdict on today's ``facts`` at the paths its recorded price rests on, and on ``rests_on``
        (the facts the command's own result rests on)."""
        extra = list(rests_on)
        out = []
        for lock, _ in self.locks:
            pairs = dict(extra)  # the result's own facts, in its order, then those the lock's price rests on
            pairs.update({p: facts[p] for p in lock.rests_on if p in facts and p not in pairs})
            out.append(judge(lock.name, lock.policy, tuple(pairs.items())))
        return tuple(out)

    def line(self, verdicts: Iterable[Verdict] = ()) -> str:
        """One line naming the locks priced under and that they hold, or why none applies."""
        if not self.locks:
            return self.note or "no lock of this serving in locks/"
        shown = ", ".join(f"{lock.name} ({path})" for lock, path in self.locks)
        held = all(v.holds for v in verdicts)
        return f"under lock{'s' if len(self.locks) > 1 else ''} {shown}: {'holds' if held else 'REFUSED'}"

    def to_json(self) -> dict[str, Any]:
        """``{"locks": [names], "note": ...}`` for a command's ``--json``."""
        return {"locks": self.names(), "note": self.note}


def _shown(root: Root, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.path.resolve()))
    except ValueError:
        return str(path)


def guard(
    root: Root, serving: str | None, resolved: Resolved, explicit: str | None = None, no_lock: bool = False
) -> Guard:
    """The locks a command pricing ``resolved`` (of the registered ``serving``, if any) prices under: ``explicit``
    (a lock file or name) alone, else every lock of ``serving`` in ``root/locks`` that locks its card and
    checkpoint; none with ``no_lock``.

    Raises :class:`LockMismatch` for an ``explicit`` lock of something else, :class:`InputError` for a lock that
    does not read."""
    if explicit is not None:
        path = lock_path(root, explicit)
        lock = read_lock(path, root.schema)
        wrong = mismatch(lock, serving, resolved)
        if wrong is not None:
            raise wrong
        return Guard(((lock, _shown(root, path)),))
    if no_lock or serving is None:
        return Guard(note="not under a lock (--no-lock)" if no_lock else "not a registered serving: no lock applies")
    found = [(read_lock(p, root.schema), p) for p in locks_of(root, serving)]
    if not found:
        return Guard()
    from passprice.pins import checkpoint_digest

    content = functools.cache(lambda: checkpoint_digest(resolved.header))  # once, whatever the number of locks
    applies = [(lock, _shown(root, p)) for lock, p in found if mismatch(lock, None, resolved, content) is None]
    if not applies:
        others = ", ".join(f"{lock.name} ({lock.card}, {lock.checkpoint})" for lock, _ in found)
        return Guard(note=f"not under a lock: the locks of {serving} ({others}) lock another card or checkpoint")
    return Guard(tuple(applies))
