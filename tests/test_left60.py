"""Left60: what walkthrough 82's auditor could not trace, and two review lines that said less than the tool knew.

1. Notes that claimed what no registered source states: the H200's ``memory.capacity`` note named an MLPerf v4.1
   system file (``H200-SXM-141GBx8_TRT_MaxQ.json``) no source record registers (its ``host.capacity`` and
   ``host.read`` notes leaned on the same file); the Qwen3-30B-A3B routing record's note said the handbook reports
   "the median over layers", where the page names a median only for its ``cache_helps`` gate; the llama.cpp stack's
   ``memory.reserved`` note said "290 MiB (70B)" where its locator and the stored log held the 70B scratch buffer
   (145.00 MiB) alone: the log prints 148.19 + 145.00 = 293.19 MiB.
2. ``diff``: a citation moved to another source under a locator still naming the old source's file, and a provenance
   raised to ``measured`` under a locator calling the figure a placeholder, read only the generic questions.
3. ``reproduce``: a routing fact whose citation alone changed was shown beside the fact that moved as "2 facts at
   once (hot_experts 0.453125 → 0.453125, …)".
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import attrs

from cli_helpers import REPO, copy_root
from passprice.locks import read_lock
from passprice.registry import Root
from passprice.reproduce import RoutingTogether, reproduce
from passprice.review import Side, SideInfo
from passprice.review.changes import _foreign_files, compare_file, locator_files

H200 = "facts/cards/h200_sxm_141gb.toml"
ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"
STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _toml(rel: str, root: Path = REPO) -> dict[str, Any]:
    return tomllib.loads((root / rel).read_text(encoding="utf-8"))


def _excerpt_lines(name: str, section: str) -> dict[int, str]:
    """The numbered lines (``N<TAB>TEXT``) of the section of ``sources/excerpts/NAME`` whose ``== `` line starts with
    ``section``."""
    text = (REPO / "sources" / "excerpts" / name).read_text(encoding="utf-8")
    block = text.split(f"\n== {section} ", 1)[1].split("\n== ", 1)[0].splitlines()[1:]
    return {int(n): line for n, line in (row.split("\t", 1) for row in block)}


def test_1a_the_h200_notes_name_no_file_no_source_registers() -> None:
    """Before: memory.capacity's note ended "NVIDIA's MLPerf Inference v4.1 system file
    H200-SXM-141GBx8_TRT_MaxQ.json also states '141 GB'", host.capacity's "NVIDIA's MLPerf v4.1 8 x H200 system has 2
    TB of host memory, about 250 GB a GPU" and host.read's "PCIe Gen5 x16 (MLPerf v4.1 H200 system file: …)"; no
    record in sources/ names MLPerf v4.1. The notes now say what their cited sources state."""
    card = _toml(H200)
    records = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "sources").glob("*.toml"))
    # no record is MLPerf v4.1's (the v6.0 record's note mentions a v4.1 file the drafts named, "not re-read")
    addresses = [tomllib.loads(p.read_text(encoding="utf-8"))["source"].get("url", "")
                 for p in (REPO / "sources").glob("*.toml")]
    assert [a for a in addresses if "v4.1" in a] == [] and "inference_results_v4.1" in records
    notes = {f"{k}.{j}": v["note"] for k, t in card.items() for j, v in t.items()
             if isinstance(v, dict) and isinstance(v.get("note"), str)}
    assert [p for p, note in notes.items() if "MLPerf" in note or "MaxQ" in note] == []
    assert card["memory"]["capacity"]["note"] == (  # 'Datasheet decimal GB.' until cite102 cited the page
        "Decimal GB, as NVIDIA's product page prints it. CUDA reports about 143,771 MiB (~150.8e9 B; figure from the "
        "card draft docs/seed/cardfacts/h200_sxm_141gb.toml, not re-verified), "
        "from six HBM3e stacks.")
    assert card["host"]["capacity"]["note"] == "Same placeholder on every real card."
    # host.read halves the published both-ways 128 GB/s, which its locator quotes; 'x16' was the MLPerf file's (the
    # datasheet's figure until cite102, the product page's since)
    read = card["host"]["read"]
    assert read["note"] == "One direction of the product page's PCIe Gen5 figure, which counts both together."
    assert "PCIe Gen5: 128GB/s" in read["locator"] and (read["value"], read["derivation"]["formula"]) == (
        64, "both_ways / directions")


def test_1b_the_routing_note_says_no_median_the_page_does_not() -> None:
    """The handbook's table gives one figure a workload (58/128 narrow, 65/128 diverse); the page names a median only
    in its gate, "`cache_helps` is a convenience gate (`median hot_frac < threshold`)" (line 21 of its Markdown at
    a063be9299). Before, the note said the source "reports the median over layers"."""
    note = _toml(ROUTING)["routing"]["note"]
    page = _excerpt_lines("cite70-excerpt.txt", "gpu-container-handbook-routing-derisk")
    assert "median over layers" not in note
    assert "reports one figure a workload; how that figure sums the layers it does not say" in note
    # each thing the note says the page states, the stored page states
    assert "cache_helps gate, 'median hot_frac < threshold')" in note
    assert "(`median hot_frac < threshold`)" in page[21] and page[21].startswith("`cache_helps` is a convenience gate")
    assert "ffn_down_exps.weight.counts" in note and "`ffn_down_exps.weight.counts` array" in page[30]
    assert "65 / 128 experts for 90 %" in note and page[36].startswith("| diverse (prose/code/math) | ~1k | 65/128 ")
    assert "the median" not in " ".join(page[n] for n in (18, 32, 34, 36, 37))  # the table and its measure: no median


def test_1d_the_b200_host_note_is_its_mlperf_files() -> None:
    """Of the same kind, found looking further: the B200's host.capacity note says "Nebius's 8 x B200 MLPerf v6.0
    system has 1.8 TB of host memory, about 225 GB a GPU"; the registered v6.0 record's file (cited by the B200's
    memory.capacity, host.read and host.write) prints it on its line 18, now stored (the file's blob c07c226bbd at
    ab33b2144a, as cite70 read it)."""
    note = _toml("facts/cards/b200.toml")["host"]["capacity"]["note"]
    nebius = _excerpt_lines("cite70-excerpt.txt", "mlcommons-inference-results-v6.0")
    assert "MLPerf v6.0 system has 1.8 TB of host memory, about 225 GB a GPU" in note
    assert nebius[18].strip() == '"host_memory_capacity": "1.8 TB",' and nebius[48].strip().startswith(
        '"system_name": "Nebius B200 n1 (8x B200-SXM-180GB')
    assert 1.8e12 / 8 == 225e9


def test_1c_the_reserved_note_sums_what_the_log_prints() -> None:
    """The H100 PCIe notebook's LLaMA 2 load logs at n_ctx 512: 7B 73.69 MiB compute + 70.50 MiB scratch = 144.19 MiB;
    70B 148.19 + 145.00 = 293.19 MiB (before: "290 MiB (70B)", the locator quoting the 70B scratch buffer alone)."""
    fact = _toml(STACK)["memory"]["reserved"]
    text = (REPO / "sources" / "excerpts" / "xiongjiedai-aa72e0e-excerpt.txt").read_text(encoding="utf-8")
    log = text.split("\n== LLaMA 2/Professional GPUs/H100_PCIe_v2.ipynb ==\n", 1)[1].split("\n== ", 1)[0].splitlines()
    quoted = re.findall(r"'([^']+)'", fact["locator"])
    assert quoted == ["VRAM scratch buffer: 70.50 MiB", "compute buffer total size = 73.69 MiB",
                      "compute buffer total size = 148.19 MiB", "VRAM scratch buffer: 145.00 MiB"]
    buffers = [float(line.split()[-2]) for line in log if "buffer" in line]
    assert buffers == [73.69, 70.50, 148.19, 145.00]  # in the notebook's order: 7B, then 70B
    assert all(any(q in line for line in log) for q in quoted)
    assert (round(73.69 + 70.50, 2), round(148.19 + 145.00, 2)) == (144.19, 293.19)
    assert "144.19 MiB (7B: 73.69 + 70.50) to 293.19 MiB (70B: 148.19 + 145.00) at n_ctx 512" in fact["note"]
    assert "290 MiB" not in fact["note"] and fact["value"] == 512
    assert "to 293 MiB (70B)" in (REPO / "facts" / "stacks" / "README.md").read_text(encoding="utf-8")


def _review(tmp: Path, head_card: str, sources: dict[str, bytes] | None = None) -> dict[str, Any]:
    """The H200 card's fact changes, BASE the checkout's card, HEAD ``head_card`` (written in ``tmp``, with the
    schemas: a folder side reads its files where they lie); both sides holding the checkout's source records (HEAD's
    overridden by ``sources``), as the review builds them: path -> to_verify."""
    (tmp / "facts" / "cards").mkdir(parents=True, exist_ok=True)
    if not (tmp / "schema").exists():
        shutil.copytree(REPO / "schema", tmp / "schema")
    (tmp / H200).write_text(head_card, encoding="utf-8")
    records = {f"sources/{p.name}": p.read_bytes() for p in (REPO / "sources").glob("*.toml")}
    base = Side(SideInfo("BASE"), Root(REPO), {H200: (REPO / H200).read_bytes(), **records})
    head = Side(SideInfo("HEAD"), Root(tmp), {H200: head_card.encode(), **records, **(sources or {})})
    files = _foreign_files(head, (compare_file(base, head, H200),))
    return {c.path: c.to_verify for c in files[0].facts}


def _table(text: str, name: str) -> tuple[int, int]:
    at = text.index(f"\n[{name}]\n")
    return at, text.index("\n[", at + 1)


def _edited(name: str, old: str, new: str) -> str:
    text = (REPO / H200).read_text(encoding="utf-8")
    start, end = _table(text, name)
    assert text[start:end].count(old) == 1
    return text[:start] + text[start:end].replace(old, new) + text[end:]


def test_2a_a_citation_moved_under_the_old_sources_file_is_asked_by_name(tmp_path: Path) -> None:
    """streams.read re-cited azure-ai-benchmarking-guide → xytpai-nvbench, its locator still
    'Azure_Results/ND_H200_v5_results.md (…)': before, only "its citation changed: does xytpai-nvbench: Azure_Results/…
    give what its derivation (dot / bandwidth) takes from it?"."""
    head = _edited("streams.read", 'source = "azure-ai-benchmarking-guide"', 'source = "xytpai-nvbench"')
    asks = _review(tmp_path, head)
    assert list(asks) == ["streams.read"]
    assert asks["streams.read"].startswith(
        "its citation moved from azure-ai-benchmarking-guide to xytpai-nvbench while its locator still names "
        "Azure_Results/ND_H200_v5_results.md, the file it named under azure-ai-benchmarking-guide; xytpai-nvbench's "
        "record names no such file: is it a file of xytpai-nvbench's, or is the source wrong?; its citation changed: "
        "does xytpai-nvbench: Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6)")
    # A record that names the file (its read lists it) is not asked so: the generic question alone.
    record = (REPO / "sources" / "xytpai-nvbench.toml").read_text(encoding="utf-8")
    named = record.replace('read = "', 'read = "Also Azure_Results/ND_H200_v5_results.md. ', 1)
    asks = _review(tmp_path, head, {"sources/xytpai-nvbench.toml": named.encode()})
    assert asks["streams.read"].startswith("its citation changed: does xytpai-nvbench: Azure_Results/")
    # The path as the locators write it (a notebook path with spaces is taken from its last space)
    assert locator_files("Azure_Results/ND_H200_v5_results.md (NVIDIA H200 141GB, CUDA 12.6), HBM table") == (
        "Azure_Results/ND_H200_v5_results.md",)
    assert locator_files("LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: row '| x |'; p. 18: 'H100 v1.04'") == (
        "GPUs/H100_PCIe_v3.ipynb",)


def test_2b_a_placeholder_made_measured_is_asked_as_one(tmp_path: Path) -> None:
    """host.capacity 512 GiB assumed → measured under its locator's 'every real card has the 512 GiB pinned-host
    placeholder': before, only "the provenance is stronger (assumed → measured): does passprice-card-review: … state
    512 GiB, measured?"."""
    asks = _review(tmp_path, _edited("host.capacity", 'provenance = "assumed"', 'provenance = "measured"'))
    assert asks["host.capacity"] == (
        "the provenance is stronger (assumed → measured) but its locator says 'placeholder': a measured figure is one "
        "its source states; does passprice-card-review: Review decisions and the table above them: every real card "
        "has the 512 GiB pinned-host placeholder (not a card property) state 512 GiB, measured?")
    # on_chip.capacity estimated → published: its locator says "(the H100's 132-SM configuration, assumed for the
    # H200)", its note "Estimated, not derived" (the locator is read first)
    asks = _review(tmp_path, _edited("on_chip.capacity", 'provenance = "estimated"', 'provenance = "published"'))
    assert asks["on_chip.capacity"].startswith(
        "the provenance is stronger (estimated → published) but its locator says 'assumed': a published figure is "
        "one its source states; does nvidia-hopper-whitepaper: Table 3")
    # raised to measured under a locator and note that say neither: the generic question, as before
    asks = _review(tmp_path, _edited("host.read", 'provenance = "derived"', 'provenance = "measured"'))
    assert asks["host.read"] == (
        "the provenance is stronger (derived → measured): does nvidia-h200-product-page: Specifications table, "
        "Interconnect row (its label, the H200 SXM cell, the H200 NVL cell): 'Interconnect NVIDIA NVLink™: 900GB/s "
        "PCIe Gen5: 128GB/s 2- or 4-way NVIDIA NVLink bridge: 900GB/s per GPU PCIe Gen5: 128GB/s' (the SXM cell's "
        "PCIe Gen5 figure, both directions together) state 64 GB/s, measured?")  # the datasheet's locator until cite102


def test_3_a_routing_fact_whose_citation_alone_changed_is_no_value_change(tmp_path: Path) -> None:
    """hot_share 0.9 → 0.8 and hot_experts re-cited (its row quoted with the page's bold), the lock
    qwen3-30b-a3b-h200 reproduced: before, "routing record qwen3-30b-a3b-measured's 2 facts at once (hot_experts
    0.453125 → 0.453125, hot_share 0.9 → 0.8): tokens/s -8.012 %". One fact moved: no group; each alone."""
    root = copy_root(tmp_path)
    path = root / ROUTING
    text = path.read_text(encoding="utf-8")
    assert text.count("58/128 (45%)\"") == 1 and text.count("value = 0.9\n") == 1
    path.write_text(text.replace("58/128 (45%)\"", "58/128 (**45%**)\"").replace("value = 0.9\n", "value = 0.8\n"),
                    encoding="utf-8")
    lock = read_lock(root / "locks" / "qwen3-30b-a3b-h200.lock.toml")
    rep = reproduce(Root(root), lock)
    assert rep.routing is None
    drifted = {d.path: (d.pinned.value, d.today.value if d.today else None) for d in rep.today.drift}
    assert drifted["routing.hot_experts"] == (0.453125, 0.453125) and drifted["routing.hot_share"] == (0.9, 0.8)
    # The rerouted form still lists a fact that did not move, said by what changed in it, beside one that did.
    was = lock.facts["routing.hot_experts"]
    now = attrs.evolve(was, locator="another row")
    share = lock.facts["routing.hot_share"]
    together = RoutingTogether("uniform", "qwen3-30b-a3b-measured", (
        ("routing.hot_experts", was, now), ("routing.hot_share", share, attrs.evolve(share, value=0.8, amount=0.8))),
        "tokens/s -8.012 %")
    assert together.describe() == (
        "routing record uniform → qwen3-30b-a3b-measured as a whole (hot_experts 0.453125, citation changed, "
        "hot_share 0.9 → 0.8): tokens/s -8.012 %")
