"""A lock is held to everything it pinned, and every difference is named: re-priced from its pinned inputs with
today's code (does the recorded price still come out, bit for bit?), and from today's inputs (which of the facts, the
checkpoint's content, the serving and the pricing model changed since, and what that does to the price), with the
recorded and re-priced figures side by side and the first term that moved.

The pinned checkpoint is found by its content, not its name: the entry the lock names when it still holds the pinned
content, else any entry of the registry that does (a renamed or moved entry), else the lock cannot be reproduced and
says why. A lock of format 1 pinned no content: its header sha256 stands in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.errors import InputError, Unreadable, problem_lines
from passprice.facts import UNITS, Fact
from passprice.files import shell_word
from passprice.gguf_header import GGUFHeader
from passprice.locks import (
    Lock,
    Moved,
    Verdict,
    judge,
    pinned_serving,
    portable_spec,
    priced,
    rooted,
    rooted_spec,
)
from passprice.pins import LOCK_FORMAT
from passprice.registry import Root
from passprice.serving import ServingRefusal
from passprice.servings import _OPTIONAL_DEFAULTS, Resolved, ServingSpec, load_spec, resolve, spec_to_document

if TYPE_CHECKING:
    from passprice.cards import Card
    from passprice.drafts import DraftMethod
    from passprice.routing import Routing
    from passprice.stacks import Stack


# --- what moved, what drifted ----------------------------------------------------------------------------------------


def moved(
    recorded: Mapping[str, Any], now: Mapping[str, Any], fields: Iterable[str] | None = None
) -> tuple[Moved, ...]:
    """The fields (default: every field of either) whose value differs between ``recorded`` and ``now``, in
    ``recorded``'s order then ``now``'s."""
    keys = list(dict.fromkeys([*recorded, *now])) if fields is None else list(fields)
    return tuple(Moved(k, recorded.get(k), now.get(k)) for k in keys if recorded.get(k) != now.get(k))


def expected_moved(recorded: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> tuple[Moved, ...]:
    """Under a serving stack (issue 14), the expected price's :data:`~passprice.locks.FIGURES`
    (``expected.tokens_per_s`` …) and its ``fixed_s`` that differ between a ``recorded`` price and ``now``'s, when
    both are priced under a stack (a price without ``expected``, the limit alone, has none to compare). A lock made
    under a stack guarantees its expected price as it guarantees the limit: a re-fit, a hand-edited share or a code
    change that moves it is a moved price. ``expected.host_capacity_bytes`` counts only when a side holds sequences
    in host memory, as the limit's does (:func:`passprice.review.impacts._figures_differ`): the record shows the card's
    host capacity either way, but a price without host sequences does not rest on it (session 29: the first shipped lock
    under a stack read "price moved, lock not updated (expected.host_capacity_bytes …; tokens/s did not move)" when the
    H200's assumed 512 GiB host placeholder was edited, while the limit locks read unaffected)."""
    if recorded is None or now is None or "expected" not in recorded or "expected" not in now:
        return ()
    was, is_ = recorded["expected"], now["expected"]
    from passprice.locks import holds_host, priced_figures

    host = holds_host(recorded, now, was, is_)
    out = [Moved(f"expected.{f}", was.get(f), is_.get(f)) for f in priced_figures(was, is_, host)
           if was.get(f) != is_.get(f)]
    if recorded.get("fixed_s") != now.get("fixed_s"):
        out.append(Moved("fixed_s", recorded.get("fixed_s"), now.get("fixed_s")))
    return tuple(out)


def moved_today(
    recorded: Mapping[str, Any], now: Mapping[str, Any], order: Iterable[str]
) -> tuple[str | None, tuple[str, ...]]:
    """The first field of ``order`` (the lock's compared fields) whose value in ``now`` (the price today's inputs
    give) is not ``recorded``'s among those a lock guarantees, and the figures that moved that it does not:
    ``host_capacity_bytes`` (and ``expected.host_capacity_bytes``) where no side holds sequences in host memory
    (:func:`passprice.locks.priced_figures`, the rule of ``price --lock`` and the review; an ``expected`` table
    counts as moved when :func:`expected_moved` says so). Left51: the H200's ``host.capacity`` halved (512 → 256
    GiB, a fact five locks pin and no price reads without host sequences) read "first term that moved with today's
    inputs: host_capacity_bytes" in ``reproduce``, a pinned input read as a moved price. Raises nothing."""
    from passprice.locks import holds_host

    was, is_ = recorded.get("expected"), now.get("expected")
    host = holds_host(recorded, now, was, is_)
    first = None
    for f in order:
        if now.get(f) == recorded.get(f) or (f == "host_capacity_bytes" and not host):
            continue
        if f == "expected" and not expected_moved(recorded, now):
            continue
        first = f
        break
    unguaranteed: list[str] = []
    if not host and now.get("host_capacity_bytes") != recorded.get("host_capacity_bytes"):
        unguaranteed.append("host_capacity_bytes")
    if (not host and isinstance(was, Mapping) and isinstance(is_, Mapping)
            and was.get("host_capacity_bytes") != is_.get("host_capacity_bytes")):
        unguaranteed.append("expected.host_capacity_bytes")
    return first, tuple(unguaranteed)


def unguaranteed_line(recorded: Mapping[str, Any], now: Mapping[str, Any], fields: Sequence[str]) -> str:
    """The line ``reproduce`` says of ``fields`` (:func:`moved_today`'s second part: figures today's inputs moved
    that the lock does not guarantee): ``host_capacity_bytes 549,755,813,888 B → 274,877,906,944 B with today's
    inputs: a pinned input that moved (host.capacity), not a term of the price: no sequence is held in host memory,
    so the price does not read it and the lock does not guarantee it (no drift: check --frozen and the review call
    the lock unaffected)``, as DESIGN.md's "Pinned and floored" rules. Raises nothing."""
    was, is_ = recorded.get("host_capacity_bytes"), now.get("host_capacity_bytes")
    figures = (f" {was:,.0f} B → {is_:,.0f} B" if isinstance(was, (int, float)) and isinstance(is_, (int, float))
               else "")
    named = " and ".join(fields)
    return (f"{named}{figures} with today's inputs: a pinned input that moved (host.capacity), not a term of the "
            "price: no sequence is held in host memory, so the price does not read it and the lock does not "
            "guarantee it (no drift: check --frozen and the review call the lock unaffected)")


@attrs.frozen
class Drift:
    """A pinned fact the price rests on that differs from today's: ``path``, the ``pinned`` fact and today's
    (``None`` when gone)."""

    path: str
    pinned: Fact
    today: Fact | None

    def describe(self) -> str:
        """``streams.rewrite: 0.8333 (measured) → 0.8 (estimated)``, or ``… → gone``: values as written, with their
        unit (a share without its unit ``1``)."""
        old = f"{self.pinned.describe()} ({self.pinned.provenance.value})"
        if self.today is None:
            return f"{self.path}: {old} → gone"
        if same_quantity(self.pinned, self.today):
            return f"{self.path}: {self.pinned.describe()} → {self.today.describe()} (rewritten, same quantity)"
        new = f"{self.today.describe()} ({self.today.provenance.value})"
        if old == new:
            from passprice.fits import runs_change

            runs = runs_change(self.pinned.derivation, self.today.derivation)
            new += f" ({runs})" if runs is not None else f" ({rewrite_said(self.pinned, self.today)})"
        resourced = self.source_changed
        if resourced is not None:
            new += f", source {resourced[0]} → {resourced[1]}"
        return f"{self.path}: {old} → {new}"

    @property
    def kept_value(self) -> bool:
        """Whether today's fact has the pinned value, unit and provenance as written (its citation, note or
        derivation alone moved). Raises nothing."""
        return (self.today is not None and self.pinned.describe() == self.today.describe()
                and self.pinned.provenance == self.today.provenance)

    def brief(self, pinned: str = " as pinned") -> str:
        """:meth:`describe`, shorter for a fact whose value is the pinned one (:attr:`kept_value`): ``memory.bandwidth:
        4.8 TB/s as pinned (citation changed), source A → B``, not the value twice (``pinned``: the words after the
        value, none where the line said it of every fact). Raises nothing."""
        if not self.kept_value or self.today is None:
            return self.describe()
        from passprice.fits import runs_change

        runs = runs_change(self.pinned.derivation, self.today.derivation)
        moved = self.source_changed
        return (f"{self.path}: {self.pinned.describe()}{pinned} "
                f"({runs if runs is not None else rewrite_said(self.pinned, self.today)})"
                + (f", source {moved[0]} → {moved[1]}" if moved is not None else ""))

    @property
    def source_changed(self) -> tuple[str, str] | None:
        """``(pinned source, today's source)`` when both name a source and they differ (the figure moved to
        another document: ``nvidia-l40s-datasheet → nvidia-l40s-datasheet-rev2``), else ``None``. Walkthrough 51:
        the drift line read ``864 GB/s (published) → 900 GB/s (published)``, the new datasheet unsaid."""
        if self.today is None or self.pinned.source is None or self.today.source is None:
            return None
        if self.pinned.source == self.today.source:
            return None
        return self.pinned.source, self.today.source

    def source_json(self) -> dict[str, str] | None:
        """:attr:`source_changed` as ``{"pinned": SOURCE, "today": SOURCE}`` (``None``: not changed)."""
        resourced = self.source_changed
        return None if resourced is None else {"pinned": resourced[0], "today": resourced[1]}

    def to_json(self) -> dict[str, Any]:
        """``{"field": path, "locked": {value, unit, base_value, provenance, cite, digest}, "now": … or None}``: the
        difference as a program reads it (:meth:`describe` is its line; each side's ``cite`` names its source)."""
        return {"field": self.path, "locked": _fact_brief(self.pinned), "now": _fact_brief(self.today)}


def rewritten_parts(pinned: Fact, today: Fact) -> tuple[str, ...]:
    """What of a fact was rewritten between ``pinned`` and ``today`` besides its figure and provenance: any of
    ``"citation"`` (source, locator or a first-format lock's cite), ``"note"`` and ``"derivation"``, in that order
    (empty when none differs), as :func:`passprice.factparts.changed_parts` tells them. Raises nothing."""
    from passprice.factparts import changed_parts

    return tuple(part for part, _ in changed_parts(pinned, today) if part in ("citation", "note", "derivation"))


def rewrite_said(pinned: Fact, today: Fact) -> str:
    """The parenthesis :meth:`Drift.describe` gives a fact whose figure and provenance read as the pinned ones: each
    part that changed, in ``fact set``'s and the review's words (:func:`passprice.factparts.change_said`: ``citation
    changed``, ``note changed``, ``citation, note changed``, ``note added`` …), a derivation whose digits alone moved
    said so (walkthrough 31: a derivation given ``digits = 4``, figure and citation kept, read "citation or note
    changed"): ``derivation changed: digits none → 4``; ``as written changed`` when no part differs (the fact's
    digest does: how it is written). Left52: every citation or note rewritten read ``citation or note changed``,
    which of them unsaid. Raises nothing."""
    from passprice.derivations import Derivation
    from passprice.factparts import change_said, derivation_key

    was, now = pinned.derivation, today.derivation
    words = {}
    if (isinstance(was, Derivation) and isinstance(now, Derivation) and was.digits != now.digits
            and derivation_key(attrs.evolve(was, digits=now.digits)) == derivation_key(now)):
        def digits(d: int | None) -> str:
            return "none" if d is None else str(d)

        words["derivation"] = f"derivation changed: digits {digits(was.digits)} → {digits(now.digits)}"
    return change_said(pinned, today, words=words) or "as written changed"


def _fact_brief(fact: Fact | None) -> dict[str, Any] | None:
    """A fact as :meth:`Drift.to_json` shows each side: ``value`` and ``unit`` as written, ``base_value``,
    ``provenance``, ``cite`` and ``digest``; ``None`` for a fact that is gone."""
    if fact is None:
        return None
    return {"value": fact.amount, "unit": fact.unit, "base_value": fact.value, "provenance": fact.provenance.value,
            "cite": fact.citation(), "digest": fact.digest()}


def drift(lock: Lock, today: Mapping[str, Fact], rests_on: Iterable[str] | None = None) -> tuple[Drift, ...]:
    """Every pinned fact the price rests on (``rests_on``, default the recorded price's) whose digest differs from
    today's fact at the same path, or which is gone today. A pinned fact the price does not read is no drift, and
    neither is one rewritten to the same quantity (:func:`same_quantity`, listed by :func:`rewritten`). A pinned
    fact the recorded price rests on that is gone today is drift whatever today's price reads: a stack's
    ``[cards.CARD.share.read]`` removed leaves today's price reading the stack's own ``share.read`` instead, and
    ``check --frozen`` said "drift: none, all holds" of a lock whose expected price had moved +22.89 % (attack
    round 32)."""
    return tuple(d for d in _changed(lock, today, rests_on) if not same_quantity(d.pinned, d.today))


def rewritten(lock: Lock, today: Mapping[str, Fact], rests_on: Iterable[str] | None = None) -> tuple[Drift, ...]:
    """The pinned facts the price rests on (as :func:`drift`) whose bytes changed while their quantity did not
    (:func:`same_quantity`: ``4.8 TB/s`` rewritten ``4800 GB/s``): no drift, but the lock no longer pins the fact
    as written (``lock --update`` re-pins it)."""
    return tuple(d for d in _changed(lock, today, rests_on) if same_quantity(d.pinned, d.today))


def same_quantity(pinned: Fact, today: Fact | None) -> bool:
    """Whether ``today`` is ``pinned`` written another way: the same value in base units (``4.8 TB/s`` and ``4800
    GB/s`` are both 4.8e12 B/s, converted exactly, :func:`passprice.facts.to_base`), every other field alike
    (provenance, source, locator, note, derivation), only the amount or unit as written differing. The quantities
    are compared exactly, as written, in one dimension (:func:`exact_quantity`), not as the doubles they round to:
    ``0.0048000000000000004 PB/s`` rounds to 4.8e12 B/s as ``4.8 TB/s`` does, yet is another quantity written
    (attack round 21: it was shown as "rewritten, same quantity")."""
    return today is not None and today.value == pinned.value and (
        exact_quantity(today) == exact_quantity(pinned)
        and attrs.evolve(pinned, amount=today.amount, unit=today.unit) == today
    )


def exact_quantity(fact: Fact) -> tuple[str, Fraction]:
    """A fact's quantity as written, exactly: its unit's dimension and the amount (the decimal as written,
    :func:`passprice.facts.to_base`) times the unit's exact multiplier, a :class:`~fractions.Fraction` in base
    units. Two facts of one quantity written in other units (``4.8 TB/s``, ``4800 GB/s``) have the same."""
    dimension, multiplier = UNITS[fact.unit]
    amount = fact.amount
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(amount))
    return dimension, exact * multiplier


def _changed(lock: Lock, today: Mapping[str, Fact], rests_on: Iterable[str] | None) -> list[Drift]:
    read = set(lock.rests_on if rests_on is None else rests_on) | {p for p in lock.rests_on if p not in today}
    out = []
    for path, pinned in lock.facts.items():
        if path not in read:
            continue
        now = today.get(path)
        if now is None or now.digest() != pinned.digest():
            out.append(Drift(path, pinned, now))
    return out


# --- the pinned checkpoint -------------------------------------------------------------------------------------------


@attrs.frozen
class CheckpointState:
    """Where a lock's pinned checkpoint is today: ``status`` is ``same`` (the entry the lock names holds the pinned
    content), ``renamed`` (another entry, ``found``, holds it), ``changed`` (the named entry holds other content,
    ``today``, and no entry holds the pinned one) or ``missing`` (the named entry does not read, ``error``, and no
    entry holds the pinned content). ``pinned`` is the content digest (format 1: the header sha256). ``unread``: the
    other entries that do not read (``NAME: problem``), any of which may hold the pinned content (an entry whose file
    was renamed reads no more: its ``entry.name`` is not its file's name)."""

    status: str
    ref: str
    pinned: str
    found: str | None = None
    today: str | None = None
    error: str | None = None
    unread: tuple[str, ...] = ()
    #: The entry (by its file's name) whose ``[entry] name`` is still ``ref``: its file renamed, its name not, so it
    #: does not read (walkthrough 21: said as one line naming both names and what to do).
    moved_to: str | None = None
    #: The header file the lock pins (its entry's ``source``) and that header's sha256: what to import again
    #: (walkthrough 39: a teammate handed the lock was told "passprice import FILE", and not which file).
    header_file: str | None = None
    header_sha256: str | None = None
    #: The command that copies passprice's own entry holding the pinned content into the registry
    #: (:func:`passprice.checkpointcite.packaged_copy`), said first: walkthrough 106, a fresh ``init`` registry was
    #: told to import a header file that was never kept, the working ``cp`` on stderr alone.
    packaged: str | None = None
    #: The lock is not one of the registry's (:func:`lock_of`), or git shows its entry never here: not "gone";
    #: ``None`` where git cannot tell (a registry that is no git work tree): it is not here, and whether it was is
    #: not known (:func:`checkpoint_never_here`).
    never_here: bool | None = False

    @property
    def changed(self) -> bool:
        """True when the checkpoint the lock names no longer holds the pinned content (or does not read)."""
        return self.status != "same"

    def unread_entry(self) -> str | None:
        """The problem (``FILE: what``, the file root relative) of the entry the lock names when that entry is there
        and does not read (not TOML, not the schema) and no entry holds the pinned content; ``None`` otherwise: the
        entry is gone (no file of that name, or its file renamed: :attr:`moved_to`), holds other content, or the
        pinned content was found. ``reproduce``'s verdict said such a checkpoint "is gone" while ``audit`` said it
        "does not read" (left98). Raises nothing."""
        if self.status != "missing" or self.error is None or self.moved_to is not None:
            return None
        return None if "not found in registry/checkpoints" in self.error else self.error

    def describe(self) -> str:
        """One line: where the pinned content is, or why it cannot be found."""
        short = self.pinned.removeprefix("sha256:")[:12]
        what = "content" if self.pinned.startswith("sha256:") else "header sha256"
        if self.status == "same":
            return f"{self.ref}: {what} {short}… as pinned"
        if self.status == "renamed" and self.today is not None:  # the named entry holds other content (slip 27)
            now = self.today.removeprefix("sha256:")[:12]
            return (f"{self.ref}: content changed ({short}… pinned, {now}… today); the pinned content is in entry "
                    f"{self.found}, which the lock is reproduced from")
        if self.status == "renamed":
            return f"{self.ref}: the pinned content {short}… is now entry {self.found} (renamed or moved)"
        if self.status == "missing" and self.moved_to is not None:
            return (f"{self.ref}: no entry of that name; registry/checkpoints/{self.moved_to}.toml still names its "
                    f"entry {self.ref} (its file renamed, its [entry] name not), so it does not read: set its [entry] "
                    f"name to {self.moved_to!r} too (a renamed entry's file and name go together) and reproduce finds "
                    "the pinned content there, or rename the file back")
        if self.status == "missing" and self.error is not None and "not found in registry/checkpoints" in self.error:
            # the long "not found" line (the registered names, the embedded copy's advice) said nothing to a lock
            n = len(self.unread)
            maybe = ("" if not n else f"; {n:,} entr{'y does' if n == 1 else 'ies do'} not read and may hold it "
                     f"({self.unread[0]}{f' and {n - 1:,} more' if n > 1 else ''}; `passprice check` names each "
                     "problem)")
            pinned_file = ""
            if self.header_file and self.header_sha256:
                from passprice.errors import escaped

                pinned_file = (f"; the lock pins the header {escaped(self.header_file)}, sha256 "
                               f"{self.header_sha256[:12]}…")
            if self.packaged is not None:
                return (f"{self.ref}: no entry of that name in this registry; passprice's own registry holds the "
                        f"pinned {what} {short}…: copy its entry into this registry ({self.packaged}) and run this "
                        f"again; or import the header (passprice import FILE --name "
                        f"{shell_word(self.ref)}{pinned_file}), or re-lock through review{maybe}")
            return (f"{self.ref}: no entry of that name, and no entry of the registry holds the pinned {what} "
                    f"{short}…: import the pinned header again (passprice import FILE --name "
                    f"{shell_word(self.ref)}{pinned_file}), or re-lock through review{maybe}")
        nobody = "no entry of the registry that reads" if self.unread else "no entry of the registry"
        if self.status == "changed":
            now = (self.today or "").removeprefix("sha256:")[:12]
            said = f"{self.ref}: content changed ({short}… pinned, {now}… today), and {nobody} holds the pinned content"
        else:
            said = f"{self.ref}: does not read ({self.error}), and {nobody} holds the pinned content"
        if self.unread:  # a renamed entry file: the pinned content may be in one that does not read
            n = len(self.unread)
            more = f" and {n - 1:,} more" if n > 1 else ""
            said += (
                f"; {n:,} entr{'y does' if n == 1 else 'ies do'} not read and may hold it ({self.unread[0]}{more}; "
                "`passprice check` names each problem)"
            )
        return said


class CheckpointGone(Exception):
    """The checkpoint a lock pinned is nowhere in the registry: the entry it names holds other content
    (``CheckpointChanged``) or does not read (``CheckpointMissing``), and no other entry holds the pinned content."""

    def __init__(self, lock: str, state: CheckpointState) -> None:
        self.lock = lock
        self.state = state
        self.name = "CheckpointChanged" if state.status == "changed" else "CheckpointMissing"
        said = state.describe()
        advice = ("" if state.moved_to is not None or "re-lock through review" in said
                  else "; import the pinned header again (passprice import), or re-lock")  # said once
        super().__init__(f"lock {lock}: checkpoint {said}{advice}")

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "CheckpointChanged", ...}``."""
        return {
            "refusal": self.name,
            "lock": self.lock,
            "checkpoint": self.state.ref,
            "pinned": self.state.pinned,
            "today": self.state.today,
            "message": str(self),
        }


def _identity(lock: Lock, header: GGUFHeader) -> str:
    from passprice.pins import checkpoint_digest

    return checkpoint_digest(header) if lock.checkpoint_pin.content is not None else header.sha256


def find_checkpoint(root: Root, lock: Lock) -> tuple[GGUFHeader | None, CheckpointState]:
    """The header holding the content ``lock`` pinned, and where it was found (:class:`CheckpointState`): the entry
    (or file) the lock names, else the first registry entry, by name, that holds it; ``None`` when none does.

    Raises :class:`~passprice.errors.Unreadable` (bad input, exit 2) when the entry the lock names is there but
    cannot be read (a folder in its place, a FIFO, a file this user may not open): one line naming the file, root
    relative. ``reproduce`` said such a checkpoint was "gone" and exited 1 (left39); a name that names nothing, or an
    entry that reads and holds other content, is looked for among the other entries as before."""
    from passprice.checkpoints import load_checkpoint

    ref = lock.checkpoint_pin.name
    pinned = lock.checkpoint_pin.content or lock.checkpoint_pin.sha256
    today = error = None
    try:
        _require_inside(root, lock, ("checkpoint",))
        named = load_checkpoint(root, rooted(ref, root))
        today = _identity(lock, named)
        if today == pinned:
            return named, CheckpointState("same", ref, pinned, ref, today)
    except Unreadable as e:
        raise Unreadable(problem_lines(e)[0].replace(f"{root.path}/", "")) from None
    except InputError as e:
        error = problem_lines(e)[0].replace(f"{root.path}/", "")
    unread = []
    moved_to = None
    for name in root.scan(root.checkpoints):
        if name == ref:
            continue
        try:
            header = load_checkpoint(root, name)
        except InputError as e:  # a problem of its own file, which `passprice check` reports; named if none holds it
            problem = problem_lines(e)[0].replace(f"{root.path}/", "")
            unread.append(f"{name}: {problem}")
            if moved_to is None and f"entry.name: {ref!r} does not match the file name" in problem:
                moved_to = name  # the lock's entry, its file renamed and its name not
            continue
        if _identity(lock, header) == pinned:
            return header, CheckpointState("renamed", ref, pinned, name, today, error)
    status = "changed" if today is not None else "missing"
    return None, CheckpointState(status, ref, pinned, None, today, error, tuple(unread), moved_to,
                                 lock.checkpoint_source, lock.checkpoint_sha256)


def pinned_header(root: Root, lock: Lock) -> GGUFHeader:
    """The header holding the checkpoint content ``lock`` pinned (:func:`find_checkpoint`).

    Raises :class:`CheckpointGone` when no entry holds it."""
    header, state = find_checkpoint(root, lock)
    if header is None:
        raise CheckpointGone(lock.name, state)
    return header


# --- a lock's price with today's inputs ------------------------------------------------------------------------------


def _spec_fields(spec: ServingSpec) -> dict[str, Any]:
    """The serving document of ``spec`` as compared with a lock's: its description aside (said by
    :func:`relabelled`), its context classes in one order (sorted by their JSON text): the order they are written in
    is no part of the price (:class:`passprice.serving.ContextMix` sums exactly), and a serving whose two classes
    were swapped failed ``check --frozen`` ("serving changed") with every figure as recorded (slip round 43)."""
    import json

    data = spec_to_document(spec)
    data.pop("description", None)
    contexts = data.get("contexts")
    if isinstance(contexts, list):
        data["contexts"] = sorted(contexts, key=lambda c: json.dumps(c, sort_keys=True, default=str))
    return data


def serving_changes(pinned: ServingSpec, today: ServingSpec) -> tuple[str, ...]:
    """What differs between the serving a lock pinned and today's (both completed; descriptions aside), one
    ``field: pinned → today`` line each."""
    return tuple(f"{key}: {_show(was)} → {_show(now)}" for key, was, now in serving_differences(pinned, today))


def serving_differences(pinned: ServingSpec, today: ServingSpec) -> tuple[tuple[str, Any, Any], ...]:
    """What differs between the serving a lock pinned and today's (both completed; descriptions aside): each field's
    name, its pinned value and today's, as the serving document writes them (``None`` where absent).

    Two specs equal field by field (``==``, as attrs compares them: the file each was read from aside) whose
    later-added fields are of one type (a document leaves ``shared_prefix`` out at ``0`` but keeps ``0.0``), and
    whose context classes have one text (their order is by their JSON text, where ``2048`` and ``2048.0`` differ)
    write equal documents: none differs, said without writing them (a sweep under seven locks imported cattrs,
    41 ms, only to find that; issue 16, round 27)."""
    if (
        pinned == today
        and all(type(getattr(pinned, k)) is type(getattr(today, k)) for k in _OPTIONAL_DEFAULTS)
        and repr(pinned.contexts) == repr(today.contexts)
    ):
        return ()
    old, new = _spec_fields(pinned), _spec_fields(today)
    return tuple((key, old.get(key), new.get(key)) for key in dict.fromkeys([*old, *new])
                 if old.get(key) != new.get(key))


def _show(value: Any) -> str:
    """A serving field's value as its file writes it: ``true``/``false`` (TOML), lists and tables spelled out."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "; ".join(_show(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


@attrs.frozen
class Today:
    """A lock priced with today's inputs: the registered serving it locks as its file is today (the lock's own
    serving when it locks none), today's card, drafting method and checkpoint. ``spec`` is the completed spec
    priced (``None`` when today's files do not read: ``error``); ``serving`` the lines of what changed in it since
    the lock (``gone`` when the registered serving was removed); ``price`` the ``--json`` object or ``refusal``
    today's pricer gave; ``verdict`` the floors judged on the facts it rests on; ``drift`` the pinned facts it rests
    on that changed; ``checkpoint`` today's content digest of the checkpoint priced; ``facts`` today's facts."""

    spec: ServingSpec | None = None
    serving: tuple[str, ...] = ()
    gone: bool = False
    price: Mapping[str, Any] | None = None
    refusal: Mapping[str, Any] | None = None
    error: str | None = None
    verdict: Verdict | None = None
    drift: tuple[Drift, ...] = ()
    checkpoint: str | None = None
    facts: Mapping[str, Fact] = attrs.field(factory=dict)
    #: The pinned facts it rests on rewritten to the same quantity (:func:`rewritten`): no drift.
    rewritten: tuple[Drift, ...] = ()
    #: The facts today's price rests on that the lock does not pin, by path (a stack's ``[cards.CARD.share.read]``
    #: added over the ``share.read`` the lock pinned: the pinned one is no longer read, so nothing drifted, yet the
    #: expected price moved; attack round 32).
    unpinned: tuple[tuple[str, Fact], ...] = ()
    #: :attr:`serving` for programs, one ``{"field", "locked", "now"}`` a line: ``serving.FIELD`` with the locked
    #: value and today's as the serving document writes them, ``registered`` (the serving's name, today ``None``)
    #: for a serving no longer registered, ``stack.S.integer_matrices`` (or ``float_matrices``) for a stack's route.
    differences: tuple[Mapping[str, Any], ...] = ()
    #: What the lock pins besides facts and serving fields that differs today (:func:`relabelled`): the card's title
    #: and whether it is hypothetical, the serving's description, a stack's title; one ``key: pinned → today (…)``
    #: line each. Moves no number, yet it is drift: ``check --frozen`` fails on it (slip round 42).
    relabelled: tuple[str, ...] = ()
    #: Whether :attr:`error` is a file that is there but cannot be read (:class:`~passprice.errors.Unreadable`: mode
    #: 000, a folder on the way that may not be searched or listed): bad input, as ``check`` says of the same file
    #: (exit 2 naming it), though the lock's pins, which rebuild every input, still reproduce its price (left41).
    unreadable: bool = False


def shown_pair(old: str, new: str) -> str:
    """``'old' → 'new'`` as a relabelled line shows a pinned title and today's (:func:`repr` each); two that differ
    only in their Unicode normalisation with their code points spelled (:func:`ascii`) and
    :func:`passprice.textchange.normalisation_only`'s words after them. Raises nothing."""
    from passprice.textchange import normalisation_only

    note = normalisation_only(old, new)
    return f"{old!r} → {new!r}" if note is None else f"{old!a} → {new!a} ({note})"


#: The most characters :func:`changed_span` shows of either side of what changed; a longer side is its first
#: :data:`SPAN_SHOWN` and how many it holds.
SPAN_MOST = 80
SPAN_SHOWN = 60


def _side(text: str) -> str:
    """One side of :func:`changed_span`'s span: ``text``, or past :data:`SPAN_MOST` characters its first
    :data:`SPAN_SHOWN`, ``…`` and its length: ``V00000, V00001, …… (40,078 characters)`` (attack round 52: a lock's
    ``fitted_vendors`` of 5,000 names printed one line of 40,080 characters from ``check``, ``reproduce`` and
    ``price --lock``; one letter and 3,990 combining marks beside ``NVIDIA``, one of 4,490)."""
    return text if len(text) <= SPAN_MOST else f"{text[:SPAN_SHOWN]}… ({len(text):,} characters)"


def changed_span(old: str, new: str) -> str:
    """The span where ``old`` and ``new`` differ, with 20 characters either side of it: ``…like a [Qwen3.5-27B →
    Qwen3.6-27B] hybrid (synth…``; ``[ → text]`` where one is empty. Two texts that differ only in their Unicode
    normalisation show the span from the letter the marks sit on, its code points spelled, and say so
    (:func:`passprice.textchange.normalisation_only`): ``…Zo['\\xeb' → 'e\\u0308']… (the same text in another
    Unicode normalisation, NFC → NFD: it prints the same)``. Each character that does not print is written as its
    escape (:func:`passprice.errors.escaped`): a lock's ``checkpoint.source`` may hold a newline (a file's name
    may), and a pin of ``"x\\ny.gguf"`` split the line of ``check``, ``reproduce`` and ``price --lock`` in two, one
    of U+202E reordered it (attack round 50). A spelled side holds at most :data:`passprice.errors.SPELL_MOST` code
    points (:func:`passprice.errors.spell`), any other at most :data:`SPAN_MOST` characters (:func:`_side`). Raises
    nothing."""
    import unicodedata

    from passprice.errors import escaped, spell
    from passprice.textchange import normalisation_only

    n = min(len(old), len(new))
    a = next((i for i in range(n) if old[i] != new[i]), n)
    b = next((i for i in range(n - a) if old[-1 - i] != new[-1 - i]), n - a)
    note = normalisation_only(old, new)
    if note is not None:
        # Whole characters: from the letter the marks sit on, to the end of its marks.
        while a > 0 and any(a < len(t) and unicodedata.combining(t[a]) for t in (old, new)):
            a -= 1
        while b > 0 and unicodedata.combining(old[len(old) - b]):
            b -= 1
    tail = old[len(old) - b:]
    was, now = old[a:len(old) - b], new[a:len(new) - b]
    span = f"[{_side(was)} → {_side(now)}]" if note is None else f"[{spell(was)} → {spell(now)}]"
    return escaped(f"{'…' if a > 20 else ''}{old[max(a - 20, 0):a]}{span}{tail[:20]}{'…' if b > 20 else ''}"
                   + (f" ({note})" if note is not None else ""))


def relabelled(
    lock: Lock, card: Card, spec: ServingSpec | None = None, stack: Stack | None = None, sha256: str | None = None,
    routing: Routing | None = None, method: DraftMethod | None = None, origin: str | None = None,
    source: str | None = None, vendors: tuple[str | None, tuple[str, ...]] | None = None,
) -> tuple[str, ...]:
    """What ``lock`` pins of its card, serving and stack besides facts and priced fields that today's ``card``
    (the same registry card), completed serving ``spec`` and ``stack`` differ in, one line each:
    ``card.title: 'NVIDIA H200 SXM 141GB' → 'H200' (the lock pinned the old)``, ``card.hypothetical: false → true``
    (with what the price now claims), ``serving.description: …[like → ish] hybrid…`` (the changed span, 20
    characters either side), ``stack.S.title: …``, and, of a lock pinning its checkpoint's content, the header
    ``sha256`` the entry states (today's ``sha256``): ``checkpoint.sha256: 4918213735… → 0918213735… (the lock
    pinned the old; the content priced is as pinned)``. None of these moves a number (the price reads no title and no
    description; ``hypothetical`` marks what a price claims to be, a real product's or not), yet the lock pins each,
    and a change passed ``check``, ``check --frozen`` and ``reproduce`` silently (slip round 42: the H200 card marked
    ``hypothetical = true``, its four locks read "drift: none"). Of a lock pinning its routing record's or drafting
    method's title and note (``[routing]``, ``[draft]``: slip round 44), today's ``routing`` record and drafting
    ``method`` of the same name: ``routing.title: 'A' → 'B' (the lock pinned the old)``, ``routing.note: …[x →
    y]… (the lock pinned the old)``, ``draft.title``, ``draft.note`` (a price prints the routing note; a retitle
    passed ``check``, ``reproduce`` and ``price --lock`` silently). A lock without those tables pins neither, and
    nothing is said of them. ``origin``: today's ``entry.origin`` of the checkpoint entry the lock names (``None``:
    not compared: another checkpoint, none read, or content not as pinned, said as a content change, as the header
    ``sha256`` is); of a lock pinning it (session 27), a change is said as a
    description is: ``checkpoint.origin: …[x → y]… (the lock pinned the old)`` (slip round 45: an origin rewritten
    to "(fine-tuned)" under three locks passed ``check``, ``reproduce`` and ``price --lock``); a lock written before
    pins none, and nothing is said. ``source``: today's ``entry.source`` (the header file the entry was imported
    from, which ``audit`` cites), compared as ``origin`` is where the lock pins it (slip round 46):
    ``checkpoint.source: …[x → y]… (the lock pinned the old)``. ``vendors``: today's
    :func:`passprice.stackreach.stack_vendors` of ``stack`` and the card, compared where the lock pins them (slip 48):
    ``stack.S.card_vendor: 'AMD' → 'NVIDIA' (the lock pinned the old)``, ``stack.S.fitted_vendors: NVIDIA → AMD,
    NVIDIA (the lock pinned the old)`` (``(none)`` for no vendor). Raises nothing."""
    out = []
    if card.title != lock.card_title:
        out.append(f"card.title: {shown_pair(lock.card_title, card.title)} (the lock pinned the old)")
    if card.hypothetical != lock.card_hypothetical:
        claim = (
            "its price now claims a hypothetical card, not the real one it was locked as"
            if card.hypothetical
            else "its price now reads as a real card's, locked as a hypothetical one's"
        )
        was, now = ("true" if v else "false" for v in (lock.card_hypothetical, card.hypothetical))
        out.append(f"card.hypothetical: {was} → {now} (the lock pinned {was}: {claim})")
    if spec is not None and spec.description != lock.spec.description:
        change = changed_span(lock.spec.description or "", spec.description or "")
        out.append(f"serving.description: {change} (the lock pinned the old)")
    for table, pin, record in (("routing", lock.routing, routing), ("draft", lock.draft, method)):
        if pin is None or record is None or record.name != pin.name:
            continue  # not pinned (a lock written before slip round 44), or another record: said as a serving change
        if record.title != pin.title:
            out.append(f"{table}.title: {shown_pair(pin.title, record.title)} (the lock pinned the old)")
        if record.note != pin.note:
            out.append(f"{table}.note: {changed_span(pin.note or '', record.note or '')} (the lock pinned the old)")
    if sha256 is not None and lock.checkpoint_pin.content is not None and sha256 != lock.checkpoint_sha256:
        out.append(f"checkpoint.sha256: {lock.checkpoint_sha256[:10]}… → {sha256[:10]}… (the lock pinned the old; the "
                   "content priced is as pinned)")
    if origin is not None and lock.checkpoint_origin is not None and origin != lock.checkpoint_origin:
        out.append(f"checkpoint.origin: {changed_span(lock.checkpoint_origin, origin)} (the lock pinned the old)")
    if source is not None and lock.checkpoint_source is not None and source != lock.checkpoint_source:
        out.append(f"checkpoint.source: {changed_span(lock.checkpoint_source, source)} (the lock pinned the old)")
    if stack is not None and lock.stack is not None and stack.title != lock.stack.title:
        out.append(
            f"stack.{lock.stack.name}.title: {shown_pair(lock.stack.title, stack.title)} (the lock pinned the old)"
        )
    if stack is not None and lock.stack is not None:
        # The runtime and builds texts, where the lock pins them (session 27; absent in a lock written before).
        texts: tuple[tuple[str, str | None, str | None], ...] = (
            ("runtime", lock.stack.runtime, stack.runtime), ("builds", lock.stack.builds, stack.builds))
        for key, pinned_text, today_text in texts:
            if pinned_text is not None and today_text != pinned_text:
                change = changed_span(pinned_text, today_text or "")
                out.append(f"stack.{lock.stack.name}.{key}: {change} (the lock pinned the old)")
    if vendors is not None and lock.stack is not None and lock.stack.fitted_vendors is not None:
        out += vendor_lines(lock.stack.name, (lock.stack.card_vendor, lock.stack.fitted_vendors), vendors)
    return tuple(out)


def vendor_lines(
    stack: str, pinned: tuple[str | None, tuple[str, ...]], today: tuple[str | None, tuple[str, ...]],
) -> list[str]:
    """The relabelled lines of a lock made under ``stack`` whose pinned vendors (``pinned``: the card's, the fitted
    cards', as :class:`passprice.locks.StackPin` holds them) differ from ``today``'s: ``stack.S.card_vendor: 'AMD' →
    'NVIDIA' (the lock pinned the old)`` and ``stack.S.fitted_vendors: NVIDIA → AMD, NVIDIA (the lock pinned the
    old)``, each text cut as :func:`changed_span` cuts a description's (at most 20 characters either side of what
    changed; a vendor's length is uncapped) and written with its non-printing characters escaped. Raises nothing."""
    out = []
    if pinned[0] != today[0]:
        was, now = pinned[0] or "(none)", today[0] or "(none)"
        out.append(f"stack.{stack}.card_vendor: {changed_span(was, now)} (the lock pinned the old)")
    if pinned[1] != today[1]:
        was, now = ", ".join(pinned[1]) or "(none)", ", ".join(today[1]) or "(none)"
        out.append(f"stack.{stack}.fitted_vendors: {changed_span(was, now)} (the lock pinned the old)")
    return out


def pinned_vendors_today(root: Root, lock: Lock, stack: Stack) -> tuple[str | None, tuple[str, ...]] | None:
    """Today's :func:`passprice.stackreach.stack_vendors` of ``stack`` and ``lock``'s card in ``root``, where ``lock``
    pins them (made under ``stack`` since slip 48); ``None`` otherwise, or when a measurement file does not read
    (reported where it is read). For :func:`relabelled`'s ``vendors``. Raises nothing."""
    if lock.stack is None or lock.stack.fitted_vendors is None or lock.stack.name != stack.name:
        return None
    from passprice.stackreach import stack_vendors

    try:
        return stack_vendors(root, stack, lock.card)
    except InputError:
        return None


def pinned_origin_today(root: Root, lock: Lock, checkpoint: str) -> str | None:
    """Today's ``entry.origin`` of the checkpoint entry ``lock`` pins the origin of, where today's serving names
    that checkpoint (``checkpoint``: its reference made portable, as the lock records it); ``None`` when the lock
    pins no origin (a lock written before session 27, or of a GGUF file) or today's serving names another checkpoint
    (said as a serving change). For :func:`relabelled`'s ``origin``. Raises nothing."""
    if lock.checkpoint_origin is None or checkpoint != lock.checkpoint_pin.name:
        return None
    from passprice.checkpoints import checkpoint_origin

    return checkpoint_origin(root, rooted(checkpoint, root))


def pinned_source_today(root: Root, lock: Lock, checkpoint: str) -> str | None:
    """Today's ``entry.source`` of the checkpoint entry ``lock`` pins the source of, as :func:`pinned_origin_today`
    has the origin (``None`` when the lock pins no source: written before slip round 46, or of a GGUF file). For
    :func:`relabelled`'s ``source``. Raises nothing."""
    if lock.checkpoint_source is None or checkpoint != lock.checkpoint_pin.name:
        return None
    from passprice.checkpoints import checkpoint_source

    return checkpoint_source(root, rooted(checkpoint, root))


def today_spec(root: Root, lock: Lock) -> tuple[ServingSpec, bool]:
    """The serving a lock is priced with today: the registered serving it locks, as its file is now, or its own
    (paths resolved against the root) when it locks none; and whether the serving it locks is gone.

    Raises :class:`InputError` when the registered serving does not read."""
    name = lock.info.serving
    if name is not None and registered(root, name):
        return load_spec(root, name), False
    _require_inside(root, lock)
    return rooted_spec(lock.spec, root), name is not None


def registered(root: Root, name: str) -> bool:
    """Whether something is at ``registry/servings/NAME.toml``: a serving file, or anything else there (a folder, a
    FIFO, a link to no file), which :func:`passprice.servings.load_spec` then refuses by what it is, as ``check``
    does. A folder there was said to be "no longer registered" and the lock priced as it embeds its serving, exit 0,
    while ``check`` and ``price`` refused it (attack round 26). Raises nothing."""
    try:
        return os.path.lexists(root.servings / f"{name}.toml")
    except ValueError:  # a NUL in a name no lock may hold: nothing is there
        return False


def _require_inside(root: Root, lock: Lock, keys: tuple[str, ...] = ("checkpoint", "card")) -> None:
    """A lock of the registry (its file inside ``root``) names its checkpoint and card (``keys``) by registry names
    or paths inside the root (:func:`passprice.registry.require_inside`). Raises :class:`InputError` naming the lock
    file and key."""
    from passprice.registry import require_inside, within

    if not lock.source or not within(root, lock.source):
        return
    spec = lock.spec
    if "checkpoint" in keys:
        require_inside(root, rooted(spec.checkpoint, root), root.checkpoints, f"{lock.source}: serving.checkpoint")
    if "card" in keys:
        require_inside(root, rooted(spec.card, root), root.cards, f"{lock.source}: serving.card")


def lock_of(root: Root, lock: Lock) -> bool:
    """Whether ``lock`` is a lock of ``root``: its file lies inside ``root``, or ``root``'s ``locks/`` holds a lock
    of its name; so what it locked (its serving, its checkpoint entry) was in ``root`` once. A lock handed over from
    elsewhere (the built-in registry's, reproduced in a fresh ``init`` registry) is not. Raises nothing (a path that
    cannot be looked at counts as the registry's: the older wording)."""
    from passprice.registry import within

    try:
        return (bool(lock.source) and within(root, Path(lock.source))) or os.path.lexists(
            root.locks / f"{lock.name}.lock.toml")
    except (InputError, ValueError):
        return True


#: Seconds the git history of a registry is searched for a serving's file (:func:`serving_was_registered`).
SERVING_HISTORY_S = 5.0


def serving_was_registered(root: Root, name: str) -> bool:
    """Whether the git history of ``root`` (every ref: ``git log --all``) holds ``registry/servings/NAME.toml``: the
    registry did register serving ``name`` once. False when ``root`` is no git work tree (or the built-in registry),
    git fails or runs past :data:`SERVING_HISTORY_S`: nothing shows it was. Walkthrough 117: a lock copied into a
    fresh ``init`` registry's ``locks/`` (its file inside the registry, so :func:`lock_of`) said its serving "is no
    longer registered", a serving the registry never had. Raises nothing."""
    return bool(history_holds(root, root.servings / f"{name}.toml"))


def history_holds(root: Root, path: Path) -> bool | None:
    """Whether the git history of ``root`` (every ref: ``git log --all``) holds the file ``path`` (inside ``root``):
    True or False as git answers; ``None`` where git cannot tell (``root`` is no git work tree or the built-in
    registry, git fails or runs past :data:`SERVING_HISTORY_S`, a name holding NUL). Raises nothing."""
    import subprocess

    from passprice.gitread import run_git

    if root.embedded or "\0" in str(path):
        return None
    rel = os.path.relpath(path, root.path).replace(os.sep, "/")
    try:
        out = run_git(root.path, ["log", "--all", "-1", "--format=%H", "--", f":(literal){rel}"],
                      timeout=SERVING_HISTORY_S)
    except (InputError, OSError, ValueError, subprocess.CalledProcessError):
        return None
    return bool(out.strip())


def checkpoint_never_here(root: Root, lock: Lock) -> bool | None:
    """Whether the checkpoint entry ``lock`` names was never in ``root``: the lock is not one of ``root``'s
    (:func:`lock_of`), or it is (its file copied into ``locks/``) but ``root``'s git history never held
    ``registry/checkpoints/NAME.toml`` for the plain entry name it pins: ``True``; ``False`` where that history holds
    it (it was here: "gone"), or the lock pins a path rather than an entry name; ``None`` where git cannot tell (a
    registry that is no git work tree, :func:`history_holds`): whether it was ever here is not known. A
    walkthrough's lock copied into a fresh ``init`` registry said its checkpoint "is gone from this registry", an
    entry that registry never had; so did one that is no git work tree (issue 13, tests/test_left122.py). Raises
    nothing."""
    if not lock_of(root, lock):
        return True
    ref = lock.checkpoint_pin.name
    if not isinstance(ref, str) or not ref or "/" in ref or os.sep in ref or ref.endswith(".gguf"):
        return False
    held = history_holds(root, root.checkpoints / f"{ref}.toml")
    return None if held is None else not held


def not_here_words(never_here: bool | None) -> str:
    """How a pinned checkpoint entry missing from the registry is said (:func:`checkpoint_never_here`'s answer):
    "is gone from this registry" where its git history shows it there once, "is not in this registry" where it
    shows it never was, and "is not in this registry (no git history here says whether it ever was)" where git
    cannot tell. Raises nothing."""
    if never_here is None:
        return "is not in this registry (no git history here says whether it ever was)"
    return "is not in this registry" if never_here else "is gone from this registry"


def gone_state(root: Root | None, lock: Lock) -> str:
    """How a serving ``lock`` locks and ``root`` does not register is said: "is no longer registered" when
    ``root``'s git history shows it registered (:func:`serving_was_registered`; ``root`` ``None``: the older
    wording), "is not registered here" otherwise (a lock from elsewhere, or copied into ``locks/`` of a registry
    that never had its serving). Raises nothing."""
    name = lock.info.serving
    if root is None or (name is not None and serving_was_registered(root, name)):
        return "is no longer registered"
    return "is not registered here"


def _gone_line(lock: Lock, gone: bool, root: Root | None = None) -> tuple[str, ...]:
    """The line :attr:`Today.serving` opens with when the serving ``lock`` locks is not registered in ``root``, as
    :func:`gone_state` words it: "no longer registered" only where the registry's git history shows it was
    (walkthrough 106: a fresh ``init`` registry, which never had the serving, was told it was "no longer
    registered"; walkthrough 117: so was one with the lock copied into its ``locks/``). Raises nothing."""
    if not gone:
        return ()
    return (f"serving {lock.info.serving} {gone_state(root, lock)} (priced as the lock embeds it)",)


def _gone_difference(lock: Lock, gone: bool) -> tuple[Mapping[str, Any], ...]:
    """:func:`_gone_line` as a structured difference: ``{"field": "registered", "locked": NAME, "now": None}``."""
    return ({"field": "registered", "locked": lock.info.serving, "now": None},) if gone else ()


def _facts_of_renamed(root: Root, lock: Lock, spec: ServingSpec | None) -> dict[str, Any]:
    """Of a lock whose serving ``spec`` (today's; ``None`` when it did not read) does not resolve because the
    checkpoint it names does not read while another entry holds the content the lock pinned
    (:func:`find_checkpoint`: ``renamed``): ``facts``, ``drift`` and ``rewritten`` of today's card (and drafting
    method) as :class:`Today` holds them, from the serving resolved on that entry: the pinned facts compared although
    the serving cannot be priced by its name (walkthrough 39: ``reproduce`` said "facts not compared"). ``{}``
    otherwise. Raises nothing."""
    if spec is None:
        return {}
    _, state = find_checkpoint(root, lock)
    if state.status != "renamed" or state.found is None:
        return {}
    try:
        facts = resolve(root, attrs.evolve(spec, checkpoint=state.found)).facts()
    except (InputError, ServingRefusal):
        return {}
    return {"facts": facts, "drift": drift(lock, facts), "rewritten": rewritten(lock, facts)}


def price_today(root: Root, lock: Lock) -> Today:
    """``lock`` priced with today's inputs (see :class:`Today`); never raises for files that do not read or a
    price that is refused: both are recorded."""
    from passprice.pins import checkpoint_digest

    named = lock.info.serving
    gone = named is not None and not registered(root, named)
    spec = None
    try:
        spec, gone = today_spec(root, lock)
        resolved: Resolved = resolve(root, spec)
    except InputError as e:  # a removed serving is said even when today's files do not read (walkthrough 14)
        return Today(serving=_gone_line(lock, gone, root), error=problem_lines(e)[0].replace(f"{root.path}/", ""),
                     gone=gone, differences=_gone_difference(lock, gone), unreadable=isinstance(e, Unreadable),
                     **_facts_of_renamed(root, lock, spec))
    except ServingRefusal as e:  # today's drafting method out of its scope for the checkpoint
        return Today(serving=_gone_line(lock, gone, root), refusal=e.to_json(), gone=gone,
                     differences=_gone_difference(lock, gone))
    completed = portable_spec(resolved.spec, root)
    fields = serving_differences(lock.spec, completed)
    changes = tuple(f"{key}: {_show(was)} → {_show(now)}" for key, was, now in fields)
    changes = (*_gone_line(lock, gone, root), *changes)
    differences: tuple[Mapping[str, Any], ...] = (
        *_gone_difference(lock, gone),
        *({"field": f"serving.{key}", "locked": was, "now": now} for key, was, now in fields),
    )
    facts = resolved.facts()
    content = checkpoint_digest(resolved.header) if lock.checkpoint_pin.content is not None else resolved.header.sha256
    same = content == (lock.checkpoint_pin.content or lock.checkpoint_sha256)  # else said as the content changed
    relabels = relabelled(lock, resolved.card, completed, None, resolved.header.sha256 if same else None,
                          resolved.serving.routing, resolved.method,
                          pinned_origin_today(root, lock, completed.checkpoint) if same else None,
                          pinned_source_today(root, lock, completed.checkpoint) if same else None) \
        if resolved.card.name == lock.card else ()
    if named is not None and not gone:
        # The registered serving now names another card or checkpoint than its lock: ``price`` refuses it
        # (ServingChanged, enforce.guard), so today's price under the lock is that refusal, not a verdict (check
        # said "all holds" of a lock whose serving's card had been renamed).
        from passprice.enforce import LockMismatch, ServingChanged, mismatch

        wrong = mismatch(lock, None, resolved, root, lambda: content)
        if isinstance(wrong, LockMismatch):
            refusal = ServingChanged(lock, named, wrong.what, wrong.locked, wrong.priced)
            return Today(completed, changes, gone, refusal=refusal.to_json(), drift=drift(lock, facts),
                         checkpoint=content, facts=facts, rewritten=rewritten(lock, facts),
                         differences=differences, relabelled=relabels)  # fmt: skip
    stack = None
    if lock.stack is not None:
        # Issue 14: a lock made under a serving stack is priced with today's stack facts too.
        from passprice.stacks import load_stack

        try:
            stack = load_stack(root, lock.stack.name)
        except InputError as e:  # what changed in the serving is still said (session 24: it was dropped here)
            return Today(completed, changes, gone, error=problem_lines(e)[0].replace(f"{root.path}/", ""),
                         differences=differences, relabelled=relabels, unreadable=isinstance(e, Unreadable))
        # a stack's title, pinned in the lock's [stack] table, said as the card's title is (slip round 42)
        relabels = (*relabels, *(r for r in relabelled(lock, resolved.card, None, stack,
                                                       vendors=pinned_vendors_today(root, lock, stack))
                                 if r.startswith("stack.")))
        facts.update(stack.lock_facts())
        # Where the stack's matrix kernels run is no fact, but it moves the expected price as one: a stack's
        # integer_matrices vector → array read "facts unchanged, serving unchanged" and check --frozen "drift:
        # none" at +3.03 % (attack round 32). It is said as a change of what the lock priced.
        routes = (("integer_matrices", lock.stack.integer_matrices, stack.integer_matrices),
                  ("float_matrices", lock.stack.float_matrices, stack.float_matrices))  # fmt: skip
        changes = (*changes, *(f"stack {lock.stack.name} {what}: {was} → {now}" for what, was, now in routes
                               if was != now))  # fmt: skip
        differences = (*differences, *({"field": f"stack.{lock.stack.name}.{what}", "locked": was, "now": now}
                                       for what, was, now in routes if was != now))
    try:
        price, rests_on = priced(lock.kind, resolved.header, resolved.card, resolved.serving, stack)
    except ServingRefusal as e:
        rests = tuple((p, facts[p]) for p in lock.rests_on if p in facts)
        return Today(
            completed, changes, gone, refusal=e.to_json(), verdict=judge(lock.name, lock.policy, rests),
            drift=drift(lock, facts), checkpoint=content, facts=facts, rewritten=rewritten(lock, facts),
            differences=differences, relabelled=relabels,
        )
    read = {p for p, _ in rests_on}
    unpinned = tuple((p, facts[p]) for p in sorted(read) if p not in lock.facts and p in facts)
    return Today(
        completed, changes, gone, price=price, verdict=judge(lock.name, lock.policy, rests_on),
        drift=drift(lock, facts, read), checkpoint=content, facts=facts, rewritten=rewritten(lock, facts, read),
        unpinned=unpinned, differences=differences, relabelled=relabels,
    )


# --- pricing a lock on one side of a review ---------------------------------------------------------------------


def side_json(root: Root, requests: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Price locks with ``root``'s inputs and this code, for ``passprice diff`` (which calls it in another Python
    process for a side whose pricing model differs from the running one, so keep its shape stable): each request is
    ``{"key", "kind", "serving", "spec"}`` (the registered serving a lock locks, or ``None``; its embedded serving
    document), and ``"stack"`` (the name of the serving stack of a lock made under one, issue 14). Returns
    ``{"results": {key: result}}``, each result holding ``spec`` (the completed serving priced),
    ``gone`` (the registered serving is missing), ``checkpoint`` (its content digest), ``facts`` (path →
    provenance of every fact it could rest on), and one of ``price`` (the ``--json`` object), ``refusal`` or
    ``error`` (a file that does not read)."""
    from passprice.pins import checkpoint_digest
    from passprice.servings import spec_from_document

    results: dict[str, Any] = {}
    for request in requests:
        out: dict[str, Any] = {}
        name = request.get("serving")
        out["gone"] = name is not None and not registered(root, name)
        try:
            if name is not None and not out["gone"]:
                spec = load_spec(root, name)
            else:
                spec = rooted_spec(spec_from_document(request["spec"], "lock: serving"), root)
            resolved = resolve(root, spec)
        except InputError as e:
            out["error"] = " ".join(problem_lines(e)).replace(f"{root.path}/", "")
            results[request["key"]] = out
            continue
        except ServingRefusal as e:  # a drafting method out of its scope for the checkpoint
            out["refusal"] = e.to_json()
            results[request["key"]] = out
            continue
        out["spec"] = spec_to_document(portable_spec(resolved.spec, root))
        out["checkpoint"] = checkpoint_digest(resolved.header)
        facts = resolved.facts()
        stack = None
        if request.get("stack") is not None:
            from passprice.stacks import load_stack

            try:
                stack = load_stack(root, request["stack"])
            except InputError as e:
                out["error"] = " ".join(problem_lines(e)).replace(f"{root.path}/", "")
                results[request["key"]] = out
                continue
            facts.update(stack.lock_facts())
        out["facts"] = {p: f.provenance.value for p, f in facts.items()}
        try:
            out["price"] = priced(request["kind"], resolved.header, resolved.card, resolved.serving, stack)[0]
        except ServingRefusal as e:
            out["refusal"] = e.to_json()
        results[request["key"]] = out
    return {"results": results}


# --- reproduction ----------------------------------------------------------------------------------------------------


@attrs.frozen
class Reproduction:
    """A lock re-priced from its pinned inputs (pinned facts, embedded serving, pinned checkpoint content) with
    today's code: ``price`` (the ``--json`` object, a refusal's, or ``None`` when the pinned checkpoint content is
    nowhere), the recorded fields that ``moved`` (those :meth:`~passprice.locks.Lock.compared` says), today's
    ``pricing_model`` digest, where the ``checkpoint`` was found, and ``today``: the lock priced with today's
    inputs, for what changed since."""

    lock: Lock
    price: Mapping[str, Any] | None
    moved: tuple[Moved, ...]
    pricing_model: str
    checkpoint: CheckpointState
    today: Today
    #: Each drifted fact alone (:func:`alone`): the pinned inputs with only that fact today's, priced.
    alone: tuple[Alone, ...] = ()
    #: Whether the registry is a checkout of passprice itself (it holds ``src/passprice``), whose commits carry the
    #: code that wrote its locks; a registry of one's own carries the line that installs it (``requirements.txt``).
    holds_code: bool = True
    #: For a lock made under a serving stack: the stack's fitted facts today's expected price rests on (lock paths,
    #: ``stack.share.read``) that no longer follow from the stack's runs (``check``'s re-fit: a run, card, checkpoint
    #: or routing record its runs price changed). Walkthrough 27: today's expected column moved on an old fit,
    #: unmarked, after the routing record its runs price changed. Set by the ``reproduce`` command
    #: (:func:`passprice.review.impacts.stale_stack_facts`: the re-fit is no part of the pricing model, whose digest it
    #: would bring calibrate and diff into).
    stale_stack: tuple[str, ...] = ()
    #: Asked (``reproduce(grouped=True)``): each drifted input with the drifted facts derived from it, priced at
    #: once (:func:`together`); empty otherwise.
    joint: tuple[Together, ...] = ()
    #: The lock's routing record's drifted facts priced at once (:func:`routing_together`), for a serving
    #: re-pointed to another record or two or more of its record's facts changed in place; ``None`` otherwise.
    #: Left49: walkthrough 56's serving re-pointed from ``uniform`` to a record of ``hot_experts`` 0.25 and
    #: ``hot_share`` 0.6 read ``routing.hot_experts: tokens/s +108.3 %`` and ``routing.hot_share: refused alone
    #: (BadRouting)`` under "each drifted fact alone", of a +14.72 % move the two made together.
    routing: RoutingTogether | None = None
    #: For a first-format lock whose name another current-format lock of its folder holds
    #: (:func:`passprice.locks.update_name_clash`): that lock (``locks/FILE``) and the serving the lock locks
    #: (:func:`passprice.locks.first_format_serving`), so :meth:`verdict` names the re-lock that works, ``lock
    #: SERVING --force -o FILE``, where ``lock --update`` is refused (left58, left59); ``None`` otherwise.
    name_clash: tuple[str, str | None] | None = None

    @property
    def alone_base(self) -> Mapping[str, Any]:
        """What each drifted fact alone (:attr:`alone`) is compared with: the pinned inputs priced by today's code
        (:attr:`price`, the ``reproduced`` column) when that is a price, else the recorded price. Each alone is
        priced by today's code, so against the recorded figures it carried the code's own move too: a lock written
        before window55, its two drifted stream shares re-cited with their figures kept, read ``streams.append:
        tokens/s +0.006068 %`` and ``streams.read: tokens/s +0.006068 %``, the move of the code alone (walkthrough
        56). Equal to the recorded price in every compared field when the lock reproduces."""
        if self.price is not None and "refusal" not in self.price:
            return self.price
        return self.lock.price

    @property
    def equals(self) -> bool:
        """True when the pinned inputs give every compared field of the recorded price exactly."""
        return self.price is not None and not self.moved

    @property
    def bad_input(self) -> str | None:
        """The line naming today's file that is there but cannot be read (:attr:`Today.unreadable`), else ``None``.
        The lock pins every input its price is rebuilt from, so the reproduction is made and shown without it, but
        what changed since cannot be judged: ``reproduce`` exits 2 on this line after its report, as ``check`` does
        of the same file (``reproduce`` exited 0 with the line as a note; left41)."""
        return self.today.error if self.today.unreadable else None

    @property
    def model_changed(self) -> bool:
        """True when today's pricing-model digest is not the one the lock recorded."""
        return self.lock.info.pricing_model != self.pricing_model

    @property
    def first_moved(self) -> str | None:
        """The first recorded field, in the price's order, that does not reproduce."""
        return self.moved[0].field if self.moved else None

    def changes(self) -> tuple[str, ...]:
        """Which of the lock's inputs changed since it was made: ``facts``, ``checkpoint content``, ``serving``,
        ``relabelled`` (:attr:`Today.relabelled`: the card's title or ``hypothetical``, the serving's description, a
        stack's title), ``pricing model``, in that order."""
        out = []
        if self.today.drift:
            out.append("facts")
        if self.checkpoint.changed or (
            self.today.checkpoint is not None and self.today.checkpoint != self.checkpoint.pinned
        ):
            out.append("checkpoint content")
        if self.today.serving:
            out.append("serving")
        if self.today.relabelled:
            out.append("relabelled")
        if self.model_changed:
            out.append("pricing model")
        return tuple(out)

    def verdict(self, path: str | None = None, commit: tuple[str, str] | None = None, cut: str | None = None,
                requirement: str | None = None) -> str:
        """One line: reproduced or not, and why (which input is to blame). ``path`` is the lock file as a command to
        paste names it (``check``: :func:`passprice.registry.pasted_path`; ``diff``: its path in the registry);
        ``None`` names it as the lock was read (``reproduce LOCK``: as given). Walkthrough 34: the re-lock said
        ``lock --update -o LOCK`` for a lock whose file it knew, and ``check``'s ``git log`` named it by its absolute
        path where every other line of ``check`` names ``locks/NAME.lock.toml``. ``commit`` (:func:`model_commit`,
        when found: the commit whose code is the lock's pricing model) is named as the lock's code: a lock written
        out of an older commit (``git show C:LOCK > old.lock.toml``) was told to find it with ``git log -1 --
        old.lock.toml`` (a file git never held), two lines above the ``pricing model`` line naming the commit
        (walkthrough 56). ``cut`` (:func:`model_commit`'s: what its search left unread) makes the code named a
        search's partial answer, said so: the last-change commit, named where no commit was found, is a fallback,
        and a commit found may not be the oldest (left92: a search cut by its cap named the last-change commit as
        if the history held no other answer). ``requirement`` (:func:`requirement_at`, in a registry of one's own):
        when it is the running passprice (:func:`runs_here`), the lock's writer is said unknown, not that passprice
        (tests/test_fix157.py). Raises nothing."""
        import shlex

        named = shlex.quote(path or self.lock.source or "LOCK")
        relock = f"`passprice lock --update -o {named}`"
        if self.name_clash is not None:  # --update keeps the name another lock holds: refused (left58, left59)
            other, serving = self.name_clash
            served = shlex.quote(serving) if serving else "SERVING"
            relock = (f"`passprice lock {served} --force -o {named}`, under its file's name: `lock --update` keeps "
                      f"{self.lock.name!r}, which {other} holds")
        if self.price is None:
            # said once, on the checkpoint line below (walkthrough 21: the long line was repeated here); "cannot be
            # reproduced here", no price being made to compare, not "does NOT reproduce", which reads as a price
            # that differs (tests/test_walk138.py)
            moved = self.checkpoint.moved_to
            if moved is not None:  # its content here, misnamed: not "gone" (tests/test_fix146.py)
                return (f"cannot be reproduced here: the pinned checkpoint {self.checkpoint.ref}'s entry is here, its "
                        "file renamed and its [entry] name not, so it does not read (checkpoint, below: the file and "
                        "what to do)")
            unread = self.checkpoint.unread_entry()
            if unread is not None:  # left98: an entry that is there and does not parse is not "gone"
                return (f"cannot be reproduced here: the pinned checkpoint's entry does not read ({unread}), and no "
                        "other entry holds the pinned content (checkpoint, below)")
            if self.checkpoint.packaged is not None:  # walkthrough 106: the fix first, not only on stderr
                where = not_here_words(self.checkpoint.never_here)
                return (f"cannot be reproduced here: the pinned checkpoint {self.checkpoint.ref} {where}; passprice's "
                        f"own registry holds it: {self.checkpoint.packaged}, and run this again")
            if self.checkpoint.never_here is not False:  # a "gone" entry this registry never had, or may not have
                return (f"cannot be reproduced here: the pinned checkpoint {self.checkpoint.ref} "
                        f"{not_here_words(self.checkpoint.never_here)} (checkpoint, below)")
            return f"cannot be reproduced here: the pinned checkpoint {self.checkpoint.ref} is gone (checkpoint, below)"
        if self.equals:
            if self.lock.info.format < LOCK_FORMAT:
                return "reproduces on its figures (an older lock format, which pinned no pricing model)"
            if self.model_changed:
                return "reproduces: the pricing model changed since the lock; every recorded field reproduces"
            return "reproduces exactly"
        if "refusal" in self.price:
            # A refusal is no price to compare field by field: a best lock pinning a TPOT cap no batch meets read as
            # 'the pricing model moves the price (first: card)', card 'h200_sxm_141gb' → None, batch 580 → 1
            cause = (
                "the pricing model changed since the lock" if self.model_changed
                else "the lock was edited by hand (its digest recomputed), or something outside the digested "
                "modules refuses differently"
            )
            return (
                f"does NOT reproduce: its pinned inputs are refused ({self.price['refusal']}: "
                f"{self.price.get('message', '')}): {cause}; re-lock it ({relock}) and "
                "review the change"
            )
        if self.model_changed or self.lock.info.format < LOCK_FORMAT:
            last = f"git log -1 --format=%H -- {named}"
            # Walkthrough 20: a registry of one's own (passprice init) holds no src/passprice, so "the passprice of
            # the commit" named no code there; its requirements.txt at that commit names the passprice it ran.
            if commit is not None and not self.holds_code and runs_here(requirement):
                return (f"does NOT reproduce: the pricing model changed and moves the price (first: "
                        f"{self.first_moved}); the code that wrote the lock is unknown: the passprice this "
                        f"registry's requirements.txt named at commit {commit[0]} is this one (pricing model, below); "
                        f"re-lock it with today's code ({relock}) and review the change")
            if commit is not None:
                code = (
                    f"the passprice of commit {commit[0]}" if self.holds_code
                    else f"the passprice this registry's requirements.txt named at commit {commit[0]}"
                ) + (" (the oldest commit whose locks record its pricing model: pricing model, below)" if cut is None
                     else " (the oldest commit whose locks record its pricing model of those the history search "
                     "read; the search was cut, and an older commit may have written it: pricing model, below)")
            else:
                code = (
                    f"the passprice of the commit that last changed the lock (`{last}`)" if self.holds_code
                    else "the passprice this registry's requirements.txt named at the commit that last changed the "
                    f"lock (`git show \"$({last})\":requirements.txt`)"
                )
                if cut is not None:
                    code += (", a fallback: the history search for the commit whose locks record its pricing model "
                             "was cut before finding one, so the lock's code may be another commit's (pricing model, "
                             "below)")
            return (
                f"does NOT reproduce: the pricing model changed and moves the price (first: {self.first_moved}); the "
                f"lock's own price comes from the code that wrote it: {code}, installed in a virtual environment of "
                f"its own; or re-lock it with today's code ({relock}) and review the change"
            )
        return (
            f"does NOT reproduce, although the pricing model's code is the lock's (first: {self.first_moved}): its "
            "pinned inputs do not give what it records: the lock was edited by hand (its digest recomputed), or "
            f"something outside the digested modules (Python, a library) prices differently; re-lock it "
            f"({relock}) and review the change"
        )


@attrs.frozen
class Alone:
    """One drifted fact's own share of a lock's move: the lock re-priced from its pinned inputs with only the fact at
    ``path`` taken as it is today. ``price`` is that ``--json`` object, or a refusal's (``refusal`` in it)."""

    path: str
    price: Mapping[str, Any]

    def first_moved(self, recorded: Mapping[str, Any], order: Iterable[str]) -> str | None:
        """The first field of the recorded price this fact alone moved (``tokens_per_s`` when it moved tokens/s,
        else the first figure of ``order`` that moved, provenance last); ``None`` when none moved or it is
        refused."""
        return None if "refusal" in self.price else _first_field(recorded, self.price, order)

    def describe(self, recorded: Mapping[str, Any], order: Iterable[str] = ()) -> str:
        """``path`` and what it alone does to the recorded price: ``memory.capacity: tokens/s +0.346 % (batch 580 →
        618)``, or the refusal it alone causes. When tokens/s did not move, the first figure of ``order`` (the lock's
        compared fields) that did, recorded → alone: ``memory.bandwidth: tokens/s unchanged (memory_s 23.26 ms →
        21.47 ms, -7.692 %)`` (walkthrough 20: three drifted facts each read "tokens/s unchanged" under a price whose
        ``memory_s`` and ``capacity_bytes`` had moved, naming none as the fact that moved them). Under a serving stack
        the expected price's move follows the limit's (``stack.overhead.pass: tokens/s unchanged, expected tokens/s
        -10.61 %``): a stack's fact moves the expected price alone, and the limit's "unchanged" said it moved nothing
        (attack round 32)."""
        if "refusal" in self.price:
            return f"{self.path}: refused alone ({self.price['refusal']})"
        was, now = recorded.get("tokens_per_s"), self.price.get("tokens_per_s")
        if not isinstance(was, float) or not isinstance(now, float) or not was:
            return f"{self.path}: tokens/s {now!r}"
        out = f"{self.path}: {tokens_move(was, now)}"
        if now == was:
            figure = _first_figure(recorded, self.price, order)
            return out + (f" ({figure})" if figure else "") + expected_move(recorded, self.price)
        extra = [f"{k} {recorded[k]} → {self.price[k]}" for k in ("batch", "binds")
                 if k in recorded and self.price.get(k) != recorded[k]]  # fmt: skip
        out += f" ({', '.join(extra)})" if extra else ""
        return out + expected_move(recorded, self.price)


def _first_field(recorded: Mapping[str, Any], price: Mapping[str, Any], order: Iterable[str]) -> str | None:
    """The first field of ``order`` whose value in ``price`` is not ``recorded``'s, tokens/s first when it moved and
    the provenance fields last of all (they move with a fact's provenance, not with a figure); ``None`` when none."""
    fields = [f for f in order if f not in ("rests_on", "weakest", "provenance")]
    ranked = [*(["tokens_per_s"] if "tokens_per_s" in fields else []), *(f for f in fields if f != "tokens_per_s"),
              *(f for f in ("provenance", "rests_on", "weakest") if f in order)]  # fmt: skip
    return next((f for f in ranked if price.get(f) != recorded.get(f)), None)


def _first_figure(recorded: Mapping[str, Any], price: Mapping[str, Any], order: Iterable[str]) -> str | None:
    """The first field of ``order`` other than tokens/s and the provenance fields whose value in ``price`` is not
    ``recorded``'s, as ``memory_s 23.26 ms → 21.47 ms, -7.692 %`` (bytes, seconds, MACs and cycles with SI
    prefixes; the relative change of a nonzero number); ``None`` when no such field moved."""
    from passprice.tables import si_pair

    units = {"_bytes": "B", "_s": "s", "_macs": "MAC", "_cycles": "cycle"}
    for field in order:
        if field in ("tokens_per_s", "rests_on", "weakest", "provenance") or price.get(field) == recorded.get(field):
            continue
        if field == "ratio" or isinstance(recorded.get(field), Mapping):
            continue  # a stack's expected price and its ratio to the limit's: expected_move says how they moved
        was, now = recorded.get(field), price.get(field)
        if not isinstance(was, int | float) or not isinstance(now, int | float) or isinstance(was, bool):
            return f"{field} {_figure(was)} → {_figure(now)}"
        unit = next((u for end, u in units.items() if field.endswith(end)), "")
        shown = si_pair(float(was), float(now), unit) if unit else (f"{was:,.6g}", f"{now:,.6g}")
        rel = f", {100.0 * (now / was - 1.0):+.4g} %" if was else ""
        return f"{field} {shown[0]} → {shown[1]}{rel}"
    return None


def tokens_move(was: float, now: float, what: str = "tokens/s") -> str:
    """``tokens/s +4.167 %`` (``now`` against ``was``, tokens per second, ``was`` nonzero), or ``tokens/s
    unchanged`` when the two are equal. Raises nothing."""
    return f"{what} unchanged" if now == was else f"{what} {100.0 * (now / was - 1.0):+.4g} %"


def expected_move(recorded: Mapping[str, Any], now: Mapping[str, Any] | None) -> str:
    """For a lock made under a serving stack (``recorded["expected"]``), what ``now``'s expected price does to the
    recorded one: ``, expected tokens/s -10.61 %`` (``(expected batch 1 → 2)`` after it when its batch moved), or
    ``, expected price refused``/``none`` when ``now`` has none; ``""`` for a lock without a stack. Raises
    nothing."""
    was = recorded.get("expected")
    if not isinstance(was, Mapping) or not isinstance(was.get("tokens_per_s"), float) or not was["tokens_per_s"]:
        return ""
    is_ = now.get("expected") if now is not None else None
    if not isinstance(is_, Mapping) or not isinstance(is_.get("tokens_per_s"), float):
        return ", expected price: none"
    out = ", " + tokens_move(was["tokens_per_s"], is_["tokens_per_s"], "expected tokens/s")
    if "batch" in was and is_.get("batch") != was["batch"]:
        out += f" (expected batch {was['batch']} → {is_.get('batch')})"
    return out


def alone(
    lock: Lock, header: GGUFHeader, drifted: Iterable[Drift], unpinned: Iterable[tuple[str, Fact]] = ()
) -> tuple[Alone, ...]:
    """Which drifted fact moved the price: for each fact in ``drifted`` still there today, and each of
    ``unpinned`` (path, fact: one today's price rests on that the lock does not pin), the lock priced from its
    pinned inputs (``header``: the pinned checkpoint) with that one fact taken as today's. Each is a full price
    (:func:`passprice.locks.priced`), so k drifted facts cost k prices; the moves need not add up (a best lock's
    batch, a term that takes over as the binding one). A fact removed today has no price of its own and is left
    out. Raises nothing: a refusal is recorded."""
    out = []
    taken = [(d.path, d.today) for d in drifted if d.today is not None] + list(unpinned)
    for path, fact in taken:
        one = attrs.evolve(lock, facts={**lock.facts, path: fact})
        try:
            price = priced(one.kind, header, one.pinned_card(), pinned_serving(one), one.pinned_stack())[0]
        except ServingRefusal as e:
            price = e.to_json()
        except InputError:  # today's fact does not build a card with the pinned ones: no share to show
            continue
        out.append(Alone(path, price))
    return tuple(out)


@attrs.frozen
class Together:
    """Changed input facts and the changed facts derived from them, taken as today's at once: ``inputs`` (lock paths,
    ``("memory.bandwidth",)``; two when a fact is derived from two changed ones), ``derived`` (the lock paths whose
    today's derivation names one of the group, in drift order) and ``price``, the lock re-priced from its pinned
    inputs with all of them today's (the ``--json`` object, or a refusal's). One datasheet change moves a bandwidth
    and the stream shares recomputed from it together; taken alone each, the bandwidth read +0.4717 % and the shares
    -0.44 %, though the change moved the price +0.003 % (walkthrough 49)."""

    inputs: tuple[str, ...]
    derived: tuple[str, ...]
    price: Mapping[str, Any]

    @property
    def paths(self) -> tuple[str, ...]:
        """The inputs, then the derived facts."""
        return (*self.inputs, *self.derived)

    def describe(self, recorded: Mapping[str, Any], order: Iterable[str] = ()) -> str:
        """``memory.bandwidth with the 2 facts derived from it (streams.read, streams.append): tokens/s +0.003051 %``:
        the move as :meth:`Alone.describe` words one fact's."""
        return Alone(grouped_name(self.inputs, self.derived), self.price).describe(recorded, order)


def grouped_name(inputs: Iterable[str], derived: Iterable[str]) -> str:
    """``memory.bandwidth with the 2 facts derived from it (streams.read, streams.append)``; ``a and b with the fact
    derived from them (c)`` for two inputs."""
    inputs, derived = tuple(inputs), tuple(derived)
    n = len(derived)
    return (f"{' and '.join(inputs)} with the {n if n != 1 else ''}{' ' if n != 1 else ''}fact{'s' if n != 1 else ''}"
            f" derived from {'them' if len(inputs) > 1 else 'it'} ({', '.join(derived)})")


def grouped_moves(
    alone: Iterable[tuple[str, str]],
    joint: Iterable[tuple[Sequence[str], Sequence[str], str]] = (),
    routing: tuple[Iterable[str], str] | None = None,
) -> list[tuple[str, str]]:
    """Each drifted fact's move alone, ``(path, "PATH: MOVE")`` from ``alone``'s ``(path, MOVE)`` in its order, with
    each group of ``joint`` (``(inputs, derived, MOVE)``: a changed input and the changed facts derived from it,
    priced at once, :func:`together`) one entry ``(first path, "NAME with the N facts derived from it (…): MOVE")``
    (:func:`grouped_name`) in the place of its first member, and the ``routing`` record's facts (``(paths, line)``,
    :meth:`RoutingTogether.describe`) one entry ``("routing", line)`` in the place of the first. A derived fact
    recomputed from a changed input is no independent change: walkthrough 49's bandwidth +0.4717 % alone, its shares
    -0.44 %, the one change +0.003 %. The one grouping of ``diff``'s ``alone`` line and ``reproduce``'s "each drifted
    fact alone" (walkthrough 106, finding 7: reproduce listed ``memory.bandwidth: tokens/s +1.875 %`` where diff said
    the group's +0.001906 %). Raises nothing."""
    grouped = {p: (tuple(inputs), tuple(derived), move) for inputs, derived, move in joint
               for p in (*inputs, *derived)}
    routed = set(routing[0]) if routing is not None else set()
    out: list[tuple[str, str]] = []
    said: set[tuple[str, ...]] = set()
    routing_said = False
    for path, move in alone:
        if path in routed:
            if routing is not None and not routing_said:
                routing_said = True
                out.append(("routing", routing[1]))
            continue
        if path not in grouped:
            out.append((path, f"{path}: {move}"))
            continue
        inputs, derived, together_move = grouped[path]
        if inputs not in said:
            said.add(inputs)
            out.append((path, f"{grouped_name(inputs, derived)}: {together_move}"))
    return out


def _input_path(path: str, name: str, drifted: Iterable[str]) -> str | None:
    """The lock path of fact ``name`` (a path inside its record, as a derivation names it) for the fact at lock path
    ``path`` of the same record, when it is one of ``drifted``: ``memory.bandwidth`` beside ``streams.read`` (a card's
    facts have no prefix), ``routing.hot_experts`` beside ``routing.hot_share``; the longest prefix of ``path`` that
    makes a drifted path wins. ``None`` when none does."""
    parts, held = path.split("."), set(drifted)
    for k in range(len(parts) - 1, -1, -1):
        candidate = ".".join([*parts[:k], name])
        if candidate in held and candidate != path:
            return candidate
    return None


def derived_groups(drifted: Iterable[Drift]) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The drifted facts derived from other drifted facts, grouped with them: ``(inputs, derived)`` for each group
    (facts linked by derivations, directly or through one another), ``inputs`` those of the group whose today's
    derivation names no drifted fact, ``derived`` the rest, each in drift order; groups in the order of their first
    fact. A fact is derived from another when its today's derivation names it as an input (``fact =
    "memory.bandwidth"``). Empty when no drifted fact is derived from another. Raises nothing."""
    from passprice.derivations import Derivation

    drifts = [d for d in drifted if d.today is not None]
    paths = [d.path for d in drifts]
    parent: dict[str, str] = {p: p for p in paths}
    derived: set[str] = set()

    def root(p: str) -> str:
        while parent[p] != p:
            p = parent[p]
        return p

    for d in drifts:
        derivation = d.today.derivation if d.today is not None else None
        if not isinstance(derivation, Derivation):
            continue
        for name in derivation.facts():
            found = _input_path(d.path, name, paths)
            if found is None:
                continue
            derived.add(d.path)
            a, b = root(found), root(d.path)
            if a != b:
                parent[max(a, b, key=paths.index)] = min(a, b, key=paths.index)
    groups: dict[str, list[str]] = {}
    for p in paths:
        groups.setdefault(root(p), []).append(p)
    return tuple((tuple(p for p in members if p not in derived), tuple(p for p in members if p in derived))
                 for members in groups.values() if len(members) > 1)


def together(lock: Lock, header: GGUFHeader, drifted: Iterable[Drift]) -> tuple[Together, ...]:
    """Each group of :func:`derived_groups` priced at once: the lock from its pinned inputs with the inputs and every
    fact derived from them taken as today's (:func:`passprice.locks.priced`; one price a group). A group whose facts
    do not build a card with the pinned ones is left out. Raises nothing: a refusal is recorded."""
    drifted = tuple(drifted)
    drifts = {d.path: d.today for d in drifted if d.today is not None}
    out = []
    for inputs, derived in derived_groups(drifted):
        one = attrs.evolve(lock, facts={**lock.facts, **{p: drifts[p] for p in (*inputs, *derived)}})
        try:
            price = priced(one.kind, header, one.pinned_card(), pinned_serving(one), one.pinned_stack())[0]
        except ServingRefusal as e:
            price = e.to_json()
        except InputError:
            continue
        out.append(Together(inputs, derived, price))
    return tuple(out)


@attrs.frozen
class RoutingTogether:
    """A lock's routing record's drifted facts taken as today's at once: ``base`` (the record the lock priced) and
    ``head`` (the one today's serving names; ``base`` itself for facts changed in place), ``facts`` (``(lock path,
    pinned fact, today's fact)`` each, ``routing.hot_experts`` …, in drift order) and ``move``, what they together
    do to the price compared with (``tokens/s +14.72 %``, or ``refused (BadRouting)``), worded as
    :meth:`Alone.describe` words one fact's. Made by :func:`routing_together`, for ``reproduce`` and the review's
    ``alone`` line alike (left48, left49)."""

    base: str
    head: str
    facts: tuple[tuple[str, Fact, Fact], ...]
    move: str
    #: The lock priced with :attr:`facts` today's (the ``--json`` object, or a refusal's): what :attr:`move` says
    #: against a recorded price, kept so the review prices the record once (:func:`routing_together`'s ``known``).
    price: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def paths(self) -> tuple[str, ...]:
        """The lock paths of :attr:`facts`."""
        return tuple(path for path, _, _ in self.facts)

    def describe(self) -> str:
        """One entry: ``routing record uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, hot_share 1 →
        0.6): tokens/s +14.72 %``, or ``routing record R's 2 facts at once (…): …`` for facts changed in place. A
        fact whose quantity did not move is said as ``fact set`` and the review say it, by what changed in it
        (``hot_experts 0.453125, citation changed``), never as a value changed into itself (left60: ``hot_experts
        0.453125 → 0.453125``)."""
        figures = ", ".join(_routing_figure(path, was, now) for path, was, now in self.facts)
        what = (f"routing record {self.base} → {self.head} as a whole" if self.base != self.head
                else f"routing record {self.head}'s {len(self.facts)} facts at once")
        return f"{what} ({figures}): {self.move}"

    def to_json(self) -> dict[str, Any]:
        """``{"base", "head", "facts": [{"path", "before", "after"}], "move"}``, each fact's value in its unit's SI
        base (a share: itself): ``reproduce --json``'s ``facts_routing``, the review's ``alone_routing``."""
        return {"base": self.base, "head": self.head, "move": self.move,
                "facts": [{"path": path, "before": was.value, "after": now.value} for path, was, now in self.facts]}


def _routing_figure(path: str, was: Fact, now: Fact) -> str:
    """One fact of :class:`RoutingTogether`'s entry: ``hot_share 0.9 → 0.8`` when its quantity moved, else what
    changed in it (:func:`passprice.factparts.change_said`: ``hot_experts 0.453125, citation changed``)."""
    from passprice.factparts import change_said

    name = path.removeprefix("routing.")
    if exact_quantity(was) != exact_quantity(now):
        return f"{name} {was.describe()} → {now.describe()}"
    said = change_said(was, now, leave=frozenset({"value"}))
    return f"{name} {now.describe()}, {said}" if said else f"{name} {now.describe()}"


def routing_together(
    lock: Lock, header: GGUFHeader, drifted: Iterable[Drift], recorded: Mapping[str, Any],
    rerouted: tuple[str, str] | None, record: str | None, paths: Iterable[str] | None = None,
    known: RoutingTogether | None = None,
) -> RoutingTogether | None:
    """The ``routing.*`` facts of ``drifted`` (of those, the ``paths`` asked, when given: a review's changed facts)
    whose today's quantity is not the pinned one, priced at once: the lock from its pinned inputs (``header``: the
    pinned checkpoint) with all of them today's (:func:`passprice.locks.priced`, the running code), the move said
    against ``recorded`` (``reproduce``: :attr:`Reproduction.alone_base`; the review: the lock's recorded price).
    Given for a serving re-pointed to another record (``rerouted``: ``(the lock's record, today's)``, one fact moved
    or more) or two or more facts of its ``record`` changed in place; ``None`` otherwise, and when the facts do not
    build a card with the pinned ones. A record's hot set and its share are one routing: a share of 0.6 on
    uniform's hot set of every expert is refused (``BadRouting``), a quarter of the experts taking every token-slot
    moved walkthrough 56's lock +108.3 %, and together they moved it +14.72 %. One price, or none where ``known``
    (one made from the same ``lock``, ``header`` and ``drifted``: the reproduction's) holds the same facts: its price
    is said against ``recorded`` (left50: a review priced a drifted record twice, once in :func:`reproduce` and once
    here). Raises nothing."""
    if record is None and rerouted is None:
        return None
    asked = None if paths is None else set(paths)
    drifts = [d for d in drifted if d.path.startswith("routing.") and (asked is None or d.path in asked)
              and d.today is not None and not same_quantity(d.pinned, d.today)]
    if len(drifts) < (1 if rerouted is not None else 2):
        return None
    # A fact whose quantity did not move (its citation or note alone changed) prices as pinned: it is listed with
    # the others (said by what changed), never counted as one of the facts that move together (left60).
    if sum(exact_quantity(d.pinned) != exact_quantity(d.today) for d in drifts if d.today is not None) < (
            1 if rerouted is not None else 2):
        return None
    facts = tuple((d.path, d.pinned, d.today) for d in drifts if d.today is not None)
    if known is not None and known.price and known.facts == facts:
        price = known.price
    else:
        one = attrs.evolve(lock, facts={**lock.facts, **{path: fact for path, _, fact in facts}})
        try:
            price = priced(one.kind, header, one.pinned_card(), pinned_serving(one), one.pinned_stack())[0]
        except ServingRefusal as e:
            price = e.to_json()
        except InputError:  # the facts do not build a card with the pinned ones: no move to show
            return None
    move = Alone("routing", price).describe(recorded, lock.compared()).split(": ", 1)[1]
    move = move.replace("refused alone (", "refused (", 1)  # the record's facts together, not one alone
    base, head = rerouted if rerouted is not None else (record, record)
    return RoutingTogether(str(base), str(head), facts, move, price)


def rerouted_today(lock: Lock, today: Today) -> tuple[str, str] | None:
    """``(the routing record the lock's serving names, the one today's serving names)`` when both name one and they
    differ (the serving re-pointed since the lock), else ``None``. Raises nothing."""
    was, now = lock.spec.routing, today.spec.routing if today.spec is not None else None
    return (was, now) if isinstance(was, str) and isinstance(now, str) and was != now else None


def reproduce(root: Root, lock: Lock, with_today: bool = True, grouped: bool = False) -> Reproduction:
    """Re-price ``lock`` from its pinned inputs with today's code and compare with the recorded price (every field,
    or an older format's figures), and (``with_today``) price it with today's inputs too. Never raises for a
    checkpoint that is gone: the reproduction says so."""
    from passprice.pins import pricing_model_digest

    header, state = find_checkpoint(root, lock)
    if header is None and state.status == "missing" and state.moved_to is None and not state.unread:
        # (an entry of the registry that does not read may hold it: that is said first, as before)
        from passprice.checkpointcite import packaged_copy

        state = attrs.evolve(state, packaged=packaged_copy(root, lock), never_here=checkpoint_never_here(root, lock))
    now: dict[str, Any] | None = None
    if header is not None:
        try:
            now = priced(lock.kind, header, lock.pinned_card(), pinned_serving(lock), lock.pinned_stack())[0]
        except ServingRefusal as e:
            now = e.to_json()
    diffs = moved(lock.price, now, lock.compared()) if now is not None else ()
    today = price_today(root, lock) if with_today else Today()
    shares = (alone(lock, header, today.drift, today.unpinned)
              if header is not None and (today.drift or today.unpinned) else ())
    joint = together(lock, header, today.drift) if grouped and header is not None and today.drift else ()
    holds_code = (root.path / "src" / "passprice" / "pins.py").is_file()
    clash = None
    if lock.info.format < 2 and lock.source:  # a first-format lock whose name another lock holds (left59)
        from pathlib import Path

        from passprice.locks import first_format_serving, update_name_clash

        other = update_name_clash(root, Path(lock.source), lock.name, lock)
        clash = (other, first_format_serving(root, lock)) if other is not None else None
    rep = Reproduction(lock, now, diffs, pricing_model_digest(), state, today, shares, holds_code, joint=joint,
                       name_clash=clash)
    if header is None or not today.drift:
        return rep
    rerouted = rerouted_today(lock, today)  # left49: walk56's re-pointing read +108.3 % and a refusal, alone each
    record = rerouted[1] if rerouted is not None else lock.spec.routing
    return attrs.evolve(rep, routing=routing_together(lock, header, today.drift, rep.alone_base, rerouted, record))


# --- showing a reproduction ------------------------------------------------------------------------------------------


def _figure(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return "–"
    if isinstance(value, dict | list):
        return "changed"
    return str(value)


def side_by_side(rep: Reproduction) -> list[tuple[str, Any, Any, Any]]:
    """The rows of a reproduction's table: ``tokens_per_s``, ``pass_s`` and ``binds``, then every other field that
    differs from the recorded one in the reproduction or in today's price; each (field, recorded, reproduced,
    today's)."""
    recorded = rep.lock.price
    now = rep.price or {}
    today = rep.today.price or {}
    fields = ["tokens_per_s", "pass_s", "binds"]
    rows = []
    if isinstance(recorded.get("expected"), Mapping):  # a lock made under a stack: its expected price too
        was = recorded["expected"]
        again = now.get("expected", {}) if now else {}
        new = today.get("expected", {}) if today else {}
        # tokens/s and batch always, then each other figure of it that moved, by its own name: the whole object
        # was a row reading "changed" in all three columns, the recorded one too (walkthrough 24).
        keys = ["tokens_per_s", "batch"] + [
            k for k in was
            if k not in ("tokens_per_s", "batch", "rests_on", "weakest", "routing")
            and not isinstance(was[k], Mapping | list)
            and ((again and again.get(k) != was[k]) or (new and new.get(k) != was[k]))
        ]
        for key in keys:
            rows.append((f"expected.{key}", was.get(key), again.get(key) if again else None,
                         new.get(key) if new else None))
    for key in rep.lock.compared():
        if key in ("rests_on", "weakest", "expected"):
            continue  # shown as the facts that drifted, by the provenance row, and (expected) field by field above
        if key not in fields and key in rep.lock.compared() and (
            (now and now.get(key) != recorded[key]) or (today and today.get(key) != recorded[key])
        ):
            fields.append(key)
    out: list[tuple[str, Any, Any, Any]] = []
    for f in fields:
        was, again, new = recorded.get(f), now.get(f) if now else None, today.get(f) if today else None
        if isinstance(was, Mapping) and f not in ("tokens_per_s", "pass_s", "binds"):
            # A record priced as an object (a mixture of experts' ``routing``): a row for each of its figures that
            # moved, by name (``routing.distinct``, ``routing.bytes``), not one row reading "changed changed
            # changed" (walkthrough 27).
            figures = [k for k in was if k not in ("description", "note")  # prose: the drifted facts say it
                       and not isinstance(was[k], Mapping | list) and (
                (isinstance(again, Mapping) and again.get(k) != was[k])
                or (isinstance(new, Mapping) and new.get(k) != was[k]))]
            out += [(f"{f}.{k}", was[k], again.get(k) if isinstance(again, Mapping) else None,
                     new.get(k) if isinstance(new, Mapping) else None) for k in figures]
            continue
        out.append((f, was, again, new))
    return out[:3] + rows + out[3:]


def stale_pinned_apart(rep: Reproduction) -> tuple[str, ...]:
    """Of ``rep.stale_stack`` (the stack facts, by lock path, that no longer follow from the stack's runs: a re-fit
    of today's ``facts/stacks/S.toml``), those the lock pinned with a value other than today's (or did not pin):
    the pinned column rests on the others as today's does, on these not (slip 40: the line spoke of today's column
    alone and the reader could not tell whether the lock's own stack was stale), or fitted from other runs
    (:func:`passprice.fits.pinned_apart`). Empty when the lock pinned each as today's file holds it, or without
    stale facts."""
    from passprice.fits import pinned_apart

    return pinned_apart(rep.lock.facts, rep.today.facts, rep.stale_stack)[0]


def model_commit(root: Root, digest: str) -> tuple[tuple[str, str] | None, str | None]:
    """The commit of ``root``'s git history whose code is the pricing model ``digest`` (``sha256:…``): the oldest
    commit that wrote that digest into a lock file under ``locks/`` (``git log -S DIGEST -- locks/``, as
    :func:`passprice.gitread.pickaxe` finds it: the text as committed, not what a ``textconv`` driver of the
    repository's makes of it, which git ran on every version of every lock, a second apiece for a slow one
    (attack70); each blob read once, none over 4 MiB: git's own ``-S`` read a 256 MiB lock of zeros changed in 4
    commits, a 448 KB ``.git``, 7.1 s, git79); a lock or
    ``lock --update`` is committed with the code that ran it), as its 12-digit hash and its date (YYYY-MM-DD).
    ``None`` when ``root`` is no git work tree, no lock of its history recorded the digest, or git fails or runs
    past :data:`passprice.locks.HISTORY_SEARCH_S`. Returned with what the search did not read (``not searched:``
    and git's line when git was stopped, :class:`passprice.gitread.GitFailed`: a git that said nothing for
    :func:`passprice.gitread.quiet_bound`'s seconds dropped the hint silently, ``tests/test_bound111.py``)
    (:meth:`passprice.gitread.Pickaxe.cut`: not found in what was read, or an older commit than the one found left
    unread; ``None`` when it read all it needed; git86: a search cut by its cap answered as if it had read all). A
    renamed lock's file is not followed (``--no-renames``), as ``git log -S`` with its renames did not need to: a
    rename adds only commits after the one that wrote the digest, so the oldest is the same (git86).
    Walkthrough 29: a lock written out of an older commit (``git show C:LOCK > old.lock.toml``) read "pricing model
    changed (d229a791916f → dd1e970c504f)", and the README's advice, a checkout of each candidate commit until one
    says ``unchanged``, was the only way to its code. Raises nothing."""
    import subprocess

    from passprice.gitread import GitFailed, pickaxe
    from passprice.locks import HISTORY_SEARCH_S

    if root.embedded or not digest.startswith("sha256:"):
        return None, None
    try:
        search = pickaxe(root.path, digest, "locks/", timeout=HISTORY_SEARCH_S)
    except GitFailed as e:  # a git stopped (gitread.quiet_bound), blocked or not started: said, not dropped silently
        return None, f"not searched: {e}"
    except (InputError, OSError, subprocess.CalledProcessError):
        return None, None
    if not search.found:
        return None, search.cut()
    commit, date, _ = search.found[0]
    return (commit[:12], date), search.cut(commit)


#: The most bytes of a commit's ``requirements.txt`` :func:`requirement_at` reads (``passprice init`` writes some 460).
MAX_REQUIREMENTS_BYTES = 1 << 20


def requirement_at(root: Root, commit: str) -> str | None:
    """The line of ``requirements.txt`` at ``commit`` of ``root``'s git history that installs passprice (its first
    line that is neither blank nor a comment), as :func:`passprice.schema.shown_value` shows it: what a registry of
    one's own (``passprice init``), which holds no passprice, ran its locks with. ``None`` when the commit holds no
    such file, one over :data:`MAX_REQUIREMENTS_BYTES`, or git fails (the file's size is asked first: a 1 GiB
    requirements.txt of the lock's commit, a 1.3 MB pack, was read whole, 16.4 s and 4.2 GB, attack71). Raises
    nothing."""
    import subprocess

    from passprice.gitread import read_blobs, run_git
    from passprice.schema import shown_value

    if root.embedded:
        return None
    name = f"{commit}:requirements.txt"
    try:
        sized = run_git(root.path, ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                        f"{name}\n".encode())
        blob, kind, size = ([*sized.decode("ascii", "replace").split(), "", "", ""])[:3]
        if kind != "blob" or not size.isdigit() or int(size) > MAX_REQUIREMENTS_BYTES:
            return None
        said = read_blobs(root.path, {blob: int(size)}).get(blob)  # sized above: read by id (left54)
    except (InputError, OSError, subprocess.CalledProcessError):
        return None
    if said is None:
        return None
    for line in said.decode("utf-8", "replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            line = line.strip()
            return line if line.isprintable() and len(line) <= 300 else shown_value(line)
    return None


def runs_here(requirement: str | None) -> bool:
    """Whether ``requirement`` (a requirements.txt line, :func:`requirement_at`) installs the running passprice: it
    is the line ``passprice init`` writes for it (:func:`passprice.scaffold.installed_requirement`) and pins its code
    (a commit, ``git+URL@COMMIT``, or an archive's URL), not a folder whose contents may have moved since. Raises
    nothing."""
    if requirement is None:
        return False
    from passprice.scaffold import installed_requirement

    mine = installed_requirement()
    if mine.placeholder or mine.line != requirement.strip():
        return False
    return mine.origin in ("vcs", "archive") or "@" in mine.line.split(" @ ", 1)[-1]


def unknown_writer(rep: Reproduction, commit: tuple[str, str], requirement: str) -> str:
    """After "the lock's code is", where the passprice the registry's requirements.txt named at ``commit`` (the
    line ``requirement``) is the running one (:func:`runs_here`), whose pricing model is not the lock's: the lock's
    writer is unknown, and what the user can do. tests/test_fix157.py: a lock lagging the running code was sent to
    install that very code in a virtual environment of its own, to reproduce the same digest again."""
    old = rep.lock.info.pricing_model.removeprefix("sha256:")[:12]
    now = rep.pricing_model.removeprefix("sha256:")[:12]
    return (f"unknown: the passprice this registry's requirements.txt named at commit {commit[0]} ({commit[1]}: the "
            f"oldest commit whose locks record {old}), `{requirement}`, is this passprice, whose pricing model is "
            f"{now}, not the lock's {old}: the lock was written by another passprice (one installed otherwise, "
            "or its digest edited); install the passprice whose locks record it, if you know it, or re-lock it with "
            "this one and review the change")


def model_code(rep: Reproduction, commit: tuple[str, str], requirement: str | None) -> str:
    """Where the code of a lock whose pricing model changed is, after "the lock's code is": commit ``commit``'s own
    code in a checkout of passprice (``rep.holds_code``), a work tree of its own to run it in; in a registry of one's
    own, which holds no passprice, the passprice its ``requirements.txt`` named at that commit (``requirement``, the
    line, when it reads), installed in a virtual environment of its own. Walkthrough 33: a registry of one's own, a
    month and an upgrade after its lock, was told to `git worktree add` a commit that holds no code, where the
    README says ``reproduce`` names the requirements.txt line."""
    digest = rep.lock.info.pricing_model.removeprefix("sha256:")[:12]
    why = f"{commit[1]}: the oldest commit whose locks record {digest}"
    if rep.holds_code:
        return (f"commit {commit[0]}'s ({why}): run it in a work tree of its own, `git worktree add --detach "
                f"../at-lock {commit[0]}`")
    if requirement is not None and runs_here(requirement):
        return unknown_writer(rep, commit, requirement)
    said = f", `{requirement}`" if requirement else ""
    return (f"the passprice this registry's requirements.txt named at commit {commit[0]} ({why}){said}: install it "
            f"in a virtual environment of its own (`git show {commit[0]}:requirements.txt > at-lock.txt`, `pip "
            "install -r at-lock.txt`) and run its `passprice reproduce` here")


def reproduction_text(
    rep: Reproduction, shown: str, older: str | None = None, model_note: str = "",
    commit: tuple[str, str] | None = None, requirement: str | None = None, cut: str | None = None,
) -> str:
    """A reproduction for people: the lock, whether it reproduces and why, which inputs changed since, the recorded,
    reproduced and today's figures side by side, and the first term that moved. ``model_note`` follows an unchanged
    pricing model (:func:`passprice.pins.checkout_note`: the checkout's code is not the running passprice's);
    ``commit`` (:func:`model_commit`: the commit whose code is the lock's pricing model) follows a changed one, with
    ``requirement`` (:func:`requirement_at`) in a registry of one's own (:func:`model_code`), and ``cut`` (what
    :func:`model_commit`'s search did not read, git86), said on the pricing model line whether or not a commit was
    found: a search cut by its cap is not "no commit recorded it"."""
    from passprice.tables import text_table

    lock = rep.lock
    locks = f"{lock.kind} lock of serving {lock.info.serving}" if lock.info.serving else f"{lock.kind} lock"
    verdict = rep.verdict(commit=commit, cut=cut, requirement=requirement)
    if rep.equals and rep.price is not None:
        verdict += (
            f": {rep.price['tokens_per_s']!r} tokens/s at batch {rep.price['batch']}, binds on {rep.price['binds']}, "
            f"from its {len(lock.facts)} pinned facts"
        )
    lines = [f"{lock.name} ({shown}): {locks}, lock format {lock.info.format}", f"  {verdict}"]
    from passprice.locks import expected_line

    expected = expected_line(lock.price)
    if expected is not None:
        lines.append(f"  recorded {expected}")
    rests = sorted(p for p in lock.rests_on if p in lock.facts)
    others = sorted(p for p in lock.facts if p not in rests)
    lines.append(f"  rests on {len(rests)} of its {len(lock.facts)} pinned facts: {', '.join(rests)}")
    if others:
        lines.append(
            f"  also pinned, not read by this price ({len(others)}): {', '.join(others)} — a lock pins every fact "
            "of the card (its float-matrix rates, tensor.*, only where the price reads them) and every drafting "
            "figure, so it rebuilds the card the price was made on; a change to one the price does not read is no "
            "drift"
        )
    if older:
        lines.append(f"  {older}")
    if lock.info.digest:  # what a published price cites: matched here against the lock it came from (left32)
        lines.append(f"  lock digest {lock.info.digest} (its [lock] digest, verified: what a citation names)")
    today = rep.today
    facts = drift_said(lock, today)
    if today.rewritten:
        facts += "; " + "; ".join(d.describe() for d in today.rewritten) + ": no drift (lock --update re-pins it)"
    unread = [p for p in others if p in today.facts and today.facts[p].digest() != lock.facts[p].digest()]
    if unread:
        # Walkthrough 56: the MI300X's host.* locators rewritten after its lock read "facts  unchanged"; an auditor
        # comparing the lock file with today's card found four of its pinned facts otherwise.
        # Each with what changed: "1 pinned fact … holds otherwise today: streams.rewrite: no drift" read as saying
        # streams.rewrite had no change, its citation changed in the same commit (tests/test_fix190.py).
        from passprice.factparts import change_said

        n = len(unread)
        changed = ", ".join(f"{p} ({change_said(lock.facts[p], today.facts[p]) or 'written otherwise'})"
                            for p in unread[:DRIFT_SHOWN]) + (f" and {n - DRIFT_SHOWN} more" if n > DRIFT_SHOWN else "")
        facts += (f" (of those the price reads); no drift in {n} pinned fact{'s' if n != 1 else ''} changed "
                  f"today that it does not read: {changed}")
    if today.unpinned:
        n = len(today.unpinned)
        unpinned = f"the price now rests on {n} fact{'s' if n != 1 else ''} the lock does not pin: " + "; ".join(
            f"{p}: {f.describe()} ({f.provenance.value})" for p, f in today.unpinned
        )
        facts = unpinned if facts == "unchanged" else f"{facts}; {unpinned}"
    compared = facts
    if today.error is not None:
        facts = f"today's files do not read: {today.error}"
        if today.unreadable:
            facts += " (bad input: not judged; the price above is rebuilt from the lock's pins alone)"
        if rep.checkpoint.error is not None and rep.checkpoint.error in today.error:  # said once, on its own line
            facts = "not compared: today's checkpoint does not read (below)"
            if rep.checkpoint.status == "renamed":  # the line below says where the content went, not the problem
                facts = (f"not compared: checkpoint {rep.checkpoint.ref} does not read today; the pinned content is "
                         f"entry {rep.checkpoint.found} now: name that instead")
                if today.facts:  # compared on that entry (walkthrough 39: they could be, and were not)
                    facts = (f"{compared} (today's card, the serving resolved on entry {rep.checkpoint.found}, which "
                             f"holds the pinned content: checkpoint {rep.checkpoint.ref} does not read today, name "
                             f"{rep.checkpoint.found} instead)")
    serving = "; ".join(today.serving) if today.serving else "unchanged"
    if not today.serving and today.spec is None:  # nothing of today's serving was read to compare
        serving = "not compared (today's files do not read)"
        if rep.checkpoint.status == "renamed" and rep.checkpoint.found is not None and today.error is not None \
                and rep.checkpoint.ref in today.error:
            # walk138: the entry renamed (`git mv` and a new [entry] name) read "today's files do not read" here
            # while the facts line compared on the entry holding the content: say what to point the serving at
            which = f"serving {lock.info.serving}" if lock.info.serving else "the serving"
            serving = (f"not compared: {which} names checkpoint {rep.checkpoint.ref}, which does not read today; "
                       f"entry {rep.checkpoint.found} holds the pinned content: point the serving at it "
                       f"(checkpoint = \"{rep.checkpoint.found}\" in its file)")
    model = "unchanged" + model_note
    if lock.info.format < LOCK_FORMAT:  # its pricing_model is a placeholder, no digest: nothing to compare with
        model = (f"none pinned (the lock predates pricing-model digests); today's is "
                 f"{rep.pricing_model.removeprefix('sha256:')[:12]}")
    elif rep.model_changed:
        model = f"changed ({lock.info.pricing_model.removeprefix('sha256:')[:12]} → "
        model += f"{rep.pricing_model.removeprefix('sha256:')[:12]})"
        if commit is not None:
            model += (f"; the lock's code is {model_code(rep, commit, requirement)} (README: The price a lock "
                      "recorded, from the code that wrote it)")
        if cut is not None:
            model += (f"; the commit whose locks record {lock.info.pricing_model.removeprefix('sha256:')[:12]}: "
                      f"{cut}")
    lines += [
        "  since the lock:",
        f"    facts          {facts}",
        f"    checkpoint     {rep.checkpoint.describe()}",
        f"    serving        {serving}",
        f"    pricing model  {model}",
    ]
    if today.relabelled:  # moves no number, said apart from the facts (slip round 42: said nowhere)
        lines.insert(-1, f"    relabelled     {'; '.join(today.relabelled)}")
    if today.verdict is not None:
        # Walkthrough 20: a lock whose drifted fact fell below its floor read "reproduces exactly" and nothing else
        # (exit 0), while check failed it: reproduce judges the recorded price, check the lock, and this says both.
        floors = today.verdict
        if floors.holds:
            lines.append(f"    floors         hold (today's weakest provenance is {floors.provenance.value})")
        else:
            parts = "; ".join(f"{o.path} is {o.provenance.value}, below the floor {o.floor.value}"
                              for o in floors.offences)  # fmt: skip
            lines.append(
                f"    floors         BROKEN today: {parts} — the recorded price still follows from the pins, but "
                "the lock no longer holds (`passprice check` fails it)"
            )
    if today.price is not None and today.facts:
        # Walkthrough 20: today's column of a lock whose card's bandwidth moved was priced on stream shares derived
        # from the old bandwidth, unmarked (price and diff say so; reproduce did not).
        from passprice.stale import stale_rested_on

        stale = stale_rested_on(today.facts, today.price.get("rests_on", {}))
        if stale:
            lines.append(f"    stale          {stale.line()} (today's inputs column rests on them)")
    if rep.stale_stack and lock.stack is not None:
        # The re-fit checks today's stack file (slip 40): whether the lock pinned those facts as it holds them says
        # whether the pinned column rests on the stale fit too.
        apart = stale_pinned_apart(rep)
        from passprice.fits import pinned_apart

        runs = pinned_apart(rep.lock.facts, rep.today.facts, rep.stale_stack)[1]
        pinned = ("and so does the pinned column (the lock pinned them as they are)" if not apart else
                  f"the lock pinned {len(apart)} of them otherwise ({', '.join(apart)}"
                  f"{'; ' + runs if runs else ''}), which this does not re-fit")
        lines.append(f"    stale          {', '.join(rep.stale_stack)} no longer the fit of stack {lock.stack.name}'s "
                     "runs (a run, or a card, checkpoint or routing record they price, changed): today's expected "
                     f"column rests on them as facts/stacks/{lock.stack.name}.toml holds them today, {pinned}; re-fit "
                     f"with `passprice calibrate --stack {lock.stack.name}`")
    if rep.price is not None and "refusal" in rep.price:
        lines.append(f"  the pinned inputs are refused today: {rep.price.get('message', rep.price['refusal'])}")
    if today.refusal is not None:
        lines.append(f"  today's inputs are refused: {today.refusal.get('message', today.refusal.get('refusal'))}")
    rows = [
        [field, _figure(recorded), _figure(now), _figure(now_today)]
        for field, recorded, now, now_today in side_by_side(rep)
    ]
    lines += ["", text_table(["field", "recorded", "reproduced (pinned inputs)", "today's inputs"], rows)]
    if rep.first_moved is not None:
        lines.append(f"  first term that moved (pinned inputs, today's code): {rep.first_moved}")
    if today.price is not None:
        first, unguaranteed = moved_today(lock.price, today.price, lock.compared())
        if first is not None:
            change = ""
            if isinstance(lock.price.get("tokens_per_s"), float) and lock.price["tokens_per_s"]:
                rel = today.price["tokens_per_s"] / lock.price["tokens_per_s"] - 1.0
                change = f"; tokens/s {100.0 * rel:+.4g} %" + expected_move(lock.price, today.price)
            lines.append(f"  first term that moved with today's inputs: {first}{change}")
        if unguaranteed:
            lines.append(f"  {unguaranteed_line(lock.price, today.price, unguaranteed)}")
    single = len(rep.alone) == 1 and today.price is not None and rep.alone[0].price == today.price
    if rep.alone and not single:  # one drifted fact that alone gives today's price says nothing new
        base = rep.alone_base
        against = "" if rep.equals or base is lock.price else ", against the reproduced column: today's code"
        # Walkthrough 28: a first-format lock whose citations were all rewritten read ten lines "X: tokens/s
        # unchanged", one a fact whose figure and provenance are the pinned ones: said once, naming them (below); a
        # group of such facts alone is no move to group either.
        quiet = cited_only(today.drift)
        joint = [g for g in rep.joint if not set(g.paths) <= set(quiet)]
        together = ((", or it with the facts derived from it" if joint else "")
                    + (", or the routing record's facts at once" if rep.routing is not None else ""))
        lines.append(f"  each drifted fact alone (the pinned inputs with only it as today's{together}{against}):")
        # A fact and the facts derived from it one entry, and the routing record's facts one entry, each in the place
        # of the first (left49; walkthrough 106: the group's move as diff words it, grouped_moves)
        said = grouped_moves(
            ((a.path, a.describe(base, lock.compared()).removeprefix(f"{a.path}: ")) for a in rep.alone),
            ((g.inputs, g.derived, g.describe(base, lock.compared()).split(": ", 1)[1]) for g in joint),
            (rep.routing.paths, rep.routing.describe()) if rep.routing is not None else None)
        same = [path for path, line in said if path in quiet and line == f"{path}: tokens/s unchanged"]
        lines += [f"    {line}" for path, line in said if path not in same]
        if len(same) > 1:
            kinds = rewrite_kinds(d for d in today.drift if d.path in same)
            lines.append(f"    {', '.join(same)}: tokens/s unchanged (each its {kinds} alone changed: "
                         "the figure and provenance are the pinned ones)")
        elif same:
            lines.append(f"    {same[0]}: tokens/s unchanged")
    return "\n".join(lines)


#: The most drifted facts the ``facts`` line of ``reproduce`` describes (:func:`drift_said`); the rest are counted.
DRIFT_SHOWN = 5


def drift_said(lock: Lock, today: Today) -> str:
    """The ``facts`` line's drift: ``unchanged``, or ``N drifted: PATH: PINNED → TODAY; …`` (:meth:`Drift.describe`),
    a serving re-pointed to another routing record (:func:`rerouted_today`) saying that record's facts as the record
    as a whole, ``routing record uniform → gpt-oss-120b-chat as a whole (the serving re-pointed): hot_experts: 1
    (assumed) → 0.25 (measured), …``, the other drifted facts counted apart. Left50: walk56's re-pointing read ``2
    drifted: routing.hot_experts: …; routing.hot_share: …``, the pair of facts as if the locked record had drifted
    (``price`` says "serving differs", walkthrough 51; the review and the alone lines say the record as a whole,
    left48, left49). Raises nothing."""
    rerouted = rerouted_today(lock, today)
    routed = [d for d in today.drift if rerouted is not None and d.path.startswith("routing.")]
    rest = [d for d in today.drift if d not in routed]
    said = []
    if rest:
        # Each briefly, the first DRIFT_SHOWN, the rest counted: 9 facts whose values were the pinned ones, their
        # citations moved, read one line of 1,344 characters (tests/test_fix54w.py)
        kept = all(d.kept_value for d in rest)
        more = len(rest) - DRIFT_SHOWN
        said.append(f"{len(rest)} drifted{', every value as pinned' if kept else ''}: "
                    + "; ".join(d.brief("" if kept else " as pinned") for d in rest[:DRIFT_SHOWN])
                    + (f"; and {more} more (reproduce --json's facts_drifted lists each)" if more > 0 else ""))
    if routed and rerouted is not None:
        said.append(f"routing record {rerouted[0]} → {rerouted[1]} as a whole (the serving re-pointed): "
                    + "; ".join(d.describe().removeprefix("routing.") for d in routed))
    return "; ".join(said) or "unchanged"


def rewrite_kinds(drift: Iterable[Drift]) -> str:
    """What the facts of ``drift`` (each with its pinned figure and provenance) had rewritten, for the line that
    names them together: each part any of them had (:func:`rewritten_parts`), in :data:`passprice.factparts.PARTS`'
    order, the last after ``or`` (``citation``, ``citation or note``, ``citation, note or derivation``; walkthrough
    31; left52: ``citation or note`` whichever of the two it was); ``as written`` when none differs. Raises
    nothing."""
    from passprice.factparts import PARTS

    parts: set[str] = set()
    for d in drift:
        if d.today is not None:
            parts.update(rewritten_parts(d.pinned, d.today))
    named = [part for part in PARTS if part in parts]
    if not named:
        return "as written"
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"


def cited_only(drift: Iterable[Drift]) -> set[str]:
    """The paths of ``drift`` whose fact today has the pinned figure, unit and provenance, only its citation, note or
    derivation rewritten (:meth:`Drift.describe`'s ``(citation changed)`` …, :func:`rewrite_said`): alone it cannot
    move a price. Raises nothing."""
    out = set()
    for d in drift:
        if d.today is not None and not same_quantity(d.pinned, d.today) and (
            d.pinned.describe(), d.pinned.provenance) == (d.today.describe(), d.today.provenance):
            out.add(d.path)
    return out


def reproduction_json(
    rep: Reproduction, older: str | None = None, commit: tuple[str, str] | None = None,
    requirement: str | None = None, cut: str | None = None,
) -> dict[str, Any]:
    """A reproduction for ``--json``. ``pricing_model.commit`` is ``commit`` (:func:`model_commit`: the commit whose
    code wrote the lock's pricing model, found only when the model changed) as ``{"hash": 12 hex digits, "date":
    "YYYY-MM-DD"}``, or ``None``: the text's "the lock's code is commit C's"; in a registry of one's own (no
    ``src/passprice``) it also holds ``"requirement"``, the requirements.txt line at that commit
    (:func:`requirement_at`; ``None`` when it does not read). ``pricing_model.commit_search_cut`` is ``cut``
    (:func:`model_commit`'s: what its search did not read, git86), ``None`` when it read all it needed or did not
    run. Raises nothing."""
    today = rep.today
    return {
        "lock": rep.lock.name,
        "lock_digest": rep.lock.info.digest or None,
        "serving": rep.lock.info.serving,
        "format": rep.lock.info.format,
        "older_format": older,
        "equals": rep.equals,
        "reproduction": rep.verdict(commit=commit, cut=cut, requirement=requirement),
        "changed": list(rep.changes()),
        "pricing_model": {
            "recorded": rep.lock.info.pricing_model,
            "now": rep.pricing_model,
            "changed": rep.model_changed,
            "commit": None if commit is None else {"hash": commit[0], "date": commit[1]} if rep.holds_code else {
                "hash": commit[0], "date": commit[1], "requirement": requirement},
            "commit_search_cut": cut,
        },
        # the pinned header's file and sha256 are the lock's own ([checkpoint]); the object keeps its keys
        "checkpoint": attrs.asdict(rep.checkpoint, filter=lambda a, _: a.name not in ("header_file",
                                                                                        "header_sha256", "never_here")),
        "facts_drifted": [
            {"path": d.path, "pinned": d.pinned.to_entry(), "today": d.today.to_entry() if d.today else None,
             "source_changed": d.source_json()}
            for d in today.drift
        ],
        "facts_rewritten": [
            {"path": d.path, "pinned": d.pinned.to_entry(), "today": d.today.to_entry() if d.today else None}
            for d in today.rewritten
        ],
        "facts_alone": [
            {"path": a.path, "price": a.price, "first_moved": a.first_moved(rep.alone_base, rep.lock.compared())}
            for a in rep.alone
        ],
        "facts_grouped": [
            {"inputs": list(g.inputs), "derived": list(g.derived), "price": g.price,
             "first_moved": Alone(grouped_name(g.inputs, g.derived), g.price).first_moved(rep.alone_base,
                                                                                        rep.lock.compared())}
            for g in rep.joint
        ],
        "facts_routing": rep.routing.to_json() if rep.routing is not None else None,
        "unpinned": [{"path": p, "today": f.to_entry()} for p, f in today.unpinned],
        "stale_stack": list(rep.stale_stack),
        "stale_stack_pinned_apart": list(stale_pinned_apart(rep)),
        "serving_changed": list(today.serving),
        "serving_differences": [dict(d) for d in today.differences],
        "relabelled": list(today.relabelled),
        "floors": today.verdict.to_json() if today.verdict is not None else None,
        "moved": [{"field": m.field, "recorded": m.recorded, "now": m.now} for m in rep.moved],
        "first_moved": rep.first_moved,
        "price": rep.price,
        "today": today.price or today.refusal or ({"error": today.error} if today.error else None),
    }
