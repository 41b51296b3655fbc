"""The header benchmark's floor (issue 16, round head39): ``benchmarks/bench.py`` times the header reader's
vocabulary walk alone (``vocabulary_walk``: each long string array stepped through as ``_Reader.skip_strings`` does,
over the header's bytes in memory, nothing hashed) beside a plain read and its sha256, and prints their sum as the
floor of a first read in Python. The walk reaches into the reader's private ``_Reader``, so this pins that it still
steps through exactly the strings the file holds and ends where their bytes end (worked out by hand here), in either
byte order and across the reader's slow paths (strings of 64 bytes and more, an empty one, runs cut mid-way)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import attrs
import pytest
from gguf import GGUFEndian, GGUFWriter

from passprice import gguf_header
from passprice.gguf_header import LongArray, read_header

ROOT = Path(__file__).resolve().parent.parent
#: 1,300 tokens (more than KEEP_ARRAY_LIMIT: a long array, walked): five runs of 256 and a rest; a 0-, 63-, 64-,
#: 300- and a 2-byte-character token among them.
TOKENS = [f"t{i}" for i in range(1300)]
TOKENS[5], TOKENS[300], TOKENS[301], TOKENS[600], TOKENS[1299] = "", "a" * 63, "b" * 64, "c" * 300, "\u00e9" * 40
MERGES = [f"m {i}" for i in range(1100)]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("passprice_bench_head39", ROOT / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(path: Path, endian: GGUFEndian) -> Path:
    w = GGUFWriter(path, "llama", endianess=endian)
    w.add_uint32("llama.block_count", 1)
    w.add_array("tokenizer.ggml.tokens", TOKENS)
    w.add_array("tokenizer.ggml.merges", MERGES)
    w.add_uint32("tokenizer.ggml.bos_token_id", 1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG])
def test_the_walk_ends_where_the_strings_bytes_end(
    bench: ModuleType, tmp_path: Path, endian: GGUFEndian, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "v.gguf", endian)
    header = read_header(path, cache=False)
    order = "little" if endian == GGUFEndian.LITTLE else "big"
    assert header.byte_order == order
    data = path.read_bytes()
    spans = gguf_header._parse_file(path, [], False).spans
    assert spans is not None
    for key, strings in (("tokenizer.ggml.tokens", TOKENS), ("tokenizer.ggml.merges", MERGES)):
        value = header.metadata[key]
        assert isinstance(value, LongArray) and value.length == len(strings)
        elements = b"".join(len(b).to_bytes(8, order) + b for b in (s.encode() for s in strings))
        start = data.index(elements)
        assert spans[key] == (start, start + len(elements))  # where the walk starts and must end, by hand
    stepped: list[int] = []
    skip = gguf_header._Reader.skip_strings

    def counted(self: gguf_header._Reader, count: int, what: str) -> None:
        stepped.append(count)
        skip(self, count, what)

    walk = bench.vocabulary_walk(path, header)  # its own assertion: each walk ends at the array's end
    monkeypatch.setattr(gguf_header._Reader, "skip_strings", counted)
    walk()
    assert stepped == [1300, 1100]


def test_a_walk_that_ends_elsewhere_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    """One string fewer than the array holds: the walk stops 8 + 80 bytes (the last token's) short of the array's
    end, and says so."""
    path = write(tmp_path / "v.gguf", GGUFEndian.LITTLE)
    header = read_header(path, cache=False)
    short = {**header.metadata, "tokenizer.ggml.tokens": LongArray("string", 1299, None)}
    walk = bench.vocabulary_walk(path, attrs.evolve(header, metadata=short))
    _, end = gguf_header._parse_file(path, [], False).spans["tokenizer.ggml.tokens"]  # type: ignore[index]
    with pytest.raises(AssertionError, match=rf"\({end - 8 - len(TOKENS[1299].encode())}, {end}\)"):
        walk()
