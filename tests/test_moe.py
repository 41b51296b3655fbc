"""Mixtures of experts priced from a routing record (issue 15): the expected distinct experts a pass reads, worked
out by hand; Qwen3-30B-A3B's batch-one bytes against a sum over its header's tensors; the routing's facts in "rests
on" and under a lock's floors; the refusals (``Routed`` without a record, ``BadRouting`` for one that does not fit);
the closed-form best batch equal to the seed's scan on a matrix of rooms, binds, drafts and host memory."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest

from cli_helpers import bad, copy_root, invoke, refused
from passprice import ggml
from passprice.checkpoints import load_checkpoint
from passprice.facts import Fact, Provenance
from passprice.registry import Root
from passprice.routing import Router, Routing, load_routing, mismatch
from passprice.serving import (
    BadRouting,
    ContextMix,
    ExpertStream,
    Routed,
    Serving,
    pass_shape,
    price_serving,
)
from synth import card, fact
from test_batching import ARRAY, MEMORY, SCALE, VECTOR, both, room_card, shape

REPO = Path(__file__).parent.parent
ROOT = Root(REPO)


def routing(hot: float = 1.0, share: float = 1.0, prov: Provenance = Provenance.ASSUMED, **kw: object) -> Routing:
    return Routing("test", "test", fact(hot, "1", prov, "hot"), fact(share, "1", prov, "share"), **kw)  # type: ignore


# --- the expected distinct experts, by hand -------------------------------------------------------------------------


def test_uniform_distinct_experts_e128_k8() -> None:
    r = Router(128, 8)
    # One token reads exactly its 8 experts; 8 and 64 tokens: 128 × (1 − (120 / 128)^T), exactly
    # 128 × (1 − 15^8 / 16^8) = 1,732,076,671 / 33,554,432 = 51.6199… at 8, and 125.9423… at 64.
    assert r.distinct(1) == 8.0
    assert r.distinct(8) == pytest.approx(1_732_076_671 / 33_554_432, rel=1e-15)
    assert r.distinct(8) == pytest.approx(51.619_907_349, rel=1e-10)
    assert r.distinct(64) == pytest.approx(128 * (1 - (15 / 16) ** 64), rel=1e-15)
    assert r.distinct(64) == pytest.approx(125.942_349_267, rel=1e-10)
    assert r.distinct(10**6) == 128.0


def test_skewed_distinct_experts_by_hand() -> None:
    # A hot set of a quarter of 64 experts (16) takes 0.75 of 4 choices a token: p = 4 × 0.75 / 16 = 0.1875 each;
    # the other 48 take 0.25: p = 4 × 0.25 / 48 = 1 / 48. Σ p_e = 16 × 0.1875 + 48 / 48 = 4.
    r = Router(64, 4, 0.25, 0.75)
    assert r.probabilities() == ((16.0, 0.1875), (48.0, 1 / 48))
    assert r.distinct(1) == pytest.approx(4.0, rel=1e-15)
    assert r.distinct(10) == pytest.approx(16 * (1 - 0.8125**10) + 48 * (1 - (47 / 48) ** 10), rel=1e-15)
    # Skew reads fewer distinct experts than uniform routing at the same tokens.
    assert r.distinct(10) < Router(64, 4).distinct(10)
    assert Router(64, 4, 0.25, 0.25).distinct(10) == pytest.approx(Router(64, 4).distinct(10), rel=1e-15)


def test_impossible_routings() -> None:
    # A hot set of 2 of 64 experts cannot take 0.75 of 4 choices: p = 3 / 2 > 1 (an expert is chosen once a token).
    # The bound it must meet is named (walkthrough 19): s ≤ h·E / k = 2 / 4.
    problem = Router(64, 4, 2 / 64, 0.75).problem() or ""
    assert "would be chosen with probability 1.5" in problem
    assert problem.endswith("for that hot set hot_share must be at most 0.5")
    assert "hot_experts 1" in (Router(64, 4, 1.0, 0.5).problem() or "")
    assert mismatch(routing(experts=128), 64, 4) == "test describes a router of 128 experts, the checkpoint has 64"
    assert mismatch(routing(used=8), 64, 4) == "test describes 8 experts a token, the checkpoint routes 4"
    assert mismatch(routing(), 64, 4) is None


def test_registered_records() -> None:
    uniform = load_routing(ROOT, "uniform")
    assert uniform.uniform and uniform.hot_share.provenance is Provenance.ASSUMED
    measured = load_routing(ROOT, "qwen3-30b-a3b-measured")
    assert (measured.hot_experts.value, measured.hot_share.value) == (58 / 128, 0.9)
    assert measured.hot_share.provenance is Provenance.MEASURED
    assert (measured.experts, measured.used) == (128, 8)


# --- Qwen3-30B-A3B at batch one ---------------------------------------------------------------------------------------


def test_qwen3_30b_a3b_batch_one_bytes_against_the_header() -> None:
    h = load_checkpoint(ROOT, "qwen3-30b-a3b-q4_k_m")
    s = Serving(contexts=ContextMix.uniform(1024.0, 2048), routing=load_routing(ROOT, "uniform"))
    cost = price_serving(h, card(), s)
    # One token reads its 8 of 128 experts in each of 48 layers: 8 / 128 of every expert stack; every other tensor
    # once (attention, norms, routers, the head), and one row of the embedding table.
    experts = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in h.tensors if "_exps." in t.name)
    others = [t for t in h.tensors if "_exps." not in t.name and t.name != "token_embd.weight"]
    dense = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in others)
    table = h.tensor("token_embd.weight")
    assert table is not None
    row = ggml.ggml_type(table.type_id).bytes_for(table.dims[0])
    assert experts % 128 == 0
    assert cost.weight_bytes == dense + row + experts // 128 * 8
    assert cost.routed is not None
    assert (cost.routed.tokens, cost.routed.distinct, cost.routed.bytes) == (1.0, 8.0, experts // 128 * 8)
    # 1,097,072,640 B of experts: 48 layers × 8 × (2 × 2048 × 768 at Q4_K + 768 × 2048 at Q4_K or Q6_K).
    q4, q6 = 2048 * 768 * 144 // 256, 2048 * 768 * 210 // 256
    from passprice.typemix import use_more_bits

    by_hand = sum(8 * (2 * q4 + (q6 if use_more_bits(i, 48) else q4)) for i in range(48))
    assert cost.routed.bytes == by_hand == 1_097_072_640
    # Every row multiplies its 8 experts, 8 / 128 of each stack's elements (2048 × 768 × 8 = 12,582,912), at its
    # passes (Q4_K one, Q6_K two); and every dense matrix: q, k, o one pass, v one or two, the head (Q6_K) two.
    experts_array = sum(2048 * 768 * 8 * (1 + 1 + (2 if use_more_bits(i, 48) else 1)) for i in range(48))
    assert experts_array == 2_113_929_216
    dense_array = sum(
        2048 * 4096 + 2048 * 512 + 2048 * 512 * (2 if use_more_bits(i, 48) else 1) + 4096 * 2048 for i in range(48)
    )
    assert cost.array_macs == experts_array + dense_array + 2 * 2048 * 151936
    # The vector units' work, every term by hand. The router, a layer: its 2048 × 128 F32 gate (ffn_gate_inp) is
    # multiplied by the row on the vector units (rows × embedding × experts = 262,144 multiply-adds), then the gating
    # function scores each of the 128 logits at the softmax's 7.5 multiply-add slots (SOFTMAX_MACS_PER_SCORE: 960).
    router = 48 * (1 * 2048 * 128 + 7.5 * 128)
    assert router == 12_628_992
    assert pass_shape(h, s).float_macs == (("F32", 48 * 2048 * 128),)  # the gate is the only float matrix
    # Norms: a sum of squares and a scale per element (2 each) of attn_norm and ffn_norm (2048), the q and k norms
    # (128 each), a layer, and output_norm (2048) once.
    norms = 2 * (48 * (2048 + 128 + 128 + 2048) + 2048)
    assert norms == 421_888
    # Attention at mean position 1024: 32 query heads score each position (7.5 slots a score) and multiply-add its
    # 128-wide key and 128-wide value (32 × (128 + 128) = 8,192 a position), a layer.
    attention = 48 * (7.5 * 32 * 1024 + 32 * (128 + 128) * 1024)
    assert attention == 414_449_664
    assert cost.vector_macs == router + norms + attention == 427_500_544


def test_more_sequences_read_more_experts() -> None:
    h = load_checkpoint(ROOT, "qwen3-30b-a3b-q4_k_m")
    s = Serving(contexts=ContextMix.uniform(1024.0, 2048), routing=load_routing(ROOT, "uniform"))
    one = price_serving(h, card(), s)
    many = price_serving(h, card(), attrs.evolve(s, batch=64))
    assert one.routed is not None and many.routed is not None
    per_expert = one.routed.bytes / 8.0
    assert many.routed.distinct == pytest.approx(128 * (1 - (15 / 16) ** 64), rel=1e-15)
    assert many.routed.bytes == pytest.approx(per_expert * many.routed.distinct, rel=1e-15)
    assert many.weight_bytes - one.weight_bytes == pytest.approx(
        many.routed.bytes - one.routed.bytes + 63 * 2048 * 144 / 256, rel=1e-12
    )
    # The measured skew reads fewer distinct experts than uniform routing at batch 64.
    skew = price_serving(h, card(), attrs.evolve(s, batch=64, routing=load_routing(ROOT, "qwen3-30b-a3b-measured")))
    assert skew.routed is not None and skew.routed.distinct < many.routed.distinct
    p_hot, p_cold = 8 * 0.9 / 58, 8 * 0.1 / 70
    assert skew.routed.distinct == pytest.approx(58 * (1 - (1 - p_hot) ** 64) + 70 * (1 - (1 - p_cold) ** 64), 1e-12)


# --- refusals and facts -----------------------------------------------------------------------------------------------


def test_without_a_routing_record_moe_is_refused_by_name() -> None:
    h = load_checkpoint(ROOT, "qwen3-30b-a3b-q4_k_m")
    with pytest.raises(Routed) as e:
        price_serving(h, card(), Serving(contexts=ContextMix.uniform(10.0, 100)))
    assert e.value.fields() == {"expert_count": 128}
    assert "facts/routing/NAME.toml" in str(e.value) and "--routing NAME" in str(e.value)
    out = refused("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h200_sxm_141gb", name="Routed")
    assert out["expert_count"] == 128


def test_bad_routing_is_refused_by_name() -> None:
    h = load_checkpoint(ROOT, "gpt-oss-20b-mxfp4")
    s = Serving(contexts=ContextMix.uniform(10.0, 100), routing=load_routing(ROOT, "qwen3-30b-a3b-measured"))
    with pytest.raises(BadRouting) as e:
        pass_shape(h, s)
    assert e.value.detail == "qwen3-30b-a3b-measured describes a router of 128 experts, the checkpoint has 32"
    # On the command line the record's checkpoints (qwen3-30b-a3b-q4_k_m only) refuse the serving first, by name.
    out = refused("price", "--checkpoint", "gpt-oss-20b-mxfp4", "--card", "h200_sxm_141gb", "--routing",
                  "qwen3-30b-a3b-measured", name="OutOfScope")
    assert (out["record"], out["checkpoint"]) == ("qwen3-30b-a3b-measured", "gpt-oss-20b-mxfp4")


def test_a_refused_shape_is_refused_again_from_memory_with_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sweep of a registry of thousands of servings meets the same refusal for every serving of a mixture of experts
    # naming no routing: the first is worked out, the rest raised again, by name and with the same words, and a
    # serving that differs in a field the shape reads is worked out anew.
    from passprice import serving

    h = load_checkpoint(ROOT, "qwen3-30b-a3b-q4_k_m")
    s = Serving(contexts=ContextMix.uniform(10.0, 100))
    with pytest.raises(Routed) as first:
        serving.shape_of(h, s)
    calls = []
    real = serving._stored_shape
    monkeypatch.setattr(serving, "_stored_shape", lambda *a: calls.append(a) or real(*a))
    for batch in (1, 7):  # the batch is not read by the shape
        with pytest.raises(Routed) as again:
            serving.shape_of(h, attrs.evolve(s, batch=batch))
        assert str(again.value) == str(first.value) and again.value.fields() == {"expert_count": 128}
        assert len(again.traceback) <= 2  # no frames of the first refusal's build kept
    assert calls == []
    with pytest.raises(Routed):
        serving.shape_of(h, Serving(contexts=ContextMix.uniform(20.0, 100)))
    assert len(calls) == 1


def test_a_dense_price_does_not_rest_on_routing() -> None:
    plain = json.loads(invoke("price", "r1-qwen7b-h200", "--json").output)
    assert "routing" not in plain and not any(p.startswith("routing.") for p in plain["rests_on"])
    # The new user's run: --routing on a dense checkpoint was silently ignored. It is refused by name instead (the
    # likelier case is the wrong checkpoint), with what to do.
    out = refused("price", "r1-qwen7b-h200", "--routing", "uniform", "--no-lock", name="BadRouting")
    assert out["routing"] == "uniform" and out["detail"].startswith("the checkpoint is dense (no expert_count)")
    refused("max-batch", "r1-qwen7b-h200", "--routing", "uniform", "--no-lock", name="BadRouting")


def test_max_batch_of_a_mixture_of_experts_needs_no_routing() -> None:
    # How many sequences fit reads what is held (every expert, whatever the routing) and each row's on-chip bytes:
    # no routing record is asked for (Routed was refused before), and every routing gives the same answer.
    args = ("max-batch", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h200_sxm_141gb", "--json")
    plain = json.loads(invoke(*args).output)["max_batch"]
    for routing in ("uniform", "qwen3-30b-a3b-measured"):
        assert json.loads(invoke(*args, "--routing", routing).output)["max_batch"] == plain
    # By hand: ⌊(141e9 − held once) / held per sequence⌋, as kv's fit computes it (its own routing-free shape).
    kv = json.loads(invoke("kv", "qwen3-30b-a3b-q4_k_m", "--contexts", "4k", "--json").output)
    fit = next(f for f in kv["contexts"][0]["fits"] if f["card"] == "h200_sxm_141gb")
    assert plain == fit["max_batch"] == (141e9 - fit["held_shared"]) // fit["held_per_sequence"]
    with_host = json.loads(invoke(*args, "--host-memory").output)["max_batch"]
    assert with_host == json.loads(invoke(*args, "--host-memory", "--routing", "uniform").output)["max_batch"]
    assert with_host > plain
    # The price itself still needs one: which experts a pass reads depends on routing.
    refused("price", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h200_sxm_141gb", name="Routed")


def test_rests_on_and_lock_floors(tmp_path: Path) -> None:
    args = ("--checkpoint", "qwen3-30b-a3b-q4_k_m", "--card", "h200_sxm_141gb")
    data = json.loads(invoke("price", *args, "--routing", "uniform", "--json").output)
    assert data["rests_on"]["routing.hot_experts"] == data["rests_on"]["routing.hot_share"] == "assumed"
    assert data["provenance"] == "assumed" and data["weakest"] == ["routing.hot_experts", "routing.hot_share"]
    assert data["routing"]["distinct"] == 8.0 and data["routing"]["routing"] == "uniform"
    # A lock requiring routing.* >= measured: written on the measured skew, it holds; priced on uniform, refused.
    root = copy_root(tmp_path)
    lock = root / "locks" / "q3.lock.toml"
    r = invoke("lock", *args, "--routing", "qwen3-30b-a3b-measured", "--require", "routing.hot_experts=measured",
               "--require", "routing.hot_share=measured", "-o", str(lock), root=root)
    assert r.exit_code == 0, r.output
    assert invoke("reproduce", str(lock), root=root).exit_code == 0
    r = invoke("price", *args, "--routing", "qwen3-30b-a3b-measured", "--lock", str(lock), "--json", root=root)
    assert r.exit_code == 0, r.output
    out = refused("price", *args, "--routing", "uniform", "--lock", str(lock), root=root, name="LockFloor")
    assert {o["path"] for o in out["offending"]} == {"routing.hot_experts", "routing.hot_share"}
    assert all(o["provenance"] == "assumed" and o["floor"] == "measured" for o in out["offending"])
    bad("lock", *args, "--routing", "no-such-record", "-o", str(tmp_path / "x.lock.toml"), root=root,
        says="routing record 'no-such-record': not found")


# --- the best batch equals the scan ---------------------------------------------------------------------------------


def moe_shape(router: Router, drafts: bool, per_expert: float = 40e6, **kw: object) -> object:
    """A pass shape whose routed experts take ``per_expert`` bytes an expert (all layers), the main layers routing
    every sequence's rows together and, with drafts, an MTP block reading its experts once a drafting step."""
    rows = 4 if drafts else 1
    streams = [ExpertStream(per_expert, float(rows), 1.0, router)]
    if drafts:
        streams.append(ExpertStream(per_expert / 40, 1.0, 3.0, router))
        kw = {"emitted": 2.4875, "rows": 4, "array": 32e9, "vector": 1.6e9, "scale": 1.2e8, **kw}
    sh = shape(**kw)  # type: ignore[arg-type]
    return attrs.evolve(sh, experts=tuple(streams), held_shared=sh.held_shared + router.experts * per_expert)


ROUTERS = [Router(128, 8), Router(64, 4, 0.25, 0.75), Router(256, 8)]


@pytest.mark.parametrize("room", [1, 2, 7, 100, 1000, 5000])
@pytest.mark.parametrize("bind", ["memory", "array", "vector", "scale"])
@pytest.mark.parametrize("drafts", [False, True])
@pytest.mark.parametrize("which", range(len(ROUTERS)))
def test_moe_best_equals_scan_without_host(room: int, bind: str, drafts: bool, which: int) -> None:
    figures = {"memory": MEMORY, "array": ARRAY, "vector": VECTOR, "scale": SCALE}[bind]
    rtr = ROUTERS[which]
    sh = moe_shape(rtr, drafts)
    held = sh.held_shared  # type: ignore[attr-defined]
    c = card(**room_card(room, shared=held, **figures), on_chip_capacity=1e12)
    best = both(sh, c, False)  # type: ignore[arg-type]
    assert 1 <= best.batch <= room


@pytest.mark.parametrize(("room", "host_room"), [(r, h) for r in (1, 5, 60) for h in (0, 1, 4, 30)] + [(3000, 3)])
@pytest.mark.parametrize("link", [1e9, 64e9])
@pytest.mark.parametrize("drafts", [False, True])
def test_moe_best_equals_scan_with_host(room: int, host_room: int, link: float, drafts: bool) -> None:
    per = 100e6
    sh = moe_shape(Router(128, 8, 0.453125, 0.9), drafts, per_sequence=per)
    held = sh.held_shared  # type: ignore[attr-defined]
    c = card(
        host=True,
        **room_card(room, per_sequence=per, shared=held, **MEMORY),
        host_capacity=host_room * per + per / 2,
        host_read=link,
        host_write=link,
        on_chip_capacity=1e12,
    )
    best = both(sh, c, True)  # type: ignore[arg-type]
    assert best.batch <= room + host_room


def test_moe_best_is_not_the_largest_batch_when_experts_dominate() -> None:
    # With experts ten times the dense weights, memory-bound tokens/s still rises with the batch (the experts'
    # bytes saturate at E), so a memory-bound best is again the largest batch that fits; the scan agrees.
    sh = moe_shape(Router(128, 8), False, per_expert=400e6)
    held = sh.held_shared  # type: ignore[attr-defined]
    best = both(sh, card(**room_card(300, shared=held, **MEMORY), on_chip_capacity=1e12), False)  # type: ignore
    assert best.binds.value == "memory" and best.batch == 300
    assert math.isclose(best.weight_bytes, 4e9 + 300 * 4096 + 400e6 * Router(128, 8).distinct(300), rel_tol=1e-12)


def fact_of(value: float) -> Fact:
    return fact(value, "1", Provenance.MEASURED, "test")


# --- every consumer -----------------------------------------------------------------------------------------------


def test_sweep_of_moe_servings_equals_the_scalar_pricer() -> None:
    from passprice.sweep import Grid
    from test_sweep import compare

    grid = Grid(
        servings=("qwen3-30b-a3b-h200", "gpt-oss-20b-mi300x", "qwen3next-80b-a3b-h200", "deepseek-v3-mi300x"),
        batches=(0, 1, 7, 64, 600, 5000),
        positions=(512.0, 2048.0, 3000.0),
    )
    rows = compare(grid)
    priced = [r for r in rows if r["refusal"] is None]
    assert priced and {r["provenance"] for r in priced} == {"estimated", "assumed"}
    assert {r["refusal"] for r in rows if r["serving"] == "deepseek-v3-mi300x"} == {"Empty", "NotResident"}


def test_a_step_of_identical_decodes_is_the_moe_pass() -> None:
    from passprice.steps import StepPricer, StepRows
    from test_simulate import assert_same, resolved, seed_pass

    r = resolved("qwen3-30b-a3b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    for batch in (1, 7, 64):
        for position in (0.0, 1000.0, 4095.0):  # the last position of its 4,096 limit (4,096: BadContexts)
            step = pricer.price(StepRows.build(decode_positions=[position] * batch))
            assert_same(seed_pass(r, batch, position), step, batch, f"batch {batch} position {position}")
    # A prefill chunk of 2,048 rows routes them all together: nearly every expert, once.
    (main,) = pricer.shape.experts
    chunk = pricer.price(StepRows.build(prompt_starts=[0.0], prompt_rows=[2048], prompt_last=[True]))
    one = pricer.price(StepRows.build(prompt_starts=[0.0], prompt_rows=[1], prompt_last=[True]))
    rtr = main.router
    assert chunk.weight_bytes - one.weight_bytes == pytest.approx(
        main.bytes * (rtr.distinct(2048.0) - rtr.distinct(1.0)) + 2047 * 2048 * 144 / 256, rel=1e-12
    )


def test_draft_rows_route_too_deepseek_v3_mtp() -> None:
    # DeepSeek-V3 on a roomy synthetic card, drafting one token with its MTP block (block 61): the main layers route
    # each sequence's 2 rows, the MTP block its one drafting row. At batch 1: D(2) = 256 × (1 − (31 / 32)²) = 15.75
    # experts a main layer, D(1) = 8 in the MTP block.
    from passprice.drafts import load_draft_method
    from passprice.serving import Draft

    h = load_checkpoint(ROOT, "deepseek-v3-q4_k_m")
    method = load_draft_method(ROOT, "deepseek-v3-mtp")
    s = Serving(contexts=ContextMix.uniform(100.0, 200), routing=load_routing(ROOT, "uniform"),
                draft=Draft(1, method.first(1), None, "deepseek-v3-mtp"))
    cost = price_serving(h, card(), s)
    per_layer: dict[int, int] = {}
    for t in h.tensors:
        if "_exps." in t.name:
            layer = int(t.name.split(".")[1])
            per_layer[layer] = per_layer.get(layer, 0) + ggml.tensor_bytes(t.type_id, t.dims) // 256
    assert sorted(per_layer) == list(range(3, 62))  # 3 dense leading layers; the MTP block routes too
    main = sum(b for layer, b in per_layer.items() if layer < 61)
    assert Router(256, 8).distinct(2.0) == 15.75
    assert cost.routed is not None and cost.routed.distinct == 15.75
    assert cost.routed.bytes == main * 15.75 + per_layer[61] * 8.0
    no_draft = price_serving(h, card(), attrs.evolve(s, draft=None))
    assert no_draft.routed is not None and no_draft.routed.bytes == main * 8.0


def test_speculate_and_roofline_and_kv_on_moe() -> None:
    r = invoke("speculate", "deepseek-v3-h200", "--card", "b200", "--tokens", "1", "--batch", "1", "--json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1
    assert {row["refusal"] for row in out["rows"]} == {"NotResident"}  # 411 GB of weights on a 180 GB card
    # The roofline of an MoE serving: its bind change found by pricing, where a scan of every batch puts it.
    r = invoke("roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200", "--limit", "512", "--json")
    line = json.loads(r.output)
    assert line["routed"] is True and line["crossing"] is None
    # kv: what fits does not depend on routing; it equals max-batch with a contiguous cache at that context.
    kv = json.loads(invoke("kv", "qwen3-30b-a3b-q4_k_m", "--contexts", "4k", "--json").output)
    fit = next(f for f in kv["contexts"][0]["fits"] if f["card"] == "h200_sxm_141gb")
    most = invoke("max-batch", "qwen3-30b-a3b-h200", "--limit", "4096", "--contiguous", "--json")
    assert fit["max_batch"] == json.loads(most.output)["max_batch"]


def test_roofline_change_of_an_moe_serving_is_the_scan() -> None:
    from passprice.roofline import roofline

    h = load_checkpoint(ROOT, "qwen3-30b-a3b-q4_k_m")
    c = card(array=2e12, memory_capacity=40e9)
    s = Serving(contexts=ContextMix.uniform(256.0, 512), routing=load_routing(ROOT, "uniform"))
    line = roofline(h, c, s)
    sh = pass_shape(h, s)
    binds = [sh.cost_split(c, b, False).binds.value for b in range(1, line.max_batch + 1)]
    first = next(i + 1 for i, v in enumerate(binds) if v != "memory")
    (change,) = line.changes
    assert change.batch == first and change.predicted is None
    assert all(v == "memory" for v in binds[: first - 1]) and all(v != "memory" for v in binds[first - 1 :])


def test_diff_of_a_routing_record_reaches_its_lock(tmp_path: Path) -> None:
    from passprice.review import diff

    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    record = head / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = record.read_text(encoding="utf-8")
    record.write_text(text.replace('value = 0.9\nunit = "1"\nprovenance = "measured"',
                                   'value = 0.8\nunit = "1"\nprovenance = "estimated"'), encoding="utf-8")
    d = diff(Root(head), str(base), str(head))
    (f,) = d.files
    assert (f.kind, f.name) == ("routing", "qwen3-30b-a3b-measured")
    assert [(c.lock_path, c.weakened) for c in f.facts] == [("routing.hot_share", True)]
    (lock,) = d.locks
    assert lock.name == "qwen3-30b-a3b-h200" and lock.breaks
    assert d.exit_status == 1


def test_a_mixtral_header_prices_two_of_eight_experts_of_the_dense_ffn_width(tmp_path: Path) -> None:
    """Mixtral (arch llama) carries no expert_feed_forward_length: its experts are feed_forward_length wide, as
    llama.cpp sizes them, so a routed row's widest activations are its two experts' 2 × 14,336."""
    from passprice.gguf_header import read_header
    from passprice.synthetic import build, header_bytes, read_config
    from passprice.typemix import Mix

    built = build(read_config(REPO / "examples" / "configs" / "mixtral-8x7b.json"), Mix.Q4_K_M)
    path = tmp_path / "mixtral.gguf"
    path.write_bytes(header_bytes(built))
    h = read_header(path)
    assert h.meta_int("expert_feed_forward_length") is None and h.meta_int("feed_forward_length") == 14336
    s = Serving(contexts=ContextMix.uniform(1024.0, 2048), routing=load_routing(ROOT, "uniform"))
    cost = price_serving(h, card(), s)
    # One row: its f32 residual (4 × 4096 B) and its widest activations, one word each: 2 experts × 14,336 + 4096.
    assert cost.on_chip_bytes == 4 * 4096 + (2 * 14336 + 4096) == 49_152
    experts = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in h.tensors if "_exps." in t.name)
    assert cost.routed is not None and (cost.routed.distinct, cost.routed.bytes) == (2.0, experts / 8 * 2)
