"""A citation is a record, not a sentence: each document facts cite is described once, in ``sources/ID.toml``, and a
fact names it by id with a locator within it, so "what rests on this document" has one exact answer.

A source record (``schema/source.schema.json``) says what the document is (title, kind, publisher or authors, date),
where it is (an address; a repository and the commit read; an arXiv id; or, for a document of this registry, its
path), how it was read (the original, a stored copy, secondary copies) and when the copy read was retrieved,
optionally with the sha256 of that copy. What is not known is written ``unknown``, never left out.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.errors import InputError, SchemaError, escaped, problem_lines
from passprice.facts import Fact
from passprice.files import is_there
from passprice.registry import Root, against_root, did_you_mean, document_problem, entry_name, named_in, not_found

if TYPE_CHECKING:
    import cattrs

@functools.cache
def _compiled(text: str) -> re.Pattern[str]:
    """``re.compile(text)``, once a process. This module's patterns but :data:`SOURCE_ID` are compiled when first
    used, not when it is imported: a price imports the module and uses none of them (compiling seven at import was
    2.5 M of a price's instructions; docs/PERFORMANCE.md, tests/test_afresh134.py). Raises nothing for the
    module's own."""
    return re.compile(text)


def __getattr__(name: str) -> re.Pattern[str]:
    """:data:`QUOTED_SPAN` and :data:`PAGES_DECLARED`, compiled when first asked for (:func:`_compiled`). Raises
    :class:`AttributeError` for any other name the module lacks."""
    if name == "QUOTED_SPAN":
        return _compiled(_QUOTED_SPAN_TEXT)
    if name == "PAGES_DECLARED":
        return _compiled(_PAGES_DECLARED_TEXT)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: A source id: the name of its file in ``sources/`` (``azure-ai-benchmarking-guide``), as facts cite it.
SOURCE_ID = re.compile(r"[a-z0-9][a-z0-9.-]{0,79}")


#: How a record's ``read`` states the edition of the copy read: ``the 2025 edition, '©2025', PID#2258402-B``.
_EDITION_TEXT = r"\bthe (?:19|20)\d\d edition\b[^;)]*"


@attrs.frozen
class Source:
    """One source record: its ``id`` (the file's name) and the fields of its ``[source]`` table
    (``schema/source.schema.json``); absent optional fields are ``None`` (or empty for
    ``authors``/``copies``)."""

    id: str
    title: str
    kind: str
    read: str
    publisher: str | None = None
    authors: tuple[str, ...] = ()
    date: str | None = None
    url: str | None = None
    copies: tuple[str, ...] = ()
    repository: str | None = None
    commit: str | None = None
    arxiv: str | None = None
    path: str | None = None
    retrieved: str | None = None
    sha256: str | None = None
    note: str | None = None
    #: The file holding the text that was read, stored in the repository (a path from the registry's top folder),
    #: or ``None``. Issue 13 (trace96): a source read only through a search tool's stored pages (the gpu-container
    #: handbook) could not be followed offline, though the text read ships in ``sources/excerpts/cite70-excerpt.txt``.
    excerpt: str | None = None
    #: The sha256 of the stored excerpt's bytes, pinned in the record (``None``: not pinned). A new user edited an
    #: excerpt: the review said "no changes" and ``check`` passed while ``audit`` said other things
    #: (tests/test_walk128.py); :func:`excerpt_problem` reports bytes that no longer match it.
    excerpt_sha256: str | None = None

    @property
    def by(self) -> str:
        """Who published it: the publisher, else the authors (``A, B et al.`` past two)."""
        if self.publisher is not None:
            return self.publisher
        if len(self.authors) > 2:
            return f"{self.authors[0]} et al."
        return " and ".join(self.authors)

    def where(self, registry: str = "") -> str:
        """Where the document is, in one line: its address, the repository at the commit read, the arXiv id, or its
        path in this registry; ``unknown`` parts said so. ``registry``: how the text names the registry a ``path``
        lies in when it is not the working one (``the built-in registry's `` outside any registry: "in this
        registry" named no folder the reader had, walkthrough 35); ``""`` for ``PATH in this registry``."""
        parts = []
        if self.path is not None:
            parts.append(f"{registry}{self.path}" if registry else f"{self.path} in this registry")
        if self.repository is not None:
            commit = self.commit if self.commit == "unknown" else (self.commit or "")[:12]
            parts.append(f"{self.repository} at commit {commit}")
        if self.arxiv is not None:
            parts.append(f"arXiv:{self.arxiv}")
        if self.url is not None and self.url != self.repository:
            parts.append(self.url if self.url != "unknown" else "address unknown")
        return "; ".join(parts) or "address unknown"

    def retrieved_text(self) -> str | None:
        """When the copy read was retrieved, with the sha256 of that copy when the record states one
        (``2026-12-01, sha256 ABC…``, ``unknown``); ``None`` for a record that says nothing of it (a registry
        document). Walkthrough 35: an audit of a price named no retrieval date, though the record holds one."""
        if self.retrieved is None:
            return None
        return self.retrieved + (f", sha256 {self.sha256}" if self.sha256 else "")

    def copies_text(self) -> str | None:
        """The addresses of the copies read instead of (or besides) the original, ``; ``-separated, or ``None``
        when the record lists none. Walkthrough 35: ``copies`` was in no output, so an auditor could not open the
        copy a figure was checked against (the H200 datasheet's product page)."""
        return "; ".join(self.copies) if self.copies else None

    def edition_read(self) -> str | None:
        """The edition of the copy read as the record's ``read`` states it (``the 2025 edition, '©2025',
        PID#2258402-B``: the words from ``the YYYY edition`` to the next ``;`` or ``)``), or ``None`` when it states
        none. A header printed ``(AMD, unknown)`` beside a ``read:`` naming the 2025 edition: the date field is
        ``unknown`` (the cited address's edition), the edition read is what the record does say."""
        m = _compiled(_EDITION_TEXT).search(self.read)
        return m.group().rstrip(" ,.") if m else None

    def date_text(self) -> str | None:
        """The record's date, with the edition its ``read`` states when the date is ``unknown``
        (``unknown; the copy read: the 2025 edition, …``); ``None`` for a record with no date (a registry
        document)."""
        if self.date == "unknown":
            edition = self.edition_read()
            if edition is not None:
                return f"unknown; the copy read: {edition}"
        return self.date

    def describe(self) -> str:
        """``TITLE (BY, DATE)``, DATE as :meth:`date_text` gives it."""
        date = self.date_text()
        return f"{self.title} ({self.by}{'' if date is None else ', ' + date})"


@functools.cache
def _converter() -> cattrs.Converter:
    """Source records ↔ their ``[source]`` tables (cattrs), made on first use: pricing only asks whether a cited
    source is registered, and reads none."""
    import cattrs

    return cattrs.Converter(forbid_extra_keys=True)


def source_from_document(source_id: str, document: Mapping[str, Any], where: str) -> Source:
    """The source a schema-valid ``source`` document describes, ``source_id`` its file's name.

    Raises :class:`InputError` naming ``where`` when the id is not a valid source id."""
    if not SOURCE_ID.fullmatch(source_id):
        raise _not_an_id(where, source_id)
    _require_retrieved_after_date(document["source"], where)
    import cattrs

    try:
        return _converter().structure({"id": source_id, **document["source"]}, Source)
    except cattrs.BaseValidationError as e:  # pragma: no cover - the schema admits only what the class holds
        raise InputError(f"{where}: not a source: {'; '.join(cattrs.transform_error(e))}") from None


def _require_retrieved_after_date(table: Mapping[str, Any], where: str) -> None:
    """Refuse a ``[source]`` table whose copy was ``retrieved`` before the first day of its ``date`` (a partial date
    ``2023`` or ``2023-12`` from its first day; ``unknown`` either side: nothing to compare): a copy is read on or
    after the day it was published. A record published 2023-12-25 and retrieved 1990-01-01 passed ``check``, each
    date within its own bound (attack round 53). Raises :class:`InputError` naming ``where`` and the key."""
    date, retrieved = table.get("date"), table.get("retrieved")
    if not isinstance(date, str) or not isinstance(retrieved, str) or "unknown" in (date, retrieved):
        return
    first = date + "-01-01"[len(date) - 4:] if len(date) in (4, 7) else date  # 2023 → 2023-01-01, 2023-12 → -01
    if len(retrieved) == 10 and retrieved < first:
        raise InputError(
            f"{where}: source.retrieved: {retrieved!r} is before the source's date {date!r}: a copy is retrieved on "
            "or after the day it was published; give the day the copy was read (or the date it was published)"
        )


def _not_an_id(where: str, source_id: str) -> InputError:
    from passprice.files import shown  # sources/a\u202eb.toml was named raw in check --json's problems (round 63)

    return InputError(
        f"{shown(where)}: {source_id!r} is not a source id (lower-case letters, digits, '.' and '-', first a letter or "
        "digit): rename the file"
    )


def source_path(root: Root, ref: str) -> Path:
    """The file of source ``ref`` (an id, or a ``.toml`` path). Raises :class:`InputError` listing the registered
    sources when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    beneath = against_root(root, ref, "source")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    path = root.sources / f"{ref}.toml"
    if not SOURCE_ID.fullmatch(ref):
        if "/" not in ref and ref in root.names(root.sources):
            raise _not_an_id(str(path), ref)  # sources/Bad_ID.toml: registered, but its name is no id a fact cites
        raise not_found("source", ref, root.sources, root.names(root.sources), root)
    if not is_there(path):
        raise not_found("source", ref, root.sources, root.names(root.sources), root)
    return path


def load_source(root: Root, ref: str) -> Source:
    """The source ``ref`` of ``root``, validated against ``schema/source.schema.json``.

    Raises :class:`InputError` or :class:`~passprice.errors.SchemaError`."""
    path = source_path(root, ref)
    document = schema.load(path, "source", root.schema)
    return source_from_document(entry_name(path), document, str(path))


def read_sources(root: Root) -> tuple[dict[str, Source], list[str]]:
    """Every source of ``root`` that reads, by id, and one line per problem of every file that does not (a listing
    shows the first and reports the second)."""
    out: dict[str, Source] = {}
    problems: list[str] = []
    for name in root.names(root.sources):
        try:
            out[name] = load_source(root, name)
        except InputError as e:
            problems += problem_lines(e)
    return out, problems


def load_sources(root: Root) -> dict[str, Source]:
    """Every source registered in ``root``, by id. Raises :class:`InputError` with one line per problem of every
    file that does not read."""
    out, problems = read_sources(root)
    if problems:
        raise InputError.of(problems)
    return out


def cited_ids(path: str, fact: Fact) -> list[tuple[str, str]]:
    """Every source id ``fact`` (at ``path``) names, with the key that names it: its own ``source`` and each figure
    input's (``streams.read.derivation.inputs.dot.source``)."""
    from passprice.derivations import Derivation

    out = []
    if fact.source is not None:
        out.append((f"{path}.source", fact.source))
    if isinstance(fact.derivation, Derivation):
        for i in fact.derivation.inputs:
            if i.source is not None:
                out.append((f"{path}.derivation.inputs.{schema.key_part(i.name)}.source", i.source))
    return out


def missing_sources(root: Root, facts: Mapping[str, Fact], file: str) -> list[str]:
    """One line per source id the ``facts`` of ``file`` name that ``root`` has no record of:
    ``FILE: KEY: no source 'ID'; did you mean A? (sources/ID.toml does not exist: write it …, or cite a registered
    one: …)``, the "did you mean" the registered ids closest to ID (:func:`passprice.registry.did_you_mean`), when
    any is."""
    return missing_ids(root, [pair for path, fact in facts.items() for pair in cited_ids(path, fact)], file)


def _source_there(root: Root, source_id: str) -> bool:
    return is_there(root.sources / f"{source_id}.toml")



def missing_ids(root: Root, named: Iterable[tuple[str, str]], file: str) -> list[str]:
    """One line per (key, source id) of ``named`` that ``root`` has no record of (:func:`missing_sources`); an id
    that is not a source id at all (``SOURCE_ID``) is one no record can have, said so without a lookup: a card's
    schema refuses it, but a stack's allows ``_`` and 100 characters (round 23: a stack fact citing
    ``no_such_record`` was priced and locked, and the lock written did not validate)."""
    from passprice import snapshot

    out = []
    known: list[str] | None = None
    folder = str(root.sources)
    for key, source_id in named:
        if not SOURCE_ID.fullmatch(source_id):
            out.append(
                f"{file}: {key}: {schema.shown_value(source_id)} is not a source id (lower-case letters, digits, '.' "
                "and '-', at most 80, first a letter or digit): no record in sources/ can be named so; cite one by "
                "its file's name"
            )
            continue
        # Inside a snapshot (one read of the registry) each source file is looked for once.
        # (The path is made only when the memo misses: a card cites a dozen ids, and a copy of it as many again.)
        if snapshot.made(("source-there", folder, source_id), functools.partial(_source_there, root, source_id)):
            continue
        if known is None:
            known = root.names(root.sources)
        # a folder or a link to no file there is something, not nothing: "does not exist" sent the user looking
        source_file = root.sources / f"{source_id}.toml"
        state = "is not a source file (a folder, or a link to no file)" if os.path.lexists(source_file) else (
            "does not exist")
        # a near miss (`intel-gaudi-3-whitepaper` for the registered `intel-gaudi3-whitepaper`) was listed among
        # 38 ids unmarked, where a card or routing name not found says "did you mean" (walkthrough 23)
        near = did_you_mean(source_id, known) if state == "does not exist" else ""
        out.append(
            f"{file}: {key}: no source {source_id!r}{near} ({named_in(root, source_file)} {state}: write it "
            f"(a [source] table, schema/source.schema.json), or cite {registered_ids(source_id, known, near)})"
        )
    return out


def registered_ids(source_id: str, known: list[str], near: str) -> str:
    """Which registered source ids (``known``, sorted) a line on ``source_id`` not found points to, after "or cite":
    ``one of the 37 registered (passprice sources lists them)``; ``a registered one: none`` when there is none. The
    ids close to ``source_id`` are named by its "did you mean" hint alone (``near``,
    :func:`passprice.registry.did_you_mean`, the one place a name not found is offered names, with its likeness
    cutoff): the line listed "the closest" three whatever their likeness (walk95: for ``my-notes``,
    ``xytpai-nvbench, amd-cdna3-whitepaper, ws1-design``). Each line listed every id before (leftovers 28c: a
    card's 12 citations of ids not registered made ``check`` print 1.1 MB in a registry of 4,036 records). Raises
    nothing."""
    del source_id, near  # named by the hint
    if not known:
        return "a registered one: none"
    return f"one of the {len(known):,} registered (passprice sources lists them)"


def _paths_hold(document: dict[str, Any]) -> bool:
    """Whether a kept ``source-set`` document is one its build writes: ``{"paths": {source id: path}}``, every id and
    path text (issue 13, tests/test_forge132.py: one forged without ``paths`` listed the sources cited by none).
    Raises nothing."""
    paths = document.get("paths")
    return (document.keys() == {"paths"} and type(paths) is dict
            and all(type(k) is str and type(v) is str for k, v in paths.items()))


def invalid_ids(root: Root, named: Iterable[tuple[str, str]], file: str) -> list[str]:
    """One line per registered source file a (key, source id) of ``named`` names that does not validate against
    ``schema/source.schema.json`` (:func:`passprice.schema.load`: a ``[source]`` table without its ``url``,
    ``publisher`` or ``retrieved``), every problem of the file in it: ``FILE: KEY: source 'ID' does not validate:
    SOURCE_FILE: PROBLEM; PROBLEM``. An id with no file is :func:`missing_ids`'s; each file is read once.

    A valid record that names a document of this registry (``path``: a review, a design) whose file is not a regular
    file inside the root (:func:`passprice.registry.document_problem`: gone, a FIFO, a folder, outside the root) is
    a citation nobody can trace too, as ``check`` says: ``FILE: KEY: source 'ID' names no document of this registry:
    SOURCE_FILE: source.path: PROBLEM`` (round 23: ``price`` and ``lock`` took it while ``check`` refused it).

    The files a card cites pass or fail together as one entry of the validated-document cache
    (:mod:`passprice.cache`, kind ``source-set``), keyed by each file's id and bytes: a ``price`` of a card citing
    five valid records reads one entry, not five (each a JSON document to parse). The entry holds each record's
    ``path``, looked at again on every run (a ``stat``, never cached: the document may go while the record stays)."""
    from passprice import cache, snapshot

    folder = str(root.sources)
    there: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, source_id in named:
        if not SOURCE_ID.fullmatch(source_id) or source_id in seen:
            continue
        seen.add(source_id)
        # each source file looked for once a snapshot, as missing_ids looks (2,000 cards: 11,274 stats, scale36)
        if snapshot.made(("source-there", folder, source_id), functools.partial(_source_there, root, source_id)):
            there.append((key, source_id))
    if not there:
        return []
    # Inside a snapshot (one read of the registry: no file changes under it) a set of records found traceable once is
    # so for every file citing it: 2,000 cards citing the same records looked them up 2,000 times (session 32).
    traced = ("traced-sources", folder, tuple(sorted({source_id for _, source_id in there})))
    if snapshot.kept(traced):
        return []
    cited = [(key, source_id, root.sources / f"{source_id}.toml") for key, source_id in there]
    out: list[str] = []
    paths: dict[str, str] = {}  # each valid record's registry document, by id: the entry's, or the build's

    def build() -> dict[str, Any]:
        for key, source_id, source_file in cited:
            try:
                document = schema.load(source_file, "source", root.schema, data=data.get(source_id))
                path = document["source"].get("path")
                if isinstance(path, str):
                    paths[source_id] = path
            except SchemaError as e:
                out.append(f"{file}: {key}: source {source_id!r} does not validate: {named_in(root, e.source)}: "
                           f"{'; '.join(e.problems)}")
            except InputError as e:
                out.append(f"{file}: {key}: source {source_id!r} does not validate: {'; '.join(problem_lines(e))}")
        if out:
            raise _Untraceable
        return {"paths": dict(paths)}

    data: dict[str, bytes] = {}
    try:
        for _, source_id, source_file in cited:
            data[source_id] = schema.read_bytes(source_file)
    except InputError:  # a file gone or unreadable since it was looked for: each is read and said again
        data.clear()
        with contextlib.suppress(_Untraceable):
            build()
    else:
        stamp = b"".join(b"%d:%s\0%d:" % (len(i), i.encode(), len(data[i])) + data[i] for i in data)
        with contextlib.suppress(_Untraceable):
            stored = cache.validated("source-set", root.schema / "source.schema.json", stamp, build,
                                     _paths_hold).get("paths")
            if isinstance(stored, dict):
                paths.update((k, v) for k, v in stored.items() if isinstance(v, str))
    # Looked at on every run, never cached (the document may go while the record stays), the valid records' alongside
    # the invalid ones' lines: every problem in one run.
    for key, source_id, source_file in cited:
        problem = document_problem(root, paths[source_id]) if source_id in paths else None
        if problem is not None:
            out.append(f"{file}: {key}: source {source_id!r} names no document of this registry: "
                       f"{named_in(root, source_file)}: "
                       f"source.path: {problem}")
    if not out:
        snapshot.made(traced, lambda: True)
    return out


class _Untraceable(Exception):
    """A set of source records of which one does not validate: never stored as passed (:func:`invalid_ids`)."""


def untraceable_sources(root: Root, facts: Mapping[str, Fact], file: str) -> list[str]:
    """One line per problem of a citation of the ``facts`` of ``file`` nobody can trace: a source ``root`` has no
    record of (:func:`missing_sources`), then each schema problem of a cited record that does not validate
    (:func:`invalid_ids`: ``kind = "notes"`` with no ``url`` or ``date``). What every command that prices reads a
    card, stack, routing record or drafting method through, so ``price`` refuses what ``lock`` and ``check`` refuse;
    each record goes through :func:`passprice.schema.load` (the validated-document cache, the snapshot)."""
    named = [pair for path, fact in facts.items() for pair in cited_ids(path, fact)]
    return missing_ids(root, named, file) + invalid_ids(root, named, file)


def require_sources(root: Root, facts: Mapping[str, Fact], file: str) -> None:
    """Raise :class:`InputError` (one line a problem, naming the file and key, :func:`untraceable_sources`) when the
    ``facts`` of ``file`` cite a source ``root`` has no record of, or one whose record does not validate: a citation
    nobody can trace is not a citation."""
    lines = untraceable_sources(root, facts, file)
    if lines:
        raise InputError.of(lines)


def undated(sources: Iterable[Source]) -> list[str]:
    """The ids of ``sources`` whose record says the copy read was retrieved on an ``unknown`` day (a registry
    document, which has no ``retrieved``, is not among them), in the order given. Raises nothing."""
    return [s.id for s in sources if s.retrieved == "unknown"]


#: The most source ids :func:`undated_line` names (past it, the first 3 and how many more: ``sources`` lists all), so
#: the warning stays one line under the 400 characters every line ``check`` prints keeps to (21 ids: 759).
UNDATED_SHOWN = 5


def undated_line(ids: Sequence[str]) -> str | None:
    """The one warning ``check`` gives for the source records of ``ids`` (:func:`undated`) that say
    ``retrieved = "unknown"``: how many, which, and why it is a warning (the figure a fact quotes cannot be dated to
    the copy it was read in; a date is never guessed) and not an error; ``None`` when there are none (left32: 21 of
    the 36 shipped records said so, and neither ``sources`` nor ``check`` said it)."""
    if not ids:
        return None
    n = len(ids)
    # At most UNDATED_SHOWN ids on the line: 10,000 undated records made it a line of 150 KB (attack round 58).
    first = UNDATED_SHOWN - 2
    shown = ", ".join(ids) if n <= UNDATED_SHOWN else f"{', '.join(ids[:first])} and {n - first:,} more"
    return (f"{n:,} source record{'s say' if n != 1 else ' says'} retrieved = \"unknown\" ({shown}): no date is "
            "recorded for the copy that was read, and none is guessed; add source.retrieved (YYYY-MM-DD) when it is "
            "known (passprice sources lists them)")


#: The bytes hashed by :func:`excerpt_sha256` (those of :data:`_HASHED_FROM` bytes or more), by their length, first
#: and last 64 bytes, each with its sha256 (hex); the last :data:`_HASHED_KEPT` kept.
_HASHED: dict[tuple[int, bytes, bytes], tuple[bytes, str]] = {}
_HASHED_KEPT = 8
_HASHED_FROM = 64 * 1024


def excerpt_sha256(data: bytes) -> str:
    """The sha256 of ``data`` (a stored excerpt's bytes), hex, as ``excerpt_sha256`` pins it (FIPS 180-4,
    :func:`hashlib.sha256`). Bytes equal to ones hashed before in this process (:data:`_HASHED_FROM` bytes or more)
    take their digest, the two compared in C: a review of 40 records naming one excerpt of 900,000 bytes hashed it 360
    times (the record's pin checked, its sections read, its lines compared, each side), 0.5-1 ms a hash against
    0.05 ms a comparison. Raises nothing."""
    import hashlib

    if len(data) < _HASHED_FROM:
        return hashlib.sha256(data).hexdigest()
    key = (len(data), data[:64], data[-64:])
    kept = _HASHED.get(key)
    if kept is not None and kept[0] == data:
        return kept[1]
    digest = hashlib.sha256(data).hexdigest()
    if len(_HASHED) >= _HASHED_KEPT:
        _HASHED.pop(next(iter(_HASHED)))
    _HASHED[key] = data, digest
    return digest


def excerpt_problem(root: Root, source: Source) -> str | None:
    """What is wrong with the stored excerpt ``source`` names (``source.excerpt``), as
    :func:`passprice.registry.document_problem` words it for that key: ``None`` when the record names none, or it is
    a regular file inside ``root`` at its own plain path. Walkthrough 106: every record named an excerpt in the
    checkout's ``tests/data/``, which no wheel (and no ``init`` registry) held, and ``check`` said nothing of it.
    A regular file whose bytes' sha256 is not the record's ``excerpt_sha256`` (where it pins one) is a problem too
    (:func:`excerpt_digest_problem`). Raises nothing."""
    if source.excerpt is None:
        return None
    from passprice import snapshot

    if snapshot.active():  # the file looked at and read once a snapshot (:func:`excerpt_state`)
        return excerpt_state(root, source)[0]
    problem = document_problem(root, source.excerpt, "source.excerpt")
    return problem if problem is not None else excerpt_digest_problem(root, source)


def excerpt_state(root: Root, source: Source) -> tuple[str | None, str | None, bytes | None, str | None]:
    """The stored excerpt ``source`` names as :func:`stored_text` reads it: ``(problem, unread, data, digest)``,
    ``problem`` :func:`excerpt_problem`'s words (not a regular file of ``root``, or not the bytes the record pins),
    else ``unread`` why a regular file did not read (larger than :data:`EXCERPT_BYTES`, an error), else its bytes
    ``data`` and their sha256 ``digest`` (hex, :func:`excerpt_sha256`); all ``None`` when the record names none.
    Inside a snapshot (:mod:`passprice.snapshot`), made once for each root, excerpt and pin: ``check`` looked at each
    file, read it and hashed it for its record's pin, then again for the quotes its facts quote
    (:func:`passprice.lineage.quote_problems`), whose cache entry is keyed by ``digest``. Raises nothing."""
    from passprice import snapshot

    if source.excerpt is None:
        return None, None, None, None
    return snapshot.made(("excerpt-state", os.fspath(root.path), source.excerpt, source.excerpt_sha256),
                         functools.partial(_excerpt_state, root, source))


def _excerpt_state(root: Root, source: Source) -> tuple[str | None, str | None, bytes | None, str | None]:
    """:func:`excerpt_state`, made."""
    from passprice.files import read_regular

    assert source.excerpt is not None
    # excerpt_problem's words, the bytes its pin check read kept for the text
    problem = document_problem(root, source.excerpt, "source.excerpt")
    data: bytes | None = None
    if problem is None:
        problem, data = _pinned_problem(root, source)
    if problem is not None:
        return problem, None, None, None
    try:
        if data is None:
            data = read_regular(root.path / source.excerpt, EXCERPT_BYTES)
    except InputError as e:
        return None, str(e), None, None
    except OSError as e:
        return None, f"{source.excerpt}: {e.strerror or type(e).__name__}", None, None
    return None, None, data, excerpt_sha256(data)


def excerpt_digest_problem(root: Root, source: Source) -> str | None:
    """What is wrong with ``source``'s stored excerpt (a regular file of ``root``) against the sha256 its record pins
    (``excerpt_sha256``): ``None`` when the record pins none or the bytes match; else that the file is larger than
    :data:`EXCERPT_BYTES` or cannot be read, or its bytes' sha256 and the pinned one (each to 12 digits, the file's
    in full to paste), with what to do: restore the file, or re-pin it if the new text is what was read; or, the bytes
    pinned, that they are not UTF-8 text (``check`` passed such an excerpt that ``audit`` called unusable) or hold
    other sources' sections alone (:func:`foreign_sections`); bytes that are the pinned ones with CRLF line ends are
    said to be a checkout's line-end conversion, which restoring repeats, with what to remove first. The
    excerpt holds the lines the locators citing the record quote, which ``audit`` checks each quote against: an
    edit of it changed what ``audit`` said while ``check`` passed and the review said "no changes" (a new user's
    finding, tests/test_walk128.py). Raises nothing."""
    return _pinned_problem(root, source)[0]


def _pinned_problem(root: Root, source: Source) -> tuple[str | None, bytes | None]:
    """:func:`excerpt_digest_problem` of ``source``, with the excerpt's bytes read for it (``None`` when the record
    pins none, or they did not read): :func:`stored_text` reads them once, not once for the pin and once for the
    text. Raises nothing."""
    from passprice.files import read_regular

    if source.excerpt is None or source.excerpt_sha256 is None:
        return None, None
    try:
        data = read_regular(root.path / source.excerpt, EXCERPT_BYTES)
    except InputError as e:
        return str(e), None
    except OSError as e:
        return f"{source.excerpt}: {e.strerror or type(e).__name__}", None
    return _digest_problem(root, source, source.excerpt, source.excerpt_sha256, data), data


def _digest_problem(root: Root, source: Source, excerpt: str, pinned: str, data: bytes) -> str | None:
    """:func:`excerpt_digest_problem` of ``source`` in ``root``, whose record names the excerpt ``excerpt`` and pins
    ``pinned`` (hex), its bytes read ``data``."""
    import hashlib

    from passprice.files import shell_word

    found = excerpt_sha256(data)
    if found != pinned and b"\r\n" in data and hashlib.sha256(
            data.replace(b"\r\n", b"\n")).hexdigest() == pinned:
        # the pinned bytes with CRLF line ends: a checkout's line-end conversion, which `git checkout -- PATH`
        # repeats (tests/test_fix146.py: the advice to restore it wrote the same bytes again); a setting of git's
        # config that does it here is named (tests/test_odds150.py)
        from passprice.gitread import config_line_ends, index_keeps_bytes

        restore = (f"`rm {shell_word(excerpt)} && git checkout -- {shell_word(excerpt)}`: git passes over a file its "
                   "index calls unchanged")
        if index_keeps_bytes(root.path, excerpt):  # the -text rule is committed now: restoring is all that is left
            return (f"{excerpt}'s sha256 is {found[:12]}…, not the {pinned[:12]}… the record pins "
                    "(source.excerpt_sha256): it is the pinned text with CRLF line ends, which an earlier checkout "
                    "wrote before the .gitattributes rule setting -text on it; restore it "
                    f"({restore})")
        setting = config_line_ends(root.path)
        here = "" if setting is None else f"; here {setting.name}={setting.value}, a setting of {setting.where}"
        return (f"{excerpt}'s sha256 is {found[:12]}…, not the {pinned[:12]}… the record pins "
                "(source.excerpt_sha256): it is the pinned text with CRLF line ends, which git's line-end conversion "
                f"writes in a checkout (an eol=crlf or text rule of .gitattributes, or core.autocrlf{here}) and `git "
                "checkout` writes again while it applies; remove that rule or setting for passprice's files (or set "
                "-text on them), the .gitattributes edit staged (`git add .gitattributes`: a checkout reads the "
                f"index's rules), then restore it ({restore})")
    if found == pinned:
        read = _excerpt_read(data, found)
        if read.bad is not None:  # pinned, but no text audit can check a quote against (a new user's finding)
            return (f"{excerpt}: not UTF-8 text (byte {read.bad:,}): no quote can be checked against it; store "
                    "the lines quoted as UTF-8 text and pin them")
        foreign = read.foreign(source.id)
        return None if foreign is None else f"{excerpt}: {foreign}"
    return (f"{excerpt}'s sha256 is {found[:12]}…, not the {pinned[:12]}… the record pins "
            f"(source.excerpt_sha256): the excerpt changed since it was pinned; restore it (`git checkout -- "
            f"{excerpt}`), or, if the new text is what was read, pin it: excerpt_sha256 = \"{found}\"")


#: The stable ``code`` of ``check``'s warning of a record naming a stored excerpt it does not pin (``--json``'s
#: ``coded_warnings``, :func:`passprice.addedfacts.warning_code`): :func:`unpinned_line`.
UNPINNED_EXCERPT = "unpinned_excerpt"

#: The words of :func:`unpinned_line` that :func:`passprice.addedfacts.warning_code` knows it by.
UNPINNED_WORDS = "is not pinned (the record has no excerpt_sha256)"


def unpinned_line(root: Root, source: Source) -> str | None:
    """What ``check`` warns of a record naming a stored excerpt (a regular file of ``root``) it does not pin
    (``excerpt_sha256`` missing): ``PATH is not pinned (the record has no excerpt_sha256): an edit of it would
    change what audit checks the quotes against and no check would see it; pin it: excerpt_sha256 = "SHA256"``,
    the file's sha256 in full to paste; ``None`` when the record names no excerpt, pins it, or the file does not
    read (:func:`excerpt_problem` says that). A pin is optional, so this warns, never fails (tests/test_left131.py:
    an unpinned excerpt got no word). Raises nothing."""
    from passprice.files import read_regular

    if source.excerpt is None or source.excerpt_sha256 is not None:
        return None
    try:
        data = read_regular(root.path / source.excerpt, EXCERPT_BYTES)
    except (InputError, OSError):
        return None
    return (f"{source.excerpt} {UNPINNED_WORDS}: an edit of it would change what audit checks the quotes against "
            f"and no check would see it; pin it: excerpt_sha256 = \"{excerpt_sha256(data)}\"")


#: The code of ``check``'s warning of a stored excerpt's header line that reads like a page declaration but is none
#: the quote check takes (:func:`pages_declaration_lines`).
PAGES_DECLARATION = "pages_declaration"
#: A header line that reads as a try at :data:`_PAGES_DECLARED_TEXT`: any case and spacing.
_PAGES_LIKE_TEXT = r"^#\s*numbers\s+are\s+pages\b"
#: The words of :func:`pages_declaration_lines`' two warnings, by which :func:`passprice.addedfacts.warning_code` codes
#: them.
PAGES_DECLARATION_WORDS = "is not the declaration that the numbers are pages"
PAGES_NAMED_WORDS = "which no section of this file is headed nor any record naming it is"


def pages_declaration_lines(excerpt: str, data: bytes, ids: Iterable[str]) -> list[str]:
    """What ``check`` warns (coded :data:`PAGES_DECLARATION`) of the header of the stored excerpt ``excerpt`` (its
    path, ``data`` its bytes; ``ids`` the records naming it): ``EXCERPT: line N: …`` for each ``#`` line before its
    first section that reads like the declaration that its numbers are pages (any case or spacing,
    :data:`_PAGES_LIKE_TEXT`) but is not it as written (:data:`_PAGES_DECLARED_TEXT`), and for each id an exact
    ``# Numbers are pages: ID …`` names that is neither a section of the file nor a record naming it. Either typo
    left page checking off without a word (a quote after ``p. N`` looked for in the whole text, issue 13,
    tests/test_quote145.py). Empty for bytes over :data:`EXCERPT_BYTES` or not UTF-8. Linear in ``data``. Raises
    nothing."""
    if len(data) > EXCERPT_BYTES:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    like, exact = _compiled(_PAGES_LIKE_TEXT), _compiled(_PAGES_DECLARED_TEXT)
    # the lines joined by one kind of break, the header's end and its '#' lines found by a search in C (a line at a
    # time: 0.08 s of CPU for an excerpt of 450,000 lines and no section)
    if "#" not in text:  # no header line to look at
        return []
    joined = "\n".join(text.splitlines())
    first = _compiled("(?m)" + _SECTION_TEXT).search(joined) if "== " in joined else None
    header = joined if first is None else joined[:first.start()]
    known: set[str] | None = None  # the file's sections and the records naming it, made at a declaration naming ids
    out: list[str] = []
    n, at = 1, 0
    for hashed in _compiled("(?m)^#.*$").finditer(header):
        n += header.count("\n", at, hashed.start())
        at = hashed.start()
        line = hashed.group()
        declared = exact.match(line)
        if declared is None and like.match(line.lower()):
            out.append(f"{escaped(excerpt)}: line {n:,}: '{escaped(line[:80])}' {PAGES_DECLARATION_WORDS}, so a "
                       "quote after 'p. N' is looked for in the whole text; write it '# Numbers are pages' (or "
                       "'# Numbers are pages: ID ID …')")
        elif declared is not None and declared.group(1) is not None:
            if known is None:
                known = {m.group(1) for m in _compiled("(?m)" + _SECTION_TEXT).finditer(joined)} | set(ids)
            unknown = [i for i in declared.group(1).split() if i not in known]
            if unknown or not declared.group(1).split():
                shown = ", ".join(escaped(i) for i in unknown[:5]) or "no id"
                shown += f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
                out.append(f"{escaped(excerpt)}: line {n:,}: '# Numbers are pages:' names {shown}, "
                           f"{PAGES_NAMED_WORDS}: no section's numbers are read as pages for it; name the "
                           "section's source id (its '== ID PATH URL ==' line)")
    return out


#: What a stored excerpt holds, as every output words it beside its file: the lines of the document a record's
#: locators quote (with their line numbers and the copy's address), not the whole text read (a new user read "(the
#: text read)" and expected the page: tests/test_walk128.py).
EXCERPT_HOLDS = "the lines quoted from the text read"


def excerpt_words(excerpt: str, home: Path | None = None) -> str:
    """A stored excerpt's path ``excerpt`` (from the registry's top folder) as the text names it after ``stored
    excerpt:``: ``PATH (the lines quoted from the text read, from the registry's top folder)`` for a registry of the
    user's; with ``home``, the built-in registry's folder, ``the built-in registry's PATH (the lines quoted from the
    text read; its file: /ABS/PATH)`` (the README's promise for a file of the built-in registry: text names it so,
    and gives the absolute path a command can read; walkthrough 128 found none). Raises nothing."""
    from passprice.registry import BUILT_IN

    if home is not None:
        return f"{BUILT_IN}{excerpt} ({EXCERPT_HOLDS}; its file: {home / excerpt})"
    return f"{excerpt} ({EXCERPT_HOLDS}, from the registry's top folder)"


def excerpt_named(root: Root, source: Source) -> str | None:
    """How ``audit --source`` names the stored excerpt of ``source`` after ``stored excerpt:``, or ``None`` when the
    record names none: ``the built-in registry's sources/excerpts/X.txt`` in the registry passprice ships
    (:data:`passprice.registry.BUILT_IN`, as a lock or checkpoint entry of it is named: walkthrough 106, run
    outside the checkout, read ``tests/data/…`` as a path of the working folder), else ``PATH (…, from the
    registry's top folder)`` (:func:`excerpt_words`); with ``, but PROBLEM`` when it is not a regular file of ``root``
    (:func:`excerpt_problem`). Raises nothing."""
    if source.excerpt is None:
        return None
    named = excerpt_words(source.excerpt, root.path if root.embedded else None)
    problem = excerpt_problem(root, source)
    return named if problem is None else f"{named}, but {problem}"


def check_sources(
    root: Root, cited: Iterable[str], unreadable: list[str] | None = None, loaded: dict[str, Source] | None = None
) -> tuple[list[str], list[str]]:
    """``passprice check``'s look at ``sources/``: the problems (a file that does not read; a registry document
    whose path is not a regular file inside the root, :func:`document_problem`; a stored excerpt that is not one,
    :func:`excerpt_problem`) and the warnings (a source nothing in ``cited`` names; a stored excerpt the record does
    not pin, :func:`unpinned_line`; a stored excerpt's header line mistyping the declaration that its numbers are
    pages, :func:`pages_declaration_lines`), one line each; the problems are appended to ``unreadable`` too (bad
    files), and each record that reads is put in ``loaded`` by id (so :func:`passprice.lineage.document_hashes` loads
    none twice: with 4,000 records, the second load was about a tenth of a cold ``check``)."""
    from passprice.files import read_regular

    problems: list[str] = []
    warnings: list[str] = []
    excerpts: dict[str, list[str]] = {}  # each stored excerpt a record names: the records naming it
    named = set(cited)
    # With a record that does not read (a card of mode 000, a TOML error), a source only it cites is cited by no fact
    # read: said so, not "cited by no fact: … remove it" of a source that unreadable card cites (attack round 27).
    unsure = " of the files that read (some do not: it may be cited there)" if unreadable else ""
    for name in root.scan(root.sources):
        try:
            source = load_source(root, name)
        except InputError as e:
            problems += problem_lines(e)
            continue
        if loaded is not None:
            loaded[name] = source
        file = root.sources / f"{name}.toml"
        problem = document_problem(root, source.path) if source.path is not None else None
        if problem is not None:
            problems.append(f"{file}: source.path: {problem}")
        problem = excerpt_problem(root, source)
        if problem is not None:
            problems.append(f"{file}: source.excerpt: {problem}")
        else:
            unpinned = unpinned_line(root, source)
            if unpinned is not None:
                warnings.append(f"{file}: source.excerpt: {unpinned}")
            if source.excerpt is not None:
                excerpts.setdefault(source.excerpt, []).append(source.id)
        if name not in named and unsure:
            warnings.append(f"{file}: cited by no fact{unsure}")
        elif name not in named:
            warnings.append(f"{file}: cited by no fact: cite it, or remove it")
    for excerpt, ids in sorted(excerpts.items()):
        with contextlib.suppress(InputError, OSError):
            warnings += pages_declaration_lines(excerpt, read_regular(root.path / excerpt, EXCERPT_BYTES), ids)
    if unreadable is not None:
        unreadable += problems
    return problems, warnings


#: A span a locator quotes: text between single quotes, the first opening at the text's start or after a blank,
#: bracket or punctuation (so ``the card's`` opens none), the second closing before one or at the end. The one
#: pattern the registry's citation tests (tests/test_cite66.py and those after it) read a quote with.
_QUOTED_SPAN_TEXT = r"(?:(?<=^)|(?<=[\s(\[:;,]))'(.+?)'(?=$|[\s),;:\].])"

#: The most bytes of a stored excerpt read to check quotes against (the largest shipped is 19,590 bytes); a larger
#: file is said to be too large, unread. With :data:`SEARCHED_MOST` it bounds a command's look-ups: about 42 of a
#: text of 1 MB.
EXCERPT_BYTES = 1024 * 1024

#: A section line of a stored excerpt: ``== SOURCE PATH URL ==`` (or ``== PATH ==``, one document's file).
_SECTION_TEXT = r"^== (\S+)(?: .*)? ==$"
#: A copied line's number and tab (``19\tThe A100 GPU includes …``): the page or line it was read at.
_NUMBERED_TEXT = r"^\d+\t"
#: The number of a copied line (:data:`_NUMBERED_TEXT`), read as the page a quote after ``p. N`` is looked for on.
_NUMBER_TEXT = r"^(\d{1,6})\t"

#: The line of a stored excerpt's header (the ``#`` lines before its first section) saying that the numbers its
#: lines open with are the document's pages, not the lines of the copy: ``# Numbers are pages`` (every section's)
#: or ``# Numbers are pages: ID ID …`` (the sections of those sources). A quote after ``p. N`` in a locator is looked
#: for on page ``N`` alone only in a section declared so (:attr:`StoredText.paged`); an excerpt numbering its lines
#: read ``p. 30: '…'`` as line 30 and said NOT FOUND of a quote it held (tests/test_left131.py).
_PAGES_DECLARED_TEXT = r"^# Numbers are pages(?:: ([^\n]*))?$"

#: A page a locator names (``p. 19: 'The A100 GPU includes …'``, ``p. 36, Table 4 row '…'``): each quote after it, up
#: to the next page named, is looked for on that page's lines of the stored text (:func:`paged_spans`). Up to six
#: digits (``pp. 36-37`` names none: its quotes are then those of the page named before, or of the whole text).
_PAGE_NAMED_TEXT = r"\bp\. (\d{1,6})\b"


#: What may stand before a span's opening quote and after its closing one (:data:`QUOTED_SPAN`'s lookarounds).
_OPENS_AFTER = frozenset("([:;,")
_CLOSES_BEFORE = frozenset("),;:].")


def _quotes(text: str) -> list[tuple[int, str]]:
    """Each span ``text`` quotes with the offset of its opening quote: :data:`QUOTED_SPAN`'s ``finditer``, read in one
    pass. The pattern's lazy ``.+?`` scans each opening quote to its line's end when no quote closes there: a locator
    of 10,000 characters of `` 'a`` took 0.26 s of CPU a read, and ``audit --source`` reads each citing fact's
    (tests/test_attack133.py). The quotes and line breaks are found by searches in C (:meth:`str.find`), each quote
    then read as an opening or a closing one by the characters beside it, and the two paired walking them once: a
    character at a time in Python was a third of ``check``'s look at quotes on the shipped registry (567 locators,
    87,000 characters; docs/PERFORMANCE.md). Linear in ``text``. Raises nothing."""
    k = text.find("'")
    if k < 0:
        return []
    n = len(text)
    opens: list[int] = []
    closes: list[int] = []  # a quote before one of _CLOSES_BEFORE, a blank, or the text's end
    while k >= 0:
        if k == 0 or text[k - 1] in _OPENS_AFTER or text[k - 1].isspace():
            opens.append(k)
        if k + 1 == n or text[k + 1] in _CLOSES_BEFORE or text[k + 1].isspace():
            closes.append(k)
        k = text.find("'", k + 1)
    if not opens or not closes:
        return []
    breaks: list[int] = []
    k = text.find("\n", opens[0])
    while 0 <= k < closes[-1]:
        breaks.append(k)
        k = text.find("\n", k + 1)
    out: list[tuple[int, str]] = []
    c = b = 0  # the first closing quote, and line break, not yet passed
    after = -1  # the closing quote of the span found last: an opening at or before it opens nothing
    for i in opens:
        if i <= after:
            continue
        while c < len(closes) and closes[c] < i + 2:  # a span holds a character at least
            c += 1
        if c == len(closes):
            break  # no quote closes past here: no span opens
        while b < len(breaks) and breaks[b] <= i:
            b += 1
        j = closes[c]
        if b < len(breaks) and breaks[b] < j:
            continue  # a line break before the closing quote: this opening closes none
        out.append((i, text[i + 1 : j]))
        after = j
    return out


def quoted_spans(locator: str) -> list[str]:
    """The spans ``locator`` quotes (:data:`QUOTED_SPAN`), in order, but a blank one (``' '``), which quotes nothing:
    found in any text, it made audit say ``checked (1 of 1 quoted span found in the stored text)`` of a locator
    quoting nothing else (tests/test_attack121.py). The first 10,000 characters are read, in one pass
    (:func:`_quotes`). Raises nothing."""
    return [span for _, span in _quotes(locator[:10_000]) if not span.isspace()]


def paged_spans(locator: str) -> list[tuple[int | None, str]]:
    """Each span ``locator`` quotes (:func:`quoted_spans`, in order, a blank one none) with the page it is to be
    found on: the last page the locator names before it (:data:`_PAGE_NAMED_TEXT`), ``None`` before any (the whole
    stored text). The one
    reading of a locator's pages that ``audit``'s quote check (:meth:`StoredText.holds`) and the citation tests
    (tests/test_cite72.py: each quote verbatim on the page it names) share. Linear in the locator's first 10,000
    characters. Raises nothing."""
    from bisect import bisect_left

    text = locator[:10_000]
    starts: list[int] = []
    pages: list[int] = []
    for m in _compiled(_PAGE_NAMED_TEXT).finditer(text) if "p. " in text else ():  # most name no page
        starts.append(m.start())
        pages.append(int(m.group(1)))
    out: list[tuple[int | None, str]] = []
    for opening, span in _quotes(text):
        if span.isspace():
            continue  # a blank span quotes nothing (:func:`quoted_spans`)
        at = bisect_left(starts, opening)  # the marks starting before the quote's opening
        out.append((pages[at - 1] if at else None, span))
    return out


@attrs.frozen
class StoredText:
    """The stored excerpt a source record names (``source.excerpt``) as a quote is checked against it: ``problem``
    what is wrong with the file as one of the registry (:func:`excerpt_problem`, the words ``check`` and ``audit``
    print), ``unread`` why a regular one did not read (too large, not UTF-8), else ``text``: the lines of the
    sections of the file that name ``source`` (``== SOURCE … ==``; the whole file's when none names it), each without
    its ``NUMBER<TAB>`` prefix, and without the ``#`` header lines before the first section; ``flat`` that text with
    every run of blanks (line breaks too) one space, what :meth:`holds` searches; ``pages`` the same of each page
    (the lines numbered ``N<TAB>``, by ``N``: where a copy numbers its lines by the document's pages, a quote after
    ``p. N`` in its locator is looked for on page ``N`` alone, :func:`paged_spans`); ``paged`` whether the
    numbers are pages (the excerpt's header says so, :data:`PAGES_DECLARED`): where they number the copy's lines, a
    page a locator names is no line number, and the quote is looked for in the whole text (an excerpt numbering its
    lines said NOT FOUND of ``p. 30: '…'`` for a quote it held, tests/test_left131.py)."""

    source: str
    excerpt: str | None
    problem: str | None = None
    text: str | None = None
    unread: str | None = None
    flat: str | None = None
    pages: Mapping[int, str] = attrs.field(factory=dict)
    #: :attr:`flat` (key ``None``) and each page of :attr:`pages` looked on, as :meth:`holds` searches them
    #: (:func:`_searched`), made at the first look-up of each: a text is read so once whatever the spans looked up.
    searched: dict[int | str | None, tuple[str, str]] = attrs.field(factory=dict, eq=False, repr=False)
    paged: bool = True
    #: The flat text (as :attr:`flat`) of each part of the text a section heading names (``== SOURCE PATH URL ==``'s
    #: ``PATH``, or a ``== PATH ==`` heading's whole text where the file heads no section ``SOURCE``), by that name:
    #: a quote whose locator names one is looked for under it alone (:meth:`parts_named`). One source's three Azure
    #: result files: ``'| Dot | 3.18 |'`` of the H100's file read ``checked`` of a locator naming the H200's
    #: (tests/test_fix154.py).
    parts: Mapping[str, str] = attrs.field(factory=dict)
    #: The excerpt's bytes as read (:class:`_Read`), whose lines :meth:`line_of` numbers; ``None`` when not kept.
    read: _Read | None = attrs.field(default=None, eq=False, repr=False)
    #: Of a record naming no excerpt: its ``registry`` document's path (:func:`registry_document`), a regular file of
    #: the registry that could be its stored text: :meth:`no_text` tells how (``excerpt = "PATH"``).
    document: str | None = None

    def _lines(self) -> NumberedLines | None:
        """The lines of this source's section of the excerpt (the whole file's where it heads none), numbered as in
        the file (:meth:`_Read.raw`); ``None`` when not kept or past :data:`PLACED_LINES`. Raises nothing."""
        if self.read is None or self.read.text is None:
            return None
        lines = self.read.raw(self.source)[1]
        return lines if len(lines.texts) <= PLACED_LINES else None

    def line_of(self, span: str) -> int | None:
        """The number in the excerpt file of the first line of this source's section holding ``span`` (or of the
        first of up to :data:`PLACED_RUN` lines in a row holding it: a sentence the copy breaks, a table row whose
        cells the copy puts a line each, ``'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'``), compared with every blank
        taken out and a numbered line's ``N<TAB>`` left out; ``None`` where no line or pair holds it so (a quote
        over a page's pieces), or the text is not kept or too long (:data:`PLACED_LINES`). For ``audit``, which
        gives each quote's place: ``sources/excerpts/cite70-excerpt.txt:62``. Raises nothing."""
        lines = self._lines()
        wanted = "".join(span.split())
        if lines is None or not wanted:
            return None
        tight = ["".join(_NUMBERED_LINE.sub("", line, count=1).split()) for line in lines.texts]
        for run in range(1, PLACED_RUN + 1):  # one line, then two next to each other, … (a table's cells a line)
            for i in range(len(tight) - run + 1):
                if wanted in "".join(tight[i:i + run]):
                    return lines.number(i)
        return None

    def as_marked(self, span: str) -> str | None:
        """``span`` as this text holds it with Markdown emphasis (``**``, ``*``, ``_``, backticks) between its
        characters, where the text lacks it as quoted but holds it so on one line (``'58/128 (45%)'`` → ``58/128
        (**45%**)``); ``None`` otherwise. The quote stays NOT FOUND (the match is not loosened): a NOT FOUND line
        says how to quote it (a new user quoted the page as it reads, and was told only to quote the words the
        excerpt holds). Raises nothing."""
        lines = self._lines()
        bare = _MARKUP.sub("", "".join(span.split()))
        if lines is None or not bare or len(bare) > SHOWN_SPAN:
            return None
        pattern = re.compile(r"[*_`\s]*".join(re.escape(c) for c in bare))
        for line in lines.texts:
            if bare in _MARKUP.sub("", "".join(line.split())):
                found = pattern.search(line)
                if found is not None and found.group(0) != span:
                    return found.group(0)
        return None

    def no_text(self) -> str:
        """``SOURCE has no stored text``, and, of a ``registry`` record whose document is a file of the registry,
        how to give it one: ``its document PATH is in this registry: add excerpt = "PATH" to its record to check
        its quotes against it`` (a new user's BabelStream notes, cited by a measured share, read ``not checked`` with
        nothing saying how to check them). Raises nothing."""
        said = f"{self.source} has no stored text"
        if self.document is None:
            return said
        return (f"{said}; its document {self.document} is in this registry: add excerpt = \"{self.document}\" to "
                f"sources/{self.source}.toml to check its quotes against it")

    def unusable(self) -> str | None:
        """Why no quote can be checked against the file (:attr:`problem`, else :attr:`unread`), ``None`` when it
        read."""
        return self.problem if self.problem is not None else self.unread

    def parts_named(self, locator: str) -> tuple[str, ...]:
        """The parts (:attr:`parts`) ``locator`` names, in the order it first names them, each name read loosely
        (:func:`_loose`: case, and a run of blanks, ``_`` and ``-``, not told apart): each part's name standing whole in
        it (not inside a longer path or word), or its last path component where no other part ends so and that holds a
        ``.`` (``ND_H200_v5_results.md``), or that component less its extension where no other part's is the same and it
        is at least 4 characters (prose: ``the ND H200 v5 results file``). Empty when it names none: its quotes are
        looked for in the whole text, and where the text has more than one part a span found under one is not
        ``checked`` (:func:`quote_check`). A locator spelling the H200's file ``Azure Results/ND_H200_v5_results.md`` or
        in lower case named none, and its quote of the H100's row read ``checked`` (tests/test_fix179.py). Linear in the
        locator's first 10,000 characters per part. Parts whose names read alike loosely (``Results/A.md`` and
        ``results/a.md``; ``Straße.md`` and ``STRASSE.md``, which case folding makes one) are told apart by the name
        as the heading writes it alone, standing whole in the locator as written: read loosely, a locator naming
        one named both, and its quote was looked for under the one sorting first, the other file's row reading
        ``checked`` (tests/test_attack187.py); a locator naming neither so names none of them. Raises nothing."""
        written = locator[:10_000]
        text = _loose(written)
        out: list[tuple[int, str]] = []
        for part, alike, shown in _part_names(tuple(self.parts)):
            if alike:  # another part's name reads alike: only the name as written tells them apart
                at = [i for i in (_whole_at(written, part),) if i >= 0]
            else:
                at = [i for i in (_whole_at(text, n) for n in shown) if i >= 0]
            if at:
                out.append((min(at), part))
        return tuple(part for _, part in sorted(out))

    def part_holding(self, span: str, but: Iterable[str] = ()) -> str | None:
        """The first part (:attr:`parts`) other than ``but`` whose text holds ``span`` as :meth:`holds` reads it,
        ``None`` when none does. Raises nothing."""
        return next((name for name in self.parts if name not in but and self.holds(span, part=name)), None)

    def holds(self, span: str, page: int | None = None, part: str | None = None) -> bool:
        """Whether ``span`` is in :attr:`text` (with ``page``, on that page's lines alone where the numbers are pages,
        :attr:`paged`: :attr:`pages`, a page the copy does not number holding nothing), every run of blanks (line breaks
        too) on either side read as one space (a quote of a sentence the copy breaks over two lines; a span in the text
        verbatim is in it so too), where each number the span holds is a whole number there too (:func:`_searched`):
        ``'4.8TB/s'`` is not in ``14.8TB/s``, nor ``'141'`` in ``1,141`` or ``141.5`` (tests/test_attack121.py: audit
        said ``checked`` of such a quote). Words may run on (``'64 GB High Bandwidth Memory'`` is in a slide's
        ``Transistors64 GB High Bandwidth Memory520 MB``, as text copied from a PDF runs), and blanks may differ (found
        with every blank taken out of both, where the copy drops spaces or cuts words over its pieces), but never
        between two numbers: ``'14.8TB/s'`` is not in ``1 4.8TB/s``, nor ``'1 4.8'`` in ``14.8``
        (tests/test_attack133.py). ``False`` without a text, and for a blank span. One search, of the form without
        blanks alone (a span in the marked form is in that one too): linear in the text (a look for ``'11'`` in
        900,000 ``1`` characters walked every place it was and was not a whole number: 0.5 s of CPU a span). With
        ``part`` (and no page), that part's text (:attr:`parts`) alone. Raises nothing."""
        if self.flat is None:
            return False
        tight = self._forms(page, part)[1]
        wanted, wanted_tight = _searched(" ".join(span.replace(_BARRIER, " ").split()))
        if not wanted:
            return False  # a blank span quotes nothing (:func:`quoted_spans` gives none)
        # A copy that drops spaces or cuts words over its numbered pieces (the SN40L slides' text: '1.5 TB High
        # Capacity M' / 'emory', '638 TFLOPS(bf16)'): the span and the text compared with their blanks taken out, as
        # tests/test_cite71.py compares them, each number still whole. Without it `audit --source
        # sambanova-sn40l-hot-chips-2024` said 5 of the SN40L's facts' quotes were NOT FOUND, and a review asked them
        # of a copy of its card (tests/test_slip_32.py).
        # Which was ``_within(wanted, marked) or _within(wanted_tight, tight)``: two searches of a span NOT FOUND. The
        # first answers nothing the second does not: taking every blank out of a text takes it out of each piece of
        # the text, so ``wanted`` in ``marked`` puts ``wanted_tight`` in ``tight`` (the padding, :data:`_BARRIER`, is
        # no blank and in no span). One search, the same answer (tests/test_cap160.py holds the two equal on every
        # shipped excerpt and fuzzed texts), half the CPU of a look-up NOT FOUND (docs/PERFORMANCE.md).
        return _within(wanted_tight, tight)

    def _forms(self, page: int | None, part: str | None = None) -> tuple[str, str]:
        """:func:`_searched` of :attr:`flat` (``page`` ``None``, or an excerpt whose numbers are not pages) or of
        that page's text, or (no page) of ``part``'s (:attr:`parts`), made once."""
        if not self.paged:
            page = None  # its numbers number the copy's lines: a page a locator names is none of them
        key: int | str | None = page if page is not None or part is None else "\0" + part
        if key not in self.searched:
            self.searched[key] = _searched((self.parts.get(part, "") if part is not None else (self.flat or ""))
                                           if page is None else self.pages.get(page, ""))
        return self.searched[key]

    def searched_size(self, page: int | None = None, parts: Iterable[Iterable[str]] = ()) -> int:
        """The characters a look-up by :meth:`holds` (on ``page``, or in each part of each of ``parts``, or the
        whole text) may search: its two forms' (:func:`_searched`), each at least :data:`LINEAR_FROM` (as
        :func:`_within` searches it), what it counts against :data:`SEARCHED_MOST`. Raises nothing."""
        named = [p for some in parts for p in some]
        if page is None and named:
            return sum(max(len(m), LINEAR_FROM) + max(len(t), LINEAR_FROM)
                       for m, t in (self._forms(None, p) for p in named))
        marked, tight = self._forms(page)
        return max(len(marked), LINEAR_FROM) + max(len(tight), LINEAR_FROM)


#: A number as the quote check reads it whole: digits, and a ``.`` or ``,`` between digits (``1,141``, ``14.8``).
_NUMBER_RUN_TEXT = r"(\d+(?:[.,]\d+)*)"
#: The mark :func:`_searched` puts on each side of a number (one in the text read as a blank first).
_MARK = "\x00"
#: What :func:`_flat_lines` puts in a stored text's flat form between two numbered lines whose numbers are not next
#: to each other (one in the excerpt or a quoted span read as a blank first): no span holds it, so none is found
#: across such a gap, and :func:`_searched` keeps it in both forms (it is no blank).
_BARRIER = "\x01"


#: The shortest text :func:`_within` searches: CPython (``Objects/stringlib/fastsearch.h``; measured on 3.11, the
#: oldest this package runs on) looks for a span of 6 to 99 characters in a text under 30,000 with its simple search,
#: which compares the span at every place the text is full of its last character: 2,000 look-ups of 97 ``a`` then
#: ``ba`` in 14,000 ``a`` took 1.13 s of CPU, 20 ns a character (1.3 s for the 64 MiB the bound was), where a text of
#: 30,000 or more is searched in linear time (two-way: 0.8-3.6 ns a character, whatever the span). A shorter form is
#: searched padded to it with :data:`_BARRIER`, which no span holds, and counted so
#: (:meth:`StoredText.searched_size`): those 2,000 look-ups took 0.11 s (benchmarks/bound147.py).
LINEAR_FROM = 30_000


def _within(span: str, text: str) -> bool:
    """Whether ``span`` is in ``text``, ``text`` searched at :data:`LINEAR_FROM` characters at least (padded with
    :data:`_BARRIER`, which ``span`` never holds: :meth:`StoredText.holds` reads one as a blank), so that the search
    is linear in them whatever the span. Raises nothing."""
    return span in (text if len(text) >= LINEAR_FROM else text.ljust(LINEAR_FROM, _BARRIER))


def _searched(flat: str) -> tuple[str, str]:
    """``flat`` (a text, its blanks runs of one space) as :meth:`StoredText.holds` searches it: each number
    (:data:`_NUMBER_RUN_TEXT`) between two marks, so a span is in it only taking each number whole (a span opening or
    closing with a digit opens or closes a number of the text: ``'4.8TB/s'`` is not in ``14.8TB/s``); and that with
    every blank taken out, the marks keeping two numbers apart (``1 4.8`` is not ``14.8``). Linear in ``flat``.
    Raises nothing."""
    # split() gives the text between numbers and each number (the pattern's one group) in turn, in C: a sub() put
    # each number back through Python (0.33 s of CPU for the 450,000 numbers of a 900,000-byte excerpt).
    # a NUL keeps two numbers apart, as a blank
    marked = _MARK.join(_compiled(_NUMBER_RUN_TEXT).split(flat.replace(_MARK, " ")))
    return marked, "".join(marked.split())


def _headings(joined: str) -> list[tuple[int, str]]:
    """Each section heading of ``joined`` (a text's lines, :meth:`str.splitlines`, joined by ``\\n``: its only line
    breaks) as its line's index (0 the first) and the section's id (:data:`_SECTION_TEXT`), in order: one search of
    the whole text in C (a line at a time was one Python step a line, 450,000 for a 900,000-byte excerpt). Raises
    nothing."""
    out: list[tuple[int, str]] = []
    at = index = 0
    if "== " not in joined:  # no heading: not searched line by line (a search of ^ visits every character)
        return out
    for m in _compiled("(?m)" + _SECTION_TEXT).finditer(joined):
        index += joined.count("\n", at, m.start())
        at = m.start()
        out.append((index, m.group(1)))
    return out


def _excerpt_lines(data: str, source: str) -> tuple[str, dict[int, str], bool, str]:
    """The text of ``data`` (a stored excerpt) that :class:`StoredText` checks quotes against for ``source``, its
    pages (:attr:`StoredText.pages`: each number's lines, every run of blanks one space, joined by one), whether
    its numbers are pages (:attr:`StoredText.paged`: the header declares it of every section or of ``source``'s,
    :data:`PAGES_DECLARED`), and its flat text (:attr:`StoredText.flat`: every run of blanks one space, and
    :data:`_BARRIER` between two numbered lines whose numbers are neither the same nor next to each other, so no
    quote spans them: ``'looks like: Detected 1 CUDA Capable'`` joined the L40S excerpt's lines 15 and 19 and read
    ``checked``, tests/test_quote145.py; lines numbered ``N`` and ``N+1``, a sentence the copy breaks, still join;
    :func:`_flat_lines` makes it, as it makes each part's of :func:`_excerpt_parts`).
    The sections, the header's declarations, the text and a flat text with no numbered line are each made by
    searching the whole text in C; only the numbered lines are read one Python step each (450,000 unnumbered lines:
    0.20 -> 0.03 s of CPU, docs/PERFORMANCE.md). Raises nothing."""
    all_lines = data.splitlines()
    joined = "\n".join(all_lines)  # the lines with one kind of line break: a pattern's ^ and $ (re.M) are theirs
    headings = _headings(joined)
    header = all_lines[:headings[0][0]] if headings else all_lines
    header_text = "\n".join(header) if headings else joined
    paged = False
    for declared in (_compiled("(?m)" + _PAGES_DECLARED_TEXT).finditer(header_text)  # a header line of its own
                     if "# Numbers are pages" in header_text else ()):
        paged = paged or declared.group(1) is None or source in declared.group(1).split()
    head = (header if "#" not in header_text or _compiled("(?m)^#").search(header_text) is None
            else [line for line in header if not line.startswith("#")])
    sections: dict[str, list[str]] = {}
    for i, (at, name) in enumerate(headings):
        sections.setdefault(name, []).extend(all_lines[at + 1:headings[i + 1][0] if i + 1 < len(headings) else None])
    chosen = sections.get(source)
    if chosen is None:
        chosen = [*head, *(line for kept in sections.values() for line in kept)]
    chosen_text = joined if chosen is all_lines or (not headings and head is header) else "\n".join(chosen)
    # a numbered line holds a tab: a text with none has nothing to take out nor any page
    text = _compiled("(?m)" + _NUMBERED_TEXT).sub("", chosen_text) if "\t" in chosen_text else chosen_text
    numbered, flat = _flat_lines(chosen, chosen_text)
    return text, {n: " ".join(t) for n, t in numbered.items()}, paged, flat


def excerpt_section(data: bytes, source: str) -> tuple[str, tuple[tuple[int, str], ...], bool] | None:
    """What a quote of ``source`` is checked against in the stored excerpt ``data`` (its bytes): the text of its
    section (the whole file's when none is headed ``source``), its pages and whether its numbers are pages, as
    :class:`StoredText` reads them (:func:`_excerpt_lines`); ``None`` when the bytes are more than
    :data:`EXCERPT_BYTES` or not UTF-8. Two sides of a review whose sections of ``source`` read the same are the same
    stored text for it, whatever else the file's other sections or header say (an edit in one section of a file
    several records name listed every record as changed, tests/test_left131.py). Raises nothing."""
    if len(data) > EXCERPT_BYTES:
        return None
    read = _excerpt_read(data)
    if read.text is None:
        return None
    text, pages, _, _, paged, _ = read.lines(source)
    return text, tuple(sorted(pages.items())), paged


def excerpt_raw_section(data: bytes, source: str) -> tuple[str, str | None, NumberedLines] | None:
    """The lines of the stored excerpt ``data`` (its bytes) that hold ``source``'s text, as written: its section's
    (the heading's next line to the next heading) or, where no section is headed ``source``, the whole file's; each
    with its line number in the file (:class:`NumberedLines`: numbered when asked). With the bytes' sha256 and the
    section's key (``source``, or ``None`` for the whole file): two sources reading one file's same lines share the
    key (a review compares them once). ``None`` when the bytes are more than :data:`EXCERPT_BYTES` or not UTF-8. Read
    through the cache of excerpts by sha256 (:func:`_excerpt_read`). Raises nothing."""
    if len(data) > EXCERPT_BYTES:
        return None
    digest = excerpt_sha256(data)
    read = _excerpt_read(data, digest)
    if read.text is None:
        return None
    key, lines = read.raw(source)
    return digest, key, lines


#: A section heading naming a document by its address (``== ID PATH URL ==``): a source's section, as the shipped
#: excerpts open one (a heading without an address, the xiongjiedai notebooks' ``== LLaMA 2/… ==``, only cuts a file).
_SOURCE_SECTION_TEXT = r"^== (\S+) .*\bhttps?://\S+ ==$"


def foreign_sections(data: str, source: str) -> str | None:
    """What is wrong with the stored excerpt ``data`` (its text) as ``source``'s: ``None`` when it has a section
    headed ``source`` or no source's section (``== ID PATH URL ==``, :data:`_SOURCE_SECTION_TEXT`) at all; else that its
    sections are other sources' (their ids, up to 5), none headed ``source``: its quotes would be checked against
    another document's lines (a new user re-pointed the H200 product page's record to a copy whose one section was
    headed for the Hopper whitepaper: ``check`` held and ``audit --source`` said "8 of 8 facts' quotes checked";
    tests/test_walk128.py). Linear in ``data``. Raises nothing."""
    return _foreign(tuple(m.group(1) for m in map(_compiled(_SOURCE_SECTION_TEXT).match, data.splitlines()) if m),
                    frozenset(m.group(1) for m in map(_compiled(_SECTION_TEXT).match, data.splitlines()) if m), source)


def _foreign(heads: tuple[str, ...], sections: frozenset[str], source: str) -> str | None:
    """:func:`foreign_sections` of a text whose source sections are headed ``heads`` (in order) and whose sections
    all ``sections``."""
    if not heads or source in heads or source in sections:
        return None
    named = list(dict.fromkeys(heads))
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5:,} more" if len(named) > 5 else "")
    return (f"its sections are other sources' ({shown}), none headed {source}: no quote of {source} can be checked "
            f"against it; add its section ('== {source} PATH URL ==') or name its own excerpt")


@attrs.frozen
class NumberedLines:
    """Lines of a stored excerpt as written (``texts``) with their line numbers in the file (1 the first), kept as
    runs: ``starts[k]`` the index in ``texts`` of a run of lines that follow each other in the file, ``firsts[k]`` its
    first line's number. A line is numbered when asked (:meth:`number`): a review compares the texts and shows ten
    lines at most, where a ``(number, line)`` pair a line cost 0.12 s of CPU a side for 450,000 lines."""

    texts: tuple[str, ...] = ()
    starts: tuple[int, ...] = ()
    firsts: tuple[int, ...] = ()

    def number(self, index: int) -> int:
        """The line number in the file of ``texts[index]``. Raises :class:`IndexError` for an index past ``texts``."""
        from bisect import bisect_right

        if not 0 <= index < len(self.texts):
            raise IndexError(index)
        k = bisect_right(self.starts, index) - 1
        return self.firsts[k] + index - self.starts[k]


@attrs.frozen
class _Read:
    """A stored excerpt's bytes as read once a process (:func:`_excerpt_read`): ``text`` (``None`` when not UTF-8:
    ``bad`` the byte offset), its source sections' ids ``heads`` and all its sections' ``sections``
    (:func:`foreign_sections`), and the texts of it made for a source (:func:`_excerpt_lines`, by the section read)."""

    text: str | None
    bad: int | None
    heads: tuple[str, ...]
    sections: frozenset[str]
    #: Whether a line of the text opens ``# Numbers are pages:`` (a header may name the sections whose numbers are
    #: pages: each source's text is then its own), looked for once a text (once a record was 1 ms a record and side
    #: for 900,000 bytes).
    names_pages: bool = False
    made: dict[str | None, tuple[str, dict[int, str], str, dict[int | str | None, tuple[str, str]], bool,
                                 dict[str, str]]] = attrs.field(factory=dict, eq=False, repr=False)
    #: Each section's raw lines with their line numbers in the file (:meth:`raw`), made once, when first asked.
    numbered: dict[str, NumberedLines] = attrs.field(factory=dict, eq=False, repr=False)

    def foreign(self, source: str) -> str | None:
        """:func:`foreign_sections` of the text for ``source``."""
        return _foreign(self.heads, self.sections, source)

    def stored(self, source: Source, excerpt: str | None) -> StoredText:
        """The :class:`StoredText` of ``source`` (its excerpt named ``excerpt``) from this text (UTF-8, no foreign
        sections' alone): made once a section, the searched forms shared (:attr:`StoredText.searched`)."""
        # the whole file's text is one for every source it heads no section of, but where its header declares the
        # numbers pages of named sources alone (``# Numbers are pages: ID …``): then whether they are depends on it
        text, pages, flat, searched, paged, parts = self.lines(source.id)
        return StoredText(source.id, excerpt, None, text, flat=flat, pages=pages, searched=searched, paged=paged,
                          parts=parts, read=self)

    def raw(self, source: str) -> tuple[str | None, NumberedLines]:
        """The lines of this text a review compares for ``source`` (:func:`excerpt_raw_section`): its own section's
        (``== source … ==`` up to the next heading), the key ``source``, else the whole file's, the key ``None``;
        each with its line number in the file (1 the first). Every section split once a text, by slicing the list
        of its lines at its headings (:func:`_headings`). Raises nothing."""
        if not self.numbered and self.text is not None:
            lines = self.text.splitlines()
            # a text headed no section is one whole: nothing searched (450,000 lines)
            headings = _headings("\n".join(lines)) if self.sections else []
            split: dict[str, tuple[list[str], list[int], list[int]]] = {}
            for i, (at, name) in enumerate(headings):
                texts, starts, firsts = split.setdefault(name, ([], [], []))
                run = lines[at + 1:headings[i + 1][0] if i + 1 < len(headings) else None]
                if run:
                    starts.append(len(texts))
                    firsts.append(at + 2)
                    texts.extend(run)
            self.numbered.update({k: NumberedLines(tuple(t), tuple(s), tuple(f)) for k, (t, s, f) in split.items()})
            self.numbered["\0"] = NumberedLines(tuple(lines), (0,), (1,))  # the whole file's
        if source in self.numbered and source != "\0":
            return source, self.numbered[source]
        return None, self.numbered.get("\0", NumberedLines())

    def lines(self, source: str) -> tuple[str, dict[int, str], str, dict[int | str | None, tuple[str, str]], bool,
                                          dict[str, str]]:
        """:func:`_excerpt_lines` of this text for ``source`` with its flat text and searched forms, made once a
        section (a review comparing 40 records naming one excerpt made each of these 80 times)."""
        key = source if source in self.sections or self.names_pages else None
        if key not in self.made:
            text, pages, paged, flat = _excerpt_lines(self.text or "", source)
            self.made[key] = (text, pages, flat, {}, paged, _excerpt_parts(self.text or "", source))
        return self.made[key]


#: The stored excerpts read by this process, by their bytes' sha256: a file many records name (40 naming one of
#: 900,000 bytes) was decoded and its sections read once a record, 37 ms each (``check`` 1.60 -> 3.09 s of CPU,
#: tests/test_attack133.py). The last :data:`_READ_KEPT` kept, of :data:`_READ_BYTES` bytes in all at most (but the
#: last, whatever its size): the shipped registry's 13 excerpts (176 KB) were 8 kept, and ``check``, reading each for
#: its pin and then for its facts' quotes, decoded and split each again.
_READ: dict[str, _Read] = {}
_READ_SIZES: dict[str, int] = {}
_READ_KEPT = 64
_READ_BYTES = 8 * 1024 * 1024


def _excerpt_read(data: bytes, digest: str | None = None) -> _Read:
    """``data`` (a stored excerpt's bytes, ``digest`` their sha256 where known) read as :class:`_Read`, once a
    process for the same bytes. Raises nothing."""
    digest = excerpt_sha256(data) if digest is None else digest
    read = _READ.get(digest)
    if read is None:
        try:
            text: str | None = data.decode("utf-8")
            bad = None
        except UnicodeDecodeError as e:
            text, bad = None, e.start
        lines = text.splitlines() if text is not None else []
        # the sections found by one search in C of the lines joined by one kind of break, none where no line can
        # open one (a match a line, 450,000 lines, was 0.03 s of CPU); the source sections' headings by a match a
        # line still (tests/test_attack133.py counts them: the lines of a file many records name read once)
        joined = "\n".join(lines) if text is not None and "== " in text else ""
        read = _Read(text, bad, tuple(m.group(1) for m in map(_compiled(_SOURCE_SECTION_TEXT).match, lines) if m),
                     frozenset(m.group(1) for m in _compiled("(?m)" + _SECTION_TEXT).finditer(joined)),
                     text is not None and "# Numbers are pages:" in text)
        while _READ and (len(_READ) >= _READ_KEPT or sum(_READ_SIZES.values()) + len(data) > _READ_BYTES):
            oldest = next(iter(_READ))
            del _READ[oldest]
            _READ_SIZES.pop(oldest, None)
        _READ[digest] = read
        _READ_SIZES[digest] = len(data)
    return read


def registry_document(root: Root, source: Source) -> str | None:
    """The path of ``source``'s document when it is a record of kind ``registry`` naming no stored excerpt whose
    ``path`` is a regular file of ``root`` (:func:`passprice.registry.document_problem` finding nothing wrong): the
    text its quotes could be checked against, were the record to name it as its ``excerpt``; else ``None``. Raises
    nothing."""
    from passprice.registry import document_problem

    if source.kind != "registry" or source.excerpt is not None or source.path is None:
        return None
    return source.path if document_problem(root, source.path) is None else None


def stored_text(root: Root, source: Source) -> StoredText:
    """The stored excerpt of ``source`` (:class:`StoredText`): ``excerpt`` ``None`` when the record names none;
    ``problem`` :func:`excerpt_problem`'s words when the file is not a regular file of ``root`` (a FIFO, a folder, a
    link, not there: never opened); ``unread`` the reason a regular file did not read (larger than
    :data:`EXCERPT_BYTES`, not UTF-8).
    Raises nothing."""
    if source.excerpt is None:
        return StoredText(source.id, None, document=registry_document(root, source))
    problem, unread, data, digest = excerpt_state(root, source)
    if problem is not None:
        return StoredText(source.id, source.excerpt, problem)
    if unread is not None or data is None:
        return StoredText(source.id, source.excerpt, unread=unread)
    return _stored_of(source, _excerpt_read(data, digest), source.excerpt)


def _stored_of(source: Source, read: _Read, where: str) -> StoredText:
    """The :class:`StoredText` of ``source`` from ``read`` (its excerpt's bytes as found at ``where``): ``unread``
    when they are not UTF-8 or hold other sources' sections alone."""
    if read.bad is not None:
        return StoredText(source.id, source.excerpt, unread=f"{where}: not UTF-8 text (byte {read.bad:,})")
    foreign = read.foreign(source.id)
    if foreign is not None:
        return StoredText(source.id, source.excerpt, unread=f"{where}: {foreign}")
    return read.stored(source, source.excerpt)


def stored_text_of(source: Source, data: bytes, where: str) -> StoredText:
    """The :class:`StoredText` of ``source`` read from ``data``, its excerpt's bytes as ``where`` holds them (a
    commit's, ``COMMIT:PATH``): ``unread`` when they are more than :data:`EXCERPT_BYTES` or not UTF-8. What
    :func:`stored_text` gives of a file, for an excerpt as git has it at a lock's commit
    (:func:`passprice.sourcechange.excerpts_at_lock`). Raises nothing."""
    if len(data) > EXCERPT_BYTES:
        return StoredText(source.id, source.excerpt, unread=f"{where}: more than {EXCERPT_BYTES:,} bytes")
    return _stored_of(source, _excerpt_read(data), where)


def stored_texts(root: Root, sources: Mapping[str, Source], ids: Iterable[str]) -> dict[str, StoredText]:
    """:func:`stored_text` of each of ``ids`` that ``sources`` holds (each excerpt file read once), by id. Raises
    nothing."""
    read: dict[str, StoredText] = {}
    for sid in dict.fromkeys(ids):
        record = sources.get(sid)
        if record is not None:
            read[sid] = stored_text(root, record)
    return read


# --- the quote check (audit's, and audit --source's) --------------------------------------------------------------


@attrs.frozen
class QuoteCheck:
    """Whether the quotes of a fact the audited price rests on were checked against a stored text: each span its
    locator and its derivation's inputs' locators quote (:func:`passprice.sources.quoted_spans`) looked for in the
    stored excerpt of the document it cites (:class:`passprice.sources.StoredText`, as the registry's citation tests
    look: tests/test_cite66.py and those after it). ``state``: ``checked`` (every span found), ``NOT FOUND`` (a span
    the stored text lacks: ``missing``) or ``not checked`` (``why``: a cited document with no stored text, or with one
    that is not a regular file, ``unstored``; or a locator that quotes nothing). ``spans`` counts the spans quoted,
    ``found`` those found. A fact one of whose locators quotes nothing (the MI300X's ``on_chip.capacity``, its figure
    ``vgpr`` read from a ROCm table no text of which is stored) is ``not checked``, whatever the others found (a
    figure of the fact's own document, ``4 MB L2 per XCD``, is located by the fact's own quotes)."""

    path: str
    state: str
    spans: int
    found: int
    missing: tuple[str, ...]
    unstored: tuple[str, ...]
    why: str
    #: The spans of a stored text not looked up: past what the command's :class:`Lookups` allowed (its state then
    #: ``not checked``, unless a span looked up was NOT FOUND). A review fails on any (tests/test_budget140.py).
    past: int = 0
    #: Where its state is ``MISMATCH``: what each locator's quotes state that is not its figure
    #: (:func:`figures_quoted`), one sentence a locator (``its quote of SOURCE 'SPAN' states 8 TB/s, not its value
    #: 8.2 TB/s``).
    mismatch: tuple[str, ...] = ()
    #: Where its state is ``checked`` and no span states its figure (:func:`figure_unquoted`): the figures none
    #: states (``0.453125, nor its derivation's hot 58 or experts 128``), said as ``places found, the figure not
    #: quoted``; empty otherwise.
    unquoted: str = ""
    #: Each span found, as ``EXCERPT:LINE`` (:meth:`StoredText.line_of`), where the check was asked for them
    #: (``audit``); a span whose line is not told is left out.
    at: tuple[str, ...] = ()

    @property
    def shown_state(self) -> str:
        """:attr:`state` as ``audit`` says it: ``places found, the figure not quoted`` for a ``checked`` fact no span
        of which states its figure (:attr:`unquoted`), else the state."""
        return "places found, the figure not quoted" if self.unquoted else self.state

    def line(self) -> str:
        """``memory.bandwidth: checked (2 of 2 quoted spans found in the stored text)``, or the state and why."""
        why = f"{self.why}; none states {self.unquoted}" if self.unquoted else self.why
        return f"{self.path}: {self.shown_state} ({why})"

    def places(self) -> str | None:
        """``at sources/excerpts/cite70-excerpt.txt:55, sources/excerpts/cite70-excerpt.txt:62``: the line of
        each span found (:attr:`at`), for an auditor to open; ``None`` when none is told."""
        return f"at {', '.join(self.at)}" if self.at else None

    def to_json(self) -> dict[str, Any]:
        """``{"state", "spans", "found", "missing", "unstored", "past", "why"}`` (``audit --json``'s facts'
        ``quote_check``), and ``"figure_quoted": false`` where every span is found and none states the figure
        (:attr:`unquoted`), ``quote_lines`` where the lines of the spans found were asked for (:attr:`at`)."""
        return {"state": self.state, "spans": self.spans, "found": self.found, "missing": list(self.missing),
                "unstored": list(self.unstored), "past": self.past, "why": self.why,
                **({"figure_quoted": False} if self.unquoted else {}),
                **({"quote_lines": list(self.at)} if self.at else {})}


#: A stored text that reads, holding nothing: what :func:`figures_quoted` is given for a source to read a fact's
#: quotes as if its excerpt were stored (the review asks it before reading any excerpt).
USABLE = StoredText("", None, text="", flat="")

#: The state of a :class:`QuoteCheck` whose quotes are found but state another figure than the fact's
#: (:func:`figures_quoted`): ``check`` fails it, ``audit`` says it, the review fails it.
MISMATCH = "MISMATCH"


def figures_quoted(fact: Fact, texts: Mapping[str, StoredText], only: str | None = None,
                   path: str = "") -> tuple[str, ...]:
    """What the quoted spans of ``fact``'s locators citing a source with a usable stored text in ``texts`` (that
    source alone, with ``only``) state that its figure is not (:func:`passprice.addedfacts.quote_holds_another`):
    the fact's own locator against its value, for a fact of any provenance without a derivation (a derived fact's
    locator quotes what its formula reads) unless :func:`quotes_basis` (an estimate or assumption whose note says its
    quotes are its basis), and each figure input's
    locator of a derivation against that input's figure. One sentence a locator: ``its quote of SOURCE 'SPAN' states
    8 TB/s, not its value 8.2 TB/s``, ``its dot figure's quote of SOURCE 'SPAN' states …, not its 3.87 TB/s``. Empty
    where every quote states its figure or none of its dimension. A quote stating the figure among others of its
    dimension where the record says which is the card's (the column its locator names, ``used / total``, a host
    link's total: :func:`passprice.quotecolumn.column_mismatch`, ``path`` the fact's key) states the one it selects:
    ``its fp32 figure's quote of SOURCE 'FP32 67 TFLOPS 60 TFLOPS' states 67 TFLOPS in its H200 SXM column (of 67
    TFLOPS and 60 TFLOPS), not its 60 TFLOPS`` (a figure moved to the row's NVL figure passed, tests/test_fix56.py).
    Raises nothing."""
    from passprice.addedfacts import _shown, quote_holds_another
    from passprice.derivations import Derivation

    if fact.unit == RUN_UNIT:  # a measured run's tokens/s (:func:`passprice.lineage._run_facts`)
        stored = texts.get(fact.source) if fact.source is not None else None
        if (stored is None or stored.flat is None or not fact.locator
                or (only is not None and fact.source != only)):
            return ()
        spans = quoted_spans(fact.locator)
        others = run_quote_states(fact.amount, spans)
        if others is None:
            return ()
        states = f"states {', '.join(others[:5])}" if others else "states no figure"
        return (f"its quote{'s' if len(spans) > 1 else ''} of {fact.source} "
                f"{', '.join(repr(span[:200]) for span in spans[:3])} {states}, not its "
                f"{fact.amount:,g} tokens/s",)
    checks: list[tuple[str, str | None, str, float, str]] = []
    if fact.derivation is None and fact.locator and not quotes_basis(fact):
        checks.append(("its quote", fact.source, fact.locator, fact.amount, fact.unit))
    if isinstance(fact.derivation, Derivation):
        checks += [(f"its {i.name} figure's quote", i.source or fact.source, i.locator, i.amount, i.unit)
                   for i in fact.derivation.inputs if i.kind == "figure" and i.locator]
    out = []
    for what, sid, locator, amount, unit in checks:
        stored = texts.get(sid) if sid is not None else None
        if stored is None or stored.flat is None or (only is not None and sid != only):
            continue
        spans = quoted_spans(locator)
        read = _in_named_unit(locator)
        others = quote_holds_another(amount, unit, read) if unit != "1" else _means_not(amount, spans)
        mine = "its value " if what == "its quote" else "its "
        if not others and unit != "1":
            from passprice.quotecolumn import column_mismatch

            name = what.removeprefix("its ").removesuffix(" figure's quote") if what != "its quote" else ""
            out += [f"{what} of {sid} {moved}"
                    for moved in column_mismatch(path, name, amount, unit, locator, mine)]
            continue
        if not others:
            continue
        holding = [span for span, as_read in zip(spans, read, strict=False)
                   if quote_holds_another(amount, unit, [as_read])] or spans
        out.append(f"{what}{'s' if len(holding) > 1 else ''} of {sid} "
                   f"{', '.join(repr(span[:80]) for span in holding[:3])} state{'' if len(holding) > 1 else 's'} "
                   f"{', '.join(others[:3])}, not {mine}{_shown(amount, unit)}")
    return tuple(out)


#: How the note of an ``estimated`` or ``assumed`` fact opens when its locator quotes the figures the estimate rests
#: on, not its own (:func:`quotes_basis`): ``Basis: …`` or ``Estimate: …`` (the shipped stack's ``memory.reserved``,
#: 512 MiB from quoted buffers of 70.50 to 148.19 MiB: ``Estimate: llama.cpp's own buffers printed …``).
BASIS_OPENINGS = ("Basis:", "Estimate:")


def quotes_basis(fact: Fact) -> bool:
    """Whether ``fact`` says its locator's quotes state the basis of an estimate, not its figure: an ``estimated``
    or ``assumed`` fact whose ``note`` opens with one of :data:`BASIS_OPENINGS`, or whose locator works its figure
    out of a figure it states (:func:`passprice.addedfacts.from_basis`: ``'4.8 TB/s' less 5 %`` of 4.56 TB/s, the
    review's reading of a basis). A note that opens so and says nothing after (``Basis:`` alone, or followed by
    punctuation only) states no basis: an assumed 3.97 TB/s under ``'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'`` with
    the note ``Basis:`` passed ``check`` (tests/test_attack56.py). Such a fact is not held to its own quotes
    (:func:`figures_quoted`); any other fact
    without a derivation is, whatever its provenance. A new user's assumed ``memory.bandwidth`` 6.5 TB/s under
    ``'Peak Memory Bandwidth 6 TB/s'``, and an estimate of 7 under a quote of 6.4 TB/s, passed ``check`` (0 problems)
    and read ``checked`` in ``audit``: the rule held published and measured figures alone (tests/test_fix55w.py).
    Raises nothing."""
    from passprice.addedfacts import from_basis
    from passprice.facts import Provenance

    if fact.provenance not in (Provenance.ESTIMATED, Provenance.ASSUMED):
        return False
    note = (fact.note or "").lstrip()
    opening = next((o for o in BASIS_OPENINGS if note.startswith(o)), None)
    if opening is not None and any(c.isalnum() for c in note[len(opening):]):
        return True
    return bool(fact.locator) and fact.unit != "1" and from_basis(fact.amount, fact.unit, fact.locator or "")


#: A mean a benchmark prints with its spread (llama-bench's ``145.55 ± 0.80``): the mean, :data:`NUMBER`'s digits.
_MEAN_SPREAD = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?) ?± ?\d[\d,]*(?:\.\d+)?")


def _means_not(amount: float, spans: Sequence[str]) -> list[str]:
    """The means ``spans`` quote with their spread (:data:`_MEAN_SPREAD`, ``145.55 ± 0.80``) when none of them is
    ``amount``, each as written: a count or ratio (unit ``1``, a measured run's tokens/s) held to the mean its quoted
    row prints. Attack54: a run's ``tokens_per_s`` moved 145.55 → 150.55 under its unchanged llama-bench row
    ``'…|    145.55 ± 0.80 |'``, its stack re-fitted (``calibrate --stack``), passed ``check`` (0 problems): a run's
    figure has unit ``1``, which the MISMATCH rule read no quoted figure by. Raises nothing."""
    from passprice.textchange import figure_read

    found = [m for span in spans for m in _MEAN_SPREAD.finditer(span[:10_000])]
    if any(figure_read(m.group(1)) == amount for m in found):
        return []
    return list(dict.fromkeys(m.group(0) for m in found))


#: The unit a locator names right after a quoted table cell or row (``row '| Dot   | 4.48   |' in TB/s``).
_UNIT_AFTER_QUOTE = re.compile(r"' in ([A-Za-z]+(?:/[A-Za-z]+)?)\b(?!/)")

#: What makes a quoted span a place, not a figure: ``column`` or ``row`` right after it (``'GeForce RTX 4080 16 GB'
#: column``: the name of a table's column, whose 16 GB is no figure of the fact read under it).
#: (compiled when first used, :func:`_compiled`).
_PLACE_AFTER_QUOTE = r"(?i)'[ \t]+(?:column|row)s?\b"


def _in_named_unit(locator: str) -> list[str]:
    """The spans ``locator`` quotes (:func:`quoted_spans`, in order), each followed in the locator by ``in UNIT``
    (a unit passprice reads) with its numbers written with no unit read in that unit (``'| Dot   | 4.48   |' in
    TB/s`` → ``| Dot   | 4.48 TB/s   |``): a table's cells state their figures in the unit of its header, which the
    locator names outside the quote. Attack54: a derivation input moved 4.48 → 4.58 TB/s under the unchanged row
    ``'| Dot   | 4.48              |' in TB/s`` passed ``check`` (0 problems) and the re-locked review, its quote
    stating no figure with a unit. A span followed by ``column`` or ``row`` (:data:`_PLACE_AFTER_QUOTE`) names a
    place of the document, its numbers no figure: it reads ``""`` (``'GeForce RTX 4080 16 GB' column`` read as
    16 GB, a MISMATCH of the RTX 4080's 64 MiB ``l2`` read under it, tests/test_fix55.py). Raises nothing."""
    from passprice.addedfacts import _reads
    from passprice.textchange import NUMBER

    text = locator[:10_000]
    out = []
    for opening, span in _quotes(text):
        if span.isspace():
            continue
        if _compiled(_PLACE_AFTER_QUOTE).match(text, opening + 1 + len(span)):
            out.append("")  # a column's or row's name: where the figure is, not a figure
            continue
        named = _UNIT_AFTER_QUOTE.match(text, opening + 1 + len(span))
        if named is not None and _reads(named.group(1)):
            cell_unit = named.group(1)

            def in_unit(m: re.Match[str], u: str = cell_unit) -> str:
                return m.group(0) if m.group(2) else f"{m.group(1)} {u}"

            span = re.sub(rf"({NUMBER})(\s?[A-Za-z%])?", in_unit, span)
        out.append(span)
    return out


#: The unit of a measured run's figure as :func:`passprice.lineage._run_facts` makes it a fact, tokens per second:
#: :func:`figures_quoted` holds it to :func:`run_quote_states`, not to a card fact's rule (a run's quote is a table
#: row without a unit, so a run's figure was never held to its quote: tests/test_fix54w.py).
RUN_UNIT = "tokens/s"

#: What follows a figure in tokens per second (``131.44 tokens per second``, ``135.07 tokens/s``, ``98 t/s``,
#: ``1,234 tok/s``), the unit a run records: :func:`run_quote_states` reads only these where its quote has any.
#: (The review reads runs' locators by the same function, :func:`run_quote_figures`.)
PER_SECOND = r"[ \t]*(?:tokens?|tok|t)[ \t]*(?:/[ \t]*s(?:ec)?|per[ \t]+second)\b"


def run_quote_figures(spans: Sequence[str]) -> tuple[list[tuple[str, float]], str]:
    """The figures the quoted ``spans`` of a measured run's locator state, each ``(as written, value)`` in order:
    those in tokens per second (:data:`PER_SECOND`) where they quote any, else the means printed with their spread
    (llama-bench's ``145.55 ± 0.80``, :data:`_MEAN_SPREAD`: the row's size in GiB and ``ngl`` 99 hold no run), else
    every number they quote (:data:`passprice.textchange.NUMBER`: ``tg128`` is a name; a model's size in its name,
    ``llama 8B``, is none); with which they are: ``rates``, ``means`` or ``numbers``. The one reading of a run's quote:
    ``check``'s (:func:`run_quote_states`) and the review's (``its locator quotes …``,
    :func:`passprice.review.runs._run_quote_reading`), which read every number of the locator, so that a run of 99
    tokens/s under ``'… |  99 | tg512 | 145.55 ± 0.80 |'`` (``ngl`` 99) was asked nothing by the review and failed
    ``check`` (tests/test_fix55.py). The first 10,000 characters are read. Raises nothing."""
    from passprice.textchange import NUMBER, figure_read

    text = " | ".join(spans)[:10_000]
    rated = [(m.group(1), figure_read(m.group(1)))
             for m in re.finditer(f"({NUMBER}){PER_SECOND}", text, re.IGNORECASE)]
    means = [(m.group(1), figure_read(m.group(1))) for m in _MEAN_SPREAD.finditer(text)]
    figures = rated or means or [(m.group(0), figure_read(m.group(0)))
                                 for m in re.finditer(NUMBER + r"(?![BMK](?![\w/]))", text)]
    kind = "rates" if rated else "means" if means else "numbers"
    return [(shown, value) for shown, value in figures if value is not None], kind


def run_figure_held(amount: float, figures: Sequence[tuple[str, float]]) -> bool:
    """Whether one of ``figures`` (:func:`run_quote_figures`) is a run's ``amount`` tokens/s, rounded as the run's
    figure is written (``98.42`` holds a run of 98.4, ``131.44`` one of 131; not one of 984.2). Raises nothing."""
    written = repr(float(amount))
    places = 0 if "e" in written or written.endswith(".0") else len(written.split(".")[1])
    half = 0.5 * 10.0 ** -places * (1 + 1e-9)
    return any(abs(value - amount) <= half for _, value in figures)


def run_quote_states(amount: float, spans: Sequence[str]) -> list[str] | None:
    """What the quoted ``spans`` of a measured run's locator state when none of their figures
    (:func:`run_quote_figures`) is its ``amount`` tokens/s (:func:`run_figure_held`): each figure as written, at most
    once (a mean with its spread, ``145.55 ± 0.80``); ``[]`` when they quote no number, ``None`` when one of those
    figures is the run's, or there are no spans. A run entered as 984.2 under its row ``'… | tg128 | 98.42 ± 0.31'``
    passed ``check`` (tests/test_fix54w.py). Raises nothing."""
    if not spans:
        return None
    figures, kind = run_quote_figures(spans)
    if run_figure_held(amount, figures):
        return None
    if kind == "means":
        text = " | ".join(spans)[:10_000]
        return list(dict.fromkeys(m.group(0) for m in _MEAN_SPREAD.finditer(text)))
    return list(dict.fromkeys(shown for shown, _ in figures))


def _quoted_locators(fact: Fact) -> list[tuple[str, str | None, str]]:
    """``(what, source id, locator)`` of ``fact``'s locator (``what``: ``its locator``) and each of its derivation's
    inputs' (``the NAME figure's locator``; an input without a source of its own cites its fact's, as the citation
    tests read them)."""
    from passprice.derivations import Derivation

    out: list[tuple[str, str | None, str]] = [("its locator", fact.source, fact.locator)] if fact.locator else []
    if isinstance(fact.derivation, Derivation):
        out += [(f"the {i.name} figure's locator", i.source or fact.source, i.locator)
                for i in fact.derivation.inputs if i.locator]
    return out


#: The most characters of stored text one command (an audit, or a whole review) searches for quoted spans, each
#: look-up counted at the two forms of the text it may search, each at least :data:`LINEAR_FROM`
#: (:meth:`StoredText.searched_size`): past it a span is not looked up, and said so. Each search is linear in them,
#: whatever the span (:func:`_within`): 0.8-3.6 ns a character on the texts that search slowest (a 900,000-byte
#: excerpt of ``1`` lines, or of ``a``, benchmarks/bound147.py), so at most about 0.5 s of CPU for the 128 MiB, under
#: the issue's 2 s with the rest of a review. Only the second form is searched now (:meth:`StoredText.holds`: the
#: first's answer is in the second's), no longer than the first: the count is kept as it was (which spans are looked
#: up is unchanged), and the characters searched are at most half of it, about 0.25 s of CPU at most. A look-up of
#: a shipped excerpt (at most 19,590 bytes, each form under :data:`LINEAR_FROM`) counts 60,000 characters: a pull
#: request quoting 2,000 spans of them (120 M) is looked up whole, where 64 MiB and 512 spans refused 63 copies of a
#: card, 1,575 look-ups (tests/test_hostile_55.py, tests/test_bound147.py).
SEARCHED_MOST = 128 * 1024 * 1024

#: The most quoted spans one command looks up: what :data:`SEARCHED_MOST` allows of look-ups counted the least
#: (``2 × LINEAR_FROM`` characters each), 2,236; a look-up of a larger text reaches the characters' bound first.
#: Past it a span is not looked up, and said so. A look-up of a text under :data:`LINEAR_FROM` took 64 us of CPU at
#: most, padded: 0.14 s the 2,236 (benchmarks/bound147.py).
QUOTES_MOST = SEARCHED_MOST // (2 * LINEAR_FROM)


@attrs.define
class Lookups:
    """What the quote checks of one command may still look up, shared by every :func:`quote_check` it makes (an
    audit's facts, a review's changed facts, the sources whose excerpts it compares): ``spans`` (from
    :data:`QUOTES_MOST`) and ``chars`` of stored text searched (from :data:`SEARCHED_MOST`). A review made one a
    fact, 512 spans each (tests/test_attack133.py), then one for its changed facts and one for its rewritten
    excerpts' checks; now one for the whole review (tests/test_bound147.py)."""

    spans: int = QUOTES_MOST
    chars: int = SEARCHED_MOST


def _spans(fact: Fact, only: str | None = None, texts: Mapping[str, StoredText] | None = None,
           ) -> Iterator[tuple[str, str | None, int | None, str | None, tuple[tuple[str, ...], ...]]]:
    """``(what, source id, page, span, parts)`` of each span :func:`quote_check` looks up for ``fact`` (of the
    locators citing ``only`` alone, when given), a span quoted twice of one source and page once; ``span`` ``None``
    for a locator quoting nothing (its own, a figure's of another document, or a derivation input's of its own);
    ``parts`` the parts of the source's stored text in ``texts`` that each locator quoting it names
    (:meth:`StoredText.parts_named`), one tuple a locator naming any: the span is to be under one of each (the B200's
    ``host.stream`` quotes ``'| Host to Device | 51 |'`` of a locator naming both Hopper result files and of its
    derivation input's naming the H100's: one span, under the H100's). Empty where none names a part."""
    order: dict[tuple[str | None, int | None, str], tuple[str, list[tuple[str, ...]]]] = {}
    for what, sid, locator in _quoted_locators(fact):
        if only is not None and sid != only:
            continue
        quoted = paged_spans(locator)
        if not quoted:
            yield what, sid, None, None, ()
        stored = texts.get(sid) if texts is not None and sid is not None else None
        parts = stored.parts_named(locator) if stored is not None and stored.parts else ()
        for page, span in quoted:
            # quoted again (by the fact and by its derivation's input): one span, counted once
            named = order.setdefault((sid, page, span), (what, []))[1]
            if parts and parts not in named:
                named.append(parts)
    for (sid, page, span), (what, named) in order.items():
        yield what, sid, page, span, _first_named(named)


def _first_named(named: list[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """The parts a span is to be under, one of each tuple, from ``named`` (each locator quoting it: the parts it
    names, in its order, :meth:`StoredText.parts_named`). A locator naming several files reads from the first it
    names (the others are named in prose: ``(as in ND_H100_v5_results.md)``, ``(not the ND_H100_v5_results.md
    file)``, which read ``checked`` of the H100's row quoted for the H200, tests/test_fix184.py), unless another
    locator of the span names one file alone: a derivation input's locator placing each of a several-file locator's
    rows (the B200's ``host.stream`` names both Hopper result files and quotes a row of each; its inputs name each
    row's file), when the several-file locator asks only that the span be under one of those it names, as
    before. Raises nothing."""
    if any(len(parts) == 1 for parts in named):
        return tuple(named)
    out: list[tuple[str, ...]] = []
    for parts in named:
        if parts[:1] not in out:
            out.append(parts[:1])
    return tuple(out)


def quote_cost(facts: Iterable[Fact], texts: Mapping[str, StoredText]) -> Lookups:
    """What :func:`quote_check` of each of ``facts`` against ``texts`` would look up in all, as a :class:`Lookups`:
    its spans of a usable stored text and the characters searched (:meth:`StoredText.searched_size`), counted
    before any is looked up, so that a review checks every changed fact or none (whether one is checked must not
    depend on which file sorts first: tests/test_budget140.py). Raises nothing."""
    need = Lookups(0, 0)
    for fact in facts:
        for _, sid, page, span, parts in _spans(fact, texts=texts):
            stored = texts.get(sid) if sid is not None and span is not None else None
            if stored is not None and stored.flat is not None:
                need.spans += 1
                need.chars += _cost(stored, page, parts)
    return need


def _unplaced(stored: StoredText, page: int | None, parts: tuple[tuple[str, ...], ...]) -> bool:
    """Whether a span of ``stored`` looked up with no ``page`` is quoted by locators naming none of its parts
    (``parts`` empty, :meth:`StoredText.parts_named`) where the text has more than one: found under some of them but
    not all, it is not ``checked``, as the locator does not say which file it reads (:func:`quote_check`). Raises
    nothing."""
    return page is None and not parts and len(stored.parts) > 1


def _cost(stored: StoredText, page: int | None, parts: tuple[tuple[str, ...], ...]) -> int:
    """The characters :func:`quote_check` may search looking up a span of ``stored`` (on ``page``, under
    ``parts``): :meth:`StoredText.searched_size`, and each part's too for a span :func:`_unplaced` (looked for
    under each part first). Raises nothing."""
    return stored.searched_size(page, parts) + (stored.searched_size(None, [list(stored.parts)])
                                                if _unplaced(stored, page, parts) else 0)


#: The most characters of a quoted span a NOT FOUND line shows (:func:`_whole`).
SHOWN_SPAN = 300

#: The most lines of a source's section of a stored excerpt that :meth:`StoredText.line_of` and
#: :meth:`StoredText.as_marked` walk (a line at a time, in Python): past it no line is given.
PLACED_LINES = 50_000

#: The most lines in a row :meth:`StoredText.line_of` reads a quote over.
PLACED_RUN = 4

#: Markdown's emphasis and code marks, which a page shows as no characters (:meth:`StoredText.as_marked`).
_MARKUP = re.compile(r"[*_`]+")

#: A numbered line's number and tab (``37<TAB>``), left out where a quote's line is looked for.
_NUMBERED_LINE = re.compile(r"^\d+\t")


def _whole(span: str) -> str:
    """``span`` as a NOT FOUND line shows it: whole, quoted (``repr``), up to :data:`SHOWN_SPAN` characters, then
    ``…``. It was cut at 60 characters, unmarked: ``'Peak Memory Bandwidth, revision 2 (faster HBM3E bins) 6.4
    TB/s'`` read ``… 6.4 TB'``, a quote that seemed to stop at the ``/`` (tests/test_fix55w.py). Raises nothing."""
    return repr(span) if len(span) <= SHOWN_SPAN else f"{span[:SHOWN_SPAN]!r}…"


def figure_unquoted(fact: Fact, spans: Sequence[str]) -> str:
    """The figures of ``fact`` that none of ``spans`` (its quotes, every one found) states, when none states any:
    its value, and each figure its derivation reads (``0.453125, nor its derivation's hot 58 or experts 128``);
    empty where a span states one: a number of it equal to the figure (a thousands separator or a number in words
    read, :func:`passprice.addedfacts._plain`), the figure with a unit in any notation
    (:func:`passprice.addedfacts.states`), or for a ratio a part of a whole or a percentage equal to it
    (:func:`passprice.addedfacts.parts_of`, :func:`passprice.addedfacts.percents_of`). A measured run's tokens/s and
    an estimate whose quotes are its basis (:func:`quotes_basis`) are not asked. Issue 13: the routing record's
    ``hot_experts`` quotes the table's title and the row's label alone, its ``58/128`` outside the quotes, and
    ``audit`` said ``checked (2 of 2 quoted spans found in the stored text)``. Raises nothing."""
    from passprice.addedfacts import _plain, _shown, parts_of, percents_of, states
    from passprice.derivations import Derivation

    if fact.unit == RUN_UNIT or not spans or (fact.derivation is None and quotes_basis(fact)):
        return ""
    figures = [("", fact.amount, fact.unit)]
    if isinstance(fact.derivation, Derivation):
        figures += [(i.name, i.amount, i.unit) for i in fact.derivation.inputs if i.kind == "figure"]
    joined = " | ".join(span[:10_000] for span in spans)
    plain = _plain(joined)
    numbers = {float(n.replace(",", "")) for text in (joined, plain) for n in _BARE_NUMBER.findall(text)}
    ratios = [*parts_of(plain), *percents_of(plain)]

    def stated(amount: float, unit: str) -> bool:
        near = [n for n in (*numbers, *(ratios if amount <= 1 else ())) if abs(n - amount) <= 1e-9 * max(1, amount)]
        return bool(near) or (unit != "1" and states(amount, unit, joined))

    if any(stated(amount, unit) for _, amount, unit in figures):
        return ""
    own = _shown(fact.amount, fact.unit)
    inputs = [f"{name} {_shown(amount, unit)}" for name, amount, unit in figures[1:]]
    return own + (f", nor its derivation's {' or '.join(inputs)}" if inputs else "")


#: A number as a quote writes it: digits, thousands separators, a decimal part, not inside a word (``Qwen3``).
_BARE_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\d,])")


def quote_check(path: str, fact: Fact, texts: Mapping[str, StoredText], left: Lookups | None = None,
                only: str | None = None, where: bool = False) -> QuoteCheck:
    """The :class:`QuoteCheck` of the fact at ``path``, its cited documents' stored texts ``texts`` (by source id:
    :func:`passprice.sources.stored_texts`), looking up what ``left`` allows (:class:`Lookups`, spent by the
    look-ups made; a fresh one when ``None``: the rest are not checked, and said so); with ``only`` (a source id),
    the spans of the locators citing that source alone (``audit --source``). A span
    after a page its locator names (``p. 19: '…'``, :func:`passprice.sources.paged_spans`) is looked for on that
    page of the stored text alone, as tests/test_cite72.py looks. A span quoted twice of one source and page (by
    the fact's locator and by its derivation input's) is one span, looked up and counted once (it read "2 of 2
    quoted spans" of one quote, tests/test_left131.py). A span whose locator names a part of the stored text (a file
    of the source its section heading names, :meth:`StoredText.parts_named`) is looked for under that part alone,
    and where another part holds it, its miss says under which (``found only under PATH``; the first 3 misses
    shown): ``'| Dot | 3.18 |'`` read ``checked`` of a locator naming the H200's result file, the H100's holding it
    (tests/test_fix154.py). A span no page or part of whose locators names, of a text of more than one part
    (:func:`_unplaced`), found under some of them but not all is a miss too (``its locator names none of the 3 files
    the stored excerpt holds; found only under PATH``); under every part (two copies of one page), or outside every
    part, found: a prose locator's quote of the H100's row read ``checked`` of the H200 (tests/test_fix179.py).
    ``where``: each span found given its line in its excerpt (:attr:`QuoteCheck.at`, ``audit``'s). A fact every
    span of which is found, none stating its figure (:func:`figure_unquoted`), keeps the state ``checked`` and says
    so (:attr:`QuoteCheck.unquoted`). A span NOT FOUND that the text holds with Markdown emphasis between its
    characters says how the file holds it (:meth:`StoredText.as_marked`). Raises nothing."""
    left = Lookups() if left is None else left
    spans = found = past = 0
    placed: list[tuple[StoredText, str]] = []  # each span found, with the text it was found in
    missing: list[str] = []
    missed: list[str] = []  # each missing span as the check shows it: on the page its locator names
    unstored: dict[str, str] = {}
    unquoted: list[str] = []  # a locator quoting nothing: its figure is not checked (the MI300X's vgpr)
    inputs_unquoted: list[str] = []  # a derivation input's locator of the fact's own document quoting nothing
    for what, sid, page, span, parts in _spans(fact, only, texts):
        if span is None:
            if what == "its locator" or sid != fact.source:
                unquoted.append(f"{what} ({sid})" if sid is not None and sid != fact.source else what)
            else:  # a figure of the fact's own document quoting nothing is located by the fact's own quotes, if any
                inputs_unquoted.append(what)
            continue
        spans += 1
        stored = texts.get(sid) if sid is not None else None
        cost = 0 if stored is None or stored.flat is None else stored.searched_size(page, parts)
        if stored is not None and stored.flat is not None and (left.spans <= 0 or left.chars < cost):
            past += 1
        elif stored is None or stored.flat is None:
            name = sid or "a free-text cite"
            why = stored.unusable() if stored is not None else None
            unstored.setdefault(name, f"{name} has no stored text" if stored is None
                                else stored.no_text() if why is None
                                else f"{name}'s stored excerpt is unusable: {why}")
        elif _unplaced(stored, page, parts) and stored.holds(span):
            # Found in the text, its locator naming none of the text's parts: under which is looked up too, each
            # part's search counted (:func:`_cost` counts it first for a review); past what is left, the span is
            # not checked rather than `checked` unplaced. Under some parts, not all, which file it reads is the
            # reader's guess (the H200's '| Dot | 3.18 |' read `checked` from the H100's file of a prose locator,
            # tests/test_fix179.py); under every part (two copies of one page, the Ampere tuning guide's), or under
            # none (lines before the first heading), the file does not matter. A span the text lacks is missed as
            # any is, at the whole text's cost alone (tests/test_left119.py's bound).
            placing = _cost(stored, page, parts) - cost
            left.spans -= 1
            left.chars -= cost
            if left.chars < placing:
                past += 1
            else:
                left.chars -= placing
                holders = [p for p in stored.parts if stored.holds(span, part=p)]
                if 0 < len(holders) < len(stored.parts):
                    missing.append(span)
                    missed.append(f"{_whole(span)} (its locator names none of the {len(stored.parts)} files the "
                                  f"stored excerpt holds; found only under {' or '.join(holders[:3])})")
                else:
                    found += 1
                    placed.append((stored, span))
        elif (stored.holds(span, page) if page is not None or not parts
              else all(any(stored.holds(span, part=p) for p in named) for named in parts)):
            left.spans -= 1
            left.chars -= cost
            found += 1
            placed.append((stored, span))
        else:
            left.spans -= 1
            left.chars -= cost
            missing.append(span)
            on_page = page is not None and stored.paged
            lacking = next((named for named in parts if not any(stored.holds(span, part=p) for p in named)), ())
            # under which part it is, for the misses shown alone, each a search of the rest of the text counted
            # against what the command may still search (a hostile excerpt's tiny named part beside 1 MB of others)
            rest = [p for p in stored.parts if p not in lacking]
            extra = stored.searched_size(None, [rest]) if lacking and not on_page and len(missed) < 3 else 0
            other = None
            if extra and left.chars >= extra:
                left.chars -= extra
                other = stored.part_holding(span, lacking)
            # said where the text has other parts (a file of one section, the L40S's README.md, is the text)
            under = f" (under {' or '.join(lacking)}" if lacking and not on_page and len(stored.parts) > 1 else ""
            marked = stored.as_marked(span) if len(missed) < 3 else None
            missed.append(_whole(span) + (f" (on p. {page})" if on_page else "")
                          + (f"{under}; found only under {other})" if other is not None else f"{under})" if under
                             else "")
                          + (f" (found with the excerpt's markup removed: quote it as the file holds it, {marked!r})"
                             if marked is not None else ""))
    if spans == 0:
        why = ("its locator quotes nothing" if any(only is None or sid == only for _, sid, _ in _quoted_locators(fact))
               else "it has no locator")
        return QuoteCheck(path, "not checked", 0, 0, (), (), why)
    counted = f"{found} of {spans} quoted span{'s' if spans != 1 else ''} found in the stored text"
    limit = (f"the review's bound ({QUOTES_MOST:,} spans, {SEARCHED_MOST // 2**20:,} MiB of stored text), none "
             "looked up" if left.spans <= 0 and left.chars <= 0  # a review past it looks up none (Lookups emptied)
             else f"the {QUOTES_MOST:,} an audit looks up" if left.spans <= 0
             else f"the {SEARCHED_MOST // 2**20:,} MiB of stored text an audit searches")
    beyond = f"{past:,} span{'s' if past != 1 else ''} past {limit}" if past else ""
    if missing:
        shown = "; ".join(missed[:3]) + (f"; {len(missing) - 3:,} more" if len(missing) > 3 else "")
        return QuoteCheck(path, "NOT FOUND", spans, found, tuple(missing), tuple(unstored),
                          f"{counted}; not in it: {escaped(shown)}" + (f"; {beyond}" if beyond else ""), past)
    # Found, its quotes state another figure than the fact's (a new user's 8.2 TB/s under 'Peak Memory Bandwidth 8
    # TB/s' read `checked`, and check passed it): the quote or the value is wrong (tests/test_fix53w.py).
    # (looked up: a fact whose spans were past the command's bound is `not checked`, said so, as before)
    mismatch = figures_quoted(fact, texts, only, path) if not past else ()
    if mismatch:
        return QuoteCheck(path, MISMATCH, spans, found, (), tuple(unstored),
                          f"{counted}; {escaped('; '.join(mismatch))}", past, mismatch)
    # With the fact's own locator quoting nothing, an input's locator of the same document quoting nothing is
    # located by no quote either: said so (it read "only its own locator quotes nothing", tests/test_quote145.py).
    too = (f"{len(inputs_unquoted)} of its derivation's inputs quote{'s' if len(inputs_unquoted) == 1 else ''} "
           f"nothing too ({', '.join(inputs_unquoted)})") if "its locator" in unquoted and inputs_unquoted else ""
    if unquoted == ["its locator"] and not (unstored or past):
        # Every span is its derivation's figures', each found: those are checked, and only the fact's own figure,
        # its locator quoting nothing, is not (a new user read "not checked (4 of 4 quoted spans found in the stored
        # text; its locator quotes nothing)" as a contradiction: tests/test_walk138.py).
        if too:
            return QuoteCheck(path, "not checked", spans, found, (), (),
                              f"its derivation's quoted figures checked: {counted}; its own locator quotes nothing, "
                              f"and {too}")
        return QuoteCheck(path, "not checked", spans, found, (), (),
                          f"its derivation's figures checked: {counted}; only its own locator quotes nothing")
    if unstored or unquoted or past:
        nothing = [f"{', '.join(unquoted)} quote{'s' if len(unquoted) == 1 else ''} nothing"] if unquoted else []
        if too:
            nothing.append(too)
        if past:
            nothing.append(beyond)
        return QuoteCheck(path, "not checked", spans, found, (), tuple(unstored),
                          f"{counted}; {'; '.join([*unstored.values(), *nothing])}", past)
    at = tuple(dict.fromkeys(f"{text.excerpt}:{n}" for text, span in placed
                             if text.excerpt is not None and (n := text.line_of(span)) is not None)) if where else ()
    figureless = figure_unquoted(fact, [span for _, span in placed]) if only is None else ""
    return QuoteCheck(path, "checked", spans, found, (), (), counted, unquoted=figureless, at=at)


def source_quote_checks(citing: Iterable[tuple[str, Fact]], texts: Mapping[str, StoredText],
                        source_id: str, left: Lookups | None = None) -> tuple[QuoteCheck, ...]:
    """:func:`quote_check` of each ``(name, fact)`` of ``citing`` (the facts citing source ``source_id``, as ``audit
    --source`` lists them), of the spans of its locators citing that source alone (its own, or a figure's of its
    derivation), what ``left`` allows looked up in all (:class:`Lookups`; a fresh one when ``None``). Raises
    nothing."""
    left = Lookups() if left is None else left
    return tuple(quote_check(name, fact, texts, left, only=source_id) for name, fact in citing)


def quotes_counted(checks: Sequence[QuoteCheck]) -> dict[str, int]:
    """``{"checked", "not_found", "facts"}``: ``--json``'s ``quotes_checked``, the counts :func:`quotes_summary`
    says. Raises nothing."""
    unquoted = sum(bool(c.unquoted) for c in checks)
    return {"checked": sum(c.state == "checked" and not c.unquoted for c in checks),
            "not_found": sum(c.state == "NOT FOUND" for c in checks), "facts": len(checks),
            **({"figure_not_quoted": unquoted} if unquoted else {})}


def quotes_summary(checks: Sequence[QuoteCheck]) -> str:
    """``12 of 20 facts' quotes checked against a stored text (2 NOT FOUND)``: the audit's summary of ``checks``."""
    checked = sum(c.state == "checked" and not c.unquoted for c in checks)
    bad = sum(c.state == "NOT FOUND" for c in checks)
    other = sum(c.state == MISMATCH for c in checks)
    places = sum(bool(c.unquoted) for c in checks)
    said = ", ".join(x for x in (f"{bad:,} NOT FOUND" if bad else "", f"{other:,} {MISMATCH}" if other else "",
                                 f"{places:,} with its places found, the figure not quoted" if places else "") if x)
    return (f"{checked:,} of {len(checks):,} facts' quotes checked against a stored text"
            + (f" ({said})" if said else ""))


# --- the parts of a stored excerpt a locator names (tests/test_fix154.py) ----------------------------------------


def _loose(text: str) -> str:
    """``text`` as :meth:`StoredText.parts_named` compares a locator with a part's name: case-folded, each run of
    blanks, ``_`` and ``-`` one space (``Azure Results/nd_h200-v5_results.md`` reads as
    ``azure results/nd h200 v5 results.md``). Linear in ``text``. Raises nothing."""
    return _LOOSE.sub(" ", text.casefold())


#: What :func:`_loose` reads as one space.
_LOOSE = re.compile(r"[\s_\-]+")


@functools.lru_cache(maxsize=64)
def _part_names(parts: tuple[str, ...]) -> tuple[tuple[str, bool, tuple[str, ...]], ...]:
    """How :meth:`StoredText.parts_named` looks for each of ``parts`` (a stored text's part names) in a locator:
    ``(part, alike, shown)``, ``alike`` where another part's name reads alike loosely (:func:`_loose`; then the name
    as written is looked for), else ``shown`` the loose forms looked for: the name, its last path component where no
    other part's is the same and it holds a ``.``, and that less its extension where no other part's is the same and it
    is at least 4 characters. Made once a process for each set of parts, not once a locator (309 locators a
    ``check`` of the shipped registry). Raises nothing."""
    names = [_loose(name) for name in parts]
    tails = [name.rsplit("/", 1)[-1] for name in names]
    stems = [tail.rsplit(".", 1)[0] if "." in tail else tail for tail in tails]
    out = []
    for part, name, tail, stem in zip(parts, names, tails, stems, strict=True):
        shown = [name] + ([tail] if tail != name and "." in tail and tails.count(tail) == 1 else [])
        if stem not in shown and len(stem.strip()) >= 4 and stems.count(stem) == 1:
            shown.append(stem)
        out.append((part, names.count(name) > 1, tuple(shown)))
    return tuple(out)


def _names_whole(text: str, name: str) -> bool:
    """Whether ``name`` stands whole in ``text`` (:func:`_whole_at`). Raises nothing."""
    return _whole_at(text, name) >= 0


def _whole_at(text: str, name: str) -> int:
    """Where ``name`` first stands whole in ``text`` (its index; -1 where it nowhere does): not inside a longer name
    (a word character, ``/``, ``-`` or ``.`` before it; a word character, ``/`` or ``-`` after it, or a ``.`` then
    one). Raises nothing."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end:end + 2]
        if not (before.isalnum() or before in "_/-.") and not (
                after[:1].isalnum() or after[:1] in "_/-" or (after[:1] == "." and after[1:2].isalnum())):
            return at
        at = text.find(name, at + 1)
    return -1


def _part_name(line: str, source: str) -> str | None:
    """The part a section heading (:data:`_SECTION_TEXT`) names: ``PATH`` of ``== SOURCE PATH URL ==`` (``None``
    for ``-``), else the heading's text less a leading ``SOURCE`` (``== LLaMA 3/Gaming GPUs/4090_v3.ipynb ==``)."""
    inner = line[3:-3].strip()
    if _compiled(_SOURCE_SECTION_TEXT).match(line):
        words = inner.split()
        return words[1] if len(words) >= 3 and words[1] != "-" else None
    first, _, rest = inner.partition(" ")
    return (rest.strip() or None) if first == source else inner or None


def _flat_lines(chosen: Sequence[str], joined: str | None = None) -> tuple[dict[int, list[str]], str]:
    """The numbered lines (by number, each flat) and the flat text of ``chosen`` (a section's lines, no line break
    in any; ``joined``: them joined by ``\\n``, made here when not given), the one place a stored text is flattened
    (:func:`_excerpt_lines` for a source's text, :func:`_excerpt_parts` for each part): each numbered line's text
    (past ``N<tab>``) and each other line as it is, every run of blanks one space, a :data:`_BARRIER` in the text
    read as a blank, and a :data:`_BARRIER` put between two numbered lines whose numbers are neither the same nor
    next to each other, so no quote spans them (tests/test_quote145.py). A text with no numbered line is flattened
    by one search in C, a numbered one a line at a time. Raises nothing."""
    text = "\n".join(chosen) if joined is None else joined
    if "\t" not in text or _compiled("(?m)" + _NUMBER_TEXT).search(text) is None:
        # no numbered line: every line's piece is itself, a barrier read as a blank
        return {}, " ".join(text.replace(_BARRIER, " ").split())
    number = _compiled(_NUMBER_TEXT)
    numbered: dict[int, list[str]] = {}
    pieces: list[str] = []
    last: int | None = None
    for line in chosen:
        m = number.match(line)
        if m:
            at = int(m.group(1))
            if last is not None and at not in (last, last + 1):
                pieces.append(_BARRIER)  # lines whose numbers are not next to each other do not join
            last = at
            flat = " ".join(line[m.end():].replace(_BARRIER, " ").split())
            if flat:
                numbered.setdefault(at, []).append(flat)
            pieces.append(flat)
        else:
            pieces.append(line.replace(_BARRIER, " "))
    return numbered, " ".join(" ".join(pieces).split())


def _excerpt_parts(data: str, source: str) -> dict[str, str]:
    """The flat text of each part of the stored excerpt ``data`` a section heading names (:attr:`StoredText.parts`,
    :func:`_part_name`), as :func:`_excerpt_lines` flattens a text (:func:`_flat_lines`): of ``source``'s sections
    where the file heads any, else of every section. Linear in ``data``. Raises nothing."""
    lines = data.splitlines()
    # the headings found by one search in C (:func:`_headings`), each section's lines a slice: a match a line, twice,
    # was a Python step a line for each source a file names
    headings = _headings("\n".join(lines))
    named: dict[str, dict[str, list[str]]] = {}  # each section id's lines by the part its heading names
    for k, (at, sid) in enumerate(headings):
        name = _part_name(lines[at], source)
        if name is not None:  # a heading naming no part: its lines are no part's
            named.setdefault(sid, {}).setdefault(name, []).extend(
                lines[at + 1:headings[k + 1][0] if k + 1 < len(headings) else None])
    if source in {sid for _, sid in headings}:
        by_part = named.get(source, {})
    else:
        by_part = {}
        for parts in named.values():
            for name, kept in parts.items():
                by_part.setdefault(name, []).extend(kept)
    return {name: _flat_lines(kept)[1] for name, kept in by_part.items()}
