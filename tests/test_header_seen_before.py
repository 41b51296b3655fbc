"""A plain GGUF file's header read before is read again from passprice's cache folder (``gguf_header._seen_before``):
served only while the file's first ``header_bytes`` bytes still hash to the header's sha256, equal field for field to
what parsing returns (its ``source`` and shard file the path given now), and never for another cap, a compressed
file, a bypassed cache, an edit made in place (same size, same modification time) or a damaged entry."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from passprice import cache, gguf_header
from passprice.gguf_header import KEEP_ARRAY_LIMIT, HeaderError, LongArray, clear_cache, read_header


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    clear_cache()  # nothing kept in this process: every read below goes to the cache folder or the file
    return folder


def write(path: Path, *, tokens: int = KEEP_ARRAY_LIMIT + 500, after: int = 7) -> Path:
    """A header with a vocabulary too long to keep (walked string by string when parsed), a uint32 ``t.after``
    after it and one tensor."""
    w = GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(tokens)])
    w.add_uint32("t.after", after)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def entries(folder: Path) -> list[Path]:
    objects = folder / "objects"
    return sorted(objects.glob("*.pickle")) if objects.is_dir() else []


class Walks:
    """Counts the vocabulary walks of the parser (``_Reader.skip_strings``): none on a header read again."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = gguf_header._Reader.skip_strings

        def counting(reader: gguf_header._Reader, count: int, what: str) -> None:
            self.count += 1
            real(reader, count, what)

        monkeypatch.setattr(gguf_header._Reader, "skip_strings", counting)


def test_a_header_seen_before_is_read_without_walking_its_strings(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "m.gguf")
    parsed = read_header(path, cache=False)
    assert entries(cache_dir) == []  # cache=False keeps nothing
    walks = Walks(monkeypatch)
    first = read_header(path)
    assert walks.count == 1 and len(entries(cache_dir)) == 1
    clear_cache()
    again = read_header(path)
    assert walks.count == 1  # no string walked: read from the cache folder
    assert again is not first and again == parsed and repr(again) == repr(parsed)
    assert again.metadata["tokenizer.ggml.tokens"] == LongArray("string", KEEP_ARRAY_LIMIT + 500)
    assert again.metadata["t.after"] == 7 and again.tensor("token_embd.weight") == parsed.tensors[0]
    assert read_header(path) is again  # then kept in the process, as a parsed header is
    # Through another spelling of the same file: its source and shard file are the path given now.
    link = tmp_path / "link.gguf"
    link.symlink_to(path)
    clear_cache()
    via_link = read_header(link)
    assert walks.count == 1 and via_link == parsed
    assert via_link.source == str(link) and via_link.shards[0].file == "link.gguf"
    assert repr(via_link) == repr(read_header(link, cache=False))


def test_a_header_changed_in_place_is_never_served(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "m.gguf", after=7)
    assert read_header(path).metadata["t.after"] == 7
    st = path.stat()
    edited = write(tmp_path / "other.gguf", after=9).read_bytes()
    assert len(edited) == st.st_size  # the same size: only the value differs
    path.write_bytes(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same modification time
    clear_cache()
    walks = Walks(monkeypatch)
    assert read_header(path).metadata["t.after"] == 9
    assert walks.count == 1  # parsed again
    # Changed into a header that does not read: the parser's own error, word for word.
    broken = bytearray(edited)
    broken[4:8] = (7).to_bytes(4, "little")  # version 7
    path.write_bytes(bytes(broken))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    clear_cache()
    with pytest.raises(HeaderError) as cached:
        read_header(path)
    with pytest.raises(HeaderError) as uncached:
        read_header(path, cache=False)
    assert str(cached.value) == str(uncached.value) == f"{path}: byte 4: unknown GGUF version 7 (passprice reads " \
        "versions 2 and 3)"
    # Cut short inside its header: refused as parsing refuses it.
    path.write_bytes(edited[:100])
    clear_cache()
    with pytest.raises(HeaderError) as short:
        read_header(path)
    with pytest.raises(HeaderError) as short_uncached:
        read_header(path, cache=False)
    assert str(short.value) == str(short_uncached.value)
    assert "header ends at byte 100 while reading" in str(short.value)


def test_only_the_same_cap_and_a_whole_entry_are_served(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "m.gguf")
    parsed = read_header(path)
    walks = Walks(monkeypatch)
    clear_cache()
    monkeypatch.setenv(gguf_header.CAP_VARIABLE, str(64 << 20))
    assert read_header(path) == parsed and walks.count == 1  # another cap: parsed (and kept under it)
    monkeypatch.delenv(gguf_header.CAP_VARIABLE)
    assert len(entries(cache_dir)) == 2
    for entry in entries(cache_dir):
        entry.write_bytes(entry.read_bytes()[:-1] + b"!")  # damaged: fails its checksum
    clear_cache()
    assert read_header(path) == parsed and walks.count == 2  # a miss, parsed and kept again
    clear_cache()
    assert read_header(path) == parsed and walks.count == 2


def test_compressed_files_and_a_bypassed_cache_keep_nothing(tmp_path: Path, cache_dir: Path) -> None:
    path = write(tmp_path / "m.gguf")
    header = read_header(path, cache=False)
    packed = tmp_path / "m.gguf.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()[: header.header_bytes]))
    assert read_header(packed) == header
    assert entries(cache_dir) == []  # a compressed file is parsed every time (its raw bytes are not the header's)
    cache.configure(False)
    try:
        assert read_header(path) == header
    finally:
        cache.configure(True)
    assert entries(cache_dir) == []
