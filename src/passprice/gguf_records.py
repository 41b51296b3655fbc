"""The records a GGUF header is read into — :class:`GGUFHeader`, its :class:`TensorInfo` rows and :class:`Shard`
files, :class:`LongArray` and :class:`LongString` for values too long to keep — apart from the reader
(:mod:`passprice.gguf_header`, which re-exports every name here): a price whose checkpoint entry and header come from
the cache of built objects needs the records, not the reader, so it does not import the reader's ~1,100 lines, its
two attrs classes and its tables (issue 16, perf25: about 9 M instructions of a price run afresh; callgrind).
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from passprice import ggml
from passprice.ggml_types import VALUE_TYPES

#: Arrays with at most this many elements (counted through nested arrays) are kept as tuples; longer ones are kept
#: as :class:`LongArray` (element type and length) and skipped.
KEEP_ARRAY_LIMIT = 1024

#: Value type id → its name in a type descriptor (``uint32``, ``string``, ``array`` …).
VALUE_TYPE_NAMES: dict[int, str] = {type_id: name.lower() for type_id, name in VALUE_TYPES.items()}


def nonfinite_text(value: float) -> str | None:
    """A NaN or an infinity a header holds, as a checkpoint entry and ``--json`` write it: ``"nan"``, ``"inf"``,
    ``"-inf"`` (JSON has no such number, and the entry schema refuses TOML's own ``nan``/``inf`` as typos); ``None``
    for a finite float."""
    if value == value and value not in (float("inf"), float("-inf")):
        return None
    return "nan" if value != value else "inf" if value > 0 else "-inf"


@attrs.frozen
class LongArray:
    """A metadata array too long to keep (more than :data:`KEEP_ARRAY_LIMIT` elements: a tokenizer's vocabulary,
    merges or scores): its ``element_type`` descriptor (``string``, ``float32``, ``array[int32]``) and ``length``
    (elements of the outer array)."""

    element_type: str
    length: int
    #: The sha256 (hex) of the array's element bytes as the file holds them (a vocabulary's token strings), when the
    #: reader hashed them or an entry records it; ``None`` otherwise. Not part of equality, and not of a lock's
    #: checkpoint content (:func:`passprice.pins.checkpoint_content`): a scope compares it
    #: (:func:`passprice.scopes.model_content`), so a copy with another tokenizer of the same size is another model.
    sha256: str | None = attrs.field(default=None, eq=False)


@attrs.frozen
class LongString:
    """A metadata string too long to keep (more than :data:`KEEP_STRING_LIMIT` bytes, or more than the header's
    budget of kept text has left: an embedded ``tokenizer.huggingface.json``): its ``length`` in bytes."""

    length: int


#: A metadata value as kept: a scalar, a tuple for a short array (nested arrays as nested tuples), a
#: :class:`LongArray` for a long array, a :class:`LongString` for a long string.
MetaValue: TypeAlias = "bool | int | float | str | LongArray | LongString | tuple[MetaValue, ...]"


@attrs.frozen
class TensorInfo:
    """One row of the tensor-info table: ``name``; ``dims`` in GGUF order (``dims[0]`` is the fastest-varying,
    a row's length); ``type_id``, the GGML type id; ``offset``, bytes from the start of its shard's data section;
    ``shard``, the index of the shard file that holds it (0 for a single file)."""

    name: str
    dims: tuple[int, ...]
    type_id: int
    offset: int
    shard: int = 0

    @property
    def type_name(self) -> str:
        """The GGML type's name (``Q4_K``), or ``type#N`` for an id the ``gguf`` package does not know."""
        return ggml.type_name(self.type_id)

    def __reduce__(self) -> tuple[type[TensorInfo], tuple[str, tuple[int, ...], int, int, int]]:
        """Pickled as its constructor's arguments (issue 13, cold reads): attrs' ``__getstate__`` made a dict of each
        of a header's thousands of rows; a tuple halves what the cache of built objects spends pickling an entry's
        header and reading it back (``(TensorInfo, (name, dims, type_id, offset, shard))``; the cache's unpickler
        looks the class up as it looks up any of passprice's attrs classes)."""
        return (TensorInfo, (self.name, self.dims, self.type_id, self.offset, self.shard))


@attrs.frozen
class Shard:
    """One file of a checkpoint (the only one for an unsplit checkpoint): its ``file`` name (not part of equality:
    a renamed, truncated or compressed copy is the same shard), ``header_bytes`` (its header's length in bytes),
    ``data_offset`` (where its tensor data starts, in bytes), ``sha256`` (hex digest of its header bytes) and
    ``tensor_count``."""

    file: str = attrs.field(eq=False)
    header_bytes: int
    data_offset: int
    sha256: str
    tensor_count: int


def _tensor_index(tensors: tuple[TensorInfo, ...]) -> dict[str, TensorInfo]:
    return {t.name: t for t in tensors}


@attrs.frozen
class GGUFHeader:
    """A checkpoint's header: everything in the file but the weights.

    - ``version`` (2 or 3) and ``byte_order`` (``"little"`` or ``"big"``);
    - ``metadata``: key → value in file order (:data:`MetaValue`); ``value_types``: key → type descriptor
      (``uint32``, ``string``, ``array[string]``, ``array[array[int32]]``);
    - ``tensors``: the tensor-info table (every shard's, joined, in shard order);
    - ``header_bytes``: bytes of header (for a split checkpoint, all shards' together: the bytes ``sha256`` covers);
    - ``alignment``: ``general.alignment`` (default 32); ``data_offset``: where the (first shard's) tensor data
      starts, its header length rounded up to ``alignment``;
    - ``sha256``: hex sha256 of the header bytes (of every shard's header bytes, concatenated in order): the
      checkpoint's identity in locks;
    - ``shards``: one :class:`Shard` per file;
    - ``source``: where it was read from (a path or an entry); not part of equality.
    """

    version: int
    byte_order: str
    metadata: dict[str, MetaValue]
    value_types: dict[str, str]
    tensors: tuple[TensorInfo, ...]
    header_bytes: int
    alignment: int
    data_offset: int
    sha256: str
    shards: tuple[Shard, ...]
    source: str = attrs.field(default="", eq=False)
    _index: dict[str, TensorInfo] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_index", _tensor_index(self.tensors))

    @property
    def architecture(self) -> str | None:
        """``general.architecture`` (``qwen2``, ``gemma3`` …), or ``None`` when the header does not say."""
        arch = self.metadata.get("general.architecture")
        return arch if isinstance(arch, str) else None

    def meta(self, key: str, default: MetaValue | None = None) -> MetaValue | None:
        """``metadata[f"{architecture}.{key}"]`` if present (so ``block_count`` reads ``gemma3.block_count``, as
        DESIGN.md's lookup rule says, even beside a stray unprefixed key), else ``metadata[key]`` (full keys such
        as ``general.alignment``), else ``default``."""
        arch = self.architecture
        if arch is not None:
            prefixed = f"{arch}.{key}"
            if prefixed in self.metadata:
                return self.metadata[prefixed]
        return self.metadata.get(key, default)

    def meta_int(self, key: str) -> int | None:
        """:meth:`meta` of ``key`` when it is an integer scalar (not a bool); ``None`` when absent or not one."""
        value = self.meta(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def tensor(self, name: str) -> TensorInfo | None:
        """The tensor named ``name`` (``output.weight``), or ``None`` when the checkpoint has none."""
        return self._index.get(name)
