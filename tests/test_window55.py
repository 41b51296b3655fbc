"""A windowed layer attends ``window`` positions, its row's own included (session 39, window55): it reads at most
``window − 1`` cached positions and writes its own, as llama.cpp's mask (src/llama-context.cpp at c392e5094d, line
179: a cell is masked when ``pos − p0 >= n_swa``) and Transformers' (masking_utils ``sliding_window_overlay``:
``kv_idx > q_idx − sliding_window``) do; it holds at most ``window``. The rule is written once
(:mod:`passprice.architectures`: ``window_reach``, ``windowed_reads``, ``windowed_held`` and their array forms) and
every caller agrees with it, by hand, at a position below the window, one short of it (the row makes the window), at
it and past it: the serving pricer, the sweep, the step pricer, stretches, the simulator, the decode step and ``kv``.

Gemma 3 270M (``gemma3-270m-h100``): 18 layers, the first five of every six windowed at 512, 1 KV head × (256 + 256)
× 2 B = 1,024 B a position and layer.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest

from passprice.architectures import (
    WINDOW_SOURCE,
    window_reach,
    windowed_held,
    windowed_held_array,
    windowed_reads,
    windowed_reads_array,
)
from passprice.checkpoints import load_checkpoint
from passprice.decode import ZERO_WINDOW_SOURCE, Deployment, HeldClass, LayerKind, StageKind, decode_step
from passprice.kv import kv_report
from passprice.registry import find_root
from passprice.serving import ContextMix, pass_shape
from passprice.servings import Resolved, load_spec, resolve
from passprice.simulate import Policy, Settings, simulate
from passprice.steps import StepPricer, StepRows
from passprice.stretch import Stretch, advance, stepwise_sums
from passprice.sweep import _ShapeByPosition
from passprice.trace import Request, Trace

ROOT = find_root(Path(__file__).resolve().parent.parent)
W = 512
PER = 1024  # bytes a position and layer
LIMIT = 4096
#: Below the window, one short of it, at it, past it; the cached positions a windowed row reads there, by hand
#: (min(p, 512 − 1): session 38's rule read min(p, 512), 512 at the last two); what a windowed layer holds.
POSITIONS = (100, 511, 512, 2000)
READS = (100, 511, 511, 511)
HELD = (100, 511, 512, 512)


@pytest.fixture(scope="module")
def gemma() -> Resolved:
    r = resolve(ROOT, load_spec(ROOT, "gemma3-270m-h100"))
    return attrs.evolve(r, serving=attrs.evolve(r.serving, contexts=ContextMix.uniform(0.0, LIMIT), kv_page=None))


@pytest.fixture(scope="module")
def pricer(gemma: Resolved) -> StepPricer:
    return StepPricer.of(gemma.header, gemma.card, gemma.serving)


def _windowed(pricer: StepPricer) -> int:
    (index,) = [i for i, g in enumerate(pricer.groups) if g.window == W]
    return index


def test_the_rule_its_forms_and_its_sources() -> None:
    assert (window_reach(W), window_reach(1)) == (511, 0)
    assert tuple(windowed_reads(p, W) for p in POSITIONS) == READS
    assert tuple(windowed_held(p, W) for p in POSITIONS) == HELD
    assert type(windowed_reads(5, W)) is int and type(windowed_reads(5.0, W)) is float
    assert type(windowed_held(5, W)) is int and type(windowed_held(5.0, W)) is float
    # The array forms give the scalar forms' doubles.
    many = np.array([*POSITIONS, 0.5, 510.5, 511.5, 1e9])
    assert windowed_reads_array(many, W).tolist() == [windowed_reads(p, W) for p in many.tolist()]
    assert windowed_held_array(many, W).tolist() == [windowed_held(p, W) for p in many.tolist()]
    for cited in ("c392e5094d, lines 163 and 179", "01b77b5793", "00c4411cbe", "004999d972"):
        assert cited in WINDOW_SOURCE
    # A window of 0 stays refused; its citation now names the snapshot's line too (c392e5094d: pos − p0 >= 0 masks
    # every cell, the row's own included).
    assert "c392e5094d, src/llama-context.cpp line 179" in ZERO_WINDOW_SOURCE and "01b77b5793" in ZERO_WINDOW_SOURCE


def test_the_serving_pricer_reads_window_minus_one(gemma: Resolved) -> None:
    for p, reads in zip(POSITIONS, READS, strict=True):
        s = pass_shape(gemma.header, attrs.evolve(gemma.serving, contexts=ContextMix.uniform(float(p), LIMIT)))
        assert s.read_bytes == PER * (15 * reads + 3 * p), p
        assert s.write_bytes == PER * 18
        assert s.held_per_sequence == PER * (15 * W + 3 * LIMIT)
    mix = ContextMix.uniform(512.0, 600)
    assert (mix.windowed_position(W), mix.windowed_held(W, None), mix.windowed_held(W, 16)) == (511.0, 512.0, 512.0)


def test_the_sweep_reads_what_the_serving_pricer_reads(gemma: Resolved) -> None:
    shape = _ShapeByPosition.of(gemma.header, gemma.serving, np.array(POSITIONS, dtype=float))
    assert shape.read_bytes[:, 0].tolist() == [PER * (15 * r + 3 * p) for p, r in zip(POSITIONS, READS, strict=True)]


def test_the_step_pricer_decodes_and_prefills_by_the_rule(pricer: StepPricer) -> None:
    w = _windowed(pricer)
    sums = pricer.sums(StepRows.build(decode_positions=[float(p) for p in POSITIONS]))
    assert sums.groups[w][:2] == (float(sum(READS)), float(sum(READS)))
    # A chunk of 20 rows from 500 scores 500 … 511, then 511 eight times; it reads 500 cached positions. From 2000,
    # three rows score 511 each and read 511.
    (scored, read), = [pair for i, pair in enumerate(pricer.chunk_sums(np.array([500.0, 2000.0]), np.array([20.0, 3.0]),
                                                                      np.zeros(2))) if i == w]
    assert scored.tolist() == [sum(range(500, 512)) + 8 * 511, 3 * 511] == [10_154, 1_533]
    assert read.tolist() == [500, 511]


def test_a_stretch_reaches_window_minus_one_in_closed_form_and_step_by_step(pricer: StepPricer) -> None:
    w = _windowed(pricer)
    want = [min(508 + i, 511) for i in range(6)]  # 508, 509, 510, 511, 511, 511
    stretch = Stretch(np.array([508.0]), np.zeros(1), np.zeros(1, dtype=np.int64), np.array([6]), 1.0, pricer.groups)
    assert stretch.sums(np.arange(6)).groups[w][0].tolist() == want
    stepwise = stepwise_sums(advance(np.array([508.0]), 1.0, 5), np.zeros(1), pricer.groups, 0.0)
    assert stepwise.groups[w][0].tolist() == want


def test_the_simulator_prices_each_step_across_the_window(pricer: StepPricer) -> None:
    # One request: a 508-row prompt (step 0), then 7 decode steps at 508 … 514.
    out = simulate(pricer, Trace((Request(0, 1, 0.0, 508, 8),), "one"), Policy.CONTINUOUS, Settings())
    steps = [pricer.price(StepRows.build(prompt_starts=[0], prompt_rows=[508], prompt_last=[True]))]
    steps += [pricer.price(StepRows.build([508.0 + i])) for i in range(7)]
    assert out.steps == 8
    assert sum(out.bind_s.values()) == pytest.approx(sum(s.pass_s for s in steps), rel=1e-14)


def test_the_decode_step_reads_window_minus_one_and_holds_the_window(gemma: Resolved) -> None:
    for p, reads, held in zip(POSITIONS, READS, HELD, strict=True):
        step = decode_step(gemma.header, Deployment(ctx=p))
        windowed = [st for st in step.stages if st.kind is StageKind.ATTENTION and st.window == W]
        assert len(windowed) == 15
        assert {st.state_read for st in windowed} == {PER * reads}, p
        assert step.held_bytes(HeldClass.KV_CACHE) == PER * (15 * held + 3 * p)


def test_kv_holds_the_window() -> None:
    report = kv_report(load_checkpoint(ROOT, "gemma3-270m-q4_k_m"), POSITIONS)
    for p, held in zip(POSITIONS, HELD, strict=True):
        kind = report.at(p).kind(LayerKind.WINDOWED)
        assert kind is not None and (kind.layers, kind.positions, kind.bytes) == (15, held, 15 * PER * held)
