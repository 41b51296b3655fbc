"""Serving a request trace (issue 8): steps priced as the seed prices a pass, prefill as token-rows, shared prefixes,
static against continuous batching.

The step pricer is checked against the seed's pricer (a step of identical decoding sequences *is* a pass of that
batch), prompt rows against a decode pass, the simulator against the acceptance list: continuous beats static on a
heavy-tailed trace, prefix caching fits as many more sequences as the held bytes say, bad traces are refused by line,
and a seed gives the same bytes twice. No network; the whole file runs in a few seconds.
"""

from __future__ import annotations

import itertools
import json
import random
import statistics
import tomllib
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from cli_helpers import bad
from passprice import schema
from passprice import simulate as simulate_module
from passprice.cli import cli
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.serving import (
    BadPrefix,
    ContextMix,
    NotResident,
    ServingBind,
    ServingCost,
    StateFlush,
    pass_shape,
    price_serving,
)
from passprice.servings import Resolved, load_spec, override, resolve, spec_to_document
from passprice.simulate import Policy, Settings, percentile, simulate
from passprice.steps import StepCost, StepPricer, StepRows
from passprice.stretch import Stretch
from passprice.trace import Request, Synthetic, Trace, parse_trace, synthetic, trace_lines

REPO = Path(__file__).resolve().parent.parent
ROOT = find_root(REPO)
#: Every priceable registered serving: dense (contiguous; paged 8-bit on the array), windowed (gemma3), and the
#: Gated-DeltaNet hybrid drafting with its MTP block under all three flushes.
SERVINGS = (
    "r1-qwen7b-h200",
    "r1-qwen7b-mi300x-int8kv",
    "gemma3-270m-h100",
    "qwen35-27b-h200-mtp",
    "qwen35-27b-h100-every8",
    "qwen35-27b-ws1-trailing",
)
REL = 1e-12


def resolved(name: str, **changes: Any) -> Resolved:
    return resolve(ROOT, override(load_spec(ROOT, name), **changes))


def seed_pass(r: Resolved, batch: int, position: float, **changes: Any) -> ServingCost:
    """The seed's pass at ``batch`` sequences, every one at ``position``: ``price_serving`` itself, or for a serving
    that may use host memory its pass with every sequence in card memory (where the simulator keeps them)."""
    s = attrs.evolve(r.serving, batch=batch, contexts=ContextMix.uniform(position, r.serving.contexts.longest()),
                     **changes)
    if not s.host_memory:
        return price_serving(r.header, r.card, s)
    return pass_shape(r.header, s).cost(r.card, batch, 0)


def assert_same(seed: ServingCost, step: StepCost, batch: int, what: str) -> None:
    """All five terms, the bind, and the bytes and work behind them, to a relative 1e-12."""
    pairs = {
        "memory_s": (seed.memory_s, step.memory_s),
        "host_s": (seed.host_s, step.host_s),
        "array_s": (seed.array_s, step.array_s),
        "vector_s": (seed.vector_s, step.vector_s),
        "scale_s": (seed.scale_s, step.scale_s),
        "pass_s": (seed.pass_s, step.pass_s),
        "weight_bytes": (seed.weight_bytes, step.weight_bytes),
        "sequence_bytes": (seed.sequence_bytes * batch, step.sequence_bytes),
        "rewrite_bytes": (seed.rewrite_bytes * batch, step.rewrite_bytes),
        "array_macs": (seed.array_macs, step.array_macs),
        "vector_macs": (seed.vector_macs, step.vector_macs),
        "scale_cycles": (seed.scale_cycles, step.scale_cycles),
    }
    for field, (a, b) in pairs.items():
        assert b == pytest.approx(a, rel=REL, abs=0.0), (what, field, a, b)
    assert step.binds is seed.binds, what


# --- the step pricer ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SERVINGS)
def test_a_step_of_identical_decodes_is_the_seed_pass(name: str) -> None:
    r = resolved(name)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    limit = r.serving.contexts.longest()
    # Below, at and past gemma3's 512-position window; a fractional position (a drafting serving's mean); the last
    # position a limit allows (at the limit itself a pass has no room for its row: BadContexts, tests/test_walk138.py).
    positions = (0.0, 1.0, 100.0, 511.0, 512.0, 513.0, 2048.0, 3333.5, float(limit - 1))
    checked = 0
    for position in positions:
        for batch in (1, 7, 64):
            try:
                seed = seed_pass(r, batch, position)
            except NotResident:
                continue
            step = pricer.price(StepRows.build(decode_positions=[position] * batch))
            assert_same(seed, step, batch, f"{name} batch {batch} position {position}")
            assert step.emitted == pytest.approx(batch * seed.emitted_per_sequence, rel=REL)
            assert step.decode_rows == batch * seed.rows_per_sequence
            checked += 1
    assert checked >= 18
    assert any(g.window == 512 for g in pricer.groups) == (name == "gemma3-270m-h100")


def test_rotated_caches_and_array_attention_decompose_too() -> None:
    r = resolved("r1-qwen7b-mi300x-int8kv", kv_rotated=True)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    for position in (0.0, 4096.0, 20000.0):
        assert_same(seed_pass(r, 32, position), pricer.price(StepRows.build([position] * 32)), 32, "rotated")


def test_a_step_of_mixed_positions_sums_its_sequences() -> None:
    """Decoding sequences at different positions cost what each would alone, less the shared stream counted once:
    the seed's affine form (weights + Σ sequences) holds sequence by sequence."""
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    positions = [3.0, 400.0, 511.0, 900.0, 30000.0]
    mixed = pricer.price(StepRows.build(positions))
    alone = [pricer.price(StepRows.build([p])) for p in positions]
    shared = pricer.shape.weight_bytes
    assert mixed.weight_bytes - shared == pytest.approx(sum(a.weight_bytes - shared for a in alone), rel=REL)
    for field in ("sequence_bytes", "array_macs", "vector_macs", "scale_cycles"):
        assert getattr(mixed, field) == pytest.approx(sum(getattr(a, field) for a in alone), rel=REL), field


@pytest.mark.parametrize("name", ["r1-qwen7b-h200", "gemma3-270m-h100", "qwen35-27b-h200-mtp"])
def test_a_prompt_row_that_ends_its_prompt_is_a_decode_pass_without_drafts(name: str) -> None:
    r = resolved(name)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    plain = attrs.evolve(r, serving=attrs.evolve(r.serving, draft=None, flush=StateFlush()))
    for position in (0.0, 511.0, 600.0, 3000.0):
        for batch in (1, 5):
            step = pricer.price(StepRows.build(prompt_starts=[position] * batch, prompt_rows=[1] * batch,
                                               prompt_last=[True] * batch))
            assert_same(seed_pass(plain, batch, position), step, batch, f"{name} prompt row at {position}")
            assert step.emitted == batch


def test_a_prompt_chunk_scores_what_its_rows_would_one_by_one() -> None:
    """A chunk of c rows from position L does the arithmetic of c one-row chunks at L … L + c − 1 (windowed layers
    capped at their window, the closed form against the sum), reads the cache and the state once, and multiplies
    the head for its last row only."""
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    for start, rows in ((0, 1000), (300, 400), (600, 37)):
        chunk = pricer.price(StepRows.build(prompt_starts=[start], prompt_rows=[rows], prompt_last=[True]))
        ones = [
            pricer.price(StepRows.build(prompt_starts=[t], prompt_rows=[1], prompt_last=[t == start + rows - 1]))
            for t in range(start, start + rows)
        ]
        for field in ("array_macs", "vector_macs", "scale_cycles"):
            assert getattr(chunk, field) == pytest.approx(sum(getattr(o, field) for o in ones), rel=1e-12), field
        assert chunk.sequence_bytes < sum(o.sequence_bytes for o in ones)


def test_prefill_binds_on_arithmetic_where_decode_binds_on_memory() -> None:
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    decode = pricer.price(StepRows.build([2048.0]))
    prefill = pricer.price(StepRows.build(prompt_starts=[0], prompt_rows=[2048], prompt_last=[True]))
    print(f"\ndecode, one sequence at 2048: {decode.pass_s * 1e3:.4f} ms, binds {decode.binds.value}; "
          f"prefill, one 2048-row chunk: {prefill.pass_s * 1e3:.4f} ms, binds {prefill.binds.value} "
          f"(array {prefill.array_s * 1e3:.4f} ms, memory {prefill.memory_s * 1e3:.4f} ms)")
    assert decode.binds is ServingBind.MEMORY
    assert prefill.binds is ServingBind.ARRAY
    # Same stream of weights, 2048 rows through it: ~2048 times the arithmetic per byte.
    assert prefill.array_s > 5 * prefill.memory_s
    assert decode.memory_s > 5 * decode.array_s
    # The same facts and provenance as a price.
    cost = price_serving(r.header, r.card, r.serving)
    assert [p for p, _ in pricer.rests_on()] == [p for p, _ in cost.rests_on]
    assert pricer.provenance() is cost.provenance


def test_one_step_from_its_sums_is_the_price_of_the_step() -> None:
    """price_one (a stretch's first step, on floats) and price_many (its other steps, on arrays) give the seconds and
    the binding term price gives the step: a decode-only step binds on memory, one with a 2,048-row chunk on the
    array; a step of both sums its decoding and prompt rows."""
    from passprice.cost import TERMS

    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    steps = [
        StepRows.build([2048.0, 17.0, 300.0]),
        StepRows.build(prompt_starts=[0], prompt_rows=[2048], prompt_last=[True]),
        StepRows.build([512.0, 40.0], prompt_starts=[0, 100], prompt_rows=[700, 9], prompt_last=[True, False]),
    ]
    binds = []
    for step in steps:
        cost = pricer.price(step)
        sums = pricer.sums(step)
        assert pricer.price_one(sums) == (cost.pass_s, TERMS.index(cost.binds.value))
        many, bind = pricer.price_many(sums)
        assert (many.tolist(), bind.tolist()) == ([cost.pass_s], [TERMS.index(cost.binds.value)])
        binds.append(cost.binds)
    assert binds == [ServingBind.MEMORY, ServingBind.ARRAY, ServingBind.ARRAY]


def test_a_contiguous_sequence_holds_what_the_seed_holds() -> None:
    for name in ("r1-qwen7b-h200", "qwen35-27b-h200-mtp"):
        r = resolved(name)
        pricer = StepPricer.of(r.header, r.card, r.serving)
        seed = pass_shape(r.header, r.serving)
        assert float(pricer.held(123.0)) == pytest.approx(seed.held_per_sequence, rel=REL)
        assert pricer.weights_held == seed.held_shared


# --- shared prefixes in a price ----------------------------------------------------------------------------------


def test_a_shared_prefix_is_held_once_and_read_once() -> None:
    base = resolved("r1-qwen7b-h200", kv_page=16, batch=64)
    plain = price_serving(base.header, base.card, base.serving)
    held = price_serving(base.header, base.card, attrs.evolve(base.serving, shared_prefix=2000))
    once = price_serving(base.header, base.card, attrs.evolve(base.serving, shared_prefix=2000,
                                                              prefix_read_once=True))
    per_position = 28 * 4 * (128 + 128) * 2  # layers × KV heads × (key + value) × bytes: 57,344
    # Held once instead of 64 times; read as often as before until it is read once.
    assert plain.held_bytes - held.held_bytes == 63 * 2000 * per_position
    assert held.memory_s == plain.memory_s
    assert once.held_bytes == held.held_bytes
    assert once.weight_bytes - plain.weight_bytes == 2000 * per_position
    assert once.sequence_bytes == pytest.approx(plain.sequence_bytes - 2000 * per_position, rel=REL)
    assert once.memory_s < plain.memory_s
    assert once.vector_macs == plain.vector_macs  # every row still scores every position
    # Only whole pages are shared: 2007 positions share 125 pages.
    odd = price_serving(base.header, base.card, attrs.evolve(base.serving, shared_prefix=2007))
    assert odd.held_bytes == held.held_bytes


def test_a_shared_prefix_needs_pages_and_a_context_past_it() -> None:
    r = resolved("r1-qwen7b-h200")
    with pytest.raises(BadPrefix, match="paged"):
        price_serving(r.header, r.card, attrs.evolve(r.serving, shared_prefix=100))
    with pytest.raises(BadPrefix, match="past the position 2048"):
        price_serving(r.header, r.card, attrs.evolve(r.serving, shared_prefix=3000, kv_page=16))


@pytest.mark.parametrize("name", ["r1-qwen7b-h200", "gemma3-270m-h100", "qwen35-27b-h200-mtp"])
def test_a_step_sharing_a_prefix_read_once_is_the_seed_pass(name: str) -> None:
    r = resolved(name, kv_page=16, shared_prefix=2000, prefix_read_once=True)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    for position in (2000.0, 2500.0, 4000.0):
        for batch in (1, 9):
            step = pricer.price(StepRows.build([position] * batch, decode_shared=[2000.0] * batch,
                                               shared_once=2000.0))
            assert_same(seed_pass(r, batch, position), step, batch, f"{name} prefix at {position}")


def test_price_takes_the_shared_prefix_and_locks_keep_their_bytes(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["price", "r1-qwen7b-h200", "--kv-page", "16", "--batch", "8", "--shared-prefix",
                              "1024", "--prefix-read-once", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["batch"] == 8
    refused = runner.invoke(cli, ["price", "r1-qwen7b-h200", "--shared-prefix", "1024", "--json"])
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["refusal"] == "BadPrefix"
    # Defaults stay out of a serving's document; a shared prefix goes in and validates against the lock schema.
    spec = load_spec(ROOT, "r1-qwen7b-h200")
    assert "shared_prefix" not in spec_to_document(spec)
    assert "prefix_read_once" not in spec_to_document(spec)
    lock = tmp_path / "p.lock.toml"
    made = runner.invoke(cli, ["lock", "r1-qwen7b-h200", "--kv-page", "16", "--shared-prefix", "1024",
                               "--prefix-read-once", "-o", str(lock)])
    assert made.exit_code == 0, made.output
    document = schema.load(lock, "lock", ROOT.schema)
    assert document["serving"]["shared_prefix"] == 1024
    assert document["serving"]["prefix_read_once"] is True
    again = runner.invoke(cli, ["reproduce", str(lock)])
    assert again.exit_code == 0 and "reproduces exactly" in again.output
    # Re-locking a registered serving gives the recorded lock's document: the new fields are left out at their
    # defaults. (The pricing model's digest and the lock's own change with any edit to the pricing code.)
    relock = tmp_path / "r1-qwen7b-mi300x-int8kv.lock.toml"
    assert runner.invoke(cli, ["lock", "r1-qwen7b-mi300x-int8kv", "-o", str(relock)]).exit_code == 0

    def pinned(path: Path) -> dict[str, object]:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        del document["lock"]["pricing_model"], document["lock"]["digest"]
        return document

    assert pinned(relock) == pinned(REPO / "locks" / "r1-qwen7b-mi300x-int8kv.lock.toml")


# --- traces ------------------------------------------------------------------------------------------------------


def test_bad_trace_lines_are_refused_by_number() -> None:
    lines = [
        '{"arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10}',
        '{"arrival_s": 0.1, "prompt_tokens": -5, "output_tokens": 10}',
        "",
        '{"arrival_s": 0.2, "prompt_tokens": 4000, "output_tokens": 200000}',
        '{"arrival_s": 0.2, "prompt_tokens": 4000, "output_tokens": 100}',
        '{"arrival_s": 0.3, "prompt_tokens": 10.5, "output_tokens": 1}',
        '{"arrival_s": 0.3, "prompt_tokens": 10, "output_tokens": -1',
        '{"arrival_s": 0.3, "prompt_tokens": 10, "output_tokens": 0}',
        '{"arrival_s": 0.3, "prompt_tokens": 10, "output_tokens": 2, "prefix_id": "a", "prefix_tokens": 4}',
        '{"arrival_s": 0.3, "prompt_tokens": 10, "output_tokens": 2, "prefix_id": "a", "prefix_tokens": 5}',
    ]
    with pytest.raises(InputError) as e:
        parse_trace(lines, "t.jsonl", limit=4096, model=131072)
    text = str(e.value)
    print("\n" + text)
    assert "t.jsonl:2: prompt_tokens: -5 is negative" in text
    assert "t.jsonl:4: the request needs 204,000 positions, longer than the model's context 131,072" in text
    assert "t.jsonl:5: the request needs 4,100 positions, longer than the serving's context limit 4,096" in text
    assert "t.jsonl:6: prompt_tokens: 10.5 is not an integer" in text
    assert "t.jsonl:7: not JSON" in text
    assert "t.jsonl:8: output_tokens: 0 is zero" in text
    assert 't.jsonl:10: prefix_id "a" has 5 tokens here but 4 on line 9' in text
    assert not any(line.startswith(("t.jsonl:1:", "t.jsonl:3:", "t.jsonl:9:")) for line in text.splitlines())


def test_the_command_refuses_a_bad_trace_with_exit_2(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 5}\n'
                     '{"arrival_s": 1, "prompt_tokens": 130000, "output_tokens": 5000}\n')
    out = CliRunner().invoke(cli, ["simulate", "r1-qwen7b-h200", "--trace", str(trace)])
    assert out.exit_code == 2
    assert f"{trace}:2: the request needs 135,000 positions, longer than the model's context 131,072" in out.stderr


def test_a_synthetic_trace_is_heavy_tailed_fits_and_reads_back() -> None:
    trace = synthetic(Synthetic(2000, 11, rate=100.0), limit=4096)
    outputs = [r.output for r in trace.requests]
    assert all(r.length <= 4096 and r.prompt >= 1 and r.output >= 1 for r in trace.requests)
    assert max(outputs) > 20 * statistics.median(outputs)
    again = parse_trace(trace_lines(trace).splitlines(), "x", 4096)
    assert [(r.arrival, r.prompt, r.output) for r in again.requests] == [
        (r.arrival, r.prompt, r.output) for r in trace.requests
    ]
    assert synthetic(Synthetic(2000, 11, rate=100.0), limit=4096) == trace


# --- the simulator -----------------------------------------------------------------------------------------------


def test_continuous_batching_beats_static_on_a_heavy_tailed_trace() -> None:
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(1000, 7, rate=200.0), pricer.limit)
    outputs = sorted(q.output for q in trace.requests)
    p99 = percentile(outputs, 99)
    assert p99 is not None and p99 > 10 * statistics.median(outputs)  # heavy-tailed
    static = simulate(pricer, trace, Policy.STATIC).summary()
    continuous = simulate(pricer, trace, Policy.CONTINUOUS).summary()
    print(
        f"\n1,000 requests, outputs median {statistics.median(outputs):g}, p99 {percentile(outputs, 99)}, "
        f"max {outputs[-1]} tokens"
        f"\nstatic:     {static['throughput_tokens_per_s']!r} tokens/s, e2e p99 {static['e2e_s']['p99']!r} s, "
        f"TTFT p99 {static['ttft_s']['p99']!r} s"
        f"\ncontinuous: {continuous['throughput_tokens_per_s']!r} tokens/s, e2e p99 {continuous['e2e_s']['p99']!r} s, "
        f"TTFT p99 {continuous['ttft_s']['p99']!r} s"
    )
    assert continuous["throughput_tokens_per_s"] > 1.5 * static["throughput_tokens_per_s"]
    assert continuous["e2e_s"]["p99"] < 0.75 * static["e2e_s"]["p99"]
    assert continuous["e2e_s"]["p50"] < static["e2e_s"]["p50"]
    assert continuous["ttft_s"]["p99"] < static["ttft_s"]["p99"]
    assert continuous["output_tokens"] == static["output_tokens"] == sum(outputs)
    # Prefill steps bind on the array, decode steps on memory, in both.
    for s in (static, continuous):
        assert s["steps_by_bind"]["memory"] > 0 and s["steps_by_bind"]["array"] > 0


def test_static_batches_admit_nobody_until_the_batch_ends() -> None:
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    outcome = simulate(pricer, synthetic(Synthetic(300, 5, rate=100.0), pricer.limit), Policy.STATIC)
    batches: dict[float, list[float]] = {}
    for rec in outcome.records:
        batches.setdefault(rec.admitted, []).append(rec.finished)
    starts = sorted(batches)
    for before, after in itertools.pairwise(starts):
        assert max(batches[before]) <= after
    for rec in outcome.records:
        assert rec.request.arrival <= rec.admitted <= rec.first_token <= rec.finished


def test_prefix_caching_fits_as_many_more_sequences_as_the_held_bytes_say() -> None:
    """Every request shares a 2,000-token prefix; all arrive at once, so admission fills the card's memory. Without
    prefix caching a sequence reserves 3,072 positions of cache; with it 1,072, the prefix's 2,000 held once. The
    seed's own room (``PassShape.card_room``, with the shared-prefix extension at the position whose half page makes
    3,072) predicts both counts."""
    r = resolved("r1-qwen7b-h200", kv_page=16)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    n = 2400
    trace = Trace(tuple(Request(i, i + 1, 0.0, 3008, 64, "system", 2000) for i in range(n)), "shared prefix")
    settings = {caching: Settings(max_batch=100_000, prefix_caching=caching) for caching in (False, True)}
    without = simulate(pricer, trace, Policy.CONTINUOUS, settings[False])
    with_caching = simulate(pricer, trace, Policy.CONTINUOUS, settings[True])
    rooms = {}
    for shared in (0, 2000):
        s = attrs.evolve(r.serving, contexts=ContextMix.uniform(3064.0, 4096), shared_prefix=shared)
        rooms[shared] = pass_shape(r.header, s).card_room(r.card)
    held_without = float(pricer.held(3072.0))
    held_with = float(pricer.held(3072.0, 2000.0))
    predicted = (r.card.memory.capacity.value - pricer.weights_held - pricer.prefix_held(2000.0)) / held_with / (
        (r.card.memory.capacity.value - pricer.weights_held) / held_without
    )
    ratio = with_caching.peak_sequences / without.peak_sequences
    once = pricer.prefix_held(2000.0)
    print(f"\npeak sequences without prefix caching {without.peak_sequences}, with {with_caching.peak_sequences}: "
          f"ratio {ratio!r}; held bytes a sequence {held_without:,.0f} → {held_with:,.0f} (+ {once:,.0f} once): "
          f"predicted ratio {predicted!r}")
    assert without.peak_sequences == rooms[0] == 773
    assert with_caching.peak_sequences == rooms[2000] == 2215
    assert ratio == pytest.approx(predicted, rel=2 / rooms[0])
    assert held_without - held_with == 2000 * 57344
    summary = with_caching.summary()
    assert summary["prefix_hits"] == n - 1
    assert summary["prompt_rows"] == 3008 + (n - 1) * 1008
    assert without.summary()["prompt_rows"] == n * 3008
    assert without.waited_for_memory > with_caching.waited_for_memory > 0
    assert with_caching.peak_reserved <= r.card.memory.capacity.value
    assert with_caching.peak_held <= with_caching.peak_reserved


def test_reading_a_prefix_once_shortens_its_decode_steps() -> None:
    r = resolved("r1-qwen7b-h200", kv_page=16)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = Trace(tuple(Request(i, None, 0.0, 3008, 200, "system", 2000) for i in range(200)), "shared prefix")
    apart = simulate(pricer, trace, Policy.CONTINUOUS, Settings(read_once=False)).summary()
    once = simulate(pricer, trace, Policy.CONTINUOUS, Settings(read_once=True)).summary()
    assert once["tpot_s"]["p50"] < apart["tpot_s"]["p50"]
    assert once["throughput_tokens_per_s"] > apart["throughput_tokens_per_s"]


def test_a_request_the_card_cannot_hold_alone_is_refused() -> None:
    r = resolved("r1-qwen7b-h200")
    memory = r.card.memory
    small = attrs.evolve(r.card, memory=attrs.evolve(memory, capacity=attrs.evolve(memory.capacity, value=4.8e9)))
    pricer = StepPricer.of(r.header, small, r.serving)
    with pytest.raises(NotResident):
        simulate(pricer, Trace((Request(0, 1, 0.0, 100, 10),), "one"), Policy.CONTINUOUS)


def test_the_command_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["simulate", "r1-qwen7b-h200", "--synthetic", "200", "--seed", "3", "--rate", "400", "--prefix", "600",
            "--kv-page", "16", "--prefix-read-once"]
    first = runner.invoke(cli, [*args, "--json"])
    second = runner.invoke(cli, [*args, "--json"])
    assert first.exit_code == 0, first.output
    assert first.stdout_bytes == second.stdout_bytes
    data = json.loads(first.stdout)
    assert set(data["policies"]) == {"static", "continuous"}
    records = data["policies"]["continuous"]["records"]
    assert len(records) == 200 and records[0]["index"] == 0
    assert data["setup"]["prefix_caching"] and data["setup"]["prefix_read_once"]
    assert data["provenance"] == "estimated"
    out = tmp_path / "sim.txt"
    assert runner.invoke(cli, [*args, "-o", str(out)]).exit_code == 0
    assert runner.invoke(cli, [*args, "-o", str(out)]).exit_code == 2  # exists: --force
    assert runner.invoke(cli, [*args, "-o", str(out), "--force"]).exit_code == 0
    text = out.read_text()
    assert "throughput" in text and "continuous" in text and "prefix hits" in text
    other = runner.invoke(cli, [*args[:5], "4", *args[6:], "--json"])
    assert other.stdout_bytes != first.stdout_bytes


@pytest.mark.parametrize(("name", "changes", "prefix"), [
    ("r1-qwen7b-h200", {}, 0),
    ("r1-qwen7b-h200", {"kv_page": 16, "prefix_read_once": True}, 300),
    ("gemma3-270m-h100", {"kv_page": 16, "prefix_read_once": True}, 700),
    ("qwen35-27b-h200-mtp", {}, 0),
    ("qwen3-30b-a3b-h200", {}, 0),
])
def test_stretches_of_steps_give_the_step_by_step_outcome_bit_for_bit(name: str, changes: dict[str, Any],
                                                                       prefix: int) -> None:
    """Pricing the decode-only steps between events together (passprice.stretch) is an optimisation only: every
    record, count, peak and second by bind equals the step-by-step run's exactly (``==`` on the doubles)."""
    r = resolved(name, **changes)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(60, 7, 400.0, prefix=prefix), pricer.limit)
    for settings in (Settings(read_once=r.serving.prefix_read_once),
                     Settings(chunk=256, max_batch=16, read_once=r.serving.prefix_read_once)):
        for policy in (Policy.STATIC, Policy.CONTINUOUS):
            alone = simulate(pricer, trace, policy, settings, stretches=False)
            together = simulate(pricer, trace, policy, settings)
            assert together == alone, (name, settings, policy)
            assert together.steps > len(trace.requests)


@pytest.mark.parametrize(("name", "changes", "prefix", "rate", "settings"), [
    ("r1-qwen7b-h200", {}, 0, 50.0, Settings()),
    ("r1-qwen7b-h200", {}, 0, 50.0, Settings(chunk=640, max_batch=6)),
    ("r1-qwen7b-h200", {"limit": 131072}, 0, 100.0, Settings()),  # a whole limit reserved: memory runs out
    ("r1-qwen7b-h200", {"kv_page": 16, "prefix_read_once": True}, 300, 50.0, Settings(read_once=True)),
    ("gemma3-270m-h100", {}, 0, 50.0, Settings(chunk=512)),
    ("qwen3-30b-a3b-h200", {}, 0, 50.0, Settings()),
])
def test_arrivals_priced_ahead_give_the_step_by_step_outcome_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, name: str, changes: dict[str, Any], prefix: int, rate: float, settings: Settings
) -> None:
    """Continuous batching prices the next arrivals' admissions with a stretch, each at the step its clock is
    predicted to reach the arrival, and keeps the steps up to the first wrong prediction: an optimisation only.
    Arrivals a few decode steps apart under a cap, a token budget and memory that stop admissions, shared prefixes
    (never admitted ahead), windowed layers and experts: the outcome equals the step-by-step run's, and arrivals
    were admitted ahead."""
    ahead: list[int] = []
    real = Stretch.priced_chunked

    def spy(self: Stretch, pricer: StepPricer, n: int, at: Any, prompts: Any, bare: bool = False) -> Any:
        ahead.append(len(at))
        return real(self, pricer, n, at, prompts, bare)

    monkeypatch.setattr(Stretch, "priced_chunked", spy)
    r = resolved(name, **changes)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(90, 3, rate, prefix=prefix), pricer.limit)
    if prefix:  # every third request shares a prefix (read once a step), the others are admitted ahead
        trace = Trace(tuple(q if q.index % 3 == 0 else attrs.evolve(q, prefix_id=None, prefix=0)
                            for q in trace.requests), trace.source)
    alone = simulate(pricer, trace, Policy.CONTINUOUS, settings, stretches=False)
    together = simulate(pricer, trace, Policy.CONTINUOUS, settings)
    assert together == alone
    assert sum(ahead) > 0
    assert sum(record.prefix_hit for record in together.records) > 0 or not prefix
    if "limit" in changes:
        assert sum(record.waited_for_memory for record in together.records) > 0


def _queue(n: int, seed: int, prompts: tuple[int, int], outputs: int, spread: float = 0.0) -> Trace:
    """``n`` requests arriving at 0 (or uniformly over ``spread`` seconds), prompts uniform in ``prompts``, outputs
    cycling 1 … ``outputs``: a queue that drains one request at a time as each finishes (the attacker's shape)."""
    rng = random.Random(seed)
    return Trace(tuple(Request(i, i + 1, rng.random() * spread, rng.randint(*prompts), i % outputs + 1)
                       for i in range(n)), "queue")


@pytest.mark.parametrize(("name", "changes", "trace", "settings"), [
    # Everyone waits from the start: each finish admits the head of the queue (the batch cap binds).
    ("gemma3-270m-h100", {}, _queue(160, 1, (100, 600), 300), Settings(max_batch=16)),
    ("r1-qwen7b-h200", {}, _queue(160, 2, (100, 600), 200), Settings(max_batch=12)),
    # Prompts longer than a step's budget: chunked over several steps while others decode and join.
    ("r1-qwen7b-h200", {}, _queue(120, 3, (50, 900), 150), Settings(chunk=256, max_batch=10)),
    ("r1-qwen7b-h200", {}, _queue(120, 4, (200, 1500), 120, spread=4.0), Settings(chunk=512, max_batch=64)),
    # Memory, not the cap, holds the queue (a whole 131,072-position limit reserved): waited for memory.
    ("r1-qwen7b-h200", {"limit": 131072}, _queue(120, 5, (100, 600), 150), Settings()),
    # A burst of arrivals, each prefilled behind the others' chunks after the step it joined at (windowed layers).
    ("gemma3-270m-h100", {}, synthetic(Synthetic(150, 7, 5000.0), 32768), Settings()),
    # Experts, and a queue refilled by arrivals while it drains.
    ("qwen3-30b-a3b-h200", {}, _queue(150, 6, (100, 700), 200, spread=1.0), Settings(chunk=384, max_batch=8)),
])
def test_requests_waiting_and_long_prompts_planned_ahead_give_the_step_by_step_outcome(
    monkeypatch: pytest.MonkeyPatch, name: str, changes: dict[str, Any], trace: Trace, settings: Settings
) -> None:
    """Continuous batching also plans the admissions of the requests waiting (each at the first step where the cap
    and memory hold it after the retirements before it: no clock needed) and chunks every prompt admitted ahead over
    as many steps as the token budget takes: an optimisation only. The outcome equals the step-by-step run's, bit
    for bit, and the stretches did plan ahead: few steps priced alone, and prompts in several chunks where the
    budget is small."""
    calls: list[int] = []
    partial: list[bool] = []
    alone_steps: list[int] = []
    real = Stretch.priced_chunked
    real_price = StepPricer.price

    def one(self: StepPricer, step: StepRows) -> StepCost:
        alone_steps.append(1)
        return real_price(self, step)

    def spy(self: Stretch, pricer: StepPricer, n: int, at: Any, prompts: Any, bare: bool = False) -> Any:
        calls.append(len(at))
        partial.append(bool((prompts.lasts < prompts.chunks).any()))
        return real(self, pricer, n, at, prompts, bare)

    monkeypatch.setattr(Stretch, "priced_chunked", spy)
    r = resolved(name, **changes)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    alone = simulate(pricer, trace, Policy.CONTINUOUS, settings, stretches=False)
    static_alone = simulate(pricer, trace, Policy.STATIC, settings, stretches=False)
    monkeypatch.setattr(StepPricer, "price", one)
    together = simulate(pricer, trace, Policy.CONTINUOUS, settings)
    assert together == alone
    # Planned ahead, and at no more work than step by step; a try that lost (the burst: one try, then 68 steps
    # alone at 1,296 units against 4,156 when every step planned) backs the planning off (PLAN_BACKOFF).
    assert len(calls) > 0 and together.work < alone.work, (len(calls), together.work, alone.work)
    if "limit" in changes or settings.max_batch < 64:
        assert len(alone_steps) < len(trace.requests) / 4, (len(calls), len(alone_steps))
    # Static batching: each batch's prompts chunked over the steps its token budget takes, planned likewise.
    alone_steps.clear()
    assert simulate(pricer, trace, Policy.STATIC, settings) == static_alone
    assert len(alone_steps) < len(trace.requests) / 4
    if settings.chunk < 600:
        assert any(partial)
    if "limit" in changes:
        assert sum(record.waited_for_memory for record in together.records) > 0


@pytest.mark.parametrize(("name", "trace", "settings"), [
    # Drafting (2 tokens a pass: fractional tokens, positions summed step by step): a queue served in batches of 24.
    ("qwen35-27b-h200-mtp", _queue(72, 8, (100, 600), 90), Settings(max_batch=24)),
    # Three drafted tokens on a paged cache, arrivals spread out, a small token budget.
    ("qwen35-27b-h200-chat", _queue(60, 9, (50, 400), 70, spread=0.5), Settings(chunk=256, max_batch=20)),
])
def test_a_static_drafting_batch_runs_through_its_finishes_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, name: str, trace: Trace, settings: Settings
) -> None:
    """Static batching admits nobody until its batch ends, so once its prompts are prefilled a drafting batch's
    steps are priced through every finish at once (each step's sums over the sequences still decoding, in their
    order): an optimisation only. The outcome equals the step-by-step run's bit for bit, and the decode phase took
    far fewer pricing calls than the batch has finishing steps (one stretch a finish before)."""
    r = resolved(name)
    pricer = StepPricer.of(r.header, r.card, r.serving)
    alone = simulate(pricer, trace, Policy.STATIC, settings, stretches=False)
    calls: list[int] = []
    real = StepPricer.price_many

    def spy(self: StepPricer, sums: Any) -> Any:
        calls.append(1)
        return real(self, sums)

    monkeypatch.setattr(StepPricer, "price_many", spy)
    together = simulate(pricer, trace, Policy.STATIC, settings)
    assert together == alone
    finishing = len({record.finished for record in alone.records})
    assert len(calls) < finishing / 3, (len(calls), finishing)


def test_the_work_a_run_does_is_bounded_and_refused_by_name() -> None:
    """The steps a run takes do not bound its time (a stretch prices thousands of steps for the cost of a few alone),
    so the work is counted (simulate.MAX_WORK's units): a run within the budget reports what it spent and gives the
    same outcome as without a budget (the work is not part of the outcome); past the budget the run is refused by
    name, saying where it stopped and how to go on. The command's default is MAX_WORK, shared by the policies."""
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(120, 3, 50.0), pricer.limit)
    free = simulate(pricer, trace, Policy.CONTINUOUS)
    # Stepping alone costs WORK_ALONE a step and a little more for nothing else: the work of a run that prices
    # every step alone is exactly WORK_ALONE times its steps.
    alone = simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)
    assert alone.work == simulate_module.WORK_ALONE * alone.steps
    assert 0 < free.work < alone.work  # stretches: far less work than stepping alone
    assert simulate(pricer, trace, Policy.CONTINUOUS, max_work=free.work) == free
    with pytest.raises(InputError, match=(
            rf"^simulate: the continuous run passed the {free.work - 1:,} units of work left of --max-work after "
            r"[0-9,]+ steps, [0-9.,]+ s into the trace with [0-9,]+ of 120 requests served \(a unit is about 10 µs "
            r"of CPU: a step priced alone 8 and 1 a 48 sequences, a stretch of steps priced together 40, a try of "
            r"planning admissions ahead 60 and more\); simulate part of the trace, or raise --max-work "
            # Refused at the last request: every request served in free.work units, rounded up to 2 figures.
            rf"\(at its pace so far, 120 of 120 requests in {free.work:,} units, this run would end near 2,100 units "
            r"of --max-work, counting the runs before it\)$")):
        simulate(pricer, trace, Policy.CONTINUOUS, max_work=free.work - 1)
    assert free.work == 2_024  # 1,864 before each peak check of memory held cost WORK_PEAK (attack round 35)
    result = CliRunner().invoke(cli, ["simulate", "r1-qwen7b-h200", "--synthetic", "120", "--seed", "3",
                                      "--max-work", "100"])
    assert result.exit_code == 2, result.output
    assert "simulate: the static run passed the 100 units of work left of --max-work after " in result.stderr
    assert "--max-work INTEGER" in CliRunner().invoke(cli, ["simulate", "--help"]).output
    assert f"[default: {simulate_module.MAX_WORK}]" in CliRunner().invoke(cli, ["simulate", "--help"]).output


def test_the_work_of_short_stretches_and_predictions_is_counted() -> None:
    """Issue 13: arrivals on a small model (gemma3-270m-h100, --max-batch 160) make short stretches (tens of steps,
    two attention groups) and predict the next arrivals at each; before the fix a stretch was charged 10 units, a
    block of its steps 10 and a prediction's bisections nothing, so 12,998 arrivals ran 21 to 33 µs a unit (refused
    only after 1.8 s of CPU on a quiet machine). 200 of the synthetic arrivals (seed 1, 50/s): the old accounting
    charged the static run 5,542 units and the continuous one 6,586 (measured with the code before the fix); each
    stretch now costs WORK_STRETCH, each further block WORK_BLOCK, each prediction a unit every WORK_LOOKS looks, so
    both runs pass those budgets and are refused by name (exit 2, one error line), while the outcome within a budget
    is unchanged. (The continuous run's tries that plan nobody back off since attack round 35: 15,215 → 11,740 units,
    0.235 → 0.164 s of CPU in process, still past 1.5 times the old 6,586.)"""
    assert (simulate_module.WORK_STRETCH, simulate_module.WORK_BLOCK, simulate_module.WORK_LOOKS) == (40, 14, 32)
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(200, 1, 50.0), pricer.limit)
    settings = Settings(max_batch=160)
    for policy, old in ((Policy.STATIC, 5_542), (Policy.CONTINUOUS, 6_586)):
        free = simulate(pricer, trace, policy, settings)
        assert free.work > old * 3 // 2, (policy, free.work)
        assert simulate(pricer, trace, policy, settings, max_work=free.work) == free
        with pytest.raises(InputError, match=rf"^simulate: the {policy.value} run passed the {old:,} units of work "):
            simulate(pricer, trace, policy, settings, max_work=old)
    lines = bad("simulate", "gemma3-270m-h100", "--max-batch", "160", "--synthetic", "200", "--seed", "1",
                "--rate", "50", "--max-work", "12128",
                says="simulate: the continuous run passed the 426 units of work left of --max-work after ")
    assert len(lines) == 1 and lines[0].endswith("simulate part of the trace, or raise --max-work"), lines


def test_the_work_of_a_drafting_batch_counts_its_positions() -> None:
    """Issue 13: a drafting serving (qwen35-27b-h200-mtp) over a queue all at once runs its static batches through
    their finishes in blocks of up to BLOCK positions (steps × sequences), each advanced and summed; charged only by
    its segments, the 15,000-request queue ran 1.68 s of CPU on a quiet machine before --max-work refused it. Each
    block now costs a unit a WORK_ELEMENTS positions besides: 300 requests at 0 (prompts 100 … 600, outputs
    13·i mod 4,000 + 1) took 2,069 units without that charge (measured with the code before it) and are refused
    under that budget now, by name. (Its blocks end at the batch's last finish since attack round 35: 2,915 → 2,566
    units.)"""
    assert simulate_module.WORK_ELEMENTS == 512
    r = resolved("qwen35-27b-h200-mtp")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    rng = random.Random(13)
    trace = Trace(tuple(Request(i, i + 1, 0.0, rng.randint(100, 600), i * 13 % 4000 + 1) for i in range(300)), "queue")
    free = simulate(pricer, trace, Policy.STATIC)
    assert free.work > 2_069 + 400, free.work
    assert simulate(pricer, trace, Policy.STATIC, max_work=free.work) == free
    with pytest.raises(InputError, match=r"^simulate: the static run passed the 2,069 units of work left of "):
        simulate(pricer, trace, Policy.STATIC, max_work=2_069)


def test_simulate_under_a_stack_refuses_a_step_outside_its_range() -> None:
    """A serving stack's facts hold on the passes it was measured on (llamacpp-cuda-2405: 1 token-row a pass, batch
    1 decode): the first step of a synthetic trace prefills a 605-token prompt in one chunk, 605 token-rows, so the
    run is refused by name rather than priced on the stack's rates outside their range (stretches, which skip the
    per-step check, are off under a stack)."""
    result = CliRunner().invoke(
        cli, ["simulate", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--synthetic", "20", "--seed", "1"]
    )
    assert result.exit_code == 1, result.output
    assert "refused: BeyondStack: llamacpp-cuda-2405 was calibrated on passes of 1 … 1 token-rows" in result.stderr
    assert "this price needs 605 token-rows a step (0 decoding × 1, 605 prompt)" in result.stderr


def test_serving_both_policies_shares_one_step_budget_and_is_each_policy_alone() -> None:
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(40, 3, rate=100.0), pricer.limit)
    both = (Policy.STATIC, Policy.CONTINUOUS)
    alone = [simulate(pricer, trace, p) for p in both]
    served = simulate_module.serve(pricer, trace, both, max_steps=10**6)
    assert [o.summary() for o in served] == [o.summary() for o in alone]
    # The bound counts both policies: a budget one policy's bound fits, but not both, is refused before any step.
    least = simulate_module.least_steps(pricer, trace)
    with pytest.raises(InputError) as caught:
        simulate_module.serve(pricer, trace, both, max_steps=2 * least - 1)
    assert str(caught.value).startswith(
        f"simulate: the trace needs at least {2 * least:,} steps (static, continuous), more than the "
        f"{2 * least - 1:,} --max-steps allows"
    )
    # The steps the first policy took are not the second's to take.
    first = alone[0].steps
    with pytest.raises(InputError, match="more than"):
        simulate_module.serve(pricer, trace, both, max_steps=first + least - 1 if least <= first else first)
