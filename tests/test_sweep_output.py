"""What ``passprice sweep -o FILE`` writes, byte for byte: the text the standard library's writers (``csv`` and
``json``, a row at a time, every float as its ``repr``) give for the rows the scalar pricer prices one point at a
time — whatever groups of segments the fast writer makes the text in."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from passprice import sweep
from passprice.cli import cli
from passprice.registry import find_root
from passprice.sweep import COLUMNS, Grid, Sweeper, scalar_rows, write_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)

SERVINGS = ("gemma3-270m-h100", "r1-qwen7b-h200", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp")
BATCHES = (1, 2, 7, 64, 300, 581, 5000)  # batch 0 is refused on the command line (exit 2; test_fix181.py)
POSITIONS = (0.0, 511.5, 2048.0, 200_000.0)

#: (command-line arguments, the same grid): cards given (every position and refusal), and each serving on its own
#: card at its own contexts (drafts, and host memory where the serving allows it).
CASES = {
    "cards and positions": (
        ["--cards", "h200_sxm_141gb,sn40l,rtx_3080", "--positions", "0,511.5,2048,200000"],
        Grid(SERVINGS, BATCHES, ("h200_sxm_141gb", "sn40l", "rtx_3080"), POSITIONS),
    ),
    "own cards": (
        [],
        Grid(("qwen35-27b-h200-mtp", "qwen35-27b-h100-every8", "qwen35-27b-ws1-trailing"), BATCHES),
    ),
}


def reference(grid: Grid, fmt: str) -> str:
    """The grid's text from the row writer, every priced cell the scalar pricer's (``price_serving`` a point at a
    time); only the cells that say where a row is (card, serving, checkpoint, draft tokens, position, limit) come
    from the sweep's rows."""
    where = COLUMNS[: COLUMNS.index("batch")]
    rows = []
    for mine, theirs in zip(Sweeper(ROOT).rows(grid), scalar_rows(ROOT, grid), strict=True):
        assert mine["batch"] == theirs["batch"]
        rows.append({**dict.fromkeys(COLUMNS), **{k: mine[k] for k in where}, **theirs})
    out = io.StringIO()
    assert write_rows(iter(rows), fmt, out) == grid.size()
    return out.getvalue()


@pytest.mark.parametrize("group", [sweep.GROUP_ROWS, 5])
@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_file_is_the_row_writers_text_of_the_scalar_prices(
    case: str, fmt: str, group: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, grid = CASES[case]
    monkeypatch.setattr(sweep, "GROUP_ROWS", group)  # 5: a group of one or two segments, cut between segments
    out = tmp_path / f"grid.{fmt}"
    servings = list(grid.servings)
    batches = ",".join(map(str, grid.batches))
    command = ["--root", str(ROOT.path), "sweep", *servings, *args, "--batches", batches, "-o", str(out)]
    result = CliRunner().invoke(cli, [*command, "--format", fmt])
    assert result.exit_code == 0, result.output
    expected = reference(grid, fmt)
    assert out.read_bytes() == expected.encode()
    # The grid holds what the writer treats apart: refusals, floats below 10^-4 (repr's exponent layout), and for
    # the servings on their own cards, sequences in host memory.
    assert "NotResident" in expected and "e-0" in expected
    if case == "own cards":
        host = [line.split(",")[7] for line in expected.splitlines()[1:]] if fmt == "csv" else []
        assert fmt == "json" or any(h not in ("", "0") for h in host)


def test_the_binding_term_is_the_scalar_pricers_pick() -> None:
    # Every combination of five terms from values with ties, zeros of both signs, infinities and NaNs: the index
    # and the value are cost.binding_index's and the term it points at (the last of equal maxima; the last NaN).
    import itertools

    import numpy as np

    from passprice.cost import binding_index

    values = np.array([0.0, -0.0, 1.0, 2.0, -1.0, np.inf, np.nan])
    terms = np.array(list(itertools.product(values, repeat=5))).T
    index, value = sweep._binding(terms)
    expected = binding_index(terms)
    assert (index == expected).all()
    picked = np.take_along_axis(terms, expected[None], axis=0)[0]
    assert np.array_equal(value, picked, equal_nan=True) and (np.signbit(value) == np.signbit(picked)).all()


#: The sha256 of the CSV and the JSON main's code wrote (0c1e7f0, before session 35's sweep38) for the grid of
#: :func:`test_the_bytes_are_the_code_befores`: a change of the sweep's code that keeps its bytes keeps these. A change
#: of the shipped registry's facts or of the row layout changes them: re-pin them then from the code before it.
#: Re-pinned in session 39 (window55: a windowed layer reads window − 1 cached positions): main at 0141f4b2 wrote
#: 7352e778… and 9d5a1ae0…; the new files differ from those in the 39 gemma3-270m-h100 rows at positions 511.5 and
#: 2,048 only (20 and 19 rows, the three cards), every other row byte for byte the same.
BEFORE = {
    "csv": "df192a697e5ee7d301c57841d7c2a2d66fd986c081534e5c8508fd879a621700",
    "json": "18f29b1191e5d0f0325949b4e9354dc67a19a9d24781b4bb1791882691d6873f",
}


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_bytes_are_the_code_befores(tmp_path: Path, fmt: str) -> None:
    """A small grid's file (five servings, DeepSeek-V3 refused on every card; three cards; four positions; eight
    batches: 480 rows) is byte for byte what the code before session 35's sweep38 wrote (its sha256). Its batch 0
    (a row refused Empty) is refused on the command line since test_fix181.py, so the grid is the library's, written
    as the command writes it (the command's own bytes: the test above)."""
    import hashlib

    grid = Grid((*SERVINGS, "deepseek-v3-h200"), (0, *BATCHES), ("h200_sxm_141gb", "sn40l", "rtx_3080"), POSITIONS)
    chunks = sweep.text_chunks(Sweeper(ROOT, as_json=fmt == "json").segments(grid), fmt, binary=True)
    text = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
    assert hashlib.sha256(text).hexdigest() == BEFORE[fmt]
