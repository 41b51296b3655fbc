"""Property-based hostile input (issue 13): GGUF headers made by structured mutation of the real ones in tests/data
(counts and widths set to 0, 1, huge or negative, keys given the wrong type or dropped, per-layer arrays of any
length, tensors dropped, emptied or given unknown types, arrays of arrays of mixed types, declared lengths the bytes
do not back, a cut or a flipped byte, xz or gzip on top), and registry TOML files (cards, servings, drafting methods,
sweep files) made by mutating the checked-in ones. Every command run on them must end in a result, a named refusal
(exit 1) or bad input (exit 2) whose every stderr line names the file; never a traceback; and whatever ``import``
writes must read back.

The budget is fixed and the examples derandomized, so CI runs the same cases in about a minute. A longer, random
run is one command: ``PASSPRICE_FUZZ=2000 python -m pytest tests/test_fuzz.py`` (examples per test). How long each
case runs and how much memory it takes is measured in ``benchmarks/hostile.py``, not here (no test times itself).
"""

from __future__ import annotations

import gzip
import json
import lzma
import math
import os
import shutil
import struct
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import CliRunner, Result
from gguf import GGUFValueType as V
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from any_text import any_text  # st.text()'s alphabet without its per-process codec table
from gguf_bytes import Array, Meta, Tensor, decode, encode
from passprice.cli import cli
from passprice.gguf_header import read_header

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
HEADERS = (
    "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz",
    "gemma3-270m-q4_k_m.header.gguf.xz",
    "qwen35-27b-like.header.gguf",
    "qwen3next-80b-a3b-like.header.gguf",
)
_LONG_RUN = os.environ.get("PASSPRICE_FUZZ")


def budget(examples: int) -> settings:
    """Hypothesis settings: ``examples`` derandomized (the CI budget), or ``PASSPRICE_FUZZ`` random ones."""
    return settings(
        max_examples=int(_LONG_RUN) if _LONG_RUN else examples,
        derandomize=not _LONG_RUN,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    """A private copy of the checkout's facts, registry and locks (imports and edits land here)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "root"
        for name in ("facts", "registry", "locks", "sources"):
            shutil.copytree(REPO / name, root / name)
        yield root


def run(root: Path, *args: str) -> Result:
    """``passprice --root ROOT ARGS`` in-process: no exception but an exit may escape, the exit status is 0, 1
    or 2, and every stderr line is one ``passprice: error:`` or ``passprice: refused:`` line."""
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback for {args}: {result.exception!r}\n{result.output[-3000:]}"
    )
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-3000:])
    if result.exit_code:
        lines = result.stderr.splitlines()
        assert lines, result.output[-3000:]
        prefix = "passprice: error: " if result.exit_code == 2 else "passprice: refused: "
        assert all(line.startswith(prefix) for line in lines), result.stderr[-3000:]
    return result


def names_file(result: Result, file: Path) -> None:
    """Bad input names the file on each of its lines."""
    if result.exit_code == 2:
        for line in result.stderr.splitlines():
            assert file.name in line, (file.name, line)


# --- GGUF headers ----------------------------------------------------------------------------------------------------

_BASES = {name: decode(read_header(DATA / name, cache=False)) for name in HEADERS}

_SHAPE_KEYS = (
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.sliding_window",
    "expert_count",
    "expert_used_count",
    "nextn_predict_layers",
    "ssm.conv_kernel",
    "ssm.state_size",
    "ssm.inner_size",
    "ssm.time_step_rank",
    "ssm.group_count",
    "general.alignment",
    "split.count",
)
_WIDTHS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 7, 8, 64, 4096, 2**31 - 1, 2**32 - 1]),
    st.integers(0, 2**32 - 1),
)
_TYPES = {V.UINT8: (0, 255), V.INT8: (-128, 127), V.UINT16: (0, 65535), V.INT32: (-(2**31), 2**31 - 1),
          V.UINT32: (0, 2**32 - 1), V.UINT64: (0, 2**64 - 1), V.INT64: (-(2**63), 2**63 - 1)}


def _key(meta: list[Meta], arch: str, key: str) -> str:
    return key if key.startswith(("general.", "split.")) else f"{arch}.{key}"


@st.composite
def _scalar(draw: st.DrawFn) -> tuple[V, Any]:
    kind = draw(st.sampled_from([*_TYPES, V.FLOAT32, V.BOOL, V.STRING]))
    if kind in _TYPES:
        low, high = _TYPES[kind]
        return kind, draw(st.one_of(_WIDTHS.filter(lambda v: low <= v <= high), st.integers(low, high)))
    if kind == V.FLOAT32:
        return kind, draw(st.floats(width=32, allow_nan=True, allow_infinity=True))
    if kind == V.BOOL:
        return kind, draw(st.booleans())
    return kind, draw(any_text(max_size=20))


@st.composite
def _value(draw: st.DrawFn) -> tuple[V, Any]:
    """A metadata value: a scalar, a per-layer array of any length, or an array of arrays of mixed types."""
    shape = draw(st.sampled_from(["scalar", "scalar", "array", "nested"]))
    if shape == "scalar":
        return draw(_scalar())
    if shape == "array":
        kind = draw(st.sampled_from([V.UINT32, V.INT32, V.UINT8, V.FLOAT32]))
        low, high = _TYPES.get(kind, (0, 0))
        items = draw(st.lists(st.integers(max(low, 0), min(high, 2**16)) if kind != V.FLOAT32 else
                              st.floats(width=32, allow_nan=False), max_size=80))
        return V.ARRAY, Array(kind, tuple(items))
    inner = draw(st.lists(st.sampled_from([Array(V.INT32, (1, 2)), Array(V.STRING, ("a",)), Array(V.UINT8, ()),
                                           Array(V.FLOAT32, (0.5, 1.5))]), max_size=5))
    return V.ARRAY, Array(V.ARRAY, tuple(inner))


Mutation = Callable[[list[Meta], list[Tensor]], None]


@st.composite
def _mutation(draw: st.DrawFn, arch: str, tensors: int) -> Mutation:
    what = draw(st.sampled_from(["set", "set", "set", "drop-key", "drop-tensor", "dims", "tensor-type", "add-array",
                                 "rename-tensor"]))
    if what == "set":
        key = draw(st.sampled_from(_SHAPE_KEYS))
        kind, value = draw(st.one_of(_value(), st.tuples(st.just(V.UINT32), _WIDTHS)))

        def mutate(meta: list[Meta], tensor_list: list[Tensor]) -> None:
            full = _key(meta, arch, key)
            entry = Meta(full, kind, value)
            for i, m in enumerate(meta):
                if m.key == full:
                    meta[i] = entry
                    return
            meta.append(entry)

        return mutate
    if what == "drop-key":
        key = draw(st.sampled_from(_SHAPE_KEYS))
        return lambda meta, _: meta.__setitem__(slice(None), [m for m in meta if m.key != _key(meta, arch, key)])
    index = draw(st.integers(0, max(tensors - 1, 0)))
    if what == "drop-tensor":
        return lambda _, t: t.pop(index % len(t)) if t else None
    if what == "dims":
        dims = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 32, 256, 2**20, 2**40, 2**62]), min_size=1,
                                   max_size=4)))

        def set_dims(_: list[Meta], t: list[Tensor]) -> None:
            if t:
                old = t[index % len(t)]
                t[index % len(t)] = Tensor(old.name, dims, old.type_id, old.offset)

        return set_dims
    if what == "tensor-type":
        type_id = draw(st.integers(0, 64))

        def set_type(_: list[Meta], t: list[Tensor]) -> None:
            if t:
                old = t[index % len(t)]
                t[index % len(t)] = Tensor(old.name, old.dims, type_id, old.offset)

        return set_type
    if what == "rename-tensor":
        name = draw(st.sampled_from(["blk.999.attn_k.weight", "blk.0.attn_k.weight", "output.weight",
                                     "token_embd.weight", "blk.1.ssm_a", "blk.0.ffn_gate_exps.weight", "x"]))

        def rename(_: list[Meta], t: list[Tensor]) -> None:
            if t and all(x.name != name for x in t):
                old = t[index % len(t)]
                t[index % len(t)] = Tensor(name, old.dims, old.type_id, old.offset)

        return rename
    kind, value = draw(_value())
    return lambda meta, _: meta.append(Meta(f"fuzz.{len(meta)}", kind, value))


@st.composite
def headers(draw: st.DrawFn) -> tuple[str, bytes]:
    """A mutated real header: (file suffix, bytes)."""
    base = draw(st.sampled_from(HEADERS))
    meta, tensors = _BASES[base]
    meta, tensors = list(meta), list(tensors)
    arch = next(str(m.value) for m in meta if m.key == "general.architecture")
    for mutate in draw(st.lists(_mutation(arch, len(tensors)), min_size=1, max_size=4)):
        mutate(meta, tensors)
    raw = encode(meta, tensors)
    damage = draw(st.sampled_from(["none", "none", "none", "cut", "flip", "count"]))
    if damage == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif damage == "flip":
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :]
    elif damage == "count":  # a tensor or metadata count the rest of the bytes do not back
        at = draw(st.sampled_from([8, 16]))
        raw = raw[:at] + struct.pack("<Q", draw(st.sampled_from([2**62, 2**32, 10**6, 5000]))) + raw[at + 8 :]
    packing = draw(st.sampled_from(["", "", ".xz", ".gz"]))
    if packing == ".xz":
        raw = lzma.compress(raw, preset=0)
    elif packing == ".gz":
        raw = gzip.compress(raw, compresslevel=1)
    return f".gguf{packing}", raw


@given(case=headers())
@budget(40)
def test_mutated_headers(root: Path, case: tuple[str, bytes]) -> None:
    suffix, raw = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz{suffix}"
        path.write_bytes(raw)
        shown = run(root, "header", str(path), "--json")
        names_file(shown, path)
        priced = run(root, "price", "--checkpoint", str(path), "--card", "h200_sxm_141gb", "--json")
        names_file(priced, path)
        names_file(run(root, "kv", str(path)), path)
        best = run(root, "best", "--checkpoint", str(path), "--card", "h200_sxm_141gb", "--limit", "1024")
        names_file(best, path)
        imported = run(root, "import", str(path), "--name", "fuzz", "--force")
        names_file(imported, path)
        if imported.exit_code == 0:  # whatever import writes reads back, to the same header and the same price
            back = run(root, "header", "fuzz", "--json")
            assert back.exit_code == 0, back.stderr
            entry, file = json.loads(back.stdout), json.loads(shown.stdout)
            entry.pop("source"), file.pop("source")
            assert entry == file
            again = run(root, "price", "--checkpoint", "fuzz", "--card", "h200_sxm_141gb", "--json")
            assert again.exit_code == priced.exit_code
            if priced.exit_code == 0:
                assert again.stdout == priced.stdout


# --- registry TOML files -------------------------------------------------------------------------------------------

_ODD_VALUES = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**32, 2**63 - 1, 10**30, 0.5, 1e-320, 1e308, -0.0, math.inf, -math.inf,
                     math.nan, "", "²", "x" * 300, True]),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text(max_size=30),
    st.lists(st.integers(0, 10), max_size=3),
)


def _paths(table: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for key, value in table.items():
        out.append((*prefix, key))
        if isinstance(value, dict):
            out += _paths(value, (*prefix, key))
        elif isinstance(value, list):
            out += [(*prefix, key, str(i)) for i, v in enumerate(value) if not isinstance(v, dict | list)]
            for i, v in enumerate(value):
                if isinstance(v, dict):
                    out += _paths(v, (*prefix, key, str(i)))
    return out


def _get_parent(doc: Any, path: tuple[str, ...]) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last: Any = int(path[-1]) if isinstance(node, list) else path[-1]
    return node, last


@st.composite
def toml_files(draw: st.DrawFn) -> tuple[str, str, str]:
    """(kind, name, text): a checked-in card, serving, drafting method or sweep file with a few values replaced,
    keys dropped or added."""
    kind, source = draw(st.sampled_from([
        ("card", REPO / "facts" / "cards" / "h200_sxm_141gb.toml"),
        ("card", REPO / "facts" / "cards" / "mi300x.toml"),
        ("serving", REPO / "registry" / "servings" / "r1-qwen7b-h200.toml"),
        ("serving", REPO / "registry" / "servings" / "qwen35-27b-h200-mtp.toml"),
        ("draft", next(iter(sorted((REPO / "facts" / "drafts").glob("*.toml"))))),
        ("sweep", REPO / "examples" / "grid.toml"),
    ]))
    doc = tomlkit.parse(source.read_text(encoding="utf-8")).unwrap()
    paths = _paths(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        parent, last = _get_parent(doc, path)
        action = draw(st.sampled_from(["set", "set", "set", "drop", "add"]))
        try:
            if action == "set":
                parent[last] = draw(_ODD_VALUES)
            elif action == "drop" and not isinstance(parent, list):
                del parent[last]
            elif action == "add" and isinstance(parent, dict):
                parent[draw(st.sampled_from(["bogus", "9" * 50, "value", "unit", "limit"]))] = draw(_ODD_VALUES)
        except (KeyError, IndexError, TypeError):
            pass
        paths = _paths(doc)
        if not paths:
            break
    return kind, f"fuzz{draw(st.integers(0, 3))}", tomlkit.dumps(doc)


@given(case=toml_files())
@budget(60)
def test_mutated_registry_files(root: Path, case: tuple[str, str, str]) -> None:
    kind, name, text = case
    folder = {"card": root / "facts" / "cards", "serving": root / "registry" / "servings",
              "draft": root / "facts" / "drafts", "sweep": root}[kind]
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    try:
        if kind == "card":
            names_file(run(root, "facts", name), path)
            names_file(run(root, "price", "r1-qwen7b-h200", "--card", name, "--json"), path)
            names_file(run(root, "best", "gemma3-270m-h100", "--card", name, "--limit", "1024"), path)
        elif kind == "serving":
            names_file(run(root, "price", name, "--json"), path)
            names_file(run(root, "max-batch", name), path)
        elif kind == "draft":
            names_file(run(root, "fact", "show", name, "acceptance.1"), path)
            names_file(run(root, "speculate", "qwen35-27b-h200-chat", "--draft", name, "--tokens", "1..2",
                            "--passes", "50"), path)
        else:
            names_file(run(root, "sweep", "--file", str(path), "--format", "json"), path)
    finally:
        path.unlink()


def test_any_text_is_every_character_utf_8_encodes() -> None:
    """The fuzz tests' text (``any_text``) draws from what ``st.text()`` draws from, every character UTF-8 encodes
    (1,112,064: all of U+0000-U+10FFFF but the 2,048 surrogates), without Hypothesis's per-process codec table."""
    import sys

    from any_text import UTF8

    assert UTF8.wrapped_strategy.intervals.intervals == ((0, 0xD7FF), (0xE000, sys.maxunicode))
    assert sys.maxunicode + 1 - 2048 == len(UTF8.wrapped_strategy.intervals) == 1_112_064
    for code in (0, 0xD7FF, 0xE000, sys.maxunicode):
        chr(code).encode("utf-8")  # each end of each interval encodes
    for code in (0xD800, 0xDFFF):
        with pytest.raises(UnicodeEncodeError):
            chr(code).encode("utf-8")  # and the surrogates between them do not
