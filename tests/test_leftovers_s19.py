"""Session 19's lead leftovers from the open notes: each test builds its reproducer and asserts the value or words.

1. The measured / limit span of a stack's fitted runs is kept in the cache of built objects, keyed by the bytes of
   every file its runs are priced on; walkthrough 22 added the routing record a mixture of experts' run names to that
   key, untested until now: an edited routing record must re-price the span, never serve the old one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import copy_root
from passprice import stackreach
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.stacks import load_stack

STACK = "llamacpp-cuda-2405"
RUN = f"""#:schema ../../schema/measurement.schema.json
[source]
name = "A made-up llama.cpp run of Qwen3-30B-A3B on one H200"
source = "xiongjiedai-gpu-benchmarks"

[[run]]
id = "s19.h200.qwen3moe.tg128"
stack = "{STACK}"
card = "h200_sxm_141gb"
checkpoint = "qwen3-30b-a3b-q4_k_m"
routing = "qwen3-30b-a3b-measured"
batch = 64
positions = [0, 128]
tokens_per_s = 2400.0
locator = "a test's made-up figure"
"""


def test_an_edited_routing_record_re_prices_a_stacks_cached_span(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = copy_root(tmp_path)
    (path / "registry" / "measurements" / "s19-moe.toml").write_text(RUN)
    root = Root(path)
    runs = [r for r in load_runs(root) if r.id == "s19.h200.qwen3moe.tg128"]
    assert len(runs) == 1 and runs[0].routing == "qwen3-30b-a3b-measured"
    # the shipped stack's fit names no mixture of experts' run: hold its fitted runs to this one
    monkeypatch.setattr(stackreach, "fitted_runs", lambda root, stack: runs)
    stack = load_stack(root, STACK)
    low, high, count = stackreach.ratio_span(root, stack)
    assert count == 1 and low == high
    assert stackreach.ratio_span(root, stack) == (low, high, 1)  # the cached span, the same figure
    record = path / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = record.read_text()
    assert "[hot_share]\nvalue = 0.9\n" in text
    # a hot set taking 0.6 of the routed token-slots, not 0.9: at batch 64 more experts are read a pass, a lower limit
    record.write_text(text.replace("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.6\n"))
    low2, high2, count2 = stackreach.ratio_span(root, stack)
    assert count2 == 1 and low2 == high2
    assert low2 > low  # the same measured 2,400 tokens/s over a lower limit: a larger ratio, not the cached one
    fresh = stackreach.run_ratios(root, runs)["s19.h200.qwen3moe.tg128"]
    assert low2 == fresh
