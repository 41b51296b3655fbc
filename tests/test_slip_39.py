"""Slip round 39 (issue 13: review/audit gaps left by session 24's rounds), each reproduced first.

1. ``diff --format json``: each lock's ``serving_changed`` was text alone; ``serving_differences`` now gives the same
   changes as ``reproduce --json`` does, one ``{"field", "locked", "now"}`` a line (BASE's value, HEAD's).
"""

from __future__ import annotations

from pathlib import Path

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
