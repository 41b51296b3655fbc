"""Issue 16, round 25 (perf25). The header's records (:mod:`passprice.gguf_records`) live apart from its reader
(:mod:`passprice.gguf_header`), so a price, a best batch and a listing from a warm cache do not import the reader:
the records are the same classes under both module names (an entry the cache kept before the split, which names
``passprice.gguf_header.TensorInfo``, still loads, equal), and the outputs are the same. The reader's walk over a
vocabulary (runs of short strings matched by a regular expression, the rest one string at a time) ends where the
strings end, with the sha256 of exactly their bytes, and fails at the same byte with the same line as the
one-at-a-time loop alone, on arrays drawn at random (both byte orders, strings of 0 to 300 bytes, cut anywhere);
the two real headers read to the digests their files' README gives."""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import pickle
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import REPO
from passprice import cache, gguf_header, gguf_records
from passprice.gguf_header import HeaderError, _Reader, read_header

DATA = REPO / "tests" / "data"
RECORDS = (
    "KEEP_ARRAY_LIMIT", "VALUE_TYPE_NAMES", "GGUFHeader", "LongArray", "LongString", "MetaValue", "Shard",
    "TensorInfo", "nonfinite_text",
)

_PROBE = """
import sys
from passprice.cli import cli
try:
    cli({args!r}, prog_name="passprice")
except SystemExit as e:
    assert e.code == 0, e.code
print("loaded:" + ",".join(sorted(m for m in ("passprice.gguf_header", "passprice.gguf_records") if m in sys.modules)))
"""


def _loaded(args: list[str], cache_dir: Path) -> set[str]:
    """Which of the reader and the records a fresh process running ``passprice ARGS`` has imported at its end."""
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(cache_dir), "PASSPRICE_NO_MEMO": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(args=args)], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[-1]
    assert line.startswith("loaded:"), done.stdout[-200:]
    return set(filter(None, line.removeprefix("loaded:").split(",")))


def test_a_warm_price_best_and_listing_import_the_records_not_the_reader(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    for args in (["price", "r1-qwen7b-h200", "--json"], ["best", "r1-qwen7b-h200", "--json"], ["checkpoints"]):
        _loaded(args, folder)  # cold: the entries read, validated, structured and kept
        assert _loaded(args, folder) == {"passprice.gguf_records"}, args
    # Reading a GGUF file does import the reader (the probe sees it when it is there).
    header = str(DATA / "qwen35-27b-like.header.gguf")
    assert _loaded(["header", header], folder) == {"passprice.gguf_header", "passprice.gguf_records"}


def test_the_records_are_one_class_under_both_module_names() -> None:
    for name in RECORDS:
        assert getattr(gguf_header, name) is getattr(gguf_records, name), name
    assert gguf_records.GGUFHeader.__module__ == "passprice.gguf_records"
    # The cache's unpickler finds a record under the reader's name, as entries kept before the split name it.
    assert cache._allowed("passprice.gguf_header", "TensorInfo") is gguf_records.TensorInfo
    assert cache._allowed("passprice.gguf_records", "GGUFHeader") is gguf_records.GGUFHeader


def test_an_entry_kept_before_the_split_loads_equal() -> None:
    header = read_header(DATA / "qwen35-27b-like.header.gguf", cache=False)
    # Protocol 2 names each class as text ("c<module>\\n<name>\\n"), so the module can be renamed in the bytes.
    body = pickle.dumps(("key", header), protocol=2)
    assert b"passprice.gguf_records\n" in body
    old = body.replace(b"passprice.gguf_records\n", b"passprice.gguf_header\n")
    assert b"passprice.gguf_records" not in old
    key, loaded = cache._unpickle(old)
    assert key == "key"
    assert loaded == header
    assert type(loaded) is gguf_records.GGUFHeader
    assert loaded.tensors[0] == header.tensors[0] and loaded.tensor(header.tensors[0].name) == header.tensors[0]


@pytest.mark.parametrize(
    ("name", "sha256", "tokens", "header_bytes"),
    [
        ("gemma3-270m-q4_k_m", "734dc913752602edd298a94fdc46d0e3184912794436c435c05511acd22947a4", 262_144,
         6_525_112),
        ("deepseek-r1-distill-qwen-7b-q4_k_m", "d9383567865a226b4fbcaa0f954ce9ca608490e1a9ec51c3db2f5d092698e904",
         152_064, 5_953_246),
    ],
)
def test_the_real_headers_read_to_their_digests(
    name: str, sha256: str, tokens: int, header_bytes: int, tmp_path: Path
) -> None:
    # The digests are those tests/data's README (and ../shared/gguf/README.md) gives for the decompressed bytes;
    # the vocabulary's digest is computed here from the bytes between the array's count and the next key.
    data = lzma.decompress((DATA / f"{name}.header.gguf.xz").read_bytes())
    path = tmp_path / f"{name}.header.gguf"
    path.write_bytes(data)
    header = read_header(path, cache=False)
    assert header.sha256 == sha256 == hashlib.sha256(data).hexdigest()
    assert header.header_bytes == header_bytes == len(data)
    vocabulary = header.metadata["tokenizer.ggml.tokens"]
    assert isinstance(vocabulary, gguf_records.LongArray)
    assert (vocabulary.element_type, vocabulary.length) == ("string", tokens)
    keys = list(header.metadata)
    following = keys[keys.index("tokenizer.ggml.tokens") + 1].encode()
    key = b"tokenizer.ggml.tokens"
    start = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key) + 4 + 4 + 8  # type, element type, count
    end = data.index(struct.pack("<Q", len(following)) + following, start)
    assert vocabulary.sha256 == hashlib.sha256(data[start:end]).hexdigest()


# --- the walk: runs matched by the pattern against one string at a time -------------------------------------------


def _walk(data: bytes, order: str, count: int, general: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    """Skip ``count`` strings from the start of ``data`` with the reader (``general``: no run ever matches, every
    string by the one-at-a-time loop): ``("ok", end offset, sha256 of the bytes walked)`` or ``("error", offset,
    line)``."""
    with monkeypatch.context() as m:
        if general:
            never = re.compile(rb"(?!)")
            m.setattr(gguf_header, "_short_strings", lambda order, run: never)
        reader = _Reader(io.BytesIO(data), "v.gguf", len(data), [])
        reader.set_order(order)
        hasher = reader.begin_digest()
        try:
            reader.skip_strings(count, "metadata 'tokenizer.ggml.tokens' array")
        except HeaderError as e:
            return ("error", e.offset, str(e))
        return ("ok", reader.offset, reader.end_digest(hasher))


@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(
    order=st.sampled_from(["<", ">"]),
    lengths=st.lists(
        st.one_of(st.integers(0, 63), st.integers(0, 63), st.integers(0, 63), st.integers(64, 300)),
        min_size=0,
        max_size=700,
    ),
    repeat=st.integers(1, 3),
    cut=st.one_of(st.none(), st.integers(1, 400)),
    extra=st.integers(0, 3),
)
def test_the_pattern_walk_and_the_one_at_a_time_walk_agree(
    order: str, lengths: list[int], repeat: int, cut: int | None, extra: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    lengths = lengths * repeat  # past a run of 256 strings, and runs that fail part way
    parts = [struct.pack(order + "Q", n) + bytes((i + n) % 251 for i in range(n)) for n in lengths]
    array = b"".join(parts)
    data = array + b"\x05" * 64  # bytes after the array: the walk must stop at its end, not read on
    count = len(lengths)
    if cut is not None:
        data = array[: max(0, len(array) - cut)]
    count += extra if cut is None else 0  # asking for strings past the array reads the bytes after it as lengths
    fast = _walk(data, order, count, False, monkeypatch)
    general = _walk(data, order, count, True, monkeypatch)
    assert fast == general
    if cut is None and not extra:
        assert fast == ("ok", len(array), hashlib.sha256(array).hexdigest())
    elif cut is not None and cut <= len(array) and count:
        # Cut: the string whose length or bytes run past the end is named at its length's offset, or the end.
        assert fast[0] == "error", fast
        ends = [0]
        for part in parts:
            ends.append(ends[-1] + len(part))
        first_short = next(i for i in range(count) if ends[i + 1] > len(data))
        at = ends[first_short]
        assert fast[1] in (at, len(data)), (fast, at, len(data))
