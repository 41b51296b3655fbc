"""Attack round 53 (issue 13): what session 29 added, attacked on a freshly installed (non-editable) passprice — a
fit's recorded errors and the stack-fit findings, a lock's pinned host figures and floors, registry-relative names,
record dates. Each test builds its reproducer and asserts the exit status and the exact line; the docstring or a
comment says what it did before."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from test_hostile_49 import _rewritten

STACK = "facts/stacks/llamacpp-cuda-2405.toml"
FITTED = ("overhead.pass, overhead.layer, share.read, share.append, share.array, share.float, share.vector, "
          "share.scale, terms.serial")
LMDEPLOY = "facts/stacks/lmdeploy-turbomind-2312.toml"
R1 = "locks/r1-a53.lock.toml"  # r1-qwen7b-h200 locked by each test (the shipped lock's pricing model may be older)
SOURCE = "sources/lmdeploy-a100-fp16-benchmark.toml"


def _locked(tmp_path: Path) -> Path:
    """A copy of the registry holding ``locks/r1-a53.lock.toml``, a lock of r1-qwen7b-h200 made by this passprice."""
    root = copy_root(tmp_path)
    made = invoke("lock", "r1-qwen7b-h200", "--name", "r1-a53", root=root)
    assert made.exit_code == 0, made.output
    return root


def _errors_edited(path: Path, new: str, count: int | None = None) -> int:
    """Each fitted fact's ``errors = {…}`` line of the stack file ``path`` replaced by ``new`` (the first ``count``
    of them, default all); how many there were."""
    text = path.read_text(encoding="utf-8")
    lines = re.findall(r"^errors = \{[^}]*\}\n", text, flags=re.M)
    for line in lines[:count]:
        text = text.replace(line, new, 1)
    path.write_text(text, encoding="utf-8")
    return len(lines)


# --- 1. a fit's recorded errors removed: check said nothing ------------------------------------------------------


LLAMACPP_NONE = (
    f"  facts/stacks/llamacpp-cuda-2405.toml: {FITTED}: the fit's errors recorded are not the ones its 111 runs give "
    "again: in_sample_mean: none recorded (re-fitted: 5.55 %); in_sample_max: none recorded (re-fitted: 18.01 %); "
    "card_out_mean: none recorded (re-fitted: 6.9 %); card_out_max: none recorded (re-fitted: 20.45 %); "
    "checkpoint_out_mean: none recorded (re-fitted: 12.64 %); checkpoint_out_max: none recorded (re-fitted: 49.81 %) "
    "(a price under the stack prints them; run passprice calibrate --stack llamacpp-cuda-2405)")


@pytest.mark.parametrize("new", ["", "errors = {}\n"], ids=["removed", "emptied"])
def test_1_a_fit_whose_errors_are_removed_fails_check(tmp_path: Path, new: str) -> None:
    """Every fitted fact of llamacpp-cuda-2405 with its ``errors`` line removed (or emptied): ``check`` exit 0, "0
    problems", while ``price r1-qwen7b-h200 --stack llamacpp-cuda-2405`` said "no card could be held out of its fit:
    its error on another card was never measured" of a fit held out on 11 cards (it had said "with a card held out of
    the fit, its error was 6.9 % on average, 20.4 % at most"). The six errors are those the shipped file records."""
    root = copy_root(tmp_path)
    assert _errors_edited(root / STACK, new) == 9
    said = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", root=root).stderr
    assert "no card could be held out of its fit: its error on another card was never measured" in said
    checked = invoke("check", root=root)
    assert checked.exit_code == 1, checked.output
    assert checked.stdout.splitlines()[0].endswith(": 1 problem")
    assert LLAMACPP_NONE in checked.stdout.splitlines()


def test_1_one_fact_whose_errors_are_removed_is_named_alone(tmp_path: Path) -> None:
    """The single-card stack lmdeploy-turbomind-2312 (no card hold-out possible: no ``card_out_*`` recorded), only
    ``overhead.pass`` losing its errors: that fact is named, with the four errors its 17 runs give (the shipped
    file's 0.0109, 0.0286, 0.1268, 0.6827)."""
    root = copy_root(tmp_path)
    assert _errors_edited(root / LMDEPLOY, "", count=1) == 7
    checked = invoke("check", root=root)
    assert checked.exit_code == 1, checked.output
    assert (
        "  facts/stacks/lmdeploy-turbomind-2312.toml: overhead.pass: the fit's errors recorded are not the ones its 17 "
        "runs give again: in_sample_mean: none recorded (re-fitted: 1.09 %); in_sample_max: none recorded (re-fitted: "
        "2.86 %); checkpoint_out_mean: none recorded (re-fitted: 12.68 %); checkpoint_out_max: none recorded "
        "(re-fitted: 68.27 %) (a price under the stack prints them; run passprice calibrate --stack "
        "lmdeploy-turbomind-2312)"
    ) in checked.stdout.splitlines()


def test_1_an_error_written_minus_zero_is_shown_as_zero() -> None:
    """``in_sample_mean = -0.0`` (the schema's minimum 0 admits it) read "in_sample_mean: -0 % (re-fitted: 1.09 %)"
    in check's line and the warning of a price under the stack."""
    from passprice.calibrate import errors_disagree

    assert errors_disagree({"in_sample_mean": -0.0, "card_out_max": -0.0}, {"in_sample_mean": 0.0109}) == [
        "in_sample_mean: 0 % (re-fitted: 1.09 %)", "card_out_max: 0 % (re-fitted: not possible)"]


def test_1_the_shipped_fits_record_their_errors_on_every_fitted_fact() -> None:
    """The rule holds for what passprice ships: every fitted fact of both stacks records its errors (a fit with
    none would now fail check)."""
    from passprice.fits import RunDerivation
    from passprice.registry import embedded_root
    from passprice.stacks import load_stack

    root = embedded_root()
    for name, fitted in (("llamacpp-cuda-2405", 9), ("lmdeploy-turbomind-2312", 7)):
        stack = load_stack(root, name)
        fits = [f.derivation for f in stack.facts.values() if isinstance(f.derivation, RunDerivation)
                and f.derivation.method == "nnls-relative-pass-time"]
        assert len(fits) == fitted and all(d.errors for d in fits), name


# --- 2. a re-digested lock's recorded table of 5,000 characters: one check line of 5,482 ------------------------


def test_2_a_moved_field_of_a_lock_is_cut_in_checks_line(tmp_path: Path) -> None:
    """A lock of r1-qwen7b-h200 re-digested with a ``price.rests_on`` key of 5,000 ``m``: ``check`` (exit 1, the lock
    does not reproduce) printed the whole table both sides, a 5,482-character line; each side is now its first 100
    characters and its length."""
    root = _locked(tmp_path)

    def edit(document: dict[str, Any]) -> None:
        document["price"]["rests_on"]["m" * 5000] = "published"

    _rewritten(root / R1, edit)
    checked = invoke("check", root=root)
    assert checked.exit_code == 1, checked.output
    head = "{'array': 'derived', 'memory.bandwidth': 'published', 'memory.capacity': 'published', 'mmmmmmmmmmmmm"
    assert len(head) == 100
    # the recorded table's repr: the eight facts the price rests on (219 characters as written) and the key, 5,000
    # characters with its quotes and value (5,017)
    # reproduced, the table is the eight facts in the price's order, 219 characters: past 120, cut too
    now = "{'memory.bandwidth': 'published', 'memory.capacity': 'published', 'streams.read': 'measured', 'strea"
    assert len(now) == 100
    line = f"    rests_on: {head}… (5,236 characters) → {now}… (219 characters) (changed)"
    assert line in checked.stdout.splitlines()
    assert max(len(line) for line in checked.stdout.splitlines()) < 400


def test_2_a_moved_value_of_at_most_120_characters_is_shown_whole() -> None:
    from passprice.reproduce import Moved, moved_value

    assert moved_value(549755813888.0) == "549755813888.0"
    assert moved_value("x" * 118) == "'" + "x" * 118 + "'"  # 120 characters with its quotes
    assert moved_value("x" * 119) == "'" + "x" * 99 + "… (121 characters)"
    assert Moved("host_capacity_bytes", 0, 549755813888.0).line() == (
        "host_capacity_bytes: 0 → 549755813888.0 (changed)")


#: 64 Cyrillic ``м`` as :func:`ascii` spells them (``errors.spell``: 64 code points, then a count of the 100 shown).
CYRILLIC_SPELLED = "'" + "\\u043c" * 64 + "'"


# --- 3. a floor key of 5,000 characters: a 3,551-character error line --------------------------------------------


@pytest.mark.parametrize(("key", "said"), [
    ("m" * 5000, f"policy.paths.{'m' * 100}… (5,000 characters): a floor on it, a path"),
    ("memory." + "b" * 4993, f"policy.paths.\"memory.{'b' * 93}\"… (5,000 characters): a floor on it, a path"),
    ("\u043c" * 5000, (f"policy.paths.\"{chr(0x43c) * 100}\"… (5,000 characters): a floor on it (spelled "
                       f"{CYRILLIC_SPELLED}… (100 code points): it prints like another name), a path")),
], ids=["bare", "dotted", "cyrillic"])
def test_3_a_floor_on_a_long_path_is_named_once_and_cut(tmp_path: Path, key: str, said: str) -> None:
    """A lock of r1-qwen7b-h200 re-digested with a floor (``policy.paths``) on a path of 5,000 characters: exit 2 in
    ``check``, ``reproduce``, ``price --lock`` and ``audit`` alike, the key printed twice in a 3,551-character line
    (cut only by the command line's 4,000-character backstop); now once, cut to 100 characters and its length."""
    root = _locked(tmp_path)

    def edit(document: dict[str, Any]) -> None:
        document["policy"]["paths"][key] = "published"

    _rewritten(root / R1, edit)
    line = (f"passprice: error: {R1}: {said} the recorded price does not rest on (it rests on array, memory.bandwidth, "
            "memory.capacity, on_chip.capacity, scale, streams.append, streams.read, vector), guards nothing, and "
            "passprice never writes one (edited by hand?): restore the lock from the last commit that holds it as "
            "written, or re-lock it")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert checked.stderr.splitlines() == [line]
    for args in (("reproduce", R1), ("price", "--lock", R1), ("audit", R1, "--step", "10")):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [line.replace(f" {R1}:", f" {root / R1}:")], args


# --- 4. a source retrieved before it was published -----------------------------------------------------------------


def _dated(root: Path, date: str, retrieved: str) -> None:
    path = root / SOURCE
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'^date = "[^"]*"', f'date = "{date}"', text, count=1, flags=re.M)
    text = re.sub(r'^retrieved = "[^"]*"', f'retrieved = "{retrieved}"', text, count=1, flags=re.M)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("date", "retrieved"), [
    ("2023-12-25", "1990-01-01"), ("2023-12-25", "2023-12-24"), ("2023", "2022-12-31"), ("2023-12", "2023-11-30"),
])
def test_4_a_copy_retrieved_before_the_source_was_published_is_refused(
        tmp_path: Path, date: str, retrieved: str) -> None:
    """Each date within its own bound (``date`` 1900 or later, ``retrieved`` 1990-01-01 or later) but the copy read
    before the document existed: ``check`` and ``sources`` exit 0. A partial date counts from its first day."""
    root = copy_root(tmp_path)
    _dated(root, date, retrieved)
    line = (f"passprice: error: {SOURCE}: source.retrieved: '{retrieved}' is before the source's date '{date}': a "
            "copy is retrieved on or after the day it was published; give the day the copy was read (or the date it "
            "was published)")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert checked.stderr.splitlines() == [line]
    listed = invoke("sources", root=root)
    assert listed.exit_code == 2, listed.output
    assert listed.stderr.splitlines() == [line]


@pytest.mark.parametrize(("date", "retrieved"), [
    ("2023-12-25", "2023-12-25"), ("2023", "2023-01-01"), ("2023-12", "2023-12-01"), ("unknown", "1990-01-01"),
    ("2023-12-25", "unknown"),
])
def test_4_a_copy_retrieved_on_the_first_day_or_unknown_reads(tmp_path: Path, date: str, retrieved: str) -> None:
    root = copy_root(tmp_path)
    _dated(root, date, retrieved)
    listed = invoke("sources", root=root)
    assert listed.exit_code == 0, listed.output
    assert listed.stderr == ""
