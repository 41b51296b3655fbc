"""Speed of the commands issue 13 times on inputs under 1 MB: ``passprice simulate`` of two traces under 1 MB and
``passprice import`` of a header of 2,040 tensors (the most the header reader takes), each a whole process, its CPU
time (user + sys), wall time and peak RSS, medians, beside ``python -c pass`` timed in the same run.

The traces, both served under both policies:

- **arrivals**: the synthetic generator's heavy-tailed requests (``passprice.trace.synthetic``, seed 1, Poisson
  arrivals at 50/s, lengths clipped to the serving's 4,096-position limit) written as JSON Lines, as many requests as
  fit in 1,000,000 bytes (12,998), served by ``r1-qwen7b-h200``: about 190,000 steps a policy, an arrival every 15;
- **queue** (the attacker's shape): 15,000 requests all arriving at 0, prompts uniform in 100 … 600 tokens (seed
  13), outputs 1 … 4,000 tokens in turn (request i asks for i mod 4,000 + 1), 925 kB, served by
  ``gemma3-270m-h100 --max-batch 160``: about 180,000 steps a policy, a request finishing (and the next admitted)
  every 12;
- the arrivals trace served three more ways: by a **drafting** serving (``qwen35-27b-h200-mtp``, 2 tokens drafted a
  pass: fractional tokens a pass, so no stretch is planned in closed form), with **--chunk 256** (most prompts
  chunked over several steps), and, as **prefix**, with every second prompt over 600 tokens naming one of 3 shared
  512-token prefixes (cut to whole lines under 1 MB, 11,592 requests) on the paged ``r1-qwen7b-mi300x-int8kv``.

Each simulate runs with ``--max-work`` lifted (to time the whole run) and once more under the default budget, whose
outcome (ran, or refused by name) is printed beside it; the queue once more with ``--json -o FILE`` (its 19 MB
document of every request's record), and with ``--plot FILE.png`` and ``--plot FILE.svg`` (matplotlib's import and
one drawing of 15,000 requests a policy; skipped without matplotlib).

The header: the "tensors" case of ``benchmarks/hostile.py`` (1 token embedding and 2,040 8×8 F32 tensors),
xz-compressed, imported into a private copy of the registry.

Run from a checkout: ``python benchmarks/simulate.py [--runs N]``. Nothing here is a test: the numbers depend on the
machine (on a shared one, read them beside the yardstick); the README reports one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import lzma
import os
import random
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
ENTRY = "from passprice.entry import main; main()"
#: Some traces take more than simulate's default --max-work (90,000 units): lifted, to time the whole run.
LIFT = "10000000"


def trace_text(limit: int = 4096, budget: int = MB) -> tuple[str, int]:
    """The longest prefix of whole lines of the synthetic trace that fits ``budget`` bytes, and its requests."""
    lines = trace_lines(synthetic(Synthetic(16_000, 1, 50.0), limit)).splitlines(keepends=True)
    size = 0
    for n, line in enumerate(lines):
        size += len(line.encode())
        if size > budget:
            return "".join(lines[:n]), n
    return "".join(lines), len(lines)


def queue_text(requests: int = 15_000, seed: int = 13) -> str:
    """The attacker's queue: ``requests`` requests at 0, prompts uniform in 100 … 600, outputs i mod 4,000 + 1."""
    rng = random.Random(seed)
    return "".join(f'{{"arrival_s": 0, "prompt_tokens": {rng.randint(100, 600)}, "output_tokens": {i % 4000 + 1}}}\n'
                   for i in range(requests))


def prefix_text(text: str, budget: int = MB) -> str:
    """The arrivals trace with every second prompt over 600 tokens naming one of 3 shared 512-token prefixes, cut to
    whole lines under ``budget`` bytes."""
    out: list[str] = []
    size = 0
    for i, line in enumerate(text.splitlines()):
        request = json.loads(line)
        if i % 2 == 0 and request["prompt_tokens"] > 600:
            request["prefix_id"] = f"sys{i % 3}"
            request["prefix_tokens"] = 512
        row = json.dumps(request) + "\n"
        size += len(row.encode())
        if size > budget:
            break
        out.append(row)
    return "".join(out)


def header_xz() -> bytes:
    """The 2,040-tensor header, xz-compressed."""
    meta = [Meta("general.architecture", V.STRING, "llama"), Meta("llama.block_count", V.UINT32, 1),
            Meta("llama.embedding_length", V.UINT32, 8), Meta("llama.context_length", V.UINT32, 4096)]
    tensors = [Tensor("token_embd.weight", (8, 16), 0), *(Tensor(f"blk.0.t{i:05d}.weight", (8, 8), 0)
                                                         for i in range(2040))]
    return lzma.compress(encode(meta, tensors))


def run_once(argv: list[str], cwd: Path, refusable: bool = False) -> tuple[float, float, float, str]:
    """(CPU seconds of the child, wall seconds, its peak RSS in MB, "ran" or "refused") of one run; raises
    ``RuntimeError`` when it fails (``refusable``: a refusal by --max-work, exit 2, is an outcome)."""
    start = time.perf_counter()
    # What a run computes is measured, never a replay of it (DESIGN: the result memo).
    env = {**os.environ, "PASSPRICE_NO_MEMO": "1"}
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    outcome = "ran"
    if refusable and child.returncode == 2 and b"--max-work" in err:
        outcome = "refused"
    elif child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {child.returncode}: {err.decode()[-300:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, outcome


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
        queue = base / "queue.jsonl"
        queue.write_text(queue_text())
        prefix = base / "prefix.jsonl"
        prefix.write_text(prefix_text(text))
        header = base / "tensors.gguf.xz"
        header.write_bytes(header_xz())
        py = [sys.executable, "-c"]
        sim = [*py, ENTRY, "simulate"]
        arrivals = f"<arrivals: {trace.stat().st_size:,} B, {requests:,} requests>"
        simulations = [
            (f"r1-qwen7b-h200 --trace {arrivals}", ["r1-qwen7b-h200", "--trace", str(trace)]),
            (f"gemma3-270m-h100 --max-batch 160 --trace <queue: {queue.stat().st_size:,} B>",
             ["gemma3-270m-h100", "--max-batch", "160", "--trace", str(queue)]),
            ("qwen35-27b-h200-mtp --trace <arrivals> (drafting)", ["qwen35-27b-h200-mtp", "--trace", str(trace)]),
            ("r1-qwen7b-h200 --chunk 256 --trace <arrivals>", ["r1-qwen7b-h200", "--chunk", "256", "--trace",
                                                                str(trace)]),
            (f"r1-qwen7b-mi300x-int8kv --trace <prefix: {prefix.stat().st_size:,} B>",
             ["r1-qwen7b-mi300x-int8kv", "--trace", str(prefix)]),
        ]
        cases = [("python -c pass (yardstick)", [*py, "pass"], False)]
        for label, argv in simulations:
            cases += [(f"simulate {label}", [*sim, *argv, "--max-work", LIFT], False),
                      ("  the same under the default --max-work", [*sim, *argv], True)]
        # The queue's --json document (19 MB, every request's record) written to a file: issue 13's 2 s.
        cases.append(("  the queue, --json -o FILE (default --max-work)",
                      [*sim, "gemma3-270m-h100", "--max-batch", "160", "--trace", str(queue), "--json", "-o",
                       str(base / "queue.json"), "--force"], False))
        if importlib.util.find_spec("matplotlib") is not None:
            for fmt in ("png", "svg"):
                cases.append((f"  the queue, --plot FILE.{fmt} (default --max-work)",
                              [*sim, "gemma3-270m-h100", "--max-batch", "160", "--trace", str(queue), "--plot",
                               str(base / f"queue.{fmt}"), "--force"], False))
        cases.append((f"import <2,040-tensor header, {header.stat().st_size:,} B .xz>",
                      [*py, ENTRY, "import", str(header), "--name", "bench", "--force"], False))
        env_note = f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs"
        print(f"medians of {args.runs} runs ({env_note})")
        for label, argv, refusable in cases:
            cpu, wall, rss, outcome = zip(*(run_once(argv, root, refusable) for _ in range(args.runs)), strict=True)
            said = f"   {'/'.join(sorted(set(outcome)))}" if refusable else ""
            print(f"  {label:<76} CPU {statistics.median(cpu):6.2f} s   wall {statistics.median(wall):6.2f} s   "
                  f"RSS {statistics.median(rss):5.0f} MB{said}")


if __name__ == "__main__":
    main()
