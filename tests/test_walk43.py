"""Walkthrough 43 (issue 13, a new user from the README alone): every key a price's ``--json`` and a sweep's rows
print is a word ``passprice explain`` defines (``first moved: rows_per_sequence`` was printed in a price's lock line
with no entry), and a name of the wrong kind says what to give instead (the serving's checkpoint or card, the
servings of a checkpoint or card, the card first for ``roofline``)."""

from __future__ import annotations

import json
import re

import pytest

from cli_helpers import REPO, bad, invoke
from passprice import glossary, sidecode, sweep
from passprice.registry import find_root
from passprice.roofline import require_card_first
from passprice.trace import Synthetic, synthetic


def _keys(o: object, names: bool = False) -> set[str]:
    """Every key of the JSON document ``o``, at any depth; the keys of ``sources`` and of a derivation's ``inputs``
    are names (a source's, an input's), not words of passprice's."""
    if isinstance(o, dict):
        return (set() if names else set(o)).union(
            *(_keys(v, names=k in ("sources", "inputs") and not names) for k, v in o.items()))
    if isinstance(o, list):
        return set().union(*(_keys(v) for v in o))
    return set()


def test_every_price_json_key_and_sweep_column_is_explained() -> None:
    """Nested keys too (keys57: `audit --json`'s `card_facts.unread`, a review's `sources_changed` and 143 more
    nested keys of other commands said "not a term")."""
    result = invoke("price", "qwen3-30b-a3b-h200", "--json")
    assert result.exit_code == 0, result.output
    printed = _keys(json.loads(result.stdout))
    keys = printed | sidecode.PRICE_NUMBERS | sidecode.PRICE_TEXTS | set(sweep.COLUMNS) | set(sweep.STACK_COLUMNS)
    for key in sorted(keys - {"description", "used", "tokens"}):  # the routing object's plain words
        glossary.lookup(key)  # raises InputError naming the key when it is not defined


@pytest.mark.parametrize(
    ("word", "term", "says"),
    [
        ("rows_per_sequence", "token-row", "`rows_per_sequence` is the rows each sequence carries a pass"),
        ("host_sequences", "host", "`host_sequences` the sequences of the batch held in host memory"),
        ("rewrite_bytes", "bytes/pass", "`rewrite_bytes` (of those, rewritten in place)"),
        ("capacity_bytes", "held", "`capacity_bytes` the card's memory (`memory.capacity`)"),
        ("held once", "held", "*held once* (the weights and embedding table)"),
        ("card_room", "held", "the seed's `card_room`: ⌊(memory − held once) / held per sequence⌋"),
        ("on_chip_capacity", "on chip", "`on_chip_capacity` the card's"),
        ("scale_cycles", "scale", "`scale_cycles` is the pass's lane cycles"),
        ("experts_held_bytes", "routing", "`experts_held_bytes` (all routed experts' bytes)"),
        ("expected_tokens_per_s", "stack", "`expected_tokens_per_s`"),
        # keys57: nested --json keys of sources, diff, check, reproduce, validate and audit --source
        ("strongest", "provenance", "`sources --json`'s `strongest` is the strongest provenance"),
        ("head_check_left_out", "review", "`head_check`, `head_unreadable` and `head_warnings` (what `check` fails on"),
        ("relative_change", "changed", "`relative_change` (new / old − 1 of its value"),
        ("verdict_before", "floors hold", "(`verdict_before` on BASE)"),
        ("facts_rewritten", "reproduces exactly", "`facts_rewritten` (the same quantity written otherwise: no drift)"),
        ("limit_ratio", "limit/meas", "`validate --json` gives each run's `limit_ratio`"),
        ("offences_withdrawn", "withdrawn", "`offences_withdrawn` (each fact then below its floor"),
        ("in_sample_max", "fitted", "`in_sample_mean` and `in_sample_max` of |error|"),
        ("resting_on_unsound", "derivation", "the locks resting on them (`resting_on_unsound`)"),
    ],
)
def test_a_json_key_explains_to_the_entry_that_defines_it(word: str, term: str, says: str) -> None:
    result = invoke("explain", word)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{term}: ")
    assert says in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # kv CHECKPOINT given the serving: its checkpoint named.
        (("kv", "r1-qwen7b-h200"), "r1-qwen7b-h200 is a registered serving, not a checkpoint (its checkpoint is "
                                   "deepseek-r1-distill-qwen-7b-q4_k_m: give that)"),
        (("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "gemma3-270m-h100"),
         "gemma3-270m-h100 is a registered serving, not a card (its card is h100_sxm5_80gb: give that)"),
        # A checkpoint or a card where a serving belongs: the servings of it, and the options without one.
        (("audit", "gemma3-270m-q4_k_m"), "gemma3-270m-q4_k_m is a registered checkpoint, not a serving (give a "
                                          "serving of it, gemma3-270m-h100, or price it with --checkpoint "
                                          "gemma3-270m-q4_k_m --card CARD)"),
        (("best", "llama2-7b-f16"), "llama2-7b-f16 is a registered checkpoint, not a serving (price it with "
                                    "--checkpoint llama2-7b-f16 --card CARD)"),
        (("best", "mi300x"), "mi300x is a registered card, not a serving (give a serving of it, deepseek-v3-mi300x, "
                             "gpt-oss-20b-mi300x, qwen3-30b-a3b-mi300x, qwen3next-80b-a3b-mi300x, "
                             "r1-qwen7b-mi300x-int8kv, or price it with --card mi300x --checkpoint CHECKPOINT)"),
        # roofline CARD [SERVING] given the serving first, or alone: the command with the card first.
        (("roofline", "r1-qwen7b-h200", "h200_sxm_141gb"),
         "roofline takes CARD [SERVING], the card first: r1-qwen7b-h200 is a registered serving, not a card; run "
         "`passprice roofline h200_sxm_141gb r1-qwen7b-h200`"),
        (("roofline", "gemma3-270m-h100"), "run `passprice roofline h100_sxm5_80gb gemma3-270m-h100`"),
        # speculate without a serving: the options given name no drafting method, not the checkpoint as a serving.
        (("speculate", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "h100_sxm5_80gb", "--tokens", "1..2"),
         "passprice: error: --checkpoint gemma3-270m-q4_k_m --card h100_sxm5_80gb names no drafting method: give "
         "--draft METHOD"),
    ],
)
def test_a_name_of_another_kind_says_what_to_give(args: tuple[str, ...], says: str) -> None:
    lines = bad(*args, says=says)
    assert len(lines) == 1, lines


def test_roofline_with_the_card_first_is_not_refused() -> None:
    root = find_root(REPO)
    require_card_first(root, "h200_sxm_141gb", "r1-qwen7b-h200")  # the order the README shows
    require_card_first(root, "h200_sxm_141gb", None)  # a card alone: its ridges
    require_card_first(root, "no-such-card", None)  # not a serving: the loader says it is not found


@pytest.mark.parametrize(
    ("prefix", "says"),
    [
        (0, "20 prompts (to at most 8 tokens, half the limit, leaving the rest for the output)"),
        (6, "20 prompts (to at most 5 tokens, half the 10 the shared prefix leaves, leaving the rest for the output)"),
    ],
)
def test_a_synthetic_trace_says_why_its_prompts_were_cut_where_they_were(prefix: int, says: str) -> None:
    """A prompt keeps at most half its room (the limit less a shared prefix), its output the rest: the summary said
    "to at most 2,048 tokens" under a 4,096 limit without saying why 2,048."""
    trace = synthetic(Synthetic(requests=20, seed=7, prompt_median=1000.0, prefix=prefix), 16)
    assert says in trace.source
    assert all(r.prompt - r.prefix <= (16 - prefix) // 2 for r in trace.requests)


def test_every_word_the_readme_sends_to_explain_is_defined() -> None:
    """The README's opening promises `passprice explain WORD` for "token-row, KV cache, floor, binds, drift, the seed
    …": "the seed" was not found (only "seed" was); each `passprice explain X` it shows must answer too."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"`passprice explain WORD` prints its entry \(([^)]*)\)", readme)
    assert listed is not None
    words = [w.strip() for w in listed[1].replace("…", "").split(",") if w.strip()]
    assert "the seed" in words
    shown = set(re.findall(r"`passprice explain ([^`\s]+)`", readme)) - {"WORD", "TERM"}
    for word in [*words, *sorted(shown)]:
        glossary.lookup(word)


@pytest.mark.parametrize(
    "args",
    [
        ("kv", "deepseek-r1-distill-qwen-7b-q4_k_m", "--json"),
        ("speculate", "qwen35-27b-h200-mtp", "--json", "--no-lock"),
        ("compare", "r1-qwen7b-h200", "--json"),
        ("max-batch", "r1-qwen7b-h200", "--json", "--no-lock"),
        ("simulate", "r1-qwen7b-h200", "--synthetic", "4", "--json", "--no-lock"),
        ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--json", "--no-lock"),
        ("audit", "r1-qwen7b-h200", "--json"),
        # keys57: cards' weakest_with_host_link, checkpoints' draft_tensor_bytes said "not a term"
        ("cards", "--json"),
        ("checkpoints", "--json"),
    ],
)
def test_every_json_key_of_other_commands_is_explained(args: tuple[str, ...]) -> None:
    """Issue 13 (left36): `kv --json`'s 25 keys, `simulate`'s 39, `roofline`'s 18, `audit`'s 19, `speculate`'s 7 and
    `compare`'s 4 said "not a term". The keys of `sources` and of a derivation's `inputs` are names (a source's, an
    input's), not words of passprice's."""
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    for key in sorted(_keys(json.loads(result.stdout))):
        glossary.lookup(key)  # raises InputError naming the key when it is not defined


def test_no_alias_names_two_terms() -> None:
    # "tensor cores", "today's inputs" and "rewritten in place" each named two terms; lookup took the first.
    seen: dict[str, str] = {}
    for term in glossary._TERMS:
        for name in {glossary._key(n) for n in (term.name, *term.aliases)}:
            assert seen.setdefault(name, term.name) == term.name, (name, seen[name], term.name)
