"""Round fastcheck99 (issues 13 and 16): an editable install's record of its code's digest, written by its build into
site-packages (``hatch_build.py``), outside the checkout, so a cold ``check`` of a fresh editable install hashes the
module files instead of parsing and walking them (``pins._record_file``). The record answers only for the very bytes
it records, as a wheel's does; a record beside the modules of a source tree is still never read."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from passprice import pins


@pytest.fixture
def editable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A checkout (``pyproject.toml`` above ``src/passprice``) holding a copy of the running package's modules,
    installed as the running package, and a site-packages folder holding the record its editable build made of it;
    an empty cache folder (a digest comes from a record or from the trees, never from an earlier run)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    checkout = tmp_path / "checkout"
    package = checkout / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json", "_data"))
    (checkout / "pyproject.toml").write_text("[project]\nname = 'passprice'\n", encoding="utf-8")
    monkeypatch.setattr(pins, "RECORD", package / "pricing_model.json")
    site_packages = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    (site_packages / "passprice").mkdir(parents=True)
    (site_packages / pins.SITE_RECORD).write_text(json.dumps(pins.record(package)), encoding="utf-8")
    monkeypatch.setattr(sys.modules["site"], "getsitepackages", lambda: [str(site_packages)])
    monkeypatch.setattr(sys.modules["site"], "ENABLE_USER_SITE", False)
    return package, site_packages


def _no_walk(*_: object, **__: object) -> str:
    raise AssertionError("the trees were parsed")


def test_an_editable_install_s_record_in_site_packages_gives_the_digest_unparsed(
    editable: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    package, site_packages = editable
    assert pins._record_file() == site_packages / "passprice" / "pricing_model.json"
    computed = pins._compute(str(package), kept=False)
    assert json.loads((site_packages / pins.SITE_RECORD).read_text(encoding="utf-8"))["digest"] == computed
    monkeypatch.setattr(pins, "_compute", _no_walk)
    assert pins._recorded(str(package)) == computed
    assert pins.pricing_model_digest(package) == computed


def test_an_edit_of_the_same_size_and_time_is_never_given_the_record_s_digest(editable: tuple[Path, Path]) -> None:
    """A constant edited in place, same size, its modification time put back, within the second the record was
    made: the record no longer answers, and the digest is the edited trees' (as the old computation gives it); the
    edit undone, the record answers again."""
    package, site_packages = editable
    first = json.loads((site_packages / pins.SITE_RECORD).read_text(encoding="utf-8"))["digest"]
    module = package / "serving.py"
    text = module.read_text(encoding="utf-8")
    stat = module.stat()
    old = "SOFTMAX_MACS_PER_SCORE = 7.5"
    assert old in text
    module.write_text(text.replace(old, "SOFTMAX_MACS_PER_SCORE = 8.5"), encoding="utf-8")
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert pins._recorded(str(package)) is None
    edited = pins.pricing_model_digest(package)
    assert edited != first and edited == pins._compute(str(package), kept=False)
    module.write_text(text, encoding="utf-8")
    assert pins._recorded(str(package)) == first


def test_a_module_added_under_a_name_the_model_imports_misses_the_site_record(editable: tuple[Path, Path]) -> None:
    package, _ = editable
    (package / "__version__.py").write_text("SCALE = 2\n", encoding="utf-8")
    assert pins._recorded(str(package)) is None
    assert pins.pricing_model_digest(package) == pins._compute(str(package), kept=False)


def test_a_record_beside_the_checkout_s_modules_is_still_never_read(editable: tuple[Path, Path]) -> None:
    """A branch carries ``src/passprice/pricing_model.json`` (``git add -f``) naming the two roots with their true
    bytes and a forged digest: it is not read; with no site-packages record, nothing is, and the trees are parsed."""
    import hashlib

    package, site_packages = editable
    roots = {n: hashlib.sha256((package / f"{n}.py").read_bytes()).hexdigest() for n in pins.PRICING_ROOTS}
    forged = "sha256:" + "5" * 64
    pins.RECORD.write_text(json.dumps({"format": 1, "python": pins._python(), "digest": forged, "modules": roots,
                                       "algorithm": hashlib.sha256(Path(pins.__file__).read_bytes()).hexdigest()}),
                           encoding="utf-8")  # fmt: skip
    assert pins._recorded(str(package)) == pins._compute(str(package), kept=False) != forged
    (site_packages / pins.SITE_RECORD).unlink()
    assert pins._record_file() is None and pins._recorded(str(package)) is None


def test_a_site_packages_folder_inside_a_source_tree_holds_no_record(
    editable: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder on the interpreter's site path that is itself a source tree's (``pyproject.toml`` beside the package
    folder holding the record, or above it) is a checkout's file, as a record beside the modules is: not read."""
    package, site_packages = editable
    (site_packages / "pyproject.toml").write_text("", encoding="utf-8")
    assert pins._record_file() is None and pins._recorded(str(package)) is None


def test_no_site_module_no_record(editable: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -S`` (no ``site`` module imported): no site-packages record is looked for, and none is imported."""
    package, _ = editable
    monkeypatch.delitem(sys.modules, "site")
    assert pins._record_file() is None and pins._recorded(str(package)) is None


def test_an_editable_build_carries_the_record_to_site_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hatch_build.py``'s hook, for the editable wheel as for a wheel: the record of the checkout's code, made in a
    child interpreter, is force-included at ``passprice/pricing_model.json`` (site-packages, where the editable wheel
    installs ``passprice/_data`` too), and its digest is the one the trees give."""
    pytest.importorskip("hatchling")
    from cli_helpers import REPO

    monkeypatch.syspath_prepend(str(REPO))
    import hatch_build

    hook = object.__new__(hatch_build.TrackedData)
    monkeypatch.setattr(hatch_build.TrackedData, "root", property(lambda self: str(REPO)))
    build_data: dict[str, dict[str, str]] = {}
    hook._record_pricing_model("editable", build_data)
    ((made, where),) = build_data["force_include"].items()
    assert where == str(pins.SITE_RECORD) == "passprice/pricing_model.json"
    record = json.loads(Path(made).read_text(encoding="utf-8"))
    assert record["digest"] == pins._compute(str(REPO / "src" / "passprice"), kept=False)
    hook.finalize("editable", build_data, "")
    assert not Path(made).exists()
