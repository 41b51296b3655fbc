"""Walkthrough 55 (a new user's afternoon on mixtures of experts and serving stacks): the review lines it found
false or missing, each pinned on the library function that writes it (no git, no registry copy)."""

from __future__ import annotations

import attrs

from passprice.addedfacts import percents_of
from passprice.derivations import Finding, RunDerivation, RunInput
from passprice.facts import Fact
from passprice.review import FactChange, LockImpact, PriceSide
from passprice.review.changes import _description_names_old, run_change
from passprice.servings import ServingSpec

_ERRORS = {"in_sample_mean": 0.0555, "in_sample_max": 0.1801, "card_out_mean": 0.069, "card_out_max": 0.2045,
           "checkpoint_out_mean": 0.1264, "checkpoint_out_max": 0.4981}  # llamacpp-cuda-2405's, as shipped


def _fit(value: float, errors: dict[str, float]) -> RunDerivation:
    runs = (RunInput("xd3.h100_pcie_80gb.8b-q4km.tg512", value), RunInput("xd3.h100_pcie_80gb.8b-q4km.tg1024", 144.49))
    return RunDerivation(method="nnls-relative-pass-time", figure="tokens_per_s", runs=runs, digits=4,
                         tolerance=0.001, errors=errors)


def test_a_refit_names_each_error_group_it_moved() -> None:
    """One run corrected 145.55 → 154.55 and llamacpp-cuda-2405 re-fitted (the errors `calibrate` wrote): the
    checkpoint-held-out mean did not move, so its max was printed as a bare `max 49.8 % → 50 %` after the card's
    pair, read as a second card-held-out max; and 0.1801 → 0.1799 read `max 18 % → 18 %`, a move said as none."""
    after = {"in_sample_mean": 0.0549, "in_sample_max": 0.1799, "card_out_mean": 0.0683, "card_out_max": 0.2007,
             "checkpoint_out_mean": 0.1264, "checkpoint_out_max": 0.4999}
    text = run_change(_fit(145.55, _ERRORS), _fit(154.55, after))
    assert text == (
        "the same 2 measured runs (each run's tokens/s); changed xd3.h100_pcie_80gb.8b-q4km.tg512 = 145.55 → 154.55 "
        "(+6.183 %); the fit's |error| of tokens/s: in sample mean 5.55 % → 5.49 %, max 18.01 % → 17.99 %, "
        "card held out mean 6.9 % → 6.83 %, max 20.4 % → 20.1 %, checkpoint held out max 49.8 % → 50 %"
    )
    # 9 / 145.55 = 6.1834 %: the run's move, by hand
    assert f"{100 * (154.55 - 145.55) / 145.55:.4g}" == "6.183"


def _share(value: float, locator: str) -> Fact:
    return Fact.from_entry({"value": value, "unit": "1", "provenance": "measured", "source": "s", "locator": locator},
                           "facts/routing/r.toml: hot_share")


def test_a_ratio_moved_under_a_locator_quoting_it_as_a_percentage_is_told_so() -> None:
    """Qwen3-30B-A3B's routing record's hot_share moved 0.9 → 0.85 under its unchanged locator, which quotes 90 %:
    the review asked softly ("does … say 0.85?"), where 58/128 under hot_experts 0.453125 → 0.5078125 is said
    firmly; README: "more firmly when the locator quotes the old one"."""
    locator = "the definition of hot_frac_for_coverage: the fraction of a layer's experts that capture 90% of its"
    change = FactChange("hot_share", "routing.hot_share", _share(0.9, locator), _share(0.85, locator))
    assert change.to_verify == ("the value moved (0.9 → 0.85) but its citation did not, and the locator quotes 90% "
                                f"(0.9): s: {locator}")
    # a range quoting the new figure too (85-90%) asks softly, as before
    ranged = FactChange("hot_share", "routing.hot_share", _share(0.9, "85-90%"), _share(0.85, "85-90%"))
    assert ranged.to_verify == "the value moved (0.9 → 0.85) but its citation did not: does s: 85-90% say 0.85?"
    assert percents_of("capture ninety percent; 58/128 (45%)") == {0.9: "90%", 0.45: "45%"}


def _lock_on(*stale: str) -> LockImpact:
    side = PriceSide()
    return LockImpact("r1-qwen7b-h200-llamacpp", "locks/r1-qwen7b-h200-llamacpp.lock.toml", "h200_sxm_141gb", "price",
                      "r1-qwen7b-h200", "unchanged", ("memory.bandwidth",), side, side, None, None,
                      unsound=tuple(Finding(path, "stale", f"{path} is stale") for path in stale))


def test_an_expected_price_on_stale_card_facts_is_not_said_on_stale_stack_facts() -> None:
    """The H200's bandwidth moved 4.8 → 4.89 TB/s, its stream shares left stale: the lock made under
    llamacpp-cuda-2405 (fitted on 11 other cards, so its fit still follows) read `expected tokens/s 237.4 → 238.5
    (+0.4498 %) … ❌ (on stale stack facts)`; the stale facts are the card's."""
    card = _lock_on("streams.read", "streams.append")
    assert (card.unsound_expected, card.unsound_limit, card.unsound_kind) == (True, True, "facts")
    stack = _lock_on("stack.share.read", "streams.read")
    assert (stack.unsound_expected, stack.unsound_kind) == (True, "stack facts")


def test_a_serving_re_pointed_under_a_description_naming_the_old_record_is_asked() -> None:
    """qwen3-30b-a3b-h200 re-pointed to a new routing record (65 of 128 experts hot) kept its description, which
    names facts/routing/qwen3-30b-a3b-measured.toml and its 58 of 128: the review's Servings line said only the
    routing move. The description is a claim the lock pins (serving.description) and `servings` prints."""
    said = ("routing as measured on a narrow workload (a hot set of 58 of 128 experts takes 90 % of the routed "
            "token-slots, facts/routing/qwen3-30b-a3b-measured.toml)")
    old = ServingSpec(checkpoint="qwen3-30b-a3b-q4_k_m", card="h200_sxm_141gb", batch=64, description=said,
                      routing="qwen3-30b-a3b-measured")
    new = attrs.evolve(old, routing="qwen3-30b-a3b-diverse")
    assert _description_names_old(old, new) == (
        "description unchanged, still naming the old routing record qwen3-30b-a3b-measured: is it true of this "
        "serving? (to verify; a lock pins it as serving.description)",)
    assert _description_names_old(old, attrs.evolve(new, description=said.replace("measured.", "diverse."))) == ()
    assert _description_names_old(old, attrs.evolve(old, batch=8)) == ()  # the record kept
    # a name inside another word is not the name: card h200 moved, the description naming h200_sxm_141gb only
    card = attrs.evolve(old, card="h200", description="on h200_sxm_141gb")
    assert _description_names_old(card, attrs.evolve(card, card="mi300x")) == ()


def test_a_refit_of_the_same_runs_says_why_it_may_move() -> None:
    """The RTX 4090's bandwidth 1008 → 1010 GB/s, its shares recomputed, llamacpp-cuda-2405 re-fitted: every fitted
    fact's derivation read "no run added, removed or changed" beside errors that moved, nothing saying why."""
    moved = dict(_ERRORS, card_out_mean=0.0694)
    text = run_change(_fit(145.55, _ERRORS), _fit(145.55, moved))
    assert text == (
        "the same 2 measured runs (each run's tokens/s); no run added, removed or changed (a fit of the same runs "
        "moves with the card, checkpoint or routing facts they are priced with, or was edited by hand: HEAD's "
        "passprice check re-fits it); the fit's |error| of tokens/s: card held out mean 6.9 % → 6.94 %"
    )
