"""Issue 16, performance round 27: a sweep's JSON laid out at the byte level with NumPy (``benchmarks/layout27.py``,
the trial's record: measured slower, ``docs/PERFORMANCE.md``, so not in ``passprice``) is the same bytes as the
pieces joined by :func:`passprice.sweep._group_text`, on priced and refused rows, host sequences and several binds;
its buffers are bounded by one group's text, not by the grid."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from passprice import sweep
from passprice.registry import find_root
from passprice.sweep import GROUP_ROWS, Grid, Segment, Sweeper, _group_text, _Texts, text_chunks

TOP = Path(__file__).resolve().parent.parent
ROOT = find_root(TOP)


def _layout() -> Any:
    spec = importlib.util.spec_from_file_location("layout27", TOP / "benchmarks" / "layout27.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layout27 = _layout()
WIDTH, Buffers, _gather, _Pool, json_group_bytes = (
    layout27.WIDTH, layout27.Buffers, layout27._gather, layout27._Pool, layout27.json_group_bytes
)

#: Priced and refused rows (a card too small for the larger batches), several cards' capacities, a mixture of
#: experts and a drafting serving.
GRID = Grid(
    servings=("r1-qwen7b-h200", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp"),
    batches=tuple(range(1, 400, 3)),
    cards=("h200_sxm_141gb", "sn40l", "ws1_hypothetical", "rtx_4090"),
    positions=(256.0, 4096.0),
)


def _segments(grid: Grid = GRID) -> list[Segment]:
    with np.errstate(all="ignore"):
        return list(Sweeper(ROOT).segments(grid))


def _text(segments: list[Segment], layout: bool, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setattr(sweep, "_group_text", layout27.group_text if layout else _group_text)
    return b"".join(c for c in text_chunks(iter(segments), "json", binary=True) if isinstance(c, bytes))


def test_the_byte_layout_is_not_what_a_sweep_uses() -> None:
    # Round 27 measured it about twice the text's CPU time of the pieces' join: a benchmark's record, not passprice's.
    assert sweep._group_text is _group_text
    assert layout27._ORIGINAL is _group_text
    assert importlib.util.find_spec("passprice.sweeplayout") is None


def test_the_grid_laid_out_byte_by_byte_is_the_joined_pieces_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    segments = _segments()
    joined = _text(segments, False, monkeypatch)
    laid = _text(segments, True, monkeypatch)
    assert laid == joined
    assert laid.startswith(b'[\n{"card": ') and laid.endswith(b"}\n]\n")
    assert laid.count(b'"refusal": null}') > 0 and laid.count(b'"refusal": "') > 0


def test_each_group_is_the_same_bytes_and_the_layout_applies_to_it() -> None:
    segments = _segments()
    kept, buffers = _Texts(), Buffers()
    for a in range(0, len(segments), 7):
        group = segments[a : a + 7]
        laid = json_group_bytes(group, kept, buffers)
        assert laid is not None
        assert laid == _group_text(group, "json", _Texts())


def test_host_sequences_and_two_binds_in_one_group_are_laid_out_as_joined() -> None:
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, 61)), cards=("h200_sxm_141gb",))
    segment = _segments(grid)[0]
    p: Any = segment.priced
    p["binds"][::3] = 2
    p["array_s"][::3] = p["pass_s"][::3]
    p["host_sequences"][40:] = np.arange(20) * 7 + 1
    laid = json_group_bytes([segment], _Texts(), Buffers())
    assert laid is not None and laid == _group_text([segment], "json", _Texts())
    assert b'"host_sequences": 134,' in laid  # the last row's: 19 * 7 + 1
    assert laid.count(b'"binds": "array"') == 20


def test_a_row_priced_alone_is_left_to_the_joined_pieces() -> None:
    segment = _segments()[0]
    segment.alone[0] = {"refusal": "x"}
    assert json_group_bytes([segment], _Texts(), Buffers()) is None


def test_the_buffers_grow_to_the_largest_group_and_not_to_the_grid() -> None:
    segments = _segments()
    kept, buffers = _Texts(), Buffers()
    largest = total = 0
    group: list[Segment] = []
    rows = 0
    for segment in segments:
        group.append(segment)
        rows += len(segment.batches)
        if rows >= GROUP_ROWS // 8:
            laid = json_group_bytes(group, kept, buffers)
            assert laid is not None
            largest, total = max(largest, len(laid)), total + len(laid)
            group, rows = [], 0
    assert total > 4 * largest  # several groups
    # Index (int32 by default: 4 bytes) and output (1 byte) a byte of the largest group's text, grown by at most 1.5 x.
    assert largest <= len(buffers.index) <= 3 * largest // 2 + 1
    assert buffers.nbytes == len(buffers.index) * (buffers.index.itemsize + 1)
    assert buffers.nbytes < total * buffers.index.itemsize


def test_a_pool_cuts_orjsons_cells_at_its_commas() -> None:
    pool = _Pool()
    assert pool.add(b"abc") == 0
    starts, lengths = pool.add_cells(b"[1.5,22,0.0001]")
    assert starts.tolist() == [4, 8, 11] and lengths.tolist() == [3, 2, 6]
    assert pool.size == 3 + 15


def test_the_gather_copies_runs_in_order_and_skips_empty_ones() -> None:
    pool = _Pool()
    pool.add(b"abc")
    pool.add(b"XYZ")
    src = np.array([4, 0, 1, 2, 0], dtype=np.int64)
    length = np.array([2, 1, 0, 1, 3], dtype=np.int64)
    assert _gather(pool, src, length, Buffers()) == b"YZacabc"
    assert WIDTH == 23


# Item 2: what a JSON sweep imports. A sweep under locks asks each lock whether today's serving differs from the
# pinned one; two equal specs are answered without writing their documents (no cattrs import).


def _differences_slowly(pinned: Any, today: Any) -> tuple[tuple[str, Any, Any], ...]:
    from passprice.reproduce import _spec_fields

    old, new = _spec_fields(pinned), _spec_fields(today)
    return tuple((k, old.get(k), new.get(k)) for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k))


def test_equal_specs_differ_in_nothing_without_importing_cattrs() -> None:
    code = (
        "import sys\n"
        "from passprice.servings import ContextSpec, ServingSpec\n"
        "from passprice.reproduce import serving_differences\n"
        "a = ServingSpec('r1-qwen7b-q4', 'h200_sxm_141gb', batch=8, contexts=(ContextSpec(1.0, 2048.0, 4096),),"
        " source='locks/a.lock.toml')\n"
        "b = ServingSpec('r1-qwen7b-q4', 'h200_sxm_141gb', batch=8, contexts=(ContextSpec(1.0, 2048.0, 4096),),"
        " source='registry/servings/a.toml')\n"
        "print(serving_differences(a, b), 'cattrs' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "() False\n"


def test_specs_equal_by_value_but_not_by_document_are_still_told_apart() -> None:
    from passprice.reproduce import serving_differences
    from passprice.servings import ContextSpec, ServingSpec

    pinned = ServingSpec("c", "h200_sxm_141gb", shared_prefix=0)
    today = ServingSpec("c", "h200_sxm_141gb", shared_prefix=0.0)  # type: ignore[arg-type]
    assert pinned == today  # attrs: 0 == 0.0
    # The document leaves out shared_prefix at the int 0 only: 0.0 is written, so the lock's check names it.
    assert serving_differences(pinned, today) == (("shared_prefix", None, 0.0),)
    assert serving_differences(pinned, today) == _differences_slowly(pinned, today)
    two = (ContextSpec(0.5, 2048, 4096), ContextSpec(0.5, 1024.0, 4096))
    floats = (ContextSpec(0.5, 2048.0, 4096), ContextSpec(0.5, 1024.0, 4096))
    a, b = ServingSpec("c", "x", contexts=two), ServingSpec("c", "x", contexts=floats)
    assert a == b and serving_differences(a, b) == _differences_slowly(a, b) == ()
    described = ServingSpec("c", "x", description="today's words")
    assert serving_differences(ServingSpec("c", "x"), described) == ()  # descriptions aside, as before
    assert serving_differences(ServingSpec("c", "x", batch=2), ServingSpec("c", "x", batch=3)) == (("batch", 2, 3),)
