"""Cache entries of the wrong shape that the code took for values (issue 13), checked where they are served, cheaply.

An entry forged with its checksum re-computed is read back. Most of the wrong shape fail where they are used and the
command runs again reading no entry (``cache.served_again``, tests/test_forge110.py); what did not fail answered
otherwise than an empty cache: every tuple one item short made ``price``, ``best``, ``audit``, ``reproduce`` and
``sweep`` print other figures (a header's tensor table one tensor short refused "its content changed since the lock";
a pass shape without its expert stream priced a mixture of experts dense: memory 3.364 ms where 7.827 ms), one item
long made ``price qwen3-30b-a3b-mi300x`` refuse "BadContexts: the shares sum to 2", an extra top-level key in every
document made ``diff`` say "BASE's lock file does not read", a grid document's card ``1.5`` made ``sweep`` say "card
'1.5': not found" (exit 2). Now a served object must hold its class's writer rule (``passprice.entryshape``: a
dict look-up by class, then a rule reading the object's own fields) and a served document its schema's top level
(``schema._shaped``: a key-set comparison, a look-up a key), or it is a miss, rebuilt and stored over. A walk of
every field of every object served (a branch before this one) cost a warm ``price`` 4-6 % and ``check`` 6.8 %.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from cli_helpers import REPO
from passprice import cache, entryshape, pins, schema
from passprice.checkpoints import _row_holds
from passprice.sources import _paths_hold
from test_forge110 import _run, _seal

COMMANDS = [
    ("check",), ("price", "qwen3-30b-a3b-mi300x"), ("sweep", "--file", "examples/grid.toml", "--format", "json"),
]


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder ``check``, a mixture of experts' price and a sweep have filled (twice: the second run stores
    what the first read)."""
    folder = tmp_path_factory.mktemp("warm132") / "cache"
    for _ in range(2):
        for args in COMMANDS:
            _run(folder, args)
    shutil.rmtree(folder / "memo", ignore_errors=True)
    return folder


@pytest.fixture(scope="module")
def objects(warm: Path) -> dict[str, list[Any]]:
    """Every object of the warm cache (a batch's each; a tuple entry's items), by class name."""
    out: dict[str, list[Any]] = {}
    for entry in sorted((warm / "objects").iterdir()):
        raw = entry.read_bytes()
        head = cache._unpickle(raw, raw.index(b"\n") + 1)
        held = cache._read_batch(entry, head[0]).values() if len(head) == 3 else [head[1]]  # type: ignore[union-attr]
        for obj in held:
            for item in obj if type(obj) is tuple else (obj,):
                out.setdefault(type(item).__name__, []).append(item)
    return out


def _one(objects: dict[str, list[Any]], name: str, test: Any = lambda o: True) -> Any:
    return next(o for o in objects[name] if test(o))


def test_every_object_a_warm_cache_holds_keeps_its_writer_rule(objects: dict[str, list[Any]]) -> None:
    # Were one not to hold, it would be built again on every run: a warm cache would never be warm for it.
    assert {"GGUFHeader", "PassShape", "ServingSpec", "DecodeStep", "DraftMethod"} <= objects.keys()
    for name, held in objects.items():
        for obj in held:
            assert entryshape.holds(obj), name


@pytest.mark.parametrize(
    ("folder", "kind"),
    [("facts/cards", "card"), ("facts/drafts", "draft"), ("facts/routing", "routing"), ("facts/stacks", "stack"),
     ("registry/checkpoints", "checkpoint"), ("registry/measurements", "measurement"), ("registry/servings", "serving"),
     ("locks", "lock"), ("sources", "source"), ("examples", "sweep")],
)
def test_every_document_the_registry_makes_has_its_schemas_shape(folder: str, kind: str) -> None:
    # What build stores is the parsed, validated file: each must hold, or it would be parsed again on every run.
    schemas = str(schema.schema_dir())
    paths = sorted((REPO / folder).glob("*.toml"))
    if kind == "sweep":
        paths = [REPO / "examples/grid.toml"]
    assert paths
    for path in paths:
        document = schema.load(path, kind, kept=False)
        assert schema._shaped(document, kind, schemas), path


def test_a_tuple_of_a_tied_length_one_item_short_or_long_does_not_hold(objects: dict[str, list[Any]]) -> None:
    header = _one(objects, "GGUFHeader")
    short = attrs.evolve(header, tensors=header.tensors[:-1])  # its index rebuilt: a header of one tensor fewer
    assert entryshape.holds(short)  # right-shaped: the header of another file
    object.__setattr__(short, "_index", header._index)  # what a forged pickle keeps: the index of the whole table
    assert not entryshape.holds(short)
    step = _one(objects, "DecodeStep")
    for forged in (attrs.evolve(step, held=step.held[:-1]), attrs.evolve(step, held=(*step.held, step.held[0])),
                   attrs.evolve(step, layers=step.layers[:-1])):
        assert not entryshape.holds(forged)
    spec = _one(objects, "ServingSpec", lambda s: s.contexts)
    assert not entryshape.holds(attrs.evolve(spec, contexts=(*spec.contexts, spec.contexts[0])))  # shares sum to 2
    assert not entryshape.holds(attrs.evolve(spec, contexts=()))
    moe = _one(objects, "PassShape", lambda s: s.experts)
    assert not entryshape.holds(attrs.evolve(moe, experts=()))  # a routed pass priced dense
    assert not entryshape.holds(attrs.evolve(moe, experts=(*moe.experts, moe.experts[0])))
    assert not entryshape.holds(attrs.evolve(moe, facts=moe.facts[:-1]))
    assert not entryshape.holds(attrs.evolve(moe, float_macs=(*moe.float_macs, *moe.float_macs[:1])))
    assert not entryshape.holds((moe, attrs.evolve(moe, experts=())))  # a kind kept as a tuple: each item's rule
    assert entryshape.holds((moe, None))
    method = _one(objects, "DraftMethod")
    assert not entryshape.holds(attrs.evolve(method, acceptance=()))
    assert not entryshape.holds(attrs.evolve(method, acceptance=method.acceptance * 65))
    # a tuple of free length one short is right-shaped: a method of fewer figures, as its file could say
    assert entryshape.holds(attrs.evolve(method, acceptance=method.acceptance[:1]))


def test_a_rule_that_raises_on_a_field_of_another_type_does_not_hold(objects: dict[str, list[Any]]) -> None:
    moe = _one(objects, "PassShape", lambda s: s.experts)
    assert not entryshape.holds(attrs.evolve(moe, experts=None))
    assert not entryshape.holds(attrs.evolve(moe, rows_per_sequence="1"))
    header = _one(objects, "GGUFHeader")
    assert not entryshape.holds(attrs.evolve(header, metadata=[]))
    # a class without a rule holds: its fields are what the code reads, failing there (run again) or read as values
    card_like = object()
    assert entryshape.holds(card_like)


def test_a_document_of_another_shape_than_its_schemas_top_level_does_not_hold() -> None:
    schemas = str(schema.schema_dir())
    document = schema.load(REPO / "facts/cards/h200_sxm_141gb.toml", "card", kept=False)
    assert schema._shaped(document, "card", schemas)
    assert not schema._shaped({**document, "extra": [1]}, "card", schemas)  # the schema allows no other key
    assert not schema._shaped({k: v for k, v in document.items() if k != "card"}, "card", schemas)  # required
    assert not schema._shaped({**document, "memory": "x"}, "card", schemas)  # a text where a table was
    assert not schema._shaped({}, "card", schemas) and not schema._shaped([], "card", schemas)
    grid = schema.load(REPO / "examples/grid.toml", "sweep", kept=False)
    assert schema._shaped(grid, "sweep", schemas)
    assert not schema._shaped({**grid, "cards": [1.5]}, "sweep", schemas)  # "card '1.5': not found" before
    assert not schema._shaped({**grid, "cards": "h200_sxm_141gb"}, "sweep", schemas)
    # below the top level a value within its type is a value: a table's keys are not walked (what it costs)
    assert schema._shaped({**document, "memory": {"x": 1}}, "card", schemas)
    check = schema._document_shape("card", schemas)
    assert check is schema._document_shape("card", schemas)  # compiled once a process
    assert not schema._shaped(document, "no-such-kind", schemas)  # a schema that does not read holds nothing


def test_the_writers_of_documents_without_a_schema_say_their_shape() -> None:
    row = {"name": "m", "architecture": "qwen2", "tensors": 339, "tensor_bytes": 1, "context_length": None,
           "sha256": "0" * 64, "draft_tensor_bytes": 0, "origin": "Synthetic: x", "synthetic": True}
    assert _row_holds(row, "m")
    assert not _row_holds(row, "other")
    assert not _row_holds({**row, "extra": 1}, "m")
    assert not _row_holds({**row, "tensors": "339"}, "m")
    assert not _row_holds({**row, "synthetic": False}, "m")
    assert _row_holds({**row, "unknown_type_tensors": 2}, "m")
    assert not _row_holds({k: v for k, v in row.items() if k != "sha256"}, "m")
    assert _paths_hold({"paths": {"a": "sources/a.toml"}})
    assert not _paths_hold({}) and not _paths_hold({"paths": {"a": 1}}) and not _paths_hold({"paths": {}, "x": 1})


def test_a_kept_pricing_tree_with_a_key_more_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: an extra top-level key in every document was read as the tree (diff's output changed with it).
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    cache.configure(True)
    sha = "0" * 64
    pins._keep_tree(sha, pins._Tree("tree text", ("cache",), 3))
    kept = pins._kept_tree(sha)
    assert kept is not None and (kept.text, kept.imports, kept.tokens) == ("tree text", ("cache",), 3)
    stored = cache.read(pins._tree_key(sha))
    assert stored is not None
    cache.store(pins._tree_key(sha), {**stored, "extra": [1]})
    assert pins._kept_tree(sha) is None


def _forge(folder: Path, forge: Any) -> int:
    """Forge each object entry of ``folder`` ``forge`` changes (it returns the object, changed or not; a batch's
    each), its checksum re-computed; the number changed."""
    changed = 0
    for entry in sorted((folder / "objects").iterdir()):
        raw = entry.read_bytes()
        head = cache._unpickle(raw, raw.index(b"\n") + 1)
        if len(head) == 3:
            held = cache._read_batch(entry, head[0])
            assert held is not None
            made = {k: forge(o) for k, o in held.items()}
            if any(made[k] is not held[k] for k in held):
                entry.unlink()
                cache._write_batch(entry, head[0], made)
                changed += 1
            continue
        obj = forge(head[1])
        if obj is not head[1]:
            entry.write_bytes(_seal(pickle.dumps((head[0], obj), protocol=5)))
            changed += 1
    return changed


@pytest.mark.parametrize(
    ("what", "args"),
    [
        ("contexts one long", ("price", "qwen3-30b-a3b-mi300x")),  # before: BadContexts, the shares sum to 2 (exit 1)
        ("experts one short", ("price", "qwen3-30b-a3b-mi300x")),  # before: memory 3.364 ms, not 7.827 ms
        ("tensors one short", ("check",)),  # before: "its content changed since the lock", 3 of 10 locks FAIL
    ],
)
def test_a_forged_entry_of_the_wrong_shape_answers_as_an_empty_cache(
    what: str, args: tuple[str, ...], warm: Path, tmp_path: Path
) -> None:
    def forge(obj: Any) -> Any:
        name = type(obj).__name__
        if what == "contexts one long" and name == "ServingSpec" and obj.contexts:
            return attrs.evolve(obj, contexts=(*obj.contexts, obj.contexts[0]))
        if what == "experts one short" and name == "PassShape" and obj.experts:
            return attrs.evolve(obj, experts=obj.experts[:-1])
        if what == "tensors one short" and name == "GGUFHeader":
            short = attrs.evolve(obj, tensors=obj.tensors[:-1])
            object.__setattr__(short, "_index", obj._index)
            return short
        return obj

    folder = tmp_path / "cache"
    shutil.copytree(warm, folder)
    assert _forge(folder, forge) > 0
    expected = _run(tmp_path / "empty", args)
    assert _run(folder, args) == expected
    assert _run(folder, args) == expected  # the forged entry was stored over: warm again


def test_a_grid_document_whose_card_is_a_number_answers_as_an_empty_cache(warm: Path, tmp_path: Path) -> None:
    # Before: sweep said "card '1.5': not found" (exit 2) where an empty cache prices the grid.
    args = ("sweep", "--file", "examples/grid.toml", "--format", "json")
    folder = tmp_path / "cache"
    shutil.copytree(warm, folder)
    forged = 0
    for entry in sorted((folder / "documents").iterdir()):
        stored = json.loads(entry.read_bytes().partition(b"\n")[2])
        if isinstance(stored["document"].get("cards"), list):
            stored["document"]["cards"] = [1.5]
            entry.write_bytes(_seal(json.dumps(stored).encode()))
            forged += 1
    assert forged == 1
    expected = _run(tmp_path / "empty", args)
    assert expected[0] == 0
    assert _run(folder, args) == expected


def test_entryshape_is_not_imported_by_a_run_served_nothing(tmp_path: Path) -> None:
    # A cold run checks nothing: the module is imported at the first object served.
    code = ("import os, sys; os.environ['PASSPRICE_CACHE_DIR'] = sys.argv[1]; from passprice import cli; "
            "sys.argv = ['passprice', '--no-cache', 'cards'];\ntry: cli.main()\nexcept SystemExit: pass\n"
            "print('passprice.entryshape' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr[-400:]
