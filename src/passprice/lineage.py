"""Every price can be traced backwards: from a source (or one fact) to the facts that cite it, the facts derived from
those, and the servings and locks whose prices really rest on them — and what those locks would say if the source
were withdrawn.

*Citing* a source means naming it as a fact's ``source`` or as the source of a figure in the fact's derivation.
*Withdrawing* a source demotes every fact citing it to ``assumed``, and with them every fact derived from a demoted
one (a derivation is only as good as its inputs). A serving or lock *rests on* a fact when its price does: the
price's own ``rests_on`` (:class:`~passprice.serving.ServingCost`, recorded in each lock), not every fact the lock
happens to pin (every lock pins ``host.stream``; only a price with sequences in host memory rests on it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.derivations import Derivation, Finding, dependants, recheck_all
from passprice.errors import InputError, problem_lines
from passprice.facts import Fact, Provenance, weakest
from passprice.files import is_there, shell_word
from passprice.registry import Root, folder_problem
from passprice.sources import (
    QuoteCheck,
    Source,
    check_sources,
    cited_ids,
    excerpt_named,
    excerpt_words,
    load_source,
    missing_sources,
    quotes_counted,
    quotes_summary,
    source_quote_checks,
    stored_texts,
)
from passprice.tables import markdown_code, markdown_prose, markdown_table, markdown_text, text_table

# --- the facts of the registry ---------------------------------------------------------------------------------------


@attrs.frozen
class FactRef:
    """A registered fact: the ``kind`` of record holding it (``card``, ``draft``, ``routing`` or ``stack``), the
    record's ``name`` and the fact's ``path`` in its file (``streams.read``, ``acceptance.1``, ``hot_share``,
    ``share.read``)."""

    kind: str
    record: str
    path: str

    @property
    def lock_path(self) -> str:
        """The path a lock and a price name it by: the card path, ``draft.acceptance.N``, ``routing.hot_share`` or
        ``stack.share.read``."""
        return f"{self.kind}.{self.path}" if self.kind in ("draft", "routing", "stack") else self.path

    def __str__(self) -> str:
        return f"{self.record}:{self.path}"


@attrs.frozen
class Record:
    """A card or drafting method as read: ``kind``, ``name``, its ``file`` and its ``facts`` by path."""

    kind: str
    name: str
    file: Path
    facts: Mapping[str, Fact]

    def ref(self, path: str) -> FactRef:
        """The :class:`FactRef` of fact ``path`` of this record."""
        return FactRef(self.kind, self.name, path)


def load_records(root: Root, stacks: bool = False) -> tuple[list[Record], list[str]]:
    """Every card, drafting method and routing record of ``root`` that reads (schema, then building it; its sources
    are not checked here), and one line per problem of each that does not; with ``stacks``, every serving stack's
    facts too (by their paths in the stack file, each card's as ``cards.CARD.PATH``: what an audit of a source
    cites, :func:`source_lineage`; ``check``'s own look at stacks is :mod:`passprice.stacks`')."""
    from passprice.cards import read_card
    from passprice.drafts import method_from_document
    from passprice.routing import routing_from_document

    records: list[Record] = []
    problems: list[str] = []
    for kind, folder in (("card", root.cards), ("draft", root.drafts), ("routing", root.routing)):
        problem = folder_problem(folder, root)
        if problem is not None:  # a file where the folder should be: one line, the other kinds still read
            problems.append(problem)
            continue
        for name in root.names(folder):
            path = folder / f"{name}.toml"
            try:
                if kind == "card":  # as load_card reads it (kept by passprice.cache), its sources looked up below
                    facts = dict(read_card(root, path).facts())
                    records.append(Record(kind, name, path, facts))
                    continue
                document = schema.load(path, kind, root.schema)
                if kind == "draft":
                    facts = method_from_document(name, document, str(path)).facts()
                else:
                    routing = routing_from_document(name, document, str(path))
                    facts = {p.split(".", 1)[1]: f for p, f in routing.facts().items()}
            except InputError as e:
                problems += problem_lines(e)
                continue
            records.append(Record(kind, name, path, facts))
    if stacks:
        records += _stack_records(root, problems)
    return records, problems


def _stack_records(root: Root, problems: list[str]) -> list[Record]:
    """Each serving stack of ``root`` that reads as a :class:`Record` of kind ``stack`` (its facts by their paths
    in its file); one line in ``problems`` per stack that does not."""
    from passprice.stacks import LOCK_PREFIX, stack_from_document

    out: list[Record] = []
    if folder_problem(root.stacks) is not None:
        return out
    for name in root.names(root.stacks):
        path = root.stacks / f"{name}.toml"
        try:
            stack = stack_from_document(name, schema.load(path, "stack", root.schema), str(path))
        except InputError as e:
            problems += problem_lines(e)
            continue
        out.append(Record("stack", name, path, {p.removeprefix(LOCK_PREFIX): f for p, f in stack.lock_facts().items()}))
    return out


def review(
    root: Root, unreadable: list[str] | None = None, documents: Callable[[str], str | None] | None = None,
    undated: list[str] | None = None, loaded: dict[str, Source] | None = None, read: list[Record] | None = None,
) -> tuple[list[str], list[str]]:
    """``passprice check``'s look at lineage: problems (a fact citing a source that is not registered, a derived fact
    that no longer follows from its inputs — naming each input that changed —, one source figure quoted with two
    values by two derivations (:func:`passprice.stale.figure_quotes`), a source file that does not read)
    and warnings (a source nothing cites), one line each naming the file. The problems that are bad files — a
    derivation that is ``broken`` (a cycle, a formula that does not evaluate), a source whose ``path`` is no
    document of the registry or does not hash to its ``sha256`` (:func:`document_hashes`, ``documents`` as there) —
    are appended to ``unreadable`` too (``check`` reports them on stderr, exit 2). ``undated``, when given, gains the
    ids of the source records that read and say ``retrieved = "unknown"`` (:func:`passprice.sources.undated`);
    ``loaded``, when given, gains every source record that reads, by id (each loaded once: check's look at the
    folders of the documents they name, :func:`passprice.check.documents_alike`, reads them there); ``read``, when
    given, gains every card, drafting method and routing record that reads (:func:`load_records`: check's look at
    quotes, :func:`quote_problems`, reads them there)."""
    records, _ = load_records(root)  # a file that does not read is reported by check's own validation
    if read is not None:
        read.extend(records)
    problems: list[str] = []
    cited: set[str] = set()
    from passprice import snapshot

    sources_there = folder_problem(root.sources, root) is None  # else every citation is missing: said once, by check
    # A record's derivations read its own facts alone: inside a snapshot (one read of the registry), records of
    # the same kind and bytes (a card copied under another name) are rechecked once.
    rechecked = [snapshot.made(("recheck", record.kind, schema.read_bytes(record.file)),
                               functools.partial(recheck_all, record.facts)) for record in records]
    stale = {(record.file, f.path) for record, findings in zip(records, rechecked, strict=True) for f in findings}
    for record, findings in zip(records, rechecked, strict=True):
        if sources_there:
            problems += missing_sources(root, record.facts, str(record.file))
        for f in findings:
            problems.append(f"{record.file}: {f.message}{copied_inputs(records, record, f, stale)}")
            if f.kind == "broken" and unreadable is not None:
                unreadable.append(problems[-1])
        for path, fact in record.facts.items():
            cited.update(source_id for _, source_id in cited_ids(path, fact))
    from passprice.stale import figure_quotes

    def shown(file: Path) -> str:
        return str(file.relative_to(root.path)) if file.is_relative_to(root.path) else str(file)

    problems += figure_quotes((shown(r.file), r.facts) for r in records)  # one figure quoted twice, two ways
    if sources_there:
        # A stack's citations as `price --stack` and `lock --stack` judge them (stacks.load_stack's require_sources):
        # until round 23 check passed a stack citing a source no record holds, which both refused.
        from passprice.sources import untraceable_sources
        from passprice.stacks import LOCK_PREFIX

        for record in _stack_records(root, []):  # a stack that does not read is check's own problem
            facts = {f"{LOCK_PREFIX}{p}": f for p, f in record.facts.items()}
            problems += untraceable_sources(root, facts, shown(record.file))
    cited.update(_stack_and_run_sources(root))
    if sources_there:
        pinned, more = pinned_sources(root)
        problems += more
        cited.update(pinned)
    if loaded is None:
        loaded = {}
    found, warnings = check_sources(root, cited, unreadable, loaded)
    if undated is not None:
        from passprice.sources import undated as undated_ids

        undated += undated_ids(loaded.values())
    hashed = document_hashes(root, documents, loaded) if sources_there else []
    uncompared: list[str] = []
    copies = excerpt_copies(root, loaded, documents, uncompared) if sources_there else []
    if unreadable is not None:
        unreadable += hashed
    # A measured fact citing the place another card's measured fact cites, stale or not (walkthrough 117); of a
    # review's revision (``documents`` given) too, whose warnings of check on HEAD are check's lines: a plain copy of
    # the H100 SXM5's card read "1 warning of check on HEAD" where check printed 9 (tests/test_fix154.py).
    from passprice.addedfacts import borrowed_lines

    warnings = [*warnings, *uncompared, *borrowed_lines({shown(r.file): r.facts for r in records if r.kind == "card"})]
    warnings += measured_from_datasheets(records, loaded, shown)
    warnings += unchecked_documents(root, records, loaded, shown)
    return problems + found + hashed + copies, warnings


def unchecked_documents(root: Root, records: Iterable[Record], sources: Mapping[str, Source],
                        shown: Callable[[Path], str]) -> list[str]:
    """One warning for each source record of kind ``registry`` in ``sources`` (by id) naming no stored excerpt
    whose document is a regular file of ``root`` (:func:`passprice.sources.registry_document`) and that a fact of
    ``records`` quotes (its locator's, or a derivation input's, quoted spans): those quotes are never checked
    (``audit`` says ``not checked (… has no stored text)``), while the text they quote lies in the registry: ``add
    excerpt = "PATH"`` to the record. A new user's ``notes/h200-babelstream.md``, cited by a measured share, was
    never checked, and nothing said how to have it checked. ``shown`` words each record's file. Raises nothing."""
    from passprice.sources import _quoted_locators, quoted_spans, registry_document

    quoting: dict[str, list[str]] = {}
    for record in records:
        for path, fact in record.facts.items():
            for _, sid, locator in _quoted_locators(fact):
                if sid is not None and quoted_spans(locator):
                    quoting.setdefault(sid, []).append(f"{shown(record.file)}: {path}")
    out = []
    for sid, facts in sorted(quoting.items()):
        source = sources.get(sid)
        document = registry_document(root, source) if source is not None else None
        if document is None:
            continue
        facts = list(dict.fromkeys(facts))
        named = ", ".join(facts[:3]) + (f" and {len(facts) - 3:,} more" if len(facts) > 3 else "")
        out.append(f"sources/{sid}.toml: its document {document} is in this registry but the record names no "
                   f"excerpt, so the quotes citing it are never checked ({named}); add excerpt = \"{document}\" "
                   "to the record (and pin it: check then gives its excerpt_sha256)")
    return out


def measured_from_datasheets(records: Iterable[Record], sources: Mapping[str, Source],
                             shown: Callable[[Path], str]) -> list[str]:
    """One warning for each ``measured`` fact of ``records`` whose own source is of kind ``datasheet`` in
    ``sources`` (by id): a datasheet is no measurement (:class:`passprice.facts.Provenance`: ``measured`` is a public,
    reproducible measurement), and such a fact passed ``check``, ``audit`` and the review with nothing said
    (tests/test_fix190.py). ``shown`` words each record's file. Raises nothing."""
    out = []
    for record in records:
        for path, fact in record.facts.items():
            source = sources.get(fact.source) if fact.source is not None else None
            if fact.provenance is Provenance.MEASURED and source is not None and source.kind == "datasheet":
                out.append(f"{shown(record.file)}: {path}: measured, citing {source.id}, a datasheet: measured needs a "
                           "public reproducible measurement; cite one, or say estimated or published")
    return out


def quote_problems(root: Root, sources: Mapping[str, Source] | None = None,
                   only: tuple[Path, str] | None = None, records: Iterable[Record] | None = None,
                   warnings: list[str] | None = None) -> list[str]:
    """``check``'s look at quotes: one problem line for each fact of a card, drafting method, routing record or
    serving stack of ``root`` (a stack's by its key in the stack file, as the review names it), and each measured run
    (``registry/measurements/FILE.toml: run.INDEX (ID)``), whose quotes of a source are NOT FOUND in that source's
    stored excerpt, by
    :func:`passprice.sources.quote_check` of the spans of its locators citing that source alone (``only``), the one
    look-up ``audit --source`` and the review (:func:`passprice.review.quotes._quotes_checked`) make: ``FILE: KEY: its
    quotes of SOURCE are NOT FOUND in its stored excerpt EXCERPT: …``. A new user's excerpt line edited (``FP32 30.3
    teraFLOPs`` to ``30.0``) and its ``excerpt_sha256`` re-pinned read "all holds" here and in the pre-commit hook,
    while ``audit`` said NOT FOUND and the review failed (tests/test_fix190.py). A source with no usable stored text is
    no problem here (``audit`` says ``not checked``); the look-ups are bounded as an audit's
    (:class:`passprice.sources.Lookups`: past it, a span is not looked up), and the facts whose quotes were left past it
    are one problem line (the first three named, then counted): a card sorting first spending the bound on a 1 MB
    excerpt kept an edited excerpt's lost quote unsaid. A serving stack's facts and the measured runs were not looked
    up: a stack's quote of ``'VRAM scratch buffer: 70.50 MiB'`` edited out of its excerpt, and a run's ``'| 145.55 ±
    0.80 |'`` row (the run a stack is fitted to), the excerpt re-pinned, read "all holds" (tests/test_attack53.py). A
    record that does not read is check's own problem. A fact whose quotes are found but state another figure than its
    own (state ``MISMATCH``, :func:`passprice.sources.figures_quoted`) is a problem too: ``FILE: KEY: its quote of
    SOURCE 'SPAN' states 8 TB/s, not its value 8.2 TB/s: …`` (tests/test_fix53w.py). ``sources``: the source records
    that read, by id (by default read here); ``records``: the cards, drafting methods and routing records that read (by
    default read here, :func:`load_records`; the stacks are read here either way). ``only``: the ``(file, fact path)``
    of one fact, looked up alone (``fact set`` and ``fact recompute`` warn with its lines: a locator set to a quote the
    excerpt lacks was written without a word, tests/test_fix53w.py).

    The lines of a whole registry's look (``only`` not given) are kept in the cache of validated files
    (:mod:`passprice.cache`, kind ``quotes``) under a key made of everything they are made from
    (:func:`_quotes_keyed`): each citing fact whole (its value and unit, which a quote's figure is held to, its
    locators, its derivation's inputs'), its file and key, and each cited source's excerpt as
    :func:`passprice.sources.excerpt_state` reads it (the problem with it, or the sha256 of its bytes), with the
    code's stamp: a warm ``check`` of an unchanged registry looks nothing up, and an excerpt edited within the same
    second (its bytes, so its digest, not its status, key it) misses. An entry that is not whole and ours, or not a
    list of lines, is a miss; ``--no-cache`` neither reads nor writes one (tests/test_quote53.py). Raises
    nothing.

    ``warnings``, when given, gains a line for each quote stating a fact's figure among others of its dimension,
    nothing in the record saying which is the card's (:func:`passprice.quotecolumn.which_figures`): ``FILE: KEY: its
    quote of SOURCE 'SPAN' states A, B and C: which is this card's? …``; kept in the same cache entry."""
    from passprice import cache
    from passprice.errors import escaped
    from passprice.quotecolumn import which_figures
    from passprice.sources import (
        MISMATCH,
        QUOTES_MOST,
        SEARCHED_MOST,
        Lookups,
        _quoted_locators,
        quote_check,
        read_sources,
        stored_texts,
    )

    records = load_records(root, stacks=True)[0] if records is None else [*records, *_stack_records(root, [])]
    names: dict[Path, str] = {}

    def shown(file: Path) -> str:  # once a record file (a relative_to a fact was 90 % of a warm look)
        name = names.get(file)
        if name is None:
            name = names[file] = str(file.relative_to(root.path)) if file.is_relative_to(root.path) else str(file)
        return name

    cites = []  # (record's file, key, fact, the sources its quotes cite, its locators: _quoted_locators)
    alone = None if only is None else (only[0].resolve(), only[1])
    facts = [(record.file, path, fact) for record in records for path, fact in record.facts.items()]
    for file, path, fact in facts if alone is not None else [*facts, *_run_facts(root)]:
        if alone is not None and (path != alone[1] or file.resolve() != alone[0]):
            continue
        quoted = _quoted_locators(fact)
        sids = list(dict.fromkeys(sid for _, sid, _ in quoted if sid is not None))
        if sids:
            cites.append((file, path, fact, sids, quoted))
    if not cites:
        return []
    if sources is None:  # else the records check's look at lineage loaded, each once
        sources = read_sources(root)[0]
    entry_key = (cache.key("quotes", b"", _quotes_keyed(root, cites, sources, shown))
                 if only is None and cache.enabled() else None)
    if entry_key is not None:
        kept = cache.read(entry_key)
        lines = kept.get("lines") if kept is not None else None
        warned = kept.get("warnings", []) if kept is not None else None  # (kept only when there are any)
        if (isinstance(lines, list) and all(isinstance(line, str) for line in lines) and isinstance(warned, list)
                and all(isinstance(line, str) for line in warned)):
            if warnings is not None:
                warnings += warned
            return list(lines)
    wanted = [sid for c in cites for sid in c[3] if sid in sources and sources[sid].excerpt is not None]
    texts = stored_texts(root, sources, wanted)
    left = Lookups()
    out = []
    unlooked: list[str] = []  # the facts whose quotes were past the bound, each as "FILE: KEY (SOURCE)"
    which: list[str] = []  # a quote stating the figure among others, nothing saying which is the card's
    for file, path, fact, sids, _ in cites:
        for sid in sids:
            stored = texts.get(sid)
            if stored is None or stored.flat is None:
                continue
            found = quote_check(path, fact, texts, left, only=sid)
            if found.state != "NOT FOUND" and found.past:
                unlooked.append(f"{shown(file)}: {path} ({sid})")
            if found.state == "checked":
                which += [f"{shown(file)}: {path}: {escaped(said)}" for said in which_figures(path, fact, sid)]
            if found.state == MISMATCH:
                out += [f"{shown(file)}: {path}: {escaped(said)}: the value and the words it cites disagree; "
                        "quote the words of the document stating the value, or set the value they state"
                        for said in found.mismatch]
            if found.state == "NOT FOUND":
                out.append(f"{shown(file)}: {path}: its quotes of {sid} are NOT FOUND in its stored excerpt "
                           f"{sources[sid].excerpt} ({found.why}): restore the quoted words there, or quote the "
                           "words it holds")
    if unlooked:
        # past the bound a span went unsaid: one record's quotes of a 1 MB excerpt sorting first spent it, and the
        # H100 page's excerpt line a card quotes edited and re-pinned read "all holds" (tests/test_attack53.py)
        more = f", and {len(unlooked) - 3:,} more" if len(unlooked) > 3 else ""
        out.append(f"{'; '.join(unlooked[:3])}{more}: quotes not looked up in their stored excerpts, past the "
                   f"{SEARCHED_MOST >> 20} MiB of stored text and {QUOTES_MOST:,} quoted spans check looks up in all "
                   f"({len(unlooked):,} facts' quotes left): a quote its excerpt lacks would go unsaid; quote fewer "
                   "spans of the largest stored excerpts")
    if entry_key is not None:
        cache.store(entry_key, {"lines": out, "warnings": which} if which else {"lines": out})
    if warnings is not None:
        warnings += which
    return out


def _quotes_keyed(root: Root, cites: Sequence[tuple[Path, str, Fact, list[str], list[tuple[str, str | None, str]]]],
                  sources: Mapping[str, Source], shown: Callable[[Path], str]) -> bytes:
    """What :func:`quote_problems`' lines are made from, as bytes for its cache key: for each citing fact (in order:
    the look-ups share one bound, :class:`passprice.sources.Lookups`) its file as shown, key, the fact whole (its
    ``repr``: value, unit, provenance, source, locator, derivation with its inputs: a value moved under an unchanged
    locator is a MISMATCH the key must miss for, tests/test_fix53w.py), and each locator it quotes with (what,
    source id, locator: :func:`passprice.sources._quoted_locators`); then for each
    source it cites, the record's excerpt and the excerpt as :func:`passprice.sources.excerpt_state` reads it (the
    problem, or why it did not read, or its bytes' sha256; inside ``check``'s snapshot, what its look at
    ``sources/`` read, nothing read again). JSON, UTF-8 (a lone surrogate kept). Raises nothing."""
    import json

    from passprice.sources import excerpt_state

    facts = [[shown(file), path, repr(fact), quoted] for file, path, fact, _, quoted in cites]
    texts = []
    for sid in dict.fromkeys(sid for c in cites for sid in c[3]):
        source = sources.get(sid)
        if source is None:
            texts.append([sid, None])
            continue
        problem, unread, _, digest = excerpt_state(root, source)
        texts.append([sid, source.excerpt, problem, unread, digest])
    return json.dumps([facts, texts], ensure_ascii=False).encode("utf-8", "surrogatepass")


def _run_facts(root: Root) -> list[tuple[Path, str, Fact]]:
    """``(file, key, fact)`` of each measured run of ``root`` whose locator quotes its source, for
    :func:`quote_problems`: the run as a fact of its measured tokens/s (unit :data:`passprice.sources.RUN_UNIT`, which
    :func:`passprice.sources.figures_quoted` holds to the run's rule; its ``source_id`` and ``locator``), keyed
    ``run.INDEX (ID)`` in its measurement file. A file that does not read is ``check``'s own problem (left out here).
    Raises nothing."""
    from passprice.measurements import load_runs
    from passprice.sources import RUN_UNIT

    try:
        runs = load_runs(root, problems=[])
    except InputError:
        return []
    return [(root.measurements / f"{run.source}.toml", f"run.{run.index} ({run.id})",
             Fact(value=run.tokens_per_s, amount=run.tokens_per_s, unit=RUN_UNIT, provenance=Provenance.MEASURED,
                  source=run.source_id, locator=run.locator))
            for run in runs if run.locator and run.source_id]


def _shown_file(root: Root, file: Path) -> str:
    """``file`` as a problem line of ``check`` names it: relative to ``root`` when below it. Raises nothing."""
    return str(file.relative_to(root.path)) if file.is_relative_to(root.path) else str(file)


def _run_cites(root: Root) -> list[tuple[str, str, Fact, list[str]]]:
    """``(file, key, fact, source ids)`` of each measured run of ``root`` whose locator quotes its source
    (:func:`_run_facts`, the file as ``check`` names it: :func:`_shown_file`), for the review's look at the quotes a
    rewritten excerpt lost (:mod:`passprice.sourcechange`). Raises nothing."""
    return [(_shown_file(root, file), key, fact, [fact.source]) for file, key, fact in _run_facts(root)
            if fact.source is not None]


def borrowed_in(root: Root, file: Path) -> list[str]:
    """:func:`passprice.addedfacts.borrowed_lines` of the card file ``file`` among every card of ``root`` that reads:
    what ``fact set`` and ``fact recompute`` warn of after writing a card (walkthrough 117: the MI300X's file copied
    for an MI325X kept its BabelStream shares ``measured`` through ``fact recompute``, and no command said so but the
    review). Raises nothing (a card that does not read is left out)."""
    from passprice.addedfacts import borrowed_lines

    def shown(f: Path) -> str:
        return str(f.relative_to(root.path)) if f.is_relative_to(root.path) else str(f)

    try:
        records, _ = load_records(root)
    except InputError:
        return []
    return borrowed_lines({shown(r.file): r.facts for r in records if r.kind == "card"}, shown(file))


#: The words :func:`copied_inputs` adds to a stale fact's line, which ``check``'s ``fact recompute`` hint reads.
COPIED_INPUTS = "cites the same place as another card's"


def copied_inputs(records: Iterable[Record], record: Record, finding: Finding,
                  unsettled: Container[tuple[Path, str]] = ()) -> str:
    """What ``check`` adds to the line of a card's ``stale`` fact citing the very place (source and locator) the
    same fact of another card cites: a copied card's fact (README, "A card of your own"), whose derivation's figures
    are the other card's. Walkthrough 42: the MI300X's file copied for an MI325X, its bandwidth set to 6 TB/s,
    ``check`` called the three stream shares stale (``recomputed from today's inputs it is 0.645, not 0.7302``) and
    said to run ``fact recompute``, which writes the MI300X's BabelStream rate over the MI325X's bandwidth as a
    ``measured`` share of the MI325X, 12 % below the one carried over. The other card is one whose fact still follows
    from its inputs (not in ``unsettled``, the ``(file, path)`` of every fact with a finding): its figures fit it, so
    they are its own; of two copies both stale neither is said to be the other's. ``""`` where no such card cites the
    place or the finding is not a stale value. Raises nothing."""
    if record.kind != "card" or finding.kind != "stale" or finding.follows:
        return ""
    fact = record.facts.get(finding.path)
    if fact is None or fact.source is None:
        return ""
    for other in records:
        theirs = other.facts.get(finding.path) if other.kind == "card" and other.file != record.file else None
        if (theirs is not None and (theirs.source, theirs.locator) == (fact.source, fact.locator)
                and (other.file, finding.path) not in unsettled):
            return (f"; it {COPIED_INPUTS} ({other.file}: {finding.path}): if copied "
                    "from there, its figures are that card's, so recompute it only where they hold for this card, "
                    "else cite this card's own (or mark it estimated or assumed) with `passprice fact set`")
    return ""


def document_hashes(root: Root, documents: Callable[[str], str | None] | None = None,
                    loaded: Mapping[str, Source] | None = None) -> list[str]:
    """One line for each source record of ``root`` stating both ``source.path`` (a registry document, a regular file
    :func:`passprice.registry.document_problem` passes) and ``source.sha256`` whose document does not hash to it (or
    cannot be read). A record naming ``notes/doc.md`` with its sha256, the document then edited alone (the figure a
    measured fact cites rewritten), passed ``check`` with 0 problems, the record's sha256 naming a copy the registry
    no longer holds (slip round 30). Each document is hashed in chunks, never read whole, or its identity
    (``sha256:…``) is asked of ``documents`` (a review's revision, whose root holds each document empty: ``None``
    there is no line); a record that does not read is :func:`passprice.sources.check_sources`'s problem, and with
    ``loaded`` (by id: what that check loaded), only its records are looked at, none loaded again. Raises nothing."""
    from passprice.registry import document_problem

    out = []
    for name in root.scan(root.sources):
        if loaded is not None:
            source = loaded.get(name)
            if source is None:
                continue  # it did not read: check_sources said so
        else:
            try:
                source = load_source(root, name)
            except InputError:
                continue
        if source.path is None or source.sha256 is None or document_problem(root, source.path) is not None:
            continue
        file = f"sources/{name}.toml"
        found: str | None
        if documents is not None:
            identity = documents(source.path)
            # An identity of another kind (a blob id) is no sha256 to compare: it cannot be read as one.
            found = (source.sha256 if identity is None
                     else identity.removeprefix("sha256:") if identity.startswith("sha256:") else None)
        else:
            found = hashed_file(root.path / source.path)
        if found is None:
            out.append(f"{file}: source.path: {source.path} cannot be read to compare with source.sha256")
        elif found != source.sha256:
            out.append(f"{file}: source.sha256: {source.sha256[:12]}… is not the sha256 of {source.path} (its bytes "
                       f"hash to {found}): the registry's document is not the copy that was read; restore it, or "
                       "re-read it and record its sha256")
    return out


def excerpt_copies(root: Root, loaded: Mapping[str, Source],
                   documents: Callable[[str], str | None] | None = None,
                   uncompared: list[str] | None = None) -> list[str]:
    """One problem line for each source record of ``loaded`` (by id: the records ``check`` read) naming both a
    registry document (``source.path``, a regular file :func:`passprice.registry.document_problem` passes) and a
    stored excerpt of it (``source.excerpt``, usable: :func:`passprice.sources.stored_text`) some of whose lines
    the document does not hold: each line of the excerpt's text for the source (its section, numbers and ``#``
    header taken out) is looked for in the document as a quote is looked up in a stored excerpt (every run of blanks
    one, each number whole: :meth:`passprice.sources.StoredText.holds`). ``FILE: source.excerpt: EXCERPT holds N
    lines NOT FOUND in DOCUMENT, the document it copies (source.path): 'LINE' …``, the first 3 shown. A new user's
    excerpt of ``notes/hx1-design.md`` edited (``6.4 TB/s`` to ``6.5``, its sha256 pinned anew) read "all holds": the
    quotes were checked against words the document does not hold (tests/test_fix55w.py). A document past
    :data:`passprice.sources.EXCERPT_BYTES`, or that cannot be read, is not compared, and ``uncompared`` (a list,
    :func:`review`'s warnings) is told so, a line a record (``… is not compared with DOCUMENT …: larger than
    1,048,576 bytes``), as is one that is no text (a NUL byte, or over 1 % of its characters not UTF-8: a PDF); one
    with a few bytes not UTF-8 (a Latin-1 accent) is read with U+FFFD for each, its problem line saying where the
    first is. Either passed in silence (check "all holds", the excerpt's line edited to 6.5 TB/s that the document
    does not hold: tests/test_attack56.py). With ``documents`` (a review's side: the
    identity of each document there, :meth:`passprice.review.sides.Side.document`), one whose bytes in ``root`` are
    not that identity's (a revision's folder holds each document empty) is not compared either. A line that is a
    whole line of the document is found without a search; the others' searches are bounded as an audit's
    (:data:`passprice.sources.SEARCHED_MOST` characters in all), the lines past it not looked up. Raises
    nothing."""
    import hashlib

    from passprice.errors import escaped
    from passprice.files import read_regular
    from passprice.registry import document_problem
    from passprice.sources import EXCERPT_BYTES, LINEAR_FROM, SEARCHED_MOST, StoredText, _whole, stored_text

    out = []
    left = SEARCHED_MOST
    for name, source in sorted(loaded.items()):
        if source.path is None or source.excerpt is None or document_problem(root, source.path) is not None:
            continue
        stored = stored_text(root, source)
        if stored.text is None or stored.flat is None:
            continue  # not usable: check and audit say why
        try:
            data = read_regular(root.path / source.path, EXCERPT_BYTES, refuse=_too_large(source.path))
        except (InputError, OSError) as e:
            if uncompared is not None:
                uncompared.append(f"sources/{name}.toml: source.excerpt: {source.excerpt} is not compared with "
                                  f"{source.path}, the document it copies (source.path): "
                                  f"{escaped(str(e).removeprefix(source.path + ': '))}")
            continue
        try:
            text = data.decode("utf-8")
            undecoded = ""
        except UnicodeDecodeError as e:
            text = data.decode("utf-8", errors="replace")
            where = f"its byte 0x{data[e.start]:02x} at offset {e.start:,}"
            if b"\0" in data or 100 * text.count("\ufffd") > len(text):
                # no text (a PDF, an image): its excerpt is the text read from it, no copy of its bytes
                if uncompared is not None:
                    uncompared.append(f"sources/{name}.toml: source.excerpt: {source.excerpt} is not compared with "
                                      f"{source.path}, the document it copies (source.path): not UTF-8 text "
                                      f"({where})")
                continue
            undecoded = f" ({source.path} is not UTF-8: {where}, and any other such byte, read as U+FFFD)"
        if documents is not None:
            identity = documents(source.path)
            if identity is None or identity != "sha256:" + hashlib.sha256(data).hexdigest():
                continue  # not the document's bytes (a revision's folder holds it empty), as
                # sourcechange.document_digest words an identity (not imported: no pricing module imports it)
        flat = " ".join(text.split())
        document = StoredText(source.id, None, text=text, flat=flat)
        whole = {" ".join(line.split()) for line in text.splitlines()}
        size = 2 * max(len(flat), LINEAR_FROM)
        missing = []
        for line in stored.text.splitlines():
            wanted = " ".join(line.split())
            if not wanted or wanted in whole:
                continue
            if left < size:
                break
            left -= size
            if not document.holds(wanted):
                missing.append(wanted)
        if missing:
            shown = "; ".join(_whole(m) for m in missing[:3]) + (f"; {len(missing) - 3:,} more"
                                                                 if len(missing) > 3 else "")
            out.append(f"sources/{name}.toml: source.excerpt: {source.excerpt} holds {len(missing):,} "
                       f"line{'s' if len(missing) != 1 else ''} NOT FOUND in {source.path}, the document it copies "
                       f"(source.path){undecoded}: {escaped(shown)}: copy the lines from the document again (and pin "
                       "the excerpt's sha256 anew), or restore the document")
    return out


def _too_large(document: str) -> Callable[[int], None]:
    """:func:`passprice.files.read_regular`'s ``refuse`` of a registry document past
    :data:`passprice.sources.EXCERPT_BYTES` that :func:`excerpt_copies` compares with its excerpt: the line says its
    size and the bound. Raises :class:`InputError` when called."""
    from passprice.sources import EXCERPT_BYTES

    def refuse(size: int) -> None:
        raise InputError(f"{document}: larger than {EXCERPT_BYTES:,} bytes, the most of a document passprice reads "
                         f"to compare ({size:,} bytes)")

    return refuse


def hashed_file(path: Path) -> str | None:
    """The sha256 (hex) of the file at ``path``, read in chunks (whatever its size); ``None`` when it cannot be
    read or is no regular file once opened (a FIFO put in its place after it was looked at: opened without
    blocking, never read). Raises nothing."""
    import hashlib
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (OSError, ValueError):
        return None


def pinned_sources(root: Root) -> tuple[set[str], list[str]]:
    """The source ids the facts pinned by ``root``'s locks cite (a source a lock alone cites is cited: removing it
    would leave the lock's citation untraced), and one problem line per pinned citation of a source ``sources/`` no
    longer holds. A pull request re-citing a card to a renamed source record and deleting the old one passed
    ``check`` and the review while every lock's pinned facts (what ``audit LOCK`` and ``reproduce`` show) named a
    source "not registered": a citation nobody can trace. A lock that does not read is ``check``'s own problem."""
    from passprice.sources import SOURCE_ID

    ids: set[str] = set()
    problems: list[str] = []
    # Whether each cited id's record is there, looked at once a call (issue 13, session 33: 4,209 locks citing 37
    # sources built a path and stat'ed it once a pinned citation, about 250,000 times).
    there: dict[str, bool] = {}

    def registered(source_id: str) -> bool:
        found = there.get(source_id)
        if found is None:
            found = there[source_id] = not SOURCE_ID.fullmatch(source_id) or is_there(
                root.sources / f"{source_id}.toml")
        return found

    locks, _ = registered_locks(root)
    for file, lock in locks:
        missing: dict[str, list[str]] = {}
        for path, fact in lock.facts.items():
            for key, source_id in cited_ids(path, fact):
                ids.add(source_id)
                if not registered(source_id):
                    missing.setdefault(source_id, []).append(f"facts.{key}")
        for source_id, keys in missing.items():
            problems.append(
                f"{file}: {', '.join(keys)}: pins a citation of source {source_id!r}, which sources/ no longer holds: "
                f"the locked price cannot be traced to its documents (restore sources/{source_id}.toml, or re-lock "
                f"on today's citations: passprice lock --update -o {shell_word(file)})"
            )
    return ids, problems


def stale_after(facts: Mapping[str, Fact], path: str) -> list[Finding]:
    """The findings of the facts derived (directly) from fact ``path`` of a record: what an edit of ``path`` makes
    stale."""
    out = []
    for found in recheck_all(facts):
        if found.path in dependants(facts, path) or found.path == path:
            out.append(found)
    return out


@attrs.frozen
class Dependant:
    """A fact derived from a changed one: the changed ``input`` path, the ``fact`` derived from it, and what
    recomputing it found (``finding``: stale, mismatch or broken; ``None`` when it still follows)."""

    input: str
    fact: str
    finding: Finding | None

    def describe(self) -> str:
        """``streams.read: stale, recomputed 0.8615`` or ``streams.read: still follows``."""
        if self.finding is None:
            return f"{self.fact}: still follows"
        if self.finding.kind == "stale" and self.finding.expected is not None:
            return f"{self.fact}: STALE, recomputed {self.finding.expected}"
        return f"{self.fact}: {self.finding.kind.upper()}"

    def to_json(self) -> dict[str, Any]:
        """The dependant for ``--json``."""
        return {
            "input": self.input,
            "fact": self.fact,
            "finding": self.finding.to_json() if self.finding is not None else None,
        }


def changed_dependants(facts: Mapping[str, Fact], changed: Iterable[str]) -> list[Dependant]:
    """For each path in ``changed``, the facts of the record (``facts``, after the change) derived from it, and
    whether each still follows from its inputs (``passprice diff`` shows them under the change). Inside a snapshot
    (:mod:`passprice.snapshot`) the same fact objects and changed paths are answered once (copies of one card file
    share their fact objects, :func:`passprice.cards.document_and_facts`); the key is the objects themselves, held by
    the memo, as :func:`~passprice.derivations.recheck_all` keys its own."""
    from passprice import snapshot

    if not snapshot.active():
        return _changed_dependants(facts, changed)
    items, paths = tuple(facts.items()), tuple(changed)
    _held, found = snapshot.made(
        ("dependants", tuple((path, id(fact)) for path, fact in items), paths),
        lambda: (items, tuple(_changed_dependants(facts, paths))),
    )
    return list(found)


def _changed_dependants(facts: Mapping[str, Fact], changed: Iterable[str]) -> list[Dependant]:
    findings = {f.path: f for f in recheck_all(facts)}
    out = []
    for path in changed:
        for dependant in dependants(facts, path):
            out.append(Dependant(path, dependant, findings.get(dependant)))
    return out


# --- what cites what -------------------------------------------------------------------------------------------------


@attrs.frozen
class Citing:
    """A fact resting on the subject: its ``ref`` and ``fact``, and ``how``: for a source, ``source`` and/or
    ``figure NAME`` (a figure of its derivation); for a withdrawn fact, ``the fact itself``; for a fact derived from
    a demoted one, ``derived from PATH``."""

    ref: FactRef
    fact: Fact
    how: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The fact for ``--json``."""
        return {
            "record": self.ref.record,
            "kind": self.ref.kind,
            "path": self.ref.path,
            "lock_path": self.ref.lock_path,
            "value": self.fact.amount,
            "unit": self.fact.unit,
            "provenance": self.fact.provenance.value,
            "source": self.fact.source,
            "locator": self.fact.locator,
            "how": list(self.how),
        }


def citing_source(records: Iterable[Record], source_id: str) -> list[Citing]:
    """Every fact that cites ``source_id``: as its ``source``, or as the source of a figure of its derivation (a
    figure naming no source is read from the fact's own)."""
    out = []
    for record in records:
        for path, fact in record.facts.items():
            how = []
            if fact.source == source_id:
                how.append("source")
            if isinstance(fact.derivation, Derivation):
                how += [
                    f"figure {i.name}"
                    for i in fact.derivation.inputs
                    if i.kind == "figure" and (i.source or fact.source) == source_id and fact.source != source_id
                ]
            if how:
                out.append(Citing(record.ref(path), fact, tuple(how)))
    return out


def citing_sources(records: Iterable[Record]) -> dict[str, list[Citing]]:
    """:func:`citing_source` of every source id the ``records`` cite, by id, read in one pass over the facts (each
    list in the order :func:`citing_source` gives it)."""
    out: dict[str, list[Citing]] = {}
    for record in records:
        for path, fact in record.facts.items():
            named: list[str | None] = [fact.source]
            if isinstance(fact.derivation, Derivation):
                named += [i.source or fact.source for i in fact.derivation.inputs if i.kind == "figure"]
            for source_id in dict.fromkeys(s for s in named if s is not None):
                how = ["source"] if fact.source == source_id else []
                if isinstance(fact.derivation, Derivation) and fact.source != source_id:
                    how += [f"figure {i.name}" for i in fact.derivation.inputs
                            if i.kind == "figure" and (i.source or fact.source) == source_id]
                if how:
                    out.setdefault(source_id, []).append(Citing(record.ref(path), fact, tuple(how)))
    return out


def derived_closure(records: Iterable[Record], start: Iterable[FactRef]) -> list[Citing]:
    """The facts derived, directly or through other derived facts, from the facts ``start`` (within each fact's own
    record), each with the inputs it takes from the set; ``start`` itself left out."""
    by_record = {(r.kind, r.name): r for r in records}
    demoted = set(start)
    # A derivation reads facts of its own record: only the records holding a fact of ``start`` can change.
    touched = {(ref.kind, ref.record) for ref in demoted}
    out: list[Citing] = []
    changed = True
    while changed:
        changed = False
        for record in (r for key, r in by_record.items() if key in touched):
            for path, fact in record.facts.items():
                ref = record.ref(path)
                if ref in demoted or not isinstance(fact.derivation, Derivation):
                    continue
                inputs = [p for p in fact.derivation.facts() if record.ref(p) in demoted]
                if inputs:
                    demoted.add(ref)
                    out.append(Citing(ref, fact, tuple(f"derived from {p}" for p in inputs)))
                    changed = True
    return out


# --- what rests on them ----------------------------------------------------------------------------------------------


def _withdrawn(fact: Fact) -> Fact:
    return attrs.evolve(fact, provenance=Provenance.ASSUMED)


def _matches(
    ref: FactRef, card: str, method: str | None, routing: str | None = None, stack: str | None = None
) -> bool:
    return (
        (ref.kind == "card" and ref.record == card)
        or (ref.kind == "draft" and ref.record == method)
        or (ref.kind == "routing" and ref.record == routing)
        or (ref.kind == "stack" and ref.record == stack)
    )


def _method_name(method: str | None) -> str | None:
    if method is None:
        return None
    return Path(method).name.removesuffix(".toml")


def registry_record(root: Root, kind: str, file: Path) -> str | None:
    """The name of ``root``'s ``kind`` record (``card``, ``draft``, ``routing``) whose file is ``file`` — the same
    file once each is looked up (:func:`os.path.samefile`: ``./facts/cards/h200.toml``, a link to it, or
    ``facts/cards/H200.toml`` on a file system that ignores case) —, ``None`` when none is (a card of another folder
    with a registry card's file name is another card). Raises nothing."""
    import os

    folder = {"card": root.cards, "draft": root.drafts, "routing": root.routing}[kind]
    try:
        names = root.names(folder)
    except (InputError, OSError):
        return None
    stem = file.name.removesuffix(".toml")
    # the registry's own file name first (one look-up for every path that spells it), then every record
    for name in sorted(names, key=lambda n: (n.lower() != stem.lower(), n)):
        try:
            if os.path.samefile(folder / f"{name}.toml", file):
                return name
        except (OSError, ValueError):
            continue
    return None


def _record_name(root: Root, kind: str, ref: str | None) -> str | None:
    """The registry name of the ``kind`` record ``ref`` (a name, or a path to a record file) reads, decided by the
    file it names (:func:`registry_record`), as ``sweep --cards`` matches a serving's card
    (:func:`passprice.cards.same_card`); a name as it is, and a path naming no registry record (another folder's
    file, one that is not there) as given, so it matches no record's facts. Its file name less ``.toml`` was taken
    for the record's (:func:`_method_name`), so ``/elsewhere/h200_sxm_141gb.toml`` was the registry's card.
    Raises nothing."""
    import os

    if ref is None or ("/" not in ref and os.sep not in ref and not ref.endswith(".toml")):
        return ref
    from passprice.cards import card_path
    from passprice.drafts import draft_path
    from passprice.routing import routing_path

    find = {"card": card_path, "draft": draft_path, "routing": routing_path}[kind]
    try:
        file = find(root, ref)
    except (InputError, OSError, ValueError):
        return ref
    return registry_record(root, kind, Path(file)) or ref


@attrs.frozen
class ServingUse:
    """A registered serving priced with today's facts: its ``name``, ``card``, drafting ``method``, the facts its
    price ``rests_on`` (lock path → fact) and its ``tokens_per_s``, or the ``refusal`` that kept it from a price;
    its ``routing`` record, if any."""

    name: str
    card: str
    method: str | None
    rests_on: Mapping[str, Fact]
    tokens_per_s: float | None = None
    refusal: str | None = None
    routing: str | None = None


def serving_uses(root: Root) -> list[ServingUse]:
    """Every registered serving of ``root`` priced at its own batch with today's facts (a serving that does not
    resolve or is refused is kept, with why)."""
    from passprice.serving import ServingRefusal, price_serving
    from passprice.servings import load_spec, resolve

    out = []
    for name in root.scan(root.servings):
        try:
            spec = load_spec(root, name)
        except InputError as e:
            out.append(ServingUse(name, "?", None, {}, refusal=problem_lines(e)[0]))
            continue
        method = _record_name(root, "draft", spec.draft.method if spec.draft is not None else None)
        routing = _record_name(root, "routing", spec.routing)
        card = _record_name(root, "card", spec.card) or spec.card
        try:
            resolved = resolve(root, spec)
            cost = price_serving(resolved.header, resolved.card, resolved.serving)
        except ServingRefusal as e:
            out.append(ServingUse(name, card, method, {}, refusal=f"{e.name}: {e}", routing=routing))
            continue
        except InputError as e:
            out.append(ServingUse(name, card, method, {}, refusal=problem_lines(e)[0], routing=routing))
            continue
        out.append(ServingUse(name, card, method, dict(cost.rests_on), cost.tokens_per_s, None, routing))
    return out


@attrs.frozen
class ServingImpact:
    """A serving resting on withdrawn facts: ``name``, ``card``, the lock paths of the withdrawn facts its price
    ``rests_on``, and its provenance ``now`` and ``withdrawn``."""

    name: str
    card: str
    rests_on: tuple[str, ...]
    tokens_per_s: float
    now: Provenance
    withdrawn: Provenance

    def to_json(self) -> dict[str, Any]:
        """The serving for ``--json``."""
        return {
            "name": self.name,
            "card": self.card,
            "rests_on": list(self.rests_on),
            "tokens_per_s": self.tokens_per_s,
            "provenance": self.now.value,
            "provenance_withdrawn": self.withdrawn.value,
        }


@attrs.frozen
class LockImpact:
    """A lock resting on withdrawn facts: its ``name``, ``path``, ``card``; the lock paths of the withdrawn facts its
    recorded price ``rests_on``; those it pins without resting on them (``pinned_only``); its recorded tokens/s; and
    its floors judged on its pinned facts as they are (``now``) and with the withdrawn ones ``assumed``
    (``withdrawn``)."""

    name: str
    path: str
    card: str
    rests_on: tuple[str, ...]
    pinned_only: tuple[str, ...]
    tokens_per_s: float
    now: Any  # locks.Verdict
    withdrawn: Any  # locks.Verdict
    #: The expected tokens/s a lock made under a serving stack records (``None`` for a limit's lock): what rests on
    #: the stack's facts, where the limit (:attr:`tokens_per_s`) does not (tests/test_fix54w.py).
    expected: float | None = None

    def price_said(self) -> str:
        """The tokens/s cell of the audit's locks table: the recorded limit, or for a lock under a stack its expected
        price, labelled, the limit beside it (``237.4 expected (limit 996.1)``). Raises nothing."""
        if self.expected is None:
            return f"{self.tokens_per_s:,.1f}"
        return f"{self.expected:,.1f} expected (limit {self.tokens_per_s:,.1f})"

    @property
    def breaks(self) -> bool:
        """True when the lock holds today and would not with the source withdrawn."""
        return bool(self.now.holds and not self.withdrawn.holds)

    def floors(self) -> str:
        """``still holds``, or ``BREAKS: P1, P2 below F1; P3 below F2`` (the withdrawn facts, now ``assumed``, grouped
        by the floor each falls below; a serving stack's fitted facts counted, :func:`paths_text`)."""
        if self.withdrawn.holds:
            return "still holds"
        by_floor: dict[str, list[str]] = {}
        for o in self.withdrawn.offences:
            by_floor.setdefault(o.floor.value, []).append(o.path)
        listed = "; ".join(f"{paths_text(paths)} below {floor}" for floor, paths in by_floor.items())
        return ("BREAKS: " if self.now.holds else "unheld already: ") + listed

    def to_json(self) -> dict[str, Any]:
        """The lock for ``--json``."""
        return {
            "name": self.name,
            "path": self.path,
            "card": self.card,
            "rests_on": list(self.rests_on),
            "pinned_only": list(self.pinned_only),
            "tokens_per_s": self.tokens_per_s,
            "expected_tokens_per_s": self.expected,
            "provenance": self.now.provenance.value,
            "provenance_withdrawn": self.withdrawn.provenance.value,
            "holds": self.now.holds,
            "holds_withdrawn": self.withdrawn.holds,
            "breaks": self.breaks,
            "offences_withdrawn": [
                {"path": o.path, "provenance": o.provenance.value, "floor": o.floor.value}
                for o in self.withdrawn.offences
            ],
        }


def _expected_of(price: Mapping[str, Any]) -> float | None:
    """The expected tokens/s a lock's ``price`` records under a serving stack (``price.expected.tokens_per_s``), or
    ``None``. Raises nothing."""
    expected = price.get("expected")
    value = expected.get("tokens_per_s") if isinstance(expected, Mapping) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def registered_locks(root: Root) -> tuple[list[tuple[str, Any]], list[str]]:
    """Every lock of ``root`` that reads, with its file shown relative to the root, and one line per lock that does
    not."""
    from passprice.locks import folder_batch, read_lock

    out: list[tuple[str, Any]] = []
    problems: list[str] = []
    problem = folder_problem(root.locks, root)
    if problem is not None:
        return out, [problem]
    # In the folder's batches (as `check` judges them next, slip 54): past the cache's entry cap, one entry a lock
    # was pruned and built again on every run.
    for i, name in enumerate(root.names(root.locks, ".lock.toml")):
        path = root.locks / f"{name}.lock.toml"
        try:
            out.append((str(path.relative_to(root.path)), read_lock(path, root.schema, folder_batch(root, i))))
        except InputError as e:
            problems += problem_lines(e)
    return out, problems


def pinned_citations(lock: Any) -> dict[str, frozenset[str]]:
    """The source ids each fact ``lock`` pins cites (:func:`~passprice.sources.cited_ids`), by path."""
    return {p: frozenset(s for _, s in cited_ids(p, f)) for p, f in lock.facts.items()}


def lock_impacts(
    locks: Iterable[tuple[str, Any]],
    demoted: set[FactRef],
    source_id: str | None = None,
    cited: Mapping[str, Mapping[str, frozenset[str]]] | None = None,
    root: Root | None = None,
) -> tuple[list[LockImpact], list[tuple[str, tuple[str, ...]]]]:
    """For each lock, the withdrawn facts its recorded price rests on (a fact of its card or drafting method in
    ``demoted``, or — for a source — a pinned fact citing ``source_id``), judged with those facts ``assumed``; and
    the locks that only pin such facts, with the paths (grep would count them; their prices do not rest on them).
    ``cited``: each lock's :func:`pinned_citations` by its shown file, when the caller asks about many sources.
    With ``root``, a lock's card, drafting method and routing record are the registry records whose files its serving
    named (:func:`_record_name`, as :func:`serving_uses` decides a serving's): the card name the lock recorded was
    taken for the registry's card of that name, so a lock priced on another folder's ``h200_sxm_141gb.toml`` was said
    to rest on the registry's card (issue 13); a file that is no registry record matches none."""
    from passprice.locks import judge

    impacts = []
    pinned_only = []
    for shown, lock in locks:
        drafted = lock.spec.draft.method if lock.spec.draft is not None else None
        if root is not None:  # the cards by file, as serving_uses matches a serving's
            card = _record_name(root, "card", lock.spec.card) or lock.card
            method = _record_name(root, "draft", drafted)
            routing = _record_name(root, "routing", lock.spec.routing)
        else:
            card, method, routing = lock.card, _method_name(drafted), _method_name(lock.spec.routing)
        stack = lock.stack.name if lock.stack is not None else None
        paths = {ref.lock_path for ref in demoted if _matches(ref, card, method, routing, stack)}
        if source_id is not None:
            citations = cited[shown] if cited is not None else pinned_citations(lock)
            paths |= {p for p in lock.facts if source_id in citations[p]}
        pinned = [p for p in lock.facts if p in paths]
        resting = tuple(p for p in lock.rests_on if p in paths)
        only = tuple(p for p in pinned if p not in resting)
        if not resting:
            if only:
                pinned_only.append((lock.name, only))
            continue
        facts = tuple((p, lock.facts[p]) for p in lock.rests_on if p in lock.facts)
        now = judge(lock.name, lock.policy, facts)
        withdrawn = judge(lock.name, lock.policy, tuple((p, _withdrawn(f) if p in resting else f) for p, f in facts))
        impacts.append(
            LockImpact(lock.name, shown, lock.card, resting, only, float(lock.price["tokens_per_s"]), now, withdrawn,
                       _expected_of(lock.price))
        )
    return impacts, pinned_only


def serving_impacts(uses: Iterable[ServingUse], demoted: set[FactRef]) -> list[ServingImpact]:
    """The servings whose price rests on a fact in ``demoted``, with their provenance now and withdrawn."""
    out = []
    for use in uses:
        if use.refusal is not None or use.tokens_per_s is None:
            continue
        paths = {ref.lock_path for ref in demoted if _matches(ref, use.card, use.method, use.routing)}
        resting = tuple(p for p in use.rests_on if p in paths)
        if not resting:
            continue
        now = weakest(f.provenance for f in use.rests_on.values())
        withdrawn = weakest(Provenance.ASSUMED if p in resting else f.provenance for p, f in use.rests_on.items())
        out.append(ServingImpact(use.name, use.card, resting, use.tokens_per_s, now, withdrawn))
    return out


# --- the audit of a source or a fact ---------------------------------------------------------------------------------


def paths_text(paths: Iterable[str], code: Callable[[str], str] = str) -> str:
    """Fact paths for a table cell: each card or drafting fact by path, a serving stack's fitted facts (``stack.*``)
    counted when more than two (``stack.share.read and 8 more stack facts``), so that a lock under a stack keeps the
    table readable (walkthrough 51: its 12 stack facts made the audit's rows 300 characters wide)."""
    paths = list(paths)
    own = [code(p) for p in paths if not p.startswith("stack.")]
    stack = [p for p in paths if p.startswith("stack.")]
    if len(stack) > 2:
        own.append(f"{code(stack[0])} and {len(stack) - 1} more stack facts")
    else:
        own += [code(p) for p in stack]
    return ", ".join(own)


@attrs.frozen
class Lineage:
    """What rests on a subject: a ``source`` (its record) or one ``fact``; the facts ``citing`` it (for a fact, the
    fact itself), the facts ``derived`` from those, the ``servings`` and ``locks`` resting on any of them, the locks
    that only pin such facts (``pinned_only``), and the registered servings that could not be priced (``skipped``:
    only those whose card, drafting method or routing record holds a fact the subject reaches)."""

    subject: str
    source: Source | None
    fact: FactRef | None
    citing: tuple[Citing, ...]
    derived: tuple[Citing, ...]
    servings: tuple[ServingImpact, ...]
    locks: tuple[LockImpact, ...]
    pinned_only: tuple[tuple[str, tuple[str, ...]], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    #: A source's measured runs a serving stack's facts were fitted to (:func:`fitted_to_source`): each fitted fact
    #: (stack, lock path, fact) with how many of its runs cite the source, of how many.
    fitted: tuple[tuple[str, str, Fact, int, int], ...] = ()
    #: The (stack, routing record) pairs whose runs rest on the source through the routing record they price (a
    #: mixture of experts' runs: the record's facts cite the source), counted among :attr:`fitted`'s runs.
    fitted_through: tuple[tuple[str, str], ...] = ()
    #: The (stack, card, fact paths) triples whose runs rest on the subject through the card they are priced on (its
    #: facts of :data:`RUN_CARD_PATHS` cite the source, derive from it, or are the audited fact), counted among
    #: :attr:`fitted`'s runs.
    fitted_on_cards: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    #: A source's measured runs, by measurement file (:func:`runs_citing`): each (file, the ids of its runs citing
    #: the source, their stacks, their cards), registered stack or not.
    runs: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = ()
    #: What is wrong with the audited source's ``excerpt`` as a file of this registry
    #: (:func:`passprice.registry.document_problem`), ``None`` when it is one or the source names none. attack105: a
    #: registry made by ``init`` (or the installed package's) named ``sources/excerpts/cite70-excerpt.txt`` as "the text
    #: read, from the registry's top folder" where no such file was.
    excerpt_problem: str | None = None
    #: How the text names the source's stored excerpt (:func:`passprice.sources.excerpt_named`: the built-in
    #: registry's file named as such, one not there said so), or ``None``.
    excerpt: str | None = None
    #: The quote check of each fact :attr:`citing` holds (``audit --source``: the spans of its locators citing the
    #: source, looked for in the source's stored excerpt, :func:`passprice.sources.source_quote_checks`), in its order,
    #: then of each measured run quoting the source (``FILE: run.INDEX (ID)``, as ``check`` names it); ``None`` for a
    #: fact's audit.
    quote_checks: tuple[QuoteCheck, ...] | None = None
    #: The registry the source's ``excerpt`` path is relative to (:func:`passprice.registry.registry_named`:
    #: ``"built-in"`` or the registry's folder), given in ``--json`` as ``source.registry``, as ``audit LOCK`` gives
    #: ``sources.ID.registry`` (a new user found it only there); ``None`` for a fact's audit.
    registry: str | None = None

    @property
    def breaks(self) -> tuple[LockImpact, ...]:
        """The locks that hold today and would break their floors with the subject withdrawn."""
        return tuple(lock for lock in self.locks if lock.breaks)

    def to_json(self) -> dict[str, Any]:
        """The audit for ``--json``."""
        return {
            "subject": self.subject,
            "source": ({**attrs.asdict(self.source), **({"registry": self.registry} if self.registry else {})}
                       if self.source is not None else None),
            "fact": str(self.fact) if self.fact is not None else None,
            "facts": self.facts_json(),
            "derived": [c.to_json() for c in self.derived],
            "servings": [s.to_json() for s in self.servings],
            "locks": [lock.to_json() for lock in self.locks],
            "pinned_only": [{"lock": name, "paths": list(paths)} for name, paths in self.pinned_only],
            "skipped_servings": [{"serving": name, "why": why} for name, why in self.skipped],
            "breaks": [lock.name for lock in self.breaks],
            "fitted": [{"stack": stack, "path": path, "value": fact.amount, "unit": fact.unit,
                        "provenance": fact.provenance.value, "runs": runs, "of": total}
                       for stack, path, fact, runs, total in self.fitted],
            "fitted_through": [{"stack": stack, "routing": routing} for stack, routing in self.fitted_through],
            "fitted_on_cards": [{"stack": stack, "card": card, "paths": list(paths)}
                                for stack, card, paths in self.fitted_on_cards],
            "runs": [{"file": file, "ids": list(ids), "stacks": list(stacks), "cards": list(cards)}
                     for file, ids, stacks, cards in self.runs],
            "excerpt_problem": self.excerpt_problem,
            **({"quotes_checked": quotes_counted(self.quote_checks), "run_quote_checks": self.run_quote_checks()}
               if self.quote_checks is not None else {}),
        }

    def facts_json(self) -> list[dict[str, Any]]:
        """``facts`` of :meth:`to_json`: each citing fact, with its ``quote_check`` (:meth:`QuoteCheck.to_json`) in a
        source's audit."""
        if self.quote_checks is None:
            return [c.to_json() for c in self.citing]
        return [{**c.to_json(), "quote_check": q.to_json()}
                for c, q in zip(self.citing, self.quote_checks[:len(self.citing)], strict=True)]

    def run_quote_checks(self) -> list[dict[str, Any]]:
        """The quote checks of the measured runs citing the audited source (after its facts' in ``quote_checks``):
        ``{"run": "FILE: run.INDEX (ID)", **QuoteCheck.to_json()}`` each."""
        if self.quote_checks is None:
            return []
        return [{"run": q.path, **q.to_json()} for q in self.quote_checks[len(self.citing):]]


def _lineage(
    root: Root, subject: str, citing: list[Citing], source: Source | None, fact: FactRef | None, records: list[Record],
    fitted: Iterable[FactRef] = (),
) -> Lineage:
    derived = derived_closure(records, [c.ref for c in citing])
    demoted = {c.ref for c in citing} | {c.ref for c in derived} | set(fitted)
    locks, problems = registered_locks(root)
    if problems:
        raise InputError.of(problems)
    impacts, pinned_only = lock_impacts(locks, demoted, source.id if source is not None else None, root=root)
    uses = serving_uses(root)
    return Lineage(
        subject,
        source,
        fact,
        tuple(citing),
        tuple(derived),
        tuple(serving_impacts(uses, demoted)),
        tuple(impacts),
        tuple(pinned_only),
        # A serving that could not be priced is listed only when its price could rest on a demoted fact: one of its
        # card, drafting method or routing record (or one whose serving file does not say which: "?").
        tuple(
            (u.name, u.refusal)
            for u in uses
            if u.refusal is not None and (u.card == "?" or any(_matches(ref, u.card, u.method, u.routing)
                                                               for ref in demoted))
        ),
    )


def source_lineage(root: Root, source_id: str) -> Lineage:
    """What rests on source ``source_id`` of ``root`` (:class:`Lineage`). Raises :class:`InputError` for a source
    that is not registered, or a card, method or lock that does not read, and for one whose ``source.path`` names
    no regular file of the registry (:func:`passprice.registry.document_problem`), as ``sources`` and ``check`` say
    (attack93: ``path = "../secret.md"``, a FIFO or a folder was audited as ``../secret.md in this registry``,
    exit 0)."""
    from passprice.registry import document_problem, registry_named

    source = load_source(root, source_id)
    problem = document_problem(root, source.path) if source.path is not None else None
    if problem is not None:
        raise InputError(f"{root.sources / f'{source.id}.toml'}: source.path: {problem}")
    records, problems = load_records(root, stacks=True)
    if problems:
        raise InputError.of(problems)
    citing = citing_source(records, source.id)
    routings = frozenset(c.ref.record for c in citing if c.ref.kind == "routing")
    reached = [c.ref for c in citing] + [c.ref for c in derived_closure(records, [c.ref for c in citing])]
    fitted, through, on_cards = fitted_through(root, source.id, routings, card_paths(reached))
    # The fitted facts rest on the source as its runs do: a lock resting on them is judged with them withdrawn too
    # (walkthrough 27: `audit --source` of the benchmark a stack was fitted to listed a lock under the stack as
    # resting on its memory.reserved alone).
    refs = [FactRef("stack", stack, path.removeprefix("stack.")) for stack, path, _, _, _ in fitted]
    lineage = _lineage(root, f"source {source.id}", citing, source, None, records, refs)
    excerpt = document_problem(root, source.excerpt, "source.excerpt") if source.excerpt is not None else None
    # each citing fact's quotes of this source looked for in its stored excerpt, as audit LOCK looks
    # (tests/test_left119.py, tests/test_left122.py)
    # and each measured run's quote of it (a run as check's quote look reads it, _run_facts: its tokens/s under its
    # locator), as check and the review look them up: audit --source left them out (issue 13)
    runs = [(f"{_shown_file(root, file)}: {key}", fact) for file, key, fact in _run_facts(root)
            if fact.source == source.id]
    checks = source_quote_checks([*((str(c.ref), c.fact) for c in citing), *runs],
                                 stored_texts(root, {source.id: source}, [source.id]), source.id)
    return attrs.evolve(lineage, fitted=fitted, fitted_through=through, fitted_on_cards=on_cards,
                        runs=runs_citing(root, source.id), excerpt_problem=excerpt,
                        excerpt=excerpt_named(root, source), quote_checks=checks, registry=registry_named(root))


def runs_citing(
    root: Root, source_id: str
) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]:
    """The measured runs of ``root`` citing ``source_id`` (a run's own ``source``, else its file's), by measurement
    file in name order: each (the file relative to the root, the run ids, their stacks and their cards, each in
    first-seen order), whether or not a registered stack is fitted to them. Walkthrough 28: `audit --source
    ggml-org-llama-cpp` said "facts citing it: 0" and nothing else, while 16 runs of llamacpp-points.toml cite it
    (priced as limits by ``validate``); and a team's own run citing its notes was not named either. A measurement
    file that does not read is check's to report, and left out. Raises nothing."""
    from passprice.measurements import load_runs

    by_file: dict[str, list[Any]] = {}
    for run in load_runs(root, problems=[]):
        if run.source_id == source_id:
            by_file.setdefault(run.source, []).append(run)
    out = []
    for name, runs in by_file.items():
        path = root.measurements / f"{name}.toml"
        shown = str(path.relative_to(root.path)) if path.is_relative_to(root.path) else str(path)
        out.append((shown, tuple(r.id for r in runs), tuple(dict.fromkeys(r.stack for r in runs)),
                    tuple(dict.fromkeys(r.card for r in runs))))
    return tuple(out)


def _listed(names: tuple[str, ...], most: int = 3) -> str:
    """``names`` joined by commas, the first ``most`` of them and how many more."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


#: The card facts a measured run's limit reads whatever its checkpoint: the terms of a decode pass
#: (:func:`passprice.serving.rested_on`; ``memory.capacity`` and ``on_chip.capacity`` decide what fits, not how
#: long a pass takes, so a fit's values never move with them). A stack fitted to runs on a card rests on these.
RUN_CARD_PATHS = ("memory.bandwidth", "streams.read", "streams.append", "array", "vector", "scale")


def fitted_to_source(
    root: Root, source_id: str, routings: frozenset[str] = frozenset()
) -> tuple[tuple[tuple[str, str, Fact, int, int], ...], tuple[tuple[str, str], ...]]:
    """The serving stacks' fitted facts whose runs (each named in the fact's derivation) rest on ``source_id``: they
    cite it, or price a routing record of ``routings`` (those whose facts cite it); each (stack, lock path, fact,
    runs resting on it, runs named), and the (stack, routing record) pairs through which runs rest on it.
    Walkthrough 19: `audit --source xiongjiedai-gpu-benchmarks` said "facts derived from them: 0" while llama.cpp's
    nine fitted facts rest on the 111 runs read from it (they cite passprice-stack-calibration, the fit);
    walkthrough 27: a stack fitted to runs of a mixture of experts rests on the routing record they price as well.
    A stack or measurement file that does not read is check's to report."""
    fitted, through, _ = fitted_through(root, source_id, routings)
    return fitted, through


def fitted_through(
    root: Root, source_id: str | None, routings: frozenset[str] = frozenset(),
    cards: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[tuple[tuple[str, str, Fact, int, int], ...], tuple[tuple[str, str], ...],
           tuple[tuple[str, str, tuple[str, ...]], ...]]:
    """As :func:`fitted_to_source`, a run also resting on the subject when it is priced on a card of ``cards``
    (card name -> the paths of its facts the subject reaches, each of :data:`RUN_CARD_PATHS`: the run's limit reads
    them, so the fit does); ``source_id`` None for a fact's audit (no run cites a fact). Returns the fitted facts, the
    (stack, routing record) pairs and the (stack, card, paths) triples through which runs rest on the subject.
    Walkthrough 51: the L40S's datasheet bandwidth corrected, ``check`` found llama.cpp's fit stale and its re-fit
    moved an H200 lock's expected price +0.005869 %, while `audit --fact l40s:memory.bandwidth` and `audit --source`
    of the datasheet said "facts derived from it: 0" and listed neither the stack nor that lock. Raises nothing."""
    return _fitted_in(stack_fits(root), source_id, routings, cards)


#: A serving stack's fitted facts with the runs each was fitted to: (stack, lock path, fact, the runs it names, each
#: ``None`` where no registered run has that id).
StackFits = tuple[tuple[str, str, Fact, tuple[Any, ...]], ...]


def stack_fits(root: Root) -> StackFits:
    """Every registered serving stack's run-fitted facts with their runs (:data:`StackFits`), read once for a
    listing of every source (``passprice sources``). A stack or measurement file that does not read is check's to
    report, and left out. Raises nothing."""
    from passprice.derivations import RunDerivation
    from passprice.measurements import load_runs
    from passprice.stacks import load_stack

    out = []
    for name in root.scan(root.stacks):
        try:
            stack = load_stack(root, name)
            runs = {run.id: run for run in load_runs(root, name)}
        except InputError:
            continue
        for path, fact in stack.lock_facts().items():
            if isinstance(fact.derivation, RunDerivation):
                out.append((name, path, fact, tuple(runs.get(r.run) for r in fact.derivation.runs)))
    return tuple(out)


def _fitted_in(
    fits: StackFits, source_id: str | None, routings: frozenset[str], cards: Mapping[str, tuple[str, ...]] | None,
) -> tuple[tuple[tuple[str, str, Fact, int, int], ...], tuple[tuple[str, str], ...],
           tuple[tuple[str, str, tuple[str, ...]], ...]]:
    """:func:`fitted_through` over ``fits`` read already."""
    cards = {name: paths for name, paths in (cards or {}).items() if paths}
    out: list[tuple[str, str, Fact, int, int]] = []
    through: dict[tuple[str, str], None] = {}
    on_cards: dict[tuple[str, str], tuple[str, ...]] = {}
    for name, path, fact, named in fits:
        # The range a stack's runs measured (range.rows, range.position) is read off the runs, not priced: no card
        # fact moves it.
        priced = not path.removeprefix("stack.").startswith("range.")
        resting = 0
        for run in named:
            if run is None:
                continue
            if run.routing in routings:
                through[(name, run.routing)] = None
            on_card = priced and run.card in cards
            if on_card:
                on_cards[(name, run.card)] = cards[run.card]
            resting += (source_id is not None and run.source_id == source_id) or run.routing in routings or on_card
        if resting:
            out.append((name, path, fact, resting, len(named)))
    return tuple(out), tuple(through), tuple((stack, card, paths) for (stack, card), paths in on_cards.items())


def card_paths(refs: Iterable[FactRef]) -> dict[str, tuple[str, ...]]:
    """The card facts of ``refs`` a measured run's limit reads (:data:`RUN_CARD_PATHS`), by card (for
    :func:`fitted_through`, also the review's sources changed, :func:`passprice.sourcechange.source_changes`)."""
    out: dict[str, list[str]] = {}
    for ref in refs:
        if ref.kind == "card" and ref.path in RUN_CARD_PATHS and ref.path not in out.get(ref.record, []):
            out.setdefault(ref.record, []).append(ref.path)
    return {card: tuple(paths) for card, paths in out.items()}


def parse_fact_ref(root: Root, text: str) -> FactRef:
    """``CARD:PATH``, ``METHOD:acceptance.N`` (``draft.acceptance.N`` too) or ``ROUTING:hot_share``
    (``routing.hot_share`` too) as a :class:`FactRef`. Raises :class:`InputError` for anything else, or a record or
    path that does not exist."""
    from passprice.edit import locate

    name, sep, path = text.rpartition(":")  # a fact path holds no colon; a card's file name may
    if not sep or not name or not path:
        raise InputError(f"--fact {text!r}: write CARD:PATH (h200_sxm_141gb:memory.bandwidth) or METHOD:acceptance.N")
    routing_path = path.removeprefix("routing.")
    if routing_path in ("hot_experts", "hot_share") and is_there(root.routing / f"{name}.toml"):
        return FactRef("routing", name, routing_path)
    if "/" not in name and not is_there(root.cards / f"{name}.toml") and is_there(root.stacks / f"{name}.toml"):
        # a serving stack's fact: edit.locate said "the fact commands edit cards and drafting methods", of a command
        # that edits nothing (attack round attack55)
        raise InputError(
            f"--fact {text}: {name} is a serving stack (facts/stacks/{name}.toml): --fact audits what rests on a "
            "card's, a drafting method's or a routing record's fact; a stack's facts and their sources are audited "
            f"with a price made under it: passprice audit SERVING --stack {name}"
        )
    if ("/" not in name and not is_there(root.cards / f"{name}.toml") and not is_there(root.drafts / f"{name}.toml")
            and is_there(root.routing / f"{name}.toml")):
        # a routing record's path that is none of its facts: edit.locate said "the fact commands edit cards and
        # drafting methods … edit the record's file by hand", of a command that edits nothing (attack round attack56)
        near = [known for known in ("hot_experts", "hot_share") if known.lower() == routing_path.strip().lower()]
        raise InputError(
            f"--fact {text}: {path} is no fact of routing record {name} (facts/routing/{name}.toml): its facts are "
            f"hot_experts and hot_share" + (f"; did you mean {name}:{near[0]}?" if near else "")
        )
    where = locate(root, name, path)
    if where.kind in ("card", "draft") and ("/" in name or name.endswith(".toml")):
        # a record named by its path is the registry's record of that file, whatever its spelling; another folder's
        # file of the same name is not (it was audited as the registry's record of its file name)
        record = registry_record(root, where.kind, Path(where.file))
        if record is None:
            from passprice.files import shown

            what = "card" if where.kind == "card" else "drafting method"
            raise InputError(f"--fact {text}: no such fact ({shown(where.file)} is no {what} record of this "
                             "registry: nothing here rests on it)")
        return FactRef(where.kind, record, where.path)
    return FactRef(where.kind, where.name, where.path)


def fact_lineage(root: Root, ref: FactRef) -> Lineage:
    """What rests on fact ``ref`` (:class:`Lineage`): the fact, the facts derived from it, the servings and locks
    resting on any of them, and the locks' floors with them ``assumed``. Raises :class:`InputError` for a fact that
    does not exist, or a card, method or lock that does not read, or whose citation nobody can trace
    (:func:`passprice.sources.require_sources`)."""
    from passprice.sources import require_sources

    records, problems = load_records(root)
    if problems:
        raise InputError.of(problems)
    record = next((r for r in records if r.kind == ref.kind and r.name == ref.record), None)
    if record is None:  # a card file outside the registry (`--fact /elsewhere/x.toml:PATH`): nothing rests on it
        raise InputError(f"--fact {ref}: no such fact ({ref.record} is no {ref.kind} record of this registry)")
    if ref.path not in record.facts:
        raise InputError(f"--fact {ref}: no such fact")
    # its citation nobody can trace (a source with no record, or naming no document of this registry) is refused as
    # `facts` and `check` refuse it (attack93: `source.path = "../secret.md"` was audited, exit 0)
    require_sources(root, {ref.path: record.facts[ref.path]}, str(record.file))
    citing = [Citing(ref, record.facts[ref.path], ("the fact itself",))]
    # The serving stacks fitted to runs priced on the fact (on its card, or on its routing record), as a source's
    # audit follows them (walkthrough 51).
    reached = [ref] + [c.ref for c in derived_closure(records, [ref])]
    routings = frozenset(r.record for r in reached if r.kind == "routing")
    fitted, through, on_cards = fitted_through(root, None, routings, card_paths(reached))
    refs = [FactRef("stack", stack, path.removeprefix("stack.")) for stack, path, _, _, _ in fitted]
    lineage = _lineage(root, f"fact {ref}", citing, None, ref, records, refs)
    return attrs.evolve(lineage, fitted=fitted, fitted_through=through, fitted_on_cards=on_cards)


# --- rendering -------------------------------------------------------------------------------------------------------


def source_lines(source: Source, excerpt: str | None = None) -> list[str]:
    """A source record for people: title, who and when, where, how it was read, when retrieved, the stored excerpt of
    the text read (``excerpt``, trace96: as :func:`passprice.sources.excerpt_named` names it, else the record's
    path), and its note (the record's caveat: walkthrough 25 found "who measured it and when is unknown" in no
    output)."""
    date = source.date_text() or "versioned with this registry"
    lines = [f"  {source.title}", f"  {source.by} · {source.kind} · {date} · {source.where()}"]
    retrieved = source.retrieved_text()
    if retrieved is not None:
        lines.append(f"  retrieved {retrieved}")
    copies = source.copies_text()
    if copies is not None:
        lines.append(f"  copies: {copies}")
    if source.excerpt is not None:  # the text read, stored for reading offline (trace96)
        named = excerpt if excerpt is not None else excerpt_words(source.excerpt)
        lines.append(f"  stored excerpt: {named}")
    lines.append(f"  read: {source.read}")
    if source.note:
        lines.append(f"  note: {source.note}")
    return lines


def _fact_rows(citing: Iterable[Citing]) -> list[list[str]]:
    return [
        [c.ref.record, c.ref.path, c.fact.describe(), c.fact.provenance.value, ", ".join(c.how)] for c in citing
    ]


def _reached(a: Lineage) -> str:
    """How a card's facts that a stack's runs read reach the subject of audit ``a``."""
    return "citing it or derived from it" if a.source is not None else "the fact or derived from it"


def lineage_text(a: Lineage) -> str:
    """The audit of a source or fact for people."""
    lines = [f"audit of {a.subject}"]
    if a.source is not None:
        lines += source_lines(a.source, a.excerpt)
    if a.fact is not None:
        fact = a.citing[0].fact
        lines.append(f"  {fact.describe()} ({fact.provenance.value}); {fact.citation()}")
        if fact.derivation_text():
            lines.append(f"  derivation: {fact.derivation_text()}")
    lines.append("")
    if a.source is not None:
        lines.append(f"facts citing it: {len(a.citing)}")
        if a.citing:
            lines.append(text_table(["record", "fact", "value", "provenance", "cites it as"], _fact_rows(a.citing)))
        if a.quote_checks is not None:
            lines += ["", f"quotes checked against a stored text: {quotes_summary(a.quote_checks)}"]
            lines += [f"  {c.line()}" for c in a.quote_checks]
        lines.append("")  # a fact's audit lists no citing facts: one blank line, not two (walkthrough 15)
    lines.append(f"facts derived from {'them' if a.source is not None else 'it'}: {len(a.derived)}")
    if a.derived:
        lines.append(text_table(["record", "fact", "value", "provenance", "why"], _fact_rows(a.derived)))
    if a.fitted:
        lines.append("")
        lines.append(f"serving-stack facts fitted to its measured runs: {len(a.fitted)}")
        rows = [[stack, path, fact.describe(), fact.provenance.value, f"{runs} of {total}"]
                for stack, path, fact, runs, total in a.fitted]
        lines.append(text_table(["stack", "fact", "value", "provenance", "runs resting on it"], rows))
        lines += [f"  ({stack}'s runs price routing record {routing}, whose facts cite it: the fit rests on them)"
                  for stack, routing in a.fitted_through]
        lines += [f"  ({stack}'s runs on card {card} read its {', '.join(paths)}, {_reached(a)}: the fit rests on "
                  f"{'it' if len(paths) == 1 else 'them'})" for stack, card, paths in a.fitted_on_cards]
        lines.append("  (each fact's derivation names its runs: passprice audit SERVING --stack S, or passprice fact "
                     "show S PATH)")
    if a.source is not None and a.runs:
        lines.append("")
        lines.append(f"measured runs citing it: {sum(len(ids) for _, ids, _, _ in a.runs)}")
        rows = [[file, str(len(ids)), _listed(ids, 1), _listed(stacks, 2), _listed(cards)]
                for file, ids, stacks, cards in a.runs]
        lines.append(text_table(["file", "runs", "ids", "stacks", "cards"], rows, (1,)))
        lines.append("  (passprice validate prices each run as its card's limit, and as a registered stack expects it)")
    lines.append("")
    lines.append(f"servings resting on them (today's facts): {len(a.servings)}")
    if a.servings:
        rows = [
            [s.name, s.card, ", ".join(s.rests_on), f"{s.tokens_per_s:,.1f}", f"{s.now.value} → {s.withdrawn.value}"]
            for s in a.servings
        ]
        lines.append(text_table(["serving", "card", "rests on", "tokens/s", "provenance → withdrawn"], rows, (3,)))
    for name, why in a.skipped:
        lines.append(f"  (serving {name} not priced: {why})")
    lines.append("")
    lines.append(f"locks resting on them: {len(a.locks)}; withdrawn (the facts above assumed), {len(a.breaks)} break")
    if a.locks:
        rows = [
            [
                lock.name,
                paths_text(lock.rests_on),
                lock.price_said(),
                f"{lock.now.provenance.value} → {lock.withdrawn.provenance.value}",
                ("holds" if lock.now.holds else "unheld") + " → " + lock.floors(),
            ]
            for lock in a.locks
        ]
        lines.append(text_table(["lock", "rests on", "tokens/s", "provenance → withdrawn", "floors"], rows, (2,)))
        lines.append("  (a withdrawal changes provenance, not values: every price stays as recorded)")
    for name, paths in a.pinned_only:
        them = "it" if len(paths) == 1 else "them"
        lines.append(f"  lock {name} pins {', '.join(paths)} but its price does not rest on {them}")
    return "\n".join(lines)


def lineage_markdown(a: Lineage) -> str:
    """The audit of a source or fact as a pull-request comment."""
    mark = "❌" if a.breaks else "✅"
    head = (f"{mark} **passprice audit** {markdown_text(a.subject)}: {len(a.citing)} "
            f"fact{'s' if len(a.citing) != 1 else ''}")
    head += f", {len(a.derived)} derived, {len(a.servings)} servings, {len(a.locks)} locks rest on it"
    if a.breaks:
        head += f"; withdrawn, {len(a.breaks)} break: " + ", ".join(markdown_code(lock.name) for lock in a.breaks)
    out = [head]
    if a.source is not None:
        out += ["", markdown_text(f"{a.source.title} — {a.source.by}, {a.source.date_text() or 'this registry'}, "
                                  f"{a.source.where()}")]
        if a.source.note:  # the record's caveat (walkthrough 25)
            out.append(f"Note: {markdown_text(a.source.note)}")
    facts = [*a.citing, *a.derived]
    if facts:
        rows = [[markdown_code(r[0]), markdown_code(r[1]), r[2], r[3], markdown_text(r[4])] for r in _fact_rows(facts)]
        out += ["", "#### Facts", "", markdown_table(["record", "fact", "value", "provenance", "how"], rows, (2,))]
    if a.quote_checks is not None:
        out += ["", f"Quotes checked against a stored text: {markdown_text(quotes_summary(a.quote_checks))}"]
        out += [f"- {'⚠️ ' if c.state != 'checked' else ''}{markdown_code(c.path)}: {markdown_text(c.state)} "
                f"({markdown_text(c.why)})" for c in a.quote_checks]
    if a.fitted:
        rows = [[markdown_code(stack), markdown_code(path), fact.describe(), fact.provenance.value,
                 f"{runs} of {total}"] for stack, path, fact, runs, total in a.fitted]
        out += ["", "#### Serving-stack facts fitted to its measured runs", "",
                markdown_table(["stack", "fact", "value", "provenance", "runs resting on it"], rows, (2,)),
                *[f"\n{markdown_code(stack)}'s runs price routing record {markdown_code(routing)}, whose facts "
                  "cite it: the fit rests on them" for stack, routing in a.fitted_through],
                *[f"\n{markdown_code(stack)}'s runs on card {markdown_code(card)} read its "
                  f"{', '.join(markdown_code(p) for p in paths)}, {_reached(a)}: the fit rests on "
                  f"{'it' if len(paths) == 1 else 'them'}" for stack, card, paths in a.fitted_on_cards]]
    if a.source is not None and a.runs:
        rows = [[markdown_code(file), str(len(ids)), markdown_text(_listed(ids, 1)), markdown_text(_listed(stacks, 2)),
                 markdown_text(_listed(cards))] for file, ids, stacks, cards in a.runs]
        out += ["", "#### Measured runs citing it", "",
                markdown_table(["file", "runs", "ids", "stacks", "cards"], rows, (1,))]
    if a.servings:
        rows = [
            [markdown_code(s.name), markdown_code(s.card), ", ".join(markdown_code(p) for p in s.rests_on),
             f"{s.tokens_per_s:,.1f}",
             f"{s.now.value} → {s.withdrawn.value}"]
            for s in a.servings
        ]
        out += ["", "#### Servings", "",
                markdown_table(["serving", "card", "rests on", "tokens/s", "provenance → withdrawn"], rows, (3,))]
    if a.locks:
        rows = [
            [markdown_code(lock.name), paths_text(lock.rests_on, markdown_code), lock.price_said(),
             f"{lock.now.provenance.value} → {lock.withdrawn.provenance.value}",
             ("❌ " if lock.breaks else "") + markdown_prose(lock.floors())]
            for lock in a.locks
        ]
        out += ["", "#### Locks, if it were withdrawn", "",
                markdown_table(["lock", "rests on", "tokens/s", "provenance → withdrawn", "floors"], rows, (2,))]
    return "\n".join(out)


def render(a: Lineage, fmt: str) -> str:
    """``a`` as ``text``, ``markdown`` or ``json``."""
    if fmt == "markdown":
        return lineage_markdown(a)
    if fmt == "json":
        from passprice.tables import json_text

        return json_text(a.to_json())  # JSON, always (left59); a character that does not print escaped
    return lineage_text(a)


# --- the list of sources ---------------------------------------------------------------------------------------------


@attrs.frozen
class SourceUse:
    """One source in ``passprice sources``: the record, the facts citing it, the locks resting on them (or on facts
    derived from them), the weakest and strongest provenance of the facts citing it, and ``runs``, the measured runs
    citing it (a run's own ``source``, else its file's: what ``audit --source`` lists, :func:`runs_citing`). A
    source cited only by runs (``ggml-org-llama-cpp``'s 11) read "0 facts, 0 locks, –", as if nothing used it
    (slip round 39)."""

    source: Source
    facts: int
    locks: tuple[str, ...]
    weakest: Provenance | None
    strongest: Provenance | None
    runs: int = 0

    def to_json(self) -> dict[str, Any]:
        """The source for ``--json``."""
        return {
            "id": self.source.id,
            "title": self.source.title,
            "kind": self.source.kind,
            "by": self.source.by,
            "date": self.source.date,
            "retrieved": self.source.retrieved,
            "where": self.source.where(),
            "excerpt": self.source.excerpt,
            "facts": self.facts,
            "runs": self.runs,
            "locks": list(self.locks),
            "weakest": self.weakest.value if self.weakest is not None else None,
            "strongest": self.strongest.value if self.strongest is not None else None,
        }


def source_uses(root: Root) -> tuple[list[SourceUse], list[str]]:
    """Every registered source that reads, with how many facts cite it, the locks resting on them, the
    provenances it supports (counted over the cards, methods and locks that read), and how many measured runs cite
    it (counted over the measurement files that read, as :func:`runs_citing` counts them: a file that does not read
    is check's to report); and one line per problem of every source, card, method or lock file that does not read
    (a source whose ``source.path`` names no regular file of the registry among them), as the other listings report
    them."""
    from collections import Counter

    from passprice.measurements import load_runs
    from passprice.registry import document_problem
    from passprice.sources import read_sources

    sources, problems = read_sources(root)
    # A source naming a registry document that is not a regular file inside the root (gone, a folder, a FIFO) is a
    # bad file, as check says and every card citing it is refused for: the listing of sources showed it as good,
    # exit 0 (attack round 45). Reported, and left out as a bad card is left out of `cards`.
    for name, source in list(sources.items()):
        problem = document_problem(root, source.path) if source.path is not None else None
        if problem is not None:
            problems.append(f"{root.sources / f'{name}.toml'}: source.path: {problem}")
            del sources[name]
    records, record_problems = load_records(root, stacks=True)
    locks, lock_problems = registered_locks(root)
    problems += record_problems + lock_problems
    out = []
    index = citing_sources(records)  # one pass over the facts and the locks' pins, not one a source
    cited = {shown: pinned_citations(lock) for shown, lock in locks}
    runs = Counter(run.source_id for run in load_runs(root, problems=[]))
    fits = stack_fits(root)
    for source in sources.values():
        citing = index.get(source.id, [])
        demoted = {c.ref for c in citing} | {c.ref for c in derived_closure(records, [c.ref for c in citing])}
        # The stack facts fitted to runs resting on it, as `audit --source` follows them (walkthrough 51: the
        # listing counted 0 locks on the L40S datasheet where the audit found the lock under llama.cpp's stack).
        fitted, _, _ = _fitted_in(fits, source.id, frozenset(r.record for r in demoted if r.kind == "routing"),
                                  card_paths(demoted))
        demoted |= {FactRef("stack", stack, path.removeprefix("stack.")) for stack, path, _, _, _ in fitted}
        impacts, _ = lock_impacts(locks, demoted, source.id, cited, root)
        provenances = [c.fact.provenance for c in citing]
        out.append(
            SourceUse(
                source,
                len(citing),
                tuple(i.name for i in impacts),
                weakest(provenances) if provenances else None,
                min(provenances) if provenances else None,
                runs[source.id],
            )
        )
    return out, problems


def sources_text(uses: Iterable[SourceUse]) -> str:
    """``passprice sources`` for people: one row a source."""
    rows = []
    for u in uses:
        if u.weakest is None or u.strongest is None:
            supports = "–"
        elif u.weakest is u.strongest:
            supports = u.weakest.value
        else:
            supports = f"{u.strongest.value}…{u.weakest.value}"
        date = u.source.date or "registry"
        retrieved = u.source.retrieved or "registry"
        rows.append([u.source.id, u.source.kind, date, retrieved, str(u.facts), str(u.runs), str(len(u.locks)),
                     supports])
    table = text_table(["source", "kind", "date", "retrieved", "facts", "runs", "locks", "provenance it supports"],
                       rows, (4, 5, 6))
    from passprice.sources import undated

    n = len(undated(u.source for u in uses))
    unknown = (f"\n  {n} of {len(rows)} say retrieved unknown: no date was recorded for the copy read, and none is "
               "guessed (check warns of them)" if n else "")
    stored = [u.source.id for u in uses if u.source.excerpt is not None]
    if stored:  # trace96: which records name the text read, kept in the repository for reading offline
        unknown += (f"\n  {len(stored)} of {len(rows)} name a stored excerpt, the lines quoted from the text read "
                    "(`passprice audit --source ID` shows its file)")
    return (
        f"{table}\n\n  date: when it was published; retrieved: when the copy that was read was retrieved (registry: "
        f"a document of the registry){unknown}\n"
        "  facts: the facts citing it (as their source or a figure's); runs: the measured runs citing it;\n"
        "  locks: the locks whose price rests on them\n"
        "  `passprice audit --source ID` shows which, and what breaks if it is withdrawn"
    )



def _stack_and_run_sources(root: Root) -> set[str]:
    """The source ids serving stacks' facts and measured runs name (issue 14), so a source only they cite is not
    reported as cited by nothing; a file that does not read, or names a source not registered, is check's to
    report."""
    from passprice.measurements import load_file
    from passprice.stacks import stack_from_document

    out: set[str] = set()
    for name in root.scan(root.stacks):
        path = root.stacks / f"{name}.toml"
        try:
            stack = stack_from_document(name, schema.load(path, "stack", root.schema), str(path))
        except InputError:
            continue
        for fact in stack.lock_facts().values():
            if fact.source is not None:
                out.add(fact.source)
    for name in root.scan(root.measurements):
        try:
            out.update(r.source_id for r in load_file(root.measurements / f"{name}.toml", root.schema))
        except InputError:
            continue
    return out
