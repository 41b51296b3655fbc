"""Leftovers of issue 13 found in session 35 (task left40), each with its reproducer built here and the line
passprice now gives: a registry folder that may be listed but not searched (mode 644) is one line naming the folder
(:data:`passprice.files.UNSEARCHABLE`), and every command names that folder alike.

1. Under an absolute ``--root /abs/REG``, ``servings`` and ``validate`` said ``facts/cards`` (relative to the
   registry, as :func:`passprice.check.relative_lines` names a file that does not read) where ``cards``, ``price``,
   ``kv`` and ``check`` said ``/abs/REG/facts/cards``: the line's leading file is named as the user gave the root
   (:func:`passprice.registry.as_given`), as every error line's leading file is (docs/DESIGN.md, left31).
2. Outside any registry (the built-in one), ``price`` and ``validate`` named the package's absolute path
   (``files.folder_refusal`` knows no root) where ``cards``, ``kv`` and ``check`` said ``the built-in registry's
   facts/cards`` (:meth:`passprice.registry.Root.folder_named`, left39).

Unsearchable is mocked as tests/test_left38.py does (root searches every folder).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO
from passprice.cli import cli
from test_left38 import _unsearchable

COMMANDS = [("servings",), ("cards",), ("kv", "qwen3-30b-a3b-q4_0"), ("price", "r1-qwen7b-h200"),
            ("validate", "--stack", "llamacpp-cuda-2405")]
ENDS = ": cannot read its files: the folder may not be searched by this user\n"


@pytest.mark.parametrize("args", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_1_under_an_absolute_root_every_command_names_the_folder_under_it(
        monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    """Before: ``servings`` and ``validate`` ``facts/cards: cannot read its files: …``; the others
    ``{REPO}/facts/cards: …``. Now all the latter, exit 2, one line."""
    _unsearchable(monkeypatch, REPO / "facts" / "cards")
    result = CliRunner().invoke(cli, ["--no-cache", "--root", str(REPO), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"passprice: error: {REPO}/facts/cards{ENDS}", result.stderr


@pytest.mark.parametrize("args", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_2_outside_any_registry_every_command_names_the_built_in_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    """Before: ``price`` and ``validate`` said ``/…/passprice/…/facts/cards: …`` (``servings`` ``facts/cards``); now
    each says ``the built-in registry's facts/cards``, exit 2, one line, no path of the package. The built-in registry
    is found as each command finds it (:func:`passprice.registry.embedded_root`: the checkout for an editable
    install, the package's ``_data`` otherwise)."""
    from passprice.registry import embedded_root

    monkeypatch.chdir(tmp_path)
    built_in = embedded_root().path
    _unsearchable(monkeypatch, built_in / "facts" / "cards")
    result = CliRunner().invoke(cli, ["--no-cache", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"passprice: error: the built-in registry's facts/cards{ENDS}", result.stderr
    assert str(built_in) not in result.stderr


def test_a_line_of_another_kind_is_left_as_it_is() -> None:
    """:func:`passprice.check.relative_lines` still names a file that does not read relative to the registry, and
    the built-in registry's rewrite touches only a folder's line of that registry."""
    from passprice.check import relative_lines
    from passprice.registry import Root, as_given

    root = Root(REPO)
    folder_line = f"{REPO}/facts/cards{ENDS.strip()}"
    assert relative_lines(root, [f"{REPO}/facts/cards/x.toml: bad"]) == ["facts/cards/x.toml: bad"]
    assert relative_lines(root, [folder_line]) == [folder_line]
    built_in = Root(REPO, embedded=True)
    assert as_given([f"{REPO}/facts/cards/x.toml: not valid TOML", f"/elsewhere{ENDS.strip()}"], built_in) == [
        f"{REPO}/facts/cards/x.toml: not valid TOML", f"/elsewhere{ENDS.strip()}"]
    assert as_given([f"{REPO}/registry/servings{ENDS.strip()}"], built_in) == [
        f"the built-in registry's registry/servings{ENDS.strip()}"]


@pytest.mark.parametrize("args", [("servings", "--json"), ("validate", "--json")],
                         ids=["servings", "validate"])
def test_2_a_listings_json_problems_name_the_folder_as_its_stderr_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    """Before: ``"problems"`` held ``facts/cards: …`` (and, with item 2's rewrite alone, the package's absolute path)
    where stderr said ``the built-in registry's facts/cards: …``; ``cli.options._kept_problems`` writes each line as
    the group prints it."""
    import json

    from passprice.registry import embedded_root

    monkeypatch.chdir(tmp_path)
    _unsearchable(monkeypatch, embedded_root().path / "facts" / "cards")
    result = CliRunner().invoke(cli, ["--no-cache", *args])
    assert result.exit_code == 2, result.output
    line = f"the built-in registry's facts/cards{ENDS.strip()}"
    assert result.stderr == f"passprice: error: {line}\n"
    assert json.loads(result.stdout)["problems"] == [line]
