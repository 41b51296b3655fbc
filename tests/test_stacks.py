"""Serving stacks (issue 14): the expected price by hand, the refusal of a stack that lacks a fact, the tensor-core path
of the limit, and the limit unchanged without a stack."""

from __future__ import annotations

import json

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke, refused
from passprice.facts import Fact, Provenance
from passprice.registry import Root
from passprice.serving import ContextMix, Serving, ServingBind, pass_shape, price_serving
from passprice.stacks import BeyondStack, Stack, StackLacks, expected_pricing, load_stack, price_expected
from synth import card, fact
from test_serving import (
    BIAS_BYTES,
    EMBD_ROW,
    LAYER_ARRAY,
    LAYER_BYTES,
    LAYER_SCALE,
    OUTPUT,
    OUTPUT_ARRAY,
    OUTPUT_NORM,
    OUTPUT_SCALE,
    dense,
    per_position,
)

P = Provenance


def seconds(value: float) -> Fact:
    return Fact(value, value, "s", P.MEASURED, "test: a stack's fixed cost")


def share(value: float) -> Fact:
    return Fact(value, value, "1", P.DERIVED, "test: a stack's share", derivation="test")


def counted(value: int, unit: str) -> Fact:
    return Fact(float(value), value, unit, P.ESTIMATED, "test: where the stack's facts hold")


def ranged(rows: tuple[int, int] = (1, 10**6), positions: tuple[int, int] = (0, 10**6)) -> dict[str, Fact]:
    """``range.*`` facts: the token-rows a pass and the cached positions a stack's facts hold on."""
    return {
        "range.rows.min": counted(rows[0], "rows"),
        "range.rows.max": counted(rows[1], "rows"),
        "range.position.min": counted(positions[0], "positions"),
        "range.position.max": counted(positions[1], "positions"),
    }


def stack(serial: float = 0.0, integer: str = "array", **shares: float) -> Stack:
    """A stack paying 10 µs a pass and 5 µs a layer, every share 1 unless given, ``serial`` as given, its facts
    holding on 1 … 10^6 token-rows and positions 0 … 10^6."""
    names = ("read", "rewrite", "append", "host", "array", "float", "vector", "scale")
    facts = {f"share.{k}": share(1.0) for k in names}
    facts.update({f"share.{k}": share(v) for k, v in shares.items()})
    facts["overhead.pass"] = seconds(10e-6)
    facts["overhead.layer"] = seconds(5e-6)
    facts["terms.serial"] = Fact(serial, serial, "1", P.ESTIMATED, "test: serial share")
    facts["memory.reserved"] = Fact(1e6, 1, "MB", P.ESTIMATED, "test: reserved")
    facts.update(ranged())
    return Stack("test-stack", "a test stack", integer, "tensor", facts)


POS, LIM = 100, 200
SERVING = Serving(contexts=ContextMix.uniform(float(POS), LIM))
# The dense model's pass at batch 1 (tests/test_serving.py's figures, by hand): bytes and work.
WEIGHTS = (LAYER_BYTES + BIAS_BYTES) + LAYER_BYTES + OUTPUT_NORM + OUTPUT + EMBD_ROW
SEQUENCE = 2 * per_position(2) * POS + 2 * per_position(2) * 1  # its cache read, its rows written
ARRAY = 2 * LAYER_ARRAY + OUTPUT_ARRAY
SCALE = 2 * LAYER_SCALE + OUTPUT_SCALE


def test_expected_price_by_hand_one_layer_overhead_one_share_max_and_sum() -> None:
    c = card()  # 1e12 B/s, every stream share 1; array 1e15, vector 1e14 MAC/s; scale 1e13 cycle/s
    shape = pass_shape(dense(), SERVING)
    assert shape.layers == 2
    limit = price_serving(dense(), c, SERVING)
    vector_s = limit.vector_s
    # The stack reaches half the card's stream rate on the weights: their seconds double; the cache's do not.
    memory_s = WEIGHTS / 0.5e12 + SEQUENCE / 1e12
    fixed = 10e-6 + 2 * 5e-6  # a pass, and each of its 2 blocks
    overlap = price_expected(dense(), c, SERVING, stack(read=0.5))
    e = overlap.expected
    assert e.memory_s == pytest.approx(memory_s, rel=1e-12)
    assert e.array_s == pytest.approx(ARRAY / 1e15, rel=1e-12) and e.scale_s == pytest.approx(SCALE / 1e13, rel=1e-12)
    assert e.vector_s == vector_s  # share 1: the card's own rate
    assert overlap.fixed_s == pytest.approx(fixed, rel=1e-12)
    # Terms that overlap: the fixed cost plus the largest (memory), as the limit takes the largest alone.
    assert e.binds is ServingBind.MEMORY
    assert e.pass_s == pytest.approx(fixed + memory_s, rel=1e-12)
    assert e.tokens_per_s == pytest.approx(1.0 / (fixed + memory_s), rel=1e-12)
    assert overlap.ratio == pytest.approx(limit.pass_s / (fixed + memory_s), rel=1e-12)
    # Terms that add (terms.serial = 1): the fixed cost plus every term.
    added = price_expected(dense(), c, SERVING, stack(serial=1.0, read=0.5)).expected
    total = memory_s + ARRAY / 1e15 + vector_s + SCALE / 1e13
    assert added.pass_s == pytest.approx(fixed + total, rel=1e-12)
    # Half-way: the largest plus half the others.
    half = price_expected(dense(), c, SERVING, stack(serial=0.5, read=0.5)).expected
    assert half.pass_s == pytest.approx(fixed + memory_s + 0.5 * (total - memory_s), rel=1e-12)
    # The limit beside it is the seed's price, bit for bit.
    assert overlap.limit == limit and overlap.limit.pass_s == limit.memory_s


def test_integer_matrices_on_the_vector_units_and_a_share_of_them() -> None:
    c = card()
    e = price_expected(dense(), c, SERVING, stack(integer="vector", array=0.25)).expected
    # llama.cpp's mat-vec kernels: the integer matrices at a quarter of the card's vector rate, not its array's.
    assert e.array_s == pytest.approx(ARRAY / (1e14 * 0.25), rel=1e-12)


def test_the_stack_reserves_memory_and_rests_on_its_facts() -> None:
    c = card()
    e = price_expected(dense(), c, SERVING, stack(read=0.5)).expected
    assert e.capacity_bytes == 1e12 - 1e6
    paths = [p for p, _ in e.rests_on]
    # The card's facts the pass reads (a dense pass rewrites no state in place: no streams.rewrite), then the stack's.
    assert paths[:8] == [
        "memory.bandwidth",
        "memory.capacity",
        "streams.read",
        "streams.append",
        "array",
        "vector",
        "scale",
        "on_chip.capacity",
    ]
    assert set(paths[8:]) >= {
        "stack.overhead.pass",
        "stack.overhead.layer",
        "stack.terms.serial",
        "stack.memory.reserved",
        "stack.share.read",
        "stack.share.append",
        "stack.share.array",
        "stack.share.vector",
        "stack.share.scale",
    }
    assert "stack.share.rewrite" not in paths  # the dense model rewrites no state in place
    assert e.provenance is P.ESTIMATED  # terms.serial and memory.reserved are estimates


def test_a_per_card_fact_replaces_the_stacks_own() -> None:
    base = stack(read=0.5)
    own = attrs.evolve(base, cards={"synthetic": {"share.read": share(0.25)}})
    shape = pass_shape(dense(), SERVING)
    pricing, used = expected_pricing(own, card(), shape)
    assert pricing.read == 1e12 * 0.25
    assert ("stack.cards.synthetic.share.read", own.cards["synthetic"]["share.read"]) in used
    pricing_other, _ = expected_pricing(own, card(name="other"), shape)
    assert pricing_other.read == 1e12 * 0.5


def test_a_stack_that_lacks_a_fact_the_serving_needs_is_refused() -> None:
    no_rewrite = attrs.evolve(stack(), facts={k: v for k, v in stack().facts.items() if k != "share.rewrite"})
    # The dense model rewrites nothing: priced.
    price_expected(dense(), card(), SERVING, no_rewrite)
    # A hybrid rewrites its recurrent state in place every pass: refused, by name, with what to do.
    from test_serving import recurrent

    with pytest.raises(StackLacks) as e:
        price_expected(recurrent(), card(), Serving(contexts=ContextMix.uniform(10.0, 100)), no_rewrite)
    assert e.value.name == "StackLacks" and e.value.path == "share.rewrite"
    assert "has no share.rewrite fact" in str(e.value) and "rewrites a recurrent state" in str(e.value)
    assert e.value.to_json()["refusal"] == "StackLacks"


def test_the_registered_stack_refuses_a_hybrid_from_the_command_line() -> None:
    out = refused("price", "qwen35-27b-h200-mtp", "--stack", "llamacpp-cuda-2405", name="StackLacks")
    assert out["stack"] == "llamacpp-cuda-2405" and out["path"] == "share.rewrite"


def test_price_without_a_stack_is_unchanged_and_with_one_adds_the_expected_price() -> None:
    plain = invoke("price", "r1-qwen7b-h200")
    with_stack = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert plain.exit_code == 0 and with_stack.exit_code == 0
    # The limit's table and lines are printed exactly as without --stack, then the stack's lines, then the line of
    # the locks it was priced under.
    limit, _, lock_line = plain.stdout.rstrip("\n").rpartition("\n")
    assert lock_line.startswith("  lock ") and with_stack.stdout.endswith(lock_line + "\n")
    assert with_stack.stdout.startswith(limit + "\n")
    extra = with_stack.stdout[len(limit) :]
    assert "stack         llamacpp-cuda-2405" in extra and "× the limit's 996.1" in extra
    data = json.loads(invoke("price", "r1-qwen7b-h200", "--json").stdout)
    both = json.loads(invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert {k: both[k] for k in data} == data  # the limit's documented object, untouched
    assert both["stack"] == "llamacpp-cuda-2405"
    assert both["ratio"] == both["expected"]["tokens_per_s"] / both["tokens_per_s"]
    assert 0 < both["ratio"] < 1 and both["expected"]["pass_s"] > both["pass_s"]
    # The expected pass: its fixed seconds (28 blocks × overhead.layer + overhead.pass) plus its terms.
    st = load_stack(Root(REPO), "llamacpp-cuda-2405")
    layer = st.facts["overhead.layer"].value
    assert both["fixed_s"] == pytest.approx(st.facts["overhead.pass"].value + 28 * layer, rel=1e-12)


def test_best_and_max_batch_under_a_stack_leave_its_reserved_memory() -> None:
    out = json.loads(invoke("max-batch", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    # 512 MiB (536.9 MB) less holds 2 fewer of its sequences (234,881,024 bytes each: 4,096 positions held).
    assert out["max_batch"] == 580 and out["expected_max_batch"] == 578
    assert out["reserved_bytes"] == 512 * 2**20
    assert out["stack_batches"] == [1, 1]  # what fits is memory's answer; the stack's facts hold at batch 1 only
    best = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    # The limit's best is the seed's (580); the stack's is sought only where its facts hold: batch 1.
    assert best["batch"] == 580 and best["expected"]["batch"] == 1
    assert best["expected"]["capacity_bytes"] == best["capacity_bytes"] - 512 * 2**20


# --- the tensor-core path of the limit -----------------------------------------------------------------------------


def test_float_matrices_ride_a_cards_tensor_rate_where_it_has_one() -> None:
    # The dense model's ffn_up is F16: 256 × 512 multiply-adds a row in each of its 2 blocks.
    f16 = 2 * 256 * 512
    shape = pass_shape(dense(), SERVING)
    assert dict(shape.float_macs) == {"F16": f16}
    plain = card()
    seed = price_serving(dense(), plain, SERVING)
    tensor = attrs.evolve(plain, tensor={"tensor.f16": fact(5e13, "MAC/s", P.DERIVED, "cite:tensor.f16")})
    c = price_serving(dense(), tensor, SERVING)
    assert c.float_matrix_macs == f16
    assert c.vector_macs == seed.vector_macs - f16
    assert c.vector_s == pytest.approx((seed.vector_macs - f16) / 1e14, rel=1e-12)
    assert c.array_s == pytest.approx(ARRAY / 1e15 + f16 / 5e13, rel=1e-12)  # the matrix datapath does both
    assert [p for p, _ in c.rests_on][-1] == "tensor.f16"
    # Without the fact, the seed's rule: float matrices on the vector units, nothing else moves.
    assert seed.float_matrix_macs == 0.0 and "tensor.f16" not in [p for p, _ in seed.rests_on]
    assert seed.vector_s == seed.vector_macs / 1e14


def test_a_registered_f16_price_rides_the_tensor_cores_and_says_so() -> None:
    data = json.loads(invoke("price", "--checkpoint", "llama3-8b-f16", "--card", "a100_sxm4_80gb", "--json").stdout)
    # Every F16 matrix (8,030,261,248 parameters less the 2 norms a block and the final norm, and less the embedding
    # table, which a pass reads one row of) rides tensor.f16.
    assert data["float_matrix_macs"] == 4096 * (4096 * 2 + 1024 * 2 + 14336 * 3) * 32 + 4096 * 128256
    assert data["rests_on"]["tensor.f16"] == "derived"
    q4 = json.loads(invoke("price", "--checkpoint", "llama3-8b-q4_k_m", "--card", "a100_sxm4_80gb", "--json").stdout)
    assert "float_matrix_macs" not in q4 and "tensor.f16" not in q4["rests_on"]


def test_llama3_checkpoints_have_the_sizes_llama_bench_printed() -> None:
    from passprice.checkpoints import load_checkpoint
    from passprice.ggml import tensor_bytes

    sizes = {"llama3-8b-q4_k_m": 4.58, "llama3-8b-f16": 14.96, "llama3-70b-q4_k_m": 39.59}
    for name, gib in sizes.items():
        h = load_checkpoint(Root(REPO), name)
        total = sum(tensor_bytes(t.type_id, t.dims) for t in h.tensors)
        assert round(total / 2**30, 2) == gib, name


def test_stack_files_are_checked_with_every_other_file(tmp_path: object) -> None:
    from pathlib import Path

    root = copy_root(Path(str(tmp_path)))
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    path.write_text(path.read_text().replace('unit = "us"', 'unit = "GB"', 1))
    result = invoke("check", root=root)
    assert result.exit_code == 2  # a file that does not read is bad input: named on stderr (issue 13)
    assert "facts/stacks/llamacpp-cuda-2405.toml: overhead.pass.unit: 'GB' is not allowed here" in result.stderr


# --- --stack on the other commands, and locks under a stack ---------------------------------------------------------

STACK = "llamacpp-cuda-2405"


def test_sweep_under_a_stack_adds_the_expected_price_of_each_row() -> None:
    from passprice.servings import load_spec, resolve

    out = invoke("sweep", "r1-qwen7b-h200", "qwen35-27b-h200-mtp", "--batches", "1,64", "--positions", "512,2048",
                 "--stack", STACK, "--json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    plain = json.loads(invoke("sweep", "r1-qwen7b-h200", "qwen35-27b-h200-mtp", "--batches", "1,64", "--positions",
                              "512,2048", "--json").stdout)
    assert [{k: r[k] for k in p} for r, p in zip(rows, plain, strict=True)] == plain  # the limit's columns untouched
    root = Root(REPO)
    st = load_stack(root, STACK)
    for r in rows:
        assert r["stack"] == STACK
        if r["serving"] == "qwen35-27b-h200-mtp":
            assert r["expected_refusal"] == "StackLacks" and r["expected_tokens_per_s"] is None
            continue
        if r["batch"] == 64:  # the stack was calibrated on batch 1 only: no expected price, the limit's row as it is
            assert r["expected_refusal"] == "BeyondStack" and r["expected_tokens_per_s"] is None
            assert r["tokens_per_s"] is not None
            continue
        resolved = resolve(root, load_spec(root, "r1-qwen7b-h200"))
        serving = attrs.evolve(
            resolved.serving, batch=r["batch"], contexts=ContextMix.uniform(r["position"], r["limit"])
        )
        e = price_expected(resolved.header, resolved.card, serving, st)
        assert r["expected_tokens_per_s"] == pytest.approx(e.expected.tokens_per_s, rel=1e-12)
        assert r["expected_binds"] == e.expected.binds.value and r["expected_provenance"] == "estimated"


def test_roofline_under_a_stack_gives_its_lines_and_best_batch() -> None:
    data = json.loads(invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--stack", STACK, "--json").stdout)
    best = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", STACK, "--json").stdout)
    under = data["stack"]
    assert under["best"]["batch"] == best["expected"]["batch"]
    assert under["best"]["tokens_per_s"] == best["expected"]["tokens_per_s"]
    assert under["fixed_s"] == best["fixed_s"] and under["serial"] == load_stack(Root(REPO), STACK).facts[
        "terms.serial"
    ].value


def test_a_step_of_identical_decodes_under_a_stack_is_the_expected_pass() -> None:
    from passprice.servings import load_spec, resolve
    from passprice.steps import StepPricer, StepRows

    root = Root(REPO)
    registered = load_stack(root, STACK)
    # The registered stack holds at batch 1 only: a step of 32 decodes is refused under it ...
    r = resolve(root, load_spec(root, "r1-qwen7b-h200"))
    with pytest.raises(BeyondStack) as refusal:
        StepPricer.of(r.header, r.card, r.serving, registered).price(StepRows.build(decode_positions=[1000.0] * 32))
    assert str(refusal.value).startswith(
        "llamacpp-cuda-2405 was calibrated on passes of 1 … 1 token-rows (batch × (1 + draft tokens)); this price "
        "needs 32 token-rows a step (32 decoding × 1, 0 prompt)"
    )
    # ... so the steps are compared with the expected pass under the same facts held wider.
    st = attrs.evolve(registered, facts={**registered.facts, **ranged()})
    pricer = StepPricer.of(r.header, r.card, r.serving, st)
    assert pricer.capacity == r.card.memory.capacity.value - 512 * 2**20
    for batch, position in ((1, 2048.0), (32, 1000.0)):
        serving = attrs.evolve(r.serving, batch=batch, contexts=ContextMix.uniform(position, 4096))
        e = price_expected(r.header, r.card, serving, st).expected
        step = pricer.price(StepRows.build(decode_positions=[position] * batch))
        assert step.pass_s == pytest.approx(e.pass_s, rel=1e-12)
        assert step.binds is e.binds
    assert any(p.startswith("stack.") for p, _ in pricer.rests_on())


def test_a_lock_under_a_stack_pins_its_facts_reproduces_and_sees_them_change(tmp_path: object) -> None:
    from pathlib import Path

    root = copy_root(Path(str(tmp_path)))
    lock = root / "locks" / "r1-stack.lock.toml"
    made = invoke("lock", "r1-qwen7b-h200", "--stack", STACK, "-o", str(lock), "--json", root=root)
    assert made.exit_code == 0, made.output
    text = lock.read_text()
    # (the stack's builds and runtime texts pinned too since session 27: tests/test_leftovers_27.py, item 2; the
    # card's and fitted cards' vendors since slip 48: tests/test_slip_48.py)
    assert ('[stack]\nbuilds = "b2824 (4426e298) to b2843 (e8496488)"\ncard_vendor = "NVIDIA"\n'
            'fitted_vendors = ["NVIDIA"]\nfloat_matrices = "vector"\ninteger_matrices = "vector"\n'
            'name = "llamacpp-cuda-2405"') in text
    assert '[facts."stack.overhead.layer"]' in text and '[facts."stack.share.read"]' in text
    rep = json.loads(invoke("reproduce", str(lock), "--json", root=root).stdout)
    assert rep["equals"] is True and rep["price"]["expected"]["pass_s"] > rep["price"]["pass_s"]
    # A floor on a stack fact applies like one on a card fact.
    refusal = invoke("lock", "r1-qwen7b-h200", "--stack", STACK, "--require", "stack.share.array=measured",
                     "-o", str(root / "locks" / "strict.lock.toml"), "--json", root=root)
    assert refusal.exit_code == 1 and json.loads(refusal.stdout)["offending"] == [
        {"path": "stack.share.array", "provenance": "derived", "floor": "measured"}
    ]
    # The stack's facts change: check reports the drift, and the lock still reproduces from its pinned facts.
    path = root / "facts" / "stacks" / f"{STACK}.toml"
    layer = load_stack(Root(REPO), STACK).facts["overhead.layer"]
    path.write_text(path.read_text().replace(f"value = {layer.amount!r}", "value = 900", 1))
    check = json.loads(invoke("check", "--json", root=root).stdout)
    status = next(s for s in check["locks"] if s["name"] == "r1-stack")
    assert status["reproduces"] is True
    assert status["drift"] == [f"stack.overhead.layer: {layer.amount:g} µs (derived) → 900 µs (derived)"]


def test_diff_of_a_stack_fact_reaches_the_locks_resting_on_it(tmp_path: object) -> None:
    from pathlib import Path

    from passprice.review import diff

    base = copy_root(Path(str(tmp_path)) / "base")
    lock = base / "locks" / "r1-stack.lock.toml"
    assert invoke("lock", "r1-qwen7b-h200", "--stack", STACK, "-o", str(lock), root=base).exit_code == 0
    head = copy_root(Path(str(tmp_path)) / "head")
    (head / "locks" / "r1-stack.lock.toml").write_bytes(lock.read_bytes())
    path = head / "facts" / "stacks" / f"{STACK}.toml"
    layer = load_stack(Root(REPO), STACK).facts["overhead.layer"]
    path.write_text(path.read_text().replace(f"value = {layer.amount!r}", "value = 200", 1))
    d = diff(Root(base), str(base), str(head))
    (changed,) = [f for f in d.files if f.kind == "stack"]
    (fact,) = changed.facts
    assert fact.lock_path == "stack.overhead.layer" and fact.relative == pytest.approx(200 / layer.amount - 1)
    impacts = {i.name: i for i in d.locks}
    # the shipped r1-qwen7b-h200-llamacpp is locked under the stack as r1-stack is: both are reached
    assert set(impacts) == {"r1-qwen7b-h200-llamacpp", "r1-stack"}
    for impact in impacts.values():
        assert impact.changed == ("stack.overhead.layer",)
        before, after = impact.before.price, impact.after.price
        assert before is not None and after is not None
        assert after["tokens_per_s"] == before["tokens_per_s"]  # the limit does not move
        assert after["expected"]["pass_s"] > before["expected"]["pass_s"]  # the expected price does


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_sweep_under_a_stack_streams_the_row_writers_bytes(fmt: str) -> None:
    import io

    from passprice.sweep import COLUMNS, STACK_COLUMNS, Grid, Sweeper, text_chunks, write_rows

    root = Root(REPO)
    # A serving the stack lacks facts for (qwen35-27b-h200-mtp drafts), one refused outright on a small card
    # (NotResident), batches that fill the card (a refusal under the limit and the stack alike), and position 0.
    grid = Grid(
        servings=("r1-qwen7b-h200", "qwen35-27b-h200-mtp", "qwen35-27b-ws1-trailing"),
        batches=(0, 1, 64, 20_000),
        cards=("h200_sxm_141gb", "rtx_3080"),
        positions=(0.0, 2048.0),
    )
    stack = load_stack(root, STACK)
    expected = io.StringIO()
    rows = list(Sweeper(root, stack).rows(grid))
    assert all(r["stack"] == STACK for r in rows)  # every row carries the stack's columns, refused ones too
    assert {r["expected_refusal"] for r in rows} >= {None, "StackLacks", "Empty", "NotResident"}
    assert write_rows(iter(rows), fmt, expected, COLUMNS + STACK_COLUMNS) == grid.size()
    assert "".join(text_chunks(Sweeper(root, stack).segments(grid), fmt)) == expected.getvalue()


def test_attention_is_no_key_of_a_stack_and_the_schema_says_why(tmp_path: object) -> None:
    from pathlib import Path

    root = copy_root(Path(str(tmp_path)))
    path = root / "facts" / "stacks" / f"{STACK}.toml"
    text = path.read_text()
    routes = 'float_matrices = "vector"\n'
    path.write_text(text.replace(routes, routes + 'attention = "unfused"\n', 1))
    out = invoke("price", "r1-qwen7b-h200", "--stack", STACK, root=root)
    assert out.exit_code == 2
    assert out.stderr.strip().endswith(
        f"facts/stacks/{STACK}.toml: stack.attention: no longer a key: whether attention is fused is no key of a "
        "stack: a stack's share.append carries what its attention kernels cost a cached position (DESIGN.md, Serving "
        "stacks); a stack with FlashAttention and one without are two stacks, each calibrated on its own runs"
    )


# --- where a stack's facts hold: range.*, BeyondStack, a best batch sought only inside --------------------------------


def test_a_price_outside_the_batches_a_stack_was_calibrated_on_is_refused_by_name() -> None:
    out = refused("price", "r1-qwen7b-h200", "--stack", STACK, "--batch", "578", name="BeyondStack")
    assert out["message"] == (
        "llamacpp-cuda-2405 was calibrated on batch 1 … 1; this price needs batch 578; price at batch 1 (--batch 1, "
        "the largest its runs reach), price the limit (without --stack), or calibrate the stack on runs at that batch"
    )
    assert (out["stack"], out["path"], out["low"], out["high"], out["needs"]) == (STACK, "range.rows", 1, 1, 578)
    # The limit alone is priced as ever.
    assert invoke("price", "r1-qwen7b-h200", "--batch", "578").exit_code == 0


def test_a_price_past_the_positions_a_stack_was_calibrated_on_is_refused_by_name() -> None:
    out = refused("price", "r1-qwen7b-h200", "--stack", STACK, "--position", "9000", "--limit", "16384",
                  name="BeyondStack")
    assert out["message"] == (
        "llamacpp-cuda-2405 was calibrated on cached positions 0 … 8,192; this price needs contexts (mean position "
        "9,000 of a 16,384 limit); price at position 8,192 (--position 8192, the largest its runs reach), price the "
        "limit (without --stack), or calibrate the stack on runs at that context (measured runs near position 9,000, "
        "then passprice calibrate --stack llamacpp-cuda-2405)"
    )
    assert (out["path"], out["low"], out["high"], out["needs"]) == ("range.position", 0, 8192, 9000)


def test_best_under_a_stack_searches_only_where_its_facts_hold() -> None:
    best = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", STACK, "--json").stdout)
    one = json.loads(invoke("price", "r1-qwen7b-h200", "--stack", STACK, "--batch", "1", "--json").stdout)
    # The limit's best is the seed's, unchanged; the stack's is its price at batch 1, the only batch it was measured
    # at (the first cut printed 1,415.7 tokens/s at batch 578, 0.042 x the limit, binding on scale).
    assert best["batch"] == 580 and best["expected"]["batch"] == 1
    assert best["expected"]["tokens_per_s"] == one["expected"]["tokens_per_s"]
    assert best["expected"]["binds"] == "memory"
    assert "stack.range.rows.max" in best["expected"]["rests_on"]
    text = invoke("best", "r1-qwen7b-h200", "--stack", STACK).stdout
    assert "  holds on      batch 1 … 1, cached positions 0 … 8,192 (range.*: where its runs were measured)" in text


def _brute_best(sh: object, c: object, lo: int, hi: int, pricing: object = None) -> object:
    """The seed's scan over batches ``lo`` … ``hi``: the first batch that beats every earlier one by 1e-12."""
    from passprice.serving import NotResident, OnChipOverflow

    best = None
    for b in range(lo, hi + 1):
        try:
            cost = sh.cost_split(c, b, False, pricing=pricing)  # type: ignore[attr-defined]
        except (NotResident, OnChipOverflow):
            break
        if best is None or cost.tokens_per_s > best.tokens_per_s * (1.0 + 1e-12):
            best = cost
    return best


@pytest.mark.parametrize("bind", ["memory", "array", "vector"])
@pytest.mark.parametrize(("lo", "hi"), [(1, 1), (1, 40), (5, 40), (60, 90), (150, 400), (7, 10_000)])
def test_a_bounded_best_is_the_seeds_scan_over_those_batches(bind: str, lo: int, hi: int) -> None:
    from test_batching import ARRAY, MEMORY, VECTOR, room_card
    from test_batching import shape as batching_shape

    figures = {"memory": MEMORY, "array": ARRAY, "vector": VECTOR}[bind]
    sh = batching_shape()
    c = card(**room_card(300, **figures), on_chip_capacity=1e12)  # memory holds 300 sequences
    fast = sh.best(c, False, batches=(lo, hi))
    assert fast == _brute_best(sh, c, lo, hi)
    assert fast == sh.best_by_scan(c, False, batches=(lo, hi))
    assert lo <= fast.batch <= min(hi, 300)
    assert sh.best(c, False) == sh.best_by_scan(c, False)  # unbounded: the seed's, as before


def test_a_stack_held_on_some_batches_and_a_drafting_serving_count_token_rows() -> None:
    from passprice.stacks import held

    narrow = attrs.evolve(stack(read=0.5), facts={**stack(read=0.5).facts, **ranged((4, 12), (0, 150))})
    bounds, facts = held(narrow, "synthetic")
    assert bounds is not None and [p for p, _ in facts] == [
        "stack.range.rows.min", "stack.range.rows.max", "stack.range.position.min", "stack.range.position.max"
    ]
    assert bounds.batches(1) == (4, 12) and bounds.batches(3) == (2, 4) and bounds.batches(13) is None
    # Batch 3 of one row a sequence is below the 4 token-rows the stack was calibrated on.
    with pytest.raises(BeyondStack) as e:
        price_expected(dense(), card(), attrs.evolve(SERVING, batch=3), narrow)
    assert str(e.value).startswith("test-stack was calibrated on batch 4 … 12; this price needs batch 3;")
    # Its best is the best of batches 4 … 12, as the seed's scan over them finds it.
    got = price_expected(dense(), card(), SERVING, narrow, "best")
    pricing, _ = expected_pricing(narrow, card(), pass_shape(dense(), SERVING))
    assert got.expected == attrs.evolve(
        _brute_best(pass_shape(dense(), SERVING), card(), 4, 12, pricing), rests_on=got.expected.rests_on,
        provenance=got.expected.provenance,
    )
    assert got.held == bounds
    # Drafting 2 tokens, batch 5 carries 15 token-rows: refused, naming the rows and the drafts.
    with pytest.raises(BeyondStack) as e:
        bounds.check_batch(5, 3)
    assert str(e.value) == (
        "test-stack was calibrated on passes of 4 … 12 token-rows (batch × (1 + draft tokens)); this price needs 15 "
        "token-rows a pass (batch 5, 2 draft tokens a sequence); price at batch 4 (--batch 4, the largest its runs "
        "reach), price the limit (without --stack), or calibrate the stack on runs at that batch and draft length"
    )
    # A position past the stack's: refused before any batch is priced.
    shallow = attrs.evolve(narrow, facts={**narrow.facts, **ranged((4, 12), (0, 50))})
    with pytest.raises(BeyondStack):
        price_expected(dense(), card(), SERVING, shallow, "best")


def test_a_stack_file_without_its_range_is_refused_and_one_pinned_before_ranges_is_reproduced() -> None:
    from passprice.stacks import stack_from_lock_facts

    lacking = attrs.evolve(stack(), facts={k: v for k, v in stack().facts.items() if k != "range.rows.max"})
    with pytest.raises(StackLacks) as e:
        price_expected(dense(), card(), SERVING, lacking)
    assert e.value.path == "range.rows.max" and e.value.why == "a stack's facts hold only where its runs were measured"
    # A lock written before stacks had a range pinned none: its stack is priced as it was, at any batch.
    pinned = {f"stack.{p}": f for p, f in stack().facts.items() if not p.startswith("range.")}
    old = stack_from_lock_facts("test-stack", "a test stack", {"integer_matrices": "array", "float_matrices": "tensor"},
                                pinned)
    assert old.ranged is False
    priced = price_expected(dense(), card(), attrs.evolve(SERVING, batch=7), old)
    assert priced.held is None and priced.expected.batch == 7
