"""A price afresh without :mod:`inspect`, :mod:`platform`, :mod:`datetime` or :mod:`tokenize` (issue 16,
docs/PERFORMANCE.md), and ``sources``' patterns compiled when first used.

click and attrs import the four when they are imported; a price used ``inspect.cleandoc`` of each option's one-line
help, attrs' ``inspect.signature`` of two converters, ``platform.python_implementation`` and ``platform.system`` and
the class ``datetime.datetime`` (by name, in ``click.types``), and nothing of ``tokenize`` (``linecache`` imports it
for tracebacks). :func:`passprice.entry.standard_modules_held_off` puts stand-ins in their place while the command
line is imported, which answer those names and import the real module for any other, and
:class:`passprice.generated._Annotations` answers attrs' question about a converter's annotations without a
signature. Held here: each answer equals the real one (every option's help, every function of the package and of the
standard library's modules a price imports, hand cases; the real module's own once it is imported), a price's output
and every ``--help`` text are the same bytes with the real modules imported first, and a price afresh imports none
of the four.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import platform
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import attr._compat
import click
import pytest

from passprice import entry, generated, sources

REPO = Path(__file__).resolve().parent.parent


def _functions() -> list[Any]:
    """Every function and method defined in passprice's modules and in standard modules a price imports."""
    import passprice

    package = Path(passprice.__file__).parent  # a subpackage's modules too (passprice.review.verdict)
    names = sorted(".".join(p.relative_to(package).with_suffix("").parts).removesuffix(".__init__")
                   for p in package.rglob("*.py"))
    modules = [__import__(f"passprice.{n}", fromlist=["_"]) for n in names if n not in ("__main__",)]
    modules += [json, os, functools, inspect, types, click.core, click.types, attr._compat]
    found: list[Any] = []
    for module in modules:
        for value in list(vars(module).values()):
            found.append(value)
            if isinstance(value, type):
                found.extend(v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
                             for v in vars(value).values())
    return [f for f in found if callable(f)]


def _odd(a: int, /, b: str = "", *args: float, c: bytes, **kw: object) -> list[int]:
    return []


def _star(*args: tuple[int], key: int = 0) -> None:
    pass


def _keyword(*, key: Path) -> str:
    return ""


def _kwargs(**kw: int) -> None:
    pass


def _none() -> int:
    return 0


@functools.wraps(_none)
def _wrapped(value: str) -> str:
    return value


def _signed(value: int) -> int:
    return value


_signed.__signature__ = inspect.signature(_keyword)  # type: ignore[attr-defined]


def test_the_converters_annotations_are_attrs_own_answers() -> None:
    original = attr._compat._AnnotationExtractor
    cases = [*_functions(), _odd, _star, _keyword, _kwargs, _none, _wrapped, _signed, lambda: 0, lambda x, y=1: x,
             lambda *a: a, functools.partial(_odd, 1), len, tuple, str.strip, int, object()]
    plain = 0
    for case in cases:
        ours = generated._Annotations(case)
        theirs = original(case)
        assert ours.get_first_param_type() == theirs.get_first_param_type(), case
        assert ours.get_return_type() == theirs.get_return_type(), case
        plain += ours._asked is None
    assert plain > 1000  # most answered without a signature
    # by hand: a positional-only first parameter, *args before keyword-only ones, a keyword-only first one, **kw
    assert generated._Annotations(_odd).get_first_param_type() == "int"
    assert generated._Annotations(_odd).get_return_type() == "list[int]"
    assert generated._Annotations(_star).get_first_param_type() == "tuple[int]"
    assert generated._Annotations(_keyword).get_first_param_type() == "Path"
    assert generated._Annotations(_kwargs).get_first_param_type() == "int"
    assert generated._Annotations(_none).get_first_param_type() is None
    # a wrapped function and one with __signature__ are asked of attrs: their signature is another function's
    assert generated._Annotations(_wrapped).get_first_param_type() is None
    assert generated._Annotations(_signed).get_first_param_type() == "Path"


def test_a_one_line_help_is_cleaned_as_inspect_cleans_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry, "_loaded", lambda name: None)  # as in the console script: inspect not imported
    texts = []
    for command in entry_commands():
        for param in command.params:
            texts.append(getattr(param, "help", None) or "")
        texts.append(command.help or "")
    assert len(texts) > 300
    chosen = random.Random(134)
    alphabet = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u2003", "a", "é", "\x00"]
    texts += ["".join(chosen.choice(alphabet) for _ in range(chosen.randrange(12))) for _ in range(5000)]
    for text in texts:
        assert entry._cleandoc(text) == inspect.cleandoc(text), repr(text)
    assert entry._cleandoc("  Say it.  ") == "Say it.  "


def entry_commands() -> list[click.Command]:
    """Every command of passprice's command line, groups included, its deferred options made."""
    from passprice.cli import cli

    found: list[click.Command] = []

    def walk(command: click.Command) -> None:
        found.append(command)
        command.get_params(click.Context(command))
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(cli)
    return found


def test_the_stand_ins_answer_as_the_real_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime

    real = (platform.python_implementation(), platform.system())
    assert (entry._python_implementation(), entry._system()) == real
    import _datetime

    assert _datetime.datetime is datetime.datetime
    # the real module imported: its own functions answer, whatever was done to them
    monkeypatch.setattr(platform, "system", lambda: "Plan 9")
    monkeypatch.setattr(inspect, "cleandoc", lambda doc: "cleaned")
    assert entry._system() == "Plan 9" and entry._cleandoc(" a") == "cleaned"
    monkeypatch.setattr(entry, "_loaded", lambda name: None)  # not imported: the stand-ins' own answers
    assert (entry._python_implementation(), entry._system()) == real
    assert entry._cleandoc(" a") == "a"


def test_the_sources_patterns_are_compiled_when_first_used() -> None:
    script = ("from passprice import sources; n = sources._compiled.cache_info().currsize; "
              "from passprice.sources import QUOTED_SPAN; print(n, QUOTED_SPAN.pattern == sources._QUOTED_SPAN_TEXT, "
              "sources.quoted_spans(\"p. 3 'a b' and 'c'\"))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "True", "['a", "b',", "'c']"]
    with pytest.raises(AttributeError, match="has no attribute 'NOT_THERE'"):
        sources.NOT_THERE  # noqa: B018


_HELD_OFF = """
import sys
from passprice import entry, generated
generated.install_early()
held = entry.standard_modules_held_off()
assert held == ["inspect", "platform", "datetime", "tokenize"], held
import click
from datetime import datetime
import attr
entry.stand_ins_out(held)
print(sorted(n for n in ("inspect", "platform", "datetime", "dis", "tokenize") if n in sys.modules))
stand_in = click.core.inspect
assert stand_in.isfunction(print) is False  # any other name: the real module
assert sys.modules["inspect"] is not stand_in and stand_in.isfunction is sys.modules["inspect"].isfunction
print(sorted(n for n in ("inspect", "platform", "datetime") if n in sys.modules), datetime is click.types.datetime)
"""


def test_a_stand_in_imports_the_real_module_for_any_other_name(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", _HELD_OFF], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["[]", "['inspect'] True"], done.stdout


_RUN = """
import sys
REAL = sys.argv.pop(1) == "real"
if REAL:
    import datetime, inspect, platform
sys.argv = ["passprice", *sys.argv[1:]]
from passprice import entry
try:
    entry._command_line()
except SystemExit as e:
    assert e.code in (0, None), e.code
HELD = ("inspect", "platform", "datetime", "dis", "tokenize")
print("imported:", ",".join(n for n in HELD if n in sys.modules) or "-")
"""


def _run(tmp_path: Path, real: bool, *words: str) -> str:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PASSPRICE_NO_MEMO": "1"}
    done = subprocess.run([sys.executable, "-c", _RUN, "real" if real else "held", *words], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_price_afresh_imports_none_of_them_and_prints_the_same(tmp_path: Path) -> None:
    words = ("price", "r1-qwen7b-h200", "--json")
    real = _run(tmp_path, True, *words)  # fills the cache
    held = _run(tmp_path, False, *words)
    assert real.rpartition("imported:")[2].strip() == "inspect,platform,datetime,dis,tokenize"
    assert held.rpartition("imported:")[2].strip() == "-"
    assert held.rpartition("imported:")[0] == real.rpartition("imported:")[0]
    assert json.loads(held.rpartition("imported:")[0])


_HELP = """
import json, sys
REAL = sys.argv[1] == "real"
if REAL:
    import datetime, inspect, platform
from passprice import entry, generated
if "--no-cache" not in sys.argv:
    generated.install_early()
held = entry.standard_modules_held_off()
from passprice.cli import cli
entry.stand_ins_out(held)
from click.testing import CliRunner
import click
texts = {}
def walk(command, path):
    texts[" ".join(path) or "-"] = CliRunner().invoke(cli, [*path, "--help"]).output
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        walk(sub, [*path, name])
walk(cli, [])
print(json.dumps(texts))
"""


def test_every_help_text_is_the_same_with_the_real_modules(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "100"}
    texts = []
    for real in (True, False):
        done = subprocess.run([sys.executable, "-c", _HELP, "real" if real else "held"], capture_output=True,
                              text=True, timeout=300, cwd=REPO, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        texts.append(json.loads(done.stdout))
    assert len(texts[0]) > 30  # the group, 28 commands, 3 subcommands
    assert texts[0] == texts[1]
    assert all(text.startswith("Usage: ") for text in texts[0].values())


def test_a_signal_while_the_group_imports_the_cache_is_said_as_during_the_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Found while timing this change: `--no-cache check` sent SIGHUP 0.05-0.6 s in printed "Aborted!" and exited 1 in
    # 1 of 30 runs (none of 30 with main's code, which imports passprice.cache at the same point: as the group
    # invokes its command, under --no-cache, outside the group's handler of a stopped command).
    from click.testing import CliRunner

    import passprice
    from passprice import cli

    class Stopping:
        @staticmethod
        def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
            if name == "passprice.cache":
                raise cli.Terminated(1)
            return None

    monkeypatch.delitem(sys.modules, "passprice.cache", raising=False)
    monkeypatch.delattr(passprice, "cache", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Stopping, *sys.meta_path])
    result = CliRunner().invoke(cli.cli, ["cards"])
    assert (result.exit_code, result.output) == (129, "passprice: terminated\n")
