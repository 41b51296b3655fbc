"""Slip 40 (issue 13: two small gaps), each reproduced first.

1. A record file already named as a Windows device (``facts/cards/nul.toml``, ``registry/servings/con.toml``,
   ``locks/aux.lock.toml``: one a clone on Windows cannot check out) was read by ``check`` without a word, where the
   writers refuse such a name (attack round 45): ``check`` (and so the review) names each file, exit 2, and still
   shows the rest, as it does look-alike names.
2. ``price``/``best --lock L`` and ``reproduce L`` of a lock made under a stack: the stale-fit check re-fits today's
   ``facts/stacks/S.toml``, not the stack facts L pinned (their values and derivations). The warning and the
   reproduce line now say which file was checked and whether L pinned its stale facts as they are.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import copy_card, copy_root, invoke
from test_leftovers_s23 import _stack_locked
from test_leftovers_s24 import _run_moved
from test_newcomer_24 import STACK

WINDOWS = ("names a device on Windows, where no file of that name (with any suffix) can be checked out: rename the "
           "file (and what names it)")


def _devices(root: Path) -> None:
    """A card nul.toml, a serving con.toml and a lock aux.lock.toml, copies of registered ones (the card retitled)."""
    copy_card(root / "facts" / "cards" / "h200_sxm_141gb.toml", root / "facts" / "cards" / "nul.toml")
    shutil.copy(root / "registry" / "servings" / "r1-qwen7b-h200.toml", root / "registry" / "servings" / "con.toml")
    shutil.copy(root / "locks" / "r1-qwen7b-h200.lock.toml", root / "locks" / "aux.lock.toml")


def test_1_check_names_each_record_file_named_as_a_windows_device(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert invoke("check", root=root).exit_code == 0
    _devices(root)
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: facts/cards/nul.toml: NUL {WINDOWS}",
        f"passprice: error: registry/servings/con.toml: CON {WINDOWS}",
        f"passprice: error: locks/aux.lock.toml: AUX {WINDOWS}",
    ]
    # the good files still shown, and the device-named ones still read and judged
    assert "3 problems (3 on stderr)" in result.stdout.splitlines()[0]
    assert "lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, locks serving r1-qwen7b-h200): " in result.stdout
    assert "lock r1-qwen7b-h200 (locks/aux.lock.toml, locks serving r1-qwen7b-h200): " in result.stdout
    # any case, any suffix: Con.v2.toml is CON on Windows; an editor's lock file (.#nul.toml) is no record
    (root / "registry" / "servings" / "con.toml").rename(root / "registry" / "servings" / "Con.v2.toml")
    assert invoke("check", root=root).stderr.splitlines()[1] == (
        f"passprice: error: registry/servings/Con.v2.toml: CON {WINDOWS}")


def test_1_the_review_fails_a_change_adding_one(tmp_path: Path) -> None:
    base = copy_root(tmp_path / "base")
    head = copy_root(tmp_path / "head")
    _devices(head)
    result = invoke("diff", str(base), str(head), root=base)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: on HEAD: facts/cards/nul.toml: NUL {WINDOWS}",
        f"passprice: error: on HEAD: registry/servings/con.toml: CON {WINDOWS}",
        f"passprice: error: on HEAD: locks/aux.lock.toml: AUX {WINDOWS}",
    ]


def test_1_the_listings_and_a_whole_sweep_name_them_too(tmp_path: Path) -> None:
    """The listings said nothing of a card ``nul.toml`` or a serving ``con.toml`` (exit 0) where ``check`` now names
    them: ``cards``, ``servings`` and a sweep of every registered serving say the same line (``check.name_problems``),
    still show every file, and exit 2 (session 24, the lead)."""
    root = copy_root(tmp_path)
    _devices(root)
    cards = invoke("cards", root=root)
    assert cards.exit_code == 2
    # named relative to the registry, as check names it (session 25: by the absolute path under --root)
    assert cards.stderr == f"passprice: error: facts/cards/nul.toml: NUL {WINDOWS}\n"
    listed = cards.stdout.split()
    assert "nul" in listed and "h200_sxm_141gb" in listed
    servings = invoke("servings", root=root)
    assert servings.exit_code == 2
    assert servings.stderr == f"passprice: error: registry/servings/con.toml: CON {WINDOWS}\n"
    assert "con" in servings.stdout.split() and "r1-qwen7b-h200" in servings.stdout.split()
    names = [p.stem for p in sorted((root / "registry" / "servings").glob("*.toml"))]
    out = tmp_path / "grid.csv"
    sweep = invoke("sweep", *names, "--cards", "h200_sxm_141gb", "--positions", "512", "--batches", "1",
                   "-o", str(out), root=root)
    assert sweep.exit_code == 2, sweep.output
    assert f"passprice: error: registry/servings/con.toml: CON {WINDOWS}" in sweep.stderr.splitlines()
    rows = out.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + len(names)  # the grid still swept: a row a serving, con's among them
    assert any(row.startswith("h200_sxm_141gb,con,") for row in rows)


@pytest.fixture(scope="module")
def stack_locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with stack vllm-w24 calibrated on its five runs, serving w24-moe and its lock under the stack."""
    return _stack_locked(tmp_path_factory.mktemp("s40") / "made")


FITTED = ["overhead.pass", "overhead.layer", "share.read", "share.append", "share.array", "share.vector",
          "share.scale", "terms.serial"]
REFIT = f"re-fit with `passprice calibrate --stack {STACK}`"
CAUSE = "(a run, or a card, checkpoint or routing record they price, changed)"


def _fit_line(stderr: str) -> str:
    [line] = [x for x in stderr.splitlines() if "does not follow from today's registry" in x]
    return line


def test_2_a_lock_whose_pinned_stack_is_todays_file_says_the_stale_fit_is_its_own(
    stack_locked: Path, tmp_path: Path
) -> None:
    root = tmp_path / "r"
    shutil.copytree(stack_locked, root)
    _run_moved(root)  # the batch-64 run 6641.7 -> 6900 tokens/s, the stack not re-fitted: the file is as pinned
    for command in ("price", "best"):
        result = invoke(command, "--lock", "w24-moe", "--json", root=root)
        assert result.exit_code == 0, result.output
        assert _fit_line(result.stderr).startswith(
            f"passprice: warning: stack {STACK}'s fit (the facts of facts/stacks/{STACK}.toml today, which lock "
            f"w24-moe pinned as they are) does not follow from today's registry (8 fitted facts stale: "
            f"{', '.join(FITTED)}; their fit's runs moved: run w24.h200.b64: 6641.7 tokens/s when derived, 6900 "
            "tokens/s now (+3.889 %); ")
        fit = json.loads(result.stdout)["stack_fit"]
        assert (fit["file"], fit["lock"], fit["pinned_apart"], fit["facts"]) == (
            f"facts/stacks/{STACK}.toml", "w24-moe", [], FITTED)
    # without a lock the line is as before
    plain = invoke("price", "w24-moe", "--stack", STACK, "--no-lock", "--json", root=root)
    assert _fit_line(plain.stderr).startswith(f"passprice: warning: stack {STACK}'s fit does not follow from ")
    assert "file" not in json.loads(plain.stdout)["stack_fit"]
    text = invoke("reproduce", "w24-moe", root=root).stdout
    assert (f"    stale          {', '.join('stack.' + p for p in FITTED)} no longer the fit of stack {STACK}'s runs "
            f"{CAUSE}: today's expected column rests on them as facts/stacks/{STACK}.toml holds them today, and so "
            f"does the pinned column (the lock pinned them as they are); {REFIT}\n") in text
    data = json.loads(invoke("reproduce", "w24-moe", "--json", root=root).stdout)
    assert data["stale_stack_pinned_apart"] == []


def test_2_a_stack_file_edited_since_the_lock_is_named_as_the_one_checked(stack_locked: Path, tmp_path: Path) -> None:
    # share.read 0.8564 (fitted, and pinned by the lock) written 0.9 by hand: today's file no longer follows from its
    # runs; the lock's pinned 0.8564 is the re-fit's own figure, so its fit is not the stale one.
    root = tmp_path / "r"
    shutil.copytree(stack_locked, root)
    stack = root / "facts" / "stacks" / f"{STACK}.toml"
    text = stack.read_text()
    assert text.count("value = 0.8564\n") == 1
    stack.write_text(text.replace("value = 0.8564\n", "value = 0.9\n"))
    result = invoke("price", "--lock", "w24-moe", "--json", root=root)
    assert result.exit_code == 0, result.output
    assert _fit_line(result.stderr) == (
        f"passprice: warning: stack {STACK}'s fit (the facts of facts/stacks/{STACK}.toml today, not as lock w24-moe "
        "pinned 1 of them (share.read)) does not follow from today's registry (1 fitted fact mismatch: share.read; "
        "re-fitted from its 5 runs (as registered today, on today's cards, checkpoints and routing records) it is "
        "0.8564, not 0.9: more than the 0.1 % its derivation allows (a fact of a card, checkpoint or routing record "
        "its runs price changed, or …): this expected price rests on its facts as written; re-fit it with "
        f"`passprice calibrate --stack {STACK}`")
    assert json.loads(result.stdout)["stack_fit"]["pinned_apart"] == ["share.read"]
    text = invoke("reproduce", "w24-moe", root=root).stdout
    assert (f"    stale          stack.share.read no longer the fit of stack {STACK}'s runs {CAUSE}: today's expected "
            f"column rests on them as facts/stacks/{STACK}.toml holds them today, the lock pinned 1 of them otherwise "
            f"(stack.share.read), which this does not re-fit; {REFIT}\n") in text
    data = json.loads(invoke("reproduce", "w24-moe", "--json", root=root).stdout)
    assert (data["stale_stack"], data["stale_stack_pinned_apart"]) == (["stack.share.read"], ["stack.share.read"])
