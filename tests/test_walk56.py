"""Findings of the 56th README-only walkthrough (a new user's morning: review a pull request, reproduce a historic
price, audit a citation). Each finding is kept as a reproducer: a price cited by a digest that a re-lock has since
replaced was answered "may have been re-locked since", the commit that wrote it left to ``git log -S``; a lock
written out of an older commit whose code moved its price was told to find its code with ``git log -1 --
old.lock.toml``, a file git never held, while the ``pricing model`` line below named the commit; its drifted
facts, re-cited with their figures kept, each read ``tokens/s +0.006068 %`` alone, the code's own move; and a
review's expected price moved +0.003218 % read ``237.4 → 237.5``, and a fact alone ``fixed_s 2.706 ms → 2.705 ms``
(-0.01035 %), figures that read as a move three to twelve times the one they show; and the pinned facts a price does
not read, changed since, were left out of ``facts  unchanged``; and a routing record's two facts citing one sentence
that states both (``'32 of the 128 experts take 60 % …'``) were each asked of the other's figure there."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from cli_helpers import REPO, invoke
from passprice.reproduce import _first_figure
from passprice.review.rendering import _expected_shift
from passprice.tables import decimals_pair, si_pair

#: qwen3-30b-a3b-h200's [lock] digest as commit e9af49f4c0f7 wrote it (re-locked at d6ad0245: cited, then replaced).
OLD_DIGEST = "03f8ec310faf"
#: The commit that wrote gemma3-270m-h100's lock before window55 moved its price (pricing model e284fe05dc27).
BEFORE_WINDOW55 = "e9162b7b357c"


def _history(commit: str) -> bool:
    """Whether the checkout's git history holds ``commit`` (a clone cut shallow, or a copy outside git, does not)."""
    try:
        done = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=REPO, capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


needs_history = pytest.mark.skipif(not _history(BEFORE_WINDOW55), reason="the checkout's git history is not here")


# --- 1. a digest re-locked since names the commit that wrote it and how to reproduce it ----------------------------


@needs_history
def test_1_a_digest_a_re_lock_replaced_names_the_commit_that_wrote_it() -> None:
    # Before: "... has that [lock] digest (locks: …): the lock cited may have been re-locked since, or be of another
    # registry", and the README's way to it (git log -S) left to the reader.
    result = invoke("reproduce", OLD_DIGEST)
    assert result.exit_code == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.endswith(
        "passprice audit NAME prints a lock's digest): re-locked since; commit e9af49f4c0f7 (2026-12-06) wrote it as "
        "locks/qwen3-30b-a3b-h200.lock.toml: write it out, `git show "
        "e9af49f4c0f7:locks/qwen3-30b-a3b-h200.lock.toml > qwen3-30b-a3b-h200-e9af49f4c0f7.lock.toml`, then "
        "`passprice reproduce qwen3-30b-a3b-h200-e9af49f4c0f7.lock.toml`"
    ), line


# --- 2. an old lock whose code moved its price: the commit named, and each drifted fact against today's code ------


@needs_history
def test_2_an_old_lock_names_its_code_commit_and_its_facts_alone_against_the_reproduced_price(tmp_path: Path) -> None:
    old = tmp_path / "gemma-old.lock.toml"
    old.write_bytes(subprocess.run(["git", "show", f"{BEFORE_WINDOW55}:locks/gemma3-270m-h100.lock.toml"],
                                   cwd=REPO, capture_output=True, check=True).stdout)
    result = invoke("reproduce", str(old))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith(
        "  does NOT reproduce: the pricing model changed and moves the price (first: sequence_bytes); the lock's own "
        "price comes from the code that wrote it: the passprice of commit e9162b7b357c (the oldest commit whose locks "
        "record its pricing model: pricing model, below), installed in a virtual environment of its own"), lines[1]
    assert "git log -1" not in result.stdout
    # Before: "streams.append: tokens/s +0.006068 %" and "streams.read: tokens/s +0.006068 %", each re-cited with its
    # figure kept: the move was window55's code, the same +0.006068 % as the first term's line says.
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's, against the reproduced "
                     "column: today's code):")
    # (cite71 re-worded the H100's on_chip.capacity and scale locators since, and session 41 its memory.capacity
    # note, and cite90 re-cited its array, memory.bandwidth and vector to the H100 product page: they read unchanged
    # the same way)
    assert lines[at + 1:] == ["    array, memory.bandwidth, memory.capacity, on_chip.capacity, scale, streams.append, "
                              "streams.read, vector: tokens/s "
                              "unchanged (each its citation, note or derivation alone changed: the figure and "
                              "provenance are the pinned ones)"]
    assert lines[at - 1] == "  first term that moved with today's inputs: sequence_bytes; tokens/s +0.006068 %"
    # Before: the pinned facts the price does not read went unsaid when they changed (the MI300X's lock, its host.*
    # locators rewritten by cite68, read "facts  unchanged")
    facts = next(line for line in lines if line.startswith("    facts  "))
    # (3 until cite90 re-cited the H100's host.read and host.write and re-worded its host.capacity note; its vector,
    # re-cited too, now ends the drifted list, naming its new source)
    # (at most 5 drifted facts described, the rest counted: a user's walk read one line of 1,344 characters, every
    # value as pinned; the vector, re-cited to the H100 product page too, is among the 3 more)
    assert ("    facts          8 drifted, every value as pinned: array: 989.5 TMAC/s (citation, note, derivation "
            "changed), source nvidia-h100-datasheet → nvidia-h100-product-page; memory.bandwidth: 3.35 TB/s "
            "(citation changed), source nvidia-h100-datasheet → nvidia-h100-product-page;") in facts
    assert "; and 3 more (reproduce --json's facts_drifted lists each) (of those the price reads)" in facts
    # (each with what changed since tests/test_fix190.py: "… hold otherwise today: …, streams.rewrite: no drift")
    assert facts.endswith("; no drift in 6 pinned facts changed today that it does not read: host.capacity (note "
                          "changed), host.read (citation, note, derivation changed), host.stream (citation, "
                          "derivation changed), host.write (citation, derivation changed), on_chip.bandwidth "
                          "(derivation changed) and 1 more"), facts


# --- 3. a pair of rounded figures reads as the move it is ----------------------------------------------------------


def test_3_rounded_pairs_carry_the_digits_their_move_needs() -> None:
    # the stack re-fit of walkthrough 56 (one run 145.55 -> 145.65 tokens/s): overhead.layer 96.63 -> 96.62 us
    # over 28 layers, fixed_s 2,705.64 -> 2,705.36 us, -0.01035 %
    assert si_pair(0.00270564, 0.00270536, "s") == ("2.70564 ms", "2.70536 ms")
    assert _first_figure({"fixed_s": 0.00270564}, {"fixed_s": 0.00270536}, ["fixed_s"]) == (
        "fixed_s 2.70564 ms → 2.70536 ms, -0.01035 %")
    assert si_pair(0.0023, 0.0023, "s") == ("2.3 ms", "2.3 ms")
    assert si_pair(0.00270564, 0.00320564, "s") == ("2.706 ms", "3.206 ms")  # +18.48 % reads so at 4 digits
    assert decimals_pair(237.44787516369843, 237.45551557903974) == ("237.448", "237.456")
    assert decimals_pair(996.0966, 1079.1) == ("996.1", "1,079.1")
    assert decimals_pair(5.0, 5.0) == ("5.0", "5.0")


def test_4_a_reviews_expected_price_line_reads_as_its_move() -> None:
    # Before: "237.4 → 237.5  (+0.003218 %) under stack llamacpp-cuda-2405, recorded 237.4": +0.042 % as shown.
    def side(tokens: float) -> SimpleNamespace:
        return SimpleNamespace(price={"stack": "llamacpp-cuda-2405", "expected": {"tokens_per_s": tokens}})

    lock = SimpleNamespace(before=side(237.44787516369843), after=side(237.45551557903974), changed=(),
                           recorded={"expected": {"tokens_per_s": 237.44787516369843}})
    assert _expected_shift(lock) == ("237.448 → 237.456  (+0.003218 %) under stack llamacpp-cuda-2405, recorded "
                                     "237.448")


# --- 5. two facts of one record citing one sentence that states both are not asked of each other's figure ---------


def test_5_a_routing_records_two_facts_under_one_sentence_stating_both_are_not_asked() -> None:
    # Before: each of hot_experts 0.25 and hot_share 0.6 under '32 of the 128 experts take 60 % …' was asked
    # "facts/routing/…: hot_share reads 0.6 at the place … hot_experts cites as 0.25: does … state 0.25?"
    from passprice.addedfacts import asked
    from passprice.facts import Fact, converter
    from passprice.review.changes import _quoted_figures

    sentence = "'32 of the 128 experts take 60 % of the routed token-slots'"

    def fact(value: float) -> Fact:
        return converter().structure({"value": value, "unit": "1", "provenance": "measured", "source": "notes",
                                      "locator": sentence}, Fact)

    rel = "facts/routing/gpt-oss-120b-chat.toml"
    added = [(rel, "routing.hot_experts"), (rel, "routing.hot_share")]
    assert asked({rel: {"routing.hot_experts": fact(0.25), "routing.hot_share": fact(0.6)}}, ["notes"], added,
                 _quoted_figures) == {}
    # a figure the sentence does not state is still asked, with what it quotes
    wrong = asked({rel: {"routing.hot_experts": fact(0.3), "routing.hot_share": fact(0.6)}}, ["notes"], added,
                  _quoted_figures)
    assert wrong[(rel, "routing.hot_experts")].startswith(
        "it is 0.3 but its locator quotes 32 of the 128 (0.25), 60 %: does notes: ")
