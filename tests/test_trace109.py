"""Citations a user can follow to the document (issue 13, the audit use; trace109).

A review of ``passprice audit``/``sources`` output (tests/test_trace104.py's round) found citations nobody could trace
back from what passprice prints:

1. sambanova-sn40l-hot-chips-2024 said "address unknown" (11 SN40L facts, their locators by slide number, led to a
   title only). Its address is the deck in Hot Chips 2024's proceedings (hc2024.hotchips.org, day 1, talk 48); the
   copies read stay in ``copies``, and ``read`` says the slide numbers are those printed on the slides, the pages of
   that deck (test_1_*).
2. The A40's on_chip.capacity, on_chip.bandwidth and scale cited the GA102 whitepaper for "A40: 84 SMs, 10,752 CUDA
   cores, 6 MB L2, boost clock 1,740 MHz", in no table of it (its contents list no A40). Their SMs, CUDA cores and
   clock cite the A40 datasheet's rows, each quote verbatim in the copy's text shipped in
   sources/excerpts/cite91-excerpt.txt; the L2 cites the whitepaper's Table 3 (the RTX A6000 column, the same full
   GA102), said unseen. The RTX A6000's rates rested on "a third-party text ... file ids ...; repository not
   identified": it is midagedev/bloomery's research notes at a named commit, the lines read in
   tests/data/trace109-excerpt.txt (test_2_*).
3. Records named a search tool's internal file numbers ("its file 69852139205") and the tool itself ("the reference
   search"): no reader can follow either. They say what was read in words, or name the repository, path and commit
   (test_3_*).

Every value is unchanged.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import REPO, invoke
from passprice.sources import QUOTED_SPAN

SN40L = "sambanova-sn40l-hot-chips-2024"
DECK = "https://hc2024.hotchips.org/assets/program/conference/day1/48_HC2024.Sambanova.Prabhakar.final-withoutvideo.pdf"
A40, GA102 = "nvidia-a40-datasheet", "nvidia-ampere-ga102-whitepaper"
BLOOMERY, COMMIT = "midagedev/bloomery", "319e124cc203fcf9b41f1922b068f4b436774326"
# a quoted span, as tests/test_cite66.py and test_cite91.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a search tool's internal file number or the tool named as if a reader had it
INTERNAL = re.compile(r"\bfile ids? \d{8,}|\bits file \d{8,}|\bfile \d{10,}|index-file-\d+|reference search|"
                      r"\b(?:pages|code) corpus")
# records that other rounds of the same review change in parallel (trace109's brief leaves them to them)
# (the Hopper whitepaper's and the L40S datasheet's are held to it since tests/test_trace112.py)
OTHERS = re.compile(r"^(nvidia-h200-.*|nvidia-h100-.*|amd-cdna3-whitepaper)$")


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        out: dict[str, Any] = tomllib.load(f)["source"]
    return out


def _card(card: str) -> dict[str, Any]:
    with (REPO / "facts" / "cards" / f"{card}.toml").open("rb") as f:
        out: dict[str, Any] = tomllib.load(f)
    return out


def _cited(table: Any, where: str, source: str | None) -> Iterator[tuple[str, str, str, Any]]:
    # (source, where, locator, value) of each table with a locator below ``table``; a derivation input without its
    # own source cites its fact's (as tests/test_cite91.py reads them)
    if isinstance(table, dict):
        own = table.get("source")
        source = own if isinstance(own, str) else source
        if isinstance(table.get("locator"), str) and source is not None:
            yield source, where, table["locator"], table.get("value")
        for key, value in table.items():
            yield from _cited(value, f"{where}:{key}", source)


def _excerpt(name: str) -> dict[tuple[str, str], tuple[str, dict[int, str]]]:
    # {(source, label): (address, {line number: text})} of sources/excerpts/NAME (a record's stored excerpt), else
    # tests/data/NAME; '#' lines before the first section
    out: dict[tuple[str, str], tuple[str, dict[int, str]]] = {}
    lines: dict[int, str] | None = None
    stored = REPO / "sources" / "excerpts" / name
    path = stored if stored.is_file() else REPO / "tests" / "data" / name
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = {}
            out[(m.group(1), m.group(2))] = (m.group(3), lines)
        elif lines is not None:
            number, text = line.split("\t", 1)
            lines[int(number)] = text
        else:
            assert line.startswith("# "), line
    return out


# --- 1. the SN40L deck's address ------------------------------------------------------------------------------------


def test_1_the_sn40l_record_names_the_decks_address_and_the_copies_read() -> None:
    record = _record(SN40L)
    assert record["url"] == DECK
    assert record["copies"] == ["https://www.sgpjbg.com/baogao/465014.html", "https://www.servethehome.com/?p=79981"]
    read = record["read"]
    assert "that PDF itself was not opened here" in read  # what was read is said, not the deck's bytes
    assert "the numbers printed on the slides" in read and "the title slide being 1" in read
    result = invoke("audit", "--source", SN40L)
    assert result.exit_code == 0, result.output
    assert f"  Hot Chips 2024 · slides · 2024 · {DECK}" in result.output.splitlines()
    assert "address unknown" not in result.output
    assert "facts citing it: 11" in result.output


def test_1_the_slide_numbers_are_the_ones_the_copy_prints() -> None:
    # the copy's text (sources/excerpts/cite71-excerpt.txt, as tests/test_cite71.py reads it: the search's chunks
    # joined)
    # runs each slide's printed number into a line of it; the record's quotes are that text
    [(_, lines)] = [v for (sid, _), v in _excerpt("cite71-excerpt.txt").items() if sid == SN40L]
    text = "".join(lines[n] for n in sorted(lines))
    read = _record(SN40L)["read"]
    quotes = _QUOTED.findall(read)
    # the deck's title and ServeTheHome's name of its page 2 image, then 17 quotes of the copy's text, each in it
    assert len(quotes) == 19 and [q for q in quotes[2:] if q not in text] == []
    assert quotes[0] == _record(SN40L)["title"] and text.startswith("SambaNova SN40L RDU:Breaking the Barrier")
    assert quotes[1] == "Sambanova SN40L Hot Chips 2024_Page_02"
    numbered = {2: "Language-Optimized RDU2", 3: "large On-Chip Memory3", 4: "off-chip memory and IO4",
                5: "stochastic rounding capabilities5"}
    assert all(f"'{s}' on slide {n}" in read for n, s in numbered.items())
    at = [text.index(s) for s in numbered.values()]
    assert at == sorted(at)  # in the deck's order
    # slide 2 is the one-socket summary, slide 3 the 16-socket node, 4 the tile, 5 the PCU, as the locators say
    assert text.index("64 GB High Bandwidth Memory") < at[1] and at[1] > text.index("25.6 TB/s") > at[0]
    assert at[1] < text.index("1040 PCUs and PMUs") < at[2] < text.index("Configurable as a systolic array") < at[3]
    slides = set()
    for _, _, locator, _ in _cited(_card("sn40l"), "sn40l", None):
        for m in re.finditer(r"\bslides? (\d)(?:-(\d))?", locator):
            slides |= set(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    assert slides == {2, 3, 4, 5}


# --- 2. the A40's SMs, CUDA cores, clock and L2; the A6000's third-party text ---------------------------------------


MOVED = {  # input -> (the row quoted, the figure used)
    "on_chip:capacity:derivation:inputs:sms": ("NVIDIA second-generation RT Cores 84", 84),
    "on_chip:bandwidth:derivation:inputs:sms": ("NVIDIA second-generation RT Cores 84", 84),
    "on_chip:bandwidth:derivation:inputs:clock": ("Peak FP32 TFLOPS (non-Tensor) 37.4", 1.74),
    "scale:derivation:inputs:lanes": ("NVIDIA Ampere architecturebased CUDA Cores 10,752", 10752),
    "scale:derivation:inputs:clock": ("Peak FP32 TFLOPS (non-Tensor) 37.4", 1.74),
}


def test_2_the_a40s_sms_cores_and_clock_quote_its_datasheets_rows() -> None:
    [(url, lines)] = [v for (sid, _), v in _excerpt("cite91-excerpt.txt").items() if sid == A40]
    assert url in _record(A40)["copies"]
    text = " ".join(lines[n] for n in sorted(lines))  # one word a line, read as one space (tests/test_cite91.py)
    citing = {w.split(":", 1)[1]: (loc, v) for s, w, loc, v in _cited(_card("a40"), "a40", None) if s == A40}
    for where, (quote, figure) in MOVED.items():
        locator, value = citing[where]
        assert _QUOTED.findall(locator) == [quote] and quote in text, where
        assert value == figure, where
    # the figures from the rows: 84 RT cores, one an SM; 10,752 CUDA cores; the clock the FP32 peak implies
    assert round(37.4e12 / (2 * 10752) / 1e9, 2) == 1.74 and "= 1.739 GHz" in citing[
        "scale:derivation:inputs:clock"][0]
    assert "the datasheet prints no clock" in citing["scale:derivation:inputs:clock"][0]
    assert "the datasheet prints no SM count" in citing["on_chip:capacity:derivation:inputs:sms"][0]
    assert citing["scale"][1] == 18.70848 == pytest.approx(10752 * 1.74e-3)
    # the read names the two rows added
    read = _record(A40)["read"]
    assert "'NVIDIA Ampere architecturebased CUDA Cores 10,752'" in read
    assert "'NVIDIA second-generation RT Cores 84'" in read


def test_2_the_a40_names_no_ga102_table_for_what_it_lacks() -> None:
    card = _card("a40")
    ga102 = {w.split(":", 1)[1]: (loc, v) for s, w, loc, v in _cited(card, "a40", None) if s == GA102}
    # only the L2 (its input, and the capacity naming where each part comes from) still cites the whitepaper
    assert sorted(ga102) == ["on_chip:capacity", "on_chip:capacity:derivation:inputs:l2"]
    assert not any("A40: 84 SMs" in loc for _, _, loc, _ in _cited(card, "a40", None))
    l2, value = ga102["on_chip:capacity:derivation:inputs:l2"]
    assert value == 6 and l2.startswith("Table 3, the RTX A6000 column's L2 Cache Size row, 6 MB")
    assert "the table itself unseen here" in l2 and "not a figure any document read states for the A40" in l2
    # values unchanged: 6 MiB + (100 KiB + 65,536 x 4 B) x 84 = 36,048 KiB; 84 x 32 x 32 bit x 1.74 GHz
    assert card["on_chip"]["capacity"]["value"] == 36048 == 6 * 1024 + (100 + 65536 * 4 // 1024) * 84
    assert card["on_chip"]["bandwidth"]["value"] == 18.70848 == pytest.approx(84 * 32 * 4 * 1.74e-3)
    assert card["scale"]["source"] == A40
    read = _record(GA102)["read"]
    assert "The A40 is not in it as far as anything read shows" in read and "no A40" in read


def test_2_the_a6000s_third_party_text_is_named_by_repository_path_and_commit() -> None:
    note = _record(GA102)["note"]
    assert f"https://github.com/{BLOOMERY}, at commit {COMMIT}" in note
    assert "docs/research/q3gemm-lit-report.md" in note and "docs/research/mrs-pp4096-report.md" in note
    assert "not identified" not in note.split("The review checked by tests/test_cite81.py")[0]
    excerpt = _excerpt("trace109-excerpt.txt")
    assert {label for _, label in excerpt} == {"docs/research/q3gemm-lit-report.md",
                                              "docs/research/mrs-pp4096-report.md"}
    for (sid, path), (url, _) in excerpt.items():
        assert sid == GA102 and url == f"https://github.com/{BLOOMERY}/blob/{COMMIT}/{path}"
    text = " ".join(t for _, lines in excerpt.values() for t in lines.values())
    # what the note says the notes quote is in them, each figure as the note gives it
    for quoted in re.findall(r"'([^']+)'", note.split("places the RTX A6000 column in Table 3 and quotes")[1].split(
            ": the RTX A6000 locators")[0]):
        assert quoted in text, quoted
    assert all(s in text for s in ("154.8/309.6", "71/142", "284/568", "Table 3 RTX A6000", "pdftotext"))
    # the A6000's FP16 and BF16 tensor locators point to that text, which the record now names
    for key in ("f16", "bf16"):
        fact = _card("rtx_a6000")["tensor"][key]
        assert fact["source"] == GA102 and "as a third-party text of the record's PDF places it" in fact["locator"]
        assert fact["value"] == 77.4 == 154.8 / 2


# --- 3. no internal ids -------------------------------------------------------------------------------------------


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def _records() -> Iterator[tuple[Path, dict[str, Any]]]:
    for top in ("sources", "facts"):
        for path in sorted((REPO / top).rglob("*.toml")):
            if top == "sources" and OTHERS.match(path.stem):
                continue
            with path.open("rb") as f:
                yield path, tomllib.load(f)


def test_3_the_pattern_finds_an_internal_id() -> None:
    assert INTERNAL.search("(its file 69852139205, 10,665 characters")
    assert INTERNAL.search("found by exact string, file ids 70429250941 and 70071924865")
    assert INTERNAL.search("the reference search's exact-string index")
    assert not INTERNAL.search("scribd.com, document 581089408; 'L2 Cache Size 6144 KB'; 2,308,")
    assert not INTERNAL.search(f"at commit {COMMIT}")


def test_3_no_record_names_an_internal_id_or_the_search_tool() -> None:
    found = [(path.relative_to(REPO).as_posix(), where, m.group())
             for path, document in _records() for where, text in _strings(document, "")
             for m in INTERNAL.finditer(text)]
    assert found == []


def test_3_every_record_names_an_address() -> None:
    # the brief's records: each says where the document is, an address a reader can open
    for path in sorted((REPO / "sources").glob("*.toml")):
        if OTHERS.match(path.stem):
            continue
        record = _record(path.stem)
        assert (record.get("url", "unknown") != "unknown" or "repository" in record or "arxiv" in record
                or "path" in record), path.stem
    result = invoke("sources", "--json")
    assert result.exit_code == 0, result.output
    where = {s["id"]: s["where"] for s in json.loads(result.output)["sources"] if not OTHERS.match(s["id"])}
    # (ggml-org-llama-cpp names its repository, the commit read unknown: an address all the same)
    assert len(where) >= 35 and [s for s, w in where.items() if "address unknown" in w or not w] == []
    assert where[SN40L] == DECK


@pytest.mark.parametrize("source", [SN40L, GA102, A40, "nvidia-ada-tuning-guide", "nvidia-ampere-tuning-guide",
                                    "nvidia-ada-whitepaper", "nvidia-rtx-a6000-datasheet",
                                    "nvidia-rtx-6000-ada-datasheet", "nvidia-a100-80gb-datasheet-zh",
                                    "gpu-container-handbook-routing-derisk", "azure-hpc-blog-gb200"])
def test_3_what_audit_prints_of_each_record_names_no_internal_id(source: str) -> None:
    result = invoke("audit", "--source", source)
    assert result.exit_code == 0, result.output
    assert INTERNAL.findall(result.output) == [] and not re.search(r"\b\d{10,}\b", result.output)
