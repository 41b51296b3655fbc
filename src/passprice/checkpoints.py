"""A checkpoint entry is its header written down: reading ``registry/checkpoints/NAME.toml`` gives a
:class:`~passprice.gguf_header.GGUFHeader` equal to the one read from the GGUF file it was imported from, so a
checkpoint named by entry and one given as a ``.gguf`` path price the same.

An entry (``schema/checkpoint.schema.json``) holds ``[entry]`` (name, source file, origin, the passprice version that
imported it), ``[header]`` (version, byte order, header bytes, alignment, data offset, sha256, shards, and the tensor
table: name, type name, dims in GGUF order, offset, shard) and ``[metadata]`` (every key, quoted, as
``{ type = "uint32", value = 18 }``, or ``{ type = "array[string]", length = 262144 }`` for a long array). Shards and
tensor rows are structured and unstructured with a cattrs converter; the entry is written with tomlkit,
deterministically: the same header gives the same bytes, and every float round-trips exactly.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sys
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import __version__, ggml, schema
from passprice.digests import blake2b_digest
from passprice.errors import InputError, problem_lines
from passprice.files import is_there, make_folder, require_no_lookalike, write_atomically
from passprice.gguf_records import (
    KEEP_ARRAY_LIMIT,
    VALUE_TYPE_NAMES,
    GGUFHeader,
    LongArray,
    LongString,
    MetaValue,
    Shard,
    TensorInfo,
    nonfinite_text,
)
from passprice.registry import Root, not_found, outside, stays_in

if TYPE_CHECKING:
    import cattrs

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

_FLOAT_MAX = sys.float_info.max
#: A uint64 written as a decimal string (past int64, which TOML integers cannot hold).
@functools.cache
def _decimal() -> re.Pattern[str]:
    """A uint64 written as decimal text (compiled on first use, as every pattern here: not at import)."""
    return re.compile(r"[0-9]{1,20}")
_SCALARS = frozenset(VALUE_TYPE_NAMES.values()) - {"array"}


# --- writing ---------------------------------------------------------------------------------------------------------


def _unstructure_tensor(t: TensorInfo) -> dict[str, Any]:
    """A tensor-table row as the entry writes it: name, type (its GGML name, or the id of a type ``ggml`` does not
    know), dims, offset, shard."""
    row = _tensor_fields()(t)
    return {
        "name": row["name"],
        "type": t.type_name if ggml.known(t.type_id) else t.type_id,
        "dims": list(row["dims"]),
        "offset": row["offset"],
        "shard": row["shard"],
    }


def _structure_type(kind: Any, _: Any) -> int:
    """A tensor's ``type`` as an entry holds it (a GGML type name, or a bare id) → its type id."""
    if isinstance(kind, int) and not isinstance(kind, bool):
        return kind
    return ggml.by_name(str(kind)).id


@functools.cache
def converter() -> cattrs.Converter:
    """Checkpoint entry rows ↔ the header's records, with cattrs: :class:`~passprice.gguf_header.Shard` field for
    field, :class:`~passprice.gguf_header.TensorInfo` with its type id as the ``type`` name. Made on first use, each
    hook generated when first needed, so reading a GGUF file (``passprice header``) does not import cattrs."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    c = cattrs.Converter(forbid_extra_keys=True)
    c.register_unstructure_hook(TensorInfo, _unstructure_tensor)
    c.register_unstructure_hook_factory(lambda t: t is Shard, lambda t: make_dict_unstructure_fn(Shard, c))
    c.register_structure_hook_factory(
        lambda t: t is TensorInfo,
        lambda t: make_dict_structure_fn(
            TensorInfo, c, _cattrs_forbid_extra_keys=True,
            type_id=override(rename="type", struct_hook=_structure_type),
        ),
    )
    return c


@functools.cache
def _tensor_fields() -> Any:
    """:class:`~passprice.gguf_header.TensorInfo`'s fields unstructured one for one (cattrs)."""
    from cattrs.gen import make_dict_unstructure_fn

    return make_dict_unstructure_fn(TensorInfo, converter())


def _kept(value: MetaValue) -> Any:
    """A kept metadata value as TOML can hold it: a uint64 beyond int64 as its decimal string (TOML integers are
    int64), a NaN or an infinity as its name (:func:`nonfinite_text`), a tuple as a list."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        text = nonfinite_text(value)
        return value if text is None else text
    if isinstance(value, int):
        return value if _INT64_MIN <= value <= _INT64_MAX else str(value)
    if isinstance(value, tuple):
        return [_kept(v) for v in value]
    if isinstance(value, LongArray):
        raise TypeError("a long array is written as its type and length")
    return value


def entry_document(header: GGUFHeader, name: str, source_note: str) -> dict[str, Any]:
    """The entry ``registry/checkpoints/{name}.toml`` for ``header`` as data: ``entry`` (name, source file, origin,
    importer), ``header`` (its figures, shards and tensor table, unstructured by :func:`converter`) and ``metadata``
    (each key as ``{type, value}``, or ``{type, length}`` for a long array)."""
    metadata: dict[str, Any] = {}
    for key, value in header.metadata.items():
        kind = header.value_types[key]
        if isinstance(value, LongArray) and value.sha256 is not None:  # its type, length and elements' digest
            metadata[key] = {"type": kind, "length": value.length, "sha256": value.sha256}
        elif isinstance(value, LongArray | LongString):  # a long array or string: its type and length only
            metadata[key] = {"type": kind, "length": value.length}
        else:
            metadata[key] = {"type": kind, "value": _kept(value)}
    return {
        "entry": {
            "name": name,
            "source": header.shards[0].file,
            "origin": source_note,
            "imported_by": f"passprice {__version__}",
        },
        "header": {
            "version": header.version,
            "byte_order": header.byte_order,
            "header_bytes": header.header_bytes,
            "alignment": header.alignment,
            "data_offset": header.data_offset,
            "sha256": header.sha256,
            "shards": [converter().unstructure(s) for s in header.shards],
            "tensors": [converter().unstructure(t) for t in header.tensors],
        },
        "metadata": metadata,
    }


def _inline(mapping: Mapping[str, Any]) -> Any:
    """``mapping`` as a TOML inline table written ``{ key = value, … }``."""
    import tomlkit

    table = tomlkit.inline_table()
    table.update(mapping)
    items = [v for k, v in table.value.body if k is not None]
    if items:
        items[0].trivia.indent = " "
        items[-1].trivia.trail = " "
    return table


def _rows(rows: list[Mapping[str, Any]]) -> Any:
    """``rows`` as a TOML array of inline tables, one a line, indented two spaces, each with its comma."""
    from tomlkit.items import Array, Trivia, Whitespace

    # What ``Array.add_line(row, indent="  ")`` a row and a closing ``add_line(indent="")`` build, given to the
    # constructor at once: ``add_line`` re-indexes the whole array each call (quadratic in the rows: 2,040 tensors
    # took a second).
    body: list[Any] = []
    for row in rows:
        body += [Whitespace("\n  "), _inline(row), Whitespace(",")]
    body.append(Whitespace("\n"))
    return Array(body, Trivia())


_PREAMBLE = (
    f"{SCHEMA_LINE}\n"
    "# A checkpoint imported from its GGUF header by passprice: metadata (long arrays as type and length), the\n"
    "# tensor table (dims in GGUF order) and the header's sha256. Re-import rather than edit.\n\n"
)

@functools.cache
def _name() -> re.Pattern[str]:
    """An entry name."""
    return re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _check_name(name: str) -> None:
    if not _name().match(name):
        raise InputError(f"checkpoint name {name!r}: use letters, digits, '.', '_' and '-' (first a letter or digit)")


def default_origin(file: Path, root: Path, sha256: str) -> str:
    """The ``entry.origin`` ``import`` writes when no ``--origin`` is given: the file as found — its path relative to
    the registry ``root`` when it lies inside it (the same in every checkout), else its name alone — and that the
    header's ``sha256`` (in ``[header]``) is what identifies it. The folder of a file outside the registry is not
    recorded: it names the importer's machine (``/home/me/Downloads``), not the file, and would make the same import
    differ byte for byte between machines (session 24 decided this; the entry's ``source`` stays the file's name, as
    its shards' ``file`` are). One line (:func:`passprice.errors.escaped`), at most 4,000 characters (the schema's
    bound). Raises nothing."""
    from passprice.errors import escaped

    try:
        shown = f"{escaped(file.resolve().relative_to(root.resolve()).as_posix())} in this registry ("
    except (ValueError, OSError, RuntimeError):
        shown = f"{escaped(file.name)} (a file outside this registry; "
    text = (f"{shown}no --origin given: the header's sha256 {sha256} identifies it, say where it came from with "
            "--origin)")
    if len(text) > 4000:
        text = (f"{escaped(file.name)[:3000]} (no --origin given: the header's sha256 {sha256} identifies it, say "
                "where it came from with --origin)")
    return text


def import_header(header: GGUFHeader, name: str, source_note: str) -> str:
    """The text of the entry ``registry/checkpoints/{name}.toml`` for ``header`` (:func:`entry_document`, written
    with tomlkit); ``source_note`` says where the file came from (package or URL, version, licence).

    Deterministic: the same header, name and note give the same bytes (floats in Python's shortest round-trip form,
    metadata keys always quoted, one tensor a line). The text starts with :data:`SCHEMA_LINE` and matches
    ``schema/checkpoint.schema.json``; :func:`header_from_entry` reads it back to an equal header — which is checked
    here, so whatever ``import`` writes reads back (``header NAME``, ``checkpoints``, a price).

    Raises :class:`InputError` for a name that is not a file stem of letters, digits, ``.``, ``_`` and ``-``; for a
    header with :func:`passprice.decode.header_problems` (every one, naming the file and key: ``check``,
    ``checkpoints`` and every price refuse such an entry, so none is written; walk45: a header of 9 experts a token
    of 8 was imported, exit 0, and the next ``check`` failed on the entry it wrote); and, naming the header's file
    and the first metadata key or line that differs, for a header the entry cannot hold.
    """
    _check_name(name)
    from passprice.decode import header_problems

    problems = header_problems(header)
    if problems:
        raise InputError.of([*problems[:-1], f"{problems[-1]} (nothing imported: check, checkpoints and every "
                                              "price refuse such an entry)"])
    text = _entry_text(header, name, source_note)
    _check_reads_back(header, text, name, source_note)
    return text


def unknown_types_note(header: GGUFHeader, name: str) -> str | None:
    """What ``import`` says of ``header``'s tensors whose GGML type ids the ``gguf`` package does not know (255 or
    4294967295: no type of the installed gguf): how many, the first by name and id, and that every price of
    the entry ``name`` is refused (``UnknownType``, exit 1) until it is requantized or a gguf knowing the id is
    installed; ``None`` when every type is known. The entry keeps such an id as an integer and reads back equal, so
    ``header NAME`` still shows it (its bytes unknown)."""
    unknown = [t for t in header.tensors if not ggml.known(t.type_id)]
    if not unknown:
        return None
    first = unknown[0]
    ids = sorted({t.type_id for t in unknown})
    shown = ", ".join(str(i) for i in ids[:5]) + (f" and {len(ids) - 5:,} more" if len(ids) > 5 else "")
    return (
        f"{len(unknown):,} of {len(header.tensors):,} tensors have GGML type ids the gguf package does not know "
        f"({shown}; first {first.name!r}, id {first.type_id}): their bytes are unknown, so every price of {name} is "
        "refused (UnknownType) until it is requantized to a known type or a gguf that knows the id is installed"
    )


def architecture_note(header: GGUFHeader, name: str) -> str | None:
    """What ``import`` says of a header whose architecture passprice does not price
    (:func:`passprice.decode.architecture_refusal`: a ``general.architecture`` none of
    :data:`passprice.architectures.KNOWN`, or a key that architecture needs missing): the entry ``name`` is written
    (it is the header, read back equal; ``header NAME`` shows it), and every price of it is refused by that name,
    exit 1, said now rather than first at ``price``. ``None`` when its architecture can be priced."""
    from passprice.decode import architecture_refusal

    refusal = architecture_refusal(header)
    if refusal is None:
        return None
    return f"every price of {name} is refused ({refusal.name}): {refusal}"


def _check_reads_back(header: GGUFHeader, text: str, name: str, source_note: str) -> None:
    """Raise :class:`InputError` unless the entry ``text`` reads back (TOML, the schema, :func:`header_from_entry`)
    to a header whose entry document (:func:`entry_document`, which the text is written from) is the same: nothing
    the header held is lost or changed on the way. (The documents are compared as JSON, so a NaN equals a NaN; the
    text is not written twice, tomlkit being the slow part of an import.)"""
    source = header.source or header.shards[0].file
    import tomllib  # here, not at the top: a price read from the cache parses no TOML

    where = f"{source}: cannot import: the entry would not read back"
    try:
        document = tomllib.loads(text)
        schema.validate(document, "checkpoint", "entry")
        back = header_from_entry(document, "entry")
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where} (not valid TOML: {e})") from None
    except InputError as e:
        raise InputError(f"{where} ({problem_lines(e)[0]})") from None
    before, after = entry_document(header, name, source_note), entry_document(back, name, source_note)
    for part in ("header", "metadata"):
        for key in before[part].keys() | after[part].keys():
            was, now = before[part].get(key), after[part].get(key)
            if json.dumps(was, default=str) != json.dumps(now, default=str):
                shown = schema.shown_value(f"{key}: {json.dumps(was, default=str)[:60]}")
                raise InputError(f"{where}: {part} {shown} changes on the way")


def _entry_text(header: GGUFHeader, name: str, source_note: str) -> str:
    """The entry's text (:func:`import_header`), unchecked."""
    import tomlkit
    from tomlkit.items import KeyType, SingleKey

    data = entry_document(header, name, source_note)
    document = tomlkit.document()
    entry = tomlkit.table()
    entry.update(data["entry"])
    document.add("entry", entry)
    head = tomlkit.table()
    for key, value in data["header"].items():
        head.add(key, _rows(value) if key in ("shards", "tensors") else value)
    document.add("header", head)
    metadata = tomlkit.table()
    for key, value in data["metadata"].items():
        metadata.add(SingleKey(key, KeyType.Basic), _inline(value))
    document.add("metadata", metadata)
    return _PREAMBLE + tomlkit.dumps(document)


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
            raise InputError(f"{where}: type {descriptor} needs an array, not {schema.shown_value(value)}")
        if inner is None:  # "array": arrays of different (or no) types, each element any scalar or array
            return tuple(_any_meta(v, f"{where}[{i}]") for i, v in enumerate(value))
        return tuple(_meta_from(v, inner, f"{where}[{i}]") for i, v in enumerate(value))
    if descriptor in _INT_RANGES:
        if descriptor == "uint64" and isinstance(value, str) and _decimal().fullmatch(value):
            value = int(value)  # ASCII digits only (str.isdigit takes "²" and Arabic-Indic digits), 20 at most
        low, high = _INT_RANGES[descriptor]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(f"{where}: {schema.shown_value(value)} is not a {descriptor}")
        return value
    if descriptor in _FLOATS:
        if isinstance(value, str) and value in schema.NONFINITE:
            return float(value)  # a NaN or an infinity the header held (the schema allows only these three names)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"{where}: {schema.shown_value(value)} is not a {descriptor}")
        if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
            raise InputError(f"{where}: an integer of {len(str(abs(value))):,} digits is past any {descriptor}")
        return float(value)
    if descriptor == "bool":
        if not isinstance(value, bool):
            raise InputError(f"{where}: {schema.shown_value(value)} is not a bool")
        return value
    if descriptor == "string":
        if not isinstance(value, str):
            raise InputError(f"{where}: {schema.shown_value(value)} is not a string")
        return value
    raise InputError(f"{where}: {descriptor!r} is not a GGUF value type")


def _any_meta(value: Any, where: str) -> MetaValue:
    """An element of an array whose element type is not one (``array[array]``: inner arrays of different types):
    any TOML scalar within a GGUF type's range, or an array of them."""
    if isinstance(value, list):
        return tuple(_any_meta(v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT_RANGES["uint64"][1]:
        raise InputError(f"{where}: {schema.shown_value(value)} is past every GGUF integer type")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: {value!r} is not a finite number")
    if isinstance(value, bool | int | float | str):
        return value
    raise InputError(f"{where}: {schema.shown_value(value)} is not a metadata value")


def _leaves(value: Any) -> int:
    """Elements of a metadata ``value`` counted through its nested arrays, as the header reader counts them before it
    keeps an array (an empty inner array counts as one; a scalar is 0): at most ``KEEP_ARRAY_LIMIT`` in an entry
    ``import`` writes. Walked without recursion."""
    if not isinstance(value, list):
        return 0
    count = 0
    pending = [value]
    while pending:
        items = pending.pop()
        if not items:
            count += 1
        for item in items:
            if isinstance(item, list):
                pending.append(item)
            else:
                count += 1
    return count


def _plain_tensors(rows: Sequence[Mapping[str, Any]]) -> list[TensorInfo] | None:
    """The tensor table's ``rows`` (schema-valid) as :class:`~passprice.gguf_header.TensorInfo` records, each equal
    to what :func:`converter` structures from it, when every row is plain: exactly its five keys, ``name`` a
    ``str``, ``dims`` a list of ``int``, ``offset`` and ``shard`` ``int`` (the types themselves, no subclass: cattrs'
    ``str()`` and ``int()`` give back the same values), ``type`` a bare id (an ``int``) or a name of
    :func:`passprice.ggml.type_by_name`'s table; else ``None`` (the caller structures the table with cattrs, which
    words any problem). Issue 13, cold reads: cattrs' generated function, one call a row, was a third of reading an
    entry's header (10,121 rows in the 18 shipped entries)."""
    by_name = ggml.type_by_name()
    out = []
    for t in rows:
        if len(t) != 5:
            return None
        name, kind, dims, offset, shard = t.get("name"), t.get("type"), t.get("dims"), t.get("offset"), t.get("shard")
        if type(name) is not str or type(dims) is not list or type(offset) is not int or type(shard) is not int:
            return None
        if type(kind) is int:
            type_id = kind
        elif type(kind) is str and kind in by_name:
            type_id = by_name[kind].id
        else:
            return None
        if any(type(d) is not int for d in dims):
            return None
        out.append(TensorInfo(name, tuple(dims), type_id, offset, shard))
    return out


#: The sha256 of no bytes: the elements of an empty array.
_EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _require_digest_fits(item: Mapping[str, Any], where: str) -> None:
    """Refuse a long array's recorded ``sha256`` (at key path ``where``) that cannot be of ``length`` elements: the
    digest of no bytes beside a length above 0 (every element takes at least a byte), or another beside a length of
    0. Raises :class:`InputError`; a missing digest passes."""
    digest, length = item.get("sha256"), int(item["length"])
    if digest is None or (digest == _EMPTY_SHA256) == (length == 0):
        return
    said = "the sha256 of no bytes" if digest == _EMPTY_SHA256 else "the sha256 of some bytes"
    raise InputError(
        f"{where}: {said}, beside length {length:,}: {length:,} elements take "
        f"{'no bytes' if length == 0 else 'at least a byte each'} (import the header again rather than edit it)"
    )


def header_from_entry(document: Mapping[str, Any], source: str) -> GGUFHeader:
    """The header a checkpoint entry (a parsed, schema-valid ``checkpoint`` document read from ``source``)
    describes: equal (``==``) to what :func:`~passprice.gguf_header.read_header` returns for the file it was
    imported from; its ``source`` is ``source``.

    Raises :class:`InputError` naming ``source`` and the key path for a value that does not fit its type, an
    unknown tensor type name, figures that disagree (tensor counts, shard indices, header bytes), or an alignment,
    dims or offset the binary reader would refuse (:func:`~passprice.gguf_header.alignment_problem`,
    :func:`~passprice.gguf_header.dims_problem`, :func:`~passprice.gguf_header.offset_problem`).
    """
    head = document["header"]
    metadata: dict[str, MetaValue] = {}
    value_types: dict[str, str] = {}
    for key, item in document["metadata"].items():
        where = f"{source}: metadata.{schema.key_part(key)}"
        descriptor = item["type"]
        if not _valid_descriptor(descriptor):
            raise InputError(f"{where}.type: {descriptor!r} is not a GGUF value type")
        if "length" in item:
            inner = _element_type(descriptor)
            if descriptor == "string":  # a string too long to keep: its length in bytes
                if "sha256" in item:  # was dropped without a word: a claim nothing checks or keeps
                    raise InputError(
                        f"{where}.sha256: a long string is recorded by its length alone (passprice keeps the "
                        "digest of a long array's elements, not of a string): remove it, or import the header again"
                    )
                metadata[key] = LongString(int(item["length"]))
            elif inner is None:
                raise InputError(f"{where}: a length needs an array or string type, not {descriptor!r}")
            else:
                _require_digest_fits(item, f"{where}.sha256")
                metadata[key] = LongArray(inner, int(item["length"]), item.get("sha256"))
        else:
            leaves = _leaves(item["value"])
            if leaves > KEEP_ARRAY_LIMIT:
                raise InputError(
                    f"{where}.value: {leaves:,} elements counted through its arrays: the header reader keeps at most "
                    f"{KEEP_ARRAY_LIMIT:,} of an array (a longer one is written as its type and length)"
                )
            metadata[key] = _meta_from(item["value"], descriptor, f"{where}.value")
        value_types[key] = descriptor
    import cattrs

    c = converter()
    shards = tuple(c.structure(s, Shard) for s in head["shards"])
    tensors = _plain_tensors(head["tensors"])
    if tensors is None:  # a row the plain reading does not take: cattrs structures it, and words what is wrong
        tensors = []
        for i, t in enumerate(head["tensors"]):
            try:
                tensors.append(c.structure(t, TensorInfo))
            except cattrs.BaseValidationError as e:
                detail = "; ".join(str(x.args[0]) if isinstance(x, InputError) else str(x) for x in e.exceptions)
                raise InputError(f"{source}: header.tensors.{i}.type: {detail}") from None
    from passprice.gguf_header import DEFAULT_ALIGNMENT, alignment_problem, dims_problem, offset_problem

    problem = alignment_problem(head["alignment"])
    if problem is not None:
        raise InputError(f"{source}: header.alignment: {problem}")
    # The schema states general.alignment's type and values; that it is the header's alignment it cannot state (the
    # header reader takes one from the other: a hand-edited 64 beside header.alignment 32 read as 32; round 21).
    stated = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if stated != head["alignment"]:
        said = (f'metadata."general.alignment" is {stated}' if "general.alignment" in metadata
                else f'metadata has no "general.alignment" (GGUF\'s default, {DEFAULT_ALIGNMENT})')
        raise InputError(f"{source}: header.alignment: {head['alignment']} but {said}: they must be equal")
    # A model's blocks repeat their tensors' shapes: each (dims, type) is judged once (dims_problem is a function of
    # those ints alone; the first tensor of a shape with a problem is the one named, as before). A cold check judged
    # 9,771 tensors of 21 entries one by one.
    sound: set[tuple[tuple[int, ...], int]] = set()
    for i, t in enumerate(tensors):
        shape = (t.dims, t.type_id)
        if shape not in sound:
            problem = dims_problem(t.dims, t.type_id)
            if problem is not None:
                raise InputError(f"{source}: header.tensors.{i}.dims: {problem}")
            sound.add(shape)
        problem = offset_problem(t.offset, head["alignment"])
        if problem is not None:
            raise InputError(f"{source}: header.tensors.{i}.offset: {problem}")
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
    # The data starts at the header's end padded to the alignment (gguf.cpp; the binary reader computes it so): an
    # entry whose alignment and general.alignment were both edited, the data offset not, was read (attack round 44).
    padded = -(-shards[0].header_bytes // head["alignment"]) * head["alignment"]
    if head["data_offset"] != padded:
        raise InputError(
            f"{source}: header.data_offset: {head['data_offset']:,} but shard 0's {shards[0].header_bytes:,} header "
            f"bytes padded to the alignment {head['alignment']:,} end at {padded:,}: they must be equal (re-import "
            "the header rather than edit the entry)"
        )
    # Each further shard's data starts at its own header's end padded to the same alignment (the header reader pads
    # every shard to the first's, and refuses a shard that states another): only shard 0's was checked, so a shard
    # 1 whose data offset was edited to 1,000, or to 200 inside its 223 header bytes, read (session 24).
    for no, s in enumerate(shards[1:], start=1):
        padded = -(-s.header_bytes // head["alignment"]) * head["alignment"]
        if s.data_offset != padded:
            raise InputError(
                f"{source}: header.shards.{no}.data_offset: {s.data_offset:,} but shard {no}'s ({s.file}) "
                f"{s.header_bytes:,} header bytes padded to the alignment {head['alignment']:,} end at {padded:,}: "
                "they must be equal (re-import the header rather than edit the entry)"
            )
    return GGUFHeader(
        version=head["version"],
        byte_order=head["byte_order"],
        metadata=metadata,
        value_types=value_types,
        tensors=tuple(tensors),
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
#: id of a header in :data:`_CACHE` → (the header, its content key: :func:`entry_content`).
_CONTENT: dict[int, tuple[GGUFHeader, str]] = {}


@functools.cache
def _shard_suffix() -> re.Pattern[str]:
    """A shard's suffix, ``-00001-of-00003``."""
    return re.compile(r"-\d{5}-of-\d{5}$")


def entry_name(path: str | os.PathLike[str]) -> str:
    """The entry name a GGUF file imports under by default: its file name less ``.xz``/``.gz``, ``.gguf``, a shard
    suffix (``-00001-of-00003``) and a ``.header`` marker (``gemma3-270m-q4_k_m.header.gguf.xz`` →
    ``gemma3-270m-q4_k_m``), without trailing dots and spaces before and after them: ``import x.gguf.`` wrote an
    entry named ``x.gguf.`` (``registry/checkpoints/x.gguf..toml``), a name Windows cannot hold as a file's and
    nobody meant (walkthrough 33; session 29), where it is ``x`` now."""
    name = Path(path).name.rstrip(". ")
    for suffix in (".xz", ".gz", ".gguf", ".header"):
        name = name.removesuffix(suffix)
        if suffix == ".gguf":
            name = _shard_suffix().sub("", name)
    return name.rstrip(". ")


def entry_path(root: Root, name: str) -> Path:
    """``registry/checkpoints/{name}.toml`` in ``root``."""
    return root.checkpoints / f"{name}.toml"


def _load_entry(path: Path, root: Root) -> GGUFHeader:
    # Kept in this process by the entry's path, its bytes' sha256 and the schema folder (never by size and mtime,
    # which an edit can keep); across processes, as an object in the cache of validated files (passprice.cache),
    # keyed by the entry's path and bytes and its schema, so an unchanged entry is neither parsed nor structured.
    # Inside a snapshot (passprice.snapshot: one read of the registry), the same bytes give the same header without
    # being hashed again (a bytes object keeps its hash).
    from passprice import snapshot

    data = schema.read_bytes(path, "checkpoint")
    if snapshot.active():
        key = ("checkpoint", os.fspath(path), str(root.schema), data)
        return snapshot.made(key, lambda: _kept_entry(path, root, data))
    return _kept_entry(path, root, data)


def _kept_entry(path: Path, root: Root, data: bytes) -> GGUFHeader:
    """:func:`_load_entry` of the entry at ``path`` holding ``data``, kept in this process (:data:`_CACHE`)."""
    from passprice import cache, snapshot

    # The bytes hashed once: this digest (kept by the bytes object, so the document's validation in
    # _header_of_entry, which keys the same object, finds it) names them in the built object's key as well, where the
    # entry's bytes were joined to its name and hashed again (tests/test_cold135.py).
    # Inside a snapshot, once for the same bytes whatever folder holds them: a review's BASE and HEAD entries are two
    # bytes objects of one content (1 MB of the shipped entries hashed twice; tests/test_reviewfast175.py).
    whole = snapshot.made(("entry-digest", data), lambda: blake2b_digest(data))
    digest = whole.hex()
    key = (os.path.realpath(path), digest, str(root.schema))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    # Keyed by the entry's file name (the build checks entry.name against it), not its folder: the header is a
    # function of the name, the bytes and the schema, and its path is only its ``source`` text (what a refusal names,
    # never kept), put right below. So diff's BASE and HEAD copies of an entry (a temporary folder each run, round 28:
    # every run of `diff A B` rebuilt all 18 headers, their decode steps and pass shapes, about a third of its CPU)
    # and the work tree's share one header and what is computed from it, in the process and across runs.
    header = built = cache.built(
        "checkpoint", root.schema / "checkpoint.schema.json", b"entry\0" + os.fsencode(path.name) + b"\0" + whole,
        lambda: _header_of_entry(path, root, data), GGUFHeader,
    )
    if header.source != str(path):
        header = attrs.evolve(header, source=str(path))
        cache.same_identity(header, built)
    _CACHE[key] = header
    _CONTENT[id(header)] = (header, f"{digest}\0{root.schema}")
    while len(_CACHE) > _CACHE_SIZE:
        dropped = _CACHE.popitem(last=False)[1]
        _CONTENT.pop(id(dropped), None)
    return header


def entry_content(header: GGUFHeader) -> str | None:
    """What the header object ``header`` was read from, by content, when this process read it from a registry entry
    (:func:`_load_entry`, still kept in :data:`_CACHE`): the BLAKE2b digest of the entry's bytes and the schema
    folder it was validated against (a string), else ``None``. Two headers with the same content key were built by
    :func:`header_from_entry` from the same valid document and differ at most in their ``source`` (the entry's path),
    which a price never reads (only a refusal's text names it): diff's BASE and HEAD entries of the same bytes share
    a pass shape (:func:`passprice.serving.shape_of`) through it. Raises nothing."""
    held = _CONTENT.get(id(header))
    return held[1] if held is not None and held[0] is header else None


def _header_of_entry(path: Path, root: Root, data: bytes) -> GGUFHeader:
    """The header the entry at ``path`` (whose bytes are ``data``) describes, validated against ``root``'s schema.
    Raises what :func:`header_from_entry` and :func:`passprice.schema.load` raise, and :class:`InputError` for an
    entry whose ``entry.name`` is not its file name."""
    from passprice import snapshot

    # The header is kept in the cache of built objects: its document (the whole tensor table as JSON, 0.87 MB for the
    # 17 shipped entries, 0.04 s of a first check to write) need not be kept too. Inside a snapshot, the same bytes
    # under another path (diff's BASE side, a copy of HEAD's files) are parsed and validated once: a valid document
    # is a function of the bytes and the schema alone (a refusal, which names the path, is never kept).
    document = snapshot.made(
        ("checkpoint-document", str(root.schema), data),
        lambda: schema.load(path, "checkpoint", root.schema, data=data, kept=False),
    )
    stem = path.name[: -len(".toml")]
    named = document["entry"]["name"]
    if named != stem:
        from passprice.files import shown  # a name holding U+202E or a newline, escaped as every other line's path

        raise InputError(f"{shown(path)}: entry.name: {named!r} does not match the file name {stem!r}")
    return header_from_entry(document, str(path))


def entry_origin(root: Root, data: bytes, key: str = "origin") -> str:
    """The ``entry.origin`` (or another ``key`` of its ``[entry]`` table, ``source``) of a registry entry whose bytes
    are ``data`` (``""`` when it has none): from the document
    :func:`load_checkpoint` parsed and kept in the current snapshot for those bytes, else parsed here once
    (:func:`passprice.schema.toml_loads`; its header then came from the cache of built objects, unparsed). A review
    of an added entry parsed it twice, once to load it and once for its origin (leftovers round 20). Raises
    ``tomllib.TOMLDecodeError`` or ``UnicodeDecodeError`` for bytes that do not read."""
    from passprice import snapshot

    document = snapshot.kept(("checkpoint-document", str(root.schema), data))
    if document is None:
        document = schema.toml_loads(data.decode("utf-8"))
    entry = document.get("entry")
    return str(entry.get(key, "")) if isinstance(entry, dict) else ""


@functools.cache
def _entry_header() -> re.Pattern[str]:
    """The ``[entry]`` table's header line (:func:`_entry_table`; compiled when first used: afresh101)."""
    return re.compile(r"^[ \t]*\[[ \t]*entry[ \t]*\][ \t]*(?:#.*)?$", re.MULTILINE)


@functools.cache
def _next_table() -> re.Pattern[str]:
    """The next table header after it (:func:`_entry_table`; compiled when first used)."""
    return re.compile(r"^[ \t]*\[", re.MULTILINE)


def _entry_table(text: str) -> Mapping[str, Any] | None:
    """The ``[entry]`` table of an entry's ``text`` read from the file's lines up to the next table's header after
    it (passprice writes ``[entry]`` first, after comments: its own lines), ``None`` where they do not read as TOML
    holding that table (the entry written otherwise: the caller parses it whole). A schema-valid entry's ``[entry]``
    values are one-line strings, so no line of the table starts with ``[``; TOML defines a table once, so its keys
    are all there. The lines before the header are parsed with it (attack97): a line ``[entry]`` inside an earlier
    multi-line string is no header (its lines, cut at the next ``[``, leave that string open: not read), nor is a
    table a root dotted key (``entry.origin = …``) defined first; read from the header on, the string's lines were
    the entry's (``checkpoints`` said ``file``, not ``synthetic``, of a synthetic entry). The rest of the file is not
    parsed here: a file TOML refuses after the table is refused where it is loaded."""
    import tomllib

    start = _entry_header().search(text)
    if start is None:
        return None
    end = _next_table().search(text, start.end())
    try:
        table = tomllib.loads(text[:end.start() if end is not None else len(text)]).get("entry")
    except (tomllib.TOMLDecodeError, RecursionError):  # nested past the parser (attack93): the whole file says why
        return None
    return table if isinstance(table, dict) else None


def checkpoint_origin(root: Root, ref: str) -> str | None:
    """The ``entry.origin`` of the registry entry the checkpoint ``ref`` names (an entry name or a path to an entry
    ``.toml``, as :func:`checkpoint_file` finds it): which model, which file, its licence, the text ``audit`` cites
    the checkpoint by and a lock pins (:class:`passprice.locks.CheckpointPin`, session 27); ``""`` for an entry with
    none, ``None`` for a GGUF file (no entry) or a ``ref`` that names nothing readable (said where it is loaded).
    Read as :func:`checkpoint_label` reads a key. Raises nothing."""
    return checkpoint_label(root, ref, "origin")


def checkpoint_source(root: Root, ref: str) -> str | None:
    """The ``entry.source`` of the registry entry the checkpoint ``ref`` names: the header file it was imported from
    (its name, no folder), which ``audit`` cites the checkpoint by (``header file: …``,
    :class:`passprice.checkpointcite.CheckpointCitation`) and a lock pins beside the origin (slip round 46: a
    rewritten source passed ``check``, ``reproduce`` and ``price --lock`` silently); ``""``/``None`` as
    :func:`checkpoint_origin`. Raises nothing."""
    return checkpoint_label(root, ref, "source")


def checkpoint_label(root: Root, ref: str, key: str) -> str | None:
    """The ``[entry]`` table's ``key`` (``origin``, ``source``) of the registry entry the checkpoint ``ref`` names,
    ``""`` for an entry without it, ``None`` for a GGUF file (no entry) or a ``ref`` that names nothing readable.
    Read from the ``[entry]`` table's own lines (:func:`_entry_table`: a warm ``price --lock`` parsed no entry, and
    a whole 126 kB entry takes 40 ms to parse), else from the whole document (:func:`entry_origin`), and kept in the
    cache of built objects by the entry's bytes and the key (:func:`passprice.cache.built`: a warm price parses no
    TOML). Raises nothing."""
    try:
        path, is_entry = checkpoint_file(root, ref)
        if not is_entry:
            return None
        data = schema.read_bytes(path, "checkpoint")
    except (InputError, OSError, ValueError):
        return None
    from passprice import cache

    def label() -> str:
        table = _entry_table(data.decode("utf-8"))
        if table is not None:
            return str(table.get(key, ""))
        return entry_origin(root, data, key)

    try:
        # kept in the cache of built objects by the entry's bytes: a warm price under a lock pinning the origin (every
        # shipped lock since session 27) parses no TOML (tests/test_cache.py)
        return cache.built(f"checkpoint-{key}", None, data, label, str)
    except (UnicodeDecodeError, ValueError):  # tomllib.TOMLDecodeError is a ValueError
        return None


def load_checkpoint(root: Root, ref: str, *, array_digests: bool = True) -> GGUFHeader:
    """The header of the checkpoint ``ref``: a path to a GGUF file (``.gguf``, ``.gguf.xz``, ``.gguf.gz``, or any
    existing file that is not a ``.toml``: :func:`~passprice.gguf_header.read_header`), a path to an entry
    ``.toml``, or an entry name in ``root.checkpoints`` (validated against ``schema/checkpoint.schema.json``).

    Raises :class:`InputError` listing the registered names when ``ref`` names none,
    :class:`passprice.errors.SchemaError` (every schema problem, with key paths) for an invalid entry, and
    :class:`~passprice.gguf_header.HeaderError` for a GGUF file that does not read. Inside a snapshot
    (:mod:`passprice.snapshot`) the checkpoint ``ref`` names is looked up and read once, whatever the number of
    servings naming it.

    ``array_digests=False`` (a reader that shows no long array's digest: ``passprice header``): a GGUF file's long
    arrays may come without their :attr:`~passprice.gguf_records.LongArray.sha256`, each array's elements hashed once
    (into the header's sha256) rather than twice (:func:`~passprice.gguf_header.read_header`); an entry's carry
    theirs as it records them.
    """
    from passprice import snapshot

    return snapshot.made(("checkpoint-ref", root, ref, array_digests),
                         lambda: _load_checkpoint(root, ref, array_digests))


def _load_checkpoint(root: Root, ref: str, array_digests: bool = True) -> GGUFHeader:
    path, is_entry = checkpoint_file(root, ref)
    if is_entry:
        return _load_entry(path, root)
    from passprice.gguf_header import read_header  # the reader, imported only when a GGUF file is read

    return read_header(path, array_digests=array_digests)


def checkpoint_file(root: Root, ref: str) -> tuple[Path, bool]:
    """The file the checkpoint ``ref`` names, as :func:`load_checkpoint` reads it, and whether it is an entry
    (``True``: a ``.toml``) or a GGUF header (``False``; a header of several shards: its first). Nothing is read but
    the names. A name with a folder in it is an entry's only while it stays in ``registry/checkpoints``
    (:func:`passprice.registry.stays_in`), else a path: ``header /data/m`` read ``/data/m.toml`` beside the file
    named, and ``--checkpoint ../../facts/cards/a40`` a card as an entry (attack round 27, as round 26 for cards).
    Raises :class:`InputError` listing the registered names when ``ref`` names none, or saying where a name leading
    out of the folder leads."""
    candidate = Path(ref)
    if ref.endswith(GGUF_SUFFIXES):
        if registry_name(root, ref):
            return entry_path(root, ref), True
        return _beneath(root, ref, missing=True) or candidate, False
    if ref.endswith(".toml"):
        if is_there(candidate):
            return candidate, True
        beneath = _beneath(root, ref, missing=False)
        if beneath is not None:
            return beneath, True
    if ("/" in ref or os.sep in ref) and not stays_in(root.checkpoints, ref):  # a path, never an entry name
        if is_there(candidate):
            return candidate, False
        if ref.endswith("/") or is_there(os.path.normpath(os.path.join(root.checkpoints, f"{ref}.toml"))):
            raise outside("checkpoint", ref, root.checkpoints, root.names(root.checkpoints), root)
        beneath = _beneath(root, ref, missing=True)
        if beneath is not None:
            return beneath, ref.endswith(".toml")
        raise not_found("checkpoint", ref, root.checkpoints, root.names(root.checkpoints), root)
    path = entry_path(root, ref)
    if is_there(path):
        return path, True
    if is_there(candidate):
        return candidate, False
    raise not_found("checkpoint", ref, root.checkpoints, root.names(root.checkpoints), root)


def _beneath(root: Root, ref: str, *, missing: bool) -> Path | None:
    """The file a relative checkpoint path ``ref`` with a folder in it (``models/m.gguf``,
    ``registry/checkpoints/m.toml``) names, read as a record's relative path is read
    (:func:`passprice.registry.against_root`): from the working folder first, and where nothing is there, from the
    registry's root. ``None`` when the working folder holds something of that name (read, or refused by name, as
    given), for an absolute path, a plain name, a path leading out of the root (``../m.gguf``) and the embedded facts
    (no registry of the user's). Whatever the root holds there is returned, a folder or FIFO too, for its reader to
    refuse by name (``../models/m.gguf: is a folder, not a file`` from ``sub/``). A checkpoint path run from a subfolder
    said "no such file here (…); … has one: run there, or give …", and an entry's path "no such checkpoint file",
    where ``--card facts/cards/x.toml`` read the root's card. ``missing``: raise :class:`NotFound` naming both places
    tried when neither holds anything (else ``None``): ``models/m.gguf: no such checkpoint file (looked for from the
    working folder and from the registry's root, /reg)``; a file the source checkout of an editable install holds is
    named as :func:`passprice.registry.found_elsewhere` names it."""
    from passprice.errors import NotFound
    from passprice.files import shown
    from passprice.registry import found_elsewhere

    if root.embedded or os.path.isabs(ref) or ("/" not in ref and os.sep not in ref) or ref.endswith(("/", os.sep)):
        return None
    if os.path.lexists(ref) or os.path.normpath(ref).split(os.sep)[0] == os.pardir:
        return None
    there = root.path / ref
    if os.path.lexists(there):
        return there
    if not missing:
        return None
    plain = f"{ref}: no such file"
    elsewhere = found_elsewhere(plain, root)
    if elsewhere != plain:
        raise NotFound(elsewhere)
    raise NotFound(f"{shown(ref)}: no such checkpoint file (looked for from the working folder and from the "
                   f"registry's root, {shown(root.path.resolve())})")


def registry_name(root: Root, ref: str) -> bool:
    """Whether ``ref``, a checkpoint named on the command line or by a registry file, is the name of a registered
    entry that looks like a GGUF file's name (``x.gguf``: ``import --name x.gguf`` writes
    ``registry/checkpoints/x.gguf.toml``): no folder in it and its entry there. Such a name is the entry, whatever the
    working folder holds, as :func:`passprice.registry.require_inside` judges a name a registry file gives; it was
    read as a file of the working folder and refused ("x.gguf: no such file") by every command and by ``check``. A
    file of that name is named by a path (``./x.gguf``). Raises :class:`InputError` as
    :func:`passprice.files.is_there` does."""
    return "/" not in ref and os.sep not in ref and is_there(entry_path(root, ref))


def listing_row(name: str, header: GGUFHeader) -> dict[str, Any]:
    """What ``passprice checkpoints`` lists of the checkpoint ``name``: ``name``, ``architecture``, ``tensors`` (their
    count), ``tensor_bytes`` (the bytes of every tensor of a GGML type passprice knows,
    :func:`passprice.ggml.tensor_bytes`), ``context_length`` (``None`` when the metadata has none) and ``sha256``
    (the header's), ``draft_tensor_bytes`` (those of ``tensor_bytes`` in draft (MTP) blocks,
    :func:`passprice.decode.draft_bytes`: held only by a serving that drafts with them), and, only when there are
    any, ``unknown_type_tensors``: how many tensors are of a GGML type the gguf package does not know (their bytes
    are not in ``tensor_bytes``).

    Raises :class:`InputError` with every contradiction of the header (:func:`passprice.decode.header_problems`, as
    ``check`` and every price report them): its figures, such as the draft block's bytes, would be nonsense."""
    from passprice.decode import draft_bytes, header_problems

    problems = header_problems(header)
    if problems:
        raise InputError.of(problems)
    size = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors if ggml.known(t.type_id))
    row = {"name": name, "architecture": header.architecture, "tensors": len(header.tensors), "tensor_bytes": size,
           "context_length": header.meta_int("context_length"), "sha256": header.sha256,
           "draft_tensor_bytes": draft_bytes(header)}
    unknown = sum(1 for t in header.tensors if not ggml.known(t.type_id))
    if unknown:  # their bytes are not in tensor_bytes (236 of id 255 listed "0 B", attack round 40)
        row["unknown_type_tensors"] = unknown
    return row


def draft_note(row: dict[str, Any]) -> str | None:
    """What a :func:`listing_row`'s ``tensor_bytes`` counts when the checkpoint has draft (MTP) blocks, in the words
    ``kv`` and a NotResident refusal use (:func:`passprice.serving.held_once_counts`): ``"NAME: 411 GB of tensors,
    with the 7.511 GB draft (MTP) block, held only when drafting with it; 403.5 GB without drafts (passprice kv's
    held once)"``; ``None`` without draft blocks."""
    from passprice.tables import si

    draft = row.get("draft_tensor_bytes") or 0
    if not draft:
        return None
    total = row["tensor_bytes"]
    return (f"{row['name']}: {si(total, 'B')} of tensors, with the {si(draft, 'B')} draft (MTP) block, held only when "
            f"drafting with it; {si(total - draft, 'B')} without drafts (passprice kv's held once)")


def entry_row(root: Root, name: str) -> dict[str, Any]:
    """:func:`listing_row` of the checkpoint ``name`` of ``root`` (as :func:`load_checkpoint` reads it). A registered
    entry's row is kept in the cache of validated files (:mod:`passprice.cache`) under its file name and bytes, its
    schema and passprice, stored only once the entry has read whole (:func:`header_from_entry`), so an unchanged
    entry is listed without structuring its tensor table again, and an entry that does not read is refused on every
    run.

    Raises what :func:`load_checkpoint` raises."""
    from passprice import cache

    path = entry_path(root, name)
    if name.endswith(".toml") or not path.is_file():
        return with_origin(root, name, listing_row(name, load_checkpoint(root, name)))
    data = schema.read_bytes(path, "checkpoint")
    # the origin is kept in the row, read from the bytes read here: asked of checkpoint_origin, each entry was read,
    # hashed and looked up a second time (perf35: checkpoints 301 -> 326 M instructions when the column came)
    return cache.validated(
        "checkpoint+summary+origin",
        root.schema / "checkpoint.schema.json",
        os.fsencode(name) + b"\0" + data,
        lambda: _origin_row(listing_row(name, _load_entry(path, root)), _bytes_origin(root, data)),
        lambda row: _row_holds(row, name),
    )


#: The keys of a :func:`listing_row` with its origin (:func:`_origin_row`), each with the types it holds.
_ROW_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "architecture": (str, type(None)), "tensors": (int,), "tensor_bytes": (int,),
    "context_length": (int, type(None)), "sha256": (str,), "draft_tensor_bytes": (int,),
    "origin": (str, type(None)), "synthetic": (bool,),
}


def _row_holds(row: dict[str, Any], name: str) -> bool:
    """Whether a kept listing row of the checkpoint ``name`` is one :func:`listing_row` and :func:`_origin_row` write:
    its keys (``unknown_type_tensors`` only when some are), each of its type, its name ``name`` and ``synthetic``
    its origin's (issue 13, tests/test_forge132.py: an entry forged with its checksum re-computed is a miss, the
    row made again). Raises nothing."""
    extra = row.keys() - _ROW_TYPES.keys()
    if extra - {"unknown_type_tensors"} or not _ROW_TYPES.keys() <= row.keys():
        return False
    if extra and not (type(row["unknown_type_tensors"]) is int and row["unknown_type_tensors"] > 0):
        return False
    if not all(type(row[key]) in types for key, types in _ROW_TYPES.items()):
        return False
    origin = row["origin"]
    return row["name"] == name and row["synthetic"] is bool(origin and origin.startswith("Synthetic"))


def with_origin(root: Root, name: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (a :func:`listing_row`) with ``origin``, the entry's ``entry.origin`` text (:func:`checkpoint_origin`;
    ``None`` for a GGUF file, no entry), and ``synthetic``: whether that text says the header was built by ``passprice
    synth`` from a published configuration (it starts ``Synthetic``, as synth writes it and
    :attr:`passprice.checkpointcite.CheckpointCited.synthetic` reads it), not read from a GGUF file (walkthrough 39:
    ``checkpoints`` did not say which). Raises nothing."""
    return _origin_row(row, checkpoint_origin(root, name))


def _origin_row(row: dict[str, Any], origin: str | None) -> dict[str, Any]:
    """``row`` with ``origin`` and ``synthetic`` as :func:`with_origin` gives them. Raises nothing."""
    return {**row, "origin": origin, "synthetic": bool(origin and origin.startswith("Synthetic"))}


def _bytes_origin(root: Root, data: bytes) -> str | None:
    """The ``entry.origin`` of the entry whose bytes are ``data``, as :func:`checkpoint_label` reads it from the file
    (its ``[entry]`` table's lines, else the whole document; ``""`` for none, ``None`` for bytes that do not read).
    Raises nothing."""
    try:
        table = _entry_table(data.decode("utf-8"))
        return str(table.get("origin", "")) if table is not None else entry_origin(root, data, "origin")
    except (UnicodeDecodeError, ValueError):  # tomllib.TOMLDecodeError is a ValueError
        return None


def write_entry(path: str | os.PathLike[str], text: str, force: bool = False) -> None:
    """Write the entry ``text`` to ``path`` atomically, creating the folder, the registry's own
    ``registry/checkpoints`` (:func:`passprice.files.write_atomically`).

    Raises :class:`InputError` when ``path`` exists and not ``force``, is a link in a registry to a file outside it
    (:func:`passprice.schema.require_link_inside`: the entry would not read back), ``text`` is past what an entry may
    hold (:func:`passprice.schema.kind_cap`: it would not read back either), or the folder cannot be written.
    """
    from passprice.schema import kind_cap, require_entry_shape, require_link_inside

    require_link_inside(Path(path))
    data = text.encode("utf-8", "surrogateescape")
    if (size := len(data)) > (cap := kind_cap("checkpoint")):  # it would not read back (attack round 57)
        raise InputError(f"{path}: the entry would hold {size:,} bytes, past the {cap:,} a checkpoint entry may hold "
                         "(it would not read back): nothing written")
    try:
        require_entry_shape(path, data)  # nor would this (attack round 58)
    except InputError as e:
        raise InputError(f"{e} (it would not read back): nothing written") from None
    require_no_lookalike(Path(path))
    make_folder(Path(path).parent)
    write_atomically(Path(path), text, force)


def _table_key(header: GGUFHeader) -> tuple[Any, ...]:
    # What two headers of one content surely share, cheap to compare: architecture and tensor table (a content digest
    # is computed only among headers alike in it: the shipped entries' digests are 1 MB of JSON to hash)
    return (header.architecture, tuple((t.name, t.type_id, tuple(t.dims)) for t in header.tensors))


def same_content(headers: Mapping[str, GGUFHeader]) -> list[list[str]]:
    """The groups (two or more names each, in the order of ``headers``) of ``headers`` holding one content: the same
    header sha256, or the same content digest (:func:`passprice.pins.checkpoint_digest`, what a lock pins: the
    metadata and tensor table the pricer reads), so that a lock pinning one reproduces from any of them. A digest is
    computed only for headers alike in architecture and tensor table. Raises nothing."""
    from passprice.pins import checkpoint_digest

    by_table: dict[tuple[Any, ...], list[str]] = {}
    for name, header in headers.items():
        by_table.setdefault(_table_key(header), []).append(name)
    groups: list[list[str]] = []
    for names in by_table.values():
        if len(names) < 2:
            continue
        by_content: dict[str, list[str]] = {}
        for name in names:
            by_content.setdefault(checkpoint_digest(headers[name]), []).append(name)
        groups += [same for same in by_content.values() if len(same) > 1]
    return groups


def entries_holding(root: Root, header: GGUFHeader, skip: str | None = None) -> list[str]:
    """The names of ``root``'s checkpoint entries (``skip`` aside) holding the content of ``header``
    (:func:`same_content`), by name; an entry that does not read is passed over (``check`` names it). What ``import``
    and ``synth --import`` warn of (walkthrough 39: the same header imported under a second name said nothing).
    Raises nothing."""
    try:
        names = [name for name in root.scan(root.checkpoints) if name != skip]
    except InputError:
        return []
    headers: dict[str, GGUFHeader] = {}
    for name in names:
        try:
            headers[name] = load_checkpoint(root, name)
        except (InputError, OSError):
            continue
    key = _table_key(header)
    alike = {name: h for name, h in headers.items() if _table_key(h) == key}
    if not alike:
        return []
    new = "\0new"  # no entry name holds a NUL
    groups = same_content({new: header, **alike})
    return sorted(name for group in groups if new in group for name in group if name != new)


def duplicate_lines(root: Root, headers: Mapping[str, GGUFHeader]) -> list[str]:
    """``check``'s warning lines for the entries among ``headers`` (entry name → header) that hold one content
    (:func:`same_content`): ``registry/checkpoints/A.toml, registry/checkpoints/B.toml: one header content
    (sha256:… ) under 2 names …``. A warning, not a problem: two names may be wanted (a lock pinning it reproduces
    from either), but more often one is a copy imported twice. Raises nothing."""
    from passprice.pins import checkpoint_digest
    from passprice.registry import named_in

    lines = []
    for group in same_content(headers):
        files = ", ".join(named_in(root, root.checkpoints / f"{name}.toml") for name in group)
        lines.append(f"{files}: one header content ({checkpoint_digest(headers[group[0]])[:19]}…) under "
                     f"{len(group)} names: the same checkpoint registered twice; remove one unless both names are "
                     "wanted (a lock finds the content it pinned under either)")
    return lines
