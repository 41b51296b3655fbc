"""A checkpoint entry is its header written down: reading ``registry/checkpoints/NAME.toml`` gives a
:class:`~passprice.gguf_header.GGUFHeader` equal to the one read from the GGUF file it was imported from, so a
checkpoint named by entry and one given as a ``.gguf`` path price the same.

An entry (``schema/checkpoint.schema.json``) holds ``[entry]`` (name, source file, origin, the passprice version that
imported it), ``[header]`` (version, byte order, header bytes, alignment, data offset, sha256, shards, and the tensor
table: name, type name, dims in GGUF order, offset, shard) and ``[metadata]`` (every key, quoted, as
``{ type = "uint32", value = 18 }``, or ``{ type = "array[string]", length = 262144 }`` for a long array). It is
written deterministically, by hand: the same header gives the same bytes, and every float round-trips exactly.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passprice import __version__, ggml, schema
from passprice.errors import InputError
from passprice.files import write_atomically
from passprice.gguf_header import (
    VALUE_TYPE_NAMES,
    GGUFHeader,
    LongArray,
    MetaValue,
    Shard,
    TensorInfo,
    read_header,
)
from passprice.registry import Root, not_found

#: The first line of every entry: the schema a TOML editor validates it against.
SCHEMA_LINE = "#:schema ../../schema/checkpoint.schema.json"
#: File names read as GGUF files rather than entry names.
GGUF_SUFFIXES = (".gguf", ".gguf.xz", ".gguf.gz")

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_INT_RANGES = {
    "uint8": (0, 0xFF),
    "int8": (-0x80, 0x7F),
    "uint16": (0, 0xFFFF),
    "int16": (-0x8000, 0x7FFF),
    "uint32": (0, 0xFFFF_FFFF),
    "int32": (-0x8000_0000, 0x7FFF_FFFF),
    "uint64": (0, (1 << 64) - 1),
    "int64": (_INT64_MIN, _INT64_MAX),
}
_FLOATS = ("float32", "float64")
_SCALARS = frozenset(VALUE_TYPE_NAMES.values()) - {"array"}


# --- writing ---------------------------------------------------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped, the rest as is."""
    out = []
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _float(value: float) -> str:
    """A float as TOML, exactly: Python's shortest round-tripping form (``1e-06``, ``10000.0``, ``inf``, ``nan``)."""
    if math.isnan(value):
        return "nan"
    return repr(value)  # repr of a finite float always has a '.', an 'e', or is 'inf' / '-inf'


def _value(value: MetaValue) -> str:
    """A kept metadata value as TOML: a uint64 beyond int64 as a decimal string (TOML integers are int64)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if _INT64_MIN <= value <= _INT64_MAX else _string(str(value))
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"not a kept metadata value: {value!r}")  # a LongArray is written as its length


def _tensor(t: TensorInfo) -> str:
    kind = _string(t.type_name) if ggml.known(t.type_id) else str(t.type_id)
    dims = ", ".join(str(d) for d in t.dims)
    return f"{{ name = {_string(t.name)}, type = {kind}, dims = [{dims}], offset = {t.offset}, shard = {t.shard} }}"


def _shard(s: Shard) -> str:
    return (
        f"{{ file = {_string(s.file)}, header_bytes = {s.header_bytes}, data_offset = {s.data_offset}, "
        f"sha256 = {_string(s.sha256)}, tensor_count = {s.tensor_count} }}"
    )


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise InputError(f"checkpoint name {name!r}: use letters, digits, '.', '_' and '-' (first a letter or digit)")


def import_header(header: GGUFHeader, name: str, source_note: str) -> str:
    """The text of the entry ``registry/checkpoints/{name}.toml`` for ``header``; ``source_note`` says where the
    file came from (package or URL, version, licence).

    Deterministic: the same header, name and note give the same bytes. The text starts with :data:`SCHEMA_LINE`
    and matches ``schema/checkpoint.schema.json``; :func:`header_from_entry` reads it back to an equal header.

    Raises :class:`InputError` for a name that is not a file stem of letters, digits, ``.``, ``_`` and ``-``.
    """
    _check_name(name)
    lines = [
        SCHEMA_LINE,
        "# A checkpoint imported from its GGUF header by passprice: metadata (long arrays as type and length), the",
        "# tensor table (dims in GGUF order) and the header's sha256. Re-import rather than edit.",
        "",
        "[entry]",
        f"name = {_string(name)}",
        f"source = {_string(header.shards[0].file)}",
        f"origin = {_string(source_note)}",
        f"imported_by = {_string(f'passprice {__version__}')}",
        "",
        "[header]",
        f"version = {header.version}",
        f"byte_order = {_string(header.byte_order)}",
        f"header_bytes = {header.header_bytes}",
        f"alignment = {header.alignment}",
        f"data_offset = {header.data_offset}",
        f"sha256 = {_string(header.sha256)}",
        "shards = [",
        *(f"  {_shard(s)}," for s in header.shards),
        "]",
        "tensors = [",
        *(f"  {_tensor(t)}," for t in header.tensors),
        "]",
        "",
        "[metadata]",
    ]
    for key, value in header.metadata.items():
        kind = _string(header.value_types[key])
        if isinstance(value, LongArray):
            lines.append(f"{_string(key)} = {{ type = {kind}, length = {value.length} }}")
        else:
            lines.append(f"{_string(key)} = {{ type = {kind}, value = {_value(value)} }}")
    return "\n".join(lines) + "\n"


# --- reading ---------------------------------------------------------------------------------------------------------


def _element_type(descriptor: str) -> str | None:
    """``T`` of ``array[T]``; ``None`` for a scalar descriptor."""
    if descriptor.startswith("array[") and descriptor.endswith("]"):
        return descriptor[len("array[") : -1]
    return None


def _valid_descriptor(descriptor: str) -> bool:
    inner = _element_type(descriptor)
    if inner is None:
        return descriptor in _SCALARS
    return inner == "array" or _valid_descriptor(inner)


def _meta_from(value: Any, descriptor: str, where: str) -> MetaValue:
    """The kept metadata value ``value`` (as TOML gives it) of type ``descriptor``; :class:`InputError` naming
    ``where`` when it does not fit the type."""
    inner = _element_type(descriptor)
    if inner is not None or descriptor == "array":
        if not isinstance(value, list):
            raise InputError(f"{where}: type {descriptor} needs an array, not {value!r}")
        return tuple(_meta_from(v, inner or "array", f"{where}[{i}]") for i, v in enumerate(value))
    if descriptor in _INT_RANGES:
        if descriptor == "uint64" and isinstance(value, str) and value.isdigit():
            value = int(value)
        low, high = _INT_RANGES[descriptor]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(f"{where}: {value!r} is not a {descriptor}")
        return value
    if descriptor in _FLOATS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"{where}: {value!r} is not a {descriptor}")
        return float(value)
    if descriptor == "bool":
        if not isinstance(value, bool):
            raise InputError(f"{where}: {value!r} is not a bool")
        return value
    if descriptor == "string":
        if not isinstance(value, str):
            raise InputError(f"{where}: {value!r} is not a string")
        return value
    # An array of arrays whose inner type was not known (it was empty): any TOML scalar or array.
    if isinstance(value, list):
        return tuple(_meta_from(v, "array", f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, bool | int | float | str):
        return value
    raise InputError(f"{where}: {value!r} is not a metadata value")


def _type_id(kind: Any, where: str) -> int:
    if isinstance(kind, int) and not isinstance(kind, bool):
        return kind
    try:
        return ggml.by_name(str(kind)).id
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def header_from_entry(document: Mapping[str, Any], source: str) -> GGUFHeader:
    """The header a checkpoint entry (a parsed, schema-valid ``checkpoint`` document read from ``source``)
    describes: equal (``==``) to what :func:`~passprice.gguf_header.read_header` returns for the file it was
    imported from; its ``source`` is ``source``.

    Raises :class:`InputError` naming ``source`` and the key path for a value that does not fit its type, an
    unknown tensor type name, or figures that disagree (tensor counts, shard indices, header bytes).
    """
    head = document["header"]
    metadata: dict[str, MetaValue] = {}
    value_types: dict[str, str] = {}
    for key, item in document["metadata"].items():
        where = f"{source}: metadata.{_string(key)}"
        descriptor = item["type"]
        if not _valid_descriptor(descriptor):
            raise InputError(f"{where}.type: {descriptor!r} is not a GGUF value type")
        if "length" in item:
            inner = _element_type(descriptor)
            if inner is None:
                raise InputError(f"{where}: a length needs an array type, not {descriptor!r}")
            metadata[key] = LongArray(inner, int(item["length"]))
        else:
            metadata[key] = _meta_from(item["value"], descriptor, f"{where}.value")
        value_types[key] = descriptor
    shards = tuple(
        Shard(s["file"], s["header_bytes"], s["data_offset"], s["sha256"], s["tensor_count"]) for s in head["shards"]
    )
    tensors = tuple(
        TensorInfo(
            name=t["name"],
            dims=tuple(t["dims"]),
            type_id=_type_id(t["type"], f"{source}: header.tensors.{i}.type"),
            offset=t["offset"],
            shard=t["shard"],
        )
        for i, t in enumerate(head["tensors"])
    )
    for i, t in enumerate(tensors):
        if t.shard >= len(shards):
            raise InputError(f"{source}: header.tensors.{i}.shard: {t.shard} but the entry lists {len(shards)} shards")
    for no, s in enumerate(shards):
        held = sum(1 for t in tensors if t.shard == no)
        if held != s.tensor_count:
            raise InputError(f"{source}: header.shards.{no}.tensor_count: {s.tensor_count} but {held} tensors name it")
    total = sum(s.header_bytes for s in shards)
    if total != head["header_bytes"]:
        raise InputError(f"{source}: header.header_bytes: {head['header_bytes']} but the shards' add up to {total}")
    if head["data_offset"] != shards[0].data_offset:
        first = shards[0].data_offset
        raise InputError(f"{source}: header.data_offset: {head['data_offset']} but shard 0's is {first}")
    return GGUFHeader(
        version=head["version"],
        byte_order=head["byte_order"],
        metadata=metadata,
        value_types=value_types,
        tensors=tensors,
        header_bytes=head["header_bytes"],
        alignment=head["alignment"],
        data_offset=head["data_offset"],
        sha256=head["sha256"],
        shards=shards,
        source=source,
    )


# --- the registry ----------------------------------------------------------------------------------------------------

_CACHE: OrderedDict[tuple[str, str, str], GGUFHeader] = OrderedDict()
_CACHE_SIZE = 32


_SHARD_SUFFIX = re.compile(r"-\d{5}-of-\d{5}$")


def entry_name(path: str | os.PathLike[str]) -> str:
    """The entry name a GGUF file imports under by default: its file name less ``.xz``/``.gz``, ``.gguf``, a shard
    suffix (``-00001-of-00003``) and a ``.header`` marker (``gemma3-270m-q4_k_m.header.gguf.xz`` →
    ``gemma3-270m-q4_k_m``)."""
    name = Path(path).name
    for suffix in (".xz", ".gz", ".gguf", ".header"):
        name = name.removesuffix(suffix)
        if suffix == ".gguf":
            name = _SHARD_SUFFIX.sub("", name)
    return name


def entry_path(root: Root, name: str) -> Path:
    """``registry/checkpoints/{name}.toml`` in ``root``."""
    return root.checkpoints / f"{name}.toml"


def _load_entry(path: Path, root: Root) -> GGUFHeader:
    # Kept in this process by the entry's path, its bytes' sha256 and the schema folder (never by size and mtime,
    # which an edit can keep); across processes, schema.load's cache of validated documents skips parsing.
    data = schema.read_bytes(path)
    key = (str(path.resolve()), hashlib.sha256(data).hexdigest(), str(root.schema))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    document = schema.load(path, "checkpoint", root.schema, data=data)
    stem = path.name[: -len(".toml")]
    named = document["entry"]["name"]
    if named != stem:
        raise InputError(f"{path}: entry.name: {named!r} does not match the file name {stem!r}")
    header = header_from_entry(document, str(path))
    _CACHE[key] = header
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return header


def load_checkpoint(root: Root, ref: str) -> GGUFHeader:
    """The header of the checkpoint ``ref``: a path to a GGUF file (``.gguf``, ``.gguf.xz``, ``.gguf.gz``, or any
    existing file that is not a ``.toml``: :func:`~passprice.gguf_header.read_header`), a path to an entry
    ``.toml``, or an entry name in ``root.checkpoints`` (validated against ``schema/checkpoint.schema.json``).

    Raises :class:`InputError` listing the registered names when ``ref`` names none,
    :class:`passprice.errors.SchemaError` (every schema problem, with key paths) for an invalid entry, and
    :class:`~passprice.gguf_header.HeaderError` for a GGUF file that does not read.
    """
    candidate = Path(ref)
    if ref.endswith(GGUF_SUFFIXES):
        return read_header(candidate)
    if ref.endswith(".toml") and candidate.is_file():
        return _load_entry(candidate, root)
    path = entry_path(root, ref)
    if path.is_file():
        return _load_entry(path, root)
    if candidate.is_file():
        return read_header(candidate)
    raise not_found("checkpoint", ref, root.checkpoints, root.names(root.checkpoints))


def write_entry(path: str | os.PathLike[str], text: str, force: bool = False) -> None:
    """Write the entry ``text`` to ``path`` atomically, creating the folder (:func:`passprice.files.write_atomically`).

    Raises :class:`InputError` when ``path`` exists and not ``force``, or the folder cannot be written.
    """
    write_atomically(Path(path), text, force)
