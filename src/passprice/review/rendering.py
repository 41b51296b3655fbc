"""A :class:`~passprice.review.verdict.Diff` as people and programs read it, one format picked by :func:`render`:
the text review (:func:`diff_text`), the pull-request comment's markdown (:func:`diff_markdown`, cut to fit GitHub's
limit by :func:`bounded`, saying what was cut and how to see all of it) and the JSON (the ``Diff``'s own
:meth:`~passprice.review.verdict.Diff.to_json`). Rendering decides nothing: every mark and line shows what the
``Diff`` already holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from passprice.derivations import Derivation, Input
from passprice.errors import escaped, spelled
from passprice.facts import Fact
from passprice.locks import FloorChange, Verdict
from passprice.reproduce import same_quantity
from passprice.review.changes import (
    DROPPED_DIGESTS,
    FactChange,
    FileChange,
    _folded,
    _moved_cancelling,
    _n,
    _pct,
    claims_changed,
    layout_line,
    refit_line,
    run_change,
)
from passprice.review.impacts import LockImpact, PriceSide, _expected_tokens
from passprice.review.quotes import _cut_keeping
from passprice.review.records import EDITED_ENTRY, EXPORT_WARNING, _table
from passprice.review.verdict import (
    DUPLICATES_HEADING,
    MAX_ADDED_DETAIL,
    MAX_ADDED_DETAILS,
    MAX_FACT_DETAILS,
    MAX_FACT_ROWS,
    MAX_FACT_TABLE,
    MAX_HEAD_PROBLEMS,
    MAX_OTHER_FILES,
    MAX_SERVING_FILES,
    Diff,
    _forging,
    _unrecorded,
    _unreproducing,
    duplicates_elsewhere,
)
from passprice.sourcechange import EXCERPT_CHANGES
from passprice.tables import decimals_pair, json_text, markdown_code, markdown_prose, markdown_table, markdown_text, si

if TYPE_CHECKING:
    from passprice.comment import Links


#: What a review says when HEAD changes passprice's own code (:attr:`passprice.review.verdict.Diff.code_files`).
CODE_WARNING = ("the verdict is sound only from BASE's passprice (the CI workflow installs the base branch's to "
                "review): HEAD's code could pass its own change")
#: What a review says when HEAD changes one of :data:`passprice.review.verdict.INSTALL_FILES`.
INSTALL_WARNING = ("these decide which passprice checks and reviews the registry: once merged, the one they install "
                   "reviews every later pull request, so read them as code (guard them with a CODEOWNERS rule)")


def show(fact: Fact | None) -> str:
    """A fact's value as written with its unit (:meth:`Fact.describe`), ``–`` for none."""
    return "–" if fact is None else fact.describe()


def _shorts(lock: Any) -> tuple[str, str]:
    """A lock's tokens/s before and after, as :meth:`passprice.review.impacts.PriceSide.short` gives them, with more
    decimals when one decimal shows two different prices alike (a fact recomputed moved 10,354.4 by +4.0e-05 %: the row
    read "10,354.4 → 10,354.4 ❌ price moved", session 9's walkthrough): the fewest decimals, up to 17, that tell them
    apart."""
    b, a = lock.before, lock.after
    if getattr(lock, "head_unread", False):
        return b.short(), "– (not judged: HEAD's lock file does not read)"
    if b.price is not None and a.price is not None:
        x, y = float(b.price["tokens_per_s"]), float(a.price["tokens_per_s"])
        if x != y and f"{x:,.1f}" == f"{y:,.1f}":
            for digits in range(2, 18):
                shown = f"{x:,.{digits}f}", f"{y:,.{digits}f}"
                if shown[0] != shown[1]:
                    return shown
    return b.short(), a.short()


#: The refusals of pricing under a serving stack, not at the card's limit (:class:`passprice.stacks.BeyondStack`).
_STACK_REFUSALS = frozenset({"BeyondStack"})


def _refused_by_stack(lock: Any) -> str | None:
    """The word after a lock row's tokens/s where a side is refused by the lock's serving stack
    (:data:`_STACK_REFUSALS`): ``  (refused by its stack llamacpp-cuda-2405, not at the card's limit)``; it read
    ``996.1 → refused: BeyondStack (limit)`` (tests/test_fix154.py). ``None`` otherwise. Raises nothing."""
    for side in (lock.after, lock.before):
        if side.refusal is not None and side.refusal.get("refusal") in _STACK_REFUSALS:
            stack = next((s.price.get("stack") for s in (lock.after, lock.before) if s.price is not None
                          and isinstance(s.price.get("stack"), str)), None)
            return f"  (refused by its stack{f' {stack}' if stack else ''}, not at the card's limit)"
    return None


def _expected_shift(lock: Any) -> str | None:
    """A lock made under a serving stack: its expected tokens/s on BASE → HEAD, the relative change, the stack and
    the expected tokens/s the lock file records (walkthrough 9: the review showed the limit alone, so a change that
    moved the stack's price showed none of it); ``None`` for a lock without a stack."""
    sides = [side.price.get("expected") if side.price is not None else None for side in (lock.before, lock.after)]
    if not any(isinstance(e, Mapping) for e in sides):
        return None
    stack = next(side.price.get("stack") for side in (lock.after, lock.before)
                 if side.price is not None and isinstance(side.price.get("expected"), Mapping))
    x, y = (float(e["tokens_per_s"]) if isinstance(e, Mapping) else None for e in sides)
    shown = [f"{v:,.1f}" if v is not None else "–" for v in (x, y)]
    if x is not None and y is not None:  # decimals enough for the pair to read as its move (walkthrough 56)
        shown = list(decimals_pair(x, y))
    rel = f"  ({_pct(y / x - 1.0)})" if x and y is not None else ""
    recorded = (lock.recorded or {}).get("expected")
    places = max(1, len(shown[0].partition(".")[2]), len(shown[1].partition(".")[2]))
    tail = (f", recorded {float(recorded['tokens_per_s']):,.{places}f}" if isinstance(recorded, Mapping)
            and isinstance(recorded.get("tokens_per_s"), int | float) else "")
    return f"{shown[0]} → {shown[1]}{rel} under stack {stack}{tail}{_expected_unrouted(lock, sides[1], x, y)}"


def _expected_unrouted(lock: Any, expected: object, x: float | None, y: float | None) -> str:
    """Why a changed routing fact leaves a stack lock's expected price where it was, when that is why: the expected
    price routes one token-row a pass (a stack fitted at batch 1 prices its best there, while the limit's best batch
    routes hundreds), which reads exactly its k experts a layer whatever the skew (D(1) = k, docs/DESIGN.md Routing),
    ``"; unmoved by routing.hot_experts: 1 token-row a pass reads its 8 experts a layer whatever the routing"``; else
    ``""``. Walkthrough 49: a routing record's change read ``177.8 → 177.8 (+0 %)`` beside the limit's move,
    unexplained. Raises nothing."""
    routing = [p for p in getattr(lock, "changed", ()) if p.startswith("routing.")]
    routed = (lock.after.price or {}).get("routing") if lock.after.price is not None else None
    if not routing or x is None or x != y or not isinstance(expected, Mapping) or not isinstance(routed, Mapping):
        return ""
    if expected.get("batch") != 1 or expected.get("rows_per_sequence") != 1:
        return ""
    return (f"; unmoved by {', '.join(routing)}: 1 token-row a pass reads its {routed.get('used')} experts a layer "
            "whatever the routing")


def _recomputed_shift(lock: LockImpact) -> str | None:
    """A lock resting on derived facts that do not follow, priced again with them recomputed
    (:attr:`passprice.review.impacts.LockImpact.recomputed`): ``tokens/s 996.1 → 996.2 (+0.008243 %), as HEAD wrote it
    +1.875 %, once streams.read (0.9162), streams.append (0.8487) follow from their inputs`` (and the expected price
    under a re-fitted stack), or why it could not be; ``None`` for a lock resting on none."""
    side = lock.recomputed
    if side is None:
        return None
    # a stack fact's re-fitted value is said once, in "the re-fit moves …" (written → re-fitted)
    facts = ", ".join(f"{f.path} ({f.expected})" if f.expected is not None and not (
        lock.refitted and f.path.startswith("stack.")) else f.path for f in lock.unsound)
    if side.price is None:
        why = side.error or (f"refused: {side.refusal.get('refusal')}" if side.refusal is not None else "not priced")
        return f"not priced with {facts} recomputed: {why}"
    before, after = _shorts(attrs.evolve(lock, after=side))
    rel = f" ({_pct(lock.recomputed_relative)})" if lock.recomputed_relative is not None else ""
    written = f", as HEAD wrote it {_pct(lock.relative)}" if lock.relative is not None else ""
    shift = f"tokens/s {before} → {after}{rel}{written}"
    expected = _expected_tokens(side)
    if expected is not None:
        was = _expected_tokens(lock.before)
        erel = f" ({_pct(lock.recomputed_expected_relative)})" if lock.recomputed_expected_relative is not None else ""
        shift += f"; expected {was:,.1f} → {expected:,.1f}{erel}" if was is not None else f"; expected {expected:,.1f}"
    stack = any(f.path.startswith("stack.") for f in lock.unsound) or bool(lock.refitted)
    how = "recomputed and the stack re-fitted" if stack else "recomputed"
    verb = "follow from their inputs" if len(lock.unsound) > 1 else "follows from its inputs"
    fits = f"; the re-fit moves {', '.join(lock.refitted)}" if lock.refitted else ""
    return f"{shift}, once {facts} {verb} ({how} as passprice would write them{fits})"


def _change_cell(lock: Any) -> str:
    """A lock row's change column: the move of the price the lock pins, its expected tokens/s under its stack where
    it locks one (``+0.2191 % expected``), with the card's limit's move beside it (``(limit +0 %)``); else the
    limit's move; ``–`` when a side did not price."""
    expected = lock.expected_relative
    if expected is None:
        return _pct(lock.relative) or "–"
    limit = f" (limit {_pct(lock.relative)})" if lock.relative is not None else ""
    return f"{_pct(expected)} expected{limit}"


def _provenance(c: FactChange) -> str:
    if c.old is None or c.new is None:
        fact = c.new or c.old
        return fact.provenance.value if fact is not None else ""
    if c.old.provenance is c.new.provenance:
        return c.new.provenance.value + _unchecked_now(c)
    flag = " (WEAKER)" if c.weakened else " (stronger)"
    return f"{c.old.provenance.value} → {c.new.provenance.value}{flag}{_unchecked_now(c)}"


def _unchecked_now(c: FactChange) -> str:
    """``; its quote can no longer be checked: nvidia-h200-datasheet has no stored text`` for a fact whose quotes
    moved off a stored excerpt (:attr:`passprice.review.changes.FactChange.unchecked_now`), said on its line beside its
    provenance (a stronger one read as the change's only headline, tests/test_fix166.py); empty otherwise."""
    return f"; its quote can no longer be checked: {'; '.join(c.unchecked_now)}" if c.unchecked_now else ""


def _what(c: FactChange) -> str:
    """The change column: added/removed, else every part that changed (:func:`passprice.factparts.change_said`, the
    words ``fact set`` prints): the relative change of the value, the unit's move, then provenance, citation, note
    and derivation (``+1.2 %, citation, note changed``); ``rewritten, same quantity`` for a figure written in
    another unit. Walkthrough 57: a fact re-cited with a new note read ``note changed``, the citation left out."""
    from passprice.factparts import change_said

    if c.change != "changed" or c.old is None or c.new is None:
        return c.change
    if same_quantity(c.old, c.new):
        unit = f": unit {c.old.unit} → {c.new.unit}" if c.old.unit != c.new.unit else ""
        return f"rewritten, same quantity{unit}"
    rel = c.relative
    words = {"value": _pct(rel) if rel is not None else "value changed", "unit": f"unit {c.old.unit} → {c.new.unit}"}
    return change_said(c.old, c.new, words=words) or "as written changed"


def _cite(c: FactChange) -> str:
    if c.old is None or c.new is None:
        fact = c.new or c.old
        return fact.citation() if fact is not None else ""
    if c.old.citation() == c.new.citation():
        return "unchanged"
    return f"{c.old.citation()} → {c.new.citation()}"


def _seconds(side: PriceSide) -> str:
    return si(float(side.price["pass_s"]), "s") if side.price is not None else "–"


def _binds(lock: LockImpact) -> str:
    b = lock.before.price["binds"] if lock.before.price is not None else "–"
    a = lock.after.price["binds"] if lock.after.price is not None else "–"
    return str(a) if a == b else f"{b} → {a}"


def _held(lock: LockImpact) -> str:
    if lock.added:
        return "new"
    if lock.verdict_before is None:
        return "not judged"
    return "held" if lock.held else "already unheld"


def _weakest(verdict: Verdict) -> str:
    """The weakest provenance a price rests on and the facts at it, as ``check`` names them: ``estimated (scale)``."""
    return f"{verdict.provenance.value} ({', '.join(verdict.weakest)})" if verdict.weakest else verdict.provenance.value


def _weakest_moved(lock: LockImpact) -> str | None:
    """The weakest provenance the lock's price rests on, BASE's → HEAD's, when the change moved it (its level or the
    facts at it): ``assumed (routing.hot_experts, routing.hot_share) → estimated (scale) (stronger)``; ``None`` when
    either side was not judged or nothing moved. A new user's routing record raised ``assumed`` → ``measured`` lifted
    the weakest provenance of two locked prices, and no line of the text or markdown review said so (only ``--json``'s
    ``locks[].before.provenance``: tests/test_review_contradicted.py). Raises nothing."""
    before, after = lock.verdict_before, lock.verdict
    if before is None or after is None or lock.added:
        return None
    if (before.provenance, tuple(before.weakest)) == (after.provenance, tuple(after.weakest)):
        return None
    flag = (" (stronger)" if before.provenance.weaker_than(after.provenance) else
            " (WEAKER)" if after.provenance.weaker_than(before.provenance) else "")
    return f"{_weakest(before)} → {_weakest(after)}{flag}"


def _added_terms(lock: LockImpact) -> str:
    """What a reviewer of an added lock needs beside its tokens/s, from the price its file records: the batch, the
    term it binds on and the weakest provenance it rests on (``check`` prints the last as the lock's floors line), as
    ``' at batch 64, binds on memory, weakest provenance estimated (scale)'``; empty when nothing was recorded."""
    recorded = lock.recorded or {}
    batch = recorded.get("batch")
    parts = [f"binds on {recorded['binds']}"] if isinstance(recorded.get("binds"), str) else []
    if lock.verdict is not None:
        parts.append(f"weakest provenance {_weakest(lock.verdict)}")
    return (f" at batch {batch:,}" if isinstance(batch, int) else "") + "".join(f", {p}" for p in parts)


def _recorded(lock: LockImpact) -> str:
    """The tokens/s the lock files record: BASE's → HEAD's when the lock was re-locked, one figure otherwise; for a
    lock file edited by hand (:attr:`passprice.review.impacts.LockImpact.recorded_edited`) BASE's → HEAD's file's
    figure, ``(edited by hand)``."""
    before = lock.recorded_before.get("tokens_per_s") if lock.recorded_before is not None else None
    after = lock.recorded.get("tokens_per_s") if lock.recorded is not None else None
    if after is None and lock.recorded_edited is not None:
        # a lock file edited by hand: HEAD's file's figure, marked, not BASE's alone (issue 13)
        was = f"{before:,.1f} → " if isinstance(before, int | float) else ""
        return f"{was}{lock.recorded_edited:,.1f} (edited by hand)"
    shown = [f"{v:,.1f}" for v in (before, after) if isinstance(v, int | float)]
    if len(shown) == 2 and shown[0] == shown[1] and before == after:
        return shown[0]
    if len(shown) == 2 and shown[0] == shown[1]:
        # a re-lock moving the price by less than a tenth read "5,166.6 → 5,166.6" beside the BASE and HEAD
        # columns' 5,166.56 and 5,166.63 (walkthrough 41): the fewest decimals, up to 17, that tell them apart
        for digits in range(2, 18):
            shown = [f"{float(v):,.{digits}f}" for v in (before, after) if isinstance(v, int | float)]
            if shown[0] != shown[1]:
                break
    return " → ".join(shown) or "–"


def _inputs(lock: LockImpact) -> str:
    """The inputs that changed for a lock: the facts it rests on by path, then checkpoint, serving, pricing model (the
    lock files' pinned digests, ``pricing-model digest 111111111111… → 5a914e0c2b7d…``, where they differ: slip52)."""
    bits = [f"routing record {lock.rerouted[0]} → {lock.rerouted[1]}"] if lock.rerouted is not None else []
    bits += [_named(lock, path) for path in lock.changed]
    bits += [i for i in lock.inputs if i != "facts" and (i != "pricing model" or lock.model_pins is None)]
    if lock.model_pins is not None:
        was, now = lock.model_pins
        bits.append(f"pricing-model digest {was.removeprefix('sha256:')[:12]}… → {now.removeprefix('sha256:')[:12]}…")
    return ", ".join(bits)


def _named(lock: LockImpact, path: str) -> str:
    """A lock's fact ``path`` as the review names it: a ``routing.*`` fact with its record,
    ``routing.hot_experts (qwen3-30b-a3b-measured)`` (walkthrough 49: two changed records left it ambiguous)."""
    if path.startswith("routing.") and lock.routing_record is not None:
        return f"{path} ({lock.routing_record})"
    return path


#: The most characters of a locator a lock's ``cites`` line shows (cut at a word).
CITE_CHARS = 100


#: The most characters of a derivation input's locator a lock's ``cites`` line shows (cut at a word).
INPUT_CITE_CHARS = 60


def _input_cite(i: Input, own: str | None) -> str:
    """One derivation input as a ``cites`` line names what it rests on, its value as written first: ``bandwidth
    4.89 TB/s: fact memory.bandwidth``, ``dot 4.48 TB/s: SOURCE, LOCATOR…`` (the fact's own source, ``own``, where
    it names none; the locator cut at a word to :data:`INPUT_CITE_CHARS`, the quote holding the input's figure kept
    whole: :func:`passprice.review.quotes._cut_keeping`), ``bits 8: constant``."""
    head = f"{i.name} {i.shown()}"
    if i.kind == "fact":
        return f"{head}: fact {i.fact}"
    if i.kind == "constant":
        return f"{head}: constant"
    source = i.source or own or "(no source)"
    # left47: the quote holding the input's figure is kept whole, as a runs line's is (left46)
    return f"{head}: {source}" + (f", {_cut_keeping(i.locator, INPUT_CITE_CHARS, (i.amount,))}" if i.locator
                                  else "")


def _runs_moved(lock: LockImpact) -> str:
    """The review's line naming the measured runs whose corrected figure moved ``lock``'s stack fit
    (:attr:`passprice.review.impacts.LockImpact.runs_moved`), each with its move and its citation as HEAD records it,
    cut at a word as :func:`_cites` cuts a locator but keeping whole the quote that holds the run's figure
    (:func:`passprice.textchange.cut_keeping_figure`): ``re-fitted from the runs changed: ID 145.55 → 154.55 tokens/s
    (+6.183 %): SOURCE, LOCATOR``, at most 6, then how many more."""
    from passprice.fits import relative_move
    from passprice.review.runs import _run_quote_held
    from passprice.textchange import cut_keeping_figure

    said = []
    for run, before, after, source, locator in lock.runs_moved[:6]:
        # left47: a locator still quoting the run's old figure, not its new one, is said so, the quote holding the
        # old figure kept whole (as a card fact's is, walk55): the run corrected, its citation was not
        # (a run's quote read as ``check`` reads it: :func:`passprice.sources.run_quote_figures`)
        stale = bool(locator) and _run_quote_held(locator, before) and not _run_quote_held(locator, after)
        # left46: the quote holding the run's figure whole (cut at 100 characters it lost `154.55 ± 0.80`)
        cited = f"{source or '(no source)'}" + (
            f", {cut_keeping_figure(locator, CITE_CHARS, before if stale else after)}" if locator else "")
        if stale:
            cited += f" (its locator still quotes {before:g}, not {after:g}: does the place it names say {after:g}?)"
        said.append(f"{run} {before:g} → {after:g} tokens/s ({relative_move(before, after)}): {cited}")
    more = len(lock.runs_moved) - 6
    return (f"its stack re-fitted from {_n(len(lock.runs_moved), 'run')} changed (the figures to check in their "
            f"sources): {'; '.join(said)}" + (f"; and {more:,} more (under the file above)" if more > 0 else ""))


def _cites(lock: LockImpact) -> str:
    """The citations HEAD's price rests on for ``lock``'s changed facts whose citation the change rewrote or whose
    derivation it changed (the review's ``cites`` line): ``routing.hot_experts (qwen3-30b-a3b-measured):
    gpu-container-handbook-routing-derisk, table 'The real result — Qwen3 routes near-uniform', row…``, each locator
    cut at a word to :data:`CITE_CHARS` characters (the Facts section gives it whole); a derived fact by its formula
    and each input's value and citation, short: ``streams.read = dot / bandwidth [dot 4.48 TB/s: SOURCE, LOCATOR…;
    bandwidth 4.89 TB/s: fact memory.bandwidth]`` (session 37: a share ``fact recompute`` rewrote from a changed
    bandwidth had none; a fact re-cited and re-derived gives its citation, then ``= FORMULA […]``); a fact whose
    value moved under the citation it kept, ``routing.hot_share (…): value changed, citation unchanged: SOURCE,
    LOCATOR…`` (walkthrough 46: it had no entry). Empty when no citation, derivation or cited value changed."""
    from passprice.textchange import cut_at_word

    def one(path: str, source: str | None, locator: str | None, recited: bool, derivation: Derivation | None,
            moved: bool, gives: str | None, figures: tuple[float, ...]) -> str:
        said = ""
        # left47: the figure checked against the kept citation (new or old, quoted or not) is never cut off
        cited = f"{source or '(no source)'}" + (f", {_cut_keeping(locator, CITE_CHARS, figures)}" if locator else "")
        if recited:
            said = f": {cited}"
        elif derivation is None and moved:
            # walkthrough 46: hot_share 0.9 → 0.85 under its old source and locator, the figure to check there
            said = f": value changed, citation unchanged: {cited}"
        if derivation is not None:
            inputs = "; ".join(_input_cite(i, source) for i in derivation.in_formula_order())
            said += f" = {derivation.formula} [{inputs}]"
            if gives is not None:
                # left47: a value edited by hand under the derivation it kept is not what its inputs give
                said += f" (its inputs give {gives}: the value written does not follow from them)"
        return f"{_named(lock, path)}{said}"

    # left45: a fitted fact's source states no figure of it: its check is the fit (its runs and errors), said once
    # for the facts of a re-fit, not "value changed, citation unchanged" of each as if the figure were in the source
    refit = [cite for cite in lock.cites if cite[0] in lock.fitted and not cite[3] and cite[4] is None and cite[5]]
    said = [one(*cite) for cite in lock.cites if cite not in refit]
    if refit:
        by_cite = dict.fromkeys((source, locator) for _, source, locator, *_ in refit)
        cited = "; ".join(f"{source or '(no source)'}" + (f", {cut_at_word(locator, CITE_CHARS)}" if locator else "")
                          for source, locator in by_cite)
        said.append(f"{', '.join(_named(lock, cite[0]) for cite in refit)}: re-fitted under the citation "
                    f"{'they' if len(refit) > 1 else 'it'} kept ({cited}), which states no figure of a fit: check "
                    f"the fit, its runs and errors, under the stack's file")
    return "; ".join(said)


def _removal(lock: LockImpact, code: Callable[[str], str] = str) -> str:
    """One line on a removed lock: what it locked and recorded, and the floors its removal drops or why none
    (``code`` marks up names: backticks in markdown)."""
    what = f"serving {code(lock.serving_name)}" if lock.serving_name else "no registered serving"
    head = (
        f"removed {code(lock.name)} ({code(lock.path)}, {lock.kind} lock of {what}, recorded {_recorded(lock)} "
        "tokens/s)"
    )
    if lock.dropped:
        if lock.retired:  # renamed on HEAD
            return (f"{head}: its removal drops {_n(len(lock.dropped), 'floor')} of serving "
                    f"{code(lock.serving_name or '')}: {lock.retired}; lock it there at the floors it had")
        return (
            f"{head}: its removal drops {_n(len(lock.dropped), 'floor')} of serving {code(lock.serving_name or '')}, "
            "which is still registered; keep a lock of the serving, or remove the serving with it"
        )
    return f"{head}: no floor dropped, {lock.retired}"


def _dropped(change: FloorChange) -> str:
    """``published → none (no lock of the serving left)`` or ``published → estimated (the strictest left)``."""
    if change.after is None:
        return f"{change.was.value} → none (no lock of the serving left floors it)"
    return f"{change.was.value} → {change.now.value} (the strictest floor left)"


def _model_line(d: Diff) -> str | None:
    if d.base_code is None or d.head_code is None:
        return None
    base = d.base_code.model.removeprefix("sha256:")[:12]
    head = d.head_code.model.removeprefix("sha256:")[:12]
    if not d.model_changed:
        return None
    moved = [lock.name for lock in d.reviews if lock.moved and "pricing model" in lock.inputs]
    effect = (
        f"it moves {_n(len(moved), 'locked price')} ({', '.join(moved)})"
        if moved
        else "every locked price is re-priced the same"
    )
    return f"pricing model changed: BASE {base}… → HEAD {head}…; {effect}"


def diff_text(d: Diff) -> str:
    """The diff for people: the sides and a summary line; each changed file with its facts (old → new value,
    relative change, provenance with a weakening flagged, citation), checkpoint content or serving fields; each
    affected lock (what changed for it, floors, recorded and re-priced tokens/s, pass time, bind, review); floors
    loosened or tightened; the pricing model and the code each side was priced with; the unaffected locks; every
    file that does not read, with its errors. The first line, heading the summary line, starts with
    :func:`summary_mark`'s ``⚠️`` or ``❌`` as the markdown's ``⚠️ **passprice diff** BASE → HEAD: SUMMARY`` does
    (nothing for ✅); the summary sentence itself is ``--json``'s ``summary``, unmarked."""
    mark = summary_mark(d)
    lines = [("" if mark == "✅" else f"{mark} ") + f"passprice diff: {d.base.label} → {d.head.label}", d.summary()]
    listed_errors = d.errors_shown()
    for f in d.files:
        if not f.holds_facts and f.compared and f.kind not in ("checkpoint", "serving"):
            continue  # listed with the locks, or at the end
        on_base, on_head, left_out = listed_errors.get(f.path, ((), (), 0))
        if not f.compared and not on_base and not on_head:
            continue  # past the errors a review lists: counted below
        lines.append("")
        renamed = ""
        if f.renamed is not None and f.kind == "checkpoint":  # checkpoint_renames: the same content digest
            renamed = f" (renamed {'from' if f.status == 'added' else 'to'} {f.renamed}: the same content)"
        elif f.renamed is not None:
            renamed = (f" (renamed from {f.renamed}: its facts compared with that file's)" if f.status == "added"
                       else f" (renamed to {f.renamed}: its facts compared there)")
        lines.append(f"{f.path} ({f.kind} {spelled(f.name)}): {f.status}{renamed}")
        for which, errors in (("BASE", on_base), ("HEAD", on_head)):
            if errors:
                lines.append(f"  does not read on {which}:")
                lines += [f"    {e}" for e in errors]
        if left_out:
            lines.append(f"    and {_n(left_out, 'more error')}: passprice check lists each")
        if f.holds_facts and not f.compared:
            lines.append("  facts not compared: the file does not read on a side")
        if f.meta and f.kind == "checkpoint":
            lines.append(f"  {claims_changed(f)}{d.origin_pinned_line(f.path)}")
        elif f.meta:
            lines.append(f"  [{_table(f.kind)}] changed: {', '.join(f.meta)}")
        if f.path in d.made_real:
            lines.append(f"  to verify: {d.made_real[f.path]}")
        if f.path in d.relabelled:
            lines.append(f"  to verify: {d.relabelled[f.path]}")
        if f.path in d.title_contradicts:
            lines.append(f"  to verify: {d.title_contradicts[f.path]}")
        if f.kind == "card" and f.path in d.added_records:
            lines.append(f"  {d.added_records[f.path]}")
        if f.path in d.hypothetical:
            lines.append(f"  to verify: {d.hypothetical[f.path]}")
        if f.path in d.relabelled_records:
            lines.append(f"  to verify: {d.relabelled_records[f.path]}")
        if f.path in d.rerouted:
            lines.append(f"  to verify: {d.rerouted[f.path]}")
        if f.path in d.stale_descriptions:
            lines.append(f"  to verify: {d.stale_descriptions[f.path]}")
        if f.path in d.spans:
            lines.append(f"  {d.spans[f.path]}")
        if f.kind == "routing" and f.path in d.added_records:
            lines.append(f"  {d.added_records[f.path]}")
        if f.path in d.widened:
            lines.append(f"  to verify: {d.widened[f.path]}")
        if f.kind == "checkpoint" and f.compared:
            lines.append(f"  content   {_content(f)}")
            lines += [f"  inside    {line}" for line in f.inside]
            if f.layout:
                lines.append(f"  layout    {layout_line(f)}")
            if f.path in d.entries_edited:
                lines.append(f"  to verify: {EDITED_ENTRY}")
            if f.path in d.digests_dropped:
                lines.append(f"  to verify: {', '.join(d.digests_dropped[f.path])}: {DROPPED_DIGESTS}"
                             f"{d.header_pinned_line(f.path)}")
            if f.path in d.added_records:
                lines.append(f"  what      {d.added_records[f.path]}")
        if f.serving:
            lines += [f"  {c}" for c in f.serving]
        elif f.kind == "serving" and f.status == "changed" and f.compared and f.renamed is None:
            # slip 53: a comment added to a serving file read "changed" and nothing more
            lines.append("  comments or layout only: every field of the serving reads as before")
        lines += [line for a in d.added_servings if a.path == f.path for line in a.text_lines()]
        rows = [c for c in f.facts if not _folded(f, c)]
        width = max((len(c.path) for c in rows), default=0)
        said: dict[tuple[str, str, str], str] = {}  # a note's or derivation's change → the first fact shown with it
        for c in rows:
            head = f"  {c.path.ljust(width)}  {show(c.old)} → {show(c.new)}"
            what = _what(c)
            lines.append(f"{head}  ({what})  {_provenance(c)}")
            lines.append(f"  {'':{width}}  cite: {_cite(c)}")
            if c.contradicted is not None:
                lines.append(f"  {'':{width}}  ❌ contradicted: {c.contradicted}")
            if c.to_verify is not None:
                lines.append(f"  {'':{width}}  to verify: {c.to_verify}")
            for key in ("note", "derivation"):
                if key in c.fields and c.change == "changed":
                    old = c.old.derivation_text() if key == "derivation" and c.old else getattr(c.old, key)
                    new = c.new.derivation_text() if key == "derivation" and c.new else getattr(c.new, key)
                    runs = (run_change(c.old.derivation, c.new.derivation, c.moved_with)
                            if key == "derivation" and c.old is not None and c.new is not None else None)
                    if runs is not None:  # a re-fit: the runs it gained, lost or saw change, and its errors
                        old, new = "runs: " + (old or ""), runs
                        seen = said.setdefault((key, old, new), c.path)
                        said_as = runs if seen == c.path else f"the same change as {seen}'s"
                        lines.append(f"  {'':{width}}  {key}: {said_as}")
                        continue
                    cancels = _moved_cancelling(c) if key == "derivation" else ""
                    lines.append(f"  {'':{width}}  {key}: {_field_change(said, key, c.path, old, new)}{cancels}")
            derived = [d for d in f.dependants if d.input == c.path]
            if derived:
                lines.append(f"  {'':{width}}  derived from it: {'; '.join(d.describe() for d in derived)}")
                lines += [
                    f"  {'':{width}}    {d.finding.message}"
                    for d in derived
                    if d.finding is not None and d.finding.kind != "stale"
                ]
        refit = refit_line(f, rows)
        if refit is not None:
            lines.append(f"  {refit}")
        shown = {d.fact for d in f.dependants}
        lines += [f"  does not follow: {x.message}" for x in f.findings if x.path not in shown]
    files_left = d.errors_left_out()[1]
    if files_left:
        lines += ["", f"and {_n(files_left, 'more changed file')} that {'does' if files_left == 1 else 'do'} not read:"
                  " passprice check lists each"]
    # left51: the locks the change touches, then those out of date already on BASE it does not touch, each under its
    # own heading, as the summary counts them
    ordered = [lock for lock in d.locks if not lock.behind] + [lock for lock in d.locks if lock.behind]
    for i, lock in enumerate(ordered):
        if i == 0 or lock.behind != ordered[i - 1].behind:
            lines += ["", "locks out of date already on BASE (this change does not touch them)" if lock.behind
                      else "locks affected"]
        lines.append(f"  {lock.name} ({lock.path}, card {lock.card}, {lock.kind}): {_review(d, lock)}")
        lines.append(f"    changed   {_inputs(lock) or '–'}")
        if lock.cites:
            lines.append(f"    cites     {_cites(lock)}  (as HEAD cites them; whole under the file above)")
        if lock.runs_moved:
            lines.append(f"    runs      {_runs_moved(lock)}")
        lines.append(f"    floors    {_held(lock)} → {lock.floors()}")
        weakest = _weakest_moved(lock)
        if weakest is not None:
            lines.append(f"    weakest   {weakest}")
        expected = _expected_shift(lock)
        # A lock made under a stack pins its expected price (the `expected` line below): this line is the
        # card's limit, said so as the markdown row's `(limit +0 %)` (it read `(+0 %)`, taken for the lock's move).
        limit_said = "limit " if expected is not None else ""
        rel = (f"  ({limit_said}{_pct(lock.relative)})" if lock.relative is not None else
               _refused_by_stack(lock) or "  (limit)" if expected is not None else "")
        if lock.unsound_limit:
            rel += "  HEAD's price rests on derived facts that do not follow: not a price to publish"
        before, after = _shorts(lock)
        lines.append(f"    tokens/s  {before} → {after}{rel}")
        recomputed = _recomputed_shift(lock)
        if recomputed is not None:
            lines.append(f"    recomputed  {recomputed}")
        if lock.alone:
            lines.append(f"    alone     {_alone(lock)}  (each changed fact alone: {_alone_what(lock)})")
        elif lock.alone_absent is not None:
            lines.append(f"    alone     {lock.alone_absent}")
        lines.append(f"    recorded  {_recorded(lock)}")
        if expected is not None:
            kind = "stack facts" if lock.unsound_kind == "stack facts" else "derived facts"
            stale = (f"  HEAD's expected price rests on {kind} that do not follow: not a price to publish"
                     if lock.unsound_expected else "")
            lines.append(f"    expected  {expected}{stale}")
        lines.append(f"    pass      {_seconds(lock.before)} → {_seconds(lock.after)}")
        lines.append(f"    binds     {_binds(lock)}")
        for line in lock.serving:
            lines.append(f"    serving   {line}")
        if lock.by_header is not None:
            lines.append(f"    to verify {lock.by_header}")
        if lock.added and lock.verdict is not None:
            lines.append(f"    weakest   {_weakest(lock.verdict)}")
        for change in lock.policy:
            lines.append(f"    policy    {lock.policy_line(change)}{' (LOOSENED)' if change.loosens else ''}")
        if lock.removed:
            lines.append(f"    removed   {_removal(lock)}")
            lines += [f"    dropped   floor on {f.path}: {_dropped(f)}" for f in lock.dropped]
        for label, side in (("BASE", lock.before), ("HEAD", lock.after)):
            if side.refusal is not None:
                lines.append(f"    {label} refuses: {side.refusal.get('message', side.refusal.get('refusal'))}")
            if side.error is not None and not (lock.added and label == "BASE") and not (
                (lock.removed or lock.head_unread) and label == "HEAD"
            ):
                lines.append(f"    {label} cannot price: {side.error}")
        if lock.note:
            lines.append(f"    note      {lock.note}")
        lines += [f"    {'edited' if i == 0 else '':<10}{edit}" for i, edit in enumerate(lock.hand_edits)]
    if d.duplicates:
        lines += ["", DUPLICATES_HEADING]
        lines += [f"  {line}" for line in d.duplicates]
    if d.head_warnings:
        lines += ["", "HEAD's passprice check warns (not a failure)"]
        lines += [f"  warning: {line}" for line in d.head_warnings]
        if d.head_warnings_left_out:
            lines.append(f"  and {_n(d.head_warnings_left_out, 'more warning')}: passprice check on HEAD lists each")
        if d.duplicates:
            lines.append(f"  {duplicates_elsewhere(d)}")
    if d.code_files:
        lines += ["", f"passprice's own code changed: {CODE_WARNING}"]
        lines += [f"  {path}" for path in d.code_files]
    if d.install_files:
        lines += ["", f"how passprice is installed changed: {INSTALL_WARNING}"]
        lines += [f"  {path}" for path in d.install_files]
    if d.export_rules:
        lines += ["", f"export rules changed: {EXPORT_WARNING}"]
        lines += [f"  {line}" for line in d.export_rules]
    model = _model_line(d)
    if model or any(code is not None and not code.own for code in (d.base_code, d.head_code)):
        lines.append("")
        if model:
            lines.append(model)
        lines += [
            "priced with " + code.describe(label)
            for code, label in ((d.base_code, "BASE"), (d.head_code, "HEAD"))
            if code is not None
        ]
    if d.cited:
        lines += ["", "sources the added and changed facts cite"]
        lines += [f"  {source_id}: {line}" if source_id != "…" else f"  {line}" for source_id, line in d.cited.items()]
    if d.on_changed_sources:
        lines.append("")
        lines.append(f"{_n(len(d.on_changed_sources), 'lock')} resting on a source whose document changed, to verify "
                     f"(sources below): {', '.join(lock.name for lock in d.on_changed_sources)}")
    if d.on_changed_claims:
        lines.append("")
        lines.append(f"{_n(len(d.on_changed_claims), 'lock')} priced from a checkpoint entry whose claims changed, to "
                     f"verify (checkpoints above): {', '.join(lock.name for lock in d.on_changed_claims)}")
    if d.on_recited_runs:
        lines.append("")
        lines.append(f"{_n(len(d.on_recited_runs), 'lock')} priced under a stack fitted from measured runs to verify "
                     f"(other files above): {', '.join(lock.name for lock in d.on_recited_runs)}")
    if d.unaffected:
        lines.append("")
        lines.append(f"{_n(len(d.unaffected), 'lock')} unaffected: {', '.join(lock.name for lock in d.unaffected)}")
    if d.unlocked or d.unlocked_left_out:
        from passprice.unlocked import text_lines

        lines += text_lines(d.unlocked, d.unlocked_left_out)
    if d.check_counted:
        listed, more, _ = d.check_shown
        lines += ["", f"{d.check_line()}:"]
        lines += [f"  {p}" for p in listed]
        if more:
            lines.append(f"  and {_n(more, 'more problem')}: passprice check on HEAD lists each")
        elsewhere = d.check_elsewhere_line()
        if elsewhere:
            lines.append(f"  {elsewhere}")
    others = [
        f for f in d.files if not f.holds_facts and f.compared and f.kind not in ("checkpoint", "serving", "lock")
    ]
    if others:
        lines.append("")
        lines.append("other files changed")
        lines += [f"  {f.path} ({_other_status(f)})"
                  + (f": {d.added_records[f.path]}" if f.path in d.added_records else "") for f in others]
    if d.lookalikes:
        lines += ["", "new records named like another"]
        lines += [f"  to verify: {line}" for line in d.lookalikes.values()]
    if d.sources:
        lines += ["", "sources whose document changed" if not any(s.added for s in d.sources)
                  else "sources added that facts now cite" if all(s.added for s in d.sources)
                  else "sources whose document changed, or added that facts now cite"]
        for s in d.sources:
            lines.append(f"  {s.id}: to verify: {s.to_verify}")
            lines += [f"    {place}" for place in s.places]
            if s.excerpt_changes:
                lines.append(f"    {EXCERPT_CHANGES}")
                lines += [f"      {line}" for line in s.excerpt_changes]
    # A file's path and name are shown, never obeyed: a card file ev\u202eil.toml added on HEAD was printed raw.
    return "\n".join(escaped(line) for line in lines)


def _quiet(f: FileChange) -> bool:
    """True for a card, drafting method, routing record or serving stack HEAD changed with no fact, no key of its
    own table and no finding changed: comments or layout alone. The text review names it (``FILE (card C):
    changed``); the pull-request comment listed nothing of it and read "no fact changed" (walkthrough 41)."""
    return (f.holds_facts and f.status == "changed" and f.compared and not f.facts and not f.meta
            and not f.findings and f.renamed is None)


def _other_status(f: FileChange) -> str:
    """How an other file changed, as its line says it: its status, and for a measurement file renamed
    (:func:`passprice.review.runs.measurement_renames`) removed on BASE, where it went (``removed: renamed to
    PATH``); for a record whose facts did not change (:func:`_quiet`), ``changed: comments or layout only, no fact``."""
    if f.kind == "other" and f.status == "removed" and f.renamed is not None:
        return f"removed: renamed to {f.renamed}"
    if _quiet(f):
        return "changed: comments or layout only, no fact"
    return f.status


def _content(f: FileChange) -> str:
    before, after = (c.removeprefix("sha256:")[:12] + "…" if c else "–" for c in f.content)
    if f.content[0] is not None and f.content[0] == f.content[1]:
        return f"unchanged ({before}: the entry was rewritten, what the pricer reads was not)"
    return f"{before} → {after}"


def _field_change(said: dict[tuple[str, str, str], str], key: str, path: str, old: str | None, new: str | None) -> str:
    """A fact's note or derivation ``key`` changed from ``old`` to ``new``, for the text diff: what changed in it
    (:func:`passprice.textchange.text_change`), or, when an earlier fact of the same file changed it the same way
    (``said``, updated: a stack's re-fit rewrites every fact's derivation alike), "the same change as PATH's"."""
    from passprice.textchange import text_change

    seen = said.setdefault((key, old or "", new or ""), path)
    if seen != path:
        return f"the same change as {seen}'s"
    if not old or not new:
        return f"{old or '(none)'} → {new or '(none)'}"
    return text_change(old, new)


def _cite_cell(c: FactChange) -> str:
    """The facts table's cite column: the citation itself is shown below the table, on its own line."""
    if c.change != "changed":
        return "below"
    moved = c.old is not None and c.new is not None and c.old.citation() != c.new.citation()
    return "changed, below" if moved else "unchanged"


def _added_markdown(d: Diff) -> dict[str, str]:
    """Each added record's description (:attr:`passprice.review.verdict.Diff.added_records`) as the pull-request comment
    shows it, by path, in the order of :attr:`passprice.review.verdict.Diff.files`: Markdown text
    (:func:`passprice.tables.markdown_text`) of at most :data:`passprice.review.verdict.MAX_ADDED_DETAIL` characters,
    cut with its length said; past :data:`passprice.review.verdict.MAX_ADDED_DETAILS` characters in all, a line that the
    text review describes it."""
    out: dict[str, str] = {}
    room = MAX_ADDED_DETAILS
    for f in d.files:
        text = d.added_records.get(f.path)
        if text is None or f.path in out:
            continue
        shown = markdown_cut(text, min(room, MAX_ADDED_DETAIL)) or "described in the text review (`passprice diff`)"
        room = max(room - len(shown), 0)
        out[f.path] = shown
    return out


def markdown_cut(text: str, room: int) -> str:
    """``text`` as Markdown text (:func:`passprice.tables.markdown_text`) in at most ``room`` characters: whole when it
    fits, else its longest start that fits with ``… (N characters: the text review (`passprice diff`) shows it
    whole)``; empty when not even that fits. A character widens 1 to 8 times (``@`` is ``@&#8203;``)."""
    shown = markdown_text(text)
    if len(shown) <= room:
        return shown
    tail = f"… ({len(text):,} characters: the text review (`passprice diff`) shows it whole)"
    low, high = 0, len(text)  # the longest start of the text whose Markdown fits beside the tail
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if len(markdown_text(text[:mid])) <= room - len(tail) else (low, mid - 1)
    return markdown_text(text[:low]) + tail if low else ""


def _fact_details(d: Diff, links: Links | None) -> list[str]:
    """Below the facts table, one item a changed fact: where it is (a link to its lines on HEAD when the repository
    is known), the new citation on its own line (and the old one when it changed), what the reviewer must verify in
    the source (:attr:`passprice.review.changes.FactChange.to_verify`), and the note; items past
    :data:`passprice.review.verdict.MAX_FACT_DETAILS` characters are counted, not shown (the facts table above lists
    every fact)."""
    out: list[str] = []
    size = 0
    for i, item in enumerate(_fact_items(d, links)):
        size += sum(len(line) + 1 for line in item)
        if size > MAX_FACT_DETAILS:
            more = len(d.fact_changes) - i
            out.append(f"- the citations, notes and derivations of {_n(more, 'more changed fact')}: the text review "
                       "(`passprice diff`) shows each")
            break
        out += item
    return out


def _fact_items(d: Diff, links: Links | None) -> Iterator[list[str]]:
    """:func:`_fact_details`'s items, one a changed fact in the order of
    :attr:`passprice.review.verdict.Diff.fact_changes`, each its Markdown lines."""
    said: dict[tuple[str, str, str], str] = {}  # per file: a citation or derivation (change) → its first fact
    for f, c in d.fact_changes:
        out: list[str] = []
        where = markdown_code(f.path)
        if links is not None and c.new is not None:
            where = links.fact_link(f.path, c.path, f.fact_lines(c.path))
        out.append(f"- {markdown_code(f.shown_name)} {markdown_code(f.lock_path(c.path))} ({c.change}) in {where}")
        if f.path in d.stale_descriptions and (f.path, "described", "") not in said:
            said[(f.path, "described", "")] = c.path  # once a file, under its first changed fact
            out.append(f"  - ⚠️ **to verify**: {markdown_prose(d.stale_descriptions[f.path])}")
        recited = c.old is not None and (c.new is None or c.old.citation() != c.new.citation())
        # the old citation a stack's re-fitted facts share, once a file too (a new user's 13 facts each repeated it,
        # where the README says the comment gives their shared citation once; tests/test_fix188.py)
        was = said.setdefault((f.path, "cite (was)", c.old.citation()), c.path) if recited and c.old else None
        if c.new is not None:
            label = "cite (new)" if recited else "cite"
            first = said.setdefault((f.path, "cite", c.new.citation()), c.path)
            if first != c.path and was == first:  # both shared with the same fact: one line
                out.append(f"  - **cite (new and was)**: as {markdown_code(first)}'s")
                was = None
            elif first != c.path:  # a stack's facts all cite its calibration: said once a file
                out.append(f"  - **{label}**: as {markdown_code(first)}'s")
            else:
                out.append(f"  - **{label}**: {markdown_text(c.new.citation())}")
        if was is not None and c.old is not None:
            if was != c.path:
                out.append(f"  - **cite (was)**: as {markdown_code(was)}'s")
            else:
                out.append(f"  - **cite (was)**: {markdown_text(c.old.citation())}")
        if c.contradicted is not None:
            out.append(f"  - ❌ **contradicted**: {markdown_prose(c.contradicted)}")
        if c.to_verify is not None:
            out.append(f"  - ⚠️ **to verify**: {markdown_prose(c.to_verify)}")
        note = c.new.note if c.new is not None else None
        if note:
            out.append(f"  - **note**: {markdown_text(note)}")
        elif c.old is not None and c.old.note and c.new is not None:
            out.append(f"  - **note** removed (was: {markdown_text(c.old.note)})")
        if c.change == "changed" and "derivation" in c.fields and c.old is not None and c.new is not None:
            old, new = c.old.derivation_text() or "", c.new.derivation_text() or ""
            runs = run_change(c.old.derivation, c.new.derivation, c.moved_with)
            if runs is not None:  # a re-fit: its runs and errors, not a text change of the runs listed in id order
                old, new = "runs: " + old, runs
            first = said.setdefault((f.path, "derivation: " + old, new), c.path)
            if first != c.path:
                out.append(f"  - **derivation**: the same change as {markdown_code(first)}'s")
            elif runs is not None:
                out.append(f"  - **derivation**: {markdown_text(runs)}")
            elif old and new:
                from passprice.textchange import text_change

                out.append(f"  - **derivation**: {markdown_text(text_change(old, new))}")
            else:
                out.append(f"  - **derivation**: {markdown_text(old or '(none)')} → {markdown_text(new or '(none)')}")
        yield out


def _alone(lock: LockImpact) -> str:
    """What each changed fact alone does to ``lock``'s recorded price
    (:attr:`passprice.review.impacts.LockImpact.alone`), the review's ``alone`` line: ``memory.bandwidth: tokens/s
    +1.875 %; routing.hot_share: tokens/s -4.894 %``. A changed input with changed facts derived from it
    (:attr:`passprice.review.impacts.LockImpact.joint`) is one entry, in the place of its first member:
    ``memory.bandwidth with the 2 facts derived from it (streams.read, streams.append): tokens/s +0.003051 %``."""
    from passprice.reproduce import grouped_moves

    # the routing record's facts, one entry in the place of the first (left48); the grouping reproduce's too
    routing = lock.routing_alone
    return "; ".join(line for _, line in grouped_moves(
        lock.alone, lock.joint, (routing.paths, routing.describe()) if routing is not None else None))


#: What the ``alone`` moves are, said beside them.
ALONE = "the lock's pinned inputs with only it as HEAD has it"
#: The same, of a lock the change re-locked: the moves are priced from BASE's copy of it.
ALONE_BASE = "BASE's lock's pinned inputs with only it as HEAD has it"


def _alone_what(lock: LockImpact) -> str:
    """What ``lock``'s ``alone`` moves are: :data:`ALONE`, or :data:`ALONE_BASE` for a re-locked lock."""
    what = ALONE_BASE if lock.alone_base else ALONE
    return (what + (", or it with the facts derived from it" if lock.joint else "")
            + (", or the routing record's facts at once" if lock.routing_alone is not None else ""))


def _relock_note(lock: LockImpact, forged: bool = False, pins: bool = False, unrecorded: bool = False
                 ) -> str | None:
    """What the pull-request comment tells the author to run for a lock the review fails or asks to re-pin, as a
    code span to paste (:func:`passprice.enforce.command_span`): the re-lock loosening the floors a fact fell below
    (:func:`passprice.enforce.relock_command`), ``passprice lock --update -o LOCK`` for a lock that does not record
    HEAD's price (or pins a changed fact as before), or that after restoring a lock file edited by hand; ``None``
    for any other lock. Until slip round 28 only stderr gave the command, and a pull request's author reads the
    comment. ``forged``: the lock's HEAD file does not reproduce from its own pinned inputs
    (:func:`passprice.review.verdict._unreproducing`; slip round 50: such a lock's expected price forged 237.4 → 250
    tokens/s was told "its price was out of date already on BASE"); ``pins``: its pins were edited by hand
    (:func:`passprice.review.verdict._forging`, slip round 51); ``unrecorded``: its digest is in no record of HEAD's
    list of pricing models (:func:`passprice.review.verdict._unrecorded`, slip 58)."""
    from passprice.enforce import command_span, relock_command

    update = command_span(["passprice", "lock", "--update", "-o", lock.path])
    if lock.removed:
        return None
    if lock.head_unread:
        edited = f"; the edit changed {'; '.join(lock.hand_edits)}" if lock.hand_edits else ""
        return (f"restore its file as BASE has it (`git checkout BASE -- FILE`), then re-lock it with {update}"
                f"{edited}")
    if forged:
        return ("its file does not reproduce from its own pinned inputs (edited by hand?): restore it as BASE has it "
                f"(`git checkout BASE -- FILE`), or re-lock it with {update}")
    if pins and lock.added:  # BASE has no file to restore (walkthrough 42)
        return f"{PINS_OF_AN_ADDED_LOCK}: re-lock it with {update}"
    if pins:
        return ("its pins were edited by hand (one no registry holds, or one BASE's copy pinned dropped): restore its "
                f"file as BASE has it (`git checkout BASE -- FILE`), or re-lock it with {update}")
    if unrecorded:
        from passprice.modellist import UNRECORDED_SAYS

        return (f"{UNRECORDED_SAYS} (edited by hand, its digest recomputed?): re-lock it with {update} (with --force "
                "and --require PATH=PROVENANCE to loosen a floor: the review then shows it loosened)")
    if lock.after.gone or lock.checkpoint_changed:
        return None
    if lock.verdict is not None and not lock.verdict.holds and lock.after.price is not None:
        command = relock_command(lock.verdict, lock.serving_name, lock.path)
        return ("restore the fact below its floor, or accept it by re-locking with that floor loosened (the review "
                f"then shows the loosened floor): {command}")
    if lock.stale and lock.after.price is not None and not lock.unsound:
        why = "the change moved its price" if lock.unreviewed else "its price was out of date already on BASE"
        return f"{why} and its file records the old one: once the move is reviewed, re-lock it with {update}"
    if lock.drifted and not lock.stale:
        return f"it pins a changed fact as before the change: re-pin it for `check --frozen` with {update}"
    return None


#: A lock this change adds pinning what no side of it holds: most often locked on a commit of the change before a
#: later one edited a fact it pins, not edited by hand. Walkthrough 42: an MI325X card, its serving and lock committed
#: on a branch, then its bandwidth edited, was reviewed against ``main`` as "its pins were edited by hand … restore
#: its file as BASE has it (`git checkout BASE -- FILE`)", a file BASE has not.
PINS_OF_AN_ADDED_LOCK = ("it pins what no side of the change holds (locked before a later commit of the change edited "
                         "a fact it pins, or edited by hand)")


def _review(d: Diff, lock: LockImpact) -> str:
    """A lock's review verdict, or, for a lock file of HEAD that does not reproduce from its own pinned inputs
    (:func:`passprice.review.headlocks.unreproduced`: edited by hand), that, whatever its price says."""
    if _unreproducing(d, lock):
        return "does NOT reproduce from its own pinned inputs (edited by hand?): see HEAD fails passprice check"
    # a pin no side holds is a rule of the review's own, listed under "HEAD fails the review's rules" (check_line)
    if _forging(d, lock) and lock.added:
        return f"{PINS_OF_AN_ADDED_LOCK}: see HEAD fails the review's rules"
    if _forging(d, lock):
        return ("its pins were edited by hand (one no registry holds, or one BASE's copy pinned dropped): see HEAD "
                "fails the review's rules")
    if _unrecorded(d, lock):
        from passprice.modellist import UNRECORDED_SAYS

        return f"{UNRECORDED_SAYS} (edited by hand, its digest recomputed?): see HEAD fails passprice check"
    return lock.review()


def summary_mark(d: Diff) -> str:
    """The mark heading a diff's summary, in the markdown comment and (but ✅) in the text's first line: ``❌`` when it
    fails (:attr:`passprice.review.verdict.Diff.exit_status` not 0), ``⚠️`` when it passes with something for a reviewer
    (a fact weakened or to verify in its source, such as a value moved under a locator still quoting the old figure;
    floors loosened, a lock removed or drifting, a source whose document changed …), else ``✅``. One place for both
    outputs: walkthrough 106 (finding 5) read a text summary with no ⚠️ where the markdown had one. Raises nothing."""
    if d.exit_status:
        return "❌"
    return "⚠️" if (
        d.weakened or d.loosened or d.removed or d.to_verify or d.drifting or d.sources or d.duplicates
        or d.head_warnings or d.install_files or d.export_rules or d.runs_outside or d.runs_recited or d.widened
        or d.entries_edited
        or d.digests_dropped or d.lookalikes or d.by_header or d.made_real or d.relabelled or d.hypothetical
        or d.relabelled_records or d.stale_descriptions or d.title_contradicts or d.on_changed_claims
        or d.on_recited_runs or d.rerouted
    ) else "✅"


def diff_markdown(d: Diff, links: Links | None = None) -> str:
    """The diff as a pull-request comment: a summary line, then a table of fact changes with, below it, each fact's
    new citation and note on their own lines (linked to the changed lines when ``links`` knows the repository), a
    table of the locks affected (what changed for each, floors with each offending fact's elasticity, recorded and
    re-priced tokens/s, change, bind, review; each lock linked to its file), and sections for floors loosened or
    tightened, locks added or removed, checkpoint entries, servings, schemas, the pricing model, the locks
    unaffected and the files that do not read."""
    mark = summary_mark(d)
    out = [f"{mark} **passprice diff** {markdown_code(d.base.label)} → {markdown_code(d.head.label)}: {d.summary()}"]
    added_shown = _added_markdown(d)
    facts = d.fact_changes
    if facts:
        # The facts a reviewer must look at (weaker, to verify) first, then the rest in order, at most
        # MAX_FACT_ROWS; the table keeps the diff's order.
        # MAX_FACT_ROWS and MAX_FACT_TABLE characters at most.
        flagged = [i for i, (_, c) in enumerate(facts) if c.weakened or c.to_verify is not None]
        chosen: dict[int, list[str]] = {}
        used, first = 0, set(flagged)
        for i in [*flagged, *(i for i in range(len(facts)) if i not in first)]:
            f, c = facts[i]
            row = [markdown_code(f.shown_name), markdown_code(f.lock_path(c.path)), show(c.old), show(c.new), _what(c),
                   _provenance(c).replace("(WEAKER)", "⚠️ **weaker**"), _cite_cell(c)]
            used += len("| " + " | ".join(row) + " |\n")
            if len(chosen) == MAX_FACT_ROWS or used > MAX_FACT_TABLE:
                break
            chosen[i] = row
        hidden = len(facts) - len(chosen)
        unseen_flagged = sum(1 for i in flagged if i not in chosen)
        unseen = (f" ({unseen_flagged} of them weaker or to verify)" if unseen_flagged
                  else ", none weaker or to verify")
        rows = [chosen[i] for i in sorted(chosen)]
        out += [
            "",
            "#### Facts",
            "",
            markdown_table(["file", "fact", "before", "after", "change", "provenance", "cite"], rows, right=(2, 3, 4)),
            *(["", f"and {_n(hidden, 'more changed fact')}{unseen}: the text review (`passprice diff`) lists each"]
              if hidden else []),
            "",
            *_fact_details(d, links),
            *[f"- {markdown_code(f.path)}: {markdown_prose(line)}"
              for f in {f.path: f for f, _ in d.refit_unmoved}.values()
              if (line := refit_line(f, [c for c in f.facts if not _folded(f, c)])) is not None],
            *[f"- {markdown_code(f.name)} (added, {markdown_code(f.path)}): {added_shown[f.path]}"
              + (f" — ⚠️ **to verify**: {markdown_prose(d.widened[f.path][:MAX_ADDED_DETAIL])}"
                 if f.path in d.widened else "")
              for f in d.files if f.kind == "routing" and f.path in d.added_records],
            *[f"- {markdown_code(f.name)} (added, {markdown_code(f.path)}): {added_shown[f.path]}"
              + (f" — ⚠️ **to verify**: {markdown_prose(d.hypothetical[f.path][:MAX_ADDED_DETAIL])}"
                 if f.path in d.hypothetical else "")
              + (f" — ⚠️ **to verify**: {markdown_prose(d.title_contradicts[f.path][:MAX_ADDED_DETAIL])}"
                 if f.path in d.title_contradicts else "")
              for f in d.files if f.kind == "card" and f.path in d.added_records],
        ]
    if d.spans:  # walkthrough 21: a re-fit's runs against the span they were measured in
        out += ["", "#### Stack fits", ""]
        # Outside-span lines first, then at most MAX_OTHER_FILES in all (a review of hundreds of re-fitted stacks
        # had no bound here; attack round 34b's leftover).
        spans = sorted(d.spans.items(), key=lambda item: "outside" not in item[1])
        out += [f"- {'⚠️ ' if 'outside' in line else ''}{markdown_code(path)}: {markdown_prose(line)}"
                for path, line in spans[:MAX_OTHER_FILES]]
        if len(spans) > MAX_OTHER_FILES:
            out.append(f"- and {_n(len(spans) - MAX_OTHER_FILES, 'more stack')}: the text review (`passprice diff`) "
                       "lists each")
    tables = [f for f in d.files if f.meta]
    if tables:  # only the text review listed them: a stack's routes changed read "no fact changed" alone here
        out += ["", "#### Records' own tables changed", ""]
        room = MAX_ADDED_DETAILS  # a claim's text has no bound but the entry's 64 MiB (attack round 34b)
        for f in tables[:MAX_OTHER_FILES]:
            said = ((markdown_cut(claims_changed(f), min(room, MAX_ADDED_DETAIL))
                     or "claims changed: the text review (`passprice diff`) shows them")
                    + markdown_text(d.origin_pinned_line(f.path))) if f.kind == "checkpoint" \
                else f"`[{_table(f.kind)}]` {', '.join(markdown_code(k) for k in f.meta)}"
            if f.path in d.made_real:
                said += f" — ⚠️ **to verify**: {markdown_prose(d.made_real[f.path])}"
            if f.path in d.relabelled:
                said += f" — ⚠️ **to verify**: {markdown_prose(d.relabelled[f.path])}"
            if f.path in d.title_contradicts:
                said += f" — ⚠️ **to verify**: {markdown_prose(d.title_contradicts[f.path][:MAX_ADDED_DETAIL])}"
            if f.path in d.relabelled_records:
                said += f" — ⚠️ **to verify**: {markdown_prose(d.relabelled_records[f.path])}"
            if f.path in d.rerouted:
                said += f" — ⚠️ **to verify**: {markdown_prose(d.rerouted[f.path])}"
            if f.path in d.widened:
                said += " — ⚠️ **to verify**: " + (markdown_cut(d.widened[f.path], min(room, MAX_ADDED_DETAIL))
                                                  or "the text review (`passprice diff`) says what")
            room = max(room - len(said), 0)
            out.append(f"- {markdown_code(f.path)}: {said}")
        if len(tables) > MAX_OTHER_FILES:
            out.append(f"- and {_n(len(tables) - MAX_OTHER_FILES, 'more file')}: the text review (`passprice diff`) "
                       "lists each")
    renamed = [f for f in d.files if f.renamed is not None and f.status == "added" and f.kind != "other"]
    if renamed:
        out += ["", "#### Records renamed", ""]
        out += [f"- {markdown_code(f.renamed or '')} → {markdown_code(f.path)}: " + (
                "the same content (a checkpoint entry renamed)" if f.kind == "checkpoint" else
                f"its facts compared with the old file's ({_n(len(f.facts), 'fact')} changed)") for f in renamed]
    derived = [(f, dep) for f in d.files for dep in f.dependants]
    if derived:
        rows = [
            [markdown_code(f.name), markdown_code(dep.input), markdown_code(dep.fact),
             ("⚠️ " if dep.finding is not None else "") + markdown_text(dep.describe().split(": ", 1)[1]),
             markdown_prose(dep.finding.message) if dep.finding is not None else ""]
            for f, dep in derived
        ]
        out += ["", "#### Derived from changed facts", "",
                markdown_table(["file", "changed input", "derived fact", "state", "why"], rows)]
    unsound = [(f, x) for f in d.files for x in f.findings if x.path not in {dep.fact for dep in f.dependants}]
    if unsound:
        out += ["", "#### Derived facts that do not follow", ""]
        # The first MAX_HEAD_PROBLEMS, the rest counted: 130 copies of a card with their plain figures raised made
        # 910 such lines, 148 KB of a 193 KB comment past GitHub's 65,536 characters (attack round 38).
        out += [f"- ❌ {markdown_code(f.name)} {markdown_code(x.path)} ({x.kind}): {markdown_prose(x.message)}"
                for f, x in unsound[:MAX_HEAD_PROBLEMS]]
        if len(unsound) > MAX_HEAD_PROBLEMS:
            out.append(f"- and {len(unsound) - MAX_HEAD_PROBLEMS:,} more: the text review (`passprice diff`) lists "
                       "each")

    def lock_section(locks: list[LockImpact], heading: str) -> None:
        """The table of ``locks`` under ``heading``, and the notes on them under it."""
        rows = []
        for lock in locks:
            floors = markdown_prose(lock.floors())
            # a checkpoint's content changed breaks the lock, not its floors: the cell read "❌ still holds"
            # (walkthrough 41); the review cell beside it carries the ❌
            floors = f"❌ {floors}" if lock.breaks and lock.why_broken != "checkpoint" else floors
            review = markdown_prose(_review(d, lock))
            if (lock.stale or lock.unsound or lock.question or lock.breaks or review.startswith("does NOT reproduce")
                    or _unrecorded(d, lock)):
                review = f"❌ {review}"
            elif lock.loosened or lock.drifted:
                review = f"⚠️ {review}"
            rows.append(
                [
                    links.file_link(lock.path, markdown_code(lock.name)) if links is not None and not lock.removed
                    else markdown_code(lock.name),
                    ", ".join(markdown_code(p) for p in _inputs(lock).split(", ") if p) or "–",
                    f"{_held(lock)} → {floors}" + (f"; weakest {markdown_prose(w)}" if (w := _weakest_moved(lock))
                                                   is not None else ""),
                    _recorded(lock),
                    _shorts(lock)[0] if not lock.added else "–",
                    (f"❌ {_shorts(lock)[1]} (on stale facts)" if lock.unsound_limit else _shorts(lock)[1])
                    if not lock.removed and not lock.head_unread else
                    "– (not judged: its lock file does not read)" if lock.head_unread else "–",
                    _change_cell(lock),
                    _binds(lock),
                    review,
                ]
            )
        out.extend([
            "",
            heading,
            "",
            markdown_table(
                ["lock", "changed", "floors", "recorded", "tokens/s BASE", "tokens/s HEAD", "change", "binds",
                 "review"],
                rows,
                right=(3, 4, 5, 6),
            ),
        ])
        notes = []
        for lock in locks:
            recomputed = _recomputed_shift(lock)
            if recomputed is not None:
                notes.append(f"- {markdown_code(lock.name)}: recomputed {markdown_prose(recomputed)}")
            expected = _expected_shift(lock)
            if expected is not None:
                notes.append(f"- {markdown_code(lock.name)}: expected tokens/s {markdown_prose(expected)}"
                             + (f" ❌ (on stale {lock.unsound_kind})" if lock.unsound_expected else ""))
            for label, side in (("BASE", lock.before), ("HEAD", lock.after)):
                if side.refusal is not None:
                    message = markdown_prose(side.refusal.get("message", ""))
                    notes.append(f"- {markdown_code(lock.name)}: {label} refuses: {message}")
                if side.error is not None and not (lock.added and label == "BASE") and not (
                    (lock.removed or lock.head_unread) and label == "HEAD"
                ):
                    notes.append(f"- {markdown_code(lock.name)}: {label} cannot price: {markdown_prose(side.error)}")
            if lock.note:
                notes.append(f"- {markdown_code(lock.name)}: {markdown_prose(lock.note)}")
            if lock.cites:
                notes.append(f"- {markdown_code(lock.name)}: its changed facts now cite (as HEAD cites them; whole in "
                             f"the Facts section): {markdown_prose(_cites(lock))}")
            if lock.runs_moved:
                notes.append(f"- {markdown_code(lock.name)}: {markdown_prose(_runs_moved(lock))}")
            if lock.alone:
                notes.append(f"- {markdown_code(lock.name)}: each changed fact alone ({_alone_what(lock)}): "
                             f"{markdown_prose(_alone(lock))}")
            elif lock.alone_absent is not None:
                notes.append(f"- {markdown_code(lock.name)}: each changed fact alone: "
                             f"{markdown_prose(lock.alone_absent)}")
            todo = _relock_note(lock, _unreproducing(d, lock), _forging(d, lock), _unrecorded(d, lock))
            if todo is not None:
                notes.append(f"- {markdown_code(lock.name)}: {todo}")
            if lock.by_header is not None:
                notes.append(f"- ⚠️ {markdown_code(lock.name)}: **to verify**: {markdown_prose(lock.by_header)}")
        if notes:
            out.extend(["", *notes])

    # left52: the locks the change touches, then those out of date already on BASE it does not touch, each under its
    # own heading, as the text review and the summary count them (the markdown listed both in one "Locks" table)
    touched = [lock for lock in d.locks if not lock.behind]
    if touched:
        lock_section(touched, "#### Locks")
    if d.unaffected:
        # In the locks' section, under the affected ones (or on its own there when none is): it stood after the last
        # section (the sources, the pricing model), which it then seemed to be about (leftovers 28).
        names = ", ".join(markdown_code(x.name) for x in d.unaffected)
        out += [*([] if touched else ["", "#### Locks"]), "", f"{_n(len(d.unaffected), 'lock')} unaffected: {names}"]
    behind = [lock for lock in d.locks if lock.behind]
    if behind:
        lock_section(behind, "#### Locks out of date already on BASE (this change does not touch them)")
    policy = [(lock, c) for lock in d.reviews for c in lock.policy]
    if policy:
        out += ["", "#### Policy changes", ""]
        out += [
            f"- {('ℹ️ ' if c.path in lock.kept else '⚠️ ') if c.loosens else ''}{markdown_code(lock.name)}: "
            f"{markdown_prose(lock.policy_line(c))}"
            for lock, c in policy
        ]
    added = [lock for lock in d.reviews if lock.added]
    removed = [lock for lock in d.reviews if lock.removed]
    if added:
        out += ["", "#### Locks added", ""]
        for lock in added:
            what = (f"locks serving {markdown_code(lock.serving_name)}" if lock.serving_name
                    else "locks no registered serving")
            out.append(f"- added {markdown_code(lock.name)} ({markdown_code(lock.path)}, {lock.kind}, {what}): "
                       f"{_recorded(lock)} tokens/s{markdown_text(_added_terms(lock))}")
    if removed:
        out += ["", "#### Locks removed", ""]
        for lock in removed:
            out.append(f"- {'❌' if lock.dropped else '⚠️'} {_removal(lock, markdown_code)}")
            out += [f"  - floor on {markdown_code(c.path)} dropped: {_dropped(c)}" for c in lock.dropped]
    if d.lookalikes:
        out += ["", "#### Records named like another", ""]
        out += [f"- ⚠️ **to verify**: {markdown_prose(line)}" for line in list(d.lookalikes.values())[:MAX_OTHER_FILES]]
    checkpoints = [f for f in d.files if f.kind == "checkpoint"]
    if checkpoints:
        out += ["", "#### Checkpoints", ""]
        out += [f"- {markdown_code(f.path)} ({f.status}): content {_content(f)}"
                + (f"; {markdown_text('; '.join(f.inside))}" if f.inside else "")
                + (f"; {markdown_text(layout_line(f))}" if f.layout else "")
                + (f"; {added_shown[f.path]}" if f.path in d.added_records else "")
                + (f" — ⚠️ **to verify**: {markdown_prose(EDITED_ENTRY)}" if f.path in d.entries_edited else "")
                + (f" — ⚠️ **to verify**: {markdown_text(', '.join(d.digests_dropped[f.path])[:MAX_ADDED_DETAIL])}: "
                   f"{markdown_text(DROPPED_DIGESTS + d.header_pinned_line(f.path))}" if f.path in d.digests_dropped
                   else "")
                for f in checkpoints]
    if d.on_changed_claims:
        # Under the entries whose claims changed (it stood after the pricing model and the servings no lock pins,
        # and said "checkpoints above" of a section far above it: leftovers 28).
        names = ", ".join(markdown_code(x.name) for x in d.on_changed_claims)
        out += [*([] if checkpoints else ["", "#### Checkpoints", ""]),
                f"- ⚠️ {_n(len(d.on_changed_claims), 'lock')} priced from a checkpoint entry whose claims changed, "
                f"to verify (checkpoints above): {names}"]
    servings = [f for f in d.files if f.kind == "serving"]
    if servings:
        out += ["", "#### Servings", ""]
        described = {a.path: a for a in d.added_servings}
        out += [
            f"- {markdown_code(f.path)} ({f.status})"
            + (": " + markdown_prose("; ".join(f.serving)) if f.serving else "")
            + (described[f.path].markdown() if f.path in described else "")
            for f in servings[:MAX_SERVING_FILES]
        ]
        more = len(servings) - MAX_SERVING_FILES
        if more > 0:
            out.append(f"- and {_n(more, 'more serving file')}: the text review (`passprice diff`) lists each")
    new_sources = [f for f in d.files if f.kind == "source" and f.path in d.added_records]
    # A source record changed or removed is named here, under what the section says of its document: it stood in
    # "Other files changed" after every section (leftovers 28). Added ones are described above (the first
    # MAX_ADDED_DETAILS), the rest named among the other files.
    records = [f for f in d.files if f.kind == "source" and f.status != "added"]
    if d.sources or new_sources or d.cited or records:
        out += ["", "#### Sources", ""]
        for s in d.sources:
            out.append(f"- ⚠️ {markdown_code(s.id)} **to verify**: {markdown_prose(s.to_verify)}")
            out += [f"  - {markdown_text(place)}" for place in s.places]
            if s.excerpt_changes:
                out.append(f"  - {markdown_text(EXCERPT_CHANGES)}")
                out += [f"    - {markdown_text(line)}" for line in s.excerpt_changes]
        if d.on_changed_sources:
            # Here, under the sources it rests on: it stood after the last section (the pricing model, the locks not
            # re-priced, or below the cited sources, which it then seemed to be about) and said "(sources below)" of
            # sources above it (session 27).
            names = ", ".join(markdown_code(x.name) for x in d.on_changed_sources)
            out.append(f"- ⚠️ {_n(len(d.on_changed_sources), 'lock')} resting on a source whose document changed, to "
                       f"verify (the sources above): {names}")
        out += [f"- {markdown_code(f.name)} (added, {markdown_code(f.path)}): {added_shown[f.path]}"
                for f in new_sources]
        out += [f"- {markdown_code(source_id)} (cited): {markdown_prose(line)}" if source_id != "…"
                else f"- {markdown_prose(line)}" for source_id, line in d.cited.items()]
        if records:
            more = len(records) - MAX_OTHER_FILES
            out.append("- source record files changed: "
                       + ", ".join(f"{markdown_code(f.path)} ({f.status})" for f in records[:MAX_OTHER_FILES])
                       + (f", and {more} more: the text review (`passprice diff`) lists each" if more > 0 else ""))
    schemas = [f for f in d.files if f.kind == "schema"]
    if schemas:
        out += ["", "#### Schemas", ""]
        out += [f"- {markdown_code(f.path)} ({f.status})" for f in schemas]
    if d.duplicates:
        out += ["", "#### Locks duplicating another", ""]
        out += [f"- ⚠️ {markdown_prose(line)}" for line in d.duplicates]
    if d.head_warnings:
        out += ["", "#### Warnings of passprice check on HEAD (not a failure)", ""]
        out += [f"- ⚠️ warning: {markdown_prose(line)}" for line in d.head_warnings]
        if d.head_warnings_left_out:
            out.append(f"- and {_n(d.head_warnings_left_out, 'more warning')}: `passprice check` on HEAD lists each")
        if d.duplicates:
            out.append(f"- {duplicates_elsewhere(d)}")
    if d.code_files:
        out += ["", "#### passprice's own code", "", f"⚠️ {markdown_text(CODE_WARNING)}", ""]
        # At most MAX_OTHER_FILES, the rest counted: 2,000 modules added under src/passprice made the comment 268 KB,
        # past the 65,536 characters GitHub takes (attack round 37).
        out += [f"- {markdown_code(path)}" for path in d.code_files[:MAX_OTHER_FILES]]
        if (left := len(d.code_files) - MAX_OTHER_FILES) > 0:
            out.append(f"- and {left:,} more file{'' if left == 1 else 's'}: the text review (`passprice diff`) lists "
                       "each")
    if d.install_files:
        out += ["", "#### How passprice is installed", "", f"⚠️ {markdown_text(INSTALL_WARNING)}", ""]
        out += [f"- {markdown_code(path)}" for path in d.install_files]
    if d.export_rules:
        out += ["", "#### Export rules", "", f"⚠️ {markdown_text(EXPORT_WARNING)}", ""]
        out += [f"- {markdown_prose(line)}" for line in d.export_rules]
    model = _model_line(d)
    if model:
        out += ["", "#### Pricing model", "", markdown_text(model)]
        out += [
            "- priced with " + markdown_text(code.describe(label))
            for code, label in ((d.base_code, "BASE"), (d.head_code, "HEAD"))
            if code is not None
        ]
    if d.unlocked or d.unlocked_left_out:
        from passprice.unlocked import markdown_lines

        out += markdown_lines(d.unlocked, d.unlocked_left_out)
    if d.check_counted:
        listed, more, _ = d.check_shown
        out += ["", f"#### ❌ {markdown_prose(d.check_line())}", ""]
        out += [f"- {markdown_prose(p)}" for p in listed]
        if more:
            out.append(f"- and {_n(more, 'more problem')}: `passprice check` on HEAD lists each")
        elsewhere = d.check_elsewhere_line("below (Files that do not read), under")
        if elsewhere:
            out.append(f"- {markdown_prose(elsewhere)}")
    shown = d.errors_shown()
    unread = [  # the file is the row's first cell: its error said without its path again (a user's walk, left53b)
        [markdown_code(path), which, markdown_prose(e.removeprefix(f"{path}: "))]
        for path, (base, head, _) in shown.items()
        for which, errors in (("BASE", base), ("HEAD", head))
        for e in errors
    ]
    if unread:
        out += ["", "#### Files that do not read", "", markdown_table(["file", "side", "error"], unread)]
        errors_left, files_left = d.errors_left_out()
        if errors_left:
            out += ["", f"- and {_n(errors_left, 'more error')}"
                    + (f" ({_n(files_left, 'file')} not listed)" if files_left else "")
                    + ": `passprice check` lists each"]
    # Every file the summary counts as "other" that no section above lists: a source record added with the fact
    # citing it was counted ("1 other file changed") and shown nowhere (session 15's walkthrough).
    # An added measurement file is "other" too, and is shown with its runs (walkthrough 22).
    others = [f for f in d.files if f.kind == "other"
              or (f.kind == "source" and f.status == "added" and f.path not in d.added_records)
              or _quiet(f)]
    if others:
        named = ", ".join(f"{markdown_code(f.path)} ({markdown_prose(_other_status(f))})"
                          + (f": {added_shown[f.path]}" if f.path in added_shown else "")
                          for f in others[:MAX_OTHER_FILES])
        more = len(others) - MAX_OTHER_FILES
        out += ["", "Other files changed: " + named
                + (f", and {more} more: the text review (`passprice diff`) lists each" if more > 0 else "")]
    if d.on_recited_runs:
        # Under the measured runs' files it rests on (slip 46 put it after the pricing model, and leftovers 28 then
        # moved the other files to the end, below it: "(other files above)" would have pointed down).
        names = ", ".join(markdown_code(x.name) for x in d.on_recited_runs)
        out += ["", f"⚠️ {_n(len(d.on_recited_runs), 'lock')} priced under a stack fitted from measured runs to "
                f"verify (other files above): {names}"]
    return bounded(out)


#: The most characters a review in Markdown holds, the sticky comment's marker line included
#: (:func:`passprice.comment.comment_body`): GitHub takes a comment of at most 65,536. Each section has its own caps
#: (names, rows, modules, details), and together they could pass it: a pull request hitting the fact table's, the
#: facts' details', the added records', the warnings' and the other files' caps at once made an 81 KB comment
#: (leftovers round 20).
MAX_COMMENT = 65_000

#: What starts a section of the Markdown review that :func:`bounded` may cut: a heading, the other files' line, the
#: unaffected locks' line.
_SECTION = r"#### |Other files changed: |[0-9,]+ locks? unaffected: "


def bounded(lines: Sequence[str], limit: int | None = None) -> str:
    """``lines`` (the Markdown review, a line each) joined, in at most ``limit`` characters (default
    :data:`MAX_COMMENT` less the comment's marker line): when they would pass it, the longest section loses its last
    lines, then the longest again, until the whole fits; each section cut ends with a line saying how many lines
    were cut, and a line under the summary names the sections cut and how to see all of it (``passprice diff``, or
    ``--json``). The first line (the summary) and each section's heading are never cut. Raises nothing."""
    import itertools
    import re

    from passprice.comment import MARKER

    room = MAX_COMMENT - len(MARKER) - 1 if limit is None else limit
    text = "\n".join(lines)
    if len(text) <= room:
        return text
    starts = [0, *(i for i, line in enumerate(lines) if i and re.match(_SECTION, line))]
    parts = [list(lines[a:b]) for a, b in itertools.pairwise([*starts, len(lines)])]
    head, sections = parts[0], parts[1:]
    cut = [0] * len(sections)

    def title(section: list[str]) -> str:
        first = section[0]
        if first.startswith("#### "):
            return first[5:]
        return "Other files changed" if first.startswith("Other") else "the unaffected locks"

    def note(n: int) -> list[str]:
        return ["", f"- ✂️ and {_n(n, 'more line')} of this section, cut to keep this comment within GitHub's 65,536 "
                "characters: `passprice diff` (text) or `passprice diff --json` shows all of it", ""]

    def render() -> list[list[str]]:
        said = [f"{title(s)} ({_n(n, 'line')})" for s, n in zip(sections, cut, strict=True) if n]
        top = head[:1] + ([f"✂️ Cut to fit GitHub's 65,536 characters: {'; '.join(said)}: `passprice diff` without "
                           "`--format markdown`, or with `--json`, shows all of it", ""] if said else []) + head[1:]
        return [top] + [s[: len(s) - n] + (note(n) if n else []) for s, n in zip(sections, cut, strict=True)]

    while True:
        shown = render()
        text = "\n".join(line for part in shown for line in part)
        excess = len(text) - room
        if excess <= 0:
            return text
        left = [j for j, s in enumerate(sections) if len(s) - cut[j] > 1]
        if not left:
            return text[:room]  # every section down to its heading (never reached: the heads are short)
        j = max(left, key=lambda k: sum(len(line) + 1 for line in shown[k + 1]))
        removed = 0
        while len(sections[j]) - cut[j] > 1 and removed < excess:
            cut[j] += 1
            removed += len(sections[j][len(sections[j]) - cut[j]]) + 1


def render(d: Diff, fmt: str, links: Links | None = None) -> str:
    """``d`` as ``text``, ``markdown``, ``comment`` (the markdown behind the sticky pull-request comment's marker,
    :func:`passprice.comment.comment_body`) or ``json`` (indented); ``links`` lets markdown link files and lines.
    Raises :class:`ValueError` for another format."""
    if fmt == "text":
        return diff_text(d)
    if fmt == "markdown":
        return diff_markdown(d, links)
    if fmt == "comment":
        from passprice.comment import comment_body

        return comment_body(d, links)
    if fmt == "json":
        return json_text(d.to_json())
    raise ValueError(f"unknown format {fmt!r}")

