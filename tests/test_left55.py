"""Left55: odd locks attack 73 found in hand-edited, re-digested locks under ``locks/``, each reproducer built in its
test.

- (1) Two lock files of one ``[lock]`` name pinning different facts (a lock re-digested under another's name):
  ``check`` said "all holds", exit 0 (it warned only of exact copies). A lock's name is what every lock line and
  refusal names it by: it must be unique, so ``check`` fails it now (exit 2), naming both files and ``lock.name``.
- (2) A symbolic link in ``locks/`` to a lock beside it (``alias.lock.toml → r1-qwen7b-h200.lock.toml``): ``price``'s
  lock line named ``r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml)`` twice. A lock file is counted once now, by
  its resolved path (:func:`passprice.locks.locks_of`).
- (3) A lock's ``checkpoint.name`` set to a path (``"../../../etc/passwd"``, ``"/etc/passwd"``) and re-digested
  passed ``check``, exit 0 ("the pinned content … is now entry deepseek-r1-distill-qwen-7b-q4_k_m (renamed or
  moved)"). The lock schema refuses a ``.`` or ``..`` part now, and a lock whose ``checkpoint.name`` is not its
  ``serving.checkpoint`` (as every lock passprice writes gives both) is refused when read.
- (4) A pinned fact whose derivation takes itself as an input (``facts.array``'s input ``fact = "array"``),
  re-digested: ``check`` exit 0, only ``--frozen`` said "derivation changed". The lock is refused when read now,
  one line naming the file, the pin's key and the loop, as a card's cycle is.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import bad, copy_root, invoke
from test_hostile_28 import _redigested

R1 = "r1-qwen7b-h200"

# --- (1) two locks of one name --------------------------------------------------------------------------------------


def test_two_locks_of_one_name_pinning_different_facts_fail_check(tmp_path: Path) -> None:
    # before: exit 0, "all holds": lines "lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml …): ok" and
    # "lock r1-qwen7b-h200 (locks/zz.lock.toml …): ok", two locks of one name, one of batch 1, one the best batch
    root = copy_root(tmp_path)
    locks = root / "locks"
    _redigested(locks / f"{R1}-best.lock.toml", locks / "zz.lock.toml", "lock", "name", R1)
    for other in locks.glob("*.lock.toml"):  # the two alone: check judges every lock (CPU)
        if other.name not in (f"{R1}.lock.toml", "zz.lock.toml"):
            other.unlink()
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: locks/zz.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of "
        "locks/r1-qwen7b-h200.lock.toml, which pins other facts: a lock's name must be unique (every lock line and "
        "refusal names a lock by it): rename one (`passprice lock --name NAME`, or its file and name)"]
    # The file named after its lock is kept whichever sorts first: the other is blamed.
    (locks / "zz.lock.toml").rename(locks / "aa.lock.toml")
    assert invoke("check", root=root).stderr.splitlines()[0].startswith(
        "passprice: error: locks/aa.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of "
        "locks/r1-qwen7b-h200.lock.toml, ")


# --- (2) a lock linked under another name ---------------------------------------------------------------------------


def test_a_lock_linked_under_another_name_is_listed_once(tmp_path: Path) -> None:
    # before: "under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200
    # (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best (…), …: … the one r1-qwen7b-h200, r1-qwen7b-h200 and
    # r1-qwen7b-h200-llamacpp record"
    root = copy_root(tmp_path)
    (root / "locks" / "alias.lock.toml").symlink_to(f"{R1}.lock.toml")
    result = invoke("price", R1, root=root)
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("  lock "))
    assert line == (
        "  lock          under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
        "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): "
        "floors hold, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp record")


# --- (3) a lock's checkpoint.name a path ----------------------------------------------------------------------------


def _only_r1(root: Path) -> Path:
    """``root``'s lock of :data:`R1` alone in ``locks/`` (check judges every lock: CPU); its path."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    return root / "locks" / f"{R1}.lock.toml"


def test_a_lock_whose_checkpoint_name_climbs_out_fails_check(tmp_path: Path) -> None:
    # before: exit 0, "all holds", "checkpoint: ../../../etc/passwd: the pinned content 169f62b972aa… is now entry
    # deepseek-r1-distill-qwen-7b-q4_k_m (renamed or moved)"
    root = copy_root(tmp_path)
    lock = _only_r1(root)
    _redigested(lock, lock, "checkpoint", "name", "../../../etc/passwd")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: locks/{R1}.lock.toml: checkpoint.name: '../../../etc/passwd' is not a checkpoint entry's "
        "name or a header file's path as passprice writes it (relative to the root, or absolute outside it), without "
        "a '.' or '..' part or an empty one"]


def test_a_lock_whose_checkpoint_name_is_not_its_servings_is_refused(tmp_path: Path) -> None:
    # before: `check` and `reproduce` exit 0, "checkpoint: /etc/passwd: the pinned content … is now entry …"
    root = copy_root(tmp_path)
    lock = _only_r1(root)
    _redigested(lock, lock, "checkpoint", "name", "/etc/passwd")
    assert bad("reproduce", str(lock), root=root) == [
        f"passprice: error: {lock}: checkpoint.name: '/etc/passwd' is not the checkpoint the lock's serving names "
        "(serving.checkpoint = 'deepseek-r1-distill-qwen-7b-q4_k_m'): a lock pins its serving's checkpoint; re-lock "
        "it"]


# --- (4) a pinned derivation looping on itself ----------------------------------------------------------------------


def test_a_lock_pinning_a_fact_derived_from_itself_is_refused_when_read(tmp_path: Path) -> None:
    # before: `check` exit 0 ("all holds", "array: 989.5 TMAC/s (derived) → 989.5 TMAC/s (derived) (derivation
    # changed)"), `check --frozen` exit 1, `reproduce` exit 0
    from test_hostile_31 import _redigested as _input_redigested

    root = copy_root(tmp_path)
    _only_r1(root)
    lock = _input_redigested(root, R1, {"sparse": {"fact": "array", "unit": "TOPS", "value": 3958}})
    loop = ("facts.array.derivation: a cycle of derivations: array -> array (a fact cannot derive from itself; a "
            "lock passprice writes never pins one: re-lock it)")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"passprice: error: locks/{R1}.lock.toml: {loop}"]
    assert bad("reproduce", str(lock), root=root) == [f"passprice: error: {lock}: {loop}"]
