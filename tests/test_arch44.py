"""What session 36 left on architectures, mixture-of-experts sweeps and headers (session 37, arch44), each kept as
its reproducer, in process:

1. A gemma2 header without its window is priced at llama.cpp's 4,096 and ``price``/``best``/``max-batch``/``kv`` say
   so; ``roofline``, ``sweep``, ``compare``, ``audit`` and ``simulate`` priced it so without a word. Each now prints
   the ``defaulted`` line (and ``--json``'s ``defaulted``; audit's markdown a bullet), ``sweep`` one ``passprice:
   defaulted:`` line a checkpoint on stderr (never a column).
2. A sweep of more than 64 positions (``sweep.EXACT_POSITIONS``) of a mixture of experts without a routing record
   said ``Routed`` on every row, where ``price`` says ``NotResident`` for a batch no routing makes fit (walk48):
   gpt-oss-120b on a 10 GB RTX 3080, 195 of 195 rows ``Routed``. And at 64 positions or fewer, a position past the
   serving's limit said ``Routed`` where price says ``BadContexts``.
3. ``expert_count`` 10^6 beside stacks of 128 (48 blocks, three stacks each) printed 144 error lines: now one.
4. ``header --json`` (and ``checkpoints --json``) wrote a ``general.architecture`` holding U+202E raw: every JSON
   output now writes each character that does not print as its ``\\uXXXX`` escape, reading back as itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q

from cli_helpers import invoke
from passprice.errors import json_escaped
from passprice.registry import find_root
from passprice.servings import ServingSpec
from passprice.sweep import EXACT_POSITIONS, Grid, Sweeper
from passprice.tables import json_text
from test_architectures import _file

ROOT = find_root(Path(__file__).resolve().parent.parent)
H200, RTX = "h200_sxm_141gb", "rtx_3080"
GPT_OSS = "gpt-oss-120b-mxfp4"


# --- 1. a defaulted window said by roofline and sweep ----------------------------------------------------------


def test_roofline_and_sweep_say_the_defaulted_window(tmp_path: Path) -> None:
    path = str(_file(tmp_path / "g2.gguf", "gemma2"))
    line = ("gemma2.attention.sliding_window 4,096 positions: not in the header, so llama.cpp's default is priced "
            "(llama.cpp src/llama-model.cpp at a5410f046c (")
    text = invoke("roofline", H200, "--checkpoint", path)
    assert text.exit_code == 0, text.output
    assert f"\n  defaulted     {line}" in text.stdout  # was: no line
    data = json.loads(invoke("roofline", H200, "--checkpoint", path, "--json").stdout)
    priced = json.loads(invoke("price", "--checkpoint", path, "--card", H200, "--json").stdout)
    assert data["defaulted"] == priced["defaulted"]  # was: no key
    assert data["defaulted"][0]["key"] == "gemma2.attention.sliding_window" and data["defaulted"][0]["value"] == 4096
    # compare, audit and simulate priced it without a word too: each says it as price does (text and --json).
    for args in (("compare", "--checkpoint", path, "--cards", H200), ("audit", "--checkpoint", path, "--card", H200),
                 ("simulate", "--checkpoint", path, "--card", H200, "--synthetic", "2")):
        out = json.loads(invoke(*args, "--json").stdout)
        assert out["defaulted"] == priced["defaulted"], args
    assert f"\n  defaulted     {line}" in invoke("audit", "--checkpoint", path, "--card", H200).stdout
    # sweep: once a command on stderr, whatever the cards and format; never in a row.
    for fmt in ("csv", "json"):
        result = invoke("sweep", "--checkpoint", path, "--cards", f"{H200},mi300x", "--batches", "1,8",
                        "--format", fmt)
        assert result.exit_code == 0, result.output
        said = [s for s in result.stderr.splitlines() if "defaulted" in s]
        assert len(said) == 1 and said[0].startswith(f"passprice: defaulted: {path}: {line}"), said
        assert said[0].endswith(priced["defaulted"][0]["source"] + ")")
        assert "defaulted" not in result.stdout
    # With the key in the header: no line.
    given = str(_file(tmp_path / "w.gguf", "gemma2", window=4096))
    result = invoke("sweep", "--checkpoint", given, "--cards", H200, "--batches", "1")
    assert result.exit_code == 0 and "defaulted" not in result.stderr
    assert "defaulted" not in invoke("roofline", H200, "--checkpoint", given).stdout


# --- 2. a sweep of more than 64 positions refuses as price does --------------------------------------------------


def _price_refusal(card: str, position: float, batch: int) -> str:
    result = invoke("price", "--checkpoint", GPT_OSS, "--card", card, "--position", f"{position:g}", "--batch",
                    str(batch), "--json")
    assert result.exit_code == 1, result.output
    name: str = json.loads(result.stdout)["refusal"]
    return name


def test_a_sweep_of_65_positions_says_not_resident_where_price_does() -> None:
    # 0 … 4,032: 65 positions below the 4,096 limit (4,096 itself is at the limit: BadContexts, test_walk138.py).
    positions = tuple(float(p) for p in range(0, 63 * (EXACT_POSITIONS + 1), 63))
    assert len(positions) == EXACT_POSITIONS + 1
    spec = ServingSpec(checkpoint=GPT_OSS, card=RTX)
    grid = Grid((spec,), (1, 2, 64, 10**6), (RTX, H200), positions)
    at = {(r["card"], r["position"], r["batch"]): r["refusal"] for r in Sweeper(ROOT).rows(grid)}
    assert len(at) == 2 * 65 * 4
    # 63.37 GB of weights on a 10 GB card: no routing record makes a batch fit (was Routed, 260 of 260 rows).
    assert {v for (card, _, _), v in at.items() if card == RTX} == {"NotResident"}
    assert {v for (card, _, b), v in at.items() if card == H200 and b < 10**6} == {"Routed"}
    assert {v for (card, _, b), v in at.items() if card == H200 and b == 10**6} == {"NotResident"}
    for card, position, batch in ((RTX, 630, 2), (RTX, 4032, 1), (H200, 630, 2), (H200, 0, 64),
                                  (H200, 4032, 10**6)):
        assert at[(card, position, batch)] == _price_refusal(card, position, batch), (card, position, batch)


def test_a_position_past_the_limit_of_a_moe_without_routing_is_bad_contexts_as_price_says() -> None:
    spec = ServingSpec(checkpoint=GPT_OSS, card=H200)
    for positions in ((512.0, 1e7), (*(float(p) for p in range(0, 64 * 65, 64)), 1e7)):  # both paths
        grid = Grid((spec,), (1,), (H200,), positions)
        rows = {r["position"]: r["refusal"] for r in Sweeper(ROOT).rows(grid)}
        assert rows[10**7] == "BadContexts" == _price_refusal(H200, 1e7, 1)  # was Routed (64 positions or fewer)
        assert rows[512 if 512 in rows else 0] == "Routed"


# --- 3. one bad key, one line ----------------------------------------------------------------------------------


def _million_experts(path: Path, blocks: int = 48) -> Path:
    """A header-only qwen3moe GGUF written with gguf.GGUFWriter: expert_count 10^6, but each of its ``blocks``
    blocks' three expert stacks holds 128 experts (F32 throughout, width 256, expert FFN 128)."""
    d, ff, vocab, experts = 256, 128, 1024, 128
    w = gguf.GGUFWriter(str(path), "qwen3moe")
    w.add_context_length(4096)
    w.add_embedding_length(d)
    w.add_block_count(blocks)
    w.add_feed_forward_length(ff)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_expert_count(10**6)
    w.add_expert_used_count(8)

    def tensor(name: str, shape: list[int]) -> None:  # ggml order (ne0 first)
        w.add_tensor_info(name, list(reversed(shape)), np.dtype(np.float32), int(np.prod(shape)) * 4, raw_dtype=Q.F32)

    tensor("token_embd.weight", [d, vocab])
    for i in range(blocks):
        for name, shape in (("attn_norm", [d]), ("attn_q", [d, d]), ("attn_k", [d, 128]), ("attn_v", [d, 128]),
                            ("attn_output", [d, d]), ("ffn_norm", [d]), ("ffn_gate_inp", [d, experts]),
                            ("ffn_gate_exps", [d, ff, experts]), ("ffn_up_exps", [d, ff, experts]),
                            ("ffn_down_exps", [ff, d, experts])):
            tensor(f"blk.{i}.{name}.weight", shape)
    tensor("output_norm.weight", [d])
    tensor("output.weight", [d, vocab])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


def test_a_million_experts_beside_stacks_of_128_is_one_line(tmp_path: Path) -> None:
    path = str(_million_experts(tmp_path / "e1m.gguf"))
    said = (f"{path}: tensor 'blk.0.ffn_gate_exps.weight': dims [256, 128, 128] do not stack qwen3moe.expert_count = "
            "1000000 experts (the last dimension is the expert), and 143 more expert stacks alike")
    for args in (("price", "--checkpoint", path, "--card", H200), ("kv", path)):
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [f"passprice: error: {said}"], args  # was 144 lines
    header = invoke("header", path)
    assert header.exit_code == 0
    assert header.stderr.splitlines() == [f"passprice: warning: {said} (check, checkpoints and every price refuse it)"]


# --- 4. a character that does not print, in any --json ---------------------------------------------------------


def test_header_json_escapes_a_bidi_control_and_reads_back_as_itself(tmp_path: Path) -> None:
    arch = "ll\u202eama\u2028\x7f"
    path = str(_file(tmp_path / "rtl.gguf", arch))
    result = invoke("header", path, "--json")
    assert result.exit_code == 0, result.output
    for raw in ("\u202e", "\u2028", "\x7f"):
        assert raw not in result.stdout  # was: U+202E and U+2028 raw in "architecture", its metadata and keys
    assert '"architecture": "ll\\u202eama\\u2028\\u007f",' in result.stdout
    data = json.loads(result.stdout)
    assert data["architecture"] == data["metadata"]["general.architecture"] == arch
    assert f"{arch}.block_count" in data["metadata"]


def test_json_text_escapes_what_does_not_print_and_nothing_else() -> None:
    value = {"a\u202eb": ["\udcff", "\U000e0001", "µ × → ≥ é", "tab\t", "\x9b", "\u00a0"]}
    text = json_text(value)
    assert text == ('{\n  "a\\u202eb": [\n    "\\udcff",\n    "\\udb40\\udc01",\n    "µ × → ≥ é",\n    '
                    '"tab\\t",\n    "\\u009b",\n    "\\u00a0"\n  ]\n}')
    assert json.loads(text) == value
    assert json_escaped('{"plain": "ascii"}') == '{"plain": "ascii"}'
