"""What session 35's README-only walkthrough (walk45: a new user pricing mixtures of experts, reviewing a fact
change, importing a header built with gguf.GGUFWriter) tripped on, each kept as a test, in process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from passprice.check import routing_record
from passprice.errors import InputError
from passprice.routing import Router, colder


def record(hot_experts: float, hot_share: float, experts: int | None = None, used: int | None = None) -> dict[str, Any]:
    """A routing record's document, as ``facts/routing/NAME.toml`` parses, with the figures given."""
    meta: dict[str, Any] = {"name": "mine"}
    if experts is not None:
        meta["experts"] = experts
    if used is not None:
        meta["used"] = used

    def fact(value: float) -> dict[str, Any]:
        return {"value": value, "unit": "1", "provenance": "estimated", "source": "my-notes", "locator": "p. 1"}

    return {"routing": meta, "hot_experts": fact(hot_experts), "hot_share": fact(hot_share)}


SWAPPED = (
    "hot_share: 0.45 of the routed token-slots is less than the hot set's 0.9 of the experts (hot_experts): a hot set "
    "takes at least its experts' share of the slots (equal shares are uniform routing), so this set is the colder one "
    "(were the two figures swapped?); the same routing named by its hot set is hot_experts 0.1, hot_share 0.55"
)


def test_a_hot_set_colder_than_the_rest_is_refused_as_the_figures_swapped() -> None:
    # Was: Qwen3-30B-A3B's record with its hot_share lowered to 0.3 (58 of 128 experts taking 30 % of the slots:
    # fewer than their 45.3 % share) priced 9,040 tokens/s at batch 64 on the H200 (7.079 ms, faster than uniform's
    # 7.145 ms), its line reading "a hot set of 58 of 128 experts (45.31 %) takes 30 %", and a record written with
    # the two figures swapped (hot_experts 0.9, hot_share 0.45: "45 % of the experts take 90 %") passed `check` and
    # priced the same silently. The two-set reading is symmetric (a set of h taking s is the rest, 1 − h, taking
    # 1 − s), so nothing sayable is lost by asking the hot set to be the hotter one.
    assert Router(128, 8, 0.9, 0.45).problem() == SWAPPED
    assert colder(0.9, 0.45) == SWAPPED
    # Its mirror, h' = 0.1 of the experts taking s' = 0.55, routes: p_hot = 8 × 0.55 / 12.8 = 0.34375, p_cold = 8 ×
    # 0.45 / 115.2 = 0.03125 — the swapped record's two probabilities, the other way round.
    assert Router(128, 8, 0.1, 0.55).problem() is None
    (hot, p_hot), (cold, p_cold) = Router(128, 8, 0.1, 0.55).probabilities()
    assert (hot, p_hot, cold, p_cold) == pytest.approx((12.8, 0.34375, 115.2, 0.03125))
    # Equal shares spread the slots evenly (uniform routing by another name): allowed, and D(T) is uniform's.
    assert Router(128, 8, 0.25, 0.25).problem() is None
    assert colder(1.0, 1.0) is None and colder(0.453125, 0.9) is None


@pytest.mark.parametrize(("experts", "used"), [(None, None), (128, 8)])
def test_check_refuses_the_swapped_record_naming_the_file_with_or_without_its_router(
    experts: int | None, used: int | None
) -> None:
    # Without `experts` and `used` check could test nothing of a record before; s ≥ h needs neither.
    with pytest.raises(InputError) as refused:
        routing_record("mine", record(0.9, 0.45, experts, used), "facts/routing/mine.toml")
    assert str(refused.value) == (
        f"facts/routing/mine.toml: {SWAPPED}: correct hot_share or hot_experts (every price naming the record is "
        "refused BadRouting until then)"
    )
    assert routing_record("mine", record(0.1, 0.55, experts, used), "facts/routing/mine.toml").hot_share.value == 0.55


def test_a_price_under_a_stack_says_how_its_pass_line_adds_up() -> None:
    # Was: "pass 4.211 ms: fixed 2.706 ms, terms at the stack's shares memory 1.025 ms · array 256.5 µs · vector
    # 303.7 µs · scale 402 µs (binds on memory)": 2.706 + 1.025 = 3.731, and every term added is 4.693; the line
    # never said the others add at terms.serial (0.5 here), so no reader could sum it. By hand: 2.706 + 1.025 + 0.5 ×
    # (0.2565 + 0.3037 + 0.402) = 4.2121 ms, the pass to its rounding.
    from passprice.registry import find_root
    from passprice.report import expected_text
    from passprice.servings import load_spec, resolve
    from passprice.stacks import load_stack, price_expected

    root = find_root(Path(__file__).resolve().parent.parent)
    r = resolve(root, load_spec(root, "r1-qwen7b-h200"))
    priced = price_expected(r.header, r.card, r.serving, load_stack(root, "llamacpp-cuda-2405"))
    line = next(x for x in expected_text(priced).splitlines() if x.startswith("  pass "))
    assert line == (
        "  pass          4.211 ms: fixed 2.706 ms, terms at the stack's shares memory 1.025 ms · array 256.5 µs · "
        "vector 303.7 µs · scale 402 µs (binds on memory; pass = fixed + memory + terms.serial 0.5 × the others)"
    )
    e = priced.expected
    others = e.array_s + e.vector_s + e.scale_s
    assert e.pass_s == pytest.approx(priced.fixed_s + e.memory_s + 0.5 * others, rel=1e-12)


def moe_header(path: Path, used: int) -> Path:
    """A one-block llama mixture of 8 experts written with gguf.GGUFWriter, ``used`` experts a token (K-quant
    experts, 256-wide), as a user builds one to try passprice."""
    import gguf
    import numpy as np

    q4k = gguf.GGMLQuantizationType.Q4_K
    block, size = gguf.GGML_QUANT_SIZES[q4k]

    def q(*shape: int) -> Any:
        return np.zeros((*shape[:-1], shape[-1] // block * size), dtype=np.uint8)

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(4096)
    w.add_embedding_length(256)
    w.add_block_count(1)
    w.add_feed_forward_length(512)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(8)
    w.add_expert_used_count(used)
    w.add_tensor("token_embd.weight", q(1000, 256), raw_dtype=q4k)
    w.add_tensor("output_norm.weight", np.zeros(256, np.float32))
    w.add_tensor("output.weight", q(1000, 256), raw_dtype=q4k)
    w.add_tensor("blk.0.attn_norm.weight", np.zeros(256, np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.0.{name}.weight", q(256, 256), raw_dtype=q4k)
    w.add_tensor("blk.0.ffn_norm.weight", np.zeros(256, np.float32))
    w.add_tensor("blk.0.ffn_gate_inp.weight", np.zeros((8, 256), np.float32))
    for name, shape in (("gate", (8, 512, 256)), ("up", (8, 512, 256)), ("down", (8, 256, 512))):
        w.add_tensor(f"blk.0.ffn_{name}_exps.weight", q(*shape), raw_dtype=q4k)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize(
    ("used", "says"),
    [
        (9, "metadata llama.expert_used_count: 9 experts a token, more than expert_count"),
        (0, "metadata llama.expert_used_count: 0 experts a token, but expert_count is 8: a mixture of experts "
            "routes each token to at least one"),
    ],
)
def test_a_header_whose_router_cannot_be_is_bad_input_not_a_routing_refusal(
    tmp_path: Path, used: int, says: str
) -> None:
    # Was, for 9 experts a token of 8: `price --checkpoint h.gguf` refused Routed ("name a routing record"), and with
    # --routing uniform "BadRouting: routing uniform does not fit this checkpoint: 9 experts a token of 8", blaming
    # the record for the header (while `kv h.gguf` said the header's key, exit 2). For 0 a token: Routed, then
    # "Step: … missing metadata llama.expert_used_count", a key the header holds.
    from cli_helpers import bad

    header = str(moe_header(tmp_path / "h.gguf", used))
    for routing in ((), ("--routing", "uniform")):
        assert bad("price", "--checkpoint", header, "--card", "h100_sxm5_80gb", "--batch", "4", *routing) == [
            f"passprice: error: {header}: {says}"
        ]
    assert bad("kv", header, "--contexts", "4k") == [f"passprice: error: {header}: {says}"]


def test_a_split_headers_layout_line_says_its_bytes_are_the_files_sum(tmp_path: Path) -> None:
    # Was, for three shards gguf.GGUFWriter(split_max_tensors=8) wrote: "header 1,870 bytes; tensor data at byte 896"
    # — data starting inside the header, to a reader: 1,870 is the three files' headers together, 896 the first
    # file's data offset. And no word of the line (alignment, tensor data, shards, header_bytes …) was in the glossary.
    import gguf
    import numpy as np

    from cli_helpers import invoke

    w = gguf.GGUFWriter(str(tmp_path / "s.gguf"), "llama", split_max_tensors=8)
    w.add_context_length(2048)
    w.add_embedding_length(64)
    w.add_block_count(2)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_tensor("token_embd.weight", np.zeros((256, 64), np.float16))
    w.add_tensor("output_norm.weight", np.zeros(64, np.float32))
    w.add_tensor("output.weight", np.zeros((256, 64), np.float16))
    for i in range(2):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.zeros(64, np.float32))
        for name, shape in (("attn_q", (64, 64)), ("attn_k", (32, 64)), ("attn_v", (32, 64)),
                            ("attn_output", (64, 64)), ("ffn_gate", (128, 64)), ("ffn_up", (128, 64)),
                            ("ffn_down", (64, 128))):
            w.add_tensor(f"blk.{i}.{name}.weight", np.zeros(shape, np.float16))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.zeros(64, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    first = tmp_path / "s-00001-of-00003.gguf"
    sizes = []
    for n in (1, 2, 3):
        reader = gguf.GGUFReader(str(tmp_path / f"s-0000{n}-of-00003.gguf"))
        sizes.append(reader.data_offset)
    out = invoke("header", str(first))
    assert out.exit_code == 0, out.output
    line = out.stdout.splitlines()[2]
    # Each shard's data offset is its header padded to 32 bytes; the line's sum is of the unpadded headers.
    assert line.startswith("  header        ") and " bytes in 3 files, " in line, line
    total, head = (int(x.replace(",", "")) for x in (line.split()[1], line.split(" in the first")[0].split()[-1]))
    assert -(-head // 32) * 32 == sizes[0] and total <= sum(sizes) and total > sum(sizes) - 3 * 32
    assert line.endswith(f"in the first, its tensor data at byte {sizes[0]:,} (alignment 32)")
    for word in ("alignment", "tensor data", "shards", "header_bytes", "data_offset", "byte_order", "tensor_bytes"):
        said = invoke("explain", word)
        assert said.exit_code == 0 and said.stdout.startswith("GGUF: "), (word, said.output)


@pytest.mark.parametrize(
    ("word", "entry"),
    [("Poisson", "trace"), ("lognormal", "trace"), ("Pareto", "trace"), ("cut to fit", "trace"),
     ("rope key", "MLA"), ("first term that moved", "reproduces exactly"), ("derivation changed", "derivation")],
)
def test_the_words_simulate_and_kv_print_are_defined(word: str, entry: str) -> None:
    # Was: simulate --synthetic's trace line ("Poisson arrivals at 200/s, lognormal prompts (median 512, sigma 1),
    # Pareto outputs (scale 32, alpha 1.3); cut to fit the limit …") and kv's "global attention (MLA: latent + rope
    # key)" printed words `passprice explain` did not know; so did reproduce's "first term that moved with today's
    # inputs: memory_s" and diff's "0.9333 → 0.9143 (-2.036 %, derivation changed)".
    from passprice.glossary import lookup

    assert lookup(word).name == entry


def test_compare_counts_full_cards_among_those_priced() -> None:
    # Was: "holds over 95 % of card memory on 9 of 17 cards" for gpt-oss-120b, the other 8 refusing it NotResident:
    # every card that held it was full, which the count hid.
    from cli_helpers import invoke

    out = invoke("compare", "gpt-oss-120b-h200", "--cards", "h200_sxm_141gb,h100_sxm5_80gb,l40s,rtx_4090")
    assert out.exit_code == 0, out.output
    assert ("  headroom      the best batch holds over 95 % of card memory on 2 of the 2 cards priced (2 refused): "
            "passprice counts no runtime workspace") in out.stdout


def test_import_refuses_a_header_check_would_fail_and_writes_nothing(tmp_path: Path) -> None:
    # Was: `passprice import h.gguf --name u9` of a header of 9 experts a token of 8 wrote registry/checkpoints/u9.toml
    # (exit 0), and the next `check` failed on it ("metadata llama.expert_used_count: 9 experts a token, more than
    # expert_count"). The entry's text is built by import_header, which now refuses it, so nothing is written.
    from passprice.checkpoints import import_header
    from passprice.gguf_header import read_header

    header = read_header(moe_header(tmp_path / "h.gguf", 9))
    with pytest.raises(InputError) as refused:
        import_header(header, "u9", "made in a test")
    assert list(refused.value.lines) == [
        f"{tmp_path / 'h.gguf'}: metadata llama.expert_used_count: 9 experts a token, more than expert_count "
        "(nothing imported: check, checkpoints and every price refuse such an entry)"
    ]
    assert import_header(read_header(moe_header(tmp_path / "k.gguf", 2)), "k2", "made in a test").startswith("#:schema")


def test_best_on_a_level_curve_is_where_the_level_starts() -> None:
    # Read as a wrong number: DeepSeek-V2-Lite's best batch on an H200 is 144 and on an H100 SXM 365, both at 34,433.1
    # tokens/s: from the batch where vector binds, tokens/s stays level to the largest batch (1,036 on the H200), and
    # ties (within 1e-12) go to the smaller batch, now said in the glossary's `best batch`.
    import json

    from cli_helpers import invoke

    args = ("--checkpoint", "deepseek-v2-lite-q4_0", "--card", "h200_sxm_141gb", "--routing", "uniform", "--json")
    best = json.loads(invoke("best", *args).stdout)
    last = json.loads(invoke("price", *args, "--batch", "1036").stdout)
    assert (best["batch"], best["binds"], last["binds"]) == (144, "vector", "vector")
    assert last["tokens_per_s"] == pytest.approx(best["tokens_per_s"], rel=1e-12)
    assert round(best["tokens_per_s"], 1) == 34433.1
    from passprice.glossary import lookup

    assert "a tie goes to the smaller batch" in lookup("best batch").long
