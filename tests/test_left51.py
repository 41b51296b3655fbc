"""Left51 (issue 13's "review fact changes", walkthrough 57's three findings): the review's change column names
every part of a fact that changed, in ``fact set``'s words (one function, :func:`passprice.factparts.change_said`);
``reproduce`` says a moved ``host_capacity_bytes`` no sequence is held against as a pinned input, not a term of the
price; a commit-by-commit review counts a lock already out of date on BASE one way."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import copy_root, invoke
from passprice.diff import diff, diff_markdown, diff_text
from passprice.registry import Root

#: Walkthrough 57's re-citation of the MI300X's memory bandwidth to ROCm's table, with a note of its own.
RECITE = ("fact", "set", "mi300x", "memory.bandwidth", "--value", "5.3", "--unit", "TB/s", "--provenance",
          "published", "--source", "amd-rocm-gpu-specs", "--locator", "MI300X row: memory bandwidth 5.3 TB/s",
          "--note", "Re-cited to ROCm's table.")


def _only_locks(root: Path, *names: str) -> None:
    """Keep only the lock files ``names`` of ``root`` (a review re-prices each lock: fewer cost less)."""
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name.removesuffix(".lock.toml") not in names:
            lock.unlink()


def test_the_review_names_the_citation_a_re_cited_fact_changed(tmp_path: Path) -> None:
    """Before: ``fact set`` said "(citation, note changed)" and the review's change column "(note changed)", the
    citation a reviewer scans for left out. Both now say "citation, note changed"."""
    base = copy_root(tmp_path / "base")
    _only_locks(base)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    done = invoke(*RECITE, root=head)
    assert done.exit_code == 0, done.output
    assert done.stdout == ("facts/cards/mi300x.toml: memory.bandwidth: 5.3 TB/s (published) -> 5.3 TB/s (published) "
                           "(citation, note changed)\n")
    d = diff(Root(head), str(base), str(head))  # one review, said three ways
    assert "  memory.bandwidth  5.3 TB/s → 5.3 TB/s  (citation, note changed)  published" in diff_text(d).splitlines()
    assert ("| `mi300x` | `memory.bandwidth` | 5.3 TB/s | 5.3 TB/s | citation, note changed | published |"
            in diff_markdown(d))
    (change,) = [c for f in d.to_json()["files"] for c in f.get("facts", [])]
    assert change["path"] == "memory.bandwidth" and change["fields"] == ["source", "locator", "note"]
