"""Attack round 52 (issue 13: hostile input on session 29's additions), each found first against a non-editable
install of this checkout, then here against passprice's own registry. Each test asserts the exit status and the
exact line; the docstring or a comment says what it did before.

1. ``audit r1-qwen7b-h200 --step 4.9e-324`` (a subnormal, 0 once divided by 100) was a ZeroDivisionError traceback
   (exit 1); ``--step 1e-16`` printed an elasticity of +0.000 for every fact (each fact scaled by ``1 + 1e-18``, which
   is 1), and ``--step 1e-12`` moved ``streams.read``'s +0.972 to +0.977: rounding, not the price.
2. A lock's ``[stack] fitted_vendors`` re-digested to 5,000 names: ``check``, ``reproduce`` and ``price --lock`` each
   printed one line of about 40,000 characters (the changed span's sides were uncapped).
3. ``explain draft.acceptance.١`` (an Arabic-Indic digit) printed the drafts entry, exit 0.
4. facts.yml's sticky-comment step, run by hand on a review whose first line is ``<!-- passprice diff:") or true)) |
   .id] | first // empty #`` (the marker is spliced into a jq program), overwrote another workflow's comment (id 7);
   a first line of 10 MB made gh fail ("Argument list too long") and the step posted a second comment, exit 0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import invoke
from test_hostile_49 import STACKED, _locked, _rewritten

R1 = "r1-qwen7b-h200"
STEP_RANGE = "(a finite number from 0.0001 to 50)"


# --- 1. audit --step below what a double can measure -----------------------------------------------------------------

@pytest.mark.parametrize(("step", "shown"), [("4.9e-324", "5e-324"), ("1e-16", "1e-16"), ("1e-300", "1e-300"),
                                             ("0.00009999", "9.999e-05"), ("0", "0"), ("-0", "0")])
@pytest.mark.parametrize("fmt", [(), ("--json",), ("--format", "markdown")])
def test_1_a_step_too_small_to_measure_is_one_error_line(step: str, shown: str, fmt: tuple[str, ...]) -> None:
    result = invoke("audit", R1, "--step", step, *fmt)
    problem = f"Invalid value for '--step': {shown} is out of range {STEP_RANGE} (see 'cli audit --help')"
    # --json: the one error document since session 30 (nothing on stdout before); text and markdown print nothing
    wanted = json.dumps({"error": {"status": 2, "problems": [problem]}}, indent=2) + "\n" if fmt == ("--json",) else ""
    assert (result.exit_code, result.stdout) == (2, wanted)
    assert result.stderr == f"passprice: error: {problem}\n"


def test_1_the_smallest_step_measures_what_one_percent_does() -> None:
    """At 0.0001 % the elasticities are the 1 % ones to the three decimals shown (+1.000 memory.bandwidth, +0.972
    streams.read on r1-qwen7b-h200: each is the price's slope, which a 1 % step and a 1e-6 one both measure)."""
    import json

    small = {f["path"]: f["elasticity"] for f in json.loads(invoke("audit", R1, "--step", "0.0001", "--json").stdout)
             ["facts"]}
    assert round(small["memory.bandwidth"], 3) == 1.0
    assert round(small["streams.read"], 3) == 0.972


def test_1_the_library_refuses_a_step_outside_the_range() -> None:
    from passprice.audit import audit

    with pytest.raises(ValueError, match=re.escape("audit step 0.0 is outside 1e-06 … 0.5")):
        audit(None, None, None, step=0.0)  # type: ignore[arg-type]


# --- 2. a lock's vendor pins of 5,000 names: one line of 40,080 characters --------------------------------------------

SPAN_5000 = ("stack.llamacpp-cuda-2405.fitted_vendors: [V00000, V00001, V00002, V00003, V00004, V00005, V00006, V000… "
             "(39,998 characters) → NVIDIA] (the lock pinned the old)")


def test_2_a_pinned_vendor_list_of_5000_names_is_cut_on_every_command(tmp_path: Path) -> None:
    """``[stack] fitted_vendors`` re-digested to 5,000 names (6 characters and ``, `` each: 39,998): ``check``,
    ``reproduce`` and ``price --lock`` each printed the whole list on one line of 40,080 characters (40,095 and
    40,119). Each side of a changed span now shows at most 80 characters: past that its first 60 and its length."""
    root = _locked(tmp_path)
    _rewritten(root / STACKED, lambda d: d["stack"].__setitem__("fitted_vendors", [f"V{i:05d}" for i in range(5000)]))
    for args in (("check",), ("reproduce", str(root / STACKED)), ("price", "--lock", str(root / STACKED))):
        result = invoke(*args, root=root)
        out = result.stdout + result.stderr
        assert SPAN_5000 in out, (args, out[:2000])
        assert max(len(line) for line in out.splitlines()) < 500, args


def test_2_a_long_changed_side_of_combining_marks_is_cut_too() -> None:
    """One letter and 3,990 combining acute accents pinned beside today's ``NVIDIA`` (not the same text in another
    normalisation, so not spelled): the line held all 3,990 marks (4,490 characters)."""
    from passprice.reproduce import changed_span

    assert changed_span("N" + "\u0301" * 3990, "NVIDIA") == "N[" + "\u0301" * 60 + "… (3,990 characters) → VIDIA]"


@pytest.mark.parametrize(("old", "new", "shown"), [
    ("a" * 80, "b", "[" + "a" * 80 + " → b]"),
    ("a" * 81, "b", "[" + "a" * 60 + "… (81 characters) → b]"),
    ("x", "y" * 100_000, "[x → " + "y" * 60 + "… (100,000 characters)]"),
])
def test_2_a_changed_span_shows_at_most_80_characters_a_side(old: str, new: str, shown: str) -> None:
    from passprice.reproduce import changed_span

    assert changed_span(old, new) == shown


# --- 3. explain: an audit row's path with a digit that is not ASCII ---------------------------------------------------

def test_3_explain_takes_an_audit_rows_index_in_ascii_digits_alone() -> None:
    """``explain draft.acceptance.١`` (U+0661, ARABIC-INDIC DIGIT ONE) printed the drafts entry, exit 0: ``\\d``
    matched it, though no audit row prints one. ``draft.acceptance.99999999999`` is still the drafts entry."""
    result = invoke("explain", "draft.acceptance.\u0661")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("passprice: error: explain: 'draft.acceptance.\u0661' is not a term passprice defines; "
                             "did you mean acceptance (drafts)? (passprice explain lists them)\n")
    assert invoke("explain", "draft.acceptance.99999999999").stdout.startswith("drafts: ")


# --- 4. facts.yml's sticky-comment step given a review whose first line is no marker passprice writes ----------------

MARKER = "<!-- passprice diff: this comment is updated in place on every push -->"


@pytest.mark.parametrize(("review", "said"), [
    # was: "updated comment 7", another workflow's comment (a coverage report) overwritten with the review
    ('<!-- passprice diff:") or true)) | .id] | first // empty #\nbody\n',
     "no review posted: the review's first line is not a marker passprice writes"),
    ('<!-- passprice diff: $(touch x) `touch y` \\" -->\nbody\n',
     "no review posted: the review's first line is not a marker passprice writes"),
    # was: "Argument list too long" from gh, then "posted a new comment" beside the one the lookup missed
    (MARKER + "a" * (10 << 20) + "\nbody\n",
     "no review posted: the review's first line is 10485831 characters, not a marker passprice writes"),
])
def test_4_a_review_whose_first_line_is_no_marker_posts_nothing(tmp_path: Path, review: str, said: str) -> None:
    import shutil

    from test_newcomer_34 import _run_sticky

    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the fake gh filters with it, as gh --jq does)")
    done, calls = _run_sticky(tmp_path, review)
    assert (done.returncode, done.stdout, done.stderr, calls) == (1, "", said + "\n", "")


def test_4_a_ten_megabyte_review_under_the_marker_is_still_posted(tmp_path: Path) -> None:
    import shutil

    from test_newcomer_34 import _run_sticky

    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the fake gh filters with it, as gh --jq does)")
    done, calls = _run_sticky(tmp_path, MARKER + "\n" + ("x" * 1000 + "\n") * 10_000)
    assert (done.returncode, done.stdout) == (0, "posted a new comment\n")
    assert calls.splitlines()[-1].startswith("api --method POST repos/acme/registry/issues/12/comments -F body=@")
