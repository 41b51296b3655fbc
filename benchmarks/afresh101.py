"""Round afresh101 (issue 16): commands run afresh (``PASSPRICE_NO_MEMO=1``, each side's cache folder warm) by two
installations side by side, paired run by run with ``python -c pass``, and their instructions under callgrind.

    python benchmarks/afresh101.py --before BEFORE_VENV:BEFORE_TREE --after AFTER_VENV:AFTER_TREE [--runs 11]
        [--gemma HEADER.gguf] [--no-instructions]

Each side is a venv whose ``bin/passprice`` runs that tree's ``src`` (``pip install -e TREE``), run from its tree (its
registry) with a cache folder of its own. CPU = user + sys of the child (``wait4``); each round runs before, after
and ``python -c pass`` (the before/after order alternating), and the ratios are taken round by round. Instructions:
``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``, each command run twice before (its cache entries and kept
code made under that seed). Prints one line a command; also checks that both sides print the same bytes.
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

_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)
"""


def _env(cache: Path, seed: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PASSPRICE_CACHE_DIR"] = str(cache)
    env["PASSPRICE_NO_MEMO"] = "1"
    if seed:
        env["PYTHONHASHSEED"] = "0"
    return env


def _cpu(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *command], cwd=cwd, env=env, capture_output=True,
                          text=True, check=True)
    status, cpu = done.stdout.split()
    if status != "0":
        raise RuntimeError(f"{command} exited {status}")
    return float(cpu)


def _instructions(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], cwd=cwd,
                          env=env, capture_output=True, text=True)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    raise RuntimeError(done.stderr[-500:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="VENV:TREE")
    parser.add_argument("--after", required=True, help="VENV:TREE")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--gemma", help="a GGUF header file for `passprice header` (seen before: read from the cache)")
    parser.add_argument("--no-instructions", action="store_true")
    args = parser.parse_args()
    sides = []
    work = Path(tempfile.mkdtemp(prefix="afresh101-"))
    for name, given in (("before", args.before), ("after", args.after)):
        venv, tree = given.split(":")
        sides.append((name, Path(venv) / "bin" / "passprice", Path(tree), work / name))
    commands = [("price afresh", ["price", "r1-qwen7b-h200", "--json"]),
                ("best afresh", ["best", "r1-qwen7b-h200", "--json"]),
                ("checkpoints afresh", ["checkpoints"])]
    if args.gemma:
        commands.append(("header afresh (seen before)", ["header", str(Path(args.gemma).resolve())]))
    python = [sys.executable, "-c", "pass"]
    for label, words in commands:
        outputs = []
        for _, exe, tree, cache in sides:
            for _ in range(3):  # the cache entries and kept code under random seeds
                done = subprocess.run([str(exe), *words], cwd=tree, env=_env(cache), capture_output=True, check=True)
            outputs.append(done.stdout)
        same = "same bytes" if outputs[0] == outputs[1] else "OUTPUT DIFFERS"
        cpu: dict[str, list[float]] = {"before": [], "after": [], "pass": []}
        for i in range(args.runs):
            order = sides if i % 2 == 0 else sides[::-1]
            for name, exe, tree, cache in order:
                cpu[name].append(_cpu([str(exe), *words], tree, _env(cache)))
            cpu["pass"].append(_cpu(python, work, _env(work / "none")))
        ratio = {n: statistics.median(a / p for a, p in zip(cpu[n], cpu["pass"], strict=True))
                 for n in ("before", "after")}
        pair = statistics.median(a / b for a, b in zip(cpu["after"], cpu["before"], strict=True))
        before, after = statistics.median(cpu["before"]) * 1e3, statistics.median(cpu["after"]) * 1e3
        line = (f"{label}: CPU {before:.1f} -> {after:.1f} ms ({ratio['before']:.2f} -> {ratio['after']:.2f} x pass; "
                f"after/before {pair:.3f}); python -c pass {statistics.median(cpu['pass']) * 1e3:.1f} ms; "
                f"{args.runs} rounds; {same}")
        if not args.no_instructions and shutil.which("valgrind"):
            counts = []
            for _, exe, tree, cache in sides:
                for _ in range(2):
                    subprocess.run([str(exe), *words], cwd=tree, env=_env(cache, seed=True), capture_output=True)
                counts.append(_instructions([str(exe), *words], tree, _env(cache, seed=True)))
            line += f"; instructions {counts[0]:.1f} -> {counts[1]:.1f} M"
        print(line, flush=True)
    base = _instructions(python, work, _env(work / "none", seed=True)) if not args.no_instructions else 0.0
    if base:
        print(f"python -c pass: {base:.1f} M instructions")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
