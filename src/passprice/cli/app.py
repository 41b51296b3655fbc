"""The command line is a thin layer over the library: each command parses its options, calls one library function,
and prints a table for people or ``--json`` for programs. This module is that layer's frame: the ``passprice`` group,
how a command's failure is said, and the console script's :func:`main`; the commands are defined by the modules the
package imports.

Exit status: 0 success; 1 a refusal (a price the model or a lock refuses); 2 bad input or usage; 130 interrupted
(Ctrl-C). Bad input is one line per problem on stderr (file, key or byte offset, what was wrong), never a traceback."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

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
from passprice.cli.params import _FolderPath
from passprice.cli.signals import (
    _AFTER_COMMAND,
    _PENDING,
    _PENDING_LOCK,
    _command_ended,
    _stop_pending,
    _stopped,
    _stopped_again,
    _terminated,
)
from passprice.errors import InputError, escaped
from passprice.files import shown as shown_path

generated.install()  # the methods attrs generates for passprice's classes: compiled once, kept in the cache


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


def _json_option(f: F) -> F:
    def remember(ctx: click.Context, _: click.Parameter, value: bool) -> bool:
        ctx.meta["passprice.json"] = value
        return value

    return click.option(
        "--json", "as_json", is_flag=True, callback=remember, is_eager=True, help="Print JSON for programs."
    )(f)


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

#: The commands that read the registry as one snapshot (:mod:`passprice.snapshot`): those that write none of its files.
_READING = frozenset({
    "audit", "best", "cards", "check", "checkpoints", "diff", "facts", "max-batch", "price", "reproduce", "roofline",
    "servings", "simulate", "sources", "speculate", "sweep", "validate",
})


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
