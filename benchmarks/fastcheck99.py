"""A cold ``passprice check`` (or any command) by two installs side by side (round fastcheck99, issue 16): each run
in its own empty cache folder, the result memo bypassed, bytecode written and read as an installed package's is;
CPU is user + system of the child (``os.wait4``), the two sides alternated run by run, and ``python -c pass`` run
once a round as the yardstick. Exit statuses 0 and 1 both count (the review repository's one-fact edit makes
``check`` report stale derived facts).

Run: ``python benchmarks/fastcheck99.py --runs 5 --cwd REPO --side main=/venv-a/bin/passprice --side
this=/venv-b/bin/passprice -- --no-cache check`` (a side's command is split on spaces: ``--side "wheel=/v/bin/python
-m passprice"``). ``benchmarks/bench.py``'s review repository (``review_repo``) is the folder the round's figures were
measured in. Nothing here is a test: CPU depends on the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)
"""


def run(command: list[str], cwd: str, cache: str | None) -> tuple[int, float]:
    """One child's exit status and CPU seconds, in ``cwd``, with ``cache`` as its cache folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PASSPRICE_NO_MEMO"] = "1"
    if cache is not None:
        env["PASSPRICE_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *command], cwd=cwd, env=env, capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    return int(out[0]), float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cwd", default=".")
    parser.add_argument("--side", action="append", required=True, help="NAME=COMMAND (the passprice to run)")
    parser.add_argument("args", nargs="+", help="passprice's arguments")
    args = parser.parse_args()
    sides = {name: command.split() for name, _, command in (s.partition("=") for s in args.side)}
    times: dict[str, list[float]] = {name: [] for name in sides}
    exits: dict[str, set[int]] = {name: set() for name in sides}
    yardstick: list[float] = []
    for _ in range(args.runs):
        for name, command in sides.items():
            cache = tempfile.mkdtemp(prefix="fastcheck99-")
            try:
                status, cpu = run([*command, *args.args], args.cwd, cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            if status not in (0, 1):
                raise SystemExit(f"{name}: exit {status}")
            times[name].append(cpu)
            exits[name].add(status)
        yardstick.append(run([sys.executable, "-c", "pass"], args.cwd, None)[1])
    base = statistics.median(yardstick)
    shown = "; ".join(f"{name} {statistics.median(v):.3f} s (min {min(v):.3f}, {statistics.median(v) / base:.0f} x "
                      f"pass, exits {sorted(exits[name])})" for name, v in times.items())  # fmt: skip
    print(f"{' '.join(args.args)}: {shown}; python -c pass {base * 1e3:.1f} ms; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
