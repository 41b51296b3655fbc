"""Round 33 (issue 16: a cold one-fact ``diff``): the private copy's re-fit of a stack whose fitted facts the file
already holds exactly (:func:`passprice.calibrate._holds`) leaves the file as it is, so the copy reads the stack's
unchanged bytes from the cache of validated files instead of parsing them three more times (the plain writer's
read-back, ``write_calibration``'s own parse and the copy's read of the file it wrote).

Behaviour only, no timing: what counts as held (keys in order, types, float bits), the file's bytes and status
untouched when held and rewritten to the fit when not (a fitted value edited, a schema-invalid file), the path
taken only for a private copy (``keep_layout=False``). The one-fact markdown review, the same bytes and exit status
as with every file rewritten (the stack's text parsed once against five times), is in test_same_bytes."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from passprice import calibrate
from passprice.registry import Root
from passprice.stacks import load_stack, stack_path

HERE = Path(__file__).resolve().parent
STACK = "lmdeploy-turbomind-2312"


def entry(value: float) -> dict[str, Any]:
    return {"value": value, "unit": "1", "provenance": "derived", "source": "s", "derivation": {"runs": [1.0, 2.5]}}


def held(value: float) -> dict[str, Any]:
    return {"share": {"read": entry(value), "other": 3}}


def test_the_same_tables_are_held() -> None:
    assert calibrate._holds(held(0.5), {"share.read": entry(0.5)})
    assert calibrate._holds(held(0.5), {})


@pytest.mark.parametrize(
    ("document", "entries"),
    [
        (held(0.5), {"share.read": entry(0.5000000000000001)}),  # one bit off
        (held(1.0), {"share.read": entry(1.0) | {"value": 1}}),  # an int where the file holds a float
        ({"share": {"read": dict(reversed(entry(0.5).items()))}}, {"share.read": entry(0.5)}),  # key order
        (held(0.5), {"share.write": entry(0.5)}),  # not in the file
        (held(0.5), {"memory.reserved": entry(0.5)}),  # its table not in the file
        ({"share": 3}, {"share.read": entry(0.5)}),  # its parent not a table
        (held(0.5), {"share.read": {**entry(0.5), "note": "n"}}),  # a key more
        (held(0.5), {"share.read": entry(0.5), "share.write": entry(0.5)}),  # one of two held
    ],
    ids=["one bit", "int for float", "key order", "missing", "no table", "parent not a table", "a key more",
         "one of two"],
)
def test_anything_else_is_not_held(document: dict[str, Any], entries: dict[str, dict[str, Any]]) -> None:
    assert not calibrate._holds(document, entries)


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Root:
    sys.path.insert(0, str(HERE))
    from test_perf_29 import copy_registry

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    monkeypatch.delenv("PASSPRICE_MAX_FIT_RUNS", raising=False)
    return Root(copy_registry(tmp_path / "registry"))


def test_a_copy_whose_file_holds_the_fit_is_left_as_it_is(root: Root) -> None:
    path = stack_path(root, STACK)
    before, info = path.read_bytes(), path.stat()
    cal = calibrate.calibrate(root, STACK)
    assert calibrate._holds(tomllib.loads(before.decode("utf-8")), calibrate.derived_facts(cal))
    assert calibrate.write_calibration(root, cal, keep_layout=False) == path
    after = path.stat()
    assert path.read_bytes() == before
    assert (after.st_ino, after.st_mtime_ns) == (info.st_ino, info.st_mtime_ns)


def test_a_users_calibrate_still_writes_its_file(root: Root) -> None:
    """``keep_layout`` true (``passprice calibrate``): written as before, tomlkit keeping the layout, even where the
    fit is the file's (the file replaced: another inode)."""
    path = stack_path(root, STACK)
    info = path.stat()
    calibrate.write_calibration(root, calibrate.calibrate(root, STACK))
    assert path.stat().st_ino != info.st_ino
    assert path.read_text(encoding="utf-8").startswith("#")  # its comments kept


@pytest.mark.parametrize(
    ("old", "new"),
    [("[share.read]\nvalue = 0.9329\n", "[share.read]\nvalue = 0.9328\n"),  # a fitted value edited
     ("[share.read]\nvalue = 0.9329\n", "[share.read]\nvalue = 9.9329\n")],  # and past the schema's 1
    ids=["edited", "schema-invalid"],
)
def test_a_copy_whose_file_does_not_hold_the_fit_is_rewritten_to_it(root: Root, old: str, new: str) -> None:
    """The file edited after the fit (under the lock, a file is read again: whatever it holds then is what is
    compared and written): a fitted value written back, a file the schema refuses written whole as before."""
    path = stack_path(root, STACK)
    cal = calibrate.calibrate(root, STACK)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    calibrate.write_calibration(root, cal, keep_layout=False)
    written = tomllib.loads(path.read_text(encoding="utf-8"))
    assert calibrate._holds(written, calibrate.derived_facts(cal))
    assert written["share"]["read"]["value"] == 0.9329
    assert load_stack(Root(root.path), STACK).lock_facts()["stack.share.read"].value == 0.9329
