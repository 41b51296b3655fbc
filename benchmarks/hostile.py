"""Issue 13's promise, measured: no input under 1 MB (compressed or not) makes any command run past 2 s or take more
than 1 GB of memory.

Every case runs in a fresh process (``python -m passprice.cli``-equivalent, the console script's entry point) whose
wall time and peak resident memory (``ru_maxrss`` from ``os.wait4``, that child alone) are recorded:

(a) every reproducer of ``tests/hostile.py`` (the fourteen classes);
(b) the worst inputs the header reader's cap allows: each of its budgets (bytes, tensors, keys, strings walked, array
    elements and text kept) filled to just under its limit, compressed, run through ``header``, ``import`` and
    ``price --checkpoint`` (the entry ``import`` wrote, and the file);
(c) a sample of the fuzz module's mutated headers (``tests/test_fuzz.py``), through ``header``, ``price`` and
    ``import``;
(d) registry files far past their size (attack round 57): a stack of 10^5 facts, a source file of 100,000 tables,
    a 50 MB TOML file of one string, and a table or an array nested 10^5 deep, in each kind of registry file, each
    through ``check`` and a command that reads the kind (and, for the two large ones, again with
    ``PASSPRICE_MAX_FILE_BYTES`` raised to 64 MiB, as a user may).

Run from a checkout: ``python benchmarks/hostile.py [--fuzz N] [--only PREFIX]`` (part d alone: ``--only d``). It
prints one line a run and the worst time and memory of each part, and says which inputs were over 1 MB (none should
be; part d's are meant to be). Nothing here is a test: the numbers depend on the machine and how busy it is.
"""

from __future__ import annotations

import argparse
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from gguf import GGUFValueType as V  # noqa: E402

from gguf_bytes import Array, Meta, Tensor, encode  # noqa: E402
from hostile import CASES, H200, prepare  # noqa: E402

#: The console script's entry point, which writes its own peak resident memory (``VmHWM``, kB) where the parent asks
#: when it exits: ``ru_maxrss`` of a child counts the parent's pages it was forked with, so the child says it itself.
#: It says so from ``passprice.entry._end``, the exit handler that ends the process with ``os._exit``: a handler
#: registered before ``main`` runs after ``_end`` (atexit runs them in reverse), so never, and every run read 0 MiB
#: (attack round 57). Registered too, for a run started with SIGINT ignored (a background job), where ``main`` puts
#: no ``_end`` in place and the interpreter exits as usual.
ENTRY = (
    "import atexit, os\n"
    "def _peak():\n"
    "    with open('/proc/self/status') as status:\n"
    "        kb = next(int(line.split()[1]) for line in status if line.startswith('VmHWM:'))\n"
    "    with open(os.environ['PASSPRICE_BENCH_PEAK'], 'w') as out:\n"
    "        out.write(str(kb))\n"
    "atexit.register(_peak)\n"
    "import passprice.entry as entry\n"
    "_end = entry._end\n"
    "def _last():\n"
    "    _peak()\n"
    "    _end()\n"
    "entry._end = _last\n"
    "entry.main()\n"
)
MB = 1 << 20
WALKED = (32 << 20) // 64 - 16  # the strings and inner arrays walked one by one, just under the default budget


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, float, float, str]:
    """Run ``passprice ARGV`` in a child: (exit status, wall seconds, peak resident memory in MiB, last stderr
    line)."""
    with tempfile.NamedTemporaryFile() as peak:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", ENTRY, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
            env={**os.environ, **(env or {}), "PASSPRICE_BENCH_PEAK": peak.name, "PASSPRICE_NO_MEMO": "1"},
        )
        wall = time.perf_counter() - start
        kb = int(Path(peak.name).read_text() or 0)
    lines = done.stderr.decode("utf-8", "replace").splitlines()
    return done.returncode, wall, kb / 1024, lines[-1][:150] if lines else ""


def _arch() -> list[Meta]:
    return [Meta("general.architecture", V.STRING, "llama"), Meta("llama.block_count", V.UINT32, 1),
            Meta("llama.embedding_length", V.UINT32, 8), Meta("llama.context_length", V.UINT32, 4096)]


def _tensors() -> list[Tensor]:
    return [Tensor("token_embd.weight", (8, 16), 0), Tensor("blk.0.attn_norm.weight", (8,), 0)]


def worst_headers() -> Iterator[tuple[str, bytes]]:
    """(name, xz bytes): each budget of the reader filled to just under its limit."""
    yield "empty-strings-walked", encode([*_arch(), Meta("k", V.ARRAY, Array(V.STRING, (), WALKED))]) + bytes(
        8 * WALKED)
    yield "nested-arrays-walked", encode([*_arch(), Meta("k", V.ARRAY, Array(V.ARRAY, (), WALKED))]) + (
        struct.pack("<IQ", int(V.UINT8), 0) * WALKED)
    yield "mixed-nested-walked", encode([*_arch(), Meta("k", V.ARRAY, Array(V.ARRAY, (), WALKED))]) + (
        (struct.pack("<IQ", int(V.UINT8), 0) + struct.pack("<IQ", int(V.INT32), 0)) * (WALKED // 2))
    yield "kept-elements", encode([*_arch(), *(Meta(f"k{i}", V.ARRAY, Array(V.FLOAT32, (0.1,) * 1000))
                                               for i in range(16))], _tensors())
    yield "metadata-keys", encode([*_arch(), *(Meta(f"k{i:05d}", V.ARRAY, Array(V.UINT8, (1,) * 2000))
                                               for i in range(508))], _tensors())
    yield "tensors", encode(_arch(), [Tensor("token_embd.weight", (8, 16), 0),
                                      *(Tensor(f"blk.0.t{i:05d}.weight", (8, 8), 0) for i in range(2040))])
    yield "string-30MB", encode([*_arch(), Meta("k", V.STRING, b"a" * (30 * MB))], _tensors())
    yield "strings-kept-1MiB", encode([*_arch(), *(Meta(f"s{i}", V.STRING, "b" * 60_000) for i in range(17))],
                                      _tensors())
    yield "long-names", encode(_arch(), [Tensor("token_embd.weight", (8, 16), 0),
                                         *(Tensor(f"blk.0.{'n' * 60_000}{i}.weight", (8,), 0) for i in range(17))])
    yield "bytes-cap", encode([*_arch(), Meta("k", V.ARRAY, Array(V.UINT8, (), (32 * MB) - 400))],
                              _tensors()) + bytes(32 * MB)


def fuzz_headers(n: int) -> Iterator[tuple[str, bytes]]:
    """``n`` mutated real headers from the fuzz module's strategy."""
    from hypothesis.errors import NonInteractiveExampleWarning

    from test_fuzz import headers

    strategy = headers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        for i in range(n):
            suffix, raw = strategy.example()
            yield f"fuzz-{i:03d}{suffix}", raw


#: Each registry kind: a file of it in the checkout, and a command reading it (besides ``check``).
KIND_FILES = {
    "card": (f"facts/cards/{H200}.toml", ["cards"]),
    "stack": ("facts/stacks/llamacpp-cuda-2405.toml", ["price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405"]),
    "draft": ("facts/drafts/qwen35-mtp.toml", ["price", "qwen35-27b-h200-mtp"]),
    "routing": ("facts/routing/qwen3-30b-a3b-measured.toml", ["price", "qwen3-30b-a3b-h200"]),
    "serving": ("registry/servings/gemma3-270m-h100.toml", ["servings"]),
    "checkpoint": ("registry/checkpoints/gemma3-270m-q4_k_m.toml", ["checkpoints"]),
    "measurement": ("registry/measurements/llamacpp-points.toml", ["audit", "--source", "ggml-org-llama-cpp"]),
    "source": ("sources/amd-rocm-gpu-specs.toml", ["sources"]),
    "lock": ("locks/gemma3-270m-h100.lock.toml", ["reproduce", "gemma3-270m-h100"]),
}
RAISED = {"PASSPRICE_MAX_FILE_BYTES": str(64 * MB)}


def registry_inputs() -> Iterator[tuple[str, str, str, list[str], dict[str, str]]]:
    """(name, file relative to the root, text appended (``+``) or the whole text, command, environment)."""
    n = 100_000
    stack, stack_cmd = KIND_FILES["stack"]
    facts = "".join(f'\n[share.f{i}]\nvalue = 0.5\nunit = "1"\nprovenance = "estimated"\n'
                    f'source = "xiongjiedai-gpu-benchmarks"\nlocator = "x"\n' for i in range(n))
    source, source_cmd = KIND_FILES["source"]
    sources = "".join(f'\n[s{i}]\ntitle = "t"\nkind = "documentation"\n' for i in range(n))
    for env in ({}, RAISED):
        tag = "-raised" if env else ""
        for command in (["check"], stack_cmd):
            yield f"stack-1e5-facts{tag}", stack, "+" + facts, command, env
        for command in (["check"], source_cmd):
            yield f"source-1e5-tables{tag}", source, "+" + sources, command, env
    for kind, (rel, command) in KIND_FILES.items():
        for name, text in (("string-50MB", 'x = "' + "a" * (50 * MB) + '"\n'),
                           ("array-1e5-deep", "x = " + "[" * n + "]" * n + "\n"),
                           ("table-1e5-deep", "x = " + "{a = " * n + "1" + "}" * n + "\n")):
            for argv in (["check"], command):
                yield f"{kind}-{name}", rel, text, argv, {}


def report(part: str, rows: list[tuple[str, int, float, float, str]]) -> None:
    worst_t = max(rows, key=lambda r: r[2])
    worst_m = max(rows, key=lambda r: r[3])
    print(f"== {part}: {len(rows)} runs; slowest {worst_t[2]:.2f} s ({worst_t[0]}), largest {worst_m[3]:.0f} MiB "
          f"({worst_m[0]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=40, help="mutated headers to run (default 40)")
    parser.add_argument("--only", default="", help="run only this part: a (reproducers), b (worst inputs the cap "
                        "allows), c (fuzzed headers), d (registry files past their size)")
    args = parser.parse_args()
    big: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        if args.only in ("", "a"):
            rows = []
            for case in CASES:
                work = base / case.name
                prepare(work)
                case.build(work)
                sizes = [p.stat().st_size for p in work.rglob("*") if p.is_file() and "root" not in p.parts]
                if any(s >= MB for s in sizes):
                    big.append(case.name)
                code, wall, rss, line = measure(case.argv(work), dict(case.env))
                rows.append((case.name, code, wall, rss, line))
                print(f"{case.name:45s} exit {code}  {wall:5.2f} s  {rss:6.0f} MiB  {line[:70]}")
            report("(a) reproducers", rows)
        root = prepare(base / "shared")
        for part, inputs in (("b", worst_headers()), ("c", fuzz_headers(args.fuzz))):
            if args.only not in ("", part):
                continue
            rows = []
            for name, raw in inputs:
                path = base / (name if ".gguf" in name else f"{name}.gguf.xz")
                data = raw if ".gguf" in name else lzma.compress(raw, preset=6)
                path.write_bytes(data)
                if len(data) >= MB:
                    big.append(f"{name} ({len(data):,} bytes)")
                for command in (
                    ["header", str(path)],
                    ["import", str(path), "--name", "hostile", "--force"],
                    ["price", "--checkpoint", "hostile", "--card", H200],
                    ["price", "--checkpoint", str(path), "--card", H200],
                ):
                    code, wall, rss, line = measure(["--root", str(root), *command])
                    label = f"{name} {command[0]}{' entry' if command[2:3] == ['hostile'] else ''}"
                    rows.append((label, code, wall, rss, line))
                    print(f"{label:45s} exit {code}  {wall:5.2f} s  {rss:6.0f} MiB  {line[:70]}")
                (root / "registry" / "checkpoints" / "hostile.toml").unlink(missing_ok=True)
            report(f"({part}) {'worst inputs the cap allows' if part == 'b' else 'fuzzed headers'}", rows)
        if args.only in ("", "d"):
            rows = []
            for name, rel, text, command, env in registry_inputs():
                work = base / "registry" / name
                if work.exists():
                    shutil.rmtree(work)
                root = prepare(work)
                path = root / rel
                path.write_text(path.read_text(encoding="utf-8") + text[1:] if text.startswith("+") else text,
                                encoding="utf-8")
                code, wall, rss, line = measure(["--root", str(root), *command], env)
                label = f"{name} {' '.join(command[:2])}"
                rows.append((label, code, wall, rss, line))
                print(f"{label:45s} exit {code}  {wall:5.2f} s  {rss:6.0f} MiB  {line[:70]}")
                shutil.rmtree(work)
            report("(d) registry files past their size", rows)
    print("inputs of 1 MB or more:", ", ".join(big) or "none")


if __name__ == "__main__":
    main()
