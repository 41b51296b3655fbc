"""The README's MoE-above-batch-1 figures checked by hand (session 41, walk58): a new user recomputing the quoted
figures from the GGUF header's tensor table and the card's facts, not from passprice's pricing modules.

Two statements did not hold as written, and are kept true here:

- gpt-oss-20b on one RTX 3090 (ggml-org/llama.cpp PR #20586, ``registry/measurements/llamacpp-pr20586-moe.toml``):
  "past B = 32 … the limit's [pass] stays near 13-15 ms". By hand the limit's pass is 12.47, 12.97, 13.68 and
  15.10 ms at B = 32 … 256 (memory: 1,302,341,376 B of dense weights, a 3,060 B embedding row a sequence, D(B) of 32
  expert indexes of 318,090,240 B each at 936 GB/s × streams.read 1; each sequence's cache, 12 full layers at 256
  positions and 12 windowed at 127, plus a position written a layer, 2,048 B a position a layer, at 936 GB/s ×
  streams.append 0.9145), and 26.00 ms at B = 512, where the integer array binds (7,209,861,120 multiply-adds a
  token-row, MXFP4 and Q8_0 two passes of the 4-bit array, the experts at 4 of 32, over 142 TMAC/s).
- "each distinct expert costs the pass 1.84 × what the limit charges for its bytes" (and DeepSeek-V2-Lite's "2.69 ×
  and 4.23 × the 0.139 ms its bytes cost the limit"): 1.84, 2.69 and 4.23 are against the limit's own rise a distinct
  expert (0.346 ms, 0.139 ms: a slope over D(B) that carries the caches of the rows added with it). The bytes alone:
  318,090,240 B / 936 GB/s = 0.340 ms (gpt-oss-20b: 1.87 ×) and 126,517,248 B (26 routed layers × 3 Q4_0 matrices of
  2,048 × 1,408 × 64 / 64 experts at 18 B a 32) / 936 GB/s = 0.135 ms (DeepSeek-V2-Lite: 2.77 × and 4.35 ×).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cli_helpers import REPO
from passprice.checkpoints import load_checkpoint
from passprice.gguf_records import TensorInfo
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.validate import validate

README = (REPO / "README.md").read_text(encoding="utf-8")
DESIGN = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")

#: GGML type id -> (elements a block, bytes a block), ggml-common.h's block structs (F32, Q4_0, Q8_0, MXFP4).
BLOCK = {0: (1, 4), 2: (32, 18), 8: (32, 34), 39: (32, 17)}
#: Passes of the 4-bit array a weight takes (DESIGN.md, the seed's array_passes): Q4_0 one, Q8_0 and MXFP4 two.
PASSES = {2: 1, 8: 2, 39: 2}
#: facts/cards/rtx_3090.toml: memory.bandwidth 936 GB/s, streams.read 1, streams.append 0.9145, array 142 TMAC/s.
BANDWIDTH, READ, APPEND, ARRAY = 936e9, 1.0, 0.9145, 142e12
#: PR #20586's master column (t/s 617db241a), B token-rows a pass -> tokens/s
MEASURED = {1: 238.89, 2: 283.62, 4: 339.24, 8: 507.06, 16: 808.75, 32: 1228.01, 64: 1671.74, 128: 2036.35,
            256: 3086.19, 512: 4739.20}  # fmt: skip


def _bytes(t: TensorInfo) -> int:
    elements, (per, size) = math.prod(t.dims), BLOCK[t.type_id]
    assert elements % per == 0, t.name
    return elements // per * size


@pytest.fixture(scope="module")
def limits() -> dict[int, tuple[float, str]]:
    """B -> (the limit's pass in ms, its binding term) of the ten PR #20586 runs, as `validate` prices them."""
    root = Root(REPO)
    runs = [r for r in load_runs(root) if r.id.startswith("pr20586.rtx_3090.gpt-oss-20b-mxfp4.ub")]
    return {r.run.batch: (r.run.batch / r.limit * 1e3, r.binds) for r in validate(root, runs=runs).rows}


def test_gpt_oss_20b_limit_past_32_rows_by_hand(limits: dict[int, tuple[float, str]]) -> None:
    header = load_checkpoint(Root(REPO), "gpt-oss-20b-mxfp4")
    experts = sum(_bytes(t) for t in header.tensors if "_exps" in t.name)
    embedding = next(t for t in header.tensors if t.name == "token_embd.weight")
    dense = sum(_bytes(t) for t in header.tensors if "_exps" not in t.name and t is not embedding)
    row = _bytes(embedding) // embedding.dims[1]
    assert (dense, row, experts // 32) == (1_302_341_376, 3_060, 318_090_240)
    # a sequence's cache at mean position 256: 12 full layers read 256, 12 windowed 127 (window 128), each writes one
    sequence = 2_048 * (12 * 256 + 12 * 127 + 24)
    by_hand = {}
    for b in (32, 64, 128, 256):
        distinct = 32 * (1 - (7 / 8) ** b)
        shared = dense + b * row + experts / 32 * distinct
        by_hand[b] = (shared / (BANDWIDTH * READ) + b * sequence / (BANDWIDTH * APPEND)) * 1e3
    # at B = 512 the integer array binds: every matrix a row crosses, the experts at 4 of 32, MXFP4/Q8_0 two passes
    macs = sum(math.prod(t.dims) * PASSES[t.type_id] * (4 / 32 if "_exps" in t.name else 1)
               for t in header.tensors if t is not embedding and t.type_id != 0)  # fmt: skip
    assert macs == 7_209_861_120
    by_hand[512] = 512 * macs / ARRAY * 1e3
    assert [round(by_hand[b], 2) for b in (32, 64, 128, 256, 512)] == [12.47, 12.97, 13.68, 15.1, 26.0]
    # at B = 256 every expert is read: 11.48 GB shared beside 2.42 GB of caches (2.43 before session 39's window55,
    # when a windowed layer read 128 positions, not 127: 9.486 MB a sequence, now 9,461,760 B + a 3,060 B row)
    assert (sequence, round(256 * sequence / 1e9, 2)) == (9_461_760, 2.42)
    assert round((dense + 256 * row + experts / 32 * 32 * (1 - (7 / 8) ** 256)) / 1e9, 2) == 11.48
    assert "(2.42 GB of caches beside 11.48 GB of" in README and "2.43 GB" not in README
    assert "(9.465 MB a sequence with its embedding row:" in DESIGN and "2.42 GB beside 11.48 GB" in DESIGN
    for b, ms in by_hand.items():
        assert limits[b][0] == pytest.approx(ms, rel=1e-12)
        assert limits[b][1] == ("array" if b == 512 else "memory")
    # the README says so (it said "the limit's stays near 13-15 ms" past B = 32, 512 included), and DESIGN.md too
    stays = "stays at 12.5-15.1 ms to B = 256 (26.0 ms at 512, where the integer array binds)"
    assert "where the\nlimit's " + stays in README
    assert "13-15 ms" not in README
    assert "pass " + stays in DESIGN


def test_a_distinct_expert_against_its_bytes_by_hand(limits: dict[int, tuple[float, str]]) -> None:
    # gpt-oss-20b: the measured pass over B = 1-16 against uniform D(B), as moe45 fits it
    bs = np.array([1, 2, 4, 8, 16], dtype=float)
    measured = bs / np.array([MEASURED[int(b)] for b in bs]) * 1e3
    d = 32 * (1 - (7 / 8) ** bs)
    slope = float(np.polyfit(d, measured, 1)[0])
    limit_slope = float(np.polyfit(d, np.array([limits[int(b)][0] for b in bs]), 1)[0])
    bytes_ms = 318_090_240 / (BANDWIDTH * READ) * 1e3
    assert (round(slope, 3), round(limit_slope, 3), round(bytes_ms, 3)) == (0.636, 0.346, 0.34)
    assert (round(slope / limit_slope, 2), round(slope / bytes_ms, 2)) == (1.84, 1.87)
    # DeepSeek-V2-Lite Q4_0: an expert index's bytes over its 26 routed layers (the first block is dense)
    lite = load_checkpoint(Root(REPO), "deepseek-v2-lite-q4_0")
    stacks = [t for t in lite.tensors if "_exps" in t.name]
    assert len(stacks) == 26 * 3 and {t.type_id for t in stacks} == {2}
    index = sum(_bytes(t) for t in stacks) // 64
    lite_ms = index / (BANDWIDTH * READ) * 1e3
    assert (index, round(lite_ms, 3)) == (126_517_248, 0.135)
    assert (round(0.374 / lite_ms, 2), round(0.588 / lite_ms, 2)) == (2.77, 4.35)
    for text in (
        "1.84 × the limit's own rise for one (0.346 ms: its 318,090,240 bytes over the 24 layers at the\n"
        "card's 936 GB/s are 0.340 ms, so 1.87 × them; the caches of the rows added with it the rest)",
        "2.69 × and 4.23 × the 0.139 ms the limit's own pass rises for one (its 126,517,248 bytes at 936 GB/s are\n"
        "0.135 ms: 2.77 × and 4.35 × them)",
    ):
        assert text in README
    # Qwen3-30B-A3B Q4_K_M (moe47, on an RTX 4090 at 1,008 GB/s, streams.read 1): 48 routed layers of Q4_K gate and
    # up and Q6_K down, 2,048 × 768 each an expert: 0.136 ms an expert index, where the limit's pass rises 0.139 ms
    qwen3 = load_checkpoint(Root(REPO), "qwen3-30b-a3b-q4_k_m")
    per = {12: (256, 144), 14: (256, 210)}  # Q4_K, Q6_K
    index = sum(math.prod(t.dims) // per[t.type_id][0] * per[t.type_id][1]
                for t in qwen3.tensors if "_exps" in t.name) // 128  # fmt: skip
    assert (index, round(index / 1008e9 * 1e3, 3)) == (137_134_080, 0.136)
    assert "the 0.139 ms the limit's pass rises an expert (its bytes alone, 137,134,080 B at 1,008 GB/s, 0.136 ms;" \
        in DESIGN
    assert "its bytes cost" not in DESIGN and "the bytes' price)" not in DESIGN
    assert "what the limit\ncharges for its bytes" not in README
    assert "the 0.139 ms its bytes cost the limit" not in README
