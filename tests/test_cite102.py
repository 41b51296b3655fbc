"""The H200 card's datasheet quotes that NVIDIA's H200 product page prints cite the page, each locator quoting its row
verbatim (issue 13, the audit use: a citation nobody could trace back).

The H200 card's 16 quoted spans cited the H200 datasheet (``nvidia-h200-datasheet``), a PDF nobody here has read, so
none was checked against a stored text: the most used of the 219 unchecked spans, since the README's worked audit and
the default serving r1-qwen7b-h200 rest on them. NVIDIA's H200 product page, read as bojieli/ai-infra-book's text of
it at a commit (tests/test_cite71.py test_5 found it printing the figures), is now a source record of its own
(``nvidia-h200-product-page``: what was read, where, at which commit, when the copy was retrieved, and its stored
excerpt ``sources/excerpts/cite102-excerpt.txt``), and the 14 quotes whose figure it prints cite it (test_1, test_2).
Its table is one cell a line, a label then the H200 SXM and H200 NVL values: a locator quotes the row, its cells joined
by one space, and a figure with sparsity ('²') quotes footnote 2 too, as tests/test_cite90.py reads the H100 page. Every
value is unchanged (test_3).

What stays (test_4): the INT8 row's 2 quotes ('INT8 Tensor Core 3,958 TOPS', the array fact and its input), which the
page prints '3,958 TFLOPS'. No stored text of the datasheet itself was found: the reference search (pages, docs and
code corpora, and the exact-string index) was asked for NVIDIA's "H200 Tensor Core GPU" datasheet by its title and
address (hpc-datasheet-sc23-h200-datasheet-3002446) and by its rows ('INT8 Tensor Core 3,958 TOPS', 'Up to 7 MIGs
@18GB each'); it holds code and notes that link the PDF, resellers' and wikis' own spec tables, and a generated
markdown summary in bojieli/ai-infra-book that lists the datasheet as fetched and tabulates '| **INT8 Tensor Core** |
3,958 TOPS |' (its own table, not the PDF's text, so not a copy to check a quote against). The same searches for the
other unchecked datasheets found nothing new: the L40S's rows ('FP32 TFLOPS 91.6', 'Peak INT8 Tensor TOPS 733') only
in the unidentified paste its record names and the reseller tables and scribd first page it names;
the RTX A6000's 'Single-precision performance 38.7 TFLOPS', the RTX 6000 Ada's '... 91.1 TFLOPS' and the H100 PCIe's
'FP32 51 teraFLOPS' in no stored text (news and spec-database tables with other wording, a site's bulleted '-
Single-Precision Performance 91.1 TFLOPS' quoting NVIDIA's RTX 6000 page, servethehome's A6000 table holding
'Memory Bandwidth | 768 GB/s' without the FP32 row). The spans counted before and after (test_5): 999 quoted, 780
checked, 219 not, then (with trace109 and walk108, 5 checked each) 1,015, 810 and 205. ``audit --source`` prints
the stored excerpt (test_6).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice.derivations import evaluate, quantity
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite102-excerpt.txt"
PAGE, DATASHEET = "nvidia-h200-product-page", "nvidia-h200-datasheet"
COMMIT = "548c568b672a5e7c6004ec5825c15dd80b3d6d91"
COPY = ("https://github.com/bojieli/ai-infra-book/blob/548c568b672a5e7c6004ec5825c15dd80b3d6d91/references/"
        "outline-checks/2026-09-07/systems-cases/nvidia-h200-systems.txt")
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py, test_cite83.py and test_cite90.py read one
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
    # own source cites its fact's (as tests/test_cite90.py reads them)
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


def _row(lines: list[tuple[int, str]], first: int, cells: int) -> str:
    # the row of the page's table that starts at line ``first``: its ``cells`` lines joined by one space
    table = dict(lines)
    assert all(first + i in table for i in range(cells)), first
    return " ".join(table[first + i] for i in range(cells))


def _card() -> dict[str, Any]:
    with (REPO / "facts" / "cards" / "h200_sxm_141gb.toml").open("rb") as f:
        return tomllib.load(f)


def _fact(card: dict[str, Any], path: str) -> dict[str, Any]:
    table = card
    for key in path.split(":"):
        table = table[key]
    return table


def test_1_the_excerpt_is_the_copy_the_record_names(
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    assert list(excerpt) == [PAGE]
    path, url, lines = excerpt[PAGE]
    record = _record(PAGE)
    # the copy read is the one the record lists, at its commit; the record's address is NVIDIA's page
    assert url == COPY == f"https://github.com/bojieli/ai-infra-book/blob/{COMMIT}/{path}"
    assert record["copies"] == [COPY] and record["excerpt"] == "sources/excerpts/cite102-excerpt.txt"
    assert (record["url"], record["retrieved"], record["publisher"], record["kind"], record["date"]) == (
        "https://www.nvidia.com/en-us/data-center/h200/", "2026-09-07", "NVIDIA", "web-page", "unknown")
    assert COMMIT in record["read"] and "16,690 characters" in record["read"]
    assert "tests/test_cite102.py" in record["read"] and "tests/test_cite102.py" in record["note"]
    assert "sources/excerpts/cite102-excerpt.txt" in record["read"]
    # no other record lists the page: the datasheet's record listed it under copies until the page was a record
    records = [tomllib.loads(p.read_text(encoding="utf-8"))["source"] for p in (REPO / "sources").glob("*.toml")]
    addresses = [a for r in records for a in (r.get("url"), *r.get("copies", []))]
    assert addresses.count(record["url"]) == 1 and addresses.count(COPY) == 1
    assert "copies" not in _record(DATASHEET)
    # the table's heading (its columns, SXM first) and its two footnotes
    page = dict(lines)
    assert (page[1], page[2], page[3], page[4]) == ("Specifications", "NVIDIA H200 GPU", "H200 SXM¹", "H200 NVL¹")
    assert (page[65], page[66], page[67], page[68]) == ("1", "Preliminary specifications. May be subject to change.",
                                                        "2", "With sparsity.")
    # the lines are numbered from the table's heading as sources/excerpts/cite71-excerpt.txt numbers the same copy
    cite71 = (REPO / "sources" / "excerpts" / "cite71-excerpt.txt").read_text(encoding="utf-8")
    section = cite71.split(f"== {DATASHEET} ", 1)[1].split("\n== ", 1)[0]
    earlier = dict((int(n), t) for n, t in (line.split("\t", 1) for line in section.splitlines()[1:] if "\t" in line))
    assert earlier and all(page[n] == t for n, t in earlier.items() if n in page)
    assert section.split(" ", 2)[1] == f"https://github.com/bojieli/ai-infra-book/blob/{COMMIT}/{path}"


def test_2_every_quote_is_a_row_of_the_copy(
        citing: dict[str, list[tuple[str, str, Any]]],
        excerpt: dict[str, tuple[str, str, list[tuple[int, str]]]]) -> None:
    lines = excerpt[PAGE][2]
    # each row: label, SXM, NVL (the Interconnect row: label, then the SXM cell's two lines and the NVL cell's three);
    # footnote 2, its mark and its text
    rows = {_row(lines, first, 3) for first in (11, *range(17, 35, 3))} | {_row(lines, 53, 6), _row(lines, 67, 2)}
    quotes = [q for _, locator, _ in citing[PAGE] for q in _QUOTED.findall(locator)]
    assert len(quotes) == 20 and len(citing[PAGE]) == 14  # spans, locators
    assert [q for q in quotes if q not in rows] == []
    # the rows quoted, verbatim: a sparse figure keeps its mark and quotes the footnote that says what it is
    assert set(quotes) == {
        "GPU Memory 141GB 141GB", "GPU Memory Bandwidth 4.8TB/s 4.8TB/s", "FP32 67 TFLOPS 60 TFLOPS",
        "FP16 Tensor Core² 1,979 TFLOPS 1,671 TFLOPS", "BFLOAT16 Tensor Core² 1,979 TFLOPS 1,671 TFLOPS",
        "FP8 Tensor Core² 3,958 TFLOPS 3,341 TFLOPS", "2 With sparsity.",
        "Interconnect NVIDIA NVLink™: 900GB/s PCIe Gen5: 128GB/s 2- or 4-way NVIDIA NVLink bridge: 900GB/s per GPU "
        "PCIe Gen5: 128GB/s"}
    assert quotes.count("2 With sparsity.") == 6  # the f16, bf16 and f8 facts and their inputs
    # each quote of a figure with sparsity comes with the footnote, and only those
    for where, locator, _ in citing[PAGE]:
        found = _QUOTED.findall(locator)
        assert ("2 With sparsity." in found) == any("²" in q for q in found if q != "2 With sparsity."), where
        assert locator.startswith("Specifications table, "), where
    # only the H200 card cites the page
    assert {w.split(":", 1)[0] for w, _, _ in citing[PAGE]} == {"h200_sxm_141gb"}


def test_3_the_figures_are_the_copys_and_every_value_unchanged(citing: dict[str, list[tuple[str, str, Any]]]) -> None:
    # every fact and input citing the page, and its value as it was when they cited the datasheet
    got = {where.split(":", 1)[1]: value for where, _, value in citing[PAGE]}
    assert got == {"memory:capacity": 141, "memory:bandwidth": 4.8, "vector": 33.5, "vector:derivation:inputs:fp32": 67,
                   "host:read": 64, "host:read:derivation:inputs:both_ways": 128, "host:write": 64,
                   "host:write:derivation:inputs:both_ways": 128, "tensor:f16": 494.75,
                   "tensor:f16:derivation:inputs:sparse": 1979, "tensor:bf16": 494.75,
                   "tensor:bf16:derivation:inputs:sparse": 1979, "tensor:f8": 989.5,
                   "tensor:f8:derivation:inputs:sparse": 3958}
    # by hand: a dense tensor rate is the sparse figure / 2 (2:4 sparsity) / 2 (FLOP a MAC); FP32 / 2; PCIe / 2 ways
    assert (1979 / 2 / 2, 3958 / 2 / 2, 67 / 2, 128 / 2) == (494.75, 989.5, 33.5, 64)
    card = _card()
    for path in [p for p in got if ":derivation:" not in p and not p.startswith("memory:")]:
        fact = _fact(card, path)
        env = {name: quantity(i["value"], i["unit"]) for name, i in fact["derivation"]["inputs"].items()}
        result, want = evaluate(fact["derivation"]["formula"], env), quantity(fact["value"], fact["unit"])
        assert (result.value, result.dims) == (want.value, want.dims), path
    # the figure each quote prints is the value's: the SXM cell of the row (the first figure after the label)
    for where, locator, value in citing[PAGE]:
        if ":derivation:" in where or ":memory:" in where:
            row = _QUOTED.findall(locator)[0]
            figure = re.findall(r"(\d[\d,.]*)(?:GB|TB/s| TFLOPS)", row)[0]
            if row.startswith("Interconnect"):
                figure = re.findall(r"PCIe Gen5: (\d+)GB/s", row)[0]
            assert float(figure.replace(",", "")) == value, (where, row)


def test_4_the_int8_row_stays_on_the_datasheet_and_says_why(citing: dict[str, list[tuple[str, str, Any]]]) -> None:
    assert [(w, q) for w, locator, _ in citing[DATASHEET] for q in _QUOTED.findall(locator)] == [
        ("h200_sxm_141gb:array", "INT8 Tensor Core 3,958 TOPS"),
        ("h200_sxm_141gb:array:derivation:inputs:sparse", "INT8 Tensor Core 3,958 TOPS")]
    card = _card()
    assert (card["array"]["value"], card["array"]["derivation"]["inputs"]["sparse"]["value"]) == (989.5, 3958)
    note = card["array"]["note"]
    assert "Still cited to the datasheet" in note and "tests/test_cite102.py" in note
    assert "'INT8 Tensor Core² 3,958 TFLOPS 3,341 TFLOPS'" in note and "the value is unchanged" in note
    assert "tests/test_cite102.py" in card["card"]["note"] and "all but the INT8 rate cite" in card["card"]["note"]
    # the datasheet's record says where its quotes went and what is left
    ds = _record(DATASHEET)["note"]
    assert "14 of its 16 quotes cite NVIDIA's H200 product page" in ds and "2 cite this record" in ds
    assert "No stored text of the datasheet itself has been found" in ds


def test_5_the_spans_counted_before_and_after() -> None:
    # as tests/test_cite90.py test_5 counts them: 999 quoted, 780 checked, 219 not. The H200 datasheet's 14 spans
    # moved are 20 on the page (6 footnote quotes added), all checked against sources/excerpts/cite102-excerpt.txt
    by_source: dict[str, int] = {}
    for source, _, locator, _ in _all_cited():
        by_source[source] = by_source.get(source, 0) + len(_QUOTED.findall(locator))
    runs = sum(len(_QUOTED.findall(r.locator)) for r in load_runs(Root(REPO)))
    assert runs + sum(by_source.values()) == 1015 == 999 + 5 + 5 - 14 + 20  # trace109 and walk108 added 5 each
    assert (by_source[PAGE], by_source[DATASHEET]) == (20, 2)
    unchecked = {"nvidia-h100-datasheet": 3, DATASHEET: 2, "nvidia-l40s-datasheet": 11,
                 "nvidia-rtx-a6000-datasheet": 3, "nvidia-rtx-6000-ada-datasheet": 2,
                 "nvidia-ada-whitepaper": 112, "nvidia-ampere-ga102-whitepaper": 72}
    assert {s: by_source[s] for s in unchecked} == unchecked and sum(unchecked.values()) == 205 == 219 - 14
    assert runs + sum(by_source.values()) - 205 == 810 == 780 + 5 + 5 + 20


def test_6_audit_prints_the_page_and_its_stored_excerpt() -> None:
    lines = invoke("audit", "--source", PAGE).stdout.splitlines()
    assert ("  stored excerpt: sources/excerpts/cite102-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top folder)"
            in lines)
    assert f"  copies: {COPY}" in lines and "  retrieved 2026-09-07" in lines
    data = json.loads(invoke("audit", "--source", PAGE, "--json").stdout)
    assert data["source"]["excerpt"] == "sources/excerpts/cite102-excerpt.txt"
    # the default serving's audit names the page, its copy and the bandwidth row
    lines = invoke("audit", "r1-qwen7b-h200").stdout.splitlines()
    at = lines.index(
        "  nvidia-h200-product-page — NVIDIA H200 GPU product page (Specifications table) (NVIDIA, unknown)")
    assert lines[at + 1] == "    at: https://www.nvidia.com/en-us/data-center/h200/"
    assert f"    copies: {COPY}" in lines[at:at + 8]
