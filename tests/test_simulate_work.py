"""simulate's work budget against the shapes that ran past it (issue 13: no input under 1 MB keeps a command past
2 s of CPU): each is refused by ``--max-work``, by name and where it stopped, and the README's own example still runs
under the default budget. Refusals, not timings: the CPU each took is in the commit messages and the README."""

from __future__ import annotations

import random
from pathlib import Path

from cli_helpers import invoke
from passprice import simulate as simulate_module
from passprice.simulate import Policy, serve
from passprice.steps import StepPricer
from passprice.trace import Synthetic, synthetic
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
        "and more); simulate part of the trace, or raise --max-work"
    ]


def test_the_readme_example_runs_within_the_default_budget() -> None:
    """The README's example (1,000 synthetic requests at 200/s, seed 7, on r1-qwen7b-h200, both policies) runs
    whole under the default budget: 88,363 of the 90,000 units (static 2,704, continuous 85,659; 88,742 before the
    peak check was charged by what it sums)."""
    r = resolved("r1-qwen7b-h200")
    pricer = StepPricer.of(r.header, r.card, r.serving)
    trace = synthetic(Synthetic(1000, 7, 200.0), pricer.limit)
    static, continuous = serve(pricer, trace, (Policy.STATIC, Policy.CONTINUOUS),
                               max_work=simulate_module.MAX_WORK)
    assert (static.work, continuous.work) == (2_704, 85_659)
