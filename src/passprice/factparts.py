"""A fact's change is named part by part, in the same words wherever it is said: its value, unit, provenance,
citation, note and derivation, each that differs (``fact set``'s line, the review's change column and the drift lines
of ``reproduce``, ``price --lock`` and ``check --frozen`` all read :func:`change_said`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from passprice.facts import Fact

#: The parts of a fact a change names, in the order it names them.
PARTS = ("value", "unit", "provenance", "citation", "note", "derivation")


def changed_parts(old: Fact, new: Fact) -> tuple[tuple[str, str], ...]:
    """Each part of :data:`PARTS` that differs from ``old`` to ``new``, with how: ``(part, "changed")``, or for a
    note or derivation one side lacks ``(part, "added")`` / ``(part, "removed")``. ``value`` compares the figure in
    base units; ``citation`` the source, locator and free-text citation together. Empty when every part reads
    alike (a fact whose amount alone is written another way). A derivation compares by formula, digits and inputs
    taken by name (:func:`derivation_key`): the order its inputs are written in (a lock writes them sorted) is no
    change. Raises nothing."""
    out: list[tuple[str, str]] = []
    pairs = (
        ("value", old.value, new.value),
        ("unit", old.unit, new.unit),
        ("provenance", old.provenance, new.provenance),
        ("citation", (old.source, old.locator, old.cite), (new.source, new.locator, new.cite)),
        ("note", old.note, new.note),
        ("derivation", derivation_key(old.derivation), derivation_key(new.derivation)),
    )
    for part, was, now in pairs:
        if was == now:
            continue
        how = "added" if was is None else "removed" if now is None else "changed"
        out.append((part, how))
    return tuple(out)


def derivation_key(derivation: Any) -> Any:
    """A derivation as :func:`changed_parts` compares it: its formula, digits and inputs by name, not in the order
    written (``None`` for none). Raises nothing."""
    from passprice.derivations import Derivation

    if isinstance(derivation, Derivation):
        return (derivation.formula, derivation.digits, tuple(sorted((i.name, repr(i)) for i in derivation.inputs)))
    return derivation


def change_said(old: Fact, new: Fact, leave: frozenset[str] = frozenset(),
                words: Mapping[str, str] | None = None) -> str:
    """The parts of ``old`` → ``new`` that changed (:func:`changed_parts`), in words: parts that changed share one
    verb (``citation, note changed``), a part added or removed has its own (``note removed``); ``leave`` names
    parts the caller's line already shows (left out), ``words`` what to say for a part instead (the review says a
    value's relative change, ``-3.996 %``, for ``value``; a drift line the digits a derivation's were given,
    ``derivation changed: digits none → 4``). ``""`` when nothing is left to say. Walkthrough 57: the review said
    ``note changed`` of a fact re-cited with a new note, which ``fact set`` had said was ``citation, note changed``;
    left52: a drift line said ``citation or note changed`` of either, or both. Raises nothing."""
    said: list[str] = []
    run: list[str] = []
    for part, how in changed_parts(old, new):
        if part in leave:
            continue
        text = (words or {}).get(part)
        if text is None and how == "changed":
            run.append(part)
            continue
        if run:
            said.append(f"{', '.join(run)} changed")
            run = []
        said.append(text if text is not None else f"{part} {how}")
    if run:
        said.append(f"{', '.join(run)} changed")
    return ", ".join(said)
