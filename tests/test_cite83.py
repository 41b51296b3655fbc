"""The H100 PCIe's tensor and INT8 rates and the B200's PCIe link cite NVIDIA's Hopper whitepaper, read (cite83).

They cited the H100 datasheet (its H100 PCIe column, and its H100 SXM column's 'PCIe Gen5: 128GB/s' for the B200's
PCIe Gen5 x16 link), whose PDF nobody here has read, and no NVIDIA text found prints its H100 PCIe column, so their 10
spans were unchecked. The Hopper whitepaper's Table 3 (revision V1.04, bojieli/ai-infra-book's text copy, already read
and checked by cite71) prints the same figures in its H100 PCIe column: 'Peak INT8 Tensor TOPS ... 1513/30261', the
FP16, BF16 and FP8 rows '756/15131' and '1513/30261', the trailing 1 of each sparse figure being footnote 1 ('Effective
TOPS / TFLOPS using the Sparsity feature'); and its PCIe Gen 5 sentence (p. 49) gives the link's 128 GB/sec total
bandwidth. The 8 H100 PCIe locators now quote the row and the footnote (16 spans), the B200's 2 the sentence (2 spans);
each figure is the text's and every value is unchanged. Two H100 PCIe figures stay on the unread datasheet, since the
whitepaper prints other ones: its memory bandwidth (2 TB/s; Table 3: '2039 GB/sec', 'Not Finalized for H100') and its
FP32 rate (51 TFLOPS; Table 3: 51.2). The lines read ship in ``sources/excerpts/cite71-excerpt.txt``'s Hopper section.

The A100 80GB cards' INT8, FP32, FP16 and BF16 rates (16 locators, 32 spans) cited the A100 80GB datasheet, also
unread; they now cite the Ampere whitepaper's Table 4 A100 column (V1.0, read with pypdf by cite72), quoting its row
and, for a sparse figure, footnote 3 (28 spans, ``sources/excerpts/cite72-excerpt.txt``). That column is the A100 SXM4
40 GB: the notes say the 80 GB cards' peaks are the same (the SMs and boost clock a peak is computed from are that
column's, and NVIDIA's Chinese edition of the 80 GB datasheet prints one figure for both columns). Their memory
bandwidth (Table 4: 1555 GB/sec, the 40 GB card's) and PCIe Gen4 link stay on the datasheet.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite71-excerpt.txt"
AMPERE_EXCERPT = REPO / "sources" / "excerpts" / "cite72-excerpt.txt"
AMPERE = "nvidia-ampere-whitepaper"
HOPPER, H100 = "nvidia-hopper-whitepaper", "nvidia-h100-datasheet"
COPY = "https://github.com/bojieli/ai-infra-book/blob/e524afec5ca6a61b8a79d0f83566ac88ab66b15c/"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py and test_cite72.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
FOOTNOTE = "1. Effective TOPS / TFLOPS using the Sparsity feature"
PCIE_SENTENCE = ("H100 incorporates a PCI Express Gen 5 x16 lane interface, providing 128 GB/sec total bandwidth (64 "
                 "GB/sec in each direction)")
# fact -> (the Table 3 row quoted, its H100 PCIe cell as printed, the sparse figure the derivation reads)
ROWS = {
    "array": ("Peak INT8 Tensor TOPS 624/12481 1978.9/3957.81 1513/30261", "1513/30261", 3026),
    "tensor:f16": ("Peak FP16 Tensor TFLOPS with 312/6241 989.4/1978.91 756/15131 FP32 Accumulate", "756/15131", 1513),
    "tensor:bf16": ("Peak BF16 Tensor TFLOPS with 312/6241 989.4/1978.91 756/15131 FP32 Accumulate", "756/15131",
                    1513),
    "tensor:f8": ("Peak FP8 Tensor TFLOPS with FP32 NA 1978.9/3957.81 1513/30261 Accumulate", "1513/30261", 3026),
}


@pytest.fixture(scope="module")
def pages() -> dict[int, str]:
    # the Hopper whitepaper's lines read, each page's lines joined by one space, every run of whitespace read as one
    # (as tests/test_cite71.py joins them)
    out: dict[int, list[str]] = {}
    section = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            if section == HOPPER:
                assert m.group(3) == COPY + m.group(2) == COPY + "references/text/nvidia-h100.txt"
        elif section == HOPPER:
            page, text = line.split("\t", 1)
            out.setdefault(int(page), []).append(" ".join(text.split()))
    return {page: " ".join(texts) for page, texts in out.items()}


def _cited(table: Any, where: str, source: str | None) -> Iterator[tuple[str, str, str, Any]]:
    # (source, where, locator, value) of each table with a locator below ``table``; a derivation input without its
    # own source cites its fact's
    if isinstance(table, dict):
        own = table.get("source")
        source = own if isinstance(own, str) else source
        if isinstance(table.get("locator"), str) and source is not None:
            yield source, where, table["locator"], table.get("value")
        for key, value in table.items():
            yield from _cited(value, f"{where}:{key}", source)


def _card(card: str) -> dict[str, Any]:
    with (REPO / "facts" / "cards" / f"{card}.toml").open("rb") as f:
        return tomllib.load(f)


def _fact(card: dict[str, Any], path: str) -> dict[str, Any]:
    table = card
    for key in path.split(":"):
        table = table[key]
    return table


def test_1_the_h100_pcie_rates_quote_table_3_and_its_footnote(pages: dict[int, str]) -> None:
    card = _card("h100_pcie_80gb")
    for path, (row, cell, sparse) in ROWS.items():
        fact = _fact(card, path)
        inputs = fact["derivation"]["inputs"]
        assert fact["source"] == HOPPER and "source" not in inputs["sparse"], path
        assert fact["locator"] == inputs["sparse"]["locator"], path
        assert fact["locator"].startswith("Table 3, H100 PCIe column: p. 39, row "), path
        # two spans, each verbatim on the page the locator names: the row, its label's wrap read as a space, and
        # the footnote that says what the trailing 1 is
        assert _QUOTED.findall(fact["locator"]) == [row, FOOTNOTE], path
        assert row in pages[39] and FOOTNOTE in pages[40], path
        # the H100 PCIe column is the row's last cell; its sparse figure, the trailing footnote mark dropped, is the
        # one the derivation reads, and the value is unchanged
        assert re.findall(r"NA|[\d.]+/\d+", row)[2] == cell, path  # A100, H100 SXM5, H100 PCIe
        dense, with_sparsity = cell[:-1].split("/")
        assert int(with_sparsity) == sparse == inputs["sparse"]["value"], path
        assert fact["value"] == sparse / 2 / 2, path
        assert "cite83" in fact["note"] and "unchanged" in fact["note"], path
        # Table 3's dense figure is the sparse one halved, rounded down where it is not whole (756 for 756.5): the
        # note says the derivation halves the sparse one
        assert int(dense) == sparse // 2, path
    assert "756.5: the printed 756 is that figure rounded" in _fact(card, "tensor:f16")["note"]
    # the FP16-accumulate rows the notes name print the same H100 PCIe figures
    assert "Peak FP16 Tensor TFLOPS with 312/6241 989.4/1978.91 756/15131 FP16 Accumulate" in pages[39]
    assert "Peak FP8 Tensor TFLOPS with FP16 NA 1978.9/3957.81 1513/30261 Accumulate" in pages[39]


def test_2_the_figures_table_3_prints_otherwise_stay_on_the_datasheet(pages: dict[int, str]) -> None:
    card = _card("h100_pcie_80gb")
    bandwidth, vector = card["memory"]["bandwidth"], card["vector"]
    assert (bandwidth["source"], bandwidth["value"], bandwidth["unit"]) == (H100, 2, "TB/s")
    assert (vector["source"], vector["derivation"]["inputs"]["fp32"]["value"]) == (H100, 51)
    # the whitepaper's H100 PCIe column: 2039 GB/sec, not finalized, and 51.2 TFLOPS: not the datasheet's figures
    assert "Memory Bandwidth 1555 GB/sec 3352 GB/sec 2039 GB/sec (Not Finalized for H100) 1" in pages[40]
    assert "Peak FP32 TFLOPS (non-Tensor) 19.5 66.9 51.2" in pages[39]
    for fact, printed in ((bandwidth, "2039 GB/sec"), (vector, "51.2")):
        assert "cite83" in fact["note"] and printed in fact["note"] and "not cited for this one" in fact["note"]
    # every other H100 PCIe figure that cited the datasheet now cites the whitepaper
    datasheet = [w for s, w, _, _ in _cited(card, "h100_pcie_80gb", None) if s == H100]
    # (the H100 SXM's 3.35 TB/s its measured stream shares are read against cited the datasheet's SXM column until
    # cite90 re-cited it to NVIDIA's H100 product page, which prints it: tests/test_cite90.py)
    assert sorted(datasheet) == sorted(["h100_pcie_80gb:memory:bandwidth", "h100_pcie_80gb:vector",
                                        "h100_pcie_80gb:vector:derivation:inputs:fp32"])
    assert {s for s, w, _, _ in _cited(card, "h100_pcie_80gb", None) if ":streams:" in w and w.endswith(":peak")} == {
        "nvidia-h100-product-page"}


def test_3_the_b200s_pcie_link_quotes_the_whitepapers_sentence(pages: dict[int, str]) -> None:
    card = _card("b200")
    assert PCIE_SENTENCE in pages[49] and pages[49].startswith("PCIe Gen 5 H100 incorporates")
    for path in ("read", "write"):
        fact = card["host"][path]
        both = fact["derivation"]["inputs"]["both_ways"]
        assert (both["source"], both["value"], both["unit"]) == (HOPPER, 128, "GB/s"), path
        assert _QUOTED.findall(both["locator"]) == [PCIE_SENTENCE], path
        assert both["locator"].startswith("section PCIe Gen 5, p. 49: "), path
        assert (fact["value"], fact["unit"]) == (64, "GB/s") and "cite83" in fact["note"], path
    assert "128 GB/sec total bandwidth (64 GB/sec in each direction)" in PCIE_SENTENCE  # 128 both ways, 64 each


def test_4_the_spans_counted_before_and_after() -> None:
    # as tests/test_cite72.py test_4 counts them: 993 spans before cite83 (688 checked, 305 not), 997 after: the 10 H100
    # datasheet spans gave way to 18 Hopper whitepaper spans (8 x 2 + 2), the 32 A100 datasheet spans to 28 Ampere
    # whitepaper spans (12 x 2 + 4), all checked: 734 checked, 263 not
    by_source: dict[str, int] = {}
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            for source, _, locator, _ in _cited(tomllib.load(f), path.stem, None):
                by_source[source] = by_source.get(source, 0) + len(_QUOTED.findall(locator))
    runs = sum(len(_QUOTED.findall(r.locator)) for r in load_runs(Root(REPO)))
    # 998 after cite83 and left60 (1,001 - 32 A100 datasheet + 28 Ampere spans, + 1); 997 after cite90, whose 37
    # H100 and A100 datasheet spans gave way to 36 of the copies that print them (tests/test_cite90.py test_5); 999
    # with cite91's 2 (the A40's tensor.f16 quotes, tests/test_cite91.py); 1,004 with trace109's 5 (the A40's SMs,
    # CUDA cores and clock quote its datasheet copy's rows, tests/test_trace109.py)
    # 1,009 with the MI300X on_chip.capacity's 5 quotes of the CDNA 3 white paper, checked (tests/test_walk108.py)
    # 1,015 after cite102, whose 14 H200 datasheet spans gave way to 20 of NVIDIA's H200 product page
    assert runs + sum(by_source.values()) == 1015
    assert (by_source[HOPPER], by_source[H100]) == (101, 3)  # 83 and 32 before cite83, 22 before cite90
    # 86 and 50 before cite83; the A100 datasheet's 18 left cite NVIDIA's Chinese edition since cite90, its record gone
    assert (by_source[AMPERE], by_source.get("nvidia-a100-datasheet", 0)) == (114, 0)
    # what stays unchecked: the datasheets' and the Ada and GA102 whitepapers' spans, no text of them read (cite90:
    # A100 18 -> 0, H100 22 -> 3); since cite91 the A40's 9 spans are checked against its copy's text (cite102: H200
    # 16 -> 2)
    unchecked = {H100: 3, "nvidia-h200-datasheet": 2, "nvidia-l40s-datasheet": 11,
                 "nvidia-rtx-a6000-datasheet": 3, "nvidia-rtx-6000-ada-datasheet": 2,
                 "nvidia-ada-whitepaper": 112, "nvidia-ampere-ga102-whitepaper": 72}
    assert by_source["nvidia-a40-datasheet"] == 14  # 9 before trace109, which added 5 checked
    assert {s: by_source[s] for s in unchecked} == unchecked and sum(unchecked.values()) == 205  # 305, 263, 219 before
    # 688 checked before cite83; 734 before left60; 735 before cite90 and cite91 (+36 and +9); 780 before trace109
    # and walk108 (+5 each); 790 before cite102 (+20)
    assert runs + sum(by_source.values()) - 205 == 810


def test_5_passprices_evaluator_gives_each_value_from_its_inputs() -> None:
    from passprice.derivations import evaluate, quantity

    a100 = [(c, p) for c in ("a100_sxm4_80gb", "a100_pcie_80gb")
            for p in ("array", "vector", "tensor:f16", "tensor:bf16")]
    for card, path in [("h100_pcie_80gb", p) for p in ROWS] + [("b200", "host:read"), ("b200", "host:write")] + a100:
        fact = _fact(_card(card), path)
        env = {name: quantity(i["value"], i["unit"]) for name, i in fact["derivation"]["inputs"].items()}
        result = evaluate(fact["derivation"]["formula"], env)
        expected = quantity(fact["value"], fact["unit"])
        assert (result.value, result.dims) == (expected.value, expected.dims), (card, path)
    assert Fraction(3026, 4) == Fraction(7565, 10) and Fraction(1513, 4) == Fraction(37825, 100)


def test_6_the_a100_rates_quote_the_ampere_whitepapers_table_4() -> None:
    lines: dict[int, list[str]] = {}
    for line in AMPERE_EXCERPT.read_text(encoding="utf-8").splitlines():
        if not line.startswith(("#", "==")):
            page, text = line.split("\t", 1)
            lines.setdefault(int(page), []).append(" ".join(text.split()))
    pages = {page: " ".join(texts) for page, texts in lines.items()}
    footnote = "3. Effective TOPS / TFLOPS using the new Sparsity Feature"
    # fact -> (the row quoted, the dense figure the derivation reads, the value)
    rows = {"array": ("Peak INT8 Tensor TOPS1 NA NA 624/12483", 624, 312),
            "vector": ("Peak FP32 TFLOPS1 (non-Tensor) 10.6 15.7 19.5", 19.5, 9.75),
            "tensor:f16": ("Peak FP16 Tensor TFLOPS with FP32 Accumulate1 NA 125 312/6243", 312, 156),
            "tensor:bf16": ("Peak BF16 Tensor TFLOPS with FP32 Accumulate1 NA NA 312/6243", 312, 156)}
    assert "Peak FP16 Tensor TFLOPS with FP16 Accumulate1 NA 125 312/6243" in pages[36]  # the same figures
    assert "1. Peak rates are based on GPU Boost Clock." in pages[37] and footnote in pages[37]
    for name in ("a100_sxm4_80gb", "a100_pcie_80gb"):
        card = _card(name)
        for path, (row, dense, value) in rows.items():
            fact = _fact(card, path)
            inputs = [i for i in fact["derivation"]["inputs"].values() if "locator" in i]
            assert fact["source"] == AMPERE and len(inputs) == 1 and "source" not in inputs[0], (name, path)
            assert fact["locator"] == inputs[0]["locator"] and fact["locator"].startswith(
                "Table 4 (Comparison of NVIDIA Data Center GPUs), A100 column (the A100 SXM4 40 GB"), (name, path)
            quotes = _QUOTED.findall(fact["locator"])
            assert quotes == ([row] if path == "vector" else [row, footnote]), (name, path)
            assert row in pages[36], (name, path)
            # the A100 column is the row's last cell: its dense figure (before '/', or the whole cell) is the input
            cell = row.split(" ")[-1]
            assert float(cell.split("/")[0]) == dense == inputs[0]["value"] and fact["value"] == value, (name, path)
            if "/" in cell:
                assert cell.endswith("3") and int(cell.split("/")[1][:-1]) == 2 * dense, (name, path)
            # the note says the column is another card's and why the figure is this one's
            for words in ("A100 SXM4 40 GB", "Chinese edition", "108 SMs, 1,410 MHz", "unchanged"):
                assert words in fact["note"], (name, path, words)
        # memory bandwidth stays off the whitepaper: Table 4 prints the 40 GB card's 1555 GB/sec (it cited the A100
        # datasheet; since cite90 NVIDIA's Chinese edition of it, which prints 1935GB/s and 2039GB/s)
        assert card["memory"]["bandwidth"]["source"] == "nvidia-a100-80gb-datasheet-zh"
