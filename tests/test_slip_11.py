"""Slip round 11: the gaps last session's closing note listed, each reproduced and kept.

- (1) A lock file copied under another name (``cp locks/A.lock.toml locks/B.lock.toml``: the same pins, floors and
  price, and A's name inside) was accepted without a word by ``check`` and by the review that added it. ``check``
  warns of it now (not a failure: a duplicate lets no change past its floors), naming both files and the name the
  copy carries inside; the review names it under *Locks duplicating another* (⚠️, exit unchanged).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke

R1 = "r1-qwen7b-h200"

# --- (1) a lock file copied under another name ------------------------------------------------------------------------

COPY_LINE = (
    "locks/r1-copy.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: it locks serving r1-qwen7b-h200 (price) "
    "with the same pins, floors and price under another file name; locks/r1-copy.lock.toml is named "
    "'r1-qwen7b-h200' inside, not after its file; it guards nothing locks/r1-qwen7b-h200.lock.toml does not, and "
    "re-locking one leaves the other pinning the old facts: remove one"
)


def test_check_warns_of_a_lock_copied_under_another_name(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert "duplicates" not in invoke("check", root=root).stdout
    shutil.copyfile(root / "locks" / f"{R1}.lock.toml", root / "locks" / "r1-copy.lock.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output  # a warning: the copy lets nothing past its floors
    assert f"  warning: {COPY_LINE}" in result.stdout.splitlines()
    out = json.loads(invoke("check", "--json", root=root).stdout)
    assert out["warnings"].count(COPY_LINE) == 1
    # Another lock of the same serving (the best batch) is no duplicate; nor is the copy once re-locked elsewhere.
    assert sum("duplicates" in w for w in out["warnings"]) == 1


def test_a_review_adding_a_copied_lock_names_it(tmp_path: Path) -> None:
    from test_diff import commit_all, git, make_lock_file

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, path / folder)
    (path / "locks").mkdir()
    git(path, "init", "-q", "-b", "main")
    make_lock_file(path, R1, R1)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "locks" / "r1-copy.lock.toml")
    commit_all(path, "a copy of the lock")
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 0, result.output
    assert "1 duplicating another" in result.stdout.splitlines()[1]
    assert f"locks duplicating another\n  {COPY_LINE}\n" in result.stdout
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path).stdout
    assert markdown.startswith("⚠️ **passprice diff**")
    assert "#### Locks duplicating another" in markdown
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    assert out["duplicate_locks"] == [COPY_LINE] and out["exit_status"] == 0
    # A review that touches neither file says nothing of them (check still warns).
    assert json.loads(invoke("diff", "HEAD", "HEAD", "--json", root=path).stdout)["duplicate_locks"] == []

