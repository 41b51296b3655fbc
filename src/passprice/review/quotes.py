"""A fact a change adds or re-cites is asked of the place it cites, never taken on its word: the review reads that
place as ``audit --source`` reads it and says what a reviewer must check there. Its quoted locators are checked
against HEAD's stored excerpts (:func:`_quotes_checked`), the sources it newly cites named (:func:`_fresh_sources`)
and described (:func:`cited_sources`), an added fact asked whether its place states its figure, or another record's
citation copied (:func:`_ask_added`, :func:`copied_citations`), and a ratio shown beside the bandwidth it divides by
(:func:`_ratio_bases`). Each function returns the files given with the findings set, or lines by id; none fails the
review itself (:class:`~passprice.review.verdict.Diff` decides what fails).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from passprice.derivations import Derivation
from passprice.errors import InputError, escaped
from passprice.facts import Fact, Provenance
from passprice.review.changes import FactChange, FileChange, _n, _quoted_figures, _read, side_toml
from passprice.review.sides import Side, file_kind

if TYPE_CHECKING:

    from passprice.sources import Lookups, QuoteCheck, StoredText


#: The most sources a review describes as cited by the changed facts (:func:`cited_sources`); the rest counted.
MAX_CITED_SOURCES = 20


def cited_sources(head: Side, files: Sequence[FileChange], shown: Iterable[str] = ()) -> dict[str, str]:
    """Each source id a fact ``files`` add or change cites on ``head`` (its own ``source`` and each figure input's,
    :func:`passprice.sources.cited_ids`), in the order of the files and facts, by id: ``TITLE (BY, DATE), KIND, at
    WHERE; cited by CARD PATH, …`` (the first 3 citing facts, the rest counted). Left out: a source the change adds
    (described as added) and one in ``shown`` (its document changed: listed to verify), one HEAD does not register
    (the review's errors name it); the first :data:`MAX_CITED_SOURCES`, then ``"…"`` with the count of the rest.
    Walkthrough 30: a reviewer tracing a moved price to its documents read only a source id beside each changed
    fact (``gpu-container-handbook-routing-derisk: the definition of hot_frac_for_coverage …``): the document's
    title and address were in ``passprice sources`` and ``audit --source``, not in the review."""
    from passprice.sources import cited_ids, load_source

    skip = set(shown) | {f.name for f in files if f.kind == "source" and f.status == "added"}
    citing: dict[str, list[str]] = {}
    for f in files:
        if not f.holds_facts:
            continue
        for c in f.facts:
            if c.new is None:
                continue
            for _, source_id in cited_ids(c.path, c.new):
                if source_id in skip:
                    continue
                named = citing.setdefault(source_id, [])
                who = f"{f.shown_name} {c.path}"
                if who not in named:
                    named.append(who)
    out: dict[str, str] = {}
    for source_id, named in citing.items():
        if len(out) >= MAX_CITED_SOURCES:
            out["…"] = f"and {_n(len(citing) - MAX_CITED_SOURCES, 'more source')}: `passprice sources` lists each"
            break
        try:
            source = load_source(head.root, source_id)
        except InputError:
            continue
        more = f" and {len(named) - 3:,} more" if len(named) > 3 else ""
        out[source_id] = (f"{source.describe()}, {source.kind}, at {source.where()}; cited by "
                          f"{', '.join(named[:3])}{more}")
    return out


def _card_table(side: Side, path: str) -> dict[str, Any] | None:
    """The ``[card]`` table of the file ``path`` of ``side`` as ``tomllib`` reads the whole file, or ``None`` when
    there is no such file, it does not decode or parse, or its ``card`` is no table. Parsed once a snapshot for its
    bytes (:func:`~passprice.review.records.titles_contradicting` and
    :func:`~passprice.review.records.hypothetical_claims` each parsed every added card: 999 added cards, 2 parses each,
    a fifth of the review, session 32). Raises nothing."""
    from passprice import snapshot

    data = side.files.get(path)
    if data is None:
        return None

    def parse() -> tuple[dict[str, Any] | None]:
        try:
            card = side_toml(data, "card").get("card", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
            return (None,)
        return (card if isinstance(card, dict) else None,)

    return snapshot.made(("card-table", data), parse)[0]


def _ask_added(base: Side, head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each added fact's :attr:`passprice.review.changes.FactChange.asked` set
    (:func:`passprice.addedfacts.asked`, and :func:`passprice.addedfacts.moved` for one citing the place of a fact the
    change removes), from every file of ``head`` that holds facts and reads, and the source records ``head`` holds; what
    ``base`` recorded of each source an added estimate cites (:func:`_carried`). Only read when the change adds a
    fact."""
    added = [(f.path, c.path) for f in files for c in f.facts if c.old is None and c.new is not None]
    if not added:
        return files
    from passprice.addedfacts import asked

    held: dict[str, Mapping[str, Fact]] = {}
    for rel in sorted(head.files):
        kind, name = file_kind(rel)
        if kind in ("card", "draft", "routing", "stack"):
            read = _read(head, rel, kind, name)
            if read.facts is not None and not read.errors:
                held[rel] = read.facts
    registered = [file_kind(rel)[1] for rel in head.files if file_kind(rel)[0] == "source"]
    found = asked(held, registered, added, _quoted_figures, _carried(base, head))
    from passprice.addedfacts import another_cards, copied_words, moved

    cards = {rel: facts for rel, facts in held.items() if file_kind(rel)[0] == "card"}
    elsewhere = another_cards(cards, added)
    for key, ask in elsewhere.items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask
    # an added fact citing another card's place as its own (a plain copy: tests/test_fix166.py), asked once
    copied = copied_citations(cards, added)
    for key, other in copied.items():
        if key not in elsewhere:
            ask = copied_citation_ask(key[0], cards[key[0]][key[1]], other)
            found[key] = f"{found[key]}; {ask}" if key in found else ask
    # a copy's notes and [card] variant left as copied under figures it moved (issue 13)
    for key, ask in copied_words(cards, {rel: _card_table(head, rel) or {} for rel in cards}, added).items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask

    removed = [(f.path, c.path, c.old) for f in files for c in f.facts if c.old is not None and c.new is None]
    for key, ask in moved([(f.path, c.path, c.new) for f in files for c in f.facts if c.old is None
                           and c.new is not None], removed).items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask
    if not found:
        return files

    def copy_of(key: tuple[str, str]) -> str | None:
        other = copied.get(key)
        return f"{_card_named(other[0])}'s {other[1]}" if other is not None else None

    return tuple(attrs.evolve(f, facts=tuple(attrs.evolve(c, asked=found.get((f.path, c.path)),
                                                          copied_from=copy_of((f.path, c.path))) for c in f.facts))
                 for f in files)


def _cited(fact: Fact) -> set[str]:
    """The source ids ``fact`` cites: its own and each figure input's of its derivation."""
    out = {fact.source} if fact.source is not None else set()
    if isinstance(fact.derivation, Derivation):
        out |= {i.source for i in fact.derivation.inputs if i.kind == "figure" and i.source is not None}
    return out


def _fresh_sources(base: Side, head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each changed or added fact's :attr:`passprice.review.changes.FactChange.fresh_sources` set: the
    sources its new citation names that ``head`` registers and ``base`` does not, and its old citation (a changed
    fact's) did not name. An added fact is asked as a changed one is (left26b: walkthrough 30's new card, its bandwidth
    derived from a source record the same pull request added, read nothing to verify of it)."""
    added = {file_kind(p)[1] for p in head.files if file_kind(p)[0] == "source" and p not in base.files}
    if not added:
        return files
    out = []
    for f in files:
        facts = []
        for c in f.facts:
            if c.new is not None:  # an added fact too (left26b: a new card's bandwidth derived from a new record)
                fresh = tuple(sorted((_cited(c.new) - (_cited(c.old) if c.old is not None else set())) & added))
                if fresh:
                    c = attrs.evolve(c, fresh_sources=fresh)
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def _quotes_checked(head: Side, files: tuple[FileChange, ...], base: Side | None = None,
                    left: Lookups | None = None) -> tuple[FileChange, ...]:
    """``files`` with :attr:`passprice.review.changes.FactChange.quote` set on each changed or added fact whose quoted
    locators (its own and its derivation inputs', each with the source it cites:
    :func:`passprice.sources._quoted_locators`) differ from the old fact's: :func:`passprice.sources.quote_check` of
    HEAD's fact against HEAD's stored excerpts (:func:`passprice.sources.stored_texts`), the one check ``audit`` makes,
    so the review says what ``audit`` of the same tree says (a new user's finding: NOT FOUND in audit, only "its locator
    quotes 4.89TB/s" in the review; tests/test_walk128.py). With ``base``, each checked fact's
    :attr:`passprice.review.changes.FactChange.excerpts_edited`: the cited sources whose stored text for them
    (:func:`passprice.sources.excerpt_section`'s reading) differs on BASE, or that BASE stored none of; and a changed
    fact whose locators did not change is checked too when it cites such a source (a value moved, the excerpt edited to
    state it and re-pinned read "checked" against text the change wrote, tests/test_left131.py). HEAD's sources are read
    only when such a fact is there. The look-ups spend ``left``, the review's one :class:`passprice.sources.Lookups` (a
    fresh one when ``None``), in place: what they would look up is counted first, and past what it holds none is looked
    up and it is emptied, so that the rewritten excerpts' checks after them look up none either
    (:func:`passprice.sourcechange.source_changes`; tests/test_bound147.py). Raises nothing."""
    from passprice.sources import (
        MISMATCH,
        Lookups,
        figures_quoted,
        load_source,
        quote_check,
        quote_cost,
        read_sources,
        stored_text,
        stored_texts,
    )
    from passprice.sources import USABLE as _USABLE
    from passprice.sources import _quoted_locators as quoted_locators

    def cited(fact: Fact) -> list[str]:
        return [sid for _, sid, _ in quoted_locators(fact) if sid is not None]

    def requoted(c: FactChange) -> bool:
        return (c.new is not None and (c.old is None or quoted_locators(c.old) != quoted_locators(c.new))
                and bool(quoted_locators(c.new)))

    changed = [c.new for f in files for c in f.facts if c.new is not None and quoted_locators(c.new)]
    if not changed:
        return files
    edited: frozenset[str] = frozenset()
    sources: dict[str, Any] | None = None
    if base is not None:
        sources = read_sources(head.root)[0]
        edited = _excerpts_edited(base, head, sources, {sid for fact in changed for sid in cited(fact)})

    def refigured(c: FactChange) -> bool:
        # a figure moved under quotes that did not: what they state is looked at again (a new user's 8 → 8.2 TB/s
        # under 'Peak Memory Bandwidth 8 TB/s' was asked, and passed once re-locked: tests/test_fix53w.py)
        return (c.new is not None and c.old is not None and bool({"value", "unit", "derivation"} & set(c.fields))
                and bool(figures_quoted(c.new, {sid: _USABLE for sid in cited(c.new)})))

    def wanted(c: FactChange) -> bool:
        return requoted(c) or refigured(c) or (c.new is not None and c.old is not None
                                               and bool(edited & set(cited(c.new))))

    asked = [c.new for f in files for c in f.facts if c.new is not None and wanted(c)]
    if not asked:
        return files
    if sources is None:
        sources = read_sources(head.root)[0]
    # one for the review, shared with its rewritten excerpts' checks: one a fact looked up 512 spans each
    # (tests/test_attack133.py), then the changed facts and the excerpts had one each (tests/test_bound147.py)
    left = Lookups() if left is None else left
    texts = stored_texts(head.root, sources, [sid for fact in asked for sid in cited(fact)])
    need = quote_cost(asked, texts)
    if need.spans > left.spans or need.chars > left.chars:
        # Past the bound, none is looked up and the review fails (Review.quotes_unchecked): looking up the first
        # 512 let a pull request spend them on junk quotes of facts sorting first, so that a later fact's NOT FOUND
        # read "not checked" and the review passed (tests/test_budget140.py).
        left.spans = left.chars = 0
    before: dict[str, StoredText | None] = {}  # BASE's stored text of each source an old fact cites, read once

    def stored_before(sid: str) -> StoredText | None:
        if sid not in before:
            side = base if base is not None else head
            try:
                before[sid] = stored_text(side.root, load_source(side.root, sid))
            except InputError:
                before[sid] = None
        return before[sid]

    def unchecked_now(c: FactChange, quote: QuoteCheck) -> tuple[str, ...]:
        # its old quotes could be looked up in a stored excerpt, its new ones cite one with none the old did not
        if c.old is None or not quote.unstored:
            return ()
        old_cited = {sid for _, sid, _ in quoted_locators(c.old) if sid is not None}
        checkable = quote_checkable(c.old, {sid: t for sid in sorted(old_cited)
                                            if (t := stored_before(sid)) is not None})
        # a source the old quotes did not cite, or whose stored text they were looked up in (its excerpt gone since)
        fresh = [name for name in quote.unstored if name not in old_cited or name in checkable]
        if not fresh or not checkable:
            return ()
        return tuple(unstored_why(name, texts.get(name)) for name in fresh)

    def against_removed(c: FactChange, quote: QuoteCheck) -> tuple[str, ...]:
        # a source HEAD stores no usable text of whose text BASE stored: HEAD's fact read against BASE's, as check
        # read it before the change (the excerpt line removed switched the MISMATCH rule off)
        if base is None or c.new is None or not quote.unstored:
            return ()
        out = []
        for sid in quote.unstored:
            was = stored_before(sid)
            if was is None or was.flat is None:
                continue
            before = quote_check(c.path, c.new, {sid: was}, left, only=sid)
            if before.state in ("NOT FOUND", MISMATCH):
                out.append(f"{sid}: {before.state} ({before.why})")
        return tuple(out)

    out = []
    for f in files:
        facts = []
        for c in f.facts:
            if c.new is not None and wanted(c):
                quote = quote_check(c.path, c.new, texts, left)
                c = attrs.evolve(c, quote=quote, excerpts_edited=tuple(sorted(edited & set(cited(c.new)))),
                                 unchecked_now=unchecked_now(c, quote), against_removed=against_removed(c, quote))
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def unstored_why(name: str, stored: StoredText | None) -> str:
    """Why a quote of source ``name`` is not checked, its stored text being ``stored`` (``None``: its record names no
    excerpt, or is not there), in the words :func:`passprice.sources.quote_check` gives it: ``NAME has no stored
    text``, or ``NAME's stored excerpt is unusable: WHY`` (:meth:`passprice.sources.StoredText.unusable`). Raises
    nothing."""
    why = stored.unusable() if stored is not None else None
    return f"{name} has no stored text" if why is None else f"{name}'s stored excerpt is unusable: {why}"


def quote_checkable(fact: Fact, texts: Mapping[str, StoredText]) -> frozenset[str]:
    """The sources of ``fact``'s quoted spans (its locator's and its derivation's inputs',
    :func:`passprice.sources._quoted_locators`) whose stored text in ``texts`` (by source id) is usable: where
    :func:`passprice.sources.quote_check` would look its quotes up. Looks nothing up. Raises nothing."""
    from passprice.sources import _quoted_locators, paged_spans

    out: set[str] = set()
    for _, sid, locator in _quoted_locators(fact):
        stored = texts.get(sid) if sid is not None else None
        if sid is not None and stored is not None and stored.flat is not None and paged_spans(locator):
            out.add(sid)
    return frozenset(out)


def copied_citations(cards: Mapping[str, Mapping[str, Fact]], added: Iterable[tuple[str, str]]
                     ) -> dict[tuple[str, str], tuple[str, str]]:
    """Each added card fact ``(file, fact path)`` of ``added`` whose own citation, source and locator as a place
    (:func:`passprice.addedfacts._place`: whitespace collapsed, look-alike letters read as Latin), is one a fact of
    another card file of ``cards`` (file → fact path → fact, HEAD's card files) cites as its own: the ``(file, fact
    path)`` of that other fact, a file the change adds no fact to first (the card copied), and that file's fact at the
    same path where it cites the place. A copied citation: the place states its figure of the other card, not
    necessarily of this one. An ``assumed`` fact cites a basis, not a figure read at the place (every real card's 512
    GiB ``host.capacity`` placeholder): left out. A new user's card copied from the H100 SXM5's file, only its name
    and vendor changed, was added with ``memory.capacity 80 GB`` under the H100's product-page column and nothing to
    verify of it (:func:`passprice.addedfacts.another_cards` asks only a copy citing a place of its own;
    tests/test_fix166.py). Linear in the facts ``cards`` holds. Raises nothing."""
    from passprice.addedfacts import _place

    wanted = [(rel, path) for rel, path in added if path in cards.get(rel, {})]
    if not wanted:
        return {}
    adding = {rel for rel, _ in wanted}
    holders: dict[tuple[str, str], dict[str, list[str]]] = {}  # own place -> file -> its fact paths citing it
    for rel in sorted(cards):
        for path, fact in cards[rel].items():
            place = _place(fact.source, fact.locator)
            if place is not None:
                holders.setdefault(place, {}).setdefault(rel, []).append(path)
    out = {}
    for rel, path in wanted:
        fact = cards[rel][path]
        place = _place(fact.source, fact.locator)
        if place is None or fact.provenance is Provenance.ASSUMED:
            continue
        held = holders.get(place, {})
        found = next(((r, p) for r, p in held.items() if r != rel and r not in adding), None) or next(
            ((r, p) for r, p in held.items() if r != rel), None)
        if found is not None:
            out[(rel, path)] = (found[0], path if path in found[1] else found[1][0])
    return out


def _card_named(rel: str) -> str:
    """A card file's card name: ``facts/cards/h100_sxm5_80gb.toml`` → ``h100_sxm5_80gb``."""
    return rel.rsplit("/", 1)[-1].removesuffix(".toml")


def copied_citation_ask(rel: str, fact: Fact, other: tuple[str, str]) -> str:
    """What a reviewer must verify of the added fact ``fact`` of card file ``rel`` whose citation is another card's
    (:func:`copied_citations`: ``other``, that card's file and fact path): ``a copied citation: it cites what
    h100_sxm5_80gb's memory.capacity cites: does nvidia-h100-product-page: … state 80 GB of what acme_x1
    describes?``, a derived fact asked of the figures its derivation reads there, as
    :func:`passprice.addedfacts.another_cards` asks it (:func:`passprice.addedfacts._asked_figure`). Raises
    nothing."""
    from passprice.addedfacts import _asked_figure, _place

    place = _place(fact.source, fact.locator)
    figure = _asked_figure(fact, place) if place is not None else fact.describe()
    return (f"a copied citation: it cites what {escaped(_card_named(other[0]))}'s {escaped(other[1])} cites: does "
            f"{escaped(fact.source or '')}: {escaped(fact.locator or '')} state {figure} of what "
            f"{escaped(_card_named(rel))} describes?")


def _excerpts_edited(base: Side, head: Side, sources: Mapping[str, Any], ids: Iterable[str]) -> frozenset[str]:
    """The sources of ``ids`` (HEAD's records, ``sources``) whose stored excerpt reads as another text for them on
    HEAD than on BASE (:func:`passprice.sources.excerpt_section` of each side's bytes: the source's own section),
    or that BASE stored none of (the record or its ``excerpt`` added, or re-pointed): what a quote found there was
    written by the same change. Raises nothing (a side whose record or file does not read counts as edited)."""
    from passprice.files import read_regular
    from passprice.sources import EXCERPT_BYTES, excerpt_section, load_source

    out = set()
    for sid in sorted(set(ids)):
        now = sources.get(sid)
        if now is None or now.excerpt is None:
            continue
        try:
            then = load_source(base.root, sid)
        except InputError:
            out.add(sid)
            continue
        if then.excerpt is None or then.excerpt != now.excerpt:
            out.add(sid)
            continue
        try:
            before = read_regular(base.root.path / then.excerpt, EXCERPT_BYTES)
            after = read_regular(head.root.path / now.excerpt, EXCERPT_BYTES)
        except (InputError, OSError):
            out.add(sid)
            continue
        if before != after and excerpt_section(before, sid) != excerpt_section(after, sid):
            out.add(sid)
    return frozenset(out)


def _ratio_bases(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`passprice.review.changes.FactChange.ratio_basis` set on each changed ratio (unit ``1``) of
    a card file whose value moved and whose derivation, on either side, divides by the fact ``memory.bandwidth`` or
    whose note names it: HEAD's ``memory.bandwidth`` of that card (its value and unit, read from HEAD's bytes of the
    file), where it reads. Raises nothing."""
    from passprice.derivations import Derivation

    def names_bandwidth(fact: Fact | None) -> bool:
        if fact is None:
            return False
        d = fact.derivation
        if isinstance(d, Derivation) and any(i.fact == "memory.bandwidth" for i in d.inputs):
            return True
        return "memory.bandwidth" in (fact.note or "")

    wanted = {f.path for f in files for c in f.facts if f.kind == "card" and c.old is not None
              and c.new is not None and c.new.unit == "1" and c.old.amount != c.new.amount
              and (names_bandwidth(c.old) or names_bandwidth(c.new))}
    if not wanted:
        return files
    import tomllib

    out = []
    for f in files:
        basis: tuple[float, str] | None = None
        if f.path in wanted:
            try:  # read as every look a review takes at a side's file as plain TOML, capped (side_toml)
                data = head.files.get(f.path)
                table = side_toml(data, "card") if isinstance(data, bytes) else {}
                raw = table.get("memory", {}).get("bandwidth", {})
                value, unit = raw.get("value"), raw.get("unit")
                if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(unit, str):
                    basis = (float(value), unit)
            except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, InputError):
                basis = None
        if basis is None:
            out.append(f)
            continue
        out.append(attrs.evolve(f, facts=tuple(
            attrs.evolve(c, ratio_basis=basis) if c.new is not None and c.new.unit == "1" else c for c in f.facts)))
    return tuple(out)


def _carried(base: Side, head: Side | None = None) -> Callable[[str], Any]:
    """For a source id, what ``base`` recorded of it (:class:`passprice.addedfacts.Carried`): the figures named by
    its record file, by the registry document it names (``source.path``, when ``base`` holds its bytes or it lies in
    ``base``'s folder, at most :data:`BASIS_DOCUMENT_BYTES`) and by the locator and note of each fact of ``base``
    citing it (as its source, or a derivation figure's); ``None`` for an id ``base`` does not register, but for a
    registry source ``head`` adds whose document is a file ``head`` adds too (slip round 36: a WS1 copy citing a new
    ``ws2-design`` record whose document is the copy itself read "1 source added", nothing to verify): nothing, so
    each figure its basis names is asked. Each source and ``base``'s facts are read once, when first asked for."""
    from passprice.addedfacts import Carried, basis_terms

    facts: list[Fact] = []
    read = False
    done: dict[str, Any] = {}

    def texts_citing(source_id: str) -> list[str]:
        nonlocal read
        if not read:
            read = True
            for rel in sorted(base.files):
                kind, name = file_kind(rel)
                if kind in ("card", "draft", "routing", "stack"):
                    got = _read(base, rel, kind, name)
                    if got.facts is not None:
                        facts.extend(got.facts.values())
        out = []
        for fact in facts:
            if fact.source == source_id:
                out += [fact.locator or "", fact.note or ""]
            if isinstance(fact.derivation, Derivation):
                out += [i.locator or "" for i in fact.derivation.inputs
                        if i.kind == "figure" and (i.source or fact.source) == source_id]
        return out

    def carried(source_id: str) -> Any:
        if source_id in done:
            return done[source_id]
        record = base.files.get(f"sources/{source_id}.toml")
        if record is None:
            done[source_id] = None
            if head is not None and f"sources/{source_id}.toml" in head.files:
                from passprice.sources import load_source as load_head

                try:
                    document = load_head(head.root, source_id).path
                except InputError:
                    document = None
                if document is not None and document in head.files and document not in base.files:
                    done[source_id] = Carried(frozenset(), f"a record this change adds, naming {document}, which "
                                                          "this change adds too")
            return done[source_id]
        texts = [record[:BASIS_DOCUMENT_BYTES].decode("utf-8", "replace")]
        what = ["its record"]
        from passprice.sources import load_source

        try:
            path = load_source(base.root, source_id).path
        except InputError:
            path = None
        if path is not None:
            data = base.files.get(path)
            if data is None and base.info.revision is None:
                from passprice.registry import document_problem

                if document_problem(base.root, path) is None:
                    try:
                        with open(base.root.path / path, "rb") as handle:
                            data = handle.read(BASIS_DOCUMENT_BYTES)
                    except OSError:
                        data = None
            if data is not None:
                texts.append(data[:BASIS_DOCUMENT_BYTES].decode("utf-8", "replace"))
                what.append(f"the document {path}")
        citing = texts_citing(source_id)
        texts += citing
        what.append(f"{len(citing) // 2} fact{'s' if len(citing) // 2 != 1 else ''} citing it")
        terms = frozenset(key for text in texts for key in basis_terms(text))
        done[source_id] = Carried(terms, ", ".join(what[:-1]) + " and " + what[-1])
        return done[source_id]

    return carried


#: The bytes of a source's record or registry document :func:`_carried` reads at most.
BASIS_DOCUMENT_BYTES = 1 << 20


#: What may follow a figure :func:`_cut_keeping` reads (:data:`passprice.textchange.NUMBER`): a percentage's ``%``
#: (``90%`` is 0.9).
_PERCENT_AFTER = r"(\s?%)?"


#: The characters before a figure quoted without quote marks that :func:`_cut_keeping` keeps with it, past the cut.
FIGURE_CONTEXT = 40


def _cut_keeping(locator: str, limit: int, figures: Iterable[float]) -> str:
    """``locator`` cut at a word to ``limit`` characters as a lock's ``cites`` line cuts it
    (:func:`passprice.textchange.cut_at_word`), but never cutting off one of ``figures`` (the amounts a reviewer
    checks there, as written in the fact's unit): a quote holding one is kept whole
    (:func:`passprice.textchange.cut_keeping_figure`); one written without quote marks (a ratio as a percentage,
    ``90%`` for 0.9, included) past the cut is kept with the word after it (its unit) and up to
    :data:`FIGURE_CONTEXT` characters before it, cut at a space: ``HEAD… … capture 90% of…``. Left47: the same rule
    as a runs line's (left46) for a value moved under its kept citation. A locator with none of them is cut as
    before. Raises nothing."""
    import math

    from passprice.textchange import NUMBER, cut_at_word, cut_keeping_figure, figure_read

    if len(locator) <= limit:
        return locator
    figures = [f for f in figures if math.isfinite(f)]
    plain = cut_at_word(locator, limit)
    for figure in figures:
        kept = cut_keeping_figure(locator, limit, figure)
        if kept != plain:
            return kept
    for found in re.finditer(f"({NUMBER}){_PERCENT_AFTER}", locator[:10_000]):
        amount = figure_read(found.group(1))
        if amount is None:  # past a float (``1e-400``): no figure (left50's reader, left52 here)
            continue
        number = amount / (100 if found.group(2) else 1)
        if not any(math.isclose(number, figure, rel_tol=1e-9) for figure in figures):
            continue
        after = re.match(r"[^\w\s]*\s*\S+", locator[found.end():])  # its unit, or the word after it
        end = found.end() + (after.end() if after else 0)
        if end <= len(plain) - 1:
            return plain  # kept already, with the word after it
        if found.start() <= len(plain) + FIGURE_CONTEXT:
            return cut_at_word(locator, end)  # near the cut: the text kept on to it
        start = locator.find(" ", found.start() - FIGURE_CONTEXT, found.start())
        window = locator[(start + 1 if start >= 0 else found.start()):end]
        return f"{plain} {window}" + ("…" if locator[end:].strip() else "")
    return plain
