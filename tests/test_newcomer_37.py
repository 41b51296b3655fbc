"""Walkthrough 37 (issue 13: a newcomer's walkthrough): a platform engineer keeping a company registry of cards and
stacks in git (``passprice init``), reviewing fact changes in pull requests and upgrading passprice now and then.
Each test holds one place where what passprice printed did not say what it meant or what to do.

1. A price at a fitted run's own setting read ``this price's 0.6154 (the limit 1.62 × expected) lies outside: an
   extrapolation of the fit`` of the span ``0.6154 … 0.6223`` printed on the same line (0.61543296 against the run's
   0.61543511: the fit's facts are rounded to 4 digits). The span is judged as it is shown, to 4 digits.
2. After a passprice upgrade, ``check`` listed a stack lock's moved expected price as ``expected: {'array_macs': 0.0,
   … (1,402 characters) → {'card': …}… (1,402 characters) (changed)``: both sides cut before any figure that moved.
   The fields that moved are named, as the limit's are.
3. A pull request upgrading passprice (requirements.txt) and re-locking under it read, from the base branch's
   reviewer, "the digest of no code of this review …, never typed by hand; re-lock it": the re-lock the base's
   passprice would write undoes the upgrade. With requirements.txt changed too, the line says what it likely is and
   the two pull requests that upgrade.
4. A derived ``vector`` in TMAC/s from a TFLOPS figure over an ``op/MAC`` input read "its formula gives
   FLOP·MAC/op·s, but the fact is in TMAC/s (MAC/s)" and no more.
5. A stack re-fit on an added run outside its span said "check it in its source" without naming the source: the
   re-fitted facts cite the calibration record, and the run's own source (the company's benchmark results) appeared
   nowhere in the review. The run's figure and citation are named beside it.
6. README said nothing of upgrading passprice in a registry of your own, nor what to do when ``check`` then fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

from cli_helpers import invoke
from passprice import schema
from test_pin_27 import LOCK, _copy, _locked


def test_1_a_price_at_a_fitted_runs_own_setting_lies_inside_the_span_it_prints() -> None:
    from passprice.stackreach import RatioReach

    # the company registry's numbers: acme-vllm-06 re-fitted, l3-8b-nvl at batch 8 (the batch-8 run's setting)
    at_run = RatioReach("acme-vllm-06", 0.6154329647314751, 0.6154351061656353, 0.6222720156795926, 2)
    assert at_run.inside  # before: False
    assert at_run.warning() is None
    assert at_run.line() == ("its 2 fitted runs measured 0.6154 … 0.6223 × their limit (the limit 1.61 … 1.62 × "
                             "measured); this price's 0.6154 lies inside")
    # a price a digit below the span, as shown, is still outside
    below = RatioReach("acme-vllm-06", 0.61535, 0.6154351061656353, 0.6222720156795926, 2)
    assert not below.inside
    assert below.line() == ("its 2 fitted runs measured 0.6154 … 0.6223 × their limit (the limit 1.61 … 1.62 × "
                            "measured); this price's 0.6153 (the limit 1.63 × expected) lies outside: an "
                            "extrapolation of the fit")
    assert RatioReach("s", 0.2384, 0.3425, 0.8519, 111).to_json()["inside"] is False


def test_2_a_moved_expected_price_is_said_by_the_fields_that_moved() -> None:
    from passprice.locks import Moved

    was = {"array_macs": 0.0, "batch": 8, "card": "h100_nvl_94gb", "vector_macs": 1109458944.0,
           "vector_s": 3.311817743283582e-05, "tokens_per_s": 1004.5}
    now = {**was, "vector_macs": 1117847552.0, "vector_s": 3.336858364179105e-05}
    assert Moved("expected", was, now).line() == (
        "expected.vector_macs: 1109458944.0 → 1117847552.0 (+0.7561 %); "
        "expected.vector_s: 3.311817743283582e-05 → 3.336858364179105e-05 (+0.7561 %)")
    many = {**now, "array_macs": 1.0, "batch": 9, "tokens_per_s": 990.0, "card": "l4"}
    assert Moved("expected", was, many).line() == (
        "expected.array_macs: 0.0 → 1.0 (changed); expected.batch: 8 → 9 (+12.5 %); expected.card: 'h100_nvl_94gb' "
        "→ 'l4' (changed); expected.vector_macs: 1109458944.0 → 1117847552.0 (+0.7561 %); and 2 more fields of "
        "expected")
    # another table, or a field name no passprice writes, is shown whole, as before (attack round 53)
    assert Moved("rests_on", {"a": "x"}, {"a": "y"}).line() == "rests_on: {'a': 'x'} → {'a': 'y'} (changed)"
    assert Moved("expected", {"m" * 41: 1}, {}).line() == f"expected: {{'{'m' * 41}': 1}} → {{}} (changed)"
    # a plain field, as before
    assert Moved("tokens_per_s", 996.1, 1000.0).line() == "tokens_per_s: 996.1 → 1000.0 (+0.3915 %)"


def _relocked_by_other_code(tmp_path: Path, requirement: bool) -> tuple[Path, Path]:
    """BASE: a registry with lock r1-o; HEAD: the lock pinning another passprice's digest (as a newer passprice's
    ``lock --update`` writes it), and, with ``requirement``, requirements.txt naming that passprice."""
    from passprice.locks import lock_text, read_lock

    base = _locked(tmp_path / "base", with_schema=True)
    (base / "requirements.txt").write_text("passprice @ file:///opt/passprice-0.1.0\n", encoding="utf-8")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    lock = read_lock(head / LOCK, schema.schema_dir())
    (head / LOCK).write_text(
        lock_text(attrs.evolve(lock, info=attrs.evolve(lock.info, pricing_model="sha256:" + "1" * 64))),
        encoding="utf-8")
    if requirement:
        (head / "requirements.txt").write_text("passprice @ file:///opt/passprice-0.2.0\n", encoding="utf-8")
    return base, head


FORGED = ("  locks/r1-o.lock.toml: lock.pricing_model: pins 111111111111…, the digest of no code of this review "
          "(BASE's, HEAD's, the running passprice's) nor of any BASE lock: a lock's pricing model is the digest "
          "passprice lock computes of the code that priced it, never typed by hand")
RELOCK = "; re-lock it: passprice lock --update -o locks/r1-o.lock.toml"


def test_3_a_relock_beside_a_requirements_change_is_said_as_an_upgrade(tmp_path: Path) -> None:
    base, head = _relocked_by_other_code(tmp_path, requirement=True)
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    assert (FORGED + "; or, with requirements.txt changed too, priced by the passprice it now installs: upgrade in "
            "two pull requests, requirements.txt alone first, then re-lock under the new passprice"
            + RELOCK) in result.stdout.splitlines()
    # the lock alone re-digested, requirements.txt as BASE has it: a forgery, said as before (slip 46)
    base, head = _relocked_by_other_code(tmp_path / "alone", requirement=False)
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    assert FORGED + RELOCK in result.stdout.splitlines()


def test_4_a_tflops_rate_over_an_op_per_mac_input_says_which_unit_to_write(tmp_path: Path) -> None:
    from passprice.derivations import operations_hint

    root = _copy(tmp_path, True)
    card = root / "facts" / "cards" / "h100_sxm5_80gb.toml"
    before = card.read_bytes()
    result = invoke(
        "fact", "set", "h100_sxm5_80gb", "vector", "--value", "33.5", "--unit", "TMAC/s", "--provenance", "derived",
        "--source", "nvidia-h100-datasheet", "--locator", "Technical Specifications table: 'FP32 67 teraFLOPS'",
        "--derivation", '{formula = "fp32 / per_mac", inputs = {fp32 = {value = 67, unit = "TFLOPS", locator = '
        '"FP32 67 teraFLOPS"}, per_mac = {value = 2, unit = "op/MAC", constant = "two operations a multiply-add"}}}',
        root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: {card}: vector.derivation: its formula gives FLOP·MAC/op·s, but "
        "the fact is in TMAC/s (MAC/s): FLOP and op are two units (TFLOPS counts FLOP, TOPS counts op): divide a FLOP "
        "rate by an input in FLOP/MAC, an op rate by one in op/MAC"]
    assert card.read_bytes() == before
    # the reverse (a TOPS rate over FLOP/MAC), and no hint for another mismatch
    assert operations_hint((("MAC", 1), ("op", 1), ("FLOP", -1), ("s", -1)), (("MAC", 1), ("s", -1))).startswith(
        ": FLOP and op are two units")
    assert operations_hint((("B", 1), ("s", -1)), (("MAC", 1), ("s", -1))) == ""


def test_5_a_run_outside_the_span_is_named_with_its_figure_and_citation() -> None:
    from passprice.measurements import Run
    from passprice.review.runs import _run_cited

    run = Run("acme.h100_nvl_94gb.l3-8b-f16.b4", "acme-vllm-06", "h100_nvl_94gb", "llama3-8b-f16", 4, 0, 1024, 470.3,
              source="acme-vllm-h100nvl", source_id="acme-inference-bench",
              locator="results table, row 'llama3-8b fp16 | batch 4 | 0-1024 | 470.3 tok/s'")
    assert _run_cited(run) == ("; 470.3 tokens/s, cited to acme-inference-bench: results table, row 'llama3-8b fp16 | "
                               "batch 4 | 0-1024 | 470.3 tok/s'")
    long = attrs.evolve(run, tokens_per_s=1004.5, locator="x" * 200)
    assert _run_cited(long) == "; 1,004.5 tokens/s, cited to acme-inference-bench: " + "x" * 160 + "…"
    assert _run_cited(None) == ""


def test_6_readme_says_how_to_upgrade_and_its_quotes_are_passprices_text() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    assert ("**Upgrading passprice** in a registry of your own takes two pull requests, since its `requirements.txt` "
            "names the passprice that checks and reviews it, and its locks pin the digest of the code that priced "
            "them.") in flat
    assert ("Both in one pull request fail its review: the base branch's passprice knows no code giving the new "
            "locks' digest") in flat
    # each message the paragraph quotes is one passprice prints
    source = "".join(p.read_text(encoding="utf-8") for p in
                     (Path(__file__).resolve().parents[1] / "src" / "passprice").rglob("*.py"))
    for quoted in ("the pricing model changed and moves the price", "changed since the lock",
                   "the digest of no code of this review", "how passprice is installed changed"):
        assert quoted in flat and quoted in source, quoted
