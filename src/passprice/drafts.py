"""How often drafted tokens are accepted is a figure like any other: cited, with a provenance, or not used.

A drafting method (``facts/drafts/NAME.toml``, ``schema/draft.schema.json``) holds ``acceptance.1 … acceptance.K``:
the chance draft *i* is accepted given every draft before it was (the seed's ``Draft::acceptance``). A lock pins them
as ``draft.acceptance.1`` …
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.errors import InputError
from passprice.facts import Fact
from passprice.files import is_there
from passprice.registry import Root, against_root, entry_name, not_found, outside, stays_in


@attrs.frozen
class DraftMethod:
    """A drafting method: its registry ``name``, its ``title``, and ``acceptance`` facts in draft order (shares in
    [0, 1]; ``acceptance[i]`` is the chance draft ``i + 1`` is accepted given every draft before it was);
    ``checkpoints``, the registry checkpoints its figures apply to (empty: not declared, any)."""

    name: str
    title: str
    acceptance: tuple[Fact, ...]
    kind: str | None = None
    checkpoints: tuple[str, ...] = ()
    #: The method's ``note`` (``None``: it has none); a lock pins it with the title (slip round 44).
    note: str | None = None

    def facts(self) -> dict[str, Fact]:
        """The method's facts by their path in its file: ``acceptance.1`` …"""
        return {f"acceptance.{i}": f for i, f in enumerate(self.acceptance, start=1)}

    def first(self, tokens: int) -> tuple[Fact, ...]:
        """The acceptance facts of the first ``tokens`` drafts (all there are when the method has fewer; the
        pricer then refuses the draft as ``BadDraft``)."""
        return self.acceptance[:tokens]


def method_from_document(name: str, document: Mapping[str, Any], source: str) -> DraftMethod:
    """The method a validated ``draft`` document describes. Raises :class:`InputError` when the acceptance figures
    are not numbered 1…K without a gap."""
    table = document["acceptance"]
    numbers = sorted(int(k) for k in table)
    if numbers != list(range(1, len(numbers) + 1)):
        raise InputError(
            f"{source}: acceptance: figures must be numbered 1..{len(numbers)} without gaps, got {numbers}"
        )
    facts = tuple(Fact.from_entry(table[str(i)], f"{source}: acceptance.{i}") for i in numbers)
    meta = document["method"]
    return DraftMethod(name, str(meta.get("name", name)), facts, meta.get("kind"), tuple(meta.get("checkpoints", ())),
                       meta.get("note"))


def all_figures(method: DraftMethod, data: bytes) -> bool:
    """Whether the drafting method ``method`` a cache entry served for the draft file of bytes ``data`` has all
    its figures: no line of the file starts a figure past its last (figures are numbered 1…K without a gap,
    :func:`method_from_document`): its table (``[acceptance.N]``), a dotted key (``acceptance.N.value = …``,
    ``acceptance.N = {…}``) or its key in ``[acceptance]`` (``N = {…}``), quoted or not. A tuple of free length one
    short is right-shaped, so the class's writer rule (:mod:`passprice.entryshape`) passed a forged entry of 2
    figures where the file has 3 (``check`` then found its locks' pinned ``acceptance.3`` gone,
    tests/test_forge110.py); this is a ``bytes.find`` of the number and a look at the line of each place it is found
    (a regex compiled each process cost a drafting price 0.23 % of its instructions). A file writing its figures as
    one inline table (``acceptance = {1 = {…}, …}``) is not looked into; a line of a multi-line string that reads as
    such a key makes the entry a miss each run (built again). Raises nothing."""
    word = str(len(method.acceptance) + 1).encode("ascii")
    at = data.find(word)
    while at >= 0:
        end = at + len(word)
        start = data.rfind(b"\n", 0, at) + 1
        lead = data[start:at].lstrip(b" \t[").translate(None, b"\"' \t")
        rest = data[end:end + 64].lstrip(b"\"'").lstrip(b" \t")[:1]
        if lead in (b"", b"acceptance.") and rest in (b".", b"=", b"]"):
            return False
        at = data.find(word, end)
    return True


def draft_path(root: Root, ref: str) -> Path:
    """The file of the drafting method ``ref`` (a registry name or a ``.toml`` path). Raises :class:`InputError`
    listing the registered methods when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    beneath = against_root(root, ref, "drafting method")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    if ("/" in ref or os.sep in ref) and not stays_in(root.drafts, ref):  # ../../other/a40: a file of another folder
        raise outside("drafting method", ref, root.drafts, root.names(root.drafts), root)
    path = root.drafts / f"{ref}.toml"
    if not is_there(path):
        raise not_found("drafting method", ref, root.drafts, root.names(root.drafts), root)
    return path


def load_draft_method(root: Root, ref: str) -> DraftMethod:
    """The drafting method ``ref`` in ``root``, validated against ``schema/draft.schema.json``, every source its
    figures cite registered in ``root``'s ``sources/``.

    An unchanged file is neither parsed nor structured again: its object is kept by :mod:`passprice.cache`, as a
    card's is (structuring its facts imports cattrs and builds its converter: about 30 ms of a sweep's CPU time).

    Raises :class:`InputError` or :class:`passprice.errors.SchemaError`."""
    from passprice import cache
    from passprice.sources import require_sources

    path = draft_path(root, ref)
    raw = schema.read_bytes(path, "draft")
    schema.require_size(path, "draft", len(raw))  # a kept object answers for a file under the cap only (issue 13)
    schema.require_shape(path, "draft", raw)  # its separators and dots too (tests/test_bound111.py)

    def build() -> DraftMethod:
        document = schema.load(path, "draft", root.schema, data=raw)
        return method_from_document(entry_name(path), document, str(path))

    source = str(path).encode("utf-8", "surrogateescape")
    method = cache.built("draft", root.schema / "draft.schema.json", source + b"\0" + raw, build, DraftMethod,
                         holds=lambda served: all_figures(served, raw))
    require_sources(root, method.facts(), str(path))
    return method
