"""Round 31h (issue 16: the header's first read). What a first read of a vocabulary must give, pinned so any faster
walk of the token strings (docs/PERFORMANCE.md, round 31h: none in pure Python beat the regular expression's) is
held to it: a vocabulary of odd strings (empty, 10,000 bytes, bytes that are not UTF-8, lengths at the run
pattern's and the length byte's edges) is read as a plain walk of its length prefixes reads it, its
``LongArray.sha256`` the sha256 of the element bytes built by hand, the keys after it in step; the ``header``
command prints the same bytes on a first read, a read from the cache folder and ``--no-cache``, and the cache folder
keeps the parse field for field (the digest included); a length past the end of the file is refused at its offset,
in one line.

Behaviour only, no timing."""

from __future__ import annotations

import hashlib
import lzma
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from gguf import GGUFWriter

from passprice import cache, gguf_header
from passprice.cli import cli
from passprice.gguf_header import KEEP_ARRAY_LIMIT, HeaderError, LongArray, clear_cache, read_header

HERE = Path(__file__).resolve().parent
KEY = "tokenizer.ggml.tokens"
COUNT = KEEP_ARRAY_LIMIT + 700  # too long to keep: walked string by string, kept as a LongArray
#: Odd strings at indices inside the first run of 256, a later run, a run of 16 and the tail (the walk's paths).
ODD = {
    0: b"",
    1: b"x" * 10_000,
    2: b"\xff\xfe not UTF-8",
    3: "é".encode(),
    4: b"y" * 63,  # the longest string a run pattern matches (SHORT_BYTES - 1)
    5: b"z" * 64,  # the shortest it does not
    300: b"w" * 255,  # the largest length of one byte
    301: b"v" * 256,  # the smallest of two
    600: b"",
    COUNT - 20: b"\x80" * 10_000,
    COUNT - 1: b"",
}


def vocabulary() -> list[bytes]:
    return [ODD.get(i, b"t%d" % i) for i in range(COUNT)]


def write(path: Path, tokens: list[bytes]) -> Path:
    """A header-only GGUF v3 file: the vocabulary, float32 scores, two keys after them and one tensor."""
    w = GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_array(KEY, tokens)
    w.add_array("tokenizer.ggml.scores", [float(-i) for i in range(len(tokens))])
    w.add_uint32("t.after", 7)
    w.add_string("t.after_string", "still in step")
    w.add_tensor_info("token_embd.weight", (8, 4), np.dtype(np.float32), 128, raw_dtype=None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


def elements_bytes(tokens: list[bytes]) -> bytes:
    """The vocabulary's element bytes as GGUF writes them (a u64 length, little-endian, then the bytes), built by
    hand, not by the reader."""
    return b"".join(struct.pack("<Q", len(t)) + t for t in tokens)


def reference_walk(data: bytes, start: int, count: int) -> list[int]:
    """The offset of each of ``count`` strings' length prefixes from ``start``, one at a time; the end last."""
    offsets = [start]
    for _ in range(count):
        at = offsets[-1]
        offsets.append(at + 8 + int.from_bytes(data[at : at + 8], "little"))
    return offsets


def tokens_start(data: bytes) -> int:
    """The offset of the vocabulary's first length prefix: after its key, its type (u32) and its element type and
    length (u32, u64)."""
    return data.index(KEY.encode()) + len(KEY) + 4 + 12


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.setenv("PASSPRICE_NO_MEMO", "1")
    monkeypatch.setattr(cache, "_enabled", cache._enabled)  # put back after a `--no-cache` run in this process
    clear_cache()
    return folder


def test_odd_vocabulary_reads_as_a_walk_of_its_length_prefixes(tmp_path: Path, cache_dir: Path) -> None:
    tokens = vocabulary()
    path = write(tmp_path / "odd.gguf", tokens)
    data = path.read_bytes()
    header = read_header(path, cache=False)
    value = header.metadata[KEY]
    assert value == LongArray("string", COUNT)
    assert isinstance(value, LongArray)
    assert value.sha256 == hashlib.sha256(elements_bytes(tokens)).hexdigest()
    start = tokens_start(data)
    end = reference_walk(data, start, COUNT)[-1]
    assert data[start:end] == elements_bytes(tokens)
    scores = header.metadata["tokenizer.ggml.scores"]
    assert isinstance(scores, LongArray) and scores.length == COUNT
    # The scores' element bytes follow the vocabulary's key, type, element type and length: 4 + 12 bytes each.
    scores_at = end + 8 + len("tokenizer.ggml.scores") + 4 + 12
    assert scores.sha256 == hashlib.sha256(struct.pack(f"<{COUNT}f", *(-i for i in range(COUNT)))).hexdigest()
    assert data[scores_at : scores_at + 4 * COUNT] == struct.pack(f"<{COUNT}f", *(-i for i in range(COUNT)))
    assert header.metadata["t.after"] == 7
    assert header.metadata["t.after_string"] == "still in step"
    assert [(t.name, t.dims, t.type_id) for t in header.tensors] == [("token_embd.weight", (4, 8), 0)]
    assert header.header_bytes == len(data)  # header only: the tensor-info table ends the file
    assert header.sha256 == hashlib.sha256(data).hexdigest()
    # The same bytes as a stream of unknown length (xz): the same header, the same digests.
    packed = tmp_path / "odd.gguf.xz"
    packed.write_bytes(lzma.compress(data))
    again = read_header(packed, cache=False)
    assert again == header
    assert repr(again.metadata) == repr(header.metadata)


def _kept(path: Path) -> tuple[object, ...] | None:
    data = gguf_header._kept_data(str(path.resolve()), gguf_header.header_cap())
    return cache.kept_object(gguf_header._KEPT_KIND, data, tuple)


def test_header_command_prints_the_same_bytes_parsed_kept_and_uncached(tmp_path: Path, cache_dir: Path) -> None:
    path = write(tmp_path / "odd.gguf", vocabulary())
    runner = CliRunner()

    def printed(*args: str) -> str:
        clear_cache()  # nothing kept in this process: each run reads the cache folder or the file
        result = runner.invoke(cli, [*args, "header", str(path), "--json", "--metadata"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    first = printed()  # parsed (without its long arrays' digests, which no view shows), then kept in the cache folder
    kept = _kept(path)
    assert printed() == first  # read from the cache folder
    # The cache folder keeps the parse field for field; `header` shows no long array's digest and keeps the header
    # without them, with their elements' offsets (session 32), from which a reader asking for them makes them.
    parsed = read_header(path, cache=False)
    kept = _kept(path)
    assert kept is not None
    version, byte_order, metadata, value_types, rows, header_bytes, alignment, data_offset, sha256, spans = kept
    assert (version, byte_order, header_bytes, alignment, data_offset, sha256) == (
        parsed.version, parsed.byte_order, parsed.header_bytes, parsed.alignment, parsed.data_offset, parsed.sha256)
    assert metadata == parsed.metadata and metadata[KEY].sha256 is None
    assert isinstance(spans, dict) and set(spans) == {k for k, v in parsed.metadata.items() if isinstance(v, LongArray)}
    assert value_types == parsed.value_types
    assert rows == tuple((t.name, t.dims, t.type_id, t.offset) for t in parsed.tensors)
    clear_cache()
    assert repr(read_header(path).metadata) == repr(parsed.metadata)  # repr: LongArray.sha256 is not in equality
    assert '"tokenizer.ggml.tokens": {\n      "long_array": "string",\n      "length": 1724\n    }' in first
    assert COUNT == 1724
    clear_cache()
    seen = read_header(path)  # from the cache folder
    assert repr(seen.metadata) == repr(parsed.metadata)
    assert printed("--no-cache") == first  # parsed, nothing read from the cache folder


@pytest.mark.parametrize("index", [1, 2, 300, 301, 600, COUNT - 20, COUNT - 1])
def test_a_length_past_the_end_is_refused_at_its_offset(tmp_path: Path, cache_dir: Path, index: int) -> None:
    tokens = vocabulary()
    data = bytearray(write(tmp_path / "odd.gguf", tokens).read_bytes())
    at = reference_walk(bytes(data), tokens_start(bytes(data)), COUNT)[index]
    struct.pack_into("<Q", data, at, 10**12)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(data))
    left = len(data) - at - 8
    want = (f"bad.gguf: byte {at}: metadata '{KEY}' array string {index}: string length 1000000000000 runs past "
            f"the end of the file ({left} bytes left)")
    with pytest.raises(HeaderError) as caught:
        read_header(bad, cache=False)
    assert str(caught.value).endswith(want)
    assert caught.value.offset == at
    result = CliRunner().invoke(cli, ["header", str(bad)], catch_exceptions=False)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].endswith(want), result.stderr


def test_a_file_cut_inside_a_long_token_is_refused_at_its_length(tmp_path: Path, cache_dir: Path) -> None:
    tokens = vocabulary()
    data = write(tmp_path / "odd.gguf", tokens).read_bytes()
    index = COUNT - 20  # the 10,000 bytes of 0x80 near the vocabulary's end
    at = reference_walk(data, tokens_start(data), COUNT)[index]
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: at + 8 + 5_000])
    want = (f"cut.gguf: byte {at}: metadata '{KEY}' array string {index}: string length 10000 runs past the end of "
            "the file (5000 bytes left)")
    with pytest.raises(HeaderError) as caught:
        read_header(cut, cache=False)
    assert str(caught.value).endswith(want)


@pytest.mark.parametrize(("name", "count", "first"), [
    ("gemma3-270m-q4_k_m.header.gguf.xz", 262_144, "<pad>"),
    ("deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz", 152_064, "!"),
])
def test_shipped_headers_digests_are_the_walks(name: str, count: int, first: str, cache_dir: Path) -> None:
    data = lzma.decompress((HERE / "data" / name).read_bytes())
    header = read_header(HERE / "data" / name, cache=False)
    tokens = header.metadata[KEY]
    assert isinstance(tokens, LongArray) and tokens.length == count
    start = tokens_start(data)
    end = reference_walk(data, start, count)[-1]
    assert data[start + 8 : start + 8 + len(first)] == first.encode()
    assert tokens.sha256 == hashlib.sha256(data[start:end]).hexdigest()
    assert header.sha256 == hashlib.sha256(data[: header.header_bytes]).hexdigest()
