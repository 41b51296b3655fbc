"""Click's parameters, built when their command is first used: while the commands are defined, ``click.option``,
``click.argument`` and ``click.Path`` make deferred parameters (a run uses one command's ~30 options of the ~390), and
the parameter types passprice's options share (bounded numbers, files, folders, outputs) are deferred ones too.
:func:`click_as_it_was` gives click its own classes back once the last command is defined."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, overload

import click

from passprice.errors import InputError
from passprice.files import shown as shown_path


class _Deferred:
    """A click parameter built when it is first used, not when its command is defined: a run uses one command's
    options, and building the ~280 options of every command took about a third of importing the command line. Until
    then it holds its arguments; the first attribute it is asked for builds it (click's own ``__init__``, so an
    option that does not declare well fails at its command's first use, as every command's ``--help`` does in
    the tests)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._deferred = (args, kwargs)

    def __getattr__(self, name: str) -> Any:
        deferred = self.__dict__.pop("_deferred", None)
        if deferred is None:
            raise AttributeError(name)
        super().__init__(*deferred[0], **deferred[1])
        return getattr(self, name)


class _DeferredOption(_Deferred, click.Option):
    pass


class _DeferredArgument(_Deferred, click.Argument):
    pass


class _DeferredPath(_Deferred, click.Path):
    """A ``click.Path`` type built on first use: click's constructor looks up the translation of its name
    (``gettext``, which imports ``locale`` and looks for catalogues on disk), 15 times at import."""


# The commands are defined with deferred parameters (this module is imported before any): click.option and
# click.argument build the class click.decorators names, and click.Path is the deferred type, all restored to click's
# own once the last command is defined (click_as_it_was, called by the package once its command modules are imported).
_BUILT_AT_ONCE = (getattr(click.decorators, "Option"), getattr(click.decorators, "Argument"), click.Path)  # noqa: B009
setattr(click.decorators, "Option", _DeferredOption)  # noqa: B010
setattr(click.decorators, "Argument", _DeferredArgument)  # noqa: B010
setattr(click, "Path", _DeferredPath)  # noqa: B010


class _Bounded(click.ParamType):  # type: ignore[type-arg,unused-ignore]  # generic from click 8.2
    """A numeric option bounded as :mod:`passprice.bounds` states for it: the bound a schema gives the same quantity
    in a file (``--limit`` as a serving's ``contexts.limit``), read when the option is converted. A value out of
    range, ``nan``, ``inf`` or 310 digits is one error line (exit 2)."""

    def __init__(self, option: str, integer: bool) -> None:
        self.option = option
        self.name = "integer" if integer else "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from passprice.bounds import option_bound

        try:
            return option_bound(self.option).parse(str(value))
        except InputError as e:
            self.fail(str(e), param, ctx)


def _int(option: str) -> _Bounded:
    return _Bounded(option, integer=True)


def _float(option: str) -> _Bounded:
    return _Bounded(option, integer=False)


class _Step(_Bounded):
    """``audit --step PERCENT``, bounded as :func:`passprice.bounds.option_bound` bounds ``--step`` and read by
    :func:`passprice.audit.parse_step` (its refusal adds what is accepted: a size, in percent)."""

    def __init__(self) -> None:
        super().__init__("--step", integer=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from passprice.audit import parse_step

        try:
            return parse_step(str(value))
        except InputError as e:
            self.fail(str(e), param, ctx)


@overload
def _require_unicode(text: str, what: str) -> str: ...
@overload
def _require_unicode(text: None, what: str) -> None: ...
@overload
def _require_unicode(text: str | None, what: str) -> str | None: ...
def _require_unicode(text: str | None, what: str) -> str | None:
    """``text`` (from the command line) as the UTF-8 text the user typed; raise :class:`InputError` when its bytes
    are not UTF-8. The check reads the bytes given (:func:`os.fsencode` undoes the locale's decoding): under an
    ASCII locale (``LC_ALL=POSIX``, ``PYTHONUTF8=0``) Python passes ``é`` on as two lone surrogates, which are UTF-8
    bytes all the same. Keep the original ``text`` for a path (the file system takes the surrogates back to the
    bytes); write the returned text into a file."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode("utf-8")
    except (UnicodeError, ValueError):
        raise InputError(f"{what}: {text!r} is not UTF-8 text") from None


class _FilePath(click.Path):
    """A file name option or argument, as a :class:`~pathlib.Path`: ``click.Path`` that also refuses a name ending in
    a slash (``-o x.csv/`` names a folder; the path would drop the slash and write ``x.csv``) and an empty name
    (``-o ''`` became ``Path('.')``, refused as "``.``: is a folder", a name nobody gave). What the name names is
    the reader's to judge (:func:`passprice.files.open_regular`: "FILE: cannot read: …", "FILE: is a folder, not a
    file"), not click's: ``--trace``, ``--file``, ``import FILE`` and ``synth CONFIG`` said "File '…' is not
    readable." and "… is a directory.", worded unlike every other file passprice reads (left38)."""

    def __init__(self) -> None:
        super().__init__(readable=False, path_type=Path)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        """An option's help says FILE (a folder is passprice's reader's to refuse, yet the option takes a file);
        an argument keeps its own name."""
        return "FILE" if param.param_type_name == "option" else None

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            self.fail("'' is an empty name: give a file name", param, ctx)
        if isinstance(value, str) and value.endswith(("/", os.sep)):
            self.fail(f"{value!r} ends in '/': it names a folder, not a file", param, ctx)
        return super().convert(value, param, ctx)


class _FolderPath(click.Path):
    """A folder name option or argument, as a :class:`~pathlib.Path`: ``click.Path`` that also refuses an empty
    name, which pathlib reads as ``.``: ``init ''`` (``init "$DIR"`` with ``DIR`` unset) wrote a registry into the
    working folder, and ``--root ''`` read the working folder's (attack round 28). ``as_given``:
    the name as text, as given (``--root ./`` not a root was said to be ``.``, pathlib's spelling; round 29)."""

    def __init__(self, as_given: bool = False) -> None:
        # What the name names is passprice's to judge (registry.find_root, scaffold.write), not click's: a file,
        # FIFO or unlistable folder said "Invalid value for '--root': Directory '…' is a file." (left39).
        super().__init__(readable=False, path_type=str if as_given else Path)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        """An option's help says DIRECTORY (click's PATH once files are not refused by click); an argument keeps its
        own name."""
        return "DIRECTORY" if param.param_type_name == "option" else None

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":
            self.fail("'' is an empty name: give a folder name (. for the working folder)", param, ctx)
        return super().convert(value, param, ctx)


# Names that mean this process's standard output: ``-`` (click's and most tools' convention), and the file-system
# names of descriptor 1 (``/dev/stdout`` cannot be written as a file: on a pipe it names ``pipe:[123]``).
_STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


def _is_stdout_name(value: str) -> bool:
    """Whether the output name ``value`` means standard output: ``-``, or ``stdout`` in ``/dev`` or ``1`` in this
    process's ``fd`` folder however the folder is spelled (``//dev/stdout``, ``/dev/../dev/stdout`` and
    ``/proc/self/fd/./1`` slipped past a list of names: ``lock -o //dev/stdout --force`` replaced the file standard
    output was redirected to with the lock)."""
    if value in _STDOUT_NAMES:
        return True
    name = os.path.basename(value)
    if name not in ("stdout", "1"):
        return False
    try:
        folder = os.path.realpath(os.path.dirname(value) or ".")
    except (ValueError, OSError):
        return False
    return (folder, name) in (("/dev", "stdout"), (f"/proc/{os.getpid()}/fd", "1"))


class _OutputPath(_FilePath):
    """An output file option (``-o``, ``--plot``): ``-`` or ``/dev/stdout`` means standard output where the command
    can write its text there (``stdout=True``: the value is then ``None``, the command's own stdout writer, with its
    guarantees), and is refused by name where it writes a file only (a lock, a header, a picture), instead of a file
    named ``-`` in the working folder or a write to a pipe's name that fails."""

    def __init__(self, stdout: bool) -> None:
        super().__init__()
        self.stdout = stdout

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and _is_stdout_name(value):
            if self.stdout:
                return None
            self.fail(f"{value!r} would be standard output; this option writes a file: give its name", param, ctx)
        if isinstance(value, str) and value and not os.path.isabs(value):
            # A name under a working folder that was removed (the shell still stood in it): os.getcwd fails, and
            # `sweep -o out.csv` (simulate, roofline and audit --plot) said "standard output: No such file or
            # directory", `lock -o l.lock.toml` "not a file name (FileNotFoundError)" (attack round 42).
            try:
                os.getcwd()
            except FileNotFoundError:
                from passprice.registry import gone_folder

                raise InputError(f"{shown_path(value)}: cannot write: {gone_folder()}") from None
        return super().convert(value, param, ctx)


def click_as_it_was() -> None:
    """Give click its own parameter classes back once every command is defined (:mod:`passprice.cli` calls it
    after importing its command modules): a parameter made after that is click's own, built at once."""
    setattr(click.decorators, "Option", _BUILT_AT_ONCE[0])  # noqa: B010
    setattr(click.decorators, "Argument", _BUILT_AT_ONCE[1])  # noqa: B010
    setattr(click, "Path", _BUILT_AT_ONCE[2])  # noqa: B010
