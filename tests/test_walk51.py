"""Walkthrough 51 (a team's three months: a corrected L40S bandwidth, a routing record, a locator): what an audit of
a fact or a source finds resting on it through a serving stack's fit, whose runs are priced on the card."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import REPO, invoke
from passprice.lineage import RUN_CARD_PATHS, FactRef, fact_lineage, paths_text
from passprice.registry import Root

NINE = {f"stack.{p}" for p in ("overhead.pass", "overhead.layer", "share.read", "share.append", "share.array",
                               "share.float", "share.vector", "share.scale", "terms.serial")}


def test_a_card_fact_s_audit_follows_the_stack_fitted_to_runs_on_that_card() -> None:
    # Correcting the L40S's bandwidth (864 -> 900 GB/s) made `check` re-fit llama.cpp's stack and moved the H200 lock
    # under it (expected +0.005869 %), yet `audit --fact l40s:memory.bandwidth` said "facts derived from it: 0" and
    # named no lock. 12 of the stack's 111 runs are on the L40S; range.* is read off the runs, never priced.
    a = fact_lineage(Root(REPO), FactRef("card", "l40s", "memory.bandwidth"))
    assert {path for _, path, _, _, _ in a.fitted} == NINE
    assert {(runs, total) for _, _, _, runs, total in a.fitted} == {(12, 111)}
    assert a.fitted_on_cards == (("llamacpp-cuda-2405", "l40s", ("memory.bandwidth",)),)
    assert a.fitted_through == () and a.derived == ()
    lock = next(lock for lock in a.locks if lock.name == "r1-qwen7b-h200-llamacpp")
    assert set(lock.rests_on) <= NINE and "stack.share.read" in lock.rests_on and lock.breaks
    data = a.to_json()
    assert data["fitted_on_cards"] == [{"stack": "llamacpp-cuda-2405", "card": "l40s", "paths": ["memory.bandwidth"]}]
    # A fact no pass's time reads reaches no fit: capacity decides what fits, not a pass's time.
    assert "memory.capacity" not in RUN_CARD_PATHS and "on_chip.capacity" not in RUN_CARD_PATHS


def test_a_lock_s_stack_facts_are_counted_in_the_audit_table() -> None:
    # Its 12 stack facts made each row of the source audit's lock table about 300 characters wide.
    assert paths_text(["streams.read", "stack.share.read", "stack.share.append", "stack.terms.serial"]) == (
        "streams.read, stack.share.read and 2 more stack facts")
    assert paths_text(["memory.bandwidth", "stack.share.read"], lambda p: f"`{p}`") == (
        "`memory.bandwidth`, `stack.share.read`")
    out = invoke("audit", "--fact", "l40s:memory.bandwidth")
    assert out.exit_code == 0, out.output
    assert ("  (llamacpp-cuda-2405's runs on card l40s read its memory.bandwidth, the fact or derived from it: the fit "
            "rests on it)\n") in out.stdout
    row = next(line for line in out.stdout.splitlines() if line.startswith("r1-qwen7b-h200-llamacpp "))
    assert "stack.overhead.layer and 7 more stack facts" in row and len(row) < 200


def test_a_price_on_another_routing_record_says_the_serving_differs_not_that_the_locked_record_drifted(
    tmp_path: Path,
) -> None:
    # `price moe-l40s --routing qwen3-30b-a3b-team-chat` said "drifted since the lock: routing.hot_experts: 0.453125
    # (measured) → 0.3125 (measured)" and "routing.hot_share: 0.9 (measured) → 0.9 (measured) (citation or note
    # changed)": the locked record, qwen3-30b-a3b-measured, had not changed; the serving priced another one.
    measured = (REPO / "facts" / "routing" / "qwen3-30b-a3b-measured.toml").read_text()
    team = tmp_path / "team-chat.toml"  # a team's own measurement: 40 of 128 experts take 90 % of the slots
    team.write_text(measured.replace("value = 0.453125", "value = 0.3125").replace("hot = { value = 58",
                                                                                   "hot = { value = 40"))
    out = invoke("price", "qwen3-30b-a3b-h200", "--routing", str(team))
    assert out.exit_code == 0, out.output
    assert f"serving differs from the locked one: routing: qwen3-30b-a3b-measured → {team}" in out.stdout
    # 10,354.4 recorded at batch 64; the hotter set reads fewer distinct experts' bytes: +8.31 %
    assert "today 11,215.1 tokens/s at batch 64 (+8.31 %, first moved: weight_bytes)" in out.stdout
    assert "drifted since the lock" not in out.stdout


def test_the_sources_listing_counts_the_locks_resting_on_a_source_through_a_stack_s_fit() -> None:
    # `passprice sources` counted 0 locks on the L40S datasheet where `audit --source` finds the lock under llama.cpp's
    # stack, whose 12 L40S runs are priced at the datasheet's bandwidth: the listing and the audit now agree.
    from passprice.lineage import source_uses

    uses, problems = source_uses(Root(REPO))
    assert problems == []
    locks = {u.source.id: set(u.locks) for u in uses}
    assert locks["nvidia-l40s-datasheet"] == {"r1-qwen7b-h200-llamacpp"}
    assert locks["lmdeploy-a100-fp16-benchmark"] == set()  # its 17 runs' stack locks nothing
