"""The shipped stacks' table answers with the cache bypassed too (``passprice --no-cache check``): the shipped
registry's stacks as shipped are not fitted again, everything else is.

``src/passprice/shipped_stacks.json`` (``docs/make.py``'s ``shipped``) is a file of the package, not of the cache
folder: what it says of a stack ("its fit finds nothing, its re-fit writes its file as it is") is a function of the
bytes its key is the BLAKE2b of (:func:`passprice.stackfits._shipped_key`), checked on every use, under the pricing
code, NumPy and machine it names. ``--no-cache`` used to leave it out, and a ``--no-cache check`` of a checkout whose
pricing modules sit at the token cap spent about 0.5 s of its 1.9 s on the two shipped stacks' fits and NumPy's
import (issue 13's 2 s; docs/PERFORMANCE.md). Here: the table is what a fit afresh says; with the cache bypassed it
is honoured for the stacks as shipped and not for an edited input; a tampered, stale or unreadable table falls back
to fitting, with the same report and exit status byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import calibrate, pins, stackfits
from passprice.measurements import load_runs
from passprice.registry import find_root
from passprice.review import impacts
from passprice.stacks import load_stack, stack_path

STACKS = ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")
RTX4090 = "facts/cards/rtx_4090.toml"  # a card of llamacpp-cuda-2405's runs, none of lmdeploy-turbomind-2312's
RUNS = "registry/measurements/lmdeploy-turbomind-a100.toml"


def _table() -> dict[str, object]:
    return json.loads(stackfits.SHIPPED_STACKS.read_text(encoding="utf-8"))


def _same_solver() -> bool:
    """Whether this interpreter's NumPy and machine are the table's (else every stack misses and is fitted)."""
    here = stackfits._shipped_solver()
    table = _table()
    return here is not None and (here[1], here[2]) == (table["numpy"], table["machine"])


def _fitting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each stack :func:`calibrate.verify_stack` or :func:`calibrate.calibrate` fits from now on."""
    fitted: list[str] = []
    verify, fit = calibrate.verify_stack, calibrate.calibrate

    def verifying(root: object, stack: calibrate.Stack, runs: object = None) -> list[object]:
        fitted.append(f"verify {stack.name}")
        return verify(root, stack, runs)  # type: ignore[arg-type]

    def calibrating(root: object, name: str, runs: object = None) -> object:
        fitted.append(f"calibrate {name}")
        return fit(root, name, runs)  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "verify_stack", verifying)
    monkeypatch.setattr(calibrate, "calibrate", calibrating)
    return fitted


def _use_table(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Read the shipped table from ``path`` from now on (read afresh: nothing of the process's reading kept)."""
    monkeypatch.setattr(stackfits, "SHIPPED_STACKS", path)
    monkeypatch.setattr(stackfits, "_SHIPPED", [])


def test_the_table_is_what_a_fit_afresh_says(tmp_path: Path) -> None:
    """Each stack the table lists, fitted afresh in a copy of the checkout's registry (no cache, no table): its fit
    finds nothing, its re-fit writes its file byte for byte, and its key is the table's; every other stack of the
    registry does find something or re-fits to other bytes (so the table leaves none out). The table names the
    running package's pricing-model digest (stale after a pricing module's edit until ``make.shipped`` runs)."""
    table = _table()
    assert table["pricing_model"] == pins.pricing_model_digest()
    copy = tmp_path / "copy"
    for name in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / name, copy / name)
    root = find_root(str(copy))
    runs = load_runs(root)
    listed: dict[str, str] = {}
    for name in root.scan(root.stacks):
        stack = load_stack(root, str(root.stacks / f"{name}.toml"))
        key = stackfits._shipped_key(root, stack, runs)
        found = calibrate.verify_stack(root, stack, runs)
        before = stack_path(root, name).read_bytes()
        calibrate.write_calibration(root, calibrate.calibrate(root, name), keep_layout=False)
        if not found and key is not None and stack_path(root, name).read_bytes() == before:
            listed[name] = key
        stack_path(root, name).write_bytes(before)
    assert listed == table["stacks"]
    assert sorted(listed) == list(STACKS)
    assert all(len(k) == 64 and int(k, 16) >= 0 for k in listed.values())


def test_no_cache_check_takes_the_table_for_the_stacks_as_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--no-cache check`` of a copy of the shipped registry: no fit re-run (where NumPy and the machine are the
    table's), and its report and exit status those of a check that fits both stacks (the table left out)."""
    monkeypatch.chdir(tmp_path)
    folder = copy_root(tmp_path)
    fitted = _fitting(monkeypatch)
    taken = invoke("--no-cache", "check", root=folder)
    assert fitted == ([] if _same_solver() else [f"verify {n}" for n in STACKS])
    fitted.clear()
    _use_table(monkeypatch, tmp_path / "no-table.json")  # not there: read as an empty table
    afresh = invoke("--no-cache", "check", root=folder)
    assert sorted(fitted) == [f"verify {n}" for n in STACKS]
    assert (taken.exit_code, taken.stdout, taken.stderr) == (afresh.exit_code, afresh.stdout, afresh.stderr)
    assert taken.exit_code == 0
    assert "checked 127 files (17 cards, 2 drafts, 2 routings, 2 stacks, 21 checkpoints, 9 measurements" in taken.stdout


def test_no_cache_check_fits_an_edited_input_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's edit under ``--no-cache``: the card one stack's runs price, then a measured run's figure (every
    stack: a run may move between stacks). The stacks whose inputs moved are fitted and their findings reported
    as a fit finds them; the other is still taken from the table."""
    monkeypatch.chdir(tmp_path)
    folder = copy_root(tmp_path)
    fitted = _fitting(monkeypatch)
    card = folder / RTX4090
    card.write_text(card.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    result = invoke("--no-cache", "check", root=folder)
    assert result.exit_code == 0, result.output
    assert fitted == (["verify llamacpp-cuda-2405"] if _same_solver() else [f"verify {n}" for n in STACKS])
    fitted.clear()
    runs = folder / RUNS
    runs.write_text(runs.read_text(encoding="utf-8").replace("tokens_per_s = 100.02\n", "tokens_per_s = 150.02\n", 1),
                    encoding="utf-8")
    result = invoke("--no-cache", "check", root=folder)
    assert sorted(fitted) == [f"verify {n}" for n in STACKS]
    assert result.exit_code == 1
    stale = list(dict.fromkeys(line for line in result.stdout.splitlines() if "lmdeploy-turbomind-2312.toml" in line))
    assert len(stale) == 1 and "stale" in stale[0] and "100.02" in stale[0] and "150.02" in stale[0], stale
    assert "1 problem" in result.stdout.splitlines()[0]


@pytest.mark.parametrize(
    "tamper",
    ["key", "pricing_model", "numpy", "truncated", "not_an_object", "stacks_a_list", "folder", "empty"],
)
def test_a_tampered_or_stale_table_falls_back_to_fitting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tamper: str
) -> None:
    """The table edited (one stack's key, one hex digit off), stale (another pricing model's, another NumPy's), or
    not a table at all (cut short, a list, ``stacks`` a list, a folder, empty): the stacks it no longer vouches for
    are fitted, and ``--no-cache check`` says byte for byte what it says with the table as shipped, exit 0, no
    traceback. Nothing of the table's is trusted beyond what its key and solver match."""
    monkeypatch.chdir(tmp_path)
    folder = copy_root(tmp_path)
    fitted = _fitting(monkeypatch)
    shipped = invoke("--no-cache", "check", root=folder)
    fitted.clear()
    table = _table()
    text = stackfits.SHIPPED_STACKS.read_text(encoding="utf-8")
    path = tmp_path / "shipped_stacks.json"
    keys = dict(table["stacks"])  # type: ignore[call-overload]
    if tamper == "key":
        key = keys["lmdeploy-turbomind-2312"]
        keys["lmdeploy-turbomind-2312"] = key[:-1] + ("0" if key[-1] != "0" else "1")
        path.write_text(json.dumps({**table, "stacks": keys}), encoding="utf-8")
    elif tamper == "pricing_model":
        path.write_text(json.dumps({**table, "pricing_model": "sha256:" + "0" * 64}), encoding="utf-8")
    elif tamper == "numpy":
        path.write_text(json.dumps({**table, "numpy": "numpy-1.0.0.dist-info"}), encoding="utf-8")
    elif tamper == "truncated":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif tamper == "not_an_object":
        path.write_text("[1, 2]\n", encoding="utf-8")
    elif tamper == "stacks_a_list":
        path.write_text(json.dumps({**table, "stacks": list(keys)}), encoding="utf-8")
    elif tamper == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"")
    _use_table(monkeypatch, path)
    result = invoke("--no-cache", "check", root=folder)
    want = ["verify lmdeploy-turbomind-2312"] if tamper == "key" and _same_solver() else [f"verify {n}" for n in STACKS]
    assert sorted(fitted) == want
    assert (result.exit_code, result.stdout, result.stderr) == (shipped.exit_code, shipped.stdout, shipped.stderr)
    assert result.exit_code == 0


def test_a_review_copy_keeps_a_shipped_stack_as_its_refit_without_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review's private copy with the cache bypassed: a shipped stack as shipped keeps its file (no re-fit, as
    with the cache on); with the table left out, each is re-fitted and writes the same bytes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    folder = copy_root(tmp_path)
    root = find_root(str(folder))
    before = {name: stack_path(root, name).read_bytes() for name in STACKS}
    fitted = _fitting(monkeypatch)
    for name in STACKS:
        impacts._refit_stack(root, load_stack(root, name))
    assert fitted == ([] if _same_solver() else [f"calibrate {n}" for n in STACKS])
    fitted.clear()
    _use_table(monkeypatch, tmp_path / "no-table.json")
    for name in STACKS:
        impacts._refit_stack(root, load_stack(root, name))
    assert fitted == [f"calibrate {n}" for n in STACKS]
    assert {name: stack_path(root, name).read_bytes() for name in STACKS} == before


def test_a_no_cache_check_of_the_shipped_registry_imports_no_numpy(tmp_path: Path) -> None:
    """The whole command as a user runs it, in a process of its own (the ``passprice`` this interpreter has
    installed, editable or not): ``--no-cache check`` of a copy of the shipped registry imports NumPy only where
    the table's NumPy or machine is not this one's (then both stacks are fitted)."""
    folder = copy_root(tmp_path)
    script = ("import sys\nsys.argv = ['passprice', '--no-cache', 'check']\nfrom passprice.entry import main\n"
              "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
              "print('numpy' in sys.modules, code, file=sys.stderr)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-c", script], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.stderr.splitlines()[-1] == f"{not _same_solver()} 0", done.stderr
    assert "checked 127 files" in done.stdout
    assert not (tmp_path / "cache").exists()  # nothing written to the cache folder
