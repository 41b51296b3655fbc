"""Attack round 46 (issue 13): split checkpoints of mixed shards, record names Windows cannot check out or that read
as another's, and card titles that are blank or read as another card's. Each test builds its reproducer and asserts
the exit status and the exact error line (before the round: exit 0, nothing said)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf import GGUFValueType as V

from cli_helpers import bad, invoke
from gguf_bytes import Meta, Tensor, encode

# --- 1. split checkpoints: a shard of another checkpoint, split keys of another type ---------------------------------


def _shard(path: Path, no: int, count: int, *, arch: str = "llama", declared: int | None = None,
           no_type: V = V.UINT16, count_type: V = V.UINT16) -> None:  # fmt: skip
    """Shard ``no`` (from 0) of ``count`` at ``path``: ``general.architecture`` ``arch``, the split keys (of the given
    types; ``split.tensors.count`` ``declared``, else 2 a shard) and two one-element F32 tensors of its own."""
    meta = [Meta("general.architecture", V.STRING, arch), Meta("split.no", no_type, no),
            Meta("split.count", count_type, count),
            Meta("split.tensors.count", V.INT32, 2 * count if declared is None else declared)]  # fmt: skip
    path.write_bytes(encode(meta, [Tensor(f"t{no}.{i}", (1,), 0, 32 * i) for i in range(2)]))


@pytest.mark.parametrize(("arch", "declared", "line"), [
    ("qwen2", None, "byte 56: general.architecture is 'qwen2' (string) but the first shard's is 'llama' (string): "
                    "the shards are of different checkpoints"),
    ("llama", 99, "byte 147: split.tensors.count is 99 but the shards hold 4"),
])  # fmt: skip
def test_a_shard_of_another_checkpoint_is_refused(tmp_path: Path, arch: str, declared: int | None, line: str) -> None:
    """Shard 2 of 2 stating ``general.architecture`` ``qwen2`` (or ``split.tensors.count`` 99) beside a first shard of
    ``llama`` (4): ``header`` joined them and printed "llama, 2 files", exit 0. gguf-split writes every key in the
    first shard and only the split keys in the others: a key both state must agree."""
    _shard(tmp_path / "m-00001-of-00002.gguf", 0, 2)
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2, arch=arch, declared=declared)
    assert bad("header", str(tmp_path / "m-00001-of-00002.gguf")) == [
        f"passprice: error: {tmp_path / 'm-00002-of-00002.gguf'}: {line}"]


@pytest.mark.parametrize(("key", "kind", "at"), [
    ("split.no", V.FLOAT32, 89),   # read as shard 0 (0.0 == 0), the two shards joined
    ("split.count", V.INT32, 114),  # split.count -2: read as a whole checkpoint of one file
    ("split.count", V.STRING, 114),  # split.count "2": the same
])  # fmt: skip
def test_a_split_key_of_another_type_is_refused(tmp_path: Path, key: str, kind: V, at: int) -> None:
    """llama.cpp reads ``split.no`` and ``split.count`` as uint16 (its loader throws "wrong type" on any other). A
    float32 ``split.no`` was read as shard 0; an int32 ``split.count`` of -2 or a string one ("2") made the file
    named ``m-00001-of-00002.gguf`` read as an unsplit checkpoint; each exit 0."""
    first = tmp_path / "m-00001-of-00002.gguf"
    value: object = {"split.no": 0.0, "split.count": -2}.get(key) if kind != V.STRING else "2"
    types = {"no_type": kind} if key == "split.no" else {"count_type": kind}
    meta = [Meta("general.architecture", V.STRING, "llama"),
            Meta("split.no", types.get("no_type", V.UINT16), value if key == "split.no" else 0),
            Meta("split.count", types.get("count_type", V.UINT16), value if key == "split.count" else 2)]  # fmt: skip
    first.write_bytes(encode(meta, [Tensor("a", (1,), 0, 0)]))
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2)
    name = {V.FLOAT32: "a float32", V.INT32: "an int32", V.STRING: "a string"}[kind]
    assert bad("header", str(first)) == [
        f"passprice: error: {first}: byte {at}: {key} is {name}, not a uint16 (GGUF's type for it, as llama.cpp's "
        "gguf-split writes it)"]


def test_shards_of_one_checkpoint_still_join(tmp_path: Path) -> None:
    """The rule leaves a real split alone: shards stating only the split keys, the first also the rest."""
    _shard(tmp_path / "m-00001-of-00002.gguf", 0, 2)
    _shard(tmp_path / "m-00002-of-00002.gguf", 1, 2)
    result = invoke("header", str(tmp_path / "m-00002-of-00002.gguf"))
    assert result.exit_code == 0, result.output
    assert "GGUF v3, little-endian, 2 files" in result.stdout
