"""The llama.cpp lines the architecture table cites, and discussion #15396's runs, are checked against a stored copy
(cite68).

Found pinning the llama.cpp citations of :mod:`passprice.architectures`: gemma2's default window was cited to
``src/llama-model.cpp`` at a5410f046c by function; the stored copy of that file at that commit prints it on line 912
(``hparams.n_swa = 4096; // default value of gemma 2``), the optional read on line 916, and gemma3's and cohere2's
patterns (6 and 4) with their keys read required on lines 930/935 and 1014/1016: the periods, the default and the keys
passprice needs are those lines' (test_2). The module's comment quoted the optional read with its padding collapsed
(``get_key(LLM_KV_ATTENTION_SLIDING_WINDOW, hparams.n_swa, false)`` for ``…SLIDING_WINDOW,    hparams.n_swa,
false)``); it now quotes the line as printed.

Discussion #15396's 16 quoted spans (4 runs: title, block heading, device line, llama-bench row) were listed as
unchecked, "held only by third-party mirrors"; the reference search stores a copy of the page's text that holds all
of them. That copy is a rendering: inline code keeps its backticks (the heading prints ``for `gpt-oss-20b```, which
the page shows as code, without them) and a table's cells are separated by single spaces. So a heading is compared
with its backticks dropped, and a row quoted as cells joined by `` | `` (``'gpt-oss 20B MXFP4 MoE | 11.27 GiB | … |
tg128 | 161.77 ± 0.56'``) with its cells joined by spaces: the whole row, cell for cell under the table's header, its
n_ubatch the run's ``-ub`` and its t/s the run's tokens/s (test_3). The values all match; no locator changed.
"""

from __future__ import annotations

import re

import pytest

from cli_helpers import REPO
from passprice.architectures import GEMMA2_WINDOW_SOURCE, KNOWN, WINDOW_KEY
from passprice.glossary import TERMS
from passprice.measurements import Run, load_runs
from passprice.registry import Root

EXCERPT = REPO / "tests" / "data" / "cite68-excerpt.txt"
COMMIT = "a5410f046c01d01330c8a42f13b64a211fedf2c3"
DISCUSSION = "ggml-org-llama-cpp-discussion15396"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = re.compile(r"(?:(?<=^)|(?<=[\s(\[:;,]))'(.+?)'(?=$|[\s),;:\].])")


def _sections(text: str) -> dict[str, tuple[str, str, list[str]]]:
    # source -> (path, URL, lines); '#' lines before the first section are the header
    out: dict[str, tuple[str, str, list[str]]] = {}
    lines: list[str] | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            out[m.group(1)] = (m.group(2), m.group(3), lines)
        elif lines is not None:
            lines.append(line)
        else:
            assert line.startswith("# "), line
    return out


@pytest.fixture(scope="module")
def excerpt() -> dict[str, tuple[str, str, list[str]]]:
    return _sections(EXCERPT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def source(excerpt: dict[str, tuple[str, str, list[str]]]) -> dict[int, str]:
    # line number -> text of src/llama-model.cpp at COMMIT
    path, url, lines = excerpt["llama.cpp"]
    assert url == f"https://github.com/ggml-org/llama.cpp/blob/{COMMIT}/{path}" and path == "src/llama-model.cpp"
    numbered = dict(line.split("\t", 1) for line in lines)
    return {int(n): text for n, text in numbered.items()}


def test_1_the_gemma2_default_is_line_912_of_the_commit_cited(source: dict[int, str]) -> None:
    assert source[406] == "void llama_model::load_hparams(llama_model_loader & ml) {"
    assert source[912].strip() == "hparams.n_swa = 4096; // default value of gemma 2"
    assert source[916].strip() == "ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW,    hparams.n_swa, false);"
    # both inside LLM_ARCH_GEMMA2's case: no other case opens before gemma3's
    cases = [n for n, text in source.items() if text.strip().startswith("case LLM_ARCH_")]
    assert cases == [910, 928, 1012]
    assert "src/llama-model.cpp at a5410f046c" in GEMMA2_WINDOW_SOURCE and COMMIT.startswith("a5410f046c")
    for quoted in ("hparams.n_swa = 4096", '"default value of gemma 2"', "hparams.n_swa, false"):
        assert quoted.strip('"') in source[912] + source[916], quoted
    # what the README and the glossary quote, verbatim
    assert "`hparams.n_swa = 4096; // default value of gemma 2`" in (REPO / "README.md").read_text(encoding="utf-8")
    assert "`hparams.n_swa = 4096; // default value of gemma 2`" in TERMS["defaulted"].long
    # the module's comment quotes the optional read as printed (its padding was collapsed)
    module = (REPO / "src" / "passprice" / "architectures.py").read_text(encoding="utf-8")
    assert "``ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW,    hparams.n_swa, false)``" in module
    assert "``ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW, hparams.n_swa, false)``" not in module


def test_2_the_window_rules_are_those_lines(source: dict[int, str]) -> None:
    # case line -> (the pattern it sets, whether it reads the window key optional)
    read: dict[str, tuple[int, bool]] = {}
    for case, name in ((910, "gemma2"), (928, "gemma3"), (1012, "cohere2")):
        body = [source[n].strip() for n in sorted(source) if case < n < case + 8]
        pattern = next(int(t.split("= ")[1].rstrip(";")) for t in body if t.startswith("hparams.n_swa_pattern = "))
        key = next(t for t in body if t.startswith("ml.get_key(LLM_KV_ATTENTION_SLIDING_WINDOW,"))
        read[name] = (pattern, key.endswith(", false);"))
    assert read == {"gemma2": (2, True), "gemma3": (6, False), "cohere2": (4, False)}
    for name, (pattern, optional) in read.items():
        arch = KNOWN[name]
        assert arch.window_period == pattern, name
        assert (WINDOW_KEY not in arch.needs) is optional, name
        assert (arch.window_default == 4096) is optional and (arch.window_default is None) is not optional, name


@pytest.fixture(scope="module")
def runs() -> list[Run]:
    return [r for r in load_runs(Root(REPO)) if r.source_id == DISCUSSION]


def test_3_the_discussions_runs_quote_its_blocks(runs: list[Run],
                                                excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    path, url, lines = excerpt[DISCUSSION]
    assert path == "-" and url == "https://github.com/ggml-org/llama.cpp/discussions/15396"
    headings = [i for i, line in enumerate(lines) if line.startswith("🟢 Benchmarks on ")]
    ends = [*headings[1:], len(lines)]
    blocks = {lines[i][2:].replace("`", ""): lines[i + 1:j] for i, j in zip(headings, ends, strict=True)}
    spans = 0
    for r in runs:
        quoted = _QUOTED.findall(r.locator)
        title, heading, device, row = quoted
        assert f"# {title} #15396" == lines[0], r.id
        block = blocks[heading]  # the heading as the page shows it: inline code without its backticks
        assert f"Device 0: {device}" in block, r.id
        assert row.replace(" | ", " ") in block, r.id  # the whole row, its cells as the stored text separates them
        header = next(line for line in block if line.startswith("model size "))
        cells = dict(zip(header.split(), row.split(" | "), strict=True))  # 9 columns, each cell one of the row's
        assert cells["test"] == "tg128" and (r.batch, r.first, r.last) == (1, 0, 128), r.id
        assert r.test is not None and f"-ub {cells['n_ubatch']}" in r.test and f"-b {cells['n_batch']}" in r.test, r.id
        assert float(cells["t/s"].split(" ± ")[0]) == r.tokens_per_s, r.id
        assert f"build: {r.build}" in block and f"build {r.build}" in r.locator, r.id
        command = next(line for line in block if line.startswith("$ "))
        assert " -fa 1 " in command and " -b 4096 " in command and " -ub 2048,4096 " in command, r.id
        spans += len(quoted)
    assert (len(runs), spans) == (4, 16)
    assert sorted(r.tokens_per_s for r in runs) == [161.77, 161.95, 221.95, 225.22]
    # the gpt-oss-120b entry's origin quotes the guide's 120B rows: their first three cells
    origin = (REPO / "registry" / "checkpoints" / "gpt-oss-120b-mxfp4.toml").read_text(encoding="utf-8")
    assert "'gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B'" in origin
    big = blocks["Benchmarks on M2 Ultra (192 GB, 76 GPU cores) for gpt-oss-120b"]
    assert any(line.startswith("gpt-oss 120B MXFP4 MoE 59.02 GiB 116.83 B ") for line in big)
