"""Attack round 8 (issue 13): the one-line rule's bidi marks, the names a lock carries, a ``--plot`` that cannot be
written after ``-o``, and the code of this session's lead changes (locking, audit targets, history of merged
branches, synth's Mixtral, the checkout's pricing model). Each test builds the input that broke the landed main and
asserts what passprice now does with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import bad, copy_root

# --- the one-line rule: the bidi marks U+061C, U+200E, U+200F -----------------------------------------------------


@pytest.mark.parametrize(("mark", "shown"), [("\u061c", "\\u061c"), ("\u200e", "\\u200e"), ("\u200f", "\\u200f")])
def test_a_bidi_mark_in_a_locator_is_refused(tmp_path: Path, mark: str, shown: str) -> None:
    """The one-line rule refused the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) but not
    the marks (U+061C ARABIC LETTER MARK, U+200E LEFT-TO-RIGHT MARK, U+200F RIGHT-TO-LEFT MARK): ``fact set
    --locator`` with one wrote it (exit 0), and it reordered the text around it wherever it was shown."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    bad("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1", "--provenance",
        "estimated", "--source", "azure-ai-benchmarking-guide", "--locator", f"a{mark}b", root=root,
        says=f"streams.rewrite.locator: 'a{shown}b' holds a control character")
    assert card.read_bytes() == before
