"""Findings of the thirty-second README-only walkthrough (an ML engineer choosing between an H100 and an H200 for
serving a mixture of experts, Qwen3-30B-A3B, and a dense hybrid drafting with its MTP block, at 4,096 positions of
context), each kept as a reproducer: an option the command was given (``--max-tpot``, ``--limit``) read as
"drifted since the lock", a word the output prints (``token-slots``) and one the README opens with (``Q4_K_M``,
``GGUF``) that ``explain`` did not know, no word on where a program finds TPOT in ``--json``, ``compare``'s
headroom line writing ``95%`` where every other line writes ``95 %``, and the audit of a serving read as the audit
of its best batch."""

from __future__ import annotations

import json
import math

import pytest

from cli_helpers import bad, invoke
from test_slip_43 import PAD, lock_lines

QWEN3_LOCK = "locks/qwen3-30b-a3b-h200.lock.toml"
MTP_LOCK = "locks/qwen35-27b-h200-mtp.lock.toml"
R1_LOCKS = ("under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
            "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml)")


def test_a_tpot_cap_given_to_best_is_an_option_not_a_drift_since_the_lock() -> None:
    # Before: "...compares its own); drifted since the lock (below)" and
    # "drifted since the lock: serving.max_tpot: (none) → 0.02", a change the command made, not one since the lock.
    result = invoke("best", "qwen3-30b-a3b-h200", "--max-tpot", "0.02")
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          under lock qwen3-30b-a3b-h200 ({QWEN3_LOCK}): floors hold; qwen3-30b-a3b-h200 is no best "
        "lock to compare the price with (`passprice reproduce qwen3-30b-a3b-h200` compares its own); the serving "
        "priced differs from the locked one (below)",
        f"{PAD}serving differs from the locked one: max_tpot: (none) → 0.02",
    ]
    lock = json.loads(invoke("best", "qwen3-30b-a3b-h200", "--max-tpot", "0.02", "--json").stdout)["lock"]
    assert lock == {"locks": ["qwen3-30b-a3b-h200"], "note": None, "moved": [], "relabelled": [], "drifted": [],
                    "serving": ["max_tpot: (none) → 0.02"]}
    # Unchanged: the key is absent when no option changed the serving.
    assert "serving" not in json.loads(invoke("best", "qwen3-30b-a3b-h200", "--json").stdout)["lock"]


def test_a_context_limit_given_to_best_is_an_option_not_a_drift_since_the_lock() -> None:
    # The dense hybrid drafting 2 tokens, at the persona's 4,096 positions (its serving holds 32,768).
    result = invoke("best", "qwen35-27b-h200-mtp", "--limit", "4096")
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          under lock qwen35-27b-h200-mtp ({MTP_LOCK}): floors hold; qwen35-27b-h200-mtp is no best "
        "lock to compare the price with (`passprice reproduce qwen35-27b-h200-mtp` compares its own); the serving "
        "priced differs from the locked one (below)",
        f"{PAD}serving differs from the locked one: contexts: share 1.0, position 16384.0, limit 32768 → share 1.0, "
        "position 2048.0, limit 4096",
    ]
    # TPOT is the pass over the tokens a sequence emits: 1 + a1 + a1·a2 = 1 + 0.85 + 0.85 × 0.75 = 2.4875.
    data = json.loads(invoke("best", "qwen35-27b-h200-mtp", "--limit", "4096", "--json").stdout)
    assert data["batch"] == 165 and data["emitted_per_sequence"] == 1 + 0.85 + 0.85 * 0.75
    assert math.isclose(data["tokens_per_s"], 165 * 2.4875 / data["pass_s"], rel_tol=1e-12)
    assert f"{data['pass_s'] / 2.4875 * 1e3:.2f}" == "14.15"
    assert "  tokens/s      11,660.8  (TPOT 14.15 ms per sequence)" in result.stdout.splitlines()


def test_an_option_on_a_price_its_lock_still_records_is_said_as_a_serving_difference() -> None:
    # A TPOT cap does not move a price at a given batch: the price is the locked one, the serving is not.
    result = invoke("price", "r1-qwen7b-h200", "--max-tpot", "0.01")
    assert result.exit_code == 0, result.output
    assert lock_lines(result.stdout) == [
        f"  lock          {R1_LOCKS}: floors hold, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp "
        "record; the serving priced differs from the locked one (below)",
        f"{PAD}serving differs from the locked one: r1-qwen7b-h200: max_tpot: (none) → 0.01",
        f"{PAD}serving differs from the locked one: r1-qwen7b-h200-best: max_tpot: (none) → 0.01",
        f"{PAD}serving differs from the locked one: r1-qwen7b-h200-llamacpp: max_tpot: (none) → 0.01",
    ]
    # Where a best lock records another price the moved lines say it, as before (the README's tour line).
    best = invoke("best", "r1-qwen7b-h200", "--max-tpot", "0.01")
    assert lock_lines(best.stdout)[1:] == [
        f"{PAD}recorded 33,339.2 tokens/s at batch 580 by lock r1-qwen7b-h200-best; today 31,866.8 tokens/s at "
        "batch 318 (-4.42 %, first moved: batch) — not the locked price",
        f"{PAD}serving differs from the locked one: max_tpot: (none) → 0.01",
    ]


def test_the_mixture_of_experts_best_batch_on_the_h100_by_hand() -> None:
    data = json.loads(invoke("best", "qwen3-30b-a3b-h200", "--card", "h100_sxm5_80gb", "--json").stdout)
    assert data["batch"] == 304 and data["sequence_bytes"] == 201_424_896
    routing = data["routing"]
    # Qwen3-30B-A3B's record: 58 of 128 experts take 90 % of the slots, 8 a token: p = 8 × 0.9 / 58 for each hot
    # expert, 8 × 0.1 / 70 for the rest; 304 token-rows read 58 (1 − (1 − p_hot)^304) + 70 (1 − (1 − p_cold)^304).
    distinct = 58 * (1 - (1 - 8 * 0.9 / 58) ** 304) + 70 * (1 - (1 - 8 * 0.1 / 70) ** 304)
    assert f"{distinct:.3f}" == "125.874" and math.isclose(routing["distinct"], distinct, rel_tol=1e-9)
    assert math.isclose(routing["bytes"], distinct / 128 * 17_553_162_240, rel_tol=1e-9)
    # The weights read once (822,874,112 B outside the routed experts, plus those experts' expected bytes) at
    # 3.35 TB/s × 0.9493 (BabelStream Dot), each sequence's 201,424,896 B at 3.35 TB/s × 0.8866 (Triad):
    # 18.08 GB / 3.180 TB/s + 304 × 201.4 MB / 2.970 TB/s = 5.687 ms + 20.62 ms = 26.30 ms; 304 / 26.30 ms.
    weights = 822_874_112 + distinct / 128 * 17_553_162_240
    assert math.isclose(data["weight_bytes"], weights, rel_tol=1e-9)
    memory_s = weights / (3.35e12 * 0.9493) + 304 * 201_424_896 / (3.35e12 * 0.8866)
    assert math.isclose(data["pass_s"], memory_s, rel_tol=1e-9) and data["binds"] == "memory"
    assert f"{304 / memory_s:,.1f}" == "11,557.6" and math.isclose(data["tokens_per_s"], 304 / memory_s, rel_tol=1e-9)


def test_compare_writes_its_headroom_share_as_every_other_line_does() -> None:
    result = invoke("compare", "qwen3-30b-a3b-h200", "--cards", "h100_sxm5_80gb,h200_sxm_141gb")
    assert result.exit_code == 0, result.output
    assert ("  headroom      the best batch holds over 95 % of card memory on 2 of 2 cards: passprice counts no "
            "runtime workspace, activations or fragmentation, so leave room (seek the best batch within a share of "
            "card memory with `--memory-use 0.9`, price a smaller batch with `passprice price … --batch N`, or give a "
            "smaller --limit) before serving one of these") in result.stdout.splitlines()  # best's hint (fix181)
    assert "95%" not in result.stdout


def test_explain_knows_the_words_the_moe_price_and_the_readme_open_with() -> None:
    # "takes 90 % of the routed token-slots" (every MoE price's routing line); "Q4_K_M", "GGUF header" (README's
    # first paragraphs). Before: "'token-slots' is not a term passprice defines; did you mean token-row, tokens/s?".
    slots = invoke("explain", "token-slots")
    assert slots.exit_code == 0, slots.output
    assert slots.stdout.startswith("routing: how a mixture of experts' tokens route: a routing record's facts")
    assert "(a token fills k slots a layer, one for each expert it uses;" in slots.stdout
    for word in ("Q4_K_M", "GGUF", "gguf header"):
        said = invoke("explain", word)
        assert said.exit_code == 0, said.output
        assert said.stdout.startswith("GGUF: llama.cpp's checkpoint file format; passprice reads its header, never "
                                      "its weights"), word
    tpot = invoke("explain", "TPOT").stdout
    # (since test_fix181.py price and best --json hold it: tpot_s)
    assert ("`tpot_s` (in `price`, `best`, `compare` and `sweep --max-tpot` JSON) is TPOT in seconds: `pass_s` / "
            "`emitted_per_sequence`") in tpot


def test_the_audit_of_a_serving_is_of_its_own_batch_and_of_best_s_with_batch() -> None:
    # README's tour: "elasticities (at the serving's batch, 1: --batch 580 audits best's)".
    own = invoke("audit", "r1-qwen7b-h200").stdout.splitlines()
    assert own[1] == ("  996.1 tokens/s at batch 1, binds on memory; weakest provenance estimated (scale, "
                      "on_chip.capacity)")
    best = invoke("audit", "r1-qwen7b-h200", "--batch", "580").stdout.splitlines()
    assert best[1] == ("  33,339.2 tokens/s at batch 580, binds on memory; weakest provenance estimated (scale, "
                       "on_chip.capacity)")
    # At the MoE's best batch almost every expert is read: its routing figures barely move the price.
    # At the MoE's own batch, 64, routing.hot_share moves tokens/s 1.156 % a 1 %; at its best batch, 605, where
    # 127.9 of 128 experts are read whatever the skew, 0.005 %: the audit of the serving is not the best batch's.
    def elasticities(*batch: str) -> dict[str, str]:
        out = json.loads(invoke("audit", "qwen3-30b-a3b-h200", *batch, "--format", "json").stdout)
        return {f["path"]: f"{f['elasticity']:+.3f}" for f in out["facts"] if f["path"].startswith("routing.")}

    assert elasticities() == {"routing.hot_experts": "-0.238", "routing.hot_share": "+1.156"}
    assert elasticities("--batch", "605") == {"routing.hot_experts": "-0.000", "routing.hot_share": "+0.005"}


def test_a_context_option_tried_by_its_usual_name_says_which_options_set_it() -> None:
    # Before: "passprice: error: No such option '--context'. (see 'passprice best --help')" and no more.
    for command, word in (("best", "--context"), ("compare", "--max-model-len"), ("price", "--seq-len")):
        lines = bad(command, "qwen3-30b-a3b-h200", word, "4096")  # in-process the program is named "cli"
        assert [line.replace("(see 'cli ", "(see 'passprice ") for line in lines] == [
            f"passprice: error: no such option {word}: a sequence's context is --limit N (the positions it is "
            "allowed) and --position P (the mean position reached; limit / 2 by default) (see 'passprice "
            f"{command} --help')"
        ]
    # kv has no --limit (its --contexts lists them): click's own suggestion stands.
    assert bad("kv", "gemma3-270m-q4_k_m", "--context", "4k")[0].startswith(
        "passprice: error: No such option '--context'. Did you mean '--contexts'? (see '")



def test_the_readme_counts_the_tests_it_runs(request: pytest.FixtureRequest) -> None:
    # `python -m pytest --collect-only -q` collected 4,033 (session 27) where the README said "about 3,900"; session
    # 28 collected 4,212 under "about 4,000" and this test, pinning the text, failed only once the README was right.
    # Now: the README's "about N tests" is within 5 % of what this run collected, judged when the run collects the
    # whole suite (CI runs `python -m pytest` over tests/; each xdist worker collects every test).
    import re

    from cli_helpers import REPO

    text = (REPO / "README.md").read_text(encoding="utf-8")
    said = re.search(r"history tests read the checkout's git history; about ([0-9,]+) tests, spread over", text)
    assert said is not None
    stated = int(said.group(1).replace(",", ""))
    collected = len(request.session.items)
    if collected < 3_000:
        pytest.skip(f"a narrow run ({collected} tests collected): the README counts the whole suite")
    assert abs(stated - collected) <= 0.05 * collected, (stated, collected)


