"""The CUDA C++ Programming Guide's 'Shared Memory', MLPerf v6.0's Nebius B200 system file and the gpu-container
handbook's routing de-risk page are checked against copies pinned to a commit, each quote verbatim (cite70).

Found checking the 52 spans that cite them (of the 384 left by cite69): the 42 of the guide (three a card, each its
heading 'Shared Memory') are the heading of K.4.3 (compute capability 5.x) in NVIDIA's PDF of the guide, v11.7, whose
sentence gives the 32 banks and 32 bits a bank a clock cycle every on-chip bandwidth multiplies (test_2, test_3); the
6 of the Nebius file are its keys and values at MLCommons' publishing commit ab33b2144a (the source record named no
commit; it now names that one); the handbook's table heading was quoted 'The real result - Qwen3 routes
near-uniform', a hyphen for the page's em dash, and now reads as the page does (its 3 other spans were verbatim).
``sources/excerpts/cite70-excerpt.txt`` holds only the lines quoted, with each file's address and commit. The H100
datasheet was found nowhere; NVIDIA's H100 product page states the SXM column 21 of its 32 quotes name (test_4),
recorded as the product page, not the datasheet. No value changed.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite70-excerpt.txt"
GUIDE, MLPERF, HANDBOOK = ("nvidia-cuda-programming-guide", "mlcommons-inference-results-v6.0",
                           "gpu-container-handbook-routing-derisk")
H100 = "nvidia-h100-datasheet"  # matched on NVIDIA's product page, not the datasheet (test_4)
SOURCES = (GUIDE, MLPERF, HANDBOOK, H100)
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


@pytest.fixture(scope="module")
def excerpt() -> dict[str, tuple[str, str, list[tuple[int, str]]]]:
    # source -> (path, URL, [(page or line number, text)]); '#' lines before the first section are the header
    out: dict[str, tuple[str, str, list[tuple[int, str]]]] = {}
    lines: list[tuple[int, str]] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            out[m.group(1)] = (m.group(2), m.group(3), lines)
        elif lines is not None:
            number, text = line.split("\t", 1)
            lines.append((int(number), " ".join(text.split())))  # the PDF's no-break spaces read as spaces
        else:
            assert line.startswith("# "), line
    return out


def _cited(table: Any, where: str, source: str | None) -> Iterator[tuple[str, str, str, Any]]:
    # (source, where, locator, value) of each table with a locator below ``table``; a derivation input without its
    # own source cites its fact's (as tests/test_cite66.py reads them)
    if isinstance(table, dict):
        own = table.get("source")
        source = own if isinstance(own, str) else source
        if isinstance(table.get("locator"), str) and source is not None:
            yield source, where, table["locator"], table.get("value")
        for key, value in table.items():
            yield from _cited(value, f"{where}:{key}", source)


@pytest.fixture(scope="module")
def citing() -> dict[str, list[tuple[str, str, Any]]]:
    # source -> [(file:key path, locator, value)] of every fact and derivation input citing one of SOURCES
    out: dict[str, list[tuple[str, str, Any]]] = {s: [] for s in SOURCES}
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            for source, where, locator, value in _cited(tomllib.load(f), str(path.relative_to(REPO)), None):
                if source in out:
                    out[source].append((where, locator, value))
    return out


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        return dict(tomllib.load(f)["source"])


def test_1_each_excerpt_is_of_the_document_its_record_names(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    assert sorted(excerpt) == sorted(SOURCES)
    # the guide: NVIDIA's v11.7 PDF, committed to a repository (the record names the guide's web address)
    path, url, lines = excerpt[GUIDE]
    assert url == ("https://github.com/yolunghiu/cuda-learn/blob/3b915612c1a4acb8ecb9030721726437626fd43d/"
                   "CUDA_C_Programming_Guide.pdf") and url.endswith(path)
    assert lines[:2] == [(1, "PG-02829-001_v11.7 | May 2022"), (1, "CUDA C++ Programming Guide")]
    guide = _record(GUIDE)
    assert guide["url"] == "https://docs.nvidia.com/cuda/cuda-c-programming-guide/"
    assert "PG-02829-001_v11.7" in guide["read"] and "02a8ed15244e5452" in guide["read"]
    # MLPerf: the file at the commit the record now names
    mlperf = _record(MLPERF)
    path, url, _ = excerpt[MLPERF]
    assert mlperf["commit"] == "ab33b2144a9f822f69d24f78569f993d195ee7e5"
    assert url == f"{mlperf['repository']}/blob/{mlperf['commit']}/{path}"
    # the handbook: the page's Markdown source in the repository that publishes it
    path, url, lines = excerpt[HANDBOOK]
    assert _record(HANDBOOK)["url"] == "https://mcp-tool-shop-org.github.io/gpu-container/handbook/derisk/"
    assert url.startswith("https://github.com/mcp-tool-shop-org/gpu-container/blob/") and url.endswith(path)
    assert lines[0] == (2, "title: Routing De-risk")


def test_2_every_quote_citing_them_is_verbatim(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    # the guide's section headings by number, the JSON file's strings, the page's heading and row cells
    headings = {text.split(" ", 1)[0]: (text.split(" ", 1)[1], page)
                for page, text in excerpt[GUIDE][2] if re.match(r"K\.[\d.]+ ", text)}
    strings = {s for _, text in excerpt[MLPERF][2] for s in re.findall(r'"([^"]*)"', text)}
    page = [text for _, text in excerpt[HANDBOOK][2]]
    places = {HANDBOOK: {line[3:] for line in page if line.startswith("## ")}
              | {cell.strip() for line in page if line.startswith("|") for cell in line.strip("|").split("|")}}
    spans = {s: [q for _, locator, _ in citing[s] for q in _QUOTED.findall(locator)] for s in SOURCES}
    # H100: 32 until cite83 re-cited the H100 PCIe tensor and INT8 figures (8) and the B200's PCIe link (2) to the
    # Hopper whitepaper's text (tests/test_cite83.py); 22 until cite90 re-cited the H100 SXM column's 19 to the product
    # page that prints them (nvidia-h100-product-page, tests/test_cite90.py)
    assert {s: len(q) for s, q in spans.items()} == {GUIDE: 42, MLPERF: 6, HANDBOOK: 4, H100: 3}
    assert set(spans[GUIDE]) == {"Shared Memory"}
    assert (headings["K.4."], headings["K.4.3."]) == (("Compute Capability 5.x", 399), ("Shared Memory", 400))
    assert [q for q in spans[MLPERF] if q not in strings] == []
    assert [q for q in spans[HANDBOOK] if q not in places[HANDBOOK]] == []
    # cite70: the heading was quoted with a hyphen for its em dash
    assert "The real result \u2014 Qwen3 routes near-uniform" in spans[HANDBOOK]


def test_3_the_figures_are_the_documents(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    guide = " ".join(text for _, text in excerpt[GUIDE][2])
    assert ("K.4.3. Shared Memory Shared memory has 32 banks that are organized such that successive 32-bit words map "
            "to successive banks. Each bank has a bandwidth of 32 bits per clock cycle.") in guide
    # 7.x refers back to 5.x; 8.x's section (not excerpted past its heading) changes only the capacity
    assert "Otherwise, shared memory behaves the same way as for devices of compute capability 5.x (See" in guide
    inputs = {where.rsplit(":", 1)[1]: value for where, _, value in citing[GUIDE] if ":derivation:inputs:" in where}
    assert inputs == {"banks": 32, "bank_width": 32}  # each card's two inputs: 32 banks, 32 bits a bank a cycle
    assert sum(":derivation:inputs:" in where for where, _, _ in citing[GUIDE]) == 28  # 14 cards' on-chip bandwidth
    # MLPerf: the B200's 180 GB and its host link's PCIe Gen5 x16, under the B200-SXM-180GB
    nebius = dict(excerpt[MLPERF][2])
    assert (nebius[3], nebius[6], nebius[8]) == (
        '"accelerator_host_interconnect": "PCIe Gen5 x16",', '"accelerator_memory_capacity": "180 GB",',
        '"accelerator_model_name": "NVIDIA B200-SXM-180GB",')
    values = {where.split(":", 1)[1]: value for where, _, value in citing[MLPERF]}
    assert values == {"memory:capacity": 180, "host:read": 64, "host:write": 64}
    # the handbook: 58 of 128 experts hold 90 % in the narrow workload's row: 0.453125
    row = dict(excerpt[HANDBOOK][2])[37]
    assert row.startswith("| narrow (single-domain Python) | ~8k | 58/128 (**45%**) |")
    hot = {where.rsplit(":", 1)[1]: value for where, _, value in citing[HANDBOOK]}
    assert Fraction(58, 128) == Fraction(hot["hot_experts"]) and (hot["hot"], hot["experts"]) == (58, 128)
    assert hot["hot_share"] == 0.9
    assert "capture 90% of its routing mass" in dict(excerpt[HANDBOOK][2])[18]


def test_4_the_h100_sxm_column_is_nvidias_product_pages(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    # The datasheet itself was found nowhere; NVIDIA's H100 product page lists the same H100 SXM column (a label, then
    # its SXM and NVL values, '*' marking a figure with sparsity): 19 of the 22 spans are its label and SXM value; the
    # 3 of the H100 PCIe column are not on the page (it lists the H100 NVL instead), nor checked. (21 and 11 until
    # cite83 re-cited the B200's 2 and the PCIe column's 8 tensor and INT8 spans to the Hopper whitepaper.)
    path, url, lines = excerpt[H100]
    assert url == f"https://github.com/bojieli/ai-infra-book/blob/e524afec5ca6a61b8a79d0f83566ac88ab66b15c/{path}"
    table = dict(lines)
    assert (table[2], table[3], table[62]) == ("H100 SXM", "H100 NVL", "* With sparsity")
    sxm = {f"{table[n].rstrip('*')} {table[n + 1]}" for n in range(4, 32, 3)} | {table[51]}
    assert table[49] == "Interconnect" and table[51] == table[53] == "PCIe Gen5: 128GB/s"
    quoted = [(where, q) for where, locator, _ in citing[H100] for q in _QUOTED.findall(locator)
              if "H100 SXM column" in locator]
    assert quoted == []  # 19 until cite90: they cite the page itself now (tests/test_cite90.py)
    pcie = [q for _, locator, _ in citing[H100] if "H100 PCIe column" in locator for q in _QUOTED.findall(locator)]
    assert sorted(pcie) == ['FP32 51 teraFLOPS'] * 2 + ['GPU Memory Bandwidth 2TB/s'] and not set(pcie) & sxm
    # the figures the facts record are the page's: 3.35 TB/s, 80 GB, 67 TFLOPS FP32, 1,979 / 3,958 with sparsity (the
    # 19 quotes were these 8, label and SXM value, until cite90)
    assert {
        "GPU Memory 80GB", "GPU Memory Bandwidth 3.35TB/s", "FP32 67 teraFLOPS", "FP16 Tensor Core 1,979 teraFLOPS",
        "BFLOAT16 Tensor Core 1,979 teraFLOPS", "FP8 Tensor Core 3,958 teraFLOPS", "INT8 Tensor Core 3,958 TOPS",
        "PCIe Gen5: 128GB/s"} < sxm
    assert {table[n] for n in (16, 19, 22, 25)} == {
        "BFLOAT16 Tensor Core*", "FP16 Tensor Core*", "FP8 Tensor Core*", "INT8 Tensor Core*"}
