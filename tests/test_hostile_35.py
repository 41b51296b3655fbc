"""Round 35 of hostile input (#13): the planning back-off of ``simulate`` and the code around it, the review's
newest paths, the TOML fast paths and the classes of the issue.

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line, or
the work counted: units are exact counts, not timings).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from passprice import simulate as simulate_module
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.servings import load_spec, resolve
from passprice.simulate import Policy, simulate
from passprice.steps import StepPricer
from passprice.trace import Request, Trace

ROOT = find_root(Path(__file__).resolve().parent.parent)


def _pricer(name: str) -> StepPricer:
    r = resolve(ROOT, load_spec(ROOT, name))
    return StepPricer.of(r.header, r.card, r.serving)


def _lone(n: int) -> Trace:
    """``n`` requests 10,000 s apart (5-token prompts, 3 output tokens): each served alone, in one stretch."""
    return Trace(tuple(Request(i, i + 1, i * 1e4, 5, 3) for i in range(n)), "lone.jsonl")


# --- (a) simulate: requests that arrive one at a time, each after the last finished -------------------------------


def test_lone_arrivals_charge_the_peak_check_and_back_off_the_tries_that_plan_nobody() -> None:
    """20,000 requests 10,000 s apart (1.2 MB, and its first 15,000 under 1 MB) on ``gemma3-270m-h100``, continuous:
    each request's stretch tried to plan the next arrival ahead (the prediction: about 1 ms of CPU, charged 10 and a
    unit every 32 looks) and checked the peak of memory held (660-860 µs, charged nothing), 61 units a request at
    19-28 µs a unit: 2.5 s of CPU before the refusal (``gpt-oss-20b-h200``: 2.4 s, 30 µs a unit). A try that plans
    nobody now backs the next tries off as ``PLAN_BACKOFF`` does, and each peak check costs ``WORK_PEAK``: 81 units a
    request at 10-11 µs a unit, the same outcome as step by step."""
    pricer = _pricer("gemma3-270m-h100")
    trace = _lone(60)
    free = simulate(pricer, trace, Policy.CONTINUOUS)
    alone = simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)
    assert free == alone  # the work is not part of the outcome
    assert (free.steps, simulate_module.WORK_PEAK) == (180, 40)
    # Each request: a stretch 40, its peak check 40, its finish 1; and the 3 tries before the back-off, 20 each
    # (3,443 before: a try at every request but the last, the peak checks free).
    assert free.work == 60 * 81 + 3 * 20, free.work
    with pytest.raises(InputError, match=r"^simulate: the continuous run passed the 2,000 units of work left of "):
        simulate(pricer, trace, Policy.CONTINUOUS, max_work=2_000)


def test_a_drafting_block_advances_no_further_than_its_sequences_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drafting ``qwen35-27b-h200-mtp`` serving the same lone requests: each stretch advanced its one sequence
    through a block of ``BLOCK`` (65,536) passes — two accumulations of 65,536 rows, uncharged — whatever the 2
    tokens it had left, the block sized by the next arrival 10,000 s ahead: 2.7 s of CPU and 1.0 s of the
    system's before the refusal, 35 µs a unit. A block now ends 2 passes past the finish it runs to."""
    advanced: list[int] = []
    real = simulate_module.advance

    def advance(start: np.ndarray, emitted: float, steps: int) -> np.ndarray:
        advanced.append(steps)
        return real(start, emitted, steps)

    monkeypatch.setattr(simulate_module, "advance", advance)
    pricer = _pricer("qwen35-27b-h200-mtp")
    trace = _lone(40)
    free = simulate(pricer, trace, Policy.CONTINUOUS)
    assert advanced and max(advanced) <= 3, max(advanced)
    assert free == simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)

