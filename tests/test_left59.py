"""Left59: issue 13's small leftovers, each reproducer built in its test.

- (3) A first-format lock whose name another current-format lock of ``locks/`` holds was told by ``check`` and
  ``reproduce`` to re-lock with ``passprice lock --update -o FILE``, which left58 refuses (exit 2): the hint names
  the re-lock under its file's name, with its serving, or removing it.
- (4) ``files.WRITTEN`` (the files a command wrote, which ``main``'s last-resort error line names) kept every file
  the process wrote: a program calling the library grew it by one path a file. It records only while ``main`` runs
  a command.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"
#: What every command says first of a first-format lock.
FORMAT_1 = ("lock format 1, older than 2: it pins no pricing-model digest and no checkpoint content, and its rests_on "
            "is the first format's fixed list, so it is reproduced on its figures only; ")


def _old_beside_r1(tmp_path: Path) -> tuple[Path, Path]:
    """A registry whose ``locks/`` holds R1's lock and ``old.lock.toml``, a first-format lock named R1; the root and
    the old lock's path."""
    root = copy_root(tmp_path)
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{R1}.lock.toml":
            other.unlink()
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    return root, old


def test_3_the_older_format_hint_names_what_works_when_its_name_is_taken(tmp_path: Path) -> None:
    # before: check and reproduce (exit 0) said "re-lock it: `passprice lock --update -o locks/old.lock.toml` keeps
    # its policy, …", and that command exits 2 ("lock.name: 'r1-qwen7b-h200' is also the name of …", left58)
    root, old = _old_beside_r1(tmp_path)
    hint = (FORMAT_1 + "re-lock it under its file's name: `passprice lock r1-qwen7b-h200 --force -o "
            "locks/old.lock.toml` (the default policy; `lock --update` keeps its name, 'r1-qwen7b-h200', which "
            "locks/r1-qwen7b-h200.lock.toml holds, and is refused), or remove it")
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    assert f"  format: {hint}" in checked.stdout.splitlines()
    reproduced = invoke("reproduce", str(old), root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert f"  {hint}" in reproduced.stdout.splitlines()
    done = invoke("lock", R1, "--force", "-o", str(old), root=root)  # what it says works (--update: exit 2)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("locked old (price, locks serving r1-qwen7b-h200): 996.1 tokens/s at batch 1")


def test_3_the_hint_without_a_clash_is_unchanged(tmp_path: Path) -> None:
    root, old = _old_beside_r1(tmp_path)
    (root / "locks" / f"{R1}.lock.toml").unlink()
    reproduced = invoke("reproduce", str(old), root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert (f"  {FORMAT_1}re-lock it: `passprice lock --update -o locks/old.lock.toml` keeps its policy, `passprice "
            "lock SERVING --force -o locks/old.lock.toml` gives it the default one") in reproduced.stdout.splitlines()


#: A child that calls the library twice (two files written), says how many paths ``files.WRITTEN`` holds, then runs
#: ``passprice ARGS`` (``main``) and says it again from ``main``'s ``finally``.
_TWICE = """
import sys
from pathlib import Path
from passprice import files
for name in ("a.txt", "b.txt"):
    files.write_atomically(Path(name), "x\\n")
print(len(files.WRITTEN), file=sys.stderr)
from passprice.cli import main
sys.argv[0] = "passprice"
try:
    main()
finally:
    print(len(files.WRITTEN), file=sys.stderr)
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_4_the_files_written_are_kept_per_command_not_per_process(tmp_path: Path) -> None:
    # before: "2" (the library's two files kept, and one more path each call), then main's line (it cleared them at
    # its start), then "1" (the card, kept after the command)
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", _TWICE, "--root", str(root), "fact", "set", "h200_sxm_141gb", "memory.bandwidth",
             "--value", "4.9", "--unit", "TB/s", "--provenance", "published", "--source", "nvidia-h200-datasheet",
             "--locator", "Table 1, memory bandwidth row"],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "0",
        f"passprice: error: standard output: No space left on device; written before it failed, and kept: {card} "
        "(do not redo the edit)",
        "0"]
    assert (tmp_path / "a.txt").read_text() == "x\n" and "value = 4.9\n" in card.read_text(encoding="utf-8")
