"""A priced JSON row's batch written with the text after it up to its first float (``, "host_sequences": 0`` and the
keys and constant columns before the first float that changes), one text a batch made once for a sweep's batches
(``_Texts.batch_bytes_then``), where the row holds no sequence in host memory; a row that holds some writes its own
count (issue 16). The text is the row writer's (``json.dumps`` of each row) byte for byte, whatever mix of runs with
and without host sequences, runs cut by refused rows, a lead that changes from group to group, edge floats (negative
zero, the largest and smallest doubles, values below 10^-4) and names needing escapes; a value that is not finite is
refused, not written."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from passprice import sweep
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.sweep import Grid, Segment, Sweeper, json_fields, text_chunks, write_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)


def _segments(batches: int = 60, cards: tuple[str, ...] = ("h200_sxm_141gb",)) -> list[Segment]:
    grid = Grid(servings=("r1-qwen7b-h200",), batches=tuple(range(1, batches + 1)), cards=cards,
                positions=(256.0, 4095.0))
    made = list(Sweeper(ROOT).segments(grid))
    for segment in made:
        assert segment.priced is not None and (segment.status == 0).all()
    return made


def _dumps(segments: list[Segment]) -> bytes:
    """The rows as ``json.dumps`` writes each (the row writer's layout: ``[``, one object a line, ``]``)."""
    rows = [json.dumps(json_fields(row), allow_nan=False) for s in segments for row in s.rows()]
    return ("[\n" + ",\n".join(rows) + "\n]\n").encode("ascii")


def _text(segments: list[Segment]) -> bytes:
    chunks = list(text_chunks(iter(segments), "json", binary=True))
    assert all(isinstance(c, bytes) for c in chunks)
    return b"".join(chunks)  # type: ignore[arg-type]


def _reference(segments: list[Segment]) -> bytes:
    out = io.StringIO()
    write_rows((row for s in segments for row in s.rows()), "json", out)
    return out.getvalue().encode("ascii")


def test_runs_with_and_without_host_sequences_cut_by_refused_rows_are_json_dumps_rows() -> None:
    segments = _segments()
    first: Any = segments[0].priced
    # Rows 10-19 and 40-44 hold sequences in host memory (their own count, the host provenance); rows 25-27 are
    # refused (the card full): the runs without host sequences are 0-9, 20-24, 28-39 and 45-59, each a slice of the
    # batches' texts with their following text, the first and last at the segment's ends.
    first["host_sequences"][10:20] = np.arange(1, 11)
    first["host_sequences"][40:45] = 7
    segments[0].status[25:28] = 2
    assert segments[0].provenance[0] != segments[0].provenance[1] or segments[0].weakest[0] != segments[0].weakest[1]
    text = _text(segments)
    assert text == _dumps(segments) == _reference(segments)
    rows = json.loads(text)
    assert [r["host_sequences"] for r in rows[8:12]] == [0, 0, 1, 2]
    assert rows[26]["refusal"] == segments[0].names[1] and rows[26]["host_sequences"] is None
    assert rows[44]["host_sequences"] == 7 and rows[45]["host_sequences"] == 0
    assert rows[0]["provenance"] == segments[0].provenance[0] and rows[10]["provenance"] == segments[0].provenance[1]


def test_a_lead_that_changes_from_group_to_group_takes_its_own_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two segments on the same batches, a group each: in the second, tokens_per_s and pass_s are the same in every
    # row, so its rows' text from the batch on holds them (a lead of its own), not the first group's keys.
    segments = _segments()
    assert segments[0].batches is segments[1].batches or np.array_equal(segments[0].batches, segments[1].batches)
    second: Any = segments[1].priced
    second["tokens_per_s"][:] = 1234.5
    second["pass_s"][:] = 0.25
    second["memory_s"][:] = 0.25
    monkeypatch.setattr(sweep, "GROUP_ROWS", 60)
    text = _text(segments)
    assert text == _dumps(segments)
    assert b'"batch": 7, "host_sequences": 0, "tokens_per_s": 1234.5, "pass_s": 0.25, "memory_s": 0.25, ' in text
    rows = json.loads(text)
    assert rows[0]["tokens_per_s"] != 1234.5 and rows[60]["tokens_per_s"] == 1234.5 and rows[119]["pass_s"] == 0.25
    # One text a batch and following text, kept for the sweep: the two leads are two lists of 60.
    kept = sweep._Texts()
    list(sweep._group_text(segments[:1], "json", kept, apart=True) or ())
    list(sweep._group_text(segments[1:], "json", kept, apart=True) or ())
    assert len(kept.then_bytes) == 2 and all(len(v) == 60 for v in kept.then_bytes.values())


def test_edge_floats_are_json_dumps_floats_and_a_value_not_finite_is_refused() -> None:
    segments = _segments(batches=30)
    p: Any = segments[0].priced
    p["host_s"][:] = 0.0
    p["host_s"][3] = -0.0  # a sign bit: the small values are written without stand-ins
    p["vector_s"][4] = 1.7976931348623157e308
    p["vector_s"][5] = 5e-324
    p["array_s"][6] = 1e-07
    p["array_s"][7] = 4.4e-05
    p["scale_s"][8] = 1e16
    p["scale_s"][9] = 1.2345678901234568e-300
    text = _text(segments)
    assert text == _dumps(segments)
    rows = json.loads(text)
    assert repr(rows[3]["host_s"]) == "-0.0" and rows[4]["vector_s"] == 1.7976931348623157e308
    assert b'"vector_s": 5e-324, ' in text and b'"array_s": 1e-07, ' in text and b'"array_s": 4.4e-05, ' in text
    assert b'"scale_s": 1e+16, ' in text and b'"scale_s": 1.2345678901234568e-300, ' in text
    for value in (np.inf, -np.inf, np.nan):
        bad = attrs.evolve(segments[0], priced={**p, "memory_s": p["memory_s"].copy()})
        assert bad.priced is not None
        bad.priced["memory_s"][11] = value
        with pytest.raises(InputError, match="memory_s"):
            _text([bad])


def _csv_reference(segments: list[Segment]) -> str:
    out = io.StringIO()
    write_rows((row for s in segments for row in s.rows()), "csv", out)
    return out.getvalue()


@pytest.mark.parametrize("orjson", [True, False])
def test_a_column_of_zeros_and_negative_zeros_is_written_row_by_row(
    monkeypatch: pytest.MonkeyPatch, orjson: bool
) -> None:
    """``0.0 == -0.0``, but ``repr`` writes them apart: a column holding both is not one value for the group (JSON's
    keyed float rows, :func:`sweep._json_float_rows`) nor for a segment (the text a segment at a time, without orjson
    or for a row priced alone: ``_float_texts``, ``_Texts.of_floats``). Before sweep126 the JSON text wrote every row
    of such a column as its first row's (``"host_s": -0.0`` for rows the row writer writes ``0.0``), against the
    row writer's ``json.dumps`` and the scalar pricer's bits."""
    from passprice import floattext

    segments = _segments(batches=20)
    first: Any = segments[0].priced
    second: Any = segments[1].priced
    first["host_s"][:] = -0.0  # the group's column: -0.0 over the first segment, 0.0 over the second
    second["host_s"][:] = 0.0
    second["vector_s"][:] = 0.0
    second["vector_s"][3] = -0.0  # and one -0.0 among a segment's zeros
    if not orjson:
        monkeypatch.setattr(floattext, "_orjson", None)
        floattext.fast.cache_clear()
    try:
        text = _text(segments)
        csv_text = "".join(text_chunks(iter(segments), "csv"))  # type: ignore[arg-type]
        # Without orjson a CSV group comes a segment at a time as text, left to its writer to encode.
        csv_bytes = "".join(c if isinstance(c, str) else c.decode("utf-8")
                            for c in text_chunks(iter(segments), "csv", binary=True))
    finally:
        floattext.fast.cache_clear()
    assert text == _dumps(segments)
    rows = json.loads(text)
    assert [repr(r["host_s"]) for r in rows[18:22]] == ["-0.0", "-0.0", "0.0", "0.0"]
    assert [repr(r["vector_s"]) for r in rows[22:25]] == ["0.0", "-0.0", "0.0"]
    assert csv_text == csv_bytes == _csv_reference(segments)


def test_names_needing_escapes_are_json_dumps_names() -> None:
    segments = _segments(batches=20, cards=("h200_sxm_141gb", "rtx_4090"))
    names = ['h200 "the big one"', "carte \u00e9t\u00e9 \U0001f600", "back\\slash\ttab", "ctl\x01\x7f"]
    odd = [attrs.evolve(s, common={**s.common, "card": names[k % 4], "serving": names[(k + 1) % 4]})
           for k, s in enumerate(segments)]
    text = _text(odd)
    assert text == _dumps(odd) == _reference(odd)
    assert text.isascii()
    assert b'"card": "h200 \\"the big one\\""' in text and b'"carte \\u00e9t\\u00e9 \\ud83d\\ude00"' in text
    assert b'"back\\\\slash\\ttab"' in text and b'"ctl\\u0001\\u007f"' in text
    assert [r["card"] for r in json.loads(text)][::20] == [names[k % 4] for k in range(len(odd))]


def test_held_bytes_texts_are_kept_by_their_values_for_the_sweep() -> None:
    """A priced JSON row's held bytes are written from the texts of its segment's column kept by its values
    (``_Texts.count_bytes``, as CSV's): a serving's position holds the same bytes at a batch on every card, so the
    segments of two cards and two positions make the texts once. A refused row's held bytes (not a number, never
    written) and a run of rows holding one count (written once for the run) do not change a byte."""
    segments = _segments(batches=40, cards=("h200_sxm_141gb", "b200"))
    held = [s.priced["held_bytes"] for s in segments if s.priced is not None]
    assert all(np.array_equal(held[0], h) for h in held[1:])  # the KV cache held for its limit, on every card
    kept = sweep._Texts()
    made = sweep._group_text(segments, "json", kept, apart=True)
    assert isinstance(made, list) and b"".join(made) == b"," + _dumps(segments)[1:-3]  # ",\n{…}" a row
    assert sum(k.startswith(b"b") for k in kept.columns) == 1  # 4 segments, one column of held bytes made
    p: Any = segments[0].priced
    segments[0].status[10:15] = 2
    p["held_bytes"][10:15] = np.nan
    p["held_bytes"][20:30] = 12345.0
    text = _text(segments)
    assert text == _dumps(segments)
    rows = json.loads(text)
    assert rows[12]["held_bytes"] is None and [r["held_bytes"] for r in rows[19:22]] == [held[0][19], 12345, 12345]
    assert isinstance(rows[25]["held_bytes"], int)
