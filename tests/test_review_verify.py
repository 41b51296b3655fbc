"""What a review asks its reviewer to verify in the source (the newcomer's walkthrough, session 7): a provenance made
stronger, or a value moved under an unchanged citation, got a green review with nothing to prompt a look at the
source. passprice cannot read the source; it says what to check there."""

from __future__ import annotations

from passprice.facts import Fact
from passprice.review import FactChange

LOCATOR = "Technical Specifications table, H200 SXM column: 'GPU Memory Bandwidth 4.8TB/s'"


def _fact(amount: float, unit: str, provenance: str, locator: str = LOCATOR, **more: object) -> Fact:
    return Fact.from_entry(
        {"value": amount, "unit": unit, "provenance": provenance, "source": "nvidia-h200-datasheet",
         "locator": locator, **more},
        "card.toml: memory.bandwidth",
    )


def test_a_value_moved_under_a_locator_quoting_the_old_figure() -> None:
    c = FactChange("memory.bandwidth", "memory.bandwidth", _fact(4.8, "TB/s", "published"),
                   _fact(5.2, "TB/s", "published"))
    assert c.to_verify == (
        "the value moved (4.8 TB/s → 5.2 TB/s) but its citation did not, and the locator quotes 4.8: "
        f"nvidia-h200-datasheet: {LOCATOR}"
    )
    assert c.to_json()["to_verify"] == c.to_verify


def test_a_value_moved_under_an_unchanged_locator_that_quotes_nothing() -> None:
    c = FactChange("memory.bandwidth", "memory.bandwidth", _fact(4.8, "TB/s", "published", "Table 1"),
                   _fact(5.2, "TB/s", "published", "Table 1"))
    assert c.to_verify == ("the value moved (4.8 TB/s → 5.2 TB/s) but its citation did not: does "
                           "nvidia-h200-datasheet: Table 1 say 5.2 TB/s?")


def test_a_stronger_provenance_asks_whether_the_source_states_it() -> None:
    c = FactChange("scale", "scale", _fact(33.5, "Tcycle/s", "estimated", "Table 3"),
                   _fact(33.5, "Tcycle/s", "published", "Technical Specifications table"))
    assert c.strengthened
    assert c.to_verify == ("the provenance is stronger (estimated → published): does nvidia-h200-datasheet: "
                           "Technical Specifications table state 33.5 Tcycle/s, published?")


def test_nothing_to_verify() -> None:
    old = _fact(4.8, "TB/s", "published")
    # The value moved and the locator moved with it: the new locator is a claim a reviewer still checks.
    moved = _fact(5.2, "TB/s", "published", "Technical Specifications table: 'GPU Memory Bandwidth 5.2TB/s'")
    assert FactChange("memory.bandwidth", "memory.bandwidth", old, moved).to_verify == (
        "the citation changed: does nvidia-h200-datasheet: Technical Specifications table: 'GPU Memory Bandwidth "
        "5.2TB/s' state 5.2 TB/s, published?"
    )
    # A weaker provenance is flagged as weaker (and judged by the locks' floors), not as something to verify.
    weaker = _fact(4.8, "TB/s", "estimated")
    assert FactChange("memory.bandwidth", "memory.bandwidth", old, weaker).to_verify is None
    # Added and removed facts: their whole citation is shown as new or gone.
    assert FactChange("memory.bandwidth", "memory.bandwidth", None, old).to_verify is None
    assert FactChange("memory.bandwidth", "memory.bandwidth", old, None).to_verify is None
    # A derived fact's value follows from its inputs (check recomputes it), whatever its locator quotes.
    derived = {"formula": "dot / bandwidth", "inputs": {
        "dot": {"value": 4.48, "unit": "TB/s", "locator": "Dot"},
        "bandwidth": {"value": 4.8, "unit": "TB/s", "locator": "B"}}}
    share = _fact(0.9333, "1", "measured", "Dot 4.48 TB/s", derivation=derived)
    assert FactChange("streams.read", "streams.read", share, _fact(
        0.8615, "1", "measured", "Dot 4.48 TB/s", derivation=derived)).to_verify is None


def test_a_published_figure_cited_anew_asks_whether_the_new_place_states_it() -> None:
    # The newcomer re-cited the H100's datasheet bandwidth to a benchmark repository, locator "somewhere": green.
    old = _fact(3.35, "TB/s", "published")
    moved = Fact.from_entry({"value": 3.35, "unit": "TB/s", "provenance": "published", "source": "xytpai-nvbench",
                             "locator": "somewhere"}, "card.toml: memory.bandwidth")
    c = FactChange("memory.bandwidth", "memory.bandwidth", old, moved)
    assert c.to_verify == "the citation changed: does xytpai-nvbench: somewhere state 3.35 TB/s, published?"
    # An estimate cited anew is the estimate's own reasoning: nothing for the source to confirm.
    guess = _fact(3.0, "TB/s", "estimated", "engineering estimate: 0.9 x the datasheet")
    assert FactChange("memory.bandwidth", "memory.bandwidth", _fact(3.0, "TB/s", "estimated", "older estimate"),
                      guess).to_verify is None
