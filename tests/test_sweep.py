"""passprice sweep: every row equals the scalar pricer's price for that point, refusals included."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passprice.cli import cli
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.serving import U32_MAX
from passprice.sweep import COLUMNS, Grid, Sweeper, parse_batches, parse_numbers, scalar_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)


def compare(grid: Grid) -> list[dict[str, object]]:
    rows = list(Sweeper(ROOT).rows(grid))
    ref = list(scalar_rows(ROOT, grid))
    assert len(rows) == len(ref) == grid.size()
    for mine, theirs in zip(rows, ref, strict=True):
        assert mine["batch"] == theirs["batch"]
        assert mine["refusal"] == theirs["refusal"], (mine, theirs)
        if theirs["refusal"] is None:
            for key, value in theirs.items():
                if isinstance(value, float):
                    # Along the batch axis the sweep does the scalar code's operations in its order (bit for bit);
                    # along the position axis it sums the same terms grouped by attention layer: to rounding.
                    assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-300), (key, mine, theirs)
                else:
                    assert mine[key] == value, (key, mine, theirs)
    return rows


def test_dense_grid_equals_the_scalar_pricer() -> None:
    grid = Grid(
        servings=("r1-qwen7b-h200", "gemma3-270m-h100"),
        batches=(0, 1, 2, 7, 64, 580, 581, 5000, 100_000),
        cards=("h200_sxm_141gb", "mi300x", "sn40l"),
        positions=(1.0, 511.0, 512.0, 2048.0, 5000.0),
    )
    rows = compare(grid)
    refusals = {r["refusal"] for r in rows}
    # Batch 0, positions past the limit, batches past the memory: each refused by name.
    assert {"Empty", "BadContexts", "NotResident"} <= refusals


def test_drafts_host_memory_and_flushes_equal_the_scalar_pricer() -> None:
    grid = Grid(
        servings=("qwen35-27b-h200-mtp", "qwen35-27b-h100-every8", "qwen35-27b-ws1-trailing"),
        batches=(1, 3, 16, 64, 200, 400, 1000),
        draft_tokens=(0, 1, 2, 3, 4),
    )
    rows = compare(grid)
    assert any(r["host_sequences"] for r in rows if r["refusal"] is None)
    # Four drafts from a method with three figures: the seed's bad-draft refusal.
    assert {r["refusal"] for r in rows if r["draft_tokens"] == 4} == {"BadDraft"}


def test_many_positions_on_arrays_equal_the_scalar_pricer() -> None:
    # Positions are priced together (one shape column): windowed, hybrid and host-memory servings, positions on
    # both sides of gemma3's 512-position window, and positions past the limit.
    grid = Grid(
        servings=("gemma3-270m-h100", "qwen35-27b-h100-every8", "qwen35-27b-ws1-trailing", "r1-qwen7b-mi300x-int8kv"),
        batches=(0, 1, 5, 40, 300, 3000),
        positions=(0.0, 100.0, 511.5, 512.0, 513.0, 4096.0, 20_000.0, 40_000.0, 200_000.0),
    )
    rows = compare(grid)
    assert {"BadContexts", "Empty"} <= {r["refusal"] for r in rows}
    assert any(r["host_sequences"] for r in rows if r["refusal"] is None)


def test_rows_carry_bind_and_weakest_provenance() -> None:
    rows = list(Sweeper(ROOT).rows(Grid(servings=("qwen35-27b-h200-mtp",), batches=(16,), draft_tokens=(1, 2))))
    one, two = rows
    # One draft: the card's estimated facts and the estimated first acceptance tie for weakest.
    assert one["provenance"] == "estimated"
    assert one["weakest"] == "scale;on_chip.capacity;draft.acceptance.1"
    # Two drafts: the assumed second acceptance is the weakest alone.
    assert two["provenance"] == "assumed" and two["weakest"] == "draft.acceptance.2"
    assert one["binds"] == two["binds"] == "memory"


def test_parse_numbers() -> None:
    assert parse_numbers("1,2,8", int, "x") == (1, 2, 8)
    assert parse_numbers("3-6", int, "x") == (3, 4, 5, 6)
    assert parse_numbers("3..6", int, "x") == (3, 4, 5, 6)  # as speculate --tokens reads a range
    assert parse_numbers("1-20*2", int, "x") == (1, 2, 4, 8, 16)
    assert parse_numbers("0,1-2,100", int, "x") == (0, 1, 2, 100)
    for bad in ("a", "5-1", "1-8*1", "", "1-3*x"):
        with pytest.raises(InputError, match="x:"):
            parse_numbers(bad, int, "x")


def test_cli_csv_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--root", str(ROOT.path), "sweep", "r1-qwen7b-h200", "--batches", "1,580,581", "--cards", "h200_sxm_141gb"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    table = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(table[0]) == list(COLUMNS)
    assert [r["batch"] for r in table] == ["1", "580", "581"]
    assert table[1]["binds"] == "memory" and table[2]["refusal"] == "NotResident"
    assert float(table[0]["tokens_per_s"]) == pytest.approx(996.0966124437687, rel=1e-15)
    out = tmp_path / "grid.json"
    done = runner.invoke(cli, [*args, "--format", "json", "-o", str(out)])
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    assert [r["batch"] for r in data] == [1, 580, 581] and data[2]["tokens_per_s"] is None
    # An existing output is not overwritten without --force.
    again = runner.invoke(cli, [*args, "--format", "json", "-o", str(out)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_sweep_file(tmp_path: Path) -> None:
    spec = tmp_path / "grid.toml"
    spec.write_text(
        'servings = ["r1-qwen7b-h200"]\ncards = ["h200_sxm_141gb", "b200"]\n'
        "positions = [1024, 4096]\nbatches = { from = 1, to = 8, factor = 2 }\n"
    )
    done = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", "--file", str(spec)])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == 2 * 2 * 4
    assert [r["batch"] for r in rows[:4]] == ["1", "2", "4", "8"]
    bad = tmp_path / "bad.toml"
    bad.write_text('servings = ["r1-qwen7b-h200"]\nbatches = [-1]\nextra = 1\n')
    done = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", "--file", str(bad)])
    assert done.exit_code == 2
    assert "batches.0" in done.output and "extra" in done.output


def test_sweep_file_takes_all_cards_and_the_example_file(tmp_path: Path) -> None:
    spec = tmp_path / "grid.toml"
    spec.write_text('servings = ["r1-qwen7b-h200"]\ncards = ["all"]\nbatches = [1]\n')
    done = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", "--file", str(spec)])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["card"] for r in rows] == ROOT.names(ROOT.cards)
    # The example the README points to: 2 servings x 3 cards x 4 positions x 13 batches (1, 2, 4 ... 4096).
    example = ROOT.path / "examples" / "grid.toml"
    done = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", "--file", str(example)])
    assert done.exit_code == 0, done.output
    assert len(list(csv.DictReader(io.StringIO(done.stdout)))) == 2 * 3 * 4 * 13


def test_parse_batches_keeps_a_plain_range_as_a_range() -> None:
    # The batch axis as parse_numbers reads it, value for value; one plain range kept as a range (4,000,000 batches
    # are not 4,000,000 Python integers), anything else as parse_numbers' tuple, with its errors.
    for text in ("1-4000000", "3..6", "1-1", "1,2,8", "1-20*2", "3,1-2,100", "7"):
        assert list(parse_batches(text, "--batches")) == list(
            parse_numbers(text, int, "--batches", least=1, most=U32_MAX))
    for zero in ("0-0", "0,1-2,100"):  # a batch of 0 is out of range (test_fix181.py)
        with pytest.raises(InputError, match=r": 0 is out of range \(a whole number from 1 to 4,294,967,295\)$"):
            parse_batches(zero, "--batches")
    assert parse_batches("1-4000000", "--batches") == range(1, 4_000_001)
    assert isinstance(parse_batches("1,2", "--batches"), tuple)
    for bad, message in (("5-1", "runs from high to low: write 1-5"), (" 0-0 ", "holds a space"),
                         ("+1-3", "holds a '[+]' sign"), ("1-4000001", "more than the 4,000,000 rows"),
                         ("4294967295-4294967296", "out of range")):
        with pytest.raises(InputError, match=message):
            parse_batches(bad, "--batches")
