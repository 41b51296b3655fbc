"""The two sides of a review are read, never checked out: each is a git revision, read through git itself
(``git ls-tree`` and ``git cat-file``, never by checking out or parsing ``.git``), or a folder; the default is the
merge base with ``main`` and the work tree.

Each side's ``facts/``, ``registry/``, ``locks/``, ``schema/`` and ``sources/`` are materialized into a temporary
folder, so the ordinary loaders (:class:`~passprice.registry.Root`, :func:`~passprice.cards.load_card`,
:func:`~passprice.servings.resolve`, :func:`~passprice.locks.read_lock`) read each side exactly as they read a
checkout. A revision's blob past the cap its reader reads within (:func:`blob_cap`) is not read, and a side with more
than :data:`MAX_LOCKLESS` lock files that do not read is refused in one line, told from their bytes, before its tree is
written (:func:`refuse_lockless`, :func:`refuse_unread_before_writing`).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from stat import S_IFDIR
from typing import Any

import attrs

from passprice import gitread, schema
from passprice.cachefolder import make_folders
from passprice.errors import InputError, escaped, problem_lines
from passprice.files import is_folder
from passprice.locks import read_lock
from passprice.registry import Root
from passprice.sidecode import Code, code_of

#: The folders of a root a diff compares.
FOLDERS = ("facts", "registry", "locks", "schema", "sources")
#: Where a root's own code lies, when it is a checkout of passprice itself (:mod:`passprice.sidecode`).
CODE = "src/passprice"
#: The branches whose merge base with ``HEAD`` is the default BASE, in the order tried.
DEFAULT_BRANCHES = ("main", "origin/main", "master", "origin/master")


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
    #: The identity (:func:`passprice.sourcechange.document_digest`) of each of
    #: :data:`passprice.review.verdict.INSTALL_FILES` and each file of :data:`passprice.review.verdict.WORKFLOWS` on
    #: this side, by path (absent: not there).
    installs: Mapping[str, str] = attrs.field(factory=dict)
    #: The git checkout a revision (or a work tree inside one) was read from: the review reads the branch's commits
    #: through it (:func:`passprice.review.impacts._branch_records`, slip 57); ``None`` for a folder outside git.
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
        documents = (named & unread) | self._documents_elsewhere(commit, named - unread - set(files))
        for rel in documents:
            make_folders((dest / rel).parent)
            (dest / rel).touch()
        # Its bytes where they are within the bound (a stored excerpt edited away from its document passed the
        # review of a revision, the document written empty and not compared: tests/test_fix56.py)
        chosen = self._documents_to_read(commit, documents - _excerpts_named(files), blobs)
        # A stored excerpt within the cap audit reads one under holds its bytes: check compares them with the
        # record's excerpt_sha256, and the review checks a re-cited fact's quotes in them (tests/test_walk128.py).
        from passprice.sources import EXCERPT_BYTES

        excerpts = {rel: blobs[rel] for rel in _excerpts_named(files) & unread if blobs[rel][1] <= EXCERPT_BYTES}
        # the documents and the excerpts in one `git cat-file --batch` (tests/test_git_inputs.py counts them)
        both = {**chosen, **excerpts}
        if both:
            texts = gitread.read_blobs(self.top, {obj: size for obj, size in both.values()})
            for rel, (obj, _size) in both.items():
                if obj in texts and (dest / rel).is_file() and not (dest / rel).is_symlink():
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

    def _documents_to_read(self, commit: str, rels: Iterable[str],
                           blobs: Mapping[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
        """The blob and size at ``commit`` of each registry document of ``rels`` (a source's ``source.path``,
        written empty by :meth:`materialize`) within :data:`DOCUMENT_READ_BYTES` each, in path order while they hold
        :data:`passprice.gitread.NAMED_TOTAL_BYTES` in all (the rest stay empty, not compared, as before), by path:
        :meth:`materialize` writes their bytes in the ``git cat-file --batch`` that reads the stored excerpts, so
        that ``check`` of the revision compares a stored excerpt with the document it copies
        (:func:`passprice.lineage.excerpt_copies`), as a work tree's review does. ``blobs``: the blob and size of
        the paths :meth:`materialize` listed; the others are sized here (``git ls-tree -l``). Raises nothing of its
        own (a path git does not list is left out)."""
        wanted = sorted(rels)
        if not wanted:
            return {}
        sized = {rel: blobs[rel] for rel in wanted if rel in blobs}
        others = [rel for rel in wanted if rel not in sized and _plain_inside(rel)]
        if others:
            try:
                listing = _run_git(self.top, ["--literal-pathspecs", "ls-tree", "-l", "-z", "--full-tree", commit,
                                              "--", *(f"{self.prefix}{n}" for n in others)])
            except subprocess.CalledProcessError:
                listing = b""
            for record in os.fsdecode(listing).split("\0"):
                meta, _, name = record.partition("\t")
                fields = meta.split()
                if (len(fields) == 4 and fields[1] == "blob" and fields[3].isdigit()
                        and name.startswith(self.prefix) and name[len(self.prefix):] in others):
                    sized[name[len(self.prefix):]] = (fields[2], int(fields[3]))
        chosen: dict[str, tuple[str, int]] = {}
        total = 0
        for rel in wanted:
            if rel not in sized or sized[rel][1] > DOCUMENT_READ_BYTES:
                continue
            if total + sized[rel][1] > gitread.NAMED_TOTAL_BYTES:
                break
            total += sized[rel][1]
            chosen[rel] = sized[rel]
        return chosen

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
    """Raise what :func:`passprice.review.verdict._compare` raises first (:func:`refuse_unread_locks`, BASE's line, else
    HEAD's) when more than :data:`MAX_LOCKLESS` of the lock files of HEAD (the revision ``label``, whose ``files`` are
    about to be written into the folder ``head``) that differ from ``base``'s surely do not read
    (:func:`surely_unread`): told from the bytes, before HEAD's tree is written. A branch adding 3,700 files ``[lock]``
    + ``x = {i}`` had its 4,160 files written (0.8 s of the kernel's time, under load, of a 1.2 s ``diff``), then was
    refused by them. The locks are read in a snapshot of their own holding these very bytes, as the comparison's would;
    where the side is not surely refused nothing is read, and the comparison judges it as ever (a branch adding
    thousands of locks that read is not read twice). Raises nothing when fewer surely fail: ``_compare`` then judges the
    side."""
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


def _given(data: bytes) -> Callable[[], bytes]:
    """A reader of bytes already read (:func:`passprice.snapshot.file_bytes`'s ``read``)."""
    return lambda: data

