"""CPU time of a side's asks within one review (``passprice.sidecode.conversations``): the checkout's own package as a
side's code, asked 1 and then 11 times for no lock (``side_json`` of an empty list: what is measured is the ask, not
its pricing); the difference over 10 is what each further ask costs (the supervisor's forks, checks and waits).

Run from a checkout: ``python benchmarks/side_asks.py [--repeat 3] [--sidecode FILE]``. ``--sidecode FILE`` times
another ``sidecode.py`` too (``git show main:src/passprice/sidecode.py > /tmp/old.py``), loaded beside the running
passprice, in turn with this checkout's. CPU is the children's (user + system, ``RUSAGE_CHILDREN``: the side's
processes, reaped when the conversation closes). Nothing here is a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import shutil
import statistics
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def load(path: Path) -> Any:
    """The module ``sidecode.py`` at ``path``, under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"sidecode_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def children_cpu() -> float:
    """User + system CPU seconds of the reaped children so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def conversation(sidecode: Any, root: Any, code: Path, asks: int) -> float:
    """CPU seconds of one conversation of ``asks`` asks."""
    before = children_cpu()
    with sidecode.conversations():
        for _ in range(asks):
            answered = sidecode._ask(root, code, sidecode.DRIVER, {"locks": []})
            assert answered == ({}, "exit status 0"), answered
    return children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sidecode", action="append", default=[], help="Another sidecode.py to time (repeatable).")
    args = parser.parse_args()
    files = [ROOT / "src/passprice/sidecode.py", *(Path(f) for f in args.sidecode)]
    modules = [load(f) for f in files]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "src/passprice", Path(tmp) / "src/passprice",
                        ignore=shutil.ignore_patterns("__pycache__"))
        root = types.SimpleNamespace(path=Path(tmp))
        code = Path(tmp) / "src/passprice"
        runs: dict[Path, list[tuple[float, float]]] = {f: [] for f in files}
        for _ in range(args.repeat):
            for path, module in zip(files, modules, strict=True):
                runs[path].append((conversation(module, root, code, 1), conversation(module, root, code, 11)))
    for path in files:
        one = statistics.median(r[0] for r in runs[path])
        each = statistics.median((r[1] - r[0]) / 10 for r in runs[path])
        print(f"{path}: a conversation of one ask {one:.3f} s CPU, each further ask {each * 1000:.1f} ms "
              f"(median of {args.repeat})")


if __name__ == "__main__":
    main()
