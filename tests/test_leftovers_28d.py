"""Leftovers 28d (issue 13): `calibrate` named a measurement file that does not read ROOT/registry/… where `validate`
and the listings name it registry/…; `lock --json`'s "path" was absolute where its text line is relative to the
working folder; the listings' JSON (`cards`, `servings`, `checkpoints`, `sources`, `compare`) did not say a file was
left out (only stderr named it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import copy_root, invoke

MEASUREMENTS = "registry/measurements/llamacpp-points.toml"
CARD = "facts/cards/h200_sxm_141gb.toml"
SERVING = "registry/servings/gemma3-270m-h100.toml"
CHECKPOINT = "registry/checkpoints/codellama-7b-f16.toml"


def _bogus(root: Path, rel: str) -> None:
    """Put a key no schema allows at the top of ``rel``: the file does not read."""
    path = root / rel
    path.write_text("bogus = 1\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


# --- 1. calibrate names a bad measurement file as validate does ------------------------------------------------------


def test_calibrate_names_a_bad_measurement_file_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "passprice: error: ROOT/registry/measurements/llamacpp-points.toml: …" under --root ROOT, exit 2.
    root = copy_root(tmp_path)
    _bogus(root, MEASUREMENTS)
    line = f"passprice: error: {MEASUREMENTS}: (top level): unknown key 'bogus'; the keys here are run, source"
    for args in (("--dry-run",), ("--dry-run", "--json"), ()):
        result = invoke("calibrate", "--stack", "llamacpp-cuda-2405", *args, root=root)
        assert result.exit_code == 2, result.output
        # with --json, the one error document (session 30; nothing on stdout before)
        wanted = json.dumps({"error": {"status": 2, "problems": [line.removeprefix("passprice: error: ")]}},
                            indent=2) + "\n" if "--json" in args else ""
        assert result.stdout == wanted
        assert result.stderr.splitlines() == [line]
    validated = invoke("validate", root=root)  # the one rule: validate's line is the same
    assert validated.exit_code == 2 and validated.stderr.splitlines() == [line]
    assert "bogus" not in (root / "facts/stacks/llamacpp-cuda-2405.toml").read_text(encoding="utf-8")


# --- 2. lock --json names the lock as its text line does --------------------------------------------------------------


def test_lock_json_path_is_the_text_lines_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: {"path": "/…/root/locks/g.lock.toml"} where the text said "-> locks/g.lock.toml".
    root = copy_root(tmp_path)
    monkeypatch.chdir(root)
    made = invoke("lock", "gemma3-270m-h100", "--name", "g", "--json", root=root)
    assert made.exit_code == 0, made.output
    out = json.loads(made.stdout)
    assert (out["lock"], out["path"]) == ("g", "locks/g.lock.toml")
    assert out["absolute_path"] == str((root / "locks" / "g.lock.toml").resolve())
    text = invoke("lock", "--update", "-o", "locks/g.lock.toml", root=root)
    assert text.exit_code == 0 and text.stdout.splitlines()[0].endswith(" -> locks/g.lock.toml")
    monkeypatch.chdir(root / "locks")  # from the locks folder: the file's name alone, in both
    here = json.loads(invoke("lock", "gemma3-270m-h100", "--name", "h", "--json", root=root).stdout)
    assert (here["path"], here["absolute_path"]) == ("h.lock.toml", str((root / "locks" / "h.lock.toml").resolve()))
    # -o as typed
    typed = json.loads(invoke("lock", "--update", "-o", "h.lock.toml", "--json", root=root).stdout)
    assert typed["path"] == "h.lock.toml"


def test_a_lock_refused_by_its_floors_names_its_file_as_the_text_does(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the LockFloor refusal's --json "path" was "/…/root/locks/strict.lock.toml" where its line said
    # "locks/strict.lock.toml not written" (and "../locks/strict.lock.toml" from the locks folder).
    root = copy_root(tmp_path)
    args = ("lock", "gemma3-270m-h100", "--name", "strict", "--require", "scale=published")
    line = ("passprice: refused: LockFloor: lock strict refuses this price: scale is estimated, below the floor "
            "published (the price's weakest provenance is estimated, carried by scale); {} not written (for these "
            "floors to accept it, strengthen scale to published or above with a citation that backs it, e.g. "
            "passprice fact set h100_sxm5_80gb scale --provenance published --source ID --locator LOCATOR … in a "
            "registry of your own; or floor it at its own provenance on purpose: --require scale=estimated)")
    absolute = str((root / "locks" / "strict.lock.toml").resolve())
    for folder, shown in ((root, "locks/strict.lock.toml"), (root / "locks", "strict.lock.toml")):
        monkeypatch.chdir(folder)
        text = invoke(*args, root=root)
        assert text.exit_code == 1 and text.stdout == ""
        assert text.stderr.splitlines() == [line.format(shown)]
        refused = invoke(*args, "--json", root=root)
        assert refused.exit_code == 1
        out = json.loads(refused.stdout)
        assert (out["refusal"], out["path"], out["absolute_path"], out["written"]) == ("LockFloor", shown, absolute,
                                                                                        False)
    assert not (root / "locks" / "strict.lock.toml").exists()


# --- 3. a listing's JSON says which files it left out -----------------------------------------------------------------


def _listed(root: Path, *args: str) -> tuple[dict[str, Any], list[str]]:
    result = invoke(*args, "--json", root=root)
    assert result.exit_code == 2, result.output
    return json.loads(result.stdout), result.stderr.splitlines()


def test_each_listings_json_names_the_files_it_left_out(tmp_path: Path) -> None:
    # Before: {"cards": [16 cards]} and the same for servings, checkpoints, sources, compare: a program reading stdout
    # could not tell the list was partial (the exit status 2 and stderr alone said so).
    root = copy_root(tmp_path)
    for rel in (CARD, SERVING, CHECKPOINT):
        _bogus(root, rel)
    card = (f"{CARD}: (top level): unknown key 'bogus'; the keys here are "
            "array, card, host, memory, on_chip, scale, streams, tensor, vector")
    serving = (f"{SERVING}: (top level): unknown key 'bogus'; the keys here "
               "are activation_words, attention, batch, card, checkpoint, contexts, description, draft, flush, "
               "host_memory and 10 more")
    cards, err = _listed(root, "cards")
    assert cards["problems"] == [card] and err == [f"passprice: error: {card}"]
    assert len(cards["cards"]) == 16 and "h200_sxm_141gb" not in {c["name"] for c in cards["cards"]}
    servings, err = _listed(root, "servings")
    assert servings["problems"] == [serving] and err == [f"passprice: error: {serving}"]
    assert len(servings["servings"]) == 16
    checkpoints, err = _listed(root, "checkpoints")
    (line,) = checkpoints["problems"]
    assert line.startswith(f"{CHECKPOINT}: ") and err == [f"passprice: error: {line}"]
    assert "codellama-7b-f16" not in {c["name"] for c in checkpoints["checkpoints"]}
    sources, err = _listed(root, "sources")
    assert sources["problems"] == [card] and err == [f"passprice: error: {card}"]
    compared, err = _listed(root, "compare", "r1-qwen7b-h200")
    assert compared["problems"] == [card] and err == [f"passprice: error: {card}"]
    assert len(compared["cards"]) == 16


def test_a_whole_listing_says_no_problems(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    for args in (("cards",), ("servings",), ("checkpoints",), ("sources",), ("compare", "gemma3-270m-h100")):
        result = invoke(*args, "--json", root=root)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["problems"] == []


def test_calibrate_names_the_card_file_of_a_run_that_does_not_price_relative_to_the_registry(tmp_path: Path) -> None:
    # Before: "run xd3.a40.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): ROOT/facts/cards/a40.toml: …", exit 2.
    root = copy_root(tmp_path)
    _bogus(root, "facts/cards/a40.toml")
    line = ("passprice: error: run xd3.a40.8b-q4km.tg512 (xiongjiedai-llama3-llamabench): facts/cards/a40.toml: (top "
            "level): unknown key 'bogus'; the keys here are array, card, "
            "host, memory, on_chip, scale, streams, tensor, vector")
    result = invoke("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run", root=root)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [line]  # the first run that does not price: a fit is all its runs or none
    validated = invoke("validate", root=root)  # validate shows the rest and names each of the a40's 12 runs so
    assert validated.exit_code == 2 and validated.stderr.splitlines()[0] == line
    assert len(validated.stderr.splitlines()) == 12
