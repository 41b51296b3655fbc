"""The review of a change is one value with one verdict: :class:`Diff` holds the two sides, the files that
changed, every lock's impact and every finding HEAD's files raise, and its exit status (:attr:`Diff.exit_status`:
2 bad input brought in by HEAD, 1 a lock unheld or moved without re-locking, a stale derived fact or HEAD failing
``passprice check``, else 0) is the verdict. :func:`compare` is the one place that builds it, from two opened sides;
:func:`diff` opens them (git revisions or folders, :mod:`passprice.review.sides`) and compares.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import cache, gitread
from passprice.derivations import Finding
from passprice.errors import InputError, spelled
from passprice.files import is_folder
from passprice.registry import Root, temporary_root
from passprice.review.changes import (
    FactChange,
    FileChange,
    _folded,
    _foreign_files,
    _n,
    card_renames,
    compare_file,
    dropped_digests,
    lookalike_records,
)
from passprice.review.headlocks import _duplicates, _lock_links, _unrooted, unreproduced
from passprice.review.impacts import (
    LockImpact,
    _list_changes,
    _locks,
    _shared_copies,
    _side_lists,
    _unrecorded_locks,
    lock_impacts,
)
from passprice.review.quotes import _ask_added, _fresh_sources, _quotes_checked, _ratio_bases, cited_sources
from passprice.review.records import (
    added_records,
    checkpoint_renames,
    export_lines,
    hypothetical_claims,
    in_source,
    made_real,
    relabelled_cards,
    relabelled_records,
    relabelled_stacks,
    rerouted_stacks,
    scopes_copied,
    scopes_widened,
    stale_descriptions,
    synthetic_made_real,
    titles_contradicting,
    unkept_changes,
)
from passprice.review.runs import (
    _is_measurement,
    _moved_under_runs,
    measurement_renames,
    renamed_runs,
    runs_to_verify,
    source_table_changes,
    stack_spans,
)
from passprice.review.sides import (
    CODE,
    Checkout,
    Side,
    SideInfo,
    _excerpts_named,
    _given,
    _is_root,
    _named_by_sources,
    _plain_inside,
    _run_git,
    file_kind,
    folder_files,
    refuse_lockless,
    refuse_unread_before_writing,
    refuse_unread_locks,
)
from passprice.sidecode import BUILD_FILES, Code, code_folder, code_of, conversations, kept_apart
from passprice.sourcechange import SourceChange, source_changes

if TYPE_CHECKING:

    from passprice.addedservings import AddedServing
    from passprice.measurements import Run
    from passprice.unlocked import ServingMove


#: The files beside a registry's folders (paths from its root) that decide which passprice checks and reviews it:
#: the line CI and a newcomer install it by (``requirements.txt``, which ``init`` writes; the base branch's installs
#: the reviewer of every later pull request), a checkout's build (``pyproject.toml``, and ``hatch_build.py``, its
#: build hook, run at install), the pre-commit hook and the review workflow. A pull request rewriting
#: ``requirements.txt`` to another passprice read "no fact changed; no lock affected" (slip round 29): once merged,
#: that passprice reviews every later change. Named by :attr:`Diff.install_files`, never failed (as passprice's own
#: code is): people read them.
INSTALL_FILES = ("requirements.txt", "pyproject.toml", "hatch_build.py", ".pre-commit-config.yaml",
                 ".github/workflows/facts.yml")


#: The folder of GitHub's workflows (paths from a registry's root): each file in it counts with :data:`INSTALL_FILES`
#: (:func:`install_names`). A pull request adding ``.github/workflows/review.yml`` (its own job installing another
#: passprice, posting the sticky review comment) read "no fact changed; no lock affected" (attack round 34b).
WORKFLOWS = ".github/workflows"


@attrs.frozen
class Diff:
    """What changed between ``base`` and ``head``: the ``files`` that differ (cards and drafting methods with their
    fact changes, checkpoints with their content digests, servings with their field changes; every other file by
    name, with errors), every lock reviewed (``reviews``), and the code each side was priced with.

    Exit status (:attr:`exit_status`): 2 when a file does not read on HEAD (bad input brought in by the change), else
    1 when a change leaves a lock unheld (a fact below its floor, a price HEAD refuses, a checkpoint whose content
    is not the pinned one), moves a locked price (the limit, or the expected price under a serving stack) without
    updating the lock, leaves a derived fact of a changed file not following from its inputs (stale, as ``passprice
    check`` fails it: the locks resting on it are marked), or leaves HEAD failing ``passprice check`` in any other
    way (:attr:`head_check`), else 0."""

    base: SideInfo
    head: SideInfo
    files: tuple[FileChange, ...]
    reviews: tuple[LockImpact, ...] = ()
    base_code: Code | None = None
    head_code: Code | None = None
    #: What ``passprice check`` finds in HEAD's files (:func:`passprice.check.review_files`: schemas, derived facts,
    #: stack fits re-run from their measured runs, servings resolved), and which of those are files that do not
    #: read: a review fails wherever ``check`` on HEAD would (a measured run edited without a re-fit, an entry whose
    #: name is not its file's), whichever lock the change reaches.
    head_check: tuple[str, ...] = ()
    head_unreadable: tuple[str, ...] = ()
    #: Sources whose id leads to another document on HEAD (:mod:`passprice.sourcechange`): to verify, never failed.
    sources: tuple[SourceChange, ...] = ()
    #: The registered servings no lock names whose price (or refusal) the change moves (:mod:`passprice.unlocked`):
    #: shown, marked not locked; nothing pins them, so they never fail the review.
    unlocked: tuple[ServingMove, ...] = ()
    #: How many more unlocked servings the change reaches than a review re-prices
    #: (:data:`~passprice.unlocked.MAX_REPRICED`): named in one line, not priced.
    unlocked_left_out: int = 0
    #: The files of ``src/passprice`` HEAD changes (:func:`passprice.sidecode.code_changes`): the code that makes
    #: this verdict, when HEAD's passprice runs it. Shown, never failed (a change to passprice itself is reviewed by
    #: people, with the verdict of BASE's passprice).
    code_files: tuple[str, ...] = ()
    #: HEAD's lock files that duplicate another (:func:`passprice.check.duplicate_lines`: the same pins, floors and
    #: price under another file name), one of the two added or changed by the change: shown, never failed.
    duplicates: tuple[str, ...] = ()
    #: What ``passprice check`` on HEAD warns of (:attr:`passprice.check.FileReview.warnings`: a temporary file a
    #: killed write left, a source nothing cites, the editors' schema copy out of date, a GGUF file among the entries
    #: …), each line as check prints it: shown, never failed. Until session 13 a review said nothing of them.
    head_warnings: tuple[str, ...] = ()
    #: How many more of those warnings there were past the first :data:`MAX_HEAD_WARNINGS` (shown as a count: 3,000
    #: sources nothing cites made a pull-request comment of 318 KB, past GitHub's 65,536 characters, round 23).
    head_warnings_left_out: int = 0
    #: The servings HEAD registers and BASE does not (:mod:`passprice.addedservings`): what each prices, HEAD's price
    #: of it and the locks of it. Shown, never failed; until slip round 28 a review showed an added serving's path
    #: alone, counted as "1 other file changed".
    added_servings: tuple[AddedServing, ...] = ()
    #: The files of :data:`INSTALL_FILES` and :data:`WORKFLOWS` HEAD adds, removes or rewrites: what decides which
    #: passprice checks and reviews the registry. Shown, never failed.
    install_files: tuple[str, ...] = ()
    #: Each source record and checkpoint entry HEAD adds, by path: what it is, in one line
    #: (:func:`~passprice.review.records.added_records`). Walkthrough 21: an added source read "Other files changed:
    #: `sources/X.toml` (added)" beside a fact's "to verify" asking about it, and an added checkpoint "content – →
    #: 8712effdea2c…", neither saying what it is.
    added_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each changed stack whose fitted runs' measured / limit span moved, by path
    #: (:func:`~passprice.review.runs.stack_spans`).
    spans: Mapping[str, str] = attrs.field(factory=dict)
    #: How many runs of each measurement file the change edits are to verify in their source, by path
    #: (:func:`~passprice.review.runs.runs_to_verify`; each described in :attr:`added_records`). Shown, never failed.
    recited: Mapping[str, int] = attrs.field(factory=dict)
    #: Each routing record or drafting method whose ``checkpoints`` scope the change widens, by path: what to verify
    #: (:func:`~passprice.review.records.scopes_widened`; shown with the file, as :attr:`added_records` describes it).
    #: Shown, never failed.
    widened: Mapping[str, str] = attrs.field(factory=dict)
    #: Each record file the change adds whose name reads as another record's of its kind, by path: what to verify,
    #: quoting both files (:func:`passprice.review.changes.lookalike_records`). Shown, never failed.
    lookalikes: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card BASE marks hypothetical and HEAD does not, by path: what to verify
    #: (:func:`~passprice.review.records.made_real`). Shown, never failed.
    made_real: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card retitled or newly marked hypothetical, by path: what to verify, naming HEAD's locks that pin it as it
    #: was (:func:`~passprice.review.records.relabelled_cards`). Shown, never failed.
    relabelled: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds marked hypothetical whose facts claim a published or measured figure, by path: what
    #: to verify (:func:`~passprice.review.records.hypothetical_claims`). Shown, never failed.
    hypothetical: Mapping[str, str] = attrs.field(factory=dict)
    #: Each registered source a fact the change adds or changes cites on HEAD (its own source or a figure input's),
    #: by id: the document, and the changed facts citing it (:func:`~passprice.review.quotes.cited_sources`). Shown,
    #: never failed.
    cited: Mapping[str, str] = attrs.field(factory=dict)
    #: Each routing record or drafting method retitled or re-noted, by path: what to verify, naming HEAD's locks that
    #: price with it (:func:`~passprice.review.records.relabelled_records`). Shown, never failed.
    relabelled_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds, retitles or unmarks whose HEAD title says hypothetical while it is not marked so, by
    #: path: what to verify (:func:`~passprice.review.records.titles_contradicting`). Shown, never failed.
    title_contradicts: Mapping[str, str] = attrs.field(factory=dict)
    #: HEAD's locks made under a serving stack fitted from a measured run to verify
    #: (:func:`~passprice.review.runs.runs_to_verify`'s ``stacks``), by name: their expected price rests on the run's
    #: figure (slip round 46).
    recited_locks: tuple[str, ...] = ()
    #: ``FILE: ID`` of each run the change adds or changes whose quote, found in HEAD's stored excerpt, states another
    #: figure than its tokens/s (:func:`~passprice.review.runs.runs_to_verify`'s ``mismatched``, ``check``'s rule): each
    #: fails the review, as :attr:`quotes_mismatched` does a fact (a run moved 145.55 -> 150.55 under its unchanged
    #: llama-bench row read "1 measured run to verify", exit 0, where ``check`` failed).
    runs_mismatched: tuple[str, ...] = ()
    #: ``FILE: ID`` of each run the change adds or changes whose quote was not looked up, the review's look-ups past
    #: their bound (one :class:`passprice.sources.Lookups` for the whole review, its runs' look-ups after its facts'
    #: and excerpts'), with its spans not looked up: each fails the review, named among :attr:`quotes_unchecked`, as
    #: a fact past the bound does (a run past it was asked, exit 0, and the bound was one a measurement file).
    runs_unchecked: Mapping[str, int] = attrs.field(factory=dict)
    #: Each record re-cited to another table row whose unchanged description (or its source's ``read``) still names
    #: the old row, by path: what to verify (:func:`~passprice.review.records.stale_descriptions`). Shown, never failed.
    stale_descriptions: Mapping[str, str] = attrs.field(factory=dict)
    #: Each serving stack whose route (``integer_matrices``, ``float_matrices``: where its matrix kernels run) the
    #: change moved while a lock of HEAD is made under it, by path: what to verify
    #: (:func:`~passprice.review.records.rerouted_stacks`). Shown, never failed.
    rerouted: Mapping[str, str] = attrs.field(factory=dict)
    #: The lines of :attr:`head_check` that are the review's own rules, not ``passprice check``'s (the list of pricing
    #: models, the commands that write the shipped headers, a lock's pin no side of the change holds, a pricing model
    #: no code of the review gives): :meth:`check_line` names them so (a new user read "HEAD
    #: fails passprice check (162 problems)" of list entries where ``check`` on HEAD found none: tests/test_walk128.py).
    review_rules: frozenset[str] = frozenset()
    #: One line a ``.gitattributes`` ``export-ignore``/``export-subst`` rule HEAD sets on a file of its facts, locks
    #: or sources (records and stored excerpts) that BASE did not set so
    #: (:func:`~passprice.review.records.export_lines`): ``git archive`` of HEAD leaves the file out or rewrites it, so
    #: a release packed from it is not the registry reviewed. Named, never failed (tests/test_left131.py: such a rule
    #: read "no changes").
    export_rules: tuple[str, ...] = ()

    @property
    def entries_edited(self) -> tuple[str, ...]:
        """The checkpoint entries whose content (what the pricer reads) changed while the header ``sha256`` they
        record did not, by path: an entry is imported from one file's header, so the same digest over another
        content is an entry edited by hand (slip round 36: one tensor of an entry no serving names turned Q8_0 →
        Q4_0 read "1 checkpoint entry changed", nothing to verify, exit 0). Shown, never failed."""
        out = []
        for f in self.files:
            old, new = f.claims
            if (f.kind == "checkpoint" and f.status == "changed" and old is not None and new is not None
                    and f.content[0] != f.content[1] and None not in f.content
                    and old.get("header.sha256") == new.get("header.sha256")):
                out.append(f.path)
        return tuple(out)

    @property
    def by_header(self) -> dict[str, str]:
        """Each lock HEAD holds only by its checkpoint's header (:attr:`passprice.review.impacts.LockImpact.by_header`),
        by name: what to verify. Shown, never failed."""
        return {lock.name: said for lock in self.reviews if (said := lock.by_header) is not None}

    @property
    def digests_dropped(self) -> dict[str, tuple[str, ...]]:
        """The checkpoint entries whose recorded digests (the header's sha256, a shard's, a long array's element
        digest) the change drops or rewrites, by path: each digest with its value before → after
        (:func:`passprice.review.changes.dropped_digests`). Slip round 38: ``tokenizer.ggml.tokens``' element digest
        removed from the entry a lock pins read "content unchanged (the entry was rewritten …)", nothing to verify, exit
        0, and a re-tokenized copy then counted as the entry's model (:func:`passprice.scopes.same_model` held only the
        digests both know; since session 24 a copy is refused where a digest is missing). Shown, never failed."""
        return {f.path: found for f in self.files if (found := dropped_digests(f))}

    @property
    def header_pins(self) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry of :attr:`digests_dropped`, by path, the locks of HEAD that pin the header
        sha256 it stated before (their ``drifted`` holds ``checkpoint.sha256``,
        :func:`passprice.review.impacts.header_repinned`): each must be re-pinned (``lock --update``), ``check
        --frozen`` failing until then. Slip round 43: the review asked the rewritten digest but named no lock pinning
        the old one."""
        dropped = self.digests_dropped
        out: dict[str, tuple[str, ...]] = {}
        for f in self.files:
            if f.path not in dropped:
                continue
            names = tuple(r.name for r in self.reviews
                          if r.pinned_checkpoint == f.name and "checkpoint.sha256" in r.drifted)
            if names:
                out[f.path] = names
        return out

    @property
    def origin_pins(self) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry whose ``origin`` the change rewrites, by path, the locks of HEAD that pin the
        origin it stated before (their ``drifted`` holds ``checkpoint.origin``,
        :func:`passprice.review.impacts.origin_repinned`): each must be re-pinned (``lock --update``), ``check
        --frozen`` failing until then (session 27: a lock pins its entry's origin, which ``audit`` cites)."""
        return self.entry_label_pins("origin")

    @property
    def source_pins(self) -> dict[str, tuple[str, ...]]:
        """As :attr:`origin_pins`, of the entry's ``source`` (the header file ``audit`` cites; slip round 46)."""
        return self.entry_label_pins("source")

    def entry_label_pins(self, key: str) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry whose ``[entry]`` ``key`` (``origin``, ``source``) the change rewrites, by path,
        the locks of HEAD pinning the value it stated before (``checkpoint.KEY`` among their ``drifted``,
        :func:`passprice.review.impacts.entry_label_repinned`)."""
        out: dict[str, tuple[str, ...]] = {}
        for f in self.files:
            if f.kind != "checkpoint" or f"entry.{key}" not in f.meta:
                continue
            names = tuple(r.name for r in self.reviews
                          if r.pinned_checkpoint == f.name and f"checkpoint.{key}" in r.drifted)
            if names:
                out[f.path] = names
        return out

    def origin_pinned_line(self, path: str) -> str:
        """``; N locks pin the old origin: A, B (re-pin: passprice lock --update)`` for the entry at ``path`` of
        :attr:`origin_pins`, and ``; N locks pin the old source: …`` of :attr:`source_pins`; empty when none pins
        either."""
        out = ""
        for key, pins in (("origin", self.origin_pins), ("source", self.source_pins)):
            names = pins.get(path, ())
            if names:
                out += (f"; {_n(len(names), 'lock')} pin{'s' if len(names) == 1 else ''} the old {key}: "
                        f"{', '.join(spelled(n) for n in names)} (re-pin: passprice lock --update)")
        return out

    def header_pinned_line(self, path: str) -> str:
        """``; N locks pin the old header: A, B (re-pin: passprice lock --update)`` for the entry at ``path`` of
        :attr:`header_pins`, empty when none pins it."""
        names = self.header_pins.get(path, ())
        if not names:
            return ""
        return (f"; {_n(len(names), 'lock')} pin{'s' if len(names) == 1 else ''} the old header: "
                f"{', '.join(spelled(n) for n in names)} (re-pin: passprice lock --update)")

    @property
    def runs_recited(self) -> int:
        """How many runs of the measurement files the change edits are to verify in their source
        (:attr:`recited`)."""
        return sum(self.recited.values())

    @property
    def runs_outside(self) -> tuple[str, ...]:
        """The stacks (by path) whose re-fit rests on an added run outside the span BASE's runs measured
        (:attr:`spans`): to verify, never failed."""
        return tuple(path for path, line in self.spans.items() if "outside BASE's span" in line)

    @property
    def locks(self) -> tuple[LockImpact, ...]:
        """The locks a reviewer needs to see (:attr:`passprice.review.impacts.LockImpact.affected`)."""
        return tuple(lock for lock in self.reviews if lock.affected)

    @property
    def behind(self) -> tuple[LockImpact, ...]:
        """The locks out of date already on BASE that the change does not touch
        (:attr:`passprice.review.impacts.LockImpact.behind`): listed as such, not counted as affected by the change."""
        return tuple(lock for lock in self.locks if lock.behind)

    @property
    def unaffected(self) -> tuple[LockImpact, ...]:
        """The locks the change leaves as they were: same price, same floors, same inputs (the pricing model
        aside, when it prices them the same), and no source whose document changed under their price
        (:attr:`on_changed_sources`)."""
        resting = {*self.resting_on_sources(), *(lock.name for lock in self.on_changed_claims),
                   *(lock.name for lock in self.on_recited_runs)}
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in resting)

    @property
    def on_recited_runs(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise, nor counted on a changed source or checkpoint claim, made under a serving
        stack fitted from a measured run the change asks to verify (:attr:`recited_locks`): their expected price
        rests on the run's figure through the stack's fit, so they are to verify, not unaffected. Slip round 46: the
        111 runs of the stack ``llamacpp-cuda-2405`` re-cited to another source (or one run's locator rewritten)
        read "111 measured runs to verify …; no lock affected; 9 locks unaffected" beside a lock made under it."""
        if not self.recited_locks:
            return ()
        counted = {*self.resting_on_sources(), *(lock.name for lock in self.on_changed_claims)}
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in counted
                     and lock.name in self.recited_locks)

    @property
    def claimed_entries(self) -> tuple[str, ...]:
        """The checkpoint entries (by name) changed on both sides whose claims changed
        (:func:`passprice.review.changes.claims_changed`: its ``origin``, ``source``, ``imported_by``, a header or shard
        sha256, a long array's element digest)."""
        return tuple(f.name for f in self.files if f.kind == "checkpoint" and f.status == "changed" and f.meta)

    @property
    def on_changed_claims(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise, nor resting on a changed source, whose checkpoint entry's claims
        changed (:attr:`claimed_entries`): to verify, so not counted unaffected. ``audit`` cites a lock's checkpoint
        by its entry's ``origin`` (:mod:`passprice.checkpointcite`), which no lock pins: slip round 45, an origin
        rewritten to "(fine-tuned)" under three locks read "no lock affected; 8 locks unaffected", ✅."""
        entries = set(self.claimed_entries)
        if not entries:
            return ()
        resting = set(self.resting_on_sources())
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in resting
                     and lock.pinned_checkpoint in entries)

    @property
    def on_changed_sources(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise whose recorded price rests on a source whose document changed
        (:attr:`sources`, each's ``locks``): to verify, so not counted unaffected. Slip round 44: a source's
        document changed read "no lock affected; 8 locks unaffected" while its to-verify line named 4 locked
        prices resting on it."""
        resting = set(self.resting_on_sources())
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name in resting)

    def resting_on_sources(self) -> tuple[str, ...]:
        """The names of the locks whose recorded price rests on a source whose document changed, each once."""
        return tuple(dict.fromkeys(lock for s in self.sources for lock in s.locks))

    @property
    def fact_changes(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """Every fact change a review lists, with its file: all but the facts fitted again to the same value
        (:attr:`refit_unmoved`, which ``--format json`` keeps in each file's ``facts``, marked)."""
        return tuple((f, c) for f in self.files for c in f.facts if not _folded(f, c))

    @property
    def quotes_not_found(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed or added facts whose quotes ``audit``'s quote check does not find in HEAD's stored excerpt of
        the document they cite (:attr:`passprice.review.changes.FactChange.quote` ``NOT FOUND``), with their file. Each
        fails the review (:attr:`exit_status`): unlike a figure asked of a document passprice does not read, the stored
        excerpt is the registry's own record of the words read, and the quote is not in it, so either the quote is wrong
        or the excerpt lacks the lines it was read from (a new user's re-citation read "⚠️ … 1 to verify", exit 0, once
        its locks were re-locked: tests/test_walk138.py)."""
        return tuple((f, c) for f, c in self.fact_changes if c.quote is not None and c.quote.state == "NOT FOUND")

    @property
    def quotes_mismatched(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed or added facts whose quotes, found in HEAD's stored excerpt, state another figure than theirs
        (:attr:`passprice.review.changes.FactChange.quote` ``MISMATCH``, :func:`passprice.sources.figures_quoted`), with
        their file. Each fails the review, as ``check`` fails it: a new user's ``memory.bandwidth`` moved 8 → 8.2 TB/s
        under its quote ``'Peak Memory Bandwidth 8 TB/s'`` passed once re-locked (tests/test_fix53w.py)."""
        from passprice.sources import MISMATCH

        return tuple((f, c) for f, c in self.fact_changes if c.quote is not None and c.quote.state == MISMATCH)

    @property
    def provenance_contradicted(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed facts the citation they kept contradicts (:attr:`passprice.review.changes.FactChange.
        contradicted`: a value moved under a locator stating the old figure, or a provenance raised under words
        calling the figure an assumption or an estimate), with their file. Each fails the review: the record states
        one thing and its citation another, with no new evidence (tests/test_review_contradicted.py)."""
        return tuple((f, c) for f, c in self.fact_changes if c.contradicted is not None)

    @property
    def quotes_against_removed(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed or added facts whose quotes, read against the stored excerpt BASE held of a source and the
        change removed (:attr:`passprice.review.changes.FactChange.against_removed`), are NOT FOUND or state another
        figure, with their file. Each fails the review: removing a record's ``excerpt`` line switched the MISMATCH
        rule off for a value moved in the same change (4.8 → 5.2 TB/s, re-locked, read ⚠️ "its quote can no longer
        be checked", exit 0)."""
        return tuple((f, c) for f, c in self.fact_changes if c.against_removed)

    @property
    def quotes_lost(self) -> tuple[tuple[str, str, int], ...]:
        """``(source id, card:path, spans)`` of each fact a changed source's rewritten stored excerpt lost the quotes
        of (:attr:`passprice.sourcechange.SourceChange.quotes_lost`: NOT FOUND on HEAD, found on BASE) that
        :attr:`quotes_not_found` does not already name, with how many of its spans HEAD's excerpt lacks. Each fails
        the review and is counted in its ``N quotes NOT FOUND`` headline, as a changed fact's NOT FOUND is: the
        excerpt is the registry's record of the words read, and the change made it lack the fact's quote, so
        ``audit`` of HEAD says NOT FOUND of a price it rests on (it read "to verify", exit 0, and was not counted:
        tests/test_budget140.py)."""
        named = {f"{f.name}:{c.path}" for f, c in self.quotes_not_found}
        out: dict[str, tuple[str, str, int]] = {}
        for s in self.sources:
            for path, n in zip(s.quotes_lost, s.lost_spans, strict=False):
                if path not in named and path not in out:
                    out[path] = (s.id, path, n)
        return tuple(out.values())

    @property
    def quotes_unchecked(self) -> tuple[str, ...]:
        """The facts (``card:path``) whose quotes the review did not look up, its look-ups past their bound
        (:class:`passprice.sources.Lookups`, 2,236 spans and 128 MiB of stored text, one for the review: the changed
        facts' checks, then the rewritten excerpts' checks of their citing facts with what those left, each all or
        none, none of either when the first are past it; tests/test_bound147.py): each fails the review, which
        cannot say their quotes are found. Before (tests/test_budget140.py), 600 junk quotes on facts sorting first
        left a later fact's NOT FOUND "not checked … past the 512" and the review passed."""
        names = [f"{f.name}:{c.path}" for f, c in self.fact_changes if c.quote is not None and c.quote.past]
        names += [path for s in self.sources for path in s.quotes_unchecked]
        names += list(self.runs_unchecked)  # measured runs' (``FILE: ID``), looked up last
        return tuple(dict.fromkeys(names))

    @property
    def quote_spans_unchecked(self) -> int:
        """How many quoted spans of :attr:`quotes_unchecked` the review did not look up: a changed fact's
        (:attr:`passprice.sources.QuoteCheck.past`, of all its sources), then those of a rewritten excerpt's citing
        fact of that source (:attr:`passprice.sourcechange.SourceChange.unchecked_spans`), each fact counted once,
        as :attr:`quotes_unchecked` names it. The two were counted unevenly: spans and facts of the changed facts,
        facts alone of the excerpts' (tests/test_odds165.py)."""
        spans = {f"{f.name}:{c.path}": c.quote.past for f, c in self.fact_changes
                 if c.quote is not None and c.quote.past}
        for s in self.sources:
            for path, n in zip(s.quotes_unchecked, s.unchecked_spans, strict=False):
                spans.setdefault(path, n)
        for run, n in self.runs_unchecked.items():
            spans.setdefault(run, n)
        return sum(spans.values())

    @property
    def quote_spans_not_found(self) -> int:
        """How many quoted spans of :attr:`quotes_not_found` and :attr:`quotes_lost` the stored excerpts lack (the
        summary's ``N quotes NOT FOUND in their stored text``)."""
        return (sum(len(c.quote.missing) for _, c in self.quotes_not_found if c.quote is not None)
                + sum(n for _, _, n in self.quotes_lost))

    @property
    def refit_unmoved(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The facts a re-fit wrote again with the same value, provenance and citation (:attr:`FactChange.
        refit_unmoved`), with their file: each file's are named in one line of the review."""
        return tuple((f, c) for f in self.files for c in f.facts if _folded(f, c))

    @property
    def weakened(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The fact changes that step down the provenance ladder."""
        return tuple((f, c) for f, c in self.fact_changes if c.weakened)

    @property
    def to_verify(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The fact changes a reviewer must check in their source
        (:attr:`passprice.review.changes.FactChange.to_verify`): they do not fail the review, they are listed for the
        person approving it."""
        return tuple((f, c) for f, c in self.fact_changes if c.to_verify is not None)

    @property
    def unreadable(self) -> tuple[FileChange, ...]:
        """The changed files that do not read on a side."""
        return tuple(f for f in self.files if not f.compared)

    @property
    def broken(self) -> tuple[LockImpact, ...]:
        """The locks the change leaves unheld."""
        return tuple(lock for lock in self.locks if lock.breaks)

    @property
    def stale(self) -> tuple[LockImpact, ...]:
        """The locks that do not record HEAD's price: moved by the change without being re-locked, or out of date
        already on BASE (either fails the review, as ``cargo --locked`` would)."""
        return tuple(lock for lock in self.locks if lock.stale)

    @property
    def unsound(self) -> tuple[tuple[FileChange, Finding], ...]:
        """HEAD's derived facts, in the changed files, that do not follow from their inputs (stale, mismatch or
        broken), with their file."""
        return tuple((f, x) for f in self.files for x in f.findings)

    @property
    def check_beyond(self) -> tuple[str, ...]:
        """The lines of :attr:`head_check` that :attr:`unsound` does not already list (its findings are check's
        lines ``FILE: PATH …``, a copied card's with :func:`passprice.lineage.copied_inputs`' words after them,
        walkthrough 42): what else ``check`` fails on HEAD."""
        from passprice.lineage import COPIED_INPUTS

        listed = {f"{f.path}: {x.message}" for f, x in self.unsound}
        copied = f"; it {COPIED_INPUTS} "
        return tuple(p for p in self.head_check if p not in listed and p.split(copied)[0] not in listed)

    @property
    def check_counted(self) -> tuple[str, ...]:
        """What ``passprice check`` on HEAD counts as its problems and :attr:`check_beyond` leaves out: those lines,
        then the error lines of each lock file HEAD changes that does not read there (:func:`passprice.check.
        review_files` reads no lock, and ``check`` counts each such file's errors as problems). One count for one
        tree: a hand-edited lock beside an invalid card read "HEAD fails passprice check (1 problem)" where ``check``
        said "2 problems" (tests/test_walk138.py)."""
        locks = tuple(e for f in self.files if f.kind == "lock" and f.head_errors for e in f.head_errors)
        return self.check_beyond + tuple(e for e in locks if e not in self.check_beyond)

    @property
    def check_problems(self) -> tuple[str, ...]:
        """``--format json``'s ``head_check``: every line of :attr:`head_check` (derived facts that do not follow
        included), then the error lines of each lock file HEAD changes that does not read there, as
        :attr:`check_counted` adds them to the text's count: ``--json`` listed check's file-review lines alone where
        the text and markdown counted the lock too (tests/test_budget140.py)."""
        locks = tuple(e for f in self.files if f.kind == "lock" and f.head_errors for e in f.head_errors)
        return self.head_check + tuple(dict.fromkeys(e for e in locks if e not in self.head_check))

    @property
    def check_shown(self) -> tuple[tuple[str, ...], int, tuple[str, ...]]:
        """The lines of :attr:`check_counted` a review lists under what HEAD fails ``check`` on (the first
        :data:`MAX_HEAD_PROBLEMS`), how many more it counts without listing (``passprice check`` on HEAD lists each):
        3,000 invalid source records made a 2.4 MB pull-request comment of 15,000 problem lines (issue 13); and the
        lock files whose lines it lists under the file instead (:meth:`errors_shown`), each line listed once: a lock
        file that does not read on HEAD was listed under its file and again under HEAD's check
        (tests/test_bound147.py)."""
        shown = self.errors_shown()
        above: dict[str, str] = {}  # a line listed under its lock file: the file
        for f in self.files:
            if f.kind == "lock" and f.path in shown:
                for e in shown[f.path][1]:
                    above.setdefault(e, f.path)
        rest = tuple(p for p in self.check_counted if p not in above)
        files = tuple(dict.fromkeys(above[p] for p in self.check_counted if p in above))
        return rest[:MAX_HEAD_PROBLEMS], max(0, len(rest) - MAX_HEAD_PROBLEMS), files

    def check_elsewhere_line(self, where: str = "above, under") -> str:
        """``1 problem listed above, under the lock file that does not read (locks/u1.lock.toml)``: the lines
        :attr:`check_counted` counts under HEAD's check that :attr:`check_shown` lists under their lock file instead
        (the first 3 files named; ``where`` says where that list is: the markdown's ``below (Files that do not read),
        under``), ``""`` when none. Raises nothing."""
        listed, more, files = self.check_shown
        if not files:
            return ""
        counted = len(self.check_counted) - len(listed) - more
        names = ", ".join(files[:3]) + (f" and {len(files) - 3:,} more" if len(files) > 3 else "")
        return (f"{'and ' if listed else ''}{_n(counted, 'problem')} listed {where} the lock "
                f"file{'s' if len(files) != 1 else ''} that do{'' if len(files) != 1 else 'es'} not read ({names})")

    def errors_shown(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...], int]]:
        """The errors of the changed files that do not read that a review lists: for each such file's path, its
        BASE and HEAD errors shown and how many more it has that are counted, not listed. The first
        :data:`MAX_HEAD_PROBLEMS` error lines, in the order of :attr:`files` (BASE's before HEAD's), are shown;
        the rest are counted (``passprice check`` on each side lists every one)."""
        budget = MAX_HEAD_PROBLEMS
        out = {}
        for f in self.files:
            if f.compared:
                continue
            base = f.base_errors[:budget]
            head = f.head_errors[:budget - len(base)]
            budget -= len(base) + len(head)
            out[f.path] = (base, head, len(f.base_errors) + len(f.head_errors) - len(base) - len(head))
        return out

    def errors_left_out(self) -> tuple[int, int]:
        """How many error lines of changed files that do not read a review counts without listing
        (:meth:`errors_shown`), and in how many files none is listed: ``(errors, files)``."""
        shown = self.errors_shown().values()
        return sum(n for _, _, n in shown), sum(1 for b, h, _ in shown if not b and not h)

    def head_warnings_count(self) -> str:
        """The summary's count of ``check``'s warnings on HEAD, as ``check`` counts them: those listed
        (:attr:`head_warnings`, with :attr:`head_warnings_left_out`) and the duplicate locks of a pair the change
        touches (:attr:`duplicates`), which ``check`` warns of among them and the review lists under their own
        heading, said so (:func:`duplicates_elsewhere` is the lists' line of them). It said "2 warnings of check on
        HEAD" where ``check`` printed 3, the third under "locks duplicating another" (tests/test_odds172.py). Raises
        nothing."""
        total = len(self.head_warnings) + self.head_warnings_left_out + len(self.duplicates)
        under = f" ({len(self.duplicates):,} under {DUPLICATES_HEADING})" if self.duplicates else ""
        return f"{_n(total, 'warning')} of check on HEAD{under}"

    def check_line(self) -> str:
        """``HEAD fails passprice check (2 problems)`` (``2 more problems`` beside derived facts listed already);
        ``HEAD fails the review's rules (1 problem)`` when each is a rule of the review's own (:attr:`review_rules`),
        not of ``check``, and ``HEAD fails passprice check and the review's rules (3 problems: 1 of the review's
        rules)`` for both."""
        word = "more problem" if self.unsound else "problem"
        beyond = self.check_counted
        rules = sum(line in self.review_rules for line in beyond)
        if rules and rules == len(beyond):
            return f"HEAD fails the review's rules ({_n(len(beyond), word)}; passprice check does not check them)"
        if rules:
            return (f"HEAD fails passprice check and the review's rules ({_n(len(beyond), word)}: {rules:,} of the "
                    "review's rules, which passprice check does not check)")
        return f"HEAD fails passprice check ({_n(len(beyond), word)})"

    def unsound_names(self) -> list[str]:
        """``--json``'s ``unsound``: each derived fact of a changed file that does not follow from its inputs
        (:attr:`unsound`, ``CARD:PATH``), then each serving stack's fitted fact a lock of :attr:`resting_on_unsound`
        rests on that no longer follows from the stack's runs (``STACK:PATH``, the path in the stack's file, as
        ``check`` names it), each once. Before (walkthrough 82): a stack's ``overhead.layer`` edited by hand to
        80 µs, its re-fit 96.63 µs, left ``unsound`` ``[]`` while ``resting_on_unsound`` named the lock made under
        the stack, and the summary counted it as resting on derived facts that do not follow."""
        names = [f"{f.name}:{x.path}" for f, x in self.unsound]
        for lock in self.resting_on_unsound:
            stack = (lock.after.price or {}).get("stack")
            if isinstance(stack, str):
                names += [f"{stack}:{x.path.removeprefix('stack.')}" for x in lock.unsound
                          if x.path.startswith("stack.")]
        return list(dict.fromkeys(names))

    @property
    def resting_on_unsound(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD price rests on one of :attr:`unsound`."""
        return tuple(lock for lock in self.locks if lock.unsound and not lock.removed)

    @property
    def relocked(self) -> tuple[LockImpact, ...]:
        """The locks whose file the change rewrote (re-locked), that record HEAD's price, answer the question they
        answered on BASE and read on both sides (a file that does not read was edited, not re-locked)."""
        return tuple(
            lock for lock in self.locks
            if lock.status == "changed" and not lock.stale and not lock.question and lock.note is None
            and lock not in self.unreproducing and lock not in self.forging and lock not in self.unrecorded
        )

    @property
    def forging(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file pins what no side of the change holds and BASE's copy did not pin, or drops a
        label BASE's copy pinned (:func:`passprice.pinforgery.forged_pins`' lines of :attr:`head_check`: edited by
        hand, its digest recomputed), and which reproduce from their own pinned inputs (those are
        :attr:`unreproducing`). Counted as such in the summary, never as "re-locked" (slip round 51: a lock whose
        pinned ``fitted_vendors`` was forged to ``AMD, NVIDIA`` read "1 re-locked" there and on its row, beside "HEAD
        fails passprice check")."""
        return tuple(lock for lock in self.locks if not lock.removed and _forging(self, lock)
                     and not _unreproducing(self, lock))

    @property
    def unrecorded(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file's ``[lock] digest`` is in no record of HEAD's list of pricing models
        (:func:`passprice.modellist.unrecorded_locks`' lines of :attr:`head_check`: not written by ``passprice
        lock``, edited by hand and its digest recomputed), and which reproduce and pin nothing forged (those are
        :attr:`unreproducing` and :attr:`forging`). Counted as such, never as "re-locked" (slip 58: a lock whose
        floors were loosened by hand read "re-locked, floors loosened", exit 0)."""
        return tuple(lock for lock in self.locks if not lock.removed and _unrecorded(self, lock)
                     and not _unreproducing(self, lock) and not _forging(self, lock))

    @property
    def unreproducing(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file does not reproduce from its own pinned inputs
        (:func:`~passprice.review.headlocks.unreproduced`'s lines of
        :attr:`head_check`: edited by hand, its digest recomputed), whatever HEAD's price of them says. Counted as
        such in the summary, never as "re-locked" or "out of date already on BASE" (slip round 50: a lock of the
        stack ``llamacpp-cuda-2405`` whose pinned ``stack.overhead.layer`` was forged 96.63 → 115.96 µs read "1
        re-locked", one whose expected price was forged 237.4 → 250 tokens/s "1 out of date already on BASE", the
        row alone saying "does NOT reproduce")."""
        return tuple(lock for lock in self.locks if not lock.removed and _unreproducing(self, lock))

    @property
    def drifting(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD price is the one they record but which pin a changed fact as it was on BASE
        (:attr:`passprice.review.impacts.LockImpact.drifted`): the review passes them, ``check --frozen`` does not until
        they are re-pinned (``lock --update``)."""
        return tuple(lock for lock in self.locks if lock.drifted and not lock.breaks and not lock.stale)

    @property
    def requestioned(self) -> tuple[LockImpact, ...]:
        """The lock files HEAD rewrote to answer another question
        (:attr:`passprice.review.impacts.LockImpact.question`): a kind, serving, stack or name changed under the same
        file. Each fails the review."""
        return tuple(lock for lock in self.locks if lock.question)

    @property
    def loosened(self) -> tuple[LockImpact, ...]:
        """The locks whose floors HEAD loosens or removes."""
        return tuple(lock for lock in self.locks if lock.loosened)

    @property
    def removed(self) -> tuple[LockImpact, ...]:
        """The locks HEAD removes."""
        return tuple(lock for lock in self.reviews if lock.removed)

    @property
    def dropping(self) -> tuple[LockImpact, ...]:
        """The removed locks whose removal drops floors their serving (still registered) was priced under."""
        return tuple(lock for lock in self.reviews if lock.drops_floors)

    @property
    def model_changed(self) -> bool:
        """True when the sides' pricing models (code digests) differ."""
        return self.base_code is not None and self.head_code is not None and (
            self.base_code.model != self.head_code.model
        )

    @property
    def exit_status(self) -> int:
        """2 when a file does not read on HEAD, else 1 when a lock breaks (its serving deleted too), a locked price
        moves unreviewed, a removed lock drops floors its still-registered serving was priced under, or a changed
        fact's quote is NOT FOUND in its stored excerpt (:attr:`quotes_not_found`, :attr:`quotes_lost`) or was not
        looked up, past the review's bound (:attr:`quotes_unchecked`), else 0."""
        if any(f.head_errors for f in self.files) or self.head_unreadable:
            return 2
        if (self.broken or self.stale or self.unsound or self.dropping or self.head_check or self.requestioned
                or self.quotes_not_found or self.quotes_lost or self.quotes_unchecked or self.quotes_mismatched
                or self.runs_mismatched or self.quotes_against_removed or self.provenance_contradicted):
            return 1
        return 0

    def head_error_lines(self) -> list[str]:
        """The error lines of a review that cannot be made (exit 2): each changed file that does not read on HEAD
        (its first problem, the file named once: a problem its reader words from the file's path on,
        ``locks/x.lock.toml: larger than 256 KiB …``, is given from what follows the path), else each of HEAD's files
        that does not read. A lock past its size cap was ``locks/x.lock.toml does not read on HEAD: locks/x.lock.toml:
        larger than …``, its path twice (every file alike)."""
        lines = [f"{f.path} does not read on HEAD: {f.head_errors[0].removeprefix(f'{f.path}: ')}"
                 for f in self.files if f.head_errors]
        return lines or [f"on HEAD: {line}" for line in self.head_unreadable]

    def refusal_reasons(self) -> list[str]:
        """Why the review fails (exit 1), each with what to do: derived facts that no longer follow from their inputs
        (and the locks resting on them), locks the change breaks (a floor breached: restore the fact, or re-lock
        with the floor loosened, which the review then shows; or what a lock locks changed or is deleted), locked
        prices moved without re-locking, locks already out of date on BASE, removed locks that drop floors, and what
        else HEAD fails ``check`` on. Empty when the review passes."""
        reasons = []
        if self.unsound:
            facts = ", ".join(f"{f.name}:{x.path} ({x.kind})" for f, x in self.unsound)
            resting = [lock.name for lock in self.resting_on_unsound]
            on = f"; the prices of {', '.join(resting)} rest on them" if resting else ""
            from passprice.enforce import command_span

            commands = ", ".join(command_span(["passprice", "fact", "recompute", name])
                                 for name in dict.fromkeys(f.name for f, _ in self.unsound if f.kind != "routing"))
            # A routing record is edited by hand (`fact recompute` refuses it: walkthrough 40 was sent there): each
            # fact named with the value its derivation gives.
            by_hand = "; ".join(
                f"{x.path} = {x.expected} in {f.path}" if x.expected is not None else f"{x.path} in {f.path}"
                for f, x in self.unsound if f.kind == "routing")
            todo = "; ".join(part for part in (
                f"recompute them: {commands}" if commands else "",
                f"write by hand what the derivation gives: {by_hand}" if by_hand else "") if part)
            reasons.append(f"derived facts do not follow from their inputs: {facts}{on} ({todo}; "
                           "passprice check names each input that moved)")
        broken = [lock for lock in self.broken if not lock.after.gone]
        # A lock whose floors hold but whose price HEAD refuses is "refused", as its row and the summary say it (a
        # new user read "the change breaks lock r1-qwen7b-h200-llamacpp" beside "1 refused on HEAD":
        # tests/test_walk128.py).
        refused = [lock for lock in broken if lock.why_broken == "refused"]
        broken = [lock for lock in broken if lock.why_broken != "refused"]
        floors = [lock for lock in broken if lock.verdict is not None and not lock.verdict.holds]
        if refused:
            names = ", ".join(
                f"{lock.name} ({lock.after.refusal.get('refusal')})" if lock.after.refusal is not None else lock.name
                for lock in refused)
            reasons.append(f"HEAD refuses the price of lock{'s' if len(refused) > 1 else ''} {names}, its floors "
                           "holding (the row under locks affected says why and what to fix)")
        if broken:
            names = ", ".join(lock.name for lock in broken)
            advice = ""
            if floors:
                from passprice.enforce import relock_command

                commands = "; ".join(
                    relock_command(lock.verdict, lock.serving_name, lock.path) for lock in floors if lock.verdict
                )
                advice = (
                    f" (a fact below a floor: restore it, or re-lock with the floor loosened, {commands}, which the "
                    "review shows as a loosened floor; `--update` alone keeps the floors and refuses)"
                )
            reasons.append(f"the change breaks lock{'s' if len(broken) > 1 else ''} {names}{advice}")
        gone: dict[str, list[str]] = {}
        for lock in self.broken:
            if lock.after.gone:
                gone.setdefault(str(lock.serving_name), []).append(lock.name)
        for name, locking in gone.items():
            many = len(locking) > 1
            reasons.append(f"it deletes serving {name}, which lock{'s' if many else ''} {', '.join(sorted(locking))} "
                           f"lock{'' if many else 's'}")
        below = {lock.name for lock in floors}  # re-locked with a loosened floor, as said above, not --update
        unlocked = [lock for lock in self.stale if lock.unreviewed and lock.name not in below]
        moved = [lock.name for lock in unlocked]
        if moved:
            from passprice.enforce import command_span

            commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", lock.path]) for lock in unlocked)
            reasons.append(
                f"it moves the locked price{'s' if len(moved) > 1 else ''} of {', '.join(moved)} without re-locking "
                f"(review the move, then {commands})"
            )
        # A lock file HEAD edited by hand (its digest recomputed) is not out of date on BASE, whose copy records
        # BASE's price: the summary counts it as not reproducing or pinning what no side holds, and the HEAD check
        # reason below says why (use45: a lock's recorded tokens/s forged 996.1 -> 1,095.7 was refused as "lock
        # r1-qwen7b-h200 already out of date on BASE" on stderr, where BASE's lock reproduced).
        hand = {lock.name for lock in (*self.unreproducing, *self.forging, *self.unrecorded)}
        late = [lock for lock in self.stale if not lock.unreviewed and lock.name not in hand]
        behind = [lock.name for lock in late]
        if behind:
            from passprice.enforce import command_span

            # walkthrough 57: the line named the locks and no way out, where each row said "re-lock it"
            many = len(behind) > 1
            commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", lock.path]) for lock in late)
            reasons.append(f"lock{'s' if many else ''} {', '.join(behind)} already out of date on BASE (BASE's inputs "
                           f"no longer give the price {'their files record' if many else 'its file records'}: "
                           f"re-lock {'each' if many else 'it'}, {commands})")
        for lock in self.dropping:
            reasons.append(f"it removes lock {lock.name}, dropping floors serving {lock.serving_name} is priced under")
        for lock in self.requestioned:
            reasons.append(
                f"it rewrites {lock.path} to answer another question ({'; '.join(lock.question)}): a lock answers "
                "one; restore BASE's file and re-lock it with `passprice lock --update -o LOCK` (which keeps its kind, "
                "serving and stack), or keep it and add the new lock under another name"
            )
        if self.quotes_not_found:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.quotes_not_found)
            cited = ", ".join(dict.fromkeys(c.new.source for _, c in self.quotes_not_found
                                            if c.new is not None and c.new.source))
            audits = ", ".join(f"`passprice audit --source {sid}`" for sid in cited.split(", ") if sid)
            reasons.append(
                f"{self.quotes_line()} ({facts}): the stored excerpt is the registry's record of the words read; "
                "correct the quote to the document's words, or add the lines it was read from to the source's "
                f"stored excerpt and re-pin it{f' ({audits} checks each)' if audits else ''}")
        if self.quotes_mismatched:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.quotes_mismatched)
            reasons.append(f"{self.mismatched_line()} ({facts}): the value and the words it cites disagree; quote the "
                           "words of the document stating the value, or set the value they state")
        if self.provenance_contradicted:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.provenance_contradicted)
            reasons.append(f"{self.contradicted_line()} ({facts}): a new figure or a stronger provenance needs a "
                           "citation that states it so; cite it (source and locator), or keep what the citation "
                           "states")
        if self.quotes_against_removed:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.quotes_against_removed)
            reasons.append(f"{self.against_removed_line()} ({facts}): that excerpt was the registry's record of the "
                           "words read; restore it, or correct the quote or the value to the document's words")
        if self.runs_mismatched:
            reasons.append(f"{self.runs_mismatched_line()} ({', '.join(self.runs_mismatched)}): the value and the "
                           "words it cites disagree; quote the words of the document stating the value, or set the "
                           "value they state")
        if self.quotes_lost:
            lost = self.quotes_lost
            shown = ", ".join(f"{path} (source {sid})" for sid, path, _ in lost[:MAX_SHOWN_QUOTES])
            more = f" and {len(lost) - MAX_SHOWN_QUOTES:,} more" if len(lost) > MAX_SHOWN_QUOTES else ""
            reasons.append(
                f"{_facts_quotes(len(lost))} NOT FOUND in a stored excerpt the change rewrote, found in BASE's "
                f"({shown}{more}): restore the lines they were read from to the excerpt and re-pin it, or correct "
                "the quotes (`passprice audit --source ID` checks each)")
        if self.quotes_unchecked:
            reasons.append(self.unchecked_line())
        beyond = self.check_beyond
        if beyond:
            reasons.append(f"{self.check_line()}; first: {beyond[0]}")
        return reasons

    def unchecked_line(self) -> str:
        """Why the review fails when its quote look-ups ran past their bound: how many quoted spans of how many facts
        were not looked up (:attr:`quote_spans_unchecked`, :attr:`quotes_unchecked`: a changed fact's and a rewritten
        excerpt's citing fact's counted alike), which, and what to do. Raises nothing."""
        from passprice.sources import QUOTES_MOST, SEARCHED_MOST

        facts = self.quotes_unchecked
        spans = self.quote_spans_unchecked
        shown = ", ".join(facts[:MAX_SHOWN_QUOTES]) + (
            f" and {len(facts) - MAX_SHOWN_QUOTES:,} more" if len(facts) > MAX_SHOWN_QUOTES else "")
        runs = len([name for name in facts if name in self.runs_unchecked])
        whose = [_n(len(facts) - runs, "fact")] if len(facts) > runs else []
        whose += [_n(runs, "measured run")] if runs else []
        counted = f"{_n(spans, 'quoted span')} of {' and '.join(whose)}"  # a changed fact's, an excerpt's alike
        return (f"quotes not checked: {counted} ({shown}) not looked up in their stored excerpts, the review's "
                f"look-ups past their bound ({QUOTES_MOST:,} spans, {SEARCHED_MOST // 2**20:,} MiB of stored text; "
                "none is looked up then, whichever file sorts first): a quote not checked may be NOT FOUND; split "
                "the change, or run `passprice audit --source ID` on each source they cite")

    def quotes_line(self) -> str:
        """``1 quote NOT FOUND in its stored text`` (``N quotes NOT FOUND in their stored text``): the summary's
        count of :attr:`quote_spans_not_found`. Raises nothing."""
        n = self.quote_spans_not_found
        return f"{_n(n, 'quote')} NOT FOUND in {'its' if n == 1 else 'their'} stored text"

    def mismatched_line(self) -> str:
        """``1 fact's quotes state another figure than its own`` (``N facts' quotes …``): the summary's count of
        :attr:`quotes_mismatched`. Raises nothing."""
        n = len(self.quotes_mismatched)
        return (f"{n:,} fact's quotes state another figure than its own" if n == 1
                else f"{n:,} facts' quotes state another figure than their own")

    def contradicted_line(self) -> str:
        """``1 fact contradicted by the citation it kept`` (``N facts …``): the summary's count of
        :attr:`provenance_contradicted`. Raises nothing."""
        n = len(self.provenance_contradicted)
        return (f"{n:,} fact contradicted by the citation it kept" if n == 1
                else f"{n:,} facts contradicted by the citations they kept")

    def against_removed_line(self) -> str:
        """``1 fact's quotes NOT FOUND or another figure against the excerpt this change removed`` (``N facts'
        quotes …``): the summary's count of :attr:`quotes_against_removed`. Raises nothing."""
        n = len(self.quotes_against_removed)
        return (f"{n:,} fact's quotes NOT FOUND or another figure against the excerpt this change removed"
                if n == 1 else f"{n:,} facts' quotes NOT FOUND or another figure against the excerpts this change "
                "removed")

    def runs_mismatched_line(self) -> str:
        """``1 measured run's quote states another figure than its tokens/s`` (``N measured runs' quotes …``): the
        summary's count of :attr:`runs_mismatched`. Raises nothing."""
        n = len(self.runs_mismatched)
        return (f"{n:,} measured run's quote states another figure than its tokens/s" if n == 1
                else f"{n:,} measured runs' quotes state another figure than their tokens/s")

    def summary(self) -> str:
        """One line: facts changed (and weakened), locks affected (broken, moved unreviewed, floors loosened),
        locks unaffected, the pricing model, files that do not read."""
        facts = self.fact_changes
        if not (self.files or self.model_changed or self.locks or self.head_check or self.sources or self.unlocked
                or self.code_files or self.duplicates or self.head_warnings or self.install_files or self.spans
                or self.export_rules):
            quiet = "no changes to facts, registry, locks or the pricing model"
            return quiet + (f"; {_n(len(self.unaffected), 'lock')} unaffected" if self.unaffected else "")
        # The facts of a file the change adds (not a rename: that is compared with BASE's file) are counted as added,
        # not as changed (walkthrough 21: an added routing record read "2 facts changed in 1 file").
        new_files = {f.path for f in self.files if f.status == "added" and f.renamed is None}
        parts = []
        # Each kind of record in its own clause (a card's facts are "facts"; session 25: a routing record's changed
        # hot set was counted, with its question, in the card's "2 facts changed in 2 files, 2 to verify").
        for kind, noun in _FACT_KINDS:
            mine = [(f, c) for f, c in facts if (_FACT_KIND_OF.get(f.kind, "card")) == kind]
            if not mine:
                continue
            files = {f.path for f, _ in mine}
            changed_files, added_files = files - new_files, files & new_files
            n_changed = sum(1 for f, _ in mine if f.path in changed_files)
            counts = [f"{_n(n_changed, noun)} changed in {_n(len(changed_files), 'file')}"] if changed_files else []
            if added_files:
                counts.append(f"{_n(len(mine) - n_changed, noun)} added in {_n(len(added_files), 'new file')}")
            weakened = sum(1 for _, c in mine if c.weakened)
            asked = sum(1 for _, c in mine if c.to_verify is not None)
            # one count of the copied citations among them (tests/test_fix166.py)
            copies = sum(1 for _, c in mine if c.copied_from is not None and c.to_verify is not None)
            copied = (f" ({_n(copies, 'copied citation')}: {'it cites' if copies == 1 else 'each cites'} what "
                      "another card's fact cites)") if copies else ""
            # what the facts weaken or ask to verify follows the kind's first count
            # grouped as every count beside them is (999 copies of a card: "16,983 facts added …, 15984 to verify")
            counts[0] += ((f", {weakened:,} weakened" if weakened else "")
                          + (f", {asked:,} to verify {in_source(asked)}{copied}" if asked else ""))
            unmoved = sum(1 for f, _ in self.refit_unmoved if _FACT_KIND_OF.get(f.kind, "card") == kind)
            if unmoved:  # a re-fit's facts written again unmoved: named in their file's line, not counted changed
                counts[0] += f" ({unmoved:,} more re-derived to the same value)"
            parts += counts
        # a file of facts that does not read on a side: its facts were not compared, so "no fact changed" is not
        # known (a stack whose memory.reserved went 512 -> 256 MiB beside a bad route read "no fact changed")
        uncompared = sum(1 for f in self.files if f.holds_facts and not f.compared)
        if uncompared:
            parts.append(f"facts not compared in {_n(uncompared, 'file')} (not reading on a side)")
        parts = parts or ["no fact changed"]
        if self.quote_spans_not_found:  # counted apart from "to verify": it fails the review (exit_status)
            parts.append(self.quotes_line())
        if self.quotes_mismatched:
            parts.append(self.mismatched_line())
        if self.provenance_contradicted:
            parts.append(self.contradicted_line())
        if self.runs_mismatched:
            parts.append(self.runs_mismatched_line())
        if self.quotes_against_removed:
            parts.append(self.against_removed_line())
        if self.quotes_unchecked:  # past the review's bound: it fails the review too
            runs = len([name for name in self.quotes_unchecked if name in self.runs_unchecked])
            unrun = len(self.quotes_unchecked) - runs
            whose = ([_facts_quotes(unrun)] if unrun else []) + (
                [f"{runs:,} measured run's quotes" if runs == 1 else f"{runs:,} measured runs' quotes"] if runs else [])
            parts.append(f"{' and '.join(whose)} not checked (past the review's bound)")
        if self.unsound:
            kinds = sorted({x.kind for _, x in self.unsound}, key=["stale", "mismatch", "broken"].index)
            what = {"stale": "stale", "mismatch": "not following", "broken": "broken"}
            parts.append(f"{_n(len(self.unsound), 'derived fact')} {' or '.join(what[k] for k in kinds)}")
        renamed = [f for f in self.files if f.renamed is not None and f.status == "added"]
        for kind, one, many in (("card", "card", "cards"), ("draft", "drafting method", "drafting methods"),
                                ("routing", "routing record", "routing records"),
                                ("stack", "serving stack", "serving stacks"),
                                ("checkpoint", "checkpoint entry", "checkpoint entries")):
            n = sum(1 for f in renamed if f.kind == kind)
            if n:
                parts.append(f"{n} {one if n == 1 else many} renamed")
        parts += _file_counts([f for f in self.files if not f.holds_facts and f.kind != "lock"
                               and not (f.kind == "checkpoint" and f.renamed is not None)])
        if self.sources:
            under = {lock for s in self.sources for lock in s.locks}
            rest = f" (under {_n(len(under), 'locked price')})" if under else ""
            fresh = sum(s.added for s in self.sources)
            if len(self.sources) > fresh:
                parts.append(f"{_n(len(self.sources) - fresh, 'source')} whose document changed, to verify{rest}")
            if fresh:
                # left48: "1 added source re-cited to, to verify" said of a source what was said of its facts
                parts.append(f"{_n(fresh, 'added source')} that facts now cite, to verify"
                             + (rest if len(self.sources) == fresh else ""))
        if self.runs_recited:
            parts.append(f"{_n(self.runs_recited, 'measured run')} to verify {in_source(self.runs_recited)}")
        if self.entries_edited:
            n = len(self.entries_edited)
            parts.append(f"{n:,} checkpoint {'entry' if n == 1 else 'entries'} edited under the same header sha256, "
                         "to verify")
        if self.widened:
            parts.append(f"{_n(len(self.widened), 'record')} applied to more checkpoints, to verify")
        if self.lookalikes:
            parts.append(f"{_n(len(self.lookalikes), 'new record')} named like another, to verify")
        if self.made_real:
            parts.append(f"{_n(len(self.made_real), 'card')} no longer hypothetical, to verify")
        if self.relabelled:
            parts.append(f"{_n(len(self.relabelled), 'card')} retitled or made hypothetical, to verify")
        if self.title_contradicts:
            parts.append(f"{_n(len(self.title_contradicts), 'card')} titled hypothetical and not marked so, to verify")
        if self.hypothetical:
            parts.append(f"{_n(len(self.hypothetical), 'hypothetical card')} added with published or measured facts, "
                         "to verify")
        if self.relabelled_records:
            parts.append(f"{_n(len(self.relabelled_records), 'record')} retitled or re-noted under a locked price, "
                         "to verify")
        if self.stale_descriptions:
            parts.append(f"{_n(len(self.stale_descriptions), 'record')} re-cited to another row under the old "
                         "description, to verify")
        if self.rerouted:
            parts.append(f"{_n(len(self.rerouted), 'serving stack')} rerouted under a locked price, to verify")
        if self.by_header:
            parts.append(f"{_n(len(self.by_header), 'lock')} held by a look-alike header alone, to verify")
        if self.digests_dropped:
            n = len(self.digests_dropped)
            parts.append(f"{n:,} checkpoint {'entry' if n == 1 else 'entries'} with a header digest dropped or "
                         "rewritten, to verify")
        if self.runs_outside:  # walkthrough 21: a re-fit on a run far from the others read ✅ and nothing else
            parts.append(f"{_n(len(self.runs_outside), 'stack fit')} on a run outside its span, to verify")
        touched = [lock for lock in self.locks if not lock.behind]
        locks = f"{_n(len(touched), 'lock')} affected" if touched else "no lock affected"
        flags = []
        # each lock counted as its row shows it (a lock not judged is not counted as breaking its floors)
        why = [lock.why_broken for lock in self.broken]
        for kind, one, many in (
            ("floors", "breaks its floors", "break their floors"),
            ("not judged", "not judged", "not judged"),
            ("refused", "refused on HEAD", "refused on HEAD"),
            ("checkpoint", "with its checkpoint's content changed", "with their checkpoint's content changed"),
            ("gone", "with its serving deleted", "with their serving deleted"),
        ):
            n = why.count(kind)
            if n:
                flags.append(f"{n} {one if n == 1 else many}")
        unread = [lock for lock in self.locks if lock.head_unread]
        if unread:
            flags.append(f"{len(unread)} {'does' if len(unread) == 1 else 'do'} not read on HEAD")
        forged = self.unreproducing
        if forged:
            flags.append(f"{len(forged)} not reproducing from {'its' if len(forged) == 1 else 'their'} own pinned "
                         "inputs (edited by hand?)")
        by_hand = [lock for lock in self.forging if not lock.added]
        if by_hand:
            flags.append(f"{len(by_hand)} with pins edited by hand")
        # added locks pinning what no side holds (PINS_OF_AN_ADDED_LOCK) are counted within "N added" below: "1 lock
        # affected, 1 added pinning what no side holds, 1 added" read as two locks added where one was
        # (tests/test_fix53w.py)
        added_forging = len(self.forging) - len(by_hand)
        if self.unrecorded:
            flags.append(f"{len(self.unrecorded)} not written by passprice lock")
        # a lock counted above as pinning what no side holds is not counted again as a moved price (slip 55: a lock
        # the change added, then a fact it pins edited, read "1 lock affected, 1 added pinning what no side holds,
        # 1 price moved unreviewed"): its row's review is the pins' (re-lock it)
        stale = [lock for lock in self.stale if lock not in forged and lock not in self.forging]
        moved = [lock for lock in stale if lock.unreviewed]
        if moved:
            flags.append(f"{len(moved)} price{'s' if len(moved) > 1 else ''} moved unreviewed")
        if len(moved) < len(stale) - sum(lock.behind for lock in stale):  # touched by the change, and behind on BASE
            flags.append(f"{len(stale) - len(moved) - sum(lock.behind for lock in stale)} of them out of date "
                         "already on BASE")
        if self.resting_on_unsound:
            n = len(self.resting_on_unsound)
            flags.append(f"{n} rest{'s' if n == 1 else ''} on derived facts that do not follow")
        if self.requestioned:
            flags.append(f"{len(self.requestioned)} asking another question")
        if self.drifting:
            flags.append(f"{len(self.drifting)} to re-pin (lock --update) for check --frozen")
        rewritten = [lock for lock in self.locks if lock.rewritten]
        if rewritten:
            flags.append(f"{len(rewritten)} pinning a fact rewritten to the same quantity (no drift)")
        if self.relocked:
            flags.append(f"{len(self.relocked)} re-locked")
        if self.loosened:
            flags.append(f"{len(self.loosened)} with floors loosened")
        added = [lock for lock in self.locks if lock.added]
        if added:
            of_them = ("" if not added_forging else " (pinning what no side holds)" if len(added) == 1
                       else f" ({added_forging} of them pinning what no side holds)")
            flags.append(f"{len(added)} added{of_them}")
        elif added_forging:  # (a lock added and pinning what no side holds is among those added)
            flags.append(f"{added_forging} added pinning what no side holds")
        if self.removed:
            dropping = f", {len(self.dropping)} dropping floors" if self.dropping else ""
            flags.append(f"{len(self.removed)} removed{dropping}")
        if self.duplicates:
            flags.append(f"{len(self.duplicates)} duplicating another")
        if flags:
            locks += ", " + ", ".join(flags)
        parts.append(locks)
        if self.behind:
            # left51: one count for every lock out of date before this change that it leaves as it was: a price BASE's
            # inputs no longer give (re-lock) or pins BASE's registry no longer holds (re-pin), never "affected"
            late = [lock for lock in self.behind if lock.stale]
            kinds = [f"{len(late)} recording a price BASE's inputs no longer give (re-lock)" if late else "",
                     f"{len(self.behind) - len(late)} pinning facts as BASE no longer holds them (re-pin)"
                     if len(late) < len(self.behind) else ""]
            parts.append(f"{_n(len(self.behind), 'lock')} out of date already on BASE, which this change does not "
                         f"touch: {', '.join(k for k in kinds if k)}")
        if self.check_counted:
            parts.append(self.check_line())
        if self.head_warnings or self.duplicates:
            parts.append(self.head_warnings_count())
        if self.on_changed_sources:
            n = len(self.on_changed_sources)
            parts.append(f"{_n(n, 'lock')} resting on a source whose document changed, to verify")
        if self.on_changed_claims:
            n = len(self.on_changed_claims)
            parts.append(f"{_n(n, 'lock')} priced from a checkpoint entry whose claims changed, to verify")
        if self.on_recited_runs:
            n = len(self.on_recited_runs)
            parts.append(f"{_n(n, 'lock')} priced under a stack fitted from measured runs to verify")
        if self.unaffected:
            parts.append(f"{_n(len(self.unaffected), 'lock')} unaffected")
        if self.unlocked or self.unlocked_left_out:
            from passprice.unlocked import moves_summary

            parts.append(moves_summary(self.unlocked, self.unlocked_left_out))
        if self.model_changed:
            moved = [lock for lock in self.reviews if lock.moved and "pricing model" in lock.inputs]
            parts.append("pricing model changed" + (f", moving {_n(len(moved), 'locked price')}" if moved else ""))
        if self.code_files:
            parts.append(f"passprice's own code changed ({_n(len(self.code_files), 'file')})")
        if self.install_files:
            parts.append(f"how passprice is installed changed ({', '.join(self.install_files)})")
        if self.export_rules:
            parts.append(f"{_n(len(self.export_rules), 'export rule')} of .gitattributes on registry files changed")
        # a lock file said above ("1 does not read on HEAD", among the locks) is not counted again here (a lock past
        # the size cap was named twice: as a lock and as a file)
        said = {lock.path for lock in self.locks if lock.head_unread}
        unread_files = [f for f in self.unreadable if f.path not in said]
        if unread_files:
            parts.append(f"{_n(len(unread_files), 'other file' if said else 'file')} "
                         f"{'does' if len(unread_files) == 1 else 'do'} not read")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The diff for ``--format json``: base, head, summary, exit status, files, locks (affected), unaffected
        lock names, the code each side was priced with. Problem lists are bounded as a review's are: the first
        :data:`MAX_HEAD_PROBLEMS` lines of ``head_check`` and ``head_unreadable``, and of the changed files' errors
        taken together, each with how many more were left out (``head_check_left_out``, ``head_unreadable_left_out``,
        a file's ``errors_left_out``)."""
        errors = self.errors_shown()
        return {
            "base": self.base.to_json(),
            "head": self.head.to_json(),
            "summary": self.summary(),
            "exit_status": self.exit_status,
            "weakened": [f"{f.name}:{c.path}" for f, c in self.weakened],
            "to_verify": [f"{f.name}:{c.path}" for f, c in self.to_verify],
            "contradicted": [f"{f.name}:{c.path}" for f, c in self.provenance_contradicted],
            "sources_changed": [s.to_json() for s in self.sources],
            "broken": [lock.name for lock in self.broken],
            "stale": [lock.name for lock in self.stale],
            "unreproduced": [lock.name for lock in self.unreproducing],
            "forged_pins": [lock.name for lock in self.forging],
            "unrecorded": [lock.name for lock in self.unrecorded],
            "unsound": self.unsound_names(),
            "resting_on_unsound": [lock.name for lock in self.resting_on_unsound],
            "loosened": [lock.name for lock in self.loosened],
            "removed": [lock.name for lock in self.removed],
            "dropping": [lock.name for lock in self.dropping],
            "requestioned": [lock.name for lock in self.requestioned],
            "drifted": [lock.name for lock in self.drifting],
            "head_check": list(self.check_problems[:MAX_HEAD_PROBLEMS]),
            "head_check_left_out": max(0, len(self.check_problems) - MAX_HEAD_PROBLEMS),
            # which of them are the review's own rules, not check's (check_line says so)
            "head_check_review_rules": [p for p in self.check_problems[:MAX_HEAD_PROBLEMS] if p in self.review_rules],
            "quotes_unchecked": list(self.quotes_unchecked),
            "head_unreadable": list(self.head_unreadable[:MAX_HEAD_PROBLEMS]),
            "head_unreadable_left_out": max(0, len(self.head_unreadable) - MAX_HEAD_PROBLEMS),
            "files": [f.to_json(errors.get(f.path)) for f in self.files],
            "locks": [lock.to_json() for lock in self.locks],
            "unaffected": [lock.name for lock in self.unaffected],
            "behind": [lock.name for lock in self.behind],
            "on_changed_sources": [lock.name for lock in self.on_changed_sources],
            "on_changed_claims": [lock.name for lock in self.on_changed_claims],
            "on_recited_runs": [lock.name for lock in self.on_recited_runs],
            "unlocked": [m.to_json() for m in self.unlocked],
            "unlocked_left_out": self.unlocked_left_out,
            "code_changed": list(self.code_files),
            "install_changed": list(self.install_files),
            "export_rules": list(self.export_rules),
            "duplicate_locks": list(self.duplicates),
            "head_warnings": list(self.head_warnings),
            "head_warnings_left_out": self.head_warnings_left_out,
            "added_servings": [a.to_json() for a in self.added_servings],
            "added_records": dict(self.added_records),
            "stack_spans": dict(self.spans),
            "runs_to_verify": dict(self.recited),
            "runs_mismatched": list(self.runs_mismatched),
            "quotes_against_removed": [f"{f.name}:{c.path}" for f, c in self.quotes_against_removed],
            "scopes_widened": dict(self.widened),
            "entries_edited": list(self.entries_edited),
            "digests_dropped": {path: list(found) for path, found in self.digests_dropped.items()},
            "header_pinned_by": {path: list(names) for path, names in self.header_pins.items()},
            "origin_pinned_by": {path: list(names) for path, names in self.origin_pins.items()},
            "source_pinned_by": {path: list(names) for path, names in self.source_pins.items()},
            "lookalike_records": dict(self.lookalikes),
            "held_by_header": self.by_header,
            "made_real": dict(self.made_real),
            "relabelled_cards": dict(self.relabelled),
            "hypothetical_claims": dict(self.hypothetical),
            "cited_sources": dict(self.cited),
            "relabelled_records": dict(self.relabelled_records),
            "stale_descriptions": dict(self.stale_descriptions),
            "rerouted_stacks": dict(self.rerouted),
            "title_contradicts_mark": dict(self.title_contradicts),
            "pricing_model": {
                "base": self.base_code.model if self.base_code else None,
                "head": self.head_code.model if self.head_code else None,
                "changed": self.model_changed,
                "priced_with": [
                    code.describe(label)
                    for code, label in ((self.base_code, "BASE"), (self.head_code, "HEAD"))
                    if code is not None
                ],
            },
        }


#: The kinds of record holding facts, in the order the summary counts them, each with the noun of its facts.
_FACT_KINDS = (("card", "fact"), ("draft", "drafting-method fact"), ("routing", "routing fact"),
               ("stack", "stack fact"))


#: A file kind → the kind its facts are counted under (a file of no kind here counts with the cards' facts).
_FACT_KIND_OF = {kind: kind for kind, _ in _FACT_KINDS}


def _file_counts(files: Sequence[FileChange]) -> list[str]:
    """The summary's count of changed files that hold no facts and are no lock: servings and checkpoint entries by
    what happened to them (``1 serving added``, ``2 checkpoint entries changed``), then every other file (``1 other
    file changed``). A serving and its lock added together read "1 other file changed" (slip round 28)."""
    out = []
    kinds = (("serving", "serving", "servings"), ("checkpoint", "checkpoint entry", "checkpoint entries"))
    for kind, one, many in kinds:
        for status in ("added", "changed", "removed"):
            n = sum(1 for f in files if f.kind == kind and f.status == status)
            if n:
                out.append(f"{n} {one if n == 1 else many} {status}")
    # a source added, described under Sources (walkthrough 21: counted as "1 other file changed"); a source record
    # changed or removed, named under Sources too (leftovers 28: "1 other file changed", the file in no section)
    for status in ("added", "changed", "removed"):
        n = sum(1 for f in files if f.kind == "source" and f.status == status)
        if n:
            out.append(f"{_n(n, 'source')} added" if status == "added" else f"{_n(n, 'source record')} {status}")
    others = [f for f in files if f.kind not in ("serving", "checkpoint", "source")]
    if others:
        out.append(f"{_n(len(others), 'other file')} changed")
    return out


def compare(base: Side, head: Side) -> Diff:
    """The diff of two opened sides: every file that differs, compared, and every lock reviewed. Both sides are read
    as one snapshot (:func:`passprice.snapshot.reading`): a file the comparison reads (each of 2,000 added serving
    files) is read, validated and built once for the comparison, HEAD's review and the locks' prices."""
    from passprice import snapshot

    with snapshot.reading(), _shared_copies():  # the private copies of HEAD removed first, then the snapshot
        return _compare(base, head)


def _own_schemas_unwarned(head: Side, warnings: tuple[str, ...]) -> tuple[str, ...]:
    """``check``'s ``warnings`` on HEAD without those of :func:`passprice.registry.schema_copy_drift` ("schema/…
    differs from this passprice's copy, which it validates against") when HEAD carries its own code whose schemas
    are that ``schema/`` (:func:`passprice.sidecode.schema_folder`): its code validates against them, and prices it
    in its own process where they differ from this passprice's (:func:`passprice.sidecode.schema_changes`), so the
    warning was wrong of it (issue 13). Raises nothing."""
    if not head.code.own or head.code.folder is None:
        return warnings
    from passprice.registry import schema_copy_drift
    from passprice.sidecode import schema_folder

    try:
        if schema_folder(head.code.folder).resolve() != (head.root.path / "schema").resolve():
            return warnings
    except (OSError, RuntimeError):
        return warnings
    drift = set(schema_copy_drift(head.root))
    return tuple(w for w in warnings if w not in drift)


def _compare(base: Side, head: Side) -> Diff:
    from passprice import snapshot

    for side in (base, head):
        # The bytes each side's files were compared by are the bytes its review reads: each file read once, sized
        # and checked as a regular file, not a link (gitread), when the side was opened, not read again from disk
        # for each of 2,000 serving files (and the review sees the very version the comparison saw).
        for rel, data in side.files.items():
            if not isinstance(data, gitread.Unread):  # past its cap, unread: its reader refuses it by its size
                snapshot.file_bytes(side.root.path / rel, _given(data))
    paths = sorted(p for p in {*base.files, *head.files} if base.files.get(p) != head.files.get(p))
    for role, side in (("BASE", base), ("HEAD", head)):
        refuse_unread_locks(role, side, [p for p in paths if p in side.files])
    renames = card_renames(base, head, paths)
    into = {old: new for new, old in renames.items()}
    files = _ask_added(base, head, tuple(compare_file(base, head, p, renames.get(p), into.get(p)) for p in paths))
    files = _fresh_sources(base, head, files)
    from passprice.sources import Lookups

    lookups = Lookups()  # the review's quote look-ups, all of them: its changed facts' and rewritten excerpts'
    files = _quotes_checked(head, files, base, lookups)
    files = _ratio_bases(head, files)
    files = _foreign_files(head, files)
    files = _moved_under_runs(head, files)
    files = measurement_renames(base, head, files)
    files = checkpoint_renames(files)
    from passprice.check import review_files

    review = review_files(head.root, head.document)
    duplicates, untouched = _duplicates(head, paths)
    # check's own order: the registry's warnings, the lock links, the duplicates (those of a pair the change touches
    # under their own heading, Diff.duplicates), the undated sources
    head_warnings = (*_own_schemas_unwarned(head, review.warnings), *_lock_links(head), *untouched)
    if (head_warnings or duplicates) and review.undated:
        from passprice.sources import undated_line

        # check's standing line of the sources retrieved "unknown", listed beside its other warnings so that the
        # count and lines are check's (alone, it is not repeated: every review of the shipped registry would say it),
        # a duplicate listed under its own heading among them (Diff.head_warnings_count)
        head_warnings = (*head_warnings, *filter(None, [undated_line(review.undated)]))
    problems = review.problems + unreproduced(head, [p for p in paths if p in head.files])
    # HEAD's and BASE's facts read with the running code: also when HEAD prices with its own code (a pull request
    # tidying src/passprice re-cited a lock's pinned fact by hand and passed as "re-locked", slip round 28), a pin at
    # a path no side holds among them (slip round 30: it was left to HEAD's code, as a fact its new code might add).
    from passprice.pinforgery import forged_pins

    forged = forged_pins(base.root, head.root, base.files, [p for p in paths if p in head.files])
    problems += forged
    # A lock's pricing model is the digest of the code that priced it: one of no code here, typed by hand (slip 46).
    from passprice.pinforgery import forged_models
    from passprice.pins import pricing_model_digest

    models = forged_models(base.root, head.root, base.files, [p for p in paths if p in head.files],
                           (base.code.model, head.code.model, pricing_model_digest()),
                           base.installs.get("requirements.txt") != head.installs.get("requirements.txt"))
    problems += models
    # Both are the review's own rules: `check` has no sides of a change to hold a pin against, so a lock added and
    # then left behind by a later commit's edit read "HEAD fails passprice check (1 problem)" where check on that
    # commit passed (tests/test_fix53w.py): listed among head_check_review_rules, as README says.
    forged += models
    # A source leads elsewhere when its record changed, or the registry document or stored excerpt it names did (its
    # file unchanged: a new user's finding, an edited sources/excerpts/X.txt changed what audit says, and the review
    # said "no changes", exit 0; tests/test_walk128.py, tests/test_attack121.py).
    ids = [file_kind(p)[1] for p in head.files if file_kind(p)[0] == "source" and p in base.files
           and (base.files[p] != head.files[p] or b"path" in head.files[p] or b"excerpt" in head.files[p])]
    # And a source this change adds that a fact of BASE is re-cited to: the fact's line asks it, and the locks resting
    # on the fact rest on the new document (session 38, walk53: `sources_changed` never named it).
    recited_to = sorted({s for f in files for c in f.facts if c.old is not None for s in c.fresh_sources})
    head_locks = ([(rel, lock) for rel, lock in _locks(head).items() if lock is not None] if ids or recited_to
                  else [])
    sources = source_changes(base.root, head.root, ids, (base.document, head.document), head_locks, recited_to,
                             lookups)
    from passprice.unlocked import unlocked_moves

    lists = _side_lists(base, head)
    listed, walk_unread = _list_changes(base, head, lists)
    # A lock passprice lock wrote into locks/ is among the records of HEAD's list; one edited by hand is not (slip 58).
    problems += _unrecorded_locks(head, [p for p in paths if p in head.files], lists)
    # what of the branch's locks/ the list's walk could not read, past a cap: a problem of HEAD's that is a file that
    # does not read (exit 2), the rest of the report kept (tests/test_bigread173.py; it was swallowed)
    problems += walk_unread
    rules = [*listed.failing, *unkept_changes(base, head)]
    problems += synthetic_made_real(base, head, files) + tuple(rules)
    reviews = lock_impacts(base, head, files)
    moves, left_out = unlocked_moves(base, head, files, reviews)
    from passprice.addedservings import added_servings
    from passprice.sidecode import code_changes

    # An added file's runs are asked as runs added to an edited file are (slip round 34: a new file's run under a
    # locator quoting another run's figure was only priced, "1 other file changed", nothing to verify).
    read_runs: dict[Path, tuple[Run, ...] | None] = {}  # each measurement file read once for all files' asks
    asked_stacks: set[str] = set()
    noted: dict[str, list[str]] = {}  # runs whose note changed, by file: listed, not asked (slip round 47)
    runs_mismatched: list[str] = []  # runs whose found quote states another figure: each fails the review
    runs_unchecked: dict[str, int] = {}  # runs whose quote was past the review's bound: each fails the review
    # the runs' quote look-ups spend what the facts' and excerpts' left of the review's one bound (``lookups``),
    # however many measurement files it changes (it was a fresh bound a file)
    recited = {f.path: asks for f in files if f.status in ("changed", "added") and f.kind == "other"
               and _is_measurement(f.path)
               and (asks := runs_to_verify(base, head, f.path, read_runs, asked_stacks, noted.setdefault(f.path, []),
                                           runs_mismatched, lookups, runs_unchecked))}
    # HEAD's locks made under a stack fitted from a run to verify: to verify themselves (slip round 46)
    recited_locks = tuple(lock.name for lock in _locks(head).values()
                          if lock is not None and lock.stack is not None and lock.stack.name in asked_stacks) \
        if asked_stacks else ()

    widened = {**scopes_widened(base, head, files), **scopes_copied(base, head, files)}
    lookalikes = lookalike_records(base, head, files)
    for f in files:  # a measurement file's [source] table rewritten (slip 53: it read "(changed)" alone)
        if f.status == "changed" and f.kind == "other" and _is_measurement(f.path):
            noted.setdefault(f.path, []).extend(source_table_changes(base, head, f.path))
    records = added_records(head, files, recited, {p: lines for p, lines in noted.items() if lines})
    for f in files:
        if f.kind == "other" and f.status == "added" and f.renamed is not None:
            said = renamed_runs(head, f.renamed, f.path)
            records[f.path] = f"{said}; {records[f.path]}" if f.path in records else said
    return Diff(base.info, head.info, files, reviews, base.code, head.code,
                _unrooted(head, problems),
                # HEAD's module past the cap, unread: a file that does not read on HEAD (tests/test_blobcap162.py)
                _unrooted(head, review.unreadable) + ((head.code.oversized,) if head.code.oversized else ())
                + walk_unread,
                sources, moves, left_out,
                code_changes(base.code, head.code) + listed.named, duplicates,
                _unrooted(head, head_warnings[:MAX_HEAD_WARNINGS]), max(0, len(head_warnings) - MAX_HEAD_WARNINGS),
                added_servings(head, files, reviews),
                tuple(p for p in dict.fromkeys([*INSTALL_FILES, *sorted({*base.installs, *head.installs})])
                      if base.installs.get(p) != head.installs.get(p)),
                records,
                stack_spans(base, head, files),
                {p: len(asks) for p, asks in recited.items()}, widened, lookalikes, made_real(base, head, files),
                relabelled_cards(base, head, files), hypothetical_claims(head, files),
                cited_sources(head, files, {s.id for s in sources}),
                {**relabelled_records(base, head, files), **relabelled_stacks(base, head, files)},
                titles_contradicting(base, head, files), recited_locks=recited_locks,
                runs_mismatched=tuple(runs_mismatched), runs_unchecked=runs_unchecked,
                stale_descriptions=stale_descriptions(base, head, files), rerouted=rerouted_stacks(base, head, files),
                review_rules=frozenset(_unrooted(head, [*rules, *forged])), export_rules=export_lines(base, head))


#: The most of ``check``'s warnings on HEAD a review lists (:attr:`Diff.head_warnings`); the rest are counted, and
#: ``passprice check`` lists every one. As many as check names of the temporary files a killed write left
#: (:data:`passprice.registry.MAX_TEMPORARY_LINES`).
MAX_HEAD_WARNINGS = 20


#: The most problem lines of each kind a review lists (:attr:`Diff.check_shown`: what else ``check`` fails on
#: HEAD; :meth:`Diff.errors_shown`: the errors of changed files that do not read; in JSON ``head_check`` and
#: ``head_unreadable`` too); the rest are counted. 3,000 invalid source records made a 2.4 MB pull-request comment
#: (15,000 problem lines, each listed twice), past GitHub's 65,536 characters (issue 13).
MAX_HEAD_PROBLEMS = 20


def _facts_quotes(n: int) -> str:
    """``1 fact's quotes``, ``N facts' quotes``."""
    return f"{n:,} fact's quotes" if n == 1 else f"{n:,} facts' quotes"


#: The facts a refusal line of the review names when their quotes were lost or not checked (the rest counted).
MAX_SHOWN_QUOTES = 10


#: The most files a pull-request comment lists under "Other files changed" (source records, measurements …; the
#: text review lists each): 300 source records added made a comment of 11 KB of names (GitHub takes 65,536 chars).
MAX_OTHER_FILES = 20


#: The most serving files a pull-request comment lists under "Servings" (each added one described, slip round 28);
#: the rest are counted and the text review lists each: 300 serving files added made a comment of 96 KB, past the
#: 65,536 characters GitHub takes (44 KB of paths alone before they were described).
MAX_SERVING_FILES = 50


#: The most characters of changed facts' citations, notes and derivations a pull-request comment shows below its
#: facts table; the rest are counted and the text review shows each: 207 facts given 3,900-character notes made a
#: comment of 884 KB (857 KB of it these items), past the 65,536 characters GitHub takes (attack round 32).
MAX_FACT_DETAILS = 30_000


#: The most characters of added records' descriptions (:func:`~passprice.review.records.added_records`) a pull-request
#: comment shows, in all and each, and of checkpoint entries' changed claims
#: (:func:`passprice.review.changes.claims_changed`: ``entry.imported_by`` of 1,000,000 ``<`` made a 4 MB comment, exit
#: 0); past them a text is cut (it says how long it is) or left to the text review, which shows each whole. A routing
#: record's own ``note`` (no length bound but the file's 256 KiB) of 200,000 ``<`` made a comment of 801 KB, with 20
#: source records within their schema's bounds (title, publisher and ``read`` of ``@``) 1.18 MB (attack round 34b).
MAX_ADDED_DETAILS = 20_000


MAX_ADDED_DETAIL = 2_000


#: The most rows of a pull-request comment's facts table (every fact weaker or to verify first); the rest are
#: counted and the text review lists each: 100 card files added made a table of 1,200 rows, 85 KB (attack round 32).
MAX_FACT_ROWS = 200


#: The most characters of those rows: 130 card files added under 153-character names made 200 rows of 45 KB, and a
#: comment of 81 KB with the facts' details (attack round 38).
MAX_FACT_TABLE = 20_000


#: The heading the review lists the duplicate locks of a pair the change touches under (the text's; the Markdown's
#: capitalised): ``check`` counts them among its warnings on HEAD (:meth:`Diff.head_warnings_count`).
DUPLICATES_HEADING = "locks duplicating another"


def duplicates_elsewhere(d: Diff) -> str:
    """The line closing the list of ``check``'s warnings on HEAD when some of them, the duplicate locks of a pair the
    change touches, are listed under :data:`DUPLICATES_HEADING` instead: ``and 1 more under locks duplicating
    another``, so the list and the summary's count (:meth:`Diff.head_warnings_count`) agree. Raises nothing."""
    return f"and {_n(len(d.duplicates), 'more warning')} under {DUPLICATES_HEADING}"


def diff(root: Root, base: str | None = None, head: str | None = None) -> Diff:
    """Compare ``base`` with ``head``, each a git revision of the checkout ``root`` lies in, or a folder holding
    ``facts/`` and ``registry/``; ``base`` defaults to the merge base of ``HEAD`` with ``main`` (then
    ``origin/main``, ``master``, ``origin/master``, else ``HEAD``), ``head`` to ``root`` itself (the work tree).

    Raises :class:`InputError` for a folder that is not a passprice root, a revision asked of a folder that is not a
    git checkout (or of the embedded facts), a revision git does not know, or a running package whose list of
    pricing models does not read (:func:`passprice.modelhistory.known_count`, as ``price``, ``check`` and
    ``reproduce`` refuse it: a review that cannot tell an upgrade of the code from a forged lock passes nothing)."""
    from passprice.modelhistory import known_count

    known_count()  # the shipped list unreadable, a folder or damaged: one line naming it, exit 2 (issue 13, left38)
    # Each side's own code is started once and answers every ask of this review; stopped when it returns or raises.
    with conversations(), contextlib.ExitStack() as stack:
        stack.enter_context(gitread.failing_git(root.path))
        checkout: list[Checkout] = []

        def git() -> Checkout:
            if root.embedded:
                from passprice.registry import outside_registry

                raise outside_registry(
                    root, "diff compares revisions of your registry's git checkout (or two folders given: diff A B)"
                )
            if not checkout:
                checkout.append(Checkout.of(root.path))
                stack.enter_context(gitread.one_batch(checkout[0].top))  # one cat-file for every blob of both sides
            return checkout[0]

        def open_side(ref: str | None, default: str | None) -> Side:
            role = "BASE" if default is None else "HEAD"
            if ref is not None and is_folder(ref):
                _not_also_a_revision(ref, root, git)
                folder = Path(ref).resolve()
                if not _is_root(folder):
                    raise InputError(f"{ref}: not a passprice root (it needs facts/ and registry/ folders)")
                info = SideInfo(str(ref), folder=str(folder))
                files = folder_files(folder)
                refuse_lockless(f"{role} {ref}", files)
                return Side(info, Root(folder), files, code_of(gitread.sized_code(code_folder(folder))),
                            installs=_installs(folder))
            if ref is None and default == "work tree":
                if root.embedded:
                    git()  # the embedded facts have no work tree: say so as a revision would
                with contextlib.suppress(InputError):  # a work tree outside git has no index to look in
                    git()
                if checkout:
                    checkout[0].submodules()  # one not checked out is an empty folder: refused by name, not read
                info = SideInfo("work tree", folder=str(root.path))
                files = folder_files(root.path)
                refuse_lockless(f"{role} work tree", files)
                return Side(info, root, files, code_of(gitread.sized_code(code_folder(root.path))),
                            installs=_installs(root.path), checkout=checkout[0] if checkout else None)
            if ref is None:
                sha, label = git().default_base()
            else:
                sha = git().commit(ref)
                label = sha[:12] if sha.startswith(ref.lower()) else f"{ref} ({sha[:12]})"
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="passprice-diff-")))
            stack.enter_context(cache.unkept(tmp))
            stack.enter_context(temporary_root(tmp))

            def judged(read: Mapping[str, bytes]) -> None:
                refuse_lockless(f"{role} {label}", read)
                if opened:  # HEAD, once BASE is open: refused by locks that surely do not read before it is written
                    refuse_unread_before_writing(opened[0], label, tmp, read)

            files = git().materialize(sha, tmp, judge=judged)
            code = {p: d for p, d in git().materialize(sha, tmp, (CODE,)).items() if p.endswith(".py")}
            if code:  # what its build installs beside the code (sidecode.code_changes compares it)
                git().materialize(sha, tmp, BUILD_FILES)
            if default == "work tree":  # HEAD: what the review reads must be what a checkout of it reads
                # the documents and stored excerpts sources name too: audit reads each excerpt a checkout holds, and
                # a rule re-encoding sources/excerpts/cite102-excerpt.txt read "no changes" (tests/test_attack121.py)
                named = sorted(n for n in (_named_by_sources(files) | _excerpts_named(files)) - set(files)
                               if _plain_inside(n))
                rewritten = git().rewrites(sha, [*files, *code, *named], named)
                if rewritten:
                    raise InputError.of(rewritten)
            exported = sorted(n for n in (*files, *(_named_by_sources(files) | _excerpts_named(files)))
                              if n.split("/", 1)[0] in ("facts", "locks", "sources") and _plain_inside(n)
                              ) if default == "work tree" else []
            return Side(SideInfo(label, revision=sha), Root(tmp), files, code_of(code_folder(tmp) if code else None),
                        git().documents(sha, _named_by_sources(files) | _excerpts_named(files)),
                        git().documents(sha, install_names(git(), sha)),
                        checkout=git(), exports=git().exports(sha, exported) if exported else {})

        opened: list[Side] = []  # BASE, once open
        base_side = open_side(base, None)
        opened.append(base_side)
        head_side = open_side(head, "work tree")
        head_side = attrs.evolve(head_side, code=kept_apart(base_side.code, head_side.code))
        return compare(base_side, head_side)


def install_names(checkout: Checkout, commit: str) -> tuple[str, ...]:
    """:data:`INSTALL_FILES` and the paths (from the root) of the entries of :data:`WORKFLOWS` at ``commit``."""
    spec = f"{checkout.prefix}{WORKFLOWS}/"
    try:
        listing = _run_git(checkout.top, ["--literal-pathspecs", "ls-tree", "-z", "--name-only", "--full-tree", commit,
                                          "--", spec])
    except subprocess.CalledProcessError:
        listing = b""
    found = [e[len(checkout.prefix):] for e in os.fsdecode(listing).split("\0") if e.startswith(spec)]
    return tuple(dict.fromkeys([*INSTALL_FILES, *sorted(found)]))


def _installs(folder: Path) -> dict[str, str]:
    """The identity of each of :data:`INSTALL_FILES` and each file of :data:`WORKFLOWS` in ``folder``, as
    :meth:`passprice.review.sides.Checkout.documents` gives a revision's: its bytes' digest (read within the cap on a
    passprice file); ``unread`` for one there that is no regular file within the cap (a link, a FIFO, past the cap), so
    it shows as changed; none when nothing is there."""
    from passprice.sourcechange import document_digest

    out = {}
    try:
        found = sorted(f"{WORKFLOWS}/{name}" for name in os.listdir(folder / WORKFLOWS)
                       if not os.path.isdir(folder / WORKFLOWS / name))  # git lists a folder as no blob
    except OSError:
        found = []
    for rel in dict.fromkeys([*INSTALL_FILES, *found]):
        try:
            out[rel] = document_digest(gitread.read_sized(folder / rel))
        except InputError:
            if os.path.lexists(folder / rel):
                out[rel] = "unread"
    return out


def _not_also_a_revision(ref: str, root: Root, git: Callable[[], Checkout]) -> None:
    """Refuse a name (``main``, ``origin/main``) that is both a folder here and a revision of the checkout, as git
    refuses an ambiguous argument: which side was meant decides what the review shows. A name written as a path
    from here or from the top (``./main``, ``../x``, ``/x/main``) is a folder. ``origin/main`` with a slash was taken
    for a folder whenever one was there: a pull request adding a folder ``origin/main/`` (a copy of its own registry)
    made CI's ``passprice diff origin/$BASE_REF`` compare the pull request with itself, "no fact changed" for any
    change (slip round 28). Raises :class:`InputError`."""
    if root.embedded or os.path.isabs(ref) or ref.split("/")[0] in (".", "..") or ref.split(os.sep)[0] in (".", ".."):
        return
    try:
        sha = git().commit(ref)
    except InputError:
        return  # no revision of that name (or no checkout here): the folder it is
    # The ref the name is, spelled so git reads it alone: a tag named ``registry`` beside the folder was advised as
    # ``heads/registry``, which names nothing (attack round 51); a branch is ``heads/NAME``, a tag ``tags/NAME``.
    full = git().full_name(ref)
    revision = (None if ref.startswith("refs/") else full.removeprefix("refs/") if full is not None and full.startswith(
        ("refs/heads/", "refs/tags/")) else full if full is not None else None)
    spelled = f"{revision} (or the commit id)" if revision is not None else "the commit id"
    raise InputError(
        f"{ref}: names both a folder here and the revision {sha[:12]} of the git checkout; write ./{ref} for the "
        f"folder, or {spelled} for the revision"
    )


#: How :func:`passprice.pinforgery.forged_pins` and :func:`~passprice.pinforgery.forged_models` say a lock file pins
#: what no side of the change holds, or drops what BASE's copy pinned (after ``FILE: KEY: ``).
FORGED_PIN_SAYS = (
    "which neither side of the change holds and BASE's lock did not pin",
    "a fact no side of the change holds",
    "dropped, which BASE's lock pinned",
    "the digest of no code of this review",
)


def _forging(d: Diff, lock: LockImpact) -> bool:
    """Whether ``passprice check`` on HEAD (as the review runs it) fails ``lock``'s file for a pin no side of the
    change holds, or a label BASE's copy pinned and HEAD's dropped (:data:`FORGED_PIN_SAYS`)."""
    return any(line.startswith(f"{lock.path}: ") and any(says in line for says in FORGED_PIN_SAYS)
               for line in d.head_check)


def _unrecorded(d: Diff, lock: LockImpact) -> bool:
    """Whether the review fails HEAD on ``lock``'s file because its ``[lock] digest`` is in no record of HEAD's list
    of pricing models (:func:`passprice.modellist.unrecorded_locks`' line in ``d.head_check``)."""
    from passprice.modellist import UNRECORDED_SAYS

    return any(line.startswith(f"{lock.path}: lock.digest: ") and UNRECORDED_SAYS in line for line in d.head_check)


def _unreproducing(d: Diff, lock: LockImpact) -> bool:
    """Whether ``passprice check`` fails HEAD on ``lock``'s file because it does not reproduce from its own pinned
    inputs (:func:`~passprice.review.headlocks.unreproduced`'s line in ``d.head_check``)."""
    return any(line.startswith(f"{lock.path}: does NOT reproduce") for line in d.head_check)
