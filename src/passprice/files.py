"""passprice reads and writes regular files only, and a file it writes is replaced whole or not at all: a reader sees
the old file or the new one, never half of one, and an existing file is replaced only when asked (``--force``).

Every reader of a named file goes through :func:`open_regular` (a FIFO, a device, a socket or a folder is refused
before a byte is read, so no read blocks or runs without end); every writer — locks, checkpoint entries, fact edits,
sweep and simulation outputs, roofline pictures — goes through :func:`write_atomically`, which writes through a
symbolic link to its target, keeps the target's permission bits, and never replaces a read-only or special file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from passprice import filestamps
from passprice.cachefolder import make_folders
from passprice.errors import InputError, NotFound, Unreadable, escaped

#: A UTF-8 byte-order mark (``codecs.BOM_UTF8``; decoded, U+FEFF).
BOM = b"\xef\xbb\xbf"


def refuse_bom(path: Path | str, start: bytes | str) -> None:
    """One rule for every text file passprice reads (a TOML file, a trace's JSON Lines, a model configuration's
    JSON): UTF-8 without a byte-order mark. Raise :class:`InputError` ``PATH: starts with a byte-order mark (U+FEFF):
    save it as UTF-8 without BOM`` when ``start`` (the file's first bytes, or its text) begins with one. Refused, not
    skipped: TOML and JSON have none (RFC 8259 §8.1: a writer must not add one), ``tomllib`` and ``json.loads``
    refuse one, and passprice rewrites the files it edits byte for byte. A trace's was skipped and a TOML file's
    refused, so one file saved by one editor read in one place and not in another (session 24)."""
    marked = start.startswith(BOM) if isinstance(start, bytes) else start.startswith("\ufeff")
    if marked:
        raise InputError(f"{path}: starts with a byte-order mark (U+FEFF): save it as UTF-8 without BOM")


#: What a file that is not a regular one is, by its mode, in words.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is, in words: ``a regular file``, ``a folder``, ``a FIFO (named
    pipe)``, ``a character device`` …"""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def shown(path: Path | str) -> str:
    """``path`` for an error line: each character that does not print escaped (:func:`passprice.errors.escaped`: a
    newline in a file name would split the line in two, a U+202E reorder it), each component over 80 characters cut
    to its ends and its length (a name too long for the file system would otherwise fill the screen)."""
    parts = str(path).split(os.sep)
    cut = (p if len(p) <= 80 else f"{p[:24]}…{p[-24:]} ({len(p):,} characters)" for p in parts)
    return escaped(os.sep.join(cut))


def shell_word(path: Path | str) -> str:
    """``path`` as one word to paste into a POSIX shell, on one line: :func:`shlex.quote`'s when every character
    prints; otherwise bash's ``$'…'`` quoting, each character that does not print (:func:`passprice.errors.escaped`)
    as the ``\\xHH`` escapes of its bytes (a byte of a name that is not UTF-8, held as a lone surrogate, as itself), so
    the command names the very file. A ``shlex.quote`` of a name holding a newline spans two lines, and one holding
    ESC would drive the terminal (attack round 21: the ``rm`` of a left temporary file's warning). A relative name
    starting with ``-`` is written ``./-x``: ``init -- -`` advised ``cd - && git init``, which goes back to the
    previous folder and makes a repository there (attack round 31)."""
    import shlex

    text = str(path)
    if text.startswith("-"):  # a command reads it as an option: `cd -` went back to the last folder (round 31)
        text = f"./{text}"
    if text.isprintable():
        return shlex.quote(text)
    out = []
    for c in text:
        if c in "\\'":
            out.append("\\" + c)
        elif c.isprintable() or c == " ":
            out.append(c)
        else:
            raw = c.encode("utf-8", "surrogateescape")
            out.append("".join(f"\\x{b:02x}" for b in raw))
    return "$'" + "".join(out) + "'"


def unsearchable(path: Path | str) -> Path | None:
    """The first folder on the way to ``path`` (its own ancestors, outermost first; not ``path`` itself) that this
    process may not search (no ``x`` permission for it: ``os.access(folder, X_OK)``), or ``None``. Root may search
    every folder, so this only ever answers for another user."""
    given = Path(path)
    for folder in reversed(given.parents):
        if not os.access(folder, os.X_OK) and folder.is_dir():
            return folder
    return None


#: The end of the one line for a folder that may be listed but not searched (:func:`folder_refusal`,
#: :meth:`passprice.registry.Root.names`): ``FOLDER: cannot read its files: …``. Its leading ``FOLDER`` is the file the
#: user opens to fix it, so every command names it alike (left40): as the user gave the root, never relative to the
#: registry (:func:`passprice.check.relative_lines` leaves such a line alone: ``servings`` said ``facts/cards`` where
#: ``cards``, ``price`` and ``kv`` said ``/abs/REG/facts/cards`` under ``--root /abs/REG``), and by
#: :meth:`passprice.registry.Root.folder_named` for the built-in registry (:func:`passprice.registry.as_given`).
UNSEARCHABLE = ": cannot read its files: the folder may not be searched by this user"


#: The end of the one line for a folder that may be searched but not listed (mode ``311``: ``EACCES`` on
#: ``listdir``), which every command that needs the folder's listing gives (:func:`listing_refusal`, left41): ``FOLDER:
#: cannot be listed: the folder may not be read by this user``. A command that reads only files it names (``price
#: SERVING`` of ``facts/cards``) goes on; one that needs every file (``cards``, ``check``, ``kv``) stops on this line.
UNLISTABLE = ": cannot be listed: the folder may not be read by this user"


def listing_refusal(error: OSError, folder: Path | str, named: str | None = None) -> Unreadable:
    """The one line for ``folder`` whose listing failed with ``error``, naming it as ``named`` (default: shown, as
    :func:`shown` names it): ``FOLDER`` + :data:`UNLISTABLE` for a permission error (``EACCES``, mode ``311``), else
    ``FOLDER: cannot be listed: WHY`` (:func:`why`). Before left41, ``cards`` said ``FOLDER: cannot list: Permission
    denied`` and ``check`` passed a ``registry/checkpoints`` it could not list ("0 checkpoints … all holds", exit 0).
    Raises nothing."""
    name = shown(folder) if named is None else named
    if error.errno == errno.EACCES and unsearchable(folder) is None:
        return Unreadable(f"{name}{UNLISTABLE}")
    return Unreadable(f"{name}: cannot be listed: {why(error, folder)}")


def unsearchable_folder(line: str) -> str | None:
    """The folder a :data:`UNSEARCHABLE` line names (the text before it, as shown), or ``None`` for any other line.
    Raises nothing."""
    return line[: -len(UNSEARCHABLE)] if line.endswith(UNSEARCHABLE) else None


def folder_refusal(error: OSError, path: Path | str) -> InputError | None:
    """The one line for a permission error (``EACCES``) met reading ``path`` because one of its folders may not be
    searched (:func:`unsearchable`), naming that folder alone: ``facts/cards: cannot read its files: the folder may not
    be searched by this user``; ``None`` for any other error. Every file a command needs in that folder gets this same
    line, which a command's problems keep once (left38: ``servings`` and ``validate`` printed one line a card, 4-7
    lines each naming the folder), as :meth:`passprice.registry.Root.names` says of a folder listed but not searched.
    Raises nothing."""
    if error.errno != errno.EACCES:
        return None
    folder = unsearchable(path)
    if folder is None:
        return None
    return Unreadable(f"{shown(folder)}{UNSEARCHABLE}")


def why(error: OSError, path: Path | str | None = None) -> str:
    """An ``OSError`` in words a person acts on. A permission error (``EACCES``) met on the way to ``path`` names
    the folder it came from, when one of ``path``'s folders may not be searched (:func:`unsearchable`): run as a user
    who may not enter ``facts/cards/``, every card said only ``facts/cards/NAME.toml: Permission denied``, which
    reads as the card's own mode (attack round 61)."""
    if error.errno == errno.ENAMETOOLONG:
        return "the name is longer than the file system allows"
    if error.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if error.errno == errno.EACCES and path is not None:
        folder = unsearchable(path)
        if folder is not None:
            return f"permission denied: the folder {shown(folder)} may not be searched by this user"
    return error.strerror or str(error)



def look(path: Path | str, doing: str | None = None) -> os.stat_result | None:
    """What ``path`` names, symbolic links followed: its status, or ``None`` when nothing is there (no such file, or
    a path through a file). Every name → path lookup goes through here (or :func:`is_folder` and
    :func:`is_there`), so no ``OSError`` of a hostile name reaches the user as a traceback. ``doing`` (``"read"``,
    ``"write"``) words the refusal as the reader's and writer's lines are: ``PATH: cannot read: the name is longer
    than the file system allows`` (a folder given on the command line, ``--root DIR`` and ``init DIR``; left39).

    Raises :class:`InputError`, one line naming ``path``, for any other failure: a name longer than the file system
    allows (``ENAMETOOLONG``, a component over 255 bytes), a loop of symbolic links (``ELOOP``), a folder that may
    not be searched (``EACCES``), a name holding a NUL character."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        said = f"cannot {doing}: " if doing else ""
        raise folder_refusal(e, path) or Unreadable(f"{shown(path)}: {said}{why(e, path)}") from None
    except ValueError:  # "embedded null byte": a name from a TOML file may hold one
        raise InputError(f"{str(path)!r}: not a file name (it holds a NUL character)") from None


def is_folder(path: Path | str) -> bool:
    """Whether ``path`` names a folder (links followed). Raises :class:`InputError` as :func:`look` does."""
    found = look(path)
    return found is not None and stat.S_ISDIR(found.st_mode)


def is_there(path: Path | str) -> bool:
    """Whether ``path`` names something other than a folder (links followed): a regular file, or a FIFO, device or
    socket that :func:`open_regular` then refuses by name (so a FIFO called ``card.toml`` is reported as a FIFO, not
    as a missing card). Raises :class:`InputError` as :func:`look` does."""
    found = look(path)
    return found is not None and not stat.S_ISDIR(found.st_mode)


def _require_regular(path: Path | str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise Unreadable(f"{shown(path)}: is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise Unreadable(f"{shown(path)}: is {kind(mode)}, not a regular file: passprice reads regular files only")


def open_regular(path: Path | str, buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading in binary (``buffering`` as :func:`open`'s), only when it is a regular file: the
    one check every reader of a named file makes before reading, so a FIFO (which blocks until a writer comes), a
    device (``/dev/zero`` has no end), a socket or a folder is refused before a byte is read.

    The check cannot block: the path is ``stat``-ed first (refused without being opened when it is not a regular
    file), then opened with ``O_NONBLOCK`` (which never waits, even on a FIFO) and the open descriptor ``fstat``-ed
    (so a file swapped for a FIFO between the two is refused too); only then is the descriptor made blocking again.

    Raises :class:`InputError` naming ``path``: no such file, a folder, not a regular file (saying what it is), or
    it cannot be opened (permission, a name too long, a loop of symbolic links)."""
    found = look(path)
    if found is None:
        raise NotFound(f"{shown(path)}: no such file")
    _require_regular(path, found.st_mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise folder_refusal(e, path) or Unreadable(f"{shown(path)}: cannot read: {why(e, path)}") from None
    try:
        _require_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    # Outside the ``try``: the file object, once made, owns ``fd`` and closes it as it goes. A Ctrl-C raised as
    # ``fdopen`` returned it closed ``fd`` there, then ``os.close`` here failed (EBADF), and that OSError took the
    # interrupt's place: "passprice: error: standard output: Bad file descriptor", exit 2, in 1 of 50 Ctrl-Cs during
    # `check` (session 34). A Ctrl-C before the object is made leaves ``fd`` to the process's end, which it is.
    return os.fdopen(fd, "rb", buffering=buffering)


def unwritten_now(handle: BinaryIO) -> bool:
    """:func:`passprice.memo.unwritten` of the open file ``handle``."""
    from passprice.memo import unwritten

    return unwritten(handle.fileno())


def read_regular(path: Path | str, limit: int, refuse: Callable[[int], None] | None = None) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), refused past ``limit`` bytes without reading
    further: one whose size says so before a byte is read (the line naming its size; the size is the open
    descriptor's ``fstat``, so a file swapped between a ``stat`` of its path and the read cannot slip past), and one
    that holds more than it said after ``limit + 1`` bytes. ``refuse``, when given, is called first with the size
    found past ``limit`` and raises the caller's own line (a kind's cap, :func:`passprice.schema.require_size`).
    Raises :class:`InputError` naming ``path``."""
    since = filestamps.clock()
    with open_regular(path) as handle:
        try:
            before = os.fstat(handle.fileno())
            size = before.st_size
            # Asked before the read (a writer holding a mapping writes unseen by the status: memo.unwritten), for a
            # file whose status may then name its digest
            unwritten = filestamps.MIN_BYTES <= size <= limit and filestamps.may_learn(before) and unwritten_now(handle)
            if size > limit:  # said so unread: a 1 GB sparse file in locks/ read 64 MiB of zeros first (attack 55)
                if refuse is not None:
                    refuse(size)
                raise InputError(f"{shown(path)}: larger than {limit:,} bytes: not a passprice file ({size:,} bytes)")
            # A buffer of the file's size, not of the limit (tens of MB allocated and given back on every read cost
            # more than reading a small file); read on to the limit when the file holds more than it said (it grew,
            # or it reports no size, as /proc's files do).
            data = handle.read(min(size, limit) + 1)
            if size < len(data) <= limit:
                data += handle.read(limit + 1 - len(data))
            elif len(data) == size >= filestamps.MIN_BYTES:
                # whole, as its status said: that status may name its digest (git's racy-clean rule)
                filestamps.seen(before, os.fstat(handle.fileno()), since, data, handle.fileno(), os.fspath(path),
                                unwritten)
        except OSError as e:
            raise folder_refusal(e, path) or Unreadable(f"{shown(path)}: cannot read: {why(e, path)}") from None
    if len(data) > limit:
        if refuse is not None:
            refuse(len(data))
        raise InputError(f"{shown(path)}: larger than {limit:,} bytes: not a passprice file")
    return data


def _new_file_mode() -> int:
    """The permission bits a newly created file gets under the process's umask (``0o644`` under ``022``)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def target(path: Path) -> Path:
    """Where writing ``path`` lands: ``path`` itself, or, when it is a symbolic link, the file the link points to
    (followed to its end), so a write replaces the target and keeps the link. A link whose end has no name in the
    file system (``/dev/stdout`` is ``/proc/self/fd/1``, which names a pipe as ``pipe:[123]``) is ``path`` itself,
    so what it opens is judged (a FIFO, a terminal) rather than a folder that cannot be written. Raises
    :class:`InputError` as :func:`look` does, naming ``path`` as given: a link into a loop (``a.toml`` → ``x.toml`` →
    ``y.toml`` → ``x.toml``) is ``a.toml: a loop of symbolic links``, as every reader says, where ``new-serving a``
    named ``x.toml``, the point at which :func:`os.path.realpath` gave up (issue 13's leftovers, session 34)."""
    try:
        if not os.path.islink(path):
            return path
    except ValueError:
        raise InputError(f"{str(path)!r}: not a file name (it holds a NUL character)") from None
    found = look(path)  # first: what cannot be looked up is named as the user gave it
    end = Path(os.path.realpath(path))
    if found is not None and look(end) is None:
        return path
    number = _descriptor(path)
    if number is not None:
        raise InputError(
            f"{shown(path)}: names open file descriptor {number} (a shell's redirection, now {shown(end)}), not a "
            "file: passprice writes a file whole and renames it into place, which the descriptor would not see, and "
            "a suffix would be the redirection's; give the file's own name (or - for standard output)"
        )
    return end


def _descriptor(path: Path) -> int | None:
    """The number of the open file descriptor ``path`` names through its links (``/dev/fd/3``, ``/dev/stderr``,
    ``/proc/self/fd/3``, a link of the user's to one of them): a link in a ``/proc/PID/fd`` folder on the way; else
    ``None``. ``sweep -o /dev/fd/3 --force 3> x.json`` followed the link to ``x.json``, chose JSON by its suffix and
    renamed a new file over it, under the shell's open descriptor; ``-o /dev/stderr --force 2> x.json`` lost the
    command's own warnings with the file they were written to (attack round 31). Raises nothing."""
    here = str(path)
    for _ in range(40):  # the kernel's own bound on links followed
        try:
            folder = os.path.realpath(os.path.dirname(here) or ".")
            name = os.path.basename(here)
            parts = folder.split("/")
            if len(parts) == 4 and parts[:2] == ["", "proc"] and parts[3] == "fd" and name.isascii() and (
                name.isdigit()
            ):
                return int(name)
            if not os.path.islink(here):
                return None
            here = os.path.join(os.path.dirname(here), os.readlink(here))
        except (OSError, ValueError):
            return None
    return None


def name_suffix(path: Path) -> str:
    """The suffix of ``path``'s name, lower-cased (``.json``; ``""`` for none): :attr:`pathlib.PurePath.suffix`,
    except that a name that is only a suffix (``.json``, ``.gz``) is that suffix, as an editor, ``gunzip`` and a
    reader of the name take it, where pathlib calls it a hidden file without one: ``sweep -o .json`` wrote CSV into
    it, ``synth -o .gz`` an uncompressed header, and ``audit --plot .png`` said "the file must end in .png" (attack
    round 28). A name ending in a dot (``x.json.``) has none. Raises nothing."""
    name = path.name
    if name.startswith(".") and name.count(".") == 1 and len(name) > 1:
        return name.lower()
    return path.suffix.lower()


def written_suffix(path: Path, option: str) -> str:
    """The suffix, lower-cased (``.json``, ``.png``; ``""`` for none), of the file writing ``path`` replaces
    (:func:`target`): the one a format is chosen by, so the text written always matches the name of the file that
    holds it. A link whose own name ends otherwise than its target (``gl.json``, a link to ``g.csv``) is refused:
    ``sweep -o gl.json --force`` wrote JSON into ``g.csv``, the format following the name typed while the file
    replaced was the target (attack round 26). A link without a suffix of its own (``out`` → ``g.json``) follows its
    target's. Raises :class:`InputError` naming ``option``, the link and its target."""
    end = target(path)
    own, theirs = name_suffix(path), name_suffix(end)
    if end != path and own and own != theirs:
        raise InputError(
            f"{shown(path)} (a link to {shown(end)}): {option} would write the {own} format the name asks for into "
            f"a file whose name ends in {theirs or 'no suffix'}: give the file's own name, or another file"
        )
    return theirs


#: The formats passprice writes, by the suffix (lower-cased) that names each: a file whose name ends in one of them
#: holds that format or is not written (:func:`suffix_format`). Other suffixes (``.txt``, ``.out``, none) name none.
SUFFIX_FORMATS = {
    ".csv": "CSV", ".json": "JSON", ".toml": "TOML", ".png": "PNG", ".svg": "SVG", ".gguf": "GGUF",
    ".xz": "xz", ".gz": "gzip",
}


#: Data formats passprice never writes, by the suffix that names each: an output file named so is refused too, for
#: what it would hold is not what its name says (walkthrough 106: ``sweep -o a.parquet`` wrote CSV, exit 0; the README
#: promises every output file's name says what it holds).
OTHER_FORMATS = {
    ".parquet": "Parquet", ".feather": "Feather", ".arrow": "Arrow", ".orc": "ORC", ".avro": "Avro",
    ".xlsx": "Excel", ".xls": "Excel", ".ods": "an OpenDocument spreadsheet", ".tsv": "tab-separated values",
    ".jsonl": "JSON Lines", ".ndjson": "JSON Lines", ".yaml": "YAML", ".yml": "YAML", ".xml": "XML",
    ".npy": "NumPy", ".npz": "NumPy", ".pkl": "a Python pickle", ".pickle": "a Python pickle", ".h5": "HDF5",
    ".hdf5": "HDF5", ".sqlite": "SQLite", ".db": "a database", ".zip": "zip", ".bz2": "bzip2", ".zst": "zstd",
    ".pdf": "PDF", ".jpg": "JPEG", ".jpeg": "JPEG",
}


def suffix_format(path: Path, option: str, writes: Iterable[str], what: str, names: str) -> str | None:
    """The format (a suffix of :data:`SUFFIX_FORMATS`, ``.json``) the name of ``option``'s file ``path`` asks for
    (:func:`written_suffix`: a link's, its target's) when the command can write it (``writes``), or ``None`` when the
    suffix names none of the formats passprice writes (the command's own default then). ``what`` is what the command
    writes, in words, ``names`` the suffixes it takes.

    Raises :class:`InputError` naming the file, what would be written and the suffix when the suffix names a format
    passprice does not write (:data:`OTHER_FORMATS`: ``sweep -o a.parquet`` wrote CSV), or one it writes but this
    command does not: the format followed the file's suffix for ``sweep -o`` alone, so
    ``simulate -o run.json`` wrote its text table into a ``.json`` file, ``lock -o l.json`` TOML, ``synth -o
    h.gguf.xz`` an uncompressed header and ``sweep -o rows.csv.gz`` plain CSV, each read back as the format its name
    says and failing there (attack round 27)."""
    suffix = written_suffix(path, option)
    if suffix in OTHER_FORMATS:
        raise InputError(
            f"{shown(path)}: {option} would write {what} into a file whose name ends in {suffix} (a name that says "
            f"{OTHER_FORMATS[suffix]}, which passprice does not write): name it {names}"
        )
    if suffix not in SUFFIX_FORMATS or suffix in writes:
        return suffix if suffix in SUFFIX_FORMATS else None
    return _wrong_suffix(path, option, suffix, what, names)


def _wrong_suffix(path: Path, option: str, suffix: str, what: str, names: str) -> str:
    raise InputError(
        f"{shown(path)}: {option} would write {what} into a file whose name ends in {suffix} (a name that says "
        f"{SUFFIX_FORMATS[suffix]}): name it {names}"
    )


def _other_names(path: Path, count: int) -> InputError:
    """The refusal of ``path``, a file of ``count`` names (hard links), which a rename would split."""
    return InputError(
        f"{shown(path)}: has {count:,} names (hard links); passprice replaces a file by renaming a new one into "
        "place, which would leave the other names holding the old text: remove the other names, or give this one a "
        "copy of its own first"
    )


def _still_replaceable(path: Path, end: Path) -> None:
    """Look at ``end`` (where writing ``path`` lands) again just before the rename replaces it: a file given other
    names (``ln``) or turned into a FIFO, a device or a folder while the text was written (a sweep writes its rows
    as they are priced, seconds after :func:`check_writable` looked) is refused as :func:`check_writable` refuses it
    (attack round 21: the rename split the hard links, or replaced the FIFO). Nothing (no file there) is fine.

    Raises :class:`InputError` naming ``path``."""
    try:
        found = os.lstat(end)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        raise InputError(f"{shown(path)}: is a folder; give a file to write")
    if not stat.S_ISREG(found.st_mode):
        what = kind(found.st_mode) if not stat.S_ISLNK(found.st_mode) else "a symbolic link made while it was written"
        raise InputError(f"{shown(path)}: is {what}, not a regular file: passprice replaces regular files only")
    if found.st_nlink > 1:
        raise _other_names(path, found.st_nlink)


def require_windows_name(path: Path, name: str | None = None, end: Path | None = None) -> None:
    """Refuse to create or replace a file or folder named ``name`` (default: ``path``'s own name) that no checkout on
    Windows can hold: a device's name (``CON.csv``, ``aux``), a character Windows forbids (``a:b.csv``, ``a|b``), a
    trailing dot or space (``x.csv.``), the rules of :func:`passprice.registry.windows_problem` and
    :func:`passprice.registry.windows_name_problem`. One rule for every file passprice writes, inside a registry or
    not (:func:`check_writable`, hence :func:`write_atomically`; ``init``'s folders): ``sweep -o CON.csv``, ``-o
    a:b.csv`` and ``init aux`` were written on Linux, files a colleague's Git for Windows then cannot check out
    (issue 13's leftovers, session 28); inside the registry such names were refused already.
    ``end``, when not ``path`` itself, is the file a link at ``path`` points to, whose name ``name`` is: the refusal
    names both (attack round 50: ``-o good.csv``, a link to ``bad:x.csv``, said "good.csv: ':' is a character no
    file name on Windows holds").

    Raises :class:`InputError` naming ``path`` (and ``end``) and the rule, before anything is written."""
    from passprice.registry import windows_name_problem, windows_problem

    name = path.name if name is None else name
    problem = windows_problem(name) or windows_name_problem(name)
    if problem is not None:
        link = f" (a link to {shown(end)})" if end is not None and end != path else ""
        raise InputError(f"{shown(path)}{link}: {problem}: no checkout on Windows can hold the name (Git for "
                         "Windows refuses it), and passprice writes no file a repository could not share: give another "
                         "name")


def _writable_by_me(path: Path) -> bool:
    """Whether this process may write the file ``path`` (``os.access`` with its effective user and group where the
    system lets access say so): a file of another user's, mode ``0644``, is not, though the rename
    :func:`write_atomically` makes would replace it in a folder this user may write. Raises nothing (a file that
    cannot be looked at is let by here: the write says why)."""
    try:
        return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)
    except (OSError, ValueError):
        return True


def check_writable(path: Path, force: bool = False, *, probe: bool = True) -> None:
    """Refuse to write ``path`` before any work is done (a sweep or a simulation can take seconds), for the reasons
    :func:`write_atomically` would: ``path`` (or the file a link at ``path`` points to) is a folder, a device, FIFO or
    socket (a rename would replace the device itself: ``-o /dev/null --force`` once did), exists without ``force``,
    or is read-only (no write permission bit: refused even for a user who could override it; or not writable by this
    process, another user's file of mode ``0644`` in a folder open to all: attack93), or has other names
    (hard links, which a rename would leave holding the old text); its folder does not
    exist (it is not created), is not a folder, or is not writable by this process (``os.access``: a read-only
    folder for a user, a read-only file system for anyone).

    And (after what is there, before its folder) the name of the file written is one a checkout on Windows can hold
    (:func:`require_windows_name`).

    Raises :class:`InputError` naming ``path``."""
    end = target(path)
    found = look(end)
    if found is not None:
        if stat.S_ISDIR(found.st_mode):
            raise InputError(f"{shown(path)}: is a folder; give a file to write")
        if not stat.S_ISREG(found.st_mode):
            what = kind(found.st_mode)
            raise InputError(f"{shown(path)}: is {what}, not a regular file: passprice replaces regular files only")
        if not force:
            raise InputError(f"{shown(path)}: already exists; pass --force to overwrite it")
        if not found.st_mode & 0o222:
            raise InputError(f"{shown(path)}: is read-only; passprice does not replace it (make it writable first)")
        if not _writable_by_me(end):
            # 0644 and another user's: a rename in a folder open to all replaced it, taking it over (attack93)
            raise InputError(f"{shown(path)}: is read-only for this user (owned by user {found.st_uid}, mode "
                             f"{found.st_mode & 0o7777:o}); passprice does not replace it")
        if found.st_nlink > 1:
            # A rename gives the path a new file: the file's other names (hard links) would keep the old text without
            # a word (round 20: fact set of a card linked elsewhere with ln split the two).
            raise _other_names(path, found.st_nlink)
    # After the kind of what is there: `-o /dev/stdout` into a pipe resolves to `pipe:[123]`, a FIFO first.
    require_windows_name(path, end.name, end)
    folder = end.parent if str(end.parent) else Path(".")
    where = look(folder)
    if where is None:
        above = folder.parent
        while (found := look(above)) is None and above != above.parent:
            above = above.parent
        if found is not None and not stat.S_ISDIR(found.st_mode):
            raise InputError(f"{shown(path)}: cannot write: {above} is not a folder")
        if end.is_absolute():
            raise InputError(
                f"{shown(path)}: cannot write: the folder {shown(folder)} does not exist (passprice does not create it)"
            )
        # A relative output path is read from the working folder, as pip-compile's -o is, never from --root:
        # `--root DIR lock -o locks/X` said "the folder locks does not exist" with no word of where it looked.
        raise InputError(
            f"{shown(path)}: cannot write: the folder {shown(folder.absolute())} does not exist (passprice does not "
            "create it): a relative output path is read from the working folder, not from --root"
        )
    if not stat.S_ISDIR(where.st_mode):
        raise InputError(f"{shown(path)}: cannot write: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):  # a read-only folder (or file system): no file can be put there
        raise InputError(f"{shown(path)}: cannot write: the folder {shown(folder)} is not writable")
    if probe:
        try:
            fd, made = _temporary(folder, f".{end.name}.")
        except OSError as e:
            raise InputError(f"{shown(path)}: cannot write: {why(e, path)}") from None
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(made)


def require_apart(first: tuple[str, Path | None], second: tuple[str, Path | None]) -> None:
    """Refuse two outputs of one command (``(option, path)`` each; a ``None`` path is not given) that land on the same
    file: the same name, names that resolve alike (a link, ``./``, ``..``), or two names of one existing file (hard
    links). ``sweep --plot F.svg -o F.svg --force`` wrote the plot, said "plot -> F.svg", then replaced it with the
    CSV, exit 0: the plot was lost without a word; without ``--force`` the plot was written and the CSV refused,
    exit 2 with a file left behind (attack round 24; ``synth --import X -o registry/checkpoints/X.toml``, one file
    too, is refused by :func:`passprice.registry.require_not_record`). Raises :class:`InputError` naming both
    options and the file, before anything is written."""
    (one, a), (other, b) = first, second
    if a is None or b is None:
        return
    if _same_file(a, b):
        raise InputError(
            f"{shown(b)}: {one} {shown(a)} and {other} {shown(b)} name the same file, which would hold only the last "
            "written: give two files"
        )


def _same_file(a: Path, b: Path) -> bool:
    """Whether writing ``a`` and writing ``b`` land on one file (:func:`require_apart`)."""
    ends = (target(a), target(b))
    if os.path.realpath(ends[0]) == os.path.realpath(ends[1]):
        return True
    found = (look(ends[0]), look(ends[1]))
    return found[0] is not None and found[1] is not None and os.path.samestat(found[0], found[1])


def require_not_input(given: tuple[str, Path | None], output: tuple[str, Path | None]) -> None:
    """Refuse an output (``(option, path)``) that lands on a file the command reads (``given``: its option or
    argument, and path; a ``None`` path is not given), as :func:`require_apart` judges one file. ``simulate --trace
    t.jsonl -o t.jsonl --force`` replaced the trace with the simulation's text, ``sweep --file grid.toml -o grid.toml
    --force`` the grid with its CSV, and ``synth c.json -o c.json --force`` the model's configuration with a binary
    header, each exit 0: the input lost (attack round 25). Raises :class:`InputError` naming both, before anything
    is written."""
    (reads, a), (option, b) = given, output
    if a is None or b is None or str(b) == "-":
        return
    if _same_file(a, b):
        raise InputError(
            f"{shown(b)}: {option} {shown(b)} is {reads} {shown(a)}, a file the command reads; writing it would "
            "replace that input: give another file"
        )
    if _fellow_shard(a, b):
        raise InputError(
            f"{shown(b)}: {option} {shown(b)} is a shard of the split checkpoint {reads} {shown(a)} starts, a file "
            "the command reads; writing it would replace that input: give another file"
        )


def _fellow_shard(a: Path, b: Path) -> bool:
    """Whether ``b`` is another shard of the split checkpoint ``a`` is one shard of (``NAME-0000N-of-0000M.gguf``,
    ``.xz`` or ``.gz``, in one folder, as :mod:`passprice.gguf_header` finds the shards): ``sweep --checkpoint
    m-00001-of-00002.gguf -o m-00002-of-00002.gguf --force`` replaced shard 2 with the CSV (round 26 left it: only the
    named shard was compared). Names only; raises nothing."""
    from passprice.gguf_header import shard_name

    first, other = shard_name().match(a.name), shard_name().match(b.name)
    if first is None or other is None or (first["stem"], first["count"]) != (other["stem"], other["count"]):
        return False
    return os.path.realpath(target(a).parent) == os.path.realpath(target(b).parent)


def fold(name: str) -> str:
    """``name`` as names are compared for looking alike: NFC, case-folded (``É.toml``, ``é.toml`` and ``e`` + U+0301
    ``.toml`` fold alike)."""
    import unicodedata

    return unicodedata.normalize("NFC", name).casefold()


def reads_as(name: str) -> str:
    """``name`` as a reader of a listing reads it: NFKC (a full-width ``ｈ100`` is ``h100``, a superscript ``COM¹``
    ``COM1``), characters that do not print or are typeset spaces read as what they show
    (:data:`passprice.addedfacts._TYPESET`), Cyrillic and Greek letters as the Latin ones they look like
    (:data:`passprice.addedfacts._LOOK_ALIKE`: ``h200_sхm_141gb`` with a Cyrillic ``х``), case-folded (:func:`fold`).
    Card titles are compared so (:func:`passprice.check.title_key`): a card titled ``NVIDIA Н200 SXM 141GB`` (a
    Cyrillic ``Н``) or ``ＮＶＩＤＩＡ H200 SXM 141GB`` beside the H200's passed ``check`` (attack round 46). (Record
    *names* that only read alike are spelled wherever shown and asked about in a review, not refused: slip 32, 38.)"""
    import unicodedata

    from passprice.addedfacts import _LOOK_ALIKE, _TYPESET

    return fold(unicodedata.normalize("NFKC", name.translate(_TYPESET)).translate(_LOOK_ALIKE))


def require_no_lookalike(path: Path) -> None:
    """Refuse to write ``path`` when its folder already holds another name that differs from ``path``'s only by
    case or Unicode normalization (:func:`fold`): ``import --name GEMMA3-270M-Q4_K_M``, ``new-serving
    R1-QWEN7B-H200`` and ``lock --name R1-QWEN7B-H200`` wrote a second entry beside ``gemma3-270m-q4_k_m.toml`` (or
    ``r1-qwen7b-h200.toml``), exit 0, which ``check`` then failed ("names that differ only by case or Unicode
    normalization"); on macOS and Windows, where the two are one file, ``--force`` replaced the other entry (attack
    round 24). ``path`` itself (the same name, replaced with ``--force``) is not a lookalike. A folder that is not
    there, or not a folder, passes (the writer reports it); one that is there but cannot be listed (mode 311, which
    still lets the writer write) is refused by its one line (:func:`listing_refusal`): ``lock --name Zz42`` and
    ``new-serving Zz42S`` wrote beside ``zz42`` and ``zz42s``, exit 0, in a ``locks/`` or ``registry/servings/`` they
    could not list (left41).

    Raises :class:`InputError` naming ``path`` and the name already there, or naming the folder that cannot be
    listed."""
    folder = path.parent if str(path.parent) else Path(".")
    mine = fold(path.name)
    try:
        with os.scandir(folder) as entries:
            others = sorted(e.name for e in entries if e.name != path.name and fold(e.name) == mine)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return
    except OSError as e:
        raise listing_refusal(e, folder) from None
    if others:
        raise InputError(
            f"{shown(path)}: {shown(folder)} already holds {', '.join(ascii(n) for n in others)}, a name that differs "
            "only by case or Unicode normalization (they show alike, and are one file on macOS and Windows): use "
            "that name, or another"
        )


def make_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) when nothing is there: for the registry's own folders (``locks/``,
    ``registry/checkpoints/``), never for a path a user gives. (A file in the way is left for the writer to report.)
    Raises :class:`InputError` when it cannot."""
    if look(folder) is not None:
        return
    try:
        make_folders(folder)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{shown(folder)}: cannot create the folder: a file is in the way") from None
    except OSError as e:
        raise InputError(f"{shown(folder)}: cannot create the folder: {why(e, folder)}") from None


class Appended(NamedTuple):
    """A chunk of :func:`write_atomically`'s text that is the content of the open file ``fd`` from byte ``start``
    to byte ``stop`` (``None``: its end; a part of a sweep another process wrote, :mod:`passprice.sweepjobs`),
    copied into the output in the kernel (:func:`append_file`), never read into memory."""

    fd: int
    start: int = 0
    stop: int | None = None


class Placed(NamedTuple):
    """A chunk of :func:`write_atomically`'s text that a function writes itself: ``fill(fd, offset)`` writes its
    bytes into the open file ``fd`` from byte ``offset`` on (``os.pwrite``; a sweep's processes writing their parts
    in turn, :func:`passprice.sweepjobs.write_shared`) and returns the offset just past them. Raises what ``fill``
    raises."""

    fill: Callable[[int, int], int]


def append_file(source: int, out: int, start: int = 0, stop: int | None = None) -> int:
    """Copy the bytes of the open file ``source`` from byte ``start`` to byte ``stop`` (``None``: its end) onto the
    open file ``out`` at ``out``'s offset (which moves past them), without reading them into Python:
    ``os.copy_file_range`` (Linux; one copy in the kernel, a shared extent where the file system can), else
    ``os.sendfile``, else reads and writes of 1 MiB. Returns the bytes copied. Raises :class:`OSError` when ``out``
    cannot be written.

    ``out`` may be standard output: a pipe (``os.sendfile``; ``copy_file_range`` copies between regular files only)
    or a file opened to append (``>>``: neither call writes to one, EBADF and EINVAL; reads and writes do)."""
    offset = start
    for copy in (_copy_file_range, _sendfile, _read_write):
        try:
            while (stop is None or offset < stop) and (
                done := copy(source, out, offset, (1 << 30) if stop is None else min(stop - offset, 1 << 30))
            ) > 0:
                offset += done
            return offset - start
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF):
                raise
    raise AssertionError("unreachable: reads and writes copy any file")  # pragma: no cover


def append_to_stream(source: int, stream: Any, start: int = 0, stop: int | None = None) -> int:
    """Copy the bytes of the open file ``source`` from byte ``start`` to byte ``stop`` (``None``: its end) onto
    ``stream`` (standard output, flushed first): in the kernel onto its file descriptor (:func:`append_file`), or,
    for a stream without one (a test's captured output), read and written a MiB at a time. Returns the bytes copied.
    Raises :class:`OSError` when the stream cannot be written (a reader gone from the pipe:
    :class:`BrokenPipeError`)."""
    stream.flush()
    try:
        out = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        out = None
    if out is not None:
        return append_file(source, out, start, stop)
    binary = getattr(stream, "buffer", stream)
    offset = start
    while data := os.pread(source, (1 << 20) if stop is None else min(1 << 20, stop - offset), offset):
        binary.write(data)
        offset += len(data)
    binary.flush()
    return offset - start


def _copy_file_range(source: int, out: int, offset: int, count: int) -> int:
    if not hasattr(os, "copy_file_range"):
        raise OSError(errno.ENOSYS, "no copy_file_range")
    return os.copy_file_range(source, out, count, offset_src=offset)


def _sendfile(source: int, out: int, offset: int, count: int) -> int:
    if not hasattr(os, "sendfile"):  # pragma: no cover - every POSIX system passprice runs on has it
        raise OSError(errno.ENOSYS, "no sendfile")
    return os.sendfile(out, source, offset, count)


def _read_write(source: int, out: int, offset: int, count: int) -> int:
    data = os.pread(source, min(count, 1 << 20), offset)
    view = memoryview(data)
    while view:
        view = view[os.write(out, view) :]
    return len(data)


#: ``SYNC_FILE_RANGE_WRITE`` (Linux's ``sync_file_range``): start writing the range's dirty pages back, not waiting.
_SYNC_FILE_RANGE_WRITE = 2

#: Bytes of a text written in chunks from which :func:`write_atomically` starts each chunk's way to disk as it is
#: written (:func:`start_writeback`): below them the flush at the end waits for little.
WRITEBACK_BYTES = 1 << 24

_writeback: list[Callable[..., int] | None] = []


def _sync_file_range() -> Callable[..., int] | None:
    """The C library's ``sync_file_range`` (Linux), looked up once a process (``ctypes``: before a sweep forks its
    workers, as :func:`passprice.sweepjobs._prctl` is); ``None`` elsewhere."""
    if not _writeback:
        found = None
        if hasattr(os, "sched_getaffinity"):  # Linux
            try:
                import ctypes

                found = ctypes.CDLL(None, use_errno=True).sync_file_range
                found.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
            except (ImportError, OSError, AttributeError):
                found = None
        _writeback.append(found)
    return _writeback[0]


def start_writeback(fd: int, offset: int, size: int) -> None:
    """Start writing ``size`` bytes of the file ``fd`` from ``offset`` to disk now, without waiting (Linux's
    ``sync_file_range(SYNC_FILE_RANGE_WRITE)``; nothing elsewhere, or where it fails: a hint). A large text written
    in chunks (a sweep's 166 MB of CSV) is then mostly on disk when :func:`write_atomically` flushes it before its
    rename, which otherwise waited for all of it at the end (0.1 s of wall time for those 166 MB on this project's
    machine, 0.007 s after the chunks were started as they were written)."""
    begin = _sync_file_range()
    if begin is not None and size > 0:
        begin(fd, offset, size, _SYNC_FILE_RANGE_WRITE)


#: The files :func:`write_atomically` has put in place while a command runs (:func:`record_written`), in order, as
#: they were named: the command's last resort for a failure after them (its standard output on a full disk, ``>
#: /dev/full``, met at exit) names them, so a user does not redo an edit that was written (:func:`passprice.cli.main`;
#: left56, session 42). Left59: every write of the process was kept, so a program calling the library (a sweep of
#: edits, a server) grew it by one path a file written, for a line nothing but ``main`` prints.
WRITTEN: list[Path] = []
#: Whether :func:`write_atomically` appends to :data:`WRITTEN` (one flag in a list: set by :func:`record_written`).
_RECORDING = [False]


def record_written(on: bool) -> None:
    """Empty :data:`WRITTEN` and start (``on``) or stop recording in it the files :func:`write_atomically` puts in
    place: :func:`passprice.cli.main` starts it when a command starts and stops it when the command is done, its
    error line written; a library caller records nothing, so calling the library any number of times in one process
    keeps :data:`WRITTEN` empty (left59: it held every file written since the process started). Raises nothing."""
    WRITTEN.clear()
    _RECORDING[0] = on


def write_atomically(
    path: Path, text: str | bytes | Iterable[str | bytes | Appended | Placed], force: bool = False
) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder (flushed to disk) and a rename, so a
    reader never sees a half-written file. A symbolic link at ``path`` is written through: its target is replaced and
    the link stays. The file gets the permission bits of the file it replaces, or those of a new file under the
    umask (not the temporary file's private ``0o600``). Without ``force`` an existing ``path`` is never replaced,
    even one created while the text was being written (the temporary file is hard-linked into place, which fails
    when ``path`` exists). No temporary file is left behind. ``path`` written is appended to :data:`WRITTEN`
    while a command records it (:func:`record_written`).

    ``text`` may also be an iterable of strings (a sweep's rows, a block at a time; or bytes, written as they are,
    :class:`Appended` files, copied in, or :class:`Placed` texts, written in place by their function): they are
    written as they come, so the whole text is never held; an error
    raised while iterating (or a chunk that is not Unicode) leaves no file and no temporary file behind.

    Raises :class:`InputError` before anything is written for every reason :func:`check_writable` gives (a folder,
    a special file, a read-only file, an existing file without ``force``, a missing folder), when ``path`` cannot be
    written, or when ``text`` is not Unicode (a name given on the command line in bytes that are not UTF-8)."""
    exists = f"{shown(path)}: already exists; pass --force to overwrite it"
    check_writable(path, force, probe=False)  # its own temporary file is the probe
    chunks: Iterable[str | bytes | Appended | Placed] = ()
    try:
        if isinstance(text, str | bytes):
            data = text if isinstance(text, bytes) else text.encode("utf-8")
        else:
            data, chunks = b"", text
    except UnicodeEncodeError as e:
        assert isinstance(text, str)
        raise _not_unicode(path, e, text) from None
    end = target(path)
    folder = end.parent if str(end.parent) else Path(".")
    try:
        try:
            mode = end.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = _new_file_mode()
        fd, tmp = _temporary(folder, f".{end.name}.")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                written = 0  # bytes of the chunks written, past which the next one's way to disk is started
                for chunk in chunks:
                    if isinstance(chunk, str | bytes) and out.tell() - written >= WRITEBACK_BYTES:
                        out.flush()
                        start_writeback(out.fileno(), written, out.tell() - written)
                        written = out.tell()
                    if isinstance(chunk, bytes):
                        out.write(chunk)
                    elif isinstance(chunk, Appended):
                        out.flush()
                        append_file(chunk.fd, out.fileno(), chunk.start, chunk.stop)
                    elif isinstance(chunk, Placed):
                        out.flush()
                        try:
                            out.seek(chunk.fill(out.fileno(), out.tell()))
                        except UnicodeEncodeError as e:
                            raise _not_unicode(path, e, e.object) from None
                    else:
                        try:
                            out.write(chunk.encode("utf-8"))
                        except UnicodeEncodeError as e:
                            raise _not_unicode(path, e, chunk) from None
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, mode)
            if force:
                _still_replaceable(path, end)
                os.replace(tmp, end)
            else:
                try:
                    os.link(tmp, end)
                except FileExistsError:
                    raise InputError(exists) from None
                except OSError:  # a file system without hard links
                    os.replace(tmp, end)
            if _RECORDING[0]:
                WRITTEN.append(Path(path))
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as e:
        raise InputError(f"{shown(path)}: cannot write: {why(e, path)}") from None


#: The bytes a file name holds at most on the file systems passprice writes to (``NAME_MAX`` of Linux and macOS).
_NAME_MAX = 255

#: The bytes :func:`_temporary` adds to its prefix: 12 hex digits and ``.tmp``.
_TEMPORARY_TAIL = 16


def _temporary(folder: Path, prefix: str) -> tuple[int, str]:
    """A new file ``PREFIX<12 random hex digits>.tmp`` in ``folder``, created for reading and writing by this process
    alone (mode ``0o600``, exclusively, not through a symbolic link, not inherited by a child): its descriptor and
    absolute path, as :func:`tempfile.mkstemp` makes it, without importing :mod:`tempfile` (which imports shutil,
    random, bz2 and lzma: about 6.5 ms of CPU a process that writes a file, such as a sweep's ``-o FILE``). Raises
    :class:`OSError` as :func:`os.open` does (a name taken 100 times over: :class:`FileExistsError`)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    while len(os.fsencode(prefix)) + _TEMPORARY_TAIL > _NAME_MAX and len(prefix) > 2:
        # A name the file system takes (250 bytes of 255) left no room for the temporary file's own: "cannot write:
        # the name is longer than the file system allows" (round 19). The temporary file's name is cut instead.
        prefix = prefix[:-2] + prefix[-1]
    # Made absolute without folding `..` by text (os.path.abspath does): `-o ../link/../locks/x.lock.toml`, whose
    # `link/..` the kernel reads as the folder above the link's target, was "cannot write: No such file or directory"
    # (leftovers 29b, session 30). The kernel resolves the name as given.
    here = folder if os.path.isabs(folder) else os.path.join(os.getcwd(), folder)
    for _ in range(100):
        name = os.path.join(here, f"{prefix}{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(folder))


def _not_unicode(path: Path, e: UnicodeEncodeError, text: str) -> InputError:
    return InputError(
        f"{path}: cannot write: character {e.start:,} of the text, {text[e.start:e.end]!r}, is not Unicode (a name "
        "given in bytes that are not UTF-8?)"
    )
