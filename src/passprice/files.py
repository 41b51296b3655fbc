"""A file passprice writes is replaced whole or not at all: a reader sees the old file or the new one, never half of
one, and an existing file is replaced only when asked (``--force``).

Every writer — locks, checkpoint entries, fact edits, sweep and simulation outputs, roofline pictures — goes through
:func:`write_atomically`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from passprice.errors import InputError


def _new_file_mode() -> int:
    """The permission bits a newly created file gets under the process's umask (``0o644`` under ``022``)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, text: str | bytes | Iterable[str], force: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder (flushed to disk) and a rename, so a
    reader never sees a half-written file. The file gets the permission bits of the file it replaces, or those of a
    new file under the umask (not the temporary file's private ``0o600``). Without ``force`` an existing ``path`` is
    never replaced, even one created while the text was being written (the temporary file is hard-linked into
    place, which fails when ``path`` exists). No temporary file is left behind.

    ``text`` may also be an iterable of strings (a sweep's rows, a block at a time): they are written as they come,
    so the whole text is never held; an error raised while iterating (or a chunk that is not Unicode) leaves no file
    and no temporary file behind.

    Raises :class:`InputError` when ``path`` exists and not ``force``, is not a regular file (a device such as
    ``/dev/null``, which a rename would replace), cannot be written, or ``text`` is not
    Unicode (a name given on the command line in bytes that are not UTF-8), before anything is written."""
    import tempfile  # here, not at the top: most runs write nothing, and tempfile imports shutil, random, bz2 …

    exists = f"{path}: already exists; pass --force to overwrite it"
    if path.exists() and not force:
        raise InputError(exists)
    if path.exists() and not path.is_file() and not path.is_dir():
        # A rename would replace the device or pipe itself (``-o /dev/null --force`` once replaced /dev/null).
        raise InputError(f"{path}: is not a regular file (a device, pipe or socket); passprice writes only files")
    chunks: Iterable[str] = ()
    try:
        if isinstance(text, str | bytes):
            data = text if isinstance(text, bytes) else text.encode("utf-8")
        else:
            data, chunks = b"", text
    except UnicodeEncodeError as e:
        assert isinstance(text, str)
        raise _not_unicode(path, e, text) from None
    folder = path.parent if str(path.parent) else Path(".")
    try:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise InputError(f"{path}: cannot write: {folder} is not a folder") from None
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                for chunk in chunks:
                    try:
                        out.write(chunk.encode("utf-8"))
                    except UnicodeEncodeError as e:
                        raise _not_unicode(path, e, chunk) from None
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, mode)
            if force:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    raise InputError(exists) from None
                except OSError:  # a file system without hard links
                    os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror or e}") from None


def _not_unicode(path: Path, e: UnicodeEncodeError, text: str) -> InputError:
    return InputError(
        f"{path}: cannot write: character {e.start:,} of the text, {text[e.start:e.end]!r}, is not Unicode (a name "
        "given in bytes that are not UTF-8?)"
    )
