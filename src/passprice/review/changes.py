"""What changed between the two sides, file by file, read from their documents alone: every changed figure old
against new with a weaker provenance flagged (:class:`FactChange`), each file's kind and its changes
(:class:`FileChange`: a card's or drafting method's facts, a checkpoint's claims and layout, a serving's fields).
A file that does not read on a side is reported with its error, never skipped, and the rest is still compared;
nothing here prices.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.cards import card_from_document, document_and_facts
from passprice.derivations import Finding, recheck_all
from passprice.drafts import method_from_document
from passprice.errors import InputError, escaped, problem_lines, spelled
from passprice.facts import Fact, Provenance, dimension
from passprice.files import read_regular
from passprice.lineage import Dependant, changed_dependants
from passprice.locks import read_lock
from passprice.report import fact_json
from passprice.review.sides import Side, _raise, file_kind

if TYPE_CHECKING:
    from passprice.servings import ServingSpec
    from passprice.sources import QuoteCheck


@attrs.frozen
class FactChange:
    """One fact added, removed or changed: its ``path`` in its file (``memory.bandwidth``, ``acceptance.1``), the
    ``lock_path`` a lock names it by (``memory.bandwidth``, ``draft.acceptance.1``), and the ``old`` and ``new`` fact
    (``None`` on the side that lacks it)."""

    path: str
    lock_path: str
    old: Fact | None
    new: Fact | None
    #: For an added fact, what a reviewer must verify of it (:func:`passprice.addedfacts.asked`: its citation names
    #: no registered source, or another fact records another figure at the place it cites); ``None``: nothing.
    asked: str | None = None
    #: For an added card fact whose own citation (source and locator) is another card's fact's
    #: (:func:`passprice.review.quotes.copied_citations`): that fact, ``h100_sxm5_80gb's memory.capacity``, a copied
    #: citation to verify (its :attr:`asked` says so), counted once in the summary; ``None`` otherwise.
    copied_from: str | None = None
    #: The sources a changed or added fact's new citation (its own, or a figure input's) names that the same change
    #: adds (``sources/ID.toml`` on HEAD, not on BASE) and the old fact (if any) did not cite: nothing the registry
    #: recorded before the change backs what it cites them for (:attr:`to_verify` says so).
    fresh_sources: tuple[str, ...] = ()
    #: For a fact fitted again to the same runs (its runs and their figures as before, its fit's errors moved): the
    #: records the same change moved that those runs are priced on, ``card rtx_4090 (memory.bandwidth,
    #: streams.rewrite)``, ``checkpoint NAME`` or ``routing NAME`` (:func:`passprice.review.runs._moved_under_runs`);
    #: empty when none did. Such a fit moved with them, not by hand (left45: the RTX 4090's bandwidth 1008 → 1010 GB/s
    #: re-fitted llamacpp-cuda-2405, and four facts read as changed at their own values, ``overhead.pass 0 µs → 0 µs``).
    moved_with: tuple[str, ...] = ()
    #: For a fact re-cited to another source whose locator still names a file it named under the old one: each such
    #: file that the new source's record (its title, address, ``read``, ``note``, ``copies``) names nowhere, by its
    #: path as the locator writes it (:func:`_foreign_files`; left60: a citation moved from the Azure guide to
    #: xytpai-nvbench under ``Azure_Results/ND_H200_v5_results.md`` read only the generic "its citation changed").
    foreign_files: tuple[str, ...] = ()
    #: For a changed or added fact whose quotes changed (its locator, or a derivation input's, or the source they
    #: cite): ``audit``'s quote check of HEAD's fact against HEAD's stored excerpts
    #: (:func:`passprice.audit.quote_check`, :func:`passprice.review.quotes._quotes_checked`); ``None`` when not made.
    #: A new user's re-citation quoting 'GPU Memory Bandwidth 4.89TB/s', which the stored excerpt lacks, read only "its
    #: locator quotes 4.89TB/s" where audit said NOT FOUND.
    quote: QuoteCheck | None = None
    #: The sources whose stored excerpt :attr:`quote` read that the same change edited (its own section's text, or
    #: the excerpt re-pointed or first named): found there, a quote shows only that the change wrote both (a value
    #: moved, the excerpt edited to state it and re-pinned read "checked"; tests/test_left131.py). Empty when none.
    excerpts_edited: tuple[str, ...] = ()
    #: For a changed fact whose old quotes :func:`passprice.sources.quote_check` could look up in a stored excerpt
    #: (on BASE) and whose new ones cite a source with no usable stored text the old ones did not: why, a source a
    #: line (``nvidia-h200-datasheet has no stored text``, :func:`passprice.sources.unstored_why`); empty otherwise.
    #: A new user re-cited the H200's ``vector`` from the product page (its quote checked) to the unread datasheet
    #: and read only "derived → published (stronger)" (tests/test_fix166.py).
    unchecked_now: tuple[str, ...] = ()
    #: For a changed or added fact whose quotes cite a source whose stored excerpt BASE held and HEAD does not (the
    #: change removed the record's ``excerpt``, or made it unusable): each such source's check of HEAD's fact against
    #: BASE's stored text that is ``NOT FOUND`` or ``MISMATCH`` (:func:`passprice.sources.quote_check`), as ``SOURCE:
    #: STATE (WHY)``; empty otherwise. Each fails the review
    #: (:attr:`passprice.review.verdict.Diff.quotes_against_removed`): the H200's bandwidth moved 4.8 → 5.2 TB/s
    #: under 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s' with the product page's ``excerpt`` line removed in the same
    #: change read only "its quote can no longer be checked" (exit 0).
    against_removed: tuple[str, ...] = ()
    #: For a ratio of a card (unit ``1``) whose derivation, on either side, or note names the card's
    #: ``memory.bandwidth`` as what a quoted figure is divided by (the stream shares: ``dot / bandwidth``, "measured
    #: rate / this file's memory.bandwidth"): HEAD's ``memory.bandwidth`` as ``(value, unit)``
    #: (:func:`passprice.review.quotes._ratio_bases`); ``None`` otherwise. A new user's ``streams.read`` 0.9333 → 0.85
    #: under a quote of Dot ``4.48`` TB/s was asked only whether the place states it, where 4.48 / 4.8 = 0.9333
    #: (tests/test_walk138.py).
    ratio_basis: tuple[float, str] | None = None

    @property
    def change(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        return "changed"

    @property
    def fields(self) -> tuple[str, ...]:
        """Which of ``value`` (the figure in base units), ``unit``, ``provenance``, ``cite``, ``note`` and
        ``derivation`` differ (all the new fact has for an added one, all the old for a removed one)."""
        if self.old is None or self.new is None:
            fact = self.new or self.old
            return tuple(k for k in _FIELDS if fact is not None and _field(fact, k) is not None)
        return tuple(k for k in _FIELDS if _field(self.old, k) != _field(self.new, k))

    @property
    def refit_unmoved(self) -> bool:
        """Whether this change is a fact fitted again to measured runs whose value, unit, provenance, citation and
        note did not move: only its derivation from runs (:class:`passprice.derivations.RunDerivation`: the runs and
        the fit's errors) changed, as every fact of a stack re-fit does. A review lists such a fact in one line of
        its file, not as a change (slip 53: a re-fit moving 2 of the stack's facts listed 7 as changed, 5 of them
        "0.1 → 0.1"). Only a fit to other runs is one: a derivation whose runs read as before while its errors,
        method or figure moved was edited, not fitted again (a fit of the same runs gives the same errors), and is
        listed as a change (slip 48's hand-lowered errors read "no fact changed" otherwise). Its citation may differ
        in the count of runs it names alone (:attr:`recounted`: a run added, walkthrough 47). A fit of the same runs
        whose errors moved is one too when the same change moved a card, checkpoint or routing record those runs are
        priced on (:attr:`moved_with`): the re-fit follows that change, which the review lists (left45)."""
        if self.old is None or self.new is None or not {"derivation"} <= set(self.fields) <= {"derivation", "locator",
                                                                                            "cite"}:
            return False
        from passprice.derivations import RunDerivation

        old, new = self.old.derivation, self.new.derivation
        if not (isinstance(old, RunDerivation) and isinstance(new, RunDerivation)):
            return False
        if old.runs == new.runs and not (self.moved_with and (old.method, old.figure, old.digits, old.tolerance)
                                         == (new.method, new.figure, new.digits, new.tolerance)):
            return False
        return self.recounted is not None or ("cite" not in self.fields and "locator" not in self.fields)

    @property
    def recounted(self) -> tuple[int, int] | None:
        """For a fact fitted again whose citation changed only in the count of runs it names (``the 111 runs of
        stack S …`` → ``the 112 runs …``, as ``calibrate`` writes it after a run is added: walkthrough 47), the two
        counts (each side's derivation's number of runs); ``None`` when the citation did not change, or changed in
        anything else."""
        from passprice.derivations import RunDerivation

        if self.old is None or self.new is None:
            return None
        old, new = self.old.derivation, self.new.derivation
        if not isinstance(old, RunDerivation) or not isinstance(new, RunDerivation) or len(old.runs) == len(new.runs):
            return None
        if (self.old.source, self.old.cite, self.old.locator) == (self.new.source, self.new.cite, self.new.locator):
            return None
        was, now = f"the {len(old.runs)} runs", f"the {len(new.runs)} runs"
        if self.old.source != self.new.source or any(
                (getattr(self.old, k) or "").replace(was, now) != (getattr(self.new, k) or "")
                for k in ("cite", "locator")):
            return None
        return len(old.runs), len(new.runs)

    @property
    def relative(self) -> float | None:
        """The relative change of the value in base units, (new − old) / old (``4.8 TB/s → 5 TB/s`` is
        +0.041 67); ``None`` for an added or removed fact, a zero old value, or a change of dimension."""
        if self.old is None or self.new is None or self.old.value == 0:
            return None
        if dimension(self.old.unit) != dimension(self.new.unit):
            return None
        return (self.new.value - self.old.value) / self.old.value

    @property
    def weakened(self) -> bool:
        """True when the new provenance sits lower on the ladder than the old (``measured → estimated``)."""
        return self.old is not None and self.new is not None and self.new.provenance.weaker_than(self.old.provenance)

    @property
    def strengthened(self) -> bool:
        """True when the new provenance sits higher on the ladder than the old."""
        return self.old is not None and self.new is not None and self.old.provenance.weaker_than(self.new.provenance)

    def _quotes_old_figure(self) -> tuple[int, str] | None:
        """How the unchanged locator of a fact whose value moved states the old figure and not the new one, as the
        review words it after "the locator quotes": ``(0, '0.9')`` a figure of its quoted text, ``(1, '90% (0.9)')``
        a part of a whole or a percentage of a unitless figure (``58/128``, ``90%``: session 25, walkthrough 55),
        ``(2, '4,800 GB/s')`` the old figure in another notation (slip round 34); ``None`` when the value or the
        citation did not move, or the locator does not state the old figure alone. Raises nothing."""
        old, new = self.old, self.new
        if old is None or new is None or "value" not in self.fields:
            return None
        if (old.source, old.locator, old.cite) != (new.source, new.locator, new.cite):
            return None
        from passprice.addedfacts import BASIS_TOLERANCE, in_own_unit, parts_of, percents_of, states

        if _moved_within_quote(old.amount, old.unit, new.amount, new.unit, new.locator) is not None:
            return None
        quoted = _quoted_figures(new.locator or new.cite or "")
        if _figure(old.amount) in quoted and _figure(new.amount) not in quoted:
            return 0, f"{old.amount:g}"

        def near(amount: float, ratio: float) -> bool:
            return abs(ratio - amount) <= BASIS_TOLERANCE * abs(amount)

        text = new.locator or new.cite or ""
        parts = {**percents_of(text), **parts_of(text)} if new.unit == "1" else {}
        was = [words for ratio, words in parts.items() if near(old.amount, ratio)]
        if was and not any(near(new.amount, ratio) for ratio in parts):
            return 1, f"{was[0]} ({old.amount:g})"
        others = in_own_unit(new.amount, new.unit, new.locator)
        if others and states(old.amount, old.unit, new.locator):
            return 2, ", ".join(others[:3])
        return None

    @property
    def contradicted(self) -> str | None:
        """Why the citation a changed fact kept contradicts the change, else ``None``:

        - its value moved while its unchanged locator states the old figure and not the new one
          (:meth:`_quotes_old_figure`: a quoted figure, a part or percentage, the old figure in another notation;
          not of a derived fact, whose value ``check`` recomputes from its inputs);
        - its provenance was raised to ``measured`` or ``published`` while its locator or note calls the figure an
          assumption, an estimate, a guess or a placeholder (:func:`_says_unstated`), or its source's id does
          (``uniform-routing-assumption``).

        Either way the record states one thing and its citation another, with no new evidence, and the review fails
        it (:attr:`passprice.review.verdict.Diff.provenance_contradicted`), as ``check`` fails a value its own
        quoted words contradict. A new user's routing ``hot_share`` moved 0.9 → 0.95 under a locator stating "90%",
        its routing record raised ``assumed`` → ``measured`` under the source ``uniform-routing-assumption``, and the
        H200's ``scale`` raised ``estimated`` → ``measured`` under "assumed for the H200": each passed re-locked,
        exit 0, only asked (tests/test_review_contradicted.py). Raises nothing."""
        old, new = self.old, self.new
        if old is None or new is None:
            return None
        if (old.source, old.locator, old.cite) != (new.source, new.locator, new.cite):
            return None
        stale = self._quotes_old_figure() if new.derivation is None else None
        from passprice.sources import MISMATCH

        if stale is not None and (self.quote is None or self.quote.state != MISMATCH) and not self.against_removed:
            # (else failed already: a MISMATCH, or against the excerpt the change removed)
            return (f"the value moved ({old.describe()} → {new.describe()}) under the citation it had, whose locator "
                    f"quotes {stale[1]}, not {new.describe()}: cite the place stating {new.describe()}, or keep "
                    f"{old.describe()}")
        if not self.strengthened:
            return None
        said = _says_unstated(new)
        if said is None and new.provenance in (Provenance.MEASURED, Provenance.PUBLISHED):
            found = _UNSTATED.search((new.source or "").replace("-", " ").replace("_", " "))
            said = f"source's id {new.source} says {found.group(0)!r}" if found is not None else None
        if said is None:
            return None
        return (f"the provenance was raised ({old.provenance.value} → {new.provenance.value}) under the citation it "
                f"had, and its {said}: cite the {new.provenance.value} source that states {new.describe()}, or keep "
                f"{old.provenance.value}")

    @property
    def to_verify(self) -> str | None:
        """What a reviewer must check in the cited source for this change (:meth:`_to_verify`), and, for a changed
        or added fact citing anew a source the same change adds (:attr:`fresh_sources`), that the change records nothing
        independent of itself: slip round 38, the H200's ``memory.bandwidth`` moved 4.8 → 5.2 TB/s under a
        ``sources/h200-refresh-note.toml`` added by the same commit read only "the citation changed: does … state
        5.2 TB/s?", as if the record were evidence the registry held."""
        asks = self._to_verify()
        foreign = self._foreign()
        if foreign is not None:
            asks = f"{foreign}; {asks}" if asks else foreign
        if self.quote is not None and self.quote.state == "NOT FOUND":  # as audit says it of HEAD's fact
            found = (f"its quotes are NOT FOUND in the stored excerpt of the document it cites, as audit checks them "
                     f"({self.quote.why})")
            asks = f"{asks}; {found}" if asks else found
        from passprice.sources import MISMATCH

        if self.quote is not None and self.quote.state == MISMATCH:  # as audit and check say it of HEAD's fact
            other = (f"its quotes, found in the stored excerpt of the document it cites, state another figure than its "
                     f"own, as audit and check read them ({self.quote.why})")
            asks = f"{asks}; {other}" if asks else other
        if self.against_removed:
            removed = ("❌ its quotes, read against the excerpt this change removed (BASE's stored text), fail: "
                       f"{'; '.join(self.against_removed)}")
            asks = f"{removed}; {asks}" if asks else removed
        if self.unchecked_now:
            lost = (f"its quote can no longer be checked: {'; '.join(self.unchecked_now)} (its old citation's quotes "
                    "were looked up in a stored excerpt): read the quoted words in the document itself")
            asks = f"{lost}; {asks}" if asks else lost
        if self.quote is not None and self.excerpts_edited:
            edited = (f"its quotes were checked against an excerpt this change edited ({self.quote.state}: "
                      f"{self.quote.why}; the stored excerpt of {', '.join(self.excerpts_edited)}): the check shows "
                      "only that the change wrote both; read the quoted words in the document itself")
            asks = f"{asks}; {edited}" if asks else edited
        macs = _macs_read(self.new) if asks and self.new is not None else None
        if macs is not None:  # 'FP32 67 TFLOPS' asked of 33.5 TMAC/s: the figure is the same (tests/test_fix166.py)
            asks = f"{asks} ({macs})"
        if not self.fresh_sources or self.new is None:
            return asks
        names = ", ".join(self.fresh_sources)
        fresh = (f"{'its source' if len(self.fresh_sources) == 1 else 'its sources'} {names} "
                 f"{'is' if len(self.fresh_sources) == 1 else 'are'} added by this same change: the registry records "
                 f"nothing of {'it' if len(self.fresh_sources) == 1 else 'them'} from before, so the change records "
                 f"nothing independent of itself for {self.new.describe()}: read the document itself")
        return f"{asks}; {fresh}" if asks else fresh

    def _ratio_quoted(self) -> str | None:
        """For a fact with a :attr:`ratio_basis` whose value moved, and which no derivation ties to its inputs on HEAD
        (``check`` recomputes one that has it): ``the locator quotes 4.48 TB/s, which over the card's
        memory.bandwidth (4.8 TB/s) is 0.9333, the ratio its derivation names, not 0.85`` when a figure the locator
        quotes in the bandwidth's unit, over HEAD's bandwidth, gives the old value (within
        :data:`passprice.addedfacts.BASIS_TOLERANCE`) and none gives the new one; else ``None``. Raises nothing."""
        from passprice.addedfacts import BASIS_TOLERANCE
        from passprice.derivations import Derivation

        old, new = self.old, self.new
        if (self.ratio_basis is None or old is None or new is None or isinstance(new.derivation, Derivation)
                or old.amount == new.amount):
            return None
        bandwidth, unit = self.ratio_basis
        text = new.locator or new.cite or ""
        if bandwidth <= 0 or unit not in text:
            return None

        def near(amount: float, ratio: float) -> bool:
            return abs(ratio - amount) <= BASIS_TOLERANCE * abs(amount)

        quoted = sorted(_quoted_figures(text))
        was = [q for q in quoted if near(old.amount, q / bandwidth)]
        if not was or any(near(new.amount, q / bandwidth) for q in quoted):
            return None
        named = "derivation" if isinstance(old.derivation, Derivation) else "note"
        return (f"the locator quotes {was[0]:g} {unit}, which over the card's memory.bandwidth ({bandwidth:g} {unit}) "
                f"is {was[0] / bandwidth:.4g}, the ratio its {named} names, not {new.amount:g}")

    def _ratio_recited(self) -> str | None:
        """For a fact with a :attr:`ratio_basis` re-cited (its source or locator changed) with no derivation on HEAD:
        what the first figure its new locator quotes in the bandwidth's unit is over HEAD's bandwidth: ``the locator
        quotes 4.01 TB/s, which over the card's memory.bandwidth (4.8 TB/s) is 0.8354, not 0.99`` (``…, its value``
        where it gives the new value); ``None`` without such a figure. :meth:`_ratio_quoted` said it of an unchanged
        citation alone (tests/test_fix154.py). Raises nothing."""
        from passprice.derivations import Derivation

        old, new = self.old, self.new
        if self.ratio_basis is None or old is None or new is None or isinstance(new.derivation, Derivation):
            return None
        bandwidth, unit = self.ratio_basis
        text = new.locator or new.cite or ""
        quoted = _quoted_figures(text)
        if bandwidth <= 0 or unit not in text or not quoted:
            return None
        from passprice.addedfacts import BASIS_TOLERANCE

        def near(figure: float) -> bool:
            return abs(figure / bandwidth - new.amount) <= BASIS_TOLERANCE * abs(new.amount)

        figure = next((q for q in sorted(quoted) if near(q)), min(quoted))
        ratio = figure / bandwidth
        said = "its value" if near(figure) else f"not {new.amount:g}"
        return (f"the locator quotes {figure:g} {unit}, which over the card's memory.bandwidth ({bandwidth:g} "
                f"{unit}) is {ratio:.4g}, {said}")

    def _past_replaced(self) -> str | None:
        """For a weakened fact (:attr:`weakened`) whose value moved off the published or measured figure it
        replaces: ``its value moved above the measured 0.9333 it replaces (→ 0.99, +6.075 %) on a weaker basis``;
        an estimate raising prices over the measurement read "1 weakened", nothing to verify (tests/test_fix154.py).
        ``None`` otherwise. Raises nothing."""
        old, new = self.old, self.new
        if (not self.weakened or old is None or new is None or old.amount == new.amount
                or old.provenance not in (Provenance.PUBLISHED, Provenance.MEASURED)):
            return None
        moved = f", {_pct(self.relative)}" if self.relative is not None else ""
        way = "above" if new.amount > old.amount else "below"
        return (f"its value moved {way} the {old.provenance.value} {old.describe()} it replaces (→ {new.describe()}"
                f"{moved}) on a weaker basis: what justifies it over the {old.provenance.value} figure?")

    def _foreign(self) -> str | None:
        """What :attr:`foreign_files` asks (``None`` when none): the citation moved from one source to another while
        the locator still names a file of the old one's that the new one's record names nowhere."""
        if not self.foreign_files or self.old is None or self.new is None:
            return None
        files = ", ".join(self.foreign_files[:3]) + (f" and {len(self.foreign_files) - 3} more"
                                                     if len(self.foreign_files) > 3 else "")
        one = len(self.foreign_files) == 1
        return (f"its citation moved from {self.old.source} to {self.new.source} while its locator still names "
                f"{files}, the {'file' if one else 'files'} it named under {self.old.source}; {self.new.source}'s "
                f"record names no such file: is {'it' if one else 'each'} a file of {self.new.source}'s, or is the "
                f"source wrong?")

    def _moved_alone(self) -> str | None:
        """For a fact fitted to measured runs whose value moved while its derivation (its runs, method and fit errors)
        did not, by no more than its derivation's tolerance (up to 0.1 %), which ``check`` re-fits it within: nothing
        it is fitted to moved, so the move was typed, not fitted, and nothing else says so (past the tolerance
        ``check`` fails it). use45: a stack's
        ``overhead.layer`` nudged 96.63 → 96.72 µs, no run changed, its lock re-locked, read ✅ with nothing to verify.
        ``None`` otherwise."""
        from passprice.derivations import RunDerivation

        old, new = self.old, self.new
        if old is None or new is None or "value" not in self.fields or "derivation" in self.fields:
            return None
        # Only a fit checked within a tolerance: a formula's result moved under the same inputs fails check outright
        # (its rounding is exact), and the review says that fact does not follow.
        if not isinstance(new.derivation, RunDerivation) or not new.derivation.tolerance:
            return None
        if self.relative is None or abs(self.relative) > new.derivation.tolerance:
            return None  # past the tolerance: check re-fits it and fails, and the review says it does not follow
        return (f"the value moved ({old.describe()} → {new.describe()}) but its derivation did not (the same "
                f"runs): a fitted figure moves only with what it is fitted to; was it edited by hand? (`passprice "
                f"check` re-fits it only within {100 * new.derivation.tolerance:g} %)")

    def _to_verify(self) -> str | None:
        """What a reviewer must check in the cited source for this change, which passprice cannot (it does not read
        the source): a provenance made stronger (does the new citation state the figure, as measured or
        published? asked of a fact carrying a derivation too), a value that moved while its citation (source and
        locator) did not (does the cited place say the new figure? said more firmly when the locator quotes the old
        figure and not the new one), a published or measured figure cited anew (does the new place state it?), or
        another figure cited anew to a place quoting figures of its dimension, none its own.
        An added fact asks what :attr:`asked` holds: its citation traced to no registered source, or a figure
        another fact records at the place it cites (a card copied with its ``streams.read`` raised under the
        H200's citation was added with nothing to verify, slip round 32). ``None``
        for a removed fact, a derived one (its value follows from its inputs, which ``check``
        recomputes), or a change nothing in the source need confirm. A derived fact's value is not asked about, but
        the figures its derivation reads from sources are, as a cited fact's value is (:func:`_inputs_to_verify`):
        one moved under an unchanged locator, one cited anew, one turned into a constant."""
        old, new = self.old, self.new
        if old is None or new is None:
            return self.asked if new is not None else None
        where = f"{new.source}: {new.locator}" if new.source is not None else f"{new.cite}"
        same_cite = (old.source, old.locator, old.cite) == (new.source, new.locator, new.cite)
        stronger = (f"the provenance is stronger ({old.provenance.value} → {new.provenance.value}): does {where} "
                    f"state {new.describe()}, {new.provenance.value}?") if self.strengthened else None
        unstated = _says_unstated(new) if self.strengthened else None
        if unstated is not None:
            # left60: the 512 GiB host placeholder made measured under its locator's "pinned-host placeholder" read
            # only the generic line: the citation itself says the figure is no measurement.
            stronger = (f"the provenance is stronger ({old.provenance.value} → {new.provenance.value}) but its "
                        f"{unstated}: a {new.provenance.value} figure is one its source states; does {where} state "
                        f"{new.describe()}, {new.provenance.value}?")
        if new.derivation is not None:
            # The fact's own citation is the place its audit traces it to: re-cited under an unchanged derivation
            # (the H200's array to a locator quoting 'INT8 Tensor Core 4,958 TOPS' over its 3958 TOPS input), the
            # review read ✅ with four locks re-pinned on it (slip round 29). Its provenance raised is asked about
            # as any fact's is: the H100's scale (a derivation over its vector rate) made estimated → published,
            # its two locks re-locked, read "(stronger)", ✅, nothing to verify (slip round 30).
            from passprice.derivations import Derivation

            own = None if same_cite or not isinstance(new.derivation, Derivation) else (
                f"its citation changed: does {where} give what its derivation ({new.derivation.formula}) takes from "
                "it?")
            return "; ".join(x for x in (stronger, own, _inputs_to_verify(old, new), self._moved_alone()) if x) or None
        # A derivation removed unties the figure from what check recomputes it from (the H200's streams.read kept
        # at 0.9333, measured, under 'Dot 4.48 TB/s' with its `dot / bandwidth` gone: a later bandwidth change no
        # longer leaves it stale), and read "4 to re-pin", nothing to verify (slip round 38). A fact made an estimate
        # or assumption with it is said weakened already, and cites a basis, not a figure.
        from passprice.derivations import Derivation as Derived

        untied = (f"its derivation ({old.derivation.formula}) was removed: check no longer recomputes "
                  f"{new.describe()} from its inputs; does {where} state it, {new.provenance.value}?"
                  ) if isinstance(old.derivation, Derived) and new.provenance in (
                      Provenance.PUBLISHED, Provenance.MEASURED) else None
        if stronger is not None or untied is not None:
            ratio = (self._ratio_quoted() or (None if same_cite else self._ratio_recited())) if untied else None
            return "; ".join(x for x in (stronger, untied, ratio) if x)
        if "value" in self.fields and same_cite:
            from passprice.addedfacts import states

            # A note stating the old figure and not the new one goes on saying it under the new value (a stack's
            # memory.reserved 512 → 1024 MiB under its note's "512 MiB in all": walkthrough 41).
            noted = (f"; its note still states {old.describe()}: is the note this figure's?"
                     if "note" not in self.fields and states(old.amount, old.unit, new.note)
                     and not states(new.amount, new.unit, new.note) else "")
            across = _moved_within_quote(old.amount, old.unit, new.amount, new.unit, new.locator)
            if across is not None:
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not: {across}: "
                        f"{where}{noted}")
            stale = self._quotes_old_figure()
            if stale is not None and stale[0] < 2:
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not, and the "
                        f"locator quotes {stale[1]}: {where}{noted}")
            ratio = self._ratio_quoted()
            if ratio is not None:
                return f"the value moved ({old.describe()} → {new.describe()}) but its citation did not: {ratio}: " \
                       f"{where}{noted}"
            if stale is not None:
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not, and the "
                        f"locator quotes {stale[1]}: {where}{noted}")
            return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not: does {where} "
                    f"say {new.describe()}?{noted}")
        if not same_cite and new.provenance in (Provenance.PUBLISHED, Provenance.MEASURED):
            from passprice.addedfacts import in_own_unit, states

            # Re-cited to a place that still quotes the old figure (the locator given a second space, 4.8 → 5.2
            # TB/s under 'GPU Memory Bandwidth  4.8TB/s') read as softly as a new place (slip round 38).
            others = in_own_unit(new.amount, new.unit, new.locator)
            ratio = self._ratio_recited()
            ratio_said = f"; {ratio}" if ratio is not None else ""
            if others and "value" in self.fields and states(old.amount, old.unit, new.locator):
                return (f"the value moved ({old.describe()} → {new.describe()}) and the citation changed, but the "
                        f"locator still quotes {', '.join(others[:3])}: does {where} state {new.describe()}, "
                        f"{new.provenance.value}?{ratio_said}")
            if others:
                # left45: 3.35 TB/s kept, re-cited to a locator quoting 3352 GB/s (3.352 TB/s): other digits
                return (f"the citation changed and its locator quotes {', '.join(others[:3])}, not "
                        f"{new.describe()}: does {where} state {new.describe()}, {new.provenance.value}?{ratio_said}")
            return f"the citation changed: does {where} state {new.describe()}, {new.provenance.value}?{ratio_said}"
        if not same_cite:
            # An estimate or assumption cites its basis: re-cited to a place quoting another figure of its dimension
            # (the H200's bandwidth, made estimated, re-cited to 'H200 NVL 4.9TB/s' under its 4.8 TB/s) read as
            # nothing to verify (slip round 33).
            from passprice.addedfacts import in_own_unit

            others = in_own_unit(new.amount, new.unit, new.locator)
            ratio = self._ratio_recited()
            past = self._past_replaced()
            more = "".join(f"; {x}" for x in (ratio, past) if x is not None)
            if others:
                return (f"the citation changed and its locator quotes {', '.join(others[:3])}, not {new.describe()}: "
                        f"does {where} give {new.describe()}, {new.provenance.value}?{more}")
            # Re-cited to a basis naming no figure at all (WS1's memory.bandwidth 6 → 9 TB/s under "design point:
            # the designer's judgement", its note removed, re-locked: nothing to verify, slip round 38). A fact
            # stepped down the ladder with it was left to its "weakened" mark alone: an estimate of 0.99 under "a
            # guess" replacing the measured 0.9333 raised five locked prices with nothing to verify
            # (tests/test_fix154.py); it is asked too, saying that its value moved above or below the one it replaces.
            from passprice.addedfacts import names_figure

            if not names_figure(new.locator) and not names_figure(new.note) and (
                    not self.weakened or "value" in self.fields):
                return (f"the citation changed and its basis names no figure (its locator and note quote no number): "
                        f"what gives {new.describe()}? does {where} give it, {new.provenance.value}?{more}")
            if ratio is not None:  # a basis naming its figure: the weakened mark says the rest
                return ratio
        return None

    def to_json(self) -> dict[str, Any]:
        """The change for ``--format json``: path, lock path, change, fields, old and new (as ``fact_json``, or
        ``null``), relative change, weakened, strengthened, and what a reviewer must verify in the source
        (:attr:`to_verify`, or ``null``)."""
        return {
            "path": self.path,
            "lock_path": self.lock_path,
            "change": self.change,
            "fields": list(self.fields),
            "old": fact_json(self.old) if self.old is not None else None,
            "new": fact_json(self.new) if self.new is not None else None,
            "relative_change": self.relative,
            "weakened": self.weakened,
            "strengthened": self.strengthened,
            "to_verify": self.to_verify,
            "contradicted": self.contradicted,
            "quote_check": self.quote.to_json() if self.quote is not None else None,
            "quote_excerpts_edited": list(self.excerpts_edited),
            "quote_no_longer_checked": list(self.unchecked_now),
            "quote_against_removed_excerpt": list(self.against_removed),
            "copied_citation": self.copied_from,
            "refit_unmoved": self.refit_unmoved,
            "moved_with": list(self.moved_with),
            # a moved derivation input that cancels out of the formula (moves nothing): audit's ``cancelled``
            "cancelled": ([{"input": n, "powers": list(p)} for n, p in _cancelled(self.new)]
                          if _moved_cancelling(self) else []),
        }


#: Words by which a locator or note says its figure is no measurement or published figure: what a fact raised to
#: ``measured`` or ``published`` contradicts (:func:`_says_unstated`).
_UNSTATED = re.compile(r"\b(placeholders?|assum(?:ed|es|e|ing|ptions?)|estimat(?:ed|es|e|ing|ions?)|guess(?:ed|es)?)\b",
                       re.IGNORECASE)


def _says_unstated(fact: Fact) -> str | None:
    """``locator says 'placeholder'`` (or ``note says …``) when ``fact`` is ``measured`` or ``published`` while its
    locator (first) or note calls it a placeholder, an assumption, an estimate or a guess (:data:`_UNSTATED`), else
    ``None``. Raises nothing."""
    if fact.provenance not in (Provenance.MEASURED, Provenance.PUBLISHED):
        return None
    for part, text in (("locator", fact.locator or fact.cite), ("note", fact.note)):
        found = _UNSTATED.search(text or "")
        if found is not None:
            return f"{part} says {found.group(0)!r}"
    return None


#: A file's path as a locator names one (``Azure_Results/ND_H200_v5_results.md``; of a path with spaces, ``LLaMA
#: 3/Professional GPUs/H100_PCIe_v3.ipynb``, the part after its last space): a name with one of these endings.
_FILE_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|ipynb|json|csv|tsv|txt|cu|cuh|py|toml|ya?ml|pdf|html?|rst|log|cpp|cc|"
    r"rs|c|h))(?![\w/-])")


def locator_files(text: str | None) -> tuple[str, ...]:
    """The file paths ``text`` (a locator) names, in order, each once (:data:`_FILE_PATH`): ``('Azure_Results/
    ND_H200_v5_results.md',)``. Raises nothing."""
    return tuple(dict.fromkeys(_FILE_PATH.findall(text or "")))


def _record_text(side: Side, source: str) -> str | None:
    """The words of ``sources/SOURCE.toml`` on ``side`` a file read in it would be named in (title, url,
    repository, read, note, path, copies), one a line; ``None`` when the record is not there or does not read."""
    data = side.files.get(f"sources/{source}.toml")
    if data is None:
        return None
    try:
        record = side_toml(data, "source").get("source")  # capped as every look at a side's file (slip 54)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    words = [record.get(k) for k in ("title", "url", "repository", "read", "note", "path")]
    copies = record.get("copies")
    words += copies if isinstance(copies, list) else []
    return "\n".join(w for w in words if isinstance(w, str))


def _foreign_files(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`FactChange.foreign_files` set on each changed fact whose source moved (both sides name
    one) while its new locator names a file its old locator named too (:func:`locator_files`) that HEAD's record of
    the new source names nowhere, neither by its path nor by its last part (the Azure guide's record names
    ``ND_H200_v5_results.md`` in its ``read``). No repository listing is read (no network): a record names the files
    read in it, so a file it does not name is asked about, never failed. Left60: a citation moved to xytpai-nvbench
    under an unchanged Azure path read only the generic "its citation changed". Raises nothing."""
    out = []
    for f in files:
        facts = []
        for c in f.facts:
            o, n = c.old, c.new
            if o is not None and n is not None and o.source and n.source and o.source != n.source:
                kept = [p for p in locator_files(n.locator) if p in locator_files(o.locator)]
                record = _record_text(head, n.source) if kept else None
                if record is not None:
                    foreign = tuple(p for p in kept if p not in record and p.rsplit("/", 1)[-1] not in record)
                    if foreign:
                        c = attrs.evolve(c, foreign_files=foreign)
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def _folded(f: FileChange, c: FactChange) -> bool:
    """Whether the review names ``c`` (of file ``f``) in its file's one line of facts fitted again unmoved rather
    than as a change: :attr:`FactChange.refit_unmoved`, with no derived fact of the file reading it."""
    return c.refit_unmoved and not any(d.input == c.path for d in f.dependants)


def refit_line(f: FileChange, shown: Sequence[FactChange]) -> str | None:
    """The review's one line for the facts of file ``f`` a re-fit wrote again unmoved (``None`` when none): how
    many, their paths, and the change of their derivation: as the first listed fact's of ``shown`` (the file's
    facts the review lists) that carries the same change, else said here (:func:`run_change`)."""
    folded = [c for c in f.facts if _folded(f, c)]
    if not folded:
        return None
    # The folded facts grouped by their derivation's change (a re-fit's fitted facts read tokens/s, its range facts
    # each run's rows or positions: walkthrough 47), each said once: as a listed fact's, else in words.
    groups: dict[str, list[str]] = {}
    for c in folded:
        assert c.old is not None and c.new is not None
        groups.setdefault(run_change(c.old.derivation, c.new.derivation, c.moved_with) or "changed", []).append(c.path)
    hows = []
    for runs, paths in groups.items():
        same = next((c.path for c in shown if c.old is not None and c.new is not None and "derivation" in c.fields
                     and run_change(c.old.derivation, c.new.derivation, c.moved_with) == runs), None)
        said = f"as {same}'s" if same is not None else runs
        hows.append(said if len(groups) == 1 else f"{', '.join(paths)}: {said}")
    how = "; ".join(hows)
    names = ", ".join(c.path for c in folded)
    counts = {c.recounted for c in folded if c.recounted is not None}
    if not counts:
        return (f"{_n(len(folded), 'more fact')} re-derived to the same value, provenance and citation (not listed "
                f"as changed): {names}; derivation: {how}")
    recounted = "; ".join(f"{a} → {b}" for a, b in sorted(counts))
    return (f"{_n(len(folded), 'more fact')} re-derived to the same value and provenance, the citation changed only "
            f"in its count of runs ({recounted}) (not listed as changed): {names}; derivation: {how}")


def _cancelled(fact: Fact | None) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """:func:`passprice.audit.cancelled` of ``fact`` (none for no fact)."""
    from passprice.audit import cancelled

    return cancelled(fact) if fact is not None else ()


def _moved_within_quote(was: float, was_unit: str, now: float, now_unit: str, locator: str | None) -> str | None:
    """``moved from one figure of its quote to another: 67 TFLOPS → 60 TFLOPS; which column is this card's?`` when a
    figure moved under an unchanged ``locator`` whose quoted spans (read in the unit the locator names after a table
    row's quote, :func:`passprice.sources._in_named_unit`) state both the old figure ``was`` ``was_unit`` and the new
    one (:func:`passprice.addedfacts.states`, with a unit), else ``None``. The H200's ``fp32`` input moved 67 → 60
    TFLOPS under ``'FP32 67 TFLOPS 60 TFLOPS'`` (its SXM and NVL columns), re-locked, passed ``check`` (the quote
    states 60 TFLOPS) and the review asked only ``does … say 60 TFLOPS?``: the quote does, in the other card's
    column. Asked, not failed: which figure of a row is the card's is the document's layout, which passprice does not
    read (a correction from the wrong column reads the same). Raises nothing."""
    from passprice.addedfacts import states
    from passprice.sources import _in_named_unit

    if not locator or (was, was_unit) == (now, now_unit):
        return None
    quoted = " | ".join(_in_named_unit(locator))
    if not quoted or not states(was, was_unit, quoted) or not states(now, now_unit, quoted):
        return None
    return (f"moved from one figure of its quote to another: {was:g} {was_unit} → {now:g} {now_unit}; which column "
            "is this card's?")


def _inputs_to_verify(old: Fact, new: Fact) -> str | None:
    """What a reviewer must check in the sources of a derived fact's figure inputs (``None`` when nothing): each
    figure whose amount or unit moved while its source and locator did not (more firmly when the locator quotes the
    old amount and not the new), each figure cited anew (a new input, or a new source or locator), and each figure
    of ``old`` that ``new`` makes a constant, each constant whose number moved or which is new, and a formula
    rewritten (slip round 34: a constant 2 → 1 under "the link's two directions" doubled a rate, re-locked, with
    nothing to verify). ``check`` recomputes the formula, never what the source says: the
    H200's ``array`` raised with its input ``sparse`` moved 3958 → 7958 TOPS under the locator ``'INT8 Tensor Core
    3,958 TOPS'`` passed the review without a word."""
    from passprice.derivations import Derivation

    if not isinstance(new.derivation, Derivation):
        return None
    before = {i.name: i for i in old.derivation.inputs} if isinstance(old.derivation, Derivation) else {}
    asks = []
    for i in new.derivation.inputs:
        was = before.get(i.name)
        where = f"{i.source or new.source}: {i.locator}"
        if i.kind == "figure":
            if was is not None and was.kind == "figure" and (was.source or old.source, was.locator) == (
                    i.source or new.source, i.locator):
                if (was.amount, was.unit) == (i.amount, i.unit):
                    continue
                quoted = _quoted_figures(i.locator or "")
                across = _moved_within_quote(was.amount, was.unit, i.amount, i.unit, i.locator)
                if across is not None:
                    asks.append(f"its input {i.name} moved ({was.shown()} → {i.shown()}) but its citation did not: "
                                f"{across}: {where}")
                elif _figure(was.amount) in quoted and _figure(i.amount) not in quoted:
                    asks.append(f"its input {i.name} moved ({was.shown()} → {i.shown()}) but its citation did not, "
                                f"and the locator quotes {was.amount:g}: {where}")
                else:
                    asks.append(f"its input {i.name} moved ({was.shown()} → {i.shown()}) but its citation did not: "
                                f"does {where} say {i.shown()}?")
            else:
                asks.append(f"its input {i.name} is cited anew: does {where} state {i.shown()}?")
        elif i.kind == "constant" and was is not None and was.kind == "figure":
            asks.append(f"its input {i.name} was a figure of {was.source or old.source}: {was.locator}, now a "
                        f"constant ('{i.constant}', {i.shown()}): is it one, or an assumption?")
        elif i.kind == "constant" and (was is None or was.kind != "constant" or (was.amount, was.unit) != (
                i.amount, i.unit)):
            # A constant is a claim in words: its number moved under them (the H200's host.read 'directions' 2 → 1,
            # "the link's two directions", doubled host.read to 128 GB/s, re-locked, nothing to verify: slip 34).
            how = (f"moved ({was.shown()} → {i.shown()})" if was is not None and was.kind == "constant"
                   else f"is a new constant ({i.shown()})")
            asks.append(f"its constant {i.name} {how}: is '{i.constant}' {i.shown()}?")
    if isinstance(old.derivation, Derivation) and old.derivation.formula != new.derivation.formula:
        asks.append(f"its formula changed ({old.derivation.formula} → {new.derivation.formula}): does what it cites "
                    "give the figure so?")
    return "; ".join(asks) or None


def _figure(amount: float) -> float:
    """A figure as compared with those a locator quotes: rounded to 12 significant digits (``4.8`` and
    ``4.800000000001`` are one figure)."""
    return float(f"{amount:.12g}")


#: What may not come before a figure in a locator's text besides what :data:`passprice.textchange.NUMBER` rules out:
#: an ``=`` (a setting's value, :func:`_quoted_figures`), :data:`_SETTING_SIGN`.
_SETTING_SIGN = "="
#: The look-behind of :data:`_SETTING_SIGN`.
_NOT_AFTER = rf"(?<!{_SETTING_SIGN})"
#: A run of a name's characters: a setting's name is one's end (:func:`_setting_spans`).
_NAME_RUN = r"[\w.-]+"
#: What follows a setting's name before its number (:data:`passprice.textchange.NUMBER`, joined to it when
#: :func:`_setting_spans` first reads a name): blanks and an ``=`` or ``:``. Left54: the number was written here its
#: own way, without a power of ten, so ``n_ctx=2e3``'s setting ended at its ``2``.
_SETTING_VALUE = r"[ \t]*[=:]?[ \t]*"


def _no_start() -> str:
    """The class of characters after which no name and no figure starts (:func:`_setting_spans`): those
    :data:`passprice.textchange.NUMBER` starts after none of (:data:`passprice.textchange.RUNS_INTO`, the one place
    they are written), and :data:`_SETTING_SIGN`. Left56: this was a copy of NUMBER's look-behind, written by hand
    (``[A-Za-z_\\d.,=]``). Built when asked, as textchange is imported where it is used (it imports difflib)."""
    from passprice.textchange import RUNS_INTO

    return rf"[{RUNS_INTO}{_SETTING_SIGN}]"


def _setting_spans(text: str) -> list[tuple[int, int]]:
    r"""The spans ``(start, end)`` (``text[start:end]``) of ``text`` that are a setting's name and its number, in
    order: an identifier with an ``_`` after its first character (``n_ctx 512``, ``n_gpu_layers=99``) or a flag
    (``-c 512``, ``--ctx-size=512``), starting where no name or figure runs into it and ending its run of name
    characters (``[\w.-]``; a flag's holds no ``.``), then blanks, an optional ``=`` or ``:``, and a number; or, with no
    number after it, a name up to the last digit its run holds after that ``_`` (``a_b-12``; a flag's, after its
    first letter). The regular expression this replays, ``[A-Za-z_][\w.-]*_[\w.-]*`` before the number, tried every
    split of a name at every ``-`` in it: a 990-character locator ``x a_-a_-…`` took 1.1 s of CPU each time it was
    read, 25 s for a copied card of such locators (attack round 38). One pass over each run: linear in ``text``.
    Raises nothing."""
    import re

    def letter(c: str) -> bool:
        return "A" <= c <= "Z" or "a" <= c <= "z"

    from passprice.textchange import NUMBER

    value = re.compile(_SETTING_VALUE + NUMBER)
    no_start = re.compile(_no_start())
    out: list[tuple[int, int]] = []
    for run in re.finditer(_NAME_RUN, text):
        lo, hi = run.span()
        if "_" not in run.group(0) and "-" not in run.group(0):
            continue
        after = value.match(text, hi)
        # The last digit before each offset of the run, and its first "." from each on.
        last, seen = [-1] * (hi - lo + 1), -1
        for i in range(lo, hi):
            last[i - lo] = seen
            seen = i if text[i].isdigit() else seen
        last[hi - lo] = seen
        dot, ahead = [hi] * (hi - lo + 1), hi
        for i in range(hi - 1, lo - 1, -1):
            ahead = i if text[i] == "." else ahead
            dot[i - lo] = ahead
        lines = [i for i in range(lo, hi) if text[i] == "_"]
        tried = False
        i = lo
        while i < hi:
            c = text[i]
            if i != 0 and no_start.match(text[i - 1]):
                i += 1
                continue
            end = -1
            if (letter(c) or c == "_") and not tried:
                tried = True  # a later start's name is the end of this one's: it reads alike
                if any(u > i for u in lines):
                    end = after.end() if after is not None else last[hi - lo] + 1
                    end = end if any(i < u < end for u in lines) else -1
            elif c == "-":
                j = i + 1 + (i + 1 < hi and text[i + 1] == "-")
                if j < hi and letter(text[j]):
                    end = after.end() if after is not None and dot[j - lo] == hi else last[dot[j - lo] - lo] + 1
                    end = end if end > j + 1 else -1
            if end >= 0:
                out.append((i, end))
                i = end
            else:
                i += 1
    return out


#: The words before a number that make it a place in a document, not a figure it states (``page 4``, ``Table 2``,
#: ``Fig. 3``, ``p. 12``, ``section 5``): :func:`_quoted_figures` skips it (walkthrough 30: an input's locator
#: ``page 4, table 2: five active stacks`` was asked "its input stacks is 5 but its locator quotes 2, 4").
@functools.cache
def _reference() -> Any:
    """:data:`_REFERENCE_WORDS` compiled once, when a locator is first read (``re`` is not imported with the module)."""
    import re

    return re.compile(_REFERENCE_WORDS)


_REFERENCE_WORDS = (r"(?i)(?<![\w.])(?:pages?|tables?|fig(?:ure)?s?|sections?|sec|chapters?|slides?|appendix|"
                    r"eq(?:uation)?s?|footnotes?|endnotes?|p|pp)\.?[ \t]*\Z")


#: A unit-less size suffix glued to a number (``8B``, ``70B``, ``1.5M``, ``32K``) ending the word: a model's size
#: in its name, not a figure a locator quotes (a new user's ``llama 8B`` read as "its locator quotes 168.2, 8");
#: ``100MB`` (M then B) and ``4.8TB/s`` are units, and stay figures (:func:`_quoted_figures`).
_MODEL_SIZE = re.compile(r"[BMK](?![\w/])")


def _quoted_figures(text: str) -> set[float]:
    """The figures a locator's text quotes (``'GPU Memory Bandwidth 4.8TB/s'`` → {4.8}; ``16,896`` → {16896}),
    for :attr:`FactChange.to_verify`. A number that is part of a name or a setting's value is not a figure the
    locator quotes, nor one naming a place in the document (``page 4``, ``Table 2``, ``Fig. 3``: :func:`_reference`):
    one glued to a letter before it (``pp512``, ``tg128``, build ``b2824``) or to a model size's suffix after it
    (``8B``, ``70B``: :data:`_MODEL_SIZE`), one after a setting's name (``n_ctx
    512``, ``--ctx-size=512``, :func:`_setting_spans`) or after ``=`` (walkthrough 9: ``n_ctx 512`` in the llama.cpp
    stack's ``memory.reserved`` locator was read as its 512 MiB, and the review said "the locator quotes 512" of a
    setting). The first 10,000 characters are read, in time linear in them."""
    import re

    from passprice.textchange import NUMBER, figure_read

    text = text[:10_000]
    spans = _setting_spans(text)
    out, at = set(), 0
    for found in re.finditer(_NOT_AFTER + NUMBER, text):
        while at < len(spans) and spans[at][1] <= found.start():
            at += 1
        if at < len(spans) and spans[at][0] <= found.start():
            continue  # a setting's number, or a name's
        if _reference().search(text, max(0, found.start() - 12), found.start()):
            continue  # where in the document (page 4, Table 2), not a figure it states
        if _MODEL_SIZE.match(text, found.end()):
            continue  # a model's size in its name (llama 8B, 70B, 1.5M): the review read 8 as a quoted figure
        figure = figure_read(found.group(0))
        if figure is not None:  # a number past a float (``1e-400``, ``1e999``) quotes no figure (left50)
            out.add(_figure(figure))
    return out


_FIELDS = ("value", "unit", "provenance", "source", "locator", "cite", "note", "derivation")


def _serving_changes(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """:func:`passprice.reproduce.serving_changes` as the review shows it: each word of a line that prints but is not
    ASCII (a name) spelled out after the line (:func:`passprice.errors.spelled`): a serving pointed at a card copied
    under a name with a Cyrillic ``х`` read ``card: h200_sxm_141gb → h200_sxm_141gb``, a change that prints as none
    (slip round 30)."""
    from passprice.errors import spell
    from passprice.reproduce import serving_changes

    out = []
    for line in serving_changes(old, new):
        words = dict.fromkeys(w.strip(";,") for w in line.split(" ") if not w.isascii() and w != "→")
        out.append(line + "".join(f" (spelled {spell(w)})" for w in words if w and w.isprintable()))
    return tuple(out)


def _description_changed(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """``description: OLD → NEW`` (:func:`passprice.textchange.text_change`, each changed span in brackets when the
    texts are long; ``(none)`` for an absent one) when the serving's ``description`` changed, empty otherwise: a lock
    pins it as ``serving.description`` and ``check --frozen`` fails on it, though
    :func:`passprice.reproduce.serving_changes` leaves descriptions aside (they price nothing). Walkthrough 57: a
    serving whose description alone was rewritten read ``comments or layout only: every field of the serving reads
    as before`` under its file while each lock row said it pinned ``serving.description`` as before the change.
    Raises nothing."""
    from passprice.tables import printable
    from passprice.textchange import text_change

    if old.description == new.description:
        return ()
    if not old.description or not new.description:
        return (f"description: {printable(old.description) if old.description else '(none)'} → "
                f"{printable(new.description) if new.description else '(none)'}",)
    return (f"description: {text_change(printable(old.description), printable(new.description))}",)


def _description_names_old(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """A line to verify when the serving's ``card``, ``checkpoint`` or ``routing`` moved while its ``description``,
    unchanged, still names the old one (empty otherwise): the description is a claim a lock pins
    (``serving.description``) and ``passprice servings`` prints. Walkthrough 55: ``qwen3-30b-a3b-h200`` re-pointed to
    a new routing record ``qwen3-30b-a3b-diverse`` (65 of 128 experts hot) kept "routing as measured on a narrow
    workload (a hot set of 58 of 128 experts …, facts/routing/qwen3-30b-a3b-measured.toml)", and the review said
    only ``routing: qwen3-30b-a3b-measured → qwen3-30b-a3b-diverse``. Raises nothing."""
    import re

    text = old.description
    if not text or new.description != text:
        return ()
    named = [f"{field} {was}" for field, was, now in (("card", old.card, new.card),
                                                      ("checkpoint", old.checkpoint, new.checkpoint),
                                                      ("routing record", old.routing, new.routing))
             if was and was != now and re.search(rf"(?<![\w.-]){re.escape(was)}(?![\w-])", text)]
    if not named:
        return ()
    return (f"description unchanged, still naming the old {' and '.join(named)}: is it true of this serving? "
            "(to verify; a lock pins it as serving.description)",)


def _serving_change_pairs(
    old: ServingSpec, new: ServingSpec
) -> tuple[tuple[str, ...], tuple[Mapping[str, Any], ...]]:
    """The serving's changes from ``old`` (BASE) to ``new`` (HEAD) twice, in the same order: as lines
    (:func:`_serving_changes`) and as ``{"field": "serving.FIELD", "locked": BASE's value, "now": HEAD's value}``
    (:func:`passprice.reproduce.serving_differences`, values as the serving document writes them, ``None`` where
    absent), the shape of ``reproduce --json``'s ``serving_differences``. Raises nothing."""
    from passprice.reproduce import serving_differences

    lines = _serving_changes(old, new)
    fields = tuple({"field": f"serving.{key}", "locked": was, "now": now}
                   for key, was, now in serving_differences(old, new))
    return lines, fields


def _field(fact: Fact, name: str) -> Any:
    if name == "value":
        return fact.value
    if name == "provenance":
        return fact.provenance.value
    return getattr(fact, name)


def fact_changes(old: Mapping[str, Fact], new: Mapping[str, Fact], lock_prefix: str = "") -> tuple[FactChange, ...]:
    """Every fact whose digest differs between ``old`` and ``new`` (path → fact), or which one side lacks, in the
    order of ``old`` then the paths only ``new`` has; ``lock_prefix`` turns a file path into a lock path
    (``draft.`` for a drafting method)."""
    out = []
    for path in dict.fromkeys([*old, *new]):
        o, n = old.get(path), new.get(path)
        if o is None or n is None or o.digest() != n.digest():
            out.append(FactChange(path, lock_prefix + path, o, n))
    return tuple(out)


@attrs.frozen
class FileChange:
    """A file that differs between the sides: its ``path`` relative to the root, ``kind`` and entry ``name`` (see
    :func:`passprice.review.sides.file_kind`), ``status`` (``added``, ``removed`` or ``changed``), the errors that keep
    it from reading on each side (lines, ``FILE: KEY.PATH: what was wrong``), and, for a card or drafting method that
    reads on both sides it has, its fact changes (``facts``) and the keys of its ``[card]``/``[method]`` table that
    changed (``meta``); for a checkpoint entry its ``content`` digest on each side (what the pricer reads); for a
    serving the fields that changed (``serving``, ``field: before → after`` lines). ``compared`` is false when a side's
    errors kept the facts from being compared."""

    path: str
    kind: str
    name: str
    status: str
    base_errors: tuple[str, ...] = ()
    head_errors: tuple[str, ...] = ()
    facts: tuple[FactChange, ...] = ()
    meta: tuple[str, ...] = ()
    content: tuple[str | None, str | None] = (None, None)
    serving: tuple[str, ...] = ()
    dependants: tuple[Dependant, ...] = ()
    #: HEAD's derived facts of this file that do not follow from their inputs (stale, mismatch, broken: what
    #: ``passprice check`` fails on), each found by recomputing its derivation (:func:`passprice.derivations.recheck`).
    findings: tuple[Finding, ...] = ()
    #: HEAD's bytes of the file, as the comparison read them, whatever HEAD is (the work tree, a folder or a git
    #: revision): a pull-request comment links each changed fact to its lines in them (:meth:`fact_lines`).
    head_bytes: bytes | None = attrs.field(default=None, eq=False, repr=False)
    #: A card the change renamed (:func:`card_renames`): for the file HEAD adds, BASE's file it is compared with (its
    #: ``facts`` are the changes between the two); for the file HEAD removes, the file it became (no facts of its
    #: own listed). A card renamed with a fact re-cited inside it listed every fact as removed and added, so the
    #: re-cited fact asked nothing to be verified and the review read ✅ (slip round 28). A serving stack too, and
    #: (slip round 51) a measurement file whose bytes HEAD holds under another name
    #: (:func:`passprice.review.runs.measurement_renames`).
    renamed: str | None = None
    #: A checkpoint entry's claims on BASE and HEAD (:func:`checkpoint_claims`) when one changed: what the entry
    #: says of the GGUF file, not read by the pricer.
    claims: tuple[Mapping[str, str] | None, Mapping[str, str] | None] = attrs.field(default=(None, None), eq=False,
                                                                                   repr=False)
    #: A checkpoint entry changed on both sides: what differs in its content (:func:`content_changes`), the first
    #: few differences of its tensor table and metadata, one line each.
    inside: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    #: A checkpoint entry changed on both sides: what differs in its layout (:func:`layout_changes`: tensor offsets,
    #: the header's sizes …), outside its content digest and read by no price.
    layout: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)

    def fact_lines(self, fact: str) -> tuple[int, int] | None:
        """The 1-based first and last line of fact ``fact``'s table in HEAD's bytes of the file
        (:func:`passprice.comment.fact_lines`), found when a comment asks: a review of 377 added cards spent 0.6 s
        (profiled) finding every fact's lines up front for a comment nobody asked for."""
        if self.head_bytes is None:
            return None
        from passprice.comment import fact_lines

        return fact_lines(self.head_bytes.decode("utf-8", "replace"), fact)

    @property
    def holds_facts(self) -> bool:
        """True for a card, a drafting method, a routing record or a serving stack."""
        return self.kind in ("card", "draft", "routing", "stack")

    @property
    def compared(self) -> bool:
        """True when the facts were compared (no side that has the file failed to read it)."""
        return not self.base_errors and not self.head_errors

    def to_json(self, shown: tuple[tuple[str, ...], tuple[str, ...], int] | None = None) -> dict[str, Any]:
        """The file for ``--format json``; ``shown``: the errors listed and how many more are counted
        (:meth:`passprice.review.verdict.Diff.errors_shown`), every one when ``None``."""
        base, head, left_out = shown if shown is not None else (self.base_errors, self.head_errors, 0)
        return {
            "path": self.path,
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "compared": self.compared,
            "errors": {"base": list(base), "head": list(head)},
            "errors_left_out": left_out,
            "facts": [c.to_json() for c in self.facts],
            "meta": list(self.meta),
            "content": {"base": self.content[0], "head": self.content[1]},
            "content_changes": list(self.inside),
            "layout_changes": list(self.layout),
            "serving": list(self.serving),
            "dependants": [d.to_json() for d in self.dependants],
            "renamed": self.renamed,
            "unsound": [f.to_json() for f in self.findings],
        }

    @property
    def shown_name(self) -> str:
        """The file as the review's Facts table names it: a card by its name; a routing record, drafting method or
        stack with its kind before it (``routing acme-moe``), so a routing record named as its checkpoint is not read
        as the checkpoint (walkthrough 27)."""
        return f"{self.kind} {self.name}" if self.kind in _LOCK_PREFIX else self.name

    def lock_path(self, path: str) -> str:
        """The path a lock names fact ``path`` of this file by (``draft.acceptance.1``, ``routing.hot_share``,
        ``stack.…``; a card's path as it is)."""
        return _LOCK_PREFIX.get(self.kind, "") + path


#: What a lock's fact paths put before a record's own path, by the kind of file holding it.
_LOCK_PREFIX = {"draft": "draft.", "routing": "routing.", "stack": "stack."}


@attrs.frozen
class _Read:
    """A file read on one side: its ``facts`` (path → fact) for a card or drafting method, its ``meta`` table, and
    the ``errors`` that kept it from reading."""

    facts: Mapping[str, Fact] | None = None
    meta: Mapping[str, Any] | None = None
    errors: tuple[str, ...] = ()
    content: str | None = None
    spec: Any = None
    #: A checkpoint entry's content (:func:`passprice.pins.checkpoint_content`), which :func:`content_changes` compares.
    data: Any = None
    #: A checkpoint entry's layout (:func:`checkpoint_layout`), which :func:`layout_changes` compares.
    layout: Mapping[str, str] | None = None


def _read(side: Side, rel: str, kind: str, name: str) -> _Read:
    """Read and validate the file ``rel`` of ``side`` as its kind (schema, then building what it describes)."""
    path = side.root.path / rel
    try:
        if kind == "card":
            document, facts = document_and_facts(path, side.root.schema)  # copies of one card: read once
            card = card_from_document(name, document, str(path), facts)
            return _Read(card.facts(), dict(document.get("card", {})))
        if kind == "draft":
            document = schema.load(path, "draft", side.root.schema)
            method = method_from_document(name, document, str(path))
            facts = {f"acceptance.{i}": f for i, f in enumerate(method.acceptance, start=1)}
            return _Read(facts, dict(document.get("method", {})))
        if kind == "routing":
            from passprice.routing import routing_from_document

            document = schema.load(path, "routing", side.root.schema)
            routing = routing_from_document(name, document, str(path))
            facts = {p.split(".", 1)[1]: f for p, f in routing.facts().items()}
            return _Read(facts, dict(document.get("routing", {})))
        if kind == "stack":
            from passprice.stacks import stack_from_document

            document = schema.load(path, "stack", side.root.schema)
            stack = stack_from_document(name, document, str(path))
            # Paths as a lock names them, less the stack. prefix (added as the lock prefix below).
            facts = {p.removeprefix("stack."): f for p, f in stack.lock_facts().items()}
            return _Read(facts, dict(document.get("stack", {})))
        if kind == "checkpoint":
            from passprice.checkpoints import header_from_entry
            from passprice.pins import checkpoint_content, checkpoint_digest

            document = schema.load(path, "checkpoint", side.root.schema)
            header = header_from_entry(document, str(path))
            return _Read(meta=checkpoint_claims(document), content=checkpoint_digest(header),
                         data=checkpoint_content(header), layout=checkpoint_layout(document))
        elif kind == "serving":
            from passprice.servings import spec_of_file

            return _Read(spec=spec_of_file(side.root, path))  # as check reads it: built once for both
        elif kind == "lock":
            read_lock(path, side.root.schema)
        elif kind == "source":
            from passprice.sources import load_source

            load_source(side.root, str(path))
        elif kind == "schema":
            try:
                json.loads(read_regular(path, schema.MAX_SCHEMA_BYTES,
                                        lambda size: _raise(schema.schema_too_large(path, size))).decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise InputError(f"{path}: not valid JSON: {e}") from None
            except RecursionError:  # a schema file nested 10^5 deep: a traceback, exit 1 (attack round 57)
                raise InputError(f"{path}: not valid JSON: nested too deeply") from None
    except InputError as e:
        return _Read(errors=tuple(side.local(line) for line in problem_lines(e)))
    return _Read()


def compare_file(base: Side, head: Side, rel: str, renamed_from: str | None = None,
                 renamed_to: str | None = None) -> FileChange:
    """The change of the file ``rel`` between ``base`` and ``head`` (it differs, or one side lacks it): each side's
    errors, and, for a card or drafting method that reads on every side it is on, its fact and metadata changes. A
    card HEAD adds as BASE's card ``renamed_from`` (:func:`card_renames`) is compared with that file; a card HEAD
    removes as ``renamed_to`` lists no facts (they are compared there)."""
    kind, name = file_kind(rel)
    on_base, on_head = rel in base.files, rel in head.files
    status = "added" if not on_base else "removed" if not on_head else "changed"
    if renamed_from is not None:
        old = _read(base, renamed_from, kind, file_kind(renamed_from)[1])
    else:
        old = _read(base, rel, kind, name) if on_base else _Read(facts={}, meta={})
    new = _read(head, rel, kind, name) if on_head else _Read(facts={}, meta={})
    if renamed_to is not None:
        old = _Read(facts={}, meta={}, errors=old.errors)
    facts: tuple[FactChange, ...] = ()
    meta: tuple[str, ...] = ()
    if kind in ("card", "draft", "routing", "stack") and old.facts is not None and new.facts is not None:
        facts = fact_changes(old.facts, new.facts, _LOCK_PREFIX.get(kind, ""))
        if (on_base and on_head) or renamed_from is not None:
            before, after = old.meta or {}, new.meta or {}
            meta = tuple(k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k))
    claims: tuple[Mapping[str, str] | None, Mapping[str, str] | None] = (None, None)
    inside: tuple[str, ...] = ()
    layout: tuple[str, ...] = ()
    if kind == "checkpoint" and on_base and on_head and old.meta is not None and new.meta is not None:
        meta = tuple(k for k in dict.fromkeys([*old.meta, *new.meta]) if old.meta.get(k) != new.meta.get(k))
        claims = (old.meta, new.meta)
        if old.content != new.content and old.data is not None and new.data is not None:
            inside = content_changes(old.data, new.data)
        if old.layout is not None and new.layout is not None:
            layout = layout_changes(old.layout, new.layout)
    serving: tuple[str, ...] = ()
    if kind == "serving" and old.spec is not None and new.spec is not None:
        serving = (_serving_changes(old.spec, new.spec) + _description_changed(old.spec, new.spec)
                   + _description_names_old(old.spec, new.spec))
    # The facts HEAD derives from a changed fact, and whether each still follows (passprice.lineage).
    derived = tuple(changed_dependants(new.facts or {}, [c.path for c in facts if c.new is not None]))
    # A price resting on a derived fact that no longer follows from its inputs rests on a figure nobody computed.
    findings = tuple(recheck_all(new.facts)) if on_head and new.facts else ()
    return FileChange(
        rel, kind, name, status, old.errors, new.errors, facts, meta, (old.content, new.content), serving, derived,
        findings, head.files[rel] if on_head and facts else None, renamed_from or renamed_to,
        claims, inside, layout,
    )


#: The most differences of a checkpoint entry's content a review names (:func:`content_changes`); the rest counted.
MAX_CONTENT_CHANGES = 5
#: The most characters of a metadata value a content change shows (:func:`content_changes`).
MAX_CONTENT_VALUE = 60


def content_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """What differs between two contents of a checkpoint entry (:func:`passprice.pins.checkpoint_content`: its
    ``metadata`` key → [type, value] and its ``tensors`` [name, GGML type id, dims]), one line a difference, tensors
    first in HEAD's table order, then metadata keys sorted: ``tensor blk.0.ffn_down.weight: type Q6_K → Q4_K``,
    ``tensor NAME: dims [2048, 640] → [2048, 512]``, ``tensor NAME added (Q4_K [1024, 640])``, ``tensor NAME
    removed``, ``tensors reordered``, ``metadata KEY: VALUE → VALUE`` (each value its JSON, cut to
    :data:`MAX_CONTENT_VALUE` characters), ``metadata KEY added``/``removed``; the first :data:`MAX_CONTENT_CHANGES`,
    then ``and N more``. Names are shown as :func:`passprice.tables.printable` shows them. Walkthrough 30: an entry
    whose one tensor turned Q6_K → Q4_K, re-locked, read only its two content digests in the review, so nothing
    said what moved the price."""
    from passprice.ggml import type_name
    from passprice.tables import printable

    def value(v: Any) -> str:
        text = json.dumps(v, ensure_ascii=False, sort_keys=True)
        return printable(text if len(text) <= MAX_CONTENT_VALUE else text[:MAX_CONTENT_VALUE - 1] + "…")

    was = {t[0]: (t[1], list(t[2])) for t in old.get("tensors", [])}
    now = {t[0]: (t[1], list(t[2])) for t in new.get("tensors", [])}
    out: list[str] = []
    for name, (type_id, dims) in now.items():
        shown = printable(str(name))
        if name not in was:
            out.append(f"tensor {shown} added ({type_name(type_id)} {dims})")
            continue
        old_type, old_dims = was[name]
        if old_type != type_id:
            out.append(f"tensor {shown}: type {type_name(old_type)} → {type_name(type_id)}")
        if old_dims != dims:
            out.append(f"tensor {shown}: dims {old_dims} → {dims}")
    out += [f"tensor {printable(str(name))} removed" for name in was if name not in now]
    if not out and [t[0] for t in old.get("tensors", [])] != [t[0] for t in new.get("tensors", [])]:
        out.append("tensors reordered")
    before, after = old.get("metadata", {}), new.get("metadata", {})
    for key in sorted({*before, *after}):
        shown = printable(str(key))
        if key not in before:
            out.append(f"metadata {shown} added ({value(after[key][1])})")
        elif key not in after:
            out.append(f"metadata {shown} removed")
        elif before[key] != after[key]:
            out.append(f"metadata {shown}: {value(before[key][1])} → {value(after[key][1])}"
                       + (f" (type {before[key][0]} → {after[key][0]})" if before[key][0] != after[key][0] else ""))
    if len(out) > MAX_CONTENT_CHANGES:
        out = [*out[:MAX_CONTENT_CHANGES], f"and {len(out) - MAX_CONTENT_CHANGES:,} more"]
    return tuple(out)


#: A checkpoint entry's claims: what it says of the GGUF file it was imported from and where that came from, none of
#: which the pricer reads (its tensor table and metadata are the entry's ``content``).
CLAIM_KEYS = (("entry", "source"), ("entry", "origin"), ("entry", "imported_by"), ("header", "sha256"))


def checkpoint_claims(document: Mapping[str, Any]) -> dict[str, str]:
    """A schema-valid checkpoint entry's claims, key path → value as text: ``entry.source``, ``entry.origin``,
    ``entry.imported_by``, ``header.sha256`` and each shard's ``header.shards.N.file`` and ``.sha256`` (N from 1).
    None of them is read by the pricer, so an edit of one alone leaves the entry's content digest as it was, and a
    header ``sha256`` rewritten by hand said only "the entry was rewritten" (session 17): the review names each."""
    claims = {f"{table}.{key}": str(document[table][key])
              for table, key in CLAIM_KEYS if key in document.get(table, {})}
    for n, shard in enumerate(document.get("header", {}).get("shards", ()), start=1):
        for key in ("file", "sha256"):
            if key in shard:
                claims[f"header.shards.{n}.{key}"] = str(shard[key])
    # A long array's element digest (``tokenizer.ggml.tokens``' sha256) is what tells a re-tokenized copy from the
    # model (passprice.scopes): not in the content digest a lock pins, so dropped by hand it read "the entry was
    # rewritten" alone (slip round 38).
    metadata = document.get("metadata", {})
    for key, value in metadata.items() if isinstance(metadata, Mapping) else ():
        if isinstance(value, Mapping) and "sha256" in value:
            claims[f"metadata.{key}.sha256"] = str(value["sha256"])
    return claims


#: A checkpoint entry's header keys that say where the GGUF file's parts lie (:func:`checkpoint_layout`).
LAYOUT_KEYS = ("version", "byte_order", "header_bytes", "alignment", "data_offset")
#: A shard's keys that say where its parts lie (:func:`checkpoint_layout`).
SHARD_LAYOUT_KEYS = ("header_bytes", "data_offset", "tensor_count")


def checkpoint_layout(document: Mapping[str, Any]) -> dict[str, str]:
    """A schema-valid checkpoint entry's layout, key path → value as text: ``entry.name``, the header's
    :data:`LAYOUT_KEYS`, each shard's :data:`SHARD_LAYOUT_KEYS` (``header.shards.N.KEY``, N from 1) and each tensor's
    ``offset`` and ``shard`` (``tensors.NAME.offset``). Where the file's parts lie, not what they are: none is in the
    entry's content digest (:func:`passprice.pins.checkpoint_content`: metadata, tensor names, types and dims) nor
    read by the pricer, and none is a claim (:func:`checkpoint_claims`), so an edit of one alone read "content
    unchanged (the entry was rewritten …)" and nothing more (session 27: three tensor offsets edited by hand)."""
    out: dict[str, str] = {}
    entry, header = document.get("entry", {}), document.get("header", {})
    if "name" in entry:
        out["entry.name"] = str(entry["name"])
    out |= {f"header.{key}": str(header[key]) for key in LAYOUT_KEYS if key in header}
    for n, shard in enumerate(header.get("shards", ()), start=1):
        out |= {f"header.shards.{n}.{key}": str(shard[key]) for key in SHARD_LAYOUT_KEYS if key in shard}
    for tensor in header.get("tensors", ()):
        for key in ("offset", "shard"):
            if key in tensor and "name" in tensor:
                out[f"tensors.{tensor['name']}.{key}"] = str(tensor[key])
    return out


def layout_changes(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[str, ...]:
    """What differs between two layouts of a checkpoint entry (:func:`checkpoint_layout`), for keys on both sides
    (a tensor added or removed is a content change): tensors' offsets and shards counted (``3 tensor offsets
    changed``), each other key with its values (``header.alignment 32 → 64``), at most :data:`MAX_CONTENT_CHANGES`
    lines and how many more. Raises nothing."""
    from passprice.errors import escaped

    changed = [k for k in old if k in new and old[k] != new[k]]
    out: list[str] = []
    for suffix, what in ((".offset", "tensor offset"), (".shard", "tensor shard")):
        n = sum(k.startswith("tensors.") and k.endswith(suffix) for k in changed)
        if n:
            out.append(f"{_n(n, what)} changed")
    out += [f"{k} {escaped(old[k])[:MAX_CONTENT_VALUE]} → {escaped(new[k])[:MAX_CONTENT_VALUE]}"
            for k in changed if not k.startswith("tensors.")]
    if len(out) > MAX_CONTENT_CHANGES:
        out = [*out[:MAX_CONTENT_CHANGES], f"and {len(out) - MAX_CONTENT_CHANGES:,} more"]
    return tuple(out)


def layout_line(f: FileChange) -> str:
    """The review's line for a checkpoint entry's layout changes (:attr:`FileChange.layout`): ``checkpoint NAME:
    3 tensor offsets changed; no price rests on them``."""
    return f"checkpoint {spelled(f.name)}: {', '.join(f.layout)}; no price rests on them"


#: What a checkpoint entry whose recorded digests the change drops or rewrites asks
#: (:attr:`passprice.review.verdict.Diff.digests_dropped`).
DROPPED_DIGESTS = ("a digest that identifies the header is dropped or rewritten while the entry stays: it decides "
                   "which headers count as this checkpoint (a record scoped to it, a lock pinning it by header "
                   "sha256), and one dropped lets another header in; re-import the entry from its GGUF file "
                   "(`passprice import`), or say which file holds it")


def looks_as(name: str) -> str:
    """``name`` as a reviewer reads it: NFC, case-folded (:func:`passprice.files.fold`), characters that do not
    print dropped and Cyrillic or Greek letters read as the Latin ones they look like
    (:data:`passprice.addedfacts._LOOK_ALIKE`): ``h200_sхm_141gb`` with a Cyrillic ``х`` reads ``h200_sxm_141gb``."""
    from passprice.addedfacts import _LOOK_ALIKE, _TYPESET
    from passprice.files import fold

    return fold(name.translate(_TYPESET).translate(_LOOK_ALIKE))


def lookalike_records(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each record file ``files`` adds (a card, drafting method, routing record, stack, checkpoint entry, serving,
    source or lock) whose name reads as another record's of its kind on HEAD (:func:`looks_as`), by path: what a
    reviewer must verify, quoting both files. Slip round 38: a card copied as ``facts/cards/h200_sхm_141gb.toml``
    (a Cyrillic ``х``) read "added", its name spelled, with nothing saying which registered card it reads as."""
    added = [f for f in files if f.status == "added" and f.kind not in ("other", "schema")]
    if not added:
        return {}
    by_kind: dict[str, dict[str, list[str]]] = {}
    for rel in sorted(head.files):
        kind, name = file_kind(rel)
        if kind not in ("other", "schema"):
            by_kind.setdefault(kind, {}).setdefault(looks_as(name), []).append(rel)
    out = {}
    for f in added:
        others = [rel for rel in by_kind.get(f.kind, {}).get(looks_as(f.name), []) if rel != f.path]
        if others:
            before = [rel for rel in others if rel in base.files]
            shown = ", ".join(spelled(rel) for rel in (before or others)[:3])
            out[f.path] = (f"{spelled(f.path)} is a new {f.kind} whose name reads as that of {shown}"
                           f"{' (registered before this change)' if before else ''}: a reviewer sees one name for "
                           "two records; is it a new record, or a copy standing in for the other? rename it so the "
                           "names read apart")
    return out


def dropped_digests(f: FileChange) -> tuple[str, ...]:
    """The digest claims (:func:`checkpoint_claims`: ``header.sha256``, a shard's ``sha256``, a long array's element
    digest) that checkpoint entry ``f``, changed on both sides, records on BASE and HEAD drops or rewrites, each as
    ``KEY OLD → NEW`` (``(none)`` for a dropped one). A digest rewritten counts only where the content (what the
    pricer reads) did not change: a re-import of another file changes both, and its content change is reviewed on
    its own (the locks pinning it fail). Empty for another file."""
    before, after = f.claims
    if f.kind != "checkpoint" or f.status != "changed" or before is None or after is None:
        return ()
    same = f.content[0] is not None and f.content[0] == f.content[1]
    return tuple(f"{k} {_claim_change(k, before[k], after.get(k))}" for k in before
                 if k.endswith("sha256") and (k not in after or (same and after[k] != before[k])))


def _claim_change(key: str, old: str | None, new: str | None) -> str:
    """A claim's change as the review shows it: a digest cut to 12 hex digits and an ellipsis, a text by what changed
    in it (:func:`passprice.textchange.text_change`), a claim added or removed as ``(none)``."""
    from passprice.textchange import text_change

    if key.endswith("sha256"):
        old, new = (v if v is None or len(v) <= 16 else v[:12] + "…" for v in (old, new))
    if old is None or new is None:
        return f"{old or '(none)'} → {new or '(none)'}"
    return text_change(old, new)


def claims_changed(f: FileChange) -> str:
    """The review's line for a checkpoint entry's changed claims (:func:`checkpoint_claims`): each key with its
    value before and after."""
    before, after = f.claims
    said = ", ".join(f"{k} {_claim_change(k, (before or {}).get(k), (after or {}).get(k))}" for k in f.meta)
    return (f"claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): {said}")


def card_renames(base: Side, head: Side, paths: Iterable[str]) -> dict[str, str]:
    """The records holding facts of ``paths`` (the changed files) a change renamed — cards, drafting methods, routing
    records, serving stacks (slip round 51: a stack renamed read "removed" and its 14 facts "added") —: HEAD's added
    file → BASE's removed one of the same kind, when a serving registered on both sides names the removed one on BASE
    and the added one on HEAD, or else when both files' own tables (``[card]``, ``[method]``, ``[routing]``,
    ``[stack]``) give the same ``name`` (the record's title); each file paired once, by path."""
    from passprice.schema import kind_cap, toml_loads
    from passprice.unlocked import SERVINGS, named_files

    kinds = {"card": "card", "draft": "method", "routing": "routing", "stack": "stack"}
    paths = list(paths)
    gone = {file_kind(p): p for p in paths if file_kind(p)[0] in kinds and p in base.files and p not in head.files}
    added = {file_kind(p): p for p in paths if file_kind(p)[0] in kinds and p in head.files and p not in base.files}
    if not gone or not added:
        return {}
    out: dict[str, str] = {}
    for rel in sorted(set(base.files) & set(head.files)):
        if not rel.startswith(f"{SERVINGS}/") or file_kind(rel)[0] != "serving":
            continue
        was, now = named_files(base.files[rel]), named_files(head.files[rel])
        for old in sorted(was - now):
            for new in sorted(now - was):
                if old[0] == new[0] and old in gone and new in added and added[new] not in out \
                        and gone[old] not in out.values():
                    out[added[new]] = gone[old]

    def title(kind: str, data: bytes) -> str | None:
        if len(data) > kind_cap(kind):
            return None
        try:
            table = toml_loads(data.decode("utf-8")).get(kinds[kind])
        except (UnicodeDecodeError, ValueError):
            return None
        name = table.get("name") if isinstance(table, dict) else None
        return name if isinstance(name, str) else None

    titles = {rel: (key[0], title(key[0], base.files[rel])) for key, rel in sorted(gone.items())
              if rel not in out.values()}
    for key, new_rel in sorted(added.items()):
        if new_rel in out:
            continue
        now_title = title(key[0], head.files[new_rel])
        match = next((rel for rel, (kind, t) in titles.items() if kind == key[0] and t is not None
                      and t == now_title and rel not in out.values()), None)
        if match is not None:
            out[new_rel] = match
    return out


def side_toml(data: bytes, kind: str) -> dict[str, Any]:
    """The TOML document in ``data`` (the bytes of a ``kind`` file of a side: a schema's name, ``card``, ``lock``
    ...), parsed as that kind's own read parses it but not validated: refused unparsed past the kind's cap
    (:func:`passprice.schema.kind_cap`) or its shape's (:func:`passprice.schema.shape_problem`), then
    :func:`passprice.schema.toml_loads` (a dotted key of thousands of parts
    refused before ``tomllib`` spends their square; nesting past the recursion limit and an integer of thousands of
    digits refused as a syntax error). Every look a review takes at a side's file as plain TOML goes through here: a
    file that does not read as its kind (a lock whose digest fails, any lock file of a side, an added card) is looked
    at unvalidated, and a bare ``tomllib.loads`` of a hostile one raised ``RecursionError`` or ``ValueError`` past
    each caller's ``except TOMLDecodeError`` (a traceback), or parsed a 50 MB file whole (slip 54). Raises
    ``tomllib.TOMLDecodeError`` for each refusal (every caller passes over a file that does not parse),
    ``UnicodeDecodeError`` for bytes that are not UTF-8, :class:`InputError` only for a cap variable set wrong."""
    if len(data) > schema.kind_cap(kind):
        raise schema.toml_refusal(f"larger than {schema.kind_cap(kind):,} bytes, the most a {kind} file may hold")
    problem = None if kind == "checkpoint" else schema.shape_problem(kind, data)
    if problem is not None:  # tomllib's cost is its separators' (tests/test_bound111.py)
        raise schema.toml_refusal(problem)
    return schema.toml_loads(data.decode("utf-8"))


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _macs_read(fact: Fact) -> str | None:
    """For a fact in multiply-adds whose locator states its figure only in operations (FLOP or op, two a
    multiply-add: :func:`passprice.addedfacts.stated_with_unit`), how the one reads as the other: ``its locator's 67
    TFLOPS is 33.5 TMAC/s, two operations a multiply-add``; ``None`` otherwise (a locator stating it in MACs, or
    stating no such figure). A new user's ``vector`` 33.5 TMAC/s under ``'FP32 67 TFLOPS'`` was asked whether the
    place states 33.5 TMAC/s, the factor of two left to the reader (tests/test_fix166.py). Raises nothing."""
    from passprice.addedfacts import _in_macs, stated_with_unit
    from passprice.derivations import quantity

    try:
        mine = quantity(fact.amount, fact.unit)
    except (InputError, ValueError, OverflowError):
        return None
    if not any(name == "MAC" for name, _ in mine.dims) or not fact.locator:
        return None
    found = None
    for shown, _, value, dims, _ in stated_with_unit(fact.locator):
        if dims == mine.dims:
            if value == mine.value:
                return None  # stated in MACs itself
            continue
        as_macs, macs_dims = _in_macs(value, dims)
        if found is None and macs_dims == mine.dims and as_macs == mine.value:
            found = shown
    if found is None:
        return None
    return f"its locator's {escaped(found)} is {fact.describe()}, two operations a multiply-add"


def _moved_cancelling(c: FactChange) -> str:
    """For a fact whose derivation input moved where that input cancels out of the formula (the H200's ``scale``,
    ``lanes * (vector / (lanes * lane_rate))``, lanes 16896 → 20000: the same 33.5 Tcycle/s), ``audit``'s
    `` — lanes cancels (+1, −1): its figure does not move scale`` (:func:`passprice.audit.cancels_text`); else
    empty."""
    from passprice.audit import cancelled, cancels_text
    from passprice.derivations import Derivation

    if c.old is None or c.new is None:
        return ""
    old, new = c.old.derivation, c.new.derivation
    if not isinstance(old, Derivation) or not isinstance(new, Derivation):
        return ""
    was = {i.name: (i.amount, i.unit) for i in old.inputs}
    now = {i.name: (i.amount, i.unit) for i in new.inputs}
    if not any(was.get(name) != now.get(name) for name, _ in cancelled(c.new)):
        return ""
    return cancels_text(c.path, c.new)


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100.0 * x:+.4g} %"


#: The errors a fit reports (:class:`passprice.derivations.RunDerivation`'s ``errors``), as a re-fit's change names
#: them: each of its three groups (the key's prefix and its words) with its mean and max.
_FIT_ERRORS = (("in_sample", "in sample"), ("card_out", "card held out"), ("checkpoint_out", "checkpoint held out"))


def _error_move(a: float, b: float) -> str:
    """A fit's relative error ``a`` → ``b`` (fractions) as percentages, to 3 significant figures, or to as many
    more (up to 6) as tell two unequal errors apart: walkthrough 55's re-fit read ``max 18 % → 18 %`` for 0.1801 →
    0.1799."""
    digits = 3
    while digits < 6 and f"{100 * a:.{digits}g}" == f"{100 * b:.{digits}g}":
        digits += 1
    return f"{100 * a:.{digits}g} % → {100 * b:.{digits}g} %"


def run_change(old: Any, new: Any, moved_with: Sequence[str] = ()) -> str | None:
    """What a re-fit changed in a fact's derivation from measured runs (both
    :class:`passprice.derivations.RunDerivation`; ``None`` for any other pair): the runs added, removed and whose figure
    changed, each by id with its tokens/s, then the fit's errors before → after. Walkthrough 21: a run added read,
    as a text change, as one run replaced by another (``[xd3.h100_pcie_80gb.8b → w21.h100_sxm5_80gb.8b]-q4km.tg512 =
    [145.55 → 168.2]``), the runs being listed in id order; a method, figure, digits or tolerance changed is left to
    the text change (``None``). Each group of errors that moved is named (walkthrough 55: a re-fit leaving the
    checkpoint-held-out mean unmoved read ``card held out mean 6.9 % → 6.83 %, max 20.4 % → 20.1 %, max 49.8 % →
    50 %``, the last max the checkpoint held out's). ``moved_with``: the records the same change moved that the runs
    are priced on (:attr:`FactChange.moved_with`), named as why a fit of the same runs moved (left45)."""
    from passprice.derivations import FIGURES, RunDerivation
    from passprice.fits import relative_move

    if not isinstance(old, RunDerivation) or not isinstance(new, RunDerivation):
        return None
    if (old.method, old.figure, old.digits, old.tolerance) != (new.method, new.figure, new.digits, new.tolerance):
        return None
    before = {r.run: r.value for r in old.runs}
    after = {r.run: r.value for r in new.runs}

    def listed(items: list[str]) -> str:
        return ", ".join(items[:6]) + (f" and {len(items) - 6:,} more" if len(items) > 6 else "")

    added = [f"{k} = {v:g}" for k, v in after.items() if k not in before]
    removed = [f"{k} = {v:g}" for k, v in before.items() if k not in after]
    moved = [f"{k} = {before[k]:g} → {v:g} ({relative_move(float(before[k]), float(v))})"
             for k, v in after.items() if k in before and before[k] != v]
    n0, n1 = len(before), len(after)
    runs = f"measured runs (each run's {FIGURES.get(new.figure, new.figure)})"
    parts = [f"{n0:,} → {n1:,} {runs}" if n0 != n1 else f"the same {n1:,} {runs}"]
    if added:
        parts.append(f"added {listed(added)}")
    if removed:
        parts.append(f"removed {listed(removed)}")
    if moved:
        parts.append(f"changed {listed(moved)}")
    if not (added or removed or moved) and moved_with:
        parts.append(f"no run added, removed or changed: re-fitted after this change moved what its runs are priced "
                     f"with, {'; '.join(moved_with)} (not a hand edit: HEAD's passprice check re-fits it)")
    elif not (added or removed or moved):
        # walkthrough 55: the RTX 4090's bandwidth corrected and llamacpp-cuda-2405 re-fitted read only this, the
        # reviewer left to guess why a fit of the same runs moved
        parts.append("no run added, removed or changed (a fit of the same runs moves with the card, checkpoint or "
                     "routing facts they are priced with, or was edited by hand: HEAD's passprice check re-fits it)")
    errors = []
    for prefix, group in _FIT_ERRORS:
        said = []
        for stat in ("mean", "max"):
            a, b = (old.errors or {}).get(f"{prefix}_{stat}"), (new.errors or {}).get(f"{prefix}_{stat}")
            if a is not None and b is not None and a != b:
                said.append(f"{stat} {_error_move(a, b)}")
        if said:  # the group named on its first error said: a max alone once read as the group before it's
            errors.append(f"{group} {', '.join(said)}")
    if errors:
        parts.append("the fit's |error| of tokens/s: " + ", ".join(errors))
    return "; ".join(parts)

