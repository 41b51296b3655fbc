"""Issue 13's promise for registries of many small files: no input under 1 MB (here the files a registry adds, each
of a few dozen bytes to a few KB) makes a command run past 2 s or 1 GB of memory.

Each *shape* is a registry built in a temporary folder from this checkout's own (``facts/``, ``registry/``,
``locks/``, ``sources/``, ``schema/``, committed to a git repository of its own on ``main``), plus N small files:

- ``base``: the checkout's registry alone (the yardstick every other shape is read against);
- ``checkout``: the registry with the checkout's code (``src/``) committed beside it, as a CI job's clone of
  passprice has it: ``check`` then also compares the checkout's pricing model with the running package's, and
  ``diff`` prices each side with its own code (each side's digest taken);
- ``servings``: N serving files of about 60 bytes (``checkpoint`` and ``card`` only, every other field its default),
  cycling through the registered servings' (checkpoint, card) pairs;
- ``cards``: N card files, each a registered card copied under a new name;
- ``locks``: N lock files, each a registered lock copied under a new name (every copy reproduces and holds);
- ``samelocks``: N lock files of :data:`SERVING` (copies of its registered locks): its ``price`` is judged under
  each (issue 13, session 32: 10,001 of them cost a price about 2 ms of CPU a lock);
- ``otherlocks``: N lock files of the other servings (copies of theirs): a ``price`` of :data:`SERVING` needs none
  of them (session 32: 10,000 of them made it hold 474 MB);
- ``copies``, ``commented``, ``reordered``: N copies of :data:`SERVING`'s own lock, of its bytes, each ending in a
  comment of its own, or each with one table's keys in an order of its own: one content as parsed (issue 13,
  scale88: the last two were each validated, digest-checked, structured and reproduced, `check --no-cache` 9.1 s);
- ``sources``: N source records of about 150 bytes, each valid, distinct (its title) and cited by no fact (``check``
  warns of each: issue 13 measured 4,000 of them, each loaded twice by ``check``);
- ``badsources``: N source records missing five required keys each (``check`` and the review fail, exit 2: issue 13
  measured 3,000 of them making a 2.4 MB pull-request comment).

The added files are left uncommitted, so ``passprice diff`` (default BASE: the merge base with ``main``; HEAD: the
work tree) reviews them as a pull request adding them would be reviewed.

Every command runs in a fresh process (the console script's entry point) with ``--root`` the shape's folder; it
records CPU time (user + sys of that child and what it waited for, such as git), wall time and peak resident memory
(``ru_maxrss``), both from the child's own ``wait4``. *cold*: each run gets an empty cache folder
(``$PASSPRICE_CACHE_DIR``); *warm*: a cache folder the same command filled first. Medians of ``--runs`` runs, with
``python -c pass`` timed in the same run as a yardstick.

``--instructions``: each figure is also counted, once, in instructions executed by the command's own process under
valgrind's callgrind (what a subprocess it starts, git or another side's code, executes is not counted), a measure
the machine's load does not move: on a shared machine CPU times of one command wander by a third from run to run, so
compare changes by these (about 3 minutes a figure of the shipped registry, 5 with 2,000 servings).

Run from a checkout: ``python benchmarks/registry_scale.py [-n 2000] [--runs 3] [--shapes servings,cards]
[--commands check,sweep] [--cold|--warm] [--no-cache] [--before SRC] [--instructions]`` (``--before``: each figure
also with the passprice package found in ``SRC``, e.g. ``pip install --no-deps --target /tmp/before .`` in a
checkout of the revision, or ``git archive main src | tar -x -C /tmp/before`` then ``--before /tmp/before/src``, the
two run in turn; an installed package finds its schemas in its own ``_data``, a source tree beside ``src``, and only
an installed one trusts the pricing model's digest recorded when it was built). Run it with the interpreter of the
environment to measure (``/path/to/venv/bin/python benchmarks/registry_scale.py``: a ``pip install .`` and a ``pip
install -e .`` differ). Nothing here is a test: the numbers depend on the machine and its load.

The code measured is frozen when the run starts: when the interpreter's ``passprice`` is this checkout's ``src/``
(an editable install, or ``PYTHONPATH=src``), the package and ``schema/`` are copied into the run's temporary folder
and every run of the after side (or the only side) imports that copy (``PYTHONPATH``). Each cache entry is keyed by
the running code's files (their status, or their bytes while new: DESIGN.md, the cache of validated files), so a
file of ``src/passprice`` saved while a run of many minutes went on made every later run of the live code miss the
cache its fill run wrote: a ``--warm`` figure of 5,000 locks read as a cold one (27.8 s against 8.8 s, session 33,
scale35; reproduced in session 34 by an edit between the fill and the warm run). An installed package is measured
where it lies.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("facts", "registry", "locks", "sources", "schema")
#: The console script's entry point. Its CPU time and peak resident memory are read off the child's own resource usage
#: (``wait4``): the entry point ends the process with ``os._exit`` from its last exit handler, so a handler of the
#: benchmark's, registered before it, would never run.
ENTRY = "from passprice.entry import main\nmain()\n"
#: A serving every shape has (its locks and audit are measured on it).
SERVING = "r1-qwen7b-h200"


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
                        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"})


def base_registry(folder: Path, code: bool = False) -> Path:
    """The checkout's registry copied into ``folder`` (with its ``src/`` when ``code``), committed on ``main`` of a
    git repository of its own."""
    folder.mkdir(parents=True)
    for name in FOLDERS + (("src",) if code else ()):
        # as git has it: no bytecode, no build's record of the pricing model (git ignores both)
        shutil.copytree(ROOT / name, folder / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "pricing_model.json"))
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "base")
    return folder


def add_servings(folder: Path, n: int) -> None:
    """``n`` serving files of about 60 bytes: checkpoint and card only."""
    pairs = []
    for path in sorted((folder / "registry" / "servings").glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        pairs.append((doc["checkpoint"], doc["card"]))
    for i in range(n):
        checkpoint, card = pairs[i % len(pairs)]
        (folder / "registry" / "servings" / f"s{i:05d}.toml").write_text(
            f'checkpoint = "{checkpoint}"\ncard = "{card}"\n')


def add_cards(folder: Path, n: int) -> None:
    """``n`` card files, each a registered card's bytes under a new name."""
    cards = sorted(p for p in (folder / "facts" / "cards").glob("*.toml"))
    for i in range(n):
        source = cards[i % len(cards)]
        shutil.copyfile(source, source.with_name(f"c{i:05d}-{source.name}"))


def add_locks(folder: Path, n: int) -> None:
    """``n`` lock files, each a registered lock's bytes under a new name (its ``[lock] name`` is its own: the file
    name does not enter the lock's digest)."""
    locks = sorted((folder / "locks").glob("*.lock.toml"))
    for i in range(n):
        source = locks[i % len(locks)]
        shutil.copyfile(source, source.with_name(f"l{i:05d}-{source.name}"))


def _lock_copies(folder: Path, n: int, same: bool) -> None:
    """``n`` copies of the registered locks of :data:`SERVING` (``same``) or of every other serving's (not
    ``same``), cycling through them."""
    locks = []
    for path in sorted((folder / "locks").glob("*.lock.toml")):
        locked = tomllib.loads(path.read_text()).get("lock", {}).get("serving")
        if (locked == SERVING) == same:
            locks.append(path)
    for i in range(n):
        source = locks[i % len(locks)]
        shutil.copyfile(source, source.with_name(f"l{i:05d}-{source.name}"))


def add_same_locks(folder: Path, n: int) -> None:
    """``n`` lock files of :data:`SERVING` (copies of its registered locks): ``price`` of it is judged under each."""
    _lock_copies(folder, n, True)


def add_other_locks(folder: Path, n: int) -> None:
    """``n`` lock files of servings other than :data:`SERVING`: ``price`` of it needs none of them."""
    _lock_copies(folder, n, False)


def _one_lock_copies(folder: Path, n: int, kind: str) -> None:
    """``n`` copies of :data:`SERVING`'s own lock (``locks/SERVING.lock.toml``): of its bytes (``kind`` ``same``),
    each ending in a comment of its own (``commented``), or each with the keys of its ``[facts.array]`` table in an
    order of its own (``reordered``): one content, as parsed, in every copy (scale88)."""
    import itertools

    text = (folder / "locks" / f"{SERVING}.lock.toml").read_text(encoding="utf-8")
    lines = text.split("\n")
    start = lines.index("[facts.array]") + 1
    end = lines.index("", start)
    orders = itertools.permutations(lines[start:end])
    next(orders)  # the order as written
    for i in range(n):
        if kind == "commented":
            copy = text + f"# copy {i}\n"
        elif kind == "reordered":
            copy = "\n".join(lines[:start] + list(next(orders)) + lines[end:])
        else:
            copy = text
        (folder / "locks" / f"c{i:05d}.lock.toml").write_text(copy, encoding="utf-8")


def add_copies(folder: Path, n: int) -> None:
    """``n`` copies of :data:`SERVING`'s lock, its bytes."""
    _one_lock_copies(folder, n, "same")


def add_commented(folder: Path, n: int) -> None:
    """``n`` copies of :data:`SERVING`'s lock, each ending in a comment of its own."""
    _one_lock_copies(folder, n, "commented")


def add_reordered(folder: Path, n: int) -> None:
    """``n`` copies of :data:`SERVING`'s lock, each with its ``[facts.array]`` keys in an order of its own
    (``n`` under 5,040)."""
    _one_lock_copies(folder, n, "reordered")


def add_sources(folder: Path, n: int) -> None:
    """``n`` valid source records nothing cites, each with its own title."""
    for i in range(n):
        (folder / "sources" / f"n{i:05d}.toml").write_text(
            f'[source]\nkind = "web-page"\ntitle = "title {i}"\nread = "read it all"\npublisher = "pp"\n'
            'url = "unknown"\ndate = "unknown"\nretrieved = "unknown"\n')


def add_bad_sources(folder: Path, n: int) -> None:
    """``n`` source records missing their read, publisher, url, date and retrieved keys."""
    for i in range(n):
        (folder / "sources" / f"b{i:05d}.toml").write_text(f'[source]\nkind = "web-page"\ntitle = "title {i}"\n')


SHAPES: dict[str, Callable[[Path, int], None] | None] = {
    "base": None, "checkout": None, "servings": add_servings, "cards": add_cards, "locks": add_locks,
    "samelocks": add_same_locks, "otherlocks": add_other_locks,
    "copies": add_copies, "commented": add_commented, "reordered": add_reordered,
    "sources": add_sources, "badsources": add_bad_sources,
}

COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "sweep": ["sweep", "--batches", "1", "--max-rows", "88000000"],  # a registry of 2,000 servings counts 4 M (shapes)
    "diff": ["diff"],
    "cards": ["cards"],
    "cardsjson": ["cards", "--json"],
    "servings": ["servings"],
    "checkpoints": ["checkpoints"],
    "sources": ["sources"],
    "audit": ["audit", SERVING],
    "price": ["price", SERVING],
    "lock": ["lock", SERVING, "-o", "{tmp}/x.lock.toml", "--force"],
}


def frozen_code(work: Path) -> dict[str, str]:
    """The environment that makes a child import a copy, in ``work``, of the ``passprice`` this interpreter would
    import, when that is this checkout's ``src/`` (so an edit made while the benchmark runs does not move the cache
    keys of the code measured between its fill run and its warm runs); ``{}`` for an installed package, which an
    edit of the checkout does not change."""
    spec = importlib.util.find_spec("passprice")
    if spec is None or spec.origin is None:
        return {}
    package = Path(spec.origin).resolve().parent
    if not package.is_relative_to((ROOT / "src").resolve()):
        return {}
    frozen = work / "code"
    # as git has it (no bytecode, no build's record of the pricing model), then compiled as the checkout is
    shutil.copytree(package, frozen / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "pricing_model.json"))
    shutil.copytree(ROOT / "schema", frozen / "schema")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(frozen / "src")], check=False,
                   stdout=subprocess.DEVNULL)
    return {"PYTHONPATH": str(frozen / "src")}


def measure(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, float, float]:
    """Run ``ARGV`` (a ``python`` command line) in a child: (exit status, CPU seconds, wall seconds, peak MiB), the
    CPU time (user + sys) and peak resident memory (``ru_maxrss``) of the child and what it waited for, from
    ``os.wait4``."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, **env,
                                  # what a run computes is measured, never a replay of it (DESIGN: the result memo)
                                  "PASSPRICE_NO_MEMO": "1"})
    assert child.stderr is not None
    err = child.stderr.read()
    child.stderr.close()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if code not in (0, 1):
        sys.stderr.write(f"  {' '.join(argv[3:])}: exit {code}: "
                         f"{err.decode(errors='replace').strip().splitlines()[-1:]}\n")
    return code, usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> float | None:
    """The instructions (millions) the ``python`` command line ``argv`` executes in its own process under valgrind's
    callgrind (its children not followed), or ``None`` without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], cwd=cwd,
                          env={**os.environ, **env, "PASSPRICE_NO_MEMO": "1"}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6
    sys.stderr.write(f"  {' '.join(argv[3:])}: no instruction count: {done.stderr[-300:]}\n")
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="files each shape adds (default 2000)")
    parser.add_argument("--runs", type=int, default=3, help="runs a figure, the median shown (default 3)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ",".join(SHAPES))
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated: " + ",".join(COMMANDS))
    parser.add_argument("--cold", action="store_true", help="cold cache only")
    parser.add_argument("--warm", action="store_true", help="warm cache only")
    parser.add_argument("--no-cache", action="store_true", help="also run each command with --no-cache")
    parser.add_argument("--before", metavar="SRC", help="also run each command with another passprice (a folder "
                        "holding the passprice package, e.g. from `git archive`), each pair in turn: a before/after "
                        "table from one run")
    parser.add_argument("--instructions", action="store_true", help="also count each figure's instructions, once, "
                        "under valgrind's callgrind (load-free; minutes a figure)")
    args = parser.parse_args()
    caches = ["cold", "warm"]
    if args.cold != args.warm:
        caches = ["cold"] if args.cold else ["warm"]
    if args.no_cache:
        caches.append("no-cache")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    os.environ.clear()
    os.environ.update(env)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False,
                   stdout=subprocess.DEVNULL)
    print(f"load average {os.getloadavg()[0]:.2f}; n = {args.n}; median of {args.runs} runs; CPU = user + sys")
    if args.before is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", args.before], check=False, stdout=subprocess.DEVNULL)
    print(f"{'shape':9s} {'command':12s} {'cache':8s} {'side':6s} {'exit':>4s} {'CPU s':>7s} {'wall s':>7s} "
          f"{'peak MiB':>8s} {'pass CPU':>8s}" + (f" {'G instr':>8s}" if args.instructions else ""))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        code = frozen_code(work)  # the code measured, as it is now: an edit during the run is not measured
        sides = [("", code)] if args.before is None else [("before", {"PYTHONPATH": args.before}), ("after", code)]
        for shape in args.shapes.split(","):
            folder = base_registry(work / shape, code=shape == "checkout")
            add = SHAPES[shape]
            if add is not None:
                add(folder, args.n)
            for command in args.commands.split(","):
                argv = [a.replace("{tmp}", str(work)) for a in COMMANDS[command]]
                for cache in caches:
                    rows: dict[str, list[tuple[int, float, float, float, float]]] = {side: [] for side, _ in sides}
                    for run in range(args.runs + (cache == "warm")):
                        for side, side_env in sides:  # each side in turn, run by run
                            warm_dir = work / f"cache-{shape}-{command}-{side}"
                            cache_dir = warm_dir if cache == "warm" else work / f"cache-cold-{run}"
                            extra = ["--no-cache"] if cache == "no-cache" else []
                            full = [sys.executable, "-c", ENTRY, "--root", str(folder), *extra, *argv]
                            _, yard, _, _ = measure([sys.executable, "-c", "pass"], folder, {})
                            result = measure(full, folder, {"PASSPRICE_CACHE_DIR": str(cache_dir), **side_env})
                            if cache == "cold":
                                shutil.rmtree(cache_dir, ignore_errors=True)
                            if cache == "warm" and run == 0:
                                continue  # the run that fills the cache
                            rows[side].append((*result, yard))
                    for side, side_env in sides:
                        code = rows[side][0][0]
                        cpu, wall, peak, yard = (statistics.median(r[i] for r in rows[side]) for i in (1, 2, 3, 4))
                        counted = ""
                        if args.instructions:
                            cache_dir = work / (f"cache-{shape}-{command}-{side}" if cache == "warm" else "cache-cg")
                            extra = ["--no-cache"] if cache == "no-cache" else []
                            got = instructions([sys.executable, "-c", ENTRY, "--root", str(folder), *extra, *argv],
                                               folder, {"PASSPRICE_CACHE_DIR": str(cache_dir), **side_env})
                            counted = f" {got / 1000:8.3f}" if got is not None else f" {'-':>8s}"
                            if cache != "warm":
                                shutil.rmtree(cache_dir, ignore_errors=True)
                        print(f"{shape:9s} {command:12s} {cache:8s} {side:6s} {code:4d} {cpu:7.2f} {wall:7.2f} "
                              f"{peak:8.0f} {yard:8.3f}{counted}", flush=True)
                for side, _ in sides:
                    shutil.rmtree(work / f"cache-{shape}-{command}-{side}", ignore_errors=True)
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
