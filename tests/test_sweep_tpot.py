"""``sweep --max-tpot SECONDS``: every row keeps its price, two columns (``tpot_s``, ``within_max_tpot``) are added
only when the cap is given, and each line's best batch (the picture's dot, the summary on stderr) is the best within
the cap — the batch ``best --max-tpot`` finds."""

from __future__ import annotations

import csv
import io
import json

import pytest

from cli_helpers import REPO, invoke
from passprice.registry import Root
from passprice.sweep import COLUMNS, Grid, Sweeper
from passprice.sweepcap import BestWithin, capped_chunks, capped_rows, reference_chunks

R1 = "r1-qwen7b-h200"
CHAT = "qwen35-27b-h200-chat"


def test_rows_keep_their_prices_and_gain_tpot_columns_only_under_a_cap() -> None:
    plain = invoke("sweep", R1, "--batches", "1-1024*2", "--no-lock")
    capped = invoke("sweep", R1, "--batches", "1-1024*2", "--no-lock", "--max-tpot", "0.01")
    assert plain.exit_code == capped.exit_code == 0, capped.output
    assert plain.stdout.splitlines()[0] == ",".join(COLUMNS)  # no column added without the cap
    lines = capped.stdout.splitlines()
    assert lines[0] == ",".join(COLUMNS) + ",tpot_s,within_max_tpot"
    # Each row is the plain sweep's row, byte for byte, then its TPOT and the flag.
    assert [line.rsplit(",", 2)[0] for line in lines[1:]] == plain.stdout.splitlines()[1:]
    rows = list(csv.DictReader(io.StringIO(capped.stdout)))
    assert [r["batch"] for r in rows] == ["1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"]
    # 1,024 sequences of 4,096 positions do not fit the card: a refused row has no TPOT and no flag.
    assert (rows[-1]["refusal"], rows[-1]["tpot_s"], rows[-1]["within_max_tpot"]) == ("NotResident", "", "")
    for r in rows[:-1]:
        # No drafts: a sequence emits one token a pass, so its TPOT is the pass itself.
        assert r["tpot_s"] == r["pass_s"]
        assert r["within_max_tpot"] == ("true" if float(r["pass_s"]) <= 0.01 else "false")
    # Batch 256 takes 8.224 ms a token, 512 takes 15.47 ms: the cap falls between them.
    assert [r["within_max_tpot"] for r in rows].index("false") == 9
    assert float(rows[8]["tpot_s"]) == pytest.approx(8.224e-3, rel=1e-3)
    assert float(rows[9]["tpot_s"]) == pytest.approx(15.47e-3, rel=1e-3)


def test_the_best_batch_within_the_cap_is_best_s() -> None:
    # Every batch 1 … 400 swept: the best within 10 ms is the batch `best --max-tpot 0.01` finds, at its price.
    best = invoke("best", R1, "--max-tpot", "0.01", "--json", "--no-lock")
    assert best.exit_code == 0, best.output
    found = json.loads(best.stdout)
    assert found["batch"] == 318 and found["pass_s"] == pytest.approx(0.009979, rel=1e-4)
    swept = invoke("sweep", R1, "--batches", "1-400", "--max-tpot", "0.01", "--no-lock")
    assert swept.exit_code == 0, swept.output
    (summary,) = [line for line in swept.stderr.splitlines() if "within TPOT" in line]
    assert summary == (
        f"passprice: {R1} on h200_sxm_141gb: best batch within TPOT ≤ 10 ms: 318, {found['tokens_per_s']:,.1f} "
        "tokens/s at 9.979 ms (without the cap: 400 (the largest batch swept), 32,518.6 tokens/s at 12.3 ms)"
    )
    row = next(r for r in csv.DictReader(io.StringIO(swept.stdout)) if r["batch"] == "318")
    assert float(row["tokens_per_s"]) == found["tokens_per_s"] and row["within_max_tpot"] == "true"
    nxt = next(r for r in csv.DictReader(io.StringIO(swept.stdout)) if r["batch"] == "319")
    assert float(nxt["tpot_s"]) > 0.01 and nxt["within_max_tpot"] == "false"


def test_drafts_and_refusals_under_a_cap_in_json() -> None:
    result = invoke("sweep", CHAT, "--batches", "1,256,100000", "--max-tpot", "0.01", "--json", "--no-lock")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["batch"], r["refusal"], r["within_max_tpot"]) for r in rows] == [
        (1, None, True), (256, None, False), (100000, "NotResident", None)
    ]
    assert rows[2]["tpot_s"] is None and list(rows[0])[-2:] == ["tpot_s", "within_max_tpot"]
    # Three drafts a pass: a sequence emits 2.901875 tokens a pass (the drafting method's acceptance), so at 256
    # sequences a token takes 34.42 ms / 2.901875 = 11.86 ms, over the cap; at batch 1, 3.967 ms / 2.901875.
    for r in rows[0:2]:
        assert r["tpot_s"] == pytest.approx(r["pass_s"] / 2.901875, rel=1e-12)
    assert rows[1]["tpot_s"] == pytest.approx(0.0118605, rel=1e-5)
    assert result.stderr.splitlines()[0] == (
        f"passprice: {CHAT} on h200_sxm_141gb: best batch within TPOT ≤ 10 ms: 1, 731.5 tokens/s at 1.367 ms "
        "(without the cap: 256, 21,584.2 tokens/s at 11.86 ms) — the best of the batches swept; one between 1 and 256 "
        "may be faster (`passprice best --max-tpot` searches every batch)"  # walk48: the grid skips 2 … 255
    )


def test_no_batch_within_the_cap_is_said() -> None:
    result = invoke("sweep", R1, "--batches", "1,2", "--max-tpot", "0.0005", "--no-lock")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"passprice: {R1} on h200_sxm_141gb: no batch within TPOT ≤ 500 µs (batch 1 takes 1.004 ms a token)"
    )
    assert [line.rsplit(",", 1)[1] for line in result.stdout.splitlines()[1:]] == ["false", "false"]


def test_a_cap_with_a_stack_is_refused() -> None:
    result = invoke("sweep", R1, "--batches", "1", "--max-tpot", "0.01", "--stack", "llamacpp-cuda-2405")
    assert result.exit_code == 2 and "give --max-tpot or --stack, not both" in result.stderr


def test_best_within_by_line_for_the_picture() -> None:
    sweeper = Sweeper(Root(REPO))
    grid = Grid(servings=(R1,), batches=(1, 256, 512), cards=("h200_sxm_141gb", "rtx_3090"))
    best = BestWithin(0.01)
    flags = []
    for segment in sweeper.segments(grid):
        best.add(segment)
        flags += [(r["card"], r["batch"], r["within_max_tpot"]) for r in capped_rows(segment, 0.01)]
    # The RTX 3090 holds no 256 sequences of 4,096 positions: refused rows carry no flag.
    assert [f for f in flags if f[0] == "rtx_3090"][1:] == [("rtx_3090", 256, None), ("rtx_3090", 512, None)]
    capped = best.capped()
    assert capped[f"{R1} on h200_sxm_141gb"][1] == 256  # the last batch within the cap
    point = capped[f"{R1} on h200_sxm_141gb"][0]
    assert point is not None and point[0] == 256 and point[1] == pytest.approx(256 / 8.224e-3, rel=1e-3)
    assert capped[f"{R1} on rtx_3090"][0] is not None and capped[f"{R1} on rtx_3090"][0][0] == 1  # type: ignore[index]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_capped_text_is_the_row_at_a_time_text_byte_for_byte(fmt: str) -> None:
    # Two servings (one drafting 3 tokens), two cards, two positions, batches from 0 (refused Empty) past what fits
    # (refused NotResident): the text made on arrays with two cells added equals the reference made a row at a time.
    sweeper = Sweeper(Root(REPO))
    grid = Grid(servings=(R1, CHAT), batches=(0, 1, 3, 64, 700, 5000, 100000), cards=("h200_sxm_141gb", "rtx_3090"),
                positions=(512.0, 1500.0))
    fast = "".join(capped_chunks(sweeper.segments(grid), fmt, 0.005))
    slow = "".join(reference_chunks(sweeper.segments(grid), fmt, 0.005))
    assert fast == slow
    if fmt == "json":
        rows = json.loads(fast)
        assert len(rows) == 2 * 2 * 2 * 7
        assert {(r["refusal"] is None, r["within_max_tpot"] is None) for r in rows} == {(True, False), (False, True)}
        assert any(r["within_max_tpot"] is True for r in rows) and any(r["within_max_tpot"] is False for r in rows)


def test_a_sweep_of_every_batch_names_the_best_compare_finds_on_each_card() -> None:
    # compare prices the best batch within the cap on each card by the batch search itself (serving.best_serving);
    # a sweep of every batch 1 … 600 finds the same batch at the same tokens/s, by scanning its rows. Without the
    # cap the B200's best is past the grid's end: its last batch, 600 sequences a pass of 10.91 ms (600 / 10.91 ms
    # = 55,000 tokens/s).
    cards = "h200_sxm_141gb,b200"
    compared = invoke("compare", R1, "--cards", cards, "--max-tpot", "0.01", "--json")
    assert compared.exit_code == 0, compared.output
    best = {c["card"]: (c["batch"], c["tokens_per_s"]) for c in json.loads(compared.stdout)["cards"]}
    assert {card: batch for card, (batch, _) in best.items()} == {"b200": 547, "h200_sxm_141gb": 318}
    swept = invoke("sweep", R1, "--cards", cards, "--batches", "1-600", "--max-tpot", "0.01", "--no-lock")
    assert swept.exit_code == 0, swept.output
    said = [line for line in swept.stderr.splitlines() if "within TPOT" in line]
    assert said == [
        f"passprice: {R1} on {card}: best batch within TPOT ≤ 10 ms: {batch}, {rate:,.1f} tokens/s at "
        + ("9.979 ms (without the cap: 580, 33,339.2 tokens/s at 17.4 ms)" if card == "h200_sxm_141gb"
           else "9.996 ms (without the cap: 600 (the largest batch swept), 55,013.3 tokens/s at 10.91 ms)")
        for card, (batch, rate) in sorted(best.items(), key=lambda kv: kv[0] != "h200_sxm_141gb")
    ]
