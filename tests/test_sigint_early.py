"""Ctrl-C while passprice is being imported (session 13): the console script imports ``re`` and ``sys`` and then
``passprice.entry``, whose ``main`` put the SIGINT handler in place only after the package was imported. The handler is
now the first thing ``import passprice`` does, in the ``passprice`` command alone (a library user's Ctrl-C is its
own); what comes before it (the interpreter's start-up, the script's ``import re``) is out of reach (README)."""

from __future__ import annotations

import signal
import subprocess
import sys

AS_COMMAND = "import sys; sys.argv[0] = '/somewhere/bin/passprice'; "


def _python(code: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, **kw)  # type: ignore[call-overload,no-any-return]


def test_importing_the_package_as_the_command_puts_the_handler_in_place_first() -> None:
    done = _python(AS_COMMAND + "import passprice, signal; print(signal.getsignal(signal.SIGINT).__name__)")
    assert done.stdout == "_interrupted\n", done.stderr


def test_a_ctrl_c_right_after_the_package_import_exits_130_with_one_line() -> None:
    # SIGINT sent by the process to itself at the end of `import passprice`, before entry.main ever runs
    done = _python(AS_COMMAND + "import passprice, os, signal, time; os.kill(os.getpid(), signal.SIGINT); "
                   "time.sleep(5); print('not interrupted')")
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "passprice: interrupted\n")


def test_a_library_import_leaves_sigint_alone() -> None:
    done = _python("import passprice, signal; print(signal.getsignal(signal.SIGINT).__name__)")
    assert done.stdout == "default_int_handler\n", done.stderr


def test_an_ignored_sigint_stays_ignored() -> None:
    # a shell's background job: SIGINT ignored, and a Ctrl-C meant for the foreground must not end it
    done = _python(AS_COMMAND + "import passprice, signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)",
                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert done.stdout == "True\n", done.stderr


def test_python_m_passprice_is_the_command_too() -> None:
    done = subprocess.run([sys.executable, "-m", "passprice", "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "passprice, version 0.1.0\n"), done.stderr
    code = ("import runpy, sys; sys.argv = ['-m']; sys.orig_argv = [sys.executable, '-m', 'passprice']; "
            "import passprice.entry as e; print(e._console())")
    assert _python(code).stdout == "True\n"


def test_a_child_of_the_tests_starts_with_ctrl_c_as_at_a_terminal() -> None:
    # The Ctrl-C tests' children inherit the runner's SIGINT: run as a background job of a script (SIGINT ignored by
    # the shell), 15 of them exited 0 with the command's output; tests/conftest.py puts SIGINT back for the session.
    code = ("import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
            "signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ()))")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "True False\n", done.stderr  # was: False False (SIG_IGN)
