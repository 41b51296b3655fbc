"""A new user pricing the mixtures of experts people serve on one card, from the README alone (session 34, walk44):
what they hit, kept as tests. Hand-computed figures throughout; the library and CliRunner, no subprocess."""

from __future__ import annotations

import pytest

from cli_helpers import REPO, invoke
from passprice.serving import NotResident


def test_a_batch_past_the_card_says_how_many_sequences_fit_and_a_paged_cache_is_not_told_to_page() -> None:
    """``price qwen3-30b-a3b-h200 --batch 700`` said the bytes (160,029,833,216 of 141e9) and to "page the KV cache
    (--kv-page)" of a serving paged 16 positions a page, never the batch that fits: 605, as max-batch says,
    ⌊(141e9 − 18,550,716,416) / 202,113,024⌋."""
    assert (141_000_000_000 - 18_550_716_416) // 202_113_024 == 605
    result = invoke("price", "qwen3-30b-a3b-h200", "--batch", "700", "--json", root=REPO)
    assert result.exit_code == 1, result.output
    import json

    out = json.loads(result.stdout)
    assert (out["refusal"], out["fits"], out["needed"]) == ("NotResident", 605, 18_550_716_416 + 700 * 202_113_024)
    assert out["message"] == (
        "the card memory must hold 160,029,833,216 bytes but holds 141,000,000,000: at most 605 sequences fit "
        "beside the 18,550,716,416 bytes held once, 202,113,024 bytes a sequence (passprice max-batch): lower the "
        "batch or the context limit, or let sequences use host memory (--host-memory)")
    # a contiguous cache is still told it may page: r1-qwen7b-h200 at 581, one past its 580
    line = invoke("price", "r1-qwen7b-h200", "--batch", "581", root=REPO).stderr
    assert ("at most 580 sequences fit beside the 4,677,120,000 bytes held once, 234,881,024 bytes a sequence "
            "(passprice max-batch): lower the batch or the context limit, page the KV cache (--kv-page)") in line


def test_not_resident_says_one_sequence_in_the_singular_and_nothing_when_the_weights_do_not_fit() -> None:
    one = NotResident(30.0, 25.0, "card", 10.0, per_sequence=10.0)
    assert one.fits == 1 and "at most 1 sequence fits beside the 10 bytes held once" in str(one)
    assert one.fields()["fits"] == 1
    # the weights alone past the card: no batch fits, said as before, no `fits`
    none = NotResident(30.0, 25.0, "card", 26.0, per_sequence=2.0)
    assert none.fits is None and "fits" not in none.fields() and "no batch fits" in str(none)
    # weights that fit with no room for one sequence: none, said so
    zero = NotResident(30.0, 25.0, "card", 20.0, per_sequence=10.0)
    assert str(zero).endswith(": no sequence fits beside the 20 bytes held once, 10 bytes a sequence: lower the "
                              "context limit, page the KV cache (--kv-page), or let sequences use host memory "
                              "(--host-memory)") and zero.fits == 0
    # host memory's refusal counts no room
    assert NotResident(30.0, 25.0, "host").fits is None
    # under a memory use the share's room: ⌊(50 − 10) / 10⌋ = 4
    used = NotResident(60.0, 50.0, "card", 10.0, per_sequence=10.0).under_use(0.5, 100.0)
    assert used.fits == 4 and "(memory use 0.5 of its 100): at most 4 sequences fit" in str(used)
    assert str(used).endswith("let sequences use host memory (--host-memory), or give a larger memory use "
                              "(--memory-use)")


@pytest.mark.parametrize("paged", [False, True])
def test_paged_leaves_out_the_paging_advice_only(paged: bool) -> None:
    e = NotResident(30.0, 25.0, "card", 10.0, per_sequence=10.0)
    said = str(e.paged() if paged else e)
    assert ("page the KV cache (--kv-page)" in said) is not paged
    assert "at most 1 sequence fits" in said and said.endswith("or let sequences use host memory (--host-memory)")


@pytest.mark.parametrize(
    ("word", "term", "says"),
    [
        # audit at batch 1 prints "… reads exactly its 8 experts a layer whatever the routing (D(1) = k)"
        ("D(1)", "routing", "D(1) = k: one token-row reads exactly its k experts"),
        ("D(T)", "routing", "reads D(T) = Σ_e 1 − (1 − p_e)^T experts a layer"),
        ("experts a layer", "routing", "`N of E experts a layer`"),
        # diff prints "1 price moved unreviewed" and "price moved, lock not updated (weight_bytes)"
        ("unreviewed", "price moved", "(`1 price moved unreviewed`)"),
        ("lock not updated", "price moved", "`price moved, lock not updated (FIGURE)`"),
        # diff prints "1 derived fact not following" and "does not follow: hot_experts: …"
        ("not following", "derivation", "does not follow (`not following`"),
        ("does not follow", "derivation", "write the value the formula gives"),
        # synth prints "gpt-oss, MXFP4_MOE: 687 tensors …"
        ("MXFP4_MOE", "MXFP4", "the experts MXFP4, the other matrices Q8_0"),
        # price prints "bytes/pass 3.594 GB of weights …" while a MoE pass reads its routed experts' only
        ("weight_bytes", "bytes/pass", "a pass reads the weights of the experts its rows route to"),
    ],
)
def test_the_words_a_moe_walk_printed_are_defined(word: str, term: str, says: str) -> None:
    """``passprice explain D(1)``, ``unreviewed``, ``lock not updated``, ``not following``, ``MXFP4_MOE`` and
    ``experts a layer`` were "not a term passprice defines", each printed by audit, diff, synth or price."""
    from passprice.glossary import lookup, text

    found = lookup(word)
    assert found.name == term and says in " ".join(text(found).split())


def test_weights_past_the_card_say_how_many_times_and_that_host_memory_holds_no_weights() -> None:
    """DeepSeek-V3 Q4_K_M (403,516,178,432 bytes held once without its MTP block) on the 192 GB MI300X: refused the
    same with ``--host-memory``, which a user reads as offloading experts; it holds sequences only. 403.5 / 192 =
    2.10 times the card."""
    assert round(403_516_178_432 / 192e9, 2) == 2.10
    result = invoke("price", "deepseek-v3-mi300x", "--host-memory", root=REPO)
    assert result.exit_code == 1
    assert result.stderr == (
        "passprice: refused: NotResident: the card memory must hold 403,516,178,432 bytes but holds 192,000,000,000: "
        "the weights and embedding table alone take 403,516,178,432 bytes (without the 7,510,819,840-byte draft "
        "(MTP) block, held only when drafting with it), 2.1 times what it holds: no batch fits; a smaller type mix "
        "or a larger card (--host-memory holds sequences in host memory, never weights: passprice prices no weights "
        "held off the card)\n")


def test_a_routing_record_of_another_router_names_the_records_that_fit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``price … --routing bad16`` of an 8-expert Mixtral said "bad16 describes a router of 16 experts, the
    checkpoint has 8" and stopped; now it names the records registered for 8 experts, as ``Routed`` does (the
    refused record left out). Here: a 64-expert record on gpt-oss-20b (32 experts, 4 a token)."""
    import json

    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    uniform = (root / "facts/routing/uniform.toml").read_text(encoding="utf-8")
    (root / "facts/routing/wide.toml").write_text(
        uniform.replace("[routing]\n", "[routing]\nexperts = 64\nused = 4\n"), encoding="utf-8")
    result = invoke("price", "gpt-oss-20b-h200", "--routing", "wide", "--json", root=root)
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert (out["refusal"], out["expert_count"], out["records"]) == (
        "BadRouting", 32, ["uniform (assumed; any checkpoint)"])
    assert result.stderr == (
        "passprice: refused: BadRouting: routing wide does not fit this checkpoint: wide describes a router of 64 "
        "experts, the checkpoint has 32; registered here for 32 experts, 4 a token: uniform (assumed; any "
        "checkpoint)\n")
    # a dense checkpoint's BadRouting names no records (there is no router to fit)
    dense = invoke("price", "r1-qwen7b-h200", "--routing", "uniform", "--json", root=root)
    assert "records" not in json.loads(dense.stdout) and "expert_count" not in json.loads(dense.stdout)


def test_uniform_routing_at_one_token_row_says_hot_share_moves_nothing_either() -> None:
    """``audit gpt-oss-20b-h200 --batch 1`` read `refused` for routing.hot_share (uniform's 1, a share's bound,
    refused 1 % either way) and explained D(1) = k of routing.hot_experts alone, as if hot_share could move a
    batch-1 price: 4 experts a token, 4 read whatever the routing."""
    result = invoke("audit", "gpt-oss-20b-h200", "--batch", "1", root=REPO)
    assert result.exit_code == 0, result.output
    assert ("  routing.hot_experts +0.000: 1 token-row a pass reads exactly its 4 experts a layer whatever the routing "
            "(D(1) = k)") in result.stdout
    assert ("  routing.hot_share: refused both ways, but at 1 token-row a pass no routing fact moves this price "
            "either (D(1) = k: its 4 experts a layer whatever the routing)\n") in result.stdout
    # at the serving's own batch (32) the skew moves the price: no such line
    assert "refused both ways" not in invoke("audit", "gpt-oss-20b-h200", root=REPO).stdout
