"""CPU time a review spends on a side's own code (``passprice diff BASE HEAD``, folders): HEAD is BASE (a copy of the
checkout's registry and ``src``) with one pricing module changed by a statement that moves no price, so HEAD's locks
are priced by HEAD's code out of process (``passprice.sidecode``: its supervisor, the zygote importing the package,
a process per ask), beside the same review of a HEAD whose code is BASE's (every side in process). The difference of
the two is the side's CPU per review.

Run from a checkout: ``python benchmarks/side_review.py [--repeat 7] [--code SRC]``. ``--code SRC`` runs the review
with another copy of ``src`` first on ``PYTHONPATH`` (``git archive main src schema | tar -x -C /tmp/old``, then
``--code /tmp/old/src``: the running code before; the sides' code is this checkout's either way). Each run is a child
process; its CPU (user + system, its waited-for descendants included: ``os.wait4``'s rusage) is paired with a child
``python -c pass``, and medians of ``--repeat`` rounds (each code in turn) are printed with the load average. Nothing
here is a test: the numbers depend on the machine.
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

ROOT = Path(__file__).resolve().parent.parent
#: The pricing module HEAD changes, and the statement appended to it (no figure passes through it).
MODULE = "src/passprice/cost.py"
CHANGE = "\n_SIDE_REVIEW_BENCH = 0\n"


def build(folder: Path) -> tuple[Path, Path, Path]:
    """BASE, HEAD (its code changed) and SAME (BASE's code, copied) under ``folder``."""
    base = folder / "base"
    for name in ("facts", "registry", "locks", "sources", "schema", "src"):
        shutil.copytree(ROOT / name, base / name, ignore=shutil.ignore_patterns("__pycache__"))
    head, same = folder / "head", folder / "same"
    shutil.copytree(base, head)
    shutil.copytree(base, same)
    with open(head / MODULE, "a", encoding="utf-8") as f:
        f.write(CHANGE)
    return base, head, same


def cpu(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of the child ``argv`` and the descendants it waited for."""
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, env=env)
        assert child.stderr is not None
        said = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, 1), (argv, said.decode()[-2000:])
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--code", action="append", default=[], help="A src folder to time too (repeatable).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, head, same = build(Path(tmp))
        cache = Path(tmp) / "cache"
        codes = [None, *args.code]
        runs: dict[str | None, list[tuple[float, float, float]]] = {code: [] for code in codes}
        for turn in range(args.repeat + 1):  # the codes in turn, a round at a time (the load drifts less)
            for code in codes:
                env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
                if code is not None:
                    env["PYTHONPATH"] = code
                review = [sys.executable, "-m", "passprice", "diff", str(base), str(head), "--format", "json"]
                alike = [sys.executable, "-m", "passprice", "diff", str(base), str(same), "--format", "json"]
                run = (cpu([sys.executable, "-c", "pass"], env), cpu(review, env), cpu(alike, env))
                if turn:  # the first round warms the cache of validated files
                    runs[code].append(run)
        for code in codes:
            side = statistics.median(r[1] - r[2] for r in runs[code])
            print(f"{code or 'this checkout'}: review {statistics.median(r[1] for r in runs[code]):.3f} s CPU, "
                  f"same code {statistics.median(r[2] for r in runs[code]):.3f} s, side's code {side:.3f} s; "
                  f"python -c pass {statistics.median(r[0] for r in runs[code]):.3f} s (median of {args.repeat}; "
                  f"load {os.getloadavg()[0]:.1f})")

if __name__ == "__main__":
    main()
