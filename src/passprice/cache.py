"""A file that has not changed is neither parsed nor validated again: its validated document is kept in the user's
cache folder under a key made of everything the document depends on, so a change to any of them can only miss.

The key is the BLAKE2b digest (32 bytes, :func:`passprice.digests.blake2b`: no OpenSSL loaded) of: the cache's
format, the passprice version (and the status of the package's modules, their bytes when changed lately, so an
edited source checkout misses too, its modification time put back or not), the kind of entry (``card``,
``checkpoint`` …, ``lock+digests`` for a lock whose digests were checked too, ``checkpoint+summary`` for a
checkpoint's listing row), the BLAKE2b digest of its schema's bytes, and that of the file's own bytes. The file's
*content* names it, never its size or modification time alone, so an edit of the same size made within the same
second still misses; the content's digest is hashed from the bytes read unless the file's status, recorded when they
were last hashed, vouches for it under git's racy-clean rule (:mod:`passprice.filestamps`). Only a document that
parsed, matched its schema and passed its kind's checks is stored, so a hit is always a valid document; an invalid
file is parsed and refused again on every run.

An entry is one file ``documents/KEY.json``: a first line holding the BLAKE2b digest (hex) of the rest, then the
document as JSON (``{"key": KEY, "document": …}``). An entry that is truncated, altered, unreadable or for another key
is ignored (and overwritten when the document is stored again), never an error; so is one that is not a regular file (a
FIFO, which would block the read, or a link to ``/dev/zero``, which has no end) or is larger than
:data:`MAX_ENTRY_BYTES`: it is checked before a byte is read, as every file passprice reads. Entries are written through
a temporary file and a rename (:func:`passprice.files.write_atomically`), so concurrent runs see a whole entry
or none. Past :data:`MAX_ENTRIES` entries, the oldest half is removed.

Where: ``$PASSPRICE_CACHE_DIR`` when set to an absolute path (the tests point it at a temporary folder; a relative
one is ignored, as the XDG specification ignores a relative ``$XDG_CACHE_HOME``, so no cache is made inside
whatever folder a command runs in), else the platform's user cache
folder — ``$XDG_CACHE_HOME/passprice`` or ``~/.cache/passprice`` (XDG Base Directory specification),
``~/Library/Caches/passprice`` on macOS, ``%LOCALAPPDATA%\\passprice\\Cache`` on Windows. ``PASSPRICE_NO_CACHE=1``
or ``passprice --no-cache`` bypasses it (nothing read, nothing written). A cache folder that cannot be written is
not an error either: the document is then built on every run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from passprice import __version__, cachefolder
from passprice.digests import blake2b, blake2b_digest

#: The layout of an entry; bump it when the entry's format or the meaning of a document changes.
FORMAT = "passprice-cache-2"
#: Entries kept before the oldest half is removed (each kind's folder: a few KB an entry, the largest a checkpoint
#: entry's document of about 100 KB): a registry of thousands of servings stays warm run after run.
MAX_ENTRIES = 4096
#: Stores between two looks at the folder's size (the first store of a process looks too): listing the folder at every
#: store made a sweep over 2,000 servings spend seconds of system time listing it. A folder passes
#: :data:`MAX_ENTRIES` by at most this many entries a process before it is pruned.
PRUNE_EVERY = 64

_stores = 0
#: The largest entry read: twice the largest TOML file passprice reads (its document as JSON is about its size).
MAX_ENTRY_BYTES = 128 << 20

_enabled = True

T = TypeVar("T")


#: The entry files this process was served (a document, an object or a batch read as a hit), in order: what
#: :func:`served_again` removes when a run served from them failed as no run of passprice's own entries can.
_SERVED: list[Path | str | None] = []
#: Whether a command is running again uncached (:func:`served_again`): until it ends, no entry is read (each is a
#: miss, rebuilt and stored again, so a forged entry the command reads is overwritten).
_again = False
#: The objects modules keep for the rest of the process, beyond a snapshot, built or read through the cache (module,
#: its dicts): forgotten before a command runs again (:func:`served_again`), where one from a forged entry was used
#: again — a checkpoint header (``checkpoints._CACHE``: ``reproduce`` failed twice), a pass shape
#: (``serving._SHAPES``: ``price`` failed twice; tests/test_forge110.py). Looked up in :data:`sys.modules`: a
#: module not loaded keeps nothing.
KEPT_IN_PROCESS = (
    ("passprice.checkpoints", ("_CACHE", "_CONTENT")),
    ("passprice.gguf_header", ("_CACHE",)),
    ("passprice.serving", ("_SHAPES", "_SHARED_SHAPES", "_STEPS")),
    ("passprice.scopes", ("_MODELS",)),
    ("passprice.sweep", ("_RESTS", "_KINDS", "_READS")),
    ("passprice.calibrate", ("_FITS",)),
    ("passprice.snapshot", ("_LASTING",)),
    ("passprice.cache", ("_HELD",)),
)


def _forget_kept() -> None:
    """Clear the dicts of :data:`KEPT_IN_PROCESS` of the modules loaded, and the objects' identities. Raises
    nothing."""
    for module, names in KEPT_IN_PROCESS:
        loaded = sys.modules.get(module)
        for name in names:
            kept = getattr(loaded, name, None)
            if isinstance(kept, dict):
                kept.clear()
    _IDENTITIES.clear()


#: Whether the context of a failed run is being closed (:func:`served_again`): a batch collected then is not written.
_failed = False


class _Printed:
    """Whether anything was written to standard output or error (their ``write``) while it is :meth:`watching`:
    a run that printed cannot be run again without printing it twice."""

    def __init__(self) -> None:
        self.printed = False
        self.hooked: list[tuple[Any, Any]] = []

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Watch ``sys.stdout`` and ``sys.stderr`` until the ``with`` ends (a stream whose ``write`` cannot be watched
        counts as printed to)."""
        for stream in (sys.stdout, sys.stderr):
            if stream is None:
                continue
            try:
                own = vars(stream).get("write")
                stream.write = self._wrapped(stream.write)  # type: ignore[method-assign]
            except (AttributeError, TypeError):
                self.printed = True
                continue
            self.hooked.append((stream, own))
        try:
            yield
        finally:
            for stream, own in self.hooked:
                with contextlib.suppress(AttributeError, TypeError):
                    if own is None:
                        del stream.write
                    else:
                        stream.write = own
            self.hooked.clear()

    def _wrapped(self, write: Callable[[str], int]) -> Callable[[str], int]:
        def watched(text: str) -> int:
            if text:
                self.printed = True
            return write(text)

        return watched


def served_again(run: Callable[[], T], answer: Callable[[Exception], bool], again: Callable[[Exception], None]) -> T:
    """``run()``'s result; when it raises an exception that is not an ``answer`` (passprice's own: an input
    error, a refusal, click's exits) after this process was served cache entries, and before anything was printed,
    those entries are removed (with the file status records, :mod:`passprice.filestamps`) and ``run()`` is run again
    reading no entry (each a miss, built from the files and stored over what was there), its result or exception
    the command's. ``again(e)`` is called first, to undo what the failed run left open (the CLI closes the command's
    context, its snapshot with it; nothing the failed run collected is written then: :class:`_Batch`).

    An entry is read back only when its checksum, key, JSON or pickle and classes hold, but its *shape* is not
    checked against what the code that wrote it writes: an entry forged with a valid checksum (a document missing a
    key, a number where a table was; an object of an allowed class whose field holds ``None`` or a list of the wrong
    length) raised KeyError, AttributeError or TypeError deep in the code that used it, a traceback, from ``check``,
    ``sources``, ``checkpoints``, ``price`` and every command that reads the cache (tests/test_forge110.py). Checking
    every shape where it is decoded would cost a warm run what validating the documents costs a cold one; this
    costs a hit nothing (one list append) and a failing run nothing more than its failure, and answers what the
    files answer uncached. A run that printed before failing, or that fails again uncached, fails as it did.
    Raises what ``run()`` raises."""
    start = len(_SERVED)
    watch = _Printed()
    try:
        with watch.watching():
            return run()
    except Exception as e:
        if len(_SERVED) == start or watch.printed or not enabled() or answer(e):
            raise
        failed = e
    global _again, _failed
    _failed = True
    try:
        again(failed)
    finally:
        _failed = False
    _drop(_SERVED[start:])
    del _SERVED[start:]
    _forget_kept()
    _again = True  # not ``configure``'s switch: the group sets that again as the command runs again
    try:
        return run()
    finally:
        _again = False


def _drop(paths: list[Path | str | None]) -> None:
    """Remove the entry files ``paths`` and the file status records (read again, and learned again, as a new
    process would). Raises nothing."""
    from passprice import digests, filestamps

    for path in dict.fromkeys(paths):
        if path is None:
            continue
        with contextlib.suppress(OSError):
            os.unlink(path)
    if filestamps._path:
        with contextlib.suppress(OSError):
            os.unlink(filestamps._path)
    filestamps._records, filestamps._path, filestamps._learned = None, "", False
    digests._vouched.clear()


def configure(enabled: bool) -> None:
    """Use the cache (``True``, the default) or bypass it (``passprice --no-cache``) for the rest of the process."""
    global _enabled
    _enabled = enabled


def enabled() -> bool:
    """Whether documents are read from and stored in the cache: not after ``configure(False)``, nor when the
    environment sets ``PASSPRICE_NO_CACHE`` to anything but ``""`` or ``0``."""
    return _enabled and not cachefolder.bypassed()


def scope() -> str | None:
    """The cache folder (:func:`cache_dir`) while the cache is used, else ``None`` (bypassed, or no home folder to
    find it in): named in the key of what a process keeps past a command (:func:`passprice.snapshot.lasting`), so a
    value made beside one cache (or none) never stands in for the entries a command writes to another. Raises
    nothing."""
    if not enabled():
        return None
    try:
        return os.fspath(cache_dir())
    except RuntimeError:
        return None


def cache_dir() -> Path:
    """The folder of passprice's cache: ``$PASSPRICE_CACHE_DIR`` (when absolute), else the user cache folder of the
    platform (XDG
    Base Directory specification on Linux and other POSIX systems; ``~/Library/Caches`` on macOS;
    ``%LOCALAPPDATA%`` on Windows), then ``passprice`` (:func:`passprice.cachefolder.folder`: the rule, in a module
    the result memo reads before anything else is imported). Raises :class:`RuntimeError` without a home folder, or
    with one that does not exist (:func:`passprice.cachefolder.folder`)."""
    return Path(cachefolder.folder(lambda: cachefolder.existing(str(Path.home()))))


def _file_stamp(path: str, st: os.stat_result, now_ns: int) -> str:
    """What a code file whose status is ``st`` stands for in a key: its device, inode, size, modification and change
    times when its change time (``ctime``, which no user can set: every write, and every ``utime`` that puts an old
    modification time back, moves it) is older than :data:`passprice.memo.TRUST_NS` before ``now_ns`` — a later write
    moves it, so no other bytes can share the stamp (git's racy-clean rule, the memo's); else, changed lately, the
    BLAKE2b digest of its bytes (``?`` when they cannot be read). Size and modification time alone (round 22) let an
    edit of the same size with the modification time put back (``cp -p``, ``rsync -t``, ``tar``, a file system that
    keeps whole seconds) serve the objects the old code built: a price from the old unit table. On a file system
    that does not keep ``ctime`` itself (:func:`passprice.memo.keeps_ctime`), always the digest."""
    from passprice.memo import TRUST_NS, _recent, keeps_ctime

    if not _recent(st.st_ctime_ns, now_ns, TRUST_NS) and keeps_ctime(st.st_dev, path):
        return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    try:
        with open(path, "rb") as f:
            return "#" + blake2b(f.read()).hexdigest()
    except OSError:
        return "?"


def file_stamp(path: str | os.PathLike[str], now_ns: int) -> str | None:
    """What the regular file at ``path`` (links followed) stands for in a key: :func:`_file_stamp` of its status,
    taken at ``now_ns`` (``time.time_ns()``, once for a whole folder) — its device, inode, size, modification and
    change times when it last changed before :data:`passprice.memo.TRUST_NS`, else the BLAKE2b digest of its bytes,
    so an edit of the same size within the same second, its modification time put back or not, moves it. ``None``
    when it is no regular file or its status cannot be read (missing, a dangling link, a loop, a name too long).
    Raises nothing."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return _file_stamp(os.fspath(path), st, now_ns)


def file_stamp_and_id(path: str | os.PathLike[str], now_ns: int) -> tuple[str | None, tuple[int, int] | None]:
    """:func:`file_stamp` of ``path`` and the file's identity, ``(st_dev, st_ino)`` of the same ``os.stat`` (links
    followed), so two names of one file (a hard link, a symbolic link) are known for one without another system call
    (:func:`passprice.locks.locks_of`, left58). ``(None, None)`` when it is no regular file or its status cannot be
    read. Raises nothing."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None, None
    if not stat.S_ISREG(st.st_mode):
        return None, None
    return _file_stamp(os.fspath(path), st, now_ns), (st.st_dev, st.st_ino)


@functools.cache
def _code_stamp() -> str:
    """Name and :func:`_file_stamp` of every module of the package, its subpackages' too (``review/verdict.py``),
    once a process: what a stored entry is (a validated document, a lock whose digests were checked, a checkpoint's
    listing row, a card or a pass shape built) is decided by code, and a source checkout edited without a version
    change must miss too (an edit of a subpackage's module, stamped by the package's own folder alone, was served
    what the code before it kept)."""
    import time

    now = time.time_ns()
    parts = []
    folders = [("", str(Path(__file__).parent))]
    while folders:
        prefix, folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(".py"):
                        parts.append(f"{prefix}{entry.name}:{_file_stamp(entry.path, entry.stat(), now)}")
                    elif (not prefix and entry.name.isidentifier() and entry.is_dir(follow_symlinks=False)
                          and os.path.isfile(os.path.join(entry.path, "__init__.py"))):
                        folders.append((f"{entry.name}/", entry.path))
        except OSError:
            parts.append("?")
    return ",".join(sorted(parts))


#: The installed libraries whose code decides what an entry holds: a document's verdict (``jsonschema_rs`` finds it
#: valid, else ``jsonschema``, with ``referencing`` and ``jsonschema_specifications`` resolving its references), an
#: object's structure (``cattrs``, ``attrs``), an edited file's layout (``tomlkit``). An upgrade of one that changed
#: a verdict kept serving the old one (round 23): each is in the key by :func:`_libraries_stamp`.
LIBRARIES = ("jsonschema", "jsonschema_rs", "referencing", "jsonschema_specifications", "cattrs", "attrs", "tomlkit")


def _libraries_stamp(names: tuple[str, ...] = LIBRARIES, path: list[str] | None = None) -> str:
    """For each library of ``names`` (top-level import names), as the import system would find it on ``path``
    (default ``sys.path``) without importing it: the file it is imported from, that file's :func:`_file_stamp`
    (a reinstall writes it anew), and the names of the distribution folders beside it whose name starts with its own
    (``cattrs-26.2.1.dist-info``: the installed version); ``NAME:-`` for one not found. One listing of each folder
    the libraries lie in and a ``stat`` each: no library is imported, so a cache hit still parses no schema."""
    import time
    from importlib.machinery import PathFinder

    now = time.time_ns()
    listed: dict[str, list[str]] = {}
    parts = []
    for name in names:
        try:
            spec = PathFinder.find_spec(name, path)
        except (ImportError, ValueError, OSError):
            spec = None
        origin = getattr(spec, "origin", None)
        if spec is None or not isinstance(origin, str) or not os.path.isabs(origin):
            parts.append(f"{name}:-")
            continue
        folder = os.path.dirname(os.path.dirname(origin) if spec.submodule_search_locations else origin)
        if folder not in listed:
            try:
                listed[folder] = sorted(os.listdir(folder))
            except OSError:
                listed[folder] = ["?"]
        prefix = f"{name.lower()}-"
        infos = [n for n in listed[folder] if n.lower().startswith(prefix) and n.endswith((".dist-info", ".egg-info"))]
        try:
            stamp = _file_stamp(origin, os.stat(origin), now)
        except OSError:
            stamp = "?"
        parts.append(f"{name}:{origin}:{stamp}:{','.join(infos)}")
    return "|".join(parts)


@functools.cache
def _installed_stamp() -> str:
    """:func:`_libraries_stamp` of :data:`LIBRARIES`, once a process."""
    return _libraries_stamp()


def key(kind: str, schema_bytes: bytes, data: bytes) -> str:
    """The cache key of a ``kind`` file holding ``data`` (bytes), validated against a schema of ``schema_bytes``:
    a BLAKE2b hex digest over the cache format, passprice's version and code stamp, the installed libraries that
    decide an entry (:func:`_installed_stamp`), the kind, and the BLAKE2b digests of the schema's and the file's
    bytes."""
    h = _key_start(FORMAT, __version__, _code_stamp(), _installed_stamp(), kind).copy()
    h.update(_schema_digest(schema_bytes))
    h.update(blake2b_digest(data))
    digest: str = h.hexdigest()
    return digest


@functools.lru_cache(maxsize=16)
def _schema_digest(schema_bytes: bytes) -> bytes:
    """The BLAKE2b digest of a schema's bytes, once a process for each schema (the same bytes found again by their
    hash, which ``bytes`` computes once an object): :func:`key` hashed the 13 KB card schema for each of 2,000 cards
    and the 43 KB lock schema for each of 5,000 locks (issue 13, scale36). Named by :func:`blake2b_digest`: a schema
    file whose status vouches for its digest is not hashed (:mod:`passprice.filestamps`)."""
    return blake2b_digest(schema_bytes)


@functools.lru_cache(maxsize=64)
def _key_start(*parts: str) -> Any:
    """The BLAKE2b hash of :func:`key` fed its first ``parts`` (format, version, code and library stamps, kind), each
    then a NUL: copied for each key (the code stamp, a few KB, is hashed once a kind, not once a file).

    A part is encoded with ``surrogatepass``: the code stamp names every file of the package folder and the library
    stamp the folders libraries lie in, and a name in bytes that are not UTF-8 (``src/passprice/<0xff 0xfe> odd.py``,
    held by Python as lone surrogates) raised UnicodeEncodeError from every cached read, so a side's own code in a
    review said "HEAD cannot price: its own code could not price it: UnicodeEncodeError … surrogates not allowed"
    (issue 13's leftovers, session 28). A lone surrogate's three bytes are no UTF-8, so no other text keys alike."""
    h = blake2b()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h


def _entry_path(entry_key: str) -> Path:
    return cache_dir() / "documents" / f"{entry_key}.json"


def read(entry_key: str) -> dict[str, Any] | None:
    """The document stored under ``entry_key``, or ``None``: no entry, a bypassed cache, a command run again
    (:func:`served_again`), or an entry that is not whole and ours (a checksum or key that does not match, JSON that
    does not parse), which is then ignored."""
    if not enabled() or _again:
        return None
    try:
        path = _entry_path(entry_key)
    except RuntimeError:  # no home folder to find the cache in
        return None
    body = _whole(_read_file(path))
    if body is None:
        return None
    try:
        entry = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != entry_key or not isinstance(entry.get("document"), dict):
        return None
    document: dict[str, Any] = entry["document"]
    _SERVED.append(path)
    return document


def _read_file(path: Path | str) -> bytes | None:
    """The bytes of the entry file ``path``, or ``None`` (a miss): none there, not a regular file (refused by
    :func:`passprice.cachefolder.read` before it is opened for reading:
    a FIFO, a device, a link to either), larger than :data:`MAX_ENTRY_BYTES` (its size is read from the open
    descriptor before a byte of it), not :func:`_trusted`, or unreadable (:func:`passprice.cachefolder.read`)."""
    return cachefolder.read(os.fspath(path), MAX_ENTRY_BYTES)


def _trusted(st: os.stat_result) -> bool:
    """Whether an entry file of status ``st`` is one this user's passprice wrote: owned by the user and writable by
    no one else. The cache is trusted as the user's own files are (whoever can write it can change what a run
    prints, as whoever can write the registry can); a file another user could have put or changed there is a miss."""
    return cachefolder.trusted(st)


def store(entry_key: str, document: dict[str, Any]) -> None:
    """Keep ``document`` under ``entry_key``, written atomically; silently nothing when the cache is bypassed, the
    document does not convert to JSON exactly (a TOML date, a text holding a lone surrogate), or the folder cannot
    be written."""
    if not enabled():
        return
    from passprice.errors import InputError
    from passprice.files import make_folder

    try:
        body = json.dumps({"key": entry_key, "document": document}, ensure_ascii=False, separators=(",", ":"))
        data = body.encode("utf-8")  # a name not UTF-8 (a lock file's, read with surrogates) does not encode
    except (TypeError, ValueError, RecursionError):
        return
    try:
        path = _entry_path(entry_key)
    except RuntimeError:  # no home folder to put the cache in
        return
    try:
        make_folder(path.parent)  # the cache's own folder (a writer never creates a folder a user named)
        _write_entry(path, blake2b(data).hexdigest().encode("ascii") + b"\n" + data)
    except (InputError, OSError):
        return
    _prune(path.parent)


def _write_entry(path: Path, data: bytes) -> None:
    """Write the entry file ``path``, private (``0o600``). A new entry is created in place (``O_EXCL``: one file
    made, half the cost of a temporary file renamed, which a cold read of a registry of thousands of files pays for
    each); where anything is already there — an older entry, a torn one, a symbolic link — a private temporary file
    in the folder is renamed over it, which replaces it, never writes through it (unlike a user's file, for which
    :func:`passprice.files.write_atomically` keeps the link: a link in the cache is nobody's file to keep, and writing
    through one let a cache entry overwrite the file it pointed at). A torn entry (a crash, or a reader racing the
    writer) fails its checksum when read and is rewritten, so nothing is flushed to disk. Raises :class:`OSError`
    (the caller skips the entry)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        pass
    else:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            Path(path).unlink(missing_ok=True)
            raise
        os.close(fd)
        return
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


_HEX = frozenset("0123456789abcdef")


def _is_entry_name(name: str) -> bool:
    """Whether ``name`` is that of an entry file: its key (a 32-byte BLAKE2b hex digest) and the suffix of its kind."""
    key, dot, suffix = name.partition(".")
    return bool(dot) and suffix in ("json", "pickle", "memo") and len(key) == 64 and _HEX.issuperset(key)


def _prune(folder: Path, limit: int | None = None) -> None:
    """Remove the older half of the entries when there are more than :data:`MAX_ENTRIES` (a concurrent run removing
    the same entries is harmless); looked at on the first store of a process and every :data:`PRUNE_EVERY`-th.
    With ``limit`` (the result memo's, which stores one entry a process): looked at now, the older half removed past
    ``limit`` entries."""
    global _stores
    if limit is None:
        _stores += 1
        if (_stores - 1) % PRUNE_EVERY:
            return
    most = MAX_ENTRIES if limit is None else limit
    try:
        # Only names this module writes (a BLAKE2b key and its suffix): a file of the user's that found its way into
        # the folder is not an entry, and is never removed.
        # Names first (no path object each): a folder of thousands of entries is listed every PRUNE_EVERY stores.
        listed = os.listdir(folder)
        if len(listed) <= most:  # every name an entry or not, no more than the limit: nothing to look at
            return
        names = [name for name in listed if _is_entry_name(name)]
        if len(names) <= most:
            return
        aged = []
        for p in (folder / name for name in names):
            try:
                aged.append((p.stat().st_mtime_ns, p))
            except OSError:
                continue
        aged.sort()
        for _, p in aged[: len(aged) - most // 2]:
            p.unlink(missing_ok=True)
    except OSError:
        return


def validated(
    kind: str, schema_path: Path, data: bytes, build: Callable[[], dict[str, Any]],
    holds: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """The validated document of a ``kind`` file holding ``data``: from the cache when an entry for the same bytes,
    schema (``schema_path``'s bytes), kind and passprice exists, else ``build()`` (which parses and validates, and
    raises on a bad file), stored for the next run. A schema that cannot be read is ``build``'s to report.
    ``holds``: whether a stored document has the shape ``build`` makes (a schema's top level,
    :func:`passprice.schema._shaped`; a document without a schema, its writer's keys); one that has not is a miss,
    built and stored over it (issue 13)."""
    if not enabled():
        return build()
    from passprice.errors import InputError

    try:
        schema_bytes = _schema_bytes(schema_path)  # a FIFO where a schema belongs is refused
    except InputError:
        return build()
    entry_key = key(kind, schema_bytes, data)
    document = read(entry_key)
    if document is not None and (holds is None or holds(document)):
        return document
    document = build()
    store(entry_key, document)
    return document


# --- built objects ---------------------------------------------------------------------------------------------------

#: The pickle protocol of an object entry.
_PROTOCOL = 5
#: Classes of the standard library an object entry may name besides passprice's own.
_STDLIB_CLASSES = {("builtins", "frozenset"), ("builtins", "set"), ("builtins", "complex")}
#: Objects this process has built or read through :func:`built`, by ``id``: (the object, its entry key), the latest
#: :data:`_IDENTITIES_KEPT`. The object is held so that its ``id`` is not reused while it is listed.
_IDENTITIES: dict[int, tuple[object, str]] = {}
_IDENTITIES_KEPT = 256


@functools.cache
def _library_stamp() -> str:
    """What a pickled object's layout depends on besides passprice: the interpreter's version and the
    :func:`_file_stamp` of attrs' class builder (its ``__getstate__``/``__setstate__`` write and read the state)."""
    import time

    import attr._make

    try:
        stamp = _file_stamp(attr._make.__file__, os.stat(attr._make.__file__), time.time_ns())
    except (OSError, TypeError):
        stamp = "?"
    return f"{sys.version}|{stamp}|pickle-{_PROTOCOL}"


class _Refused(Exception):
    """An object entry names a class an entry may not hold."""


def _allowed(module: str, name: str) -> Any:
    """The class ``module.name`` when an object entry may hold one: an attrs class or an enumeration of passprice's
    own modules, or one of :data:`_STDLIB_CLASSES`; else :class:`_Refused`. A pickle calls what it names, so
    nothing else (no function, no class of another package) is ever looked up."""
    import enum
    import importlib

    import attrs

    if (module, name) in _STDLIB_CLASSES:
        return getattr(importlib.import_module(module), name)
    if (module != "passprice" and not module.startswith("passprice.")) or "." in name:
        raise _Refused(f"{module}.{name}")
    owner = sys.modules.get(module)
    if owner is None:
        try:
            owner = importlib.import_module(module)
        except ImportError:
            raise _Refused(f"{module}.{name}") from None
    found = getattr(owner, name, None)
    if isinstance(found, type) and (attrs.has(found) or issubclass(found, enum.Enum)):
        return found
    raise _Refused(f"{module}.{name}")


def _unpickle(body: bytes, start: int = 0) -> Any:
    """The ``(key, object)`` pair an object entry's body (from ``start``) holds, read by an unpickler that looks up only
    :func:`_allowed` classes. The unpickler is the C accelerator ``pickle`` itself uses (``_pickle.Unpickler``),
    imported alone: the pure-Python ``pickle`` module around it costs a warm process more than the load."""
    import io

    stream = io.BytesIO(body)  # shares the bytes' buffer: nothing copied
    stream.seek(start)
    return _unpickler()(stream).load()


@functools.cache
def _unpickler() -> Any:
    """The unpickler class of :func:`_unpickle`: ``_pickle.Unpickler`` looking up only :func:`_allowed` classes."""
    try:
        from _pickle import Unpickler as Base
    except ImportError:  # pragma: no cover - an interpreter without the accelerator
        from pickle import Unpickler as Base

    class Unpickler(Base):
        def find_class(self, module: str, name: str) -> Any:
            return _allowed(module, name)

    return Unpickler


#: Objects a batch pickles together (:func:`_write_batch`): each such chunk shares equal strings and objects, as one
#: pickle does, while the pickler's memo (every object it wrote, kept alive until the pickle ends) stays bounded.
BATCH_CHUNK = 64


def _write_batch(path: Path, batch_key: str, objects: dict[str, Any]) -> None:
    """Write the batch entry ``path``: its BLAKE2b digest line, then ``(batch_key, "shared-chunks", N)`` pickled, the
    list of the objects of :func:`_shared_types` the chunks hold (each once, found by a first pass over the chunks
    that writes nothing), and N pickles of ``{entry key: object}`` of :data:`BATCH_CHUNK` objects each, each by a
    pickler of its own naming a shared object by its place in that list (a persistent id), streamed to
    a private temporary file in the folder as they are made and hashed on the way; the digest is written over a
    placeholder line at the end and the file renamed over ``path``. One pickle of a batch of 2,000 locks of one
    serving (74 MB) kept every object it wrote in its memo and the whole pickle twice in memory: a cold price went
    from 533 to 847 MiB (session 32). Raises :class:`OSError` or what pickling raises (the caller skips the entry); a
    partial file is removed."""
    import pickle
    import tempfile

    h = blake2b()

    class Hashing:
        def __init__(self, out: Any) -> None:
            self.out = out

        def write(self, data: Any) -> int:
            h.update(data)
            return int(self.out.write(data))

    keys = list(objects)
    chunks = [keys[i : i + BATCH_CHUNK] for i in range(0, len(keys), BATCH_CHUNK)]
    shared_types = _shared_types()
    shared: list[Any] = []
    index: dict[int, int] = {}

    class Listing(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:  # each shared object once, in the order first met
            if type(obj) in shared_types and id(obj) not in index:
                index[id(obj)] = len(shared)
                shared.append(obj)
            return None

    class Naming(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:  # a shared object by its place in the table
            return index.get(id(obj)) if type(obj) in shared_types else None

    class Null:
        def write(self, data: Any) -> int:
            return len(data)

    for chunk in chunks:  # the objects shared across chunks found first: the table is read before the chunks
        Listing(Null(), protocol=_PROTOCOL).dump({k: objects[k] for k in chunk})
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(b"0" * 64 + b"\n")
            sink = Hashing(out)
            pickle.Pickler(sink, protocol=_PROTOCOL).dump((batch_key, "shared-chunks", len(chunks)))
            pickle.Pickler(sink, protocol=_PROTOCOL).dump(shared)
            for chunk in chunks:
                Naming(sink, protocol=_PROTOCOL).dump({k: objects[k] for k in chunk})
            out.seek(0)
            out.write(h.hexdigest().encode("ascii"))
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


@functools.cache
def _shared_types() -> frozenset[type]:
    """The classes whose objects a batch entry writes once however many of its chunks hold them
    (:func:`_write_batch`): a lock's pinned facts (:func:`passprice.locks._shared` makes the equal ones of a snapshot
    one object), 14 of them 0.1 MiB of a lock's 0.13 (issue 13, session 33)."""
    from passprice.facts import Fact

    return frozenset({Fact})


def _read_batch(path: Path | None, batch_key: str) -> dict[str, Any] | None:
    """The objects of the batch entry ``path`` (:func:`_write_batch`) by entry key, or ``None`` (a miss): no file,
    one not whole (its digest), not ours (another key, another layout, a class an entry may not hold). Raises
    nothing. ``None`` while a command runs again (:func:`served_again`)."""
    import io

    raw = _read_file(path) if path is not None and not _again else None
    if raw is None:
        return None
    at = raw.find(b"\n")
    if at < 0 or raw[:at] != blake2b(memoryview(raw)[at + 1 :]).hexdigest().encode("ascii"):
        return None
    stream = io.BytesIO(raw)
    stream.seek(at + 1)
    out: dict[str, Any] = {}
    try:
        head = _unpickler()(stream).load()
        if not (isinstance(head, tuple) and len(head) == 3 and head[0] == batch_key and head[1] == "shared-chunks"
                and isinstance(head[2], int)):
            return None
        shared = _unpickler()(stream).load()
        if not (isinstance(shared, list) and all(type(x) in _shared_types() for x in shared)):
            return None

        class Reading(_unpickler()):  # type: ignore[misc]
            def persistent_load(self, pid: Any) -> Any:
                if type(pid) is not int or not 0 <= pid < len(shared):
                    raise _Refused(f"shared object {pid!r}")
                return shared[pid]

        for _ in range(head[2]):
            chunk = Reading(stream).load()
            if not isinstance(chunk, dict):
                return None
            out.update(chunk)
    except Exception:  # a damaged or foreign entry, whatever it raises, is a miss
        return None
    if out:
        _SERVED.append(path)
    return out


def identity(obj: object) -> str | None:
    """The entry key ``obj`` was built or read under by :func:`built` in this process (``None`` for any other
    object): what a further object computed from it alone (a checkpoint's decode step) is keyed by."""
    held = _IDENTITIES.get(id(obj))
    return held[1] if held is not None and held[0] is obj else None


def same_identity(obj: object, like: object) -> None:
    """Give ``obj`` the :func:`identity` ``like`` has (nothing when ``like`` has none): for a copy of a built object
    that differs from it only in what no key and no computed object reads (a checkpoint header's ``source``, the path
    a refusal names: :func:`passprice.checkpoints._kept_entry`), so what is computed from the copy (its decode step,
    its pass shapes) is looked up and kept under the same keys as from the original. Raises nothing."""
    held = identity(like)
    if held is not None:
        _identify(obj, held)


def _schema_bytes(schema_path: Path) -> bytes:
    """The bytes of the schema at ``schema_path`` (read once a snapshot, :mod:`passprice.snapshot`). Raises
    :class:`~passprice.errors.InputError` as :func:`~passprice.files.read_regular`."""
    from passprice import snapshot
    from passprice.files import read_regular

    return snapshot.file_bytes(schema_path, lambda: read_regular(schema_path, MAX_ENTRY_BYTES))


def built(
    kind: str,
    schema_path: Path | None,
    data: bytes,
    build: Callable[[], T],
    cls: type[T],
    *,
    store: bool = True,
    batch: str | None = None,
    holds: Callable[[T], bool] | None = None,
) -> T:
    """The ``cls`` object built from a ``kind`` file holding ``data`` (bytes; with whatever else the object depends
    on, such as the file's path) validated against the schema at ``schema_path`` (``None``: no schema): from the
    cache when an entry for the same bytes, schema, kind, passprice, attrs and interpreter exists, else
    ``build()``'s, stored for the next run. The key is :func:`key`'s with the interpreter's version and attrs' class
    builder (:func:`_library_stamp`), which lay out the pickled state, in its kind.

    An object entry, ``objects/KEY.pickle``, holds ``(KEY, object)`` pickled, after the BLAKE2b digest of the pickle,
    written atomically. Only what ``build`` returned without raising is stored, so a hit is an object a whole build
    made. A hit that is not whole and ours (a checksum or key that does not match, a pickle that does not load, a class
    an entry may not hold: only passprice's attrs classes and enumerations and a few built-in containers are looked up,
    so an entry runs no code but their constructors) or not a ``cls`` is ignored and overwritten, never an error. With
    the cache bypassed, ``build()``. ``store=False``: a miss is built and not stored (a caller that builds many
    objects in one process bounds what it writes). Inside a snapshot (:mod:`passprice.snapshot`), an object of the
    same kind, schema and ``data`` is looked up or built once, cache or no cache.

    ``batch``: the folder the file lies in, for a kind a command may read thousands of from one folder (serving
    files): inside a snapshot, past the first :data:`BATCH_AFTER` of the folder, the objects are kept in one entry for
    the folder (:class:`_Batch`), read once and written once a snapshot, not one file each. ``holds``: whether a
    served object says what ``data`` says where its class's writer rule cannot tell (a drafting method's figures
    against its file's, :func:`passprice.drafts.load_draft_method`); one that does not is a miss, built and stored
    over it (not with ``batch``). Raises what ``build`` raises."""
    from passprice import snapshot

    if not snapshot.active():
        return _built(kind, schema_path, data, build, cls, store, holds)[1]
    where = None if schema_path is None else os.fspath(schema_path)
    named = snapshot.fingerprint(data)  # the memo's key names the bytes without holding them (issue 13)
    if batch is not None:
        folder = snapshot.made(("batch", kind, where, batch), lambda: _Batch(kind, schema_path, batch))
        folder.seen += 1
        if folder.seen > BATCH_AFTER:
            # (None, the object): a batched object has no identity (:meth:`_Batch.built`); the same memo as below,
            # which a file read before the batch began answers.
            return snapshot.made(
                ("built", kind, where, named), lambda: (None, folder.built(data, build, cls, store))
            )[1]
    entry_key, obj = snapshot.made(
        ("built", kind, where, named), lambda: _built(kind, schema_path, data, build, cls, store, holds)
    )
    if entry_key is not None:
        _identify(obj, entry_key)  # listed again: what is computed from it is still kept
    return obj


def _built(
    kind: str, schema_path: Path | None, data: bytes, build: Callable[[], T], cls: type[T], store: bool,
    holds: Callable[[T], bool] | None = None,
) -> tuple[str | None, T]:
    """:func:`built`'s object, with the entry key it was built or read under (``None`` with the cache bypassed)."""
    if not enabled():
        return None, build()
    from passprice.errors import InputError

    try:
        schema_bytes = b"" if schema_path is None else _schema_bytes(schema_path)
    except InputError:
        return None, build()
    entry_key = key(f"{kind}+object\0{_library_stamp()}", schema_bytes, data)
    path = _object_path(entry_key)
    held = _held_object(path, entry_key, cls) if holds is None else None
    if held is not None:
        _identify(held, entry_key)
        return entry_key, held
    found = _stored_object(path, entry_key, cls)
    if found is not None and holds is not None and not _answers(holds, found):
        found = None
    if found is not None:
        _identify(found, entry_key)
        if holds is None:
            _hold(path, entry_key, found)
        return entry_key, found
    obj = build()
    _identify(obj, entry_key)
    if not _kept(data):
        _UNKEPT_KEYS.add(entry_key.encode("ascii"))
    elif path is not None and store:
        _store_object(path, entry_key, obj)
        if holds is None:
            _hold(path, entry_key, obj)
    return entry_key, obj


#: How many objects :func:`_hold` keeps for the process (the least recently served goes first).
HELD_MAX = 128

#: The objects entry files were read back as or written from in this process, by the entry file's path: the entry
#: key the object was stored under, the file's status then (device, inode, size, modification and change times) and
#: the object (:func:`_held_object`).
_HELD: OrderedDict[str, tuple[str, tuple[int, ...], object]] = OrderedDict()


def _status(path: Path) -> tuple[int, ...] | None:
    """The device, inode, size and modification and change times (ns) of the file at ``path``, or ``None`` where it
    cannot be read. Raises nothing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _hold(path: Path | None, entry_key: str, obj: object) -> None:
    """Keep ``obj``, read from or written to the entry file ``path`` under ``entry_key``, for :func:`_held_object`.
    Raises nothing."""
    if path is None:
        return
    status = _status(path)
    if status is None:
        return
    where = os.fspath(path)
    _HELD[where] = (entry_key, status, obj)
    _HELD.move_to_end(where)
    while len(_HELD) > HELD_MAX:
        _HELD.popitem(last=False)


def _held_object(path: Path | None, entry_key: str, cls: type[T]) -> T | None:
    """The object this process last read from or wrote to the entry file ``path`` under ``entry_key`` (its key names
    every byte the object is built from: the kind, the schema's bytes and the file's), while that file is unchanged
    (its device, inode, size and modification and change times: a change time no user can set back), else ``None``.
    Issue 16: the same objects (a checkpoint's header and its tensor table, a card) were unpickled again from the same
    entry by every command of a process, and by each side of a review. Served as a hit (:data:`_SERVED`: a command
    that fails after it runs again uncached, and :func:`served_again` forgets every object held). ``None`` while a
    command runs again (:func:`served_again`). Raises nothing."""
    if path is None or _again:
        return None
    where = os.fspath(path)
    held = _HELD.get(where)
    if held is None or held[0] != entry_key or not isinstance(held[2], cls):
        return None
    if _status(path) != held[1]:
        del _HELD[where]
        return None
    _HELD.move_to_end(where)
    _SERVED.append(path)
    return held[2]


def _object_key(kind: str, data: bytes) -> str:
    """The entry key of a ``kind`` object keyed by ``data`` alone (no schema): :func:`built`'s key form."""
    return key(f"{kind}+object\0{_library_stamp()}", b"", data)


def object_key(kind: str, data: bytes) -> str:
    """The entry key :func:`kept_object` and :func:`keep_object` file a ``kind`` object keyed by ``data`` under: for
    a caller that asks both with the same large ``data`` (a stack's fit inputs, about 1.7 MB each: hashed twice
    a cold ``check`` before cold38, session 35), to hash it once and pass the key to both. Raises nothing."""
    return _object_key(kind, data)


def kept_object(kind: str, data: bytes, cls: type[T], entry_key: str | None = None) -> T | None:
    """The ``cls`` object :func:`keep_object` kept under ``kind`` and ``data`` (bytes: whatever the object depends
    on), or ``None``: a bypassed cache, no entry, or one that is not whole and ours or not a ``cls`` (as
    :func:`built`'s entries). For an object whose key is known only once it is built (a GGUF header: its length and
    sha256 are read off the file's bytes), where :func:`built` cannot be used; the caller checks the object still
    holds for what it reads now. ``entry_key``: :func:`object_key` of ``kind`` and ``data`` when the caller has it
    (then ``data`` is not hashed again)."""
    if not enabled():
        return None
    entry_key = entry_key if entry_key is not None else _object_key(kind, data)
    return _stored_object(_object_path(entry_key), entry_key, cls)


def keep_object(kind: str, data: bytes, obj: object, entry_key: str | None = None) -> None:
    """Keep ``obj`` under ``kind`` and ``data`` for :func:`kept_object` (``objects/KEY.pickle``, as :func:`built`
    writes it); silently nothing when the cache is bypassed, ``data`` names a folder kept out (:func:`unkept`), the
    object does not pickle or the folder cannot be written. ``entry_key`` as :func:`kept_object`'s."""
    if not enabled() or not _kept(data):
        return
    entry_key = entry_key if entry_key is not None else _object_key(kind, data)
    path = _object_path(entry_key)
    if path is not None:
        _store_object(path, entry_key, obj)


def _whole(raw: bytes | None) -> bytes | None:
    """The body of an entry file's bytes ``raw`` (its first line the BLAKE2b digest of the rest), or ``None``
    when there is none or the checksum does not hold (a torn or foreign file: a miss)."""
    if raw is None:
        return None
    digest, newline, body = raw.partition(b"\n")
    if not newline or digest != blake2b(body).hexdigest().encode("ascii"):
        return None
    return body


def _stored_object(path: Path | str | None, entry_key: str, cls: type[T]) -> T | None:
    """The ``cls`` object the entry file ``path`` holds under ``entry_key``, or ``None`` (a miss): no file, or one
    that is not whole and ours (checksum, pickle, allowed classes, key), not a ``cls`` or not holding its class's
    writer rule (:func:`_holds`), or a command run again (:func:`served_again`)."""
    raw = _read_file(path) if path is not None and not _again else None
    if raw is None:
        return None
    # the body checked and read where it lies in the file's bytes, not copied out of them (a batch of 2,000 locks
    # is 70 MB)
    at = raw.find(b"\n")
    if at < 0 or raw[:at] != blake2b(memoryview(raw)[at + 1:]).hexdigest().encode("ascii"):
        return None
    try:
        stored_key, obj = _unpickle(raw, at + 1)
    except Exception:  # a damaged or foreign entry, whatever it raises, is a miss
        return None
    if stored_key == entry_key and isinstance(obj, cls) and _holds(obj):
        _SERVED.append(path)
        return obj
    return None


def _answers(holds: Callable[[T], bool], obj: T) -> bool:
    """``holds(obj)`` (:func:`built`'s ``holds``), ``False`` where it raises. Raises nothing."""
    try:
        return bool(holds(obj))
    except Exception:
        return False


def _holds(obj: object) -> bool:
    """Whether a served object holds its class's writer rule (:func:`passprice.entryshape.holds`: a tuple one item
    short or long that the code would take for values, issue 13); the module imported when an object is first
    served. Raises nothing."""
    from passprice.entryshape import holds

    return holds(obj)


#: Objects of a batched kind (:func:`built`'s ``batch``) a snapshot reads from one folder through their own entry
#: files before the rest go to the folder's batch entry: a command that reads a serving or a few keeps one small entry
#: each and never reads a batch of thousands.
BATCH_AFTER = 16


class _Batch:
    """The objects of one ``kind`` built from the files of one folder (``folder``) in one snapshot, past the first
    :data:`BATCH_AFTER`: kept in one entry, ``objects/KEY.pickle``, whose key is :func:`key`'s over the kind (with
    the library stamp), the schema and the folder's path. It holds ``(KEY, "shared-chunks", N)``, the objects the
    chunks share, and N pickles of ``{entry
    key: object}`` (:func:`_write_batch`: :data:`BATCH_CHUNK` objects a pickle), after the BLAKE2b digest of the
    pickles, as an object entry holds its one; each object under the very key its own entry would have (the
    file's path and bytes, schema, kind, passprice, attrs and interpreter), so a changed file can only miss and a
    batch can answer for nothing its own entry could not. The batch is read at the first object asked of it, and
    written when the snapshot ends (:func:`passprice.snapshot.at_close`), only when something was missing from it:
    then with the objects this snapshot used, a file gone or changed since dropping out. An object missing from it
    is read from its own entry when one is there, else built (and not written to an entry of its own). A batch that
    is not whole and ours is ignored and rewritten, never an error; nothing is written for an object built from a
    file of an :func:`unkept` folder, or with ``store=False``."""

    def __init__(self, kind: str, schema_path: Path | None, folder: str) -> None:
        self.kind = kind
        self.schema_path = schema_path
        self.folder = folder
        self.seen = 0
        self.loaded: dict[str, Any] | None = None
        self.used: dict[str, Any] = {}
        self.missed = False
        self.prefix: str | None = None
        self.schema_bytes = b""
        self.batch_key = ""
        self.path: Path | None = None

    def _open(self) -> bool:
        """Read the batch entry (once); ``False`` when the cache is bypassed or its schema does not read."""
        if self.prefix is not None:
            return True
        if not enabled():
            return False
        from passprice import snapshot
        from passprice.errors import InputError

        try:
            schema_bytes = b"" if self.schema_path is None else _schema_bytes(self.schema_path)
        except InputError:
            return False
        self.prefix = f"{self.kind}+object\0{_library_stamp()}"
        self.schema_bytes = schema_bytes
        batch_key = key(f"{self.prefix}\0batch", schema_bytes, os.fsencode(self.folder))
        self.path = _object_path(batch_key)
        self.batch_key = batch_key
        stored = _read_batch(self.path, batch_key)
        self.loaded = stored if stored is not None else {}
        snapshot.at_close(self._write)
        return True

    def built(self, data: bytes, build: Callable[[], T], cls: type[T], store: bool) -> T:
        """:func:`built`'s object for a file of the folder holding ``data``, from the batch when it holds it. It is
        given no :func:`identity`: nothing is computed from a batched object alone, and thousands of them listed
        would push out the checkpoint headers whose identities key the pass shapes and decode steps."""
        if not self._open():
            return build()
        assert self.loaded is not None
        entry_key = key(self.prefix or "", self.schema_bytes, data)
        obj = self.loaded.get(entry_key)
        if isinstance(obj, cls) and _holds(obj):
            self.used[entry_key] = obj
        else:
            own = None if self.path is None else os.path.join(self.path.parent, f"{entry_key}.pickle")
            obj = _stored_object(own, entry_key, cls)
            if obj is None:
                obj = build()
            if store and _kept(data):
                self.used[entry_key] = obj
                self.missed = True
        return obj

    def _write(self) -> None:
        """Write the batch of the objects used, when one was missing from it; silently nothing when it cannot."""
        if not self.missed or self.path is None or not enabled() or _failed:  # a failed run's (served_again)
            return
        import pickle

        from passprice.errors import InputError
        from passprice.files import make_folder

        try:
            make_folder(self.path.parent)
            _write_batch(self.path, self.batch_key, self.used)
        except (InputError, OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return
        _prune(self.path.parent)


#: Folders (as bytes, ending in a separator) whose files' objects are not stored: a revision ``diff`` copies into a
#: temporary folder lives one process, and objects keyed by its paths would never be asked for again, only fill the
#: cache until the oldest half — the registry's own, still wanted — is pruned.
_UNKEPT: list[bytes] = []
#: The entry keys of objects built from files under :data:`_UNKEPT` folders (:func:`identity`): an object computed from
#: one alone (a pass shape, a decode step: its key's data starts with that identity) is not stored either.
_UNKEPT_KEYS: set[bytes] = set()


@contextlib.contextmanager
def unkept(folder: Path) -> Iterator[None]:
    """Until the ``with`` ends, an object built from a file under ``folder`` (whose key starts with its path, as a
    serving's, card's, checkpoint's or lock's does), or computed from such an object alone (keyed by its
    :func:`identity`), is built and used but not stored."""
    prefix = os.fsencode(os.path.join(folder, ""))
    _UNKEPT.append(prefix)
    try:
        yield
    finally:
        _UNKEPT.remove(prefix)
        if not _UNKEPT:
            _UNKEPT_KEYS.clear()


def _kept(data: bytes) -> bool:
    """Whether an object whose key covers ``data`` may be stored (:func:`unkept`)."""
    if not _UNKEPT:
        return True
    if any(data.startswith(prefix) for prefix in _UNKEPT):
        return False
    return data.partition(b"\0")[0] not in _UNKEPT_KEYS


def _identify(obj: object, entry_key: str) -> None:
    """List ``obj`` as built under ``entry_key`` (:func:`identity`), forgetting the oldest past
    :data:`_IDENTITIES_KEPT` (an object no longer listed has no identity: what is computed from it is not kept)."""
    _IDENTITIES[id(obj)] = (obj, entry_key)
    while len(_IDENTITIES) > _IDENTITIES_KEPT:
        del _IDENTITIES[next(iter(_IDENTITIES))]


def _object_path(entry_key: str) -> Path | None:
    try:
        return cache_dir() / "objects" / f"{entry_key}.pickle"
    except RuntimeError:  # no home folder to find the cache in
        return None


def _store_object(path: Path, entry_key: str, obj: object) -> None:
    """Write ``(entry_key, obj)`` pickled to ``path`` atomically; silently nothing when it does not pickle or the
    folder cannot be written."""
    import pickle

    from passprice.errors import InputError
    from passprice.files import make_folder

    try:
        body = pickle.dumps((entry_key, obj), protocol=_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return
    try:
        make_folder(path.parent)
        _write_entry(path, blake2b(body).hexdigest().encode("ascii") + b"\n" + body)
    except (InputError, OSError):
        return
    _prune(path.parent)
