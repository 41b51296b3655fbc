"""A sweep's JSON text made a group of rows at a time (issue 16, performance round 21) is the row writer's, byte for
byte, and its numbers the scalar pricer's, bit for bit: a priced row's floats one text with their keys in it
(sweepjson100: ``pass_s`` written with the other floats whatever binds), a float column that does not change over
the group written in the keys around the others, a count that does not change over a run of rows written once for the
run; the priced rows picked by a slice when they are one stretch; a run of refused rows a chunk of its own."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from click.testing import CliRunner

from passprice import sweep
from passprice.cli import cli
from passprice.registry import find_root
from passprice.sweep import Grid, Segment, Sweeper, scalar_rows, text_chunks, write_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)

#: Priced on four cards: the capacity changes from segment to segment (a list for the group) but never within a run.
GRID = Grid(
    servings=("r1-qwen7b-h200", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp"),
    batches=tuple(range(1, 400, 3)),
    cards=("h200_sxm_141gb", "sn40l", "ws1_hypothetical", "rtx_4090"),
    positions=(256.0, 4096.0),
)


def _reference(segments: list[Segment], fmt: str) -> str:
    out = io.StringIO()
    write_rows((row for s in segments for row in s.rows()), fmt, out)
    return out.getvalue()


def _segments(grid: Grid) -> list[Segment]:
    return list(Sweeper(ROOT).segments(grid))


def test_the_grid_json_is_the_row_writers_and_the_scalar_pricers() -> None:
    segments = _segments(GRID)
    text = "".join(text_chunks(iter(segments), "json"))
    assert text == _reference(segments, "json")
    rows = json.loads(text)
    assert len(rows) == GRID.size()
    reference = list(scalar_rows(ROOT, GRID))
    priced = 0
    for mine, theirs in zip(rows, reference, strict=True):
        for key, value in theirs.items():
            got = mine[key]
            assert got == value, key  # floats: the same doubles
            assert type(got) is type(value) or isinstance(value, float), key
        priced += theirs["refusal"] is None
    assert 0 < priced < len(rows)  # priced rows and refused ones (a card too small for the batch)
    assert len({r["capacity_bytes"] for r in rows if r["refusal"] is None}) >= 3


def _one_segment() -> Segment:
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, 61)), cards=("h200_sxm_141gb",))
    segment = next(Sweeper(ROOT).segments(grid))
    assert segment.priced is not None and (segment.status == 0).all()
    return segment


def test_a_group_binding_on_several_terms_writes_its_pass_on_its_own() -> None:
    # Every third row binds on the array term, whose value is the pass's there: pass_s is each row's binding term.
    segment = _one_segment()
    p: Any = segment.priced
    p["binds"][::3] = 2
    p["array_s"][::3] = p["pass_s"][::3]
    assert len(set(p["binds"].tolist())) == 2
    text = "".join(text_chunks(iter([segment]), "json"))
    assert text == _reference([segment], "json")
    rows = json.loads(text)
    assert [r["binds"] for r in rows[:4]] == ["array", "memory", "memory", "array"]
    assert all(r["pass_s"] == r["array_s" if r["binds"] == "array" else "memory_s"] for r in rows)


def test_a_pass_that_is_not_its_binding_term_is_written_from_its_own_value() -> None:
    segment = _one_segment()
    p: Any = segment.priced
    p["pass_s"] = p["pass_s"] * 1.5
    text = "".join(text_chunks(iter([segment]), "json"))
    assert text == _reference([segment], "json")
    assert json.loads(text)[7]["pass_s"] == float(p["pass_s"][7])


def test_a_column_still_over_a_run_but_not_the_group_is_written_once_for_the_run() -> None:
    # The vector term holds one value over rows 0-19 and another over 20-39, then changes row by row; refused rows
    # (the card full) cut the priced rows into two runs.
    segment = _one_segment()
    p: Any = segment.priced
    p["vector_s"][:20] = 0.125
    p["vector_s"][20:40] = 3e-05  # a small number: repr's exponent layout, not orjson's
    p["vector_s"][40:] = np.linspace(1.0, 2.0, 20)
    segment.status[30:33] = 2
    text = "".join(text_chunks(iter([segment]), "json"))
    assert text == _reference([segment], "json")
    rows = json.loads(text)
    assert rows[0]["vector_s"] == 0.125 and rows[25]["vector_s"] == 3e-05 and rows[31]["vector_s"] is None
    assert '"vector_s": 3e-05,' in text


@pytest.mark.parametrize(
    ("picked", "expected"),
    [
        ([1, 1, 1, 1], slice(None)),
        ([1, 1, 0, 0], slice(0, 2)),
        ([0, 1, 1, 0], slice(1, 3)),
        ([0, 0, 0, 1], slice(3, 4)),
        ([1, 0, 1, 0], [0, 2]),
    ],
)
def test_priced_rows_are_picked_by_a_slice_when_they_are_one_stretch(picked: list[int], expected: Any) -> None:
    mask = np.array(picked, dtype=bool)
    chosen = sweep._chosen(mask, int(mask.sum()))
    values = np.arange(4.0)
    if isinstance(expected, slice):
        assert chosen == expected
    assert values[chosen].tolist() == values[mask].tolist()


def test_sweep_json_file_is_the_row_writers(tmp_path: Path) -> None:
    out = tmp_path / "grid.json"
    result = CliRunner().invoke(
        cli,
        ["sweep", "r1-qwen7b-h200", "qwen3-30b-a3b-h200", "--cards", "h200_sxm_141gb,rtx_4090", "--batches", "1-90",
         "--positions", "256,4096", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    grid = Grid(servings=("r1-qwen7b-h200", "qwen3-30b-a3b-h200"), batches=tuple(range(1, 91)),
                cards=("h200_sxm_141gb", "rtx_4090"), positions=(256.0, 4096.0))
    assert out.read_text() == _reference(_segments(grid), "json")


def test_binary_json_chunks_are_bytes_made_so_and_the_row_writers_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """``text_chunks(..., binary=True)`` (what ``passprice sweep`` writes): every JSON chunk is bytes, made as bytes
    (issue 16: no 483 MB of text decoded from orjson's bytes and encoded again), the row writer's text byte for byte,
    in parts as whole; CSV's chunks too, UTF-8 (speed54)."""
    segments = _segments(GRID)
    reference = _reference(segments, "json").encode("ascii")
    monkeypatch.setattr(sweep, "GROUP_ROWS", 300)  # 24 segments of 133 rows: groups of 3, 8 chunks and the end
    chunks = list(text_chunks(iter(segments), "json", binary=True))
    # A group's rows are a chunk, except each run of refused rows, a chunk of its own made by one join of its
    # batches (written as it is, not copied again into the group's: sweepjson100): a chunk's rows are all priced or
    # all refused with one name.
    assert len(chunks) > 9 and all(isinstance(c, bytes) for c in chunks)
    for chunk in chunks[:-1]:
        refusals = set(re.findall(rb'"refusal": ("[^"]*"|null)', chunk))
        assert len(refusals) == 1, refusals
    assert b"".join(chunks) == reference  # type: ignore[arg-type]
    assert chunks[0].startswith(b"[\n{") and chunks[-1] == b"\n]\n"
    half = len(segments) // 2
    parts = [*text_chunks(iter(segments[:half]), "json", closes=False, binary=True),
             *text_chunks(iter(segments[half:]), "json", opens=False, binary=True)]
    assert b"".join(parts) == reference  # type: ignore[arg-type]
    csv_chunks = list(text_chunks(iter(segments), "csv", binary=True))
    assert len(csv_chunks) == 8 and all(isinstance(c, bytes) for c in csv_chunks)
    assert b"".join(csv_chunks) == _reference(segments, "csv").encode("utf-8")  # type: ignore[arg-type]


def test_binary_csv_names_quoted_and_not_ascii_are_the_row_writers_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV row's opening is made of each cell's text, kept by value (speed54): a name holding a comma and a quote
    is quoted, a name not ASCII is UTF-8, an empty cell (no routing record) is empty, not ``""``, each as the row
    writer writes it; a name that is not Unicode (a lone surrogate, refused before a sweep) is left to the writer, a
    segment at a time, as text."""
    segments = _segments(GRID)[:6]
    names = ['h200, "the big one"', "carte \u00e9t\u00e9", ""]
    odd = [attrs.evolve(s, common={**s.common, "card": names[k % 3], "serving": names[(k + 1) % 3]})
           for k, s in enumerate(segments)]
    monkeypatch.setattr(sweep, "GROUP_ROWS", 300)
    chunks = list(text_chunks(iter(odd), "csv", binary=True))
    assert all(isinstance(c, bytes) for c in chunks)
    text = b"".join(chunks).decode("utf-8")  # type: ignore[arg-type]
    assert text == _reference(odd, "csv")
    assert '\n"h200, ""the big one""",carte \u00e9t\u00e9,' in text and "\n,\"h200, " in text
    bad = [attrs.evolve(s, common={**s.common, "card": "x\udcff"}) for s in segments[:2]]
    made = list(text_chunks(iter(bad), "csv", binary=True))
    assert all(isinstance(c, str) for c in made) and "".join(made) == _reference(bad, "csv")  # type: ignore[arg-type]


def test_binary_json_chunks_without_orjson_are_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without orjson a group is written a segment at a time as text (repr of every float), encoded: the same bytes.
    from passprice import floattext

    segments = _segments(GRID)
    reference = _reference(segments, "json").encode("ascii")
    monkeypatch.setattr(floattext, "_orjson", None)
    floattext.fast.cache_clear()
    try:
        chunks = list(text_chunks(iter(segments), "json", binary=True))
    finally:
        floattext.fast.cache_clear()
    assert all(isinstance(c, bytes) for c in chunks) and b"".join(chunks) == reference  # type: ignore[arg-type]


def test_binary_json_chunks_with_a_tpot_cap_are_the_reference_rows() -> None:
    from passprice.sweepcap import capped_chunks, reference_chunks

    sweeper = Sweeper(ROOT)
    with np.errstate(all="ignore"):
        made = list(capped_chunks(sweeper.segments(GRID), "json", 0.005, binary=True))
        reference = "".join(reference_chunks(sweeper.segments(GRID), "json", 0.005)).encode("ascii")
    assert all(isinstance(c, bytes) for c in made)
    assert b"".join(made) == reference  # type: ignore[arg-type]
    assert b'"within_max_tpot": true}' in reference and b'"within_max_tpot": false}' in reference


def test_keyed_float_rows_parse_to_the_row_writers_rows_value_by_value_and_type_by_type() -> None:
    """Sweepjson100: a priced row's floats are one text with their keys in it (``floattext.float_rows_keyed_bytes``)
    and a refused run one join; parsed, every row is the row writer's (``json.dumps`` of each row), each value of
    the same type (a whole count an ``int``, a float a ``float``, a refused row's columns ``None``), with host
    sequences, two binds and a term that is 0.0 in every row in one group."""
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, 61)), cards=("h200_sxm_141gb",))
    (segment,) = _segments(grid)
    p: Any = segment.priced
    p["binds"][::3] = 2
    p["array_s"][::3] = p["pass_s"][::3]
    p["host_sequences"][40:] = np.arange(20) * 7 + 1
    segments = [segment, *_segments(GRID)[:12]]
    made = b"".join(c for c in text_chunks(iter(segments), "json", binary=True) if isinstance(c, bytes))
    reference = _reference(segments, "json")
    assert made.decode("ascii") == reference
    mine, theirs = json.loads(made), json.loads(reference)
    assert len(mine) == len(theirs) == sum(len(s.batches) for s in segments)
    for a, b in zip(mine, theirs, strict=True):
        assert list(a) == list(b)
        assert [(type(v), v) for v in a.values()] == [(type(v), v) for v in b.values()]
    priced = [row for row in mine if row["refusal"] is None]
    refused = [row for row in mine if row["refusal"] is not None]
    assert priced and refused
    assert all(type(row["held_bytes"]) is int and type(row["capacity_bytes"]) is int for row in priced)
    assert all(type(row[k]) is float for row in priced for k in ("tokens_per_s", "pass_s", "host_s", "scale_s"))
    assert {row["host_s"] for row in priced[:40]} == {0.0} and priced[59]["host_sequences"] == 134
    assert {row["binds"] for row in priced[:60]} == {"memory", "array"}
    assert all(row[k] is None for row in refused for k in ("tokens_per_s", "pass_s", "binds", "held_bytes"))
