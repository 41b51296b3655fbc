"""A record that says which checkpoints its figures apply to is held to it: pricing another checkpoint with it is
refused by name, never priced on figures measured or estimated for a different model.

A drafting method's ``[method] checkpoints`` lists the registry checkpoints its acceptance figures hold for (an MTP
head's acceptance belongs to the model it was trained with). :func:`require_in_scope` is the one check, for any
record that declares such a list: the checkpoint priced must be one of them, by registry name or by the same GGUF
header (a ``.gguf`` path whose header sha256 is a listed entry's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passprice.files import is_there
from passprice.gguf_header import GGUFHeader
from passprice.registry import Root
from passprice.serving import ServingRefusal


class OutOfScope(ServingRefusal):
    """A record (``kind`` and ``record``, declared in ``file``) applies to the checkpoints ``applies_to`` only, and
    the serving prices ``checkpoint``, which is none of them."""

    name = "OutOfScope"

    def __init__(self, kind: str, record: str, file: str, checkpoint: str, applies_to: Sequence[str]) -> None:
        self.kind = kind
        self.record = record
        self.file = file
        self.checkpoint = checkpoint
        self.applies_to = tuple(applies_to)
        listed = ", ".join(self.applies_to)
        super().__init__(
            f"{kind} {record!r} applies to checkpoint{'s' if len(self.applies_to) != 1 else ''} {listed} only "
            f"({file}: checkpoints), not {checkpoint!r}: its figures were not established for that model; use a "
            f"{kind} whose checkpoints list {checkpoint!r}, or add it to that list once the figures are shown to "
            "hold for it"
        )

    def fields(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "record": self.record,
            "file": self.file,
            "checkpoint": self.checkpoint,
            "applies_to": list(self.applies_to),
        }


def require_drafter(method: str, kind: str | None, checkpoint: str) -> None:
    """Raise :class:`~passprice.serving.NoDrafter` for a drafting method of kind ``draft-model``: a separate draft
    model's weights and passes are in no header passprice reads (a method drafting with the checkpoint's own MTP
    blocks is held to the header when the pass is shaped, :func:`~passprice.serving.pass_shape`)."""
    from passprice.serving import NoDrafter

    if kind == "draft-model":
        why = "it drafts with a separate draft model, whose weights and passes are not in this checkpoint's header"
        raise NoDrafter(method, checkpoint, why)


def in_scope(root: Root, declared: Sequence[str], checkpoint: str, header: GGUFHeader) -> bool:
    """Whether ``checkpoint`` (a registry name or a ``.gguf`` path, read as ``header``) is one of the ``declared``
    registry checkpoints: by name, or by the header sha256 of a declared entry. An empty list declares no scope."""
    if not declared or checkpoint in declared:
        return True
    from passprice.checkpoints import load_checkpoint
    from passprice.errors import InputError

    for name in declared:
        if not is_there(root.checkpoints / f"{name}.toml"):
            continue
        try:
            if load_checkpoint(root, name).sha256 == header.sha256:
                return True
        except InputError:
            continue  # a listed entry that does not read names no header this one can be
    return False


def require_in_scope(
    root: Root, kind: str, record: str, file: str, declared: Sequence[str], checkpoint: str, header: GGUFHeader
) -> None:
    """Raise :class:`OutOfScope` when ``record`` (a ``kind`` declared in ``file``) lists the checkpoints it applies
    to and ``checkpoint`` (read as ``header``) is not among them (:func:`in_scope`)."""
    if not in_scope(root, declared, checkpoint, header):
        raise OutOfScope(kind, record, file, checkpoint, declared)
