"""A command that reads a whole registry reads it as one snapshot: inside :func:`reading`, each file is read once and
what is made from the same bytes (a validated document, a built object, a lookup in a folder) is made once.

``passprice check``, ``sweep``, ``diff`` and the listings meet the same card, checkpoint entry, schema and lock again
for every serving that names it: over a registry of 2,000 small serving files, re-reading, re-hashing and
re-unpickling them cost seconds. Inside :func:`reading` a file's bytes are read the first time its path is asked for
and then served from memory, so the command sees one version of each file even while someone edits it; what is made
from a file is keyed by everything it is made from (its kind, its schema's and its own bytes, with its path), as
the cache of validated files (:mod:`passprice.cache`) keys it across processes, so a content-keyed memo can never
answer for other bytes. A failure is never kept: a file that does not read, parse or validate is read and refused
again by whoever asks next (but a lock file's refusal, kept by :func:`passprice.locks.read_lock` by its path once the
snapshot holds its bytes: those bytes cannot change while the snapshot lasts). Where a path's links lead is looked up
once a snapshot too (:func:`resolved`): the snapshot's one version of the files is one version of the links to them.

Only commands that write no registry file open a snapshot (a command that edits a file and reads it back must see
its own write); outside one, nothing is kept and every read goes to the file. Snapshots nest: an inner
:func:`reading` shares the outer one. Nothing here outlives the outermost ``with``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class _Snapshot:
    """What one snapshot keeps: ``files`` (path → bytes), ``made`` (key → value) and ``closing`` (what to do at its
    end: :func:`at_close`)."""

    __slots__ = ("closing", "files", "made")

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.made: dict[Hashable, Any] = {}
        self.closing: list[Callable[[], None]] = []


_current: _Snapshot | None = None


@contextlib.contextmanager
def reading() -> Iterator[None]:
    """Read the registry as one snapshot until the ``with`` ends (the outermost one, when nested)."""
    global _current
    if _current is not None:
        yield
        return
    _current = snap = _Snapshot()
    try:
        yield
    except KeyboardInterrupt:  # an interrupt: nothing more is done on the way out
        _current = None
        raise
    except BaseException:
        _close(snap)
        raise
    else:
        _close(snap)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """No snapshot until the ``with`` ends, then the one open before (if any) again: a command reading as one
    snapshot that writes files of its own (the review's private copy of HEAD with its derived facts recomputed,
    :func:`passprice.review.impacts.recomputed_prices`) reads its own writes back, and what it read meanwhile is not
    kept as the snapshot's (a recomputed card's path first read before its rewrite was served the old bytes)."""
    global _current
    was, _current = _current, None
    try:
        yield
    finally:
        _current = was


def _close(snap: _Snapshot) -> None:
    """End ``snap``: its :func:`at_close` callbacks run in the order given, after it is no longer current (what they
    read goes to the files)."""
    global _current
    _current = None
    for done in snap.closing:
        done()


def at_close(done: Callable[[], None]) -> None:
    """Call ``done()`` when the outermost snapshot ends (normally or by an exception; not by an interrupt): what a
    reader collected over the whole snapshot is written once (the cache's batch of a folder's objects). Outside a
    snapshot, nothing. ``done`` must raise nothing."""
    if _current is not None:
        _current.closing.append(done)


def active() -> bool:
    """Whether a snapshot is open."""
    return _current is not None


def file_bytes(path: str | os.PathLike[str], read: Callable[[], bytes]) -> bytes:
    """The bytes of the file at ``path``: ``read()`` outside a snapshot; inside one, ``read()``'s bytes the first
    time ``path`` (as written: the same file under two spellings is read twice) is asked for, then the same bytes.
    Raises what ``read`` raises (a failure is not kept)."""
    if _current is None:
        return read()
    key = os.fspath(path)
    data = _current.files.get(key)
    if data is None:
        data = read()
        _current.files[key] = data
    return data


def kept_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes :func:`file_bytes` kept for ``path`` in the current snapshot, or ``None`` (none kept, or outside
    one). Raises nothing."""
    return None if _current is None else _current.files.get(os.fspath(path))


#: Bytes longer than this are named in a memo key by :func:`fingerprint`, not held by it.
FINGERPRINT_AFTER = 1024


def fingerprint(data: bytes) -> bytes | tuple[int, bytes]:
    """``data`` as a :func:`made` key names a file's bytes: short ``data`` as is, longer as its length and its
    BLAKE2b-256 digest (:func:`passprice.digests.blake2b`, RFC 7693; 32 bytes), so a key made from a file's bytes does
    not hold them. Issue 13 (session 33): 2,000 locks of one serving held their 131 MB of bytes three times over,
    once in :attr:`_Snapshot.files` and twice in the keys of what was made from them (a lock's key joins its path
    and bytes in a new ``bytes``). Two different contents share a digest with probability about 2**-256. Raises
    nothing."""
    if len(data) <= FINGERPRINT_AFTER:
        return data
    from passprice.digests import blake2b_digest

    return len(data), blake2b_digest(data)


def kept(key: Hashable) -> Any:
    """What :func:`made` made for ``key`` in the current snapshot; ``None`` outside one, or when nothing was made for
    it (nothing is made here). Raises nothing."""
    return None if _current is None else _current.made.get(key)


def resolved(path: str | os.PathLike[str]) -> Path:
    """``Path(path).resolve()`` (``os.path.realpath``, links followed, not strict): outside a snapshot that call
    itself; inside one, made once a snapshot for each ``path`` as written (:func:`made`; with the working folder, when
    it is relative), as the folder holding it resolved once a snapshot (:func:`resolved_folder`) joined to its own
    name when an ``lstat`` shows that name is no symbolic link. Anything else (the name a link, ``.``, ``..`` or
    empty, an ``lstat`` or a resolution failing) takes ``Path(path).resolve()`` itself, so the result and whatever it
    raises (``OSError``, a link loop's ``RuntimeError``) are the same. Issue 16 (session 35): a warm price under 1,000
    locks of one serving resolved each lock's path six times (three callers naming it, each resolving the lock and
    the registry's root), ``realpath`` an ``lstat`` a component: 6,026 resolutions, about 15 % of the run."""
    if _current is None:
        return Path(path).resolve()
    text = os.fspath(path)
    key = ("resolved-path", text) if os.path.isabs(text) else ("resolved-path", os.getcwd(), text)
    return made(key, lambda: _resolved(text))


def _resolved(text: str) -> Path:
    """:func:`resolved` of ``text`` inside a snapshot, its folder taken from :func:`resolved_folder`."""
    folder, name = os.path.split(text)
    if name in ("", ".", ".."):
        return Path(text).resolve()
    try:
        if stat.S_ISLNK(os.lstat(text).st_mode):
            return Path(text).resolve()
        return resolved_folder(folder or os.curdir) / name
    except (OSError, RuntimeError, ValueError):
        return Path(text).resolve()


def resolved_folder(folder: str | os.PathLike[str]) -> Path:
    """``Path(folder).resolve()``, made once a snapshot for each ``folder`` as written (with the working folder, when
    it is relative: :func:`made`), its last name followed too when it is a link (a registry reached through a link);
    outside a snapshot, the call itself. Raises what that raises (a failure is not kept)."""
    if _current is None:
        return Path(folder).resolve()
    text = os.fspath(folder)
    key = ("resolved", text) if os.path.isabs(text) else ("resolved", os.getcwd(), text)
    return made(key, lambda: Path(text).resolve())


def made(key: Hashable, make: Callable[[], T]) -> T:
    """``make()``; inside a snapshot, made once for each ``key`` (which must name everything ``make`` reads, such as
    a file's kind, schema bytes and bytes) and then returned again (the same object). Raises what ``make`` raises
    (a failure is not kept)."""
    if _current is None:
        return make()
    try:
        return _current.made[key]  # type: ignore[no-any-return]
    except KeyError:
        pass
    value = make()
    _current.made[key] = value
    return value


#: How many values :func:`lasting` keeps past their snapshot (the least recently asked for goes first).
LASTING_MAX = 128

#: :func:`lasting`'s values, by their content key, kept for the process (bounded by :data:`LASTING_MAX`).
_LASTING: OrderedDict[Hashable, Any] = OrderedDict()


def lasting(key: Hashable, make: Callable[[], T]) -> T:
    """:func:`made`, the value also kept past the snapshot for the rest of the process (the last
    :data:`LASTING_MAX` of them): for a ``key`` that names every byte ``make`` reads (a file's bytes or their
    digest, with the bytes of the schemas it is validated against: :func:`folder_fingerprint`), never a path or a
    time alone, so a value kept can only answer for the same inputs, and for a value nothing changes (a frozen
    object). A review's two sides and every command a process runs on the same registry read the same locks again
    from new temporary folders: each lock was validated, digest-checked and structured again by each command
    (issue 16: a tenth of the test suite's in-process time went to reviews). Outside a snapshot, ``make()`` and
    nothing kept. Raises what ``make`` raises (a failure is not kept)."""
    if _current is None:
        return make()
    try:
        return _current.made[key]  # type: ignore[no-any-return]
    except KeyError:
        pass
    try:
        value = _LASTING[key]
        _LASTING.move_to_end(key)
    except KeyError:
        value = make()
        _LASTING[key] = value
        if len(_LASTING) > LASTING_MAX:
            _LASTING.popitem(last=False)
    _current.made[key] = value
    return value  # type: ignore[no-any-return]


def folder_fingerprint(folder: str | os.PathLike[str]) -> bytes:
    """The BLAKE2b-256 digest of the names and bytes of the files in ``folder`` (sorted by name; not below it), as
    read once a snapshot (:func:`made`), to name a folder of schemas in a :func:`lasting` key by its content. A
    folder or file that does not read names itself by its error's words instead (never equal to a digest of bytes
    read). Raises nothing."""
    text = os.fspath(folder)

    def take() -> bytes:
        from hashlib import blake2b

        digest = blake2b(digest_size=32)
        try:
            names = sorted(os.listdir(text))
            for name in names:
                with open(os.path.join(text, name), "rb") as f:
                    data = f.read()
                digest.update(len(name).to_bytes(8, "big") + name.encode("utf-8", "surrogateescape"))
                digest.update(len(data).to_bytes(8, "big") + data)
        except OSError as e:
            digest.update(b"\0unread\0" + str(e).encode("utf-8", "surrogateescape"))
        return digest.digest()

    return made(("folder-fingerprint", text), take)
