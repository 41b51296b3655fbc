"""Three left-overs from issue 13's notes, each reproduced here.

2. ``best --stack S`` said nothing of a paged batch's spread (``--json``'s ``spread`` was ``null``): the limit's 605
   sequences of ``qwen3-30b-a3b-h200`` fit only at the mean position (304 at the last) with or without a stack. Now
   the same line and key, and what the room the stack's runtime leaves (the card less ``memory.reserved``) holds.
"""

from __future__ import annotations

import json

from cli_helpers import invoke

QWEN = "qwen3-30b-a3b-h200"
LLAMA = "llamacpp-cuda-2405"

# --- (2) best --stack's spread -------------------------------------------------------------------------------------


def test_2_best_under_a_stack_says_the_spread_of_both_rooms() -> None:
    alone = json.loads(invoke("best", QWEN, "--json").stdout)["spread"]
    result = invoke("best", QWEN, "--stack", LLAMA, "--json")
    assert result.exit_code == 0, result.output
    spread = json.loads(result.stdout)["spread"]  # was None
    # The limit's batch, counted in the card's memory: as without the stack, by the same function.
    assert {k: v for k, v in spread.items() if k != "stack_last_max_batch"} == alone
    assert alone["last_max_batch"] == 304 and alone["last_held_per_sequence"] == 402_653_184  # 384 MiB: 4,096 positions
    # By hand: 141e9 B less 18.55 GB held once (max-batch's line) less the stack's 536,870,912 B reserved (512 MiB)
    # is 121.91e9 B, over 402,653,184 B a sequence at position 4,095: 302.8, so 302 (303 needs under 18.46 GB held
    # once, 302 at most 18.86 GB: 18.55 GB, rounded to four figures, lies between).
    assert spread["stack_last_max_batch"] == 302
    max_batch = json.loads(invoke("max-batch", QWEN, "--stack", LLAMA, "--json").stdout)
    assert max_batch["reserved_bytes"] == 536_870_912 and max_batch["expected_max_batch"] == 603  # at the mean


def test_2_best_under_a_stack_prints_the_spread_line() -> None:
    result = invoke("best", QWEN, "--stack", LLAMA)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("  spread ")]
    assert lines == [
        "  spread        605 sequences counted each at the mean position 2,048 (202.1 MB a sequence, the paged "
        "cache's position + half a page): they fit only while their positions stay spread about it; were every "
        "sequence at its last position, 4,095 of its 4,096 limit (402.7 MB a sequence: its limit's whole pages), "
        "memory would hold 304 (`--position 4095`); under stack llamacpp-cuda-2405, whose runtime reserves 536.9 MB, "
        "302 would fit were every sequence there, so its best batch 1 fits however their positions stand"], lines
    # a contiguous cache holds its limit whatever the position: no line, null, under a stack too
    assert json.loads(invoke("best", "r1-qwen7b-h200", "--stack", LLAMA, "--json").stdout)["spread"] is None
    assert "spread  " not in invoke("best", "r1-qwen7b-h200", "--stack", LLAMA).stdout
