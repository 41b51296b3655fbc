"""Another checkout's module holding the very bytes of one of the running package's takes the tree this process
parsed of it (``pins._OWN_TREES``; docs/PERFORMANCE.md, "A checkout's modules the running package parsed"): a
``--no-cache check`` of a clone of passprice with one module edited, run by an editable install whose build record
is stale (its own code edited too), parsed every pricing module twice, the running package's and the checkout's. The
digest is the one a parse of every module gives (the tree is a function of the bytes), the edited module alone is
parsed, and no tree of another checkout is kept. Counts of parses and digests here, no timings."""

from __future__ import annotations

import shutil
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from passprice import pins

#: A pricing module the roots import (not a root itself), edited in the copies below.
#: The running package's trees emptied before each test (tests/conftest.py): each test counts the parses it causes.
FRESH_TREES = True
EDITED = "cost"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file names ``pins`` parses from now on (its calls name the file; pytest's own do not), with the cache
    bypassed as ``--no-cache`` bypasses it."""
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    seen: list[str] = []
    parse = pins.ast.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        if "filename" in kwargs:
            seen.append(Path(kwargs["filename"]).name)
        return parse(*args, **kwargs)

    monkeypatch.setattr(pins.ast, "parse", counted)
    return seen


def copy_of_package(tmp_path: Path, tail: bytes) -> Path:
    """The running package's module files in a folder of their own, ``tail`` appended to :data:`EDITED`'s."""
    folder = tmp_path / "src" / "passprice"
    folder.mkdir(parents=True)
    for path in sorted(pins.PACKAGE.glob("*.py")):
        shutil.copyfile(path, folder / path.name)
    edited = folder / f"{EDITED}.py"
    edited.write_bytes(edited.read_bytes() + tail)
    return folder


def test_the_edited_module_is_a_pricing_module() -> None:
    assert EDITED in pins.pricing_modules(pins.PACKAGE)
    assert EDITED not in pins.PRICING_ROOTS


def test_a_checkout_with_one_module_edited_parses_that_module_alone(
    tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    own = pins._compute(str(pins.PACKAGE))
    modules = pins.pricing_modules(pins.PACKAGE)
    assert sorted(parses) == sorted(f"{name}.py" for name in modules)  # the running package's, each once
    assert len(pins._OWN_TREES) == len(modules)
    folder = copy_of_package(tmp_path, b"\nCAP142 = 1\n")
    parses.clear()
    theirs = pins._compute(str(folder), capped=True)
    assert parses == [f"{EDITED}.py"]
    assert theirs != own  # a statement more
    # the digest a parse of every module gives: no tree of the running package at hand, all of them parsed again
    monkeypatch.setattr(pins, "_OWN_TREES", {})
    parses.clear()
    assert pins._compute(str(folder), capped=True) == theirs
    assert sorted(parses) == sorted(f"{name}.py" for name in modules)


def test_a_comment_more_is_parsed_and_digests_as_the_package(tmp_path: Path, parses: list[str]) -> None:
    # Other bytes, the same tree: the module is parsed (only the same bytes are taken), and the digest is the
    # running package's, comments being no part of the tree.
    own = pins._compute(str(pins.PACKAGE))
    folder = copy_of_package(tmp_path, b"# a comment more\n")
    parses.clear()
    assert pins._compute(str(folder), capped=True) == own
    assert parses == [f"{EDITED}.py"]


def test_another_checkouts_trees_are_not_kept(tmp_path: Path, parses: list[str]) -> None:
    pins._compute(str(pins.PACKAGE))
    own = {sha256(p.read_bytes()).hexdigest() for p in pins.PACKAGE.glob("*.py")}
    assert set(pins._OWN_TREES) <= own
    folder = copy_of_package(tmp_path, b"\nCAP142 = 2\n")
    for _ in range(2):  # the edited module parsed each time: its tree was not kept
        parses.clear()
        pins._compute(str(folder), capped=True)
        assert parses == [f"{EDITED}.py"]
    assert set(pins._OWN_TREES) <= own


def test_a_module_taken_from_the_package_still_counts_against_the_cap(tmp_path: Path, parses: list[str]) -> None:
    # The trees taken are counted as a parsed one is: the copy (the package's code, a comment more) is refused with
    # the cap at its count less one token, and judged at its count, its edited module alone parsed.
    pins._compute(str(pins.PACKAGE))
    folder = copy_of_package(tmp_path, b"# a comment more\n")
    total = sum(pins._count_tokens((folder / f"{name}.py").read_bytes()) for name in pins.pricing_modules())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pins, "MODEL_TOKENS", total - 1)
        with pytest.raises(pins.CodeNotJudged, match=f"{total:,}"):
            pins._compute(str(folder), capped=True)
        mp.setattr(pins, "MODEL_TOKENS", total)
        parses.clear()
        assert pins._compute(str(folder), capped=True).startswith("sha256:")
    assert parses == [f"{EDITED}.py"]
