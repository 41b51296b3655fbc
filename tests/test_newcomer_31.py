"""Findings of the thirty-first walkthrough: an auditor at a cloud buyer, sent a lock file of last quarter
(``git show 1e835f8:locks/…``, outside git), following README.md alone: the historic price reproduced from the lock,
every citation it rests on traced, what changed since, a mixture of experts' routing record and a speculative-decoding
price's drafting method checked."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, invoke
from passprice.derivations import Derivation
from passprice.facts import Fact, Provenance
from passprice.reproduce import rewrite_said, rewritten_parts

#: The commit the auditor's lock files come from (2026-12-01: "Re-lock the registered locks with --update after
#: merging issue 16"): its locks were written before `derivation.digits` and before the [routing]/[draft] tables.
OLD = "1e835f8"

SOURCES_LINE = (
    "  sources       the source records above are today's: a lock pins each fact's source id and locator, not the "
    "record, and no commit here holds this lock file to compare them with (a lock committed in a git registry is "
    "compared)"
)
MTP_NOTE = (
    "As far as we know Qwen publishes no per-draft acceptance rate for the MTP head of its Qwen3.5 (or Qwen3-Next) "
    "checkpoints, so no figure here is published or measured: acceptance.1 is an estimate from DeepSeek-V3's published "
    "MTP acceptance, acceptance.2 and acceptance.3 are placeholders. Acceptance depends strongly on the text (code "
    "accepts far more drafts than free prose); replace these with a cited measurement on the workload priced."
)
METHOD = "  qwen35-mtp — Qwen3.5 MTP block (up to three drafts, the block reused) (facts/drafts/qwen35-mtp.toml)"
DRAFTING = "drafting method (how the drafts are accepted: the draft.acceptance.* facts above):"


def handed_over(tmp_path: Path, name: str) -> Path:
    """The lock ``name`` as it was at :data:`OLD`, written to a file outside git (as mailed to the auditor)."""
    text = subprocess.run(["git", "-C", str(REPO), "show", f"{OLD}:locks/{name}.lock.toml"], check=True,
                          capture_output=True).stdout
    path = tmp_path / f"{name}.q3.lock.toml"
    path.write_bytes(text)
    return path


# --- (1) what drifted since the lock: a derivation given its digits read "citation or note changed" ----------------


def test_reproduce_of_last_quarters_lock_names_a_derivation_rewritten_alone(tmp_path: Path) -> None:
    # Was: "scale: 33.5 Tcycle/s (estimated) → 33.5 Tcycle/s (estimated) (citation or note changed)" and
    # "draft.acceptance.2, scale: tokens/s unchanged (each its citation or note alone changed: …)", while both facts'
    # source, locator and note are the pinned ones: only `derivation.digits = 4` was added since (session 25).
    lock = handed_over(tmp_path, "qwen35-27b-h200-mtp")
    result = invoke("reproduce", str(lock))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == ("  reproduces: the pricing model changed since the lock; every recorded field reproduces: "
                        "3644.210997903983 tokens/s at batch 16, binds on memory, from its 16 pinned facts")
    # (and since session 36, cite67, the three stream shares' Azure locators quote their rows verbatim: their
    # citation and their derivation's input locators changed, the figures not)
    # (and since session 40, cite71, the H100 whitepaper's locators quote its text: on_chip.capacity's and scale's
    # citations changed too; draft.acceptance.2 is still the derivation rewritten alone)
    # (left52: each part that changed named, in fact set's words: "citation or note changed; derivation changed"
    # read of facts whose notes are the pinned ones, and "each its citation, note or derivation alone changed")
    # (and since session 43, left60, the H200's memory.capacity, host.capacity and host.read notes no longer name an
    # MLPerf v4.1 file no source record registers: a note changed on each)
    # (cite102: the H200's memory and rate facts cite its product page since: array, memory.bandwidth,
    # memory.capacity and vector drift too, 10 in all)
    # (fix54w: each briefly, the first 5, the rest counted; the value once where it is the pinned one)
    assert ("    facts          10 drifted, every value as pinned: array: 989.5 TMAC/s (note changed); "
            "draft.acceptance.2: 0.75 (derivation changed: digits none → 4); memory.bandwidth: 4.8 TB/s (citation "
            "changed), source nvidia-h200-datasheet → nvidia-h200-product-page; memory.capacity: 141 GB (citation, "
            "note changed), source nvidia-h200-datasheet → nvidia-h200-product-page; on_chip.capacity: 115088 KiB "
            "(citation, derivation changed); and 5 more (reproduce --json's facts_drifted lists each) (of those the "
            "price reads); no drift in 5 pinned facts changed today that it does not read: host.capacity (note "
            "changed), host.read (citation, note, derivation changed), host.stream (citation, derivation changed), "
            "host.write (citation, derivation changed), on_chip.bandwidth (derivation changed)") in lines
    assert lines[-1] == ("    array, draft.acceptance.2, memory.bandwidth, memory.capacity, on_chip.capacity, scale, "
                         "streams.append, streams.read, streams.rewrite, vector: tokens/s unchanged (each its "
                         "citation, note or derivation alone changed: the figure and provenance are the pinned ones)")
    # The recorded price by hand, from the lock's [price] bytes and [facts] values (README, Checking a price by
    # hand): emitted a sequence = 1 + a1 + a1·a2 = 1 + 0.85 + 0.85 × 0.75 = 2.4875; memory = weights at 4.8 TB/s ×
    # streams.read 0.9333 + 16 × (appended bytes at × 0.8646 + rewritten state at × 0.8333).
    emitted = 1 + 0.85 + 0.85 * 0.75
    assert emitted == 2.4875
    weights = 17_032_543_232 / (4.8e12 * 0.9333)  # 3.802 ms
    appended = (1_823_940_608 - 603_979_776) / (4.8e12 * 0.8646)  # 294.0 µs
    rewritten = 603_979_776 / (4.8e12 * 0.8333)  # 151.0 µs
    memory_s = weights + 16 * (appended + rewritten)
    assert (round(weights * 1e3, 3), round(appended * 1e6, 1), round(rewritten * 1e6, 1)) == (3.802, 294.0, 151.0)
    assert memory_s == 0.010921431284547329
    assert 16 * emitted / memory_s == 3644.210997903983
    data = json.loads(invoke("reproduce", str(lock), "--json").stdout)
    assert data["price"]["tokens_per_s"] == 16 * emitted / memory_s
    assert data["price"]["memory_s"] == memory_s


def test_what_a_rewrite_says_names_the_parts_rewritten() -> None:
    base = Fact(0.75, 0.75, "1", Provenance.ASSUMED, source="qwen35-mtp-review", locator="a place",
                derivation=Derivation("first - step", ()))
    digits = attrs.evolve(base, derivation=Derivation("first - step", (), 4))
    assert rewritten_parts(base, digits) == ("derivation",)
    assert rewrite_said(base, digits) == "derivation changed: digits none → 4"
    assert rewrite_said(digits, base) == "derivation changed: digits 4 → none"
    formula = attrs.evolve(base, derivation=Derivation("first - 2 * step", ()))
    assert rewrite_said(base, formula) == "derivation changed"
    # left52: in fact set's words (factparts.change_said): "derivation changed: added" / ": removed" before
    assert rewrite_said(attrs.evolve(base, derivation=None), base) == "derivation added"
    assert rewrite_said(base, attrs.evolve(base, derivation=None)) == "derivation removed"
    recited = attrs.evolve(base, locator="another place")
    assert rewritten_parts(base, recited) == ("citation",)
    assert rewrite_said(base, recited) == "citation changed"  # "citation or note changed" before left52
    assert rewrite_said(base, attrs.evolve(base, note="n")) == "note added"
    assert rewrite_said(base, attrs.evolve(recited, note="n", derivation=digits.derivation)) == (
        "citation changed, note added, derivation changed: digits none → 4")  # "citation or note changed; …"
    assert rewrite_said(base, attrs.evolve(recited, derivation=formula.derivation)) == "citation, derivation changed"


# --- (2) the citations of a speculative-decoding price: the drafting method went unnamed ----------------------------


def test_audit_names_the_drafting_method_its_file_and_note(tmp_path: Path) -> None:
    # Was: `audit qwen35-27b-h200-mtp` listed draft.acceptance.1 and .2 with their citations (one of them
    # "qwen35-mtp-review — [method] note and this figure's note: a placeholder"), but named neither the drafting
    # method nor its file, and the [method] note that citation points to showed nowhere (a routing record is shown).
    lines = invoke("audit", "qwen35-27b-h200-mtp").stdout.splitlines()
    at = lines.index(DRAFTING)
    assert lines[at + 1:at + 3] == [METHOD, f"  note: {MTP_NOTE}"]
    # the shipped lock pins the method's title and note ([draft], slip round 44): its audit shows those, saying so
    locked = invoke("audit", "locks/qwen35-27b-h200-mtp.lock.toml").stdout.splitlines()
    at = locked.index(DRAFTING)
    assert locked[at + 1:at + 3] == [METHOD, f"  note (as the lock pinned it): {MTP_NOTE}"]
    # last quarter's lock has no [draft] table: today's method's note, said to be today's
    old = invoke("audit", str(handed_over(tmp_path, "qwen35-27b-h200-mtp"))).stdout.splitlines()
    at = old.index(DRAFTING)
    assert old[at + 1:at + 3] == [METHOD, f"  note (today's record): {MTP_NOTE}"]
    data = json.loads(invoke("audit", "qwen35-27b-h200-mtp", "--json").stdout)
    assert data["draft"] == {"record": "qwen35-mtp", "title": "Qwen3.5 MTP block (up to three drafts, the block "
                             "reused)", "file": "facts/drafts/qwen35-mtp.toml", "note": MTP_NOTE}
    markdown = invoke("audit", "qwen35-27b-h200-mtp", "--format", "markdown").stdout
    assert ("\n\nDrafting method: qwen35-mtp — Qwen3.5 MTP block (up to three drafts, the block reused) "
            "(facts/drafts/qwen35-mtp.toml)\n- note: As far as we know") in markdown
    assert "drafting method" not in invoke("audit", "r1-qwen7b-h200").stdout
    assert "draft" not in json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)


def test_audit_of_a_moe_lock_shows_the_routing_note_it_pinned_or_todays(tmp_path: Path) -> None:
    head = "routing record (how the mixture of experts' rows route: the routing.* facts above):"
    locked = invoke("audit", "locks/qwen3-30b-a3b-h200.lock.toml").stdout.splitlines()
    assert locked[locked.index(head) + 2].startswith("  note (as the lock pinned it): The source counts, per MoE layer")
    old = invoke("audit", str(handed_over(tmp_path, "qwen3-30b-a3b-h200"))).stdout.splitlines()
    at = old.index(head)
    assert old[at + 1] == ("  qwen3-30b-a3b-measured — Qwen3-30B-A3B, measured skew (single-domain Python, ~8k "
                           "tokens) (facts/routing/qwen3-30b-a3b-measured.toml)")
    assert old[at + 2].startswith("  note (today's record): The source counts, per MoE layer")
    # the measurement the routing rests on: 58 of 128 experts hold 90 % of the routing (the handbook's table row)
    assert ("    routing.hot_experts: table 'The real result - Qwen3 routes near-uniform', row 'narrow (single-domain "
            "Python)', ~8k tokens: experts for 90% coverage 58/128 (45%)") in old
    # walkthrough 35: the inputs in the formula's order, as the serving's audit lists them (the lock's were sorted)
    assert ("  routing.hot_experts: hot / experts; hot = 58 (row 'narrow (single-domain Python)': experts for 90% "
            "coverage, 58 of 128); experts = 128 (row 'narrow (single-domain Python)': of 128 experts)") in old


def test_the_moe_price_by_hand_from_its_routing_record() -> None:
    # README, Mixtures of experts: p = k·hot_share/(hot_experts·E) for the 58 hot experts, k·(1−hot_share)/((1−
    # hot_experts)·E) for the other 70; D(T) = Σ 1 − (1 − p)^T expected distinct experts for T token-rows.
    hot, cold = 8 * 0.9 / 58, 8 * 0.1 / 70
    assert (round(hot, 4), round(cold, 5)) == (0.1241, 0.01143)
    distinct = 58 * (1 - (1 - hot) ** 64) + 70 * (1 - (1 - cold) ** 64)
    assert round(distinct, 2) == 94.44
    assert round(58 * (1 - (1 - hot) ** 8) + 70 * (1 - (1 - cold) ** 8), 2) == 44.06  # README's 8 token-rows
    data = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json").stdout)
    routing = data["routing"]
    assert (routing["experts"], routing["used"], routing["tokens"]) == (128, 8, 64)
    assert routing["distinct"] == pytest.approx(distinct, rel=1e-13)
    assert routing["bytes"] == pytest.approx(distinct / 128 * 17_553_162_240, rel=1e-13)
    assert routing["experts_held_bytes"] == 17_553_162_240
    # 13,774,102,215 B of weights (the 12.95 GB of experts routed + the rest) at 4.8 TB/s × 0.9333, and 64
    # sequences of 201,424,896 B at 4.8 TB/s × 0.8646: 6.181 ms, 64 / 6.181 ms = 10,354.4 tokens/s.
    memory_s = data["weight_bytes"] / (4.8e12 * 0.9333) + 64 * 201_424_896 / (4.8e12 * 0.8646)
    assert round(data["weight_bytes"]) == 13_774_102_215
    assert memory_s == data["memory_s"] == 0.0061809379671941365
    assert 64 / memory_s == data["tokens_per_s"] == 10354.415517464427


# --- (3) a lock handed over outside git: its audit showed today's source records without a word -------------------


def test_audit_of_a_lock_no_commit_holds_says_its_source_records_are_todays(tmp_path: Path) -> None:
    # A lock written out of this history is compared at the commit its [lock] digest finds (tests/test_fix188.py);
    # one no commit holds byte for byte (a comment added) is not
    handed = handed_over(tmp_path, "r1-qwen7b-h200")
    found = json.loads(invoke("audit", str(handed), "--json").stdout)
    assert found["sources_compared"] is True
    assert {s["commit"][:7] for s in found["sources_since_lock"]} == {OLD}
    handed.write_bytes(handed.read_bytes() + b"# mailed\n")
    result = invoke("audit", str(handed))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == SOURCES_LINE
    data = json.loads(invoke("audit", str(tmp_path / "r1-qwen7b-h200.q3.lock.toml"), "--json").stdout)
    assert data["sources_compared"] is False and data["sources_since_lock"] == []
    # the registry's own committed lock is compared (nothing changed since: nothing said), and a serving has no lock
    shipped = invoke("audit", "locks/r1-qwen7b-h200.lock.toml")
    assert SOURCES_LINE not in shipped.stdout.splitlines()
    assert json.loads(invoke("audit", "locks/r1-qwen7b-h200.lock.toml", "--json").stdout)["sources_compared"] is True
    assert "sources_compared" not in json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)


# --- (4) README: the review's paragraph of ~100 lines, as steps a reviewer can follow ----------------------------


def test_readme_reviewing_a_fact_change_is_steps_and_bullets() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Reviewing a fact change\n", 1)[1].split("\nA lock (`passprice lock SERVING`) pins", 1)[0]
    steps = re.findall(r"^(\d)\. \*\*([^*]+)\*\*", section, flags=re.M)
    assert [n for n, _ in steps] == ["1", "2", "3", "4", "5", "6", "7"]
    assert steps[2][1] == "Run the review:"
    for head in ("**What changed, file by file.**", "**How the locks are re-priced.**",
                 "**Stale derived facts and stale stack fits.**", "**Exit status.**", "**To verify.**"):
        assert f"\n{head}" in section
    # no run of prose (not a list item or its continuation) longer than 3 lines
    prose = 0
    for line in section.splitlines():
        prose = prose + 1 if line and not line.startswith((" ", "-", "1", "2", "3", "4", "5", "6", "7")) else 0
        assert prose <= 3, line
