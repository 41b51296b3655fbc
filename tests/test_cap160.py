"""A quoted span is looked up by one search (issue 13: no input under 1 MB runs a command past 2 s; docs/PERFORMANCE.md,
"A span NOT FOUND searched once").

:meth:`passprice.sources.StoredText.holds` answered ``wanted in marked or wanted_tight in tight``: the span and the
text with each number marked whole, then both with every blank taken out. A span NOT FOUND was searched twice, each
search of the whole text: a review quoting 73 spans NOT FOUND in a 900,000-character excerpt (tests/test_bound147.py's
hostile case) spent about 0.47 s of CPU so. The first search answers nothing the second does not (taking the blanks
out of a text takes them out of each piece of it), so one search is made, of the form without blanks. The answers are
held equal to the two searches' on every shipped excerpt, on texts made to hold the cases the marks and blanks exist
for, and on fuzzed texts; the look-up bound's count (two forms a look-up) is unchanged, so which spans are looked up
is too. Counts of searches here, no timings.
"""

from __future__ import annotations

import random

import pytest

from cli_helpers import REPO
from passprice.sources import StoredText


def _two_searches(span: str, flat: str) -> bool:
    """What :meth:`passprice.sources.StoredText.holds` answered before (no page, no part): the span searched in both
    forms of ``flat``, each padded as :func:`passprice.sources._within` pads it."""
    from passprice.sources import _BARRIER, _searched, _within

    marked, tight = _searched(flat)
    wanted, wanted_tight = _searched(" ".join(span.replace(_BARRIER, " ").split()))
    if not wanted:
        return False
    return _within(wanted, marked) or _within(wanted_tight, tight)


def _stored(flat: str) -> StoredText:

    return StoredText("s", "e", text=flat, flat=flat)


#: Texts and spans for each rule the two forms keep (tests/test_attack121.py, tests/test_attack133.py,
#: tests/test_cite71.py): a number taken whole, blanks that differ, words that run on, no blank between two numbers.
CASES = [
    ("HBM3e 4.8TB/s of bandwidth", "4.8TB/s", True),
    ("HBM3e 14.8TB/s of bandwidth", "4.8TB/s", False),
    ("a total of 1,141 GB", "141", False),
    ("a total of 141.5 GB", "141", False),
    ("a total of 141 GB", "141 GB", True),
    ("Transistors64 GB High Bandwidth Memory520 MB", "64 GB High Bandwidth Memory", True),
    ("1.5 TB High\nCapacity M emory", "1.5 TB High Capacity Memory", True),
    ("1 4.8TB/s", "14.8TB/s", False),
    ("14.8", "1 4.8", False),
    ("638 TFLOPS(bf16)", "638 TFLOPS (bf16)", True),
    ("141GB of HBM3e", "141 GB of HBM3e", True),
    ("a\x01b", "ab", False),
    ("", "a", False),
    ("some words", "   ", False),
]


@pytest.mark.parametrize(("flat", "span", "held"), CASES)
def test_the_rules_of_both_forms_hold_with_one_search(flat: str, span: str, held: bool) -> None:
    assert _two_searches(span, flat) is held
    assert _stored(flat).holds(span) is held


def test_a_span_not_found_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import sources

    searched: list[tuple[str, int]] = []
    within = sources._within

    def counted(span: str, text: str) -> bool:
        searched.append((span, len(text)))
        return within(span, text)

    monkeypatch.setattr(sources, "_within", counted)
    # marked: a mark, 1, a mark, a blank and 900,000 a (900,004); without the blank: 900,003
    stored = _stored("1 " + "a" * 900_000)
    span = "a" * 98 + "b"
    assert stored.holds(span) is False
    assert searched == [(span, 900_003)]  # before: the marked form's 900,004 first, then these
    searched.clear()
    assert stored.holds("a b") is False
    assert searched == [("ab", 900_003)]
    searched.clear()
    assert stored.holds("1 aaa") is True
    assert searched == [("\x001\x00aaa", 900_003)]
    # what the bound counts of a look-up is as it was: both forms, each at least 30,000 characters
    assert stored.searched_size() == 900_004 + 900_003


def test_one_search_answers_as_two_on_the_shipped_excerpts() -> None:
    from passprice.registry import find_root
    from passprice.sources import read_sources, stored_text

    root = find_root(REPO)
    chooser = random.Random(160)
    compared = found = 0
    for record in sorted(read_sources(root)[0].values(), key=lambda s: s.id):
        stored = stored_text(root, record)
        flat = stored.flat
        if flat is None or len(flat) < 40:
            continue
        for _ in range(80):
            at = chooser.randrange(len(flat) - 30)
            span = flat[at:at + chooser.randint(1, 30)]
            if chooser.random() < 0.3:
                span = span[:-1] + chooser.choice("xz1. ")
            if chooser.random() < 0.3:
                cut = chooser.randrange(len(span))
                span = span[:cut] + chooser.choice(["", " ", "  ", "\n"]) + span[cut:]
            held = stored.holds(span)
            assert held is _two_searches(span, flat), (record.id, span)
            compared += 1
            found += held
    assert compared >= 1_000
    assert 0.3 * compared < found < compared  # both answers asked often


def test_one_search_answers_as_two_on_fuzzed_texts() -> None:
    from passprice.sources import _BARRIER, _MARK

    chooser = random.Random(16_000)
    alphabet = ["1", "4", "8", ".", ",", " ", "  ", "\n", "\t", "a", "B", "GB", "/", "\u2003", "\x1c", "\x0b",
                _BARRIER, _MARK, "é"]
    compared = found = 0
    for _ in range(4_000):
        flat = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 40)))
        for _ in range(5):
            if flat and chooser.random() < 0.6:
                at = chooser.randrange(len(flat))
                span = flat[at:at + chooser.randint(1, 12)]
            else:
                span = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(1, 6)))
            held = _stored(flat).holds(span)
            assert held is _two_searches(span, flat), (flat, span)
            compared += 1
            found += held
    assert compared == 20_000 and 2_000 < found < 18_000
