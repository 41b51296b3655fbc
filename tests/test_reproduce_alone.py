"""``reproduce`` says which drifted fact moved a locked price: each drifted fact alone, the pinned inputs with only
it taken as today's (a reader of a drifted lock saw the facts that drifted and the total move, not whose it was)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import copy_root, invoke

H200 = "h200_sxm_141gb"


def _set(root: Path, path: str, value: str, unit: str) -> None:
    out = invoke("fact", "set", H200, path, "--value", value, "--unit", unit, "--provenance", "published",
                 "--source", "nvidia-h200-datasheet", "--locator", "a test's figure", root=root)  # fmt: skip
    assert out.exit_code == 0, out.output


def test_each_drifted_fact_alone_is_priced(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _set(root, "memory.bandwidth", "5.0", "TB/s")
    _set(root, "memory.capacity", "150", "GB")
    out = invoke("reproduce", "locks/r1-qwen7b-h200-best.lock.toml", root=root)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    # The best lock binds on memory at batch 580: 5.0 / 4.8 TB/s alone is +4.1667 % at the same batch; 150 GB alone
    # lets 618 sequences fit (the lock's batch 580 at 141 GB), +0.346 %.
    assert lines[at + 1] == "    memory.bandwidth: tokens/s +4.167 %"
    assert lines[at + 2] == "    memory.capacity: tokens/s +0.346 % (batch 580 → 618)"
    data = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=root).stdout)
    alone = {a["path"]: a["price"] for a in data["facts_alone"]}
    recorded = json.loads(invoke("price", "r1-qwen7b-h200", "--no-lock", "--json").stdout)["tokens_per_s"]
    # The price lock's batch is fixed: capacity alone moves nothing, bandwidth alone scales the memory-bound pass.
    assert alone["memory.capacity"]["tokens_per_s"] == recorded
    assert abs(alone["memory.bandwidth"]["tokens_per_s"] / recorded - 5.0 / 4.8) < 1e-12


def test_no_drift_no_lines(tmp_path: Path) -> None:
    out = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=copy_root(tmp_path))
    assert out.exit_code == 0 and "drifted fact alone" not in out.stdout


def test_one_drifted_fact_that_is_the_whole_move_is_not_repeated(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _set(root, "memory.bandwidth", "5.0", "TB/s")
    out = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert "drifted fact alone" not in out.stdout
    assert out.stdout.splitlines()[-1] == "  first term that moved with today's inputs: memory_s; tokens/s +4.167 %"
    data = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=root).stdout)
    assert [a["path"] for a in data["facts_alone"]] == ["memory.bandwidth"]  # programs still get it
