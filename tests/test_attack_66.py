"""Attack round 66 (issue 13): what sessions 36-37 added, broken as an attacker would, each escape's reproducer in
process. The review's stale descriptions (:mod:`passprice.rowcite`) compared the rows a record's facts cite on each
side as tuples: a card citing 17,524 distinct rows a side (256 KiB) made ``diff`` run 17 s."""

from __future__ import annotations

from types import SimpleNamespace

import attrs

from cli_helpers import REPO
from passprice import rowcite
from passprice.registry import Root
from passprice.review.records import stale_descriptions
from passprice.routing import load_routing

ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"


def test_a_record_re_cited_from_10000_rows_to_10000_others_is_compared_in_linear_time() -> None:
    # 10,000 rows a side: the tuples' look-ups were 10^8 comparisons (20,000 a side: 11.5 s of CPU here), now set
    # look-ups; the line names three rows a side and counts the rest (it named all 20,001).
    fact = load_routing(Root(REPO), "qwen3-30b-a3b-measured").hot_experts
    n = 10_000
    old = attrs.evolve(fact, derivation=None, locator="row 'narrow (single-domain Python)', "
                       + ", ".join(f"row 'b{i}'" for i in range(n)))
    new = attrs.evolve(fact, derivation=None, locator=", ".join(f"row 'h{i}'" for i in range(n)))
    f = SimpleNamespace(path=ROUTING, kind="routing", status="changed", compared=True, holds_facts=True,
                        facts=(SimpleNamespace(path="hot_experts", old=old, new=new),))
    side = SimpleNamespace(files={ROUTING: (REPO / ROUTING).read_bytes()}, root=Root(REPO))
    said = stale_descriptions(side, side, [f])  # type: ignore[arg-type]
    assert said == {ROUTING: (
        "its name still says 'single-domain', 'Python'; source gpu-container-handbook-routing-derisk's read still "
        "names row 'narrow (single-domain Python)', though its facts now cite row 'h0', row 'h1', row 'h2' and "
        "9,997 more rows in place of row 'narrow (single-domain Python)', row 'b0', row 'b1' and 9,998 more rows: "
        "does each still describe the record? (nothing priced reads it; `audit` shows it)")}


def test_rows_named_three_then_counted() -> None:
    assert rowcite.named([]) == ""
    assert rowcite.named(["a", "b", "c"]) == "row 'a', row 'b', row 'c'"
    assert rowcite.named(["a", "b", "c", "d"]) == "row 'a', row 'b', row 'c' and 1 more row"
    assert rowcite.named(["a", "b", "c", "d", "e"]) == "row 'a', row 'b', row 'c' and 2 more rows"
    assert rowcite.label_words(("narrow (single-domain Python)", "ab")) == frozenset({"narrow", "single-domain",
                                                                                      "python"})


def test_a_sweep_of_many_positions_counts_each_against_the_bound() -> None:
    # `sweep --cards all --positions 1-100 --batches 1` counted 606,900 (28,900 rows and 289 shapes) and ran 8.0 s of
    # CPU; `--positions 1-1000` about 80 s: each position past 64 is a block of its own (80 to 280 µs). Now each
    # counts as sweep.POSITION_ROWS: 28,900 + 289 x 2,000 + 28,900 x 150 = 4,941,900, refused before pricing.
    from passprice.errors import InputError
    from passprice.registry import find_root
    from passprice.sweep import Grid, Sweeper

    root = find_root(REPO)
    grid = Grid(("r1-qwen7b-h200",), (1,), positions=tuple(float(p) for p in range(1, 10_001)))
    try:
        Sweeper(root).check(grid)
    except InputError as e:
        assert str(e) == (
            "sweep: 10,000 rows (1 serving × 1 card × 1 draft length × 10,000 positions × 1 batch), and 1 pass "
            "shape to read, counting as 2,000, and 10,000 positions priced each from a shape read once (past "
            "64 positions), each counting as 150: 1,512,000 rows in all, is more than the 1,048,576 rows --max-rows "
            "allows (about 2 s of CPU a million rows); split the grid, use a doubling range of batches (1-4096*2), or "
            "raise --max-rows (at most 688,000,000)")
    else:
        raise AssertionError("10,000 positions were not refused")  # they counted 12,000 (about 1 s of CPU)
    Sweeper(root, max_rows=1_512_000).check(grid)  # raised, it is allowed
    # 64 positions read a shape each (2,000) and are not counted again
    Sweeper(root).check(Grid(("r1-qwen7b-h200",), (1,), positions=tuple(float(p) for p in range(1, 65))))


def test_a_negative_zero_position_on_the_command_line_is_shown_as_0() -> None:
    # `sweep SERVING --positions -0.0` wrote position 0 in its rows but "its rows at position -0 are not the locked
    # serving's" on stderr: the sweep file's positions were read as 0 (leftovers 29), the command line's were not.
    import math

    import pytest

    from cli_helpers import invoke
    from passprice.errors import InputError
    from passprice.sweep import parse_numbers

    assert [math.copysign(1, v) for v in parse_numbers("-0.0,1,512", float, "--positions")] == [1, 1, 1]
    # -0.0 and 0 are one position, given twice (left50: refused as parse_numbers reads them, no longer by the sweep)
    with pytest.raises(InputError, match=r"^--positions: 0\.0 is given more than once"):
        parse_numbers("-0.0,0,512", float, "--positions")
    result = invoke("sweep", "qwen3-30b-a3b-h200", "--positions", "-0.0,512", "--batches", "1")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].endswith(
        "its rows at position 0, 512 are not the locked serving's (position 2048)"), result.stderr
