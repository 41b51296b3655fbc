"""Findings of the 35th README-only walkthrough (issue 13, an auditor's), each kept as a reproducer: an auditor
tracing three shipped prices (the mixture of experts ``qwen3-30b-a3b-h200`` on its measured routing record, the MTP
drafting ``qwen35-27b-h200-mtp`` and ``r1-qwen7b-h200`` under the serving stack ``llamacpp-cuda-2405``) to citations
they can open found the audit naming no retrieval date and no copy of a cited document (the H200 datasheet's
``copies``, the product page its figures were checked against, was in no output at all), a derivation's inputs
listed in one order for a serving and in another for its lock, fact paths the audit prints that ``passprice
explain`` refused (``memory.bandwidth``, ``draft.acceptance.2``, ``stack.memory.reserved`` …), and no way to ask
passprice which fact, 10 % wrong, moves a price most (the audit measured 1 % only, where routing's share is far
from linear: +11.6 % predicted, +18.5 % priced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.cards import load_card
from passprice.registry import Root

QWEN3 = "qwen3-30b-a3b-h200"
MTP = "qwen35-27b-h200-mtp"
R1 = "r1-qwen7b-h200"
STACK = "llamacpp-cuda-2405"
H200_PAGE = "https://www.nvidia.com/en-us/data-center/h200/"
# cite102: the page is a record of its own, read in this text copy (the H200 datasheet's record listed the page under
# copies until then)
H200_COPY = ("https://github.com/bojieli/ai-infra-book/blob/548c568b672a5e7c6004ec5825c15dd80b3d6d91/references/"
             "outline-checks/2026-09-07/systems-cases/nvidia-h200-systems.txt")


def _json(*args: str, root: Path = REPO) -> dict:  # type: ignore[type-arg]
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 0, result.output
    data: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return data


# --- 1. the audit says when each cited copy was retrieved and which copies were read ---------------------------------


def test_1_the_audit_of_a_price_names_each_documents_retrieval_and_copies() -> None:
    # Before: "  nvidia-h200-datasheet — …", "    at: https://nvdam…", "    read: …", then the facts: the record's
    # retrieved = "unknown" and copies = [the product page] were in no output of `audit SERVING`.
    lines = invoke("audit", QWEN3).stdout.splitlines()
    at = lines.index(
        "  nvidia-h200-product-page — NVIDIA H200 GPU product page (Specifications table) (NVIDIA, unknown)")
    assert lines[at + 1] == f"    at: {H200_PAGE}"
    assert lines[at + 2].startswith("    read: bojieli/ai-infra-book's text of the page, ")
    assert lines[at + 3:at + 7] == [
        "    retrieved: 2026-09-07",
        f"    copies: {H200_COPY}",
        # the stored excerpt beside the copies (tests/test_walk108.py)
        "    stored excerpt: sources/excerpts/cite102-excerpt.txt (the lines quoted from the text read, "
        "from the registry's top folder)",
        "    memory.bandwidth: Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 "
        "NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'",
    ]
    # the datasheet, still cited for the INT8 rate: retrieved unknown, no copies, so no copies line
    at = lines.index("  nvidia-h200-datasheet — NVIDIA H200 Tensor Core GPU Datasheet (NVIDIA, 2024)")
    assert lines[at + 3:at + 5] == [
        "    retrieved: unknown",
        "    array: Technical Specifications table, H200 SXM column: 'INT8 Tensor Core 3,958 TOPS' (with sparsity)"]
    azure = lines.index("  azure-ai-benchmarking-guide — Azure AI Benchmarking Guide (Microsoft (Azure), 2024-09-27)")
    assert lines[azure + 3] == "    retrieved: 2026-12-01"  # no copies: none listed, no line
    # then the stored excerpt the record names (tests/test_walk108.py), then the facts
    assert lines[azure + 4].startswith("    stored excerpt: sources/excerpts/github-sources-excerpt.txt")
    assert lines[azure + 5].startswith("    streams.read: ")
    sources = _json("audit", QWEN3)["sources"]
    assert sources["nvidia-h200-product-page"]["copies"] == [H200_COPY]
    assert sources["nvidia-h200-product-page"]["retrieved"] == "2026-09-07"
    assert sources["nvidia-h200-product-page"]["sha256"] is None
    assert sources["nvidia-h200-datasheet"]["copies"] == []
    assert sources["nvidia-h200-datasheet"]["retrieved"] == "unknown"
    assert sources["azure-ai-benchmarking-guide"]["retrieved"] == "2026-12-01"
    assert sources["azure-ai-benchmarking-guide"]["copies"] == []
    markdown = invoke("audit", QWEN3, "--format", "markdown").stdout
    said = (f"checks each quote against them. (retrieved: 2026-09-07; copies: {H200_COPY}; stored excerpt: "
            "sources/excerpts/cite102-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top folder))\n")
    assert said in markdown


def test_1_the_audit_of_a_lock_and_of_a_source_name_them_too() -> None:
    lines = invoke("audit", f"locks/{MTP}.lock.toml").stdout.splitlines()
    at = lines.index("  deepseek-v3-technical-report — DeepSeek-V3 Technical Report (DeepSeek-AI, 2024-12)")
    assert lines[at + 1] == "    at: arXiv:2412.19437; https://arxiv.org/abs/2412.19437"
    assert lines[at + 3] == "    retrieved: unknown"
    source = invoke("audit", "--source", "nvidia-h200-product-page").stdout.splitlines()
    assert source[3:5] == ["  retrieved 2026-09-07", f"  copies: {H200_COPY}"]


def test_1_the_calibrated_on_section_says_when_its_runs_document_was_retrieved() -> None:
    lines = invoke("audit", R1, "--stack", STACK).stdout.splitlines()
    at = lines.index("calibrated on (the measured runs the stack's fitted facts were fitted to):")
    assert lines[at + 2:at + 4] == [
        "    xiongjiedai-gpu-benchmarks — GPU-Benchmarks-on-LLM-Inference (Xiongjie Dai, 2024-05-11)",
        "    at: https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference at commit aa72e0ec86c3",
    ]
    assert lines[at + 4].startswith("    retrieved: ")


# --- 2. one derivation, one order of its inputs -----------------------------------------------------------------------


def _derivations(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index("derivations:") + 1:lines.index("notes:")]


@pytest.mark.parametrize("serving", [QWEN3, MTP])
def test_2_a_serving_and_its_lock_list_each_derivations_inputs_in_the_formulas_order(serving: str) -> None:
    # Before: the lock's audit listed them sorted by name ("bandwidth = …; dot = …", "regs … smem …"), the card's in
    # the order written: the same derivation read two ways in one walkthrough.
    today = _derivations(invoke("audit", serving).stdout)
    pinned = _derivations(invoke("audit", f"locks/{serving}.lock.toml").stdout)
    assert today == pinned
    # (cite71: each input's locator now quotes the Hopper whitepaper's text too)
    assert ("  on_chip.capacity: l2 + (smem + regs) * sms; l2 = 50 MiB (Table 3, H100 SXM5 column: L2 cache size 50 MB "
            "(binary: the device reports 52,428,800 B); p. 37: 'A 50 MB L2 cache in H100'); smem = 228 KiB (Table 3, "
            "H100 SXM5 column: shared memory size per SM, up to 228 KB (p. 27: 'SM shared memory size itself is "
            "configurable up to 228 KB in H100')); regs = 256 KiB (Table 3, H100 SXM5 column: register file size per "
            "SM, 256 KB; p. 40, row 'Register File Size / SM 256 KB 256 KB 256 KB' (A100, H100 SXM5, H100 PCIe)); "
            "sms = 132 (Table 3, H100 SXM5 column: 132 SMs (p. 18: 'The H100 SXM5 GPU has 132 SMs'))") in pinned


def test_2_the_derivations_recompute_by_hand() -> None:
    rows = {f["path"]: f for f in _json("audit", f"locks/{QWEN3}.lock.toml")["facts"]}
    # on_chip.capacity = l2 + (smem + regs) * sms = 50 MiB + (228 + 256) KiB × 132 = 51,200 KiB + 63,888 KiB
    assert 50 * 1024 + (228 + 256) * 132 == 115_088
    assert (rows["on_chip.capacity"]["value"], rows["on_chip.capacity"]["unit"]) == (115_088, "KiB")
    assert rows["on_chip.capacity"]["base_value"] == 115_088 * 1024 == 117_850_112
    # routing.hot_experts = hot / experts = 58 / 128, exactly
    assert rows["routing.hot_experts"]["value"] == 58 / 128 == 0.453125
    # streams.read = dot / bandwidth = 4.48 / 4.8 = 14/15 = 0.93333…, to 4 significant digits
    assert rows["streams.read"]["value"] == round(4.48 / 4.8, 4) == 0.9333
    # array = sparse / sparsity / ops_per_mac = 3,958 TOPS / 2 / (2 op/MAC) = 989.5 TMAC/s
    assert rows["array"]["value"] == 3958 / 2 / 2 == 989.5


def test_2_a_derivation_written_out_of_the_formulas_order_reads_in_it() -> None:
    # sn40l's on_chip.bandwidth is written sn10, sn10_pmus, pmus for `sn10 * pmus / sn10_pmus`: 150 × 1,040 / 640
    fact = load_card(Root(REPO), "sn40l").facts()["on_chip.bandwidth"]
    assert 150 * 1040 / 640 == fact.amount == 243.75
    assert fact.derivation_text() == (
        "sn10 * pmus / sn10_pmus; sn10 = 150 TB/s (SN10: 150 TB/s on-chip bandwidth); pmus = 1040 "
        "(sambanova-sn40l-hot-chips-2024: slides 2-4: 1,040 PMUs a socket); sn10_pmus = 640 (SN10: 640 PMUs)"
    )


# --- 3. every path an audit row prints is a word passprice explain knows ----------------------------------------------


@pytest.mark.parametrize(("path", "entry"), [
    ("memory.bandwidth", "memory: "),
    ("memory.capacity", "held: "),
    ("on_chip.capacity", "on chip: "),
    ("host.stream", "host: "),
    ("draft.acceptance.2", "drafts: "),
    ("acceptance", "drafts: "),
    ("stack.memory.reserved", "stack: "),
    ("stack.range.rows.min", "BeyondStack: "),
    ("stack.range.position.max", "BeyondStack: "),
])
def test_3_explain_names_the_entry_of_a_fact_path_an_audit_prints(path: str, entry: str) -> None:
    # Before: "passprice: error: explain: 'memory.bandwidth' is not a term passprice defines …" (exit 2)
    result = invoke("explain", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(entry)


def test_3_explain_knows_every_row_of_the_three_audits() -> None:
    paths = {f["path"] for args in ([QWEN3], [MTP], [R1, "--stack", STACK]) for f in _json("audit", *args)["facts"]}
    assert len(paths) == 26
    unknown = [p for p in sorted(paths) if invoke("explain", p).exit_code != 0]
    assert unknown == []


# --- 4. audit --step: which fact, 10 % wrong, moves the price most ----------------------------------------------------


def test_4_audit_step_measures_each_elasticity_over_ten_percent() -> None:
    text = invoke("audit", QWEN3, "--step", "10").stdout
    assert ("  elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing, measured over a 10 % "
            "change: the fact 10 % higher moves tokens/s by 10 × its elasticity %") in text
    rows = {f["path"]: f for f in _json("audit", QWEN3, "--step", "10")["facts"]}
    assert {f["step"] for f in rows.values()} == {0.1}
    # the elasticity column; a fact another row derives from has its re-derived figure after it (left32)
    inputs = {path for path, f in rows.items() if f["derived_by"]}
    shown = {line.split()[1]: line.split()[-2 if line.split()[1] in inputs else -1] for line in text.splitlines()
             if line[:3] in ("*  ", "!  ", "   ") and len(line.split()) > 4}
    assert (shown["memory.bandwidth"], shown["routing.hot_share"], shown["routing.hot_experts"]) == (
        "+1.000", "+1.849", "-0.230")
    # at 1 % the slope is +1.156: routing.hot_share is the fact whose error moves the price most either way, and
    # 10 % of it moves tokens/s by 18.5 %, not the 11.6 % the 1 % slope predicts
    one = {f["path"]: f["elasticity"] for f in _json("audit", QWEN3)["facts"]}
    assert round(one["routing.hot_share"], 3) == 1.156
    assert max(rows, key=lambda p: abs(rows[p]["elasticity"])) == "routing.hot_share"


def test_4_the_ten_percent_elasticity_of_a_stream_share_recomputes_by_hand() -> None:
    price = _json("price", QWEN3)
    weights, sequence, batch = price["weight_bytes"], price["sequence_bytes"], price["batch"]
    assert (round(weights), sequence, batch) == (13_774_102_215, 201_424_896, 64)  # expected experts: not whole
    # memory = weights / (4.8 TB/s × 0.9333) + 64 × sequence / (4.8 TB/s × 0.8646) = 3.0747 ms + 3.1062 ms
    base = batch / (weights / (4.8e12 * 0.9333) + batch * sequence / (4.8e12 * 0.8646))
    assert round(base, 1) == 10_354.4
    # streams.read 10 % higher: the weights' 3.0747 ms becomes 2.7952 ms, 64 / 5.9014 ms = 10,844.8 tokens/s
    moved = batch / (weights / (4.8e12 * 0.9333 * 1.1) + batch * sequence / (4.8e12 * 0.8646))
    assert round(moved, 1) == 10_844.8
    rows = {f["path"]: f for f in _json("audit", QWEN3, "--step", "10")["facts"]}
    assert rows["streams.read"]["elasticity"] == pytest.approx((moved / base - 1) / 0.1, rel=1e-9)
    assert f"{rows['streams.read']['elasticity']:+.3f}" == "+0.474"


def test_4_the_routing_shares_ten_percent_elasticity_is_the_price_on_a_record_ten_percent_higher(
    tmp_path: Path,
) -> None:
    # re-priced independently: a copy of the measured record with hot_share 0.99 instead of 0.9
    root = copy_root(tmp_path)
    record = (root / "facts/routing/qwen3-30b-a3b-measured.toml").read_text(encoding="utf-8")
    shifted = record.replace("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.99\n")
    assert shifted != record
    (root / "facts/routing/qwen3-30b-a3b-shifted.toml").write_text(shifted, encoding="utf-8")
    base = _json("price", QWEN3, "--no-lock", root=root)["tokens_per_s"]
    moved = _json("price", QWEN3, "--no-lock", "--routing", "qwen3-30b-a3b-shifted", root=root)["tokens_per_s"]
    rows = {f["path"]: f for f in _json("audit", QWEN3, "--step", "10", root=root)["facts"]}
    assert rows["routing.hot_share"]["elasticity"] == pytest.approx((moved / base - 1) / 0.1, rel=1e-9)
    assert round(100 * (moved / base - 1), 1) == 18.5


def test_4_a_step_refused_above_is_measured_below_and_said_in_its_size() -> None:
    text = invoke("audit", "gpt-oss-20b-h200", "--routing", "uniform", "--step", "10").stdout
    assert ("  (−10 %): measured with the fact 10 % lower, since 10 % higher is refused: routing.hot_experts "
            "(BadRouting)") in text
    assert ("  refused: not measured, since 10 % higher and 10 % lower are both refused: routing.hot_share "
            "(BadRouting); the price itself is not refused and rests on the fact as written") in text


@pytest.mark.parametrize(("args", "line"), [
    (["audit", QWEN3, "--step", "0"],
     "passprice: error: Invalid value for '--step': 0 is out of range (a finite number from 0.0001 to 50) "
     "(see '"),
    (["audit", QWEN3, "--step", "60"],
     "passprice: error: Invalid value for '--step': 60 is out of range (a finite number from 0.0001 to 50) "
     "(see '"),
    (["audit", "--source", "ws1-design", "--step", "10"],
     "passprice: error: --source and --fact audit the registry: give one of them, and no TARGET, serving option, "
     "--stack, --step or --plot (see '"),
])
def test_4_a_step_audit_cannot_take_is_one_error_line(args: list[str], line: str) -> None:
    result = invoke(*args)  # in-process the program is named `cli` in the usage hint: `(see 'cli audit --help')`
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(line) and result.stderr.endswith(" audit --help')\n")
    assert result.stderr.count("\n") == 1


def test_4_the_default_step_prints_what_it_printed() -> None:
    assert invoke("audit", QWEN3, "--step", "1").stdout == invoke("audit", QWEN3).stdout


# --- 5. a synthetic checkpoint's header: how to rebuild the bytes its digests name ------------------------------------

QWEN3_HEADER = "4918213735724575b8dff44211afa6f6401a618a51dd8974001ee6b1f65756e0"


def test_5_the_audit_says_how_a_synthetic_header_is_rebuilt_byte_for_byte() -> None:
    # Before: the line ended "the type mix its origin names"; the header file it names is shipped nowhere, and
    # `synth examples/configs/qwen3-30b-a3b.json -o qwen3-30b-a3b-q4_k_m.header.gguf` wrote sha256 b64043a1….
    lines = invoke("audit", QWEN3).stdout.splitlines()
    assert f"    header sha256: {QWEN3_HEADER}" in lines
    assert lines[-1] == (
        "    a synthetic header: built from a published configuration, no published file of these bytes; its byte "
        "counts follow the configuration and the type mix its origin names; `passprice synth` rebuilds these bytes "
        "from that configuration and mix with `--import qwen3-30b-a3b-q4_k_m` in a registry of your own (the "
        "header's general.name; with -o alone general.name is the file's name, and the header sha256 and content "
        "differ)"
    )
    # a header not built by synth (tests/hybrids.py wrote the Qwen3.5-like one) gets no such advice
    assert invoke("audit", MTP).stdout.splitlines()[-1].endswith("the type mix its origin names")


def test_5_what_the_audit_says_rebuilds_the_header_and_what_it_warns_of_does_not(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    config = str(REPO / "examples/configs/qwen3-30b-a3b.json")
    alone = tmp_path / "qwen3-30b-a3b-q4_k_m.header.gguf"
    assert invoke("synth", config, "--mix", "Q4_K_M", "-o", str(alone), root=root).exit_code == 0
    assert _json("header", str(alone))["sha256"] != QWEN3_HEADER
    rebuilt = tmp_path / "rebuilt.header.gguf"
    made = invoke("synth", config, "--mix", "Q4_K_M", "-o", str(rebuilt), "--import", "qwen3-30b-a3b-q4_k_m",
                  "--force", root=root)
    assert made.exit_code == 0, made.output
    assert _json("header", str(rebuilt))["sha256"] == QWEN3_HEADER


# --- 6. run outside any registry, the registry files an audit names are the built-in registry's -----------------------


def test_6_outside_a_registry_the_audit_names_the_built_in_registrys_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: "at: facts/stacks/README.md in this registry" and "registry/measurements/…: 111 runs" from /tmp, where
    # no such file is, while the checkpoint line beside them read "the built-in registry's registry/checkpoints/…".
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(tmp_path)
    stacked = CliRunner().invoke(cli, ["audit", R1, "--stack", STACK])
    assert stacked.exit_code == 0, stacked.output
    lines = stacked.stdout.splitlines()
    assert "    at: the built-in registry's facts/stacks/README.md" in lines
    assert ("  the built-in registry's registry/measurements/xiongjiedai-llama3-llamabench.toml: 111 runs on 11 cards "
            "(a100_pcie_80gb, a100_sxm4_80gb, a40, h100_pcie_80gb …), citing xiongjiedai-gpu-benchmarks") in lines
    drafted = CliRunner().invoke(cli, ["audit", MTP]).stdout.splitlines()
    assert "    at: the built-in registry's facts/drafts/qwen35-mtp.toml" in drafted
    assert ("  qwen35-mtp — Qwen3.5 MTP block (up to three drafts, the block reused) (the built-in registry's "
            "facts/drafts/qwen35-mtp.toml)") in drafted
    routed = CliRunner().invoke(cli, ["audit", QWEN3, "--format", "markdown"]).stdout
    assert ("Routing record: qwen3-30b-a3b-measured — Qwen3-30B-A3B, measured skew (single-domain Python, \\~8k "
            "tokens) (the built-in registry's facts/routing/qwen3-30b-a3b-measured.toml)") in routed
    # in a registry, its own files, as before
    inside = invoke("audit", MTP).stdout.splitlines()
    assert "    at: facts/drafts/qwen35-mtp.toml in this registry" in inside


# --- 7. an elasticity moves one fact alone: the audit names the facts derived from it ------------------------------


def test_7_the_audit_names_the_rows_derived_from_another_row() -> None:
    # memory.bandwidth reads +1.000, yet streams.read = 4.48 TB/s / memory.bandwidth: re-derived with the bandwidth
    # 10 % higher (5.28 TB/s) the share is 4.48 / 5.28 = 0.8485 and the read rate 5.28 × 0.8485 = 4.48 TB/s again
    assert round(4.48 / (4.8 * 1.1), 4) == 0.8485
    assert round(4.8 * 1.1 * (4.48 / (4.8 * 1.1)), 12) == 4.48
    lines = invoke("audit", MTP).stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  by hand: "))
    assert lines[at + 1] == (
        "  inputs of other rows' derivations: memory.bandwidth (of streams.read, streams.rewrite, streams.append) "
        "+0.000 re-derived; vector (of scale) +0.000 re-derived; draft.acceptance.1 (of draft.acceptance.2) +0.891 "
        "re-derived — each elasticity in the table moves the fact alone, the facts derived from it held as written; "
        "re-derived, they are recomputed from it by their formulas"
    )
    assert lines[at + 2] == ""
    # a stack's fitted facts derive from runs, not from another row: the stacked audit names the card's only
    stacked = invoke("audit", R1, "--stack", STACK).stdout.splitlines()
    assert ("  inputs of other rows' derivations: memory.bandwidth (of streams.read, streams.append) +0.000 "
            "re-derived; vector (of scale) +0.113 re-derived — each elasticity in the table moves the fact alone, the "
            "facts derived from it held as written; re-derived, they are recomputed from it by their "
            "formulas") in stacked
