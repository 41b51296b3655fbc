"""A registry is fit to merge only when every file matches its schema and every lock still holds: it reproduces its
recorded price from its pinned facts, today's facts keep its floors, and (with ``--frozen``) no pinned fact drifted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.cards import card_from_document
from passprice.drafts import method_from_document
from passprice.errors import InputError
from passprice.registry import Root
from passprice.routing import routing_from_document


@attrs.frozen
class LockStatus:
    """One lock judged: ``reproduces`` (its recorded price from its pinned facts), ``verdict`` (today's facts
    against its floors; ``None`` when today's price was refused, ``refusal`` says why), ``drift`` (pinned facts
    that changed, as lines)."""

    name: str
    path: str
    reproduces: bool
    moved: tuple[str, ...]
    holds: bool
    verdict: str
    drift: tuple[str, ...]
    refusal: str | None = None


@attrs.frozen
class CheckReport:
    """``passprice check``: how many files of each kind were validated (``kinds``: ``cards``, ``drafts``,
    ``checkpoints``, ``servings``, ``locks``, ``sources``), every file's ``problems`` (lines naming file and key path,
    each once), every lock's status, and ``warnings`` (lines that do not fail the check: a source nothing cites)."""

    files: int
    problems: tuple[str, ...]
    locks: tuple[LockStatus, ...]
    kinds: tuple[tuple[str, int], ...] = ()
    warnings: tuple[str, ...] = ()

    def ok(self, frozen: bool) -> bool:
        """All holds: no file problem, every lock reproduces and holds its floors, and, when ``frozen``, no drift."""
        return (
            not self.problems
            and all(s.reproduces and s.holds for s in self.locks)
            and (not frozen or all(not s.drift for s in self.locks))
        )

    def to_json(self, frozen: bool) -> dict[str, Any]:
        """The report for ``--json``."""
        return {
            "ok": self.ok(frozen),
            "frozen": frozen,
            "files": self.files,
            "kinds": dict(self.kinds),
            "problems": list(self.problems),
            "warnings": list(self.warnings),
            "locks": [attrs.asdict(s) for s in self.locks],
        }

    def text(self, frozen: bool) -> str:
        """The report for people."""
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.kinds)
        lines = [
            f"checked {self.files} files{f' ({kinds})' if kinds else ''}: "
            f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        ]
        lines += [f"  {p}" for p in self.problems]
        lines += [f"  warning: {w}" for w in self.warnings]
        for s in self.locks:
            state = "ok" if s.reproduces and s.holds and (not frozen or not s.drift) else "FAILS"
            lines.append(f"lock {s.name} ({s.path}): {state}")
            lines.append(f"  reproduces: {'yes' if s.reproduces else 'NO'}")
            lines += [f"    {m}" for m in s.moved]
            lines.append(f"  floors: {s.verdict}")
            if s.drift:
                lines.append(f"  drift{' (an error with --frozen)' if frozen else ''}:")
                lines += [f"    {d}" for d in s.drift]
            else:
                lines.append("  drift: none")
        lines.append("all holds" if self.ok(frozen) else "check FAILED")
        return "\n".join(lines)


def _validate_folder(
    root: Root, folder: Path, kind: str, build: Callable[[str, dict[str, Any], str], object], suffix: str = ".toml"
) -> tuple[int, list[str]]:
    problems: list[str] = []
    count = 0
    if not folder.is_dir():
        return 0, []
    for path in sorted(folder.glob(f"*{suffix}")):
        count += 1
        try:
            if kind == "checkpoint":
                # Loaded as the pricer loads it (schema, entry name = file name, header), and kept in its cache for
                # the servings and locks that name it.
                from passprice.checkpoints import load_checkpoint

                load_checkpoint(root, str(path))
            else:
                document = schema.load(path, kind, root.schema)
                build(path.name[: -len(suffix)], document, str(path))
        except InputError as e:
            problems += str(e).splitlines()
    return count, problems


def check(root: Root) -> CheckReport:
    """Validate every file of ``root`` against its schema (cards, drafting methods, routing records, checkpoints,
    servings, locks, sources), recompute every derived fact, resolve every serving, and judge every lock:
    reproduction from its pinned facts, today's floors, drift."""
    from passprice.lineage import review
    from passprice.serving import ServingRefusal
    from passprice.servings import load_spec, resolve

    problems: list[str] = []
    kinds: dict[str, int] = {}
    from passprice.measurements import runs_of_document
    from passprice.stacks import stack_from_document

    for folder, kind, build in (
        (root.cards, "card", card_from_document),
        (root.drafts, "draft", method_from_document),
        (root.routing, "routing", routing_from_document),
        (root.stacks, "stack", stack_from_document),
        (root.checkpoints, "checkpoint", lambda name, doc, src: None),
        (root.measurements, "measurement", runs_of_document),
    ):
        n, found = _validate_folder(root, folder, kind, build)
        kinds[f"{kind}s"] = n
        problems += found
    found, warnings = review(root)  # sources cited and registered, derived facts recomputed (passprice.lineage)
    problems += found
    kinds["sources"] = len(root.names(root.sources))
    kinds["servings"] = 0
    for name in root.names(root.servings):
        kinds["servings"] += 1
        try:
            resolve(root, load_spec(root, name))
        except InputError as e:
            problems += str(e).splitlines()
        except ServingRefusal as e:  # a drafting method out of its scope (passprice.scopes.OutOfScope)
            problems.append(f"{root.servings / f'{name}.toml'}: refused ({e.name}): {e}")
    statuses = []
    kinds["locks"] = 0
    for name in root.names(root.locks, ".lock.toml"):
        kinds["locks"] += 1
        path = root.locks / f"{name}.lock.toml"
        try:
            statuses.append(_judge_lock(root, path))
        except InputError as e:
            problems += str(e).splitlines()
    # A broken card or checkpoint is met again by every serving and lock naming it: report each line once, and name
    # files relative to the root, as the lock lines do.
    prefix = f"{root.path}{os.sep}"
    unique = tuple(dict.fromkeys(p.removeprefix(prefix) for p in problems))
    shown = tuple(w.removeprefix(prefix) for w in warnings)
    return CheckReport(sum(kinds.values()), unique, tuple(statuses), tuple(kinds.items()), shown)


def _shown(root: Root, path: Path) -> str:
    """``path`` relative to the root (``locks/NAME.lock.toml``) when it lies inside it, else as given."""
    try:
        return str(path.relative_to(root.path))
    except ValueError:
        return str(path)


def _judge_lock(root: Root, path: Path) -> LockStatus:
    from passprice.locks import HeaderMismatch, drift, judge, priced, read_lock, reproduce
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve

    lock = read_lock(path, root.schema)
    try:
        rep = reproduce(root, lock)
        reproduces = rep.equals
        moved = tuple(f"{m.field}: {m.recorded!r} → {m.now!r} ({m.change()})" for m in rep.moved)
        if rep.model_changed:
            moved = (f"pricing model {lock.pricing_model} → {rep.pricing_model}", *moved)
    except HeaderMismatch as e:
        reproduces, moved = False, (str(e),)
    except InputError as e:
        # The pinned checkpoint does not read (reported as a problem of its own file too).
        why = str(e).splitlines()[0].removeprefix(f"{root.path}{os.sep}")
        reproduces, moved = False, (f"the checkpoint does not read: {why}",)
    shown = _shown(root, path)
    try:
        resolved = resolve(root, lock.spec)
    except InputError as e:
        # Today's files do not read (reported as problems on their own): the lock cannot be judged against them.
        why = str(e).splitlines()[0].removeprefix(f"{root.path}{os.sep}")
        return LockStatus(lock.name, shown, reproduces, moved, False, f"today's facts do not read: {why}", ())
    except ServingRefusal as e:  # today's drafting method is out of its scope for the lock's checkpoint
        why = f"today's facts refuse the price: {e}"
        return LockStatus(lock.name, shown, reproduces, moved, False, why, (), e.name)
    refusal = None
    today = resolved.facts()
    stack = None
    if lock.stack is not None:
        # Issue 14: a lock made under a serving stack is judged with today's stack facts too.
        from passprice.stacks import load_stack

        try:
            stack = load_stack(root, lock.stack["name"])
        except InputError as e:
            why = str(e).splitlines()[0].removeprefix(f"{root.path}{os.sep}")
            return LockStatus(lock.name, shown, reproduces, moved, False, f"today's facts do not read: {why}", ())
        today.update(stack.lock_facts())
    try:
        _, rests_on = priced(lock.kind, resolved.header, resolved.card, resolved.serving, stack)
        verdict = judge(lock.name, lock.policy, rests_on)
        holds, text = verdict.holds, verdict.message()
    except ServingRefusal as e:
        holds, text, refusal = False, f"today's facts refuse the price: {e}", e.name
    drifted = tuple(d.describe() for d in drift(lock, today))
    return LockStatus(lock.name, shown, reproduces, moved, holds, text, drifted, refusal)
