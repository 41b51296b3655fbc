"""The command line is the subpackage ``passprice.cli``, one concern a module: its frame (``app``: the group, how a
failure is said, the console script's ``main``) over ``signals`` and ``params``, what commands share (``options``),
and one module a concern of commands. It was one module of 4,882 lines, ``cli.py``.

1. The layout: ``cli.py`` is gone (no shim), the package holds its twelve modules, each under :data:`MOST_LINES`
   lines and opening with its docstring, no ``utils``; each imports (at its top) only the layers before it, and no
   command module imports another (test_1_*).
2. The commands are registered as the package imports its modules, in the order of ``cli.py``'s definitions: the
   order an error naming the commands that take an option follows (test_2_*).
3. Nothing in the library imports the command line; the console script calls ``passprice.cli.main`` (test_3_*).
4. The command line is no pricing module, and the code stamp of every kept entry covers its modules (test_4_*).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from pathlib import Path

import click
from click.testing import CliRunner

from passprice import cache, pins

CLI = pins.PACKAGE / "cli"
#: The package's layers, each importing only the ones before it: the frame's three, what commands share.
BASE = ("signals", "params", "app", "options")
#: The modules of commands, in the order the package imports them (the group's order of its commands).
COMMANDS = ("registering", "pricing", "checking", "editing", "sweeping", "exploring", "calibrating")
#: A module of the package holds at most this many lines (``cli.py`` held 4,882).
MOST_LINES = 1200


def _cli_imports(path: Path, *, anywhere: bool = False) -> set[str]:
    """The modules of ``passprice.cli`` the module at ``path`` imports (at its top level, or ``anywhere``):
    ``"__init__"`` for the package itself (``from passprice.cli import main``, ``from passprice import cli``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree) if anywhere else iter(tree.body)
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module == "passprice.cli":
                out |= {a.name if (CLI / f"{a.name}.py").exists() else "__init__" for a in node.names}
            elif node.module.startswith("passprice.cli."):
                out.add(node.module.removeprefix("passprice.cli."))
            elif node.module == "passprice" and any(a.name == "cli" for a in node.names):
                out.add("__init__")
        elif isinstance(node, ast.Import):
            out |= {"__init__" for a in node.names if a.name == "passprice.cli" or a.name.startswith("passprice.cli.")}
    return out


# --- 1. the layout --------------------------------------------------------------------------------------------------


def test_1_cli_py_is_gone_and_the_package_is_its_modules() -> None:
    assert not (pins.PACKAGE / "cli.py").exists()
    assert importlib.util.find_spec("passprice.cli").submodule_search_locations is not None  # type: ignore[union-attr]
    assert sorted(p.stem for p in CLI.glob("*.py")) == sorted(("__init__", *BASE, *COMMANDS))
    assert not list(pins.PACKAGE.rglob("utils.py"))


def test_1_each_module_is_under_the_bound_and_opens_with_its_docstring() -> None:
    total = 0
    for path in sorted(CLI.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        total += lines
        assert lines < MOST_LINES, (path.name, lines)
        docstring = ast.get_docstring(ast.parse(text))
        assert docstring is not None and len(docstring) > 80, path.name
    assert total > 4882  # the whole command line moved, none of it left out (each module has its own imports)


def test_1_each_module_imports_only_the_layers_before_it() -> None:
    for i, name in enumerate(BASE):
        imported = _cli_imports(CLI / f"{name}.py")
        assert imported <= set(BASE[:i]), (name, sorted(imported))
    for name in COMMANDS:  # a command module reads the base, never another command module
        imported = _cli_imports(CLI / f"{name}.py")
        assert imported <= set(BASE), (name, sorted(imported))
        assert "app" in imported, name  # the group it registers its commands on
    # the layers do read the ones before: the order is the code's, not an empty claim
    assert _cli_imports(CLI / "app.py") == {"signals", "params"}
    assert _cli_imports(CLI / "options.py") == {"params", "app"}
    assert _cli_imports(CLI / "signals.py") == set()


def test_1_the_package_exports_the_group_main_and_terminated() -> None:
    import passprice.cli as package
    from passprice.cli import app, signals

    assert package.cli is app.cli and package.main is app.main and package.Terminated is signals.Terminated
    assert sorted(package.__all__) == ["Terminated", "cli", "main"]
    assert isinstance(package.cli, click.Group)


def test_1_click_is_its_own_again_once_every_command_is_defined() -> None:
    import passprice.cli  # noqa: F401

    # while the commands were defined, click made deferred parameters (params); after, click's own classes
    assert click.decorators.Option is click.core.Option  # type: ignore[attr-defined]
    assert click.decorators.Argument is click.core.Argument  # type: ignore[attr-defined]
    assert click.Path is click.types.Path
    from passprice.cli import app, params

    root = next(p for p in app.cli.params if p.name == "root")
    assert isinstance(root, params._DeferredOption) and isinstance(root.type, params._FolderPath)


# --- 2. the commands, registered by import, in cli.py's order -------------------------------------------------------


#: ``passprice``'s commands in the order ``cli.py`` defined them, and the module each is now defined in.
ORDER = {
    "registering": ["cards", "facts", "servings", "checkpoints", "explain", "init", "sources", "header", "import",
                    "synth"],
    "pricing": ["new-serving", "price", "best", "compare", "max-batch"],
    "checking": ["lock", "reproduce", "check", "audit", "diff"],
    "editing": ["fact"],
    "sweeping": ["sweep"],
    "exploring": ["kv", "roofline", "speculate", "simulate"],
    "calibrating": ["calibrate", "validate"],
}  # fmt: skip


def test_2_the_commands_are_registered_in_cli_py_s_order_by_their_modules() -> None:
    from passprice.cli import cli

    assert list(cli.commands) == [name for names in ORDER.values() for name in names]
    for module, names in ORDER.items():
        for name in names:
            assert cli.commands[name].callback.__module__ == f"passprice.cli.{module}", name  # type: ignore[union-attr]
    fact = cli.commands["fact"]
    assert isinstance(fact, click.Group) and list(fact.commands) == ["show", "recompute", "set"]
    assert tuple(ORDER) == COMMANDS


def test_2_an_option_of_other_commands_names_them_in_that_order() -> None:
    from passprice.cli import cli

    result = CliRunner().invoke(cli, ["cards", "--stack", "X"])
    assert result.exit_code == 2
    assert ("(--stack is an option of price, best, compare, max-batch, lock, audit, sweep, roofline, speculate, "
            "simulate, calibrate and validate, not of cards)") in result.output  # fmt: skip


# --- 3. nothing imports the command line; the console script calls its main ----------------------------------------


def test_3_no_module_outside_the_package_imports_the_command_line() -> None:
    importers = {}
    for path in sorted(pins.PACKAGE.rglob("*.py")):
        if CLI in path.parents:
            continue
        imported = _cli_imports(path, anywhere=True)
        if imported:
            importers[path.relative_to(pins.PACKAGE).as_posix()] = imported
    # the console script alone, and only the package's main (inside its main, after the stand-ins: entry.py)
    assert importers == {"entry.py": {"__init__"}}
    entry = ast.parse((pins.PACKAGE / "entry.py").read_text(encoding="utf-8"))
    found = [n for n in ast.walk(entry) if isinstance(n, ast.ImportFrom) and n.module == "passprice.cli"]
    assert [[(a.name, a.asname) for a in n.names] for n in found] == [[("main", "cli_main")]]
    assert not any(isinstance(n, ast.ImportFrom) and n.module == "passprice.cli" for n in entry.body)


def test_3_passprice_cli_main_is_what_the_console_script_runs() -> None:
    # the checkout's pyproject.toml, not one beside the installed package (CI installs it, not editable)
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"passprice": "passprice.entry:main"}
    source = (pins.PACKAGE / "entry.py").read_text(encoding="utf-8")
    assert re.search(r"\n    cli_main\(\)\n", source)  # entry.main ends by calling passprice.cli.main
    import passprice.cli
    from passprice.cli import app

    assert passprice.cli.main is app.main and app.main.__module__ == "passprice.cli.app"


# --- 4. no pricing module; every kept entry's key stamps the package ------------------------------------------------


def test_4_the_command_line_is_no_pricing_module() -> None:
    modules = pins.pricing_modules()
    assert "cli" not in modules  # tests/test_review_layout.py holds the list, unchanged by this split too
    for name in modules:  # every import statement of a pricing module, at top level or in a function
        assert not _cli_imports(pins.PACKAGE / f"{name}.py", anywhere=True), name
    assert len(modules) >= 60 and "locks" in modules  # the walk's answer, not an empty one


def test_4_every_cache_key_stamps_the_command_line_s_modules() -> None:
    names = [part.split(":")[0] for part in cache._code_stamp().split(",")]
    assert {f"cli/{p.name}" for p in CLI.glob("*.py")} <= set(names)
    assert "cli.py" not in names and "cli/__init__.py" in names
