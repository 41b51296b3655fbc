"""A read-only command's output is a function of its arguments, its environment, passprice's code and the bytes of
what it read: when none of these changed, the output it printed is replayed, never recomputed — and a run whose
dependencies cannot all be known is not kept.

What a replay rests on, each checked before a byte is replayed:

- **The key** (the entry's name): the sha256 of the memo's format, passprice's version and folder, the arguments,
  the working folder, the whole environment, whether standard input, output and error are terminals (and their
  sizes), the output streams' encodings, the interpreter (version, executable, ``sys.path``, flags, ``-X``
  options) and the user and group ids.
- **The world stamp** (in the entry): every file and folder of the registry root the command read (found again as
  the run found it) and of the installed package (its modules, schemas, templates, embedded registry), every file
  the run opened elsewhere (recorded by an audit hook, :func:`sys.addaudithook`: the libraries' modules too, and each
  module's source), the folder of each, every folder it listed, the working folder, each folder of ``sys.path``,
  and what each argument names in the working folder, as a probe (a file, a folder, nothing). A file is known by its
  status — device, inode, size, modification and change times (``ctime``, which no user can set) — and the sha256 of
  its bytes; a folder by its status and the names and kinds of its entries. At lookup, a file whose status is the
  one recorded, and was already older than the run when it was recorded, is unchanged (any write since would have
  moved its ``ctime``: the racy-clean rule git applies to its index); any other is hashed again (so a card edited to
  the same size within the same second misses on its content), a folder listed again, and one difference is a miss.
- **What is never kept**: a command not in :data:`COMMANDS`, or given an option that writes (``-o``, ``--plot``,
  ``--force``, ``--update``) or reads git (``--history``) or standard input (``-``), ``--no-cache`` or
  ``PASSPRICE_NO_CACHE``; a run that started a process, opened a socket, changed folder, read standard input, opened
  anything but a regular file or folder, wrote anywhere but the cache folder, exited with a status other than 0,
  printed more than :data:`MAX_OUTPUT` bytes or failed to print; a run during which, or shortly before which
  (:data:`KEEP_NS`), a file it read or a folder it listed changed, since what it read then cannot be told from what is
  there after. No command of passprice reads the clock (the memo's own window aside).

An entry is ``memo/KEY.memo`` in passprice's cache folder (:mod:`passprice.cachefolder`): the sha256 of the rest,
then the entry marshalled. It is written and read by :mod:`passprice.cache`'s rules: a private file written
through a temporary file and a rename, read only when it is a regular file of the user's that no one else may
write; a truncated, altered, foreign or unreadable entry is a miss and is overwritten; past :data:`MAX_ENTRIES`
entries the older half is removed. The lookup imports nothing but this module and :mod:`passprice.cachefolder`
(no click, attrs, or the rest of passprice): a hit costs the interpreter's start, one entry's read and a ``stat``
of each file recorded.
"""

from __future__ import annotations

import contextlib
import io
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
FORMAT = "passprice-memo-1"
#: The commands whose output is kept: each reads the registry and prints, and writes nothing (checked one by one in
#: ``tests/test_memo.py``). ``fact show`` is ``fact`` then ``show``.
COMMANDS = frozenset({
    "audit", "best", "cards", "check", "checkpoints", "explain", "fact show", "facts", "header", "kv", "max-batch",
    "price", "reproduce", "roofline", "servings", "simulate", "sources", "speculate", "sweep", "validate",
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

_hashlib: Any = None


def _recent(ctime_ns: int, since_ns: int, window: tuple[int, int]) -> bool:
    """Whether a change time ``ctime_ns`` falls within ``window`` (fine, whole-second) before ``since_ns``, or
    after it."""
    return ctime_ns >= since_ns - window[ctime_ns % 1_000_000_000 == 0]


def command_of(argv: list[str]) -> str | None:
    """The command ``argv`` (``sys.argv[1:]``) runs when its output may be kept (one of :data:`COMMANDS`), else
    ``None``: options before the command other than ``--root`` (``--no-cache``, ``--version``, ``--help``), an
    unknown command, or an argument in :data:`_NEVER` (or ``-o…``, ``--output=…``, ``--plot=…``)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "--root":
            i += 2
        elif argv[i].startswith("--root="):
            i += 1
        else:
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
        tuple(sorted((str(k), str(v)) for k, v in sys._xoptions.items())), sys.platform, ids,
    )
    return marshal.dumps(parts, 2)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _kind(path: str) -> str:
    """What ``path`` names, links followed: ``f`` a regular file, ``d`` a folder, ``o`` anything else, ``-``
    nothing, ``e`` an error (a loop of links, a name too long)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "-"
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
    if not newline or digest != _sha256(body).hexdigest().encode("ascii"):
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
    try:
        st = os.lstat(path) if kind == "l" else os.stat(path)
    except (OSError, ValueError):
        return False
    if not racy and _stamp(st) == recorded:
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
    return False


def still(entry: dict[str, Any]) -> bool:
    """Whether everything ``entry`` was recorded from is as it was: every item of its world stamp holds. A damaged
    entry (any shape but the one :func:`_record` writes) does not."""
    try:
        return all(_holds(item) for item in entry["items"]) and entry["status"] == 0
    except Exception:  # an entry of another shape, whatever it raises, is a miss
        return False


def _replay(entry: dict[str, Any]) -> int:
    """Write ``entry``'s output, chunk by chunk to the descriptor each went to, and return its exit status. A write
    that fails ends the replay as passprice's last resort does: one line on standard error, status 2."""
    for fd, chunk in entry["out"]:
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError as e:
            if fd == 1:
                with contextlib.suppress(OSError):
                    os.write(2, f"passprice: error: standard output: {e.strerror or e}\n".encode())
            return 2
    status: int = entry["status"]
    return status


# --- recording -------------------------------------------------------------------------------------------------------

#: Audit events of a run that writes or removes a file, each with the places of the paths it writes among its
#: arguments (one outside the cache folder, or given as a descriptor, spoils the run).
_WRITES = {
    "os.rename": (0, 1), "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.chmod": (0,), "os.chown": (0,),
    "os.link": (1,), "os.symlink": (1,), "os.truncate": (0,), "os.utime": (0,), "os.chflags": (0,),
    "os.lchflags": (0,), "os.lchmod": (0,), "os.setxattr": (0,), "os.removexattr": (0,), "os.mkfifo": (0,),
    "os.mknod": (0,), "shutil.copyfile": (1,), "shutil.copymode": (1,), "shutil.copystat": (1,),
    "shutil.copytree": (1,), "shutil.move": (0, 1), "shutil.rmtree": (0,), "shutil.chown": (0,),
    "shutil.make_archive": (0,), "shutil.unpack_archive": (1,),
}
#: Audit events of a run whose output cannot be known from files: another process, the network, another folder.
_SPOILS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.startfile",
    "pty.spawn", "os.kill", "os.killpg", "os.chdir", "os.fchdir", "os.chroot", "urllib.Request", "http.client.connect",
    "ftplib.connect", "smtplib.connect", "poplib.connect", "imaplib.open", "nntplib.connect", "telnetlib.Telnet.open",
    "webbrowser.open", "sqlite3.connect",
})
_LISTS = frozenset({"os.listdir", "os.scandir"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class _Tee(io.RawIOBase):
    """A raw stream writing to descriptor ``fd`` (not owned: never closed here) and handing the recorder every byte
    written, as it reached the descriptor."""

    def __init__(self, fd: int, recorder: _Recorder) -> None:
        super().__init__()
        self._fd = fd
        self._recorder = recorder

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, b: Any) -> int:
        try:
            n = os.write(self._fd, b)
        except OSError:
            self._recorder.spoil("a write to standard output or error failed")
            raise
        self._recorder.printed(self._fd, bytes(memoryview(b)[:n]))
        return n


def _tee(stream: Any, fd: int, recorder: _Recorder) -> io.TextIOWrapper:
    """A text stream like ``stream`` (encoding, errors, buffering) over a :class:`_Tee` of ``fd``."""
    size = io.DEFAULT_BUFFER_SIZE
    try:
        blocks = os.fstat(fd).st_blksize
        if blocks > 1:
            size = blocks  # as io.open sizes the standard streams' buffers
    except (OSError, AttributeError):
        pass
    return io.TextIOWrapper(
        io.BufferedWriter(_Tee(fd, recorder), size), encoding=stream.encoding, errors=stream.errors,
        newline=None if sys.platform == "win32" else "\n", line_buffering=stream.line_buffering,
        write_through=getattr(stream, "write_through", False),
    )


class _Stdin:
    """Standard input, watched: any use of it spoils the run (what it read is not in the key)."""

    def __init__(self, stream: Any, recorder: _Recorder) -> None:
        self._stream = stream
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        self._recorder.spoil("standard input was used")
        return getattr(self._stream, name)

    def __iter__(self) -> Any:
        self._recorder.spoil("standard input was used")
        return iter(self._stream)


class _Recorder:
    """What one run opened, listed and printed, and whether it may be kept (``spoiled`` says why not)."""

    hooked = False
    current: _Recorder | None = None

    def __init__(self, cwd: str, cache: str) -> None:
        self.cwd = cwd
        self.cache = cache
        self.opened: dict[str, tuple[int, ...] | None] = {}
        self.listed: dict[str, tuple[int, ...] | None] = {}
        self.out: list[tuple[int, bytes]] = []
        self.size = 0
        self.spoiled: str | None = None
        self.saved: tuple[Any, Any, Any] = (sys.stdin, sys.stdout, sys.stderr)
        self.streams: list[io.TextIOWrapper] = []

    def spoil(self, why: str) -> None:
        if self.spoiled is None:
            self.spoiled = why

    def printed(self, fd: int, data: bytes) -> None:
        if self.spoiled is not None:
            return
        self.size += len(data)
        if self.size > MAX_OUTPUT:
            self.spoil("printed more than the memo keeps")
            self.out = []
        elif self.out and self.out[-1][0] == fd:
            self.out[-1] = (fd, self.out[-1][1] + data)
        else:
            self.out.append((fd, data))

    def _path(self, path: Any) -> str | None:
        """``path`` (str, bytes, path-like) made absolute against the working folder the run started in."""
        try:
            p = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        return os.path.normpath(os.path.join(self.cwd, p))

    def _cached(self, p: str) -> bool:
        return p == self.cache or p.startswith(self.cache + os.sep)

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                if path in (0, 1, 2):
                    self.spoil("a standard stream was opened by number")
                return
            p = self._path(path)
            if p is None:
                self.spoil("an open of something not a path")
                return
            writes = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            )
            if self._cached(p):
                return
            if writes:
                self.spoil(f"wrote {p}")
            elif p not in self.opened:
                try:
                    st = os.stat(p)
                except (OSError, ValueError):
                    self.opened[p] = None  # not there: the run depends on its absence
                    return
                if stat.S_ISDIR(st.st_mode):
                    self.listed.setdefault(p, _stamp(st))
                elif not stat.S_ISREG(st.st_mode):
                    self.spoil(f"opened {p}, not a regular file")
                else:
                    self.opened[p] = _stamp(st)
        elif event in _LISTS:
            path = args[0] if args else None
            if path is None:
                path = "."
            if isinstance(path, int):
                self.spoil("a folder listed by descriptor")
                return
            p = self._path(path)
            if p is None:
                self.spoil("a folder listed by something not a path")
            elif p not in self.listed and not self._cached(p):
                try:
                    self.listed[p] = _stamp(os.stat(p))
                except (OSError, ValueError):
                    self.listed[p] = None
        elif event in _WRITES:
            for place in _WRITES[event]:
                arg = args[place] if place < len(args) else None
                p = self._path(arg) if isinstance(arg, str | bytes | os.PathLike) else None
                if p is None or not self._cached(p):
                    self.spoil(f"{event} outside the cache folder: {arg!r}")
                    return
        elif event in _SPOILS or event.startswith("socket."):
            self.spoil(event)

    def start(self) -> bool:
        """Watch and tee the run: the audit hook (added once a process), standard output and error replaced by
        tees, standard input watched. ``False`` (nothing changed) when a standard stream has no descriptor."""
        try:
            fds = (sys.stdout.fileno(), sys.stderr.fileno())
        except (AttributeError, OSError, ValueError):
            return False
        if fds != (1, 2):
            return False
        for s in (sys.stdout, sys.stderr):
            s.flush()
        if not _Recorder.hooked:
            sys.addaudithook(_audit)
            _Recorder.hooked = True
        _Recorder.current = self
        self.streams = [_tee(sys.stdout, 1, self), _tee(sys.stderr, 2, self)]
        sys.stdout, sys.stderr = self.streams
        if sys.stdin is not None:
            sys.stdin = _Stdin(sys.stdin, self)
        return True

    def stop(self) -> None:
        """Stop watching: flush the tees (a failure spoils the run), give the streams back."""
        _Recorder.current = None
        for s in self.streams:
            try:
                s.flush()
            except (OSError, ValueError):
                self.spoil("the output could not be written")
        sys.stdin, sys.stdout, sys.stderr = self.saved


def _audit(event: str, args: tuple[Any, ...]) -> None:
    recorder = _Recorder.current
    if recorder is not None:
        recorder.hook(event, args)


def _stdlib() -> str:
    """The standard library's folder (``os``'s), whose files the interpreter's version vouches for; its
    ``site-packages`` are not part of it."""
    return os.path.dirname(os.path.realpath(os.__file__))


def _probes(argv: list[str], cwd: str) -> list[tuple[str, str]]:
    """What each argument names in the working folder (an option's ``=value`` too), and whether each folder from the
    working folder up, and the package's embedded candidates, holds ``facts`` and ``registry``
    (:func:`passprice.registry.find_root`'s test): (path, :func:`_kind`) pairs."""
    names = set()
    for token in argv:
        value = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
        if value and not value.startswith("-"):
            names.add(os.path.join(cwd, value))
    package = _package()
    folders = [os.path.join(package, "_data"), os.path.dirname(os.path.dirname(package))]
    here = os.path.realpath(cwd)
    while True:
        folders.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for folder in folders:
        names.add(os.path.join(folder, "facts"))
        names.add(os.path.join(folder, "registry"))
    return sorted((n, _kind(n)) for n in names)


class _World:
    """The world stamp of a finished run: its items, or why it cannot be known."""

    def __init__(self, since: int, recorder: _Recorder, old: dict[str, Any] | None) -> None:
        self.since = since
        self.recorder = recorder
        self.items: list[tuple[Any, ...]] = []
        self.trees: list[str] = []
        self.known: dict[str, tuple[Any, ...]] = {}
        if old is not None:
            try:
                self.known = {item[0]: item for item in old["items"] if item[1] == "f" and not item[3]}
            except Exception:
                self.known = {}

    def racy(self, st: tuple[int, ...]) -> bool:
        return _recent(st[5], self.since, TRUST_NS)

    def kept(self, st: tuple[int, ...] | None, what: str) -> None:
        """Spoil the run when ``st`` (a file it read or folder it listed, after the run) changed lately."""
        if st is None or _recent(st[5], self.since, KEEP_NS):
            self.recorder.spoil(f"{what} changed during or just before the run")

    def inside(self, path: str) -> bool:
        return any(path == t or path.startswith(t + os.sep) for t in self.trees)

    def file(self, path: str, st: tuple[int, ...]) -> None:
        known = self.known.get(path)
        if known is not None and known[2] == st:
            digest = known[4]  # the previous entry's digest, for a file unchanged since before it was recorded
        else:
            digest = _digest(path, st) if st[3] <= BIG else None
            if digest is None and st[3] <= BIG:
                self.recorder.spoil(f"{path} changed while it was read")
        self.items.append((path, "f", st, self.racy(st), digest))

    def folder(self, path: str, st: tuple[int, ...]) -> None:
        try:
            listing = _listing(path)
        except OSError:
            self.recorder.spoil(f"{path} cannot be listed")
            return
        self.items.append((path, "d", st, self.racy(st), listing))

    def tree(self, top: str) -> None:
        """Every folder, file and link below ``top`` (``.git`` and the cache folder named, not entered)."""
        stack = [top]
        while stack:
            here = stack.pop()
            try:
                st = _stamp(os.stat(here))
                with os.scandir(here) as it:
                    entries = list(it)
            except OSError:
                self.recorder.spoil(f"{here} cannot be listed")
                return
            self.kept(st, here)
            listing = []
            for e in entries:
                try:
                    if e.is_symlink():
                        listing.append((e.name, "l"))
                        self.items.append((e.path, "l", _stamp(e.stat(follow_symlinks=False)), True,
                                           os.readlink(e.path)))
                    elif e.is_dir():
                        listing.append((e.name, "d"))
                        if e.name != ".git" and not self.recorder._cached(e.path):
                            stack.append(e.path)
                    elif e.is_file():
                        listing.append((e.name, "f"))
                        self.file(e.path, _stamp(e.stat()))
                    else:
                        listing.append((e.name, "o"))
                except OSError:
                    self.recorder.spoil(f"{e.path} cannot be read")
                    return
            listing.sort()
            self.items.append((here, "d", st, self.racy(st), tuple(listing)))


def world(since: int, recorder: _Recorder, argv: list[str], probes: list[tuple[str, str]],
          old: dict[str, Any] | None) -> list[tuple[Any, ...]] | None:
    """The world stamp of the run ``recorder`` watched (started at ``since``, ns), or ``None`` when the run cannot
    be kept (``recorder.spoiled`` says why)."""
    from passprice.errors import InputError
    from passprice.registry import find_root

    w = _World(since, recorder, old)
    try:
        root = os.path.realpath(find_root(_root_option(argv)).path)
    except (InputError, OSError):
        recorder.spoil("no registry root")
        return None
    w.trees = [root]
    package = _package()
    if not w.inside(package):
        w.trees.append(package)
    for top in w.trees:
        w.tree(top)
    stdlib = _stdlib()

    def ours(p: str) -> bool:
        """Whether ``p`` is one of the run's files whose status matters: not the standard library's, nor the
        cache's."""
        if recorder._cached(p):
            return False
        if p.startswith(stdlib + os.sep):
            first = p[len(stdlib) + 1 :].split(os.sep, 1)[0]
            return first in ("site-packages", "dist-packages")
        return True

    folders: dict[str, tuple[int, ...] | None] = {recorder.cwd: None}
    files: dict[str, tuple[int, ...] | None] = dict(recorder.opened)
    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None)
        if isinstance(source, str) and os.path.isabs(source):
            files.setdefault(os.path.normpath(source), None)
    for p, before in files.items():
        if not ours(p):
            continue
        try:
            st = _stamp(os.stat(p))
        except (OSError, ValueError):
            if before is None and p in recorder.opened:
                w.items.append((p, "p", None, True, "-"))  # an open that failed: its absence is an input
                continue
            recorder.spoil(f"{p} went away")
            continue
        if before is not None and before != st:
            recorder.spoil(f"{p} changed during the run")
        w.kept(st, p)
        real = os.path.realpath(p)
        folders.setdefault(os.path.dirname(real), None)
        if not w.inside(real):
            w.file(p, st)
    for p, before in recorder.listed.items():
        folders[p] = before
    for entry in sys.path:
        if entry and os.path.isabs(entry):
            folders.setdefault(os.path.normpath(entry), None)
    for p, before in folders.items():
        if not ours(p) or w.inside(os.path.realpath(p)):
            continue
        try:
            st = _stamp(os.stat(p))
        except (OSError, ValueError):
            w.items.append((p, "p", None, True, _kind(p)))
            continue
        if not stat.S_ISDIR(st[0]):
            w.items.append((p, "p", None, True, _kind(p)))
            continue
        if before is not None and before != st:
            recorder.spoil(f"{p} changed during the run")
        w.kept(st, p)
        w.folder(p, st)
    now = _probes(argv, recorder.cwd)
    if now != probes:
        recorder.spoil("what an argument names changed during the run")
    w.items.extend((p, "p", None, True, kind) for p, kind in now)
    return None if recorder.spoiled else w.items


def _store(path: str, entry: dict[str, Any]) -> None:
    """Write ``entry`` to ``path`` as :mod:`passprice.cache` writes its entries; silently nothing when it cannot."""
    from pathlib import Path

    from passprice import cache
    from passprice.errors import InputError
    from passprice.files import make_folder

    body = marshal.dumps(entry)
    target = Path(path)
    try:
        make_folder(target.parent)
        cache._write_entry(target, _sha256(body).hexdigest().encode("ascii") + b"\n" + body)
    except (InputError, OSError):
        return
    cache._prune(target.parent, MAX_ENTRIES)


def _record(argv: list[str], key: str, path: str, since: int, cwd: str, cache: str, old: dict[str, Any] | None,
            fallback: Callable[[], object]) -> None:
    """Run ``fallback`` (the command) watched and teed; keep what it printed under ``key`` when it may be kept."""
    probes = _probes(argv, cwd)
    recorder = _Recorder(cwd, cache)
    if not recorder.start():
        fallback()
        return
    status = 1
    try:
        fallback()
        status = 0
    except SystemExit as e:
        status = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
        raise
    finally:
        recorder.stop()
        if status == 0 and recorder.spoiled is None:
            try:
                items = world(since, recorder, argv, probes, old)
                if items is not None:
                    _store(path, {"key": key, "since": since, "items": items, "out": recorder.out, "status": 0})
            except Exception:
                pass
        if os.environ.get("PASSPRICE_MEMO_DEBUG"):
            os.write(2, f"memo: {recorder.spoiled or 'kept'} (status {status})\n".encode())


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
    entry = _load(path, key)
    if entry is not None and still(entry):
        status = _replay(entry)
        if status:
            sys.exit(status)
        return
    _record(argv, key, path, since, cwd, cache, entry, fallback)

