"""``sweep``'s left edges (session 36, sweep51): ``--lock L`` with a serving file kept outside the registry judged
as ``price FILE --lock L`` judges it (it was skipped, exit 0); every wrong name of a ``--checkpoint`` command line
said at once (the card after the first was said only once the checkpoint was fixed); a sweep whose every line is
refused ``Routed``/``BadRouting`` says price's advice, the records that fit, in price's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passprice.cli import cli
from passprice.enforce import LockFloor, LockMismatch, sweep_under
from passprice.registry import find_root

ROOT = find_root(Path(__file__).resolve().parent.parent)
BASE = ["--root", str(ROOT.path)]
QWEN = "qwen3-30b-a3b-q4_k_m"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, [*BASE, *args])


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Serving files kept outside the registry: ``r1`` a copy of r1-qwen7b-h200, ``moe`` qwen3-30b-a3b-h200's with
    ``routing = "uniform"`` in place of its measured record (below its lock's floors, measured)."""
    folder = tmp_path_factory.mktemp("outside")
    r1 = folder / "r1.toml"
    r1.write_text((ROOT.servings / "r1-qwen7b-h200.toml").read_text())
    text = (ROOT.servings / "qwen3-30b-a3b-h200.toml").read_text()
    assert 'routing = "qwen3-30b-a3b-measured"' in text
    moe = folder / "moe.toml"
    moe.write_text(text.replace('routing = "qwen3-30b-a3b-measured"', 'routing = "uniform"'))
    return {"r1": str(r1), "moe": str(moe)}


def stderr_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line]


# 1. --lock L with a serving file outside the registry: price's decision (enforce.sweep_under)


def test_an_outside_file_below_the_floor_of_the_lock_given_is_refused_as_price_refuses_it(
    outside: dict[str, str]
) -> None:
    with pytest.raises(LockFloor) as caught:
        sweep_under(ROOT, (outside["moe"],), "qwen3-30b-a3b-h200")
    assert "routing.hot_experts is assumed, below the floor measured" in str(caught.value)
    assert caught.value.to_json()["serving"] == outside["moe"]
    swept = invoke("sweep", outside["moe"], "--lock", "qwen3-30b-a3b-h200", "--batches", "1,8")
    priced = invoke("price", outside["moe"], "--lock", "qwen3-30b-a3b-h200")
    assert swept.exit_code == priced.exit_code == 1  # was 0, every row written
    assert swept.stdout == ""  # refused before a row is written
    assert stderr_lines(swept) == stderr_lines(priced)
    assert stderr_lines(swept)[0].startswith("passprice: refused: LockFloor: lock qwen3-30b-a3b-h200 refuses this "
                                             "price: routing.hot_experts is assumed, below the floor measured")


def test_an_outside_file_the_lock_given_locks_is_judged_under_it(outside: dict[str, str]) -> None:
    lines = sweep_under(ROOT, (outside["r1"],), "r1-qwen7b-h200")
    assert lines == [f"{outside['r1']}: under lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml): floors hold; the "
                     "serving is the locked one, its prices not compared with the locked ones (`passprice reproduce "
                     "r1-qwen7b-h200` compares them)"]
    assert sweep_under(ROOT, (outside["r1"],)) == []  # without --lock: under no lock, as before


def test_an_outside_file_the_lock_given_does_not_lock_is_refused_lock_mismatch(outside: dict[str, str]) -> None:
    with pytest.raises(LockMismatch) as caught:
        sweep_under(ROOT, (outside["r1"],), "gemma3-270m-h100")
    assert str(caught.value).startswith("lock gemma3-270m-h100 locks card h100_sxm5_80gb, not h200_sxm_141gb")
    swept = invoke("sweep", outside["r1"], "--lock", "gemma3-270m-h100", "--batches", "1")
    priced = invoke("price", outside["r1"], "--lock", "gemma3-270m-h100")
    assert swept.exit_code == priced.exit_code == 1
    assert stderr_lines(swept) == stderr_lines(priced)
    # Beside a serving the lock locks, a file it does not lock is swept under no lock (as another registered one is
    # swept under its own): only the locked one's line.
    lines = sweep_under(ROOT, ("r1-qwen7b-h200", outside["moe"]), "r1-qwen7b-h200")
    assert [line.split(":")[0] for line in lines] == ["r1-qwen7b-h200"]


# 2. every wrong name of the command line at once


def test_every_wrong_name_beside_a_wrong_checkpoint_is_said_at_once() -> None:
    result = invoke("sweep", "--checkpoint", "nope", "--cards", "h200_sxm_141gb,nocard", "--batches", "1")
    assert result.exit_code == 2
    said = stderr_lines(result)
    assert [line.split(":")[:2] for line in said] == [["passprice", " error"]] * 2  # one line each
    assert said[0].startswith("passprice: error: checkpoint 'nope': not found in registry/checkpoints")
    assert said[1].startswith("passprice: error: --cards: card 'nocard': not found in facts/cards")
    # the first card (the one price's resolution looks at) said once, the others after it
    result = invoke("sweep", "--checkpoint", "nope", "--cards", "nocard,nocard2", "--batches", "1")
    assert result.exit_code == 2
    assert [line.split("'")[1] for line in stderr_lines(result)] == ["nope", "nocard", "nocard2"]
    # a name given twice is the list's own fault, said before any name is looked up (one reader of --cards for
    # compare, sweep and kv: tests/test_fix181.py)
    result = invoke("sweep", "--checkpoint", "nope", "--cards", "nocard,nocard2,nocard", "--batches", "1")
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "passprice: error: --cards: 'nocard' is given more than once: each card is priced once"]


def test_with_servings_each_wrong_serving_card_checkpoint_and_routing_is_said() -> None:
    result = invoke("sweep", "r1-qwen7b-h200", "nosuch", "--checkpoint", "nope", "--routing", "nor", "--cards",
                    "nocard,h200_sxm_141gb", "--stack", "nostack", "--batches", "1")
    assert result.exit_code == 2
    said = stderr_lines(result)
    assert [line.split("'")[0] for line in said] == [
        "passprice: error: checkpoint ", "passprice: error: routing record ", "passprice: error: stack ",
        "passprice: error: serving ", "passprice: error: --cards: card ",
    ]
    assert [line.split("'")[1] for line in said] == ["nope", "nor", "nostack", "nosuch", "nocard"]


# 3. a sweep every line of which is refused Routed or BadRouting: price's advice in its summary


@pytest.mark.parametrize(
    ("sweep", "price", "name"),
    [
        (["--checkpoint", QWEN], ["--checkpoint", QWEN], "Routed"),
        (["--checkpoint", "llama2-7b-q4_0", "--routing", "uniform"],
         ["--checkpoint", "llama2-7b-q4_0", "--routing", "uniform"], "BadRouting"),
    ],
)
def test_a_sweep_refused_for_its_routing_says_prices_advice(sweep: list[str], price: list[str], name: str) -> None:
    swept = invoke("sweep", *sweep, "--cards", "h200_sxm_141gb", "--batches", "1,8")
    priced = invoke("price", *price, "--card", "h200_sxm_141gb")
    assert swept.exit_code == priced.exit_code == 1
    [summary] = stderr_lines(swept)  # one line
    [refusal] = stderr_lines(priced)
    assert refusal.startswith(f"passprice: refused: {name}: ")
    assert summary == ("passprice: refused: no row of the sweep has a price: every line is refused at its smallest "
                       f"batch, and at every larger one: {name} (1 line); the rows and their refusals were written; "
                       + refusal.removeprefix("passprice: refused: "))
    if name == "Routed":  # the records that fit, as price names them
        assert summary.endswith("; registered here for 128 experts, 8 a token: qwen3-30b-a3b-measured (measured; "
                                "for qwen3-30b-a3b-q4_k_m), uniform (assumed; any checkpoint)")


def test_an_outside_file_is_judged_without_lock_under_the_locks_of_what_it_prices(tmp_path: Path) -> None:
    # `price COPY` judged a serving file kept outside the registry under a lock of no registered serving that locks
    # what it prices ("under lock r1-1k … floors hold"); `sweep COPY` skipped it, said nothing, exit 0 (found by
    # sweep51, fixed by the lead).
    reg = tmp_path / "reg"
    assert CliRunner().invoke(cli, ["init", str(reg), "--examples"]).exit_code == 0
    here = ["--root", str(reg)]
    locked = CliRunner().invoke(cli, [*here, "lock", "r1-qwen7b-h200", "--limit", "1024", "-o",
                                      str(reg / "locks" / "r1-1k.lock.toml")])
    assert locked.exit_code == 0, locked.output
    text = (reg / "registry" / "servings" / "r1-qwen7b-h200.toml").read_text()
    assert "\nposition = 2048\n" in text and "\nlimit = 4096\n" in text
    copy = tmp_path / "copy.toml"
    copy.write_text(text.replace("\nposition = 2048\n", "\nposition = 512\n").replace("\nlimit = 4096\n",
                                                                                     "\nlimit = 1024\n"))
    root = find_root(reg)
    assert sweep_under(root, (str(copy),)) == [
        f"{copy}: under lock r1-1k (locks/r1-1k.lock.toml): floors hold; the serving is the locked one, its prices "
        "not compared with the locked ones (`passprice reproduce r1-1k` compares them)"]
    priced = CliRunner().invoke(cli, [*here, "price", str(copy)])
    assert "under lock r1-1k (locks/r1-1k.lock.toml): floors hold" in priced.stdout
