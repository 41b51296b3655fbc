"""Newcomer walkthrough 21: reviewing pull requests that change card facts, add a mixture of experts with its
routing record, and re-fit a serving stack after a measured run was added.

What a new user, reading only the README, could not answer, and the known leftovers fixed with them, each kept as a
test:

- ``compare``, ``sweep``, ``roofline``, ``max-batch``, ``speculate``, ``simulate`` and ``lock`` under a stack said
  nothing of an expected price outside the stack's fitted span (``price``, ``best`` and ``audit`` did): each now
  warns on stderr as ``price --stack`` does, prints a ``fitted span`` line, and gives ``stack_span`` in ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke

H200 = "h200_sxm_141gb"
LLAMA = "llamacpp-cuda-2405"
#: llama.cpp's 111 fitted runs measured 0.3425 … 0.8519 × their limit; r1-qwen7b-h200 at batch 1 on the H200 is
#: 0.2384 × its limit (README, Serving stacks): outside.
OUTSIDE = (f"stack {LLAMA}'s expected price here is 0.2384 × the limit (the limit 4.2 × expected), outside the "
           "0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured: the fit is extrapolated "
           "here")


def _span(data: dict[str, object]) -> dict[str, object]:
    span = data["stack_span"]
    assert isinstance(span, dict)
    assert span["runs"] == 111 and span["inside"] is False
    assert round(float(span["low"]), 4) == 0.3425 and round(float(span["high"]), 4) == 0.8519  # type: ignore[arg-type]
    assert round(float(span["ratio"]), 4) == 0.2384  # type: ignore[arg-type]
    return span


def test_max_batch_under_a_stack_flags_a_price_outside_the_span() -> None:
    out = invoke("max-batch", "r1-qwen7b-h200", "--stack", LLAMA)
    assert out.exit_code == 0, out.output
    assert OUTSIDE in out.stderr
    assert ("  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
            "measured); this price's 0.2384 (the limit 4.2 × expected) lies outside: an extrapolation of the fit (the "
            "serving's own price, batch 1)") in out.stdout
    data = json.loads(invoke("max-batch", "r1-qwen7b-h200", "--stack", LLAMA, "--json").stdout)
    assert _span(data)["batch"] is None


def test_roofline_under_a_stack_flags_a_price_outside_the_span() -> None:
    out = invoke("roofline", H200, "r1-qwen7b-h200", "--stack", LLAMA)
    assert out.exit_code == 0, out.output
    assert OUTSIDE in out.stderr
    assert "this price's 0.2384 (the limit 4.2 × expected) lies outside" in out.stdout
    _span(json.loads(invoke("roofline", H200, "r1-qwen7b-h200", "--stack", LLAMA, "--json").stdout))


def test_lock_under_a_stack_flags_its_recorded_price_outside_the_span(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    out = invoke("lock", "r1-qwen7b-h200", "--stack", LLAMA, "-o", str(root / "locks" / "llama.lock.toml"),
                 "--json", root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert OUTSIDE in out.stderr
    _span(json.loads(out.stdout))


def test_compare_under_a_stack_names_each_card_outside_the_span() -> None:
    out = invoke("compare", "r1-qwen7b-h200", "--cards", f"{H200},rtx_4090", "--stack", LLAMA)
    assert out.exit_code == 0, out.output
    # the H200's expected best (batch 1) is 0.2384 × the limit at batch 1; the RTX 4090's lies inside
    assert (f"passprice: warning: stack {LLAMA}'s expected price lies outside the 0.3425 … 0.8519 × the limit its 111 "
            f"fitted runs measured, for {H200} (0.2384 at batch 1): the fit is extrapolated there") in out.stderr
    assert "rtx_4090 (" not in out.stderr
    assert ("  fitted span: its 111 fitted runs measured 0.3425 … 0.8519 × their limit; outside it (an extrapolation "
            f"of the fit): {H200} 0.2384") in out.stdout
    data = json.loads(invoke("compare", "r1-qwen7b-h200", "--cards", f"{H200},rtx_4090", "--stack", LLAMA,
                             "--json").stdout)  # fmt: skip
    spans = {row["card"]: row["stack_span"] for row in data["cards"]}
    assert spans[H200]["inside"] is False and spans[H200]["batch"] == 1
    assert spans["rtx_4090"]["inside"] is True


def test_compare_under_a_stack_inside_the_span_says_so() -> None:
    out = invoke("compare", "--checkpoint", "llama3-8b-q4_k_m", "--limit", "512", "--position", "256", "--cards",
                 "rtx_4090", "--stack", LLAMA)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "outside" not in out.stderr
    assert "every card's expected best lies inside" in out.stdout


def test_sweep_under_a_stack_names_each_pair_outside_the_span() -> None:
    out = invoke("sweep", "r1-qwen7b-h200", "--cards", f"{H200},rtx_4090", "--positions", "512", "--batches", "1",
                 "--stack", LLAMA)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert (f"for r1-qwen7b-h200 on {H200} (0.2384): the fit is extrapolated there (each serving's own batch and "
            "contexts; a row lies outside where its expected_tokens_per_s / tokens_per_s does)") in out.stderr
    assert "on rtx_4090 (" not in out.stderr


def test_a_price_inside_the_span_is_not_flagged() -> None:
    # Llama-3-8B on the RTX 4090 at tg512: 0.5716 × the limit, inside (README)
    out = invoke("max-batch", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512",
                 "--position", "256", "--stack", LLAMA, "--json")  # fmt: skip
    assert out.exit_code == 0, out.output
    span = json.loads(out.stdout)["stack_span"]
    assert span["inside"] is True and round(span["ratio"], 4) == 0.5716
    assert "outside" not in out.stderr


def test_fact_show_history_reads_a_stack_fact() -> None:
    # leftover (b): `fact show llamacpp-cuda-2405 share.read --history` was refused ("not a card … `git log -p`")
    out = invoke("fact", "show", LLAMA, "stack.share.read", "--history")
    assert out.exit_code == 0, out.output
    first = out.stdout.splitlines()[0]
    assert first.startswith(f"{LLAMA} share.read (facts/stacks/{LLAMA}.toml): ") and "versions" in first
    assert "  0.9883 (derived)   changed: " in out.stdout
    assert ("  source: passprice-stack-calibration — the 111 runs of stack llamacpp-cuda-2405 in "
            "registry/measurements/xiongjiedai-llama3-llamabench.toml") in out.stdout
    data = json.loads(invoke("fact", "show", LLAMA, "share.read", "--history", "--json").stdout)
    assert (data["kind"], data["path"], data["name"]) == ("stack", "share.read", LLAMA)
    assert data["versions"][0]["fact"]["value"] == 0.9883


def test_fact_show_history_reads_a_routing_record_fact() -> None:
    out = invoke("fact", "show", "qwen3-30b-a3b-measured", "routing.hot_share", "--history")
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("qwen3-30b-a3b-measured hot_share (facts/routing/qwen3-30b-a3b-measured.toml): ")
    assert ("  0.9 (measured)   changed: new\n  source: gpu-container-handbook-routing-derisk — the definition of "
            "hot_frac_for_coverage") in out.stdout
    routing = REPO / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    assert bad("fact", "show", "qwen3-30b-a3b-measured", "nope", "--history") == [
        f"passprice: error: {routing}: nope: no such fact (it has routing.hot_experts, routing.hot_share)"
    ]


def test_audit_says_how_tokens_per_s_follows_from_the_pass() -> None:
    # leftover (c): the hand check, with the numbers (the README's: 16 × 2.4875 / 10.92 ms = 3,644.2)
    out = invoke("audit", "locks/qwen35-27b-h200-mtp.lock.toml")
    assert out.exit_code == 0, out.output
    assert ("  by hand: tokens/s = batch × emitted_per_sequence / pass time = 16 × 2.4875 / 10.92 ms = 3,644.2 (the "
            "pass time is the largest term, memory)") in out.stdout
    data = json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)
    assert data["by_hand"] == ("tokens/s = batch × emitted_per_sequence / pass time = 1 × 1 / 1.004 ms = 996.1 (the "
                               "pass time is the largest term, memory)")
    stacked = invoke("audit", "r1-qwen7b-h200", "--stack", LLAMA).stdout
    assert ("by hand: tokens/s = batch × emitted_per_sequence / pass time = 1 × 1 / 4.211 ms = 237.4 (the pass time "
            "is the stack's expected pass") in stacked
    markdown = invoke("audit", "qwen3-30b-a3b-h200", "--format", "markdown").stdout
    assert "By hand: tokens/s = batch × emitted_per_sequence / pass time = 64 × 1 / 6.181 ms = 10,354.4" in markdown


def test_explain_tokens_per_s_gives_the_formula_with_numbers() -> None:
    out = invoke("explain", "tokens/s")
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    assert "tokens/s = batch × `emitted_per_sequence` / pass time" in text
    assert "r1-qwen7b-h200: 1 × 1 / 1.004 ms = 996.1" in text
    assert "qwen35-27b-h200-mtp, drafting 2 tokens: 16 × 2.4875 / 10.92 ms = 3,644.2" in text
    # the README's glossary is the module's text (docs/make.py writes it)
    assert "16 × 2.4875 / 10.92 ms = 3,644.2. `passprice audit` gives the sentence" in (REPO / "README.md").read_text()


def test_reproduce_of_a_lock_whose_checkpoint_file_was_renamed_says_it_once(tmp_path: Path) -> None:
    # leftover (d): the checkpoint's ~900-character "does not read (… registered: …)" line was printed twice
    # (verdict and checkpoint line), advising to copy the shipped entry in; now one line naming both names.
    root = copy_root(tmp_path)
    folder = root / "registry" / "checkpoints"
    entry = "deepseek-r1-distill-qwen-7b-q4_k_m"
    (folder / f"{entry}.toml").rename(folder / "r1-distill-7b.toml")
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == f"  does NOT reproduce: the pinned checkpoint {entry} is gone (checkpoint, below)"
    said = (f"    checkpoint     {entry}: no entry of that name; registry/checkpoints/r1-distill-7b.toml still names "
            f"its entry {entry} (its file renamed, its [entry] name not), so it does not read: set its [entry] name to "
            "'r1-distill-7b' too (a renamed entry's file and name go together) and reproduce finds the pinned content "
            "there, or rename the file back")
    assert said in lines
    assert result.stdout.count("r1-distill-7b.toml") == 1 and "registered:" not in result.stdout
    data = json.loads(invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", "--json", root=root).stdout)
    assert (data["checkpoint"]["status"], data["checkpoint"]["moved_to"]) == ("missing", "r1-distill-7b")
    # the name set too: the content is found there, and the lock reproduces
    text = (folder / "r1-distill-7b.toml").read_text(encoding="utf-8")
    (folder / "r1-distill-7b.toml").write_text(text.replace(f'name = "{entry}"', 'name = "r1-distill-7b"', 1),
                                               encoding="utf-8")
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert (f"    checkpoint     {entry}: the pinned content 169f62b972aa… is now entry r1-distill-7b (renamed or "
            "moved)") in result.stdout.splitlines()


def test_reproduce_of_a_lock_whose_checkpoint_is_gone_says_what_to_do_once(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    entry = "deepseek-r1-distill-qwen-7b-q4_k_m"
    (root / "registry" / "checkpoints" / f"{entry}.toml").unlink()
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=root)
    assert result.exit_code == 1, result.output
    assert (f"    checkpoint     {entry}: no entry of that name, and no entry of the registry holds the pinned content "
            f"169f62b972aa…: import the pinned header again (passprice import FILE --name {entry}), or re-lock "
            "through review") in result.stdout.splitlines()
