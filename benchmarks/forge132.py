"""The cost of checking a served cache entry's shape (issue 13; docs/PERFORMANCE.md, round "a forged entry's shape,
checked cheaply"): warm commands (``PASSPRICE_NO_MEMO=1``, each side's cache folder filled by the same command) run
by main's installation, by this branch's with its checks, and by this branch's with its checks answering at once
(``cache._holds`` and ``schema._shaped`` set to ``True``), paired run by run with ``python -c pass``, and their
instructions under callgrind.

    python benchmarks/forge132.py --main MAIN_VENV:MAIN_TREE --branch VENV:TREE [--runs 7] [--no-instructions]

Each side runs its tree's ``src`` from its tree (its registry) with a cache folder of its own, through the same
launcher (``-c``: it imports ``passprice.cache`` and ``passprice.schema``, patches them or not, and runs the CLI), so
the three differ only in the code. The branch's pricing model digest is not main's until the lead re-locks, so
``check`` reports drift on the branch and not on main: the checks' own cost is the branch against itself with the
checks off; main's figure is printed beside. CPU = user + sys of the child (``wait4``); each round runs the three
sides (their order turned round by round) and ``python -c pass``; the ratios are taken round by round.
Instructions: ``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``, each command run twice before under that seed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = """
import sys
mode = sys.argv[1]
sys.argv = ["passprice", *sys.argv[2:]]
from passprice import cache, schema
if mode == "off":
    cache._holds = lambda obj: True
    schema._shaped = lambda document, kind, folder: True
from passprice.cli import main
main()
"""

_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)
"""


def _env(cache: Path, seed: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PASSPRICE_NO_CACHE")}
    env["PASSPRICE_CACHE_DIR"] = str(cache)
    env["PASSPRICE_NO_MEMO"] = "1"
    if seed:
        env["PYTHONHASHSEED"] = "0"
    return env


def _cpu(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *command], cwd=cwd, env=env, capture_output=True,
                          text=True, check=True)
    return float(done.stdout.split()[1])


def _instructions(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], cwd=cwd,
                          env=env, capture_output=True, text=True)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    raise RuntimeError(done.stderr[-500:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--main", required=True, help="VENV:TREE")
    parser.add_argument("--branch", required=True, help="VENV:TREE")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-instructions", action="store_true")
    parser.add_argument("--command", action="append", help="a command's words, one string (default: price, check)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="forge132-"))
    sides = []
    for name, given, mode in (("main", args.main, "on"), ("on", args.branch, "on"), ("off", args.branch, "off")):
        venv, tree = given.split(":")
        sides.append((name, [str(Path(venv) / "bin" / "python"), "-c", _RUN, mode], Path(tree), work / name))
    commands = [c.split() for c in args.command] if args.command else [["price", "r1-qwen7b-h200"], ["check"]]
    python = [sys.executable, "-c", "pass"]
    for words in commands:
        for _, launch, tree, cache in sides:
            for _ in range(3):  # the cache entries and kept code under random seeds
                subprocess.run([*launch, *words], cwd=tree, env=_env(cache), capture_output=True)
        cpu: dict[str, list[float]] = {"main": [], "on": [], "off": [], "pass": []}
        for i in range(args.runs):
            order = sides if i % 2 == 0 else sides[::-1]
            for name, launch, tree, cache in order:
                cpu[name].append(_cpu([*launch, *words], tree, _env(cache)))
            cpu["pass"].append(_cpu(python, work, _env(work / "none")))
        ratio = {n: statistics.median(a / p for a, p in zip(cpu[n], cpu["pass"], strict=True))
                 for n in ("main", "on", "off")}
        pair = statistics.median(a / b for a, b in zip(cpu["on"], cpu["off"], strict=True))
        ms = {n: statistics.median(cpu[n]) * 1e3 for n in cpu}
        line = (f"{' '.join(words)}: CPU main {ms['main']:.1f}, checks off {ms['off']:.1f}, on {ms['on']:.1f} ms "
                f"({ratio['main']:.2f}, {ratio['off']:.2f}, {ratio['on']:.2f} x pass; on/off {pair:.3f}); "
                f"python -c pass {ms['pass']:.1f} ms; {args.runs} rounds")
        if not args.no_instructions and shutil.which("valgrind"):
            counts = {}
            for name, launch, tree, cache in sides:
                for _ in range(2):
                    subprocess.run([*launch, *words], cwd=tree, env=_env(cache, seed=True), capture_output=True)
                counts[name] = _instructions([*launch, *words], tree, _env(cache, seed=True))
            line += (f"; instructions main {counts['main']:.1f}, off {counts['off']:.1f}, on {counts['on']:.1f} M "
                     f"(on/off {counts['on'] / counts['off']:.4f}, on/main {counts['on'] / counts['main']:.4f})")
        print(line, flush=True)
    if not args.no_instructions:
        base = _instructions(python, work, _env(work / "none", seed=True))
        print(f"python -c pass: {base:.1f} M instructions")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
