"""A ``lock --update`` run's tests of its lock's name over ``locks/`` (round left92, issues 13 and 16): the CPU of
the name tests one ``lock --update -o locks/old.lock.toml`` of a first-format lock makes, with N other current-format
locks in the folder (copies of the shipped ``r1-qwen7b-h200-llamacpp`` lock, 169 KB, each renamed ``copy-NNNN`` and so
each its own bytes, each holding the serving's name ``r1-qwen7b-h200`` as bytes, as the locks of one serving do).

For this checkout's ``src`` and, with ``--base SRC``, another's (main's, say), each side run in a process of its own
with its ``src`` first on ``PYTHONPATH``: the base's two tests (``locking.require_unique_update_name``, then
``locking.require_unique_name``) where it has the first, else this branch's one (``require_unique_name`` given the
old lock); beside it a yardstick measured in the same process, reading every file of the folder's bytes once. CPU
is ``resource.getrusage`` (user + system) of the calls alone, the mean of ``--runs``.

Run from a checkout: ``python benchmarks/names92.py [--base /path/to/main/src] [-n 100] [--runs 3]``. Nothing here is
a test: CPU depends on the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
R1 = "r1-qwen7b-h200"

#: The side's process: ``python -c _SIDE ROOT RUNS`` prints ``yardstick_ms name_tests_ms``.
_SIDE = """
import resource, sys
from pathlib import Path
import attrs
from passprice import locking
from passprice.locks import read_lock
from passprice.registry import Root
root, runs = Root(Path(sys.argv[1])), int(sys.argv[2])
old_path = root.locks / "old.lock.toml"
old = read_lock(old_path)
written = read_lock(root.locks / "r1-qwen7b-h200-best.lock.toml")
lock = attrs.evolve(written, info=attrs.evolve(written.info, name=old.name))  # a current-format lock of old's name

def cpu():
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime

def yardstick():
    for path in root.locks.iterdir():
        path.read_bytes()

def tests():
    if hasattr(locking, "require_unique_update_name"):
        locking.require_unique_update_name(root, old_path, old.name, old)
        locking.require_unique_name(root, old_path, lock, True, "r1-qwen7b-h200")
    else:
        locking.require_unique_name(root, old_path, lock, True, "r1-qwen7b-h200", old)

said = []
for run in (yardstick, tests):
    start = cpu()
    for _ in range(runs):
        run()
    said.append(f"{(cpu() - start) / runs * 1000:.1f}")
print(" ".join(said))
"""


def registry(where: Path, n: int) -> Path:
    """A copy of the checkout's registry under ``where`` with ``locks/old.lock.toml`` (the first-format lock of
    ``tests/data/locks-v1``), R1's own lock removed (so the update is written) and ``n`` renamed copies; its root."""
    root = where / "root"
    for part in ("facts", "registry", "locks", "sources"):
        shutil.copytree(ROOT / part, root / part)
    (root / "locks" / f"{R1}.lock.toml").unlink()
    shutil.copy(ROOT / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", root / "locks" / "old.lock.toml")
    text = (root / "locks" / f"{R1}-llamacpp.lock.toml").read_text(encoding="utf-8")
    for i in range(n):
        renamed = text.replace(f'name = "{R1}-llamacpp"', f'name = "copy-{i:04d}"', 1)
        (root / "locks" / f"copy-{i:04d}.lock.toml").write_text(renamed, encoding="utf-8")
    return root


def main() -> None:
    """Parse the arguments, build the registry, run each side, print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout's src to measure beside this one")
    parser.add_argument("-n", type=int, default=100, help="other current-format locks in locks/ (default 100)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = registry(Path(tmp), args.n)
        sides = [("base", args.base)] if args.base else []
        for label, src in [*sides, ("this", ROOT / "src")]:
            env = {**os.environ, "PYTHONPATH": str(src)}
            out = subprocess.run([sys.executable, "-c", _SIDE, str(root), str(args.runs)], env=env, check=True,
                                 capture_output=True, text=True, cwd=tmp).stdout.split()
            print(f"{label}: {args.n} locks: name tests {out[1]} ms CPU a run (yardstick, every file's bytes read: "
                  f"{out[0]} ms)")


if __name__ == "__main__":
    main()
