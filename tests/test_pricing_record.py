"""The pricing model's digest recorded when the package is built (``passprice.pins.record``, written by
``hatch_build.py``): a shortcut checked against the module files' bytes, never a way for an edited checkout to be
reported as priced by the same model."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from cli_helpers import REPO
from passprice import pins


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the running package's modules, the record made of it installed as the running package's own, and an
    empty cache folder (so a digest comes from the record or from the trees, never from an earlier run)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    folder = tmp_path / "passprice"
    shutil.copytree(pins.PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json", "_data"))
    made = tmp_path / "pricing_model.json"
    made.write_text(json.dumps(pins.record(folder)), encoding="utf-8")
    monkeypatch.setattr(pins, "RECORD", made)
    return folder


def _no_walk(*_: object, **__: object) -> str:
    raise AssertionError("the trees were parsed")


def test_a_record_of_the_same_bytes_gives_the_digest_without_parsing(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = json.loads(pins.RECORD.read_text(encoding="utf-8"))
    assert recorded["digest"] == pins._compute(str(package))
    # the walk's modules: both roots, what they import (serving, decode …), a name with no file (`from passprice
    # import __version__`), and none of the modules left out of the model
    assert {"locks", "reproduce", "serving", "decode", "pins"} <= recorded["modules"].keys()
    assert recorded["modules"]["__version__"] is None
    assert not pins.NOT_PRICING & recorded["modules"].keys()
    monkeypatch.setattr(pins, "_compute", _no_walk)
    assert pins.pricing_model_digest(package) == recorded["digest"]


def test_an_edit_to_a_module_of_the_model_changes_the_digest_with_the_record_present(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A formula's constant edited in place, same size and modification time, with the record of the unedited
    package still installed: the digest is the edited trees', not the record's."""
    first = json.loads(pins.RECORD.read_text(encoding="utf-8"))["digest"]
    module = package / "serving.py"
    text = module.read_text(encoding="utf-8")
    stat = module.stat()
    old = "SOFTMAX_MACS_PER_SCORE = 7.5"
    assert old in text
    module.write_text(text.replace(old, "SOFTMAX_MACS_PER_SCORE = 8.5"), encoding="utf-8")
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert pins._recorded(str(package)) is None
    edited = pins.pricing_model_digest(package)
    assert edited != first and edited == pins._compute(str(package))
    # undone: the record answers again
    module.write_text(text, encoding="utf-8")
    monkeypatch.setattr(pins, "_compute", _no_walk)
    assert pins.pricing_model_digest(package) == first


def test_a_module_added_under_a_name_the_model_imports_misses_the_record(package: Path) -> None:
    # `from passprice import __version__` names a module the walk would read were it there: a file of that name
    # joins the model, so the record (which says there is none) no longer answers.
    (package / "__version__.py").write_text("SCALE = 2\n", encoding="utf-8")
    assert pins._recorded(str(package)) is None
    assert pins.pricing_model_digest(package) == pins._compute(str(package))


def test_an_edit_outside_the_model_keeps_the_record(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the command line (cli/app.py) is no module of the model: its bytes are not in the record, and the record still
    # answers
    first = json.loads(pins.RECORD.read_text(encoding="utf-8"))["digest"]
    cli = package / "cli" / "app.py"
    cli.write_text(cli.read_text(encoding="utf-8") + "\nEXTRA = 1\n", encoding="utf-8")
    monkeypatch.setattr(pins, "_compute", _no_walk)
    assert pins.pricing_model_digest(package) == first


@pytest.mark.parametrize(
    "change",
    [
        {"algorithm": "0" * 64},  # made by another pins.py: another way of taking the digest
        {"python": "cpython-2.7"},  # another interpreter parsed the trees
        {"format": 2},
        {"digest": 7},
        {"modules": {}},
        {"modules": {"../cli": None, "locks": None, "reproduce": None}},
    ],
)
def test_a_record_of_another_making_or_damaged_is_ignored(package: Path, change: dict[str, object]) -> None:
    kept = json.loads(pins.RECORD.read_text(encoding="utf-8"))
    pins.RECORD.write_text(json.dumps({**kept, **change}), encoding="utf-8")
    assert pins._recorded(str(package)) is None
    assert pins.pricing_model_digest(package) == kept["digest"]  # computed from the trees


def test_a_record_that_is_no_json_or_no_regular_file_is_ignored(package: Path) -> None:
    pins.RECORD.write_bytes(b"\xff{not json")
    assert pins._recorded(str(package)) is None
    pins.RECORD.unlink()
    os.mkfifo(pins.RECORD)  # a read would block: never read
    assert pins._recorded(str(package)) is None


def test_the_build_hook_records_what_pins_computes() -> None:
    """``hatch_build.pricing_model_record`` (a child interpreter that imports ``pins`` from ``src`` alone, as the
    build backend's environment, without passprice's dependencies, can) writes this checkout's record."""
    sys.path.insert(0, str(REPO))
    try:
        import hatch_build
    finally:
        sys.path.remove(str(REPO))
    text = hatch_build.pricing_model_record(REPO / "src")
    assert text is not None
    made = json.loads(text)
    assert made == pins.record(REPO / "src" / "passprice")
    assert made["digest"] == pins._compute(str(REPO / "src" / "passprice"))
