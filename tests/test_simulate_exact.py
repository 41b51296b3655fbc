"""The simulator's shortcuts against the straightforward computation they stand for (issue 13: ``simulate --json`` of
a 900 KB trace under 2 s): on small random traces, a run whose decode-only steps are priced together in stretches
(planned past admissions, finishes and prompt chunks) gives the step-by-step run's outcome bit for bit, and the memory
a stretch's sequences hold at each of its steps, summed in closed form, is the sum of what each holds, step by step.
Hypothesis draws the traces; the example budgets are small and fixed, so the file runs in seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passprice.registry import find_root
from passprice.servings import Resolved, load_spec, override, resolve
from passprice.simulate import Policy, Settings, simulate
from passprice.steps import StepPricer
from passprice.stretch import held_totals
from passprice.trace import Request, Trace

ROOT = find_root(Path(__file__).resolve().parent.parent)


def _pricer(name: str, **changes: Any) -> StepPricer:
    r: Resolved = resolve(ROOT, override(load_spec(ROOT, name), **changes))
    return StepPricer.of(r.header, r.card, r.serving)


#: A contiguous cache (what a sequence holds does not move), a paged one, and a paged cache with windowed layers
#: whose window (512) is a whole number of pages (16) or not (7).
PRICERS = {
    "contiguous": ("r1-qwen7b-h200", {}),
    "paged": ("r1-qwen7b-h200", {"kv_page": 16}),
    "windowed": ("gemma3-270m-h100", {}),
    "windowed, page 7": ("gemma3-270m-h100", {"kv_page": 7}),
}
_BUILT: dict[str, StepPricer] = {}


def pricer_of(kind: str) -> StepPricer:
    if kind not in _BUILT:
        name, changes = PRICERS[kind]
        _BUILT[kind] = _pricer(name, **changes)
    return _BUILT[kind]


@st.composite
def _held_case(draw: st.DrawFn) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 30))
    base = np.array(draw(st.lists(st.integers(-3, 1500), min_size=n, max_size=n)), dtype=float)
    begin = np.array(draw(st.lists(st.integers(-1, 60), min_size=n, max_size=n)), dtype=np.int64)
    length = np.array(draw(st.lists(st.integers(0, 80), min_size=n, max_size=n)), dtype=np.int64)
    steps = np.array(sorted(draw(st.sets(st.integers(0, 150), min_size=1, max_size=40))), dtype=np.int64)
    return base, draw(st.integers(1, 3)), begin, begin + length, steps


@pytest.mark.parametrize("kind", list(PRICERS))
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=_held_case())
def test_held_totals_are_the_sums_of_what_each_sequence_holds(kind: str, case: Any) -> None:
    """``held_totals`` (closed form: counts, positions and their remainders by page) equals, at every step, the
    double ``StepPricer.held`` summed over the sequences active at that step, each at ``base + (i + 1) · e``
    positions: ``==``, not approximately."""
    base, e, begin, end, steps = case
    pricer = pricer_of(kind)
    got = held_totals(pricer, base, float(e), begin, end, steps)
    assert got is not None
    for x, i in enumerate(steps.tolist()):
        live = (begin <= i) & (i < end)
        want = float(pricer.held(base[live] + (i + 1) * float(e)).sum()) if live.any() else 0.0
        assert got[x] == want, (kind, i)


def test_held_totals_declines_what_it_cannot_sum_exactly() -> None:
    """A fractional number of tokens a pass (drafting) or fractional positions: not summed in closed form."""
    pricer = pricer_of("windowed")
    one = np.ones(2)
    at = np.arange(3, dtype=np.int64)
    assert held_totals(pricer, one, 1.5, at[:2], at[1:], at) is None
    assert held_totals(pricer, one * 0.5, 1.0, at[:2], at[1:], at) is None


@st.composite
def _trace(draw: st.DrawFn) -> Trace:
    n = draw(st.integers(2, 14))
    at_once = draw(st.booleans())
    requests = []
    for i in range(n):
        arrival = 0.0 if at_once else draw(st.floats(0.0, 0.05, allow_nan=False))
        prompt = draw(st.integers(1, 700))
        output = draw(st.integers(1, 90))
        requests.append(Request(i, i + 1, arrival, prompt, output))
    return Trace(tuple(requests), "drawn")


@pytest.mark.parametrize("kind", ["contiguous", "windowed"])
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(trace=_trace(), chunk=st.sampled_from([64, 256, 2048]), max_batch=st.integers(1, 8))
def test_stretches_give_the_step_by_step_outcome_on_drawn_traces(kind: str, trace: Trace, chunk: int,
                                                                   max_batch: int) -> None:
    """Both policies, stretches against every step priced alone: every record, count, peak (memory held and
    reserved) and second by bind equal (``==`` on the doubles). Small token budgets and batch caps make prompts
    chunked over several steps, queues that drain one finish at a time and admissions planned ahead."""
    pricer = pricer_of(kind)
    chosen = Settings(chunk=chunk, max_batch=max_batch)
    for policy in (Policy.STATIC, Policy.CONTINUOUS):
        alone = simulate(pricer, trace, policy, chosen, stretches=False)
        assert simulate(pricer, trace, policy, chosen) == alone, (policy, chunk, max_batch)


def _record_json(record: Any) -> dict[str, Any]:
    """A request's record as ``--json`` wrote it one record at a time (the straightforward reference)."""
    r = record.request
    return {
        "index": r.index, "line": r.line, "arrival_s": r.arrival, "prompt_tokens": r.prompt,
        "output_tokens": r.output, "prefix_id": r.prefix_id, "prefix_tokens": r.prefix,
        "shared_positions": record.shared, "prefix_hit": record.prefix_hit, "prompt_rows": record.prompt_rows,
        "admitted_s": record.admitted, "first_token_s": record.first_token, "finished_s": record.finished,
        "queue_s": record.admitted - r.arrival, "ttft_s": record.ttft, "tpot_s": record.tpot, "e2e_s": record.e2e,
        "waited_for_memory": record.waited_for_memory,
    }


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(trace=_trace(), max_batch=st.integers(1, 8))
def test_records_written_column_by_column_are_each_records_figures(trace: Trace, max_batch: int) -> None:
    """``--json``'s request records are made column by column (``records_table``) and written from the columns
    (``jsontext``): the dicts they stand for are each record's own figures, of the same types, and the text is
    ``json.dumps``' of those dicts (arrivals given as whole numbers stay whole numbers)."""
    import json

    from passprice import jsontext
    from passprice.simulate import records_table

    given_ints = Trace(tuple(attrs.evolve(q, arrival=int(q.arrival * 100)) for q in trace.requests), "ints")
    for drawn in (trace, given_ints):
        outcome = simulate(pricer_of("windowed"), drawn, Policy.CONTINUOUS, Settings(max_batch=max_batch))
        table = records_table(outcome.records)
        want = [_record_json(r) for r in outcome.records]
        got = table.records()
        assert got == want
        assert [[type(v) for v in d.values()] for d in got] == [[type(v) for v in d.values()] for d in want]
        assert jsontext.dumps({"records": table}) == json.dumps({"records": want}, indent=2)


@st.composite
def _trace_with_prefixes(draw: st.DrawFn) -> Trace:
    """2 to 12 requests, at once or within 20 ms, some naming one of two shared prefixes (one length an id, below
    each prompt naming it, as a trace file must give them)."""
    n = draw(st.integers(2, 12))
    at_once = draw(st.booleans())
    lengths = {"a": draw(st.integers(1, 300)), "b": draw(st.integers(1, 300))}
    requests = []
    for i in range(n):
        arrival = 0.0 if at_once else draw(st.floats(0.0, 0.02, allow_nan=False))
        pid = draw(st.sampled_from([None, None, "a", "b"]))
        prefix = lengths[pid] if pid else 0
        prompt = draw(st.integers(prefix + 1, prefix + 400))
        requests.append(Request(i, i + 1, arrival, prompt, draw(st.integers(1, 60)), pid, prefix))
    return Trace(tuple(requests), "drawn")


@pytest.mark.parametrize("kind", ["paged", "windowed"])
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(trace=_trace_with_prefixes(), chunk=st.sampled_from([1, 2, 3, 16, 64, 256]), max_batch=st.integers(1, 12),
       horizon=st.integers(2, 40), arrivals=st.integers(1, 6), queued=st.integers(1, 8), tries=st.integers(1, 4),
       caching=st.booleans(), read_once=st.booleans())
def test_stretches_planned_to_small_horizons_give_the_step_by_step_outcome(
        kind: str, trace: Trace, chunk: int, max_batch: int, horizon: int, arrivals: int, queued: int, tries: int,
        caching: bool, read_once: bool) -> None:
    """The planner's limits made small (``AHEAD_STEPS``, ``AHEAD``, ``AHEAD_QUEUED``, ``AHEAD_TRIES``), so that small
    traces reach them: a stretch whose planning stops at its horizon with a prompt still prefilling (a 5,000-token
    prompt at ``--chunk 2`` beside a long decode ran 452 steps without its rows before), a queue planned only in
    part, an arrival past the arrivals predicted. Both policies, with shared prefixes (caching them or not, read once
    a step or not), against every step priced alone: ``==`` on every record, count, peak and second by bind."""
    from passprice import simulate as simulate_module

    pricer = pricer_of(kind)
    chosen = Settings(chunk=chunk, max_batch=max_batch, prefix_caching=caching, read_once=read_once)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("AHEAD_STEPS", horizon), ("AHEAD", arrivals), ("AHEAD_QUEUED", queued),
                            ("AHEAD_TRIES", tries)):
            patch.setattr(simulate_module, name, value)
        for policy in (Policy.STATIC, Policy.CONTINUOUS):
            alone = simulate(pricer, trace, policy, chosen, stretches=False)
            assert simulate(pricer, trace, policy, chosen) == alone, (policy, chunk, max_batch)
