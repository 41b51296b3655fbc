"""Long string arrays (tokenizer vocabularies) are skipped a run of short strings at a time by a regular expression;
these check that the fast path and the one-string-at-a-time path agree with gguf.GGUFReader on every case the fast
path does not take: long strings inside a run, a string longer than a read chunk, a run crossing the buffer's end,
the tail shorter than a run, big-endian lengths, and a compressed stream whose size is not known."""

from __future__ import annotations

import hashlib
import io
import lzma
import re
import struct
import sys
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from gguf import GGUFEndian, GGUFReader, GGUFValueType, GGUFWriter

from passprice import gguf_header
from passprice.gguf_header import (
    CHUNK,
    SHORT_BYTES,
    SHORT_RUN,
    LongArray,
    _short_strings,
    read_header,
    read_stream,
)


def vocabulary(count: int) -> list[str]:
    """``count`` tokens, mostly short; every 600th 256 to 755 bytes long, and one longer than a read chunk."""
    out = []
    for i in range(count):
        if i == count // 2:
            out.append("y" * (CHUNK + 12345))
        elif i % 600 == 0:
            out.append("x" * (256 + i % 500))
        else:
            out.append(f"tok{i}" + "é" * (i % 7))
    return out


def write(path: Path, endian: GGUFEndian, tokens: list[str]) -> Path:
    w = GGUFWriter(path, "llama", endianess=endian)
    w.add_uint32("llama.block_count", 1)
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_uint32("t.after", 7)
    w.add_string("t.after_string", "still in step")
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["little", "big"])
def test_vocabulary_with_long_strings_is_skipped_exactly(
    endian: GGUFEndian, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = vocabulary(8 * SHORT_RUN + 77)  # runs, and a tail shorter than a run
    path = write(tmp_path / "v.gguf", endian, tokens)
    runs: list[bool] = []

    class Counting:
        def __init__(self, order: str, run: int) -> None:
            self.pattern = _short_strings(order, run)

        def match(self, data: bytes, pos: int, endpos: int = sys.maxsize) -> re.Match[bytes] | None:
            found = self.pattern.match(data, pos, endpos)  # hdr54: the walk stops at the header's cap
            runs.append(found is not None)
            return found

    monkeypatch.setattr(gguf_header, "_short_strings", Counting)
    header = read_header(path, cache=False)
    assert any(runs) and not all(runs)  # both paths taken
    assert header.metadata["tokenizer.ggml.tokens"] == LongArray("string", len(tokens))
    assert header.metadata["t.after"] == 7
    assert header.metadata["t.after_string"] == "still in step"
    reader = GGUFReader(path)
    assert header.data_offset == reader.data_offset
    assert [t.name for t in header.tensors] == ["token_embd.weight"]
    # The same bytes through a stream of unknown length (xz): the same header.
    packed = tmp_path / "v.gguf.xz"
    packed.write_bytes(lzma.compress(path.read_bytes()[: header.header_bytes]))
    assert read_header(packed, cache=False) == header


@pytest.mark.parametrize("order", ["<", ">"])
def test_short_string_run_pattern(order: str) -> None:
    # SHORT_RUN strings of lengths 0..SHORT_BYTES - 1 match as one run ending exactly after the last; a string of
    # SHORT_BYTES bytes, or a run cut short, does not match at all (shorter runs, then one string at a time take over).
    pattern = _short_strings(order, SHORT_RUN)
    strings = [bytes([i % 251]) * (i % SHORT_BYTES) for i in range(SHORT_RUN)]
    data = b"".join(struct.pack(order + "Q", len(s)) + s for s in strings)
    matched = pattern.match(data + b"tail")
    assert matched is not None and matched.end() == len(data)
    assert pattern.match(data[:-1]) is None
    strings[100] = b"z" * SHORT_BYTES
    longer = b"".join(struct.pack(order + "Q", len(s)) + s for s in strings)
    assert pattern.match(longer) is None


@pytest.mark.parametrize("run", [16, 17, 2, 1])
@pytest.mark.parametrize("order", ["<", ">"])
def test_a_run_pattern_matches_exactly_its_strings(order: str, run: int) -> None:
    # A run pattern matches exactly `run` strings, the last one's bytes included, and never fewer (a string too long,
    # first or last, fails it).
    pattern = _short_strings(order, run)
    strings = [bytes([65 + i]) * ((7 * i + 3) % SHORT_BYTES) for i in range(run + 3)]
    packed = [struct.pack(order + "Q", len(s)) + s for s in strings]
    data = b"".join(packed)
    matched = pattern.match(data)
    assert matched is not None and matched.end() == len(b"".join(packed[:run]))
    assert pattern.match(b"".join(packed[: run - 1]) + packed[run - 1][:-1]) is None
    for at in {0, run - 1}:
        bad = list(strings)
        bad[at] = b"z" * SHORT_BYTES
        assert pattern.match(b"".join(struct.pack(order + "Q", len(s)) + s for s in bad)) is None


def realistic_vocabulary(count: int) -> list[str]:
    """``count`` tokens with a real vocabulary's spread of byte lengths: empty, 1 to 63 bytes (every length the fast
    path's pattern has an alternative for, multi-byte UTF-8 among them), and now and then 64 to 300 bytes."""
    out = []
    for i in range(count):
        if i % 997 == 500:
            out.append("▁" * (22 + i % 80))  # 66 to 300 bytes: 3 bytes a character
        elif i % 331 == 7:
            out.append("")
        else:
            width = (i * 7919) % 64  # every length from 0 to 63 bytes comes up
            out.append(("é" * (width // 2) + "a" * (width % 2)) if i % 3 == 0 else "t" * width)
    return out


@pytest.mark.parametrize("chunk", [CHUNK, 20_000], ids=["chunk", "small-chunks"])
@pytest.mark.parametrize("endian", [GGUFEndian.LITTLE, GGUFEndian.BIG], ids=["little", "big"])
def test_header_with_long_string_arrays_equals_gguf_reader(
    endian: GGUFEndian, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A header shaped like a real one (vocabulary, scores, token types, merges, each long and skipped; short keys
    # and arrays before and after them; a tensor table): what read_header keeps equals what GGUFReader reads, field
    # by field, the long arrays as their element type and GGUFReader's length, and the header's bytes end where
    # GGUFReader's last tensor info ends. Most strings are skipped by the fast path (a pattern that stops matching
    # leaves them to the slow one, and the header would still be right: the runs matched are counted). Read in
    # chunks of 20,000 bytes too (a run's most bytes and a little more), so the buffer is refilled a few times
    # inside the vocabulary: from the file again (a seek back), and, for the same bytes compressed, by joining.
    tokens = realistic_vocabulary(5 * SHORT_RUN + 39)
    merges = [f"{t[:5]} {t[-5:]}" for t in tokens[: 4 * SHORT_RUN + 100]]
    path = tmp_path / "vocab.gguf"
    w = GGUFWriter(path, "llama", endianess=endian)
    w.add_uint32("llama.block_count", 2)
    w.add_array("general.tags", ["a", "bb", ""])
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.scores", [float(i) / 7 for i in range(len(tokens))])
    w.add_array("tokenizer.ggml.token_type", [i % 6 for i in range(len(tokens))])
    w.add_array("tokenizer.ggml.merges", merges)
    w.add_uint32("tokenizer.ggml.eos_token_id", 2)
    w.add_string("t.after", "é still in step")
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.add_tensor("output_norm.weight", np.ones(8, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    matched: list[int] = []

    class Counting:
        def __init__(self, order: str, run: int) -> None:
            self.pattern, self.run = _short_strings(order, run), run

        def match(self, data: bytes, pos: int, endpos: int = sys.maxsize) -> re.Match[bytes] | None:
            found = self.pattern.match(data, pos, endpos)  # hdr54: the walk stops at the header's cap
            matched.extend([self.run] if found is not None else [])
            return found

    monkeypatch.setattr(gguf_header, "_short_strings", Counting)
    monkeypatch.setattr(gguf_header, "CHUNK", chunk)
    header = read_header(path, cache=False)
    assert sum(matched) >= (len(tokens) + len(merges)) * 3 // 4
    packed = tmp_path / "vocab.gguf.xz"
    packed.write_bytes(lzma.compress(path.read_bytes()[: header.header_bytes]))
    assert read_header(packed, cache=False) == header
    # A seekable stream of known size is read from where it stands, whatever comes before.
    stream = io.BytesIO(b"junk" + path.read_bytes())
    stream.seek(4)
    assert read_stream(stream, "stream", path.stat().st_size) == header
    reader = GGUFReader(path)
    fields = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert list(header.metadata) == list(fields)
    for key, field in fields.items():
        ours = header.metadata[key]
        element = field.types[-1].name.lower()
        if field.types[0] == GGUFValueType.ARRAY:
            assert header.value_types[key] == f"array[{element}]", key
            if len(field.data) > gguf_header.KEEP_ARRAY_LIMIT:
                assert ours == LongArray(element, len(field.data)), key
            else:
                assert list(cast(tuple, ours)) == field.contents(), key
        else:
            assert header.value_types[key] == element, key
            assert ours == field.contents(), key
    assert header.metadata["tokenizer.ggml.tokens"] == LongArray("string", len(tokens))
    assert header.metadata["tokenizer.ggml.merges"] == LongArray("string", len(merges))
    assert fields["tokenizer.ggml.tokens"].contents() == tokens  # the file holds the vocabulary asked for
    assert [(t.name, t.dims, t.type_id) for t in header.tensors] == [
        (t.name, tuple(int(d) for d in t.shape), int(t.tensor_type)) for t in reader.tensors
    ]
    assert [header.data_offset + t.offset for t in header.tensors] == [t.data_offset for t in reader.tensors]
    last = reader.tensors[-1].field
    assert header.header_bytes == last.offset + sum(part.nbytes for part in last.parts)
    assert (header.data_offset, header.alignment) == (reader.data_offset, reader.alignment)
    raw = path.read_bytes()
    assert header.sha256 == hashlib.sha256(raw[: header.header_bytes]).hexdigest()
