"""A fact change moves every price resting on the fact, locked or not: a pull-request review re-prices each registered
serving that no lock names, on both sides, and shows those whose price (or refusal) moves, marked as not locked.
They are informational: nothing pins them, so they cannot fail the review; locking one (``passprice lock``) puts it
under review.

A serving is *unlocked* when no lock of either side names it (a lock's ``serving``, whatever its kind or stack). It
is re-priced as ``passprice price SERVING`` prices it (the seed's limit at its own batch, no stack), on each side
with that side's inputs and code (:func:`passprice.sidecode.price_locks`, as a lock is), and only when the change
reaches it: its serving file changed, a card, drafting method, routing record or checkpoint entry it names changed,
or the pricing model did. A serving registered on one side only is listed with the servings changed, not here.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import attrs

from passprice.schema import kind_cap, toml_loads
from passprice.tables import markdown_code, markdown_prose, markdown_table, markdown_text, si

if TYPE_CHECKING:
    from passprice.review import FileChange, LockImpact, PriceSide, Side

#: Where a root keeps its registered servings (relative to the root, POSIX).
SERVINGS = "registry/servings"
#: The most unlocked servings a review re-prices (each on both sides): a pull request reaching more (a card shared by
#: thousands of registered servings) names how many it left out, so no review runs past its time bound for them.
MAX_REPRICED = 200
#: The keys of a serving file that name another file a price reads, with the kind of that file
#: (:func:`passprice.review.sides.file_kind`).
NAMED = (("card", "card"), ("checkpoint", "checkpoint"), ("routing", "routing"))


@attrs.frozen
class ServingMove:
    """A registered serving no lock names, re-priced on both sides: its ``name``, ``card`` (the card file's name),
    the price ``before`` (BASE's inputs and code) and ``after`` (HEAD's), the changed facts its price rests on
    (``changed``, lock paths such as ``streams.rewrite``) and which of its inputs differ (``inputs``: ``facts``,
    ``serving``, ``checkpoint entry``, ``pricing model``)."""

    name: str
    card: str
    before: PriceSide
    after: PriceSide
    changed: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    #: HEAD's derived facts its HEAD price rests on that do not follow from their inputs (lock paths): that price
    #: rests on figures nobody computed (the review fails on them already, as ``check`` does).
    unsound: tuple[str, ...] = ()
    #: For a serving resting on :attr:`unsound` facts: HEAD priced again with them recomputed
    #: (:func:`passprice.review.impacts.recomputed_prices`), the move once they follow; ``None`` otherwise.
    recomputed: PriceSide | None = None

    @property
    def recomputed_relative(self) -> float | None:
        """The relative change of tokens/s from BASE's price to :attr:`recomputed`'s; ``None`` unless both priced."""
        b = self.before.tokens_per_s
        a = self.recomputed.tokens_per_s if self.recomputed is not None else None
        if b is None or a is None or b == 0:
            return None
        return a / b - 1.0

    def recomputed_line(self) -> str | None:
        """``tokens/s 9,603.7 → 9,604.2 (+0.005 %), as HEAD wrote it +1.875 %, once streams.read, streams.append
        follow from their inputs (recomputed as passprice would write them)``, or why it was not priced so; ``None``
        without :attr:`recomputed`."""
        from passprice.review.changes import _pct

        side = self.recomputed
        if side is None:
            return None
        facts = ", ".join(self.unsound)
        if side.price is None:
            refused = f"refused: {side.refusal.get('refusal')}" if side.refusal is not None else "not priced"
            why = side.error or refused
            return f"not priced with {facts} recomputed: {why}"
        rel = f" ({_pct(self.recomputed_relative)})" if self.recomputed_relative is not None else ""
        written = f", as HEAD wrote it {_pct(self.relative)}" if self.relative is not None else ""
        return (f"tokens/s {self.before.short()} → {side.short()}{rel}{written}, once {facts} follow from their "
                "inputs (recomputed as passprice would write them)")

    @property
    def moved(self) -> str | None:
        """How the price moved: the first figure of :data:`passprice.locks.FIGURES` the sides price differently
        (``memory_s``), ``refused on HEAD``, ``priced on HEAD``, ``refusal changed``, ``not priced on HEAD``; ``None``
        when both sides give the same."""
        from passprice.review.impacts import _figures_differ

        b, a = self.before, self.after
        if b.price is not None and a.price is not None:
            return _figures_differ(b.price, a.price)
        if b.price is not None:
            return "refused on HEAD" if a.refusal is not None else "not priced on HEAD"
        if a.price is not None:
            return "priced on HEAD"
        if b.refusal is not None and a.refusal is not None:
            return None if dict(b.refusal) == dict(a.refusal) else "refusal changed"
        return None if (b.refusal, b.error) == (a.refusal, a.error) else "not priced on HEAD"

    def moved_figure(self) -> str | None:
        """The figure :attr:`moved` names, BASE → HEAD, when both sides priced and it is not tokens/s or the pass
        time (shown on their own lines, as is a term that is the pass time on both sides): ``memory_s
        0.0010039186836974126 → 0.0010039186836974128 (+1.99e-14 %)``, each value as the price's ``--json`` holds it,
        so a move too small for tokens/s to show is seen (walkthrough 106: "memory_s moved" beside tokens/s +0 %
        showed no memory_s); a count of bytes moved in its first five digits in GB (``weight_bytes 13.774 GB → 14.558
        GB (+5.69 %)``); ``None`` otherwise."""
        from passprice.review.changes import _pct

        figure = self.moved
        b, a = self.before.price, self.after.price
        if figure is None or " " in figure or b is None or a is None or figure in ("tokens_per_s", "pass_s"):
            return None
        was, now = b.get(figure), a.get(figure)
        if (was, now) == (b.get("pass_s"), a.get("pass_s")):
            return None  # the binding term: the pass line shows it
        rel = ""
        if isinstance(was, (int, float)) and isinstance(now, (int, float)) and was:
            rel = f" ({_pct(now / was - 1.0)})"
            if figure.endswith("_bytes") and f"{was / 1e9:.5g}" != f"{now / 1e9:.5g}":
                # a count of bytes read as one (walkthrough 56: `weight_bytes 13774102215.410221 → 14557820484.09435`
                # beside lines saying 18.09 GB); a move too small for five digits keeps the figures as --json holds them
                return f"{figure} {was / 1e9:.5g} GB → {now / 1e9:.5g} GB{rel}"
        return f"{figure} {was!r} → {now!r}{rel}"

    @property
    def price_moved(self) -> bool:
        """Whether the price itself moved: False when both sides priced the same tokens/s at the same batch (a term
        of it moved alone: ``memory_s`` under an array-bound pass), True otherwise (a refusal or error on either
        side included). Walkthrough 117: the text listed ``21,584.2 → 21,584.2 (+0 %)`` under "servings no lock
        pins whose price moves" and the summary counted it as moving, where the markdown said "+0 % (memory_s
        moved)"."""
        b, a = self.before.price, self.after.price
        if b is None or a is None:
            return True
        return (b.get("tokens_per_s"), b.get("batch")) != (a.get("tokens_per_s"), a.get("batch"))

    def how(self) -> str:
        """:attr:`moved` in words: ``memory_s moved`` for a figure, else as it is (``refused on HEAD``)."""
        moved = self.moved or "nothing moved"
        return f"{moved} moved" if " " not in moved else moved

    @property
    def relative(self) -> float | None:
        """The relative change of tokens/s, after / before − 1; ``None`` unless both sides priced."""
        b, a = self.before.tokens_per_s, self.after.tokens_per_s
        if b is None or a is None or b == 0:
            return None
        return a / b - 1.0

    @property
    def lock_words(self) -> list[str] | None:
        """The command that locks the serving, so a later review judges it: ``passprice lock NAME -o
        locks/NAME.lock.toml``, word by word; ``None`` when HEAD does not price it (a lock of a refused price is
        refused: walkthrough 11 pasted the advice under a ``NotResident`` row and got exit 1)."""
        if self.after.price is None:
            return None
        return ["passprice", "lock", self.name, "-o", f"locks/{self.name}.lock.toml"]

    @property
    def lock_command(self) -> str:
        """:attr:`lock_words` as a markdown code span to paste (:func:`passprice.enforce.command_span`), or what
        stands in its place when HEAD does not price the serving."""
        from passprice.enforce import command_span

        words = self.lock_words
        return command_span(words) if words is not None else "– (HEAD does not price it: no price to lock)"

    def binds(self) -> str:
        """What binds the pass on each side: ``memory``, or ``memory → compute``; ``–`` for a side without a price."""
        b = self.before.price["binds"] if self.before.price is not None else "–"
        a = self.after.price["binds"] if self.after.price is not None else "–"
        return str(a) if a == b else f"{b} → {a}"

    def seconds(self) -> str:
        """The pass time on each side: ``10.92 ms → 11.19 ms``."""
        return " → ".join(
            si(float(s.price["pass_s"]), "s") if s.price is not None else "–" for s in (self.before, self.after)
        )

    def what_changed(self) -> str:
        """The changed facts it rests on, then its other changed inputs, comma-separated (``–`` for none)."""
        return ", ".join([*self.changed, *(i for i in self.inputs if i != "facts")]) or "–"

    def to_json(self) -> dict[str, Any]:
        """The serving for ``--format json``: ``serving``, ``card``, ``locked`` (always false), ``moved``,
        ``changed``, ``inputs``, ``before``, ``after`` (price objects, refusals or errors), ``relative_change``
        (after / before − 1 of tokens/s) and ``lock_command``."""
        return {
            "serving": self.name,
            "card": self.card,
            "locked": False,
            "moved": self.moved,
            "changed": list(self.changed),
            "inputs": list(self.inputs),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "relative_change": self.relative,
            "unsound": list(self.unsound),
            "recomputed": self.recomputed.to_json() if self.recomputed is not None else None,
            "recomputed_relative_change": self.recomputed_relative,
            "lock_command": shlex.join(self.lock_words) if self.lock_words is not None else None,
        }


def _names(side: Side) -> set[str]:
    """The registered servings of ``side``: the entry names of its ``registry/servings/*.toml`` files."""
    out = set()
    for rel in side.files:
        p = PurePosixPath(rel)
        if str(p.parent) == SERVINGS and p.suffix == ".toml":
            out.add(p.stem)
    return out


#: Each kind of file a serving names, and the folder of its entries (relative to a side's root, POSIX).
_FOLDERS = {"card": "facts/cards", "checkpoint": "registry/checkpoints", "routing": "facts/routing",
            "draft": "facts/drafts"}


def named_entry(kind: str, ref: str) -> tuple[str, str]:
    """The registry file of ``kind`` that ``ref``, a name a serving file gives, reads, as ``(kind, entry name)``: a
    name is its entry's, and so is a name with a folder in it that stays in the kind's folder (``./h200``,
    ``../cards/h200``) or a path that is the entry's own file from the root (``facts/cards/h200.toml``, ``./facts/…``);
    any other path names a file of its own, kept as ``(kind, ref)``, the entry of no file. The file's name less
    ``.toml`` was taken for the entry's, so ``/elsewhere/h200.toml`` (another folder's file of another card) was
    the registry's ``h200``, re-priced as reached by its change. Raises nothing."""
    import posixpath

    if "/" not in ref and "\\" not in ref and not ref.endswith(".toml"):
        return kind, ref
    folder = _FOLDERS[kind]
    if not ref.endswith(".toml") and not ref.startswith("/"):
        joined = posixpath.normpath(posixpath.join(folder, f"{ref}.toml"))
        if posixpath.dirname(joined) == folder:
            return kind, posixpath.basename(joined).removesuffix(".toml")
    plain = posixpath.normpath(ref)
    if not ref.startswith("/") and posixpath.dirname(plain) == folder and plain.endswith(".toml"):
        return kind, posixpath.basename(plain).removesuffix(".toml")
    return kind, ref


def named_files(data: bytes) -> set[tuple[str, str]]:
    """The files a serving file names, as ``(kind, entry name)``: its ``card``, ``checkpoint``, ``routing`` and
    ``draft.method``, each the entry :func:`named_entry` finds (a path of another file is kept as given, naming no
    entry). A file that does not parse names nothing (the review reports it where it reads the file)."""
    if len(data) > kind_cap("serving"):  # not parsed (issue 13): the review's read of the file refuses it
        return set()
    try:
        doc = toml_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    refs = [(kind, doc.get(key)) for key, kind in NAMED]
    draft = doc.get("draft")
    if isinstance(draft, dict):
        refs.append(("draft", draft.get("method")))
    return {named_entry(kind, ref) for kind, ref in refs if isinstance(ref, str)}


def unlocked_moves(
    base: Side, head: Side, files: Iterable[FileChange], reviews: Iterable[LockImpact], most: int | None = None
) -> tuple[tuple[ServingMove, ...], int]:
    """Every serving registered on both sides that no lock of either side names (``reviews``: every lock
    reviewed), re-priced on both sides when the change reaches it (its serving file, a file it names among
    ``files``, or the pricing model changed), kept when its price or refusal moved; by name. Returns them, and how
    many servings the change reaches past the first ``most`` (by name; :data:`MAX_REPRICED` by default), which are
    not re-priced."""
    from passprice.review import PriceSide
    from passprice.sidecode import price_locks

    files = tuple(files)
    locked = {lock.serving_name for lock in reviews}
    by_file = {(f.kind, f.name): f for f in files}
    paths = {f.path for f in files}
    model = base.code.model != head.code.model
    reach: dict[str, list[FileChange]] = {}
    for name in sorted((_names(base) & _names(head)) - locked):
        rel = f"{SERVINGS}/{name}.toml"
        named = named_files(base.files[rel]) | named_files(head.files[rel])
        touched = [by_file[k] for k in sorted(named) if k in by_file]
        if model or rel in paths or touched:
            reach[name] = touched
    most = MAX_REPRICED if most is None else most
    left_out = max(0, len(reach) - most)
    reach = dict(list(reach.items())[:most])
    if not reach:
        return (), left_out
    requests = [{"key": name, "kind": "price", "serving": name, "spec": None} for name in reach]
    before = price_locks(base.root, base.code, requests)
    after = price_locks(head.root, head.code, requests)
    out = []
    for name, touched in reach.items():
        b = PriceSide.of(before.get(name, {"error": "not priced on BASE"}))
        a = PriceSide.of(after.get(name, {"error": "not priced on HEAD"}))
        rests = {*b.rests_on(), *a.rests_on()}
        changed = [c.lock_path for f in touched if f.holds_facts for c in f.facts if c.lock_path in rests]
        inputs = ["facts"] if changed else []
        if f"{SERVINGS}/{name}.toml" in paths:
            inputs.append("serving")
        if any(f.kind == "checkpoint" for f in touched):
            inputs.append("checkpoint entry")
        if model:
            inputs.append("pricing model")
        card = _card(a) or _card(b) or "?"
        after_rests = set(a.rests_on())
        unsound = [f.lock_path(x.path) for f in touched for x in f.findings if f.lock_path(x.path) in after_rests]
        move = ServingMove(name, card, b, a, tuple(dict.fromkeys(changed)), tuple(inputs),
                           tuple(dict.fromkeys(unsound)))
        if move.moved is not None:
            out.append(move)
    due = {m.name for m in out if m.unsound}
    if due:  # priced again with the derived facts recomputed, as the locks resting on them are
        from passprice.review import recomputed_prices

        sides = recomputed_prices(head, files, [r for r in requests if r["key"] in due], {})
        out = [attrs.evolve(m, recomputed=sides[m.name]) if m.name in sides else m for m in out]
    return tuple(out), left_out


def _card(side: PriceSide) -> str | None:
    """The card a side priced on (its serving document's ``card``, as a name: :func:`named_entry`; a path of
    another file as given)."""
    card = side.spec.get("card") if side.spec is not None else None
    return named_entry("card", card)[1] if isinstance(card, str) else None


#: What the review says of the unlocked servings, once, above them.
NOTE = "informational: nothing pins them, so they cannot fail the review; lock one to have reviews judge it"


def left_out_line(left_out: int) -> str:
    """``12 more servings no lock pins are reached by the change and were not re-priced (a review re-prices at most
    200)``."""
    return (f"{left_out:,} more serving{'s' if left_out != 1 else ''} no lock pins "
            f"{'are' if left_out != 1 else 'is'} reached by the change and "
            f"{'were' if left_out != 1 else 'was'} not re-priced (a review re-prices at most {MAX_REPRICED:,})")


def moves_heading(moves: Iterable[ServingMove]) -> str:
    """What moved of ``moves``, after "servings no lock pins": ``whose price moves`` when every price moved,
    ``whose price does not move, a term of it does`` when none did (:attr:`ServingMove.price_moved`), ``whose price
    (or only a term of it) moves`` for both."""
    moved = [m.price_moved for m in moves]
    if all(moved):
        return "whose price moves"
    if not any(moved):
        return "whose price does not move, a term of it does"
    return "whose price (or only a term of it) moves"


def _prices_said(moves: tuple[ServingMove, ...]) -> str:
    """The markdown note's words for what moved: ``their prices move``, ``their prices do not move, a term of each
    does``, or ``their prices (or only a term of one) move`` (:func:`moves_heading`)."""
    moved = [m.price_moved for m in moves]
    if all(moved):
        return "their prices move"
    if not any(moved):
        return "their prices do not move, a term of each does"
    return "their prices (or only a term of one) move"


def moves_summary(moves: Iterable[ServingMove], left_out: int = 0) -> str:
    """The review summary's part for ``moves``: ``2 servings no lock pins move``; ``1 serving no lock pins moves only
    a term of its price (memory_s), not the price``; or ``1 serving no lock pins moves, 1 more only a term of its
    price (memory_s)``; then the ``left_out`` not re-priced and ``(not locked, informational)``. A serving whose
    price did not move (:attr:`ServingMove.price_moved`) is not counted as moving; the term that moved is named."""
    moves = tuple(moves)
    priced = len([m for m in moves if m.price_moved])
    terms = [m for m in moves if not m.price_moved]
    what = ", ".join(dict.fromkeys(m.moved or "a term" for m in terms))
    its = "its" if len(terms) == 1 else "their"
    if not terms:
        said = f"{priced:,} serving{'s' if priced != 1 else ''} no lock pins {'moves' if priced == 1 else 'move'}"
    elif not priced:
        n = len(terms)
        said = (f"{n:,} serving{'s' if n != 1 else ''} no lock pins {'moves' if n == 1 else 'move'} only a term of "
                f"{its} price ({what}), not the price")
    else:
        said = (f"{priced:,} serving{'s' if priced != 1 else ''} no lock pins {'moves' if priced == 1 else 'move'}, "
                f"{len(terms):,} more only a term of {its} price ({what})")
    more = f", {left_out:,} more not re-priced" if left_out else ""
    return f"{said}{more} (not locked, informational)"


def text_lines(moves: Iterable[ServingMove], left_out: int = 0) -> list[str]:
    """The unlocked servings for ``diff``'s text: a heading with :data:`NOTE`, then each serving's changed inputs,
    tokens/s before → after (with the relative change), pass time, bind, and the command that locks it; and how
    many the review left out (:data:`MAX_REPRICED`)."""
    from passprice.review.changes import _pct

    moves = tuple(moves)
    if not moves:
        return ["", left_out_line(left_out)] if left_out else []
    lines = ["", f"servings no lock pins {moves_heading(moves)} ({NOTE})"]
    for m in moves:
        rel = f"  ({_pct(m.relative)})" if m.relative is not None else ""
        if m.relative is not None and not m.price_moved:
            rel = f"  ({_pct(m.relative)}: {m.how()}, the price did not)"
        lines.append(f"  {m.name} (card {m.card}): NOT LOCKED, {m.how()}")
        lines.append(f"    changed   {m.what_changed()}")
        if m.unsound:
            rel += f"  HEAD's price rests on {', '.join(m.unsound)}, which do not follow: not a price to publish"
        lines.append(f"    tokens/s  {m.before.short()} → {m.after.short()}{rel}")
        figure = m.moved_figure()
        if figure is not None:
            lines.append(f"    moved     {figure}")
        recomputed = m.recomputed_line()
        if recomputed is not None:
            lines.append(f"    recomputed  {recomputed}")
        lines.append(f"    pass      {m.seconds()}")
        lines.append(f"    binds     {m.binds()}")
        for label, side in (("BASE", m.before), ("HEAD", m.after)):
            if side.refusal is not None:
                lines.append(f"    {label} refuses: {side.refusal.get('message', side.refusal.get('refusal'))}")
            if side.error is not None:
                lines.append(f"    {label} cannot price: {side.error}")
        lines.append(f"    lock it   {m.lock_command}")
    if left_out:
        lines.append(f"  {left_out_line(left_out)}")
    return lines


def markdown_lines(moves: Iterable[ServingMove], left_out: int = 0) -> list[str]:
    """The unlocked servings for the pull-request comment: a section saying they cannot fail it, a table (serving,
    changed, tokens/s BASE and HEAD, change, binds, lock it), each side's refusal below it, and how many the review
    left out."""
    from passprice.review.changes import _pct

    moves = tuple(moves)
    if not moves:
        return ["", f"ℹ️ {left_out_line(left_out)}."] if left_out else []
    rows = [
        [
            f"{markdown_code(m.name)} (not locked)",
            ", ".join(markdown_code(p) for p in m.what_changed().split(", ") if p != "–") or "–",
            m.before.short(),
            f"⚠️ {m.after.short()} (on stale facts)" if m.unsound else m.after.short(),
            (_pct(m.relative) + ("" if m.after.tokens_per_s != m.before.tokens_per_s else f" ({m.how()})"))
            if m.relative is not None else markdown_text(m.how()),
            m.binds(),
            m.lock_command,
        ]
        for m in moves
    ]
    out = [
        "",
        "#### Servings no lock pins",
        "",
        f"ℹ️ These registered servings are not locked: {_prices_said(moves)}, but nothing pins them, so they cannot "
        "fail this review (informational). Lock one (the command in the last column) to have reviews judge it.",
        "",
        markdown_table(
            ["serving", "changed", "tokens/s BASE", "tokens/s HEAD", "change", "binds", "lock it"], rows,
            right=(2, 3, 4),
        ),
    ]
    notes = []
    for m in moves:
        recomputed = m.recomputed_line()
        if recomputed is not None:
            notes.append(f"- {markdown_code(m.name)}: recomputed {markdown_prose(recomputed)}")
        for label, side in (("BASE", m.before), ("HEAD", m.after)):
            if side.refusal is not None:
                notes.append(f"- {markdown_code(m.name)}: {label} refuses: "
                             f"{markdown_prose(side.refusal.get('message', ''))}")
            if side.error is not None:
                notes.append(f"- {markdown_code(m.name)}: {label} cannot price: {markdown_text(side.error)}")
    if left_out:
        notes.append(f"- ℹ️ {left_out_line(left_out)}")
    return out + (["", *notes] if notes else [])
