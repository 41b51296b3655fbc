"""Newcomer walkthrough 21: reviewing pull requests that change card facts, add a mixture of experts with its
routing record, and re-fit a serving stack after a measured run was added.

What a new user, reading only the README, could not answer, and the known leftovers fixed with them, each kept as a
test:

- ``compare``, ``sweep``, ``roofline``, ``max-batch``, ``speculate``, ``simulate`` and ``lock`` under a stack said
  nothing of an expected price outside the stack's fitted span (``price``, ``best`` and ``audit`` did): each now
  warns on stderr as ``price --stack`` does, prints a ``fitted span`` line, and gives ``stack_span`` in ``--json``.
- ``fact show --history`` refused routing records and stacks; it reads them as cards.
- The hand check of tokens/s (batch × ``emitted_per_sequence`` / pass time) is in ``audit`` and ``explain tokens/s``
  with its numbers.
- ``reproduce`` of a lock whose checkpoint entry file was renamed printed a ~900-character line twice; one line now
  names the old name, the file and what to do.
- Reviewing the three pull requests from the comment alone: an added source record read "Other files changed:
  `sources/X.toml` (added)" beside a "to verify" about it, an added checkpoint entry "content – → 8712effdea2c…"
  (synthetic or real? how large?), and a stack re-fit after one run was added read as one run *replaced* by another
  (``[xd3.h100_pcie_80gb.8b → w21.h100_sxm5_80gb.8b]-q4km.tg512 = [145.55 → 168.2]``), with no word of how the fit's
  errors moved, nor that the added run lay far outside the span the others measured. Each is now said: the source's
  title, publisher, kind, address and how it was read; the checkpoint's architecture, tensors, weight bytes, experts
  and origin; the runs added, removed or changed, the fit's errors, and the fitted span BASE → HEAD with each added
  run outside BASE's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke
from passprice.registry import embedded_root
from test_slip_34 import renderings  # one in-process review rendered per format

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
    # left53: what changed in fact set's words (factparts.change_said: "citation, derivation changed"), not "changed: …"
    lines = out.stdout.splitlines()
    assert any(line.startswith("  0.9883 (derived)   ") and line.endswith(" changed") for line in lines)
    assert ("  source: passprice-stack-calibration — the 111 runs of stack llamacpp-cuda-2405 in "
            "registry/measurements/xiongjiedai-llama3-llamabench.toml") in out.stdout
    data = json.loads(invoke("fact", "show", LLAMA, "share.read", "--history", "--json").stdout)
    assert (data["kind"], data["path"], data["name"]) == ("stack", "share.read", LLAMA)
    assert data["versions"][0]["fact"]["value"] == 0.9883


def test_fact_show_history_reads_a_routing_record_fact() -> None:
    out = invoke("fact", "show", "qwen3-30b-a3b-measured", "routing.hot_share", "--history")
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("qwen3-30b-a3b-measured hot_share (facts/routing/qwen3-30b-a3b-measured.toml): ")
    assert ("  0.9 (measured)   new\n  source: gpu-container-handbook-routing-derisk — the definition of "
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
    # its entry is here, misnamed: not "is gone" (tests/test_fix146.py)
    assert lines[1] == (f"  cannot be reproduced here: the pinned checkpoint {entry}'s entry is here, its file renamed "
                        "and its [entry] name not, so it does not read (checkpoint, below: the file and what to do)")
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
    # passprice's own registry holds the entry: copying it is said first (walk107), then the header to import
    # (walkthrough 39)
    entry_file = embedded_root().path / "registry" / "checkpoints" / f"{entry}.toml"  # the checkout, or _data
    target = root / "registry" / "checkpoints" / f"{entry}.toml"
    assert (f"    checkpoint     {entry}: no entry of that name in this registry; passprice's own registry holds the "
            f"pinned content 169f62b972aa…: copy its entry into this registry (cp {entry_file} {target}) and run this "
            f"again; or import the header (passprice import FILE --name {entry}; the lock pins the "
            "header deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz, sha256 d9383567865a…), or re-lock "
            "through review") in result.stdout.splitlines()


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    return root


SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "Mixtral of Experts"
kind = "paper"
publisher = "Mistral AI"
date = "2024-01-08"
url = "https://arxiv.org/abs/2401.04088"
retrieved = "2026-12-03"
read = "Section 5, Routing analysis, Figure 7."
"""


ROUTING = """#:schema ../../schema/routing.schema.json
[routing]
name = "Mixtral-8x7B, read off the paper's Figure 7"
experts = 8
used = 2
checkpoints = ["mixtral-8x7b-q4_k_m"]
note = "Read by eye off the bars, so estimated."

[hot_experts]
value = 0.25
unit = "1"
provenance = "estimated"
source = "mixtral-of-experts-paper"
locator = "Figure 7: the two busiest of 8 experts"

[hot_share]
value = 0.3
unit = "1"
provenance = "estimated"
source = "mixtral-of-experts-paper"
locator = "Figure 7: about 15 % each for the two busiest"
"""


def test_the_review_says_what_an_added_source_and_checkpoint_are(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "sources" / "mixtral-of-experts-paper.toml").write_text(SOURCE, encoding="utf-8")
    (root / "facts" / "routing" / "mixtral-8x7b-pile.toml").write_text(ROUTING, encoding="utf-8")
    made = invoke("synth", str(REPO / "examples" / "configs" / "mixtral-8x7b.json"), "--mix", "Q4_K_M", "-o",
                  str(tmp_path / "mixtral.header.gguf"), "--import", "mixtral-8x7b-q4_k_m", root=root)  # fmt: skip
    assert made.exit_code == 0, made.output
    status, (markdown, text, as_json) = renderings(root, "markdown", "text", "json", base="main", head=None)
    assert status == 0, markdown
    lines = markdown.splitlines()
    assert "1 checkpoint entry added; 1 source added" in lines[0]
    assert ("- `registry/checkpoints/mixtral-8x7b-q4_k_m.toml` (added): content – → ") in markdown
    assert ("; llama, 323 tensors, 28.45 GB of weights, 8 routed experts (2 a token); origin: Synthetic, header only: "
            "built by passprice synth from the published configuration "
            "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json (model_type mixtral); no "
            "weights exist") in markdown
    assert ("- `mixtral-of-experts-paper` (added, `sources/mixtral-of-experts-paper.toml`): Mixtral of Experts "
            "(Mistral AI, 2024-01-08), paper, at https://arxiv.org/abs/2401.04088; read: Section 5, Routing analysis, "
            "Figure 7.") in lines
    assert not any(line.startswith("Other files changed") for line in lines)
    # an added routing record: its router, scope and caveat, which its two facts' rows do not show
    said = ("routing record Mixtral-8x7B, read off the paper's Figure 7: 8 experts, 2 a token, for "
            "mixtral-8x7b-q4_k_m; note: Read by eye off the bars, so estimated.")
    assert f"- `mixtral-8x7b-pile` (added, `facts/routing/mixtral-8x7b-pile.toml`): {said}" in lines
    assert f"  {said}" in text.splitlines()
    data = json.loads(as_json)
    assert data["added_records"]["sources/mixtral-of-experts-paper.toml"].startswith("Mixtral of Experts (Mistral AI")
    assert "  what      llama, 323 tensors, 28.45 GB of weights, 8 routed experts (2 a token); origin: " in text


def test_a_refit_after_a_run_was_added_says_the_run_and_the_errors(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    runs = root / "registry" / "measurements" / "xiongjiedai-llama3-llamabench.toml"
    runs.write_text(runs.read_text(encoding="utf-8") + """
[[run]]
id = "w21.h100_sxm5_80gb.8b-q4km.tg512"
stack = "llamacpp-cuda-2405"
card = "h100_sxm5_80gb"
checkpoint = "llama3-8b-q4_k_m"
batch = 1
positions = [0, 512]
tokens_per_s = 168.2
locator = "a lab run for walkthrough 21"
build = "e8496488 (2843)"
test = "tg512"
""", encoding="utf-8")
    assert invoke("calibrate", "--stack", LLAMA, root=root).exit_code == 0
    status, (text, markdown_text, as_json) = renderings(root, "text", "markdown", "json", base="main", head=None)
    # the shipped lock made under the stack (r1-qwen7b-h200-llamacpp) rests on the re-fitted facts: its expected
    # price moved unreviewed, so the review fails (it passed while no lock priced under the stack)
    assert status == 1, text
    assert ("  r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml, card h200_sxm_141gb, price): price "
            "moved, lock not updated (expected.memory_s)") in text.splitlines()
    assert ("derivation: 111 → 112 measured runs (each run's tokens/s); added w21.h100_sxm5_80gb.8b-q4km.tg512 = "
            "168.2; the fit's |error| of tokens/s: in sample mean 5.55 % → 5.7 %") in text
    assert "[xd3.h100_pcie_80gb.8b → w21" not in text
    # walkthrough 47: the 7 facts the re-fit moved are listed, overhead.layer first; the 6 it wrote again with the same
    # value (their citations "the 111 runs" → "the 112 runs" alone) in one line, each derivation's change said
    assert text.count("derivation: the same change as overhead.layer's") == 6
    assert text.splitlines()[1].startswith(
        "7 stack facts changed in 1 file (6 more re-derived to the same value); ")
    assert ("  6 more facts re-derived to the same value and provenance, the citation changed only in its count of "
            "runs (111 → 112) (not listed as changed): overhead.pass, share.array, range.rows.min, range.rows.max, "
            "range.position.min, range.position.max; derivation: overhead.pass, share.array: as overhead.layer's; "
            "range.rows.min, range.rows.max: 111 → 112 measured runs (each run's token-rows a pass); added "
            "w21.h100_sxm5_80gb.8b-q4km.tg512 = 1; ") in text
    # the run lies far outside the span the 111 runs measured: the review says so (it moved share.append +7.9 %)
    span = ("fitted span: 0.3425 … 0.8519 × their limit measured by its 111 fitted runs on BASE, 0.2461 … 0.8519 by "
            "its 112 on HEAD; outside BASE's span: w21.h100_sxm5_80gb.8b-q4km.tg512 at 0.2461 × its limit (the limit "
            "4.06 × measured; 168.2 tokens/s, cited to xiongjiedai-gpu-benchmarks: a lab run for walkthrough 21): "
            "check it in its source before the fit rests on it")
    assert f"  {span}" in text.splitlines()
    markdown = markdown_text.splitlines()
    assert markdown[markdown.index("#### Stack fits") + 2] == f"- ⚠️ `facts/stacks/{LLAMA}.toml`: {span}"
    # and the summary asks it (the comment read ✅ with nothing to verify)
    assert markdown[0].startswith("❌ **passprice diff**"), markdown[0]
    assert ("; 1 stack fit on a run outside its span, to verify; 1 lock affected, 1 price moved unreviewed"
            in markdown[0])
    data = json.loads(as_json)
    assert data["stack_spans"] == {f"facts/stacks/{LLAMA}.toml": span}


def test_an_elasticity_that_rounds_to_zero_reads_plus_zero() -> None:
    # walkthrough 21: `audit mixtral-8x7b-h200` (8 experts, 32 token-rows: every expert read) showed routing.hot_experts
    # at -0.000, a sign with no meaning at three decimals
    from types import SimpleNamespace

    from passprice.audit import _elasticity

    assert _elasticity(SimpleNamespace(elasticity=-4e-6, step=0.01)) == "+0.000"  # type: ignore[arg-type]
    assert _elasticity(SimpleNamespace(elasticity=-0.0006, step=0.01)) == "-0.001"  # type: ignore[arg-type]
    assert _elasticity(SimpleNamespace(elasticity=0.0, step=-0.01)) == "+0.000 (−1 %)"  # type: ignore[arg-type]


def test_a_corrected_bandwidth_with_its_shares_recomputed_moves_a_price_by_rounding(tmp_path: Path) -> None:
    # PR (i) of the walkthrough: 4.8 → 4.89 TB/s, then `fact recompute`: the review showed +0.008243 % and nothing
    # said why so little; the README now does, with these numbers.
    root = copy_root(tmp_path)
    out = invoke("fact", "set", H200, "memory.bandwidth", "--value", "4.89", "--unit", "TB/s", "--provenance",
                 "published", "--source", "nvidia-h200-datasheet", "--locator", "walkthrough 21's figure",
                 root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    stale = json.loads(invoke("price", "r1-qwen7b-h200", "--no-lock", "--json", root=root).stdout)["tokens_per_s"]
    assert round(100 * (stale / 996.0966124437687 - 1), 3) == 1.875
    assert invoke("fact", "recompute", H200, root=root).exit_code == 0
    today = json.loads(invoke("price", "r1-qwen7b-h200", "--no-lock", "--json", root=root).stdout)["tokens_per_s"]
    assert f"{today:,.1f}" == "996.2" and round(100 * (today / 996.0966124437687 - 1), 4) == 0.0082
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("the H200's 4.8 → 4.89 TB/s with `streams.*` recomputed moves `r1-qwen7b-h200` 996.1 → 996.2 tokens/s "
            "(+0.0082 %, the shares' 4-digit rounding alone) where the stale shares gave +1.875 %") in readme
