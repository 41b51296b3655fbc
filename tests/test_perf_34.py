"""A header read without its long arrays' digests (``read_header(..., array_digests=False)``: ``passprice header``,
whose views show none) hashes each long array's elements once, into the header's sha256, not twice (issue 16: about
a fifth of a first read of gemma3 270M's header). It equals the header read with them (``LongArray.sha256`` is not
part of equality), its sha256 is the same, and the cache never hands it to a reader asking for the digests (a scope,
``import``): kept in the cache folder with its long arrays' offsets, it gives that reader the digests of those bytes
of the header it reads and hashes anyway (no string walked); damaged offsets are a miss, and the file is parsed."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from gguf import GGUFWriter

from passprice import cache, gguf_header
from passprice.cli import cli
from passprice.gguf_header import KEEP_ARRAY_LIMIT, LongArray, clear_cache, read_header

TOKENS = KEEP_ARRAY_LIMIT + 300
SCORES = KEEP_ARRAY_LIMIT + 5


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.setenv("PASSPRICE_NO_MEMO", "1")
    clear_cache()
    yield folder
    clear_cache()


def write(path: Path) -> Path:
    """A header of one block with a long string array, a long float32 array and two tensors (``blk.0``'s norm: import
    refuses a header naming a block no tensor fills, walk45)."""
    w = GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 1)
    w.add_uint32("llama.embedding_length", 8)
    w.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(TOKENS)])
    w.add_array("tokenizer.ggml.scores", [float(i) / 4 for i in range(SCORES)])
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.add_tensor("blk.0.attn_norm.weight", np.zeros((8,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def element_digests(path: Path) -> dict[str, str]:
    """Each long array's sha256 worked out by hand: of the bytes after its element type (u32) and length (u64)."""
    data = path.read_bytes()
    tokens = b"".join(len(s).to_bytes(8, "little") + s for s in (f"t{i}".encode() for i in range(TOKENS)))
    scores = np.arange(SCORES, dtype=np.float32).__truediv__(4).astype("<f4").tobytes()
    assert data.count(tokens) == 1 and data.count(scores) == 1  # the bytes the file holds, found once each
    return {"tokenizer.ggml.tokens": hashlib.sha256(tokens).hexdigest(),
            "tokenizer.ggml.scores": hashlib.sha256(scores).hexdigest()}


class Walks:
    """Counts the parser's vocabulary walks (``_Reader.skip_strings``): none on a header read from the cache folder."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = gguf_header._Reader.skip_strings

        def counting(reader: gguf_header._Reader, count: int, what: str) -> None:
            self.count += 1
            real(reader, count, what)

        monkeypatch.setattr(gguf_header._Reader, "skip_strings", counting)


def digests_of(header: gguf_header.GGUFHeader) -> dict[str, str | None]:
    return {k: v.sha256 for k, v in header.metadata.items() if isinstance(v, LongArray)}


def test_without_digests_the_same_header_and_sha256_and_none_hashed_twice(tmp_path: Path, cache_dir: Path) -> None:
    path = write(tmp_path / "m.gguf")
    want = element_digests(path)
    full = read_header(path, cache=False)
    bare = read_header(path, cache=False, array_digests=False)
    assert digests_of(full) == want
    assert digests_of(bare) == dict.fromkeys(want)
    assert bare == full and bare.sha256 == full.sha256
    size = full.header_bytes
    assert full.sha256 == hashlib.sha256(path.read_bytes()[:size]).hexdigest()


def test_the_cache_never_serves_a_header_without_digests_to_a_reader_asking_for_them(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "m.gguf")
    want = element_digests(path)
    # In the process: read without, then with.
    assert digests_of(read_header(path, array_digests=False)) == dict.fromkeys(want)
    assert digests_of(read_header(path)) == want
    assert digests_of(read_header(path, array_digests=False)) == want  # a reader not asking takes them too
    # Through the cache folder: kept without, with the arrays' offsets; asked for with, made from the header's bytes
    # (no string walked).
    clear_cache()
    for entry in (cache_dir / "objects").glob("*.pickle"):
        entry.unlink()
    read_header(path, array_digests=False)
    walks = Walks(monkeypatch)
    for _ in range(2):
        clear_cache()
        assert digests_of(read_header(path)) == want
    clear_cache()
    assert digests_of(read_header(path, array_digests=False)) == dict.fromkeys(want)  # as kept
    assert walks.count == 0


@pytest.mark.parametrize("spans", [
    {"tokenizer.ggml.tokens": (10, 5)},  # backwards
    {"tokenizer.ggml.tokens": (0, 10**9)},  # past the header
    {"tokenizer.ggml.tokens": "x"},  # not a pair
    {"llama.block_count": (0, 4)},  # not a long array
    {"no.such.key": (0, 4)},
    {"tokenizer.ggml.tokens": (0, 4)},  # the scores' offsets missing: a long array left without its digest
    [("tokenizer.ggml.tokens", (0, 4))],  # not a dict
])
def test_kept_offsets_that_are_not_this_codes_are_a_miss(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, spans: object
) -> None:
    """An entry whose offsets are damaged (or not this code's) is never trusted for the digests: the file is parsed
    and the digests are the parse's, never an error."""
    path = write(tmp_path / "m.gguf")
    want = element_digests(path)
    read_header(path, array_digests=False)
    data = gguf_header._kept_data(str(path.resolve()), gguf_header.header_cap())
    kept = cache.kept_object(gguf_header._KEPT_KIND, data, tuple)
    assert kept is not None and set(kept[-1]) == set(want)
    cache.keep_object(gguf_header._KEPT_KIND, data, (*kept[:-1], spans))
    walks = Walks(monkeypatch)
    clear_cache()
    assert digests_of(read_header(path)) == want
    assert walks.count == 1  # parsed


def test_header_command_prints_the_same_and_import_after_it_records_the_digests(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = tmp_path / "reg"
    runner = CliRunner()
    init = runner.invoke(cli, ["init", str(root)], catch_exceptions=False)
    assert init.exit_code == 0, init.output
    path = write(tmp_path / "m.gguf")
    want = element_digests(path)
    outputs = []
    for args in (["--json", "--metadata"], ["--metadata", "--tensors"], []):
        for no_cache in ([], ["--no-cache"]):
            clear_cache()
            result = runner.invoke(cli, ["--root", str(root), *no_cache, "header", str(path), *args],
                                   catch_exceptions=False)
            assert result.exit_code == 0, result.output
            outputs.append((tuple(args), result.stdout))
    by_view: dict[tuple[str, ...], set[str]] = {}
    for args, out in outputs:
        by_view.setdefault(args, set()).add(out)
    assert all(len(v) == 1 for v in by_view.values())  # kept, read again and uncached: the same bytes
    assert '"tokenizer.ggml.tokens": {\n      "long_array": "string",\n      "length": 1324\n    }' in next(
        iter(by_view[("--json", "--metadata")]))
    # `header` kept the header without the digests; `import` asks for them and records them.
    clear_cache()
    result = runner.invoke(cli, ["--root", str(root), "import", str(path), "--name", "m"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    entry = tomllib.loads((root / "registry" / "checkpoints" / "m.toml").read_text()
                          if (root / "registry").is_dir() else (root / "checkpoints" / "m.toml").read_text())
    assert {k: entry["metadata"][k]["sha256"] for k in want} == want


def test_a_compressed_file_read_without_digests_then_with(tmp_path: Path, cache_dir: Path) -> None:
    """A compressed file is kept in the process only: read without the digests, then with, in one process, the
    second read parses again (the first's header has none to give)."""
    import lzma

    path = write(tmp_path / "m.gguf")
    want = element_digests(path)
    packed = tmp_path / "m.gguf.xz"
    packed.write_bytes(lzma.compress(path.read_bytes()))
    bare = read_header(packed, array_digests=False)
    assert digests_of(bare) == dict.fromkeys(want)
    full = read_header(packed)
    assert full is not bare and full == bare and digests_of(full) == want
    assert read_header(packed, array_digests=False) is full  # kept in the process, and taken by a reader not asking
    assert not (cache_dir / "objects").is_dir() or not list((cache_dir / "objects").glob("*.pickle"))
