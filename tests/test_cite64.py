"""Every locator citing XiongjieDai/GPU-Benchmarks-on-LLM-Inference quotes its source verbatim (session 35, cite64).

Found by use45: of the 111 llama-bench runs citing the notebooks at commit aa72e0e, 99 locators quoted their row
as ``'llama 8B Q4_K - Medium | 4.58 GiB | tg512 | 130.58 ± 0.66'`` where the notebook printed
``| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 | tg 512     |    130.58 ± 0.66 |``
(builds b2824-b2842 print ``tg 512``, the H100 PCIe's b2843 ``tg512``; three columns were left out and the padding
collapsed), so searching the source for the locator's text found nothing; 4 cards' nvidia-smi quotes
(``'1MiB / 10240MiB'`` for ``1MiB /  10240MiB``) likewise. Each locator now quotes the line as printed, whitespace
included, and ``sources/excerpts/xiongjiedai-aa72e0e-excerpt.txt`` holds those lines of the source (one section a
notebook) for the checks below, without the network.

cite65: the four LLaMA 2 ``./main`` runs whose locators listed their figures (``83.19, 83.36, 83.40 tokens per
second``) and quoted no line now quote the three ``llama_print_timings:        eval time = ...`` lines the notebook
printed, the third being the run's figure; no locator citing the source is left without a quote.
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

SOURCE = "xiongjiedai-gpu-benchmarks"
EXCERPT = REPO / "sources" / "excerpts" / "xiongjiedai-aa72e0e-excerpt.txt"
# a locator's quoted text: each span between single quotes
_QUOTED = re.compile(r"'([^']*)'")
# the four runs whose locators listed the figures of three ./main runs and quoted no line before cite65, and the
# H100's Q4_0 run, whose quote 'eval time' matched the prompt-eval line before the lead's fix (session 35)
MAIN_RUNS = ["xd2.h100_pcie_80gb.l2-7b-q4_0.main", "xd2.h100_pcie_80gb.l2-7b-f16.main",
             "xd2.a100_pcie_80gb.l2-7b-q4_0.main", "xd2.a100_pcie_80gb.l2-7b-f16.main", "xd2.rtx_4090.l2-7b-q4_0.main"]


def _sections(text: str) -> dict[str, list[str]]:
    # the excerpt's lines, by the notebook ('== PATH ==') they come from; '#' lines are its header
    out: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("== ") and line.endswith(" =="):
            lines = out.setdefault(line[3:-3], [])
        elif not line.startswith("#"):
            lines.append(line)
    return out


@pytest.fixture(scope="module")
def excerpt() -> dict[str, list[str]]:
    return _sections(EXCERPT.read_text(encoding="utf-8"))


def _facts(table: Any, where: str) -> Iterator[tuple[str, str]]:
    # (where, locator) of each table citing SOURCE below ``table``
    if isinstance(table, dict):
        if table.get("source") == SOURCE and isinstance(table.get("locator"), str):
            yield where, table["locator"]
        for key, value in table.items():
            yield from _facts(value, f"{where}:{key}")
    elif isinstance(table, list):
        for i, value in enumerate(table):
            yield from _facts(value, f"{where}.{i}")


@pytest.fixture(scope="module")
def citing() -> list[tuple[str, str]]:
    # (run id or file:fact path, locator) of every run and fact citing SOURCE
    out = [(r.id, r.locator) for r in load_runs(Root(REPO)) if r.source_id == SOURCE]
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            out += _facts(tomllib.load(f), str(path.relative_to(REPO)))
    return out


def _notebook(locator: str) -> str:
    return locator[:locator.index(".ipynb") + len(".ipynb")]


def test_1_the_excerpt_is_of_the_source_records_commit() -> None:
    with (REPO / "sources" / f"{SOURCE}.toml").open("rb") as f:
        commit = tomllib.load(f)["source"]["commit"]
    head = [line for line in EXCERPT.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert commit == "aa72e0ec86c356c41f8281c9733e9a13c3675800"
    assert f"at commit {commit}," in head[0]
    assert head[1] == f"# https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference/tree/{commit}"


def test_2_each_llama_bench_run_quotes_its_row_as_printed(excerpt: dict[str, list[str]]) -> None:
    runs = [r for r in load_runs(Root(REPO), "llamacpp-cuda-2405")]
    assert len(runs) == 111
    rows = []
    for r in runs:
        quoted = _QUOTED.findall(r.locator)
        assert len(quoted) == 1, r.locator
        row = quoted[0]
        assert row in excerpt[_notebook(r.locator)], (r.id, row)  # a whole line of its own notebook
        cells = [c.strip() for c in row.strip("|").split("|")]  # model, size, params, backend, ngl, test, t/s
        assert (cells[5].replace(" ", ""), cells[6].split(" ± ")[0]) == (r.test, f"{r.tokens_per_s:.2f}"), r.id
        rows.append(row)
    assert len(set(rows)) == 111  # no two runs quote one row
    # the first run's, as GitHub shows it: the H100 PCIe's build printed 'tg512', the others 'tg 512'
    assert runs[0].locator == (
        "LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb: llama-bench table, row '| llama 8B Q4_K - Medium         |   "
        "4.58 GiB |     8.03 B | CUDA       |  99 |         tg512 |    145.55 ± 0.80 |'")
    rtx_4090 = next(r for r in runs if r.id == "xd3.rtx_4090.8b-q4km.tg512")
    assert "|  99 | tg 512     |    130.58 ± 0.66 |'" in rtx_4090.locator


def test_3_every_quote_citing_the_source_is_verbatim_in_it(citing: list[tuple[str, str]],
                                                          excerpt: dict[str, list[str]]) -> None:
    text = {path: "\n".join(lines) for path, lines in excerpt.items()}
    missing = [(who, q) for who, locator in citing for q in _QUOTED.findall(locator)
               if q not in text.get(_notebook(locator), "")]
    assert missing == []
    # 111 llama-bench runs, 5 ./main runs, 11 cards' memory.capacity, the stack's memory.reserved
    assert len(citing) == 128
    # one row a llama-bench run; 3 eval-time lines for each of the 5 ./main runs (the H100 Q4_0 run quoted 'eval time'
    # alone, which matched the prompt-eval line, before the lead's fix in session 35); ...
    # ... and the stack's memory.reserved 4 (3 before left60: the 70B model's compute buffer, 148.19 MiB, unquoted)
    assert sum(len(_QUOTED.findall(locator)) for _, locator in citing) == 111 + 5 * 3 + 11 + 4
    assert [who for who, locator in citing if not _QUOTED.findall(locator)] == []  # 4 before cite65


def test_3b_each_main_run_quotes_its_three_eval_time_lines(excerpt: dict[str, list[str]]) -> None:
    runs = {r.id: r for r in load_runs(Root(REPO), "llamacpp-cuda-2312")}
    figures = {}
    for rid in MAIN_RUNS:
        quoted = _QUOTED.findall(runs[rid].locator)
        assert len(quoted) == 3, rid
        for line in quoted:
            assert line in excerpt[_notebook(runs[rid].locator)], (rid, line)  # a whole line of its notebook
            assert line.startswith("llama_print_timings:        eval time = ") and "/  1023 runs" in line, line
        figures[rid] = [float(line.split(",")[-1].split()[0]) for line in quoted]
        assert runs[rid].tokens_per_s == figures[rid][2], rid  # the third run's figure is kept
    assert figures == {"xd2.h100_pcie_80gb.l2-7b-q4_0.main": [131.44, 134.81, 135.07],
                       "xd2.h100_pcie_80gb.l2-7b-f16.main": [83.19, 83.36, 83.40],
                       "xd2.a100_pcie_80gb.l2-7b-q4_0.main": [136.09, 136.17, 136.47],
                       "xd2.a100_pcie_80gb.l2-7b-f16.main": [73.86, 73.79, 73.84],
                       "xd2.rtx_4090.l2-7b-q4_0.main": [150.09, 148.67, 149.35]}
    # the H100's F16 run, as the notebook's cell 24 printed it (12.0 ms/token, as the old locator said)
    assert runs["xd2.h100_pcie_80gb.l2-7b-f16.main"].locator.endswith(
        "'llama_print_timings:        eval time =   12265.64 ms /  1023 runs   (   11.99 ms per token,    83.40 tokens "
        "per second)' (the third kept)")


def test_4_the_paraphrases_found_before_are_not_in_the_source(excerpt: dict[str, list[str]]) -> None:
    # what the check above refuses: the locators' text before this change
    h100 = "\n".join(excerpt["LLaMA 3/Professional GPUs/H100_PCIe_v3.ipynb"])
    rtx_4090 = "\n".join(excerpt["LLaMA 3/Gaming GPUs/4090_v3.ipynb"])
    rtx_3080 = "\n".join(excerpt["LLaMA 3/Gaming GPUs/3080_v3.ipynb"])
    assert "llama 8B Q4_K - Medium | 4.58 GiB | tg512 | 145.55 ± 0.80" not in h100
    assert "llama 8B Q4_K - Medium | 4.58 GiB | tg512 | 130.58 ± 0.66" not in rtx_4090
    assert "1MiB / 10240MiB" not in rtx_3080
    assert "1MiB /  10240MiB" in rtx_3080


def test_5_each_excerpt_line_is_quoted_or_a_table_heading(citing: list[tuple[str, str]],
                                                          excerpt: dict[str, list[str]]) -> None:
    # minimal: nothing in the excerpt that no locator quotes, bar the llama-bench tables' two heading rows
    quoted = {(_notebook(locator), q) for _, locator in citing for q in _QUOTED.findall(locator)}
    extra = {line for path, lines in excerpt.items() for line in lines
             if not any(p == path and q in line for p, q in quoted)}
    assert sorted({line[:9] for line in extra}) == ["| -------", "| model  "]  # b2843's test column is wider
    assert len(extra) == 4
