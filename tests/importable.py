"""What ``passprice import`` asks of a synthetic header written to test something else (a value's round trip, an odd
file name, a shard's offsets, an array's digest): since walk45, import refuses any header ``check`` would fail
(:func:`passprice.decode.header_problems`, "metadata llama.embedding_length: missing (the width of a token-row)"),
and a header of no blocks passes once it names its architecture and a token-row's width. One place adds those keys,
so each test's header stays what it tests plus them.
"""

from __future__ import annotations

from gguf import GGUFValueType, GGUFWriter

from gguf_bytes import Meta

#: The token-row width (``{arch}.embedding_length``, elements) such a header states: any whole number ≥ 1 will do.
WIDTH = 8


def importable(writer: GGUFWriter) -> GGUFWriter:
    """``writer`` (a ``gguf.GGUFWriter``, which writes ``general.architecture`` itself) with its architecture's
    ``embedding_length`` added as :data:`WIDTH`; returned for chaining. Add no ``block_count`` beside it without
    ``blk.N`` tensors: a block holds tensors, and import refuses a header naming blocks none of its tensors fill.
    Raises what ``GGUFWriter.add_embedding_length`` raises (a key already added)."""
    writer.add_embedding_length(WIDTH)
    return writer


def importable_meta(arch: str = "llama") -> list[Meta]:
    """The two metadata entries (:class:`gguf_bytes.Meta`) a byte-written header needs to import: its
    ``general.architecture`` ``arch`` (a string, 8 + 20 + 4 + 8 + len(arch) bytes) and ``{arch}.embedding_length``
    :data:`WIDTH` (a uint32: 8 + len(arch) + 17 + 4 + 4 bytes, 38 for llama). Raises nothing."""
    return [
        Meta("general.architecture", GGUFValueType.STRING, arch),
        Meta(f"{arch}.embedding_length", GGUFValueType.UINT32, WIDTH),
    ]
