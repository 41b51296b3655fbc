"""What session 16's README-only walkthrough 19 tripped on, auditing three registered prices (a dense one, a mixture of
experts and one under a serving stack) back to their documents, each kept as a test: the known leftovers (a
``BadRouting`` refusal without its bound, a routing record's caveat shown nowhere, ``validate``'s two ``binds``
columns, a stack's price far outside the span its runs were fitted on, said by nothing) and what the walk found
(``fact show`` refusing the records an audit lists, a markdown audit without derivations or notes, a README that
left the stack's arithmetic and its ``--json`` keys out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, refused

BW = 4.8e12  # the H200's memory.bandwidth, B/s (nvidia-h200-datasheet)
READ, APPEND = 0.9333, 0.8646  # its streams.read (BabelStream Dot 4.48 / 4.8) and streams.append (Triad 4.15 / 4.8)
QWEN3_NOTE_START = "The source counts, per MoE layer, how many experts (hottest first) hold 90 %"
QWEN3_NOTE_END = ("Two sets spread evenly is passprice's reading of that one figure, not the measured per-expert "
                  "distribution.")


def narrow_hot_set(root: Path) -> Path:
    """The Qwen3-30B-A3B routing record in ``root`` rewritten to a hot set of 4 of its 128 experts taking 0.9 of the
    slots at 8 a token: each hot expert would be chosen with probability 8 × 0.9 / 4 = 1.8, and the share can be at
    most 4 / 8 = 0.5."""
    path = root / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = path.read_text()
    text = text.replace("value = 0.453125\n", "value = 0.03125\n")
    text = text.replace("inputs.hot = { value = 58,", "inputs.hot = { value = 4,")
    path.write_text(text)
    return path


# --- (a) BadRouting at price time names the share and its bound, as check does -------------------------------------


def test_bad_routing_at_price_time_names_the_share_and_its_bound(tmp_path: Path) -> None:
    # Known leftover (a): `price` said "a set of 4 of the 128 experts cannot take that share of 8 choices a token:
    # each of its experts would be chosen with probability 1.8 > 1", naming neither the share (0.9) nor its bound.
    root = copy_root(tmp_path)
    narrow_hot_set(root)
    words = ("hot_share: 0.9 of the routed token-slots cannot land so with a hot set of 4 of the 128 experts "
             "(hot_experts 0.03125) at 8 a token: each of the hot set's experts would be chosen with probability 1.8, "
             "and an expert is chosen at most once a token; for that hot set hot_share must be at most 0.5")
    out = refused("price", "qwen3-30b-a3b-h200", "--no-lock", root=root, name="BadRouting")
    assert out["message"] == f"routing qwen3-30b-a3b-measured does not fit this checkpoint: {words}"
    text = invoke("price", "qwen3-30b-a3b-h200", "--no-lock", root=root)
    assert text.exit_code == 1
    # walk44: then the records registered for its 128 experts, the refused one left out, as Routed names them
    assert text.stderr == (f"passprice: refused: BadRouting: {out['message']}; registered here for 128 experts, "
        "8 a token: "
                           "uniform (assumed; any checkpoint)\n")
    # check words the record's problem the same way, naming its file and what to do.
    checked = invoke("check", root=root)
    assert checked.exit_code != 0
    line = (f"passprice: error: facts/routing/qwen3-30b-a3b-measured.toml: {words}: correct hot_share or "
            "hot_experts (every price naming the record is refused BadRouting until then)")
    assert line in checked.stderr.splitlines()


def test_the_lower_bound_is_named_too() -> None:
    # A hot set of 6 of 8 experts at 2 a token taking only 0.1 of the slots leaves 1.8 choices for the other 2
    # experts: each chosen with probability 0.9 — fine by p ≤ 1; a set of 7 of 8 at 0.5 leaves 1 choice for 1
    # expert (p = 1); 7 of 8 at 0.4: p = 1.2 > 1. Since walk45 a hot set takes at least its experts' share
    # (hot_share ≥ hot_experts: a set below it is the colder one, most likely the figures swapped), so the bound
    # named is 0.875, and 7 of 8 at 0.5 is refused as colder, naming the same routing by its hot set (1 of 8 at 0.5).
    from passprice.routing import Router

    assert Router(8, 2, 7 / 8, 7 / 8).problem() is None
    assert Router(8, 2, 1 / 8, 0.5).problem() is None
    assert Router(8, 2, 7 / 8, 0.5).problem() == (
        "hot_share: 0.5 of the routed token-slots is less than the hot set's 0.875 of the experts (hot_experts): a hot "
        "set takes at least its experts' share of the slots (equal shares are uniform routing), so this set is the "
        "colder one (were the two figures swapped?); the same routing named by its hot set is hot_experts 0.125, "
        "hot_share 0.5"
    )
    assert Router(8, 2, 7 / 8, 0.4).problem() == (
        "hot_share: 0.4 of the routed token-slots cannot land so with a hot set of 7 of the 8 experts (hot_experts "
        "0.875) at 2 a token: the one other expert would be chosen with probability 1.2, and an expert is chosen at "
        "most once a token; for that hot set hot_share must be at least 0.875 and at most 1"
    )


# --- (b) a routing record's note shows in price and audit ---------------------------------------------------------


def test_price_shows_the_routing_records_note() -> None:
    # Known leftover (b): the record's caveat ("Two sets spread evenly is passprice's reading of that one figure")
    # was shown by neither price nor audit.
    out = invoke("price", "qwen3-30b-a3b-h200")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  routing       "))
    assert lines[at + 1].startswith(f"  routing note  {QWEN3_NOTE_START}")
    assert lines[at + 1].endswith(QWEN3_NOTE_END)
    data = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json").stdout)
    assert data["routing"]["note"].endswith(QWEN3_NOTE_END)
    assert data["lock"]["moved"] == []  # the note is output only: the lock's recorded price is still this one
    best = json.loads(invoke("best", "qwen3-30b-a3b-h200", "--json").stdout)
    assert best["routing"]["note"].startswith(QWEN3_NOTE_START)
    uniform = invoke("price", "qwen3-30b-a3b-mi300x").stdout
    assert ("  routing note  Applies to any mixture of experts: each token's k routed experts are k distinct experts, "
            "each expert chosen with probability k / E, tokens independent of each other.") in uniform.splitlines()
    dense = invoke("price", "r1-qwen7b-h200").stdout
    assert "routing" not in dense


def test_the_lock_records_no_note() -> None:
    lock = (REPO / "locks" / "qwen3-30b-a3b-h200.lock.toml").read_text()
    assert "note" not in lock.split("[price.routing]", 1)[1].split("\n[", 1)[0]
    out = invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml")
    # (every recorded field reproduces, whether or not the pricing model's digest moved since the lock)
    assert out.exit_code == 0 and "10354.415517464427 tokens/s at batch 64, binds on memory" in out.stdout


def test_audit_names_the_routing_record_its_file_and_note() -> None:
    text = invoke("audit", "qwen3-30b-a3b-h200").stdout.splitlines()
    at = text.index("routing record (how the mixture of experts' rows route: the routing.* facts above):")
    assert text[at + 1] == ("  qwen3-30b-a3b-measured — Qwen3-30B-A3B, measured skew (single-domain Python, ~8k "
                            "tokens) (facts/routing/qwen3-30b-a3b-measured.toml)")
    assert text[at + 2].startswith(f"  note: {QWEN3_NOTE_START}") and text[at + 2].endswith(QWEN3_NOTE_END)
    data = json.loads(invoke("audit", "qwen3-30b-a3b-h200", "--json").stdout)
    assert data["routing"]["record"] == "qwen3-30b-a3b-measured"
    assert data["routing"]["file"] == "facts/routing/qwen3-30b-a3b-measured.toml"
    assert data["routing"]["note"].endswith(QWEN3_NOTE_END)
    markdown = invoke("audit", "qwen3-30b-a3b-h200", "--format", "markdown").stdout
    assert ("\n\nRouting record: qwen3-30b-a3b-measured — Qwen3-30B-A3B, measured skew (single-domain Python, \\~8k "
            "tokens) (facts/routing/qwen3-30b-a3b-measured.toml)\n- note: The source counts") in markdown
    # A lock written since slip round 44 pins the record's note in its [routing] table: the audit shows the pinned
    # note and says so (walkthrough 31; a lock written before that table shows today's record's, "note (today's
    # record)", tested in tests/test_newcomer_31.py).
    locked = invoke("audit", "locks/qwen3-30b-a3b-h200.lock.toml").stdout.splitlines()
    at = locked.index("routing record (how the mixture of experts' rows route: the routing.* facts above):")
    assert locked[at + 2].startswith("  note (as the lock pinned it): The source counts")
    assert "routing record" not in invoke("audit", "r1-qwen7b-h200").stdout


# --- (c) validate's columns ----------------------------------------------------------------------------------------


def test_validate_names_its_two_binds_columns() -> None:
    out = invoke("validate", "--stack", "llamacpp-cuda-2405")
    header = out.stdout.splitlines()[2].split()
    assert header == ["run", "batch", "positions", "measured", "limit", "limit/meas", "limit", "binds", "expected",
                      "error", "expected", "binds"]
    assert "  limit binds  expected  error    expected binds" in out.stdout.splitlines()[2]


# --- (d) a price outside its stack's fitted span is flagged ---------------------------------------------------------


def test_a_stack_price_outside_the_fitted_span_is_flagged() -> None:
    # Known leftover (d): llama.cpp's expected price of r1-qwen7b-h200 is 0.2384 × the H200's limit (the limit 4.2 ×
    # expected), outside the 1.17 … 2.92 × its 111 fitted runs measured, and nothing said so.
    out = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    assert ("passprice: warning: stack llamacpp-cuda-2405's expected price here is 0.2384 × the limit (the limit 4.2 × "
            "expected), outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured: "
            "the fit is extrapolated here") in out.stderr.splitlines()
    assert ("  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
            "measured); this price's 0.2384 (the limit 4.2 × expected) lies outside: an extrapolation of the fit"
            ) in out.stdout.splitlines()
    data = json.loads(invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    span = data["stack_span"]
    assert span["runs"] == 111 and span["inside"] is False
    # The README's span: the limit 1.17 to 2.92 × measured.
    assert 1 / span["high"] == pytest.approx(1.17, abs=0.005) and 1 / span["low"] == pytest.approx(2.92, abs=0.005)
    assert data["ratio"] < span["low"]
    # By hand (README, Serving stacks): fixed 28 × 96.63 µs; memory at the stack's read and append shares; array,
    # vector and scale at the card's vector rate (llama.cpp's mat-vec kernels) times the stack's shares; half the
    # non-binding terms added.
    memory = 4370560992 / (BW * READ * 0.9883) + 117497856 / (BW * APPEND * 0.7532)
    others = 8591507456 / 33.5e12 + 423750656 / (33.5e12 * 0.04165) + 27618304 / (33.5e12 * 0.002051)
    expected = 1 / (28 * 96.63e-6 + memory + 0.5 * others)
    assert data["expected"]["tokens_per_s"] == pytest.approx(expected, rel=1e-9)
    assert round(expected, 1) == 237.4


def test_a_stack_price_inside_the_fitted_span_says_so_quietly() -> None:
    out = invoke("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512", "--position",
                 "256", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    assert "fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × " \
           "measured); this price's 0.5716 lies inside" in out.stdout
    assert "extrapolated" not in out.stderr
    best = json.loads(invoke("best", "--checkpoint", "llama2-13b-f16", "--card", "a100_sxm4_80gb", "--limit", "2176",
                             "--position", "1152", "--stack", "lmdeploy-turbomind-2312", "--json").stdout)
    assert best["stack_span"]["runs"] == 17 and best["stack_span"]["inside"] is True
    # lmdeploy's README span: the limit 1.12 to 1.35 × measured.
    assert 1 / best["stack_span"]["high"] == pytest.approx(1.12, abs=0.005)
    assert 1 / best["stack_span"]["low"] == pytest.approx(1.35, abs=0.005)
    assert "stack_span" not in json.loads(invoke("price", "r1-qwen7b-h200", "--json").stdout)


# --- what the walk found ------------------------------------------------------------------------------------------


def test_three_prices_checked_by_hand() -> None:
    # The README's "Checking a price by hand": the dense price and the mixture of experts, from --json's bytes and the
    # audit's facts, to the digit.
    dense = json.loads(invoke("price", "r1-qwen7b-h200", "--json").stdout)
    assert dense["weight_bytes"] == 4370560992 and dense["sequence_bytes"] == 117497856
    assert dense["tokens_per_s"] == pytest.approx(1 / (4370560992 / (BW * READ) + 117497856 / (BW * APPEND)),
                                                  rel=1e-12)
    assert round(dense["tokens_per_s"], 1) == 996.1
    moe = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json").stdout)
    hot, cold = 8 * 0.9 / 58, 8 * 0.1 / 70  # the record's 58 of 128 experts taking 0.9 of 8 slots a token
    assert moe["routing"]["distinct"] == pytest.approx(58 * (1 - (1 - hot) ** 64) + 70 * (1 - (1 - cold) ** 64),
                                                       rel=1e-12)
    assert round(moe["routing"]["distinct"], 2) == 94.44
    seconds = moe["weight_bytes"] / (BW * READ) + 64 * moe["sequence_bytes"] / (BW * APPEND)
    assert moe["tokens_per_s"] == pytest.approx(64 / seconds, rel=1e-12)
    assert round(moe["tokens_per_s"], 1) == 10354.4


def test_fact_show_reads_the_records_an_audit_lists() -> None:
    # The audit lists routing.hot_share and stack.share.read; `fact show` refused both records ("the fact commands
    # read and edit cards and drafting methods").
    out = invoke("fact", "show", "qwen3-30b-a3b-measured", "hot_share")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].endswith("facts/routing/qwen3-30b-a3b-measured.toml), a routing record")
    assert lines[2].split() == ["routing.hot_share", "0.9", "measured"]
    assert lines[-1].startswith("routing record note: The source counts")
    stack = json.loads(invoke("fact", "show", "llamacpp-cuda-2405", "stack.share.read", "--json").stdout)
    assert stack["kind"] == "serving stack"
    assert list(stack["facts"]) == ["stack.share.read"]
    assert stack["facts"]["stack.share.read"]["value"] == 0.9883
    bad("fact", "show", "llamacpp-cuda-2405", "share.bogus",
        says="share.bogus: no such fact (it has stack.overhead.pass")
    bad("fact", "set", "uniform", "hot_share", "--value", "0.5", "--unit", "1", "--provenance", "assumed",
        "--source", "uniform-routing-assumption", "--locator", "x",
        says="the fact commands edit cards and drafting methods (`passprice fact show uniform` reads its facts")


def test_markdown_audit_carries_derivations_and_notes() -> None:
    # The markdown audit (for a pull request) had no derivation and no note: streams.read's 0.9333 could not be traced
    # to BabelStream's Dot 4.48 TB/s over 4.8 TB/s there, and its empty column had no heading.
    markdown = invoke("audit", "r1-qwen7b-h200", "--format", "markdown").stdout
    assert ("| fact | value | provenance | floor (margin) | elasticity | re-derived | term | source: locator |"
            in markdown)  # left32: the re-derived elasticity of memory.bandwidth and vector, as --json has it
    assert ("\n\nDerivations:\n- `streams.read`: dot / bandwidth, to 4 significant digits; dot = 4.48 TB/s "
            "(Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): "
            "row '| Dot   | 4.48              |' in TB/s); "
            "bandwidth = the fact "
            "memory.bandwidth, 4.8 TB/s when derived\n") in markdown
    assert "\n\nNotes:\n- `memory.capacity`: Decimal GB, as NVIDIA's product page prints it." in markdown  # cite102


def test_the_readme_says_what_the_outputs_say() -> None:
    readme = (REPO / "README.md").read_text()
    validate = invoke("validate", "--stack", "llamacpp-cuda-2405").stdout.splitlines()
    assert validate[2] in readme and validate[3] in readme
    for line in (
        "  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
        "measured); this price's 0.5716 lies inside",
        "  routing note  Applies to any mixture of experts: each token's k routed experts are k distinct experts, "
        "each expert chosen with probability k / E, tokens independent of each other.",
    ):
        assert line in readme
    for key in ("`stack_span`", "`fixed_s`", "`ratio`", '`"note"`'):
        assert key in readme


def test_a_sources_audit_lists_the_stack_facts_fitted_to_its_runs() -> None:
    # `audit --source xiongjiedai-gpu-benchmarks` said "facts derived from them: 0": llama.cpp's fitted facts cite
    # the fit (passprice-stack-calibration), and the 111 runs they were fitted to cite the benchmark repository.
    out = invoke("audit", "--source", "xiongjiedai-gpu-benchmarks")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("serving-stack facts fitted to its measured runs: 13")
    assert lines[at + 1].split() == ["stack", "fact", "value", "provenance", "runs", "resting", "on", "it"]
    assert lines[at + 4].split() == ["llamacpp-cuda-2405", "stack.overhead.layer", "96.63", "µs", "derived", "111",
                                     "of", "111"]
    data = json.loads(invoke("audit", "--source", "lmdeploy-a100-fp16-benchmark", "--json").stdout)
    assert {f["stack"] for f in data["fitted"]} == {"lmdeploy-turbomind-2312"}
    assert {(f["runs"], f["of"]) for f in data["fitted"]} == {(17, 17)}
    # No run cites the Azure guide, but the llama.cpp and LMDeploy fits rest on the stream shares it gives the cards
    # their runs are priced on (walkthrough 51): those are followed through the cards, never as runs citing it.
    azure = json.loads(invoke("audit", "--source", "azure-ai-benchmarking-guide", "--json").stdout)
    assert azure["runs"] == [] and azure["fitted_through"] == []
    on_cards = {(f["stack"], f["card"]) for f in azure["fitted_on_cards"]}
    assert ("lmdeploy-turbomind-2312", "a100_sxm4_80gb") in on_cards
    markdown = invoke("audit", "--source", "xiongjiedai-gpu-benchmarks", "--format", "markdown").stdout
    assert "#### Serving-stack facts fitted to its measured runs" in markdown


def test_an_audit_under_a_stack_flags_the_extrapolation_too() -> None:
    out = invoke("audit", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    assert any(line.startswith("passprice: warning: stack llamacpp-cuda-2405's expected price here is 0.2384 × the "
                               "limit") for line in out.stderr.splitlines())
    inside = invoke("audit", "--checkpoint", "llama3-8b-q4_k_m", "--card", "rtx_4090", "--limit", "512",
                    "--position", "256", "--stack", "llamacpp-cuda-2405")
    assert inside.exit_code == 0, inside.output
    assert "extrapolated here" not in inside.stderr


def test_a_mixture_of_experts_price_shows_what_all_its_experts_hold() -> None:
    # The price said "12.95 GB of them" (the experts a pass reads) but nothing showed the bytes all the experts hold,
    # so D(64) / E × those bytes could not be checked: 17,553,162,240 B of *_exps tensors × 94.44 / 128.
    text = invoke("price", "qwen3-30b-a3b-h200").stdout
    assert ("  experts       94.44 of 128 experts a layer for 64 token-rows (8 a token), the mean over routing: "
            "12.95 GB of them in the bytes shared by the batch (all 128 experts of every layer hold 17.55 GB)") \
        in text.splitlines()
    for serving in ("qwen3-30b-a3b-h200", "gpt-oss-20b-h200", "qwen3next-80b-a3b-h200"):
        routing = json.loads(invoke("price", serving, "--json").stdout)["routing"]
        assert routing["bytes"] == pytest.approx(
            routing["experts_held_bytes"] * routing["distinct"] / routing["experts"], rel=1e-12)
    assert json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json").stdout)["routing"]["experts_held_bytes"] == \
        17553162240


def test_the_readmes_elasticity_is_the_audits() -> None:
    # The README said `streams.append +0.030`; r1-qwen7b-h200's audit gives +0.028: the sequence's 117,497,856 B at
    # 4.8 TB/s × 0.8646 (28.31 µs) over the 1.004 ms pass.
    audit = json.loads(invoke("audit", "r1-qwen7b-h200", "--json").stdout)
    append = next(f for f in audit["facts"] if f["path"] == "streams.append")
    share = (117497856 / (BW * APPEND)) / (4370560992 / (BW * READ) + 117497856 / (BW * APPEND))
    assert round(share, 3) == 0.028 and f"{append['elasticity']:+.3f}" == "+0.028"
    assert "`r1-qwen7b-h200`'s `streams.append +0.028`" in (REPO / "README.md").read_text(encoding="utf-8")


def test_a_best_price_is_judged_against_the_limit_at_its_own_batch() -> None:
    # best --stack prices the expected at its best batch (1) and the limit at its own (580): 0.007122 × the limit
    # compares two batches; the span is judged, as each fitted run's ratio is, against the limit at batch 1.
    data = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert (data["batch"], data["expected"]["batch"]) == (580, 1)
    assert round(data["ratio"], 6) == 0.007122
    span = data["stack_span"]
    assert (span["batch"], round(span["ratio"], 4), span["inside"]) == (1, 0.2384, False)
    assert json.loads(invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405",
                             "--json").stdout)["stack_span"]["batch"] is None
