"""When a figure changed, and from what, is in git: a fact's history is read from the commits that changed its file,
one version each time the fact itself (value, unit, provenance, source, locator, note or derivation) changed.

Read through git itself (``git log -m --first-parent --follow`` over the file, ``git cat-file --batch`` for its
content at each commit), never by parsing ``.git``. The history is the checked-out branch's own line of commits, each
against the one before it on that line (a merge against its first parent: the commit where a branch's change
landed), so commits of merged branches, interleaved by date, never show a fact changing back and forth; before a
merge that changed the fact come the versions of the branch it merged, marked so, each against the one before it on
that branch (a step down in provenance made on a branch is not hidden by the merge). A rename
is followed when the files are at least 90 % alike (``--find-renames=90%``): git's default, 50 %, took a card deleted
and restored for a copy of another card, whose figures it then showed as the card's first version. A version
written before facts named their sources shows its free-text cite.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice import gitread, schema
from passprice.edit import FactFile
from passprice.errors import InputError, escaped
from passprice.factparts import change_said, changed_parts
from passprice.facts import Fact
from passprice.registry import Root
from passprice.review import Checkout
from passprice.review.sides import _git_says, _run_git

#: The most commits a history reads (a fact file changes a few times a year; the bound keeps a long-lived registry's
#: history quick to read).
MAX_COMMITS = 2000


@attrs.frozen
class Version:
    """The fact as one commit left it: ``commit`` (full id; ``None`` for uncommitted changes in the work tree), its
    ``date``, ``author`` and ``subject``; the ``fact`` (``None`` when the file had no such fact), or the ``error``
    that kept the file from reading; ``changed``, the parts that differ from the version before, named as
    :func:`passprice.factparts.changed_parts` names them (``citation``, not ``source``/``locator``/``cite``; ``new``
    for the first), and ``said``, the words ``fact set`` and the review say of them
    (:func:`passprice.factparts.change_said`: ``citation, note changed, derivation removed``; left53: the history
    said ``changed: locator, note, derivation``). ``cut``: the oldest version read from a history longer than
    :data:`MAX_COMMITS` commits, or at the boundary of a shallow clone, whose ``changed`` is then unknown (empty),
    not ``new``: older commits were not read; ``cut_why`` says which. ``merged_by``: for a version made on a branch
    merged into the checked-out line, the merge commit that brought it (its ``changed`` is against the version
    before it on that branch); ``branch_unread``: a merge past the newest :data:`MAX_MERGES` whose branch's versions
    were not read."""

    commit: str | None
    date: str
    author: str
    subject: str
    fact: Fact | None
    error: str | None = None
    changed: tuple[str, ...] = ()
    cut: bool = False
    cut_why: str | None = None
    merged_by: str | None = None
    branch_unread: bool = False
    said: str = ""

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
            "older_not_read": self.cut,
            "older_not_read_why": self.cut_why,
            "merged_by": self.merged_by,
            "merged_branch_not_read": self.branch_unread,
        }


def _read_again(last: Fact | None, fact: Fact | None, last_at: str | None) -> tuple[tuple[str, ...], str]:
    """What a version that reads says after one or more that do not (:func:`_changed`'s ``changed`` and ``said``):
    what changed since ``last_at``, the last commit whose version reads (its fact ``last``), named, since the versions
    between cannot say what they held (``reads again: value changed since abc123def456, the last version that
    reads``; ``reads again: as at abc123def456, …`` when nothing did); with none before (``last_at`` ``None``), that it
    cannot be told (``changed`` ``reads again``). Before (tests/test_odds165.py) the first read after a broken or
    over-cap version said ``value changed`` as if of the version just before it, and ``new`` when no earlier one
    read. Raises nothing."""
    if last_at is None:
        return ("reads again",), "reads again: what changed cannot be told (no earlier version reads)"
    changed, said = _changed(last, fact)
    if not changed:
        return ("reads again",), f"reads again: as at {last_at[:12]}, the last version that reads"
    return changed, f"reads again: {said} since {last_at[:12]}, the last version that reads"


def _changed(old: Fact | None, new: Fact | None) -> tuple[tuple[str, ...], str]:
    """What changed from ``old`` to ``new`` (the fact one version before, the fact now; ``None``: no such fact): the
    parts :func:`passprice.factparts.changed_parts` names (``--json``'s ``changed``) and the words
    :func:`passprice.factparts.change_said` says of them, as ``fact set`` and the review do (the text's line); a fact
    added ``new``, one removed ``removed``, one whose parts all read alike but whose text differs (its amount written
    another way) ``as written``, as ``fact set`` says it. Raises nothing."""
    if old is None and new is None:
        return (), ""
    if old is None:
        return ("new",), "new"
    if new is None:
        return ("removed",), "removed"
    parts = tuple(part for part, _ in changed_parts(old, new))
    if parts:
        return parts, change_said(old, new)
    return ((), "") if old.to_entry() == new.to_entry() else (("as written",), "as written changed")


def _entry(document: Mapping[str, Any], path: str) -> Any:
    node: Any = document
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None




def _fact_in(text: bytes, path: str, where: str, kind: str = "card") -> Fact | None:
    """The fact at ``path`` of a ``kind`` file's ``text`` (``card``, ``draft``, ``stack`` or ``routing``: the
    :class:`~passprice.edit.FactFile`'s), read leniently (an old version may predate today's schema). Raises
    :class:`InputError` when the text does not read, is larger than a card or drafting method may be
    (:func:`passprice.schema.require_size`, before it is parsed: issue 13), holds more separators than its kind's files
    may (:func:`passprice.schema.require_shape`: a stack's 8,627 were refused under a card's 4,096 cap,
    tests/test_newcomer_21.py) or the entry is not a fact."""
    schema.require_size(where, kind, len(text))
    schema.require_shape(where, kind, text)  # its kind's separators, before tomllib's cost of them
    try:
        document = schema.toml_loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{where}: does not read: {e}") from None
    except (RecursionError, ValueError) as e:  # nesting past the parser, an integer past 4,300 digits
        raise InputError(f"{where}: does not read: {str(e).split(';')[0] or type(e).__name__}") from None
    entry = _entry(document, path)
    if entry is None:
        return None
    try:
        return Fact.from_entry(entry, f"{where}: {path}")
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise InputError(f"{where}: {path}: not a fact: {e}") from None


def fact_table(text: bytes, path: str) -> bytes | None:
    """The lines of fact ``path``'s own table in a TOML file's ``text`` (:func:`table_at`), or ``None``."""
    at = table_at(text, path)
    return None if at is None else text[at[0] : at[1]]


def table_at(text: bytes, path: str) -> tuple[int, int] | None:
    """Where fact ``path``'s own table lies in a TOML file's ``text`` (byte offsets, start and end): its
    ``[path]`` header line and what follows up to the next table that is not one of its own (``[path.derivation]``
    is); ``None`` when the file has no such header, or more than one (then the whole file is read). TOML defines a
    table's keys in its own table only (a table defined by a header cannot be added to by dotted keys elsewhere), so
    the fact is what this text holds; a multi-line value cut by a line opening with ``[`` leaves text that does not
    parse, and the whole file is read."""
    parts = [re.escape(p.encode("utf-8")) for p in path.split(".")]
    dotted = rb"[ \t]*\.[ \t]*".join(parts)
    header = re.compile(rb"^[ \t]*\[[ \t]*" + dotted + rb"[ \t]*\][ \t]*(#.*)?$", re.MULTILINE)
    # Every header line holds the path's last key: find it with bytes.find (C speed) and try the pattern only at the
    # start of each line holding it, not at every line of a file of half a megabyte (2,000 versions of one took 15 s).
    last = path.split(".")[-1].encode("utf-8")
    found = []
    starts: set[int] = set()
    at = text.find(last)
    while at != -1:
        line_at = text.rfind(b"\n", 0, at) + 1
        if line_at not in starts:
            starts.add(line_at)
            match = header.match(text, line_at)
            if match is not None:
                found.append(match)
        at = text.find(last, max(at + 1, text.find(b"\n", at) + 1 or len(text)))
    if len(found) != 1:
        return None
    return _table_span(text, found[0], dotted)


def _table_span(text: bytes, found: re.Match[bytes], dotted: bytes) -> tuple[int, int]:
    """Where the table whose header ``found`` matched starts and ends in ``text`` (:func:`fact_table`)."""
    start = found.start()
    own = re.compile(rb"^[ \t]*\[[ \t]*" + dotted + rb"[ \t]*\.")
    end = len(text)
    for line in re.finditer(rb"^[ \t]*\[.*$", text[found.end():], re.MULTILINE):
        if not own.match(line.group(0)):
            end = found.end() + line.start()
            break
    return start, end


#: A value at a line's end after `` = `` (``KEY = VALUE``): a basic string without quotes, escapes or control
#: characters, a decimal number of at most 15 digits and 17 decimals without exponent, or a boolean. In a text holding
#: no ``'''`` its text decides neither whether the text parses nor which keys it holds, wherever the line lies: a
#: key's value (a scalar either way), the content of a multi-line string or a comment (characters either way), a line
#: that does not parse for what comes before it (an array's line, where no ``=`` reads; a string opened earlier on the
#: line, which a closing quote of the value would end as the value's own did not) (:meth:`_Reader._rest_reads`).
_VALUE_AT_END = re.compile(r'(?m) = (?:"[^"\\\x00-\x1f\x7f]*"|-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,17})?|true|false)$')


def _dotted_lines(text: str) -> bool:
    """Whether a line of ``text`` holds :data:`~passprice.schema.MAX_KEY_PARTS` dots or more: only then does
    :func:`passprice.schema.toml_loads` look for a dotted key too deep (:func:`passprice.schema.deep_key`)."""
    from itertools import repeat

    return text.count(".") >= schema.MAX_KEY_PARTS and max(
        map(str.count, text.split("\n"), repeat("."))) >= schema.MAX_KEY_PARTS


class _Reader:
    """Reads the fact from each version's text, once per distinct text: by its own table when
    :func:`fact_table` finds it (a few hundred bytes, however large the file) and the rest of the file reads (once per
    distinct rest), else from the whole file."""

    #: Stands for the version's name in a remembered error (the same table read at another commit names that one).
    _WHERE = "\0version\0"

    def __init__(self, path: str, kind: str = "card") -> None:
        self.path = path
        self.kind = kind
        self.seen: dict[bytes, Fact | InputError | None] = {}
        # whether the file reads outside the fact's table, by that rest's text, and by its shape (_VALUE_AT_END)
        self.rest: dict[bytes, bool] = {}
        self.shapes: dict[str, bool] = {}

    def read(self, text: bytes, where: str) -> Fact | None:
        """The fact, or ``None`` when this version has none. Raises :class:`InputError` as :func:`_fact_in`, naming
        ``where``: a version larger than a file of its kind may be too (in ``check``'s words), before its table is
        looked for (read by its table, a version of 300 KB showed its fact where the whole file is refused:
        tests/test_attack151.py)."""
        schema.require_size(where, self.kind, len(text))
        at = table_at(text, self.path)
        table = None if at is None else text[at[0] : at[1]]
        if at is not None and not self._rest_reads(text, at):
            table = None  # the file does not read elsewhere: the whole file is read, and its error said
        key = table if table is not None else text
        if key not in self.seen:
            found: Fact | InputError | None = None
            if table is not None:
                try:
                    found = _fact_in(table, self.path, self._WHERE, self.kind)
                except InputError as e:
                    found = e
            if table is None or isinstance(found, InputError):
                try:  # the whole file: the table alone did not read, or is not there as one table
                    found = _fact_in(text, self.path, self._WHERE, self.kind)
                except InputError as e:
                    found = e
            self.seen[key] = found
        known = self.seen[key]
        if isinstance(known, InputError):
            raise InputError(str(known).replace(self._WHERE, where)) from None
        return known

    def _rest_reads(self, text: bytes, at: tuple[int, int]) -> bool:
        """Whether the file ``text`` reads outside the fact's own table (its offsets ``at``): the file with
        the table's lines but its header taken out parses, and holds nothing under the fact's path (else a key of
        the table could clash with it), once per distinct such rest. A version whose file does not read is a version
        that does not read, whatever lines changed: read by its table alone, ``broken = = `` appended to the end of
        a card showed the fact at that commit, and the next commit as ``value changed`` (tests/test_fix171.py)."""
        start, end = at
        header_end = text.find(b"\n", start, end)
        header = text[start:end] if header_end == -1 else text[start : header_end + 1]
        rest = text[:start] + header + (b"" if header.endswith(b"\n") else b"\n") + text[end:]
        known = self.rest.get(rest)
        if known is None:
            try:
                decoded = rest.decode("utf-8")
            except UnicodeDecodeError:
                known = False
            else:
                # Its shape: each plain value's text taken out, which decides neither whether it parses nor which
                # keys it holds (_VALUE_AT_END). A history of commits each changing another fact's note (or figure)
                # is one shape, parsed once, where each distinct rest was parsed (tests/test_bigread173.py,
                # docs/PERFORMANCE.md). A text holding ``'''`` (which may close a multi-line literal string inside a
                # value) or a line of MAX_KEY_PARTS dots (which toml_loads looks through for a key too deep: a
                # value's dots may count) is its own shape.
                shape = decoded if "'''" in decoded or _dotted_lines(decoded) else _VALUE_AT_END.sub(" = 0", decoded)
                known = self.shapes.get(shape)
                if known is None:
                    try:
                        document = schema.toml_loads(shape)
                    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
                        known = False
                    else:
                        known = _entry(document, self.path) == {}
                    self.shapes[shape] = known
            self.rest[rest] = known
        return known


@attrs.frozen
class _Commit:
    """One commit that changed the file, as ``git log`` gives it: its ``sha``, ``date``, ``author``, ``subject``,
    the file's ``name`` then (it may have been renamed since) and its ``blob`` (``None``: deleted, or a merge git
    shows no change of); ``deleted``: the commit removed the file."""

    sha: str
    date: str
    author: str
    subject: str
    name: str
    blob: str | None
    deleted: bool = False
    linked: bool = False  # the file was a symbolic link at this commit (mode 120000): its blob is the link's text
    #: A git submodule entry (a gitlink, mode 160000) at this commit: its id names a commit of another repository,
    #: not a version of the file; git takes any id there, so one naming another card's blob was read as this card's
    #: version (tests/test_attack177.py).
    gitlink: bool = False
    #: A folder at the file's path at this commit (git lists the files under it): a version that does not read.
    folder: bool = False


_ZERO = "0" * 40
_SHA = re.compile(rb"^[0-9a-f]{40}$")


def _shown(field: bytes) -> str:
    """A commit's date, author or subject as text: UTF-8 (an undecodable byte as U+FFFD), a character that does not
    print as U+FFFD: a control character, a line separator, a bidi control (U+202E reordered the rest of the line an
    author named with it was shown on); a subject may hold any byte but NUL, none of which is printed to a
    terminal. Spaces (U+00A0 …) stay."""
    import unicodedata

    text = field.decode("utf-8", "replace")
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or unicodedata.category(ch) == "Zs" else "\ufffd" for ch in text)


def _commits(out: bytes, rel: str) -> list[_Commit]:
    """The commits of ``git log -z --raw --format=%H%x00%ad%x00%an%x00%s``, newest first. Every field and name is
    NUL-separated, so a subject or author holding any character, and a file name git would quote (a quote, a tab, a
    newline), read as they are; names are decoded as the file system's (os.fsdecode)."""
    tokens = out.split(b"\0")
    commits: list[_Commit] = []
    current = rel  # the file's name at the commit read next (older), renames followed
    i = 0
    while i + 3 < len(tokens):
        sha = tokens[i].lstrip(b"\n")
        if not _SHA.match(sha):
            i += 1
            continue
        date, author, subject = (_shown(tokens[i + k]) for k in (1, 2, 3))
        i += 4
        name, blob, deleted, linked, gitlink, folder, older = current, None, False, False, False, False, current
        first = True
        while i < len(tokens) and tokens[i].lstrip(b"\n").startswith(b":"):
            fields = tokens[i].lstrip(b"\n").decode("ascii", "replace").split()
            status = fields[-1] if fields else ""
            paths = 2 if status[:1] in ("R", "C") else 1
            names = [os.fsdecode(n) for n in tokens[i + 1 : i + 1 + paths]]
            i += 1 + paths
            entry = names[-1] if names else current
            # A file under the path: a folder there at this commit (left182: it read as "(no such fact)", counted
            # as the last version that reads, or, a file moved into it, as the card itself)
            folder = folder or (entry.startswith(current + "/") and not status.startswith("D"))
            if not first:
                continue
            first = False
            name = entry
            new = fields[3] if len(fields) > 3 else _ZERO
            blob = None if new == _ZERO or status.startswith("D") else new
            deleted = status.startswith("D")
            linked = len(fields) > 1 and fields[1] == "120000"
            gitlink = len(fields) > 1 and fields[1] == "160000"
            if paths == 2 and entry == current and not names[0].startswith(current + "/"):
                older = names[0]  # renamed from: its name before this commit
        if folder:
            name, blob, deleted, linked, gitlink = current, None, False, False, False
        commits.append(_Commit(sha.decode("ascii"), date, author, subject, name, blob, deleted, linked, gitlink,
                               folder))
        current = older
    return commits


def fact_history(root: Root, where: FactFile) -> list[Version]:
    """Every version of fact ``where.path`` of ``where.file``, newest first: one for each commit that changed the
    fact (following renames of the file), and one for the work tree when it differs from the last commit.

    Read through git with NUL-separated output (``git log -z --raw``: commits, their fields and file names as they
    are) and ``git cat-file --batch`` for each distinct content by its blob id; the fact is read from its own table
    when the file writes it as one, once per distinct table (:func:`fact_table`), so a long history of a large file
    costs git's time, not a parse of every version.

    Each version's content is sized first (``git cat-file --batch-check``): one past
    :data:`~passprice.schema.MAX_TOML_BYTES` is a version that does not read, naming ``commit:path`` and its size,
    never read; the rest are read in batches of at most that many bytes. A history that reaches a shallow clone's
    boundary is cut there, and says so, as one longer than :data:`MAX_COMMITS` is.

    Raises :class:`InputError` (one line) when ``root`` is the embedded copy or not in a git checkout, the file is
    outside the checkout, or in a submodule (a folder with its own ``.git``, or a ``commit`` entry of ``HEAD``), and
    when git fails (:func:`passprice.gitread.failing_git`)."""
    from passprice import gitread

    with gitread.failing_git(where.file):
        return _fact_history(root, where)


def _fact_history(root: Root, where: FactFile) -> list[Version]:
    """:func:`fact_history`, a git failure left to it."""
    if root.embedded:
        from passprice.registry import outside_registry

        raise outside_registry(root, "a fact's history is read from the git history of your registry")
    try:
        checkout = Checkout.of(root.path)
    except (gitread.OwnerRefused, gitread.GitFailed):  # another user's, git failing: said so, not "not a git checkout"
        raise
    except InputError:
        raise InputError(
            f"{root.path}: not a git checkout: a fact's history is read from git; run inside a checkout of the "
            "registry (or name one before the command: passprice --root DIR fact show …)"
        ) from None
    try:
        # The file's own path, its folder resolved: resolving a card that is a symbolic link showed the history of
        # the file it links to (another card's figures and citations) under this card's name.
        rel = (where.file.parent.resolve() / where.file.name).relative_to(checkout.top.resolve()).as_posix()
    except ValueError:
        raise InputError(f"{where.file}: not in the git checkout at {checkout.top}") from None
    _no_submodule(checkout, rel)
    rewritten = gitread.file_rewrites(checkout.top, rel)
    if rewritten:  # what git holds of the file is not what a checkout of it reads: refused as check and diff do
        raise InputError.of(rewritten)
    try:
        out = _run_git(
            checkout.top,
            ["log", "-z", "-m", "--first-parent", "--follow", "--find-renames=90%", "--raw", "--no-abbrev",
             f"--max-count={MAX_COMMITS + 1}", "--date=short", "--format=%H%x00%ad%x00%an%x00%s", "--", rel],
        )
    except subprocess.CalledProcessError as e:
        raise InputError(f"{where.file}: git log failed: {_git_says(e)}") from None
    commits = _commits(out, rel)
    cut = len(commits) > MAX_COMMITS  # older commits exist: the oldest version read cannot say what it changed
    cut_why = _newest_only() if cut else None
    del commits[MAX_COMMITS:]
    if not cut and commits and gitread.is_shallow(checkout.top) and (
        gitread.at_shallow_boundary(checkout.top, commits[-1].sha)
    ):
        cut, cut_why = True, gitread.shallow_reason(commits[-1].sha)
    commits.reverse()  # oldest first
    for k, c in enumerate(commits):
        if c.blob is None and c.name:  # a merge git showed no change of: its content at that commit
            try:
                listing = _run_git(checkout.top, ["ls-tree", "-z", "--full-tree", c.sha, "--", c.name])
            except subprocess.CalledProcessError:
                continue
            fields = listing.split(b"\t", 1)[0].split()
            if len(fields) == 3 and fields[1] == b"blob":
                commits[k] = attrs.evolve(c, blob=fields[2].decode("ascii"))
    reader = _Reader(where.path, where.kind)
    read = _read_versions(checkout, commits, reader)
    versions: list[Version] = []
    before: list[Fact | None] = []  # the fact on the line before each version
    last: Fact | None = None
    last_at: str | None = None  # the last commit whose version reads
    for k, c in enumerate(commits):
        fact, error = read.get(k, (None, None))
        previous_error = bool(versions) and versions[-1].error is not None
        if error is None and not previous_error and (fact is None) == (last is None) and (
            fact is None or last is None or fact.digest() == last.digest()
        ):
            last_at = c.sha
            continue
        if error is not None and previous_error and versions[-1].error == error:
            continue
        changed, said = _changed(last, fact) if error is None else ((), "")
        if error is None and previous_error:
            changed, said = _read_again(last, fact, last_at)
        oldest_read = cut and not versions
        if oldest_read:
            changed, said = (), ""
        versions.append(Version(c.sha, c.date, c.author, c.subject, fact, error, changed, cut=oldest_read,
                                cut_why=cut_why if oldest_read else None, said=said))  # fmt: skip
        before.append(last)
        if error is None:
            last, last_at = fact, c.sha
    versions = _with_merged(checkout, versions, before, reader, {c.sha: c.name for c in commits})
    if os.path.islink(where.file):  # the work tree's file is a link: the file it names is another file's history
        if not (commits and commits[-1].linked):
            versions.append(Version(None, "", "", "uncommitted changes", None,
                                    f"{where.file}: a symbolic link, not the file itself (its figures are another "
                                    "file's)"))  # fmt: skip
        versions.reverse()
        return versions
    try:
        now = _fact_in(gitread.read_sized(where.file), where.path, str(where.file), where.kind)
    except (InputError, OSError) as e:
        if not (commits and commits[-1].blob is not None and versions and versions[-1].commit == commits[-1].sha
                and versions[-1].error is not None
                and _as_committed(checkout, where.file, commits[-1].blob, where.kind)):
            versions.append(Version(None, "", "", "uncommitted changes", None, str(e)))
    else:
        if versions and versions[-1].error is not None and versions[-1].commit is not None:
            changed, said = _read_again(last, now, last_at)  # the last commit's does not read: said so, as above
            versions.append(Version(None, "", "", "uncommitted changes", now, None, changed, said=said))
        elif (now is None) != (last is None) or (now is not None and last is not None
                                                 and now.digest() != last.digest()):
            changed, said = _changed(last, now)
            versions.append(Version(None, "", "", "uncommitted changes", now, None, changed, said=said))
    versions.reverse()
    return versions


def _as_committed(checkout: Checkout, file: Path, blob: str, kind: str = "card") -> bool:
    """Whether the work tree's ``file`` is the last commit's version of it, blob id ``blob`` (``git hash-object``,
    through the checkout's filters as ``git status`` compares it): a file that does not read, unchanged since its
    commit, is no uncommitted change (the version over the cap at HEAD was listed again as ``work tree  uncommitted
    changes``, tests/test_fix171.py). A file past the cap of a ``kind`` file (:func:`passprice.schema.require_size`)
    is not hashed: it is the committed version when the blob's size is its own, since both then read as the same
    refusal of that size (``git hash-object`` of a committed 300 MB card ran past git's quiet bound, and the history
    refused as "something holds it": tests/test_attack177.py). ``False`` when git cannot tell."""
    try:
        size = os.stat(file).st_size
    except OSError:
        return False
    try:
        schema.require_size(file, kind, size)
    except InputError:
        try:
            return gitread.blob_sizes(checkout.top, [blob]).get(blob) == size
        except (subprocess.CalledProcessError, InputError):
            return False
    try:
        out = _run_git(checkout.top, ["hash-object", "--", os.fspath(file)])
    except subprocess.CalledProcessError:
        return False
    return out.strip().decode("ascii", "replace") == blob


def _with_merged(
    checkout: Checkout, versions: list[Version], before: list[Fact | None], reader: _Reader, names: Mapping[str, str]
) -> list[Version]:
    """``versions`` (oldest first, the checked-out line's) with, before each one a merge commit made, the versions
    of the branch it merged (``MERGE^1..MERGE^2``, in git's topological order: a branch's commits together, never
    interleaved with the line's), each against the one before it on the branch, the first against the line's fact
    before the merge (``before``). A merge that only shows a branch's last version would hide what the branch did
    on the way: a measured figure replaced by an estimate on a branch that was then merged showed as one new
    estimate. ``names``: the file's name at each commit of the line (it may have been renamed since)."""
    shas = [v.commit for v in versions if v.commit is not None]
    if not shas:
        return versions
    try:
        listing = _run_git(checkout.top, ["log", "--no-walk=unsorted", "--format=%H %P", *shas])
    except subprocess.CalledProcessError:
        return versions
    parents = {line.split()[0]: line.split()[1:] for line in listing.decode("ascii", "replace").splitlines() if line}
    merges = [k for k, v in enumerate(versions) if len(parents.get(v.commit or "", [])) >= 2 and not v.cut]
    read = set(merges[-MAX_MERGES:])  # the newest: each costs a git log (150 took 1.8 s)
    out: list[Version] = []
    for k, (version, fact_before) in enumerate(zip(versions, before, strict=True)):
        if k in read:
            merged = parents[version.commit or ""]
            name = names.get(version.commit or "", "")
            read_at = next((v.commit for v in reversed(versions[:k]) if v.error is None), None)  # fact_before's
            out += _branch_versions(checkout, version, merged[0], fact_before, reader, name, read_at)
        elif k in merges:
            version = attrs.evolve(version, branch_unread=True)
        out.append(version)
    return out


#: The merges whose branches a history reads, the newest first (one ``git log`` each).
MAX_MERGES = 32

#: The commits of one merged branch a history reads (the newest; the oldest version read is marked as cut).
MAX_BRANCH_COMMITS = MAX_COMMITS


def _branch_versions(
    checkout: Checkout, merge: Version, first: str, last: Fact | None, reader: _Reader, name: str,
    last_at: str | None = None,
) -> list[Version]:
    """The versions of the fact on the branches ``merge`` merged (commits reachable from the merge and not from its
    first parent ``first`` that changed the file ``name``: every parent of an octopus merge, not only the second),
    oldest first, each against the one before it, a commit that removed the file as a version without the fact;
    the file followed back through a rename on a branch (``--follow``, at :func:`fact_history`'s 90 %), so the
    branch's versions under its old name are not hidden behind the rename; ``last``: the fact before them, at
    ``last_at`` (the line's last commit whose version reads, :func:`_read_again`)."""
    assert merge.commit is not None
    try:
        out = _run_git(
            checkout.top,
            ["log", "-z", "--topo-order", "--follow", "--find-renames=90%", "--raw", "--no-abbrev",
             f"--max-count={MAX_BRANCH_COMMITS + 1}", "--date=short", "--format=%H%x00%ad%x00%an%x00%s", f"^{first}",
             merge.commit, "--", name],
        )
    except subprocess.CalledProcessError:
        return []
    commits = _commits(out, name)
    cut = len(commits) > MAX_BRANCH_COMMITS  # a branch longer than the bound: its oldest version read is marked so
    del commits[MAX_BRANCH_COMMITS:]
    commits.reverse()
    read = _read_versions(checkout, commits, reader)
    found: list[Version] = []
    for k, c in enumerate(commits):
        if k not in read and not c.deleted:
            continue  # a merge on the branch (git shows no change of one), or a content git does not have
        fact, error = read.get(k, (None, None))
        if error is None and (fact is None) == (last is None) and (
            fact is None or last is None or fact.digest() == last.digest()
        ):
            last_at = c.sha
            continue
        oldest_read = cut and not found
        changed, said = ((), "") if oldest_read or error is not None else _changed(last, fact)
        if error is None and found and found[-1].error is not None and not oldest_read:
            changed, said = _read_again(last, fact, last_at)
        found.append(Version(c.sha, c.date, c.author, c.subject, fact, error, changed, cut=oldest_read,
                             cut_why=f"only the newest {MAX_BRANCH_COMMITS:,} commits of the branch are read"
                             if oldest_read else None, merged_by=merge.commit, said=said))
        if error is None:
            last, last_at = fact, c.sha
    return found


def _no_submodule(checkout: Checkout, rel: str) -> None:
    """Refuse a file inside a submodule of the checkout: a folder between the checkout's top and the file holding its
    own ``.git`` (checked out), or a ``commit`` entry of ``HEAD``'s tree on the way (``git ls-tree``). Raises
    :class:`InputError` naming the folder."""
    parts = rel.split("/")[:-1]
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for folder in folders:
        if os.path.lexists(checkout.top / folder / ".git"):
            raise gitread.submodule(folder)
    if not folders:
        return
    try:
        listing = _run_git(checkout.top, ["ls-tree", "-z", "--full-tree", "HEAD", "--", *folders])
    except subprocess.CalledProcessError:
        return  # no commit yet: nothing in git to be a submodule
    for record in os.fsdecode(listing).split("\0"):
        meta, _, name = record.partition("\t")
        if meta.split(" ")[1:2] == ["commit"]:
            raise gitread.submodule(name, "at HEAD")


def _read_versions(
    checkout: Checkout, commits: list[_Commit], reader: _Reader
) -> dict[int, tuple[Fact | None, str | None]]:
    """The fact (or the error) of each commit's version, by its index in ``commits`` (of one whose content git
    does not have, an error saying so). Every distinct blob is sized first (one ``git cat-file --batch-check``): one
    past :data:`~passprice.schema.MAX_TOML_BYTES` is an error naming ``commit:path`` and its size, never read; the
    others are read by one ``git cat-file --batch`` per batch of at most that many bytes, so memory holds one batch."""
    by_blob: dict[str, list[int]] = {}
    out: dict[int, tuple[Fact | None, str | None]] = {}
    for k, c in enumerate(commits):
        if c.linked:  # its blob is a link's text, not a version of the file
            out[k] = (None, f"{c.name} at {c.sha[:12]}: a symbolic link, not the file itself (its figures are "
                            "another file's)")
        elif c.gitlink:  # its id is a commit's of another repository (or any object git was handed), never read
            out[k] = (None, str(gitread.submodule(c.name, f"at {c.sha[:12]}")))
        elif c.folder:
            out[k] = (None, f"{c.name} at {c.sha[:12]}: a folder, not a file")
        elif c.blob is not None:
            by_blob.setdefault(c.blob, []).append(k)
    sizes = gitread.blob_sizes(checkout.top, by_blob)

    def parse(batch: dict[str, int]) -> None:
        contents = gitread.read_blobs(checkout.top, batch)
        for blob, text in contents.items():
            for k in by_blob[blob]:
                c = commits[k]
                try:
                    out[k] = (reader.read(text, f"{c.name} at {c.sha[:12]}"), None)
                except InputError as e:
                    out[k] = (None, str(e))

    batch: dict[str, int] = {}
    held = 0
    for blob, ks in by_blob.items():
        size = sizes.get(blob)
        if size is None:
            # Left out, the version before was shown as the first ("changed: new"): a partial clone's blob not
            # fetched (passprice fetches nothing, gitread.git_environment) is said to be missing (attack round 30).
            for k in ks:
                out[k] = (None, str(gitread.not_a_blob(checkout.top, f"{commits[k].sha[:12]}:{commits[k].name}", blob)))
            continue
        if size > schema.MAX_TOML_BYTES:
            for k in ks:
                out[k] = (None, gitread.too_large(f"{commits[k].sha[:12]}:{commits[k].name}", size))
            continue
        if size > schema.kind_cap(reader.kind):
            # Refused by its size as its read would be, unread: six versions of 60 MB each (a 3 MB .git) were read
            # whole (2.1 s of CPU, 212 MB; versions of 300 KB: 0.57 s, 53 MB) (tests/test_attack151.py).
            for k in ks:
                try:
                    schema.require_size(f"{commits[k].name} at {commits[k].sha[:12]}", reader.kind, size)
                except InputError as e:
                    out[k] = (None, str(e))
            continue
        if batch and held + size > schema.MAX_TOML_BYTES:
            parse(batch)
            batch, held = {}, 0
        batch[blob] = size
        held += size
    if batch:
        parse(batch)
    return out


def _newest_only() -> str:
    """Why a history longer than :data:`MAX_COMMITS` commits stops where it does."""
    return f"only the newest {MAX_COMMITS:,} commits are read"


def history_text(where: FactFile, versions: list[Version], shown: str) -> str:
    """A fact's history for people: one block a version, newest first."""
    count = f"{len(versions)} version{'s' if len(versions) != 1 else ''}"
    why = next((v.cut_why for v in versions if v.cut and v.merged_by is None), None)
    if why is not None and why == _newest_only():
        count += f" in the newest {MAX_COMMITS:,} commits (older history not read)"
    elif why is not None:
        count += f" (older history not read: {why})"
    lines = [f"{where.name} {where.path} ({shown}): {count}"]
    for v in versions:
        lines.append("")
        commit = "work tree" if v.commit is None else f"{v.commit[:12]}  {v.date}  {v.author}"
        lines.append(f"{commit}  {v.subject}".rstrip())
        if v.merged_by is not None:
            lines.append(f"  (on a branch merged by {v.merged_by[:12]})")
        if v.branch_unread:
            lines.append(f"  (a merge: the versions on the branch it merged are not read, past the newest {MAX_MERGES} "
                         "merges read)")
        if v.error is not None:
            lines.append(f"  does not read: {v.error}")
            continue
        if v.fact is None:
            lines.append("  (no such fact)")
            continue
        # what changed in fact set's and the review's words (factparts.change_said), not the file's keys (left53)
        what = "change unknown (older history not read)" if v.cut else v.said
        # An old version is read as it was committed, never held to today's schema: its texts may hold a newline or
        # a bidi control (a locator of "ev\u202eil\nline2" split its block and reordered the line), shown escaped.
        lines.append(f"  {escaped(v.fact.describe())} ({v.fact.provenance.value})   {what}")
        if v.fact.source is not None:
            lines.append(f"  source: {escaped(v.fact.source)} — {escaped(str(v.fact.locator))}")
        else:
            lines.append(f"  cite: {escaped(str(v.fact.cite))}")
    return "\n".join(lines)
