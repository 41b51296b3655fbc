"""Ctrl-C during start-up, counted: the console script (``bin/passprice``) is started N times and sent SIGINT after a
random delay spread uniformly over the first ``--spread`` seconds (0.5 by default); each run is classed by what it
left: ``clean`` (exit 130, the one line ``passprice: interrupted``, no traceback), ``traceback`` (a Python traceback
or ``KeyboardInterrupt`` on stderr: the interpreter's own, before passprice's handler was in place), ``finished``
(the command ended before the signal came) or ``other``. The promise (README, exit status) is no traceback once
passprice is imported; what the interpreter does before that (its start-up, ``site``, the script's ``import re``) is
out of passprice's reach.

Run: ``python benchmarks/sigint_startup.py [--runs 30] [--seed 13] [--script PATH] [--vs PATH] [-- ARGS…]``
(default arguments
``price r1-qwen7b-h200``, run with ``PASSPRICE_NO_MEMO=1`` so the command is not replayed). Prints one line a run and
the counts. ``--vs`` runs a second script with each same delay in turn: a copy of ``bin/passprice`` under another
name (``passprice-before``) is not taken for the command by :func:`passprice.entry._console`, so it puts its handler in
place where passprice did before session 13 (in :func:`passprice.entry.main`), paired against the same load. The
numbers depend on the machine and its load; nothing here is a test.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import time


def _run(script: str, args: list[str], delay: float, env: dict[str, str]) -> tuple[str, int, str]:
    """One run of ``script ARGS`` sent SIGINT after ``delay`` seconds: its class, exit status and last stderr line."""
    process = subprocess.Popen([script, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):  # already ended
        process.send_signal(signal.SIGINT)
    _, err = process.communicate()
    text = err.decode("utf-8", "replace")
    if "Traceback" in text or "KeyboardInterrupt" in text:
        kind = "traceback"
    elif process.returncode == 130 and text == "passprice: interrupted\n":
        kind = "clean"
    elif process.returncode == 0:
        kind = "finished"
    else:
        kind = "other"
    last = text.strip().splitlines()[-1] if text.strip() else ""
    return kind, process.returncode, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--spread", type=float, default=0.5)
    parser.add_argument("--script", default=shutil.which("passprice") or "passprice")
    parser.add_argument("--vs", help="a second script, run in turn with the same delay (A B A B …)")
    parser.add_argument("args", nargs="*", default=["price", "r1-qwen7b-h200"])
    options = parser.parse_args()
    rng = random.Random(options.seed)
    env = {**os.environ, "PASSPRICE_NO_MEMO": "1"}
    scripts = [options.script, *([options.vs] if options.vs else [])]
    counts: dict[str, dict[str, int]] = {s: {} for s in scripts}
    for i in range(options.runs):
        delay = rng.uniform(0, options.spread)
        for script in scripts:
            kind, status, last = _run(script, options.args, delay, env)
            counts[script][kind] = counts[script].get(kind, 0) + 1
            print(f"{i:3d} delay {delay:.3f} s  exit {status:4d}  {kind:9s} {os.path.basename(script)}: {last[:90]}",
                  flush=True)
    for script in scripts:
        print(f"{script}:", " ".join(f"{k}={v}" for k, v in sorted(counts[script].items())), f"of {options.runs}")


if __name__ == "__main__":
    main()
