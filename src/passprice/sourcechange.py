"""A source record names a document; when a change makes the same id name another document — its address, title,
repository, commit or arXiv id rewritten, or the registry document it points at (``source.path``) rewritten — every
fact citing the id now traces to that document, and the review asks its reviewer to verify that it states them.

passprice does not read sources, so it cannot say whether the new document agrees; what it can say is that the
citation now leads elsewhere, and which facts follow it there. A source's record is not pinned in locks (a
correction of its title or address is no drift), so this is asked, never failed: a "to verify" like a value moved
under an unchanged locator (:attr:`passprice.review.changes.FactChange.to_verify`). The question names the locks whose
price rests on a fact citing the id (as ``passprice sources`` counts them): the review read "no lock affected; 8 locks
unaffected" of a commit moving the source seven locked prices rest on to another commit of its repository (slip 27). """

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from passprice.errors import InputError
from passprice.registry import Root

if TYPE_CHECKING:
    from pathlib import Path

    from passprice.sources import Lookups, NumberedLines, Source, StoredText

#: The fields of a ``[source]`` table that say which document it is (and how it was read): a change to any of them
#: makes the id lead to another document, or to the same one read otherwise. ``note`` does not. ``retrieved`` does:
#: a web page or datasheet address retrieved on another day is another copy, which may state other figures (slip round
#: 34: the H200 datasheet's ``retrieved`` "unknown" → "2026-11-30" under its 9 citing facts read "1 other file
#: changed", nothing to verify). ``excerpt`` does too, and is said apart with what it is (:data:`STORED_TEXT`); its
#: pin ``excerpt_sha256`` does not (the bytes it pins are compared themselves: :func:`source_changes`).
DOCUMENT_FIELDS = (
    "title", "kind", "publisher", "authors", "date", "url", "copies", "repository", "commit", "arxiv", "path",
    "sha256", "read", "retrieved",
)

#: The fields that name the document an added source leads to (:func:`source_changes`'s ``added``), as its line shows
#: them.
ADDED_FIELDS = ("title", "url", "repository", "commit", "arxiv", "path")

#: The citing facts named in a line at most; the rest are counted.
SHOWN = 6

#: The figures :attr:`SourceChange.places` lists at most; the rest are counted.
PLACES = 20

#: The changed lines of a stored excerpt :attr:`SourceChange.excerpt_changes` shows at most; the rest are counted.
EXCERPT_LINES = 10

#: The characters of a changed excerpt line shown at most (before escaping); a longer line is cut, ``…`` marking it.
EXCERPT_LINE_CHARS = 200

#: The lines × lines past which the lines between a section's common first and last lines are shown as one block
#: replaced (BASE's, then HEAD's) rather than matched line by line (:mod:`difflib`, quadratic in the worst case).
EXCERPT_MATCHED = 250_000

#: The line a review puts above :attr:`SourceChange.excerpt_changes`.
EXCERPT_CHANGES = "its stored excerpt's lines for it that changed, BASE → HEAD (what audit now checks quotes against):"

#: The record fields that say the document was read anew: when a change rewrites the excerpt and leaves all of them
#: as they were, no new reading is recorded (:attr:`SourceChange.reading_unchanged`).
READING_FIELDS = ("retrieved", "read", "copies")


def _amount(amount: Any, unit: str) -> str:
    """``4.8 TB/s``; a dimensionless figure (unit ``1``) its bare value, ``1``. Raises nothing."""
    return f"{amount}" if unit == "1" else f"{amount} {unit}"


def cited_places(citing: Iterable[Any], source_id: str) -> tuple[str, ...]:
    """What each of ``citing`` (:class:`passprice.lineage.Citing`, facts citing ``source_id``) takes from the
    source, one line a figure: ``h200_sxm_141gb:array: figure sparse 3958 TOPS at LOCATOR`` for each figure of a
    derivation read there, else ``h200_sxm_141gb:memory.bandwidth: 4.8 TB/s (published) at LOCATOR`` for a fact
    citing it as its source; the first :data:`PLACES`, then ``and N more (passprice sources SOURCE)``. A fact pinned
    before sources (a ``cite`` and no locator) reads ``at (no locator)``."""
    from passprice.derivations import Derivation

    out: list[str] = []
    for c in citing:
        fact = c.fact
        figures = [i for i in fact.derivation.inputs if i.kind == "figure" and (i.source or fact.source) == source_id
                   ] if isinstance(fact.derivation, Derivation) else []
        # a derived fact is stated by the figures it reads there (989.5 TMAC/s is no figure of the datasheet, its
        # 3,958 TOPS is); a fact derived from figures of other sources alone, by its own value
        # a dimensionless figure (unit "1") is its bare value: "1 1 (estimated)" read as value then unit
        # (tests/test_fix190.py)
        out += [f"{c.ref}: figure {i.name} {_amount(i.amount, i.unit)} at "
                f"{i.locator or fact.locator or '(no locator)'}" for i in figures]
        if fact.source == source_id and not figures:
            out.append(f"{c.ref}: {_amount(fact.amount, fact.unit)} ({fact.provenance.value}) at "
                       f"{fact.locator or '(no locator)'}")
    if len(out) > PLACES:
        out = [*out[:PLACES], f"and {len(out) - PLACES:,} more (passprice sources {source_id} lists each)"]
    return tuple(out)


@attrs.frozen
class SourceChange:
    """A source ``id`` that leads to another document on HEAD than on BASE: ``changed`` says what moved (one
    ``field: before → after`` a record field, or that the registry document it names was rewritten), ``citing``
    the facts of HEAD citing it (``card:path``, as their source or through a figure of their derivation), ``locks``
    the names of HEAD's locks whose recorded price rests on such a fact (or on a pinned fact citing the id), and
    ``fitted`` each serving stack with the count of its fitted facts whose measured runs cite the id, or price a
    routing record whose facts cite it (``through``: each such (stack, routing record) pair, as ``audit --source``
    follows them)."""

    id: str
    changed: tuple[str, ...]
    citing: tuple[str, ...]
    locks: tuple[str, ...] = ()
    fitted: tuple[tuple[str, int], ...] = ()
    through: tuple[tuple[str, str], ...] = ()
    #: Each figure of HEAD to find in the document (:func:`cited_places`, the first :data:`PLACES`): the review named
    #: the citing facts alone, the seventh on as "and 3 more", so a reviewer reading the new document could not tell
    #: from the comment which figure to look for where (walkthrough 41).
    places: tuple[str, ...] = ()
    #: Each (stack, card, paths) whose runs rest on the id through the card they are priced on: its facts ``paths`` (of
    #: :data:`passprice.lineage.RUN_CARD_PATHS`) cite the id or derive from one that does (walk53: the review followed
    #: runs and routing records, not the card a stack's fit reads, which ``audit --source`` follows since walk51).
    on_cards: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    #: The id is no record of BASE's: the change adds it and re-cites to it a fact that cited another source on BASE
    #: (``changed`` then names the document it leads to: ``title: …``, ``url: …``). The review's fact line asked it,
    #: but ``sources_changed`` never named it, nor the locks resting on the re-cited facts (session 38, walk53).
    added: bool = False
    #: The citing facts (``card:path``) whose quotes of this source are NOT FOUND in HEAD's stored excerpt of it and
    #: were found in BASE's (:func:`passprice.sources.quote_check`), asked only when the excerpt changed: a new user
    #: rewrote the Hopper whitepaper's excerpt and the review listed the source to verify, exit 0, while ``audit
    #: --source`` on HEAD found 4 facts' quotes NOT FOUND (tests/test_walk128.py).
    quotes_lost: tuple[str, ...] = ()
    #: How many quoted spans of each of :attr:`quotes_lost` HEAD's stored excerpt lacks (in its order): counted in
    #: the review's ``N quotes NOT FOUND`` headline, and each such fact fails the review (tests/test_budget140.py).
    lost_spans: tuple[int, ...] = ()
    #: The citing facts whose quotes of this source were not looked up on a side, the review's look-ups past their
    #: bound (:class:`passprice.sources.Lookups`; then none of any source is looked up): each fails the review.
    quotes_unchecked: tuple[str, ...] = ()
    #: How many quoted spans of each of :attr:`quotes_unchecked` were not looked up (in its order; the most of its two
    #: sides' checks): counted in the review's refusal ``quotes not checked: N quoted spans of M facts``, as a changed
    #: fact's spans are (:attr:`passprice.sources.QuoteCheck.past`).
    unchecked_spans: tuple[int, ...] = ()
    #: Where its stored excerpt changed, the lines of the source's own section (its ``== ID … ==`` section, or the
    #: whole file) that differ, BASE's then HEAD's, each ``BASE line N: TEXT`` or ``HEAD line N: TEXT`` (N its line
    #: in the file; TEXT cut at :data:`EXCERPT_LINE_CHARS`, control characters escaped): the first
    #: :data:`EXCERPT_LINES`, then ``and N more changed lines``. A new user raised the H200's bandwidth to 4.9 TB/s,
    #: edited the excerpt's ``4.8TB/s`` to match and re-pinned it: the review said the quote was checked against an
    #: excerpt the change edited, but not what was edited (tests/test_excerpt141.py).
    excerpt_changes: tuple[str, ...] = ()
    #: The citing facts whose quotes of it are found in HEAD's stored excerpt and NOT FOUND in BASE's: the words the
    #: edited excerpt supplies (the reverse of :attr:`quotes_lost`), asked only when the excerpt changed.
    quotes_gained: tuple[str, ...] = ()
    #: Where its stored excerpt changed: ``True`` when the record's :data:`READING_FIELDS` are as on BASE (no new
    #: reading of the document is recorded for the new text), ``False`` when one changed; ``None`` otherwise.
    reading_unchanged: bool | None = None

    @property
    def to_verify(self) -> str:
        """What the reviewer must check: that the document the id now leads to states each citing fact."""
        what = (f"source {self.id} is added by this change and facts that cited another source are re-cited to it "
                f"({'; '.join(self.changed)})" if self.added
                else f"the document source {self.id} names changed ({'; '.join(self.changed)})")
        def via(stack: str) -> str:
            records = [r for s, r in self.through if s == stack]
            said = (f", priced on routing record{'s' if len(records) > 1 else ''} {', '.join(records)}, which "
                    f"cite{'' if len(records) > 1 else 's'} it" if records else "")
            # the cards whose same facts rest on it in one clause (azure's guide: three cards' shares)
            by_paths: dict[tuple[str, ...], list[str]] = {}
            for s, card, paths in self.on_cards:
                if s == stack:
                    by_paths.setdefault(paths, []).append(card)
            return said + "".join(
                f", priced on card{'s' if len(cards) > 1 else ''} {', '.join(sorted(cards))}, whose {', '.join(paths)} "
                f"rest{'s' if len(paths) == 1 and len(cards) == 1 else ''} on it" for paths, cards in by_paths.items())

        runs = " and ".join(
            f"the measured runs of stack {stack} ({count} fitted fact{'s' if count != 1 else ''} rest on them"
            f"{via(stack)})" for stack, count in self.fitted)
        if self.quotes_lost:
            lost = ", ".join(self.quotes_lost[:SHOWN]) + (
                f" and {len(self.quotes_lost) - SHOWN} more" if len(self.quotes_lost) > SHOWN else "")
            many = len(self.quotes_lost) > 1
            what += (f" (on HEAD, the quote{'s' if many else ''} of {lost} from it {'are' if many else 'is'} NOT FOUND "
                     "in its stored excerpt, found in BASE's: `passprice audit --source " + self.id + "`)")
        if self.quotes_unchecked:
            many = len(self.quotes_unchecked) > 1
            what += (f" (the quote{'s' if many else ''} of {_n_shown(self.quotes_unchecked)} from it not checked: the "
                     "review's look-ups past their bound)")
        if self.quotes_gained:
            gained = ", ".join(self.quotes_gained[:SHOWN]) + (
                f" and {len(self.quotes_gained) - SHOWN} more" if len(self.quotes_gained) > SHOWN else "")
            many = len(self.quotes_gained) > 1
            what += (f" (on HEAD, the quote{'s' if many else ''} of {gained} from it {'are' if many else 'is'} "
                     "found in its stored excerpt, NOT FOUND in BASE's: the edited excerpt supplies those words; read "
                     "them in the document itself)")
        said = self._verify(what, runs)
        if self.reading_unchanged:
            said += ("" if said.endswith((".", "?")) else ".") + (
                " No new reading of the document is recorded for the new excerpt: its record's "
                f"{', '.join(READING_FIELDS)} are as on BASE.")
        return said

    def _verify(self, what: str, runs: str) -> str:
        """:attr:`to_verify` of ``what`` changed and the ``runs`` resting on it, without the reading's sentence."""
        if not self.citing and not runs:
            return f"{what}; no fact cites it"
        names = ", ".join(self.citing[:SHOWN]) + (
            f" and {len(self.citing) - SHOWN} more" if len(self.citing) > SHOWN else "")
        rest = ""
        if self.locks:
            shown = ", ".join(self.locks[:SHOWN]) + (
                f" and {len(self.locks) - SHOWN} more" if len(self.locks) > SHOWN else "")
            many = len(self.locks) > 1
            rest = (f" The locked price{'s' if many else ''} of {shown} rest{'' if many else 's'} on them (a lock "
                    "pins the id, not the document).")
        if not self.citing:
            return f"{what}: does it state {runs}, which cite it?{rest}"
        also = f", and {runs}" if runs else ""
        if len(self.citing) == 1:
            return f"{what}: does it state {names}, which cites it{also}?{rest}"
        return f"{what}: does it state each of {names}, which cite it{also}?{rest}"

    def to_json(self) -> dict[str, Any]:
        """The change for ``--format json``."""
        return {"id": self.id, "changed": list(self.changed), "citing": list(self.citing), "locks": list(self.locks),
                "fitted": {stack: count for stack, count in self.fitted},
                "fitted_through": [{"stack": stack, "routing": routing} for stack, routing in self.through],
                "fitted_on_cards": [{"stack": stack, "card": card, "paths": list(paths)}
                                    for stack, card, paths in self.on_cards],
                "places": list(self.places), "added": self.added, "quotes_lost": list(self.quotes_lost),
                "quotes_unchecked": list(self.quotes_unchecked), "quotes_gained": list(self.quotes_gained),
                "excerpt_changes": list(self.excerpt_changes), "reading_unchanged": self.reading_unchanged,
                "to_verify": self.to_verify}


def _n_shown(names: tuple[str, ...]) -> str:
    """The first :data:`SHOWN` of ``names``, ``and N more`` after them."""
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value)


#: What a review says a source's stored excerpt (``source.excerpt``) is, beside the change to it.
STORED_TEXT = ("its stored excerpt: the lines quoted from the text read, which its citing facts' quotes are checked "
               "against")


#: What a review adds to a stored excerpt the change names (re-pointed, rewritten, added, or its pin removed) that its
#: record does not pin (no ``excerpt_sha256``): ``check`` only warns of it (:func:`passprice.sources.unpinned_line`).
UNPINNED = ("; not pinned: the record has no excerpt_sha256, so a later edit of the excerpt changes what audit checks "
            "its quotes against unseen by check and by a review: pin it (the warning passprice check gives names the "
            "sha256)")


def _table(root: Root, source_id: str) -> dict[str, Any] | None:
    """The ``[source]`` table of ``sources/ID.toml`` in ``root`` as validated (its :data:`DOCUMENT_FIELDS` and its
    ``excerpt``), or ``None`` when it does not read (the review reports that file as it reports any)."""
    from passprice.sources import load_source

    try:
        source = load_source(root, source_id)
    except InputError:
        return None
    return {**{name: getattr(source, name) for name in DOCUMENT_FIELDS}, "excerpt": source.excerpt,
            "excerpt_sha256": source.excerpt_sha256}


def document_digest(data: bytes) -> str:
    """The identity of a registry document's bytes (``sha256:…``)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def source_changes(
    base: Root,
    head: Root,
    ids: Iterable[str],
    documents: tuple[Callable[[str], str | None], Callable[[str], str | None]],
    locks: Iterable[tuple[str, Any]] = (),
    added: Iterable[str] = (),
    left: Lookups | None = None,
) -> tuple[SourceChange, ...]:
    """Each source of ``ids`` (registered on both sides) that leads to another document on ``head`` than on
    ``base``: a field of :data:`DOCUMENT_FIELDS` that differs, or the registry document it names (the same
    ``source.path`` on both sides) whose bytes differ, or its stored excerpt (``source.excerpt``) re-pointed or
    rewritten — ``documents`` gives each side's identity of a document by
    its path relative to the root (:func:`document_digest`; ``None`` when it cannot be read). Cited by HEAD's facts
    as :func:`passprice.lineage.citing_sources` finds them (a serving stack's facts among them, and a stack's fitted
    facts whose runs cite the source, price a routing record or a card whose facts rest on it,
    :func:`passprice.lineage.fitted_through`); each with the ``locks`` (HEAD's,
    each its shown path and the lock read) resting on them, as :func:`passprice.lineage.lock_impacts` finds them for
    ``audit --source``. Each of ``added`` (sources ``head`` registers and ``base`` does not, to which a fact of
    ``base`` is re-cited) is one too, ``changed`` naming the document it leads to (:data:`ADDED_FIELDS` it sets).
    The quote checks of the sources whose stored excerpt changed (:func:`_quotes_lost`, HEAD's and BASE's) spend
    ``left``, the review's one :class:`passprice.sources.Lookups` (what its changed facts' checks left; a fresh one
    when ``None``): what they would look up is counted first, and past what it holds none is looked up
    (tests/test_bound147.py)."""
    from passprice.lineage import (
        FactRef,
        _fitted_in,
        _run_cites,
        card_paths,
        citing_sources,
        derived_closure,
        load_records,
        lock_impacts,
        stack_fits,
    )
    from passprice.sources import Lookups, quote_cost
    from passprice.stacks import LOCK_PREFIX

    found = []
    excerpts_edited: dict[str, tuple[str | None, str | None, bool]] = {}
    read = _ExcerptBytes()  # each side's excerpt read once for the records naming it, not 4 times a record
    for source_id in sorted(set(ids)):
        old, new = _table(base, source_id), _table(head, source_id)
        if old is None or new is None:
            continue
        changed = [f"{k}: {_shown(old[k])} → {_shown(new[k])}" for k in DOCUMENT_FIELDS if old[k] != new[k]]
        path = new.get("path")
        if path is not None and path == old.get("path"):
            before, after = documents[0](path), documents[1](path)
            if before != after:
                changed.append(f"{path} rewritten")
        # The stored excerpt is the text audit checks each citing fact's quotes against (tests/test_attack121.py: a
        # pull request rewriting sources/excerpts/cite102-excerpt.txt so that the H200's 'GPU Memory Bandwidth 4.8TB/s
        # 4.8TB/s' was no longer in it, or re-pointing source.excerpt to such a copy, read "no changes" or "1 source
        # record changed; no lock affected", exit 0, nothing to verify, while audit on HEAD said NOT FOUND).
        excerpt = new["excerpt"]
        unpinned = UNPINNED if excerpt is not None and new["excerpt_sha256"] is None else ""
        edited: tuple[str | None, str | None, bool] | None = None
        same_reading = all(old[k] == new[k] for k in READING_FIELDS)
        if excerpt != old["excerpt"]:
            changed.append(f"excerpt: {_shown(old['excerpt'])} → {_shown(excerpt)} ({STORED_TEXT}){unpinned}")
            edited = old["excerpt"], excerpt, same_reading
        elif (excerpt is not None and documents[0](excerpt) != documents[1](excerpt)
              and _own_section_changed(base, head, source_id, excerpt, read)):
            changed.append(f"{excerpt} rewritten ({STORED_TEXT}){unpinned}")
            edited = excerpt, excerpt, same_reading
        elif unpinned and old["excerpt_sha256"] is not None:
            changed.append(f"{excerpt}'s pin removed (excerpt_sha256: {old['excerpt_sha256'][:12]}… → (none))"
                           + unpinned)
        if changed:
            found.append((source_id, tuple(changed)))
            if edited is not None:
                excerpts_edited[source_id] = edited
    new_ids = set()
    for source_id in sorted(set(added)):
        new = _table(head, source_id)
        if new is not None and _table(base, source_id) is None:
            leads = [f"{k}: {_shown(new[k])}" for k in ADDED_FIELDS if new[k] is not None]
            if new["excerpt"] is not None and new["excerpt_sha256"] is None:
                leads.append(f"excerpt: {new['excerpt']} ({STORED_TEXT}){UNPINNED}")
            found.append((source_id, tuple(leads)))
            new_ids.add(source_id)
    if not found:
        return ()
    # A serving stack's facts cite sources too (its memory.reserved, an estimate), and its fitted facts rest on the
    # measured runs citing one (walkthrough 24: a benchmark note cited by a stack's memory.reserved and by the five
    # runs its fit was made on was reviewed as "no fact cites it", and no lock named, though a lock pinned both).
    records = load_records(head, stacks=True)[0]
    citing = citing_sources(records)
    locks = tuple(locks)
    # every stack's fitted facts and their runs read once, not once a source (:func:`passprice.lineage.fitted_through`
    # read them for each: 88 ms a source, 9.1 s of a review adding 238 sources re-cited to; attack68)
    fits = stack_fits(head)
    out = []
    # the quote checks of every source compared, both sides, from the review's one bound: one a source, both sides,
    # were 1,024 (tests/test_attack133.py), then the sources' had one and the changed facts' one
    # (tests/test_bound147.py)
    left = Lookups() if left is None else left
    rewritten = [source_id for source_id, fields in found if any(STORED_TEXT in field for field in fields)]
    # the measured runs quote their sources too: a run's row edited out of its excerpt read "to verify" alone
    # (tests/test_attack53.py)
    runs = _run_cites(head) if rewritten else []
    inputs = {source_id: _lost_inputs(base, head, source_id, citing.get(source_id, []),
                                      [(f"{file}: {key}", fact) for file, key, fact, ids in runs if source_id in ids])
              for source_id in rewritten}
    need = [quote_cost([fact for _, fact in got[0]], texts) for got in inputs.values() if got is not None
            for texts in got[1:]]
    if sum(n.spans for n in need) > left.spans or sum(n.chars for n in need) > left.chars:
        # past the bound none is looked up, whatever the sources' order: a change spending it on sources sorting
        # first hid a later one's lost quotes, the review passing (tests/test_budget140.py)
        left.spans = left.chars = 0
    # each pair of sections compared once: 40 records naming one excerpt with no sections of theirs share its lines
    compared: dict[tuple[Any, ...], tuple[str, ...]] = {}
    for source_id, fields in found:
        refs = [c.ref for c in citing.get(source_id, [])]
        places = cited_places(citing.get(source_id, []), source_id)
        named = tuple(str(ref) for ref in refs)
        fitted: dict[str, int] = {}
        # a stack fitted to runs of a mixture of experts rests on the routing record they price as on the runs, as
        # `audit --source` follows it (walkthrough 27; session 24: the review's Sources section did not)
        routings = frozenset(ref.record for ref in refs if ref.kind == "routing")
        # and on the card facts its runs' limits read that cite the id or derive from one that does (walk53: a card
        # re-cited to a new datasheet re-fits the stack and moves its locks' expected prices, as `audit --source`
        # follows since walk51)
        reached = [*refs, *(c.ref for c in derived_closure(records, refs))]
        facts, through, on_cards = _fitted_in(fits, source_id, routings, card_paths(reached))
        for stack, path, _fact, _runs, _named in facts:
            refs.append(FactRef("stack", stack, path.removeprefix(LOCK_PREFIX)))
            fitted[stack] = fitted.get(stack, 0) + 1
        resting, _ = lock_impacts(locks, set(refs), source_id, root=head)  # cards by file, as audit --source
        lost: tuple[tuple[str, int], ...] = ()
        unchecked: tuple[tuple[str, int], ...] = ()
        gained: tuple[str, ...] = ()
        got = inputs.get(source_id)  # its stored excerpt changed: its citing facts' quotes
        if got is not None:
            lost, unchecked, gained = _quotes_lost(got, source_id, left)
        lines: tuple[str, ...] = ()
        reading: bool | None = None
        if source_id in excerpts_edited:
            before, after, reading = excerpts_edited[source_id]
            lines = _section_changes(base, head, source_id, before, after, compared, read)
        out.append(SourceChange(source_id, fields, named, tuple(sorted({i.name for i in resting})),
                                tuple(fitted.items()), through, places, on_cards, source_id in new_ids,
                                quotes_lost=tuple(p for p, _ in lost), lost_spans=tuple(n for _, n in lost),
                                quotes_unchecked=tuple(p for p, _ in unchecked),
                                unchecked_spans=tuple(n for _, n in unchecked), excerpt_changes=lines,
                                quotes_gained=gained,
                                reading_unchanged=reading))
    return tuple(out)


class _ExcerptBytes:
    """The bytes of stored excerpts one review reads (:func:`passprice.files.read_regular`, at most
    :data:`passprice.sources.EXCERPT_BYTES`), each path read once, the last 8 kept: 40 records naming one excerpt of
    900,000 bytes read it 160 times (its section and its lines, each record and side)."""

    def __init__(self) -> None:
        self.kept: dict[Path, bytes] = {}

    def __call__(self, path: Path) -> bytes:
        """The bytes of ``path``. Raises as :func:`passprice.files.read_regular` does (nothing kept then)."""
        from passprice.files import read_regular
        from passprice.sources import EXCERPT_BYTES

        data = self.kept.get(path)
        if data is None:
            data = read_regular(path, EXCERPT_BYTES)
            if len(self.kept) >= 8:
                self.kept.pop(next(iter(self.kept)))
            self.kept[path] = data
        return data


def _own_section_changed(base: Root, head: Root, source_id: str, excerpt: str, read: _ExcerptBytes) -> bool:
    """Whether the stored excerpt ``excerpt`` (a file whose bytes differ between ``base`` and ``head``) reads as
    another text for ``source_id`` (:func:`passprice.sources.excerpt_section`: its own ``== ID … ==`` section, or
    the whole file's when none is headed so): an edit in another source's section of a file several records name
    changes none of the quotes of this one (tests/test_left131.py: every record naming the file was listed, its
    ``quotes_lost`` empty). ``True`` when a side does not read (not there, past the cap, not UTF-8). Raises
    nothing."""
    from passprice.sources import excerpt_section

    sections = []
    for side in (base, head):
        try:
            sections.append(excerpt_section(read(side.path / excerpt), source_id))
        except (InputError, OSError):
            return True
    return sections[0] is None or sections[0] != sections[1]


def _section_lines(side: Root, excerpt: str | None, source_id: str,
                   read: _ExcerptBytes) -> tuple[Any, NumberedLines]:
    """:func:`passprice.sources.excerpt_raw_section` of the excerpt ``excerpt`` of ``side`` (read by ``read``) for
    ``source_id``: a key
    (the bytes' sha256 and the section's) and its numbered lines; no lines when it is ``None`` or does not read (not
    there, not a regular file, past the cap, not UTF-8). Raises nothing."""
    from passprice.sources import NumberedLines, excerpt_raw_section

    if excerpt is None:
        return None, NumberedLines()
    try:
        section = excerpt_raw_section(read(side.path / excerpt), source_id)
    except (InputError, OSError):
        return None, NumberedLines()
    if section is None:
        return None, NumberedLines()
    digest, key, lines = section
    return (digest, key), lines


def _section_changes(base: Root, head: Root, source_id: str, before: str | None, after: str | None,
                     compared: dict[tuple[Any, ...], tuple[str, ...]], read: _ExcerptBytes) -> tuple[str, ...]:
    """:attr:`SourceChange.excerpt_changes` of ``source_id``, whose stored excerpt is ``before`` on ``base`` and
    ``after`` on ``head`` (paths; ``None``: none). ``compared`` holds the pairs of sections already compared (by
    their bytes' sha256 and section), shared by the records naming one file; ``read`` reads each side's file, once
    for them too. The lines the two sides share first
    and last are set aside; the rest matched line by line (:class:`difflib.SequenceMatcher`) when no more than
    :data:`EXCERPT_MATCHED` pairs, else shown as one block replaced. Raises nothing."""
    import difflib

    from passprice.errors import escaped

    (old_key, old), (new_key, new) = (_section_lines(base, before, source_id, read),
                                      _section_lines(head, after, source_id, read))
    key = (old_key, new_key)
    if old_key is not None and new_key is not None and key in compared:
        return compared[key]
    # the lines' texts compared, each side's numbers made for the lines shown alone (a pair a line was 0.12 s of CPU
    # a side for 450,000 lines); the first lines both share, 4,096 at a time in C (a line at a time: 0.3 s)
    a_all, b_all = old.texts, new.texts
    first, most = 0, min(len(a_all), len(b_all))
    while first + 4096 <= most and a_all[first:first + 4096] == b_all[first:first + 4096]:
        first += 4096
    while first < most and a_all[first] == b_all[first]:
        first += 1
    last, most = 0, most - first
    while last + 4096 <= most and a_all[len(a_all) - last - 4096:len(a_all) - last] == b_all[
            len(b_all) - last - 4096:len(b_all) - last]:
        last += 4096
    while last < most and a_all[-1 - last] == b_all[-1 - last]:
        last += 1
    a, b = (first, len(a_all) - last), (first, len(b_all) - last)
    if (a[1] - a[0]) * (b[1] - b[0]) <= EXCERPT_MATCHED:
        matcher = difflib.SequenceMatcher(None, a_all[a[0]:a[1]], b_all[b[0]:b[1]], autojunk=False)
        blocks = [((first + i1, first + i2), (first + j1, first + j2))
                  for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    else:
        blocks = [(a, b)]
    total = sum(x[1] - x[0] + y[1] - y[0] for x, y in blocks)
    out: list[str] = []
    for x, y in blocks:
        for side, (lo, hi), lines in (("BASE", x, old), ("HEAD", y, new)):
            for i in range(lo, min(hi, lo + EXCERPT_LINES - len(out))):
                text = lines.texts[i]
                cut = text[:EXCERPT_LINE_CHARS] + ("…" if len(text) > EXCERPT_LINE_CHARS else "")
                out.append(escaped(f"{side} line {lines.number(i):,}: {cut}"))
    if total > len(out):
        out.append(f"and {total - len(out):,} more changed line{'s' if total - len(out) > 1 else ''}")
    if old_key is not None and new_key is not None:
        compared[key] = tuple(out)
    return tuple(out)


def _lost_inputs(base: Root, head: Root, source_id: str, citing: Iterable[Any],
                 runs: Iterable[tuple[str, Any]] = ()) -> tuple[list[tuple[str, Any]], Any, Any] | None:
    """What :func:`_quotes_lost` checks of ``source_id``: the facts of ``citing`` (:class:`passprice.lineage.Citing`
    of ``head``, as ``(card:path, fact)``) and ``runs`` (the measured runs quoting it, each as ``(FILE: run.INDEX
    (ID), fact)``, :func:`passprice.lineage._run_cites`), and ``head``'s then ``base``'s stored texts of it
    (:func:`passprice.sources.stored_texts`); ``None`` when its record does not read on a side. No fact citing it:
    no stored text read (none has a quote to look up: each record of 40 naming one excerpt of 900,000 bytes read it
    twice a side, 2 ms a record). Raises nothing."""
    from passprice.sources import load_source, stored_texts

    facts = [*((str(c.ref), c.fact) for c in citing), *runs]
    if not facts:
        return facts, {}, {}
    texts = []
    for side in (head, base):
        try:
            record = load_source(side, source_id)
        except InputError:
            return None
        texts.append(stored_texts(side, {source_id: record}, [source_id]))
    return facts, texts[0], texts[1]


def _quotes_lost(got: tuple[list[tuple[str, Any]], Any, Any], source_id: str,
                 left: Lookups) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...], tuple[str, ...]]:
    """The facts of ``got`` (:func:`_lost_inputs`) whose quotes of ``source_id`` are NOT FOUND in HEAD's stored
    excerpt of it and all found in BASE's (:func:`passprice.sources.source_quote_checks`, the check ``audit
    --source`` makes, of HEAD's fact against each side's excerpt), each with how many of its spans HEAD's lacks: the
    quotes the change to the excerpt lost, not those neither side's holds; and the facts a side's check left spans of
    unlooked-up (each with how many, the most of the two sides'), past what ``left`` allows
    (:class:`passprice.sources.Lookups`, one for the review's sources); and those whose quotes HEAD's holds and
    BASE's does not (NOT FOUND there), the words the edited excerpt supplies (:attr:`SourceChange.quotes_gained`).
    Raises nothing."""
    from passprice.sources import source_quote_checks

    facts, head_texts, base_texts = got
    checks = [{c.path: c for c in source_quote_checks(facts, texts, source_id, left)}
              for texts in (head_texts, base_texts)]
    lost = tuple((path, len(checks[0][path].missing)) for path, _ in facts
                 if checks[0][path].state == "NOT FOUND" and checks[1][path].state == "checked")
    unchecked = tuple((path, max(checks[0][path].past, checks[1][path].past)) for path, _ in facts
                      if checks[0][path].past or checks[1][path].past)
    gained = tuple(path for path, _ in facts
                   if checks[0][path].state == "checked" and checks[1][path].state == "NOT FOUND")
    return lost, unchecked, gained


@attrs.frozen
class SourceSinceLock:
    """A source a lock's facts cite whose record (or the registry document it names) differs today from the one the
    registry held when the lock file was last committed (``commit``, its date ``when``): ``changed`` one ``field:
    then → today`` a field (:data:`DOCUMENT_FIELDS`), or ``PATH rewritten``. A lock pins the source id, not the
    document, so an audit of an old lock shows today's record: this says it is not the one the lock was made under."""

    id: str
    commit: str
    when: str
    changed: tuple[str, ...]

    def line(self) -> str:
        """``source S: the lock was committed at abc123def456 (2026-11-30) under another document than today's
        (url: A → B); the sources shown are today's``."""
        return (f"source {self.id}: the lock was committed at {self.commit[:12]} ({self.when[:10]}) under another "
                f"record than today's ({'; '.join(self.changed)}); the source shown is today's: verify the lock's "
                "figures against the document it was made under")

    def to_json(self) -> dict[str, Any]:
        """``{"id", "commit", "when", "changed", "message"}``."""
        return {"id": self.id, "commit": self.commit, "when": self.when, "changed": list(self.changed),
                "message": self.line()}


#: The line an audit of a lock gives when no commit of the registry holds the lock file as it is (walkthrough 31: a
#: lock handed over outside git was audited with today's source records, "at:" and "read:", and nothing said so).
UNCOMPARED = ("the source records above are today's: a lock pins each fact's source id and locator, not the record, "
              "and no commit here holds this lock file to compare them with (a lock committed in a git registry is "
              "compared)")


def sources_since_lock(root: Root, lock_file: Any, ids: Iterable[str]) -> tuple[SourceSinceLock, ...]:
    """:func:`compared_since_lock`'s sources alone. Raises as it does."""
    return compared_since_lock(root, lock_file, ids)[0]


def compared_since_lock(
    root: Root, lock_file: Any, ids: Iterable[str]
) -> tuple[tuple[SourceSinceLock, ...], bool]:
    """Each source of ``ids`` (those the facts of a lock cite) whose record today differs from its record at the
    commit that last wrote ``lock_file`` (a path in ``root``'s git work tree): a field of :data:`DOCUMENT_FIELDS`,
    or the registry document it names (``source.path``) with other bytes, and whether the comparison was made:
    :func:`read_at_lock`'s first two, reading no stored excerpt. Raises as it does."""
    since, compared, _ = read_at_lock(root, lock_file, ids, {}, ())
    return since, compared


def read_at_lock(
    root: Root, lock_file: Any, ids: Iterable[str], sources: Mapping[str, Source], excerpt_ids: Iterable[str],
    notes: list[str] | None = None,
) -> tuple[tuple[SourceSinceLock, ...], bool, tuple[str, dict[str, StoredText]] | None]:
    """What an audit of a lock reads at the commit that holds ``lock_file`` (:func:`passprice.locks.lock_commit`:
    its path's last commit, or for a file written out of git the one its ``[lock] digest`` finds), from one lookup of
    that commit (``git rev-parse``, ``status``, ``log``; a file no commit holds at its path searches the history by
    its digest) and one read of the blobs
    (:func:`passprice.gitread.read_named`: a ``cat-file --batch-check`` and a ``cat-file --batch``): 5 git processes
    for the sources' comparison and the excerpts together, where each made its own lookup and read (10, a new
    user's finding counted by tests/test_leftovers_25b.py; tests/test_left131.py).

    First, each source of ``ids`` (those the facts of a lock cite) whose record today differs from its record at
    that commit: a field of :data:`DOCUMENT_FIELDS`, or the registry document it names (``source.path``) with other
    bytes. Nothing when a record did not read at that commit (it was added since: the lock's facts cited another
    record then, which the lock's own pins show). Session 24: an audit of an old lock showed today's source document
    as its. Second, whether the comparison was made: ``False`` when no commit holds the lock file as it is (the
    embedded registry, a folder that is no git work tree, a lock file whose bytes no commit holds, git failing),
    for the audit's line saying its source records are today's (walkthrough 31). Third, for
    each source of ``excerpt_ids`` whose record (today's, of ``sources``) names a stored excerpt that git holds at
    that commit, that excerpt as it was then (:func:`passprice.sources.stored_text_of`), with the commit: what
    ``audit`` of a lock checks its quotes against (an old lock's hyphen was NOT FOUND in today's excerpt, which an
    em dash had since replaced: tests/test_walk128.py); ``None`` when no commit holds the lock file as it is. An
    excerpt git cannot give, or past :data:`passprice.sources.EXCERPT_BYTES`, is left out (today's is checked): the
    records and documents are then read again without the excerpts. A document past
    :data:`passprice.gitread.NAMED_READ_BYTES` is not read but streamed (:func:`passprice.gitread.blob_sha256`).
    Raises :class:`passprice.gitread.BlobTooLarge` (exit 2), one line naming ``COMMIT:PATH``, its size and the cap,
    for a record past a source record's cap (:func:`passprice.schema.kind_cap`, at least
    :data:`passprice.schema.MAX_FILE_BYTES`) or a document past :data:`passprice.gitread.NAMED_BYTES` at that
    commit (left54: read whole, however large); nothing else. Why the commit was not looked up at the lock's path
    (git's index marking it ``assume-unchanged`` or ``skip-worktree``, a git stopped past its bound) is added to
    ``notes``, a line each (:func:`passprice.locks.lock_commit`)."""
    import subprocess
    import tomllib
    from pathlib import Path

    from passprice import schema
    from passprice.gitread import BlobTooLarge, Unread, blob_sha256, read_named
    from passprice.locks import lock_commit
    from passprice.schema import toml_loads
    from passprice.sources import EXCERPT_BYTES, stored_text_of

    ids = sorted(set(ids))
    if root.embedded:
        return (), False, None
    # the commit holding the lock file as it is: its path's last commit, else the one its [lock] digest finds (a lock
    # written out of git, tests/test_fix188.py), as reproduce finds it
    held = lock_commit(root, Path(lock_file), notes)
    if held is None:
        return (), False, None  # changed since its commit (made on today's records), or no commit holds it
    top, commit, when = held
    try:
        here = root.path.resolve().relative_to(top.resolve())
        folder = here / "sources"
        today = {source_id: now for source_id in ids if (now := _table(root, source_id)) is not None}

        def record(source_id: str) -> str:
            return f"{commit}:{(folder / f'{source_id}.toml').as_posix()}"

        def document(path: str) -> str:
            return f"{commit}:{(here / path).as_posix()}"

        excerpts = {sid: document(excerpt) for sid in dict.fromkeys(excerpt_ids)
                    if sid in sources and (excerpt := sources[sid].excerpt) is not None}
        # every record, document and excerpt at the commit in one git read, however many sources (issue 13)
        documents = [document(now["path"]) for now in today.values() if isinstance(now.get("path"), str)]
        named = [*(record(i) for i in today), *documents]
        # Each within what its reader reads (tests/test_blobcap169.py: a 60 MB record or excerpt was read up to
        # 64 MiB): a record its kind's cap, an excerpt EXCERPT_BYTES; a document past 1 MiB is streamed, not read
        record_cap = (max(schema.kind_cap("source"), schema.MAX_FILE_BYTES),
                      "schema.MAX_FILE_BYTES, a source record's cap")
        caps = {**{record(i): record_cap for i in today},
                **{name: (EXCERPT_BYTES, "sources.EXCERPT_BYTES") for name in excerpts.values()}}
        try:
            then_bytes = read_named(top, [*named, *excerpts.values()], caps=caps, hashed=documents) \
                if named or excerpts else {}
        except BlobTooLarge:
            if not excerpts:
                raise
            # an excerpt past the cap is left out (today's is checked); a record or document past it is refused
            then_bytes = read_named(top, named, caps=caps, hashed=documents) if named else {}
        at = commit, {sid: stored_text_of(sources[sid], then_bytes[name], f"{commit[:12]}:{sources[sid].excerpt}")
                      for sid, name in excerpts.items() if name in then_bytes}
        out = []
        for source_id, now in today.items():
            text = then_bytes.get(record(source_id))
            if text is None:
                continue
            try:
                then = toml_loads(text.decode("utf-8")).get("source", {})
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if not isinstance(then, dict):
                continue  # a record whose source is no table did not read at that commit (attack93)
            changed = [f"{k}: {_shown(then.get(k))} → {_shown(now[k])}" for k in (*DOCUMENT_FIELDS, "excerpt")
                       if _shown(then.get(k)) != _shown(now[k])]
            path = now.get("path")
            if path is not None and path == then.get("path"):
                old = then_bytes.get(document(path))
                try:
                    # The commit's past 1 MiB streamed through git (blob_sha256), today's hashed in chunks
                    # (_work_tree_digest): neither held. Today's was read whole, up to 64 MiB (a 60 MB document took
                    # the audit from 37 MB to 96 MB; tests/test_bigread173.py, docs/PERFORMANCE.md).
                    if isinstance(old, Unread):
                        streamed = blob_sha256(top, old.blob)
                        if streamed is not None and (today_digest := _work_tree_digest(root, path)) is not None \
                                and f"sha256:{streamed}" != today_digest:
                            changed.append(f"{path} rewritten")
                    elif old is not None and (today_digest := _work_tree_digest(root, path)) is not None \
                            and document_digest(old) != today_digest:
                        changed.append(f"{path} rewritten")
                except (InputError, OSError):
                    pass
            if changed:
                out.append(SourceSinceLock(source_id, commit, when, tuple(changed)))
        return tuple(out), True, at
    except BlobTooLarge:
        raise  # a record or document past the cap as committed: refused by name (left54), not passed over
    except (InputError, OSError, ValueError, subprocess.CalledProcessError):
        return (), False, None


def _work_tree_digest(root: Root, path: str) -> str | None:
    """The identity (:func:`document_digest`) of the registry document ``path`` (relative to ``root``) as it is
    today, hashed in chunks, never read whole (:func:`passprice.lineage.hashed_file`, as ``check`` and a review of a
    work tree hash it, whatever its size); ``None`` when it is outside the registry or no regular file
    (:func:`passprice.registry.document_problem`: nothing is read) or cannot be read. Raises nothing."""
    from passprice.lineage import hashed_file
    from passprice.registry import document_problem

    if document_problem(root, path) is not None:
        return None
    found = hashed_file(root.path / path)
    return f"sha256:{found}" if found is not None else None


def excerpts_at_lock(
    root: Root, lock_file: Any, sources: Mapping[str, Source], ids: Iterable[str]
) -> tuple[str, dict[str, StoredText]] | None:
    """The commit that last wrote ``lock_file`` and, for each source of ``ids`` whose record (today's, of
    ``sources``) names a stored excerpt that git holds at that commit, that excerpt as it was then:
    :func:`read_at_lock`'s third, comparing no source record. Raises nothing."""
    from passprice.gitread import BlobTooLarge

    try:
        return read_at_lock(root, lock_file, (), sources, ids)[2]
    except BlobTooLarge:  # no record or document is read here: only an excerpt, left out
        return None


def excerpts_line(commit: str | None, replaced: Iterable[str]) -> str:
    """Which stored excerpts an audit of a lock checked its quotes against, one line: those committed with the lock
    (``commit``) where they differ from today's (``replaced``, the source ids), else today's registry's, saying
    whether they are the lock's commit's too; ``commit`` ``None``: no commit holds the lock file. Raises nothing."""
    replaced = sorted(replaced)
    if commit is None:
        return ("quotes were checked against today's registry's stored excerpts: no commit here holds this lock file "
                "to read those it was made under")
    if not replaced:
        return (f"quotes were checked against today's registry's stored excerpts, the same as at the lock's commit "
                f"{commit[:12]}")
    return (f"quotes were checked against the stored excerpts as committed with the lock ({commit[:12]}) where "
            f"today's differ: {', '.join(replaced)}; the others are today's, the same")
