"""Attack round 32 (issue 13) on this session's new code: ``reproduce``'s each drifted fact alone, ``diff``'s
changed notes and derivations (``textchange``), the validated cache's small-file rule, walkthrough 19's routing and
stack output, and slip round 28's review changes. Each input that broke something is kept here.

1. A lock made under a serving stack whose stack facts drifted: each drifted fact alone read ``tokens/s unchanged``
   (the limit's, which no stack fact moves) though ``stack.overhead.pass`` alone took the expected price 10.61 %
   down; the first-term line read ``fixed_s; tokens/s +0 %``. Now the expected price's move follows the limit's.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _stack_lock(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    out = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--name", "r1-stack",
                 root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    return root


def _set_stack_value(root: Path, table: str, old: str, new: str) -> None:
    path = root / STACK
    text = path.read_text(encoding="utf-8")
    at = text.index(f"[{table}]\n")
    value = text.index(f"value = {old}\n", at)
    path.write_text(text[:value] + f"value = {new}\n" + text[value + len(f"value = {old}\n"):], encoding="utf-8")


def test_stack_fact_alone_moves_the_expected_price(tmp_path: Path) -> None:
    root = _stack_lock(tmp_path)
    # 500 us more a pass: the recorded expected pass 1.0039 ms (limit) + 2.70564 ms (fixed) = 4.21147 ms at 237.448
    # tokens/s becomes 4.71147 ms, 212.249 tokens/s: 4.21147 / 4.71147 - 1 = -10.61 %; the limit does not move.
    _set_stack_value(root, "overhead.pass", "0.0", "500.0")
    _set_stack_value(root, "memory.reserved", "512", "1024")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    assert lines[at + 1] == "    stack.memory.reserved: tokens/s unchanged, expected tokens/s unchanged"
    assert lines[at + 2] == "    stack.overhead.pass: tokens/s unchanged, expected tokens/s -10.61 %"
    assert lines[at - 1] == (
        "  first term that moved with today's inputs: fixed_s; tokens/s +0 %, expected tokens/s -10.61 %"
    )
    data = json.loads(invoke("reproduce", "locks/r1-stack.lock.toml", "--json", root=root).stdout)
    alone = {a["path"]: a["price"] for a in data["facts_alone"]}
    assert abs(alone["stack.overhead.pass"]["expected"]["tokens_per_s"] - 1.0 / 0.00471147) < 0.01


def test_one_stack_fact_alone_is_the_whole_move(tmp_path: Path) -> None:
    root = _stack_lock(tmp_path)
    _set_stack_value(root, "overhead.pass", "0.0", "500.0")
    out = invoke("reproduce", "locks/r1-stack.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    assert "drifted fact alone" not in out.stdout
    assert out.stdout.splitlines()[-1] == (
        "  first term that moved with today's inputs: fixed_s; tokens/s +0 %, expected tokens/s -10.61 %"
    )
