"""What a newcomer reads: every term passprice prints is defined once (explain, the README glossary and the price
table's legend agree), float matrices priced on the vector units are said so, and the labels and defaults a new
user tripped on (issue 17, item 3) read as they should."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
from gguf import GGMLQuantizationType, GGUFValueType

from cli_helpers import REPO, bad, invoke
from hybrids import write_header_only
from passprice import glossary
from passprice.checkpoints import load_checkpoint
from passprice.kv import default_contexts
from passprice.registry import find_root
from passprice.report import float_matrices, header_text
from passprice.tables import count

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_explain_defines_the_words_of_the_output() -> None:
    for word in ("array", "vector", "scale", "activation word", "flush", "head rows", "streams.*", "--kv-rotated",
                 "Tcycle/s", "TPOT", "binds"):
        result = invoke("explain", word)
        assert result.exit_code == 0, result.output
        term = glossary.lookup(word)
        assert result.stdout.startswith(f"{term.name}: {term.short}") and term.long in result.stdout
    assert glossary.lookup("Tcycle/s").name == "scale" and glossary.lookup("KV_ROTATED").name == "kv-rotated"
    listing = invoke("explain").stdout.splitlines()
    assert len(listing) == len(glossary.TERMS) and listing[0].startswith("binds ")
    bad("explain", "arry", says="explain: 'arry' is not a term passprice defines; did you mean array?")


def test_the_readme_glossary_is_the_module() -> None:
    begin, end = "<!-- glossary: begin (python docs/make.py writes it) -->", "<!-- glossary: end -->"
    assert begin in README and end in README
    block = README[README.index(begin) + len(begin):README.index(end)].strip()
    assert block == glossary.markdown()


def test_a_price_has_a_legend_and_says_where_float_matrices_run() -> None:
    out = invoke("price", "r1-qwen7b-h200").stdout.splitlines()
    rule = out.index("pass    1.004 ms")
    assert out[rule + 1] == "  " + glossary.legend("memory", "host", "array", "vector", "scale", "binds")
    assert out[rule + 1].startswith("  memory = bytes through card memory · host = bytes over the host link · array")
    assert not any(line.startswith("  float ") for line in out)  # every matrix of R1-Distill-Qwen-7B is quantized
    # The Qwen3.5-like hybrid's 48 Gated-DeltaNet conv kernels are F32 4 × 10,240 matrices: 163,840 B each.
    header = load_checkpoint(find_root(REPO), "qwen35-27b-like")
    assert float_matrices(header) == {"F32": (48, 48 * 4 * 10240 * 4)}
    text = invoke("price", "qwen35-27b-h200-mtp").stdout
    assert "  float         48 F32 (7.864 MB) matrices priced on the vector units at the card's f32 rate" in text


def test_best_says_it_leaves_no_headroom() -> None:
    text = invoke("best", "r1-qwen7b-h200").stdout
    assert "  held          140.9 GB of 141 GB card memory (99.9 %)" in text
    assert "  headroom      0.1 % of card memory left: passprice counts no runtime workspace" in text
    assert "headroom" not in invoke("price", "r1-qwen7b-h200").stdout  # 3.5 % held


def test_the_shared_prefix_read_once_is_labelled_with_the_weights() -> None:
    text = invoke("price", "r1-qwen7b-h200", "--kv-page", "16", "--shared-prefix", "2000", "--prefix-read-once").stdout
    assert "of weights, embedding rows and the shared prefix's KV (read once a pass), shared by the batch" in text
    assert "of weights and embedding rows, shared by" in invoke("price", "r1-qwen7b-h200").stdout


def _two_k_model(path: Path) -> Path:
    """A one-block llama with a 2,048-position context (Q8_0 matrices, 256 wide)."""
    q8, f32 = GGMLQuantizationType.Q8_0, GGMLQuantizationType.F32
    u32 = GGUFValueType.UINT32
    meta = [("llama.block_count", 1, u32), ("llama.context_length", 2048, u32), ("llama.embedding_length", 256, u32),
            ("llama.feed_forward_length", 512, u32), ("llama.attention.head_count", 4, u32),
            ("llama.attention.head_count_kv", 2, u32)]
    tensors = [("token_embd.weight", (256, 1000), q8), ("blk.0.attn_norm.weight", (256,), f32),
               ("blk.0.attn_q.weight", (256, 256), q8), ("blk.0.attn_k.weight", (256, 128), q8),
               ("blk.0.attn_v.weight", (256, 128), q8), ("blk.0.attn_output.weight", (256, 256), q8),
               ("blk.0.ffn_norm.weight", (256,), f32), ("blk.0.ffn_gate.weight", (256, 512), q8),
               ("blk.0.ffn_up.weight", (256, 512), q8), ("blk.0.ffn_down.weight", (512, 256), q8),
               ("output_norm.weight", (256,), f32), ("output.weight", (256, 1000), q8)]
    return write_header_only(path, "llama", meta, tensors)


def test_kv_defaults_to_the_models_own_context(tmp_path: Path) -> None:
    assert default_contexts(2048) == (2048,)
    assert default_contexts(32768) == (4096, 32768)
    assert default_contexts(262144) == (4096, 32768, 131072, 262144)
    assert default_contexts(None) == (4096, 32768, 131072)
    model = _two_k_model(tmp_path / "two-k.gguf")
    result = invoke("kv", str(model))
    assert result.exit_code == 0, result.output
    # One block, 2 KV heads of 64 + 64 two-byte elements: 512 B a position, 1,048,576 B at 2K; nothing refused.
    assert re.search(r"^2K\s+2,048\s+1,048,576\s+1,048,576\s+1 MiB$", result.stdout, re.M), result.stdout
    assert "refused" not in result.stdout


def test_kv_says_why_the_pass_holds_more_of_the_hybrid() -> None:
    text = invoke("kv", "qwen35-27b-like", "--contexts", "4k").stdout
    assert "held per sequence in the pass (seed held_per_sequence): 4K 427,294,720 B" in text
    # 427,294,720 − 425,328,640 = 48 recurrent blocks × one 10,240-channel f32 conv-ring row (40,960 B).
    assert "425,328,640" in text and 427_294_720 - 425_328_640 == 48 * 10240 * 4
    assert "(more than the per-sequence column above by 4K 1,966,080 B: the conv-ring row each token-row" in text


def test_kv_reads_a_mixture_of_experts_and_price_names_it_routed_without_routing() -> None:
    # Its KV cache does not depend on routing (issue 15); a price does, and without a routing record is refused.
    assert invoke("kv", "qwen3next-80b-a3b-like").exit_code == 0
    result = invoke("price", "--checkpoint", "qwen3next-80b-a3b-like", "--card", "h200_sxm_141gb")
    assert result.exit_code == 1 and result.stderr.startswith("passprice: refused: Routed: a mixture of 512")


@pytest.mark.parametrize(
    ("args", "last"),
    [
        (("kv", "gemma3-270m-q4_k_m"), "(binary)"),
        (("speculate", "qwen35-27b-h200-chat", "--tokens", "1..2", "--passes", "100"), "best"),
        (("roofline", "h200_sxm_141gb", "r1-qwen7b-h200"), "best / largest"),
    ],
)
def test_every_column_has_a_label(args: tuple[str, ...], last: str) -> None:
    lines = invoke(*args).stdout.splitlines()
    rules = [i for i, line in enumerate(lines) if line and set(line) <= {"-", " "}]
    assert rules
    for i in rules:
        headers = re.split(r"\s{2,}", lines[i - 1].strip())
        assert len(headers) == len(lines[i].split()), (lines[i - 1], lines[i])  # a label over every column
    assert any(lines[i - 1].rstrip().endswith(last) for i in rules)


def test_large_counts_read_with_separators() -> None:
    assert count(2826380.5) == "2,826,380"
    assert count(2826380.0) == "2,826,380" and count(33339.2) == "33,339.2" and count(996.1) == "996.1"
    assert count(123456.7) == "123,457"


def test_header_says_when_the_architecture_is_missing() -> None:
    header = load_checkpoint(find_root(REPO), "gemma3-270m-q4_k_m")
    meta = {k: v for k, v in header.metadata.items() if k != "general.architecture"}
    text = header_text(attrs.evolve(header, metadata=meta))
    assert "  architecture  (missing: no general.architecture key)   GGUF v3" in text
    assert "None" not in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # A serving where a checkpoint belongs (kv CHECKPOINT), a card where a serving does (roofline CARD [SERVING]).
        (("kv", "r1-qwen7b-h200"), "r1-qwen7b-h200 is a registered serving, not a checkpoint"),
        # The two swapped: the command with the card first (walkthrough 43).
        (("roofline", "r1-qwen7b-h200", "h200_sxm_141gb"), "run `passprice roofline h200_sxm_141gb r1-qwen7b-h200`"),
        # A typo, and a name's first part, suggest the registered names closest to it.
        (("price", "r1-qwen7-h200"), "; did you mean r1-qwen7b-h200 or "),
        (("price", "r1-qwen7b-h200", "--card", "h200"), "; did you mean h200_sxm_141gb or b200?"),
        # A registered name given as its file name.
        (("price", "r1-qwen7b-h200.toml"), "the registered serving is named r1-qwen7b-h200 (no .toml)"),
        (("price", "r1-qwen7b-h200", "--card", "h200_sxm_141gb.toml"),
         "the registered card is named h200_sxm_141gb (no .toml)"),
    ],
)
def test_a_name_not_found_says_what_it_likely_meant(args: tuple[str, ...], says: str) -> None:
    """The newcomer walkthrough: each of these listed every registered name and nothing more."""
    bad(*args, says=says)
