"""Where a price's audit cites a document, it shows the caveat its source record carries.

A source record (``sources/ID.toml``) may hold a ``note``: what is not known of the document or how far to trust it
("a separate document whose origin is not established: who measured it and when is unknown"). The audit's citations
show each document's title, address and how it was read (:mod:`passprice.audit`); :func:`notes_lines` and
:func:`notes_markdown` add the notes of the documents cited, and :func:`with_notes` the ``note`` of each in the
audit's ``--json`` ``sources``. Walkthrough 25: the MI300X's measured stream shares rest on a fork of unknown origin,
and no output said so (the note was in the record file only). Nothing here prices: outside the pricing digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passprice.sources import Source


def _noted(sources: Mapping[str, Source], cited: Iterable[str]) -> list[tuple[str, str]]:
    out = []
    for sid in dict.fromkeys(cited):
        record = sources.get(sid)
        if record is not None and record.note:
            out.append((sid, record.note))
    return out


def notes_lines(sources: Mapping[str, Source], cited: Iterable[str]) -> list[str]:
    """The audit's section for people: ``notes of the cited documents:`` then ``  ID: NOTE`` for each source of
    ``cited`` (ids, in the order cited) whose record has a note; no lines when none has. Text through
    :func:`passprice.tables.printable`."""
    from passprice.tables import printable

    noted = _noted(sources, cited)
    if not noted:
        return []
    return ["notes of the cited documents (their source records' caveats):",
            *(f"  {printable(sid)}: {printable(note)}" for sid, note in noted)]


def notes_markdown(sources: Mapping[str, Source], cited: Iterable[str]) -> list[str]:
    """:func:`notes_lines` as a pull-request comment's lines."""
    from passprice.tables import markdown_code, markdown_text

    noted = _noted(sources, cited)
    if not noted:
        return []
    return ["Notes of the cited documents:",
            *(f"- {markdown_code(sid)}: {markdown_text(note)}" for sid, note in noted)]


def with_notes(documents: Mapping[str, Any], sources: Mapping[str, Source]) -> dict[str, Any]:
    """The audit's ``--json`` ``sources`` object (id → ``{"title", …, "read"}``) with each record's ``note`` added
    (``null`` when it has none)."""
    return {sid: {**entry, "note": sources[sid].note if sid in sources else None} for sid, entry in documents.items()}
