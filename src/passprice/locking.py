"""Writing a lock is a decision about what it locks, and a lock its own floors refuse is never written.

``passprice lock`` prices a serving and writes a lock pinning everything the price is a function of
(:func:`passprice.locks.make_lock`). What the lock then guards is decided here, in one place: its name (``--name``,
else the stem of ``NAME.lock.toml``, else the serving's), the registered serving it locks (the SERVING named, when no
option overrides it; none for a serving changed by options or priced from ``--checkpoint``/``--card``), and, for
``--update``, the lock's own name, kind, serving, policy and stack kept while its facts, checkpoint content, serving
and code are today's. A lock whose price breaches its own floors is refused before anything is written
(:class:`LockNotWritten`); the floors a ``--force`` or ``--update`` loosens against the lock it replaces are returned
for the command to print.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.errors import InputError
from passprice.facts import Provenance
from passprice.files import is_there, shown
from passprice.locks import FloorChange, Lock, Policy, Verdict
from passprice.registry import LOCK_SUFFIX, Root, name_problem, read_only
from passprice.schema import ONE_LINE
from passprice.servings import ServingSpec

if TYPE_CHECKING:
    from passprice.stackreach import FitCheck
    from passprice.stale import Stale

#: A lock's name: a file stem in ``locks/`` (letters, digits, ``.``, ``_``, ``-``; first a letter or digit).
LOCK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: The longest lock name: ``NAME.lock.toml`` is at most 255 bytes, the longest file name of ext4, APFS and NTFS (the
#: lock schema's ``lock.name`` ``maxLength`` too). ``lock --name`` of 5,000 characters wrote a lock whose name no
#: file can carry and printed it whole on every line naming it (attack round 48).
MAX_LOCK_NAME = 245


def absolute_path(path: Path) -> str:
    """``path`` (a lock file's, as ``-o FILE`` gave it) made absolute with its ``.`` and ``..`` parts folded, the
    links it names kept: ``lock --json``'s ``"absolute_path"`` (leftovers 29b: ``-o ../x/../locks/a.lock.toml``
    gave ``/work/../x/../locks/a.lock.toml``). A ``..`` is folded by dropping the part before it unless that part is
    a symbolic link, which is resolved first (``link/..`` is the folder above the link's target, as the system
    reads it, not the folder holding the link); no other link is resolved. Raises nothing (an unreadable part is
    taken as no link)."""
    given = Path(os.getcwd(), path) if not path.is_absolute() else path
    out = Path(given.anchor)
    for part in given.parts[1:]:
        if part == "..":
            try:
                linked = out.is_symlink()
                out = out.resolve().parent if linked else out.parent
            except (OSError, RuntimeError):
                out = out.parent
        elif part != ".":
            out = out / part
    return str(out)


def written_as(root: Root, output: Path, given: bool, named: str | None) -> str:
    """How ``lock`` names the lock it wrote, one rule for every form of the command: ``output`` as the user gave it
    (``-o FILE``, ``given``), else (the default ``locks/NAME.lock.toml``, made from the resolved root) relative to
    the working folder when it lies below it, else as the user would give it (:func:`passprice.registry.as_given`:
    ``../locks/…`` from a folder of the root, below ``named``, ``--root DIR`` as typed, when that is relative),
    else absolute. Leftovers 28c: ``lock SERVING`` printed ``-> /abs/…/locks/NAME.lock.toml`` where ``lock --update
    -o FILE`` printed ``-> FILE``. Raises nothing."""
    from passprice.registry import as_given

    if given:
        return shown(output)
    try:
        return shown(output.relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):
        return shown(as_given([str(output)], root, named)[0])


def default_output(root: Root, stem: str) -> Path:
    """Where a lock is written when no ``-o FILE`` is given: ``locks/STEM.lock.toml`` in the root (``stem``: the
    lock's ``--name``, else the serving's stem), the root's ``locks/`` made when missing (a ``-o FILE``'s folder is
    never made). Raises :class:`InputError` for the embedded default (read-only) or a folder that cannot be made."""
    from passprice.files import make_folder

    if root.embedded:
        raise InputError(
            f"{read_only(root)}; give -o FILE, or run in a registry of your own "
            "(passprice init DIR)"
        )
    make_folder(root.locks)
    return root.locks / f"{stem}.lock.toml"


def require_no_lock_as_serving(serving: str | None, update: bool) -> None:
    """Refuse ``lock --update LOCK``, a lock file given where the serving goes: the lock updated is
    ``locks/SERVING.lock.toml`` (the serving's stem), so ``lock --update locks/x.lock.toml`` said
    "locks/x.lock.lock.toml: no lock to update", naming a file nobody gave (attack93). Without ``--update`` the
    serving's reading says it is a lock file already. Raises :class:`InputError` naming ``serving`` and the command
    that re-locks it (``--update NAME`` for a bare ``NAME.lock.toml``, else ``--update -o FILE``)."""
    if not update or serving is None or not serving.endswith(LOCK_SUFFIX):
        return
    from passprice.files import shell_word

    # a bare NAME.lock.toml is the lock of locks/ that `lock --update NAME` re-locks; a path, the file -o names
    way = (f"--update {shell_word(serving.removesuffix(LOCK_SUFFIX))}" if "/" not in serving and os.sep not in serving
           else f"--update -o {shell_word(serving)}")
    raise InputError(f"{serving}: a lock file where the serving goes: `lock --update SERVING` re-locks "
                     f"locks/SERVING.lock.toml; to re-lock this file, `passprice lock {way}`")


def require_place(root: Root, output: Path, root_named: str | None = None) -> None:
    """A lock written inside ``root`` is one ``check``, ``price``, ``diff`` and ``reproduce`` read: a file
    ``NAME.lock.toml`` in the root's ``locks/`` (links and ``..`` resolved). ``lock r1-qwen7b-h200 --force -o
    locks/x.lock`` (or ``-o registry/servings/y.lock.toml``) printed ``locked …`` and wrote a lock inside the
    registry that no command ever reads, its floors guarding nothing. A lock written outside the root is the user's
    own. The place judged is where the write lands: ``-o locks/x.lock.toml``, a link to
    ``registry/servings/R1.toml``, wrote the lock over the serving through the link, exit 0 (attack round 25).
    Outside the root, a lock is never written over a file passprice reads (:func:`passprice.registry.read_elsewhere`:
    its own package or JSON Schemas; ``lock R1 --root COPY -o CHECKOUT/schema/card.schema.json --force`` replaced
    the schema every card is validated against, attack round 26).

    The embedded root of an installed passprice lies in its own package (``passprice/_data``): ``lock R1 -o
    …/site-packages/passprice/_data/locks/x.lock.toml`` run outside a registry wrote into the installed package,
    exit 0, where ``lock R1`` there says the embedded facts are read-only and ``sweep -o`` into it is refused (attack
    round 51); so a place inside the embedded root is judged as one outside is.

    A file in ``locks/`` whose name is not ``NAME.lock.toml`` is refused for its name, saying what its suffix says
    (``-o locks/l.json``: ``ends in .json (a name that says JSON)``; walk95: it was told to write the lock in
    ``locks/``, where it was); a file elsewhere in the registry whose suffix names another format is refused for
    both (``-o l.json`` at the checkout's top, as ``require_suffix`` refuses it outside). A relative ``-o`` is
    named with the file it resolves to where that adds something (:func:`_from_cwd`; ``root_named``: how ``--root``
    was typed).

    Raises :class:`InputError` naming the file and where locks are read, before anything is priced."""
    from passprice.files import target
    from passprice.registry import read_elsewhere, within

    inside = within(root, output)
    if not inside or root.embedded:
        link = f" (a link to {shown(target(output))})" if os.path.islink(output) else ""
        why = read_elsewhere(root, os.path.normcase(os.path.realpath(target(output))))
        if why is not None:
            raise InputError(f"{shown(output)}{link}: -o would {why}: write the lock elsewhere")
    if not inside:
        return
    end = os.path.realpath(target(output))
    folder = os.path.dirname(end)
    name = os.path.basename(end)
    well_named = name.endswith(".lock.toml") and len(name) > len(".lock.toml")
    in_locks = folder == os.path.realpath(root.locks)
    if in_locks and well_named:
        return
    said = _suffix_says(output)
    if in_locks:  # walk95: `-o locks/l.json` was told to write the lock in locks/, where it was
        raise InputError(
            f"{shown(output)}{_from_cwd(output, root, root_named)}: locks are read from {shown(root.locks)}/"
            f"NAME.lock.toml only, and this name {said or 'does not end in .lock.toml'}: a lock written so would "
            "guard nothing (check, price and diff never read it); name it NAME.lock.toml"
        )
    named = f"; and its name {said}: name it NAME.lock.toml" if said else ""
    raise InputError(
        f"{shown(output)}{_from_cwd(output, root, root_named)}: inside the registry, locks are read from "
        f"{shown(root.locks)}/NAME.lock.toml only: a lock written here would guard nothing (check, price and diff "
        f"never read it); write it there (the default), or outside the registry{named}"
    )


def _suffix_says(output: Path) -> str:
    """What ``output``'s suffix says when it names a format passprice writes other than a lock's TOML
    (:data:`passprice.files.SUFFIX_FORMATS`, as :func:`require_suffix` refuses it outside the registry): ``ends in
    .json (a name that says JSON)``; else ``""``. Raises nothing."""
    from passprice.files import SUFFIX_FORMATS, name_suffix

    suffix = name_suffix(output)
    if suffix not in SUFFIX_FORMATS or suffix == ".toml":
        return ""
    return f"ends in {suffix} (a name that says {SUFFIX_FORMATS[suffix]})"


def _from_cwd(output: Path, root: Root, named: str | None = None) -> str:
    """`` (relative to the working folder: PATH)`` after ``output`` (``-o FILE``) in a line about it: ``-o`` is
    relative to the working folder, as pip-compile's and check-jsonschema's are, never to ``--root``; said where it
    adds something. ``""`` for an absolute ``output``, and for one whose absolute path the line's paths are rewritten
    to as the user would give it (:func:`passprice.registry.as_given`, ``named`` how ``--root`` was typed) names the
    same file as typed: ``lock R1 -o l.json`` at the checkout's top said ``l.json (relative to the working folder:
    l.json)`` (left98). Raises nothing."""
    from passprice.registry import as_given

    if output.is_absolute():
        return ""
    full = os.path.abspath(output)
    rendered = as_given([full], root, named)[0]
    if os.path.normpath(rendered) == os.path.normpath(output):
        return ""
    return f" (relative to the working folder: {shown(Path(full))})"


def unread_note(root: Root, output: Path, name: str, shown_as: str, named: str | None = None) -> str | None:
    """The note ``lock`` gives after writing lock ``name`` to ``output`` (shown as ``shown_as``) outside ``root``'s
    folder, which ``check``, ``price``, ``diff`` and ``reproduce NAME`` of that registry never read; ``None`` inside it
    (:func:`require_place` has then made it the root's ``locks/``) or for the embedded root (read-only: ``lock`` says
    so there). ``-o`` is relative to the working folder, never to ``--root`` (pip-compile's ``-o`` and
    check-jsonschema's paths are too): walkthrough 42 ran ``passprice --root COPY lock … -o locks/x.lock.toml`` in a
    checkout and wrote the checkout's ``locks/``, exit 0, without a word (issue 13, session 33). ``named``: how
    ``--root`` was typed (:func:`_from_cwd`). Raises :class:`InputError` as :func:`passprice.registry.within` does."""
    from passprice.registry import within

    if root.embedded or within(root, output):
        return None
    return (f"lock {name} was written to {shown_as}{_from_cwd(output, root, named)}, outside registry "
            f"{shown(root.path)}: its check, price and diff read {shown(root.locks)}/ only and will not see it "
            f"(without -o, lock writes {shown(root.locks)}/{name}.lock.toml)")


def require_registered_stack(root: Root, ref: str, name: str) -> None:
    """A lock pins its stack by name alone (``[stack] name``), and ``price --lock``, ``check`` and ``reproduce`` read
    the stack of that name from ``root``'s ``facts/stacks/``: a stack given to ``lock --stack`` as a path
    (``--stack /elsewhere/my.stack.toml``, which ``price --stack`` reads) is locked only when it is that file.
    ``lock R1 --stack /elsewhere/my.stack.toml`` wrote the lock, then exited 2 ("stack 'my.stack': not found in
    facts/stacks"), leaving a lock that ``check`` failed and ``price --lock`` refused (attack round 51). Judged
    before anything is written. Raises :class:`InputError` naming the file given and where stacks are read."""
    from passprice.stacks import stack_path

    given = stack_path(root, ref)
    try:
        registered = stack_path(root, name)
    except InputError:
        registered = None
    try:
        if registered is not None and os.path.samefile(given, registered):
            return
    except OSError:  # removed since it was read: not the registered file
        pass
    raise InputError(
        f"--stack {shown(ref)}: not a stack of {shown(root.stacks)}: a lock pins its stack by name ({name}) and "
        f"price --lock, check and reproduce read it from {shown(root.stacks)}/{name}.toml; copy the file there, or "
        "price under it without a lock (price --stack)"
    )


def require_unique_name(root: Root, output: Path, lock: Lock, update: bool, served: str | None,
                        old: Lock | None = None) -> None:
    """Refuse to write ``lock`` (about to be written to ``output``) into ``root/locks`` when another current-format lock
    file of the folder carries its ``[lock]`` name and pins something else: ``check`` refuses two such files
    (:func:`passprice.check.shared_name_lines`), so the write would leave a registry ``check`` fails. Attack80:
    ``lock R1 --name R1 -o locks/new.lock.toml`` beside ``locks/R1.lock.toml`` pinning an older fact, and ``lock
    --update -o locks/copy.lock.toml`` of a copy of ``locks/R1.lock.toml`` after a fact changed, each wrote its lock
    (exit 0), and ``check`` then failed (exit 2, ``lock.name: 'R1' is also the name of …``).

    Two locks of one name whose ``[lock] digest`` is the same pin the same things (the digest covers every table,
    the name included): such a file is a copy, let by as ``check`` lets it (a warning). The folder is looked over
    once (:func:`passprice.locks.name_holders`: 1,000 locks of other names, or 1,000 copies of one, cost their
    reads). ``update`` and ``served`` (the registered serving ``lock`` locks) shape the way out said.

    ``old``: the lock an ``--update`` replaces. One of the first format, whose name another current-format lock of
    the folder carries, is refused whatever that lock pins: its update is written in today's format, whose name must
    be unique, where a first-format lock's name is the serving it locks, so the two could share it (left58: ``lock
    --update -o locks/old.lock.toml`` on a first-format lock named ``r1-qwen7b-h200`` beside
    ``locks/r1-qwen7b-h200.lock.toml``: exit 0, then ``check`` exit 2). That test looked the folder over a second
    time, before the price was made (left92: one look, here). Raises :class:`InputError` (exit 2) naming ``output``,
    the name and the other file, with the way out (``--update`` keeps a lock's name, so ``lock SERVING --force -o
    FILE``: a lock named after its file), before anything is written. A lock file of the folder that does not
    parse whose ``[lock]`` table's name reads ``name`` line by line, or whose name cannot be told while it holds the
    name quoted (:func:`passprice.locks.name_as_read`), is refused too, naming that file, its problem and what was
    found (left98: it was passed over, the lock written, exit 0; mended, the two shared a name ``check`` refuses;
    left103: one merely quoting the name, in a note, was refused as "may" be of that name)."""
    from passprice.files import shell_word
    from passprice.locks import lock_document, name_holders, unread_problem

    name = lock.info.name
    first = update and old is not None and old.info.format < 2
    digest = None
    unparsed: list[tuple[str, str, str]] = []
    for rel, table in name_holders(root, output, name, unparsed):
        if digest is None:
            digest = lock_document(lock)["lock"]["digest"]
        if not first and table.get("digest") == digest:
            continue  # a copy: check warns of it
        # Its [lock] table read alone holds the name; the file whole may not read (a second [lock] table, a dotted
        # key lock.x before it): said as such, not as a lock that "pins other facts" (attack105). Asked of the
        # file refused for alone.
        problem = unread_problem(root, root.path / rel)
        if problem is not None:
            unparsed.insert(0, (rel, problem, f"its [lock] table's name reads {name!r} (the table read alone)"))
            continue
        if first:
            relock = (f"re-lock it under its file's name (`passprice lock {shell_word(served)} --force -o "
                      f"{shell_word(str(output))}`), or remove it" if served else "remove one")
            raise InputError(
                f"{shown(output)}: lock.name: {name!r} is also the name of {rel}: --update would write this "
                "first-format lock in today's format, whose name must be unique (a first-format lock's name is the "
                "serving it locks, so the two could share it; `passprice check` refuses two current-format locks of "
                f"one name): {relock}; nothing written"
            )
        if update:
            way = (f"--update keeps the name: re-lock this one under its file's name (`passprice lock "
                   f"{shell_word(served)} --force -o {shell_word(str(output))}`), or remove {rel}" if served else
                   "--update keeps the name: remove one of the two")
        else:
            way = f"lock it under another name (--name NAME, or -o locks/NAME.lock.toml), or remove {rel}"
        raise InputError(
            f"{shown(output)}: lock.name: {name!r} is also the name of {rel}, which pins other facts: a lock's name "
            f"must be unique (`passprice check` refuses the two): {way}; nothing written"
        )
    if unparsed:  # left98: passed over, the write left two locks of one name once the other is mended
        rel, problem, found = unparsed[0]
        way = ("fix it or remove it, then --update again" if update else
               "fix it or remove it, or lock this one under another name (--name NAME, or -o locks/NAME.lock.toml)")
        if found.startswith("its [lock] table's name reads"):  # left103: said as found, not "may"
            raise InputError(
                f"{shown(output)}: lock.name: {name!r} is also the name of {rel}, which does not read ({problem}), "
                f"though {found}{'' if found.endswith('(the table read alone)') else ', read line by line'}: a "
                "lock's name must be unique (`passprice check` refuses the "
                f"two once it is mended): {way}; nothing written"
            )
        raise InputError(
            f"{shown(output)}: lock.name: {name!r} may also be the name of {rel}, which does not read ({problem}) "
            f"and whose name cannot be told ({found}): a lock's name must be unique, and which name that file "
            f"gives is not known until it reads: {way}; nothing written"
        )


#: Seconds :func:`names_held` waits for another ``lock`` writing into the same ``locks/`` folder (one holds it for
#: its check of names and its write: well under a second with 1,000 locks there) before it refuses.
NAMES_WAIT_S = 60.0


@contextlib.contextmanager
def names_held(root: Root, output: Path, wait_s: float | None = None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``root/locks`` (the folder itself: no lock file is left in it) while a lock
    about to be written to ``output`` there is checked against the names of the others
    (:func:`require_unique_name`) and written, so that no other ``lock`` writing into the folder checks or writes
    meanwhile: two ``lock`` runs writing two locks of one name that pin different things (``lock R1 --name same -o
    locks/a.lock.toml`` and ``lock R2 --name same -o locks/b.lock.toml``) each checked before either wrote, both
    wrote (exit 0), and ``check`` then refused the pair (left61). The check-then-write of a name is a
    read-modify-write of the folder, closed as ``fact set`` closes its own (:func:`passprice.edit.locked`, the flock
    on the file it rewrites); it is taken inside that one (``lock --update`` holds its file's first), never the
    other way round, so two writers never wait on each other.

    ``output`` outside ``root/locks`` holds nothing (no name of the folder is checked); nor does a file system
    without locks (``flock`` fails with ``ENOLCK``, ``EOPNOTSUPP`` …) or a platform without ``fcntl``: the check
    then goes ahead unheld, as before. The wait is bounded by ``wait_s`` seconds (default :data:`NAMES_WAIT_S`).
    Raises :class:`InputError` naming the folder when another writer holds it past the wait, or it cannot be
    opened; nothing is written then."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    import time

    from passprice.edit import _NO_LOCKS

    folder = root.locks
    try:
        if output.resolve().parent != folder.resolve():
            yield
            return
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, RuntimeError):
        yield  # a folder that does not open: write_lock says what is wrong with the path
        return
    wait = NAMES_WAIT_S if wait_s is None else wait_s
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InputError(f"{shown(folder)}: another lock has been writing into it for {wait:g} s; "
                                     "nothing written, run the lock again") from None
                time.sleep(0.005)
            except OSError as e:
                if e.errno not in _NO_LOCKS:
                    raise InputError(f"{shown(folder)}: cannot lock: {e.strerror or e}") from None
                yield  # a file system without locks
                return
        yield
    finally:
        os.close(descriptor)  # releases the lock


def require_file_name(root: Root, output: Path) -> None:
    """A lock written inside ``root`` is a file every system may hold, whatever the lock's name: ``lock R1 -o
    'locks/a:b.lock.toml' --name ok`` (or ``-o locks/nul.lock.toml --name ok``) wrote a file no clone on Windows
    checks out, where ``-o`` alone is refused by :func:`lock_name` (issue 13's leftovers, session 26). Judged after
    :func:`lock_name`, whose line names the lock. Raises :class:`InputError` naming the file and what Windows refuses
    in its name (:func:`passprice.registry.windows_problem`)."""
    from passprice.files import target
    from passprice.registry import windows_problem, within

    if not within(root, output):
        return
    problem = windows_problem(os.path.basename(os.path.realpath(target(output))))
    if problem is not None:
        raise InputError(f"{shown(output)}: {problem}, where no file of that name can be checked out, and a registry "
                         "is reviewed on every system: give another file")


def require_suffix(output: Path) -> None:
    """A lock outside the registry may take any name (:func:`require_place` judges one inside it) but one whose
    suffix names another format passprice writes (:func:`passprice.files.suffix_format`): ``lock R1 -o l.json``
    wrote TOML into a ``.json`` file, exit 0 (attack round 27). Judged after the refusals that say more (a record, an
    input of the command). Raises :class:`InputError` naming the file and its suffix."""
    from passprice.files import suffix_format

    suffix_format(output, "-o", (".toml",), "a lock (TOML)", "NAME.lock.toml")


def previous(root: Root, output: Path, update: bool, force: bool) -> Lock | None:
    """The lock ``output`` holds now, when it is to be replaced (``update`` or ``force``): its policy is kept
    (``update``) or compared with the new one (``force``). ``None`` when there is none, or (``force`` alone) when
    the file there is no lock that reads. Raises :class:`InputError` for ``update`` with no lock that reads, and for
    a file already there without ``update`` or ``force`` (naming both), before anything is priced."""
    from passprice.files import check_writable, shown
    from passprice.locks import read_lock_in

    if not (update or force) and os.path.lexists(output):
        # What --force could not replace either (a device, a FIFO, a folder, a read-only file) says so first:
        # `lock -o /dev/null` advised `--force`, which then said it replaces regular files only (attack round 44).
        check_writable(output, force=True)
        raise InputError(
            f"{shown(output)}: already exists: `--update` re-locks it with today's facts, checkpoint and code, keeping "
            "its floors; `--force` replaces it, its policy rebuilt from the flags"
        )
    old = None
    if is_there(output) and (update or force):
        try:
            old = read_lock_in(root, output)  # a lock naming another registered stack is refused (left30b)
        except InputError:
            if update:
                raise
    if update and old is None:
        if os.path.lexists(output):  # a folder there read "no lock to update at …" (attack65): say what it is
            check_writable(output, force=True)
        if output.is_absolute():
            raise InputError(f"{shown(output)}: no lock to update (write one without --update)")
        # -o is read from the working folder (pip-compile's convention), not from --root: say where it was looked for.
        raise InputError(f"{shown(output)}: no lock to update at {shown(output.absolute())} (a relative -o is read "
                         "from the working folder, not from --root; write one without --update)")
    return old


def update_base(root: Root, old: Lock) -> ServingSpec:
    """The serving ``--update`` re-locks: the registered serving ``old`` locks, as its file is now, or the lock's
    own embedded serving (:func:`passprice.reproduce.today_spec`). Raises :class:`InputError` when it does not
    read."""
    from passprice.reproduce import today_spec

    return today_spec(root, old)[0]


def lock_name(output: Path, serving: str | None, name: str | None, old: Lock | None = None) -> str:
    """The name a lock written to ``output`` gets: ``name``; else (``--update``) the old lock's; else the stem of
    ``NAME.lock.toml``; else, when no SERVING is named, the file's name less ``.toml`` (``-o out/x.toml`` names a
    lock ``x``, as every record file names its record; ``x.toml`` until session 24, a name the record rule refuses
    wherever a lock is named) or, without that suffix, the file's name; else the serving's stem. A lock is named
    after its file, so that ``reproduce NAME`` and ``check`` agree with it.

    Raises :class:`InputError` when a name taken from a file name is none a file on Windows may have (a device's,
    or one holding ``<>:"\\|?*``: :func:`passprice.registry.windows_problem`) or is not one line of printable text
    (the lock schema's rule for names): ``-o $'a\\nb.lock.toml'`` wrote a lock named "a", newline, "b", printed on
    two lines, which the lock schema's one-line rule then refused to read back."""
    if name is not None:
        return name
    if old is not None:
        return old.name
    if output.name.endswith(".lock.toml"):
        derived, source = output.name.removesuffix(".lock.toml"), output
    elif not serving:
        derived, source = output.name.removesuffix(".toml"), output
    else:
        derived, source = Path(serving).stem, Path(serving)
    # A file's name may be any printable text (é.lock.toml names a lock é); a line break, a control character, a
    # bidi control or an invisible character (schema.ONE_LINE's, U+00AD since attack80) in it is no name (a name not
    # UTF-8 is the command line's to refuse, as for any name it gives).
    if not _ONE_LINE.match(derived) and not any("\udc80" <= ch <= "\udcff" for ch in derived):
        raise InputError(
            f"{shown(source)}: the lock would be named {derived!r} after it, which holds a line break, a control "
            "character, a bidi control or an invisible character: give --name"
        )
    # The rule of every record name (registry.name_problem): U+00AD, U+00A0 or U+E000 passed the one-line rule and
    # named a lock that prints like another (attack round 44).
    problem = None if any("\udc80" <= ch <= "\udcff" for ch in derived) else name_problem(
        derived, fix="give --name", toml_fix="give --name")  # `-o x.toml.toml` would name a lock x.toml
    if problem is not None:
        raise InputError(f"{shown(source)}: the lock would be named after it, and {problem}")
    from passprice.registry import windows_problem

    # -o locks/aux.lock.toml (attack round 45), -o 'locks/a:b.lock.toml' (issue 13's leftovers, session 26): a file
    # no clone on Windows checks out.
    problem = windows_problem(derived)
    if problem is not None:
        raise InputError(f"{shown(source)}: the lock would be named {derived!r} after it, and {problem}, where no file "
                         "of that name can be checked out: give another file")
    return derived


#: What a lock name taken from a file name may hold: one line of printable text (:data:`passprice.schema.ONE_LINE`,
#: the lock schema's rule for its names, ``$`` read as the end of the text).
_ONE_LINE = re.compile(ONE_LINE.removesuffix("$") + r"\Z")


def locked_serving(root: Root, serving: str | None, overridden: bool, old: Lock | None = None) -> str | None:
    """The registered serving a lock locks (priced under it by every command): ``serving`` as registered when no
    option overrides it (``overridden``: some serving option was given); none for an unregistered or overridden
    one. With ``--update`` and no SERVING (``old``: the lock updated), the serving ``old`` locks; a lock of the
    first format named none, and locked the serving of its own name when there is one.

    Raises :class:`InputError` for ``--update`` (``old``) given a SERVING other than the one ``old`` locks: it
    re-locked the file for that serving, under the old lock's name and floors, and the serving it locked was left
    with no lock, without a word."""
    from passprice.enforce import serving_name

    if old is not None and serving is not None and old.info.serving is not None:
        named = serving_name(root, serving) if not overridden else None
        if named != old.info.serving:
            raise InputError(
                f"{shown(old.source or '')}: locks serving {old.info.serving}, not {shown(serving)}: --update re-locks "
                "the serving a lock locks (give no SERVING, or the same); --force makes it a lock of another"
            )
    if old is not None and serving is None:
        from passprice.locks import first_format_serving

        return first_format_serving(root, old)
    if serving is not None and not overridden:
        return serving_name(root, serving)
    return None


def floor_advice(verdict: Verdict, card: str) -> str:
    """What would have to change for the floors of a new lock that refuses its own price (``verdict``, not holding)
    to accept it: each offending fact strengthened to its floor or above, with the ``fact set`` that re-cites a fact
    of ``card`` (the first offence's, when it is the card's), or the facts floored at their own provenance on purpose
    (``--require PATH=PROVENANCE`` each). One clause, no trailing period; ``""`` for a verdict that holds."""
    from passprice.cards import is_card_path

    if verdict.holds:
        return ""
    first = verdict.offences[0]
    names = " and ".join(f"{o.path} to {o.floor.value} or above" for o in verdict.offences)
    how = ""
    if is_card_path(first.path):
        how = (f", e.g. passprice fact set {card} {first.path} --provenance {first.floor.value} --source ID "
               "--locator LOCATOR … in a registry of your own")
    them = "it" if len(verdict.offences) == 1 else "them"
    requires = " ".join(f"--require {o.path}={o.provenance.value}" for o in verdict.offences)
    return (f"for these floors to accept it, strengthen {names} with a citation that backs {them}{how}; or floor "
            f"{them} at {'its' if them == 'it' else 'their'} own provenance on purpose: {requires}")


class LockNotWritten(Exception):
    """A lock whose own price breaches its floors (exit 1): never written. ``str(e)`` is the verdict's line and says
    the file was not written; ``to_json`` gives the verdict's JSON (``{"refusal": "LockFloor", ...}``), the path
    and ``"written": false``. ``shown_as``: the path as ``lock`` names it (:func:`written_as`), set by the command
    line; ``None`` names it as ``output``."""

    name = "LockFloor"

    def __init__(self, verdict: Verdict, output: Path, advice: str = "") -> None:
        super().__init__(f"{verdict.message()}; {output} not written" + (f" ({advice})" if advice else ""))
        self.verdict = verdict
        self.output = output
        self.advice = advice
        self.shown_as: str | None = None

    def __str__(self) -> str:
        """The verdict's line, naming the file not written as :attr:`shown_as` (else ``output``)."""
        path = self.shown_as if self.shown_as is not None else str(self.output)
        return f"{self.verdict.message()}; {path} not written" + (f" ({self.advice})" if self.advice else "")

    def to_json(self) -> dict[str, Any]:
        """The verdict's JSON, the lock file's path (``path`` as :attr:`shown_as` names it, ``absolute_path``) and
        ``"written": false`` (and ``advice``, what to do, for a ``--update`` its kept floors refuse). Leftovers 28d:
        ``path`` was absolute where the refusal's line named it relative to the working folder."""
        path = self.shown_as if self.shown_as is not None else str(self.output)
        out = {**self.verdict.to_json(), "path": path, "absolute_path": absolute_path(self.output), "written": False}
        if self.advice:
            out["advice"] = self.advice
            out["message"] = str(self)
        return out


@attrs.frozen
class Written:
    """A lock written: the ``lock`` and the floors of the lock it replaced that it loosens or removes
    (``loosened``: each a :class:`~passprice.locks.FloorChange` to print as a warning)."""

    lock: Lock
    loosened: tuple[FloorChange, ...] = ()


class LockOnStaleFacts(Exception):
    """A lock whose price rests on derived facts that do not follow from their inputs today (exit 1): never written.
    Walkthrough 106: after ``fact set h200_sxm_141gb memory.bandwidth --value 4.89`` without ``fact recompute``,
    ``lock --update`` wrote 996.1 -> 1,014.8 tokens/s (exit 0) on the streams shares derived from 4.8 TB/s, while
    ``diff`` called that price "not a price to publish", ``audit`` marked it STALE and ``check`` failed. The facts are
    found by the one function ``diff``, ``audit``, ``price`` and ``reproduce`` judge staleness with
    (:func:`passprice.stale.stale_rested_on`) and named in their words (:meth:`passprice.stale.Stale.line`). No
    option writes it anyway: ``check`` fails every lock resting on such a fact, so the lock would be refused by the
    first review. ``shown_as``: the path as ``lock`` names it (:func:`written_as`); ``None`` names ``output``."""

    name = "StaleFacts"

    def __init__(self, lock: str, stale: Stale, fixes: Sequence[str], output: Path, fit: FitCheck | None = None,
                 ) -> None:
        self.lock = lock
        self.stale = stale
        self.fixes = tuple(fixes)
        self.output = output
        #: The lock's serving stack's fit, where it does not follow from today's registry (the stack's facts are
        #: derived from its runs: ``check`` fails each; walkthrough of tests/test_fix179.py: `lock --update` under
        #: an edited stack wrote the lock, exit 0, and `check` then failed 8 problems). ``None`` where it holds.
        self.fit = fit if fit is not None and fit.findings else None
        self.shown_as: str | None = None
        super().__init__(self.message())

    def message(self) -> str:
        """``lock NAME: its price rests on derived facts that do not follow from their inputs, not a price to
        publish: LINE; FIX, then lock again; PATH not written``, LINE the stale facts' (:meth:`Stale.line`) and the
        stack fit's (:meth:`passprice.stackreach.FitCheck.summary`)."""
        path = self.shown_as if self.shown_as is not None else str(self.output)
        lines = [line for line in (self.stale.line(), self.fit.summary() if self.fit is not None else None) if line]
        return (f"lock {self.lock}: its price rests on derived facts that do not follow from their inputs, not a price "
                f"to publish: {'; '.join(lines)}; {'; '.join(self.fixes)}, then lock again; {path} not written")

    def __str__(self) -> str:
        return self.message()

    def to_json(self) -> dict[str, Any]:
        """``{"refusal": "StaleFacts", "message", "lock", "stale" (:meth:`passprice.stale.Stale.to_json`, and each
        finding of the stack's fit with its lock path, ``stack.share.read``), "fix", "path", "absolute_path",
        "written": false}``."""
        path = self.shown_as if self.shown_as is not None else str(self.output)
        stale = self.stale.to_json() + ([{**f.to_json(), "path": f"stack.{f.path}", "value": None}
                                         for f in sorted(self.fit.findings, key=lambda f: f.of_errors)]
                                        if self.fit is not None else [])  # a fact's own findings first
        return {"refusal": self.name, "message": self.message(), "lock": self.lock, "stale": stale,
                "fix": list(self.fixes), "path": path, "absolute_path": absolute_path(self.output), "written": False}


def stale_fixes(stale: Stale, card: str, draft: str | None, routing: str | None) -> list[str]:
    """What writes ``stale``'s facts from today's inputs, one clause a record, in the order first named: ``run
    `passprice fact recompute CARD``` for the card's facts (``--draft`` for a drafting method's, ``draft.*``), ``edit
    routing record NAME's FACTS by hand`` for a routing record's (``routing.*``: ``fact recompute`` takes cards and
    drafting methods only), as ``fact set`` and ``check`` advise (:func:`passprice.check.recompute_hints`). Names are
    one shell word each. Raises nothing."""
    from passprice.files import shell_word

    out: dict[str, list[str]] = {}
    for path in stale.paths():
        if path.startswith("routing."):
            key = f"routing:{routing}"
        elif path.startswith("draft."):
            key = f"`passprice fact recompute {shell_word(draft or '')} --draft`"
        else:
            key = f"`passprice fact recompute {shell_word(card)}`"
        out.setdefault(key, []).append(path)
    return [f"edit routing record {routing}'s {', '.join(paths)} by hand" if key.startswith("routing:")
            else f"run {key}" for key, paths in out.items()]


def write(
    root: Root,
    output: Path,
    spec: ServingSpec,
    name: str,
    *,
    kind: str | None = None,
    locked: str | None = None,
    old: Lock | None = None,
    update: bool = False,
    force: bool = False,
    floor: Provenance | None = None,
    requires: Mapping[str, Provenance] | None = None,
    stack: str | None = None,
) -> Written:
    """Price ``spec`` and write the lock ``name`` of it to ``output``
    (:func:`passprice.locks.make_lock`, :func:`passprice.locks.write_lock`): ``kind`` ``price`` (default) or
    ``best``; ``locked``, the registered serving it locks (:func:`locked_serving`); ``floor`` and ``requires``,
    its policy (default: each fact the price rests on floored at its provenance today); ``stack``, a serving
    stack whose expected price it locks too. ``update`` keeps ``old``'s kind, policy and stack (with ``requires``:
    the policy with those paths' floors set as given, the rest kept); ``force`` (or ``update``) replaces the file
    there.

    Raises :class:`InputError` for a spec a lock of the registry cannot pin (a path outside the root,
    :func:`passprice.servings.require_lockable`), a card, checkpoint, stack or file that does not read or cannot be
    written; :class:`~passprice.serving.ServingRefusal` when the serving itself is refused; :class:`LockNotWritten`
    when the new lock's price breaches its own floors, and :class:`InputError` when it is not finite
    (:func:`passprice.report.require_finite`), or (``update``) when ``stack`` or ``name`` is not ``old``'s."""
    from passprice.locks import compare_policies, judge, make_lock
    from passprice.report import require_finite
    from passprice.servings import require_lockable, resolve

    require_lockable(root, spec, output)  # a lock of the registry pins only what the registry holds
    resolved = resolve(root, spec)
    if update and old is not None:
        kind = old.kind
        kept = old.stack.name if old.stack is not None else None
        if stack is not None and stack != kept:
            # --update keeps the stack: `lock --update --stack S` rewrote a limit's lock as a lock under S (and a
            # stack's lock under another), a lock asking another question that only the review then refused
            raise InputError(
                f"{shown(old.source or output)}: --update keeps the lock's stack ({kept or 'none'}), not {stack}: "
                "give no --stack, or write a new lock under another name (--stack S -o NEW.lock.toml)"
            )
        stack = kept  # --update keeps the stack the lock was made under
    if update and old is not None and name != old.name:
        raise InputError(
            f"{shown(old.source or output)}: --update keeps the lock's name ({old.name}), not {name}: give no "
            "--name (a lock is named after its file), or write a new lock under another name"
        )
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
        require_registered_stack(root, stack, the_stack.name)
    policy = None
    if update and old is not None:
        # --update keeps the policy; --update --force --require sets the named paths' floors alone
        policy = Policy(old.policy.floor, {**old.policy.paths, **(requires or {})}) if requires else old.policy
    lock = make_lock(
        name, kind or "price", resolved, root,
        policy=policy,
        serving=locked,
        floor=floor,
        requires=dict(requires or {}),
        stack=the_stack,
    )
    from passprice.sources import cited_ids, invalid_ids

    # A lock pins its facts' citations: a source record that does not validate (no url, publisher or date) is a
    # citation nobody can trace back, which only `check` said after the lock was written (walkthrough 2, session 11).
    untraceable = invalid_ids(
        root, [c for path, fact in lock.facts.items() for c in cited_ids(path, fact)], f"lock {lock.name} (not written)"
    )
    if untraceable:
        raise InputError.of(untraceable)
    from passprice.stackreach import fit_check
    from passprice.stale import stale_rested_on

    # A price on a derived fact whose inputs moved (fact set without fact recompute) is no price to pin: refused by
    # name, as diff, audit and check judge it (walkthrough 106: written, exit 0).
    stale = stale_rested_on(resolved.facts(), lock.rests_on)
    # A stack's facts are derived too (fitted to its runs): a fit that does not follow from today's registry, which
    # `price --stack` warns of and `check` fails, is refused alike (tests/test_fix179.py: written, exit 0).
    fit = fit_check(root, stack) if the_stack is not None and stack is not None else None
    if stale or (fit is not None and fit.findings):
        routing = resolved.serving.routing.name if resolved.serving.routing is not None else None
        method = resolved.method.name if resolved.method is not None else None
        fixes = stale_fixes(stale, resolved.card.name, method, routing) if stale else []
        if fit is not None and fit.findings:
            fixes.append(f"run `{fit.command()}` (review the re-fit with `{fit.command()} --dry-run` first)")
        raise LockOnStaleFacts(lock.name, stale, fixes, output, fit)
    verdict = judge(lock.name, lock.policy, tuple((p, lock.facts[p]) for p in lock.rests_on))
    if not verdict.holds:
        advice = ""
        if update:
            from passprice.enforce import relock_command, ways_out

            advice = f"--update keeps the floors; {ways_out(verdict)}: {relock_command(verdict, locked, shown(output))}"
        else:  # what would have to change for the floors asked to accept the price (walkthrough 38: unsaid)
            advice = floor_advice(verdict, lock.card)
        raise LockNotWritten(verdict, output, advice)
    require_finite(lock.price)
    loosened = tuple(c for c in compare_policies(old.policy, lock.policy) if c.loosens) if old is not None else ()

    with names_held(root, output):  # no other lock's name checked and written between this check and the write
        require_unique_name(root, output, lock, update, locked, old)
        return _write_checked(root, output, lock, old, force or update, loosened)


def _write_checked(root: Root, output: Path, lock: Lock, old: Lock | None, force: bool,
                   loosened: tuple[FloorChange, ...]) -> Written:
    """The end of :func:`write`, under :func:`names_held`: the list of pricing models checked, ``lock`` written to
    ``output`` (``old``: the lock it replaces, ``force``: overwrite), the list updated; the :class:`Written`."""
    from passprice.locks import write_lock
    from passprice.modelhistory import add_running, list_to_update, require_updatable

    # A re-lock of passprice's own repository lists the code it locked with and the lock it wrote, so that every
    # later passprice tells this lock's pricing model, and its record, from ones typed by hand (slips 55, 57). A list
    # it could not update was ignored without a word (exit 0; the code then read as forged to every later
    # passprice): refused before the lock is written, one line naming the file (slip 57).
    listed = None
    with contextlib.suppress(OSError, RuntimeError):
        if output.resolve().parent == (root.path / "locks").resolve():  # a lock of the registry, not a copy elsewhere
            listed = list_to_update(root.path)
    if listed is not None:
        require_updatable(listed)
        if old is not None:  # its record may be dropped from the list, where HEAD's list does not hold it
            from passprice.modelhistory import committed_list

            try:
                committed_list(root.path)  # a committed list past the cap: refused before the lock is written
            except InputError as e:
                raise InputError(f"{e}; the lock was not written") from None
    write_lock(output, lock, force=force)
    if listed is not None:
        from passprice.locks import lock_document

        try:
            add_running(root.path, record=lock_document(lock)["lock"]["digest"],
                        replaced=old.info.digest if old is not None else None)
        except (InputError, OSError) as e:  # changed under us since the check above: the lock is written
            raise InputError(
                f"{e}: the lock {shown(output)} was written, but passprice's list of pricing models was not updated "
                f"with it; make the list writable and run passprice lock --update -o {shown(output)} again"
            ) from None
    return Written(lock, loosened)


def best_instead(root: Root, spec: ServingSpec, stack: str | None, kind: str | None) -> bool:
    """Whether a ``price`` lock of ``spec`` under ``stack`` refused ``BeyondStack`` (its batch outside the passes
    the stack's runs measured) would be lockable as a ``best`` lock under the same stack (``lock S --best --stack
    X``): ``best`` seeks its batch inside the stack's range, so a stack calibrated at batch 1 locks the best price
    where the serving's batch 64 is refused (walkthrough 49: the refusal advised ``--batch 1``, which ``lock`` of a
    registered serving does not take). Prices it once, as :func:`passprice.locks.make_lock` would
    (:func:`passprice.locks.priced`); ``False`` for another kind, no stack, or any refusal or bad input on the way.
    Raises nothing."""
    if stack is None or (kind or "price") != "price":
        return False
    from passprice.locks import priced
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve
    from passprice.stacks import load_stack

    try:
        resolved = resolve(root, spec)
        priced("best", resolved.header, resolved.card, resolved.serving, load_stack(root, stack))
    except (InputError, ServingRefusal):
        return False
    return True
