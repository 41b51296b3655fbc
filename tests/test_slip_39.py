"""Slip round 39 (issue 13: review/audit gaps left by session 24's rounds), each reproduced first.

1. ``diff --format json``: each lock's ``serving_changed`` was text alone; ``serving_differences`` now gives the same
   changes as ``reproduce --json`` does, one ``{"field", "locked", "now"}`` a line (BASE's value, HEAD's).
2. ``passprice sources`` listed a source only measured runs cite (``ggml-org-llama-cpp``, 11 runs) as "0 facts, 0
   locks, –": a ``runs`` column (and ``--json`` key) counts the runs citing each source, as ``audit --source`` does.
3. The review's locator check asked about a ratio its locator states as a part of a whole (``hot_experts`` 0.375
   under ``12 of the 32 experts take 70 %``, "its locator quotes 70%"): ``A of (the) B`` now quotes A / B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.addedfacts import parts_of, quotes_another
from passprice.facts import Fact
from passprice.review.changes import _quoted_figures
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
    # left32: the retrieved column after the date
    assert lines[0].split() == ["source", "kind", "date", "retrieved", "facts", "runs", "locks", "provenance", "it",
                                "supports"]
    rows = {line.split()[0]: line.split() for line in lines[2:] if line[:1].isalpha()}
    # Before: "ggml-org-llama-cpp  repository  unknown  0  0  –", no count of its 11 runs (audit --source: 11).
    assert rows["ggml-org-llama-cpp"][3:8] == ["unknown", "0", "11", "0", "–"]
    # xiongjiedai: 111 runs of xiongjiedai-llama3-llamabench.toml and 5 of llamacpp-points.toml cite it.
    # the shipped stack lock (r1-qwen7b-h200-llamacpp) pins the stack's facts, which cite xiongjiedai, and the H200's
    assert rows["xiongjiedai-gpu-benchmarks"][3:7] == ["2026-12-01", "12", "116", "1"]
    # the H200 datasheet's 9 facts until cite102 moved 8 to the H200 product page (tests/test_cite102.py)
    assert rows["nvidia-h200-datasheet"][3:7] == ["unknown", "1", "0", "5"]
    assert rows["nvidia-h200-product-page"][3:7] == ["2026-09-07", "8", "0", "5"]
    listed = {s["id"]: s for s in json.loads(invoke("sources", "--json").stdout)["sources"]}
    assert {k: v["runs"] for k, v in listed.items() if v["runs"]} == {
        "ggml-org-llama-cpp": 11, "lmdeploy-a100-fp16-benchmark": 17, "xiongjiedai-gpu-benchmarks": 116,
        # session 33: llamacpp-pr16834-moe.toml (6 runs) and llamacpp-pr20586-moe.toml (10 runs) cite one PR each
        "ggml-org-llama-cpp-pr16834": 6, "ggml-org-llama-cpp-pr20586": 10,
        # session 34 (moe46): the gpt-oss guide's 4 llama-bench rows, 8 InferenceMAX rows, InferenceX PR #1061's 4
        "ggml-org-llama-cpp-discussion15396": 4, "mantile-inferencemax-gpt-oss-120b": 8,
        "semianalysis-inferencex-pr1061": 4,
        # session 34 (moe48): llamacpp-pr15525-moe.toml (19 runs: 10 master, 9 of the PR's branch)
        "ggml-org-llama-cpp-pr15525": 19}
    audited = json.loads(invoke("audit", "--source", "ggml-org-llama-cpp", "--json").stdout)
    assert sum(len(r["ids"]) for r in audited["runs"]) == listed["ggml-org-llama-cpp"]["runs"]


def test_2_the_readme_shows_the_sources_listing_as_it_is() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ passprice sources\n", 1)[1].split("\n```", 1)[0]
    assert block == invoke("sources").stdout.rstrip("\n")


# 3. A ratio stated as "A of (the) B" is quoted by its locator.


def _ratio(value: float, locator: str, provenance: str = "measured") -> Fact:
    return Fact.from_entry({"value": value, "unit": "1", "provenance": provenance, "source": "s",
                            "locator": locator}, "facts/routing/r.toml: hot_experts")


@pytest.mark.parametrize("locator", ["12 of the 32 experts take 70 %", "12 of 32 experts take 70 %",
                                     "12 out of the 32 experts take 70 %", "twelve of the thirty-two take 70 %"])
@pytest.mark.parametrize("provenance", ["measured", "published", "estimated"])
def test_3_a_part_of_a_whole_quotes_its_ratio(locator: str, provenance: str) -> None:
    # Before (measured, published): "it is 0.375 but its locator quotes 70%: does s: ... give 0.375?"
    assert quotes_another(_ratio(0.375, locator, provenance), _quoted_figures) is None
    assert quotes_another(_ratio(0.3751, locator, provenance), _quoted_figures) is None  # within 0.1 %


def test_3_another_part_or_whole_is_still_asked() -> None:
    asks = quotes_another(_ratio(0.375, "14 of the 32 experts take 70 %"), _quoted_figures)
    assert asks == ("it is 0.375 but its locator quotes 14 of the 32 (0.4375), 70 %: does s: 14 of the 32 experts "
                    "take 70 % give 0.375?")
    asks = quotes_another(_ratio(0.375, "12 of the 40 experts take 70 %"), _quoted_figures)
    assert asks == ("it is 0.375 but its locator quotes 12 of the 40 (0.3), 70 %: does s: 12 of the 40 experts take "
                    "70 % give 0.375?")
    # 0.38 is 1.3 % off 12/32: not the ratio written to fewer digits.
    asks = quotes_another(_ratio(0.38, "12 of the 32 experts take 70 %"), _quoted_figures)
    assert asks is not None and asks.startswith("it is 0.38 but its locator quotes 12 of the 32 (0.375), 70 %")
    # A percentage "of the" whole is no part of it; nor is a part larger than its whole.
    assert quotes_another(_ratio(0.375, "70% of the 32 experts"), _quoted_figures) == (
        "it is 0.375 but its locator quotes 70%: does s: 70% of the 32 experts give 0.375?")
    assert parts_of("70 of 50 runs, 12 of the 32 experts, 1,024 of the 2,048 slots") == {
        0.375: "12 of the 32", 0.5: "1,024 of the 2,048"}


def test_3_the_review_asks_nothing_of_a_routing_record_quoting_its_part_of_a_whole(registry: Path) -> None:
    path = branch(registry, "routing-part")
    record = path / "facts" / "routing" / "r39.toml"
    record.write_text((path / "facts" / "routing" / "uniform.toml").read_text().replace(
        'name = "Uniform routing (assumed)"', 'name = "A measured skew"').replace(
        'value = 1.0\nunit = "1"\nprovenance = "assumed"\nsource = "uniform-routing-assumption"\n'
        'locator = "no hot set: every expert is in the one set"',
        'value = 0.375\nunit = "1"\nprovenance = "measured"\nsource = "uniform-routing-assumption"\n'
        'locator = "12 of the 32 experts take 70 %"'))
    assert 'value = 0.375' in record.read_text()
    commit_all(path, "a routing record, its hot set 12 of the 32 experts")
    _, _, out = review(path)
    assert "r39:hot_experts" not in out["to_verify"]  # before: asked ("its locator quotes 70%")
    record.write_text(record.read_text().replace("12 of the 32", "14 of the 32"))
    commit_all(path, "its hot set 14 of the 32")
    _, text, out = review(path)
    assert "r39:hot_experts" in out["to_verify"]
    assert "its locator quotes 14 of the 32 (0.4375), 70 %" in text
