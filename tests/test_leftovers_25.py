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
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke
from passprice.addedfacts import parts_of, quotes_another
from passprice.diff import FactChange, _quoted_figures
from passprice.facts import Fact
from passprice.registry import embedded_root, schema_dir
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
        "it is 0.453125 but its locator quotes 60/128 (0.4688), 90%: does s: 60/128 experts take 90 % give 0.453125?")


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
    ("Dec 2023", 'is not when the run was made or published (YYYY, YYYY-MM or YYYY-MM-DD), or "unknown"'),
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
