"""Attack round 47 (issue 13): names Windows reserves or cannot hold, a sweep of thousands of unknown names, a card
title holding "hypothetical" inside another word, a run dated year 0000. Each test builds its reproducer and asserts
the exit status and the exact line (before the round: exit 0 and nothing said, or 4.6 s and 5,000 lines)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke, retitled
from passprice.registry import MAX_NOT_FOUND


def _root(tmp_path: Path) -> Path:
    """A private copy of the checkout's facts, registry, locks, sources and schema."""
    root = tmp_path / "root"
    root.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def _card_copy(root: Path, name: str, title: str) -> None:
    """The RTX 4090's card copied to ``facts/cards/NAME`` under a title of its own."""
    text = (root / "facts" / "cards" / "rtx_4090.toml").read_text(encoding="utf-8")
    (root / "facts" / "cards" / name).write_text(retitled(text, title), encoding="utf-8")


# --- 1. COM0 and LPT0 name devices on Windows too ---------------------------------------------------------------

DEVICE = ("names a device on Windows, where no file of that name (with any suffix) can be checked out: rename the "
          "file (and what names it)")  # fmt: skip


@pytest.mark.parametrize(("path", "device"), [
    ("facts/cards/COM0.toml", "COM0"),
    ("facts/cards/lpt0.toml", "LPT0"),
    ("locks/COM0.lock.toml", "COM0"),
])  # fmt: skip
def test_com0_and_lpt0_are_device_names(tmp_path: Path, path: str, device: str) -> None:
    """Microsoft's list of reserved names holds ``COM0`` and ``LPT0`` beside ``COM1``-``COM9``: a card file
    ``COM0.toml`` (a valid copy of a card) and a lock ``locks/COM0.lock.toml`` passed ``check``, exit 0."""
    root = _root(tmp_path)
    if path.startswith("facts/"):
        _card_copy(root, Path(path).name, "Card zero")
    else:
        shutil.copy(root / "locks" / "gemma3-270m-h100.lock.toml", root / path)
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert f"passprice: error: {path}: {device} {DEVICE}" in result.stderr.splitlines()


def test_import_refuses_the_name_com0(tmp_path: Path) -> None:
    """``import H --name COM0`` wrote ``registry/checkpoints/COM0.toml``, exit 0."""
    root = _root(tmp_path)
    header = REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    assert bad("import", str(header), "--name", "COM0", root=root) == [
        "passprice: error: checkpoint name 'COM0': COM0 names a device on Windows, where no file of that name (with "
        "any suffix) can be checked out: give another name"]
    assert not (root / "registry" / "checkpoints" / "COM0.toml").exists()


# --- 2. a trailing dot or space, a character Windows forbids -------------------------------------------------------


@pytest.mark.parametrize(("name", "problem"), [
    ("rtx_4090.toml.", "the name 'rtx_4090.toml.' ends in a dot, which Windows drops"),
    ("rtx_4090.toml ", "the name 'rtx_4090.toml ' ends in a space, which Windows drops"),
    ("x.", "the name 'x.' ends in a dot, which Windows drops"),
])  # fmt: skip
def test_a_name_windows_drops_or_forbids_fails_check(tmp_path: Path, name: str, problem: str) -> None:
    """A copy of a card as ``facts/cards/rtx_4090.toml.`` (Windows drops the dot: the name is the real card's), ``x.``,
    ``a:b.toml`` (a valid card, listed as ``a:b``): ``check`` said "all holds", exit 0; Git for Windows refuses to
    check any of them out. The other cards are still listed."""
    root = _root(tmp_path)
    _card_copy(root, name, "Card odd")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (f"passprice: error: facts/cards/{name}: {problem}, so no Windows checkout can hold the file (Git for "
            "Windows refuses it): rename the file (and what names it)") in result.stderr.splitlines()
    listed = invoke("cards", root=root)
    assert listed.exit_code == 2 and "h200_sxm_141gb" in listed.stdout


@pytest.mark.parametrize("name", ["a:b.toml", "a?.toml"])
def test_a_name_holding_a_character_windows_forbids_fails_check(tmp_path: Path, name: str) -> None:
    """``a:b.toml`` (a valid card, listed as ``a:b``): ``check`` said "all holds", exit 0. The line is the one rule's
    of session 26 (``registry.windows_characters``), which attack round 47 found at the same time."""
    root = _root(tmp_path)
    _card_copy(root, name, "Card odd")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert (f"passprice: error: facts/cards/{name}: {name[1]!r} is a character no file name on Windows holds, where "
            "no file of that name can be checked out: rename the file (and what names it)"
            ) in result.stderr.splitlines()
    listed = invoke("cards", root=root)
    assert listed.exit_code == 2 and "h200_sxm_141gb" in listed.stdout


def test_a_folder_ending_in_a_dot_fails_check(tmp_path: Path) -> None:
    """A folder ``registry/measurements.`` beside the record folders: no Windows checkout holds it."""
    root = _root(tmp_path)
    (root / "registry" / "measurements.").mkdir()
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert ("passprice: error: registry/measurements.: the name 'measurements.' ends in a dot, which Windows drops, "
            "so no Windows checkout can hold the folder (Git for Windows refuses it): rename the folder (and what "
            "names it)") in result.stderr.splitlines()


# --- 3. a sweep of thousands of names not registered -----------------------------------------------------------------


def test_a_sweep_of_many_unknown_names_says_twenty_and_counts_the_rest() -> None:
    """``sweep s0 … s9999`` looked each name up where it might be instead (other kinds' folders, the facts passprice
    ships, the closest names): 7.3 s and 10,000 lines of 300 bytes (5,000 ``--cards``: 4.6 s). The first
    :data:`MAX_NOT_FOUND` are said, the rest counted."""
    names = [f"s{i}" for i in range(600)]  # 20 said; 580 servings and 2 cards (h200_sxm_141gb, nope) counted
    lines = bad("sweep", *names, "--cards", "h200_sxm_141gb,nope", "--positions", "512", "--batches", "1")
    assert MAX_NOT_FOUND == 20
    assert len(lines) == 21
    assert all(line.startswith(f"passprice: error: serving 's{i}': not found in ") for i, line in
               enumerate(lines[:20]))
    assert lines[20] == ("passprice: error: sweep: 582 more serving and card names not looked up after 20 not found: "
                         "correct these first")


def test_a_sweep_says_every_unknown_name_of_a_few() -> None:
    """Under the bound nothing changes: each wrong name, serving or card, is said (round 18)."""
    lines = bad("sweep", "nope1", "--cards", "h200_sxm_141gb,nope2", "--positions", "512", "--batches", "1")
    assert [re.sub(r": not found.*", "", line) for line in lines] == [
        "passprice: error: serving 'nope1'", "passprice: error: --cards: card 'nope2'"]



def test_compare_of_many_unknown_cards_says_twenty_and_counts_the_rest() -> None:
    """``compare r1-qwen7b-h200 --cards c0,…,c4999``: 12.7 s and 5,000 lines; now the first 20 and one count."""
    lines = bad("compare", "r1-qwen7b-h200", "--cards", ",".join(f"c{i}" for i in range(300)))
    assert len(lines) == 21
    assert all(line.startswith(f"passprice: error: --cards: card 'c{i}': not found in ") for i, line in
               enumerate(lines[:20]))
    assert lines[20] == ("passprice: error: --cards: 280 more card names not looked up after 20 not found: correct "
                         "these first")

# --- 4. a title holding "hypothetical" inside another word -------------------------------------------------------


@pytest.mark.parametrize(("title", "shown"), [
    ("Nonhypothetical 4090", "Nonhypothetical 4090, hypothetical"),
    ("RTX 4090 for hypotheticals", "RTX 4090 for hypotheticals, hypothetical"),
    ("RTX 4090 (Hypothetical)", "RTX 4090 (Hypothetical)"),
])  # fmt: skip
def test_a_title_saying_hypothetical_only_inside_a_word_is_marked(tmp_path: Path, title: str, shown: str) -> None:
    """A card marked ``hypothetical = true`` titled ``Nonhypothetical 4090`` was shown bare in the price's title line
    and the listing (``cards.shown_title`` looked for the letters, not the word): a made-up card read as a real one."""
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "rtx_4090.toml"
    text = retitled(card.read_text(encoding="utf-8"), title)
    text = text.replace("[card]\n", "[card]\nhypothetical = true\n", 1)
    card.write_text(text, encoding="utf-8")
    price = invoke("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "rtx_4090", "--batch", "4", "--limit",
                   "1024", root=root)  # fmt: skip
    assert price.exit_code == 0, price.output
    assert price.stdout.splitlines()[0] == f"gemma3-270m-q4_k_m on rtx_4090 ({shown})"


# --- 5. a run dated year 0000 ---------------------------------------------------------------------------------------


def test_a_run_dated_year_0000_is_bad_input(tmp_path: Path) -> None:
    """``date = "0000-01-01"`` was refused (no year 0 in the calendar) but ``date = "0000"`` read, exit 0."""
    root = copy_root(tmp_path)
    path = root / "registry" / "measurements" / "llamacpp-points.toml"
    text, count = re.subn(r'^date = "2023-12-22"$', 'date = "0000"', path.read_text(encoding="utf-8"), count=1,
                          flags=re.M)  # fmt: skip
    assert count == 1
    path.write_text(text, encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        # Since session 29 the key's pattern refuses a year before 1990 (left29): the one line is the pattern's.
        "passprice: error: registry/measurements/llamacpp-points.toml: run.0.date: '0000' is not when the run was "
        'made or published (YYYY, YYYY-MM or YYYY-MM-DD, in 1990 or later), or "unknown"']


def test_a_real_card_titled_as_a_hypothetical_cards_shown_title_fails_check(tmp_path: Path) -> None:
    """The H200 marked ``hypothetical = true`` (shown ``NVIDIA H200 SXM 141GB, hypothetical``) and the RTX 4090
    retitled ``NVIDIA H200 SXM 141GB, hypothetical``: ``cards`` showed two rows of one title, ``check`` "0 problems",
    exit 0 (titles were compared as written, not as shown)."""
    root = _root(tmp_path)
    cards = root / "facts" / "cards"
    h200 = cards / "h200_sxm_141gb.toml"
    variant = 'variant = "SXM5, up to 700 W, HBM3e"\n'
    h200.write_text(h200.read_text(encoding="utf-8").replace(variant, variant + "hypothetical = true\n", 1))
    _card_copy(root, "rtx_4090.toml", "NVIDIA H200 SXM 141GB, hypothetical")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    assert [line for line in result.stderr.splitlines() if "rtx_4090" in line] == [
        "passprice: error: facts/cards/rtx_4090.toml: card.name: 'NVIDIA H200 SXM 141GB, hypothetical' shows as "
        "h200_sxm_141gb.toml does ('NVIDIA H200 SXM 141GB, hypothetical', ', hypothetical' after a card marked so): a "
        "review's tables show a card by its title; give each card its own"]



# --- 6. a card title of any length ------------------------------------------------------------------------------


def test_a_card_title_past_200_characters_is_bad_input(tmp_path: Path) -> None:
    """A card titled by 200,000 characters (a 200 KB file, under the 256 KiB a card may hold): ``check`` passed it and
    ``cards`` printed 3.8 MB, each price's title line 200 KB. A title is a table's cell: at most 200 characters."""
    root = _root(tmp_path)
    _card_copy(root, "rtx_4090.toml", "R" * 201)
    assert bad("facts", "rtx_4090", root=root) == [
        f"passprice: error: {root / 'facts' / 'cards' / 'rtx_4090.toml'}: card.name: '{'R' * 99}… is too long (201 "
        "characters; at most 200)"]
    _card_copy(root, "rtx_4090.toml", "R" * 200)
    assert invoke("facts", "rtx_4090", root=root).exit_code == 0
