"""The files, pull requests and pages cited beyond XiongjieDai's notebooks and llama.cpp's threads quote them (cite66).

Found checking every locator of the 7 sources whose text is on GitHub against that text (each file at the commit its
source record names): LMDeploy's 17 runs quoted their table row with the padding collapsed and four of its 13
columns cut, ``'1 | 1 | 1 | 128 | 100.02 | 76.55 | 0.011 | 0.01 | 0.011'`` for ``| 1     | 1   | 1             |
128           | 100.02                | 76.55   | 0.011       | ...``, so no search of the document found them (as
cite64 found of XiongjieDai's rows); InferenceX PR #1061's 4 runs and the mantile CSV's 8 named their row's cells
without quoting it (``row Concurrency 64 (current): Output TPS 2,008, ...``, ``row b200,vllm,fp4,1024,1024,1.0,1.0,4:``
the first 8 of its 17 fields), and the B200's on-chip capacity paraphrased the device query of pytorch/ao PR #4002
(``Number of SMs 148`` for ``Number of SMs: 148``). Each now quotes the line as printed, and
``sources/excerpts/github-sources-excerpt.txt`` holds those lines (with each file's address and commit) for the checks
below, without the network. The Azure AI-benchmarking-guide's BabelStream and nvbandwidth results (and its fork's MI300X
file) are cited by table and row name, quoting nothing: test_4 checks each figure they name against the row. Two web
pages the reference search stores are checked likewise: grafikkarten.com's sentence opens 'Mit Geschwindigkeiten von 20
Gbps' (the RTX 6000 Ada's pin rate was quoted with a lower-case 'mit'), and the SN40L DAC abstract's quote is verbatim.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from cli_helpers import REPO
from passprice.measurements import Run, load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "github-sources-excerpt.txt"
FILES = ("lmdeploy-a100-fp16-benchmark", "azure-ai-benchmarking-guide", "ai-benchmarking-guide-fork-samuel-bohman",
         "mantile-inferencemax-gpt-oss-120b", "xytpai-nvbench")  # a file at the source record's commit
THREADS = ("pytorch-ao-pr-4002", "semianalysis-inferencex-pr1061")  # a pull request's text
PAGES = ("grafikkarten-rtx-6000-ada", "sambanova-sn40l-dac-2025", "azure-hpc-blog-gb200")  # a web page's text
SOURCES = FILES + THREADS + PAGES
# a quoted span: opened after a space, bracket or punctuation (so "the card's" opens none), closed before one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a BabelStream/nvbandwidth/TransferBench row a locator names, with the figure it gives (if it gives one)
_ROW = re.compile(r"\b(Copy|Mul|Add|Triad|Dot|Host to Device|Device to Host)(?: (\d+(?:\.\d+)?) (TB/s|GB/s))?")


def _sections(text: str) -> dict[tuple[str, str], tuple[str, list[str]]]:
    # (source, path or '-') -> (URL, lines); '#' lines before the first section are the header
    out: dict[tuple[str, str], tuple[str, list[str]]] = {}
    lines: list[str] | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            out[m.group(1), m.group(2)] = (m.group(3), lines)
        elif lines is not None:
            lines.append(line)
        else:
            assert line.startswith("# "), line
    return out


@pytest.fixture(scope="module")
def excerpt() -> dict[tuple[str, str], tuple[str, list[str]]]:
    return _sections(EXCERPT.read_text(encoding="utf-8"))


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
    elif isinstance(table, list):
        for i, value in enumerate(table):
            yield from _cited(value, f"{where}.{i}", source)


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return [r for r in load_runs(Root(REPO)) if r.source_id in SOURCES]


@pytest.fixture(scope="module")
def citing(runs: list[Run]) -> list[tuple[str, str, str, Any]]:
    # (source, run id or file:fact path, locator, value) of every run and fact citing one of SOURCES
    out: list[tuple[str, str, str, Any]] = [(r.source_id, r.id, r.locator, r.tokens_per_s) for r in runs]
    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            out += [c for c in _cited(tomllib.load(f), str(path.relative_to(REPO)), None) if c[0] in SOURCES]
    return out


def _text(excerpt: dict[tuple[str, str], tuple[str, list[str]]], source: str, locator: str) -> list[str]:
    # the excerpt's lines of the file the locator names (its first path of the source's), or of the thread
    paths = [p for (s, p) in excerpt if s == source]
    if paths == ["-"]:
        return excerpt[source, "-"][1]
    named = sorted((locator.find(p), p) for p in paths if p in locator)
    assert named, (source, locator)
    return excerpt[source, named[0][1]][1]


def test_1_each_excerpt_is_of_its_source_records_commit(excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    assert sorted({s for s, _ in excerpt}) == sorted(SOURCES)
    for (source, path), (url, _) in excerpt.items():
        with (REPO / "sources" / f"{source}.toml").open("rb") as f:
            record = tomllib.load(f)["source"]
        if source in THREADS + PAGES:
            assert path == "-" and url == record["url"], source
        else:
            repo = "/".join(url.split("/")[3:5])
            assert url == f"https://github.com/{repo}/blob/{record['commit']}/{path}", source
            assert record["url"].startswith(f"https://github.com/{repo}"), source
            assert re.fullmatch(r"[0-9a-f]{40}", record["commit"]), source


def _named(excerpt: dict[tuple[str, str], tuple[str, list[str]]], source: str, locator: str) -> list[str]:
    # the excerpt's lines of every file of the source the locator names (a ratio over two Azure files quotes a row
    # of each: cite67), or of the thread
    paths = [p for (s, p) in excerpt if s == source and p != "-" and p in locator]
    return [line for p in paths for line in excerpt[source, p][1]] if paths else _text(excerpt, source, locator)


def test_2_every_quote_citing_them_is_verbatim_in_its_file(
        citing: list[tuple[str, str, str, Any]], excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    spans: dict[str, int] = {}
    missing = []
    for source, who, locator, _ in citing:
        text = "\n".join(_named(excerpt, source, locator))
        for q in _QUOTED.findall(locator):
            spans[source] = spans.get(source, 0) + 1
            if q not in text:
                missing.append((who, q))
        assert "..." not in locator and "…" not in locator, who
    assert missing == []
    assert spans == {"lmdeploy-a100-fp16-benchmark": 17, "mantile-inferencemax-gpt-oss-120b": 8, "xytpai-nvbench": 32,
                     "pytorch-ao-pr-4002": 12, "semianalysis-inferencex-pr1061": 12, "grafikkarten-rtx-6000-ada": 3,
                     "sambanova-sn40l-dac-2025": 1, "azure-hpc-blog-gb200": 2, "azure-ai-benchmarking-guide": 63,
                     "ai-benchmarking-guide-fork-samuel-bohman": 12}
    assert len(citing) == 18 + 57 + 9 + 8 + 32 + 8 + 4 + 3 + 1 + 2


def _cells(row: str, sep: str = "|") -> list[str]:
    return [c.strip() for c in row.strip().strip(sep).split(sep)]


def test_3_each_run_quotes_the_whole_row_that_prints_its_figure(
        runs: list[Run], excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    got: dict[str, int] = {}
    for r in runs:
        quoted = _QUOTED.findall(r.locator)
        row = quoted[-1]
        assert row in _text(excerpt, r.source_id, r.locator), r.id  # a whole line, not a part of one
        if r.source_id == "lmdeploy-a100-fp16-benchmark":
            # batch | tp | prompt_tokens | output_tokens | throughput(out tok/s) | ...
            batch, tp, prompt, output, tps = _cells(row)[:5]
            assert (int(batch), int(tp), float(tps)) == (r.batch, 1, r.tokens_per_s), r.id
            assert (r.first, r.last) == (int(prompt), int(prompt) + int(output)), r.id
            assert len(_cells(row)) == 13, r.id
        elif r.source_id == "semianalysis-inferencex-pr1061":
            concurrency, output_tps = _cells(row)[:2]
            assert (int(concurrency.split()[0]), float(output_tps.replace(",", ""))) == (r.batch, r.tokens_per_s), r.id
            assert quoted[:2] == ["[AMD][MI300X] Expand GPT-OSS FP4 TP=1 concurrency from 64 to 256",
                                  "Results (single MI300X, vllm v0.17.0, ISL/OSL=1024)"], r.id
        else:
            fields = row.split(",")  # gpu_model, ..., concurrency (8th), ..., output_throughput_per_gpu (10th)
            assert len(fields) == 17 and int(fields[7]) == r.batch, r.id
            assert round(float(fields[9]), 2) == round(r.tokens_per_s, 2), r.id
            assert r.card.startswith(fields[0]) and r.first == int(fields[3]), r.id  # input_seq_len
        got[r.source_id] = got.get(r.source_id, 0) + 1
    assert got == {"lmdeploy-a100-fp16-benchmark": 17, "semianalysis-inferencex-pr1061": 4,
                   "mantile-inferencemax-gpt-oss-120b": 8}
    first = next(r for r in runs if r.id == "lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128")
    assert ("llama2-7b table, row '| 1     | 1   | 1             | 128           | 100.02                | 76.55   | "
            "0.011       | 0.01        | 0.011       | 0.009  | 0.009  | 0.01   | 0.011  |'") in first.locator


def test_4_the_azure_locators_quote_the_rows_they_name(citing: list[tuple[str, str, str, Any]],
                                                      excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    # The Azure guide's and its fork's locators named a BabelStream, nvbandwidth or TransferBench row and quoted
    # nothing (``HBM Bandwidth table (BabelStream): Dot 3.18 TB/s``); each now quotes the row as the file prints it
    # (``row '| Dot   | 3.18              |' in TB/s``: cite67), test_2 finds it there, and no row is named outside a
    # quote but the ratios' (``Hopper Mul/Dot ratios``, whose inputs quote their rows). A derivation input's value is
    # its row's figure.
    checked = {"quoting": 0, "inputs": 0, "ratios": 0}
    for source, who, locator, value in citing:
        if source not in ("azure-ai-benchmarking-guide", "ai-benchmarking-guide-fork-samuel-bohman"):
            continue
        rows = [q for q in _QUOTED.findall(locator) if q.startswith("| ")]
        if " ratios" in locator:
            assert rows == [] and who.endswith(("streams:rewrite", "streams:append")), who
            checked["ratios"] += 1
            continue
        assert rows and _ROW.findall(_QUOTED.sub("", locator)) == [], (who, locator)
        assert all(re.search(r"' in (TB|GB)/s\b|, in GB/s: ", locator) for _ in rows), who
        checked["quoting"] += 1
        if ":derivation:inputs:" in who:
            assert len(rows) == 1 and float(_cells(rows[0])[1]) == value, (who, value)
            checked["inputs"] += 1
    assert checked == {"quoting": 62, "inputs": 39, "ratios": 4}


def test_5_the_quotes_found_before_are_not_in_the_files(excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    # what test_2 refuses: the locators' text before this change
    lmdeploy = "\n".join(excerpt["lmdeploy-a100-fp16-benchmark", "docs/en/benchmark/a100_fp16.md"][1])
    assert "1 | 1 | 1 | 128 | 100.02 | 76.55 | 0.011 | 0.01 | 0.011" not in lmdeploy
    assert "| 1     | 1   | 1             | 128           | 100.02                |" in lmdeploy
    ao = "\n".join(excerpt["pytorch-ao-pr-4002", "-"][1])
    assert "Number of SMs 148" not in ao and "Number of SMs: 148" in ao
    assert _QUOTED.findall("over the A100 SXM4's 2,039 GB/s peak, 'Number of SMs: 148'") == ["Number of SMs: 148"]
    page = "\n".join(excerpt["grafikkarten-rtx-6000-ada", "-"][1])  # the sentence opens with a capital
    assert "mit Geschwindigkeiten von 20 Gbps" not in page and "Mit Geschwindigkeiten von 20 Gbps" in page


def test_6_the_nvbench_figure_named_is_the_rtx_4090s(citing: list[tuple[str, str, str, Any]],
                                                     excerpt: dict[tuple[str, str], tuple[str, list[str]]]) -> None:
    # xytpai/nvbench's 32 locators quote the table's heading and name the cell: 'float 4' row, RTX4090 column
    header, row = excerpt["xytpai-nvbench", "README.md"][1][1:]
    cell = dict(zip(_cells(header), _cells(row), strict=True))
    assert (cell["test/card(GBPS)"], cell["RTX4090"]) == ("float 4", "921.850")
    values = set()
    for source, who, locator, value in citing:
        if source == "xytpai-nvbench":
            assert "RTX4090 column: float 4 921.850" in locator, who
            if ":derivation:inputs:" in who:
                values.add(value)
    assert values == {921.85}
