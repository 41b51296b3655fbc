"""A card is nothing but its cited facts: every figure the pricer reads off a card is a :class:`Fact` reached by the
path a lock names it by (``memory.bandwidth``, ``streams.rewrite`` …).

Ports the seed's ``Card``, ``Streams`` and ``HostLink`` (``serving.rs``) and the ``Tier`` it imports; the figures
live in ``facts/cards/NAME.toml``, validated by ``schema/card.schema.json``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.errors import InputError
from passprice.facts import Fact, Provenance, dimension
from passprice.files import is_there
from passprice.registry import Root, against_root, entry_name, not_found, outside, stays_in

#: Every path a card fact may have, with the dimension its unit must have, in the seed's ``Card::facts`` order.
CARD_PATHS: dict[str, str] = {
    "memory.capacity": "bytes",
    "memory.bandwidth": "bytes/s",
    "on_chip.capacity": "bytes",
    "on_chip.bandwidth": "bytes/s",
    "streams.read": "share",
    "streams.rewrite": "share",
    "streams.append": "share",
    "array": "MAC/s",
    "vector": "MAC/s",
    "scale": "cycle/s",
}
#: Optional float-matrix rates by format (tensor cores, matrix cores; issue 14): where a card has one, a float matrix
#: of that format rides it instead of the vector units (DESIGN.md, Tensor cores). ``tensor.f8`` is recorded where a
#: card has it; no GGML type maps to it yet.
TENSOR_PATHS: dict[str, str] = {
    "tensor.f16": "MAC/s",
    "tensor.bf16": "MAC/s",
    "tensor.f8": "MAC/s",
}
#: GGML type name → the tensor path whose rate a float matrix of that type rides.
TENSOR_FORMATS: dict[str, str] = {"F16": "tensor.f16", "BF16": "tensor.bf16"}
#: The paths of a card's host link, present only together.
HOST_PATHS: dict[str, str] = {
    "host.capacity": "bytes",
    "host.read": "bytes/s",
    "host.write": "bytes/s",
    "host.stream": "share",
}


@attrs.frozen
class Tier:
    """A memory: ``capacity`` in bytes and ``bandwidth`` in B/s, each a fact."""

    capacity: Fact
    bandwidth: Fact


@attrs.frozen
class Streams:
    """Shares (in (0, 1]) of the card memory's bandwidth its stream engines sustain (seed ``Streams``): ``read``
    on one long read (weights, embedding rows), ``rewrite`` on a memory read and written back in place (a recurrent
    state), ``append`` on a long read with rows appended (a KV cache, a conv ring, a log)."""

    read: Fact
    rewrite: Fact
    append: Fact


@attrs.frozen
class HostLink:
    """Host memory the card reads and writes over its link (seed ``HostLink``): ``capacity`` bytes pinned for the
    card, ``read`` and ``write`` B/s host→card and card→host (the two run at once), and ``stream``, the share of
    either direction the card's DMA sustains."""

    capacity: Fact
    read: Fact
    write: Fact
    stream: Fact


@attrs.frozen
class Card:
    """A card as a pass sees it (seed ``Card``).

    ``name`` is the card's registry name (its file's stem), ``title`` the name it is sold or drawn under.
    ``memory`` holds the weights and every sequence's caches and states; ``on_chip`` holds the batch's token-rows
    through a layer; ``array`` is integer multiply-adds/s (4-bit weight × 8-bit activation); ``vector`` f32
    multiply-adds/s; ``scale`` block-scale lane cycles/s; ``host`` the host link, if any; ``tensor`` the
    float-matrix rates it has (MAC/s, by path: ``tensor.f16``, ``tensor.bf16``, ``tensor.f8``; issue 14).
    """

    name: str
    title: str
    memory: Tier
    on_chip: Tier
    streams: Streams
    array: Fact
    vector: Fact
    scale: Fact
    host: HostLink | None = None
    hypothetical: bool = False
    tensor: Mapping[str, Fact] = attrs.field(factory=dict)

    def tensor_rate(self, ty: str) -> Fact | None:
        """The float-matrix rate (MAC/s) a matrix of GGML type ``ty`` (``F16``, ``BF16``) rides, or ``None`` when the
        card has none for it (the matrix then rides the vector units, the seed's ``is_float`` rule)."""
        path = TENSOR_FORMATS.get(ty)
        return self.tensor.get(path) if path is not None else None

    def capacity_basis(self) -> str:
        """What the card's ``memory.capacity`` figure is, by its provenance: ``datasheet`` (``published``: the
        figure the maker markets, decimal GB as printed), ``device`` (``measured``: what the device reports,
        nvidia-smi's MiB), else the provenance's name (``estimated``, ``assumed``, ``derived``). Issue 13's review:
        the two 80 GB H100s were listed 80 GB (SXM5, the product page's figure) and 85.52 GB (PCIe, nvidia-smi's
        81,559 MiB), a +7 % larger max-batch for the slower card, and only the facts' notes said why. Raises
        nothing."""
        provenance = self.memory.capacity.provenance
        return {Provenance.PUBLISHED: "datasheet", Provenance.MEASURED: "device"}.get(provenance, provenance.value)

    def capacity_said(self) -> str:
        """:meth:`capacity_basis` in words, with the source: ``the datasheet's marketed figure (published,
        nvidia-h100-product-page)``, ``what the device reports (measured, xiongjiedai-gpu-benchmarks)``, ``an
        assumed figure (ws1-design)``. Raises nothing."""
        fact = self.memory.capacity
        basis = self.capacity_basis()
        what = {"datasheet": "the datasheet's marketed figure", "device": "what the device reports"}.get(
            basis, f"an {basis} figure" if basis[:1] in "aeiou" else f"a {basis} figure")
        cited = f", {fact.source}" if fact.source else ""
        return f"{what} ({fact.provenance.value}{cited})"

    def weakest(self, include_host: bool = False) -> Provenance:
        """The weakest provenance of the card's own facts (those every price rests on), or of all its facts, host
        link included (a price rests on those only when sequences live in host memory)."""
        return max(f.provenance for p, f in self.facts().items() if include_host or p not in HOST_PATHS)

    def facts(self) -> dict[str, Fact]:
        """Every fact the card carries, by the path a lock names it by, in the seed's ``Card::facts`` order."""
        out = {
            "memory.capacity": self.memory.capacity,
            "memory.bandwidth": self.memory.bandwidth,
            "on_chip.capacity": self.on_chip.capacity,
            "on_chip.bandwidth": self.on_chip.bandwidth,
            "streams.read": self.streams.read,
            "streams.rewrite": self.streams.rewrite,
            "streams.append": self.streams.append,
            "array": self.array,
            "vector": self.vector,
            "scale": self.scale,
        }
        if self.host is not None:
            out.update(
                {
                    "host.capacity": self.host.capacity,
                    "host.read": self.host.read,
                    "host.write": self.host.write,
                    "host.stream": self.host.stream,
                }
            )
        out.update({p: self.tensor[p] for p in TENSOR_PATHS if p in self.tensor})
        return out


def shown_title(card: Card) -> str:
    """The card's title as a price, a best batch or a listing shows it: ``card.title``, with ``, hypothetical`` after
    it when the card is marked ``hypothetical = true`` and its title does not say so already (a real card's file
    marked hypothetical in a pull request then reads so wherever it is priced, not only in ``check`` and the review:
    session 25). The title says so only in the word itself: ``Nonhypothetical 4090`` or ``H200 (hypotheticals)``
    held the letters and was shown bare (attack round 47). A card not marked so whose title says it is shown with
    ``, not marked hypothetical`` after it (:func:`title_contradicts_mark`). Raises nothing."""
    if not card.hypothetical and says_hypothetical(card.title):
        # Its title says made-up while it is priced, locked and reviewed as a real card: `RTX 4090 (Hypothetical)`
        # read as a made-up card in every table (left26b). Shown as what it is priced as; check warns of it.
        return f"{card.title}, not marked hypothetical"
    return marked_title(card)


def marked_title(card: Card) -> str:
    """``card.title`` with ``, hypothetical`` after it when the card is marked ``hypothetical = true`` and its title
    does not say so already: what ``check`` compares two cards' titles by (a real card titled ``NVIDIA H200 SXM
    141GB, hypothetical`` reads as the H200 marked so: attack round 47), :func:`shown_title` without its ``, not
    marked hypothetical``, which would tell such a copy from the card it mimics. Raises nothing."""
    if card.hypothetical and not says_hypothetical(card.title):
        return f"{card.title}, hypothetical"
    return card.title


def title_contradicts_mark(card: Card) -> str | None:
    """What is wrong when ``card``'s title says ``hypothetical`` (:func:`says_hypothetical`) and the card is not
    marked ``hypothetical = true``: one line without the file's name (``check`` warns of it, the review asks it),
    else ``None``. Such a card is priced, locked (``hypothetical`` false) and reviewed as a real card (no question of
    its published figures, :func:`passprice.review.records.hypothetical_claims`) while its title tells every reader it
    is made up (left26b). Not an error: a card made real by removing the mark (a change the review asks, and a lock's
    drift) keeps the exit status that change has. Raises nothing."""
    if card.hypothetical or not says_hypothetical(card.title):
        return None
    return (f"card.name: {card.title!r} says hypothetical, but the card is not marked hypothetical = true: it is "
            "priced, locked and reviewed as a real card; mark it hypothetical, or retitle it")


def says_hypothetical(title: str) -> bool:
    """Whether the card title ``title`` says the card is hypothetical: the word ``hypothetical`` in it, in any case,
    not inside another word (``Nonhypothetical 4090`` does not), as a reader reads it (:func:`passprice.files.reads_as`,
    as :func:`passprice.check.title_key` compares titles, and a soft hyphen U+00AD, which does not print, left out): a
    full-width ``Ｈｙｐｏｔｈｅｔｉｃａｌ GPU``, ``Hypоthetical GPU`` with a Cyrillic ``о`` and ``Hypo\u00adthetical
    GPU`` read "Hypothetical GPU" and were neither warned of nor shown ``, not marked hypothetical`` (attack round
    48). Raises nothing."""
    import re

    from passprice.files import reads_as

    read = reads_as(title.replace("\u00ad", ""))
    return re.search(r"(?<![^\W_])hypothetical(?![^\W_])", read) is not None


def is_card_path(path: str) -> bool:
    """Whether ``path`` names a card fact: a required path, a host-link path or a float-matrix rate."""
    return path in CARD_PATHS or path in HOST_PATHS or path in TENSOR_PATHS


def card_from_facts(name: str, title: str, facts: Mapping[str, Fact], hypothetical: bool = False) -> Card:
    """The card whose facts are ``facts`` (path → fact); the host link when every ``host.*`` path is present, the
    float-matrix rates (``tensor.*``) that are.

    Raises :class:`InputError` naming a missing path, a partial host link, or a fact whose unit has the wrong
    dimension for its path (a ``GB`` where ``B/s`` belongs).
    """
    for path, fact in facts.items():
        want = CARD_PATHS.get(path) or HOST_PATHS.get(path) or TENSOR_PATHS.get(path)
        if want is None:
            raise InputError(f"card {name}: {path}: not a card fact path")
        if dimension(fact.unit) != want:
            raise InputError(f"card {name}: {path}: unit {fact.unit!r} is not a unit of {want}")
    missing = [p for p in CARD_PATHS if p not in facts]
    if missing:
        raise InputError(f"card {name}: missing facts {', '.join(missing)}")
    host_present = [p for p in HOST_PATHS if p in facts]
    if host_present and len(host_present) != len(HOST_PATHS):
        absent = [p for p in HOST_PATHS if p not in facts]
        raise InputError(f"card {name}: a host link needs all of host.*; missing {', '.join(absent)}")
    host = (
        HostLink(facts["host.capacity"], facts["host.read"], facts["host.write"], facts["host.stream"])
        if host_present
        else None
    )
    return Card(
        name=name,
        title=title,
        memory=Tier(facts["memory.capacity"], facts["memory.bandwidth"]),
        on_chip=Tier(facts["on_chip.capacity"], facts["on_chip.bandwidth"]),
        streams=Streams(facts["streams.read"], facts["streams.rewrite"], facts["streams.append"]),
        array=facts["array"],
        vector=facts["vector"],
        scale=facts["scale"],
        host=host,
        hypothetical=hypothetical,
        tensor={p: facts[p] for p in TENSOR_PATHS if p in facts},
    )


def facts_of_document(document: Mapping[str, object], source: str) -> dict[str, Fact]:
    """The facts of a validated card document, by path (``memory.capacity`` …), in file order."""
    out: dict[str, Fact] = {}
    for path in (*CARD_PATHS, *HOST_PATHS, *TENSOR_PATHS):
        node: object = document
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            out[path] = Fact.from_entry(node, f"{source}: {path}")
    return out


#: Letters that print as nothing (Hangul fillers, the braille blank): a title of them alone is blank.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def card_from_document(
    name: str, document: Mapping[str, object], source: str, facts: Mapping[str, Fact] | None = None
) -> Card:
    """The card a validated ``card`` document describes (``facts``: its :func:`facts_of_document`, when the caller
    has them). Raises :class:`InputError` as :func:`card_from_facts`, and for a blank title (white space or letters
    that print as nothing, :data:`_BLANK_LETTERS`)."""
    meta = document.get("card")
    meta = meta if isinstance(meta, Mapping) else {}
    title = str(meta.get("name", name))
    if all(ch.isspace() or ch in _BLANK_LETTERS for ch in title):
        # A title of spaces (or of a no-break, ideographic or Hangul filler) passed the schema's "not empty" and every
        # command, shown as nothing in `cards` and the review's tables (attack round 46).
        raise InputError(f"{source}: card.name: {title!r} is blank: give the card's title (it names the card in "
                         "every table)")
    hypothetical = bool(meta.get("hypothetical", False))
    if facts is None:
        facts = facts_of_document(document, source)  # its errors name the file already
    try:
        return card_from_facts(name, title, facts, hypothetical)
    except InputError as e:
        raise InputError.of(f"{source}: {line}" for line in e.lines) from None


def document_and_facts(
    path: Path, schema_folder: Path, data: bytes | None = None
) -> tuple[dict[str, Any], dict[str, Fact]]:
    """The validated document of the card file ``path`` (whose bytes are ``data`` when the caller read them) and its
    facts (:func:`facts_of_document`), by path.

    Inside a snapshot (:mod:`passprice.snapshot`) files of the same bytes, such as copies of one card under other
    names, are parsed, validated and structured once (:data:`PARSED` counts the times): neither the document nor a
    fact depends on the file's name, which only the error lines carry, and a failure is never kept, so each bad copy
    is read again and refused naming its own file. Raises :class:`InputError` or
    :class:`passprice.errors.SchemaError` as :func:`schema.load <passprice.schema.load>` and
    :func:`facts_of_document`."""
    from passprice import snapshot

    raw = schema.read_bytes(path, "card") if data is None else data

    def make() -> tuple[dict[str, Any], dict[str, Fact]]:
        global PARSED
        PARSED += 1
        document = schema.load(path, "card", schema_folder, data=raw)
        return document, facts_of_document(document, str(path))

    return snapshot.made(("card-parts", str(schema_folder), snapshot.fingerprint(raw)), make)


#: How many times :func:`document_and_facts` parsed and structured a card file in this process (what its tests count).
PARSED = 0


def card_path(root: Root, ref: str) -> Path:
    """The file of the card named ``ref`` (a registry name, or a path to a ``.toml`` file).

    Raises :class:`InputError` listing the registered cards when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    beneath = against_root(root, ref, "card")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    if ("/" in ref or os.sep in ref) and not stays_in(root.cards, ref):  # ../../other/a40: a file of another folder
        raise outside("card", ref, root.cards, root.names(root.cards), root)
    path = root.cards / f"{ref}.toml"
    if not is_there(path):
        raise not_found("card", ref, root.cards, root.names(root.cards), root)
    return path


def same_card(root: Root, a: str, b: str) -> bool:
    """Whether the card references ``a`` and ``b`` (registry names or paths to card files) name one file: equal
    text, or the same file once each is looked up (:func:`card_path`, compared with :func:`os.path.samefile`). A
    serving's card matched a swept card by file stem alone, so another folder's ``h200_sxm_141gb.toml`` (other facts)
    was taken for the registry's, and its rows for the locked serving's (tests/test_fix185.py). A reference that
    names no card is the same as none but its own text. Raises nothing."""
    if a == b:
        return True
    try:
        return os.path.samefile(card_path(root, a), card_path(root, b))
    except (InputError, OSError, ValueError):
        return False


def load_card(root: Root, ref: str) -> Card:
    """The card named ``ref`` in ``root`` (or at the path ``ref``), validated against ``schema/card.schema.json``,
    every source its facts cite registered in ``root``'s ``sources/`` and its record valid.

    Raises :class:`InputError` (unknown card, TOML syntax, unit dimension, a source that is not registered or whose
    record does not validate: :func:`passprice.sources.untraceable_sources`) or
    :class:`passprice.errors.SchemaError` (every schema problem of the file, with key paths). Inside a snapshot
    (:mod:`passprice.snapshot`) the card ``ref`` names is looked up and read once, whatever the number of servings
    naming it."""
    from passprice import snapshot

    return snapshot.made(("card", root, ref), lambda: _load_card(root, ref))


def _load_card(root: Root, ref: str) -> Card:
    from passprice import snapshot
    from passprice.sources import untraceable_sources

    path = card_path(root, ref)
    data = schema.read_bytes(path, "card")
    card = read_card(root, path, data)
    # The sources it cites are looked up in the registry on every read, as they may change without the card.
    source = str(path).encode("utf-8", "surrogateescape")
    # Inside a snapshot (passprice.snapshot: one read of the registry) the same card's sources are looked up once.
    # A card's facts are those of its bytes (and schema), so a copy of a card whose sources all traced cites the very
    # same records, traceable too: not looked up again for each of 2,000 copies (scale36). A problem is looked for
    # afresh, so its lines name each file.
    traced = ("card-sources-traced", str(root.sources), str(root.schema), data)
    if snapshot.kept(traced):
        return card
    missing = snapshot.made(
        ("card-sources", str(root.sources), source, data),
        lambda: untraceable_sources(root, card.facts(), str(path)),
    )
    if not missing:
        snapshot.made(traced, lambda: True)
    if missing:
        raise InputError.of(missing)
    return card


def read_card(root: Root, path: Path, data: bytes | None = None) -> Card:
    """The card in the file ``path`` (whose bytes are ``data`` when the caller read them), validated against
    ``root``'s card schema, its sources not looked up (:func:`load_card` does). An unchanged card file is neither
    parsed nor structured again: its object is kept by :mod:`passprice.cache`.

    Raises :class:`InputError` or :class:`passprice.errors.SchemaError` as :func:`load_card`."""
    from passprice import cache

    raw = schema.read_bytes(path, "card") if data is None else data
    name = entry_name(path)
    if "," in name:  # round 18: `compare --cards a,b` compared cards a and b, never the card "a,b"
        from passprice.files import shown

        raise InputError(
            f"{shown(path)}: the name {name} holds ',', which `--cards A,B` (compare, sweep) reads as two cards; "
            "rename the file"
        )

    def build() -> Card:
        document, facts = document_and_facts(path, root.schema, raw)
        return card_from_document(name, document, str(path), facts)

    schema.require_size(path, "card", len(raw))  # a kept object answers for a file under the cap only (issue 13)
    schema.require_shape(path, "card", raw)  # its separators and dots too (tests/test_bound111.py)
    source = str(path).encode("utf-8", "surrogateescape")
    # A registry (or a pull request) of thousands of card files: past the first few, one cache entry for the folder.
    return cache.built(
        "card", root.schema / "card.schema.json", source + b"\0" + raw, build, Card, batch=os.fspath(path.parent)
    )


def load_cards(root: Root) -> list[Card]:
    """Every card registered in ``root``, by name."""
    return [load_card(root, name) for name in root.names(root.cards)]
