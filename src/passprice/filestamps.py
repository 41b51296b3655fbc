"""A file's bytes, where they are only a cache key, are named by the digest recorded for its status when that status
vouches for them — git's racy-clean rule — and hashed again otherwise.

The cache keys a file's validated document or built object by the BLAKE2b digest of its bytes
(:func:`passprice.digests.blake2b_digest`, :mod:`passprice.cache`). Hashing them on every run was 35 % of a warm
``price`` under 1,000 locks (docs/PERFORMANCE.md, scale38). Here a file read by :func:`passprice.files.read_regular`
whose bytes were hashed before is named by the digest recorded then, unhashed, when all of these hold:

- its status now (device and inode, the record's key; size, modification and change times in nanoseconds, ``fstat``
  of the open file before and after the read, the two equal) is the one recorded;
- when it was recorded, the file had last changed (``ctime``, and ``mtime``) more than :data:`TRUST_NS` before the
  clock was read ahead of the read whose bytes were hashed (:func:`racy`: 100 ms where the file system keeps
  nanoseconds, 3 s where it keeps whole seconds). A later write, in place, of the same size, moves ``ctime`` to the
  kernel's clock at that write, later than the read less one tick of that clock (at most 10 ms), so it cannot equal
  the recorded one; nor can a ``utime`` putting an old ``mtime`` back, which moves ``ctime`` too (no user can set
  ``ctime``). A file that changed within the margin is *racily clean* (git's word): its status is not recorded, so it
  is hashed on every read until it has aged. This is git's rule (Documentation/technical/racy-git.adoc in git's
  repository: an index entry whose ``st_mtime`` is not older than the index file is compared by content), with
  the moment of the read in place of the index file's ``mtime`` and ``ctime`` beside ``mtime``, as the result memo
  (:mod:`passprice.memo`) and the code stamp (:func:`passprice.cache.file_stamp`) apply it;
- the file lies on a file system that keeps ``ctime`` itself (:func:`passprice.memo.keeps_ctime`: its type, read
  from the mount table, is one of :data:`passprice.memo.KEEPS_CTIME`). Where ``ctime`` follows ``mtime`` (FAT,
  exFAT, NTFS, sshfs and other FUSE, network file systems), a same-size edit with its ``mtime`` put back leaves size,
  ``mtime`` and ``ctime`` all unchanged; there, and where the type cannot be told, no record is made or used;
- the record is this passprice's: its file's key is the BLAKE2b of :data:`FORMAT`, the package's version and the
  code stamp of its modules (:func:`passprice.cache._code_stamp`), so a record written by another passprice, or by
  this checkout before an edit of its code, is never read (another schema changes no file's digest: it is in every
  cache key beside the file's, and the schema file's own bytes are named by this rule like any other file's).

Only digests that are a cache key are named so. A digest that is evidence is always computed from the bytes: a lock's
recorded ``sha256`` of its checkpoint entry, card and pricing code (:mod:`passprice.locks`, checked by ``check``,
``review`` and ``reproduce``), a GGUF header's ``sha256``, the result memo's ``sha256`` of each file it read, and the
checksum each cache entry carries of its own body (which tells a torn or altered entry). A file under
:data:`MIN_BYTES` or over :data:`passprice.digests.LARGE` is hashed as ever.

The records are one file in passprice's cache folder, ``stamps/KEY.stamps``: the BLAKE2b digest (hex) of the rest,
a newline, then fixed-size little-endian records: a head (:data:`HEAD`: the magic :data:`MAGIC`, ``KEY`` in ASCII,
``NS`` and the number of records) and that many records of :data:`RECORD` bytes, in columns (devices, inodes, sizes,
``mtime_ns``-s and ``ctime_ns``-s, 8 bytes each, then the 32-byte digests: read by C loops, :mod:`array`), ``NS`` the
clock when it was written: a process whose
clock reads earlier (the clock was set back, so the kernel may stamp a change with a time it stamped before) drops
every record. Nothing in the file is unmarshalled: the file's length must be exactly the head's plus the stated
number of records' (at most :data:`MAX_RECORDS`), checked before a record is built, so a load allocates a fixed
amount a record and no content makes it run longer or larger (it was :mod:`marshal`: a forged 133-byte file whose
body declared a tuple of 2^31 items made ``price`` take 6.3 s, and 16.8 GB in bare Python; session 38, attack66). It
is read once a process, at the first file read, as every entry is (:func:`passprice.cachefolder.read`: a regular file
of the user's that no one else may write), and written when the process exits when it learned a record, through a
private temporary file and a rename (a concurrent run sees a whole file; the last writer's records win, the other's
are learned again). A file that is torn, altered, foreign or of another shape (of another layout, a marshalled one of
an older passprice among them: its key names another :data:`FORMAT`, and its magic is not this one) is ignored (every
file is hashed) and replaced, never an error; so is one larger than :data:`MAX_FILE_BYTES` (not read).
``--no-cache`` and ``PASSPRICE_NO_CACHE`` bypass it with the rest of the cache.

A file read from one of passprice's own temporary folders (``TMPDIR/passprice-*``: the private copies of BASE and
HEAD a review writes and removes, :mod:`passprice.review`) is recorded for the rest of the process only, never written:
its folder is gone when the process ends, so its record could never name it again, and each review added about 25
such records, which every later process read and rewrote (a full file, :data:`MAX_RECORDS`, costs about 20 ms a
process; session 37, suite43).
"""

from __future__ import annotations

import contextlib
import functools
import os
import struct
import sys
import time
from array import array
from operator import itemgetter
from pathlib import Path
from typing import Any

from passprice import digests

#: The layout of a record file and the rule its records were made by; bump it when either changes (it is in the
#: file's key, so a file of another layout is never read: 2 was marshalled).
FORMAT = "passprice-stamps-3"
#: The first bytes of a record file's body.
MAGIC = b"PPSTAMP3"
#: A record file's head: :data:`MAGIC`, its key (64 hex digits in ASCII), the clock it was written at (ns since the
#: epoch) and its number of records.
HEAD = struct.Struct("<8s64sqI")
#: A record's bytes: device, inode, size (unsigned), ``mtime_ns`` and ``ctime_ns`` (signed), 8 bytes each, each in
#: its column (:func:`_body`), and the BLAKE2b digest (32 bytes).
RECORD = 72
#: The array type codes of the numbers' columns (C's ``long long``: 8 bytes wherever CPython builds).
_COLUMNS = "QQQqq"
#: How long (ns) before the read whose bytes were hashed a file must have last changed for its status to be recorded:
#: the first figure where ``ctime`` has nanoseconds (the kernel's clock moves a tick of at most 10 ms at a time), the
#: second where it is a whole number of seconds (ext3, FAT). The result memo's :data:`passprice.memo.TRUST_NS`.
TRUST_NS = (100_000_000, 3_000_000_000)
#: Files smaller than this are hashed on every read: hashing 2 KB (about 26,000 instructions) costs about what a
#: record's look-up does.
MIN_BYTES = 2048
#: Records kept: past this, the records learned longest ago are dropped when the file is written (72 bytes a record:
#: 1.18 MB at the bound, :data:`MAX_FILE_BYTES`).
MAX_RECORDS = 16384
#: Record files kept in ``stamps/`` (one a passprice version and code stamp): past this the oldest are removed.
MAX_FILES = 8
#: The largest record file read: the checksum line (64 hex digits and a newline), the head and :data:`MAX_RECORDS`
#: records (65 + 84 + 16,384 × 72 = 1,179,797 bytes). A larger one is no file this passprice's :func:`flush` wrote:
#: it is not read (its size is taken from the open descriptor), and is replaced when a record is learned.
MAX_FILE_BYTES = 65 + HEAD.size + MAX_RECORDS * RECORD

#: The records read (``None`` until the first file read of the process, then a dict), the record file's path (``""``
#: when there is no cache folder or the cache is bypassed), whether a record was learned since, and
#: :mod:`passprice.cache` once loaded (its ``--no-cache`` switch looked at on every read; the environment's
#: ``PASSPRICE_NO_CACHE`` when the records are read: looking it up on every read was a third of this module's cost).
_records: dict[Any, Any] | None = None
_path = ""
_learned = False
_cache: Any = None
#: The (device, inode) keys learned this process for files of passprice's own temporary folders (:func:`_scratch`):
#: looked up like any other record until the process ends, never written (:func:`flush` drops them).
_transient: set[tuple[int, int]] = set()
#: The clock: ``time.time_ns`` (a test moves it forward to make a file it just wrote an old one).
_clock = time.time_ns


def _keeps_ctime(dev: int, fd: int | None) -> bool:
    """Whether device ``dev``'s file system keeps ``ctime`` itself (:func:`passprice.memo.keeps_ctime`, once a
    process a device; :mod:`passprice.memo` is loaded by then: the code stamp in every record file's key uses it)."""
    from passprice.memo import keeps_ctime

    return keeps_ctime(dev, fd)


def racy(st: os.stat_result, since_ns: int) -> bool:
    """Whether a file of status ``st`` read at ``since_ns`` (ns since the epoch, read before the read) is *racily
    clean*: it last changed (``st_ctime_ns`` or ``st_mtime_ns``) less than :data:`TRUST_NS` before ``since_ns``, or
    after it (a clock set back, a time stamped in the future). The margin is the fine one unless ``ctime`` is a whole
    number of seconds. Such a status is never recorded. Raises nothing."""
    ctime = st.st_ctime_ns
    window = TRUST_NS[ctime % 1_000_000_000 == 0]
    return ctime >= since_ns - window or st.st_mtime_ns >= since_ns - window


def may_learn(before: os.stat_result) -> bool:
    """Whether a read of a file of status ``before`` may record its digest (:func:`seen`): the cache not bypassed and
    no record held for that status already (a warm read is named by its record, unasked). Only then is
    :func:`passprice.memo.unwritten` asked (about 20 µs a file under load: 3 ``fstat``-s). Raises nothing."""
    records = _records if _records is not None and _path and _cache._enabled else _loaded()
    if records is None:
        return False
    found = records.get((before.st_dev, before.st_ino))
    return not (type(found) is tuple and len(found) == 4
                and found[:3] == (before.st_size, before.st_mtime_ns, before.st_ctime_ns))


def clock() -> int:
    """The moment (ns since the epoch) a read starts at, as :func:`seen` is given it: read before the file is
    ``fstat``-ed."""
    return _clock()


def seen(
    before: os.stat_result, after: os.stat_result, since_ns: int, data: bytes, fd: int | None = None,
    path: str = "", unwritten: bool = False,
) -> None:
    """Note that ``data`` was read from a regular file whose status was ``before`` just before the read and ``after``
    just after it (``fstat`` of the open file), the read begun at ``since_ns`` (:func:`clock`): when a record of this
    passprice's holds for that status, ``data`` is named by its digest from now on
    (:func:`passprice.digests.vouch`, so :func:`~passprice.digests.blake2b_digest` does not hash it); else, when the
    status is not :func:`racy`, the digest ``data`` is first hashed to is recorded for it (written when the process
    exits; kept for this process only when ``path``, the file's name as it was opened, is in one of passprice's
    own temporary folders: :func:`_scratch`). Nothing when the cache is bypassed, the two statuses differ (written
    during the read), ``data`` is under :data:`MIN_BYTES` or over :data:`passprice.digests.LARGE`, or the file
    system does not keep ``ctime``
    itself (:func:`passprice.memo.keeps_ctime`, told by the device or, for one the mount table does not list, by the
    open descriptor ``fd``). A digest is recorded only when ``unwritten``: no writer held the file when the read
    began (:func:`passprice.memo.unwritten`, asked after ``since_ns`` and before the read: a write through a held
    writable mapping moves no time; attack67). Raises nothing."""
    size = len(data)
    if size < MIN_BYTES or size > digests.LARGE:
        return
    # (one status taken apart once: this runs for every file read, about 15,000 instructions a call as first written)
    stamp = (before.st_size, before.st_mtime_ns, before.st_ctime_ns)
    where = (before.st_dev, before.st_ino)
    if stamp != (after.st_size, after.st_mtime_ns, after.st_ctime_ns) or where != (after.st_dev, after.st_ino):
        return
    records = _records if _records is not None and _path and _cache._enabled else _loaded()
    if records is None or not _keeps_ctime(where[0], fd):
        return
    found = records.get(where)
    if found is not None and type(found) is tuple and len(found) == 4 and found[:3] == stamp and size == stamp[0]:
        digest = found[3]
        if type(digest) is bytes and len(digest) == 32:
            digests.vouch(data, digest)
            return
    if unwritten and not racy(before, since_ns):
        digests.report(data, functools.partial(_learn, where, stamp, path))


def _scratch(path: str) -> bool:
    """Whether ``path`` (a file's name as it was opened) lies in one of passprice's own temporary folders: a folder
    ``passprice-*`` of :func:`tempfile.gettempdir`, where every one passprice makes is made (``tempfile.mkdtemp`` and
    ``TemporaryDirectory`` with the prefix ``passprice-``). The folder is the one :mod:`tempfile` found when this
    process made one; none made (``tempfile.tempdir`` unset), none is asked for: :func:`tempfile.gettempdir` writes a
    probe file, which the result memo takes for a write of the run's (:mod:`passprice.memo`). Raises nothing."""
    folder = getattr(sys.modules.get("tempfile"), "tempdir", None)
    if not isinstance(folder, str):
        return False
    try:
        return os.path.abspath(path).startswith(os.path.join(folder, "passprice-"))
    except ValueError:  # a name no path can hold
        return False


def _learn(where: tuple[int, int], stamp: tuple[int, int, int], path: str, digest: bytes) -> None:
    """Record ``digest`` for the file ``where`` (device, inode) of status ``stamp``, to be written at exit unless
    ``path`` is in one of passprice's own temporary folders (:func:`_scratch`: kept for this process only)."""
    if _records is None:
        return
    _records.pop(where, None)  # learned last: dropped last past MAX_RECORDS
    _records[where] = (*stamp, digest)
    if path and _scratch(path):
        _transient.add(where)
        return
    _transient.discard(where)
    _trimmed()


def _key() -> str:
    """The record file's key: BLAKE2b of :data:`FORMAT`, passprice's version and its code stamp."""
    import passprice
    from passprice import cache

    parts = (FORMAT, passprice.__version__, cache._code_stamp())
    return digests.blake2b("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _loaded() -> dict[Any, Any] | None:
    """The records of this passprice (read once a process; ``{}`` when there are none or the file is not whole and
    ours), or ``None`` when the cache is bypassed or has no folder."""
    global _records, _path, _cache
    from passprice import cache

    _cache = cache
    if not cache.enabled():
        return None
    if _records is not None:
        return _records if _path else None
    _records = {}
    try:
        key = _key()
        _path = os.path.join(cache.cache_dir(), "stamps", f"{key}.stamps")
    except (RuntimeError, OSError):  # no home folder to find the cache in
        _path = ""
        return None
    from passprice import cachefolder

    raw = cachefolder.read(_path, MAX_FILE_BYTES)
    if raw is None:
        return _records
    kept = _parsed(raw, key)
    if kept is None:
        return _records
    written, _records = kept
    if clock() < written:
        # The clock is behind the moment the records were written (set back: NTP stepping it, a VM restored): the
        # kernel will stamp changes with times it has stamped before, so a same-size edit may repeat a recorded
        # status to the tick (on a whole-second file system, to the second). Every record is dropped (attack64).
        _records = {}
    return _records


def _parsed(raw: bytes, key: str) -> tuple[int, dict[Any, Any]] | None:
    """The clock and the records of a record file's bytes ``raw`` whose key is ``key``, or ``None`` when they are not
    one whole file of this layout: the checksum line does not hold, the body's length is not exactly :data:`HEAD`'s
    plus its stated number of records' (:data:`RECORD` bytes each, at most :data:`MAX_RECORDS`: checked before a
    record is built), or its magic or key is another. Allocates a fixed amount a record (about 7 times its 72 bytes:
    8.07 MB at the peak for a full 1.18 MB file), never what a stated length alone asks for. Raises nothing."""
    checksum, newline, body = raw.partition(b"\n")
    if not newline or len(body) < HEAD.size or checksum != digests.blake2b(body).hexdigest().encode("ascii"):
        return None
    magic, own, written, count = HEAD.unpack_from(body)
    if (magic != MAGIC or own != key.encode("ascii") or count > MAX_RECORDS
            or len(body) != HEAD.size + count * RECORD):
        return None
    view = memoryview(body)
    columns = []
    for at, code in enumerate(_COLUMNS):  # a column of 8-byte numbers each: C loops, where a struct per record took
        column = array(code)             # twice marshal's time (20.7 against 9.7 ms for a full file)
        column.frombytes(view[HEAD.size + at * 8 * count:HEAD.size + (at + 1) * 8 * count])
        if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
            column.byteswap()
        columns.append(column)
    dev, ino, size, mtime, ctime = columns
    start = HEAD.size + 40 * count
    found = [body[i:i + 32] for i in range(start, start + 32 * count, 32)]
    return written, dict(zip(zip(dev, ino, strict=True), zip(size, mtime, ctime, found, strict=True), strict=True))


def _body(key: str, written: int, records: dict[Any, Any]) -> bytes:
    """A record file's body (its checksum line aside) for key ``key`` (64 hex digits), the clock ``written`` (ns) and
    ``records`` (in their order): :data:`HEAD`, then the records' devices, inodes, sizes, ``mtime_ns``-s and
    ``ctime_ns``-s as columns of 8-byte little-endian numbers (unsigned, the times signed), then their digests (32
    bytes each). A record none fits (a time past 2262, a number past 64 bits, a digest not of 32 bytes) is left out.
    Raises nothing."""
    try:
        return _packed(key, written, records)
    except (OverflowError, TypeError, ValueError):  # a record that does not fit: each is looked at
        return _packed(key, written, {w: v for w, v in records.items() if _fits(w, v)})


def _packed(key: str, written: int, records: dict[Any, Any]) -> bytes:
    """:func:`_body` of ``records`` all of which fit. Raises :class:`OverflowError`, :class:`TypeError` or
    :class:`ValueError` (one does not)."""
    wheres, values = list(records), list(records.values())
    columns = [array(code, list(map(itemgetter(at), rows)))  # C loops: a tuple a record made it 4.5 × marshal's time
               for code, at, rows in zip(_COLUMNS, (0, 1, 0, 1, 2), (wheres, wheres, values, values, values),
                                         strict=True)]
    found = list(map(itemgetter(3), values))
    if not set(map(len, found)) <= {32}:  # (b"".join below refuses what holds no bytes)
        raise ValueError("a digest not of 32 bytes")
    if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
        for column in columns:
            column.byteswap()
    return (HEAD.pack(MAGIC, key.encode("ascii"), written, len(found)) + b"".join(c.tobytes() for c in columns)
            + b"".join(found))


def _fits(where: Any, value: Any) -> bool:
    """Whether record ``where`` → ``value`` fits the file's columns (:func:`_body`). Raises nothing."""
    try:
        dev, ino = where
        size, mtime, ctime, digest = value
    except (TypeError, ValueError):
        return False
    return (all(type(n) is int and 0 <= n < 1 << 64 for n in (dev, ino, size))
            and all(type(n) is int and -(1 << 63) <= n < 1 << 63 for n in (mtime, ctime))
            and type(digest) is bytes and len(digest) == 32)


def _trimmed() -> None:
    """Have :func:`flush` write the records at exit, as when one is learned."""
    global _learned
    if not _learned:
        _learned = True
        import atexit

        atexit.register(flush)


def flush() -> None:
    """Write the records (those read and those learned, at most :data:`MAX_RECORDS`, the last learned kept, none of a
    temporary folder's files: :func:`_scratch`) when one was learned, then forget them: the next file read reads the
    file again (what a new process does). Past :data:`MAX_FILES` record files, the oldest are removed. Silently
    nothing written when the folder cannot be. Raises nothing."""
    global _records, _path, _learned
    records, path, learned = _records, _path, _learned
    _records, _path, _learned = None, "", False
    transient = set(_transient)
    _transient.clear()
    if not learned or records is None or not path:
        return
    for where in transient:  # files of a temporary folder passprice has removed (or is removing)
        records.pop(where, None)
    from passprice import cache
    from passprice.cachefolder import make_folders

    if not cache.enabled():
        return
    if len(records) > MAX_RECORDS:
        records = dict(list(records.items())[-MAX_RECORDS:])
    body = _body(os.path.basename(path)[: -len(".stamps")], clock(), records)
    folder = os.path.dirname(path)
    try:
        make_folders(folder, 0o700)
        cache._write_entry(Path(path), digests.blake2b(body).hexdigest().encode("ascii") + b"\n" + body)
    except OSError:
        return
    _prune(folder)


def _prune(folder: str) -> None:
    """Remove the oldest record files of ``folder`` past :data:`MAX_FILES` (only names this module writes)."""
    with contextlib.suppress(OSError):
        names = [n for n in os.listdir(folder) if n.endswith(".stamps") and len(n) == 64 + len(".stamps")]
        if len(names) <= MAX_FILES:
            return
        aged = []
        for name in names:
            with contextlib.suppress(OSError):
                aged.append((os.stat(os.path.join(folder, name)).st_mtime_ns, name))
        aged.sort()
        for _, name in aged[: len(aged) - MAX_FILES]:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
