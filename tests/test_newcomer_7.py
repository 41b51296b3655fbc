"""What session 7's README-only walkthrough tripped on, each kept as a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import REPO, bad, invoke


def test_a_lock_named_by_its_path_in_the_registry_is_found_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README names locks as locks/NAME.lock.toml; run from another folder that path named nothing, and the error
    # listed the very lock it said was missing.
    monkeypatch.chdir(tmp_path)
    result = invoke("reproduce", "locks/r1-qwen7b-h200.lock.toml", root=REPO)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml): price lock of serving")
    # Only a path below locks/ is read that way: another relative path is still a file of the working folder.
    bad("reproduce", "registry/servings/r1-qwen7b-h200.toml", root=REPO,
        says="lock 'registry/servings/r1-qwen7b-h200.toml': no such file")
