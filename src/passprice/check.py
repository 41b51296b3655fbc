"""A registry is fit to merge only when every file matches its schema and every lock still holds: it reproduces its
recorded price from its pinned facts, today's facts keep its floors, and (with ``--frozen``) no pinned fact drifted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.cards import card_from_document
from passprice.drafts import method_from_document
from passprice.errors import InputError, NotFound, escaped, problem_lines, spelled_words
from passprice.files import is_folder, is_there, listing_refusal, unsearchable_folder
from passprice.registry import Root
from passprice.routing import Routing, colder, router, routing_from_document

if TYPE_CHECKING:
    from passprice.gguf_header import GGUFHeader
    from passprice.lineage import Record
    from passprice.measurements import Run
    from passprice.sources import Source


@attrs.frozen
class LockStatus:
    """One lock judged (:func:`passprice.reproduce.reproduce`): ``reproduces`` (its recorded price from its pinned
    inputs with today's code; ``reproduction`` says why or why not, ``moved`` lists the fields that moved);
    ``pricing_model`` (``same`` or ``changed`` since the lock); ``checkpoint`` (where its pinned content is) and
    ``checkpoint_changed``; ``serving`` (what changed in the registered serving it locks); ``holds`` and ``verdict``
    (today's facts against its floors; ``refusal`` when today's price is refused); ``drift`` (pinned facts the price
    rests on that changed, as lines); ``today`` (tokens/s with today's inputs when it differs from the recorded);
    ``older`` (what to do with a lock of an older format); ``judged`` is false when today's files do not read, so
    its floors and drift could not be judged."""

    name: str
    path: str
    reproduces: bool
    moved: tuple[str, ...]
    holds: bool
    verdict: str
    drift: tuple[str, ...]
    refusal: str | None = None
    format: int = 2
    reproduction: str = ""
    pricing_model: str = "same"
    checkpoint: str = ""
    checkpoint_changed: bool = False
    serving: tuple[str, ...] = ()
    today: str | None = None
    older: str | None = None
    serving_name: str | None = None
    judged: bool = True
    #: Pinned facts it rests on rewritten to the same quantity (``4.8 TB/s`` → ``4800 GB/s``), as lines: no drift,
    #: not an error with ``--frozen``; ``lock --update`` re-pins them as written.
    rewritten: tuple[str, ...] = ()
    #: Why ``judged`` is false: today's first problem reading the lock's inputs, as the text says it (walkthrough 39:
    #: "today's files do not read" of a registry whose files all read, the lock's checkpoint being under another
    #: name); not in ``--json``, whose ``verdict`` says it.
    unjudged: str = ""
    #: The registry ``path`` is relative to (:func:`passprice.registry.registry_named`): ``"built-in"`` or its
    #: folder; the text names a built-in registry's file as such (leftovers 28: ``locks/X`` read as the user's).
    registry: str = ""
    #: ``path`` as a command to paste names it (:func:`passprice.registry.pasted_path`: absolute for the built-in
    #: registry); ``None``: ``path``.
    pasted: str | None = None

    @property
    def shown(self) -> str:
        """``path`` as the text names it: ``the built-in registry's locks/X.lock.toml`` for the built-in registry
        (:func:`passprice.registry.in_root`), else ``path``."""
        from passprice.registry import BUILT_IN

        return f"{BUILT_IN}{self.path}" if self.registry == "built-in" else self.path

    @property
    def drifted(self) -> bool:
        """True when an input the lock pinned differs today: a fact it rests on, the checkpoint's content, or the
        registered serving it locks (an error with ``--frozen``)."""
        return bool(self.drift or self.checkpoint_changed or self.serving)

    def ok(self, frozen: bool) -> bool:
        """Reproduces and holds its floors; with ``frozen``, nothing it pinned drifted either."""
        return self.reproduces and self.holds and (not frozen or not self.drifted)


@attrs.frozen
class CheckReport:
    """``passprice check``: how many files of each kind were validated (``kinds``: ``cards``, ``drafts``,
    ``checkpoints``, ``servings``, ``locks``, ``sources``), every file's ``problems`` (lines naming file and key path,
    each once), every lock's status, the ``disagreements`` between locks of one serving that record different
    prices, ``warnings`` (lines that do not fail the check: a source nothing cites), and ``unreadable``: the problems
    that are files that do not read (bad input, which the command line reports on stderr with exit status 2); the
    others (a stale derivation, a refused serving) are findings in files that read."""

    files: int
    problems: tuple[str, ...]
    locks: tuple[LockStatus, ...]
    kinds: tuple[tuple[str, int], ...] = ()
    disagreements: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()

    def ok(self, frozen: bool) -> bool:
        """All holds: no file problem, every lock reproduces and holds its floors, no two locks of a serving
        disagree, and, when ``frozen``, nothing any lock pinned drifted."""
        return not self.problems and not self.disagreements and all(s.ok(frozen) for s in self.locks)

    def to_json(self, frozen: bool) -> dict[str, Any]:
        """The report for ``--json`` (``coded_warnings``: :attr:`warnings`, each as
        :func:`passprice.addedfacts.warning_json` with :func:`passprice.addedfacts.warning_code`'s code)."""
        from passprice.addedfacts import warning_code, warning_json

        return {
            "ok": self.ok(frozen),
            "frozen": frozen,
            "files": self.files,
            "kinds": dict(self.kinds),
            "problems": list(self.problems),
            "warnings": list(self.warnings),
            # the same lines, each with a stable code (walkthrough 117's copied measurements: measured_elsewhere)
            "coded_warnings": [warning_json(warning_code(w), w) for w in self.warnings],
            "locks": [{**attrs.asdict(s, filter=lambda a, _: a.name not in ("pasted", "unjudged")),
                       "drifted": s.drifted,
                       "ok": s.ok(frozen)} for s in self.locks],
            "disagreements": list(self.disagreements),
            "prices_moved": [s.name for s in self.prices_moved()],
        }

    def prices_moved(self) -> list[LockStatus]:
        """The locks whose recorded price today's inputs move (:attr:`LockStatus.today`: tokens/s or batch with
        today's inputs not the recorded), that reproduce from their pins and hold their floors: drift, reported and
        passed, yet a review fails a change that moves a locked price without re-locking it. Raises nothing."""
        return [s for s in self.locks if s.today is not None and s.reproduces and s.holds]

    def moved_words(self) -> str:
        """``4 locked prices moved (a, b, c, d): the work tree prices them otherwise than their locks record; a
        review fails such a change unless it re-locks each: passprice lock --update -o …``, or empty when none
        moved (:meth:`prices_moved`). The pre-commit hook said "all holds" of a fact change that moved 4 locked
        prices, and the first review failed on them. Raises nothing."""
        from passprice.enforce import command_span

        moved = self.prices_moved()
        if not moved:
            return ""
        commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", s.pasted or s.path])
                             for s in moved)
        one = len(moved) == 1
        records = "its lock records" if one else "their locks record"
        return (f"{len(moved)} locked price{'' if one else 's'} moved ({', '.join(s.name for s in moved)}): the work "
                f"tree prices {'it' if one else 'them'} otherwise than {records}; "
                f"a review fails such a change unless it re-locks {'it' if one else 'each'}: {commands}")

    def error_lines(self) -> tuple[str, ...]:
        """The :attr:`unreadable` lines as the command line prints them on stderr: each look-alike name spelled out
        (:func:`passprice.errors.spelled_words`), as the report's own lines are."""
        return tuple(spelled_words(line) for line in self.unreadable)

    def unjudged_by_reason(self) -> dict[str, list[str]]:
        """The locks not judged (:attr:`LockStatus.judged` false) for a reason two or more share, by that reason
        (today's first problem reading their inputs, ``facts/cards/h200_sxm_141gb.toml: is a folder, not a card
        file``): their names, in the report's order. One lock's reason is said on its own lines."""
        out: dict[str, list[str]] = {}
        for s in self.locks:
            if not s.judged and s.unjudged:
                out.setdefault(s.unjudged, []).append(s.name)
        return {reason: names for reason, names in out.items() if len(names) > 1}

    def _locks_failing(self, frozen: bool) -> str:
        """The headline's word on the locks when any fails (``; 2 of 8 locks FAIL``): the file count alone read as
        a pass over a check that fails on its locks. A lock not judged (today's files do not read) is counted as
        its own line says it, ``not judged``, not as failing (``; 3 of 9 locks not judged``), and lock files that
        do not read, counted among the files and the problems, are said apart (``(1 more lock file does not read,
        on stderr)``): a new user read "3 of 9 locks FAIL" beside "10 locks" and "locks not judged: 3 of 9"
        (tests/test_walk138.py)."""
        failing = sum(1 for s in self.locks if not s.ok(frozen) and self.verdict_word(s, frozen) == "FAILS")
        unjudged = sum(1 for s in self.locks if self.verdict_word(s, frozen) == "not judged")
        files = dict(self.kinds).get("locks", len(self.locks))
        unread = max(0, files - len(self.locks))
        of = f" of {len(self.locks)} lock{'s' if len(self.locks) != 1 else ''}"
        said = [f"{failing}{of} FAIL" if failing else "", f"{unjudged}{'' if failing else of} not judged"
                if unjudged else ""]
        words = ", ".join(w for w in said if w)
        if unread:
            lockfiles = f"lock file{' does' if unread == 1 else 's do'}"
            more = f"{unread} {'more ' if words else ''}{lockfiles} not read, on stderr"
            words = f"{words} ({more})" if words else more
        return f"; {words}" if words else ""

    def _recap(self, frozen: bool, unread: set[str]) -> list[str]:
        """The lines before ``check FAILED`` that say again what fails: the problems listed at the top (the first
        :data:`RECAP_SHOWN`, the rest counted), and the locks that FAIL, by name. The pre-commit hook shows the end
        of the output: one problem printed on line 2 of 71, then 69 lock lines, then ``check FAILED``, read as a
        failure with no reason (tests/test_fix53w.py). Empty when it holds. Raises nothing."""
        if self.ok(frozen):
            return []
        out = []
        listed = [p for p in self.problems if p not in unread]
        if self.problems:
            # Those on stderr are said here again too (as stderr spells them), in the order listed: a lock edited
            # by hand (its digest) said "problems, as listed at the top (1, 1 of them on stderr)" then "check
            # FAILED", its one problem not on stdout at all (tests/test_fix55w.py).
            on_stderr = f", {len(self.problems) - len(listed)} of them on stderr" if len(listed) < len(self.problems) \
                else ""
            more = f"; the first {RECAP_SHOWN}:" if len(self.problems) > RECAP_SHOWN else ":"
            out.append(f"problems, as listed at the top ({len(self.problems)}{on_stderr}){more}")
            out += [f"  {spelled_words(p) if p in unread else p}" for p in self.problems[:RECAP_SHOWN]]
        failing = [s.name for s in self.locks if not s.ok(frozen) and self.verdict_word(s, frozen) == "FAILS"]
        if failing:
            shown = ", ".join(failing[:RECAP_SHOWN]) + (f" and {len(failing) - RECAP_SHOWN} more"
                                                       if len(failing) > RECAP_SHOWN else "")
            out.append(f"locks that FAIL, as said above: {shown}")
        return out

    @staticmethod
    def verdict_word(s: LockStatus, frozen: bool) -> str:
        """A lock's word in the report: ``ok``; ``not judged`` when it reproduces and its floors were not judged,
        today's files not reading (:attr:`LockStatus.judged` false, its verdict ``today's files do not read: …``:
        the file that does not read fails on its own line); else ``FAILS`` (a lock whose serving is no longer
        registered is judged so, its drift alone not judged)."""
        if s.ok(frozen):
            return "ok"
        unread = not s.judged and s.verdict.startswith("today's files do not read")
        return "not judged" if unread and s.reproduces else "FAILS"

    def text(self, frozen: bool) -> str:
        """The report for people: the findings in files that read, line by line; the files that do not read only
        counted (the command line prints them on stderr, one ``passprice: error:`` line each, as any bad input)."""
        # "1 servings, 0 locks" (walkthrough 16): a count of one names its kind in the singular.
        kinds = ", ".join(f"{n} {kind[:-1] if n == 1 else kind}" for kind, n in self.kinds)
        unread = set(self.unreadable)
        lines = [
            f"checked {self.files} file{'s' if self.files != 1 else ''}{f' ({kinds})' if kinds else ''}: "
            f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
            f"{f' ({len(unread)} on stderr)' if unread else ''}"
            + self._locks_failing(frozen)
        ]
        lines += [f"  {p}" for p in self.problems if p not in unread]
        lines += [f"  {h}" for h in recompute_hints(self.problems)]
        lines += [f"  warning: {w}" for w in self.warnings]
        err = " (an error with --frozen)" if frozen else ""
        # One file that does not read leaves every lock resting on it not judged: said once, with how many locks it
        # affects (session 37: a card that was a folder gave 5 locks 2 lines each, 10 lines for one problem).
        unjudged = self.unjudged_by_reason()
        for reason, names in unjudged.items():
            lines.append(f"locks not judged: {len(names)} of {len(self.locks)} ({', '.join(names)}): today's files do "
                         f"not read: {reason}")
        for s in self.locks:
            locks = f", locks serving {s.serving_name}" if s.serving_name else ""
            lines.append(f"lock {s.name} ({escaped(s.shown)}{locks}): {self.verdict_word(s, frozen)}")
            if s.older:
                lines.append(f"  format: {s.older}")
            lines.append(f"  {s.reproduction}")
            lines += [f"    {m}" for m in s.moved]
            lines.append(f"  pricing model: {s.pricing_model}")
            lines.append(f"  checkpoint: {s.checkpoint}{err if s.checkpoint_changed else ''}")
            if s.serving:
                lines.append(f"  serving changed{err}:")
                lines += [f"    {c}" for c in s.serving]
            # its reason said once: on the line above the locks when others share it, else on its floors line
            floored = s.verdict == f"today's files do not read: {s.unjudged}"
            if s.unjudged in unjudged and floored:
                lines.append(f"  floors: not judged ({unread_said(s.unjudged)}, above)")
            else:
                lines.append(f"  floors: {s.verdict}")
            if not s.judged and s.unjudged and (floored or s.unjudged in unjudged):
                lines.append("  drift: not judged (the same)")
            elif not s.judged:
                why = f": {s.unjudged}" if s.unjudged else ""
                lines.append(f"  drift: not judged (today's inputs do not read{why})")
            elif s.drift:
                lines.append(f"  drift{err}:")
                lines += [f"    {d}" for d in s.drift]
            else:
                lines.append("  drift: none")
            if s.rewritten:
                lines.append("  rewritten (no drift, also with --frozen; lock --update re-pins them as written):")
                lines += [f"    {r}" for r in s.rewritten]
            if s.today is not None:
                lines.append(f"  today: {s.today}")
        for d in self.disagreements:
            lines.append(f"locks disagree: {d}")
        moved = self.moved_words()
        if moved and not self.ok(frozen) and not frozen:  # --frozen's own line re-locks each drifted lock
            lines.append(moved)
        lines += self._recap(frozen, unread)
        lines.append(("all holds" + (f"; {moved}" if moved else "")) if self.ok(frozen) else "check FAILED")
        drifted = [s for s in self.locks if frozen and s.reproduces and s.holds and s.drifted]
        if drifted:  # failed by --frozen alone: say how to bring the locks up to date
            from passprice.enforce import command_span

            commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", s.pasted or s.path])
                                 for s in drifted)
            lines[-1] += (
                " (--frozen: the inputs of " + ", ".join(s.name for s in drifted) + " drifted since they were locked; "
                f"review the change, then re-lock each: {commands})"
            )
        # A look-alike name (a card copied under a Cyrillic х) reads as the name it copies: spelled out (slip 32).
        return "\n".join(spelled_words(line) for line in lines)


#: The most problems (and failing locks' names) :meth:`CheckReport._recap` says again before ``check FAILED``.
RECAP_SHOWN = 5


def unread_said(reason: str) -> str:
    """What does not read, by the file a lock's reason for not being judged names first: ``facts/cards/h200.toml
    does not read`` of ``facts/cards/h200.toml: is a folder, not a card file`` (such a line opens with the file it
    is about), or ``today's files do not read`` when it opens with no file (``lock: serving: checkpoint: …``).
    Raises nothing."""
    first = reason.split(": ", 1)[0]
    return f"{first} does not read" if "/" in first or first.endswith(".toml") else "today's files do not read"


def routing_record(name: str, document: dict[str, Any], source: str) -> Routing:
    """The routing record ``document`` (read from ``source``) as ``check`` reads it: :func:`routing_from_document`,
    and, when the record names its router's ``experts`` E and ``used`` k, its figures routing so. A hot set of h·E
    experts taking a share s of the routed token-slots chooses each of its experts with probability p_hot = k·s /
    (h·E), the rest each with p_cold = k·(1 − s) / ((1 − h)·E) (:class:`passprice.routing.Router`, DESIGN.md,
    Routing); an expert is chosen at most once a token, so both are at most 1: s ≤ h·E / k; and a hot set takes at
    least its experts' share, s ≥ h (:func:`passprice.routing.colder`, checked without E and k too: walk45).

    Raises :class:`~passprice.errors.InputError` naming the file, ``hot_share`` and the range it must lie in.
    Walkthrough 17: a record of 8 experts at 2 a token with ``hot_experts = 0.125`` and ``hot_share = 0.9`` passed
    ``check`` (0 problems), and every price naming it was refused ``BadRouting`` ("cannot take that share",
    without the share or the bound)."""
    record = routing_from_document(name, document, source)
    h, share = record.hot_experts.value, record.hot_share.value
    if record.experts is None or record.used is None:
        # A hot set colder than the rest needs neither E nor k to be refused (walk45).
        problem = colder(h, share)
    else:
        problem = router(record, record.experts, record.used).problem()
        if problem is not None and (record.used > record.experts or not (0.0 < h < 1.0 and 0.0 < share <= 1.0)):
            raise InputError(f"{source}: routing: {problem}")
    if problem is None:
        return record
    # The wording a price refused BadRouting gives too (Router.share_bound), with what to do here.
    raise InputError(
        f"{source}: {problem}: correct hot_share or hot_experts (every price naming the record is refused BadRouting "
        "until then)"
    )


_STALE = re.compile(r"(?:^|/)facts/(cards|drafts)/([^/]+?)\.toml: \S+ is stale: its input ")


def recompute_hints(problems: Sequence[str]) -> list[str]:
    """For each card or drafting method that ``problems`` (``check``'s lines) name a stale derived fact of, the
    command that writes its stale facts from today's inputs (``to write them from today's inputs: `passprice fact
    recompute NAME```, ``--draft`` for a drafting method), in order of first mention. ``check`` named each stale fact
    and its recomputed value but not the command (walkthrough 22; ``fact set`` and ``reproduce`` named it). The name
    is one shell word (:func:`shlex.quote`; a name starting with ``-`` is refused where it is read): a card file
    ``my h200;$(id).toml`` was advised as ``passprice fact recompute my h200;$(id)``, which pasted runs ``id``, and
    ``h200:b.toml`` got no command (attack round 36). Raises nothing."""
    import shlex

    from passprice.lineage import COPIED_INPUTS

    seen: dict[str, bool] = {}
    for problem in problems:
        found = _STALE.search(problem)
        if found is not None:
            kind, name = found.groups()
            words = ["passprice", "fact", "recompute", shlex.quote(name), *(["--draft"] if kind == "drafts" else [])]
            command = " ".join(words)
            seen[command] = seen.get(command, False) or COPIED_INPUTS in problem
    # A card whose stale facts cite another card's places (copied: walkthrough 42) is recomputed only once their
    # figures are known to hold for it.
    return [f"to write them from today's inputs{' (once the copied ones hold for this card)' if copied else ''}: "
            f"`{command}`" for command, copied in seen.items()]


def _duplicate_checkpoints(root: Root) -> list[str]:
    """:func:`passprice.checkpoints.duplicate_lines` of every checkpoint entry of ``root`` that reads (loaded once
    already by the validation above: kept in the checkpoint cache), then :func:`passprice.checkpoints.architecture_note`
    of each whose architecture no price can take (an architecture passprice does not price, a windowed one without
    its window: session 36, every price of it refused); one that does not read is its own problem. Raises nothing."""
    from passprice.checkpoints import architecture_note, duplicate_lines, load_checkpoint

    headers = {}
    try:
        names = root.scan(root.checkpoints)
    except InputError:
        return []
    for name in names:
        try:
            headers[name] = load_checkpoint(root, name)
        except (InputError, OSError):
            continue
    unpriced = [note for name, header in headers.items() if (note := architecture_note(header, name))]
    return duplicate_lines(root, headers) + unpriced


def _runs_past_context(root: Root, runs: list[Run]) -> list[str]:
    """The lines of the measured ``runs`` whose card, checkpoint or routing record names no record that loads (``FILE:
    run.N.card: …``), or whose last position is past their checkpoint's context
    (:func:`passprice.measurements.past_context`): bad input, as ``validate`` and ``calibrate`` say of a run, which
    ``check`` passed ("all holds", exit 0) when the run was in no registered stack's fit (attack round 31). A card
    or checkpoint named that is not there is named once a file; one whose file does not read is left to that file's
    own lines. A file's first 20 lines are listed and the rest counted on one more line
    (:func:`passprice.measurements.first_run_problems`). Raises nothing."""
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.measurements import past_context, run_serving
    from passprice.routing import load_routing

    try:
        folder = root.measurements.relative_to(root.path)
    except ValueError:
        folder = root.measurements
    contexts: dict[str, int | NotFound | None] = {}
    cards: dict[str, NotFound | None] = {}
    routings: dict[str, NotFound | None] = {}
    unread: set[str] = set()
    headers: dict[str, GGUFHeader] = {}
    named: set[tuple[str, str, str]] = set()
    # A run's serving resolved once a setting (checkpoint, routing, card, batch, positions: all run_serving reads
    # of a run but its key): its problem lines and the key they name. 1,000 runs of a dense checkpoint naming a
    # routing record, each refused alike, took 2 s of CPU (leftovers round 20).
    served: dict[tuple[str, str, str, int, int, int], tuple[str, list[str]]] = {}
    by_file: dict[str, list[str]] = {}
    for run in runs:
        out = by_file.setdefault(run.source, [])
        where = f"{folder / f'{run.source}.toml'}: run.{run.index}"
        if run.card not in cards:
            cards[run.card] = None
            try:
                load_card(root, run.card)
            except NotFound as e:
                cards[run.card] = e
            except InputError:
                pass  # a card file that does not read: its own lines say so
        if run.checkpoint not in contexts:
            contexts[run.checkpoint] = None
            try:
                headers[run.checkpoint] = load_checkpoint(root, run.checkpoint)
                contexts[run.checkpoint] = headers[run.checkpoint].meta_int("context_length")
            except NotFound as e:
                contexts[run.checkpoint] = e
            except InputError:
                pass  # an entry that does not read: its own lines say so
        if run.routing is not None and run.routing not in routings:
            routings[run.routing] = None
            try:
                load_routing(root, run.routing)
            except NotFound as e:
                routings[run.routing] = e
            except InputError:  # a record that does not read: its own lines say so, once, not once a run
                unread.add(run.routing)
        named_records = [("card", cards[run.card]), ("checkpoint", contexts[run.checkpoint])]
        if run.routing is not None:  # a run of a mixture of experts names its routing record (walkthrough 22)
            named_records.append(("routing", routings[run.routing]))
        for key, failed in named_records:
            if isinstance(failed, NotFound) and (run.source, key, getattr(run, key)) not in named:
                named.add((run.source, key, getattr(run, key)))
                out.append(f"{where}.{key}: {failed.lines[0] if failed.lines else failed}")
        header = headers.get(run.checkpoint)
        if (run.routing is not None and header is not None and routings[run.routing] is None
                and run.routing not in unread):
            # The run as validate and calibrate price it: a dense checkpoint's run naming a routing record (or one
            # the record's scope refuses) is bad input there; check passed it when no registered stack fitted it
            # (slip round 32).
            setting = (run.checkpoint, run.routing, run.card, run.batch, run.first, run.last)
            if setting not in served:
                try:
                    run_serving(root, run, header)
                    served[setting] = (run.key, [])
                except InputError as e:
                    served[setting] = (run.key, problem_lines(e))
            key, lines = served[setting]
            out += [line.replace(key, where, 1) for line in lines]
        context = contexts[run.checkpoint]
        beyond = past_context(folder, run, None if isinstance(context, NotFound) else context)
        if beyond is not None:
            out.append(beyond)
    from passprice.measurements import first_run_problems

    return first_run_problems(by_file, folder)


#: The word for a record of each kind :func:`_validate_folder` reads where it differs from the kind's name, as a lookup
#: of a record by name says it (:func:`passprice.registry.not_found`'s ``kind``).
ENTRY_WORDS = {"routing": "routing record", "draft": "drafting method"}


def _validate_folder(
    root: Root, folder: Path, kind: str, build: Callable[[str, dict[str, Any], str], object], suffix: str = ".toml",
    warnings: list[str] | None = None,
) -> tuple[int, list[str]]:
    """How many files of ``kind`` ``folder`` holds, and the problem lines of those that do not read or validate;
    ``warnings``, when given, gains the lines that do not fail the check (a card whose title says hypothetical and
    is not marked so: :func:`passprice.cards.title_contradicts_mark`)."""
    problems: list[str] = []
    count = 0
    from passprice.registry import folder_problem

    problem = folder_problem(folder, root)
    if problem is not None:
        return 0, [problem]
    if not is_folder(folder):
        return 0, []
    # Sorted by name (the order of the paths themselves, one folder's): pathlib compares two paths in Python, which
    # for a folder of 2,000 files was 20,000 calls.
    from passprice.registry import editor_lock

    titles: dict[str, tuple[Path, str]] = {}  # a card's shown title, folded (title_key) → first file, its title
    notes: dict[str, Path] = {}  # a card's [card] note, its white space collapsed → the first file holding it
    # Listed with os.listdir, not Path.glob, which passes over a folder it may not list: ``check`` said "0
    # checkpoints … all holds", exit 0, of a registry/checkpoints of mode 311 (left41). Such a folder is one line
    # naming it (:func:`passprice.files.listing_refusal`), as every command needing its listing says.
    try:
        listed = sorted(name for name in os.listdir(folder) if name.endswith(suffix))
    except OSError as e:
        raise listing_refusal(e, folder, root.folder_named(folder)) from None
    for path in (folder / name for name in listed):
        if editor_lock(path.name):
            continue  # Emacs's .#FILE while a buffer is modified: no registry file, as the listings pass over it
        count += 1
        try:
            if is_folder(path):  # in the words of every lookup by name (registry.not_found), so that a serving
                # naming it adds no second line for the one problem ("is a folder, not a file" beside "is a folder,
                # not a routing record file": left42)
                problems.append(f"{path}: is a folder, not a {ENTRY_WORDS.get(kind, kind)} file")
                continue
            if kind == "card":  # as load_card reads it (kept by passprice.cache); its sources are reviewed later
                from passprice.cards import marked_title, read_card, title_contradicts_mark

                card = read_card(root, path)
                contradiction = title_contradicts_mark(card)
                if contradiction is not None and warnings is not None:
                    warnings.append(f"{path}: {contradiction}")
                # Compared as every table shows them: a real card titled "NVIDIA H200 SXM 141GB, hypothetical" and
                # the H200 marked hypothetical read alike there, and passed (attack round 47).
                shown = marked_title(card)  # not shown_title's ", not marked hypothetical" (left26b)
                first, first_title = titles.setdefault(title_key(shown), (path, card.title))
                if first != path:
                    alike = title_key(first_title) == title_key(card.title)
                    problems.append(same_title(path, card.title, first, None if alike else shown))
                if warnings is not None:
                    warnings += same_note(root, path, notes)
            elif kind == "checkpoint":
                # Loaded as the pricer loads it (schema, entry name = file name, header), and kept in its cache for
                # the servings and locks that name it.
                from passprice.checkpoints import load_checkpoint
                from passprice.decode import check_header

                # And held to the rule `checkpoints` lists it by and every price reads it by (decode.header_problems):
                # an entry without embedding_length passed here while `checkpoints` refused it (issue 13's
                # leftovers, session 26).
                check_header(load_checkpoint(root, str(path)))
            else:
                from passprice.registry import entry_name

                name = entry_name(path, suffix)
                document = schema.load(path, kind, root.schema)
                build(name, document, str(path))
        except InputError as e:
            problems += problem_lines(e)
    return count, problems + name_problems(folder, suffix)


def title_key(title: str) -> str:
    """A card title as two titles are compared: as it reads (:func:`passprice.files.reads_as`: case folded, NFKC, a
    Cyrillic or Greek letter as the Latin one it looks like), runs of white space one space (``NVIDIA  H200 ``,
    ``nvidia h200`` and ``NVIDIA Н200`` with a Cyrillic ``Н`` are one title to a reader of a table; the last passed
    ``check`` until attack round 46, as did a full-width ``ＮＶＩＤＩＡ``)."""
    from passprice.files import reads_as

    return " ".join(reads_as(title).split())


def same_title(path: Path, title: str, first: Path, shown: str | None = None) -> str:
    """The problem line of the card file ``path`` whose ``card.name`` (its ``title``) is the title of the card file
    ``first`` too: a card copied from another that kept its title (two cards, one title) made the review's tables,
    which show a card by its title, ambiguous, and ``check`` passed it (session 24). ``shown``: the title both are
    shown under when that is not ``title`` as written (:func:`passprice.cards.shown_title`: ``, hypothetical`` after a
    card marked so, attack round 47)."""
    if shown is not None:
        return (
            f"{path}: card.name: {title!r} shows as {first.name} does ({shown!r}, ', hypothetical' after a card "
            "marked so): a review's tables show a card by its title; give each card its own"
        )
    return (
        f"{path}: card.name: {title!r} is the title of {first.name} too: a review's tables show a card by its "
        "title; give each card its own"
    )


def same_note(root: Root, path: Path, notes: dict[str, Path]) -> list[str]:
    """The warning line of the card file ``path`` whose ``[card] note`` (white space collapsed) is the note of a card
    file read before it (``notes``: note → first file, which gains ``path``'s note when new; files are read by name,
    so the line may fall on the original rather than the copy, and names both): a card copied from
    another keeps the other card's note, which says what the other card's figures are and were checked against
    (slip 55: the copied-card rules flagged the re-cited facts of such a copy, and its note, identical, passed).
    A warning, not a problem: two cards of one die may share a note written for both. Empty for a card with no
    note. Raises :class:`InputError` as :func:`passprice.schema.load` (the file read already; its document is
    kept)."""
    meta = schema.load(path, "card", root.schema).get("card", {})
    note = " ".join(str(meta.get("note", "")).split())
    if not note:
        return []
    first = notes.setdefault(note, path)
    if first == path:
        return []
    return [f"{path}: card.note: the same text as the note of {first.name}: one card copied from the other with its "
            "note? a card's note says what its own figures are and were checked against; give each card its own"]


def lookalikes(folder: Path, suffix: str = ".toml") -> list[str]:
    """One line for each set of files in ``folder`` whose names differ only by case or by Unicode normalization
    (``é.toml`` written as one code point and as ``e`` + U+0301): they show as the same name in every listing and
    price, so a review cannot tell which one a serving names, and they are one file on macOS and Windows, where the
    checkout cannot hold both. Names are compared as NFC, case-folded."""
    from passprice.files import fold

    groups: dict[str, list[str]] = {}
    for name in sorted(path.name for path in folder.glob(f"*{suffix}")):  # strings: C compares them
        groups.setdefault(fold(name), []).append(name)
    return [
        f"{folder}: {', '.join(ascii(n) for n in names)}: names that differ only by case or Unicode normalization "
        "(they show alike, and are one file on macOS and Windows): rename all but one"
        for names in groups.values()
        if len(names) > 1
    ]


def name_problems(folder: Path, suffix: str = ".toml") -> list[str]:
    """The problem lines of the names of ``folder``'s record files (``*SUFFIX``), as every command that lists or
    checks a folder says them: names alike (:func:`lookalikes`), then names of Windows devices
    (:func:`device_names`). One place, so ``check``, the review, the listings (``cards``, ``servings``) and a sweep of
    every registered serving or card report the same names (the listings said nothing of ``nul.toml``: session 24)."""
    return lookalikes(folder, suffix) + device_names(folder, suffix)


def device_names(folder: Path, suffix: str | None = ".toml") -> list[str]:
    """One line for each entry of ``folder`` — a file of any suffix, or a folder — whose name no file on Windows may
    have, sorted by name: the name of a Windows device (:func:`passprice.registry.windows_device`: ``nul.toml``,
    ``CON.toml``, ``aux.lock.toml``, ``con.json``, a folder ``aux``, ``COM0.toml``), or a name holding a character no
    Windows file name holds (:func:`passprice.registry.windows_characters`: ``a:b.toml``, ``q?.toml``,
    ``x|y.lock.toml``; issue 13's leftovers, session 26), or a name ending in a dot or a space, which Windows
    drops (:func:`passprice.registry.windows_name_problem`: ``rtx_4090.toml.``, a folder ``measurements.``; attack
    round 47). A clone on Windows cannot check such an entry out, nor
    anything in the folder holding it, and a registry is reviewed in pull requests on every system. ``import``,
    ``synth``, ``new-serving`` and ``lock`` refuse to write one (attack round 45); one there already (written by hand,
    or before that round) was read by ``check`` without a word (slip 40), and until session 25 only ``*SUFFIX``
    record files were looked at (``facts/stacks/nul.json``, a folder ``registry/measurements/aux`` passed).
    ``suffix``: the suffix of the folder's record files (``None``: it holds none), whose control characters are the
    record name rule's to say (:func:`passprice.registry.name_problem`: "a character that does not print", one line
    for the file, not two); every name is looked at. The file is still read and checked as any other; the line makes
    ``check`` (and a review) exit 2, as :func:`lookalikes` does for names that are one file on Windows. Raises
    nothing (a folder that cannot be listed has no lines here)."""
    from passprice.registry import editor_lock, windows_characters, windows_device, windows_name_problem

    try:
        with os.scandir(folder) as entries:
            names = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries)
    except OSError:
        return []
    lines = []
    for name, a_folder in names:
        if editor_lock(name):
            continue
        what = "folder" if a_folder else "file"
        device = windows_device(name)
        if device is not None:
            lines.append(
                f"{folder / name}: {device} names a device on Windows, where no {what} of that name (with any "
                f"suffix) can be checked out: rename the {what} (and what names it)"
            )
            continue
        problem = windows_name_problem(name)
        if problem is not None:
            lines.append(f"{folder / name}: {problem}, so no Windows checkout can hold the {what} (Git for Windows "
                         f"refuses it): rename the {what} (and what names it)")
        record = suffix is not None and not a_folder and name.endswith(suffix)
        found = windows_characters("".join(ch for ch in name if ch >= " ") if record else name)
        if found:
            which = f"{found[0]} is a character" if len(found) == 1 else f"{', '.join(found)} are characters"
            lines.append(
                f"{folder / name}: {which} no file name on Windows holds, where no {what} of that name can be "
                f"checked out: rename the {what} (and what names it)"
            )
    return lines


def relative_lines(root: Root, lines: Sequence[str]) -> list[str]:
    """``lines`` with each path under ``root`` named relative to it (``facts/cards/nul.toml``), as ``check`` names
    every file: the one way problem lines name a registry's files, so the listings (``cards``, ``servings``,
    ``checkpoints``) and a sweep say a file's name as ``check`` does (session 25: under ``--root DIR`` they named it
    ``DIR/facts/cards/nul.toml``, absolute, where ``check`` said ``facts/cards/nul.toml``). Wherever in a line a
    path starts (after the line's start, a blank, a parenthesis, a quote, ``=``, ``,``, ``:`` or ``[``): a card
    citing a source record that does not validate read ``facts/cards/x.toml: streams.read.source: source 'ID' does
    not validate: /abs/root/sources/ID.toml: …`` under an absolute ``--root`` (session 29), where ``validate`` and
    ``calibrate`` (:func:`passprice.validate.registry_relative`, now this) named every path. A line of a folder that
    may not be searched (:data:`passprice.files.UNSEARCHABLE`) is left as it is: its folder leads it as the user gave
    the root, in every command (left40). Raises nothing."""
    start = re.compile(r"(?<![^\s(\"'=,:\[])" + re.escape(f"{root.path}{os.sep}"))
    # A folder that may not be searched leads its line as the user gave the root, in every command (left40:
    # ``servings`` said ``facts/cards`` where ``cards``, ``price`` and ``kv`` said ``/abs/REG/facts/cards``).
    return [line if unsearchable_folder(line) is not None else start.sub("", line) for line in lines]


def registry_device_names(root: Root) -> list[str]:
    """:func:`device_names` of the folders of ``root`` that hold the record folders (``facts/``, ``registry/``) and of
    the root's own ``schema/`` copy (which ``check`` compares with the package's): with the record folders' own
    (looked at where they are read), every entry passprice reads from a registry, and the folders it reads them from,
    is held to the one rule (session 25: ``facts/aux/``, ``schema/con.schema.json`` passed). Raises nothing."""
    lines = []
    for folder in (root.path / "facts", root.path / "registry", root.path / "schema"):
        if folder.is_dir() and not folder.is_symlink():
            lines += device_names(folder, None)  # no record files: a control character is this rule's to say
    return lines


@attrs.frozen
class FileReview:
    """What :func:`check` finds in a root's files before judging its locks: ``problems`` (lines naming file and key
    path), ``unreadable`` (those that are files that do not read), ``warnings``, and how many files of each kind
    (``kinds``)."""

    problems: tuple[str, ...]
    unreadable: tuple[str, ...]
    warnings: tuple[str, ...]
    kinds: tuple[tuple[str, int], ...]
    #: The source records that say ``retrieved = "unknown"``, by id: ``check`` warns of them in one line
    #: (:func:`passprice.sources.undated_line`); a review does not repeat that standing warning on HEAD.
    undated: tuple[str, ...] = ()
    #: The source records that read, by id, each loaded once (:func:`passprice.lineage.review`): ``check``'s look at
    #: quotes (:func:`passprice.lineage.quote_problems`) reads them from here.
    sources: tuple[tuple[str, Source], ...] = attrs.field(default=(), eq=False, repr=False)
    #: The cards, drafting methods and routing records that read (:func:`passprice.lineage.load_records`, by
    #: :func:`passprice.lineage.review`): ``check``'s look at quotes reads them from here, none read again.
    records: tuple[Record, ...] = attrs.field(default=(), eq=False, repr=False)


def review_files(root: Root, documents: Callable[[str], str | None] | None = None) -> FileReview:
    """Validate every record file of ``root`` against its schema (cards, drafting methods, routing records, stacks,
    checkpoints, measurements, sources, servings), recompute every derived fact and stack fit, and resolve every
    serving: all of :func:`check` but the locks (``passprice diff`` runs it on HEAD, so a review fails where
    ``check`` would). File names in the lines are relative to ``root``. The files are read as one snapshot
    (:func:`passprice.snapshot.reading`): each once, whatever the number of servings naming it. ``documents``: the
    identity (``sha256:…``) of each registry document by its path, where ``root`` does not hold their bytes (a
    review's revision: :meth:`passprice.review.sides.Side.document`); by default each is hashed where it lies."""
    from passprice import snapshot

    with snapshot.reading():
        return _review_files(root, documents)


def _review_files(root: Root, documents: Callable[[str], str | None] | None = None) -> FileReview:
    from passprice.lineage import review
    from passprice.serving import ServingRefusal
    from passprice.servings import load_spec, resolve

    problems: list[str] = []
    unreadable: list[str] = []  # the problems that are files that do not read (an InputError)
    kinds: dict[str, int] = {}
    from passprice.measurements import missing_source_line, new_ids, require_inside_root, runs_of_document
    from passprice.stacks import stack_from_document

    run_ids: dict[str, str] = {}  # a run id names one run: given twice, calibrate and best refused while check passed

    all_runs: list[Run] = []
    titles: list[str] = []  # cards whose title says hypothetical, not marked so: warnings (left26b)

    def measured(name: str, document: dict[str, Any], where: str) -> list[Run]:
        runs = require_inside_root(root, runs_of_document(name, document, where), where)
        # Each run cites a registered source, as validate and calibrate require (measurements.load_file): a file of
        # runs citing 'nobody-knows' read "0 problems" here, and the review passed it (slip round 34).
        missing = sorted({r.source_id for r in runs if not is_there(root.sources / f"{r.source_id}.toml")})
        if missing and is_folder(root.sources):  # a sources/ that is a file is one line of its own
            raise InputError(missing_source_line(where, document, runs, missing, "sources/"))
        run_ids.update(new_ids(runs, where, run_ids))
        all_runs.extend(runs)
        return runs

    for folder, kind, build in (
        (root.cards, "card", card_from_document),
        (root.drafts, "draft", method_from_document),
        (root.routing, "routing", routing_record),
        (root.stacks, "stack", stack_from_document),
        (root.checkpoints, "checkpoint", lambda name, doc, src: None),
        (root.measurements, "measurement", measured),
    ):
        n, found = _validate_folder(root, folder, kind, build, warnings=titles)
        kinds[f"{kind}s"] = n
        problems += found
        unreadable += found
    found = _runs_past_context(root, all_runs)
    problems += found
    unreadable += found
    from passprice.registry import folder_problem, stray_lines

    found = stray_lines(root)  # a folder passprice reads nothing from, holding records (registry/serving/)
    problems += found
    unreadable += found
    for folder, suffix in ((root.servings, ".toml"), (root.sources, ".toml"), (root.locks, ".lock.toml")):
        problem = folder_problem(folder, root)  # a file where the folder should be: one line, the rest still checked
        found = [problem] if problem is not None else name_problems(folder, suffix)
        problems += found
        unreadable += found
    found = registry_device_names(root)
    problems += found
    unreadable += found
    # sources cited and registered, derived facts recomputed (passprice.lineage); a source file that does not read
    # is bad input too, as a card is: review's look at sources/ (sources.check_sources, each record loaded once)
    # appends its lines to unreadable. Until issue 13's leftovers each record was loaded a second time here
    # (read_sources) for the same lines: 4,000 records, 8,000 schema.load calls.
    undated: list[str] = []
    loaded: dict[str, Source] = {}
    records: list[Record] = []
    found, warnings = review(root, unreadable, documents, undated, loaded, records)
    problems += found
    found = documents_alike(root, loaded.values())
    problems += found
    unreadable += found
    warnings = [*titles, *warnings]
    from passprice.stackfits import review_stacks

    # stack facts read off measured runs: runs still there, fits re-run (issue 14); a broken fit is a bad file
    found, more = review_stacks(root, unreadable)
    problems += found
    warnings += more
    from passprice.gitread import work_tree_rewrites

    # A file git rewrites in a checkout (a .gitattributes rule) says one thing to a review, which reads git, and
    # another to check and price here (slip 27): bad input, as a file that does not read.
    found = work_tree_rewrites(root.path, ("facts", "registry", "locks", "sources", "schema"),
                               lambda: _named_by_sources(root))
    problems += found
    unreadable += found
    from passprice.registry import schema_copy_drift

    warnings += schema_copy_drift(root)  # the editors' copy of the schemas, never validated against
    from passprice.registry import stray_headers

    warnings += stray_headers(root)  # a GGUF file copied among the checkpoint entries
    warnings += _duplicate_checkpoints(root)  # one header imported under two names (walkthrough 39)
    from passprice.registry import stale_temporaries

    warnings += stale_temporaries(root)  # a write killed before it removed its temporary file
    kinds["sources"] = len(root.scan(root.sources))
    kinds["servings"] = 0
    # What resolving a serving decides (its checkpoint, card, method and routing load and hold to their scopes, its
    # defaults complete) is a function of the fields it gives, not of the file it was read from, which only words a
    # refusal: a serving alike in every other field to one that resolved resolves too (a registry of 2,000 servings
    # of a dozen pairs). Only what resolved is remembered; a refusal is reached again for each file, in its words.
    from passprice.servingfile import routing_problem
    from passprice.servings import ServingSpec

    fields = tuple(f.name for f in attrs.fields(ServingSpec) if f.name not in ("source", "description"))
    resolved: set[tuple[Any, ...]] = set()
    for name in root.scan(root.servings):
        kinds["servings"] += 1
        try:
            spec = load_spec(root, name)
            alike: tuple[Any, ...] | None = tuple(getattr(spec, f) for f in fields)
            try:
                if alike in resolved:
                    continue
            except TypeError:  # a field that does not hash: resolved on its own
                alike = None
            made = resolve(root, spec)
            unroutable = routing_problem(made)
            if unroutable is not None:  # walkthrough 40: a serving every price of which is refused BadRouting
                assert made.serving.routing is not None
                problems.append(f"{root.servings / f'{name}.toml'}: routing: {made.serving.routing.name!r} "
                                f"{unroutable}")
                continue
            if alike is not None:
                resolved.add(alike)
        except InputError as e:
            problems += problem_lines(e)
            unreadable += problem_lines(e)
        except ServingRefusal as e:  # a drafting method out of its scope (passprice.scopes.OutOfScope)
            problems.append(f"{root.servings / f'{name}.toml'}: refused ({e.name}): {e}")
    prefix = f"{root.path}{os.sep}"
    return FileReview(
        tuple(dict.fromkeys(p.removeprefix(prefix) for p in problems)),
        tuple(dict.fromkeys(p.removeprefix(prefix) for p in unreadable)),
        tuple(w.removeprefix(prefix) for w in warnings),
        tuple(kinds.items()),
        tuple(undated),
        tuple(loaded.items()),
        tuple(records),
    )


def documents_alike(root: Root, sources: Iterable[Source] | None = None) -> list[str]:
    """:func:`lookalikes` of each folder holding a stored excerpt or a registry document a source record names
    (:func:`_named_by_sources`; ``sources/`` itself is looked at with the records): every file of it, of any suffix.
    ``sources/excerpts/cite70-excerpt.txt`` beside ``CITE70-excerpt.txt`` (or the same name in another Unicode
    normalization) passed ``check``, "all holds", though a checkout on macOS or Windows holds one of them, and a
    record pinning the other's sha256 fails there (tests/test_attack187.py). Raises nothing."""
    if not root.sources.is_dir():  # no source records to name any: the folder's own problem is said where it is read
        return []
    folders = {(root.path / rel).parent for rel in _named_by_sources(root, sources)} - {root.sources}
    return [line for folder in sorted(folders) if folder.is_dir() for line in lookalikes(folder, "")]


def _named_by_sources(root: Root, sources: Iterable[Source] | None = None) -> list[str]:
    """The stored excerpts (``source.excerpt``) and registry documents (``source.path``) the source records of
    ``root`` that read name, each a plain path inside the root (no ``..``, not absolute, no line break or NUL): the
    files whose rewrite rules a review refuses at HEAD beside the records (:func:`passprice.gitread.work_tree_rewrites`
    asks them of a work tree). Raises nothing."""
    from passprice.sources import read_sources

    named = []
    for source in read_sources(root)[0].values() if sources is None else sources:
        for rel in (source.excerpt, source.path):
            if (rel and not rel.startswith("/") and ".." not in rel.split("/")
                    and not any(c in rel for c in "\0\n\r")):
                named.append(rel)
    return sorted(set(named))


def check(root: Root) -> CheckReport:
    """Validate every file of ``root`` against its schema (cards, drafting methods, routing records, checkpoints,
    servings, locks, sources), recompute every derived fact, resolve every serving (:func:`review_files`), and judge
    every lock: reproduction from its pinned facts, today's floors, drift. The files are read as one snapshot
    (:func:`passprice.snapshot.reading`)."""
    from passprice import snapshot

    with snapshot.reading():
        return _check(root)


def _check(root: Root) -> CheckReport:
    files = review_files(root)
    problems = list(files.problems)
    from passprice.lineage import quote_problems

    # quoted words its stored excerpt lacks: what audit says NOT FOUND of and the review fails (tests/test_fix190.py)
    which: list[str] = []  # a quote stating its figure among others, nothing saying which (tests/test_fix56.py)
    problems += quote_problems(root, dict(files.sources), records=files.records, warnings=which)
    unreadable = list(files.unreadable)
    kinds = dict(files.kinds)
    statuses = []
    read: list[Any] = []
    paths: list[Path] = []
    kinds["locks"] = 0
    from passprice.locks import folder_batch

    names = root.scan(root.locks, ".lock.toml")
    aliases = alias_lines(root, names)
    for i, name in enumerate(names):
        path = root.locks / f"{name}.lock.toml"
        if path in aliases:
            continue
        kinds["locks"] += 1
        try:
            status, lock = _judge_lock(root, path, folder_batch(root, i))
        except InputError as e:
            problems += problem_lines(e)
            unreadable += problem_lines(e)
            continue
        statuses.append(status)
        read.append(lock)
        paths.append(path)
    disagreements = _disagreements(read)
    duplicates = duplicate_lines(root, list(zip(paths, read, strict=True)))
    shared = shared_name_lines(root, list(zip(paths, read, strict=True)), [pair for pair, _ in duplicates])
    problems += shared
    unreadable += shared
    # A broken card or checkpoint is met again by every serving and lock naming it: report each line once, and name
    # files relative to the root, as the lock lines do.
    unique = tuple(dict.fromkeys(relative_lines(root, problems)))
    from passprice.sources import undated_line

    undated = undated_line(files.undated)  # left32: a warning, never a failure: a date is not guessed
    shown = (files.warnings + tuple(relative_lines(root, which)) + tuple(aliases.values())
             + tuple(line for _, line in duplicates)
             + ((undated,) if undated else ()))
    unread = tuple(dict.fromkeys(relative_lines(root, unreadable)))
    return CheckReport(
        sum(kinds.values()), unique, tuple(statuses), tuple(kinds.items()), disagreements, shown, unread
    )


def alias_lines(root: Root, names: list[str]) -> dict[Path, str]:
    """The symbolic links among ``root/locks``' lock files ``names`` (stems, as :meth:`Root.scan` lists them) that
    lead to another lock file of the same folder, itself no link, each with its warning: such a link is that lock
    under a second name (every command reads it as that lock, and a re-lock writes through it), so ``check`` judges
    the file once, under its own name, and names the link once here. Left58 (left55's leftover):
    ``alias.lock.toml → r1-qwen7b-h200.lock.toml`` was judged as a lock of its own (two "lock r1-qwen7b-h200" blocks,
    "11 locks" for 10 files) and warned of as a copy, "locks/alias.lock.toml duplicates … remove one", though
    re-locking either changes both. A hard link (one inode, two names) is left a copy: a re-lock replaces one name
    by a temporary file's rename and leaves the other pinning the old facts, as the copy warning says. A link that
    does not resolve, or leads elsewhere, is judged as its own file (its reader names what is wrong). Only links are
    resolved. Raises nothing."""
    listed = set(names)
    out: dict[Path, str] = {}
    folder: Path | None = None
    for name in names:
        path = root.locks / f"{name}.lock.toml"
        if not path.is_symlink():
            continue
        try:
            folder = folder or root.locks.resolve()
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        stem = real.name.removesuffix(".lock.toml")
        target = root.locks / real.name
        if real.parent != folder or stem == real.name or stem not in listed or target.is_symlink():
            continue
        out[path] = (f"{escaped(_shown(root, path))} is a symbolic link to {escaped(_shown(root, target))} beside it: "
                     f"judged once, as {escaped(_shown(root, target))} (every command reads the link as that lock)")
    return out


def _shown(root: Root, path: Path) -> str:
    """``path`` relative to the root (``locks/NAME.lock.toml``) when it lies inside it, else as given."""
    try:
        return str(path.relative_to(root.path))
    except ValueError:
        return str(path)


def _figures(price: Any) -> str:
    return f"{price['tokens_per_s']:,.1f} tokens/s at batch {price['batch']:,}"


def prices_moved_by(root: Root, card: str, path: str) -> list[LockStatus]:
    """The locks of ``root`` whose recorded price rests on fact ``path`` of card ``card`` (their ``[price.rests_on]``,
    :func:`passprice.locks.floors_below`'s index) and that today's inputs price otherwise (:attr:`LockStatus.today`),
    each judged as ``check`` judges it, by file name: what ``fact set`` names after an edit of the fact's figure (a
    new user's edit moved 4 locked prices, and nothing said so before the review failed). A lock that does not read
    or is not judged is left out (``check`` names it). Raises nothing."""
    from passprice.locks import _floor_index

    out = []
    for file, summary in _floor_index(root):
        if summary is None or summary[1] != card or path not in summary[2]:
            continue
        try:
            status = _judge_lock(root, file)[0]
        except InputError:
            continue
        if status.today is not None and status.reproduces:
            out.append(status)
    return out


def _judge_lock(root: Root, path: Path, batch: str | None = None) -> tuple[LockStatus, Any]:
    """One lock's status (and the lock read), from :func:`passprice.reproduce.reproduce`; ``batch``: the cache
    batch the lock is read in (:func:`passprice.locks.folder_batch`)."""
    from passprice import snapshot
    from passprice.locks import older_format, read_lock_in
    from passprice.registry import pasted_path, registry_named
    from passprice.reproduce import reproduce

    lock = read_lock_in(root, path, batch)
    # Inside a snapshot (one read of the registry) a lock of the same content (a copy under another file name, its
    # bytes the same or not: a comment, its keys in another order) is reproduced once: what reproduce reads besides
    # the lock (today's serving, card, checkpoint) is the snapshot's. The lock's own digest, checked when it was read
    # (locks.check_digests: everything it holds but itself, as canonical JSON), names its content; 1,000 copies
    # each of its own bytes were each reproduced (issue 13, scale88).
    content = lock.info.digest or schema.read_bytes(path)
    rep = snapshot.made(("reproduce", str(root.path), content), lambda: reproduce(root, lock))
    today = rep.today
    moved = tuple(m.line() for m in rep.moved)
    if today.error is not None:
        holds, text, refusal = False, f"today's files do not read: {today.error}", None
    elif today.refusal is not None:
        holds, text = False, f"today's inputs refuse the price: {today.refusal.get('message', '')}"
        refusal = today.refusal.get("refusal")
    else:
        assert today.verdict is not None
        holds, text, refusal = today.verdict.holds, today.verdict.message(), None
        if not holds:  # the next step, as every floor refusal gives it: the same lock, only the floor loosened
            from passprice.enforce import relock_command, ways_out

            relock = relock_command(today.verdict, lock.info.serving, pasted_path(root, path))
            text += f"; {ways_out(today.verdict)} ({relock})"
    checkpoint = rep.checkpoint.describe()
    pinned = lock.checkpoint_pin.content or lock.checkpoint_pin.sha256
    if (rep.checkpoint.status == "renamed" and rep.checkpoint.today is not None and today.refusal is None
            and today.error is None and today.checkpoint is not None and today.checkpoint != pinned):
        # The serving still prices the entry the lock pinned by name, which holds other content now: ``price``
        # refuses it (CheckpointChanged), however another entry holds the pinned content, from which the lock
        # reproduces (slip 27: an entry edited beside a copy of it as it was, and check said "all holds").
        from passprice.enforce import CheckpointChanged

        changed = CheckpointChanged(lock, lock.checkpoint_pin.name, pinned, today.checkpoint)
        holds, text, refusal = False, f"today's inputs refuse the price: {changed}", changed.name
        checkpoint = (f"{rep.checkpoint.ref}: content changed ({_short(pinned)} pinned, {_short(today.checkpoint)} "
                      f"today); the pinned content is in entry {rep.checkpoint.found}")
    if today.gone:
        holds = False
        text = f"serving {lock.info.serving}, which the lock locks, is not registered; restore it or remove the lock"
    from passprice.enforce import LockModelForged, LockUnlisted, require_known_model

    try:  # every price refuses a lock of a pricing model no passprice had, so check fails it (slip 55), and one of
        # the checkout's locks/ on an older model whose record the list does not name (slip 57)
        require_known_model(attrs.evolve(lock, source=_shown(root, path)), no_lock=False, root=root.path)
    except (LockModelForged, LockUnlisted) as e:
        holds, text, refusal = False, f"today's inputs refuse the price: {e}", e.name
    from passprice.pins import checkout_note

    model = "same" + ("" if root.embedded else checkout_note(root.path))
    if not lock.info.pricing_model.startswith("sha256:"):
        recorded = f"format {lock.info.format} recorded {lock.info.pricing_model!r}"
        model = f"not pinned ({recorded}); today's is {_short(rep.pricing_model)}"
    elif rep.model_changed:
        model = f"changed since the lock ({_short(lock.info.pricing_model)} → {_short(rep.pricing_model)})"
        model += "; every recorded field reproduces" if rep.equals else "; the price moves"
    shown_today = None
    if today.price is not None and today.price.get("tokens_per_s") != lock.price.get("tokens_per_s"):
        shown_today = f"{_figures(lock.price)} recorded; {_figures(today.price)} with today's inputs"
    status = LockStatus(
        name=lock.name,
        path=_shown(root, path),
        reproduces=rep.equals,
        moved=moved,
        holds=holds,
        verdict=text,
        # A fact today's price rests on that the lock does not pin (a stack's per-card share added over the share
        # the lock pinned) moved the price as a drifted one does: --frozen said "drift: none" (attack round 32).
        drift=tuple(d.describe() for d in today.drift) + tuple(
            f"{p}: not pinned → {f.describe()} ({f.provenance.value}): the price now rests on it"
            for p, f in today.unpinned
        ) + today.relabelled,  # the card's title or hypothetical, a description: pinned, moves no number (slip 42)
        refusal=refusal,
        format=lock.info.format,
        reproduction=rep.verdict(pasted_path(root, path)),
        pricing_model=model,
        checkpoint=checkpoint,
        checkpoint_changed=rep.checkpoint.changed,
        serving=tuple(s for s in today.serving if not s.startswith("serving ")),
        today=shown_today,
        older=older_format(lock, pasted_path(root, path), root, path),
        serving_name=lock.info.serving,
        judged=today.error is None,
        unjudged=today.error or "",
        rewritten=tuple(d.describe() for d in today.rewritten),
        registry=registry_named(root),
        pasted=pasted_path(root, path),
    )
    return status, lock


#: How many unlike locks of one rough group :func:`duplicate_lines` compares a lock with field by field before it
#: keys the rest by their whole text.
DUPLICATE_CANDIDATES = 64


def duplicate_lines(root: Root, locks: list[tuple[Path, Any]]) -> list[tuple[tuple[str, str], str]]:
    """The lock files of ``locks`` (each a path and the lock read from it, in file-name order) that pin what an
    earlier one pins: the same ``[lock]`` table but for its name (kind, registered serving, pricing model), serving,
    stack, checkpoint and card pins, every pinned fact, floors and recorded price — a lock file copied under another
    name (``cp locks/A.lock.toml locks/B.lock.toml``), or locked twice with the same options. Each pair (the two
    paths relative to the root, the earlier first) with its line.

    A copy guards nothing the original does not, and it misleads: a later ``lock --update`` of one leaves the other
    pinning the old facts (then the two disagree, or one drifts), and a copy keeps the original's ``[lock]`` name,
    which every lock line and refusal prints, naming a file it does not lie in. Not a failure (a duplicate lets no
    change past its floors): a warning of ``check``, and of a review that adds or changes one of the two
    (:func:`passprice.review.verdict.compare`)."""
    import json

    from passprice.locks import converter

    # Only locks alike in what is cheap to compare (serving, kind, card, checkpoint, recorded figures) are compared
    # whole: a registry of locks of different servings pays nothing for it.
    alike: dict[tuple[Any, ...], int] = {}
    cheap: list[tuple[Any, ...]] = []
    for _, lock in locks:
        rough = (lock.info.serving, lock.kind, lock.card_pin, lock.checkpoint_pin, lock.price.get("tokens_per_s"),
                 lock.price.get("batch"))
        cheap.append(rough)
        alike[rough] = alike.get(rough, 0) + 1
    # Within a rough group, a lock is compared field by field (attrs' equality, its name and digest blanked) with
    # the first DUPLICATE_CANDIDATES unlike locks met; past them, by its whole unstructured text. Issue 13 (session
    # 33): each lock of 4,209 was unstructured twice and each fact digested (three walks of its facts, 51 of 82
    # profiled seconds of `check`).
    firsts: dict[tuple[Any, ...], list[tuple[Any, tuple[str, Any]]]] = {}
    first: dict[str, tuple[str, Any]] = {}
    hashed: dict[Any, tuple[str, Any]] = {}
    out: list[tuple[tuple[str, str], str]] = []
    for (path, lock), rough in zip(locks, cheap, strict=True):
        if alike[rough] < 2:
            continue
        blank = attrs.evolve(lock, info=attrs.evolve(lock.info, name="", digest=""))
        rel = _shown(root, path)
        frozen = _frozen(blank)
        if frozen is not None:  # every lock of a registry: one dictionary look-up
            found = hashed.get(frozen)
            if found is None:
                hashed[frozen] = (rel, lock)
                continue
        else:
            met = firsts.setdefault(rough, [])
            found = next((kept for other, kept in met if other == blank), None)
            if found is None and len(met) < DUPLICATE_CANDIDATES:
                met.append((blank, (rel, lock)))
                continue
        if found is None:
            body = converter().unstructure(attrs.evolve(blank, facts={}))
            body["facts"] = {p: converter().unstructure(f) for p, f in sorted(lock.facts.items())}
            key = json.dumps(body, sort_keys=True, default=repr)
            if key not in first:
                first[key] = (rel, lock)
                continue
            found = first[key]
        # The copy is the file not named after its lock (a copy keeps the original's name), else the later one.
        copy, original = (rel, lock), found
        if _named_after(*copy) and not _named_after(*original):
            copy, original = original, copy
        # The file names escaped (attack round 21: a copy named with a newline split the warning in two).
        copied, kept = escaped(copy[0]), escaped(original[0])
        named = "" if _named_after(*copy) else f"; {copied} is named {copy[1].name!r} inside, not after its file"
        serving = f"serving {lock.info.serving}" if lock.info.serving else "no registered serving"
        out.append(((found[0], rel), (
            f"{copied} duplicates {kept}: it locks {serving} ({lock.kind}) with the same pins, floors and "
            f"price under another file name{named}; it guards nothing {kept} does not, and re-locking one "
            "leaves the other pinning the old facts: remove one"
        )))
    return out


def shared_name_lines(root: Root, locks: list[tuple[Path, Any]], duplicates: list[tuple[str, str]]) -> list[str]:
    """One problem line for each lock file of ``locks`` (each a path and the lock read from it, in file-name order)
    whose ``[lock]`` name an earlier one already carries while the two pin different facts (a pair of
    :func:`duplicate_lines`, given in ``duplicates`` as its two paths relative to the root, is a copy: a warning of
    its own, not repeated here). A lock's name is what every lock line, refusal and ``--lock NAME`` names it by, so
    two locks of one name, pinning different facts, make each line ambiguous: a name must be unique. The file
    blamed is the one not named after its lock (``locks/NAME.lock.toml``), else the later. A lock of the first
    format is let by: its name is the serving it locks (:func:`passprice.locks.locked_serving`), so renaming it would
    change what it locks (an older lock kept beside its re-lock). Bad input (exit 2): ``FILE: lock.name: 'NAME' is
    also the name of OTHER, …``. Left55 (attack 73's leftover): a lock re-digested under another lock's name, with
    other pins, passed ``check`` ("all holds", exit 0)."""
    copies = {frozenset(pair) for pair in duplicates}
    first: dict[str, str] = {}
    out: list[str] = []
    for path, lock in locks:
        if lock.info.format == 1:
            continue
        rel = _shown(root, path)
        kept = first.setdefault(lock.name, rel)
        if kept == rel or frozenset((kept, rel)) in copies:
            continue
        blamed, other = rel, kept
        if _named_after(rel, lock) and not _named_after(kept, lock):
            blamed, other = kept, rel
        out.append(f"{escaped(blamed)}: lock.name: {lock.name!r} is also the name of {escaped(other)}, which pins "
                   "other facts: a lock's name must be unique (every lock line and refusal names a lock by it): "
                   "rename one (`passprice lock --name NAME`, or its file and name)")
    return out


def _frozen(value: Any) -> Any:
    """``value`` (a lock, its name and digest blanked) as a hashable key equal for two values exactly when attrs'
    equality finds them equal: a hashable value as it is (a frozen fact), a dict as the frozenset of its items, a
    list or tuple as a tuple, an attrs instance as its class and its compared fields; ``None`` when some part is
    none of these and unhashable (then :func:`duplicate_lines` compares field by field). Attack 60: 5,000 locks of
    one serving and price, each with a fact's note of its own, took 2.7 s of CPU (11 s on the loaded 2-core
    machine): each compared with 64 candidates, then unstructured to JSON; keyed so, 0.7 s (5,000 copies of one
    lock: 0.25 → 0.6 s)."""
    if isinstance(value, dict):
        try:
            return ("dict", frozenset(value.items()))  # each value hashed once (a fact: its whole derivation)
        except TypeError:
            items = [(k, _frozen(v)) for k, v in value.items()]
            if any(f is None and value[k] is not None for k, f in items):
                return None
            return ("dict", frozenset(items))
    if isinstance(value, list | tuple):
        parts = [_frozen(v) for v in value]
        if any(f is None and v is not None for f, v in zip(parts, value, strict=True)):
            return None
        return (type(value).__name__, tuple(parts))
    try:
        hash(value)
        return value
    except TypeError:
        if not attrs.has(type(value)):
            return None
    fields = [a for a in attrs.fields(type(value)) if a.eq]
    parts = [_frozen(getattr(value, a.name)) for a in fields]
    if any(f is None and getattr(value, a.name) is not None for f, a in zip(parts, fields, strict=True)):
        return None
    return (type(value), tuple(parts))


def _named_after(rel: str, lock: Any) -> bool:
    """Whether the lock file at ``rel`` is named after the lock it holds (``locks/NAME.lock.toml``)."""
    return Path(rel).name == f"{lock.name}.lock.toml"


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12] + ("…" if digest.startswith("sha256:") else "")


def _disagreements(locks: list[Any]) -> tuple[str, ...]:
    """Pairs of locks of one registered serving, of one kind, pricing the same serving, whose recorded figures
    differ: at most one of them can be the serving's price."""
    from passprice.locks import FIGURES
    from passprice.reproduce import serving_changes

    # Only locks of one serving and kind can disagree, and only within a group whose recorded figures are not all
    # the same: each pair of such a group is compared, in the order the locks were read (2,000 copies of a lock are
    # 2,000 comparisons, not two million).
    groups: dict[tuple[str, str], list[int]] = {}
    for i, lock in enumerate(locks):
        if lock.info.serving is not None:
            groups.setdefault((lock.info.serving, lock.kind), []).append(i)
    pairs = []
    for members in groups.values():
        first = locks[members[0]].price
        if all(not any(locks[n].price.get(f) != first.get(f) for f in FIGURES) for n in members[1:]):
            continue
        pairs += [(i, j) for k, i in enumerate(members) for j in members[k + 1 :]]
    out = []
    for i, j in sorted(pairs):
        a, b = locks[i], locks[j]
        if serving_changes(a.spec, b.spec):
            continue
        differ = [f for f in FIGURES if a.price.get(f) != b.price.get(f)]
        if differ:
            out.append(
                f"{a.name} and {b.name} both lock serving {a.info.serving} ({a.kind}) but record different "
                f"prices: {_figures(a.price)} against {_figures(b.price)} (first: {differ[0]}); re-lock one, or "
                "remove it"
            )
    return tuple(out)
