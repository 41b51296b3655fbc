"""Round 21 of hostile input (issue 13): the features landed since 7938655, attacked.

- (5) A pinned fact rewritten to a quantity whose double is the pinned one's (``141 GB`` → ``0.14100000000000001
  TB``: 141000000000.00001 B written, 1.41e11 B as a double) was shown as "rewritten, same quantity" and passed
  ``check --frozen`` (exit 0): the quantity written moved. Quantities are compared exactly now, as written. (The
  same trick on ``memory.bandwidth``, ``0.0048000000000000004 PB/s``, was caught by the derivations that read it.)
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import copy_root, invoke

R1 = "r1-qwen7b-h200"
CARD = "facts/cards/h200_sxm_141gb.toml"
WRITTEN = 'value = 141\nunit = "GB"'


def _rewrite(root: Path, value: str, unit: str) -> None:
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    assert text.count(WRITTEN) == 1
    card.write_text(text.replace(WRITTEN, f'value = {value}\nunit = "{unit}"'), encoding="utf-8")


def test_a_quantity_that_rounds_to_the_pinned_double_is_drift_not_a_rewrite(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rewrite(root, "0.14100000000000001", "TB")
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 1, result.output
    assert "    memory.capacity: 141 GB (published) → 0.14100000000000001 TB (published)" in (
        result.stdout.splitlines()
    )
    assert "rewritten, same quantity" not in result.stdout


def test_the_same_quantity_in_a_larger_unit_is_still_a_rewrite(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rewrite(root, "0.000141", "PB")
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 0, result.output
    assert "    memory.capacity: 141 GB → 0.000141 PB (rewritten, same quantity)" in result.stdout.splitlines()


# --- (1) a left temporary file of an odd name ------------------------------------------------------------------------


def test_a_left_temporary_file_named_with_a_newline_is_warned_of_in_one_line(tmp_path: Path) -> None:
    """``.a<newline>b.<12 hex>.tmp`` (mode 0600) in locks/: the warning named the target ``a``, a newline, then
    ``b through …`` on a second line, and its ``rm '…'`` spanned both; ESC in the name was written raw to the
    terminal. Now the target is escaped and the ``rm`` is bash's ``$'…'`` word naming the very file."""
    import os
    import subprocess

    root = copy_root(tmp_path)
    names = [b".a\nb.0123456789ab.tmp", b".x\x1b[31mRED.0123456789ab.tmp", b".\xff.0123456789ab.tmp"]
    for name in names:
        os.close(os.open(os.path.join(os.fsencode(root / "locks"), name), os.O_CREAT | os.O_WRONLY, 0o600))
    result = invoke("check", root=root)
    lines = [line for line in result.stdout.splitlines() if "temporary file" in line]
    assert len(lines) == 3, result.stdout
    assert not any(line.startswith("b through") for line in result.stdout.splitlines())
    assert "\x1b" not in result.output
    newline = next(line for line in lines if "locks/.a\\nb." in line)
    assert "passprice writes a\\nb through" in newline
    words = [line.rsplit("(rm ", 1)[1][:-1] for line in lines]
    assert f"$'{root}/locks/.a\\x0ab.0123456789ab.tmp'" in words
    assert f"$'{root}/locks/.x\\x1b[31mRED.0123456789ab.tmp'" in words
    assert f"$'{root}/locks/.\\xff.0123456789ab.tmp'" in words
    # Each rm word names the very file to bash.
    for word in words:
        shown = subprocess.run(["bash", "-c", f"test -f {word} && echo there"], capture_output=True, text=True)
        assert shown.stdout == "there\n", word
