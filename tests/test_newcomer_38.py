"""Findings of the 38th README-only walkthrough (issue 13, an auditor's): handed "r1-qwen7b-h200 on H200: N tokens/s,
lock X" from a slide, reproduce it from the shipped lock, trace each figure to its citation, find the weakest
provenance and what a stricter lock would need, check the price under the shipped stack lock and the runs it was
fitted on, and write the audit as Markdown for a ticket. Each finding is kept as a reproducer: the audit of the
llama.cpp stack lock (text, Markdown, JSON) said nothing of its price lying outside the span its fitted runs measured,
nor that none of them ran on an H200 (``price --stack`` says both); a lock whose floors refuse its own price named the
facts below them but not what would have to change; and a lock cited by its digest, as the README asks, was looked
up as a file name and answered ``no such file``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

STACK_LOCK = "r1-qwen7b-h200-llamacpp"
#: The shipped best lock's digest, read from the file (a re-lock changes it): sha256:f1d04adf695d… when written.
BEST_DIGEST = str(tomllib.loads((REPO / "locks" / "r1-qwen7b-h200-best.lock.toml").read_text(encoding="utf-8"))
                  ["lock"]["digest"])
FITTED = ("a100_pcie_80gb, a100_sxm4_80gb, a40, h100_pcie_80gb, l40s, rtx_3080, rtx_3090, rtx_4080, rtx_4090, "
          "rtx_6000_ada, rtx_a6000")
SPAN = ("its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × measured); this price's "
        "0.2384 (the limit 4.2 × expected) lies outside: an extrapolation of the fit")
REACH = (f"stack llamacpp-cuda-2405 was fitted on runs on 11 cards ({FITTED}), not h200_sxm_141gb: its expected price "
         "here extrapolates across cards (with a card held out of the fit, its error was 6.9 % on average, 20.4 % at "
         "most)")
SPAN_WARNING = ("passprice: warning: stack llamacpp-cuda-2405's expected price here is 0.2384 × the limit (the limit "
                "4.2 × expected), outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs "
                "measured: the fit is extrapolated here")


# --- 1. the audit of a price under a stack says the fit is extrapolated there, in its body -------------------------


def test_1_the_audit_of_the_stack_lock_prints_its_fitted_span_and_the_cards_its_runs_measured() -> None:
    # Before: `audit r1-qwen7b-h200-llamacpp` printed 237.4 tokens/s with no word that 0.2384 × the limit lies
    # outside the 0.3425 … 0.8519 its 111 runs measured, nor that no run was on an H200: stdout and stderr silent.
    result = invoke("audit", STACK_LOCK)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index(f"  fitted span   {SPAN}")
    assert lines[at + 1] == f"  fit reach     {REACH}"
    assert lines[at - 1] == "" and lines[at + 2] == ""
    assert lines[1] == ("  237.4 tokens/s at batch 1, binds on memory; weakest provenance estimated (scale, "
                        "on_chip.capacity, stack.memory.reserved)")
    assert result.stderr.splitlines() == [f"passprice: warning: {REACH}", SPAN_WARNING]


def test_2_the_markdown_of_the_stack_lock_audit_carries_both_lines_for_a_ticket() -> None:
    result = invoke("audit", STACK_LOCK, "--format", "markdown")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index(f"- ⚠️ **fitted span**: {SPAN}")
    assert lines[at + 1] == f"- ⚠️ **fit reach**: {REACH}"


def test_3_the_json_of_the_stack_lock_audit_gives_stack_span_and_stack_reach() -> None:
    result = invoke("audit", STACK_LOCK, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    span = data["stack_span"]
    assert (span["runs"], span["batch"], span["inside"]) == (111, None, False)
    assert (round(span["low"], 4), round(span["high"], 4), round(span["ratio"], 4)) == (0.3425, 0.8519, 0.2384)
    assert data["stack_reach"] == [REACH]
    assert round(data["tokens_per_s"], 1) == 237.4


def test_4_audit_serving_under_the_stack_prints_the_span_too_and_a_limit_audit_none() -> None:
    under = invoke("audit", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert under.exit_code == 0, under.output
    assert f"  fitted span   {SPAN}" in under.stdout.splitlines()
    assert f"  fit reach     {REACH}" in under.stdout.splitlines()
    assert under.stderr.splitlines().count(SPAN_WARNING) == 1  # warned once, not twice
    limit = invoke("audit", "r1-qwen7b-h200-best", "--json")
    assert limit.exit_code == 0, limit.output
    data = json.loads(limit.stdout)
    assert "stack_span" not in data and "stack_reach" not in data
    text = invoke("audit", "r1-qwen7b-h200-best")
    assert "fitted span" not in text.stdout and "fit reach" not in text.stdout and text.stderr == ""


# --- 2. a lock whose floors refuse its own price says what would have to change -------------------------------------


def test_5_a_stricter_lock_refused_names_the_provenance_each_fact_needs_and_the_require_that_floors_it(
    tmp_path: Path,
) -> None:
    # Before: "...; locks/strict.lock.toml not written" — which facts, not what to do.
    root = copy_root(tmp_path)
    target = root / "locks" / "strict.lock.toml"
    result = invoke("lock", "r1-qwen7b-h200", "--best", "--floor", "derived", "-o", str(target), root=root)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "passprice: refused: LockFloor: lock strict refuses this price: scale is estimated, below the floor derived; "
        "on_chip.capacity is estimated, below the floor derived (the price's weakest provenance is estimated, carried "
        f"by scale, on_chip.capacity); {target} not written (for these floors to accept it, strengthen scale to "
        "derived or above and on_chip.capacity to derived or above with a citation that backs them, e.g. passprice "
        "fact set h200_sxm_141gb scale --provenance derived --source ID --locator LOCATOR … in a registry of your "
        "own; or floor them at their own provenance on purpose: --require scale=estimated --require "
        "on_chip.capacity=estimated)"
    ]
    assert not target.exists()
    # The advice taken: floored at their own provenance, the lock is written at 33,339.2 tokens/s.
    ok = invoke("lock", "r1-qwen7b-h200", "--best", "--floor", "derived", "--require", "scale=estimated",
                "--require", "on_chip.capacity=estimated", "-o", str(target), "--json", root=root)
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["price"]["tokens_per_s"] == 33339.20102265113


def test_6_a_stack_fact_below_its_floor_gets_no_card_command(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    target = root / "locks" / "strict.lock.toml"
    result = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--require",
                    "stack.memory.reserved=measured", "-o", str(target), "--json", root=root)
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["advice"] == (
        "for these floors to accept it, strengthen stack.memory.reserved to measured or above with a citation that "
        "backs it; or floor it at its own provenance on purpose: --require stack.memory.reserved=estimated"
    )


# --- 3. a lock cited by its digest names the lock it is --------------------------------------------------------------


@pytest.mark.parametrize("ref", [BEST_DIGEST, BEST_DIGEST.removeprefix("sha256:")[:12],
                                 BEST_DIGEST.removeprefix("sha256:")[:8].upper()])
def test_7_a_digest_given_for_a_lock_names_the_lock_whose_digest_it_is(ref: str) -> None:
    # Before: "lock 'f1d04adf695d': no such file, and not in …/locks (locks: …)"; audit took it for a serving. Then
    # an error naming the lock ("name the lock by its name or file"); since tests/test_walk117.py a digest that names
    # exactly one lock here is that lock, as the README's `audit DIGEST` has it.
    for command in ("reproduce", "audit"):
        result = invoke(command, ref)
        assert result.exit_code == 0, result.output
        first = result.stdout.splitlines()[0]
        assert first.startswith(("r1-qwen7b-h200-best (locks/r1-qwen7b-h200-best.lock.toml): best lock of serving",
                                 "audit of lock r1-qwen7b-h200-best (pinned facts):")), first


def test_8_a_digest_no_lock_has_says_so_and_how_to_read_one() -> None:
    result = invoke("reproduce", "sha256:00000000")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: lock 'sha256:00000000': no such file, and no lock in {REPO / 'locks'} has that [lock] "
        "digest (locks: gemma3-270m-h100, gpt-oss-120b-h100, qwen3-30b-a3b-h200, qwen35-27b-h100-every8, "
        "qwen35-27b-h200-mtp, qwen35-27b-ws1-trailing, r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, "
        "r1-qwen7b-mi300x-int8kv; passprice audit NAME prints a lock's digest): the lock cited may have been "
        "re-locked since, or be of another registry"
    ]
    # a short hex word is still a name: not looked up as a digest
    short = invoke("reproduce", "abc123")
    assert short.exit_code == 2 and "no such file, and not in" in short.stderr


# --- 4. each fitted run's citation is one command away ---------------------------------------------------------------


def test_9_validate_json_gives_each_runs_file_source_and_locator() -> None:
    # Before: the audit named the measurement file and its source; no command gave a run's own locator.
    result = invoke("validate", "--stack", "llamacpp-cuda-2405", "--json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert len(runs) == 111
    first = runs[0]
    assert (first["id"], first["file"], first["source"], first["locator"], first["measured"]) == (
        "xd3.h100_pcie_80gb.8b-q4km.tg512",
        "registry/measurements/xiongjiedai-llama3-llamabench.toml",
        "xiongjiedai-gpu-benchmarks",
        "LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row '| llama 8B Q4_K - Medium         |   "
        "4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 ± 0.80 |'",
        145.55,
    )
    assert {r["source"] for r in runs} == {"xiongjiedai-gpu-benchmarks"}
    assert all(r["locator"] for r in runs)
