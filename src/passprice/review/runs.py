"""A measured run is asked of its source as a fact is: the review names each run a change adds, re-cites or moves, and
what rests on it. The runs of a measurement file to verify (:func:`runs_to_verify`: cited anew, moved, its place
not quoting its tokens/s, its identity rewritten), what an added file holds priced on HEAD
(:func:`measurements_added`), a file renamed (:func:`measurement_renames`, :func:`renamed_runs`), its ``[source]``
table rewritten (:func:`source_table_changes`), a stack's fitted span moved (:func:`stack_spans`) and the stack
facts re-fitted to the same runs (:func:`_moved_under_runs`). Lines and files with findings set, never the verdict
itself (:class:`~passprice.review.verdict.Diff` decides what fails).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice.errors import InputError, escaped, spelled
from passprice.review.changes import FactChange, FileChange, _figure, _n, _quoted_figures, side_toml
from passprice.review.impacts import _locks
from passprice.review.quotes import _cut_keeping
from passprice.review.sides import Side

if TYPE_CHECKING:

    from passprice.measurements import Run
    from passprice.sources import Lookups


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
    :data:`RUN_LOCATOR_SHOWN` characters, the quote holding the run's figure kept whole:
    :func:`~passprice.review.quotes._cut_keeping`; left47: cut at the 160th character, ``row '| llama 8B … |    154.``
    lost the figure), ``""`` for none."""
    if run is None:
        return ""
    locator = _cut_keeping(run.locator, RUN_LOCATOR_SHOWN, (run.tokens_per_s,))
    return f"; {run.tokens_per_s:,g} tokens/s, cited to {run.source_id}: {locator}"


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
