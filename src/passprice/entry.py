"""The ``passprice`` console script: a command whose output the memo kept (:mod:`passprice.memo`) is answered
before click, attrs or the rest of passprice is imported; every other run is :func:`passprice.cli.main`'s.

Two things happen before either (attack round 5, issue 13). A process started with a file system encoding other than
UTF-8 (``LC_ALL=POSIX PYTHONUTF8=0``) runs itself again in Python's UTF-8 mode (:func:`utf8_names`). And a Ctrl-C
that comes while the command line is still being imported exits 130 with one line (:func:`_interrupted`), as one
during a command does: importing :mod:`passprice.cli` takes 0.1 to 0.9 s, depending on the machine's load and
whether bytecode is cached, and a Ctrl-C in that time printed the interpreter's ``KeyboardInterrupt`` traceback of
whatever module was being imported. Nothing is written before :func:`passprice.cli.main` starts, so that Ctrl-C ends
the process at once (``os._exit``); :func:`passprice.cli.main` puts Python's own handler back where its reporting of
a Ctrl-C begins.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from types import FrameType
    from typing import Any
else:
    try:
        # The C module behind :mod:`signal`, which imports enum, functools and collections (about 15 ms, in which a
        # Ctrl-C still printed the interpreter's traceback of the module being imported) before a handler is in place.
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal


def _interrupted(number: int, frame: FrameType | None) -> None:
    """Ctrl-C before the command line runs: one line on stderr, exit 130 (128 + SIGINT), nothing to clean up; SIGTERM
    or SIGHUP there (:func:`early`): ``passprice: terminated``, exit 128 + its number, as during a command."""
    os.write(2, b"passprice: interrupted\n" if number == signal.SIGINT else b"passprice: terminated\n")
    os._exit(128 + number)


def _console() -> bool:
    """Whether this process is the ``passprice`` command: the console script (``bin/passprice``, ``passprice.exe``,
    ``passprice-script.py``) or ``python -m passprice``; not a program importing passprice as a library (a test
    runner, a notebook), whose Ctrl-C is its own."""
    name = os.path.basename(sys.argv[0]) if sys.argv and isinstance(sys.argv[0], str) else ""
    for suffix in (".exe", "-script.pyw", "-script.py"):
        name = name.removesuffix(suffix)
    if name == "passprice":
        return True
    argv = list(getattr(sys, "orig_argv", []))
    return "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["passprice"]


#: The name of the SIGINT handler ``passprice_sigint.pth`` puts in place while ``site`` reads the environment's
#: ``.pth`` files, in the ``passprice`` console script alone (:func:`early` takes its place).
SITE_HANDLER = "_passprice_sigint"


def early() -> None:
    """Put :func:`_interrupted` in place for SIGINT as the first thing ``import passprice`` does, in the ``passprice``
    command alone (:func:`_console`) and only where Python's own handler is there, or the one ``passprice_sigint.pth``
    put there (:data:`SITE_HANDLER`; a SIGINT ignored, as a shell's background job has it, stays ignored).
    :func:`main` then finds it there and carries on. Until session 13 it was put in place by :func:`main`, after the
    rest of this module and the package were imported. Since session 27 the wheel's ``passprice_sigint.pth`` puts a
    handler doing what :func:`_interrupted` does in place while ``site`` starts (the console script's ``argv[0]``
    alone: one comparison in any other interpreter of the environment), so the console script's own ``import re``
    and ``from passprice.entry import main`` (5 to 40 ms on a loaded machine) are covered: of 96 Ctrl-Cs 0 to 55 ms
    into ``passprice cards`` at load 6 on 2 cores, 40 printed a traceback before, 20 after, none past 35 ms (all in
    CPython's own ``io``/``site`` start, before any ``.pth`` runs; README, exit status)."""
    current = signal.getsignal(signal.SIGINT)
    if not _console():
        return
    if current is signal.default_int_handler or getattr(current, "__name__", None) == SITE_HANDLER:
        signal.signal(signal.SIGINT, _interrupted)
    # SIGTERM and SIGHUP likewise, where their action is the default (one ignored, as ``nohup`` leaves SIGHUP, stays
    # ignored): until :func:`passprice.cli.main` put its handler in place, about 0.3 s in, either killed the process
    # with no line (attack round 58; the .pth covers them from ``site`` on too). No file is written before then.
    for number in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if number is not None:
            current = signal.getsignal(number)
            if current == signal.SIG_DFL or getattr(current, "__name__", None) == SITE_HANDLER:
                signal.signal(number, _interrupted)


def utf8_names() -> None:
    """Run again in Python's UTF-8 mode (``-X utf8``) when the interpreter started with another file system encoding
    (an ASCII locale with UTF-8 mode turned off: ``LC_ALL=POSIX PYTHONUTF8=0``). passprice's files are UTF-8 and name
    one another in UTF-8 (``card = "é"``), so a name must reach the file system as UTF-8 bytes and come back from it
    as text: under ASCII a registered ``é.toml`` was listed as ``??``, named ``\\\\udcc3\\\\udca9`` in error lines,
    broke ``lock`` (a lone surrogate cannot be hashed as UTF-8) and could not be opened from a serving file. The
    process is replaced (``os.execv`` with the interpreter's own arguments, ``sys.orig_argv``), so its exit status,
    signals and standard streams are the command's; nothing is read or printed before; SIGINT is blocked across the
    exec, and :func:`main` unblocks it once its handler is in place. Where that cannot be done
    (no ``orig_argv``, not POSIX, ``execv`` fails) the command runs on in the locale's encoding."""
    if os.name != "posix" or sys.flags.utf8_mode or sys.getfilesystemencoding().lower().replace("-", "") == "utf8":
        return
    argv = getattr(sys, "orig_argv", None)
    if not argv or not sys.executable:
        return
    # SIGINT is blocked across the exec (a signal mask, and a signal pending, outlive execve) until :func:`main`
    # has put :func:`_interrupted` in place: a Ctrl-C during the second interpreter's start (0.1 s and more, which
    # doubled the window in which it printed the interpreter's KeyboardInterrupt traceback of site.py or of a module
    # being imported) then waits, and ends the command as one during it does.
    mask = getattr(signal, "pthread_sigmask", None)
    try:
        if mask is not None:
            mask(signal.SIG_BLOCK, {signal.SIGINT})
        os.execv(sys.executable, [sys.executable, "-X", "utf8", *argv[1:]])
    except OSError:
        if mask is not None:
            mask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return


def _escaped_or_replaced(error: UnicodeError) -> tuple[str | bytes, int]:
    """The ``passprice-output`` error handler (:func:`codecs.register_error`) of standard output under an encoding
    that is not UTF-8: a file name's bytes that are not UTF-8 (lone surrogates ``\\udc80``–``\\udcff``) are written
    back as those bytes (``surrogateescape``, as ``ls`` prints them), and any other character the encoding lacks
    (``←``, ``…``, ``µ`` under ``latin-1`` or Windows' ``cp1252``) as its escape (``\\u2190``, ``backslashreplace``,
    as Python writes standard error), never a :class:`UnicodeEncodeError` traceback. Raises ``error`` for a decoding
    error (the handler is for output alone)."""
    import codecs

    if not isinstance(error, UnicodeEncodeError):
        raise error
    chunk = error.object[error.start : error.end]
    handler = "surrogateescape" if all("\udc80" <= c <= "\udcff" for c in chunk) else "backslashreplace"
    try:
        return codecs.lookup_error(handler)(error)
    except UnicodeError:
        return codecs.lookup_error("backslashreplace")(error)


def printable_output() -> None:
    """Set standard output's error handler so that whatever a command prints can be written: under UTF-8 (the usual
    case, and every case after :func:`utf8_names` unless ``PYTHONIOENCODING`` names another encoding),
    ``surrogateescape`` — a file name whose bytes are not UTF-8 is printed as those bytes, not refused with a
    traceback; under any other encoding (``PYTHONIOENCODING=latin-1``, a Windows console or pipe in ``cp1252``)
    :func:`_escaped_or_replaced`, which also escapes the characters passprice's own text holds that the encoding
    lacks: ``price`` under ``PYTHONIOENCODING=latin-1`` printed a ``UnicodeEncodeError`` traceback at its first
    ``←`` and exited 1 (attack round 24). (Under ``ascii`` click already writes UTF-8.) A stream that cannot be
    reconfigured is left as it is."""
    import codecs

    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if not callable(reconfigure):
        return
    try:
        encoding = codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name
    except LookupError:
        encoding = ""
    if encoding in ("utf-8", "utf-16", "utf-32", "utf-8-sig"):
        reconfigure(errors="surrogateescape")
        return
    try:
        codecs.lookup_error("passprice-output")
    except LookupError:
        codecs.register_error("passprice-output", _escaped_or_replaced)
    reconfigure(errors="passprice-output")


#: The exit status the command ended with (its ``SystemExit`` code), for :func:`_end`.
_STATUS: list[int] = []


def _end() -> None:
    """The last of the interpreter's exit handlers (registered first, :mod:`atexit` runs them in reverse): flush the
    standard streams and end the process with the command's status (``os._exit``), as the memo's replay does,
    without the interpreter's teardown. During that teardown Python puts the default SIGINT action back
    (``_PySignal_Fini``), so a Ctrl-C there killed the process by the signal (status -2 to a caller, 130 + nothing
    said to a shell) instead of the promised 130 with its line; up to here, :func:`_interrupted` answers it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: what it held cannot be written anyway
            pass
    os._exit(_STATUS[0] if _STATUS else 0)


def _status(code: object) -> int:
    """The exit status of ``SystemExit(code)`` as the interpreter gives it: 0 for ``None``, an integer as it is
    (taken modulo 256 by the system), 1 for anything else (whose text the interpreter has printed)."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def main() -> None:
    """Run ``passprice`` with ``sys.argv``: the memo's replay when one holds, else the command line
    (:func:`passprice.cli.main`), watched by the memo when its output may be kept. Exits as the command exits.
    :func:`_interrupted` handles Ctrl-C until the command line takes over and again once its command has ended
    (:func:`passprice.cli.signals._command_ended`), to the end of the process (:func:`_end`); all left as they are
    when SIGINT is ignored, as a shell's background job has it."""
    utf8_names()
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _interrupted):  # _interrupted: :func:`early`
        signal.signal(signal.SIGINT, _interrupted)
        import atexit

        atexit.register(_end)
    if getattr(sys, "orig_argv", [])[1:3] == ["-X", "utf8"] and hasattr(signal, "pthread_sigmask"):
        # Started by :func:`utf8_names` (its "-X utf8" first), which blocked SIGINT across the exec: a Ctrl-C that
        # came meanwhile arrives now. A mask the process was started with otherwise is left as it is.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from passprice import memo

    try:
        memo.main(_command_line)
    except SystemExit as e:
        _STATUS[:] = [_status(e.code)]
        raise
    except KeyboardInterrupt:  # past the command line's own handling (the memo keeping its output): as anywhere
        _interrupted(signal.SIGINT, None)
    except BaseException:
        # Any other exception: the interpreter prints its traceback and exits 1, and so must _end (it ended such a
        # process with status 0, a crash a script took for success: round 17).
        _STATUS[:] = [1]
        raise


def _quote_from_bytes(*args: Any, **kwargs: Any) -> Any:
    """:func:`urllib.parse.quote_from_bytes` itself, imported when first called (:func:`pathlib_without_urls`)."""
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(*args, **kwargs)


def pathlib_without_urls() -> None:
    """Import :mod:`pathlib` without :mod:`urllib.parse` (and the :mod:`ipaddress` that imports), which it imports
    for one function, ``quote_from_bytes``, called by ``Path.as_uri`` alone: no command of passprice makes a URI,
    and a price run afresh was 8.5 M of its 380 M instructions less without them (issue 16). While :mod:`pathlib`
    is imported, ``urllib.parse`` in :data:`sys.modules` is a stand-in holding :func:`_quote_from_bytes`, which
    imports the real function when first called, so ``as_uri`` still works; the stand-in is removed at once, so any
    later ``import urllib.parse`` imports the real module. Nothing is done when either module is imported already;
    a :mod:`pathlib` that wants more of the stand-in than that function is imported again as ever."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    import types

    stand_in = types.ModuleType("urllib.parse", "A stand-in while pathlib is imported (passprice.entry).")
    stand_in.quote_from_bytes = _quote_from_bytes  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib
    except ImportError:  # another pathlib, which imports another name of urllib.parse: as ever
        pass
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
    if "pathlib" not in sys.modules:
        import pathlib  # noqa: F401


#: The stand-ins :func:`standard_modules_held_off` put in :data:`sys.modules`, by name.
_STAND_INS: dict[str, Any] = {}


def _loaded(name: str) -> Any:
    """The real module ``name`` when it is imported (by anyone), else ``None``: a stand-in's own answers are then
    the real module's, whatever was done to it since (a function replaced in it included)."""
    module = sys.modules.get(name)
    return None if module is None or module is _STAND_INS.get(name) else module


def _real(name: str) -> Any:
    """The real module ``name`` (one of :data:`_STAND_INS`): imported as ever, its stand-in taken out of
    :data:`sys.modules` first when still there."""
    if name in _STAND_INS and sys.modules.get(name) is _STAND_INS[name]:
        del sys.modules[name]
    __import__(name)
    return sys.modules[name]


class _StandIn(type(sys)):  # type: ignore[misc]  # the module type, without importing types
    """A module in :data:`sys.modules`, while the command line is imported, in place of a standard module that click
    or attrs imports at once and a command may never use (:func:`standard_modules_held_off`): the few names set on
    it answer as the real module's do; any other name imports the real module (:func:`_real`) and is its, but
    ``__path__``, which the import system asks of a module ``from … import`` takes names of (none of the four is a
    package: the real module has none either)."""

    def __getattr__(self, name: str) -> Any:
        if name == "__path__":
            raise AttributeError(name)
        return getattr(_real(self.__name__), name)


def _cleandoc(doc: Any) -> Any:
    """:func:`inspect.cleandoc`: a text of one line (no line break, no tab) is the text with its leading blanks
    taken out, which is what ``cleandoc`` makes of it (its first line's leading blanks stripped, a blank line
    dropped); any other, or any once the real module is imported (:func:`_loaded`), asks the real function."""
    if type(doc) is str and "\n" not in doc and "\t" not in doc and _loaded("inspect") is None:
        return doc.lstrip()
    return _real("inspect").cleandoc(doc)


def _python_implementation() -> Any:
    """:func:`platform.python_implementation`: ``CPython`` in CPython (``sys.implementation.name`` ``cpython``,
    which :mod:`platform` finds by parsing ``sys.version``), the real function's answer elsewhere or once the real
    module is imported."""
    if sys.implementation.name == "cpython" and _loaded("platform") is None:
        return "CPython"
    return _real("platform").python_implementation()


def _system() -> Any:
    """:func:`platform.system`: ``Linux`` where ``os.uname()`` says so (the one name ``platform.uname`` passes on as
    it is, none of its renamings applying), the real function's answer elsewhere or once the real module is
    imported."""
    uname = getattr(os, "uname", None)
    if uname is not None and uname().sysname == "Linux" and _loaded("platform") is None:
        return "Linux"
    return _real("platform").system()


def standard_modules_held_off() -> list[str]:
    """Put stand-ins (:class:`_StandIn`) in :data:`sys.modules` for four standard modules that click and attrs
    import when they are imported but a price uses a few small answers of, and return their names; the caller takes
    them out (:func:`stand_ins_out`) once the command line is imported. Each answers these names itself and
    imports the real module for any other: :mod:`inspect` (with :mod:`ast`, :mod:`dis`, :mod:`tokenize`; about 34 M
    of a price's 424 M instructions) ``cleandoc`` of a one-line text (click cleans each option's help with it);
    :mod:`platform` (about 8 M) ``python_implementation`` (attrs asks whether it runs in PyPy) and ``system``
    (:mod:`uuid`, which ``click.types`` imports, asks whether it runs in AIX or Linux); :mod:`datetime` (about 3 M)
    its ``datetime`` class, the one the real module takes from :mod:`_datetime` (``click.types`` imports it by
    name); :mod:`tokenize` (about 8 M) none: :mod:`linecache`, which attrs imports, imports it to read a source
    file for a traceback (``tokenize.open``), not when attrs puts its generated methods' text in its cache. attrs'
    ``inspect.signature`` of each converter is answered without :mod:`inspect` by
    :class:`passprice.generated._Annotations`. A module imported already, or without :mod:`_datetime` for
    :mod:`datetime`, is left as it is. Once the real module is imported, by a stand-in asked another name or by
    anyone, every answer of its stand-in is the real module's: what differs is only that the modules which imported
    a stand-in hold it, not the real module (``click.core.inspect is not inspect``). Round 16 and round 19 declined
    stand-ins for :mod:`inspect` and :mod:`platform` that stayed in the process with answers of their own (an
    ``inspect.signature`` that raised); these answer as the real modules do. docs/PERFORMANCE.md;
    ``tests/test_afresh134.py``."""
    made = []
    for name in ("inspect", "platform", "datetime", "tokenize"):
        if name in sys.modules:
            continue
        stand_in = _StandIn(name, "A stand-in while the command line is imported (passprice.entry).")
        if name == "inspect":
            stand_in.cleandoc = _cleandoc
        elif name == "platform":
            stand_in.python_implementation = _python_implementation
            stand_in.system = _system
        else:
            try:
                import _datetime  # type: ignore[import-not-found]
            except ImportError:  # pragma: no cover - an interpreter with the pure-Python datetime alone
                continue
            stand_in.datetime = _datetime.datetime
        _STAND_INS[name] = stand_in
        sys.modules[name] = stand_in
        made.append(name)
    return made


def stand_ins_out(names: list[str]) -> None:
    """Take the stand-ins of :func:`standard_modules_held_off` out of :data:`sys.modules` (those still there): any
    later ``import`` imports the real module. The modules that imported a stand-in keep it, and it answers as the
    real module does."""
    for name in names:
        if sys.modules.get(name) is _STAND_INS.get(name):
            del sys.modules[name]


def _command_line() -> None:
    import gc

    # The young generation's threshold :func:`passprice.cli.main` sets, set before the command line is imported: click,
    # attrs and passprice's classes allocate tens of thousands of objects that live until the process exits, and a
    # collection every 700 allocations (the default) scanned them over and over while they were imported (about 3 %
    # of a price run afresh: 413 M instructions against 401 M under callgrind).
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    # NumPy's OpenBLAS starts a thread a CPU when it is imported, and its idle threads spin after each call: on a
    # 2-core machine the import cost 0.03 to 0.04 s more CPU (0.172 -> 0.131 s of user time with one thread, median
    # of 7 runs), and a cold check, whose stack fit makes 441 small least-squares solves, 0.2 s more (1.96 -> 1.75 s,
    # medians of 5 in turn, load 3), for linear algebra one thread does as fast: one, unless the user chose.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "--no-cache" not in sys.argv[1:]:
        from passprice import generated

        generated.install_early()  # attrs' own classes' methods from the cache too, as passprice's are
    pathlib_without_urls()
    held_off = standard_modules_held_off()
    try:
        from passprice.cli import main as cli_main
    finally:
        stand_ins_out(held_off)

    cli_main()
