"""Issue 13's leftovers of hostile input: ``sweep --positions`` of a million plain values is read at once, not part by
part; a trace's integer past Python's 4,300 digits is named by its key and bound, not in Python's words; a position in
a sweep's lock note and refusal lines is written as an integer when whole (``1000000``, not ``1e+06``); a whole float
past its key's bound is one line, not two; ``sweep --jobs N`` counts the whole grid's refusals on stderr."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cli_helpers import bad, copy_root, invoke
from passprice import sweep, sweepjobs
from passprice.bounds import position_text
from passprice.cli import cli
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.sweep import Grid, Sweeper, parse_numbers, text_chunks
from passprice.trace import parse_trace

ROOT = find_root(Path(__file__).resolve().parent.parent)


# 1. A plain list of numbers is read at once -------------------------------------------------------------------


def test_a_million_plain_positions_are_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--positions 1,2,…,1000000`` (6.9 MB) was read part by part, each part's spelling, range and underflow
    checked and each value bisected against no ranges: 2.0 s in process. It is read with one ``map`` now: no part is
    spelt apart (``misspelt`` is not asked of one), and the values are the ones the part-by-part reading gave."""
    text = ",".join(str(i) for i in range(1, 1_000_001))
    assert len(text) == 6_888_895

    def asked(part: str) -> None:
        raise AssertionError(f"read part by part: {part!r}")

    monkeypatch.setattr(sweep, "misspelt", asked)
    values = parse_numbers(text, float, "--positions")
    assert len(values) == 1_000_000 and values[0] == 1.0 and values[-1] == 1_000_000.0
    assert all(type(v) is float for v in values[:10]) and values[499_999] == 500_000.0
    assert parse_numbers("0.5,512,4096.25,7", float, "--positions") == (0.5, 512.0, 4096.25, 7.0)
    assert parse_numbers("64,1,8", int, "--draft-tokens", most=64) == (64, 1, 8)
    assert parse_numbers("007,8", int, "--draft-tokens", most=64) == (7, 8)


def _plain_and_parted(text: str, kind: Any, **bounds: Any) -> tuple[str, str]:
    """The error of ``text`` read as it is, and of the same parts behind a range (read part by part)."""
    said = []
    for given in (text, f"{text},900-901"):
        with pytest.raises(InputError) as e:
            parse_numbers(given, kind, "--x", **bounds)
        said.append(str(e.value))
    return said[0], said[1]


@pytest.mark.parametrize(("text", "kind", "bounds", "line"), [
    ("5,5,1,1", float, {}, "--x: 1.0 is given more than once: a sweep prices each point once (a sweep file is "
                           "refused the same)"),
    ("1,,2", float, {}, "--x: '' is not a number, a range A-B, or a doubling range A-B*2"),
    ("1.2.3,4", float, {}, "--x: '1.2.3' is not a number, a range A-B, or a doubling range A-B*2"),
    ("3,65", int, {"most": 64}, "--x: '65': 65 is out of range (a whole number from 0 to 64)"),
    ("0,0.0", float, {}, "--x: 0.0 is given more than once: a sweep prices each point once (a sweep file is refused "
                         "the same)"),
    # a part past 40 characters named by its length, not echoed (issue 13, tests/test_left54b.py)
    ("0." + "0" * 400 + "1,2", float, {}, "--x: a 403-character number underflows a float (read as 0: nothing but 0 "
                                          "is nearer zero than ±4.9e-324)"),
    ("1" * 400 + ",2", float, {}, "--x: a 400-digit number is out of range (each must be a finite number at least 0)"),
])
def test_a_plain_list_in_doubt_is_refused_in_the_part_by_part_words(
    text: str, kind: Any, bounds: dict[str, Any], line: str
) -> None:
    """A list the one reading doubts (a part given twice, empty, not a number, out of range, past a float) is read
    part by part, and refused in the same words as when a range beside it makes it so."""
    plain, parted = _plain_and_parted(text, kind, **bounds)
    assert plain == line
    assert parted == line


# 2. A trace's integer past Python's digits ----------------------------------------------------------------------

BIG = "1" + "0" * 100_000


@pytest.mark.parametrize(("line", "said"), [
    ('{"arrival_s": 0, "prompt_tokens": N, "output_tokens": 5}'.replace("N", BIG),
     "t.jsonl:2: prompt_tokens: a 100,001-digit number is past the serving's context limit 4,096"),
    ('{"arrival_s": 0, "output_tokens": N, "prompt_tokens": 5}'.replace("N", BIG),  # the JSON decoder reads it
     "t.jsonl:2: output_tokens: a 100,001-digit number is past the serving's context limit 4,096"),
    ('{"arrival_s": 0, "prompt_tokens": -N, "output_tokens": 5}'.replace("N", BIG),
     "t.jsonl:2: prompt_tokens: a 100,001-digit number is negative; it must be at least 1"),
    ('{"arrival_s": N, "prompt_tokens": 5, "output_tokens": 5}'.replace("N", BIG),
     "t.jsonl:2: arrival_s: a 100,001-digit number is past 1e+09 s (about 31 years) after the start"),
    ('{"arrival_s": -N, "prompt_tokens": 5, "output_tokens": 5}'.replace("N", BIG),
     "t.jsonl:2: arrival_s: a 100,001-digit number is negative"),
    ('{"arrival_s": 0, "prompt_tokens": 5, "output_tokens": 5, "prefix_id": "a", "prefix_tokens": N}'.replace("N", BIG),
     "t.jsonl:2: prefix_tokens: a 100,001-digit number is past the serving's context limit 4,096"),
    ('{"arrival_s": 0, "prompt_tokens": 5, "output_tokens": 5, "prefix_id": N, "prefix_tokens": 2}'.replace("N", BIG),
     "t.jsonl:2: prefix_id: a 100,001-digit number is not a non-empty string"),
    ('{"arrival_s": 0, "prompt_tokens": 1N, "output_tokens": 5}'.replace("N", "0" * 4300),  # the first past it
     "t.jsonl:2: prompt_tokens: a 4,301-digit number is past the serving's context limit 4,096"),
])
def test_an_integer_past_pythons_digits_is_named_by_its_key_and_bound(line: str, said: str) -> None:
    """A ``prompt_tokens`` of 100,001 digits was ``not JSON: Exceeds the limit (4300 digits) for integer string
    conversion: value has 100001 digits``: Python's words, no key, no bound."""
    with pytest.raises(InputError) as e:
        parse_trace(["", line], "t.jsonl", 4096)
    assert str(e.value) == said


def test_an_integer_past_pythons_digits_is_one_line_of_simulate(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text('{"arrival_s": 0, "prompt_tokens": N, "output_tokens": 5}\n'.replace("N", BIG), encoding="utf-8")
    lines = bad("simulate", "gemma3-270m-h100", "--trace", str(path))
    assert lines == [f"passprice: error: {path}:1: prompt_tokens: a 100,001-digit number is past the serving's "
                     "context limit 32,768"]


def test_a_trace_of_short_integers_reads_as_before() -> None:
    trace = parse_trace(['{"arrival_s": 0, "prompt_tokens": 5, "output_tokens": 3}',
                         '{"arrival_s": 1.5, "output_tokens": 2, "prompt_tokens": 7}'], "t.jsonl", 4096)
    assert [(r.arrival, r.prompt, r.output) for r in trace.requests] == [(0.0, 5, 3), (1.5, 7, 2)]


# 3. A whole position written as an integer ----------------------------------------------------------------------


def test_a_whole_position_is_written_as_an_integer() -> None:
    assert [position_text(p) for p in (1_000_000.0, 123_456_789.0, 2048.0, 0.0, 1500.5, 1e20, 7)] == [
        "1000000", "123456789", "2048", "0", "1500.5", "1e+20", "7"]


def test_a_sweeps_lock_note_and_refusal_write_whole_positions_as_integers() -> None:
    """``its rows at position 1e+06, 1500.5, 1.23457e+08 are not the locked serving's``: 123456789 was written
    1.23457e+08, a figure nobody gave; the refusal's line said ``position 1e+06`` twice."""
    result = invoke("sweep", "r1-qwen7b-h200", "--positions", "1000000,1500.5,123456789", "--batches", "1")
    assert result.exit_code == 0, result.output
    note, refusal = result.stderr.splitlines()
    assert note.endswith("; its rows at position 1000000, 1500.5, 123456789 are not the locked serving's "
                         "(position 2048)")
    assert refusal == (
        "passprice: refused: BadContexts (2 of 3 rows, 1 priced) — r1-qwen7b-h200 on h200_sxm_141gb at position "
        "1000000, batch 1: bad context mix: position 1000000 is not below its limit 4096: a pass at a position writes "
        "that position's row, and a sequence allowed 4096 positions holds rows 0 to 4095: raise --limit or lower "
        "--positions")


# 4. A whole float past its bound: one line ----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "line"), [
    ("1e308", "1e308 is greater than the maximum of 4294967295 (a whole number, written without a decimal point or "
              "exponent)"),
    ("-1e300", "-1e300 is less than the minimum of 0 (a whole number, written without a decimal point or exponent)"),
    ("8192.0", "8192.0 is not of type 'integer' (a whole number, written without a decimal point or exponent: 8192)"),
])
def test_a_whole_float_past_its_bound_is_one_line(tmp_path: Path, value: str, line: str) -> None:
    """``range.position.max.value = 1e308`` in a stack gave two lines for one value: ``is not of type 'integer'``
    and ``is greater than the maximum of 4294967295``."""
    root = copy_root(tmp_path)
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[range.position.max]\nvalue = 8192", f"[range.position.max]\nvalue = {value}", 1),
                    encoding="utf-8")
    assert path.read_text(encoding="utf-8") != text
    lines = bad("validate", "--stack", "llamacpp-cuda-2405", root=root)
    assert lines == [f"passprice: error: {path}: range.position.max.value: {line}"]


# 5. sweep --jobs N counts the whole grid's refusals -------------------------------------------------------------

SERVINGS = ("gemma3-270m-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp")
CARDS = ("h200_sxm_141gb", "sn40l", "rtx_3080")
ARGS = [*SERVINGS, "--cards", ",".join(CARDS), "--positions", "0,511.5,2048,200000", "--batches",
        "1,2,7,64,300,581,5000"]
ROWS = 3 * 3 * 4 * 7


def _summary(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("passprice: refused: ")]


@pytest.mark.parametrize("to_file", [True, False])
def test_jobs_count_the_whole_grids_refusals(tmp_path: Path, to_file: bool) -> None:
    """``sweep --jobs 2``'s summary counted the parent's blocks alone (``NotResident (714 of 1,768 rows this process
    made of the grid's 15,028, 391 priced)`` where ``--jobs 1`` said ``3,891 of 15,028 rows, 4,669 priced``): each
    worker now tells each block's tally, and the lines are ``--jobs 1``'s."""
    said = {}
    for jobs in ("1", "2", "4"):
        out = ["-o", str(tmp_path / f"jobs{jobs}.csv")] if to_file else []
        result = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", *ARGS, "--jobs", jobs, *out])
        assert result.exit_code == 0, result.output
        said[jobs] = _summary(result)
    assert said["2"] == said["1"] and said["4"] == said["1"]
    counts = [re.search(r"\((\d[\d,]*) of ([\d,]+) rows, ([\d,]+) priced\)", line) for line in said["1"]]
    assert all(c is not None for c in counts) and len(counts) >= 2
    priced = {int(c[3].replace(",", "")) for c in counts if c is not None}
    refused = sum(int(c[1].replace(",", "")) for c in counts if c is not None)
    assert {c[2] for c in counts if c is not None} == {f"{ROWS:,}"}
    assert len(priced) == 1 and refused + priced.pop() == ROWS


def test_shared_chunks_add_every_blocks_tally_in_grid_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tallies a sweep shared among three processes adds are the one-process sweep's: its refusals in the same
    order and counts, the same first rows, the same priced rows, and workers made some of its blocks."""
    grid = Grid(SERVINGS, (1, 5, 300, 5000), CARDS, (512.0, 2048.0, 200000.0))
    one = Sweeper(ROOT)
    one.check(grid)
    with np.errstate(all="ignore"):
        whole = "".join(text_chunks(one.segments(grid), "csv"))
    heard: list[int] = []
    added = sweepjobs._add_tallies

    def counted(sweeper: Sweeper, own: dict[int, Any], workers: list[Any]) -> None:
        heard.append(sum(len(w.tallies) for w in workers))
        added(sweeper, own, workers)

    monkeypatch.setattr(sweepjobs, "_add_tallies", counted)
    shared = Sweeper(ROOT)
    shared.check(grid)
    with np.errstate(all="ignore"):
        chunks = list(sweepjobs.shared_chunks(shared, grid, "csv", 3, appended=False))
    assert b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks).decode() == whole
    assert heard and heard[0] > 0  # blocks the workers made were counted
    assert list(shared.refused.items()) == list(one.refused.items()) and one.refused
    assert shared.first_refused == one.first_refused
    assert shared.priced_rows == one.priced_rows and shared.saw_price == one.saw_price
    assert shared.priced_rows + sum(shared.refused.values()) == grid.size()


@pytest.mark.parametrize("to_file", [True, False])
def test_a_failed_workers_blocks_are_counted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  to_file: bool) -> None:
    """Workers that fail at the end of each block they make: this process makes those blocks again, and each is
    counted once, its own tally's, the summary still ``--jobs 1``'s."""
    import os

    args = ["--root", str(ROOT.path), "sweep", *ARGS]
    out = ["-o", str(tmp_path / "one.csv")] if to_file else []
    one = CliRunner().invoke(cli, [*args, "--jobs", "1", *out])
    parent, made = os.getpid(), sweepjobs.text_chunks

    def failing(*given: Any, **named: Any) -> Any:
        yield from made(*given, **named)
        if os.getpid() != parent:
            raise RuntimeError("a worker fails at the end of its block")

    monkeypatch.setattr(sweepjobs, "text_chunks", failing)
    out = ["-o", str(tmp_path / "two.csv")] if to_file else []
    two = CliRunner().invoke(cli, [*args, "--jobs", "2", *out])
    assert one.exit_code == two.exit_code == 0, two.output
    assert _summary(two) == _summary(one) and _summary(one)
