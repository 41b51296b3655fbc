"""A tensor's bytes follow from its GGML type alone: ``ceil(elements / block elements) × block bytes``.

The type table (ids, names, block sizes) is the ``gguf`` package's (``GGMLQuantizationType``,
``GGML_QUANT_SIZES``), never copied here, so a type llama.cpp adds is known as soon as ``gguf`` knows it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

import attrs

from passprice.errors import InputError


@attrs.frozen
class GgmlType:
    """One GGML tensor type: its id in a GGUF tensor table, its name (``Q4_K``), and its block: ``block_elems``
    weights stored in ``block_bytes`` bytes (from ``gguf.GGML_QUANT_SIZES``)."""

    id: int
    name: str
    block_elems: int
    block_bytes: int

    def bytes_for(self, elements: int) -> int:
        """Bytes ``elements`` weights of this type take: ``ceil(elements / block_elems) × block_bytes`` (DESIGN.md,
        The decode step)."""
        return -(-elements // self.block_elems) * self.block_bytes


@functools.cache
def _table() -> dict[int, GgmlType]:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    out: dict[int, GgmlType] = {}
    for t in GGMLQuantizationType:
        size = GGML_QUANT_SIZES.get(t)
        if size is not None:
            out[int(t.value)] = GgmlType(int(t.value), t.name, int(size[0]), int(size[1]))
    return out


def known(type_id: int) -> bool:
    """Whether ``gguf`` knows the type ``type_id`` (and its block size)."""
    return type_id in _table()


def ggml_type(type_id: int) -> GgmlType:
    """The type with id ``type_id``. Raises :class:`InputError` for an id ``gguf`` does not know."""
    t = _table().get(type_id)
    if t is None:
        raise InputError(f"GGML type id {type_id} is not known to the gguf package")
    return t


def by_name(name: str) -> GgmlType:
    """The type named ``name`` (``Q4_K``, ``F32`` …). Raises :class:`InputError` for an unknown name."""
    for t in _table().values():
        if t.name == name:
            return t
    raise InputError(f"{name!r} is not a GGML type name known to the gguf package")


def type_name(type_id: int) -> str:
    """``Q4_K`` for a known id; ``type#N`` for an unknown one (so a table can still be shown)."""
    t = _table().get(type_id)
    return t.name if t is not None else f"type#{type_id}"


def elements(dims: Iterable[int]) -> int:
    """Elements of a tensor of shape ``dims`` (GGUF order); 1 for a scalar."""
    return math.prod(dims)


def tensor_bytes(type_id: int, dims: Iterable[int]) -> int:
    """Bytes of a tensor of type ``type_id`` and shape ``dims``: ``ceil(elements / block) × block bytes``.

    Raises :class:`InputError` for a type id ``gguf`` does not know."""
    return ggml_type(type_id).bytes_for(elements(dims))
