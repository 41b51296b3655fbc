"""A derivation is arithmetic on exact numbers, bounded: every literal, input and intermediate result lies within
10^±300 (so nothing overflows or underflows a float later), every failure is one line naming the file and the key,
and ``fact set`` checks the whole new entry (schema, sources, its derivation recomputed, the result's dimension, a
cycle) before it writes anything, reporting every problem of the edit together. Reproducers of the attacker's
findings 1, 3 and 4 and the minor ones on derivations (fullwidth names, cycles) and source ids."""

from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from passprice.derivations import (
    Derivation,
    FormulaError,
    Input,
    Quantity,
    cycle_through,
    evaluate,
    recheck,
    recheck_all,
    significant,
)
from passprice.facts import Fact, Provenance, to_base

CARD = "h200_sxm_141gb"
SHARE = 'derivation.formula = "dot / bandwidth"\n'


@pytest.mark.parametrize(
    ("formula", "says"),
    [
        ("dot * 1e200 * 1e200", "the result of dot * 1e+200 * 1e+200 is 4.48e412 in base units, out of the range"),
        ("dot / 1e300 / 1e300", "the result of dot / 1e+300 / 1e+300 is 4.48e-588 in base units, out of the range"),
        ("1" + "0" * 398, "the number an integer of 399 digits is 1e398 in base units, out of the range"),
        ("dot * 1e-400", "the number 0.0 "),  # a literal that underflows to 0.0 is 0: no error, shown below
        ("ｄｏｔ / 2", "'ｄ' (U+FF44) is not ASCII"),  # Python would fold the fullwidth name to dot (NFKC)
    ],
)
def test_the_evaluator_bounds_every_number(formula: str, says: str) -> None:
    env = {"dot": Quantity(Fraction(448, 100) * 10**12, (("B", 1), ("s", -1)))}
    if formula == "dot * 1e-400":
        assert evaluate(formula, env).value == 0  # 1e-400 is the double 0.0, as Python reads the literal
        return
    with pytest.raises(FormulaError) as raised:
        evaluate(formula, env)
    assert says in str(raised.value)


def test_an_input_out_of_range_is_named() -> None:
    tiny = Quantity(Fraction(5, 10**312))
    with pytest.raises(FormulaError, match=r"^the input dot is 5e-312 in base units, out of the range"):
        evaluate("dot / 2", {"dot": tiny})
    # Exact digits stay exact within the range: 10^300 and 10^-300 are fine, and so is their product.
    assert evaluate("a * b", {"a": Quantity(Fraction(10**300)), "b": Quantity(Fraction(1, 10**300))}).value == 1


def test_significant_digits_of_a_huge_or_tiny_value_need_no_float() -> None:
    # Rounding reads the exponent off exact bit lengths: 10^400 and 10^-400 (past a double's range) round exactly.
    assert significant(Fraction(10**400 + 10**396), 3) == Fraction(10**400)
    assert significant(Fraction(123456, 10**405), 2) == Fraction(12, 10**401)  # 1.23456e-400 to 1.2e-400


def fact(amount: float, unit: str, derivation: Derivation | None = None) -> Fact:
    return Fact(to_base(amount, unit), amount, unit, Provenance.DERIVED, source="s", locator="l", derivation=derivation)


def test_recheck_maps_an_overflowing_derivation_to_one_broken_finding() -> None:
    derivation = Derivation(
        "dot / bandwidth * 1e200 * 1e200",
        (Input("dot", 4.48, "TB/s", locator="Dot"), Input("bandwidth", 4.8, "TB/s", fact="memory.bandwidth")),
        4,
    )
    facts = {"memory.bandwidth": fact(4.8, "TB/s"), "streams.read": fact(0.9, "1", derivation)}
    found = recheck("streams.read", facts["streams.read"], facts)
    assert found is not None and found.kind == "broken"
    assert found.message == (
        "streams.read.derivation.formula: the result of dot / bandwidth * 1e+200 * 1e+200 is 9.33e399 in base "
        "units, out of the range passprice computes with (10^-300 to 10^300)"
    )


def test_a_cycle_of_derivations_is_broken() -> None:
    one = Derivation("x", (Input("x", 0.8, "1", fact="streams.rewrite"),))
    other = Derivation("x", (Input("x", 0.8, "1", fact="streams.read"),))
    facts = {"streams.read": fact(0.8, "1", one), "streams.rewrite": fact(0.8, "1", other)}
    assert cycle_through(facts, "streams.read") == ("streams.read", "streams.rewrite", "streams.read")
    found = recheck_all(facts)
    assert [(f.path, f.kind) for f in found] == [("streams.read", "broken"), ("streams.rewrite", "broken")]
    assert "a cycle of derivations: streams.read -> streams.rewrite -> streams.read" in found[0].message


def test_a_cycle_whose_facts_are_stale_is_named_as_a_cycle() -> None:
    """Round 9: read ↔ rewrite recording inputs that moved were reported as two stale facts ('recompute them'),
    which `fact recompute` then refused as a cycle; check now names the cycle."""
    one = Derivation("x", (Input("x", 0.7, "1", fact="streams.rewrite"),))  # recorded 0.7; streams.rewrite is 0.8
    other = Derivation("x", (Input("x", 0.8, "1", fact="streams.read"),))
    facts = {"streams.read": fact(0.8, "1", one), "streams.rewrite": fact(0.8, "1", other)}
    assert recheck("streams.read", facts["streams.read"], facts).kind == "stale"  # type: ignore[union-attr]
    found = recheck_all(facts)
    assert [(f.path, f.kind) for f in found] == [("streams.read", "broken"), ("streams.rewrite", "broken")]
    assert found[0].message == (
        "streams.read.derivation: a cycle of derivations: streams.read -> streams.rewrite -> streams.read (a fact "
        "cannot derive from itself: derive one of them from its source)"
    )


def edit_card(root: Path, old: str, new: str) -> Path:
    card = root / "facts" / "cards" / f"{CARD}.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count(old) == 1
    card.write_text(text.replace(old, new), encoding="utf-8")
    return card


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (SHARE, 'derivation.formula = "dot / bandwidth * 1e200 * 1e200"\n',
         "streams.read.derivation.formula: the result of dot / bandwidth * 1e+200 * 1e+200 is 9.33e399"),
        ('derivation.inputs.dot = { value = 4.48, unit = "TB/s"',
         'derivation.inputs.dot = { value = 5e-324, unit = "TB/s"',
         "streams.read.derivation.formula: the input dot is 5e-312 in base units, out of the range"),
        (SHARE, 'derivation.formula = "' + "1" * 380 + ' * dot / bandwidth"\n',
         "streams.read.derivation.formula: the number an integer of 380 digits is 1.11e379"),
    ],
)  # fmt: skip
def test_check_reports_an_out_of_range_derivation_in_one_line(tmp_path: Path, old: str, new: str, says: str) -> None:
    root = copy_root(tmp_path)
    edit_card(root, old, new)
    result = invoke("check", root=root)
    assert result.exit_code == 2  # a broken derivation is a bad file: on stderr, exit 2 (issue 13, round 5)
    lines = [line for line in result.stderr.splitlines() if "streams.read.derivation" in line]
    assert len(lines) == 1 and f"passprice: error: facts/cards/{CARD}.toml: {says}" in lines[0], result.output


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)  # fmt: skip


def test_diff_reports_an_out_of_range_derivation_without_a_traceback(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    edit_card(root, SHARE, 'derivation.formula = "dot / bandwidth * 1e200 * 1e200"\n')
    result = invoke("diff", "--format", "json", root=root)
    assert result.exit_code == 2, result.output  # a broken derivation is a bad file, in diff as in check
    assert "out of the range passprice computes with" in result.stdout
    assert "Traceback" not in result.output


FACT_SET = ("fact", "set", CARD, "streams.read", "--value", "0.9", "--unit", "1", "--provenance", "derived",
            "--source", "azure-ai-benchmarking-guide", "--locator", "Dot over bandwidth")  # fmt: skip


@pytest.mark.parametrize(
    ("derivation", "says"),
    [
        # Finding 1: an overflowing result is refused before the file is written.
        ('{formula = "dot / bandwidth * 1e200 * 1e200", digits = 4, inputs = {dot = {value = 4.48, unit = "TB/s", '
         'locator = "Dot"}, bandwidth = {fact = "memory.bandwidth"}}}',
         "streams.read.derivation.formula: the result of dot / bandwidth * 1e+200 * 1e+200 is 9.33e399"),
        # Finding 3: a derivation argument of the wrong shape, a huge integer, nesting past the parser.
        ('{formula = "x", inputs = [1]}', "streams.read.derivation.inputs: [1] is not of type 'object'"),
        ('{formula = "x", inputs = "abc"}', "streams.read.derivation.inputs: 'abc' is not of type 'object'"),
        ('{formula = "x", digits = 1' + "0" * 5000 + ", inputs = {}}",
         "--derivation: not a TOML inline table (Exceeds the limit (4300 digits) for integer string conversion: "
         "value has 5001 digits): write {formula = "),
        ('{formula = "x", inputs = ' + "{a = " * 3000 + "1" + "}" * 3000 + "}",
         "--derivation: not a TOML inline table (arrays or tables nested too deeply): write {formula = "),
        # Finding 4: a formula that does not parse, a result in the wrong dimension, a value that does not follow.
        ('{formula = "nope(", inputs = {dot = {value = 1, unit = "1", constant = "one"}}}',
         "streams.read.derivation.formula: not an expression: '(' was never closed"),
        ('{formula = "dot", inputs = {dot = {fact = "memory.bandwidth"}}, digits = 4}',
         "streams.read.derivation: its formula gives B/s, but the fact is in 1"),
        ('{formula = "dot / bandwidth", digits = 4, inputs = {dot = {value = 4.48, unit = "TB/s", locator = "Dot"}, '
         'bandwidth = {fact = "memory.bandwidth"}}}',
         "streams.read: 0.9 does not follow from its derivation: dot / bandwidth gives 0.9333"),
        # An input recorded with another value than its fact has today: the new entry would be stale at once.
        ('{formula = "dot / bandwidth", digits = 4, inputs = {dot = {value = 4.32, unit = "TB/s", locator = "Dot"}, '
         'bandwidth = {fact = "memory.bandwidth", value = 4.7, unit = "TB/s"}}}',
         "bandwidth = memory.bandwidth: 4.7 TB/s when derived, 4.8 TB/s now"),
        # A derivation from a fact derived from this one.
        ('{formula = "x", inputs = {x = {fact = "streams.append"}}}', "a cycle of derivations"),
    ],
)  # fmt: skip
def test_fact_set_refuses_a_bad_derivation_before_writing(tmp_path: Path, derivation: str, says: str) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    if "cycle" in says:  # streams.append derived from streams.read, which the edit derives from streams.append
        card = edit_card(
            root,
            'derivation.inputs.triad = { value = 4.15, unit = "TB/s"',
            'derivation.inputs.read = { fact = "streams.read", value = 0.9333, unit = "1" }\n'
            'derivation.inputs.triad = { value = 4.15, unit = "TB/s"',
        )
    before = card.read_bytes()
    lines = bad(*FACT_SET, "--derivation", derivation, root=root)
    assert any(says in line for line in lines), lines
    assert card.read_bytes() == before
    assert not [p.name for p in card.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_fact_set_reports_every_problem_of_the_edit_together(tmp_path: Path) -> None:
    # A locator too short used to hide the unknown source, and both the broken formula.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / f"{CARD}.toml"
    before = card.read_bytes()
    lines = bad(
        "fact", "set", CARD, "streams.read", "--value", "0.9", "--unit", "1", "--provenance", "derived",
        "--source", "no-such-source", "--locator", "x",
        "--derivation", '{formula = "nope(", inputs = {one = {value = 1, unit = "1", constant = "one"}}}',
        root=root,
    )  # fmt: skip
    file = f"{root}/facts/cards/{CARD}.toml"
    ids = sorted(p.stem for p in (root / "sources").glob("*.toml"))
    count = len(ids)
    # no id is close to no-such-source: none named (walk95; leftovers 28c: not all 36)
    assert lines == [
        f"passprice: error: {file}: streams.read.locator: 'x' is too short (at least 3 characters)",
        f"passprice: error: {file}: streams.read.source: no source 'no-such-source' "
        "(sources/no-such-source.toml does not exist: write it (a [source] table, schema/source.schema.json), "
        f"or cite one of the {count} registered (passprice sources lists them))",
        f"passprice: error: {file}: streams.read.derivation.formula: not an expression: '(' was never closed",
    ]
    assert card.read_bytes() == before


def test_a_source_file_whose_name_is_no_id_is_named_so(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "sources" / "nvidia-h200-datasheet.toml").rename(root / "sources" / "Bad_ID.toml")
    bad("audit", "--source", "Bad_ID", root=root,
        says=f"{root}/sources/Bad_ID.toml: 'Bad_ID' is not a source id (lower-case letters")  # fmt: skip
