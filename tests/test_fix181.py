"""What a capacity planner new to passprice found (README only, ``pip install .``, an ``init --examples`` registry):
each case rebuilt here, with the exit status and the exact lines (or ``--json`` keys) the command gives now."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from cli_helpers import REPO, invoke

R1 = "r1-qwen7b-h200"


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


# --- 1. sweep --limit, as best and compare take it ---------------------------------------------------------------


def test_1_sweep_takes_limit_as_price_does() -> None:
    """``sweep --limit 8192`` was ``No such option '--limit'``: each row is now the serving at that limit, its mean
    position the limit's half (as ``price --limit 8192``), and each row's ``limit`` cell says it."""
    swept = invoke("sweep", R1, "--batches", "1,2", "--limit", "8192", "--no-lock")
    assert swept.exit_code == 0, swept.output
    rows = _rows(swept.stdout)
    assert [(r["position"], r["limit"], r["batch"], r["refusal"]) for r in rows] == [
        ("4096", "8192", "1", ""), ("4096", "8192", "2", "")
    ]
    priced = invoke("price", R1, "--limit", "8192", "--batch", "2", "--json", "--no-lock")
    assert priced.exit_code == 0, priced.output
    assert float(rows[1]["tokens_per_s"]) == json.loads(priced.stdout)["tokens_per_s"]
    # in JSON, at each of --positions: a position at the limit refused as price refuses it
    swept = invoke("sweep", R1, "--batches", "1", "--limit", "8192", "--positions", "100,8192", "--json", "--no-lock")
    assert swept.exit_code == 0, swept.output
    assert [(r["position"], r["limit"], r["refusal"]) for r in json.loads(swept.stdout)] == [
        (100, 8192, None), (8192, 8192, "BadContexts")
    ]


def test_1_sweep_limit_is_validated_as_best_validates_it() -> None:
    for args in (("sweep", R1, "--limit", "0"), ("best", R1, "--limit", "0")):
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr == (f"passprice: error: Invalid value for '--limit': 0 is out of range (a whole number "
                                 f"from 1 to 4,294,967,295) (see 'cli {args[0]} --help')\n")  # CliRunner's program name
    # past the checkpoint's context: the row refused as best refuses it, and the summary says price's message
    result = invoke("sweep", R1, "--batches", "1", "--limit", "1000000", "--no-lock")
    assert result.exit_code == 1, result.output
    assert _rows(result.stdout)[0]["refusal"] == "ContextBeyondModel"
    assert result.stderr.splitlines()[-1] == (
        "passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and at "
        "every larger one: ContextBeyondModel (1 line) — r1-qwen7b-h200 on h200_sxm_141gb at position 500000, batch "
        "1: context limit 1000000 is past the checkpoint's context length 131072: lower --limit; the rows and their "
        "refusals were written")
    # a sweep file describes the whole grid: --limit beside it is refused, as --positions is
    result = invoke("sweep", "--file", str(REPO / "examples" / "grid.toml"), "--limit", "8192")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("passprice: error: --file describes the whole grid, and a sweep file takes no "
                                    "--limit: sweep the file's servings on the command line with --limit (sweep "
                                    "SERVINGS --limit …)")


def test_1_a_locked_serving_swept_at_another_limit_is_not_the_locked_one() -> None:
    result = invoke("sweep", R1, "--batches", "1", "--limit", "8192")
    assert result.exit_code == 0, result.output
    said = result.stderr.splitlines()
    assert said[0].endswith("floors hold, but the prices shown are NOT the locked ones (below)")
    assert said[1].strip() == (
        "serving differs from the locked one: contexts: share 1.0, position 2048.0, limit 4096 → share 1.0, position "
        "4096.0, limit 8192; its rows at limit 8192 are not the locked serving's (limit 4096)")
    same = invoke("sweep", R1, "--batches", "1", "--limit", "4096")
    assert "the serving is the locked one" in same.stderr and "limit" not in same.stderr


# --- 2. a refused sweep's summary says each refusal's message --------------------------------------------------------


def test_2_the_capped_summary_says_a_refusals_message_once_a_kind() -> None:
    result = invoke("sweep", R1, "--positions", "100,5000,6000", "--batches", "1-8", "--max-tpot", "0.05",
                    "--no-lock")
    assert result.exit_code == 0, result.output
    said = result.stderr.splitlines()
    assert said[1] == (
        "passprice: r1-qwen7b-h200 on h200_sxm_141gb, position 5000: no batch within TPOT ≤ 50 ms: every batch is "
        "refused: BadContexts (8 batches) — at batch 1: bad context mix: position 5000 is not below its limit 4096: a "
        "pass at a position writes that position's row, and a sequence allowed 4096 positions holds rows 0 to 4095: "
        "raise --limit or lower --positions")
    assert said[2] == ("passprice: r1-qwen7b-h200 on h200_sxm_141gb, position 6000: no batch within TPOT ≤ 50 ms: "
                       "every batch is refused: BadContexts (8 batches)")  # the kind's message said once


def test_2_nothing_priced_says_one_message_a_kind() -> None:
    result = invoke("sweep", "deepseek-v3-h200", "--cards", "h100_sxm5_80gb", "--batches", "1-3", "--positions",
                    "100,9000")
    assert result.exit_code == 1, result.output
    line = result.stderr.splitlines()[-1]
    assert line.startswith(
        "passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and at "
        "every larger one: NotResident (1 line) — deepseek-v3-h200 on h100_sxm5_80gb at position 100, batch 1: the "
        "card memory must hold ")
    assert ("; BadContexts (1 line) — deepseek-v3-h200 on h100_sxm5_80gb at position 9000, batch 1: bad context mix: "
            "position 9000 is not below its limit 4096: ") in line
    assert line.endswith("raise --limit or lower --positions; the rows and their refusals were written")


# --- 4. a sweep's batches are 1 and up, as price's --batch -----------------------------------------------------------


def test_4_batch_0_is_out_of_range_in_a_sweep_as_in_price() -> None:
    price = invoke("price", R1, "--batch", "0")
    assert price.exit_code == 2
    assert "'--batch': 0 is out of range (a whole number from 1 to 4,294,967,295)" in price.stderr
    for batches in ("0", "0-10", "3,0"):
        result = invoke("sweep", R1, "--batches", batches)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr == (f"passprice: error: --batches: '{batches.split(',')[-1]}': 0 is out of range (a "
                                 "whole number from 1 to 4,294,967,295)\n")


def test_4_a_sweep_files_batch_0_is_refused(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(f'servings = ["{R1}"]\nbatches = [0, 1]\n', encoding="utf-8")
    result = invoke("sweep", "--file", str(grid))
    assert result.exit_code == 2, result.output
    assert result.stderr == f"passprice: error: {grid}: batches.0: 0 is less than the minimum of 1\n"


# --- 3. simulate says a serving's max_tpot is not enforced, and how many requests exceed it --------------------------


def _capped_serving(tmp_path: Path, cap: str) -> Path:
    text = (REPO / "registry" / "servings" / f"{R1}.toml").read_text(encoding="utf-8")
    serving = tmp_path / "capped.toml"
    serving.write_text(text.replace("host_memory = false\n", f"host_memory = false\nmax_tpot = {cap}\n"),
                       encoding="utf-8")
    return serving


def test_3_simulate_says_the_cap_is_not_enforced_and_counts_the_requests_over_it(tmp_path: Path) -> None:
    serving = str(_capped_serving(tmp_path, "0.01"))
    args = ("simulate", serving, "--synthetic", "300", "--seed", "7", "--rate", "200")
    done = invoke(*args, "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["setup"]["max_tpot_s"], data["setup"]["max_tpot_enforced"], data["setup"]["max_batch"]) == (
        0.01, False, 256)
    for policy, over in (("static", 146), ("continuous", 190)):
        records = data["policies"][policy]["records"]
        # counted again from the records' own TPOTs
        assert sum(1 for r in records if r["tpot_s"] is not None and r["tpot_s"] > 0.01) == over
        assert data["policies"][policy]["requests_over_max_tpot"] == over
    text = invoke(*args)
    assert text.exit_code == 0, text.output
    assert ("  TPOT cap    the serving's max_tpot 10 ms is not enforced: admission takes up to 256 sequences "
            "(--max-batch) while memory holds them; requests whose TPOT is above it: static 146 of 300, continuous "
            "190 of 300 (`passprice best` finds the best batch within it: --max-batch that batch bounds the decode "
            "steps, but a step that also carries a prompt's chunk (--chunk, 2,048 rows) takes longer, so give a "
            "smaller --chunk too)") in text.stdout.splitlines()  # tests/test_fix184.py: it said --max-batch alone
    # a serving without a cap: no line, no key
    plain = invoke("simulate", R1, "--synthetic", "30", "--seed", "7", "--json")
    assert "max_tpot_s" not in json.loads(plain.stdout)["setup"]
    assert "requests_over_max_tpot" not in json.loads(plain.stdout)["policies"]["static"]


# --- 6. price and best --json hold tpot_s, as compare --json does ----------------------------------------------------


def test_6_price_and_best_json_hold_tpot_s() -> None:
    price = invoke("price", "qwen35-27b-h200-mtp", "--json")
    assert price.exit_code == 0, price.output
    data = json.loads(price.stdout)
    keys = list(data)
    assert keys[keys.index("tokens_per_s") + 1] == "tpot_s"
    # 10.921 ms a pass over 2.4875 tokens emitted a sequence (two drafts): 4.391 ms, the text's TPOT
    assert data["tpot_s"] == data["pass_s"] / data["emitted_per_sequence"]
    assert data["emitted_per_sequence"] == 2.4875 and round(data["tpot_s"] * 1e3, 3) == 4.391
    assert "(TPOT 4.391 ms per sequence)" in invoke("price", "qwen35-27b-h200-mtp").stdout
    best = json.loads(invoke("best", R1, "--json").stdout)
    assert best["tpot_s"] == best["pass_s"]  # no drafts: one token a pass
    stacked = json.loads(invoke("best", R1, "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert stacked["expected"]["tpot_s"] == stacked["expected"]["pass_s"]


# --- 5. the uncapped best at the grid's edge is said to be the largest batch swept ------------------------------------


def test_5_an_uncapped_best_at_the_grids_edge_is_said_so() -> None:
    edge = invoke("sweep", R1, "--batches", "1-512", "--max-tpot", "0.01", "--no-lock")
    assert edge.exit_code == 0, edge.output
    assert edge.stderr.splitlines()[0] == (
        "passprice: r1-qwen7b-h200 on h200_sxm_141gb: best batch within TPOT ≤ 10 ms: 318, 31,866.8 tokens/s at "
        "9.979 ms (without the cap: 512 (the largest batch swept), 33,092.7 tokens/s at 15.47 ms)")
    # past the 580 that fit (max-batch), the uncapped best is the card's, said without the words
    inside = invoke("sweep", R1, "--batches", "1-1024", "--max-tpot", "0.01", "--no-lock")
    assert inside.stderr.splitlines()[0] == (
        "passprice: r1-qwen7b-h200 on h200_sxm_141gb: best batch within TPOT ≤ 10 ms: 318, 31,866.8 tokens/s at "
        "9.979 ms (without the cap: 580, 33,339.2 tokens/s at 17.4 ms)")


# --- 7. why sequences are in host memory while card memory shows room -------------------------------------------------

QWEN_MOE = "qwen3-30b-a3b-h200"


def test_7_host_memory_under_a_memory_use_cap_says_the_cap() -> None:
    """At 8K contexts on an H100 with --memory-use 0.8, best holds 2 sequences in host memory at 79.7 % of the card:
    the cap (64 GB of 80 GB) is full, 264 MB left for a 403.4 MB sequence. The line said nothing of it."""
    done = invoke("best", QWEN_MOE, "--card", "h100_sxm5_80gb", "--host-memory", "--limit", "8192", "--memory-use",
                  "0.8", "--no-lock")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert ("  batch 114 sequences (2 of them in host memory); each carries 1 token-row through a pass and emits 1 "
            "token") in lines
    assert "  held          63.74 GB of 80 GB card memory (79.7 %)" in lines
    assert ("  host why      2 sequences in host memory: the memory-use cap, 80 % of card memory (64 GB of 80 GB: the "
            "serving's memory_use or --memory-use) holds no more (264 MB left, 403.4 MB a sequence); the price now "
            "rests on host.* facts (its weakest may be host.capacity): --no-host-memory keeps every sequence in card "
            "memory") in lines


def test_7_a_host_sequence_beside_room_is_the_faster_split() -> None:
    done = invoke("price", QWEN_MOE, "--card", "h100_sxm5_80gb", "--host-memory", "--batch", "20", "--no-lock")
    assert done.exit_code == 0, done.output
    assert ("  host why      1 sequence in host memory though card memory has room for 285 more: the pass is faster "
            "so, the host link reading its KV cache beside card memory's stream (memory and host terms overlap); the "
            "price now rests on host.* facts (its weakest may be host.capacity): --no-host-memory keeps every "
            "sequence in card memory") in done.stdout.splitlines()
    # the same batch with every sequence in card memory is slower: the split is the faster one
    split = json.loads(invoke("price", QWEN_MOE, "--card", "h100_sxm5_80gb", "--host-memory", "--batch", "20",
                              "--no-lock", "--json").stdout)
    card = json.loads(invoke("price", QWEN_MOE, "--card", "h100_sxm5_80gb", "--batch", "20", "--no-lock",
                             "--json").stdout)
    assert split["host_sequences"] == 1 and card["host_sequences"] == 0
    assert split["pass_s"] < card["pass_s"]


# --- 8. one reading of --cards for compare, sweep and kv -------------------------------------------------------------


def test_8_every_command_reads_cards_alike() -> None:
    commands = (("compare", R1), ("sweep", R1, "--batches", "1", "--no-lock"),
                ("kv", "deepseek-r1-distill-qwen-7b-q4_k_m"))
    for cards, said in (
        ("b200,b200", "--cards: 'b200' is given more than once: each card is priced once"),
        ("b200,,mi300x", "--cards: 'b200,,mi300x' holds an empty name between commas (give names, comma-separated, "
                         "or 'all')"),
        ("all,b200", "--cards: 'all' is every card, not a name beside others: give 'all' alone, or names, "
                     "comma-separated"),
        (",", "--cards: no cards (give names, comma-separated, or 'all')"),
    ):
        for command in commands:
            result = invoke(*command, "--cards", cards)
            assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"passprice: error: {said}\n"), command
    # what they take is unchanged: names, and ' all '
    assert invoke("compare", R1, "--cards", "b200, mi300x").exit_code == 0
    assert invoke("kv", "deepseek-r1-distill-qwen-7b-q4_k_m", "--cards", " all ").exit_code == 0


# --- 9. an unknown option names the commands that take it -----------------------------------------------------------


def test_9_an_option_of_other_commands_names_them() -> None:
    for args, said in (
        (("best", R1, "--format", "markdown"),
         "No such option '--format'. (--format is an option of audit, diff and sweep, not of "
         "best) (see 'cli best --help')"),
        (("price", R1, "--cards", "all"),
         "No such option '--cards'. Did you mean '--card'? (--cards is an option of compare, sweep and kv, not of "
         "price) (see 'cli price --help')"),
        (("fact", "show", "x", "--unit", "s"),
         "No such option '--unit'. (--unit is an option of fact set, not of fact show) (see 'cli fact show --help')"),
        (("best", R1, "--nonsense"), "No such option '--nonsense'. (see 'cli best --help')"),  # no command takes it
    ):
        result = invoke(*args)
        assert (result.exit_code, result.stderr) == (2, f"passprice: error: {said}\n"), args


# --- 10. compare's headroom hint is best's ---------------------------------------------------------------------------


def test_10_compare_and_best_give_one_headroom_hint() -> None:
    hint = ("leave room (seek the best batch within a share of card memory with `--memory-use 0.9`, price a smaller "
            "batch with `passprice price … --batch N`, or give a smaller --limit)")
    best = invoke("best", "qwen3-30b-a3b-h200", "--card", "h100_sxm5_80gb", "--no-lock")
    assert hint in best.stdout
    for extra in ((), ("--max-tpot", "0.05")):
        compared = invoke("compare", "qwen3-30b-a3b-h200", "--cards", "h100_sxm5_80gb,h200_sxm_141gb", *extra)
        assert compared.exit_code == 0, compared.output
        [line] = [x for x in compared.stdout.splitlines() if x.startswith("  headroom")]
        assert hint in line and "or --max-tpot" not in line


# --- 11. audit --json says the batch audited -----------------------------------------------------------------------


def test_11_audit_json_has_its_batch() -> None:
    data = json.loads(invoke("audit", R1, "--batch", "167", "--json").stdout)
    assert list(data)[:3] == ["title", "batch", "tokens_per_s"]
    assert data["batch"] == 167
    assert data["by_hand"].startswith("tokens/s = batch × emitted_per_sequence / pass time = 167 × 1 / ")
    assert json.loads(invoke("audit", R1, "--json").stdout)["batch"] == 1  # the serving's own
