"""Watching a run the result memo may keep (:mod:`passprice.memo`): what it opened, listed and printed, and whether
anything it did puts its output beyond what the memo can know (another process, standard input, a write outside the
cache folder, a file that changed while it ran). Imported only on a miss: a replay needs none of it.
"""

from __future__ import annotations

import contextlib
import io
import marshal
import os
import stat
import sys

from passprice import memo
from passprice.cachefolder import entry_name as _entry_name
from passprice.cachefolder import make_folders
from passprice.memo import (
    BIG,
    _checksum,
    _digest,
    _kind,
    _listing,
    _package,
    _recent,
    _root_option,
    _stamp,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

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
#: The cache folder's own folders (``code`` holds one folder a cache tag) and the endings of the files in them:
#: entries, and the temporary files entries are written through.
_ENTRY_FOLDERS = ("documents", "objects", "memo", "stamps")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
#: The sets naming the functions that take ``dir_fd``, a descriptor, ``follow_symlinks`` or ``effective_ids``
#: (``shutil.rmtree`` picks its safe way by them): a watched function stands in them as the function it wraps.
_SUPPORTS = [getattr(os, name) for name in ("supports_dir_fd", "supports_fd", "supports_follow_symlinks",
                                             "supports_effective_ids") if isinstance(getattr(os, name, None), set)]


class _Tee(io.RawIOBase):
    """A raw stream writing to descriptor ``fd`` (not owned: never closed here) and handing the recorder every byte
    written, as it reached the descriptor."""

    def __init__(self, fd: int, recorder: Recorder) -> None:
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


def _tee(stream: Any, fd: int, recorder: Recorder) -> io.TextIOWrapper:
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


class Stdin:
    """Standard input, watched: any use of it spoils the run (what it read is not in the key)."""

    def __init__(self, stream: Any, recorder: Recorder) -> None:
        self._stream = stream
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        self._recorder.spoil("standard input was used")
        return getattr(self._stream, name)

    def __iter__(self) -> Any:
        self._recorder.spoil("standard input was used")
        return iter(self._stream)


class Recorder:
    """What one run opened, listed and printed, and whether it may be kept (``spoiled`` says why not)."""

    hooked = False
    current: Recorder | None = None

    def __init__(self, cwd: str, cache: str) -> None:
        self.cwd = cwd
        self.caches = {cache, os.path.realpath(cache)}
        tag = sys.implementation.cache_tag or "python"
        #: The cache's own folders (the parents of its entries): only these, and the entries in them, are the
        #: cache's; the rest of the cache folder is a folder like any other (a registry root, or an argument's file,
        #: may lie in it: ``PASSPRICE_CACHE_DIR`` set to a root or to a home folder).
        self.entry_folders = {os.path.join(c, sub) for c in self.caches for sub in _ENTRY_FOLDERS}
        self.entry_folders |= {os.path.join(c, "code", tag) for c in self.caches}
        self.cache_folders = self.entry_folders | {os.path.join(c, "code") for c in self.caches}
        self.opened: dict[str, tuple[int, ...] | None] = {}
        self.listed: dict[str, tuple[int, ...] | None] = {}
        #: Every path the run looked up by its status alone (:meth:`looked_up`), made absolute: what each names (a
        #: file, a folder, nothing) is stamped where no tree holds it, in place of the working folder's listing.
        self.looked: dict[str, str] = {}
        #: What the command's arguments name (absolute, normalised; :func:`record` sets it): never the cache's.
        self.named: set[str] = set()
        self.unwatched: dict[str, Any] = {}
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
        if self.size > memo.MAX_OUTPUT:
            self.spoil("printed more than the memo keeps")
            self.out = []
        elif self.out and self.out[-1][0] == fd:
            self.out[-1] = (fd, self.out[-1][1] + data)
        else:
            self.out.append((fd, data))

    def _path(self, path: Any) -> str | None:
        """``path`` (str, bytes, path-like) made absolute against the working folder the run started in, and not
        normalised: ``link/../x`` names the ``x`` beside the link's target, not the one in the working folder, and
        the status of the path as given is that of the file the run opened."""
        try:
            p = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        return os.path.join(self.cwd, p)

    def _cached(self, p: str) -> bool:
        """Whether ``p`` (absolute) is one of the cache's own folders or an entry in one (named as given or with its
        links resolved): a file in one named as an entry or a temporary file is (:func:`_entry_name`). Nothing else
        in the cache folder is the cache's, nor a file an argument names: a GGUF file given to ``header`` under an
        entry's name in the cache's ``documents`` folder was left out of the stamp, and the memo replayed its header
        after the file was replaced by another (slip round 31)."""
        if os.path.normpath(p) in self.named:
            return False
        p = os.path.realpath(p) if ".." in p.split(os.sep) else os.path.normpath(p)
        if p in self.cache_folders:
            return True
        head, name = os.path.split(p)
        return head in self.entry_folders and _entry_name(name)

    def looked_up(self, path: Any, dir_fd: Any = None) -> None:
        """Note ``path``, named to :func:`os.stat`, :func:`os.lstat`, :func:`os.access` or :func:`os.readlink`
        (which raise no audit event), made absolute against the working folder (``dir_fd`` not given). What the run
        found there (or did not) is an input; the rest of its folder is not. Absolute names outside the working
        folder are noted too (:func:`world` keeps those outside the trees it walks and the standard library): a
        translation of click's messages installed where :mod:`gettext` looked for one by ``os.path.exists`` alone
        (``sys.base_prefix/share/locale/LANG/LC_MESSAGES/messages.mo``) once left ``cards --help`` replaying the
        English text a fresh run no longer prints (slip round 31)."""
        if dir_fd is not None or isinstance(path, int):
            return  # a folder's descriptor, or a file's: opened, and audited, before
        try:
            p = os.fsdecode(os.fspath(path))
        except TypeError:
            return
        if not os.path.isabs(p):
            p = os.path.join(self.cwd, p)
        if p not in self.looked:
            self.looked[p] = "?"  # first, so the lookup below is not noted again
            self.looked[p] = _kind(p)  # as the run found it: one that changes before the stamp spoils the run

    def _watch_lookups(self) -> None:
        """Put :meth:`looked_up` in front of :func:`os.stat`, :func:`os.lstat`, :func:`os.access` and
        :func:`os.readlink` (``pathlib``, ``os.path`` and passprice's own lookups call them through ``os``), each
        wrapper standing in the ``os.supports_*`` sets where the function does; :meth:`stop` puts them back."""
        for name in ("stat", "lstat", "access", "readlink"):
            real = getattr(os, name, None)
            if real is None:
                continue
            self.unwatched[name] = real

            def watched(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
                self.looked_up(path, kwargs.get("dir_fd"))
                return _real(path, *args, **kwargs)

            setattr(os, name, watched)
            for group in _SUPPORTS:
                if real in group:
                    group.add(watched)

    def _unwatch_lookups(self) -> None:
        for name, real in self.unwatched.items():
            watched = getattr(os, name)
            setattr(os, name, real)
            for group in _SUPPORTS:
                group.discard(watched)
        self.unwatched = {}

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
            if self._cached(p) or (not writes and (p == memo.MOUNTINFO or p.startswith(memo.FDINFO))):
                # (the mount table, and a descriptor's mount, are read to decide whether a status may name a file's
                # bytes, memo.keeps_ctime: which files are hashed, never what a run prints; as a world item,
                # /proc/self resolved to this process's id, it made every run a miss)
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
        if not Recorder.hooked:
            sys.addaudithook(_audit)
            Recorder.hooked = True
        Recorder.current = self
        self._watch_lookups()
        self.streams = [_tee(sys.stdout, 1, self), _tee(sys.stderr, 2, self)]
        sys.stdout, sys.stderr = self.streams
        if sys.stdin is not None:
            sys.stdin = Stdin(sys.stdin, self)
        return True

    def stop(self) -> None:
        """Stop watching: flush the tees (a failure spoils the run), give the streams back."""
        Recorder.current = None
        self._unwatch_lookups()
        for s in self.streams:
            try:
                s.flush()
            except (OSError, ValueError):
                self.spoil("the output could not be written")
        sys.stdin, sys.stdout, sys.stderr = self.saved


def _audit(event: str, args: tuple[Any, ...]) -> None:
    recorder = Recorder.current
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


#: The most files and folders a run's world stamp holds, and the most bytes hashed to make it: a registry root inside
#: a large folder (a home folder holding ``facts/`` and ``registry/``) is not stamped (its runs are not kept), so a
#: first run never spends long hashing, and a lookup stats at most this many paths.
MAX_TREE_ITEMS = 10_000
#: How many times a file the run did not read is hashed again when it changed while hashed (:meth:`_World.file`).
_RETRIES = 3
MAX_HASHED = 128 << 20


class _World:
    """The world stamp of a finished run: its items, or why it cannot be known."""

    def __init__(self, since: int, recorder: Recorder, old: dict[str, Any] | None) -> None:
        self.since = since
        self.recorder = recorder
        self.items: list[tuple[Any, ...]] = []
        self.trees: list[str] = []
        #: Folders in a tree the walk named and did not enter (:meth:`inside`).
        self.skipped: list[str] = []
        self.hashed = 0
        #: (device, inode) of every file the run opened.
        self.read = {(st[1], st[2]) for st in recorder.opened.values() if st is not None}
        self.known: dict[str, tuple[Any, ...]] = {}
        #: Folders resolved by :meth:`_realpath`, by the path they were named by.
        self.folders_real: dict[str, str] = {}
        if old is not None:
            try:
                self.known = {item[0]: item for item in old["items"] if item[1] == "f" and not item[3]}
            except Exception:
                self.known = {}

    def racy(self, st: tuple[int, ...]) -> bool:
        return _recent(st[5], self.since, memo.TRUST_NS)

    def kept(self, st: tuple[int, ...] | None, what: str) -> None:
        """Spoil the run when ``st`` (a file it read or folder it listed, after the run) changed lately."""
        if st is None or _recent(st[5], self.since, memo.KEEP_NS):
            self.recorder.spoil(f"{what} changed during or just before the run")

    def inside(self, path: str) -> bool:
        """Whether the tree walks stamped ``path``: it lies in a tree and not in a folder the walk names without
        entering (a ``.git``, the cache's own folders). A file the run read in one of those is stamped on its own:
        before, ``header .git/h.gguf`` in the root replayed the old header's output after the file was replaced."""
        if any(path == s or path.startswith(s + os.sep) for s in self.skipped):
            return False
        return any(path == t or path.startswith(t + os.sep) for t in self.trees)

    def resolved(self, path: str) -> str:
        """``path`` with every link and ``..`` resolved; when that is not ``path`` itself, an item that holds while
        ``path`` still resolves so (a link on the way retargeted is a miss: the file or folder stamped under its
        resolved name, as a root's tree is, may be unchanged while the one ``path`` now names is another)."""
        real = self._realpath(path)
        if real != path:
            self.items.append((path, "r", None, True, real))
        return real

    def _realpath(self, path: str) -> str:
        """``os.path.realpath(path)``, its folder resolved once for every file in it: :func:`os.path.realpath` takes
        an ``lstat`` of each component of each path (some 1,100 of them for the 160 modules and files of a price,
        about a third of the stamp's cost). A last component that is a link, ``.``, ``..``, or not there is resolved
        by :func:`os.path.realpath` itself."""
        head, tail = os.path.split(path)
        if tail in ("", ".", "..") or not os.path.isabs(path):
            return os.path.realpath(path)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(path)
        except (OSError, ValueError):
            return os.path.realpath(path)
        folder = self.folders_real.get(head)
        if folder is None:
            folder = self.folders_real[head] = os.path.realpath(head)
        return os.path.join(folder, tail)

    def file(self, path: str, st: tuple[int, ...], read: bool) -> None:
        """Stamp the file ``path`` of status ``st``: its sha256 when the run ``read`` it or it changed lately (its
        status proves nothing then), else its status alone (a later change to it is a miss; its bytes were no
        input). A digest of the previous entry serves a file whose status has not changed since."""
        racy = self.racy(st)
        # A module's bytecode (``.pyc``), which the interpreter opens for every import, is stamped by its status alone
        # when that is proof (not racy): its source is stamped beside it, and a rewrite of either moves its status,
        # a miss (never a stale replay). Hashing them was most of a miss's sha256 (about 1.6 MB of click's, attrs'
        # and passprice's bytecode for a price: 50 M instructions under callgrind).
        read = read and not path.endswith(".pyc")
        if read and not racy and memo.writers(path) == 1:
            # A writer holds it (a writable shared mapping writes unseen by the status): what the run read cannot be
            # told from what a later lookup's status would vouch for (attack67: a card edited through a held mapping
            # replayed the old price)
            self.recorder.spoil(f"{path} is open for writing")
        need = (read or racy) and st[3] <= BIG
        known = self.known.get(path)
        # (only where the status proves the bytes unchanged, memo.keeps_ctime: on a file system whose ctime follows
        # mtime, a same-size edit with its mtime put back kept the previous entry's digest of the old bytes beside
        # the output of the new, replayed once the file was edited back)
        if (known is not None and known[2] == st and (known[4] is not None or not need)
                and memo.keeps_ctime(st[1], path)):
            digest = known[4]
        elif need:
            digest = _digest(path, st)
            self.hashed += st[3]
            for _ in range(_RETRIES if not read else 0):
                # A file the run did not read (a tree's), rewritten while the stamp hashed it: its bytes were no input,
                # so it is stamped as it is now, status and bytes taken again (leftovers round 21: another process
                # writing a .pyc into the package's __pycache__ left a replay test's run not kept).
                if digest is not None:
                    break
                try:
                    st = _stamp(os.stat(path))
                except (OSError, ValueError):
                    break
                racy = self.racy(st)
                digest = _digest(path, st)
                self.hashed += st[3]
            if digest is None:
                self.recorder.spoil(f"{path} changed while it was read")
        else:
            digest = None
        self.items.append((path, "f", st, racy, digest))

    def folder(self, path: str, st: tuple[int, ...]) -> None:
        try:
            listing = _listing(path)
        except OSError:
            self.recorder.spoil(f"{path} cannot be listed")
            return
        self.items.append((path, "d", st, self.racy(st), listing))

    def own(self, path: str) -> None:
        """Stamp the cache's own folder ``path``, met in a tree (``PASSPRICE_CACHE_DIR`` inside the registry): its
        status and the names in it that are not the cache's (:func:`passprice.memo.own_listing`). Its entries are
        keyed by content and change run after run; anything else in it is the registry's as much as any file: left
        out of the stamp, a lock copied into ``locks/memo`` (the cache folder set to ``locks``) replayed "all holds"
        of a ``check`` that now fails on it (round 22)."""
        try:
            st = _stamp(os.stat(path))
            listing = memo.own_listing(path)
        except OSError:
            self.recorder.spoil(f"{path} cannot be listed")
            return
        self.kept(st, path)
        self.items.append((path, "c", st, self.racy(st), listing))

    def through(self, link: str, stack: list[str]) -> None:
        """Stamp what the link ``link`` (in a tree) resolves to, when that lies outside every tree: a folder is walked
        as a tree of its own (pushed on ``stack``), a file stamped, anything else (nothing: a dangling link) known by
        its kind; and what it resolves to, so a link retargeted is a miss. A command looks a file up through a link
        by its status alone (whether ``sources/ID.toml`` is there, with ``sources`` a link to a shared folder): the
        tree must hold what is on the far side of its links, not only their text."""
        real = self.resolved(link)
        if self.inside(real):
            return
        try:
            st = _stamp(os.stat(real))
        except (OSError, ValueError):
            self.items.append((real, "p", None, True, _kind(real)))
            return
        if stat.S_ISDIR(st[0]):
            self.trees.append(real)
            stack.append(real)
        elif stat.S_ISREG(st[0]):
            self.file(real, st, (st[1], st[2]) in self.read)
        else:
            self.items.append((real, "p", None, True, _kind(real)))

    def tree(self, top: str) -> None:
        """Every folder, file and link below ``top`` (``.git`` and the cache folder named, not entered)."""
        stack = [top]
        while stack:
            if len(self.items) > MAX_TREE_ITEMS or self.hashed > MAX_HASHED:
                self.recorder.spoil(f"{top} holds more than the memo stamps")
                return
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
                if len(self.items) > MAX_TREE_ITEMS or self.hashed > MAX_HASHED:
                    self.recorder.spoil(f"{top} holds more than the memo stamps")
                    return
                try:
                    if e.is_symlink():
                        listing.append((e.name, "l"))
                        self.items.append((e.path, "l", _stamp(e.stat(follow_symlinks=False)), True,
                                           os.readlink(e.path)))
                        self.through(e.path, stack)
                    elif e.is_dir():
                        listing.append((e.name, "d"))
                        if e.name == ".git":
                            self.skipped.append(e.path)
                        elif self.recorder._cached(e.path):
                            self.skipped.append(e.path)
                            self.own(e.path)
                        elif e.path not in self.trees:
                            stack.append(e.path)
                    elif e.is_file():
                        stamp = _stamp(e.stat())
                        listing.append((e.name, "f"))
                        self.file(e.path, stamp, (stamp[1], stamp[2]) in self.read)
                    else:
                        listing.append((e.name, "o"))
                except FileNotFoundError:
                    # Gone since the folder was listed (a temporary file renamed: the interpreter writing a .pyc): not
                    # there now, so not in the stamp. The folder's own status, taken before, then differs at a lookup,
                    # which lists it again. A file the run read that went away is refused below ("went away").
                    if (e.path in self.recorder.opened) or e.path in self.recorder.listed:
                        self.recorder.spoil(f"{e.path} cannot be read")
                        return
                except OSError:
                    self.recorder.spoil(f"{e.path} cannot be read")
                    return
            listing.sort()
            self.items.append((here, "d", st, self.racy(st), tuple(listing)))


def world(since: int, recorder: Recorder, argv: list[str], probes: list[tuple[str, str]],
          old: dict[str, Any] | None) -> list[tuple[Any, ...]] | None:
    """The world stamp of the run ``recorder`` watched (started at ``since``, ns), or ``None`` when the run cannot
    be kept (``recorder.spoiled`` says why)."""
    from passprice.errors import InputError
    from passprice.registry import find_root

    w = _World(since, recorder, old)
    option = _root_option(argv)
    try:
        root = os.path.realpath(find_root(option).path)
    except (InputError, OSError):
        recorder.spoil("no registry root")
        return None
    if option is not None:
        # The root as given (``--root current`` a link to a release's folder): retargeted, a miss.
        w.items.append((os.path.join(recorder.cwd, option), "r", None, True, root))
    w.trees = [root]
    package = _package()
    if not w.inside(package):
        w.trees.append(package)
    for top in list(w.trees):
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

    # The working folder is stamped by what the run looked up in it (below), not by its whole listing: a busy
    # folder (/tmp) changed between every two runs and no run from it replayed. It is listed whole where the run
    # listed it, read a file in it, or imports from it (a sys.path entry "", ".", or relative).
    folders: dict[str, tuple[int, ...] | None] = {}
    files: dict[str, tuple[int, ...] | None] = dict(recorder.opened)
    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None)
        if isinstance(source, str) and os.path.isabs(source):
            files.setdefault(os.path.normpath(source), None)
    for entry in sys.path:
        if isinstance(entry, str):
            folder = os.path.normpath(os.path.join(recorder.cwd, entry))
            folders.setdefault(folder, None)
            # Its .pth files were read when the interpreter started, before the hook: stamped by status.
            with contextlib.suppress(OSError):
                for name in os.listdir(folder):
                    if name.endswith(".pth"):
                        files.setdefault(os.path.join(folder, name), None)
    for p, before in files.items():
        if not ours(p):
            continue
        try:
            st = _stamp(os.stat(p))
        except (OSError, ValueError):
            if before is None and p in recorder.opened:
                # an open that failed: its absence is an input, as _kind finds it (a link to nothing is not nothing:
                # stamped "-", a dangling ~/.gitconfig never replayed once _kind told them apart; session 18's CI)
                w.items.append((p, "p", None, True, _kind(p)))
                continue
            recorder.spoil(f"{p} went away")
            continue
        if before is None and p in recorder.opened:
            recorder.spoil(f"{p} appeared during the run")
        elif before is not None and before != st:
            recorder.spoil(f"{p} changed during the run")
        w.kept(st, p)
        real = w.resolved(p)
        folders.setdefault(os.path.dirname(real), None)
        if not w.inside(real):
            w.file(p, st, p in recorder.opened)
    for p, before in recorder.listed.items():
        folders[p] = before
    for p, before in folders.items():
        if not ours(p) or w.inside(w.resolved(p)):
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
    probed = {p for p, _ in now}
    for p, found in sorted(recorder.looked.items()):
        if p in probed or not ours(p):
            continue
        kind = _kind(p)
        if kind != found:
            recorder.spoil(f"{p} changed during the run")
        elif ".." in p.split(os.sep) or not w.inside(os.path.normpath(p)):
            w.items.append((p, "p", None, True, kind))
    return None if recorder.spoiled else w.items


def _store(path: str, entry: dict[str, Any]) -> bool:
    """Write ``entry`` to ``path`` as :mod:`passprice.cache` writes its entries; whether it was written (``False``,
    silently, when it cannot be)."""
    from pathlib import Path

    from passprice import cache
    from passprice.errors import InputError
    from passprice.files import make_folder

    body = marshal.dumps(entry)
    target = Path(path)
    try:
        make_folder(target.parent)
        cache._write_entry(target, _checksum(body) + b"\n" + body)
    except (InputError, OSError):
        return False
    cache._prune(target.parent, memo.MAX_ENTRIES)
    return True


def record(argv: list[str], key: str, path: str, since: int, cwd: str, cache: str, old: dict[str, Any] | None,
            fallback: Callable[[], object]) -> None:
    """Run ``fallback`` (the command: passprice's CLI) for ``argv`` (``sys.argv[1:]``), started at ``since`` (ns)
    in ``cwd``, watched and teed; keep what it printed at ``path`` under ``key`` when it may be kept (``old``: the
    entry found there, whose digests serve files unchanged since). Raises what the command raises."""
    # The entry's folder is made before the run, not when the entry is stored: made then, it would change the
    # listing of a folder the stamp holds (the cache folder's parent, when the run read a file beside it).
    with contextlib.suppress(OSError):
        make_folders(os.path.dirname(path))
    probes = _probes(argv, cwd)
    recorder = Recorder(cwd, cache)
    recorder.named = {os.path.normpath(p) for p, _ in probes}
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
        if status != 0:
            recorder.spoil("exited with a status other than 0")
        if recorder.spoiled is None:
            try:
                items = world(since, recorder, argv, probes, old)
                if items is not None and not _store(
                    path, {"key": key, "since": since, "items": items, "out": recorder.out, "status": 0}
                ):
                    recorder.spoil("the entry could not be written")
            except KeyboardInterrupt as e:
                # Ctrl-C while the stamp is taken (a first run hashes what it read) or the entry written (a torn
                # entry fails its checksum): nothing is kept, and the command ends as one interrupted does — one
                # line, status 130 — not with the interpreter's traceback. SIGTERM and SIGHUP arrive as the command
                # line's Terminated (a KeyboardInterrupt carrying its status: 143, 129), ended as the command line
                # ends them.
                stopped = getattr(e, "status", 130)
                os.write(2, b"passprice: interrupted\n" if stopped == 130 else b"passprice: terminated\n")
                raise SystemExit(stopped) from None
            except Exception as e:
                recorder.spoil(f"the stamp failed: {type(e).__name__}")
        if os.environ.get("PASSPRICE_MEMO_DEBUG"):
            os.write(2, f"memo: {recorder.spoiled or 'kept'} (status {status})\n".encode())


