"""What counting another checkout's pricing-model code costs before it is parsed (``pins._count_tokens``, issue 13's
2-second bound at ``pins.MODEL_TOKENS``), and what the parse that follows costs, part by part.

For this checkout's ``src`` and, with ``--base SRC``, another's (main's: ``git archive main src schema | tar -x -C
/tmp/main``, then ``--base /tmp/main/src``), each in a child process of its own with that ``src`` first on
``PYTHONPATH``, the sides alternated round by round, CPU (``process_time``, the best of ``--runs`` in each child, the
median over ``--rounds``) of:

- ``count``: ``_count_tokens`` of the running package's pricing modules, of every module of the package (what
  ``sidecode`` counts of a review's side), and of ``benchmarks/digest89.py``'s forms sized at the cap;
- with ``--parts``, the rest of a capped digest of one form at the cap, in a fresh child each: ``ast.parse``, the
  tree's text (``_tree_text``), dropping the tree, user and system time apart (the system time is the pages the
  parse touches: 400 MB for one name a line).

With ``--review``, a whole ``passprice diff BASE HEAD --format json`` whose both sides bring their own code (copies
of this checkout's registry, ``schema`` and ``src``, ``cost.py`` given a line that moves no price on BASE and another
on HEAD, so neither side's code is the running one's and each is counted whole, ``sidecode.code_of``), run by each
``src`` in turn with a cache folder of its own (the first round, which fills it, left out): CPU = user + sys of the
child and what it waited for (``os.wait4``).

``python -c pass`` is timed in every round as the yardstick. A process's counts kept by their bytes
(``pins._COUNTED``) are dropped before each timed count. With ``--callgrind`` each side's ``count`` child is
also run once under ``valgrind --tool=callgrind`` and its instructions printed, less those of a child that imports
the same modules and counts nothing.

Run from a checkout: ``python benchmarks/cap123.py [--base /tmp/main/src] [--rounds 5] [--parts] [--callgrind]
[--review]``.
Nothing here is a test: CPU depends on the machine and how busy it is; instructions do not.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: A child timing the counts: argv[1] is ``count`` or ``none`` (imports only, the instructions' yardstick).
COUNT = """
import sys, time
sys.path.insert(0, sys.argv[2])
import digest89
from passprice import pins
own = [(pins.PACKAGE / f"{n}.py").read_bytes() for n in pins.pricing_modules()]
every = [p.read_bytes() for p in sorted(pins.PACKAGE.glob("*.py"))]
forms = {f: digest89.sized(f, pins.MODEL_TOKENS, pins._count_tokens) for f in sys.argv[3].split(",")}
cases = {"own pricing modules": own, "every module": every, **{f"{f} at the cap": [d] for f, d in forms.items()}}
if sys.argv[1] == "none":
    raise SystemExit
for label, datas in cases.items():
    best = 9.0
    for _ in range(int(sys.argv[4])):
        getattr(pins, "_COUNTED", {}).clear()  # each run counts afresh (the same bytes are counted once a process)
        start = time.process_time()
        tokens = sum(pins._count_tokens(d) for d in datas)
        best = min(best, time.process_time() - start)
    print(f"{label}\\t{tokens}\\t{best}")
"""

#: A child taking a capped digest's parts for one form at the cap (argv[2]).
PARTS = """
import ast, gc, resource, sys
sys.path.insert(0, sys.argv[1])
import digest89
from passprice import pins
gc.disable()
data = digest89.sized(sys.argv[2], pins.MODEL_TOKENS, pins._count_tokens)
def now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime
t0 = now(); pins._count_tokens(data); t1 = now(); tree = ast.parse(data); t2 = now()
pins._tree_text(tree, set()); t3 = now(); del tree; t4 = now()
for (u0, s0), (u1, s1), part in ((t0, t1, "count"), (t1, t2, "parse"), (t2, t3, "text"), (t3, t4, "drop")):
    print(f"{part}\\t{u1 - u0}\\t{s1 - s0}")
"""


def env_for(src: Path) -> dict[str, str]:
    """The environment of a child running the passprice of ``src``."""
    env = dict(os.environ, PYTHONPATH=str(src), PASSPRICE_NO_MEMO="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(argv: list[str], env: dict[str, str]) -> str:
    """The standard output of the child ``argv``."""
    return subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout


def review_sides(folder: Path) -> tuple[Path, Path]:
    """BASE and HEAD of ``--review`` under ``folder``: each brings its own code, neither the running code's."""
    import shutil

    base, head = folder / "base", folder / "head"
    for name in ("facts", "registry", "locks", "sources", "schema", "src"):
        shutil.copytree(ROOT / name, base / name, ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
    with open(base / "src/passprice/cost.py", "a", encoding="utf-8") as f:
        f.write("\n_CAP_BENCH_BASE = 0\n")
    shutil.copytree(base, head)
    with open(head / "src/passprice/cost.py", "a", encoding="utf-8") as f:
        f.write("\n_CAP_BENCH_HEAD = 0\n")
    return base, head


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of the child ``argv`` and the descendants it waited for (exit 0 or 1 expected)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{argv}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def yardstick() -> float:
    """User + system CPU seconds of a child ``python -c pass``."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """The instructions callgrind counts in the child ``argv``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg", *argv], env=env,
                             check=True, capture_output=True, text=True).stderr  # fmt: skip
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise RuntimeError(out[-2000:])
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout's src folder to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5, help="runs in each child, the best kept")
    parser.add_argument("--forms", default="lines,dense,cr,semis,lambda,fields")
    parser.add_argument("--parts", action="store_true")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--review", action="store_true")
    args = parser.parse_args()
    if args.review:
        review(args)
        return
    sides = {"this": ROOT / "src"}
    if args.base is not None:
        sides = {"base": args.base.resolve(), **sides}
    bench = str(ROOT / "benchmarks")
    py = sys.executable
    counted: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    tokens: dict[str, dict[str, int]] = {side: {} for side in sides}
    parts: dict[str, dict[str, list[tuple[float, float]]]] = {side: {} for side in sides}
    ruler: list[float] = []
    for _ in range(args.rounds):
        for side, src in sides.items():
            out = run([py, "-c", COUNT, "count", bench, args.forms, str(args.runs)], env_for(src))
            for line in out.splitlines():
                label, n, cpu = line.split("\t")
                counted[side].setdefault(label, []).append(float(cpu))
                tokens[side][label] = int(n)
            if args.parts:
                for form in args.forms.split(","):
                    for line in run([py, "-c", PARTS, bench, form], env_for(src)).splitlines():
                        part, user, system = line.split("\t")
                        parts[side].setdefault(f"{form} {part}", []).append((float(user), float(system)))
        ruler.append(yardstick())
    for side in sides:
        for label, cpus in counted[side].items():
            print(f"{side}: count, {label} ({tokens[side][label]:,} tokens): {statistics.median(cpus) * 1000:.1f} ms")
        for label, pairs in parts[side].items():
            user = statistics.median(p[0] for p in pairs)
            system = statistics.median(p[1] for p in pairs)
            print(f"{side}: {label}: user {user * 1000:.0f} ms, system {system * 1000:.0f} ms")
        if args.callgrind:
            env = env_for(sides[side])
            work = instructions([py, "-c", COUNT, "count", bench, args.forms, "1"], env)
            idle = instructions([py, "-c", COUNT, "none", bench, args.forms, "1"], env)
            print(f"{side}: count, every case once: {work - idle:,} instructions ({work:,} less {idle:,})")
    print(f"python -c pass {statistics.median(ruler) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f}", flush=True)


def review(args: argparse.Namespace) -> None:
    """``--review``: each side's code reviewing BASE → HEAD in turn, ``--rounds`` rounds after the first."""
    sides = {"this": ROOT / "src"}
    if args.base is not None:
        sides = {"base": args.base.resolve(), **sides}
    with tempfile.TemporaryDirectory() as tmp:
        base, head = review_sides(Path(tmp))
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        ruler: list[float] = []
        for turn in range(args.rounds + 1):
            for side, src in sides.items():
                env = dict(env_for(src), PASSPRICE_CACHE_DIR=str(Path(tmp) / f"cache-{side}"))
                spent = child_cpu([sys.executable, "-m", "passprice", "diff", str(base), str(head), "--format", "json"],
                                  env)  # fmt: skip
                if turn:
                    cpu[side].append(spent)
            ruler.append(yardstick())
        for side, spent in cpu.items():
            print(f"{side}: review, both sides their own code: {statistics.median(spent) * 1000:,.0f} ms "
                  f"({', '.join(f'{s * 1000:,.0f}' for s in spent)})")
        print(f"python -c pass {statistics.median(ruler) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
