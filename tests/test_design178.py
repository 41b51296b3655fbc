"""docs/DESIGN.md and the README say only what the code does: the checkable part of them, held true here.

1. Every backticked span of docs/DESIGN.md that is a dotted name of a package module (`pins.MODEL_TOKENS`,
   `schema.kind_cap(kind)`, `Pricing.limit`-style names reached through the module: `serving.PassShape.cost`)
   resolves: the module imports and each part is an attribute (a class's instance attribute, assigned in its source
   as ``self.NAME``, counts). A span whose first word is a module but which names a record's key (`serving.card`,
   `routing.hot_share`, `entry.name`: the module word is the record's table) must be a key path of a schema in
   schema/; `NAME`, `FIELD`, `ID`, `CARD` stand for any key. Before this test the design named
   `addedfacts.copied_citations` (it is `diff.copied_citations`), `simulate.ahead` (an inner function of
   `simulate.simulate`) and `PassShape`'s `of` (the seed's `PassShape::of` is `serving.pass_shape` here), and four
   variables by a tail no variable has (`_FIT_RUNS` for `PASSPRICE_MAX_FIT_RUNS` …) (test_1_*).
2. Every backticked `Class.attribute` of a package class (one class of that name in the package) in DESIGN.md and
   the README resolves likewise (test_2_*).
3. Every `--flag` of a README command line (a backticked span or a line of a fenced block that starts with a
   command, `passprice` or not, its `# comment` left out) is an option of that command or of `passprice` itself;
   every `--flag` the README names anywhere is passprice's or a named tool's (git, pytest, the benchmarks' scripts
   …, each checked where it is passprice's own script); and every option a command's ``--help`` shows is named in
   the README (a ``--no-X`` through its ``--X``, ``--output`` through ``-o``). ``header --metadata/--tensors``,
   ``synth --mla/--no-mtp`` and ``speculate --passes`` were named nowhere (test_3_*).
4. Every refusal the README or DESIGN.md names by a backticked word after "refus…" is one the code raises (a
   ``name`` of a refusal class, or `CheckpointMissing`, the name reproduce's refusal takes), or, in DESIGN.md, an
   exception class of the package or of Python; the README's exit-status table lists 0, 1, 2, 130, 143 and 129 and
   nothing else, each reached (tests/test_hostile.py, tests/test_hostile_57.py, tests/test_hostile_58.py) (test_4_*).
5. The one cost formula: `cost.pass_terms` is called by the modules DESIGN.md's "One cost formula" names (the
   pass's cost, the batch searches' bounds, the sweep, the step pricer, the roofline through `cost.Lines`), and no
   module outside `cost` divides by a `Pricing`'s rate (test_5_*).
6. DESIGN.md's Command line names the 28 commands and counts the click parameters (it said ~280: 387 now); the
   README's exit status 1 names the judgements that fail (check, reproduce, a review, a sweep priced nowhere), not
   refusals alone (test_6_*).
7. The README's Layout names every module of src/passprice (41 of 95 were missing), DESIGN.md's layout every
   top-level entry, and "Serving stacks" every command that takes ``--stack`` (compare, audit, calibrate and
   validate were not named) (test_7_*).
8. Every other backticked code name (snake_case, CamelCase, a CONSTANT) of DESIGN.md and the README is a word of
   the package's code or data, or one of the other programs' names listed here (test_8_*).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Iterator
from typing import Any

import click
import pytest

import passprice
from cli_helpers import REPO
from passprice import glossary
from passprice.cli import cli

DESIGN = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")
MODULES = frozenset(m.name for m in pkgutil.iter_modules(passprice.__path__))
SPAN = re.compile(r"`([^`\n]+)`")
#: A dotted name, optionally ``passprice.``-qualified and called (``schema.kind_cap(kind)``).
DOTTED = re.compile(r"(?:passprice\.)?([a-z_][a-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(.*\))?")
#: A file's suffix: ``gitread.py``, ``serving.rs``, ``serving.rs.txt`` name files, not attributes.
SUFFIXES = frozenset({"py", "rs", "txt", "toml", "json", "md", "yml"})
#: The placeholders a key path is written with.
PLACEHOLDERS = frozenset({"NAME", "FIELD", "ID", "CARD", "PATH", "KEY"})


# --- helpers --------------------------------------------------------------------------------------------------------


@functools.cache
def _instance_attributes(cls: type) -> set[str]:
    names = {f.name for f in getattr(cls, "__attrs_attrs__", ())} | set(getattr(cls, "_fields", ()))
    names |= set(getattr(cls, "__annotations__", {}))
    for klass in cls.__mro__:
        if not klass.__module__.startswith("passprice"):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        names |= set(re.findall(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]+)?=(?!=)", source))
    return names


def _resolves(obj: Any, parts: list[str]) -> bool:
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif inspect.isclass(obj) and i == len(parts) - 1:
            return part in _instance_attributes(obj)
        else:
            return False
    return True


@functools.cache
def _schema_paths() -> frozenset[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()

    def walk(node: Any, at: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        for key in ("properties", "patternProperties"):
            for name, sub in node.get(key, {}).items():
                path = (*at, name if key == "properties" else "*")
                out.add(path)
                walk(sub, path)
        for key in ("items", "additionalProperties"):
            walk(node.get(key), at)
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(key, []):
                walk(sub, at)
        for sub in node.get("$defs", {}).values():
            walk(sub, at)

    for path in sorted((REPO / "schema").glob("*.schema.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), ())
    return frozenset(out)


def _is_key_path(parts: list[str], paths: frozenset[tuple[str, ...]]) -> bool:
    def matches(want: list[str]) -> bool:
        return any(len(p) == len(want) and all(w in PLACEHOLDERS or k in (w, "*") for w, k in zip(want, p, strict=True))
                   for p in paths)
    return matches(parts) or matches(parts[1:])


def _design_dotted() -> Iterator[tuple[str, str, list[str]]]:
    for span in SPAN.findall(DESIGN):
        m = DOTTED.fullmatch(span)
        if m is None or m[1] not in MODULES:
            continue
        parts = m[2][1:].split(".")
        if parts[-1] in SUFFIXES:
            continue
        yield span, m[1], parts


def _classes() -> dict[str, list[type]]:
    found: dict[str, list[type]] = {}
    # a subpackage's modules too (passprice.review.verdict's Diff): a class defined there is its module's
    every = {m.name for m in pkgutil.walk_packages(passprice.__path__, "passprice.")}
    for name in sorted(every - {"passprice.__main__"}):
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                found.setdefault(attr, []).append(obj)
    return found


# --- 1. DESIGN.md's module.name ------------------------------------------------------------------------------------


def test_1_every_dotted_module_name_of_design_resolves() -> None:
    paths = _schema_paths()
    unresolved: set[str] = set()
    keys: set[str] = set()
    terms: set[str] = set()
    count = 0
    for span, module, parts in _design_dotted():
        count += 1
        if _resolves(importlib.import_module(f"passprice.{module}"), parts):
            continue
        if _is_key_path([module, *parts], paths):
            keys.add(span)
        elif glossary._key(span) in glossary._INDEX:  # a key path `passprice explain` defines: `locks.held`
            terms.add(span)
        else:
            unresolved.add(span)
    assert unresolved == set(), sorted(unresolved)
    assert count >= 900  # 955 spans when this test was written
    # the record key paths among them, each the record's table and a key its schema holds
    assert {"serving.card", "routing.hot_share", "entry.imported_by", "serving.draft.tokens", "serving.FIELD"} <= keys
    assert len(keys) <= 20, sorted(keys)
    assert terms == {"locks.held"}


def test_1_the_names_it_got_wrong_are_right_now() -> None:
    assert "`addedfacts.copied_citations`" not in DESIGN and "`review.quotes.copied_citations`" in DESIGN
    assert "`simulate.ahead`" not in DESIGN and "`simulate.simulate`'s inner `ahead`" in DESIGN
    assert "`PassShape` (`of`," not in DESIGN and "`pass_shape`" in DESIGN
    assert not hasattr(importlib.import_module("passprice.serving").PassShape, "of")
    for tail in ("_FIT_RUNS", "_VALIDATE_RUNS", "_SIDE_FILES", "_SIDE_FACT_FILES"):
        assert f"`{tail}`" not in DESIGN and f"`PASSPRICE_MAX{tail}`" in DESIGN
        settings = importlib.import_module("passprice.settings")
        assert f"PASSPRICE_MAX{tail}" in dict(settings.VARIABLES)


@pytest.mark.parametrize(("parts", "found"), [
    (["serving", "card"], True), (["serving", "FIELD"], True), (["routing", "hot_share"], True),
    (["entry", "origin"], True), (["serving", "no_such_key"], False), (["routing", "hotness"], False),
])
def test_1_a_key_path_is_one_a_schema_holds(parts: list[str], found: bool) -> None:
    assert _is_key_path(parts, _schema_paths()) is found


# --- 2. Class.attribute ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("document", ["docs/DESIGN.md", "README.md"])
def test_2_every_class_attribute_resolves(document: str) -> None:
    # the README names none today (`PassShape`, `ServingCost` … alone); one it names must resolve
    classes = {name: found for name, found in _classes().items() if len(found) == 1}
    text = (REPO / document).read_text(encoding="utf-8")
    bad: set[str] = set()
    count = 0
    for span in SPAN.findall(text):
        for m in re.finditer(r"(?<![\w.])(_?[A-Z][A-Za-z0-9]+)\.([a-z_][A-Za-z0-9_]*)(?![\w.])", span):
            if m[1] in classes:
                count += 1
                if not _resolves(classes[m[1]][0], [m[2]]):
                    bad.add(m.group())
    assert bad == set(), sorted(bad)
    assert count >= (100 if document == "docs/DESIGN.md" else 0)


def test_2_an_instance_attribute_counts_and_a_missing_one_does_not() -> None:
    classes = _classes()
    assert _resolves(classes["InputError"][0], ["lines"])  # self.lines = … in __init__
    assert _resolves(classes["Sweeper"][0], ["saw_price"])
    assert not _resolves(classes["PassShape"][0], ["of"])


# --- 3. the README's flags ------------------------------------------------------------------------------------------


def _commands() -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}

    def walk(group: click.Group, at: tuple[str, ...]) -> None:
        for name, command in group.commands.items():
            out[" ".join((*at, name))] = command
            if isinstance(command, click.Group):
                walk(command, (*at, name))

    walk(cli, ())
    return out


def _options(command: click.Command, hidden: bool = True) -> set[str]:
    return {o for p in command.params if hidden or not getattr(p, "hidden", False)
            for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())) if o.startswith("-")} | {"--help",
                                                                                                          "-h"}


FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
#: Flags the README gives other tools: git, cargo, pip, pytest, pre-commit, llama.cpp's llama-quantize, and
#: passprice's own scripts (benchmarks/bench.py, benchmarks/registry_scale.py, ``python -m passprice.ggml``), each
#: of those checked in its script.
OTHER_TOOLS = frozenset({"--all-files", "--allow-requantize", "--assert", "--cached", "--detach", "--locked",
                         "--oneline", "--until"})
SCRIPTS = {"--quick": "benchmarks/bench.py", "--only": "benchmarks/bench.py", "--compare": "benchmarks/bench.py",
           "--baseline-reader": "benchmarks/bench.py", "--shapes": "benchmarks/registry_scale.py",
           "--cold": "benchmarks/registry_scale.py", "--before": "benchmarks/registry_scale.py",
           "--write": "src/passprice/ggml.py"}


def _command_lines(text: str) -> Iterator[tuple[str, str]]:
    """(command, its arguments) of each backticked span and each fenced line (a ``\\`` continuation joined) that
    starts with a passprice command, with or without ``passprice``/``$ ``."""
    commands = sorted(_commands(), key=len, reverse=True)
    fenced: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            if fenced and fenced[-1].endswith("\\"):
                fenced[-1] = fenced[-1][:-1] + " " + line.strip()
            else:
                fenced.append(line)
    for piece, spanned in [*((s, True) for s in SPAN.findall(text)), *((f, False) for f in fenced)]:
        words = re.sub(r"^\$ ", "", re.split(r" #| \| | && |; ", piece)[0].strip())
        if not spanned and not words.startswith("passprice "):
            continue
        words = re.sub(r"^passprice (?:--root \S+ |--no-cache )*", "", words)
        for command in commands:
            if words == command or words.startswith(command + " "):
                yield command, words[len(command):]
                break


@pytest.mark.parametrize(("document", "least"), [("README.md", 400), ("docs/DESIGN.md", 200)])
def test_3_every_flag_of_a_command_line_is_that_command_s(document: str, least: int) -> None:
    # 433 of the README's, 218 of DESIGN.md's when this test was written
    commands = _commands()
    top = _options(cli)
    bad = []
    count = 0
    for command, rest in _command_lines((REPO / document).read_text(encoding="utf-8")):
        for flag in FLAG.findall(rest):
            count += 1
            if flag not in _options(commands[command]) and flag not in top:
                bad.append((command, flag, rest[:80]))
    assert bad == [], bad
    assert count >= least


def test_3_every_flag_the_readme_names_is_passprice_s_or_a_named_tool_s() -> None:
    everything = set().union(*(_options(c) for c in _commands().values())) | _options(cli)
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", README))
    assert sorted(named - everything - OTHER_TOOLS - set(SCRIPTS)) == []
    for flag, script in SCRIPTS.items():
        assert flag in named and f'"{flag}"' in (REPO / script).read_text(encoding="utf-8"), (flag, script)


def test_3_every_option_a_help_shows_is_in_the_readme() -> None:
    missing = {}
    for name, command in _commands().items():
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            spelled = [o for o in (*param.opts, *param.secondary_opts) if o.startswith("-")]
            if not any(re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", README) for o in spelled):
                missing.setdefault(name, []).append(spelled[0])
    assert missing == {}, missing
    for added in ("--metadata --tensors", "`--mla split`", "`--mla joined`", "`--no-mtp`", "(`--passes`, 100,000"):
        assert added in README


def test_3_the_options_documented_here_do_what_the_readme_says(tmp_path: Any) -> None:
    from cli_helpers import invoke

    header = str(REPO / "tests" / "data" / "gemma3-270m-q4_k_m.header.gguf.xz")
    plain = invoke("header", header).stdout
    listed = invoke("header", header, "--metadata", "--tensors").stdout
    key, tensor = re.compile(r"(?m)^key +type +value$"), re.compile(r"(?m)^tensor +type +dims +bytes$")
    assert not key.search(plain) and not tensor.search(plain)
    assert key.search(listed) and tensor.search(listed)
    config = str(REPO / "examples" / "configs" / "deepseek-v3.json")
    counts = []
    for i, more in enumerate(((), ("--no-mtp",), ("--mla", "joined"))):
        out = invoke("synth", config, "-o", str(tmp_path / f"{i}.gguf"), *more, "--json")
        assert out.exit_code == 0, out.output
        counts.append(json.loads(out.stdout)["tensors"])
    assert counts == [1108, 1086, 1046]
    assert "Q4_K_M builds 1,108 tensors, 1,086 with `--no-mtp`, 1,046 with `--mla joined`" in README
    passes = next(p for p in _commands()["speculate"].params if p.name == "passes")
    seed = next(p for p in _commands()["speculate"].params if p.name == "seed")
    assert (passes.default, seed.default) == (100_000, 0)


# --- 4. refusals and exit statuses ----------------------------------------------------------------------------------


@functools.cache
def _refusal_names() -> frozenset[str]:
    # each refusal class states its name as a class attribute, ``name = "NotResident"``
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "src" / "passprice").rglob("*.py")))
    names = set(re.findall(r'(?m)^    name = "([A-Z][A-Za-z]+)"$', source))
    # reproduce's refusal of a pinned checkpoint takes one of two names
    names |= {n for pair in re.findall(r'self\.name = "(\w+)" if .* else "(\w+)"', source) for n in pair}
    return frozenset(n for n in names if re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][A-Za-z]*)*", n))  # not cli's "integer"


def test_4_every_refusal_the_code_has_is_explained() -> None:
    names = _refusal_names()
    assert len(names) == 35 and "CheckpointMissing" in names and "integer" not in names
    # `passprice explain NAME` defines each (CheckpointMissing through CheckpointChanged's entry)
    assert sorted(n for n in names if glossary._key(n) not in glossary._INDEX) == []


def _named_after_refus(text: str) -> set[str]:
    found = set()
    for m in re.finditer(r"(?i)\brefus", text):
        found |= set(re.findall(r"`([A-Z][a-z]+(?:[A-Z][A-Za-z0-9]*)*)[:`]", text[m.start():m.start() + 120]))
    return found


def test_4_every_refusal_the_readme_names_is_the_code_s() -> None:
    names = _refusal_names()
    assert {"NotResident", "Routed", "FlatCurve", "LockFloor", "StaleFacts", "CheckpointMissing", "OutOfScope",
            "BeyondStack", "Step"} <= names
    named = _named_after_refus(README)
    assert len(named) >= 20 and named - names == set(), sorted(named - names)
    # the exit-status table's example refusals and the glossary's list of refusals
    assert {"NotResident", "Routed", "FlatCurve"} <= names
    glossary = re.search(r"- \*\*refusal\*\*: (.*)", README)
    assert glossary is not None
    assert set(re.findall(r"`([A-Z][A-Za-z]+)`", glossary[1])) - {"--json"} <= names


def test_4_every_refusal_design_names_is_the_code_s_or_an_exception() -> None:
    names = _refusal_names()
    classes = {n for n, found in _classes().items() if any(issubclass(c, BaseException) for c in found)}
    python = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
              and issubclass(getattr(builtins, n), BaseException)}
    seed = {"Draft", "TensorInfo", "None", "DecodeRefusal", "ServingRefusal"}  # the seed's names, the JSON null
    named = _named_after_refus(DESIGN)
    assert len(named) >= 30
    assert named - names - classes - python - seed == set(), sorted(named - names - classes - python - seed)


def test_4_the_exit_status_table_lists_what_the_command_exits_with() -> None:
    table = re.search(r"\| exit status \| meaning \|\n\| --- \| --- \|\n((?:\|.*\n)+)", README)
    assert table is not None
    statuses = [s.strip() for row in table[1].splitlines() for s in row.split("|")[1].split(",")]
    assert statuses == ["0", "1", "2", "130", "143", "129"]
    entry = (REPO / "src" / "passprice" / "entry.py").read_text(encoding="utf-8")
    assert "os._exit(128 + number)" in entry  # 130 = 128 + SIGINT, 143 + SIGTERM, 129 + SIGHUP
    for test in ("test_hostile.py", "test_hostile_57.py", "test_hostile_58.py"):
        assert (REPO / "tests" / test).is_file()


# --- 5. one cost formula --------------------------------------------------------------------------------------------


def test_5_one_cost_formula_called_where_design_says() -> None:
    section = DESIGN.split("## One cost formula", 1)[1].split("\n## ", 1)[0]
    assert "`PassShape.cost`, the batch searches' bounds (`Lines`" in section
    callers = {}
    for path in sorted((REPO / "src" / "passprice").rglob("*.py")):  # a subpackage's modules too (review/)
        text = path.read_text(encoding="utf-8")
        if path.stem != "cost":
            callers[path.stem] = ("pass_terms(" in text, "Lines.of(" in text)
            # no module prices a term itself: every rate is divided by in cost.py alone
            assert not re.search(r"/ *(?:pricing|rates|self\._rates)\.(?:read|rewrite|append|host_read|host_write|"
                                 r"array|vector|scale)\b", text), path.name
    assert {m for m, (terms, _) in callers.items() if terms} == {"batching", "serving", "steps", "sweep"}
    assert {m for m, (_, lines) in callers.items() if lines} == {"batching", "roofline"}
    cost_of = inspect.getsource(importlib.import_module("passprice.serving").PassShape.cost)
    assert "pass_terms(" in cost_of and "pass_seconds(" in cost_of


# --- 6. the command line section ------------------------------------------------------------------------------------


def test_6_design_lists_every_command_and_counts_the_parameters() -> None:
    section = DESIGN.split("## Command line\n", 1)[1].split("\n## ", 1)[0]
    listed = section.split("**Where decisions live.**", 1)[0].split(". Every command:", 1)[0]
    named = {m.split()[0] for m in SPAN.findall(listed) if re.fullmatch(r"[a-z][a-z-]*(?: [A-Z]+| [a-z|]+)?", m)}
    named -= {"passprice"}  # `passprice` (click): the program, then its commands
    assert named == set(cli.commands), named ^ set(cli.commands)
    assert f"{len(cli.commands)} commands in all" in section
    options = arguments = 0
    plots = set()
    groups: list[click.Command] = [cli]
    while groups:
        group = groups.pop()
        for param in group.params:
            options += isinstance(param, click.Option)
            arguments += isinstance(param, click.Argument)
            plots |= {group.name} if "--plot" in getattr(param, "opts", ()) else set()
        if isinstance(group, click.Group):
            groups.extend(group.commands.values())
    # the ~390 parameters click builds when a command is first used (about 280 when the sentence was written)
    assert f"of the ~390 defined: {options} options and {arguments} arguments)" in section
    assert abs(options + arguments - 390) <= 39
    assert plots == {"roofline", "sweep", "simulate", "audit", "validate"}
    assert "`--plot FILE` of `roofline`, `sweep`, `simulate`, `audit` or\n`validate`" in section


def test_6_the_readme_s_status_1_names_the_judgements_that_fail() -> None:
    row = next(line for line in README.splitlines() if line.startswith("| 1 | a refusal"))
    for said in ("a `sweep` none of whose rows has a price", "`check` FAILED", "a lock `reproduce` does not reproduce",
                 "a review (`diff`) that fails"):
        assert said in row
    cli_source = "".join(p.read_text(encoding="utf-8")
                         for p in sorted((REPO / "src" / "passprice" / "cli").glob("*.py")))  # its modules, all
    assert cli_source.count("ctx.exit(1)") == 5  # two refusal handlers, reproduce, check, a sweep priced nowhere
    assert "ctx.meta[STATUS] = 0 if rep.equals else 1" in cli_source
    assert "ctx.meta[STATUS] = 2 if report.unreadable else 0 if report.ok(frozen) else 1" in cli_source


# --- 7. the layouts and the commands a stack is given to ------------------------------------------------------------


def test_7_the_readme_layout_names_every_module() -> None:
    block = README.split("src/passprice/         the library", 1)[1].split("\ntests/ ", 1)[0]
    named = set(re.findall(r"\b([a-z_]+)\b", re.sub(r"\([^)]*\)", "", block)))
    modules = {p.stem for p in (REPO / "src" / "passprice").glob("*.py")} - {"__init__", "__main__"}
    assert sorted(modules - named) == []  # 41 of 95 were missing
    assert len(modules) >= 90


def test_7_the_design_layout_names_every_top_level_entry() -> None:
    block = DESIGN.split("## Repository layout (top level)\n\n```\n", 1)[1].split("```", 1)[0]
    named = {re.split(r"[/ ,]", line.strip(), maxsplit=1)[0] for line in block.splitlines() if line.strip()}
    named |= set(re.findall(r"(?<![\w/])(\.[a-z][\w.-]*)", block))
    tracked = {p.name for p in REPO.iterdir()} & {
        ".ci", ".gitattributes", ".github", ".gitignore", ".pre-commit-hooks.yaml", "README.md", "benchmarks", "docs",
        "examples", "facts", "hatch_build.py", "locks", "pyproject.toml", "registry", "schema", "sources", "src",
        "tests"}
    assert len(tracked) >= 15  # a checkout (an sdist may lack the dot files)
    assert sorted(tracked - named) == []


def test_7_design_says_every_command_a_stack_is_given_to() -> None:
    with_stack = {name for name, command in _commands().items() if "--stack" in _options(command)}
    assert with_stack == {"price", "best", "compare", "max-batch", "lock", "audit", "sweep", "roofline", "speculate",
                          "simulate", "calibrate", "validate"}
    section = DESIGN.split("## Serving stacks", 1)[1].split("\n## ", 1)[0]
    said = section.split("`--stack S` on ", 1)[1].split("without `--stack` nothing changes", 1)[0]
    assert {c for c in with_stack if f"`{c}`" in said or f"`{c} --stack`" in said} == with_stack


# --- 8. every other backticked code name ----------------------------------------------------------------------------

#: Names DESIGN.md gives that are other programs' (each where it is said): Linux's capability and open flag, the
#: environment's TZ, pickle's opcode, coreutils' close_stdout, git's file_stat_matches, llama.cpp's size_base and
#: swa_full and its tensor names ssm_d and token_embd_norm, cattrs' ClassValidationError (a derivation's input
#: name both_ways is code's now: quotecolumn reads it), tests/test_forge110.py's LEFT and a test named by its
#: function (test_leftovers_27).
OTHERS = frozenset({"CAP_DAC_OVERRIDE", "O_DIRECT", "TZ", "LONG_BINPUT", "close_stdout", "file_stat_matches",
                    "size_base", "swa_full", "ssm_d", "token_embd_norm", "ClassValidationError", "LEFT",
                    "test_leftovers_27"})
#: The README's: gguf's ``GGUFWriter`` methods a test of one's own builds a header with.
README_OTHERS = frozenset({"add_block_count", "add_expert_count", "add_expert_used_count"})


@functools.cache
def _code_words() -> frozenset[str]:
    code = "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "src" / "passprice").rglob("*"))
                     if p.is_file() and p.suffix in (".py", ".json", ".toml", ".yml", ".md"))
    return frozenset(re.findall(r"\w+", code))


def _unknown_code_names(text: str, others: frozenset[str]) -> tuple[set[str], int]:
    """The spans of ``text`` that are one identifier written as code (snake_case, CamelCase or a CONSTANT; ``()``
    allowed) naming nothing in src/passprice or its package data and none of ``others``; and how many there are."""
    missing = set()
    count = 0
    for span in set(SPAN.findall(text)):
        name = span.removesuffix("()")
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or not (
                "_" in name.strip("_") or re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*|[A-Z][A-Z0-9_]+", name)):
            continue
        count += 1
        if name not in _code_words() and name not in others:
            missing.add(name)
    return missing, count


def test_8_every_backticked_code_name_of_design_is_in_the_code() -> None:
    missing, count = _unknown_code_names(DESIGN, OTHERS)
    assert missing == set(), sorted(missing)
    assert count >= 450  # 493 distinct names when this test was written
    # each other program's name is still said, and (but two common words) still no name of passprice's
    assert all(f"`{name}`" in DESIGN for name in OTHERS)
    assert {name for name in OTHERS if name in _code_words()} <= {"LEFT", "TZ"}


def test_8_every_backticked_code_name_of_the_readme_is_in_the_code() -> None:
    missing, count = _unknown_code_names(README, README_OTHERS)
    assert missing == set(), sorted(missing)
    assert count >= 200


# --- 9. units --------------------------------------------------------------------------------------------------------


def test_9_the_units_design_lists_are_the_card_schema_s() -> None:
    # DESIGN.md's Facts: "`B`, `kB`/`MB`/`GB`/`TB`/`PB` … and `KiB`/`MiB`/`GiB`/`TiB` …; `B/s` with the same prefixes;
    # `MAC/s` (with `G`/`T`/`P`); `Hz` (with `k`/`M`/`G`/`T`) or `cycle/s` (with `G`/`T`); `1` for shares" (`PB`
    # and the lane rates' prefixes were not said)
    said = DESIGN.split("**Units** are explicit and exact: ", 1)[1].split("for shares;", 1)[0]
    for piece in ("`kB`/`MB`/`GB`/`TB`/`PB`", "`KiB`/`MiB`/`GiB`/`TiB`", "`B/s` with the same prefixes",
                  "`MAC/s` (with `G`/`T`/`P` prefixes)", "`Hz` (with `k`/`M`/`G`/`T`)", "`cycle/s` (with `G`/`T`)"):
        assert piece in said.replace("\n", " "), piece
    capacities = ["B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB"]
    want = [capacities, [f"{u}/s" for u in capacities], ["MAC/s", "GMAC/s", "TMAC/s", "PMAC/s"],
            ["Hz", "kHz", "MHz", "GHz", "THz", "cycle/s", "Gcycle/s", "Tcycle/s"], ["1"]]
    text = (REPO / "schema" / "card.schema.json").read_text(encoding="utf-8")
    enums = {tuple(json.loads(m)) for m in re.findall(r'"unit": \{\s*"enum": (\[[^]]*\])', text)}
    assert enums == {tuple(w) for w in want}


# --- 10. the package's own size, as the caps' sentences state it -----------------------------------------------------


def test_10_the_package_s_token_counts_design_states_are_near_today_s() -> None:
    from passprice import pins, sidecode

    own = sum(pins._count_tokens(p.read_bytes()) for p in pins.PACKAGE.rglob("*.py"))
    said = re.search(r"this package's\n?\s*own ([\d,]+) at commit \w+, ([\d.]+) %, a test holding them under 80 %",
                     DESIGN)
    assert said is not None
    figure = int(said[1].replace(",", ""))
    assert figure == 728_283 and said[2] == f"{100 * figure / sidecode.SIDE_TOKENS:.1f}"  # 691,339 before
    assert abs(own - figure) <= 0.1 * figure, own  # past 10 %: write today's figure
    message = (REPO / "src" / "passprice" / "sidecode.py").read_text(encoding="utf-8")
    hold = re.search(r"this passprice's own hold about ([\d,]+)", message)
    assert hold is not None and abs(own - int(hold[1].replace(",", ""))) <= 0.1 * own, own  # it said 640,000


# --- 11. the caps' "N times the largest shipped file" ----------------------------------------------------------------


def test_11_each_cap_s_ratio_to_the_largest_shipped_file_is_today_s() -> None:
    from passprice import edit, schema

    kinds = ("facts", "registry/servings", "registry/measurements", "locks", "sources")
    files = [p for top in kinds for p in (REPO / top).rglob("*.toml") if "excerpts" not in p.parts]
    largest = max(files, key=lambda p: p.stat().st_size)
    assert largest.name == "r1-qwen7b-h200-llamacpp.lock.toml"  # a 93 KB stack was the largest when it was said
    size = largest.stat().st_size  # a re-lock rewrites its prices: its size moves by a few hundred bytes
    ratio = schema.MAX_FILE_BYTES / size
    stack = r"([\d.]+) times the largest shipped file, the (\d+) KB stack lock"
    lock = r"([\d.]+) times the largest shipped, the (\d+) KB lock of `r1-qwen7b-h200-llamacpp`"
    for pattern, text in ((stack, DESIGN), (lock, README)):
        said = re.search(pattern, text)
        assert said is not None, pattern
        assert abs(float(said[1]) - ratio) <= 0.1 and abs(int(said[2]) * 1000 - size) <= 0.05 * size, (ratio, size)
    card = max((REPO / "facts" / "cards").glob("*.toml"), key=lambda p: p.stat().st_size)
    times = {6: "six", 7: "seven", 8: "eight"}[int(edit.MAX_EDITED_BYTES / card.stat().st_size)]
    kb = round(card.stat().st_size / 1000)
    assert f"(128 KiB, {times} times the largest card, {card.stem}'s {kb} KB)" in DESIGN  # it said eight
    assert f"({times} times the largest card, {kb} KB;" in README


def test_11_the_sizes_the_blob_caps_sentence_gives_are_today_s() -> None:
    package = REPO / "src" / "passprice"
    largest = max(package.glob("*.py"), key=lambda p: p.stat().st_size)
    # Each merge grows these files a little (a module, the list of pricing models a re-lock appends to): the
    # sentence must name the right file and a size within 10 % of today's (0.58 MB and 159 KB were stale).
    said = re.search(r"\(the largest, `([\w.]+)`, is ([\d.]+) MB\)", DESIGN)
    assert said is not None and said[1] == largest.name
    assert abs(float(said[2]) * 1e6 - largest.stat().st_size) <= 0.1 * largest.stat().st_size, largest.stat().st_size
    listed = (package / "pricing_models.json").stat().st_size
    said = re.search(r"`modelhistory.KNOWN_BYTES`, 1 MiB \(shipped: (\d+) KB\)\.", DESIGN)
    assert said is not None and abs(int(said[1]) * 1000 - listed) <= 0.1 * listed, listed
    schemas = max((REPO / "schema").glob("*.json"), key=lambda p: p.stat().st_size)
    said = re.search(r"\(the largest shipped, `([\w.-]+)`, is (\d+) KB\)", DESIGN)
    assert said is not None and said[1] == schemas.name
    assert abs(int(said[2]) * 1000 - schemas.stat().st_size) <= 0.1 * schemas.stat().st_size, schemas.stat().st_size


def test_4_every_exit_status_the_documents_name_is_one_of_the_table_s() -> None:
    for text in (README, DESIGN):
        said = set(re.findall(r"\bexit (?:status |code )?(\d+)", text))
        assert said <= {"0", "1", "2", "130", "143", "129", "3"}, said
    # 3 is a side process's (sidecode: a failing exit of a review side's process), never a command's
    assert re.findall(r"\bexit (?:status |code )?3\b", README) == []
    assert len(re.findall(r"\bexit (?:status |code )?3\b", DESIGN)) == 1
    assert "a failing exit fails the ask (`exit status 3`)" in DESIGN


# --- 12. files named ------------------------------------------------------------------------------------------------

#: Paths the documents name that are other repositories' (LMDeploy's benchmark table, vLLM's MoE benchmark) or a
#: placeholder (the README's ``tests/test_X.py``).
ELSEWHERE = frozenset({"docs/en/benchmark/a100_fp16.md", "benchmarks/kernels/benchmark_moe.py", "tests/test_X.py"})


@pytest.mark.parametrize(("document", "least"), [("README.md", 50), ("docs/DESIGN.md", 200)])
def test_12_every_file_of_this_repository_a_document_names_is_here(document: str, least: int) -> None:
    text = (REPO / document).read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w/.-])((?:tests|benchmarks|src/passprice|docs)/[\w/.-]*\w)", text))
    named |= {f"tests/{m}" for m in re.findall(r"(?<![/\w])(test_\w+\.py)", text)}
    named = {n for n in named if re.search(r"\.\w+$", n)}  # files, not folders
    assert len(named) >= least
    assert sorted(n for n in named - ELSEWHERE if not (REPO / n).exists()) == []
    # the shipped copy of the seed the design's opening names
    assert "its copy here is `docs/seed/serving.rs.txt`" in DESIGN and (REPO / "docs/seed/serving.rs.txt").is_file()
