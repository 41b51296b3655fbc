"""A command stopped by a signal ends as a shell expects, wherever the signal lands: Ctrl-C, SIGTERM and SIGHUP are
raised where the command runs (so every ``finally`` runs), said in one line, and exit 128 + the signal's number; one a
finalizer swallowed is sent again, and one past the command's body ends the process at once."""

from __future__ import annotations

import _thread
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import signal
else:
    try:
        # The C module behind :mod:`signal` (what the command line asks of it is there): :mod:`signal` itself turns
        # every signal number into an enumeration when imported, about 1 % of a price's instructions.
        import _signal as signal
    except ImportError:  # pragma: no cover - an interpreter without it
        import signal


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
#: exit 130 at once), set by :func:`~passprice.cli.main` when :mod:`passprice.entry` started it; empty otherwise (a
#: test's runner, a caller of :func:`~passprice.cli.main` keeps Python's handler).
_AFTER_COMMAND: list[Callable[[int, Any], None]] = []


def _terminated(number: int, _frame: object) -> None:
    """:func:`~passprice.cli.main`'s handler of SIGTERM and SIGHUP while a command runs: raise :class:`Terminated`
    there."""
    raise Terminated(number)


def _command_ended() -> None:
    """Past a command's body, Ctrl-C ends the console script at once with status 130 (:data:`_AFTER_COMMAND`): no
    ``KeyboardInterrupt`` is raised where nothing is left to clean up, because one raised there reached click's own
    handler ("Aborted!", exit 1) or, past :func:`~passprice.cli.main`, the interpreter's (killed by SIGINT, status -2,
    in 4 of 40 runs interrupted near their end). SIGTERM and SIGHUP likewise (128 + the number): a SIGTERM 4 ms after a
    Ctrl-C was raised in the Ctrl-C's own handler, and click said "Aborted!" and exited 1 (4 of 32 runs of ``--no-cache
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
    """``sys.unraisablehook`` while :func:`~passprice.cli.main` runs a command: a Ctrl-C (``KeyboardInterrupt``) or a
    SIGTERM/SIGHUP (:class:`Terminated`) whose handler raised inside a finalizer (an object's ``__del__``, a weakref
    callback, run by the collector wherever an allocation triggered it) is not lost there. Python itself prints
    "Exception ignored in: …" with a ``KeyboardInterrupt`` traceback and carries on, so the command was not stopped and
    exited 0 (flaky41: one Ctrl-C in 35 during ``--no-cache check`` printed a traceback; a ``__del__`` sending itself
    SIGINT during ``cards`` shows it every time). The signal is kept in :data:`_PENDING` and sent again to this thread 5
    ms later by a thread of its own (:func:`_send_pending`; sent from this hook, by :func:`signal.raise_signal` or
    :func:`_thread.interrupt_main`, its handler ran at once, inside the hook), so that it is raised where the command
    runs (one landing in a finalizer again is kept again); a command that ends before is stopped as it ends
    (:func:`_stop_pending`). Either way it ends with its one line and 130 (128 + the signal's number), as for any other
    Ctrl-C. Any other unraisable exception, or one whose signal's handler is no longer Python's (ignored, or the default
    action), goes to ``previous``."""
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
