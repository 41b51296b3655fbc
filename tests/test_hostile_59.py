"""Attack round 59 (issue 13): a lock whose pins build no card. The re-price that refuses a forged record
(:class:`passprice.enforce.LockForged`, :func:`passprice.enforce.unpriced_record`) is skipped for pins that do not
build a card or price ("check says so"), so a lock re-digested with its recorded price doubled and one pin broken —
``memory.bandwidth`` in ``GB``, ``scale`` removed, ``host.capacity`` removed from a host link — was priced under by
``price`` and ``price --lock`` (exit 0, "floors hold, but the price is NOT the one … records"), while ``check`` and
``reproduce`` said ``card h200_sxm_141gb: memory.bandwidth: unit 'GB' is not a unit of bytes/s``, naming no file.
The lock schema now states each pin's unit (by its path's dimension), the facts a card requires and the host link
whole or not at all, so each is one line naming the file and the key, exit 2, for every command that reads the lock.
Each test builds its reproducer (a lock re-digested as an attacker who knows the digest rule writes it)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke

R1 = "locks/r1-qwen7b-h200.lock.toml"


def _forged(source: Path, out: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """The lock at ``source`` with its pinned facts changed by ``change`` and its recorded tokens/s doubled, every
    digest recomputed (:func:`passprice.locks.lock_text`), written to ``out``."""
    from passprice.locks import lock_text, read_lock

    lock = read_lock(source)
    facts = dict(lock.facts)
    change(facts)
    price = {**lock.price, "tokens_per_s": 2 * lock.price["tokens_per_s"]}
    out.write_text(lock_text(attrs.evolve(lock, facts=facts, price=price)), encoding="utf-8")
    return out


def _unit(path: str, unit: str) -> Callable[[dict[str, Any]], None]:
    def change(facts: dict[str, Any]) -> None:
        facts[path] = attrs.evolve(facts[path], unit=unit)
    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(facts: dict[str, Any]) -> None:
        del facts[path]
    return change


# A stack's or routing record's pin in another dimension was caught as forged (its re-price ran); its unit rule is
# held by the last test of this part.
CASES = [
    (R1, _unit("memory.bandwidth", "GB"), 'facts."memory.bandwidth".unit: \'GB\' is not allowed here (one of '
     "'B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s')"),
    (R1, _drop("scale"), "facts.scale: missing (required)"),
    (R1, _drop("host.capacity"), 'facts."host.capacity": missing (required)'),
]


@pytest.mark.parametrize(("rel", "change", "says"), CASES)
def test_a_pin_that_builds_no_card_is_one_line_naming_the_file_and_key(
    tmp_path: Path, rel: str, change: Callable[[dict[str, Any]], None], says: str
) -> None:
    from passprice.errors import InputError
    from passprice.locks import read_lock

    forged = _forged(REPO / rel, tmp_path / Path(rel).name, change)
    with pytest.raises(InputError) as raised:
        read_lock(forged)
    assert raised.value.lines[0].startswith(f"{forged}: ")
    assert says in raised.value.lines[0], raised.value.lines


@pytest.fixture(scope="module")
def forged_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry whose r1-qwen7b-h200 lock pins memory.bandwidth in GB and records twice its price, re-digested."""
    root = copy_root(tmp_path_factory.mktemp("hostile59"))
    _forged(root / R1, root / R1, _unit("memory.bandwidth", "GB"))
    return root


WRONG = ("passprice: error: locks/r1-qwen7b-h200.lock.toml: facts.\"memory.bandwidth\".unit: 'GB' is not allowed "
         "here (one of 'B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s', 'PB/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s')\n")


@pytest.mark.parametrize("args", [
    ("price", "r1-qwen7b-h200"),  # was exit 0, priced under its locks
    ("price", "r1-qwen7b-h200", "--lock", R1),  # was exit 0, "the price is NOT the one r1-qwen7b-h200 records"
    ("reproduce", R1),  # was exit 2, "card h200_sxm_141gb: memory.bandwidth: unit 'GB' …", no file named
])
def test_every_command_reading_the_lock_refuses_it_as_bad_input(forged_root: Path, args: tuple[str, ...]) -> None:
    import os

    was = os.getcwd()
    os.chdir(forged_root)  # --lock and reproduce name the lock as given: relative to the registry
    try:
        result = invoke(*args, root=forged_root)
    finally:
        os.chdir(was)
    assert result.exit_code == 2, result.output
    assert result.stderr.replace(f"{forged_root}/", "") == WRONG  # found in the registry's locks/: its full path


def test_each_pin_path_allows_the_units_of_its_dimension_and_no_other() -> None:
    """The lock schema's unit of each pinned path is the card's, stack's, routing record's or drafting method's
    dimension (passprice.facts.UNITS): every path the facts table admits matches exactly one unit rule."""
    from passprice.cards import CARD_PATHS, HOST_PATHS, TENSOR_PATHS
    from passprice.facts import UNITS
    from passprice.stacks import STACK_PATHS

    facts = json.loads((REPO / "schema" / "lock.schema.json").read_text(encoding="utf-8"))["properties"]["facts"]
    wanted = {**CARD_PATHS, **HOST_PATHS, **TENSOR_PATHS, "routing.hot_experts": "share", "routing.hot_share": "share",
              "draft.acceptance.1": "share", "draft.acceptance.64": "share",
              **{f"stack.{p}": d for p, d in STACK_PATHS.items()},
              **{f"stack.cards.h200_sxm_141gb.{p}": d for p, d in STACK_PATHS.items() if not p.startswith("range.")}}
    for path, dim in wanted.items():
        rules = [rule["properties"]["unit"]["enum"] for pattern, rule in facts["patternProperties"].items()
                 if "unit" in rule.get("properties", {}) and re.search(pattern, path)]
        assert rules == [[u for u, (d, _) in UNITS.items() if d == dim]], path
    assert sorted(facts["required"]) == sorted(CARD_PATHS)


# --- kv --cards all: one card file that does not read hid the whole table ------------------------------------------

BAD_CARD = "passprice: error: facts/cards/zz_bad.toml: not valid TOML: Invalid value (at line 1, column 5)\n"


@pytest.fixture(scope="module")
def bad_card_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with one card file that is not TOML beside the 17 good ones."""
    root = copy_root(tmp_path_factory.mktemp("hostile59kv"))
    (root / "facts" / "cards" / "zz_bad.toml").write_text("x = \n", encoding="utf-8")
    return root


def test_kv_lists_every_good_card_and_then_the_bad_one(bad_card_root: Path) -> None:
    """As ``cards`` and ``compare`` do (issue 13, class 13): the good cards' rows, then one line for the bad file,
    exit 2. ``kv`` printed nothing but that line (load_cards stopped at the first file that did not read)."""
    result = invoke("kv", "gemma3-270m-q4_k_m", "--contexts", "4k", root=bad_card_root)
    assert result.exit_code == 2
    assert result.stderr == BAD_CARD
    # (80e9 B − 246.6 MB held once) / 20,447,232 B a sequence at 4K = 3,900.4
    assert re.search(r"^h100_sxm5_80gb +80 GB +3,900$", result.stdout, re.MULTILINE), result.stdout
    assert "zz_bad" not in result.stdout
    result = invoke("kv", "gemma3-270m-q4_k_m", "--contexts", "4k", "--json", root=bad_card_root)
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert data["problems"] == [BAD_CARD[len("passprice: error: "):-1]]
    assert len(data["contexts"][0]["fits"]) == 17
