"""simulate's work budget against the shapes that ran past it (issue 13: no input under 1 MB keeps a command past
2 s of CPU): each is refused by ``--max-work``, by name and where it stopped, and the README's own example still runs
under the default budget. Refusals, not timings: the CPU each took is in the commit messages and the README."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cli_helpers import invoke
from passprice import simulate as simulate_module
from passprice.simulate import Policy, Settings, serve, simulate
from passprice.steps import StepPricer
from passprice.trace import Request, Synthetic, Trace, synthetic
from test_simulate import resolved


def test_steps_priced_alone_are_charged_by_their_sequences(tmp_path: Path) -> None:
    """9,800 requests at 0 (986 KB), every one naming the same 64-token prefix, on ``gemma3-270m-h100 --max-batch
    4096``: a prompt sharing a prefix is never planned ahead, so each step is priced alone with about 4,000
    sequences (their rows gathered, priced, advanced and their bytes held summed: 0.15-0.2 µs each). At a flat 8
    units a step the command ran 6.9 to 8.9 s of CPU (load 3) before its refusal; at a unit more for every 48 active
    sequences (``simulate.WORK_ALONE_SEQUENCES``) it is refused after 967 steps, about 1.0 s."""
    rng = random.Random(13)
    rows = [f'{{"arrival_s": 0, "prompt_tokens": {rng.randint(100, 600)}, "output_tokens": {i % 4000 + 1}, '
            f'"prefix_id": "s", "prefix_tokens": 64}}\n' for i in range(9800)]
    trace = tmp_path / "shared.jsonl"
    trace.write_text("".join(rows), encoding="utf-8")
    assert trace.stat().st_size < 1_000_000
    result = invoke("simulate", "gemma3-270m-h100", "--trace", str(trace), "--max-batch", "4096")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: simulate: the static run passed the 90,000 units of work left of --max-work after 967 "
        "steps, 4.0 s into the trace with 829 of 9,800 requests served (a unit is about 10 µs of CPU: a step priced "
        "alone 8 and 1 a 48 sequences, a stretch of steps priced together 40, a try of planning admissions ahead 60 "
        "and more); simulate part of the trace, or raise --max-work (at its pace so far, 829 of 9,800 requests in "
        "90,024 units, this run would end near 1,100,000 units of --max-work, counting the runs before it)"
    ]


def test_the_readme_example_runs_within_the_default_budget() -> None:
    """The README's example (1,000 synthetic requests at 200/s, seed 7, on r1-qwen7b-h200, both policies) runs
    whole under the default budget: 8,344 of the 90,000 units (static 2,704, continuous 5,640; continuous 85,659 before
    a planning try that cost more than the steps it kept backed the planning off, ``simulate.PLAN_BACKOFF``)."""
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(1000, 7, 200.0), pricer.limit)
    static, continuous = serve(pricer, trace, (Policy.STATIC, Policy.CONTINUOUS),
                               max_work=simulate_module.MAX_WORK)
    assert (static.work, continuous.work) == (2_704, 5_680)


def test_the_peak_check_in_blocks_of_steps_is_the_step_by_step_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The peak check sums the prompts prefilling a block of steps at a time (``simulate.PEAK_BLOCK`` positions):
    with blocks of one step, a queue of 400 requests at once whose prompts prefill over many steps (``--chunk 256``,
    so every stretch's check has prompts with chunks planned, and other sequences steady) gives the step-by-step
    run's outcome bit for bit, peak held included."""
    monkeypatch.setattr(simulate_module, "PEAK_BLOCK", 1)
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    rng = random.Random(13)
    trace = Trace(tuple(Request(i, None, 0.0, rng.randint(100, 600), i % 97 + 1) for i in range(400)), "queue")
    settings = Settings(chunk=256, max_batch=300)
    for policy in (Policy.STATIC, Policy.CONTINUOUS):
        fast = simulate(pricer, trace, policy, settings)
        slow = simulate(pricer, trace, policy, settings, stretches=False)
        assert fast == slow
        assert fast.peak_held == slow.peak_held


def test_a_queue_of_2000_with_chunks_of_256_served_in_stretches_is_the_step_by_step_run() -> None:
    """2,000 requests at 0 (prompts 100 … 600 tokens, seed 13; outputs i mod 400 + 1), ``--chunk 256 --max-batch
    2048`` on gemma3-270m-h100, continuous: the step-by-step run takes 4,547 steps and peaks at 1,245,454,848 bytes
    held. The run in stretches took 4,903 steps and peaked at 1,240,392,192 bytes: its first stretch planned the
    prompts' chunks only up to the planner's horizon (``simulate.AHEAD_STEPS``, 4,096 steps; the last prompt's rows
    run past it from 1,981 requests on), then priced the steps up to the last member's finish without the rows of
    the prompt still prefilling. Now a stretch whose planning leaves a prompt unfinished ends at the horizon."""
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    rng = random.Random(13)
    trace = Trace(tuple(Request(i, None, 0.0, rng.randint(100, 600), i % 400 + 1) for i in range(2000)), "queue")
    settings = Settings(chunk=256, max_batch=2048)
    fast = simulate(pricer, trace, Policy.CONTINUOUS, settings)
    slow = simulate(pricer, trace, Policy.CONTINUOUS, settings, stretches=False)
    assert (slow.steps, slow.peak_held) == (4_547, 1_245_454_848)
    assert fast == slow


def test_a_prompt_prefilling_past_the_planning_horizon_keeps_its_rows() -> None:
    """The smallest such case: A (a 1-token prompt, 6,000 output tokens) and B (a 5,000-token prompt, 1 output
    token) at 0 on gemma3-270m-h100 with ``--chunk 2``. Step 0 carries A's prompt row and B's first; steps 1 to
    4,999 A's decode row and one of B's (its last row, and its only token, at step 4,999); steps 5,000 to 5,999 A's
    decoding alone (its 6,000th token at step 5,999): 6,000 steps, B's first token before A's last, both policies.
    The stretch planned B's rows up to its horizon (``simulate.AHEAD_STEPS``: 4,096 steps, so 4,096 of B's rows),
    then ran to A's finish at step 6,000 without B's other 904 rows, left to 452 steps of 2 rows after: 6,452 steps,
    B's first token at 0.531 s after A's last at 0.518 s."""
    assert simulate_module.AHEAD_STEPS == 4096
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = Trace((Request(0, None, 0.0, 1, 6000), Request(1, None, 0.0, 5000, 1)), "two")
    settings = Settings(chunk=2)
    for policy in (Policy.STATIC, Policy.CONTINUOUS):
        fast = simulate(pricer, trace, policy, settings)
        slow = simulate(pricer, trace, policy, settings, stretches=False)
        assert fast == slow, policy
        a, b = fast.records
        assert fast.steps == 6_000
        assert b.prompt_rows == 5_000
        assert b.first_token == b.finished < a.finished


def test_a_queue_deeper_than_the_batch_behind_a_small_token_budget_costs_no_more_in_stretches() -> None:
    """1,200 requests at 0 (prompts 100 … 600 tokens, seed 13; outputs i mod 300 + 1), ``--chunk 64 --max-batch
    512`` on gemma3-270m-h100, continuous: step by step, 9,467 steps for 147,839 units (0.8 to 1.3 s of CPU). In
    stretches each step with prompt chunks plans all 512 prompts prefilling over the 4,096-step horizon (about 4,800
    units a try) but keeps only the steps up to the first admission (2 to 11): a request admitted ahead whose prompt
    does not finish in the stretch cuts it there (``ahead``'s ``cut``), and every admitted prompt is queued behind
    thousands of steps of others' rows: 2.75 million units, 5.3 to 7.8 s of CPU, the same outcome; under the default
    budget the command was refused after 127 steps. Now a try that costs more than the steps it keeps would cost alone
    waits (its loss over a step's price) × 4, 16, 64 … steps before the next (``simulate.PLAN_BACKOFF``): 111,578
    units, the same outcome, under the default budget."""
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    rng = random.Random(13)
    trace = Trace(tuple(Request(i, None, 0.0, rng.randint(100, 600), i % 300 + 1) for i in range(1200)), "queue")
    settings = Settings(chunk=64, max_batch=512)
    alone = simulate(pricer, trace, Policy.CONTINUOUS, settings, stretches=False)
    assert (alone.steps, alone.work) == (9_467, 147_839)
    together = simulate(pricer, trace, Policy.CONTINUOUS, settings, max_work=alone.work)
    assert together == alone
    assert together.work == 111_578


def test_a_burst_whose_planning_tries_lose_runs_within_the_default_budget() -> None:
    """3,000 synthetic requests at 5,000/s (seed 7) on gemma3-270m-h100, both policies: the continuous run planned the
    prompts' chunks ahead at nearly every step with prompts (the burst keeps hundreds prefilling), each try keeping a
    few steps: 760,865 units (6.2 to 6.7 s of CPU, load 3-5), refused under the default budget after about 1 s. With
    the planning backed off after a try that loses (``simulate.PLAN_BACKOFF``), 15,430 units and the same outcome
    (0.22 to 0.32 s in process); the whole command runs under the default budget."""
    r = resolved("gemma3-270m-h100")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(3000, 7, 5000.0), pricer.limit)
    static, continuous = serve(pricer, trace, (Policy.STATIC, Policy.CONTINUOUS), max_work=simulate_module.MAX_WORK)
    assert (static.work, continuous.work) == (7_841, 15_430)  # 15,429 before session 39's window rule (window55)
    assert (static.steps, continuous.steps) == (34_586, 6_908)
    assert continuous == simulate(pricer, trace, Policy.CONTINUOUS, stretches=False)
