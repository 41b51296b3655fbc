"""The lead's checks of session 27's merges: what one helper's rule left open beside another's addition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import copy_root, invoke

STACK = "facts/stacks/llamacpp-cuda-2405.toml"


def _cut(text: str) -> str:
    """A long text as an error line shows it (:func:`passprice.schema.shown_value`: 99 characters, then ``…``)."""
    return f"'{text[:99]}…"


@pytest.mark.parametrize("key", ["runtime", "builds"])
def test_a_stack_runtime_or_builds_text_is_bounded(tmp_path: Path, key: str) -> None:
    """A stack's ``runtime`` and ``builds`` texts are pinned by a lock since session 27 (left27) and printed with the
    stack's facts; attack round 48 capped titles (200) and notes (4,000) but not these: 100,000 characters passed
    ``check``. They are capped at 1,000 characters, in the stack record and in a lock's ``[stack]`` table."""
    root = copy_root(tmp_path)
    path = root / STACK
    text = path.read_text(encoding="utf-8")
    new, count = re.subn(rf'(?m)^{key} = "[^\n]*"', f'{key} = "{"B" * 1_001}"', text, count=1)
    assert count == 1
    path.write_text(new, encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert (f"passprice: error: {STACK}: stack.{key}: {_cut('B' * 1_001)} is too long (1,001 characters; at most 1,000)"
            in checked.stderr.splitlines())
