"""A serving a change registers is reviewed as what it prices: the card, checkpoint, batch and contexts it names, the
price HEAD gives it (or HEAD's refusal), and the locks of HEAD that lock it, or the command that would.

A pull request adding ``registry/servings/NAME.toml`` was shown as its path alone, counted among "other files", so a
reviewer saw neither what the new serving priced nor its price (slip round 28). Each serving HEAD registers and BASE
does not is priced on HEAD as ``passprice price NAME`` prices it (its own batch, no stack), with HEAD's inputs and
code (:func:`passprice.sidecode.price_locks`, as a lock is), the first :data:`MAX_DESCRIBED` of them by name; the
rest are named and counted, not priced, so no review runs past its time bound for them. It never fails the review:
a serving no lock names pins nothing (a serving file that does not read fails the review where it is read).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import attrs

from passprice.tables import markdown_code, markdown_text

if TYPE_CHECKING:
    from passprice.review import FileChange, LockImpact, PriceSide, Side

#: The most added servings a review prices (on HEAD): a pull request adding more (2,000 generated serving files)
#: names how many it left unpriced.
MAX_DESCRIBED = 200
#: The most contexts of one serving a description lists (a serving may hold many classes); the rest are counted.
MAX_CONTEXTS = 4


@attrs.frozen
class AddedServing:
    """A serving HEAD registers that BASE does not: its ``name`` and file ``path`` (relative to the root), the price
    HEAD gives it (``after``: its ``spec`` the completed serving priced, its price, refusal or error; ``None`` when
    the review left it unpriced, past :data:`MAX_DESCRIBED`) and the names of HEAD's locks that lock it
    (``locks``)."""

    name: str
    path: str
    after: PriceSide | None
    locks: tuple[str, ...] = ()

    def serves(self) -> str:
        """What it prices, from the completed serving HEAD priced: ``card h100_sxm5_80gb, checkpoint
        deepseek-r1-distill-qwen-7b-q4_k_m, batch 1, contexts 1 at position 2,048 of limit 4,096`` (then a drafting
        method, a routing record, host memory, a paged cache, when it has them); ``not read`` without a spec."""
        spec = self.after.spec if self.after is not None else None
        if not isinstance(spec, Mapping):
            return "not read (HEAD does not price it)"
        parts = [f"card {spec.get('card')}", f"checkpoint {spec.get('checkpoint')}"]
        batch = spec.get("batch")
        parts.append(f"batch {batch:,}" if isinstance(batch, int) else f"batch {batch}")
        contexts = spec.get("contexts")
        if isinstance(contexts, list) and contexts:
            shown = [_context(c) for c in contexts[:MAX_CONTEXTS]]
            more = len(contexts) - MAX_CONTEXTS
            parts.append("contexts " + "; ".join(shown) + (f"; and {more:,} more" if more > 0 else ""))
        draft = spec.get("draft")
        if isinstance(draft, Mapping):
            parts.append(f"drafting {draft.get('tokens')} token(s) with {draft.get('method')}")
        if spec.get("routing") is not None:
            parts.append(f"routing {spec.get('routing')}")
        if spec.get("kv_page") is not None:
            parts.append(f"paged KV cache ({spec.get('kv_page')} positions a page)")
        if spec.get("host_memory"):
            parts.append("sequences in host memory")
        return ", ".join(parts)

    def price(self) -> str:
        """HEAD's price of it in words: ``HEAD prices it 707.3 tokens/s at batch 1, binds on memory, weakest
        provenance estimated``; ``HEAD refuses it: NotResident: …``; ``HEAD cannot price it: …``; or that the review
        left it unpriced."""
        side = self.after
        if side is None:
            return f"not priced (a review prices at most {MAX_DESCRIBED:,} added servings)"
        if side.price is not None:
            p = side.price
            batch = p.get("batch")
            at = f" at batch {batch:,}" if isinstance(batch, int) else ""
            weakest = f", weakest provenance {p['provenance']}" if isinstance(p.get("provenance"), str) else ""
            return f"HEAD prices it {float(p['tokens_per_s']):,.1f} tokens/s{at}, binds on {p.get('binds')}{weakest}"
        if side.refusal is not None:
            return f"HEAD refuses it: {side.refusal.get('refusal')}: {side.refusal.get('message', '')}"
        return f"HEAD cannot price it: {side.error}"

    @property
    def lock_words(self) -> list[str] | None:
        """``passprice lock NAME -o locks/NAME.lock.toml`` word by word, for a serving no lock of HEAD locks and HEAD
        prices; ``None`` otherwise (a lock of a refused price is refused)."""
        if self.locks or self.after is None or self.after.price is None:
            return None
        return ["passprice", "lock", self.name, "-o", f"locks/{self.name}.lock.toml"]

    def locked(self, code: Any = str) -> str:
        """``locked by LOCK, …`` or ``not locked (informational: nothing pins it; lock it with …)``; ``code`` marks
        up names (a markdown code span)."""
        if self.locks:
            return "locked by " + ", ".join(code(n) for n in self.locks)
        words = self.lock_words
        if words is None:
            return "not locked"
        from passprice.enforce import command_span

        command = command_span(words) if code is not str else shlex.join(words)
        return f"not locked (nothing pins its price, so no review judges it: {command} locks it)"

    def text_lines(self) -> list[str]:
        """The serving for ``diff``'s text, below its file's line: what it serves, its price, its locks."""
        return [f"  serves    {self.serves()}", f"  price     {self.price()}", f"  lock      {self.locked()}"]

    def markdown(self) -> str:
        """The serving for the pull-request comment, after its file's path: one sentence, names as code spans."""
        return (f": {markdown_text(self.serves())}; {markdown_text(self.price())}; "
                f"{self.locked(markdown_code)}")

    def to_json(self) -> dict[str, Any]:
        """``serving``, ``path``, ``serves`` (words), ``after`` (HEAD's price object, refusal or error; ``None``
        unpriced), ``locks`` and ``lock_command``."""
        return {
            "serving": self.name,
            "path": self.path,
            "serves": self.serves(),
            "after": self.after.to_json() if self.after is not None else None,
            "locks": list(self.locks),
            "lock_command": shlex.join(self.lock_words) if self.lock_words is not None else None,
        }


def _context(context: Any) -> str:
    """One context class: ``1 at position 2,048 of limit 4,096`` (its share, position and limit)."""
    if not isinstance(context, Mapping):
        return str(context)
    share, position, limit = (context.get(k) for k in ("share", "position", "limit"))
    return f"{_number(share)} at position {_number(position)} of limit {_number(limit)}"


def _number(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    return f"{x:,.6g}" if isinstance(x, float) and not x.is_integer() else f"{int(x):,}"


def added_servings(
    head: Side, files: Iterable[FileChange], reviews: Iterable[LockImpact], most: int | None = None
) -> tuple[AddedServing, ...]:
    """Each serving file HEAD adds (``files``: the changed files) that reads on HEAD, by name, the first ``most``
    (:data:`MAX_DESCRIBED` by default) priced on HEAD with HEAD's inputs and code, each with HEAD's locks of it
    (``reviews``: every lock reviewed)."""
    from passprice.review import PriceSide
    from passprice.sidecode import price_locks
    from passprice.unlocked import SERVINGS

    added = []
    for f in files:
        p = PurePosixPath(f.path)
        if f.kind == "serving" and f.status == "added" and not f.head_errors and str(p.parent) == SERVINGS:
            added.append((p.stem, f.path))
    added.sort()
    if not added:
        return ()
    most = MAX_DESCRIBED if most is None else most
    locks: dict[str, list[str]] = {}
    for lock in reviews:
        if not lock.removed and lock.serving_name is not None:
            locks.setdefault(lock.serving_name, []).append(lock.name)
    requests = [{"key": name, "kind": "price", "serving": name, "spec": None} for name, _ in added[:most]]
    results = price_locks(head.root, head.code, requests)
    out = []
    for i, (name, path) in enumerate(added):
        side = PriceSide.of(results.get(name, {"error": "not priced on HEAD"})) if i < most else None
        out.append(AddedServing(name, path, side, tuple(sorted(locks.get(name, ())))))
    return tuple(out)
