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
from passprice.stacks import Stack, StackLacks, expected_pricing, load_stack, price_expected
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


def stack(serial: float = 0.0, integer: str = "array", **shares: float) -> Stack:
    """A stack paying 10 µs a pass and 5 µs a layer, every share 1 unless given, ``serial`` as given."""
    names = ("read", "rewrite", "append", "host", "array", "float", "vector", "scale")
    facts = {f"share.{k}": share(1.0) for k in names}
    facts.update({f"share.{k}": share(v) for k, v in shares.items()})
    facts["overhead.pass"] = seconds(10e-6)
    facts["overhead.layer"] = seconds(5e-6)
    facts["terms.serial"] = Fact(serial, serial, "1", P.ESTIMATED, "test: serial share")
    facts["memory.reserved"] = Fact(1e6, 1, "MB", P.ESTIMATED, "test: reserved")
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
    assert out["max_batch"] == 580 and out["expected_max_batch"] < out["max_batch"]
    assert out["reserved_bytes"] == 512 * 2**20
    best = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert best["batch"] == 580 and best["expected"]["batch"] <= out["expected_max_batch"]
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
    st = load_stack(root, STACK)
    r = resolve(root, load_spec(root, "r1-qwen7b-h200"))
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
    assert '[stack]\nfloat_matrices = "vector"\ninteger_matrices = "vector"\nname = "llamacpp-cuda-2405"' in text
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
    assert status["drift"] == [f"stack.overhead.layer: {layer.amount:g} us (derived) → 900 us (derived)"]


def test_diff_of_a_stack_fact_reaches_the_locks_resting_on_it(tmp_path: object) -> None:
    from pathlib import Path

    from passprice.diff import diff

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
    assert set(impacts) == {"r1-stack"}  # the registered locks rest on no stack
    impact = impacts["r1-stack"]
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
