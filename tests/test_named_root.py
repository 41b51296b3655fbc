"""A name not found in a registry given by ``--root DIR`` is not said to have been looked for in the shipped facts
"for want of a registry at or above the working folder": with an editable install, DIR (the checkout) is the
shipped facts' folder, and the line told a user who had named the registry to name it (attack round 31)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.registry import embedded_root

NO_REGISTRY = "no registry was found at or above the working folder"


def test_a_named_root_is_not_said_to_be_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no registry at or above it
    shipped = embedded_root().path
    named = invoke("price", "nonexist", root=shipped)  # --root the shipped facts' own folder, by name
    assert named.exit_code == 2
    assert named.stderr.startswith("passprice: error: serving 'nonexist': not found in registry/servings")
    assert NO_REGISTRY not in named.stderr
    assert NO_REGISTRY not in invoke("price", "nonexist", root=REPO).stderr


def test_the_default_root_still_says_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)
    done = subprocess.run([sys.executable, "-m", "passprice", "price", "nonexist"], capture_output=True, text=True,
                          env={"PASSPRICE_NO_MEMO": "1", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 2
    assert f"; {NO_REGISTRY}, so passprice looked in the facts it ships only" in done.stderr


def test_listings_report_names_that_show_alike(tmp_path: Path) -> None:
    """``cards`` listed a card named é40 twice (one written as one code point, one as e + U+0301), exit 0, where
    ``check`` refuses the pair: each listing now shows its files and reports the pair on stderr, exit 2."""
    import shutil
    import unicodedata

    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    for form in ("NFC", "NFD"):
        shutil.copy(cards / "a40.toml", cards / f"{unicodedata.normalize(form, 'é40')}.toml")
    out = invoke("cards", root=root)
    assert out.exit_code == 2
    assert out.stdout.count("NVIDIA A40 ") == 3  # a40 and both twins still listed
    assert out.stderr == (  # the folder named as check names it (session 25: by its absolute path)
        "passprice: error: facts/cards: 'e\\u030140.toml', '\\xe940.toml': names that differ only by case or Unicode "
        "normalization (they show alike, and are one file on macOS and Windows): rename all but one\n"
    )
    servings = root / "registry" / "servings"
    shutil.copy(servings / "r1-qwen7b-h200.toml", servings / "R1-qwen7b-h200.toml")
    listed = invoke("servings", root=root)
    assert listed.exit_code == 2 and "'R1-qwen7b-h200.toml', 'r1-qwen7b-h200.toml': names that differ" in listed.stderr
