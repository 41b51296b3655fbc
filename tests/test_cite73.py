"""The A40 and L40S datasheets' and the GA102 whitepaper's locators quote wording a text read shows, at a place the
document has (cite73).

cite72 found, reading the copies the source records name, that of the A40's and L40S's 20 datasheet spans only the
two memory-bandwidth ones were in those copies as quoted; the other 18 stated the same figures in other words (the
A40 locators quoted 'FP32 37.4 teraFLOPS' where the verbatim copy prints 'Peak FP32 TFLOPS (non-Tensor) 37.4'); the
L40S `array` fact's 733 | 1,466 TOPS (INT8) was in no copy read (NVIDIA's combined L40/L40S table, as resellers
copy it, gives that row for the L40 only); and the GA102 whitepaper V2.0's table of contents gives Appendix A to the
GeForce RTX 3090 and 3070 only, while 35 RTX 3080 and RTX A6000 locators (50 quoted spans) named Appendix A.

Now: the A40 locators quote the copy's rows as the source record's `read` quotes them (its FP16 row was never
recorded, so tensor.f16 names the row and quotes nothing); the L40S locators quote the rows of a plain-text paste of
the L40S datasheet's table (``sources/excerpts/cite73-excerpt.txt``: a third-party paste whose repository is not
identified, so these spans are checked against that paste, not against NVIDIA's file); the RTX 3080 locators no
longer name Appendix A and the RTX A6000 ones name Table 3, as a third-party pdftotext report of the PDF places that
column. No value moved; no lock's digest moved (``passprice check``: 10 locks, drift none).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite73-excerpt.txt"
A40, L40S, GA102 = "nvidia-a40-datasheet", "nvidia-l40s-datasheet", "nvidia-ampere-ga102-whitepaper"
# a quoted span, as tests/test_cite66.py and test_cite72.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


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


def _citing(card: str, source: str) -> dict[str, tuple[str, Any]]:
    # {key path: (locator, value)} of the card's facts and derivation inputs citing ``source``
    with (REPO / "facts" / "cards" / f"{card}.toml").open("rb") as f:
        return {where: (locator, value) for cited, where, locator, value in _cited(tomllib.load(f), card, None)
                if cited == source}


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        record: dict[str, Any] = tomllib.load(f)["source"]
    return record


@pytest.fixture(scope="module")
def paste() -> list[str]:
    lines = EXCERPT.read_text(encoding="utf-8").splitlines()
    # where the paste was read, in words: a search tool's internal file number no reader can follow (test_trace112.py)
    assert all(line.startswith("# ") for line in lines[:8])
    assert "no public address for it was found" in " ".join(lines[:8])
    assert not re.search(r"\d{10,}", "".join(lines[:8]))
    return lines[8:]


def test_1_the_l40s_quotes_are_the_pastes_rows(paste: list[str]) -> None:
    citing = _citing("l40s", L40S)
    quotes = {where: _QUOTED.findall(locator) for where, (locator, _) in citing.items()}
    # 11 locators quote one row each; the scale's two (its CUDA Cores row) quote nothing; the on-chip ones cite a
    # deviceQuery run since cite74 (tests/test_cite74.py)
    assert sum(len(q) for q in quotes.values()) == 11 and {len(q) for q in quotes.values()} == {0, 1}
    quotes = {where: q for where, q in quotes.items() if q}
    # each quote is one row of the paste, verbatim
    assert {q[0] for q in quotes.values()} - set(paste) == set()
    # each figure the derivations read is the row's L40S dense figure (the first before ' I ')
    inputs = {where: value for where, (_, value) in citing.items()
              if ":derivation:inputs:" in where and where in quotes}
    assert inputs == {"l40s:array:derivation:inputs:dense": 733, "l40s:vector:derivation:inputs:fp32": 91.6,
                      "l40s:tensor:f16:derivation:inputs:dense": 362.05,
                      "l40s:tensor:bf16:derivation:inputs:dense": 362.05,
                      "l40s:tensor:f8:derivation:inputs:dense": 733}
    for where, value in inputs.items():
        row = quotes[where][0]
        assert float(row.split(" I ")[0].rsplit(" ", 1)[1].replace(",", "")) == value, (where, row)
    # the INT8 row: 733 dense, 1,466 with sparsity, in the L40S's one column; the facts halve it into MACs
    assert "Peak INT8 Tensor TOPS 733 I 1,466*" in paste and "Memory Bandwidth 864GB/s" in paste
    facts = {where: value for where, (_, value) in citing.items() if ":derivation:" not in where and where in quotes}
    assert facts == {"l40s:memory:bandwidth": 864, "l40s:array": 366.5, "l40s:vector": 45.8,
                     "l40s:tensor:f16": 181.025, "l40s:tensor:bf16": 181.025, "l40s:tensor:f8": 366.5}
    assert 733 / 2 == 366.5 and 91.6 / 2 == 45.8 and 362.05 / 2 == 181.025
    # none of the card review's own wordings is left ('INT8 Tensor Core 733 | 1,466 TOPS', 'FP32 91.6 TFLOPS' ...)
    assert [w for w, (loc, _) in citing.items() if re.search(r"Tensor Core [\d.,]+ \||FP32 91\.6 TFLOPS", loc)] == []
    # the record says where the paste is, and that it is not a citable copy
    note = _record(L40S)["note"]
    assert "no public address for it was found" in note and "362 | 724*" in note
    assert not re.search(r"\d{10,}", note)  # no search tool's file number (tests/test_trace112.py)


def test_2_the_a40_quotes_are_the_copys_rows_the_record_quotes() -> None:
    citing = _citing("a40", A40)
    read = _record(A40)["read"]
    quotes = [q for locator, _ in citing.values() for q in _QUOTED.findall(locator)]
    # 9 before cite73: tensor.f16's 2 quoted the card review's wording, then nothing (7); 9 since cite91, which read
    # the copy's stored text: tensor.f16 quotes its FP16 row, and the BF16 and INT8 quotes are its text as printed
    # (tests/test_cite91.py checks each against sources/excerpts/cite91-excerpt.txt)
    # 14 since trace109: the SMs (2 inputs), CUDA cores (1) and clock (2) of on_chip and scale cite the copy's CUDA
    # Cores, RT Cores and FP32 rows, where they named the GA102 whitepaper (tests/test_trace109.py)
    assert len(quotes) == 14
    assert [q for q in quotes if f"'{q}'" not in read] == []
    assert set(quotes) == {"Memory bandwidth 696 GB/s", "Peak FP32 TFLOPS (non-Tensor) 37.4",
                           "Peak FP16 Tensor TFLOPS with FP16 Accumulate 149.7 | 299.4*",
                           "Peak BF16 Tensor TFLOPSwith FP32 Accumulate149.7 | 299.4*",
                           "Peak INT8 Tensor TOPS Peak INT 4 Tensor TOPS 299.3 | 598.6* 598.7 | 1,197.4*",
                           "NVIDIA Ampere architecturebased CUDA Cores 10,752", "NVIDIA second-generation RT Cores 84"}
    f16 = {w: loc for w, (loc, _) in citing.items() if w.startswith("a40:tensor:f16")}
    assert len(f16) == 2 and all(_QUOTED.findall(loc) == ["Peak FP16 Tensor TFLOPS with FP16 Accumulate 149.7 | 299.4*"]
                                 for loc in f16.values())
    assert not any("teraFLOPS" in loc for loc, _ in citing.values())
    values = {w: v for w, (_, v) in citing.items()}
    assert values["a40:array"] == 149.65 == 299.3 / 2 and values["a40:vector"] == 18.7 == 37.4 / 2
    assert values["a40:tensor:f16"] == values["a40:tensor:bf16"] == 74.85 == 149.7 / 2


def test_3_no_rtx_3080_or_a6000_locator_names_appendix_a() -> None:
    # V2.0's contents: Appendix A is the RTX 3090 (p. 44) and RTX 3070 (p. 46); Appendix C the A6000's performance
    by_card = {card: _citing(card, GA102) for card in ("rtx_3080", "rtx_a6000", "rtx_3090")}
    assert {card: len(c) for card, c in by_card.items()} == {"rtx_3080": 17, "rtx_a6000": 14, "rtx_3090": 17}
    assert [w for card in ("rtx_3080", "rtx_a6000") for w, (loc, _) in by_card[card].items()
            if loc.startswith("Appendix A")] == []
    assert all(loc.startswith("Appendix A, 'GeForce RTX 3090' column") for loc, _ in by_card["rtx_3090"].values())
    assert all(loc.startswith("Table 3, 'NVIDIA RTX A6000' column") for loc, _ in by_card["rtx_a6000"].values())
    # the quoted spans stay 50 (28 + 22): the sparse 309.7 the A6000's FP16/BF16 quotes gave is no longer quoted; 46
    # since cite81, whose register-file and shared-memory inputs (2 a card, each quoting the column's name) cite the
    # Ampere tuning guide (tests/test_cite81.py)
    spans = {card: sum(len(_QUOTED.findall(loc)) for loc, _ in c.values()) for card, c in by_card.items()}
    assert spans["rtx_3080"] + spans["rtx_a6000"] == 46
    assert [q for loc, _ in by_card["rtx_a6000"].values() for q in _QUOTED.findall(loc) if "154.8/" in q] == []
    values = {w: v for w, (_, v) in by_card["rtx_a6000"].items() if w.endswith(":dense")}
    assert values == {"rtx_a6000:array:derivation:inputs:dense": 309.7,
                      "rtx_a6000:tensor:f16:derivation:inputs:dense": 154.8,
                      "rtx_a6000:tensor:bf16:derivation:inputs:dense": 154.8}
    note = _record(GA102)["note"]
    assert "'Appendix C - RTX A6000 GPU Performance' (p. 50)" in note and "GeForce RTX 3070 (p. 46)" in note
