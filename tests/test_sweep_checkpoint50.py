"""``passprice sweep --checkpoint C --routing R`` (session 36, sweep50): a checkpoint no registered serving names,
and a mixture of experts under a routing record, swept on every card, each row the price ``passprice price`` gives
with the same flags, bit for bit; the options read, and refused, by price's own code path."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passprice.cli import cli
from passprice.registry import find_root
from passprice.servings import ServingSpec
from passprice.sweep import COLUMNS, Grid, Sweeper, scalar_rows

ROOT = find_root(Path(__file__).resolve().parent.parent)
BASE = ["--root", str(ROOT.path)]

QWEN = "qwen3-30b-a3b-q4_k_m"
DENSE = "deepseek-r1-distill-qwen-7b-q4_k_m"
CARDS = "h200_sxm_141gb,mi300x"
BATCHES = "1,8,64,300"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, [*BASE, *args])


def swept(checkpoint: str, routing: str | None, *more: str) -> list[dict[str, Any]]:
    """The rows of a JSON sweep of ``checkpoint`` (under ``routing``) on CARDS at positions 512 and 2048."""
    extra = ["--routing", routing] if routing else []
    result = invoke("sweep", "--checkpoint", checkpoint, *extra, "--cards", CARDS, "--positions", "512,2048",
                    "--batches", BATCHES, "--json", *more)
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def priced(checkpoint: str, routing: str | None, card: str, position: float, batch: int) -> dict[str, Any]:
    """``price --json`` of the same point, with the same flags."""
    extra = ["--routing", routing] if routing else []
    result = invoke("price", "--checkpoint", checkpoint, *extra, "--card", card, "--position", f"{position:g}",
                    "--batch", str(batch), "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


FIELDS = ("tokens_per_s", "pass_s", "memory_s", "host_s", "array_s", "vector_s", "scale_s", "binds", "held_bytes",
          "capacity_bytes", "host_sequences")


@pytest.mark.parametrize(
    ("checkpoint", "routing", "distinct"),
    [
        # D(T) by hand: uniform, 128 · (1 − (1 − 8/128)^T); the measured record, 58 experts at 8 · 0.9 / 58 and 70 at
        # 8 · 0.1 / 70 (README, Mixtures of experts: 44.06 experts a layer at T = 8, where uniform reads 51.62).
        (QWEN, "uniform", {1: 8.0, 8: 128 * (1 - (120 / 128) ** 8), 64: 128 * (1 - (120 / 128) ** 64)}),
        (QWEN, "qwen3-30b-a3b-measured",
         {1: 8.0, 8: 58 * (1 - (1 - 7.2 / 58) ** 8) + 70 * (1 - (1 - 0.8 / 70) ** 8)}),
        (DENSE, None, {}),
    ],
)
def test_rows_are_price_with_the_same_flags_bit_for_bit(
    checkpoint: str, routing: str | None, distinct: dict[int, float]
) -> None:
    rows = swept(checkpoint, routing)
    assert len(rows) == 2 * 2 * 4  # cards × positions × batches
    assert {r["serving"] for r in rows} == {None} and {r["checkpoint"] for r in rows} == {checkpoint}
    assert {r["routing"] for r in rows} == {routing}
    at = {(r["card"], r["position"], r["batch"]): r for r in rows}
    sample = [("h200_sxm_141gb", 512, 1), ("mi300x", 2048, 8), ("h200_sxm_141gb", 2048, 64), ("mi300x", 512, 300)]
    for card, position, batch in sample:
        row, price = at[(card, position, batch)], priced(checkpoint, routing, card, position, batch)
        assert row["refusal"] is None
        assert {k: row[k] for k in FIELDS} == {k: price[k] for k in FIELDS}, (card, position, batch)
        if routing is None:
            assert "routing" not in price
            continue
        # The experts the price read (D(T), T = batch token-rows) are the hand-computed ones, and the row's
        # memory_s, the experts' bytes over the bandwidth, is that price's to the last bit.
        assert (price["routing"]["routing"], price["routing"]["tokens"]) == (routing, batch)
        if batch in distinct:
            assert price["routing"]["distinct"] == pytest.approx(distinct[batch], rel=1e-12)
    if routing == "qwen3-30b-a3b-measured":
        assert round(priced(checkpoint, routing, "mi300x", 2048, 8)["routing"]["distinct"], 2) == 44.06


def test_a_checkpoint_grid_is_the_scalar_pricers_at_every_point() -> None:
    # The library API: a ServingSpec in the grid's servings, every row of it the scalar pricer's, field by field.
    spec = ServingSpec(checkpoint="gpt-oss-20b-mxfp4", card="h200_sxm_141gb", routing="uniform")
    grid = Grid((spec,), (0, 1, 3, 64, 4096, 10**6), ("h200_sxm_141gb", "rtx_3080"), (0.0, 1000.0))
    n = 0
    for mine, theirs in zip(Sweeper(ROOT).rows(grid), scalar_rows(ROOT, grid), strict=True):
        n += 1
        assert mine["serving"] is None and mine["routing"] == "uniform"
        assert {k: mine[k] for k in theirs} == theirs
    assert n == grid.size() == 24


def test_serving_routing_replaced_as_price_does_it() -> None:
    # SERVING --routing R: the row is priced on R (the registered serving on its card), and its lock judges it as
    # price's does: the measured-routing lock refuses uniform routing, with price's words.
    sweep = invoke("sweep", "qwen3-30b-a3b-h200", "--routing", "uniform", "--batches", "8")
    price = invoke("price", "qwen3-30b-a3b-h200", "--routing", "uniform", "--batch", "8")
    assert sweep.exit_code == price.exit_code == 1
    assert "LockFloor: lock qwen3-30b-a3b-h200 refuses this price: routing.hot_experts is assumed" in sweep.output
    assert "the serving as registered holds, the weaker fact comes from an op" in sweep.output
    free = invoke("sweep", "qwen3-30b-a3b-h200", "--routing", "uniform", "--batches", "8", "--no-lock", "--json")
    row = json.loads(free.stdout)[0]
    price = invoke("price", "qwen3-30b-a3b-h200", "--routing", "uniform", "--batch", "8", "--no-lock", "--json")
    assert (row["serving"], row["routing"]) == ("qwen3-30b-a3b-h200", "uniform")
    assert {k: row[k] for k in FIELDS} == {k: json.loads(price.stdout)[k] for k in FIELDS}


def test_refusals_are_prices() -> None:
    # A name that names nothing (exit 2), a record out of its scope (refused, exit 1): price's line; nothing written.
    for args, status in ((["--checkpoint", QWEN, "--routing", "nope"], 2), (["--checkpoint", "nope"], 2),
                         (["--checkpoint", "gpt-oss-20b-mxfp4", "--routing", "qwen3-30b-a3b-measured"], 1)):
        sweep = invoke("sweep", *args, "--cards", "h200_sxm_141gb", "--batches", "1")
        price = invoke("price", *args, "--card", "h200_sxm_141gb")
        assert sweep.exit_code == price.exit_code == status, args
        assert sweep.stdout == "" and sweep.stderr == price.stderr, args
    assert "OutOfScope: routing record 'qwen3-30b-a3b-measured' applies to checkpoint qwen3-30b-a3b-q4_k_m" in (
        sweep.stderr
    )
    # A mixture of experts without a record, a record for a dense checkpoint: each row refused by price's name, and
    # the sweep exits 1 as price does.
    for checkpoint, routing, name in ((QWEN, None, "Routed"), (DENSE, "uniform", "BadRouting")):
        extra = ["--routing", routing] if routing else []
        sweep = invoke("sweep", "--checkpoint", checkpoint, *extra, "--cards", "h200_sxm_141gb", "--batches", "1,2")
        price = invoke("price", "--checkpoint", checkpoint, *extra, "--card", "h200_sxm_141gb")
        assert sweep.exit_code == price.exit_code == 1
        assert f"refused: {name}: " in price.stderr
        assert [r["refusal"] for r in csv.DictReader(io.StringIO(sweep.stdout))] == [name, name]
        assert f"at every larger one: {name} (1 line)" in sweep.stderr


def test_options_a_checkpoint_sweep_refuses() -> None:
    lock = invoke("sweep", "--checkpoint", QWEN, "--routing", "uniform", "--cards", "h200_sxm_141gb", "--batches",
                  "1", "--lock", "qwen3-30b-a3b-h200")
    assert lock.exit_code == 2 and "--checkpoint with no SERVINGS sweeps no registered serving" in lock.stderr
    file = invoke("sweep", "--file", str(ROOT.path / "examples" / "grid.toml"), "--routing", "uniform")
    assert file.exit_code == 2 and "a sweep file takes no --routing" in file.stderr
    # No card to sweep on: said as the grid says it (it said "no servings to price").
    none = invoke("sweep", "--checkpoint", QWEN, "--cards", "", "--batches", "1")
    said = "passprice: error: --cards: no cards (give names, comma-separated, or 'all')\n"
    assert none.exit_code == 2 and none.stderr == said


def test_every_card_by_default_its_serving_cell_empty() -> None:
    result = invoke("sweep", "--checkpoint", QWEN, "--routing", "uniform", "--batches", "1")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["card"] for r in rows] == list(ROOT.names(ROOT.cards))
    assert list(rows[0]) == list(COLUMNS) and {r["serving"] for r in rows} == {""}
