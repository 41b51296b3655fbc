"""A record's description names the rows its facts cite: text that still names a table row (``row '…'``) its
facts no longer cite, beside facts citing another row, describes what the record was, not what it is.

A locator names the row of a source's table it reads as ``row 'LABEL'`` (``table 'The real result — Qwen3 routes
near-uniform', row 'diverse (prose, code, math)', ~1k tokens``). A record re-cited to another row keeps its title and
its note, and the source record its ``read`` line, as they were written for the old row, and nothing that prices
reads them: walkthrough 49's routing record, re-cited from row 'narrow (single-domain Python)' to row 'diverse
(prose, code, math)', kept the title "measured skew (single-domain Python, ~8k tokens)" and its source's ``read``
"row 'narrow (single-domain Python)'". Two checks, both words only (never a number): a text quoting a row none of the
facts cites (``row 'narrow (single-domain Python)'``, :func:`uncited_rows`), and a text without quotes holding
words of a row no longer cited and none of the rows cited (:func:`old_row_words`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

#: A row a locator or a description names: ``row 'LABEL'`` (the label holds no ``'``).
ROW = re.compile(r"\brow '([^']+)'")
#: A word of a row's label: letters, digits, ``-`` and ``_``, holding a letter (``single-domain``, ``python``).
WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")
#: :data:`WORD` as a text spells it (either case).
SPELLED = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def rows(texts: Iterable[str | None]) -> tuple[str, ...]:
    """The row labels ``texts`` name (``row 'LABEL'``), in the order first named, each once."""
    return tuple(dict.fromkeys(m.group(1) for t in texts if t for m in ROW.finditer(t)))


def words(text: str) -> set[str]:
    """The words of ``text`` (lower case) of three characters or more holding a letter: what says which row."""
    return {w for w in WORD.findall(text.lower()) if len(w) >= 3 and any(c.isalpha() for c in w)}


def uncited_rows(text: str | None, cited: Iterable[str]) -> tuple[str, ...]:
    """The rows ``text`` names that are none of ``cited`` (the rows the facts' locators name), when the facts cite
    one; empty when they cite none (nothing to compare with) or ``text`` is ``None``."""
    cited = tuple(cited)
    if not text or not cited:
        return ()
    return tuple(r for r in rows([text]) if r not in cited)


def old_row_words(text: str | None, old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    """The words of ``text`` that belong to a row of ``old`` (rows no longer cited) and to none of ``new`` (the rows
    cited now), as ``text`` spells them, in its order, when ``text`` holds no word of any row of ``new`` (a text
    naming the new row too, ``Its other workload (diverse prose, code and math)``, describes both); empty
    otherwise."""
    new = tuple(new)
    if not text or not new:
        return ()
    said = words(text)
    fresh = label_words(new)
    if said & fresh:
        return ()
    gone = (label_words(tuple(old)) - fresh) & said
    return tuple(dict.fromkeys(w for w in SPELLED.findall(text) if w.lower() in gone))


@functools.lru_cache(maxsize=8)
def label_words(labels: tuple[str, ...]) -> frozenset[str]:
    """The words (:func:`words`) of every row label of ``labels``, taken apart once for the same labels: a review asks
    :func:`old_row_words` for each description of a record with the record's same rows (a card citing 17,524 rows a
    side, four descriptions: 140,196 labels taken apart, 2.2 s; attack66)."""
    return frozenset().union(*(words(r) for r in labels))


def read_note(read: str | None, locators: Iterable[str | None]) -> str | None:
    """What a source's ``read`` line quotes that its citing facts' ``locators`` do not: ``read names row 'narrow
    (single-domain Python)', which none of the facts above cites (they cite row 'diverse (prose, code, math)'): does
    it still say how the source was read?``; ``None`` when it quotes no row, or only rows cited, or the facts cite
    no row."""
    cited = rows(locators)
    stale = uncited_rows(read, cited)
    if not stale:
        return None
    return (f"read names {named(stale)}, which none of the facts above cites (they cite {named(cited)}): does it "
            "still say how the source was read?")


def title_note(what: str, title: str | None, old: Iterable[str], locators: Iterable[str | None]) -> str | None:
    """What ``title`` (``what``: ``its title``) still says of rows ``old`` (rows a source's ``read`` names that no
    fact cites, :func:`read_note`'s) while its facts' ``locators`` cite other rows: ``its title still says
    'single-domain', 'Python' (of row 'narrow (single-domain Python)'), while its facts cite row 'diverse (prose,
    code, math)': does it still describe the record?``; ``None`` when it says none of them or names a row cited."""
    old, new = tuple(old), rows(locators)
    said = old_row_words(title, old, new)
    if not said:
        return None
    return (f"{what} still says {', '.join(repr(w) for w in said)} (of {named(old)}), while its facts cite "
            f"{named(new)}: does it still describe the record?")


#: The most rows a line names; the rest are counted (``and 17,521 more rows``).
NAMED = 3


def named(labels: Iterable[str]) -> str:
    """``row 'narrow (single-domain Python)'``, each of ``labels`` so, joined by commas: the first :data:`NAMED`, the
    rest counted. A card whose facts cite 20,000 rows named every one in the review's line (538,082 characters;
    attack66)."""
    labels = tuple(labels)
    shown = ", ".join(f"row '{r}'" for r in labels[:NAMED])
    more = len(labels) - NAMED
    return shown if more <= 0 else f"{shown} and {more:,} more row{'s' if more > 1 else ''}"
