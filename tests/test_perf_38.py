"""Round 38 (issue 16, a cold ``check`` toward 1.2 s of CPU; issue 13's 2 s bound): work a cold ``check`` did that
decided nothing, cut.

- :func:`passprice.schema.whole_floats` walks only the schema nodes from which a whole-number-only node can be
  reached (:func:`passprice.schema._whole_reaching`): its findings are the full walk's, in the same order, held here
  against the full walk (every node entered, as before) on every shipped record (three checkpoint entries of 21:
  their tensor tables are alike) with every integer written as a float (3,934 findings, branches of
  ``oneOf``/``if`` included) and on the records as shipped (none).
- ``passprice.modelhistory`` imports ``jsonschema`` only for a list the compiled validator does not find valid: a
  valid list reads without it; a bad one is refused with the same line as before.
- A stack's fit inputs (about 1.7 MB) are hashed once for the lookup and the store of its findings, not twice.

Behaviour only, no timing (benchmarks/bench.py and docs/PERFORMANCE.md, round 38, have the figures)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from passprice import modelhistory, schema
from passprice.errors import InputError
from passprice.registry import embedded_root

#: Each shipped folder's files and the schema they are read against.
FOLDERS = {
    "facts/cards": "card", "facts/drafts": "draft", "facts/routing": "routing", "facts/stacks": "stack",
    "registry/checkpoints": "checkpoint", "registry/measurements": "measurement", "registry/servings": "serving",
    "sources": "source", "locks": "lock",
}


def _documents() -> list[tuple[str, str, Any]]:
    root = embedded_root().path
    out = []
    for folder, kind in FOLDERS.items():
        paths = sorted((root / folder).glob("*.toml"))
        if kind == "checkpoint":  # three entries' tensor tables (each some hundreds of rows, alike): not all 21
            paths = sorted(paths, key=lambda p: p.stat().st_size)[:3]
        for path in paths:
            out.append((f"{folder}/{path.name}", kind, tomllib.loads(path.read_text(encoding="utf-8"))))
    return out


def _floated(value: Any) -> Any:
    """``value`` with every integer (not a bool) written as the float it equals."""
    if isinstance(value, dict):
        return {k: _floated(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floated(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _full_walk(kind: str, where: str) -> frozenset[int]:
    """Every dict node of the ``kind`` schema: the walk entering all of them, as it did before round 38."""
    root = schema._ecma_document(kind, where)
    seen: dict[int, Any] = {}
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if id(node) in seen:
                continue
            seen[id(node)] = node
            todo += node.values()
        elif isinstance(node, list):
            todo += node
    return frozenset(seen)


@pytest.fixture(scope="module")
def documents() -> list[tuple[str, str, Any]]:
    return _documents()


def test_the_pruned_walk_finds_what_the_full_walk_finds(documents: list[tuple[str, str, Any]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    where = str(schema.schema_dir())
    floated = [(name, kind, _floated(doc)) for name, kind, doc in documents]
    pruned = [schema.whole_floats(doc, kind, where) for _, kind, doc in floated]
    shipped = [schema.whole_floats(doc, kind, where) for _, kind, doc in documents]
    monkeypatch.setattr(schema, "_whole_reaching", _full_walk)
    full = [schema.whole_floats(doc, kind, where) for _, kind, doc in floated]
    assert [p for _, _, p in zip(floated, pruned, full, strict=True)] == full
    assert shipped == [[] for _ in documents]
    # what the comparison covers: every kind, and thousands of whole floats found (a tensor's dims, a run's batch,
    # a lock's format, a checkpoint entry's counts …)
    assert {kind for _, kind, _ in documents} == set(FOLDERS.values())
    found = sum(len(f) for f in full)
    assert found > 3_000  # 3,934 when written
    assert {kind for (_, kind, _), f in zip(floated, full, strict=True) if f} == set(FOLDERS.values()) - {"source"}
    card = next(f for (name, _, _), f in zip(floated, full, strict=True) if name == "facts/cards/h200_sxm_141gb.toml")
    assert card[0] == (("on_chip", "bandwidth", "derivation", "digits"), "on_chip.bandwidth.derivation.digits: 4.0 "
                       "is not of type 'integer' (a whole number, written without a decimal point or exponent: 4)")


def test_the_pruned_walk_enters_fewer_nodes() -> None:
    where = str(schema.schema_dir())
    for kind in ("measurement", "stack", "card"):
        reaching = schema._whole_reaching(kind, where)
        assert id(schema._ecma_document(kind, where)) in reaching
        assert len(reaching) < len(_full_walk(kind, where))


def test_a_schema_without_whole_numbers_walks_nothing(tmp_path: Path) -> None:
    (tmp_path / "plain.schema.json").write_text(json.dumps({
        "type": "object", "properties": {"a": {"type": "number"}, "b": {"$ref": "#/$defs/n"}},
        "$defs": {"n": {"oneOf": [{"type": "number"}, {"type": "string"}]}},
    }), encoding="utf-8")
    where = str(tmp_path)
    assert schema._whole_reaching("plain", where) == frozenset()
    assert schema.whole_floats({"a": 2.0, "b": 3.0}, "plain", where) == []
    (tmp_path / "cycle.schema.json").write_text(json.dumps({
        "$ref": "#/$defs/t",
        "$defs": {"t": {"type": "object", "properties": {"next": {"$ref": "#/$defs/t"},
                                                          "n": {"type": "integer"}}}},
    }), encoding="utf-8")
    assert schema.whole_floats({"next": {"next": {"n": 4.0}}}, "cycle", where) == [
        (("next", "next", "n"), "next.next.n: 4.0 is not of type 'integer' (a whole number, written without a "
                                "decimal point or exponent: 4)")]


def test_a_valid_pricing_model_list_reads_without_jsonschema() -> None:
    code = ("import sys\nfrom passprice import modelhistory\nmodels = modelhistory.read_known()\n"
            "print(len(models) > 90, 'jsonschema' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]


def test_a_bad_pricing_model_list_is_refused_as_before(tmp_path: Path) -> None:
    doc = json.loads(modelhistory.KNOWN.read_text(encoding="utf-8"))
    doc["models"][0]["first_locked"] = "2026-13-01"
    path = tmp_path / "pricing_models.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"pricing_models.json: not passprice's list of pricing models: "
                                         r"models\[0\]\.first_locked: '2026-13-01' is not a 'date'$"):
        modelhistory.read_known(path)
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InputError, match=r"not passprice's list of pricing models: JSON nested too deep$"):
        modelhistory.read_known(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not passprice's list of pricing models: Expecting property name"):
        modelhistory.read_known(path)


def test_a_stacks_fit_inputs_are_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 38: the lookup and the store of a stack's findings each hashed the fit's inputs (about 1.7 MB): now the
    # key is made once and both use it; a second run finds the findings kept under that same key.
    from passprice import cache, stackfits
    from passprice.measurements import load_runs
    from passprice.stacks import load_stack

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path))
    # (a shipped stack as shipped is taken from the package's table, nothing kept: tests/test_reviewfast159.py)
    monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
    root = embedded_root()
    runs = load_runs(root)
    stack = load_stack(root, "lmdeploy-turbomind-2312")
    hashed: list[int] = []
    real = cache._object_key

    def counted(kind: str, data: bytes) -> str:
        if kind == stackfits.KIND:
            hashed.append(len(data))
        return real(kind, data)

    monkeypatch.setattr(cache, "_object_key", counted)
    first = stackfits._findings(root, stack, runs)
    assert len(hashed) == 1 and hashed[0] > 100_000
    kept = cache.kept_object(stackfits.KIND, stackfits.fit_inputs(root, stack, runs), tuple)
    assert kept == first


def test_whole_floats_found_again_after_the_schema_document_is_built_again() -> None:
    """The lead, session 35: the whole-reaching node ids were cached apart from the schema document they were ids of;
    after test_cache cleared ``_ecma_document`` (a new document, new ids), a synth config's ``num_hidden_layers =
    2.0`` went unfound (exit 0, a 2-block header) in the full suite's order."""
    config = Path(__file__).resolve().parents[1] / "examples" / "configs" / "llama-2-7b.json"
    text = config.read_text(encoding="utf-8")
    document = json.loads(text.replace('"num_hidden_layers": 32', '"num_hidden_layers": 2.0'))
    line = ("config.num_hidden_layers: 2.0 is not of type 'integer' (a whole number, written without a decimal point "
            "or exponent: 2)")
    assert schema.whole_floats(document, "model-config") == [(("config", "num_hidden_layers"), line)]
    schema._ecma_document.cache_clear()
    assert schema.whole_floats(document, "model-config") == [(("config", "num_hidden_layers"), line)]
