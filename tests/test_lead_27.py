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


def test_a_hand_forged_stack_builds_pin_fails_the_review(tmp_path: Path) -> None:
    """left27 made a lock under a stack pin the stack's ``runtime`` and ``builds`` texts, but the review's forged
    label pins (``pinforgery.label_pins``) did not hold them: a lock rewritten by hand to pin builds no registry side
    states, its digests recomputed, passed the review. Now it fails as a forged card title or origin does."""
    import shutil

    import attrs

    from passprice import schema
    from passprice.locks import lock_text, read_lock

    base = copy_root(tmp_path / "base")
    if not (base / "schema").exists():
        shutil.copytree(schema.schema_dir(), base / "schema")
    made = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--name", "r1-stack",
                  root=base)  # fmt: skip
    assert made.exit_code == 0, made.output
    head = tmp_path / "head"
    shutil.copytree(base, head)
    path = head / "locks" / "r1-stack.lock.toml"
    lock = read_lock(path, schema.schema_dir())
    assert lock.stack is not None and lock.stack.builds == "b2824 (4426e298) to b2843 (e8496488)"
    path.write_text(lock_text(attrs.evolve(lock, stack=attrs.evolve(lock.stack, builds="b2824 to b9999"))),
                    encoding="utf-8")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    assert ("  locks/r1-stack.lock.toml: stack.llamacpp-cuda-2405.builds: pins 'b2824 to b9999', which neither side "
            "of the change holds and BASE's lock did not pin: a lock's labels are pinned by passprice lock from a "
            "registry (check --frozen fails this one); re-lock it: passprice lock --update -o "
            "locks/r1-stack.lock.toml") in result.stdout.splitlines()
