"""A review of an old BASE, ``passprice diff a0187f68 HEAD`` (a BASE from before the list of pricing models), before
and after the walk of the branch's re-locks was made cheaper (``diff._branch_records``; docs/PERFORMANCE.md, round
review137), and whether its output changed.

Two checkouts of the same repository, each reviewed by its own passprice (a venv with that checkout installed
``-e``, so the running code is HEAD's on both sides): ``--before VENV:TREE`` (main) and ``--after VENV:TREE`` (this
branch). Each side gets a cache folder of its own, emptied at the start: the first run of a side is its cold run
(every digest computed, every lock parsed), the later ones warm. The sides alternate run by run; CPU is user + sys of
the child and every process it waited for (git), from ``os.wait4``; ``python -c pass`` is timed beside each run as
the yardstick, and the load average printed.

``--same-output`` instead runs the after side's review twice in this process's venv, once with the walk as it is and
once with the walk as it was (main's ``_branch_records``, ``--before``'s tree's source, exec'd into the after side's
``passprice.review.impacts``), each with an empty cache, and compares standard output and error byte for byte.

Run from a checkout: ``python benchmarks/review137.py --before V:T --after V:T [--runs 3] [--base a0187f68]`` or
``python benchmarks/review137.py --same-output --before V:T --after V:T``. Nothing here is a test: CPU depends on
the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The child that reviews with the walk as main had it: its source cut from main's diff.py (with ``_is_ancestor``,
#: which follows it there) and run in the after side's module (``passprice.review.impacts`` since the review became a
#: subpackage), whose helpers it calls have the same names.
OLD_WALK = r"""
import re, subprocess, sys
from pathlib import Path
from passprice.review import impacts
source = Path(sys.argv[1]).read_text(encoding="utf-8")
walk = re.search(r"^def _branch_records\(.*?(?=^def _locks\()", source, re.S | re.M).group(0)
exec(compile("from __future__ import annotations\n" + walk, "main:diff.py", "exec"), impacts.__dict__)
from passprice.entry import main
sys.argv = ["passprice", *sys.argv[2:]]
main()
"""


def cpu_of(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, bytes, bytes, int]:
    """CPU seconds (user + sys, the child and what it waited for), stdout, stderr and exit status of ``argv``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return usage.ru_utime + usage.ru_stime, out.read(), err.read(), child.returncode


def side(spec: str) -> tuple[Path, Path]:
    venv, _, tree = spec.partition(":")
    return Path(venv), Path(tree)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="VENV:TREE of main")
    parser.add_argument("--after", required=True, help="VENV:TREE of this branch")
    parser.add_argument("--base", default="a0187f68")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--same-output", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    (bvenv, btree), (avenv, atree) = side(args.before), side(args.after)
    scratch = Path(tempfile.mkdtemp(prefix="review137-"))
    try:
        if args.same_output:
            said = []
            for label, argv in (
                ("walk now", [str(avenv / "bin" / "passprice"), "diff", args.base, "HEAD"]),
                ("walk as main had it", [str(avenv / "bin" / "python"), "-c", OLD_WALK,
                                         str(btree / "src" / "passprice" / "diff.py"), "diff", args.base, "HEAD"]),
            ):
                cache = scratch / label.replace(" ", "-")
                took, out, err, status = cpu_of(argv, atree, {**env, "PASSPRICE_CACHE_DIR": str(cache)})
                print(f"{label}: exit {status}, {len(out):,} bytes out, {len(err):,} err, {took:.2f} s CPU (cold)")
                said.append((status, out, err))
            print("same output, byte for byte:", said[0] == said[1])
            if said[0] != said[1]:
                import difflib

                for stream in (1, 2):
                    lines = difflib.unified_diff(said[0][stream].decode().splitlines(), said[1][stream].decode(
                        ).splitlines(), "walk now", "walk as main had it", n=0, lineterm="")
                    print("\n".join(list(lines)[:40]))
            return
        caches = {"before": scratch / "before", "after": scratch / "after"}
        for run in range(args.runs):
            for name, (venv, tree) in (("before", (bvenv, btree)), ("after", (avenv, atree))):
                took, out, err, status = cpu_of([str(venv / "bin" / "passprice"), "diff", args.base, "HEAD"], tree,
                                                {**env, "PASSPRICE_CACHE_DIR": str(caches[name])})
                pass_cpu = cpu_of([sys.executable, "-c", "pass"], tree, env)[0]
                print(f"run {run + 1} ({'cold' if run == 0 else 'warm'}) {name}: {took:.2f} s CPU, exit {status}, "
                      f"{len(out):,} bytes out; python -c pass {pass_cpu * 1000:.1f} ms; load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
