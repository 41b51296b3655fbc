"""Slip round 39 (issue 13: review/audit gaps left by session 24's rounds), each reproduced first.

1. ``diff --format json``: each lock's ``serving_changed`` was text alone; ``serving_differences`` now gives the same
   changes as ``reproduce --json`` does, one ``{"field", "locked", "now"}`` a line (BASE's value, HEAD's).
2. ``passprice sources`` listed a source only measured runs cite (``ggml-org-llama-cpp``, 11 runs) as "0 facts, 0
   locks, –": a ``runs`` column (and ``--json`` key) counts the runs citing each source, as ``audit --source`` does.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, invoke
from test_diff import commit_all
from test_slip_34 import branch, registry, review

__all__ = ["registry"]  # the slip-34 fixture: this checkout's registry committed on main


# 1. diff --json: each lock's serving changes structured, as reproduce --json gives them.


def test_1_diff_json_gives_each_locks_serving_changes_structured(registry: Path) -> None:
    path = branch(registry, "serving-edit")
    serving = path / "registry" / "servings" / "r1-qwen7b-h200.toml"
    text = serving.read_text()
    assert "\nbatch = 1\n" in text and '\nflush = "every-pass"\n' in text
    serving.write_text(text.replace("\nbatch = 1\n", "\nbatch = 2\n").replace(
        '\nflush = "every-pass"\n', '\nflush = "every:4"\n'))
    (path / "registry" / "servings" / "r1-qwen7b-mi300x-int8kv.toml").unlink()
    commit_all(path, "batch 2, flush every 4; a serving removed")
    _, _, out = review(path)
    locks = {lock["name"]: lock for lock in out["locks"]}
    edited = locks["r1-qwen7b-h200"]
    assert edited["serving_changed"] == ["batch: 1 → 2", "flush: every-pass → every:4"]
    # Before: no serving_differences key (the text lines alone).
    assert edited["serving_differences"] == [{"field": "serving.batch", "locked": 1, "now": 2},
                                             {"field": "serving.flush", "locked": "every-pass", "now": "every:4"}]
    gone = locks["r1-qwen7b-mi300x-int8kv"]
    assert gone["serving_changed"] == ["serving r1-qwen7b-mi300x-int8kv is not registered on HEAD"]
    assert gone["serving_differences"] == [{"field": "registered", "locked": "r1-qwen7b-mi300x-int8kv", "now": None}]
    assert all(len(lock["serving_differences"]) == len(lock["serving_changed"]) for lock in out["locks"])


# 2. passprice sources: the measured runs citing each source, as audit --source counts them.


def test_2_sources_counts_the_runs_citing_each_source() -> None:
    result = invoke("sources")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["source", "kind", "date", "facts", "runs", "locks", "provenance", "it", "supports"]
    rows = {line.split()[0]: line.split() for line in lines[2:] if line[:1].isalpha()}
    # Before: "ggml-org-llama-cpp  repository  unknown  0  0  –", no count of its 11 runs (audit --source: 11).
    assert rows["ggml-org-llama-cpp"][3:7] == ["0", "11", "0", "–"]
    # xiongjiedai: 111 runs of xiongjiedai-llama3-llamabench.toml and 5 of llamacpp-points.toml cite it.
    assert rows["xiongjiedai-gpu-benchmarks"][3:6] == ["12", "116", "0"]
    assert rows["nvidia-h200-datasheet"][3:6] == ["9", "0", "4"]
    listed = {s["id"]: s for s in json.loads(invoke("sources", "--json").stdout)["sources"]}
    assert {k: v["runs"] for k, v in listed.items() if v["runs"]} == {
        "ggml-org-llama-cpp": 11, "lmdeploy-a100-fp16-benchmark": 17, "xiongjiedai-gpu-benchmarks": 116}
    audited = json.loads(invoke("audit", "--source", "ggml-org-llama-cpp", "--json").stdout)
    assert sum(len(r["ids"]) for r in audited["runs"]) == listed["ggml-org-llama-cpp"]["runs"]


def test_2_the_readme_shows_the_sources_listing_as_it_is() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ passprice sources\n", 1)[1].split("\n```", 1)[0]
    assert block == invoke("sources").stdout.rstrip("\n")
