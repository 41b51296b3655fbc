"""Attack round 9 (issue 13): the code landed in the last hours — the name-not-found hints and ``fact recompute``.
Each test builds the input that broke the landed main and asserts what passprice now does with it."""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root


def test_a_mistyped_name_in_a_registry_of_many_long_names_scores_a_bounded_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hint for a name not found ran :func:`difflib.get_close_matches` over every registered name, whose full
    ratio is quadratic in a name's length: 2,000 servings named by 120 letters of ``a`` and ``b`` (240 KB of names)
    made one mistyped ``price NAME`` take 4.7 s. Only ``MAX_HINT_SCORED`` names (those with the best linear upper
    bound) are now scored in full; the hint still names the closest."""
    from passprice import registry

    rng = random.Random(1)
    names = ["".join(rng.choice("ab") for _ in range(120)) for _ in range(300)]
    root = copy_root(tmp_path)
    for name in names:
        (root / "registry" / "servings" / f"{name}.toml").write_text("x = 1\n", encoding="utf-8")
    typo = names[17][:60] + ("b" if names[17][60] == "a" else "a") + names[17][61:]
    full: list[int] = []
    ratio = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        full.append(1)
        return ratio(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    lines = bad("price", typo, root=root, says=f"serving '{typo}': not found in ")
    assert len(lines) == 1 and f"/registry/servings; did you mean {names[17]} or " in lines[0]
    assert 0 < len(full) <= registry.MAX_HINT_SCORED < len(names)
