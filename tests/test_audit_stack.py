"""``audit SERVING --stack S``: a price made under a serving stack (``price --stack S``'s expected price) rests on the
stack's fitted facts as well as the card's; the audit lists them with the card's (value, provenance, binding,
elasticity by re-pricing under the stack with that fact moved, source and locator, derivation) and names the measured
runs they were fitted to, with the source those runs cite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"
#: The card facts of r1-qwen7b-h200's price at batch 1, then the stack facts its expected price rests on.
CARD_PATHS = ["memory.bandwidth", "memory.capacity", "streams.read", "streams.append", "array", "vector", "scale",
              "on_chip.capacity"]
STACK_PATHS = ["stack.range.rows.min", "stack.range.rows.max", "stack.range.position.min", "stack.range.position.max",
               "stack.overhead.pass", "stack.overhead.layer", "stack.terms.serial", "stack.memory.reserved",
               "stack.share.read", "stack.share.append", "stack.share.array", "stack.share.vector", "stack.share.scale"]


@pytest.fixture(scope="module")
def audited() -> dict:
    result = invoke("audit", R1, "--batch", "1", "--stack", STACK, "--json")
    assert result.exit_code == 0, result.output
    out: dict = json.loads(result.stdout)
    return out


def test_the_expected_price_is_audited_with_the_stack_s_facts(audited: dict) -> None:
    priced = invoke("price", R1, "--batch", "1", "--stack", STACK, "--json", "--no-lock")
    expected = json.loads(priced.stdout)["expected"]
    assert audited["tokens_per_s"] == expected["tokens_per_s"] == pytest.approx(237.4479, rel=1e-6)
    assert [f["path"] for f in audited["facts"]] == CARD_PATHS + STACK_PATHS
    assert list(expected["rests_on"]) == CARD_PATHS + STACK_PATHS  # the very facts the price rests on
    assert audited["stack"] == STACK and audited["weakest"] == ["scale", "on_chip.capacity", "stack.memory.reserved"]
    read = next(f for f in audited["facts"] if f["path"] == "stack.share.read")
    assert (read["value"], read["unit"], read["provenance"], read["source"], read["floor"]) == (
        0.9883, "1", "derived", "passprice-stack-calibration", "derived"
    )  # floored by the shipped r1-qwen7b-h200-llamacpp, made under the stack (stacklock 29; it was None)
    assert next(f for f in audited["facts"] if f["path"] == "streams.read")["floor"] == "measured"
    assert read["locator"].startswith(f"the 111 runs of stack {STACK} in registry/measurements/")
    assert read["derivation"]["method"] == "nnls-relative-pass-time" and len(read["derivation"]["runs"]) == 111
    # Memory binds the pass, so the read share scales a binding term; an overhead is a fixed cost, no term.
    binding = [f["path"] for f in audited["facts"] if f["binding"]]
    assert binding == ["memory.bandwidth", "streams.read", "streams.append", "stack.share.read", "stack.share.append"]


def test_stack_elasticities_are_re_priced_under_the_stack(audited: dict) -> None:
    by_path = {f["path"]: f for f in audited["facts"]}
    pass_s = 1 / audited["tokens_per_s"]  # batch 1: one token a pass
    # The weights' read (4,370,560,992 B) at 4.8 TB/s × streams.read 0.9333 × share.read 0.9883 takes 0.987 ms of the
    # 4.211 ms pass; +1 % of the share takes 1/1.01 of it.
    read_s = 4_370_560_992 / (4.8e12 * 0.9333 * 0.9883)
    assert by_path["stack.share.read"]["elasticity"] == pytest.approx(
        (pass_s / (pass_s - read_s * (1 - 1 / 1.01)) - 1) / 0.01, rel=1e-6
    )
    assert by_path["stack.share.read"]["elasticity"] == pytest.approx(0.2326, abs=1e-4)
    # 28 blocks × overhead.layer 96.63 µs = 2.706 ms a pass, whatever the bytes: +1 % of it adds 27.06 µs.
    fixed = 28 * 96.63e-6
    assert by_path["stack.overhead.layer"]["elasticity"] == pytest.approx(
        (pass_s / (pass_s + 0.01 * fixed) - 1) / 0.01, rel=1e-6
    )
    assert by_path["stack.overhead.layer"]["elasticity"] == pytest.approx(-0.6383, abs=1e-4)
    # overhead.pass is fitted to 0 (scaling 0 moves nothing); the reserved memory does not move a price that fits.
    assert by_path["stack.overhead.pass"]["elasticity"] == 0.0 and by_path["stack.memory.reserved"]["elasticity"] == 0.0


def test_the_runs_the_stack_was_fitted_to_are_named_with_their_source(audited: dict) -> None:
    assert audited["calibration"] == [{
        "file": "registry/measurements/xiongjiedai-llama3-llamabench.toml",
        "source": "xiongjiedai-gpu-benchmarks",
        "runs": 111,
        "cards": ["a100_pcie_80gb", "a100_sxm4_80gb", "a40", "h100_pcie_80gb", "l40s", "rtx_3080", "rtx_3090",
                  "rtx_4080", "rtx_4090", "rtx_6000_ada", "rtx_a6000"],
        "routings": [],  # dense checkpoints: no routing record priced
        # the card facts the runs' limits read, and their sources (walk53; tests/test_walk53.py counts them)
        "card_facts": audited["calibration"][0]["card_facts"],
    }]
    assert audited["calibration"][0]["card_facts"]["facts"] == 66
    assert {"passprice-stack-calibration", "xiongjiedai-gpu-benchmarks"} <= set(audited["sources"])
    assert audited["sources"]["xiongjiedai-gpu-benchmarks"]["where"].startswith(
        "https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference"
    )


def test_text_and_markdown_list_them() -> None:
    text = invoke("audit", R1, "--batch", "1", "--stack", STACK)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].endswith(f"on h200_sxm_141gb, expected under stack {STACK}, floors of locks r1-qwen7b-h200, "
                             "r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp")
    assert lines[1] == ("  237.4 tokens/s at batch 1, binds on memory; weakest provenance estimated (scale, "
                        "on_chip.capacity, stack.memory.reserved)")
    row = next(line for line in lines if " stack.share.read " in line)
    # The serving's limit locks judge the card's facts, not the stack's; its lock made under the stack (the shipped
    # r1-qwen7b-h200-llamacpp, stacklock 29) floors them: before it, "–", "–" (no floor) was shown here.
    assert row.split() == ["*", "stack.share.read", "0.9883", "derived", "derived", "at", "floor", "+0.233"]
    at = lines.index("calibrated on (the measured runs the stack's fitted facts were fitted to):")
    assert lines[at + 1] == (
        "  registry/measurements/xiongjiedai-llama3-llamabench.toml: 111 runs on 11 cards (a100_pcie_80gb, "
        "a100_sxm4_80gb, a40, h100_pcie_80gb …), citing xiongjiedai-gpu-benchmarks"
    )
    assert lines[at + 2].startswith("    xiongjiedai-gpu-benchmarks — GPU-Benchmarks-on-LLM-Inference")
    # the stored excerpt of the runs' document (tests/test_walk108.py), then (walk53) the card facts the fit reads
    # and their sources (tests/test_walk53.py counts them)
    assert lines[at + 5] == ("    stored excerpt: sources/excerpts/xiongjiedai-aa72e0e-excerpt.txt (the lines quoted "
                             "from the text read, from the registry's top folder)")
    assert lines[at + 6].startswith("    the fit reads the 11 cards' memory.bandwidth, streams.read, streams.append, "
                                    "array, vector, scale (66 facts), citing nvidia-ada-whitepaper (17), ")
    # The card the stack was never measured on is said, as price --stack says it.
    assert "not h200_sxm_141gb" in text.stderr
    markdown = invoke("audit", R1, "--batch", "1", "--stack", STACK, "--format", "markdown").stdout
    # its re-derived column empty: nothing derives from stack.share.read (left32)
    assert "| `stack.share.read` | 0.9883 | derived | derived (at floor) | +0.233 |  | **binds** |" in markdown
    assert "Calibrated on (the measured runs the stack's fitted facts were fitted to):\n- registry/measurements/" \
        in markdown
    assert "\n  - the fit reads the 11 cards' memory.bandwidth, " in markdown


def test_without_a_stack_the_audit_is_the_limit_s() -> None:
    result = invoke("audit", R1, "--batch", "1", "--json")
    out = json.loads(result.stdout)
    assert [f["path"] for f in out["facts"]] == CARD_PATHS and "calibration" not in out and "stack" not in out
    assert out["tokens_per_s"] == pytest.approx(996.0966, rel=1e-6)


def test_a_lock_made_under_the_stack_floors_its_facts(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    made = invoke("lock", R1, "--stack", STACK, "-o", str(root / "locks" / "r1-stack.lock.toml"), root=root)
    assert made.exit_code == 0, made.output
    out = json.loads(invoke("audit", R1, "--stack", STACK, "--json", root=root).stdout)
    floors = {f["path"]: (f["floor"], f["margin"]) for f in out["facts"]}
    # Locked without --require, each fact is floored at its provenance when locked: at floor.
    assert floors["stack.share.read"] == ("derived", 0) and floors["stack.memory.reserved"] == ("estimated", 0)
    assert out["title"].endswith("floors of locks r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, "
                                 "r1-stack")


def test_stack_refusals_and_misuse() -> None:
    # The stack's facts hold at batch 1 only (its runs): a price at 256 under it is refused by name.
    refused = invoke("audit", R1, "--batch", "256", "--stack", STACK, "--json")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["refusal"] == "BeyondStack"
    lock = invoke("audit", "locks/r1-qwen7b-h200.lock.toml", "--stack", STACK)
    assert lock.exit_code == 2 and "audit: --stack cannot apply to lock r1-qwen7b-h200" in lock.stderr
    source = invoke("audit", "--source", "xiongjiedai-gpu-benchmarks", "--stack", STACK)
    assert source.exit_code == 2 and "--stack" in source.stderr
