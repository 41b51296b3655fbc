"""Left50 (issue 13, the leftovers session 40 named): a figure past a float in a locator (``1e-400 GB/s`` read as
``0 GB/s``) is one passprice cannot read; a FIFO where a stack fit reads a file is named as a folder or a dangling
link there is; ``sweep`` finds a value named twice in two ranges without expanding them; ``reproduce`` says a
serving re-pointed to another routing record as the record as a whole; a review prices a drifted routing group
once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice.addedfacts import figure_read, in_own_unit, quotes_another, stated_with_unit, unreadable
from passprice.facts import Fact, converter


def _bandwidth(locator: str) -> Fact:
    return converter().structure({"value": 4.8, "unit": "TB/s", "provenance": "published", "source": "src-x",
                                  "locator": locator}, Fact)


@pytest.mark.parametrize(("locator", "written"), [
    ("'Bandwidth 1e-400 GB/s'", "1e-400 GB/s"),  # read as 0 GB/s
    ("'Bandwidth 1 x 10^-400 GB/s'", "1e-400 GB/s"),  # read as 0 GB/s
    ("'Bandwidth 1 x 10^400 GB/s'", "1e+400 GB/s"),  # read as 400 GB/s, the digits after its ^
    ("'Bandwidth 5e-324 GB/s'", "5e-324 GB/s"),  # below the least normal float: a tenth of it is 0
    ("'Bandwidth 1e+999 GB/s'", "1e+999 GB/s"),  # read as nothing at all: the fact asked nothing
])
def test_a_figure_past_a_float_is_one_passprice_cannot_read(locator: str, written: str) -> None:
    """Left48's leftover: ``1e-400 GB/s`` in a locator was read as ``0 GB/s``, and an added 4.8 TB/s under it asked
    "its locator quotes 0 GB/s, not 4.8 TB/s"; ``1 x 10^400 GB/s`` asked of ``400 GB/s``; ``1e+999 GB/s`` asked
    nothing. Each is now a figure passprice cannot read, said as a unit it does not read is."""
    fact = _bandwidth(locator)
    assert quotes_another(fact) == (
        f"its locator writes {written}, which passprice cannot read as one figure with its unit: does src-x: "
        f"{locator} state 4.8 TB/s?")
    assert stated_with_unit(locator) == [] and in_own_unit(4.8, "TB/s", locator) == []
    assert unreadable(locator) == [written]


def test_figures_a_float_holds_read_as_before() -> None:
    """The edges: 0 written with a power is 0; the least normal float and 1e308 read; a comma is a thousands mark."""
    assert [figure_read(w) for w in ("0e-400", "0.0", "2.3e-308", "1e308", "1,024", "1e-400", "1e+999", "5e-325")] \
        == [0.0, 0.0, 2.3e-308, 1e308, 1024.0, None, None, None]
    assert stated_with_unit("Bandwidth 0e-400 GB/s")[0][:2] == ("0 GB/s", 0.0)
    assert quotes_another(_bandwidth("'Bandwidth 1e-300 GB/s'")) == (
        "its locator quotes 1e-300 GB/s, not 4.8 TB/s: does src-x: 'Bandwidth 1e-300 GB/s' state "
        "4.8 TB/s?")


@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling-link"])
def test_a_stack_fits_card_that_is_a_fifo_is_named_as_a_folder_or_dangling_link_is(tmp_path: Path, kind: str) -> None:
    """Attack69: ``audit locks/r1-qwen7b-h200-llamacpp.lock.toml`` with a FIFO as ``facts/cards/l40s.toml`` (a card
    the llama.cpp stack's fit reads, not the serving's own) refused the whole audit, exit 2, "is a FIFO (named pipe),
    not a regular file", from the key of the fit's measured span (``stackreach.ratio_span`` read every card's bytes);
    a folder or a dangling link there was named on the card line and the audit exited 0 (attack68). The audit is about
    the locked serving's citations: each of the three is now named alike, exit 0, the card's 12 runs left out of the
    span (99 fitted runs, not 111), ``check`` the one that says why."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "l40s.toml"
    card.unlink()
    {"fifo": os.mkfifo, "folder": os.mkdir, "dangling-link": lambda p: os.symlink(tmp_path / "nowhere", p)}[kind](card)
    result = invoke("audit", "locks/r1-qwen7b-h200-llamacpp.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    # cite83: the A100 cards' array and vector cite the Ampere whitepaper (the A100 datasheet's 8 facts here were 4);
    # cite90: the H100 PCIe's share peaks cite the H100 product page, one source more (9 -> 10 more)
    # trace109: the A40's scale cites the A40 datasheet, not the GA102 whitepaper (11 -> 10; tests/test_trace109.py)
    assert ("(60 facts), citing nvidia-ada-whitepaper (16), nvidia-ampere-ga102-whitepaper (10), passprice-card-review "
            "(7), xytpai-nvbench (7) and 10 more sources; card l40s does not read today (passprice check says "
            "why): its facts are not counted\n") in result.stdout
    assert ("outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 99 fitted runs measured: the fit is "
            "extrapolated here") in result.stderr
    assert "FIFO" not in result.output


@pytest.mark.parametrize(("args", "said"), [
    (("--positions", "0-3999999,0-3999999"), "--positions: 0.0"),  # was: more than the 4,000,000 values, 355 MB
    (("--positions", "0-1999999,1000000-2999999"), "--positions: 1000000.0"),  # was: 52,000,000 rows
    (("--batches", "1-3999999,1-3999999"), "--batches: 1"),
    (("--batches", "1-1999999,5-7"), "--batches: 5"),  # was: 2,000,002 rows, more than --max-rows allows
    (("--positions", "1-4,3.0"), "--positions: 3.0"),
    (("--positions", "5,5,1,1"), "--positions: 1.0"),  # the least value given twice
])
def test_ranges_repeating_a_value_are_refused_as_intervals(args: tuple[str, ...], said: str) -> None:
    """Left50: ``sweep --positions 0-3999999,0-3999999`` wrote out both ranges, 8,000,000 floats (0.98 s, 355 MB
    whole process), before it was refused; the ranges are now compared as intervals before any is written out, and
    the refusal is the one for a value given twice (attack69's line)."""
    from cli_helpers import bad

    assert bad("sweep", "r1-qwen7b-h200", *args) == [
        f"passprice: error: {said} is given more than once: a sweep prices each point once (a sweep file is refused "
        "the same)"]


def test_a_repeat_between_ranges_is_found_without_writing_them_out() -> None:
    """Counted, not timed: parsing two 4,000,000-value ranges that overlap allocates under 100 kB at its peak (main
    allocated about 300 MB of floats); a value between two integers lies in no range; a doubling range's values are
    values; what does not repeat is written out in the order given."""
    import tracemalloc

    from passprice.errors import InputError
    from passprice.sweep import first_repeat, parse_numbers

    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r"^--positions: 3999999\.0 is given more than once"):
            parse_numbers("0-3999999,3999999-3999999", float, "--positions")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000
    assert first_repeat([(1, 4), [2.5], (5, 9), [10.0]]) is None
    assert first_repeat([(1, 4), [2.5], (5, 9), [9.0]]) == 9.0
    assert first_repeat([(10, 20), [1, 2, 4, 8, 16]]) == 16
    assert first_repeat([(10, 20), (0, 3), (3, 30)]) == 3
    assert parse_numbers("7,1-3,5", int, "--batches") == (7, 1, 2, 3, 5)


_SENTENCE = "'32 of the 128 experts take 60 % of the routed token-slots'"


def _re_pointed(tmp_path: Path) -> Path:
    """Walk56 (c) in a copy of the registry: a record of hot_experts 0.25 and hot_share 0.6 added, gpt-oss-120b-h100's
    serving pointed at it (its lock priced on uniform)."""
    root = copy_root(tmp_path)
    (root / "facts" / "routing" / "gpt-oss-120b-chat.toml").write_text(
        "[routing]\nname = \"gpt-oss-120b chat (walk56 c)\"\n" + "".join(
            f"\n[{key}]\nvalue = {value}\nunit = \"1\"\nprovenance = \"measured\"\n"
            f"source = \"gpu-container-handbook-routing-derisk\"\nlocator = \"{_SENTENCE}\"\n"
            for key, value in (("hot_experts", 0.25), ("hot_share", 0.6))), encoding="utf-8")
    serving = root / "registry" / "servings" / "gpt-oss-120b-h100.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace('routing = "uniform"',
                                                                   'routing = "gpt-oss-120b-chat"'), encoding="utf-8")
    return root


def test_a_review_prices_a_drifted_routing_record_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Left49's leftover: the review's ``alone`` entries for a lock whose routing facts drifted priced the record's
    facts at once twice, once in :func:`passprice.reproduce.reproduce` (``rep.routing``) and again in
    :func:`passprice.review.impacts.changed_alone` with its own paths. Counted, on walk56 (c): 6 prices, now 5 (the
    pins, today's serving, each of the 2 facts alone, the record as a whole); what the entry says is unchanged."""
    from passprice import reproduce
    from passprice.locks import read_lock
    from passprice.registry import Root
    from passprice.review import Side, SideInfo
    from passprice.review.impacts import changed_alone

    root = _re_pointed(tmp_path)
    lock = read_lock(root / "locks" / "gpt-oss-120b-h100.lock.toml")
    calls = []
    real = reproduce.priced
    monkeypatch.setattr(reproduce, "priced", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    side = Side(SideInfo("HEAD"), Root(root), {})
    alone, joint, routing = changed_alone(side, lock, ("routing.hot_experts", "routing.hot_share"),
                                          ("uniform", "gpt-oss-120b-chat"), "gpt-oss-120b-chat")
    assert routing is not None and routing.describe() == (
        "routing record uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, hot_share 1 → 0.6): "
        "tokens/s +14.72 %")
    assert alone == (("routing.hot_experts", "tokens/s +108.3 %"), ("routing.hot_share", "refused alone (BadRouting)"))
    assert joint == ()
    assert len(calls) == 5  # was 6


def test_reproduce_says_a_re_pointed_serving_s_record_as_a_whole_on_its_facts_line(tmp_path: Path) -> None:
    """Left48's leftover: ``reproduce`` of walk56 (c) said the record's facts as a pair of drifted facts, ``facts  2
    drifted: routing.hot_experts: 1 (assumed) → 0.25 (measured), …; routing.hot_share: …``, as if the locked record,
    uniform, had drifted; its alone lines (left49) and the review say the record as a whole. The facts line now
    does too; the serving line names the re-pointing, the alone line the +14.72 % as a whole, exit 0."""
    root = _re_pointed(tmp_path)
    result = invoke("reproduce", "locks/gpt-oss-120b-h100.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    source = "source uniform-routing-assumption → gpu-container-handbook-routing-derisk"
    lines = result.stdout.splitlines()
    at = lines.index("  since the lock:")
    assert lines[at + 1] == (
        "    facts          routing record uniform → gpt-oss-120b-chat as a whole (the serving re-pointed): "
        f"hot_experts: 1 (assumed) → 0.25 (measured), {source}; hot_share: 1 (assumed) → 0.6 (measured), {source}")
    assert "    serving        routing: uniform → gpt-oss-120b-chat" in lines
    assert lines[-1] == ("    routing record uniform → gpt-oss-120b-chat as a whole (hot_experts 1 → 0.25, hot_share "
                         "1 → 0.6): tokens/s +14.72 %")


def test_the_review_reads_a_power_of_ten_whole_in_a_locator() -> None:
    """The review's reader of the figures a locator quotes (``diff._quoted_figures``, held against a value moved
    under its unchanged citation) read ``1e-400`` as two figures, 1 and 400 (a share moved 1 → 0.5 under it read
    "the locator quotes 1"), and ``4.8e12`` as 4.8. A power of ten is read whole; one past a float is no figure."""
    from passprice.review import FactChange
    from passprice.review.changes import _quoted_figures

    assert _quoted_figures("Bandwidth 1e-400 GB/s, 1e+999 ops") == set()  # was {1, 400, 999}
    assert _quoted_figures("'4.8e12 B/s', '1E+5 slots', 1,024 lanes") == {4.8e12, 1e5, 1024.0}
    old, new = (converter().structure({"value": v, "unit": "1", "provenance": "measured", "source": "src-x",
                                       "locator": "'a share of 1e-400'"}, Fact) for v in (1, 0.5))
    asks = FactChange("facts/routing/r.toml", "routing.hot_share", old, new).to_verify
    assert asks == "the value moved (1 → 0.5) but its citation did not: does src-x: 'a share of 1e-400' say 0.5?"
