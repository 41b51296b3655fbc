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

The CDNA 3 white paper's 19 spans were listed as unchecked PDF quotes; a text copy of the PDF is stored
(bojieli/ai-infra-book), and two spans were not verbatim: 'Communication and scaling' (the heading prints in capitals)
and a host link 'x16 PCIe Gen 5 link' (the paper: 'PCIe®'); both now quote it, and the 18 figures its derivation
inputs and memory facts read are the paper's (test_4). The architecture table's graph builders and the tensor-count
check TensorNotInArchitecture cites are in src/llama-model.cpp at a5410f046c (test_5), unnumbered: past character
224,000 the stored file's lines were not counted.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from cli_helpers import REPO
from passprice.architectures import GEMMA2_WINDOW_SOURCE, KNOWN, WINDOW_KEY
from passprice.glossary import TERMS
from passprice.measurements import Run, load_runs
from passprice.registry import Root
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite68-excerpt.txt"
COMMIT = "a5410f046c01d01330c8a42f13b64a211fedf2c3"
DISCUSSION = "ggml-org-llama-cpp-discussion15396"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


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


def _facts_citing(source: str) -> list[tuple[str, str, object]]:
    # (file:path, locator, value) of every fact and derivation input citing ``source`` (an input without its own
    # source cites its fact's)
    out: list[tuple[str, str, object]] = []

    def walk(table: object, where: str, cited: str | None) -> None:
        if isinstance(table, dict):
            own = table.get("source")
            cited = own if isinstance(own, str) else cited
            if isinstance(table.get("locator"), str) and cited == source:
                out.append((where, table["locator"], table.get("value")))
            for key, value in table.items():
                walk(value, f"{where}:{key}", cited)

    for path in sorted((REPO / "facts").rglob("*.toml")):
        with path.open("rb") as f:
            walk(tomllib.load(f), path.stem, None)
    return out


def test_4_the_cdna3_quotes_and_figures_are_the_white_papers(
        excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    # The CDNA 3 white paper's 19 spans are in a text copy of its PDF, read with its line wraps joined: two were not
    # verbatim, the section heading quoted 'Communication and scaling' (the paper prints 'COMMUNICATION AND SCALING')
    # and 'a x16 PCIe Gen 5 link' (the paper: 'PCIe®'); they now quote it. Each derivation input's figure is the
    # paper's too.
    path, url, lines = excerpt["amd-cdna3-whitepaper"]
    assert url == ("https://github.com/bojieli/ai-infra-book/blob/8653dd660d1e3f2de17ba0015731ad8677a83567/"
                   f"{path}")
    text = " ".join(" ".join(lines).split())  # the PDF's line wraps and layout spaces as one space
    cited = _facts_citing("amd-cdna3-whitepaper")
    spans = [q for _, locator, _ in cited for q in _QUOTED.findall(locator)]
    # 19, and the 5 the MI300X on-chip capacity's locator quotes since tests/test_walk108.py
    assert len(spans) == 24 and [q for q in spans if " ".join(q.split()) not in text] == []
    assert "Communication and scaling" not in text and "x16 PCIe Gen 5 link" not in text  # the quotes before
    # each figure a derivation input reads, as the paper prints it
    printed = {"cus": "304 compute units (CUs)", "lanes": "19,456 stream cores", "clock": "2,100 MHz peak boost",
               "l2": "share a 4MB L2 cache", "xcds": "incorporates 8 accelerator complex dies", "lds": "remain at 64KB",
               "infinity": "256MB of data", "fp32": "Vector FP32 256 128 163.4",
               "capacity": "192 GB HBM3 memory capacity", "bandwidth": "5.3 TB/s peak theoretical memory bandwidth"}
    dense = {"array": "Matrix INT8 4096 1024 2614.9", "f16": "Matrix FP16 2048 1024 1307.4",
             "bf16": "Matrix BF16 2048 1024 1307.4", "f8": "Matrix FP8 4096 N/A 2614.9"}
    checked = set()
    for where, _, value in cited:
        keys = where.split(":")  # card, key..., [derivation, inputs, NAME]
        name = keys[-1]
        if name == "dense":
            row = dense[keys[2] if keys[1] == "tensor" else keys[1]]
        elif name == "lanes" and keys[1] == "host":
            row = "x16 PCIe® Gen 5 link"
        elif name in printed and (name not in ("capacity", "bandwidth") or keys[1] == "memory"):
            row = printed[name]
        else:
            continue  # a fact whose figure its inputs give (on-chip capacity, bandwidth, array, vector, scale)
        shown = f"{value:,g}" if isinstance(value, int) else f"{value:g}"
        assert row in text and shown.replace(",", "") in row.replace(",", ""), (where, value)
        checked.add(where)
    # the 16 derivation inputs and the two memory figures
    assert len(checked) == 18 and sum(":inputs:" in w for w in checked) == 16


def test_5_the_graph_builders_and_the_tensor_count_check_are_in_the_commit(
        excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    # KNOWN cites each architecture's rules to llama.cpp's graph builder by name (``llama.cpp llm_build_qwen2``); five
    # of the seven are structs of src/llama-model.cpp at a5410f046c, in its order; qwen3next and qwen35 came later,
    # and no stored copy holds them. TensorNotInArchitecture rests on load_tensors creating each architecture's
    # tensors by name (an architecture it does not list is refused) and then calling done_getting_tensors.
    path, url, lines = excerpt["llama.cpp-text"]
    assert (path, url) == excerpt["llama.cpp"][:2]
    builders = [line.split()[1] for line in lines if line.startswith("struct llm_build_")]
    assert builders == ["llm_build_llama", "llm_build_qwen2", "llm_build_qwen3", "llm_build_qwen3moe",
                        "llm_build_deepseek2"]
    cited = {name: arch.source.split("llama.cpp ")[1].split(";")[0] for name, arch in KNOWN.items()
             if arch.source.startswith("llama.cpp llm_build_")}
    assert sorted(cited) == ["deepseek2", "llama", "qwen2", "qwen3", "qwen35", "qwen3moe", "qwen3next"]
    assert sorted(b for b in cited.values() if b in builders) == sorted(builders)
    assert sorted(n for n, b in cited.items() if b not in builders) == ["qwen35", "qwen3next"]
    assert [line.strip() for line in lines[:3]] == ["default:", 'throw std::runtime_error("unknown architecture");',
                                                    "ml.done_getting_tensors();"]
