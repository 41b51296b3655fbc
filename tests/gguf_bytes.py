"""GGUF headers written byte by byte, for tests that need what ``gguf.GGUFWriter`` will not write: a declared length
the bytes do not back, inner arrays of different types, a count of 2^62, a header that says 5 blocks over tensors
for 2. A header is a list of metadata entries and tensor infos (:class:`Meta`, :class:`Tensor`); :func:`encode`
writes them as GGUF v3 (or v2), either byte order; :func:`decode` turns a header passprice read back into that
list form, so a real header can be mutated field by field and written again.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import attrs
from gguf import GGUFValueType as V

from passprice.gguf_header import GGUFHeader, LongArray

_FORMAT = {
    V.UINT8: "B",
    V.INT8: "b",
    V.UINT16: "H",
    V.INT16: "h",
    V.UINT32: "I",
    V.INT32: "i",
    V.FLOAT32: "f",
    V.BOOL: "?",
    V.UINT64: "Q",
    V.INT64: "q",
    V.FLOAT64: "d",
}
_BY_NAME = {t.name.lower(): t for t in V}


@attrs.frozen
class Array:
    """An array value: its element ``type`` and ``items`` (each an :class:`Array` for an array of arrays), or, when
    ``declared`` is set, that length written in place of ``len(items)`` (a length the bytes may not back)."""

    type: V
    items: tuple[Any, ...]
    declared: int | None = None


@attrs.frozen
class Meta:
    """One metadata entry: ``key``, value ``type``, ``value`` (a scalar, a ``str``/``bytes`` for a string, an
    :class:`Array`), and ``declared``: a string length written in place of the true one."""

    key: str
    type: V
    value: Any
    declared: int | None = None


@attrs.frozen
class Tensor:
    """One tensor info: ``name``, ``dims`` (GGUF order), GGML ``type_id``, data ``offset``."""

    name: str
    dims: tuple[int, ...]
    type_id: int
    offset: int = 0


def _string(raw: str | bytes, order: str, declared: int | None = None) -> bytes:
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return struct.pack(order + "Q", len(data) if declared is None else declared) + data


def _value(kind: V, value: Any, order: str) -> bytes:
    if kind == V.STRING:
        return _string(value, order)
    if kind == V.ARRAY:
        assert isinstance(value, Array)
        length = len(value.items) if value.declared is None else value.declared
        out = [struct.pack(order + "IQ", int(value.type), length)]
        out += [_value(value.type, item, order) for item in value.items]
        return b"".join(out)
    return struct.pack(order + _FORMAT[kind], value)


def encode(
    meta: Sequence[Meta],
    tensors: Sequence[Tensor] = (),
    *,
    version: int = 3,
    order: str = "<",
    tensor_count: int | None = None,
    meta_count: int | None = None,
) -> bytes:
    """The header's bytes: magic, version, counts (``tensor_count``/``meta_count`` written in place of the true
    ones when given), the metadata, then the tensor infos; ``order`` ``"<"`` or ``">"``."""
    out = [
        b"GGUF",
        struct.pack(order + "I", version),
        struct.pack(order + "QQ", len(tensors) if tensor_count is None else tensor_count,
                    len(meta) if meta_count is None else meta_count),
    ]
    for m in meta:
        out.append(_string(m.key, order))
        out.append(struct.pack(order + "I", int(m.type)))
        if m.type == V.STRING:
            out.append(_string(m.value, order, m.declared))
        else:
            out.append(_value(m.type, m.value, order))
    for t in tensors:
        out.append(_string(t.name, order))
        out.append(struct.pack(order + "I", len(t.dims)))
        out.append(struct.pack(order + f"{len(t.dims)}Q", *t.dims))
        out.append(struct.pack(order + "IQ", t.type_id, t.offset))
    return b"".join(out)


def _kind(descriptor: str) -> V:
    return V.ARRAY if descriptor.startswith("array") else _BY_NAME[descriptor]


def _from_kept(value: Any, descriptor: str) -> Any:
    """A kept metadata value (as passprice reads it) as :func:`encode` takes it; a long array becomes a short one of
    its element type (four elements), so a mutated header stays small."""
    if not descriptor.startswith("array["):
        return value
    inner = descriptor[len("array[") : -1]
    kind = _kind(inner)
    if isinstance(value, LongArray):
        sample = {V.STRING: "x", V.FLOAT32: 0.5, V.FLOAT64: 0.5, V.BOOL: True}.get(kind, 1)
        if kind == V.ARRAY:
            return Array(V.ARRAY, tuple(Array(V.INT32, (1, 2)) for _ in range(4)))
        return Array(kind, (sample,) * 4)
    return Array(kind, tuple(_from_kept(v, inner) for v in value))


def decode(header: GGUFHeader) -> tuple[list[Meta], list[Tensor]]:
    """``header``'s metadata and tensor table as :class:`Meta` and :class:`Tensor` lists (long arrays shortened to
    four elements of their type), ready to mutate and :func:`encode`."""
    meta = [
        Meta(key, _kind(header.value_types[key]), _from_kept(value, header.value_types[key]))
        for key, value in header.metadata.items()
    ]
    tensors = [Tensor(t.name, t.dims, t.type_id, t.offset) for t in header.tensors]
    return meta, tensors


def meta_index(meta: Sequence[Meta], key: str) -> int:
    """The index of the entry whose key is ``key`` or ends in ``.{key}`` (``block_count`` finds
    ``qwen2.block_count``)."""
    for i, m in enumerate(meta):
        if m.key == key or m.key.endswith(f".{key}"):
            return i
    raise KeyError(key)
