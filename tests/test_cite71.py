"""NVIDIA's Hopper whitepaper and the SN40L Hot Chips 2024 slides are checked against text copies, each quote
verbatim and each figure the one its quote states (cite71).

The Hopper whitepaper's 28 locators (the H100 SXM5, H100 PCIe and H200 cards' SMs, FP32 cores, L2, shared memory,
register file and clock) named Table 3 and quoted nothing; each now quotes the sentence that states its figure (the
SXM5 and PCIe units lists and Figure 6's sentence on page 18, the shared memory sentence on page 27, the L2 sentence on
page 37) or, where no sentence does (the register file, the PCIe boost clock), the Table 3 row, its column runs of
spaces read as one. The text is bojieli/ai-infra-book's copy of NVIDIA's PDF, revision V1.04. The SN40L slides' 13
spans are compared with the slide text of the copy the source record names (sgpjbg.com), whose rendering drops spaces:
one quoted 'configurable' for the slide's 'Configurable' and now reads as the slide does. No value changed. The A100
datasheet's 50 spans are not verbatim in the only text found, a Chinese edition (test_4): its figures agree. NVIDIA's
H200 product page states 14 of the H200 datasheet's 16 spans (test_5): the page, not the datasheet, so not counted.
``sources/excerpts/cite71-excerpt.txt`` holds only the lines quoted, with each copy's address.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite71-excerpt.txt"
HOPPER, SN40L = "nvidia-hopper-whitepaper", "sambanova-sn40l-hot-chips-2024"
A100 = "nvidia-a100-datasheet"  # its figures compared with a Chinese edition, not its revision (test_4)
H200 = "nvidia-h200-datasheet"  # matched on NVIDIA's H200 product page, not the datasheet (test_5)
SOURCES = (HOPPER, SN40L, A100, H200)
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


@pytest.fixture(scope="module")
def excerpt() -> dict[str, tuple[str, str, list[tuple[int, str]]]]:
    # source -> (path, URL, [(page, text)]); '#' lines before the first section are the header
    out: dict[str, tuple[str, str, list[tuple[int, str]]]] = {}
    lines: list[tuple[int, str]] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            out[m.group(1)] = (m.group(2), m.group(3), lines)
        elif lines is not None:
            number, text = line.split("\t", 1)
            lines.append((int(number), text))
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
    for name in ("h100_sxm5_80gb", "h100_pcie_80gb", "h200_sxm_141gb", "sn40l", "a100_pcie_80gb", "a100_sxm4_80gb"):
        with (REPO / "facts" / "cards" / f"{name}.toml").open("rb") as f:
            for source, where, locator, value in _cited(tomllib.load(f), name, None):
                if source in out:
                    out[source].append((where, locator, value))
    return out


def _pages(lines: list[tuple[int, str]]) -> dict[int, str]:
    # each page's lines joined by one space, every run of whitespace read as one space
    pages: dict[int, list[str]] = {}
    for page, text in lines:
        pages.setdefault(page, []).append(" ".join(text.split()))
    return {page: " ".join(texts) for page, texts in pages.items()}


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        return dict(tomllib.load(f)["source"])


def test_1_each_excerpt_is_the_copy_its_record_names(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    assert sorted(excerpt) == sorted(SOURCES)
    path, url, lines = excerpt[HOPPER]
    assert url == f"https://github.com/bojieli/ai-infra-book/blob/e524afec5ca6a61b8a79d0f83566ac88ab66b15c/{path}"
    cover = _pages(lines)[0]
    assert cover.startswith("NVIDIA H100 Tensor Core GPU Architecture") and cover.endswith("specs. V1.04")
    hopper = _record(HOPPER)
    assert hopper["url"].endswith("gtc22-whitepaper-hopper") and "V1.04" in hopper["read"]
    assert "references/text/nvidia-h100.txt" in hopper["read"]
    path, url, lines = excerpt[SN40L]
    assert path == "-" and url in _record(SN40L)["copies"]
    assert lines[0][1].startswith("SambaNova SN40L RDU:Breaking the Barrier of Trillion+Parameter Scale")


def test_2_every_quote_is_verbatim_on_the_page_it_names(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    pages = _pages(excerpt[HOPPER][2])
    spans = {s: [q for _, locator, _ in citing[s] for q in _QUOTED.findall(locator)] for s in SOURCES}
    # HOPPER: 83 spans of 28 locators until cite83 re-cited the H100 PCIe's array and three tensor rates (8 locators,
    # each its Table 3 row and footnote 1) from the H100 datasheet to the whitepaper (tests/test_cite83.py)
    # A100: 50 until cite83 re-cited the A100 cards' array, vector and tensor rates (32 spans) to the Ampere whitepaper
    # cite90: the A100 datasheet's 18 cite NVIDIA's Chinese edition of it, which prints them (its record
    # nvidia-a100-80gb-datasheet-zh, tests/test_cite90.py); the English revision's record is gone. cite102: 14 of the
    # H200 datasheet's 16 cite NVIDIA's H200 product page, which prints them (nvidia-h200-product-page,
    # tests/test_cite102.py)
    assert {s: len(q) for s, q in spans.items()} == {HOPPER: 99, SN40L: 13, A100: 0, H200: 2}
    assert len(citing[HOPPER]) == 36 and all(_QUOTED.search(locator) for _, locator, _ in citing[HOPPER])
    for _, locator, _ in citing[HOPPER]:
        # each quote on the page its locator names just before it ('p. N: ...' or 'p. N, row ...')
        for m in re.finditer(r"p\. (\d+)(?::|, row) ((?:'[^']+'(?:, |$)?)+)", locator):
            for quote in re.findall(r"'([^']+)'", m.group(2)):
                assert quote in pages[int(m.group(1))], (locator, quote)
    every = " ".join(pages.values())
    assert [q for q in spans[HOPPER] if q not in every] == []
    # the slides' copy drops spaces: compared with the whitespace of both removed, its pieces joined
    slides = "".join("".join(text.split()) for _, text in excerpt[SN40L][2])
    assert [q for q in spans[SN40L] if "".join(q.split()) not in slides] == []
    # cite71: the PCU bullet opens with a capital
    assert "Configurable as a systolic array or a SIMD vector unit" in spans[SN40L]
    assert "configurable as a systolic array or a SIMD vector unit" not in spans[SN40L]


def test_3_the_figures_are_the_whitepapers(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    pages = _pages(excerpt[HOPPER][2])
    assert "The H100 SXM5 GPU has 132 SMs, and the PCIe version has 114 SMs." in pages[18]
    assert "128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU" in pages[18]
    assert "128 FP32 CUDA Cores/SM, 14592 FP32 CUDA Cores per GPU" in pages[18]
    assert "SM shared memory size itself is configurable up to 228 KB in H100." in pages[27]
    assert "A 50 MB L2 cache in H100 is 1.25x larger than A100’s 40 MB L2." in pages[37]
    # Table 3: the A100, H100 SXM5 and H100 PCIe columns
    rows = {" ".join(text.split()) for _, text in excerpt[HOPPER][2]}
    assert {"SMs 108 132 114", "FP32 Cores / GPU 6912 16896 14592", "L2 Cache Size 40 MB 50 MB 50 MB",
            "Register File Size / SM 256 KB 256 KB 256 KB", "164 KB 228 KB 228 KB",
            "GPU Boost Clock2 for FP64 Tensor 1410 MHz 1980 MHz 1755 MHz", "Core Ops, FP32 and FP64 non-"} <= rows
    inputs: dict[tuple[str, str], set[Any]] = {}
    for where, locator, value in citing[HOPPER]:
        if ":derivation:inputs:" in where:
            column = "PCIe" if "H100 PCIe column" in locator else "SXM5"
            inputs.setdefault((column, where.rsplit(":", 1)[1]), set()).add(value)
    assert inputs == {
        ("SXM5", "sms"): {132}, ("SXM5", "lanes"): {16896}, ("SXM5", "l2"): {50}, ("SXM5", "smem"): {228},
        ("SXM5", "regs"): {256},
        ("PCIe", "sms"): {114}, ("PCIe", "lanes"): {14592}, ("PCIe", "l2"): {50}, ("PCIe", "smem"): {228},
        ("PCIe", "regs"): {256}, ("PCIe", "clock"): {1.755},
        ("PCIe", "sparse"): {1513, 3026}}  # cite83: the H100 PCIe's tensor and INT8 rates with sparsity
    # the H100 PCIe clock is the FP32 non-Tensor one: 14,592 lanes x 2 x 1.755 GHz is Table 3's 51.2 TFLOPS
    assert round(14592 * 2 * 1.755 / 1000, 1) == 51.2
    assert "Peak FP32 TFLOPS (non-Tensor) 19.5 66.9 51.2" in rows
    # the SN40L figures the facts rest on: 64 GB HBM, 520 MB SRAM, 638 TFLOPS, 1,040 PCUs, 1 TB and 24 TB over a
    # node at 25.6 TB/s and 1600 GB/s
    slides = "".join("".join(text.split()) for _, text in excerpt[SN40L][2])
    for figure in ("64GBHighBandwidthMemory", "520MBOn-ChipMemory", "638TFLOPS(bf16)", "1040PCUsandPMUs",
                   "1,040RDUCores", "RDUHighBandwidthMemory1TB", "RDUHighCapacityDDRMemory24TB1600GB/s25.6TB/s",
                   "1.5TBHighCapacityMemory"):
        assert figure in slides, figure


def test_4_the_a100_datasheets_figures_agree_with_a_chinese_edition(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    # Not the revision the record names (1758950-r4, English, 2021): NVIDIA's Chinese edition, (c) 2022, whose labels
    # and figures are written otherwise (no thousands commas, 'PCIe 4.0' for 'PCIe Gen4', Chinese labels, labels
    # wrapped), so no span is counted checked; each figure a span states is the edition's, in the column it names.
    path, url, lines = excerpt[A100]
    assert url == f"https://github.com/bojieli/ai-infra-book/blob/ccbd47009ab28a1f059eec895a9b8d4ab9a2f12c/{path}"
    assert lines[0] == (1, "数据表") and lines[-1][1].startswith("© 2022 NVIDIA")
    # cite90: the edition is a source record of its own, the one its quotes cite now (tests/test_cite90.py), and the
    # English revision's record (1758950-r4), cited by nothing since, is removed
    assert not (REPO / "sources" / f"{A100}.toml").exists() and citing[A100] == []
    assert url in _record("nvidia-a100-80gb-datasheet-zh")["copies"]
    rows = [" ".join(text.split()) for _, text in lines]
    assert rows[4].endswith("80GB PCIe 80GB SXM")  # the columns: PCIe first
    table = {
        "FP32": "19.5 TFLOPS", "BFLOAT16 Tensor Core": "312 TFLOPS | 624 TFLOPS*",
        "FP16 Tensor Core": "312 TFLOPS | 624 TFLOPS*", "INT8 Tensor Core": "624 TOPS| 1248 TOPS*",
        "GPU Memory Bandwidth": {"PCIe": "1935GB/s", "SXM": "2039GB/s"}, "PCIe Gen4:": "PCIe 4.0 ：64GB/s"}
    assert [r for r in rows if "1935GB/s" in r] == ["GPU 显存带宽 1935GB/s 2039GB/s"]
    assert any(r.endswith("PCIe 4.0 ：64GB/s") for r in rows) and any(r.endswith("INT8 Tensor 624 TOPS| 1248 TOPS*")
                                                                     for r in rows)
    text = " ".join(rows)
    checked = 0
    for _, locator, _ in citing[A100]:
        column = "SXM" if "'A100 80GB SXM' column" in locator else "PCIe"
        for quote in _QUOTED.findall(locator):
            label = next((k for k in table if quote.startswith(k)), None)
            if label is None:
                assert quote == f"A100 80GB {column}"  # the column's heading, split over two lines in the edition
                continue
            cell = table[label]
            cell = cell[column] if isinstance(cell, dict) else cell
            figures = re.findall(r"[\d.]+", quote[len(label):].replace(",", ""))
            assert figures and figures == re.findall(r"\d[\d.]*", cell.replace("4.0", ""))[:len(figures)], quote
            assert cell in text
            checked += 1
    assert checked == 0  # 9 until cite90 (the other 9 spans column headings; 25 and 25 before cite83, test_cite83.py)


def test_5_the_h200_sxm_column_is_nvidias_product_pages(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    # As test_cite70's test_4 for the H100: the datasheet was found nowhere; NVIDIA's H200 product page lists the H200
    # SXM column (a label, then its SXM and NVL values, '²' marking a figure with sparsity). 14 of the 16 spans are its
    # label and SXM value; the INT8 row's 2 say 'TOPS' where the page prints '3,958 TFLOPS' (the same figure).
    path, url, lines = excerpt[H200]
    assert url == f"https://github.com/bojieli/ai-infra-book/blob/548c568b672a5e7c6004ec5825c15dd80b3d6d91/{path}"
    table = dict(lines)
    assert (table[3], table[4], table[68]) == ("H200 SXM¹", "H200 NVL¹", "With sparsity.")
    sxm = {f"{table[n].rstrip('²')} {table[n + 1]}" for n in (11, 17, 20, 23, 26, 29, 32)} | {table[55]}
    assert table[53] == "Interconnect" and table[55] == table[58] == "PCIe Gen5: 128GB/s"
    quoted = [q for _, locator, _ in citing[H200] for q in _QUOTED.findall(locator) if "H200 SXM column" in locator]
    # cite102: the 14 the page prints cite the page (nvidia-h200-product-page, tests/test_cite102.py); the INT8 row's
    # 2 stay
    assert len(quoted) == 2
    assert sorted(q for q in quoted if q not in sxm) == ["INT8 Tensor Core 3,958 TOPS"] * 2
    assert "INT8 Tensor Core 3,958 TFLOPS" in sxm
    assert set(quoted) == {"INT8 Tensor Core 3,958 TOPS"}
    # the 7 the page printed (label and SXM value) are its rows now, quoted whole
    assert {"GPU Memory 141GB", "GPU Memory Bandwidth 4.8TB/s", "FP32 67 TFLOPS", "FP16 Tensor Core 1,979 TFLOPS",
            "BFLOAT16 Tensor Core 1,979 TFLOPS", "FP8 Tensor Core 3,958 TFLOPS", "PCIe Gen5: 128GB/s"} < sxm
