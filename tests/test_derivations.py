"""Derivations: the formula grammar (and what it refuses), exact arithmetic with units, significant digits, and every
registered derivation recomputing to its fact's value."""

from __future__ import annotations

from fractions import Fraction

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import REPO
from passprice.cards import load_cards
from passprice.derivations import (
    Derivation,
    FormulaError,
    Input,
    Quantity,
    Unit,
    dependants,
    evaluate,
    follows,
    quantity,
    recheck,
    recheck_all,
    significant,
)
from passprice.drafts import load_draft_method
from passprice.errors import InputError
from passprice.facts import UNITS, Fact, Provenance, to_base
from passprice.registry import Root
from passprice.routing import load_routing

ROOT = Root(REPO)


def test_every_fact_unit_parses_to_the_same_multiplier_as_the_loader() -> None:
    # One unit table for facts (facts.UNITS) and the derivation parser agree on every unit a fact may have.
    expected_dims = {
        "bytes": (("B", 1),),
        "bytes/s": (("B", 1), ("s", -1)),
        "MAC/s": (("MAC", 1), ("s", -1)),
        "cycle/s": (("cycle", 1), ("s", -1)),
        "share": (),
        "seconds": (("s", 1),),  # a serving stack's fixed costs (issue 14)
        "rows": (("row", 1),),  # where a serving stack's facts hold (issue 14)
        "positions": (("position", 1),),
    }
    for unit, (dimension, multiplier) in UNITS.items():
        parsed = Unit.parse(unit)
        assert parsed.multiplier == multiplier, unit
        assert parsed.dims == expected_dims[dimension], unit


def test_input_units() -> None:
    assert quantity(3958, "TOPS") == Quantity(Fraction(3958 * 10**12), (("op", 1), ("s", -1)))
    assert quantity(67, "TFLOPS") == Quantity(Fraction(67 * 10**12), (("FLOP", 1), ("s", -1)))
    assert quantity(32, "Gbit/s") == Quantity(Fraction(4 * 10**9), (("B", 1), ("s", -1)))  # a bit is 1/8 byte
    assert quantity(2, "op/MAC") == Quantity(Fraction(2), (("MAC", -1), ("op", 1)))
    assert quantity(1410, "MHz") == Quantity(Fraction(1410 * 10**6), (("cycle", 1), ("s", -1)))
    assert quantity(126.5, "MiB").value == Fraction(253, 2) * 2**20  # 126.5 exactly, not a double
    # Seconds below one are ms, us and ns (a serving stack's fixed costs, issue 14); no other prefix makes seconds.
    assert quantity(82.18, "us").value == Fraction(8218, 10**8) and quantity(1, "ms").dims == (("s", 1),)
    for bad in ("furlongs", "TB/s/s", "KiFLOP", "ks", "Ms", "/s", ""):
        with pytest.raises(InputError, match="unit"):
            Unit.parse(bad)


def env(**values: tuple[float, str]) -> dict[str, Quantity]:
    return {name: quantity(amount, unit) for name, (amount, unit) in values.items()}


def test_exact_arithmetic_with_units() -> None:
    # The H200's streams.read: 4.48 / 4.8 is exactly 14/15 (a double would give 0.9333333333333332...).
    share = evaluate("dot / bandwidth", env(dot=(4.48, "TB/s"), bandwidth=(4.8, "TB/s")))
    assert share == Quantity(Fraction(14, 15), ())
    # INT8 3,958 TOPS with 2:4 sparsity, two operations a multiply-add: 989.5e12 MAC/s, dimension MAC/s.
    array = evaluate("sparse / 2 / ops", env(sparse=(3958, "TOPS"), ops=(2, "op/MAC")))
    assert array == Quantity(Fraction(9895 * 10**11), (("MAC", 1), ("s", -1)))
    # min/max, unary minus, parentheses.
    assert evaluate("min(a, b) - -(a - b)", env(a=(52, "GB/s"), b=(51, "GB/s"))).value == 52 * 10**9
    assert evaluate("max(a, b, 3 * a)", env(a=(1, "1"), b=(2, "1"))).value == 3


@pytest.mark.parametrize(
    ("formula", "says"),
    [
        ("__import__('os').system('true')", "not allowed"),
        ("a.real", "Attribute is not allowed"),
        ("a ** 2", "the operator Pow is not allowed"),
        ("a // b", "the operator FloorDiv is not allowed"),
        ("(lambda: 1)()", "a call other than min"),
        ("abs(a)", "a call other than min"),
        ("min(a)", "a call other than min"),
        ("a if b else a", "IfExp is not allowed"),
        ("[a]", "List is not allowed"),
        ("'text'", "Constant is not allowed"),
        ("a +", "not an expression"),
        ("c * 2", "'c' is not an input (inputs: a, b)"),
        ("a + b", "B/s + 1: adds unlike quantities"),
        ("min(a, b)", "min() of unlike quantities"),
        ("a / (b - b)", "division by zero"),
        ("-" * 250 + "a", "more than 200 terms"),
        ("a + " * 120 + "a", "longer than 400 characters"),
    ],
)
def test_the_grammar_refuses_everything_else(formula: str, says: str) -> None:
    with pytest.raises(FormulaError, match=r".*".join(map(__import__("re").escape, [says]))):
        evaluate(formula, env(a=(4.8, "TB/s"), b=(2, "1")))


def test_significant_digits() -> None:
    assert significant(Fraction(14, 15), 4) == Fraction(9333, 10000)
    assert significant(Fraction(4150, 4800), 4) == Fraction(8646, 10000)  # 0.864583… rounds up
    # The A100's host.stream, 26.28 / 32 = 0.82125 exactly: a tie at 4 digits; 0.8213 (half up) and 0.8212 (half
    # even) both follow, 0.8211 does not. 51/64 = 0.796875 is no tie: 0.7969 follows, 0.7968 does not.
    tie = Fraction(2628, 3200)
    assert follows(Fraction(8213, 10000), tie, 4) and follows(Fraction(8212, 10000), tie, 4)
    assert not follows(Fraction(8211, 10000), tie, 4)
    not_a_tie = Fraction(51, 64)
    assert follows(Fraction(7969, 10000), not_a_tie, 4) and not follows(Fraction(7968, 10000), not_a_tie, 4)
    assert not follows(Fraction(9333, 10000), Fraction(14, 15), None)  # no digits: exact only
    assert follows(Fraction(98950, 100), Fraction(9895, 10), None)


@settings(max_examples=60, deadline=None)
@given(
    st.fractions(min_value=Fraction(1, 10**9), max_value=Fraction(10**12)),
    st.integers(min_value=1, max_value=8),
)
def test_a_rounded_value_follows_its_result(value: Fraction, digits: int) -> None:
    rounded = significant(value, digits)
    assert follows(rounded, value, digits)
    assert abs(rounded - value) <= abs(value) * Fraction(5, 10**digits)


def test_every_registered_derivation_recomputes_to_its_value() -> None:
    for card in load_cards(ROOT):
        assert recheck_all(card.facts()) == [], card.name
        # Every derivation the file writes was read as a formula (none left as free text).
        text = (REPO / "facts" / "cards" / f"{card.name}.toml").read_text(encoding="utf-8")
        derived = sum(1 for f in card.facts().values() if isinstance(f.derivation, Derivation))
        assert derived == text.count("\nderivation.formula = ") > 0, card.name
    for name in ("deepseek-v3-mtp", "qwen35-mtp"):
        method = load_draft_method(ROOT, name)
        assert recheck_all(method.facts()) == [], name
    measured = load_routing(ROOT, "qwen3-30b-a3b-measured")
    assert isinstance(measured.hot_experts.derivation, Derivation)  # 58 / 128 experts, exactly 0.453125
    assert recheck_all({"hot_experts": measured.hot_experts, "hot_share": measured.hot_share}) == []
    # Every derived fact has one.
    for card in load_cards(ROOT):
        for path, fact in card.facts().items():
            if fact.provenance is Provenance.DERIVED:
                assert isinstance(fact.derivation, Derivation), (card.name, path)


def fact(amount: float, unit: str, derivation: Derivation | None = None) -> Fact:
    return Fact(
        to_base(amount, unit), amount, unit, Provenance.MEASURED, source="s", locator="l", derivation=derivation
    )


def share_derivation(dot: float = 4.48, bandwidth: float = 4.8) -> Derivation:
    return Derivation(
        "dot / bandwidth",
        (Input("dot", dot, "TB/s", locator="Dot"), Input("bandwidth", bandwidth, "TB/s", fact="memory.bandwidth")),
        4,
    )


def test_recheck_names_the_input_that_changed() -> None:
    facts = {"memory.bandwidth": fact(4.8, "TB/s"), "streams.read": fact(0.9333, "1", share_derivation())}
    assert recheck("streams.read", facts["streams.read"], facts) is None
    moved = {**facts, "memory.bandwidth": fact(5.2, "TB/s")}
    found = recheck("streams.read", moved["streams.read"], moved)
    assert found is not None and found.kind == "stale" and found.expected == "0.8615"  # 4.48 / 5.2
    assert [(c.name, c.path, c.recorded, c.now) for c in found.changed] == [
        ("bandwidth", "memory.bandwidth", "4.8 TB/s", "5.2 TB/s")
    ]
    assert found.message == (
        "streams.read is stale: its input bandwidth = memory.bandwidth: 4.8 TB/s when derived, 5.2 TB/s now; "
        "recomputed from today's inputs it is 0.8615, not 0.9333"
    )
    # The same bandwidth in other units is no change (4,800 GB/s is 4.8 TB/s).
    same = {**facts, "memory.bandwidth": fact(4800, "GB/s")}
    assert recheck("streams.read", same["streams.read"], same) is None
    # A value edited away from its inputs is a mismatch; a wrong dimension or a missing fact input is broken.
    edited = {**facts, "streams.read": fact(0.95, "1", share_derivation())}
    found = recheck("streams.read", edited["streams.read"], edited)
    assert found is not None and found.kind == "mismatch" and found.expected == "0.9333"
    wrong = attrs.evolve(share_derivation(), formula="dot")
    found = recheck("streams.read", fact(0.9333, "1", wrong), facts)
    assert found is not None and found.kind == "broken" and "gives B/s, but the fact is in 1" in found.message
    found = recheck("streams.read", facts["streams.read"], {"streams.read": facts["streams.read"]})
    assert found is not None and found.kind == "broken" and "names no fact of this record" in found.message
    assert dependants(facts, "memory.bandwidth") == ("streams.read",)
