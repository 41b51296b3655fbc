"""Round 30 of hostile input (#13): a partial clone whose promisor remote names a program (git's lazy fetch of a
missing object ran it), a blob git cannot find (a traceback, a history one version short), ...

Each test keeps the input that broke main's code, asserting the exit status and the output (or the error line).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import bad, invoke
from tests.test_hostile_29 import _git_registry, _program

# --- (1) git: a partial clone's lazy fetch ----------------------------------------------------------------------------


def test_a_partial_clones_missing_blob_runs_no_program_its_remote_names(tmp_path: Path) -> None:
    # Round 30: `extensions.partialClone = origin`, `remote.origin.url = ext::PROGRAM`, `protocol.ext.allow = always`
    # in the repository's config and a blob of BASE removed (a partial clone's, not fetched): `diff main HEAD` ran
    # PROGRAM (git's lazy fetch) and then ended in a traceback (`ls-tree -l` says the size is BAD); `fact show
    # --history` ran it twice and showed the older version as missing nothing (one version, "changed: new").
    from test_diff import commit_all, git

    path = _git_registry(tmp_path)
    card = path / "facts" / "cards" / "a40.toml"
    card.write_text(card.read_text(encoding="utf-8").replace("\nvalue = 46068\n", "\nvalue = 46000\n", 1),
                    encoding="utf-8")
    commit_all(path, "b")
    program, marker = _program(tmp_path)
    blob = git(path, "rev-parse", "main:facts/cards/a40.toml")
    base = git(path, "rev-parse", "main")[:12]
    (path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
                       ("remote.origin.url", f"ext::{program} fetch"), ("remote.origin.promisor", "true"),
                       ("protocol.ext.allow", "always"), ("protocol.allow", "always")):
        git(path, "config", key, value)
    missing = f"{base}:facts/cards/a40.toml: object {blob} is missing from the repository"
    assert bad("diff", "main", "HEAD", root=path) == [f"passprice: error: {missing}"]
    result = invoke("fact", "show", "a40", "memory.capacity", "--history", root=path)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "a40 memory.capacity (facts/cards/a40.toml): 2 versions"
    assert f"  does not read: {missing}" in lines
    assert not marker.exists(), marker.read_text(encoding="utf-8")
