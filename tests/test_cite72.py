"""NVIDIA's Ampere (A100) whitepaper is checked against a text copy, each quote verbatim on the page its locator
names and each figure the one its quote states (cite72).

The whitepaper's 20 locators (the A100 SXM4 and A100 PCIe cards' SMs, FP32 cores, boost clock, L2, shared memory and
register file) named 'Table 3' or 'Tables 1 and 3' and quoted nothing. The text is that of the PDF committed to
fmars/papers at a1260982447f (its cover 'V1.0', 82 pages, sha256 in the source record), read with pypdf. In it Table 1
is the A100's performance specs and Table 3 the Tensor Core formats; the figures are Table 4's ('Comparison of NVIDIA
Data Center GPUs', pp. 36-37) and the sentences on pp. 16, 19 and 40. Each locator now names Table 4's A100 column and
quotes the sentence stating its figure (p. 19's units list for the 108 SMs and 6,912 FP32 cores, p. 16's 40 MB L2,
p. 40's 164 KB shared memory) or, where no sentence does (the 1,410 MHz boost clock, the 256 KB register file, the
L2's 40,960 KB), the Table 4 row. No value changed. ``sources/excerpts/cite72-excerpt.txt`` holds only the lines quoted.
The other 319 unchecked spans (the NVIDIA datasheets, the Ada and GA102 whitepapers) are still unchecked: no text of
those documents was found (docs/DESIGN.md, sources).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN, StoredText, load_source, paged_spans, stored_text

EXCERPT = REPO / "sources" / "excerpts" / "cite72-excerpt.txt"
AMPERE = "nvidia-ampere-whitepaper"
PDF_SHA256 = "45c28588a192919efac0aede884554e043dc53c4762da6d19a0262544dd4cad6"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
# a page a locator names ('p. 19: ...', 'p. 36, Table 4 row ...'), then the quotes up to the next page named: read
# by the library's passprice.sources.paged_spans, and looked for on the page by StoredText.holds, which audit's quote
# check uses too (one reading, tests/test_left122.py)


@pytest.fixture(scope="module")
def excerpt() -> tuple[str, str, list[tuple[int, str]]]:
    # (path, URL, [(page, text)]) of the one section; '#' lines before it are the header
    sections: dict[str, tuple[str, str, list[tuple[int, str]]]] = {}
    lines: list[tuple[int, str]] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            sections[m.group(1)] = (m.group(2), m.group(3), lines)
        elif lines is not None:
            number, text = line.split("\t", 1)
            lines.append((int(number), text))
        else:
            assert line.startswith("# "), line
    assert list(sections) == [AMPERE]
    return sections[AMPERE]


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
def citing() -> list[tuple[str, str, Any]]:
    # [(file:key path, locator, value)] of every fact and derivation input citing the Ampere whitepaper
    out: list[tuple[str, str, Any]] = []
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            for source, where, locator, value in _cited(tomllib.load(f), path.stem, None):
                if source == AMPERE:
                    out.append((where, locator, value))
    return out


@pytest.fixture(scope="module")
def stored() -> StoredText:
    # the whitepaper's stored text as audit reads it: each page's lines joined by one space, every run of whitespace
    # read as one space
    root = Root(REPO)
    return stored_text(root, load_source(root, AMPERE))


def test_1_the_excerpt_is_the_copy_the_record_names(excerpt: tuple[str, str, list[tuple[int, str]]],
                                                    stored: StoredText) -> None:
    path, url, _ = excerpt
    assert url == f"https://github.com/fmars/papers/blob/a1260982447f121c7e7719321db06ad39c9633ab/{path}"
    assert path == "nvidia-ampere-architecture-whitepaper.pdf"
    assert stored.pages[1] == "V1.0 NVIDIA A100 Tensor Core GPU Architecture"
    with (REPO / "sources" / f"{AMPERE}.toml").open("rb") as f:
        record = tomllib.load(f)["source"]
    assert PDF_SHA256 in record["read"] and "fmars/papers" in record["read"] and "V1.0" in record["read"]
    assert PDF_SHA256 in EXCERPT.read_text(encoding="utf-8")
    assert record["url"].endswith("nvidia-ampere-architecture-whitepaper.pdf")


def test_2_every_quote_is_verbatim_on_the_page_it_names(
        citing: list[tuple[str, str, Any]], stored: StoredText) -> None:
    # 20 locators and 86 quotes until cite83 re-cited the A100 80GB cards' array, vector and tensor rates (16 locators,
    # 28 quotes: each its Table 4 row, the sparse ones footnote 3 too) from the A100 datasheet (tests/test_cite83.py)
    assert len(citing) == 36 and all(_QUOTED.search(locator) for _, locator, _ in citing)
    quotes = [q for _, locator, _ in citing for q in paged_spans(locator)]
    assert len(quotes) == 114  # 0 before cite72, 86 before cite83
    # a quote before any page named would be looked for in the whole text: each of these names its page
    assert [(page, q) for page, q in quotes if page is None or not stored.holds(q, page)] == []
    # no locator names the tables that do not state these figures (Table 1: performance specs; Table 3: formats)
    assert [locator for _, locator, _ in citing if re.search(r"Tables? [13]\b", locator)] == []


def test_3_the_figures_are_the_whitepapers(
        citing: list[tuple[str, str, Any]], excerpt: tuple[str, str, list[tuple[int, str]]],
        stored: StoredText) -> None:
    pages = stored.pages
    assert "● 7 GPCs, 7 or 8 TPCs/GPC, 2 SMs/TPC, up to 16 SMs/GPC, 108 SMs" in pages[19]
    assert "● 64 FP32 CUDA Cores/SM, 6912 FP32 CUDA Cores per GPU" in pages[19]
    assert "the A100 GPU has significantly more on-chip memory including a 40 MB Level 2 (L2) cache" in pages[16]
    assert "A100 increases maximum SMEM allocation per SM 1.7x to 164 KB (vs 96 KB on V100)." in pages[40]
    rows = {" ".join(text.split()) for _, text in excerpt[2]}
    assert {"GPU Features NVIDIA Tesla P100 NVIDIA Tesla V100 NVIDIA A100", "SMs 56 80 108",
            "FP32 Cores / GPU 3584 5120 6912", "GPU Boost Clock 1480 MHz 1530 MHz 1410 MHz",
            "L2 Cache Size 4096 KB 6144 KB 40960 KB", "Register File Size / SM 256 KB 256 KB 256 KB"} <= rows
    # the table's L2 in binary KB is the 40 MiB the cards count
    assert 40960 == 40 * 1024
    inputs: dict[tuple[str, str], set[Any]] = {}
    for where, _, value in citing:
        if ":derivation:inputs:" in where:
            inputs.setdefault((where.split(":", 1)[0], where.rsplit(":", 1)[1]), set()).add(value)
    # the PCIe card writes its clock in GHz, the SXM4 card in MHz: the same 1,410 MHz
    assert inputs == {
        ("a100_sxm4_80gb", "sms"): {108}, ("a100_sxm4_80gb", "lanes"): {6912}, ("a100_sxm4_80gb", "l2"): {40},
        ("a100_sxm4_80gb", "smem"): {164}, ("a100_sxm4_80gb", "regs"): {256}, ("a100_sxm4_80gb", "clock"): {1410},
        ("a100_pcie_80gb", "sms"): {108}, ("a100_pcie_80gb", "lanes"): {6912}, ("a100_pcie_80gb", "l2"): {40},
        ("a100_pcie_80gb", "smem"): {164}, ("a100_pcie_80gb", "regs"): {256}, ("a100_pcie_80gb", "clock"): {1.41},
        # cite83: the dense INT8, F16 and BF16 rates and the FP32 rate of Table 4's A100 column
        ("a100_sxm4_80gb", "dense"): {624, 312}, ("a100_sxm4_80gb", "fp32"): {19.5},
        ("a100_pcie_80gb", "dense"): {624, 312}, ("a100_pcie_80gb", "fp32"): {19.5}}
    # the figures the derivations give: on-chip capacity 40 MiB + (164 + 256) KiB x 108 SMs; scale 6,912 x 1.41 GHz
    facts = {where: value for where, _, value in citing if ":derivation:" not in where}
    assert facts == {f"{card}:{path}": value for card in ("a100_sxm4_80gb", "a100_pcie_80gb") for path, value in (
        ("on_chip:capacity", 86320), ("scale", 9.74592),
        ("array", 312), ("vector", 9.75), ("tensor:f16", 156), ("tensor:bf16", 156))}  # the last four since cite83
    assert 40 * 1024 + (164 + 256) * 108 == 86320 and round(6912 * 1.41 / 1000, 5) == 9.74592


def test_4_the_checked_spans_counted(citing: list[tuple[str, str, Any]]) -> None:
    # every span the locators quote (facts, derivation inputs and stack facts under facts/, and the measured runs),
    # as docs/DESIGN.md's sources section counts them: 897 before cite72, the Ampere whitepaper's 86 added; 981 since
    # cite73, whose A40 tensor.f16 locators (2 spans) quoted wording no copy shows and now quote nothing; 990 since
    # cite74, whose L40S locators quote 9 lines of a deviceQuery run (tests/test_cite74.py); 993 since cite81, whose
    # 15 register-file and shared-memory inputs of the Ada and GA102 cards quote the tuning guides' sentences where 12
    # quoted a whitepaper column's name (tests/test_cite81.py); 994 since left60, whose llama.cpp memory.reserved quotes
    # the 70B model's compute buffer its note adds (tests/test_cite64.py)
    quoted = sum(len(_QUOTED.findall(r.locator)) for r in load_runs(Root(REPO)))
    assert quoted == 271  # the measured runs'
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            quoted += sum(len(_QUOTED.findall(locator)) for _, _, locator, _ in _cited(tomllib.load(f), "", None))
    # 1,001 since cite83, whose 10 locators quoting the H100 datasheet (10 spans) quote the Hopper whitepaper (18 spans,
    # tests/test_cite83.py); left60's llama.cpp memory.reserved quotes one more (the 70B model's compute buffer)
    # 1,001 until cite83 re-cited the A100 cards' rates: 32 datasheet spans, 28 whitepaper ones; 998 until cite90
    # re-cited 37 datasheet spans to the NVIDIA copies that print them, 36 spans (tests/test_cite90.py test_5)
    # cite91's A40 tensor.f16 locators quote its copy's FP16 row, 2 more (tests/test_cite91.py): 999; trace109's A40
    # SMs, CUDA cores and clock quote 5 rows of the A40 datasheet's copy (tests/test_trace109.py): 1,004
    # the MI300X's on_chip.capacity locator quotes the CDNA 3 white paper's 5 (tests/test_walk108.py): 1,009
    # 1,015 since cite102 re-cited 14 H200 datasheet spans to NVIDIA's H200 product page, 20 (tests/test_cite102.py)
    assert quoted == 1015
    assert sum(len(_QUOTED.findall(locator)) for _, locator, _ in citing) == 114  # 86 before cite83
