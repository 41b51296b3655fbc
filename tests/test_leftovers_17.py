"""Session 17's leftovers closed by the lead: a serving naming a checkpoint whose entry file was renamed (walkthrough
21: the line said the name was "a checkpoint of the facts passprice ships" and to copy it in), and the review
comment's "Stack fits" list without a bound (attack round 34b)."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs

from cli_helpers import REPO, bad
from passprice.registry import Root
from passprice.review import diff, diff_markdown
from passprice.review.verdict import MAX_OTHER_FILES

ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"


def _registry(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def test_a_serving_naming_a_renamed_entry_file_says_which_file_still_names_it(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    checkpoints = root / "registry" / "checkpoints"
    (checkpoints / f"{ENTRY}.toml").rename(checkpoints / "r1-distill-7b.toml")
    [line] = bad("price", "r1-qwen7b-h200", root=root)
    assert line.startswith(
        f"passprice: error: registry/servings/r1-qwen7b-h200.toml: checkpoint: checkpoint '{ENTRY}': not found "
        f"in registry/checkpoints; registry/checkpoints/r1-distill-7b.toml names its entry '{ENTRY}' (its file "
        "renamed, "
        f"its [entry] name not): rename the file back to {ENTRY}.toml, or set its [entry] name to 'r1-distill-7b' "
        "and name the checkpoint so here (registered: "
    ), line
    assert "facts passprice ships" not in line


def test_a_name_no_entry_holds_keeps_the_other_hints(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    [line] = bad("price", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k", "--card", "h200_sxm_141gb", root=root)
    assert "names its entry" not in line
    assert "did you mean deepseek-r1-distill-qwen-7b-q4_k_m" in line, line


def test_the_comment_lists_at_most_twenty_stack_fits_outside_ones_first(tmp_path: Path) -> None:
    """25 stacks' span lines (built on a review of an unchanged registry): the comment shows 20, the two outside
    their span first, and counts the rest."""
    root = _registry(tmp_path)
    d = diff(Root(root), str(root), str(root))
    spans = {f"facts/stacks/s{i:02d}.toml": "111 → 112 runs; span 0.34 … 0.85 → 0.34 … 0.85" for i in range(25)}
    spans["facts/stacks/s23.toml"] = "111 → 112 runs; added run w21 at 0.2461 × its limit, outside BASE's span"
    spans["facts/stacks/s24.toml"] = "111 → 112 runs; added run w22 at 0.9 × its limit, outside BASE's span"
    text = diff_markdown(attrs.evolve(d, spans=spans))
    section = text.split("#### Stack fits", 1)[1].split("####", 1)[0]
    items = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(items) == MAX_OTHER_FILES + 1 == 21
    assert items[0].startswith("- ⚠️ `facts/stacks/s23.toml`") and items[1].startswith("- ⚠️ `facts/stacks/s24.toml`")
    assert items[-1] == "- and 5 more stacks: the text review (`passprice diff`) lists each"
