"""``passprice compare``: one serving's best batch on each card (session 9's walkthrough: "no command compares cards
for one serving"; a newcomer looped ``best --card X --json``)."""

from __future__ import annotations

import json

import attrs

from cli_helpers import invoke
from passprice.compare import compare_cards
from passprice.registry import find_root
from passprice.serving import best_serving
from passprice.servings import load_spec, resolve

R1 = "r1-qwen7b-h200"


def test_each_row_is_the_best_batch_best_prices_on_that_card_fastest_first() -> None:
    root = find_root(None)
    spec = load_spec(root, R1)
    rows = compare_cards(root, spec, ["rtx_3080", "h200_sxm_141gb", "b200", "h200_sxm_141gb"])
    assert [r.card for r in rows] == ["b200", "h200_sxm_141gb", "rtx_3080"]  # fastest first, a repeat once
    for row in rows:
        resolved = resolve(root, attrs.evolve(spec, card=row.card))
        alone = best_serving(resolved.header, resolved.card, resolved.serving)
        assert row.cost is not None and (row.cost.batch, row.cost.tokens_per_s) == (alone.batch, alone.tokens_per_s)
    h200 = rows[1].cost
    assert h200 is not None and h200.batch == 580 and round(h200.tokens_per_s, 1) == 33339.2  # as `best` prints


def test_the_table_the_tpot_cap_and_the_lock_line() -> None:
    out = invoke("compare", R1, "--cards", "h200_sxm_141gb,rtx_3080", "--max-tpot", "0.01")
    assert out.exit_code == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"best batch on each card, fastest first: {R1}: deepseek-r1-distill-qwen-7b-q4_k_m"
    assert lines[1].startswith("  contexts at mean position 2048 of a 4,096 limit")
    assert lines[1].endswith("· TPOT cap 10 ms on the best batch")
    h200 = next(line for line in lines if line.startswith("h200_sxm_141gb"))
    assert h200.split()[:5] == ["h200_sxm_141gb", "318", "31,866.8", "9.979", "ms"]  # the capped best, as best's
    assert lines[-1] == (
        "  lock          none: a comparison across cards is a what-if (the serving's locks, r1-qwen7b-h200, "
        f"r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, lock h200_sxm_141gb; `passprice best {R1}` prices it under "
        "them)"
    )


def test_the_lock_line_names_only_locks_there_are_and_a_checkpoint_alone_shows_its_contexts() -> None:
    """Walkthrough 11: `compare qwen35-27b-h200-chat` spoke of "the serving's locks" of a serving with none, and
    `compare --checkpoint C` showed a blank where the contexts go."""
    chat = invoke("compare", "qwen35-27b-h200-chat", "--cards", "h200_sxm_141gb")
    assert chat.stdout.splitlines()[-1] == (
        "  lock          none: a comparison across cards is a what-if (no lock of qwen35-27b-h200-chat in locks/)"
    )
    alone = invoke("compare", "--checkpoint", "gemma3-270m-q4_k_m", "--cards", "b200", "--json")
    assert json.loads(alone.stdout)["lock"] == "none: a comparison across cards is a what-if"
    text = invoke("compare", "--checkpoint", "gemma3-270m-q4_k_m", "--cards", "b200").stdout.splitlines()
    assert text[1].startswith("  contexts at mean position ")


def test_refused_cards_are_rows_and_nothing_priced_is_a_refusal() -> None:
    out = invoke("compare", "deepseek-v3-h200", "--cards", "h200_sxm_141gb,b200")
    assert out.exit_code == 1
    assert out.stderr.startswith(
        "passprice: refused: no card of the 2 compared prices it: NotResident: the card memory must hold "
        "411,173,846,016 bytes but holds 141,000,000,000"
    )
    assert out.stderr.rstrip().endswith("(on h200_sxm_141gb; the others likewise)")
    routed = invoke("compare", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--cards", "h200_sxm_141gb", "--limit",
                    "1024", "--position", "512", "--json")
    data = json.loads(routed.stdout)  # a mixture of experts given by checkpoint alone names no routing record
    assert routed.exit_code == 1 and data["cards"][0]["refusal"] == "Routed" and data["own_card"] is None
    # ... unless no routing record makes it fit (walk48): DeepSeek-V3's 403.5 GB of weights on a 141 GB card.
    unfit = invoke("compare", "--checkpoint", "deepseek-v3-q4_k_m", "--cards", "h200_sxm_141gb", "--limit", "1024",
                   "--position", "512", "--json")
    assert unfit.exit_code == 1 and json.loads(unfit.stdout)["cards"][0]["refusal"] == "NotResident"


def test_bad_cards_are_the_options_errors() -> None:
    out = invoke("compare", R1, "--cards", "nope")
    assert out.exit_code == 2 and out.stderr.startswith("passprice: error: --cards: card 'nope': not found in ")
    out = invoke("compare", R1, "--card", "h200_sxm_141gb")
    assert out.exit_code == 2 and "give the cards with --cards" in out.stderr
    out = invoke("compare")
    assert out.exit_code == 2 and "give a SERVING, or --checkpoint" in out.stderr
