"""A serving renamed together with the card file or checkpoint entry it names, in one pull request, and re-locked at
``--floor assumed``: the review read its old locks as retired with their serving (its ``card`` or ``checkpoint``
named another entry, so it was no rename) and exited 0, the floors dropped silently. The entry renamed in the same
change (its file gone, the same content added under another name) is the same entry, so the serving is the same
serving, renamed: the review refuses the dropped floors (exit 1) as it does for a serving renamed alone
(``test_slip_9``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from passprice.cli import cli
from test_diff import commit_all, git, make_lock_file
from test_slip_9 import SERVING, SERVING_FILE, _base, _diff

CARD = "h200_sxm_141gb"
CHECKPOINT = "deepseek-r1-distill-qwen-7b-q4_k_m"


def _rename_everywhere(path: Path, old: str, new: str) -> None:
    """Replace the quoted name ``old`` by ``new`` in every registry file that names it (as a rename would)."""
    for folder in ("facts", "registry", "sources"):
        for file in (path / folder).rglob("*.toml"):
            text = file.read_text(encoding="utf-8")
            if f'"{old}"' in text:
                file.write_text(text.replace(f'"{old}"', f'"{new}"'), encoding="utf-8")


@pytest.mark.parametrize("entry", ["card", "checkpoint"])
def test_a_serving_renamed_with_its_entry_and_relocked_weaker_drops_floors(tmp_path: Path, entry: str) -> None:
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    if entry == "card":
        git(path, "mv", f"facts/cards/{CARD}.toml", "facts/cards/h200-v2.toml")
        _rename_everywhere(path, CARD, "h200-v2")
    else:
        git(path, "mv", f"registry/checkpoints/{CHECKPOINT}.toml", "registry/checkpoints/r1-7b-q4.toml")
        _rename_everywhere(path, CHECKPOINT, "r1-7b-q4")  # the entry's own entry.name with it
    git(path, "mv", SERVING_FILE, "registry/servings/r1-v2.toml")
    git(path, "rm", "-q", f"locks/{SERVING}.lock.toml")
    (path / "locks").mkdir(exist_ok=True)
    relocked = CliRunner().invoke(cli, ["--root", str(path), "lock", "r1-v2", "--floor", "assumed", "-o",
                                        str(path / "locks" / "r1-v2.lock.toml")])
    assert relocked.exit_code == 0, relocked.output
    commit_all(path, f"rename the serving and its {entry}; re-lock it at the assumed floor")
    checked = CliRunner().invoke(cli, ["--root", str(path), "check"])
    assert checked.exit_code == 0, checked.output  # a consistent rename: check passes

    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert f"passprice: refused: it removes lock {SERVING}, dropping floors serving {SERVING} is priced under" in err
    assert (f"serving {SERVING} is r1-v2 on HEAD (the same serving, renamed); lock it there at the floors it "
            "had") in out
    assert "    dropped   floor on memory.bandwidth: published → assumed (the strictest floor left)" in out


def test_a_serving_moved_to_another_card_the_change_adds_is_still_judged(tmp_path: Path) -> None:
    """The card replaced rather than renamed (its file gone, an edited copy added under another name): the serving
    naming the new card is the same checkpoint on the same card, changed, and its floors are still judged."""
    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    card = path / "facts" / "cards" / f"{CARD}.toml"
    text = card.read_text(encoding="utf-8")
    (path / "facts" / "cards" / "h200-v2.toml").write_text(text.replace('[card]\n', '[card]\n# edited\n', 1),
                                                            encoding="utf-8")
    card.unlink()
    _rename_everywhere(path, CARD, "h200-v2")
    git(path, "mv", SERVING_FILE, "registry/servings/r1-v2.toml")
    git(path, "rm", "-q", f"locks/{SERVING}.lock.toml")
    (path / "locks").mkdir(exist_ok=True)
    relocked = CliRunner().invoke(cli, ["--root", str(path), "lock", "r1-v2", "--floor", "assumed", "-o",
                                        str(path / "locks" / "r1-v2.lock.toml")])
    assert relocked.exit_code == 0, relocked.output
    commit_all(path, "replace the card; rename the serving; re-lock it at the assumed floor")

    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert f"passprice: refused: it removes lock {SERVING}, dropping floors serving {SERVING} is priced under" in err
    assert (f"serving {SERVING} is r1-v2 on HEAD (renamed and changed: the same checkpoint on the same card)"
            in out)
