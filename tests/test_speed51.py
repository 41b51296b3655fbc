"""The pricing model's digest keeps each module's canonical tree in the cache under the sha256 of the module's bytes
(session 38, speed51): a tree with one module edited parses that module alone, and the digest is the one the trees
parsed afresh give; another checkout's modules are still counted against the token cap, from the cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from passprice import pins
from passprice.digests import sha256

# A package of three pricing modules (the two roots and one module they import) and one the walk never reaches.
MODULES = {
    "locks.py": "from passprice import serving\n\ndef priced(x):\n    '''Docstring.'''\n    return serving.f(x)\n",
    "reproduce.py": "from .serving import f\n\nSIDE = f(2)\n",
    "serving.py": "def f(x):\n    return x * 1.5\n",
    "unused.py": "y = 1\n",
}


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package above in its own folder, with a cache of its own (empty)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    monkeypatch.setattr(pins, "own_tokens", lambda: 460_000)  # a refusal's message: not the package's trees parsed
    folder = tmp_path / "passprice"
    folder.mkdir()
    for name, text in MODULES.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The module files parsed (``ast.parse``'s ``filename``), in order."""
    seen: list[str] = []
    parse = pins.ast.parse

    def counted(*args: object, **kwargs: object) -> object:
        if "filename" in kwargs:  # pins' call (pytest's own reports parse too)
            seen.append(Path(str(kwargs["filename"])).name)
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pins.ast, "parse", counted)
    return seen


def test_an_edited_module_is_parsed_alone_and_the_digest_is_the_uncached_one(package: Path, parses: list[str]) -> None:
    fresh = pins._compute(str(package), kept=False)
    assert sorted(parses) == ["locks.py", "reproduce.py", "serving.py"]
    parses.clear()
    assert pins._compute(str(package)) == fresh  # cold: parses and keeps the three trees
    assert len(parses) == 3
    parses.clear()
    assert pins._compute(str(package)) == fresh  # every tree kept: nothing parsed
    assert parses == []
    (package / "serving.py").write_text("def f(x):\n    return x * 1.25\n")
    edited = pins._compute(str(package))
    assert parses == ["serving.py"]
    assert edited != fresh
    assert edited == pins._compute(str(package), kept=False)
    # A docstring edit is a new file (a miss) with the same tree: the digest does not move.
    (package / "locks.py").write_text(MODULES["locks.py"].replace("Docstring.", "Another docstring."))
    parses.clear()
    assert pins._compute(str(package)) == edited
    assert parses == ["locks.py"]


def test_a_cached_tree_past_the_cap_is_refused_by_its_kept_count(
    package: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tokens (a run of word characters, one other non-blank character or a line break; a string literal one token
    # since session 44), by hand: locks.py 4 + 6 + 1 + 7 + 5 line breaks = 23 (``from passprice import serving``;
    # ``def priced ( x ) :``; ``'''Docstring.'''``; ``return serving . f ( x )``), reproduce.py 5 + 6 + 3 = 14,
    # serving.py 6 + 6 + 2 = 14 (``1.5`` is ``1 . 5``): 51.
    pins._compute(str(package), capped=True)
    sha = sha256((package / "locks.py").read_bytes()).hexdigest()
    kept = pins._kept_tree(sha)
    assert kept is not None and kept.tokens == 23
    assert kept.imports == ("__init__", "serving")  # `from passprice import serving` names the package too

    def never(data: bytes) -> int:
        raise AssertionError("a cached module's tokens counted again")

    monkeypatch.setattr(pins, "_count_tokens", never)
    monkeypatch.setattr(pins, "MODEL_TOKENS", 50)  # the closure is 51
    parses.clear()
    with pytest.raises(pins.CodeNotJudged) as refused:
        pins._compute(str(package), capped=True)
    assert refused.value.tokens == 51
    assert "reach 51 tokens with it, past the 50 passprice parses" in str(refused.value)
    assert parses == []
    monkeypatch.setattr(pins, "MODEL_TOKENS", 51)
    assert pins._compute(str(package), capped=True) == pins._compute(str(package), kept=False)


def test_a_tree_kept_without_its_count_is_counted_before_the_cap(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pins._compute(str(package))  # the running package's own digest is never capped: no count kept
    sha = sha256((package / "serving.py").read_bytes()).hexdigest()
    kept = pins._kept_tree(sha)
    assert kept is not None and kept.tokens is None
    monkeypatch.setattr(pins, "MODEL_TOKENS", 50)
    with pytest.raises(pins.CodeNotJudged, match="reach 51 tokens"):
        pins._compute(str(package), capped=True)


def test_a_damaged_entry_is_ignored_and_rebuilt(package: Path, parses: list[str]) -> None:
    from passprice import cache

    fresh = pins._compute(str(package))
    assert fresh == pins._compute(str(package), kept=False)
    sha = sha256((package / "serving.py").read_bytes()).hexdigest()
    hello = "eJzLSM3JyQcABiwCFQ=="  # zlib of b"hello", base64
    for damaged in (
        {"tree": "not base64!", "imports": [], "tokens": None},
        {"tree": "AAAA", "imports": [], "tokens": None},  # base64, not zlib
        {"tree": hello[:-8] + "====", "imports": [], "tokens": None},  # zlib cut short
        {"tree": hello, "imports": ["not a name"], "tokens": None},
        {"tree": hello, "imports": [], "tokens": -1},
        {"tree": hello, "imports": [], "tokens": True},
        {"tree": 7, "imports": [], "tokens": None},
    ):
        cache.store(pins._tree_key(sha), damaged)
        assert pins._kept_tree(sha) is None, damaged
    path = cache.cache_dir() / "documents" / f"{pins._tree_key(sha)}.json"
    path.write_bytes(path.read_bytes()[:-5])  # truncated: its checksum fails
    parses.clear()
    assert pins._compute(str(package)) == fresh
    assert parses == ["serving.py"]
    rebuilt = pins._kept_tree(sha)
    assert rebuilt is not None and rebuilt.text.startswith('["Module",["body",[["FunctionDef",["name","f"]')


def test_no_cache_and_another_python_miss(package: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    sha = sha256((package / "serving.py").read_bytes()).hexdigest()
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    fresh = pins._compute(str(package))
    assert pins._kept_tree(sha) is None  # nothing written
    monkeypatch.delenv("PASSPRICE_NO_CACHE")
    pins._compute(str(package))
    assert pins._kept_tree(sha) is not None
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    assert pins._kept_tree(sha) is None  # nothing read
    monkeypatch.delenv("PASSPRICE_NO_CACHE")
    own = pins._own_bytes
    monkeypatch.setattr(pins, "_own_bytes", lambda: "another pins.py")  # the tree's form is this module's
    assert pins._kept_tree(sha) is None
    monkeypatch.setattr(pins, "_own_bytes", own)
    assert pins._kept_tree(sha) is not None
    monkeypatch.setattr(sys, "version", "3.99.0 (another)")
    assert pins._kept_tree(sha) is None
    parses.clear()
    assert pins._compute(str(package)) == fresh
    assert len(parses) == 3


def test_the_build_record_parses_every_module(package: Path, parses: list[str]) -> None:
    pins._compute(str(package))
    parses.clear()
    made = pins.record(package)
    assert len(parses) == 3  # never a tree from the user's cache in a wheel's record
    assert made["modules"]["serving"] == sha256((package / "serving.py").read_bytes()).hexdigest()


def test_another_folder_with_the_same_bytes_reads_the_kept_trees(package: Path, parses: list[str]) -> None:
    """A review prices HEAD in a child run from a fresh checkout of HEAD's code: every module file is new there
    (another folder, other inodes), and its trees are still the kept ones (they were keyed by every module's status
    until session 38's own measurement found a warm review no faster)."""
    import shutil

    digest = pins._compute(str(package))
    other = package.parent / "checkout" / "passprice"
    shutil.copytree(package, other)
    parses.clear()
    assert pins._compute(str(other)) == digest
    assert parses == []
