"""A cold ``check`` (issue 16): bytes hashed once where they were hashed two or three times, decode steps pickled short.

- (1) ``stackfits._registry_part``: the folders every stack's fit keys whole (1.9 MB for the shipped registry) come
  into each stack's key as their BLAKE2b digest, made once a snapshot, where each stack's key hashed them whole; the
  digest is that of the same named, length-prefixed parts, and an edit to any of those files still moves the key.
- (2) ``checkpoints._kept_entry``: a checkpoint entry's bytes are hashed once (its own digest names them in the built
  object's key, and the document's validation finds the same digest kept), where they were hashed three times.
- (3) ``decode.Stage`` and ``decode.Layer`` pickle as their constructors' arguments (as ``TensorInfo`` does): every
  field in order, each shipped checkpoint's decode step read back equal through the cache of built objects.

No timings here: the instructions and CPU are in docs/PERFORMANCE.md (round cold135).
"""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from passprice import cache, checkpoints, decode, digests, filestamps, snapshot, stackfits
from passprice.checkpoints import load_checkpoint
from passprice.decode import Deployment, Layer, Stage, decode_step
from passprice.measurements import load_runs
from passprice.registry import Root, embedded_root
from passprice.stacks import load_stack

STACK = "lmdeploy-turbomind-2312"


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder of this test's own, nothing of this process's kept headers or digests reused."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    cache.configure(True)
    # Nothing an earlier test's reads vouched for (passprice.filestamps: a file's digest known by its status).
    monkeypatch.setattr(filestamps, "_records", None)
    monkeypatch.setattr(filestamps, "_cache", None)
    monkeypatch.setattr(digests, "_vouched", {})
    checkpoints._CACHE.clear()
    checkpoints._CONTENT.clear()
    digests._recent.clear()
    yield folder
    checkpoints._CACHE.clear()
    checkpoints._CONTENT.clear()


def _copy(tmp_path: Path) -> Root:
    """A copy of the shipped registry's folders a stack's fit reads, as a root of its own."""
    shipped = embedded_root()
    where = tmp_path / "registry"
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(shipped.path / folder, where / folder)
    return Root(where)


# --- (1) the stacks' shared folders, hashed once -------------------------------------------------------------------


def test_1_the_shared_part_is_the_digest_of_the_parts_each_stacks_key_held(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    folders = (("stacks", root.stacks), ("measurements", root.measurements), ("checkpoints", root.checkpoints),
               ("routing", root.routing), ("drafts", root.drafts), ("sources", root.sources), ("schema", root.schema))
    cards = "cards\0{}\0".format("\0".join(sorted(os.listdir(root.cards)))).encode()
    # The shipped stacks' key (whole=False): the registry folders' *.toml files and the schemas, as shipped_stacks.json
    # keys them.
    tomls: list[bytes] = [f"{stackfits.KIND}\0\0".encode()]
    for label, folder in folders:
        stackfits._add_folder(tomls, label, folder, toml=label != "schema")
    tomls.append(cards)
    assert len(b"".join(tomls)) > 1_000_000  # what each stack's key hashed whole before round cold135
    toml_part = stackfits._registry_part(root, whole=False)
    assert toml_part == b"registry-digest\0" + digests.blake2b(b"".join(tomls)).digest()
    # The whole key: that digest, NumPy's stamp, and every other entry named and given whole (each *.toml named).
    rest: list[bytes] = []
    for label, folder in folders:
        if label == "schema":
            rest.append(b"covered-folder\0schema\0")
            continue
        names = sorted(os.listdir(folder))
        rest.append(f"folder\0{label}\0{len(names)}\0".encode())
        for name in names:
            if name.endswith(".toml"):
                rest.append(f"covered\0{label}/{name}\0".encode())
            elif (folder / name).is_dir():
                stackfits._add_folder(rest, f"{label}/{name}", folder / name, 1)
            else:
                stackfits._add_file(rest, f"{label}/{name}", folder / name)
    rest.append(cards)
    assert b"excerpt" in b"".join(rest)  # sources/excerpts/, which the *.toml key leaves out
    head = f"{stackfits.KIND}\0whole\0{stackfits._numpy_stamp()}\0".encode()
    shared = stackfits._registry_part(root)
    assert shared == b"registry-digest\0" + digests.blake2b(head + toml_part + b"".join(rest)).digest()
    assert len(shared) == 16 + 32
    stack = load_stack(root, STACK)
    inputs = stackfits.fit_inputs(root, stack, load_runs(root))
    assert inputs is not None and shared in inputs and len(inputs) < len(b"".join(tomls)) // 2  # its cards' bytes


def test_1_two_stacks_keys_hash_the_shared_folders_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy(tmp_path)
    runs = load_runs(root)
    hashed = [0]
    counting = [False]
    real = digests.blake2b

    class Counted:
        """A BLAKE2b hash whose bytes are counted while ``counting``."""

        def __init__(self, data: bytes | memoryview = b"") -> None:
            self.h = real(b"")
            self.update(data)

        def update(self, data: bytes | memoryview) -> None:
            hashed[0] += len(data) if counting[0] else 0
            self.h.update(data)

        def digest(self) -> bytes:
            return self.h.digest()

        def hexdigest(self) -> str:
            return self.h.hexdigest()

    monkeypatch.setattr(digests, "blake2b", Counted)
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    with snapshot.reading():
        stacks = [load_stack(root, name) for name in root.scan(root.stacks)]
        counting[0] = True
        keys, sizes = [], 0
        for stack in stacks:
            inputs = stackfits.fit_inputs(root, stack, runs)
            assert inputs is not None
            sizes += len(inputs)
            keys.append(cache.object_key(stackfits.KIND, inputs))
        counting[0] = False
    assert len(stacks) == 2 and keys[0] != keys[1]
    shared = stackfits._registry_part(root)
    assert shared is not None
    parts: list[bytes] = []
    for label, folder in (("stacks", root.stacks), ("measurements", root.measurements),
                          ("checkpoints", root.checkpoints), ("routing", root.routing), ("drafts", root.drafts),
                          ("sources", root.sources), ("schema", root.schema)):
        stackfits._add_folder(parts, label, folder)
    whole = sum(map(len, parts))
    # Once, then each key's own bytes (its stack's cards, the shared part's digest) once, and the key's stamps (a
    # few KB: the code stamp names every module). Before: the whole, twice, in the two keys.
    assert whole > 1_000_000 and sizes < whole
    assert whole + sizes <= hashed[0] < whole + sizes + 50_000, (whole, sizes, hashed[0])


@pytest.mark.parametrize("edited", ["registry/measurements", "registry/checkpoints", "sources", "facts/routing"])
def test_1_an_edit_to_a_shared_folder_still_moves_every_stacks_key(tmp_path: Path, edited: str) -> None:
    root = _copy(tmp_path)
    stack = load_stack(root, STACK)
    before = stackfits.fit_inputs(root, stack, load_runs(root))
    victim = sorted(p for p in (root.path / edited).rglob("*") if p.is_file())[0]
    victim.write_bytes(victim.read_bytes() + b"\n")
    after = stackfits.fit_inputs(root, stack, load_runs(root))
    assert before is not None and after is not None and after != before
    victim.write_bytes(victim.read_bytes()[:-1])
    assert stackfits.fit_inputs(root, stack, load_runs(root)) == before


# --- (2) a checkpoint entry's bytes, hashed once -------------------------------------------------------------------


def test_2_an_entrys_bytes_are_hashed_once(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = embedded_root()
    name = "qwen3-30b-a3b-q4_k_m"
    data = (root.checkpoints / f"{name}.toml").read_bytes()
    hashed: list[int] = []
    real = digests.blake2b

    def counted(chunk: bytes | memoryview = b"") -> digests.Hash:
        if len(chunk) >= len(data):
            hashed.append(len(chunk))
        return real(chunk)

    monkeypatch.setattr(digests, "blake2b", counted)
    monkeypatch.setattr(checkpoints, "blake2b_digest", digests.blake2b_digest)
    with snapshot.reading():
        header = load_checkpoint(root, name)
    # Before: three times (its own digest, the built key's name joined to the bytes, the document's validation).
    assert hashed == [len(data)], hashed
    assert checkpoints.entry_content(header) == f"{real(data).hexdigest()}\0{root.schema}"
    # Read back from the cache folder by another "process" (nothing kept in this one): the same header.
    checkpoints._CACHE.clear()
    checkpoints._CONTENT.clear()
    cache._HELD.clear()
    with snapshot.reading():
        again = load_checkpoint(root, name)
    assert again == header and again is not header


def test_2_an_entry_edited_by_one_byte_is_validated_again(own_cache: Path, tmp_path: Path) -> None:
    root = _copy(tmp_path)
    name = "qwen3-30b-a3b-q4_k_m"
    path = root.checkpoints / f"{name}.toml"
    with snapshot.reading():
        header = load_checkpoint(root, name)
    text = path.read_text(encoding="utf-8")
    assert 'name = "qwen3-30b-a3b-q4_k_m"' in text
    path.write_text(text.replace('name = "qwen3-30b-a3b-q4_k_m"', 'name = "qwen3-30b-a3b-q4_k_n"', 1),
                    encoding="utf-8")
    checkpoints._CACHE.clear()
    with pytest.raises(Exception) as refused, snapshot.reading():
        load_checkpoint(root, name)
    assert "does not match the file name 'qwen3-30b-a3b-q4_k_m'" in str(refused.value)
    path.write_text(text, encoding="utf-8")
    checkpoints._CACHE.clear()
    with snapshot.reading():
        assert load_checkpoint(root, name) == header


# --- (3) decode steps pickled as their constructors' arguments -----------------------------------------------------


def test_3_stage_and_layer_reduce_to_every_field_in_order() -> None:
    stage = Stage(decode.StageKind.ATTENTION, 3, ("a", "b"), 10, 1.5, 2.5, 7, decode.Split(8, 2, 64, 64), 4096, 0,
                  0, 0)
    cls, args = stage.__reduce__()
    assert cls is Stage and args == tuple(getattr(stage, f.name) for f in attrs.fields(Stage))
    assert len(args) == 12
    layer = Layer(5, decode.LayerKind.WINDOWED, True, 4, 1024, True, True)
    cls, args = layer.__reduce__()
    assert cls is Layer and args == (5, decode.LayerKind.WINDOWED, True, 4, 1024, True, True)
    assert args == tuple(getattr(layer, f.name) for f in attrs.fields(Layer))


def test_3_every_shipped_decode_step_reads_back_equal_through_the_cache(own_cache: Path) -> None:
    root = embedded_root()
    names = root.scan(root.checkpoints)
    assert len(names) >= 20
    sizes = 0
    for name in names:
        step = decode_step(load_checkpoint(root, name), Deployment(ctx=4096, speculative=True))
        body = pickle.dumps(step)
        assert pickle.loads(body) == step
        assert b"__dict__" not in body and b"weight_bytes" not in body and b"kv_heads" not in body
        sizes += len(body)
        cache.keep_object("cold135-test", name.encode(), step)
        assert cache.kept_object("cold135-test", name.encode(), decode.DecodeStep) == step
    assert sizes > 0
