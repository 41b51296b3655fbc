"""The lock policy every pricing command applies lives in the library (:mod:`passprice.enforce`), not in the command
line: :func:`~passprice.enforce.priced_under` and :func:`~passprice.enforce.sweep_under` called directly on a copy of
the registry give the locks a price is under, their verdicts, and the refusals by name and text — the same the
commands print (``tests/test_lock_promises.py`` holds the commands' side)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke
from passprice.enforce import LockFloor, LockMismatch, priced_under, sweep_under
from passprice.registry import find_root
from passprice.servings import load_spec, resolve

R1 = "r1-qwen7b-h200"
GEMMA = "gemma3-270m-h100"
UNLOCKED = "gpt-oss-20b-h200"  # a registered serving no lock names
H200 = "h200_sxm_141gb"
WEAKENED = (
    "lock r1-qwen7b-h200 refuses this price: memory.bandwidth is estimated, below the floor published (the "
    "price's weakest provenance is estimated, carried by memory.bandwidth, scale, on_chip.capacity)"
)

ADVICE = (
    # every lock the price breaks is named (the serving's best lock too, and its lock made under the llamacpp stack,
    # which floors the same card facts: memory.bandwidth at published), each with the command that re-locks it as
    # it is (--update: its kind, serving and stack kept) with only the breached floor loosened
    "; lock r1-qwen7b-h200-best refuses it too: memory.bandwidth is estimated, below the floor published"
    "; lock r1-qwen7b-h200-llamacpp refuses it too: memory.bandwidth is estimated, below the floor published"
    "; for a what-if, price without the lock (--no-lock); to price it under the lock, two ways out: strengthen the "
    "fact's provenance (passprice fact set with a stronger --provenance and its --source), or loosen the lock's "
    f"floor for it on purpose through review (`passprice lock --update -o locks/{R1}.lock.toml --force --require "
    "memory.bandwidth=estimated`; `passprice lock --update -o locks/r1-qwen7b-h200-best.lock.toml --force --require "
    "memory.bandwidth=estimated`; `passprice lock --update -o locks/r1-qwen7b-h200-llamacpp.lock.toml --force "
    "--require memory.bandwidth=estimated`)"
)


def weaken_bandwidth(root: Path) -> None:
    """memory.bandwidth of the H200 set to an estimate: below the published floor R1's locks set."""
    result = invoke("fact", "set", H200, "memory.bandwidth", "--value", "3.0", "--unit", "TB/s", "--provenance",
                    "estimated", "--source", "nvidia-h200-datasheet", "--locator",
                    "engineering estimate for this test: the datasheet figure derated by a guess", root=root)
    assert result.exit_code == 0, result.output


def test_a_locked_serving_is_priced_under_both_its_locks_and_each_holds(tmp_path: Path) -> None:
    root = find_root(copy_root(tmp_path))
    g, verdicts = priced_under(root, R1, resolve(root, load_spec(root, R1)))
    assert g.names() == [R1, "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp"]
    assert [v.lock for v in verdicts] == [R1, "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp"]
    assert all(v.holds for v in verdicts)
    # Its weakest facts are estimates the locks were made on (their floor at those paths is estimated).
    assert (verdicts[0].provenance.value, verdicts[0].weakest) == ("estimated", ("on_chip.capacity", "scale"))


def test_a_weakened_fact_is_refused_by_name_with_the_locks_in_its_json(tmp_path: Path) -> None:
    copied = copy_root(tmp_path)
    weaken_bandwidth(copied)
    root = find_root(copied)
    resolved = resolve(root, load_spec(root, R1))
    with pytest.raises(LockFloor) as caught:
        priced_under(root, R1, resolved)
    # Without the result's own facts (rests_on), the weakest are named in the order the lock's price rests on them.
    assert str(caught.value) == WEAKENED.replace("scale, on_chip.capacity", "on_chip.capacity, scale") + ADVICE
    out = caught.value.to_json()
    assert out["refusal"] == "LockFloor" and out["locks"] == [R1, "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp"]
    assert out["offending"] == [{"path": "memory.bandwidth", "provenance": "estimated", "floor": "published"}]
    # --no-lock opts out: no lock, no verdict, and a note saying so.
    g, verdicts = priced_under(root, R1, resolved, no_lock=True)
    assert (g.names(), verdicts, g.note) == ([], (), "not under a lock (--no-lock)")
    # An unregistered serving (no name) has no lock.
    g, verdicts = priced_under(root, None, resolved)
    assert (g.names(), g.note) == ([], "not a registered serving: no lock applies")


def test_a_lock_of_another_serving_is_a_mismatch_not_a_verdict(tmp_path: Path) -> None:
    root = find_root(copy_root(tmp_path))
    with pytest.raises(LockMismatch) as caught:
        priced_under(root, GEMMA, resolve(root, load_spec(root, GEMMA)), explicit=R1)
    assert caught.value.to_json()["what"] == "serving"
    assert caught.value.to_json()["priced"] == GEMMA


def test_a_sweep_names_the_locks_of_each_locked_serving_and_refuses_a_breach_naming_the_serving(
    tmp_path: Path,
) -> None:
    copied = copy_root(tmp_path)
    root = find_root(copied)
    lines = sweep_under(root, (R1, UNLOCKED))
    assert lines == [
        f"{R1}: under locks {R1} (locks/{R1}.lock.toml), r1-qwen7b-h200-best (locks/r1-qwen7b-h200-best.lock.toml), "
        "r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): floors hold; the serving is the locked "
        f"one, its prices not compared with the locked ones (`passprice reproduce {R1}` compares them)"
    ]
    # --lock L sweeps the servings it locks under it, and the others under their own locks (this one has none).
    assert sweep_under(root, (R1, UNLOCKED), explicit=R1) == [
        f"{R1}: under lock {R1} (locks/{R1}.lock.toml): floors hold; the serving is the locked one, its prices not "
        f"compared with the locked ones (`passprice reproduce {R1}` compares them)"
    ]
    # ... and is refused when it locks none of them.
    with pytest.raises(LockMismatch):
        sweep_under(root, (UNLOCKED,), explicit=R1)
    assert sweep_under(root, (R1,), no_lock=True) == []
    weaken_bandwidth(copied)
    root = find_root(copied)
    with pytest.raises(LockFloor) as caught:
        sweep_under(root, (UNLOCKED, R1))
    assert str(caught.value) == WEAKENED.replace("scale, on_chip.capacity", "on_chip.capacity, scale") + ADVICE
    assert caught.value.to_json()["serving"] == R1
