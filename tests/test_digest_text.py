"""The pricing model's digest is taken from each module's syntax tree written straight as JSON text
(``passprice.pins._tree_text``): the text must be what ``json.dumps`` made of the tree's nested lists before, byte
for byte, or every lock of an older checkout would read as priced by another model."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from passprice import pins

# The modules of the package, and standard-library modules rich in constants, f-strings, patterns and async code.
STDLIB = ("ast", "json/encoder", "typing", "dataclasses", "enum", "fractions", "string", "tomllib/_parser",
          "_pydecimal", "email/_header_value_parser", "asyncio/base_events", "re/_parser")


def _reference(node: Any, imports: set[str]) -> Any:
    """The canonical form as nested lists, as the digest was written before (dumped by ``json.dumps``)."""
    if isinstance(node, ast.AST):
        if isinstance(node, ast.Import | ast.ImportFrom):
            pins._note_import(node, imports)
        out: list[Any] = [type(node).__name__]
        for field in getattr(type(node), "_fields", ()):
            value = getattr(node, field, None)
            if type(value) is str or type(value) is int:
                out.append([field, value])
            elif type(value) is list:
                if not value:
                    continue
                if isinstance(node, pins._WITH_DOCSTRING) and field == "body":
                    value = pins._without_docstring(value)
                out.append([field, [_reference(v, imports) for v in value]])
            elif value is not None:
                out.append([field, _reference(value, imports)])
        return out
    if isinstance(node, list):
        return [_reference(v, imports) for v in node]
    if isinstance(node, bytes | complex):
        return repr(node)
    if isinstance(node, float):
        return float.hex(node)
    if node is Ellipsis:
        return "..."
    return node


SNIPPET = '''"""Dropped."""
from passprice import serving
from .reproduce import again
import passprice.cost as cost
X = b"\\x00\\xff" + bytes(2)
Y = (1j, 1.5, 1e400, -0.0, ..., None, True, False, 10**30, 0x_ff, "\\u2028\\ud800")
Z = {"a": 1, **{"b": 2}}
def f(x: int, /, *args: str, k: float = 2.5, **kw: object) -> str:
    """Dropped."""
    global Y, Z
    match x:
        case serving.Point(x=0, y=yy) | [1, *yy]:
            return f"{yy!r:>{k}}"
    return lambda: (yield)
async def g():
    async with cost.x() as y:
        await y
    return [i async for i in y]
class A:
    "doc"
    n: int = 3
'''


def _sources() -> list[tuple[str, str]]:
    here = Path(pins.__file__).parent
    lib = Path(json.__file__).parent.parent
    out = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(here.glob("*.py"))]
    out += [(f"{name}.py", (lib / f"{name}.py").read_text(encoding="utf-8")) for name in STDLIB
            if (lib / f"{name}.py").is_file()]
    return [*out, ("snippet.py", SNIPPET)]


@pytest.mark.parametrize(("name", "source"), _sources(), ids=lambda x: x if x.endswith(".py") else "")
def test_the_text_is_what_json_dumps_made_of_the_nested_lists(name: str, source: str) -> None:
    tree = ast.parse(source)
    ours: set[str] = set()
    theirs: set[str] = set()
    text = pins._tree_text(tree, ours)
    assert text == json.dumps(_reference(tree, theirs), separators=(",", ":"), ensure_ascii=False)
    assert ours == theirs


def test_the_snippet_names_the_modules_it_imports() -> None:
    imports: set[str] = set()
    pins._tree_text(ast.parse(SNIPPET), imports)
    assert imports == {"serving", "reproduce", "cost", "__init__"}


def test_a_small_package_keeps_the_digest_the_nested_lists_gave(tmp_path: Path) -> None:
    """Four modules (imports absolute and relative, bytes, complex, floats, an infinity, ``...``, a dict spread,
    ``global``, a match statement, an f-string, async code, docstrings): the digest the earlier form gave them."""
    folder = tmp_path / "passprice"
    folder.mkdir()
    (folder / "locks.py").write_text(
        '"""A lock: docstring dropped."""\nfrom passprice import serving\nfrom .reproduce import again\n\n'
        'X = b"\\x00\\xff" + bytes(2)\nY = (1j, 1.5, 1e400, -0.0, ..., None, True, False, 10**30)\n'
        'Z = {"a": 1, **{"b": 2}}\nS = "\\u00e9\\u2028\\n\\"q\\""\n\n\n'
        'def f(x: int, *args: str, k: float = 2.5, **kw: object) -> str:\n    """Dropped."""\n    global Y\n'
        "    match x:\n        case serving.Point(x=0, y=yy):\n            return f\"{yy!r:>10}\"\n"
        "        case [1, *rest]:\n            return str(rest)\n    return \"no\"\n",
        encoding="utf-8",
    )
    (folder / "reproduce.py").write_text(
        'def again():\n    """Only a docstring."""\nclass A:\n    "doc"\n    n: int = 3\n', encoding="utf-8"
    )
    (folder / "serving.py").write_text(
        "import passprice.cost as cost\nasync def g():\n    async with cost.x() as y:\n        await y\n"
        "    yield [i async for i in y]\n",
        encoding="utf-8",
    )
    (folder / "cost.py").write_text("Z = 1\n", encoding="utf-8")
    assert sorted(pins._trees(str(folder))) == ["cost", "locks", "reproduce", "serving"]
    assert pins._compute(str(folder)) == "sha256:9d25eae6224b4260d478856dce245d0a9c4b5564268b6a233d72d6e2cda76945"


def test_a_lone_surrogate_fails_as_it_did() -> None:
    """A string constant holding a lone surrogate is written as JSON writes it, and fails only when the text is
    encoded for the hash (a ``UnicodeEncodeError``, which ``checkout_model`` takes for code it cannot judge)."""
    text = pins._tree_text(ast.parse('S = "\\ud800"'), set())
    assert "\ud800" in text
    with pytest.raises(UnicodeEncodeError):
        text.encode("utf-8")
