"""The GGUF header reader: real headers, files written by gguf.GGUFWriter checked against gguf.GGUFReader, truncated
and compressed copies, hostile bytes, split checkpoints and the cache."""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import os
import struct
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFEndian, GGUFReader, GGUFValueType, GGUFWriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from any_text import any_text  # st.text()'s alphabet without its per-process codec table
from passprice import ggml
from passprice.errors import InputError
from passprice.gguf_header import (
    GGUFHeader,
    HeaderError,
    LongArray,
    TensorInfo,
    clear_cache,
    read_header,
    read_stream,
)

DATA = Path(__file__).parent / "data"
GEMMA = DATA / "gemma3-270m-q4_k_m.header.gguf.xz"
QWEN = DATA / "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz"
V = GGUFValueType


@pytest.fixture(scope="module")
def gemma() -> GGUFHeader:
    return read_header(GEMMA)


@pytest.fixture(scope="module")
def qwen() -> GGUFHeader:
    return read_header(QWEN)


def stream_header(path: Path) -> GGUFHeader:
    """The header read through :func:`read_stream`, without the file's size (so its end is found by reading)."""
    with open(path, "rb") as f:
        return read_stream(f, str(path))


def total_bytes(header: GGUFHeader) -> int:
    return sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors)


# --- real headers ---------------------------------------------------------------------------------------------------


def test_gemma3_figures(gemma: GGUFHeader) -> None:
    h = gemma
    assert h.architecture == "gemma3"
    assert (h.version, h.byte_order) == (3, "little")
    expected = {
        "block_count": 18,
        "embedding_length": 640,
        "feed_forward_length": 2048,
        "attention.head_count": 4,
        "attention.head_count_kv": 1,
        "attention.key_length": 256,
        "attention.value_length": 256,
        "attention.sliding_window": 512,
        "context_length": 32768,
    }
    assert {k: h.meta_int(k) for k in expected} == expected
    assert h.meta("gemma3.block_count") == 18  # a full key reads as is
    assert len(h.tensors) == 236
    assert h.tensor("output.weight") is None
    embd = h.tensor("token_embd.weight")
    assert embd is not None and embd.type_name == "Q8_0" and embd.dims == (640, 262144)
    assert (h.header_bytes, h.data_offset, h.alignment) == (6_525_112, 6_525_120, 32)
    assert h.sha256 == "734dc913752602edd298a94fdc46d0e3184912794436c435c05511acd22947a4"
    assert h.metadata["tokenizer.ggml.tokens"] == LongArray("string", 262144)
    assert h.value_types["tokenizer.ggml.tokens"] == "array[string]"
    assert h.metadata["tokenizer.ggml.scores"] == LongArray("float32", 262144)
    assert total_bytes(h) == 246_587_904
    assert h.data_offset + total_bytes(h) == 253_113_024  # the whole file's size (shared/gguf/README.md)
    assert len(h.shards) == 1 and h.shards[0].header_bytes == h.header_bytes and h.shards[0].tensor_count == 236
    assert h.meta_int("tokenizer.ggml.add_bos_token") is None  # a bool is not an integer
    assert h.meta_int("no.such.key") is None and h.meta("no.such.key", 7) == 7


def test_qwen2_figures(qwen: GGUFHeader) -> None:
    h = qwen
    assert h.architecture == "qwen2"
    expected = {
        "block_count": 28,
        "embedding_length": 3584,
        "feed_forward_length": 18944,
        "attention.head_count": 28,
        "attention.head_count_kv": 4,
        "context_length": 131072,
    }
    assert {k: h.meta_int(k) for k in expected} == expected
    assert len(h.tensors) == 339
    assert Counter(t.type_name for t in h.tensors) == {"Q4_K": 169, "Q6_K": 29, "F32": 141}
    embd, out = h.tensor("token_embd.weight"), h.tensor("output.weight")
    assert embd is not None and out is not None
    assert (embd.type_name, ggml.tensor_bytes(embd.type_id, embd.dims)) == ("Q4_K", 306_561_024)
    assert (out.type_name, ggml.tensor_bytes(out.type_id, out.dims)) == ("Q6_K", 447_068_160)
    assert total_bytes(h) == 4_677_120_000
    assert h.sha256 == "d9383567865a226b4fbcaa0f954ce9ca608490e1a9ec51c3db2f5d092698e904"
    assert h.header_bytes == 5_953_246
    assert h.metadata["tokenizer.ggml.tokens"] == LongArray("string", 152064)
    assert h.metadata["tokenizer.ggml.merges"] == LongArray("string", 151387)
    assert isinstance(h.meta("tokenizer.chat_template"), str)


@pytest.mark.parametrize("path", [GEMMA, QWEN], ids=["gemma3", "qwen2"])
def test_real_header_plain_gz_and_truncated_copies(path: Path, tmp_path: Path) -> None:
    raw = lzma.decompress(path.read_bytes())
    xz = read_header(path)
    assert hashlib.sha256(raw).hexdigest() == xz.sha256 and len(raw) == xz.header_bytes
    plain = tmp_path / "h.gguf"
    plain.write_bytes(raw)
    zipped = tmp_path / "h.bin"  # told by its magic, not its suffix
    zipped.write_bytes(gzip.compress(raw, compresslevel=1))
    for copy in (plain, zipped):
        header = read_header(copy)
        assert header == xz and header.source == str(copy)
    with pytest.raises(HeaderError, match=r"^cut: header ends at byte 6000 while reading metadata 'tokenizer"):
        read_stream(io.BytesIO(raw[:6000]), "cut")  # no size: read until the bytes run out
    with pytest.raises(HeaderError, match=r"^cut: byte \d+: .* needs at least \d+ bytes; the file has \d+ left$"):
        read_stream(io.BytesIO(raw[:6000]), "cut", 6000)  # with a size: the count is refused before reading


# --- synthetic files, checked against gguf.GGUFReader ------------------------------------------------------------


def write_complete(path: Path, endian: GGUFEndian = GGUFEndian.LITTLE, alignment: int | None = None) -> Path:
    """A small complete GGUF file with every value type, nested and long arrays, and float and quantized tensors."""
    w = GGUFWriter(path, "llama", endianess=endian)
    if alignment is not None:
        w.add_custom_alignment(alignment)
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("llama.block_count", 2)
    w.add_int32("t.i32", -2_000_000_000)
    w.add_float32("t.f32", 0.1)
    w.add_bool("t.bool", True)
    w.add_bool("t.false", False)
    w.add_string("t.string", 'héllo\nwörld "quoted" \x01')
    w.add_uint64("t.u64", 2**64 - 1)
    w.add_int64("t.i64", -(2**63))
    w.add_float64("t.f64", 1e-300)
    w.add_array("t.arr_i32", [1, -2, 3])
    w.add_array("t.arr_str", ["a", "bb", ""])
    w.add_key_value("t.arr_f64", [0.5, -1.25, 1e300], V.ARRAY, sub_type=V.FLOAT64)
    w.add_key_value("t.arr_u64", [0, 2**64 - 1], V.ARRAY, sub_type=V.UINT64)
    w.add_key_value("t.arr_bool", [True, False, True], V.ARRAY, sub_type=V.BOOL)
    w.add_array("t.nested", [[1, 2], [3, 4, 5]])
    w.add_array("t.nested_str", [["x", "y"], ["z"]])
    w.add_array("t.nested_long", [[i, i] for i in range(600)])  # 1200 elements in all
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(3000)])
    w.add_key_value("tokenizer.ggml.scores", [float(i) for i in range(2000)], V.ARRAY, sub_type=V.FLOAT32)
    w.add_key_value("t.long_u8", list(range(256)) * 5, V.ARRAY, sub_type=V.UINT8)
    w.add_tensor("token_embd.weight", np.arange(64, dtype=np.float32).reshape(8, 8))
    w.add_tensor("blk.0.attn_q.weight", np.ones((3, 5), dtype=np.float16))
    w.add_tensor("blk.0.ffn_up.weight", np.zeros((4, 34), dtype=np.uint8), raw_dtype=GGMLQuantizationType.Q8_0)
    w.add_tensor("scalar3d", np.zeros((2, 3, 4), dtype=np.int32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def descriptor(types: list[GGUFValueType]) -> str:
    return "".join("array[" for t in types[:-1]) + types[-1].name.lower() + "]" * (len(types) - 1)


def flatten(value: Any) -> list[Any]:
    if isinstance(value, tuple):
        return [x for v in value for x in flatten(v)]
    return [value]


def check_against_reader(header: GGUFHeader, path: Path) -> None:
    reader = GGUFReader(path)
    fields = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert list(header.metadata) == list(fields)
    for key, field in fields.items():
        assert header.value_types[key] == descriptor(field.types), key
        ours = header.metadata[key]
        if isinstance(ours, LongArray):
            assert field.types[0] == V.ARRAY
            assert ours.element_type == descriptor(field.types[1:])
            if len(field.types) == 2:
                assert ours.length == len(field.data)
        elif isinstance(ours, tuple):
            assert flatten(ours) == field.contents()
        else:
            assert ours == field.contents()
    assert [t.name for t in header.tensors] == [t.name for t in reader.tensors]
    for ours_t, theirs in zip(header.tensors, reader.tensors, strict=True):
        assert ours_t.dims == tuple(int(d) for d in theirs.shape)  # GGUFReader's shape is in GGUF order
        assert ours_t.type_id == int(theirs.tensor_type)
        assert header.data_offset + ours_t.offset == theirs.data_offset
    assert header.data_offset == reader.data_offset
    assert header.alignment == reader.alignment


@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["little", "big"])
def test_synthetic_matches_gguf_reader(endian: GGUFEndian, tmp_path: Path) -> None:
    path = write_complete(tmp_path / "model.gguf", endian)
    h = read_header(path)
    assert h.byte_order == ("big" if endian == GGUFEndian.BIG else "little")
    check_against_reader(h, path)
    m = h.metadata
    assert m["t.u64"] == 2**64 - 1 and m["t.i64"] == -(2**63) and m["t.f64"] == 1e-300
    assert m["t.f32"] == float(np.float32(0.1)) and m["t.bool"] is True and m["t.false"] is False
    assert m["t.string"] == 'héllo\nwörld "quoted" \x01'
    assert m["t.nested"] == ((1, 2), (3, 4, 5)) and h.value_types["t.nested"] == "array[array[int32]]"
    assert m["t.nested_str"] == (("x", "y"), ("z",))
    assert m["t.nested_long"] == LongArray("array[int32]", 600)
    assert m["tokenizer.ggml.tokens"] == LongArray("string", 3000)
    assert m["t.long_u8"] == LongArray("uint8", 1280)
    assert m["t.arr_u64"] == (0, 2**64 - 1) and m["t.arr_bool"] == (True, False, True)
    q = h.tensor("blk.0.ffn_up.weight")
    assert q is not None and q.type_name == "Q8_0" and q.dims == (32, 4)
    assert h.tensor("scalar3d") == TensorInfo("scalar3d", (4, 3, 2), int(GGMLQuantizationType.I32), q.offset + 160)
    raw = path.read_bytes()
    assert h.sha256 == hashlib.sha256(raw[: h.header_bytes]).hexdigest()


def test_both_byte_orders_read_alike(tmp_path: Path) -> None:
    little = read_header(write_complete(tmp_path / "le.gguf", GGUFEndian.LITTLE))
    big = read_header(write_complete(tmp_path / "be.gguf", GGUFEndian.BIG))
    assert big.metadata == little.metadata and big.tensors == little.tensors
    assert big.header_bytes == little.header_bytes and big.sha256 != little.sha256


def test_custom_alignment(tmp_path: Path) -> None:
    path = write_complete(tmp_path / "a.gguf", alignment=256)
    h = read_header(path)
    assert h.alignment == 256 and h.data_offset % 256 == 0 and h.data_offset - h.header_bytes < 256
    check_against_reader(h, path)


@pytest.mark.parametrize("order", ["<", ">"], ids=["little", "big"])
def test_version_2(order: str, tmp_path: Path) -> None:
    path = write_complete(tmp_path / "v3.gguf", GGUFEndian.BIG if order == ">" else GGUFEndian.LITTLE)
    raw = bytearray(path.read_bytes())
    raw[4:8] = struct.pack(order + "I", 2)
    v2 = tmp_path / "v2.gguf"
    v2.write_bytes(bytes(raw))
    h2, h3 = read_header(v2), read_header(path)
    assert h2.version == 2 and h3.version == 3
    assert h2.metadata == h3.metadata and h2.tensors == h3.tensors
    check_against_reader(h2, v2)


def test_header_only_truncated_and_compressed_copies_are_equal(tmp_path: Path) -> None:
    path = write_complete(tmp_path / "model.gguf")
    full = read_header(path)
    raw = path.read_bytes()
    copies = {
        "header.gguf": raw[: full.header_bytes],
        "cut.gguf": raw[: full.header_bytes + 5],
        "header.gguf.xz": lzma.compress(raw[: full.header_bytes]),
        "full.gguf.gz": gzip.compress(raw),
        "header.gguf.gz": gzip.compress(raw[: full.header_bytes]),
    }
    for name, data in copies.items():
        (tmp_path / name).write_bytes(data)
        assert read_header(tmp_path / name) == full, name


def test_sparse_file_larger_than_memory(tmp_path: Path) -> None:
    path = write_complete(tmp_path / "model.gguf")
    full = read_header(path)
    big = tmp_path / "huge.gguf"
    with open(big, "wb") as f:
        f.write(path.read_bytes()[: full.header_bytes])
        f.truncate(1 << 40)  # a 1 TiB file, sparse: only the header is ever read
    start = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    assert read_header(big) == full
    assert time.process_time() - start < 1.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ints=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=5),
    u64=st.integers(0, 2**64 - 1),
    f64=st.floats(allow_nan=False),
    text=any_text(max_size=30),
    words=st.lists(any_text(max_size=8), min_size=1, max_size=1100),
)
def test_random_values_round_trip(
    tmp_path: Path, ints: list[int], u64: int, f64: float, text: str, words: list[str]
) -> None:
    path = tmp_path / "r.gguf"
    w = GGUFWriter(path, "llama")
    w.add_array("r.ints", ints)
    w.add_uint64("r.u64", u64)
    w.add_float64("r.f64", f64)
    w.add_key_value("r.text", text, V.STRING)
    w.add_array("r.words", words)
    w.add_tensor("t", np.zeros(3, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    h = read_header(path, cache=False)
    m = h.metadata
    assert m["r.ints"] == tuple(ints) and m["r.u64"] == u64 and m["r.f64"] == f64 and m["r.text"] == text
    assert m["r.words"] == (tuple(words) if len(words) <= 1024 else LongArray("string", len(words)))


# --- hostile and corrupt bytes ------------------------------------------------------------------------------------

FMT = {V.UINT8: "B", V.INT8: "b", V.UINT16: "H", V.INT16: "h", V.UINT32: "I", V.INT32: "i", V.FLOAT32: "f"}
FMT |= {V.BOOL: "?", V.UINT64: "Q", V.INT64: "q", V.FLOAT64: "d"}


def s(raw: bytes) -> bytes:
    return struct.pack("<Q", len(raw)) + raw


def start(tensors: int, kvs: int, version: int = 3, magic: bytes = b"GGUF") -> bytes:
    return magic + struct.pack("<IQQ", version, tensors, kvs)


def refused(tmp_path: Path, raw: bytes, name: str = "bad.gguf") -> HeaderError:
    path = tmp_path / name
    path.write_bytes(raw)
    began = time.process_time()  # CPU seconds of this process: its own work, not the machine's load
    tracemalloc.start()
    try:
        with pytest.raises(HeaderError) as info:
            read_header(path, cache=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.process_time() - began < 0.5
    assert peak < 32 << 20  # nothing allocated for the bad count (xz's own dictionary takes ~9 MB)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return info.value


def test_bad_magic(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 0, magic=b"GGUX"))
    assert e.offset == 0 and "bad magic" in str(e) and ": byte 0:" in str(e)


@pytest.mark.parametrize("version", [1, 99, 0x0300])
def test_unknown_version(version: int, tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 0, version=version))
    assert e.offset == 4 and f"unknown GGUF version {version}" in str(e)


def test_unknown_big_endian_version_reads_swapped(tmp_path: Path) -> None:
    e = refused(tmp_path, b"GGUF" + struct.pack(">IQQ", 1, 0, 0))
    assert e.offset == 4 and "unknown GGUF version 1 " in str(e)


def test_tensor_count_beyond_file(tmp_path: Path) -> None:
    e = refused(tmp_path, start(2**63, 0))
    assert e.offset == 8 and "tensor count 9223372036854775808" in str(e) and str(e).startswith(str(tmp_path))


def test_metadata_count_beyond_file(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 2**63))
    assert e.offset == 16 and "metadata count 9223372036854775808" in str(e)


def test_key_length_beyond_file(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 1) + struct.pack("<Q", 2**62) + b"abc" * 10)
    assert e.offset == 24 and "string length 4611686018427387904 runs past the end" in str(e)


def test_value_string_length_beyond_file(tmp_path: Path) -> None:
    raw = start(0, 1) + s(b"k") + struct.pack("<IQ", V.STRING, 2**62) + b"xyz"
    e = refused(tmp_path, raw)
    assert e.offset == 24 + 9 + 4 and "metadata 'k' value" in str(e)


def test_array_length_beyond_file(tmp_path: Path) -> None:
    raw = start(0, 1) + s(b"a") + struct.pack("<IIQ", V.ARRAY, V.UINT64, 2**60) + b"\0" * 64
    e = refused(tmp_path, raw)
    assert e.offset == 24 + 9 + 4 + 4 and "array of 1152921504606846976 uint64 needs at least" in str(e)


def test_header_cut_in_a_string(tmp_path: Path) -> None:
    raw = start(0, 1) + s(b"general.architecture") + struct.pack("<IQ", V.STRING, 10) + b"llam"
    path = tmp_path / "cut.gguf"
    path.write_bytes(raw)
    with pytest.raises(HeaderError) as info:
        stream_header(path)
    assert str(info.value) == (
        f"{path}: header ends at byte {len(raw)} while reading metadata 'general.architecture' value"
    )
    e = refused(tmp_path, raw)  # with the size known, the length is refused before reading
    assert e.offset == 24 + 28 + 4


def test_non_utf8_key(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 1) + s(b"ab\xff") + struct.pack("<IB", V.UINT8, 1))
    assert e.offset == 24 + 8 + 2 and "not UTF-8" in str(e)


def test_non_utf8_string_value_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "v.gguf"
    path.write_bytes(start(0, 1) + s(b"k") + struct.pack("<I", V.STRING) + s(b"a\xffb"))
    assert read_header(path).metadata["k"] == "a\ufffdb"


def test_non_utf8_tensor_name(tmp_path: Path) -> None:
    raw = start(1, 0) + s(b"\xc3") + struct.pack("<IQIQ", 1, 4, 0, 0)
    assert refused(tmp_path, raw).offset == 24 + 8


def test_five_dim_tensor(tmp_path: Path) -> None:
    raw = start(1, 0) + s(b"t") + struct.pack("<I5QIQ", 5, 1, 1, 1, 1, 1, 0, 0)
    e = refused(tmp_path, raw)
    assert e.offset == 24 + 9 and "5 dimensions" in str(e)


def test_unknown_value_type(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 1) + s(b"k") + struct.pack("<IQ", 13, 0))
    assert e.offset == 24 + 9 and "unknown value type 13" in str(e)


def test_unknown_array_element_type(tmp_path: Path) -> None:
    e = refused(tmp_path, start(0, 1) + s(b"k") + struct.pack("<IIQ", V.ARRAY, 42, 1))
    assert e.offset == 24 + 9 + 4 and "unknown array element type 42" in str(e)


def test_arrays_nested_too_deep(tmp_path: Path) -> None:
    raw = start(0, 1) + s(b"k") + struct.pack("<I", V.ARRAY) + struct.pack("<IQ", V.ARRAY, 1) * 20
    assert "nested more than" in str(refused(tmp_path, raw + b"\0" * 16))


def test_duplicate_key_and_tensor(tmp_path: Path) -> None:
    kv = s(b"k") + struct.pack("<IB", V.UINT8, 1)
    assert refused(tmp_path, start(0, 2) + kv + kv).offset == 24 + len(kv)
    t = s(b"t") + struct.pack("<IQIQ", 1, 4, 0, 0)
    assert "appears twice" in str(refused(tmp_path, start(2, 0) + t + t))


def test_bad_alignment(tmp_path: Path) -> None:
    raw = start(0, 1) + s(b"general.alignment") + struct.pack("<II", V.UINT32, 48)
    e = refused(tmp_path, raw)
    assert e.offset == 24 + 25 + 4 and "power of two" in str(e)


def test_compressed_hostile_counts_are_refused_against_the_cap(tmp_path: Path) -> None:
    # A compressed file has no size to check a count against: the cap on a header's bytes (32 MiB) stands in for it,
    # so a count no header of that size could hold is refused where it is read, before any loop or allocation.
    cap = "past 33,554,432 bytes, the most passprice reads of a header (set PASSPRICE_MAX_HEADER_BYTES to read more)"
    raw = start(2**63, 0)
    e = refused(tmp_path, lzma.compress(raw), "t.gguf.xz")
    assert str(e) == (
        f"{tmp_path / 't.gguf.xz'}: byte 8: tensor count 9223372036854775808 needs at least "
        f"221,360,928,884,514,619,392 bytes: {cap}"
    )
    strings = start(0, 1) + s(b"k") + struct.pack("<IIQ", V.ARRAY, V.STRING, 2**62) + s(b"ab") * 3
    e = refused(tmp_path, gzip.compress(strings), "s.gguf.gz")
    assert e.offset == 41 and str(e).endswith(f"metadata 'k': array of {2**62} string needs at least {8 * 2**62:,} "
                                              f"bytes: {cap}")
    u64s = start(0, 1) + s(b"k") + struct.pack("<IIQ", V.ARRAY, V.UINT64, 2**60) + b"\0" * 100
    assert refused(tmp_path, lzma.compress(u64s), "u.gguf.xz").offset == 41
    big_string = start(0, 1) + s(b"k") + struct.pack("<IQ", V.STRING, 2**62) + b"x" * 100
    assert refused(tmp_path, gzip.compress(big_string), "b.gguf.gz").offset == 37
    # Within the cap, a count the stream cannot back still fails where the bytes run out, never by allocating.
    short = start(0, 1) + s(b"k") + struct.pack("<IIQ", V.ARRAY, V.STRING, 1000) + s(b"ab") * 3
    e = refused(tmp_path, gzip.compress(short), "short.gguf.gz")
    assert e.offset == len(short) and "metadata 'k' array string 3" in str(e)


def test_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_header(tmp_path / "missing.gguf")
    (tmp_path / "broken.gguf.xz").write_bytes(b"\xfd7zXZ\x00garbage")
    with pytest.raises(InputError, match="cannot decompress"):
        read_header(tmp_path / "broken.gguf.xz")


# --- split checkpoints ----------------------------------------------------------------------------------------------


def write_split(folder: Path) -> list[Path]:
    w = GGUFWriter(folder / "model.gguf", "llama", split_max_tensors=2)
    w.add_block_count(1)
    for i in range(5):
        w.add_tensor(f"t{i}", np.full((i + 1, 4), i, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return [folder / f"model-{i:05d}-of-00003.gguf" for i in (1, 2, 3)]


def test_split_checkpoint_joins_every_shard(tmp_path: Path) -> None:
    paths = write_split(tmp_path)
    h = read_header(paths[1])
    assert h == read_header(paths[0]) == read_header(paths[2])
    assert [(t.name, t.shard) for t in h.tensors] == [("t0", 0), ("t1", 0), ("t2", 1), ("t3", 1), ("t4", 2)]
    assert h.tensor("t3") == TensorInfo("t3", (4, 4), 0, 64, 1)
    assert h.meta_int("block_count") == 1 and h.metadata["split.count"] == 3
    assert [s.file for s in h.shards] == [p.name for p in paths]
    singles = [stream_header(p) for p in paths]
    assert [s.tensor_count for s in h.shards] == [2, 2, 1]
    assert [s.header_bytes for s in h.shards] == [x.header_bytes for x in singles]
    assert h.header_bytes == sum(x.header_bytes for x in singles)
    joined = b"".join(p.read_bytes()[: x.header_bytes] for p, x in zip(paths, singles, strict=True))
    assert h.sha256 == hashlib.sha256(joined).hexdigest()
    for p, x in zip(paths, singles, strict=True):
        reader = GGUFReader(p)
        assert x.data_offset == reader.data_offset
        assert [t.name for t in x.tensors] == [t.name for t in reader.tensors]


def test_split_checkpoint_missing_shard(tmp_path: Path) -> None:
    paths = write_split(tmp_path)
    paths[2].unlink()
    with pytest.raises(HeaderError, match=r"split.count is 3 but shard 3 \(model-00003-of-00003.gguf\) is missing"):
        read_header(paths[0])


def test_the_header_cap_holds_for_the_shards_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each shard was held to the cap on its own, so 40 xz shards of 188 KB, each a 30 MB string, read
    1.2 GB (14 s). The cap is on the shards' header bytes together; it is refused at the shard that passes it."""
    w = GGUFWriter(tmp_path / "model.gguf", "llama", split_max_tensors=2)
    w.add_block_count(1)
    w.add_description("x" * 400_000)  # a first shard of 400 kB: a cap that holds it holds the per-key budgets too
    for i in range(5):
        w.add_tensor(f"t{i}", np.full((i + 1, 4), i, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    paths = [tmp_path / f"model-{i:05d}-of-00003.gguf" for i in (1, 2, 3)]
    sizes = [stream_header(p).header_bytes for p in paths]
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(sizes[0] + sizes[1]))  # two shards fit, not three
    with pytest.raises(HeaderError) as info:
        read_header(paths[0])
    assert str(info.value) == (
        f"{paths[2]}: byte {sizes[2]}: the 3 shards read so far hold {sum(sizes):,} header bytes, past the "
        f"{sizes[0] + sizes[1]:,} bytes passprice reads of a header (set PASSPRICE_MAX_HEADER_BYTES to a larger "
        "number of bytes to read it)"
    )
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(sum(sizes)))
    assert read_header(paths[0]).header_bytes == sum(sizes)


def test_split_tensor_count_must_match(tmp_path: Path) -> None:
    paths = write_split(tmp_path)
    raw = bytearray(paths[0].read_bytes())
    at = raw.index(b"split.tensors.count") + len(b"split.tensors.count") + 4
    raw[at : at + 4] = struct.pack("<i", 9)
    paths[0].write_bytes(bytes(raw))
    with pytest.raises(HeaderError, match=r"split\.tensors\.count is 9 but the shards hold 5") as info:
        read_header(paths[1])
    assert info.value.offset == at


# --- the cache ------------------------------------------------------------------------------------------------------


def test_cache_returns_the_same_object_until_the_file_changes(tmp_path: Path) -> None:
    clear_cache()
    path = write_complete(tmp_path / "model.gguf")
    first = read_header(path)
    assert read_header(path) is first
    assert read_header(str(path)) is first
    st_ = path.stat()
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
    second = read_header(path)
    assert second is not first and second == first
    assert read_header(path, cache=False) is not second


def test_cache_watches_every_shard(tmp_path: Path) -> None:
    clear_cache()
    paths = write_split(tmp_path)
    first = read_header(paths[0])
    assert read_header(paths[0]) is first
    st_ = paths[2].stat()
    os.utime(paths[2], ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
    assert read_header(paths[0]) is not first


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "xz"])
def test_header_cut_in_a_tensor_info_names_the_field(compressed: bool, tmp_path: Path) -> None:
    # A header cut inside its last tensor's info says which field of which tensor was being read, the name as
    # Python's repr writes it (the descriptions are formatted only when the bytes run short).
    name = "blk.0.it's \"q\""
    path = tmp_path / "whole.gguf"
    w = GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_tensor(name, np.zeros((3, 5), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    raw = path.read_bytes()
    end = read_header(path, cache=False).header_bytes
    offset_at, type_at = end - 8, end - 12
    dims_at = type_at - 16  # two dimensions
    count_at = dims_at - 4
    cases = [(count_at + 2, "dimension count"), (dims_at + 9, "dimensions"), (type_at + 3, "type"),
             (offset_at + 7, "offset")]
    for cut, field in cases:
        target = tmp_path / f"cut{cut}.gguf{'.xz' if compressed else ''}"
        target.write_bytes(lzma.compress(raw[:cut]) if compressed else raw[:cut])
        with pytest.raises(HeaderError) as caught:
            read_header(target, cache=False)
        assert str(caught.value) == f"{target}: header ends at byte {cut} while reading tensor {name!r} {field}"
