"""Every numeric option of every command is bounded where it comes in, by the bound the schema states for the same
quantity in a file (passprice.bounds): a 310-digit --batch or --limit was an OverflowError traceback deep in the
pricer (serving.py, servings.complete), exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import click
import pytest

from cli_helpers import REPO, bad, invoke
from passprice.bounds import OPTIONS, Bound, option_bound, schema_bound
from passprice.cli import cli
from passprice.cli.params import _Bounded

R1 = "r1-qwen7b-h200"
HUGE = str(10**309)  # 310 digits

#: Every command with numeric options, with the arguments that make it run (the bad option is added after them).
COMMANDS: dict[str, tuple[str, ...]] = {
    "price": ("price", R1),
    "best": ("best", R1),
    "compare": ("compare", R1, "--cards", "h200_sxm_141gb"),
    "max-batch": ("max-batch", R1),
    "lock": ("lock", R1, "-o", "never-written.lock.toml"),
    "audit": ("audit", R1),
    "roofline": ("roofline", "h200_sxm_141gb", R1),
    "speculate": ("speculate", "qwen35-27b-h200-chat"),
    "simulate": ("simulate", R1, "--synthetic", "10"),
    "kv": ("kv", "gemma3-270m-q4_k_m"),
    "sweep": ("sweep", R1, "--batches", "1"),
    "new-serving": ("new-serving", "never-written", R1),
}


def _commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield prefix + name, command


def _numeric(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and isinstance(p.type, _Bounded)]


def test_no_numeric_option_is_left_unbounded() -> None:
    # Every int or float option of every command is a _Bounded one (click's INT, FLOAT, IntRange and FloatRange
    # take 10^309 or inf), and the commands listed here are exactly those that have such options.
    loose = [
        f"{name} {p.opts[0]}"
        for name, command in _commands(cli)
        for p in command.params
        if isinstance(p.type, click.types.IntParamType | click.types.FloatParamType)
    ]
    assert loose == []
    assert {name for name, command in _commands(cli) if _numeric(command)} == set(COMMANDS)
    used = {p.type.option for _, command in _commands(cli) for p in _numeric(command)}  # type: ignore[attr-defined]
    assert used == set(OPTIONS)


def _cases() -> Iterator[tuple[str, str, str, str]]:
    for name, command in _commands(cli):
        for param in _numeric(command):
            option = param.opts[0]
            integer = param.type.name == "integer"
            past = str(int(option_bound(option).maximum or 0) + 1)
            values = [HUGE, "-" + HUGE, past] if integer else ["1e400", "inf", "-inf", "nan", "1e20"]
            for value in values:
                yield name, option, value, "integer" if integer else "float"


@pytest.mark.parametrize(("command", "option", "value", "kind"), list(_cases()))
def test_out_of_range_is_one_error_line(command: str, option: str, value: str, kind: str) -> None:
    bound = option_bound(option)
    if kind == "integer":
        what = f"{int(value):,}" if len(value) < 300 else (
            "a negative integer of 310 digits" if value.startswith("-") else "an integer of 310 digits"
        )
        says = f"Invalid value for '{option}': {what} is out of range ({bound.describe()})"
    elif value == "1e20":
        says = f"Invalid value for '{option}': 1e+20 is out of range ({bound.describe()})"
    elif value == "1e400":  # a finite number a double cannot hold (attack round 31)
        says = f"Invalid value for '{option}': '1e400' overflows a float (at most ±1.8e308) ({bound.describe()})"
    else:
        says = f"Invalid value for '{option}': '{value}' is not a finite number ({bound.describe()})"
    bad(*COMMANDS[command], option, value, says=says)
    assert not (REPO / "never-written.lock.toml").exists()
    assert not (REPO / "registry" / "servings" / "never-written.toml").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # The reproducers of the report, word for word.
        (("price", R1, "--batch", HUGE),
         "'--batch': an integer of 310 digits is out of range (a whole number from 1 to 4,294,967,295)"),
        (("price", R1, "--limit", str(10**309)),
         "'--limit': an integer of 310 digits is out of range (a whole number from 1 to 4,294,967,295)"),
        (("price", R1, "--shared-prefix", HUGE, "--kv-page", "16"),
         "Invalid value for '--shared-prefix': an integer of 310 digits is out of range (a whole number from 0 to "
         "4,294,967,295)"),
        (("best", R1, "--kv-page", "4294967296"),
         "Invalid value for '--kv-page': 4,294,967,296 is out of range (a whole number from 1 to 4,294,967,295)"),
        (("price", R1, "--kv-bytes", "1e400"),
         "Invalid value for '--kv-bytes': '1e400' overflows a float (at most ±1.8e308) (a finite number from 0.125 to "
         "8)"),
        (("price", R1, "--position", "nan"),
         "Invalid value for '--position': 'nan' is not a finite number (a finite number from 0 to 4,294,967,295)"),
        (("simulate", R1, "--synthetic", "10", "--rate", "inf"),
         "'--rate': 'inf' is not a finite number (a finite number above 0 and at most 1,000,000,000)"),
        (("simulate", R1, "--synthetic", "100001"),
         "Invalid value for '--synthetic': 100,001 is out of range (a whole number from 1 to 100,000)"),
        (("speculate", "qwen35-27b-h200-chat", "--passes", "10000001"),
         "Invalid value for '--passes': 10,000,001 is out of range (a whole number from 1 to 10,000,000)"),
        # int() takes Arabic-Indic digits and underscores; a count on the command line is ASCII digits.
        (("price", R1, "--batch", "٣"), "Invalid value for '--batch': '٣' is not a whole number"),
        (("price", R1, "--batch", "1_000"), "Invalid value for '--batch': '1_000' holds an underscore"),
        (("price", R1, "--batch", "2.5"), "Invalid value for '--batch': '2.5' is not a whole number"),
    ],
)
def test_the_reported_options(args: tuple[str, ...], says: str) -> None:
    bad(*args, says=says)


def test_a_bound_is_the_schemas() -> None:
    serving = json.loads((REPO / "schema" / "serving.schema.json").read_text())
    limit = serving["properties"]["contexts"]["items"]["properties"]["limit"]
    assert option_bound("--limit") == Bound(
        limit["minimum"], limit["maximum"], integer=True,
        where="schema/serving.schema.json#/properties/contexts/items/properties/limit",
    )
    kv_bytes = option_bound("--kv-bytes")
    assert (kv_bytes.minimum, kv_bytes.exclusive_minimum, kv_bytes.maximum) == (
        serving["properties"]["kv_bytes"]["minimum"], False, serving["properties"]["kv_bytes"]["maximum"],
    )
    # --batch takes what a serving file's batch takes: at least 1 (a batch of 0 could only be refused, Empty).
    assert option_bound("--batch") == schema_bound("serving", "/properties/batch")
    assert option_bound("--batch").minimum == 1


def test_in_range_values_still_price() -> None:
    # The bounds' edges are values, priced or refused by name: the largest batch does not fit the card.
    refused = invoke("price", R1, "--batch", "4294967295", "--json")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["refusal"] == "NotResident"
    empty = invoke("price", R1, "--activation-words", "0", "--json")
    assert empty.exit_code == 1 and json.loads(empty.stdout)["refusal"] == "Empty"
    priced = invoke("price", R1, "--batch", "0002", "--kv-bytes", "1", "--json")
    assert priced.exit_code == 0 and json.loads(priced.stdout)["batch"] == 2


def test_text_grids_are_bounded_too() -> None:
    # sweep's grids and kv's contexts are text an option parses itself; each huge value is one line.
    bad("sweep", R1, "--batches", HUGE, says="--batches: ")
    bad("sweep", R1, "--batches", "1", "--positions", "1e400", says="--positions: ")
    bad("sweep", R1, "--batches", "1", "--draft-tokens", HUGE, says="--draft-tokens: ")
    bad("kv", "gemma3-270m-q4_k_m", "--contexts", "1e400", says="--contexts: ")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("kv", "gemma3-270m-q4_k_m", "--contexts", "٣k"),
         "--contexts: '٣k' is not a context size (positions: 4096, 4k, 128k, 1m)"),
        (("sweep", "gemma3-270m-h100", "--batches", "١-٤"),
         "--batches: '١-٤' is not ASCII digits (a number, a range A-B, or a doubling range A-B*2)"),
        (("sweep", "gemma3-270m-h100", "--batches", "1", "--positions", "٥١٢"),
         "--positions: '٥١٢' is not ASCII digits (a number, a range A-B, or a doubling range A-B*2)"),
        (("speculate", "r1-qwen7b-h200", "--tokens", "٣"),
         "--tokens: '٣' is not ASCII digits (a draft length or a range like 1..8)"),
    ],
    ids=["kv-contexts", "sweep-batches", "sweep-positions", "speculate-tokens"],
)
def test_unicode_digits_are_not_numbers_on_the_command_line(args: tuple[str, ...], line: str) -> None:
    """Before, ``int()`` read Arabic-Indic digits as numbers: ``kv --contexts '٣k'`` priced 3k positions and
    ``sweep --batches '١-٤'`` batches 1 to 4 (the same class as a checkpoint's ``"²"``, on the command line)."""
    from cli_helpers import invoke

    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"passprice: error: {line}\n"
