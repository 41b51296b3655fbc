"""The review of a change is one value with one verdict: :class:`Diff` holds the two sides, the files that
changed, every lock's impact and every finding HEAD's files raise, and its exit status (:attr:`Diff.exit_status`:
2 bad input brought in by HEAD, 1 a lock unheld or moved without re-locking, a stale derived fact or HEAD failing
``passprice check``, else 0) is the verdict. :func:`compare` is the one place that builds it, from two opened sides;
:func:`diff` opens them (git revisions or folders, :mod:`passprice.review.sides`) and compares.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import cache, gitread, schema
from passprice.derivations import Derivation, Finding
from passprice.errors import InputError, escaped, spelled
from passprice.facts import Fact, Provenance
from passprice.files import is_folder, shell_word
from passprice.locks import Lock, read_lock
from passprice.registry import Root, lock_order, temporary_root
from passprice.review.changes import (
    FactChange,
    FileChange,
    _figure,
    _folded,
    _foreign_files,
    _n,
    _quoted_figures,
    _read,
    card_renames,
    compare_file,
    dropped_digests,
    lookalike_records,
    side_toml,
)
from passprice.review.impacts import (
    _STACK_ROUTES,
    LockImpact,
    _list_changes,
    _locks,
    _shared_copies,
    _side_lists,
    _unrecorded_locks,
    lock_impacts,
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
    import ast

    from passprice.addedservings import AddedServing
    from passprice.measurements import Run
    from passprice.sources import Lookups, QuoteCheck, StoredText
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
    #: Each source record and checkpoint entry HEAD adds, by path: what it is, in one line (:func:`added_records`).
    #: Walkthrough 21: an added source read "Other files changed: `sources/X.toml` (added)" beside a fact's "to
    #: verify" asking about it, and an added checkpoint "content – → 8712effdea2c…", neither saying what it is.
    added_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each changed stack whose fitted runs' measured / limit span moved, by path (:func:`stack_spans`).
    spans: Mapping[str, str] = attrs.field(factory=dict)
    #: How many runs of each measurement file the change edits are to verify in their source, by path
    #: (:func:`runs_to_verify`; each described in :attr:`added_records`). Shown, never failed.
    recited: Mapping[str, int] = attrs.field(factory=dict)
    #: Each routing record or drafting method whose ``checkpoints`` scope the change widens, by path: what to verify
    #: (:func:`scopes_widened`; shown with the file, as :attr:`added_records` describes it). Shown, never failed.
    widened: Mapping[str, str] = attrs.field(factory=dict)
    #: Each record file the change adds whose name reads as another record's of its kind, by path: what to verify,
    #: quoting both files (:func:`passprice.review.changes.lookalike_records`). Shown, never failed.
    lookalikes: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card BASE marks hypothetical and HEAD does not, by path: what to verify (:func:`made_real`). Shown,
    #: never failed.
    made_real: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card retitled or newly marked hypothetical, by path: what to verify, naming HEAD's locks that pin it as it
    #: was (:func:`relabelled_cards`). Shown, never failed.
    relabelled: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds marked hypothetical whose facts claim a published or measured figure, by path: what
    #: to verify (:func:`hypothetical_claims`). Shown, never failed.
    hypothetical: Mapping[str, str] = attrs.field(factory=dict)
    #: Each registered source a fact the change adds or changes cites on HEAD (its own source or a figure input's),
    #: by id: the document, and the changed facts citing it (:func:`cited_sources`). Shown, never failed.
    cited: Mapping[str, str] = attrs.field(factory=dict)
    #: Each routing record or drafting method retitled or re-noted, by path: what to verify, naming HEAD's locks that
    #: price with it (:func:`relabelled_records`). Shown, never failed.
    relabelled_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds, retitles or unmarks whose HEAD title says hypothetical while it is not marked so, by
    #: path: what to verify (:func:`titles_contradicting`). Shown, never failed.
    title_contradicts: Mapping[str, str] = attrs.field(factory=dict)
    #: HEAD's locks made under a serving stack fitted from a measured run to verify (:func:`runs_to_verify`'s
    #: ``stacks``), by name: their expected price rests on the run's figure (slip round 46).
    recited_locks: tuple[str, ...] = ()
    #: ``FILE: ID`` of each run the change adds or changes whose quote, found in HEAD's stored excerpt, states another
    #: figure than its tokens/s (:func:`runs_to_verify`'s ``mismatched``, ``check``'s rule): each fails the review, as
    #: :attr:`quotes_mismatched` does a fact (a run moved 145.55 -> 150.55 under its unchanged llama-bench row read
    #: "1 measured run to verify", exit 0, where ``check`` failed).
    runs_mismatched: tuple[str, ...] = ()
    #: ``FILE: ID`` of each run the change adds or changes whose quote was not looked up, the review's look-ups past
    #: their bound (one :class:`passprice.sources.Lookups` for the whole review, its runs' look-ups after its facts'
    #: and excerpts'), with its spans not looked up: each fails the review, named among :attr:`quotes_unchecked`, as
    #: a fact past the bound does (a run past it was asked, exit 0, and the bound was one a measurement file).
    runs_unchecked: Mapping[str, int] = attrs.field(factory=dict)
    #: Each record re-cited to another table row whose unchanged description (or its source's ``read``) still names
    #: the old row, by path: what to verify (:func:`stale_descriptions`). Shown, never failed.
    stale_descriptions: Mapping[str, str] = attrs.field(factory=dict)
    #: Each serving stack whose route (``integer_matrices``, ``float_matrices``: where its matrix kernels run) the
    #: change moved while a lock of HEAD is made under it, by path: what to verify (:func:`rerouted_stacks`). Shown,
    #: never failed.
    rerouted: Mapping[str, str] = attrs.field(factory=dict)
    #: The lines of :attr:`head_check` that are the review's own rules, not ``passprice check``'s (the list of pricing
    #: models, the commands that write the shipped headers, a lock's pin no side of the change holds, a pricing model
    #: no code of the review gives): :meth:`check_line` names them so (a new user read "HEAD
    #: fails passprice check (162 problems)" of list entries where ``check`` on HEAD found none: tests/test_walk128.py).
    review_rules: frozenset[str] = frozenset()
    #: One line a ``.gitattributes`` ``export-ignore``/``export-subst`` rule HEAD sets on a file of its facts, locks
    #: or sources (records and stored excerpts) that BASE did not set so (:func:`export_lines`): ``git archive`` of
    #: HEAD leaves the file out or rewrites it, so a release packed from it is not the registry reviewed. Named, never
    #: failed (tests/test_left131.py: such a rule read "no changes").
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
        """The locks whose HEAD file does not reproduce from its own pinned inputs (:func:`unreproduced`'s lines of
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


def in_source(count: int) -> str:
    """The review's "to verify" clause for ``count`` facts or runs: ``in its source`` for one, ``in their sources``
    for more (issue 13: the header read "2 to verify in its source"). Raises nothing."""
    return "in its source" if count == 1 else "in their sources"


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


#: What the review says of the export rules it lists (:attr:`Diff.export_rules`).
EXPORT_WARNING = ("a .gitattributes rule makes `git archive` of HEAD leave these files out (export-ignore) or expand "
                  "$Format$ placeholders in them (export-subst): a release packed from HEAD is not the registry this "
                  "review read")


def export_lines(base: Side, head: Side) -> tuple[str, ...]:
    """One line a file of HEAD's facts, locks or sources (records and stored excerpts) on which HEAD's rules set
    ``export-ignore`` or ``export-subst`` (:attr:`passprice.review.sides.Side.exports`, read for a HEAD revision) where
    BASE's do not set the same (BASE's asked of the same files): ``PATH: export-ignore (a rule of .gitattributes at
    COMMIT; not at BASE)``. ``git archive`` then leaves the file out of, or rewrites it in, what it packs, while a
    checkout (what check, price and the review read) is unchanged: named as the review names a rewrite rule, never
    failed. Empty when HEAD is no revision, or sets none. Raises nothing (BASE's rules unread: each HEAD setting
    named)."""
    if not head.exports:
        return ()
    then: Mapping[str, tuple[str, str, str]] = {}
    if base.checkout is not None and base.info.revision is not None:
        with contextlib.suppress(InputError, OSError, subprocess.CalledProcessError):
            then = base.checkout.exports(base.info.revision, list(head.exports))
    out = []
    for path, (attribute, value, source) in sorted(head.exports.items()):
        if then.get(path, ("", "", ""))[:2] == (attribute, value):
            continue
        rule = attribute if value == "set" else f"{attribute}={value}"
        was = then.get(path)
        before = f"BASE's: {was[0] if was[1] == 'set' else f'{was[0]}={was[1]}'}" if was else "not at BASE"
        out.append(f"{path}: {rule} (a rule of {escaped(source)}; {before})")
    return tuple(out)


#: What a checkpoint entry edited under the same header sha256 asks (:attr:`Diff.entries_edited`).
EDITED_ENTRY = ("its content changed but the header sha256 it records did not: one file's header has one content; "
                "re-import the entry from its file (`passprice import`), or say which file holds this content")


def scopes_widened(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose ``checkpoints`` list (its scope,
    :mod:`passprice.scopes`) HEAD widens, by path: what the reviewer must verify, naming the checkpoints added (or
    that the list was removed: any checkpoint) and the facts whose figures now apply to them. Slip round 36: the
    Qwen3-30B-A3B routing record's scope widened to ``deepseek-v3-q4_k_m`` (its 58 of 128 experts measured on
    Qwen3) read "no fact changed; no lock affected", nothing to verify, exit 0. A file that does not read on a side
    is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or "checkpoints" not in f.meta:
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
            after = side_toml(head.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not before:
            continue  # it applied to any checkpoint already
        new = [str(c) for c in after if c not in before]
        if after and not new:
            continue
        got = _read(head, f.path, f.kind, f.name)
        facts = got.facts or {}
        cited = sorted({fact.source for fact in facts.values() if fact.source is not None})
        what = (f"its checkpoints list is gone: it now applies to any checkpoint (was {', '.join(map(str, before))})"
                if not after else
                f"its checkpoints gain {', '.join(new)} (was {', '.join(map(str, before))})")
        out[f.path] = (f"{escaped(what)}: were {', '.join(escaped(p) for p in facts) or 'its figures'} established "
                       f"for {'every model' if not after else 'that model' if len(new) == 1 else 'those models'}? "
                       f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
    return out


#: How a synthetic checkpoint entry's ``entry.origin`` opens (``passprice synth --import`` and the test hybrids write
#: it so): the one words telling a reader the header was built, not read from a published GGUF file.
SYNTHETIC = "Synthetic"


def _checkpoint_document(side: Side, rel: str) -> dict[str, Any]:
    """The checkpoint entry ``rel`` of ``side`` as the review already read it (:func:`passprice.schema.load`, made
    once a snapshot: an added entry was parsed twice cold, once to compare it and once for its origin; leftovers round
    20's one parse), or, for an entry that does not validate, as plain TOML
    (:func:`passprice.review.changes.side_toml`). Raises what :func:`passprice.review.changes.side_toml` raises."""
    try:
        return schema.load(side.root.path / rel, "checkpoint", side.root.schema)
    except InputError:
        return side_toml(side.files[rel], "checkpoint")


def synthetic_made_real(base: Side, head: Side, files: Sequence[FileChange]) -> tuple[str, ...]:
    """One line for each checkpoint entry ``files`` add or change on HEAD whose ``entry.origin`` no longer opens with
    :data:`SYNTHETIC` though its header is a synthetic one: a header passprice knows it built
    (:data:`passprice.unkept.UNKEPT`, by the entry's ``header.sha256``), or the very header (same ``header.sha256``)
    of a BASE entry whose origin said synthetic. Slip 56 (issue 13): the Qwen3-30B-A3B Q4_K_M entry's origin
    rewritten to "… the header of the GGUF downloaded from huggingface.co …" read "claims changed, which the pricer
    does not read", its lock only "to re-pin" (exit 0), and re-pinned in the same pull request it passed: the locked
    price then read as a real checkpoint's. Each fails the review. Never raises (a file that does not read as TOML
    is left to the review's other rules)."""
    from passprice.unkept import UNKEPT

    out: list[str] = []
    for f in files:
        if f.kind != "checkpoint" or f.path not in head.files:
            continue
        try:
            new = _checkpoint_document(head, f.path)
            old = _checkpoint_document(base, f.path) if f.path in base.files else {}
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
            continue
        entry, header = new.get("entry"), new.get("header")
        was_entry, was_header = old.get("entry"), old.get("header")
        if not isinstance(entry, dict) or not isinstance(header, dict):
            continue
        origin, sha = entry.get("origin"), header.get("sha256")
        if not isinstance(origin, str) or not isinstance(sha, str) or origin.startswith(SYNTHETIC):
            continue
        was_synthetic = (isinstance(was_entry, dict) and isinstance(was_header, dict)
                         and str(was_entry.get("origin", "")).startswith(SYNTHETIC) and was_header.get("sha256") == sha)
        if sha in UNKEPT or was_synthetic:
            how = ("a header passprice synth built (passprice's table of shipped synthetic headers)" if sha in UNKEPT
                   else "the header BASE's entry called synthetic")
            out.append(f"{f.path}: entry.origin: no longer opens with {SYNTHETIC!r}, but its header (sha256 "
                       f"{sha[:12]}…) is {how}: a synthetic header's price is no real checkpoint's; restore the "
                       "origin")
    return tuple(out)


@functools.lru_cache(maxsize=2)
def _unkept_tree(source: bytes) -> ast.Module | None:
    """The syntax tree of a side's ``src/passprice/unkept.py`` (``source``), parsed once for :func:`_unkept_table`
    and :func:`_unkept_command`; ``None`` when it does not parse, or is not parsed: past
    :data:`passprice.pins.MODEL_TOKENS` as :func:`passprice.pins._count_tokens` counts it (it is no pricing module,
    so no cap held it: a 4,000,007-byte ``x = [a,a,…]`` took each of the two 8.1 s of CPU and 2.8 GB, left103), or
    declaring a codec whose decoding is quadratic (:func:`passprice.pins.slow_coding`)."""
    import ast

    from passprice.pins import MODEL_TOKENS, _count_tokens, slow_coding

    if slow_coding(source) is not None or _count_tokens(source) > MODEL_TOKENS:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _unkept_table(source: bytes) -> dict[str, tuple[str, str, str]] | None:
    """The table ``UNKEPT`` a ``src/passprice/unkept.py`` (``source``) writes, read from its syntax tree, never run:
    header sha256 → (name, config, mix), each a ``Unkept(…)`` of three string literals; ``None`` when the file does
    not parse or writes the table otherwise, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if not isinstance(target, ast.Name) or target.id != "UNKEPT":
            continue
        value = node.value if isinstance(node, (ast.AnnAssign, ast.Assign)) else None
        if not isinstance(value, ast.Dict):
            return None
        out: dict[str, tuple[str, str, str]] = {}
        for key, call in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name) and call.func.id == "Unkept" and not call.keywords
                    and len(call.args) == 3
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
                return None
            name, config, mix = (a.value for a in call.args)  # type: ignore[attr-defined]
            out[key.value] = (name, config, mix)
        return out
    return None


def _unkept_command(source: bytes) -> str | None:
    """The syntax of what makes ``Unkept.command`` in a ``src/passprice/unkept.py`` (``source``): ``CONFIGS``'
    assignment and the method itself, docstrings left out, as :func:`ast.dump` text; ``None`` when it does not
    parse or has neither, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    parts: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "CONFIGS" in ast.dump(node)[:200]:
            parts.append(ast.dump(node))
        if isinstance(node, ast.ClassDef) and node.name == "Unkept":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "command":
                    body = item.body[1:] if (item.body and isinstance(item.body[0], ast.Expr)
                                             and isinstance(item.body[0].value, ast.Constant)) else item.body
                    parts.append(ast.dump(ast.Module(body=body, type_ignores=[])))
    return "\n".join(parts) if len(parts) == 2 else None


def unkept_changes(base: Side, head: Side) -> tuple[str, ...]:
    """Lines failing HEAD's ``src/passprice/unkept.py`` where it changes what BASE's says of a shipped synthetic
    header: each row of BASE's table ``UNKEPT`` (:data:`passprice.unkept.UNKEPT`) HEAD rewrites or drops, and
    ``Unkept.command`` or ``CONFIGS`` rewritten (:func:`_unkept_command`); one line when HEAD's table does not read as
    literals. Both files are read as syntax, never run. The table is history too: each row says which ``synth``
    command writes those header bytes again, and ``audit``, ``header`` and ``checkpoints`` tell a reader to run it.
    Slip 56 (issue 13): ``command`` rewritten to give ``--mix Q8_0`` for every header read only "passprice's own code
    changed: src/passprice/unkept.py" (exit 0), and once merged passprice sent readers to commands writing other
    bytes. A row HEAD adds is left to ``tests/test_unkept.py`` (it checks the table against the synthesized
    headers). Empty unless both sides bring their own code. Never raises."""
    from passprice.files import read_regular
    from passprice.pins import MODULE_BYTES

    if head.code.folder is None or not head.code.own or base.code.folder is None or not base.code.own:
        return ()

    def source(folder: Path) -> bytes:
        try:
            return read_regular(folder / "unkept.py", MODULE_BYTES) if (folder / "unkept.py").is_file() else b""
        except (OSError, InputError):
            return b""

    was, now = source(base.code.folder), source(head.code.folder)
    if was == now:
        return ()
    rel = f"{CODE}/unkept.py"
    old, table = _unkept_table(was) or {}, _unkept_table(now)
    if _unkept_command(was) != _unkept_command(now):
        return (f"{rel}: Unkept.command (or CONFIGS) rewritten: it gives the command that writes each of the "
                f"{len(old)} shipped synthetic headers again, byte for byte, and passprice tells readers to run it; "
                "restore it",)
    if table is None:
        return (f"{rel}: UNKEPT does not read as a table of Unkept(NAME, CONFIG, MIX) string literals: the review "
                "cannot tell which command it gives for each shipped synthetic header",)
    out = []
    for sha, row in old.items():
        if table.get(sha) == row:
            continue
        said = "dropped" if sha not in table else f"rewritten ({', '.join(row)} → {', '.join(table[sha])})"
        out.append(f"{rel}: UNKEPT: the row of header {sha[:12]}… ({row[0]}) {said}: it gives the command that "
                   "writes those bytes again, and passprice tells readers to run it; restore the row")
    return tuple(out)


def made_real(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides that BASE marks ``hypothetical`` and HEAD does not, by path: what the
    reviewer must verify. Slip round 38: WS1's ``hypothetical = true`` removed read "[card] changed: hypothetical",
    no lock affected, though its locked price then reads as a product's (its figures all assumed) and the lock pins
    ``hypothetical = true``."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or "hypothetical" not in f.meta:
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {}).get("hypothetical", False)
            after = side_toml(head.files[f.path], "card").get("card", {}).get("hypothetical", False)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if before is True and after is not True:
            got = _read(head, f.path, f.kind, f.name)
            assumed = sum(1 for fact in (got.facts or {}).values()
                          if fact.provenance in (Provenance.ASSUMED, Provenance.ESTIMATED))
            out[f.path] = (f"card {spelled(f.name)} is no longer marked hypothetical: its prices now read as a real "
                           f"card's, {assumed} of its facts estimated or assumed; is it a product, and does each "
                           "figure now cite that product's documents?")
    return out


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


#: The provenances a card that does not exist cannot have of its own (:func:`hypothetical_claims`).
_PRODUCT_PROVENANCES = (Provenance.PUBLISHED, Provenance.MEASURED)


def _card_table(side: Side, path: str) -> dict[str, Any] | None:
    """The ``[card]`` table of the file ``path`` of ``side`` as ``tomllib`` reads the whole file, or ``None`` when
    there is no such file, it does not decode or parse, or its ``card`` is no table. Parsed once a snapshot for its
    bytes (:func:`titles_contradicting` and :func:`hypothetical_claims` each parsed every added card: 999 added cards,
    2 parses each, a fifth of the review, session 32). Raises nothing."""
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


def titles_contradicting(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` add or change whose HEAD title says hypothetical (:func:`passprice.cards.says_hypothetical`)
    while HEAD does not mark it ``hypothetical = true``, and BASE did not hold that same contradiction, by path: what
    the reviewer must verify. Left26b: ``RTX 4090 (Hypothetical)`` unmarked is priced, locked and reviewed as a real
    card (no question of its published figures, :func:`hypothetical_claims`) while every table's title calls it
    made up. A file that does not parse on HEAD is left to the review's errors."""
    from passprice.cards import says_hypothetical

    def contradiction(side: Side, path: str) -> str | None:
        card = _card_table(side, path)
        if card is None:
            return None
        title = card.get("name")
        if not isinstance(title, str) or card.get("hypothetical", False) is True or not says_hypothetical(title):
            return None
        return title

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status not in ("added", "changed"):
            continue
        title = contradiction(head, f.path)
        if title is None or (f.status == "changed" and contradiction(base, f.path) == title):
            continue
        out[f.path] = (f"card {spelled(f.name)}'s title {escaped(repr(title))} says hypothetical, but it is not marked "
                       "hypothetical = true: its prices read and lock as a real card's under a title that says it is "
                       "made up; mark it hypothetical, or retitle it")
    return out


def hypothetical_claims(head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` adds that HEAD marks ``hypothetical`` and of whose facts one or more is ``published`` or
    ``measured``, by path: what the reviewer must verify, naming the first five such facts. A card that does not
    exist has no datasheet or benchmark of its own, so such a figure is another card's, borrowed under its
    provenance. Walkthrough 30: a hypothetical card copied from the H100's file (its 80 GB ``published``, its stream
    shares ``measured`` on the H100) read "17 facts added in 1 new file", nothing to verify, and its prices read
    ``published``/``measured`` beside real cards'. A card that does not read is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "added" or not f.compared:
            continue
        card = _card_table(head, f.path)
        if card is None or card.get("hypothetical", False) is not True:
            continue
        strong = [path for path, fact in (_read(head, f.path, f.kind, f.name).facts or {}).items()
                  if fact.provenance in _PRODUCT_PROVENANCES]
        if not strong:
            continue
        named = ", ".join(strong[:5]) + (f" and {len(strong) - 5:,} more" if len(strong) > 5 else "")
        out[f.path] = (f"card {spelled(f.name)} is marked hypothetical, yet {len(strong):,} of its facts are "
                       f"published or measured ({named}): a card that does not exist has no datasheet or benchmark "
                       "of its own; is each figure another card's, to be cited as estimated or assumed?")
    return out


def _pinning(side: Side, card: str) -> list[str]:
    """The names of the lock files of ``side`` (``locks/NAME.lock.toml``) whose ``[card]`` pins the card ``card``,
    by name (:func:`~passprice.registry.lock_order`, as every listing of locks); a lock file that does not read is
    left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            pinned = side_toml(side.files[rel], "lock").get("card", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(pinned, dict) and pinned.get("name") == card:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


def _pins_record(side: Side, lock: str, kind: str, today: tuple[str, Any] | None) -> bool:
    """Whether ``side``'s lock file ``locks/LOCK.lock.toml`` pins its routing record's (``kind`` ``routing``) or
    drafting method's (``draft``) title and note (a ``[routing]``/``[draft]`` table, slip round 44) otherwise than
    ``today`` (the record's title and note on that side): ``check --frozen`` fails it until re-pinned. With ``today``
    ``None``: whether it pins them at all (a lock written before slip round 44 pins neither). Raises nothing."""
    try:
        table = side_toml(side.files[f"locks/{lock}.lock.toml"], "lock").get(kind)
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(table, dict) and (today is None or (table.get("title"), table.get("note")) != today)


def _pricing_with(side: Side, kind: str, name: str) -> list[str]:
    """The names of the lock files of ``side`` whose ``[serving]`` prices with the routing record (``kind``
    ``routing``) or drafting method (``draft``) ``name``, by name (:func:`~passprice.registry.lock_order`); a lock
    file that does not read is left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            serving = side_toml(side.files[rel], "lock").get("serving", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if not isinstance(serving, dict):
            continue
        draft = serving.get("draft")
        used = serving.get("routing") if kind == "routing" else draft.get("method") if isinstance(draft, dict) else None
        if used == name:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


def _locators(fact: Fact | None) -> list[str]:
    """``fact``'s locator and each of its derivation's inputs' (``[]`` for ``None``)."""
    from passprice.derivations import Derivation

    if fact is None:
        return []
    out = [fact.locator] if fact.locator else []
    if isinstance(fact.derivation, Derivation):
        out += [i.locator for i in fact.derivation.inputs if i.locator]
    return out


def stale_descriptions(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each record ``files`` change whose facts were re-cited from one table row to another (their locators' ``row
    'LABEL'``, :mod:`passprice.rowcite`) while a description was left as it was, by path: what to verify. A
    description is a string of the record's own table (``[routing]``'s ``name`` and ``note`` …) the change left
    unchanged that holds words of the row no longer cited and none of the row cited now, or quotes the old row; and
    the ``read`` line of a source the re-cited facts cite on HEAD that quotes the old row. Walkthrough 49: the
    Qwen3-30B-A3B routing record re-cited from row 'narrow (single-domain Python)' to row 'diverse (prose, code,
    math)' kept its title "measured skew (single-domain Python, ~8k tokens)" and its source's ``read`` the narrow row,
    and the review, which flags a derived fact left stale, said nothing. Shown, never failed. A file or source that
    does not read is left to the review's errors."""
    from passprice.rowcite import old_row_words, rows
    from passprice.sources import cited_ids, load_source

    out: dict[str, str] = {}
    for f in files:
        if not f.holds_facts or f.status != "changed" or not f.compared or f.path not in base.files:
            continue
        was = rows(loc for c in f.facts for loc in _locators(c.old))
        now = rows(loc for c in f.facts for loc in _locators(c.new))
        # Sets for the look-ups: a card of 17,524 distinct row labels on each side (256 KiB, 13 inputs a fact) took
        # 10.7 s to compare as tuples (attack66).
        was_set, now_set = set(was), set(now)
        old, new = [r for r in was if r not in now_set], [r for r in now if r not in was_set]
        if not old or not new:
            continue
        old_set = set(old)
        said = []
        try:
            before = side_toml(base.files[f.path], f.kind).get(_table(f.kind), {})
            after = side_toml(head.files[f.path], f.kind).get(_table(f.kind), {})
        except (InputError, KeyError):
            before, after = {}, {}
        for key, text in after.items():
            if not isinstance(text, str) or before.get(key) != text:
                continue
            quoted = [r for r in rows([text]) if r in old_set]
            stale = old_row_words(text, old, new)
            if quoted or stale:
                said.append(f"its {key} still says " + (_rows_named(quoted) if quoted
                                                         else ", ".join(f"'{w}'" for w in stale)))
        ids = dict.fromkeys(sid for c in f.facts if c.new is not None for _, sid in cited_ids(c.path, c.new))
        for sid in ids:
            try:
                read = load_source(head.root, sid).read
            except InputError:
                continue
            quoted = [r for r in rows([read]) if r in old_set]
            if quoted:
                said.append(f"source {sid}'s read still names {_rows_named(quoted)}")
        if said:
            out[f.path] = (f"{'; '.join(said)}, though its facts now cite {_rows_named(new)} in place of "
                           f"{_rows_named(old)}: does each still describe the record? (nothing priced reads it; "
                           "`audit` shows it)")
    return out


def _rows_named(labels: Iterable[str]) -> str:
    """``row 'narrow (single-domain Python)'``, each of ``labels`` so, joined by commas (the first few, the rest
    counted: :func:`passprice.rowcite.named`)."""
    from passprice.rowcite import named

    return named(labels)


def relabelled_records(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose title (``[routing]``/``[method]``
    ``name``) or ``note`` changed while a lock of HEAD prices with it, by path: what the reviewer must verify, naming
    those locks. Neither moves a number (a lock written since slip round 44 pins both, :func:`_pins_record`), yet a
    price prints the routing record's note (``routing note``) and ``audit`` its title and note ("today's record") as
    what the price rests on: slip round 43, the Qwen3-30B-A3B record retitled "measured skew (diverse prose)" and its
    note rewritten read "[routing] changed: name, note; no lock affected", ✅. A file that does not read is left to
    the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or not {"name", "note"} & set(f.meta):
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {})
            after = side_toml(head.files[f.path], f.kind).get(table, {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            renoted = before.get("note") != after.get("note")
            note = after.get("note")
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        locks = _pricing_with(head, f.kind, f.name)
        if not locks or (was == now and not renoted):
            continue
        what = "routing record" if f.kind == "routing" else "drafting method"
        asks = []
        if was != now:
            asks.append(f"{what} {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}")
        if renoted:
            asks.append(f"{what} {spelled(f.name)}'s note changed")
        pins = [n for n in locks if _pins_record(head, n, f.kind, (now, note))]
        # Walkthrough 46: a lock re-locked with the change pins the record as it is now, and read "no lock pins it".
        current = [n for n in locks if n not in pins and _pins_record(head, n, f.kind, None)]
        said = []
        if pins:
            said.append(f"{', '.join(spelled(n) for n in pins)} pin{'s' if len(pins) == 1 else ''} it as before the "
                        "change: re-pin (passprice lock --update)")
        if current:
            said.append(f"{', '.join(spelled(n) for n in current)} pin{'s' if len(current) == 1 else ''} it as "
                        "changed, re-locked with it")
        pinned = "; ".join(said) or "no lock pins it"
        out[f.path] = (f"{'; '.join(asks)}: does it still describe what the locked prices rest on ({pinned}; "
                       f"{'a price prints the note, ' if f.kind == 'routing' else ''}audit shows it)?; "
                       f"{_n(len(locks), 'lock')} price{'s' if len(locks) == 1 else ''} with it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


#: The keys of a stack file's ``[stack]`` table a lock made under it pins (its ``[stack]`` table: ``title`` for
#: ``name``), in the order they are said.
_STACK_LABELS = (("name", "title"), ("runtime", "runtime"), ("builds", "builds"))


def relabelled_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose title (``[stack] name``), ``runtime`` or ``builds``
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each text old → new
    (:func:`passprice.textchange.text_change`), naming those locks (their ``[stack]`` table pins the three:
    ``check --frozen`` fails on each until re-pinned). None moves a number. Walkthrough 57: the llama.cpp stack
    retitled read "[stack] changed: name" and nothing of what it was or became, where a routing record or drafting
    method retitled (:func:`relabelled_records`) and a card (:func:`relabelled_cards`) say both titles. A file that
    does not read is left to the review's errors; raises nothing."""
    from passprice.textchange import text_change

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not {key for key, _ in _STACK_LABELS} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        locks, pinning = [], []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if not isinstance(table, dict) or table.get("name") != f.name:
                continue
            name = rel.removeprefix("locks/").removesuffix(".lock.toml")
            locks.append(name)
            if any(table.get(pin) is not None and table.get(pin) != after.get(key) for key, pin in _STACK_LABELS):
                pinning.append(name)
        changed = [(pin, before.get(key), after.get(key)) for key, pin in _STACK_LABELS
                   if before.get(key) != after.get(key)]
        if not locks or not changed:
            continue
        said = "; ".join(
            f"its {pin} {text_change(escaped(str(was)), escaped(str(now)))}" if was is not None and now is not None
            else f"its {pin} {escaped(repr(was)) if was is not None else '(none)'} → "
                 f"{escaped(repr(now)) if now is not None else '(none)'}"
            for pin, was, now in changed)
        pinned = (f"{', '.join(spelled(n) for n in pinning)} pin{'s' if len(pinning) == 1 else ''} it as before the "
                  "change: re-pin (passprice lock --update)" if pinning else "no lock pins it as before the change")
        out[f.path] = (f"serving stack {spelled(f.name)} relabelled: {said}: does it still name the runtime and builds "
                       f"its runs measured ({pinned}; audit shows it)?; {_n(len(locks), 'lock')} made under it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


def rerouted_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose route (``integer_matrices``, ``float_matrices``)
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each key old → new, naming
    those locks. The route is a claim about the runtime (llama.cpp's mat-vec kernels run quantised matrices on the
    vector units), not a fact with a citation, so no fact's review asks it. Walkthrough 82: llama.cpp's
    ``integer_matrices`` moved ``vector`` → ``array``, the stack re-fitted and its lock re-locked, read "[stack]
    changed: integer_matrices", the lock "re-locked" with nothing of what the route was or became, exit 0 and nothing
    to verify (expected 237.4 → 237.1 tokens/s). A file that does not read is left to the review's errors; raises
    nothing."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not set(_STACK_ROUTES) & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        changed = [(key, before.get(key), after.get(key)) for key in _STACK_ROUTES if before.get(key) != after.get(key)]
        locks = []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if isinstance(table, dict) and table.get("name") == f.name:
                locks.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
        if not locks or not changed:
            continue
        said = "; ".join(f"its {key} {escaped(repr(was)) if was is not None else '(none)'} → "
                         f"{escaped(repr(now)) if now is not None else '(none)'}" for key, was, now in changed)
        out[f.path] = (f"serving stack {spelled(f.name)} rerouted: {said}: do the runtime and builds its runs measured "
                       "run those matrices there (the route is no cited fact: no source is asked of it)?; "
                       f"{_n(len(locks), 'lock')} made under it: {', '.join(spelled(n) for n in locks)}")
    return out


def relabelled_cards(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides whose title (``[card] name``) changed or that HEAD newly marks
    ``hypothetical``, by path: what the reviewer must verify, with the locks of HEAD that pin the card (their
    ``[card]`` table pins its title and ``hypothetical``: ``check --frozen`` fails on each until it is re-locked).
    Neither moves a number. Slip round 42: the H200 card marked ``hypothetical = true`` and retitled read "[card]
    changed: name, hypothetical", no lock affected, ✅, though four locks pin it as the real H200 under its old
    title. The reverse (no longer hypothetical) is :func:`made_real`'s."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or not {"name", "hypothetical"} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {})
            after = side_toml(head.files[f.path], "card").get("card", {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            hypothetical = before.get("hypothetical", False) is not True and after.get("hypothetical", False) is True
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        asks = []
        if hypothetical:
            asks.append(f"card {spelled(f.name)} is now marked hypothetical: its prices no longer claim a real card; "
                        "is it not the product its figures cite?")
        if was != now:
            asks.append(f"card {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}: is it the "
                        "same card?")
        if not asks:
            continue
        locks = _pinning(head, f.name)
        pinned = (f"{_n(len(locks), 'lock')} pin{'s' if len(locks) == 1 else ''} it as it was: "
                  f"{', '.join(spelled(n) for n in locks)}" if locks else "no lock pins it")
        out[f.path] = "; ".join(asks) + "; " + pinned
    return out


def scopes_copied(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` add whose facts cite a place (source and locator, or a
    derivation input's) that a record of its kind on BASE cites while that record's ``checkpoints`` list lacks one the
    new record applies to (or the new one lists none: any checkpoint), by path: what the reviewer must verify, as
    :func:`scopes_widened` asks of a record changed. Slip round 38: Qwen3-30B-A3B's measured routing record copied as
    ``deepseek-v3-measured.toml`` for ``deepseek-v3-q4_k_m``, its Qwen3 figures and citations kept, read "2 facts
    added", nothing to verify, exit 0."""
    from passprice.addedfacts import _place

    added = [f for f in files if f.kind in ("routing", "draft") and f.status == "added" and not f.head_errors]
    if not added:
        return {}

    def scope(side: Side, rel: str, kind: str) -> list[str] | None:
        try:
            document = side_toml(side.files[rel], kind)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        got = document.get("routing" if kind == "routing" else "method", {})
        listed = got.get("checkpoints") if isinstance(got, dict) else None
        return [str(c) for c in listed] if isinstance(listed, list) else []

    def places(facts: Mapping[str, Fact]) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for path, fact in facts.items():
            own = _place(fact.source, fact.locator)
            if own is not None:
                out.setdefault(own, path)
            if isinstance(fact.derivation, Derivation):
                for i in fact.derivation.inputs:
                    at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
                    if at is not None:
                        out.setdefault(at, path)
        return out

    out: dict[str, str] = {}
    for f in added:
        after = scope(head, f.path, f.kind)
        got = _read(head, f.path, f.kind, f.name)
        if after is None or got.facts is None:
            continue
        mine = places(got.facts)
        for rel in sorted(base.files):
            kind, name = file_kind(rel)
            if kind != f.kind or rel == f.path:
                continue
            before = scope(base, rel, kind)
            if not before or (after and not set(after) - set(before)):
                continue  # it applies to any checkpoint, or to each the new record names
            theirs = _read(base, rel, kind, name)
            shared = sorted({mine[p] for p in places(theirs.facts or {}) if p in mine})
            if not shared:
                continue
            new = [c for c in after if c not in before]
            what = (f"it applies to {'any checkpoint' if not after else ', '.join(new)}, and "
                    f"{', '.join(escaped(p) for p in shared)} cite{'s' if len(shared) == 1 else ''} the places "
                    f"{escaped(rel)} cites for {', '.join(before)}")
            cited = sorted({fact.source for fact in got.facts.values() if fact.source is not None})
            model = "every model" if not after else "that model" if len(new) == 1 else "those models"
            out[f.path] = (f"{escaped(what)}: were they established for {model}? "
                           f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
            break
    return out


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


def _moved_under_runs(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`passprice.review.changes.FactChange.moved_with` set on each stack fact fitted again to the
    same runs (each run's figure as before) whose fit's errors moved: the card, checkpoint and routing records of
    ``files`` whose facts or content moved (a fact's value or unit; a checkpoint entry's content digest) and that one of
    its runs names (HEAD's ``registry/measurements``; a file that does not read names none). Left45: the RTX 4090's
    bandwidth 1008 → 1010 GB/s and llamacpp-cuda-2405 re-fitted read ``overhead.pass 0 µs → 0 µs`` and three more
    unmoved facts as changes, as if its errors were typed by hand (slip 48). Raises nothing."""
    from passprice.derivations import RunDerivation

    moved: dict[tuple[str, str], str] = {}
    for f in files:
        if f.status != "changed":
            continue
        if f.kind in ("card", "routing"):
            paths = [c.path for c in f.facts if {"value", "unit"} & set(c.fields)]
            if paths:
                moved[(f.kind, f.name)] = f"{f.kind} {f.name} ({', '.join(paths)})"
        elif f.kind == "checkpoint" and f.content[0] != f.content[1]:
            moved[("checkpoint", f.name)] = f"checkpoint {f.name} (its content)"

    def refitted(c: FactChange) -> bool:
        return (c.old is not None and c.new is not None and isinstance(c.old.derivation, RunDerivation)
                and isinstance(c.new.derivation, RunDerivation) and c.old.derivation.runs == c.new.derivation.runs
                and c.old.derivation.errors != c.new.derivation.errors)

    if not moved or not any(f.kind == "stack" and any(refitted(c) for c in f.facts) for f in files):
        return files
    from passprice.measurements import load_file

    on: dict[str, list[tuple[str, str]]] = {}  # run id → the records it is priced with
    for path in sorted((head.root.path / "registry" / "measurements").glob("*.toml")):
        try:
            runs = load_file(path, head.root.schema, head.root.sources)
        except InputError:
            continue
        for r in runs:
            on[r.id] = [("card", r.card), ("checkpoint", r.checkpoint)] + ([("routing", r.routing)] if r.routing
                                                                           else [])
    out = []
    for f in files:
        if f.kind == "stack" and any(refitted(c) for c in f.facts):
            facts = []
            for c in f.facts:
                if refitted(c):
                    assert c.new is not None and isinstance(c.new.derivation, RunDerivation)
                    keys = dict.fromkeys(k for r in c.new.derivation.runs for k in on.get(r.run, ()) if k in moved)
                    if keys:
                        c = attrs.evolve(c, moved_with=tuple(moved[k] for k in sorted(keys)))
                facts.append(c)
            f = attrs.evolve(f, facts=tuple(facts))
        out.append(f)
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


def stack_spans(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """For each serving stack ``files`` change on both sides whose fitted runs' measured / limit span moved
    (:func:`passprice.stackreach.ratio_span`), by path, one line: the span on BASE → on HEAD, and the runs HEAD's
    fit adds that lie outside BASE's span, each with its ratio (the first 5). Walkthrough 21: a run added at 0.2461
    × its limit, outside the 0.3425 … 0.8519 the 111 runs measured, moved the fit's shares 1-18 % and the review
    said nothing of it: a run far from the others is the first thing to check in its source. A stack that does not
    read on a side is left to the review's errors."""
    from passprice.stackreach import fitted_runs, ratio_span, run_ratios
    from passprice.stacks import load_stack

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed":
            continue
        try:
            before, after = load_stack(base.root, f.name), load_stack(head.root, f.name)
            lo0, hi0, n0 = ratio_span(base.root, before)
            lo1, hi1, n1 = ratio_span(head.root, after)
            if (lo0, hi0, n0) == (lo1, hi1, n1) or not n0 or not n1:
                continue
            old = {r.id for r in fitted_runs(base.root, before)}
            new = [r for r in fitted_runs(head.root, after) if r.id not in old]
            ratios = run_ratios(head.root, new)
        except InputError:
            continue
        # "its 3 fitted runs measured 0.4643 … 0.5737 × their limit on BASE, its 3 0.4681 … 0.5784 on HEAD" read
        # awkwardly (walkthrough 23): each side's span, then its runs
        line = (f"fitted span: {lo0:.4g} … {hi0:.4g} × their limit measured by its {n0:,} fitted runs on BASE, "
                f"{lo1:.4g} … {hi1:.4g} by its {n1:,} on HEAD")
        outside = [(i, r) for i, r in ratios.items() if not lo0 <= r <= hi0]
        if outside:
            # each with its figure and the citation it rests on: a re-fit's facts cite the calibration record, and
            # the run's own source was named nowhere in the review (walkthrough 37)
            by_id = {r.id: r for r in new}
            named = ", ".join(f"{i} at {r:.4g} × its limit (the limit {1 / r:.3g} × measured{_run_cited(by_id.get(i))})"
                              for i, r in outside[:5])
            more = f" and {len(outside) - 5:,} more" if len(outside) > 5 else ""
            line += (f"; outside BASE's span: {named}{more}: check it in its source before the fit rests on it")
        out[f.path] = line
    return out


#: The most characters of a run's locator :func:`stack_spans` quotes.
RUN_LOCATOR_SHOWN = 160


def _run_cited(run: Run | None) -> str:
    """``; 168.2 tokens/s, cited to SOURCE: LOCATOR`` for a measured run (its locator cut at a word past
    :data:`RUN_LOCATOR_SHOWN` characters, the quote holding the run's figure kept whole: :func:`_cut_keeping`;
    left47: cut at the 160th character, ``row '| llama 8B … |    154.`` lost the figure), ``""`` for none."""
    if run is None:
        return ""
    locator = _cut_keeping(run.locator, RUN_LOCATOR_SHOWN, (run.tokens_per_s,))
    return f"; {run.tokens_per_s:,g} tokens/s, cited to {run.source_id}: {locator}"


#: The most added source records and checkpoint entries a review describes (:func:`added_records`); the rest are
#: listed by path, as any other file.
MAX_ADDED_RECORDS = 20


def added_records(head: Side, files: Sequence[FileChange],
                  recited: Mapping[str, Sequence[str]] | None = None,
                  noted: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """Each source record, routing record, checkpoint entry, card and measurement file ``files`` adds on ``head`` that
    reads there, by path: a card as :func:`added_card` says (its title and hypothetical mark, which its facts' rows
    do not show: walkthrough 30; the first :data:`MAX_ADDED_RECORDS` cards, counted apart), a routing record as
    ``routing record TITLE: E experts, k a token, for CHECKPOINTS; note: …``, a source as ``TITLE (BY, DATE), KIND,
    at WHERE; read: HOW``, a checkpoint entry as ``ARCH, N tensors, B of weights[, E experts, K a token]; origin:
    …`` (the first sentence of its ``origin``), a measurement file as :func:`measurements_added` says; the first
    :data:`MAX_ADDED_RECORDS`. One that does not read is left to the review's errors. A measurement file ``files``
    change is described too when ``recited`` holds runs of it to verify (:func:`runs_to_verify`, by path): ``N
    measured runs to verify in their sources: …`` (:func:`in_source`), and when ``noted`` holds runs of it whose
    ``note`` changed (:func:`runs_to_verify`'s ``noted``, by path): ``N run notes changed (listed: neither the fit
    nor a price reads a note): …`` (slip round 47)."""
    import tomllib

    from passprice.checkpoints import entry_origin, load_checkpoint
    from passprice.sources import load_source
    from passprice.tables import si

    out: dict[str, str] = {}
    recited = recited or {}
    noted = noted or {}
    cards = 0  # added cards are counted apart, so a change adding many leaves its sources described
    for f in files:
        if f.kind == "card" and f.status == "added":
            if cards < MAX_ADDED_RECORDS:
                described_card = added_card(head, f.path, f.name)
                if described_card is not None:
                    out[f.path] = described_card
                    cards += 1
            continue
        if len(out) - cards >= MAX_ADDED_RECORDS:
            break
        if f.status == "added" and f.kind == "other" and _is_measurement(f.path):
            described = measurements_added(head, f.path)
            if described is not None:
                asks = recited.get(f.path, ())
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                out[f.path] = described + (f"; {_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                                           + "; ".join(asks[:MAX_ADDED_RUNS]) + more if asks else "")
            continue
        if f.status == "changed" and f.kind == "other" and (f.path in recited or f.path in noted):
            parts = []
            asks = recited.get(f.path, ())
            if asks:
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                             + "; ".join(asks[:MAX_ADDED_RUNS]) + more)
            notes = [line for line in noted.get(f.path, ()) if not line.startswith("[source] ")]
            if notes:
                more = f"; and {len(notes) - MAX_ADDED_RUNS:,} more" if len(notes) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(notes), 'run note')} changed (listed: neither the fit nor a price reads a "
                             "note): " + "; ".join(notes[:MAX_ADDED_RUNS]) + more)
            # its [source] table's keys rewritten (:func:`source_table_changes`), old → new
            parts += [line for line in noted.get(f.path, ()) if line.startswith("[source] ")]
            out[f.path] = "; ".join(parts)
            continue
        if f.status != "added" or f.kind not in ("source", "checkpoint", "routing"):
            continue
        try:
            if f.kind == "routing":  # its scope and caveat, which its two facts' rows do not show (walkthrough 21)
                from passprice.routing import load_routing
                from passprice.scopes import scope_said

                routing = load_routing(head.root, f.name)
                router = (f"{routing.experts:,} experts, {routing.used:,} a token"
                          if routing.experts is not None and routing.used is not None else "any router")
                scope = scope_said(routing.checkpoints) if routing.checkpoints else "any checkpoint"
                note = f"; note: {routing.note}" if routing.note else ""
                out[f.path] = f"routing record {routing.title}: {router}, for {scope}{note}"
                continue
            if f.kind == "source":
                source = load_source(head.root, f.name)
                read = f"; read: {source.read}" if source.read else ""
                out[f.path] = f"{source.describe()}, {source.kind}, at {source.where()}{read}"
                continue
            header = load_checkpoint(head.root, f.name)
            origin = entry_origin(head.root, head.files[f.path])  # the document load_checkpoint parsed, if it did
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError):
            continue
        from passprice import ggml

        weights = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors if ggml.known(t.type_id))
        arch = header.architecture or "unknown architecture"
        experts = header.meta_int(f"{arch}.expert_count")
        used = header.meta_int(f"{arch}.expert_used_count")
        moe = f", {experts:,} routed experts ({used:,} a token)" if experts and used else ""
        first = origin.split(". ")[0].strip().rstrip(".")
        first = first if len(first) <= 300 else first[:299] + "…"
        out[f.path] = (f"{arch}, {len(header.tensors):,} tensors, {si(weights, 'B')} of weights{moe}"
                       + (f"; origin: {first}" if first else ""))
    return out


def added_card(head: Side, rel: str, name: str) -> str | None:
    """An added card ``rel`` (named ``name``) as the review describes it: ``card TITLE (VENDOR; VARIANT), marked
    hypothetical: N facts: A published, B measured, …`` (the mark only when HEAD's ``[card]`` says
    ``hypothetical = true``; each provenance strongest first, those it has); ``None`` when it does not read on
    HEAD (the review's errors say why)."""
    read = _read(head, rel, "card", name)
    if read.facts is None or read.meta is None:
        return None
    table = read.meta
    title = str(table.get("name") or name)
    about = "; ".join(str(table[k]) for k in ("vendor", "variant") if isinstance(table.get(k), str) and table[k])
    mark = ", marked hypothetical" if table.get("hypothetical") is True else ""
    counts = {p: sum(1 for fact in read.facts.values() if fact.provenance is p) for p in Provenance}
    by = ", ".join(f"{n:,} {p.value}" for p, n in counts.items() if n)
    return (f"card {printable_title(title)}" + (f" ({printable_title(about)})" if about else "") + mark
            + f": {_n(len(read.facts), 'fact')}" + (f": {by}" if by else ""))


def printable_title(text: str) -> str:
    """A card's title, vendor or variant as a review line shows it: as written when every character prints, else
    its ``repr`` (:func:`passprice.tables.printable`), cut to 120 characters."""
    from passprice.tables import printable

    shown = printable(text)
    return shown if len(shown) <= 120 else shown[:119] + "…"


#: The most characters :func:`source_table_changes` shows of either side of a changed ``[source]`` text.
SOURCE_TEXT_SHOWN = 60


def _source_side(text: str, start: int) -> str:
    """One side of a changed text from index ``start`` (``…`` before it when it is past the start), cut past
    :data:`SOURCE_TEXT_SHOWN` characters with ``…``; as ``repr`` quotes it, each character that does not print
    escaped."""
    from passprice.errors import escaped

    shown = text[start:start + SOURCE_TEXT_SHOWN]
    return escaped(f"{'…' if start else ''}{shown!r}{'…' if len(text) > start + SOURCE_TEXT_SHOWN else ''}")


def source_table_changes(base: Side, head: Side, rel: str) -> list[str]:
    """What changed in the ``[source]`` table of the measurement file ``rel`` between BASE and HEAD (both holding it
    and both reading as TOML), one line a key, in key order: ``[source] note: 'Every figure is …' → 'Each figure
    is …'`` — each side from 20 characters before the first character that differs (``…`` before it when that is
    past the start), cut past :data:`SOURCE_TEXT_SHOWN` characters with ``…``; ``[source] KEY added (…)`` /
    ``removed``. Slip 53: a ``[source]`` note rewritten read "registry/measurements/X.toml (changed)" alone in the
    review and the pull-request comment. Raises nothing."""
    import tomllib

    def table(side: Side) -> dict[str, Any] | None:
        data = side.files.get(rel)
        if data is None:
            return None
        try:
            found = side_toml(data, "source").get("source")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        return found if isinstance(found, dict) else None

    was, now = table(base), table(head)
    if was is None or now is None:
        return []
    out = []
    for key in sorted({*was, *now}, key=str):
        old, new = was.get(key), now.get(key)
        if old == new:
            continue
        name = escaped_key(str(key))
        if old is None:
            out.append(f"[source] {name} added ({_source_side(str(new), 0)})")
        elif new is None:
            out.append(f"[source] {name} removed (was {_source_side(str(old), 0)})")
        else:
            a, b = str(old), str(new)
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            start = max(first - 20, 0)
            out.append(f"[source] {name}: {_source_side(a, start)} → {_source_side(b, start)}")
    return out


def escaped_key(key: str) -> str:
    """A TOML key as a review line names it: each character that does not print escaped, past 60 characters cut."""
    from passprice.errors import escaped

    return escaped(key if len(key) <= 60 else key[:59] + "…")


def runs_to_verify(
    base: Side, head: Side, rel: str, read_runs: dict[Path, tuple[Run, ...] | None] | None = None,
    stacks: set[str] | None = None, noted: list[str] | None = None, mismatched: list[str] | None = None,
    left: Lookups | None = None, unchecked: dict[str, int] | None = None,
) -> list[str]:
    """What a reviewer must verify of the runs of the measurement file ``rel`` HEAD holds (BASE too, or the change
    adds it: each of its runs is then added, slip round 34), by run id, one line a question: a run added to it whose
    place does not state its figure (:func:`_added_run_asks`), a run cited anew
    (its source or locator changed: does the new place state its tokens/s?), whose setting (stack, card, checkpoint,
    batch, positions, routing) moved under an unchanged citation (slip round 34), or whose tokens/s moved under an
    unchanged citation (more firmly when the locator quotes the old figure and not the new, as
    :attr:`passprice.review.changes.FactChange.to_verify` asks of a fact). A measured run is a fact a stack is fitted
    from: its locator rewritten to quote another row's 90.02 tokens/s over the run's 100.02, or the file's 17 runs
    re-attributed to another source record, read "1 other file changed", nothing to verify, and ``check`` passed (slip
    round 32). A run under an id BASE does not hold is compared with the run BASE held at its setting (stack, card,
    checkpoint, batch, positions, routing) under an id HEAD does not hold (``ID (was OLD)``), else with a run BASE held
    there in another file under an id no file of HEAD holds (moved and renamed at once: ``ID (was OLD in FILE)``), else
    asked as added to the file. ``read_runs``: the runs of each measurement file already read (``None``: it does not
    read), kept across the calls of one review (a change to 100 measurement files read each other file again for each,
    11,326 reads, 6.7 of a review's 8.1 s, attack round 41). Empty when a side does not read (the review's errors say
    why). ``stacks``, when given, gains the stack of each run asked (and the stack a run's setting moved from): the
    stacks fitted from a run to verify (:attr:`Diff.on_recited_runs`). A run's identity as published, its ``build``,
    ``test`` or ``date`` (:data:`RUN_IDENTITY`), changed is asked as its citation is, beside any other move (``ID's
    build changed (… → …) but its citation did not: does … state N tokens/s for that build?``): the run a stack is
    fitted from is then another run (slip round 47: build, test and date rewritten read "1 other file changed; no lock
    affected", the lock under the stack unaffected). ``noted``, when given, gains a line for each run whose ``note``
    changed (``ID's note changed: old → new``): listed, never asked, since neither the fit nor a price reads it.
    ``mismatched``, when given, gains ``FILE: ID`` of each added or changed run whose quote, found in HEAD's stored
    excerpt, states another figure than its tokens/s (:func:`_run_mismatch`, ``check``'s rule): its line says so
    (``❌ MISMATCH: …``) and the review fails (:attr:`Diff.runs_mismatched`): a run moved 145.55 -> 150.55 under its
    unchanged llama-bench row, its stack re-fitted, failed ``check`` and read "1 measured run to verify" (exit 0). A
    changed run (its tokens/s, setting or citation moved) is priced on HEAD as an added file's is
    (:func:`_priced_runs`): ``984.2 tokens/s, limit 186.7 (0.19 × measured), ABOVE its limit: check it in its
    source``, and its locator read as an added run's is (``its locator quotes 98.42, not 984.2 tokens/s``). Raises
    nothing. ``left``: the review's one bound of quote look-ups (:class:`passprice.sources.Lookups`), spent in
    place by the runs' look-ups (a fresh one when ``None``); ``unchecked``, when given, gains ``FILE: ID`` of each
    run whose quote was past it, with its spans not looked up: its line says so (``❌ its quote was not looked up,
    past the review's bound …``) and the review fails (:attr:`Diff.runs_unchecked`). Raises nothing."""
    from passprice.fits import relative_move
    from passprice.measurements import load_file
    from passprice.tables import count

    known = read_runs if read_runs is not None else {}

    def runs_of(side: Side, path: Path) -> tuple[Run, ...] | None:
        if path not in known:
            try:
                known[path] = tuple(load_file(path, side.root.schema, side.root.sources))
            except InputError:
                known[path] = None
        return known[path]

    held_before = runs_of(base, base.root.path / rel) if rel in base.files else ()
    held_after = runs_of(head, head.root.path / rel)
    if held_before is None or held_after is None:
        return []
    before = {r.id: r for r in held_before}
    after = held_after

    def setting(r: Run) -> tuple[str, str, str, int, int, int, str | None]:
        return r.stack, r.card, r.checkpoint, r.batch, r.first, r.last, r.routing

    # A run whose id is gone on HEAD is the run HEAD holds under a new id at the same setting: renamed runs with
    # their tokens/s doubled, or a run added to the file, read "1 other file changed" and nothing to verify (attack
    # round 38).
    kept = {r.id for r in after}
    renamed: dict[tuple[str, str, str, int, int, int, str | None], list[Run]] = {}
    for r in before.values():
        if r.id not in kept:
            renamed.setdefault(setting(r), []).append(r)
    out: list[str] = []

    texts: dict[str, Any] = {}  # HEAD's stored text of each source a run asked cites, read once
    from passprice.sources import QUOTES_MOST, SEARCHED_MOST, Lookups

    left = Lookups() if left is None else left  # the review's one bound (a file may hold 1,000 runs)
    looked: dict[str, tuple[str, int]] = {}  # each run's look-up, by its key: (its MISMATCH, spans past the bound)
    priced: list[tuple[int, Run]] = []  # (its line's place in out, the changed run): priced on HEAD after the walk

    def ask(run: Run, line: str, was: Run | None = None, read: bool = True) -> None:
        if was is not None and _run_moved(was, run):
            reading = _run_quote_reading(run) if read else ""
            line += f"; {reading}" if reading else ""
            priced.append((len(out), run))
        wrong, past = (_run_mismatch(head, run, texts, left, looked) if was is None or _run_moved(was, run)
                       else ("", 0))
        if past:
            line += (f"; ❌ its quote was not looked up, past the review's bound ({QUOTES_MOST:,} spans, "
                     f"{SEARCHED_MOST // 2**20:,} MiB of stored text, one bound for the whole review): review the "
                     "change in smaller pieces, or read it in its source")
            if unchecked is not None:
                unchecked[f"{rel}: {escaped(run.id)}"] = past
        if wrong:
            line += f"; ❌ MISMATCH: {wrong}: the value and the words it cites disagree"
            if mismatched is not None:
                mismatched.append(f"{rel}: {escaped(run.id)}")
        out.append(line)
        if stacks is not None:
            stacks.update(r.stack for r in (run, was) if r is not None)

    places: dict[tuple[str, str], list[Run]] = {}
    # A run BASE holds in another measurement file, moved here: compared with itself there (slip round 35: a run
    # moved into a new file with its tokens/s 135.07 -> 155.07 and its locator to match, or its positions moved,
    # read "2 other files changed", nothing to verify).
    elsewhere: dict[str, tuple[str, Run]] = {}
    # A run BASE holds in another file under an id no file of HEAD holds, at a setting this file's new run has: the
    # run moved and renamed at once (attack round 41: ...main -> ...main2 moved into a new file, its tokens/s 135.07
    # -> 155.07 and its locator to match, read "2 other files changed", nothing to verify).
    renamed_elsewhere: dict[tuple[str, str, str, int, int, int, str | None], list[tuple[str, Run]]] = {}
    if any(run.id not in before for run in after):
        for other in sorted((base.root.path / "registry" / "measurements").glob("*.toml")):
            if other == base.root.path / rel:
                continue
            for r in runs_of(base, other) or ():
                elsewhere.setdefault(r.id, (f"registry/measurements/{other.name}", r))
        held_on_head: set[str] = set()
        for other in sorted((head.root.path / "registry" / "measurements").glob("*.toml")):
            runs = after if other == head.root.path / rel else runs_of(head, other)
            for held in runs or ():
                held_on_head.add(held.id)
                places.setdefault((held.source_id, " ".join(held.locator.split())), []).append(held)
        for old_id, (moved_from, r) in elsewhere.items():
            if old_id not in held_on_head:
                renamed_elsewhere.setdefault(setting(r), []).append((moved_from, r))
    for run in after:
        was = before.get(run.id)
        figure = f"{count(run.tokens_per_s)} tokens/s"
        identity: list[str] = []
        where = escaped(f"{run.source_id}: {run.locator}")
        name = escaped(run.id)
        if was is None and run.id in elsewhere:
            moved_from, was = elsewhere[run.id]
            name = f"{name} (moved from {escaped(moved_from)})"
        if was is None and not renamed.get(setting(run)) and renamed_elsewhere.get(setting(run)):
            moved_from, was = renamed_elsewhere[setting(run)].pop(0)
            name = f"{name} (was {escaped(was.id)} in {escaped(moved_from)})"
        if was is None:
            alike = renamed.get(setting(run))
            if not alike:
                asks = _added_run_asks(run, places.get((run.source_id, " ".join(run.locator.split())), []))
                # An added run citing a source record the same change adds records nothing the registry held, as a
                # run re-cited to one does (session 24: a new file's runs under a new source read nothing of it).
                fresh = _fresh_source(base, head, run.source_id, figure)
                if fresh:
                    asks.append(fresh)
                if asks or any(_run_mismatch(head, run, texts, left, looked)):
                    ask(run, f"{name} added: " + "; ".join(asks or [f"does {where} state {figure}?"]))
                continue
            was = alike.pop(0)
            name = f"{name} (was {escaped(was.id)})"
        identity = _identity_moves(was, run)
        if noted is not None and was.note != run.note:
            from passprice.textchange import text_change

            noted.append(f"{name}'s note changed: {escaped(text_change(was.note or 'none', run.note or 'none'))}")
        if (was.source_id, was.locator) != (run.source_id, run.locator):
            from passprice.textchange import text_change

            anew = [f"source {escaped(was.source_id)} → {escaped(run.source_id)}"] if (
                was.source_id != run.source_id) else []
            if was.locator != run.locator:
                anew.append(f"locator {escaped(text_change(was.locator, run.locator))}")
            if was.tokens_per_s != run.tokens_per_s:  # the figure's move with numbers (walkthrough 27)
                anew.append(f"tokens/s {count(was.tokens_per_s)} → {count(run.tokens_per_s)} "
                            f"({relative_move(was.tokens_per_s, run.tokens_per_s)})")
            anew += identity
            fresh = ""
            if was.source_id != run.source_id:
                # Re-cited to a record the same change adds (slip round 38): nothing the registry held backs it.
                fresh = _fresh_source(base, head, run.source_id, figure)
                fresh = f"; {fresh}" if fresh else ""
            ask(run, f"{name} cited anew ({', '.join(anew)}): does {where} state {figure}?{fresh}"
                     f"{_run_note_stale(was, run)}", was)
        elif setting(was) != setting(run):
            # Its setting moved under its citation: the figure now prices another pass (slip round 34: a run's
            # positions [256, 512] → [1, 64] read "1 other file changed", nothing to verify).
            moved_to = "; ".join(f"{key} {before} → {after}" for key, before, after in zip(
                ("stack", "card", "checkpoint", "batch", "first position", "last position", "routing"),
                setting(was), setting(run), strict=True) if before != after)
            tokens = "" if was.tokens_per_s == run.tokens_per_s else (
                f"; tokens/s {count(was.tokens_per_s)} → {count(run.tokens_per_s)} "
                f"({relative_move(was.tokens_per_s, run.tokens_per_s)})")
            tokens += "".join(f"; {move}" for move in identity)
            ask(run, f"{name}'s setting moved ({escaped(moved_to)}{tokens}) but its citation did not: does {where} "
                       f"measure {figure} at that setting?{_run_note_stale(was, run)}", was)
        elif was.tokens_per_s != run.tokens_per_s:
            moved = (f"{name}'s tokens/s moved ({count(was.tokens_per_s)} → {figure}, "
                     f"{relative_move(was.tokens_per_s, run.tokens_per_s)}"
                     + "".join(f"; {move}" for move in identity) + ") but its citation did not")
            if _run_quote_held(run.locator, was.tokens_per_s) and not _run_quote_held(run.locator, run.tokens_per_s):
                # the figure that holds the old one, as the locator writes it (100.02 holds a run of 100)
                holding = min(_quoted_span_figures(run.locator, was.tokens_per_s),
                           key=lambda q: abs(q - was.tokens_per_s), default=was.tokens_per_s)
                ask(run, f"{moved}, and the locator quotes {holding:g}: {where}{_run_note_stale(was, run)}",
                    was, read=False)
            else:
                ask(run, f"{moved}: does {where} say {figure}?{_run_note_stale(was, run)}", was)
        elif identity:
            # Another build, test or date under its citation: the figure is another run's (slip round 47).
            moved_keys = [key for key in RUN_IDENTITY if getattr(was, key) != getattr(run, key)]
            keys = (", ".join(moved_keys[:-1]) + " and " if len(moved_keys) > 1 else "") + moved_keys[-1]
            ask(run, f"{name}'s {keys} changed ({'; '.join(identity)}) but its citation did not: does {where} state "
                     f"{figure} for that {keys}?")
    for (at, _), line in zip(priced, _priced_runs(head, [run for _, run in priced]), strict=True):
        if line:
            out[at] = f"{out[at]}; priced on HEAD: {line}"
    return out


def _run_moved(was: Run, run: Run) -> bool:
    """Whether HEAD's ``run`` moved from BASE's ``was`` in what its figure or its quote is: its tokens/s, source,
    locator or setting (stack, card, checkpoint, batch, positions, routing). Raises nothing."""
    return ((was.tokens_per_s, was.source_id, was.locator, was.stack, was.card, was.checkpoint, was.batch, was.first,
             was.last, was.routing)
            != (run.tokens_per_s, run.source_id, run.locator, run.stack, run.card, run.checkpoint, run.batch,
                run.first, run.last, run.routing))


def _run_quote_reading(run: Run) -> str:
    """``its locator quotes 98.42, not 984.2 tokens/s`` when a changed run's locator does not quote its tokens/s (as
    :func:`_added_run_asks` reads an added run's: a run edited 98.42 -> 984.2 with its stack moved read only its move,
    where the same run added read what its locator quotes), ``its locator quotes no figure`` when it quotes none,
    else ``""``. Raises nothing."""
    from passprice.tables import count

    if _run_quote_held(run.locator, run.tokens_per_s):
        return ""
    shown = _quoted_span_figures(run.locator, run.tokens_per_s)
    return (f"its locator quotes {', '.join(f'{q:g}' for q in shown[:5])}, not {count(run.tokens_per_s)} tokens/s"
            if shown else "its locator quotes no figure")


def _run_mismatch(head: Side, run: Run, texts: dict[str, Any], left: Lookups | None = None,
                  looked: dict[str, tuple[str, int]] | None = None) -> tuple[str, int]:
    """What the quote of ``run`` (HEAD's) states that its tokens/s is not, its quote found in HEAD's stored excerpt
    of its source: ``check``'s rule, the run made a fact as :func:`passprice.lineage._run_facts` makes it (unit
    :data:`passprice.sources.RUN_UNIT`) and looked up by :func:`passprice.sources.quote_check` (state ``MISMATCH``,
    :func:`passprice.sources.figures_quoted`), escaped, with how many of its spans were past ``left``; ``""`` when its
    quote states it, is not found, or its source has no usable stored text. ``texts`` keeps each source's stored text
    (``None``: none) across the calls of one walk; ``left`` is the review's one bound of look-ups
    (:class:`passprice.sources.Lookups`), spent in place: a run past it is said so on its line (``its quote was not
    looked up, past the review's bound …``) and fails the review, as a fact past it does. ``looked`` keeps each
    run's answer by its key: an added run looked up twice (asked, then its line) spends the bound once. Raises
    nothing."""
    from passprice.facts import Fact, Provenance
    from passprice.sources import MISMATCH, RUN_UNIT, load_source, quote_check, stored_text

    if not run.locator or not run.source_id:
        return "", 0
    looked = {} if looked is None else looked
    if run.key in looked:
        return looked[run.key]
    if run.source_id not in texts:
        try:
            texts[run.source_id] = stored_text(head.root, load_source(head.root, run.source_id))
        except InputError:
            texts[run.source_id] = None
    stored = texts[run.source_id]
    if stored is None:
        return "", 0
    fact = Fact(value=run.tokens_per_s, amount=run.tokens_per_s, unit=RUN_UNIT, provenance=Provenance.MEASURED,
                source=run.source_id, locator=run.locator)
    quote = quote_check("tokens_per_s", fact, {run.source_id: stored}, left)
    looked[run.key] = (escaped("; ".join(quote.mismatch)) if quote.state == MISMATCH else "", quote.past)
    return looked[run.key]


def _priced_runs(head: Side, runs: Sequence[Run]) -> list[str]:
    """Each of ``runs`` (HEAD's, changed) priced on HEAD as :func:`measurements_added` prices an added file's runs:
    ``984.2 tokens/s, limit 186.7 (0.19 × measured), ABOVE its limit: check it in its source``; ``""`` for a run not
    priced (its stack's or card's refusal is the review's or ``validate``'s to say) and past the first
    :data:`MAX_ADDED_RUNS`. Raises nothing."""
    from passprice.tables import count
    from passprice.validate import validate

    out = [""] * len(runs)
    if not runs:
        return out
    try:
        rows = validate(head.root, runs=list(runs[:MAX_ADDED_RUNS])).rows
    except InputError:
        return out
    by_key = {row.run.key: row for row in rows}
    for i, run in enumerate(runs[:MAX_ADDED_RUNS]):
        row = by_key.get(run.key)
        if row is None or row.limit is None:
            continue
        flag = ", ABOVE its limit: check it in its source" if row.above_limit else ""
        out[i] = (f"{count(run.tokens_per_s)} tokens/s, limit {count(round(row.limit, 1))} "
                  f"({row.limit / run.tokens_per_s:.3g} × measured){flag}")
    return out


def _run_note_stale(was: Run, run: Run) -> str:
    """``; its note still states 100.02, the tokens/s it replaces: is the note this figure's?`` for a run whose
    tokens/s moved under a note left as it was that states the old figure and not the new one (as a fact's note is
    asked, :attr:`passprice.review.changes.FactChange.to_verify`): a corrected run 100.02 -> 110.02 tokens/s kept its
    note's "0.9 % of the 1.28 s a round took (1 x 128 / 100.02)", asked nothing of it (tests/test_fix179.py); ``""``
    otherwise. The note's figures are read as a locator's are (:func:`passprice.review.changes._quoted_figures`: bare
    numbers too, none of a name or setting). Raises nothing."""
    if was.tokens_per_s == run.tokens_per_s or was.note != run.note or not run.note:
        return ""
    figures = _quoted_figures(run.note)
    if _figure(was.tokens_per_s) not in figures or _figure(run.tokens_per_s) in figures:
        return ""
    return (f"; its note still states {was.tokens_per_s:g}, the tokens/s it replaces: is the note this "
            "figure's?")


#: A measured run's identity as published (:class:`passprice.measurements.Run`): the build that ran it, the test it
#: ran and the day. A stack is fitted from the run they name, so a change of one is asked in its source
#: (:func:`runs_to_verify`); its ``note`` is listed only.
RUN_IDENTITY = ("build", "test", "date")


def _identity_moves(was: Run, run: Run) -> list[str]:
    """Each of :data:`RUN_IDENTITY` that differs between BASE's run ``was`` and HEAD's ``run``: ``build e8496488
    (2843) → deadbeef (2999)`` (``none`` for a key a side does not state; long texts as
    :func:`passprice.textchange.text_change` shows them), escaped. Empty when none differs. Raises nothing."""
    from passprice.textchange import text_change

    return [f"{key} {escaped(text_change(getattr(was, key) or 'none', getattr(run, key) or 'none'))}"
            for key in RUN_IDENTITY if getattr(was, key) != getattr(run, key)]


def _quoted_span_figures(locator: str, tokens_per_s: float) -> list[float]:
    """The figures ``locator`` (a run's) states as ``check`` reads a run's quote
    (:func:`passprice.sources.run_quote_figures`: those in tokens per second, else the means printed with their
    spread, else every number; of the spans between single quotes, :func:`passprice.sources.quoted_spans`: a number
    outside them, ``llama2-7b table, row '…'``'s 7, is a name, not a figure the document states), in the order a
    reviewer reads them: rates smaller first (a ``./main`` line quotes ms per token before them, left41), else the
    others nearest the run's ``tokens_per_s`` first (by ratio; ties smaller first), so a row's own throughput heads
    the list (LMDeploy's row ``| 1 | 1 | 1 | 128 | 100.02 | 76.55 | 0.011 | …`` for a run of 100 tokens/s reads
    ``100.02, 128, 76.55, 1, 0.011``: cite67); a locator that quotes nothing (no quote for ``check`` to hold) is read
    whole by :func:`passprice.review.changes._quoted_figures` (``Table 3`` a place, not a figure). Empty when it
    states no figure. The first 10,000 characters are read. Raises nothing."""
    import math

    from passprice.sources import quoted_spans, run_quote_figures

    figures, kind = run_quote_figures(quoted_spans(locator) or [locator[:10_000]])
    values = {_figure(value) for _, value in figures}
    if not quoted_spans(locator) and kind != "rates":
        # no quote for check to hold: the locator read whole, its places (``Table 3``) and settings no figures
        kind, values = "numbers", _quoted_figures(locator)
    own = tokens_per_s if tokens_per_s > 0 and math.isfinite(tokens_per_s) else 1.0

    def distance(x: float) -> tuple[float, float]:
        return (abs(math.log(x / own)) if x > 0 else math.inf, x)

    return sorted(values) if kind == "rates" else sorted(values, key=distance)


def _run_quote_held(locator: str, tokens_per_s: float) -> bool:
    """Whether a run's ``locator`` states its ``tokens_per_s`` as ``check`` reads it
    (:func:`passprice.sources.run_quote_figures`, :func:`passprice.sources.run_figure_held`: rounded as the run
    writes it); a locator quoting nothing read whole (:func:`_quoted_span_figures`). Raises nothing."""
    from passprice.sources import quoted_spans, run_figure_held, run_quote_figures

    figures, kind = run_quote_figures(quoted_spans(locator) or [locator[:10_000]])
    if not quoted_spans(locator) and kind != "rates":  # read whole, as :func:`_quoted_span_figures` reads it
        return _figure(tokens_per_s) in _quoted_figures(locator)
    return run_figure_held(tokens_per_s, figures)


def _fresh_source(base: Side, head: Side, source: str, figure: str) -> str:
    """``its source S is added by this same change: …`` when ``sources/S.toml`` is a record HEAD holds and BASE does
    not (a run citing it records nothing independent of the change for ``figure``), else ``""``."""
    rel = f"sources/{source}.toml"
    if rel in base.files or rel not in head.files:
        return ""
    return (f"its source {escaped(source)} is added by this same change: the registry records nothing of it from "
            f"before, so the change records nothing independent of itself for {figure}: read the document itself")


def _added_run_asks(run: Run, alike: Sequence[Run]) -> list[str]:
    """What a reviewer must verify of a run added to a measurement file the change edits (``alike``: the runs HEAD
    holds at its place, its source and locator, itself among them): its locator quoting figures and not its
    tokens/s (each of the 195 shipped runs quotes its own), or another run at its place recording another figure.
    A run added to an existing file with 155.07 tokens/s under a locator quoting another run's 135.07 read "1 other
    file changed", nothing to verify (slip round 33). Empty when nothing is asked; the caller names the run."""
    from passprice.tables import count

    figure = f"{count(run.tokens_per_s)} tokens/s"
    where = escaped(f"{run.source_id}: {run.locator}")
    out = []
    if not _run_quote_held(run.locator, run.tokens_per_s):
        shown = _quoted_span_figures(run.locator, run.tokens_per_s)
        says = (f"its locator quotes {', '.join(f'{q:g}' for q in shown[:5])}, not {figure}" if shown
                else "its locator quotes no figure")
        out.append(f"{says}: does {where} state {figure}?")
    others = [o for o in alike if o.id != run.id and o.tokens_per_s != run.tokens_per_s]
    if others:
        out.append(f"{escaped(others[0].id)} reads {count(others[0].tokens_per_s)} tokens/s at the place it cites as "
                   f"{figure}: does {where} state {figure}?")
    return out


#: The most runs of an added measurement file a review prices and shows (:func:`measurements_added`); the rest are
#: counted (``passprice validate`` prices each). A file may hold 1,000 runs, about 2 ms each to price.
MAX_ADDED_RUNS = 5


def measurement_renames(base: Side, head: Side, files: Sequence[FileChange]) -> tuple[FileChange, ...]:
    """``files`` with each measurement file BASE has and HEAD lacks whose bytes HEAD holds, exactly, in one measurement
    file it adds marked renamed (:attr:`passprice.review.changes.FileChange.renamed`: the removed one names the added
    one, the added one the removed one), each file paired once, in path order: a measured runs' file renamed read
    "removed" and "added", with nothing linking the two (slip round 51). Raises nothing."""
    gone = [f.path for f in files if f.kind == "other" and f.status == "removed" and _is_measurement(f.path)]
    added = [f.path for f in files if f.kind == "other" and f.status == "added" and _is_measurement(f.path)]
    pairs: dict[str, str] = {}
    for old in gone:
        new = next((p for p in added if p not in pairs.values() and head.files.get(p) == base.files.get(old)), None)
        if new is not None:
            pairs[old] = new
    into = {new: old for old, new in pairs.items()}
    return tuple(attrs.evolve(f, renamed=pairs.get(f.path) or into.get(f.path)) if f.path in pairs or f.path in into
                 else f for f in files)


def checkpoint_renames(files: Sequence[FileChange]) -> tuple[FileChange, ...]:
    """``files`` with each checkpoint entry BASE has and HEAD lacks whose content digest
    (:attr:`passprice.review.changes.FileChange.content`) one HEAD adds has marked renamed
    (:attr:`passprice.review.changes.FileChange.renamed`, both ways), each paired once, in path order: an entry renamed
    (``git mv``, its ``[entry] name`` set) read "1 checkpoint entry added; 1 checkpoint entry removed" with the same
    content on both lines, where ``reproduce`` says it is renamed (tests/test_fix154.py). Raises nothing."""
    gone = [f for f in files if f.kind == "checkpoint" and f.status == "removed" and f.content[0] is not None]
    added = [f for f in files if f.kind == "checkpoint" and f.status == "added" and f.content[1] is not None]
    pairs: dict[str, str] = {}
    for old in gone:
        new = next((g.path for g in added if g.path not in pairs.values() and g.content[1] == old.content[0]), None)
        if new is not None:
            pairs[old.path] = new
    into = {new: old for old, new in pairs.items()}
    return tuple(attrs.evolve(f, renamed=pairs.get(f.path) or into.get(f.path)) if f.path in pairs or f.path in into
                 else f for f in files)


def renamed_runs(head: Side, was: str, rel: str) -> str:
    """What a measurement file renamed from ``was`` to ``rel`` (:func:`measurement_renames`) touches, in one line:
    ``renamed from WAS (the same bytes)``, then, when HEAD has locks made under a stack some run of it names, ``: the
    runs of stack S, which the facts of S cite by the file's name, and lock L rests on``. Raises nothing."""

    try:
        runs = side_toml(head.files[rel], "measurement").get("run", [])
    except (UnicodeDecodeError, ValueError):
        runs = []
    stacks = sorted({r["stack"] for r in runs if isinstance(r, dict) and isinstance(r.get("stack"), str)})
    locks = sorted(lock.name for lock in _locks(head).values()
                   if lock is not None and lock.stack is not None and lock.stack.name in stacks)
    said = f"renamed from {was} (the same bytes)"
    if not locks:
        return said
    names = ", ".join(stacks)
    return (f"{said}: the runs of {'stack' if len(stacks) == 1 else 'stacks'} {names}, whose fitted facts cite the "
            f"file by its name, and {_n(len(locks), 'lock')} {'rests' if len(locks) == 1 else 'rest'} on them: "
            f"{', '.join(locks)}")


def _is_measurement(rel: str) -> bool:
    """Whether ``rel`` (a path relative to the root) is a measurement file, ``registry/measurements/NAME.toml``."""
    parts = rel.split("/")
    return len(parts) == 3 and "/".join(parts[:2]) == "registry/measurements" and parts[2].endswith(".toml")


def measurements_added(head: Side, rel: str) -> str | None:
    """What the measurement file ``rel`` added on ``head`` holds, in one line: ``N measured runs (stack S, not
    registered: priced as the limit only; card C; checkpoint K): ID M tokens/s, limit L (L/M × measured) …``, its
    first :data:`MAX_ADDED_RUNS` runs priced on HEAD as ``validate`` prices them, a run above its limit flagged
    ``ABOVE its limit: check it in its source``, a run the model refuses with its refusal, the rest counted; ``None``
    when the file does not read (the review's errors say why). A review listed an added run only as an "other file
    changed", though a figure above its card's limit (or one the model cannot price) is what a reviewer checks
    (walkthrough 22). Raises nothing."""
    from passprice.files import is_there
    from passprice.measurements import load_file, require_inside_root
    from passprice.tables import count
    from passprice.validate import validate

    try:
        runs = require_inside_root(
            head.root, load_file(head.root.path / rel, head.root.schema, head.root.sources), rel
        )
        rows = validate(head.root, runs=runs[:MAX_ADDED_RUNS]).rows
    except InputError:
        return None
    stacks = sorted({r.run.stack for r in rows} | {r.stack for r in runs})

    def names(kind: str, items: Sequence[str]) -> str:
        return f"{kind}{'s' if len(items) != 1 else ''} {', '.join(items)}"

    unregistered = [s for s in stacks if not is_there(head.root.stacks / f"{s}.toml")]
    which = "" if len(unregistered) == len(stacks) else f"{', '.join(spelled(x) for x in unregistered)} "
    what = [names("stack", [spelled(x) for x in stacks])
            + (f" ({which}not registered: priced as the limit only)" if unregistered else "")]
    # A run naming a look-alike card (a Cyrillic х) read as the card it copies (slip round 32): each name spelled.
    what.append(names("card", [spelled(x) for x in sorted({r.card for r in runs})]))
    what.append(names("checkpoint", [spelled(x) for x in sorted({r.checkpoint for r in runs})]))
    shown: list[str] = []
    # Runs refused alike are one entry, "5 runs (ID M tokens/s, …), no limit: WHY": a file of five runs the card
    # cannot hold repeated one 250-character refusal five times (slip round 32).
    alike: dict[str, list[str]] = {}
    priced = {row.run.key: row for row in rows}
    for run in runs[:MAX_ADDED_RUNS]:
        measured = f"{run.id} {count(run.tokens_per_s)} tokens/s"
        row = priced.get(run.key)
        # A run validate leaves out (its card not found, its positions past the context) was counted among the
        # "N more runs (`passprice validate` prices each)" and shown nowhere (attack round 36).
        if row is None or row.limit is None:
            why = "not priced: the review's errors say why" if row is None else f"no limit: {row.why}"
            if why not in alike:
                alike[why] = []
                shown.append(why)
            alike[why].append(measured)
            continue
        ratio = f"limit {count(round(row.limit, 1))} ({row.limit / row.run.tokens_per_s:.3g} × measured)"
        flag = ", ABOVE its limit: check it in its source" if row.above_limit else ""
        shown.append(f"{measured}, {ratio}{flag}")
    shown = [(f"{alike[x][0]}, {x}" if len(alike[x]) == 1 else f"{len(alike[x]):,} runs ({', '.join(alike[x])}), {x}")
             if x in alike else x for x in shown]
    left = len(runs) - min(len(runs), MAX_ADDED_RUNS)
    more = f"; and {left:,} more run{'' if left == 1 else 's'} (`passprice validate` prices each)" if left > 0 else ""
    n_runs = f"{len(runs):,} measured run{'' if len(runs) == 1 else 's'}"  # 1,000, as every count it shows
    return f"{n_runs} ({'; '.join(what)}): {'; '.join(shown)}{more}"


def _unrooted(side: Side, lines: Sequence[str]) -> tuple[str, ...]:
    """``check``'s ``lines`` on ``side`` as a review shows them: a git revision's files are read from a temporary
    folder, gone when ``diff`` ends, so a path in it is written relative to the registry (``facts/cards``) and the
    folder itself as the revision (its commit id, 12 digits). A review of a revision where a card was renamed said
    "card 'a40': not found in /tmp/passprice-diff-1_lpfmmh/facts/cards; … copy …/a40.toml into
    /tmp/passprice-diff-1_lpfmmh/facts/cards to use it here" (attack round 24). A folder or the work tree is shown
    as it is."""
    if side.info.revision is None:
        return tuple(lines)
    tops = {str(side.root.path), os.path.realpath(side.root.path)}
    out = []
    for line in lines:
        for top in tops:
            line = line.replace(top + os.sep, "").replace(top, side.info.revision[:12])
        out.append(line)
    return tuple(out)


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
#: The most characters of added records' descriptions (:func:`added_records`) a pull-request comment shows, in all
#: and each, and of checkpoint entries' changed claims (:func:`passprice.review.changes.claims_changed`:
#: ``entry.imported_by`` of 1,000,000 ``<`` made a 4 MB comment, exit 0); past them a text is cut (it says how long it
#: is) or left to the text review, which shows each whole. A routing record's own ``note`` (no length bound but the
#: file's 256 KiB) of 200,000 ``<`` made a comment of 801 KB, with 20 source records within their schema's bounds
#: (title, publisher and ``read`` of ``@``) 1.18 MB (attack round 34b).
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


def _duplicates(head: Side, changed: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines of :func:`passprice.check.duplicate_lines` on HEAD's lock files that read: those of each pair one of
    whose files the change adds or changes (``changed``: paths relative to the root), which the review names under
    their own heading (a lock copied under another name passed the review without a word), then the others, which
    ``check`` warns of on HEAD as it does of them."""
    from passprice.check import duplicate_lines

    touched = set(changed)
    locks = [(head.root.path / rel, lock) for rel, lock in sorted(_locks(head).items(), key=lambda i: lock_order(i[0]))
             if lock is not None]
    found = duplicate_lines(head.root, locks)
    return (tuple(line for pair, line in found if touched & set(pair)),
            tuple(line for pair, line in found if not touched & set(pair)))


def _lock_links(head: Side) -> tuple[str, ...]:
    """``check``'s warning of each symbolic link of HEAD's ``locks/`` that is a second name of a lock file beside it
    (:func:`passprice.check.alias_lines`, in its words), which the review, as ``check``, does not read as a lock of
    its own (:func:`passprice.gitread.lock_alias`). Raises nothing."""
    from passprice.check import alias_lines

    locks = head.root.locks
    try:
        with os.scandir(locks) as entries:
            if not any(entry.is_symlink() for entry in entries):
                return ()  # no link: nothing listed twice
    except OSError:
        return ()
    return tuple(alias_lines(head.root, head.root.scan(locks, ".lock.toml")).values())


def unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """The lines ``passprice check`` would fail HEAD on for its added or changed lock files (``changed``: paths
    relative to the root) that do not reproduce from their own pinned inputs with HEAD's code
    (:func:`passprice.reproduce.reproduce`): a lock whose recorded price, ``rests_on`` or floors were edited by hand
    and its digest recomputed reads, and priced with HEAD's inputs it may even agree with HEAD's facts, but its
    pinned facts do not give what it records. Only when HEAD is priced with the running code (its pricing model is
    this passprice's); a lock that does not read is already a problem of :func:`passprice.check.review_files`.

    A HEAD priced by its own code has its locks priced from their pins by that code, in its own process
    (:func:`passprice.sidecode.price_pins`), and compared here; a lock its code cannot price so fails. Without it,
    a lock's recorded price set by hand to HEAD's price of a raised ``streams.read`` (1,013.4 tokens/s), its pins
    left as BASE pinned them (0.9333, 996.1 tokens/s), beside a price-neutral edit of ``src/passprice``, read "re-pin
    …, re-locked" (exit 0) where ``check`` fails it (slip round 29)."""
    if not head.code.running and head.code.folder is not None:
        return _own_code_unreproduced(head, changed)
    from passprice.reproduce import reproduce

    out = []
    # A lock of one content (its own digest, checked when read: everything it holds but itself) is reproduced once,
    # whatever its file's name or bytes: 1,000 copies of a lock, each of its own bytes, were each reproduced (issue
    # 13, scale88). The line names each file (``rep.verdict(rel)``).
    reproduced: dict[str, Any] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        rep = reproduced.get(lock.info.digest) if lock.info.digest else None
        if rep is None:
            rep = reproduce(head.root, lock, with_today=False)
            if lock.info.digest:
                reproduced[lock.info.digest] = rep
        if not rep.equals:
            out.append(f"{rel}: {rep.verdict(rel)}")
    return tuple(out)


def _own_code_unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """:func:`unreproduced` for a HEAD priced by its own code: for each added or changed lock file of ``changed``,
    the line of :func:`_unpinned_records` (its recorded provenance is not its pins'), else the line saying its pinned
    inputs, priced with HEAD's code, do not give a figure it records (:func:`passprice.reproduce.moved` over
    :meth:`~passprice.locks.Lock.compared`), or that HEAD's code could not price them (it failed, or lacks the calls
    :data:`passprice.sidecode.PINNED_DRIVER` makes): a lock not reproduced is no lock that passes."""
    from passprice.reproduce import moved
    from passprice.sidecode import price_pins, shown_answer

    locks: dict[str, Lock] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            locks[rel] = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
    recorded = {line.split(": ", 1)[0]: line for line in _unpinned_records(head, locks)}
    priced = price_pins(head.root, head.code, [rel for rel in locks if rel not in recorded])
    out = []
    for rel, lock in locks.items():
        if rel in recorded:
            out.append(recorded[rel])
            continue
        answer = priced.get(rel, {})
        now = answer.get("price")
        if not isinstance(now, Mapping):
            # Not priced from its pins by HEAD's code (it failed, or is older than the calls it needs): no
            # reproduction, no pass. A HEAD whose find_checkpoint raised read "re-locked" on a forged price.
            why = answer.get("error", "no answer")
            out.append(f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code: they were not "
                       f"priced ({why}); check it with HEAD's code (passprice check, run from HEAD's src), then "
                       f"re-lock it with that code: passprice lock --update -o {shell_word(rel)}")
            continue
        diffs = moved(lock.price, now, lock.compared())
        if not diffs:
            continue
        first = diffs[0]
        if "refusal" in now:
            what = f"its pinned inputs are refused ({shown_answer(now['refusal'])})"
        else:
            what = (f"first: {first.field}: {_shown_figure(first.recorded)} recorded, {_shown_figure(first.now)} from "
                    "its pins")
        out.append(
            f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code ({what}): its recorded price "
            "is not what its pinned facts give (the lock was edited by hand, its digest recomputed, or written by "
            "other code than HEAD's); restore it, then re-lock it with HEAD's code: passprice lock --update -o "
            f"{shell_word(rel)}"
        )
    return tuple(out)


def _shown_figure(value: Any) -> str:
    """A recorded figure as a reproduction line shows it: a float to every digit (``repr``), a table as
    ``changed``, anything else as text of at most :data:`passprice.sidecode.MAX_ANSWER` characters."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict | list):
        return "changed"
    from passprice.sidecode import shown_answer

    return shown_answer(str(value))  # HEAD's own code answers what it likes: a text of any length


def _unpinned_records(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """For a HEAD priced by its own code (so :func:`unreproduced` cannot re-price its locks from their pins with the
    running code): the lines for its added or changed lock files whose recorded price says it rests on a fact at
    another provenance than the fact the lock pins there, a check of the file's own data that no pricing model
    decides. A lock whose floor and recorded ``rests_on`` were loosened by hand to ``assumed`` (its pin still
    ``measured``, its digest recomputed) beside a price-neutral edit of ``src/passprice`` read "re-locked, floors
    loosened" (exit 0; slip round 28), where the same lock without the code change fails as not reproducing."""
    out = []
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        recorded: dict[str, Any] = dict(lock.price.get("rests_on", {}))
        expected = lock.price.get("expected")
        if isinstance(expected, Mapping):
            recorded.update(expected.get("rests_on", {}))
        for path, provenance in sorted(recorded.items()):
            pinned = lock.facts.get(path)
            if pinned is not None and pinned.provenance.value != provenance:
                out.append(
                    f"{rel}: does NOT reproduce from its own pinned inputs: its price records {path} as {provenance}, "
                    f"and the lock pins {path} {pinned.provenance.value}: the lock was edited by hand (its digest "
                    f"recomputed); restore it, then re-lock it: passprice lock --update -o {shell_word(rel)}"
                )
                break
    return tuple(out)


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


def _table(kind: str) -> str:
    """The own table of a record of ``kind``: ``card``, ``method`` (a drafting method), ``routing``, ``stack``. A
    stack's and a routing record's were called ``[method]`` (attack round 32)."""
    return {"draft": "method"}.get(kind, kind)


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
    inputs (:func:`unreproduced`'s line in ``d.head_check``)."""
    return any(line.startswith(f"{lock.path}: does NOT reproduce") for line in d.head_check)

