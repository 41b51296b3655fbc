"""The header reader's first read, made cheaper without knowing the vocabulary (issue 16, round hdr54): the tensor
table's int64 checks asked of :func:`dims_problem` only where arithmetic leaves a doubt (``_safe_elements``), and the
vocabulary walk's hot loop on locals. The same header, the same errors at the same byte offsets: each figure here is
worked out by hand, and every test passes on the reader before the change too (checked when it was written)."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest
from gguf import GGUFValueType as V
from tests.gguf_bytes import Array, Meta, Tensor, encode

from passprice import gguf_header
from passprice.gguf_header import HeaderError, LongArray, dims_problem, read_header

INT64_MAX = (1 << 63) - 1
F32, Q4_0 = 0, 2  # GGML type ids: F32 4 bytes an element, Q4_0 18 bytes a block of 32


def test_the_safe_bound_of_each_type_is_exact() -> None:
    safe = gguf_header._safe_elements()
    assert safe[F32] == INT64_MAX // 4 and safe[Q4_0] == INT64_MAX  # 18 bytes for 32 elements: never past int64
    for type_id, most in safe.items():
        assert dims_problem((most,), type_id) is None, type_id
        if most < INT64_MAX:  # one element more is past int64 in bytes: the bound is the exact one
            problem = dims_problem((most + 1,), type_id)
            assert problem is not None and problem.endswith("bytes, beyond int64"), type_id


def _tensor_header(tmp_path: Path, dims: tuple[int, ...], type_id: int = F32) -> Path:
    path = tmp_path / "t.gguf"
    path.write_bytes(encode([Meta("general.architecture", V.STRING, "llama")], [Tensor("w", dims, type_id)]))
    return path


#: The byte the tensor's dims start at: 24 (magic, version, counts) + the key (8 + 20) + type 4 + value (8 + 5) +
#: the name (8 + 1) + n_dims 4.
DIMS_AT = 24 + 28 + 4 + 13 + 9 + 4


@pytest.mark.parametrize(
    ("dims", "problem"),
    [
        ((INT64_MAX // 4 + 1,),
         f"dims [{INT64_MAX // 4 + 1}] of F32 take 9,223,372,036,854,775,808 bytes, beyond int64"),
        ((1 << 32, 1 << 31), f"dims [{1 << 32}, {1 << 31}] hold 9,223,372,036,854,775,808 elements, beyond int64"),
        ((0, 1 << 63), f"dimension {1 << 63} is beyond int64"),  # no elements, one dimension past int64
    ],
)
def test_a_tensor_past_int64_is_refused_at_its_dims(tmp_path: Path, dims: tuple[int, ...], problem: str) -> None:
    path = _tensor_header(tmp_path, dims)
    with pytest.raises(HeaderError) as e:
        read_header(path, cache=False)
    assert (e.value.offset, e.value.problem) == (DIMS_AT, f"tensor 'w': {problem}")


@pytest.mark.parametrize("dims", [(INT64_MAX // 4,), (0, INT64_MAX), ()])
def test_a_tensor_at_the_bound_reads(tmp_path: Path, dims: tuple[int, ...]) -> None:
    (tensor,) = read_header(_tensor_header(tmp_path, dims), cache=False).tensors
    assert (tensor.dims, tensor.type_id) == (dims, F32)


#: 3,000 tokens (a long array, walked): runs of short ones, empty ones, one of 63, 64 and 300 bytes, a 2-byte
#: character's; 51,904 bytes of strings, so a 16 KiB chunk makes the walk read and hash across several.
TOKENS = [f"tok{i}" for i in range(3000)]
for _i in (0, 1, 700, 2999):
    TOKENS[_i] = ""
TOKENS[5], TOKENS[1000], TOKENS[1001], TOKENS[2000] = "a" * 63, "b" * 64, "c" * 300, "\u00e9" * 30


def _vocabulary(order: str = "<", tokens: list[str] = TOKENS) -> bytes:
    meta = [Meta("general.architecture", V.STRING, "llama"), Meta("tokenizer.ggml.tokens", V.ARRAY,
                                                                    Array(V.STRING, tuple(tokens)))]
    return encode(meta, [Tensor("w", (4, 2), F32, 0)], order=order)


def _elements(tokens: list[str], order: str = "<") -> bytes:
    return b"".join(struct.pack(order + "Q", len(t.encode())) + t.encode() for t in tokens)


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("chunk", [1 << 14, 1 << 20])
def test_a_vocabulary_walked_across_chunks_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str, chunk: int
) -> None:
    monkeypatch.setattr(gguf_header, "CHUNK", chunk)
    path = tmp_path / "v.gguf"
    path.write_bytes(_vocabulary(order))
    header = read_header(path, cache=False)
    elements = _elements(TOKENS, order)
    assert header.metadata["tokenizer.ggml.tokens"] == LongArray("string", 3000, hashlib.sha256(elements).hexdigest())
    (tensor,) = header.tensors
    assert (tensor.name, tensor.dims) == ("w", (4, 2))
    assert header.header_bytes == 24 + 28 + 4 + 13 + 29 + 4 + 12 + len(elements) + 9 + 4 + 16 + 12
    assert header.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_vocabulary_ending_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 3,000 tokens of 60 bytes: 204,000 bytes, over the 192,000 a cap must allow to walk 3,000 strings (64 each).
    tokens = [f"{i:060d}" for i in range(3000)]
    path = tmp_path / "v.gguf"
    data = encode([Meta("tokenizer.ggml.tokens", V.ARRAY, Array(V.STRING, tuple(tokens)))])
    path.write_bytes(data + b"\x00" * 64)  # the tensor data's padding after the header
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(len(data)))
    header = read_header(path, cache=False)
    assert header.header_bytes == len(data) == 24 + 29 + 4 + 12 + 3000 * 68
    assert header.metadata["tokenizer.ggml.tokens"] == LongArray("string", 3000, hashlib.sha256(data[69:]).hexdigest())


def test_a_truncated_vocabulary_is_refused_where_it_ends(tmp_path: Path) -> None:
    path = tmp_path / "v.gguf"
    data = _vocabulary()
    cut = 24 + 28 + 4 + 13 + 29 + 4 + 12 + len(_elements(TOKENS[:2500])) + 8 + 3  # 3 bytes into token 2500
    path.write_bytes(data[:cut])
    with pytest.raises(HeaderError) as e:
        read_header(path, cache=False)
    assert (e.value.offset, e.value.problem) == (
        cut - 3 - 8, "metadata 'tokenizer.ggml.tokens' array string 2500: string length 7 runs past the end of the "
                     "file (3 bytes left)")


#: A header of 3,000 tokens of 60 bytes (204,000 bytes: over the 192,000 a cap must allow to walk 3,000 strings, 64
#: each), then one tensor; the tokens' bytes start at 69 (24 + the key's 29 + type 4 + the array's 12), 68 each.
CAPPED_TOKENS = [f"{i:060d}" for i in range(3000)]


def _capped(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "v.gguf"
    data = encode([Meta("tokenizer.ggml.tokens", V.ARRAY, Array(V.STRING, tuple(CAPPED_TOKENS)))],
                  [Tensor("w", (4, 2), F32, 0)])
    path.write_bytes(data + b"\\x00" * 64)  # the tensor data's padding after the header
    return path, data


@pytest.mark.parametrize(("at", "index"), [(69 + 68 * 2999 + 67, 2999), (69 + 68 * 2900 + 30, 2900)])
def test_a_vocabulary_past_the_cap_is_refused_at_the_string_that_crosses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int, index: int
) -> None:
    # The reader read a chunk from below the cap and stepped through the strings it held past it: a header 5,000
    # bytes past the cap was read whole (round hdr54).
    path, _ = _capped(tmp_path)
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(at))
    with pytest.raises(HeaderError) as e:
        read_header(path, cache=False)
    assert (e.value.offset, e.value.problem) == (
        69 + 68 * index,
        f"metadata 'tokenizer.ggml.tokens' array string {index}: string length 60 needs at least 60 bytes: past "
        f"{at:,} bytes, the most passprice reads of a header (set PASSPRICE_MAX_HEADER_BYTES to read more)")


def test_a_header_whose_last_number_crosses_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, data = _capped(tmp_path)
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(len(data)))
    assert read_header(path, cache=False).header_bytes == len(data)
    cap = len(data) - 4  # within the tensor's data offset (a u64), which was read whole from the chunk
    monkeypatch.setenv("PASSPRICE_MAX_HEADER_BYTES", str(cap))
    with pytest.raises(HeaderError) as e:
        read_header(path, cache=False)
    assert (e.value.offset, str(e.value)) == (cap, f"{path}: the header runs past {cap:,} bytes, the most passprice "
                                              "reads of a header (set PASSPRICE_MAX_HEADER_BYTES to a larger number of "
                                              "bytes to read it)")
