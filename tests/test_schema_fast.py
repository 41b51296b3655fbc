"""The compiled validator (``jsonschema-rs``) only ever says "valid" faster: on every document, mutated in every way a
hostile or careless edit could, :func:`passprice.schema.problems` gives exactly what ``jsonschema`` alone gives.

The documents are the registry's own files of every kind, each mutated at a random key path: a value replaced by
one of another type or past a bound (5,000-digit integers, NaN, control characters, TOML dates), a key removed, a
key added."""

from __future__ import annotations

import copy
import datetime
import tomllib
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from any_text import any_text  # st.text()'s alphabet without its per-process codec table
from passprice import schema

REPO = Path(__file__).resolve().parent.parent

#: A file of each kind the schemas cover (the smallest checkpoint entry: its tensor table is the slow part).
SAMPLES = {
    "card": REPO / "facts/cards/h200_sxm_141gb.toml",
    "serving": REPO / "registry/servings/deepseek-v3-h200.toml",
    "checkpoint": REPO / "registry/checkpoints/gemma3-270m-q4_k_m.toml",
    "lock": REPO / "locks/r1-qwen7b-h200.lock.toml",
    "measurement": REPO / "registry/measurements/llamacpp-points.toml",
    "stack": REPO / "facts/stacks/llamacpp-cuda-2405.toml",
    "routing": REPO / "facts/routing/qwen3-30b-a3b-measured.toml",
    "draft": REPO / "facts/drafts/qwen35-mtp.toml",
    "source": REPO / "sources/nvidia-a100-80gb-datasheet-zh.toml",  # nvidia-a100-datasheet until cite90
    "sweep": REPO / "examples/grid.toml",
}


def _document(kind: str) -> dict[str, Any]:
    return tomllib.loads(SAMPLES[kind].read_text(encoding="utf-8"))


def _slow(document: dict[str, Any], kind: str) -> list[str]:
    """What :func:`passprice.schema.problems` says with jsonschema alone."""
    with mock.patch.object(schema, "_surely_valid", lambda *_: False):
        return schema.problems(document, kind)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in ``node`` (dict keys, list indexes), the empty path included."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node[:4]):  # a tensor table's first few rows stand for the rest
            out.extend(_paths(value, (*prefix, index)))
    return out


_TEXT = any_text(max_size=40) | st.sampled_from(
    ["", "a\nb", "x\u202ey", "\x07", "nan", "2026-13-45", "unknown", "0" * 300, "h200_sxm_141gb", "a" * 70]
)
_VALUES = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**400, True, False]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-320, 5e-324, 1e308, -0.0, 3.4028234663852886e38, 3.5e38]),
    _TEXT,
    st.just(datetime.date(2026, 1, 1)),
    st.lists(st.integers(min_value=-3, max_value=3) | _TEXT, max_size=3),
    st.dictionaries(_TEXT, st.integers(min_value=0, max_value=3), max_size=2),
)


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(sorted(SAMPLES)))
    document = copy.deepcopy(_BASE[kind])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            document[draw(_TEXT)] = draw(_VALUES)
            continue
        parent: Any = document
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "remove":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(_TEXT)] = draw(_VALUES)
        else:
            parent[path[-1]] = draw(_VALUES)
    return kind, document


_BASE = {kind: _document(kind) for kind in SAMPLES}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_registry_file_is_found_valid_by_the_compiled_validator(kind: str) -> None:
    """The fast path is taken on the registry's own files (else it would save nothing), and agrees."""
    assert schema._surely_valid(_BASE[kind], kind, str(schema.schema_dir()))
    assert schema.problems(_BASE[kind], kind) == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_mutated())
def test_the_compiled_validator_never_changes_a_verdict(case: tuple[str, dict[str, Any]]) -> None:
    kind, document = case
    assert schema.problems(document, kind) == _slow(document, kind)


def test_what_the_compiled_validator_cannot_take_goes_to_jsonschema() -> None:
    """A TOML date (no JSON value), NaN and a 401-digit integer: refused with jsonschema's words."""
    card = copy.deepcopy(_BASE["card"])
    card["memory"]["bandwidth"]["value"] = datetime.date(2026, 1, 1)
    said = "memory.bandwidth.value: 2026-01-01 is not of type 'number'"  # as TOML writes it (attack round 28)
    assert schema.problems(card, "card") == [said]
    card["memory"]["bandwidth"]["value"] = float("nan")
    assert schema.problems(card, "card") == ["memory.bandwidth.value: must be a finite number, not nan"]
    serving = copy.deepcopy(_BASE["serving"])
    serving["batch"] = 10**400
    said = "batch: an integer of 401 digits is out of range (at most 4294967295)"
    assert schema.problems(serving, "serving") == [said]


def test_without_the_compiled_validator_jsonschema_decides_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform without jsonschema-rs's wheel: the same verdicts, from jsonschema alone."""
    import builtins

    real_import = builtins.__import__

    def no_rs(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "jsonschema_rs":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    schema._fast_validator.cache_clear()
    try:
        monkeypatch.setattr(builtins, "__import__", no_rs)
        assert schema._fast_validator("serving", str(schema.schema_dir())) is None
        serving = copy.deepcopy(_BASE["serving"])
        assert schema.problems(serving, "serving") == []
        serving["batch"] = 0
        assert schema.problems(serving, "serving") == ["batch: 0 is less than the minimum of 1"]
    finally:
        monkeypatch.undo()
        schema._fast_validator.cache_clear()


def test_an_invalid_document_too_large_for_jsonschema_is_explained_by_the_compiled_validator() -> None:
    """Attacker round 5: a checkpoint entry whose metadata value nests 1,000 arrays of 300 floats (629 KB of TOML)
    and whose ``header.version`` is 99 made jsonschema walk 300,000 values (11.5 s) before saying so. Past
    MAX_EXPLAINED values, jsonschema is not asked: the problems are jsonschema-rs's, by key path."""
    entry = copy.deepcopy(_BASE["checkpoint"])
    entry["header"]["version"] = 99
    entry["metadata"]["general.architecture"] = {"type": "array", "value": [[1.0] * 300 for _ in range(1000)]}

    def walked(*_: Any) -> Any:
        raise AssertionError("jsonschema asked to walk 300,000 values")

    with mock.patch.object(schema, "_validator", walked):
        found = schema.problems(entry, "checkpoint")
    assert found == ["header.version: 99 is not one of 2 or 3"]
    entry["header"]["sha256"] = datetime.date(2026, 1, 1)  # no JSON value: jsonschema-rs cannot take it
    with mock.patch.object(schema, "_validator", walked):
        found = schema.problems(entry, "checkpoint")
    assert found == [
        "header.sha256: 2026-01-01 is a TOML date or time, which no passprice file holds here "
        "(write it as a string)"
    ]
    # One value under the bound, jsonschema explains it, in its own words.
    small = copy.deepcopy(_BASE["checkpoint"])
    small["header"]["version"] = 99
    assert schema.problems(small, "checkpoint") == ["header.version: 99 is not allowed here (one of 2, 3)"]
