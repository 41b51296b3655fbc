"""Speed of the two commands issue 13 times on inputs under 1 MB: ``passprice simulate`` of a 1 MB trace and
``passprice import`` of a header of 2,040 tensors (the most the header reader takes), each a whole process, its CPU
time (user + sys) and wall time, medians, beside ``python -c pass`` timed in the same run.

The trace: the synthetic generator's heavy-tailed requests (``passprice.trace.synthetic``, seed 1, Poisson arrivals
at 50/s, lengths clipped to the serving's 4,096-position limit) written as JSON Lines, as many requests as fit in
1,000,000 bytes (about 13,000), served by ``r1-qwen7b-h200`` under both policies. The header: the "tensors" case
of ``benchmarks/hostile.py`` (1 token embedding and 2,040 8×8 F32 tensors), xz-compressed, imported into a private
copy of the registry.

Run from a checkout: ``python benchmarks/simulate.py [--runs N]``. Nothing here is a test: the numbers depend on the
machine (on a shared one, read them beside the yardstick); the README reports one run.
"""

from __future__ import annotations

import argparse
import lzma
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from gguf import GGUFValueType as V  # noqa: E402

from gguf_bytes import Meta, Tensor, encode  # noqa: E402
from hostile import prepare  # noqa: E402
from passprice.trace import Synthetic, synthetic, trace_lines  # noqa: E402

MB = 1_000_000
ENTRY = "from passprice.cli import main; main()"


def trace_text(limit: int = 4096, budget: int = MB) -> tuple[str, int]:
    """The longest prefix of whole lines of the synthetic trace that fits ``budget`` bytes, and its requests."""
    lines = trace_lines(synthetic(Synthetic(16_000, 1, 50.0), limit)).splitlines(keepends=True)
    size = 0
    for n, line in enumerate(lines):
        size += len(line.encode())
        if size > budget:
            return "".join(lines[:n]), n
    return "".join(lines), len(lines)


def header_xz() -> bytes:
    """The 2,040-tensor header, xz-compressed."""
    meta = [Meta("general.architecture", V.STRING, "llama"), Meta("llama.block_count", V.UINT32, 1),
            Meta("llama.embedding_length", V.UINT32, 8), Meta("llama.context_length", V.UINT32, 4096)]
    tensors = [Tensor("token_embd.weight", (8, 16), 0), *(Tensor(f"blk.0.t{i:05d}.weight", (8, 8), 0)
                                                         for i in range(2040))]
    return lzma.compress(encode(meta, tensors))


def run_once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds of the child, wall seconds) of one run; raises ``RuntimeError`` when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[-300:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        root = prepare(base)
        text, requests = trace_text()
        trace = base / "trace.jsonl"
        trace.write_text(text)
        header = base / "tensors.gguf.xz"
        header.write_bytes(header_xz())
        py = [sys.executable, "-c"]
        cases = [
            ("python -c pass (yardstick)", [*py, "pass"]),
            (f"simulate r1-qwen7b-h200 --trace <{trace.stat().st_size:,} B, {requests:,} requests>",
             [*py, ENTRY, "simulate", "r1-qwen7b-h200", "--trace", str(trace)]),
            (f"import <2,040-tensor header, {header.stat().st_size:,} B .xz>",
             [*py, ENTRY, "import", str(header), "--name", "bench", "--force"]),
        ]
        env_note = f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs"
        print(f"medians of {args.runs} runs ({env_note})")
        for label, argv in cases:
            cpu, wall = zip(*(run_once(argv, root) for _ in range(args.runs)), strict=True)
            print(f"  {label:<72} CPU {statistics.median(cpu):6.2f} s   wall {statistics.median(wall):6.2f} s")


if __name__ == "__main__":
    main()
