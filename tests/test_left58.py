"""Left58: locks that share a name or a file (left55's leftovers), each reproducer built in its test.

- (1) ``lock --update -o locks/old.lock.toml`` on a first-format lock named ``r1-qwen7b-h200`` beside
  ``locks/r1-qwen7b-h200.lock.toml`` wrote a current-format lock of that name (exit 0), which ``check`` then refused
  (exit 2, "lock.name: 'r1-qwen7b-h200' is also the name of …"). The update is refused before anything is written
  (exit 2), naming the clash and the re-lock under the file's own name (``--update`` keeps a lock's name).
- (2) A hard link of a lock (one inode, two names) was named twice in ``price``'s lock line: files are counted by
  ``(st_dev, st_ino)``, from the stat the folder's stamps take anyway.
- (3) ``check`` judged a symbolic link in ``locks/`` to a lock beside it as a lock of its own (two blocks, "11 locks")
  and warned "locks/alias.lock.toml duplicates … remove one": the file is judged once, the link named once.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"


def _only_r1(root: Path) -> Path:
    """``root``'s lock of :data:`R1` alone in ``locks/`` (check judges every lock: CPU); its path."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    return root / "locks" / f"{R1}.lock.toml"


def test_1_updating_a_first_format_lock_to_a_taken_name_is_refused_before_writing(tmp_path: Path) -> None:
    # before: exit 0 "locked r1-qwen7b-h200 (price, …) -> locks/old.lock.toml", then `check` exit 2
    # "locks/old.lock.toml: lock.name: 'r1-qwen7b-h200' is also the name of locks/r1-qwen7b-h200.lock.toml, …"
    root = copy_root(tmp_path)
    _only_r1(root)
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    before = old.read_bytes()
    result = invoke("lock", "--update", "-o", str(old), root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: {old}: lock.name: 'r1-qwen7b-h200' is also the name of "
        "locks/r1-qwen7b-h200.lock.toml: --update would write this first-format lock in today's format, whose name "
        "must be unique (a first-format lock's name is the serving it locks, so the two could share it; `passprice "
        "check` refuses two current-format locks of one name): re-lock it under its file's name (`passprice lock "
        f"r1-qwen7b-h200 --force -o {old}`), or remove it; nothing written"]
    assert old.read_bytes() == before
    assert invoke("check", root=root).exit_code == 0  # the first-format lock beside it is let by, as before
    # The way out it names: a lock named after its file, which check passes.
    done = invoke("lock", R1, "--force", "-o", str(old), root=root)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("locked old (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")
    assert invoke("check", root=root).exit_code == 0
    # Alone in its folder (no clash), the update is written as before, under its old name.
    (root / "locks" / f"{R1}.lock.toml").unlink()
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    alone = invoke("lock", "--update", "-o", str(old), root=root)
    assert alone.exit_code == 0, alone.output
    assert alone.stdout.startswith("locked r1-qwen7b-h200 (price, locks serving r1-qwen7b-h200): 996.1 tokens/s")


def test_2_a_hard_linked_lock_is_listed_once(tmp_path: Path) -> None:
    # before: "under locks r1-qwen7b-h200 (locks/hard.lock.toml), r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml),
    # r1-qwen7b-h200-best (…), …"
    root = copy_root(tmp_path)
    os.link(root / "locks" / f"{R1}.lock.toml", root / "locks" / "hard.lock.toml")
    result = invoke("price", R1, root=root)
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("  lock "))
    assert line == (
        # named by its file named after the lock, as check's duplicate warning keeps it (tests/test_left182.py)
        "  lock          under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
        "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): "
        "floors hold, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp record")


def test_3_check_judges_a_linked_lock_once_and_names_the_link_once(tmp_path: Path) -> None:
    # before: "11 locks" with the 10 files, "lock r1-qwen7b-h200 (locks/alias.lock.toml, …): ok" and the warning
    # "locks/alias.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: … remove one"
    root = copy_root(tmp_path)
    _only_r1(root)
    (root / "locks" / "alias.lock.toml").symlink_to(f"{R1}.lock.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == ("checked 118 files (17 cards, 2 drafts, 2 routings, 2 stacks, 21 checkpoints, 9 measurements, "
                        "47 sources, 17 servings, 1 lock): 0 problems")  # was 117 files, 2 locks (cite81: 2 sources;
    # cite90: 45 -> 46 sources, 2 records added, 1 removed; cite102: 46 -> 47, the H200 product page's)
    assert lines[1] == (
        "  warning: locks/alias.lock.toml is a symbolic link to locks/r1-qwen7b-h200.lock.toml beside it: judged "
        "once, as locks/r1-qwen7b-h200.lock.toml (every command reads the link as that lock)")
    assert [ln for ln in lines if ln.startswith("lock ")] == [
        f"lock {R1} (locks/{R1}.lock.toml, locks serving {R1}): ok"]
    assert "duplicates" not in result.stdout and result.stdout.count("alias.lock.toml") == 1
