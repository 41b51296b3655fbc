"""What a change does to the locks: every lock resting on a changed file is re-priced on both sides, each
with that side's own code (:class:`PriceSide`), and judged against its floors (:class:`LockImpact`), so a reviewer
sees how the prices move and whether a lock's floors still hold, never inferred from the facts' change alone. A
lock that cannot be read or re-priced on a side is shown with its error, never dropped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import tempfile
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import cache, gitread, schema
from passprice.derivations import Derivation, Finding, RunDerivation
from passprice.errors import InputError, escaped, spelled
from passprice.facts import Fact, Provenance
from passprice.files import shell_word
from passprice.locks import FloorChange, Lock, Verdict, compare_policies, first_format_clash, judge, read_lock
from passprice.pins import LOCK_FORMAT
from passprice.registry import Root, lock_order, temporary_root
from passprice.reproduce import same_quantity
from passprice.review.changes import (
    FactChange,
    FileChange,
    _folded,
    _n,
    _pct,
    _read,
    _serving_change_pairs,
    _serving_changes,
    fact_changes,
    side_toml,
)
from passprice.review.sides import CODE, Checkout, Side, _named_by_sources, _run_git, file_kind
from passprice.servings import spec_to_document
from passprice.sidecode import Code, code_folder, price_locks
from passprice.tables import si_pair

if TYPE_CHECKING:
    from passprice.modelhistory import KnownModel
    from passprice.modellist import ListChanges
    from passprice.reproduce import RoutingTogether

    #: BASE's and HEAD's list of pricing models as :func:`_side_lists` reads them: by digest, ``None`` where a side
    #: has none, HEAD's error line where it does not read; ``None`` for the pair when HEAD's code is not its own.
    SideLists = tuple[dict[str, KnownModel] | None, dict[str, KnownModel] | str | None] | None


@attrs.frozen
class PriceSide:
    """A lock re-priced on one side (by :func:`passprice.reproduce.side_json`, with that side's code): the
    ``price`` (the ``--json`` object of the result), or the ``refusal`` the pricer gave, or the ``error`` that kept
    it from being priced (a file that does not read, a card that is not there, the side's code failing); ``spec``
    the completed serving priced, ``checkpoint`` its content digest, ``facts`` the provenance of every fact it could
    rest on, ``gone`` when the registered serving the lock names is missing on that side."""

    price: Mapping[str, Any] | None = None
    refusal: Mapping[str, Any] | None = None
    error: str | None = None
    spec: Mapping[str, Any] | None = None
    checkpoint: str | None = None
    facts: Mapping[str, str] = attrs.field(factory=dict)
    gone: bool = False

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> PriceSide:
        """The side of a :func:`~passprice.reproduce.side_json` result."""
        return cls(
            result.get("price"),
            result.get("refusal"),
            result.get("error"),
            result.get("spec"),
            result.get("checkpoint"),
            result.get("facts") or {},
            bool(result.get("gone")),
        )

    @property
    def tokens_per_s(self) -> float | None:
        """Tokens/s of the price, ``None`` when there is none."""
        return None if self.price is None else float(self.price["tokens_per_s"])

    def rests_on(self) -> tuple[str, ...]:
        """The paths the price rests on (none without a price)."""
        return tuple(self.price.get("rests_on", {})) if self.price is not None else ()

    def short(self) -> str:
        """``refused: NotResident`` or ``not priced`` for a side without a price, else tokens/s."""
        if self.price is not None:
            return f"{self.price['tokens_per_s']:,.1f}"
        if self.refusal is not None:
            return f"refused: {self.refusal.get('refusal')}"
        return "not priced"

    def to_json(self) -> dict[str, Any]:
        """The price object, ``{"refusal": …}``, or ``{"error": …}``."""
        if self.price is not None:
            return dict(self.price)
        if self.refusal is not None:
            return dict(self.refusal)
        return {"error": self.error}


def _expected_tokens(side: PriceSide) -> float | None:
    """The expected tokens/s of a price made under a serving stack (``None`` without one)."""
    expected = side.price.get("expected") if side.price is not None else None
    if not isinstance(expected, Mapping) or not isinstance(expected.get("tokens_per_s"), int | float):
        return None
    return float(expected["tokens_per_s"])


def _figures_differ(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str | None:
    """The first of :data:`~passprice.locks.FIGURES` that differs between two prices, then (under a serving stack) of
    the expected price's (:func:`~passprice.locks.expected_moved`; ``None`` when none does or a
    side has none). ``host_capacity_bytes`` only counts when a side holds sequences in host memory: the seed's record
    shows the card's host capacity either way, but a price without host sequences does not rest on it."""
    if a is None or b is None:
        return None
    from passprice.locks import holds_host, priced_figures

    first = next((f for f in priced_figures(a, {}, holds_host(a, b)) if a.get(f) != b.get(f)), None)
    if first is None:
        # Under a serving stack the expected price is locked too (a re-fit or an edited share moves it alone).
        from passprice.reproduce import expected_moved

        expected = expected_moved(a, b)
        first = expected[0].field if expected else None
    return first

#: A lock's ``cites`` entry (:attr:`LockImpact.cites`, :func:`_lock_cite`): ``(path, source, locator, recited,
#: derivation, value_changed, inputs_give, figures)``; ``inputs_give`` what the derivation's recorded inputs give
#: when the value does not follow from them (:func:`_inputs_give`), ``figures`` the fact's new and old amounts (as
#: written, in either side's unit) when it carries no derivation: the figures its cut locator keeps whole
#: (:func:`passprice.review.quotes._cut_keeping`).
Cite = tuple[str, str | None, str | None, bool, Derivation | None, bool, str | None, tuple[float, ...]]


@attrs.frozen
class LockImpact:
    """One lock reviewed: its ``name``, ``path``, ``card``, ``kind``, the registered ``serving_name`` it locks; its
    file's ``status`` (``added``, ``removed``, ``changed``, ``unchanged``); the price ``before`` (BASE's inputs and
    code, BASE's lock) and ``after`` (HEAD's inputs and code, HEAD's lock); the price each side's lock file
    recorded (``recorded_before``, ``recorded``); each side's floors judged with that side's policy
    (``verdict_before``, ``verdict``; ``None`` where not priced); ``policy`` (floors changed between the sides' lock
    files); ``changed`` (the facts it rests on that changed); ``inputs`` (which of its inputs differ between the
    sides: ``facts``, ``checkpoint content``, ``serving``, ``pricing model``) with ``serving`` the serving's field
    changes; ``older`` (HEAD's lock is of an older format); ``note`` anything else a reviewer should know."""

    name: str
    path: str
    card: str
    kind: str
    serving_name: str | None
    status: str
    changed: tuple[str, ...]
    before: PriceSide
    after: PriceSide
    verdict_before: Verdict | None
    verdict: Verdict | None
    recorded_before: Mapping[str, Any] | None = None
    recorded: Mapping[str, Any] | None = None
    policy: tuple[FloorChange, ...] = ()
    inputs: tuple[str, ...] = ()
    serving: tuple[str, ...] = ()
    older: bool = False
    note: str | None = None
    #: :attr:`serving` for programs, one ``{"field", "locked", "now"}`` a line in the same order, the shape of
    #: ``reproduce --json``'s ``serving_differences``: ``serving.FIELD`` with BASE's value (``locked``) and HEAD's
    #: (``now``) as the serving document writes them (``None`` where absent), ``registered`` (the serving's name, HEAD
    #: ``None``) for a serving not registered on HEAD. ``serving_changed`` was text alone (slip round 39).
    serving_differences: tuple[Mapping[str, Any], ...] = ()
    #: For a lock HEAD leaves below a floor: each offending path's elasticity on HEAD's facts (% tokens/s per +1 %
    #: of the fact, :func:`passprice.audit.audit`; ``None`` when re-pricing is refused), so a reviewer sees whether
    #: the weakened fact moves the price at all.
    elasticities: Mapping[str, float | None] = attrs.field(factory=dict)
    #: For each path of :attr:`elasticities` that is ``None``: why, each step's refusal as
    #: :attr:`passprice.audit.AuditRow.refused_why` words it (+1 % first), so the row says the real reason.
    unmeasured: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    #: HEAD's derived facts this lock's price rests on that do not follow from their inputs (a stale
    #: ``streams.read`` after ``memory.bandwidth`` moved): the price shown for HEAD rests on figures nobody computed.
    unsound: tuple[Finding, ...] = ()
    #: For a removed lock: the floors its removal drops (:func:`dropped_floors`: each path the lock floored that no
    #: lock of its serving left on HEAD floors as strictly), and ``retired`` why none is dropped when none is (and
    #: the serving's new name when HEAD renamed it, :func:`renamed_serving`).
    dropped: tuple[FloorChange, ...] = ()
    retired: str | None = None
    #: The checkpoint content HEAD's lock pins (:func:`passprice.pins.checkpoint_digest`; ``None`` for a lock of a
    #: format that pinned none, or a removed lock).
    pinned_content: str | None = None
    #: The checkpoint HEAD's lock pins, by the name the serving gave it (``None`` for a removed lock).
    pinned_checkpoint: str | None = None
    #: What the lock file answers that HEAD changed under the same file (:func:`question_changes`: its kind, the
    #: registered serving it locks, its stack, its name): a lock answers one question, and a file rewritten to
    #: answer another (``lock SERVING -o LOCK --force`` over a best lock writes a batch-1 price lock) is a lock
    #: removed and another added, which the review must not pass as a re-lock.
    question: tuple[str, ...] = ()
    #: HEAD's lock file does not read (edited by hand: its digest no longer matches; not TOML; not the schema): it
    #: is judged on BASE's lock for want of another, and is neither re-locked nor broken by the change.
    head_unread: bool = False
    #: For a lock file :attr:`head_unread` that BASE's copy reads as TOML and HEAD's too: each key the hand edit
    #: changed, ``price.tokens_per_s: 5166.56237077287 → 5500.0`` (:func:`hand_edits`; walkthrough 41: the review
    #: said only that the file did not read, and a reviewer had to open the file's diff to see the price or the
    #: floor it forged).
    hand_edits: tuple[str, ...] = ()
    #: For a lock file :attr:`head_unread` of the first format (BASE's copy) whose name another current-format lock
    #: of HEAD's ``locks/`` carries: the way out :func:`passprice.locks.first_format_clash` says, the re-lock under
    #: its file's name (left98: the review said "restore it from BASE, then re-lock it with passprice lock --update
    #: -o PATH", which is refused there, exit 2). ``None`` otherwise.
    clash_way: str | None = None
    #: For a lock file :attr:`head_unread`: the ``price.tokens_per_s`` HEAD's file records, read as plain TOML
    #: (:func:`edited_recorded`), so the review's ``recorded`` column shows the figure HEAD's file holds, marked
    #: edited (issue 13: it showed BASE's 5,166.6 while the forged 5,500 appeared on the ``edited`` line alone).
    recorded_edited: float | None = None
    #: The changed facts HEAD's price rests on that HEAD's lock pins as they were before the change (its file not
    #: re-locked on them): a provenance made stronger, a citation or note moved, with no figure moved. The review
    #: passes, but ``check --frozen`` fails on that drift until ``lock --update`` re-pins them.
    drifted: tuple[str, ...] = ()
    #: For a lock file the change leaves as it was: what BASE's lock pins otherwise than BASE's own registry holds
    #: it (:func:`passprice.reproduce.price_today` on BASE: each drifted fact's path, each relabelled pin's key):
    #: out of date already on BASE (``check --frozen`` on BASE fails on it), whatever this change does. Left51: the
    #: MI300X lock, pinning ``memory.bandwidth`` as cited before a commit that re-cited it, read "unaffected" in a
    #: review of the next commit, where five locks BASE no longer priced as recorded read "affected".
    base_drift: tuple[str, ...] = ()
    #: The changed facts HEAD's price rests on that HEAD's lock pins as written before the change, which HEAD only
    #: rewrote to the same quantity (``4.8 TB/s`` → ``4800 GB/s``, :func:`passprice.reproduce.same_quantity`): no
    #: drift (``check --frozen`` passes), but the lock pins the old words until ``lock --update``.
    rewritten: tuple[str, ...] = ()
    #: For each floor HEAD's lock loosens that another lock of the same registered serving still holds as strictly
    #: on HEAD (:func:`kept_floors`): the path → that lock's name and floor. Loosening one of a serving's two locks
    #: then changes nothing the serving is held to, which the review did not say (slip round 28).
    kept: Mapping[str, tuple[str, Provenance]] = attrs.field(factory=dict)
    #: BASE's and HEAD's ``pricing_model`` pins (the digest of the code each lock file was written by) where a lock
    #: the change rewrote pins another; ``None`` otherwise. A re-lock by new code alone read "re-locked", changed
    #: "–", +0 % (slip52): its row names the digest that moved.
    model_pins: tuple[str, str] | None = None
    #: For a lock resting on :attr:`unsound` facts: HEAD's lock priced again, with HEAD's code, on HEAD's inputs with
    #: every derived fact that does not follow recomputed from its inputs (what ``passprice fact recompute CARD``
    #: writes) and the stack it was made under re-fitted (``passprice calibrate --stack S``), by
    #: :func:`recomputed_prices`: the move the change makes once its derived facts follow (a bandwidth raised
    #: 1.875 % moves the price +1.875 % on the stale stream shares, +0.008 % on the recomputed ones). ``None`` when
    #: the lock rests on no such fact; its ``error`` says why it could not be priced so.
    recomputed: PriceSide | None = None
    #: The facts of the stack :attr:`recomputed` re-fitted that the re-fit moved, each ``share.read 0.8564 →
    #: 0.8612`` (session 24: the line said "recomputed and the stack re-fitted", or only "recomputed" when a card's
    #: recomputed facts re-fitted a stack with no finding of its own, and never what moved). Empty when no re-fit
    #: moved a fact.
    refitted: tuple[str, ...] = ()
    #: For a lock whose price the change moved without re-locking it, resting on two or more changed facts: each
    #: changed fact's own move, ``(path, move)`` with ``move`` as ``reproduce`` says it (``tokens/s -4.894 %``): the
    #: lock's pinned inputs with only that fact as HEAD has it, priced with the running code
    #: (:func:`changed_alone`). Walkthrough 29: a change of a card's bandwidth and a routing record's ``hot_share``
    #: read "-4.889 %" on a lock resting on both, and the reviewer had to run ``passprice reproduce`` on HEAD to learn
    #: that the routing moved it (-4.894 %) and the bandwidth the other way (+1.875 %). Empty otherwise, and when
    #: HEAD's code is not the running code.
    alone: tuple[tuple[str, str], ...] = ()
    #: Why :attr:`alone` is empty where it would have been filled (two or more changed facts moved the price) but
    #: HEAD's code is priced in its own process (:attr:`passprice.sidecode.Code.running` false: a module outside the
    #: pricing digest differs), where the per-fact breakdown is not made: :data:`ALONE_ABSENT`. ``None`` otherwise.
    #: A review of such a HEAD showed no breakdown and no word of why (tests/test_attack114.py's HEAD).
    alone_absent: str | None = None
    #: True when :attr:`alone` was priced from BASE's lock, for a lock the change re-locked (HEAD's lock pins HEAD's
    #: facts, so nothing of it is "as HEAD has it" alone): ``ALONE_BASE`` says so beside the moves.
    alone_base: bool = False
    #: Of :attr:`alone`'s facts, each changed input with the changed facts derived from it (their derivation names
    #: it), priced at once: ``(inputs, derived paths, move)`` (:func:`changed_alone`). Walkthrough 49: a datasheet's
    #: bandwidth read ``+0.4717 %`` alone and the stream shares recomputed from it ``-0.44 %``, though the one change
    #: moved the price ``+0.003 %``: the review says the group's move in their place.
    joint: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = ()
    #: The routing record the lock's serving names (``None``: none): its ``routing.*`` facts are named with it, a
    #: review of two changed records read ``changed routing.hot_experts`` of either (walkthrough 49).
    routing_record: str | None = None
    #: Of :attr:`changed`, each fact whose citation the change rewrote, or whose derivation it changed (a derived
    #: fact recomputed: ``fact recompute`` after its input moved), or whose value it moved under the citation it kept
    #: (walkthrough 46's ``hot_share`` 0.9 → 0.85: the figure a reviewer checks against the unchanged source), with
    #: the citation HEAD's price rests on: ``(path, source, locator, recited, derivation, value_changed)``,
    #: ``recited`` whether the change rewrote the citation, ``derivation`` HEAD's
    #: :class:`~passprice.derivations.Derivation` when the change changed it or moved the value it derives (its
    #: inputs' citations are what the price rests on; left46: a derived value moved under its kept derivation read
    #: "value changed, citation unchanged"), else ``None``, ``value_changed`` whether the fact's quantity moved (not
    #: merely re-written in another unit: :func:`passprice.reproduce.exact_quantity`) (walkthrough 49: the lock's
    #: row named the facts, the Facts section the citations; session 37: a recomputed share had no citation on the
    #: row).
    cites: tuple[Cite, ...] = ()
    #: Of :attr:`cites`, the paths of the facts the change fitted again to measured runs (a stack's: HEAD's
    #: derivation a :class:`~passprice.derivations.RunDerivation`, changed): their source states no figure of them,
    #: their check is the fit (its runs and errors), and the row says so (a fitted value edited by hand, its fit
    #: unchanged, is said "no longer the fit" on the row, and cited as any value moved under its citation). Left45:
    #: a re-fit read "value changed, citation unchanged: passprice-stack-calibration, the 111 runs …", sending the
    #: reviewer to look for the figure in that source.
    fitted: tuple[str, ...] = ()
    #: For a lock made under a serving stack whose fit the change moved by a measured run's figure (a run corrected
    #: and the stack re-fitted): each such run, ``(id, before, after, source, locator)``, with its citation as HEAD
    #: records it (:func:`_moved_runs`; left45: the run that moved the lock's price was named only under "other
    #: files changed").
    runs_moved: tuple[tuple[str, float, float, str, str], ...] = ()
    #: ``(BASE's record, HEAD's record)`` when HEAD prices the lock's serving on another routing record than BASE
    #: (:func:`_rerouted`), else ``None``: :attr:`changed` and :attr:`cites` then compare the two records' facts,
    #: and the row reads ``routing record A → B`` (walkthrough 51: a serving re-pointed read ``changed –``).
    rerouted: tuple[str, str] | None = None
    #: The lock's routing record's facts the change moved, priced at once (:func:`passprice.reproduce.
    #: routing_together`, as ``reproduce`` says them), for a serving re-pointed to another record
    #: (:attr:`rerouted`) or two or more facts of its record changed in place; ``None`` otherwise. Left48: walkthrough
    #: 56's serving re-pointed from ``uniform`` to a record of ``hot_experts`` 0.25, ``hot_share`` 0.6 moved +14.72 %
    #: and read ``routing.hot_experts: tokens/s +108.3 %; routing.hot_share: refused alone (BadRouting)``: the two
    #: figures are one routing, neither alone explains the move.
    routing_alone: RoutingTogether | None = None

    @property
    def by_header(self) -> str | None:
        """What a reviewer must verify when HEAD prices this lock's serving on another checkpoint than the one the
        lock pinned, and it holds only because the two headers read alike (the same content digest: architecture,
        metadata and tensor table): a fine-tune of the locked model has that very header, and nothing honest in a
        GGUF header tells it apart (DESIGN, Locks). Slip round 38: ``r1-qwen7b-h200`` pointed at a new entry
        ``r1-qwen7b-finetune`` (the locked entry's header under another name) read "records HEAD's price", exit 0.
        ``None`` otherwise."""
        spec = self.after.spec
        if self.removed or self.pinned_checkpoint is None or not isinstance(spec, Mapping):
            return None
        priced = spec.get("checkpoint")
        if (not isinstance(priced, str) or priced == self.pinned_checkpoint or self.pinned_content is None
                or self.after.checkpoint != self.pinned_content):
            return None
        return (f"its serving now prices checkpoint {spelled(priced)}, not {spelled(self.pinned_checkpoint)}, which "
                f"the lock pinned: the lock holds only because their headers read alike (content "
                f"{self.pinned_content.removeprefix('sha256:')[:12]}…), as a fine-tune's header reads like its base "
                f"model's: does {spelled(priced)} hold {spelled(self.pinned_checkpoint)}'s weights? if not, its "
                f"routing, acceptance and measured figures are not the lock's; re-lock it (passprice lock --update -o "
                f"{self.path}) once shown")

    def policy_line(self, change: FloorChange) -> str:
        """A floor change as the review shows it: :meth:`FloorChange.describe`, and for a loosened floor another lock
        of the serving still holds, ``; lock OTHER of serving S still floors streams.read at measured (its price
        rests on it): the serving is held to the floor as before``."""
        line = change.describe()
        kept = self.kept.get(change.path) if change.loosens else None
        if kept is None:
            return line
        other, floor = kept
        return (f"{line}; lock {other} of serving {self.serving_name} still floors {change.path} at {floor.value} "
                "(its price rests on it): the serving is held to that floor as before, and a weaker fact still fails "
                "the review and check")

    @property
    def checkpoint_changed(self) -> bool:
        """True when HEAD's checkpoint content is not the content HEAD's lock pins: the lock no longer applies
        (``price`` refuses CheckpointChanged, ``check`` fails it), whether or not the price moved."""
        return (
            not self.removed
            and self.pinned_content is not None
            and self.after.checkpoint is not None
            and self.after.checkpoint != self.pinned_content
        )

    @property
    def removed(self) -> bool:
        """True when HEAD has no such lock (it is shown, but cannot break)."""
        return self.status == "removed"

    @property
    def added(self) -> bool:
        """True when BASE had no such lock."""
        return self.status == "added"

    @property
    def holds(self) -> bool:
        """True when HEAD's inputs price the lock and keep HEAD's floors."""
        return self.verdict is not None and self.verdict.holds and self.after.price is not None

    @property
    def held(self) -> bool:
        """True when BASE's inputs priced the lock and kept BASE's floors."""
        return self.verdict_before is not None and self.verdict_before.holds and self.before.price is not None

    @property
    def breaks(self) -> bool:
        """True when HEAD's lock is left unheld: a fact below its floor, a price HEAD refuses or cannot make, or the
        registered serving it locks deleted on HEAD, or its checkpoint's content changed from the content it pins
        (``check`` fails it the same way)."""
        return not self.removed and not self.head_unread and (
            not self.holds or self.after.gone or self.checkpoint_changed
        )

    @property
    def why_broken(self) -> str | None:
        """How the lock :attr:`breaks`, as the summary counts it and its row shows it: ``gone`` (its serving
        deleted), ``checkpoint`` (content not the pinned one), ``not judged`` (HEAD's inputs do not read, so no
        verdict), ``refused`` (the floors hold but HEAD refuses the price), ``floors`` (a fact below a floor);
        ``None`` when it does not break."""
        if not self.breaks:
            return None
        if self.after.gone:
            return "gone"
        if self.checkpoint_changed:
            return "checkpoint"
        if self.verdict is None:
            return "not judged"
        return "floors" if not self.verdict.holds else "refused"

    @property
    def drops_floors(self) -> bool:
        """True when the lock is removed on HEAD and its removal drops floors its serving was priced under."""
        return self.removed and bool(self.dropped)

    @property
    def moved(self) -> str | None:
        """The first figure of the price that BASE and HEAD price differently (``None`` when none does)."""
        return _figures_differ(self.before.price, self.after.price)

    @property
    def stale(self) -> str | None:
        """The first figure HEAD prices differently from what HEAD's lock records: a locked price moved and the
        lock was not updated (``cargo --locked`` fails the same way); ``None`` when it records HEAD's price."""
        if self.removed:
            return None
        return _figures_differ(self.recorded, self.after.price)

    @property
    def loosened(self) -> tuple[FloorChange, ...]:
        """The floors HEAD's lock loosens or removes against BASE's."""
        return tuple(c for c in self.policy if c.loosens)

    @property
    def affected(self) -> bool:
        """Whether a reviewer needs to see it: :attr:`touched` by the change, or out of date already on BASE (its
        price is not what it records, or BASE's lock pins what BASE's registry no longer holds: :attr:`behind`)."""
        return self.touched or bool(self.stale) or bool(self.base_drift)

    @property
    def behind(self) -> bool:
        """Whether it is out of date already on BASE and the change does not touch it (:attr:`touched`): HEAD
        prices it as BASE does, and its file records a price neither gives, or pins what BASE's registry no longer
        holds (:attr:`base_drift`). The review lists such a lock as out of date already on BASE, never as affected
        by the change (left51: a commit adding a checkpoint read "5 locks affected, 5 out of date already on BASE",
        though it touched none, and a sixth lock to re-pin already on BASE read "unaffected")."""
        return not self.touched and (bool(self.stale) or bool(self.base_drift))

    @property
    def touched(self) -> bool:
        """Whether the change touches it: added, removed or re-locked; its price moved; its floors break or changed;
        a fact it rests on, its checkpoint's content or its serving changed; it pins a changed fact, or its card's
        title or mark or its serving's description, as before the change."""
        return bool(
            self.status != "unchanged"
            or self.moved
            or self.unsound
            or self.breaks
            or self.held != self.holds
            or self.policy
            or self.changed
            or self.drifted  # a pin beside facts (card.title, card.hypothetical) changed alone (slip round 42)
            or set(self.inputs) - {"pricing model"}
            or self.note
        )

    @property
    def relative(self) -> float | None:
        """The relative change of tokens/s, after / before − 1; ``None`` unless both sides priced."""
        b, a = self.before.tokens_per_s, self.after.tokens_per_s
        if b is None or a is None or b == 0:
            return None
        return a / b - 1.0

    @property
    def expected_relative(self) -> float | None:
        """For a lock made under a serving stack: the relative change of its expected tokens/s (the price it pins
        under the stack), HEAD's / BASE's − 1; ``None`` unless both sides priced an expected price. Walkthrough 47:
        a stack re-fit moved the locked expected price +0.1534 % while the lock's row read the limit's "+0 %"."""
        sides = [side.price.get("expected") if side.price is not None else None for side in (self.before, self.after)]
        if not all(isinstance(e, Mapping) and isinstance(e.get("tokens_per_s"), int | float) for e in sides):
            return None
        b, a = (float(e["tokens_per_s"]) for e in sides if isinstance(e, Mapping))
        return None if b == 0 else a / b - 1.0

    @property
    def recomputed_relative(self) -> float | None:
        """The relative change of tokens/s from BASE's price to :attr:`recomputed`'s, recomputed / before − 1;
        ``None`` unless both priced."""
        b = self.before.tokens_per_s
        a = self.recomputed.tokens_per_s if self.recomputed is not None else None
        if b is None or a is None or b == 0:
            return None
        return a / b - 1.0

    @property
    def recomputed_expected_relative(self) -> float | None:
        """For a lock made under a serving stack: the relative change of the expected tokens/s from BASE's price to
        :attr:`recomputed`'s (the stack re-fitted); ``None`` unless both priced one."""
        b = _expected_tokens(self.before)
        a = _expected_tokens(self.recomputed) if self.recomputed is not None else None
        if b is None or a is None or b == 0:
            return None
        return a / b - 1.0

    def floors(self) -> str:
        """The verdict on HEAD's inputs and floors in a few words: ``holds``, or each offending path below its
        floor."""
        if self.removed:
            return "lock removed"
        if self.head_unread:
            return "not judged: HEAD's lock file does not read"
        if self.after.gone:
            return (
                f"BROKEN: serving {self.serving_name}, which the lock locks, is not registered on HEAD; restore it or "
                "remove the lock"
            )
        if self.verdict is None:
            return "not judged: " + (self.after.error or "HEAD's inputs do not read")
        if self.verdict.holds:
            return "still holds" if self.after.price is not None else "floors hold, but the price is refused"
        return "BROKEN: " + "; ".join(
            f"{o.path} is {o.provenance.value}, below the floor {o.floor.value}{self.elasticity(o.path)}"
            for o in self.verdict.offences
        )

    def elasticity(self, path: str) -> str:
        """`` (elasticity +1.000)`` beside an offending ``path``: what a +1 % change of it does to tokens/s on
        HEAD's facts, with ``the price does not depend on this fact`` when that is 0; empty when not measured."""
        if path not in self.elasticities:
            return ""
        e = self.elasticities[path]
        if e is None:
            why = self.unmeasured.get(path, ())
            if not why:
                return " (elasticity not measured: re-pricing with it 1 % higher and 1 % lower is refused)"
            said = f"1 % higher it is refused: {why[0]}"
            if len(why) > 1:
                said += "; 1 % lower " + ("the same" if why[1] == why[0] else f"it is refused: {why[1]}")
            return f" (elasticity not measured: {said})"
        if abs(e) < 1e-9:
            return " (elasticity 0: the price does not depend on this fact)"
        return f" (elasticity {e:+.3f}: +1 % of it moves tokens/s {e:+.3f} %)"

    @property
    def unreviewed(self) -> bool:
        """True when HEAD's lock does not record HEAD's price and the change moved it (else it was already out of
        date on BASE)."""
        return bool(self.stale) and (bool(self.moved) or self.added)

    def review(self) -> str:
        """What the change does to this lock, in a few words: ``re-locked``, ``price moved, lock not updated``,
        ``out of date already on BASE``, ``added``, ``removed``, ``floors loosened``, ``asks another question`` …"""
        if self.removed:
            return "removed, dropping floors" if self.dropped else "removed"
        if self.head_unread:
            if self.clash_way is not None:
                return f"HEAD's lock file does not read (edited by hand?): {self.clash_way}"
            return (f"HEAD's lock file does not read (edited by hand?): restore it from BASE, then re-lock it with "
                    f"passprice lock --update -o {shell_word(self.path)}")
        if self.question:
            return (
                f"asks another question ({'; '.join(self.question)}): a lock answers one; restore it, or keep it "
                "and add the new lock under another name"
            )
        if self.after.gone:
            return "its serving is deleted"
        if self.checkpoint_changed:
            return "its checkpoint's content changed from the pinned one: re-lock it through review"
        unsound = self.rests_on_unsound()
        if unsound:
            unsound += "; "
        if self.stale and not self.unreviewed:
            return f"{unsound}out of date already on BASE ({self.stale}): re-lock it"
        if self.stale:
            why = _moved_again(self) or _stale_figure(self) or _figure_named(self.stale)
            return f"{unsound}price moved, lock not updated ({why})"
        if self.after.price is None and not self.unsound:
            # no price on HEAD: nothing recorded can be HEAD's price
            why = "HEAD refuses the price" if self.after.refusal is not None else "not priced on HEAD"
            return f"{why} (see below)" if self.after.refusal is not None or self.after.error else why
        if self.verdict is not None and not self.verdict.holds:
            # A fact below a floor: `lock --update` alone refuses to re-lock it, so the row must not advise it (its
            # pins of the weakened fact drift too, and walkthrough 41 read "⚠️ … re-pin (passprice lock --update …)"
            # beside a broken floor the verdict failed).
            from passprice.enforce import relock_command

            below = ", ".join(o.path for o in self.verdict.offences)
            return (f"{unsound}breaks its floors ({below} below its floor): restore the fact, or re-lock with that "
                    f"floor loosened, {relock_command(self.verdict, self.serving_name, self.path)}")
        bits = []
        if self.base_drift and not self.touched:
            them = "it" if len(self.base_drift) == 1 else "them"
            bits.append(f"out of date already on BASE: pins {', '.join(self.base_drift)} as BASE's registry no longer "
                        f"holds {them}, the price unmoved: re-pin (passprice lock --update -o {shell_word(self.path)}; "
                        "check --frozen fails until then)")
        if self.drifted:
            # Not stale: the price is the one recorded, the pins alone are old (moe42: a routing record's change at
            # batch 1 read as a re-pin only, the price's +0 % unexplained).
            bits.append(f"pins {', '.join(self.drifted)} as before the change, the price unmoved by it"
                        f"{_routing_unmoved(self)}: re-pin (passprice lock --update -o {shell_word(self.path)}; "
                        "check --frozen fails until then)")
        if self.rewritten:
            bits.append(f"pins {', '.join(self.rewritten)} as written before the change (rewritten, same quantity: "
                        f"no drift; passprice lock --update -o {shell_word(self.path)} re-pins the words)")
        if self.added:
            bits.append("added")
        elif self.status == "changed":
            bits.append("re-locked")
        if self.loosened:
            kept = all(c.path in self.kept for c in self.loosened)
            bits.append("floors loosened" + (" (another lock of the serving still holds each: below)" if kept else ""))
        if self.older:
            bits.append("older lock format")
        return unsound + (", ".join(bits) or "records HEAD's price")

    @property
    def unsound_limit(self) -> bool:
        """Whether the card's limit HEAD prices rests on one of :attr:`unsound` (a fact of no serving stack)."""
        return any(not f.path.startswith("stack.") for f in self.unsound)

    @property
    def unsound_expected(self) -> bool:
        """Whether the expected price under a serving stack rests on one of :attr:`unsound`: a stack fact (slip
        round 35), or a card fact the limit reads too."""
        return bool(self.unsound)

    @property
    def unsound_kind(self) -> str:
        """What :attr:`unsound` holds, as the expected price's mark says it: ``stack facts`` when one of them is a
        stack fact, else ``facts`` (card facts the limit reads too). Walkthrough 55: an H200 bandwidth what-if under
        the llama.cpp lock, its stack fitted on no H200 run, read ``❌ (on stale stack facts)`` where only the card's
        ``streams.read`` and ``streams.append`` were stale."""
        return "stack facts" if any(f.path.startswith("stack.") for f in self.unsound) else "facts"

    def rests_on_unsound(self) -> str:
        """``rests on stale streams.read, streams.append: recompute them`` (and the like for a derivation that does
        not follow or does not evaluate); empty when every derived fact the price rests on follows."""
        if not self.unsound or self.removed:
            return ""
        out = []
        for kind, template in (
            ("stale", "rests on stale {paths}: recompute {it}"),
            ("mismatch", "rests on {paths}, not following from {its} derivation: correct {it}"),
            ("broken", "rests on {paths}, whose derivation does not evaluate: fix {it}"),
        ):
            paths = [f.path for f in self.unsound if f.kind == kind]
            stack = (self.recorded or self.recorded_before or {}).get("stack")
            fitted = [f.path for f in self.unsound if f.kind == kind and f.path.startswith("stack.")
                      and "calibrate --stack" in f.message] if stack else []
            if fitted:
                # A stack's fitted facts no longer follow from its runs: re-fit the stack, not "correct them" by
                # hand (walkthrough 27: the hint named no command).
                paths = [p for p in paths if p not in fitted]
                out.append(f"rests on {', '.join(fitted)}, no longer the fit of stack {stack}'s runs: re-fit "
                           f"{'it' if len(fitted) == 1 else 'them'} (`passprice calibrate --stack {stack}`)")
            if paths:
                one = len(paths) == 1
                out.append(template.format(paths=", ".join(paths), it="it" if one else "them",
                                           its="its" if one else "their"))
        return "; ".join(out)

    def to_json(self) -> dict[str, Any]:
        """The lock for ``--format json``."""
        return {
            "name": self.name,
            "path": self.path,
            "card": self.card,
            "kind": self.kind,
            "serving": self.serving_name,
            "status": self.status,
            "changed": list(self.changed),
            "inputs": list(self.inputs),
            "pricing_model_pins": (None if self.model_pins is None
                                   else {"before": self.model_pins[0], "after": self.model_pins[1]}),
            "serving_changed": list(self.serving),
            "serving_differences": [dict(d) for d in self.serving_differences],
            "removed": self.removed,
            "holds": self.holds,
            "held": self.held,
            "breaks": self.breaks,
            "moved": self.moved,
            "stale": self.stale,
            "base_drift": list(self.base_drift),
            "behind": self.behind,
            "unsound": [f.to_json() for f in self.unsound],
            "recomputed": self.recomputed.to_json() if self.recomputed is not None else None,
            "refitted": list(self.refitted),
            "recomputed_relative_change": self.recomputed_relative,
            "recomputed_expected_relative_change": self.recomputed_expected_relative,
            "review": self.review(),
            "policy": [
                {"path": c.path, "change": c.change, "before": c.was.value, "after": c.now.value} for c in self.policy
            ],
            "verdict": self.verdict.to_json() if self.verdict is not None else None,
            "verdict_before": self.verdict_before.to_json() if self.verdict_before is not None else None,
            "recorded_before": dict(self.recorded_before) if self.recorded_before is not None else None,
            "recorded": dict(self.recorded) if self.recorded is not None else None,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "relative_change": self.relative,
            "expected_relative_change": self.expected_relative,
            "older_format": self.older,
            "note": self.note,
            "elasticities": dict(self.elasticities),
            "dropped": [
                {"path": c.path, "change": c.change, "before": c.was.value, "after": c.now.value} for c in self.dropped
            ],
            "retired": self.retired,
            "question": list(self.question),
            "head_unread": self.head_unread,
            "hand_edits": list(self.hand_edits),
            "recorded_edited": self.recorded_edited,
            "floors_kept": {path: {"lock": other, "floor": floor.value} for path, (other, floor) in self.kept.items()},
            "drifted": list(self.drifted),
            "rewritten": list(self.rewritten),
            "alone": [{"path": path, "move": move} for path, move in self.alone],
            "alone_from": ("base" if self.alone_base else "head") if self.alone else None,
            "alone_absent": self.alone_absent,
            "routing_record": self.routing_record,
            "rerouted": ({"base": self.rerouted[0], "head": self.rerouted[1]} if self.rerouted is not None else None),
            "cites": [{"path": path, "source": source, "locator": locator, "recited": recited,
                       "derivation": _derivation_cites(derivation, source) if derivation is not None else None,
                       "value_changed": value_changed, "fitted": path in self.fitted, "inputs_give": gives}
                      for path, source, locator, recited, derivation, value_changed, gives, _ in self.cites],
            "runs_moved": [{"run": run, "before": before, "after": after, "source": source or None,
                            "locator": locator or None} for run, before, after, source, locator in self.runs_moved],
            "alone_grouped": [{"inputs": list(inputs), "derived": list(derived), "move": move}
                              for inputs, derived, move in self.joint],
            "alone_routing": self.routing_alone.to_json() if self.routing_alone is not None else None,
        }


def _judge(lock: Lock | None, side: PriceSide) -> Verdict | None:
    """``lock``'s floors (its own policy) judged on a side's re-price: the facts the price rests on, or, when the
    price is refused, the side's facts at the paths the lock's recorded price rests on."""
    if lock is None or side.error is not None:
        return None
    if side.price is not None:
        # A lock made under a serving stack (issue 14) is judged on its expected price's facts (card, draft, stack).
        rests_on = side.price.get("expected", side.price).get("rests_on", {})
        pairs = [(p, Provenance(v)) for p, v in rests_on.items()]
    else:
        pairs = [(p, Provenance(side.facts[p])) for p in lock.rests_on if p in side.facts]
    return judge(lock.name, lock.policy, pairs)


def offence_elasticities(
    side: Side, lock: Lock, verdict: Verdict | None
) -> tuple[dict[str, float | None], dict[str, tuple[str, ...]]]:
    """Each path ``verdict`` finds below a floor, with its elasticity on ``side``'s facts (the price's audit,
    :func:`passprice.audit.audit`, with the running code), and for each path not measured the messages of the
    refusals re-pricing it gave (+1 % first, then −1 %); both empty when the floors hold or the side cannot price
    the lock."""
    if verdict is None or verdict.holds:
        return {}, {}
    from passprice.audit import audit
    from passprice.locks import evaluate
    from passprice.reproduce import today_spec
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve

    try:
        resolved = resolve(side.root, today_spec(side.root, lock)[0])
        rows = audit(
            resolved.card,
            resolved.serving,
            lambda c, s: evaluate(lock.kind, resolved.header, c, s),
        ).rows
    except (InputError, ServingRefusal):
        return {}, {}
    by_path = {r.path: r for r in rows}
    offending = [by_path[o.path] for o in verdict.offences if o.path in by_path]
    return ({r.path: r.elasticity for r in offending},
            {r.path: r.refused_why for r in offending if r.elasticity is None})


def _side_lists(base: Side, head: Side) -> SideLists:
    """BASE's and HEAD's list of pricing models (:data:`passprice.modelhistory.KNOWN`), each read from the side's
    own ``src/passprice`` (:func:`passprice.modelhistory.read_known`: a regular file, at most
    :data:`~passprice.modelhistory.KNOWN_BYTES`, the list's schema); ``None`` when HEAD's code is not its own (a
    registry kept apart from its code). Never raises: a list that does not read on HEAD is its error line (paths
    as ``src/passprice/…``), on BASE none."""
    from passprice.modelhistory import KNOWN, read_known

    if head.code.folder is None or not head.code.own:
        return None

    def listed(code: Code) -> dict[str, KnownModel] | None:
        if code.folder is None or not code.own or not os.path.lexists(code.folder / KNOWN.name):
            return None
        return read_known(code.folder / KNOWN.name)

    try:
        base_list = listed(base.code)
    except InputError:
        base_list = None
    try:
        head_list: dict[str, KnownModel] | str | None = listed(head.code)
    except InputError as e:
        head_list = str(e).replace(f"{head.code.folder}/", "src/passprice/")
    return base_list, head_list


def _list_changes(base: Side, head: Side, lists: SideLists) -> tuple[ListChanges, tuple[str, ...]]:
    """How HEAD changes passprice's list of pricing models (:func:`passprice.modellist.list_changes`), each side's
    list as :func:`_side_lists` read it (``lists``; ``None``: HEAD's code is not its own, no change), the records
    each model's locks were written with on the branch read from its commits (:func:`_branch_records`) when the
    list's change asks for them. Never raises: a list that does not read on HEAD is a failing line, on BASE an
    empty list. Also returns the lines naming what of the branch's ``locks/`` was past a cap, unread
    (:func:`_branch_records`): files that do not read on HEAD, exit 2."""
    from passprice.modellist import ListChanges, asked_models, list_changes

    if lists is None:
        return ListChanges(), ()
    base_list, head_list = lists
    pins: dict[str, list[str]] = {}
    branch: dict[str, frozenset[str]] = {}
    unread: tuple[str, ...] = ()
    if base_list != head_list:
        for lock in _locks(base).values():
            if lock is not None:
                pins.setdefault(lock.info.pricing_model, []).append(lock.name)
        if isinstance(head_list, dict):
            # A BASE older than the list counts each of HEAD's entries as added (list_changes): each is asked of the
            # branch's re-locks too (a new user's `diff a0187f68 main` failed 81 entries main's own history added).
            asked = asked_models(base_list or {}, head_list)
            if asked:
                branch, unread = _branch_records(base, head, asked, head_list, base_list is None)
    return list_changes(base_list, head_list, head.code.model, pins, branch), unread


def _unrecorded_locks(head: Side, changed: Iterable[str],
                      lists: SideLists) -> tuple[str, ...]:
    """The lines of :func:`passprice.modellist.unrecorded_locks` for the lock files of ``changed`` (paths HEAD adds
    or rewrites) lying directly in ``locks/`` that read as format-2 locks on HEAD, judged by HEAD's list
    (``lists``, :func:`_side_lists`; nothing when HEAD's code is not its own). A lock elsewhere (a user's registry,
    a folder under ``locks/``) is not judged so: only ``locks/`` of a checkout of passprice is recorded
    (:func:`passprice.modelhistory.in_checkout_locks`). Never raises."""
    from passprice.modellist import unrecorded_locks
    from passprice.pins import LOCK_FORMAT

    if lists is None or not isinstance(lists[1], dict):
        return ()
    found = []
    for rel in changed:
        if file_kind(rel)[0] != "lock":  # locks/NAME.lock.toml: the review's lock files
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue  # a lock file that does not read is the review's other rules' (head_unread)
        if lock.info.format >= LOCK_FORMAT:
            found.append((rel, lock.info.pricing_model, lock.info.digest))
    return unrecorded_locks(found, lists[1])


#: The most commits of a branch the review reads for the list's records (:func:`_branch_records`).
BRANCH_COMMITS = 500
#: The most bytes of distinct lock files (git blobs, each within the lock's cap) :func:`_branch_records` reads for
#: one review, its commits' newest first: past it the locks of that commit and older ones are not read, and the review
#: names the commit (exit 2). A review of an old BASE (``diff a0187f68 main``, 327 commits that changed ``locks/``)
#: read 1,507 distinct lock blobs, 37 MB (tests/test_review137.py); a lock file parses at about 43 µs a KB
#: (:func:`_lock_pin`, the shipped 16.5 KB lock 0.71 ms), so 64 MiB is about 2.9 s of CPU the first time (the pins
#: are kept in the cache after).
LOCK_BLOBS_BYTES = 64 << 20


def _branch_records(base: Side, head: Side, asked: frozenset[str], entries: Mapping[str, KnownModel] | None = None,
                    listless: bool = False) -> tuple[dict[str, frozenset[str]], tuple[str, ...]]:
    """For each pricing model of ``asked``: the ``[lock] digest`` of every lock pinning it in ``locks/`` of HEAD
    (its files as read) or of a commit between BASE and HEAD (``git rev-list BASE..HEAD``, at most
    :data:`BRANCH_COMMITS`), when that model is HEAD's code's or the code (``src/passprice``) of such a commit holding
    one of those locks digests to it (:func:`passprice.pins.pricing_model_digest`, computed only for a model
    asked); models with no such lock or code are left out. Slip 57: a branch that re-locked twice (two changes of
    the pricing code, ``passprice lock --update`` after each, both committed) lists the first change's code, which
    no HEAD lock pins: listed by a re-lock this branch committed, with that code at that commit, it is history, not a
    digest typed by hand. Never raises: what git cannot say is left out (the entry then fails as before).

    ``entries``: HEAD's list, whose entry's own ``commit`` (the re-lock that first locked with that code) is tried
    first. ``listless``: BASE holds no list (a BASE older than it): HEAD's list then records history older than
    BASE, so the commits read are those reachable from HEAD that changed ``locks/`` (at most
    :data:`BRANCH_COMMITS`), not only BASE..HEAD: a new user's `diff a0187f68 main` (BASE before the list) failed
    162 lines of entries and records main's own re-locks had written (tests/test_walk128.py).

    Also returns the lines naming what of the branch's ``locks/`` was not read (:func:`_walk_unread`), each a file
    that does not read on HEAD for the review (exit 2): they were swallowed, the re-locks left unconfirmed without a
    word (tests/test_bigread173.py)."""

    from passprice.modellist import LISTED

    found: dict[str, set[str]] = {}
    for lock in _locks(head).values():
        if lock is not None and lock.info.pricing_model in asked and lock.info.digest:
            found.setdefault(lock.info.pricing_model, set()).add(lock.info.digest)
    confirmed = {head.code.model} & set(found)
    checkout = head.checkout or base.checkout
    unread: list[str] = []
    if checkout is None or base.info.revision is None:
        return {m: frozenset(found[m]) for m in confirmed}, ()
    try:
        tip = head.info.revision or _run_git(checkout.top, ["rev-parse", "--verify", "HEAD"]).decode().strip()
        # Only the commits that changed locks/ (a re-lock writes there): a review of an old BASE reads its re-locks
        # however many other commits lie between (a new user's `diff a0187f68 main`, 2,387 commits, 138 touching
        # locks/: the 500 newest read, main's own older re-locks failed as "the digest of no code of this review").
        span = tip if listless else f"{base.info.revision}..{tip}"
        # --full-history: a re-lock on a merged side branch is kept (a path limit alone prunes it)
        commits = _run_git(checkout.top, ["rev-list", "--full-history", f"--max-count={BRANCH_COMMITS}", span, "--",
                                          f"{checkout.prefix}locks"]).decode().split()
        holding: dict[str, list[str]] = {}  # model → the commits whose locks pin it
        names: dict[tuple[str, str], str] = {}
        over: dict[str, dict[str, int]] = {}
        try:
            listings = _lock_listings(checkout, commits, names, over)
        except InputError as refused:
            # a folder past its cap (sized, not read): said, where it was swallowed with the walk (the re-locks left
            # unconfirmed, no line naming why)
            unread.append(f"{refused}: the locks of none of this branch's {_n(len(commits), 'commit')} that changed "
                          f"locks/ were read, so no re-lock of them confirms an entry of {LISTED}")
            listings = {}
        listings, said = _walk_unread(checkout, commits, listings, names, over)
        unread += said
        read = _lock_pins(checkout.top, {b: n for blobs in listings.values() for b, n in blobs.items()})
        for commit in commits:
            for blob in listings.get(commit, {}):
                if blob not in read:
                    continue  # gone from the repository: as a blob the batch does not find
                pin = read[blob]
                if pin is None:
                    continue
                model, digest = pin
                if model in asked:
                    found.setdefault(model, set()).add(digest)
                    if commit not in holding.setdefault(model, []):
                        holding[model].append(commit)
        ancestors = _Ancestry(checkout.top)
        todo = sorted((set(holding) | (set(asked) if listless else set())) - confirmed)
        # each entry's own commit, as `git rev-parse --verify COMMIT^{commit}` names it: one git process for all
        named = [e.commit for m in todo if (e := (entries or {}).get(m)) is not None and e.commit
                 and "\n" not in e.commit and "\r" not in e.commit] if listless else []
        resolved = {name[: -len("^{commit}")]: oid for name, (oid, kind) in
                    _object_ids(checkout.top, [f"{n}^{{commit}}" for n in dict.fromkeys(named)]).items()
                    if kind == "commit"}
        # a model's commits, newest first: its oldest (the re-lock that wrote it, where merges of other code came
        # after: a lead branch re-locked, then merged three helpers' branches, each merge's locks pinning the re-lock's
        # model and its code another's; the three newest alone failed the entry as "the digest of no code") and its
        # three newest
        tried = {m: list(dict.fromkeys([*holding.get(m, [])[-1:], *holding.get(m, [])[:3]])) for m in todo}
        codes = _CommitCode(checkout, [c for m in todo for c in tried[m]] + list(resolved.values()))
        for model in todo:
            entry = (entries or {}).get(model)
            own = [c for c in holding.get(model, []) if entry is not None and entry.commit
                   and c.startswith(entry.commit)]
            if not own and listless and entry is not None and entry.commit:
                # the entry's own commit, where no lock pins it (a merge's re-lock), within HEAD's history
                full = resolved.get(entry.commit)
                if full and ancestors.holds(full, tip):
                    own = [full]
            if listless and own and holding.get(model) and ancestors.holds(own[0], base.info.revision):
                # Recorded before BASE, which had no list: history, not this change's. Its locks there pin it; its
                # code may digest otherwise under today's rule (the rule has changed since the first entries).
                confirmed.add(model)
                continue
            # the code of a commit holding its locks (the re-lock's, committed): the entry's own first
            for commit in dict.fromkeys([*own, *tried[model]]):
                if codes.digest(commit) == model:
                    confirmed.add(model)
                    break
    except (subprocess.CalledProcessError, OSError, InputError, SyntaxError, RecursionError, MemoryError,
            UnicodeDecodeError):
        pass
    return {m: frozenset(found[m]) for m in confirmed}, tuple(unread)


def _walk_unread(checkout: Checkout, commits: Sequence[str], listings: Mapping[str, Mapping[str, int]],
                 names: Mapping[tuple[str, str], str], over: Mapping[str, Mapping[str, int]]
                 ) -> tuple[dict[str, dict[str, int]], list[str]]:
    """What :func:`_branch_records` reads of ``listings`` (:func:`_lock_listings`' answer for ``commits``, newest
    first; ``names`` and ``over`` as it filled them), and a line for each cap that left some of it unread, naming
    ``COMMIT:PATH``, the cap and what was read:

    - a lock file past the lock's cap (:func:`passprice.schema.kind_cap`, 256 KiB, what ``passprice check`` reads of
      a lock; or past ``MAX_TOML_BYTES``, which the listing leaves out) is not read, the first named with how many
      more (its pin, had it been read, is no lock's: :func:`_lock_pin` refuses it by its size);
    - a commit whose ``locks/`` holds more lock files than a side may hold files
      (:func:`passprice.gitread.side_files_cap`, 4,000: the review refuses such a revision as BASE or HEAD), or whose
      lock files would take the distinct bytes read past :data:`LOCK_BLOBS_BYTES`, is not read, nor any older commit:
      the newer ones are.

    Raises nothing."""
    from passprice.modellist import LISTED

    most = schema.kind_cap("lock")
    files_cap = gitread.side_files_cap()
    kept: dict[str, dict[str, int]] = {}
    lines: list[str] = []
    past: list[tuple[str, str, int]] = []  # each lock file past its cap: (commit, blob, size), the newest first
    seen: set[str] = set()
    for commit in commits:
        for blob, size in {**listings.get(commit, {}), **over.get(commit, {})}.items():
            if size > most and blob not in seen:
                seen.add(blob)
                past.append((commit, blob, size))
    if past:
        commit, blob, size = past[0]
        more = f" (and {_n(len(past) - 1, 'other lock file')} of this branch past it, unread)" if len(past) > 1 else ""
        lines.append(f"{commit}:{escaped(_locks_path(checkout, names.get((commit, blob), '?')))}: {size:,} bytes as "
                     f"committed, past the {most:,}-byte cap on a lock file (schema.kind_cap; not read){more}: a "
                     f"re-lock it holds confirms no entry of {LISTED}")
    total = 0
    read: set[str] = set()
    for at, commit in enumerate(commits):
        blobs = {b: n for b, n in listings.get(commit, {}).items() if n <= most}
        new = sum(n for b, n in blobs.items() if b not in read)
        why = None
        if len(blobs) > files_cap:
            why = (f"its locks/ holds {len(blobs):,} distinct lock files, past the {files_cap:,} files a side may "
                   f"hold ({gitread.FILES_VARIABLE}; a review refuses such a revision)")
        elif total + new > LOCK_BLOBS_BYTES:
            why = (f"its lock files take the lock files of this branch read to {total + new:,} bytes, past the "
                   f"{LOCK_BLOBS_BYTES:,}-byte cap on what the review reads of them (diff.LOCK_BLOBS_BYTES)")
        if why is not None:
            lines.append(f"{commit}:{escaped(_locks_path(checkout, ''))}: {why}: not read; the locks of the "
                         f"{_n(at, 'newer commit')} of this branch that changed locks/ were read ({total:,} bytes), "
                         f"of this one and {_n(len(commits) - at - 1, 'older one')} not, so no re-lock of them "
                         f"confirms an entry of {LISTED}")
            break
        kept[commit] = blobs
        total += new
        read.update(blobs)
    return kept, lines


def _locks_path(checkout: Checkout, rel: str) -> str:
    """``PREFIXlocks/REL`` of ``checkout`` (``PREFIXlocks`` for an empty ``rel``), as ``COMMIT:PATH`` names it."""
    return f"{checkout.prefix}locks" + (f"/{rel}" if rel else "")


class _CommitCode:
    """The pricing-model digest of the code (``src/passprice``) of commits of the repository of ``checkout``, as
    :func:`_branch_records` asks it: the folder written out (:meth:`passprice.review.sides.Checkout.materialize`) and
    digested (:func:`passprice.pins.pricing_model_digest`), ``None`` where that code does not read. Each answer is keyed
    by the id of the commit's code folder (one ``git cat-file --batch-check`` for ``commits``, the ones to be asked),
    which names every byte the answer is a function of: the same folder is digested once a process, and a digest is kept
    in passprice's cache under that id (with this passprice's code, the interpreter and every ``PASSPRICE_`` variable,
    which set the caps), so a review asked again writes out and digests no commit's code a second time (a review of an
    old BASE wrote out and digested 145 of them, 3.3 s of CPU of its 11 s: tests/test_review137.py,
    docs/PERFORMANCE.md). A code that does not read is not kept (its reason may be git's, a timeout). Raises nothing of
    its own; :meth:`digest` raises what git does."""

    def __init__(self, checkout: Checkout, commits: Iterable[str]) -> None:
        self.checkout = checkout
        self.spec = f"{checkout.prefix}{CODE}"
        # A prefix holding pathspec magic is listed by materialize as a pattern, not a folder: no one tree then names
        # what is written out, and nothing is keyed (each commit's code is digested, as before).
        wanted = list(dict.fromkeys(commits)) if not any(c in self.spec for c in "*?[]\\:!\n\r") else []
        self.trees = {name.rpartition(":")[0] if name.endswith(f":{self.spec}") else name: oid
                      for name, (oid, kind) in _object_ids(checkout.top, [f"{c}:{self.spec}" for c in wanted]).items()
                      if kind == "tree"}
        self.known: dict[str, str | None] = {}

    def _key(self, tree: str) -> str:
        import sys

        caps = "".join(f"{k}={v}\0" for k, v in sorted(os.environ.items()) if k.startswith("PASSPRICE_"))
        data = f"{sys.version}\n{tree}\n{caps}\n{_review_stamp()}"
        return cache.key("branch-code", b"", data.encode("utf-8", "surrogateescape"))

    def digest(self, commit: str) -> str | None:
        """The digest of ``commit``'s code, or ``None`` when it does not read (a module that does not parse, a file
        past a cap, no package)."""
        from passprice.pins import pricing_model_digest

        tree = self.trees.get(commit)
        if tree is not None:
            if tree in self.known:
                return self.known[tree]
            kept = cache.read(self._key(tree))
            if kept is not None and isinstance(kept.get("digest"), str) and kept["digest"].startswith("sha256:"):
                self.known[tree] = str(kept["digest"])
                return self.known[tree]
        with tempfile.TemporaryDirectory(prefix="passprice-branch-") as tmp:
            try:
                self.checkout.materialize(commit, Path(tmp), (CODE,))
                folder = code_folder(Path(tmp))
                digest = pricing_model_digest(folder) if folder is not None else None
            except (InputError, SyntaxError, RecursionError, UnicodeDecodeError):
                return None  # that commit's code does not read: another commit's may (one failing stopped all)
        if tree is not None:
            self.known[tree] = digest
            if digest is not None:
                cache.store(self._key(tree), {"digest": digest})
        return digest


class _Ancestry:
    """Which commits are ancestors of which in the repository at ``top``, each ``of`` asked of git once (``git
    rev-list OF``, its every ancestor) where :func:`_branch_records` ran one ``git merge-base --is-ancestor`` a
    question: a review of an old BASE asked 236 of them (3.05 s of CPU of its 17 s, tests/test_review137.py,
    docs/PERFORMANCE.md). Raises nothing."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.reach: dict[str, frozenset[str] | None] = {}

    def holds(self, commit: str, of: str) -> bool:
        """Whether ``commit`` (a full object id) is ``of`` or an ancestor of it, as ``git merge-base --is-ancestor``
        says; ``False`` when git cannot say (``of`` unknown, no git)."""
        if of not in self.reach:
            try:
                self.reach[of] = frozenset(_run_git(self.top, ["rev-list", of, "--"]).decode("ascii").split())
            except (subprocess.CalledProcessError, OSError, InputError, UnicodeDecodeError):
                self.reach[of] = None
        reach = self.reach[of]
        return reach is not None and commit in reach


def _lock_pin(data: bytes) -> tuple[str, str] | None:
    """The ``[lock] pricing_model`` and ``digest`` of the lock file whose bytes are ``data``, read as a review reads
    a side's file as plain TOML (:func:`passprice.review.changes.side_toml`), or ``None``: not UTF-8, not TOML, past a
    cap, no ``lock`` table, or either value not a string (a ``pricing_model`` that is a table or an array was a
    ``TypeError``, a traceback, in :func:`_branch_records`'s test of it against the asked models). Raises
    :class:`InputError` only for a cap variable set wrong (:func:`passprice.review.changes.side_toml`)."""
    try:
        info = side_toml(data, "lock").get("lock", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(info, dict):  # a `lock` that is no table: no model or digest to read
        return None
    model, digest = info.get("pricing_model"), info.get("digest")
    if not isinstance(model, str) or not isinstance(digest, str):
        return None
    return model, digest


@functools.cache
def _review_stamp() -> str:
    """Name and :func:`passprice.cache.file_stamp` of each module of this subpackage (``passprice/review/*.py``), once
    a process, in the key of each entry the review keeps (:func:`_pins_key`, :meth:`_CommitCode.digest`'s):
    :func:`passprice.cache.key` stamps the modules of the package's own folder only, so without it a checkout's edit
    of a review module, its version unchanged, would be served what its code before the edit kept (an edit of
    ``diff.py``, a module of that folder while the review was one module, never was). Raises nothing."""
    import time

    now = time.time_ns()
    return ",".join(f"{p.name}:{cache.file_stamp(p, now)}" for p in sorted(Path(__file__).parent.glob("*.py")))


def _pins_key() -> str:
    """The cache key of :func:`_lock_pins`' entry: this passprice's code (:func:`passprice.cache.key`, and the
    review's own modules, :func:`_review_stamp`), the interpreter and every ``PASSPRICE_`` variable (which set the
    caps a file is read within)."""
    import sys

    caps = "".join(f"{k}={v}\0" for k, v in sorted(os.environ.items()) if k.startswith("PASSPRICE_"))
    data = f"{sys.version}\n{caps}\n{_review_stamp()}"
    return cache.key("lock-pins", b"", data.encode("utf-8", "surrogateescape"))


def _lock_pins(top: Path, sizes: Mapping[str, int]) -> dict[str, tuple[str, str] | None]:
    """:func:`_lock_pin` of each lock blob of ``sizes`` (its id → its size) in the repository at ``top``, each read
    from git once (one ``cat-file --batch``); a blob git does not find is left out. The answers are kept in one entry
    of passprice's cache (:func:`_pins_key`), by blob id (the sha of its bytes, git's name for them), for the blobs of
    this call only: a review asked again reads and parses none of the blobs it read before (a review of an old BASE
    read 1,507 distinct lock blobs, 37 MB, 1.8 s of CPU: tests/test_review137.py, docs/PERFORMANCE.md). An entry
    not of this
    shape is ignored and overwritten. Raises as :func:`passprice.gitread.read_blobs` and :func:`_lock_pin` do."""
    key = _pins_key()
    kept = cache.read(key) if sizes else None
    known: dict[str, tuple[str, str] | None] = {}
    if kept is not None and isinstance(kept.get("pins"), dict):
        for blob, pin in kept["pins"].items():
            if blob in sizes and (pin is None or (isinstance(pin, list) and len(pin) == 2
                                                  and all(isinstance(p, str) for p in pin))):
                known[blob] = None if pin is None else (pin[0], pin[1])
    missing = {b: n for b, n in sizes.items() if b not in known}
    if not missing:
        return known
    # A lock blob past the lock's cap has no pin (side_toml refuses it by its length): not read, where it was read
    # whole up to 64 MiB first (tests/test_blobcap162.py).
    most = schema.kind_cap("lock")
    known.update({b: None for b, n in missing.items() if n > most})
    missing = {b: n for b, n in missing.items() if n <= most}
    contents = gitread.read_blobs(top, missing)
    for blob, data in contents.items():
        known[blob] = _lock_pin(data)
    cache.store(key, {"pins": {b: None if p is None else list(p) for b, p in known.items()}})
    return known


def _object_ids(top: Path, names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each of ``names`` (``COMMIT:PATH``, no line break) that git finds: its object id and type, from one ``git
    cat-file --batch-check``. Raises as :func:`passprice.gitread.run_git` does."""
    if not names:
        return {}
    out = _run_git(top, ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape"))
    found: dict[str, tuple[str, str]] = {}
    for name, line in zip(names, out.split(b"\n"), strict=False):
        fields = line.split(b" ")
        if len(fields) == 2 and fields[1] in (b"tree", b"blob", b"commit"):
            found[name] = (fields[0].decode("ascii"), fields[1].decode("ascii"))
    return found


#: The most bytes one folder (a git tree object) of ``locks/`` :func:`_lock_listings` reads: an entry of a lock file
#: is about 60 bytes (``100644 NAME.lock.toml\0`` and a 20-byte id), so 1 MiB lists some 17,000 files, four times
#: :data:`passprice.gitread.MAX_SIDE_FILES`; this checkout's ``locks/`` tree held 574 bytes at session 50.
LOCK_TREE_BYTES = 1 << 20
#: The most bytes of distinct folders :func:`_lock_listings` reads for one review (every commit of
#: :data:`BRANCH_COMMITS`): 500 versions of this checkout's ``locks/`` hold 287 KB.
LOCK_TREES_BYTES = 16 << 20


def _tree_sizes(top: Path, trees: Sequence[str]) -> dict[str, int]:
    """Each tree of ``trees`` (object ids) that git finds, by its size in bytes as git stores it, from one ``git
    cat-file --batch-check``; none is read. Raises as :func:`passprice.gitread.run_git` does."""
    if not trees:
        return {}
    out = _run_git(top, ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                   "".join(f"{t}\n" for t in trees).encode("ascii"))
    sizes: dict[str, int] = {}
    for tree, line in zip(trees, out.split(b"\n"), strict=False):
        fields = line.split(b" ")
        if len(fields) == 3 and fields[1] == b"tree" and fields[2].isdigit():
            sizes[tree] = int(fields[2])
    return sizes


def _tree_entries(data: bytes, width: int) -> Iterator[tuple[bytes, bytes, str]]:
    """The entries of a git tree object's raw content ``data`` (``MODE NAME\\0`` then the object id's ``width``
    bytes, git's tree format): each mode, name and object id (hex). A truncated entry ends the walk."""
    at = 0
    while at < len(data):
        space = data.find(b" ", at)
        nul = data.find(b"\0", space + 1)
        if space < 0 or nul < 0 or nul + 1 + width > len(data):
            return
        yield data[at:space], data[space + 1:nul], data[nul + 1:nul + 1 + width].hex()
        at = nul + 1 + width


def _lock_listings(checkout: Checkout, commits: Sequence[str],
                   names: dict[tuple[str, str], str] | None = None,
                   over: dict[str, dict[str, int]] | None = None) -> dict[str, dict[str, int]]:
    """For each of ``commits``: the blobs (id → size) of the files named ``*.lock.toml`` anywhere under ``locks/``
    of the checkout's root at that commit, of at most :data:`~passprice.schema.MAX_TOML_BYTES`, in git's order —
    what ``git ls-tree -r -l --full-tree COMMIT -- PREFIXlocks`` lists of them (a symbolic link's blob included, a
    submodule not). Read with three or four git processes whatever the number of commits (``cat-file
    --batch-check`` of each commit's folder, ``cat-file --batch`` of each distinct tree under them, level by level,
    ``--batch-check`` of each distinct blob's size), where :func:`_branch_records` ran one ``ls-tree`` a commit (327
    in a review of an old BASE: tests/test_review137.py, docs/PERFORMANCE.md); a prefix holding pathspec magic or a line
    break is listed the ``ls-tree`` way. Each tree is sized before it is read (``--batch-check``, a level at once).
    Raises :class:`InputError`, one line naming ``COMMIT:PATH`` of a folder, for a tree past
    :data:`LOCK_TREE_BYTES` or trees past :data:`LOCK_TREES_BYTES` in all (not read), and as
    :func:`passprice.gitread.run_git` does. ``names``, when given, gets each listed blob's path under ``locks/``
    (the first name it has) by ``(commit, blob)``; ``over`` the blobs left out past ``MAX_TOML_BYTES`` by commit
    (id → size), so that the caller can name them (tests/test_bigread173.py)."""
    spec = f"{checkout.prefix}locks"
    out: dict[str, dict[str, int]] = {}
    if any(c in spec for c in "*?[]\\:!\n\r"):
        for commit in commits:
            listing = _run_git(checkout.top, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", spec])
            sizes: dict[str, int] = {}
            for record in os.fsdecode(listing).split("\0"):
                meta, _, name = record.partition("\t")
                parts = meta.split()
                if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit() and name.endswith(".lock.toml"):
                    if names is not None:
                        names.setdefault((commit, parts[2]), name[len(spec) + 1:])
                    if int(parts[3]) <= schema.MAX_TOML_BYTES:
                        sizes[parts[2]] = int(parts[3])
                    elif over is not None:
                        over.setdefault(commit, {})[parts[2]] = int(parts[3])
            out[commit] = sizes
        return out
    roots = _object_ids(checkout.top, [f"{commit}:{spec}" for commit in commits])
    trees: dict[str, bytes] = {}
    # each folder (a tree) by the first COMMIT:PATH found to hold it, for the line refusing one past the cap
    where = {oid: name for name, (oid, kind) in reversed(roots.items()) if kind == "tree"}
    todo = list(dict.fromkeys(oid for oid, kind in roots.values() if kind == "tree"))
    total = 0
    while todo:
        # Sized first (one --batch-check a level), read only within the caps (tests/test_blobcap169.py: a tree of
        # 10^6 entries, 46 MB as git stores it and 2.6 MB of .git, was read whole, 357 MB, and its entries walked)
        tree_sizes = _tree_sizes(checkout.top, todo)
        for tree in todo:
            held = tree_sizes.get(tree, 0)
            total += held
            if held > LOCK_TREE_BYTES or total > LOCK_TREES_BYTES:
                raise InputError(
                    f"{escaped(where.get(tree, tree))}: a folder of {held:,} bytes as git stores it"
                    + (f", past the {LOCK_TREE_BYTES:,}-byte cap on one folder of locks/ passprice lists from git "
                       "(diff.LOCK_TREE_BYTES; not read)" if held > LOCK_TREE_BYTES else
                       f", {total:,} bytes of folders in all, past the {LOCK_TREES_BYTES:,}-byte cap on the folders "
                       "of locks/ passprice lists from git (diff.LOCK_TREES_BYTES; not read)"))
        got = gitread.read_blobs(checkout.top, {tree: tree_sizes.get(tree, 0) for tree in todo}, kind="tree")
        trees.update(got)
        following: dict[str, None] = {}
        for tree in todo:
            for entry_mode, entry_name, oid in _tree_entries(got.get(tree, b""), len(tree) // 2):
                if entry_mode == b"40000" and oid not in trees and oid not in following:
                    following[oid] = None
                    where.setdefault(oid, f"{where.get(tree, tree)}/{os.fsdecode(entry_name)}")
        todo = list(following)
    # a commit's folder (a tree) → the blob ids of its *.lock.toml files, each with its path under locks/
    locks: dict[str, list[tuple[str, str]]] = {}

    def walk(root: str) -> list[tuple[str, str]]:
        if root not in locks:
            found: list[tuple[str, str]] = []
            stack = [(root, "")]  # a stack, not recursion: a folder nested thousands deep is walked too
            while stack:
                tree, path = stack.pop()
                entries = list(_tree_entries(trees.get(tree, b""), len(tree) // 2))
                for mode, name, oid in entries:
                    if mode != b"40000" and mode != b"160000" and name.endswith(b".lock.toml"):
                        found.append((oid, path + os.fsdecode(name)))
                stack += [(oid, f"{path}{os.fsdecode(name)}/") for mode, name, oid in reversed(entries)
                          if mode == b"40000"]
            locks[root] = found
        return locks[root]

    listed = {commit: walk(roots[f"{commit}:{spec}"][0]) if roots.get(f"{commit}:{spec}", ("", ""))[1] == "tree"
              else [] for commit in commits}
    sizes_of = gitread.blob_sizes(checkout.top, [b for blobs in listed.values() for b, _ in blobs])
    for commit, named in listed.items():
        out[commit] = {}
        for blob, path in named:
            size = sizes_of.get(blob)
            if size is None:
                continue
            if names is not None:
                names.setdefault((commit, blob), path)
            if size <= schema.MAX_TOML_BYTES:
                out[commit][blob] = size
            elif over is not None:
                over.setdefault(commit, {})[blob] = size
    return out


def _locks(side: Side) -> dict[str, Lock | None]:
    """Each lock file of ``side`` by path: the lock, or ``None`` when it does not read."""
    out: dict[str, Lock | None] = {}
    for rel in side.files:
        if file_kind(rel)[0] == "lock":
            try:
                out[rel] = read_lock(side.root.path / rel, side.root.schema)
            except InputError:
                out[rel] = None
    return out


def _request(rel: str, lock: Lock) -> dict[str, Any]:
    request = {"key": rel, "kind": lock.kind, "serving": lock.info.serving, "spec": spec_to_document(lock.spec)}
    if lock.stack is not None:
        request["stack"] = lock.stack.name
    return request


def renamed_serving(base: Side, head: Side, name: str) -> tuple[str, bool] | None:
    """The serving HEAD adds that is BASE's serving ``name`` under another name (every field the same, its
    description aside), or else one HEAD adds on the same checkpoint and card (the same model served on the same
    card, some field changed on the way), each with whether it is the same serving, or ``None``. A pull request
    renaming a serving and re-locking it with weaker floors read as its locks retired with their serving and a new
    lock added: exit 0, no floor shown loosened; and so it still did with one field changed in the rename
    (``max_tpot = 3600``, which moves no price)."""
    from passprice.locks import portable_spec
    from passprice.reproduce import serving_changes
    from passprice.servings import spec_of_file

    rel = f"registry/servings/{name}.toml"
    if rel not in base.files:
        return None
    try:
        # Each side's card and checkpoint as a lock records them (a path to a registry entry as its name): a renamed
        # serving naming its card by the path to it read as another card, and its locks as "deleted with it".
        before = portable_spec(spec_of_file(base.root, base.root.path / rel), base.root)
    except InputError:
        return None
    # The card or checkpoint entry renamed in the same change (its file gone, the same content added under another
    # name) is the same card or checkpoint: a serving renamed with its card's file, and re-locked at weaker floors,
    # read as retired with its locks (exit 0). One BASE names that HEAD no longer has, in place of which HEAD adds
    # others, may be any of those: a serving naming one of them is the same checkpoint on the same card, changed.
    renamed, gone, added = _renamed_entries(base, head)
    before = attrs.evolve(before, card=renamed.get(("card", before.card), before.card),
                          checkpoint=renamed.get(("checkpoint", before.checkpoint), before.checkpoint))

    def same_entry(kind: str, was: str, now: str) -> bool:
        return was == now or ((kind, was) in gone and (kind, now) in added)

    alike = None
    for other in sorted(head.files):
        kind, new = file_kind(other)
        if kind != "serving" or other in base.files:
            continue
        try:
            after = portable_spec(spec_of_file(head.root, head.root.path / other), head.root)
        except InputError:
            continue
        if not serving_changes(before, after):
            return new, True
        if alike is None and same_entry("checkpoint", before.checkpoint, after.checkpoint) and same_entry(
            "card", before.card, after.card
        ):
            alike = new
    return (alike, False) if alike is not None else None


def _renamed_entries(
    base: Side, head: Side
) -> tuple[dict[tuple[str, str], str], set[tuple[str, str]], set[tuple[str, str]]]:
    """The cards and checkpoint entries a change renamed: ``(kind, BASE name) → HEAD name`` for each file BASE has
    and HEAD lacks whose content HEAD adds under another name (a card's bytes; a checkpoint entry's header, whose
    content digest leaves out the entry's name), then the ``(kind, name)`` of every such file BASE has that HEAD
    lacks, and of every one HEAD adds."""
    folders = {"facts/cards/": "card", "registry/checkpoints/": "checkpoint"}

    def entries(files: Mapping[str, bytes], other: Mapping[str, bytes]) -> list[tuple[str, str, str]]:
        out = []
        for rel in files:
            folder, _, leaf = rel.rpartition("/")
            kind = folders.get(folder + "/")
            if kind is not None and leaf.endswith(".toml") and "/" not in leaf and rel not in other:
                out.append((kind, leaf[: -len(".toml")], rel))
        return sorted(out)

    gone, added = entries(base.files, head.files), entries(head.files, base.files)
    renamed: dict[tuple[str, str], str] = {}
    for kind, was, old_rel in gone:
        for other_kind, now, new_rel in added:
            if other_kind != kind:
                continue
            if kind == "card":
                same = base.files[old_rel] == head.files[new_rel]
            else:
                old, new = _read(base, old_rel, kind, was), _read(head, new_rel, kind, now)
                same = old.content is not None and old.content == new.content
            if same:
                renamed[(kind, was)] = now
                break
    return renamed, {(k, n) for k, n, _ in gone}, {(k, n) for k, n, _ in added}


def dropped_floors(
    removed: Lock, head: Side, head_locks: Mapping[str, Lock | None], base: Side | None = None
) -> tuple[tuple[FloorChange, ...], str | None]:
    """What removing ``removed`` on HEAD does to the floors its registered serving is priced under, as cargo judges
    a removed lockfile entry against the manifest: nothing when the serving is deleted with it (nothing is left to
    guard) or when it locked no registered serving (its floors applied only under ``--lock``); else each path its
    price rests on whose floor no lock of that serving left on HEAD matches (:class:`FloorChange`, ``now`` the
    strictest floor left, and ``after`` ``None`` when no lock of the serving is left). Returns (dropped floors, why
    none is dropped)."""
    name = removed.info.serving
    if name is None:
        return (), "it locked no registered serving (its floors applied only under --lock)"
    renamed, same = None, True
    if not (head.root.servings / f"{name}.toml").is_file():
        found = renamed_serving(base, head, name) if base is not None else None
        if found is None:
            return (), f"serving {name} is deleted with it"
        renamed, same = found
    left = [lock for lock in head_locks.values() if lock is not None and lock.info.serving == (renamed or name)]
    out = []
    for path in sorted(removed.rests_on):
        was = removed.policy.allowed(path)
        strictest = min((lock.policy.allowed(path) for lock in left), default=None)
        now = strictest or Provenance.ASSUMED
        if now.weaker_than(was):
            out.append(FloorChange(path, removed.policy.paths.get(path), strictest, was, now))
    how = "the same serving, renamed" if same else "renamed and changed: the same checkpoint on the same card"
    moved = f"serving {name} is {renamed} on HEAD ({how})" if renamed else None
    if out:
        return tuple(out), moved
    kept = ", ".join(sorted(lock.name for lock in left))
    return (), f"{moved}, and " * bool(moved) + f"every floor it set is kept by {kept}"


def kept_floors(
    lock: Lock, policy: Iterable[FloorChange], head_locks: Mapping[str, Lock | None]
) -> dict[str, tuple[str, Provenance]]:
    """For each floor ``policy`` (HEAD's ``lock`` against BASE's) loosens on a path, the other lock of HEAD of the
    same registered serving whose recorded price rests on the path and floors it at least as strictly as ``lock``
    did on BASE (the strictest, by name): path → (its name, its floor). A lock of no registered serving keeps none
    (its floors apply under ``--lock`` alone). HEAD's other locks are looked through only when a floor is loosened:
    1,000 added copies of a lock each looked through the other 999 (quadratic; left61)."""
    name = lock.info.serving
    policy = tuple(policy)
    if name is None or not any(change.loosens and change.path != "*" for change in policy):
        return {}
    others = sorted(
        (other for other in head_locks.values()
         if other is not None and other.info.serving == name and other.name != lock.name),
        key=lambda other: other.name,
    )
    out = {}
    for change in policy:
        if not change.loosens or change.path == "*":
            continue
        holding = [(other.policy.allowed(change.path), other.name) for other in others
                   if change.path in other.rests_on and not other.policy.allowed(change.path).weaker_than(change.was)]
        if holding:
            floor, other_name = min(holding, key=lambda h: (h[0], h[1]))
            out[change.path] = (other_name, floor)
    return out


def question_changes(old: Lock, new: Lock) -> tuple[str, ...]:
    """What ``new`` answers that ``old``, the same lock file on BASE, did not: ``kind best → price``, the registered
    serving it locks, the serving stack its expected price is under, its name (each ``what: BASE → HEAD``, ``none``
    for absent); empty when it is the same question, re-priced. A lock of the first format recorded no serving
    (``lock --update`` names the one it locked), so its serving is not compared.

    A lock of no registered serving (``lock --checkpoint C --card K --name N``, or ``lock SERVING --limit 1024 -o
    …``) asks about the serving it embeds: each of its fields that ``new`` changes is another question too
    (``serving card: h200_sxm_141gb → h100_sxm5_80gb``), but a checkpoint entry renamed with its pinned content
    unchanged. Rewritten with ``--force`` onto the H100, such a lock read "re-locked" (✅, -29 %; slip round 28)."""
    out = []
    for what, a, b in (
        ("kind", old.kind, new.kind),
        ("serving", old.info.serving if old.info.format >= 2 else new.info.serving, new.info.serving),
        ("stack", old.stack.name if old.stack else None, new.stack.name if new.stack else None),
        ("name", old.name, new.name),
    ):
        if a != b:
            out.append(f"{what} {spelled(a) if a else 'none'} → {spelled(b) if b else 'none'}")
    if old.info.format >= 2 and old.info.serving is None and new.info.serving is None:
        same = old.checkpoint_pin.content is not None and old.checkpoint_pin.content == new.checkpoint_pin.content
        out += [f"serving {line}" for line in _serving_changes(old.spec, new.spec)
                if not (same and line.startswith("checkpoint: "))]
    return tuple(out)


#: Why a lock whose file HEAD cannot read shows no HEAD price: it was priced with BASE's lock on HEAD's inputs, and
#: that price sat beside "not judged" as if HEAD's lock recorded and held it (slip round 28).
HEAD_UNREAD = (
    "HEAD's lock file does not read, so there is no HEAD lock to price and judge: no HEAD price is shown (BASE's "
    "lock priced on HEAD's inputs is not this file's price)"
)


def _moved_runs(head: Side, f: FileChange | None) -> tuple[tuple[str, float, float, str, str], ...]:
    """The measured runs whose figure a stack's re-fit (``f``, its file's changes) moved, in id order: ``(id,
    before, after, source, locator)``, the figures as each side's fit takes them (its derivation's runs), the
    citation as HEAD's ``registry/measurements`` records the run (``""`` where no file of HEAD that reads holds it).
    Empty for no file, or a re-fit moving no run's figure. Raises nothing."""
    if f is None:
        return ()
    moved: dict[str, tuple[float, float]] = {}
    for c in f.facts:
        if c.old is None or c.new is None:
            continue
        old, new = c.old.derivation, c.new.derivation
        if isinstance(old, RunDerivation) and isinstance(new, RunDerivation):
            before = {r.run: r.value for r in old.runs}
            moved.update({r.run: (float(before[r.run]), float(r.value)) for r in new.runs
                          if r.run in before and before[r.run] != r.value})
    if not moved:
        return ()
    from passprice.measurements import load_file

    cited: dict[str, tuple[str, str]] = {}
    for path in sorted((head.root.path / "registry" / "measurements").glob("*.toml")):
        try:
            runs = load_file(path, head.root.schema, head.root.sources)
        except InputError:
            continue
        cited.update({r.id: (r.source_id, r.locator) for r in runs if r.id in moved})
    return tuple((run, *moved[run], *cited.get(run, ("", ""))) for run in sorted(moved))


def _base_drift(base: Side, lock: Lock) -> tuple[str, ...]:
    """What BASE's ``lock`` pins otherwise than BASE's own registry holds it: the path of each pinned fact its price
    rests on that drifted (:func:`passprice.reproduce.drift`), then the key of each relabelled pin (``card.title``
    …), as ``check --frozen`` on BASE reads them, with the running code (BASE's registry read as the review reads
    its facts). Empty when it pins what BASE holds. Raises nothing: BASE's files that do not read leave it
    empty (the review says so elsewhere)."""
    from passprice.reproduce import price_today

    try:
        today = price_today(base.root, lock)
    except (InputError, OSError, ValueError):
        return ()
    labels = [line.split(":", 1)[0] for line in today.relabelled]
    return tuple(dict.fromkeys([*(d.path for d in today.drift), *labels]))


def _read_at(side: Side, ref: str) -> str | None:
    """The file a serving's card or checkpoint reference ``ref`` (a path, as :func:`passprice.locks.portable` writes
    one outside the entry folder) names as ``side``'s loaders read it: absolute, else below the side's root, else
    from the working folder (a revision's root holds only :data:`passprice.review.sides.FOLDERS`); ``None`` for an
    entry's name or a path naming no file. Raises nothing."""
    from passprice.files import is_there

    if "/" not in ref and os.sep not in ref:
        return None
    path = Path(ref)
    try:
        found = next((p for p in ((path,) if path.is_absolute() else (side.root.path / path, Path.cwd() / path))
                      if is_there(p)), None)
        return os.path.realpath(found) if found is not None else None
    except (OSError, ValueError):  # the working folder gone, a name the system refuses
        return None


def _one_spelling(base: Side, head: Side, old: Any, new: Any) -> tuple[Any, Any]:
    """BASE's and HEAD's completed serving specs (``old``, ``new``) with a card or checkpoint that both name by one
    file, spelt two ways (``/tmp/r/other/h200_sxm_141gb.toml`` on a revision's side, whose root lacks ``other/``, and
    ``other/h200_sxm_141gb.toml`` on the work tree's), written HEAD's way on both: one file is no change. A lock made
    with ``--card ROOT/other/X.toml`` read ``serving card: /tmp/…/other/X.toml → other/X.toml``, listed as affected
    with no fact changed, on every review of the work tree. Raises nothing."""
    moved = {key: getattr(new, key) for key in ("card", "checkpoint")
             if getattr(old, key) != getattr(new, key)
             and (at := _read_at(base, getattr(old, key))) is not None and at == _read_at(head, getattr(new, key))}
    return (attrs.evolve(old, **moved) if moved else old), new


def lock_impacts(base: Side, head: Side, files: Iterable[FileChange]) -> tuple[LockImpact, ...]:
    """Every lock of either side, re-priced with BASE's inputs and code (BASE's lock) and with HEAD's (HEAD's lock),
    and judged with each side's own policy."""
    from passprice.lineage import _record_name
    from passprice.servings import spec_from_document

    files = tuple(files)
    by_file = {(f.kind, f.name): f for f in files if f.holds_facts}
    entries = {f.name: f for f in files if f.kind == "checkpoint" and f.status == "changed"}
    lock_files = {f.path: f for f in files if f.kind == "lock"}
    # The stacks whose route a lock made under them may have moved: only a stack file the change edits on both sides
    # is read for it, each once (walk82's per-lock read parsed the llama.cpp stack's text 3 times a review, not once:
    # test_same_bytes).
    routed: dict[str, tuple[tuple[str, Any, Any], ...] | None] = {
        f.name: None for f in files if f.kind == "stack" and f.status == "changed"}
    base_locks, head_locks = _locks(base), _locks(head)
    requests: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
    pairs: dict[str, tuple[Lock | None, Lock | None, str | None]] = {}
    for rel in sorted({*base_locks, *head_locks}, key=lock_order):  # by name, as check lists them (left53)
        old, new = base_locks.get(rel), head_locks.get(rel)
        note = None
        if rel in head_locks and new is None:
            note = HEAD_UNREAD
        if rel in base_locks and old is None and rel in head_locks:
            note = "BASE's lock file does not read"
        if old is None and new is None:
            continue
        pairs[rel] = (old, new, note)
        if rel in base.files and (old or new) is not None:
            requests["base"].append(_request(rel, old or new))  # type: ignore[arg-type]
        if rel in head.files and new is not None:  # a lock file HEAD cannot read is not priced as BASE's
            requests["head"].append(_request(rel, new))
    base_results = price_locks(base.root, base.code, requests["base"])
    head_results = price_locks(head.root, head.code, requests["head"])
    refits: dict[str, tuple[Finding, ...]] = {}
    read: dict[str, tuple[tuple[str, float, float, str, str], ...]] = {}

    def moved_runs(stack: str) -> tuple[tuple[str, float, float, str, str], ...]:
        if stack not in read:
            read[stack] = _moved_runs(head, by_file.get(("stack", stack)))
        return read[stack]

    out = []
    for rel, (old, new, note) in pairs.items():
        lock = new or old
        assert lock is not None
        status = "added" if rel not in base.files else "removed" if rel not in head.files else (
            "changed" if rel in lock_files else "unchanged"
        )
        before = PriceSide.of(base_results.get(rel, {"error": "no such lock on BASE"}))
        after = PriceSide.of(head_results.get(rel, {"error": "no such lock on HEAD"}))
        if status == "added":
            before = PriceSide(error="the lock is new on HEAD")
        if status == "removed":
            after = PriceSide(error="the lock is removed on HEAD")
        if rel in head_locks and new is None:
            after = PriceSide(error=HEAD_UNREAD)
        rests = {*before.rests_on(), *after.rests_on(), *lock.rests_on}
        # The card, drafting method and routing record the lock's serving named, decided by their files as
        # lineage.lock_impacts decides them (lineage._record_name): a lock made with `--card OTHER/h200_sxm_141gb.toml`
        # records the card's name, and was matched to the registry's card of that name.
        named = head if new is not None and status != "removed" else base
        card_name = _record_name(named.root, "card", lock.spec.card) or lock.card
        touched = [by_file.get(("card", card_name))]
        if lock.spec.draft is not None:
            touched.append(by_file.get(("draft", _record_name(named.root, "draft", lock.spec.draft.method)
                                        or lock.spec.draft.method)))
        if lock.spec.routing is not None:
            touched.append(by_file.get(("routing", _record_name(named.root, "routing", lock.spec.routing)
                                        or lock.spec.routing)))
        if lock.stack is not None:
            touched.append(by_file.get(("stack", lock.stack.name)))
        changed: list[str] = []
        cites: list[Cite] = []
        fitted: list[str] = []
        drifted: list[str] = []
        rewritten: list[str] = []
        unreadable = []
        unsound: list[Finding] = []
        after_rests = set(after.rests_on()) if after.price is not None else set(lock.rests_on)
        if after.price is not None and isinstance(after.price.get("expected"), Mapping):
            after_rests |= set(after.price["expected"].get("rests_on", {}))  # under a stack: its facts too
        # HEAD prices the serving on another routing record than BASE (the serving re-pointed): the price rests on
        # the other record's facts, which no changed file of the lock's own record shows (walkthrough 51: the row
        # read ``changed: []``, ``cites: []`` though the re-locked price rests on the new record).
        rerouted = _rerouted(before, after) if status not in ("added", "removed") else None
        if rerouted is not None:
            for c in _record_changes(base, head, *rerouted):
                if c.lock_path in rests:
                    changed.append(c.lock_path)
                    cites += [cite for cite in (_lock_cite(c.lock_path, c.old, c.new),) if cite is not None]
        for f in touched:
            if f is None:
                continue
            # a fact re-derived to the same value (a re-fit's unmoved facts) moved nothing the lock rests on: it is
            # named in its file's one line, not here (walkthrough 47: all 12 stack paths listed, 5 of them moved)
            changed += [c.lock_path for c in f.facts if c.lock_path in rests and not _folded(f, c)]
            cites += [cite for c in f.facts
                      if c.lock_path in rests and not _folded(f, c) and (cite := _lock_cite(c.lock_path, c.old, c.new))]
            fitted += [c.lock_path for c in f.facts if c.old is not None and c.new is not None
                       and isinstance(c.new.derivation, RunDerivation) and c.old.derivation != c.new.derivation]
            if new is not None and status != "removed":
                pinned = [(c.lock_path, new.facts[c.lock_path], c.new) for c in f.facts if c.new is not None
                          and c.lock_path in after_rests and c.lock_path in new.facts
                          and new.facts[c.lock_path].digest() != c.new.digest()]
                drifted += [path for path, was, now in pinned if not same_quantity(was, now)]
                rewritten += [path for path, was, now in pinned if same_quantity(was, now)]
            if status != "removed":
                unsound += [attrs.evolve(x, path=f.lock_path(x.path)) for x in f.findings
                            if f.lock_path(x.path) in after_rests]
            if not f.compared:
                unreadable.append(f.path)
        if new is not None and status != "removed":
            # What the lock pins besides facts (its card's title and hypothetical, its serving's description): a
            # change moves no number, yet check --frozen fails on it until re-pinned (slip round 42).
            drifted += relabelled_pins(head, new, by_file.get(("card", card_name)), after.spec,
                                       by_file.get(("stack", lock.stack.name)) if lock.stack is not None else None,
                                       {k: by_file.get((k, pin.name)) for k, pin in (("routing", new.routing),
                                                                                     ("draft", new.draft))
                                        if pin is not None})
            if new.stack is not None and new.stack.fitted_vendors is not None and any(
                    f.kind == "card" for f in files):
                drifted += vendors_repinned(head, new)  # the vendors the stack's card warning reads (slip 48)
            drifted += header_repinned(new, entries.get(new.checkpoint_pin.name), after.checkpoint)
            drifted += origin_repinned(new, entries.get(new.checkpoint_pin.name), after.checkpoint)
            drifted += entry_label_repinned(new, entries.get(new.checkpoint_pin.name), after.checkpoint, "source")
        if lock.stack is not None and status != "removed":
            # A stack's fit re-run on HEAD (check's re-fit): a routing record, card or checkpoint its runs price
            # changed leaves the stack file as it was, its fitted facts no longer following from the runs; the lock
            # resting on them read "price moved" alone (slip round 35: expected 6,641.4 -> 6,835.1 on the old fit).
            if lock.stack.name not in refits:
                refits[lock.stack.name] = stack_refit_findings(head.root, lock.stack.name)
            # One finding of facts fitted together names them all (``also``): each the price rests on is marked,
            # not the first alone (walkthrough 27: "rests on stale stack.overhead.pass" of eight stale facts).
            unsound += [attrs.evolve(x, path=f"stack.{path}", also=()) for x in refits[lock.stack.name]
                        for path in (x.path, *x.also)
                        if f"stack.{path}" in after_rests and f"stack.{path}" not in {u.path for u in unsound}]
        if lock.stack is not None and status != "removed":
            # A stack is named by its file: renamed with its content kept, a lock made under it names a stack HEAD
            # lacks (slip round 51: it read "stack 'S': not found" alone, the file "removed" and another "added").
            gone_stack = by_file.get(("stack", lock.stack.name))
            if gone_stack is not None and gone_stack.status == "removed" and gone_stack.renamed is not None:
                what = (f"its stack {lock.stack.name} is renamed on HEAD ({gone_stack.path} → {gone_stack.renamed}): "
                        "a lock names its stack by its file's name, so HEAD cannot price it; keep the file's name, or "
                        f"re-lock it under stack {file_kind(gone_stack.renamed)[1]}")
                note = f"{note}; {what}" if note else what
        if unreadable:
            what = f"{', '.join(unreadable)} does not read on a side; its changes could not be compared"
            note = f"{note}; {what}" if note else what
        inputs = []
        if changed:
            inputs.append("facts")
        if before.checkpoint is not None and after.checkpoint is not None and before.checkpoint != after.checkpoint:
            inputs.append("checkpoint content")
        serving: tuple[str, ...] = ()
        serving_fields: tuple[Mapping[str, Any], ...] = ()
        if before.spec is not None and after.spec is not None:
            serving, serving_fields = _serving_change_pairs(*_one_spelling(
                base, head, spec_from_document(before.spec, "BASE"), spec_from_document(after.spec, "HEAD")))
            if serving:
                inputs.append("serving")
            if serving and status == "unchanged" and new is not None:
                # The lock file as it was under a serving the change rewrote: check --frozen fails on "serving
                # changed" until it is re-pinned, while the row read "records HEAD's price" and the review passed
                # without a word of it (walkthrough 41: the serving moved to another entry of the same header).
                drifted += [str(f["field"]) for f in serving_fields]
        if lock.stack is not None and status != "removed":
            # Where the stack's matrix kernels run is no fact but moves the expected price as one: said as
            # ``reproduce`` says it (``stack S integer_matrices: vector → array``), a field the lock pins. Walkthrough
            # 82: the row read "changed –" and ``serving_differences`` [] at expected +3.03 %.
            routes = routed.get(lock.stack.name, ())
            if routes is None:
                routes = routed[lock.stack.name] = stack_route_changes(base, head, lock.stack.name)
            if routes:
                serving = (*serving, *(f"stack {lock.stack.name} {key}: {was} → {now}" for key, was, now in routes))
                fields = tuple({"field": f"stack.{lock.stack.name}.{key}", "locked": was, "now": now}
                               for key, was, now in routes)
                serving_fields = (*serving_fields, *fields)
                if "serving" not in inputs:
                    inputs.append("serving")
                if status == "unchanged" and new is not None:
                    drifted += [str(f["field"]) for f in fields]  # the lock pins the old route: re-pin
        if after.gone:
            serving = (f"serving {lock.info.serving} is not registered on HEAD", *serving)
            serving_fields = ({"field": "registered", "locked": lock.info.serving, "now": None}, *serving_fields)
            inputs.append("serving")
        if status not in ("added", "removed") and base.code.model != head.code.model:
            inputs.append("pricing model")
        policy = compare_policies(old.policy, new.policy) if old is not None and new is not None else ()
        verdict = _judge(new or old, after) if status != "removed" else None
        dropped: tuple[FloorChange, ...] = ()
        retired = None
        if status == "removed":
            dropped, retired = dropped_floors(lock, head, head_locks, base)
        measured = offence_elasticities(head, lock, verdict) if status != "removed" else ({}, {})
        out.append(
            LockImpact(
                name=lock.name,
                path=rel,
                card=lock.card,
                kind=lock.kind,
                serving_name=lock.info.serving,
                status=status,
                changed=tuple(dict.fromkeys(changed)),
                routing_record=rerouted[1] if rerouted is not None else lock.spec.routing,
                rerouted=rerouted,
                cites=tuple(dict.fromkeys(cites)),
                fitted=tuple(p for p in dict.fromkeys(fitted) if any(cite[0] == p for cite in cites)),
                runs_moved=(moved_runs(lock.stack.name) if lock.stack is not None and status != "removed" else ()),
                before=before,
                after=after,
                verdict_before=_judge(old, before) if status != "added" else None,
                verdict=verdict,
                recorded_before=old.price if old is not None and status != "added" else None,
                recorded=new.price if new is not None else None,
                policy=policy,
                inputs=tuple(inputs),
                serving=serving,
                serving_differences=serving_fields,
                older=new is not None and new.info.format < LOCK_FORMAT,
                note=note,
                elasticities=measured[0],
                unmeasured=measured[1],
                unsound=_unrooted(head, unsound),
                dropped=dropped,
                retired=retired,
                pinned_content=new.checkpoint_pin.content if new is not None else None,
                pinned_checkpoint=new.checkpoint_pin.name if new is not None else None,
                question=question_changes(old, new) if old is not None and new is not None else (),
                head_unread=rel in head_locks and new is None,
                hand_edits=(hand_edits(base.files.get(rel), head.files.get(rel))
                            if rel in head_locks and new is None else ()),
                recorded_edited=(edited_recorded(head.files.get(rel)) if rel in head_locks and new is None
                                 else None),
                clash_way=(first_format_clash(head.root, head.root.path / rel, old.name, shell_word(rel))
                           if rel in head_locks and new is None and old is not None and old.info.format < 2
                           else None),
                drifted=tuple(dict.fromkeys(drifted)),
                base_drift=(_base_drift(base, old) if status == "unchanged" and old is not None and not drifted
                            and before.price is not None else ()),
                rewritten=tuple(dict.fromkeys(rewritten)),
                kept=kept_floors(new, policy, head_locks) if new is not None else {},
                model_pins=((old.info.pricing_model, new.info.pricing_model) if status == "changed" and old is not None
                            and new is not None and old.info.pricing_model != new.info.pricing_model else None),
            )
        )
    if head.code.running:
        out = [_with_alone(head, lock, *pairs[lock.path][:2]) if len(lock.changed) > 1 else lock for lock in out]
    else:  # priced in HEAD's own process, which prices each lock whole: the breakdown is not made, and said so
        out = [attrs.evolve(lock, alone_absent=ALONE_ABSENT)
               if len(lock.changed) > 1 and _alone_due(lock, *pairs[lock.path][:2]) else lock for lock in out]
    asked = {str(r["key"]): r for r in requests["head"]}
    due = [asked[lock.path] for lock in out if lock.unsound and not lock.removed and lock.path in asked]
    if due:
        moved: dict[str, dict[str, tuple[str, str]]] = {}
        sides = recomputed_prices(head, files, due, refits, moved)
        out = [_with_recomputed(lock, sides[lock.path], moved) if lock.path in sides else lock for lock in out]
    return tuple(out)


#: The most keys :func:`hand_edits` names; the rest are counted.
MAX_HAND_EDITS = 10


def hand_edits(base: bytes | None, head: bytes | None) -> tuple[str, ...]:
    """What a hand edit changed in a lock file, key by key: each dotted key whose value BASE's file and HEAD's
    differ in (``price.tokens_per_s: 5166.56237077287 → 5500.0``, ``policy.paths.memory.capacity: published →
    assumed``; added keys ``– → V``, removed ``V → –``), in the order HEAD's file holds them, the first
    :data:`MAX_HAND_EDITS` and then ``and N more keys``. Both files read as plain TOML (:mod:`tomllib`), the digest
    not checked: the digest mismatch is why HEAD's does not read as a lock. Empty when either side is missing or is
    not TOML (then only the file's own diff shows what changed), or when no value differs (a comment or layout edit
    alone). Values are shown as TOML writes scalars, each cut to 60 characters."""
    if base is None or head is None:
        return ()
    try:
        old = side_toml(base, "lock")
        new = side_toml(head, "lock")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()

    def flat(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in table.items():
            if isinstance(value, Mapping):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    def shown(value: Any) -> str:
        if value is _ABSENT:
            return "–"
        text = str(value).lower() if isinstance(value, bool) else str(value)
        return text if len(text) <= 60 else text[:59] + "…"

    before, after = flat(old), flat(new)
    keys = list(after) + [k for k in before if k not in after]
    lines = [f"{k}: {shown(before.get(k, _ABSENT))} → {shown(after.get(k, _ABSENT))}"
             for k in keys if before.get(k, _ABSENT) != after.get(k, _ABSENT)]
    if len(lines) > MAX_HAND_EDITS:
        lines = [*lines[:MAX_HAND_EDITS], f"and {len(lines) - MAX_HAND_EDITS:,} more keys"]
    return tuple(lines)


_ABSENT = object()


def edited_recorded(head: bytes | None) -> float | None:
    """The ``price.tokens_per_s`` a lock file that does not read as a lock (:attr:`LockImpact.head_unread`) holds,
    read as plain TOML (:mod:`tomllib`), the digest not checked; ``None`` when the file is missing, not TOML, or holds
    no finite number there. tokens/s. Raises nothing."""
    if head is None:
        return None
    try:
        price = side_toml(head, "lock").get("price")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    value = price.get("tokens_per_s") if isinstance(price, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or abs(value) == float("inf"):
        return None
    return float(value)


#: Why a lock's ``alone`` line is absent from a review whose HEAD is priced in its own process (:attr:`LockImpact.
#: alone_absent`): the side's process prices each lock whole and returns its price, not each changed fact's move.
ALONE_ABSENT = ("not shown: HEAD's code differs from the running code outside the pricing digest, so HEAD is priced "
                "in its own process, which prices each lock whole; `passprice reproduce LOCK` run with HEAD's own "
                "passprice prices each changed fact alone")


def _alone_due(lock: LockImpact, old: Lock | None, new: Lock | None) -> bool:
    """Whether :func:`_with_alone` prices ``lock``'s changed facts alone (from HEAD's ``new`` lock, or BASE's
    ``old``): the review of a lock the change moved (or re-locked) through its facts. Raises nothing."""
    return ((lock.unreviewed and new is not None)
            or (not lock.stale and bool(lock.moved) and old is not None and not lock.removed and not lock.added))


def _unrooted(side: Side, findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """``findings`` (what recomputing the derived facts a lock rests on found, on ``side``) with the temporary folder
    a git revision's files are read from written as :func:`passprice.review.headlocks._unrooted` writes ``check``'s
    lines: a path in it relative to the registry, the folder itself as the revision (12 digits of its commit). A
    review of a change making card a40 a folder said the stack's fit "cannot be re-run: …
    /tmp/passprice-diff-e9y5tzpr/facts/cards/a40.toml: is a folder" in each lock's ``unsound`` (attack round 55): a
    folder gone when ``diff`` ended, named anew at every run. A folder or the work tree is shown as it is."""
    revision = side.info.revision
    if revision is None:
        return tuple(findings)
    tops = {str(side.root.path), os.path.realpath(side.root.path)}

    def unrooted(text: str) -> str:
        for top in tops:
            text = text.replace(top + os.sep, "").replace(top, revision[:12])
        return text

    return tuple(attrs.evolve(f, message=unrooted(f.message)) for f in findings)


def _with_alone(head: Side, lock: LockImpact, old: Lock | None, new: Lock | None) -> LockImpact:
    """``lock`` with :attr:`LockImpact.alone` filled when the change moved its price through two or more changed facts:
    from HEAD's lock when it was not re-locked (its pins are BASE's), else from BASE's lock (``alone_base``), whose
    pins are what the re-lock replaced. Walkthrough 46: a re-locked lock moved +4.711 % by a bandwidth, its shares and
    a routing record's ``hot_experts`` read "re-locked" with the four paths and no word of which moved it, though the
    re-lock accepts the move and ``reproduce`` of BASE's lock said ``routing.hot_experts: tokens/s +4.705 %``."""
    if lock.unreviewed and new is not None:
        alone, joint, routing = changed_alone(head, new, lock.changed, lock.rerouted, lock.routing_record)
        return attrs.evolve(lock, alone=alone, joint=joint, routing_alone=routing)
    if not lock.stale and lock.moved and old is not None and not lock.removed and not lock.added:
        alone, joint, routing = changed_alone(head, old, lock.changed, lock.rerouted, lock.routing_record)
        return attrs.evolve(lock, alone=alone, joint=joint, alone_base=True, routing_alone=routing)
    return lock


def changed_alone(side: Side, lock: Lock | None, changed: Sequence[str], rerouted: tuple[str, str] | None = None,
                  record: str | None = None
                  ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...],
                             RoutingTogether | None]:
    """Each of the ``changed`` fact paths that ``lock`` pins and ``side`` holds otherwise, with what it alone does
    to the lock's recorded price: the lock's pinned inputs with only that fact as ``side`` has it, priced with the
    running code, as ``passprice reproduce`` prints it under "each drifted fact alone" (:func:`passprice.reproduce.
    alone`; ``tokens/s -4.894 %``, or ``refused alone (NotResident)``), in the order of ``changed``. The moves need
    not add up (a term taking over as the binding one). Second, each changed input with the changed facts derived
    from it priced at once, ``(inputs, derived paths, move)`` (:func:`passprice.reproduce.together`): a derived fact
    recomputed from a changed input is not an independent change (walkthrough 49: a bandwidth +0.4717 % alone, the
    shares derived from it -0.44 %, the one change +0.003 %). Third, the lock's routing record's changed facts
    priced at once (:func:`passprice.reproduce.routing_together`, given ``rerouted`` and the ``record`` the serving
    names on ``side``; one price).
    Empty (``None``) when the lock cannot be reproduced on ``side`` (its checkpoint gone, a file that does not
    read). Raises nothing."""
    from passprice.reproduce import reproduce
    from passprice.serving import ServingRefusal

    if lock is None:
        return (), (), None
    try:
        rep = reproduce(side.root, lock, grouped=True)
    except (InputError, ServingRefusal):
        return (), (), None
    from passprice.reproduce import exact_quantity

    said = {a.path: a.describe(lock.price, lock.compared()).removeprefix(f"{a.path}: ") for a in rep.alone}
    # A fact whose quantity did not move (a stack fact re-fitted to its own value, only its derivation's run list
    # changed) and that alone moves nothing is left out: walkthrough 46's re-fit read "tokens/s unchanged, expected
    # tokens/s unchanged" eight times beside the five that moved. A moved figure moving nothing is still said.
    kept = {d.path for d in rep.today.drift if d.today is None or exact_quantity(d.pinned) != exact_quantity(d.today)}
    alone = tuple((path, said[path]) for path in changed if path in said and (
        path in kept or not all(part.endswith(" unchanged") for part in said[path].split(", "))))
    asked = set(changed)
    joint = tuple((tuple(p for p in changed if p in g.inputs), tuple(p for p in changed if p in g.derived),
                   g.describe(lock.price, lock.compared()).split(": ", 1)[1])
                  for g in rep.joint if asked.issuperset(g.paths))
    from passprice.reproduce import find_checkpoint, routing_together

    header = find_checkpoint(side.root, lock)[0]  # the one reproduce found (cached): it priced the lock
    # the reproduction priced the record's drifted facts already (rep.routing): its price is passed through, not
    # made again (left50: one price more a lock whose routing facts drifted)
    routing = (routing_together(lock, header, rep.today.drift, lock.price, rerouted, record, changed, rep.routing)
               if header is not None else None)
    return alone, joint, routing


def _with_recomputed(lock: LockImpact, side: PriceSide, moved: Mapping[str, Mapping[str, tuple[str, str]]]
                     ) -> LockImpact:
    """``lock`` with its :attr:`~LockImpact.recomputed` price ``side``, the moves of its stack's re-fit
    (``moved``: stack name → fact path → (written, re-fitted), :func:`recomputed_prices`'s; those that differ) as
    :attr:`~LockImpact.refitted`, and each stale or mismatched stack fact it rests on given its re-fitted value as
    ``expected`` (a stale fit's finding named the facts, never what they re-fit to)."""
    stack = (lock.recorded or lock.recorded_before or {}).get("stack")
    fits = moved.get(stack, {}) if isinstance(stack, str) else {}
    unsound = tuple(attrs.evolve(f, expected=fits[f.path.removeprefix("stack.")][1])
                    if f.path.startswith("stack.") and f.expected is None and f.path.removeprefix("stack.") in fits
                    else f for f in lock.unsound)
    return attrs.evolve(lock, recomputed=side, unsound=unsound,
                        refitted=tuple(f"{p} {was} → {now}" for p, (was, now) in fits.items() if was != now))


@attrs.define
class _Copy:
    """A private copy of HEAD's files in ``folder`` (a :class:`Root` at ``root``) with every stale or mismatched
    derived fact of a changed card or drafting method recomputed (``recomputed``: whether any was), or the ``error``
    that stopped it; the serving stacks re-fitted in it since (``refitted``: name → each fact's (as HEAD wrote it,
    as re-fitted)). :func:`recomputed_prices`'s."""

    folder: Path
    root: Root
    error: str | None = None
    recomputed: bool = False
    refitted: dict[str, dict[str, tuple[str, str]]] = attrs.Factory(dict)


@attrs.define
class _Copies:
    """The copies :func:`recomputed_prices` made while :func:`passprice.review.verdict.compare` runs (``made``: by the
    id of HEAD's side and of the file changes) and the exit stack that removes their folders (``removal``)."""

    made: dict[tuple[int, int], _Copy]
    removal: contextlib.ExitStack


#: While :func:`passprice.review.verdict.compare` runs (:func:`_shared_copies`): the locks' and the unlocked servings'
#: prices share one copy (round 28: each wrote all of HEAD's files again and recomputed the card again, about a tenth of
#: the CPU of a review of one changed card fact).
_COPIES: list[_Copies] = []


@contextlib.contextmanager
def _shared_copies() -> Iterator[None]:
    """Until the ``with`` ends, :func:`recomputed_prices` keeps its copies for the next call on the same HEAD and
    changes; their folders are removed when it ends (an interrupt included)."""
    with contextlib.ExitStack() as removal:
        _COPIES.append(_Copies({}, removal))
        try:
            yield
        finally:
            _COPIES.pop()


def _recomputed_copy(head: Side, files: Sequence[FileChange], folder: Path) -> _Copy:
    """HEAD's files written into ``folder``, each stale or mismatched derived fact of a changed card, drafting
    method or routing record recomputed there (:func:`passprice.edit.recompute_record`); a failure is the copy's
    ``error``. Raises nothing."""
    from passprice import snapshot
    from passprice.edit import FactFile, recompute_record
    from passprice.serving import ServingRefusal

    root = Root(folder)
    copy = _Copy(folder, root)
    try:
        with snapshot.suspended():  # written, then read back: not HEAD's snapshot
            for rel, data in head.files.items():
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                gitread.write_side_file(target, data)
            for rel in _named_by_sources(head.files):  # what sources name is there (empty: nothing prices it)
                try:  # a name no file can have (past 255 bytes, a NUL, a link loop): check names it
                    target = (folder / rel).resolve()
                    if (target.is_relative_to(folder.resolve()) and not target.exists()
                            and (head.root.path / rel).is_file()):
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.touch()
                except (OSError, RuntimeError, ValueError):
                    continue
            for f in files:
                if f.kind in ("card", "draft", "routing") and any(x.kind in ("stale", "mismatch") for x in f.findings):
                    edits = recompute_record(FactFile(folder / f.path, f.kind, f.name, ""), root.schema, root,
                                             keep_layout=False)  # a private copy: tomlkit's parse not needed
                    copy.recomputed = copy.recomputed or bool(edits)
    except (InputError, ServingRefusal, OSError) as e:
        copy.error = _not_recomputed(e, folder)
    return copy


def _not_recomputed(e: Exception, folder: Path) -> str:
    """The error every result of :func:`recomputed_prices` gives when ``e`` stopped the copy in ``folder``."""
    lines = e.lines if isinstance(e, InputError) else [str(e)]
    return "not recomputed: " + "; ".join(lines).replace(f"{folder}/", "")


def recomputed_prices(
    head: Side, files: Sequence[FileChange], requests: Sequence[Mapping[str, Any]],
    refits: Mapping[str, Sequence[Finding]], moved: dict[str, dict[str, tuple[str, str]]] | None = None,
) -> dict[str, PriceSide]:
    """The locks of ``requests`` (:func:`_request`) priced with HEAD's code on a private copy of HEAD's files in
    which every derived fact of a changed card or drafting method that does not follow from its inputs (``files``'
    findings: stale or mismatch) is recomputed (:func:`passprice.edit.recompute_record`, what ``passprice fact
    recompute NAME`` writes), then each serving stack a request is priced under re-fitted
    (:func:`passprice.calibrate.calibrate`, what ``passprice calibrate --stack S`` writes) when its fit no longer
    follows on HEAD (``refits``: stack name → :func:`stack_refit_findings`) or a card was recomputed: what the
    locks' prices are once the change's derived facts follow. Results by request key, each a :class:`PriceSide`;
    when a recomputation fails (a derivation that does not evaluate, a re-fit refused), every result is its
    ``error`` (``not recomputed: …``). HEAD's files are not touched. ``moved``, when given, receives each stack
    re-fitted: each of its facts by path (``share.read``), (as HEAD wrote it, as re-fitted), in the fact's unit.
    Inside :func:`passprice.review.verdict.compare`, a second call on the same HEAD and changes (the unlocked servings'
    after the locks') prices in the first call's copy, unless a stack it prices stands otherwise there than it wants it
    (re-fitted or not, :func:`_fits`): then in a copy of its own. Raises nothing."""
    shared = _COPIES[-1] if _COPIES else None
    key = (id(head), id(files))
    with contextlib.ExitStack() as stack:
        copy = shared.made.get(key) if shared is not None else None
        if copy is not None and not _fits(copy, requests, refits):
            copy = None
        if copy is None:
            folder = Path(tempfile.mkdtemp(prefix="passprice-recomputed-"))
            (stack if shared is None else shared.removal).callback(_remove, folder)
            stack.enter_context(cache.unkept(folder))
            stack.enter_context(temporary_root(folder))
            copy = _recomputed_copy(head, files, folder)
            if copy.error is None:
                copy.error = _refit(copy, requests, refits)
            if shared is not None and key not in shared.made:
                shared.made[key] = copy
        else:
            stack.enter_context(cache.unkept(copy.folder))
            stack.enter_context(temporary_root(copy.folder))
        if copy.error is not None:
            return {str(r["key"]): PriceSide(error=copy.error) for r in requests}
        if moved is not None:
            asked = {r.get("stack") for r in requests}
            moved.update({name: dict(fits) for name, fits in copy.refitted.items() if name in asked})
        results = price_locks(copy.root, head.code, requests)
    return {key: PriceSide.of(result) for key, result in results.items()}


def _remove(folder: Path) -> None:
    """Remove ``folder`` and what it holds, silently (a copy's temporary folder)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _wanted_stacks(copy: _Copy, requests: Sequence[Mapping[str, Any]], refits: Mapping[str, Sequence[Finding]]
                   ) -> dict[str, bool]:
    """Each serving stack ``requests`` price under that ``copy`` holds, by name: whether it is to be re-fitted
    there (its fit no longer follows on HEAD, ``refits``, or a card was recomputed)."""
    from passprice.registry import stays_in

    out: dict[str, bool] = {}
    for name in sorted({str(r["stack"]) for r in requests if r.get("stack") is not None}):
        if not stays_in(copy.root.stacks, name) or not (copy.root.stacks / f"{name}.toml").is_file():
            continue  # HEAD's price names the stack that is not there: its own error says so
        out[name] = bool(refits.get(name)) or copy.recomputed
    return out


def _fits(copy: _Copy, requests: Sequence[Mapping[str, Any]], refits: Mapping[str, Sequence[Finding]]) -> bool:
    """Whether ``requests`` may be priced in ``copy`` as it stands: it stopped at no error, and each stack they price
    under stands there as they want it (:func:`_wanted_stacks`), nothing left to re-fit: a file the earlier call's
    prices read is never rewritten under a later one."""
    if copy.error is not None:
        return False
    return all((name in copy.refitted) == refit for name, refit in _wanted_stacks(copy, requests, refits).items())


def _refit(copy: _Copy, requests: Sequence[Mapping[str, Any]], refits: Mapping[str, Sequence[Finding]]
           ) -> str | None:
    """Re-fit in ``copy`` each stack ``requests`` want re-fitted that it has not re-fitted yet
    (:func:`passprice.calibrate.calibrate`): ``None``, or the error that stopped a re-fit. Raises nothing."""
    from passprice import snapshot
    from passprice.serving import ServingRefusal
    from passprice.stacks import load_stack, stack_path

    try:
        with snapshot.suspended():
            for name, refit in _wanted_stacks(copy, requests, refits).items():
                if not refit or name in copy.refitted:
                    continue
                stack = load_stack(copy.root, name)
                was = stack.lock_facts()
                path = stack_path(copy.root, stack.name)
                before = path.read_bytes()
                _refit_stack(copy.root, stack)
                # A re-fit that writes the file as it was (a shipped stack as shipped, a kept re-fit of the same
                # bytes) leaves the stack it was: not read, parsed and validated again (no snapshot is open here).
                now = was if path.read_bytes() == before else load_stack(copy.root, name).lock_facts()
                copy.refitted[name] = {p.removeprefix("stack."): (was[p].describe(), now[p].describe())
                                       for p in now if p in was}
    except (InputError, ServingRefusal, OSError) as e:
        return _not_recomputed(e, copy.folder)
    return None


#: The kind of a re-fitted stack file's entry in the cache of built objects (:func:`_refit_stack`).
REFIT_KIND = "diff-refit-1"


def _refit_stack(root: Root, stack: Any) -> None:
    """Re-fit ``stack`` (a :class:`passprice.stacks.Stack` read from ``root``, a private copy) to the copy's measured
    runs and write its fitted facts into its file (:func:`passprice.calibrate.calibrate`, then
    :func:`passprice.calibrate.write_calibration`, the layout not kept: the copy's file is priced and removed, never
    shown; tomlkit's parse of a 93 KB stack was 0.11 s of a cold one-fact diff, round 31).

    The file it writes is a function of everything :func:`passprice.stackfits.fit_inputs` keys a stack's findings by
    (the stack files, every measured run, the runs' cards, the checkpoint entries, routing records, drafting methods,
    sources, schemas, NumPy's files, the environment's bounds, the working folder; with passprice's code and
    libraries, as every cache key): so it is kept in the cache folder under those bytes, and a review run again
    writes the kept bytes, with no run priced, no fit solved and NumPy not imported (the copy's re-fit was about half
    of a warm one-fact diff, speed50). Where the inputs cannot be keyed (:func:`~passprice.stackfits.fit_inputs`
    says ``None``) or the cache is bypassed, nothing is kept or taken from the cache folder; a stack of the
    registry passprice ships, every input of its fit as shipped (:func:`~passprice.stackfits.shipped_stack`,
    answered with or without the cache), is left as its file is; any other is re-fitted as ever; a re-fit that
    raises keeps nothing. Raises
    :class:`InputError` or :class:`~passprice.serving.ServingRefusal` as a re-fit does."""
    from passprice import snapshot
    from passprice.files import write_atomically
    from passprice.measurements import load_runs
    from passprice.stackfits import fit_inputs, shipped_stack
    from passprice.stacks import stack_path

    path = stack_path(root, stack.name)
    inputs = None
    kept: bytes | None = None
    # The copy read as one snapshot of its own until its file is written (the private copy is read with HEAD's
    # snapshot suspended): the registry folders walked once for the cache's key and the shipped table's key
    # (stackfits._registry_part), not once for each (38 M instructions of a cold one-fact review).
    with snapshot.reading():
        try:
            runs: list[Any] | None = load_runs(root)
        except InputError:  # a run that does not read: the re-fit says so as ever
            runs = None
        if cache.enabled() and runs is not None:
            inputs = fit_inputs(root, stack, runs)
        entry_key = cache.object_key(REFIT_KIND, inputs) if inputs is not None else None
        if inputs is not None:
            kept = cache.kept_object(REFIT_KIND, inputs, bytes, entry_key)
        # a shipped stack as shipped: its re-fit is its file (the package's table, the cache bypassed or not)
        shipped = kept is None and runs is not None and (inputs is not None or not cache.enabled()) and shipped_stack(
            root, stack, runs)
    if kept is not None:
        if path.read_bytes() != kept:
            write_atomically(path, kept, force=True)
        return
    if shipped:
        return
    from passprice.calibrate import calibrate, fits_kept, write_calibration  # (NumPy: only for a re-fit)

    with fits_kept():
        fitted = calibrate(root, stack.name)
    write_calibration(root, fitted, keep_layout=False)
    if inputs is not None:
        cache.keep_object(REFIT_KIND, inputs, path.read_bytes(), entry_key)


def stack_refit_findings(root: Root, name: str) -> tuple[Finding, ...]:
    """What ``passprice check`` finds in stack ``name``'s run-derived facts on ``root``
    (:func:`passprice.calibrate.verify_stack`: a fit re-run from today's runs, cards, checkpoints and routing records),
    each :class:`~passprice.derivations.Finding` with the stack's own fact path (``share.read``); a finding of the
    fit's recorded errors (``Finding.of_errors``) only when no fact's value moved. Empty when the stack
    or the measured runs do not read (``check`` reports those files itself), and when ``name`` (a HEAD lock's stack
    name) leads out of ``facts/stacks`` (``../../../outside/vllm-w24``: a file of another folder, which the pricing
    refuses to read, was re-fitted and its findings marked on the lock, attack round 41). Raises nothing."""
    from passprice.measurements import load_runs
    from passprice.registry import stays_in
    from passprice.stackfits import stack_findings
    from passprice.stacks import load_stack

    if not stays_in(root.stacks, name):
        return ()
    try:
        stack = load_stack(root, str(root.stacks / f"{name}.toml"))
        found = stack_findings(root, stack, load_runs(root))  # the fit check's review of HEAD re-ran, made once
        # A fit whose facts moved names those facts; its recorded errors, which move with them, would name all
        # (session 29: eight facts marked of a fit whose three moved). Errors alone disagreeing (slip 48: rewritten
        # by hand) still mark the facts carrying them: a price under the stack prints them.
        values = tuple(f for f in found if not f.of_errors)
        return values or found
    except InputError:
        return ()


def stale_stack_facts(root: Root, stack: str, price: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The fitted facts of serving stack ``stack`` (lock paths, ``stack.share.read``) that the expected price of
    ``price`` (a ``--json`` price object under the stack; ``None`` or another object: none) rests on and that no
    longer follow from the stack's runs on ``root`` (:func:`stack_refit_findings`, each fact a finding covers).
    Raises nothing."""
    if price is None or not isinstance(price.get("expected"), Mapping):
        return ()
    rests = set(price["expected"].get("rests_on", {}))
    return tuple(dict.fromkeys(f"stack.{path}" for f in stack_refit_findings(root, stack)
                               for path in (f.path, *f.also) if f"stack.{path}" in rests))


def relabelled_pins(
    head: Side, lock: Lock, card: FileChange | None, spec: Mapping[str, Any] | None, stack: FileChange | None = None,
    records: Mapping[str, FileChange | None] | None = None,
) -> list[str]:
    """The keys ``lock`` (as HEAD has it) pins besides facts that HEAD's files no longer hold as pinned:
    ``card.title`` and ``card.hypothetical`` when HEAD's card file ``card`` (changed) holds another title or mark,
    ``serving.description`` when HEAD's completed serving ``spec`` (its document) describes it otherwise,
    ``stack.S.title`` when HEAD's stack file ``stack`` (changed) holds another title, ``routing.title``/``note``
    and ``draft.title``/``note`` when HEAD's routing record or drafting method file (``records``, by ``routing``
    and ``draft``: changed) holds another title or note than the lock's ``[routing]``/``[draft]`` (slip round 44;
    a lock without them pins neither). The review
    lists them with the facts a lock pins as before the change (:attr:`LockImpact.drifted`): ``check --frozen``
    fails on each (:func:`passprice.reproduce.relabelled`). Raises nothing: a file that does not read is named
    elsewhere."""
    out = []
    if card is not None and card.status == "changed" and {"name", "hypothetical"} & set(card.meta):
        try:
            table = side_toml(head.files[card.path], "card").get("card", {})
            title, hypothetical = table.get("name", card.name), table.get("hypothetical", False) is True
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            title, hypothetical = lock.card_title, lock.card_hypothetical
        if title != lock.card_title:
            out.append("card.title")
        if hypothetical != lock.card_hypothetical:
            out.append("card.hypothetical")
    if spec is not None and spec.get("description") != lock.spec.description:
        out.append("serving.description")
    if stack is not None and lock.stack is not None and stack.status == "changed" and \
            {"name", "runtime", "builds"} & set(stack.meta):
        pinned = {"name": lock.stack.title, "runtime": lock.stack.runtime, "builds": lock.stack.builds}
        try:
            table = side_toml(head.files[stack.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            table = pinned
        # the title, and the runtime and builds texts where the lock pins them (session 27; None: a lock before)
        out += [f"stack.{lock.stack.name}.{'title' if key == 'name' else key}" for key, was in pinned.items()
                if was is not None and table.get(key) != was]
    for kind, f in (records or {}).items():
        pin = lock.routing if kind == "routing" else lock.draft
        if f is None or pin is None or f.status != "changed" or not {"name", "note"} & set(f.meta):
            continue
        try:
            document = side_toml(head.files[f.path], f.kind)
            table = document.get("routing" if kind == "routing" else "method", {})
            title, note = str(table.get("name", f.name)), table.get("note")
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        out += [f"{kind}.{key}" for key, was, now in (("title", pin.title, title), ("note", pin.note, note))
                if was != now]
    return out


def _routing_unmoved(impact: LockImpact) -> str:
    """Why a changed routing fact a lock pins leaves its price where it was, when that is why: the price routes one
    token-row a pass, which reads exactly its k experts a layer whatever the skew (D(1) = k, docs/DESIGN.md
    Routing), ``" (1 token-row a pass reads its 8 experts a layer whatever the routing)"``; else ``""``. Raises
    nothing."""
    routed = (impact.after.price or {}).get("routing")
    if not any(p.startswith("routing.") for p in impact.drifted) or not isinstance(routed, Mapping):
        return ""
    if routed.get("tokens") != 1:
        return ""
    return f" (1 token-row a pass reads its {routed.get('used')} experts a layer whatever the routing)"


def vendors_repinned(head: Side, lock: Lock) -> list[str]:
    """``stack.S.card_vendor`` and ``stack.S.fitted_vendors`` when ``lock`` (as HEAD has it, made under stack ``S``)
    pins them and HEAD's cards give others (:func:`passprice.reproduce.pinned_vendors_today`: the priced card's
    ``[card] vendor``, the vendors of the cards the stack was fitted on); none when it pins none (a lock written
    before slip 48) or HEAD's stack or runs do not read (named elsewhere). Slip 48: the MI300X's vendor rewritten AMD
    → NVIDIA silenced a lock's warning that the stack's kernels never ran on such a card, and the review read "no lock
    affected". Raises nothing."""
    from passprice.reproduce import pinned_vendors_today
    from passprice.stacks import load_stack

    if lock.stack is None or lock.stack.fitted_vendors is None:
        return []
    try:
        stack = load_stack(head.root, lock.stack.name)
    except InputError:
        return []
    today = pinned_vendors_today(head.root, lock, stack)
    if today is None:
        return []
    pinned = (("card_vendor", lock.stack.card_vendor, today[0]),
              ("fitted_vendors", lock.stack.fitted_vendors, today[1]))
    return [f"stack.{lock.stack.name}.{key}" for key, was, now in pinned if was != now]


def header_repinned(lock: Lock, entry: FileChange | None, content: str | None) -> list[str]:
    """``["checkpoint.sha256"]`` when ``lock`` (as HEAD has it) pins its checkpoint's content, HEAD prices that
    content (``content``, HEAD's digest of it) and the checkpoint ``entry`` the change rewrites states another header
    sha256 than the lock pins; else empty. ``check --frozen`` fails on it until the lock is re-pinned
    (:func:`passprice.reproduce.relabelled`), yet the review read "no lock affected" beside the rewritten digest it
    asked (slip round 43: ``qwen3-30b-a3b-q4_k_m``'s header.sha256 4918… → 0918…, lock ``qwen3-30b-a3b-h200`` pinning
    4918… read unaffected). Raises nothing."""
    if entry is None or lock.checkpoint_pin.content is None or content != lock.checkpoint_pin.content:
        return []
    claims = entry.claims[1]
    stated = claims.get("header.sha256") if claims is not None else None
    return ["checkpoint.sha256"] if stated is not None and stated != lock.checkpoint_sha256 else []


def origin_repinned(lock: Lock, entry: FileChange | None, content: str | None) -> list[str]:
    """``["checkpoint.origin"]`` when ``lock`` (as HEAD has it) pins its checkpoint entry's ``origin`` (session 27;
    a lock written before pins none), HEAD prices the content it pins (``content``, HEAD's digest of it: another
    content is reviewed as such, as :func:`header_repinned` has it) and the entry ``entry`` the change rewrites states
    another origin on HEAD; else empty.
    ``check --frozen`` fails on it until the lock is re-pinned (:func:`passprice.reproduce.relabelled`): slip round
    45, an origin rewritten to "(fine-tuned)" under three locks was asked as a claim, no lock pinning it. Raises
    nothing."""
    return entry_label_repinned(lock, entry, content, "origin")


def entry_label_repinned(lock: Lock, entry: FileChange | None, content: str | None, key: str) -> list[str]:
    """``["checkpoint.KEY"]`` when ``lock`` (as HEAD has it) pins its checkpoint entry's ``[entry]`` ``key``
    (``origin``: session 27; ``source``, the header file ``audit`` cites: slip round 46; a lock written before pins
    none), HEAD prices the content it pins and the entry ``entry`` the change rewrites states another value on
    HEAD; else empty (:func:`origin_repinned`). Raises nothing."""
    pinned = {"origin": lock.checkpoint_origin, "source": lock.checkpoint_source}[key]
    if entry is None or pinned is None or entry.status != "changed" \
            or f"entry.{key}" not in entry.meta or content != lock.checkpoint_pin.content:
        return []
    claims = entry.claims[1]
    stated = claims.get(f"entry.{key}", "") if claims is not None else None
    return [f"checkpoint.{key}"] if stated is not None and stated != pinned else []


#: The keys of a stack file's ``[stack]`` table that say where its matrix kernels run (its route), which a lock made
#: under it pins (``stack.S.integer_matrices`` among ``reproduce``'s serving differences).
_STACK_ROUTES = ("integer_matrices", "float_matrices")


def stack_route_changes(base: Side, head: Side, name: str) -> tuple[tuple[str, Any, Any], ...]:
    """Each key of :data:`_STACK_ROUTES` whose value the stack file ``facts/stacks/NAME.toml`` holds otherwise on
    HEAD than on BASE, ``(key, BASE's, HEAD's)``; nothing when either side lacks the file or it does not parse as
    TOML (the review's errors say so). Raises nothing."""
    rel = f"facts/stacks/{name}.toml"
    try:
        before = side_toml(base.files[rel], "stack").get("stack", {})
        after = side_toml(head.files[rel], "stack").get("stack", {})
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return ()
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ()
    return tuple((key, before.get(key), after.get(key)) for key in _STACK_ROUTES if before.get(key) != after.get(key))

def _moved_again(lock: Any) -> str | None:
    """For a lock whose file the change left as it was, whose recorded price BASE's price already was not (out of
    date on BASE) and which the change moved again: what the change moved and what was out of date before it,
    ``scale_s moved by this change, tokens/s did not; memory_s out of date already on BASE`` (``memory_s moved by
    this change, and out of date already on BASE`` when they are one figure); ``None`` otherwise.

    Walkthrough 17: a commit that only lowered the H200's ``scale`` (a term r1-qwen7b-h200 does not bind on) read
    ``price moved, lock not updated (memory_s)`` at ``994.3 → 994.3 (+0 %)``: the change moved ``scale_s``, and the
    ``memory_s`` named was an earlier commit's move, so the row blamed this change for what it did not do."""
    if lock.status != "unchanged" or lock.moved is None or lock.before.price is None or lock.after.price is None:
        return None
    behind = _figures_differ(lock.recorded_before, lock.before.price)
    if behind is None:
        return None
    before, after = lock.before.price.get("tokens_per_s"), lock.after.price.get("tokens_per_s")
    tokens = ", tokens/s did not" if lock.moved != "tokens_per_s" and before == after else ""
    if behind == lock.moved:
        return f"{lock.moved} moved by this change{tokens}, and out of date already on BASE"
    return f"{lock.moved} moved by this change{tokens}; {behind} out of date already on BASE"


#: What a recorded figure of a price's ``--json`` holds, in words, for a review's row naming it (a new user read
#: "price moved, lock not updated (weight_bytes)" without knowing what weight_bytes was): the byte, multiply-add
#: and cycle counts; a term's seconds (``memory_s``) and ``tokens_per_s`` are ``explain``'s terms.
_FIGURE_WORDS = {
    "weight_bytes": "the weights' bytes a pass reads",
    "sequence_bytes": "each sequence's bytes a pass reads",
    "rewrite_bytes": "the bytes a pass rewrites in place",
    "held_bytes": "the bytes held in card memory",
    "capacity_bytes": "the card memory's bytes",
    "host_held_bytes": "the bytes held in host memory",
    "host_capacity_bytes": "the host memory's bytes",
    "on_chip_bytes": "the on-chip bytes a pass needs",
    "array_macs": "the matrix units' multiply-adds a pass",
    "vector_macs": "the vector units' multiply-adds a pass",
    "scale_cycles": "the block-scale cycles a pass",
}


def _figure_named(field: str) -> str:
    """``field`` (a price's recorded figure, ``expected.`` before a stack's) with what it holds in words where
    :data:`_FIGURE_WORDS` has them: ``weight_bytes, the weights' bytes a pass reads``. Raises nothing."""
    words = _FIGURE_WORDS.get(field.removeprefix("expected."))
    return f"{field}, {words}" if words else field


def _stale_figure(lock: Any) -> str | None:
    """When the figure a lock's stale price moved first is not its tokens/s and the tokens/s did not move: that
    figure as recorded → HEAD's, and that the tokens/s did not (walkthrough 9: a capacity change read "+0 %" and
    ❌ price moved, with nothing saying that ``capacity_bytes`` was what moved); when it is the batch (a best lock's
    best batch moved), ``batch 580 → 618`` whether or not the tokens/s moved too; ``None`` otherwise."""
    field, recorded, today = lock.stale, lock.recorded, lock.after.price
    if field is None or recorded is None or today is None:
        return None
    if field.startswith("expected."):
        field = field.removeprefix("expected.")
        recorded, today = recorded.get("expected"), today.get("expected")
        if not isinstance(recorded, Mapping) or not isinstance(today, Mapping):
            return None
    was, now = recorded.get(field), today.get(field)
    if field == "batch" and isinstance(was, int) and isinstance(now, int) and was != now:
        # a best lock whose best batch moved read "(batch)" alone, from what to what unsaid (walkthrough 30)
        return f"batch {was:,} → {now:,}"
    if field == "tokens_per_s" or recorded.get("tokens_per_s") != today.get("tokens_per_s"):
        return None
    if not isinstance(was, int | float) or not isinstance(now, int | float) or isinstance(was, bool):
        return f"{lock.stale} {was} → {now}; tokens/s did not move"
    units = {"_bytes": "B", "_s": "s", "_macs": "MAC", "_cycles": "cycle"}
    unit = next((u for end, u in units.items() if field.endswith(end)), "")
    shown = si_pair(float(was), float(now), unit) if unit else (f"{was:,.6g}", f"{now:,.6g}")
    rel = f" ({_pct(now / was - 1.0)})" if was else ""
    return f"{lock.stale} {shown[0]} → {shown[1]}{rel}; tokens/s did not move"


def _derivation_cites(derivation: Derivation, own: str | None) -> dict[str, Any]:
    """A derived fact's derivation as a lock's ``cites`` entry gives it in ``--json``: ``{"formula", "inputs"}``,
    each input ``{"name", "value", "unit", "fact", "source", "locator", "constant"}`` (``value`` and ``unit`` as
    written; a figure's ``source`` the fact's own, ``own``, where it names none; ``null`` where it does not apply),
    in the order the formula names them."""
    return {"formula": derivation.formula, "inputs": [
        {"name": i.name, "value": i.amount, "unit": i.unit, "fact": i.fact,
         "source": (i.source or own) if i.kind == "figure" else None, "locator": i.locator, "constant": i.constant}
        for i in derivation.in_formula_order()]}


def _rerouted(before: PriceSide, after: PriceSide) -> tuple[str, str] | None:
    """``(BASE's routing record, HEAD's)`` of the serving each side priced (its completed ``spec``'s ``routing``),
    when both name one and they differ; else ``None``. Raises nothing."""
    was, now = (side.spec.get("routing") if side.spec is not None else None for side in (before, after))
    if isinstance(was, str) and isinstance(now, str) and was != now:
        return was, now
    return None


def _record_changes(base: Side, head: Side, was: str, now: str) -> tuple[FactChange, ...]:
    """The fact changes (lock paths ``routing.*``) from BASE's routing record ``was`` to HEAD's record ``now``
    (:func:`passprice.review.changes.fact_changes`): what a serving re-pointed from one record to the other changes
    under its price. A record is a registry name (``facts/routing/NAME.toml`` of its side) or a ``.toml`` path, found as
    the side's pricing finds it (:func:`passprice.routing.routing_path`; walk53: a serving re-pointed between two
    records named by path read ``routing record A → B`` with no fact compared). Empty when either record is missing or
    does not read on its side (the side's price says why). Raises nothing."""
    old_rel, new_rel = _record_file(base, was), _record_file(head, now)
    if old_rel is None or new_rel is None:
        return ()
    old, new = _read(base, old_rel, "routing", was), _read(head, new_rel, "routing", now)
    if old.facts is None or new.facts is None:
        return ()
    return fact_changes(old.facts, new.facts, "routing.")


def _record_file(side: Side, ref: str) -> str | None:
    """The file of ``side``'s routing record ``ref``: ``facts/routing/REF.toml`` when the side holds it, else for a
    ``.toml`` path the file the side's pricing reads (:func:`passprice.routing.routing_path`, an absolute path or
    one relative to the side's root: ``side.root.path / rel`` is the file either way); ``None`` when there is none
    (or it cannot be found: an error there is the side's price's to say). Raises nothing."""
    rel = f"facts/routing/{ref}.toml"
    if rel in side.files:
        return rel
    if not ref.endswith(".toml"):
        return None
    from passprice.routing import routing_path

    try:
        found = routing_path(side.root, ref)
    except (InputError, OSError, ValueError):
        return None
    try:
        return found.relative_to(side.root.path).as_posix()
    except ValueError:
        return str(found.absolute())


def _lock_cite(path: str, old: Fact | None, new: Fact | None) -> Cite | None:
    """A lock's ``cites`` entry for its changed fact ``path`` (:attr:`LockImpact.cites`): ``None`` unless the change
    rewrote its citation or its (formula) derivation, or moved its quantity (its value, in base units) under the
    citation it kept (walkthrough 46's ``routing.hot_share`` 0.9 → 0.85, the same source and locator: the number a
    reviewer checks against that source had no entry). Its derivation is HEAD's formula derivation when the change
    changed it or moved the value of the fact it derives (left46: that value is checked against its inputs'
    citations, not its own), else ``None``."""
    from passprice.reproduce import exact_quantity

    if old is None or new is None:
        return None
    recited = (old.source, old.locator) != (new.source, new.locator)
    moved = old.value != new.value or exact_quantity(old) != exact_quantity(new)
    # left46: a fact derived by a formula whose value moved under the derivation it kept is cited by its derivation
    # too (its inputs' citations), as a recomputed one is: "value changed, citation unchanged" sent the reviewer to
    # look for a figure (a stream share, 0.9162) that no source states
    derivation = new.derivation if isinstance(new.derivation, Derivation) and (
        old.derivation != new.derivation or moved) else None
    if not recited and derivation is None and not moved:
        return None
    return (path, new.source, new.locator, recited, derivation, moved,
            _inputs_give(path, new) if derivation is not None and moved else None,
            # the figures its cut locator keeps whole: the new value (a citation rewritten must state it) and the old
            tuple(dict.fromkeys(f for f in (new.amount, old.amount) if derivation is None)))


def _inputs_give(path: str, fact: Fact) -> str | None:
    """What ``fact``'s formula derivation gives from the inputs it records, as written in the fact's unit
    (``0.9333``, ``624 TMAC/s``), when its value does not follow from them (a value edited by hand under the
    derivation it kept: ``check``'s ``mismatch``, :func:`passprice.derivations.recheck`); else ``None`` (it follows,
    or its derivation cannot be evaluated: the file's ``does not follow`` line says why). Left47: the H200's
    ``streams.read`` edited 0.9333 → 0.9162 under ``dot / bandwidth`` over 4.48 and 4.8 TB/s was cited on a lock's
    row by its formula and inputs alone, as if 0.9162 were what they give. Raises nothing."""
    from types import SimpleNamespace

    from passprice.derivations import recheck

    derivation = fact.derivation
    if not isinstance(derivation, Derivation):
        return None
    # each fact input as the derivation records it: only the recorded inputs are compared (a stale input is the
    # file's "does not follow" line's to say)
    recorded = {i.fact: SimpleNamespace(amount=i.amount, unit=i.unit, value=None, derivation=None)
                for i in derivation.inputs if i.fact is not None}
    found = recheck(path, fact, recorded)
    if found is None or found.kind != "mismatch" or found.expected is None:
        return None
    return found.expected if fact.unit == "1" else f"{found.expected} {fact.unit}"

