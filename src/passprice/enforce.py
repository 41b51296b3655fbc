"""A registered serving that has a lock is priced under it, by every command, as cargo builds from Cargo.lock: its
floors are judged on today's facts and a breach refuses the result; ``--no-lock`` opts out, ``--lock L`` names the
lock, and a lock of another serving, card or checkpoint is refused rather than judged.

Which locks apply: ``--lock L`` alone when given (it must lock the serving priced: the registered serving it names,
its card, its checkpoint's content); else every lock in ``locks/`` that names the registered serving priced (a
serving may have several, e.g. a ``price`` lock and a ``best`` lock: the result must hold all of them), when it
locks the card and checkpoint priced (an override of either prices something no lock of the serving covers, and the
output says so); none for an unregistered serving or with ``--no-lock``.

A lock never stops applying because what it locks changed under it: when the serving's own checkpoint entry holds
other content than the lock pinned (an edited tensor table), or the registered serving now names another card or
checkpoint than its locks priced, the price is refused (``CheckpointChanged``, ``ServingChanged``), saying what
changed and what to do (review it and re-lock, or ``--no-lock``); only options that price another card or checkpoint
than the serving names step outside its locks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.bounds import position_text
from passprice.facts import Fact
from passprice.files import is_there, shell_word
from passprice.locks import Lock, Policy, Verdict, judge, lock_path, locks_of, read_lock, read_lock_in
from passprice.registry import Root
from passprice.servings import Resolved

if TYPE_CHECKING:
    from passprice.gguf_records import GGUFHeader
    from passprice.reproduce import Drift
    from passprice.stacks import Stack



#: The most locks the ``lock`` line names; more are counted (``and 9,993 more``).
SHOWN_LOCKS = 8


def _listed(names: list[str], last: str = " and ") -> str:
    """``names`` joined with ``, ``, the last after ``last`` (``A, B and C``; ``last=", "``: ``A, B, C``), at most
    :data:`SHOWN_LOCKS` of them named and the rest counted: ``A, …, H and 9,993 more``. 10,001 locks of one serving
    made the ``lock`` line of a plain ``price`` 611,717 characters naming every one (attack round 55). Raises
    nothing."""
    if len(names) > SHOWN_LOCKS:
        return f"{', '.join(names[:SHOWN_LOCKS])} and {len(names) - SHOWN_LOCKS:,} more"
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])}{last}{names[-1]}"

class LockRefusal(Exception):
    """A price refused because of what a lock locks, not because of a floor (exit 1): :class:`LockMismatch`,
    :class:`CheckpointChanged`, :class:`ServingChanged`. ``to_json`` gives ``{"refusal": NAME, ...}``."""

    name = "LockRefusal"

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": NAME, "message": ...}`` (subclasses add their fields)."""
        return {"refusal": self.name, "message": str(self)}


def _relock(lock: Lock) -> str:
    where = f"-o {shell_word(lock.source)}" if lock.source else "-o LOCK"  # a command to paste (attack round 44)
    return (
        f"review the change and re-lock (`passprice lock --update {where}`, through review), or price without the "
        "lock (--no-lock)"
    )


class CheckpointChanged(LockRefusal):
    """The checkpoint a lock pinned (``checkpoint``, its content digest ``pinned``) is the one priced by name, but its
    entry now holds other content (``today``): the lock's floors and recorded price describe another checkpoint, so
    the price is refused rather than left unlocked."""

    name = "CheckpointChanged"

    def __init__(self, lock: Lock, checkpoint: str, pinned: str, today: str) -> None:
        self.lock = lock.name
        self.checkpoint = checkpoint
        self.pinned = pinned
        self.today = today
        what = "content" if pinned.startswith("sha256:") else "header sha256"
        super().__init__(
            f"lock {lock.name} pinned checkpoint {checkpoint} with {what} {_short(pinned)}, and the entry now holds "
            f"other content ({_short(today)}): its content changed since the lock (an edited tensor table or "
            f"metadata), so the lock's floors and price are not this checkpoint's; {_relock(lock)}"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "CheckpointChanged", "lock", "checkpoint", "pinned", "today", "message"}``."""
        return {
            "refusal": self.name,
            "lock": self.lock,
            "checkpoint": self.checkpoint,
            "pinned": self.pinned,
            "today": self.today,
            "message": str(self),
        }


class ServingChanged(LockRefusal):
    """The registered ``serving`` a lock locks now names another ``what`` (``card`` or ``checkpoint``) than the lock
    priced (``locked``, now ``priced``): the serving changed under its lock, which still applies, so the price is
    refused."""

    name = "ServingChanged"

    def __init__(self, lock: Lock, serving: str, what: str, locked: str, priced: str) -> None:
        self.lock = lock.name
        self.serving = serving
        self.what = what
        self.locked = locked
        self.priced = priced
        super().__init__(
            f"lock {lock.name} locks serving {serving} on {what} {locked}, and the serving now names {what} {priced}: "
            f"the serving changed since the lock, so the lock's floors and price are not this serving's; "
            f"{_relock(lock)}"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "ServingChanged", "lock", "serving", "what", "locked", "priced", "message"}``."""
        return {
            "refusal": self.name,
            "lock": self.lock,
            "serving": self.serving,
            "what": self.what,
            "locked": self.locked,
            "priced": self.priced,
            "message": str(self),
        }


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12] + "…"


class LockMismatch(LockRefusal):
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


class LockForged(LockRefusal):
    """A lock whose own pinned inputs, priced with the code that wrote it (its ``pricing_model`` is the running
    code's), do not give the price it records: its pins or its record were edited by hand and its digests
    recomputed (slip 53). A price under it would look locked while resting on a record no registry state gave, so
    every pricing command refuses it, as ``check`` and ``reproduce`` fail it (exit 1). ``lock``: its name;
    ``source``: the file; ``first``: the first recorded field its pins do not give, ``recorded`` → ``pinned`` (what
    the pins price)."""

    name = "LockForged"

    def __init__(self, lock: Lock, first: str, recorded: Any, pinned: Any, no_lock: bool = True) -> None:
        self.lock = lock.name
        self.source = lock.source
        self.first = first
        self.recorded = recorded
        self.pinned = pinned
        from passprice.errors import escaped

        where = f" ({lock.source})" if lock.source else ""
        super().__init__(
            f"lock {lock.name}{where} is forged: its own pinned inputs, priced with the code that wrote it, do not "
            f"give the price it records (first: {escaped(first)}: recorded {_forged_shown(recorded)}, its pins give "
            f"{_forged_shown(pinned)}): it was edited by hand and its digests recomputed, so no price rests on it; "
            "restore the lock from the last commit that holds it as written, or re-lock it through review "
            f"(`passprice lock --update -o {shell_word(lock.source or lock.name)} --force`)"
            + (", or price without the lock (--no-lock)" if no_lock else "")
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "LockForged", "lock", "source", "first", "recorded", "pinned", "message"}``."""
        return {"refusal": self.name, "lock": self.lock, "source": self.source, "first": self.first,
                "recorded": self.recorded, "pinned": self.pinned, "message": str(self)}


class LockModelForged(LockRefusal):
    """A lock whose ``pricing_model`` is the digest of no code any passprice has written locks with (not listed in
    the running package's :data:`passprice.modelhistory.KNOWN`) nor the running code's: typed by hand, digests
    recomputed, most likely beside a record edited by hand (issue 13, slip 55: record and model both forged priced,
    exit 0, "the pricing model (code) or the checkpoint moved it"). Every pricing command and ``reproduce`` refuse
    it (exit 1). ``lock``: its name; ``source``: the file; ``model``: the digest it pins; ``known``: how many the
    list holds."""

    name = "LockModelForged"

    def __init__(self, lock: Lock, model: str, known: int, no_lock: bool = True) -> None:
        from passprice import __version__
        from passprice.errors import escaped

        self.lock = lock.name
        self.source = lock.source
        self.model = model
        self.known = known
        where = f" ({lock.source})" if lock.source else ""
        super().__init__(
            f"lock {lock.name}{where} is forged: it pins pricing model {escaped(_short(model))}, the digest "
            f"neither of the running code nor of any of the {known:,} pricing models passprice {__version__} lists as "
            "having written locks: a lock's pricing model is the digest passprice lock computes, never typed by "
            "hand, so no price rests on it; restore the lock from the last commit that holds it as written, or "
            f"re-lock it through review (`passprice lock --update -o {shell_word(lock.source or lock.name)} --force`)"
            + (", or price without the lock (--no-lock)" if no_lock else "")
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "LockModelForged", "lock", "source", "pricing_model", "known", "message"}``."""
        return {"refusal": self.name, "lock": self.lock, "source": self.source, "pricing_model": self.model,
                "known": self.known, "message": str(self)}


class LockUnlisted(LockRefusal):
    """A lock in ``locks/`` of a checkout of passprice pinning an older pricing model (listed, not the running
    code's) whose ``[lock] digest`` the running package's list does not name among the locks passprice wrote with
    that code (:func:`passprice.modelhistory.names_record`): a lock restored from an older commit is named there, so
    this one was edited by hand, its digests recomputed, and its pricing model set to a real older digest so that
    its record passes as that code's (issue 13, slip 57: priced, exit 0, "the pricing model (code) or the checkpoint
    moved it"). Every pricing command and ``reproduce`` refuse it (exit 1), and ``check`` fails it; a lock of one's
    own registry, written by a released passprice, is never judged so. ``lock``, ``source``, ``model`` (the digest
    it pins), ``record`` (its ``[lock] digest``)."""

    name = "LockUnlisted"

    def __init__(self, lock: Lock, no_lock: bool = True) -> None:
        from passprice import __version__
        from passprice.errors import escaped
        from passprice.modelhistory import written_by

        self.lock = lock.name
        self.source = lock.source
        self.model = lock.info.pricing_model
        self.record = lock.info.digest
        known = written_by(self.model)
        whose = f" ({known.describe()})" if known is not None else ""
        super().__init__(
            f"lock {lock.name} ({lock.source}) is forged: it pins the older pricing model "
            f"{escaped(_short(self.model))}{whose}, but its record (lock digest {escaped(_short(self.record))}) is "
            f"none of the locks passprice {__version__} lists as written with that code in this repository's "
            "locks/: it was edited by hand and its digests recomputed, so no price rests on it; restore the lock "
            "from the last commit that holds it as written, or re-lock it through review "
            f"(`passprice lock --update -o {shell_word(lock.source or lock.name)} --force`)"
            + (", or price without the lock (--no-lock)" if no_lock else "")
        )

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "LockUnlisted", "lock", "source", "pricing_model", "record", "message"}``."""
        return {"refusal": self.name, "lock": self.lock, "source": self.source, "pricing_model": self.model,
                "record": self.record, "message": str(self)}


def require_known_model(lock: Lock, no_lock: bool = True, root: Path | None = None) -> None:
    """Raise :class:`LockModelForged` when ``lock`` (of the current format: a first-format lock typed ``"1"``)
    pins a pricing model no passprice had (:func:`passprice.modelhistory.is_known`); and, given the registry
    ``root`` it is priced in, :class:`LockUnlisted` when it lies in ``root``'s ``locks/`` (its ``source`` relative to
    ``root``), ``root`` is a checkout of passprice (:func:`passprice.modelhistory.in_checkout_locks`), and it pins a
    listed pricing model other than the running code's under a ``[lock] digest`` the list does not name with it
    (:func:`passprice.modelhistory.names_record`). The list is read once a process; the running code's digest is
    computed only for a digest not listed, or a record not named. Raises :class:`InputError` for a shipped list that
    does not read."""
    from passprice.modelhistory import in_checkout_locks, is_known, known_count, names_record, written_by
    from passprice.pins import LOCK_FORMAT

    if lock.info.format < LOCK_FORMAT:
        return
    if not is_known(lock.info.pricing_model):
        raise LockModelForged(lock, lock.info.pricing_model, known_count(), no_lock=no_lock)
    if root is None or not in_checkout_locks(root, lock.source) or names_record(lock.info.pricing_model,
                                                                                  lock.info.digest):
        return
    from passprice.pins import pricing_model_digest

    if written_by(lock.info.pricing_model) is not None and lock.info.pricing_model != pricing_model_digest():
        raise LockUnlisted(lock, no_lock=no_lock)  # the running code's own locks are judged by their pins


def _forged_shown(value: Any, most: int = 160) -> str:
    """A recorded field's value for :class:`LockForged`'s one line: as a serving field is shown, each character that
    does not print escaped (a forged ``rests_on`` key may hold a newline or a bidi control), cut past ``most``
    characters with ``…``."""
    from passprice.errors import escaped

    text = escaped(_field_shown(value))
    return text if len(text) <= most else text[: most - 1] + "…"


def unpriced_record(lock: Lock, header: GGUFHeader) -> tuple[str, Any, Any] | None:
    """Whether ``lock``'s record is what its own pinned inputs give: ``None`` when they give it (or the lock was
    written by other code than the running one, whose move is no forgery: ``reproduce`` says which code moved it),
    else the first recorded field they do not give, ``(field, recorded, pinned)`` (:meth:`Lock.compared`'s order,
    ``refusal`` when the pins are refused). ``header``: the checkpoint the lock pins (its content digest the pinned
    one). Prices once (a few ms: :func:`passprice.locks.priced`); the code's digest is computed only when the price
    differs. Raises nothing."""
    from passprice.errors import InputError
    from passprice.locks import pinned_serving, priced
    from passprice.serving import ServingRefusal

    try:
        now: Mapping[str, Any] = priced(lock.kind, header, lock.pinned_card(), pinned_serving(lock),
                                        lock.pinned_stack())[0]
    except ServingRefusal as e:
        now = e.to_json()
    except (InputError, ValueError, ArithmeticError):
        return None  # pins that do not build a card or price: check says so (a lock that does not read)
    first = next(((f, lock.price.get(f), now.get(f)) for f in lock.compared() if lock.price.get(f) != now.get(f)),
                 None)
    if first is None and "refusal" in now:
        first = ("refusal", None, now["refusal"])
    if first is None:
        return None
    from passprice.pins import pricing_model_digest

    return first if lock.info.pricing_model == pricing_model_digest() else None


#: The cache kind of a lock's verdict "its pins give its record" (:func:`require_unforged`).
UNFORGED_KIND = "lock-unforged-2"


def require_unforged(
    root: Root, locks: Iterable[tuple[Lock, str]], header: GGUFHeader | None = None, no_lock: bool = True
) -> None:
    """Raise :class:`LockForged` for the first of ``locks`` whose record its pinned inputs do not give
    (:func:`unpriced_record`), priced with ``header`` when its content is the one the lock pins (the checkpoint
    priced, which :func:`guard` has checked), else with the lock's own checkpoint found in ``root``
    (:func:`passprice.reproduce.find_checkpoint`; gone: nothing to price, ``reproduce`` says so); and
    :class:`LockModelForged` for one pinning a pricing model no passprice had (:func:`require_known_model`), before
    it is priced. ``no_lock``:
    whether the command takes ``--no-lock``, which the refusal then offers. A lock found unforged is kept so in the
    cache of validated files under its ``[lock] digest`` (the running code's stamp in the key), so a warm run
    prices no lock again."""
    from passprice import cache
    from passprice.modelhistory import in_checkout_locks
    from passprice.pins import checkpoint_digest

    held: set[str] = set()  # the keys of the verdicts found or made in this call
    for lock, _ in locks:
        # the verdict is a function of the lock's bytes (its verified [lock] digest covers every pin and the
        # record) and of the running code (the cache key's code stamp): kept once found, so a warm price does not
        # re-price its locks (a stack lock's re-price imported the stack and decode modules on every price)
        # ... and of where it lies: a lock of the checkout's locks/ is judged against the list's records (slip 57)
        where = b"checkout-locks" if in_checkout_locks(root.path, lock.source) else b""
        kept = cache.key(UNFORGED_KIND, where, lock.info.digest.encode()) if lock.info.digest else None
        # ... so copies of one lock (the same digest, where) are judged once a call, not read from the cache once a
        # copy (issue 16, scale38: 1,000 locks of one serving, three contents, read 1,000 cache entries)
        # a verdict of another shape (an empty document, another digest: forged with its checksum agreeing) is none
        if kept is not None and (kept in held or _verdict(cache.read(kept)) == lock.info.digest):
            held.add(kept)
            continue
        require_known_model(lock, no_lock=no_lock, root=root.path)  # forged with its record (slips 55, 57)
        pinned = header
        if pinned is None or checkpoint_digest(pinned) != lock.checkpoint_pin.content:
            from passprice.reproduce import find_checkpoint

            pinned, _state = find_checkpoint(root, lock)
        if pinned is None:
            continue
        first = unpriced_record(lock, pinned)
        if first is not None:
            raise LockForged(lock, *first, no_lock=no_lock)
        if kept is not None:
            cache.store(kept, {"unforged": lock.info.digest})
            held.add(kept)


def _verdict(kept: dict[str, Any] | None) -> object:
    """The lock digest a kept verdict (``{"unforged": DIGEST}``) names, ``None`` for none. Raises nothing."""
    return None if kept is None else kept.get("unforged")


def require_unforged_files(root: Root, paths: Iterable[Path], no_lock: bool = True) -> None:
    """:func:`require_unforged` of the lock files ``paths`` of ``root``, each read as ``check`` reads it and named
    by its path in the registry (``compare``, which prices under no lock but names its serving's). Raises
    :class:`LockForged`, and :class:`InputError` for a lock that does not read."""
    require_unforged(root, [(attrs.evolve(read_lock_in(root, p), source=_shown(root, p)), _named(root, p))
                            for p in paths], no_lock=no_lock)


def serving_name(root: Root, ref: str | None) -> str | None:
    """The registered serving a command's SERVING argument names: a registry name, or the file in
    ``registry/servings`` the argument reaches as :func:`passprice.servings.serving_path` looks it up (a path to
    one, ``./NAME`` or ``../servings/NAME`` below the servings folder, or a link to one kept elsewhere: the name of
    the file it links to); ``None`` for none or a serving file kept elsewhere. ``price ./r1-qwen7b-h200`` priced
    the registered serving as none, under no lock, where ``price r1-qwen7b-h200`` was refused by its lock's floor.
    Raises :class:`~passprice.errors.InputError` as :func:`passprice.files.look` does."""
    import os

    if ref is None:
        return None
    entry = root.servings / f"{ref}.toml"
    bare = "/" not in ref and os.sep not in ref
    if bare and is_there(entry):
        return ref
    if ref.endswith(".toml") and is_there(ref):
        path = Path(ref)
    elif is_there(entry):
        path = entry
    else:
        return None
    folder = Path(os.path.realpath(root.servings))
    if path.suffix == ".toml" and Path(os.path.realpath(path.parent)) == folder:
        return path.name[: -len(".toml")]
    real = Path(os.path.realpath(path))
    if real.suffix == ".toml" and real.parent == folder:
        return real.name[: -len(".toml")]
    return None


def _same_entry(root: Root, lock: Lock, ref: str) -> bool:
    """Whether the checkpoint reference ``ref`` priced is the one ``lock`` pinned, by name (portable references)."""
    from passprice.locks import portable

    return portable(ref, root, root.checkpoints) == lock.checkpoint_pin.name


def mismatch(
    lock: Lock, serving: str | None, resolved: Resolved, root: Root | None = None,
    content: Callable[[], str] | None = None,
) -> LockRefusal | None:
    """Why ``lock`` does not lock what ``resolved`` prices (the registered ``serving``, card, checkpoint content),
    or ``None`` when it does: a :class:`LockMismatch` naming what differs, or, when the checkpoint priced is the one
    the lock pinned by name (``root`` given) but holds other content, :class:`CheckpointChanged`. ``content`` gives
    the priced checkpoint's content digest (:func:`passprice.pins.checkpoint_digest` of its header, computed when
    not given), so a caller judging several locks digests the checkpoint once."""
    from passprice.pins import checkpoint_digest

    if lock.info.serving is not None and serving is not None and lock.info.serving != serving:
        return LockMismatch(lock.name, "serving", lock.info.serving, serving)
    if lock.card != resolved.card.name:
        return LockMismatch(lock.name, "card", lock.card, resolved.card.name)
    pin = lock.checkpoint_pin
    pinned, what = (pin.content, "content") if pin.content is not None else (pin.sha256, "header")
    if pin.content is None:
        today = resolved.header.sha256
    else:
        today = checkpoint_digest(resolved.header) if content is None else content()
    if today == pinned:
        return None
    if root is not None and _same_entry(root, lock, resolved.spec.checkpoint):
        return CheckpointChanged(lock, pin.name, pinned, today)
    return LockMismatch(
        lock.name, "checkpoint", f"{pin.name} ({what} {_short(pinned)})",
        f"{resolved.spec.checkpoint} ({what} {_short(today)})",
    )


@attrs.frozen
class PriceMoved:
    """Today's price of a serving under its lock ``lock`` is not the one the lock records, although its floors hold:
    the ``recorded`` and ``today`` tokens/s and batches, the ``first`` figure that moved, and why: the pinned facts
    the price rests on that ``drifted`` (each ``path: pinned → today``), the serving's choices that changed
    (``serving``, ``field: locked → today``). ``unstacked``: the stack a lock made under one was made under, when
    today's price is the limit, priced without it (its stack facts then are not drift: they were not read)."""

    lock: str
    recorded: float
    today: float
    recorded_batch: int
    today_batch: int
    first: str
    drifted: tuple[str, ...] = ()
    serving: tuple[str, ...] = ()
    stack: str | None = None
    unstacked: str | None = None
    #: The same differences for programs (:attr:`drifted`, then :attr:`serving`), each ``{"field", "locked",
    #: "now"}``: a fact's path with the pinned fact and today's (:meth:`passprice.reproduce.Drift.to_json`), or
    #: ``serving.FIELD`` with the locked value and today's as the serving document writes them.
    differences: tuple[Mapping[str, Any], ...] = ()
    #: Whether no figure moved, only what the lock records of the price's provenance (:data:`CLAIMS`), with no pinned
    #: fact or serving choice drifted: the record is not what its own pins give (slip round 50).
    claims: bool = False
    #: Whether no figure moved, yet the lock pins another route for its stack's matrix kernels than the stack has
    #: today (:attr:`serving` says which): its record was not priced from that pin (slip round 51).
    pinned_route: bool = False
    #: Which passprice wrote a lock of the lock's pricing model, when it is listed and not only the running code's
    #: (``d82efb38ac44… is passprice 0.1.0's, first locked 2026-12-01 at commit c23cf4390948``:
    #: :meth:`passprice.modelhistory.KnownModel.describe`), said beside "the pricing model (code) … moved it"
    #: (slip 55); ``""`` otherwise.
    written_by: str = ""

    def lines(self) -> list[str]:
        """The recorded price beside today's, then what drifted, one line each (no indent). Of a lock made under a
        serving ``stack``, the prices are the expected ones under it (the question the lock answers), said so."""
        change = 100.0 * (self.today / self.recorded - 1.0) if self.recorded else 0.0
        # A change too small for two decimals is shown in its own digits, never as "-0.00 %" (which reads as none);
        # none at all says that tokens/s did not move (a figure beside it did: batch, bind, MACs …).
        shown = (
            f"{change:+.2f} %" if change != 0 and abs(change) >= 0.005 else f"{change:+.2g} %" if change
            else "tokens/s did not move"
        )
        what = f" expected under stack {self.stack}" if self.stack else ""
        out = [
            f"recorded {self.recorded:,.1f} tokens/s{what} at batch {self.recorded_batch:,} by lock {self.lock}; "
            f"today {self.today:,.1f} tokens/s at batch {self.today_batch:,} ({shown}, first moved: {self.first}) "
            "— not the locked price"
        ]
        out += [f"drifted since the lock: {d}" for d in self.drifted]
        out += [f"serving differs from the locked one: {s}" for s in self.serving]
        if self.unstacked is not None:
            out.append(
                f"lock {self.lock} was made under stack {self.unstacked}: this is the card's limit, its stack facts "
                f"not read (none is judged here); `--stack {self.unstacked}` prices the expected price it locks"
            )
        if self.pinned_route:
            out.append(
                f"no figure moved, yet lock {self.lock} pins another route for its stack's matrix kernels than the "
                "stack has: its record was not priced from its pins, it was edited by hand "
                f"(`passprice reproduce {shell_word(self.lock)}` fails it)"
            )
        elif self.claims:
            claim = (f"{self.first} (the facts the price rests on and their provenance)"
                     if self.first.endswith("rests_on") else self.first)
            out.append(
                f"no pinned fact or serving choice drifted, yet lock {self.lock} records another {claim} than its "
                f"pins give: its record was edited by hand (`passprice reproduce {shell_word(self.lock)}` fails it)"
            )
        elif not self.drifted and not self.serving:
            model = f"; the lock's pricing model {self.written_by}" if self.written_by else ""
            out.append(
                "no pinned fact or serving choice drifted: the pricing model (code) or the checkpoint moved "
                f"it{model}; `passprice reproduce {shell_word(self.lock)}` says which"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"lock", "recorded_tokens_per_s", "tokens_per_s", "recorded_batch", "batch", "first_moved",
        "drifted", "serving", "differences"}``: ``drifted`` and ``serving`` as lines of text, ``differences`` the
        same as ``{"field", "locked", "now"}`` objects."""
        return {
            "lock": self.lock,
            "recorded_tokens_per_s": self.recorded,
            "tokens_per_s": self.today,
            "recorded_batch": self.recorded_batch,
            "batch": self.today_batch,
            "first_moved": self.first,
            "drifted": list(self.drifted),
            "serving": list(self.serving),
            "differences": [dict(d) for d in self.differences],
        }


def price_moved(
    root: Root, lock: Lock, kind: str, price: Mapping[str, Any], resolved: Resolved,
    stack_facts: Mapping[str, Fact] | None = None, stack: Stack | None = None,
) -> PriceMoved | None:
    """How today's ``price`` (a ``--json`` object of ``kind``: ``price`` or ``best``) of ``resolved`` differs from
    the price ``lock`` records, or ``None`` when the lock is of another kind or every figure (:data:`FIGURES
    <passprice.locks.FIGURES>`) is the recorded one. Floors are judged apart (:meth:`Guard.judge`); this says,
    beside a verdict that holds, that the price shown is not the locked one, and why. Under a serving stack
    (``stack_facts``, today's stack facts by lock path), a stack fact that drifted is named too (walkthrough 11: a
    changed ``stack.memory.reserved`` was put down to "the pricing model (code) or the checkpoint"). ``stack``: the
    stack the price is made under; where it is the one the lock was made under, a route that moved (where its
    integer or float matrices run: no fact, yet it moves the expected price) is said as a serving choice, as
    ``reproduce`` says it (``stack S integer_matrices: vector → array``; slip round 46: ``price --lock`` put a route
    moved ``vector → array`` down to "the pricing model (code) or the checkpoint")."""
    from passprice.locks import portable_spec

    if lock.kind != kind:
        return None
    from passprice.locks import holds_host, priced_figures

    fields = priced_figures(lock.price, price, holds_host(lock.price, price))
    same_expected = (
        "expected" not in lock.price
        or "expected" not in price
        or (lock.price["expected"] == price["expected"] and lock.price.get("fixed_s") == price.get("fixed_s"))
    )
    unmoved = same_expected and all(lock.price.get(f) == price.get(f) for f in fields)
    # Where the serving stack's matrix kernels run is pinned beside its facts (``[stack] integer_matrices``): no
    # fact, yet it moves the expected price, so a pinned route that is not today's stack's with no figure moved is a
    # pin its record was not priced from (slip round 51: a lock re-digested to pin ``integer_matrices = "array"``
    # read "the price is the one it records" here while check, reproduce and the review failed it).
    routes = _routes_moved(lock, stack)
    if unmoved and not _claims_moved(lock.price, price) and not routes:
        return None  # the locked price: reproduce (what moved, what drifted) is imported only when one moved
    from passprice.reproduce import drift, expected_moved, moved, serving_differences

    differ = moved(lock.price, price, fields) + expected_moved(lock.price, price)
    claims = False
    pinned_route = False
    if not differ and routes:
        from passprice.locks import Moved

        differ = tuple(Moved(f"stack.{lock.stack.name}.{what}", was, now)  # type: ignore[union-attr]
                       for what, was, now in routes)
        pinned_route = True
    if not differ:
        # No figure moved. What the record says of the price's provenance is a claim a lock publishes too: when it is
        # not today's while no pinned fact the price reads drifted, the record is not what its own pins give (slip
        # round 50: a lock under llamacpp-cuda-2405 re-digested to record provenance "measured" for an estimated
        # price read "floors hold, and the price is the one it records"). Beside a drifted fact it is that drift.
        differ = _claims_moved(lock.price, price)
        if not differ or drift(lock, {**dict(resolved.facts()), **(stack_facts or {})}, _read(price)):
            return None
        if serving_differences(lock.spec, portable_spec(resolved.spec, root)):
            return None
        claims = True

    read = _read(price)
    expected = price.get("expected")
    today = dict(resolved.facts())
    today.update(stack_facts or {})
    unstacked = None
    found = drift(lock, today, read)
    if stack_facts is None and lock.stack is not None:
        # A lock made under a serving stack, priced without it: its stack facts were not read, not removed
        # (walkthrough 24: `price SERVING` listed all 13 of them as "drifted since the lock: stack.… → gone").
        from passprice.stacks import is_stack_path

        unstacked = lock.stack.name
        found = tuple(d for d in found if not is_stack_path(d.path))
    found = other_routing(unread_drafts(found, resolved), lock, resolved)
    drifted = tuple(d.describe() for d in found)
    changes = serving_differences(lock.spec, portable_spec(resolved.spec, root))
    serving = tuple(f"{key}: {_field_shown(was)} → {_field_shown(now)}" for key, was, now in changes)
    differences = (*(d.to_json() for d in found),
                   *({"field": f"serving.{key}", "locked": was, "now": now} for key, was, now in changes))
    if routes and lock.stack is not None:
        serving += tuple(f"stack {lock.stack.name} {what}: {was} → {now}" for what, was, now in routes)
        differences += tuple({"field": f"stack.{lock.stack.name}.{what}", "locked": was, "now": now}
                             for what, was, now in routes)
    under = None
    if isinstance(lock.price.get("expected"), Mapping) and isinstance(expected, Mapping):
        # A lock made under a serving stack records the expected price under it, the question it answers: that
        # one is shown, recorded against today's, whichever figure moved first (walkthrough 12: a card's scale
        # moved the expected price 237.4 -> 236.1 tokens/s, and the line showed the limit's 996.1 -> 996.1).
        was, now = lock.price["expected"], expected
        under = lock.stack.name if lock.stack is not None else str(price.get("stack") or "")
    else:
        was, now = lock.price, price
    return PriceMoved(
        lock.name, float(was.get("tokens_per_s", 0.0)), float(now["tokens_per_s"]),
        int(was.get("batch", 0)), int(now.get("batch", 0)), differ[0].field, drifted, serving, under or None,
        unstacked, differences, claims, pinned_route, _written_by(lock),
    )


def _written_by(lock: Lock) -> str:
    """:attr:`PriceMoved.written_by` of ``lock``: its listed pricing model described, ``""`` when not listed or the
    shipped list does not read. Raises nothing."""
    from passprice.errors import InputError
    from passprice.modelhistory import written_by

    try:
        model = written_by(lock.info.pricing_model)
    except InputError:
        return ""
    return "" if model is None else f"{_short(model.digest)} is {model.describe()}"


def _routes_moved(lock: Lock, stack: Stack | None) -> tuple[tuple[str, str, str], ...]:
    """Each route (``integer_matrices``, ``float_matrices``) that ``lock``, made under ``stack``, pins otherwise than
    ``stack`` has it today, as ``(what, pinned, today)``; empty for a lock of no stack or of another stack than
    ``stack``. Raises nothing."""
    if stack is None or lock.stack is None or stack.name != lock.stack.name:
        return ()
    return tuple((what, was, now) for what, was, now in (
        ("integer_matrices", lock.stack.integer_matrices, stack.integer_matrices),
        ("float_matrices", lock.stack.float_matrices, stack.float_matrices)) if was != now)


#: What a price records of its provenance, beside its figures: the weakest provenance, the facts that are it, and
#: the facts it rests on with each one's provenance (``rests_on``: a key added to a re-digested lock, ``"x" =
#: "derived"``, read "floors hold, and the price is the one r1-stack records" under ``price --lock``, exit 0, while
#: ``reproduce`` and ``check`` failed it; attack round 55).
CLAIMS = ("provenance", "weakest", "rests_on")


def _claims_moved(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[Any, ...]:
    """The :data:`CLAIMS` of the limit, then of the expected price under a stack (``expected.provenance`` …), that
    differ between a ``recorded`` price and ``now``'s, as :class:`passprice.locks.Moved` (it lives in ``locks``, not
    ``reproduce``: importing ``reproduce`` here loaded the GGUF reader, ``fits`` and ``measurements`` on every plain
    price, test_cache / test_perf_25). Raises nothing."""
    from passprice.locks import Moved

    out = [Moved(f, recorded.get(f), now.get(f)) for f in CLAIMS if recorded.get(f) != now.get(f)]
    was, is_ = recorded.get("expected"), now.get("expected")
    if isinstance(was, Mapping) and isinstance(is_, Mapping):
        out += [Moved(f"expected.{f}", was.get(f), is_.get(f)) for f in CLAIMS if was.get(f) != is_.get(f)]
    return tuple(out)


def _read(price: Mapping[str, Any]) -> dict[str, Any]:
    """The fact paths a ``--json`` price object rests on, its expected price's under a stack included."""
    read = dict(price.get("rests_on", {}))
    expected = price.get("expected")
    if isinstance(expected, Mapping):
        read.update(expected.get("rests_on", {}))
    return read


def unread_drafts(found: tuple[Drift, ...], resolved: Resolved) -> tuple[Drift, ...]:
    """``found`` (:func:`passprice.reproduce.drift` of a lock against the facts ``resolved`` reads) less each pinned
    ``draft.acceptance.i`` "gone" only because the serving priced drafts fewer than ``i`` tokens a pass
    (``--draft-tokens 1`` or ``0`` on a serving drafting 2, or its file changed so): the drafting method still holds
    it, today's serving does not read it, and the serving's own change is said beside ("serving differs from the
    locked one: draft: …", or ``serving.draft: … → …``). ``price qwen35-27b-h200-mtp --draft-tokens 1`` said
    "drifted since the lock: draft.acceptance.2: 0.75 (assumed) → gone", and ``max-batch`` the same, while
    facts/drafts/qwen35-mtp.toml still held it (attack round 49). A figure gone while the serving still drafts that
    many tokens stays drift (its price is refused besides). Raises nothing."""
    draft = resolved.spec.draft
    tokens = draft.tokens if draft is not None else 0

    def unread(d: Drift) -> bool:
        head, _, index = d.path.rpartition(".")
        return d.today is None and head == "draft.acceptance" and index.isascii() and index.isdigit() \
            and int(index) > tokens

    return tuple(d for d in found if not unread(d))


def other_routing(found: tuple[Drift, ...], lock: Lock, resolved: Resolved) -> tuple[Drift, ...]:
    """``found`` less each ``routing.*`` drift of a price made with another routing record than the one ``lock``
    pinned (``--routing NAME``, or the serving file naming another): the locked record still holds its figures, the
    priced one is another record, and the serving's own change is said beside (``serving differs from the locked
    one: routing: A → B``). ``price moe-l40s --routing qwen3-30b-a3b-team-chat`` said "drifted since the lock:
    routing.hot_experts: 0.453125 (measured) → 0.3125 (measured)" and "routing.hot_share: 0.9 (measured) → 0.9
    (measured) (citation or note changed)" though qwen3-30b-a3b-measured was unchanged: `fact show … --history`
    found no such change (walkthrough 51). Raises nothing."""
    from passprice.locks import _record_name

    locked, now = lock.spec.routing, resolved.spec.routing
    if locked is None or now is None or _record_name(locked) == _record_name(now):
        return found
    return tuple(d for d in found if not d.path.startswith("routing."))


def _field_shown(value: Any) -> str:
    """A serving field's value as :func:`passprice.reproduce.serving_changes` shows it."""
    from passprice.reproduce import _show

    return _show(value)


def _given_as_file(key: str, now: object) -> bool:
    """Whether a serving difference ``key: … → now`` is a card or checkpoint given as a file (``--card PATH``,
    ``--checkpoint PATH``): a choice of where to read the same record, whose content the lock's pins hold it to (a
    checkpoint of another content is refused as changed), neither a change since the lock nor a serving that differs
    (slip round 45 for the drift lines; the lead, session 27, for the option lines walkthrough 32 added: ``price
    qwen35-27b-h200-mtp --checkpoint tests/data/qwen35-27b-like.header.gguf`` said "serving differs from the locked
    one: checkpoint: qwen35-27b-like → tests/data/…" where the same price by name said nothing). Raises nothing."""
    return key in ("card", "checkpoint") and isinstance(now, str) and ("/" in now or "." in now)


@attrs.frozen
class Guard:
    """The locks a result is priced under (``locks``, each with the path it was read from), or, when none applies,
    the ``note`` saying why (``None`` when the serving simply has none)."""

    locks: tuple[tuple[Lock, str], ...] = ()
    note: str | None = None
    #: The locks made from this serving with other options (:func:`_option_locks`): each lock's name, its path and
    #: the serving fields it pins otherwise (``routing: 'qwen3-30b-a3b-measured' → 'uniform'``), none applied.
    passed: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def passed_lines(self) -> list[str]:
        """One line each lock of :attr:`passed` saying why it was not applied (moe42: ``lock S --best --routing R``
        applied to ``price S --routing R`` while ``best S`` said "no lock of this serving" and nothing of it): a
        lock applies to a price of the serving it pinned, options and all."""
        return [
            f"not applied: {name} ({path}) locks this serving as other options make it (pinned → priced: "
            f"{'; '.join(changes)}): a lock applies only to the serving it pinned, options and all"
            for name, path, changes in self.passed
        ]

    def names(self) -> list[str]:
        """The names of the locks applied."""
        return [lock.name for lock, _ in self.locks]

    def policy(self) -> Policy | None:
        """The floors the locks set together, as one policy: each path's strictest floor among them (a result must
        hold them all), the lock's floor the strictest of theirs; ``None`` without a lock."""
        if not self.locks:
            return None
        policies = [lock.policy for lock, _ in self.locks]
        paths = {p for policy in policies for p in policy.paths}
        return Policy(
            min(policy.floor for policy in policies),
            {p: min(policy.allowed(p) for policy in policies) for p in sorted(paths)},
        )

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

    def line(
        self,
        verdicts: Iterable[Verdict] = (),
        moved: Iterable[PriceMoved] = (),
        kind: str | None = None,
        differs: Iterable[str] = (),
        relabels: Iterable[str] = (),
        drifted: Iterable[str] = (),
        rows: str = "the serving is the locked one, its prices",
        stale_fit: str | None = None,
    ) -> str:
        """One line naming the locks priced under and what they say of the result, or why none applies. Every
        command says the same thing of the same situation: ``REFUSED`` when a floor breaks, else ``floors hold``
        and whether the price shown is the locked one:

        * with ``moved`` (a lock whose recorded price today's is not, :meth:`moved`): ``but the price is NOT the
          one L records`` (``; it is the one M records`` when another lock of ``kind`` records it: one made with the
          options that made this serving), ``(below)``, and on lines of their own (indented to sit under a table's
          ``lock`` row) the recorded price beside today's and what drifted;
        * with ``kind`` (the command compared its ``kind`` of price with the locks' and none moved): ``and the
          price is the one L records`` (the locks of that kind), or that none of them records that kind; with
          ``differs`` too (:meth:`options`: fields the command's options changed from the locked serving), ``; the
          serving priced differs from the locked one (below)`` and a ``serving differs from the locked one: …``
          line each (walkthrough 32: they read as ``drifted since the lock``);
        * without ``kind`` (a command whose figures are not a lock's price: roofline, sweep, max-batch, …):
          ``differs`` (:meth:`differs`, the serving's changes from the locked one) makes it ``but the prices shown
          are NOT the locked ones`` with those changes below; else the serving is the locked one, and the prices
          are not compared (``passprice reproduce L`` compares them); ``rows`` says which prices those are when the
          command's rows are not all the locked serving's (``sweep --positions 512,4096`` of a serving locked at
          2048: ``no row is the locked serving's, so its prices are``; walk95: it said "the serving is the locked
          one" and then that its rows at 512 and 4096 were not the locked serving's).

        ``relabels`` (:meth:`relabels`: what a lock pins that moves no number, a card's title or ``hypothetical``
        mark, a serving's description, a checkpoint's header sha256) adds ``; relabelled since the lock (below)``
        and a ``relabelled since the lock: …`` line each, as ``check`` and the review say them: the price is the
        locked one, but not under the title it was locked as (slip round 43: a retitled card read "floors hold, and
        the price is the one r1-qwen7b-h200 records" and nothing more). ``drifted`` (:meth:`drifted`: a pinned fact
        the price rests on whose citation, note or provenance changed, moving no number) adds ``; drifted since the
        lock (below)`` and a ``drifted since the lock: …`` line each, as a moved price's lines do.

        ``stale_fit`` (the words for a serving stack whose fit no longer follows from today's registry, ``stack S's
        stale fit (N fitted facts no longer follow from today's runs)``): with floors holding, the price is said to
        rest on it and that ``lock --update`` refuses it (``StaleFacts``) until ``calibrate`` re-fits the stack; a
        new user's ``price --stack S`` on an edited run read "floors hold, and the price is the one L records" on
        stdout, the stale fit on stderr alone (tests/test_fix188.py)."""
        if not self.locks:
            note = self.note or f"no lock of this serving in locks/{' applies' if self.passed else ''}"
            return "\n".join([note, *(f"                {line}" for line in self.passed_lines())])
        shown = _listed([f"{lock.name} ({path})" for lock, path in self.locks], ", ")
        held = all(v.holds for v in verdicts)
        moves = list(moved)
        changes = list(differs)
        below: list[str] = []
        if not held:
            verdict = "REFUSED"
        elif moves:
            movers = [m.lock for m in moves]
            verdict = (
                f"floors hold, but the price is NOT the one {movers[0]} records (below)" if len(movers) == 1
                else f"floors hold, but the price is NOT the one {_listed(movers)} record (below)"
            )
            kept = [lock.name for lock, _ in self.locks if lock.kind == kind and lock.name not in movers]
            if kind is not None and kept:  # a lock of the serving as the options make it (made with them)
                verdict = verdict.replace(" (below)", f"; it is the one {_listed(kept, ', ')} records (below)")
            below = [line for m in moves for line in m.lines()]
        elif kind is not None:
            same = [lock.name for lock, _ in self.locks if lock.kind == kind]
            names = _listed(self.names(), ", ")
            verdict = (
                (f"floors hold, and the price is the one {same[0]} records" if len(same) == 1
                 else f"floors hold, and the price is the one {_listed(same)} record") if same
                else f"floors hold; {names} {'is no' if len(self.locks) == 1 else 'are no'} {kind} lock"
                f"{'' if len(self.locks) == 1 else 's'} to compare the price with (`passprice reproduce "
                f"{self.locks[0][0].name}` compares its own)"
            )
            if changes:  # the command's options (:meth:`options`): the serving priced is not the one locked
                verdict += "; the serving priced differs from the locked one (below)"
                below = [f"serving differs from the locked one: {c}" for c in changes]
        elif changes:
            verdict = "floors hold, but the prices shown are NOT the locked ones (below)"
            below = [f"serving differs from the locked one: {c}" for c in changes]
        else:
            verdict = (
                f"floors hold; {rows} not compared with the locked ones "
                f"(`passprice reproduce {shell_word(self.locks[0][0].name)}` compares them)"
            )
        if held and stale_fit is not None:
            fit, _, command = stale_fit.partition("\0")
            if kind is not None and not moves and verdict.startswith("floors hold, and the price is the one "):
                recorded = verdict.removeprefix("floors hold, and the price is the one ")
                verdict = f"floors hold, but the price rests on {fit}, as the one {recorded} it"
            else:
                verdict += f"; the price rests on {fit}"
            verdict += f": `lock --update` refuses it (StaleFacts) until `{command}` re-fits it"
        relabel = list(dict.fromkeys(relabels))
        drift_lines = [d for d in dict.fromkeys(drifted) if d not in {x for m in moves for x in m.lines()}]
        if held and drift_lines and not moves:
            verdict = (verdict.replace(" (below)", "; drifted since the lock (below)") if "(below)" in verdict
                       else f"{verdict}; drifted since the lock (below)")
            below += [f"drifted since the lock: {d}" for d in drift_lines]
        if held and relabel:
            verdict = (verdict.replace(" (below)", "; relabelled since the lock (below)") if "(below)" in verdict
                       else f"{verdict}; relabelled since the lock (below)")
            below += [f"relabelled since the lock: {r}" for r in relabel]
        head = f"under lock{'s' if len(self.locks) > 1 else ''} {shown}: {verdict}"
        return "\n".join([head, *(f"                {line}" for line in [*below, *self.passed_lines()])])

    def relabels(
        self, root: Root, resolved: Resolved, serving: str | None = None, stack: Stack | None = None
    ) -> tuple[str, ...]:
        """What each applied lock pins that moves no number and today's ``resolved`` differs in, one line each
        (:func:`passprice.reproduce.relabelled`: ``card.title: 'A' → 'B' (the lock pinned the old)``, a
        ``hypothetical`` mark, a serving's description, and, where the content priced is the pinned one, the
        checkpoint header's sha256), prefixed ``L: `` when more than one lock applies; each line once. A serving's
        description is compared only for a lock of the registered ``serving`` priced (one priced from
        ``--checkpoint``/``--card`` has none to compare). A lock of another card says nothing here (it is refused,
        or priced with another card, elsewhere). ``stack``: today's serving stack the price is made under, whose
        title, runtime and builds a lock made under it pins (``stack.S.runtime: …``, session 27). The checkpoint
        entry's ``origin``, where a lock pins it and the entry it names is the one priced (``checkpoint.origin: …[x →
        y]… (the lock pinned the old)``, session 27), and its ``source`` (the header file ``audit`` cites) the same
        way (``checkpoint.source: …``, slip round 46); the vendors a lock made under ``stack`` pins
        (``stack.S.card_vendor: 'AMD' → 'NVIDIA' …``, slip 48). Raises nothing."""
        card = resolved.card
        out: list[str] = []
        # what the priced checkpoint reference gives (its portable name, its entry's origin and source) is the same for
        # every lock: made once a call, when a lock first asks (1,000 locks of one serving looked each up 1,000 times)
        today: dict[str, str | None] = {}

        def priced(what: str) -> str | None:
            if what not in today:
                from passprice.checkpoints import checkpoint_label
                from passprice.locks import portable

                ref = resolved.spec.checkpoint
                today[what] = portable(ref, root, root.checkpoints) if what == "name" \
                    else checkpoint_label(root, ref, what)
            return today[what]

        for lock, _ in self.locks:
            if lock.card != card.name:
                continue
            own = serving is not None and lock.info.serving == serving
            described = own and resolved.spec.description != lock.spec.description
            resha = lock.checkpoint_pin.content is not None and resolved.header.sha256 != lock.checkpoint_sha256
            routing, method = resolved.serving.routing, resolved.method
            relabelled_record = any(
                pin is not None and record is not None and record.name == pin.name
                and (record.title, record.note) != (pin.title, pin.note)
                for pin, record in ((lock.routing, routing), (lock.draft, method))
            )
            restacked = stack is not None and lock.stack is not None and lock.stack.name == stack.name and (
                stack.title != lock.stack.title
                or any(pin is not None and now != pin for pin, now in ((lock.stack.runtime, stack.runtime),
                                                                       (lock.stack.builds, stack.builds)))
            )
            # the checkpoint entry's origin, where the lock pins it (session 27) and the same entry is priced
            origin = None
            if lock.checkpoint_origin is not None and priced("name") == lock.checkpoint_pin.name:
                origin = priced("origin")  # checkpoints.checkpoint_origin
            reorigin = origin is not None and origin != lock.checkpoint_origin
            # and its source, the header file audit cites (slip round 46), the same way
            source = None
            if lock.checkpoint_source is not None and priced("name") == lock.checkpoint_pin.name:
                source = priced("source")  # checkpoints.checkpoint_source
            resource = source is not None and source != lock.checkpoint_source
            # and the vendors the stack's card warning reads, where the lock pins them (slip 48)
            vendors = None
            if stack is not None and lock.stack is not None and lock.stack.fitted_vendors is not None:
                from passprice.reproduce import pinned_vendors_today

                vendors = pinned_vendors_today(root, lock, stack)
            revendored = vendors is not None and vendors != (lock.stack.card_vendor, lock.stack.fitted_vendors) \
                if lock.stack is not None else False
            if card.title == lock.card_title and card.hypothetical == lock.card_hypothetical and not described \
                    and not resha and not relabelled_record and not restacked and not reorigin \
                    and not resource and not revendored:
                continue  # the common case imports nothing more (a warm price stays light)
            from passprice.locks import portable_spec
            from passprice.pins import checkpoint_digest
            from passprice.reproduce import relabelled

            sha256 = None
            if resha and checkpoint_digest(resolved.header) == lock.checkpoint_pin.content:
                sha256 = resolved.header.sha256
            today_stack = stack if stack is not None and lock.stack is not None and lock.stack.name == stack.name \
                else None
            if (reorigin or resource) and checkpoint_digest(resolved.header) != lock.checkpoint_pin.content:
                origin = source = None  # another content: said as the checkpoint changed, as the header sha256 is
            lines = relabelled(lock, card, portable_spec(resolved.spec, root) if own else None, today_stack, sha256,
                               routing, method, origin, source, vendors)
            out += [f"{lock.name}: {r}" if len(self.locks) > 1 else r for r in lines]
        return tuple(dict.fromkeys(out))

    def since(
        self, root: Root, resolved: Resolved, serving: str | None = None, price: Mapping[str, Any] | None = None,
        moved: Iterable[PriceMoved] = (), stack_facts: Mapping[str, Fact] | None = None,
        method_facts: Mapping[str, Fact] | None = None, stack: Stack | None = None,
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What changed since each applied lock that moves no number, as every command priced under a lock says it
        (``price``, ``best``, ``roofline``, ``simulate``, ``max-batch``, ``sweep``; slip round 44: the last four said
        neither): :meth:`relabels` (of the registered ``serving`` priced) and :meth:`drifted` (of the ``price``
        shown, its ``--json`` object; ``None`` for a command whose figures are no lock's price: then the facts each
        lock's recorded price rests on), for :meth:`line`'s ``relabels`` and ``drifted`` and :meth:`to_json`.
        ``method_facts``: the drafting method's facts by lock path (``draft.acceptance.i``) where ``resolved`` prices
        without its draft (``speculate`` varies the draft length itself: without them a pinned acceptance read as
        "→ gone", session 26). Of a ``price`` shown, the drift also holds each field the registered ``serving``
        priced now differs in from the one a lock of it (whose recorded price today's still is) pinned, as
        ``serving.FIELD: locked → today`` (:meth:`reserved`). Raises nothing."""
        moved = tuple(moved)
        drifts = self.drifted(resolved, price, moved, stack_facts, method_facts)
        if price is not None:
            drifts = (*drifts, *self.reserved(root, resolved, serving, moved))
        return self.relabels(root, resolved, serving, stack), drifts

    def reserved(self, root: Root, resolved: Resolved, serving: str | None, moved: Iterable[PriceMoved] = ()) \
            -> tuple[str, ...]:
        """Each field the registered ``serving`` priced (``resolved``) differs in from the serving a lock of it pinned
        whose recorded price today's is (``moved`` lists those it is not, which say their serving changes
        themselves), one ``serving.FIELD: locked → today`` line each (:func:`passprice.reproduce.serving_changes`),
        prefixed ``L: `` when more than one lock applies; each line once. A serving re-pointed to a routing record,
        drafting method or checkpoint entry renamed (the same figures and content under another name) prices the
        same, and ``price --lock`` read "floors hold, and the price is the one L records" alone while ``reproduce``
        and ``check`` said the serving changed (slip round 45); so did ``price --lock L`` of a lock whose registered
        serving was removed or renamed (``serving: S is no longer registered (priced as the lock embeds it)``, as
        ``reproduce`` says it). Raises nothing."""
        if serving is None:
            return ()
        movers = {m.lock for m in moved}
        mine = [lock for lock, _ in self.locks if lock.info.serving == serving and lock.name not in movers
                and lock.card == resolved.card.name]
        if not mine:
            return ()
        from passprice.locks import portable_spec

        out = []
        if not _registered(root, serving):  # ``price --lock L`` of a lock whose serving was removed or renamed
            from passprice.reproduce import gone_state

            state = gone_state(root, mine[0])  # "no longer" only where the registry's history shows it
            out = [f"{lock.name}: serving: {serving} {state} (priced as the lock embeds it)"
                   if len(self.locks) > 1 else
                   f"serving: {serving} {state} (priced as the lock embeds it)" for lock in mine]
        today = portable_spec(resolved.spec, root)
        if out or any(lock.spec != today for lock in mine):
            from passprice.reproduce import _show, serving_differences

            given = self._given_keys(root, resolved, serving, mine) if not out else {}
            for lock in mine:
                for key, was, now in serving_differences(lock.spec, today):
                    if _given_as_file(key, now):
                        continue  # ``--card``/``--checkpoint`` given as a file: an option, not a change since the lock
                    if key in given.get(lock.name, ()):
                        continue  # an option the command was given (:meth:`options` says it), not a change since
                    line = f"serving.{key}: {_show(was)} → {_show(now)}"
                    out.append(f"{lock.name}: {line}" if len(self.locks) > 1 else line)
        return tuple(dict.fromkeys(out))

    def options(self, root: Root, resolved: Resolved, serving: str | None, moved: Iterable[PriceMoved] = ()) \
            -> tuple[str, ...]:
        """Each field the command's options (``--limit``, ``--max-tpot``, ``--batch`` …) make the registered
        ``serving`` priced (``resolved``) differ in from the serving a lock of it pinned whose recorded price today's
        is (``moved`` lists those it is not, which say their serving changes themselves), one ``FIELD: locked →
        today`` line each, as :class:`PriceMoved` and :meth:`line`'s ``differs`` say them (prefixed ``L: `` when more
        than one lock applies). The registered file agreeing with the lock there, the field is the command's choice,
        not a change since the lock: :meth:`reserved` leaves it out (walkthrough 32: ``best qwen3-30b-a3b-h200
        --limit 4096 --max-tpot 0.02`` said "drifted since the lock: serving.max_tpot: (none) → 0.02", where the same
        cap on a serving with a best lock read "serving differs from the locked one: max_tpot: (none) → 0.01").
        Raises nothing."""
        if serving is None or not _registered(root, serving):
            return ()
        movers = {m.lock for m in moved}
        mine = [lock for lock, _ in self.locks if lock.info.serving == serving and lock.name not in movers
                and lock.card == resolved.card.name]
        if not mine:
            return ()
        from passprice.locks import portable_spec

        today = portable_spec(resolved.spec, root)
        if all(lock.spec == today for lock in mine):
            return ()  # the common case imports nothing more (a price under its own lock stays light)
        from passprice.reproduce import _show, serving_differences

        given = self._given_keys(root, resolved, serving, mine)
        out = []
        for lock in mine:
            for key, was, now in serving_differences(lock.spec, today):
                if key in given.get(lock.name, ()) and not _given_as_file(key, now):
                    line = f"{key}: {_show(was)} → {_show(now)}"
                    out.append(f"{lock.name}: {line}" if len(self.locks) > 1 else line)
        return tuple(dict.fromkeys(out))

    @staticmethod
    def _given_keys(root: Root, resolved: Resolved, serving: str, mine: Iterable[Lock]) -> dict[str, set[str]]:
        """For each lock of ``mine`` (by name), the serving fields in which today's ``resolved`` spec differs from
        the lock's while the registered file ``serving`` (read afresh, completed against the priced header) agrees
        with the lock: fields the command's options chose. A file that does not read gives none (its
        differences stay changes since the lock). Raises nothing."""
        from passprice.errors import InputError
        from passprice.locks import portable_spec
        from passprice.reproduce import serving_differences
        from passprice.servings import complete, load_spec

        try:
            registered = portable_spec(complete(load_spec(root, serving), resolved.header), root)
        except (InputError, OSError, ValueError):
            return {}
        today = portable_spec(resolved.spec, root)
        out: dict[str, set[str]] = {}
        for lock in mine:
            changed = {key for key, _, _ in serving_differences(lock.spec, today)}
            filed = {key for key, _, _ in serving_differences(lock.spec, registered)}
            out[lock.name] = changed - filed
        return out

    def drifted(
        self, resolved: Resolved, price: Mapping[str, Any] | None, moved: Iterable[PriceMoved] = (),
        stack_facts: Mapping[str, Fact] | None = None, method_facts: Mapping[str, Fact] | None = None,
    ) -> tuple[str, ...]:
        """What drifted since each applied lock whose recorded price today's ``price`` (its ``--json`` object) still
        is (``moved`` lists those it is not, which say their drift themselves): each pinned fact the price rests on
        whose digest today's differs from (:func:`passprice.reproduce.drift`: a citation, note or provenance
        changed, ``memory.bandwidth: 4.8 TB/s (published) → 4.8 TB/s (published) (citation changed)``),
        prefixed ``L: `` when more than one lock applies; each line once. ``check --frozen`` fails on each and the
        review asks it, yet ``price --lock`` said "floors hold, and the price is the one L records" alone (slip
        round 43). A lock of another card says nothing here. ``price`` ``None`` (a command whose figures are no
        lock's price: roofline, simulate, max-batch, sweep): the facts each lock's recorded price rests on are
        compared. Raises nothing."""
        movers = {m.lock for m in moved}
        shown: dict[str, Any] = {}
        if price is not None:
            shown.update(price.get("rests_on", {}))
            expected = price.get("expected")
            if isinstance(expected, Mapping):
                shown.update(expected.get("rests_on", {}))
        today = dict(resolved.facts())
        today.update(method_facts or {})
        today.update(stack_facts or {})
        out: list[str] = []
        # Each pair of fact objects compared once a call: the locks of one serving share their pinned facts
        # (locks._shared), so 5,000 of them ask about the same few pairs (issue 13, scale36). Every object stays
        # held (today, self.locks) until the call returns, so no id is another's meanwhile.
        compared: dict[tuple[int, int], bool] = {}

        def alike(a: Fact, b: Fact) -> bool:
            pair = (id(a), id(b))
            found = compared.get(pair)
            if found is None:
                found = compared[pair] = _same_fact(a, b)
            return found

        for lock, _ in self.locks:
            if lock.name in movers or lock.card != resolved.card.name:
                continue
            read = shown if price is not None else dict.fromkeys(lock.rests_on)
            if all(p not in lock.facts or (p in today and alike(today[p], lock.facts[p])) for p in read):
                continue  # nothing pinned differs: the common case imports nothing more (a warm price stays light)
            from passprice.reproduce import drift
            from passprice.stacks import is_stack_path

            found = other_routing(unread_drafts(drift(lock, today, read), resolved), lock, resolved)
            if stack_facts is None:
                found = tuple(d for d in found if not is_stack_path(d.path))
            out += [f"{lock.name}: {d.describe()}" if len(self.locks) > 1 else d.describe() for d in found]
        return tuple(dict.fromkeys(out))

    def differs(
        self, root: Root, resolved: Resolved, drafting: tuple[str, int | None] | None = None
    ) -> tuple[str, ...]:
        """How the serving ``resolved`` prices differs from the one the locks lock, one ``field: locked → today``
        line each (:func:`passprice.reproduce.serving_changes`, each change once whichever lock pinned it).

        ``drafting``: for a command that varies the draft length itself (``speculate``, whose ``resolved`` has no
        draft), the drafting method and head rows (``None``: the whole head) each length is priced with. A lock's
        draft is then compared by those two alone, its length taken as the lock's (a lock without drafts: no draft
        compared): speculate said "draft: method qwen35-mtp, tokens 2, head_rows 32768 → (none)" under the very lock
        whose method it priced with (session 27), a line about how it prices, not a change."""
        import attrs

        from passprice.locks import portable_spec
        from passprice.reproduce import serving_changes
        from passprice.servings import DraftSpec

        today = portable_spec(resolved.spec, root)
        out: list[str] = []
        for lock, _ in self.locks:
            mine = today
            if drafting is not None:
                pinned = lock.spec.draft
                drafted = None if pinned is None else DraftSpec(drafting[0], pinned.tokens, drafting[1])
                mine = attrs.evolve(today, draft=drafted)
            out += serving_changes(lock.spec, mine)
        return tuple(dict.fromkeys(out))

    def moved(
        self, root: Root, kind: str, price: Mapping[str, Any], resolved: Resolved,
        stack_facts: Mapping[str, Fact] | None = None, stack: Stack | None = None,
    ) -> tuple[PriceMoved, ...]:
        """Each applied lock of ``kind`` whose recorded price today's ``price`` is not (:func:`price_moved`;
        ``stack_facts``: today's facts of the stack the price is made under, by lock path; ``stack``: that stack)."""
        out = (price_moved(root, lock, kind, price, resolved, stack_facts, stack) for lock, _ in self.locks)
        return tuple(m for m in out if m is not None)

    def to_json(
        self, moved: Iterable[PriceMoved] = (), relabels: Iterable[str] = (), drifted: Iterable[str] = (),
        serving: Iterable[str] = (),
    ) -> dict[str, Any]:
        """``{"locks": [names], "note": ..., "moved": [...], "relabelled": [...], "drifted": [...]}`` for a
        command's ``--json``: ``moved`` lists each lock whose recorded price today's is not
        (:meth:`PriceMoved.to_json`), empty when each records it; ``relabelled`` the lines of :meth:`relabels` (empty
        when nothing pinned was relabelled), ``drifted`` those of :meth:`drifted` (empty when no pinned fact of an
        unmoved price drifted); with ``serving`` (:meth:`options`: the fields the command's options changed from
        the locked serving, of an unmoved price), also ``"serving"``, those lines (the key absent when none)."""
        out = {"locks": self.names(), "note": self.note, "moved": [m.to_json() for m in moved],
               "relabelled": list(dict.fromkeys(relabels)), "drifted": list(dict.fromkeys(drifted))}
        if self.passed:
            out["not_applied"] = [{"lock": name, "path": path, "serving": list(changes)}
                                  for name, path, changes in self.passed]
        given = list(dict.fromkeys(serving))
        if given:
            out["serving"] = given
        return out


def _registered(root: Root, name: str) -> bool:
    """Whether something is at ``registry/servings/NAME.toml`` (:func:`passprice.reproduce.registered`, without
    importing it on every price). Raises nothing."""
    try:
        return os.path.lexists(root.servings / f"{name}.toml")
    except ValueError:  # a NUL in a name no lock may hold: nothing is there
        return False


def _same_fact(a: Fact, b: Fact) -> bool:
    """Whether facts ``a`` and ``b`` are alike field by field, a derivation by its TOML table (one read from a
    card and one from a lock can differ as objects, not as written): equal facts have one digest, so a ``False``
    here only sends the pair to :func:`passprice.reproduce.drift`, which compares digests. Raises nothing."""
    if a == b:
        return True
    da, db = a.derivation, b.derivation
    if da is None or db is None or isinstance(da, str) or isinstance(db, str):
        return False
    if attrs.evolve(a, derivation=None) != attrs.evolve(b, derivation=None):
        return False
    return bool(da.to_entry() == db.to_entry())


def _choices(root: Root, resolved: Resolved) -> tuple[str, str]:
    """The checkpoint and card ``resolved`` prices, as portable references."""
    from passprice.locks import portable

    spec = resolved.spec
    return portable(spec.checkpoint, root, root.checkpoints), portable(spec.card, root, root.cards)


def _own_choices(root: Root, serving: str) -> tuple[str, str] | None:
    """The checkpoint and card the registered ``serving`` names in its file (portable references), ``None`` when
    it does not read (the caller already priced it, so that is rare)."""
    from passprice.errors import InputError
    from passprice.locks import portable
    from passprice.servings import load_spec

    try:
        spec = load_spec(root, serving)
    except InputError:
        return None
    return portable(spec.checkpoint, root, root.checkpoints), portable(spec.card, root, root.cards)


def _shown(root: Root, path: Path) -> str:
    from passprice.snapshot import resolved, resolved_folder

    try:
        return str(resolved(path).relative_to(resolved_folder(root.path)))
    except ValueError:
        return str(path)


def _named(root: Root, path: Path) -> str:
    """The lock file ``path`` as a command's lock line names it (:func:`passprice.registry.in_root`: the embedded
    registry's said so), where ``_shown`` is the lock's ``source``, a path the lock's own checks read."""
    from passprice.registry import in_root

    return in_root(root, path)


#: The locks of one serving a batch entry of the cache keeps (:func:`guard`): a batch of the measured lock's kind
#: pickles to about 90 KB a lock, so 500 stay far below :data:`passprice.cache.MAX_ENTRY_BYTES` (128 MiB).
LOCKS_A_BATCH = 500


def guard(
    root: Root, serving: str | None, resolved: Resolved, explicit: str | None = None, no_lock: bool = False
) -> Guard:
    """The locks a command pricing ``resolved`` (of the registered ``serving``, if any) prices under: ``explicit``
    (a lock file or name) alone, else every lock of ``serving`` in ``root/locks`` that locks its card and
    checkpoint; none with ``no_lock``.

    A lock of ``serving`` whose checkpoint the serving still names but whose content changed refuses
    (:class:`CheckpointChanged`), as does one the registered serving no longer matches by card or checkpoint when
    no option overrode them (:class:`ServingChanged`): a change under a lock never turns it off.

    A lock whose own pinned inputs do not give the price it records, under the code that wrote it (edited by hand,
    digests recomputed), is refused (:class:`LockForged`, :func:`require_unforged`): a price under it would read as
    locked (slip 53: ``price SERVING --lock L`` of such a lock said "floors hold, and the price is the one L
    records", exit 0, while ``check`` and ``reproduce`` failed it).

    Raises :class:`LockMismatch` for an ``explicit`` lock of something else, :class:`CheckpointChanged` and
    :class:`ServingChanged` as above, :class:`LockForged` as above, :class:`InputError` for a lock that does not
    read."""
    g = _guard(root, serving, resolved, explicit, no_lock)
    require_unforged(root, g.locks, resolved.header)
    return g


def _guard(
    root: Root, serving: str | None, resolved: Resolved, explicit: str | None = None, no_lock: bool = False
) -> Guard:
    """:func:`guard` less the forgery check."""
    if explicit is not None:
        path = lock_path(root, explicit)
        lock = attrs.evolve(read_lock_in(root, path), source=_shown(root, path))
        wrong = mismatch(lock, serving, resolved, root)
        if wrong is not None:
            raise wrong
        return Guard(((lock, _named(root, path)),))
    if no_lock:
        return Guard(note="not under a lock (--no-lock)")
    alike, passed = _option_locks(root, resolved)
    if serving is None:
        return Guard(alike) if alike else Guard(note="not a registered serving: no lock applies")
    # Each read as `check` and `price --lock` read it (left30b): one naming another registered stack is refused.
    # A serving's locks past the first few are kept in batch entries, named by the folder, the serving and which
    # LOCKS_A_BATCH of its locks (session 32): one batch of 5,000 locks (185 MB) passed the largest entry read.
    found = [
        (attrs.evolve(read_lock_in(root, p, f"{root.locks}{os.sep}{serving}.lock.toml*{i // LOCKS_A_BATCH}"),
                      source=_shown(root, p)), p)
        for i, p in enumerate(locks_of(root, serving))
    ]
    if not found:
        return Guard(alike, passed=passed)
    from passprice.pins import checkpoint_digest

    content = functools.cache(lambda: checkpoint_digest(resolved.header))  # once, whatever the number of locks
    own = _own_choices(root, serving)
    applies = []
    for lock, p in found:
        wrong = mismatch(lock, None, resolved, root, content)
        if wrong is None:
            applies.append((lock, _named(root, p)))
        elif isinstance(wrong, CheckpointChanged):
            raise wrong
        elif own is not None and isinstance(wrong, LockMismatch) and own == _choices(root, resolved):
            # No option moved the card or checkpoint: the registered serving itself names another than its lock.
            raise ServingChanged(lock, serving, wrong.what, wrong.locked, wrong.priced)
    if not applies and not alike:
        return Guard(note=other_card_note(serving, resolved.card.name, resolved.spec.checkpoint,
                                          [lock for lock, _ in found]), passed=passed)
    return Guard((*applies, *alike), passed=passed)


def other_card_note(serving: str, card: str, checkpoint: str, locks: Sequence[Lock]) -> str:
    """The note of a price of registered ``serving`` on ``card`` and ``checkpoint`` (names, as the serving priced
    them) under none of its ``locks`` (each locks another card or checkpoint: an option moved it), one sentence
    naming what the price is of and what each lock is of, only the card or checkpoint where they differ: ``not
    under a lock: this price is of card mi300x, and serving S's locks A and B are of card h200_sxm_141gb``.
    Walkthrough 32 read "the locks of S (S (h200_sxm_141gb, …), …) lock another card or checkpoint", names nested
    in parentheses (leftovers 28). Raises nothing."""

    def differs(lock: Lock) -> tuple[bool, bool]:  # (card, checkpoint): the checkpoint when the card does not
        return lock.card != card, lock.checkpoint != checkpoint or lock.card == card

    def of(lock: Lock) -> str:
        by_card, by_checkpoint = differs(lock)
        return " and ".join([*([f"card {lock.card}"] if by_card else []),
                             *([f"checkpoint {lock.checkpoint}"] if by_checkpoint else [])])

    def listed(names: list[str]) -> str:
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    groups: dict[str, list[str]] = {}
    for lock in locks:
        groups.setdefault(of(lock), []).append(lock.name)
    priced = " and ".join([*([f"card {card}"] if any(differs(lock)[0] for lock in locks) else []),
                           *([f"checkpoint {checkpoint}"] if any(differs(lock)[1] for lock in locks) else [])])
    clauses = [f"{listed(names)} {'is' if len(names) == 1 else 'are'} of {what}" for what, names in groups.items()]
    if len(groups) == 1:
        [names] = groups.values()
        that = f"serving {serving}'s lock{'' if len(names) == 1 else 's'} {clauses[0]}"
    else:
        that = f"serving {serving}'s locks: {', '.join(clauses)}"
    return f"not under a lock: this price is of {priced}, and {that}"


def _option_locks(
    root: Root, resolved: Resolved
) -> tuple[tuple[tuple[Lock, str], ...], tuple[tuple[str, str, tuple[str, ...]], ...]]:
    """The locks of no registered serving (:func:`passprice.locks.locks_of_none`: made with options, ``lock
    r1-qwen7b-h200 --limit 1024 -o locks/r1-1k.lock.toml``) whose pinned serving, card and checkpoint are the ones
    ``resolved`` prices, each with the path it was read from: the same command run again prices under them
    (walkthrough 9: such a lock was never found again). A lock that does not read is left to ``check``; one that
    reads and applies but names another registered stack than its pins describe raises :class:`InputError`
    (:func:`passprice.locks.require_named_stack`), as ``price --lock`` does.

    Returns those, and the locks made from the same serving with other options, not applied (:attr:`Guard.passed`):
    each of no registered serving whose card and checkpoint are the ones priced and whose pinned serving has the
    description of the one priced (``lock`` copies it: made from it) but other fields, with the fields that differ
    (``lock S --best --routing R`` does not apply to ``best S``, and says why there, moe42)."""
    from passprice.locks import locks_of_none, require_named_stack

    paths = locks_of_none(root)
    if not paths:
        return (), ()  # the usual case: nothing more imported (issue 16: reproduce pulls cattrs, decode, fits …)
    from passprice.errors import InputError
    from passprice.locks import portable_spec
    from passprice.reproduce import serving_changes

    today = portable_spec(resolved.spec, root)
    out = []
    passed: list[tuple[str, str, tuple[str, ...]]] = []
    for p in paths:
        try:
            lock = attrs.evolve(read_lock(p, root.schema), source=_shown(root, p))
        except InputError:
            continue
        changes = serving_changes(lock.spec, today)
        if mismatch(lock, None, resolved, root) is not None:
            continue
        if not changes:
            # One this price falls under is read as `price --lock` reads it: naming another registered stack than
            # its pins describe, it is refused by name (left30b; it was priced under, or skipped unsaid).
            require_named_stack(root, lock, str(p))
            out.append((lock, _named(root, p)))
        elif lock.spec.description is not None and lock.spec.description == resolved.spec.description:
            passed.append((lock.name, _named(root, p), changes))
    return tuple(out), tuple(passed)


class LockFloor(Exception):
    """A result refused because a fact it rests on is weaker than a lock's floor allows (exit 1): ``verdict`` is
    the lock's (:class:`~passprice.locks.Verdict`, not holding), ``context`` what the refusal adds to its JSON (the
    locks priced under, the serving judged). ``str(e)`` is the verdict's one line; ``to_json`` gives
    ``{"refusal": "LockFloor", "lock": ..., "offending": [...], ...}``."""

    name = "LockFloor"

    def __init__(
        self, verdict: Verdict, context: Mapping[str, Any], advice: str = "", also: tuple[Verdict, ...] = ()
    ) -> None:
        lines = verdict.message() + "".join(
            f"; lock {v.lock} refuses it too: "
            + ", ".join(f"{o.path} is {o.provenance.value}, below the floor {o.floor.value}" for o in v.offences)
            for v in also
        )
        super().__init__(lines + (f"; {advice}" if advice else ""))
        self.verdict = verdict
        self.context = dict(context)
        self.advice = advice
        self.also = also

    def to_json(self) -> dict[str, Any]:
        """The verdict's JSON and the context (and ``advice``: what to do, when there is any; ``also``: the
        verdicts of the other locks the same price breaks, when there are any)."""
        out = {**self.verdict.to_json(), **self.context}
        if self.also:
            out["also"] = [v.to_json() for v in self.also]
            out["message"] = str(self)
        if self.advice:
            out["advice"] = self.advice
            out["message"] = str(self)
        return out


#: The two ways out of a floor refusal, said alike by a refused price, ``check``, ``lock --update`` and the glossary's
#: LockFloor (walkthrough 39: "to rest on the weaker fact, strengthen it, or loosen the floor" read as contradictory).
WAYS_OUT = (
    "two ways out: strengthen the fact's provenance (passprice fact set with a stronger --provenance and its "
    "--source), or loosen the lock's floor for it on purpose through review"
)


def ways_out(verdict: Verdict) -> str:
    """:data:`WAYS_OUT`, its first way said for the kind of record each fact below its floor is in: a card's or a
    drafting method's fact through ``passprice fact set``; a serving stack's (``stack.*``) in its file under
    facts/stacks/ by hand, or re-fitted by ``passprice calibrate --stack S`` (its fitted facts); a routing record's
    (``routing.*``) in its file under facts/routing/ by hand. ``fact set`` refuses the last two (``edit the record's
    file by hand``), so ``check`` advising it for a stack's ``memory.reserved`` sent a new user to a refusal. Raises
    nothing."""
    paths = [o.path for o in verdict.offences]
    ways = []
    if any(not p.startswith(("stack.", "routing.")) for p in paths):
        ways.append("passprice fact set with a stronger --provenance and its --source")
    if any(p.startswith("stack.") for p in paths):
        ways.append("a serving stack's fact: edit its stack's file under facts/stacks/ by hand, or re-run "
                    "passprice calibrate --stack S for a fitted one")
    if any(p.startswith("routing.") for p in paths):
        ways.append("a routing record's fact: edit its record's file under facts/routing/ by hand")
    if ways == ["passprice fact set with a stronger --provenance and its --source"] or not ways:
        return WAYS_OUT
    return (f"two ways out: strengthen the fact's provenance ({'; '.join(ways)}), or loosen the lock's floor for it "
            "on purpose through review")


def floor_advice(
    verdict: Verdict, serving: str | None, path: str | None, root: Root | None = None, lock: Lock | None = None,
    more: Iterable[tuple[Verdict, str | None, str | None, Lock | None]] = (), from_option: bool = False,
) -> str:
    """What to do about a lock's floor refusing a price (``verdict``, not holding), for the lock at ``path`` of
    ``serving`` (either ``None`` when unknown; ``lock``, the lock itself when known): price without the lock for a
    what-if, or accept the weaker fact on purpose by strengthening it or re-locking with the floor loosened
    (:func:`relock_command`, which a review shows as a loosened floor; ``lock --update`` alone keeps the floors and
    refuses). ``more``: the other locks the same price breaks (verdict, serving, path, lock), each with its command.

    A lock file outside ``root``'s ``locks/`` (a historic lock from ``git show``, given by path) is never the one to
    overwrite: the advice re-locks the registry's lock of the serving (``locks/SERVING.lock.toml``) when it has one,
    else writes a new lock of the same kind and stack into ``locks/``, and says the file given is left as it is.

    ``from_option``: the serving as registered holds, so the weaker fact came from a command-line option; the advice
    then says so and that serving this way for good means changing the serving file before re-locking (loosening
    the lock alone would not make the option's price the locked one)."""
    commands = [_relock_at(root, *each) for each in ((verdict, serving, path, lock), *more)]
    if from_option:
        return (
            "for a what-if, price without the lock (--no-lock): the serving as registered holds, the weaker fact "
            f"comes from an option given here; to serve this way for good, change {serving}'s serving file, then "
            f"loosen the floor on purpose through review ({'; '.join(commands)})"
        )
    return (
        f"for a what-if, price without the lock (--no-lock); to price it under the lock, {ways_out(verdict)} "
        f"({'; '.join(commands)})"
    )


def _relock_at(root: Root | None, verdict: Verdict, serving: str | None, path: str | None, lock: Lock | None) -> str:
    """:func:`relock_command` for the lock at ``path``, re-aimed into ``root``'s ``locks/`` (with a note saying so)
    when ``path`` lies outside it (:func:`floor_advice`)."""
    target, force, note = path, True, ""
    if root is not None and path is not None and not (root.path / path).resolve().is_relative_to(root.locks.resolve()):
        own = root.locks / f"{serving}.lock.toml" if serving else None
        if own is not None and is_there(own):
            target, note = _shown(root, own), f"; {path} lies outside locks/ and is left as it is"
        else:
            target, force = (f"locks/{serving}.lock.toml" if serving else None), False
            note = f"; {path} lies outside locks/ and is left as it is: write a new lock into locks/"
    return relock_command(verdict, serving, target, force, lock) + note


def relock_command(
    verdict: Verdict, serving: str | None, path: str | None, force: bool = True, lock: Lock | None = None
) -> str:
    """The command re-locking the lock at ``path`` with its floors loosened for ``verdict``'s offences and nothing
    else changed: ``lock --update -o LOCK --force --require PATH=PROVENANCE …`` (``--update`` keeps the lock's name,
    kind, serving, serving options and stack; ``--force --require`` sets only the named paths' floors). Pasting the
    former advice, ``lock SERVING -o LOCK --force --require …``, turned a ``best`` lock into a batch-1 ``price``
    lock, dropped the stack a lock was made under and its serving options, and rebuilt every other floor. When
    ``force`` is false there is no lock at ``path`` to update: a new lock of ``serving`` is written there
    (``lock SERVING -o LOCK --require …``, with ``--best`` and ``--stack S`` of ``lock``, the lock it stands for,
    when given). As a code span to paste: each word quoted for a POSIX shell (:func:`shlex.quote`) and the span
    fenced by more backticks than the command holds in a row. A lock file's name comes from the registry (a pull
    request may add ``locks/a;`touch x`$(id).lock.toml``): printed bare, pasting the advice ran what the name held,
    and its backticks ended the code span of the PR comment."""
    if force:
        words = ["passprice", "lock", "--update", "-o", path or "LOCK", "--force"]
    else:
        words = ["passprice", "lock", serving or "SERVING", "-o", path or "LOCK"]
        if lock is not None and lock.kind == "best":
            words.append("--best")
        if lock is not None and lock.stack is not None:
            words += ["--stack", lock.stack.name]
    for o in verdict.offences:
        words += ["--require", f"{o.path}={o.provenance.value}"]
    return command_span(words)


def command_span(words: list[str]) -> str:
    """A command to paste, as a markdown code span: each word quoted for a POSIX shell (:func:`shlex.quote`; the
    placeholders ``SERVING`` and ``LOCK`` left bare) and the span fenced by more backticks than the command holds in
    a row, so a registry name holding ``$(…)`` or backticks neither runs when pasted nor ends the span. A character
    that does not print (a newline, a bidi control) is written as its escape (:func:`passprice.errors.escaped`), so
    the command stays on one line: a lock file ``locks/zz\n\n#### heading\n.lock.toml`` wrote its own heading into
    the pull-request comment and split the refusal on stderr (attack round 32)."""
    import re
    import shlex

    from passprice.errors import escaped

    command = " ".join(shlex.quote(escaped(w)) if w not in ("SERVING", "LOCK") else w for w in words)
    fence = "`" * (max((len(run) for run in re.findall("`+", command)), default=0) + 1)
    pad = " " if fence != "`" else ""
    return f"{fence}{pad}{command}{pad}{fence}"


def priced_under(
    root: Root,
    serving: str | None,
    resolved: Resolved,
    explicit: str | None = None,
    no_lock: bool = False,
    rests_on: Iterable[tuple[str, Fact]] = (),
    stack_facts: Mapping[str, Fact] | None = None,
) -> tuple[Guard, tuple[Verdict, ...]]:
    """The policy every pricing command (``price``, ``best``, ``max-batch``, ``roofline``, ``speculate``,
    ``simulate``) applies before it shows a result: the locks ``resolved`` (of ``serving``, a registered serving's
    reference or ``None``) is priced under (:func:`guard`: ``explicit`` alone, else the serving's own; none with
    ``no_lock``) and each one's verdict on today's facts, ``stack_facts`` included (a serving stack's facts by lock
    path, when the result has an expected price: a lock made under the stack floors them), at the paths its
    recorded price rests on and at ``rests_on`` (the facts the command's own result rests on).

    Raises :class:`LockFloor` when a verdict does not hold, naming every lock that breaks with the command that
    re-locks each (its JSON names the locks applied; ``also``: the verdicts after the first),
    :class:`LockMismatch`, :class:`CheckpointChanged` or :class:`ServingChanged` as :func:`guard` does, and
    :class:`~passprice.errors.InputError` for a lock that does not read."""
    g = guard(root, serving_name(root, serving), resolved, explicit, no_lock)
    facts = dict(resolved.facts())
    facts.update(stack_facts or {})
    verdicts = g.judge(facts, rests_on)
    refused = [v for v in verdicts if not v.holds]
    if refused:
        # every lock the price breaks is named, each with its command (best under a price and a best lock)
        each = []
        for v in refused:
            at = next(((lock, shown) for lock, shown in g.locks if lock.name == v.lock), None)
            locked = serving_name(root, serving) or (at[0].info.serving if at is not None else None)
            each.append((v, locked, at[1] if at is not None else None, at[0] if at is not None else None))
        advice = floor_advice(*each[0][:3], root, each[0][3], more=each[1:],
                              from_option=_holds_as_registered(root, serving, g, stack_facts))
        raise LockFloor(refused[0], {"locks": g.names()}, advice, tuple(refused[1:]))
    return g, verdicts


def _holds_as_registered(
    root: Root, serving: str | None, g: Guard, stack_facts: Mapping[str, Fact] | None
) -> bool:
    """Whether the registered serving ``serving``, priced as its file says (no command-line option), holds under
    every lock of ``g``: then a refused price's weaker fact came from an option given on the command line (``price
    qwen3-30b-a3b-h200 --routing uniform``), and loosening the lock is no fix (session 9's walkthrough: pasted, the
    advice loosened the floors of a lock whose serving still rests on the measured routing)."""
    from passprice.serving import ServingRefusal
    from passprice.servings import load_spec, resolve

    name = serving_name(root, serving)
    if name is None:
        return False
    from passprice.errors import InputError

    try:
        own = resolve(root, load_spec(root, name))
    except (ServingRefusal, InputError):
        # Not known to hold: the serving as registered does not even read (round 18: its routing record broken,
        # `price SERVING --routing uniform` exited 2 over a record the option had replaced)
        return False
    facts = dict(own.facts())
    facts.update(stack_facts or {})
    return all(v.holds for v in g.judge(facts))  # at the paths each lock's price rests on: the option's are not


def sweep_under(
    root: Root,
    servings: Iterable[Any],
    explicit: str | None = None,
    no_lock: bool = False,
    cards: Iterable[str] | None = None,
    positions: Iterable[float] | None = None,
    max_tpot: float | None = None,
    draft_tokens: Iterable[int] | None = None,
    memory_use: float | None = None,
    checkpoint: str | None = None,
    routing: str | None = None,
    limit: int | None = None,
) -> list[str]:
    """The policy ``sweep`` applies: each registered serving of ``servings`` (references as the command line gives them;
    a :class:`~passprice.servings.ServingSpec` (a checkpoint swept with no serving) has no lock; a serving file kept
    outside the registry is judged as ``price FILE`` judges it, under the locks that lock what it prices (those of no
    registered serving), and under ``explicit`` as ``price FILE --lock L`` judges it: L
    applies when it locks the card and checkpoint the file prices, its line named by the reference; sweep51: its
    floors were skipped, exit 0) with ``checkpoint`` and ``routing`` put in place of its own when given (``sweep
    SERVING --routing R``, as
    ``price SERVING --routing R`` judges the serving so priced: a floor the option breaks refuses, and the advice says
    the option, not the lock, is the fix) judged on today's facts under its locks, or under ``explicit`` alone, which
    must lock at least one of them (the others are swept under their own locks: ``sweep A B --lock A`` swept B under
    none, so a fact below B's floors slipped past its lock). Returns one line a serving priced under a lock: ``"NAME:
    under lock L (locks/L.lock.toml): holds"``; when the sweep's ``cards`` (references, ``None``: each serving's own)
    hold others than the serving's, the line says its rows on them are under no lock (a lock judges the facts of the
    card it locks; ``sweep --cards all`` said "holds" of every card); when its ``positions`` (``None``: the serving's
    own) are others than the locked serving's mean position, that its rows at them are not the locked serving's; when
    its ``draft_tokens`` (``None``: the serving's own) hold others than the serving's, that its rows drafting them are
    not the locked serving's either (``sweep qwen35-27b-h200-mtp --draft-tokens 0,1,2`` said "the serving is the locked
    one" of rows drafting 0 and 1 tokens, attack round 49) (:meth:`Guard.line` says the rest, as every command does: a
    ``max_tpot`` given on the command line is a change of the serving, as ``best``/``roofline --max-tpot`` say it is; so
    is a ``memory_use``, ``sweep --memory-use``, and a ``limit``, ``sweep --limit N``: its contexts, as ``price
    --limit N`` says they differ).

    Raises :class:`LockFloor` at the first serving whose floors are breached (naming every lock of it that
    breaks; its JSON names the serving), the first
    :class:`LockMismatch` when ``explicit`` locks none of ``servings``, :class:`CheckpointChanged` or
    :class:`ServingChanged` when what a lock locks changed under it, and
    :class:`~passprice.errors.InputError` for a serving or lock that does not read."""
    from passprice.cards import same_card
    from passprice.servings import ServingSpec, load_spec, override, resolve

    # (name shown, registered name or None, resolved, the guard of --lock L or None: the serving's own locks)
    guarded: list[tuple[str, str | None, Resolved, Guard | None]] = []
    mismatches = []
    for ref in servings:
        if isinstance(ref, ServingSpec):
            continue
        name = serving_name(root, ref)
        spec = override(load_spec(root, ref), checkpoint=checkpoint, routing=routing)
        # its own card unswept (--cards naming others): its file's host_memory is no bad input (tests/test_fix184.py)
        # (the same file, not one of the same stem in another folder: cards.same_card)
        own_swept = cards is None or any(same_card(root, c, spec.card) for c in cards)
        resolved = resolve(root, spec, card_priced=own_swept)
        if name is None and explicit is None:
            # A serving file kept outside the registry is judged under the locks that lock what it prices, as `price
            # FILE` judges it (sweep skipped it: `price COPY` said "under lock r1-1k … floors hold" where `sweep COPY`
            # said nothing, exit 0; found by sweep51).
            outside = guard(root, None, resolved)
            if outside.locks:
                guarded.append((ref, None, resolved, outside))
            continue
        try:
            # One kept outside the registry is judged under --lock L as `price FILE --lock L` judges it (sweep51:
            # its floors were skipped, exit 0): L applies when it locks the card and checkpoint the file prices.
            guarded.append((name or ref, name, resolved, guard(root, name, resolved, explicit, no_lock)))
        except LockMismatch as e:
            mismatches.append(e)
            if name is not None:
                guarded.append((name, name, resolved, None))
    if explicit is not None and mismatches and not any(under is not None for *_, under in guarded):
        raise mismatches[0]
    lines = []
    for shown_name, name, resolved, under in guarded:
        # a serving the explicit lock does not lock: under its own locks
        g = under if under is not None else guard(root, name, resolved)
        refused = [v for v in g.judge(resolved.facts()) if not v.holds]
        if refused:  # every lock of the serving the facts break, each with its command
            each = []
            for v in refused:
                at = next(((lock, shown) for lock, shown in g.locks if lock.name == v.lock), None)
                whose = name or (at[0].info.serving if at is not None else None)  # as priced_under names it
                each.append((v, whose, at[1] if at is not None else None, at[0] if at is not None else None))
            by_option = (checkpoint is not None or routing is not None) and _holds_as_registered(root, name, g, None)
            advice = floor_advice(*each[0][:3], root, each[0][3], more=each[1:], from_option=by_option)
            raise LockFloor(refused[0], {"serving": shown_name}, advice, tuple(refused[1:]))
        if g.locks:
            verdicts = g.judge(resolved.facts())
            own = resolved.card.name
            # a card of another folder with the own card's stem is another card (cards.same_card)
            others = sorted({c for c in (cards or ()) if not same_card(root, c, resolved.spec.card)})
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            tail = (f"; its rows on {shown} are under no lock (the locks lock {own})" if others else "")
            locked = [c.position for c in resolved.spec.contexts or () if c.position is not None]
            away = [p for p in positions or () if p not in locked]
            own_tokens = resolved.spec.draft.tokens if resolved.spec.draft is not None else 0
            drafting = [k for k in dict.fromkeys(draft_tokens or ()) if k != own_tokens]
            # the rows at the locked serving's position and drafting: none when every swept position or draft is
            # another (walk95: "the serving is the locked one" beside "its rows at 512, 4096 are not the locked
            # serving's")
            locked_limits = sorted({c.limit for c in resolved.spec.contexts or () if c.limit is not None})
            relimited = limit is not None and locked_limits != [limit]  # sweep --limit N: every row at N
            at_lock = not relimited and (not positions or any(p in locked for p in positions)) and (
                not draft_tokens or own_tokens in draft_tokens) and (
                not cards or any(same_card(root, c, resolved.spec.card) for c in cards))
            which = " ".join([*([f"on {own}"] if others else []),
                              *([f"at position {', '.join(position_text(p) for p in locked)}"] if away else []),
                              *([f"drafting {own_tokens}"] if drafting else [])])
            rows = ("the serving is the locked one, its prices" if not (away or drafting or others or relimited)
                    else f"its rows {which} are the locked serving's, their prices" if at_lock
                    else "no row is the locked serving's, so its prices are")
            if away:
                more = f" and {len(away) - 3} more" if len(away) > 3 else ""
                where = ", ".join(position_text(p) for p in away[:3]) + more
                tail += (f"; its rows at position {where} are not the locked serving's (position "
                         f"{', '.join(position_text(p) for p in locked)})")
            if relimited:
                tail += (f"; its rows at limit {limit} are not the locked serving's (limit "
                         f"{', '.join(map(str, locked_limits))})")
            if drafting:
                tail += (f"; its rows drafting {', '.join(map(str, drafting[:3]))}"
                         f"{f' and {len(drafting) - 3} more' if len(drafting) > 3 else ''} tokens a pass are not the "
                         f"locked serving's (drafting {own_tokens})")
            # the serving as the command line makes it: --max-tpot overrides its file's cap (walkthrough 9: sweep
            # said "the serving is the locked one" where best and roofline said it differs by max_tpot)
            swept = resolved if max_tpot is None else attrs.evolve(
                resolved, spec=attrs.evolve(resolved.spec, max_tpot=max_tpot)
            )
            if memory_use is not None:  # --memory-use likewise overrides its file's headroom (moe43)
                swept = attrs.evolve(swept, spec=attrs.evolve(swept.spec, memory_use=memory_use))
            if limit is not None:  # --limit N: its contexts, as price --limit N says they differ
                from passprice.servings import complete

                swept = attrs.evolve(swept, spec=complete(override(swept.spec, limit=limit), resolved.header))
            relabels, drifts = g.since(root, resolved, name)  # said as price says them (slip round 44)
            said = g.line(verdicts, differs=g.differs(root, swept), relabels=relabels, drifted=drifts, rows=rows)
            lines.append(f"{shown_name}: {said}{tail}")
    return lines
