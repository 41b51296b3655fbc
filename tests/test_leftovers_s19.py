"""Session 19's lead leftovers from the open notes: each test builds its reproducer and asserts the value or words.

1. The measured / limit span of a stack's fitted runs is kept in the cache of built objects, keyed by the bytes of
   every file its runs are priced on; walkthrough 22 added the routing record a mixture of experts' run names to that
   key, untested until now: an edited routing record must re-price the span, never serve the old one.
2. ``speculate --stack``'s fitted-span line and ``stack_span`` (walkthrough 21) were untested: no shipped drafting
   method prices under a shipped stack as shipped; the llama.cpp stack given a ``share.rewrite`` (as
   tests/test_speculate.py does) prices the hybrid chat serving's undrafted row, and its span is said.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
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


def test_speculate_under_a_stack_says_where_the_serving_lies_against_the_fitted_span(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / "facts" / "stacks" / f"{STACK}.toml"
    path.write_text(path.read_text() + '\n[share.rewrite]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\n'
                    'source = "passprice-stack-calibration"\nlocator = "test: a placeholder for the recurrent state"\n')
    args = ("speculate", "qwen35-27b-h200-chat", "--tokens", "1..2", "--batch", "1", "--stack", STACK)
    out = invoke(*args, "--json", root=root)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    span = data["stack_span"]
    undrafted = data["rows"][0]["expected"]
    # the serving's own price (batch 1, undrafted) over its limit: the row's own ratio, below the 111 runs' least
    assert span["runs"] == 111 and span["ratio"] == undrafted["ratio"]
    assert span["ratio"] < span["low"] < span["high"] and span["inside"] is False
    assert f"{span['low']:.4g} … {span['high']:.4g}" == "0.3425 … 0.8519"
    assert f"{span['ratio']:.4g}" == "0.3268"
    warning = (f"passprice: warning: stack {STACK}'s expected price here is 0.3268 × the limit (the limit 3.06 × "
               "expected), outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs "
               "measured: the fit is extrapolated here")
    assert warning in out.stderr.splitlines()
    text = invoke(*args, root=root).stdout
    assert ("  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
            "measured); this price's 0.3268 (the limit 3.06 × expected) lies outside: an extrapolation of the fit "
            "(the serving's own price, batch 1)") in text.splitlines()


def test_a_name_not_found_lists_40_registered_names_and_counts_the_rest(tmp_path: Path) -> None:
    """Attack round 38's leftover: a card not found listed every registered card (118 cards: about 2 KB a line; 1,000
    runs naming missing cards printed 1.99 MB on stderr). The first 40 are listed, the rest counted, as source ids."""
    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    text = (cards / "a100_sxm4_80gb.toml").read_text()
    for i in range(101):
        (cards / f"zz{i:03d}.toml").write_text(text)
    known = sorted(p.stem for p in cards.glob("*.toml"))
    assert len(known) == 118
    out = invoke("price", "r1-qwen7b-h200", "--card", "nope", "--no-lock", root=root)
    assert out.exit_code == 2, out.output
    line = out.stderr.strip()
    assert len(out.stderr.splitlines()) == 1
    assert line.endswith(f"(registered: {', '.join(known[:40])} … (118 in all, each a file of facts/cards)); a card "
                         "not registered is a file of your own: copy the closest registered card's file to "
                         "facts/cards/nope.toml and set its facts (README, 'A card of your own')")  # walk107
    assert known[40] not in line and len(line) < 1200


def test_a_look_alike_name_not_found_is_spelled_beside_its_did_you_mean() -> None:
    """Attack round 38's leftover: ``fact show h200_sхm_141gb`` (a Cyrillic х) read "card 'h200_sхm_141gb': not found
    …; did you mean h200_sxm_141gb", two names that print alike; the name not found is spelled now."""
    for args in (("fact", "show", "h200_s\u0445m_141gb", "memory.bandwidth"),
                 ("price", "r1-qwen7b-h200", "--card", "h200_s\u0445m_141gb", "--no-lock")):
        out = invoke(*args)
        assert out.exit_code == 2, out.output
        assert out.stderr.startswith("passprice: error: card 'h200_s\u0445m_141gb' (spelled 'h200_s\\u0445m_141gb'): "
                                     "not found in "), out.stderr
        assert "did you mean h200_sxm_141gb" in out.stderr
    # an ASCII name is as it was
    assert invoke("fact", "show", "h200", "memory.bandwidth").stderr.startswith(
        "passprice: error: card 'h200': not found in ")
