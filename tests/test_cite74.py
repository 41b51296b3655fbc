"""The L40S's SMs, L2, shared memory and clock cite a text that states them: a deviceQuery run on an L40S (cite74).

cite73 found that the L40S datasheet's table (the copies the record names, and a plain-text paste of it) has no SM,
L2 or clock row, while the card's on-chip capacity, on-chip bandwidth and scale cited it for 142 SMs, 96 MB of L2 and
2,520 MHz, quoting nothing. No NVIDIA document stating them for the L40S was found (the Ada whitepaper predates the
card; its V2.01 adds the L40). What does state them is the card's own report to the CUDA driver: the README of
alvarobartt/cuda-device-query (a Rust port of NVIDIA's deviceQuery sample) shows its run on an L40S, each line one
driver attribute (142 multiprocessors, a 2,520 MHz maximum clock, an L2 of 100,663,296 bytes = 96 MiB, 102,400 bytes
of shared memory a multiprocessor = 100 KiB). Those inputs now cite that record (``sources/alvarobartt-cuda-device-
query.toml``, the commit and the README's sha256) and quote its lines, which ``sources/excerpts/cite74-excerpt.txt``
ships; the register file cites the Ada whitepaper (the Ada SM's), the lanes the datasheet's CUDA-cores row. No value
moved.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite74-excerpt.txt"
QUERY, L40S = "alvarobartt-cuda-device-query", "nvidia-l40s-datasheet"
COMMIT = "785c09f81d56cedba22460cb643b23ae0e1ba3b3"
README_SHA256 = "489a2e7d36b0286ae40880b143974d13ef7dabd531af117f912e304a17cc9d49"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py and test_cite72.py read one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


@pytest.fixture(scope="module")
def readme() -> dict[int, str]:
    # {line number: text} of the README lines shipped; '#' lines before the section are the header
    lines: dict[int, str] = {}
    section = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.groups()
        elif section is not None:
            number, text = line.split("\t", 1)
            lines[int(number)] = text
        else:
            assert line.startswith("# "), line
    assert section == (QUERY, "README.md", f"https://github.com/alvarobartt/cuda-device-query/blob/{COMMIT}/README.md")
    return lines


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


def _l40s() -> list[tuple[str, str, str, Any]]:
    with (REPO / "facts" / "cards" / "l40s.toml").open("rb") as f:
        return list(_cited(tomllib.load(f), "l40s", None))


def _record(source: str) -> dict[str, Any]:
    with (REPO / "sources" / f"{source}.toml").open("rb") as f:
        record: dict[str, Any] = tomllib.load(f)["source"]
    return record


def test_1_the_record_names_the_commit_and_the_file_read(readme: dict[int, str]) -> None:
    record = _record(QUERY)
    assert (record["kind"], record["commit"], record["sha256"]) == ("repository", COMMIT, README_SHA256)
    assert record["repository"] == "https://github.com/alvarobartt/cuda-device-query"
    assert record["url"].endswith(f"/blob/{COMMIT}/README.md") and README_SHA256 in EXCERPT.read_text("utf-8")
    # the run is an L40S's, its driver 12.4, its compute capability 8.9
    assert readme[15].endswith("on a NVIDIA L40S looks like:") and readme[21] == 'Device 0: "NVIDIA L40S"'
    assert readme[22].split() == ["CUDA", "Driver", "Version:", "12.4"] and readme[23].endswith(" 8.9")
    # the record says it is the device's own report, not NVIDIA's published figure
    assert "not NVIDIA's published specification" in record["note"]


def test_2_every_quote_is_a_line_of_the_readme_verbatim(readme: dict[int, str]) -> None:
    citing = [(where, locator) for source, where, locator, _ in _l40s() if source == QUERY]
    assert sorted(where for where, _ in citing) == [
        "l40s:on_chip:bandwidth:derivation:inputs:clock", "l40s:on_chip:bandwidth:derivation:inputs:sms",
        "l40s:on_chip:capacity", "l40s:on_chip:capacity:derivation:inputs:l2",
        "l40s:on_chip:capacity:derivation:inputs:smem", "l40s:on_chip:capacity:derivation:inputs:sms",
        "l40s:scale:derivation:inputs:clock"]
    quotes = [q for _, locator in citing for q in _QUOTED.findall(locator)]
    assert len(quotes) == 9  # the spans cite74 adds (981 -> 990)
    printed = {text.strip() for text in readme.values()}
    assert [q for q in quotes if q not in printed] == []  # each a whole line, its run of spaces as printed
    assert "L2 Cache Size:                                 100663296 bytes" in quotes


def test_3_the_figures_are_the_devices(readme: dict[int, str]) -> None:
    inputs = {where: value for source, where, _, value in _l40s() if source == QUERY and ":inputs:" in where}
    # the lines state 142 multiprocessors, 2,520 MHz, 100,663,296 B of L2, 102,400 B of shared memory a multiprocessor
    assert re.fullmatch(r"\(142\) Multiprocessors, \(128\) CUDA Cores/MP: +18176 CUDA Cores", readme[25].strip())
    assert re.fullmatch(r"GPU Max Clock rate: +2520 MHz \(2\.52 GHz\)", readme[26].strip())
    assert re.fullmatch(r"L2 Cache Size: +100663296 bytes", readme[29].strip())
    assert re.fullmatch(r"Total shared memory per multiprocessor: +102400 bytes", readme[35].strip())
    assert 100663296 == 96 * 2**20 and 102400 == 100 * 2**10 and 142 * 128 == 18176
    assert inputs == {"l40s:on_chip:capacity:derivation:inputs:l2": 96,  # MiB
                      "l40s:on_chip:capacity:derivation:inputs:smem": 100,  # KiB
                      "l40s:on_chip:capacity:derivation:inputs:sms": 142,
                      "l40s:on_chip:bandwidth:derivation:inputs:sms": 142,
                      "l40s:on_chip:bandwidth:derivation:inputs:clock": 2.52,  # GHz
                      "l40s:scale:derivation:inputs:clock": 2.52}
    # the facts they give, unchanged: 96 MiB + (100 + 256) KiB x 142; 142 x 32 banks x 32 bit x 2.52 GHz; 18,176 x
    # 2.52 GHz
    facts = {where: value for _, where, _, value in _l40s() if where.count(":") == 2 or where == "l40s:scale"}
    assert (facts["l40s:on_chip:capacity"], facts["l40s:on_chip:bandwidth"], facts["l40s:scale"]) == (
        148856, 45.80352, 45.80352)
    assert 96 * 1024 + (100 + 256) * 142 == 148856
    assert round(142 * 32 * 4 * 2.52e9 / 1e12, 5) == 45.80352 == round(18176 * 2.52e9 / 1e12, 5)


def test_4_no_l40s_locator_claims_the_datasheet_states_sms_l2_or_clock() -> None:
    # before: 'specifications: 142 SMs (568 fourth-generation Tensor Cores), 18,176 CUDA cores, 96 MB L2, boost clock
    # 2,520 MHz; ...' on 8 locators citing the datasheet, which has no such row
    on_datasheet = {where: locator for source, where, locator, _ in _l40s() if source == L40S}
    assert [w for w, loc in on_datasheet.items() if re.search(r"\bSMs?\b|\bL2\b|MHz|GHz|clock rate", loc)] == []
    assert {w for w in on_datasheet if w.startswith("l40s:scale")} == {"l40s:scale",
                                                                       "l40s:scale:derivation:inputs:lanes"}
    assert all("CUDA Cores row: 18,176" in loc for w, loc in on_datasheet.items() if w.startswith("l40s:scale"))
    # the register file is the Ada SM's: cited to the Ada whitepaper (256 KB) until cite81, to the Ada tuning guide
    # since (65,536 32-bit registers, times 4 B in the derivation), as the RTX 4090's and RTX 6000 Ada's are
    regs = [(source, value) for source, where, _, value in _l40s()
            if where.endswith("capacity:derivation:inputs:registers")]
    assert regs == [("nvidia-ada-tuning-guide", 65536)]
    # the datasheet record says where the figures went
    assert QUERY in _record(L40S)["note"]
