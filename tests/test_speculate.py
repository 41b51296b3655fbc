"""``passprice speculate``: tokens/s and speedup of each draft length from the priced pass, and a Monte-Carlo check of
``emitted_per_pass`` (issue 7, part 3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from passprice.cli import cli
from passprice.drafts import load_draft_method
from passprice.errors import InputError
from passprice.registry import find_root
from passprice.serving import BadDraft, ServingBind, best_serving, emitted_per_pass
from passprice.servings import load_spec, resolve
from passprice.speculate import emitted_sd, parse_tokens, play_acceptance, speculate, with_draft

ROOT = find_root(Path(__file__).resolve().parent.parent)
ROOT_ARG = str(ROOT.path)
CHAT = "qwen35-27b-h200-chat"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", ROOT_ARG, *args])
    return result.exit_code, result.stdout, result.stderr


# --- the Monte-Carlo check ---------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    acceptance=st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=8),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_simulated_tokens_per_pass_converge_to_emitted_per_pass(acceptance: list[float], seed: int) -> None:
    # Each pass: draft i accepted with its conditional acceptance, stop at the first rejection, plus the verified
    # (or bonus) token. The mean of 20,000 passes lies within 5 standard errors of 1 + a1 + a1·a2 + …; the standard
    # error is the exact one-pass standard deviation over √20,000. A draft accepted with a tiny chance (1e-6) is
    # accepted 0 or 1 times in 20,000 passes, where the normal bound does not hold (one acceptance moves the mean by
    # 1/20,000 = 7 standard errors); 5 such whole steps more cover that Poisson tail. Together the test fails by
    # chance far less than once in a million examples.
    sim = play_acceptance(acceptance, 20_000, seed)
    assert sim.expected == emitted_per_pass(acceptance)
    assert abs(sim.mean - sim.expected) <= 5 * sim.stderr + 5 / 20_000 + 1e-9
    assert 1.0 <= sim.mean <= 1 + len(acceptance)


def test_the_error_shrinks_as_one_over_root_passes() -> None:
    acceptance = [0.85, 0.75, 0.65]
    errors = []
    for passes in (1_000, 16_000, 256_000):
        sim = play_acceptance(acceptance, passes, seed=7)
        assert abs(sim.z) < 5
        errors.append(sim.stderr)
    # 16 times the passes, a quarter of the standard error.
    assert errors[1] == pytest.approx(errors[0] / 4) and errors[2] == pytest.approx(errors[1] / 4)


def test_emitted_sd_by_hand() -> None:
    # One draft: emitted is 1 or 2, a Bernoulli(a) plus 1, SD √(a(1 − a)).
    assert emitted_sd([0.85]) == pytest.approx(math.sqrt(0.85 * 0.15))
    # Two drafts a, b: P(A ≥ 1) = a, P(A ≥ 2) = ab; E[A] = a + ab, E[A²] = a + 3ab.
    a, b = 0.8, 0.5
    assert emitted_sd([a, b]) == pytest.approx(math.sqrt(a + 3 * a * b - (a + a * b) ** 2))
    # Certain outcomes have no spread, and the simulation hits them exactly.
    assert emitted_sd([1.0, 1.0, 0.0]) == 0
    sim = play_acceptance([1.0, 1.0, 0.0], 1000)
    assert (sim.mean, sim.stderr, sim.z) == (3.0, 0.0, 0.0)
    assert play_acceptance([], 10).mean == 1.0
    with pytest.raises(InputError):
        play_acceptance([1.5], 10)
    with pytest.raises(InputError):
        play_acceptance([0.5], 0)


# --- the priced speedup ------------------------------------------------------------------------------------------


def chat():  # type: ignore[no-untyped-def]
    r = resolve(ROOT, load_spec(ROOT, CHAT))
    method = load_draft_method(ROOT, "qwen35-mtp")
    return r, method


def test_the_best_draft_length_changes_with_the_batch_because_the_array_overtakes_memory() -> None:
    # Qwen3.5-27B-like on the H200, 2K chats, state flushed every 8 tokens, drafting with its MTP block.
    r, method = chat()
    small = speculate(r.header, r.card, r.serving, method, (1, 2, 3), batch=1, head_rows=32768, passes=1000)
    large = speculate(r.header, r.card, r.serving, method, (1, 2, 3), batch=256, head_rows=32768, passes=1000)
    # Batch 1: the weights' stream binds every draft length; a drafted row adds a little arithmetic and one more
    # row of cache reads and state log, far less than the 17 GB of weights each pass reads anyway, so the longest
    # draft the method has figures for (3) emits the most.
    assert all(row.cost is not None and row.cost.binds is ServingBind.MEMORY for row in small.rows)
    assert small.best_tokens == 3
    # Batch 256: each drafted row multiplies every weight on the integer array for all 256 sequences. For 3 drafts
    # (4 token-rows a sequence) the array term overtakes the memory term and binds; its tokens/s then grows only
    # with emitted tokens per row, 2.9019 / 4 < 2.4875 / 3, so 2 drafts emit more than 3.
    three = large.row(3).cost
    two = large.row(2).cost
    assert three is not None and two is not None
    assert three.binds is ServingBind.ARRAY and three.array_s > three.memory_s
    assert small.row(3).cost is not None and small.row(3).cost.array_s < small.row(3).cost.memory_s
    assert large.best_tokens == 2
    assert two.tokens_per_s > three.tokens_per_s
    # tokens/s is the seed's: batch × emitted per pass / pass seconds; speedup is over no drafting at that batch.
    none = large.row(0).cost
    assert none is not None and none.binds is ServingBind.MEMORY
    assert two.tokens_per_s == 256 * emitted_per_pass([0.85, 0.75]) / two.pass_s
    assert large.row(2).speedup == two.tokens_per_s / none.tokens_per_s
    # The command says the same.
    code, out, _ = run("speculate", CHAT, "--tokens", "1..3", "--batch", "1", "--json")
    assert code == 0 and json.loads(out)["best_tokens"] == 3
    code, out, _ = run("speculate", CHAT, "--tokens", "1..3", "--json")
    data = json.loads(out)
    assert data["batch"] == 256 and data["best_tokens"] == 2
    assert data["rows"][3]["binds"] == "array"


def test_drafts_past_the_methods_figures_are_refused_as_bad_draft() -> None:
    code, out, _ = run("speculate", CHAT, "--tokens", "1..8", "--json")
    assert code == 0
    rows = {row["tokens"]: row for row in json.loads(out)["rows"]}
    assert sorted(rows) == list(range(9))
    assert all(rows[k]["refusal"] == "BadDraft" for k in range(4, 9))
    assert all("tokens_per_s" in rows[k] for k in range(4))
    assert rows[2]["emitted_per_pass"] == pytest.approx(1 + 0.85 + 0.85 * 0.75)
    assert rows[2]["simulated"]["passes"] == 100_000
    code, text, _ = run("speculate", CHAT, "--tokens", "1..8")
    assert "4, 5, 6, 7, 8: refused (BadDraft)" in text
    r, method = chat()
    result = speculate(r.header, r.card, r.serving, method, (4,), batch=1, passes=10)
    assert isinstance(result.row(4).refusal, BadDraft) and result.row(4).emitted is None


def test_best_prices_each_draft_length_at_its_own_best_batch() -> None:
    r, method = chat()
    result = speculate(r.header, r.card, r.serving, method, (1, 2, 3), head_rows=32768, passes=100)
    for k in (0, 1, 2, 3):
        best = best_serving(r.header, r.card, with_draft(r.serving, method, k, 32768))
        row = result.row(k)
        assert row.cost is not None and row.cost.batch == best.batch
        assert row.tokens_per_s == best.tokens_per_s
    code, out, _ = run("speculate", CHAT, "--tokens", "1..3", "--best", "--json")
    assert code == 0 and json.loads(out)["batch"] is None


def test_rows_are_the_seeds_prices() -> None:
    from passprice.serving import price_serving

    r, method = chat()
    result = speculate(r.header, r.card, r.serving, method, (2,), batch=64, head_rows=32768, passes=10)
    direct = price_serving(r.header, r.card, attrs.evolve(with_draft(r.serving, method, 2, 32768), batch=64))
    assert result.row(2).cost == direct


def test_parse_tokens() -> None:
    assert parse_tokens("1..8") == tuple(range(1, 9))
    assert parse_tokens("1-3,5") == (1, 2, 3, 5)
    assert parse_tokens("3") == (3,)
    for bad in ("0", "8..1", "a", "1..65", ""):
        with pytest.raises(InputError):
            parse_tokens(bad)


def test_bad_input() -> None:
    code, _, err = run("speculate", "r1-qwen7b-h200")
    assert code == 2 and "names no drafting method" in err and err.count("\n") == 1
    # A method out of its scope is refused by name, as every command refuses it (passprice.scopes).
    code, out, err = run("speculate", "r1-qwen7b-h200", "--draft", "deepseek-v3-mtp", "--tokens", "1,2", "--json")
    assert code == 1 and json.loads(out)["refusal"] == "OutOfScope"
    # A draft length past the method's acceptance figures is refused in its own row.
    code, out, _ = run("speculate", CHAT, "--draft", "qwen35-mtp", "--tokens", "3,4", "--json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert rows[1]["binds"] == "array" and rows[2]["refusal"] == "BadDraft"
    code, _, err = run("speculate", CHAT, "--batch", "4", "--best")
    assert code == 2
    code, _, err = run("speculate", CHAT, "--draft-tokens", "2")
    assert code == 2 and "--tokens" in err
    code, _, err = run("speculate", CHAT, "--tokens", "x")
    assert code == 2 and err.startswith("passprice: error: --tokens")
    code, _, err = run("speculate", CHAT, "--batch", "0")
    assert code == 2
    # Every row refused: a refusal, exit 1.
    code, _, err = run("speculate", CHAT, "--tokens", "4..5", "--batch", "100000")
    assert code == 1 and "every draft length is refused" in err


# --- under a serving stack (issue 14) --------------------------------------------------------------------------------


def test_each_draft_length_under_a_stack_is_its_expected_price_beside_the_limit() -> None:
    from passprice.stacks import BeyondStack, price_expected
    from test_stacks import ranged, stack

    r, method = chat()
    st = stack(read=0.5)  # 10 µs a pass, 5 µs a layer, half the card's read rate, every other share 1
    result = speculate(r.header, r.card, r.serving, method, (1, 2, 3), batch=4, head_rows=32768, passes=100,
                       stack=st)
    assert result.stack == "test-stack"
    undrafted = attrs.evolve(with_draft(r.serving, method, 0, 32768), batch=4)
    base = price_expected(r.header, r.card, undrafted, st).expected.tokens_per_s
    for k in (0, 1, 2, 3):
        row = result.row(k)
        at = attrs.evolve(with_draft(r.serving, method, k, 32768), batch=4)
        by_hand = price_expected(r.header, r.card, at, st)
        assert row.expected is not None and row.expected_refusal is None
        assert row.expected.expected == by_hand.expected and row.expected.limit == row.cost  # the limit unchanged
        assert row.expected.ratio == by_hand.expected.tokens_per_s / row.cost.tokens_per_s  # type: ignore[union-attr]
        assert row.expected_speedup == by_hand.expected.tokens_per_s / base
    # A stack measured on passes of at most 8 token-rows: batch 4 drafting 1 carries 8 (priced), drafting 2 carries
    # 12 (refused by name, with the rows and drafts it needs).
    narrow = attrs.evolve(st, facts={**st.facts, **ranged((1, 8), (0, 10**6))})
    held = speculate(r.header, r.card, r.serving, method, (1, 2), batch=4, head_rows=32768, passes=10, stack=narrow)
    assert held.row(1).expected is not None
    refusal = held.row(2).expected_refusal
    assert isinstance(refusal, BeyondStack) and refusal.needs == 12
    assert "this price needs 12 token-rows a pass (batch 4, 2 draft tokens a sequence)" in str(refusal)
    assert held.row(2).cost is not None  # the limit's row is priced as ever


def test_speculate_with_stack_from_the_command_line(tmp_path: Path) -> None:
    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    # The registered llama.cpp stack, given a share.rewrite, as the hybrid chat serving needs one.
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    path.write_text(
        path.read_text()
        + '\n[share.rewrite]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\nsource = "passprice-stack-calibration"\n'
        'locator = "test: a placeholder for the recurrent state rewritten in place"\n'
    )
    out = invoke("speculate", CHAT, "--tokens", "1..2", "--batch", "1", "--stack", "llamacpp-cuda-2405", "--json",
                 root=root)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    plain = json.loads(invoke("speculate", CHAT, "--tokens", "1..2", "--batch", "1", "--json", root=root).stdout)
    assert data["stack"] == "llamacpp-cuda-2405"
    for row, limit in zip(data["rows"], plain["rows"], strict=True):
        assert {k: row[k] for k in limit} == limit  # the limit's row, untouched
    none, one, two = data["rows"]
    assert none["expected"]["batch"] == 1 and none["expected"]["speedup"] == 1.0
    assert none["expected"]["ratio"] == none["expected"]["tokens_per_s"] / none["tokens_per_s"]
    # The stack was calibrated on batch 1 without drafts: a drafted pass carries 2 and 3 token-rows, beyond it.
    assert one["expected"] is None and one["expected_refusal"]["refusal"] == "BeyondStack"
    assert one["expected_refusal"]["message"] == (
        "llamacpp-cuda-2405 was calibrated on passes of 1 … 1 token-rows (batch × (1 + draft tokens)); this price "
        "needs 2 token-rows a pass (batch 1, 1 draft token a sequence); price the limit (without --stack), or "
        "calibrate the stack on runs at that batch and draft length"
    )
    assert two["expected_refusal"]["needs"] == 3
    text = invoke("speculate", CHAT, "--tokens", "1..2", "--batch", "1", "--stack", "llamacpp-cuda-2405",
                  root=root).stdout
    assert "under stack llamacpp-cuda-2405: the expected price of each draft length beside the limit's" in text
    assert "  1: refused under the stack (BeyondStack): llamacpp-cuda-2405 was calibrated on passes of" in text


def test_speculate_under_a_stack_that_refuses_every_length_exits_1(tmp_path: Path) -> None:
    """As ``price --stack``: a stack that prices none of the draft lengths is a refusal (exit 1), naming it."""
    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    path.write_text(
        path.read_text()
        + '\n[share.rewrite]\nvalue = 0.5\nunit = "1"\nprovenance = "assumed"\nsource = "passprice-stack-calibration"\n'
        'locator = "test: a placeholder for the recurrent state rewritten in place"\n'
    )
    # At batch 2 no drafting and draft lengths 1 and 2 need 2, 4 and 6 token-rows: beyond the stack's 1 … 1.
    out = invoke("speculate", CHAT, "--tokens", "1..2", "--batch", "2", "--stack", "llamacpp-cuda-2405", "--json",
                 root=root)
    assert out.exit_code == 1, out.output
    assert out.stderr == (
        "passprice: refused: stack llamacpp-cuda-2405 refuses every draft length: BeyondStack: llamacpp-cuda-2405 was "
        "calibrated on batch 1 … 1; this price needs batch 2; price at batch 1 (--batch 1, the largest its runs "
        "reach), price the limit (without --stack), or calibrate the stack on runs at that batch (and 2 more draft "
        "lengths alike)\n"
    )
    data = json.loads(out.stdout)
    assert [r["expected_refusal"]["refusal"] for r in data["rows"]] == ["BeyondStack"] * 3
    assert [r["expected_refusal"]["needs"] for r in data["rows"]] == [2, 4, 6]
    assert all(r["tokens_per_s"] > 0 for r in data["rows"])  # the limit's rows are still priced and shown


def test_speculate_under_a_stack_lacking_a_fact_says_which_and_how_to_add_it() -> None:
    """Session 9's walkthrough: the text refusal named only ``(StackLacks)``, no fact and no fix, where ``--json``
    and ``price --stack`` say both. The line now carries the refusal's own message."""
    code, out, err = run("speculate", CHAT, "--tokens", "1..3", "--batch", "1", "--stack", "llamacpp-cuda-2405")
    assert code == 1 and out == ""
    assert err.startswith(
        "passprice: refused: stack llamacpp-cuda-2405 refuses every draft length: StackLacks: stack "
        "'llamacpp-cuda-2405' has no share.rewrite fact, and this serving needs one (the pass rewrites a recurrent "
        "state in place): add it to facts/stacks/llamacpp-cuda-2405.toml"
    )
    assert "more draft lengths alike" not in err  # one message, said once
