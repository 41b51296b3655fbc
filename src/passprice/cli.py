"""The command line is a thin layer over the library: each command parses its options, calls one library function,
and prints a table for people or ``--json`` for programs.

Exit status: 0 success; 1 a refusal (a price the model or a lock refuses); 2 bad input or usage; 130 interrupted
(Ctrl-C). Bad input is one line per problem on stderr (file, key or byte offset, what was wrong), never a traceback.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import functools
import json
import os
import sys
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, overload

import click

if TYPE_CHECKING:
    import signal
else:
    try:
        # The C module behind :mod:`signal` (what the command line asks of it is there): :mod:`signal` itself turns
        # every signal number into an enumeration when imported, about 1 % of a price's instructions.
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal

from passprice import __version__, generated
from passprice.errors import InputError, NotFound, escaped, problem_lines
from passprice.files import shell_word
from passprice.files import shown as shown_path

generated.install()  # the methods attrs generates for passprice's classes: compiled once, kept in the cache

#: The exit status of a command interrupted by Ctrl-C (SIGINT): 128 + 2, as a shell reports it.
INTERRUPTED = 130


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a CI job cancelled, ``timeout``, a closed terminal), raised where the command runs so that
    every ``finally`` runs — a temporary file is removed, nothing is half-written — as for Ctrl-C; ``status`` is the
    shell's status for a command ended by that signal (128 + its number)."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.status = 128 + signal_number


#: The SIGINT handler of the console script once a command has run (:func:`passprice.entry._interrupted`: one line,
#: exit 130 at once), set by :func:`main` when :mod:`passprice.entry` started it; empty otherwise (a test's runner, a
#: caller of :func:`main` keeps Python's handler).
_AFTER_COMMAND: list[Callable[[int, Any], None]] = []


def _terminated(number: int, _frame: object) -> None:
    """:func:`main`'s handler of SIGTERM and SIGHUP while a command runs: raise :class:`Terminated` there."""
    raise Terminated(number)


def _command_ended() -> None:
    """Past a command's body, Ctrl-C ends the console script at once with status 130 (:data:`_AFTER_COMMAND`): no
    ``KeyboardInterrupt`` is raised where nothing is left to clean up, because one raised there reached click's own
    handler ("Aborted!", exit 1) or, past :func:`main`, the interpreter's (killed by SIGINT, status -2, in 4 of 40
    runs interrupted near their end). SIGTERM and SIGHUP likewise (128 + the number): a SIGTERM 4 ms after a Ctrl-C
    was raised in the Ctrl-C's own handler, and click said "Aborted!" and exited 1 (4 of 32 runs of ``--no-cache
    check``, attack72). Left as it is when the handler is not Python's (SIGINT ignored)."""
    if _AFTER_COMMAND and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _AFTER_COMMAND[0])
    for name in ("SIGTERM", "SIGHUP"):
        if _AFTER_COMMAND and hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is _terminated:
            signal.signal(getattr(signal, name), _AFTER_COMMAND[0])


#: The signal whose ``KeyboardInterrupt`` a finalizer swallowed while a command ran (:func:`_stopped_again`), until
#: it is raised where the command runs (:func:`_stop_pending`), under :data:`_PENDING_LOCK`.
_PENDING: list[int] = []
_PENDING_LOCK = _thread.allocate_lock()


def _stopped_again(hook: Any, previous: Callable[[Any], object]) -> None:
    """``sys.unraisablehook`` while :func:`main` runs a command: a Ctrl-C (``KeyboardInterrupt``) or a SIGTERM/SIGHUP
    (:class:`Terminated`) whose handler raised inside a finalizer (an object's ``__del__``, a weakref callback, run by
    the collector wherever an allocation triggered it) is not lost there. Python itself prints "Exception ignored
    in: …" with a ``KeyboardInterrupt`` traceback and carries on, so the command was not stopped and exited 0
    (flaky41: one Ctrl-C in 35 during ``--no-cache check`` printed a traceback; a ``__del__`` sending itself SIGINT
    during ``cards`` shows it every time). The signal is kept in :data:`_PENDING` and sent again to this thread 5 ms
    later by a thread of its own (:func:`_send_pending`; sent from this hook, by :func:`signal.raise_signal` or
    :func:`_thread.interrupt_main`, its handler ran at once, inside the hook), so that it is raised where the command
    runs (one landing in a finalizer again is kept again); a command that ends before is stopped as it ends
    (:func:`_stop_pending`). Either way it ends with its one line and 130 (128 + the signal's number), as for any
    other Ctrl-C. Any other unraisable exception, or one whose signal's handler is no longer Python's (ignored, or
    the default action), goes to ``previous``."""
    error = hook.exc_value
    if isinstance(error, KeyboardInterrupt):
        number = error.status - 128 if isinstance(error, Terminated) else int(signal.SIGINT)
        if callable(signal.getsignal(number)):
            with _PENDING_LOCK:
                if not _PENDING:
                    _PENDING.append(number)
                    _thread.start_new_thread(_send_pending, (_thread.get_ident(),))
            return
    previous(hook)


def _send_pending(main: int) -> None:
    """The thread :func:`_stopped_again` starts: 5 ms later, the signal still pending is sent to the thread ``main``
    (:func:`signal.pthread_kill`, a signal as the kernel delivers it: a ``time.sleep`` or a wait on a pipe there is
    interrupted, where :func:`_thread.interrupt_main` waited for it to end)."""
    import time

    time.sleep(0.005)
    with _PENDING_LOCK:
        if _PENDING:
            signal.pthread_kill(main, _PENDING.pop())


def _stop_pending() -> None:
    """Raise the ``KeyboardInterrupt`` (or :class:`Terminated`) of a signal a finalizer swallowed and
    :func:`_send_pending` has not sent yet (:data:`_PENDING`), as the command ends; nothing when none is pending."""
    with _PENDING_LOCK:
        number = _PENDING.pop() if _PENDING else None
    if number is not None:
        raise Terminated(number) if number != signal.SIGINT else KeyboardInterrupt()


def _stopped(e: KeyboardInterrupt) -> tuple[str, int]:
    """The line and exit status of a command stopped by ``e``: Ctrl-C (130) or a :class:`Terminated` signal."""
    if isinstance(e, Terminated):
        return "passprice: terminated", e.status
    return "passprice: interrupted", INTERRUPTED

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Refused(Exception):
    """A command's refusal: ``payload`` is printed (as JSON with ``--json``, else ``message`` on stderr), exit 1."""

    def __init__(self, message: str, payload: dict[str, Any], header: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.payload = payload
        #: A ``Routed`` refusal's checkpoint header: the routing records offered are those whose scope holds it.
        self.header = header


def _escaped_lines(text: str) -> str:
    """``text`` with each of its lines :func:`~passprice.errors.escaped` (a name it quotes can neither add a line
    nor reorder one)."""
    return "\n".join(escaped(line) for line in text.split("\n"))


#: ``ctx.meta`` key: the exit status a command has decided on before it prints (``diff`` and ``check`` print their
#: report, then exit 1 or 2): a reader that leaves the pipe early (``| head``) does not turn it into 0.
STATUS = "passprice.status"

#: ``ctx.meta`` keys: the command line's words (``passprice.argv``, kept by :class:`_Group` to tell whether ``--json``
#: was asked when click stopped before reading it) and whether the command has put its JSON document on standard
#: output (``passprice.json_printed``: a failure after it, a listing's files left out, prints no second one).
ARGV = "passprice.argv"
JSON_PRINTED = "passprice.json_printed"
#: ``ctx.meta`` key: the :class:`passprice.jsonerror.StreamedArray` of a JSON array being streamed onto standard
#: output (``sweep --json``'s rows), removed once it is whole: a failure before that ends the array with its
#: document as the last element (session 31).
STREAMED = "passprice.streamed"


def _printed_json() -> None:
    """Say that the running command has put its one JSON document on standard output (or begun to: ``sweep``'s rows
    stream, and a failure after some ends their array, :data:`STREAMED`), so that a failure after it prints no second
    document. Raises nothing."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[JSON_PRINTED] = True


def _options_of(path: tuple[str, ...]) -> dict[str, bool] | None:
    """:func:`passprice.jsonerror.json_asked`'s ``options_of``: the options of command ``path`` of ``passprice``,
    each mapped to whether it takes a value; ``{}`` for a group; ``None`` when ``path`` names no command."""
    command: click.Command | None = cli
    for name in path:
        command = command.commands.get(name) if isinstance(command, click.Group) else None
        if command is None:
            return None
    if isinstance(command, click.Group):
        return {}
    assert command is not None
    taken = {o: not (isinstance(p, click.Option) and (p.is_flag or p.count)) for p in command.params
             if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
    return {"--help": False, "-h": False, **taken}


def _json_wanted(ctx: click.Context | None, args: list[str] | None = None) -> bool:
    """Whether the command of ``ctx`` (or of the command line ``args``, before any context is made) was given
    ``--json`` (or ``--format json``, which asks the same; session 31): read by the option itself, else from the
    command line's words (:func:`passprice.jsonerror.json_asked`; a usage error stops click before the option is
    read). Raises nothing."""
    if ctx is not None and ctx.meta.get("passprice.json"):
        return True
    words = args if args is not None else (ctx.meta.get(ARGV) if ctx is not None else None)
    if not words:
        return False
    from passprice.jsonerror import json_asked

    try:
        return json_asked(words, _options_of)
    except Exception:  # whether to add a document must never hide the error itself
        return False


def _say_failed(ctx: click.Context | None, problems: list[str], *, shown: list[str] | None = None,
                wanted: bool | None = None) -> None:
    """A failure of bad input or usage (exit 2) said: one ``passprice: error:`` line per problem on standard error
    (``shown``: the lines as printed, when they differ from ``problems``: escaped, cut, with a hint), and, when the
    command was given ``--json`` or ``--format json`` (``wanted``, else :func:`_json_wanted`),
    :func:`passprice.jsonerror.error_document` of ``problems`` there (:func:`_failure_document`: alone, or as the last
    element of an array being streamed): ``--json`` always prints one document (issue 13, sessions 30 and 31).
    Standard output that cannot be written (a full disk) leaves the error line alone. The caller exits 2."""
    lines = shown if shown is not None else [f"passprice: error: {_cut(escaped(p))}" for p in problems]
    with _reader_gone():
        if lines:
            click.echo("\n".join(lines), err=True)
    from passprice.jsonerror import error_document

    _failure_document(ctx, error_document(problems), wanted)


def _failure_document(ctx: click.Context | None, document: dict[str, Any], wanted: bool | None = None) -> None:
    """Put ``document`` (the error document, a refusal's payload) on standard output when the command was given
    ``--json`` or ``--format json`` (``wanted``, else :func:`_json_wanted`): alone when no JSON was printed yet, as
    the last element of the array when the command's rows stream (:data:`STREAMED`, ``sweep --json``: a failure
    after some rows; :class:`passprice.jsonerror.StreamedArray`), else nothing (its document is out). Standard
    output that cannot be written (a full disk, a reader gone) is pointed at /dev/null: the line on stderr stands,
    and the status. Raises nothing."""
    wanted = _json_wanted(ctx) if wanted is None else wanted
    if not wanted:
        return
    from passprice.tables import finite_or_null, whole_counts

    # a refusal's bytes as --json writes every count (NotResident's needed); JSON, always: a figure past a float null
    document = finite_or_null(whole_counts(document))
    streamed = ctx.meta.get(STREAMED) if ctx is not None else None
    if ctx is not None and ctx.meta.get(JSON_PRINTED):
        if streamed is None:
            return
        text = streamed.closing(document)
        ctx.meta.pop(STREAMED, None)
    else:
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    try:
        if text is not None:
            click.echo(text, nl=False)
        sys.stdout.flush()
    except OSError:  # a full disk or a reader gone: the line on stderr stands, and the status
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    if ctx is not None:
        ctx.meta[JSON_PRINTED] = True


def _quiet_outputs() -> None:
    """Point standard output and error at /dev/null (their reader is gone), so nothing more is written to them and
    the interpreter's flush at exit is quiet."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(devnull, stream.fileno())


@contextlib.contextmanager
def _reader_gone() -> Iterator[None]:
    """Write an error or refusal whose reader may have left (``2>&1 | head``): a broken pipe ends the writing, not
    the status the caller exits with."""
    try:
        yield
    except BrokenPipeError:
        _quiet_outputs()


def _read_only(root: Any) -> str:
    """:func:`passprice.registry.read_only`: the embedded default named as a command that will not write into it."""
    from passprice.registry import read_only

    return read_only(root)


def _usage(e: click.UsageError, args: list[str] | None = None) -> NoReturn:
    """A usage error as one line on stderr (the problem, and where the command's help is), then exit 2; under
    ``--json`` (asked in ``args``, the command line, or in ``e``'s context) its document on stdout
    (:func:`_say_failed`)."""
    where = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
    message = e.format_message()
    if isinstance(e, click.NoSuchOption) and e.option_name in ("--root", "--no-cache"):
        # an option of passprice itself given after the command (walkthrough 13: "did you mean --routing?")
        given = f"{e.option_name}{' DIR' if e.option_name == '--root' else ''}"
        command = e.ctx.info_name if e.ctx is not None and e.ctx.info_name else "COMMAND"
        message = (f"{e.option_name} is an option of passprice itself: give it before the command (passprice "
                   f"{given} {command} …)")
    elif (isinstance(e, click.NoSuchOption) and e.option_name == "--json" and e.ctx is not None
          and isinstance(e.ctx.command, click.Group)):
        # attack round 54: `passprice --json cards` read "Did you mean '--version'?"; --json is each command's
        group = " ".join(["passprice", *_group_names(e.ctx)])
        message = (f"--json is an option of each command, not of {group} itself: give it after the command "
                   f"({group} COMMAND … --json)")
    elif (isinstance(e, click.NoSuchOption) and e.option_name in _CONTEXT_WORDS and e.ctx is not None
          and any("--limit" in p.opts for p in e.ctx.command.params)):
        # walkthrough 32: "a context of 4,096" tried as --context 4096 read "No such option" and no more
        message = (f"no such option {e.option_name}: a sequence's context is --limit N (the positions it is allowed) "
                   "and --position P (the mean position reached; limit / 2 by default)")
    elif isinstance(e, click.NoSuchOption) and e.ctx is not None and _choice_option(e.ctx, e.option_name):
        message = f"no such option {e.option_name}: write {_choice_option(e.ctx, e.option_name)}"
    elif isinstance(e, click.NoSuchOption) and e.ctx is not None and (others := _taken_by(e.ctx, e.option_name)):
        # fix181: `best --format markdown` read "Did you mean '--draft'?", where audit and diff take --format
        command = " ".join(_group_names(e.ctx)) or "passprice"
        listed = ", ".join(others[:-1]) + f" and {others[-1]}" if len(others) > 1 else others[0]
        # click's guess kept only where it is the same word (--card for --cards): `compare --batches` read "Did you
        # mean '--kv-bytes'?", `best --format` "Did you mean '--draft'?", where the option is another command's
        message = _related_guess(message, e.option_name)
        message += f" ({e.option_name} is an option of {listed}, not of {command})"
    # cut as every error line is (attack round 54: an unknown option or command of 100,000 characters printed a
    # line of 100,070)
    _say_failed(e.ctx, [f"{message}{where}"], shown=[f"passprice: error: {_cut(escaped(message))}{where}"],
                wanted=_json_wanted(e.ctx, args))
    raise click.exceptions.Exit(2)


def _related_guess(message: str, option: str) -> str:
    """``message`` (click's "No such option 'X'. Did you mean 'Y'?") without its guess unless ``Y`` and ``option``
    are the same word, one a prefix of the other (``--card`` for ``--cards``): a guess that only looks alike names
    an option of another meaning. Raises nothing."""
    import re

    def kept(m: re.Match[str]) -> str:
        guesses = re.findall(r"'([^']+)'", m.group(0))
        return m.group(0) if all(g.startswith(option) or option.startswith(g) for g in guesses) else ""

    return re.sub(r" Did you mean [^?]*\?| \(Possible options: [^)]*\)", kept, message)


def _taken_by(ctx: click.Context, option: str) -> list[str]:
    """The commands of passprice (``fact set`` for a subcommand) that take ``option``, other than ``ctx``'s own, in
    the order ``passprice --help`` lists them: what an unknown option's error names (``best --format`` is an option of
    audit, diff and sweep). ``[]`` for a word no command takes. Raises nothing."""
    root = ctx.find_root().command
    own = ctx.command
    found: list[str] = []

    def walk(group: click.Group, path: list[str]) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, [*path, name])
            elif command is not own and not command.hidden and any(
                    option in p.opts or option in getattr(p, "secondary_opts", ()) for p in command.params):
                found.append(" ".join([*path, name]))

    if isinstance(root, click.Group):
        walk(root, [])
    return found


def _group_names(ctx: click.Context) -> list[str]:
    """The names of the commands from ``passprice`` down to ``ctx``'s (``["fact"]`` for ``passprice fact``; ``[]``
    for ``passprice`` itself, whatever name it runs under). Raises nothing."""
    names: list[str] = []
    while ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return names


def _choice_option(ctx: click.Context, given: str) -> str | None:
    """The option and value the command takes for an option ``given`` that names one of its choices (``--markdown``
    for ``--format markdown``, ``--csv`` for ``sweep --format csv``): ``"--format markdown"``; ``None`` when no option
    of the command has that choice. Walkthrough 33: ``diff main HEAD --markdown`` read "No such option", and
    ``audit … --markdown`` "Did you mean '--card'?". A word of 3 or more letters that starts one choice alone
    (``--mark``, ``--sub``), case aside (``--Markdown``), names it too, unless an option of the command starts with
    it (``--car``: click's "Did you mean '--card'?" stands; attack round 50)."""
    word = given.removeprefix("--")
    if word == given:
        return None
    choices = [(max(param.opts, key=len), str(choice)) for param in ctx.command.params
               if isinstance(param, click.Option) and isinstance(param.type, click.Choice) and param.opts
               for choice in param.type.choices]
    for option, choice in choices:
        if word == choice:
            return f"{option} {word}"
    # Attack round 50: `--mark` and `--Markdown` read "Did you mean '--card'?". The one choice the word starts (or,
    # case aside, is), when no option of the command itself starts with it, so click's own suggestion stands there.
    if len(word) < 3 or any(o.startswith(given) for param in ctx.command.params for o in param.opts):
        return None
    found = {(o, c) for o, c in choices if c.lower().startswith(word.lower())}
    if len(found) == 1:
        option, choice = found.pop()
        return f"{option} {choice}"
    return None


#: Options a newcomer tries for the context length, which passprice calls ``--limit`` (and ``--position``).
_CONTEXT_WORDS = frozenset({"--context", "--contexts", "--context-length", "--ctx", "--ctx-size", "--seq-len",
                            "--max-seq-len", "--max-model-len", "--context-limit"})


#: Characters an error line shows at most: past it, its head and tail with how much was left out between them.
LONGEST_LINE = 4000


def _cut(line: str) -> str:
    """``line`` as printed: whole when it has at most :data:`LONGEST_LINE` characters, else its first 3,000 and last
    500 characters around ``… (N characters left out) …``. jsonschema names every unexpected key of a table in one
    message: a card table of 80,000 stray keys (1.2 MB) printed a 789 KB line."""
    if len(line) <= LONGEST_LINE:
        return line
    return f"{line[:3000]} … ({len(line) - 3500:,} characters left out) … {line[-500:]}"


class _Command(click.Command):
    """A passprice command: a command line lacking several required options is told all of them in one line
    (click names the first only: ``fact set`` took four tries to learn ``--unit``, ``--provenance``, ``--source``
    and ``--locator``; walkthrough 14)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # click's parser consumes the list it is given
        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter as e:
            if not isinstance(e.param, click.Option):
                raise
            try:
                opts, _, _ = self.make_parser(ctx).parse_args(args=given)
            except click.UsageError:
                raise e from None
            missing = [
                f"'{p.opts[0]}'" for p in self.get_params(ctx)
                if isinstance(p, click.Option) and p.required and opts.get(p.name) is None and p.envvar is None
            ]  # fmt: skip
            if len(missing) < 2:
                raise
            raise click.UsageError(f"Missing options {', '.join(missing)}.", ctx) from None


class _Subgroup(click.Group):
    """A group of passprice commands under ``passprice`` (``fact``): its commands are :class:`_Command`."""

    command_class = _Command


def _closed(ctx: click.Context) -> Callable[[Exception], None]:
    """What ends a failed run of ``ctx``'s command before it runs again (:func:`passprice.cache.served_again`): its
    context's resources closed as the exception ``e`` leaves them (the snapshot it read ends; a file being replaced is
    left as it was), the callbacks run (the cache is put back on); click gives the context a new exit stack. A click
    before 8.2, which closes a context's resources as if nothing failed, is not run again: ``e`` is raised."""

    def close(e: Exception) -> None:
        close_with = getattr(ctx, "_close_with_exception_info", None)
        if close_with is None:
            raise e
        close_with(type(e), e, e.__traceback__)

    return close


def _answered(e: Exception) -> bool:
    """Whether ``e`` is one of passprice's own answers to a command (an input error, a refusal, click's exits and
    usage errors, a reader gone from the pipe), not a failure :func:`passprice.cache.served_again` runs again
    uncached."""
    if isinstance(e, (InputError, Refused, click.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                      BrokenPipeError)):
        return True
    serving = sys.modules.get("passprice.serving")
    return serving is not None and isinstance(e, serving.ServingRefusal)


class _Group(click.Group):
    """The ``passprice`` group: turns :class:`InputError` and a usage error into one line on stderr and exit 2, and
    a refusal into exit 1, whichever command raised it."""

    command_class = _Command
    group_class = _Subgroup

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        given = list(args)  # click's parser consumes the list it is given
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
            ctx.meta[ARGV] = given
            return ctx
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            _usage(e, given)
        except KeyboardInterrupt as e:
            # Ctrl-C while click parses the command line (building a command's options): click would say "Aborted!"
            # and exit 1, the refusal status; it is the interrupted status, as during the command.
            _command_ended()  # a second signal now ends the process at once, not in this handler
            line, status = _stopped(e)
            click.echo(line, err=True)
            raise click.exceptions.Exit(status) from None

    def _invoker(self, ctx: click.Context) -> Callable[[], Any]:
        """The group's own invocation of ``ctx``'s command, which may be run twice
        (:func:`passprice.cache.served_again`): click's takes the command's words out of the context
        (``_protected_args`` and ``args``), and each run is given them back."""
        held = "_protected_args" if hasattr(ctx, "_protected_args") else "protected_args"
        words = (list(getattr(ctx, held)), list(ctx.args))

        def run() -> Any:
            setattr(ctx, held, list(words[0]))
            ctx.args = list(words[1])
            return super(_Group, self).invoke(ctx)

        return run

    def invoke(self, ctx: click.Context) -> Any:
        try:
            try:
                # Imported inside the handlers: a SIGTERM or SIGHUP while it was imported (the first import of
                # passprice.cache under --no-cache) reached click's own handler, "Aborted!" and exit 1
                # (tests/test_afresh134.py).
                from passprice import cache

                result = cache.served_again(self._invoker(ctx), _answered, _closed(ctx))
            finally:
                _command_ended()
            problems = ctx.meta.get("passprice.problems")
            if problems:
                # Each line once, in order: a problem of the environment met reading every file
                # (PASSPRICE_MAX_FILE_BYTES=-1) was printed once a file, 17 times by `cards` (attack round 44).
                raise InputError.of(list(dict.fromkeys(problems)))
            return result
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as e:
            # click's parser raises an option missing its value (`price --json --batch`) with no context: the
            # command line's words tell whether --json was asked (attack round 54: no document was printed)
            _usage(e, ctx.meta.get(ARGV))
        except InputError as e:
            # One problem a line (the error's lines: a newline, a U+2028 or a \x1c a file name holds is data), each
            # character that does not print escaped, so a name cannot split or reorder its line.
            lines = list(e.lines)
            root = _root_or_none(ctx)
            if any(line.endswith(": no such file") for line in lines):
                from passprice.registry import found_elsewhere

                lines = [found_elsewhere(line, root) for line in lines]
            lines = _as_given(ctx, lines, root, list(e.lines))
            # One write of them all: a write (and a terminal check) a line cost 1.3 s of system time for a sweep
            # file's 16,384 whole floats in `batches`, a line each (attack round 30).
            _say_failed(ctx, lines)
            ctx.exit(2)
        except Refused as e:
            with _reader_gone():
                _routed_records(ctx, e.payload, e.header)
                _failure_document(ctx, e.payload)
                name = e.payload.get("refusal")
                message = "\n".join(_as_given(ctx, e.message.split("\n"), _root_or_none(ctx)))
                message += _records_said(e.payload, e.header)
                shown = (f"{name}: {message}" if isinstance(name, str) and not message.startswith(name)
                         else message)
                click.echo(f"passprice: refused: {_escaped_lines(shown)}", err=True)
            ctx.exit(1)
        except BrokenPipeError:  # e.g. `passprice header … | head`: the reader left; the status stands
            _quiet_outputs()
            ctx.exit(ctx.meta.get(STATUS, 0))
        except OSError as e:
            # A last resort for a lookup that did not go through passprice.files.look (a name over 255 bytes or a
            # loop of symbolic links in a path some code stat-ed itself): one line, not a traceback.
            if e.errno not in (errno.ENAMETOOLONG, errno.ELOOP) or e.filename is None:
                raise
            from passprice.files import look

            try:
                look(e.filename)
            except InputError as named:
                _say_failed(ctx, [str(named)], shown=[f"passprice: error: {escaped(str(named))}"])
                ctx.exit(2)
            raise
        except KeyboardInterrupt as e:
            # Ctrl-C (or SIGTERM, SIGHUP): nothing half-written (every output goes through a temporary file), and the
            # shell's status for a command ended by the signal (128 + its number), not the refusal status click gives.
            line, status = _stopped(e)
            click.echo(line, err=True)
            ctx.exit(status)
        except Exception as e:
            # A named refusal no command caught around its pricing: a drafting method out of its scope refuses while
            # the serving is resolved (passprice.scopes.OutOfScope). Exit 1 with the refusal, as a priced refusal.
            from passprice.serving import ServingRefusal

            if not isinstance(e, ServingRefusal):
                raise
            payload = e.to_json()
            from passprice.serving import BadRouting, Routed

            _routed_records(ctx, payload, e.header if isinstance(e, (Routed, BadRouting)) else None)
            with _reader_gone():
                _failure_document(ctx, payload)
            said = str(e) + _records_said(payload, e.header if isinstance(e, (Routed, BadRouting)) else None)
            click.echo(f"passprice: refused: {e.name}: {_escaped_lines(said)}", err=True)
            ctx.exit(1)


class _Deferred:
    """A click parameter built when it is first used, not when its command is defined: a run uses one command's
    options, and building the ~280 options of every command took about a third of importing this module. Until
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


# The commands below are defined with deferred parameters: click.option and click.argument build the class
# click.decorators names, and click.Path is the deferred type, all restored to click's own once the last command is
# defined (above main()).
_BUILT_AT_ONCE = (getattr(click.decorators, "Option"), getattr(click.decorators, "Argument"), click.Path)  # noqa: B009
setattr(click.decorators, "Option", _DeferredOption)  # noqa: B010
setattr(click.decorators, "Argument", _DeferredArgument)  # noqa: B010
setattr(click, "Path", _DeferredPath)  # noqa: B010


def _json_option(f: F) -> F:
    def remember(ctx: click.Context, _: click.Parameter, value: bool) -> bool:
        ctx.meta["passprice.json"] = value
        return value

    return click.option(
        "--json", "as_json", is_flag=True, callback=remember, is_eager=True, help="Print JSON for programs."
    )(f)


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


def _finite(data: Any) -> None:
    """:func:`passprice.report.require_finite`: a result holding a number that is not finite is bad input (exit 2)."""
    from passprice.report import require_finite

    require_finite(data)


def _echo_json(data: Any) -> None:
    """Every command's ``--json`` document printed: its byte and token counts as integers when whole
    (:func:`passprice.tables.json_text` writes them so, left53: ``kv``, ``simulate`` and ``roofline`` printed
    20447232.0)."""
    from passprice.tables import json_text

    _finite(data)
    _printed_json()
    click.echo(json_text(data))


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


def _check_output(path: Path | None, force: bool) -> None:
    """Refuse an output file before any work is done (a sweep or a simulation can take seconds, and used to fail
    only when it came to write), for every reason the writer would (:func:`passprice.files.check_writable`: a
    folder, a device or FIFO, a read-only file, an existing file without ``--force``, a folder that does not exist).
    Raises :class:`InputError`."""
    if path is not None:
        from passprice.files import check_writable

        check_writable(path, force)


def _relative(root: Any, path: Path) -> str:
    """``path`` relative to the root when it lies below it (``locks/NAME.lock.toml``; the embedded registry's said
    so: :func:`passprice.registry.in_root`), else as given."""
    from passprice.registry import in_root

    return str(in_root(root, path))


def _plot_option(what: str) -> Callable[[F], F]:
    """``--plot FILE.png|svg``: draw ``what`` (matplotlib, the plot extra)."""
    return click.option(
        "--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE.png|svg",
        help=f"Draw {what} (needs matplotlib: pip install '.[plot]' in a checkout); --force overwrites.",
    )


def _check_plot(path: Path | None, force: bool, root: Any, output: Path | None = None) -> None:
    """Refuse a bad ``--plot`` file (its suffix, an existing file without --force, the file ``-o`` names too:
    :func:`passprice.files.require_apart`, a link to a record of ``root``:
    :func:`passprice.registry.require_not_record`) and a missing matplotlib before any work is done. Raises
    :class:`InputError`."""
    if path is None:
        return
    from passprice.files import require_apart

    require_apart(("--plot", path), ("-o", output))
    from passprice.files import name_suffix
    from passprice.plots import picture_format
    from passprice.registry import require_not_record
    from passprice.roofline import check_matplotlib

    if name_suffix(path) not in (".png", ".svg"):  # the name typed; a link's target's suffix below
        picture_format(path)
    _check_output(path, force)
    require_not_record(root, path, "--plot")
    picture_format(path)  # a link named .png onto an .svg: after the refusals that say more (a record, an input)
    check_matplotlib()  # imported when the picture is drawn (about 0.5 s), not by a run refused before it


def _check_inputs(inputs: list[tuple[str, str | Path | None]], outputs: list[tuple[str, Path | None]]) -> None:
    """Refuse an output (``-o``, ``--plot``) landing on a file the command reads (each input an ``(option,
    value)``; a value that names no file, such as a registry name, is none: :func:`passprice.files.require_not_input`).
    Raises :class:`InputError` before anything is written. Without an output nothing is looked up: ``sweep --cards``
    of 100,000 names (600 KB) spent 1.5 s of CPU looking up each name in the working folder, with no ``-o`` to
    compare them with (tests/test_attack187.py)."""
    from passprice.files import look, require_not_input

    if all(output is None or str(output) == "-" for _, output in outputs):
        return
    for label, value in inputs:
        try:
            if value is None or look(Path(value)) is None:
                continue
        except InputError:  # no file name (too long, a loop of links): the input's own lookup says so
            continue
        for output in outputs:
            require_not_input((label, Path(value)), output)


def _read_through(root: Any, servings: Sequence[tuple[str, str]], cards: Sequence[tuple[str, str]] = (),
                  stack: str | None = None, specs: Sequence[Any] = ()) -> list[tuple[str, str | Path | None]]:
    """The files a command reads through the names it was given, for :func:`_check_inputs`: each serving's file
    (``(label, ref)``) and the files it names (:func:`passprice.servings.named_files`; its card left out where
    ``cards`` replace it), each of ``specs``' named files, each card's file, the stack's. A sweep file's servings and
    cards, a serving file's card and checkpoint, ``--stack FILE.toml``: ``-o`` over any of them replaced the input,
    exit 0, since only the command line's own names were looked at (attack round 26). A name that names nothing is
    left out (the command's own lookup says so). Raises nothing."""
    from passprice.cards import card_path
    from passprice.servings import load_spec, named_files, serving_path
    from passprice.stacks import stack_path

    out: list[tuple[str, str | Path | None]] = []
    for label, ref in servings:
        try:
            out.append((label, serving_path(root, ref)))
            specs = [*specs, load_spec(root, ref)]
        except InputError:
            continue
    for spec in specs:
        out.extend(named_files(root, spec, card=not cards))
    for label, ref in cards:
        with contextlib.suppress(InputError):
            out.append((label, card_path(root, ref)))
    if stack is not None:
        with contextlib.suppress(InputError):
            out.append(("--stack", stack_path(root, stack)))
    return out


def _routed_records(ctx: click.Context, payload: dict[str, Any], header: Any = None) -> None:
    """A ``Routed`` refusal's ``records``: the registry's routing records that could price its experts
    (:func:`passprice.routing.records_for`), added to its JSON payload (and its line says them); given the refused
    checkpoint's ``header``, only those whose ``checkpoints`` scope holds it, the others as
    ``records_out_of_scope`` (session 24: a 128-expert model was offered the record of another, which refuses it
    OutOfScope). Nothing for another refusal, or when no registry reads."""
    if payload.get("refusal") not in ("Routed", "BadRouting") or not isinstance(payload.get("expert_count"), int):
        return
    root = _root_or_none(ctx)
    if root is None:
        return
    from passprice.routing import records_for, records_out_of_scope

    # A BadRouting refusal (walk44) names the records that fit the checkpoint's expert count, less the one refused.
    refused = payload.get("routing") if payload["refusal"] == "BadRouting" else None

    def other(records: list[str]) -> list[str]:
        return [r for r in records if r.split(" ", 1)[0] != refused]

    records = other(records_for(root, payload["expert_count"], header))
    if records:
        payload["records"] = records
    outside = other(records_out_of_scope(root, payload["expert_count"], header)) if header is not None else []
    if outside:
        payload["records_out_of_scope"] = outside


#: How many routing records a ``Routed`` refusal's line names one by one in each of its two lists; the rest are
#: ``and K more (--json lists every one)`` (attack round 54: 300 records made a 9,844-character line).
MAX_RECORDS_SAID = 5


def _records_said(payload: dict[str, Any], header: Any = None) -> str:
    """What a ``Routed`` refusal's line adds of its payload's ``records`` and ``records_out_of_scope``
    (:func:`_routed_records`), the router as the refused checkpoint's ``header`` gives it
    (:func:`passprice.routing.router_said`): ``; registered here for 128 experts, 8 a token: uniform (…); not for
    this checkpoint (its scope): qwen3-30b-a3b-measured (…)``, each list cut to :data:`MAX_RECORDS_SAID` and ``and K
    more (--json lists every one)``; ``""`` when it has neither."""

    def listed(records: list[str]) -> str:
        rest = len(records) - MAX_RECORDS_SAID
        more = [f"and {rest:,} more (--json lists every one)"] if rest > 0 else []
        return ", ".join([*records[:MAX_RECORDS_SAID], *more])

    from passprice.routing import router_said

    said = ""
    if payload.get("records"):
        said += f"; registered here for {router_said(payload['expert_count'], header)}: " + listed(payload["records"])
    if payload.get("records_out_of_scope"):
        said += "; not for this checkpoint (its scope): " + listed(payload["records_out_of_scope"])
    return said


def _root_or_none(ctx: click.Context) -> Any:
    """The root the command reads, or ``None`` when it cannot be found (the error being printed may say why)."""
    try:
        return _root(ctx)
    except InputError:
        return None


def _as_given(ctx: click.Context, lines: list[str], root: Any, before: list[str] | None = None) -> list[str]:
    """``lines`` with each path below ``root`` as the user gave it (:func:`passprice.registry.as_given`), less the
    lines ``found_elsewhere`` rewrote (``before`` the lines as raised: those name another folder on purpose)."""
    from passprice.registry import as_given

    named = ctx.find_root().obj.get("root") if ctx.find_root().obj else None
    given = as_given(lines, root, named)
    if before is None:
        return given
    return [new if old == line else line for line, new, old in zip(lines, given, before, strict=True)]


def _root(ctx: click.Context) -> Any:
    from passprice.registry import find_root

    return find_root(ctx.obj.get("root") if ctx.obj else None)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="passprice")
@click.option(
    "--root",
    type=_FolderPath(as_given=True),
    help="Folder holding facts/ and registry/ (default: the checkout around the working folder, else the embedded "
    "facts).",
)
@click.option(
    "--no-cache", is_flag=True,
    help="Parse and validate every file, bypassing the cache of validated files (also PASSPRICE_NO_CACHE=1).",
)
@click.pass_context
def cli(ctx: click.Context, root: str | None, no_cache: bool) -> None:
    """Price one decode pass of an LLM on one accelerator card, from its GGUF header and the card's cited facts."""
    from passprice import cache, cachefolder, snapshot
    from passprice.settings import require_settings

    cache.configure(enabled=not no_cache)
    # For this command, not the rest of the process: a caller that runs the group in process (CliRunner, a script)
    # then calls the library gets the cache back (left44: a `--no-cache` run left every later header without an
    # identity, so nothing computed from it was kept).
    ctx.call_on_close(lambda: cache.configure(enabled=True))
    # A bound set badly in the environment is no file's problem: refused before the command prints a line (left26b).
    require_settings()
    if not no_cache and not cachefolder.bypassed():
        # A cache folder inside a registry (PASSPRICE_CACHE_DIR=REG/facts) wrote the cache among its files (27b).
        # Printed as it is: the group's error lines name paths below the root as given, and the variable's value
        # is what the user set (PASSPRICE_CACHE_DIR=/reg/ read "PASSPRICE_CACHE_DIR=: the cache folder  lies …").
        refused = cachefolder.refusal()
        if refused is not None:
            _say_failed(ctx, [refused])
            ctx.exit(2)
    ctx.ensure_object(dict)
    ctx.obj["root"] = root
    if ctx.invoked_subcommand in _READING:  # one read of the registry: each file once, until the command ends
        ctx.with_resource(snapshot.reading())


#: The line under ``passprice checkpoints``: which digest the table shows, and which one a lock pins
#: (:func:`passprice.pins.checkpoint_digest`).
CHECKPOINT_DIGESTS = (
    "sha256: of the header file as imported; a lock pins its content digest instead (of the metadata and tensor "
    "table priced: the same for any copy or name of the header)"
)

#: The line under ``passprice checkpoints`` saying what its origin column means (walkthrough 39: it had none).
CHECKPOINT_ORIGINS = (
    "origin: synthetic = a header built by passprice synth from a published configuration, no weights exist; file = "
    "read from a GGUF file's header (--json gives each entry's origin text)"
)

#: The commands that read the registry as one snapshot (:mod:`passprice.snapshot`): those that write none of its files.
_READING = frozenset({
    "audit", "best", "cards", "check", "checkpoints", "diff", "facts", "max-batch", "price", "reproduce", "roofline",
    "servings", "simulate", "sources", "speculate", "sweep", "validate",
})


# --- facts ------------------------------------------------------------------------------------------------------------


@cli.command("cards")
@_json_option
@click.pass_context
def cards_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered cards."""
    from passprice.cards import load_card
    from passprice.report import cards_json_chunks, cards_table

    root = _root(ctx)
    cards = [c for _, c in _load_all(root.names(root.cards), lambda name: load_card(root, name), root.cards, root)]
    if as_json:  # written card by card: 10,000 cards' one string and tables took 1.7 GB (attack round 55)
        for chunk in cards_json_chunks(cards, _kept_problems):
            _printed_json()
            click.echo(chunk, nl=False)
        click.echo()
    else:
        click.echo(cards_table(cards))


@cli.command("facts")
@click.argument("card")
@_json_option
@click.pass_context
def facts_command(ctx: click.Context, card: str, as_json: bool) -> None:
    """Show every fact of CARD: value, unit, provenance, citation, note."""
    from passprice.cards import load_card
    from passprice.report import fact_json, facts_text

    c = load_card(_root(ctx), card)
    if as_json:
        _echo_json({"name": c.name, "title": c.title, "facts": {p: fact_json(f) for p, f in c.facts().items()}})
    else:
        click.echo(facts_text(f"{c.name}: {c.title}", c.facts()))


def _problems(lines: Any) -> None:
    """Keep ``lines`` (problems of files that do not read) for the end of the command: the command still shows what
    does read, then the group prints each line on stderr (``passprice: error: …``) and exits 2."""
    click.get_current_context().meta.setdefault("passprice.problems", []).extend(lines)


def _kept_problems() -> list[str]:
    """The lines :func:`_problems` kept so far, each once, in order: a listing's ``--json`` holds them as
    ``"problems"`` (as ``check --json`` holds the files that do not read), so a program reading stdout knows the list
    leaves those files out (leftovers 28d: only stderr named them). Each line as the group prints it on stderr,
    without ``passprice: error:`` and unescaped (JSON escapes it), its paths as the group writes them
    (:func:`_as_given`: a folder of the built-in registry that may not be searched was the package's absolute path in
    ``servings --json`` where stderr said ``the built-in registry's facts/cards``, left40). Raises nothing."""
    ctx = click.get_current_context()
    kept = list(dict.fromkeys(ctx.meta.get("passprice.problems", [])))
    return _as_given(ctx, kept, _root_or_none(ctx)) if kept else kept


def _load_all(names: list[str], load: Callable[[str], T], folder: Path | None = None,
              root: Any = None) -> list[tuple[str, T]]:
    """Each of ``names`` loaded: those that load, in order; the problems of every file that does not (not only the
    first), one line each, are kept for the end of the command (:func:`_problems`), so a listing still shows every
    good file and then reports the bad ones on stderr with exit status 2. Names of ``folder``'s files that differ
    only by case or Unicode normalization, or that name a Windows device, are such a problem too, as ``check`` says
    (:func:`passprice.check.name_problems`: ``cards`` listed ``é40`` twice, exit 0; ``nul.toml`` without a word).
    Given the ``root`` the files lie in, those name lines and the lines of files that do not read name the file
    relative to it, as ``check`` does (:func:`passprice.check.relative_lines`)."""
    loaded: list[tuple[str, T]] = []
    problems: list[str] = []
    if folder is not None:
        from passprice.check import name_problems

        found = name_problems(folder)
        if root is not None:
            from passprice.check import relative_lines

            found = relative_lines(root, found)
        problems.extend(found)
    for name in names:
        try:
            loaded.append((name, load(name)))
        except InputError as e:
            lines = problem_lines(e)
            if root is not None:  # a file that does not read, named as check names it (issue 13)
                from passprice.check import relative_lines

                lines = relative_lines(root, lines)
            problems.extend(lines)
    _problems(problems)
    return loaded


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@cli.command("servings")
@_json_option
@click.pass_context
def servings_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered servings: checkpoint, card, batch, drafts, and what each is for."""
    from passprice.servings import load_spec

    root = _root(ctx)
    specs = _load_all(root.names(root.servings), lambda name: load_spec(root, name), root.servings, root)
    if as_json:
        from passprice.servings import spec_to_document

        _echo_json({"servings": {name: spec_to_document(spec) for name, spec in specs}, "problems": _kept_problems()})
        return
    from passprice.tables import text_table

    rows = [
        [
            name,
            spec.checkpoint,
            spec.card,
            str(spec.batch),
            f"{spec.draft.tokens} ({spec.draft.method})" if spec.draft else "",
            _clip(spec.description or "", 70),
        ]
        for name, spec in specs
    ]
    click.echo(text_table(["serving", "checkpoint", "card", "batch", "drafts", "description"], rows))


@cli.command("checkpoints")
@_json_option
@click.pass_context
def checkpoints_command(ctx: click.Context, as_json: bool) -> None:
    """List the registered checkpoints: architecture, tensors, bytes, header sha256 (of the file; a lock pins a
    content digest instead, of what is priced)."""
    from passprice.checkpoints import entry_row

    root = _root(ctx)
    loaded = _load_all(root.names(root.checkpoints), lambda name: entry_row(root, name), root.checkpoints, root)
    out = [row for _, row in loaded]
    if as_json:
        _echo_json({"checkpoints": out, "problems": _kept_problems()})
        return
    from passprice.tables import cut, printable, si, text_table

    rows = [
        [c["name"], cut(str(c["architecture"])), f"{c['tensors']:,}", si(c["tensor_bytes"], "B"),
         f"{c['context_length']:,}" if c["context_length"] else "", "synthetic" if c["synthetic"] else "file",
         c["sha256"][:16] + "…"]
        for c in out
    ]
    headers = ["checkpoint", "architecture", "tensors", "bytes", "context", "origin", "sha256"]
    click.echo(text_table(headers, rows, right=(2, 3, 4)))
    click.echo(f"\n  {CHECKPOINT_DIGESTS}")
    click.echo(f"  {CHECKPOINT_ORIGINS}")
    from passprice.unkept import unkept

    never = [c["name"] for c in out if c["synthetic"] and unkept(c["sha256"]) is not None]
    if never:  # issue 13 (session 33): their entries' source names a header file nobody wrote
        click.echo(f"  header file not kept: {', '.join(never)}: synthetic, built by passprice synth and imported "
                   "without -o, so no header file was written (the entry's source names none); `passprice header "
                   "NAME` gives the synth command that writes it again")
    from passprice.checkpoints import draft_note

    for c in out:  # a checkpoint's bytes a serving without drafts does not hold
        note = draft_note(c)
        if note is not None:
            click.echo(f"  {note}")
    for c in out:  # bytes not counted: of a type the gguf package does not know
        if c.get("unknown_type_tensors"):
            n = c["unknown_type_tensors"]
            click.echo(f"  {printable(c['name'])}: {n:,} tensor{'s' if n != 1 else ''} of a GGML type the gguf package "
                       "does not know, their bytes not counted: every price of it is refused (UnknownType)")


@cli.command("explain", context_settings={"ignore_unknown_options": True})
@click.argument("term", required=False)
@_json_option
def explain_command(term: str | None, as_json: bool) -> None:
    """Define TERM, a word passprice prints (array, vector, scale, flush, head rows, streams.*, TPOT …); without
    TERM, list every term. The README's glossary is the same text."""
    from passprice import glossary

    if term is None:
        if as_json:
            _echo_json({"terms": {t.name: {"short": t.short, "definition": t.long, "aliases": list(t.aliases)}
                                  for t in glossary.TERMS.values()}})
        else:
            click.echo(glossary.listing())
        return
    found = glossary.lookup(term)
    if as_json:
        _echo_json({"term": found.name, "short": found.short, "definition": found.long, "aliases": list(found.aliases)})
    else:
        click.echo(glossary.text(found, term))


@cli.command("init")
@click.argument("directory", default=".", type=_FolderPath())
@click.option(
    "--requirement", metavar="SPEC",
    help="The line of requirements.txt CI installs passprice by, e.g. 'passprice @ git+https://…@COMMIT' (default: "
    "how this passprice was installed, when its direct URL is recorded; else a placeholder to fill in).",
)
@click.option("--examples", is_flag=True, help="Copy the registered checkpoints, servings and locks too (a registry "
              "to try things in; without it registry/ and locks/ start empty).")
@_json_option
@click.pass_context
def init_command(
    ctx: click.Context, directory: Path, requirement: str | None, examples: bool, as_json: bool
) -> None:
    """Start a registry of your own in DIRECTORY (default: here): every record folder, the reference facts copied,
    the schemas, an editor configuration (.taplo.toml), a pre-commit hook and a CI workflow. Every command run in
    it then reads and writes its files."""
    from passprice.scaffold import COMMIT_FIRST, attributes_advice, nested_caution, plan, repository_top, write

    _require_unicode(str(directory), "DIRECTORY")
    if requirement is not None:
        requirement = _require_unicode(requirement, "--requirement")
    from passprice.registry import require_no_registry_in_records

    root = _root(ctx)
    require_no_registry_in_records(root, directory)
    the_plan = plan(root, requirement, examples, repository=repository_top(directory))
    kept = write(the_plan, directory)
    caution = nested_caution(directory)
    if caution is not None:
        click.echo(f"passprice: warning: {caution}", err=True)
    attributes = attributes_advice(directory, kept)  # the user's .gitattributes, left alone, lacking init's lines
    if attributes is not None:
        click.echo(f"passprice: warning: {attributes}", err=True)
    from passprice.scaffold import uncommitted_copies, uncommitted_line

    edited = uncommitted_line(the_plan, uncommitted_copies(the_plan))  # a checkout's working tree, as edited
    if edited is not None:
        click.echo(f"passprice: warning: {edited}", err=True)
    if as_json:
        _echo_json({"path": str(directory), "folders": list(the_plan.folders), "copied": list(the_plan.copied),
                    "files": [f for f in sorted(the_plan.files) if f not in kept],
                    "requirement": the_plan.requirement.line,
                    "requirement_origin": the_plan.requirement.origin, "advice": the_plan.requirement.advice(),
                    "caution": caution, "kept": list(kept), "attributes": attributes, "then": COMMIT_FIRST})
        return
    click.echo(f"a passprice registry in {directory}:")
    for folder in the_plan.folders:
        click.echo(f"  {folder + '/':<24}{the_plan.filled(folder)}")
    tooling = ("schema/", ".taplo.toml", ".pre-commit-config.yaml", ".github/workflows/facts.yml", ".gitattributes",
               "requirements.txt", "README.md")
    click.echo("  " + ", ".join(t for t in tooling if t not in kept))
    if kept:
        click.echo(f"  left alone (already here; init replaces nothing, so its own are not written): {', '.join(kept)}")
    click.echo(f"  requirements.txt: {the_plan.requirement.line}")
    advice = the_plan.requirement.advice()
    if advice is not None:
        click.echo(f"first: {advice}")
    from passprice.files import shell_word

    into = "" if directory.resolve() == Path.cwd().resolve() else f"cd {shell_word(directory)} && "
    # no repository in a repository; at a repository's top (a fork's own) no `git init` either (walkthrough 33)
    start = "" if caution is not None else "pre-commit install; " if repository_top(directory) else (
        "git init && pre-commit install; ")
    click.echo(f"next: {into}{start}passprice import MODEL.gguf --name NAME")
    # the README's "Commit the registry init wrote to the default branch" said nowhere in init's output (issue 13)
    click.echo(f"then: {COMMIT_FIRST}")


# --- checkpoints --------------------------------------------------------------------------------------------------


@cli.command("sources")
@_json_option
@click.pass_context
def sources_command(ctx: click.Context, as_json: bool) -> None:
    """List the sources facts cite: how many facts cite each, how many locks rest on them, the provenances each
    supports."""
    from passprice.check import relative_lines
    from passprice.lineage import source_uses, sources_text

    root = _root(ctx)
    uses, problems = source_uses(root)
    _problems(relative_lines(root, problems))  # a file named as check names it, as the other listings do
    if as_json:
        _echo_json({"sources": [u.to_json() for u in uses], "problems": _kept_problems()})
    else:
        click.echo(sources_text(uses))


@cli.command("header")
@click.argument("file")
@click.option("--metadata", "show_metadata", is_flag=True, help="List every metadata key.")
@click.option("--tensors", "show_tensors", is_flag=True, help="List every tensor.")
@_json_option
@click.pass_context
def header_command(ctx: click.Context, file: str, show_metadata: bool, show_tensors: bool, as_json: bool) -> None:
    """Read the GGUF header of FILE (.gguf, .gguf.xz, .gguf.gz, or a registry entry name)."""
    from passprice.checkpoints import load_checkpoint
    from passprice.report import header_json, header_text

    root = _root(ctx)
    header = load_checkpoint(root, file, array_digests=False)  # none of its views shows a long array's digest
    if as_json:
        _echo_json(header_json(header))
    else:
        click.echo(_with_unkept(header_text(header, show_metadata, show_tensors), header, root, file))
    from passprice.decode import header_problems

    # Shown whole (a reader of any header), with what no price reads it by, as `check` and `checkpoints` refuse it
    # (an entry without embedding_length was shown here without a word: issue 13's leftovers, session 26).
    problems = header_problems(header)
    if not problems:  # the usual case: passprice.check (cards, facts, drafts, routing) is not imported for nothing
        return
    from passprice.check import relative_lines

    for line in relative_lines(root, problems):
        click.echo(f"passprice: warning: {escaped(line)} (check, checkpoints and every price refuse it)", err=True)


def _with_unkept(text: str, header: Any, root: Any, ref: str) -> str:
    """``header``'s text (the checkpoint ``ref`` of ``root``) with, under its ``sha256`` line, a ``header file`` line
    when it is a shipped synthetic header no file holds (:mod:`passprice.unkept`: its entry's source names a file
    never written, issue 13), as ``checkpoints`` and ``audit`` say it: of an entry whose origin says synthetic only
    (attack 60: an entry of those bytes whose origin says "Downloaded from …" was told "this shipped synthetic header
    was built by passprice synth" by ``header`` alone)."""
    from passprice.checkpoints import checkpoint_origin
    from passprice.unkept import unkept

    never = unkept(header.sha256) if str(header.source).endswith(".toml") else None
    if never is not None and not (checkpoint_origin(root, ref) or "").startswith("Synthetic"):
        never = None
    if never is None:
        return text
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("  sha256 ")), None)
    if at is None:
        return text
    lines.insert(at + 1, f"  header file   {never.sentence(escaped(header.shards[0].file))}")
    return "\n".join(lines)


@cli.command("import")
@click.argument("file", type=_FilePath())
@click.option("--name", help="Entry name (default: the file name without .gguf and compression suffixes).")
@click.option("--origin", default="", help="Where the checkpoint came from (recorded in the entry).")
@click.option("--force", is_flag=True, help="Overwrite an existing entry.")
@_json_option
@click.pass_context
def import_command(ctx: click.Context, file: Path, name: str | None, origin: str, force: bool, as_json: bool) -> None:
    """Import the GGUF header of FILE into registry/checkpoints/NAME.toml."""
    from passprice.checkpoints import (
        architecture_note,
        default_origin,
        entry_name,
        import_header,
        unknown_types_note,
        write_entry,
    )
    from passprice.gguf_header import read_header
    from passprice.tables import printable

    root = _root(ctx)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    # The entry records the file's name (its `source`): a name in bytes that are not UTF-8 cannot be written to
    # TOML; say so of FILE before reading it, not of the entry when it comes to be written.
    _require_unicode(file.name, "FILE's name (the entry records it; rename the file)")
    origin = _require_unicode(origin, "--origin")
    from passprice.registry import require_record_name

    if name is not None:  # before the header is read; the entry's own check let "x\n" through to its read-back
        require_record_name("checkpoint", name)
    else:  # `import .gz` said "checkpoint name '': use letters …", of a name nobody gave (attack round 28)
        try:
            require_record_name("checkpoint", entry_name(file))
        except InputError:
            raise InputError(
                f"{shown_path(file)}: imported under its file's name less its suffixes, {entry_name(file)!r}, which "
                "is no checkpoint name: give --name NAME (letters, digits, '.', '_' and '-', first a letter or digit)"
            ) from None
    try:
        header = read_header(file)
    except InputError as e:
        from passprice.synthetic import looks_like_config

        if len(e.lines) == 1 and ": byte 0: bad magic" in e.lines[0] and looks_like_config(file):
            from passprice.enforce import command_span

            synth = command_span(["passprice", "synth", str(file), "--import", name or "NAME"])
            raise InputError(f"{e.lines[0]}; this file is JSON: a model configuration (config.json) is built into a "
                             f"header-only checkpoint by {synth}") from None
        raise
    entry = name if name is not None else entry_name(file)
    target = root.checkpoints / f"{entry}.toml"
    from passprice.registry import require_not_other_record

    require_not_other_record(root, target)
    # By default the origin names the file (its path in the registry when it lies there, else its name) and the
    # header sha256 that identifies it, escaped to one line (a newline in a file's name is kept in `source`).
    origin = origin or default_origin(file, root.path, header.sha256)
    write_entry(target, import_header(header, entry, origin), force=force)
    _warn_same_content(root, header, entry)
    unknown = unknown_types_note(header, entry)
    if unknown:  # written (it reads back equal), but no price of it can be: said now, not first at `price`
        click.echo(f"passprice: warning: {printable(unknown)}", err=True)
    unpriced = architecture_note(header, entry)
    if unpriced:  # recorded as read (an architecture passprice does not price): every price of it refuses
        click.echo(f"passprice: warning: {printable(unpriced)}", err=True)
    if as_json:
        _echo_json({"entry": entry, "path": str(target), "sha256": header.sha256, "tensors": len(header.tensors),
                    "source": header.shards[0].file, "origin": origin})
    else:
        from passprice.registry import named_in

        # the entry as check and lock name a registry file: relative to it (leftovers 29b: /abs/root/registry/…)
        click.echo(f"imported {shown_path(file)} as {entry}: {named_in(root, target)} ({len(header.tensors)} tensors, "
                   f"sha256 {header.sha256})")


def _warn_same_content(root: Any, header: Any, entry: str) -> None:
    """The warning ``import`` and ``synth --import`` give when another entry of the registry holds the content just
    written under ``entry`` (walkthrough 39: the same header under a second name said nothing)."""
    from passprice.checkpoints import entries_holding

    others = entries_holding(root, header, skip=entry)
    if others:
        from passprice.registry import named_in

        said = ", ".join(named_in(root, root.checkpoints / f"{name}.toml") for name in others)
        click.echo(f"passprice: warning: {entry} holds the same header content as {said}: one checkpoint under "
                   f"{len(others) + 1} names (passprice check lists it; remove one unless both names are wanted)",
                   err=True)


@cli.command("synth")
@click.argument("config", type=_FilePath())
@click.option("--mix", default="Q4_K_M", show_default=True,
              help="Type mix, by llama.cpp's rules: Q4_K_M, Q4_0, Q8_0, F16, BF16, MXFP4 (MXFP4_MOE), NVFP4.")
@click.option("-o", "--output", type=_OutputPath(stdout=False), help="Header-only .gguf to write.")
@click.option("--import", "entry", metavar="NAME", help="Import it as registry/checkpoints/NAME.toml.")
@click.option("--mla", type=click.Choice(["split", "joined"]), default="split", show_default=True,
              help="DeepSeek's latent attention as llama.cpp stores it since April 2025 (split) or before (joined).")
@click.option("--no-mtp", is_flag=True, help="Leave out the multi-token-prediction blocks the config declares.")
@click.option("--note", default="", help="Appended to the entry's origin note.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file or entry.")
@_json_option
@click.pass_context
def synth_command(
    ctx: click.Context, config: Path, mix: str, output: Path | None, entry: str | None, mla: str, no_mtp: bool,
    note: str, force: bool, as_json: bool,
) -> None:
    """Build a header-only GGUF checkpoint from a published model configuration (CONFIG: a config.json)."""
    from passprice.synthetic import (
        Latent,
        build,
        compression,
        entry_text,
        read_config,
        requantized_experts,
        type_counts,
        write_header,
    )
    from passprice.typemix import Mix

    if output is None and entry is None:
        raise click.UsageError("give -o FILE.gguf, --import NAME, or both")
    note = _require_unicode(note, "--note")
    if entry is not None:  # the entry's own check let "x\n" through to its read-back (round 25)
        from passprice.registry import require_record_name

        require_record_name("checkpoint", entry)
    _check_output(output, force)
    _check_inputs([("CONFIG", config)], [("-o", output)])
    root = _root(ctx)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
        compression(output)  # a suffix naming another format: refused before the configuration is read
    published = read_config(config, root.schema)
    built = build(published, Mix.parse(mix), entry or (output.name if output else None), Latent(mla), not no_mtp)
    target = None
    if entry is not None:
        from passprice.checkpoints import write_entry

        if root.embedded:
            from passprice.registry import outside_registry

            raise outside_registry(root, "--import writes into registry/checkpoints/, and they are read-only")
        text, entry_header = entry_text(built, entry, note, output.name if output is not None else None,
                                        unwritten=output is None)
        target = root.checkpoints / f"{entry}.toml"
        from passprice.registry import require_not_other_record

        require_not_other_record(root, target)
        write_entry(target, text, force=force)
        _warn_same_content(root, entry_header, entry)
        from passprice.checkpoints import architecture_note
        from passprice.tables import printable

        unpriced = architecture_note(entry_header, entry)
        if unpriced:  # a configuration without a key its architecture needs (gpt-oss with no sliding_window)
            click.echo(f"passprice: warning: {printable(unpriced)}", err=True)
    if output is not None:
        write_header(built, output, force)
    counts = type_counts(built)
    summary: dict[str, Any] = {
        "config": str(config),
        "source": published.source,
        "architecture": published.config.arch,
        "mix": built.mix.value,
        "tensors": len(built.tensors),
        "tensor_bytes": built.tensor_bytes(),
        "types": counts,
        "output": str(output) if output is not None else None,
        "entry": str(target) if target is not None else None,
        "warning": requantized_experts(built),
    }
    if summary["warning"] is not None and not as_json:
        click.echo(f"passprice: warning: {summary['warning']}", err=True)
    if as_json:
        _echo_json(summary)
        return
    types = ", ".join(f"{n} {ty}" for ty, n in counts.items())
    click.echo(f"{config}: {published.config.arch}, {built.mix.value}: {len(built.tensors):,} tensors, "
               f"{built.tensor_bytes():,} bytes of weights ({types})")
    if output is not None:
        click.echo(f"  header -> {output}")
    if target is None:
        # walkthrough 39: `synth -o` then `passprice import FILE` gave an entry whose origin named "a file outside
        # this registry" and never said synthetic, so its prices, locks and audits read as a real checkpoint's
        from passprice.enforce import command_span

        shown = str(config) if not str(config).startswith("-") else f"./{config}"  # `-x.json`: an option (round 58)
        words = ["passprice", "synth", shown, "--mix", built.mix.value]
        words += (["--mla", mla] if mla != "split" else []) + (["--no-mtp"] if no_mtp else [])
        again = command_span([*words, "--import", "NAME"])
        click.echo(f"  not imported: {again} imports it with an origin that says it is synthetic; `passprice "
                   "import` of the file cannot tell it from a real checkpoint's header (its entry would say so only "
                   "with --origin)")
    if target is not None:  # a registry file, named as check names it (leftovers 29b)
        from passprice.registry import named_in

        click.echo(f"  entry -> {named_in(root, target)}")


# --- pricing ---------------------------------------------------------------------------------------------------------


class _UnshownArgument(_DeferredArgument):
    """A positional argument read but not shown in the usage line: ``audit``'s second word, which it refuses by name
    ("audit takes one TARGET …"). Walkthrough 106: ``audit --help`` showed ``[TARGET] [SERVING]`` while ``audit A B``
    refused the second. Built when first used, as every parameter here (:class:`_Deferred`)."""

    def get_usage_pieces(self, ctx: click.Context) -> list[str]:
        """None: the usage line names the command's own TARGET alone."""
        del ctx
        return []


def _whole_limit(limit: int | None, positioned: bool, instead: str) -> None:
    """Refuse ``--limit 1`` where no position is given (``positioned``): its default mean position, limit / 2, is
    0.5, and positions are whole tokens (a sequence allowed 1 position holds row 0 alone; it priced position 0.5).
    ``instead``: the command's own option that prices row 0 (``--position 0``, ``--positions 0``). Raises
    :class:`click.BadParameter` (exit 2), naming ``--limit``."""
    from passprice.servings import no_whole_mean

    lone = no_whole_mean(limit, "--limit 2 or more", instead) if limit is not None and not positioned else None
    if lone is not None:
        raise click.BadParameter(lone, param_hint="--limit")


def _serving_options(with_batch: bool, serving_shown: bool = True) -> Callable[[F], F]:
    """The options every pricing command takes (DESIGN.md, Command line); ``serving_shown=False``: the SERVING
    argument is read (for the command to refuse by name) but not shown in the usage line."""

    def decorate(f: F) -> F:
        options = [
            click.argument("serving", required=False, **({} if serving_shown else {"cls": _UnshownArgument})),
            click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path."),
            click.option("--card", help="Card: registry name or a card .toml path."),
            click.option("--position", type=_float("--position"), help="Mean position reached (positions)."),
            click.option("--limit", type=_int("--limit"), help="Context each sequence is allowed (positions)."),
            click.option("--kv-page", type=_int("--kv-page"), help="Page the KV cache, N positions a page."),
            click.option("--contiguous", is_flag=True, help="Contiguous KV cache (undo a serving's --kv-page)."),
            click.option(
                "--kv-bytes", type=_float("--kv-bytes"), help="Bytes per KV element."
            ),
            click.option(
                "--state-bytes", type=_float("--state-bytes"),
                help="Bytes per recurrent-state element.",
            ),
            click.option(
                "--activation-words", type=_int("--activation-words"), help="Words an activation crosses the array in."
            ),
            click.option("--scaling", type=click.Choice(["per-block", "sub32"]), help="Activation scaling."),
            click.option("--attention", type=click.Choice(["vector", "array"]), help="Where attention's products run."),
            click.option("--kv-rotated/--no-kv-rotated", default=None, help="Walsh–Hadamard-rotated KV cache."),
            click.option("--draft", "draft_method", help="Drafting method (facts/drafts name)."),
            click.option("--draft-tokens", type=_int("--draft-tokens"), help="Drafted tokens per pass (0: no drafts)."),
            click.option(
                "--head-rows", type=_int("--head-rows"), help="Vocabulary rows the drafting head reads."
            ),
            click.option("--flush", help="State flush: every-pass, every:N or trailing:N."),
            click.option("--host-memory/--no-host-memory", default=None, help="Let sequences live in host memory."),
            click.option(
                "--shared-prefix", type=_int("--shared-prefix"), metavar="N",
                help="Positions every sequence shares (a system prompt), held once with a paged cache (0: none).",
            ),
            click.option(
                "--prefix-read-once/--no-prefix-read-once", default=None,
                help="Read the shared prefix once a pass for the whole batch, as the weights are read.",
            ),
            click.option(
                "--routing", help="Routing record (facts/routing name) a mixture of experts is priced with.",
            ),
            click.option(
                "--max-tpot", type=_float("--max-tpot"), metavar="SECONDS",
                help="TPOT cap: the best batch is sought only among batches whose time per output token is at most "
                "this (seconds, e.g. 0.05).",
            ),
            click.option(
                "--memory-use", type=_float("--memory-use"), metavar="FRACTION",
                help="Memory headroom: the fraction of card memory the best and largest batch may fill (above 0, at "
                "most 1, e.g. 0.9; default 1, every byte).",
            ),
        ]
        if with_batch:
            options.insert(3, click.option("--batch", type=_int("--batch"), help="Sequences per pass (at least 1)."))
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def _spec(ctx: click.Context, serving: str | None, base: Any = None, **o: Any) -> Any:
    """The serving spec the command line describes: a registry serving (or file, or ``base``) with the options
    applied."""
    from passprice.serving import StateFlush
    from passprice.servings import DraftSpec, ServingSpec, load_spec, override

    root = _root(ctx)
    if o.get("checkpoint"):
        from passprice.registry import entry_named

        # `--checkpoint .//M` is the entry M, and every title and record names it so (attack round 29)
        o["checkpoint"] = entry_named(o["checkpoint"], root.checkpoints) or o["checkpoint"]
    if base is not None:
        spec = base
    elif serving is not None:
        spec = load_spec(root, serving)
    else:
        for key in ("checkpoint", "card"):
            if o.get(key) == "":  # round 17: `--checkpoint ''` was told to give both --checkpoint and --card
                raise click.BadParameter("an empty name: give a registry name or a file", param_hint=f"--{key}")
        if not o.get("checkpoint") or not o.get("card"):
            raise click.UsageError("give a SERVING, or both --checkpoint and --card")
        spec = ServingSpec(checkpoint=o["checkpoint"], card=o["card"])
    if o.get("flush") is not None:
        try:
            StateFlush.parse(o["flush"])
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--flush") from None
    draft = spec.draft
    tokens = o.get("draft_tokens")
    method = o.get("draft_method")
    if tokens == 0:
        draft = None
    elif method is not None or tokens is not None or o.get("head_rows") is not None:
        base_method = method or (draft.method if draft else None)
        base_tokens = tokens or (draft.tokens if draft else None)
        if base_method is None or base_tokens is None:
            raise click.UsageError("drafting needs both --draft METHOD and --draft-tokens K")
        head_rows = o.get("head_rows") or (draft.head_rows if draft else None)
        draft = DraftSpec(base_method, base_tokens, head_rows)
    if "position" in o:  # a command with --position (simulate's --limit is a request's, its own refusal says it)
        _whole_limit(o.get("limit"), o.get("position") is not None, "--position 0")
    spec = override(
        spec,
        position=o.get("position"),
        limit=o.get("limit"),
        checkpoint=o.get("checkpoint"),
        card=o.get("card"),
        batch=o.get("batch"),
        kv_page=o.get("kv_page"),
        kv_bytes=o.get("kv_bytes"),
        state_bytes=o.get("state_bytes"),
        activation_words=o.get("activation_words"),
        scaling=o.get("scaling"),
        attention=o.get("attention"),
        kv_rotated=o.get("kv_rotated"),
        flush=o.get("flush"),
        host_memory=o.get("host_memory"),
        shared_prefix=o.get("shared_prefix"),
        prefix_read_once=o.get("prefix_read_once"),
        routing=o.get("routing"),
        max_tpot=o.get("max_tpot"),
        memory_use=o.get("memory_use"),
    )
    if o.get("contiguous"):
        import attrs

        spec = attrs.evolve(spec, kv_page=None)
    if draft is not spec.draft:
        import attrs

        from passprice.servings import unsourced

        spec = attrs.evolve(spec, draft=draft, **unsourced(spec))  # as servings.override: the option's, not the file's
    return root, spec


def _warn_code(root: Any) -> None:
    """A warning line on stderr when ``root`` is a checkout of passprice whose code prices with another pricing
    model than the passprice running (:func:`passprice.pins.checkout_model`)."""
    from passprice.pins import checkout_model

    differs = None if root.embedded else checkout_model(root.path)
    if differs is not None and differs[0].startswith("not judged: "):
        click.echo(
            f"passprice: warning: this checkout's src/passprice was not judged ({differs[0].split(': ', 1)[1]}): "
            "whether it prices with the running passprice's pricing model is unknown; locks are written, checked "
            "and reproduced by the running code",
            err=True,
        )
    elif differs is not None and differs[0].startswith("not read: "):
        click.echo(
            f"passprice: warning: this checkout's src/passprice cannot be read ({differs[0].split(': ', 1)[1]}): it "
            "does not price as the running passprice; locks are written, checked and reproduced by the running code",
            err=True,
        )
    elif differs is not None:
        theirs, ours = differs
        click.echo(
            f"passprice: warning: this checkout's src/passprice prices with pricing model {theirs[:19]}…, the "
            f"passprice running with {ours[:19]}… (installed from another copy): locks are written, checked and "
            "reproduced by the running code; `pip install -e .` here to use the checkout's (the checkout's digest "
            "is taken by the running passprice's rules, which an older passprice did not share: it matches the "
            "pricing_model its own locks record only when both passprices digest alike)",
            err=True,
        )


def _reasons(refusals: list[Any]) -> str:
    """The refusals of several rows in one line: each refusal named once, as ``Name: its first message`` (and how
    many rows it refused with other figures), joined by ``; ``."""
    by_name: dict[str, list[str]] = {}
    for e in refusals:
        if e is not None:
            by_name.setdefault(e.name, []).append(str(e))
    said = []
    for name, messages in by_name.items():
        others = len(dict.fromkeys(messages)) - 1  # the same refusal with other figures (BeyondStack's needs …)
        more = f" (and {others} more draft length{'s' if others > 1 else ''} alike)" if others else ""
        said.append(f"{name}: {messages[0]}{more}")
    return "; ".join(said)


def _refuse(e: Any) -> NoReturn:
    from passprice.serving import BadRouting, Routed

    raise Refused(str(e), e.to_json(), e.header if isinstance(e, (Routed, BadRouting)) else None)


_STACK_HELP = "Also price the pass under serving stack S (facts/stacks): its expected price beside the card's limit."


def _resolve(root: Any, spec: Any, stack: str | None = None) -> Any:
    """:func:`passprice.servings.resolve` of ``spec``; when it fails on bad input and a ``--stack`` was given too, the
    stack's own problem (a name that names nothing) is said with the serving's (round 18: three wrong names, two
    lines)."""
    from passprice.servings import resolve

    try:
        return resolve(root, spec)
    except InputError as e:
        if stack is None:
            raise
        from passprice.stacks import load_stack

        try:
            load_stack(root, stack)
        except InputError as s:
            raise InputError.of([*e.lines, *s.lines]) from None
        raise


def _expected(ctx: click.Context, stack: str, resolved: Any, kind: str) -> Any:
    """The limit and the expected price under ``stack`` (issue 14); a refusal exits 1."""
    from passprice.serving import ServingRefusal
    from passprice.stacks import load_stack, price_expected

    the_stack = load_stack(_root(ctx), stack)
    try:
        expected = price_expected(resolved.header, resolved.card, resolved.serving, the_stack, kind)
    except ServingRefusal as e:
        _refuse(_cap_named(ctx, e))
    _stack_warnings(_root(ctx), the_stack, [resolved.card.name], resolved.header)
    return expected


def _cap_named(ctx: click.Context, e: Any) -> Any:
    """``e``, and an :class:`~passprice.batching.OverTPOT` of a command given ``--max-tpot`` made to name that
    option's cap, not the serving's ``max_tpot`` (the one place both ``best`` and ``best --stack S`` say it: under a
    stack it read "the serving's TPOT cap … (max_tpot)" for the command line's cap). Raises nothing."""
    from passprice.batching import OverTPOT

    if isinstance(e, OverTPOT) and ctx.params.get("max_tpot") is not None:
        return OverTPOT(e.batch, e.tpot_s, e.max_tpot_s, e.stack, given=True)
    return e


def _ratio_reach(ctx: click.Context, expected: Any, resolved: Any) -> Any:
    """Where ``expected``'s ratio to the limit at the same batch stands against the measured / limit span of its
    stack's fitted runs (:func:`passprice.stackreach.expected_reach`), ``None`` without a stack; a ratio outside it
    is a warning on stderr (walkthrough 19: llama.cpp's H200 price at 0.2384 × the limit, the limit 4.2 × expected,
    outside the 1.17 … 2.92 its 111 runs measured, said nothing). A best price's expected and limit lie at their own
    best batches (1 and 580 under llama.cpp): its ratio is taken against the limit at the expected price's batch,
    as each run's is (``resolved``: the serving priced)."""
    if expected is None:
        return None
    from passprice.stackreach import expected_reach

    reach = expected_reach(_root(ctx), expected, resolved.header, resolved.card, resolved.serving)
    if reach is None:
        return None
    warning = reach.warning()
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return reach


def _fit_check(ctx: click.Context, expected: Any, lock_ref: str | None = None) -> Any:
    """Whether the stack ``expected`` was priced under still fits today's registry
    (:func:`passprice.stackreach.fit_check`: its runs, or a card, checkpoint or routing record they price, changed
    since it was fitted, as ``check`` and ``diff`` find it): one warning line on stderr naming the stack and the
    command that re-fits it when it does not, and the check for ``--json``'s ``stack_fit`` (``None`` without a
    stack). Session 24: ``price``/``best --stack`` on a stale fit said nothing. With ``--lock L`` (``lock_ref``)
    made under that stack, the line says the check re-fitted today's stack file and whether L pinned its facts as
    they are (:func:`passprice.stackreach.lock_fit`, slip 40)."""
    if expected is None:
        return None
    from passprice.stackreach import fit_check, lock_fit

    root = _root(ctx)
    checked: Any = fit_check(root, expected.stack.name)
    if lock_ref is not None and checked.findings:
        from passprice.locks import lock_path, read_lock

        the_lock = read_lock(lock_path(root, lock_ref), root.schema)
        if the_lock.stack is not None and the_lock.stack.name == checked.stack:
            checked = lock_fit(root, checked, the_lock)
    warning = checked.warning()
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return checked


def _fit_stale(fitted: Any) -> bool:
    """Whether ``fitted`` (:func:`_fit_check`'s) found the stack's fit no longer following from today's registry."""
    checked = getattr(fitted, "checked", fitted)  # a LockFit (price --lock L) holds today's stack file's check
    return checked is not None and bool(checked.findings)


def _fit_words(fitted: Any) -> str | None:
    """The lock line's words for a stale fit (:meth:`passprice.stackreach.FitCheck.guard_words`, of today's stack
    file, which the price is made under); ``None`` when the fit holds or no stack was priced under. Raises
    nothing."""
    return getattr(fitted, "checked", fitted).guard_words() if _fit_stale(fitted) else None


def _audit_fit(root: Any, subject: Any, stale: Any, rests_on: list[str]) -> Any:
    """``stale`` (an audit's :class:`passprice.stale.Stale`) with the fitted facts of ``subject``'s stack that no
    longer follow from today's registry (:func:`passprice.stackreach.fit_check`; a lock's compared with what it
    pinned, :func:`passprice.stackreach.lock_fit`, its facts pinned otherwise not marked), after one warning line on
    stderr as ``price --stack`` (``--lock L``) says it: ``audit SERVING --stack S`` and ``audit LOCK`` said nothing
    of the fit ``price --stack`` warned of (tests/test_fix179.py)."""
    from passprice.stackreach import fit_check, lock_fit
    from passprice.stale import Stale

    checked: Any = fit_check(root, subject.stack.name)
    if not checked.findings:
        return stale
    apart: tuple[str, ...] = ()
    if subject.lock is not None and subject.lock.stack is not None and subject.lock.stack.name == checked.stack:
        said: Any = lock_fit(root, checked, subject.lock)
        apart = said.apart
    else:
        said = checked
    warning = said.warning(rests_on)  # the fitted facts the price rests on (it named share.float, read by none)
    if warning is not None:
        click.echo(f"passprice: warning: {warning}", err=True)
    return Stale(stale.findings + checked.stale(subject.facts, rests_on, apart).findings)


def _serving_span(root: Any, the_stack: Any, resolved: Any) -> Any:
    """The fitted-span reach of ``resolved``'s own expected price under ``the_stack``
    (:func:`passprice.stackreach.serving_reach`), its warning on stderr when it lies outside, as ``price --stack``
    says it (walkthrough 21: ``compare``, ``sweep``, ``roofline``, ``max-batch``, ``speculate``, ``simulate`` and
    ``lock`` under a stack said nothing of a price outside the span); ``None`` without a stack, when the stack
    refuses the price, or when no fitted run prices."""
    if the_stack is None:
        return None
    from passprice.stackreach import serving_reach

    reach = serving_reach(root, the_stack, resolved.header, resolved.card, resolved.serving)
    if reach is not None and not reach.inside:
        click.echo(f"passprice: warning: {reach.warning()}", err=True)
    return reach


def _span_text(reach: Any, batch: int | None = None) -> None:
    """The ``fitted span`` line of a command under a stack (``reach``: :func:`_serving_span`'s; nothing for
    ``None``); ``batch``: the serving's own batch, named when the command's figures are at others."""
    if reach is None:
        return
    at = "" if batch is None else f" (the serving's own price, batch {batch:,})"
    click.echo(f"  fitted span   {reach.line()}{at}")


def _with_span(data: dict[str, Any], reach: Any) -> dict[str, Any]:
    """A price's ``--json`` object with ``stack_span`` (:meth:`passprice.stackreach.RatioReach.to_json`) under a
    stack."""
    return data if reach is None else {**data, "stack_span": reach.to_json()}


def _cap_unused(options: dict[str, Any], why: str) -> None:
    """A warning on stderr when ``--max-tpot`` was given to a command that does not search for the best batch: the
    cap bounds that search only, so the option was accepted and had no effect (``why`` says what the command does
    instead)."""
    if options.get("max_tpot") is not None:
        click.echo(f"passprice: warning: --max-tpot bounds the best batch's search (best, lock --best); it does not "
                   f"change this result: {why}", err=True)
    if options.get("memory_use") is not None:
        click.echo(f"passprice: warning: --memory-use bounds the best and largest batch's searches (best, max-batch, "
                   f"compare, lock --best); it does not change this result: {why}", err=True)


def _stack_warnings(root: Any, the_stack: Any, cards: list[str], header: Any = None) -> None:
    """The warnings on stderr of a price under ``the_stack`` on ``cards`` (of a checkpoint ``header``) that its
    runs never measured (:func:`passprice.stackreach.card_reach`, :func:`~passprice.stackreach.model_reach`): one
    line for the cards, one for the kind of model."""
    from passprice.stackreach import card_reach, model_reach

    reaches = [card_reach(root, the_stack, card) for card in dict.fromkeys(cards)]
    unmeasured = [r for r in reaches if not r.measured]
    vendors = {r.card: r.vendor for r in unmeasured}
    warnings = [unmeasured[0].warning([r.card for r in unmeasured[1:]], vendors)] if unmeasured else []
    if header is not None:
        warnings.append(model_reach(root, the_stack, header).warning())
    for warning in warnings:
        if warning is not None:
            click.echo(f"passprice: warning: {warning}", err=True)


def _lock_options(f: F) -> F:
    """``--lock L`` and ``--no-lock``: every pricing command prices a registered serving under its locks."""
    f = click.option(
        "--no-lock", is_flag=True, help="Do not price under the serving's locks in locks/ (they apply by default)."
    )(f)
    return click.option(
        "--lock", "lock_ref", metavar="L",
        help="Price under lock L (a file, or a name in locks/) alone; it must lock the serving, card and checkpoint "
        "priced.",
    )(f)


def _under_locks(
    root: Any,
    serving: str | None,
    resolved: Any,
    lock_ref: str | None,
    no_lock: bool,
    rests_on: Any = (),
    stack_facts: Any = None,
) -> tuple[Any, Any]:
    """:func:`passprice.enforce.priced_under` (the locks a result is priced under, and their verdicts on today's
    facts); a lock of something else or a floor breached exits 1 (:class:`Refused`)."""
    from passprice.enforce import LockFloor, LockRefusal, priced_under

    if lock_ref is not None and no_lock:
        raise click.UsageError("give --lock L or --no-lock, not both")
    try:
        return priced_under(root, serving, resolved, lock_ref, no_lock, rests_on, stack_facts)
    except (LockRefusal, LockFloor) as e:
        _refuse(e)


def _stale(resolved: Any, data: dict[str, Any], expected: Any = None) -> Any:
    """The derived facts a price (its ``--json`` object ``data``) rests on that do not follow from their inputs
    today (:func:`passprice.stale.stale_rested_on`)."""
    from passprice.stale import stale_rested_on

    facts = resolved.facts()
    facts.update(_stack_facts(expected) or {})
    rests = dict.fromkeys([*data.get("rests_on", {}), *data.get("expected", {}).get("rests_on", {})])
    return stale_rested_on(facts, rests)


def _every_expert_json(resolved: Any) -> dict[str, Any]:
    """``{"every_expert": …}`` (:func:`passprice.report.every_expert`) for a mixture whose every token reads every
    expert, ``{}`` otherwise: a price's and best's ``--json`` key."""
    from passprice.report import every_expert

    found = every_expert(resolved.header, resolved.spec.routing)
    return {} if found is None else {"every_expert": found}


def _routing_note(resolved: Any, cost: Any) -> str | None:
    """The note (caveat) of the routing record a mixture of experts' price ``cost`` rests on, if it has one."""
    routing = resolved.serving.routing
    return routing.note if cost.routed is not None and routing is not None and routing.note else None


def _with_routing_note(data: dict[str, Any], note: str | None, header: Any = None) -> dict[str, Any]:
    """A price's ``--json`` object with ``note`` (the routing record's caveat; left out when it has none) and
    ``experts_held_bytes`` (every routed expert's bytes, :func:`passprice.report.routed_expert_bytes` of ``header``)
    added to its ``routing`` object (and its expected price's, under a stack). Added for output only: a lock records
    the price without them."""
    if "routing" not in data:
        return data
    extra: dict[str, Any] = {} if note is None else {"note": note}
    if header is not None:
        from passprice.report import routed_expert_bytes

        extra["experts_held_bytes"] = routed_expert_bytes(header)
    out = {**data, "routing": {**data["routing"], **extra}}
    if isinstance(out.get("expected"), dict) and "routing" in out["expected"]:
        out["expected"] = {**out["expected"], "routing": {**out["expected"]["routing"], **extra}}
    return out


def _defaulted_json(header: Any) -> dict[str, Any]:
    """``{"defaulted": [{"key", "value", "source"}]}`` when ``header``'s window is priced from llama.cpp's default
    (:func:`passprice.architectures.defaulted_window`: a gemma2 header without its window), else ``{}``. Added for
    output only, as the routing note is. Imports no decode step (a warm price imports none: test_cache)."""
    from passprice.architectures import defaulted_window

    d = defaulted_window(header)
    return {} if d is None else {"defaulted": [d.to_json()]}


def _echo_defaulted(header: Any) -> None:
    """The text line of :func:`_defaulted_json`: ``  defaulted     KEY N positions: …`` (nothing without one)."""
    from passprice.architectures import defaulted_window

    d = defaulted_window(header)
    if d is not None:
        click.echo(f"  defaulted     {escaped(d.line())}")


def _stack_facts(expected: Any) -> dict[str, Any] | None:
    """The facts of the stack an expected price was made under, by lock path (``None`` without one)."""
    return expected.stack.lock_facts() if expected is not None else None


def _lock_stack(root: Any, lock_ref: str | None, the_lock: Any, stack: str | None) -> str | None:
    """The serving stack a command prices under: ``--stack S`` when given, else that of ``--lock L`` when L was
    made under one (``lock SERVING --stack S``), so ``best``/``sweep``/``roofline --lock L`` price L's expected price
    as ``price --lock L`` does (walkthrough 9: they showed the limit alone); else ``None``."""
    if stack is not None or lock_ref is None:
        return stack
    if the_lock is None:
        from passprice.locks import lock_path, read_lock_in

        the_lock = read_lock_in(root, lock_path(root, lock_ref))
    return the_lock.stack.name if the_lock.stack is not None else None


def _own_serving(root: Any, lock_ref: str | None, serving: str | None, o: dict[str, Any]) -> tuple[Any, Any]:
    """With ``--lock L`` and no SERVING (nor ``--checkpoint``/``--card``): L's own serving as it is today (the
    registered serving it locks, else its embedded one) and L; else ``(None, None)``."""
    if lock_ref is None or serving is not None or o.get("checkpoint") or o.get("card"):
        return None, None
    from passprice.locks import lock_path, read_lock_in
    from passprice.reproduce import today_spec

    the_lock = read_lock_in(root, lock_path(root, lock_ref))
    return today_spec(root, the_lock)[0], the_lock


@cli.command("new-serving")
@click.argument("name")
@_serving_options(with_batch=True)
@click.option(
    "--description", help="What the serving is for (one line; shown by `passprice servings`; not copied from SERVING)."
)
@click.option("--force", is_flag=True, help="Overwrite an existing serving file.")
@_json_option
@click.pass_context
def new_serving_command(
    ctx: click.Context, /, name: str, serving: str | None, description: str | None, force: bool, as_json: bool,
    **o: Any,
) -> None:
    """Write registry/servings/NAME.toml: the serving the options describe (SERVING with them applied, or
    --checkpoint on --card), every default made explicit, validated as every serving file is. Price it with
    `passprice price NAME`."""
    from passprice.edit import replacing
    from passprice.servingfile import own_description, write_serving

    description = _require_unicode(description, "--description")
    target = _root(ctx).servings / f"{name}.toml"
    ctx.with_resource(replacing(target, force))  # SERVING read and NAME replaced while no other writer can
    root, spec = _spec(ctx, serving, **o)
    if description is None:
        description = own_description(root, name, serving)
    from passprice.registry import require_not_other_record

    require_not_other_record(root, root.servings / f"{name}.toml")
    written = write_serving(root, name, spec, description=description, force=force)
    if written.warning is not None:
        click.echo(f"passprice: warning: {escaped(written.warning)}", err=True)
    if as_json:
        from passprice.servings import spec_to_document

        _echo_json({"serving": written.name, "path": str(written.path), "document": spec_to_document(written.spec)})
        return
    spec = written.spec
    contexts = ", ".join(f"{c.share:g} at position {c.position:g} of {c.limit}" for c in spec.contexts or ())
    from passprice.registry import named_in

    click.echo(f"wrote {named_in(root, written.path)}: {spec.checkpoint} on {spec.card}, batch {spec.batch}, contexts "
               f"{contexts}; price it with `passprice price {shell_word(written.name)}`")


@cli.command("price")
@_serving_options(with_batch=True)
@_lock_options
@click.option("--stack", metavar="S", help=_STACK_HELP)
@_json_option
@click.pass_context
def price_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Price one decode pass of SERVING (or of --checkpoint on --card), under its locks in locks/. With --lock L and
    no SERVING, price L's own serving (its kind: a best lock prices the best batch; a lock made under a stack, under
    it) with today's facts."""
    from passprice.locks import evaluate
    from passprice.report import (
        cost_json,
        cost_text,
        expected_json,
        float_matrices,
        routed_expert_bytes,
    )
    from passprice.serving import ServingRefusal

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    kind = the_lock.kind if the_lock is not None else "price"
    if kind != "best":  # accepted silently before (issue 13): a price at a batch given reads no memory headroom
        _cap_unused({**o, "max_tpot": None}, "price prices the serving's batch")
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    expected = None
    if stack is not None:
        expected = _expected(ctx, stack, resolved, kind)
        cost = expected.limit
    else:
        try:
            cost = evaluate(kind, resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            _refuse(e)
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(
        root, named, resolved, lock_ref, no_lock, cost.rests_on, _stack_facts(expected)
    )
    data = cost_json(cost) if expected is None else expected_json(expected)
    _finite(data)
    # a lock whose recorded price this is not, and why
    moved = g.moved(root, kind, data, resolved, _stack_facts(expected),
                    expected.stack if expected is not None else None)
    # a title, hypothetical mark, description the lock pinned; a citation changed, no number moved (slip 43)
    relabels, drifts = g.since(root, resolved, named, data, moved, _stack_facts(expected),
                               stack=expected.stack if expected is not None else None)
    given = g.options(root, resolved, named, moved)  # options that make the serving another than the locked one
    stale = _stale(resolved, data, expected)  # a derived fact it rests on whose inputs moved
    note = _routing_note(resolved, cost)
    reach = _ratio_reach(ctx, expected, resolved)
    fitted = _fit_check(ctx, expected, lock_ref)
    if as_json:
        from passprice.report import with_tpot

        _echo_json({**_with_span(_with_routing_note(with_tpot(data), note, resolved.header), reach),
                          **_every_expert_json(resolved),
                          **_defaulted_json(resolved.header),
                          **({} if fitted is None else {"stack_fit": fitted.to_json()}),
                          "stale": stale.to_json(), "lock": g.to_json(moved, relabels, drifts, given)})
    else:
        from passprice.cards import shown_title
        # a checkpoint named by a path holding U+202E is escaped for people, as --json escapes it (left43)
        title = f"{escaped(resolved.spec.checkpoint)} on {resolved.card.name} ({shown_title(resolved.card)})"
        text = cost_text(cost, title, resolved.spec, float_matrices(resolved.header, resolved.card),
                         under_stack=expected is not None, routing_note=note,
                         experts_held=routed_expert_bytes(resolved.header) if cost.routed is not None else None,
                         every=_every_expert_json(resolved).get("every_expert"))
        if o.get("max_tpot") is not None:  # the command line's cap, said so (as OverTPOT says it: _cap_named)
            text = text.replace("against the serving's cap of ", "against the --max-tpot cap of ", 1).replace(
                "(max_tpot bounds the best batch's search", "(it bounds the best batch's search", 1)
        click.echo(text)
        _echo_defaulted(resolved.header)
        if expected is not None:
            click.echo(_expected_text(expected))
            if reach is not None and reach.runs:
                click.echo(f"  fitted span   {reach.line(_fit_stale(fitted))}")
        if stale:
            click.echo(f"\n  stale         {stale.line()}")
        said = g.line(verdicts, moved, kind, given, relabels=relabels, drifted=drifts, stale_fit=_fit_words(fitted))
        click.echo(f"\n  lock          {said}")


def _spread(resolved: Any) -> tuple[Any, Any] | None:
    """A paged serving's memory bounds at its mean position and with every sequence at its last
    (:func:`passprice.serving.memory_bound`, :func:`passprice.serving.last_position_bound`); ``None`` for a
    contiguous cache."""
    from passprice.serving import last_position_bound, memory_bound

    last = last_position_bound(resolved.header, resolved.card, resolved.serving)
    if last is None:
        return None
    return memory_bound(resolved.header, resolved.card, resolved.serving), last


def _stack_spread(resolved: Any, stack: Any, batch: int) -> tuple[str, int, float, Any]:
    """``--stack``'s part of the spread (``best``, ``max-batch``): the stack's name, its batch ``batch`` (``best``'s
    best, ``max-batch``'s most), the bytes its runtime reserves and :func:`passprice.serving.last_position_bound` in
    the room it leaves (:func:`passprice.stacks.stack_room`)."""
    from passprice.cost import Pricing
    from passprice.serving import last_position_bound
    from passprice.stacks import stack_room

    room = stack_room(resolved.header, resolved.card, resolved.serving, stack)
    return (stack.name, batch, Pricing.limit(resolved.card).capacity - room.capacity,
            last_position_bound(resolved.header, resolved.card, resolved.serving, room))

def _expected_text(expected: Any) -> str:
    """:func:`passprice.report.expected_text` of ``expected`` (a price under a serving stack), its ``pass`` line
    naming the array term ``array (at the vector rate)`` under a stack whose ``integer_matrices = "vector"``: its
    integer matrices are priced at the card's vector rate, and "array 256.5 µs" read as the tensor cores' (a new
    user's ``price r1-qwen7b-h200 --stack llamacpp-cuda-2405``; tests/test_fix166.py). The table alone: ``--json``
    keeps ``array_s``. Said here, not in the report module, which is part of the pricing model that locks pin by
    digest. Raises nothing."""
    import re

    from passprice.report import expected_text

    text = expected_text(expected)
    if expected.stack.integer_matrices != "vector":
        return text
    # the array term on the pass line (``shares memory 1.025 ms · array 256.5 µs · …``), first or after another
    term = re.compile(r"(?<=shares )array (?=\d)|(?<= · )array (?=\d)")
    return "\n".join(term.sub("array (at the vector rate) ", line, count=1) if line.startswith("  pass ")
                     else line for line in text.split("\n"))


def _draft_lengths(parse: Any, text: str) -> tuple[int, ...]:
    """``speculate --tokens``' draft lengths (``parse``: :func:`passprice.speculate.parse_tokens`), its refusal of a
    part starting at 0 saying that row 0 (no drafting), the yardstick, is every table's first row already: a new
    user's ``--tokens 0..3`` read only "draft lengths run from 1 to 64" (tests/test_fix166.py). Raises what ``parse``
    raises."""
    try:
        return tuple(parse(text))
    except InputError as e:
        zero = next((p for p in text.split(",") if (p.partition("..")[0] if ".." in p else p.partition("-")[0]
                                                    ).strip() == "0"), None)
        if zero is None or f"--tokens: {zero!r}: draft lengths run from 1" not in str(e):
            raise
        last = (zero.partition("..") if ".." in zero else zero.partition("-"))[2].strip()
        fix = f": write 1..{last}" if last.isdigit() and int(last) >= 1 else ""
        raise InputError(f"{e}; row 0 (no drafting) is always shown{fix}") from None


@cli.command("best")
@_serving_options(with_batch=False)
@_lock_options
@click.option("--stack", metavar="S", help=_STACK_HELP + " The stack's best batch may differ.")
@_json_option
@click.pass_context
def best_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """The batch that emits the most tokens per second, and its pass, under the serving's locks."""
    from passprice.report import (
        cost_json,
        cost_text,
        expected_json,
        float_matrices,
        routed_expert_bytes,
        spread_json,
        spread_text,
    )
    from passprice.serving import ServingRefusal, best_serving

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    expected = _expected(ctx, stack, resolved, "best") if stack is not None else None
    if expected is not None:
        cost = expected.limit
    else:
        try:
            cost = best_serving(resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            _refuse(_cap_named(ctx, e))
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(
        root, named, resolved, lock_ref, no_lock, cost.rests_on, _stack_facts(expected)
    )
    data = cost_json(cost) if expected is None else expected_json(expected)
    _finite(data)
    # a best lock whose recorded price this is not, and why
    moved = g.moved(root, "best", data, resolved, _stack_facts(expected),
                    expected.stack if expected is not None else None)
    # a title, hypothetical mark, description the lock pinned; a citation changed, no number moved (slip 43)
    relabels, drifts = g.since(root, resolved, named, data, moved, _stack_facts(expected),
                               stack=expected.stack if expected is not None else None)
    given = g.options(root, resolved, named, moved)  # options that make the serving another than the locked one
    stale = _stale(resolved, data, expected)  # a derived fact it rests on whose inputs moved
    note = _routing_note(resolved, cost)
    reach = _ratio_reach(ctx, expected, resolved)
    fitted = _fit_check(ctx, expected, lock_ref)
    spread = _spread(resolved)  # the limit's batch in card memory; under a stack its batch in the room it leaves too
    under = (_stack_spread(resolved, expected.stack, expected.expected.batch) if spread and expected is not None
             else None)
    if as_json:
        from passprice.report import with_tpot

        _echo_json({**_with_span(_with_routing_note(with_tpot(data), note, resolved.header), reach),
                          **_every_expert_json(resolved),
                          **_defaulted_json(resolved.header),
                          "memory_use": resolved.serving.memory_use,  # the searches' headroom (walkthrough 39)
                          "spread": spread_json(resolved.serving, *spread, under[3] if under else None)
                          if spread else None,
                          **({} if fitted is None else {"stack_fit": fitted.to_json()}),
                          "stale": stale.to_json(), "lock": g.to_json(moved, relabels, drifts, given)})
    else:
        from passprice.cards import shown_title
        title = (f"best batch: {escaped(resolved.spec.checkpoint)} on {resolved.card.name} "
                 f"({shown_title(resolved.card)})")
        click.echo(cost_text(cost, title, resolved.spec, float_matrices(resolved.header, resolved.card),
                             under_stack=expected is not None, routing_note=note,
                             experts_held=routed_expert_bytes(resolved.header) if cost.routed is not None else None,
                             best=True, every=_every_expert_json(resolved).get("every_expert"),
                             spread=spread_text(cost.batch, resolved.serving, *spread, under) if spread else None))
        _echo_defaulted(resolved.header)
        if expected is not None:
            click.echo(_expected_text(expected))
            if reach is not None and reach.runs:
                click.echo(f"  fitted span   {reach.line(_fit_stale(fitted))}")
        if stale:
            click.echo(f"\n  stale         {stale.line()}")
        said = g.line(verdicts, moved, 'best', given, relabels=relabels, drifted=drifts, stale_fit=_fit_words(fitted))
        click.echo(f"\n  lock          {said}")


@cli.command("compare")
@_serving_options(with_batch=False)
@click.option("--cards", default="all", show_default=True, help="Cards to compare, comma-separated, or 'all'.")
@click.option("--stack", metavar="S", help="Compare the best batch under serving stack S on each card (its expected "
              "price, as best --stack); a card the stack cannot price is refused by name.")
@_json_option
@click.pass_context
def compare_command(
    ctx: click.Context, /, serving: str | None, cards: str, stack: str | None, as_json: bool, **o: Any
) -> None:
    """The serving's best batch on each card, fastest first: which card serves it best. A what-if across cards,
    judged under no lock (the serving's locks lock its own card: `best SERVING` prices it under them)."""
    import attrs

    from passprice.compare import compare_cards, comparison_json, comparison_text, lock_note, refused_line
    from passprice.report import spec_summary
    from passprice.servings import resolve

    root = _root(ctx)
    if o.get("card"):
        raise click.UsageError("give the cards with --cards (comma-separated, or 'all'), not --card")
    if serving is None and not o.get("checkpoint"):
        raise click.UsageError("give a SERVING, or --checkpoint (with the serving options it is priced with)")
    from passprice.compare import parse_cards

    named_cards = parse_cards(cards)  # one reading of --cards for compare, sweep and kv (fix181)
    if named_cards is None:  # as `cards`: the good ones compared, each bad card file one error line (exit 2)
        from passprice.cards import load_card

        card_list = tuple(name for name, _ in _load_all(root.names(root.cards), lambda name: load_card(root, name),
                                                        root=root))
        if not card_list and root.names(root.cards):
            # no card reads: their problems are all there is to say, in the one JSON document --json promises (it
            # printed none, session 29): no card compared, each problem as its stderr line says it (exit 2)
            if as_json:
                _echo_json({"serving": serving, "cards": [], "problems": _kept_problems()})
            return
    else:
        card_list = named_cards
    if serving is None:
        o["card"] = card_list[0]  # a serving needs a card to be built; each row replaces it
    try:
        root, spec = _spec(ctx, serving, **o)
    except NotFound as e:  # a wrong serving said with every wrong --cards name (round 18: the serving alone)
        from passprice.compare import missing_cards

        raise InputError.of([*e.lines, *missing_cards(root, card_list)]) from None
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    rows = compare_cards(root, spec, card_list, the_stack)
    from passprice.enforce import LockRefusal

    try:
        note = lock_note(root, serving, spec.card)
    except LockRefusal as e:
        _refuse(e)
    cards_json = comparison_json(rows)
    reaches = _compare_spans(root, spec, rows) if the_stack is not None else {}
    for row_json in cards_json:  # each card's expected best against the stack's fitted span, as best --stack's
        if row_json["card"] in reaches:
            row_json["stack_span"] = reaches[row_json["card"]].to_json()
    data = {"serving": serving, "checkpoint": spec.checkpoint,
            "own_card": spec.card if serving is not None else None, "cards": cards_json, "lock": note}
    if stack is not None:
        data["stack"] = stack
    data["problems"] = _kept_problems()  # a card file that does not read, left out of "cards"
    if all(r.cost is None for r in rows):  # as speculate: nothing priced is a refusal (exit 1), not a table
        raise Refused(refused_line(rows), data)
    # the serving as completed against its checkpoint (contexts filled in for a --checkpoint alone)
    first = resolve(root, attrs.evolve(spec, card=card_list[0]))
    outside = ""
    if the_stack is not None:  # the cards priced that its runs never measured, in one line (as sweep --stack)
        _stack_warnings(root, the_stack, [r.card for r in rows if r.cost is not None], first.header)
        outside = _outside_line(the_stack.name, reaches)
        if outside:
            click.echo(f"passprice: warning: {outside}", err=True)
    if as_json:
        _echo_json({**data, **_defaulted_json(first.header)})
        return
    what = f"{serving + ': ' if serving else ''}{spec.checkpoint}"
    click.echo(comparison_text(rows, what, spec_summary(first.spec), note, stack))
    _echo_defaulted(first.header)  # as price says it (arch44: compare priced gemma2's 4,096 without a word)
    if reaches:
        some = next(iter(reaches.values()))
        out = [f"{card} {r.ratio:.4g}" for card, r in reaches.items() if not r.inside]
        # Each card's ratio is at its expected best's own batch, not the × limit column's (over the limit's best
        # batch): 0.1006 beside a column reading 0.01112 for the same card looked wrong (walkthrough 22).
        click.echo(f"  fitted span: its {some.runs} fitted runs measured {some.low:.4g} … {some.high:.4g} × their "
                   "limit; " + (f"outside it (an extrapolation of the fit): {', '.join(out)}" if out else
                                "every card's expected best lies inside")
                   + " (expected over the limit at the expected best's batch; the × limit column divides by the "
                     "limit's own best batch)")


def _sweep_spans(root: Any, the_stack: Any, grid: Any, most: int = 64) -> dict[str, Any]:
    """The fitted-span reach (:func:`passprice.stackreach.serving_reach`) of each serving of ``grid`` on each of its
    cards (its own card without ``--cards``), at the serving's own batch and contexts (those ``--limit`` sets, where
    given: :func:`~passprice.sweep.swept_spec`), by ``SERVING on CARD``; the
    first ``most`` pairs (each one price); a pair that does not load or price is left out (the sweep reports it)."""
    import attrs

    from passprice.errors import InputError
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve
    from passprice.stackreach import serving_reach
    from passprice.sweep import entry_name, swept_spec

    out: dict[str, Any] = {}
    pairs = 0
    for ref in grid.servings:
        try:
            spec = swept_spec(root, grid, ref)
        except InputError:
            continue
        # each card as swept (a path priced as that file, not as the registry's card of its stem: cards.same_card)
        for ref_card in [spec.card] if grid.cards is None else list(grid.cards):
            card = Path(ref_card).name.removesuffix(".toml")
            pairs += 1
            if pairs > most:
                return out
            try:
                resolved = resolve(root, attrs.evolve(spec, card=ref_card))
                reach = serving_reach(root, the_stack, resolved.header, resolved.card, resolved.serving)
            except (InputError, ServingRefusal):
                continue
            if reach is not None:
                shown = entry_name(ref) if not isinstance(ref, str) else Path(ref).name.removesuffix(".toml")
                out[f"{shown} on {card}"] = reach
    return out


def _compare_spans(root: Any, spec: Any, rows: list[Any]) -> dict[str, Any]:
    """Each compared card's expected best (``rows``: :func:`passprice.compare.compare_cards`'s under a stack)
    against the stack's fitted span, by card (:func:`passprice.stackreach.expected_reach`, at the expected best's
    batch as ``best --stack`` takes it); a card refused, or whose ratio cannot be taken, is left out."""
    import attrs

    from passprice.servings import resolve
    from passprice.stackreach import expected_reach

    out: dict[str, Any] = {}
    for row in rows:
        if row.expected is None:
            continue
        resolved = resolve(root, attrs.evolve(spec, card=row.card))
        reach = expected_reach(root, row.expected, resolved.header, resolved.card, resolved.serving)
        if reach is not None and reach.runs:
            out[row.card] = reach
    return out


def _outside_line(stack: str, reaches: dict[str, Any]) -> str:
    """One line naming the cards (of ``reaches``, by card) whose expected price lies outside stack ``stack``'s
    fitted span, with each one's ratio; empty when none does."""
    out = [(card, r) for card, r in reaches.items() if not r.inside]
    if not out:
        return ""
    some = out[0][1]
    named = ", ".join(f"{card} ({r.ratio:.4g}{'' if r.at_batch is None else f' at batch {r.at_batch:,}'})"
                      for card, r in out[:8]) + (f" and {len(out) - 8} more" if len(out) > 8 else "")
    return (f"stack {stack}'s expected price lies outside the {some.low:.4g} … {some.high:.4g} × the limit its "
            f"{some.runs} fitted runs measured, for {named}: the fit is extrapolated there")


@cli.command("max-batch")
@_serving_options(with_batch=False)
@_lock_options
@click.option("--stack", metavar="S", help="Also the most under serving stack S, whose runtime reserves memory.")
@_json_option
@click.pass_context
def max_batch_command(
    ctx: click.Context,
    /,
    serving: str | None,
    lock_ref: str | None,
    no_lock: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """The most sequences the card carries: every larger batch is refused for capacity (under the serving's
    locks)."""
    from passprice.serving import ServingRefusal, max_batch

    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    root, spec = _spec(ctx, serving, base=base, **o)
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    _cap_unused({**o, "memory_use": None}, "max-batch is what memory holds, whatever each sequence waits")
    under = None
    reach = None
    try:
        if stack is not None:
            from passprice.stacks import load_stack, max_batch_expected

            the_stack = load_stack(root, stack)
            n, under, reserved, held = max_batch_expected(
                resolved.header, resolved.card, resolved.serving, the_stack
            )
            _stack_warnings(root, the_stack, [resolved.card.name], resolved.header)
            reach = _serving_span(root, the_stack, resolved)
        else:
            n = max_batch(resolved.header, resolved.card, resolved.serving)
    except ServingRefusal as e:
        _refuse(e)
    named = serving or (the_lock.info.serving if the_lock is not None else None)
    g, verdicts = _under_locks(root, named, resolved, lock_ref, no_lock)
    relabels, drifts = g.since(root, resolved, named)  # said as price says them (slip 44)
    from passprice.report import spread_json, spread_text

    spread = _spread(resolved)
    # under a stack, what the room its runtime leaves holds at the last position too, as best --stack says it
    stack_spread = _stack_spread(resolved, the_stack, under) if spread and under is not None else None
    if as_json:
        data: dict[str, Any] = {"card": resolved.card.name, "checkpoint": resolved.spec.checkpoint, "max_batch": n,
                                 "memory_use": resolved.serving.memory_use,
                                 "spread": spread_json(resolved.serving, *spread, stack_spread[3] if stack_spread
                                                       else None) if spread else None}
        if under is not None:
            data.update({"stack": stack, "expected_max_batch": under, "reserved_bytes": reserved,
                         "stack_batches": list(held) if held is not None else None})
        _echo_json({**_with_span(data, reach), **_defaulted_json(resolved.header),
                          "lock": g.to_json(relabels=relabels, drifted=drifts)})
    else:
        use = resolved.serving.memory_use
        sequences = "sequence" if n == 1 else "sequences"
        click.echo(f"{escaped(resolved.spec.checkpoint)} on {resolved.card.name}: at most {n:,} {sequences} a pass"
                   + (f" filling at most {100.0 * use:.4g} % of card memory (memory use)" if use is not None else ""))
        _echo_defaulted(resolved.header)
        from passprice.serving import memory_bound
        from passprice.tables import si

        mb = memory_bound(resolved.header, resolved.card, resolved.serving)
        click.echo(f"  bounded by card memory: {si(mb.capacity, 'B')}"
                   + (f" ({100.0 * use:.4g} % of {si(resolved.card.memory.capacity.value, 'B')})" if use is not None
                      else "")
                   + f" less {si(mb.shared, 'B')} held once (weights, embedding table) holds "
                   f"⌊({si(mb.capacity, 'B')} − {si(mb.shared, 'B')}) / {si(mb.per_sequence, 'B')} a sequence (its "
                   f"KV cache, state and conv ring)⌋ = {mb.card_room:,}"
                   + (f"; host memory adds {mb.host_room:,}" if mb.host_room else ""))
        if spread:
            click.echo(f"  spread  {spread_text(n, resolved.serving, *spread, stack_spread, 'max batch')}")
        click.echo(f"  memory  {si(resolved.card.memory.capacity.value, 'B')} is {resolved.card.capacity_said()}")
        if under is not None:
            from passprice.tables import si

            click.echo(f"  under stack {stack}: at most {under:,} (its runtime reserves {si(reserved, 'B')})")
            if held is not None:  # what fits is memory's answer; the stack's prices hold only where it was measured
                click.echo(f"  its facts hold on batch {held[0]:,} … {held[1]:,} only (range.rows): a price at "
                           "another is refused (BeyondStack)")
            else:
                click.echo("  its facts hold at no batch of this serving (range.rows): every price is refused")
            _span_text(reach, resolved.serving.batch)
        click.echo(f"  lock  {g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)}")


# --- locks -----------------------------------------------------------------------------------------------------------


def _parse_requires(requires: tuple[str, ...]) -> dict[str, Any]:
    from passprice.facts import Provenance
    from passprice.locks import is_fact_path
    from passprice.routing import ROUTING_PATHS

    out = {}
    for item in requires:
        path, sep, level = item.partition("=")
        if not sep or not path:
            raise click.BadParameter(f"{item!r} is not PATH=PROVENANCE", param_hint="--require")
        if path == "routing.*":
            # the routing record's facts together, as the README's qwen3 lock "requires routing.* >= measured": the
            # policy stores each path (a new user's `--require 'routing.*=measured'` was not a fact path)
            floor = Provenance.parse(level, f"--require {path}")
            out.update(dict.fromkeys(ROUTING_PATHS, floor))
            continue
        if not is_fact_path(path):
            # A path that prints like a fact path (a Cyrillic а in `аrray`) is spelled by its code points: "'аrray'
            # is not a fact path" read as a refusal of `array` itself (attack round 31).
            spelled = "" if ascii(path) == repr(path) else f" (spelled {path!a}: it prints like another name)"
            raise click.BadParameter(
                f"{path!r}{spelled} is not a fact path (memory.bandwidth, streams.rewrite, array, host.read, "
                "draft.acceptance.1, routing.hot_share, routing.* for both routing facts …)",
                param_hint="--require",
            )
        out[path] = Provenance.parse(level, f"--require {path}")
    return out


def _given(o: dict[str, Any]) -> list[str]:
    """The serving options given on the command line (``--batch`` …), by name."""
    return sorted(f"--{k.replace('_', '-')}" for k, v in o.items() if v is not None and v is not False)


@cli.command("lock")
@_serving_options(with_batch=True)
@click.option("-o", "--output", type=_OutputPath(stdout=False),
              help="Lock file to write, relative to the working folder (not to --root), as every -o is (default: the "
              "registry's locks/NAME.lock.toml). check, price and diff read the registry's locks/ only: a lock "
              "written elsewhere is yours to keep, and said to be.")
@click.option("--name", help="Lock name (default: NAME of -o NAME.lock.toml, else the serving's name).")
@click.option("--best", "kind", flag_value="best", help="Lock the best batch's price instead of the serving's batch.")
@click.option("--floor", type=click.Choice(["published", "measured", "derived", "estimated", "assumed"]),
              help="Weakest provenance any fact may have (default: each fact the price rests on floored at its "
              "provenance today).")
@click.option("--require", "requires", multiple=True, metavar="PATH=PROVENANCE",
              help="A per-path floor, e.g. streams.rewrite=measured (repeatable; routing.* floors both routing "
              "facts); the price must rest on PATH.")
@click.option("--update", is_flag=True,
              help="Re-lock the existing lock with today's facts, checkpoint, serving and code, keeping its name, "
              "kind, serving, stack and policy (with --force --require PATH=PROVENANCE: PATH's floor set as given).")
@click.option("--force", is_flag=True,
              help="Overwrite an existing lock (its policy rebuilt from the flags; every floor loosened or removed is "
              "printed).")
@click.option("--stack", metavar="S", help="Lock the expected price under serving stack S too, pinning its facts.")
@_json_option
@click.pass_context
def lock_command(
    ctx: click.Context,
    /,
    serving: str | None,
    output: Path | None,
    name: str | None,
    kind: str | None,
    floor: str | None,
    requires: tuple[str, ...],
    update: bool,
    force: bool,
    stack: str | None,
    as_json: bool,
    **o: Any,
) -> None:
    """Price SERVING and write a lock pinning everything the price is a function of: the facts it rests on, the
    checkpoint's content, the serving, the policy and the pricing model's code."""
    from passprice import locking
    from passprice.facts import Provenance
    from passprice.locks import replaced, replaced_lines
    from passprice.serving import ServingRefusal

    if name is not None and not locking.LOCK_NAME.fullmatch(name):  # .match let "x\n" through ($ before a \n)
        raise click.BadParameter(
            f"{name!r} is not a lock name: use letters, digits, '.', '_' and '-' (first a letter or digit)",
            param_hint="--name",
        )
    if name is not None and len(name) > locking.MAX_LOCK_NAME:
        from passprice.schema import shown_value

        raise click.BadParameter(
            f"{shown_value(name)} is not a lock name: {len(name):,} characters, where a lock file locks/NAME.lock.toml "
            f"holds at most {locking.MAX_LOCK_NAME} before .lock.toml",
            param_hint="--name",
        )
    from passprice.registry import windows_problem

    problem = windows_problem(name) if name is not None else None
    if problem is not None:
        raise click.BadParameter(f"{name!r} is not a lock name: {problem}, where no file of that name can be checked "
                                 "out", param_hint="--name")
    if update and (floor is not None or kind is not None or (requires and not force)):
        raise click.UsageError(
            "--update keeps the lock's kind and policy: give --force (with --floor/--require/--best) to change them; "
            "--update --force --require PATH=PROVENANCE changes PATH's floor alone, keeping the rest"
        )
    overridden = bool(_given({k: v for k, v in o.items() if k != "serving"}))
    if update and overridden:
        raise click.UsageError("--update re-locks the lock's own serving as it is today: give no serving options")
    root = _root(ctx)
    given = output is not None
    if output is None:
        locking.require_no_lock_as_serving(serving, update)
        if serving is None and name is None:
            raise click.UsageError("give -o FILE (or a SERVING or --name to write locks/NAME.lock.toml)")
        output = locking.default_output(root, name or Path(serving or "").stem)
    from passprice.registry import within

    if not root.embedded and within(root, output):  # a lock outside the checkout is the user's own (round 17)
        from passprice.pins import require_checkout_code

        require_checkout_code(root.path)  # a lock of the running code, not this checkout's: refused (exit 2)
    _warn_code(root)
    locking.require_place(root, output, (ctx.find_root().obj or {}).get("root"))
    _check_inputs([("SERVING", serving), ("--checkpoint", o.get("checkpoint")), ("--card", o.get("card"))],
                  [("-o", output)])
    from passprice.edit import replacing

    ctx.with_resource(replacing(output, update or force))  # the old lock read and replaced while no other writer can
    old = locking.previous(root, output, update, force)
    base = locking.update_base(root, old) if update and old is not None and serving is None else None
    root, spec = _spec(ctx, serving, base=base, **o)
    _check_inputs(_read_through(root, [], stack=stack, specs=[spec]), [("-o", output)])
    locking.require_suffix(output)
    lock_name = _require_unicode(
        locking.lock_name(output, serving, name, old if update else None), "lock name"
    )
    locking.require_file_name(root, output)
    try:
        written = locking.write(
            root, output, spec, lock_name,
            kind=kind,
            locked=locking.locked_serving(root, serving, overridden, old if update else None),
            old=old,
            update=update,
            force=force,
            floor=Provenance(floor) if floor is not None else None,
            requires=_parse_requires(requires),
            stack=stack,
        )
    except (locking.LockNotWritten, locking.LockOnStaleFacts) as e:
        e.shown_as = locking.written_as(root, output, given, (ctx.find_root().obj or {}).get("root"))
        _refuse(e)
    except ServingRefusal as e:
        from passprice.files import shell_word
        from passprice.stacks import BeyondStack

        if isinstance(e, BeyondStack) and serving is not None and locking.best_instead(root, spec, stack, kind):
            # the user's own options that still apply (-o, --name, --floor, --require, the serving's): the advice
            # without -o wrote locks/SERVING.lock.toml, "already exists" (a new user's -o /tmp/x.lock.toml dropped)
            kept = [words for _, words in _typed_options(ctx, {p.name for p in ctx.command.params if p.name}
                                                         - {"serving", "kind", "batch", "stack", "requires"})]
            kept += [f"--require {shell_word(item)}" for item in requires]
            hint = (f"or lock its best price inside the stack's range: "
                    f"`passprice lock {shell_word(serving)} --best --stack {shell_word(str(stack))}"
                    + "".join(f" {words}" for words in kept) + "`")
            raise Refused(f"{e}; {hint}", {**e.to_json(), "message": f"{e}; {hint}", "best_instead": True},
                          None) from None
        _refuse(e)
    lock = written.lock
    if lock.kind != "best":
        _cap_unused(o, f"a {lock.kind} lock records the price at the serving's batch, whatever its TPOT (lock --best "
                       "records the best batch within the cap)")
    for change in written.loosened:
        click.echo(f"passprice: warning: lock {lock.name}: {change.describe()}", err=True)
    reach = None
    if lock.stack is not None:  # the cards and kinds of model its runs never measured, as price --stack warns
        from passprice.servings import resolve
        from passprice.stacks import load_stack, price_expected

        resolved = resolve(root, spec)
        the_stack = load_stack(root, lock.stack.name)
        _stack_warnings(root, the_stack, [lock.card], resolved.header)
        # the recorded expected price against the stack's fitted span, as price and best say it (walkthrough 21)
        with contextlib.suppress(ServingRefusal):
            reach = _ratio_reach(ctx, price_expected(resolved.header, resolved.card, resolved.serving, the_stack,
                                                     lock.kind), resolved)
    if root.embedded:  # README: outside a registry, `lock` says so (newcomer walkthrough 12: it did not)
        click.echo(f"passprice: note: not in a registry: lock {lock.name} pins the facts passprice ships "
                   f"({shown_path(root.path)}); `passprice reproduce` of it outside a registry reads them again",
                   err=True)
    shown_as = locking.written_as(root, output, given, (ctx.find_root().obj or {}).get("root"))
    unread = locking.unread_note(root, output, lock.name, shown_as, (ctx.find_root().obj or {}).get("root"))
    if unread is not None:  # issue 13: walk42's `--root COPY lock -o locks/x.lock.toml` wrote the checkout's, unsaid
        click.echo(f"passprice: note: {unread}", err=True)
    if as_json:  # "path" as the text line names it (left28d: it was absolute where the line was relative)
        _echo_json(
            {
                "lock": lock.name,
                "path": shown_as,
                "absolute_path": locking.absolute_path(output),
                "serving": lock.info.serving,
                "price": lock.price,
                "loosened": [c.describe() for c in written.loosened],
                # the price --update replaced (walkthrough 47); null for a lock written anew
                "replaced": replaced(old.price, lock.price) if update and old is not None else None,
                **({"stack_span": reach.to_json()} if reach is not None and reach.runs else {}),
            }
        )
    else:
        locks = f"locks serving {lock.info.serving}" if lock.info.serving else "locks no registered serving"
        click.echo(
            f"locked {lock.name} ({lock.kind}, {locks}): {lock.price['tokens_per_s']:,.1f} tokens/s at batch "
            f"{lock.price['batch']}, binds on {lock.price['binds']}, weakest {lock.price['provenance']} "
            f"-> {shown_as}"
        )
        from passprice.locks import expected_line

        expected = expected_line(lock.price)
        if expected is not None:
            click.echo(f"  {expected}")
        if reach is not None and reach.runs:
            click.echo(f"  fitted span   {reach.line()}")
        if update and old is not None:  # the price it replaces (walkthrough 47: the new one alone was printed)
            for line in replaced_lines(old.price, lock.price):
                click.echo(f"  replaces  {line}")


@cli.command("reproduce")
@click.argument("lock")
@_json_option
@click.pass_context
def reproduce_command(ctx: click.Context, lock: str, as_json: bool) -> None:
    """Re-price LOCK from its own pinned facts, checkpoint content and serving with today's code, show it equals
    the recorded price, and say which of its inputs changed since (facts, checkpoint content, serving, pricing
    model) with the recorded and re-priced figures side by side. Exit 1 when it does not reproduce."""
    from passprice.errors import spelled_lines
    from passprice.locks import lock_path, older_format, read_lock_in
    from passprice.reproduce import reproduce, reproduction_json, reproduction_text

    root = _root(ctx)
    _warn_code(root)
    path = lock_path(root, lock)
    the_lock = read_lock_in(root, path)
    from passprice.enforce import LockRefusal, require_known_model

    try:  # a pricing model no passprice had is no code to blame a move on: forged (slip 55)
        require_known_model(the_lock, no_lock=False, root=root.path)  # and, in locks/, a record not listed (slip 57)
    except LockRefusal as e:
        _refuse(e)
    rep = reproduce(root, the_lock, grouped=True)  # a fact with those derived from it, as diff groups them
    if the_lock.stack is not None:  # today's expected column on a fit its runs no longer give (walkthrough 27)
        import attrs

        from passprice.review import stale_stack_facts

        rep = attrs.evolve(rep, stale_stack=stale_stack_facts(root, the_lock.stack.name, rep.today.price))
    shown = _relative(root, path)
    older = older_format(the_lock, str(path.resolve()) if root.embedded else shown, root, path)  # a path to paste
    ctx.meta[STATUS] = 0 if rep.equals else 1  # the verdict stands if the reader leaves mid-report (`| head`)
    from passprice.pins import LOCK_FORMAT, checkout_note
    from passprice.reproduce import model_commit, requirement_at

    commit, cut = (model_commit(root, the_lock.info.pricing_model)
                   if rep.model_changed and the_lock.info.format >= LOCK_FORMAT else (None, None))
    requirement = requirement_at(root, commit[0]) if commit is not None and not rep.holds_code else None
    if as_json:
        _echo_json(reproduction_json(rep, older, commit, requirement, cut))
    else:
        text = reproduction_text(rep, shown, older, "" if root.embedded else checkout_note(root.path), commit,
                                 requirement, cut)
        # A look-alike name (a card copied under a Cyrillic х) reads as the name it copies: spelled out (slip 32).
        click.echo(spelled_lines(text))
    if rep.bad_input is not None:  # a file of today's that does not read: bad input, after the report, as check
        _problems([rep.bad_input])
    if not rep.equals:
        moved = rep.checkpoint.moved_to
        if rep.price is None and moved is not None:  # the entry is here, its file renamed (tests/test_fix146.py)
            from passprice.tables import printable

            moved = printable(moved)
            click.echo(f"passprice: refused: lock {the_lock.name} cannot be reproduced here: the entry holding its "
                       f"pinned checkpoint, registry/checkpoints/{moved}.toml, does not read (its file's name is not "
                       "its [entry] name), so no price is made to compare with the recorded one", err=True)
        elif rep.price is None:  # no price was made (its pinned checkpoint is not here): no mismatch to report
            click.echo(f"passprice: refused: lock {the_lock.name} cannot be reproduced here: no entry of this registry "
                       "holds its pinned checkpoint, so no price is made to compare with the recorded one", err=True)
        else:
            click.echo(f"passprice: refused: lock {the_lock.name} does not reproduce its recorded price", err=True)
        if rep.checkpoint.status != "same" and rep.checkpoint.found is None and moved is None:
            # (an entry renamed is set right where it is: a copy would register the checkpoint twice)
            from passprice.checkpointcite import packaged_hint

            hint = packaged_hint(root, the_lock)  # a fresh registry lacking it (walkthrough 25)
            if hint is not None:
                click.echo(hint, err=True)
        ctx.exit(1)


@cli.command("check")
@click.option("--frozen", is_flag=True, help="Make drift of any pinned fact an error (as cargo --locked).")
@_json_option
@click.pass_context
def check_command(ctx: click.Context, frozen: bool, as_json: bool) -> None:
    """Validate every file against its schema and judge every lock against today's facts."""
    from passprice.check import check

    root = _root(ctx)
    _warn_code(root)
    report = check(root)
    ctx.meta[STATUS] = 2 if report.unreadable else 0 if report.ok(frozen) else 1  # stands if the reader leaves
    if as_json:
        _echo_json(report.to_json(frozen))
    else:
        click.echo(report.text(frozen))
    if report.unreadable:  # files that do not read are bad input: on stderr, exit 2, after the rest of the report
        _problems(report.error_lines())
    elif not report.ok(frozen):
        ctx.exit(1)


def _typed_options(ctx: click.Context, names: set[str]) -> list[tuple[str, str]]:
    """The options of ``names`` (parameter names) the command line gave (its own or from the environment, not a
    default), in the command's order: each as ``(option, words)``, the option as typed (``--no-host-memory`` for a
    flag pair's off side) and the words that give it (``--batch 3``). A ``False`` off flag counts as given: a
    ``v is not False`` test let ``audit LOCK --no-host-memory`` pass silently (left32)."""
    from click.core import ParameterSource

    given = []
    for param in ctx.command.params:
        if param.name not in names or not isinstance(param, click.Option):
            continue
        if ctx.get_parameter_source(param.name) not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            continue
        value = ctx.params.get(param.name)
        if param.is_flag:
            option = param.opts[0] if value or not param.secondary_opts else param.secondary_opts[0]
            given.append((option, option))
        else:
            given.append((param.opts[0], f"{param.opts[0]} {_typed_word(value)}"))
    return given


def _typed_word(value: object) -> str:
    """An option's value as a user types it, one shell word: a number as a number (a whole float without ``.0``,
    another as its shortest text, ``0.9``), anything else as :func:`passprice.files.shell_word` quotes it. The
    advice after a ``lock --stack`` refusal said ``--position 4000.0`` where the user typed ``--position 4000``.
    Raises nothing."""
    from passprice.files import shell_word

    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return shell_word(str(value))


@cli.command("audit")
@click.argument("target", required=False)
@_serving_options(with_batch=True, serving_shown=False)
@click.option("--source", "source_id", metavar="ID",
              help="Audit backwards: every fact citing source ID, the servings and locks resting on them, and which "
              "locks break if it is withdrawn.")
@click.option("--fact", "fact_ref", metavar="CARD:PATH",
              help="The same for one fact (CARD:PATH, or METHOD:acceptance.N).")
@click.option("--stack", "stack_ref", metavar="S",
              help="Audit SERVING's expected price under serving stack S (facts/stacks), as price --stack S makes it: "
                   "the stack's fitted facts and their sources with the card's.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
    help="text for people, markdown for a pull-request comment, json for programs.",
)
@click.option("--step", "step_pct", type=_Step(), default=1.0, show_default=True, metavar="PERCENT",
              help="Measure each elasticity over a change of PERCENT (e.g. 10: which fact, 10 % wrong, moves the "
                   "price most).")
@_plot_option("each fact's elasticity as a bar chart")
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@_json_option
@click.pass_context
def audit_command(
    ctx: click.Context, /, target: str | None, source_id: str | None, fact_ref: str | None, stack_ref: str | None,
    step_pct: float, fmt: str, plot_path: Path | None, force: bool, as_json: bool, **o: Any,
) -> None:
    """Audit the facts a price rests on: TARGET is a SERVING (today's facts, options apply) or a lock (its pinned
    facts): a lock file, NAME.lock.toml, or a name in locks/ that names no serving. With --source ID or --fact
    CARD:PATH, audit backwards: what rests on that source or fact."""
    from passprice.audit import audit_json, audit_markdown, audit_text, cited_sources
    from passprice.registry import BUILT_IN
    from passprice.reproduce import CheckpointGone
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve

    serving_arg = o.pop("serving", None)
    if serving_arg is not None:
        raise click.UsageError(f"audit takes one TARGET (a lock or a serving), not also {serving_arg!r}")
    fmt = "json" if as_json else fmt
    root = _root(ctx)
    _check_plot(plot_path, force, root)
    if source_id is not None or fact_ref is not None:
        given = sorted(f"--{k.replace('_', '-')}" for k, v in o.items() if v is not None and v is not False)
        if (target is not None or given or (source_id is not None and fact_ref is not None) or plot_path is not None
                or stack_ref is not None or step_pct != 1.0):
            raise click.UsageError("--source and --fact audit the registry: give one of them, and no TARGET, "
                                   "serving option, --stack, --step or --plot")
        from passprice.lineage import fact_lineage, parse_fact_ref, render, source_lineage

        lineage = (
            source_lineage(root, source_id) if source_id is not None
            else fact_lineage(root, parse_fact_ref(root, fact_ref or ""))
        )
        if fmt == "json":
            _echo_json(lineage.to_json())
        else:
            click.echo(render(lineage, fmt))
        return
    from passprice.audit import audit_subject, lock_pins, lock_subject, names_lock, serving_subject

    if target is not None and names_lock(root, target):
        from passprice.audit import lock_options_problem

        typed = _typed_options(ctx, {*o, "stack_ref"})
        if typed:
            # left32: a lock (named by its digest too) pins what each option would change: one line, exit 2
            problem = lock_options_problem(root, target, typed)
            if problem is not None:
                raise click.UsageError(problem)
        _check_inputs([("TARGET", target)], [("--plot", plot_path)])
        try:
            subject = lock_subject(root, target)
        except CheckpointGone as e:
            raise Refused(str(e), e.to_json()) from None
        from passprice.enforce import LockRefusal, require_unforged

        try:  # a forged lock is no price to audit or cite, as every pricing command refuses it (slip 53)
            require_unforged(root, [(subject.lock, target)] if subject.lock is not None else [], subject.header)
        except LockRefusal as e:
            _refuse(e)
    else:
        from passprice.enforce import LockRefusal

        root, spec = _spec(ctx, target, **o)
        # --plot over the header or card it prices (`audit --checkpoint h.png --plot h.png --force` drew over the
        # header, exit 0: attack round 26)
        _check_inputs([("TARGET", target), *_read_through(root, [], stack=stack_ref, specs=[spec])],
                      [("--plot", plot_path)])
        resolved = resolve(root, spec)
        _cap_unused(o, "audit prices the serving's batch, as price does")
        the_stack = None
        if stack_ref is not None:
            from passprice.stacks import load_stack

            the_stack = load_stack(root, stack_ref)
            _stack_warnings(root, the_stack, [resolved.card.name], resolved.header)
            from passprice.stacks import price_expected

            # the expected price's ratio against its stack's fitted span (a refusal is the audit's to report)
            with contextlib.suppress(ServingRefusal):
                _ratio_reach(ctx, price_expected(resolved.header, resolved.card, resolved.serving, the_stack),
                             resolved)
        try:
            subject = serving_subject(root, target, resolved, the_stack)
        except LockRefusal as e:
            _refuse(e)
    from passprice.report import cost_json

    try:
        report = audit_subject(subject, lambda cost: _finite(cost_json(cost)), step_pct / 100)
    except ServingRefusal as e:
        _refuse(e)
    from passprice.sources import load_sources

    sources = load_sources(root)
    result, stale, title = report.audit, report.stale, subject.title
    if subject.stack is not None:  # the stack's fitted facts are derived too: a fit that does not follow is marked
        stale = _audit_fit(root, subject, stale, [r.path for r in result.rows])
    if plot_path is not None:
        from passprice.plots import audit_picture, picture_format, write_picture

        write_picture(plot_path, audit_picture(result, title, picture_format(plot_path)), force)
    calibration = subject.calibration
    from passprice.checkpointcite import checkpoint_cited

    # the checkpoint the pass's bytes are read from, and where it came from (walkthrough 25)
    cited = checkpoint_cited(root, subject.header, cost_json(result.cost))
    if subject.lock is not None:  # the origin the lock pinned, where today's entry states another (leftovers 28)
        cited = cited.pinned_by(subject.lock)
    from passprice.sourcenotes import notes_lines, notes_markdown, with_notes

    # each cited document's caveat, its source record's note (walkthrough 25)
    cited_ids = cited_sources(result)  # the facts' documents and those their derivations' figures cite
    from passprice.sources import stored_texts

    # each cited document's stored excerpt, read once: its problem said, and the quotes checked against it
    texts = stored_texts(root, sources, [*cited_ids, *(c.source for c in calibration)])
    since: tuple[Any, ...] = ()
    compared = True  # whether a lock's source records could be compared with those at its commit
    at: Any = None  # the lock's commit and its stored excerpts there
    excerpted = any(t.excerpt for t in texts.values())
    if subject.lock is not None and subject.reference is not None:
        # a lock pins source ids, not documents: a record changed since the lock was committed is said (session 24)
        from passprice.locks import lock_path
        from passprice.sourcechange import read_at_lock

        # walkthrough 31: a lock no commit holds (handed over outside git) is said to be audited on today's records;
        # the excerpts committed with the lock read by the same git calls (tests/test_left131.py)
        looked: list[str] = []  # why its commit was not taken at its path (issue 13: an index flag, a git stopped)
        since, compared, at = read_at_lock(root, lock_path(root, subject.reference), cited_ids, sources,
                                           list(texts) if excerpted else [], looked)
        for line in looked:
            click.echo(f"passprice: warning: {line}", err=True)
    from passprice.sourcechange import UNCOMPARED

    uncompared = [] if compared else [f"  sources       {UNCOMPARED}"]
    at_lock: dict[str, Any] | None = None  # which stored excerpts a lock's quotes were checked against
    excerpts_said: str | None = None
    if subject.lock is not None and subject.reference is not None and excerpted:
        from passprice.sourcechange import excerpts_line

        # the excerpts committed with the lock where today's differ, and say which were read (a new user's audit of
        # an old lock found a hyphen NOT FOUND in an excerpt that an em dash had since replaced)
        replaced = []
        for sid, then in (at[1] if at is not None else {}).items():
            now = texts.get(sid)
            # the text and its pages: a line moved to another page is another stored text for a quote naming a page
            if now is not None and now.problem is None and (then.flat, dict(then.pages)) != (now.flat, dict(now.pages)):
                texts[sid] = then
                replaced.append(sid)
        at_lock = {"commit": at[0] if at is not None else None, "replaced": sorted(replaced)}
        if at is None or replaced:
            excerpts_said = excerpts_line(at[0] if at is not None else None, replaced)
    from passprice.audit import stack_reach

    # how far the expected price lies from where its stack was fitted, in the audit's body (walkthrough 38)
    reach = stack_reach(root, subject)
    if reach is not None and subject.lock is not None:  # as audit SERVING --stack and price --stack warn
        spanned = reach.span.warning() if reach.span is not None and reach.span.runs else None
        for line in [*reach.warnings, *([spanned] if spanned else [])]:
            click.echo(f"passprice: warning: {line}", err=True)
    if fmt == "json":
        from passprice.registry import registry_named

        data = audit_json(result, report.extra(), stale, sources, subject.routing, texts, registry_named(root))
        data["sources"] = with_notes(data["sources"], sources)
        extra: dict[str, Any] = {}
        if subject.lock is not None:
            extra = {"sources_since_lock": [s.to_json() for s in since], "sources_compared": compared,
                     # what identifies the price a paper cites (walkthrough 36)
                     "lock_digest": subject.lock.info.digest,
                     "excerpts_at_lock": at_lock,
                     "pricing_model": subject.lock.info.pricing_model if subject.lock.info.format >= 2 else None}
        if reach is not None:
            extra.update(reach.to_json())
        _echo_json({**data, "checkpoint": cited.to_json(), **extra, **_defaulted_json(subject.header)})
    elif fmt == "markdown":
        from passprice.tables import markdown_prose

        click.echo(audit_markdown(result, title, sources, stale, calibration, subject.routing, subject.draft,
                                  BUILT_IN if root.embedded else "", texts, root.path if root.embedded else None))
        from passprice.architectures import defaulted_window

        said = defaulted_window(subject.header)
        if said is not None:  # as price says it (arch44: audit priced gemma2's 4,096 without a word)
            click.echo(f"\n- **defaulted** {markdown_prose(said.line())}")
        pinned: list[str] = []
        if subject.lock is not None:  # what identifies the price a paper cites (walkthrough 36)
            pins, cite = lock_pins(subject.lock, subject.reference)
            pinned = ["", f"**lock** {markdown_prose(pins)} ({markdown_prose(cite)})"]
        reached = [] if reach is None or not reach.markdown_lines() else ["", *reach.markdown_lines()]
        click.echo("\n".join([*reached, "", *notes_markdown(sources, cited_ids), *pinned, "", *cited.markdown_lines(),
                              *([""] + [f"- ⚠️ {markdown_prose(s.line())}" for s in since] if since else []),
                              *(["", f"- {markdown_prose(excerpts_said)}"] if excerpts_said else []),
                              *(["", f"- {markdown_prose(UNCOMPARED)}"] if uncompared else [])]))
    else:
        click.echo(audit_text(result, title, sources, stale, calibration, subject.routing, subject.draft,
                              BUILT_IN if root.embedded else "", texts, root.path if root.embedded else None))
        _echo_defaulted(subject.header)  # as price says it (arch44: audit priced gemma2's 4,096 without a word)
        noted = notes_lines(sources, cited_ids)
        pinned = []
        if subject.lock is not None:  # what identifies the price a paper cites (walkthrough 36)
            pins, cite = lock_pins(subject.lock, subject.reference)
            pinned = ["", f"lock          {pins}", f"              {cite}"]
        reached = [] if reach is None or not reach.lines() else ["", *reach.lines()]
        click.echo("\n".join([*reached, *(["", *noted] if noted else []), *pinned, "", *cited.text_lines(),
                              *(["", *(f"  since lock    {s.line()}" for s in since)] if since else []),
                              *(["", f"  excerpts      {excerpts_said}"] if excerpts_said else []),
                              *(["", *uncompared] if uncompared else [])]))
    for s in since:
        click.echo(f"passprice: warning: {s.line()}", err=True)
    if report.warning and fmt != "json":
        click.echo(f"\n{report.warning}")
    if report.warning:
        click.echo(f"passprice: warning: lock {target} does not reproduce its recorded price", err=True)
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)


# --- reviewing fact changes ------------------------------------------------------------------------------------------


@cli.command("diff")
@click.argument("base", required=False)
@click.argument("head", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "markdown", "comment", "json"]), default="text", show_default=True,
    help="text for people, markdown for a pull-request comment (comment: the same behind the marker the sticky "
    "comment is found by), json for programs.",
)
@click.option("--repository-url", metavar="URL", help="Link files and changed lines in markdown: the repository's "
              "address (https://github.com/OWNER/NAME).")
@click.option("--ref", metavar="SHA", help="The commit (or branch) --repository-url links to (the head of the change).")
@_json_option
@click.pass_context
def diff_command(
    ctx: click.Context, base: str | None, head: str | None, fmt: str, repository_url: str | None, ref: str | None,
    as_json: bool,
) -> None:
    """Compare BASE and HEAD: each changed fact (old and new value, provenance, citation), checkpoint, serving, lock
    policy and the pricing model, and every lock re-priced with each side's inputs and code. BASE and HEAD are git
    revisions or folders (default: the merge base with main, else origin/main, master or origin/master, and the
    work tree). Exit 1 when a change breaks a
    lock's floors, moves a locked price without re-locking it, or leaves a derived fact stale (the locks resting on
    it are marked), 2 when a file does not read on HEAD."""
    from passprice.comment import Links
    from passprice.review import diff, render

    if (repository_url is None) != (ref is None):
        raise click.UsageError("give --repository-url and --ref together")
    links = Links.of(repository_url, ref)
    result = diff(_root(ctx), base, head)
    ctx.meta[STATUS] = result.exit_status  # the review's verdict stands if the reader leaves mid-report
    if as_json or fmt == "json":
        _printed_json()
    click.echo(render(result, "json" if as_json else fmt, links))
    if result.exit_status == 2:
        for line in result.head_error_lines():
            click.echo(f"passprice: error: {line}", err=True)
    elif result.exit_status == 1:
        click.echo(f"passprice: refused: {'; '.join(result.refusal_reasons())}", err=True)
    ctx.exit(result.exit_status)


@cli.group("fact", cls=_Subgroup)
def fact_group() -> None:
    """Show one fact of a card, a serving stack, a routing record or (--draft) a drafting method; set or recompute
    a card's or a drafting method's (paths acceptance.N) in place (a stack's or routing record's file is edited by
    hand)."""


def _record_facts(
    root: Any, name: str, path: str | None = None
) -> tuple[str, Path, dict[str, Any], str | None] | None:
    """A routing record's or a serving stack's facts for ``fact show`` (walkthrough 19: an audit lists
    ``routing.hot_share`` and ``stack.share.read``, and ``fact show`` refused both records): (its kind, its file, its
    facts by lock path, its note), or ``None`` when ``name`` is a card's and ``path`` (if given) a card fact path, or
    names no such record. A card and a record of one name: a ``path`` no card has is looked for in the record
    (``fact show a40 routing.hot_share`` said "not a card fact path", silent on the routing record a40: round 32)."""
    from passprice.cards import is_card_path
    from passprice.files import is_there

    if "/" in name or os.sep in name or name.endswith(".toml"):
        return None
    if is_there(root.cards / f"{name}.toml") and (path is None or is_card_path(path)):
        return None
    records = []
    if is_there(root.routing / f"{name}.toml"):
        from passprice.routing import load_routing

        routing = load_routing(root, name)
        records.append(("routing record", root.routing / f"{name}.toml", routing.facts(), routing.note))
    if is_there(root.stacks / f"{name}.toml"):
        from passprice.stacks import load_stack

        stack = load_stack(root, name)
        records.append(("serving stack", root.stacks / f"{name}.toml", stack.lock_facts(), stack.note))
    if path is not None:
        # A routing record and a stack of one name: the path is looked for in both (`fact show uniform
        # stack.share.read` said the routing record had no such fact, silent on the stack uniform: round 33).
        held = [r for r in records if _fact_of(r[2], path) is not None]
        records = held + [r for r in records if r not in held]
    return records[0] if records else None


def _fact_of(facts: dict[str, Any], path: str) -> str | None:
    """The lock path of ``facts`` (a routing record's or a stack's, by lock path) that ``path`` names: itself, or
    one whose part after the record's kind (``share.read`` of ``stack.share.read``) it is; else ``None``."""
    return path if path in facts else next((p for p in facts if p.split(".", 1)[1] == path), None)


def _other_records(root: Any, name: str, file: Path) -> str:
    """What else ``name`` names besides the record ``file`` (a card, a routing record, a stack), for the line refusing
    a fact path none of them has: ``; nor a fact path of the card a40 (…)``, ``; nor a fact of the serving stack
    uniform (it has …)``."""
    from passprice.files import is_there

    also = ""
    if is_there(root.cards / f"{name}.toml"):  # a card of the name too: say so (round 32)
        from passprice.cards import CARD_PATHS, HOST_PATHS, TENSOR_PATHS

        paths = ", ".join((*CARD_PATHS, *HOST_PATHS, *TENSOR_PATHS))
        also += f"; nor a fact path of the card {name} ({paths})"
    if file != root.stacks / f"{name}.toml" and is_there(root.stacks / f"{name}.toml"):
        from passprice.stacks import load_stack

        also += f"; nor a fact of the serving stack {name} (it has {', '.join(load_stack(root, name).lock_facts())})"
    return also


def _record_fact_file(root: Any, name: str, path: str) -> Any:
    """Where fact ``path`` of routing record or serving stack ``name`` lives, for ``fact show --history``
    (:class:`passprice.edit.FactFile`: its file, ``kind`` ``routing`` or ``stack``, and the fact's table in the file,
    ``hot_share`` or ``share.read``), by the path an audit lists (``routing.hot_share``, ``stack.share.read``,
    ``stack.cards.CARD.share.read``) or without its prefix; ``None`` when :func:`_record_facts` finds no such record
    (a card's fact: the card's history). Raises :class:`InputError` for a path the record has not, naming those it
    has."""
    from passprice.edit import FactFile

    record = _record_facts(root, name, path)
    if record is None:
        return None
    kind, file, facts, _ = record
    full = path if path in facts else next((p for p in facts if p.split(".", 1)[1] == path), None)
    if full is None:
        raise InputError(f"{file}: {path}: no such fact (it has {', '.join(facts)})")
    return FactFile(file, "routing" if kind == "routing record" else "stack", name, full.split(".", 1)[1])


def _show_history(root: Any, where: Any, as_json: bool) -> None:
    """``fact show --history``'s output of ``where`` (:class:`passprice.edit.FactFile`): every version of the fact,
    newest first (:func:`passprice.history.fact_history`)."""
    from passprice.history import fact_history, history_text

    versions = fact_history(root, where)
    if as_json:
        _echo_json({"name": where.name, "kind": where.kind, "path": where.path, "file": str(where.file),
                    "versions": [v.to_json() for v in versions]})
    else:
        shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
        click.echo(history_text(where, versions, str(shown)))


def _fact_file(ctx: click.Context, name: str, path: str | None, draft: bool) -> Any:
    from passprice.edit import locate

    root = _root(ctx)
    return root, locate(root, name, path, draft)


@fact_group.command("show")
@click.argument("name")
@click.argument("path", required=False)
@click.option("--draft", is_flag=True,
              help="NAME is a drafting method (facts/drafts), not a card, serving stack or routing record.")
@click.option("--history", is_flag=True,
              help="Every version of fact PATH, from each git commit that changed it (and uncommitted changes).")
@_json_option
@click.pass_context
def fact_show_command(ctx: click.Context, name: str, path: str | None, draft: bool, history: bool,
                      as_json: bool) -> None:
    """Show fact PATH of NAME, a card, a serving stack (facts/stacks: share.read) or a routing record
    (facts/routing: routing.hot_share), every fact without PATH: value, unit, provenance, source and locator,
    derivation, note. With --history, when it changed, and from what (read through git)."""
    from passprice.edit import read_facts
    from passprice.registry import named_in
    from passprice.report import fact_json, facts_text

    if history and not draft and path is not None:
        record_file = _record_fact_file(_root(ctx), name, path)
        if record_file is not None:  # a routing record's or a stack's fact, as a card's (walkthrough 21)
            _show_history(_root(ctx), record_file, as_json)
            return
    record = None if draft or history else _record_facts(_root(ctx), name, path)
    if record is not None:  # a routing record's or a stack's facts, read-only, by the paths an audit lists
        kind, file, facts, note = record
        if path is not None:
            full = _fact_of(facts, path)
            if full is None:
                also = _other_records(_root(ctx), name, file)
                raise InputError(f"{file}: {path}: no such fact (it has {', '.join(facts)}){also}")
            facts = {full: facts[full]}
        if as_json:
            _echo_json({"name": name, "kind": kind, "file": str(file), "note": note,
                        "facts": {p: fact_json(f) for p, f in facts.items()}})
        else:
            click.echo(facts_text(f"{name} ({named_in(_root(ctx), file)}), a {kind}", facts)
                       + (f"\n\n{kind} note: {note}" if note else ""))
        return
    if history and path is None:
        raise click.UsageError("--history needs the fact's PATH")
    root, where = _fact_file(ctx, name, path, draft)
    if history:
        _show_history(root, where, as_json)
        return
    facts = read_facts(where, root.schema)
    if path is not None:
        if where.path not in facts:
            raise InputError(f"{where.file}: {where.path}: no such fact (it has {', '.join(facts)})")
        facts = {where.path: facts[where.path]}
    # A drafting method's [method] note, which its figures' citations point to ("[method] note and this figure's
    # note"), shown as a routing record's is (`audit` showed it, `fact show --draft` did not: leftovers 27b).
    note = _method_note(root, where.file) if where.kind == "draft" else None
    if as_json:
        _echo_json({"name": where.name, "kind": where.kind, "file": str(where.file),
                    "facts": {p: fact_json(f) for p, f in facts.items()},
                    **({"note": note} if where.kind == "draft" else {})})
    else:
        # The card file relative to the root, as every other command names a registry file in text (left31: the
        # absolute path was printed); --json keeps the absolute "file".
        click.echo(facts_text(f"{where.name} ({named_in(root, where.file)})", facts)
                   + (f"\n\ndrafting method note: {note}" if note else ""))


def _method_note(root: Any, file: Path) -> str | None:
    """The ``[method]`` note of the drafting method in ``file`` (``None`` when it has none), as
    :func:`passprice.drafts.load_draft_method` reads it. Raises :class:`InputError` as that does."""
    from passprice.drafts import load_draft_method

    return load_draft_method(root, str(file)).note


@fact_group.command("recompute")
@click.argument("name")
@click.argument("path", required=False)
@click.option("--draft", is_flag=True, help="NAME is a drafting method (facts/drafts), not a card.")
@_json_option
@click.pass_context
def fact_recompute_command(ctx: click.Context, name: str, path: str | None, draft: bool, as_json: bool) -> None:
    """Recompute derived fact PATH of card NAME (or, with --draft, of a drafting method) from today's facts, in
    place (without PATH: every derived fact of NAME that no longer follows from its inputs, inputs first): its value
    from its formula, its fact inputs' recorded values today's; provenance, source, locator and note kept. What
    `check` and `diff` name stale. A serving stack's or routing record's facts are not recomputed here (exit 2)."""
    from passprice.edit import provenance_kept, recompute_fact, recompute_record
    from passprice.report import fact_json

    root, where = _fact_file(ctx, name, path, draft)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    if path is not None:
        one = recompute_fact(where, root.schema, root)
        edits = [one] if one is not None else []
    else:
        edits = recompute_record(where, root.schema, root)
    shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
    kept = provenance_kept(edits)
    from passprice.addedfacts import MEASURED_ELSEWHERE, warning_json
    from passprice.lineage import borrowed_in

    # a copied card's measurement kept as its own (walkthrough 117): on stderr, and in --json's warnings
    borrowed = borrowed_in(root, where.file) if edits and not draft else []
    if as_json:
        _echo_json({"file": str(where.file), "recomputed": [
            {"path": e.where.path, "old": fact_json(e.old) if e.old is not None else None, "new": fact_json(e.new)}
            for e in edits
        ], "provenance_kept": kept, "warnings": [warning_json(MEASURED_ELSEWHERE, line) for line in borrowed]})
        return
    for e in edits:
        old = e.old.describe() if e.old is not None else "(new)"
        click.echo(f"{shown}: {e.where.path}: {old} -> {e.new.describe()} (recomputed from today's inputs)")
    if kept is not None:
        click.echo(f"{shown}: {kept}")
    for line in borrowed:
        click.echo(f"passprice: warning: {line}", err=True)
    if not edits:
        what = f"{path} follows" if path is not None else "every derived fact follows"
        click.echo(f"{shown}: nothing to recompute: {what} from its inputs")


@fact_group.command("set")
@click.argument("name")
@click.argument("path")
@click.option("--value", required=True, help="The figure, in --unit (a finite number).")
@click.option("--unit", required=True, help="Its unit, exactly: GB, GiB, TB/s, TMAC/s, Tcycle/s, 1 …")
@click.option("--provenance", required=True, help="published, measured, derived, estimated or assumed.")
@click.option("--source", "source_id", required=True, metavar="ID",
              help="The source it comes from: a record in sources/ (passprice sources lists them).")
@click.option("--locator", required=True, help="Where in the source: table, row, column, page, quoted figure.")
@click.option("--note", help="Basis of an estimate, what a device reports, caveats.")
@click.option("--derivation", metavar="TABLE",
              help='How it is computed (required for derived), a TOML inline table: {formula = "dot / bandwidth", '
              'digits = 4, inputs = {dot = {value = 4.48, unit = "TB/s", locator = "…"}, bandwidth = {fact = '
              '"memory.bandwidth"}}}; a fact input without value and unit takes the fact\'s.')
@click.option("--cite", hidden=True, help="Replaced by --source and --locator.")
@click.option("--draft", is_flag=True, help="NAME is a drafting method (facts/drafts), not a card.")
@_json_option
@click.pass_context
def fact_set_command(
    ctx: click.Context,
    name: str,
    path: str,
    value: str,
    unit: str,
    provenance: str,
    source_id: str,
    locator: str,
    note: str | None,
    derivation: str | None,
    cite: str | None,
    draft: bool,
    as_json: bool,
) -> None:
    """Set fact PATH of card NAME (or, with --draft, of a drafting method) in place, keeping the file's comments
    and layout; a serving stack's or routing record's file is edited by hand (exit 2 says so). The entry is replaced
    whole: a note or derivation not given is removed. An edit that would leave the file invalid is refused (exit 2)
    and the file is left untouched. Derived facts the edit leaves stale are named on stderr (passprice: warning: …)."""
    from passprice.edit import edit_fact, parse_derivation, parse_value, read_facts
    from passprice.report import fact_json

    if cite is not None:
        raise InputError("--cite: a fact cites a source record now: give --source ID (passprice sources lists them; "
                         "add sources/ID.toml for a new document) and --locator 'table, row, figure'")
    root, where = _fact_file(ctx, name, path, draft)
    if root.embedded:
        raise InputError(
            f"{_read_only(root)}; start a registry of your own with `passprice init DIR`, "
            "run inside one (or a checkout), or name one before the command: passprice --root DIR COMMAND"
        )
    value, unit = _require_unicode(value, "--value"), _require_unicode(unit, "--unit")
    provenance, source_id = _require_unicode(provenance, "--provenance"), _require_unicode(source_id, "--source")
    locator, note = _require_unicode(locator, "--locator"), _require_unicode(note, "--note")
    derivation = _require_unicode(derivation, "--derivation")
    entry = {
        "value": parse_value(value),
        "unit": unit,
        "provenance": provenance,
        "source": source_id,
        "locator": locator,
        "note": note,
        "derivation": parse_derivation(derivation, read_facts(where, root.schema)) if derivation else None,
    }
    edit = edit_fact(where, entry, root.schema, root)  # read, edited and replaced under a lock on the file
    stale = edit.stale()
    shown = where.file.relative_to(root.path) if where.file.is_relative_to(root.path) else where.file
    if not as_json:
        old = f"{edit.old.describe()} ({edit.old.provenance.value})" if edit.old is not None else "(new)"
        state = "" if edit.changed else " (unchanged)"
        if edit.changed and edit.old is not None:
            # walkthrough 39: "0.92 (measured) -> 0.92 (measured)" of an edit that added a note said nothing of it;
            # every part the line does not show is named, in the review's words (walkthrough 57)
            from passprice.factparts import change_said

            was, now = edit.old, edit.new
            seen = {"value", "unit"} if was.describe() != now.describe() else set()
            seen |= {"provenance"} if was.provenance != now.provenance else set()
            what = change_said(was, now, leave=frozenset(seen))
            state = f" ({what})" if what else "" if seen else " (as written changed)"
        click.echo(f"{shown}: {where.path}: {old} -> {edit.new.describe()} ({edit.new.provenance.value}){state}")
    from passprice.addedfacts import MEASURED_ELSEWHERE

    # every warning, in the order stderr gives them: (code, text), the text as printed after "passprice: warning: "
    # (--json's warnings: walkthrough 117's copied measurements were on stderr alone)
    warned: list[tuple[str, str]] = [("stale", f"{shown}: {found.message}") for found in stale]
    from passprice.edit import cautions

    said = cautions(edit, root.schema) if edit.changed else []
    # A derived fact whose recomputed value its schema refuses is not one `fact recompute` can write (it would be
    # refused): the hint named a command that failed (session 15).
    fixable = [f.path for f in stale if f.kind in ("stale", "mismatch") and f.path != where.path
               and not any(f" would make {f.path}, derived from it," in line for line in said)]
    if fixable:
        # The stale warnings said what each recomputes to, not how to write it (session 15's walkthrough found the
        # command only in diff's refusal, after the pull request failed). The whole record is recomputed only when
        # that leaves the fact just set as given.
        flag = " --draft" if draft else ""
        commands = ([f"passprice fact recompute {shell_word(name)}{flag}"] if len(fixable) == len(stale)
                    else [f"passprice fact recompute {shell_word(name)} {path}{flag}" for path in fixable])
        them = "it" if len(fixable) == 1 else "them"
        from passprice.lineage import borrowed_in

        borrowed = borrowed_in(root, where.file) if not draft else []
        once = (" once the measurements they rest on are this card's (below: another card's measured facts cite the "
                "same places)") if any(f": {p} is measured but " in line for line in borrowed for p in fixable) else ""
        warned.append(("recompute", f"{shown}: {'; '.join(f'`{c}`' for c in commands)} writes {them} from "
                                    f"today's inputs{once} (`passprice diff` fails a change that leaves a derived fact "
                                    "stale)"))
        warned += [(MEASURED_ELSEWHERE, line) for line in borrowed]
    warned += [("caution", f"{shown}: {line}") for line in said]
    if edit.changed:
        from passprice.lineage import quote_problems

        # check's line for a quote of the fact its stored excerpt lacks, or one stating another figure: written all
        # the same (the excerpt may be about to be updated), said now rather than by the next check
        # (tests/test_fix53w.py: a locator set to 'Peak Memory Bandwidth 8.2 TB/s' was written without a word)
        warned += [("quote", line) for line in quote_problems(root, only=(where.file, where.path))]
    if not draft and edit.old is not None and edit.new.provenance.weaker_than(edit.old.provenance):
        from passprice.locks import MAX_FLOOR_WARNINGS, floors_below
        from passprice.registry import pasted_path

        below = floors_below(root, name, where.path, edit.new.provenance)
        for lock, file, floor in below[:MAX_FLOOR_WARNINGS]:
            relock = (f"passprice lock --update -o {shell_word(pasted_path(root, file))} --force --require "
                      f"{where.path}={edit.new.provenance.value}")
            warned.append(("below_floor", f"{shown}: {where.path} is {edit.new.provenance.value} now, below the "
                                          f"floor {floor.value} of lock {lock}: `passprice check` (the pre-commit "
                                          "hook) and the review fail it; restore the fact, or loosen that floor on "
                                          f"purpose (`{relock}`)"))
        if len(below) > MAX_FLOOR_WARNINGS:
            more = len(below) - MAX_FLOOR_WARNINGS
            warned.append(("below_floor", f"{shown}: and {more:,} more lock{'s' if more > 1 else ''} below "
                                          f"{'their floors' if more > 1 else 'its floor'} for {where.path} "
                                          "(`passprice check` lists every one)"))
    if as_json:
        from passprice.addedfacts import warning_json

        _echo_json({"file": str(where.file), "path": where.path, "changed": edit.changed,
                    "old": fact_json(edit.old) if edit.old is not None else None, "new": fact_json(edit.new),
                    "stale": [f.to_json() for f in stale], "warnings": [warning_json(c, t) for c, t in warned]})
    for _, text in warned:
        click.echo(f"passprice: warning: {text}", err=True)


@cli.command("sweep")
@click.argument("servings", nargs=-1)
@click.option("--file", "sweep_file", type=_FilePath(), help="A sweep TOML file.")
@click.option("--cards", help="Cards, comma-separated, or 'all' (default: each serving's own card).")
@click.option("--batches", default="1-4096*2", show_default=True, help="Batches: 1,2,8 or 1-64 or 1-4096*2.")
@click.option("--positions", help="Mean context positions (default: each serving's own contexts).")
@click.option("--limit", type=_int("--limit"),
              help="Context each sequence is allowed (positions), in place of each serving's contexts, as price's "
                   "--limit (at its half, or at each of --positions; default: each serving's own).")
@click.option("--draft-tokens", "draft_tokens", help="Drafted tokens per pass, e.g. 0,1,2,3 (default: the serving's).")
@click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path, swept on every card (or --cards) "
                                   "with no serving; with SERVINGS, in place of each one's, as price's --checkpoint.")
@click.option("--routing", help="Routing record (facts/routing name) a mixture of experts is priced with, in place of "
                                "each serving's, as price's --routing.")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]),
              help="Rows as csv or json (default: the -o file's suffix, .json or .csv; csv on stdout).")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option("-o", "--output", type=_OutputPath(stdout=True), help="Write here (default or '-': stdout).")
@_plot_option("tokens/s against the batch, one line a serving on a card, the best batch marked")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--stack", metavar="S", help="Add serving stack S's expected price (facts/stacks) to every row.")
@click.option("--max-tpot", "max_tpot", type=_float("--max-tpot"), metavar="SECONDS",
              help="TPOT cap: add each row's tpot_s and within_max_tpot, mark each line's best batch within the cap "
                   "(--plot, and a summary on stderr); rows keep their prices.")
@click.option("--memory-use", "memory_use", type=_float("--memory-use"), metavar="FRACTION",
              help="Memory headroom for every serving swept (default: each serving's own memory_use, else 1): a row "
                   "holding more than that fraction of card memory is refused (NotResident), its capacity_bytes the "
                   "fraction's.")
@click.option("--max-rows", "max_rows", type=_int("--max-rows"), default=1 << 20,  # sweep.DEFAULT_MAX_ROWS
              show_default=True,
              help="Refuse a larger grid (a row under --stack counts as 20, a JSON row as 2, a pass shape as 2,000, "
                   "a position past 64 as 150).")
@click.option("--jobs", "jobs", type=_int("--jobs"), default=None,
              help="Processes pricing the grid, the same text whatever their number (at most the CPUs, 2 at least; "
                   "default: the idle CPUs, at most 4, for 131,072 rows or more; 1 with --plot or --max-tpot).")
@_lock_options
@click.pass_context
def sweep_command(
    ctx: click.Context,
    servings: tuple[str, ...],
    sweep_file: Path | None,
    cards: str | None,
    batches: str,
    positions: str | None,
    limit: int | None,
    draft_tokens: str | None,
    checkpoint: str | None,
    routing: str | None,
    fmt: str | None,
    as_json: bool,
    output: Path | None,
    plot_path: Path | None,
    force: bool,
    stack: str | None,
    max_tpot: float | None,
    memory_use: float | None,
    max_rows: int,
    jobs: int | None,
    lock_ref: str | None,
    no_lock: bool,
) -> None:
    """Price a grid: SERVINGS (default: every registered serving; with --checkpoint C and no SERVINGS, C with no
    serving, on every card) x cards x draft tokens x positions x batches, as CSV or JSON rows, each with its bind
    and weakest provenance (or its refusal)."""
    import numpy as np

    from passprice.serving import U32_MAX
    from passprice.sweep import (
        ROUTING_REFUSALS,
        Grid,
        Sweeper,
        grid_from_file,
        nothing_priced,
        output_format,
        parse_batches,
        parse_numbers,
        refused_row,
        require_suffix,
        routing_refusal,
        text_chunks,
    )
    from passprice.sweepjobs import default_jobs, shared_chunks

    root = _root(ctx)
    _check_output(output, force)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
    _check_inputs([("--file", sweep_file), *(("SERVINGS", s) for s in servings),
                   *(("--cards", c) for c in (cards or "").split(",") if c.endswith(".toml"))],  # else a name
                  [("-o", output), ("--plot", plot_path)])
    _check_plot(plot_path, force, root, output)
    locked_stack = _lock_stack(root, lock_ref, None, None)  # --lock L made under a stack: its expected price
    if stack is None and locked_stack is not None:
        if max_tpot is None:
            stack = locked_stack
        else:  # one line, never the limit shown silently as the lock's price
            click.echo(f"passprice: warning: lock {lock_ref} was made under stack {locked_stack}, but --max-tpot caps "
                       f"the limit's TPOT: these rows are the card's limit, without {locked_stack}'s expected price",
                       err=True)
    if max_tpot is not None and stack is not None:
        raise click.UsageError("--max-tpot caps the limit's TPOT, not a stack's expected price: give --max-tpot or "
                               "--stack, not both (best SERVING --stack S --max-tpot T caps the expected best)")
    if sweep_file is not None:
        # The file describes the whole grid: an axis given on the command line too would be silently ignored.
        given = [f"--{name.replace('_', '-')}" for name in ("cards", "batches", "positions", "draft_tokens")
                 if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
        if checkpoint is not None or routing is not None or limit is not None:  # a sweep file names servings only
            what = " and ".join(o for o, v in (("--checkpoint", checkpoint), ("--routing", routing), ("--limit", limit))
                                if v is not None)
            raise click.UsageError(f"--file describes the whole grid, and a sweep file takes no {what}: sweep the "
                                   f"file's servings on the command line with {what} (sweep SERVINGS {what} …)")
        if servings or given:
            what = ", ".join((["SERVINGS"] if servings else []) + given)
            raise click.UsageError(f"--file describes the whole grid: give {what} in the file, not on the command line")
        grid = grid_from_file(sweep_file, root)
    else:
        from passprice.compare import parse_cards

        _whole_limit(limit, positions is not None, "--positions 0")
        card_list = None
        named_cards = parse_cards(cards) if cards is not None else ()  # one reading of --cards (fix181)
        if named_cards is None or (cards is None and checkpoint is not None and not servings):
            card_list = tuple(root.names(root.cards))  # a checkpoint alone has no card of its own: every card
        elif cards is not None:
            card_list = named_cards
        names, checkpoint, routing = _swept(ctx, servings, card_list, checkpoint, routing)
        grid = Grid(
            servings=names,
            checkpoint=checkpoint,
            routing=routing,
            limit=limit,
            batches=parse_batches(batches, "--batches", most=U32_MAX),
            cards=card_list,
            positions=parse_numbers(positions, float, "--positions") if positions is not None else None,
            draft_tokens=(
                parse_numbers(draft_tokens, int, "--draft-tokens", most=64) if draft_tokens is not None else None
            ),
        )
    if as_json and fmt == "csv":
        raise click.UsageError("--json and --format csv ask for two formats: give one")
    named_format = "json" if as_json else fmt  # None: the -o file's suffix says it (or stdout: csv)
    fmt = output_format(named_format, output)
    # Every registered serving (or card) swept: names that differ only by case or Unicode normalization, or that name
    # a Windows device, are a problem, as the listings say (rows of two servings that print alike, exit 0: attack
    # round 33); the grid is still swept, and the command exits 2 after it.
    from passprice.check import relative_lines
    from passprice.sweep import every_registered_problems

    twins = every_registered_problems(root, grid)

    _problems(relative_lines(root, twins))
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        try:
            the_stack = load_stack(root, stack)
        except NotFound as e:  # said with every wrong name of the grid (round 18: the stack alone, 1 of 3)
            try:
                Sweeper(root, None, max_rows, fmt == "json", memory_use).check(grid)
            except InputError as more:
                raise InputError.of([*more.lines, *e.lines]) from None
            raise
    sweeper = Sweeper(root, the_stack, max_rows, fmt == "json", memory_use)
    try:
        sweeper.check(grid)
    except InputError as e:
        # A sweep of every registered card or serving is a listing: a registry file that does not read is named as
        # check and the listings name it, relative to the root (`sweep --cards all` with one broken card said
        # /…/root/facts/cards/zz.toml: issue 13's leftovers, session 26); a sweep of named ones, as every pricing
        # command names its files (as given).
        relative = relative_lines(root, e.lines)
        if sweep_file is None and ((cards or "").strip() == "all" or not servings) and relative != list(e.lines):
            raise InputError.of(relative) from None
        raise
    named = "SERVINGS" if grid.source is None else f"{grid.source}: servings"
    from passprice.sweep import swept_spec

    _check_inputs(_read_through(root, [(f"{named}.{i}" if grid.source else named, ref)
                                       for i, ref in enumerate(grid.servings) if isinstance(ref, str)],
                                [(f"{grid.source}: cards.{i}" if grid.source else "--cards", ref)
                                 for i, ref in enumerate(grid.cards or ())], stack,
                                [swept_spec(root, grid, ref) for ref in grid.servings if not isinstance(ref, str)]),
                  [("-o", output), ("--plot", plot_path)])
    require_suffix(output, named_format)  # after the refusals that say more: a record, an input
    # A serving's memory_use (its file's, or --memory-use for all) bounds each row's capacity_bytes (moe43): a row
    # holding more is refused as the best and largest batch's searches exclude it (it was read and ignored, with a
    # warning since left34).
    if the_stack is not None:  # the cards swept that its runs never measured, in one line

        own = [swept_spec(root, grid, ref).card for ref in grid.servings] if grid.cards is None else list(grid.cards)
        _stack_warnings(root, the_stack, [Path(c).name.removesuffix(".toml") for c in own])
        outside = _outside_line(the_stack.name, _sweep_spans(root, the_stack, grid))
        if outside:  # as price --stack says it, for each (serving, card) of the grid (walkthrough 21)
            # the contexts --limit N set, where it is given (they were said to be each serving's own)
            at = ("each serving's own batch and contexts" if grid.limit is None
                  else f"each serving's own batch, at the contexts --limit {grid.limit:,} sets")
            click.echo(f"passprice: warning: {outside} ({at}; a row lies outside where its expected_tokens_per_s / "
                       "tokens_per_s does)", err=True)
    under: list[str] = []

    def judged() -> None:
        # The servings judged under their locks (a floor breached exits 1 before a row is written): done once the
        # grid's workers are forked, while they price their parts (passprice.sweepjobs), else before pricing.
        under.extend(_sweep_locks(root, grid.servings, lock_ref, no_lock, grid.cards, grid.positions, max_tpot,
                                  grid.draft_tokens, memory_use, grid.checkpoint, grid.routing, grid.limit))

    total = grid.size()
    if total >= 1 << 16:  # its text made a group of rows at a time: the heap's freed pages kept (passprice.heapkeep)
        from passprice.heapkeep import keep_freed

        keep_freed()
    # Rows are streamed a block at a time, never held whole: to stdout as they are priced, or to a temporary file
    # renamed into place at the end (so -o FILE is never half-written). A fact or element size far out of range
    # overflows in the arrays; text_chunks refuses such a row (on stdout, after the blocks before it). A picture
    # gathers its lines' points as the blocks go (a line of many batches thinned: plots.SweepLines), and is drawn
    # and written before -o FILE is put in place, so a picture that cannot be drawn or written leaves no file.
    lines = None
    if plot_path is not None:
        from passprice.plots import SweepLines

        lines = SweepLines()
    best = None
    if max_tpot is not None:  # each line's best batch within the cap (passprice.sweepcap)
        from passprice.sweepcap import BestWithin

        best = BestWithin(max_tpot)

    def keep(segments: Iterator[Any]) -> Iterator[Any]:
        for segment in segments:
            if lines is not None:
                c = segment.common
                lines.add(c["serving"] or c["checkpoint"], c["card"], c["position"], c["draft_tokens"],
                          *segment.prices())
            if best is not None:
                best.add(segment)
            yield segment

    def drawn(chunks: Iterator[Any]) -> Generator[Any, None, None]:
        if lines is None or plot_path is None:
            yield from chunks
            return
        # The last block (the JSON's closing `]`) is held until the picture is written, before -o's rename too: a
        # picture that fails (a full disk) then ends the streamed array with the error document, never after a
        # whole array that reads as a success (attack round 57: `sweep --json --plot /sys/x.png` printed every row
        # and the `]`, then exit 2; the folder's probe, files.check_writable, now refuses that one up front).
        held = None
        for chunk in chunks:
            if held is not None:
                yield held
            held = chunk
        from passprice.plots import draw_sweep, picture_format, write_picture

        capped, cap = (best.capped(), best.cap) if best is not None else (None, "")
        write_picture(plot_path, draw_sweep(lines.lines(), picture_format(plot_path), "", capped, cap), force)
        if held is not None:
            yield held

    with contextlib.ExitStack() as exits:
        exits.enter_context(np.errstate(all="ignore"))
        progress: Callable[[int], None] | None = None
        if total >= 20_000 and _terminal():
            bar: Any = exits.enter_context(click.progressbar(length=total, label="pricing", file=sys.stderr))
            progress = _every_percent(bar.update, total)
        # The grid shared among processes (passprice.sweepjobs), the same text; a picture's lines are gathered from
        # every segment here, so a sweep with --plot is one process.
        jobs = 1 if lines is not None or best is not None else jobs or default_jobs(grid)
        if best is not None:
            from passprice.sweepcap import capped_chunks

            judged()
            made: Iterator[Any] = capped_chunks(
                keep(sweeper.segments(grid, progress=progress)), fmt, best.max_tpot, binary=True
            )
        elif jobs > 1 and output is not None:
            # The processes write their blocks straight into the output's temporary file, each at its turn.
            from passprice.files import Placed, target
            from passprice.sweepjobs import write_shared

            folder = target(output).parent
            made = iter([Placed(lambda fd, at: write_shared(sweeper, grid, fmt, jobs, fd, at, progress, folder,
                                                            judged))])
        elif jobs > 1:
            # To standard output: blocks taken by whichever process is free, as -o FILE's; a block given as it is
            # made when its turn has come, else copied from the file it was made into, in the kernel
            # (files.append_to_stream), never read into this process.
            made = shared_chunks(sweeper, grid, fmt, jobs, progress, None, ready=judged)
        else:
            judged()
            # CSV to standard output stays text: click writes a name that is not ASCII in the stream's encoding.
            binary = output is not None or fmt == "json"
            made = text_chunks(keep(sweeper.segments(grid, progress=progress)), fmt, binary=binary)
        chunks = exits.enter_context(contextlib.closing(drawn(made)))  # closed (workers reaped) on any way out
        if output is None:
            from passprice.files import Appended, append_to_stream

            streamed = None
            if fmt == "json":
                from passprice.jsonerror import StreamedArray

                # Its rows stream: a failure after some ends the array with its document as the last element
                # (_failure_document; session 31: a partial array), never a second document.
                _printed_json()
                streamed = ctx.meta[STREAMED] = StreamedArray()
            for chunk in chunks:
                if isinstance(chunk, Appended):  # a block made ahead of its turn (--jobs N), copied from its file
                    copied = append_to_stream(chunk.fd, sys.stdout, chunk.start, chunk.stop)
                    if streamed is not None and copied:
                        # Its first bytes (the grid's first block, made by a worker, opens the array) and its last.
                        head = os.pread(chunk.fd, min(copied, 64), chunk.start)
                        tail = min(copied, 8)
                        streamed.wrote(head + os.pread(chunk.fd, tail, chunk.start + copied - tail), whole=False)
                    continue
                # JSON comes as bytes (ASCII), written as they are; ASCII text without an escape character (CSV
                # unless a name holds one) is written as bytes too: the text click would write, without its search
                # for ANSI codes over the whole text (0.07 s of CPU per 100 MB).
                plain = isinstance(chunk, str) and chunk.isascii() and "\x1b" not in chunk
                click.echo(chunk.encode("ascii") if plain else chunk, nl=False)
                if streamed is not None:
                    streamed.wrote(chunk)
        else:
            from passprice.files import write_atomically

            write_atomically(output, chunks, force=force)
    if output is not None:
        click.echo(f"{total:,} row{'' if total == 1 else 's'} -> {shown_path(output)}", err=True)
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)
    # Lines for people: a checkpoint path's U+202E escaped, as --json escapes it (its CSV cell keeps the bytes; left43)
    # (each line of a message escaped, its own line breaks kept: a lock's drift lines follow it; test_slip_44)
    def explain(common: Any, batch: int) -> Any:
        return refused_row(sweeper, grid, common, batch)

    for line in best.summary(explain) if best is not None else ():
        click.echo(f"passprice: {_escaped_lines(line)}", err=True)
    for line in under:
        click.echo(f"passprice: {_escaped_lines(line)}", err=True)
    # A window priced from llama.cpp's default (gemma2 without its key): one line a checkpoint on stderr, as price's
    # `defaulted` line says it, never a column of every row (arch44: the sweep priced 4,096 without a word).
    for line in sweeper.defaulted(grid):
        click.echo(f"passprice: defaulted: {escaped(line)}", err=True)
    # Written, but nothing priced: exit 1. A row priced with a price (sweeper.saw_price; with --jobs N every
    # process's, passprice.sweepjobs adding each block's tally) settles it without the probe, which prices the
    # grid's smallest batch again (nothing_priced: 14-20 ms of the bench grid's run, its first 170 lines refused).
    first: dict[str, Any] = {}
    if total and not sweeper.saw_price and (nothing := nothing_priced(sweeper, grid, first)) is not None:
        # each refusal with the message price says of its first line's row (fix181: the names alone said nothing
        # of what to change, where price says "position 8192 is not below its limit 8192 … raise --limit")
        said = "; ".join(_refusal_said(sweeper, grid, name, f"{n:,} line{'s' if n != 1 else ''}", first)
                         for name, n in nothing.items())
        advice = ""
        if ROUTING_REFUSALS & set(nothing) and (routed := routing_refusal(sweeper, grid)) is not None:
            # price's words, with the records that fit its checkpoint (the summary said the name alone: sweep51)
            payload = routed.to_json()
            _routed_records(ctx, payload, routed.header)
            advice = f"; {routed.name}: {routed}{_records_said(payload, routed.header)}"
        click.echo(f"passprice: refused: no row of the sweep has a price: every line is refused at its smallest "
                   f"batch, and at every larger one: {said}; the rows and their refusals were written{advice}",
                   err=True)
        ctx.exit(1)
    elif sweeper.refused:
        # Some rows refused, some priced (the whole grid's, --jobs N or not: passprice.sweepjobs adds every block's
        # tally in grid order, so these lines are the one-process sweep's): one line a refusal on stderr, its count
        # and its first row's message, in the all-refused summary's words (_refusal_said), so a sweep piped to a
        # file is not silent of them. Exit 0: a sweep's refusals are rows, not a failure.
        rows = sweeper.priced_rows + sum(sweeper.refused.values())
        # fewer rows than the grid's only were a block's tally lost: said so, never as the grid's
        share = "" if rows >= total else f" counted of the grid's {total:,}"
        for name, n in sweeper.refused.items():
            said = _refusal_said(sweeper, grid, name, f"{n:,} of {rows:,} row{'s' if rows != 1 else ''}{share}, "
                                 f"{sweeper.priced_rows:,} priced", sweeper.first_refused)
            click.echo(f"passprice: refused: {_escaped_lines(said)}", err=True)


def _refusal_said(sweeper: Any, grid: Any, name: str, count: str, first: Mapping[str, Any]) -> str:
    """What a sweep's summary on stderr says of the refusal ``name``: ``NAME (COUNT)``, and where ``first`` holds its
    first row (``common``, batch) and it is no routing refusal (whose advice follows, with the records that fit),
    that row and the message ``price`` says of it (the names alone said nothing of what to change). The one
    wording of a sweep every row of which is refused and of one some rows of which are."""
    from passprice.bounds import position_text
    from passprice.sweep import ROUTING_REFUSALS, refused_row

    text = f"{name} ({count})"
    refused = refused_row(sweeper, grid, *first[name]) if name in first and name not in ROUTING_REFUSALS else None
    if refused is not None:
        common, at = first[name]
        text += (f" — {common['serving'] or common['checkpoint']} on {common['card']} at position "
                 f"{position_text(common['position'])}, batch {at:,}: {refused}")
    return text


def _terminal() -> bool:
    """Whether standard error is a terminal: a progress bar is drawn there only (in a log or a pipe, click's bar
    printed a bare ``pricing`` line and nothing else)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _every_percent(update: Callable[[int], None], total: int) -> Callable[[int], None]:
    """``update`` (a progress bar's) called with the rows done since its last call once they reach 1 % of
    ``total``, or all of it, not after every block of rows: a bar drawn a hundred times, not a thousand."""
    step = max(1, total // 100)
    pending = done = 0

    def progress(rows: int) -> None:
        nonlocal pending, done
        pending += rows
        done += rows
        if pending >= step or done >= total:
            update(pending)
            pending = 0

    return progress


def _swept(
    ctx: click.Context, servings: tuple[str, ...], cards: tuple[str, ...] | None, checkpoint: str | None,
    routing: str | None,
) -> tuple[tuple[Any, ...], str | None, str | None]:
    """What a sweep of ``servings`` (every registered one when empty) prices, with ``--checkpoint`` and
    ``--routing``: the grid's servings and the checkpoint and routing record that replace each one's. Each is read
    by ``price``'s own path (:func:`_spec`, then :func:`_resolve`: the same names accepted, the same refusals, said
    the same way), so a sweep's rows are priced on what ``price SERVING --checkpoint C --routing R`` prices. With
    ``--checkpoint C`` and no SERVINGS: C alone, with no serving (one spec, the grid's servings), on ``cards``."""
    root = _root(ctx)
    if checkpoint is None and routing is None:
        return servings or tuple(root.names(root.servings)), None, None
    if checkpoint is not None and not servings:
        if ctx.params.get("lock_ref") is not None:  # price --lock L judges a serving L locks; here there is none
            raise click.UsageError("--checkpoint with no SERVINGS sweeps no registered serving, so no lock judges its "
                                   "rows: give --lock L with the serving it locks (sweep SERVING --checkpoint C), or "
                                   "leave --lock out")
        if not cards:  # `--cards ''`, or a registry with none: as the grid says it (sweep.check_grid)
            raise InputError("--cards: no cards (give names, comma-separated, or 'all')")
        # its card is the first swept, a stand-in: the grid's cards replace it (each row's card is the grid's)
        spec = _spec(ctx, None, checkpoint=checkpoint, card=cards[0] if cards else None, routing=routing)[1]
        with _every_name(root, (), cards, cards[:1]):
            _resolve(root, spec, ctx.params.get("stack"))  # a wrong --stack said with them, as price says it
        return (spec,), None, None
    names = servings or tuple(root.names(root.servings))
    from passprice.servings import load_spec

    for ref in names:
        try:
            load_spec(root, ref)
        except InputError:
            continue  # a serving that does not read: the sweep's own check names it with the others
        spec = _spec(ctx, ref, checkpoint=checkpoint, routing=routing)[1]
        with _every_name(root, names, cards):
            _resolve(root, spec, ctx.params.get("stack"))
        if checkpoint is not None:
            checkpoint = spec.checkpoint  # as price names it (`.//M` is the entry M)
    return names, checkpoint, routing


@contextlib.contextmanager
def _every_name(
    root: Any, servings: tuple[str, ...], cards: tuple[str, ...] | None, said: tuple[str, ...] = ()
) -> Iterator[None]:
    """Around price's resolution of a swept serving (or checkpoint): an :class:`InputError` it raises (a
    ``--checkpoint`` or ``--routing`` that names nothing) said with every serving and card of the grid that names
    nothing (:meth:`passprice.sweep.Sweeper.not_found`, the sweep's own look-up; ``said``: the cards the resolution
    looked at itself), one line each: ``sweep --checkpoint nope --cards h200_sxm_141gb,nocard`` named the checkpoint
    alone, and ``nocard`` once it was fixed (sweep51)."""
    try:
        yield
    except InputError as e:
        from passprice.sweep import Grid, Sweeper

        grid = Grid(servings=servings, batches=(1,), cards=cards)
        try:
            more = Sweeper(root).not_found(grid, skip=said)
        except InputError as other:  # a serving or card found that does not read: said too
            more = list(other.lines)
        raise InputError.of(list(dict.fromkeys([*e.lines, *more]))) from None


def _sweep_locks(
    root: Any, servings: tuple[Any, ...], lock_ref: str | None, no_lock: bool, cards: tuple[str, ...] | None = None,
    positions: tuple[float, ...] | None = None, max_tpot: float | None = None,
    draft_tokens: tuple[int, ...] | None = None, memory_use: float | None = None, checkpoint: str | None = None,
    routing: str | None = None, limit: int | None = None,
) -> list[str]:
    """:func:`passprice.enforce.sweep_under` (each registered serving of a sweep judged under its locks): the lines
    naming the locks each is priced under; a floor breached, or ``--lock L`` locking none of them, exits 1."""
    from passprice.enforce import LockFloor, LockRefusal, sweep_under

    if lock_ref is not None and no_lock:
        raise click.UsageError("give --lock L or --no-lock, not both")
    try:
        return sweep_under(root, servings, lock_ref, no_lock, cards, positions, max_tpot, draft_tokens, memory_use,
                           checkpoint, routing, limit)
    except (LockRefusal, LockFloor) as e:
        _refuse(e)


# --- the sketch's questions: KV memory by context, ops:byte, speculative decoding ----------------------------------


@cli.command("kv")
@click.argument("checkpoint")
@click.option(
    "--contexts",
    help="Context sizes in positions (k = 1,024) [default: 4k, 32k, 128k below the model's context, and its own].",
)
@click.option(
    "--kv-bytes", type=_float("--kv-bytes"), default=2.0, show_default=True,
    help="Bytes per KV-cache element: 2 (16-bit), 1 (8-bit), 0.5625 (4-bit codes with their scales).",
)
@click.option(
    "--state-bytes", type=_float("--state-bytes"), default=4.0, show_default=True,
    help="Bytes per recurrent-state element.",
)
@click.option("--cards", default="all", show_default=True,
              help="Cards to list how many sequences fit on, comma-separated, or 'all'.")
@_json_option
@click.pass_context
def kv_command(
    ctx: click.Context, checkpoint: str, contexts: str | None, kv_bytes: float, state_bytes: float, cards: str,
    as_json: bool,
) -> None:
    """KV cache (by layer kind), recurrent state and conv ring bytes per token and per sequence of CHECKPOINT at each
    context, and how many sequences fit beside the weights on each registered card (or the --cards given). A context
    past the model's is shown refused; exit 1 only when every context is."""
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.kv import default_contexts, kv_json, kv_report, kv_text, parse_contexts
    from passprice.serving import ServingRefusal

    root = _root(ctx)
    from passprice.compare import parse_cards

    named_cards = parse_cards(cards)  # one reading of --cards for compare, sweep and kv (fix181)
    if named_cards is None:  # as `cards` and compare: the good ones listed, each bad card file one line (exit 2)
        # load_cards stopped at the first card file that did not read: one bad file hid the whole table, the
        # checkpoint's own bytes a token included (attack round 59)
        the_cards = [c for _, c in _load_all(root.names(root.cards), lambda name: load_card(root, name), root=root)]
    else:  # as compare's --cards: every wrong name said at once (exit 2), before the checkpoint is read
        from passprice.compare import missing_cards

        names = named_cards
        missing = missing_cards(root, names)
        if missing:
            raise InputError.of(missing)
        the_cards = [load_card(root, name) for name in names]
    header = load_checkpoint(root, checkpoint)
    sizes = parse_contexts(contexts) if contexts is not None else default_contexts(header.meta_int("context_length"))
    try:
        report = kv_report(header, sizes, the_cards, kv_bytes, state_bytes, name=checkpoint)
    except ServingRefusal as e:
        _refuse(e)
    data = kv_json(report)
    data["problems"] = _kept_problems()  # each card file that does not read, left out of each context's "fits"
    if all(c.refusal is not None for c in report.contexts):
        raise Refused(f"every context is past {checkpoint}'s context length {report.model_context:,}", data)
    _finite(data)
    if as_json:
        _echo_json({**data, **_defaulted_json(header)})
    else:
        click.echo(kv_text(report))
        _echo_defaulted(header)


@cli.command("roofline")
@click.argument("card_name", metavar="CARD")
@_serving_options(with_batch=False)
@_lock_options
@click.option(
    "--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE.png|svg",
    help="Draw tokens/s and pass time against the batch (needs matplotlib: pip install '.[plot]' in a checkout).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@click.option("--stack", metavar="S", help="Also the lines, crossing and best batch under serving stack S.")
@_json_option
@click.pass_context
def roofline_command(
    ctx: click.Context, /, card_name: str, serving: str | None, plot_path: Path | None, force: bool,
    stack: str | None, as_json: bool, lock_ref: str | None, no_lock: bool, **o: Any,
) -> None:
    """Ridge points of CARD's datapaths; with SERVING (or --checkpoint), its arithmetic intensity by batch on CARD,
    the batch at which the bind changes, the best batch and the largest that fits."""
    from passprice.cards import load_card
    from passprice.roofline import (
        check_matplotlib,
        draw,
        ridges,
        ridges_json,
        ridges_text,
        roofline,
        roofline_json,
        roofline_text,
    )
    from passprice.serving import ServingRefusal

    if o.get("card"):
        raise click.UsageError("give the card as CARD, not --card")
    from passprice.roofline import require_card_first

    require_card_first(_root(ctx), card_name, serving)
    if plot_path is not None:
        from passprice.files import name_suffix, written_suffix
        from passprice.plots import picture_format

        if name_suffix(plot_path) not in (".png", ".svg"):  # the name typed; a link's target's suffix below
            picture_format(plot_path)  # the one line audit, sweep and simulate give (it was click's usage line)
        _check_output(plot_path, force)
        from passprice.registry import require_not_record

        require_not_record(_root(ctx), plot_path, "--plot")
        written_suffix(plot_path, "--plot")  # a link named .png onto an .svg: after the refusals that say more
        check_matplotlib()
    # --lock L without a serving: L's own serving on CARD (it ignored the lock without a word)
    base, the_lock = _own_serving(_root(ctx), lock_ref, serving, o)
    if serving is None and not o.get("checkpoint") and base is None:
        if plot_path is not None:
            raise click.UsageError("--plot draws a serving: give a SERVING or --checkpoint")
        card = load_card(_root(ctx), card_name)
        data: dict[str, Any] = {"card": card.name, "ridges": ridges_json(ridges(card))}
        _finite(data)  # the text shows the same figures: `inf MAC/B` is no ridge either
        if as_json:
            _echo_json(data)
        else:
            click.echo(ridges_text(card))
        return
    spec = None if serving is None and base is None else _spec(ctx, serving, base=base, **o)[1]
    if spec is None or spec.card != card_name:  # CARD is the serving's own: its file's spec, still naming the file
        # (its `contexts.1.limit` past the model was refused `ContextBeyondModel … lower --limit`, exit 1, as if of
        # an option: tests/test_fix171.py); another card keeps the file of its contexts (servings.unsourced)
        spec = _spec(ctx, serving, base=base, **{**o, "card": card_name})[1]
    root = _root(ctx)
    # --plot over the header or card it draws (`roofline CARD --checkpoint h.png --plot h.png --force` drew over
    # the header, exit 0: attack round 26)
    _check_inputs([("SERVING", serving), *_read_through(root, [], stack=stack, specs=[spec])], [("--plot", plot_path)])
    resolved = _resolve(root, spec, stack)
    stack = _lock_stack(root, lock_ref, the_lock, stack)
    if the_lock is not None:
        serving = the_lock.info.serving
    from passprice.report import spec_summary

    summary = " · ".join(spec_summary(resolved.spec).split(" · ")[:2])
    from passprice.cards import shown_title
    from passprice.roofline import routing_caption

    caption = routing_caption(resolved.header, resolved.serving)
    title = (f"{serving or spec.checkpoint}: {resolved.spec.checkpoint} on {shown_title(resolved.card)}\n{summary}"
             + (f"\n{caption}" if caption else ""))
    under = None
    reach = None
    try:
        line = roofline(resolved.header, resolved.card, resolved.serving, title)
        if stack is not None:
            from passprice.roofline import stack_lines
            from passprice.stacks import load_stack

            the_stack = load_stack(root, stack)
            under = stack_lines(resolved.header, resolved.card, resolved.serving, the_stack)
            reach = _serving_span(root, the_stack, resolved)
    except ServingRefusal as e:
        _refuse(e)
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock)
    relabels, drifts = g.since(root, resolved, serving)  # said as price says them (slip 44)
    data = roofline_json(line)
    if under is not None:
        data["stack"] = under
    data = _with_span(data, reach)
    _finite(data)  # before the plot is written: a roofline JSON cannot carry is no picture either
    if plot_path is not None:
        draw(line, plot_path, force=force)
    if as_json:
        _echo_json({**data, **_defaulted_json(resolved.header), "lock": g.to_json(relabels=relabels, drifted=drifts)})
    else:
        click.echo(roofline_text(line))
        _echo_defaulted(resolved.header)  # as price says it (arch44: roofline priced gemma2's 4,096 without a word)
        if under is not None:
            from passprice.roofline import stack_lines_text

            click.echo(stack_lines_text(under))
            _span_text(reach, resolved.serving.batch)
        said = g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)
        click.echo(f"  lock: {said}")
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)


@cli.command("speculate")
@_serving_options(with_batch=True)
@_lock_options
@click.option("--tokens", "tokens_text", default="1..8", show_default=True, help="Draft lengths: 1..8, 1,2,4 or 3.")
@click.option("--best", "at_best", is_flag=True, help="Price each draft length at its own best batch.")
@click.option(
    "--passes", type=_int("--passes"), default=100_000, show_default=True,
    help="Passes of the Monte-Carlo accept/reject loop simulated for each draft length.",
)
@click.option(
    "--seed", type=_int("--seed"), default=0, show_default=True, help="Seed of the Monte-Carlo loop."
)
@click.option("--stack", metavar="S", help=_STACK_HELP + " Each draft length's, with its speedup under the stack.")
@_json_option
@click.pass_context
def speculate_command(
    ctx: click.Context, /, serving: str | None, tokens_text: str, at_best: bool, passes: int, seed: int,
    stack: str | None, as_json: bool, lock_ref: str | None, no_lock: bool, **o: Any,
) -> None:
    """Tokens/s and speedup over no drafting of SERVING for each draft length (--tokens), at its batch (or --batch N,
    or each at its own --best batch), with a Monte-Carlo check of the tokens each pass emits."""
    from passprice.serving import ServingRefusal
    from passprice.speculate import (
        parse_tokens,
        resolve_speculation,
        speculate,
        speculation_json,
        speculation_text,
    )

    if o.pop("draft_tokens", None) is not None:
        raise click.UsageError("speculate varies the draft length itself: give --tokens, not --draft-tokens")
    if at_best and o.get("batch") is not None:
        raise click.UsageError("give --batch N or --best, not both")
    tokens = _draft_lengths(parse_tokens, tokens_text)
    method_name = o.pop("draft_method", None)
    head_rows = o.pop("head_rows", None)
    root, spec = _spec(ctx, serving, **o)
    # Without a serving, the options given are what names no method ("gemma3-270m-q4_k_m names no drafting method"
    # read as if the checkpoint were a serving; walkthrough 43).
    label = serving or f"--checkpoint {spec.checkpoint} --card {spec.card}"
    resolved, method, head_rows = resolve_speculation(root, spec, method_name, head_rows, label)
    batch = None if at_best else resolved.spec.batch
    if not at_best:
        _cap_unused(o, "speculate prices each draft length at the serving's batch (add --best to search within it)")
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    try:
        result = speculate(
            resolved.header, resolved.card, resolved.serving, method, tokens, batch, head_rows, passes, seed,
            the_stack,
        )
    except ServingRefusal as e:
        _refuse(e)
    stack_facts = the_stack.lock_facts() if the_stack is not None else None
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock, stack_facts=stack_facts)
    # said as price says them (slip 44; speculate since session 26), the method's acceptance facts today's
    relabels, drifts = g.since(root, resolved, serving, stack_facts=stack_facts,
                              method_facts={f"draft.{p}": f for p, f in method.facts().items()})
    reach = _serving_span(root, the_stack, resolved)
    data = {**_with_span(speculation_json(result), reach), "lock": g.to_json(relabels=relabels, drifted=drifts)}
    if all(r.refusal is not None for r in result.rows):
        from passprice.serving import Routed

        if all(isinstance(r.refusal, Routed) for r in result.rows):
            # no routing record: no draft length is the cause, so refused once as price refuses it, naming the
            # records that could price it (walkthrough 36: the line named none of them)
            _refuse(result.rows[0].refusal)
        raise Refused(f"every draft length is refused: {_reasons([r.refusal for r in result.rows])}", data)
    if the_stack is not None and all(r.expected_refusal is not None for r in result.rows if r.refusal is None):
        # as `price --stack`: a stack that prices none of the lengths is a refusal (exit 1), not a table of them;
        # its line says why and how to fix it, as price --stack's does (session 9's walkthrough: only the name)
        reasons = _reasons([r.expected_refusal for r in result.rows if r.refusal is None])
        raise Refused(f"stack {the_stack.name} refuses every draft length: {reasons}", data)
    _finite(data)  # the table shows the same figures: a pass of `inf s` is no price
    if as_json:
        _echo_json(data)
    else:
        click.echo(speculation_text(result, f"{serving or spec.checkpoint}: {resolved.spec.checkpoint} on "
                                    f"{resolved.card.name}"))
        _span_text(reach, resolved.serving.batch)
        said = g.line(verdicts, differs=g.differs(root, resolved, drafting=(method.name, head_rows)),
                      relabels=relabels, drifted=drifts)
        click.echo(f"  lock: {said}")


@cli.command("simulate")
@click.argument("serving", required=False)
@click.option("--checkpoint", help="Checkpoint: registry entry name or a .gguf path (without SERVING: with --card).")
@click.option("--trace", "trace_path", type=_FilePath(), metavar="FILE.jsonl",
              help="Requests, one JSON object a line: arrival_s, prompt_tokens, output_tokens[, prefix_id, "
              "prefix_tokens].")
@click.option("--synthetic", type=_int("--synthetic"), metavar="N", help="N synthetic heavy-tailed requests.")
@click.option("--seed", type=_int("--seed"), default=0, show_default=True, help="Seed of the synthetic trace.")
@click.option("--rate", type=_float("--rate"), help="Synthetic arrivals per second [50].")
@click.option("--prefix", "synthetic_prefix", type=_int("--prefix"), default=0,
              help="Synthetic prompts all start with one shared prefix of this many tokens.")
@click.option("--policy", type=click.Choice(["static", "continuous", "both"]), default="both", show_default=True)
@click.option("--chunk", type=_int("--chunk"), default=2048, show_default=True,
              help="Token-rows a step carries (decode rows first, then prompt rows).")
@click.option("--max-batch", type=_int("--max-batch"), default=256, show_default=True,
              help="Sequences admitted at once.")
@click.option("--card", help="Card: registry name or a card .toml path (default: the serving's).")
@click.option("--limit", type=_int("--limit"), help="Context limit each request may reach (positions).")
@click.option("--kv-page", type=_int("--kv-page"), help="Page the KV cache, N positions a page.")
@click.option("--contiguous", is_flag=True, help="Contiguous KV cache (undo a serving's --kv-page).")
@click.option("--prefix-read-once/--no-prefix-read-once", default=None,
              help="Stream each shared prefix once a step for all the sequences that read it.")
@click.option("--no-prefix-caching", is_flag=True, help="Hold and prefill every prompt whole, shared prefix or not.")
@click.option("--max-steps", type=_int("--max-steps"), default=500_000, show_default=True,  # simulate.MAX_STEPS
              help="Steps simulated at most, every policy together; a longer run is refused.")
@click.option("--max-work", type=_int("--max-work"), default=90_000, show_default=True,  # simulate.MAX_WORK
              help="Work done at most, every policy together, in units of about 10 µs of CPU (a step priced "
              "alone 8 and 1 a 48 sequences, a stretch of steps priced together 40 and more; 8 to 12 "
              "µs a unit, fitted): the default bounds simulating to about 1 s; a run past it is refused by name, "
              "saying where.")
@click.option("-o", "--output", type=_OutputPath(stdout=True), help="Write here (default or '-': stdout).")
@_plot_option("throughput and end-to-end latency over time, one colour a policy")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("--routing", help="Routing record (facts/routing name) a mixture of experts is priced with.")
@click.option("--stack", metavar="S", help="Price every step under serving stack S (its rates, fixed costs, reserve).")
@_lock_options
@_json_option
@click.pass_context
def simulate_command(
    ctx: click.Context,
    serving: str | None,
    checkpoint: str | None,
    trace_path: Path | None,
    synthetic: int | None,
    seed: int,
    rate: float | None,
    synthetic_prefix: int,
    policy: str,
    chunk: int,
    max_batch: int,
    card: str | None,
    limit: int | None,
    kv_page: int | None,
    contiguous: bool,
    prefix_read_once: bool | None,
    no_prefix_caching: bool,
    max_steps: int,
    max_work: int,
    output: Path | None,
    plot_path: Path | None,
    force: bool,
    routing: str | None,
    stack: str | None,
    lock_ref: str | None,
    no_lock: bool,
    as_json: bool,
) -> None:
    """Serve a request trace on SERVING (or on --checkpoint with --card), every step priced as the pass of the rows
    it carries: static against continuous batching, chunked prefill, shared prefixes. Give --trace FILE.jsonl or
    --synthetic N --seed S."""
    from passprice.serving import ServingRefusal
    from passprice.simulate import (
        Policy,
        Settings,
        Simulation,
        require_steps,
        serve,
        simulation_json,
        simulation_text,
        written_as_json,
    )
    from passprice.steps import StepPricer
    from passprice.trace import Synthetic, read_trace
    from passprice.trace import synthetic as make_synthetic

    if (trace_path is None) == (synthetic is None):
        raise click.UsageError("give one of --trace FILE.jsonl and --synthetic N")
    if trace_path is not None and (rate is not None or synthetic_prefix):
        raise click.UsageError("--rate and --prefix shape a --synthetic trace; a --trace file has its own")
    _check_output(output, force)
    _check_inputs([("--trace", trace_path), ("SERVING", serving), ("--checkpoint", checkpoint), ("--card", card)],
                  [("-o", output), ("--plot", plot_path)])
    _check_plot(plot_path, force, _root(ctx), output)
    root, spec = _spec(ctx, serving, checkpoint=checkpoint, card=card, limit=limit, kv_page=kv_page,
                       contiguous=contiguous, prefix_read_once=prefix_read_once, routing=routing)
    if output is not None:
        from passprice.registry import require_not_record

        require_not_record(root, output)
    _check_inputs(_read_through(root, [], stack=stack, specs=[spec]), [("-o", output), ("--plot", plot_path)])
    as_json = written_as_json(as_json, output)  # after the refusals that say more: a record, an input
    resolved = _resolve(root, spec, stack)
    # a serving file's memory_use was read and ignored here without a word (issue 13)
    _cap_unused({"memory_use": resolved.serving.memory_use},
                "simulate admits requests while the card's memory holds them, up to --max-batch")
    the_stack = None
    if stack is not None:
        from passprice.stacks import load_stack

        the_stack = load_stack(root, stack)
    try:
        pricer = StepPricer.of(resolved.header, resolved.card, resolved.serving, the_stack)
    except ServingRefusal as e:
        _refuse(e)
    g, verdicts = _under_locks(root, serving, resolved, lock_ref, no_lock, pricer.rests_on())
    relabels, drifts = g.since(root, resolved, serving)  # said as price says them (slip 44)
    lock_json = g.to_json(relabels=relabels, drifted=drifts)
    model = resolved.header.meta_int("context_length")
    if trace_path is not None:
        trace = read_trace(trace_path, pricer.limit, model)
    else:
        assert synthetic is not None
        trace = make_synthetic(Synthetic(synthetic, seed, rate or 50.0, prefix=synthetic_prefix), pricer.limit)
    settings = Settings(chunk, max_batch, not no_prefix_caching, resolved.serving.prefix_read_once)
    policies = [Policy.STATIC, Policy.CONTINUOUS] if policy == "both" else [Policy(policy)]
    require_steps(pricer, trace, policies, settings, max_steps)  # before the bar: a refusal is its one line
    total = len(trace.requests) * len(policies)
    try:
        shown = (
            click.progressbar(length=total, label="simulating", file=sys.stderr)
            if total >= 4000 and _terminal() else None
        )
        with shown or contextlib.nullcontext() as bar:
            outcomes = serve(pricer, trace, policies, settings, bar.update if bar else None, max_steps, max_work)
    except ServingRefusal as e:
        _refuse(e)
    from passprice.cards import shown_title
    title = (f"simulate {serving}: " if serving is not None else "simulate: ") + (
        f"{resolved.spec.checkpoint} on {resolved.card.name} ({shown_title(resolved.card)})")
    if stack is not None:
        title += f" under stack {stack}"
    sim = Simulation(title, serving, trace.summary(), settings, pricer, tuple(outcomes), resolved.spec.max_tpot)
    reach = _serving_span(root, the_stack, resolved)  # its decode pass against the stack's fitted span
    # The request records as a table of columns, which jsontext writes as json.dumps writes their dicts
    defaulted = _defaulted_json(resolved.header)  # as price says it (arch44: simulate said no word of gemma2's 4,096)
    data = {**_with_span(simulation_json(sim, with_requests=as_json, as_table=True), reach), **defaulted,
            "lock": lock_json}
    from passprice.tables import whole_counts  # its byte counts as every --json writes them (peak_held_bytes)

    data = whole_counts(data)
    from passprice import jsontext  # json.dumps(data, indent=2)'s text, its request records column by column

    text = ""
    if as_json:
        with contextlib.suppress(ValueError):  # a figure that is not finite: named below
            text = jsontext.dumps(data, allow_nan=False) + "\n"
        if not text:  # the records as dicts, for the line below
            data = whole_counts({**_with_span(simulation_json(sim), reach), **defaulted, "lock": lock_json})
    if not text:  # the text shows the same figures: a TTFT of `inf s` is no latency
        _finite(data)  # the line naming the figure (encoding a --json document checked it already)
        text = jsontext.dumps(data) + "\n" if as_json else ""
    if plot_path is not None:
        from passprice.plots import picture_format, simulation_picture, write_picture

        write_picture(plot_path, simulation_picture(sim, picture_format(plot_path)), force)
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)
    if not as_json:
        span = "" if reach is None else (f"  fitted span {reach.line()} (the serving's decode pass, batch "
                                         f"{resolved.serving.batch:,})\n")
        if defaulted:
            from passprice.architectures import defaulted_window

            said = defaulted_window(resolved.header)
            span += f"  defaulted   {escaped(said.line())}\n" if said is not None else ""
        text = (f"{simulation_text(sim)}\n{span}  lock        "
                f"{g.line(verdicts, differs=g.differs(root, resolved), relabels=relabels, drifted=drifts)}\n")
    if output is None:
        if as_json:
            _printed_json()
        click.echo(text, nl=False)
    else:
        from passprice.files import write_atomically

        write_atomically(output, text, force=force)
        click.echo(f"{len(trace.requests):,} requests x {len(policies)} polic{'ies' if len(policies) > 1 else 'y'} "
                   f"-> {shown_path(output)}", err=True)


# --- stacks and measured runs (issue 14) ----------------------------------------------------------------------------


@cli.command("calibrate")
@click.option("--stack", "stack", required=True, metavar="S", help="The stack to fit (facts/stacks/S.toml).")
@click.option("--dry-run", is_flag=True, help="Print the fit and its hold-out errors; write nothing.")
@_json_option
@click.pass_context
def calibrate_command(ctx: click.Context, stack: str, dry_run: bool, as_json: bool) -> None:
    """Fit stack S's facts to its measured runs (registry/measurements) and write them as derived facts, with the
    fit's error in sample, leaving one card out and leaving one checkpoint out."""
    from passprice.calibrate import (
        calibrate,
        calibration_cautions,
        calibration_json,
        calibration_text,
        stack_to_fit,
        write_calibration,
    )

    root = _root(ctx)
    if not dry_run:  # round 18: a read-only stack file was refused after the fit's seconds of work
        from passprice.files import check_writable

        check_writable(stack_to_fit(root, stack), force=True)
    cal = calibrate(root, stack)
    written = None if dry_run else write_calibration(root, cal)
    if as_json:
        data = calibration_json(cal)
        data["written"] = str(written) if written is not None else None
        _finite(data)
        _echo_json(data)
    else:
        shown = written.relative_to(root.path) if written is not None and written.is_relative_to(root.path) else written
        click.echo(calibration_text(cal, shown))
    for line in calibration_cautions(cal):
        click.echo(f"passprice: warning: calibrate {stack}: {line}", err=True)
    from passprice.stackreach import run_ratios, runs_apart

    # a run far from the others' measured / limit span, which the fit rests on: said here, not only by the review of
    # the change later ("outside BASE's span"; tests/test_fix188.py)
    for line in runs_apart(run_ratios(root, list(cal.fit.runs))):
        click.echo(f"passprice: warning: calibrate {stack}: {line}", err=True)


@cli.command("validate")
@click.option("--stack", "stack", metavar="S", help="Only stack S's runs (default: every measured run).")
@click.option("--plot", "plot_path", type=_OutputPath(stdout=False), metavar="FILE",
              help="Draw measured vs priced tokens/s, log-log, one colour per card (.png or .svg; needs matplotlib).")
@click.option("--force", is_flag=True, help="Overwrite an existing --plot file.")
@_json_option
@click.pass_context
def validate_command(
    ctx: click.Context, stack: str | None, plot_path: Path | None, force: bool, as_json: bool
) -> None:
    """Price every measured run as the card's limit and as its stack's expected price, beside what was measured."""
    from passprice.validate import plot, to_json, validate, validation_text

    root = _root(ctx)
    if plot_path is not None:
        from passprice.plots import picture_format
        from passprice.registry import require_not_record

        _check_output(plot_path, force)
        require_not_record(root, plot_path, "--plot")
        picture_format(plot_path)  # its suffix (a link's: its target's), before the runs are priced
    v = validate(root, stack)
    _problems(v.problems)  # runs left out as bad input: reported after the good ones, exit 2
    data = to_json(v)
    _finite(data)
    if plot_path is not None:
        plot(v, plot_path, force=force)
    if as_json:
        # the runs left out, as the listings' "problems" (stderr alone named them, session 29)
        _echo_json({**data, "problems": _kept_problems()})
    else:
        click.echo(validation_text(v, stack))
    if plot_path is not None:
        click.echo(f"plot -> {shown_path(plot_path)}", err=True)


setattr(click.decorators, "Option", _BUILT_AT_ONCE[0])  # noqa: B010 - every command is defined: click as it was
setattr(click.decorators, "Argument", _BUILT_AT_ONCE[1])  # noqa: B010
setattr(click, "Path", _BUILT_AT_ONCE[2])  # noqa: B010


#: What an :class:`ImportError` says when a module's shared library could not be mapped for want of memory (NumPy's
#: OpenBLAS or libgfortran under ``ulimit -v``: "failed to map segment from shared object").
_UNMAPPED = ("failed to map segment", "Cannot allocate memory")


def _out_of_memory() -> NoReturn:
    """End a command that ran out of memory (a :class:`MemoryError`, or a library not mapped: :data:`_UNMAPPED`) with
    one line and exit 2, as for a full disk: under ``ulimit -v 150000`` ``check`` and ``diff`` printed a
    ``MemoryError`` or NumPy's ``ImportError`` traceback and exited 1, the status of a refusal (attack round 42). The
    stack is unwound by now, so the line can be written."""
    with contextlib.suppress(OSError, ValueError, MemoryError):
        click.echo("passprice: error: out of memory: the command needs more memory than this process may hold (ulimit "
                   "-v, a container's limit): raise the limit", err=True)  # fmt: skip
    sys.exit(2)


def _written_before() -> str:
    """What the last resort's error line adds when the command had already written files
    (:data:`passprice.files.WRITTEN`) before it failed (its standard output on a full disk, ``> /dev/full``, met at
    exit): ``; written before it failed, and kept: FILE, FILE (do not redo the edit)``, else ``""``. A ``fact set``
    whose edit was written said only ``standard output: No space left on device`` (exit 2), so its user would redo it
    (left56, session 42)."""
    from passprice.files import WRITTEN

    if not WRITTEN:
        return ""
    names = ", ".join(dict.fromkeys(shown_path(path) for path in WRITTEN))
    return f"; written before it failed, and kept: {names} (do not redo the edit)"


def main() -> None:
    """The ``passprice`` console script. Exits 130 on Ctrl-C, wherever it comes (a command's own handler says so
    while it runs; this one covers the start, before a command is chosen). What is imported by now (click, the
    interpreter's own modules) lives as long as the process: :func:`gc.freeze` moves it out of the collector's way,
    so the collections a command's own imports and work trigger do not scan it again (about 3 % of a price's
    instructions)."""
    from passprice.entry import utf8_names
    from passprice.files import record_written

    record_written(True)  # what this command writes, named by _written_before if its output then fails
    utf8_names()  # for a caller of this function itself (benchmarks, python -c); the console script did it first
    import gc

    gc.freeze()
    # Most of what a command allocates lives until it exits (its modules, classes, the facts and pass it reads), so a
    # collection every 700 allocations, the default, mostly scans survivors: every 50,000 finds as much garbage, the
    # young generation still a few MB at most (about 1 % of a warm price's instructions).
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    from passprice.entry import printable_output

    printable_output()  # a file name in bytes that are not UTF-8, a '←' under latin-1: printed, never a traceback

    for name in ("SIGTERM", "SIGHUP"):
        # One ignored (``nohup`` leaves SIGHUP ignored) stays ignored: the console script left it so (entry.early).
        if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) != signal.SIG_IGN:
            signal.signal(getattr(signal, name), _terminated)
    if sys.stdout is None:  # started with standard output closed (`>&-`): what the command prints would be lost
        print("passprice: error: standard output is closed; nothing to print to", file=sys.stderr)
        sys.exit(2)
    unraisable = sys.unraisablehook
    sys.unraisablehook = functools.partial(_stopped_again, previous=unraisable)
    try:
        from passprice.entry import _interrupted

        if signal.getsignal(signal.SIGINT) is _interrupted:  # started by passprice.entry: Python's handler again
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _AFTER_COMMAND[:] = [_interrupted]  # until the command ends (_command_ended)
        try:
            cli(prog_name="passprice")
        except SystemExit as done:
            if isinstance(done.code, int) and done.code >= 128:  # stopped by a signal already, and said so
                with _PENDING_LOCK:
                    _PENDING.clear()
            else:
                _stop_pending()  # a Ctrl-C a finalizer swallowed near the command's end
            # A full disk is met here, not as a traceback at the interpreter's exit; a reader gone from the pipe
            # (`| head`) while a failure's output was still buffered leaves the failure's status, not 0.
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                if done.code in (0, None):
                    raise
                _quiet_outputs()
            raise
        _stop_pending()
        sys.stdout.flush()
    except KeyboardInterrupt as e:
        with _PENDING_LOCK:
            _PENDING.clear()
        line, status = _stopped(e)
        click.echo(line, err=True)
        sys.exit(status)
    except MemoryError:
        _out_of_memory()
    except ImportError as e:
        if not any(sign in str(e) for sign in _UNMAPPED):
            raise
        _out_of_memory()
    except OSError as e:
        # The last resort for an error no command named (writing the output to a full disk, `> /dev/full`): one
        # line, exit 2, and standard output pointed at /dev/null so the interpreter's own flush at exit is quiet. A
        # reader that left the pipe (`| head`: EPIPE, met here when the output was still buffered) is no error: exit
        # 0 quietly, as a command's own handler does.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        if isinstance(e, BrokenPipeError):
            sys.exit(0)
        where = shown_path(e.filename) if e.filename is not None else "standard output"
        with contextlib.suppress(OSError, ValueError):  # standard error closed or gone too: nothing to say it on
            click.echo(f"passprice: error: {where}: {e.strerror or e}{_written_before()}", err=True)
        sys.exit(2)
    finally:
        sys.unraisablehook = unraisable
        record_written(False)  # a caller of main (python -c, a benchmark) then calls the library: nothing kept
