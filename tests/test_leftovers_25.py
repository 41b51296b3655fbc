"""Leftovers of session 24 (issue 13), each reproduced first.

1. Eleven derived facts whose derivation reads another fact (B200 ×3, H100 SXM5 ×2, H200 ×2, SN40L ×2, qwen35-mtp ×2)
   had no ``derivation.digits``: exact, so an edit of the fact they read that gives a repeating decimal (B200
   bandwidth 8 → 7.7 TB/s: 7.35 / 7.7 = 0.954545…) left ``fact recompute`` unable to write them (exit 2). Each now
   states the significant digits its value is rounded to, chosen so that no recorded value changes.
2. A locator stating a ratio with a slash (``58/128``, as the shipped routing record's does) was not read as one:
   a ratio fact 0.453125 under ``58/128 experts take 90 %`` was asked "its locator quotes 90%". ``A/B`` is now a
   part of a whole as ``A of B`` is (a date ``2024/05/14`` or a list ``1/2/3`` is not); a value moved under it is
   told the ratio the locator quotes.
3. A measured run's ``date = "2023-02-30"`` was accepted (free text in the schema): the run's ``date`` and a
   source's ``date`` and ``retrieved`` share one schema format, ``calendar-date`` (``schema.calendar_date``), checked
   by both validators; one error line naming file and key.
4. ``diff``'s summary counted a routing record's changed facts, and the question its change asks, in the card's
   clause ("2 facts changed in 2 files, 2 to verify in its source" for one card fact and one routing fact): each
   record kind now has its own clause.
5. Windows-device names were looked at for ``*.toml`` record files only (``check.name_problems``): a stack folder's
   ``nul.json``, a folder ``registry/measurements/aux``, ``sources/con.md``, a folder ``facts/Com1`` or
   ``schema/lpt1.schema.json`` passed ``check`` (exit 0). Every entry of every folder passprice reads from a registry
   (files of any suffix, and folders) is now held to the one rule.
6. The listings (``cards``, ``servings``, ``checkpoints``, a whole sweep) named such files by the absolute path under
   ``--root`` where ``check`` names them relative to the registry: both now name them as ``check`` does.
7. A stack re-fitted to the same values from other runs (a run renamed) read, once the fit went stale, as "which lock
   L pinned as they are" in ``price --lock``'s warning and ``reproduce``, and its drift as "(citation or note
   changed)": the runs a fit rests on are part of what it is a function of, and both now name them.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from passprice.addedfacts import parts_of, quotes_another
from passprice.facts import Fact
from passprice.registry import embedded_root, schema_dir
from passprice.review import FactChange
from passprice.review.changes import _quoted_figures
from passprice.schema import _fast_validator, problems


def _undigited(table: dict[str, Any], path: str = "") -> list[str]:
    """The dotted paths of ``table``'s facts whose derivation reads another fact and states no ``digits``."""
    found = []
    for key, value in table.items():
        if not isinstance(value, dict):
            continue
        here = f"{path}.{key}" if path else key
        derivation = value.get("derivation")
        if isinstance(derivation, dict) and "formula" in derivation:
            reads_a_fact = any("fact" in one for one in derivation.get("inputs", {}).values())
            if reads_a_fact and "digits" not in derivation:
                found.append(here)
        found += _undigited(value, here)
    return found


def test_1_every_derivation_reading_a_fact_states_its_digits() -> None:
    facts = embedded_root().path / "facts"
    missing = [f"{file.relative_to(facts).as_posix()}: {path}" for file in sorted(facts.rglob("*.toml"))
               for path in _undigited(tomllib.loads(file.read_text(encoding="utf-8")))]
    assert missing == []  # was 11: b200 on_chip.bandwidth, streams.read, scale; h100/h200 on_chip.bandwidth, scale; …


def test_1_the_recompute_a_bandwidth_edit_asks_for_writes_the_share(tmp_path: Path) -> None:
    # Was: `fact recompute b200` exit 2 ("streams.read: measured / bandwidth gives 0.9545454545…"), digits missing.
    root = copy_root(tmp_path)
    edit = invoke("fact", "set", "b200", "memory.bandwidth", "--value", "7.7", "--unit", "TB/s", "--provenance",
                  "published", "--source", "glennklockwood-b200", "--locator", "later HGX B200 datasheet: 7.7 TB/s",
                  "--note", "7.7", root=root)
    assert edit.exit_code == 0, edit.output
    assert "derivation.digits" not in edit.stderr
    done = invoke("fact", "recompute", "b200", root=root)
    assert done.exit_code == 0, done.output
    # By hand: 7.35 / 7.7 = 0.9545454… → 0.95455 (5 digits: the recorded 0.91875 is 7.35 / 8 to 5); append = read ×
    # (2.97/3.18 + 4.15/4.48) / 2 = 0.95455 × 0.930151 = 0.88787 → 0.8879; rewrite = read × (2.9/3.18 + 4.0/4.48) / 2
    # = 0.95455 × 0.902404 = 0.86139 → 0.8614.
    assert round(0.95455 * (2.97 / 3.18 + 4.15 / 4.48) / 2, 4) == 0.8879
    assert round(0.95455 * (2.9 / 3.18 + 4.0 / 4.48) / 2, 4) == 0.8614
    assert done.stdout.splitlines() == [
        "facts/cards/b200.toml: streams.read: 0.91875 -> 0.95455 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.append: 0.8546 -> 0.8879 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.rewrite: 0.8291 -> 0.8614 (recomputed from today's inputs)",
        "facts/cards/b200.toml: provenance kept: streams.read, streams.append, streams.rewrite stay estimated (a "
        "recompute moves the value its formula gives from today's inputs, not what the fact rests on: still the "
        "figure it cites, as its provenance says; `passprice fact set` changes the provenance by hand)",  # slip 53
    ]
    assert invoke("check", root=root).exit_code == 0


# 2. A ratio written with a slash.


def _ratio(value: float, locator: str, provenance: str = "measured") -> Fact:
    return Fact.from_entry({"value": value, "unit": "1", "provenance": provenance, "source": "s",
                            "locator": locator}, "facts/routing/r.toml: hot_experts")


def test_2_a_slash_between_two_numbers_is_a_part_of_a_whole() -> None:
    assert parts_of("coverage 58/128 (45%), 921.85 / 1,008 = 0.9145, 12 of the 32") == {
        0.453125: "58/128", 921.85 / 1008: "921.85 / 1,008", 0.375: "12 of the 32"}
    # a date, a list, a path's numbers, a part over its whole: no ratio
    assert parts_of("on 2024/05/14, rows 1/2/3, v0.1/2, 128/58 experts") == {}
    for locator in ("58/128 experts take 90 %", "experts for 90% coverage: 58 / 128"):
        # Before: "it is 0.453125 but its locator quotes 90%: does s: 58/128 experts take 90 % give 0.453125?"
        assert quotes_another(_ratio(0.453125, locator), _quoted_figures) is None
        assert quotes_another(_ratio(0.4531, locator, "estimated"), _quoted_figures) is None  # to 4 digits
    assert quotes_another(_ratio(0.453125, "60/128 experts take 90 %"), _quoted_figures) == (
        "it is 0.453125 but its locator quotes 60/128 (0.4688), 90 %: does s: 60/128 experts take 90 % give 0.453125?")


def test_2_a_ratio_moved_under_a_locator_quoting_the_old_one_is_told_so() -> None:
    locator = "experts for 90% coverage 58/128 (45%)"
    change = FactChange("hot_experts", "routing.hot_experts", _ratio(0.453125, locator), _ratio(0.5078125, locator))
    # Before: "… but its citation did not: does s: … say 0.5078125?" (the 58/128 it quotes not read)
    assert change.to_verify == ("the value moved (0.453125 → 0.5078125) but its citation did not, and the locator "
                                "quotes 58/128 (0.453125): s: experts for 90% coverage 58/128 (45%)")


# 3. A run's date that is no day of the calendar.

RUNS = "registry/measurements/llamacpp-points.toml"


def _run_dated(root: Path, date: str) -> None:
    """The first run of llamacpp-points.toml dated ``date`` (it is "2023-12-22")."""
    path = root / RUNS
    text, count = re.subn(r'^date = "2023-12-22"$', f'date = "{date}"', path.read_text(encoding="utf-8"), count=1,
                          flags=re.M)
    assert count == 1
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("date", "says"), [
    ("2023-02-30", "is not a date of the calendar (YYYY, YYYY-MM or YYYY-MM-DD: a month from 01 to 12, a day the "
                   "month has)"),
    ("2023-02-29", "is not a date of the calendar (YYYY, YYYY-MM or YYYY-MM-DD: a month from 01 to 12, a day the "
                   "month has)"),
    ("2024-13", "is not a date of the calendar (YYYY, YYYY-MM or YYYY-MM-DD: a month from 01 to 12, a day the "
                "month has)"),
    ("Dec 2023", "is not when the run was made or published (YYYY, YYYY-MM or YYYY-MM-DD, in 1990 or later), "
                 'or "unknown"'),
])  # fmt: skip
def test_3_a_run_dated_no_day_of_the_calendar_is_bad_input(tmp_path: Path, date: str, says: str) -> None:
    root = copy_root(tmp_path)
    _run_dated(root, date)
    result = invoke("check", root=root)  # before: exit 0, "0 problems"
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f"passprice: error: {RUNS}: run.0.date: {date!r} {says}"]


@pytest.mark.parametrize("date", ["2024-02-29", "2024-04", "2024", "unknown"])
def test_3_a_run_dated_a_day_month_or_year_of_the_calendar_reads(tmp_path: Path, date: str) -> None:
    root = copy_root(tmp_path)
    _run_dated(root, date)
    assert invoke("check", root=root).exit_code == 0


def test_3_both_validators_hold_the_calendar() -> None:
    # The compiled validator only ever says "valid" faster: it must know the format too, or 2023-02-30 passes it.
    run = {"id": "r", "stack": "s", "card": "c", "checkpoint": "k", "batch": 1, "positions": [1, 2],
           "tokens_per_s": 10.0, "locator": "a table, a row", "source": "s", "date": "2023-02-30"}
    top = {"source": {"name": "runs", "source": "s"}}
    assert problems({**top, "run": [run]}, "measurement") == [
        "run.0.date: '2023-02-30' is not a date of the calendar (YYYY, YYYY-MM or YYYY-MM-DD: a month from 01 to 12, "
        "a day the month has)"]
    assert problems({**top, "run": [{**run, "date": "2024-02-29"}]}, "measurement") == []
    fast = _fast_validator("measurement", str(schema_dir()))
    assert fast is not None
    assert not fast.is_valid({**top, "run": [run]})
    assert fast.is_valid({**top, "run": [{**run, "date": "2024-02-29"}]})


# 4. diff's summary: one clause a record kind.


def test_4_the_summary_counts_a_routing_records_facts_apart(tmp_path: Path) -> None:
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    routing = head / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    text = routing.read_text(encoding="utf-8")
    for old, new in (("value = 0.453125", "value = 0.5078125"), ("value = 58,", "value = 65,"),
                     ("coverage 58/128 (45%)", "coverage 65/128 (51%)"),
                     ("coverage, 58 of 128", "coverage, 65 of 128")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    routing.write_text(text, encoding="utf-8")
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("value = 4.8\n") == 1
    card.write_text(text.replace("value = 4.8\n", "value = 4.9\n"), encoding="utf-8")
    result = invoke("diff", str(base), str(head), root=head)
    assert result.exit_code == 1
    # The bandwidth's quote still states 4.8TB/s (test_fix53w: a MISMATCH; the routing record's is not one).
    assert "1 fact's quotes state another figure than its own (h200_sxm_141gb:memory.bandwidth)" in result.stderr
    # Before: "2 facts changed in 2 files, 2 to verify in its source; 3 derived facts stale; …". The shipped stack lock
    # r1-qwen7b-h200-llamacpp rests on the H200's memory.bandwidth and its derived stream shares: the 5th affected.
    assert result.stdout.splitlines()[1] == (
        "1 fact changed in 1 file, 1 to verify in its source; 1 routing fact changed in 1 file, 1 to verify in its "
        "source; 1 fact's quotes state another figure than its own; 3 derived facts stale; 5 locks affected, 5 prices "
        "moved unreviewed, 5 rest on derived facts that do not follow; 5 locks unaffected; 3 servings no lock pins "
        "move, 1 more only a term of its price (memory_s) (not locked, informational)")
    card.write_text(text, encoding="utf-8")  # the routing record alone: no card clause, no "no fact changed"
    assert invoke("diff", str(base), str(head), root=head).stdout.splitlines()[1] == (
        "1 routing fact changed in 1 file, 1 to verify in its source; 1 lock affected, 1 price moved unreviewed; 9 "
        "locks unaffected")


# 5. Every name passprice reads from a registry, of any suffix, files and folders.

WINDOWS = "names a device on Windows, where no {what} of that name (with any suffix) can be checked out: rename the {what} (and what names it)"  # noqa: E501


def test_5_device_names_of_any_suffix_and_folders_fail_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "facts" / "stacks" / "nul.json").write_text("{}", encoding="utf-8")
    (root / "registry" / "measurements" / "aux").mkdir()
    (root / "sources" / "con.md").write_text("x", encoding="utf-8")
    (root / "facts" / "Com1").mkdir()
    (root / "schema").mkdir()
    (root / "schema" / "lpt1.schema.json").write_text("{}", encoding="utf-8")
    result = invoke("check", root=root)  # before: exit 0, "0 problems"
    assert result.exit_code == 2
    file, folder = WINDOWS.format(what="file"), WINDOWS.format(what="folder")
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/stacks/nul.json: NUL {file}",
        f"passprice: error: registry/measurements/aux: AUX {folder}",
        f"passprice: error: sources/con.md: CON {file}",
        f"passprice: error: facts/Com1: COM1 {folder}",
        f"passprice: error: schema/lpt1.schema.json: LPT1 {file}",
    ]
    assert result.stdout.splitlines()[0].endswith(": 5 problems (5 on stderr)")
    # a lock file: locks/*.lock.toml, and any other name there
    for made in ("facts/stacks/nul.json", "sources/con.md", "schema/lpt1.schema.json"):
        (root / made).unlink()
    for made in ("registry/measurements/aux", "facts/Com1"):
        (root / made).rmdir()
    (root / "locks" / "prn.txt").write_text("x", encoding="utf-8")
    assert invoke("check", root=root).stderr == f"passprice: error: locks/prn.txt: PRN {file}\n"


# 6. The listings name a file as check does.


def test_6_listings_name_files_relative_to_the_registry_as_check_does(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    (root / "facts" / "cards" / "aux.toml").write_text("x = \n", encoding="utf-8")
    line = [f"passprice: error: facts/cards/aux.toml: AUX {WINDOWS.format(what='file')}",
            "passprice: error: facts/cards/aux.toml: not valid TOML: Invalid value (at line 1, column 5)"]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2
    assert sorted(checked.stderr.splitlines()) == sorted(line)
    listed = invoke("cards", root=root)  # before: "passprice: error: /tmp/…/root/facts/cards/aux.toml: AUX …"
    assert listed.exit_code == 2
    assert line[0] in listed.stderr.splitlines()
    assert "h200_sxm_141gb" in listed.stdout.split()


# 7. A re-fit on other runs is not "pinned as they are".

FITTED = ["overhead.pass", "overhead.layer", "share.read", "share.append", "share.array", "share.vector",
          "share.scale", "terms.serial"]
OTHER_RUNS = "fitted from other runs: w24.h200.b64 (6641.7) gone, w24.h200.b64.again (6641.7) new"


def test_7_a_refit_on_other_runs_is_named_in_the_lock_check(tmp_path: Path) -> None:
    from test_leftovers_s23 import _stack_locked
    from test_newcomer_24 import STACK

    root = _stack_locked(tmp_path / "made")
    runs = root / "registry" / "measurements" / "w24.toml"
    text = runs.read_text(encoding="utf-8")
    assert text.count('id = "w24.h200.b64"') == 1
    runs.write_text(text.replace('id = "w24.h200.b64"', 'id = "w24.h200.b64.again"'), encoding="utf-8")
    assert invoke("calibrate", "--stack", STACK, root=root).exit_code == 0  # the same values, from other runs
    stack = (root / "facts" / "stacks" / f"{STACK}.toml").read_text(encoding="utf-8")
    assert "value = 0.8564\n" in stack and 'run = "w24.h200.b64.again"' in stack
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    # Before: "stack.overhead.pass: 1950 µs (derived) → 1950 µs (derived) (citation or note changed)"
    drift = f"    stack.overhead.pass: 1950 µs (derived) → 1950 µs (derived) ({OTHER_RUNS})"
    assert drift in checked.stdout.splitlines()
    shutil.copytree(root, tmp_path / "moved")
    root = tmp_path / "moved"
    text = runs.read_text(encoding="utf-8").replace("tokens_per_s = 6641.7", "tokens_per_s = 6900.0")
    (root / "registry" / "measurements" / "w24.toml").write_text(text, encoding="utf-8")
    result = invoke("price", "--lock", "w24-moe", "--json", root=root)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stderr.splitlines() if "does not follow from today's registry" in x]
    # Before: "(the facts of facts/stacks/vllm-w24.toml today, which lock w24-moe pinned as they are)"
    assert line.startswith(
        f"passprice: warning: stack {STACK}'s fit (the facts of facts/stacks/{STACK}.toml today, not as lock w24-moe "
        f"pinned 8 of them ({', '.join(FITTED)}; {OTHER_RUNS})) does not follow from today's registry (8 fitted "
        "facts stale: ")
    assert json.loads(result.stdout)["stack_fit"]["pinned_apart"] == FITTED
    text = invoke("reproduce", "w24-moe", root=root).stdout
    assert (f"the lock pinned 8 of them otherwise ({', '.join('stack.' + p for p in FITTED)}; {OTHER_RUNS}), which "
            "this does not re-fit") in text
    assert json.loads(invoke("reproduce", "w24-moe", "--json", root=root).stdout)["stale_stack_pinned_apart"] == [
        "stack." + p for p in FITTED]
