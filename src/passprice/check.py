"""A registry is fit to merge only when every file matches its schema and every lock still holds: it reproduces its
recorded price from its pinned facts, today's facts keep its floors, and (with ``--frozen``) no pinned fact drifted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.cards import card_from_document
from passprice.drafts import method_from_document
from passprice.errors import InputError
from passprice.registry import Root


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
    """``passprice check``: every file's ``problems`` (lines naming file and key path) and every lock's status."""

    files: int
    problems: tuple[str, ...]
    locks: tuple[LockStatus, ...]

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
            "problems": list(self.problems),
            "locks": [attrs.asdict(s) for s in self.locks],
        }

    def text(self, frozen: bool) -> str:
        """The report for people."""
        lines = [f"checked {self.files} files: {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"]
        lines += [f"  {p}" for p in self.problems]
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
            document = schema.load(path, kind, root.schema)
            build(path.name[: -len(suffix)], document, str(path))
        except InputError as e:
            problems += str(e).splitlines()
    return count, problems


def check(root: Root) -> CheckReport:
    """Validate every file of ``root`` against its schema (cards, drafting methods, checkpoints, servings, locks),
    resolve every serving, and judge every lock: reproduction from its pinned facts, today's floors, drift."""
    from passprice.checkpoints import header_from_entry
    from passprice.servings import load_spec, resolve

    problems: list[str] = []
    files = 0
    for folder, kind, build in (
        (root.cards, "card", card_from_document),
        (root.drafts, "draft", method_from_document),
        (root.checkpoints, "checkpoint", lambda name, doc, src: header_from_entry(doc, src)),
    ):
        n, found = _validate_folder(root, folder, kind, build)
        files += n
        problems += found
    for name in root.names(root.servings):
        files += 1
        try:
            resolve(root, load_spec(root, name))
        except InputError as e:
            problems += str(e).splitlines()
    statuses = []
    for name in root.names(root.locks, ".lock.toml"):
        files += 1
        path = root.locks / f"{name}.lock.toml"
        try:
            statuses.append(_judge_lock(root, path))
        except InputError as e:
            problems += str(e).splitlines()
    return CheckReport(files, tuple(problems), tuple(statuses))


def _judge_lock(root: Root, path: Path) -> LockStatus:
    from passprice.locks import HeaderMismatch, drift, evaluate, judge, read_lock, reproduce
    from passprice.serving import ServingRefusal
    from passprice.servings import resolve

    lock = read_lock(path, root.schema)
    try:
        rep = reproduce(root, lock)
        reproduces = rep.equals
        moved = tuple(f"{m.field}: {m.recorded!r} → {m.now!r} ({m.change()})" for m in rep.moved)
    except HeaderMismatch as e:
        reproduces, moved = False, (str(e),)
    resolved = resolve(root, lock.spec)
    refusal = None
    try:
        cost = evaluate(lock.kind, resolved.header, resolved.card, resolved.serving)
        verdict = judge(lock.name, lock.policy, cost.rests_on)
        holds, text = verdict.holds, verdict.message()
    except ServingRefusal as e:
        holds, text, refusal = False, f"today's facts refuse the price: {e}", e.name
    drifted = tuple(d.describe() for d in drift(lock, resolved.facts()))
    return LockStatus(lock.name, str(path), reproduces, moved, holds, text, drifted, refusal)
