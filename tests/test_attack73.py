"""Attack 73 (issue 13): hostile input against the whole command line. What escaped the bar is kept here, each
reproducer built in its test.

A measured run naming a card or checkpoint that is not registered: ``check`` said
``registry/measurements/FILE.toml: run.0.card: card 'nope': not found in facts/cards …``, but ``calibrate`` and
``validate`` said ``run ID (FILE): card 'nope': not found …``, naming neither the file nor the key
(:func:`passprice.measurements.run_inputs`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

STACK = "llamacpp-cuda-2405"
MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"
CARDS = ("a100_pcie_80gb, a100_sxm4_80gb, a40, b200, h100_pcie_80gb, h100_sxm5_80gb, h200_sxm_141gb, l40s, mi300x, "
         "rtx_3080, rtx_3090, rtx_4080, rtx_4090, rtx_6000_ada, rtx_a6000, sn40l, ws1_hypothetical")


def _first_line(*args: str, root: Path) -> str:
    """The first stderr line of ``passprice --root ROOT ARGS``, which must exit 2 (``validate`` still shows the runs
    it could price on stdout)."""
    result = invoke(*args, root=root)
    assert result.exit_code == 2, result.output
    return result.stderr.splitlines()[0]


def _first_run_names(root: Path, key: str, value: str) -> None:
    """The measurement file's first run (``run.0``, of stack llamacpp-cuda-2405) with ``key`` set to ``value``."""
    file = root / MEASURED
    text = file.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith(f"{key} = "))
    file.write_text(text.replace(line, f'{key} = "{value}"', 1), encoding="utf-8")


@pytest.mark.parametrize("command", [("calibrate", "--stack", STACK, "--dry-run"), ("validate", "--stack", STACK)])
def test_a_run_naming_no_registered_card_is_named_by_its_file_and_key(tmp_path: Path, command: tuple[str, ...]) -> None:
    # before: "passprice: error: run xd3.h100_pcie_80gb.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): card 'nope':
    # not found in facts/cards (registered: …)", exit 2: no file, no key
    root = copy_root(tmp_path)
    _first_run_names(root, "card", "nope")
    assert _first_line(*command, root=root) == (
        f"passprice: error: {MEASURED}: run.0.card: card 'nope': not found in facts/cards (registered: {CARDS}); a "
        "card not registered is a file of your own: copy the closest registered card's file to facts/cards/nope.toml "
        "and set its facts (README, 'A card of your own')")  # walk107


def test_a_run_naming_no_registered_checkpoint_is_named_by_its_file_and_key(tmp_path: Path) -> None:
    # before: "passprice: error: run xd3.h100_pcie_80gb.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): checkpoint
    # 'nope': not found in registry/checkpoints (registered: …)", exit 2
    root = copy_root(tmp_path)
    _first_run_names(root, "checkpoint", "nope")
    line = _first_line("validate", "--stack", STACK, root=root)
    assert line.startswith(
        f"passprice: error: {MEASURED}: run.0.checkpoint: checkpoint 'nope': not found in registry/checkpoints "
        "(registered: codellama-7b-f16, ")
    assert _first_line("calibrate", "--stack", STACK, "--dry-run", root=root) == line


def test_a_lock_that_would_not_read_back_is_not_written(tmp_path: Path) -> None:
    # A header file whose name holds U+202E (a right-to-left override), given as lock's --checkpoint. before: exit 0,
    # "locked x (price, locks no registered serving): … -> x.lock.toml", a lock whose checkpoint.name the lock
    # schema's one-line rule refuses: reproduce, price --lock and check then failed on it (a lock in locks/ stopped
    # every price of the registry).
    root = copy_root(tmp_path)
    header = root / "\u202eg.gguf.xz"
    shutil.copyfile(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz", header)
    out = tmp_path / "x.lock.toml"
    result = invoke("lock", "gemma3-270m-h100", "--checkpoint", str(header), "-o", str(out), root=root)
    assert result.exit_code == 2, result.output
    why = ("'\\u202eg.gguf.xz' holds a control character, a line separator, a bidi control or an invisible character "
           "(a newline, a tab, U+2028, U+202E, U+200B …): write it on one line (the lock would not read back: nothing "
           "written)")
    assert result.stderr.splitlines() == [f"passprice: error: {out}: checkpoint.name: {why}",
                                          f"passprice: error: {out}: serving.checkpoint: {why}"]
    assert not out.exists()
