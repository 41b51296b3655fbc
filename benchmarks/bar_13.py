"""Issue 13's acceptance bar, measured on inputs just under 1 MB of each kind: "no input under 1 MB (compressed or
not) makes any command run past 2 s or 1 GB RSS".

Each input is one registry file replaced in a private copy of the checkout's registry (a card, a serving, a lock, a
routing record, a measurement file, a checkpoint entry), a sweep grid, a request trace or a GGUF header (plain, .gz,
.xz), run through ``check`` and each command that reads its kind, in a fresh process (``benchmarks/hostile.py``'s
:func:`measure`: wall seconds and peak resident memory) whose CPU seconds (user + system) are taken from
``getrusage(RUSAGE_CHILDREN)``. Every kind gets the same six hostile TOML shapes (one long string, thousands of
one-key tables, an array of 130,000 integers, arrays or inline tables nested as deep as the bytes allow, nothing but
comments) twice: just under 1 MB (refused by size before a byte is parsed) and just under the kind's 256 KiB cap
(parsed); a "control" of each kind (the shipped file with a comment added) is the yardstick run in the same process.
The cache folder is warmed by the shipped registry first, so each run pays for its own input.

Run from a checkout: ``python benchmarks/bar_13.py [--only PART]`` (parts: ``toml``, ``cap``, ``grid``, ``trace``,
``header``). It prints one line a run and the ten slowest by CPU. On a busy machine the wall seconds say more of the
machine's load than of passprice (attack round 61 ran at a load of 8 on 2 cores: 3 to 15 times the CPU seconds);
compare CPU seconds with the controls'. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import lzma
import resource
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

_spec = importlib.util.spec_from_file_location("bench_hostile", ROOT / "benchmarks" / "hostile.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

from hostile import H200, _flat  # noqa: E402  (tests/hostile.py)

MB = 1_000_000  # "under 1 MB"
CAP = (256 << 10) - 200  # just under the 256 KiB of a registry file
KINDS = {  # kind: (file in the registry, the commands that read it)
    "card": (f"facts/cards/{H200}.toml", [["check"], ["cards"], ["price", "r1-qwen7b-h200"]]),
    "serving": ("registry/servings/r1-qwen7b-h200.toml", [["check"], ["price", "r1-qwen7b-h200"]]),
    "lock": ("locks/r1-qwen7b-h200.lock.toml", [["check"], ["reproduce", "locks/r1-qwen7b-h200.lock.toml"]]),
    "routing": ("facts/routing/qwen3-30b-a3b-measured.toml", [["check"], ["price", "qwen3-30b-a3b-h200"]]),
    "measurement": ("registry/measurements/llamacpp-points.toml", [["check"], ["validate"]]),
    "checkpoint": ("registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml",
                   [["checkpoints"], ["price", "r1-qwen7b-h200"]]),
}
Row = tuple[str, str, int, float, float, float]


def shapes(size: int) -> Iterator[tuple[str, str]]:
    """(name, TOML text of fewer than ``size`` bytes): the six hostile shapes."""
    k = size - 40
    yield "string", 'x = "' + "a" * (k - 10) + '"\n'
    tables = "".join(f"[t{i}]\na=1\n" for i in range(k // 14))
    yield "tables", tables[: tables.rfind("[", 0, k)]
    yield "int-array", "a = [" + "1," * ((k - 8) // 2) + "]\n"
    deep = (k - 8) // 2
    yield "nested-arrays", "a = " + "[" * deep + "]" * deep + "\n"
    deep = (k - 8) // 5
    yield "nested-tables", "a = " + "{b=" * deep + "1" + "}" * deep + "\n"
    yield "comments", "#\n" * (k // 2)


def run(rows: list[Row], label: str, root: Path, argv: list[str], cache: Path) -> None:
    """Measure ``passprice --root ROOT ARGV`` and add its row."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code, wall, rss, line = bench.measure(["--root", str(root), *argv], {"PASSPRICE_CACHE_DIR": str(cache)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    command = " ".join(argv[:2])
    rows.append((label, command, code, cpu, wall, rss))
    print(f"{label:34s} {command[:34]:34s} exit {code}  cpu {cpu:5.2f} s  wall {wall:5.2f} s  {rss:5.0f} MiB  "
          f"{line[:60]}", flush=True)


def fresh(base: Path) -> Path:
    """A private copy of the checkout's registry under ``base`` (replacing the last)."""
    shutil.rmtree(base, ignore_errors=True)
    return bench.prepare(base)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run one part: toml, cap, grid, trace, header")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        cache = base / "cache"
        root = fresh(base / "work")
        for argv in (["check"], ["cards"], ["checkpoints"], ["validate"]):  # warm the cache on the shipped files
            bench.measure(["--root", str(root), *argv], {"PASSPRICE_CACHE_DIR": str(cache)})
        for part, size in (("toml", MB), ("cap", CAP)):
            if args.only not in ("", part):
                continue
            for kind, (rel, commands) in KINDS.items():
                root = fresh(base / "work")
                path = root / rel
                if part == "cap":
                    path.write_bytes(path.read_bytes() + b"# a comment\n")
                    for argv in commands:
                        run(rows, f"{kind}-control", root, argv, cache)
                for name, text in shapes(size):
                    path.write_text(text, encoding="utf-8")
                    for argv in commands:
                        run(rows, f"{kind}-{name}-{'1MB' if part == 'toml' else '256K'}", root, argv, cache)
        if args.only in ("", "grid"):
            root = fresh(base / "work")
            grid = root / "grid.toml"
            positions = ",".join(str(1 + i) for i in range(40_000))
            grid.write_text(f'servings = ["all"]\ncards = ["all"]\npositions = [{positions}]\n'
                            'batches = { from = 1, to = 4096, factor = 2 }\n', encoding="utf-8")
            run(rows, "grid-40k-positions", root, ["sweep", "--file", str(grid)], cache)
            grid.write_text('servings = ["all"]\ncards = ["all"]\npositions = [4096]\n'
                            "batches = { from = 1, to = 4294967295, factor = 1 }\n", encoding="utf-8")
            run(rows, "grid-every-batch-to-2^32", root, ["sweep", "--file", str(grid)], cache)
        if args.only in ("", "trace"):
            root = fresh(base / "work")
            for name, prompt, output in (("long-outputs", 1, 4095), ("long-prompts", 4095, 1), ("tiny", 1, 1)):
                trace = base / f"{name}.jsonl"
                line = f'{{"arrival_s": 0.0, "prompt_tokens": {prompt}, "output_tokens": {output}}}\n'
                trace.write_text(line * ((MB - 1) // len(line)), encoding="utf-8")
                run(rows, f"trace-{name}", root, ["simulate", "r1-qwen7b-h200", "--trace", str(trace)], cache)
        if args.only in ("", "header"):
            root = fresh(base / "work")
            for name, raw in [*bench.worst_headers(), ("flat", _flat())]:
                for suffix in (".gguf.xz", ".gguf.gz", ".gguf"):
                    data = (lzma.compress(raw) if suffix == ".gguf.xz" else gzip.compress(raw, 6)
                            if suffix == ".gguf.gz" else raw)
                    if len(data) >= MB:
                        continue
                    path = base / f"{name}{suffix}"
                    path.write_bytes(data)
                    for argv in (["header", str(path)], ["import", str(path), "--name", "hostile", "--force"],
                                 ["price", "--checkpoint", str(path), "--card", H200],
                                 ["best", "--checkpoint", str(path), "--card", H200]):
                        run(rows, f"header-{name}{suffix}", root, argv, cache)
                    (root / "registry" / "checkpoints" / "hostile.toml").unlink(missing_ok=True)
    print(f"== {len(rows)} runs; the ten slowest by CPU:")
    for label, command, code, cpu, wall, rss in sorted(rows, key=lambda r: -r[3])[:10]:
        print(f"{label:34s} {command[:34]:34s} exit {code}  cpu {cpu:5.2f} s  wall {wall:5.2f} s  {rss:5.0f} MiB")
    print(f"largest: {max(r[5] for r in rows):.0f} MiB; exits {sorted({r[2] for r in rows})}")


if __name__ == "__main__":
    main()
