"""The A40's datasheet quotes are checked against the text of the copy its source record names (cite91).

The A40 locators (7 spans) quoted rows of a reseller page's copy of NVIDIA's A40 datasheet table as the source record's
`read` had written them down; no text of the copy was shipped, so the spans were unchecked. The reference search's
stored pages hold that copy (the address the record's `copies` names), and its text is the datasheet's table as a text
extraction of the PDF gives it, footnote markers glued to their cells ('(bidirectional)3', 'Sync4', '1.4**;'):
``sources/excerpts/cite91-excerpt.txt`` keeps the text read. Where a quote was that text it stays (the bandwidth and
FP32 rows); where it tidied the text it now quotes it as printed (the BF16 row, two words glued at a line break in a
cell;
the INT8 row, whose cells follow the INT8 and INT4 labels); tensor.f16, which quoted nothing since cite73 (the FP16 row
unrecorded), quotes that row (2 spans added). Every value is unchanged. The RTX A6000's copy (ServeTheHome) is the
article's own table, not the datasheet's text: its spans stay as they were, unchecked. The Ada and GA102 whitepapers'
and the other datasheets' spans stay unchecked: no text of them was found (the source records' notes say what was
searched).
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
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite91-excerpt.txt"
A40, A6000 = "nvidia-a40-datasheet", "nvidia-rtx-a6000-datasheet"
ECER = ("https://www.ecer.com/corp/details-uuuedqa-p1bsay9-multi-display-setups-supported-by-48gb-gddr6-ecc-memory-"
        "nvidia-a40-gpu-and-vga-outputs.html")
STH = "https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-designation"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py and test_cite72.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
# fact or input -> the span its locator quotes, and the figure (the first of the row's cell) the value reads
A40_QUOTES = {
    "memory:bandwidth": ("Memory bandwidth 696 GB/s", 696),
    "vector:derivation:inputs:fp32": ("Peak FP32 TFLOPS (non-Tensor) 37.4", 37.4),
    "array:derivation:inputs:dense": ("Peak INT8 Tensor TOPS Peak INT 4 Tensor TOPS 299.3 | 598.6* 598.7 | 1,197.4*",
                                      299.3),
    "tensor:f16:derivation:inputs:dense": ("Peak FP16 Tensor TFLOPS with FP16 Accumulate 149.7 | 299.4*", 149.7),
    "tensor:bf16:derivation:inputs:dense": ("Peak BF16 Tensor TFLOPSwith FP32 Accumulate149.7 | 299.4*", 149.7),
}


@pytest.fixture(scope="module")
def copies() -> dict[str, tuple[str, dict[int, str]]]:
    # {source: (the copy's address, {line number: text})}; '#' lines before the first section are the header
    out: dict[str, tuple[str, dict[int, str]]] = {}
    lines: dict[int, str] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = {}
            out[m.group(1)] = (m.group(3), lines)
        elif lines is not None:
            number, text = line.split("\t", 1)
            assert int(number) not in lines and text == text.strip(), line
            lines[int(number)] = text
        else:
            assert line.startswith("# "), line
    return out


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


def record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        out: dict[str, Any] = tomllib.load(f)["source"]
    return out


def _citing(card: str, source: str) -> dict[str, tuple[str, Any]]:
    # {key path below the card: (locator, value)} of the card's facts and derivation inputs citing ``source``
    with (REPO / "facts" / "cards" / f"{card}.toml").open("rb") as f:
        return {where.split(":", 1)[1]: (locator, value)
                for cited, where, locator, value in _cited(tomllib.load(f), card, None) if cited == source}


def test_1_the_a40_quotes_are_the_copys_stored_text(copies: dict[str, tuple[str, dict[int, str]]]) -> None:
    url, lines = copies[A40]
    assert url == ECER and sorted(lines) == list(range(1, 116))  # the whole excerpt the search gave, one word a line
    text = " ".join(lines[n] for n in sorted(lines))
    # the 9 locators cite91 checked; trace109's on_chip and scale ones (SMs, CUDA cores, clock) are checked by
    # tests/test_trace109.py against the same text
    citing = {w: c for w, c in _citing("a40", A40).items() if w.split(":")[0] not in ("on_chip", "scale")}
    assert len(citing) == 9 and sum(len(_QUOTED.findall(loc)) for loc, _ in citing.values()) == 9
    for where, (locator, _) in citing.items():
        # each locator quotes one span, verbatim in the copy's text; a fact quotes what its input quotes
        [quote] = _QUOTED.findall(locator)
        inputs = {k: q for k, (q, _) in A40_QUOTES.items() if k == where or k.startswith(f"{where}:")}
        assert quote in text and list(inputs.values()) == [quote], where
    for where, (quote, figure) in A40_QUOTES.items():
        assert citing[where][1] == figure, where
        # the figure is the first one the quote prints after its row's label (INT8's cell before INT4's)
        first = re.search(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?= \|| GB/s|$)", quote.split("Accumulate")[-1])
        assert first is not None and float(first.group(1)) == figure, where
    # the facts are the inputs over 2 (FLOP or op a MAC): unchanged
    facts = {w: v for w, (_, v) in citing.items() if ":derivation:" not in w}
    assert facts == {"memory:bandwidth": 696, "array": 149.65, "vector": 18.7, "tensor:f16": 74.85,
                     "tensor:bf16": 74.85}
    assert 299.3 / 2 == 149.65 and 37.4 / 2 == 18.7 and 149.7 / 2 == 74.85
    # the page's line breaks: the glued words are the text's, and its INT8 / INT4 rows share one run of cells
    assert "Interconnectinterface" in text and "TFLOPSwith FP32 Accumulate149.7" in text
    assert text.index("Peak INT8 Tensor TOPS") < text.index("Peak INT 4") < text.index("299.3 | 598.6*") < text.index(
        "598.7 | 1,197.4*")
    # none of the tidied wordings is left
    assert not any(q in text for q in ("Peak BF16 Tensor TFLOPS with FP32", "Peak INT8 Tensor TOPS 299.3"))
    assert not any("Peak INT8 Tensor TOPS 299.3" in loc or "TFLOPS with FP32 Accumulate 149.7" in loc
                   for loc, _ in citing.values())


def test_2_the_a6000s_copy_is_not_the_datasheets_text(copies: dict[str, tuple[str, dict[int, str]]]) -> None:
    # ServeTheHome's table holds the bandwidth row, in a table of the article's own (foundry, process size, transistors
    # and die size are rows no datasheet has): cite72 judged it no copy of the datasheet's text, and cite91 keeps that,
    # so the A6000's 3 spans stay as they were and unchecked, and the excerpt ships no text of it
    assert set(copies) == {A40}
    citing = _citing("rtx_a6000", A6000)
    quotes = {w: _QUOTED.findall(loc) for w, (loc, _) in citing.items()}
    assert quotes == {"memory:bandwidth": ["Memory Bandwidth 768 GB/s"],
                      "vector": ["Single-precision performance 38.7 TFLOPS"],
                      "vector:derivation:inputs:fp32": ["Single-precision performance 38.7 TFLOPS"]}
    assert "die size" in record(A6000)["note"] and "not counted checked" in record(A6000)["note"]


def test_3_the_records_say_what_was_read_and_searched() -> None:
    a40 = record(A40)
    assert ECER in a40["copies"] and "cite91" in a40["read"] and "cite91" in a40["note"]
    for quote, _ in A40_QUOTES.values():
        assert f"'{quote}'" in a40["read"], quote
    assert STH in record(A6000)["copies"] and "'Memory Bandwidth | 768 GB/s'" in record(A6000)["note"]
    assert "'Single-precision performance 38.7 TFLOPS'" in record(A6000)["note"]
    for source, words in (("nvidia-ada-whitepaper", "'Peak FP32 TFLOPS (non-Tensor) 82.6'"),
                          ("nvidia-ampere-ga102-whitepaper", "'284/568'"),
                          ("nvidia-rtx-6000-ada-datasheet", "'Single-precision performance 91.1 TFLOPS'"),
                          ("nvidia-l40s-datasheet", "mullet.se")):
        note = record(source)["note"]
        assert "cite91" in note and words in note, source


def test_4_the_spans_counted() -> None:
    # as tests/test_cite83.py test_4 counts them: 998 before cite91 (735 checked, 263 not); the A40's tensor.f16
    # locators quote 2 more, and the A40's 9 are checked: 1,000 spans, 744 checked, 256 not
    by_source: dict[str, int] = {}
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            for source, _, locator, _ in _cited(tomllib.load(f), path.stem, None):
                by_source[source] = by_source.get(source, 0) + len(_QUOTED.findall(locator))
    runs = sum(len(_QUOTED.findall(r.locator)) for r in load_runs(Root(REPO)))
    # with cite90 (37 H100 and A100 datasheet spans moved to 36 of NVIDIA's copies, checked): 999, 780 checked, 219 not
    # trace109: the A40's SMs, CUDA cores and clock quote 5 rows of the same copy (tests/test_trace109.py): 1,004
    # and the MI300X on_chip.capacity's 5 quotes of the CDNA 3 white paper (tests/test_walk108.py): 1,009
    # and cite102's 20 spans of NVIDIA's H200 product page for 14 of its datasheet's: 1,015
    assert runs + sum(by_source.values()) == 1015
    assert by_source[A40] == 14  # 7 before cite91, 9 before trace109
    unchecked = {"nvidia-h100-datasheet": 3, "nvidia-h200-datasheet": 2,
                 "nvidia-l40s-datasheet": 11, A6000: 3, "nvidia-rtx-6000-ada-datasheet": 2,
                 "nvidia-ada-whitepaper": 112, "nvidia-ampere-ga102-whitepaper": 72}
    assert {s: by_source[s] for s in unchecked} == unchecked
    assert sum(unchecked.values()) == 205  # 263 - the A40's 7 - cite90's 37 - cite102's 14
    assert runs + sum(by_source.values()) - 205 == 810
