"""Mixtures of experts, task moe42: gpt-oss-120b's Q4_K_M types and bytes by llama.cpp's rules (and the warning that
published files keep the experts MXFP4), the ``experts`` line's word for its mean over routing, which locks apply
to a price with options (and the lock line naming one that does not), and a batch-1 price left unmoved by routing."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke
from passprice import glossary
from passprice.routing import Router
from passprice.synthetic import build, read_config, requantized_experts, type_counts
from passprice.typemix import Mix

CONFIG = REPO / "examples" / "configs" / "gpt-oss-120b.json"


def _table(b) -> dict[str, tuple[tuple[int, ...], str]]:  # type: ignore[no-untyped-def]
    return {t.name: (tuple(t.dims), ty) for t, ty in b.tensors}


def test_gpt_oss_120b_q4_k_m_types_and_bytes_by_hand() -> None:
    b = build(read_config(CONFIG), Mix.Q4_K_M)
    t = _table(b)
    # 2,880 = 11 × 256 + 64: no Q4_K or Q6_K block fits a row, so llama.cpp's tensor_type_fallback gives Q5_0 / Q8_0.
    assert t["blk.0.ffn_gate_exps.weight"] == ((2880, 2880, 128), "Q5_0")
    assert t["blk.0.ffn_up_exps.weight"][1] == "Q5_0"
    assert t["blk.0.ffn_down_exps.weight"][1] == "Q8_0"  # use_more_bits(0, 36): Q6_K, fallen back
    assert t["blk.4.ffn_down_exps.weight"][1] == "Q5_0"  # not use_more_bits: Q4_K, fallen back
    assert t["blk.6.attn_v.weight"][1] == "Q8_0" and t["blk.5.attn_v.weight"][1] == "Q5_0"
    assert t["blk.0.attn_q.weight"][1] == t["blk.0.attn_k.weight"][1] == "Q5_0"
    assert t["blk.0.attn_output.weight"] == ((4096, 2880), "Q4_K")  # 4,096 rows fill 16 blocks
    assert t["token_embd.weight"][1] == "Q5_0" and t["output.weight"][1] == "Q8_0"
    assert t["blk.0.ffn_gate_inp.weight"] == ((2880, 128), "F32")
    assert type_counts(b) == {"F32": 433, "Q5_0": 181, "Q8_0": 37, "Q4_K": 36}
    q5, q8, q4k = Fraction(22, 32), Fraction(34, 32), Fraction(144, 256)
    more = [i for i in range(36) if i < 4 or i >= 31 or (i - 4) % 3 == 2]
    assert len(more) == 18
    total = 2880 * 201088 * (q5 + q8)
    for i in range(36):
        wide = q8 if i in more else q5
        total += (2880 * 4096 + 2880 * 512) * q5 + 4096 * 2880 * q4k + 2 * 2880 * 2880 * 128 * q5
        total += 2880 * 512 * wide + 2880 * 2880 * 128 * wide
    total += 4 * (36 * (2 * 2880 + 4096 + 2 * 512 + 2880 + 64 + 2880 * 128 + 128 + 3 * 2880 * 128) + 2880)
    assert b.tensor_bytes() == total == 87_837_965_568


def test_gpt_oss_120b_mxfp4_is_the_published_size_and_warns_only_otherwise() -> None:
    b = build(read_config(CONFIG), Mix.MXFP4_MOE)
    assert type_counts(b) == {"F32": 433, "Q8_0": 146, "MXFP4": 108}
    q8, mx = Fraction(34, 32), Fraction(17, 32)
    total = 2 * 2880 * 201088 * q8 + 36 * (2 * 2880 * 4096 + 2 * 2880 * 512) * q8 + 108 * 2880 * 2880 * 128 * mx
    total += 4 * (36 * (2 * 2880 + 4096 + 2 * 512 + 2880 + 64 + 2880 * 128 + 128 + 3 * 2880 * 128) + 2880)
    assert b.tensor_bytes() == total == 63_374_323_968
    assert requantized_experts(b) is None
    warned = requantized_experts(build(read_config(CONFIG), Mix.Q4_K_M))
    assert warned is not None
    assert "108 expert tensors in MXFP4; this header gives them 90 Q5_0, 18 Q8_0" in warned
    assert "'requantizing from type MXFP4 is disabled'" in warned and "007dbbf3fd17" in warned
    assert requantized_experts(build(read_config(REPO / "examples" / "configs" / "qwen3-30b-a3b.json"),
                                     Mix.Q4_K_M)) is None  # not gpt-oss: its experts are not published MXFP4


def test_synth_warns_on_stderr_and_in_json(tmp_path: Path) -> None:
    r = invoke("synth", str(CONFIG), "--mix", "Q4_K_M", "-o", str(tmp_path / "x.gguf"))
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("passprice: warning: gpt-oss publishes its 108 expert tensors in MXFP4")
    assert "87,837,965,568 bytes of weights (433 F32, 181 Q5_0, 37 Q8_0, 36 Q4_K)" in r.stdout
    j = invoke("synth", str(CONFIG), "--mix", "MXFP4", "-o", str(tmp_path / "y.gguf"), "--json")
    assert j.exit_code == 0, j.output
    data = json.loads(j.stdout)
    assert (data["tensor_bytes"], data["warning"]) == (63_374_323_968, None)


def test_one_token_row_reads_exactly_k_experts() -> None:
    import numpy as np

    skewed = Router(128, 8, 0.453125, 0.85)
    assert skewed.distinct(1) == 8.0 and skewed.distinct(1.0) == 8.0
    assert list(skewed.distinct(np.array([1.0, 2.0]))) == [8.0, skewed.distinct(2.0)]
    assert 8.0 < skewed.distinct(2.0) < 16.0


def test_experts_line_says_mean_over_routing_and_the_glossary_defines_it() -> None:
    r = invoke("price", "qwen3-30b-a3b-h200")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("  experts "))
    assert "(8 a token), the mean over routing: 12.95 GB" in line and "expected" not in line
    assert glossary.lookup("mean over routing").name == "routing"
    assert "not a serving stack's expected price" in glossary.lookup("routing").long


def test_a_lock_of_the_serving_with_other_options_is_named_where_it_does_not_apply(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    made = invoke("lock", "qwen3-30b-a3b-mi300x", "--best", "--routing", "qwen3-30b-a3b-measured", "-o",
                  str(root / "locks" / "q3m-best.lock.toml"), root=root)
    assert made.exit_code == 0, made.output
    # With the options it pinned, it applies
    under = invoke("best", "qwen3-30b-a3b-mi300x", "--routing", "qwen3-30b-a3b-measured", root=root)
    assert "under lock q3m-best (locks/q3m-best.lock.toml): floors hold, and the price is the one q3m-best records" \
        in under.stdout
    assert "not applied" not in under.stdout
    # Without them, it does not, and the lock line says which field differs
    bare = invoke("best", "qwen3-30b-a3b-mi300x", root=root)
    assert bare.exit_code == 0, bare.output
    assert "  lock          no lock of this serving in locks/ applies\n                not applied: q3m-best " \
        "(locks/q3m-best.lock.toml) locks this serving as other options make it (pinned → priced: routing: " \
        "qwen3-30b-a3b-measured → uniform): a lock applies only to the serving it pinned, options and all" \
        in bare.stdout
    priced = invoke("price", "qwen3-30b-a3b-mi300x", "--batch", "8", "--json", root=root)
    assert json.loads(priced.stdout)["lock"]["not_applied"] == [{
        "lock": "q3m-best", "path": "locks/q3m-best.lock.toml",
        "serving": ["batch: 64 → 8", "routing: qwen3-30b-a3b-measured → uniform"]}]
    # A serving with no such lock says nothing more (the shipped registry)
    plain = invoke("price", "qwen3-30b-a3b-mi300x")
    assert "not applied" not in plain.stdout and "  lock          no lock of this serving in locks/\n" in plain.stdout


def test_batch_one_routing_change_reads_unmoved_in_review_and_audit(tmp_path: Path) -> None:
    base = copy_root(tmp_path / "b")
    made = invoke("lock", "qwen3-30b-a3b-h200", "--batch", "1", "-o", str(base / "locks" / "q3-b1.lock.toml"),
                  root=base)
    assert made.exit_code == 0, made.output
    head = tmp_path / "h" / "root"
    shutil.copytree(base, head)
    record = head / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = record.read_text(encoding="utf-8")
    assert text.count("\nvalue = 0.9\n") == 1
    record.write_text(text.replace("\nvalue = 0.9\n", "\nvalue = 0.85\n"), encoding="utf-8")
    review = invoke("diff", str(base), str(head), root=head)
    line = next(x for x in review.stdout.splitlines() if x.startswith("  q3-b1 ("))
    assert line.endswith("price): pins routing.hot_share as before the change, the price unmoved by it (1 token-row a "
                         "pass reads its 8 experts a layer whatever the routing): re-pin (passprice lock --update -o "
                         "locks/q3-b1.lock.toml; check --frozen fails until then)")
    assert "    tokens/s  2,096.3 → 2,096.3  (+0 %)" in review.stdout
    audit = invoke("audit", "qwen3-30b-a3b-h200", "--batch", "1", root=head)
    assert audit.exit_code == 0, audit.output
    assert ("  routing.hot_experts, routing.hot_share +0.000: 1 token-row a pass reads exactly its 8 experts a layer "
            "whatever the routing (D(1) = k), so no routing fact moves this price") in audit.stdout
    wide = invoke("audit", "qwen3-30b-a3b-h200", "--batch", "2", root=head)
    assert "D(1) = k" not in wide.stdout
