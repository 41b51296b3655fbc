"""A file that has not changed is neither parsed nor validated again: its validated document is kept in the user's
cache folder under a key made of everything the document depends on, so a change to any of them can only miss.

The key is the sha256 of: the cache's format, the passprice version (and the size and modification time of the
package's modules, so an edited source checkout misses too), the kind of entry (``card``, ``checkpoint`` …,
``lock+digests`` for a lock whose digests were checked too, ``checkpoint+summary`` for a checkpoint's listing row),
the sha256 of its schema's bytes, and the sha256 of the file's own bytes. The file's *content* is hashed on every
read, never trusted from its size or modification time, so an edit of the same size made within the same second
still misses. Only a document that parsed, matched its schema and passed its kind's checks is stored, so a hit is
always a valid document; an invalid file is parsed and refused again on every run.

An entry is one file ``documents/KEY.json``: a first line holding the sha256 of the rest, then the document as JSON
(``{"key": KEY, "document": …}``). An entry that is truncated, altered, unreadable or for another key is ignored
(and overwritten when the document is stored again), never an error; so is one that is not a regular file (a FIFO,
which would block the read, or a link to ``/dev/zero``, which has no end) or is larger than
:data:`MAX_ENTRY_BYTES`: it is checked before a byte is read, as every file passprice reads. Entries are written
through a temporary file and a rename (:func:`passprice.files.write_atomically`), so concurrent runs see a whole entry
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

import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passprice import __version__

#: The layout of an entry; bump it when the entry's format or the meaning of a document changes.
FORMAT = "passprice-cache-1"
#: Entries kept before the oldest half is removed.
MAX_ENTRIES = 512
#: The largest entry read: twice the largest TOML file passprice reads (its document as JSON is about its size).
MAX_ENTRY_BYTES = 128 << 20

_enabled = True


def configure(enabled: bool) -> None:
    """Use the cache (``True``, the default) or bypass it (``passprice --no-cache``) for the rest of the process."""
    global _enabled
    _enabled = enabled


def enabled() -> bool:
    """Whether documents are read from and stored in the cache: not after ``configure(False)``, nor when the
    environment sets ``PASSPRICE_NO_CACHE`` to anything but ``""`` or ``0``."""
    return _enabled and os.environ.get("PASSPRICE_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    """The folder of passprice's cache: ``$PASSPRICE_CACHE_DIR`` (when absolute), else the user cache folder of the
    platform (XDG
    Base Directory specification on Linux and other POSIX systems; ``~/Library/Caches`` on macOS;
    ``%LOCALAPPDATA%`` on Windows), then ``passprice``."""
    explicit = os.environ.get("PASSPRICE_CACHE_DIR")
    if explicit and os.path.isabs(explicit):
        return Path(explicit)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "passprice" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "passprice"
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The specification: a relative path in $XDG_CACHE_HOME is invalid and is ignored.
    base_dir = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base_dir / "passprice"


@functools.cache
def _code_stamp() -> str:
    """Name, size and modification time of every module of the package, once a process: what a stored entry is
    (a validated document, a lock whose digests were checked, a checkpoint's listing row) is decided by code, and a
    source checkout edited without a version change must miss too."""
    parts = []
    try:
        with os.scandir(Path(__file__).parent) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        parts.append("?")
    return ",".join(sorted(parts))


def key(kind: str, schema_bytes: bytes, data: bytes) -> str:
    """The cache key of a ``kind`` file holding ``data`` (bytes), validated against a schema of ``schema_bytes``:
    a sha256 hex digest over the cache format, passprice's version and code stamp, the kind, and the sha256 digests
    of the schema's and the file's bytes."""
    h = hashlib.sha256()
    for part in (FORMAT, __version__, _code_stamp(), kind):
        h.update(part.encode("utf-8") + b"\0")
    h.update(hashlib.sha256(schema_bytes).digest())
    h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _entry_path(entry_key: str) -> Path:
    return cache_dir() / "documents" / f"{entry_key}.json"


def read(entry_key: str) -> dict[str, Any] | None:
    """The document stored under ``entry_key``, or ``None``: no entry, a bypassed cache, or an entry that is not
    whole and ours (a checksum or key that does not match, JSON that does not parse), which is then ignored."""
    if not enabled():
        return None
    raw = _read_entry(entry_key)
    if raw is None:
        return None
    digest, newline, body = raw.partition(b"\n")
    if not newline or digest != hashlib.sha256(body).hexdigest().encode("ascii"):
        return None
    try:
        entry = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != entry_key or not isinstance(entry.get("document"), dict):
        return None
    document: dict[str, Any] = entry["document"]
    return document


def _read_entry(entry_key: str) -> bytes | None:
    """The bytes of the entry file for ``entry_key``, or ``None`` (a miss): none there, no home folder to find the
    cache in, not a regular file (refused by :func:`passprice.files.open_regular` before it is opened for reading:
    a FIFO, a device, a link to either), larger than :data:`MAX_ENTRY_BYTES` (its size is read from the open
    descriptor before a byte of it), or unreadable."""
    import stat

    from passprice.errors import InputError
    from passprice.files import open_regular

    try:
        with open_regular(_entry_path(entry_key)) as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
                return None
            data = handle.read(MAX_ENTRY_BYTES + 1)
    except (InputError, OSError, ValueError, RuntimeError):  # RuntimeError: no home folder to find the cache in
        return None
    return data if len(data) <= MAX_ENTRY_BYTES else None


def store(entry_key: str, document: dict[str, Any]) -> None:
    """Keep ``document`` under ``entry_key``, written atomically; silently nothing when the cache is bypassed, the
    document does not convert to JSON exactly (a TOML date), or the folder cannot be written."""
    if not enabled():
        return
    from passprice.errors import InputError
    from passprice.files import make_folder, write_atomically

    try:
        body = json.dumps({"key": entry_key, "document": document}, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return
    data = body.encode("utf-8")
    try:
        path = _entry_path(entry_key)
    except RuntimeError:  # no home folder to put the cache in
        return
    try:
        make_folder(path.parent)  # the cache's own folder (a writer never creates a folder a user named)
        write_atomically(path, hashlib.sha256(data).hexdigest().encode("ascii") + b"\n" + data, force=True)
    except (InputError, OSError):
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Remove the older half of the entries when there are more than :data:`MAX_ENTRIES` (a concurrent run removing
    the same entries is harmless)."""
    try:
        entries = [p for p in folder.iterdir() if p.name.endswith(".json")]
        if len(entries) <= MAX_ENTRIES:
            return
        aged = []
        for p in entries:
            try:
                aged.append((p.stat().st_mtime_ns, p))
            except OSError:
                continue
        aged.sort()
        for _, p in aged[: len(aged) - MAX_ENTRIES // 2]:
            p.unlink(missing_ok=True)
    except OSError:
        return


def validated(
    kind: str, schema_path: Path, data: bytes, build: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """The validated document of a ``kind`` file holding ``data``: from the cache when an entry for the same bytes,
    schema (``schema_path``'s bytes), kind and passprice exists, else ``build()`` (which parses and validates, and
    raises on a bad file), stored for the next run. A schema that cannot be read is ``build``'s to report."""
    if not enabled():
        return build()
    from passprice.errors import InputError
    from passprice.files import read_regular

    try:
        schema_bytes = read_regular(schema_path, MAX_ENTRY_BYTES)  # a FIFO where a schema belongs is refused
    except InputError:
        return build()
    entry_key = key(kind, schema_bytes, data)
    document = read(entry_key)
    if document is not None:
        return document
    document = build()
    store(entry_key, document)
    return document
