"""The Ada and GA102 cards' register files and shared memory cite a text that states them: the tuning guides (cite81).

The register file (256 KB an SM) and shared memory (100 KB an SM) of the L40S, GeForce RTX 4090 and 4080 and RTX 6000
Ada cited the Ada whitepaper, and those of the A40, RTX A6000 and GeForce RTX 3090 and 3080 the GA102 whitepaper: no
text of either whitepaper was found (docs/DESIGN.md, sources), so their spans were unchecked. NVIDIA's architecture
tuning guides state both figures per compute capability, section 1.4.1.1 'Occupancy': 'The register file size is 64K
32-bit registers per SM.' and 'The shared memory capacity per SM is 100 KB.' (Ada, 8.9); 'For GPUs with compute
capability 8.6, shared memory capacity per SM is 100 KB.' (Ampere). Those inputs now cite the guides (two new source
records) and quote the sentences, which ``sources/excerpts/cite81-excerpt.txt`` ships from the text copies read. The
guides count registers, not bytes: the 256 KiB is 65,536 registers x 4 B, written as a derivation (``registers *
register_bytes``, the constant 4 B, as the B200's capacity is), so each value is unchanged.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite81-excerpt.txt"
ADA_GUIDE, AMPERE_GUIDE = "nvidia-ada-tuning-guide", "nvidia-ampere-tuning-guide"
ADA_CARDS = ("l40s", "rtx_4080", "rtx_4090", "rtx_6000_ada")
GA102_CARDS = ("a40", "rtx_3080", "rtx_3090", "rtx_a6000")
FLASHINFER = "c6857c6d7b6329c731c5e0a48c03d517a34d0990"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py and test_cite72.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
REGISTERS = "The register file size is 64K 32-bit registers per SM."


@pytest.fixture(scope="module")
def excerpt() -> dict[str, dict[int, str]]:
    # {copy's name: {line number: text}}; '#' lines before the first section are the header
    copies: dict[str, dict[int, str]] = {}
    lines: dict[int, str] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = copies.setdefault(f"{m.group(1)} {m.group(2)}", {})
        elif lines is not None:
            number, text = line.split("\t", 1)
            lines[int(number)] = text
        else:
            assert line.startswith("# "), line
    return copies


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


def _citing(source: str) -> list[tuple[str, str, Any]]:
    # (where, locator, value) of every locator citing ``source`` under facts/
    found = []
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            found += [(w, loc, v) for s, w, loc, v in _cited(tomllib.load(f), path.stem, None) if s == source]
    return found


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        record: dict[str, Any] = tomllib.load(f)["source"]
    return record


def test_1_the_records_name_the_guides_and_the_copies_read(excerpt: dict[str, dict[int, str]]) -> None:
    ada, ampere = _record(ADA_GUIDE), _record(AMPERE_GUIDE)
    assert (ada["kind"], ada["publisher"], ada["url"]) == (
        "documentation", "NVIDIA", "https://docs.nvidia.com/cuda/ada-tuning-guide/index.html")
    assert (ampere["kind"], ampere["publisher"], ampere["url"]) == (
        "documentation", "NVIDIA", "https://docs.nvidia.com/cuda/ampere-tuning-guide/index.html")
    # the copies read are text files stored by a search index of public repositories, their repositories not
    # identified; nothing is guessed. Since trace109 the records name them by what they are (a rendering of NVIDIA's
    # page, its size and first line), not by the index's file numbers, which no reader can follow (the excerpt's
    # section names below still carry those numbers: they only tell its sections apart)
    assert "not identified" in ada["read"] and ada["retrieved"] == "unknown" and "10,665 characters" in ada["read"]
    assert "17,293 characters" in ampere["read"] and "16,238 characters" in ampere["read"]
    assert "not identified" in ampere["read"] and ampere["retrieved"] == "unknown"
    assert not re.search(r"\d{9,}", ada["read"] + ampere["read"])
    assert set(excerpt) == {f"{ADA_GUIDE} index-file-69852139205", f"{AMPERE_GUIDE} index-file-69769458659",
                            f"{AMPERE_GUIDE} index-file-54347772755",
                            "nvidia-cuda-programming-guide 202_features_and_technical_specifications.md"}
    # each copy is of the page its record names: its own first lines give the address
    assert excerpt[f"{ADA_GUIDE} index-file-69852139205"][1] == f"source: {ada['url']}"
    assert excerpt[f"{AMPERE_GUIDE} index-file-69769458659"][1] == f"source: {ampere['url']}"
    assert excerpt[f"{AMPERE_GUIDE} index-file-54347772755"][4] == (
        'source: "https://docs.nvidia.com/cuda/ampere-tuning-guide/#nvidia-ampere-gpu-architecture-tuning-guide"')
    assert FLASHINFER in ada["read"] and FLASHINFER in ampere["read"]
    # the whitepapers' records say where the figures went
    assert ADA_GUIDE in _record("nvidia-ada-whitepaper")["note"]
    assert AMPERE_GUIDE in _record("nvidia-ampere-ga102-whitepaper")["note"]


def test_2_every_quote_is_the_guides_sentence_verbatim(excerpt: dict[str, dict[int, str]]) -> None:
    ada = _citing(ADA_GUIDE)
    ampere = _citing(AMPERE_GUIDE)
    assert sorted(w for w, _, _ in ada) == sorted(
        ["l40s:on_chip:capacity:derivation:inputs:registers"]
        + [f"{c}:on_chip:capacity:derivation:inputs:{i}" for c in ADA_CARDS[1:] for i in ("smem", "registers")])
    assert sorted(w for w, _, _ in ampere) == sorted(
        f"{c}:on_chip:capacity:derivation:inputs:{i}" for c in GA102_CARDS for i in ("smem", "registers"))
    ada_quotes = [q for _, loc, _ in ada for q in _QUOTED.findall(loc)]
    ampere_quotes = [q for _, loc, _ in ampere for q in _QUOTED.findall(loc)]
    assert (len(ada_quotes), len(ampere_quotes)) == (7, 8)  # the 15 spans cite81 adds (990 - 12 + 15 = 993)
    ada_lines = set(excerpt[f"{ADA_GUIDE} index-file-69852139205"].values())
    assert [q for q in ada_quotes if q not in ada_lines] == []  # each a whole line of the copy
    for copy in ("index-file-69769458659", "index-file-54347772755"):  # both copies, one with '- ' list marks
        text = "\n".join(excerpt[f"{AMPERE_GUIDE} {copy}"].values())
        assert [q for q in ampere_quotes if q not in text] == [], copy
    assert set(ada_quotes) == {REGISTERS, "The shared memory capacity per SM is 100 KB."}
    assert set(ampere_quotes) == {
        REGISTERS, "For GPUs with compute capability 8.6, shared memory capacity per SM is 100 KB."}


def test_3_the_figures_are_the_guides_and_each_capacity_is_unchanged(excerpt: dict[str, dict[int, str]]) -> None:
    ada = excerpt[f"{ADA_GUIDE} index-file-69852139205"]
    assert ada[51].startswith("1.4.1.1. Occupancy") and (ada[55], ada[61]) == (
        REGISTERS, "The shared memory capacity per SM is 100 KB.")
    assert ada[99].endswith("*NVIDIA Ada*refers to devices of compute capability 8.9.")  # the guide's Ada: 8.9
    ampere = excerpt[f"{AMPERE_GUIDE} index-file-69769458659"]
    assert ampere[53].startswith("The maximum number of concurrent warps per SM remains the same as in Volta (i.e., "
                                 "64) for compute capability 8.0, while for compute capability 8.6 it is 48.")
    assert ampere[61].endswith("For GPUs with compute capability 8.6, shared memory capacity per SM is 100 KB.")
    # CUDA 13.1's programming guide agrees: KB is KiB, K is 1024; 100 KB an SM under 8.6 and 8.9, and 64 K registers
    # in a cell the Markdown conversion left in the first column (NVIDIA's page spans it over every column)
    table = excerpt["nvidia-cuda-programming-guide 202_features_and_technical_specifications.md"]
    assert "KB and K units used in the following table correspond to 1024 bytes (i.e., a KiB) and 1024" in table[30]
    heads = [cell.strip() for cell in table[47].strip("|").split("|")]
    smem = dict(zip(heads, (cell.strip() for cell in table[63].strip("|").split("|")), strict=True))
    regs = [cell.strip() for cell in table[60].strip("|").split("|")]
    assert (smem["8.0"], smem["8.6"], smem["8.9"], smem["9.0"]) == ("164 KB", "100 KB", "100 KB", "228 KB")
    assert regs[:2] == ["Number of 32-bit registers per SM", "64 K"] and set(regs[2:]) == {""}
    # every card's inputs: 65,536 registers of 4 B, 100 KiB of shared memory; the capacity each derivation gives
    expected = {"l40s": 148856, "rtx_4080": 92592, "rtx_4090": 119296, "rtx_6000_ada": 148856,
                "a40": 36048, "rtx_3080": 29328, "rtx_3090": 35336, "rtx_a6000": 36048}
    for card, value in expected.items():
        fact = _card(card)["on_chip"]["capacity"]
        inputs = fact["derivation"]["inputs"]
        assert fact["derivation"]["formula"] == "l2 + (smem + registers * register_bytes) * sms", card
        assert (inputs["registers"]["value"], inputs["registers"]["unit"]) == (65536, "1"), card
        assert inputs["register_bytes"] == {"value": 4, "unit": "B", "constant": "bytes a 32-bit register"}, card
        assert (inputs["smem"]["value"], inputs["smem"]["unit"]) == (100, "KiB"), card
        l2_kib = inputs["l2"]["value"] * 1024
        assert inputs["l2"]["unit"] == "MiB" and fact["unit"] == "KiB"
        assert l2_kib + (100 + 65536 * 4 // 1024) * inputs["sms"]["value"] == value == fact["value"], card
        assert "cite81" in fact["note"] and "65,536" in fact["note"] and "not a figure the guide prints" in fact["note"]
    assert 65536 * 4 == 256 * 1024


def test_4_no_card_cites_a_whitepaper_unread_for_its_register_file() -> None:
    # the register file of every card now cites a text read here: a whitepaper checked against its text (A100,
    # Hopper), a tuning guide (Ada, GA102) or a device's own report (B200)
    sources = {}
    for path in sorted((REPO / "facts" / "cards").glob("*.toml")):
        capacity = _card(path.stem).get("on_chip", {}).get("capacity", {})
        inputs = capacity.get("derivation", {}).get("inputs", {})
        for name in ("regs", "registers"):
            if name in inputs:
                sources[path.stem] = inputs[name].get("source", capacity["source"])
    assert not {"nvidia-ada-whitepaper", "nvidia-ampere-ga102-whitepaper"} & set(sources.values())
    assert {c for c, s in sources.items() if s == ADA_GUIDE} == set(ADA_CARDS)
    assert {c for c, s in sources.items() if s == AMPERE_GUIDE} == set(GA102_CARDS)
    # nor does a locator citing either whitepaper still say it states the register file or the shared memory (before:
    # '...; Ada SM: 256 KB register file, up to 100 KB shared memory' on 7 locators of each card, SMs and L2 among
    # them); each capacity's own locator points to the guide for them
    said = {w: loc for source in ("nvidia-ada-whitepaper", "nvidia-ampere-ga102-whitepaper")
            for w, loc, _ in _citing(source) if re.search(r"register file|shared memory|KB", loc)}
    assert sorted(said) == sorted(f"{c}:on_chip:capacity" for c in ADA_CARDS[1:] + GA102_CARDS)
    assert all(re.search(r"; register file and shared memory per SM: the [A-Za-z ]+ tuning guide \(the registers and "
                         r"smem inputs\)$", loc) for loc in said.values()), said


def test_5_passprices_evaluator_gives_each_capacity_from_its_inputs() -> None:
    # passprice's own evaluator (exact, with units), not this test's arithmetic: 65,536 (dimensionless) x 4 B added to
    # 100 KiB, times the SMs, plus the L2, is the capacity the card writes, in bytes
    from fractions import Fraction

    from passprice.derivations import evaluate, quantity

    for card in ADA_CARDS + GA102_CARDS:
        fact = _card(card)["on_chip"]["capacity"]
        env = {name: quantity(i["value"], i["unit"]) for name, i in fact["derivation"]["inputs"].items()}
        result = evaluate(fact["derivation"]["formula"], env)
        assert (result.value, result.dims) == (Fraction(fact["value"] * 1024), quantity(1, "B").dims), card
