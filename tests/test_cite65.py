"""Runs citing llama.cpp threads #4766, #6763, #6766, #15131, #15525, #16834, #17505, #20586 quote them (cite65).

Found by cite64's audit: run pr4766.rtx_4090.cl-7b-f16.tg128 quoted ``'llama 7B F16 | 12.55 GiB | ... | tg 128 |
61.03 ± 0.07'`` where the thread shows ``| llama 7B F16                   |  12.55 GiB |     6.74 B | CUDA       |  99
| tg 128     |     61.03 ± 0.07 |`` (the Q8_0 run likewise): 2 rows cut by an ellipsis. Checking the 11 runs of source
``ggml-org-llama-cpp``, the 19 of ``-pr15525``, the 6 of ``-pr16834`` and the 10 of ``-pr20586`` also found a title
cut short (PR #17505's ``'CUDA: generalized (mma) FA`` with no closing quote, so the locator's quotes paired wrongly;
issue #6763's title lacked its closing parenthesis, and a possessive such as ``issue's`` pairs quotes too), 14 runs
quoting a title, or a cell or two, but not the figure, and 29 (#15525, #20586) quoting a row with its padding
collapsed, ``'RTX 3090 | gpt-oss 20B MXFP4 MoE | 1 | pp512'`` for ``| RTX 3090       | gpt-oss 20B MXFP4 MoE   |
1 | pp512 |`` (15 spaces before the 1), so no search of the thread finds it. Each now quotes its title and the whole
row or sentence that prints its figure, and ``tests/data/llama-cpp-threads-excerpt.txt`` holds those lines of each
thread (with its URL) for the checks below, without the network. The 4 runs citing discussion #15396 are checked
by tests/test_cite68.py.
"""

from __future__ import annotations

import re

import pytest

from cli_helpers import REPO
from passprice.measurements import Run, load_runs
from passprice.registry import Root

SOURCES = ("ggml-org-llama-cpp", "ggml-org-llama-cpp-pr15525", "ggml-org-llama-cpp-pr16834",
           "ggml-org-llama-cpp-pr20586")
EXCERPT = REPO / "tests" / "data" / "llama-cpp-threads-excerpt.txt"
_QUOTED = re.compile(r"'([^']*)'")
_THREAD = re.compile(r"^ggml-org/llama\.cpp (PR|issue) #(\d+) \('")
_SECTION = re.compile(r"^== #(\d+) (https://github\.com/ggml-org/llama\.cpp/(pull|issues)/(\d+)) ==$")


def _sections(text: str) -> dict[int, tuple[str, list[str]]]:
    # thread number -> (URL, its lines: the title first); '#' lines before the first section are the header
    out: dict[int, tuple[str, list[str]]] = {}
    lines: list[str] | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            assert m.group(1) == m.group(4), line
            lines = []
            out[int(m.group(1))] = (m.group(2), lines)
        elif lines is not None:
            lines.append(line)
        else:
            assert line.startswith("# "), line
    return out


@pytest.fixture(scope="module")
def threads() -> dict[int, tuple[str, list[str]]]:
    return _sections(EXCERPT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return [r for r in load_runs(Root(REPO)) if r.source_id in SOURCES]


def _thread(locator: str) -> tuple[str, int]:
    m = _THREAD.match(locator)
    assert m, locator
    return m.group(1), int(m.group(2))


def test_1_every_quote_is_verbatim_in_its_thread(runs: list[Run],
                                                threads: dict[int, tuple[str, list[str]]]) -> None:
    assert len(runs) == 11 + 19 + 6 + 10
    spans = 0
    for r in runs:
        kind, number = _thread(r.locator)
        url, lines = threads[number]
        assert url.split("/")[-2] == {"PR": "pull", "issue": "issues"}[kind], r.id
        quoted = _QUOTED.findall(r.locator)
        assert len(quoted) == 2, r.id  # the title, then the line that prints the figure
        assert quoted[0] == lines[0], r.id  # the title, whole
        assert any(quoted[1] in line for line in lines[1:]), (r.id, quoted[1])
        assert "..." not in quoted[1] and "…" not in quoted[1], r.id
        assert r.locator.count("'") == 4, r.id  # no stray quote pairing the spans wrongly
        spans += len(quoted)
    assert spans == 92
    assert sorted({_thread(r.locator)[1] for r in runs}) == sorted(threads)
    assert sorted(threads) == [4766, 6763, 6766, 15131, 15525, 16834, 17505, 20586]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_2_each_quoted_row_prints_the_runs_figure(runs: list[Run]) -> None:
    by_id = {r.id: r for r in runs}
    got = {}
    for r in runs:
        quoted = _QUOTED.findall(r.locator)[1]
        if r.id.startswith("pr6763."):
            got[r.id] = re.findall(r"\*\*(\d+\.\d+)\*\*", quoted)  # master, then the CUDA-graphs branch
        elif r.id.startswith("pr4766."):
            got[r.id] = [_cells(quoted)[6].split(" ± ")[0]]  # llama-bench: t/s ± sd
        else:
            got[r.id] = [c for c in _cells(quoted) if re.fullmatch(r"\d+\.\d+", c)][:2]  # master, PR
        column = 1 if r.id.endswith("-graphs") or ".pr15525." in r.id else 0  # the PR figure, else master
        assert float(got[r.id][column]) == r.tokens_per_s, r.id
    assert got == {
        "pr4766.rtx_4090.cl-7b-f16.tg128": ["61.03"], "pr4766.rtx_4090.cl-7b-q8_0.tg128": ["98.13"],
        "pr6763.h100_pcie_80gb.l2-7b-q4km.n128": ["143.35", "163.83"],
        "pr6763.h100_pcie_80gb.l2-7b-q4km.n128-graphs": ["143.35", "163.83"],
        "pr6766.rtx_4090.l2-7b-q4_0.main": ["138.31", "146.81"],
        "pr15131.rtx_4090.l31-8b-bf16.ub1": ["65.21", "65.20"],
        "pr15131.rtx_4090.l31-8b-bf16.ub2": ["124.64", "124.32"],
        "pr15131.rtx_4090.l31-8b-bf16.ub4": ["245.00", "246.37"],
        "pr15131.rtx_4090.l31-8b-bf16.ub8": ["457.75", "485.16"],
        "pr15131.rtx_4090.l31-8b-q4_0.ub16": ["1891.88", "1930.50"],
        "pr17505.rtx_4090.l31-8b-q4_0.d32768": ["98.14", "102.76"],
        "pr16834.rtx_4090.gpt-oss-20b-mxfp4.tg128": ["186.10", "187.25"],
        "pr16834.rtx_4090.gpt-oss-20b-mxfp4.tg256": ["184.63", "187.19"],
        "pr16834.rtx_4090.gpt-oss-20b-mxfp4.tg512": ["183.95", "184.45"],
        "pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg128": ["161.55", "163.48"],
        "pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg256": ["162.39", "163.33"],
        "pr16834.rtx_4090.qwen3-30b-a3b-q4_0.tg512": ["159.14", "160.86"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub1": ["238.89", "237.49"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub2": ["283.62", "286.24"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub4": ["339.24", "337.89"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub8": ["507.06", "514.70"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub16": ["808.75", "815.90"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub32": ["1228.01", "1227.84"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub64": ["1671.74", "1663.09"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub128": ["2036.35", "2018.82"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub256": ["3086.19", "3047.10"],
        "pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub512": ["4739.20", "4702.81"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub1": ["180.89", "180.53"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub2": ["158.03", "180.94"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub4": ["241.87", "291.18"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub8": ["374.09", "475.54"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub16": ["499.68", "784.29"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub32": ["854.65", "1209.58"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub64": ["1268.85", "1802.95"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub128": ["2103.93", "2253.15"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub256": ["3280.19", "3628.64"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.master.ub512": ["4260.97"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub1": ["180.89", "180.53"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub2": ["158.03", "180.94"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub4": ["241.87", "291.18"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub8": ["374.09", "475.54"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub16": ["499.68", "784.29"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub32": ["854.65", "1209.58"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub64": ["1268.85", "1802.95"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub128": ["2103.93", "2253.15"],
        "pr15525.rtx_3090.deepseek-v2-lite-q4_0.pr15525.ub256": ["3280.19", "3628.64"]}
    # PR #15131's ubatch column is the run's -ub
    for ub in (1, 2, 4, 8, 16):
        rid = next(i for i in by_id if i.startswith("pr15131.") and i.endswith(f".ub{ub}"))
        assert _cells(_QUOTED.findall(by_id[rid].locator)[1])[3] == str(ub), rid
    # PR #15525's and #20586's ubatch columns likewise
    for rid in by_id:
        if rid.startswith("pr15525."):
            assert _cells(_QUOTED.findall(by_id[rid].locator)[1])[2] == rid.split(".ub")[1], rid
    for ub in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
        rid = f"pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub{ub}"
        assert _cells(_QUOTED.findall(by_id[rid].locator)[1])[2] == str(ub), rid
    assert by_id["pr4766.rtx_4090.cl-7b-f16.tg128"].locator.endswith(
        "row '| llama 7B F16                   |  12.55 GiB |     6.74 B | CUDA       |  99 | tg 128     |     61.03 ± "
        "0.07 |'")


def test_3_the_quotes_found_before_are_not_in_the_threads(threads: dict[int, tuple[str, list[str]]]) -> None:
    # what test_1 refuses: the locators' quotes before this change
    text = {n: "\n".join(lines) for n, (_, lines) in threads.items()}
    assert "llama 7B F16 | 12.55 GiB | ... | tg 128 | 61.03 ± 0.07" not in text[4766]
    assert "llama 7B Q8_0 | 6.67 GiB | ... | tg 128 | 98.13 ± 0.07" not in text[4766]
    assert "RTX 3090 | gpt-oss 20B MXFP4 MoE | 1 | pp512" not in text[20586]
    assert "| RTX 3090       | gpt-oss 20B MXFP4 MoE   |               1 | pp512 |" in text[20586]
    assert threads[17505][1][0] != "CUDA: generalized (mma) FA"  # the old title, cut at its comma
    assert _QUOTED.findall("ggml-org/llama.cpp PR #17505 ('CUDA: generalized (mma) FA: table row 'llama 8B Q4_0', "
                           "pp512@d32768") == ["CUDA: generalized (mma) FA: table row "]
