"""A one-fact ``diff`` re-fits the serving stacks of its private copy every run (``diff._refit_stack``): the stack file
it writes is kept in the cache folder under every input of the fit (``stackfits.fit_inputs``), so a review run again
writes the kept bytes with no run priced, no fit solved and NumPy not imported; any input edited (a comment in a
measurement file included) is a miss and is re-fitted, and a bypassed cache re-fits. Within ``calibrate.fits_kept``
(the re-fit's own calibrate) a fit another process solved is given again, the same doubles (issue 16, speed50)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import copy_root
from passprice import calibrate, stackfits
from passprice.registry import find_root
from passprice.review import impacts
from passprice.stacks import load_stack, stack_path

STACK = "lmdeploy-turbomind-2312"  # 17 runs, all of one card: its fits are few and cheap


def _no_refit(*_: object, **__: object) -> None:
    raise AssertionError("re-fitted")


def test_a_copys_refit_is_kept_and_written_again_unfitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the working folder is in the key: the same for every call below
    # The shipped registry's stacks as shipped are not re-fitted at all (stackfits.shipped_stack,
    # tests/test_reviewfast159.py): the cache folder's part is what this test reads, so the shipped table is left out.
    monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
    root = find_root(copy_root(tmp_path))
    path = stack_path(root, STACK)
    before = path.read_bytes()
    impacts._refit_stack(root, load_stack(root, STACK))
    refitted = path.read_bytes()
    # Solved once, kept: within fits_kept the same fits come from the cache folder, the same doubles, none solved.
    calibrate._FITS.clear()
    monkeypatch.setattr(calibrate, "nnls", _no_refit)
    with calibrate.fits_kept():
        again = calibrate.calibrate(root, STACK)
    path.write_bytes(before)
    write = calibrate.write_calibration
    calibrate.write_calibration(root, again, keep_layout=False)
    assert path.read_bytes() == refitted
    # The whole re-fit kept: the file written again from the cache folder, nothing priced or fitted.
    path.write_bytes(before)
    monkeypatch.setattr(calibrate, "calibrate", _no_refit)
    monkeypatch.setattr(calibrate, "write_calibration", _no_refit)
    impacts._refit_stack(root, load_stack(root, STACK))
    assert path.read_bytes() == refitted
    # Any input edited (here a comment in a measurement file: the fit inputs are the files' bytes) is a miss.
    path.write_bytes(before)
    runs = root.measurements / "lmdeploy-turbomind-a100.toml"
    runs.write_text(runs.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="re-fitted"):
        impacts._refit_stack(root, load_stack(root, STACK))
    # A bypassed cache re-fits too, and the fit outside fits_kept is solved in the process as ever.
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    runs.write_text(runs.read_text(encoding="utf-8").removesuffix("# edited\n"), encoding="utf-8")
    with pytest.raises(AssertionError, match="re-fitted"):
        impacts._refit_stack(root, load_stack(root, STACK))
    monkeypatch.delenv("PASSPRICE_NO_CACHE")
    monkeypatch.setattr(calibrate, "write_calibration", write)
    calibrate._FITS.clear()
    models = calibrate.model_runs(root, load_stack(root, STACK), [
        r for r in calibrate.load_runs(root) if r.stack == STACK])
    with pytest.raises(AssertionError, match="re-fitted"):
        calibrate.fit(models)


def test_edit_imports_tomlkit_only_to_keep_a_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """``passprice.edit`` (a review's private copy recomputes a card through it, written without tomlkit) imports no
    tomlkit until an edit keeps a layout; ``edit.tomlkit`` is the module, imported when asked for."""
    import importlib
    import sys

    import tomlkit

    monkeypatch.delitem(sys.modules, "passprice.edit", raising=False)
    monkeypatch.setitem(sys.modules, "tomlkit", None)  # importing it now raises ImportError
    fresh = importlib.import_module("passprice.edit")
    before = '"name" = "x"\n'
    assert fresh._recomputed_text(before, [], keep_layout=False) == before
    monkeypatch.setitem(sys.modules, "tomlkit", tomlkit)
    assert fresh.tomlkit is tomlkit
    with pytest.raises(AttributeError):
        fresh.no_such_name  # noqa: B018
