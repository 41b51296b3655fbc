"""The sweep as it is written: every row the scalar pricer's bit for bit (positions priced from each position's own
pass shape), and the text written a segment at a time (columns formatted in one pass) the same bytes as the
row-at-a-time writer, in CSV and JSON, refusals, host memory and rows priced alone included."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from passprice import sweep
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


# --- blocks: a sweep long on any axis is priced a bounded block at a time ---------------------------------------------


def test_blocks_cover_the_grid_in_order_each_at_most_block_cells() -> None:
    for positions, batches, cells in ((7, 7, 10), (7, 7, 3), (3, 20, 64), (1, 1, 1), (70, 4, 9)):
        got = list(sweep.blocks(positions, batches, cells))
        # Grid order: every (position, batch) cell once, position by position, batches ascending.
        order = [(p, b) for r, c in got for p in range(r.start, r.stop) for b in range(c.start, c.stop)]
        assert order == [(p, b) for p in range(positions) for b in range(batches)]
        assert all((rows.stop - rows.start) * (cols.stop - cols.start) <= cells for rows, cols in got)
    # 7 positions of 7 batches in blocks of 10 cells: one position a block; of 3 cells: runs of 3, 3 and 1 batches.
    runs = [(r.start, c.start, c.stop) for r, c in sweep.blocks(7, 7, 3)]
    assert runs[:4] == [(0, 0, 3), (0, 3, 6), (0, 6, 7), (1, 0, 3)]
    assert [(r.start, r.stop) for r, _ in sweep.blocks(7, 7, 10)] == [(p, p + 1) for p in range(7)]
    assert [(r.start, r.stop) for r, _ in sweep.blocks(70, 4, 9)][:2] == [(0, 2), (2, 4)]


MANY_POSITIONS = Grid(
    servings=("gemma3-270m-h100", "qwen35-27b-h100-every8", "r1-qwen7b-mi300x-int8kv"),
    batches=(0, 1, 5, 40, 300),
    positions=tuple(float(p) for p in range(0, 70 * 600, 600)),  # 70 positions: one shape decomposed, past the limit
)


@pytest.mark.parametrize(("name", "cells"), [("positions", 10), ("positions", 3), ("drafts and host memory", 5),
                                             ("many positions", 12), ("many positions", 2)])
def test_small_blocks_give_the_same_rows_and_text(name: str, cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    grid = GRIDS.get(name, MANY_POSITIONS)
    assert name != "many positions" or len(grid.positions or ()) > EXACT_POSITIONS
    whole = list(Sweeper(ROOT).rows(grid))
    text = "".join(text_chunks(Sweeper(ROOT).segments(grid), "csv"))
    monkeypatch.setattr(sweep, "BLOCK_CELLS", cells)
    done: list[int] = []
    segments = list(Sweeper(ROOT).segments(grid, progress=done.append))
    assert all(len(s.batches) <= cells for s in segments)
    assert sum(done) == grid.size() == sum(len(s.batches) for s in segments)
    rows = [row for s in segments for row in s.rows()]
    assert rows == whole  # the same doubles, refusals and rows priced alone, in the same order
    assert "".join(text_chunks(iter(segments), "csv")) == text


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_small_blocks_under_a_stack_give_the_same_text(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.stacks import load_stack

    stack = load_stack(ROOT, "llamacpp-cuda-2405")
    grid = Grid(
        servings=("r1-qwen7b-h200", "qwen35-27b-h200-mtp"),
        batches=(0, 1, 64, 300, 20_000),
        cards=("h200_sxm_141gb", "rtx_3080"),
        positions=(0.0, 2048.0),
    )
    text = "".join(text_chunks(Sweeper(ROOT, stack).segments(grid), fmt))
    monkeypatch.setattr(sweep, "BLOCK_CELLS", 3)
    segments = list(Sweeper(ROOT, stack).segments(grid))
    assert max(len(s.batches) for s in segments) == 3
    assert "".join(text_chunks(iter(segments), fmt)) == text


# --- the text: columns formatted once, runs joined in C ------------------------------------------------------------


def test_float_texts_are_the_reprs_of_the_row_writer() -> None:
    # Whole numbers take the integer's text and ".0" (byte counts), up to 10^16 exclusive: repr writes 1e+16 so.
    cases = [
        [2607997440.0, 2619032064.0, 0.0, 9999999999999998.0],
        [1e16, 2.0],  # past the integers' range: repr of each
        [-0.0, 5.0],  # a negative zero writes "-0.0"
        [-3.0, 4.0],
        [0.0016115429778522474, 132791.99062081752, 1e-05, 2.5e-07, 1.5],
        [7.0, 7.0, 7.0],  # one value: one text
    ]
    for values in cases:
        column, after = sweep._float_texts(np.array(values))
        texts = [column + after] * len(values) if isinstance(column, str) else [t + after for t in column]
        assert texts == [repr(v) for v in values]
    assert sweep._float_texts(np.array([2607997440.0, 1.0]))[1] == ".0"
    assert sweep._float_texts(np.array([1e16, 2.0]))[1] == ""


def test_texts_kept_for_later_segments_are_the_same_values_texts() -> None:
    kept = sweep._Texts()
    a = np.array([0.1, 0.2, 0.30000000000000004])
    assert kept.of_floats(a) == (["0.1", "0.2", "0.30000000000000004"], "")
    assert kept.of_floats(a.copy()) is kept.of_floats(a)  # formatted once, by value
    for i in range(sweep.KEPT_COLUMNS + 1):  # the oldest columns are forgotten: memory stays bounded
        kept.of_floats(np.array([float(i), 0.5]))
    assert len(kept.columns) == sweep.KEPT_COLUMNS and a.tobytes() not in kept.columns
    assert kept.of_batches(np.array([1, 20, 300])) == ["1", "20", "300"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_rows_of_alternating_status_give_the_row_writers_text(fmt: str) -> None:
    # Priced and refused rows interleaved one by one (every run a row long), and binds changing row by row.
    grid = Grid(servings=("qwen35-27b-h200-mtp",), batches=tuple(range(1, 41)), cards=("h200_sxm_141gb",))
    segment = next(Sweeper(ROOT).segments(grid))
    assert segment.priced is not None and (segment.status == 0).all()
    segment.status[1::2] = 3  # refused as names[2]
    segment.status[2::6] = 2
    assert len(set(segment.status.tolist())) == 3
    expected = io.StringIO()
    write_rows(segment.rows(), fmt, expected)
    assert "".join(text_chunks(iter([segment]), fmt)) == expected.getvalue()
