"""A fact change is reviewed by what it does: every changed figure is shown old against new, with a weaker provenance
flagged, and every locked price resting on it is re-priced on both sides, so a reviewer sees how the prices move and
whether a lock's floors still hold, without checking anything out by hand.

``passprice diff [BASE [HEAD]]`` compares two *sides*: git revisions, read through git itself (``git ls-tree`` and
``git cat-file``, never by checking out or parsing ``.git``), or folders; the default is the merge base with ``main``
and the work tree. Each side's ``facts/``, ``registry/``, ``locks/`` and ``schema/`` are materialized into a
temporary folder, so the ordinary loaders (:class:`~passprice.registry.Root`, :func:`~passprice.cards.load_card`,
:func:`~passprice.servings.resolve`, :func:`~passprice.locks.read_lock`) read each side exactly as they read a
checkout. A file that does not read on a side is reported with its error, never skipped, and the rest is still
compared.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from stat import S_IFDIR
from typing import TYPE_CHECKING, Any

import attrs

from passprice import cache, gitread, schema
from passprice.cachefolder import make_folders
from passprice.cards import card_from_document, document_and_facts
from passprice.derivations import Derivation, Finding, Input, RunDerivation, recheck_all
from passprice.drafts import method_from_document
from passprice.errors import InputError, escaped, problem_lines, spelled
from passprice.facts import Fact, Provenance, dimension
from passprice.files import is_folder, read_regular, shell_word
from passprice.lineage import Dependant, changed_dependants
from passprice.locks import (
    FloorChange,
    Lock,
    Verdict,
    compare_policies,
    first_format_clash,
    judge,
    read_lock,
)
from passprice.pins import LOCK_FORMAT
from passprice.registry import Root, lock_order
from passprice.report import fact_json
from passprice.reproduce import same_quantity
from passprice.servings import spec_to_document
from passprice.sidecode import BUILD_FILES, Code, code_folder, code_of, conversations, kept_apart, price_locks
from passprice.sourcechange import EXCERPT_CHANGES, SourceChange, source_changes
from passprice.tables import (
    decimals_pair,
    json_text,
    markdown_code,
    markdown_prose,
    markdown_table,
    markdown_text,
    si,
    si_pair,
)

if TYPE_CHECKING:
    import ast

    from passprice.addedservings import AddedServing
    from passprice.comment import Links
    from passprice.measurements import Run
    from passprice.modelhistory import KnownModel
    from passprice.modellist import ListChanges
    from passprice.reproduce import RoutingTogether
    from passprice.servings import ServingSpec
    from passprice.sources import Lookups, QuoteCheck, StoredText
    from passprice.unlocked import ServingMove

    #: BASE's and HEAD's list of pricing models as :func:`_side_lists` reads them: by digest, ``None`` where a side
    #: has none, HEAD's error line where it does not read; ``None`` for the pair when HEAD's code is not its own.
    SideLists = tuple[dict[str, KnownModel] | None, dict[str, KnownModel] | str | None] | None

#: The folders of a root a diff compares.
FOLDERS = ("facts", "registry", "locks", "schema", "sources")
#: Where a root's own code lies, when it is a checkout of passprice itself (:mod:`passprice.sidecode`).
CODE = "src/passprice"
#: What a review says when HEAD changes passprice's own code (:attr:`Diff.code_files`).
CODE_WARNING = ("the verdict is sound only from BASE's passprice (the CI workflow installs the base branch's to "
                "review): HEAD's code could pass its own change")
#: The files beside a registry's folders (paths from its root) that decide which passprice checks and reviews it:
#: the line CI and a newcomer install it by (``requirements.txt``, which ``init`` writes; the base branch's installs
#: the reviewer of every later pull request), a checkout's build (``pyproject.toml``, and ``hatch_build.py``, its
#: build hook, run at install), the pre-commit hook and the review workflow. A pull request rewriting
#: ``requirements.txt`` to another passprice read "no fact changed; no lock affected" (slip round 29): once merged,
#: that passprice reviews every later change. Named by :attr:`Diff.install_files`, never failed (as passprice's own
#: code is): people read them.
INSTALL_FILES = ("requirements.txt", "pyproject.toml", "hatch_build.py", ".pre-commit-config.yaml",
                 ".github/workflows/facts.yml")
#: The folder of GitHub's workflows (paths from a registry's root): each file in it counts with :data:`INSTALL_FILES`
#: (:func:`install_names`). A pull request adding ``.github/workflows/review.yml`` (its own job installing another
#: passprice, posting the sticky review comment) read "no fact changed; no lock affected" (attack round 34b).
WORKFLOWS = ".github/workflows"
#: What a review says when HEAD changes one of :data:`INSTALL_FILES`.
INSTALL_WARNING = ("these decide which passprice checks and reviews the registry: once merged, the one they install "
                   "reviews every later pull request, so read them as code (guard them with a CODEOWNERS rule)")
#: The branches whose merge base with ``HEAD`` is the default BASE, in the order tried.
DEFAULT_BRANCHES = ("main", "origin/main", "master", "origin/master")


# --- the two sides -------------------------------------------------------------------------------------------------


@attrs.frozen
class SideInfo:
    """How a report names a side: ``label`` for people; ``revision`` (a full commit id) for a git revision;
    ``folder`` for a folder or the work tree."""

    label: str
    revision: str | None = None
    folder: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"label", "revision", "folder"}``."""
        return {"label": self.label, "revision": self.revision, "folder": self.folder}


@attrs.frozen
class Side:
    """One side of a diff: ``root`` is where its files lie (a temporary folder for a revision), ``files`` maps each
    file below :data:`FOLDERS` (POSIX path relative to the root) to its bytes, ``code`` the code it is priced with
    (:mod:`passprice.sidecode`)."""

    info: SideInfo
    root: Root
    files: Mapping[str, bytes]
    code: Code = attrs.field(factory=lambda: code_of(None))
    #: For a revision: the identity (:func:`passprice.sourcechange.document_digest`) of each registry document a
    #: source names (``source.path``, and its stored excerpt ``source.excerpt``), which is written empty into
    #: ``root``; a folder's are read where they lie.
    documents: Mapping[str, str] = attrs.field(factory=dict)
    #: The identity (:func:`passprice.sourcechange.document_digest`) of each of :data:`INSTALL_FILES` and each file
    #: of :data:`WORKFLOWS` on this side, by path (absent: not there).
    installs: Mapping[str, str] = attrs.field(factory=dict)
    #: The git checkout a revision (or a work tree inside one) was read from: the review reads the branch's commits
    #: through it (:func:`_branch_records`, slip 57); ``None`` for a folder outside git.
    checkout: Checkout | None = attrs.field(default=None, eq=False, repr=False)
    #: For a revision: each file of the facts, locks and sources (records and stored excerpts) that ``git archive``
    #: of it leaves out or expands (``export-ignore``, ``export-subst``), with the attribute, its value and the rule's
    #: file (:meth:`Checkout.exports`); empty for a folder or a work tree.
    exports: Mapping[str, tuple[str, str, str]] = attrs.field(factory=dict)

    def document(self, rel: str) -> str | None:
        """The identity of the registry document at ``rel`` on this side (``None``: not there, or not readable)."""
        if self.info.revision is not None:
            return self.documents.get(rel)
        from passprice.registry import document_problem

        if document_problem(self.root, rel) is not None:
            return None  # outside the registry, or no regular file: check names it, nothing is read
        # Hashed in chunks, whatever its size: read whole within the file cap, a document past 64 MiB had no identity,
        # and an edit of it passed the review of a work tree (exit 0) that check failed (attack round 36).
        from passprice.lineage import hashed_file

        found = hashed_file(self.root.path / rel)
        return f"sha256:{found}" if found is not None else None

    def local(self, message: str) -> str:
        """``message`` with this side's root folder taken out of the file names it mentions, so a temporary folder
        never shows and both sides name a file alike (``facts/cards/h200_sxm_141gb.toml``)."""
        return message.replace(f"{self.root.path}{os.sep}", "")


#: git is run, and its failure worded, in one place (:mod:`passprice.gitread`); the names stay for older callers.
_run_git = gitread.run_git
_git_says = gitread.git_says


def _peeled(top: Path, revision: str) -> str:
    """``revision`` peeled to the commit it names, as git's ``REV^{commit}``: for ``:/TEXT`` (the youngest commit
    whose message matches TEXT) and ``:/!-TEXT``, whose text runs to the end (``:/base^{commit}`` searched for
    "base^{commit}", so ``diff :/base`` was "neither a folder nor a revision"; leftovers 27b), the commit id git
    resolves it to, then peeled. Raises :class:`subprocess.CalledProcessError` when git resolves nothing."""
    if revision.startswith(":/"):
        found = _run_git(top, ["rev-parse", "--verify", "--quiet", "--end-of-options", revision])
        revision = found.decode("ascii", "replace").strip()
    return f"{revision}^{{commit}}"


@attrs.frozen
class Checkout:
    """The git checkout a root lies in: ``top`` its top folder, ``prefix`` the root's folder inside it (``""`` or
    ``sub/dir/``), so a registry kept below a repository's top is read too."""

    top: Path
    prefix: str
    #: ``git ls-tree -r -l -z`` of :data:`FOLDERS` and :data:`CODE` by commit: one process a side lists both.
    _listed: dict[str, bytes] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    #: The ``.gitattributes`` files :meth:`rewrites` and :meth:`exports` read, by commit: one listing a commit.
    _attributes: dict[str, dict[str, str]] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    @classmethod
    def of(cls, folder: Path) -> Checkout:
        """The checkout holding ``folder``. Raises :class:`InputError` when ``folder`` is not in a git checkout,
        :class:`passprice.gitread.GitFailed` when git fails there for another reason (a config file it cannot read)
        and :class:`passprice.gitread.OwnerRefused` for another user's checkout."""
        try:
            # Paths are bytes to git: decoded as the file system's names are (os.fsdecode, undecodable bytes kept as
            # surrogates), so a folder whose name is not UTF-8 is read, and passed back, as it is.
            # One process for both: two lines, unless the top's name holds a line break (then asked apart).
            both = _run_git(folder, ["rev-parse", "--show-toplevel", "--show-prefix"])
            if both.count(b"\n") == 2 and both.endswith(b"\n"):
                top_bytes, prefix_bytes = both.split(b"\n")[:2]
                top, prefix = os.fsdecode(top_bytes), os.fsdecode(prefix_bytes)
            else:
                top = os.fsdecode(_run_git(folder, ["rev-parse", "--show-toplevel"]).rstrip(b"\n"))
                prefix = os.fsdecode(_run_git(folder, ["rev-parse", "--show-prefix"]).rstrip(b"\n"))
        except subprocess.CalledProcessError as e:
            if gitread.refuses_owner(e):
                raise gitread.OwnerRefused(gitread.owner_line(folder, e)) from None
            if b"not a git repository" not in (e.stderr or b"") and b"fatal:" in (e.stderr or b""):
                # A ~/.gitconfig git cannot read was "not a git checkout" (attack round 33): said in git's words.
                raise gitread.GitFailed(f"{folder}: git rev-parse failed ({_git_says(e)})") from None
            raise InputError(
                f"{folder}: not a git checkout ({_git_says(e)}); revisions can be compared only inside one "
                "(give two folders instead)"
            ) from None
        return cls(Path(top), prefix)

    def commit(self, revision: str) -> str:
        """The full commit id ``revision`` names. Raises :class:`InputError` when it names none (saying so when the
        checkout is a shallow clone, whose older commits are not there)."""
        try:
            peeled = _peeled(self.top, revision)
            out = _run_git(self.top, ["rev-parse", "--verify", "--quiet", "--end-of-options", peeled])
        except subprocess.CalledProcessError:
            cut = " (this is a shallow clone: older commits are not here; git fetch --unshallow)" if (
                self._could_be_cut(revision) and gitread.is_shallow(self.top)) else ""
            if "/" not in revision and self._names_commit(f"origin/{revision}"):  # a fresh clone has no local main
                cut += f"; origin/{revision} is a revision here: diff origin/{revision} …"
            if not self._names_commit("HEAD"):  # `diff HEAD` in a new repository said only "neither a folder nor a
                # revision", where `diff` alone says why (attack round 51)
                cut += " (the git checkout has no commit yet: commit the registry first, or compare two folders)"
            kind = self._object_kind(revision)
            if kind is not None:  # a tree or a blob (HEAD^{tree}, HEAD:facts, a blob's id): attack round 48
                raise InputError(
                    f"{revision}: names a {kind} of the git checkout at {self.top}, not a commit: diff compares "
                    "commits (or two folders)"
                ) from None
            ends = self._range_ends(revision)
            if ends is not None:  # `diff HEAD~1..HEAD`, git's way of naming two commits (leftovers 28c)
                base = (f" (git's A...B starts from the commit both share: passprice diff $(git merge-base "
                        f"{ends[0]} {ends[1]}) {ends[1]})") if "..." in revision else ""
                raise InputError(
                    f"{revision}: a range of revisions, which diff does not read: give its two revisions as two "
                    f"arguments: passprice diff {ends[0]} {ends[1]}{base}"
                ) from None
            if not cut and re.fullmatch(r"[A-Za-z0-9_][\w.\-/]*", revision) and ".." not in revision:
                # walkthrough 39: `diff main HEAD` in a registry whose branch is master said no more (a name such
                # as a branch's only: HEAD~5 or :/text names no branch to list)
                cut = self._branches_hint()
            raise InputError(
                f"{revision}: neither a folder nor a revision of the git checkout at {self.top}{cut}"
            ) from None
        self._unambiguous(revision)
        return out.decode("ascii", "replace").strip()

    def _range_ends(self, revision: str) -> tuple[str, str] | None:
        """The two revisions of the range ``revision`` names as git writes one, ``A..B`` or ``A...B`` (an end left
        out is ``HEAD``, as git reads it), when each names a commit here; else ``None``. Raises nothing."""
        found = re.fullmatch(r"(.*?)\.\.\.?(.*)", revision, re.DOTALL)
        if found is None or not (found.group(1) or found.group(2)):
            return None
        ends = (found.group(1) or "HEAD", found.group(2) or "HEAD")
        return ends if all(self._names_commit(end) for end in ends) else None

    def _object_kind(self, revision: str) -> str | None:
        """The kind of object ``revision`` names when it names one that is no commit (``tree``, ``blob``), else
        ``None``: ``HEAD^{tree}`` or ``HEAD:facts`` was "neither a folder nor a revision", which it is. Raises
        nothing."""
        try:
            sha = _run_git(self.top, ["rev-parse", "--verify", "--quiet", "--end-of-options", revision]).strip()
            kind = _run_git(self.top, ["cat-file", "-t", sha.decode("ascii", "replace")]).decode("ascii", "replace")
        except (subprocess.CalledProcessError, OSError, ValueError, InputError):
            return None
        kind = kind.strip()
        return kind if kind in ("tree", "blob") else None

    def _unambiguous(self, revision: str) -> None:
        """Refuse ``revision`` when its name (before any ``~``, ``^``, ``:`` or ``@{``) is the name of more than one
        ref, as git's rules for a short name read it (``refs/NAME``, ``refs/tags/NAME``, ``refs/heads/NAME``,
        ``refs/remotes/NAME``, ``refs/remotes/NAME/HEAD``): git takes the first and only warns. A tag ``origin/main``
        pushed beside a pull request (``actions/checkout`` with ``fetch-depth: 0`` fetches every tag) made CI's
        ``passprice diff origin/$BASE_REF`` compare the pull request with itself (slip round 28). Raises
        :class:`InputError` naming the refs."""
        import re

        name = re.split(r"[~^:]|@\{", revision, maxsplit=1)[0]
        if not name or name.startswith("refs/") or re.fullmatch(r"[0-9a-fA-F]{4,64}", name):
            return
        candidates = [f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}", f"refs/remotes/{name}",
                      f"refs/remotes/{name}/HEAD"]
        try:
            listed = _run_git(self.top, ["for-each-ref", "--format=%(refname)", *candidates])
        except subprocess.CalledProcessError:
            return
        found = [r for r in os.fsdecode(listed).splitlines() if r in candidates]
        if len(found) > 1:
            raise InputError(
                f"{revision}: names more than one ref of the git checkout at {self.top} ({', '.join(found)}), and git "
                "takes one of them without a word: give the one meant in full, or the commit id"
            )

    def full_name(self, revision: str) -> str | None:
        """The full name of the ref ``revision`` is (``refs/heads/main``, ``refs/tags/v1``,
        ``refs/remotes/origin/main``: ``git rev-parse --symbolic-full-name``), or ``None`` when it names no ref (a
        commit id, ``HEAD~1``) or more than one. Never raises."""
        try:
            out = _run_git(self.top, ["rev-parse", "--symbolic-full-name", "--end-of-options", revision])
        except (subprocess.CalledProcessError, OSError, InputError):
            return None
        names = [n for n in os.fsdecode(out).split() if n != "--end-of-options"]  # git 2.39 echoes it here
        return names[0] if len(names) == 1 and names[0].startswith("refs/") else None

    def _could_be_cut(self, revision: str) -> bool:
        """Whether ``revision``, which names no commit here, could name one beyond a shallow clone's boundary: a
        commit id (4 to 64 hex digits: an older commit git did not fetch), or a walk back (``X~N``, ``X^``) from a
        revision ``X`` that names a commit here. A name (a branch, a tag, ``origin/main``) that is no ref here
        cannot: a shallow clone cuts history, not names (leftovers 29b: ``diff main`` with no branch ``main`` at all
        added "this is a shallow clone: older commits are not here"). Raises nothing."""
        start = re.split(r"[~^]", revision, maxsplit=1)[0]
        if start != revision:
            return bool(start) and self._names_commit(start)
        return re.fullmatch(r"[0-9a-fA-F]{4,64}", revision) is not None

    def _branches_hint(self) -> str:
        """``" (its branches: master, pr1)"``: the checkout's branches, local then remote, at most 8 named and the
        rest counted, for a revision that names nothing; ``""`` when it has none or git fails (never raises)."""
        try:
            out = _run_git(self.top, ["for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes"])
        except (subprocess.CalledProcessError, OSError):
            return ""
        names = [n for n in out.decode("utf-8", "replace").splitlines() if n and not n.endswith("/HEAD")]
        if not names:
            return ""
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        return f" (its branches: {', '.join(escaped(n) for n in names[:8])}{more})"

    def _names_commit(self, revision: str) -> bool:
        """Whether ``revision`` names a commit of this checkout (never raises)."""
        try:
            _run_git(self.top, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"])
        except (subprocess.CalledProcessError, OSError):
            return False
        return True

    def default_base(self) -> tuple[str, str]:
        """The default BASE: the merge base of ``HEAD`` with the first of :data:`DEFAULT_BRANCHES` that exists,
        else ``HEAD`` itself (the work tree's uncommitted changes). Returns (commit id, label).

        Raises :class:`InputError` when the checkout has no commit yet, and in a shallow clone (a CI checkout) when
        the merge base is not there or no such branch is: a review against ``HEAD`` instead would pass a pull
        request's own commits unreviewed."""
        shallow = gitread.is_shallow(self.top)
        for branch in DEFAULT_BRANCHES:
            try:
                _run_git(self.top, ["rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}"])
            except subprocess.CalledProcessError:
                continue
            self._unambiguous(branch)  # a tag named main was the merge base's other side
            try:
                out = _run_git(self.top, ["merge-base", branch, "HEAD"])
            except subprocess.CalledProcessError:
                if shallow:
                    raise InputError(
                        f"{branch}: no merge base with HEAD in this shallow clone (the commits that join them are "
                        "not here); fetch the history (git fetch --unshallow, or fetch-depth: 0 in "
                        "actions/checkout), or name BASE"
                    ) from None
                continue
            sha = out.decode("ascii", "replace").strip()
            return sha, f"merge base with {branch} ({sha[:12]})"
        if shallow:
            raise InputError(
                f"{self.top}: a shallow clone with no {', '.join(DEFAULT_BRANCHES)} branch: the default BASE (the "
                "merge base with main) is not here; fetch it (git fetch origin main, or fetch-depth: 0 in "
                "actions/checkout), or name BASE"
            )
        try:
            sha = self.commit("HEAD")
        except InputError:
            raise InputError(f"{self.top}: the git checkout has no commit yet; nothing to compare with") from None
        return sha, f"HEAD ({sha[:12]}; no main or master branch)"

    def materialize(
        self, commit: str, dest: Path, folders: Iterable[str] = FOLDERS,
        judge: Callable[[Mapping[str, bytes]], None] | None = None,
    ) -> dict[str, bytes]:
        """Write the root's ``folders`` (default :data:`FOLDERS`; ``src/passprice`` for its code) as they are at
        ``commit`` into ``dest``; the files written, by path relative to the root. Only the files passprice reads
        (:func:`passprice.gitread.read_by_passprice`) are read (the folders holding the others are made, empty),
        each sized first (``git ls-tree -l``) and all in one ``git cat-file --batch``; a hidden file's name is read as
        ``check`` reads it (``locks/.x.lock.toml`` is a lock), hidden folders are left out.

        Raises :class:`InputError` naming ``commit:path``: a file past :data:`~passprice.schema.MAX_TOML_BYTES`
        (with its size), a submodule, a symbolic link where passprice reads a file (:func:`passprice.gitread.linked`),
        a blob missing from the repository; and when the files add up past :data:`~passprice.gitread.MAX_SIDE_BYTES`
        or their count past :data:`~passprice.gitread.MAX_SIDE_FILES` (of ``facts/`` files, past
        :data:`~passprice.gitread.MAX_SIDE_FACT_FILES`); and what ``judge`` raises, called with the files read before
        any is written (:func:`refuse_lockless`)."""
        specs = [f"{self.prefix}{folder}" for folder in folders]
        listing = self._listing(commit, specs)
        wanted: dict[str, int] = {}
        names: list[tuple[str, str]] = []
        past: dict[str, gitread.Unread] = {}  # each record past its reader's cap, by path: never read
        unread: set[str] = set()
        blobs: dict[str, tuple[str, int]] = {}  # each unread file's blob and size: an excerpt's is written out
        links: dict[str, tuple[str, int]] = {}
        lock_links: dict[str, tuple[str, int]] = {}
        total = 0
        cap = gitread.side_files_cap()
        fact_cap, facts = gitread.side_fact_files_cap(), 0
        for record in os.fsdecode(listing).split("\0"):
            if not record:
                continue
            meta, _, name = record.partition("\t")
            mode, kind, obj, size = meta.split()
            if not name.startswith(self.prefix):
                continue
            if not size.isdigit() and kind == "blob":
                # git's `ls-tree -l` says BAD of a blob it cannot find (a partial clone's, not fetched): was a
                # traceback (attack round 30).
                raise InputError(f"{commit[:12]}:{name}: object {obj} is missing from the repository")
            rel = name[len(self.prefix) :]
            if kind == "commit":
                raise gitread.submodule(name, f"at {commit[:12]}")
            # A hidden file's name is read as check and price read it (locks/.x.lock.toml is a lock to them); a
            # hidden folder is no folder of the registry.
            if kind != "blob" or any(part.startswith(".") for part in rel.split("/")[:-1]):
                continue
            folder = next((f for f in _parents(rel) if f.startswith("locks/") and gitread.read_by_passprice(f)), None)
            if folder is not None:  # locks/x.lock.toml/a: a checkout's check fails the folder; it read "removed"
                raise gitread.not_a_file(f"{self.prefix}{folder}", S_IFDIR, f"at {commit[:12]}")
            if mode == "120000":
                if gitread.lock_of_locks(rel) and size.isdigit():
                    lock_links[rel] = (obj, int(size))  # perhaps a second name of a lock beside it: read below
                    continue
                if _read_here(rel) or gitread.registry_folder(rel):
                    raise gitread.linked(name, f"at {commit[:12]}")
                if gitread.registry_folder(rel.rpartition("/")[0]):
                    links[name] = (obj, int(size))  # locks/sub → ../archive: a folder check would find there
                continue
            if not _read_here(rel):
                unread.add(rel)  # a file passprice never reads is not read here either (a .bin, a README)
                blobs[rel] = (obj, int(size))
                continue
            if int(size) > schema.MAX_TOML_BYTES:
                raise InputError(gitread.too_large(f"{commit[:12]}:{name}", int(size)))
            if (most := blob_cap(rel)) is not None and int(size) > most:
                # Read whole, a 64 MB card of each kind cost the review 2.8-3.4 s of CPU and 372 MB that its kind's
                # cap refuses at 256 KiB anyway (issue 13, tests/test_blobcap156.py), and a 60 MB schema or module
                # 64 MiB more: never read, but written as a sparse file of its size, which its reader refuses by
                # its size in its own line, so the review reports the file with the rest, as it reports a work
                # tree's (tests/test_blobcap162.py).
                past[rel] = gitread.Unread(obj, int(size))
            else:
                # Every name counts, a copy too: each is written out, and the code's read again
                # (sidecode.code_changes). Counted once a blob, 200 names of one 4 MiB module (14 KB packed) wrote
                # 800 MB and took the review to 892 MB of memory, and 4,000 names of one 64 MiB file would write
                # 256 GB (attack round 37).
                total += int(size)
                if total > gitread.MAX_SIDE_BYTES:
                    raise gitread.side_too_large(commit[:12], total)
                wanted[obj] = int(size)
            names.append((rel, obj))
            if len(names) > cap:  # before a byte of them is read
                raise gitread.side_too_many(commit[:12], cap)
            if gitread.holds_facts(rel):
                facts += 1
                if facts > fact_cap:
                    raise gitread.side_too_many_facts(commit[:12], fact_cap)
        contents = gitread.read_blobs(self.top, wanted)
        files: dict[str, bytes] = {}
        for rel, obj in names:
            if rel in past:
                files[rel] = past[rel]
                continue
            if obj not in contents:
                raise gitread.not_a_blob(self.top, f"{commit[:12]}:{self.prefix}{rel}", obj)
            files[rel] = contents[obj]
        aliases = self._lock_aliases(commit, lock_links, files)
        if judge is not None:
            judge(files)
        for folder in ("facts", "registry"):
            make_folders(dest / folder)
        # Each folder made once, each file written through its path as text: a branch adding 3,700 lock files had
        # 8,300 files written (both sides), each through pathlib objects and a walk up its folders (issue 13, speed48).
        top = os.fspath(dest)
        made: set[str] = set()
        for rel, data in files.items():
            folder = rel.rpartition("/")[0]
            if folder not in made:
                make_folders(os.path.join(top, folder))
                made.add(folder)
            with open(os.path.join(top, rel), "wb") as out:
                if isinstance(data, gitread.Unread):
                    out.truncate(data.size)  # past its cap: a sparse file of its size, no byte written or read
                else:
                    out.write(data)
        for rel, target in aliases.items():
            # What a checkout of the revision holds: the link, which check judges as the lock it leads to and warns
            # of (passprice.check.alias_lines), as the review's check of the side does
            make_folders(dest / "locks")
            os.symlink(target, dest / rel)
        for folder in {rel.rpartition("/")[0] for rel in unread}:
            make_folders(dest / folder)  # the tree's shape: a folder named x.toml is one
        for rel in unread:
            if rel.endswith(".toml") and not (dest / rel).exists():
                # Named, not read: a record in a folder passprice does not read (locks/sub/x.lock.toml) is found by
                # check's stray-folder rule on a revision as in a work tree (it counts names, opens nothing).
                (dest / rel).touch()
        for rel, records in self._linked_folders(commit, links).items():
            # What a checkout of the revision holds there: a folder (through the link) of records, which check's
            # stray-folder rule counts (locks/sub → ../archive, committed: the review said "no changes", exit 0).
            make_folders(dest / rel)
            for record in records:
                (dest / rel / record).touch()
        named = _named_by_sources(files) | _excerpts_named(files)
        # A source's document kept in the registry (or its stored excerpt, sources/excerpts/X.txt: walk107): its
        # existence is what is checked. One outside the folders
        # listed (`notes/routing.md`, as the README's source record names) is looked up at the revision too: left
        # out, every review whose BASE held it said "BASE cannot price" (session 15's walkthrough).
        for rel in (named & unread) | self._documents_elsewhere(commit, named - unread - set(files)):
            make_folders((dest / rel).parent)
            (dest / rel).touch()
        # A stored excerpt within the cap audit reads one under holds its bytes: check compares them with the
        # record's excerpt_sha256, and the review checks a re-cited fact's quotes in them (tests/test_walk128.py).
        from passprice.sources import EXCERPT_BYTES

        excerpts = {rel: blobs[rel] for rel in _excerpts_named(files) & unread if blobs[rel][1] <= EXCERPT_BYTES}
        if excerpts:
            texts = gitread.read_blobs(self.top, {obj: size for obj, size in excerpts.values()})
            for rel, (obj, _size) in excerpts.items():
                if obj in texts:
                    (dest / rel).write_bytes(texts[obj])
        return files

    def _lock_aliases(self, commit: str, links: dict[str, tuple[str, int]], files: dict[str, bytes]) -> dict[str, str]:
        """Of ``links`` (each symbolic link of ``locks/`` at ``commit`` named like a lock file, by path relative to
        the root, with its blob and size), each that is a second name of a lock file of ``files`` beside it
        (:func:`passprice.gitread.lock_alias`), with its text (the target's plain name). Raises
        :func:`passprice.gitread.linked` for any other (a link's text is at most 255 bytes, a file name: one past it
        is no such link and is not read)."""
        small = {obj: size for obj, size in links.values() if size <= 255}
        texts = gitread.read_blobs(self.top, small) if small else {}
        out: dict[str, str] = {}
        for rel, (obj, _size) in links.items():
            target = os.fsdecode(texts[obj]) if obj in texts else ""
            aliased = gitread.lock_alias(rel, target)
            if aliased is None or aliased not in files:
                raise gitread.linked(f"{self.prefix}{rel}", f"at {commit[:12]}")
            out[rel] = target
        return out

    def _listing(self, commit: str, specs: list[str]) -> bytes:
        """``git ls-tree -r -l -z --full-tree COMMIT -- SPECS``'s output. When ``specs`` are folders of :data:`FOLDERS`
        and :data:`CODE` under a prefix without pathspec magic, the records are taken from one listing of all of them
        at ``commit``, made once (round 26: ``diff`` listed the registry's folders and the code apart, a git process
        each a side): a record is kept when its path is a spec or lies under one, as git matches a plain pathspec;
        the listing is in git's path order, so each subset is too."""
        plain = not any(c in self.prefix for c in "*?[]\\:!") and all(
            s[len(self.prefix):] in (*FOLDERS, CODE) for s in specs)
        if not plain:
            return _run_git(self.top, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *specs])
        if commit not in self._listed:
            every = [f"{self.prefix}{folder}" for folder in (*FOLDERS, CODE)]
            self._listed[commit] = _run_git(self.top, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--",
                                                       *every])
        heads = tuple(os.fsencode(s) for s in specs)
        under = tuple(h + b"/" for h in heads)
        kept = []
        for record in self._listed[commit].split(b"\0"):
            name = record.partition(b"\t")[2]
            if record and (name in heads or name.startswith(under)):
                kept.append(record + b"\0")
        return b"".join(kept)

    def exports(self, commit: str, rels: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """The files of ``rels`` (relative to the root) that ``git archive`` of ``commit`` leaves out or expands
        (:func:`passprice.gitread.revision_exports`), read from the same rule files as :meth:`rewrites`. Raises as
        it does."""
        return gitread.revision_exports(self.top, self.prefix, commit, self._attribute_blobs(commit), rels)

    def _attribute_blobs(self, commit: str) -> dict[str, str]:
        """The ``.gitattributes`` files at ``commit`` that :meth:`rewrites` reads, each path from the top → blob (one
        ``git ls-tree`` a commit, kept)."""
        import posixpath

        if commit in self._attributes:
            return self._attributes[commit]

        parts = [p for p in self.prefix.split("/") if p]
        above = [posixpath.join(*parts[:n], ".gitattributes") for n in range(len(parts) + 1)]
        below = [f"{self.prefix}{folder}" for folder in (*FOLDERS, CODE)]
        listing = _run_git(self.top, ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit, "--",
                                      *above, *below])
        attributes: dict[str, str] = {}
        for record in os.fsdecode(listing).split("\0"):
            meta, _, name = record.partition("\t")
            fields = meta.split()
            if len(fields) == 3 and fields[1] == "blob" and posixpath.basename(name) == ".gitattributes":
                attributes[name] = fields[2]
        self._attributes[commit] = attributes
        return attributes

    def rewrites(self, commit: str, rels: Iterable[str], pinned: Iterable[str] = ()) -> list[str]:
        """The lines refusing the files ``rels`` (relative to the root) that a checkout of ``commit`` rewrites by a
        ``.gitattributes`` rule (:func:`passprice.gitread.revision_rewrites`): its ``.gitattributes`` files at the
        repository's top, in each folder down to the root, and in the folders :data:`FOLDERS` (and the code) below
        it; and the files ``pinned`` (read byte for byte) whose line ends it writes as CRLF
        (:data:`passprice.gitread.LINE_ENDS`). Raises :class:`InputError` naming an oversized ``.gitattributes``."""
        return gitread.revision_rewrites(self.top, self.prefix, commit, self._attribute_blobs(commit), rels, pinned)

    def _documents_elsewhere(self, commit: str, names: Iterable[str]) -> set[str]:
        """The paths of ``names`` (relative to the root: registry documents that sources name, outside the folders
        :meth:`materialize` lists) that are regular files at ``commit``, as a checkout would hold them; a path
        leading out of the root, not plain (:func:`_plain_inside`: a NUL in it, ``sources/a\\u0000b``, was a
        ValueError traceback out of ``diff``, tests/test_attack121.py), or naming a link or a folder there is left out
        (check's problem)."""

        wanted = sorted({n for n in names if _plain_inside(n)})
        if not wanted:
            return set()
        try:
            listing = _run_git(self.top, ["--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--",
                                          *(f"{self.prefix}{n}" for n in wanted)])
        except subprocess.CalledProcessError:
            return set()
        found: set[str] = set()
        for record in os.fsdecode(listing).split("\0"):
            meta, _, name = record.partition("\t")
            fields = meta.split()
            if len(fields) == 3 and fields[0] in ("100644", "100755") and name.startswith(self.prefix):
                rel = name[len(self.prefix):]
                if rel in wanted:
                    found.add(rel)
        return found

    def _linked_folders(self, commit: str, links: Mapping[str, tuple[str, int]]) -> dict[str, list[str]]:
        """For each symbolic link of ``links`` (its path from the repository's top → its blob and the blob's size),
        each directly in a folder passprice lists (``locks/sub``) under a name it does not read: the ``.toml`` names
        of the folder the link leads to at ``commit``, by the link's path relative to the root (only links that lead
        to such a folder). A checkout's ``check`` follows the link, and fails a folder of records inside ``locks/``
        (:func:`passprice.registry.stray_folders`); left out, the review of that commit said "no changes".

        Raises :class:`InputError` (:func:`passprice.gitread.linked`) for a link leading outside the repository
        (absolute, or above its top) or with a target longer than a path: what it names cannot be read at
        ``commit``."""

        if not links:
            return {}
        texts = gitread.read_blobs(self.top, {obj: size for obj, size in links.values() if size <= 4096})
        out: dict[str, list[str]] = {}
        for name, (obj, _) in sorted(links.items()):
            text = os.fsdecode(texts.get(obj, b""))
            target = self._through_links(commit, name, _link_target(name, text, commit))
            if target is None:
                continue  # a loop, or a path naming nothing at the revision: no folder in a checkout either
            listing = _run_git(self.top, ["--literal-pathspecs", "ls-tree", "-z", "--name-only", "--full-tree",
                                          commit, "--", f"{target}/"])
            records = sorted({
                entry.rpartition("/")[2] for entry in os.fsdecode(listing).split("\0") if entry.endswith(".toml")
            })
            if records:
                out[name[len(self.prefix) :]] = records
        return out

    def _through_links(self, commit: str, name: str, target: str) -> str | None:
        """``target`` (a path from the repository's top, the link ``name`` leads to) with every link along it at
        ``commit`` followed, as a checkout's file system follows them: the folder path it names, or ``None`` when it
        names nothing there or the links loop (more than :data:`LINK_HOPS`, the kernel's ELOOP). A chain (``locks/sub
        → ../via``, ``via → archive``) was listed as ``via/``, a link at the revision, and found empty (attack round
        21: the review said "no changes" while a checkout's check failed the folder of locks it leads to).

        Raises :class:`InputError` (:func:`passprice.gitread.linked`) for a link along the way leading outside the
        repository."""
        import posixpath

        parts, done, hops = [p for p in target.split("/") if p not in ("", ".")], "", 0
        while parts:
            here = posixpath.join(done, parts[0]) if done else parts[0]
            listing = _run_git(self.top, ["--literal-pathspecs", "ls-tree", "-l", "-z", "--full-tree", commit, "--",
                                          here])
            record = os.fsdecode(listing).split("\0")[0]
            meta, _, found = record.partition("\t")
            fields = meta.split()
            if found != here or len(fields) != 4:
                return None
            mode, kind, obj, size = fields
            if mode == "120000":
                hops += 1
                if hops > LINK_HOPS or not size.isdigit() or int(size) > 4096:
                    return None
                text = os.fsdecode(gitread.read_blobs(self.top, {obj: int(size)}).get(obj, b""))
                parts = [p for p in _link_target(here, text, commit, name).split("/") if p not in ("", ".")] + parts[1:]
                done = ""
                continue
            if kind != "tree":
                return None
            done, parts = here, parts[1:]
        return done or "."

    def documents(self, commit: str, names: Iterable[str]) -> dict[str, str]:
        """The identity (:func:`passprice.sourcechange.document_digest`) of each registry document of ``names``
        (paths relative to the root) at ``commit``: its bytes' digest, read within :data:`DOCUMENT_READ_BYTES`
        (past it, streamed through :func:`passprice.gitread.blob_sha256`; its blob id if git gives none); a link's own
        target text; none for a path that names no file there."""

        from passprice.sourcechange import document_digest

        # Only a plain path inside the root is looked up (one leading out is check's problem, never read).
        wanted = sorted({n for n in names if _plain_inside(n)})
        if not wanted:
            return {}
        try:
            listing = _run_git(self.top, ["ls-tree", "-l", "-z", "--full-tree", commit, "--",
                                          *(f"{self.prefix}{n}" for n in wanted)])
        except subprocess.CalledProcessError:
            return {}
        blobs: dict[str, tuple[str, int]] = {}
        for record in os.fsdecode(listing).split("\0"):
            meta, _, name = record.partition("\t")
            fields = meta.split()
            if len(fields) == 4 and fields[1] == "blob" and fields[3].isdigit() and name.startswith(self.prefix):
                blobs[name[len(self.prefix):]] = (fields[2], int(fields[3]))
        # Read whole within DOCUMENT_READ_BYTES; a larger one streamed (below), not held: read whole up to 64 MiB,
        # documents of 60 MB each were held in memory together (tests/test_blobcap162.py).
        small = {obj: size for obj, size in blobs.values() if size <= DOCUMENT_READ_BYTES}
        contents = gitread.read_blobs(self.top, small)
        # A document past the cap is hashed as git streams it: its identity was its blob id, which a source's
        # sha256 never equals (a 64 MiB + 1 document under its right sha256 failed the review of its revision, exit
        # 2, while check passed it: attack round 36).
        streamed = {obj: (rel, size) for rel, (obj, size) in sorted(blobs.items()) if obj not in contents}
        total = sum(size for _, size in streamed.values())
        if total > gitread.HASHED_BYTES:  # a blob's size is not its cost in the repository (left92)
            rel, size = max(streamed.values(), key=lambda pair: pair[1])
            more = f" ({len(streamed):,} documents, {total:,} bytes in all)" if len(streamed) > 1 else ""
            raise InputError(
                f"{escaped(self.prefix + rel)} at {commit[:12]}: {size:,} bytes as committed{more}, past the "
                f"{gitread.HASHED_BYTES:,} bytes of documents passprice hashes from a revision (gitread.HASHED_BYTES; "
                "a few bytes of a pack can hold gigabytes): not hashed; keep so large a document outside the "
                "registry, or record a smaller copy of it"
            )
        large = {obj: gitread.blob_sha256(self.top, obj) for obj in streamed}
        return {rel: document_digest(contents[obj]) if obj in contents
                else f"sha256:{large[obj]}" if large.get(obj) is not None else f"blob:{obj}"
                for rel, (obj, _) in blobs.items()}

    def submodules(self) -> None:
        """Refuse a submodule the index holds inside the compared folders (``git ls-files --stage``: mode
        ``160000``), checked out or not. Raises :class:`InputError` naming it."""
        specs = [f"{self.prefix}{folder}" for folder in FOLDERS]
        listing = _run_git(self.top, ["ls-files", "--stage", "-z", "--", *specs])
        for record in os.fsdecode(listing).split("\0"):
            if record.startswith("160000 "):
                raise gitread.submodule(record.partition("\t")[2])


#: The links a path may pass through before it is a loop (Linux's ``MAXSYMLINKS``, the ELOOP limit).
LINK_HOPS = 40
#: The most bytes of a revision's registry document (a source's ``source.path``, an install file) that
#: :meth:`Checkout.documents` reads whole to hash: a larger one is streamed through git (within
#: :data:`passprice.gitread.HASHED_BYTES` in all), never held: the most an audit reads of a stored excerpt
#: (:data:`passprice.sources.EXCERPT_BYTES`).
DOCUMENT_READ_BYTES = 1 << 20


def blob_cap(rel: str) -> int | None:
    """The most bytes any reader of the file at ``rel`` (a POSIX path from the root) reads it within, so that a
    revision's blob past it is not read (:meth:`Checkout.materialize` writes a sparse file of its size, which that
    reader refuses by its size): for a registry record (``facts/``, ``registry/``, ``locks/``, ``sources/``) its
    kind's cap (:func:`passprice.schema.kind_cap` of :func:`file_kind`'s kind, ``other`` for a lock folder's or a
    measurement's record), and never less than :data:`passprice.schema.MAX_FILE_BYTES`, within which the source
    listing reads a source record whatever ``PASSPRICE_MAX_FILE_BYTES`` says; for ``schema/*.json`` (and the code's
    copy, ``src/passprice/_data/schema/*.json``) :data:`passprice.schema.MAX_SCHEMA_BYTES`; for a module of the code
    (``src/passprice/**.py``), compiled code there (:func:`passprice.sidecode.compiled_name`), its package data
    (:func:`passprice.sidecode.package_data`) and the build's files (:data:`passprice.sidecode.BUILD_FILES`)
    :data:`passprice.pins.MODULE_BYTES`, as the side's code reads them; for the list of pricing models
    (:data:`passprice.modellist.LISTED`) :data:`passprice.modelhistory.KNOWN_BYTES` (each was read to 64 MiB:
    tests/test_blobcap169.py). ``None`` for any other file (only
    :data:`passprice.schema.MAX_TOML_BYTES` applies). Raises :class:`InputError` as
    :func:`passprice.schema.kind_cap` does (a bad ``PASSPRICE_MAX_FILE_BYTES``)."""
    from passprice.modelhistory import KNOWN_BYTES
    from passprice.modellist import LISTED
    from passprice.pins import MODULE_BYTES
    from passprice.sidecode import BUILD_FILES, compiled_name, package_data

    top = rel.split("/")[0]
    if top in ("facts", "registry", "locks", "sources"):
        return max(schema.kind_cap(file_kind(rel)[0]), schema.MAX_FILE_BYTES)
    if (top == "schema" or rel.startswith(f"{CODE}/_data/schema/")) and rel.endswith(".json"):
        return schema.MAX_SCHEMA_BYTES
    if rel == LISTED:
        return KNOWN_BYTES
    if rel.startswith(f"{CODE}/") and (rel.endswith(".py") or compiled_name(rel.rpartition("/")[2])
                                       or package_data(rel[len(CODE) + 1:])):
        return MODULE_BYTES
    if rel in BUILD_FILES or (rel.startswith("src/") and rel.count("/") == 1 and rel.endswith(".pth")):
        return MODULE_BYTES
    return None


def _raise(error: InputError) -> None:
    """Raise ``error`` (for a callback that refuses)."""
    raise error


def _parents(rel: str) -> list[str]:
    """The folders ``rel`` (a POSIX path) lies in, outermost first: ``a/b/c`` → ``a``, ``a/b``."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _read_here(rel: str) -> bool:
    """Whether a review reads the file at ``rel`` of a revision (a POSIX path from the root): what passprice reads
    (:func:`passprice.gitread.read_by_passprice`), and the code's list of pricing models
    (:data:`passprice.modellist.LISTED`), which the review compares (slip 56), and compiled code in the code's folder
    (:func:`passprice.sidecode.compiled_name`), which Python imports in place of a module's source: left unread, a
    committed ``__pycache__/schema.cpython-311.pyc`` moved a locked price unseen (tests/test_attack114.py); and the
    JSON Schemas a built package's copy holds in the code's folder (``src/passprice/_data/schema/*.json``), which the
    code validates against in place of the checkout's ``schema/`` (:func:`passprice.sidecode.schema_folder`); and
    what the build reads or installs beside the package (:data:`passprice.sidecode.BUILD_FILES`), and the package's
    data (:func:`passprice.sidecode.package_data`: ``templates/facts.yml``), compared by
    :func:`passprice.sidecode.code_changes`."""
    from passprice.modellist import LISTED
    from passprice.sidecode import BUILD_FILES, compiled_name, package_data

    return (gitread.read_by_passprice(rel) or rel == LISTED
            or (rel.startswith(f"{CODE}/") and compiled_name(rel.rpartition("/")[2]))
            or (rel.startswith(f"{CODE}/_data/schema/") and rel.endswith(".json")) or rel in BUILD_FILES
            or (rel.startswith(f"{CODE}/") and package_data(rel[len(CODE) + 1:])))


def _link_target(link: str, text: str, commit: str, named: str | None = None) -> str:
    """Where the link at ``link`` (a path from the repository's top) holding ``text`` leads, normalized, from the
    top. Raises :class:`InputError` (:func:`passprice.gitread.linked`, naming ``named``, default ``link``) for one
    empty, absolute or leading above the top: what it names cannot be read at ``commit``."""
    import posixpath

    target = posixpath.normpath(posixpath.join(posixpath.dirname(link), text))
    if not text or text.startswith("/") or target == ".." or target.startswith("../"):
        raise gitread.linked(named or link, f"at {commit[:12]}, leading outside the repository")
    return target


def _plain_inside(rel: str) -> bool:
    """Whether ``rel`` (a path a source record names) is a plain relative path inside the root, as git is asked of
    one: normalized, not absolute, not leading out, holding no NUL or control character (one that is not is
    ``check``'s problem, never looked up)."""
    import posixpath

    return (bool(rel) and rel == posixpath.normpath(rel) and not posixpath.isabs(rel) and rel != ".."
            and not rel.startswith("../") and rel.isprintable())


def _named_by_sources(files: Mapping[str, bytes]) -> set[str]:
    """The ``source.path`` each source file of ``files`` names (a document of the registry itself), as written."""
    named: set[str] = set()
    for rel, data in files.items():
        if not rel.startswith("sources/"):
            continue
        path = _source_path(data)
        if path is not None:
            named.add(path)
    return named


def _excerpts_named(files: Mapping[str, bytes]) -> set[str]:
    """The ``source.excerpt`` each source file of ``files`` names (the stored text that was read), as written: a
    revision's side holds it as an empty file, as it holds a ``source.path`` document, so ``check`` on the side finds
    it there (walk107: the excerpts, moved to ``sources/excerpts/``, are files no review reads)."""
    named: set[str] = set()
    for rel, data in files.items():
        if rel.startswith("sources/"):
            excerpt = _source_paths(data)[1]
            if excerpt is not None:
                named.add(excerpt)
    return named


@functools.lru_cache(maxsize=4096)
def _source_path(data: bytes) -> str | None:
    """The ``source.path`` the source file holding ``data`` names, or ``None`` (none, or the file does not parse:
    the source's own read reports it). Kept by the bytes, as :func:`_source_paths` (which parses each once)."""
    return _source_paths(data)[0]


@functools.lru_cache(maxsize=4096)
def _source_paths(data: bytes) -> tuple[str | None, str | None]:
    """The ``source.path`` and ``source.excerpt`` the source file holding ``data`` names, each ``None`` when it names
    none (or the file does not parse: the source's own read reports it). Kept by the bytes: a revision's sources are
    asked for twice as it is opened (the empty documents written into its folder, then their identities), and were
    parsed twice."""
    if len(data) > schema.kind_cap("source"):  # not parsed (issue 13): the source's own read refuses it
        return None, None
    try:
        document = schema.toml_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None, None
    source = document.get("source")
    if not isinstance(source, dict):
        return None, None
    path, excerpt = source.get("path"), source.get("excerpt")
    return (str(path) if isinstance(path, str) else None, str(excerpt) if isinstance(excerpt, str) else None)


def folder_files(folder: Path) -> dict[str, bytes]:
    """The files passprice reads below ``folder``'s :data:`FOLDERS`, by POSIX path relative to ``folder``, hidden
    files left out (:func:`passprice.gitread.work_tree_files`: each sized before it is read, nothing else read; one
    past :func:`blob_cap` not read whole, its git blob id taken as it is hashed in chunks).
    Raises :class:`InputError` for a file past the cap or a submodule."""
    return gitread.work_tree_files(folder, FOLDERS, blob_cap)


#: More files than this under ``locks/`` of one side that are no lock (no ``[lock]`` table) refuse the side in one line
#: (:func:`refuse_lockless`): a reviewer needs the first, not 3,700 lines of the same refusal (issue 13, diff59).
MAX_LOCKLESS = 100


def refuse_lockless(side: str, files: Mapping[str, bytes]) -> None:
    """Raise one :class:`InputError` line when more than :data:`MAX_LOCKLESS` of ``files`` (a side's, by path from its
    root, with their bytes) are locks by their path (``locks/NAME.lock.toml``) holding no ``[lock]`` table: their
    count and the first one's refusal (:func:`passprice.locks.lockless_line`), named by ``side`` (``HEAD``,
    ``BASE``). Told from the bytes alone, before the side's tree is written or a file of it parsed: a branch adding
    3,700 files ``x = 1`` under ``locks/`` cost ``diff`` 2.8 s of CPU and printed 3,789 lines. Raises nothing for
    :data:`MAX_LOCKLESS` or fewer (each then refused by its own line, as ever)."""
    from passprice.locks import lockless_line

    lockless = [rel for rel, data in files.items() if file_kind(rel)[0] == "lock" and b"[lock]" not in data
                and not isinstance(data, gitread.Unread)]  # past its cap, unread: refused by its size
    if len(lockless) <= MAX_LOCKLESS:
        return
    first = min(lockless)
    line = lockless_line(Path(first), files[first]) or first
    raise InputError(
        f"{side}: {len(lockless):,} files under locks/ are no lock (past {MAX_LOCKLESS}, the side is refused whole); "
        f"the first: {line}"
    )


def refuse_unread_locks(role: str, side: Side, paths: Sequence[str]) -> None:
    """Raise one :class:`InputError` line when more than :data:`MAX_LOCKLESS` of the locks at ``paths`` (the files
    of ``side`` that differ from the other side's, in order) do not read (:func:`passprice.locks.read_lock`), named by
    ``role`` (``HEAD``, ``BASE``) and the side's label: how many lock files it was looking at and the first one's
    refusal. It stops at the first past :data:`MAX_LOCKLESS`: 3,700 files ``[lock]`` + ``x = {i}`` (so not told from
    their bytes, :func:`refuse_lockless`) cost ``diff`` 7.5 s of CPU, each validated against the lock's schema and
    printed by its own line. Read inside the comparison's snapshot, a lock read here is not read again by the
    comparison, the review or the pins' checks. Where more than :data:`MAX_LOCKLESS` of them surely do not read
    (:func:`surely_unread`), it stops at the first that does not. Raises nothing for :data:`MAX_LOCKLESS` or
    fewer."""
    locks = [rel for rel in paths if file_kind(rel)[0] == "lock"]
    if len(locks) <= MAX_LOCKLESS:
        return
    # Where more than MAX_LOCKLESS surely fail (told from their bytes, surely_unread), the first that does not read
    # words the refusal: it is read in order alone (speed48: 1 lock parsed, not 101).
    sure = sum(1 for rel in locks if surely_unread(side.files[rel])) > MAX_LOCKLESS
    unread: list[str] = []
    for rel in locks:
        try:
            data = side.files[rel]
            if isinstance(data, gitread.Unread):  # past its cap, unread (and, before HEAD's tree is written, absent)
                schema.require_size(side.root.path / rel, "lock", data.size)
            read_lock(side.root.path / rel, side.root.schema)
        except InputError as e:
            unread.append(side.local(problem_lines(e)[0]))
            if sure or len(unread) > MAX_LOCKLESS:
                raise _unread_locks(role, side, len(locks), unread[0]) from None


def _unread_locks(role: str, side: Side, count: int, first: str) -> InputError:
    """The refusal of ``side`` (named by ``role``) by more than :data:`MAX_LOCKLESS` of its ``count`` differing lock
    files not reading, ``first`` the first one's line (:func:`refuse_unread_locks`)."""
    return InputError(
        f"{role} {side.info.label}: more than {MAX_LOCKLESS} of its {count:,} lock files that differ from the other "
        f"side's do not read (the side is refused whole); the first: {first}"
    )


def refuse_unread_before_writing(base: Side, label: str, head: Path, files: Mapping[str, bytes]) -> None:
    """Raise what :func:`_compare` raises first (:func:`refuse_unread_locks`, BASE's line, else HEAD's) when more
    than :data:`MAX_LOCKLESS` of the lock files of HEAD (the revision ``label``, whose ``files`` are about to be
    written into the folder ``head``) that differ from ``base``'s surely do not read (:func:`surely_unread`): told
    from the bytes, before HEAD's tree is written. A branch adding 3,700 files ``[lock]`` + ``x = {i}`` had its
    4,160 files written (0.8 s of the kernel's time, under load, of a 1.2 s ``diff``), then was refused by them. The
    locks are read in a snapshot of their own holding these very bytes, as the comparison's would; where the side is
    not surely refused nothing is read, and the comparison judges it as ever (a branch adding thousands of locks that
    read is not read twice). Raises nothing when fewer surely fail: ``_compare`` then judges the side."""
    from passprice import snapshot

    paths = sorted(p for p in {*base.files, *files} if base.files.get(p) != files.get(p))
    ours = [p for p in paths if p in files]
    locks = [p for p in ours if file_kind(p)[0] == "lock"]
    if len(locks) <= MAX_LOCKLESS or sum(1 for p in locks if surely_unread(files[p])) <= MAX_LOCKLESS:
        return
    side = Side(SideInfo(label), Root(head), files)
    with snapshot.reading():
        for one in (base, side):
            for rel, data in one.files.items():
                if file_kind(rel)[0] == "lock" and not isinstance(data, gitread.Unread):  # unread: read by size
                    snapshot.file_bytes(one.root.path / rel, _given(data))
        refuse_unread_locks("BASE", base, [p for p in paths if p in base.files])
        refuse_unread_locks("HEAD", side, ours)
    # Not reached while surely_unread is sure; were it not, the side is written and compared as ever.


def surely_unread(data: bytes) -> bool:
    """Whether the bytes ``data`` of a lock file surely do not read as a lock (:func:`passprice.locks.read_lock`
    raises for them whatever else holds), told without parsing them: in a text with no ``\\u`` or ``\\U`` escape
    (by which a quoted key can spell a name without its letters), no mention at all of a key the lock schema requires
    at the top (:func:`passprice.schema.required_at_top`: ``lock``, ``policy``, ``price`` …), so the document cannot
    hold it. (No ``[lock]`` header is not enough: ``lock.format = 2`` makes the table too.) ``False`` says nothing (a
    lock that reads, or one refused otherwise). A few byte searches a file: a branch adding thousands of locks that
    read pays no parse for the question."""
    if b"\\u" in data or b"\\U" in data:
        return False
    return any(key.encode("utf-8") not in data for key in schema.required_at_top("lock"))


def _is_root(folder: Path) -> bool:
    return is_folder(folder / "facts") and is_folder(folder / "registry")


# --- what changed --------------------------------------------------------------------------------------------------


def file_kind(rel: str) -> tuple[str, str]:
    """The kind of the file at ``rel`` (``card``, ``draft``, ``checkpoint``, ``serving``, ``lock``, ``schema`` or
    ``other``) and its entry name (the file name less its suffix)."""
    parts = rel.split("/")
    name = parts[-1]
    if len(parts) == 3 and name.endswith(".toml"):
        stem = name[: -len(".toml")]
        folder = "/".join(parts[:2])
        for where, kind in (
            ("facts/cards", "card"),
            ("facts/drafts", "draft"),
            ("facts/routing", "routing"),
            ("facts/stacks", "stack"),
            ("registry/checkpoints", "checkpoint"),
            ("registry/servings", "serving"),
        ):
            if folder == where:
                return kind, stem
    if len(parts) == 2 and parts[0] == "locks" and name.endswith(".lock.toml"):
        return "lock", name[: -len(".lock.toml")]
    if len(parts) == 2 and parts[0] == "schema" and name.endswith(".json"):
        return "schema", name[: -len(".json")]
    if len(parts) == 2 and parts[0] == "sources" and name.endswith(".toml"):
        return "source", name[: -len(".toml")]
    return "other", name


@attrs.frozen
class FactChange:
    """One fact added, removed or changed: its ``path`` in its file (``memory.bandwidth``, ``acceptance.1``), the
    ``lock_path`` a lock names it by (``memory.bandwidth``, ``draft.acceptance.1``), and the ``old`` and ``new`` fact
    (``None`` on the side that lacks it)."""

    path: str
    lock_path: str
    old: Fact | None
    new: Fact | None
    #: For an added fact, what a reviewer must verify of it (:func:`passprice.addedfacts.asked`: its citation names
    #: no registered source, or another fact records another figure at the place it cites); ``None``: nothing.
    asked: str | None = None
    #: For an added card fact whose own citation (source and locator) is another card's fact's
    #: (:func:`copied_citations`): that fact, ``h100_sxm5_80gb's memory.capacity``, a copied
    #: citation to verify (its :attr:`asked` says so), counted once in the summary; ``None`` otherwise.
    copied_from: str | None = None
    #: The sources a changed or added fact's new citation (its own, or a figure input's) names that the same change
    #: adds (``sources/ID.toml`` on HEAD, not on BASE) and the old fact (if any) did not cite: nothing the registry
    #: recorded before the change backs what it cites them for (:attr:`to_verify` says so).
    fresh_sources: tuple[str, ...] = ()
    #: For a fact fitted again to the same runs (its runs and their figures as before, its fit's errors moved): the
    #: records the same change moved that those runs are priced on, ``card rtx_4090 (memory.bandwidth,
    #: streams.rewrite)``, ``checkpoint NAME`` or ``routing NAME`` (:func:`_moved_under_runs`); empty when none did.
    #: Such a fit moved with them, not by hand (left45: the RTX 4090's bandwidth 1008 → 1010 GB/s re-fitted
    #: llamacpp-cuda-2405, and four facts read as changed at their own values, ``overhead.pass 0 µs → 0 µs``).
    moved_with: tuple[str, ...] = ()
    #: For a fact re-cited to another source whose locator still names a file it named under the old one: each such
    #: file that the new source's record (its title, address, ``read``, ``note``, ``copies``) names nowhere, by its
    #: path as the locator writes it (:func:`_foreign_files`; left60: a citation moved from the Azure guide to
    #: xytpai-nvbench under ``Azure_Results/ND_H200_v5_results.md`` read only the generic "its citation changed").
    foreign_files: tuple[str, ...] = ()
    #: For a changed or added fact whose quotes changed (its locator, or a derivation input's, or the source they
    #: cite): ``audit``'s quote check of HEAD's fact against HEAD's stored excerpts
    #: (:func:`passprice.audit.quote_check`, :func:`_quotes_checked`); ``None`` when not made. A new user's
    #: re-citation quoting 'GPU Memory Bandwidth 4.89TB/s', which the stored excerpt lacks, read only "its locator
    #: quotes 4.89TB/s" where audit said NOT FOUND.
    quote: QuoteCheck | None = None
    #: The sources whose stored excerpt :attr:`quote` read that the same change edited (its own section's text, or
    #: the excerpt re-pointed or first named): found there, a quote shows only that the change wrote both (a value
    #: moved, the excerpt edited to state it and re-pinned read "checked"; tests/test_left131.py). Empty when none.
    excerpts_edited: tuple[str, ...] = ()
    #: For a changed fact whose old quotes :func:`passprice.sources.quote_check` could look up in a stored excerpt
    #: (on BASE) and whose new ones cite a source with no usable stored text the old ones did not: why, a source a
    #: line (``nvidia-h200-datasheet has no stored text``, :func:`passprice.sources.unstored_why`); empty otherwise.
    #: A new user re-cited the H200's ``vector`` from the product page (its quote checked) to the unread datasheet
    #: and read only "derived → published (stronger)" (tests/test_fix166.py).
    unchecked_now: tuple[str, ...] = ()
    #: For a ratio of a card (unit ``1``) whose derivation, on either side, or note names the card's
    #: ``memory.bandwidth`` as what a quoted figure is divided by (the stream shares: ``dot / bandwidth``, "measured
    #: rate / this file's memory.bandwidth"): HEAD's ``memory.bandwidth`` as ``(value, unit)``
    #: (:func:`_ratio_bases`); ``None`` otherwise. A new user's ``streams.read`` 0.9333 → 0.85 under a quote of Dot
    #: ``4.48`` TB/s was asked only whether the place states it, where 4.48 / 4.8 = 0.9333 (tests/test_walk138.py).
    ratio_basis: tuple[float, str] | None = None

    @property
    def change(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        return "changed"

    @property
    def fields(self) -> tuple[str, ...]:
        """Which of ``value`` (the figure in base units), ``unit``, ``provenance``, ``cite``, ``note`` and
        ``derivation`` differ (all the new fact has for an added one, all the old for a removed one)."""
        if self.old is None or self.new is None:
            fact = self.new or self.old
            return tuple(k for k in _FIELDS if fact is not None and _field(fact, k) is not None)
        return tuple(k for k in _FIELDS if _field(self.old, k) != _field(self.new, k))

    @property
    def refit_unmoved(self) -> bool:
        """Whether this change is a fact fitted again to measured runs whose value, unit, provenance, citation and
        note did not move: only its derivation from runs (:class:`passprice.derivations.RunDerivation`: the runs and
        the fit's errors) changed, as every fact of a stack re-fit does. A review lists such a fact in one line of
        its file, not as a change (slip 53: a re-fit moving 2 of the stack's facts listed 7 as changed, 5 of them
        "0.1 → 0.1"). Only a fit to other runs is one: a derivation whose runs read as before while its errors,
        method or figure moved was edited, not fitted again (a fit of the same runs gives the same errors), and is
        listed as a change (slip 48's hand-lowered errors read "no fact changed" otherwise). Its citation may differ
        in the count of runs it names alone (:attr:`recounted`: a run added, walkthrough 47). A fit of the same runs
        whose errors moved is one too when the same change moved a card, checkpoint or routing record those runs are
        priced on (:attr:`moved_with`): the re-fit follows that change, which the review lists (left45)."""
        if self.old is None or self.new is None or not {"derivation"} <= set(self.fields) <= {"derivation", "locator",
                                                                                            "cite"}:
            return False
        from passprice.derivations import RunDerivation

        old, new = self.old.derivation, self.new.derivation
        if not (isinstance(old, RunDerivation) and isinstance(new, RunDerivation)):
            return False
        if old.runs == new.runs and not (self.moved_with and (old.method, old.figure, old.digits, old.tolerance)
                                         == (new.method, new.figure, new.digits, new.tolerance)):
            return False
        return self.recounted is not None or ("cite" not in self.fields and "locator" not in self.fields)

    @property
    def recounted(self) -> tuple[int, int] | None:
        """For a fact fitted again whose citation changed only in the count of runs it names (``the 111 runs of
        stack S …`` → ``the 112 runs …``, as ``calibrate`` writes it after a run is added: walkthrough 47), the two
        counts (each side's derivation's number of runs); ``None`` when the citation did not change, or changed in
        anything else."""
        from passprice.derivations import RunDerivation

        if self.old is None or self.new is None:
            return None
        old, new = self.old.derivation, self.new.derivation
        if not isinstance(old, RunDerivation) or not isinstance(new, RunDerivation) or len(old.runs) == len(new.runs):
            return None
        if (self.old.source, self.old.cite, self.old.locator) == (self.new.source, self.new.cite, self.new.locator):
            return None
        was, now = f"the {len(old.runs)} runs", f"the {len(new.runs)} runs"
        if self.old.source != self.new.source or any(
                (getattr(self.old, k) or "").replace(was, now) != (getattr(self.new, k) or "")
                for k in ("cite", "locator")):
            return None
        return len(old.runs), len(new.runs)

    @property
    def relative(self) -> float | None:
        """The relative change of the value in base units, (new − old) / old (``4.8 TB/s → 5 TB/s`` is
        +0.041 67); ``None`` for an added or removed fact, a zero old value, or a change of dimension."""
        if self.old is None or self.new is None or self.old.value == 0:
            return None
        if dimension(self.old.unit) != dimension(self.new.unit):
            return None
        return (self.new.value - self.old.value) / self.old.value

    @property
    def weakened(self) -> bool:
        """True when the new provenance sits lower on the ladder than the old (``measured → estimated``)."""
        return self.old is not None and self.new is not None and self.new.provenance.weaker_than(self.old.provenance)

    @property
    def strengthened(self) -> bool:
        """True when the new provenance sits higher on the ladder than the old."""
        return self.old is not None and self.new is not None and self.old.provenance.weaker_than(self.new.provenance)

    @property
    def to_verify(self) -> str | None:
        """What a reviewer must check in the cited source for this change (:meth:`_to_verify`), and, for a changed
        or added fact citing anew a source the same change adds (:attr:`fresh_sources`), that the change records nothing
        independent of itself: slip round 38, the H200's ``memory.bandwidth`` moved 4.8 → 5.2 TB/s under a
        ``sources/h200-refresh-note.toml`` added by the same commit read only "the citation changed: does … state
        5.2 TB/s?", as if the record were evidence the registry held."""
        asks = self._to_verify()
        foreign = self._foreign()
        if foreign is not None:
            asks = f"{foreign}; {asks}" if asks else foreign
        if self.quote is not None and self.quote.state == "NOT FOUND":  # as audit says it of HEAD's fact
            found = (f"its quotes are NOT FOUND in the stored excerpt of the document it cites, as audit checks them "
                     f"({self.quote.why})")
            asks = f"{asks}; {found}" if asks else found
        from passprice.sources import MISMATCH

        if self.quote is not None and self.quote.state == MISMATCH:  # as audit and check say it of HEAD's fact
            other = (f"its quotes, found in the stored excerpt of the document it cites, state another figure than its "
                     f"own, as audit and check read them ({self.quote.why})")
            asks = f"{asks}; {other}" if asks else other
        if self.unchecked_now:
            lost = (f"its quote can no longer be checked: {'; '.join(self.unchecked_now)} (its old citation's quotes "
                    "were looked up in a stored excerpt): read the quoted words in the document itself")
            asks = f"{lost}; {asks}" if asks else lost
        if self.quote is not None and self.excerpts_edited:
            edited = (f"its quotes were checked against an excerpt this change edited ({self.quote.state}: "
                      f"{self.quote.why}; the stored excerpt of {', '.join(self.excerpts_edited)}): the check shows "
                      "only that the change wrote both; read the quoted words in the document itself")
            asks = f"{asks}; {edited}" if asks else edited
        macs = _macs_read(self.new) if asks and self.new is not None else None
        if macs is not None:  # 'FP32 67 TFLOPS' asked of 33.5 TMAC/s: the figure is the same (tests/test_fix166.py)
            asks = f"{asks} ({macs})"
        if not self.fresh_sources or self.new is None:
            return asks
        names = ", ".join(self.fresh_sources)
        fresh = (f"{'its source' if len(self.fresh_sources) == 1 else 'its sources'} {names} "
                 f"{'is' if len(self.fresh_sources) == 1 else 'are'} added by this same change: the registry records "
                 f"nothing of {'it' if len(self.fresh_sources) == 1 else 'them'} from before, so the change records "
                 f"nothing independent of itself for {self.new.describe()}: read the document itself")
        return f"{asks}; {fresh}" if asks else fresh

    def _ratio_quoted(self) -> str | None:
        """For a fact with a :attr:`ratio_basis` whose value moved, and which no derivation ties to its inputs on HEAD
        (``check`` recomputes one that has it): ``the locator quotes 4.48 TB/s, which over the card's
        memory.bandwidth (4.8 TB/s) is 0.9333, the ratio its derivation names, not 0.85`` when a figure the locator
        quotes in the bandwidth's unit, over HEAD's bandwidth, gives the old value (within
        :data:`passprice.addedfacts.BASIS_TOLERANCE`) and none gives the new one; else ``None``. Raises nothing."""
        from passprice.addedfacts import BASIS_TOLERANCE
        from passprice.derivations import Derivation

        old, new = self.old, self.new
        if (self.ratio_basis is None or old is None or new is None or isinstance(new.derivation, Derivation)
                or old.amount == new.amount):
            return None
        bandwidth, unit = self.ratio_basis
        text = new.locator or new.cite or ""
        if bandwidth <= 0 or unit not in text:
            return None

        def near(amount: float, ratio: float) -> bool:
            return abs(ratio - amount) <= BASIS_TOLERANCE * abs(amount)

        quoted = sorted(_quoted_figures(text))
        was = [q for q in quoted if near(old.amount, q / bandwidth)]
        if not was or any(near(new.amount, q / bandwidth) for q in quoted):
            return None
        named = "derivation" if isinstance(old.derivation, Derivation) else "note"
        return (f"the locator quotes {was[0]:g} {unit}, which over the card's memory.bandwidth ({bandwidth:g} {unit}) "
                f"is {was[0] / bandwidth:.4g}, the ratio its {named} names, not {new.amount:g}")

    def _ratio_recited(self) -> str | None:
        """For a fact with a :attr:`ratio_basis` re-cited (its source or locator changed) with no derivation on HEAD:
        what the first figure its new locator quotes in the bandwidth's unit is over HEAD's bandwidth: ``the locator
        quotes 4.01 TB/s, which over the card's memory.bandwidth (4.8 TB/s) is 0.8354, not 0.99`` (``…, its value``
        where it gives the new value); ``None`` without such a figure. :meth:`_ratio_quoted` said it of an unchanged
        citation alone (tests/test_fix154.py). Raises nothing."""
        from passprice.derivations import Derivation

        old, new = self.old, self.new
        if self.ratio_basis is None or old is None or new is None or isinstance(new.derivation, Derivation):
            return None
        bandwidth, unit = self.ratio_basis
        text = new.locator or new.cite or ""
        quoted = _quoted_figures(text)
        if bandwidth <= 0 or unit not in text or not quoted:
            return None
        from passprice.addedfacts import BASIS_TOLERANCE

        def near(figure: float) -> bool:
            return abs(figure / bandwidth - new.amount) <= BASIS_TOLERANCE * abs(new.amount)

        figure = next((q for q in sorted(quoted) if near(q)), min(quoted))
        ratio = figure / bandwidth
        said = "its value" if near(figure) else f"not {new.amount:g}"
        return (f"the locator quotes {figure:g} {unit}, which over the card's memory.bandwidth ({bandwidth:g} "
                f"{unit}) is {ratio:.4g}, {said}")

    def _past_replaced(self) -> str | None:
        """For a weakened fact (:attr:`weakened`) whose value moved off the published or measured figure it
        replaces: ``its value moved above the measured 0.9333 it replaces (→ 0.99, +6.075 %) on a weaker basis``;
        an estimate raising prices over the measurement read "1 weakened", nothing to verify (tests/test_fix154.py).
        ``None`` otherwise. Raises nothing."""
        old, new = self.old, self.new
        if (not self.weakened or old is None or new is None or old.amount == new.amount
                or old.provenance not in (Provenance.PUBLISHED, Provenance.MEASURED)):
            return None
        moved = f", {_pct(self.relative)}" if self.relative is not None else ""
        way = "above" if new.amount > old.amount else "below"
        return (f"its value moved {way} the {old.provenance.value} {old.describe()} it replaces (→ {new.describe()}"
                f"{moved}) on a weaker basis: what justifies it over the {old.provenance.value} figure?")

    def _foreign(self) -> str | None:
        """What :attr:`foreign_files` asks (``None`` when none): the citation moved from one source to another while
        the locator still names a file of the old one's that the new one's record names nowhere."""
        if not self.foreign_files or self.old is None or self.new is None:
            return None
        files = ", ".join(self.foreign_files[:3]) + (f" and {len(self.foreign_files) - 3} more"
                                                     if len(self.foreign_files) > 3 else "")
        one = len(self.foreign_files) == 1
        return (f"its citation moved from {self.old.source} to {self.new.source} while its locator still names "
                f"{files}, the {'file' if one else 'files'} it named under {self.old.source}; {self.new.source}'s "
                f"record names no such file: is {'it' if one else 'each'} a file of {self.new.source}'s, or is the "
                f"source wrong?")

    def _moved_alone(self) -> str | None:
        """For a fact fitted to measured runs whose value moved while its derivation (its runs, method and fit errors)
        did not, by no more than its derivation's tolerance (up to 0.1 %), which ``check`` re-fits it within: nothing
        it is fitted to moved, so the move was typed, not fitted, and nothing else says so (past the tolerance
        ``check`` fails it). use45: a stack's
        ``overhead.layer`` nudged 96.63 → 96.72 µs, no run changed, its lock re-locked, read ✅ with nothing to verify.
        ``None`` otherwise."""
        from passprice.derivations import RunDerivation

        old, new = self.old, self.new
        if old is None or new is None or "value" not in self.fields or "derivation" in self.fields:
            return None
        # Only a fit checked within a tolerance: a formula's result moved under the same inputs fails check outright
        # (its rounding is exact), and the review says that fact does not follow.
        if not isinstance(new.derivation, RunDerivation) or not new.derivation.tolerance:
            return None
        if self.relative is None or abs(self.relative) > new.derivation.tolerance:
            return None  # past the tolerance: check re-fits it and fails, and the review says it does not follow
        return (f"the value moved ({old.describe()} → {new.describe()}) but its derivation did not (the same "
                f"runs): a fitted figure moves only with what it is fitted to; was it edited by hand? (`passprice "
                f"check` re-fits it only within {100 * new.derivation.tolerance:g} %)")

    def _to_verify(self) -> str | None:
        """What a reviewer must check in the cited source for this change, which passprice cannot (it does not read
        the source): a provenance made stronger (does the new citation state the figure, as measured or
        published? asked of a fact carrying a derivation too), a value that moved while its citation (source and
        locator) did not (does the cited place say the new figure? said more firmly when the locator quotes the old
        figure and not the new one), a published or measured figure cited anew (does the new place state it?), or
        another figure cited anew to a place quoting figures of its dimension, none its own.
        An added fact asks what :attr:`asked` holds: its citation traced to no registered source, or a figure
        another fact records at the place it cites (a card copied with its ``streams.read`` raised under the
        H200's citation was added with nothing to verify, slip round 32). ``None``
        for a removed fact, a derived one (its value follows from its inputs, which ``check``
        recomputes), or a change nothing in the source need confirm. A derived fact's value is not asked about, but
        the figures its derivation reads from sources are, as a cited fact's value is (:func:`_inputs_to_verify`):
        one moved under an unchanged locator, one cited anew, one turned into a constant."""
        old, new = self.old, self.new
        if old is None or new is None:
            return self.asked if new is not None else None
        where = f"{new.source}: {new.locator}" if new.source is not None else f"{new.cite}"
        same_cite = (old.source, old.locator, old.cite) == (new.source, new.locator, new.cite)
        stronger = (f"the provenance is stronger ({old.provenance.value} → {new.provenance.value}): does {where} "
                    f"state {new.describe()}, {new.provenance.value}?") if self.strengthened else None
        unstated = _says_unstated(new) if self.strengthened else None
        if unstated is not None:
            # left60: the 512 GiB host placeholder made measured under its locator's "pinned-host placeholder" read
            # only the generic line: the citation itself says the figure is no measurement.
            stronger = (f"the provenance is stronger ({old.provenance.value} → {new.provenance.value}) but its "
                        f"{unstated}: a {new.provenance.value} figure is one its source states; does {where} state "
                        f"{new.describe()}, {new.provenance.value}?")
        if new.derivation is not None:
            # The fact's own citation is the place its audit traces it to: re-cited under an unchanged derivation
            # (the H200's array to a locator quoting 'INT8 Tensor Core 4,958 TOPS' over its 3958 TOPS input), the
            # review read ✅ with four locks re-pinned on it (slip round 29). Its provenance raised is asked about
            # as any fact's is: the H100's scale (a derivation over its vector rate) made estimated → published,
            # its two locks re-locked, read "(stronger)", ✅, nothing to verify (slip round 30).
            from passprice.derivations import Derivation

            own = None if same_cite or not isinstance(new.derivation, Derivation) else (
                f"its citation changed: does {where} give what its derivation ({new.derivation.formula}) takes from "
                "it?")
            return "; ".join(x for x in (stronger, own, _inputs_to_verify(old, new), self._moved_alone()) if x) or None
        # A derivation removed unties the figure from what check recomputes it from (the H200's streams.read kept
        # at 0.9333, measured, under 'Dot 4.48 TB/s' with its `dot / bandwidth` gone: a later bandwidth change no
        # longer leaves it stale), and read "4 to re-pin", nothing to verify (slip round 38). A fact made an estimate
        # or assumption with it is said weakened already, and cites a basis, not a figure.
        from passprice.derivations import Derivation as Derived

        untied = (f"its derivation ({old.derivation.formula}) was removed: check no longer recomputes "
                  f"{new.describe()} from its inputs; does {where} state it, {new.provenance.value}?"
                  ) if isinstance(old.derivation, Derived) and new.provenance in (
                      Provenance.PUBLISHED, Provenance.MEASURED) else None
        if stronger is not None or untied is not None:
            ratio = (self._ratio_quoted() or (None if same_cite else self._ratio_recited())) if untied else None
            return "; ".join(x for x in (stronger, untied, ratio) if x)
        if "value" in self.fields and same_cite:
            from passprice.addedfacts import BASIS_TOLERANCE, in_own_unit, parts_of, percents_of, states

            # A note stating the old figure and not the new one goes on saying it under the new value (a stack's
            # memory.reserved 512 → 1024 MiB under its note's "512 MiB in all": walkthrough 41).
            noted = (f"; its note still states {old.describe()}: is the note this figure's?"
                     if "note" not in self.fields and states(old.amount, old.unit, new.note)
                     and not states(new.amount, new.unit, new.note) else "")
            quoted = _quoted_figures(new.locator or new.cite or "")
            if _figure(old.amount) in quoted and _figure(new.amount) not in quoted:
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not, and the "
                        f"locator quotes {old.amount:g}: {where}{noted}")
            # A ratio quoted as a part of a whole (``58/128``, ``58 of 128``) is the old figure as firmly (session 25),
            # and so is one quoted as a percentage (``90%`` under hot_share 0.9 → 0.85: walkthrough 55).
            def near(amount: float, ratio: float) -> bool:
                return abs(ratio - amount) <= BASIS_TOLERANCE * abs(amount)

            text = new.locator or new.cite or ""
            parts = {**percents_of(text), **parts_of(text)} if new.unit == "1" else {}
            was = [words for ratio, words in parts.items() if near(old.amount, ratio)]
            if was and not any(near(new.amount, ratio) for ratio in parts):
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not, and the "
                        f"locator quotes {was[0]} ({old.amount:g}): {where}{noted}")

            ratio = self._ratio_quoted()
            if ratio is not None:
                return f"the value moved ({old.describe()} → {new.describe()}) but its citation did not: {ratio}: " \
                       f"{where}{noted}"

            # The old figure quoted in another notation (``4,800 GB/s``, ``four point eight terabytes per second``
            # under 4.8 → 5.2 TB/s) is said as firmly (slip round 34).
            others = in_own_unit(new.amount, new.unit, new.locator)
            if others and states(old.amount, old.unit, new.locator):
                return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not, and the "
                        f"locator quotes {', '.join(others[:3])}: {where}{noted}")
            return (f"the value moved ({old.describe()} → {new.describe()}) but its citation did not: does {where} "
                    f"say {new.describe()}?{noted}")
        if not same_cite and new.provenance in (Provenance.PUBLISHED, Provenance.MEASURED):
            from passprice.addedfacts import in_own_unit, states

            # Re-cited to a place that still quotes the old figure (the locator given a second space, 4.8 → 5.2
            # TB/s under 'GPU Memory Bandwidth  4.8TB/s') read as softly as a new place (slip round 38).
            others = in_own_unit(new.amount, new.unit, new.locator)
            ratio = self._ratio_recited()
            ratio_said = f"; {ratio}" if ratio is not None else ""
            if others and "value" in self.fields and states(old.amount, old.unit, new.locator):
                return (f"the value moved ({old.describe()} → {new.describe()}) and the citation changed, but the "
                        f"locator still quotes {', '.join(others[:3])}: does {where} state {new.describe()}, "
                        f"{new.provenance.value}?{ratio_said}")
            if others:
                # left45: 3.35 TB/s kept, re-cited to a locator quoting 3352 GB/s (3.352 TB/s): other digits
                return (f"the citation changed and its locator quotes {', '.join(others[:3])}, not "
                        f"{new.describe()}: does {where} state {new.describe()}, {new.provenance.value}?{ratio_said}")
            return f"the citation changed: does {where} state {new.describe()}, {new.provenance.value}?{ratio_said}"
        if not same_cite:
            # An estimate or assumption cites its basis: re-cited to a place quoting another figure of its dimension
            # (the H200's bandwidth, made estimated, re-cited to 'H200 NVL 4.9TB/s' under its 4.8 TB/s) read as
            # nothing to verify (slip round 33).
            from passprice.addedfacts import in_own_unit

            others = in_own_unit(new.amount, new.unit, new.locator)
            ratio = self._ratio_recited()
            past = self._past_replaced()
            more = "".join(f"; {x}" for x in (ratio, past) if x is not None)
            if others:
                return (f"the citation changed and its locator quotes {', '.join(others[:3])}, not {new.describe()}: "
                        f"does {where} give {new.describe()}, {new.provenance.value}?{more}")
            # Re-cited to a basis naming no figure at all (WS1's memory.bandwidth 6 → 9 TB/s under "design point:
            # the designer's judgement", its note removed, re-locked: nothing to verify, slip round 38). A fact
            # stepped down the ladder with it was left to its "weakened" mark alone: an estimate of 0.99 under "a
            # guess" replacing the measured 0.9333 raised five locked prices with nothing to verify
            # (tests/test_fix154.py); it is asked too, saying that its value moved above or below the one it replaces.
            from passprice.addedfacts import names_figure

            if not names_figure(new.locator) and not names_figure(new.note) and (
                    not self.weakened or "value" in self.fields):
                return (f"the citation changed and its basis names no figure (its locator and note quote no number): "
                        f"what gives {new.describe()}? does {where} give it, {new.provenance.value}?{more}")
            if ratio is not None:  # a basis naming its figure: the weakened mark says the rest
                return ratio
        return None

    def to_json(self) -> dict[str, Any]:
        """The change for ``--format json``: path, lock path, change, fields, old and new (as ``fact_json``, or
        ``null``), relative change, weakened, strengthened, and what a reviewer must verify in the source
        (:attr:`to_verify`, or ``null``)."""
        return {
            "path": self.path,
            "lock_path": self.lock_path,
            "change": self.change,
            "fields": list(self.fields),
            "old": fact_json(self.old) if self.old is not None else None,
            "new": fact_json(self.new) if self.new is not None else None,
            "relative_change": self.relative,
            "weakened": self.weakened,
            "strengthened": self.strengthened,
            "to_verify": self.to_verify,
            "quote_check": self.quote.to_json() if self.quote is not None else None,
            "quote_excerpts_edited": list(self.excerpts_edited),
            "quote_no_longer_checked": list(self.unchecked_now),
            "copied_citation": self.copied_from,
            "refit_unmoved": self.refit_unmoved,
            "moved_with": list(self.moved_with),
            # a moved derivation input that cancels out of the formula (moves nothing): audit's ``cancelled``
            "cancelled": ([{"input": n, "powers": list(p)} for n, p in _cancelled(self.new)]
                          if _moved_cancelling(self) else []),
        }


#: Words by which a locator or note says its figure is no measurement or published figure: what a fact raised to
#: ``measured`` or ``published`` contradicts (:func:`_says_unstated`).
_UNSTATED = re.compile(r"\b(placeholders?|assum(?:ed|es|e|ing|ptions?)|estimat(?:ed|es|e|ing|ions?)|guess(?:ed|es)?)\b",
                       re.IGNORECASE)


def _says_unstated(fact: Fact) -> str | None:
    """``locator says 'placeholder'`` (or ``note says …``) when ``fact`` is ``measured`` or ``published`` while its
    locator (first) or note calls it a placeholder, an assumption, an estimate or a guess (:data:`_UNSTATED`), else
    ``None``. Raises nothing."""
    if fact.provenance not in (Provenance.MEASURED, Provenance.PUBLISHED):
        return None
    for part, text in (("locator", fact.locator or fact.cite), ("note", fact.note)):
        found = _UNSTATED.search(text or "")
        if found is not None:
            return f"{part} says {found.group(0)!r}"
    return None


#: A file's path as a locator names one (``Azure_Results/ND_H200_v5_results.md``; of a path with spaces, ``LLaMA
#: 3/Professional GPUs/H100_PCIe_v3.ipynb``, the part after its last space): a name with one of these endings.
_FILE_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|ipynb|json|csv|tsv|txt|cu|cuh|py|toml|ya?ml|pdf|html?|rst|log|cpp|cc|"
    r"rs|c|h))(?![\w/-])")


def locator_files(text: str | None) -> tuple[str, ...]:
    """The file paths ``text`` (a locator) names, in order, each once (:data:`_FILE_PATH`): ``('Azure_Results/
    ND_H200_v5_results.md',)``. Raises nothing."""
    return tuple(dict.fromkeys(_FILE_PATH.findall(text or "")))


def _record_text(side: Side, source: str) -> str | None:
    """The words of ``sources/SOURCE.toml`` on ``side`` a file read in it would be named in (title, url,
    repository, read, note, path, copies), one a line; ``None`` when the record is not there or does not read."""
    data = side.files.get(f"sources/{source}.toml")
    if data is None:
        return None
    try:
        record = side_toml(data, "source").get("source")  # capped as every look at a side's file (slip 54)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    words = [record.get(k) for k in ("title", "url", "repository", "read", "note", "path")]
    copies = record.get("copies")
    words += copies if isinstance(copies, list) else []
    return "\n".join(w for w in words if isinstance(w, str))


def _foreign_files(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`FactChange.foreign_files` set on each changed fact whose source moved (both sides name
    one) while its new locator names a file its old locator named too (:func:`locator_files`) that HEAD's record of
    the new source names nowhere, neither by its path nor by its last part (the Azure guide's record names
    ``ND_H200_v5_results.md`` in its ``read``). No repository listing is read (no network): a record names the files
    read in it, so a file it does not name is asked about, never failed. Left60: a citation moved to xytpai-nvbench
    under an unchanged Azure path read only the generic "its citation changed". Raises nothing."""
    out = []
    for f in files:
        facts = []
        for c in f.facts:
            o, n = c.old, c.new
            if o is not None and n is not None and o.source and n.source and o.source != n.source:
                kept = [p for p in locator_files(n.locator) if p in locator_files(o.locator)]
                record = _record_text(head, n.source) if kept else None
                if record is not None:
                    foreign = tuple(p for p in kept if p not in record and p.rsplit("/", 1)[-1] not in record)
                    if foreign:
                        c = attrs.evolve(c, foreign_files=foreign)
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def _folded(f: FileChange, c: FactChange) -> bool:
    """Whether the review names ``c`` (of file ``f``) in its file's one line of facts fitted again unmoved rather
    than as a change: :attr:`FactChange.refit_unmoved`, with no derived fact of the file reading it."""
    return c.refit_unmoved and not any(d.input == c.path for d in f.dependants)


def refit_line(f: FileChange, shown: Sequence[FactChange]) -> str | None:
    """The review's one line for the facts of file ``f`` a re-fit wrote again unmoved (``None`` when none): how
    many, their paths, and the change of their derivation: as the first listed fact's of ``shown`` (the file's
    facts the review lists) that carries the same change, else said here (:func:`run_change`)."""
    folded = [c for c in f.facts if _folded(f, c)]
    if not folded:
        return None
    # The folded facts grouped by their derivation's change (a re-fit's fitted facts read tokens/s, its range facts
    # each run's rows or positions: walkthrough 47), each said once: as a listed fact's, else in words.
    groups: dict[str, list[str]] = {}
    for c in folded:
        assert c.old is not None and c.new is not None
        groups.setdefault(run_change(c.old.derivation, c.new.derivation, c.moved_with) or "changed", []).append(c.path)
    hows = []
    for runs, paths in groups.items():
        same = next((c.path for c in shown if c.old is not None and c.new is not None and "derivation" in c.fields
                     and run_change(c.old.derivation, c.new.derivation, c.moved_with) == runs), None)
        said = f"as {same}'s" if same is not None else runs
        hows.append(said if len(groups) == 1 else f"{', '.join(paths)}: {said}")
    how = "; ".join(hows)
    names = ", ".join(c.path for c in folded)
    counts = {c.recounted for c in folded if c.recounted is not None}
    if not counts:
        return (f"{_n(len(folded), 'more fact')} re-derived to the same value, provenance and citation (not listed "
                f"as changed): {names}; derivation: {how}")
    recounted = "; ".join(f"{a} → {b}" for a, b in sorted(counts))
    return (f"{_n(len(folded), 'more fact')} re-derived to the same value and provenance, the citation changed only "
            f"in its count of runs ({recounted}) (not listed as changed): {names}; derivation: {how}")


def _cancelled(fact: Fact | None) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """:func:`passprice.audit.cancelled` of ``fact`` (none for no fact)."""
    from passprice.audit import cancelled

    return cancelled(fact) if fact is not None else ()


def _inputs_to_verify(old: Fact, new: Fact) -> str | None:
    """What a reviewer must check in the sources of a derived fact's figure inputs (``None`` when nothing): each
    figure whose amount or unit moved while its source and locator did not (more firmly when the locator quotes the
    old amount and not the new), each figure cited anew (a new input, or a new source or locator), and each figure
    of ``old`` that ``new`` makes a constant, each constant whose number moved or which is new, and a formula
    rewritten (slip round 34: a constant 2 → 1 under "the link's two directions" doubled a rate, re-locked, with
    nothing to verify). ``check`` recomputes the formula, never what the source says: the
    H200's ``array`` raised with its input ``sparse`` moved 3958 → 7958 TOPS under the locator ``'INT8 Tensor Core
    3,958 TOPS'`` passed the review without a word."""
    from passprice.derivations import Derivation

    if not isinstance(new.derivation, Derivation):
        return None
    before = {i.name: i for i in old.derivation.inputs} if isinstance(old.derivation, Derivation) else {}
    asks = []
    for i in new.derivation.inputs:
        was = before.get(i.name)
        where = f"{i.source or new.source}: {i.locator}"
        if i.kind == "figure":
            if was is not None and was.kind == "figure" and (was.source or old.source, was.locator) == (
                    i.source or new.source, i.locator):
                if (was.amount, was.unit) == (i.amount, i.unit):
                    continue
                quoted = _quoted_figures(i.locator or "")
                if _figure(was.amount) in quoted and _figure(i.amount) not in quoted:
                    asks.append(f"its input {i.name} moved ({was.shown()} → {i.shown()}) but its citation did not, "
                                f"and the locator quotes {was.amount:g}: {where}")
                else:
                    asks.append(f"its input {i.name} moved ({was.shown()} → {i.shown()}) but its citation did not: "
                                f"does {where} say {i.shown()}?")
            else:
                asks.append(f"its input {i.name} is cited anew: does {where} state {i.shown()}?")
        elif i.kind == "constant" and was is not None and was.kind == "figure":
            asks.append(f"its input {i.name} was a figure of {was.source or old.source}: {was.locator}, now a "
                        f"constant ('{i.constant}', {i.shown()}): is it one, or an assumption?")
        elif i.kind == "constant" and (was is None or was.kind != "constant" or (was.amount, was.unit) != (
                i.amount, i.unit)):
            # A constant is a claim in words: its number moved under them (the H200's host.read 'directions' 2 → 1,
            # "the link's two directions", doubled host.read to 128 GB/s, re-locked, nothing to verify: slip 34).
            how = (f"moved ({was.shown()} → {i.shown()})" if was is not None and was.kind == "constant"
                   else f"is a new constant ({i.shown()})")
            asks.append(f"its constant {i.name} {how}: is '{i.constant}' {i.shown()}?")
    if isinstance(old.derivation, Derivation) and old.derivation.formula != new.derivation.formula:
        asks.append(f"its formula changed ({old.derivation.formula} → {new.derivation.formula}): does what it cites "
                    "give the figure so?")
    return "; ".join(asks) or None


def _figure(amount: float) -> float:
    """A figure as compared with those a locator quotes: rounded to 12 significant digits (``4.8`` and
    ``4.800000000001`` are one figure)."""
    return float(f"{amount:.12g}")


#: What may not come before a figure in a locator's text besides what :data:`passprice.textchange.NUMBER` rules out:
#: an ``=`` (a setting's value, :func:`_quoted_figures`), :data:`_SETTING_SIGN`.
_SETTING_SIGN = "="
#: The look-behind of :data:`_SETTING_SIGN`.
_NOT_AFTER = rf"(?<!{_SETTING_SIGN})"
#: A run of a name's characters: a setting's name is one's end (:func:`_setting_spans`).
_NAME_RUN = r"[\w.-]+"
#: What follows a setting's name before its number (:data:`passprice.textchange.NUMBER`, joined to it when
#: :func:`_setting_spans` first reads a name): blanks and an ``=`` or ``:``. Left54: the number was written here its
#: own way, without a power of ten, so ``n_ctx=2e3``'s setting ended at its ``2``.
_SETTING_VALUE = r"[ \t]*[=:]?[ \t]*"


def _no_start() -> str:
    """The class of characters after which no name and no figure starts (:func:`_setting_spans`): those
    :data:`passprice.textchange.NUMBER` starts after none of (:data:`passprice.textchange.RUNS_INTO`, the one place
    they are written), and :data:`_SETTING_SIGN`. Left56: this was a copy of NUMBER's look-behind, written by hand
    (``[A-Za-z_\\d.,=]``). Built when asked, as textchange is imported where it is used (it imports difflib)."""
    from passprice.textchange import RUNS_INTO

    return rf"[{RUNS_INTO}{_SETTING_SIGN}]"


def _setting_spans(text: str) -> list[tuple[int, int]]:
    r"""The spans ``(start, end)`` (``text[start:end]``) of ``text`` that are a setting's name and its number, in
    order: an identifier with an ``_`` after its first character (``n_ctx 512``, ``n_gpu_layers=99``) or a flag
    (``-c 512``, ``--ctx-size=512``), starting where no name or figure runs into it and ending its run of name
    characters (``[\w.-]``; a flag's holds no ``.``), then blanks, an optional ``=`` or ``:``, and a number; or, with no
    number after it, a name up to the last digit its run holds after that ``_`` (``a_b-12``; a flag's, after its
    first letter). The regular expression this replays, ``[A-Za-z_][\w.-]*_[\w.-]*`` before the number, tried every
    split of a name at every ``-`` in it: a 990-character locator ``x a_-a_-…`` took 1.1 s of CPU each time it was
    read, 25 s for a copied card of such locators (attack round 38). One pass over each run: linear in ``text``.
    Raises nothing."""
    import re

    def letter(c: str) -> bool:
        return "A" <= c <= "Z" or "a" <= c <= "z"

    from passprice.textchange import NUMBER

    value = re.compile(_SETTING_VALUE + NUMBER)
    no_start = re.compile(_no_start())
    out: list[tuple[int, int]] = []
    for run in re.finditer(_NAME_RUN, text):
        lo, hi = run.span()
        if "_" not in run.group(0) and "-" not in run.group(0):
            continue
        after = value.match(text, hi)
        # The last digit before each offset of the run, and its first "." from each on.
        last, seen = [-1] * (hi - lo + 1), -1
        for i in range(lo, hi):
            last[i - lo] = seen
            seen = i if text[i].isdigit() else seen
        last[hi - lo] = seen
        dot, ahead = [hi] * (hi - lo + 1), hi
        for i in range(hi - 1, lo - 1, -1):
            ahead = i if text[i] == "." else ahead
            dot[i - lo] = ahead
        lines = [i for i in range(lo, hi) if text[i] == "_"]
        tried = False
        i = lo
        while i < hi:
            c = text[i]
            if i != 0 and no_start.match(text[i - 1]):
                i += 1
                continue
            end = -1
            if (letter(c) or c == "_") and not tried:
                tried = True  # a later start's name is the end of this one's: it reads alike
                if any(u > i for u in lines):
                    end = after.end() if after is not None else last[hi - lo] + 1
                    end = end if any(i < u < end for u in lines) else -1
            elif c == "-":
                j = i + 1 + (i + 1 < hi and text[i + 1] == "-")
                if j < hi and letter(text[j]):
                    end = after.end() if after is not None and dot[j - lo] == hi else last[dot[j - lo] - lo] + 1
                    end = end if end > j + 1 else -1
            if end >= 0:
                out.append((i, end))
                i = end
            else:
                i += 1
    return out


#: The words before a number that make it a place in a document, not a figure it states (``page 4``, ``Table 2``,
#: ``Fig. 3``, ``p. 12``, ``section 5``): :func:`_quoted_figures` skips it (walkthrough 30: an input's locator
#: ``page 4, table 2: five active stacks`` was asked "its input stacks is 5 but its locator quotes 2, 4").
@functools.cache
def _reference() -> Any:
    """:data:`_REFERENCE_WORDS` compiled once, when a locator is first read (``re`` is not imported with the module)."""
    import re

    return re.compile(_REFERENCE_WORDS)


_REFERENCE_WORDS = (r"(?i)(?<![\w.])(?:pages?|tables?|fig(?:ure)?s?|sections?|sec|chapters?|slides?|appendix|"
                    r"eq(?:uation)?s?|footnotes?|endnotes?|p|pp)\.?[ \t]*\Z")


#: A unit-less size suffix glued to a number (``8B``, ``70B``, ``1.5M``, ``32K``) ending the word: a model's size
#: in its name, not a figure a locator quotes (a new user's ``llama 8B`` read as "its locator quotes 168.2, 8");
#: ``100MB`` (M then B) and ``4.8TB/s`` are units, and stay figures (:func:`_quoted_figures`).
_MODEL_SIZE = re.compile(r"[BMK](?![\w/])")


def _quoted_figures(text: str) -> set[float]:
    """The figures a locator's text quotes (``'GPU Memory Bandwidth 4.8TB/s'`` → {4.8}; ``16,896`` → {16896}),
    for :attr:`FactChange.to_verify`. A number that is part of a name or a setting's value is not a figure the
    locator quotes, nor one naming a place in the document (``page 4``, ``Table 2``, ``Fig. 3``: :func:`_reference`):
    one glued to a letter before it (``pp512``, ``tg128``, build ``b2824``) or to a model size's suffix after it
    (``8B``, ``70B``: :data:`_MODEL_SIZE`), one after a setting's name (``n_ctx
    512``, ``--ctx-size=512``, :func:`_setting_spans`) or after ``=`` (walkthrough 9: ``n_ctx 512`` in the llama.cpp
    stack's ``memory.reserved`` locator was read as its 512 MiB, and the review said "the locator quotes 512" of a
    setting). The first 10,000 characters are read, in time linear in them."""
    import re

    from passprice.textchange import NUMBER, figure_read

    text = text[:10_000]
    spans = _setting_spans(text)
    out, at = set(), 0
    for found in re.finditer(_NOT_AFTER + NUMBER, text):
        while at < len(spans) and spans[at][1] <= found.start():
            at += 1
        if at < len(spans) and spans[at][0] <= found.start():
            continue  # a setting's number, or a name's
        if _reference().search(text, max(0, found.start() - 12), found.start()):
            continue  # where in the document (page 4, Table 2), not a figure it states
        if _MODEL_SIZE.match(text, found.end()):
            continue  # a model's size in its name (llama 8B, 70B, 1.5M): the review read 8 as a quoted figure
        figure = figure_read(found.group(0))
        if figure is not None:  # a number past a float (``1e-400``, ``1e999``) quotes no figure (left50)
            out.add(_figure(figure))
    return out


#: What follows a figure (:data:`passprice.textchange.NUMBER`) that is a rate in tokens per second, the unit every
#: measured run records (``131.44 tokens per second``, ``135.07 tokens/s``, ``98 t/s``, ``1,234 tok/s``):
#: :func:`_figures_per_second`.
_PER_SECOND = (r"[ \t]*(?:tokens?|tok|t)[ \t]*"
               r"(?:/[ \t]*s(?:ec)?|per[ \t]+second)\b")


def _figures_per_second(text: str) -> set[float]:
    """The figures ``text`` (a run's locator) quotes in tokens per second, the unit a run records its
    ``tokens_per_s`` in (:data:`_PER_SECOND`); empty when it quotes none so. A review names these before any other
    figure of the locator (a ``./main`` line quotes ``7.61 ms per token, 131.44 tokens per second``). The first
    10,000 characters are read. Raises nothing."""
    import re

    from passprice.textchange import NUMBER, figure_read

    out = set()
    for found in re.finditer(f"({NUMBER}){_PER_SECOND}", text[:10_000], re.IGNORECASE):
        amount = figure_read(found.group(1))
        if amount is not None:  # a number past a float quotes no rate
            out.add(_figure(amount))
    return out


_FIELDS = ("value", "unit", "provenance", "source", "locator", "cite", "note", "derivation")


def _serving_changes(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """:func:`passprice.reproduce.serving_changes` as the review shows it: each word of a line that prints but is not
    ASCII (a name) spelled out after the line (:func:`passprice.errors.spelled`): a serving pointed at a card copied
    under a name with a Cyrillic ``х`` read ``card: h200_sxm_141gb → h200_sxm_141gb``, a change that prints as none
    (slip round 30)."""
    from passprice.errors import spell
    from passprice.reproduce import serving_changes

    out = []
    for line in serving_changes(old, new):
        words = dict.fromkeys(w.strip(";,") for w in line.split(" ") if not w.isascii() and w != "→")
        out.append(line + "".join(f" (spelled {spell(w)})" for w in words if w and w.isprintable()))
    return tuple(out)


def _description_changed(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """``description: OLD → NEW`` (:func:`passprice.textchange.text_change`, each changed span in brackets when the
    texts are long; ``(none)`` for an absent one) when the serving's ``description`` changed, empty otherwise: a lock
    pins it as ``serving.description`` and ``check --frozen`` fails on it, though
    :func:`passprice.reproduce.serving_changes` leaves descriptions aside (they price nothing). Walkthrough 57: a
    serving whose description alone was rewritten read ``comments or layout only: every field of the serving reads
    as before`` under its file while each lock row said it pinned ``serving.description`` as before the change.
    Raises nothing."""
    from passprice.tables import printable
    from passprice.textchange import text_change

    if old.description == new.description:
        return ()
    if not old.description or not new.description:
        return (f"description: {printable(old.description) if old.description else '(none)'} → "
                f"{printable(new.description) if new.description else '(none)'}",)
    return (f"description: {text_change(printable(old.description), printable(new.description))}",)


def _description_names_old(old: ServingSpec, new: ServingSpec) -> tuple[str, ...]:
    """A line to verify when the serving's ``card``, ``checkpoint`` or ``routing`` moved while its ``description``,
    unchanged, still names the old one (empty otherwise): the description is a claim a lock pins
    (``serving.description``) and ``passprice servings`` prints. Walkthrough 55: ``qwen3-30b-a3b-h200`` re-pointed to
    a new routing record ``qwen3-30b-a3b-diverse`` (65 of 128 experts hot) kept "routing as measured on a narrow
    workload (a hot set of 58 of 128 experts …, facts/routing/qwen3-30b-a3b-measured.toml)", and the review said
    only ``routing: qwen3-30b-a3b-measured → qwen3-30b-a3b-diverse``. Raises nothing."""
    import re

    text = old.description
    if not text or new.description != text:
        return ()
    named = [f"{field} {was}" for field, was, now in (("card", old.card, new.card),
                                                      ("checkpoint", old.checkpoint, new.checkpoint),
                                                      ("routing record", old.routing, new.routing))
             if was and was != now and re.search(rf"(?<![\w.-]){re.escape(was)}(?![\w-])", text)]
    if not named:
        return ()
    return (f"description unchanged, still naming the old {' and '.join(named)}: is it true of this serving? "
            "(to verify; a lock pins it as serving.description)",)


def _serving_change_pairs(
    old: ServingSpec, new: ServingSpec
) -> tuple[tuple[str, ...], tuple[Mapping[str, Any], ...]]:
    """The serving's changes from ``old`` (BASE) to ``new`` (HEAD) twice, in the same order: as lines
    (:func:`_serving_changes`) and as ``{"field": "serving.FIELD", "locked": BASE's value, "now": HEAD's value}``
    (:func:`passprice.reproduce.serving_differences`, values as the serving document writes them, ``None`` where
    absent), the shape of ``reproduce --json``'s ``serving_differences``. Raises nothing."""
    from passprice.reproduce import serving_differences

    lines = _serving_changes(old, new)
    fields = tuple({"field": f"serving.{key}", "locked": was, "now": now}
                   for key, was, now in serving_differences(old, new))
    return lines, fields


def _field(fact: Fact, name: str) -> Any:
    if name == "value":
        return fact.value
    if name == "provenance":
        return fact.provenance.value
    return getattr(fact, name)


def fact_changes(old: Mapping[str, Fact], new: Mapping[str, Fact], lock_prefix: str = "") -> tuple[FactChange, ...]:
    """Every fact whose digest differs between ``old`` and ``new`` (path → fact), or which one side lacks, in the
    order of ``old`` then the paths only ``new`` has; ``lock_prefix`` turns a file path into a lock path
    (``draft.`` for a drafting method)."""
    out = []
    for path in dict.fromkeys([*old, *new]):
        o, n = old.get(path), new.get(path)
        if o is None or n is None or o.digest() != n.digest():
            out.append(FactChange(path, lock_prefix + path, o, n))
    return tuple(out)


@attrs.frozen
class FileChange:
    """A file that differs between the sides: its ``path`` relative to the root, ``kind`` and entry ``name`` (see
    :func:`file_kind`), ``status`` (``added``, ``removed`` or ``changed``), the errors that keep it from reading on
    each side (lines, ``FILE: KEY.PATH: what was wrong``), and, for a card or drafting method that reads on both
    sides it has, its fact changes (``facts``) and the keys of its ``[card]``/``[method]`` table that changed
    (``meta``); for a checkpoint entry its ``content`` digest on each side (what the pricer reads); for a serving
    the fields that changed (``serving``, ``field: before → after`` lines). ``compared`` is false when a side's
    errors kept the facts from being compared."""

    path: str
    kind: str
    name: str
    status: str
    base_errors: tuple[str, ...] = ()
    head_errors: tuple[str, ...] = ()
    facts: tuple[FactChange, ...] = ()
    meta: tuple[str, ...] = ()
    content: tuple[str | None, str | None] = (None, None)
    serving: tuple[str, ...] = ()
    dependants: tuple[Dependant, ...] = ()
    #: HEAD's derived facts of this file that do not follow from their inputs (stale, mismatch, broken: what
    #: ``passprice check`` fails on), each found by recomputing its derivation (:func:`passprice.derivations.recheck`).
    findings: tuple[Finding, ...] = ()
    #: HEAD's bytes of the file, as the comparison read them, whatever HEAD is (the work tree, a folder or a git
    #: revision): a pull-request comment links each changed fact to its lines in them (:meth:`fact_lines`).
    head_bytes: bytes | None = attrs.field(default=None, eq=False, repr=False)
    #: A card the change renamed (:func:`card_renames`): for the file HEAD adds, BASE's file it is compared with (its
    #: ``facts`` are the changes between the two); for the file HEAD removes, the file it became (no facts of its
    #: own listed). A card renamed with a fact re-cited inside it listed every fact as removed and added, so the
    #: re-cited fact asked nothing to be verified and the review read ✅ (slip round 28). A serving stack too, and
    #: (slip round 51) a measurement file whose bytes HEAD holds under another name (:func:`measurement_renames`).
    renamed: str | None = None
    #: A checkpoint entry's claims on BASE and HEAD (:func:`checkpoint_claims`) when one changed: what the entry
    #: says of the GGUF file, not read by the pricer.
    claims: tuple[Mapping[str, str] | None, Mapping[str, str] | None] = attrs.field(default=(None, None), eq=False,
                                                                                   repr=False)
    #: A checkpoint entry changed on both sides: what differs in its content (:func:`content_changes`), the first
    #: few differences of its tensor table and metadata, one line each.
    inside: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    #: A checkpoint entry changed on both sides: what differs in its layout (:func:`layout_changes`: tensor offsets,
    #: the header's sizes …), outside its content digest and read by no price.
    layout: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)

    def fact_lines(self, fact: str) -> tuple[int, int] | None:
        """The 1-based first and last line of fact ``fact``'s table in HEAD's bytes of the file
        (:func:`passprice.comment.fact_lines`), found when a comment asks: a review of 377 added cards spent 0.6 s
        (profiled) finding every fact's lines up front for a comment nobody asked for."""
        if self.head_bytes is None:
            return None
        from passprice.comment import fact_lines

        return fact_lines(self.head_bytes.decode("utf-8", "replace"), fact)

    @property
    def holds_facts(self) -> bool:
        """True for a card, a drafting method, a routing record or a serving stack."""
        return self.kind in ("card", "draft", "routing", "stack")

    @property
    def compared(self) -> bool:
        """True when the facts were compared (no side that has the file failed to read it)."""
        return not self.base_errors and not self.head_errors

    def to_json(self, shown: tuple[tuple[str, ...], tuple[str, ...], int] | None = None) -> dict[str, Any]:
        """The file for ``--format json``; ``shown``: the errors listed and how many more are counted
        (:meth:`Diff.errors_shown`), every one when ``None``."""
        base, head, left_out = shown if shown is not None else (self.base_errors, self.head_errors, 0)
        return {
            "path": self.path,
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "compared": self.compared,
            "errors": {"base": list(base), "head": list(head)},
            "errors_left_out": left_out,
            "facts": [c.to_json() for c in self.facts],
            "meta": list(self.meta),
            "content": {"base": self.content[0], "head": self.content[1]},
            "content_changes": list(self.inside),
            "layout_changes": list(self.layout),
            "serving": list(self.serving),
            "dependants": [d.to_json() for d in self.dependants],
            "renamed": self.renamed,
            "unsound": [f.to_json() for f in self.findings],
        }

    @property
    def shown_name(self) -> str:
        """The file as the review's Facts table names it: a card by its name; a routing record, drafting method or
        stack with its kind before it (``routing acme-moe``), so a routing record named as its checkpoint is not read
        as the checkpoint (walkthrough 27)."""
        return f"{self.kind} {self.name}" if self.kind in _LOCK_PREFIX else self.name

    def lock_path(self, path: str) -> str:
        """The path a lock names fact ``path`` of this file by (``draft.acceptance.1``, ``routing.hot_share``,
        ``stack.…``; a card's path as it is)."""
        return _LOCK_PREFIX.get(self.kind, "") + path


#: What a lock's fact paths put before a record's own path, by the kind of file holding it.
_LOCK_PREFIX = {"draft": "draft.", "routing": "routing.", "stack": "stack."}


@attrs.frozen
class _Read:
    """A file read on one side: its ``facts`` (path → fact) for a card or drafting method, its ``meta`` table, and
    the ``errors`` that kept it from reading."""

    facts: Mapping[str, Fact] | None = None
    meta: Mapping[str, Any] | None = None
    errors: tuple[str, ...] = ()
    content: str | None = None
    spec: Any = None
    #: A checkpoint entry's content (:func:`passprice.pins.checkpoint_content`), which :func:`content_changes` compares.
    data: Any = None
    #: A checkpoint entry's layout (:func:`checkpoint_layout`), which :func:`layout_changes` compares.
    layout: Mapping[str, str] | None = None


def _read(side: Side, rel: str, kind: str, name: str) -> _Read:
    """Read and validate the file ``rel`` of ``side`` as its kind (schema, then building what it describes)."""
    path = side.root.path / rel
    try:
        if kind == "card":
            document, facts = document_and_facts(path, side.root.schema)  # copies of one card: read once
            card = card_from_document(name, document, str(path), facts)
            return _Read(card.facts(), dict(document.get("card", {})))
        if kind == "draft":
            document = schema.load(path, "draft", side.root.schema)
            method = method_from_document(name, document, str(path))
            facts = {f"acceptance.{i}": f for i, f in enumerate(method.acceptance, start=1)}
            return _Read(facts, dict(document.get("method", {})))
        if kind == "routing":
            from passprice.routing import routing_from_document

            document = schema.load(path, "routing", side.root.schema)
            routing = routing_from_document(name, document, str(path))
            facts = {p.split(".", 1)[1]: f for p, f in routing.facts().items()}
            return _Read(facts, dict(document.get("routing", {})))
        if kind == "stack":
            from passprice.stacks import stack_from_document

            document = schema.load(path, "stack", side.root.schema)
            stack = stack_from_document(name, document, str(path))
            # Paths as a lock names them, less the stack. prefix (added as the lock prefix below).
            facts = {p.removeprefix("stack."): f for p, f in stack.lock_facts().items()}
            return _Read(facts, dict(document.get("stack", {})))
        if kind == "checkpoint":
            from passprice.checkpoints import header_from_entry
            from passprice.pins import checkpoint_content, checkpoint_digest

            document = schema.load(path, "checkpoint", side.root.schema)
            header = header_from_entry(document, str(path))
            return _Read(meta=checkpoint_claims(document), content=checkpoint_digest(header),
                         data=checkpoint_content(header), layout=checkpoint_layout(document))
        elif kind == "serving":
            from passprice.servings import spec_of_file

            return _Read(spec=spec_of_file(side.root, path))  # as check reads it: built once for both
        elif kind == "lock":
            read_lock(path, side.root.schema)
        elif kind == "source":
            from passprice.sources import load_source

            load_source(side.root, str(path))
        elif kind == "schema":
            try:
                json.loads(read_regular(path, schema.MAX_SCHEMA_BYTES,
                                        lambda size: _raise(schema.schema_too_large(path, size))).decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise InputError(f"{path}: not valid JSON: {e}") from None
            except RecursionError:  # a schema file nested 10^5 deep: a traceback, exit 1 (attack round 57)
                raise InputError(f"{path}: not valid JSON: nested too deeply") from None
    except InputError as e:
        return _Read(errors=tuple(side.local(line) for line in problem_lines(e)))
    return _Read()


def compare_file(base: Side, head: Side, rel: str, renamed_from: str | None = None,
                 renamed_to: str | None = None) -> FileChange:
    """The change of the file ``rel`` between ``base`` and ``head`` (it differs, or one side lacks it): each side's
    errors, and, for a card or drafting method that reads on every side it is on, its fact and metadata changes. A
    card HEAD adds as BASE's card ``renamed_from`` (:func:`card_renames`) is compared with that file; a card HEAD
    removes as ``renamed_to`` lists no facts (they are compared there)."""
    kind, name = file_kind(rel)
    on_base, on_head = rel in base.files, rel in head.files
    status = "added" if not on_base else "removed" if not on_head else "changed"
    if renamed_from is not None:
        old = _read(base, renamed_from, kind, file_kind(renamed_from)[1])
    else:
        old = _read(base, rel, kind, name) if on_base else _Read(facts={}, meta={})
    new = _read(head, rel, kind, name) if on_head else _Read(facts={}, meta={})
    if renamed_to is not None:
        old = _Read(facts={}, meta={}, errors=old.errors)
    facts: tuple[FactChange, ...] = ()
    meta: tuple[str, ...] = ()
    if kind in ("card", "draft", "routing", "stack") and old.facts is not None and new.facts is not None:
        facts = fact_changes(old.facts, new.facts, _LOCK_PREFIX.get(kind, ""))
        if (on_base and on_head) or renamed_from is not None:
            before, after = old.meta or {}, new.meta or {}
            meta = tuple(k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k))
    claims: tuple[Mapping[str, str] | None, Mapping[str, str] | None] = (None, None)
    inside: tuple[str, ...] = ()
    layout: tuple[str, ...] = ()
    if kind == "checkpoint" and on_base and on_head and old.meta is not None and new.meta is not None:
        meta = tuple(k for k in dict.fromkeys([*old.meta, *new.meta]) if old.meta.get(k) != new.meta.get(k))
        claims = (old.meta, new.meta)
        if old.content != new.content and old.data is not None and new.data is not None:
            inside = content_changes(old.data, new.data)
        if old.layout is not None and new.layout is not None:
            layout = layout_changes(old.layout, new.layout)
    serving: tuple[str, ...] = ()
    if kind == "serving" and old.spec is not None and new.spec is not None:
        serving = (_serving_changes(old.spec, new.spec) + _description_changed(old.spec, new.spec)
                   + _description_names_old(old.spec, new.spec))
    # The facts HEAD derives from a changed fact, and whether each still follows (passprice.lineage).
    derived = tuple(changed_dependants(new.facts or {}, [c.path for c in facts if c.new is not None]))
    # A price resting on a derived fact that no longer follows from its inputs rests on a figure nobody computed.
    findings = tuple(recheck_all(new.facts)) if on_head and new.facts else ()
    return FileChange(
        rel, kind, name, status, old.errors, new.errors, facts, meta, (old.content, new.content), serving, derived,
        findings, head.files[rel] if on_head and facts else None, renamed_from or renamed_to,
        claims, inside, layout,
    )


#: The most differences of a checkpoint entry's content a review names (:func:`content_changes`); the rest counted.
MAX_CONTENT_CHANGES = 5
#: The most characters of a metadata value a content change shows (:func:`content_changes`).
MAX_CONTENT_VALUE = 60


def content_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """What differs between two contents of a checkpoint entry (:func:`passprice.pins.checkpoint_content`: its
    ``metadata`` key → [type, value] and its ``tensors`` [name, GGML type id, dims]), one line a difference, tensors
    first in HEAD's table order, then metadata keys sorted: ``tensor blk.0.ffn_down.weight: type Q6_K → Q4_K``,
    ``tensor NAME: dims [2048, 640] → [2048, 512]``, ``tensor NAME added (Q4_K [1024, 640])``, ``tensor NAME
    removed``, ``tensors reordered``, ``metadata KEY: VALUE → VALUE`` (each value its JSON, cut to
    :data:`MAX_CONTENT_VALUE` characters), ``metadata KEY added``/``removed``; the first :data:`MAX_CONTENT_CHANGES`,
    then ``and N more``. Names are shown as :func:`passprice.tables.printable` shows them. Walkthrough 30: an entry
    whose one tensor turned Q6_K → Q4_K, re-locked, read only its two content digests in the review, so nothing
    said what moved the price."""
    from passprice.ggml import type_name
    from passprice.tables import printable

    def value(v: Any) -> str:
        text = json.dumps(v, ensure_ascii=False, sort_keys=True)
        return printable(text if len(text) <= MAX_CONTENT_VALUE else text[:MAX_CONTENT_VALUE - 1] + "…")

    was = {t[0]: (t[1], list(t[2])) for t in old.get("tensors", [])}
    now = {t[0]: (t[1], list(t[2])) for t in new.get("tensors", [])}
    out: list[str] = []
    for name, (type_id, dims) in now.items():
        shown = printable(str(name))
        if name not in was:
            out.append(f"tensor {shown} added ({type_name(type_id)} {dims})")
            continue
        old_type, old_dims = was[name]
        if old_type != type_id:
            out.append(f"tensor {shown}: type {type_name(old_type)} → {type_name(type_id)}")
        if old_dims != dims:
            out.append(f"tensor {shown}: dims {old_dims} → {dims}")
    out += [f"tensor {printable(str(name))} removed" for name in was if name not in now]
    if not out and [t[0] for t in old.get("tensors", [])] != [t[0] for t in new.get("tensors", [])]:
        out.append("tensors reordered")
    before, after = old.get("metadata", {}), new.get("metadata", {})
    for key in sorted({*before, *after}):
        shown = printable(str(key))
        if key not in before:
            out.append(f"metadata {shown} added ({value(after[key][1])})")
        elif key not in after:
            out.append(f"metadata {shown} removed")
        elif before[key] != after[key]:
            out.append(f"metadata {shown}: {value(before[key][1])} → {value(after[key][1])}"
                       + (f" (type {before[key][0]} → {after[key][0]})" if before[key][0] != after[key][0] else ""))
    if len(out) > MAX_CONTENT_CHANGES:
        out = [*out[:MAX_CONTENT_CHANGES], f"and {len(out) - MAX_CONTENT_CHANGES:,} more"]
    return tuple(out)


#: A checkpoint entry's claims: what it says of the GGUF file it was imported from and where that came from, none of
#: which the pricer reads (its tensor table and metadata are the entry's ``content``).
CLAIM_KEYS = (("entry", "source"), ("entry", "origin"), ("entry", "imported_by"), ("header", "sha256"))


def checkpoint_claims(document: Mapping[str, Any]) -> dict[str, str]:
    """A schema-valid checkpoint entry's claims, key path → value as text: ``entry.source``, ``entry.origin``,
    ``entry.imported_by``, ``header.sha256`` and each shard's ``header.shards.N.file`` and ``.sha256`` (N from 1).
    None of them is read by the pricer, so an edit of one alone leaves the entry's content digest as it was, and a
    header ``sha256`` rewritten by hand said only "the entry was rewritten" (session 17): the review names each."""
    claims = {f"{table}.{key}": str(document[table][key])
              for table, key in CLAIM_KEYS if key in document.get(table, {})}
    for n, shard in enumerate(document.get("header", {}).get("shards", ()), start=1):
        for key in ("file", "sha256"):
            if key in shard:
                claims[f"header.shards.{n}.{key}"] = str(shard[key])
    # A long array's element digest (``tokenizer.ggml.tokens``' sha256) is what tells a re-tokenized copy from the
    # model (passprice.scopes): not in the content digest a lock pins, so dropped by hand it read "the entry was
    # rewritten" alone (slip round 38).
    metadata = document.get("metadata", {})
    for key, value in metadata.items() if isinstance(metadata, Mapping) else ():
        if isinstance(value, Mapping) and "sha256" in value:
            claims[f"metadata.{key}.sha256"] = str(value["sha256"])
    return claims


#: A checkpoint entry's header keys that say where the GGUF file's parts lie (:func:`checkpoint_layout`).
LAYOUT_KEYS = ("version", "byte_order", "header_bytes", "alignment", "data_offset")
#: A shard's keys that say where its parts lie (:func:`checkpoint_layout`).
SHARD_LAYOUT_KEYS = ("header_bytes", "data_offset", "tensor_count")


def checkpoint_layout(document: Mapping[str, Any]) -> dict[str, str]:
    """A schema-valid checkpoint entry's layout, key path → value as text: ``entry.name``, the header's
    :data:`LAYOUT_KEYS`, each shard's :data:`SHARD_LAYOUT_KEYS` (``header.shards.N.KEY``, N from 1) and each tensor's
    ``offset`` and ``shard`` (``tensors.NAME.offset``). Where the file's parts lie, not what they are: none is in the
    entry's content digest (:func:`passprice.pins.checkpoint_content`: metadata, tensor names, types and dims) nor
    read by the pricer, and none is a claim (:func:`checkpoint_claims`), so an edit of one alone read "content
    unchanged (the entry was rewritten …)" and nothing more (session 27: three tensor offsets edited by hand)."""
    out: dict[str, str] = {}
    entry, header = document.get("entry", {}), document.get("header", {})
    if "name" in entry:
        out["entry.name"] = str(entry["name"])
    out |= {f"header.{key}": str(header[key]) for key in LAYOUT_KEYS if key in header}
    for n, shard in enumerate(header.get("shards", ()), start=1):
        out |= {f"header.shards.{n}.{key}": str(shard[key]) for key in SHARD_LAYOUT_KEYS if key in shard}
    for tensor in header.get("tensors", ()):
        for key in ("offset", "shard"):
            if key in tensor and "name" in tensor:
                out[f"tensors.{tensor['name']}.{key}"] = str(tensor[key])
    return out


def layout_changes(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[str, ...]:
    """What differs between two layouts of a checkpoint entry (:func:`checkpoint_layout`), for keys on both sides
    (a tensor added or removed is a content change): tensors' offsets and shards counted (``3 tensor offsets
    changed``), each other key with its values (``header.alignment 32 → 64``), at most :data:`MAX_CONTENT_CHANGES`
    lines and how many more. Raises nothing."""
    from passprice.errors import escaped

    changed = [k for k in old if k in new and old[k] != new[k]]
    out: list[str] = []
    for suffix, what in ((".offset", "tensor offset"), (".shard", "tensor shard")):
        n = sum(k.startswith("tensors.") and k.endswith(suffix) for k in changed)
        if n:
            out.append(f"{_n(n, what)} changed")
    out += [f"{k} {escaped(old[k])[:MAX_CONTENT_VALUE]} → {escaped(new[k])[:MAX_CONTENT_VALUE]}"
            for k in changed if not k.startswith("tensors.")]
    if len(out) > MAX_CONTENT_CHANGES:
        out = [*out[:MAX_CONTENT_CHANGES], f"and {len(out) - MAX_CONTENT_CHANGES:,} more"]
    return tuple(out)


def layout_line(f: FileChange) -> str:
    """The review's line for a checkpoint entry's layout changes (:attr:`FileChange.layout`): ``checkpoint NAME:
    3 tensor offsets changed; no price rests on them``."""
    return f"checkpoint {spelled(f.name)}: {', '.join(f.layout)}; no price rests on them"


#: What a checkpoint entry whose recorded digests the change drops or rewrites asks (:attr:`Diff.digests_dropped`).
DROPPED_DIGESTS = ("a digest that identifies the header is dropped or rewritten while the entry stays: it decides "
                   "which headers count as this checkpoint (a record scoped to it, a lock pinning it by header "
                   "sha256), and one dropped lets another header in; re-import the entry from its GGUF file "
                   "(`passprice import`), or say which file holds it")


def looks_as(name: str) -> str:
    """``name`` as a reviewer reads it: NFC, case-folded (:func:`passprice.files.fold`), characters that do not
    print dropped and Cyrillic or Greek letters read as the Latin ones they look like
    (:data:`passprice.addedfacts._LOOK_ALIKE`): ``h200_sхm_141gb`` with a Cyrillic ``х`` reads ``h200_sxm_141gb``."""
    from passprice.addedfacts import _LOOK_ALIKE, _TYPESET
    from passprice.files import fold

    return fold(name.translate(_TYPESET).translate(_LOOK_ALIKE))


def lookalike_records(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each record file ``files`` adds (a card, drafting method, routing record, stack, checkpoint entry, serving,
    source or lock) whose name reads as another record's of its kind on HEAD (:func:`looks_as`), by path: what a
    reviewer must verify, quoting both files. Slip round 38: a card copied as ``facts/cards/h200_sхm_141gb.toml``
    (a Cyrillic ``х``) read "added", its name spelled, with nothing saying which registered card it reads as."""
    added = [f for f in files if f.status == "added" and f.kind not in ("other", "schema")]
    if not added:
        return {}
    by_kind: dict[str, dict[str, list[str]]] = {}
    for rel in sorted(head.files):
        kind, name = file_kind(rel)
        if kind not in ("other", "schema"):
            by_kind.setdefault(kind, {}).setdefault(looks_as(name), []).append(rel)
    out = {}
    for f in added:
        others = [rel for rel in by_kind.get(f.kind, {}).get(looks_as(f.name), []) if rel != f.path]
        if others:
            before = [rel for rel in others if rel in base.files]
            shown = ", ".join(spelled(rel) for rel in (before or others)[:3])
            out[f.path] = (f"{spelled(f.path)} is a new {f.kind} whose name reads as that of {shown}"
                           f"{' (registered before this change)' if before else ''}: a reviewer sees one name for "
                           "two records; is it a new record, or a copy standing in for the other? rename it so the "
                           "names read apart")
    return out


def dropped_digests(f: FileChange) -> tuple[str, ...]:
    """The digest claims (:func:`checkpoint_claims`: ``header.sha256``, a shard's ``sha256``, a long array's element
    digest) that checkpoint entry ``f``, changed on both sides, records on BASE and HEAD drops or rewrites, each as
    ``KEY OLD → NEW`` (``(none)`` for a dropped one). A digest rewritten counts only where the content (what the
    pricer reads) did not change: a re-import of another file changes both, and its content change is reviewed on
    its own (the locks pinning it fail). Empty for another file."""
    before, after = f.claims
    if f.kind != "checkpoint" or f.status != "changed" or before is None or after is None:
        return ()
    same = f.content[0] is not None and f.content[0] == f.content[1]
    return tuple(f"{k} {_claim_change(k, before[k], after.get(k))}" for k in before
                 if k.endswith("sha256") and (k not in after or (same and after[k] != before[k])))


def _claim_change(key: str, old: str | None, new: str | None) -> str:
    """A claim's change as the review shows it: a digest cut to 12 hex digits and an ellipsis, a text by what changed
    in it (:func:`passprice.textchange.text_change`), a claim added or removed as ``(none)``."""
    from passprice.textchange import text_change

    if key.endswith("sha256"):
        old, new = (v if v is None or len(v) <= 16 else v[:12] + "…" for v in (old, new))
    if old is None or new is None:
        return f"{old or '(none)'} → {new or '(none)'}"
    return text_change(old, new)


def claims_changed(f: FileChange) -> str:
    """The review's line for a checkpoint entry's changed claims (:func:`checkpoint_claims`): each key with its
    value before and after."""
    before, after = f.claims
    said = ", ".join(f"{k} {_claim_change(k, (before or {}).get(k), (after or {}).get(k))}" for k in f.meta)
    return (f"claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): {said}")


def card_renames(base: Side, head: Side, paths: Iterable[str]) -> dict[str, str]:
    """The records holding facts of ``paths`` (the changed files) a change renamed — cards, drafting methods, routing
    records, serving stacks (slip round 51: a stack renamed read "removed" and its 14 facts "added") —: HEAD's added
    file → BASE's removed one of the same kind, when a serving registered on both sides names the removed one on BASE
    and the added one on HEAD, or else when both files' own tables (``[card]``, ``[method]``, ``[routing]``,
    ``[stack]``) give the same ``name`` (the record's title); each file paired once, by path."""
    from passprice.schema import kind_cap, toml_loads
    from passprice.unlocked import SERVINGS, named_files

    kinds = {"card": "card", "draft": "method", "routing": "routing", "stack": "stack"}
    paths = list(paths)
    gone = {file_kind(p): p for p in paths if file_kind(p)[0] in kinds and p in base.files and p not in head.files}
    added = {file_kind(p): p for p in paths if file_kind(p)[0] in kinds and p in head.files and p not in base.files}
    if not gone or not added:
        return {}
    out: dict[str, str] = {}
    for rel in sorted(set(base.files) & set(head.files)):
        if not rel.startswith(f"{SERVINGS}/") or file_kind(rel)[0] != "serving":
            continue
        was, now = named_files(base.files[rel]), named_files(head.files[rel])
        for old in sorted(was - now):
            for new in sorted(now - was):
                if old[0] == new[0] and old in gone and new in added and added[new] not in out \
                        and gone[old] not in out.values():
                    out[added[new]] = gone[old]

    def title(kind: str, data: bytes) -> str | None:
        if len(data) > kind_cap(kind):
            return None
        try:
            table = toml_loads(data.decode("utf-8")).get(kinds[kind])
        except (UnicodeDecodeError, ValueError):
            return None
        name = table.get("name") if isinstance(table, dict) else None
        return name if isinstance(name, str) else None

    titles = {rel: (key[0], title(key[0], base.files[rel])) for key, rel in sorted(gone.items())
              if rel not in out.values()}
    for key, new_rel in sorted(added.items()):
        if new_rel in out:
            continue
        now_title = title(key[0], head.files[new_rel])
        match = next((rel for rel, (kind, t) in titles.items() if kind == key[0] and t is not None
                      and t == now_title and rel not in out.values()), None)
        if match is not None:
            out[new_rel] = match
    return out


# --- what the change does to the locks -----------------------------------------------------------------------------


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
#: (:func:`_cut_keeping`).
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
        codes = _CommitCode(checkout, [c for m in todo for c in holding.get(m, [])[:3]] + list(resolved.values()))
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
            for commit in dict.fromkeys([*own, *holding.get(model, [])[:3]]):
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
    :func:`_branch_records` asks it: the folder written out (:meth:`Checkout.materialize`) and digested
    (:func:`passprice.pins.pricing_model_digest`), ``None`` where that code does not read. Each answer is keyed by
    the id of the commit's code folder (one ``git cat-file --batch-check`` for ``commits``, the ones to be asked),
    which names every byte the answer is a function of: the same folder is digested once a process, and a digest is
    kept in passprice's cache under that id (with this passprice's code, the interpreter and every ``PASSPRICE_``
    variable, which set the caps), so a review asked again writes out and digests no commit's code a second time (a
    review of an old BASE wrote out and digested 145 of them, 3.3 s of CPU of its 11 s: tests/test_review137.py,
    docs/PERFORMANCE.md). A code that does not read is not kept (its reason may be git's, a timeout). Raises nothing
    of its own; :meth:`digest` raises what git does."""

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
        return cache.key("branch-code", b"", f"{sys.version}\n{tree}\n{caps}".encode("utf-8", "surrogateescape"))

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
    a side's file as plain TOML (:func:`side_toml`), or ``None``: not UTF-8, not TOML, past a cap, no ``lock`` table,
    or either value not a string (a ``pricing_model`` that is a table or an array was a ``TypeError``, a traceback, in
    :func:`_branch_records`'s test of it against the asked models). Raises :class:`InputError` only for a cap
    variable set wrong (:func:`side_toml`)."""
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


def _pins_key() -> str:
    """The cache key of :func:`_lock_pins`' entry: this passprice's code (:func:`passprice.cache.key`), the
    interpreter and every ``PASSPRICE_`` variable (which set the caps a file is read within)."""
    import sys

    caps = "".join(f"{k}={v}\0" for k, v in sorted(os.environ.items()) if k.startswith("PASSPRICE_"))
    return cache.key("lock-pins", b"", f"{sys.version}\n{caps}".encode("utf-8", "surrogateescape"))


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


def lock_impacts(base: Side, head: Side, files: Iterable[FileChange]) -> tuple[LockImpact, ...]:
    """Every lock of either side, re-priced with BASE's inputs and code (BASE's lock) and with HEAD's (HEAD's lock),
    and judged with each side's own policy."""
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
        touched = [by_file.get(("card", lock.card))]
        if lock.spec.draft is not None:
            touched.append(by_file.get(("draft", lock.spec.draft.method)))
        if lock.spec.routing is not None:
            touched.append(by_file.get(("routing", lock.spec.routing)))
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
            drifted += relabelled_pins(head, new, by_file.get(("card", lock.card)), after.spec,
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
            serving, serving_fields = _serving_change_pairs(
                spec_from_document(before.spec, "BASE"), spec_from_document(after.spec, "HEAD")
            )
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
                unsound=tuple(unsound),
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


def side_toml(data: bytes, kind: str) -> dict[str, Any]:
    """The TOML document in ``data`` (the bytes of a ``kind`` file of a side: a schema's name, ``card``, ``lock``
    ...), parsed as that kind's own read parses it but not validated: refused unparsed past the kind's cap
    (:func:`passprice.schema.kind_cap`) or its shape's (:func:`passprice.schema.shape_problem`), then
    :func:`passprice.schema.toml_loads` (a dotted key of thousands of parts
    refused before ``tomllib`` spends their square; nesting past the recursion limit and an integer of thousands of
    digits refused as a syntax error). Every look a review takes at a side's file as plain TOML goes through here: a
    file that does not read as its kind (a lock whose digest fails, any lock file of a side, an added card) is looked
    at unvalidated, and a bare ``tomllib.loads`` of a hostile one raised ``RecursionError`` or ``ValueError`` past
    each caller's ``except TOMLDecodeError`` (a traceback), or parsed a 50 MB file whole (slip 54). Raises
    ``tomllib.TOMLDecodeError`` for each refusal (every caller passes over a file that does not parse),
    ``UnicodeDecodeError`` for bytes that are not UTF-8, :class:`InputError` only for a cap variable set wrong."""
    if len(data) > schema.kind_cap(kind):
        raise schema.toml_refusal(f"larger than {schema.kind_cap(kind):,} bytes, the most a {kind} file may hold")
    problem = None if kind == "checkpoint" else schema.shape_problem(kind, data)
    if problem is not None:  # tomllib's cost is its separators' (tests/test_bound111.py)
        raise schema.toml_refusal(problem)
    return schema.toml_loads(data.decode("utf-8"))


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
    """The copies :func:`recomputed_prices` made while :func:`compare` runs (``made``: by the id of HEAD's side and
    of the file changes) and the exit stack that removes their folders (``removal``)."""

    made: dict[tuple[int, int], _Copy]
    removal: contextlib.ExitStack


#: While :func:`compare` runs (:func:`_shared_copies`): the locks' and the unlocked servings' prices share one copy
#: (round 28: each wrote all of HEAD's files again and recomputed the card again, about a tenth of the CPU of a
#: review of one changed card fact).
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
    Inside :func:`compare`, a second call on the same HEAD and changes (the unlocked servings' after the locks')
    prices in the first call's copy, unless a stack it prices stands otherwise there than it wants it (re-fitted or
    not, :func:`_fits`): then in a copy of its own. Raises nothing."""
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
            copy = _recomputed_copy(head, files, folder)
            if copy.error is None:
                copy.error = _refit(copy, requests, refits)
            if shared is not None and key not in shared.made:
                shared.made[key] = copy
        else:
            stack.enter_context(cache.unkept(copy.folder))
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
    from passprice.files import write_atomically
    from passprice.measurements import load_runs
    from passprice.stackfits import fit_inputs, shipped_stack
    from passprice.stacks import stack_path

    path = stack_path(root, stack.name)
    inputs = None
    try:
        runs: list[Any] | None = load_runs(root)
    except InputError:  # a run that does not read: the re-fit says so as ever
        runs = None
    if cache.enabled() and runs is not None:
        inputs = fit_inputs(root, stack, runs)
    entry_key = cache.object_key(REFIT_KIND, inputs) if inputs is not None else None
    if inputs is not None:
        kept = cache.kept_object(REFIT_KIND, inputs, bytes, entry_key)
        if kept is not None:
            if path.read_bytes() != kept:
                write_atomically(path, kept, force=True)
            return
    # a shipped stack as shipped: its re-fit is its file (the package's table, the cache bypassed or not)
    if runs is not None and (inputs is not None or not cache.enabled()) and shipped_stack(root, stack, runs):
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


# --- the diff ------------------------------------------------------------------------------------------------------


@attrs.frozen
class Diff:
    """What changed between ``base`` and ``head``: the ``files`` that differ (cards and drafting methods with their
    fact changes, checkpoints with their content digests, servings with their field changes; every other file by
    name, with errors), every lock reviewed (``reviews``), and the code each side was priced with.

    Exit status (:attr:`exit_status`): 2 when a file does not read on HEAD (bad input brought in by the change), else
    1 when a change leaves a lock unheld (a fact below its floor, a price HEAD refuses, a checkpoint whose content
    is not the pinned one), moves a locked price (the limit, or the expected price under a serving stack) without
    updating the lock, leaves a derived fact of a changed file not following from its inputs (stale, as ``passprice
    check`` fails it: the locks resting on it are marked), or leaves HEAD failing ``passprice check`` in any other
    way (:attr:`head_check`), else 0."""

    base: SideInfo
    head: SideInfo
    files: tuple[FileChange, ...]
    reviews: tuple[LockImpact, ...] = ()
    base_code: Code | None = None
    head_code: Code | None = None
    #: What ``passprice check`` finds in HEAD's files (:func:`passprice.check.review_files`: schemas, derived facts,
    #: stack fits re-run from their measured runs, servings resolved), and which of those are files that do not
    #: read: a review fails wherever ``check`` on HEAD would (a measured run edited without a re-fit, an entry whose
    #: name is not its file's), whichever lock the change reaches.
    head_check: tuple[str, ...] = ()
    head_unreadable: tuple[str, ...] = ()
    #: Sources whose id leads to another document on HEAD (:mod:`passprice.sourcechange`): to verify, never failed.
    sources: tuple[SourceChange, ...] = ()
    #: The registered servings no lock names whose price (or refusal) the change moves (:mod:`passprice.unlocked`):
    #: shown, marked not locked; nothing pins them, so they never fail the review.
    unlocked: tuple[ServingMove, ...] = ()
    #: How many more unlocked servings the change reaches than a review re-prices
    #: (:data:`~passprice.unlocked.MAX_REPRICED`): named in one line, not priced.
    unlocked_left_out: int = 0
    #: The files of ``src/passprice`` HEAD changes (:func:`passprice.sidecode.code_changes`): the code that makes
    #: this verdict, when HEAD's passprice runs it. Shown, never failed (a change to passprice itself is reviewed by
    #: people, with the verdict of BASE's passprice).
    code_files: tuple[str, ...] = ()
    #: HEAD's lock files that duplicate another (:func:`passprice.check.duplicate_lines`: the same pins, floors and
    #: price under another file name), one of the two added or changed by the change: shown, never failed.
    duplicates: tuple[str, ...] = ()
    #: What ``passprice check`` on HEAD warns of (:attr:`passprice.check.FileReview.warnings`: a temporary file a
    #: killed write left, a source nothing cites, the editors' schema copy out of date, a GGUF file among the entries
    #: …), each line as check prints it: shown, never failed. Until session 13 a review said nothing of them.
    head_warnings: tuple[str, ...] = ()
    #: How many more of those warnings there were past the first :data:`MAX_HEAD_WARNINGS` (shown as a count: 3,000
    #: sources nothing cites made a pull-request comment of 318 KB, past GitHub's 65,536 characters, round 23).
    head_warnings_left_out: int = 0
    #: The servings HEAD registers and BASE does not (:mod:`passprice.addedservings`): what each prices, HEAD's price
    #: of it and the locks of it. Shown, never failed; until slip round 28 a review showed an added serving's path
    #: alone, counted as "1 other file changed".
    added_servings: tuple[AddedServing, ...] = ()
    #: The files of :data:`INSTALL_FILES` and :data:`WORKFLOWS` HEAD adds, removes or rewrites: what decides which
    #: passprice checks and reviews the registry. Shown, never failed.
    install_files: tuple[str, ...] = ()
    #: Each source record and checkpoint entry HEAD adds, by path: what it is, in one line (:func:`added_records`).
    #: Walkthrough 21: an added source read "Other files changed: `sources/X.toml` (added)" beside a fact's "to
    #: verify" asking about it, and an added checkpoint "content – → 8712effdea2c…", neither saying what it is.
    added_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each changed stack whose fitted runs' measured / limit span moved, by path (:func:`stack_spans`).
    spans: Mapping[str, str] = attrs.field(factory=dict)
    #: How many runs of each measurement file the change edits are to verify in their source, by path
    #: (:func:`runs_to_verify`; each described in :attr:`added_records`). Shown, never failed.
    recited: Mapping[str, int] = attrs.field(factory=dict)
    #: Each routing record or drafting method whose ``checkpoints`` scope the change widens, by path: what to verify
    #: (:func:`scopes_widened`; shown with the file, as :attr:`added_records` describes it). Shown, never failed.
    widened: Mapping[str, str] = attrs.field(factory=dict)
    #: Each record file the change adds whose name reads as another record's of its kind, by path: what to verify,
    #: quoting both files (:func:`lookalike_records`). Shown, never failed.
    lookalikes: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card BASE marks hypothetical and HEAD does not, by path: what to verify (:func:`made_real`). Shown,
    #: never failed.
    made_real: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card retitled or newly marked hypothetical, by path: what to verify, naming HEAD's locks that pin it as it
    #: was (:func:`relabelled_cards`). Shown, never failed.
    relabelled: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds marked hypothetical whose facts claim a published or measured figure, by path: what
    #: to verify (:func:`hypothetical_claims`). Shown, never failed.
    hypothetical: Mapping[str, str] = attrs.field(factory=dict)
    #: Each registered source a fact the change adds or changes cites on HEAD (its own source or a figure input's),
    #: by id: the document, and the changed facts citing it (:func:`cited_sources`). Shown, never failed.
    cited: Mapping[str, str] = attrs.field(factory=dict)
    #: Each routing record or drafting method retitled or re-noted, by path: what to verify, naming HEAD's locks that
    #: price with it (:func:`relabelled_records`). Shown, never failed.
    relabelled_records: Mapping[str, str] = attrs.field(factory=dict)
    #: Each card the change adds, retitles or unmarks whose HEAD title says hypothetical while it is not marked so, by
    #: path: what to verify (:func:`titles_contradicting`). Shown, never failed.
    title_contradicts: Mapping[str, str] = attrs.field(factory=dict)
    #: HEAD's locks made under a serving stack fitted from a measured run to verify (:func:`runs_to_verify`'s
    #: ``stacks``), by name: their expected price rests on the run's figure (slip round 46).
    recited_locks: tuple[str, ...] = ()
    #: Each record re-cited to another table row whose unchanged description (or its source's ``read``) still names
    #: the old row, by path: what to verify (:func:`stale_descriptions`). Shown, never failed.
    stale_descriptions: Mapping[str, str] = attrs.field(factory=dict)
    #: Each serving stack whose route (``integer_matrices``, ``float_matrices``: where its matrix kernels run) the
    #: change moved while a lock of HEAD is made under it, by path: what to verify (:func:`rerouted_stacks`). Shown,
    #: never failed.
    rerouted: Mapping[str, str] = attrs.field(factory=dict)
    #: The lines of :attr:`head_check` that are the review's own rules, not ``passprice check``'s (the list of pricing
    #: models, the commands that write the shipped headers, a lock's pin no side of the change holds, a pricing model
    #: no code of the review gives): :meth:`check_line` names them so (a new user read "HEAD
    #: fails passprice check (162 problems)" of list entries where ``check`` on HEAD found none: tests/test_walk128.py).
    review_rules: frozenset[str] = frozenset()
    #: One line a ``.gitattributes`` ``export-ignore``/``export-subst`` rule HEAD sets on a file of its facts, locks
    #: or sources (records and stored excerpts) that BASE did not set so (:func:`export_lines`): ``git archive`` of
    #: HEAD leaves the file out or rewrites it, so a release packed from it is not the registry reviewed. Named, never
    #: failed (tests/test_left131.py: such a rule read "no changes").
    export_rules: tuple[str, ...] = ()

    @property
    def entries_edited(self) -> tuple[str, ...]:
        """The checkpoint entries whose content (what the pricer reads) changed while the header ``sha256`` they
        record did not, by path: an entry is imported from one file's header, so the same digest over another
        content is an entry edited by hand (slip round 36: one tensor of an entry no serving names turned Q8_0 →
        Q4_0 read "1 checkpoint entry changed", nothing to verify, exit 0). Shown, never failed."""
        out = []
        for f in self.files:
            old, new = f.claims
            if (f.kind == "checkpoint" and f.status == "changed" and old is not None and new is not None
                    and f.content[0] != f.content[1] and None not in f.content
                    and old.get("header.sha256") == new.get("header.sha256")):
                out.append(f.path)
        return tuple(out)

    @property
    def by_header(self) -> dict[str, str]:
        """Each lock HEAD holds only by its checkpoint's header (:attr:`LockImpact.by_header`), by name: what to
        verify. Shown, never failed."""
        return {lock.name: said for lock in self.reviews if (said := lock.by_header) is not None}

    @property
    def digests_dropped(self) -> dict[str, tuple[str, ...]]:
        """The checkpoint entries whose recorded digests (the header's sha256, a shard's, a long array's element
        digest) the change drops or rewrites, by path: each digest with its value before → after
        (:func:`dropped_digests`). Slip round 38: ``tokenizer.ggml.tokens``' element digest removed from the
        entry a lock pins read "content unchanged (the entry was rewritten …)", nothing to verify, exit 0, and a
        re-tokenized copy then counted as the entry's model (:func:`passprice.scopes.same_model` held only the
        digests both know; since session 24 a copy is refused where a digest is missing). Shown, never failed."""
        return {f.path: found for f in self.files if (found := dropped_digests(f))}

    @property
    def header_pins(self) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry of :attr:`digests_dropped`, by path, the locks of HEAD that pin the header
        sha256 it stated before (their ``drifted`` holds ``checkpoint.sha256``, :func:`header_repinned`): each must be
        re-pinned (``lock --update``), ``check --frozen`` failing until then. Slip round 43: the review asked the
        rewritten digest but named no lock pinning the old one."""
        dropped = self.digests_dropped
        out: dict[str, tuple[str, ...]] = {}
        for f in self.files:
            if f.path not in dropped:
                continue
            names = tuple(r.name for r in self.reviews
                          if r.pinned_checkpoint == f.name and "checkpoint.sha256" in r.drifted)
            if names:
                out[f.path] = names
        return out

    @property
    def origin_pins(self) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry whose ``origin`` the change rewrites, by path, the locks of HEAD that pin the
        origin it stated before (their ``drifted`` holds ``checkpoint.origin``, :func:`origin_repinned`): each must be
        re-pinned (``lock --update``), ``check --frozen`` failing until then (session 27: a lock pins its entry's
        origin, which ``audit`` cites)."""
        return self.entry_label_pins("origin")

    @property
    def source_pins(self) -> dict[str, tuple[str, ...]]:
        """As :attr:`origin_pins`, of the entry's ``source`` (the header file ``audit`` cites; slip round 46)."""
        return self.entry_label_pins("source")

    def entry_label_pins(self, key: str) -> dict[str, tuple[str, ...]]:
        """For each checkpoint entry whose ``[entry]`` ``key`` (``origin``, ``source``) the change rewrites, by path,
        the locks of HEAD pinning the value it stated before (``checkpoint.KEY`` among their ``drifted``,
        :func:`entry_label_repinned`)."""
        out: dict[str, tuple[str, ...]] = {}
        for f in self.files:
            if f.kind != "checkpoint" or f"entry.{key}" not in f.meta:
                continue
            names = tuple(r.name for r in self.reviews
                          if r.pinned_checkpoint == f.name and f"checkpoint.{key}" in r.drifted)
            if names:
                out[f.path] = names
        return out

    def origin_pinned_line(self, path: str) -> str:
        """``; N locks pin the old origin: A, B (re-pin: passprice lock --update)`` for the entry at ``path`` of
        :attr:`origin_pins`, and ``; N locks pin the old source: …`` of :attr:`source_pins`; empty when none pins
        either."""
        out = ""
        for key, pins in (("origin", self.origin_pins), ("source", self.source_pins)):
            names = pins.get(path, ())
            if names:
                out += (f"; {_n(len(names), 'lock')} pin{'s' if len(names) == 1 else ''} the old {key}: "
                        f"{', '.join(spelled(n) for n in names)} (re-pin: passprice lock --update)")
        return out

    def header_pinned_line(self, path: str) -> str:
        """``; N locks pin the old header: A, B (re-pin: passprice lock --update)`` for the entry at ``path`` of
        :attr:`header_pins`, empty when none pins it."""
        names = self.header_pins.get(path, ())
        if not names:
            return ""
        return (f"; {_n(len(names), 'lock')} pin{'s' if len(names) == 1 else ''} the old header: "
                f"{', '.join(spelled(n) for n in names)} (re-pin: passprice lock --update)")

    @property
    def runs_recited(self) -> int:
        """How many runs of the measurement files the change edits are to verify in their source
        (:attr:`recited`)."""
        return sum(self.recited.values())

    @property
    def runs_outside(self) -> tuple[str, ...]:
        """The stacks (by path) whose re-fit rests on an added run outside the span BASE's runs measured
        (:attr:`spans`): to verify, never failed."""
        return tuple(path for path, line in self.spans.items() if "outside BASE's span" in line)

    @property
    def locks(self) -> tuple[LockImpact, ...]:
        """The locks a reviewer needs to see (:attr:`LockImpact.affected`)."""
        return tuple(lock for lock in self.reviews if lock.affected)

    @property
    def behind(self) -> tuple[LockImpact, ...]:
        """The locks out of date already on BASE that the change does not touch (:attr:`LockImpact.behind`): listed
        as such, not counted as affected by the change."""
        return tuple(lock for lock in self.locks if lock.behind)

    @property
    def unaffected(self) -> tuple[LockImpact, ...]:
        """The locks the change leaves as they were: same price, same floors, same inputs (the pricing model
        aside, when it prices them the same), and no source whose document changed under their price
        (:attr:`on_changed_sources`)."""
        resting = {*self.resting_on_sources(), *(lock.name for lock in self.on_changed_claims),
                   *(lock.name for lock in self.on_recited_runs)}
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in resting)

    @property
    def on_recited_runs(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise, nor counted on a changed source or checkpoint claim, made under a serving
        stack fitted from a measured run the change asks to verify (:attr:`recited_locks`): their expected price
        rests on the run's figure through the stack's fit, so they are to verify, not unaffected. Slip round 46: the
        111 runs of the stack ``llamacpp-cuda-2405`` re-cited to another source (or one run's locator rewritten)
        read "111 measured runs to verify …; no lock affected; 9 locks unaffected" beside a lock made under it."""
        if not self.recited_locks:
            return ()
        counted = {*self.resting_on_sources(), *(lock.name for lock in self.on_changed_claims)}
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in counted
                     and lock.name in self.recited_locks)

    @property
    def claimed_entries(self) -> tuple[str, ...]:
        """The checkpoint entries (by name) changed on both sides whose claims changed (:func:`claims_changed`: its
        ``origin``, ``source``, ``imported_by``, a header or shard sha256, a long array's element digest)."""
        return tuple(f.name for f in self.files if f.kind == "checkpoint" and f.status == "changed" and f.meta)

    @property
    def on_changed_claims(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise, nor resting on a changed source, whose checkpoint entry's claims
        changed (:attr:`claimed_entries`): to verify, so not counted unaffected. ``audit`` cites a lock's checkpoint
        by its entry's ``origin`` (:mod:`passprice.checkpointcite`), which no lock pins: slip round 45, an origin
        rewritten to "(fine-tuned)" under three locks read "no lock affected; 8 locks unaffected", ✅."""
        entries = set(self.claimed_entries)
        if not entries:
            return ()
        resting = set(self.resting_on_sources())
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name not in resting
                     and lock.pinned_checkpoint in entries)

    @property
    def on_changed_sources(self) -> tuple[LockImpact, ...]:
        """The locks not affected otherwise whose recorded price rests on a source whose document changed
        (:attr:`sources`, each's ``locks``): to verify, so not counted unaffected. Slip round 44: a source's
        document changed read "no lock affected; 8 locks unaffected" while its to-verify line named 4 locked
        prices resting on it."""
        resting = set(self.resting_on_sources())
        return tuple(lock for lock in self.reviews if not lock.affected and lock.name in resting)

    def resting_on_sources(self) -> tuple[str, ...]:
        """The names of the locks whose recorded price rests on a source whose document changed, each once."""
        return tuple(dict.fromkeys(lock for s in self.sources for lock in s.locks))

    @property
    def fact_changes(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """Every fact change a review lists, with its file: all but the facts fitted again to the same value
        (:attr:`refit_unmoved`, which ``--format json`` keeps in each file's ``facts``, marked)."""
        return tuple((f, c) for f in self.files for c in f.facts if not _folded(f, c))

    @property
    def quotes_not_found(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed or added facts whose quotes ``audit``'s quote check does not find in HEAD's stored excerpt of
        the document they cite (:attr:`FactChange.quote` ``NOT FOUND``), with their file. Each fails the review
        (:attr:`exit_status`): unlike a figure asked of a document passprice does not read, the stored excerpt is the
        registry's own record of the words read, and the quote is not in it, so either the quote is wrong or the
        excerpt lacks the lines it was read from (a new user's re-citation read "⚠️ … 1 to verify", exit 0, once its
        locks were re-locked: tests/test_walk138.py)."""
        return tuple((f, c) for f, c in self.fact_changes if c.quote is not None and c.quote.state == "NOT FOUND")

    @property
    def quotes_mismatched(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The changed or added facts whose quotes, found in HEAD's stored excerpt, state another figure than theirs
        (:attr:`FactChange.quote` ``MISMATCH``, :func:`passprice.sources.figures_quoted`), with their file. Each fails
        the review, as ``check`` fails it: a new user's ``memory.bandwidth`` moved 8 → 8.2 TB/s under its quote
        ``'Peak Memory Bandwidth 8 TB/s'`` passed once re-locked (tests/test_fix53w.py)."""
        from passprice.sources import MISMATCH

        return tuple((f, c) for f, c in self.fact_changes if c.quote is not None and c.quote.state == MISMATCH)

    @property
    def quotes_lost(self) -> tuple[tuple[str, str, int], ...]:
        """``(source id, card:path, spans)`` of each fact a changed source's rewritten stored excerpt lost the quotes
        of (:attr:`passprice.sourcechange.SourceChange.quotes_lost`: NOT FOUND on HEAD, found on BASE) that
        :attr:`quotes_not_found` does not already name, with how many of its spans HEAD's excerpt lacks. Each fails
        the review and is counted in its ``N quotes NOT FOUND`` headline, as a changed fact's NOT FOUND is: the
        excerpt is the registry's record of the words read, and the change made it lack the fact's quote, so
        ``audit`` of HEAD says NOT FOUND of a price it rests on (it read "to verify", exit 0, and was not counted:
        tests/test_budget140.py)."""
        named = {f"{f.name}:{c.path}" for f, c in self.quotes_not_found}
        out: dict[str, tuple[str, str, int]] = {}
        for s in self.sources:
            for path, n in zip(s.quotes_lost, s.lost_spans, strict=False):
                if path not in named and path not in out:
                    out[path] = (s.id, path, n)
        return tuple(out.values())

    @property
    def quotes_unchecked(self) -> tuple[str, ...]:
        """The facts (``card:path``) whose quotes the review did not look up, its look-ups past their bound
        (:class:`passprice.sources.Lookups`, 2,236 spans and 128 MiB of stored text, one for the review: the changed
        facts' checks, then the rewritten excerpts' checks of their citing facts with what those left, each all or
        none, none of either when the first are past it; tests/test_bound147.py): each fails the review, which
        cannot say their quotes are found. Before (tests/test_budget140.py), 600 junk quotes on facts sorting first
        left a later fact's NOT FOUND "not checked … past the 512" and the review passed."""
        names = [f"{f.name}:{c.path}" for f, c in self.fact_changes if c.quote is not None and c.quote.past]
        names += [path for s in self.sources for path in s.quotes_unchecked]
        return tuple(dict.fromkeys(names))

    @property
    def quote_spans_unchecked(self) -> int:
        """How many quoted spans of :attr:`quotes_unchecked` the review did not look up: a changed fact's
        (:attr:`passprice.sources.QuoteCheck.past`, of all its sources), then those of a rewritten excerpt's citing
        fact of that source (:attr:`passprice.sourcechange.SourceChange.unchecked_spans`), each fact counted once,
        as :attr:`quotes_unchecked` names it. The two were counted unevenly: spans and facts of the changed facts,
        facts alone of the excerpts' (tests/test_odds165.py)."""
        spans = {f"{f.name}:{c.path}": c.quote.past for f, c in self.fact_changes
                 if c.quote is not None and c.quote.past}
        for s in self.sources:
            for path, n in zip(s.quotes_unchecked, s.unchecked_spans, strict=False):
                spans.setdefault(path, n)
        return sum(spans.values())

    @property
    def quote_spans_not_found(self) -> int:
        """How many quoted spans of :attr:`quotes_not_found` and :attr:`quotes_lost` the stored excerpts lack (the
        summary's ``N quotes NOT FOUND in their stored text``)."""
        return (sum(len(c.quote.missing) for _, c in self.quotes_not_found if c.quote is not None)
                + sum(n for _, _, n in self.quotes_lost))

    @property
    def refit_unmoved(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The facts a re-fit wrote again with the same value, provenance and citation (:attr:`FactChange.
        refit_unmoved`), with their file: each file's are named in one line of the review."""
        return tuple((f, c) for f in self.files for c in f.facts if _folded(f, c))

    @property
    def weakened(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The fact changes that step down the provenance ladder."""
        return tuple((f, c) for f, c in self.fact_changes if c.weakened)

    @property
    def to_verify(self) -> tuple[tuple[FileChange, FactChange], ...]:
        """The fact changes a reviewer must check in their source (:attr:`FactChange.to_verify`): they do not fail
        the review, they are listed for the person approving it."""
        return tuple((f, c) for f, c in self.fact_changes if c.to_verify is not None)

    @property
    def unreadable(self) -> tuple[FileChange, ...]:
        """The changed files that do not read on a side."""
        return tuple(f for f in self.files if not f.compared)

    @property
    def broken(self) -> tuple[LockImpact, ...]:
        """The locks the change leaves unheld."""
        return tuple(lock for lock in self.locks if lock.breaks)

    @property
    def stale(self) -> tuple[LockImpact, ...]:
        """The locks that do not record HEAD's price: moved by the change without being re-locked, or out of date
        already on BASE (either fails the review, as ``cargo --locked`` would)."""
        return tuple(lock for lock in self.locks if lock.stale)

    @property
    def unsound(self) -> tuple[tuple[FileChange, Finding], ...]:
        """HEAD's derived facts, in the changed files, that do not follow from their inputs (stale, mismatch or
        broken), with their file."""
        return tuple((f, x) for f in self.files for x in f.findings)

    @property
    def check_beyond(self) -> tuple[str, ...]:
        """The lines of :attr:`head_check` that :attr:`unsound` does not already list (its findings are check's
        lines ``FILE: PATH …``, a copied card's with :func:`passprice.lineage.copied_inputs`' words after them,
        walkthrough 42): what else ``check`` fails on HEAD."""
        from passprice.lineage import COPIED_INPUTS

        listed = {f"{f.path}: {x.message}" for f, x in self.unsound}
        copied = f"; it {COPIED_INPUTS} "
        return tuple(p for p in self.head_check if p not in listed and p.split(copied)[0] not in listed)

    @property
    def check_counted(self) -> tuple[str, ...]:
        """What ``passprice check`` on HEAD counts as its problems and :attr:`check_beyond` leaves out: those lines,
        then the error lines of each lock file HEAD changes that does not read there (:func:`passprice.check.
        review_files` reads no lock, and ``check`` counts each such file's errors as problems). One count for one
        tree: a hand-edited lock beside an invalid card read "HEAD fails passprice check (1 problem)" where ``check``
        said "2 problems" (tests/test_walk138.py)."""
        locks = tuple(e for f in self.files if f.kind == "lock" and f.head_errors for e in f.head_errors)
        return self.check_beyond + tuple(e for e in locks if e not in self.check_beyond)

    @property
    def check_problems(self) -> tuple[str, ...]:
        """``--format json``'s ``head_check``: every line of :attr:`head_check` (derived facts that do not follow
        included), then the error lines of each lock file HEAD changes that does not read there, as
        :attr:`check_counted` adds them to the text's count: ``--json`` listed check's file-review lines alone where
        the text and markdown counted the lock too (tests/test_budget140.py)."""
        locks = tuple(e for f in self.files if f.kind == "lock" and f.head_errors for e in f.head_errors)
        return self.head_check + tuple(dict.fromkeys(e for e in locks if e not in self.head_check))

    @property
    def check_shown(self) -> tuple[tuple[str, ...], int, tuple[str, ...]]:
        """The lines of :attr:`check_counted` a review lists under what HEAD fails ``check`` on (the first
        :data:`MAX_HEAD_PROBLEMS`), how many more it counts without listing (``passprice check`` on HEAD lists each):
        3,000 invalid source records made a 2.4 MB pull-request comment of 15,000 problem lines (issue 13); and the
        lock files whose lines it lists under the file instead (:meth:`errors_shown`), each line listed once: a lock
        file that does not read on HEAD was listed under its file and again under HEAD's check
        (tests/test_bound147.py)."""
        shown = self.errors_shown()
        above: dict[str, str] = {}  # a line listed under its lock file: the file
        for f in self.files:
            if f.kind == "lock" and f.path in shown:
                for e in shown[f.path][1]:
                    above.setdefault(e, f.path)
        rest = tuple(p for p in self.check_counted if p not in above)
        files = tuple(dict.fromkeys(above[p] for p in self.check_counted if p in above))
        return rest[:MAX_HEAD_PROBLEMS], max(0, len(rest) - MAX_HEAD_PROBLEMS), files

    def check_elsewhere_line(self, where: str = "above, under") -> str:
        """``1 problem listed above, under the lock file that does not read (locks/u1.lock.toml)``: the lines
        :attr:`check_counted` counts under HEAD's check that :attr:`check_shown` lists under their lock file instead
        (the first 3 files named; ``where`` says where that list is: the markdown's ``below (Files that do not read),
        under``), ``""`` when none. Raises nothing."""
        listed, more, files = self.check_shown
        if not files:
            return ""
        counted = len(self.check_counted) - len(listed) - more
        names = ", ".join(files[:3]) + (f" and {len(files) - 3:,} more" if len(files) > 3 else "")
        return (f"{'and ' if listed else ''}{_n(counted, 'problem')} listed {where} the lock "
                f"file{'s' if len(files) != 1 else ''} that do{'' if len(files) != 1 else 'es'} not read ({names})")

    def errors_shown(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...], int]]:
        """The errors of the changed files that do not read that a review lists: for each such file's path, its
        BASE and HEAD errors shown and how many more it has that are counted, not listed. The first
        :data:`MAX_HEAD_PROBLEMS` error lines, in the order of :attr:`files` (BASE's before HEAD's), are shown;
        the rest are counted (``passprice check`` on each side lists every one)."""
        budget = MAX_HEAD_PROBLEMS
        out = {}
        for f in self.files:
            if f.compared:
                continue
            base = f.base_errors[:budget]
            head = f.head_errors[:budget - len(base)]
            budget -= len(base) + len(head)
            out[f.path] = (base, head, len(f.base_errors) + len(f.head_errors) - len(base) - len(head))
        return out

    def errors_left_out(self) -> tuple[int, int]:
        """How many error lines of changed files that do not read a review counts without listing
        (:meth:`errors_shown`), and in how many files none is listed: ``(errors, files)``."""
        shown = self.errors_shown().values()
        return sum(n for _, _, n in shown), sum(1 for b, h, _ in shown if not b and not h)

    def head_warnings_count(self) -> str:
        """The summary's count of ``check``'s warnings on HEAD, as ``check`` counts them: those listed
        (:attr:`head_warnings`, with :attr:`head_warnings_left_out`) and the duplicate locks of a pair the change
        touches (:attr:`duplicates`), which ``check`` warns of among them and the review lists under their own
        heading, said so (:func:`duplicates_elsewhere` is the lists' line of them). It said "2 warnings of check on
        HEAD" where ``check`` printed 3, the third under "locks duplicating another" (tests/test_odds172.py). Raises
        nothing."""
        total = len(self.head_warnings) + self.head_warnings_left_out + len(self.duplicates)
        under = f" ({len(self.duplicates):,} under {DUPLICATES_HEADING})" if self.duplicates else ""
        return f"{_n(total, 'warning')} of check on HEAD{under}"

    def check_line(self) -> str:
        """``HEAD fails passprice check (2 problems)`` (``2 more problems`` beside derived facts listed already);
        ``HEAD fails the review's rules (1 problem)`` when each is a rule of the review's own (:attr:`review_rules`),
        not of ``check``, and ``HEAD fails passprice check and the review's rules (3 problems: 1 of the review's
        rules)`` for both."""
        word = "more problem" if self.unsound else "problem"
        beyond = self.check_counted
        rules = sum(line in self.review_rules for line in beyond)
        if rules and rules == len(beyond):
            return f"HEAD fails the review's rules ({_n(len(beyond), word)}; passprice check does not check them)"
        if rules:
            return (f"HEAD fails passprice check and the review's rules ({_n(len(beyond), word)}: {rules:,} of the "
                    "review's rules, which passprice check does not check)")
        return f"HEAD fails passprice check ({_n(len(beyond), word)})"

    def unsound_names(self) -> list[str]:
        """``--json``'s ``unsound``: each derived fact of a changed file that does not follow from its inputs
        (:attr:`unsound`, ``CARD:PATH``), then each serving stack's fitted fact a lock of :attr:`resting_on_unsound`
        rests on that no longer follows from the stack's runs (``STACK:PATH``, the path in the stack's file, as
        ``check`` names it), each once. Before (walkthrough 82): a stack's ``overhead.layer`` edited by hand to
        80 µs, its re-fit 96.63 µs, left ``unsound`` ``[]`` while ``resting_on_unsound`` named the lock made under
        the stack, and the summary counted it as resting on derived facts that do not follow."""
        names = [f"{f.name}:{x.path}" for f, x in self.unsound]
        for lock in self.resting_on_unsound:
            stack = (lock.after.price or {}).get("stack")
            if isinstance(stack, str):
                names += [f"{stack}:{x.path.removeprefix('stack.')}" for x in lock.unsound
                          if x.path.startswith("stack.")]
        return list(dict.fromkeys(names))

    @property
    def resting_on_unsound(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD price rests on one of :attr:`unsound`."""
        return tuple(lock for lock in self.locks if lock.unsound and not lock.removed)

    @property
    def relocked(self) -> tuple[LockImpact, ...]:
        """The locks whose file the change rewrote (re-locked), that record HEAD's price, answer the question they
        answered on BASE and read on both sides (a file that does not read was edited, not re-locked)."""
        return tuple(
            lock for lock in self.locks
            if lock.status == "changed" and not lock.stale and not lock.question and lock.note is None
            and lock not in self.unreproducing and lock not in self.forging and lock not in self.unrecorded
        )

    @property
    def forging(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file pins what no side of the change holds and BASE's copy did not pin, or drops a
        label BASE's copy pinned (:func:`passprice.pinforgery.forged_pins`' lines of :attr:`head_check`: edited by
        hand, its digest recomputed), and which reproduce from their own pinned inputs (those are
        :attr:`unreproducing`). Counted as such in the summary, never as "re-locked" (slip round 51: a lock whose
        pinned ``fitted_vendors`` was forged to ``AMD, NVIDIA`` read "1 re-locked" there and on its row, beside "HEAD
        fails passprice check")."""
        return tuple(lock for lock in self.locks if not lock.removed and _forging(self, lock)
                     and not _unreproducing(self, lock))

    @property
    def unrecorded(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file's ``[lock] digest`` is in no record of HEAD's list of pricing models
        (:func:`passprice.modellist.unrecorded_locks`' lines of :attr:`head_check`: not written by ``passprice
        lock``, edited by hand and its digest recomputed), and which reproduce and pin nothing forged (those are
        :attr:`unreproducing` and :attr:`forging`). Counted as such, never as "re-locked" (slip 58: a lock whose
        floors were loosened by hand read "re-locked, floors loosened", exit 0)."""
        return tuple(lock for lock in self.locks if not lock.removed and _unrecorded(self, lock)
                     and not _unreproducing(self, lock) and not _forging(self, lock))

    @property
    def unreproducing(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD file does not reproduce from its own pinned inputs (:func:`unreproduced`'s lines of
        :attr:`head_check`: edited by hand, its digest recomputed), whatever HEAD's price of them says. Counted as
        such in the summary, never as "re-locked" or "out of date already on BASE" (slip round 50: a lock of the
        stack ``llamacpp-cuda-2405`` whose pinned ``stack.overhead.layer`` was forged 96.63 → 115.96 µs read "1
        re-locked", one whose expected price was forged 237.4 → 250 tokens/s "1 out of date already on BASE", the
        row alone saying "does NOT reproduce")."""
        return tuple(lock for lock in self.locks if not lock.removed and _unreproducing(self, lock))

    @property
    def drifting(self) -> tuple[LockImpact, ...]:
        """The locks whose HEAD price is the one they record but which pin a changed fact as it was on BASE
        (:attr:`LockImpact.drifted`): the review passes them, ``check --frozen`` does not until they are re-pinned
        (``lock --update``)."""
        return tuple(lock for lock in self.locks if lock.drifted and not lock.breaks and not lock.stale)

    @property
    def requestioned(self) -> tuple[LockImpact, ...]:
        """The lock files HEAD rewrote to answer another question (:attr:`LockImpact.question`): a kind, serving,
        stack or name changed under the same file. Each fails the review."""
        return tuple(lock for lock in self.locks if lock.question)

    @property
    def loosened(self) -> tuple[LockImpact, ...]:
        """The locks whose floors HEAD loosens or removes."""
        return tuple(lock for lock in self.locks if lock.loosened)

    @property
    def removed(self) -> tuple[LockImpact, ...]:
        """The locks HEAD removes."""
        return tuple(lock for lock in self.reviews if lock.removed)

    @property
    def dropping(self) -> tuple[LockImpact, ...]:
        """The removed locks whose removal drops floors their serving (still registered) was priced under."""
        return tuple(lock for lock in self.reviews if lock.drops_floors)

    @property
    def model_changed(self) -> bool:
        """True when the sides' pricing models (code digests) differ."""
        return self.base_code is not None and self.head_code is not None and (
            self.base_code.model != self.head_code.model
        )

    @property
    def exit_status(self) -> int:
        """2 when a file does not read on HEAD, else 1 when a lock breaks (its serving deleted too), a locked price
        moves unreviewed, a removed lock drops floors its still-registered serving was priced under, or a changed
        fact's quote is NOT FOUND in its stored excerpt (:attr:`quotes_not_found`, :attr:`quotes_lost`) or was not
        looked up, past the review's bound (:attr:`quotes_unchecked`), else 0."""
        if any(f.head_errors for f in self.files) or self.head_unreadable:
            return 2
        if (self.broken or self.stale or self.unsound or self.dropping or self.head_check or self.requestioned
                or self.quotes_not_found or self.quotes_lost or self.quotes_unchecked or self.quotes_mismatched):
            return 1
        return 0

    def head_error_lines(self) -> list[str]:
        """The error lines of a review that cannot be made (exit 2): each changed file that does not read on HEAD
        (its first problem, the file named once: a problem its reader words from the file's path on,
        ``locks/x.lock.toml: larger than 256 KiB …``, is given from what follows the path), else each of HEAD's files
        that does not read. A lock past its size cap was ``locks/x.lock.toml does not read on HEAD: locks/x.lock.toml:
        larger than …``, its path twice (every file alike)."""
        lines = [f"{f.path} does not read on HEAD: {f.head_errors[0].removeprefix(f'{f.path}: ')}"
                 for f in self.files if f.head_errors]
        return lines or [f"on HEAD: {line}" for line in self.head_unreadable]

    def refusal_reasons(self) -> list[str]:
        """Why the review fails (exit 1), each with what to do: derived facts that no longer follow from their inputs
        (and the locks resting on them), locks the change breaks (a floor breached: restore the fact, or re-lock
        with the floor loosened, which the review then shows; or what a lock locks changed or is deleted), locked
        prices moved without re-locking, locks already out of date on BASE, removed locks that drop floors, and what
        else HEAD fails ``check`` on. Empty when the review passes."""
        reasons = []
        if self.unsound:
            facts = ", ".join(f"{f.name}:{x.path} ({x.kind})" for f, x in self.unsound)
            resting = [lock.name for lock in self.resting_on_unsound]
            on = f"; the prices of {', '.join(resting)} rest on them" if resting else ""
            from passprice.enforce import command_span

            commands = ", ".join(command_span(["passprice", "fact", "recompute", name])
                                 for name in dict.fromkeys(f.name for f, _ in self.unsound if f.kind != "routing"))
            # A routing record is edited by hand (`fact recompute` refuses it: walkthrough 40 was sent there): each
            # fact named with the value its derivation gives.
            by_hand = "; ".join(
                f"{x.path} = {x.expected} in {f.path}" if x.expected is not None else f"{x.path} in {f.path}"
                for f, x in self.unsound if f.kind == "routing")
            todo = "; ".join(part for part in (
                f"recompute them: {commands}" if commands else "",
                f"write by hand what the derivation gives: {by_hand}" if by_hand else "") if part)
            reasons.append(f"derived facts do not follow from their inputs: {facts}{on} ({todo}; "
                           "passprice check names each input that moved)")
        broken = [lock for lock in self.broken if not lock.after.gone]
        # A lock whose floors hold but whose price HEAD refuses is "refused", as its row and the summary say it (a
        # new user read "the change breaks lock r1-qwen7b-h200-llamacpp" beside "1 refused on HEAD":
        # tests/test_walk128.py).
        refused = [lock for lock in broken if lock.why_broken == "refused"]
        broken = [lock for lock in broken if lock.why_broken != "refused"]
        floors = [lock for lock in broken if lock.verdict is not None and not lock.verdict.holds]
        if refused:
            names = ", ".join(
                f"{lock.name} ({lock.after.refusal.get('refusal')})" if lock.after.refusal is not None else lock.name
                for lock in refused)
            reasons.append(f"HEAD refuses the price of lock{'s' if len(refused) > 1 else ''} {names}, its floors "
                           "holding (the row under locks affected says why and what to fix)")
        if broken:
            names = ", ".join(lock.name for lock in broken)
            advice = ""
            if floors:
                from passprice.enforce import relock_command

                commands = "; ".join(
                    relock_command(lock.verdict, lock.serving_name, lock.path) for lock in floors if lock.verdict
                )
                advice = (
                    f" (a fact below a floor: restore it, or re-lock with the floor loosened, {commands}, which the "
                    "review shows as a loosened floor; `--update` alone keeps the floors and refuses)"
                )
            reasons.append(f"the change breaks lock{'s' if len(broken) > 1 else ''} {names}{advice}")
        gone: dict[str, list[str]] = {}
        for lock in self.broken:
            if lock.after.gone:
                gone.setdefault(str(lock.serving_name), []).append(lock.name)
        for name, locking in gone.items():
            many = len(locking) > 1
            reasons.append(f"it deletes serving {name}, which lock{'s' if many else ''} {', '.join(sorted(locking))} "
                           f"lock{'' if many else 's'}")
        below = {lock.name for lock in floors}  # re-locked with a loosened floor, as said above, not --update
        unlocked = [lock for lock in self.stale if lock.unreviewed and lock.name not in below]
        moved = [lock.name for lock in unlocked]
        if moved:
            from passprice.enforce import command_span

            commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", lock.path]) for lock in unlocked)
            reasons.append(
                f"it moves the locked price{'s' if len(moved) > 1 else ''} of {', '.join(moved)} without re-locking "
                f"(review the move, then {commands})"
            )
        # A lock file HEAD edited by hand (its digest recomputed) is not out of date on BASE, whose copy records
        # BASE's price: the summary counts it as not reproducing or pinning what no side holds, and the HEAD check
        # reason below says why (use45: a lock's recorded tokens/s forged 996.1 -> 1,095.7 was refused as "lock
        # r1-qwen7b-h200 already out of date on BASE" on stderr, where BASE's lock reproduced).
        hand = {lock.name for lock in (*self.unreproducing, *self.forging, *self.unrecorded)}
        late = [lock for lock in self.stale if not lock.unreviewed and lock.name not in hand]
        behind = [lock.name for lock in late]
        if behind:
            from passprice.enforce import command_span

            # walkthrough 57: the line named the locks and no way out, where each row said "re-lock it"
            many = len(behind) > 1
            commands = ", ".join(command_span(["passprice", "lock", "--update", "-o", lock.path]) for lock in late)
            reasons.append(f"lock{'s' if many else ''} {', '.join(behind)} already out of date on BASE (BASE's inputs "
                           f"no longer give the price {'their files record' if many else 'its file records'}: "
                           f"re-lock {'each' if many else 'it'}, {commands})")
        for lock in self.dropping:
            reasons.append(f"it removes lock {lock.name}, dropping floors serving {lock.serving_name} is priced under")
        for lock in self.requestioned:
            reasons.append(
                f"it rewrites {lock.path} to answer another question ({'; '.join(lock.question)}): a lock answers "
                "one; restore BASE's file and re-lock it with `passprice lock --update -o LOCK` (which keeps its kind, "
                "serving and stack), or keep it and add the new lock under another name"
            )
        if self.quotes_not_found:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.quotes_not_found)
            cited = ", ".join(dict.fromkeys(c.new.source for _, c in self.quotes_not_found
                                            if c.new is not None and c.new.source))
            audits = ", ".join(f"`passprice audit --source {sid}`" for sid in cited.split(", ") if sid)
            reasons.append(
                f"{self.quotes_line()} ({facts}): the stored excerpt is the registry's record of the words read; "
                "correct the quote to the document's words, or add the lines it was read from to the source's "
                f"stored excerpt and re-pin it{f' ({audits} checks each)' if audits else ''}")
        if self.quotes_mismatched:
            facts = ", ".join(f"{f.name}:{c.path}" for f, c in self.quotes_mismatched)
            reasons.append(f"{self.mismatched_line()} ({facts}): the value and the words it cites disagree; quote the "
                           "words of the document stating the value, or set the value they state")
        if self.quotes_lost:
            lost = self.quotes_lost
            shown = ", ".join(f"{path} (source {sid})" for sid, path, _ in lost[:MAX_SHOWN_QUOTES])
            more = f" and {len(lost) - MAX_SHOWN_QUOTES:,} more" if len(lost) > MAX_SHOWN_QUOTES else ""
            reasons.append(
                f"{_facts_quotes(len(lost))} NOT FOUND in a stored excerpt the change rewrote, found in BASE's "
                f"({shown}{more}): restore the lines they were read from to the excerpt and re-pin it, or correct "
                "the quotes (`passprice audit --source ID` checks each)")
        if self.quotes_unchecked:
            reasons.append(self.unchecked_line())
        beyond = self.check_beyond
        if beyond:
            reasons.append(f"{self.check_line()}; first: {beyond[0]}")
        return reasons

    def unchecked_line(self) -> str:
        """Why the review fails when its quote look-ups ran past their bound: how many quoted spans of how many facts
        were not looked up (:attr:`quote_spans_unchecked`, :attr:`quotes_unchecked`: a changed fact's and a rewritten
        excerpt's citing fact's counted alike), which, and what to do. Raises nothing."""
        from passprice.sources import QUOTES_MOST, SEARCHED_MOST

        facts = self.quotes_unchecked
        spans = self.quote_spans_unchecked
        shown = ", ".join(facts[:MAX_SHOWN_QUOTES]) + (
            f" and {len(facts) - MAX_SHOWN_QUOTES:,} more" if len(facts) > MAX_SHOWN_QUOTES else "")
        counted = f"{_n(spans, 'quoted span')} of {_n(len(facts), 'fact')}"  # a changed fact's, an excerpt's alike
        return (f"quotes not checked: {counted} ({shown}) not looked up in their stored excerpts, the review's "
                f"look-ups past their bound ({QUOTES_MOST:,} spans, {SEARCHED_MOST // 2**20:,} MiB of stored text; "
                "none is looked up then, whichever file sorts first): a quote not checked may be NOT FOUND; split "
                "the change, or run `passprice audit --source ID` on each source they cite")

    def quotes_line(self) -> str:
        """``1 quote NOT FOUND in its stored text`` (``N quotes NOT FOUND in their stored text``): the summary's
        count of :attr:`quote_spans_not_found`. Raises nothing."""
        n = self.quote_spans_not_found
        return f"{_n(n, 'quote')} NOT FOUND in {'its' if n == 1 else 'their'} stored text"

    def mismatched_line(self) -> str:
        """``1 fact's quotes state another figure than its own`` (``N facts' quotes …``): the summary's count of
        :attr:`quotes_mismatched`. Raises nothing."""
        n = len(self.quotes_mismatched)
        return (f"{n:,} fact's quotes state another figure than its own" if n == 1
                else f"{n:,} facts' quotes state another figure than their own")

    def summary(self) -> str:
        """One line: facts changed (and weakened), locks affected (broken, moved unreviewed, floors loosened),
        locks unaffected, the pricing model, files that do not read."""
        facts = self.fact_changes
        if not (self.files or self.model_changed or self.locks or self.head_check or self.sources or self.unlocked
                or self.code_files or self.duplicates or self.head_warnings or self.install_files or self.spans
                or self.export_rules):
            quiet = "no changes to facts, registry, locks or the pricing model"
            return quiet + (f"; {_n(len(self.unaffected), 'lock')} unaffected" if self.unaffected else "")
        # The facts of a file the change adds (not a rename: that is compared with BASE's file) are counted as added,
        # not as changed (walkthrough 21: an added routing record read "2 facts changed in 1 file").
        new_files = {f.path for f in self.files if f.status == "added" and f.renamed is None}
        parts = []
        # Each kind of record in its own clause (a card's facts are "facts"; session 25: a routing record's changed
        # hot set was counted, with its question, in the card's "2 facts changed in 2 files, 2 to verify").
        for kind, noun in _FACT_KINDS:
            mine = [(f, c) for f, c in facts if (_FACT_KIND_OF.get(f.kind, "card")) == kind]
            if not mine:
                continue
            files = {f.path for f, _ in mine}
            changed_files, added_files = files - new_files, files & new_files
            n_changed = sum(1 for f, _ in mine if f.path in changed_files)
            counts = [f"{_n(n_changed, noun)} changed in {_n(len(changed_files), 'file')}"] if changed_files else []
            if added_files:
                counts.append(f"{_n(len(mine) - n_changed, noun)} added in {_n(len(added_files), 'new file')}")
            weakened = sum(1 for _, c in mine if c.weakened)
            asked = sum(1 for _, c in mine if c.to_verify is not None)
            # one count of the copied citations among them (tests/test_fix166.py)
            copies = sum(1 for _, c in mine if c.copied_from is not None and c.to_verify is not None)
            copied = (f" ({_n(copies, 'copied citation')}: {'it cites' if copies == 1 else 'each cites'} what "
                      "another card's fact cites)") if copies else ""
            # what the facts weaken or ask to verify follows the kind's first count
            # grouped as every count beside them is (999 copies of a card: "16,983 facts added …, 15984 to verify")
            counts[0] += ((f", {weakened:,} weakened" if weakened else "")
                          + (f", {asked:,} to verify {in_source(asked)}{copied}" if asked else ""))
            unmoved = sum(1 for f, _ in self.refit_unmoved if _FACT_KIND_OF.get(f.kind, "card") == kind)
            if unmoved:  # a re-fit's facts written again unmoved: named in their file's line, not counted changed
                counts[0] += f" ({unmoved:,} more re-derived to the same value)"
            parts += counts
        # a file of facts that does not read on a side: its facts were not compared, so "no fact changed" is not
        # known (a stack whose memory.reserved went 512 -> 256 MiB beside a bad route read "no fact changed")
        uncompared = sum(1 for f in self.files if f.holds_facts and not f.compared)
        if uncompared:
            parts.append(f"facts not compared in {_n(uncompared, 'file')} (not reading on a side)")
        parts = parts or ["no fact changed"]
        if self.quote_spans_not_found:  # counted apart from "to verify": it fails the review (exit_status)
            parts.append(self.quotes_line())
        if self.quotes_mismatched:
            parts.append(self.mismatched_line())
        if self.quotes_unchecked:  # past the review's bound: it fails the review too
            parts.append(f"{_facts_quotes(len(self.quotes_unchecked))} not checked (past the review's bound)")
        if self.unsound:
            kinds = sorted({x.kind for _, x in self.unsound}, key=["stale", "mismatch", "broken"].index)
            what = {"stale": "stale", "mismatch": "not following", "broken": "broken"}
            parts.append(f"{_n(len(self.unsound), 'derived fact')} {' or '.join(what[k] for k in kinds)}")
        renamed = [f for f in self.files if f.renamed is not None and f.status == "added"]
        for kind, one, many in (("card", "card", "cards"), ("draft", "drafting method", "drafting methods"),
                                ("routing", "routing record", "routing records"),
                                ("stack", "serving stack", "serving stacks"),
                                ("checkpoint", "checkpoint entry", "checkpoint entries")):
            n = sum(1 for f in renamed if f.kind == kind)
            if n:
                parts.append(f"{n} {one if n == 1 else many} renamed")
        parts += _file_counts([f for f in self.files if not f.holds_facts and f.kind != "lock"
                               and not (f.kind == "checkpoint" and f.renamed is not None)])
        if self.sources:
            under = {lock for s in self.sources for lock in s.locks}
            rest = f" (under {_n(len(under), 'locked price')})" if under else ""
            fresh = sum(s.added for s in self.sources)
            if len(self.sources) > fresh:
                parts.append(f"{_n(len(self.sources) - fresh, 'source')} whose document changed, to verify{rest}")
            if fresh:
                # left48: "1 added source re-cited to, to verify" said of a source what was said of its facts
                parts.append(f"{_n(fresh, 'added source')} that facts now cite, to verify"
                             + (rest if len(self.sources) == fresh else ""))
        if self.runs_recited:
            parts.append(f"{_n(self.runs_recited, 'measured run')} to verify {in_source(self.runs_recited)}")
        if self.entries_edited:
            n = len(self.entries_edited)
            parts.append(f"{n:,} checkpoint {'entry' if n == 1 else 'entries'} edited under the same header sha256, "
                         "to verify")
        if self.widened:
            parts.append(f"{_n(len(self.widened), 'record')} applied to more checkpoints, to verify")
        if self.lookalikes:
            parts.append(f"{_n(len(self.lookalikes), 'new record')} named like another, to verify")
        if self.made_real:
            parts.append(f"{_n(len(self.made_real), 'card')} no longer hypothetical, to verify")
        if self.relabelled:
            parts.append(f"{_n(len(self.relabelled), 'card')} retitled or made hypothetical, to verify")
        if self.title_contradicts:
            parts.append(f"{_n(len(self.title_contradicts), 'card')} titled hypothetical and not marked so, to verify")
        if self.hypothetical:
            parts.append(f"{_n(len(self.hypothetical), 'hypothetical card')} added with published or measured facts, "
                         "to verify")
        if self.relabelled_records:
            parts.append(f"{_n(len(self.relabelled_records), 'record')} retitled or re-noted under a locked price, "
                         "to verify")
        if self.stale_descriptions:
            parts.append(f"{_n(len(self.stale_descriptions), 'record')} re-cited to another row under the old "
                         "description, to verify")
        if self.rerouted:
            parts.append(f"{_n(len(self.rerouted), 'serving stack')} rerouted under a locked price, to verify")
        if self.by_header:
            parts.append(f"{_n(len(self.by_header), 'lock')} held by a look-alike header alone, to verify")
        if self.digests_dropped:
            n = len(self.digests_dropped)
            parts.append(f"{n:,} checkpoint {'entry' if n == 1 else 'entries'} with a header digest dropped or "
                         "rewritten, to verify")
        if self.runs_outside:  # walkthrough 21: a re-fit on a run far from the others read ✅ and nothing else
            parts.append(f"{_n(len(self.runs_outside), 'stack fit')} on a run outside its span, to verify")
        touched = [lock for lock in self.locks if not lock.behind]
        locks = f"{_n(len(touched), 'lock')} affected" if touched else "no lock affected"
        flags = []
        # each lock counted as its row shows it (a lock not judged is not counted as breaking its floors)
        why = [lock.why_broken for lock in self.broken]
        for kind, one, many in (
            ("floors", "breaks its floors", "break their floors"),
            ("not judged", "not judged", "not judged"),
            ("refused", "refused on HEAD", "refused on HEAD"),
            ("checkpoint", "with its checkpoint's content changed", "with their checkpoint's content changed"),
            ("gone", "with its serving deleted", "with their serving deleted"),
        ):
            n = why.count(kind)
            if n:
                flags.append(f"{n} {one if n == 1 else many}")
        unread = [lock for lock in self.locks if lock.head_unread]
        if unread:
            flags.append(f"{len(unread)} {'does' if len(unread) == 1 else 'do'} not read on HEAD")
        forged = self.unreproducing
        if forged:
            flags.append(f"{len(forged)} not reproducing from {'its' if len(forged) == 1 else 'their'} own pinned "
                         "inputs (edited by hand?)")
        by_hand = [lock for lock in self.forging if not lock.added]
        if by_hand:
            flags.append(f"{len(by_hand)} with pins edited by hand")
        # added locks pinning what no side holds (PINS_OF_AN_ADDED_LOCK) are counted within "N added" below: "1 lock
        # affected, 1 added pinning what no side holds, 1 added" read as two locks added where one was
        # (tests/test_fix53w.py)
        added_forging = len(self.forging) - len(by_hand)
        if self.unrecorded:
            flags.append(f"{len(self.unrecorded)} not written by passprice lock")
        # a lock counted above as pinning what no side holds is not counted again as a moved price (slip 55: a lock
        # the change added, then a fact it pins edited, read "1 lock affected, 1 added pinning what no side holds,
        # 1 price moved unreviewed"): its row's review is the pins' (re-lock it)
        stale = [lock for lock in self.stale if lock not in forged and lock not in self.forging]
        moved = [lock for lock in stale if lock.unreviewed]
        if moved:
            flags.append(f"{len(moved)} price{'s' if len(moved) > 1 else ''} moved unreviewed")
        if len(moved) < len(stale) - sum(lock.behind for lock in stale):  # touched by the change, and behind on BASE
            flags.append(f"{len(stale) - len(moved) - sum(lock.behind for lock in stale)} of them out of date "
                         "already on BASE")
        if self.resting_on_unsound:
            n = len(self.resting_on_unsound)
            flags.append(f"{n} rest{'s' if n == 1 else ''} on derived facts that do not follow")
        if self.requestioned:
            flags.append(f"{len(self.requestioned)} asking another question")
        if self.drifting:
            flags.append(f"{len(self.drifting)} to re-pin (lock --update) for check --frozen")
        rewritten = [lock for lock in self.locks if lock.rewritten]
        if rewritten:
            flags.append(f"{len(rewritten)} pinning a fact rewritten to the same quantity (no drift)")
        if self.relocked:
            flags.append(f"{len(self.relocked)} re-locked")
        if self.loosened:
            flags.append(f"{len(self.loosened)} with floors loosened")
        added = [lock for lock in self.locks if lock.added]
        if added:
            of_them = ("" if not added_forging else " (pinning what no side holds)" if len(added) == 1
                       else f" ({added_forging} of them pinning what no side holds)")
            flags.append(f"{len(added)} added{of_them}")
        elif added_forging:  # (a lock added and pinning what no side holds is among those added)
            flags.append(f"{added_forging} added pinning what no side holds")
        if self.removed:
            dropping = f", {len(self.dropping)} dropping floors" if self.dropping else ""
            flags.append(f"{len(self.removed)} removed{dropping}")
        if self.duplicates:
            flags.append(f"{len(self.duplicates)} duplicating another")
        if flags:
            locks += ", " + ", ".join(flags)
        parts.append(locks)
        if self.behind:
            # left51: one count for every lock out of date before this change that it leaves as it was: a price BASE's
            # inputs no longer give (re-lock) or pins BASE's registry no longer holds (re-pin), never "affected"
            late = [lock for lock in self.behind if lock.stale]
            kinds = [f"{len(late)} recording a price BASE's inputs no longer give (re-lock)" if late else "",
                     f"{len(self.behind) - len(late)} pinning facts as BASE no longer holds them (re-pin)"
                     if len(late) < len(self.behind) else ""]
            parts.append(f"{_n(len(self.behind), 'lock')} out of date already on BASE, which this change does not "
                         f"touch: {', '.join(k for k in kinds if k)}")
        if self.check_counted:
            parts.append(self.check_line())
        if self.head_warnings or self.duplicates:
            parts.append(self.head_warnings_count())
        if self.on_changed_sources:
            n = len(self.on_changed_sources)
            parts.append(f"{_n(n, 'lock')} resting on a source whose document changed, to verify")
        if self.on_changed_claims:
            n = len(self.on_changed_claims)
            parts.append(f"{_n(n, 'lock')} priced from a checkpoint entry whose claims changed, to verify")
        if self.on_recited_runs:
            n = len(self.on_recited_runs)
            parts.append(f"{_n(n, 'lock')} priced under a stack fitted from measured runs to verify")
        if self.unaffected:
            parts.append(f"{_n(len(self.unaffected), 'lock')} unaffected")
        if self.unlocked or self.unlocked_left_out:
            from passprice.unlocked import moves_summary

            parts.append(moves_summary(self.unlocked, self.unlocked_left_out))
        if self.model_changed:
            moved = [lock for lock in self.reviews if lock.moved and "pricing model" in lock.inputs]
            parts.append("pricing model changed" + (f", moving {_n(len(moved), 'locked price')}" if moved else ""))
        if self.code_files:
            parts.append(f"passprice's own code changed ({_n(len(self.code_files), 'file')})")
        if self.install_files:
            parts.append(f"how passprice is installed changed ({', '.join(self.install_files)})")
        if self.export_rules:
            parts.append(f"{_n(len(self.export_rules), 'export rule')} of .gitattributes on registry files changed")
        # a lock file said above ("1 does not read on HEAD", among the locks) is not counted again here (a lock past
        # the size cap was named twice: as a lock and as a file)
        said = {lock.path for lock in self.locks if lock.head_unread}
        unread_files = [f for f in self.unreadable if f.path not in said]
        if unread_files:
            parts.append(f"{_n(len(unread_files), 'other file' if said else 'file')} "
                         f"{'does' if len(unread_files) == 1 else 'do'} not read")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The diff for ``--format json``: base, head, summary, exit status, files, locks (affected), unaffected
        lock names, the code each side was priced with. Problem lists are bounded as a review's are: the first
        :data:`MAX_HEAD_PROBLEMS` lines of ``head_check`` and ``head_unreadable``, and of the changed files' errors
        taken together, each with how many more were left out (``head_check_left_out``, ``head_unreadable_left_out``,
        a file's ``errors_left_out``)."""
        errors = self.errors_shown()
        return {
            "base": self.base.to_json(),
            "head": self.head.to_json(),
            "summary": self.summary(),
            "exit_status": self.exit_status,
            "weakened": [f"{f.name}:{c.path}" for f, c in self.weakened],
            "to_verify": [f"{f.name}:{c.path}" for f, c in self.to_verify],
            "sources_changed": [s.to_json() for s in self.sources],
            "broken": [lock.name for lock in self.broken],
            "stale": [lock.name for lock in self.stale],
            "unreproduced": [lock.name for lock in self.unreproducing],
            "forged_pins": [lock.name for lock in self.forging],
            "unrecorded": [lock.name for lock in self.unrecorded],
            "unsound": self.unsound_names(),
            "resting_on_unsound": [lock.name for lock in self.resting_on_unsound],
            "loosened": [lock.name for lock in self.loosened],
            "removed": [lock.name for lock in self.removed],
            "dropping": [lock.name for lock in self.dropping],
            "requestioned": [lock.name for lock in self.requestioned],
            "drifted": [lock.name for lock in self.drifting],
            "head_check": list(self.check_problems[:MAX_HEAD_PROBLEMS]),
            "head_check_left_out": max(0, len(self.check_problems) - MAX_HEAD_PROBLEMS),
            # which of them are the review's own rules, not check's (check_line says so)
            "head_check_review_rules": [p for p in self.check_problems[:MAX_HEAD_PROBLEMS] if p in self.review_rules],
            "quotes_unchecked": list(self.quotes_unchecked),
            "head_unreadable": list(self.head_unreadable[:MAX_HEAD_PROBLEMS]),
            "head_unreadable_left_out": max(0, len(self.head_unreadable) - MAX_HEAD_PROBLEMS),
            "files": [f.to_json(errors.get(f.path)) for f in self.files],
            "locks": [lock.to_json() for lock in self.locks],
            "unaffected": [lock.name for lock in self.unaffected],
            "behind": [lock.name for lock in self.behind],
            "on_changed_sources": [lock.name for lock in self.on_changed_sources],
            "on_changed_claims": [lock.name for lock in self.on_changed_claims],
            "on_recited_runs": [lock.name for lock in self.on_recited_runs],
            "unlocked": [m.to_json() for m in self.unlocked],
            "unlocked_left_out": self.unlocked_left_out,
            "code_changed": list(self.code_files),
            "install_changed": list(self.install_files),
            "export_rules": list(self.export_rules),
            "duplicate_locks": list(self.duplicates),
            "head_warnings": list(self.head_warnings),
            "head_warnings_left_out": self.head_warnings_left_out,
            "added_servings": [a.to_json() for a in self.added_servings],
            "added_records": dict(self.added_records),
            "stack_spans": dict(self.spans),
            "runs_to_verify": dict(self.recited),
            "scopes_widened": dict(self.widened),
            "entries_edited": list(self.entries_edited),
            "digests_dropped": {path: list(found) for path, found in self.digests_dropped.items()},
            "header_pinned_by": {path: list(names) for path, names in self.header_pins.items()},
            "origin_pinned_by": {path: list(names) for path, names in self.origin_pins.items()},
            "source_pinned_by": {path: list(names) for path, names in self.source_pins.items()},
            "lookalike_records": dict(self.lookalikes),
            "held_by_header": self.by_header,
            "made_real": dict(self.made_real),
            "relabelled_cards": dict(self.relabelled),
            "hypothetical_claims": dict(self.hypothetical),
            "cited_sources": dict(self.cited),
            "relabelled_records": dict(self.relabelled_records),
            "stale_descriptions": dict(self.stale_descriptions),
            "rerouted_stacks": dict(self.rerouted),
            "title_contradicts_mark": dict(self.title_contradicts),
            "pricing_model": {
                "base": self.base_code.model if self.base_code else None,
                "head": self.head_code.model if self.head_code else None,
                "changed": self.model_changed,
                "priced_with": [
                    code.describe(label)
                    for code, label in ((self.base_code, "BASE"), (self.head_code, "HEAD"))
                    if code is not None
                ],
            },
        }


#: The kinds of record holding facts, in the order the summary counts them, each with the noun of its facts.
_FACT_KINDS = (("card", "fact"), ("draft", "drafting-method fact"), ("routing", "routing fact"),
               ("stack", "stack fact"))
#: A file kind → the kind its facts are counted under (a file of no kind here counts with the cards' facts).
_FACT_KIND_OF = {kind: kind for kind, _ in _FACT_KINDS}


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def in_source(count: int) -> str:
    """The review's "to verify" clause for ``count`` facts or runs: ``in its source`` for one, ``in their sources``
    for more (issue 13: the header read "2 to verify in its source"). Raises nothing."""
    return "in its source" if count == 1 else "in their sources"


def _file_counts(files: Sequence[FileChange]) -> list[str]:
    """The summary's count of changed files that hold no facts and are no lock: servings and checkpoint entries by
    what happened to them (``1 serving added``, ``2 checkpoint entries changed``), then every other file (``1 other
    file changed``). A serving and its lock added together read "1 other file changed" (slip round 28)."""
    out = []
    kinds = (("serving", "serving", "servings"), ("checkpoint", "checkpoint entry", "checkpoint entries"))
    for kind, one, many in kinds:
        for status in ("added", "changed", "removed"):
            n = sum(1 for f in files if f.kind == kind and f.status == status)
            if n:
                out.append(f"{n} {one if n == 1 else many} {status}")
    # a source added, described under Sources (walkthrough 21: counted as "1 other file changed"); a source record
    # changed or removed, named under Sources too (leftovers 28: "1 other file changed", the file in no section)
    for status in ("added", "changed", "removed"):
        n = sum(1 for f in files if f.kind == "source" and f.status == status)
        if n:
            out.append(f"{_n(n, 'source')} added" if status == "added" else f"{_n(n, 'source record')} {status}")
    others = [f for f in files if f.kind not in ("serving", "checkpoint", "source")]
    if others:
        out.append(f"{_n(len(others), 'other file')} changed")
    return out


def compare(base: Side, head: Side) -> Diff:
    """The diff of two opened sides: every file that differs, compared, and every lock reviewed. Both sides are read
    as one snapshot (:func:`passprice.snapshot.reading`): a file the comparison reads (each of 2,000 added serving
    files) is read, validated and built once for the comparison, HEAD's review and the locks' prices."""
    from passprice import snapshot

    with snapshot.reading(), _shared_copies():  # the private copies of HEAD removed first, then the snapshot
        return _compare(base, head)


def _own_schemas_unwarned(head: Side, warnings: tuple[str, ...]) -> tuple[str, ...]:
    """``check``'s ``warnings`` on HEAD without those of :func:`passprice.registry.schema_copy_drift` ("schema/…
    differs from this passprice's copy, which it validates against") when HEAD carries its own code whose schemas
    are that ``schema/`` (:func:`passprice.sidecode.schema_folder`): its code validates against them, and prices it
    in its own process where they differ from this passprice's (:func:`passprice.sidecode.schema_changes`), so the
    warning was wrong of it (issue 13). Raises nothing."""
    if not head.code.own or head.code.folder is None:
        return warnings
    from passprice.registry import schema_copy_drift
    from passprice.sidecode import schema_folder

    try:
        if schema_folder(head.code.folder).resolve() != (head.root.path / "schema").resolve():
            return warnings
    except (OSError, RuntimeError):
        return warnings
    drift = set(schema_copy_drift(head.root))
    return tuple(w for w in warnings if w not in drift)


def _compare(base: Side, head: Side) -> Diff:
    from passprice import snapshot

    for side in (base, head):
        # The bytes each side's files were compared by are the bytes its review reads: each file read once, sized
        # and checked as a regular file, not a link (gitread), when the side was opened, not read again from disk
        # for each of 2,000 serving files (and the review sees the very version the comparison saw).
        for rel, data in side.files.items():
            if not isinstance(data, gitread.Unread):  # past its cap, unread: its reader refuses it by its size
                snapshot.file_bytes(side.root.path / rel, _given(data))
    paths = sorted(p for p in {*base.files, *head.files} if base.files.get(p) != head.files.get(p))
    for role, side in (("BASE", base), ("HEAD", head)):
        refuse_unread_locks(role, side, [p for p in paths if p in side.files])
    renames = card_renames(base, head, paths)
    into = {old: new for new, old in renames.items()}
    files = _ask_added(base, head, tuple(compare_file(base, head, p, renames.get(p), into.get(p)) for p in paths))
    files = _fresh_sources(base, head, files)
    from passprice.sources import Lookups

    lookups = Lookups()  # the review's quote look-ups, all of them: its changed facts' and rewritten excerpts'
    files = _quotes_checked(head, files, base, lookups)
    files = _ratio_bases(head, files)
    files = _foreign_files(head, files)
    files = _moved_under_runs(head, files)
    files = measurement_renames(base, head, files)
    files = checkpoint_renames(files)
    from passprice.check import review_files

    review = review_files(head.root, head.document)
    duplicates, untouched = _duplicates(head, paths)
    # check's own order: the registry's warnings, the lock links, the duplicates (those of a pair the change touches
    # under their own heading, Diff.duplicates), the undated sources
    head_warnings = (*_own_schemas_unwarned(head, review.warnings), *_lock_links(head), *untouched)
    if (head_warnings or duplicates) and review.undated:
        from passprice.sources import undated_line

        # check's standing line of the sources retrieved "unknown", listed beside its other warnings so that the
        # count and lines are check's (alone, it is not repeated: every review of the shipped registry would say it),
        # a duplicate listed under its own heading among them (Diff.head_warnings_count)
        head_warnings = (*head_warnings, *filter(None, [undated_line(review.undated)]))
    problems = review.problems + unreproduced(head, [p for p in paths if p in head.files])
    # HEAD's and BASE's facts read with the running code: also when HEAD prices with its own code (a pull request
    # tidying src/passprice re-cited a lock's pinned fact by hand and passed as "re-locked", slip round 28), a pin at
    # a path no side holds among them (slip round 30: it was left to HEAD's code, as a fact its new code might add).
    from passprice.pinforgery import forged_pins

    forged = forged_pins(base.root, head.root, base.files, [p for p in paths if p in head.files])
    problems += forged
    # A lock's pricing model is the digest of the code that priced it: one of no code here, typed by hand (slip 46).
    from passprice.pinforgery import forged_models
    from passprice.pins import pricing_model_digest

    models = forged_models(base.root, head.root, base.files, [p for p in paths if p in head.files],
                           (base.code.model, head.code.model, pricing_model_digest()),
                           base.installs.get("requirements.txt") != head.installs.get("requirements.txt"))
    problems += models
    # Both are the review's own rules: `check` has no sides of a change to hold a pin against, so a lock added and
    # then left behind by a later commit's edit read "HEAD fails passprice check (1 problem)" where check on that
    # commit passed (tests/test_fix53w.py): listed among head_check_review_rules, as README says.
    forged += models
    # A source leads elsewhere when its record changed, or the registry document or stored excerpt it names did (its
    # file unchanged: a new user's finding, an edited sources/excerpts/X.txt changed what audit says, and the review
    # said "no changes", exit 0; tests/test_walk128.py, tests/test_attack121.py).
    ids = [file_kind(p)[1] for p in head.files if file_kind(p)[0] == "source" and p in base.files
           and (base.files[p] != head.files[p] or b"path" in head.files[p] or b"excerpt" in head.files[p])]
    # And a source this change adds that a fact of BASE is re-cited to: the fact's line asks it, and the locks resting
    # on the fact rest on the new document (session 38, walk53: `sources_changed` never named it).
    recited_to = sorted({s for f in files for c in f.facts if c.old is not None for s in c.fresh_sources})
    head_locks = ([(rel, lock) for rel, lock in _locks(head).items() if lock is not None] if ids or recited_to
                  else [])
    sources = source_changes(base.root, head.root, ids, (base.document, head.document), head_locks, recited_to,
                             lookups)
    from passprice.unlocked import unlocked_moves

    lists = _side_lists(base, head)
    listed, walk_unread = _list_changes(base, head, lists)
    # A lock passprice lock wrote into locks/ is among the records of HEAD's list; one edited by hand is not (slip 58).
    problems += _unrecorded_locks(head, [p for p in paths if p in head.files], lists)
    # what of the branch's locks/ the list's walk could not read, past a cap: a problem of HEAD's that is a file that
    # does not read (exit 2), the rest of the report kept (tests/test_bigread173.py; it was swallowed)
    problems += walk_unread
    rules = [*listed.failing, *unkept_changes(base, head)]
    problems += synthetic_made_real(base, head, files) + tuple(rules)
    reviews = lock_impacts(base, head, files)
    moves, left_out = unlocked_moves(base, head, files, reviews)
    from passprice.addedservings import added_servings
    from passprice.sidecode import code_changes

    # An added file's runs are asked as runs added to an edited file are (slip round 34: a new file's run under a
    # locator quoting another run's figure was only priced, "1 other file changed", nothing to verify).
    read_runs: dict[Path, tuple[Run, ...] | None] = {}  # each measurement file read once for all files' asks
    asked_stacks: set[str] = set()
    noted: dict[str, list[str]] = {}  # runs whose note changed, by file: listed, not asked (slip round 47)
    recited = {f.path: asks for f in files if f.status in ("changed", "added") and f.kind == "other"
               and _is_measurement(f.path)
               and (asks := runs_to_verify(base, head, f.path, read_runs, asked_stacks, noted.setdefault(f.path, [])))}
    # HEAD's locks made under a stack fitted from a run to verify: to verify themselves (slip round 46)
    recited_locks = tuple(lock.name for lock in _locks(head).values()
                          if lock is not None and lock.stack is not None and lock.stack.name in asked_stacks) \
        if asked_stacks else ()

    widened = {**scopes_widened(base, head, files), **scopes_copied(base, head, files)}
    lookalikes = lookalike_records(base, head, files)
    for f in files:  # a measurement file's [source] table rewritten (slip 53: it read "(changed)" alone)
        if f.status == "changed" and f.kind == "other" and _is_measurement(f.path):
            noted.setdefault(f.path, []).extend(source_table_changes(base, head, f.path))
    records = added_records(head, files, recited, {p: lines for p, lines in noted.items() if lines})
    for f in files:
        if f.kind == "other" and f.status == "added" and f.renamed is not None:
            said = renamed_runs(head, f.renamed, f.path)
            records[f.path] = f"{said}; {records[f.path]}" if f.path in records else said
    return Diff(base.info, head.info, files, reviews, base.code, head.code,
                _unrooted(head, problems),
                # HEAD's module past the cap, unread: a file that does not read on HEAD (tests/test_blobcap162.py)
                _unrooted(head, review.unreadable) + ((head.code.oversized,) if head.code.oversized else ())
                + walk_unread,
                sources, moves, left_out,
                code_changes(base.code, head.code) + listed.named, duplicates,
                _unrooted(head, head_warnings[:MAX_HEAD_WARNINGS]), max(0, len(head_warnings) - MAX_HEAD_WARNINGS),
                added_servings(head, files, reviews),
                tuple(p for p in dict.fromkeys([*INSTALL_FILES, *sorted({*base.installs, *head.installs})])
                      if base.installs.get(p) != head.installs.get(p)),
                records,
                stack_spans(base, head, files),
                {p: len(asks) for p, asks in recited.items()}, widened, lookalikes, made_real(base, head, files),
                relabelled_cards(base, head, files), hypothetical_claims(head, files),
                cited_sources(head, files, {s.id for s in sources}),
                {**relabelled_records(base, head, files), **relabelled_stacks(base, head, files)},
                titles_contradicting(base, head, files), recited_locks=recited_locks,
                stale_descriptions=stale_descriptions(base, head, files), rerouted=rerouted_stacks(base, head, files),
                review_rules=frozenset(_unrooted(head, [*rules, *forged])), export_rules=export_lines(base, head))


#: What the review says of the export rules it lists (:attr:`Diff.export_rules`).
EXPORT_WARNING = ("a .gitattributes rule makes `git archive` of HEAD leave these files out (export-ignore) or expand "
                  "$Format$ placeholders in them (export-subst): a release packed from HEAD is not the registry this "
                  "review read")


def export_lines(base: Side, head: Side) -> tuple[str, ...]:
    """One line a file of HEAD's facts, locks or sources (records and stored excerpts) on which HEAD's rules set
    ``export-ignore`` or ``export-subst`` (:attr:`Side.exports`, read for a HEAD revision) where BASE's do not set
    the same (BASE's asked of the same files): ``PATH: export-ignore (a rule of .gitattributes at COMMIT; not at
    BASE)``.
    ``git archive`` then leaves the file out of, or rewrites it in, what it packs, while a checkout (what check, price
    and the review read) is unchanged: named as the review names a rewrite rule, never failed. Empty when HEAD is no
    revision, or sets none. Raises nothing (BASE's rules unread: each HEAD setting named)."""
    if not head.exports:
        return ()
    then: Mapping[str, tuple[str, str, str]] = {}
    if base.checkout is not None and base.info.revision is not None:
        with contextlib.suppress(InputError, OSError, subprocess.CalledProcessError):
            then = base.checkout.exports(base.info.revision, list(head.exports))
    out = []
    for path, (attribute, value, source) in sorted(head.exports.items()):
        if then.get(path, ("", "", ""))[:2] == (attribute, value):
            continue
        rule = attribute if value == "set" else f"{attribute}={value}"
        was = then.get(path)
        before = f"BASE's: {was[0] if was[1] == 'set' else f'{was[0]}={was[1]}'}" if was else "not at BASE"
        out.append(f"{path}: {rule} (a rule of {escaped(source)}; {before})")
    return tuple(out)


#: What a checkpoint entry edited under the same header sha256 asks (:attr:`Diff.entries_edited`).
EDITED_ENTRY = ("its content changed but the header sha256 it records did not: one file's header has one content; "
                "re-import the entry from its file (`passprice import`), or say which file holds this content")


def scopes_widened(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose ``checkpoints`` list (its scope,
    :mod:`passprice.scopes`) HEAD widens, by path: what the reviewer must verify, naming the checkpoints added (or
    that the list was removed: any checkpoint) and the facts whose figures now apply to them. Slip round 36: the
    Qwen3-30B-A3B routing record's scope widened to ``deepseek-v3-q4_k_m`` (its 58 of 128 experts measured on
    Qwen3) read "no fact changed; no lock affected", nothing to verify, exit 0. A file that does not read on a side
    is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or "checkpoints" not in f.meta:
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
            after = side_toml(head.files[f.path], f.kind).get(table, {}).get("checkpoints") or []
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not before:
            continue  # it applied to any checkpoint already
        new = [str(c) for c in after if c not in before]
        if after and not new:
            continue
        got = _read(head, f.path, f.kind, f.name)
        facts = got.facts or {}
        cited = sorted({fact.source for fact in facts.values() if fact.source is not None})
        what = (f"its checkpoints list is gone: it now applies to any checkpoint (was {', '.join(map(str, before))})"
                if not after else
                f"its checkpoints gain {', '.join(new)} (was {', '.join(map(str, before))})")
        out[f.path] = (f"{escaped(what)}: were {', '.join(escaped(p) for p in facts) or 'its figures'} established "
                       f"for {'every model' if not after else 'that model' if len(new) == 1 else 'those models'}? "
                       f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
    return out


#: How a synthetic checkpoint entry's ``entry.origin`` opens (``passprice synth --import`` and the test hybrids write
#: it so): the one words telling a reader the header was built, not read from a published GGUF file.
SYNTHETIC = "Synthetic"


def _checkpoint_document(side: Side, rel: str) -> dict[str, Any]:
    """The checkpoint entry ``rel`` of ``side`` as the review already read it (:func:`passprice.schema.load`, made
    once a snapshot: an added entry was parsed twice cold, once to compare it and once for its origin; leftovers round
    20's one parse), or, for an entry that does not validate, as plain TOML (:func:`side_toml`). Raises what
    :func:`side_toml` raises."""
    try:
        return schema.load(side.root.path / rel, "checkpoint", side.root.schema)
    except InputError:
        return side_toml(side.files[rel], "checkpoint")


def synthetic_made_real(base: Side, head: Side, files: Sequence[FileChange]) -> tuple[str, ...]:
    """One line for each checkpoint entry ``files`` add or change on HEAD whose ``entry.origin`` no longer opens with
    :data:`SYNTHETIC` though its header is a synthetic one: a header passprice knows it built
    (:data:`passprice.unkept.UNKEPT`, by the entry's ``header.sha256``), or the very header (same ``header.sha256``)
    of a BASE entry whose origin said synthetic. Slip 56 (issue 13): the Qwen3-30B-A3B Q4_K_M entry's origin
    rewritten to "… the header of the GGUF downloaded from huggingface.co …" read "claims changed, which the pricer
    does not read", its lock only "to re-pin" (exit 0), and re-pinned in the same pull request it passed: the locked
    price then read as a real checkpoint's. Each fails the review. Never raises (a file that does not read as TOML
    is left to the review's other rules)."""
    from passprice.unkept import UNKEPT

    out: list[str] = []
    for f in files:
        if f.kind != "checkpoint" or f.path not in head.files:
            continue
        try:
            new = _checkpoint_document(head, f.path)
            old = _checkpoint_document(base, f.path) if f.path in base.files else {}
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError):
            continue
        entry, header = new.get("entry"), new.get("header")
        was_entry, was_header = old.get("entry"), old.get("header")
        if not isinstance(entry, dict) or not isinstance(header, dict):
            continue
        origin, sha = entry.get("origin"), header.get("sha256")
        if not isinstance(origin, str) or not isinstance(sha, str) or origin.startswith(SYNTHETIC):
            continue
        was_synthetic = (isinstance(was_entry, dict) and isinstance(was_header, dict)
                         and str(was_entry.get("origin", "")).startswith(SYNTHETIC) and was_header.get("sha256") == sha)
        if sha in UNKEPT or was_synthetic:
            how = ("a header passprice synth built (passprice's table of shipped synthetic headers)" if sha in UNKEPT
                   else "the header BASE's entry called synthetic")
            out.append(f"{f.path}: entry.origin: no longer opens with {SYNTHETIC!r}, but its header (sha256 "
                       f"{sha[:12]}…) is {how}: a synthetic header's price is no real checkpoint's; restore the "
                       "origin")
    return tuple(out)


@functools.lru_cache(maxsize=2)
def _unkept_tree(source: bytes) -> ast.Module | None:
    """The syntax tree of a side's ``src/passprice/unkept.py`` (``source``), parsed once for :func:`_unkept_table`
    and :func:`_unkept_command`; ``None`` when it does not parse, or is not parsed: past
    :data:`passprice.pins.MODEL_TOKENS` as :func:`passprice.pins._count_tokens` counts it (it is no pricing module,
    so no cap held it: a 4,000,007-byte ``x = [a,a,…]`` took each of the two 8.1 s of CPU and 2.8 GB, left103), or
    declaring a codec whose decoding is quadratic (:func:`passprice.pins.slow_coding`)."""
    import ast

    from passprice.pins import MODEL_TOKENS, _count_tokens, slow_coding

    if slow_coding(source) is not None or _count_tokens(source) > MODEL_TOKENS:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _unkept_table(source: bytes) -> dict[str, tuple[str, str, str]] | None:
    """The table ``UNKEPT`` a ``src/passprice/unkept.py`` (``source``) writes, read from its syntax tree, never run:
    header sha256 → (name, config, mix), each a ``Unkept(…)`` of three string literals; ``None`` when the file does
    not parse or writes the table otherwise, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if not isinstance(target, ast.Name) or target.id != "UNKEPT":
            continue
        value = node.value if isinstance(node, (ast.AnnAssign, ast.Assign)) else None
        if not isinstance(value, ast.Dict):
            return None
        out: dict[str, tuple[str, str, str]] = {}
        for key, call in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name) and call.func.id == "Unkept" and not call.keywords
                    and len(call.args) == 3
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
                return None
            name, config, mix = (a.value for a in call.args)  # type: ignore[attr-defined]
            out[key.value] = (name, config, mix)
        return out
    return None


def _unkept_command(source: bytes) -> str | None:
    """The syntax of what makes ``Unkept.command`` in a ``src/passprice/unkept.py`` (``source``): ``CONFIGS``'
    assignment and the method itself, docstrings left out, as :func:`ast.dump` text; ``None`` when it does not
    parse or has neither, or is not parsed (:func:`_unkept_tree`)."""
    import ast

    tree = _unkept_tree(source)
    if tree is None:
        return None
    parts: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "CONFIGS" in ast.dump(node)[:200]:
            parts.append(ast.dump(node))
        if isinstance(node, ast.ClassDef) and node.name == "Unkept":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "command":
                    body = item.body[1:] if (item.body and isinstance(item.body[0], ast.Expr)
                                             and isinstance(item.body[0].value, ast.Constant)) else item.body
                    parts.append(ast.dump(ast.Module(body=body, type_ignores=[])))
    return "\n".join(parts) if len(parts) == 2 else None


def unkept_changes(base: Side, head: Side) -> tuple[str, ...]:
    """Lines failing HEAD's ``src/passprice/unkept.py`` where it changes what BASE's says of a shipped synthetic
    header: each row of BASE's table ``UNKEPT`` (:data:`passprice.unkept.UNKEPT`) HEAD rewrites or drops, and
    ``Unkept.command`` or ``CONFIGS`` rewritten (:func:`_unkept_command`); one line when HEAD's table does not read as
    literals. Both files are read as syntax, never run. The table is history too: each row says which ``synth``
    command writes those header bytes again, and ``audit``, ``header`` and ``checkpoints`` tell a reader to run it.
    Slip 56 (issue 13): ``command`` rewritten to give ``--mix Q8_0`` for every header read only "passprice's own code
    changed: src/passprice/unkept.py" (exit 0), and once merged passprice sent readers to commands writing other
    bytes. A row HEAD adds is left to ``tests/test_unkept.py`` (it checks the table against the synthesized
    headers). Empty unless both sides bring their own code. Never raises."""
    from passprice.files import read_regular
    from passprice.pins import MODULE_BYTES

    if head.code.folder is None or not head.code.own or base.code.folder is None or not base.code.own:
        return ()

    def source(folder: Path) -> bytes:
        try:
            return read_regular(folder / "unkept.py", MODULE_BYTES) if (folder / "unkept.py").is_file() else b""
        except (OSError, InputError):
            return b""

    was, now = source(base.code.folder), source(head.code.folder)
    if was == now:
        return ()
    rel = f"{CODE}/unkept.py"
    old, table = _unkept_table(was) or {}, _unkept_table(now)
    if _unkept_command(was) != _unkept_command(now):
        return (f"{rel}: Unkept.command (or CONFIGS) rewritten: it gives the command that writes each of the "
                f"{len(old)} shipped synthetic headers again, byte for byte, and passprice tells readers to run it; "
                "restore it",)
    if table is None:
        return (f"{rel}: UNKEPT does not read as a table of Unkept(NAME, CONFIG, MIX) string literals: the review "
                "cannot tell which command it gives for each shipped synthetic header",)
    out = []
    for sha, row in old.items():
        if table.get(sha) == row:
            continue
        said = "dropped" if sha not in table else f"rewritten ({', '.join(row)} → {', '.join(table[sha])})"
        out.append(f"{rel}: UNKEPT: the row of header {sha[:12]}… ({row[0]}) {said}: it gives the command that "
                   "writes those bytes again, and passprice tells readers to run it; restore the row")
    return tuple(out)


def made_real(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides that BASE marks ``hypothetical`` and HEAD does not, by path: what the
    reviewer must verify. Slip round 38: WS1's ``hypothetical = true`` removed read "[card] changed: hypothetical",
    no lock affected, though its locked price then reads as a product's (its figures all assumed) and the lock pins
    ``hypothetical = true``."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or "hypothetical" not in f.meta:
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {}).get("hypothetical", False)
            after = side_toml(head.files[f.path], "card").get("card", {}).get("hypothetical", False)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if before is True and after is not True:
            got = _read(head, f.path, f.kind, f.name)
            assumed = sum(1 for fact in (got.facts or {}).values()
                          if fact.provenance in (Provenance.ASSUMED, Provenance.ESTIMATED))
            out[f.path] = (f"card {spelled(f.name)} is no longer marked hypothetical: its prices now read as a real "
                           f"card's, {assumed} of its facts estimated or assumed; is it a product, and does each "
                           "figure now cite that product's documents?")
    return out


#: The most sources a review describes as cited by the changed facts (:func:`cited_sources`); the rest counted.
MAX_CITED_SOURCES = 20


def cited_sources(head: Side, files: Sequence[FileChange], shown: Iterable[str] = ()) -> dict[str, str]:
    """Each source id a fact ``files`` add or change cites on ``head`` (its own ``source`` and each figure input's,
    :func:`passprice.sources.cited_ids`), in the order of the files and facts, by id: ``TITLE (BY, DATE), KIND, at
    WHERE; cited by CARD PATH, …`` (the first 3 citing facts, the rest counted). Left out: a source the change adds
    (described as added) and one in ``shown`` (its document changed: listed to verify), one HEAD does not register
    (the review's errors name it); the first :data:`MAX_CITED_SOURCES`, then ``"…"`` with the count of the rest.
    Walkthrough 30: a reviewer tracing a moved price to its documents read only a source id beside each changed
    fact (``gpu-container-handbook-routing-derisk: the definition of hot_frac_for_coverage …``): the document's
    title and address were in ``passprice sources`` and ``audit --source``, not in the review."""
    from passprice.sources import cited_ids, load_source

    skip = set(shown) | {f.name for f in files if f.kind == "source" and f.status == "added"}
    citing: dict[str, list[str]] = {}
    for f in files:
        if not f.holds_facts:
            continue
        for c in f.facts:
            if c.new is None:
                continue
            for _, source_id in cited_ids(c.path, c.new):
                if source_id in skip:
                    continue
                named = citing.setdefault(source_id, [])
                who = f"{f.shown_name} {c.path}"
                if who not in named:
                    named.append(who)
    out: dict[str, str] = {}
    for source_id, named in citing.items():
        if len(out) >= MAX_CITED_SOURCES:
            out["…"] = f"and {_n(len(citing) - MAX_CITED_SOURCES, 'more source')}: `passprice sources` lists each"
            break
        try:
            source = load_source(head.root, source_id)
        except InputError:
            continue
        more = f" and {len(named) - 3:,} more" if len(named) > 3 else ""
        out[source_id] = (f"{source.describe()}, {source.kind}, at {source.where()}; cited by "
                          f"{', '.join(named[:3])}{more}")
    return out


#: The provenances a card that does not exist cannot have of its own (:func:`hypothetical_claims`).
_PRODUCT_PROVENANCES = (Provenance.PUBLISHED, Provenance.MEASURED)


def _card_table(side: Side, path: str) -> dict[str, Any] | None:
    """The ``[card]`` table of the file ``path`` of ``side`` as ``tomllib`` reads the whole file, or ``None`` when
    there is no such file, it does not decode or parse, or its ``card`` is no table. Parsed once a snapshot for its
    bytes (:func:`titles_contradicting` and :func:`hypothetical_claims` each parsed every added card: 999 added cards,
    2 parses each, a fifth of the review, session 32). Raises nothing."""
    from passprice import snapshot

    data = side.files.get(path)
    if data is None:
        return None

    def parse() -> tuple[dict[str, Any] | None]:
        try:
            card = side_toml(data, "card").get("card", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError):
            return (None,)
        return (card if isinstance(card, dict) else None,)

    return snapshot.made(("card-table", data), parse)[0]


def titles_contradicting(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` add or change whose HEAD title says hypothetical (:func:`passprice.cards.says_hypothetical`)
    while HEAD does not mark it ``hypothetical = true``, and BASE did not hold that same contradiction, by path: what
    the reviewer must verify. Left26b: ``RTX 4090 (Hypothetical)`` unmarked is priced, locked and reviewed as a real
    card (no question of its published figures, :func:`hypothetical_claims`) while every table's title calls it
    made up. A file that does not parse on HEAD is left to the review's errors."""
    from passprice.cards import says_hypothetical

    def contradiction(side: Side, path: str) -> str | None:
        card = _card_table(side, path)
        if card is None:
            return None
        title = card.get("name")
        if not isinstance(title, str) or card.get("hypothetical", False) is True or not says_hypothetical(title):
            return None
        return title

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status not in ("added", "changed"):
            continue
        title = contradiction(head, f.path)
        if title is None or (f.status == "changed" and contradiction(base, f.path) == title):
            continue
        out[f.path] = (f"card {spelled(f.name)}'s title {escaped(repr(title))} says hypothetical, but it is not marked "
                       "hypothetical = true: its prices read and lock as a real card's under a title that says it is "
                       "made up; mark it hypothetical, or retitle it")
    return out


def hypothetical_claims(head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` adds that HEAD marks ``hypothetical`` and of whose facts one or more is ``published`` or
    ``measured``, by path: what the reviewer must verify, naming the first five such facts. A card that does not
    exist has no datasheet or benchmark of its own, so such a figure is another card's, borrowed under its
    provenance. Walkthrough 30: a hypothetical card copied from the H100's file (its 80 GB ``published``, its stream
    shares ``measured`` on the H100) read "17 facts added in 1 new file", nothing to verify, and its prices read
    ``published``/``measured`` beside real cards'. A card that does not read is left to the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "added" or not f.compared:
            continue
        card = _card_table(head, f.path)
        if card is None or card.get("hypothetical", False) is not True:
            continue
        strong = [path for path, fact in (_read(head, f.path, f.kind, f.name).facts or {}).items()
                  if fact.provenance in _PRODUCT_PROVENANCES]
        if not strong:
            continue
        named = ", ".join(strong[:5]) + (f" and {len(strong) - 5:,} more" if len(strong) > 5 else "")
        out[f.path] = (f"card {spelled(f.name)} is marked hypothetical, yet {len(strong):,} of its facts are "
                       f"published or measured ({named}): a card that does not exist has no datasheet or benchmark "
                       "of its own; is each figure another card's, to be cited as estimated or assumed?")
    return out


def _pinning(side: Side, card: str) -> list[str]:
    """The names of the lock files of ``side`` (``locks/NAME.lock.toml``) whose ``[card]`` pins the card ``card``,
    by name (:func:`~passprice.registry.lock_order`, as every listing of locks); a lock file that does not read is
    left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            pinned = side_toml(side.files[rel], "lock").get("card", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(pinned, dict) and pinned.get("name") == card:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


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


def _pins_record(side: Side, lock: str, kind: str, today: tuple[str, Any] | None) -> bool:
    """Whether ``side``'s lock file ``locks/LOCK.lock.toml`` pins its routing record's (``kind`` ``routing``) or
    drafting method's (``draft``) title and note (a ``[routing]``/``[draft]`` table, slip round 44) otherwise than
    ``today`` (the record's title and note on that side): ``check --frozen`` fails it until re-pinned. With ``today``
    ``None``: whether it pins them at all (a lock written before slip round 44 pins neither). Raises nothing."""
    try:
        table = side_toml(side.files[f"locks/{lock}.lock.toml"], "lock").get(kind)
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(table, dict) and (today is None or (table.get("title"), table.get("note")) != today)


def _pricing_with(side: Side, kind: str, name: str) -> list[str]:
    """The names of the lock files of ``side`` whose ``[serving]`` prices with the routing record (``kind``
    ``routing``) or drafting method (``draft``) ``name``, by name (:func:`~passprice.registry.lock_order`); a lock
    file that does not read is left out (``check`` names it)."""
    out = []
    for rel in sorted(side.files, key=lock_order):
        if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
            continue
        try:
            serving = side_toml(side.files[rel], "lock").get("serving", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if not isinstance(serving, dict):
            continue
        draft = serving.get("draft")
        used = serving.get("routing") if kind == "routing" else draft.get("method") if isinstance(draft, dict) else None
        if used == name:
            out.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
    return out


def _locators(fact: Fact | None) -> list[str]:
    """``fact``'s locator and each of its derivation's inputs' (``[]`` for ``None``)."""
    from passprice.derivations import Derivation

    if fact is None:
        return []
    out = [fact.locator] if fact.locator else []
    if isinstance(fact.derivation, Derivation):
        out += [i.locator for i in fact.derivation.inputs if i.locator]
    return out


def stale_descriptions(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each record ``files`` change whose facts were re-cited from one table row to another (their locators' ``row
    'LABEL'``, :mod:`passprice.rowcite`) while a description was left as it was, by path: what to verify. A
    description is a string of the record's own table (``[routing]``'s ``name`` and ``note`` …) the change left
    unchanged that holds words of the row no longer cited and none of the row cited now, or quotes the old row; and
    the ``read`` line of a source the re-cited facts cite on HEAD that quotes the old row. Walkthrough 49: the
    Qwen3-30B-A3B routing record re-cited from row 'narrow (single-domain Python)' to row 'diverse (prose, code,
    math)' kept its title "measured skew (single-domain Python, ~8k tokens)" and its source's ``read`` the narrow row,
    and the review, which flags a derived fact left stale, said nothing. Shown, never failed. A file or source that
    does not read is left to the review's errors."""
    from passprice.rowcite import old_row_words, rows
    from passprice.sources import cited_ids, load_source

    out: dict[str, str] = {}
    for f in files:
        if not f.holds_facts or f.status != "changed" or not f.compared or f.path not in base.files:
            continue
        was = rows(loc for c in f.facts for loc in _locators(c.old))
        now = rows(loc for c in f.facts for loc in _locators(c.new))
        # Sets for the look-ups: a card of 17,524 distinct row labels on each side (256 KiB, 13 inputs a fact) took
        # 10.7 s to compare as tuples (attack66).
        was_set, now_set = set(was), set(now)
        old, new = [r for r in was if r not in now_set], [r for r in now if r not in was_set]
        if not old or not new:
            continue
        old_set = set(old)
        said = []
        try:
            before = side_toml(base.files[f.path], f.kind).get(_table(f.kind), {})
            after = side_toml(head.files[f.path], f.kind).get(_table(f.kind), {})
        except (InputError, KeyError):
            before, after = {}, {}
        for key, text in after.items():
            if not isinstance(text, str) or before.get(key) != text:
                continue
            quoted = [r for r in rows([text]) if r in old_set]
            stale = old_row_words(text, old, new)
            if quoted or stale:
                said.append(f"its {key} still says " + (_rows_named(quoted) if quoted
                                                         else ", ".join(f"'{w}'" for w in stale)))
        ids = dict.fromkeys(sid for c in f.facts if c.new is not None for _, sid in cited_ids(c.path, c.new))
        for sid in ids:
            try:
                read = load_source(head.root, sid).read
            except InputError:
                continue
            quoted = [r for r in rows([read]) if r in old_set]
            if quoted:
                said.append(f"source {sid}'s read still names {_rows_named(quoted)}")
        if said:
            out[f.path] = (f"{'; '.join(said)}, though its facts now cite {_rows_named(new)} in place of "
                           f"{_rows_named(old)}: does each still describe the record? (nothing priced reads it; "
                           "`audit` shows it)")
    return out


def _rows_named(labels: Iterable[str]) -> str:
    """``row 'narrow (single-domain Python)'``, each of ``labels`` so, joined by commas (the first few, the rest
    counted: :func:`passprice.rowcite.named`)."""
    from passprice.rowcite import named

    return named(labels)


def relabelled_records(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` change on both sides whose title (``[routing]``/``[method]``
    ``name``) or ``note`` changed while a lock of HEAD prices with it, by path: what the reviewer must verify, naming
    those locks. Neither moves a number (a lock written since slip round 44 pins both, :func:`_pins_record`), yet a
    price prints the routing record's note (``routing note``) and ``audit`` its title and note ("today's record") as
    what the price rests on: slip round 43, the Qwen3-30B-A3B record retitled "measured skew (diverse prose)" and its
    note rewritten read "[routing] changed: name, note; no lock affected", ✅. A file that does not read is left to
    the review's errors."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind not in ("routing", "draft") or f.status != "changed" or not {"name", "note"} & set(f.meta):
            continue
        table = "routing" if f.kind == "routing" else "method"
        try:
            before = side_toml(base.files[f.path], f.kind).get(table, {})
            after = side_toml(head.files[f.path], f.kind).get(table, {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            renoted = before.get("note") != after.get("note")
            note = after.get("note")
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        locks = _pricing_with(head, f.kind, f.name)
        if not locks or (was == now and not renoted):
            continue
        what = "routing record" if f.kind == "routing" else "drafting method"
        asks = []
        if was != now:
            asks.append(f"{what} {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}")
        if renoted:
            asks.append(f"{what} {spelled(f.name)}'s note changed")
        pins = [n for n in locks if _pins_record(head, n, f.kind, (now, note))]
        # Walkthrough 46: a lock re-locked with the change pins the record as it is now, and read "no lock pins it".
        current = [n for n in locks if n not in pins and _pins_record(head, n, f.kind, None)]
        said = []
        if pins:
            said.append(f"{', '.join(spelled(n) for n in pins)} pin{'s' if len(pins) == 1 else ''} it as before the "
                        "change: re-pin (passprice lock --update)")
        if current:
            said.append(f"{', '.join(spelled(n) for n in current)} pin{'s' if len(current) == 1 else ''} it as "
                        "changed, re-locked with it")
        pinned = "; ".join(said) or "no lock pins it"
        out[f.path] = (f"{'; '.join(asks)}: does it still describe what the locked prices rest on ({pinned}; "
                       f"{'a price prints the note, ' if f.kind == 'routing' else ''}audit shows it)?; "
                       f"{_n(len(locks), 'lock')} price{'s' if len(locks) == 1 else ''} with it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


#: The keys of a stack file's ``[stack]`` table a lock made under it pins (its ``[stack]`` table: ``title`` for
#: ``name``), in the order they are said.
_STACK_LABELS = (("name", "title"), ("runtime", "runtime"), ("builds", "builds"))


def relabelled_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose title (``[stack] name``), ``runtime`` or ``builds``
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each text old → new
    (:func:`passprice.textchange.text_change`), naming those locks (their ``[stack]`` table pins the three:
    ``check --frozen`` fails on each until re-pinned). None moves a number. Walkthrough 57: the llama.cpp stack
    retitled read "[stack] changed: name" and nothing of what it was or became, where a routing record or drafting
    method retitled (:func:`relabelled_records`) and a card (:func:`relabelled_cards`) say both titles. A file that
    does not read is left to the review's errors; raises nothing."""
    from passprice.textchange import text_change

    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not {key for key, _ in _STACK_LABELS} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        locks, pinning = [], []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if not isinstance(table, dict) or table.get("name") != f.name:
                continue
            name = rel.removeprefix("locks/").removesuffix(".lock.toml")
            locks.append(name)
            if any(table.get(pin) is not None and table.get(pin) != after.get(key) for key, pin in _STACK_LABELS):
                pinning.append(name)
        changed = [(pin, before.get(key), after.get(key)) for key, pin in _STACK_LABELS
                   if before.get(key) != after.get(key)]
        if not locks or not changed:
            continue
        said = "; ".join(
            f"its {pin} {text_change(escaped(str(was)), escaped(str(now)))}" if was is not None and now is not None
            else f"its {pin} {escaped(repr(was)) if was is not None else '(none)'} → "
                 f"{escaped(repr(now)) if now is not None else '(none)'}"
            for pin, was, now in changed)
        pinned = (f"{', '.join(spelled(n) for n in pinning)} pin{'s' if len(pinning) == 1 else ''} it as before the "
                  "change: re-pin (passprice lock --update)" if pinning else "no lock pins it as before the change")
        out[f.path] = (f"serving stack {spelled(f.name)} relabelled: {said}: does it still name the runtime and builds "
                       f"its runs measured ({pinned}; audit shows it)?; {_n(len(locks), 'lock')} made under it: "
                       f"{', '.join(spelled(n) for n in locks)}")
    return out


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


def rerouted_stacks(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each serving stack ``files`` change on both sides whose route (``integer_matrices``, ``float_matrices``)
    changed while a lock of HEAD is made under it, by path: what the reviewer must verify, each key old → new, naming
    those locks. The route is a claim about the runtime (llama.cpp's mat-vec kernels run quantised matrices on the
    vector units), not a fact with a citation, so no fact's review asks it. Walkthrough 82: llama.cpp's
    ``integer_matrices`` moved ``vector`` → ``array``, the stack re-fitted and its lock re-locked, read "[stack]
    changed: integer_matrices", the lock "re-locked" with nothing of what the route was or became, exit 0 and nothing
    to verify (expected 237.4 → 237.1 tokens/s). A file that does not read is left to the review's errors; raises
    nothing."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "stack" or f.status != "changed" or not set(_STACK_ROUTES) & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "stack").get("stack", {})
            after = side_toml(head.files[f.path], "stack").get("stack", {})
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        changed = [(key, before.get(key), after.get(key)) for key in _STACK_ROUTES if before.get(key) != after.get(key)]
        locks = []
        for rel in sorted(head.files, key=lock_order):  # the locks by name (left53)
            if not (rel.startswith("locks/") and rel.endswith(".lock.toml")):
                continue
            try:
                table = side_toml(head.files[rel], "lock").get("stack")
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if isinstance(table, dict) and table.get("name") == f.name:
                locks.append(rel.removeprefix("locks/").removesuffix(".lock.toml"))
        if not locks or not changed:
            continue
        said = "; ".join(f"its {key} {escaped(repr(was)) if was is not None else '(none)'} → "
                         f"{escaped(repr(now)) if now is not None else '(none)'}" for key, was, now in changed)
        out[f.path] = (f"serving stack {spelled(f.name)} rerouted: {said}: do the runtime and builds its runs measured "
                       "run those matrices there (the route is no cited fact: no source is asked of it)?; "
                       f"{_n(len(locks), 'lock')} made under it: {', '.join(spelled(n) for n in locks)}")
    return out


def relabelled_cards(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each card ``files`` change on both sides whose title (``[card] name``) changed or that HEAD newly marks
    ``hypothetical``, by path: what the reviewer must verify, with the locks of HEAD that pin the card (their
    ``[card]`` table pins its title and ``hypothetical``: ``check --frozen`` fails on each until it is re-locked).
    Neither moves a number. Slip round 42: the H200 card marked ``hypothetical = true`` and retitled read "[card]
    changed: name, hypothetical", no lock affected, ✅, though four locks pin it as the real H200 under its old
    title. The reverse (no longer hypothetical) is :func:`made_real`'s."""
    out: dict[str, str] = {}
    for f in files:
        if f.kind != "card" or f.status != "changed" or not {"name", "hypothetical"} & set(f.meta):
            continue
        try:
            before = side_toml(base.files[f.path], "card").get("card", {})
            after = side_toml(head.files[f.path], "card").get("card", {})
            was, now = str(before.get("name", f.name)), str(after.get("name", f.name))
            hypothetical = before.get("hypothetical", False) is not True and after.get("hypothetical", False) is True
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
            continue
        asks = []
        if hypothetical:
            asks.append(f"card {spelled(f.name)} is now marked hypothetical: its prices no longer claim a real card; "
                        "is it not the product its figures cite?")
        if was != now:
            asks.append(f"card {spelled(f.name)} is retitled {escaped(repr(was))} → {escaped(repr(now))}: is it the "
                        "same card?")
        if not asks:
            continue
        locks = _pinning(head, f.name)
        pinned = (f"{_n(len(locks), 'lock')} pin{'s' if len(locks) == 1 else ''} it as it was: "
                  f"{', '.join(spelled(n) for n in locks)}" if locks else "no lock pins it")
        out[f.path] = "; ".join(asks) + "; " + pinned
    return out


def scopes_copied(base: Side, head: Side, files: Sequence[FileChange]) -> dict[str, str]:
    """Each routing record or drafting method ``files`` add whose facts cite a place (source and locator, or a
    derivation input's) that a record of its kind on BASE cites while that record's ``checkpoints`` list lacks one the
    new record applies to (or the new one lists none: any checkpoint), by path: what the reviewer must verify, as
    :func:`scopes_widened` asks of a record changed. Slip round 38: Qwen3-30B-A3B's measured routing record copied as
    ``deepseek-v3-measured.toml`` for ``deepseek-v3-q4_k_m``, its Qwen3 figures and citations kept, read "2 facts
    added", nothing to verify, exit 0."""
    from passprice.addedfacts import _place

    added = [f for f in files if f.kind in ("routing", "draft") and f.status == "added" and not f.head_errors]
    if not added:
        return {}

    def scope(side: Side, rel: str, kind: str) -> list[str] | None:
        try:
            document = side_toml(side.files[rel], kind)
        except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        got = document.get("routing" if kind == "routing" else "method", {})
        listed = got.get("checkpoints") if isinstance(got, dict) else None
        return [str(c) for c in listed] if isinstance(listed, list) else []

    def places(facts: Mapping[str, Fact]) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for path, fact in facts.items():
            own = _place(fact.source, fact.locator)
            if own is not None:
                out.setdefault(own, path)
            if isinstance(fact.derivation, Derivation):
                for i in fact.derivation.inputs:
                    at = _place(i.source or fact.source, i.locator) if i.kind == "figure" else None
                    if at is not None:
                        out.setdefault(at, path)
        return out

    out: dict[str, str] = {}
    for f in added:
        after = scope(head, f.path, f.kind)
        got = _read(head, f.path, f.kind, f.name)
        if after is None or got.facts is None:
            continue
        mine = places(got.facts)
        for rel in sorted(base.files):
            kind, name = file_kind(rel)
            if kind != f.kind or rel == f.path:
                continue
            before = scope(base, rel, kind)
            if not before or (after and not set(after) - set(before)):
                continue  # it applies to any checkpoint, or to each the new record names
            theirs = _read(base, rel, kind, name)
            shared = sorted({mine[p] for p in places(theirs.facts or {}) if p in mine})
            if not shared:
                continue
            new = [c for c in after if c not in before]
            what = (f"it applies to {'any checkpoint' if not after else ', '.join(new)}, and "
                    f"{', '.join(escaped(p) for p in shared)} cite{'s' if len(shared) == 1 else ''} the places "
                    f"{escaped(rel)} cites for {', '.join(before)}")
            cited = sorted({fact.source for fact in got.facts.values() if fact.source is not None})
            model = "every model" if not after else "that model" if len(new) == 1 else "those models"
            out[f.path] = (f"{escaped(what)}: were they established for {model}? "
                           f"does {', '.join(escaped(c) for c in cited) or 'its source'} state them of it?")
            break
    return out


def _ask_added(base: Side, head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each added fact's :attr:`FactChange.asked` set (:func:`passprice.addedfacts.asked`, and
    :func:`passprice.addedfacts.moved` for one citing the place of a fact the change removes), from every
    file of ``head`` that holds facts and reads, and the source records ``head`` holds; what ``base`` recorded of
    each source an added estimate cites (:func:`_carried`). Only read when the change adds a fact."""
    added = [(f.path, c.path) for f in files for c in f.facts if c.old is None and c.new is not None]
    if not added:
        return files
    from passprice.addedfacts import asked

    held: dict[str, Mapping[str, Fact]] = {}
    for rel in sorted(head.files):
        kind, name = file_kind(rel)
        if kind in ("card", "draft", "routing", "stack"):
            read = _read(head, rel, kind, name)
            if read.facts is not None and not read.errors:
                held[rel] = read.facts
    registered = [file_kind(rel)[1] for rel in head.files if file_kind(rel)[0] == "source"]
    found = asked(held, registered, added, _quoted_figures, _carried(base, head))
    from passprice.addedfacts import another_cards, copied_words, moved

    cards = {rel: facts for rel, facts in held.items() if file_kind(rel)[0] == "card"}
    elsewhere = another_cards(cards, added)
    for key, ask in elsewhere.items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask
    # an added fact citing another card's place as its own (a plain copy: tests/test_fix166.py), asked once
    copied = copied_citations(cards, added)
    for key, other in copied.items():
        if key not in elsewhere:
            ask = copied_citation_ask(key[0], cards[key[0]][key[1]], other)
            found[key] = f"{found[key]}; {ask}" if key in found else ask
    # a copy's notes and [card] variant left as copied under figures it moved (issue 13)
    for key, ask in copied_words(cards, {rel: _card_table(head, rel) or {} for rel in cards}, added).items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask

    removed = [(f.path, c.path, c.old) for f in files for c in f.facts if c.old is not None and c.new is None]
    for key, ask in moved([(f.path, c.path, c.new) for f in files for c in f.facts if c.old is None
                           and c.new is not None], removed).items():
        found[key] = f"{found[key]}; {ask}" if key in found else ask
    if not found:
        return files

    def copy_of(key: tuple[str, str]) -> str | None:
        other = copied.get(key)
        return f"{_card_named(other[0])}'s {other[1]}" if other is not None else None

    return tuple(attrs.evolve(f, facts=tuple(attrs.evolve(c, asked=found.get((f.path, c.path)),
                                                          copied_from=copy_of((f.path, c.path))) for c in f.facts))
                 for f in files)


def _cited(fact: Fact) -> set[str]:
    """The source ids ``fact`` cites: its own and each figure input's of its derivation."""
    out = {fact.source} if fact.source is not None else set()
    if isinstance(fact.derivation, Derivation):
        out |= {i.source for i in fact.derivation.inputs if i.kind == "figure" and i.source is not None}
    return out


def _fresh_sources(base: Side, head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each changed or added fact's :attr:`FactChange.fresh_sources` set: the sources its new citation
    names that ``head`` registers and ``base`` does not, and its old citation (a changed fact's) did not name. An
    added fact is asked as a changed one is (left26b: walkthrough 30's new card, its bandwidth derived from a source
    record the same pull request added, read nothing to verify of it)."""
    added = {file_kind(p)[1] for p in head.files if file_kind(p)[0] == "source" and p not in base.files}
    if not added:
        return files
    out = []
    for f in files:
        facts = []
        for c in f.facts:
            if c.new is not None:  # an added fact too (left26b: a new card's bandwidth derived from a new record)
                fresh = tuple(sorted((_cited(c.new) - (_cited(c.old) if c.old is not None else set())) & added))
                if fresh:
                    c = attrs.evolve(c, fresh_sources=fresh)
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def _quotes_checked(head: Side, files: tuple[FileChange, ...], base: Side | None = None,
                    left: Lookups | None = None) -> tuple[FileChange, ...]:
    """``files`` with :attr:`FactChange.quote` set on each changed or added fact whose quoted locators (its own and
    its derivation inputs', each with the source it cites: :func:`passprice.sources._quoted_locators`) differ from the
    old fact's: :func:`passprice.sources.quote_check` of HEAD's fact against HEAD's stored excerpts
    (:func:`passprice.sources.stored_texts`), the one check ``audit`` makes, so the review says what ``audit`` of the
    same tree says (a new user's finding: NOT FOUND in audit, only "its locator quotes 4.89TB/s" in the review;
    tests/test_walk128.py). With ``base``, each checked fact's :attr:`FactChange.excerpts_edited`: the cited sources
    whose stored text for them (:func:`passprice.sources.excerpt_section`'s reading) differs on BASE, or that BASE
    stored none of; and a changed fact whose locators did not change is checked too when it cites such a source
    (a value moved, the excerpt edited to state it and re-pinned read "checked" against text the change wrote,
    tests/test_left131.py). HEAD's sources are read only when such a fact is there. The look-ups spend ``left``, the
    review's one :class:`passprice.sources.Lookups` (a fresh one when ``None``), in place: what they would look up is
    counted first, and past what it holds none is looked up and it is emptied, so that the rewritten excerpts' checks
    after them look up none either (:func:`passprice.sourcechange.source_changes`; tests/test_bound147.py). Raises
    nothing."""
    from passprice.sources import USABLE as _USABLE
    from passprice.sources import (
        Lookups,
        figures_quoted,
        load_source,
        quote_check,
        quote_cost,
        read_sources,
        stored_text,
        stored_texts,
    )
    from passprice.sources import _quoted_locators as quoted_locators

    def cited(fact: Fact) -> list[str]:
        return [sid for _, sid, _ in quoted_locators(fact) if sid is not None]

    def requoted(c: FactChange) -> bool:
        return (c.new is not None and (c.old is None or quoted_locators(c.old) != quoted_locators(c.new))
                and bool(quoted_locators(c.new)))

    changed = [c.new for f in files for c in f.facts if c.new is not None and quoted_locators(c.new)]
    if not changed:
        return files
    edited: frozenset[str] = frozenset()
    sources: dict[str, Any] | None = None
    if base is not None:
        sources = read_sources(head.root)[0]
        edited = _excerpts_edited(base, head, sources, {sid for fact in changed for sid in cited(fact)})

    def refigured(c: FactChange) -> bool:
        # a figure moved under quotes that did not: what they state is looked at again (a new user's 8 → 8.2 TB/s
        # under 'Peak Memory Bandwidth 8 TB/s' was asked, and passed once re-locked: tests/test_fix53w.py)
        return (c.new is not None and c.old is not None and bool({"value", "unit", "derivation"} & set(c.fields))
                and bool(figures_quoted(c.new, {sid: _USABLE for sid in cited(c.new)})))

    def wanted(c: FactChange) -> bool:
        return requoted(c) or refigured(c) or (c.new is not None and c.old is not None
                                               and bool(edited & set(cited(c.new))))

    asked = [c.new for f in files for c in f.facts if c.new is not None and wanted(c)]
    if not asked:
        return files
    if sources is None:
        sources = read_sources(head.root)[0]
    # one for the review, shared with its rewritten excerpts' checks: one a fact looked up 512 spans each
    # (tests/test_attack133.py), then the changed facts and the excerpts had one each (tests/test_bound147.py)
    left = Lookups() if left is None else left
    texts = stored_texts(head.root, sources, [sid for fact in asked for sid in cited(fact)])
    need = quote_cost(asked, texts)
    if need.spans > left.spans or need.chars > left.chars:
        # Past the bound, none is looked up and the review fails (Review.quotes_unchecked): looking up the first
        # 512 let a pull request spend them on junk quotes of facts sorting first, so that a later fact's NOT FOUND
        # read "not checked" and the review passed (tests/test_budget140.py).
        left.spans = left.chars = 0
    before: dict[str, StoredText | None] = {}  # BASE's stored text of each source an old fact cites, read once

    def stored_before(sid: str) -> StoredText | None:
        if sid not in before:
            side = base if base is not None else head
            try:
                before[sid] = stored_text(side.root, load_source(side.root, sid))
            except InputError:
                before[sid] = None
        return before[sid]

    def unchecked_now(c: FactChange, quote: QuoteCheck) -> tuple[str, ...]:
        # its old quotes could be looked up in a stored excerpt, its new ones cite one with none the old did not
        if c.old is None or not quote.unstored:
            return ()
        old_cited = {sid for _, sid, _ in quoted_locators(c.old) if sid is not None}
        checkable = quote_checkable(c.old, {sid: t for sid in sorted(old_cited)
                                            if (t := stored_before(sid)) is not None})
        # a source the old quotes did not cite, or whose stored text they were looked up in (its excerpt gone since)
        fresh = [name for name in quote.unstored if name not in old_cited or name in checkable]
        if not fresh or not checkable:
            return ()
        return tuple(unstored_why(name, texts.get(name)) for name in fresh)

    out = []
    for f in files:
        facts = []
        for c in f.facts:
            if c.new is not None and wanted(c):
                quote = quote_check(c.path, c.new, texts, left)
                c = attrs.evolve(c, quote=quote, excerpts_edited=tuple(sorted(edited & set(cited(c.new)))),
                                 unchecked_now=unchecked_now(c, quote))
            facts.append(c)
        out.append(attrs.evolve(f, facts=tuple(facts)))
    return tuple(out)


def _macs_read(fact: Fact) -> str | None:
    """For a fact in multiply-adds whose locator states its figure only in operations (FLOP or op, two a
    multiply-add: :func:`passprice.addedfacts.stated_with_unit`), how the one reads as the other: ``its locator's 67
    TFLOPS is 33.5 TMAC/s, two operations a multiply-add``; ``None`` otherwise (a locator stating it in MACs, or
    stating no such figure). A new user's ``vector`` 33.5 TMAC/s under ``'FP32 67 TFLOPS'`` was asked whether the
    place states 33.5 TMAC/s, the factor of two left to the reader (tests/test_fix166.py). Raises nothing."""
    from passprice.addedfacts import _in_macs, stated_with_unit
    from passprice.derivations import quantity

    try:
        mine = quantity(fact.amount, fact.unit)
    except (InputError, ValueError, OverflowError):
        return None
    if not any(name == "MAC" for name, _ in mine.dims) or not fact.locator:
        return None
    found = None
    for shown, _, value, dims, _ in stated_with_unit(fact.locator):
        if dims == mine.dims:
            if value == mine.value:
                return None  # stated in MACs itself
            continue
        as_macs, macs_dims = _in_macs(value, dims)
        if found is None and macs_dims == mine.dims and as_macs == mine.value:
            found = shown
    if found is None:
        return None
    return f"its locator's {escaped(found)} is {fact.describe()}, two operations a multiply-add"


def unstored_why(name: str, stored: StoredText | None) -> str:
    """Why a quote of source ``name`` is not checked, its stored text being ``stored`` (``None``: its record names no
    excerpt, or is not there), in the words :func:`passprice.sources.quote_check` gives it: ``NAME has no stored
    text``, or ``NAME's stored excerpt is unusable: WHY`` (:meth:`passprice.sources.StoredText.unusable`). Raises
    nothing."""
    why = stored.unusable() if stored is not None else None
    return f"{name} has no stored text" if why is None else f"{name}'s stored excerpt is unusable: {why}"


def quote_checkable(fact: Fact, texts: Mapping[str, StoredText]) -> frozenset[str]:
    """The sources of ``fact``'s quoted spans (its locator's and its derivation's inputs',
    :func:`passprice.sources._quoted_locators`) whose stored text in ``texts`` (by source id) is usable: where
    :func:`passprice.sources.quote_check` would look its quotes up. Looks nothing up. Raises nothing."""
    from passprice.sources import _quoted_locators, paged_spans

    out: set[str] = set()
    for _, sid, locator in _quoted_locators(fact):
        stored = texts.get(sid) if sid is not None else None
        if sid is not None and stored is not None and stored.flat is not None and paged_spans(locator):
            out.add(sid)
    return frozenset(out)


def copied_citations(cards: Mapping[str, Mapping[str, Fact]], added: Iterable[tuple[str, str]]
                     ) -> dict[tuple[str, str], tuple[str, str]]:
    """Each added card fact ``(file, fact path)`` of ``added`` whose own citation, source and locator as a place
    (:func:`passprice.addedfacts._place`: whitespace collapsed, look-alike letters read as Latin), is one a fact of
    another card file of ``cards`` (file → fact path → fact, HEAD's card files) cites as its own: the ``(file, fact
    path)`` of that other fact, a file the change adds no fact to first (the card copied), and that file's fact at the
    same path where it cites the place. A copied citation: the place states its figure of the other card, not
    necessarily of this one. An ``assumed`` fact cites a basis, not a figure read at the place (every real card's 512
    GiB ``host.capacity`` placeholder): left out. A new user's card copied from the H100 SXM5's file, only its name
    and vendor changed, was added with ``memory.capacity 80 GB`` under the H100's product-page column and nothing to
    verify of it (:func:`passprice.addedfacts.another_cards` asks only a copy citing a place of its own;
    tests/test_fix166.py). Linear in the facts ``cards`` holds. Raises nothing."""
    from passprice.addedfacts import _place

    wanted = [(rel, path) for rel, path in added if path in cards.get(rel, {})]
    if not wanted:
        return {}
    adding = {rel for rel, _ in wanted}
    holders: dict[tuple[str, str], dict[str, list[str]]] = {}  # own place -> file -> its fact paths citing it
    for rel in sorted(cards):
        for path, fact in cards[rel].items():
            place = _place(fact.source, fact.locator)
            if place is not None:
                holders.setdefault(place, {}).setdefault(rel, []).append(path)
    out = {}
    for rel, path in wanted:
        fact = cards[rel][path]
        place = _place(fact.source, fact.locator)
        if place is None or fact.provenance is Provenance.ASSUMED:
            continue
        held = holders.get(place, {})
        found = next(((r, p) for r, p in held.items() if r != rel and r not in adding), None) or next(
            ((r, p) for r, p in held.items() if r != rel), None)
        if found is not None:
            out[(rel, path)] = (found[0], path if path in found[1] else found[1][0])
    return out


def _card_named(rel: str) -> str:
    """A card file's card name: ``facts/cards/h100_sxm5_80gb.toml`` → ``h100_sxm5_80gb``."""
    return rel.rsplit("/", 1)[-1].removesuffix(".toml")


def copied_citation_ask(rel: str, fact: Fact, other: tuple[str, str]) -> str:
    """What a reviewer must verify of the added fact ``fact`` of card file ``rel`` whose citation is another card's
    (:func:`copied_citations`: ``other``, that card's file and fact path): ``a copied citation: it cites what
    h100_sxm5_80gb's memory.capacity cites: does nvidia-h100-product-page: … state 80 GB of what acme_x1
    describes?``, a derived fact asked of the figures its derivation reads there, as
    :func:`passprice.addedfacts.another_cards` asks it (:func:`passprice.addedfacts._asked_figure`). Raises
    nothing."""
    from passprice.addedfacts import _asked_figure, _place

    place = _place(fact.source, fact.locator)
    figure = _asked_figure(fact, place) if place is not None else fact.describe()
    return (f"a copied citation: it cites what {escaped(_card_named(other[0]))}'s {escaped(other[1])} cites: does "
            f"{escaped(fact.source or '')}: {escaped(fact.locator or '')} state {figure} of what "
            f"{escaped(_card_named(rel))} describes?")


def _excerpts_edited(base: Side, head: Side, sources: Mapping[str, Any], ids: Iterable[str]) -> frozenset[str]:
    """The sources of ``ids`` (HEAD's records, ``sources``) whose stored excerpt reads as another text for them on
    HEAD than on BASE (:func:`passprice.sources.excerpt_section` of each side's bytes: the source's own section),
    or that BASE stored none of (the record or its ``excerpt`` added, or re-pointed): what a quote found there was
    written by the same change. Raises nothing (a side whose record or file does not read counts as edited)."""
    from passprice.files import read_regular
    from passprice.sources import EXCERPT_BYTES, excerpt_section, load_source

    out = set()
    for sid in sorted(set(ids)):
        now = sources.get(sid)
        if now is None or now.excerpt is None:
            continue
        try:
            then = load_source(base.root, sid)
        except InputError:
            out.add(sid)
            continue
        if then.excerpt is None or then.excerpt != now.excerpt:
            out.add(sid)
            continue
        try:
            before = read_regular(base.root.path / then.excerpt, EXCERPT_BYTES)
            after = read_regular(head.root.path / now.excerpt, EXCERPT_BYTES)
        except (InputError, OSError):
            out.add(sid)
            continue
        if before != after and excerpt_section(before, sid) != excerpt_section(after, sid):
            out.add(sid)
    return frozenset(out)

def _ratio_bases(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`FactChange.ratio_basis` set on each changed ratio (unit ``1``) of a card file whose value
    moved and whose derivation, on either side, divides by the fact ``memory.bandwidth`` or whose note names it:
    HEAD's ``memory.bandwidth`` of that card (its value and unit, read from HEAD's bytes of the file), where it
    reads. Raises nothing."""
    from passprice.derivations import Derivation

    def names_bandwidth(fact: Fact | None) -> bool:
        if fact is None:
            return False
        d = fact.derivation
        if isinstance(d, Derivation) and any(i.fact == "memory.bandwidth" for i in d.inputs):
            return True
        return "memory.bandwidth" in (fact.note or "")

    wanted = {f.path for f in files for c in f.facts if f.kind == "card" and c.old is not None
              and c.new is not None and c.new.unit == "1" and c.old.amount != c.new.amount
              and (names_bandwidth(c.old) or names_bandwidth(c.new))}
    if not wanted:
        return files
    import tomllib

    out = []
    for f in files:
        basis: tuple[float, str] | None = None
        if f.path in wanted:
            try:  # read as every look a review takes at a side's file as plain TOML, capped (side_toml)
                data = head.files.get(f.path)
                table = side_toml(data, "card") if isinstance(data, bytes) else {}
                raw = table.get("memory", {}).get("bandwidth", {})
                value, unit = raw.get("value"), raw.get("unit")
                if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(unit, str):
                    basis = (float(value), unit)
            except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, InputError):
                basis = None
        if basis is None:
            out.append(f)
            continue
        out.append(attrs.evolve(f, facts=tuple(
            attrs.evolve(c, ratio_basis=basis) if c.new is not None and c.new.unit == "1" else c for c in f.facts)))
    return tuple(out)


def _moved_under_runs(head: Side, files: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with :attr:`FactChange.moved_with` set on each stack fact fitted again to the same runs (each run's
    figure as before) whose fit's errors moved: the card, checkpoint and routing records of ``files`` whose facts
    or content moved (a fact's value or unit; a checkpoint entry's content digest) and that one of its runs names
    (HEAD's ``registry/measurements``; a file that does not read names none). Left45: the RTX 4090's bandwidth
    1008 → 1010 GB/s and llamacpp-cuda-2405 re-fitted read ``overhead.pass 0 µs → 0 µs`` and three more unmoved
    facts as changes, as if its errors were typed by hand (slip 48). Raises nothing."""
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


def _carried(base: Side, head: Side | None = None) -> Callable[[str], Any]:
    """For a source id, what ``base`` recorded of it (:class:`passprice.addedfacts.Carried`): the figures named by
    its record file, by the registry document it names (``source.path``, when ``base`` holds its bytes or it lies in
    ``base``'s folder, at most :data:`BASIS_DOCUMENT_BYTES`) and by the locator and note of each fact of ``base``
    citing it (as its source, or a derivation figure's); ``None`` for an id ``base`` does not register, but for a
    registry source ``head`` adds whose document is a file ``head`` adds too (slip round 36: a WS1 copy citing a new
    ``ws2-design`` record whose document is the copy itself read "1 source added", nothing to verify): nothing, so
    each figure its basis names is asked. Each source and ``base``'s facts are read once, when first asked for."""
    from passprice.addedfacts import Carried, basis_terms

    facts: list[Fact] = []
    read = False
    done: dict[str, Any] = {}

    def texts_citing(source_id: str) -> list[str]:
        nonlocal read
        if not read:
            read = True
            for rel in sorted(base.files):
                kind, name = file_kind(rel)
                if kind in ("card", "draft", "routing", "stack"):
                    got = _read(base, rel, kind, name)
                    if got.facts is not None:
                        facts.extend(got.facts.values())
        out = []
        for fact in facts:
            if fact.source == source_id:
                out += [fact.locator or "", fact.note or ""]
            if isinstance(fact.derivation, Derivation):
                out += [i.locator or "" for i in fact.derivation.inputs
                        if i.kind == "figure" and (i.source or fact.source) == source_id]
        return out

    def carried(source_id: str) -> Any:
        if source_id in done:
            return done[source_id]
        record = base.files.get(f"sources/{source_id}.toml")
        if record is None:
            done[source_id] = None
            if head is not None and f"sources/{source_id}.toml" in head.files:
                from passprice.sources import load_source as load_head

                try:
                    document = load_head(head.root, source_id).path
                except InputError:
                    document = None
                if document is not None and document in head.files and document not in base.files:
                    done[source_id] = Carried(frozenset(), f"a record this change adds, naming {document}, which "
                                                          "this change adds too")
            return done[source_id]
        texts = [record[:BASIS_DOCUMENT_BYTES].decode("utf-8", "replace")]
        what = ["its record"]
        from passprice.sources import load_source

        try:
            path = load_source(base.root, source_id).path
        except InputError:
            path = None
        if path is not None:
            data = base.files.get(path)
            if data is None and base.info.revision is None:
                from passprice.registry import document_problem

                if document_problem(base.root, path) is None:
                    try:
                        with open(base.root.path / path, "rb") as handle:
                            data = handle.read(BASIS_DOCUMENT_BYTES)
                    except OSError:
                        data = None
            if data is not None:
                texts.append(data[:BASIS_DOCUMENT_BYTES].decode("utf-8", "replace"))
                what.append(f"the document {path}")
        citing = texts_citing(source_id)
        texts += citing
        what.append(f"{len(citing) // 2} fact{'s' if len(citing) // 2 != 1 else ''} citing it")
        terms = frozenset(key for text in texts for key in basis_terms(text))
        done[source_id] = Carried(terms, ", ".join(what[:-1]) + " and " + what[-1])
        return done[source_id]

    return carried


#: The bytes of a source's record or registry document :func:`_carried` reads at most.
BASIS_DOCUMENT_BYTES = 1 << 20


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
    :data:`RUN_LOCATOR_SHOWN` characters, the quote holding the run's figure kept whole: :func:`_cut_keeping`;
    left47: cut at the 160th character, ``row '| llama 8B … |    154.`` lost the figure), ``""`` for none."""
    if run is None:
        return ""
    locator = _cut_keeping(run.locator, RUN_LOCATOR_SHOWN, (run.tokens_per_s,))
    return f"; {run.tokens_per_s:,g} tokens/s, cited to {run.source_id}: {locator}"


#: The most added source records and checkpoint entries a review describes (:func:`added_records`); the rest are
#: listed by path, as any other file.
MAX_ADDED_RECORDS = 20


def added_records(head: Side, files: Sequence[FileChange],
                  recited: Mapping[str, Sequence[str]] | None = None,
                  noted: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """Each source record, routing record, checkpoint entry, card and measurement file ``files`` adds on ``head`` that
    reads there, by path: a card as :func:`added_card` says (its title and hypothetical mark, which its facts' rows
    do not show: walkthrough 30; the first :data:`MAX_ADDED_RECORDS` cards, counted apart), a routing record as
    ``routing record TITLE: E experts, k a token, for CHECKPOINTS; note: …``, a source as ``TITLE (BY, DATE), KIND,
    at WHERE; read: HOW``, a checkpoint entry as ``ARCH, N tensors, B of weights[, E experts, K a token]; origin:
    …`` (the first sentence of its ``origin``), a measurement file as :func:`measurements_added` says; the first
    :data:`MAX_ADDED_RECORDS`. One that does not read is left to the review's errors. A measurement file ``files``
    change is described too when ``recited`` holds runs of it to verify (:func:`runs_to_verify`, by path): ``N
    measured runs to verify in their sources: …`` (:func:`in_source`), and when ``noted`` holds runs of it whose
    ``note`` changed (:func:`runs_to_verify`'s ``noted``, by path): ``N run notes changed (listed: neither the fit
    nor a price reads a note): …`` (slip round 47)."""
    import tomllib

    from passprice.checkpoints import entry_origin, load_checkpoint
    from passprice.sources import load_source
    from passprice.tables import si

    out: dict[str, str] = {}
    recited = recited or {}
    noted = noted or {}
    cards = 0  # added cards are counted apart, so a change adding many leaves its sources described
    for f in files:
        if f.kind == "card" and f.status == "added":
            if cards < MAX_ADDED_RECORDS:
                described_card = added_card(head, f.path, f.name)
                if described_card is not None:
                    out[f.path] = described_card
                    cards += 1
            continue
        if len(out) - cards >= MAX_ADDED_RECORDS:
            break
        if f.status == "added" and f.kind == "other" and _is_measurement(f.path):
            described = measurements_added(head, f.path)
            if described is not None:
                asks = recited.get(f.path, ())
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                out[f.path] = described + (f"; {_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                                           + "; ".join(asks[:MAX_ADDED_RUNS]) + more if asks else "")
            continue
        if f.status == "changed" and f.kind == "other" and (f.path in recited or f.path in noted):
            parts = []
            asks = recited.get(f.path, ())
            if asks:
                more = f"; and {len(asks) - MAX_ADDED_RUNS:,} more" if len(asks) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(asks), 'measured run')} to verify {in_source(len(asks))}: "
                             + "; ".join(asks[:MAX_ADDED_RUNS]) + more)
            notes = [line for line in noted.get(f.path, ()) if not line.startswith("[source] ")]
            if notes:
                more = f"; and {len(notes) - MAX_ADDED_RUNS:,} more" if len(notes) > MAX_ADDED_RUNS else ""
                parts.append(f"{_n(len(notes), 'run note')} changed (listed: neither the fit nor a price reads a "
                             "note): " + "; ".join(notes[:MAX_ADDED_RUNS]) + more)
            # its [source] table's keys rewritten (:func:`source_table_changes`), old → new
            parts += [line for line in noted.get(f.path, ()) if line.startswith("[source] ")]
            out[f.path] = "; ".join(parts)
            continue
        if f.status != "added" or f.kind not in ("source", "checkpoint", "routing"):
            continue
        try:
            if f.kind == "routing":  # its scope and caveat, which its two facts' rows do not show (walkthrough 21)
                from passprice.routing import load_routing
                from passprice.scopes import scope_said

                routing = load_routing(head.root, f.name)
                router = (f"{routing.experts:,} experts, {routing.used:,} a token"
                          if routing.experts is not None and routing.used is not None else "any router")
                scope = scope_said(routing.checkpoints) if routing.checkpoints else "any checkpoint"
                note = f"; note: {routing.note}" if routing.note else ""
                out[f.path] = f"routing record {routing.title}: {router}, for {scope}{note}"
                continue
            if f.kind == "source":
                source = load_source(head.root, f.name)
                read = f"; read: {source.read}" if source.read else ""
                out[f.path] = f"{source.describe()}, {source.kind}, at {source.where()}{read}"
                continue
            header = load_checkpoint(head.root, f.name)
            origin = entry_origin(head.root, head.files[f.path])  # the document load_checkpoint parsed, if it did
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError):
            continue
        from passprice import ggml

        weights = sum(ggml.tensor_bytes(t.type_id, t.dims) for t in header.tensors if ggml.known(t.type_id))
        arch = header.architecture or "unknown architecture"
        experts = header.meta_int(f"{arch}.expert_count")
        used = header.meta_int(f"{arch}.expert_used_count")
        moe = f", {experts:,} routed experts ({used:,} a token)" if experts and used else ""
        first = origin.split(". ")[0].strip().rstrip(".")
        first = first if len(first) <= 300 else first[:299] + "…"
        out[f.path] = (f"{arch}, {len(header.tensors):,} tensors, {si(weights, 'B')} of weights{moe}"
                       + (f"; origin: {first}" if first else ""))
    return out


def added_card(head: Side, rel: str, name: str) -> str | None:
    """An added card ``rel`` (named ``name``) as the review describes it: ``card TITLE (VENDOR; VARIANT), marked
    hypothetical: N facts: A published, B measured, …`` (the mark only when HEAD's ``[card]`` says
    ``hypothetical = true``; each provenance strongest first, those it has); ``None`` when it does not read on
    HEAD (the review's errors say why)."""
    read = _read(head, rel, "card", name)
    if read.facts is None or read.meta is None:
        return None
    table = read.meta
    title = str(table.get("name") or name)
    about = "; ".join(str(table[k]) for k in ("vendor", "variant") if isinstance(table.get(k), str) and table[k])
    mark = ", marked hypothetical" if table.get("hypothetical") is True else ""
    counts = {p: sum(1 for fact in read.facts.values() if fact.provenance is p) for p in Provenance}
    by = ", ".join(f"{n:,} {p.value}" for p, n in counts.items() if n)
    return (f"card {printable_title(title)}" + (f" ({printable_title(about)})" if about else "") + mark
            + f": {_n(len(read.facts), 'fact')}" + (f": {by}" if by else ""))


def printable_title(text: str) -> str:
    """A card's title, vendor or variant as a review line shows it: as written when every character prints, else
    its ``repr`` (:func:`passprice.tables.printable`), cut to 120 characters."""
    from passprice.tables import printable

    shown = printable(text)
    return shown if len(shown) <= 120 else shown[:119] + "…"


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
    stacks: set[str] | None = None, noted: list[str] | None = None,
) -> list[str]:
    """What a reviewer must verify of the runs of the measurement file ``rel`` HEAD holds (BASE too, or the change
    adds it: each of its runs is then added, slip round 34), by run id, one line a question: a run added to it whose
    place does not state its figure (:func:`_added_run_asks`), a run cited anew
    (its source or locator changed: does the new place state its tokens/s?), whose setting (stack, card, checkpoint,
    batch, positions, routing) moved under an unchanged citation (slip round 34), or whose tokens/s moved under an
    unchanged citation (more firmly when the locator quotes the old figure and not the new, as
    :attr:`FactChange.to_verify` asks of a fact). A measured run is a fact a stack is fitted from: its locator
    rewritten to quote another row's 90.02 tokens/s over the run's 100.02, or the file's 17 runs re-attributed to
    another source record, read "1 other file changed", nothing to verify, and ``check`` passed (slip round 32).
    A run under an id BASE does not hold is compared with the run BASE held at its setting (stack, card,
    checkpoint, batch, positions, routing) under an id HEAD does not hold (``ID (was OLD)``), else with a run BASE
    held there in another file under an id no file of HEAD holds (moved and renamed at once: ``ID (was OLD in
    FILE)``), else asked as added to the file. ``read_runs``: the runs of each measurement file already read
    (``None``: it does not read), kept across the calls of one review (a change to 100 measurement files read each
    other file again for each, 11,326 reads, 6.7 of a review's 8.1 s, attack round 41). Empty when a side does not
    read (the review's errors say why). ``stacks``, when given, gains the stack of each run asked (and the stack a
    run's setting moved from): the stacks fitted from a run to verify (:attr:`Diff.on_recited_runs`). A run's
    identity as published, its ``build``, ``test`` or ``date`` (:data:`RUN_IDENTITY`), changed is asked as its
    citation is, beside any other move (``ID's build changed (… → …) but its citation did not: does … state N
    tokens/s for that build?``): the run a stack is fitted from is then another run (slip round 47: build, test and
    date rewritten read "1 other file changed; no lock affected", the lock under the stack unaffected). ``noted``,
    when given, gains a line for each run whose ``note`` changed (``ID's note changed: old → new``): listed, never
    asked, since neither the fit nor a price reads it. Raises nothing."""
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

    def ask(run: Run, line: str, was: Run | None = None) -> None:
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
                if asks:
                    ask(run, f"{name} added: " + "; ".join(asks))
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
                     f"{_run_note_stale(was, run)}")
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
            quoted = _quoted_figures(run.locator)
            moved = (f"{name}'s tokens/s moved ({count(was.tokens_per_s)} → {figure}, "
                     f"{relative_move(was.tokens_per_s, run.tokens_per_s)}"
                     + "".join(f"; {move}" for move in identity) + ") but its citation did not")
            if _figure(was.tokens_per_s) in quoted and _figure(run.tokens_per_s) not in quoted:
                ask(run, f"{moved}, and the locator quotes {was.tokens_per_s:g}: {where}{_run_note_stale(was, run)}")
            else:
                ask(run, f"{moved}: does {where} say {figure}?{_run_note_stale(was, run)}")
        elif identity:
            # Another build, test or date under its citation: the figure is another run's (slip round 47).
            moved_keys = [key for key in RUN_IDENTITY if getattr(was, key) != getattr(run, key)]
            keys = (", ".join(moved_keys[:-1]) + " and " if len(moved_keys) > 1 else "") + moved_keys[-1]
            ask(run, f"{name}'s {keys} changed ({'; '.join(identity)}) but its citation did not: does {where} state "
                     f"{figure} for that {keys}?")
    return out


def _run_note_stale(was: Run, run: Run) -> str:
    """``; its note still states 100.02, the tokens/s it replaces: is the note this figure's?`` for a run whose
    tokens/s moved under a note left as it was that states the old figure and not the new one (as a fact's note is
    asked, :attr:`FactChange.to_verify`): a corrected run 100.02 -> 110.02 tokens/s kept its note's "0.9 % of the
    1.28 s a round took (1 x 128 / 100.02)", asked nothing of it (tests/test_fix179.py); ``""`` otherwise. The note's
    figures are read as a locator's are (:func:`_quoted_figures`: bare numbers too, none of a name or setting).
    Raises nothing."""
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
    """The figures ``locator`` (a run's) quotes between single quotes (:func:`passprice.sources.quoted_spans`; a
    number outside them, ``llama2-7b table, row '…'``'s 7, is a name, not a figure the document states), in the order
    a reviewer reads them: those in tokens per second first (:func:`_figures_per_second`: a ``./main`` line quotes
    ms per token before them, left41; smaller first, and no other figure after them), else the others nearest the
    run's ``tokens_per_s`` first (by ratio; ties smaller first), so a row's
    own throughput heads the list (LMDeploy's row ``| 1 | 1 | 1 | 128 | 100.02 | 76.55 | 0.011 | …`` for a run of
    100 tokens/s reads ``100.02, 128, 76.55, 1, 0.011``, not ``0.009, 0.01, 0.011, 1, 7``: cite67); a locator that
    quotes nothing is read whole. Empty when it quotes no figure. The first 10,000 characters are read. Raises
    nothing."""
    import math

    from passprice.sources import quoted_spans

    spans = quoted_spans(locator) or [locator[:10_000]]
    rates: set[float] = set().union(*(_figures_per_second(s) for s in spans))
    rest: set[float] = set().union(*(_quoted_figures(s) for s in spans)) - rates
    own = tokens_per_s if tokens_per_s > 0 and math.isfinite(tokens_per_s) else 1.0

    def distance(x: float) -> tuple[float, float]:
        return (abs(math.log(x / own)) if x > 0 else math.inf, x)

    return sorted(rates) or sorted(rest, key=distance)


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
    quoted = _quoted_figures(run.locator)
    if _figure(run.tokens_per_s) not in quoted:
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
    file it adds marked renamed (:attr:`FileChange.renamed`: the removed one names the added one, the added one the
    removed one), each file paired once, in path order: a measured runs' file renamed read "removed" and "added",
    with nothing linking the two (slip round 51). Raises nothing."""
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


def checkpoint_renames(files: Sequence[FileChange]) -> tuple[FileChange, ...]:
    """``files`` with each checkpoint entry BASE has and HEAD lacks whose content digest (:attr:`FileChange.content`)
    one HEAD adds has marked renamed (:attr:`FileChange.renamed`, both ways), each paired once, in path order: an
    entry renamed (``git mv``, its ``[entry] name`` set) read "1 checkpoint entry added; 1 checkpoint entry removed"
    with the same content on both lines, where ``reproduce`` says it is renamed (tests/test_fix154.py). Raises
    nothing."""
    gone = [f for f in files if f.kind == "checkpoint" and f.status == "removed" and f.content[0] is not None]
    added = [f for f in files if f.kind == "checkpoint" and f.status == "added" and f.content[1] is not None]
    pairs: dict[str, str] = {}
    for old in gone:
        new = next((g.path for g in added if g.path not in pairs.values() and g.content[1] == old.content[0]), None)
        if new is not None:
            pairs[old.path] = new
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


def _unrooted(side: Side, lines: Sequence[str]) -> tuple[str, ...]:
    """``check``'s ``lines`` on ``side`` as a review shows them: a git revision's files are read from a temporary
    folder, gone when ``diff`` ends, so a path in it is written relative to the registry (``facts/cards``) and the
    folder itself as the revision (its commit id, 12 digits). A review of a revision where a card was renamed said
    "card 'a40': not found in /tmp/passprice-diff-1_lpfmmh/facts/cards; … copy …/a40.toml into
    /tmp/passprice-diff-1_lpfmmh/facts/cards to use it here" (attack round 24). A folder or the work tree is shown
    as it is."""
    if side.info.revision is None:
        return tuple(lines)
    tops = {str(side.root.path), os.path.realpath(side.root.path)}
    out = []
    for line in lines:
        for top in tops:
            line = line.replace(top + os.sep, "").replace(top, side.info.revision[:12])
        out.append(line)
    return tuple(out)


#: The most of ``check``'s warnings on HEAD a review lists (:attr:`Diff.head_warnings`); the rest are counted, and
#: ``passprice check`` lists every one. As many as check names of the temporary files a killed write left
#: (:data:`passprice.registry.MAX_TEMPORARY_LINES`).
MAX_HEAD_WARNINGS = 20

#: The most problem lines of each kind a review lists (:attr:`Diff.check_shown`: what else ``check`` fails on
#: HEAD; :meth:`Diff.errors_shown`: the errors of changed files that do not read; in JSON ``head_check`` and
#: ``head_unreadable`` too); the rest are counted. 3,000 invalid source records made a 2.4 MB pull-request comment
#: (15,000 problem lines, each listed twice), past GitHub's 65,536 characters (issue 13).
MAX_HEAD_PROBLEMS = 20


def _facts_quotes(n: int) -> str:
    """``1 fact's quotes``, ``N facts' quotes``."""
    return f"{n:,} fact's quotes" if n == 1 else f"{n:,} facts' quotes"

#: The facts a refusal line of the review names when their quotes were lost or not checked (the rest counted).
MAX_SHOWN_QUOTES = 10

#: The most files a pull-request comment lists under "Other files changed" (source records, measurements …; the
#: text review lists each): 300 source records added made a comment of 11 KB of names (GitHub takes 65,536 chars).
MAX_OTHER_FILES = 20
#: The most serving files a pull-request comment lists under "Servings" (each added one described, slip round 28);
#: the rest are counted and the text review lists each: 300 serving files added made a comment of 96 KB, past the
#: 65,536 characters GitHub takes (44 KB of paths alone before they were described).
MAX_SERVING_FILES = 50
#: The most characters of changed facts' citations, notes and derivations a pull-request comment shows below its
#: facts table; the rest are counted and the text review shows each: 207 facts given 3,900-character notes made a
#: comment of 884 KB (857 KB of it these items), past the 65,536 characters GitHub takes (attack round 32).
MAX_FACT_DETAILS = 30_000
#: The most characters of added records' descriptions (:func:`added_records`) a pull-request comment shows, in all
#: and each, and of checkpoint entries' changed claims (:func:`claims_changed`: ``entry.imported_by`` of 1,000,000
#: ``<`` made a 4 MB comment, exit 0); past them a text is cut (it says how long it is) or left to the text review,
#: which shows each whole. A routing record's own ``note`` (no length bound but the file's 256 KiB) of 200,000 ``<``
#: made a comment of 801 KB, with 20 source records within their schema's bounds (title, publisher and ``read`` of
#: ``@``) 1.18 MB (attack round 34b).
MAX_ADDED_DETAILS = 20_000
MAX_ADDED_DETAIL = 2_000
#: The most rows of a pull-request comment's facts table (every fact weaker or to verify first); the rest are
#: counted and the text review lists each: 100 card files added made a table of 1,200 rows, 85 KB (attack round 32).
MAX_FACT_ROWS = 200
#: The most characters of those rows: 130 card files added under 153-character names made 200 rows of 45 KB, and a
#: comment of 81 KB with the facts' details (attack round 38).
MAX_FACT_TABLE = 20_000


#: The heading the review lists the duplicate locks of a pair the change touches under (the text's; the Markdown's
#: capitalised): ``check`` counts them among its warnings on HEAD (:meth:`Diff.head_warnings_count`).
DUPLICATES_HEADING = "locks duplicating another"


def duplicates_elsewhere(d: Diff) -> str:
    """The line closing the list of ``check``'s warnings on HEAD when some of them, the duplicate locks of a pair the
    change touches, are listed under :data:`DUPLICATES_HEADING` instead: ``and 1 more under locks duplicating
    another``, so the list and the summary's count (:meth:`Diff.head_warnings_count`) agree. Raises nothing."""
    return f"and {_n(len(d.duplicates), 'more warning')} under {DUPLICATES_HEADING}"


def _duplicates(head: Side, changed: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines of :func:`passprice.check.duplicate_lines` on HEAD's lock files that read: those of each pair one of
    whose files the change adds or changes (``changed``: paths relative to the root), which the review names under
    their own heading (a lock copied under another name passed the review without a word), then the others, which
    ``check`` warns of on HEAD as it does of them."""
    from passprice.check import duplicate_lines

    touched = set(changed)
    locks = [(head.root.path / rel, lock) for rel, lock in sorted(_locks(head).items(), key=lambda i: lock_order(i[0]))
             if lock is not None]
    found = duplicate_lines(head.root, locks)
    return (tuple(line for pair, line in found if touched & set(pair)),
            tuple(line for pair, line in found if not touched & set(pair)))


def _lock_links(head: Side) -> tuple[str, ...]:
    """``check``'s warning of each symbolic link of HEAD's ``locks/`` that is a second name of a lock file beside it
    (:func:`passprice.check.alias_lines`, in its words), which the review, as ``check``, does not read as a lock of
    its own (:func:`passprice.gitread.lock_alias`). Raises nothing."""
    from passprice.check import alias_lines

    locks = head.root.locks
    try:
        with os.scandir(locks) as entries:
            if not any(entry.is_symlink() for entry in entries):
                return ()  # no link: nothing listed twice
    except OSError:
        return ()
    return tuple(alias_lines(head.root, head.root.scan(locks, ".lock.toml")).values())


def _given(data: bytes) -> Callable[[], bytes]:
    """A reader of bytes already read (:func:`passprice.snapshot.file_bytes`'s ``read``)."""
    return lambda: data


def unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """The lines ``passprice check`` would fail HEAD on for its added or changed lock files (``changed``: paths
    relative to the root) that do not reproduce from their own pinned inputs with HEAD's code
    (:func:`passprice.reproduce.reproduce`): a lock whose recorded price, ``rests_on`` or floors were edited by hand
    and its digest recomputed reads, and priced with HEAD's inputs it may even agree with HEAD's facts, but its
    pinned facts do not give what it records. Only when HEAD is priced with the running code (its pricing model is
    this passprice's); a lock that does not read is already a problem of :func:`passprice.check.review_files`.

    A HEAD priced by its own code has its locks priced from their pins by that code, in its own process
    (:func:`passprice.sidecode.price_pins`), and compared here; a lock its code cannot price so fails. Without it,
    a lock's recorded price set by hand to HEAD's price of a raised ``streams.read`` (1,013.4 tokens/s), its pins
    left as BASE pinned them (0.9333, 996.1 tokens/s), beside a price-neutral edit of ``src/passprice``, read "re-pin
    …, re-locked" (exit 0) where ``check`` fails it (slip round 29)."""
    if not head.code.running and head.code.folder is not None:
        return _own_code_unreproduced(head, changed)
    from passprice.reproduce import reproduce

    out = []
    # A lock of one content (its own digest, checked when read: everything it holds but itself) is reproduced once,
    # whatever its file's name or bytes: 1,000 copies of a lock, each of its own bytes, were each reproduced (issue
    # 13, scale88). The line names each file (``rep.verdict(rel)``).
    reproduced: dict[str, Any] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        rep = reproduced.get(lock.info.digest) if lock.info.digest else None
        if rep is None:
            rep = reproduce(head.root, lock, with_today=False)
            if lock.info.digest:
                reproduced[lock.info.digest] = rep
        if not rep.equals:
            out.append(f"{rel}: {rep.verdict(rel)}")
    return tuple(out)


def _own_code_unreproduced(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """:func:`unreproduced` for a HEAD priced by its own code: for each added or changed lock file of ``changed``,
    the line of :func:`_unpinned_records` (its recorded provenance is not its pins'), else the line saying its pinned
    inputs, priced with HEAD's code, do not give a figure it records (:func:`passprice.reproduce.moved` over
    :meth:`~passprice.locks.Lock.compared`), or that HEAD's code could not price them (it failed, or lacks the calls
    :data:`passprice.sidecode.PINNED_DRIVER` makes): a lock not reproduced is no lock that passes."""
    from passprice.reproduce import moved
    from passprice.sidecode import price_pins, shown_answer

    locks: dict[str, Lock] = {}
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            locks[rel] = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
    recorded = {line.split(": ", 1)[0]: line for line in _unpinned_records(head, locks)}
    priced = price_pins(head.root, head.code, [rel for rel in locks if rel not in recorded])
    out = []
    for rel, lock in locks.items():
        if rel in recorded:
            out.append(recorded[rel])
            continue
        answer = priced.get(rel, {})
        now = answer.get("price")
        if not isinstance(now, Mapping):
            # Not priced from its pins by HEAD's code (it failed, or is older than the calls it needs): no
            # reproduction, no pass. A HEAD whose find_checkpoint raised read "re-locked" on a forged price.
            why = answer.get("error", "no answer")
            out.append(f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code: they were not "
                       f"priced ({why}); check it with HEAD's code (passprice check, run from HEAD's src), then "
                       f"re-lock it with that code: passprice lock --update -o {shell_word(rel)}")
            continue
        diffs = moved(lock.price, now, lock.compared())
        if not diffs:
            continue
        first = diffs[0]
        if "refusal" in now:
            what = f"its pinned inputs are refused ({shown_answer(now['refusal'])})"
        else:
            what = (f"first: {first.field}: {_shown_figure(first.recorded)} recorded, {_shown_figure(first.now)} from "
                    "its pins")
        out.append(
            f"{rel}: does NOT reproduce from its own pinned inputs with HEAD's own code ({what}): its recorded price "
            "is not what its pinned facts give (the lock was edited by hand, its digest recomputed, or written by "
            "other code than HEAD's); restore it, then re-lock it with HEAD's code: passprice lock --update -o "
            f"{shell_word(rel)}"
        )
    return tuple(out)


def _shown_figure(value: Any) -> str:
    """A recorded figure as a reproduction line shows it: a float to every digit (``repr``), a table as
    ``changed``, anything else as text of at most :data:`passprice.sidecode.MAX_ANSWER` characters."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict | list):
        return "changed"
    from passprice.sidecode import shown_answer

    return shown_answer(str(value))  # HEAD's own code answers what it likes: a text of any length


def _unpinned_records(head: Side, changed: Iterable[str]) -> tuple[str, ...]:
    """For a HEAD priced by its own code (so :func:`unreproduced` cannot re-price its locks from their pins with the
    running code): the lines for its added or changed lock files whose recorded price says it rests on a fact at
    another provenance than the fact the lock pins there, a check of the file's own data that no pricing model
    decides. A lock whose floor and recorded ``rests_on`` were loosened by hand to ``assumed`` (its pin still
    ``measured``, its digest recomputed) beside a price-neutral edit of ``src/passprice`` read "re-locked, floors
    loosened" (exit 0; slip round 28), where the same lock without the code change fails as not reproducing."""
    out = []
    for rel in changed:
        if file_kind(rel)[0] != "lock":
            continue
        try:
            lock = read_lock(head.root.path / rel, head.root.schema)
        except InputError:
            continue
        recorded: dict[str, Any] = dict(lock.price.get("rests_on", {}))
        expected = lock.price.get("expected")
        if isinstance(expected, Mapping):
            recorded.update(expected.get("rests_on", {}))
        for path, provenance in sorted(recorded.items()):
            pinned = lock.facts.get(path)
            if pinned is not None and pinned.provenance.value != provenance:
                out.append(
                    f"{rel}: does NOT reproduce from its own pinned inputs: its price records {path} as {provenance}, "
                    f"and the lock pins {path} {pinned.provenance.value}: the lock was edited by hand (its digest "
                    f"recomputed); restore it, then re-lock it: passprice lock --update -o {shell_word(rel)}"
                )
                break
    return tuple(out)


def diff(root: Root, base: str | None = None, head: str | None = None) -> Diff:
    """Compare ``base`` with ``head``, each a git revision of the checkout ``root`` lies in, or a folder holding
    ``facts/`` and ``registry/``; ``base`` defaults to the merge base of ``HEAD`` with ``main`` (then
    ``origin/main``, ``master``, ``origin/master``, else ``HEAD``), ``head`` to ``root`` itself (the work tree).

    Raises :class:`InputError` for a folder that is not a passprice root, a revision asked of a folder that is not a
    git checkout (or of the embedded facts), a revision git does not know, or a running package whose list of
    pricing models does not read (:func:`passprice.modelhistory.known_count`, as ``price``, ``check`` and
    ``reproduce`` refuse it: a review that cannot tell an upgrade of the code from a forged lock passes nothing)."""
    from passprice.modelhistory import known_count

    known_count()  # the shipped list unreadable, a folder or damaged: one line naming it, exit 2 (issue 13, left38)
    # Each side's own code is started once and answers every ask of this review; stopped when it returns or raises.
    with conversations(), contextlib.ExitStack() as stack:
        stack.enter_context(gitread.failing_git(root.path))
        checkout: list[Checkout] = []

        def git() -> Checkout:
            if root.embedded:
                from passprice.registry import outside_registry

                raise outside_registry(
                    root, "diff compares revisions of your registry's git checkout (or two folders given: diff A B)"
                )
            if not checkout:
                checkout.append(Checkout.of(root.path))
                stack.enter_context(gitread.one_batch(checkout[0].top))  # one cat-file for every blob of both sides
            return checkout[0]

        def open_side(ref: str | None, default: str | None) -> Side:
            role = "BASE" if default is None else "HEAD"
            if ref is not None and is_folder(ref):
                _not_also_a_revision(ref, root, git)
                folder = Path(ref).resolve()
                if not _is_root(folder):
                    raise InputError(f"{ref}: not a passprice root (it needs facts/ and registry/ folders)")
                info = SideInfo(str(ref), folder=str(folder))
                files = folder_files(folder)
                refuse_lockless(f"{role} {ref}", files)
                return Side(info, Root(folder), files, code_of(gitread.sized_code(code_folder(folder))),
                            installs=_installs(folder))
            if ref is None and default == "work tree":
                if root.embedded:
                    git()  # the embedded facts have no work tree: say so as a revision would
                with contextlib.suppress(InputError):  # a work tree outside git has no index to look in
                    git()
                if checkout:
                    checkout[0].submodules()  # one not checked out is an empty folder: refused by name, not read
                info = SideInfo("work tree", folder=str(root.path))
                files = folder_files(root.path)
                refuse_lockless(f"{role} work tree", files)
                return Side(info, root, files, code_of(gitread.sized_code(code_folder(root.path))),
                            installs=_installs(root.path), checkout=checkout[0] if checkout else None)
            if ref is None:
                sha, label = git().default_base()
            else:
                sha = git().commit(ref)
                label = sha[:12] if sha.startswith(ref.lower()) else f"{ref} ({sha[:12]})"
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="passprice-diff-")))
            stack.enter_context(cache.unkept(tmp))

            def judged(read: Mapping[str, bytes]) -> None:
                refuse_lockless(f"{role} {label}", read)
                if opened:  # HEAD, once BASE is open: refused by locks that surely do not read before it is written
                    refuse_unread_before_writing(opened[0], label, tmp, read)

            files = git().materialize(sha, tmp, judge=judged)
            code = {p: d for p, d in git().materialize(sha, tmp, (CODE,)).items() if p.endswith(".py")}
            if code:  # what its build installs beside the code (sidecode.code_changes compares it)
                git().materialize(sha, tmp, BUILD_FILES)
            if default == "work tree":  # HEAD: what the review reads must be what a checkout of it reads
                # the documents and stored excerpts sources name too: audit reads each excerpt a checkout holds, and
                # a rule re-encoding sources/excerpts/cite102-excerpt.txt read "no changes" (tests/test_attack121.py)
                named = sorted(n for n in (_named_by_sources(files) | _excerpts_named(files)) - set(files)
                               if _plain_inside(n))
                rewritten = git().rewrites(sha, [*files, *code, *named], named)
                if rewritten:
                    raise InputError.of(rewritten)
            exported = sorted(n for n in (*files, *(_named_by_sources(files) | _excerpts_named(files)))
                              if n.split("/", 1)[0] in ("facts", "locks", "sources") and _plain_inside(n)
                              ) if default == "work tree" else []
            return Side(SideInfo(label, revision=sha), Root(tmp), files, code_of(code_folder(tmp) if code else None),
                        git().documents(sha, _named_by_sources(files) | _excerpts_named(files)),
                        git().documents(sha, install_names(git(), sha)),
                        checkout=git(), exports=git().exports(sha, exported) if exported else {})

        opened: list[Side] = []  # BASE, once open
        base_side = open_side(base, None)
        opened.append(base_side)
        head_side = open_side(head, "work tree")
        head_side = attrs.evolve(head_side, code=kept_apart(base_side.code, head_side.code))
        return compare(base_side, head_side)


def install_names(checkout: Checkout, commit: str) -> tuple[str, ...]:
    """:data:`INSTALL_FILES` and the paths (from the root) of the entries of :data:`WORKFLOWS` at ``commit``."""
    spec = f"{checkout.prefix}{WORKFLOWS}/"
    try:
        listing = _run_git(checkout.top, ["--literal-pathspecs", "ls-tree", "-z", "--name-only", "--full-tree", commit,
                                          "--", spec])
    except subprocess.CalledProcessError:
        listing = b""
    found = [e[len(checkout.prefix):] for e in os.fsdecode(listing).split("\0") if e.startswith(spec)]
    return tuple(dict.fromkeys([*INSTALL_FILES, *sorted(found)]))


def _installs(folder: Path) -> dict[str, str]:
    """The identity of each of :data:`INSTALL_FILES` and each file of :data:`WORKFLOWS` in ``folder``, as
    :meth:`Checkout.documents` gives a revision's: its bytes' digest (read within the cap on a passprice file);
    ``unread`` for one there that is no regular file within the cap (a link, a FIFO, past the cap), so it shows as
    changed; none when nothing is there."""
    from passprice.sourcechange import document_digest

    out = {}
    try:
        found = sorted(f"{WORKFLOWS}/{name}" for name in os.listdir(folder / WORKFLOWS)
                       if not os.path.isdir(folder / WORKFLOWS / name))  # git lists a folder as no blob
    except OSError:
        found = []
    for rel in dict.fromkeys([*INSTALL_FILES, *found]):
        try:
            out[rel] = document_digest(gitread.read_sized(folder / rel))
        except InputError:
            if os.path.lexists(folder / rel):
                out[rel] = "unread"
    return out


def _not_also_a_revision(ref: str, root: Root, git: Callable[[], Checkout]) -> None:
    """Refuse a name (``main``, ``origin/main``) that is both a folder here and a revision of the checkout, as git
    refuses an ambiguous argument: which side was meant decides what the review shows. A name written as a path
    from here or from the top (``./main``, ``../x``, ``/x/main``) is a folder. ``origin/main`` with a slash was taken
    for a folder whenever one was there: a pull request adding a folder ``origin/main/`` (a copy of its own registry)
    made CI's ``passprice diff origin/$BASE_REF`` compare the pull request with itself, "no fact changed" for any
    change (slip round 28). Raises :class:`InputError`."""
    if root.embedded or os.path.isabs(ref) or ref.split("/")[0] in (".", "..") or ref.split(os.sep)[0] in (".", ".."):
        return
    try:
        sha = git().commit(ref)
    except InputError:
        return  # no revision of that name (or no checkout here): the folder it is
    # The ref the name is, spelled so git reads it alone: a tag named ``registry`` beside the folder was advised as
    # ``heads/registry``, which names nothing (attack round 51); a branch is ``heads/NAME``, a tag ``tags/NAME``.
    full = git().full_name(ref)
    revision = (None if ref.startswith("refs/") else full.removeprefix("refs/") if full is not None and full.startswith(
        ("refs/heads/", "refs/tags/")) else full if full is not None else None)
    spelled = f"{revision} (or the commit id)" if revision is not None else "the commit id"
    raise InputError(
        f"{ref}: names both a folder here and the revision {sha[:12]} of the git checkout; write ./{ref} for the "
        f"folder, or {spelled} for the revision"
    )


# --- rendering -----------------------------------------------------------------------------------------------------


def show(fact: Fact | None) -> str:
    """A fact's value as written with its unit (:meth:`Fact.describe`), ``–`` for none."""
    return "–" if fact is None else fact.describe()



def _shorts(lock: Any) -> tuple[str, str]:
    """A lock's tokens/s before and after, as :meth:`PriceSide.short` gives them, with more decimals when one decimal
    shows two different prices alike (a fact recomputed moved 10,354.4 by +4.0e-05 %: the row read "10,354.4 →
    10,354.4 ❌ price moved", session 9's walkthrough): the fewest decimals, up to 17, that tell them apart."""
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


def _moved_cancelling(c: FactChange) -> str:
    """For a fact whose derivation input moved where that input cancels out of the formula (the H200's ``scale``,
    ``lanes * (vector / (lanes * lane_rate))``, lanes 16896 → 20000: the same 33.5 Tcycle/s), ``audit``'s
    `` — lanes cancels (+1, −1): its figure does not move scale`` (:func:`passprice.audit.cancels_text`); else
    empty."""
    from passprice.audit import cancelled, cancels_text
    from passprice.derivations import Derivation

    if c.old is None or c.new is None:
        return ""
    old, new = c.old.derivation, c.new.derivation
    if not isinstance(old, Derivation) or not isinstance(new, Derivation):
        return ""
    was = {i.name: (i.amount, i.unit) for i in old.inputs}
    now = {i.name: (i.amount, i.unit) for i in new.inputs}
    if not any(was.get(name) != now.get(name) for name, _ in cancelled(c.new)):
        return ""
    return cancels_text(c.path, c.new)


def _recomputed_shift(lock: LockImpact) -> str | None:
    """A lock resting on derived facts that do not follow, priced again with them recomputed
    (:attr:`LockImpact.recomputed`): ``tokens/s 996.1 → 996.2 (+0.008243 %), as HEAD wrote it +1.875 %, once
    streams.read (0.9162), streams.append (0.8487) follow from their inputs`` (and the expected price under a
    re-fitted stack), or why it could not be; ``None`` for a lock resting on none."""
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


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100.0 * x:+.4g} %"


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
    moved off a stored excerpt (:attr:`FactChange.unchecked_now`), said on its line beside its provenance (a
    stronger one read as the change's only headline, tests/test_fix166.py); empty otherwise."""
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
    lock file edited by hand (:attr:`LockImpact.recorded_edited`) BASE's → HEAD's file's figure, ``(edited by
    hand)``."""
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


def _derivation_cites(derivation: Derivation, own: str | None) -> dict[str, Any]:
    """A derived fact's derivation as a lock's ``cites`` entry gives it in ``--json``: ``{"formula", "inputs"}``,
    each input ``{"name", "value", "unit", "fact", "source", "locator", "constant"}`` (``value`` and ``unit`` as
    written; a figure's ``source`` the fact's own, ``own``, where it names none; ``null`` where it does not apply),
    in the order the formula names them."""
    return {"formula": derivation.formula, "inputs": [
        {"name": i.name, "value": i.amount, "unit": i.unit, "fact": i.fact,
         "source": (i.source or own) if i.kind == "figure" else None, "locator": i.locator, "constant": i.constant}
        for i in derivation.in_formula_order()]}


def _input_cite(i: Input, own: str | None) -> str:
    """One derivation input as a ``cites`` line names what it rests on, its value as written first: ``bandwidth
    4.89 TB/s: fact memory.bandwidth``, ``dot 4.48 TB/s: SOURCE, LOCATOR…`` (the fact's own source, ``own``, where
    it names none; the locator cut at a word to :data:`INPUT_CITE_CHARS`, the quote holding the input's figure kept
    whole: :func:`_cut_keeping`), ``bits 8: constant``."""
    head = f"{i.name} {i.shown()}"
    if i.kind == "fact":
        return f"{head}: fact {i.fact}"
    if i.kind == "constant":
        return f"{head}: constant"
    source = i.source or own or "(no source)"
    # left47: the quote holding the input's figure is kept whole, as a runs line's is (left46)
    return f"{head}: {source}" + (f", {_cut_keeping(i.locator, INPUT_CITE_CHARS, (i.amount,))}" if i.locator
                                  else "")


#: What may follow a figure :func:`_cut_keeping` reads (:data:`passprice.textchange.NUMBER`): a percentage's ``%``
#: (``90%`` is 0.9).
_PERCENT_AFTER = r"(\s?%)?"
#: The characters before a figure quoted without quote marks that :func:`_cut_keeping` keeps with it, past the cut.
FIGURE_CONTEXT = 40


def _cut_keeping(locator: str, limit: int, figures: Iterable[float]) -> str:
    """``locator`` cut at a word to ``limit`` characters as a lock's ``cites`` line cuts it
    (:func:`passprice.textchange.cut_at_word`), but never cutting off one of ``figures`` (the amounts a reviewer
    checks there, as written in the fact's unit): a quote holding one is kept whole
    (:func:`passprice.textchange.cut_keeping_figure`); one written without quote marks (a ratio as a percentage,
    ``90%`` for 0.9, included) past the cut is kept with the word after it (its unit) and up to
    :data:`FIGURE_CONTEXT` characters before it, cut at a space: ``HEAD… … capture 90% of…``. Left47: the same rule
    as a runs line's (left46) for a value moved under its kept citation. A locator with none of them is cut as
    before. Raises nothing."""
    import math

    from passprice.textchange import NUMBER, cut_at_word, cut_keeping_figure, figure_read

    if len(locator) <= limit:
        return locator
    figures = [f for f in figures if math.isfinite(f)]
    plain = cut_at_word(locator, limit)
    for figure in figures:
        kept = cut_keeping_figure(locator, limit, figure)
        if kept != plain:
            return kept
    for found in re.finditer(f"({NUMBER}){_PERCENT_AFTER}", locator[:10_000]):
        amount = figure_read(found.group(1))
        if amount is None:  # past a float (``1e-400``): no figure (left50's reader, left52 here)
            continue
        number = amount / (100 if found.group(2) else 1)
        if not any(math.isclose(number, figure, rel_tol=1e-9) for figure in figures):
            continue
        after = re.match(r"[^\w\s]*\s*\S+", locator[found.end():])  # its unit, or the word after it
        end = found.end() + (after.end() if after else 0)
        if end <= len(plain) - 1:
            return plain  # kept already, with the word after it
        if found.start() <= len(plain) + FIGURE_CONTEXT:
            return cut_at_word(locator, end)  # near the cut: the text kept on to it
        start = locator.find(" ", found.start() - FIGURE_CONTEXT, found.start())
        window = locator[(start + 1 if start >= 0 else found.start()):end]
        return f"{plain} {window}" + ("…" if locator[end:].strip() else "")
    return plain


def _rerouted(before: PriceSide, after: PriceSide) -> tuple[str, str] | None:
    """``(BASE's routing record, HEAD's)`` of the serving each side priced (its completed ``spec``'s ``routing``),
    when both name one and they differ; else ``None``. Raises nothing."""
    was, now = (side.spec.get("routing") if side.spec is not None else None for side in (before, after))
    if isinstance(was, str) and isinstance(now, str) and was != now:
        return was, now
    return None


def _record_changes(base: Side, head: Side, was: str, now: str) -> tuple[FactChange, ...]:
    """The fact changes (lock paths ``routing.*``) from BASE's routing record ``was`` to HEAD's record ``now``
    (:func:`fact_changes`): what a serving re-pointed from one record to the other changes under its price. A record
    is a registry name (``facts/routing/NAME.toml`` of its side) or a ``.toml`` path, found as the side's pricing
    finds it (:func:`passprice.routing.routing_path`; walk53: a serving re-pointed between two records named by
    path read ``routing record A → B`` with no fact compared). Empty when either record is missing or does not read
    on its side (the side's price says why). Raises nothing."""
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


def _runs_moved(lock: LockImpact) -> str:
    """The review's line naming the measured runs whose corrected figure moved ``lock``'s stack fit
    (:attr:`LockImpact.runs_moved`), each with its move and its citation as HEAD records it, cut at a word as
    :func:`_cites` cuts a locator but keeping whole the quote that holds the run's figure
    (:func:`passprice.textchange.cut_keeping_figure`): ``re-fitted from the runs changed: ID 145.55 → 154.55 tokens/s
    (+6.183 %): SOURCE, LOCATOR``, at most 6, then how many more."""
    from passprice.fits import relative_move
    from passprice.textchange import cut_keeping_figure

    said = []
    for run, before, after, source, locator in lock.runs_moved[:6]:
        # left47: a locator still quoting the run's old figure, not its new one, is said so, the quote holding the
        # old figure kept whole (as a card fact's is, walk55): the run corrected, its citation was not
        quoted = _quoted_figures(locator) if locator else set()
        stale = _figure(before) in quoted and _figure(after) not in quoted
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
    (:func:`measurement_renames`) removed on BASE, where it went (``removed: renamed to PATH``); for a record whose
    facts did not change (:func:`_quiet`), ``changed: comments or layout only, no fact``."""
    if f.kind == "other" and f.status == "removed" and f.renamed is not None:
        return f"removed: renamed to {f.renamed}"
    if _quiet(f):
        return "changed: comments or layout only, no fact"
    return f.status


def _table(kind: str) -> str:
    """The own table of a record of ``kind``: ``card``, ``method`` (a drafting method), ``routing``, ``stack``. A
    stack's and a routing record's were called ``[method]`` (attack round 32)."""
    return {"draft": "method"}.get(kind, kind)


def _content(f: FileChange) -> str:
    before, after = (c.removeprefix("sha256:")[:12] + "…" if c else "–" for c in f.content)
    if f.content[0] is not None and f.content[0] == f.content[1]:
        return f"unchanged ({before}: the entry was rewritten, what the pricer reads was not)"
    return f"{before} → {after}"


#: The errors a fit reports (:class:`passprice.derivations.RunDerivation`'s ``errors``), as a re-fit's change names
#: them: each of its three groups (the key's prefix and its words) with its mean and max.
_FIT_ERRORS = (("in_sample", "in sample"), ("card_out", "card held out"), ("checkpoint_out", "checkpoint held out"))


def _error_move(a: float, b: float) -> str:
    """A fit's relative error ``a`` → ``b`` (fractions) as percentages, to 3 significant figures, or to as many
    more (up to 6) as tell two unequal errors apart: walkthrough 55's re-fit read ``max 18 % → 18 %`` for 0.1801 →
    0.1799."""
    digits = 3
    while digits < 6 and f"{100 * a:.{digits}g}" == f"{100 * b:.{digits}g}":
        digits += 1
    return f"{100 * a:.{digits}g} % → {100 * b:.{digits}g} %"


def run_change(old: Any, new: Any, moved_with: Sequence[str] = ()) -> str | None:
    """What a re-fit changed in a fact's derivation from measured runs (both
    :class:`passprice.derivations.RunDerivation`; ``None`` for any other pair): the runs added, removed and whose figure
    changed, each by id with its tokens/s, then the fit's errors before → after. Walkthrough 21: a run added read,
    as a text change, as one run replaced by another (``[xd3.h100_pcie_80gb.8b → w21.h100_sxm5_80gb.8b]-q4km.tg512 =
    [145.55 → 168.2]``), the runs being listed in id order; a method, figure, digits or tolerance changed is left to
    the text change (``None``). Each group of errors that moved is named (walkthrough 55: a re-fit leaving the
    checkpoint-held-out mean unmoved read ``card held out mean 6.9 % → 6.83 %, max 20.4 % → 20.1 %, max 49.8 % →
    50 %``, the last max the checkpoint held out's). ``moved_with``: the records the same change moved that the runs
    are priced on (:attr:`FactChange.moved_with`), named as why a fit of the same runs moved (left45)."""
    from passprice.derivations import FIGURES, RunDerivation
    from passprice.fits import relative_move

    if not isinstance(old, RunDerivation) or not isinstance(new, RunDerivation):
        return None
    if (old.method, old.figure, old.digits, old.tolerance) != (new.method, new.figure, new.digits, new.tolerance):
        return None
    before = {r.run: r.value for r in old.runs}
    after = {r.run: r.value for r in new.runs}

    def listed(items: list[str]) -> str:
        return ", ".join(items[:6]) + (f" and {len(items) - 6:,} more" if len(items) > 6 else "")

    added = [f"{k} = {v:g}" for k, v in after.items() if k not in before]
    removed = [f"{k} = {v:g}" for k, v in before.items() if k not in after]
    moved = [f"{k} = {before[k]:g} → {v:g} ({relative_move(float(before[k]), float(v))})"
             for k, v in after.items() if k in before and before[k] != v]
    n0, n1 = len(before), len(after)
    runs = f"measured runs (each run's {FIGURES.get(new.figure, new.figure)})"
    parts = [f"{n0:,} → {n1:,} {runs}" if n0 != n1 else f"the same {n1:,} {runs}"]
    if added:
        parts.append(f"added {listed(added)}")
    if removed:
        parts.append(f"removed {listed(removed)}")
    if moved:
        parts.append(f"changed {listed(moved)}")
    if not (added or removed or moved) and moved_with:
        parts.append(f"no run added, removed or changed: re-fitted after this change moved what its runs are priced "
                     f"with, {'; '.join(moved_with)} (not a hand edit: HEAD's passprice check re-fits it)")
    elif not (added or removed or moved):
        # walkthrough 55: the RTX 4090's bandwidth corrected and llamacpp-cuda-2405 re-fitted read only this, the
        # reviewer left to guess why a fit of the same runs moved
        parts.append("no run added, removed or changed (a fit of the same runs moves with the card, checkpoint or "
                     "routing facts they are priced with, or was edited by hand: HEAD's passprice check re-fits it)")
    errors = []
    for prefix, group in _FIT_ERRORS:
        said = []
        for stat in ("mean", "max"):
            a, b = (old.errors or {}).get(f"{prefix}_{stat}"), (new.errors or {}).get(f"{prefix}_{stat}")
            if a is not None and b is not None and a != b:
                said.append(f"{stat} {_error_move(a, b)}")
        if said:  # the group named on its first error said: a max alone once read as the group before it's
            errors.append(f"{group} {', '.join(said)}")
    if errors:
        parts.append("the fit's |error| of tokens/s: " + ", ".join(errors))
    return "; ".join(parts)


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
    """Each added record's description (:attr:`Diff.added_records`) as the pull-request comment shows it, by path, in
    the order of :attr:`Diff.files`: Markdown text (:func:`passprice.tables.markdown_text`) of at most
    :data:`MAX_ADDED_DETAIL` characters, cut with its length said; past :data:`MAX_ADDED_DETAILS` characters in all,
    a line that the text review describes it."""
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
    the source (:attr:`FactChange.to_verify`), and the note; items past :data:`MAX_FACT_DETAILS` characters are
    counted, not shown (the facts table above lists every fact)."""
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
    """:func:`_fact_details`'s items, one a changed fact in the order of :attr:`Diff.fact_changes`, each its
    Markdown lines."""
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
    """What each changed fact alone does to ``lock``'s recorded price (:attr:`LockImpact.alone`), the review's
    ``alone`` line: ``memory.bandwidth: tokens/s +1.875 %; routing.hot_share: tokens/s -4.894 %``. A changed input
    with changed facts derived from it (:attr:`LockImpact.joint`) is one entry, in the place of its first member:
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
    comment. ``forged``: the lock's HEAD file does not reproduce from its own pinned inputs (:func:`_unreproducing`;
    slip round 50: such a lock's expected price forged 237.4 → 250 tokens/s was told "its price was out of date
    already on BASE"); ``pins``: its pins were edited by hand (:func:`_forging`, slip round 51); ``unrecorded``: its
    digest is in no record of HEAD's list of pricing models (:func:`_unrecorded`, slip 58)."""
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
    (:func:`unreproduced`: edited by hand), that, whatever its price says."""
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


#: How :func:`passprice.pinforgery.forged_pins` and :func:`~passprice.pinforgery.forged_models` say a lock file pins
#: what no side of the change holds, or drops what BASE's copy pinned (after ``FILE: KEY: ``).
FORGED_PIN_SAYS = (
    "which neither side of the change holds and BASE's lock did not pin",
    "a fact no side of the change holds",
    "dropped, which BASE's lock pinned",
    "the digest of no code of this review",
)


def _forging(d: Diff, lock: LockImpact) -> bool:
    """Whether ``passprice check`` on HEAD (as the review runs it) fails ``lock``'s file for a pin no side of the
    change holds, or a label BASE's copy pinned and HEAD's dropped (:data:`FORGED_PIN_SAYS`)."""
    return any(line.startswith(f"{lock.path}: ") and any(says in line for says in FORGED_PIN_SAYS)
               for line in d.head_check)


def _unrecorded(d: Diff, lock: LockImpact) -> bool:
    """Whether the review fails HEAD on ``lock``'s file because its ``[lock] digest`` is in no record of HEAD's list
    of pricing models (:func:`passprice.modellist.unrecorded_locks`' line in ``d.head_check``)."""
    from passprice.modellist import UNRECORDED_SAYS

    return any(line.startswith(f"{lock.path}: lock.digest: ") and UNRECORDED_SAYS in line for line in d.head_check)


def _unreproducing(d: Diff, lock: LockImpact) -> bool:
    """Whether ``passprice check`` fails HEAD on ``lock``'s file because it does not reproduce from its own pinned
    inputs (:func:`unreproduced`'s line in ``d.head_check``)."""
    return any(line.startswith(f"{lock.path}: does NOT reproduce") for line in d.head_check)


def summary_mark(d: Diff) -> str:
    """The mark heading a diff's summary, in the markdown comment and (but ✅) in the text's first line: ``❌`` when it
    fails (:attr:`Diff.exit_status` not 0), ``⚠️`` when it passes with something for a reviewer (a fact weakened or
    to verify in its source, such as a value moved under a locator still quoting the old figure; floors loosened, a
    lock removed or drifting, a source whose document changed …), else ``✅``. One place for both outputs:
    walkthrough 106 (finding 5) read a text summary with no ⚠️ where the markdown had one. Raises nothing."""
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
                    f"{_held(lock)} → {floors}",
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
    unread = [
        [markdown_code(path), which, markdown_prose(e)]
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
