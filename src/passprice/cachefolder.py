"""Where passprice's cache lives, whether it is bypassed, and which of its files are read: the rules of
:mod:`passprice.cache`, in a module that imports nothing beyond ``os`` and ``sys`` (both loaded before any Python
program runs), so that the result memo (:mod:`passprice.memo`) can look an entry up before anything else of passprice
is imported. :mod:`passprice.cache` asks this module too: one place for each rule.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def _home() -> str:
    """The user's home folder (``os.path.expanduser``, as :meth:`pathlib.Path.home`). Raises :class:`RuntimeError`
    when there is none (no ``$HOME`` and no password entry), as :meth:`pathlib.Path.home` does, and when it is no
    folder that exists: ``HOME=/nonexistent`` (the home of system accounts such as ``nobody``) made the cache create
    ``/nonexistent/.cache/passprice`` at the file system's top, for a user who may write there (attack round 26);
    no cache is kept instead."""
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return existing(home)


def existing(home: str) -> str:
    """``home``, a home folder, when it is an absolute path to a folder that exists. Raises :class:`RuntimeError`
    otherwise (the cache is then not kept: :func:`_home`): a relative ``$HOME`` (``HOME=.``) made the cache
    ``./.cache/passprice`` inside whatever folder a command ran in, a registry's own (attack round 42), as a
    relative ``$XDG_CACHE_HOME`` would have (:func:`folder`)."""
    if not os.path.isabs(home):
        raise RuntimeError(f"The home directory {home!r} is not an absolute path.")
    if not os.path.isdir(home):
        raise RuntimeError(f"The home directory {home!r} does not exist.")
    return home


#: :func:`registry_holding` of each cache folder :func:`folder` answered, once a process (the document cache asks
#: for its folder at each entry it reads: the walk up its folders was that many more system calls).
_held: dict[str, str | None] = {}


#: The longest cache folder path kept, in bytes: every cache file's lookup resolves each of its folders, so a
#: ``PASSPRICE_CACHE_DIR`` 3,000 folders deep (6 KB) made every ``cards`` take 8.7 s (1.6 s with no cache; attack
#: round 63); no cache is kept past it. Linux's ``PATH_MAX`` is 4,096, and an entry's name adds 80 bytes.
MAX_FOLDER_BYTES = 1024


def folder(home: Callable[[], str] = _home) -> str:
    """The folder of passprice's cache: ``$PASSPRICE_CACHE_DIR`` when it is an absolute path (a relative one is
    ignored, as the XDG Base Directory specification ignores a relative ``$XDG_CACHE_HOME``, so no cache is made
    inside whatever folder a command runs in); else ``%LOCALAPPDATA%\\passprice\\Cache`` on Windows,
    ``~/Library/Caches/passprice`` on macOS, ``$XDG_CACHE_HOME/passprice`` or ``~/.cache/passprice`` elsewhere.
    ``home`` gives the home folder when one is needed (:meth:`pathlib.Path.home` for :mod:`passprice.cache`).
    Raises :class:`RuntimeError` when a home folder is needed and there is none, when its path is longer than
    :data:`MAX_FOLDER_BYTES`, and when the folder lies inside a
    passprice registry (:func:`registry_holding`: no cache is kept there; :func:`refusal` says why)."""
    chosen, _ = _chosen(home)
    if len(os.fsencode(chosen)) > MAX_FOLDER_BYTES:
        raise RuntimeError(f"The cache folder's path is longer than {MAX_FOLDER_BYTES:,} bytes.")
    held = _held.get(chosen, False)
    if held is False:
        held = _held[chosen] = registry_holding(chosen)
    if held is not None:
        raise RuntimeError(f"The cache folder {chosen!r} lies inside a passprice registry.")
    return chosen


def _chosen(home: Callable[[], str] = _home) -> tuple[str, str]:
    """The cache folder the environment names, and the variable that names it (``PASSPRICE_CACHE_DIR``,
    ``XDG_CACHE_HOME``, ``LOCALAPPDATA`` or ``HOME``), by :func:`folder`'s rule but before its registry check.
    Raises :class:`RuntimeError` when a home folder is needed and there is none."""
    explicit = os.environ.get("PASSPRICE_CACHE_DIR")
    if explicit and os.path.isabs(explicit):
        return explicit, "PASSPRICE_CACHE_DIR"
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        base = local or os.path.join(home(), "AppData", "Local")
        return os.path.join(base, "passprice", "Cache"), "LOCALAPPDATA" if local else "HOME"
    if sys.platform == "darwin":
        return os.path.join(home(), "Library", "Caches", "passprice"), "HOME"
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The specification: a relative path in $XDG_CACHE_HOME is invalid and is ignored.
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "passprice"), "XDG_CACHE_HOME"
    return os.path.join(home(), ".cache", "passprice"), "HOME"


def registry_holding(path: str) -> str | None:
    """The nearest folder at or above ``path`` that is a passprice registry — one holding both ``facts/`` and
    ``registry/`` folders, as :func:`passprice.registry.find_root` finds one — or ``None``; ``path`` is looked at as
    written (made absolute, ``..`` folded) and, where that lies in no registry, as the file system resolves it
    (:func:`os.path.realpath`: symbolic links followed, a ``..`` after a link leading to the target's parent). A
    cache folder there (``PASSPRICE_CACHE_DIR`` set to a registry's ``facts/``) made passprice write its ``code/``,
    ``documents/``, ``memo/`` and ``objects/`` into the registry, and ``check`` still passed (leftovers round 27b);
    so did one named through a link outside the registry to its ``facts/`` (``/tmp/link/cc`` with ``/tmp/link`` →
    ``REGISTRY/facts``, or ``/tmp/link/../registry/cc``, attack round 49): :func:`folder` refuses both. Raises
    nothing."""
    written = os.path.abspath(path)
    found = _registry_above(written)
    if found is None:
        real = os.path.realpath(path)  # ``..`` after a link is the link target's parent, as the system reads it
        if real != written:
            found = _registry_above(real)
    return found


def _registry_above(here: str) -> str | None:
    """The nearest folder at or above the absolute path ``here`` holding both ``facts/`` and ``registry/``
    folders, or ``None``. Raises nothing."""
    while True:
        if os.path.isdir(os.path.join(here, "facts")) and os.path.isdir(os.path.join(here, "registry")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def refusal() -> str | None:
    """The one line refusing the environment's cache folder when it lies inside a passprice registry
    (:func:`registry_holding`), naming the variable that set it, the folder and the registry; ``None`` when it lies
    elsewhere, or there is none (no home folder). Every command stops on that line, exit 2 (:mod:`passprice.cli`),
    and :func:`folder` never answers such a folder, so nothing is written there even before the command runs (the
    result memo, the compiled code kept)."""
    try:
        chosen, variable = _chosen()
    except RuntimeError:
        return None
    registry = registry_holding(chosen)
    if registry is None:
        return None
    named = os.environ.get(variable, "") if variable != "HOME" else os.path.expanduser("~")
    real = os.path.realpath(chosen)
    lexical = _registry_above(os.path.abspath(chosen))
    linked = "" if lexical is not None else f" (through a symbolic link: {real})"
    return (
        f"{variable}={named}: the cache folder {chosen}{linked} lies inside the passprice registry at {registry}, and "
        "passprice would write its cache (code/, documents/, memo/, objects/) among the registry's files: set "
        f"{variable} to a folder outside any registry (or bypass the cache: PASSPRICE_NO_CACHE=1)"
    )


def make_folders(path: str | os.PathLike[str], mode: int = 0o777) -> None:
    """Create folder ``path`` and each missing folder above it (``mode``, under the umask), as
    ``os.makedirs(path, mode, exist_ok=True)`` does, but in a loop, not by recursion: a path of more missing
    folders than the interpreter's recursion limit (``$XDG_CACHE_HOME`` or ``init``'s folder given as ``a/b/…``
    2,000 deep, within the 4,096 bytes a path may hold) made ``os.makedirs`` and :meth:`pathlib.Path.mkdir` raise
    :class:`RecursionError`, a traceback (attack round 24). Raises :class:`OSError` as :func:`os.mkdir` does
    (:class:`FileExistsError` when a file, not a folder, is in the way; :class:`NotADirectoryError` when a file is
    above)."""
    path = os.path.abspath(os.fspath(path))
    missing: list[str] = []
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    if not missing and not os.path.isdir(path):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise


def bypassed() -> bool:
    """Whether the environment bypasses the cache: ``PASSPRICE_NO_CACHE`` set to anything but ``""`` or ``"0"``."""
    return os.environ.get("PASSPRICE_NO_CACHE", "") not in ("", "0")


def trusted(st: os.stat_result) -> bool:
    """Whether an entry file of status ``st`` is one this user's passprice wrote: owned by the user and writable by
    no one else. The cache is trusted as the user's own files are (whoever can write it can change what a run
    prints, as whoever can write the registry can); a file another user could have put or changed there is a miss."""
    uid = getattr(os, "geteuid", None)
    return (uid is None or st.st_uid == uid()) and not st.st_mode & 0o022


def read(path: str, limit: int) -> bytes | None:
    """The bytes of the entry file ``path``, or ``None`` (a miss): none there, not a regular file (a FIFO would
    block the read, ``/dev/zero`` has no end: the path is ``stat``-ed before it is opened, then opened with
    ``O_NONBLOCK`` and the descriptor checked again), larger than ``limit`` bytes (read off the descriptor before a
    byte of it), not :func:`trusted`, or unreadable."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or not trusted(st):
            return None
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, max(st.st_size + 1 - len(data), 1 << 16))
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


#: The lengths of an entry's key (hex) and the suffixes of the entries written under it: the cache's documents,
#: objects, memo entries and file status records (``stamps/``, :mod:`passprice.filestamps`) (64) and its compiled
#: code (40).
_ENTRY_SUFFIXES = {64: ("json", "pickle", "memo", "stamps"), 40: ("code",)}
_HEX = frozenset("0123456789abcdef")


def entry_name(name: str) -> bool:
    """Whether ``name`` is that of a cache entry (its key in hex, then its kind's suffix: ``KEY.json``, ``.pickle``,
    ``.memo``, ``.stamps``, ``.code``) or of a temporary file one is written through (``.XXXX.tmp``,
    ``KEY.code.PID.tmp``): a user's ``grid.json`` in a folder the cache shares a name with
    (``PASSPRICE_CACHE_DIR=$HOME``, ``~/documents``) is not the cache's."""
    if name.startswith(".") and name.endswith(".tmp"):
        return True
    key, _, rest = name.partition(".")
    suffix = rest.split(".", 1)[0]
    return suffix in _ENTRY_SUFFIXES.get(len(key), ()) and _HEX.issuperset(key)
