"""CPU time of a review (``passprice diff BASE HEAD``) whose HEAD adds 50 serving stacks, each fitted to its own 111
measured runs (copies of the registered llama.cpp stack and its XiongjieDai runs, renamed) and each named by a lock:
every fit is re-run by HEAD's ``check`` findings and by the stale-stack marks on the locks (leftovers round 21: it
was re-run once for each, now once a stack a review).

Run from a checkout: ``python benchmarks/review_stacks.py [--repeat 5] [--code SRC]``. ``--code SRC`` runs the
review with another copy of ``src`` first on ``PYTHONPATH`` (``git archive HEAD~1 src | tar -x -C /tmp/old``: the
code before). Each run is a child process; its CPU (user + system, ``os.wait4``'s rusage) is paired with a child
``python -c pass`` right before it, and the median of ``--repeat`` pairs is printed with the load average. Nothing
here is a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACK = "llamacpp-cuda-2405"
RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
SERVING = ["--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512", "--position", "256"]


def build(folder: Path, stacks: int) -> tuple[Path, Path]:
    """BASE (a copy of the checkout's registry) and HEAD (BASE with ``stacks`` stacks, their runs and a lock each)."""
    from click.testing import CliRunner

    from passprice.cli import cli

    base = folder / "base"
    for name in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(ROOT / name, base / name)
    head = folder / "head"
    shutil.copytree(base, head)
    stack_text = (ROOT / f"facts/stacks/{STACK}.toml").read_text(encoding="utf-8")
    runs_text = (ROOT / RUNS).read_text(encoding="utf-8")
    for k in range(stacks):
        name = f"lc{k}"
        (head / f"facts/stacks/{name}.toml").write_text(
            re.sub(r'run = "xd3\.', f'run = "k{k}.xd3.', stack_text).replace(STACK, name), encoding="utf-8")
        (head / f"registry/measurements/runs-{name}.toml").write_text(
            re.sub(r'id = "xd3\.', f'id = "k{k}.xd3.', runs_text).replace(f'stack = "{STACK}"', f'stack = "{name}"'),
            encoding="utf-8")
    for k in range(stacks):
        result = CliRunner().invoke(cli, ["--root", str(head), "lock", *SERVING, "--stack", f"lc{k}",
                                          "-o", str(head / f"locks/lc{k}.lock.toml")])
        assert result.exit_code == 0, result.output
    return base, head


def cpu(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of the child ``argv``."""
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, env=env)
        assert child.stderr is not None
        said = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, 1), (argv, said.decode()[-2000:])
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stacks", type=int, default=50)
    parser.add_argument("--code", action="append", default=[], help="A src folder to time too (repeatable).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, head = build(Path(tmp), args.stacks)
        cache = Path(tmp) / "cache"
        for code in [None, *args.code]:
            env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache)}
            if code is not None:
                env["PYTHONPATH"] = code
            review = [sys.executable, "-m", "passprice", "diff", str(base), str(head), "--format", "json"]
            cpu(review, env)  # warm the cache of validated files
            pairs = [(cpu([sys.executable, "-c", "pass"], env), cpu(review, env)) for _ in range(args.repeat)]
            print(f"{code or 'this checkout'}: review {statistics.median(p[1] for p in pairs):.2f} s CPU, "
                  f"python -c pass {statistics.median(p[0] for p in pairs):.3f} s (median of {args.repeat}; "
                  f"load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
