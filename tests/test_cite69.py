"""The llama.cpp lines passprice's comments cited by function name only, and the DeepSeek-V3 paper's sentence the MTP
drafting method quotes, are checked against a stored copy pinned to a commit (cite69).

Found pinning the citations: TensorNotInArchitecture rested on ``llama_model_loader::done_getting_tensors`` cited by
name, since the reference search holds src/llama-model-loader.cpp at one commit (3074b500a5) that could not be tied to
ggml-org/llama.cpp (cite68). A git snapshot of the repository (fetched under its former name, ggerganov/llama.cpp)
holds master at c392e5094d: the check is lines 809-811 of that file, ``n_tensors`` the file's tensor count (line
573) and ``n_created`` counted by each ``create_tensor`` (774, 804), and ``load_tensors`` calls it after its
per-architecture switch (src/llama-model.cpp 1268, 3420, 3430) (test_1). Mixtral's expert widths (serving.py) and the
split keys' types (gguf_header.py) were cited to llama.cpp without a commit; both are lines of the same commit
(test_2, test_3), and what passprice does is what those lines say.

The DeepSeek-V3 sentence was held only by third-party copies (cite68); DeepSeek's release commit of
deepseek-ai/DeepSeek-V3, 4c2fdb8f55, ships the paper's PDF, whose page 35 prints it verbatim across two of its lines,
and the weight notes of that commit say the released weights hold one MTP module, the one draft the method allows
(test_4). No value changed.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from cli_helpers import REPO
from passprice.gguf_header import _SPLIT_TYPES
from passprice.sources import QUOTED_SPAN

EXCERPT = REPO / "sources" / "excerpts" / "cite69-excerpt.txt"
LLAMA = "c392e5094deaf2d1a7c18683214f007fad3fe42b"
DEEPSEEK = "4c2fdb8f55e049553b9f4f1a3241f86d739c8cf8"
_SECTION = re.compile(r"^== (\S+) (\S+) (https://\S+) ==$")
# a quoted span, as tests/test_cite66.py reads one
_QUOTED = QUOTED_SPAN  # the one pattern audit's quote check reads a span with


@pytest.fixture(scope="module")
def excerpt() -> dict[str, tuple[str, str, list[str]]]:
    # source -> (path, URL, lines); '#' lines before the first section are the header
    out: dict[str, tuple[str, str, list[str]]] = {}
    lines: list[str] | None = None
    for line in EXCERPT.read_text(encoding="utf-8").splitlines():
        m = _SECTION.match(line)
        if m:
            lines = []
            out[m.group(1)] = (m.group(2), m.group(3), lines)
        elif lines is not None:
            lines.append(line)
        else:
            assert line.startswith("# "), line
    return out


def _numbered(excerpt: dict[str, tuple[str, str, list[str]]], name: str, repo: str, commit: str) -> dict[int, str]:
    # line number -> text of one file of ``repo`` at ``commit``, its URL checked
    path, url, lines = excerpt[name]
    assert url == f"https://github.com/{repo}/blob/{commit}/{path}", name
    numbered = [line.split("\t", 1) for line in lines]
    return {int(n): text for n, text in numbered}


def _module(name: str) -> str:
    return (REPO / "src" / "passprice" / f"{name}.py").read_text(encoding="utf-8")


def test_1_the_tensor_count_check_is_lines_809_to_811(excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    loader = _numbered(excerpt, "llama.cpp-loader", "ggml-org/llama.cpp", LLAMA)
    header = _numbered(excerpt, "llama.cpp-loader-h", "ggml-org/llama.cpp", LLAMA)
    model = _numbered(excerpt, "llama.cpp-model", "ggml-org/llama.cpp", LLAMA)
    assert loader[809] == "void llama_model_loader::done_getting_tensors() const {"
    assert loader[810].strip() == "if (n_created != n_tensors) {"
    assert 'format("%s: wrong number of tensors; expected %d, got %d", __func__, n_tensors, n_created)' in loader[811]
    assert loader[811].strip().startswith("throw std::runtime_error(")
    # n_tensors counts the file's tensors; n_created each tensor the architecture's list creates
    assert loader[573].strip() == "n_tensors = weights_map.size();"
    assert loader[774].strip() == loader[804].strip() == "n_created++;"
    assert (header[65].strip(), header[66].strip()) == ("int n_tensors = 0;", "int n_created = 0;")
    assert header[147].strip() == "void done_getting_tensors() const;"
    # load_tensors: the switch's default refuses an unknown architecture, then the count is checked
    assert model[1268] == "bool llama_model::load_tensors(llama_model_loader & ml) {"
    assert model[3419].strip() == "default:"
    assert model[3420].strip() == 'throw std::runtime_error("unknown architecture");'
    assert model[3430].strip() == "ml.done_getting_tensors();"
    # what architectures.py and DESIGN.md quote is those lines', at that commit
    comment = " ".join(line.lstrip("#: ") for line in _module("architectures").splitlines() if line.startswith("#:"))
    assert "src/llama-model-loader.cpp at c392e5094d, lines 809-811" in comment and LLAMA.startswith("c392e5094d")
    for quoted in re.findall(r"``([^`]+)``", comment[comment.index("(``llama_model_loader::"):][:800]):
        if "(" in quoted or "%" in quoted:
            assert quoted in "\n".join(loader.values()) + "\n".join(model.values()), quoted
    design = " ".join((REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8").split())
    assert "`src/llama-model-loader.cpp` at c392e5094d, lines 809-811" in design
    assert '`"%s: wrong number of tensors; expected %d, got %d"`' in design


def test_2_mixtrals_expert_width_is_feed_forward_length(excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    # serving.py sizes a Mixtral (arch llama) header's experts feed_forward_length wide, as llama.cpp creates them
    model = _numbered(excerpt, "llama.cpp-model", "ggml-org/llama.cpp", LLAMA)
    assert model[388] == "void llama_model::load_hparams(llama_model_loader & ml) {"
    assert "LLM_KV_FEED_FORWARD_LENGTH,  hparams.n_ff_arr," in model[439]
    assert model[1384].split() == ["const", "int64_t", "n_ff", "=", "hparams.n_ff();"]
    assert model[1500].strip() == "switch (arch) {" and model[1501].strip() == "case LLM_ARCH_LLAMA:"
    # no other case opens between the llama case and the expert tensors (the excerpt holds every case line between)
    assert not [n for n, text in model.items() if 1501 < n < 1555 and "case LLM_ARCH_" in text]
    shapes = {re.search(r"layer\.(\w+)", model[n]).group(1): re.search(r"\{([^}]*)\}", model[n]).group(1).split(",")
              for n in (1555, 1556, 1557)}  # type: ignore[union-attr]
    assert {k: [d.strip() for d in v] for k, v in shapes.items()} == {
        "ffn_gate_exps": ["n_embd", "n_ff", "n_expert"], "ffn_down_exps": ["n_ff", "n_embd", "n_expert"],
        "ffn_up_exps": ["n_embd", "n_ff", "n_expert"]}
    serving = " ".join(_module("serving").split())
    assert "(src/llama-model.cpp at c392e5094d, # load_tensors' case LLM_ARCH_LLAMA, line 1501:" in serving
    assert '_widest(header, "expert_feed_forward_length") or _widest(header, "feed_forward_length")' in serving


def test_3_the_split_keys_types_are_llama_cpps(excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    split = _numbered(excerpt, "llama.cpp-split", "ggml-org/llama.cpp", LLAMA)
    writer = _numbered(excerpt, "llama.cpp-writer", "ggml-org/llama.cpp", LLAMA)
    common = _numbered(excerpt, "llama.cpp-common", "ggml-org/llama.cpp", LLAMA)
    constants = _numbered(excerpt, "llama.cpp-constants", "ggml-org/llama.cpp", LLAMA)
    arch = _numbered(excerpt, "llama.cpp-arch", "ggml-org/llama.cpp", LLAMA)
    # the C++ names' strings, as common.h (gguf-split's) and llama-arch.cpp (the loader's) spell them
    named = dict(re.findall(r'(LLM_KV_SPLIT_\w+)\s*= "([\w.]+)"', "\n".join(common.values())))
    assert named == dict(re.findall(r'\{ (LLM_KV_SPLIT_\w+),\s*"([\w.]+)"', "\n".join(arch.values())))
    assert named == dict(re.findall(r'(LLM_KV_SPLIT_\w+)\s*= "([\w.]+)"', "\n".join(constants.values())))
    cpp = {named[key]: {"u16": "uint16", "i32": "int32"}[ty]
           for ty, key in re.findall(r"gguf_set_val_(\w+)\(ctx_out, (LLM_KV_SPLIT_\w+)", "\n".join(split.values()))}
    py = {named[key]: ty.lower() for key, ty in
          re.findall(r"Keys\.Split\.(LLM_KV_SPLIT_\w+)\] = GGUFValue\(\w+, GGUFValueType\.(\w+)\)",
                     "\n".join(writer.values()))}
    assert cpp == py == dict(_SPLIT_TYPES) == {"split.no": "uint16", "split.count": "uint16",
                                               "split.tensors.count": "int32"}
    assert "gguf-split.cpp lines 234-236" in _module("gguf_header")


def test_4_the_deepseek_v3_sentence_is_the_papers(excerpt: dict[str, tuple[str, str, list[str]]]) -> None:
    path, url, page = excerpt["deepseek-v3-technical-report"]
    assert url == f"https://github.com/deepseek-ai/DeepSeek-V3/blob/{DEEPSEEK}/{path}" and path == "DeepSeek_V3.pdf"
    assert page[0] == "5.4.3. Multi-Token Prediction Evaluation"
    text = " ".join(page[1:])  # the PDF's line wraps as one space
    with (REPO / "facts" / "drafts" / "deepseek-v3-mtp.toml").open("rb") as f:
        method = tomllib.load(f)
    accept = method["acceptance"]["1"]
    assert accept["source"] == "deepseek-v3-technical-report" and accept["locator"].startswith("§5.4.3 (Multi-Token")
    (quoted,) = _QUOTED.findall(accept["locator"])
    assert quoted in text and quoted.split()[0] == "the"  # verbatim, across the page's line wrap after '90%'
    assert "ranges between 85% and 90%" in quoted and accept["value"] == 0.85  # the low end, as the locator says
    assert "delivering 1.8 times TPS (Tokens Per Second)." in text and "1.8 times" in accept["note"]
    assert "predicts the next 2 tokens" in text  # one drafted token a pass
    # the released weights hold one MTP module (README_WEIGHTS.md at the same commit): one draft, none deeper
    weights = _numbered(excerpt, "deepseek-v3-weights", "deepseek-ai/DeepSeek-V3", DEEPSEEK)
    assert "The open-sourced V3 weights include **1 MTP Module**" in weights[6]
    assert weights[36].strip().endswith("In this model, the value is set to 1.")
    assert sorted(method["acceptance"]) == ["1"] and "one MTP module" in method["method"]["note"]
    record = (REPO / "sources" / "deepseek-v3-technical-report.toml").read_text(encoding="utf-8")
    assert DEEPSEEK[:10] in record and "page 35" in record
