"""attack80: breaking session 42's merges (issue 13), each escape's reproducer built in its test.

- (1) ``lock`` wrote into ``locks/`` a lock whose ``[lock]`` name another lock file carries while pinning other
  facts: ``lock R1 --name R1 -o locks/new.lock.toml`` after a pinned fact's note changed, and ``lock --update -o
  locks/copy.lock.toml`` of an exact copy of R1's lock (a copy ``check`` only warns of), each exit 0, after which
  ``check`` failed (exit 2, "lock.name: 'r1-qwen7b-h200' is also the name of …"). left58 refused this for a
  first-format lock's update alone. Now refused before writing (:func:`passprice.locking.require_unique_name`).
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import bad, copy_root, invoke

R1 = "r1-qwen7b-h200"
NOTE = "MLPerf v4.1 H200 system file: accelerator_host_interconnect"


def _only_r1(root: Path) -> Path:
    """``root``'s lock of :data:`R1` alone in ``locks/`` (check and lock read every lock: CPU); its path."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    return root / "locks" / f"{R1}.lock.toml"


def test_1_lock_refuses_a_name_another_lock_holds_with_other_pins(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    r1 = _only_r1(root)
    copy = root / "locks" / "copy.lock.toml"
    copy.write_bytes(r1.read_bytes())
    # facts unchanged: the update writes the same lock again, still a copy (check warns of it, as before)
    assert invoke("lock", "--update", "-o", str(copy), root=root).exit_code == 0
    assert copy.read_bytes() == r1.read_bytes()
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count(NOTE) == 1
    card.write_text(text.replace(NOTE, NOTE.replace(":", ",")), encoding="utf-8")  # host.read's note, pinned
    # before: exit 0 ("locked r1-qwen7b-h200 … -> …copy.lock.toml"), then check exit 2 naming the two files
    assert bad("lock", "--update", "-o", str(copy), root=root) == [
        f"passprice: error: {copy}: lock.name: 'r1-qwen7b-h200' is also the name of locks/r1-qwen7b-h200.lock.toml, "
        "which pins other facts: a lock's name must be unique (`passprice check` refuses the two): --update keeps "
        f"the name: re-lock this one under its file's name (`passprice lock r1-qwen7b-h200 --force -o {copy}`), or "
        "remove locks/r1-qwen7b-h200.lock.toml; nothing written"]
    assert copy.read_bytes() == r1.read_bytes()
    new = root / "locks" / "new.lock.toml"
    assert bad("lock", R1, "--name", R1, "-o", str(new), root=root) == [
        f"passprice: error: {new}: lock.name: 'r1-qwen7b-h200' is also the name of locks/copy.lock.toml, which pins "
        "other facts: a lock's name must be unique (`passprice check` refuses the two): lock it under another name "
        "(--name NAME, or -o locks/NAME.lock.toml), or remove locks/copy.lock.toml; nothing written"]
    assert sorted(p.name for p in (root / "locks").iterdir()) == ["copy.lock.toml", f"{R1}.lock.toml"]
    # under a name of its own it is written, as before
    assert invoke("lock", R1, "-o", str(new), root=root).exit_code == 0
    assert "name = \"new\"" in new.read_text(encoding="utf-8")
