"""The H100 and A100 datasheets' quotes that a stored NVIDIA text prints cite that text, each locator quoting its row
verbatim (cite90).

Of the 263 unchecked spans cite83 left, 56 quoted three datasheets nobody here has read: the H100's 22 (19 of its
H100 SXM column, 3 of its H100 PCIe column), the H200's 16 and the A100 80GB's 18. Earlier sessions had found the
figures in text copies of NVIDIA's own pages, but counted nothing checked because the copies were not the datasheets
(cite70 test_4, cite71 tests 4 and 5). Two copies are now source records of their own (``nvidia-h100-product-page``,
``nvidia-a100-80gb-datasheet-zh``: what was read, where, at which commit, and when the copy was retrieved), and the
facts whose figure each prints cite it: the H100 SXM column's 19 quotes (16 locators of the H100 SXM card, 3 of the
H100 PCIe card's stream shares) and the A100's 18 (9 locators). The product page's table is one cell a line, a label
then the SXM and NVL values: a locator quotes the row, its cells joined by one space, and a figure with sparsity quotes
the footnote too; the A100 edition's text is a two-column PDF layout, quoted with every run of whitespace read as
one. Every value is unchanged (test_3).

What stays: the H100 PCIe column's 3 quotes (the page prints an H100 NVL column, no H100 PCIe one), each note saying
why. The English A100 datasheet's record (1758950-r4), cited by no fact since, is removed (``check``: "cited by no
fact: cite it, or remove it"); the edition's record keeps its story. The H200's 16 are not moved here: NVIDIA's H200
product page (cite71) prints 14 of them, but those facts are the fixtures of the README's worked example and of
dozens of tests' expected outputs, a change of its own (test_4; made since: tests/test_cite102.py). And the H100 SXM
card's ``host.capacity`` note's "2 TB" is now what it names: NVIDIA's DGX H100 system file in MLPerf Inference v6.0,
in the registered v6.0 record's commit (test_6). ``sources/excerpts/cite90-excerpt.txt`` holds the lines read.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.derivations import evaluate, quantity
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite90-excerpt.txt"
H100, A100 = "nvidia-h100-product-page", "nvidia-a100-80gb-datasheet-zh"
MLPERF = "mlcommons-inference-results-v6.0"
BOJIELI = "https://github.com/bojieli/ai-infra-book/blob/"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py, test_cite72.py and test_cite83.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


@pytest.fixture(scope="module")
def excerpt() -> dict[str, tuple[str, str, list[tuple[int, str]]]]:
    # source -> (path, URL, [(number, text)]); '#' lines before the first section are the header
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
    # own source cites its fact's (as tests/test_cite83.py reads them)
    if isinstance(table, dict):
        own = table.get("source")
        source = own if isinstance(own, str) else source
        if isinstance(table.get("locator"), str) and source is not None:
            yield source, where, table["locator"], table.get("value")
        for key, value in table.items():
            yield from _cited(value, f"{where}:{key}", source)


def _all_cited() -> list[tuple[str, str, str, Any]]:
    out = []
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            out.extend(_cited(tomllib.load(f), path.stem, None))
    return out


@pytest.fixture(scope="module")
def citing() -> dict[str, list[tuple[str, str, Any]]]:
    # source -> [(card:key path, locator, value)] of every fact and derivation input citing it
    out: dict[str, list[tuple[str, str, Any]]] = {}
    for source, where, locator, value in _all_cited():
        out.setdefault(source, []).append((where, locator, value))
    return out


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        return dict(tomllib.load(f)["source"])


def _rows(lines: list[tuple[int, str]], first: int, cells: int) -> str:
    # the row of a product page's table that starts at line ``first``: its ``cells`` lines joined by one space
    table = dict(lines)
    assert all(first + i in table for i in range(cells)), first
    return " ".join(table[first + i] for i in range(cells))


def _card(name: str) -> dict[str, Any]:
    with (REPO / "facts" / "cards" / f"{name}.toml").open("rb") as f:
        return tomllib.load(f)


def _fact(card: dict[str, Any], path: str) -> dict[str, Any]:
    table = card
    for key in path.split(":"):
        table = table[key]
    return table


def test_1_each_excerpt_is_the_copy_its_record_names(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    assert list(excerpt) == [H100, A100, MLPERF]
    commits = {H100: "e524afec5ca6a61b8a79d0f83566ac88ab66b15c", A100: "ccbd47009ab28a1f059eec895a9b8d4ab9a2f12c"}
    pages = {H100: "https://www.nvidia.com/en-us/data-center/h100/",
             A100: ("https://www.nvidia.cn/content/dam/en-zz/zh_cn/Solutions/Data-Center/a100/pdf/"
                    "a100-80gb-datasheet-update-a4-nvidia-1485612-r13-web_zhCN.pdf")}
    retrieved = {H100: "2026-09-05", A100: "2026-09-05"}
    for source, commit in commits.items():
        path, url, _ = excerpt[source]
        record = _record(source)
        # the copy read is the one the record lists, at its commit; the record's address is NVIDIA's
        assert url == f"{BOJIELI}{commit}/{path}" and record["copies"] == [url], source
        assert (record["url"], record["retrieved"], record["publisher"]) == (pages[source], retrieved[source], "NVIDIA")
        assert commit in record["read"] and "tests/test_cite90.py" in record["read"] and "cite90" in record["note"]
    assert (_record(H100)["kind"], _record(A100)["kind"]) == ("web-page", "datasheet")
    # no other record lists these addresses
    records = [tomllib.loads(p.read_text(encoding="utf-8"))["source"] for p in (REPO / "sources").glob("*.toml")]
    addresses = [a for r in records for a in (r.get("url"), *r.get("copies", []))]
    assert all(addresses.count(pages[s]) == 1 for s in pages)
    # the tables' headings: the columns each row's cells follow
    h100 = dict(excerpt[H100][2])
    assert (h100[1], h100[2], h100[3], h100[62]) == ("Product Specifications", "H100 SXM", "H100 NVL",
                                                     "* With sparsity")
    a100 = [" ".join(text.split()) for _, text in excerpt[A100][2]]
    assert a100[0] == "数据表" and a100[-1].startswith("© 2022 NVIDIA Corporation")
    # the columns: PCIe first
    assert a100[3:5] == ["A100 A100", "和高性能计算（HPC）应用提供出色的加速性能，为全球的 80GB PCIe 80GB SXM"]


def test_2_every_quote_is_a_row_of_its_copy(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    h100 = excerpt[H100][2]
    # each of the product page's rows: label, SXM, NVL (the Interconnect row: label, then each column's two lines)
    rows = {_rows(h100, first, 3) for first in (10, *range(16, 34, 3))} | {_rows(h100, 49, 5), "* With sparsity"}
    page = " ".join(" ".join(text.split()) for _, text in excerpt[A100][2])
    quotes = {s: [q for _, locator, _ in citing[s] for q in _QUOTED.findall(locator)] for s in (H100, A100)}
    assert {s: len(q) for s, q in quotes.items()} == {H100: 27, A100: 9}
    assert {s: len(citing[s]) for s in (H100, A100)} == {H100: 19, A100: 9}  # locators
    assert [q for q in quotes[H100] if q not in rows] == []
    assert [q for q in quotes[A100] if q not in page] == []
    # the rows quoted, verbatim: a sparse figure keeps its mark and quotes the footnote that says what it is
    assert set(quotes[H100]) == {
        "GPU Memory 80GB 94GB", "GPU Memory Bandwidth 3.35TB/s 3.9TB/s", "FP32 67 teraFLOPS 60 teraFLOPs",
        "INT8 Tensor Core* 3,958 TOPS 3,341 TOPS", "FP16 Tensor Core* 1,979 teraFLOPS 1,671 teraFLOPS",
        "BFLOAT16 Tensor Core* 1,979 teraFLOPS 1,671 teraFLOPS", "FP8 Tensor Core* 3,958 teraFLOPS 3,341 teraFLOPS",
        "Interconnect NVIDIA NVLink™: 900GB/s PCIe Gen5: 128GB/s NVIDIA NVLink: 600GB/s PCIe Gen5: 128GB/s",
        "* With sparsity"}
    assert set(quotes[A100]) == {"GPU 显存带宽 1935GB/s 2039GB/s", "PCIe 4.0 ：64GB/s"}
    # each quote of a figure with sparsity comes with its footnote, and only those
    for where, locator, _ in citing[H100]:
        found = _QUOTED.findall(locator)
        assert ("* With sparsity" in found) == any("*" in q for q in found if q != "* With sparsity"), where
        assert locator.startswith("Product Specifications table, "), where


def test_3_the_figures_are_the_copies_and_every_value_unchanged(
        citing: dict[str, list[tuple[str, str, Any]]]) -> None:
    # (card:path) -> (value, unit) of every fact and input citing the copies: the SXM column's figure (the first after
    # the label), or, for the A100, the column the locator names
    got = {where: value for s in (H100, A100) for where, _, value in citing[s]}
    sxm = {"memory:capacity": 80, "memory:bandwidth": 3.35, "array:derivation:inputs:sparse": 3958,
           "vector:derivation:inputs:fp32": 67, "host:read:derivation:inputs:both_ways": 128,
           "host:write:derivation:inputs:both_ways": 128, "tensor:f16:derivation:inputs:sparse": 1979,
           "tensor:bf16:derivation:inputs:sparse": 1979, "tensor:f8:derivation:inputs:sparse": 3958,
           # the derived facts, computed from those (checked below)
           "array": 989.5, "vector": 33.5, "host:read": 64, "host:write": 64, "tensor:f16": 494.75,
           "tensor:bf16": 494.75, "tensor:f8": 989.5}
    expected = {f"h100_sxm5_80gb:{k}": v for k, v in sxm.items()}
    expected |= {f"h100_pcie_80gb:streams:{s}:derivation:inputs:peak": 3.35 for s in ("read", "rewrite", "append")}
    expected |= {"a100_pcie_80gb:memory:bandwidth": 1935, "a100_sxm4_80gb:memory:bandwidth": 2039,
                 "a100_sxm4_80gb:host:read": 32, "a100_sxm4_80gb:host:write": 32,
                 "a100_sxm4_80gb:host:read:derivation:inputs:both_ways": 64,
                 "a100_sxm4_80gb:host:write:derivation:inputs:both_ways": 64}
    expected |= {f"a100_pcie_80gb:streams:{s}:derivation:inputs:peak": 2039 for s in ("read", "rewrite", "append")}
    assert got == expected
    # each derived fact is its inputs' formula, as passprice evaluates it: the values the datasheet quotes gave
    for where in [w for w in got if ":derivation:" not in w and w.split(":", 1)[1] not in ("memory:capacity",
                                                                                           "memory:bandwidth")]:
        card, path = where.split(":", 1)
        fact = _fact(_card(card), path)
        env = {name: quantity(i["value"], i["unit"]) for name, i in fact["derivation"]["inputs"].items()}
        result, want = evaluate(fact["derivation"]["formula"], env), quantity(fact["value"], fact["unit"])
        assert (result.value, result.dims) == (want.value, want.dims), where
    # the figure each quote prints is the value's: the SXM cell of the row, the A100 column the locator names
    for where, locator, value in citing[H100]:
        if ":derivation:" in where or where.endswith(("memory:capacity", "memory:bandwidth")):
            row = _QUOTED.findall(locator)[0]
            figure = re.findall(r"(\d[\d,.]*)(?:GB|TB/s|GB/s| TOPS| teraFLOPS)", row)[0]
            if row.startswith("Interconnect"):
                figure = re.findall(r"PCIe Gen5: (\d+)GB/s", row)[0]
            assert float(figure.replace(",", "")) == value, (where, row)
    for where, locator, value in citing[A100]:
        figures = re.findall(r"(\d+)GB/s", _QUOTED.findall(locator)[0])
        column = 1 if "A100 80GB SXM column (the second" in locator else 0
        if "GPU 显存带宽" in locator:
            assert int(figures[column]) == value, where
        else:
            assert column == 1 and figures == ["64"] and value in (64, 32), where  # 64 both ways, 32 each


def test_4_what_no_stored_nvidia_text_prints_stays_and_says_why(
        citing: dict[str, list[tuple[str, str, Any]]]) -> None:
    # the H100 PCIe column: the product page has none
    assert sorted(q for _, locator, _ in citing["nvidia-h100-datasheet"] for q in _QUOTED.findall(locator)) == [
        "FP32 51 teraFLOPS", "FP32 51 teraFLOPS", "GPU Memory Bandwidth 2TB/s"]
    assert {w for w, _, _ in citing["nvidia-h100-datasheet"]} == {
        "h100_pcie_80gb:memory:bandwidth", "h100_pcie_80gb:vector", "h100_pcie_80gb:vector:derivation:inputs:fp32"}
    pcie = _card("h100_pcie_80gb")
    assert "has no H100 PCIe column" in pcie["memory"]["bandwidth"]["note"]
    # the H200's 16: not moved by cite90 (its product page prints 14 of them: tests/test_cite71.py test_5); cite102
    # moved those 14 to the page's record, 2 stay (tests/test_cite102.py test_4)
    assert len([q for _, locator, _ in citing["nvidia-h200-datasheet"] for q in _QUOTED.findall(locator)]) == 2
    assert {w.split(":")[0] for w, _, _ in citing["nvidia-h200-product-page"]} == {"h200_sxm_141gb"}
    # the English A100 datasheet's record, cited by nothing, is gone; the edition's record says what it was
    assert not (REPO / "sources" / "nvidia-a100-datasheet.toml").exists() and "nvidia-a100-datasheet" not in citing
    edition = _record(A100)["note"]
    assert "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf" in edition and "was removed" in edition
    # the datasheet's record says where its quotes went
    assert "cite90" in _record("nvidia-h100-datasheet")["note"]
    assert "3 quotes cite this record" in _record("nvidia-h100-datasheet")["note"]


def test_5_the_spans_counted_before_and_after() -> None:
    # as tests/test_cite83.py test_4 counts them: 998 before cite90, 735 checked, 263 not. The 37 datasheet spans
    # moved (19 H100 SXM, 18 A100) are 36 now (27 and 9: the rows' sparsity footnotes added, the A100's column headings
    # no longer quoted), all checked against sources/excerpts/cite90-excerpt.txt: 997, 771 checked, 226 not
    by_source: dict[str, int] = {}
    for source, _, locator, _ in _all_cited():
        by_source[source] = by_source.get(source, 0) + len(_QUOTED.findall(locator))
    runs = sum(len(_QUOTED.findall(r.locator)) for r in load_runs(Root(REPO)))
    # with cite91 (the A40's tensor.f16 locators quote 2 more spans, its 9 checked): 999, 780 checked, 219 not
    # with trace109 (the A40's SMs, CUDA cores and clock quote 5 rows of its datasheet copy, checked): 1,004, 785
    # with the MI300X on_chip.capacity's 5 quotes of the CDNA 3 white paper, checked (tests/test_walk108.py): 1,009, 790
    # with cite102 (the H200 datasheet's 14 spans its product page prints are 20 of the page's, checked): 1,015, 810
    assert runs + sum(by_source.values()) == 1015 == 998 - (19 + 18) + (27 + 9) + 2 + 5 + 5 - 14 + 20
    assert (by_source[H100], by_source[A100]) == (27, 9)
    unchecked = {"nvidia-h100-datasheet": 3, "nvidia-h200-datasheet": 2, "nvidia-l40s-datasheet": 11,
                 "nvidia-rtx-a6000-datasheet": 3, "nvidia-rtx-6000-ada-datasheet": 2,
                 "nvidia-ada-whitepaper": 112, "nvidia-ampere-ga102-whitepaper": 72}
    assert {s: by_source[s] for s in unchecked} == unchecked and sum(unchecked.values()) == 205 == 263 - 37 - 7 - 14
    assert runs + sum(by_source.values()) - 205 == 810 == 735 + 36 + 9 + 5 + 5 + 20


def test_6_the_h100_host_capacity_note_is_nvidias_dgx_h100_file(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    # Before: "an 8-GPU DGX H100 has 2 TB of system memory, about 250 GB a GPU", in no registered source. NVIDIA's DGX
    # H100 system file in MLPerf Inference v6.0 (the registered record's repository and commit) prints it.
    path, url, lines = excerpt[MLPERF]
    record = _record(MLPERF)
    assert url == f"{record['repository']}/blob/{record['commit']}/{path}"
    assert path == "closed/NVIDIA/systems/backup_systems/DGX-H100_H100-SXM-80GBx8_TRT.json" and path in record["read"]
    file = dict(lines)
    assert file[18].strip() == '"host_memory_capacity": "2 TB",'
    assert file[19].strip() == '"host_memory_configuration": "32x 64GB MTC40F2046S1RC48BA1",'
    assert file[48].strip() == '"system_name": "NVIDIA DGX H100 (8x H100-SXM-80GB, TensorRT)",'
    assert file[10].strip() == '"accelerators_per_node": 8,' and file[46].strip() == '"submitter": "NVIDIA",'
    fact = _card("h100_sxm5_80gb")["host"]["capacity"]
    assert (fact["value"], fact["unit"], fact["provenance"]) == (512, "GiB", "assumed")  # the placeholder, unchanged
    assert f"{MLPERF}, {path}: 'host_memory_capacity': '2 TB', 32 x 64 GB), about 250 GB a GPU." in fact["note"]
    assert "NVIDIA's 8 x H100 MLPerf v6.0 system, its DGX H100, has 2 TB of host memory" in fact["note"]
    assert 2e12 / 8 == 250e9 and 32 * 64 == 2048


def test_7_the_a100_memory_note_quotes_the_edition(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    note = _card("a100_sxm4_80gb")["memory"]["capacity"]["note"]
    row = "GPU 显存 80GB HBM2e 80GB HBM2e"
    assert f"({A100}, row '{row}'" in note
    assert any(" ".join(text.split()).endswith(row) for _, text in excerpt[A100][2])
