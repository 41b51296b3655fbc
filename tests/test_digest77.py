"""The pricing-model digest made cheaper without moving it (session 43, digest77): the tree text is written by a
writer made once a syntax-tree class (a name's text kept by its identifier and context, a node without fields one
piece), each module file is read and hashed once a digest, and the digest kept in the cache is keyed by the
interpreter that parsed the trees. ``tests/test_digest_text.py`` holds the text to ``json.dumps`` of the nested lists
on every module of the package and a dozen of the standard library's."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from passprice import pins

# Two roots, the module they import, and one module the walk never reaches (read for the cache's key alone).
MODULES = {
    "locks.py": "from passprice import serving\n\ndef priced(x):\n    '''Docstring.'''\n    return serving.f(x)\n",
    "reproduce.py": "from .serving import f\n\nSIDE = f(2)\n",
    "serving.py": "def f(x):\n    return -x * 1.5 < x\n",
    "unused.py": "y = 1\n",
}


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package above in its own folder, with a cache of its own (empty)."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    folder = tmp_path / "passprice"
    folder.mkdir()
    for name, text in MODULES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_name_is_written_with_its_own_context() -> None:
    """A name's text is kept by its identifier and its context: ``x`` stored, read and deleted are three texts (a
    text kept by identifier alone would write the first one three times), and an operator or a comparison's
    operator is its one piece."""
    text = pins._tree_text(ast.parse("x = x\ndel x\ny = -x < x"), set())
    assert text == (
        '["Module",["body",['
        '["Assign",["targets",[["Name",["id","x"],["ctx",["Store"]]]]],["value",["Name",["id","x"],["ctx",["Load"]]]]],'
        '["Delete",["targets",[["Name",["id","x"],["ctx",["Del"]]]]]],'
        '["Assign",["targets",[["Name",["id","y"],["ctx",["Store"]]]]],["value",["Compare",'
        '["left",["UnaryOp",["op",["USub"]],["operand",["Name",["id","x"],["ctx",["Load"]]]]]],'
        '["ops",[["Lt"]]],["comparators",[["Name",["id","x"],["ctx",["Load"]]]]]]]]]]]'
    )


def test_each_module_file_is_read_once_a_digest(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold digest read every pricing module twice (once for the cache's key, once to parse it); each file is now
    read once, and the digest is the one a walk reading the files itself gives, and the one main at 65ba0856 gave
    these four files."""
    fresh = pins._compute(str(package), kept=False)
    reads: list[str] = []
    read = pins.read_regular

    def counted(path: Path, most: int) -> bytes:
        reads.append(Path(path).name)
        return read(path, most)

    monkeypatch.setattr(pins, "read_regular", counted)
    assert pins.pricing_model_digest(package) == fresh
    # each module read once (an installed wheel's pins also reads its build record, pricing_model.json, first: the
    # clean-clone CI at f9c0040a, which installs one, read it)
    assert sorted(name for name in reads if name != "pricing_model.json") == [
        "locks.py", "reproduce.py", "serving.py", "unused.py"]
    assert fresh == "sha256:1ebf595493db70a6e875d834aab2b85c90572960b174e12b6c58aeeac0524d97"


def test_a_kept_digest_is_not_taken_by_another_interpreter(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest kept in the cache is keyed by the interpreter (its parser makes the trees): the same bytes under
    another Python version are walked again, not read from what this one kept."""
    computed: list[str] = []
    compute = pins._compute

    def counted(at: str, files: dict[str, str | None] | None = None, capped: bool = False, kept: bool = True,
                read: dict[str, tuple[bytes, str]] | None = None) -> str:  # fmt: skip
        computed.append(at)
        return compute(at, files, capped, kept, read)

    monkeypatch.setattr(pins, "_compute", counted)
    monkeypatch.setattr(pins, "_TAKEN", {})  # none taken in this process yet (scale88: kept for the process too)
    first = pins.pricing_model_digest(package)
    assert pins.pricing_model_digest(package) == first and len(computed) == 1  # kept
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert pins.pricing_model_digest(package) == first and len(computed) == 2  # not this interpreter's: walked again


def test_lines_of_a_name_are_counted_against_the_cap_and_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line break was no token to the cap's count, though each line is a statement to the parser: 499,999 lines
    of ``a`` (999,998 bytes, under issue 13's 1 MB) counted 499,999 tokens, were parsed, and a ``--no-cache
    check`` of a checkout holding them took 3.6 s of CPU and 903 MiB. Each line break is a token now: 240,001
    lines of ``a`` are 480,002 tokens, past the cap (480,000 since the package passed 80 % of 460,000), refused
    before anything is parsed."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pins, "own_tokens", lambda: 522_000)  # the message's figure: not the package's files read

    parse = pins.ast.parse

    def never(*args: object, **kwargs: object) -> object:
        if "filename" in kwargs:  # pins' call (pytest's own reports parse too)
            raise AssertionError(f"parsed: {kwargs['filename']}")
        return parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pins.ast, "parse", never)
    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "locks.py").write_bytes(b"a\n" * 240_001)
    with pytest.raises(pins.CodeNotJudged) as refused:
        pins.pricing_model_digest(package)
    assert str(refused.value) == (
        "src/passprice/locks.py: 480,002 bytes; the pricing model's modules reach 480,002 tokens with it, past the "
        "480,000 passprice parses of another checkout's code (its own is 522,000)"
    )
    assert pins._count_tokens(b"a\n" * 239_999) == 479_998  # under the cap: parsed (about 0.6 s, not run here)
    assert pins._count_tokens(b"x = [a,a]\n") == 8  # x = [ a , a ] and the line break
