"""A lock name not found says where it is (session 13): ``reproduce NAME`` (and every command that looks a lock up by
name, through :func:`passprice.locks.lock_path`: ``audit``, ``price --lock``) said only "no such file" for a lock of
the facts passprice ships asked of another registry, while a card or serving said so
(:func:`passprice.registry.shipped_hint`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO, bad
from passprice.cli import cli
from passprice.registry import embedded_root

R1 = "r1-qwen7b-h200"


def _empty_registry(tmp_path: Path) -> Path:
    root = tmp_path / "mine"
    for folder in ("facts/cards", "registry/servings", "locks", "sources"):
        (root / folder).mkdir(parents=True)
    return root


@pytest.mark.parametrize("ref", [R1, f"{R1}.lock.toml"])
def test_a_shipped_lock_asked_of_another_registry_says_it_is_shipped(tmp_path: Path, ref: str) -> None:
    root = _empty_registry(tmp_path)
    # The package's own copy (a wheel's passprice/_data), or this checkout for an editable install.
    shipped = embedded_root().path / "locks" / f"{R1}.lock.toml"
    assert shipped.read_bytes() == (REPO / "locks" / f"{R1}.lock.toml").read_bytes()
    assert bad("reproduce", ref, root=root) == [
        f"passprice: error: lock {ref!r}: no such file, and not in {root / 'locks'}; {ref} is a lock of the facts "
        f"passprice ships, not of this registry ({root}): copy {shipped} into {root / 'locks'} to use it here "
        "(locks: none)"
    ]


def test_a_lock_name_in_no_registry_says_none_was_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no registry at or above: passprice looked in the facts it ships only
    result = CliRunner().invoke(cli, ["reproduce", "my-lock"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        "passprice: error: lock 'my-lock': no such file, and not in "
    ) and "; no registry was found at or above the working folder, so passprice looked in the facts it ships only: " \
        "for a lock of your own registry, run inside it or name it: passprice --root DIR COMMAND (locks: " \
        in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_lock_name_registered_nowhere_gets_no_hint(tmp_path: Path) -> None:
    root = _empty_registry(tmp_path)
    assert bad("reproduce", "nosuch", root=root) == [
        f"passprice: error: lock 'nosuch': no such file, and not in {root / 'locks'} (locks: none)"
    ]
