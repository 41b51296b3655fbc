"""Long string arrays (tokenizer vocabularies) are skipped a run of short strings at a time by a regular expression;
these check that the fast path and the one-string-at-a-time path agree with gguf.GGUFReader on every case the fast
path does not take: long strings inside a run, a string longer than a read chunk, a run crossing the buffer's end,
the tail shorter than a run, big-endian lengths, and a compressed stream whose size is not known."""

from __future__ import annotations

import lzma
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFEndian, GGUFReader, GGUFWriter

from passprice import gguf_header
from passprice.gguf_header import CHUNK, SHORT_BYTES, SHORT_RUN, LongArray, _short_strings, read_header


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

        def match(self, data: bytes, pos: int) -> re.Match[bytes] | None:
            found = self.pattern.match(data, pos)
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
