"""A hash object is made without loading OpenSSL where the bytes are few: OpenSSL's sha256 hashes a megabyte in
about 0.8 ms on the project's machine but costs about 3 ms to load (``import hashlib`` initialises the library and
asks it for every algorithm), more than a warm price hashes with the interpreter's own implementations.

- :func:`sha256` is the digest locks and entries record (the same bytes whoever computes it): the interpreter's own
  ``_sha256`` (about 4.4 ns a byte) unless OpenSSL is loaded already or the data is large.
- :func:`blake2b` is what the cache keys and checks its own entries with (:mod:`passprice.cache`,
  :mod:`passprice.generated`): never recorded anywhere a user reads, so it need not be sha256; the interpreter's
  ``_blake2`` hashes about 1 GB/s, OpenSSL or not.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, cast


class Hash(Protocol):
    """A hash object, as :mod:`hashlib`'s: fed bytes, then read as bytes or hex."""

    def update(self, data: bytes, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> Hash: ...

#: Bytes past which :func:`sha256` loads OpenSSL: at about 3.6 ns a byte more than OpenSSL's, the interpreter's own
#: sha256 costs more than loading OpenSSL past about a megabyte.
LARGE = 1 << 20


def sha256(data: bytes = b"") -> Hash:
    """A sha256 hash object (``update``, ``digest``, ``hexdigest``, ``copy``) over ``data`` (bytes): OpenSSL's
    (:func:`hashlib.sha256`) when :mod:`hashlib` is imported already or ``data`` holds more than :data:`LARGE` bytes
    (a caller hashing much more later should use :mod:`hashlib` itself), else the interpreter's own ``_sha256``. The
    digest is FIPS 180-4's either way."""
    if "hashlib" not in sys.modules and len(data) <= LARGE:
        try:
            from _sha256 import sha256 as own  # type: ignore[import-not-found]
        except ImportError:  # pragma: no cover - an interpreter built without it
            pass
        else:
            return cast(Hash, own(data))
    import hashlib

    return hashlib.sha256(data)


def blake2b(data: bytes | memoryview = b"") -> Hash:
    """A BLAKE2b hash object of a 32-byte digest (RFC 7693) over ``data`` (bytes): the interpreter's ``_blake2``,
    which needs no OpenSSL (:func:`hashlib.blake2b` where it is missing)."""
    try:
        from _blake2 import blake2b as own
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b as own
    return cast(Hash, own(data, digest_size=32))


#: The bytes objects :func:`blake2b_digest` hashed last, each with its digest, by ``id``, the most recent last: at
#: most :data:`KEPT_DIGESTS` of them (each held, so its ``id`` names it while kept).
_recent: dict[int, tuple[bytes, bytes]] = {}
#: How many bytes objects :func:`blake2b_digest` keeps the digest of: a warm ``price`` under 1,000 locks of one
#: serving hashed its 40 KB checkpoint entry again for each lock, as each lock's bytes, hashed in between, took the
#: place of the one kept (issue 13, scale37).
KEPT_DIGESTS = 4


#: Bytes objects read from a file whose status vouches for their digest (:func:`vouch`), each with it; and bytes objects
#: whose digest, once hashed, is to be reported (:func:`report`), each with whom to tell. By ``id``, each object held
#: (so its ``id`` names it while kept), at most :data:`KEPT_NAMED` of each, the most recent last: a file's bytes are
#: hashed, if at all, soon after they are read.
_vouched: dict[int, tuple[bytes, bytes]] = {}
_reports: dict[int, tuple[bytes, Callable[[bytes], None]]] = {}
KEPT_NAMED = 8


def _hold(table: dict[int, Any], data: bytes, value: Any) -> None:
    table.pop(id(data), None)
    table[id(data)] = (data, value)
    while len(table) > KEPT_NAMED:
        table.pop(next(iter(table)), None)


def vouch(data: bytes, digest: bytes) -> None:
    """Name the bytes *object* ``data`` by ``digest`` (32 bytes): :func:`blake2b_digest` of it returns ``digest``
    without hashing it. Only for bytes read from a file whose status, recorded when its bytes were last hashed, says
    they are those bytes (:func:`passprice.filestamps.seen`: git's racy-clean rule), so only where a digest is a cache
    key, never where it is evidence (:func:`sha256`). Raises nothing."""
    _reports.pop(id(data), None)
    _hold(_vouched, data, digest)


def report(data: bytes, tell: Callable[[bytes], None]) -> None:
    """Call ``tell(digest)`` when :func:`blake2b_digest` first hashes the bytes *object* ``data`` (once; forgotten
    past :data:`KEPT_NAMED` later ones): how a file's digest is recorded for its status
    (:func:`passprice.filestamps.seen`) without hashing a file no key asks for. ``tell`` must raise nothing."""
    _hold(_reports, data, tell)


def blake2b_digest(data: bytes) -> bytes:
    """``blake2b(data).digest()`` (32 bytes), the last :data:`KEPT_DIGESTS` bytes *objects* hashed kept with their
    digests, so the same object asked for again is not hashed again: a file read inside a snapshot is named by its
    digest in the memo's key (:func:`passprice.snapshot.fingerprint`) and then in its cache key
    (:func:`passprice.cache.key`), two hashes of each of 2,000 cards' 14 KB (issue 13, scale36); a checkpoint entry
    read once a snapshot is named so for each of 1,000 locks, between which each lock's own bytes are hashed
    (scale37). Kept by identity (``is``) only: bytes are immutable, so the same object holds the same bytes; only
    objects of at most :data:`LARGE` bytes are held so. Raises nothing."""
    found = _recent.get(id(data))
    if found is not None and found[0] is data:
        _recent.pop(id(data), None)  # the most recent last
        _recent[id(data)] = found
        return found[1]
    if _vouched:
        named = _vouched.get(id(data))
        if named is not None and named[0] is data:
            _hold(_vouched, data, named[1])  # asked again: kept longer
            return named[1]
    digest = blake2b(data).digest()
    if _reports:
        told = _reports.get(id(data))
        if told is not None and told[0] is data:
            del _reports[id(data)]
            told[1](digest)
    if data and len(data) <= LARGE:
        _recent.pop(id(data), None)
        _recent[id(data)] = (data, digest)
        while len(_recent) > KEPT_DIGESTS:
            _recent.pop(next(iter(_recent)), None)
    return digest
