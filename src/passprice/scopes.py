"""A record that says which checkpoints its figures apply to is held to it: pricing another checkpoint with it is
refused by name, never priced on figures measured or estimated for a different model.

A drafting method's ``[method] checkpoints`` lists the registry checkpoints its acceptance figures hold for (an MTP
head's acceptance belongs to the model it was trained with). :func:`require_in_scope` is the one check, for any
record that declares such a list: the checkpoint priced must be one of them, by registry name, by the same GGUF
header (a ``.gguf`` path whose header sha256 is a listed entry's), or by the same model: the same metadata and
tensor table apart from the keys that only name a file (:func:`naming`), so a user's own copy of a listed model
(``general.name`` the file's name, as ``passprice synth -o`` writes it) is in scope. A checkpoint refused is told
what differs from the first listed entry (a metadata key, a tensor's type or shape).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any

from passprice.files import is_there
from passprice.gguf_records import GGUFHeader
from passprice.registry import Root
from passprice.serving import ServingRefusal


class OutOfScope(ServingRefusal):
    """A record (``kind`` and ``record``, declared in ``file``) applies to the checkpoints ``applies_to`` only, and
    the serving prices ``checkpoint``, which is none of them."""

    name = "OutOfScope"

    def __init__(
        self, kind: str, record: str, file: str, checkpoint: str, applies_to: Sequence[str], differs: str = "",
        named: str | None = None,
    ) -> None:
        self.kind = kind
        self.record = record
        self.file = file
        self.checkpoint = checkpoint
        self.applies_to = tuple(applies_to)
        listed = scope_said(self.applies_to)
        # ``named``: ``file`` as text names it (the built-in registry's file so named, walk138: outside a registry
        # the line read a bare facts/routing/… path, which the README says is named "the built-in registry's …");
        # ``--json``'s ``file`` stays the path relative to the registry
        super().__init__(
            f"{kind} {record!r} applies to checkpoint{'s' if len(self.applies_to) != 1 else ''} {listed} only "
            f"({named or file}: checkpoints), not {checkpoint!r}{differs}: its figures were not established for that "
            f"checkpoint; use a {kind} whose checkpoints list {checkpoint!r}, or add it to that list once the figures "
            "are shown to hold for it"
        )

    def fields(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "record": self.record,
            "file": self.file,
            "checkpoint": self.checkpoint,
            "applies_to": list(self.applies_to),
        }


#: How many checkpoints of a record's scope a line names one by one (:func:`scope_said`); the rest are counted.
SCOPE_SAID = 5
#: The most characters of one checkpoint name a line shows (:func:`scope_said`); a longer one is cut.
SCOPE_NAME_SAID = 100


def scope_said(checkpoints: Sequence[str]) -> str:
    """A record's ``checkpoints`` scope as a line names it: the first :data:`SCOPE_SAID`, each cut past
    :data:`SCOPE_NAME_SAID` characters, the rest counted (``a, b, c, d, e and 995 more``). A routing record
    scoped to 1,001 checkpoints of 206 characters each (212 KB, under a routing file's cap) made the ``Routed``
    refusal naming it one line of 208,423 characters, as the ``OutOfScope`` refusal and a review's line of an added
    record were (tests/test_attack187.py); ``--json`` keeps every name (``applies_to``). Raises nothing."""
    shown = [name if len(name) <= SCOPE_NAME_SAID else f"{name[:SCOPE_NAME_SAID - 1]}…"
             for name in checkpoints[:SCOPE_SAID]]
    rest = len(checkpoints) - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest > 0 else "")


def require_drafter(method: str, kind: str | None, checkpoint: str) -> None:
    """Raise :class:`~passprice.serving.NoDrafter` for a drafting method of kind ``draft-model``: a separate draft
    model's weights and passes are in no header passprice reads (a method drafting with the checkpoint's own MTP
    blocks is held to the header when the pass is shaped, :func:`~passprice.serving.pass_shape`)."""
    from passprice.serving import NoDrafter

    if kind == "draft-model":
        why = "it drafts with a separate draft model, whose weights and passes are not in this checkpoint's header"
        raise NoDrafter(method, checkpoint, why)


@functools.cache
def naming() -> re.Pattern[str]:
    """Metadata keys that name or describe a file, not the model a price reads: ``general.*`` but the architecture
    and the alignment (``general.name`` is the output file's name in ``passprice synth -o FILE``, the entry's name in
    ``synth --import``: the shipped Qwen3-30B-A3B entry and a user's own copy of it differed in that key alone,
    leftovers round 20). Compiled when first used (afresh101: a price of a registered serving never asks)."""
    return re.compile(r"general\.(?!architecture$|alignment$).*")


def model_content(header: GGUFHeader) -> dict[str, Any]:
    """:func:`passprice.pins.checkpoint_content` of ``header`` without the :func:`naming` keys: what makes two
    checkpoints the same model for a scope (the lock's content digest still covers every key). Kept by the header
    object (:data:`_MODELS`): ``validate`` and ``calibrate`` hold each run to its record's scope, and 200 runs refused
    by a scope built it 400 times (2.1 ms a run, against 0.74 ms before the scope compared content)."""
    kept = _MODELS.get(id(header))
    if kept is not None and kept[0] is header:
        return kept[1]
    from passprice.gguf_records import LongArray
    from passprice.pins import checkpoint_content

    content = checkpoint_content(header)
    content["metadata"] = {k: v for k, v in content["metadata"].items() if not naming().fullmatch(k)}
    # Each long array's element digest where the header knows it (a vocabulary's token strings): slip round 36, a copy
    # re-tokenized with a vocabulary of the same size matched as the same model (its tokens only counted).
    long = {k: v for k, v in header.metadata.items() if isinstance(v, LongArray) and not naming().fullmatch(k)}
    content["digests"] = {k: v.sha256 for k, v in long.items() if v.sha256 is not None}
    content["long"] = frozenset(long)  # every long array, its digest known or not (:func:`_unchecked`)
    if len(_MODELS) >= 64:
        _MODELS.clear()
    _MODELS[id(header)] = (header, content)
    return content


#: :func:`model_content` of the headers lately compared, by identity (the header kept beside, and checked).
_MODELS: dict[int, tuple[GGUFHeader, dict[str, Any]]] = {}


def _listed(root: Root, declared: Sequence[str]) -> Iterator[tuple[str, GGUFHeader]]:
    """The ``declared`` registry entries that read, with their headers, in order."""
    from passprice.checkpoints import load_checkpoint
    from passprice.errors import InputError

    for name in declared:
        if not is_there(root.checkpoints / f"{name}.toml"):
            continue
        try:
            yield name, load_checkpoint(root, name)
        except InputError:
            continue  # a listed entry that does not read names no header this one can be


def in_scope(root: Root, declared: Sequence[str], checkpoint: str, header: GGUFHeader) -> bool:
    """Whether ``checkpoint`` (a registry name or a ``.gguf`` path, read as ``header``) is one of the ``declared``
    registry checkpoints: by name, by the header sha256 of a declared entry, or by its :func:`model_content`. An
    empty list declares no scope."""
    if not declared or checkpoint in declared:
        return True
    content = None
    for _, listed in _listed(root, declared):
        if listed.sha256 == header.sha256:
            return True
        content = model_content(header) if content is None else content
        if same_model(model_content(listed), content):
            return True
    return False


def same_model(theirs: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Whether two :func:`model_content` are one model: the same metadata and tensor table, and the same elements of
    each long array, compared by their digests. One rule for every entry: a long array whose element digest either
    side does not know (an entry imported before digests were recorded, or one whose digest was removed) cannot be
    compared, and the two are not shown to be one model (:func:`_unchecked`; :func:`differences` says so). Until
    session 24 such an array was left out of the comparison: an entry without digests took a copy re-tokenized with
    a vocabulary of the same size as its model, one with digests refused it."""
    return (theirs["metadata"] == ours["metadata"] and theirs["tensors"] == ours["tensors"]
            and not _digests_differ(theirs, ours) and not _unchecked(theirs, ours))


def _digests_differ(theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """The long arrays whose element digests both contents know and differ, by key, sorted."""
    a, b = theirs.get("digests", {}), ours.get("digests", {})
    return sorted(k for k in a.keys() & b.keys() if a[k] != b[k])


def _unchecked(theirs: dict[str, Any], ours: dict[str, Any]) -> list[tuple[str, bool]]:
    """The long arrays both contents hold whose element digest one of them does not know, by key, sorted, each with
    whether ``theirs`` (the listed entry) is the one that does not."""
    a, b = theirs.get("digests", {}), ours.get("digests", {})
    both = theirs.get("long", frozenset()) & ours.get("long", frozenset())
    return sorted((k, k not in a) for k in both if k not in a or k not in b)


def differences(root: Root, declared: Sequence[str], header: GGUFHeader) -> str:
    """What ``header`` differs in from the first ``declared`` entry that reads, for a refusal: ``" (its header is
    not qwen3-30b-a3b-q4_k_m's: 2 metadata keys differ, first qwen3moe.context_length; 49 tensors by name, type or
    dims, first blk.0.attn_v.weight)"``; empty when no listed entry reads, or the first that does is of another
    architecture (another kind of model: the refusal says enough). Raises nothing."""
    for name, listed in _listed(root, declared):
        if listed.architecture != header.architecture:
            return ""  # another kind of model: nothing in it to compare
        theirs, ours = model_content(listed), model_content(header)
        keys = sorted(k for k in {*theirs["metadata"], *ours["metadata"]}
                      if theirs["metadata"].get(k) != ours["metadata"].get(k))
        keys += [k for k in _digests_differ(theirs, ours) if k not in keys]
        tensors = [b[0] for a, b in zip(theirs["tensors"], ours["tensors"], strict=False) if a != b]
        counts = len(theirs["tensors"]), len(ours["tensors"])
        said = []
        if keys:
            elements = " (its elements)" if keys[0] in _digests_differ(theirs, ours) else ""
            said.append(f"{len(keys)} metadata key{'s' if len(keys) != 1 else ''} differ{'' if len(keys) != 1 else 's'}"
                        f", first {keys[0]}{elements}")
        if tensors:
            said.append(f"{len(tensors)} tensor{'s' if len(tensors) != 1 else ''} by name, type or dims, first "
                        f"{tensors[0]}")
        if counts[0] != counts[1]:
            said.append(f"{counts[1]} tensors, not {counts[0]}")
        if said:
            return f" (its header is not {name}'s: {'; '.join(said)})"
        unchecked = _unchecked(theirs, ours)
        if unchecked:
            key, listed_lacks = unchecked[0]
            whose = f"the entry {name}" if listed_lacks else "its entry"
            more = f" and {len(unchecked) - 1} more" if len(unchecked) > 1 else ""
            return (f" (its header cannot be compared with {name}'s: {whose} records no digest of the elements of "
                    f"{key}{more} (imported before element digests were recorded, or the digest removed): re-import "
                    f"it with passprice import)")
        return ""
    return ""


def require_in_scope(
    root: Root, kind: str, record: str, file: str, declared: Sequence[str], checkpoint: str, header: GGUFHeader
) -> None:
    """Raise :class:`OutOfScope` when ``record`` (a ``kind`` declared in ``file``, a path relative to ``root``) lists
    the checkpoints it applies to and ``checkpoint`` (read as ``header``) is not among them (:func:`in_scope`); its
    text names the file as :func:`passprice.registry.named_in` does."""
    if not in_scope(root, declared, checkpoint, header):
        from passprice.registry import named_in

        raise OutOfScope(kind, record, file, checkpoint, declared, differences(root, declared, header),
                         named_in(root, root.path / file))
