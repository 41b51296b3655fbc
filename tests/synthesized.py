"""The registered checkpoints built by ``passprice synth`` from published configurations (``examples/configs/``):
each entry of ``registry/checkpoints/`` listed here is exactly what the command below writes, and
``tests/test_synthetic.py`` checks that it still is.

    .venv/bin/python tests/synthesized.py        # rewrite the entries (the same as running each command below)

    passprice synth examples/configs/qwen3-30b-a3b.json --mix Q4_K_M --import qwen3-30b-a3b-q4_k_m --note ... --force
    passprice synth examples/configs/gpt-oss-20b.json --mix MXFP4 --import gpt-oss-20b-mxfp4 --note ... --force
    passprice synth examples/configs/deepseek-v3.json --mix Q4_K_M --import deepseek-v3-q4_k_m --note ... --force
    passprice synth examples/configs/meta-llama-3-8b.json --mix Q4_K_M --import llama3-8b-q4_k_m --note ... --force
    passprice synth examples/configs/meta-llama-3-8b.json --mix F16 --import llama3-8b-f16 --note ... --force
    passprice synth examples/configs/meta-llama-3-70b.json --mix Q4_K_M --import llama3-70b-q4_k_m --note ... --force
    passprice synth examples/configs/llama-2-13b.json --mix F16 --import llama2-13b-f16 --note ... --force
    passprice synth examples/configs/qwen3-30b-a3b.json --mix Q4_0 --import qwen3-30b-a3b-q4_0 --note ... --force
    passprice synth examples/configs/gpt-oss-120b.json --mix MXFP4 --import gpt-oss-120b-mxfp4 --note ... --force
    passprice synth examples/configs/deepseek-v2-lite.json --mix Q4_0 --import deepseek-v2-lite-q4_0 --note ... --force

The entries of :data:`UNWRITTEN` were imported after ``synth --import`` without ``-o`` marked its origin (``No header
file was written``); the others were imported before, and keep their text (and their locks' pins).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).parent.parent
CONFIGS = REPO / "examples" / "configs"

#: entry name → (configuration file, type mix, origin note appended to the library's).
SYNTHESIZED: dict[str, tuple[str, str, str]] = {
    "qwen3-30b-a3b-q4_k_m": (
        "qwen3-30b-a3b.json",
        "Q4_K_M",
        "llama.cpp's default Q4_K_M mix: 241 F32, 289 Q4_K, 49 Q6_K (attn_v and ffn_down_exps of 24 layers, and the "
        "head), 17.28 GiB of weights. A public imatrix Q4_K_M of this model (unsloth's, logged in "
        "ggml-org/llama.cpp#13217: 241 f32, 193 q4_K, 48 q5_K, 48 q8_0, 49 q6_K, 17.35 GiB) raises some tensors "
        "above these rules; its per-tensor table was not read.",
    ),
    "gpt-oss-20b-mxfp4": (
        "gpt-oss-20b.json",
        "MXFP4",
        "The MXFP4_MOE mix: the 72 expert matrices MXFP4 (llama.cpp type 39, 32 elements in 17 bytes), every other "
        "matrix Q8_0, vectors and the router F32: 459 tensors and 12,096,558,336 bytes, as ggml-org/gpt-oss-20b-GGUF's "
        "gpt-oss-20b-mxfp4.gguf (459 tensors in the log of ikawrakow/ik_llama.cpp#822; 12.1 GB).",
    ),
    "deepseek-v3-q4_k_m": (
        "deepseek-v3.json",
        "Q4_K_M",
        "61 blocks (3 dense, then 58 with 256 routed experts, 8 a token, and 1 shared expert) and the MTP block "
        "(block 61); MLA as llama.cpp has stored it since ggml-org/llama.cpp#12801 (head_count_kv 1, key_length 576, "
        "value_length 512). attn_k_b rows (128) do not fill a Q4_K block, so it falls back to Q5_0.",
    ),
    # Issue 14: the checkpoints of the measured llama-bench runs (registry/measurements/); each size equals what
    # llama-bench printed for the file it ran (its "size" column).
    "llama3-8b-q4_k_m": (
        "meta-llama-3-8b.json",
        "Q4_K_M",
        "The Meta-Llama-3-8B Q4_K_M file of the XiongjieDai llama-bench runs: 4,912,898,048 bytes of weights = "
        "4.58 GiB, as llama-bench printed ('llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B').",
    ),
    "llama3-8b-f16": (
        "meta-llama-3-8b.json",
        "F16",
        "The Meta-Llama-3-8B F16 file of the XiongjieDai llama-bench runs: 16,061,054,976 bytes = 14.96 GiB, as "
        "llama-bench printed ('llama 8B F16 | 14.96 GiB | 8.03 B').",
    ),
    "llama3-70b-q4_k_m": (
        "meta-llama-3-70b.json",
        "Q4_K_M",
        "The Meta-Llama-3-70B Q4_K_M file of the XiongjieDai llama-bench runs: 42,512,531,456 bytes = 39.59 GiB "
        "(attn_v Q5_K outside the use_more_bits layers, llama.cpp's 70B rule), as llama-bench printed "
        "('llama 70B Q4_K - Medium | 39.59 GiB | 70.55 B').",
    ),
    # Issue 14: the checkpoints of the other measured llama.cpp points (registry/measurements/llamacpp-points.toml).
    "llama2-7b-q4_0": (
        "llama-2-7b.json",
        "Q4_0",
        "The Llama-2-7B Q4_0 file of the measured ./main runs: 3,825,065,984 bytes = 3.56 GiB (Q6_K output), as "
        "llama.cpp printed ('model size = 3.56 GiB (4.54 BPW)').",
    ),
    "llama2-7b-f16": (
        "llama-2-7b.json",
        "F16",
        "The Llama-2-7B F16 file of the measured ./main runs: 13,477,363,712 bytes = 12.55 GiB, as llama.cpp printed "
        "('model size = 12.55 GiB (16.00 BPW)').",
    ),
    "llama2-7b-q4_k_m": (
        "llama-2-7b.json",
        "Q4_K_M",
        "The Llama-2-7B Q4_K_M file of ggml-org/llama.cpp#6763's runs (its size was not printed there): 4,080,263,168 "
        "bytes by the Q4_K_M rules.",
    ),
    "codellama-7b-f16": (
        "codellama-7b.json",
        "F16",
        "The CodeLlama-7B F16 file of ggml-org/llama.cpp#4766's llama-bench table: 13,477,625,856 bytes = 12.55 GiB, "
        "as printed ('llama 7B F16 | 12.55 GiB').",
    ),
    "codellama-7b-q8_0": (
        "codellama-7b.json",
        "Q8_0",
        "The CodeLlama-7B Q8_0 file of ggml-org/llama.cpp#4766's llama-bench table: 7,160,487,936 bytes = 6.67 GiB, "
        "as printed ('llama 7B Q8_0 | 6.67 GiB').",
    ),
    # Issue 11: the checkpoint of LMDeploy's TurboMind static-inference runs (registry/measurements/
    # lmdeploy-turbomind-a100.toml), FP16 as TurboMind ran it from the Hugging Face weights.
    "llama2-13b-f16": (
        "llama-2-13b.json",
        "F16",
        "The Llama-2-13B FP16 weights of LMDeploy's TurboMind benchmark (docs/en/benchmark/a100_fp16.md, lmdeploy "
        "v0.1.0): no GGUF file was run; the F16 mix stores every matrix at 2 bytes an element, as TurboMind's FP16 "
        "weights are: 26,032,558,080 bytes.",
    ),
    "llama31-8b-bf16": (
        "llama-3.1-8b.json",
        "BF16",
        "The 'llama 8B BF16' file of ggml-org/llama.cpp#15131's table (its size was not printed there; taken as "
        "Llama-3.1-8B, whose shapes are Llama-3-8B's): 16,061,054,976 bytes by the BF16 rules.",
    ),
    "llama31-8b-q4_0": (
        "llama-3.1-8b.json",
        "Q4_0",
        "The 'llama 8B Q4_0' file of ggml-org/llama.cpp#15131's and #17505's tables (its size was not printed there; "
        "taken as Llama-3.1-8B: #17505 decodes at 32K of context, past Llama-3-8B's 8K): 4,653,375,488 bytes by the "
        "Q4_0 rules (Q6_K output).",
    ),
    # Session 33 (moe44): the checkpoint of PR #16834's other MoE rows
    # (registry/measurements/llamacpp-pr16834-moe.toml).
    "qwen3-30b-a3b-q4_0": (
        "qwen3-30b-a3b.json",
        "Q4_0",
        "The 'qwen3moe 30B.A3B Q4_0' file of ggml-org/llama.cpp PR #16834's table (its size was not printed there): "
        "17,298,520,064 bytes = 16.11 GiB by the Q4_0 rules (337 Q4_0, 241 F32, the head Q6_K). llama-bench printed "
        "16.18 GiB for a 'qwen3moe 30B.A3B Q4_0' file of another maker (iacopPBK/llama.cpp-gfx906's README, a "
        "Qwen3-30B-A3B-Thinking-2507 Q4_0): 0.07 GiB more than these rules give; which tensors differ was not read.",
    ),
    # Session 34 (moe46): gpt-oss-120b, the model served on one 80 GB card, as ggml-org publishes it.
    "gpt-oss-120b-mxfp4": (
        "gpt-oss-120b.json",
        "MXFP4",
        "The MXFP4_MOE mix of ggml-org/gpt-oss-120b-GGUF's gpt-oss-120b-mxfp4 (three shards): the 108 expert matrices "
        "MXFP4 (llama.cpp type 39, 32 elements in 17 bytes), the 146 other matrices Q8_0, vectors and the routers F32: "
        "687 tensors and 63,374,323,968 bytes = 59.02 GiB, as llama-bench prints that file ('gpt-oss 120B MXFP4 MoE | "
        "59.02 GiB | 116.83 B', e.g. ggml-org/llama.cpp discussion #15396). Matched: the size to llama-bench's two "
        "decimals and its parameter count (116,829,156,672 elements = 116.83 B, as printed), and the type rule (the "
        "20b entry's, checked against a 459-tensor log); not read: the published file's own tensor table or byte "
        "count, so its 687 tensors and exact bytes are these rules', not a header's.",
    ),
    # Session 34 (moe48): DeepSeek-V2-Lite, the 64-expert MLA model of llama.cpp PR #15525's table.
    "deepseek-v2-lite-q4_0": (
        "deepseek-v2-lite.json",
        "Q4_0",
        "The 'deepseek2 16B Q4_0' file of ggml-org/llama.cpp PR #15525's table (its size was not printed there): "
        "27 blocks (1 dense, then 26 with 64 routed experts, 6 a token, and 2 shared), MLA split as llama.cpp has "
        "stored it since ggml-org/llama.cpp#12801; 8,901,113,856 bytes = 8.29 GiB by the Q4_0 rules (295 Q4_0, 108 "
        "F32, the head Q6_K), 15.71 B parameters. llama-bench printed 'deepseek2 16B Q4_0 | 8.29 GiB | 15.71 B' for "
        "a DeepSeek-Coder-V2-Lite Q4_0 file (the same architecture and dims; a public llama.cpp note read in a "
        "stored copy): the same size to the printed 0.01 GiB.",
    ),
}

#: The entries imported by ``synth --import`` without ``-o`` since it marks that in the origin.
UNWRITTEN = frozenset({"qwen3-30b-a3b-q4_0", "gpt-oss-120b-mxfp4", "deepseek-v2-lite-q4_0"})


def built(name: str) -> object:
    """The :class:`passprice.synthetic.Built` of entry ``name``."""
    from passprice.synthetic import build, read_config
    from passprice.typemix import Mix

    config, mix, _ = SYNTHESIZED[name]
    return build(read_config(CONFIGS / config), Mix.parse(mix), name)


def entry(name: str) -> str:
    """The text of ``registry/checkpoints/{name}.toml``."""
    from passprice.synthetic import entry_text

    text, _ = entry_text(built(name), name, SYNTHESIZED[name][2], unwritten=name in UNWRITTEN)  # type: ignore[arg-type]
    return text


def main() -> None:
    """Rewrite every entry of :data:`SYNTHESIZED`."""
    from passprice.checkpoints import write_entry

    for name in SYNTHESIZED:
        path = REPO / "registry" / "checkpoints" / f"{name}.toml"
        write_entry(path, entry(name), force=True)
        print(f"{path.relative_to(REPO)} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    sys.exit(main())
