"""When a figure changed, and from what, is in git: a fact's history is read from the commits that changed its file,
one version each time the fact itself (value, unit, provenance, source, locator, note or derivation) changed.

Read through git itself (``git log --follow`` over the file, ``git cat-file --batch`` for its content at each
commit), never by parsing ``.git``. A version written before facts named their sources shows its free-text cite.
"""

from __future__ import annotations

import subprocess
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

from passprice import schema
from passprice.diff import Checkout, _git_says, _run_git
from passprice.edit import FactFile
from passprice.errors import InputError
from passprice.facts import Fact
from passprice.files import read_regular
from passprice.registry import Root

#: The most commits a history reads (a fact file changes a few times a year; the bound keeps a long-lived registry's
#: history quick to read).
MAX_COMMITS = 2000


@attrs.frozen
class Version:
    """The fact as one commit left it: ``commit`` (full id; ``None`` for uncommitted changes in the work tree), its
    ``date``, ``author`` and ``subject``; the ``fact`` (``None`` when the file had no such fact), or the ``error``
    that kept the file from reading; ``changed``, the fields that differ from the version before (``new`` for the
    first)."""

    commit: str | None
    date: str
    author: str
    subject: str
    fact: Fact | None
    error: str | None = None
    changed: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The version for ``--json``."""
        from passprice.report import fact_json

        return {
            "commit": self.commit,
            "date": self.date,
            "author": self.author,
            "subject": self.subject,
            "fact": fact_json(self.fact) if self.fact is not None else None,
            "error": self.error,
            "changed": list(self.changed),
        }


_FIELDS = ("value", "unit", "provenance", "source", "locator", "cite", "note", "derivation")


def _changed(old: Fact | None, new: Fact | None) -> tuple[str, ...]:
    if old is None and new is None:
        return ()
    if old is None:
        return ("new",)
    if new is None:
        return ("removed",)
    a, b = old.to_entry(), new.to_entry()
    return tuple(k for k in _FIELDS if a.get(k) != b.get(k))


def _entry(document: Mapping[str, Any], path: str) -> Any:
    node: Any = document
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


def _fact_in(text: bytes, path: str, where: str) -> Fact | None:
    """The fact at ``path`` of a card or method file's ``text``, read leniently (an old version may predate today's
    schema). Raises :class:`InputError` when the text does not read or the entry is not a fact."""
    try:
        document = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{where}: does not read: {e}") from None
    entry = _entry(document, path)
    if entry is None:
        return None
    try:
        return Fact.from_entry(entry, f"{where}: {path}")
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{where}: {path}: not a fact: {e}") from None


def fact_history(root: Root, where: FactFile) -> list[Version]:
    """Every version of fact ``where.path`` of ``where.file``, newest first: one for each commit that changed the
    fact (following renames of the file), and one for the work tree when it differs from the last commit.

    Raises :class:`InputError` (one line) when ``root`` is the embedded copy or not in a git checkout, or the file is
    outside the checkout."""
    if root.embedded:
        raise InputError(
            f"{root.path}: the embedded facts have no history; run inside a git checkout of the registry or pass "
            "--root"
        )
    try:
        checkout = Checkout.of(root.path)
    except InputError:
        raise InputError(
            f"{root.path}: not a git checkout: a fact's history is read from git; run inside a checkout of the "
            "registry (or pass --root one)"
        ) from None
    try:
        rel = where.file.resolve().relative_to(checkout.top.resolve()).as_posix()
    except ValueError:
        raise InputError(f"{where.file}: not in the git checkout at {checkout.top}") from None
    try:
        out = _run_git(
            checkout.top,
            ["log", "--follow", f"--max-count={MAX_COMMITS}", "--date=short", "--name-only",
             "--format=%x1e%H%x1f%ad%x1f%an%x1f%s", "--", rel],
        )
    except subprocess.CalledProcessError as e:
        raise InputError(f"{where.file}: git log failed: {_git_says(e)}") from None
    commits: list[tuple[str, str, str, str, str]] = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        if not record.strip():
            continue
        head, _, names = record.partition("\n")
        sha, date, author, subject = [*head.split("\x1f"), "", "", ""][:4]
        files = [n for n in names.splitlines() if n.strip()]
        commits.append((sha, date, author, subject, files[-1] if files else rel))
    commits.reverse()  # oldest first
    contents: list[bytes | None] = []
    if commits:
        request = "".join(f"{sha}:{name}\n" for sha, _, _, _, name in commits).encode("utf-8")
        data = _run_git(checkout.top, ["cat-file", "--batch"], request)
        at = 0
        for _ in commits:
            eol = data.index(b"\n", at)
            header = data[at:eol].split(b" ")
            if len(header) < 3 or header[-1] == b"missing":
                contents.append(None)  # the file was deleted by this commit
                at = eol + 1
                continue
            size = int(header[2])
            contents.append(data[eol + 1 : eol + 1 + size])
            at = eol + 1 + size + 1
    versions: list[Version] = []
    last: Fact | None = None
    for (sha, date, author, subject, name), text in zip(commits, contents, strict=True):
        fact, error = None, None
        if text is not None:
            try:
                fact = _fact_in(text, where.path, f"{name} at {sha[:12]}")
            except InputError as e:
                error = str(e)
        if error is None and (fact is None) == (last is None) and (
            fact is None or last is None or fact.digest() == last.digest()
        ):
            continue
        versions.append(Version(sha, date, author, subject, fact, error, _changed(last, fact)))
        if error is None:
            last = fact
    try:
        now = _fact_in(read_regular(where.file, schema.MAX_TOML_BYTES), where.path, str(where.file))
    except (InputError, OSError) as e:
        versions.append(Version(None, "", "", "uncommitted changes", None, str(e)))
    else:
        if (now is None) != (last is None) or (now is not None and last is not None and now.digest() != last.digest()):
            versions.append(Version(None, "", "", "uncommitted changes", now, None, _changed(last, now)))
    versions.reverse()
    return versions


def history_text(where: FactFile, versions: list[Version], shown: str) -> str:
    """A fact's history for people: one block a version, newest first."""
    lines = [f"{where.name} {where.path} ({shown}): {len(versions)} version{'s' if len(versions) != 1 else ''}"]
    for v in versions:
        lines.append("")
        commit = "work tree" if v.commit is None else f"{v.commit[:12]}  {v.date}  {v.author}"
        lines.append(f"{commit}  {v.subject}".rstrip())
        if v.error is not None:
            lines.append(f"  does not read: {v.error}")
            continue
        if v.fact is None:
            lines.append("  (no such fact)")
            continue
        lines.append(f"  {v.fact.describe()} ({v.fact.provenance.value})   changed: {', '.join(v.changed)}")
        if v.fact.source is not None:
            lines.append(f"  source: {v.fact.source} — {v.fact.locator}")
        else:
            lines.append(f"  cite: {v.fact.cite}")
    return "\n".join(lines)
