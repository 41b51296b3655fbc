"""Slip round 29: a pull-request author changing a locked price (or the citation it rests on) past the review
(``passprice diff``), ``check`` and the pre-commit hook, each attempt a real git repository changed on a branch and
reviewed as CI reviews it; and three known leftovers:

- (L1) a commit that only removes a registry document a source record names outside the five record folders
  (``notes/…``, as the README's routing demo keeps one) ran no pre-commit hook (its ``files:`` pattern named the
  record folders and ``.gitattributes``), though ``check`` then fails: both hooks run on every commit now
  (``always_run``), a commit changing nothing ``check`` reads costing a memo replay.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.registry import find_root
from passprice.scaffold import plan, write
from test_diff import commit_all, git

# --- (L1) the pre-commit hook sees a commit removing a registry document outside the record folders -----------------

NOTES_SOURCE = """#:schema ../schema/source.schema.json
[source]
title = "My notes on Mixtral routing"
kind = "registry"
publisher = "me"
path = "notes/mixtral-routing.md"
read = "how the figures were read off it"
"""
MISSING = ("sources/my-notes.toml: source.path: notes/mixtral-routing.md is not a file of this registry: put the "
           "document there (source.path is read from the registry's top folder), or correct source.path")


def _hooked_registry(path: Path) -> dict[str, str]:
    """A registry ``passprice init`` writes at ``path`` holding the README's ``sources/my-notes.toml`` and the document
    it names (``notes/mixtral-routing.md``), committed, with its pre-commit hook installed; the environment a commit
    there runs the hook in (this interpreter's folder first on PATH: the ``passprice`` the ``language: system`` hook
    runs; pre-commit's cache inside the test's folder)."""
    write(plan(find_root(REPO)), path)
    (path / "sources" / "my-notes.toml").write_text(NOTES_SOURCE, encoding="utf-8")
    (path / "notes").mkdir()
    (path / "notes" / "mixtral-routing.md").write_text("# Mixtral routing\n", encoding="utf-8")
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PRE_COMMIT_HOME": str(path.parent / "pre-commit"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=path, env=env, check=True, capture_output=True)
    return env


def _commit(path: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    """``git commit -m MESSAGE`` of what is staged, the pre-commit hook running as it does for an author (what git
    and the hook print, together, on ``stdout``)."""
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=path, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


def test_a_commit_removing_only_a_notes_document_fails_the_hook(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    path = tmp_path / "registry"
    env = _hooked_registry(path)
    assert invoke("check", root=path).exit_code == 0
    # a commit of a file check does not read runs the hook too, and passes
    (path / "README.md").write_text("# my registry\n", encoding="utf-8")
    git(path, "add", "README.md")
    done = _commit(path, env, "readme")
    assert done.returncode == 0, done.stdout
    assert "passprice check" in done.stdout and "Passed" in done.stdout
    # the document alone removed: was "passprice check....(no files to check)Skipped" and the commit made
    head = git(path, "rev-parse", "HEAD")
    git(path, "rm", "-q", "notes/mixtral-routing.md")
    done = _commit(path, env, "drop my notes")
    assert done.returncode == 1, done.stdout
    assert "passprice check" in done.stdout and "Failed" in done.stdout
    assert f"passprice: error: {MISSING}" in done.stdout
    assert git(path, "rev-parse", "HEAD") == head  # no commit was made
    checked = invoke("check", root=path)
    assert checked.exit_code == 2 and checked.stderr == f"passprice: error: {MISSING}\n"
    # the old pattern skipped it: the hook as it was, with its files: pattern
    config = path / ".pre-commit-config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "always_run: true", r"files: ^(facts|locks|registry|schema|sources)/|(^|/)\.gitattributes$"), encoding="utf-8")
    git(path, "add", ".pre-commit-config.yaml")
    done = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files",
                           "notes/mixtral-routing.md"], cwd=path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "(no files to check)Skipped" in done.stdout, done.stdout


def test_a_document_moved_with_its_source_record_passes_the_hook(tmp_path: Path) -> None:
    """The honest change the hook must not block: the document moved and the record's source.path with it."""
    pytest.importorskip("pre_commit")
    path = tmp_path / "registry"
    env = _hooked_registry(path)
    git(path, "mv", "notes/mixtral-routing.md", "notes/routing.md")
    record = path / "sources" / "my-notes.toml"
    record.write_text(NOTES_SOURCE.replace("notes/mixtral-routing.md", "notes/routing.md"), encoding="utf-8")
    git(path, "add", "sources/my-notes.toml")
    done = _commit(path, env, "notes renamed")
    assert done.returncode == 0, done.stdout
