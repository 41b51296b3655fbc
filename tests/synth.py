"""Tiny synthetic checkpoints and cards for tests: a :class:`GGUFHeader` built straight from a metadata dict and a
tensor list (no file, no parsing), and a :class:`Card` whose every fact has a chosen value and provenance.

Nothing here computes a price: tests write their expected numbers out by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from passprice import ggml
from passprice.cards import Card, HostLink, Streams, Tier
from passprice.facts import Fact, Provenance
from passprice.gguf_header import GGUFHeader, Shard, TensorInfo

#: Metadata keys written without the architecture prefix.
_UNPREFIXED = ("general.", "tokenizer.", "split.")

#: A tensor: (name, dims in GGUF order, GGML type name or raw type id).
TensorSpec = tuple[str, tuple[int, ...], "str | int"]


def header(meta: Mapping[str, Any], tensors: Iterable[TensorSpec], arch: str = "llama") -> GGUFHeader:
    """A header of architecture ``arch`` whose metadata is ``meta`` (keys like ``block_count`` get the
    ``{arch}.`` prefix, as a real file writes them) and whose tensor table is ``tensors``."""
    metadata: dict[str, Any] = {"general.architecture": arch}
    for key, value in meta.items():
        metadata[key if key.startswith(_UNPREFIXED) else f"{arch}.{key}"] = value
    infos = tuple(
        TensorInfo(name, tuple(dims), ty if isinstance(ty, int) else ggml.by_name(ty).id, 0)
        for name, dims, ty in tensors
    )
    return GGUFHeader(
        version=3,
        byte_order="little",
        metadata=metadata,
        value_types={k: "synthetic" for k in metadata},
        tensors=infos,
        header_bytes=0,
        alignment=32,
        data_offset=0,
        sha256="0" * 64,
        shards=(Shard("synthetic.gguf", 0, 0, "0" * 64, len(infos)),),
        source="synthetic",
    )


_UNITS = {
    "memory.capacity": "B",
    "memory.bandwidth": "B/s",
    "on_chip.capacity": "B",
    "on_chip.bandwidth": "B/s",
    "streams.read": "1",
    "streams.rewrite": "1",
    "streams.append": "1",
    "array": "MAC/s",
    "vector": "MAC/s",
    "scale": "cycle/s",
    "host.capacity": "B",
    "host.read": "B/s",
    "host.write": "B/s",
    "host.stream": "1",
}

#: Defaults: a roomy, fast card on which nothing binds hard; tests override what they need.
DEFAULTS: dict[str, float] = {
    "memory.capacity": 1e12,
    "memory.bandwidth": 1e12,
    "on_chip.capacity": 1e9,
    "on_chip.bandwidth": 1e13,
    "streams.read": 1.0,
    "streams.rewrite": 1.0,
    "streams.append": 1.0,
    "array": 1e15,
    "vector": 1e14,
    "scale": 1e13,
}
HOST_DEFAULTS: dict[str, float] = {
    "host.capacity": 1e12,
    "host.read": 5e10,
    "host.write": 5e10,
    "host.stream": 1.0,
}


def fact(value: float, unit: str = "1", provenance: Provenance = Provenance.PUBLISHED, cite: str = "test") -> Fact:
    """A fact of ``value`` (already in base units)."""
    return Fact(value=float(value), amount=value, unit=unit, provenance=provenance, cite=cite)


def card(
    name: str = "synthetic",
    host: bool = False,
    provenance: Mapping[str, Provenance] | None = None,
    **values: float,
) -> Card:
    """A card with every fact at :data:`DEFAULTS` (and :data:`HOST_DEFAULTS` when ``host``) except ``values``,
    given by path with ``_`` for ``.`` (``memory_capacity=…``, ``streams_read=…``, ``host_read=…``); each fact is
    ``published`` unless ``provenance`` names its path."""
    figures = dict(DEFAULTS)
    if host:
        figures.update(HOST_DEFAULTS)
    for key, value in values.items():
        path = "on_chip." + key[len("on_chip_") :] if key.startswith("on_chip_") else key.replace("_", ".", 1)
        if path not in _UNITS:
            raise KeyError(f"not a card fact path: {path}")
        if path.startswith("host.") and not host:
            raise KeyError(f"{path} on a card without host")
        figures[path] = value
    provenance = provenance or {}
    f = {p: fact(v, _UNITS[p], provenance.get(p, Provenance.PUBLISHED), cite=f"cite:{p}") for p, v in figures.items()}
    return Card(
        name=name,
        title=name,
        memory=Tier(f["memory.capacity"], f["memory.bandwidth"]),
        on_chip=Tier(f["on_chip.capacity"], f["on_chip.bandwidth"]),
        streams=Streams(f["streams.read"], f["streams.rewrite"], f["streams.append"]),
        array=f["array"],
        vector=f["vector"],
        scale=f["scale"],
        host=HostLink(f["host.capacity"], f["host.read"], f["host.write"], f["host.stream"]) if host else None,
    )
