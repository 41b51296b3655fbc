"""Slip 41 (issue 13: can a change slip past a lock or a review?), each reproduced first.

Of the changes tried to every input a price reads, one left a citation the audit could not trace to its source
record: a derivation's figure read from a document of its own (``derivation.inputs.NAME.source``), where no fact of
the price cites that document. The shipped MI300X's ``on_chip.capacity`` reads its ``vgpr`` (512 KiB a CU) from
``amd-rocm-gpu-specs``; ``audit locks/r1-qwen7b-mi300x-int8kv.lock.toml`` named the id in its derivation line only:
its citations, its ``--json`` ``sources`` (a program following ``facts[].derivation.inputs.vgpr.source`` found no
such key), the markdown's Sources and the cited documents' caveats (the record's "the version read is not recorded")
left the document out, and a record of it changed since the lock was committed was not said. The same for the WS1
lock's stream shares, which read Hopper's BabelStream figures from ``azure-ai-benchmarking-guide``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke

MI300X = "locks/r1-qwen7b-mi300x-int8kv.lock.toml"
ROCM_NOTE = "The 'latest' documentation changes with each ROCm release; the version read is not recorded."


def _input_sources(out: dict[str, object]) -> set[str]:
    """Every source a derivation input of an audit's facts names."""
    found = set()
    for fact in out["facts"]:  # type: ignore[attr-defined]
        for item in ((fact["derivation"] or {}).get("inputs") or {}).values():
            if item.get("source"):
                found.add(item["source"])
    return found


def test_1_the_audit_lists_the_document_a_derivations_figure_is_read_from() -> None:
    result = invoke("audit", MI300X)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    cited = lines[lines.index("citations, by source:") + 1:lines.index("derivations:")]
    at = cited.index("  amd-rocm-gpu-specs — AMD GPU specifications (ROCm documentation) (AMD, unknown)")
    assert cited[at + 1:at + 6] == [
        "    at: https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html",
        "    read: The MI300X row of the table (VGPR file 512 KiB per CU on CDNA 3) is taken as the card draft "
        "docs/seed/cardfacts/mi300x.toml gave it; it was not re-read in the card review.",
        "    retrieved: unknown",  # walkthrough 35: the record's retrieval date, under how it was read
        "    on_chip.capacity, its figure vgpr = 512 KiB: GPU specifications table, MI300X row: VGPR file 512 KiB per "
        "CU (CDNA 3)",
        "",
    ]
    # the document's caveat, in no output before
    assert f"  amd-rocm-gpu-specs: {ROCM_NOTE}" in lines
    # the fact's own document keeps its line; the figure is not listed twice under it
    # (the locator quotes the white paper since tests/test_walk108.py)
    assert ("    on_chip.capacity: XCD paragraph: 'incorporates 8 accelerator complex dies (XCD)', 'The 38 CUs all "
            "share a 4MB L2 cache'; Infinity Cache paragraph (memory section): '128 channels or 256MB of data'; 'The "
            "LDS in the AMD CDNA 3 compute units remain at 64KB'; endnote MI300-15: '304 compute units (CUs)' (the "
            "VGPR file from the ROCm specifications table, amd-rocm-gpu-specs)") in cited
    assert sum("its figure" in line for line in cited) == 1


def test_1_every_document_a_figure_is_read_from_is_in_the_json_and_markdown() -> None:
    out = json.loads(invoke("audit", MI300X, "--json").stdout)
    assert out["sources"]["amd-rocm-gpu-specs"]["note"] == ROCM_NOTE
    assert out["sources"]["amd-rocm-gpu-specs"]["where"] == "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"
    # every lock shipped, and every registered serving that prices: no input's source is missing from `sources`
    targets = [f"locks/{p.name}" for p in sorted((REPO / "locks").glob("*.lock.toml"))]
    targets += [p.stem for p in sorted((REPO / "registry" / "servings").glob("*.toml"))]
    audited = 0
    for target in targets:
        result = invoke("audit", target, "--json")
        if result.exit_code != 0:  # a serving the model refuses (deepseek-v3's on one card) has no audit
            continue
        data = json.loads(result.stdout)
        assert _input_sources(data) <= set(data["sources"]), target
        audited += 1
    assert audited == 25  # 10 locks (r1-qwen7b-h200-llamacpp since stacklock 29, gpt-oss-120b-h100: moe46), 15 servings
    ws1 = json.loads(invoke("audit", "locks/qwen35-27b-ws1-trailing.lock.toml", "--json").stdout)
    assert "azure-ai-benchmarking-guide" in ws1["sources"]
    markdown = invoke("audit", MI300X, "--format", "markdown").stdout
    assert ("- `amd-rocm-gpu-specs`: https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html. Read: The MI300X "
            "row of the table") in markdown
    assert f"- `amd-rocm-gpu-specs`: {ROCM_NOTE}" in markdown


def test_1_a_record_a_figure_is_read_from_changed_since_the_lock_is_said(tmp_path: Path) -> None:
    from test_diff import git
    from test_leftovers_s24 import commit_all

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    args = ("audit", str(path / MI300X))
    assert json.loads(invoke(*args, "--json", root=path).stdout)["sources_since_lock"] == []
    record = path / "sources" / "amd-rocm-gpu-specs.toml"
    old = 'url = "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"'
    record.write_text(record.read_text().replace(old, 'url = "https://rocm.docs.amd.com/en/docs-7.0/gpu-specs.html"'))
    commit_all(path, "the specifications page moved")
    # Before: [] — the lock's on_chip.capacity reads vgpr from that record, and nothing said it had changed.
    [since] = json.loads(invoke(*args, "--json", root=path).stdout)["sources_since_lock"]
    assert since["id"] == "amd-rocm-gpu-specs"
    assert since["changed"] == ["url: https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html → "
                                "https://rocm.docs.amd.com/en/docs-7.0/gpu-specs.html"]


def test_1_an_input_citing_a_document_no_fact_cites_is_listed(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    old = 'derivation.inputs.dot = { value = 4.48, unit = "TB/s", locator'
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, old.replace("locator", 'source = "xytpai-nvbench", locator')))
    out = json.loads(invoke("audit", "r1-qwen7b-h200", "--json", root=root).stdout)
    # Before: sources held azure-ai-benchmarking-guide, nvidia-h200-datasheet, nvidia-hopper-whitepaper only
    assert sorted(out["sources"]) == ["azure-ai-benchmarking-guide", "nvidia-h200-datasheet",
                                      "nvidia-h200-product-page", "nvidia-hopper-whitepaper", "xytpai-nvbench"]
    text = invoke("audit", "r1-qwen7b-h200", root=root).stdout
    assert ("    streams.read, its figure dot = 4.48 TB/s: Azure_Results/ND_H200_v5_results.md, HBM Bandwidth table "
            "(BabelStream): row '| Dot   | 4.48              |' in TB/s\n") in text
