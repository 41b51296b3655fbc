"""The sweep as it is written: every row the scalar pricer's bit for bit (positions priced from each position's own
pass shape), and the text written a segment at a time (columns formatted in one pass) the same bytes as the
row-at-a-time writer, in CSV and JSON, refusals, host memory and rows priced alone included."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from passprice.errors import InputError
from passprice.registry import find_root
from passprice.sweep import EXACT_POSITIONS, Grid, Sweeper, scalar_rows, text_chunks, write_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)

GRIDS = {
    "positions": Grid(
        servings=(
            "gemma3-270m-h100",
            "r1-qwen7b-mi300x-int8kv",
            "qwen35-27b-ws1-trailing",
            "qwen3next-80b-a3b-h200",  # a mixture of experts: its routed experts stream with the batch
            "qwen3-30b-a3b-h200",
        ),
        batches=(0, 1, 5, 40, 300, 3000, 20_000),
        cards=("h200_sxm_141gb", "sn40l", "ws1_hypothetical"),
        positions=(0.0, 100.0, 511.5, 512.0, 4096.0, 40_000.0, 200_000.0),
    ),
    # NumPy's vectorized power may round a routing's (1 - p)^tokens a unit in the last place away from the C
    # library's: found at qwen3-30b-a3b-h200 on the A100, position 1024, batch 8.
    "mixtures of experts": Grid(
        servings=("qwen3-30b-a3b-h200", "qwen3-30b-a3b-mi300x", "gpt-oss-20b-h200"),
        batches=tuple(range(1, 41)),
        cards=("a100_sxm4_80gb", "h200_sxm_141gb"),
        positions=(1024.0, 2048.0),
    ),
    "drafts and host memory": Grid(
        servings=("qwen35-27b-h200-mtp", "qwen35-27b-h100-every8", "qwen35-27b-ws1-trailing"),
        batches=(1, 3, 16, 64, 200, 400, 1000, 4000),
        draft_tokens=(0, 1, 2, 3, 4),
    ),
}


@pytest.mark.parametrize("name", list(GRIDS))
def test_rows_equal_the_scalar_pricer_bit_for_bit(name: str) -> None:
    grid = GRIDS[name]
    assert len(grid.positions or ()) <= EXACT_POSITIONS
    rows = list(Sweeper(ROOT).rows(grid))
    reference = list(scalar_rows(ROOT, grid))
    assert len(rows) == len(reference) == grid.size()
    priced = 0
    for mine, theirs in zip(rows, reference, strict=True):
        assert {k: mine[k] for k in theirs} == theirs  # floats compared with ==: the same doubles
        priced += theirs["refusal"] is None
    assert priced > len(rows) // 4
    assert {"Empty", "BadContexts", "NotResident"} <= {r["refusal"] for r in rows} or name != "positions"


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("name", list(GRIDS))
def test_text_equals_the_row_writer(name: str, fmt: str) -> None:
    grid = GRIDS[name]
    expected = io.StringIO()
    count = write_rows(Sweeper(ROOT).rows(grid), fmt, expected)
    assert count == grid.size()
    assert "".join(text_chunks(Sweeper(ROOT).segments(grid), fmt)) == expected.getvalue()


def test_segments_are_streamed_one_block_at_a_time() -> None:
    # The sweep yields a segment (one serving, card, draft length and position) at a time: a consumer holds one.
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, 101)), cards=("h200_sxm_141gb", "b200"),
                positions=(512.0, 1024.0))
    segments = Sweeper(ROOT).segments(grid)
    first = next(segments)
    assert first.common["card"] == "h200_sxm_141gb" and first.common["position"] == 512.0
    assert len(first.batches) == 100 and len(list(segments)) == 3


def test_a_row_without_a_finite_price_stops_the_text(tmp_path: Path) -> None:
    grid = GRIDS["drafts and host memory"]
    segment = next(Sweeper(ROOT).segments(grid))
    assert segment.priced is not None
    segment.priced["memory_s"][1] = np.inf
    with pytest.raises(InputError, match=r"batch 3: memory_s is inf"):
        list(text_chunks(iter([segment]), "csv"))
