"""A sweep's JSON text (``text_chunks(…, "json", binary=True)``, what ``sweep -o grid.json`` writes) is the row
writer's, ``json.dumps`` of each row, byte for byte, on the values a faster way of making it must keep (issue 16):
counts at the edges of what a float writes as an integer (2^53 and past it, 10^16, a held count that is not whole,
-0.0), a capacity that changes within a segment's priced rows, batches up to 2^32 - 1 and host sequences, floats
across every magnitude a double has (both signs, zeros of both signs, subnormals, the 10^-4 and 10^16 edges where
``repr`` changes its notation), refusal names and provenances needing escapes, runs cut by refused rows, groups of
one segment, two or all of them (``GROUP_ROWS``), with and without orjson. The JSON's numbers read back are the
scalar pricer's, bit for bit."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from passprice import floattext, sweep
from passprice.registry import find_root
from passprice.sweep import Grid, Segment, Sweeper, json_fields, scalar_rows, text_chunks, write_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)


def _segments(batches: int = 40, cards: tuple[str, ...] = ("h200_sxm_141gb",)) -> list[Segment]:
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, batches + 1)), cards=cards,
                positions=(256.0, 4095.0))
    made = list(Sweeper(ROOT).segments(grid))
    for segment in made:
        assert segment.priced is not None and (segment.status == 0).all()
    return made


def _dumps(segments: list[Segment]) -> bytes:
    rows = [json.dumps(json_fields(row), allow_nan=False) for s in segments for row in s.rows()]
    return ("[\n" + ",\n".join(rows) + "\n]\n").encode("ascii")


def _reference(segments: list[Segment], fmt: str = "json") -> str:
    out = io.StringIO()
    write_rows((row for s in segments for row in s.rows()), fmt, out)
    return out.getvalue()


def _text(segments: list[Segment]) -> bytes:
    chunks = list(text_chunks(iter(segments), "json", binary=True))
    assert all(isinstance(c, bytes) for c in chunks)
    return b"".join(chunks)  # type: ignore[arg-type]


def _csv(segments: list[Segment]) -> str:
    return "".join(c if isinstance(c, str) else c.decode("utf-8")
                   for c in text_chunks(iter(segments), "csv", binary=True))


def test_counts_at_the_edges_of_an_integer_text_are_json_dumps_counts() -> None:
    segments = _segments(batches=30, cards=("h200_sxm_141gb", "b200"))
    p: Any = segments[0].priced
    held = [2.0**53 - 1, 2.0**53, 2.0**53 + 2, 1e16, 1.5, 0.0, -0.0, 4912001024.0, 1e300]
    p["held_bytes"][: len(held)] = held
    p["capacity_bytes"][10:20] = 2.0**53 + 4  # the capacity changes within the segment's priced rows
    p["capacity_bytes"][20] = 12.5
    q: Any = segments[1].priced
    q["host_sequences"][5:9] = [1, 2**31, 2**40, 3]
    far = attrs.evolve(segments[2], batches=np.arange(2**32 - 30, 2**32, dtype=np.int64))
    segments[2] = far
    text = _text(segments)
    assert text == _dumps(segments) == _reference(segments).encode("ascii")
    rows = json.loads(text)
    assert [r["held_bytes"] for r in rows[:9]] == [2**53 - 1, 2**53, 2**53 + 2, 10**16, 1.5, 0, 0, 4912001024, 1e300]
    # whole(): an int below 2^53, a float from there on, as the row writer writes them
    assert b'"held_bytes": 9007199254740991, ' in text and b'"held_bytes": 9007199254740992.0, ' in text
    assert b'"held_bytes": 1e+16, ' in text and b'"held_bytes": 1.5, ' in text and b'"held_bytes": 0, ' in text
    assert [r["capacity_bytes"] for r in rows[9:11]] == [rows[0]["capacity_bytes"], 2.0**53 + 4]
    assert rows[20]["capacity_bytes"] == 12.5 and isinstance(rows[21]["capacity_bytes"], int)
    assert [r["host_sequences"] for r in rows[34:40]] == [0, 1, 2**31, 2**40, 3, 0]
    assert rows[60]["batch"] == 2**32 - 30 and rows[89]["batch"] == 2**32 - 1
    assert _csv(segments) == _reference(segments, "csv")


#: Doubles at the places ``repr`` and orjson's shortest texts part ways or change notation.
EDGES = (
    0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-300, 1.2345678901234568e-300,
    1e-07, 9.999999999999999e-05, 0.0001, 0.00010000000000000002, 4.4e-05, 1e-05, 0.1, 0.30000000000000004, 1.0,
    123.456, 999999999999999.9, 1e15, 9999999999999998.0, 1e16, 1.0000000000000002e16, 123456789012345680.0, 1e22,
    1.7976931348623157e308, -1.7976931348623157e308, -1e-05, -0.0001, -123.456, -1e16,
)


@pytest.mark.parametrize("orjson", [True, False])
@pytest.mark.parametrize("group", [7, 64, 4096])
def test_floats_of_every_magnitude_in_groups_of_any_size_are_json_dumps_floats(
    monkeypatch: pytest.MonkeyPatch, orjson: bool, group: int
) -> None:
    segments = _segments(batches=50, cards=("h200_sxm_141gb", "rtx_4090"))
    rng = np.random.default_rng(136 + group)
    mags = 10.0 ** rng.uniform(-320, 308, size=(len(segments), 8, 50))
    signs = rng.choice([-1.0, 1.0], size=mags.shape)
    for k, segment in enumerate(segments):
        p: Any = segment.priced
        for j, key in enumerate(sweep._ROW_FLOATS):
            column = mags[k, j] * signs[k, j]
            at = rng.choice(50, size=len(EDGES), replace=False)
            column[at] = EDGES
            column[rng.choice(50, size=3)] = column[0]  # repeats: a text kept or shared must still be its own
            p[key][:] = column
        p["binds"][:] = rng.integers(0, len(sweep._BINDS), size=50)
        p["host_sequences"][:] = np.where(rng.random(50) < 0.3, rng.integers(1, 99, size=50), 0)
        segment.status[rng.choice(50, size=6, replace=False)] = 2  # refused rows cutting the runs
    monkeypatch.setattr(sweep, "GROUP_ROWS", group)
    if not orjson:
        monkeypatch.setattr(floattext, "_orjson", None)
        floattext.fast.cache_clear()
    try:
        text = _text(segments)
        csv_text = _csv(segments)
    finally:
        floattext.fast.cache_clear()
    assert text == _dumps(segments) == _reference(segments).encode("ascii")
    assert csv_text == _reference(segments, "csv")
    rows = json.loads(text)
    written = [r[key] for r in rows if r["refusal"] is None for key in sweep._ROW_FLOATS]
    assert any(math.copysign(1.0, v) < 0 and v == 0 for v in written)  # -0.0 read back as itself
    assert b": 5e-324, " in text and b": 0.0001, " in text and b": 9.999999999999999e-05, " in text
    assert b": 1e+16, " in text and b": 9999999999999998.0, " in text


def test_refusal_names_and_provenances_needing_escapes_are_json_dumps_texts() -> None:
    segments = _segments(batches=20, cards=("h200_sxm_141gb", "rtx_4090"))
    odd = []
    for k, s in enumerate(segments):
        status = s.status.copy()
        status[5:9] = 2
        status[15] = 1
        odd.append(attrs.evolve(
            s, status=status, names=('Empty "quoted"', "CardFull \u00e9\U0001f600\\\t\x01"),
            provenance=(f'measured "{k}"', "host\u2028line"), weakest=("a;b\\c", "\x7fdel")))
        p: Any = odd[-1].priced
        p["host_sequences"][0:3] = 4
    text = _text(odd)
    assert text == _dumps(odd) == _reference(odd).encode("ascii")
    assert text.isascii()
    assert b'"refusal": "CardFull \\u00e9\\ud83d\\ude00\\\\\\t\\u0001"}' in text
    assert b'"provenance": "host\\u2028line", "weakest": "\\u007fdel"' in text
    rows = json.loads(text)
    assert rows[6]["refusal"] == "CardFull \u00e9\U0001f600\\\t\x01" and rows[15]["refusal"] == 'Empty "quoted"'
    assert rows[0]["provenance"] == "host\u2028line" and rows[3]["provenance"] == 'measured "0"'


def test_the_json_numbers_are_the_scalar_pricers_bit_for_bit() -> None:
    grid = Grid(servings=("r1-qwen7b-h200", "gemma3-270m-h100"), batches=(1, 2, 3, 64, 255, 4096),
                cards=("h200_sxm_141gb", "rtx_3080"), positions=(256.0, 8192.0))
    segments = list(Sweeper(ROOT).segments(grid))
    rows = json.loads(_text(segments))
    scalar = list(scalar_rows(ROOT, grid))
    assert len(rows) == len(scalar) == grid.size()
    priced = 0
    for mine, theirs in zip(rows, scalar, strict=True):
        assert mine["batch"] == theirs["batch"]
        if theirs["refusal"] is not None:
            assert mine["refusal"] == theirs["refusal"] and mine["tokens_per_s"] is None
            continue
        priced += 1
        for key, value in theirs.items():
            if isinstance(value, float):
                assert np.float64(mine[key]).view(np.int64) == np.float64(value).view(np.int64), key
            else:
                assert mine[key] == value, key
    assert 0 < priced < len(rows)  # some rows priced, some refused (the 3080 holds no 4096 batch)


#: Positive values below 10^-4 of every layout orjson writes otherwise than ``repr``: ``0.0000D…`` of one digit
#: and of 17 (``1e-05``, ``9.999999999999999e-05``), a one-digit exponent of one digit and of 17
#: (``1e-06``, ``1.2345678901234566e-09``), two- and three-digit exponents (``1.5e-10``, ``5e-324``).
SMALL_EDGES = [1e-05, 9.999999999999999e-05, 1.2345e-05, 1e-06, 1.2345678901234566e-09, 4.4e-07, 1.5e-10, 5e-324]


@pytest.mark.parametrize("group", [1, 40, 1 << 12])
def test_positive_small_floats_side_by_side_and_at_the_end_are_json_dumps_floats(
    monkeypatch: pytest.MonkeyPatch, group: int
) -> None:
    # No sign bit anywhere: the values below 10^-4 are written over stand-ins of their lengths in orjson's text
    # (floattext._json_commas), four rows of them side by side (a row's every varying float small), a run of them
    # from the first row, and the group's very last value small (its 24 bytes past the end of the text).
    segments = _segments(batches=60, cards=("h200_sxm_141gb", "rtx_4090"))
    rng = np.random.default_rng(55 + group)
    for k, segment in enumerate(segments):
        p: Any = segment.priced
        for j, key in enumerate(sweep._ROW_FLOATS):
            column = 10.0 ** rng.uniform(-12, 3, size=60)
            column[rng.choice(60, size=len(SMALL_EDGES), replace=False)] = SMALL_EDGES
            column[:4] = rng.choice(SMALL_EDGES, size=4)
            column[-1] = SMALL_EDGES[(k + j) % len(SMALL_EDGES)]
            p[key][:] = column
        p["binds"][:] = rng.integers(0, len(sweep._BINDS), size=60)
    monkeypatch.setattr(sweep, "GROUP_ROWS", group)
    text = _text(segments)
    assert text == _dumps(segments)
    assert b'"tokens_per_s": 1e-05, ' in text and b": 9.999999999999999e-05, " in text
    assert b": 1.2345678901234566e-09, " in text and b": 5e-324, " in text and b": 1e-06, " in text
    assert _csv(segments) == _reference(segments, "csv")
