"""A read-only command's output is a function of its arguments, its environment, passprice's code and the bytes of
what it read: when none of these changed, the output it printed is replayed, never recomputed — and a run whose
dependencies cannot all be known is not kept.

What a replay rests on, each checked before a byte is replayed:

- **The key** (the entry's name): the sha256 of the memo's format, passprice's version and folder, the arguments,
  the working folder, the whole environment, whether standard input, output and error are terminals (and their
  sizes), the output streams' encodings, the interpreter (version, executable, ``sys.path``, flags, ``-X``
  and ``-W`` options) and the user and group ids.
- **The world stamp** (in the entry): every file and folder of the registry root the command read (found again as
  the run found it) and of the installed package (its modules, schemas, templates, embedded registry), every file
  the run opened elsewhere (recorded by an audit hook, :func:`sys.addaudithook`: the libraries' modules too, and each
  module's source), the folder of each, every folder it listed, each folder of ``sys.path``, and what each
  argument, and each name the run looked up by its status alone (``os.stat`` …, :mod:`passprice.memorecord`), names
  in the working folder (or, looked up, anywhere outside the trees and the standard library), as a probe (a file, a
  folder, nothing). A file is known by its
  status — device, inode, size, modification and change times (``ctime``, which no user can set) — and, when the run
  read it (or it changed just before), the sha256 of its bytes; a folder by its status and the names and kinds of
  its entries. At lookup, a file whose status is the
  one recorded, and was already older than the run when it was recorded, is unchanged (any write since would have
  moved its ``ctime``: the racy-clean rule git applies to its index) when its file system keeps ``ctime`` itself
  (:func:`keeps_ctime`); any other is hashed again (so a card edited to
  the same size within the same second misses on its content; a file the run did not read, and so has no digest,
  misses), a folder listed again, and one difference is a miss.
- **What is never kept**: a command not in :data:`COMMANDS`, or given an option that writes (``-o``, ``--plot``,
  ``--force``, ``--update``) or reads git (``--history``) or standard input (``-``), ``--no-cache`` or
  ``PASSPRICE_NO_CACHE``; a run that started a process, opened a socket, changed folder, read standard input, opened
  anything but a regular file or folder, wrote anywhere but the cache folder, exited with a status other than 0,
  printed more than :data:`MAX_OUTPUT` bytes or failed to print; a run during which, or shortly before which
  (:data:`KEEP_NS`), a file it read or a folder it listed changed, since what it read then cannot be told from what is
  there after. No command of passprice reads the clock (the memo's own window aside) but to refuse a date after today
  (:data:`passprice.schema.TODAY`), which only a refused run, never kept, depends on.

An entry is ``memo/KEY.memo`` in passprice's cache folder (:mod:`passprice.cachefolder`): the sha256 of the rest,
then the entry marshalled. It is written and read by :mod:`passprice.cache`'s rules: a private file written
through a temporary file and a rename, read only when it is a regular file of the user's that no one else may
write; a truncated, altered, foreign or unreadable entry is a miss and is overwritten; past :data:`MAX_ENTRIES`
entries the older half is removed. The lookup imports nothing but this module and :mod:`passprice.cachefolder`
(no click, attrs, or the rest of passprice): a hit costs the interpreter's start, one entry's read and a ``stat``
of each file recorded.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The layout of an entry and the meaning of its key; bump it when either changes.
FORMAT = "passprice-memo-3"
#: The commands whose output is kept: each reads the registry and prints, and writes nothing (checked one by one in
#: ``tests/test_memo.py``). ``fact show`` is ``fact`` then ``show``.
COMMANDS = frozenset({
    "audit", "best", "cards", "check", "checkpoints", "compare", "explain", "fact show", "facts", "header", "kv",
    "max-batch", "price", "reproduce", "roofline", "servings", "simulate", "sources", "speculate", "sweep", "validate",
})
#: Commands that draw a progress bar on a terminal (its text moves with the clock): kept only when standard error
#: is not one.
_PROGRESS = frozenset({"sweep", "simulate"})
#: Options that write a file, read git or standard input: a command given one is never kept.
_NEVER = frozenset({"--output", "--plot", "--force", "--update", "--history", "--no-cache", "-"})
#: The most output (standard output and error together, bytes) a kept run may have printed.
MAX_OUTPUT = 1 << 20
#: A file larger than this is known by its status alone (the 253 MB GGUF file ``header`` reads): never hashed, so
#: any change to its status is a miss.
BIG = 16 << 20
#: The largest entry read (bytes).
MAX_ENTRY_BYTES = 64 << 20
#: Entries kept before the older half is removed.
MAX_ENTRIES = 1024
#: How long (ns) before a run a file or folder must have last changed (``ctime``) for its status to vouch for it at
#: a later lookup: the first figure for a file system that keeps nanoseconds (its clock moves a tick of at most
#: 10 ms at a time), the second for one that keeps whole seconds (``ctime`` a whole number of seconds: ext3, FAT).
TRUST_NS = (100_000_000, 3_000_000_000)
#: How long (ns) before a run a file it read or a folder it listed must have last changed for the run to be kept
#: (the same rule: a change between the run's read and the stamp taken after it would move the ``ctime``).
KEEP_NS = (100_000_000, 3_000_000_000)

#: The file system types (as ``/proc/self/mountinfo`` names them) whose kernel driver keeps ``ctime`` itself: it sets
#: it to the kernel's clock at every write and every change of status (a ``utime`` putting an old ``mtime`` back
#: included), keeps it apart from ``mtime`` on disk, and lets no user set it. On any other — FAT (``vfat``,
#: ``msdos``: Linux keeps its ``ctime`` identical to ``mtime``, since FAT has no change time), ``exfat``, NTFS
#: (``ntfs3``, ``fuseblk``: Windows lets a program set its change time), ``fuse.*`` (``sshfs`` reports ``mtime`` as
#: ``ctime``: SFTP carries no change time), network and pass-through file systems (``nfs``, ``cifs``, ``smb3``,
#: ``9p``, ``virtiofs``: the server's rule, unknown here), and any type not listed — a same-size edit with its
#: ``mtime`` put back may leave size, ``mtime`` and ``ctime`` all as they were, so no status vouches for a file's
#: bytes there (:func:`keeps_ctime`). ``overlay`` reports the status of the layer a file lies in, whose upper layer
#: must be a local file system with extended attributes (``tmpfs``, ``ext4``, ``xfs``, ``btrfs``: none of the others).
KEEPS_CTIME = frozenset({
    "btrfs", "ext2", "ext3", "ext4", "f2fs", "jfs", "nilfs2", "overlay", "ramfs", "reiserfs", "tmpfs", "xfs", "zfs",
})
#: Where the file system of each device is read from (Linux; elsewhere it is missing, and no status is trusted).
MOUNTINFO = "/proc/self/mountinfo"
#: Where an open descriptor's mount (``mnt_id``) is read from: this folder, then the descriptor's number.
FDINFO = "/proc/self/fdinfo/"

_hashlib: Any = None
#: :func:`keeps_ctime`'s answers by device, and the mount table's bytes it read them from (read once a process).
_kept: dict[int, bool] = {}
_mounts: bytes | None = None


def keeps_ctime(dev: int, where: int | str | None = None) -> bool:
    """Whether the file system of device ``dev`` (``st_dev``) is of a type in :data:`KEEPS_CTIME`: the type every line
    of :data:`MOUNTINFO` whose third field is ``dev``'s ``major:minor`` names, or, when none does (each ``btrfs``
    subvolume reports a device of its own, which the table does not list), the type of the mount that ``where`` — an
    open descriptor of the file, or its path, opened ``O_PATH`` — was opened through (its ``mnt_id`` in
    :data:`FDINFO`, the table's first field). False when neither tells (the table unreadable: not Linux, no
    ``/proc``), or the type is not listed: a status vouches for a file's bytes only where ``ctime`` moves at every
    change (git's ``core.trustctime`` is the user's switch for the same doubt; here the file system decides).
    Answered once a process a device. Raises nothing."""
    found = _kept.get(dev)
    if found is None:
        types = _types(dev)
        if not types and where is not None:
            types = _mount_types(where)
        elif not types:
            return False  # not kept: a later call may say where the file is
        found = _kept[dev] = bool(types) and all(t.decode("ascii", "replace") in KEEPS_CTIME for t in types)
    return found


def unwritten(where: int | str) -> bool:
    """:func:`writers` of ``where`` is 0: no writer holds it (``False`` where that cannot be told)."""
    return writers(where) == 0


def writers(where: int | str) -> int:
    """0 when no open file description of any process may write the file ``where`` (an open descriptor, or a path
    opened read-only here) now: a writable shared mapping holds one until it is unmapped, and its writes move the
    file's times only at the fault that makes a page writable (later writes to that page move nothing: on ext4 until
    the page is written back, on tmpfs for ever), so a status vouches for a file's bytes only when no writer held it
    as the bytes were read (asked after the clock the status is judged against is read, before the read: a writer
    opened since faults after it, a racy change time; attack67: a card edited through a held mapping was replayed,
    and priced from the cache, with its old bandwidth). Linux grants a read lease (``fcntl F_SETLEASE F_RDLCK``) only
    then; it is released at once. 1 when a writer holds it (the lease refused with ``EAGAIN``), -1 when it cannot be
    told (a file of another user without ``CAP_LEASE``, leases disabled, not Linux, the file not opened). A writer
    opening the file while the lease is held waits for its release (microseconds) and breaks it, which sends
    ``SIGIO`` (whose default ends the process): it is blocked meanwhile, taken back if sent, and the answer is then
    1. Raises nothing."""
    import errno
    import fcntl
    import signal

    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None or not hasattr(signal, "pthread_sigmask"):
        return -1
    if isinstance(where, str):
        try:
            fd = os.open(where, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except (OSError, ValueError):
            return -1
    else:
        fd = where
    try:
        was = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGIO})
        try:
            try:
                fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
            except OSError as e:
                return 1 if e.errno == errno.EAGAIN else -1
            try:  # noqa: SIM105 (no contextlib: see _replay)
                fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
            except OSError:
                pass
            if signal.SIGIO not in was and signal.SIGIO in signal.sigpending():
                signal.sigtimedwait({signal.SIGIO}, 0)  # a writer opened it meanwhile: the break's signal
                return 1
            return 0
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, was)
    except (OSError, ValueError):
        return -1
    finally:
        if isinstance(where, str):
            os.close(fd)


def _table() -> bytes:
    """:data:`MOUNTINFO`'s bytes (read once a process; empty when it cannot be read)."""
    global _mounts
    if _mounts is None:
        try:
            with open(MOUNTINFO, "rb") as f:
                _mounts = f.read(1 << 22)
        except (OSError, ValueError):
            _mounts = b""
    return _mounts


def _types(dev: int) -> list[bytes]:
    """The file system types the mount table's lines of device ``dev`` name (field 3: ``major:minor``)."""
    table = _table()
    try:
        name = b" %d:%d " % (os.major(dev), os.minor(dev))
    except (OverflowError, ValueError, AttributeError):  # no os.major off Unix
        return []
    types = []
    start = table.find(name)
    while start >= 0:
        # Each line looked at once, the next search from its end: a table of one long line naming the device at every
        # few bytes was cut out and split again at each (1 MB: 17 s; left44); now each byte is read a few times.
        begin = table.rfind(b"\n", 0, start) + 1
        end = table.find(b"\n", start)
        if end < 0:
            end = len(table)
        line = table[begin:end]
        fields = line.split(b" ", 3)
        if len(fields) > 3 and b" %s " % fields[2] == name:  # the third field, not a name in a later one
            _, sep, tail = line.partition(b" - ")
            types.append(tail.split(b" ", 1)[0] if sep else b"")
        start = table.find(name, end)
    return types


def _mount_types(where: int | str) -> list[bytes]:
    """The type of the mount the descriptor (or path) ``where`` was opened through, as a one-item list (empty when it
    cannot be told): its ``mnt_id`` read from :data:`FDINFO`, the mount table's line whose first field it is."""
    opened = -1
    try:
        if isinstance(where, str):
            where = opened = os.open(where, getattr(os, "O_PATH", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(f"{FDINFO}{where}", "rb") as f:
            info = f.read(1 << 16)
    except (OSError, ValueError, TypeError):
        return []
    finally:
        if opened >= 0:
            os.close(opened)
    at = info.find(b"mnt_id:")
    if at < 0:
        return []
    mount = info[at + 7:].split(b"\n", 1)[0].strip()
    if not mount.isdigit():
        return []
    table = _table()
    begin = 0 if table.startswith(mount + b" ") else table.find(b"\n" + mount + b" ") + 1
    if begin <= 0 and not table.startswith(mount + b" "):
        return []
    end = table.find(b"\n", begin)
    _, sep, tail = (table[begin:] if end < 0 else table[begin:end]).partition(b" - ")
    return [tail.split(b" ", 1)[0]] if sep else []


def _recent(ctime_ns: int, since_ns: int, window: tuple[int, int]) -> bool:
    """Whether a change time ``ctime_ns`` falls within ``window`` (fine, whole-second) before ``since_ns``, or
    after it."""
    return ctime_ns >= since_ns - window[ctime_ns % 1_000_000_000 == 0]


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` (``sys.argv[1:]``) runs when its output may be kept (one of :data:`COMMANDS`), else
    ``None``: options before the command other than one ``--root`` (``--no-cache``, ``--version``, ``--help``, a
    second ``--root``), an unknown command, or an argument in :data:`_NEVER` (or ``-o…``, ``--output=…``,
    ``--plot=…``)."""
    i = 0
    roots = 0
    while i < len(argv) and argv[i].startswith("-"):
        roots += 1
        if argv[i] == "--root":
            i += 2
        elif argv[i].startswith("--root="):
            i += 1
        else:
            return None
    if roots > 1:
        # click takes the last --root; the stamp would be of the first (a registry the run never read).
        return None
    if i >= len(argv):
        return None
    name, rest = argv[i], argv[i + 1 :]
    if name == "fact":
        if not rest or rest[0] != "show":
            return None
        name, rest = "fact show", rest[1:]
    if name not in COMMANDS:
        return None
    for token in rest:
        head = token.split("=", 1)[0]
        if head in _NEVER or (token.startswith("-o") and not token.startswith("--")):
            return None
    if name in _PROGRESS and os.isatty(2):
        return None
    return name


def _root_option(argv: list[str]) -> str | None:
    """The value of ``--root`` before the command, if given."""
    for i, token in enumerate(argv):
        if not token.startswith("-"):
            return None
        if token == "--root":
            return argv[i + 1] if i + 1 < len(argv) else None
        if token.startswith("--root="):
            return token[len("--root=") :]
    return None


def _checksum(body: bytes) -> bytes:
    """The checksum that opens an entry: the BLAKE2b digest (hex) of the rest, which tells a torn or altered entry
    from a whole one (an entry is trusted as the user's own files are, :mod:`passprice.cachefolder`; the checksum
    guards against damage, not against its owner). BLAKE2b, not sha256: hashed on every replay, an entry of ~150 KB
    costs the interpreter's own sha256 more than the rest of the lookup."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(body, digest_size=32).hexdigest().encode("ascii")


def _sha256(data: bytes = b"") -> Any:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # the interpreter's own: loads faster than OpenSSL
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import sha256
    return sha256(data)


def _package() -> str:
    import passprice

    return os.path.dirname(os.path.realpath(passprice.__file__))


def material(argv: list[str]) -> bytes:
    """The bytes the key is the sha256 of (marshal's version 2, which writes equal values as equal bytes): see the
    module's docstring. Raises :class:`OSError` (no working folder)."""
    import passprice

    streams = []
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        tty = os.isatty(fd)
        size: tuple[int, int] | None = None
        if tty:
            try:
                size = tuple(os.get_terminal_size(fd))  # type: ignore[assignment]
            except OSError:
                size = None
        streams.append((tty, size, str(getattr(stream, "encoding", None)), str(getattr(stream, "errors", None))))
    ids = tuple(getattr(os, name, lambda: -1)() for name in ("geteuid", "getegid"))
    parts = (
        FORMAT, passprice.__version__, _package(), tuple(argv), os.getcwd(), tuple(sorted(os.environ.items())),
        tuple(streams), sys.version, sys.executable, tuple(sys.path), tuple(sys.flags),
        tuple(sorted((str(k), str(v)) for k, v in sys._xoptions.items())), tuple(sys.warnoptions), sys.platform, ids,
    )
    return marshal.dumps(parts, 2)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _kind(path: str) -> str:
    """What ``path`` names, links followed: ``f`` a regular file, ``d`` a folder, ``o`` anything else, ``-``
    nothing, ``l`` a link to nothing, ``e`` an error (a loop of links, a name too long). A link to nothing is not
    nothing: ``os.path.lexists`` tells them apart (git counts an ``include.path`` naming one against its 1,000, and so
    does ``check``: read as nothing, such a link made after a kept ``check`` left the memo replaying "all holds"
    where a fresh run names the config file; slip round 31)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        try:
            os.lstat(path)
        except (OSError, ValueError):
            return "-"
        return "l"
    except (OSError, ValueError):
        return "e"
    return "f" if stat.S_ISREG(mode) else "d" if stat.S_ISDIR(mode) else "o"


def _listing(path: str) -> tuple[tuple[str, str], ...]:
    """The names in folder ``path`` with their kinds (``f``, ``d``, ``l`` a link, ``o``), sorted. Raises
    :class:`OSError`."""
    out = []
    with os.scandir(path) as entries:
        for e in entries:
            kind = "l" if e.is_symlink() else "d" if e.is_dir() else "f" if e.is_file() else "o"
            out.append((e.name, kind))
    out.sort()
    return tuple(out)


def own_listing(path: str) -> tuple[tuple[str, str], ...]:
    """:func:`_listing` of one of the cache's own folders ``path`` less what is the cache's in it: entries and the
    temporary files they are written through (:func:`passprice.cachefolder.entry_name`), and the folders of compiled
    code (``code/TAG``, named by the interpreter's cache tag). Raises :class:`OSError`."""
    from passprice.cachefolder import entry_name

    tag = sys.implementation.cache_tag
    return tuple(item for item in _listing(path) if not entry_name(item[0]) and not (item[1] == "d" and item[0] == tag))


def _digest(path: str, expected: tuple[int, ...] | None = None) -> bytes | None:
    """The sha256 of regular file ``path``'s bytes; ``None`` when it is not one, is larger than :data:`BIG`,
    cannot be read, or (``expected``) its status before or after the read is not ``expected``."""
    global _hashlib
    if _hashlib is None:
        import hashlib

        _hashlib = hashlib
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > BIG or (expected is not None and _stamp(st) != expected):
            return None
        h = _hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        if expected is not None and _stamp(os.fstat(fd)) != expected:
            return None
        digest: bytes = h.digest()
        return digest
    except OSError:
        return None
    finally:
        os.close(fd)


# --- lookup ----------------------------------------------------------------------------------------------------------


def _load(path: str, key: str) -> dict[str, Any] | None:
    """The entry at ``path`` for ``key``, or ``None``: none there, not the user's own (:mod:`passprice.cachefolder`),
    or not whole (its checksum, its marshalled body or its key do not hold)."""
    from passprice import cachefolder

    raw = cachefolder.read(path, MAX_ENTRY_BYTES)
    if raw is None:
        return None
    digest, newline, body = raw.partition(b"\n")
    if not newline or digest != _checksum(body):
        return None
    try:
        entry = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    return entry


def _holds(item: tuple[Any, ...]) -> bool:
    """Whether a world stamp's ``item`` (path, kind, status, racy, what) still holds: see the module's docstring."""
    path, kind, recorded, racy, what = item
    if kind == "p":
        return bool(_kind(path) == what)
    if kind == "r":
        try:
            return bool(os.path.realpath(path) == what)
        except (OSError, ValueError):
            return False
    try:
        st = os.lstat(path) if kind == "l" else os.stat(path)
    except (OSError, ValueError):
        return False
    if not racy and _stamp(st) == recorded and keeps_ctime(st.st_dev, path):
        return True
    if kind == "f":
        return what is not None and stat.S_ISREG(st.st_mode) and _digest(path) == what
    if kind == "d":
        try:
            return stat.S_ISDIR(st.st_mode) and _listing(path) == what
        except OSError:
            return False
    if kind == "l":
        try:
            return stat.S_ISLNK(st.st_mode) and os.readlink(path) == what
        except OSError:
            return False
    if kind == "c":
        try:
            return stat.S_ISDIR(st.st_mode) and own_listing(path) == what
        except OSError:
            return False
    return False


def still(entry: dict[str, Any]) -> bool:
    """Whether everything ``entry`` was recorded from is as it was: every item of its world stamp holds. A damaged
    entry (any shape but the one :func:`passprice.memorecord.record` writes) does not."""
    try:
        out = entry["out"]
        # The output's shape first (a list of (1 or 2, bytes) chunks): an entry whose checksum holds but whose output
        # is of another shape (a text, a descriptor 9 or 2**70, none at all) made the replay raise a traceback.
        if type(out) is not list or not all(
            type(chunk) is tuple and len(chunk) == 2 and chunk[0] in (1, 2) and type(chunk[1]) is bytes for chunk in out
        ):
            return False
        # The status an int 0: 0.0 and False equal 0, and os._exit(0.0) raised TypeError, a traceback
        # (tests/test_forge110.py).
        return type(entry["status"]) is int and entry["status"] == 0 and all(_holds(item) for item in entry["items"])
    except Exception:  # an entry of another shape, whatever it raises, is a miss
        return False


def _replay(entry: dict[str, Any]) -> int:
    """Write ``entry``'s output, chunk by chunk to the descriptor each went to, and return its exit status. A write
    that fails ends the replay as a command's does: a reader gone from the pipe (``| head``, ``EPIPE``) quietly, status
    0, nothing more written; any other failure as passprice's last resort, one line on standard error, status 2."""
    for fd, chunk in entry["out"]:
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BrokenPipeError:
            return 0
        except OSError as e:
            if fd == 1:
                # Not contextlib.suppress: importing contextlib costs a replay more than its whole lookup.
                try:  # noqa: SIM105
                    os.write(2, f"passprice: error: standard output: {e.strerror or e}\n".encode())
                except OSError:
                    pass
            return 2
    status: int = entry["status"]
    return status


def main(fallback: Callable[[], object]) -> None:
    """The console script's memo: replay the output of ``sys.argv``'s command when an entry for its key holds,
    else run ``fallback`` (passprice's CLI) and keep what it printed when the run may be kept. Raises what the
    command raises (``SystemExit``)."""
    argv = sys.argv[1:]
    from passprice import cachefolder

    if (
        command_of(argv) is None
        or cachefolder.bypassed()
        or os.environ.get("PASSPRICE_NO_MEMO", "") not in ("", "0")
    ):
        fallback()
        return
    since = time.time_ns()
    try:
        key = _sha256(material(argv)).hexdigest()
        cwd = os.getcwd()
        cache = os.path.abspath(cachefolder.folder())
    except (OSError, RuntimeError, ValueError):
        fallback()
        return
    path = os.path.join(cache, "memo", f"{key}.memo")
    import gc

    gc.disable()  # an entry is thousands of small tuples: no collection finds garbage among them
    try:
        entry = _load(path, key)
        held = entry is not None and still(entry)
    finally:
        gc.enable()
    if entry is not None and held:
        status = _replay(entry)
        if os.environ.get("PASSPRICE_MEMO_DEBUG"):
            os.write(2, b"memo: replayed\n")
        # Nothing else was imported, opened or buffered: the process ends here, without the interpreter's teardown.
        os._exit(status)
    if entry is not None and os.environ.get("PASSPRICE_MEMO_DEBUG"):
        try:
            failed = next((item[0] for item in entry.get("items", ()) if not _holds(item)), "the status")
        except Exception:  # an entry of another shape (:func:`still`)
            failed = "the entry's shape"
        os.write(2, f"memo: missed: {failed!r} changed\n".encode(errors="backslashreplace"))
    from passprice import memorecord

    memorecord.record(argv, key, path, since, cwd, cache, entry, fallback)

