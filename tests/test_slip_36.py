"""Slip round 36 (issue 13): changes that slipped past ``passprice diff`` (the review) and ``check``, each
reproduced in a registry of its own (this checkout's, committed on ``main`` of a git repository, changed on a branch
and reviewed as CI reviews it: ``passprice diff main HEAD``).

- (1) A new card copied from WS1 whose assumed ``memory.capacity`` 112 GB quotes a basis that agrees with itself
  (``7 HBM3E stacks x 16 GB``) while the design it cites says 6 stacks: nothing the registry recorded of the source
  names 7 HBM3E stacks, so it is asked.
- (2) ``4.8 tb/s``, ``4.8 T B/s`` and number words run together (``nine hundred nine hundred``, once read as
  90,909,090,900 TB/s) are read as a reviewer reads them or said plainly to be unreadable.
- (3) A published ratio inside a quoted range (0.87 under ``85-90%``) is not asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from passprice.addedfacts import _plain, basis_terms, quotes_another, unreadable
from passprice.diff import _quoted_figures
from passprice.facts import Provenance
from test_diff import commit_all
from test_slip_34 import branch, fact, registry, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main

WS1 = "facts/cards/ws1_hypothetical.toml"


def ws1_copy(path: Path, *edits: tuple[str, str]) -> None:
    """WS1's card copied to ``facts/cards/ws2_copy.toml``, each ``(old, new)`` of ``edits`` replaced once."""
    text = (path / WS1).read_text().replace('name = "WS1 (hypothetical weight-streaming card)"',
                                            'name = "WS2 (a copy)"')
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    (path / "facts" / "cards" / "ws2_copy.toml").write_text(text, encoding="utf-8")


def test_1_a_copied_estimate_whose_basis_the_source_does_not_name_is_asked(registry: Path) -> None:
    # Before: "N facts added in 1 new file", nothing to verify, exit 0 (7 x 16 GB is 112 GB: from_basis held).
    path = branch(registry, "seven-stacks")
    ws1_copy(path, ("[memory.capacity]\nvalue = 96", "[memory.capacity]\nvalue = 112"),
             ("(6 HBM3E stacks x 16 GB)", "(7 HBM3E stacks x 16 GB)"),
             ('note = "6 HBM3E stacks x 16 GB.', 'note = "7 HBM3E stacks x 16 GB.'))
    commit_all(path, "a WS1 copy with 7 stacks")
    status, text, out = review(path)
    assert status == 0, text
    assert out["to_verify"] == ["ws2_copy:memory.capacity"], text
    assert ("to verify: its basis names 7 HBM3E, which nothing the registry recorded of ws1-design before this "
            "change names (its record, the document facts/cards/ws1_hypothetical.toml and ") in text
    assert ("does ws1-design: design point: the [card] note and this fact's note (7 HBM3E stacks x 16 GB) give 112 "
            "GB, assumed?") in text
    # the copy unchanged asks nothing: each basis it names is the design's
    path = branch(registry, "ws1-copy")
    ws1_copy(path)
    commit_all(path, "a WS1 copy")
    status, text, out = review(path)
    assert status == 0 and out["to_verify"] == [], text


def test_1_basis_terms() -> None:
    assert set(basis_terms("design point (6 HBM3E stacks x 16 GB), page 2")) == {(6.0, "hbm3e"), (16.0, "gb")}
    assert set(basis_terms("0.96 x the BabelStream Mul share")) == set()


@pytest.mark.parametrize("written", ["4.8 T B/s", "4.8 T B/S", "four point eight T B/s"])
def test_2_a_prefix_set_apart_is_read(written: str) -> None:
    assert _plain(f"Bandwidth {written}").endswith("4.8 TB/s")
    assert quotes_another(fact(5.2, "TB/s", f"Bandwidth {written}")) == (
        f"its locator quotes 4.8 TB/s, not 5.2 TB/s: does s: Bandwidth {written} state 5.2 TB/s?")
    assert quotes_another(fact(4.8, "TB/s", f"Bandwidth {written}")) is None


@pytest.mark.parametrize("written", ["4.8 tb/s", "4.8 gb/s", "nine hundred nine hundred TB/s",
                                     "four point eight four point eight TB/s", "twenty twenty TB/s",
                                     "one thousand thousand GB/s"])
def test_2_what_cannot_be_read_is_said_so(written: str) -> None:
    # Before: "nine hundred nine hundred" read as 90900 (and longer runs as 90,909,090,900) TB/s; "4.8 tb/s" read
    # as nothing, 5.2 TB/s under it asked nothing.
    assert unreadable(f"Bandwidth {written}") == [written]
    assert quotes_another(fact(5.2, "TB/s", f"Bandwidth {written}")) == (
        f"its locator writes {written}, which passprice cannot read as one figure with its unit: does s: Bandwidth "
        f"{written} state 5.2 TB/s?")


@pytest.mark.parametrize(("words", "digits"), [("fifteen hundred GB/s", "1500 GB/s"),
                                               ("one thousand two hundred and five GB/s", "1205 GB/s"),
                                               ("twenty-one TB/s", "21 TB/s"), ("four point eight TB/s", "4.8 TB/s")])
def test_2_one_number_in_words_still_reads(words: str, digits: str) -> None:
    assert _plain(words) == digits and unreadable(words) == []


def test_2_words_that_are_no_figure_are_not_asked() -> None:
    assert unreadable("the one and two others") == []
    assert quotes_another(fact(5.2, "TB/s", "the one and two others, page nine")) is None


def test_3_a_published_ratio_inside_a_quoted_range_is_not_asked() -> None:
    assert quotes_another(fact(0.87, "1", "acceptance 85-90%"), _quoted_figures) is None
    assert quotes_another(fact(0.87, "1", "acceptance 85-90%", Provenance.ESTIMATED), _quoted_figures) is None
    assert quotes_another(fact(0.95, "1", "acceptance 85-90%"), _quoted_figures) == (
        "it is 0.95 but its locator quotes 85%, 90%: does s: acceptance 85-90% give 0.95?")
