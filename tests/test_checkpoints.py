"""Checkpoint entries: an entry reads back to a header equal to the file's, is written byte for byte the same every
time, and is found by name or by path."""

from __future__ import annotations

import lzma
import math
import re
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter

from gguf_bytes import Tensor, encode
from importable import importable, importable_meta
from passprice import schema
from passprice.checkpoints import (
    SCHEMA_LINE,
    entry_name,
    header_from_entry,
    import_header,
    load_checkpoint,
    write_entry,
)
from passprice.errors import InputError, SchemaError
from passprice.gguf_header import GGUFHeader, LongArray, read_header
from passprice.registry import Root, find_root

REPO = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
NAMES = ["gemma3-270m-q4_k_m", "deepseek-r1-distill-qwen-7b-q4_k_m"]
V = GGUFValueType


def entry_header(text: str, source: str = "entry") -> GGUFHeader:
    document = tomllib.loads(text)
    schema.validate(document, "checkpoint", source)
    return header_from_entry(document, source)


@pytest.fixture
def root(tmp_path: Path) -> Root:
    """A root of our own holding the repository's schemas and checkpoint entries."""
    (tmp_path / "facts").mkdir()
    shutil.copytree(REPO / "registry" / "checkpoints", tmp_path / "registry" / "checkpoints")
    shutil.copytree(REPO / "schema", tmp_path / "schema")
    return Root(tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_real_entry_round_trip(name: str) -> None:
    header = read_header(DATA / f"{name}.header.gguf.xz")
    text = import_header(header, name, "a note")
    assert text.splitlines()[0] == SCHEMA_LINE
    back = entry_header(text)
    assert back == header and back.source == "entry"
    assert back.tensor("token_embd.weight") == header.tensor("token_embd.weight")
    assert import_header(header, name, "a note") == text  # same header, same bytes
    assert import_header(back, name, "a note") == text  # and an entry re-imports to itself


@pytest.mark.parametrize("name", NAMES)
def test_registry_entries_are_up_to_date(name: str) -> None:
    path = REPO / "registry" / "checkpoints" / f"{name}.toml"
    text = path.read_text(encoding="utf-8")
    origin = tomllib.loads(text)["entry"]["origin"]
    assert origin
    assert import_header(read_header(DATA / f"{name}.header.gguf.xz"), name, origin) == text


@pytest.mark.parametrize("name", NAMES)
def test_load_by_name_and_by_path_agree(name: str, root: Root, tmp_path: Path) -> None:
    by_name = load_checkpoint(root, name)
    by_xz = load_checkpoint(root, str(DATA / f"{name}.header.gguf.xz"))
    plain = tmp_path / f"{name}.gguf"
    plain.write_bytes(lzma.decompress((DATA / f"{name}.header.gguf.xz").read_bytes()))
    by_plain = load_checkpoint(root, str(plain))
    by_toml = load_checkpoint(root, str(root.checkpoints / f"{name}.toml"))
    assert by_name == by_xz == by_plain == by_toml
    assert by_name.source == str(root.checkpoints / f"{name}.toml")


def test_unknown_name_lists_the_registered(root: Root) -> None:
    with pytest.raises(InputError, match=r"checkpoint 'nope': not found in .* \(registered: .*deepseek-r1.*, gemma3-"):
        load_checkpoint(root, "nope")


def test_schema_invalid_entry_is_refused_with_key_paths(root: Root) -> None:
    text = (root.checkpoints / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    text = text.replace("version = 3\n", "version = 4\n").replace('sha256 = "734dc9', 'sha256 = "XYZdc9', 1)
    (root.checkpoints / "broken.toml").write_text(text.replace('name = "gemma3-270m-q4_k_m"', 'name = "broken"'))
    with pytest.raises(SchemaError) as info:
        load_checkpoint(root, "broken")
    problems = info.value.problems
    assert any(p.startswith("header.version: 4 is not allowed") for p in problems), problems
    assert any(p.startswith("header.sha256: ") for p in problems), problems
    assert str(info.value).startswith(str(root.checkpoints / "broken.toml") + ": ")


def test_entry_name_must_match_its_file(root: Root) -> None:
    shutil.copy(root.checkpoints / "gemma3-270m-q4_k_m.toml", root.checkpoints / "other.toml")
    with pytest.raises(InputError, match=r"entry.name: 'gemma3-270m-q4_k_m' does not match the file name 'other'"):
        load_checkpoint(root, "other")


def test_entry_values_are_checked_against_their_types() -> None:
    header = read_header(DATA / "gemma3-270m-q4_k_m.header.gguf.xz")
    text = import_header(header, "g", "n")
    bad = text.replace('{ type = "uint32", value = 18 }', '{ type = "uint32", value = -18 }')
    with pytest.raises(InputError, match=r'^x: metadata\."gemma3.block_count"\.value: -18 is not a uint32$'):
        entry_header(bad, "x")
    bad = text.replace('type = "Q8_0"', 'type = "Q9_9"', 1)
    with pytest.raises(InputError, match=r"^x: header.tensors.1.type: 'Q9_9' is not a GGML type name"):
        entry_header(bad, "x")
    bad = text.replace("tensor_count = 236", "tensor_count = 235")
    with pytest.raises(InputError, match=r"header.shards.0.tensor_count: 235 but 236 tensors name it"):
        entry_header(bad, "x")


def test_every_value_type_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "all.gguf"
    w = importable(GGUFWriter(path, "llama"))  # import refuses a header check would fail (walk45)
    w.add_uint8("u8", 255)
    w.add_int8("i8", -128)
    w.add_uint16("u16", 65535)
    w.add_int16("i16", -32768)
    w.add_uint32("u32", 2**32 - 1)
    w.add_int32("i32", -(2**31))
    w.add_float32("f32", 1 / 3)
    w.add_float64("f64", 5e-324)
    w.add_float64("f64.big", 1.7976931348623157e308)
    w.add_float64("f64.inf", -math.inf)
    w.add_float64("f64.negzero", -0.0)
    w.add_uint64("u64", 2**64 - 1)  # beyond TOML's int64: written as a string
    w.add_int64("i64", -(2**63))
    w.add_bool("yes", True)
    w.add_string("text", 'tab\tnl\n quote" back\\ nul\x00 del\x7f é 🦙 \u2028')
    w.add_array("ints", [1, 2, 3])
    w.add_key_value("u64s", [2**64 - 1, 0], V.ARRAY, sub_type=V.UINT64)
    w.add_key_value("floats", [0.1, 1e100], V.ARRAY, sub_type=V.FLOAT64)
    w.add_array("nested", [["a"], ["b", "c"]])
    w.add_array("long", [f"w{i}" for i in range(1025)])
    w.add_array("long.nested", [[i] * 3 for i in range(400)])
    w.add_tensor("w", np.zeros((2, 34), dtype=np.uint8), raw_dtype=GGMLQuantizationType.Q8_0)
    w.add_tensor("x", np.zeros((1, 2, 3, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    header = read_header(path)
    text = import_header(header, "all", "synthetic")
    assert '"u64" = { type = "uint64", value = "18446744073709551615" }' in text
    # a long array with its elements' sha256 (slip round 36: a scope tells a vocabulary of the same size by it)
    assert re.search(r'"long" = \{ type = "array\[string\]", length = 1025, sha256 = "[0-9a-f]{64}" \}', text)
    # an array of arrays too (attack round 44: two headers differing in its elements read the same)
    assert re.search(r'"long.nested" = \{ type = "array\[array\[int32\]\]", length = 400, sha256 = "[0-9a-f]{64}" \}',
                     text)
    back = entry_header(text)
    assert back == header
    assert back.metadata["long.nested"] == LongArray("array[int32]", 400)
    assert math.copysign(1.0, back.metadata["f64.negzero"]) == -1.0  # type: ignore[arg-type]
    assert import_header(back, "all", "synthetic") == text


def test_unknown_tensor_type_is_written_as_its_id(tmp_path: Path) -> None:
    # One tensor "t" of 8 elements, type id 99 (no GGML type), at offset 0; the architecture and width keys because
    # import refuses a header check would fail (walk45).
    raw = encode(importable_meta(), [Tensor("t", (8,), 99, 0)])
    path = tmp_path / "odd.gguf"
    path.write_bytes(raw)
    header = read_header(path)
    assert header.tensors[0].type_name == "type#99"
    text = import_header(header, "odd", "")
    assert '{ name = "t", type = 99, dims = [8], offset = 0, shard = 0 }' in text
    assert entry_header(text) == header


def test_split_checkpoint_round_trips(tmp_path: Path) -> None:
    w = importable(GGUFWriter(tmp_path / "m.gguf", "llama", split_max_tensors=1))
    for i in range(3):
        w.add_tensor(f"t{i}", np.zeros((4,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    header = read_header(tmp_path / "m-00002-of-00003.gguf")
    text = import_header(header, "m", "")
    assert 'source = "m-00001-of-00003.gguf"' in text
    assert entry_header(text) == header


def test_bad_names_are_refused() -> None:
    header = read_header(DATA / "gemma3-270m-q4_k_m.header.gguf.xz")
    for name in ["", "../x", "a b", "-x"]:
        with pytest.raises(InputError, match="checkpoint name"):
            import_header(header, name, "")


def test_write_entry_is_atomic_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "registry" / "checkpoints" / "x.toml"
    write_entry(path, "a = 1\n", force=False)
    assert path.read_text() == "a = 1\n"
    with pytest.raises(InputError, match=r"x.toml: already exists"):
        write_entry(path, "a = 2\n", force=False)
    assert path.read_text() == "a = 1\n"
    write_entry(path, "a = 2\n", force=True)
    assert path.read_text() == "a = 2\n"
    assert [p.name for p in path.parent.iterdir()] == ["x.toml"]  # no temporary file left behind


def test_repository_root_finds_the_entries() -> None:
    root = find_root(start=REPO)
    assert set(NAMES) <= set(root.names(root.checkpoints))


def test_entry_name_of_a_file() -> None:
    assert entry_name(DATA / "gemma3-270m-q4_k_m.header.gguf.xz") == "gemma3-270m-q4_k_m"
    assert entry_name("x/model-00002-of-00003.gguf") == "model"
    assert entry_name("plain.gguf.gz") == "plain"


# --- issue 13, cold reads: the tensor table read without cattrs when every row is plain -------------------------------


@pytest.mark.parametrize("path", sorted((REPO / "registry" / "checkpoints").glob("*.toml")), ids=lambda p: p.stem)
def test_plain_tensor_rows_equal_what_cattrs_structures(path: Path) -> None:
    from passprice.checkpoints import _plain_tensors, converter
    from passprice.gguf_header import TensorInfo

    rows = tomllib.loads(path.read_text(encoding="utf-8"))["header"]["tensors"]
    plain = _plain_tensors(rows)
    assert plain is not None
    assert plain == [converter().structure(row, TensorInfo) for row in rows]
    assert [type(t.dims) for t in plain] == [tuple] * len(rows)


def test_a_row_that_is_not_plain_goes_through_cattrs() -> None:
    from passprice.checkpoints import _plain_tensors
    from passprice.gguf_header import TensorInfo

    row = {"name": "blk.0.attn_q.weight", "type": "Q4_K", "dims": [256, 2], "offset": 0, "shard": 0}
    assert _plain_tensors([row]) == [TensorInfo("blk.0.attn_q.weight", (256, 2), 12, 0, 0)]
    assert _plain_tensors([{**row, "type": 12}]) == [TensorInfo("blk.0.attn_q.weight", (256, 2), 12, 0, 0)]
    assert _plain_tensors([row, {**row, "type": True}]) is None  # a bool is no type id: cattrs words it
    assert _plain_tensors([{**row, "type": "Q4_Q"}]) is None  # not in passprice's own table
    assert _plain_tensors([{**row, "extra": 1}]) is None
    assert _plain_tensors([{**row, "dims": [256, 2.0]}]) is None


def test_an_unknown_type_name_is_refused_in_cattrs_words() -> None:
    text = (DATA.parent.parent / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")
    first = text.index('type = "', text.index("[[header.tensors]]") if "[[header.tensors]]" in text else
                       text.index("tensors = ["))
    bad = text[:first] + 'type = "Q4_Q"' + text[text.index('"', first + len('type = "')) + 1:]
    with pytest.raises(InputError, match=r"entry: header\.tensors\.0\.type: 'Q4_Q' is not a GGML type name"):
        entry_header(bad)


def test_tensor_info_pickles_as_its_arguments() -> None:
    import pickle

    from passprice import cache
    from passprice.gguf_header import TensorInfo

    t = TensorInfo("output.weight", (640, 262144), 14, 1024, 2)
    body = pickle.dumps(("key", t), protocol=5)
    assert b"type_id" not in body  # the arguments, not attrs' state dict
    assert cache._unpickle(body) == ("key", t)
