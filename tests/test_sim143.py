"""The step pricer at the limit, and a paged batch's spread said (issue 13).

1. The pass pricer refuses a position at or past its limit (tests/test_walk138.py: a pass at position p reads p
   positions and writes row p). Can ``simulate`` price a decode there? No: a trace is refused unless each request's
   ``prompt + output`` fits the limit, a prompt's last row (position ``prompt − 1``) gives the first output token,
   and each later pass at position p emits the next, so a request of ``prompt + output`` = limit last decodes at
   position ``limit − 2`` (its last token is emitted, never written back), and a drafting serving (e tokens a
   pass) below ``limit − 1``. The step pricer itself now refuses a step with a row at or past its limit
   (``BadContexts``), as the pass pricer does.
2. ``best qwen3-30b-a3b-h200`` (paged KV) gave 605 sequences counted each at the mean position (2,048 of a 4,096
   limit: 202.1 MB a sequence), where every sequence at its last position holds its limit's whole pages (402.7 MB)
   and 304 fit: ``best`` and ``max-batch`` say so on a ``spread`` line and in ``--json``'s ``spread``. No price
   changes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli_helpers import invoke
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.serving import BadContexts
from passprice.servings import load_spec, override, resolve
from passprice.simulate import Policy, simulate
from passprice.steps import StepPricer, StepRows
from passprice.trace import Request, Trace, check_trace

ROOT = find_root(Path(__file__).resolve().parent.parent)

#: Bytes one cached position takes in qwen3-30b-a3b (48 layers × 4 KV heads × 128 × K and V × 2 B); it has no
#: recurrent state, so a sequence holds its positions' bytes alone.
QWEN3_POSITION = 48 * 4 * 128 * 2 * 2


def _pricer(name: str, **changes: Any) -> StepPricer:
    r = resolve(ROOT, override(load_spec(ROOT, name), **changes))
    return StepPricer.of(r.header, r.card, r.serving)


def _positions(pricer: StepPricer, trace: Trace, policy: Policy, monkeypatch: pytest.MonkeyPatch
               ) -> tuple[list[float], list[float]]:
    """Every decode position and every prompt row's last position the run prices, step by step."""
    decodes: list[float] = []
    prompt_ends: list[float] = []
    price = StepPricer.price

    def recording(self: StepPricer, step: StepRows) -> Any:
        decodes.extend(step.decode_positions.tolist())
        prompt_ends.extend((step.prompt_starts + step.prompt_rows - 1.0).tolist())
        return price(self, step)

    monkeypatch.setattr(StepPricer, "price", recording)
    simulate(pricer, trace, policy, stretches=False)
    monkeypatch.setattr(StepPricer, "price", price)
    return decodes, prompt_ends


@pytest.mark.parametrize("policy", list(Policy))
@pytest.mark.parametrize("page", [None, 16])
def test_a_request_the_length_of_the_limit_decodes_at_most_at_limit_minus_two(
    policy: Policy, page: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Limit 64, one request of prompt 10 + output 54 = 64: its prompt writes rows 0 … 9 and gives token 1; passes
    at positions 10, 11, …, 62 give tokens 2 … 54 (53 passes). Nothing is priced at 63, let alone 64."""
    pricer = _pricer("r1-qwen7b-h200", limit=64, kv_page=page)
    trace = Trace((Request(0, 1, 0.0, 10, 54),), "limit")
    decodes, prompt_ends = _positions(pricer, trace, policy, monkeypatch)
    assert decodes == [float(p) for p in range(10, 63)]
    assert prompt_ends == [9.0]
    assert max(decodes) == pricer.limit - 2
    # The stretches (steps priced together) run the same passes: the same outcome to the bit.
    alone = simulate(pricer, trace, policy, stretches=False)
    together = simulate(pricer, trace, policy)
    assert [r.finished for r in together.records] == [r.finished for r in alone.records]


def test_a_request_past_the_limit_is_refused_before_any_step() -> None:
    """Prompt 10 + output 55 = 65 positions under a 64 limit: refused by name, nothing priced."""
    with pytest.raises(InputError, match="needs 65 positions, longer than the serving's context limit 64"):
        check_trace(Trace((Request(0, 1, 0.0, 10, 55),), "past"), 64)


@pytest.mark.parametrize("policy", list(Policy))
def test_a_drafting_serving_decodes_below_limit_minus_one(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    """qwen35-27b-h200-mtp emits 2.4875 tokens a pass (its acceptance facts): after the prompt's token 1, the pass
    at 10 + 2.4875 k runs while 1 + 2.4875 k < 54, k = 0 … 21 (53 / 2.4875 = 21.3): 22 passes, the last at
    10 + 21 × 2.4875 = 62.2375, below 63 (its drafted rows are the pass pricer's at that position)."""
    pricer = _pricer("qwen35-27b-h200-mtp", limit=64)
    assert pricer.shape.emitted_per_sequence == 2.4875
    decodes, _ = _positions(pricer, Trace((Request(0, 1, 0.0, 10, 54),), "draft"), policy, monkeypatch)
    assert len(decodes) == 22 == math.ceil(53 / 2.4875)
    assert decodes[-1] == pytest.approx(62.2375, abs=1e-12)


def test_the_step_pricer_refuses_a_row_at_its_limit_as_the_pass_pricer_does() -> None:
    pricer = _pricer("r1-qwen7b-h200", limit=64)
    assert pricer.price(StepRows.build(decode_positions=[63.0])).pass_s > 0.0  # the last row, 63, is allowed
    with pytest.raises(BadContexts, match=r"a step decodes at position 64, not below the limit 64: .* holds rows 0 "
                                          r"to 63; end the request one token earlier"):
        pricer.price(StepRows.build(decode_positions=[5.0, 64.0]))
    with pytest.raises(BadContexts, match="a step writes prompt row 64, not below the limit 64"):
        pricer.price(StepRows.build(prompt_starts=[60], prompt_rows=[5], prompt_last=[True]))
    assert pricer.price(StepRows.build(prompt_starts=[59], prompt_rows=[5], prompt_last=[True])).prompt_rows == 5
    # The pass pricer's refusal, for comparison: position 64 of a 64 limit.
    result = invoke("price", "r1-qwen7b-h200", "--limit", "64", "--position", "64")
    assert result.exit_code == 1 and "BadContexts" in result.output, result.output


def _json(*args: str) -> dict[str, Any]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize("command", ["best", "max-batch"])
def test_a_paged_batch_says_it_fits_only_while_positions_stay_spread(command: str) -> None:
    """qwen3-30b-a3b-h200: page 16, mean position 2,048 of 4,096. At the mean a sequence holds 2,048 + 8 positions
    (202,113,024 B); at its last position, 4,095, its limit's whole pages, 4,096 (402,653,184 B). Memory less the
    18.55 GB held once holds 605 of the first and 304 of the second (`--position 4095` gives 304)."""
    spread = _json(command, "qwen3-30b-a3b-h200")["spread"]
    assert spread == {
        "mean_position": 2048.0,
        "held_per_sequence": (2048 + 8) * QWEN3_POSITION,
        "last_positions": [4095],
        "last_held_per_sequence": 4096 * QWEN3_POSITION,
        "last_max_batch": 304,
    }
    assert (2048 + 8) * QWEN3_POSITION == 202_113_024 and 4096 * QWEN3_POSITION == 402_653_184
    assert _json("max-batch", "qwen3-30b-a3b-h200", "--position", "4095")["max_batch"] == 304
    text = invoke(command, "qwen3-30b-a3b-h200").output
    assert (
        "605 sequences counted each at the mean position 2,048 (202.1 MB a sequence, the paged cache's position + "
        "half a page): they fit only while their positions stay spread about it; were every sequence at its last "
        "position, 4,095 of its 4,096 limit (402.7 MB a sequence: its limit's whole pages), memory would hold 304 "
        "(`--position 4095`)"
    ) in text


def test_a_paged_batch_that_fits_at_the_limit_says_so_and_contiguous_says_nothing() -> None:
    text = invoke("max-batch", "qwen3-30b-a3b-h200", "--position", "4095").output
    assert "memory would still hold 304 (`--position 4095`), so the batch fits however their positions stand" in text
    for command in ("best", "max-batch"):
        assert _json(command, "r1-qwen7b-h200")["spread"] is None  # contiguous: it holds its limit
        assert _json(command, "qwen3-30b-a3b-h200", "--contiguous")["spread"] is None
        assert "spread" not in invoke(command, "r1-qwen7b-h200").output
    # No price changes: the best batch and its tokens/s are those without the line.
    best = _json("best", "qwen3-30b-a3b-h200")
    assert best["batch"] == 605


def test_the_step_pricer_allows_every_position_of_the_limit() -> None:
    """Positions 0 … 63 of a 64 limit, one sequence each, price in one step."""
    pricer = _pricer("r1-qwen7b-h200", limit=64)
    cost = pricer.price(StepRows.build(decode_positions=np.arange(64.0)))
    assert cost.decode_rows == 64
