"""A tensor's bytes follow from its GGML type alone: ``ceil(elements / block elements) × block bytes``.

The type table (ids, names, block sizes) is the ``gguf`` package's (``GGMLQuantizationType``,
``GGML_QUANT_SIZES``), copied by a generator, never by hand: :mod:`passprice.ggml_types` is written from ``gguf`` by
``python -m passprice.ggml --write`` (a test asserts it equals ``gguf``'s tables exactly, so a stale copy fails the
suite), and pricing reads it without importing ``gguf`` (and, through it, NumPy and PyYAML: ~45 ms a process). A
type id or name the copy lacks is looked up in ``gguf`` itself, so a type ``gguf`` adds is known as soon as the
installed ``gguf`` knows it, and by the copy after a regeneration.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping

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
    """The generated copy of ``gguf``'s type table, by id (types without a block size left out)."""
    from passprice.ggml_types import BLOCK_SIZES, TYPE_NAMES

    return {i: GgmlType(i, TYPE_NAMES[i], size[0], size[1]) for i, size in BLOCK_SIZES.items() if i in TYPE_NAMES}


@functools.cache
def _from_gguf() -> dict[int, GgmlType]:
    """The installed ``gguf``'s own type table, by id: asked only for an id or name the generated copy lacks."""
    names, sizes = gguf_tables()
    return {i: GgmlType(i, names[i], size[0], size[1]) for i, size in sizes.items() if i in names}


def _lookup(type_id: int) -> GgmlType | None:
    t = _table().get(type_id)
    return t if t is not None else _from_gguf().get(type_id)


def known(type_id: int) -> bool:
    """Whether ``gguf`` knows the type ``type_id`` (and its block size)."""
    return _lookup(type_id) is not None


def ggml_type(type_id: int) -> GgmlType:
    """The type with id ``type_id``. Raises :class:`InputError` for an id ``gguf`` does not know."""
    t = _lookup(type_id)
    if t is None:
        raise InputError(f"GGML type id {type_id} is not known to the gguf package")
    return t


@functools.cache
def _by_name() -> dict[str, GgmlType]:
    return {t.name: t for t in _table().values()}


def type_by_name() -> Mapping[str, GgmlType]:
    """The types of passprice's own table by name (``Q4_K`` → its type): what :func:`by_name` finds first, before it
    looks through the ``gguf`` package's."""
    return _by_name()


def by_name(name: str) -> GgmlType:
    """The type named ``name`` (``Q4_K``, ``F32`` …). Raises :class:`InputError` for an unknown name."""
    t = _by_name().get(name)
    if t is not None:
        return t
    for t in _from_gguf().values():
        if t.name == name:
            return t
    raise InputError(f"{name!r} is not a GGML type name known to the gguf package")


def type_name(type_id: int) -> str:
    """``Q4_K`` for a known id; ``type#N`` for an unknown one (so a table can still be shown)."""
    t = _lookup(type_id)
    return t.name if t is not None else f"type#{type_id}"


def elements(dims: Iterable[int]) -> int:
    """Elements of a tensor of shape ``dims`` (GGUF order); 1 for a scalar."""
    return math.prod(dims)


def tensor_bytes(type_id: int, dims: Iterable[int]) -> int:
    """Bytes of a tensor of type ``type_id`` and shape ``dims``: ``ceil(elements / block) × block bytes``.

    Raises :class:`InputError` for a type id ``gguf`` does not know."""
    return ggml_type(type_id).bytes_for(elements(dims))


# --- the generated copy ----------------------------------------------------------------------------------------------


def gguf_tables() -> tuple[dict[int, str], dict[int, tuple[int, int]]]:
    """The installed ``gguf``'s tables as plain data: tensor type id → name (``GGMLQuantizationType``), and id →
    (block elements, block bytes) (``GGML_QUANT_SIZES``). Imports ``gguf`` (and NumPy)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    names = {int(t.value): t.name for t in GGMLQuantizationType}
    sizes = {int(t.value): (int(s[0]), int(s[1])) for t, s in GGML_QUANT_SIZES.items()}
    return names, sizes


def gguf_value_types() -> dict[int, str]:
    """The installed ``gguf``'s metadata value types: id → name (``GGUFValueType``: ``UINT8`` … ``FLOAT64``)."""
    from gguf import GGUFValueType

    return {int(t.value): t.name for t in GGUFValueType}


def generated_source() -> str:
    """The text of :mod:`passprice.ggml_types` for the installed ``gguf``: its type names, block sizes and
    metadata value types as literal dictionaries, and the ``gguf`` version they were read from."""
    from importlib.metadata import version

    names, sizes = gguf_tables()
    values = gguf_value_types()
    lines = [
        '"""GGML tensor types and GGUF metadata value types, as plain data: generated from the ``gguf`` package by',
        "``python -m passprice.ggml --write`` (do not edit by hand), so that pricing needs no ``gguf`` import.",
        "",
        "tests/test_ggml_types.py says when these differ from the installed ``gguf``'s tables: then regenerate.",
        '"""',
        "",
        "#: The ``gguf`` version these tables were read from.",
        f'GGUF_VERSION = "{version("gguf")}"',
        "",
        "#: Tensor type id → name (``gguf.GGMLQuantizationType``).",
        "TYPE_NAMES: dict[int, str] = {",
        *(f'    {i}: "{names[i]}",' for i in sorted(names)),
        "}",
        "",
        "#: Tensor type id → (block elements, block bytes) (``gguf.GGML_QUANT_SIZES``).",
        "BLOCK_SIZES: dict[int, tuple[int, int]] = {",
        *(f"    {i}: ({sizes[i][0]}, {sizes[i][1]})," for i in sorted(sizes)),
        "}",
        "",
        "#: Metadata value type id → name (``gguf.GGUFValueType``).",
        "VALUE_TYPES: dict[int, str] = {",
        *(f'    {i}: "{values[i]}",' for i in sorted(values)),
        "}",
    ]
    return "\n".join(lines) + "\n"


def _main() -> None:  # pragma: no cover - the developer's regeneration command
    import sys
    from pathlib import Path

    from passprice.files import write_atomically

    text = generated_source()
    if sys.argv[1:] == ["--write"]:
        target = Path(__file__).with_name("ggml_types.py")
        write_atomically(target, text, force=True)
        print(f"wrote {target}")
    elif sys.argv[1:] == []:
        sys.stdout.write(text)
    else:
        sys.exit("usage: python -m passprice.ggml [--write]")


if __name__ == "__main__":  # pragma: no cover
    _main()
