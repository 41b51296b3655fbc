"""Findings of session 9's second README-only walkthrough (after the day's merges), each kept as a test."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"


def test_audit_of_a_lock_made_under_a_stack_audits_its_expected_price_on_the_pinned_stack_facts(
    tmp_path: Path,
) -> None:
    """`audit LOCK` of a lock made with `--stack` warned that it did not reproduce (recorded and re-priced both
    996.0966124437687 tokens/s: the lock's stack fields, fixed_s first, were compared with the limit's), and left
    out the 13 stack facts and the expected price it records. It now audits that expected price, as `audit SERVING
    --stack S` does, on the facts the lock pinned."""
    root = copy_root(tmp_path)
    lock = str(root / "locks" / "r1-stack.lock.toml")
    made = invoke("lock", R1, "--stack", STACK, "-o", lock, root=root)
    assert made.exit_code == 0, made.stderr
    out = invoke("audit", lock, root=root)
    assert out.exit_code == 0, out.stderr
    assert "does not reproduce" not in out.stderr and "WARNING" not in out.stdout
    lines = out.stdout.splitlines()
    assert lines[0].endswith(f"on h200_sxm_141gb, expected under stack {STACK} (pinned)")
    assert lines[1].startswith("  237.4 tokens/s at batch 1, binds on memory")
    share = next(line for line in lines if "stack.share.read" in line)
    assert share.split()[-1] == "+0.233"  # 0.987 ms of a 4.211 ms pass read at the stack's share, by hand 0.2326
    data = json.loads(invoke("audit", lock, "--json", root=root).stdout)
    assert data["reproduces"] is True


def test_a_stack_fact_that_drifted_is_named_as_the_cause_of_a_moved_price(tmp_path: Path) -> None:
    """`price --lock L` of a lock made under a stack, after the stack's `memory.reserved` went 512 → 1024 MiB, said
    "no pinned fact or serving choice drifted: the pricing model (code) or the checkpoint moved it", while
    `reproduce` named the drifted stack fact. The price's lock line now names it."""
    root = copy_root(tmp_path)
    lock = str(root / "locks" / "r1-stack.lock.toml")
    assert invoke("lock", R1, "--stack", STACK, "-o", lock, root=root).exit_code == 0
    stack = root / "facts" / "stacks" / f"{STACK}.toml"
    text = stack.read_text(encoding="utf-8")
    head, tail = text.split("[memory.reserved]\nvalue = 512\n", 1)
    stack.write_text(f"{head}[memory.reserved]\nvalue = 1024\n{tail}", encoding="utf-8")
    out = invoke("price", "--lock", lock, root=root)
    assert out.exit_code == 0, out.stderr
    assert "drifted since the lock: stack.memory.reserved: 512 MiB (estimated) → 1024 MiB (estimated)" in out.stdout
    assert "no pinned fact or serving choice drifted" not in out.stdout


def test_sweep_max_tpot_says_when_the_grid_not_the_cap_bounds_the_best_batch(tmp_path: Path) -> None:
    """`sweep … --batches 1-100 --max-tpot 0.01` said the best batch within 10 ms was 100 (at 3.807 ms), where
    `best --max-tpot 0.01` finds 318: the grid stopped it. The line now says so; on the RTX 3080 the best (25) is
    where memory stops the batch, below the grid's largest, and gets no such note."""
    out = invoke("sweep", R1, "--cards", "h200_sxm_141gb,rtx_3080", "--batches", "1-100", "--max-tpot", "0.01",
                 "--no-lock", "-o", str(tmp_path / "x.csv"))
    assert out.exit_code == 0, out.stderr
    lines = out.stderr.splitlines()
    h200 = next(line for line in lines if "on h200_sxm_141gb: best batch" in line)
    assert h200.endswith(": 100, 26,268.3 tokens/s at 3.807 ms — the grid's largest batch: the grid, not the cap, "
                         "bounds it (`passprice best --max-tpot` searches every batch)")
    rtx = next(line for line in lines if "on rtx_3080: best batch" in line)
    assert rtx.endswith(": 25, 2,505.7 tokens/s at 9.977 ms")
