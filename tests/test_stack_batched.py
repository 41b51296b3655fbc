"""A second serving stack, calibrated on batched decode (issue 11): LMDeploy's TurboMind v0.1.0a1 (FP16) on an A100
80GB at batches 1 to 64 (registry/measurements/lmdeploy-turbomind-a100.toml, facts/stacks/lmdeploy-turbomind-2312.toml).
Its runs read and validate, its registered facts are what calibrate gives from them, an expected price at a measured
batch follows from its facts by hand within the fit's error, a price outside its range is refused, and best under it
is a batched price."""

from __future__ import annotations

import json
import re

import pytest

from cli_helpers import REPO, invoke, refused
from passprice.calibrate import HoldOut, calibrate, calibration_json, calibration_text, derived_facts, stack_text_with
from passprice.cards import load_card
from passprice.checkpoints import load_checkpoint
from passprice.fits import RunDerivation, RunInput
from passprice.measurements import load_runs
from passprice.registry import Root
from passprice.servings import complete, to_serving
from passprice.stackreach import card_reach
from passprice.stacks import load_stack, price_expected
from passprice.validate import validate

STACK = "lmdeploy-turbomind-2312"
FILE = REPO / "facts" / "stacks" / f"{STACK}.toml"
CARD = "a100_sxm4_80gb"


@pytest.fixture(scope="module")
def calibration() -> object:
    return calibrate(Root(REPO), STACK)


def test_the_runs_read_and_each_quotes_its_row() -> None:
    runs = load_runs(Root(REPO), STACK)
    assert len(runs) == 17
    assert {r.card for r in runs} == {CARD}
    assert {r.checkpoint for r in runs} == {"llama2-7b-f16", "llama2-13b-f16"}
    assert sorted({r.batch for r in runs}) == [1, 16, 32, 64]
    assert {r.source for r in runs} == {"lmdeploy-turbomind-a100"}
    assert {r.source_id for r in runs} == {"lmdeploy-a100-fp16-benchmark"}
    for r in runs:
        # The id says batch, prompt and output; the positions run from the prompt to prompt + output; the locator
        # quotes the table row, whose throughput cell is the figure.
        m = re.fullmatch(r"lmd1\.a100_sxm4_80gb\.l2-(7|13)b\.b(\d+)\.p(\d+)-o(\d+)", r.id)
        assert m is not None, r.id
        batch, prompt, out = (int(g) for g in m.groups()[1:])
        assert (r.batch, r.first, r.last) == (batch, prompt, prompt + out)
        row = re.search(r"row '([^']*)'", r.locator)
        assert row is not None, r.locator
        cells = [c.strip() for c in row.group(1).strip().strip("|").split("|")]  # the row quoted whole (cite66)
        assert cells[:4] == [str(batch), "1", str(prompt), str(out)] and float(cells[4]) == r.tokens_per_s
        # The rule the file states: the largest first-token latency is at most 5 % of a round.
        ftl_max = float(cells[8])
        assert ftl_max <= 0.05 * batch * out / r.tokens_per_s, r.id
    by_id = {r.id: r for r in runs}
    assert by_id["lmd1.a100_sxm4_80gb.l2-13b.b64.p1-o128"].tokens_per_s == 3049.16
    assert by_id["lmd1.a100_sxm4_80gb.l2-7b.b32.p128-o2048"].tokens_per_s == 1462.12


def test_validate_checks_the_files_and_the_limit_bounds_every_run() -> None:
    result = invoke("validate", "--stack", STACK)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"validate: 17 measured runs (stack {STACK})"
    rows = [r for r in validate(Root(REPO)).rows if r.run.stack == STACK]
    assert len(rows) == 17 and all(r.expected is not None and r.error is not None for r in rows)
    assert all(r.limit_ratio is not None and 1.1 < r.limit_ratio < 1.4 for r in rows)  # 1.12 to 1.35
    assert max(abs(r.error) for r in rows if r.error is not None) < 0.03


def test_the_registered_facts_are_what_calibrate_gives_from_the_runs(calibration: object) -> None:
    # calibrate --dry-run on today's runs writes exactly the registered file: the fit, its errors, every run.
    assert stack_text_with(FILE, derived_facts(calibration)) == FILE.read_text(encoding="utf-8")  # type: ignore[arg-type]
    stack = load_stack(Root(REPO), STACK)
    d = stack.facts["share.float"].derivation
    assert isinstance(d, RunDerivation) and len(d.runs) == 17
    assert RunInput("lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128", 100.02) in d.runs
    # One card: no card could be held out, so no card error is written (not a 0); two checkpoints: one is.
    assert d.errors == {
        "in_sample_mean": 0.0109,
        "in_sample_max": 0.0286,
        "checkpoint_out_mean": 0.1268,
        "checkpoint_out_max": 0.6827,
    }
    ranges = {p: stack.facts[p].amount for p in ("range.rows.min", "range.rows.max", "range.position.min",
                                                   "range.position.max")}
    assert ranges == {"range.rows.min": 1, "range.rows.max": 64, "range.position.min": 1, "range.position.max": 4096}


def test_a_hold_out_of_one_group_is_not_possible_and_said_so(calibration: object) -> None:
    cal = calibration
    assert not cal.by_card.possible and cal.by_checkpoint.possible  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="every run is of one card"):
        cal.by_card.worst  # type: ignore[attr-defined]  # noqa: B018
    text = calibration_text(cal)  # type: ignore[arg-type]
    assert "leave one card out             –       –  not possible: every run is of one card" in text
    assert "17 runs, 1 card, 2 checkpoints" in text
    out = calibration_json(cal)  # type: ignore[arg-type]
    assert out["leave_one_card_out"] is None
    assert out["leave_one_checkpoint_out"]["worst"] == "lmd1.a100_sxm4_80gb.l2-13b.b64.p1-o128"
    assert HoldOut("card", {}, {"x": ("a",)}).mean == 0.0
    # On another card the stack warns that it extrapolates, with no error it never measured.
    reach = card_reach(Root(REPO), load_stack(Root(REPO), STACK), "h100_sxm5_80gb")
    assert reach.fitted == (CARD,) and reach.card_out_mean is None
    result = invoke("price", "--checkpoint", "llama2-7b-f16", "--card", "h100_sxm5_80gb", "--batch", "16",
                    "--limit", "2176", "--position", "1152", "--stack", STACK)
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"passprice: warning: stack {STACK} was fitted on runs on 1 card ({CARD}), not h100_sxm5_80gb: its expected "
        "price here extrapolates across cards (no card could be held out of its fit: its error on another card was "
        "never measured)\n"
    )


def test_an_expected_price_at_a_measured_batch_by_hand() -> None:
    """Llama-2-13B F16 at batch 16 from 128 to 2,176 cached positions (LMDeploy measured 605.88 tokens/s), priced as
    a run is: one context class at the mean position 1,152, limit 2,176."""
    root = Root(REPO)
    header = load_checkpoint(root, "llama2-13b-f16")
    run = next(r for r in load_runs(root, STACK) if r.id == "lmd1.a100_sxm4_80gb.l2-13b.b16.p128-o2048")
    serving = to_serving(complete(run.spec(), header))
    card = load_card(root, CARD)
    stack = load_stack(root, STACK)
    # The facts, as the files write them (a re-calibration or a card change must update this test).
    bandwidth, read, append = 2039e9, 0.8583, 0.8337  # facts/cards/a100_sxm4_80gb.toml: B/s, streams.*
    tensor_f16, vector = 156e12, 9.75e12  # MAC/s
    fixed, s_read, s_append, s_float, s_vector, serial = 1716e-6, 0.9329, 1.0, 0.3645, 0.1899, 0.1
    facts = stack.facts
    assert (facts["overhead.pass"].amount, facts["overhead.pass"].unit, facts["overhead.layer"].value) == (1716.0, "us",
                                                                                                     0.0)
    assert [facts[f"share.{k}"].value for k in ("read", "append", "float", "vector")] == [s_read, s_append, s_float,
                                                                                          s_vector]
    assert facts["terms.serial"].value == serial
    # Bytes by hand. A block: q, k, v, o (5,120 x 5,120) and gate, up, down (5,120 x 13,824) at 2 bytes, two F32
    # norms; 40 blocks, the head (5,120 x 32,000 F16), the output norm, and one embedding row (5,120 F16) a sequence.
    block = (4 * 5120 * 5120 + 3 * 5120 * 13824) * 2 + 2 * 5120 * 4
    weights = 40 * block + 5120 * 32000 * 2 + 5120 * 4 + 16 * 5120 * 2
    assert weights == 25_705_041_920
    # A sequence reads K and V of 40 blocks at 5,120 FP16 elements for 1,152 positions, and writes its new one.
    per_position = 2 * 40 * 5120 * 2
    sequence = per_position * (1152 + 1)
    memory_s = weights / (bandwidth * read * s_read) + 16 * sequence / (bandwidth * append * s_append)
    # Every matrix multiply-add of the 16 token-rows rides the tensor cores (F16): 40 blocks' and the head's.
    float_macs = 16 * (40 * (4 * 5120 * 5120 + 3 * 5120 * 13824) + 5120 * 32000)
    float_s = float_macs / (tensor_f16 * s_float)
    priced = price_expected(header, card, serving, stack)
    e = priced.expected
    vector_s = e.vector_macs / (vector * s_vector)  # attention, norms: the vector units' count, from the pricer
    assert e.sequence_bytes == sequence and e.float_matrix_macs == float_macs
    assert e.memory_s == pytest.approx(memory_s, rel=1e-12)
    assert e.array_s == pytest.approx(float_s, rel=1e-12) and e.vector_s == pytest.approx(vector_s, rel=1e-12)
    # pass = fixed + the largest term (memory) + serial x the others.
    pass_s = fixed + memory_s + serial * (float_s + vector_s)
    assert e.binds.value == "memory" and e.pass_s == pytest.approx(pass_s, rel=1e-12)
    assert e.tokens_per_s == pytest.approx(16 / pass_s, rel=1e-12)
    assert 589.6 < e.tokens_per_s < 589.8  # 0.02713 s a pass
    # Within the fit's in-sample error of what LMDeploy measured (605.88: -2.7 %, the fit's largest is 2.86 %).
    assert abs(e.tokens_per_s / run.tokens_per_s - 1) <= facts["share.float"].derivation.errors["in_sample_max"]


def test_a_price_outside_the_batches_and_positions_measured_is_refused() -> None:
    args = ("price", "--checkpoint", "llama2-7b-f16", "--card", CARD, "--stack", STACK, "--limit", "512",
            "--position", "256")
    out = refused(*args, "--batch", "65", name="BeyondStack")
    assert out["message"] == (
        f"{STACK} was calibrated on batch 1 … 64; this price needs batch 65; price at batch 64 (--batch 64, the "
        "largest its runs reach), price the limit (without --stack), or calibrate the stack on runs at that batch"
    )
    assert (out["path"], out["low"], out["high"], out["needs"]) == ("range.rows", 1, 64, 65)
    # Past the runs' 4,096 positions (Llama-2's context; Llama-3-8B's is 8,192).
    far = refused("price", "--checkpoint", "llama3-8b-f16", "--card", CARD, "--stack", STACK, "--batch", "4",
                  "--limit", "8192", "--position", "6000", name="BeyondStack")
    assert (far["path"], far["low"], far["high"], far["needs"]) == ("range.position", 1, 4096, 6000)
    # Inside, the same serving is priced.
    assert invoke(*args, "--batch", "64").exit_code == 0


def test_best_under_the_stack_is_a_batched_price_on_the_measured_card() -> None:
    result = invoke("best", "--checkpoint", "llama2-13b-f16", "--card", CARD, "--limit", "2176", "--position",
                    "1152", "--stack", STACK, "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # a card and a kind of model the runs measured: no warning
    out = json.loads(result.stdout)
    expected = out["expected"]
    # Memory decides: 32 sequences of 2,176 positions (1.66 GiB each) beside 24.2 GiB of weights and the stack's
    # 1 GiB reserve fill the A100; the limit, reserving nothing, holds 33. LMDeploy measured batch 32 over these
    # positions at 860.14 tokens/s (run lmd1.a100_sxm4_80gb.l2-13b.b32.p128-o2048): the expected price is within
    # the fit's in-sample error of it.
    assert (expected["batch"], out["batch"]) == (32, 33)
    assert expected["tokens_per_s"] == pytest.approx(860.14, rel=0.0286)
    assert expected["tokens_per_s"] > 589.7  # more than batch 16's
