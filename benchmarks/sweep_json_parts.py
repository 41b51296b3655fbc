"""Where a sweep's JSON text spends its CPU time, beside its CSV text of the same rows in the same run (issue 16:
``sweep -o grid.json`` at 0.83 to 0.91 M prices a second of CPU at ``--jobs 1`` where CSV makes 1.2 to 1.3 M).

The bench grid of ``bench.py`` (every registered serving and card, five positions, batches up to >= 10^6 points) is
priced once in this process; then, round after round, its text is made as ``passprice sweep`` makes it for a file
(``text_chunks(…, binary=True)``), CSV and JSON in turn (the order alternated a round), and each is timed in CPU
seconds (user + sys of this process). During the JSON rounds the float texts (``floattext.float_rows_keyed_bytes``
since sweepjson100: each priced row's floats and the keys between them, one orjson call a group; before it
``floattext.float_cells_bytes``, one text a float, which this script times on a revision that has it) and the laying
out of the runs of priced rows (``sweep._lay``) are timed apart and the items the runs add to the list each group
joins are counted; what is left is the gathering of the group's columns, the held bytes' texts, the per-run work, the
refused runs' joins and the joins of the priced rows. The JSON's bytes a row and how many of them are its
keys (each ``"name": ``) are counted on the text itself. Medians over rounds; nothing here is a test (the machine's
other load moves every figure: read the ratios).

Run from a checkout: ``python benchmarks/sweep_json_parts.py [--points N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from passprice import sweep
    from passprice.registry import find_root
    from passprice.sweep import MAX_ROWS, Grid, Sweeper, text_chunks

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=1_000_000, help="points of the grid (bench.py's default)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = find_root(ROOT)
    servings, cards = root.names(root.servings), root.names(root.cards)
    positions = (256.0, 1024.0, 2048.0, 4096.0, 8192.0)
    batches = -(-args.points // (len(servings) * len(cards) * len(positions)))
    grid = Grid(tuple(servings), tuple(range(1, batches + 1)), tuple(cards), positions)
    rows = grid.size()
    with np.errstate(all="ignore"):
        segments = list(Sweeper(root, max_rows=MAX_ROWS).segments(grid))  # priced once: the text alone is timed

    spent = {"cells": 0.0, "lay": 0.0}
    items = [0]

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*given: Any) -> Any:
            start = time.process_time()
            try:
                return function(*given)
            finally:
                spent[name] += time.process_time() - start

        return wrapper

    floats_name = "float_rows_keyed_bytes" if hasattr(sweep, "float_rows_keyed_bytes") else "float_cells_bytes"
    cells, lay = getattr(sweep, floats_name), sweep._lay

    def counted_lay(parts: list[Any], pieces: list[Any], n: int) -> None:
        before = len(parts)
        lay(parts, pieces, n)
        items[0] += len(parts) - before

    def text(fmt: str) -> tuple[float, int, bytes]:
        start = time.process_time()
        size, head = 0, b""
        for chunk in text_chunks(iter(segments), fmt, binary=True):
            size += len(chunk)
            if not head:
                head = bytes(chunk[:1 << 20]) if isinstance(chunk, bytes) else chunk[:1 << 20].encode()
        return time.process_time() - start, size, head

    made: dict[str, list[float]] = {"csv": [], "json": [], "cells": [], "lay": []}
    sizes: dict[str, int] = {}
    head = b""
    for k in range(args.rounds):
        for fmt in ("json", "csv") if k % 2 == 0 else ("csv", "json"):
            if fmt == "json":
                spent.update(cells=0.0, lay=0.0)
                items[0] = 0
                setattr(sweep, floats_name, timed("cells", cells))
                sweep._lay = timed("lay", counted_lay)
            try:
                seconds, sizes[fmt], first = text(fmt)
            finally:
                setattr(sweep, floats_name, cells)
                sweep._lay = lay
            made[fmt].append(seconds)
            if fmt == "json":
                made["cells"].append(spent["cells"])
                made["lay"].append(spent["lay"])
                head = first
    js, cs = statistics.median(made["json"]), statistics.median(made["csv"])
    ratio = statistics.median(j / c for j, c in zip(made["json"], made["csv"], strict=True))
    # The keys' share of a row, counted on the first MiB of the JSON (its rows' keys are every row's).
    lines = head.split(b"\n")[1:-1]  # the whole rows of the first MiB ("[" on a line of its own before them)
    sample = b"\n".join(lines)
    first_row = json.loads(lines[0].rstrip(b","))
    keys = sum(sample.count(b'"%s": ' % k.encode()) * (len(k) + 4) for k in first_row) / len(lines)
    print(f"{rows:,} rows ({len(segments):,} segments), {args.rounds} rounds, text made as the command makes it")
    print(f"  JSON text {js:.3f} s CPU ({rows / js / 1e6:.2f} M rows/s), {sizes['json'] / rows:.1f} bytes a row")
    print(f"  CSV text  {cs:.3f} s CPU ({rows / cs / 1e6:.2f} M rows/s), {sizes['csv'] / rows:.1f} bytes a row")
    print(f"  JSON / CSV, round by round: {ratio:.2f} x; JSON - CSV: {js - cs:.3f} s")
    print(f"  JSON's keys: {keys:.0f} bytes a row in the first MiB's rows ({keys / (sizes['json'] / rows):.0%} of an "
          "average row)")
    print(f"  JSON float texts ({floats_name}): {statistics.median(made['cells']):.3f} s; priced runs laid out "
          f"(_lay): {statistics.median(made['lay']):.3f} s, {items[0] / rows:.1f} list items a row joined; the rest "
          f"(columns gathered, held bytes, per-run work, the joins): "
          f"{js - statistics.median(made['cells']) - statistics.median(made['lay']):.3f} s")


if __name__ == "__main__":
    main()
