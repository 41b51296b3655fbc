"""Leftovers of issue 13 found in session 34 (task left38), each with its reproducer built here and the one line
passprice now gives.

1. The running package's list of pricing models (``pricing_models.json``) a folder or damaged: ``price``,
   ``check`` and ``reproduce`` refused in one line, ``diff BASE HEAD`` exited 0 (a review it could not judge passed).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from cli_helpers import bad

from passprice.errors import InputError


@pytest.mark.parametrize("damage", ["folder", "damaged"])
def test_1_diff_refuses_a_list_of_pricing_models_that_does_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    """Before: exit 0 and the review's report; now the line ``price`` gives, naming the file, exit 2."""
    from passprice import modelhistory

    listed = tmp_path / "pricing_models.json"
    if damage == "folder":
        listed.mkdir()
        says = "pricing_models.json: is a folder, not a file: passprice's list of pricing models"
    else:
        listed.write_text("{", encoding="utf-8")
        says = "pricing_models.json: not passprice's list of pricing models: Expecting property name"
    monkeypatch.setattr(modelhistory, "_shipped", functools.cache(lambda: modelhistory.read_known(listed)))
    with pytest.raises(InputError, match=says.replace(".", r"\.")):
        modelhistory.known_count()  # what price, check and reproduce refuse by
    bad("diff", "HEAD", "HEAD", says=says)
