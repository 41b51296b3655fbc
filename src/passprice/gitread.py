"""A file is sized before it is read: every git object and work-tree file that ``diff`` and ``fact show --history``
read is looked at first (its size from ``git ls-tree -l`` or ``git cat-file --batch-check``, a work-tree file's from
``stat``), refused past :data:`passprice.schema.MAX_TOML_BYTES` in one line naming ``revision:path`` and the size,
and only what passprice parses is read at all, in one ``git cat-file --batch`` process; a submodule (a tree entry of
type ``commit``, or a folder holding its own ``.git``) is refused by name, not read as an empty folder; and a history
or a default BASE cut off by a shallow clone's boundary says so instead of passing for the whole story. A file git
rewrites between the repository and a checkout (a ``.gitattributes`` rule: ``working-tree-encoding``, ``filter``,
``ident``) is refused by name, in a revision a review reads and in a work tree ``check`` reads: what the review read
from git was not what a checkout's ``check`` and ``price`` read (:func:`rewritten_lines`).

Read through git itself (``git ls-tree``, ``git cat-file``, ``git rev-list``), never by parsing ``.git``'s objects,
refs or index; its config is read only for the one setting that decides whether git need run at all
(:mod:`passprice.gitconfig`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from passprice import schema
from passprice.errors import InputError, escaped
from passprice.files import kind, read_regular

#: The most bytes one side of a diff may hold in the files passprice reads (each at most ``MAX_TOML_BYTES``): a
#: registry is a few hundred KiB; past this a side is refused rather than held in memory.
MAX_SIDE_BYTES = 4 * schema.MAX_TOML_BYTES

#: The most files passprice reads that one side of a diff may hold, unless :data:`FILES_VARIABLE` says otherwise.
#: Each costs about 0.3 to 4 ms of CPU to read, validate, build and compare (a serving file the least, a card with
#: derivations the most), and git packs copies of a file in a few bytes each: a commit adding 20,000 copies of a
#: card (a 48 KB tree object) ran ``diff`` past a minute. The registry holds about 100; the benchmark's largest
#: (``benchmarks/registry_scale.py``) about 2,100; a sweep file names at most 4,000 servings or cards.
MAX_SIDE_FILES = 4000
#: The environment variable that raises (or lowers) :data:`MAX_SIDE_FILES`.
FILES_VARIABLE = "PASSPRICE_MAX_SIDE_FILES"


#: The most files of ``facts/`` (cards, drafting methods, routing records, stacks) one side of a diff may hold, unless
#: :data:`FACT_FILES_VARIABLE` says otherwise: a card file costs ``diff`` about 1 ms of CPU after the first copy of
#: its bytes (it is read, validated, rechecked and priced once a content, :func:`passprice.cards.document_and_facts`,
#: but compared, checked for its sources and printed once a file, some 3 KB of text each), on top of the 1.3 to 1.5 s
#: the registry alone takes: 3,850 copies of a card ran 5.5 s (20.1 s before). The registry holds about 20. Session
#: 11 measured 400 past 2 s (377 cards added to the registry's 23 files: 2.17 s of CPU cold, `pip install .`, median
#: of 5 at load 0.9; 177 added: 1.50 s), so the bound is 200.
MAX_SIDE_FACT_FILES = 200
#: The environment variable that raises (or lowers) :data:`MAX_SIDE_FACT_FILES`.
FACT_FILES_VARIABLE = "PASSPRICE_MAX_SIDE_FACT_FILES"


def _cap(variable: str, default: int) -> int:
    """The whole number the environment variable ``variable`` gives (when set and not empty), else ``default``.
    Raises :class:`InputError` when it is not a whole number from 1 to 10^9."""
    import re

    text = os.environ.get(variable)
    if not text:
        return default
    digits = text.strip()
    if not re.fullmatch(r"[0-9]{1,10}", digits, flags=re.ASCII) or not 1 <= int(digits) <= 10**9:
        raise InputError(f"{variable}: {text[:40]!r} is not a number of files (a whole number from 1 to 10^9)")
    return int(digits)


def side_files_cap() -> int:
    """The most files a side of a diff may hold: :data:`FILES_VARIABLE` when set (and not empty), else
    :data:`MAX_SIDE_FILES`. Raises :class:`InputError` when the variable is not a whole number from 1 to 10^9."""
    return _cap(FILES_VARIABLE, MAX_SIDE_FILES)


def side_fact_files_cap() -> int:
    """The most files of ``facts/`` a side of a diff may hold (:func:`holds_facts`): :data:`FACT_FILES_VARIABLE`
    when set (and not empty), else :data:`MAX_SIDE_FACT_FILES`. Raises :class:`InputError` as
    :func:`side_files_cap`."""
    return _cap(FACT_FILES_VARIABLE, MAX_SIDE_FACT_FILES)


def holds_facts(rel: str) -> bool:
    """Whether the file passprice reads at ``rel`` (:func:`read_by_passprice`) is a record of facts: a card, drafting
    method, routing record or stack (``facts/FOLDER/NAME.toml``)."""
    return rel.startswith("facts/")


def side_too_many_facts(label: str, cap: int) -> InputError:
    """The refusal of a side holding more than ``cap`` files of ``facts/`` (counted before any is read)."""
    return InputError(
        f"{label}: more than {cap:,} files of facts/ (cards, drafting methods, routing records, stacks), the most a "
        f"side of a diff may hold (each costs about a millisecond to compare and print, and a diff stays under 2 s; "
        f"the registry holds about 20); set {FACT_FILES_VARIABLE} to allow more"
    )


def side_too_many(label: str, cap: int) -> InputError:
    """The refusal of a side holding more than ``cap`` files passprice reads (counted before any is read)."""
    return InputError(
        f"{label}: more than {cap:,} files passprice reads, the most a side of a diff may hold (each costs "
        f"milliseconds to compare; the shipped registry holds about 130); set {FILES_VARIABLE} to allow more"
    )


#: Settings on the command line of every git passprice runs, over the repository's own config (a ``.git/config``
#: written by a CI step, or in a folder handed over with its ``.git``): no file-system monitor program
#: (``core.fsmonitor``: ``diff``'s ``git ls-files`` of the work tree ran the program the repository named, attack
#: round 29), no signature check by ``gpg.program`` (``log.showSignature``, for ``fact show --history``'s ``git
#: log``), paths unquoted. passprice runs only git's reading commands, none of which runs a hook, a pager, a diff
#: driver or an editor; no hook either way (``core.hooksPath=/dev/null``). A partial clone's missing object is not
#: fetched (:func:`git_environment`).
SETTINGS = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false", "-c", "core.quotepath=off", "-c",
            "core.hooksPath=/dev/null")

#: The environment variables that name a repository, its work tree, index or objects (git exports them to a hook).
#: Each one holding a relative path is made absolute, from the working folder passprice was started in, where it
#: was set (a hook's ``GIT_DIR=.git``), not the folder git is run in: ``--root sub`` was "not a git checkout
#: (fatal: not a git repository: '.git')". A scratch repository (:func:`revision_rewrites`) is run without them:
#: with ``GIT_DIR`` and ``GIT_WORK_TREE`` set, its ``git init`` re-initialized the user's repository and its ``git
#: check-attr`` read the work tree's ``.gitattributes`` instead of the revision's, so a review passed a revision's
#: ``ident`` rule that it refuses without them (attack round 29).
LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
#: Further variables naming a repository's parts, dropped for a scratch repository.
_LOCATING_MORE = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


def git_environment(scratch: bool = False) -> dict[str, str]:
    """The environment every git passprice runs gets: this process's, with replace refs not applied
    (``GIT_NO_REPLACE_OBJECTS``: a review reads the objects a revision holds, not the local stand-ins
    ``refs/replace/`` names), no optional locks taken (``GIT_OPTIONAL_LOCKS=0``: a read writes nothing, not even the
    index's refreshed stat data), no prompt for credentials, no object fetched from a partial clone's promisor
    remote (``GIT_NO_LAZY_FETCH``, git 2.44 on) and no transport allowed at all (``GIT_ALLOW_PROTOCOL`` naming none,
    over any ``protocol.*.allow`` of the repository's config): a blob missing from a partial clone whose config names
    ``remote.origin.url = ext::PROGRAM`` (with ``protocol.ext.allow = always``) made ``diff`` and ``fact show
    --history`` run PROGRAM, git's lazy fetch (attack round 30); and :data:`LOCATING` made absolute; for a
    ``scratch`` repository, without any of them. Raises nothing."""
    env = dict(os.environ)
    env.update(GIT_NO_REPLACE_OBJECTS="1", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_NO_LAZY_FETCH="1",
               GIT_ALLOW_PROTOCOL="passprice-fetches-nothing")
    for name in (*LOCATING, *_LOCATING_MORE):
        if scratch:
            env.pop(name, None)
            continue
        value = env.get(name)
        if name in LOCATING and value and not os.path.isabs(value):
            with contextlib.suppress(OSError):  # the working folder is gone: git says so in its own words
                env[name] = os.path.abspath(value)
    if scratch:
        for name in [k for k in env if k.startswith("GIT_CONFIG_KEY_") or k.startswith("GIT_CONFIG_VALUE_")]:
            del env[name]
        env["GIT_ATTR_NOSYSTEM"] = "1"  # the system's rules, when they count, are in the scratch's own rule file
    return env


def blocking_file(paths: Iterable[Path], what: str) -> str | None:
    """The line refusing the first of ``paths`` that is there and is a FIFO, a device or a socket (a link followed),
    which git opens and reads to its end (``what``: ``a file of attribute rules``, ``a config file``): git blocks
    forever on a FIFO and reads ``/dev/zero`` without end. ``check`` of a repository whose ``.git/info/attributes``
    (or ``.gitattributes``, or the file ``core.attributesFile`` names) was a FIFO never finished, in ``git
    check-attr`` (attack round 33). The null device is not refused: git reads it as an empty file
    (``GIT_CONFIG_GLOBAL=/dev/null`` is git's own way to read no user config; ``diff`` refused it, attack round 34).
    ``None`` when none is. Raises nothing."""
    from passprice.files import kind, shown
    from passprice.gitconfig import null_device

    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue
        if null_device(path):
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            return (f"{shown(path)}: {kind(mode)}, where git reads {what}: git would block reading it (or read without "
                    "end), so passprice runs no git here; make it a regular file or remove it")
    return None


def _config_guard(cwd: Path, scratch: bool) -> None:
    """Refuse to run git when a config file it reads at every start (the system's, the user's, the repository's
    holding ``cwd``, where its ``.git`` is a folder or a file naming one), or one they include
    (:func:`passprice.gitconfig.reached_files`), is a FIFO, a device or a socket (:func:`blocking_file`): git would
    block before doing anything; so is one of the repository's own files (:func:`_repository_files`) or loose objects
    (:func:`_blocking_object`), where git would block reading it. Raises :class:`GitFailed`."""
    from passprice.gitconfig import reached_files, user_config_files

    top = None if scratch else _git_top(cwd)
    places = user_config_files()
    if top is not None:
        # The repository's own config, where a `.git` file names it (`gitdir: PATH`: a separate git dir, a
        # submodule, a work tree git worktree added) too: `diff` of a work tree whose named repository's config was
        # a FIFO blocked in git for ever, `reproduce DIGEST` for its 10 s (attack71).
        for folder in dict.fromkeys(_git_dirs(_repository_of(top))):
            places += [folder / "config", folder / "config.worktree"]
    # and every file they include: git opens each (`[include] path = FIFO` blocked it as the config itself did)
    line = blocking_file(reached_files(places), "its settings")
    if line is None and top is not None:
        line = blocking_file(_repository_files(_repository_of(top)), "its repository's own files")
    if line is None and top is not None:
        line = _blocking_object(_object_folders(_git_dirs(_repository_of(top))[1] / "objects"))
    if line is not None:
        raise GitFailed(line)  # git cannot run here: said so, not read as "not a git checkout" (fact show --history)


#: The most entries of a repository's ``refs`` folder :func:`_repository_files` lists (a repository holds tens).
MAX_REFS_LISTED = 10_000


def _repository_files(dot_git: Path) -> list[Path]:
    """The files of the repository of ``dot_git`` (a work tree's ``.git``, :func:`_git_dirs`) that git opens and
    reads as it finds a revision: ``HEAD``, the ``index``, ``packed-refs``, ``shallow``, ``info/grafts``,
    ``objects/info/alternates``, ``objects/info/commit-graph``, and every file of ``refs/``, ``objects/pack/`` (its
    packs' indexes, read at every lookup of an object) and ``objects/info/commit-graphs/`` (up to
    :data:`MAX_REFS_LISTED` in all). A FIFO as any of them held ``diff`` and ``fact show --history`` in git for ever
    and ``reproduce DIGEST``'s search for its 10 s (attack71); one as the commit-graph or a pack's ``.idx`` held
    ``diff`` until git's time limit (past 20 s; attack72). A loose object is not looked at here (a repository holds
    thousands): :func:`_blocking_object` looks through them apart, from their folders' entries. Raises nothing."""
    git_dir, common = _git_dirs(dot_git)
    files = [git_dir / "HEAD", git_dir / "index", common / "packed-refs", common / "shallow",
             common / "info" / "grafts", common / "objects" / "info" / "alternates",
             common / "objects" / "info" / "commit-graph"]
    listed = 0
    for folder in dict.fromkeys((common / "refs", git_dir / "refs", common / "objects" / "pack",
                                 common / "objects" / "info" / "commit-graphs")):
        for parent, _, names in os.walk(folder):
            files += [Path(parent) / name for name in names]
            listed += len(names)
            if listed > MAX_REFS_LISTED:
                return files
    return files


#: The most loose objects :func:`_blocking_object` looks at in a repository (a repository holds hundreds to some tens
#: of thousands before ``git gc`` packs them; each costs about 2.5 µs, read from its folder's entries without a
#: ``stat``): past them the rest are not looked at, and a git blocked on one is stopped by :func:`run_git` once
#: :func:`blocked_open` sees it waiting (git79; where that cannot be told, git's time limit ends it).
MAX_LOOSE_LISTED = 200_000


#: The name of a fan-out folder of loose objects (``objects/XX``: an object id's first two hex digits), and of a
#: loose object in it (the id's other 38 hex digits, SHA-1, or 62, SHA-256): git opens an object at the path its id
#: spells and no other, so an entry named otherwise (``objects/ab/not-hex``, git's ``tmp_obj_*``) is never opened and
#: never refused (a FIFO so named was refused, a false refusal; git 79). Either case of hex is taken: a filesystem
#: that folds case opens ``AB…`` for ``ab…``.
_FAN_OUT = re.compile(r"[0-9a-fA-F]{2}")
_OBJECT_NAME = re.compile(r"[0-9a-fA-F]{38}|[0-9a-fA-F]{62}")


#: How deep :func:`_object_folders` follows alternates naming alternates (git's own limit, ``alt_odb`` depth 5).
_ALTERNATES_DEPTH = 5


def _object_folders(objects: Path) -> list[Path]:
    """The object folders git reads a repository's objects from: ``GIT_OBJECT_DIRECTORY`` where set, else
    ``objects``; the folders its ``info/alternates`` names (a line each, ``#`` a comment, a relative path from the
    object folder holding the file), theirs in turn (to git's depth of 5), and those
    ``GIT_ALTERNATE_OBJECT_DIRECTORIES`` names (``:``-separated). Attack74: a FIFO as a loose object of an
    alternate folder held ``diff`` in ``git ls-tree`` for git's time limit (60.9 s, "git ls-tree: took longer than
    60.0 s", naming nothing). A file not read (not there, not regular, not text) names no folder: git says what it
    finds.

    Each folder is taken once by its real path (links resolved), as git takes an alternate (``link_alt_odb_entry``:
    ``strbuf_realpath``, a folder already linked or the repository's own skipped), and a relative line is read from
    the real path of the folder whose list holds it, as git reads it. Attack80: an ``alternates`` of 8
    lines, each a link to the object folder itself (``l1 → .``), named 8**5 folders by their unresolved paths
    (``l1/l3/l2…``), each compared with every one before: ``diff`` ran past 120 s (killed) where git reads the
    repository at once; now the links are the object folder, named once. A line naming no folder is passed over, as
    git passes it ("unable to normalize alternate object path"): 20,000 such lines cost ``diff`` 10 s of CPU (a
    ``realpath`` each, for each of its 13 git runs; before the real paths, past 300 s). Made once a snapshot
    (:func:`passprice.snapshot.made`). Raises nothing."""
    from passprice import snapshot

    key = ("git-object-folders", os.fspath(objects), os.environ.get("GIT_OBJECT_DIRECTORY"),
           os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES"))
    return snapshot.made(key, lambda: _object_folders_of(objects))


def _object_folders_of(objects: Path) -> list[Path]:
    """:func:`_object_folders`, made anew."""

    def real(folder: Path) -> str:
        try:
            return os.path.realpath(folder)
        except (OSError, ValueError):
            return os.fspath(folder)

    main = Path(os.environ.get("GIT_OBJECT_DIRECTORY") or objects)
    folders = [main]
    seen = {real(main)}
    for named in (Path(p) for p in os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(os.pathsep) if p):
        if real(named) not in seen:
            seen.add(real(named))
            folders.append(named)
    walk = [(main, 0)]
    while walk:
        folder, depth = walk.pop()
        alternates = folder / "info" / "alternates"
        if depth >= _ALTERNATES_DEPTH or not os.path.isfile(alternates):
            continue
        try:
            lines = read_sized(alternates).decode("utf-8").splitlines()
        except (InputError, OSError, UnicodeDecodeError, ValueError):
            continue
        base = real(folder)  # a relative line is read from the folder git holds, its real path
        for line in lines:
            if line.strip() and not line.startswith("#"):
                named = Path(os.path.normpath(os.path.join(base, line.strip())))
                if not os.path.isdir(named):
                    continue  # no folder: git passes it over, and it holds no object
                resolved = real(named)
                if resolved not in seen:
                    seen.add(resolved)
                    folders.append(named)
                    walk.append((named, depth + 1))
    return folders


def _blocking_object(folders: list[Path]) -> str | None:
    """The line refusing the first loose object of the object folders ``folders`` (``objects/XX/…``,
    :func:`_object_folders`) that is a FIFO, a device or a socket, or a link to one (:func:`blocking_file`); ``None``
    when none is (or past :data:`MAX_LOOSE_LISTED` in all: past them :func:`blocked_open` tells a git waiting on one,
    git79). A regular file is told from its folder's entry, with no ``stat``; only an entry that is not one, named as
    an object id spells it (:data:`_OBJECT_NAME` in a folder :data:`_FAN_OUT` names), is looked at further. A
    fan-out folder ``XX`` that is a link to a folder
    is looked through as git follows it (attack74: one was passed over, and a FIFO in it held ``diff`` for git's
    60 s). Left52: a FIFO as a loose object held ``diff`` in ``git ls-tree`` until git's time limit (60 s) and then
    said "git ls-tree: took longer than 60.0 s", naming nothing. Looked through once a snapshot
    (:func:`passprice.snapshot.made`): 1.7 ms for 658 loose objects. Raises nothing."""
    from passprice import snapshot

    def look() -> str | None:
        listed = 0
        for objects in folders:
            line = blocking_file([objects / "info" / "alternates"], "its repository's own files")
            if line is not None:
                return line  # an alternate's own list of alternates, which git reads as it reads the first one's
            try:
                with os.scandir(objects) as fan_out:
                    for folder in fan_out:
                        if not _FAN_OUT.fullmatch(folder.name) or not folder.is_dir():
                            continue
                        with os.scandir(folder.path) as entries:
                            for entry in entries:
                                listed += 1
                                if listed > MAX_LOOSE_LISTED:
                                    return None
                                if entry.is_file(follow_symlinks=False) or not _OBJECT_NAME.fullmatch(entry.name):
                                    continue  # a regular file, or a name git never opens as an object
                                line = blocking_file([Path(entry.path)], "an object of its repository")
                                if line is not None:
                                    return line
            except OSError:
                continue  # no such folder, or one not readable: git says what it finds
        return None

    return snapshot.made(("git-loose-objects", *map(os.fspath, folders)), look)


#: Seconds any one git passprice runs may take unless its caller says otherwise (a registry's reads take well under
#: one): past them git is killed and the command says so, where a git blocked on a FIFO among the repository's
#: objects held the command for ever (attack71; :func:`_config_guard` now looks through the loose ones, left52,
#: an alternate object folder's too, attack74, but not past :data:`MAX_LOOSE_LISTED`; past them, on Linux,
#: :func:`blocked_open` tells a git waiting on one within :data:`WATCH_S`, git79).
GIT_TIMEOUT_S = 60.0

#: Seconds a git passprice runs in a local repository may say nothing (no output, not ended) before it is stopped,
#: at least (:func:`quiet_bound`: a second more each :data:`GIT_QUIET_BYTES` of the repository's packed objects). A
#: git blocked where :func:`blocked_open` cannot tell (no ``/proc``; a lock, a network mount, a ``git`` on PATH that
#: hangs) held ``diff`` and ``reproduce`` the whole :data:`GIT_TIMEOUT_S`: 61.4 s of wall time for a ``diff`` whose
#: ``git`` slept, 11 s for a ``reproduce`` (left103). A local repository's git answers within milliseconds (its start
#: about 2 ms, a ``cat-file`` object as it is read, ``ls-tree`` as it walks); a ``git log`` walk (``--reverse`` says
#: nothing until its end) is proportionate to the history, which the packed bytes measure too.
GIT_QUIET_S = 1.0

#: Bytes of a repository's packed objects (``objects/pack/*.pack``) each further second of quiet is allowed for
#: (:func:`quiet_bound`): reading a pack's index and inflating its objects is proportionate to them.
GIT_QUIET_BYTES = 100 << 20

#: The fan-out folder of loose objects :func:`quiet_bound` sizes, as ``git gc --auto`` counts one (``objects/17``): a
#: sha1's first byte is uniform, so the folder holds about a 256th of them.
LOOSE_SAMPLE = "17"


def quiet_bound(cwd: Path) -> tuple[float, int]:
    """The seconds a git run in ``cwd`` may say nothing (:data:`GIT_QUIET_S`, and a second more each
    :data:`GIT_QUIET_BYTES` of the objects of the repository ``cwd`` is in), and those bytes: its packs'
    (``objects/pack/*.pack`` of the repository's common folder, :func:`_git_dirs`) and its loose objects', estimated
    as ``git gc --auto`` counts them, by 256 times the bytes one fan-out folder (:data:`LOOSE_SAMPLE`) holds on disk
    (each a file git opens: its blocks, 4 KiB for a few bytes): a history of 100,000 loose objects (25,000 commits,
    400 MB on disk, 9 MB packed) was allowed 1 s whatever their number, and its ``git log`` walk said nothing for
    17 s of wall time at load 11 (2.8 s of CPU), so ``reproduce`` dropped the lock's commit
    (``tests/test_bound111.py``). Reads two folders; raises nothing (a folder not read counts no bytes)."""
    size = 0
    top = _git_top(cwd)
    if top is not None:
        _, common = _git_dirs(top / ".git")
        for folder, loose in ((common / "objects" / "pack", False), (common / "objects" / LOOSE_SAMPLE, True)):
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    if (len(entry.name) >= 38) if loose else entry.name.endswith(".pack"):
                        with contextlib.suppress(OSError):
                            found = entry.stat(follow_symlinks=False)
                            # a loose object is a file git opens: its blocks on disk (4 KiB for a few bytes)
                            size += 256 * max(found.st_size, found.st_blocks * 512) if loose else found.st_size
    return GIT_QUIET_S + size / GIT_QUIET_BYTES, size


def quiet_line(command: str, quiet: float, packed: int) -> str:
    """The line saying ``git COMMAND`` was stopped after saying nothing for ``quiet`` seconds (:func:`quiet_bound`,
    ``packed``: the repository's packed bytes it was allowed for)."""
    return (f"git {command}: said nothing for {quiet:.1f} s, the most allowed in a repository of {packed:,} bytes of "
            f"objects ({GIT_QUIET_S:g} s, and 1 s more each {GIT_QUIET_BYTES >> 20} MiB), so passprice "
            "stopped it: a local repository's git answers within milliseconds; something holds it (a lock, a FIFO, "
            "a network mount, the git on PATH)")


#: Seconds between two looks at a running git (:func:`blocked_open`): a git blocked opening a FIFO is stopped and the
#: FIFO named within about this much, whatever the number of loose objects (git79: past :data:`MAX_LOOSE_LISTED`,
#: 200,001 empty loose objects before a FIFO as a changed card's blob held ``diff`` 60.8 s, git's time limit).
WATCH_S = 0.05

#: The system calls that open a file by name, by machine (``platform.machine()``): their number as
#: ``/proc/PID/syscall`` shows it, and which argument is the name (the one before it, for ``openat``, the folder it is
#: relative to). Linux's tables (``arch/x86/entry/syscalls/syscall_64.tbl``, ``include/uapi/asm-generic/unistd.h``).
_OPENING: dict[str, dict[int, int]] = {
    "x86_64": {2: 0, 257: 1, 437: 1},  # open, openat, openat2
    "aarch64": {56: 1, 437: 1},  # openat, openat2
}
#: ``AT_FDCWD`` as ``/proc/PID/syscall`` shows a folder argument (-100, as an unsigned 32- or 64-bit word).
_AT_FDCWD = (0xFFFFFF9C, 0xFFFFFFFFFFFFFF9C)


def _read_name(pid: int, address: int) -> bytes | None:
    """The NUL-ended name at ``address`` in the memory of process ``pid`` (``/proc/PID/mem``, up to 4,096 bytes, a
    page at a time so that a name ending near an unmapped page reads); ``None`` when it cannot be read."""
    name = b""
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
            while len(name) < 4096:
                memory.seek(address + len(name))
                chunk = memory.read(4096 - (address + len(name)) % 4096)
                if not chunk:
                    return None
                end = chunk.find(b"\0")
                if end >= 0:
                    return name + chunk[:end]
                name += chunk
    except (OSError, ValueError, OverflowError):
        return None
    return None


def blocked_open(pid: int) -> tuple[Path, int] | None:
    """The file process ``pid`` (a git passprice started: its child, which Linux lets it look into) is waiting to open
    when it is a FIFO, a character or block device or a socket, with its mode (``st_mode``); ``None`` when it is not
    in an ``open`` of one, or this cannot be told (not Linux, another machine than :data:`_OPENING` names, ``/proc``
    not readable). Read from ``/proc/PID/syscall`` (the call it is in and its arguments), the name from
    ``/proc/PID/mem`` and, when relative, its folder from ``/proc/PID/cwd`` or ``/proc/PID/fd/N``: git opens an
    object, a ref or an index with a plain ``open`` (no ``O_NONBLOCK``), which waits for ever for a FIFO's writer.
    A bound that needs no listing of the repository's files (git79: :func:`_blocking_object` stops at
    :data:`MAX_LOOSE_LISTED`). Raises nothing."""
    import platform

    calls = _OPENING.get(platform.machine())
    if calls is None:
        return None
    try:
        with open(f"/proc/{pid}/syscall", encoding="ascii") as said:
            fields = said.read().split()
        number = int(fields[0])
        if number not in calls:
            return None
        at = calls[number]
        raw = _read_name(pid, int(fields[1 + at], 16))
        if not raw:
            return None
        name = Path(os.fsdecode(raw))
        if not name.is_absolute():
            folder = int(fields[at], 16) if at else _AT_FDCWD[0]
            base = "cwd" if folder in _AT_FDCWD else f"fd/{folder}"
            name = Path(os.readlink(f"/proc/{pid}/{base}")) / name
        mode = os.stat(name).st_mode
    except (OSError, ValueError, IndexError):
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        from passprice.gitconfig import null_device

        return None if null_device(name) else (name, mode)
    return None


def blocked_line(path: Path, mode: int, command: str) -> str:
    """The line refusing ``path`` (of ``mode``), which ``git COMMAND`` was found waiting to open
    (:func:`blocked_open`) and was stopped for."""
    from passprice.files import kind, shown

    what = ("an object of its repository" if _FAN_OUT.fullmatch(path.parent.name) and _OBJECT_NAME.fullmatch(path.name)
            else "a file of its repository")
    return (f"{shown(path)}: {kind(mode)}, where git reads {what}: git {command} waited to open it (a FIFO's "
            "writer never comes), so passprice stopped git; make it a regular file or remove it")


def run_git(cwd: Path, args: Iterable[str], stdin: bytes | None = None, scratch: bool = False,
            timeout: float | None = None) -> bytes:
    """The standard output of ``git ARGS`` run in ``cwd``, with :data:`SETTINGS` and :func:`git_environment`
    (``scratch``: a repository of passprice's own, in a temporary folder), within ``timeout`` seconds (git is killed
    past it; :data:`GIT_TIMEOUT_S` when not given), looked at every :data:`WATCH_S` seconds: a git waiting to open
    a FIFO (:func:`blocked_open`) is killed and the FIFO named. Raises :class:`subprocess.CalledProcessError` when
    git fails, :class:`GitFailed` when it runs past ``timeout`` or waits on a FIFO, and :class:`InputError` when git
    is not installed or a file it reads would block it (:func:`_config_guard`)."""
    import time

    _config_guard(cwd, scratch)
    listed = list(args)
    timeout = GIT_TIMEOUT_S if timeout is None else timeout
    command = ["git", *SETTINGS, *listed]
    quiet = quiet_bound(cwd)
    deadline = time.monotonic() + timeout
    try:
        git = subprocess.Popen(command, cwd=cwd, stdin=None if stdin is None else subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_environment(scratch),
                               **_OWN_GROUP)
    except FileNotFoundError:
        raise InputError("git: not found on PATH; comparing revisions needs git (or give two folders)") from None
    except OSError as e:
        raise GitFailed(not_started(e)) from None
    with git:
        out, err = _watched(git, stdin or b"", deadline, listed[0] if listed else "", timeout, quiet=quiet)
    if git.returncode:
        raise subprocess.CalledProcessError(git.returncode, command, out, err)
    return out


#: How :func:`run_git` starts git: in a process group of its own (POSIX), so that git and what it starts end together
#: (:func:`_kill`). Attack87: a ``git`` on PATH that is a script running the real git (not ``exec``) was killed alone
#: at the time limit, and the real git, blocked opening a FIFO, stayed for ever.
_OWN_GROUP: dict[str, Any] = {"process_group": 0} if os.name == "posix" else {}

#: The most processes :func:`_descendants` lists under one git (itself, its children and theirs).
_WATCHED_MAX = 64


def _kill(git: subprocess.Popen[bytes]) -> None:
    """Kill ``git`` and every process of its group (:data:`_OWN_GROUP`: what it started and has not moved out of
    it), then ``git`` itself should the group be gone. Raises nothing."""
    import signal

    if _OWN_GROUP:
        with contextlib.suppress(OSError):
            os.killpg(git.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        git.kill()


def _descendants(pid: int) -> list[int]:
    """``pid`` and its descendants (``/proc/PID/task/TID/children``), up to :data:`_WATCHED_MAX` in all, parents
    first: the processes :func:`_exchange` looks into (a ``git`` that is a script runs the real git as its child,
    attack87). Only ``pid`` where ``/proc`` does not list children. Raises nothing."""
    found = [pid]
    at = 0
    while at < len(found) and len(found) < _WATCHED_MAX:
        parent = found[at]
        at += 1
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as listed:
                    found += [int(child) for child in listed.read().split()]
            except (OSError, ValueError):
                continue
    return found[:_WATCHED_MAX]


def _watched(git: subprocess.Popen[bytes], stdin: bytes, deadline: float, command: str, timeout: float,
             sink: Callable[[bytes], object] | None = None,
             quiet: tuple[float, int] | None = None) -> tuple[bytes, bytes]:
    """:func:`_exchange` with the running ``git`` (``git COMMAND``, started for ``timeout`` seconds): its output and
    errors once it has exited. Raises :class:`GitFailed` (git killed) when it is seen waiting on a FIFO (the FIFO
    named, :func:`blocked_line`), runs past ``deadline``, or says nothing for ``quiet``'s seconds (:func:`quiet_bound`:
    the seconds and the repository's packed bytes; ``None``: not bounded); git is killed too when the wait is
    interrupted."""
    try:
        said = _exchange(git, stdin, deadline, sink, None if quiet is None else quiet[0])
    except BaseException:  # an interrupt: git ends with it, as subprocess.run ends it
        _kill(git)
        raise
    if isinstance(said, str):
        _kill(git)
        git.wait()
        seconds, packed = quiet if quiet is not None else (0.0, 0)
        raise GitFailed(quiet_line(command, seconds, packed)) from None
    if said is None or isinstance(said[0], Path):
        _kill(git)
        git.wait()
        if said is not None:
            path, mode = said
            raise GitFailed(blocked_line(path, mode, command)) from None
        raise GitFailed(f"git {command}: took longer than {timeout} s") from None
    return said


def _exchange(git: subprocess.Popen[bytes], stdin: bytes, deadline: float,
              sink: Callable[[bytes], object] | None = None, quiet: float | None = None,
              ) -> tuple[bytes, bytes] | tuple[Path, int] | str | None:
    """``stdin`` written to the running ``git`` (when its input is a pipe) while its output and errors are read, to
    their end and its exit, looking at it every :data:`WATCH_S` seconds (:func:`blocked_open`): its output and
    errors; the file it waits to open and its mode when it is seen waiting on a FIFO; ``None`` past ``deadline``
    (``time.monotonic()``); ``"quiet"`` when it has taken no input and said nothing for ``quiet`` seconds (when
    given). Written in non-blocking runs as the pipe takes them (``Popen.communicate`` retried after
    its timeout writes no more of its input: 40,000 blob ids to ``git cat-file --batch-check`` waited for ever).
    ``sink``, when given, takes each chunk of the output as it comes (none kept: the output given is then empty).
    Raises nothing."""
    import selectors
    import time

    output: dict[int, list[bytes]] = {}
    view = memoryview(stdin)
    at = 0
    with selectors.DefaultSelector() as selector:
        if git.stdin is not None:
            if view:
                os.set_blocking(git.stdin.fileno(), False)
                selector.register(git.stdin, selectors.EVENT_WRITE)
            else:
                git.stdin.close()
        for stream in (git.stdout, git.stderr):
            if stream is not None:
                output[stream.fileno()] = []
                selector.register(stream, selectors.EVENT_READ)
        heard = time.monotonic()
        look = heard + WATCH_S
        while True:
            now = time.monotonic()
            if now >= deadline:
                return None
            if quiet is not None and now - heard >= quiet:
                return "quiet"
            if now >= look:
                for pid in _descendants(git.pid):
                    blocked = blocked_open(pid)
                    if blocked is not None:
                        return blocked
                look = now + WATCH_S
            if not selector.get_map():
                try:
                    git.wait(min(deadline, look) - now)
                except subprocess.TimeoutExpired:
                    continue
                break
            for key, _ in selector.select(min(deadline, look) - now):
                if key.fileobj is git.stdin:
                    try:
                        at += os.write(key.fd, view[at:at + (1 << 16)])
                        heard = time.monotonic()
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        at = len(view)  # git stopped reading: what it says tells why
                    if at >= len(view):
                        selector.unregister(key.fileobj)
                        git.stdin.close()
                    continue
                chunk = os.read(key.fd, 1 << 16)
                heard = time.monotonic()
                if chunk and sink is not None and key.fileobj is git.stdout:
                    sink(chunk)
                elif chunk:
                    output[key.fd].append(chunk)
                else:
                    selector.unregister(key.fileobj)
    parts = [b"".join(output.get(s.fileno(), [])) if s is not None else b"" for s in (git.stdout, git.stderr)]
    return parts[0], parts[1]


def not_started(error: OSError) -> str:
    """The line saying git could not be started (its pipes or process not made): under ``ulimit -n 8`` ``diff`` and
    ``fact show --history`` said "standard output: Too many open files", the command line's last resort for an
    error without a file name (attack round 42)."""
    why = error.strerror or str(error)
    if error.errno in (errno.EMFILE, errno.ENFILE):
        why += " (raise the limit on open files: ulimit -n)"
    return f"git: cannot be started: {why}"


@contextlib.contextmanager
def failing_git(where: object) -> Iterator[None]:
    """Turn a git command that fails where passprice expects it to succeed (in a checkout already found, on a commit
    already resolved) into :class:`InputError`: ``WHERE: git ls-files failed (fatal: index file smaller than
    expected)``. ``GIT_INDEX_FILE=/dev/null passprice diff`` ended in a traceback (attack round 29)."""
    try:
        yield
    except subprocess.CalledProcessError as e:
        args = [str(a) for a in (e.cmd[1 + len(SETTINGS):] if isinstance(e.cmd, list) else [])]
        command = next((f"git {a}" for a in args if not a.startswith("-")), "git")
        raise InputError(f"{where}: {command} failed ({git_says(e)})") from None


def git_says(error: subprocess.CalledProcessError) -> str:
    """What went wrong, in git's words: the last ``fatal:`` or ``error:`` line git wrote on stderr, else its last line,
    else its exit status. git's advice after the line (``To add an exception for this directory, call:`` and a
    tab-indented command, for a repository of another owner) was shown as what went wrong (attack round 29)."""
    from passprice.errors import escaped

    text = [line.strip() for line in (error.stderr or b"").decode("utf-8", "replace").splitlines() if line.strip()]
    said = [line for line in text if line.startswith(("fatal:", "error:"))]
    return escaped((said or text)[-1]) if text else f"exit status {error.returncode}"


def refuses_owner(error: subprocess.CalledProcessError) -> bool:
    """Whether git failed because the repository belongs to another user (``safe.directory``: "detected dubious
    ownership"), as a CI job's checkout often does in a container."""
    return b"dubious ownership" in (error.stderr or b"")


class OwnerRefused(InputError):
    """git refuses to read a checkout another user owns (:func:`refuses_owner`); its line is :func:`owner_line`'s."""


class GitFailed(InputError):
    """git fails to read a folder for a reason other than its being in no repository (a config file git cannot read:
    ``fatal: bad config line 1 in file ~/.gitconfig``): said in git's words, not as "not a git checkout"."""


def owner_line(folder: object, error: subprocess.CalledProcessError) -> str:
    """The line for a repository git refuses to read because another user owns it (:func:`refuses_owner`)."""
    return (f"{folder}: git refuses to read this checkout ({git_says(error)}: another user owns it); if you trust "
            f"it, allow it: git config --global --add safe.directory PATH (the path git names)")


def read_by_passprice(rel: str) -> bool:
    """Whether passprice reads the file at ``rel`` (a POSIX path relative to a root) when it compares two sides:
    a ``.toml`` file directly in a folder of ``facts/`` or ``registry/`` (cards, drafting methods, routing records,
    stacks, checkpoints, servings, measured runs), a ``.toml`` file of ``locks/`` or ``sources/``, a ``.json`` file
    of ``schema/``, and a ``.py`` file of the code (``src/passprice``). Nothing else is read: a ``.bin``, a README, a
    file in a deeper folder, an editor's lock file (:func:`passprice.registry.editor_lock`)."""
    from passprice.registry import editor_lock

    parts = rel.split("/")
    if editor_lock(parts[-1]):
        return False  # an editor's lock file (Emacs's .#FILE), as the registry's listing passes over it
    if parts[0] == "src":
        return rel.endswith(".py")
    if parts[0] in ("facts", "registry"):
        return len(parts) == 3 and rel.endswith(".toml")
    if parts[0] in ("locks", "sources"):
        return len(parts) == 2 and rel.endswith(".toml")
    if parts[0] == "schema":
        return len(parts) == 2 and rel.endswith(".json")
    return False


def lock_of_locks(rel: str) -> bool:
    """Whether ``rel`` (a POSIX path relative to a root) names a lock file of ``locks/``, as ``check`` lists them
    (``locks/NAME.lock.toml``, read by passprice). Raises nothing."""
    parts = rel.split("/")
    return len(parts) == 2 and parts[0] == "locks" and rel.endswith(".lock.toml") and read_by_passprice(rel)


def lock_alias(rel: str, target: str) -> str | None:
    """The lock file (``locks/NAME.lock.toml``) that a symbolic link at ``rel`` leading to ``target`` (the link's
    text) is a second name of, as ``check`` reads such a link (:func:`passprice.check.alias_lines`): ``rel`` a lock
    file of ``locks/`` and ``target`` another lock file's plain name in that folder (no ``/``); ``None`` for any other
    link (refused, :func:`linked`). The caller asks that the target is a regular file of the same side. ``check``
    judges the lock once, under the target's name, and warns of the link; a review read the link as "a symbolic
    link … compares the files themselves" (exit 2) where ``check`` on the same tree warned (exit 0):
    tests/test_odds165.py. Raises nothing."""
    parts = rel.split("/")
    if not lock_of_locks(rel):
        return None
    if "/" in target or "\0" in target or target == parts[1] or not read_by_passprice(f"locks/{target}") \
            or not target.endswith(".lock.toml"):
        return None
    return f"locks/{target}"


def too_large(where: str, size: int) -> str:
    """The line refusing the file at ``where`` (``revision:path`` or a path) of ``size`` bytes."""
    return f"{where}: {size:,} bytes, past the {schema.MAX_TOML_BYTES:,}-byte cap on a passprice file (not read)"


class Unread(bytes):
    """What a side holds for a revision's blob past the cap its readers read it within (a registry record past its
    kind's cap, ``schema/*.json`` past :data:`passprice.schema.MAX_SCHEMA_BYTES`, a module past
    :data:`passprice.pins.MODULE_BYTES`), sized by ``git ls-tree -l`` and never read: a few bytes naming the blob,
    with its id (``blob``, hex) and its ``size`` in bytes. Its file is written as a sparse file of ``size`` bytes
    (:func:`write_side_file`), so each reader finds it past its cap by ``stat`` and refuses it in its own line, as it
    refuses such a file in a work tree, and the review reports it with the rest (issue 13).

    Equal to another :class:`Unread` of the same blob, and to the bytes of a file of the same size whose git blob id
    (the SHA-1, or SHA-256 for a 64-digit id, of ``blob SIZE\\0`` and the bytes: git's object format) is ``blob``: a
    work tree's copy of the committed file is the same file, not a change."""

    blob: str
    size: int

    def __new__(cls, blob: str, size: int) -> Unread:
        made = super().__new__(cls, f"\0unread blob {blob} of {size} bytes\n".encode("ascii"))
        made.blob, made.size = blob, size
        return made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Unread):
            return self.blob == other.blob
        if not isinstance(other, bytes) or len(other) != self.size:
            return False
        import hashlib

        found = hashlib.new("sha256" if len(self.blob) == 64 else "sha1", b"blob %d\0" % len(other))
        found.update(other)
        return found.hexdigest() == self.blob

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.blob)


def file_blob_id(path: Path, chunk: int = 1 << 20) -> str | None:
    """The git blob id (SHA-1, the object format of git's default) of the regular file at ``path``, hashed in chunks
    of ``chunk`` bytes (never held whole); ``None`` when it cannot be read, or changed size while it was hashed. A
    repository of SHA-256 objects names the same file otherwise: its committed copy then differs from the work
    tree's (shown changed). Raises nothing."""
    import hashlib

    from passprice.files import open_regular

    try:
        with open_regular(path) as handle:  # a FIFO swapped in after the lstat is refused, not waited on
            size = os.fstat(handle.fileno()).st_size
            found = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
            read = 0
            while block := handle.read(chunk):
                found.update(block)
                read += len(block)
    except (OSError, InputError):
        return None
    return found.hexdigest() if read == size else None


def write_side_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` (a side's file) at ``path``: its bytes, or for :class:`Unread` a sparse file of its size (no
    byte of it written or read). Raises :class:`OSError`."""
    with open(path, "wb") as out:
        if isinstance(data, Unread):
            out.truncate(data.size)
        else:
            out.write(data)


def submodule(path: str, where: str = "") -> InputError:
    """The refusal of the submodule (or nested checkout) at ``path`` (``facts/cards``), seen ``where`` (``at
    REVISION``, or empty for the work tree)."""
    at = f" {where}" if where else ""
    return InputError(
        f"{path}: a git submodule{at}; passprice reads no submodules (keep the files in this repository: "
        f"git rm --cached {path}, then add the folder's files and commit)"
    )


def registry_folder(rel: str) -> bool:
    """Whether ``rel`` (a POSIX path relative to a root) is a folder whose files passprice reads: ``facts``,
    ``registry``, ``locks``, ``sources``, ``schema``, or a folder directly in ``facts`` or ``registry``
    (``facts/cards``)."""
    parts = rel.split("/")
    return (len(parts) == 1 and parts[0] in ("facts", "registry", "locks", "sources", "schema")) or (
        len(parts) == 2 and parts[0] in ("facts", "registry")
    )


def linked(path: str, where: str = "") -> InputError:
    """The refusal of a symbolic link at ``path`` (``facts/cards/x.toml``, or a folder: ``facts/cards``), seen
    ``where`` (``at REVISION``, or empty for the work tree), where passprice reads a file (:func:`read_by_passprice`)
    or a folder of them (:func:`registry_folder`). Left out, as it was, a review said "no changes" for a card added
    as a link, "removed" for a card turned into a link to another card's file, and every card "removed" (while the
    locks priced them unchanged) for ``facts/cards`` linked to a folder inside the registry, where ``check`` and
    ``price`` in that checkout read what the link names."""
    at = f" {where}" if where else ""
    return InputError(
        f"{path}: a symbolic link{at}; passprice diff compares the files themselves (commit the file, or the "
        "folder's files, in place of the link)"
    )


def not_a_file(path: str, mode: int, where: str = "") -> InputError:
    """The refusal of ``path`` (``locks/x.lock.toml``), a file passprice reads (:func:`read_by_passprice`), when it
    is not a regular file but of ``mode`` (``st_mode``: a folder, a FIFO, a socket, a device), seen ``where`` (``at
    REVISION``, or empty for the work tree), in the words ``check`` fails it with. Left out, as it was, a review of a
    FIFO or a folder in place of a lock said ``1 lock affected, 1 removed`` and exited 0, while ``check`` on the same
    tree exited 2 (``1 lock file does not read``; tests/test_fix157.py). Asked of ``locks/`` only: elsewhere (a
    FIFO or folder named like a card) the review's own ``check`` of the side fails it, in its report."""
    at = f" {where}" if where else ""
    if stat.S_ISDIR(mode):
        return InputError(f"{escaped(path)}{at}: is a folder, not a file")
    return InputError(f"{escaped(path)}{at}: is {kind(mode)}, not a regular file: passprice reads regular files only")


def side_too_large(label: str, total: int) -> InputError:
    """The refusal of a side whose files add up to ``total`` bytes."""
    return InputError(
        f"{label}: the files passprice reads add up to {total:,} bytes, past {MAX_SIDE_BYTES:,} (a registry is a "
        "few hundred KiB)"
    )


def blob_sizes(top: Path, blobs: Iterable[str]) -> dict[str, int | None]:
    """Each blob's size in bytes, ``None`` when it is missing, from one ``git cat-file --batch-check``; nothing of
    the blobs is read."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    out = run_git(top, ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                  "".join(f"{b}\n" for b in wanted).encode("ascii"))  # fmt: skip
    sizes: dict[str, int | None] = {}
    for blob, line in zip(wanted, out.splitlines(), strict=False):
        fields = line.split(b" ")
        sizes[blob] = int(fields[2]) if len(fields) == 3 and fields[1] == b"blob" else None
    return sizes


#: The most bytes of blobs :func:`blob_sha256` is asked to stream for one revision's documents
#: (:meth:`passprice.review.sides.Checkout.documents`): past them none is hashed, and the review says which document and
#: why. A blob's size is not its cost in the repository: 512 MiB of zeros is 523 KB of pack (zlib at level 9), and
#: hashing it as git streams it took 1.34 s of CPU (git's inflating 0.93 s, passprice's sha256 and pipe 0.41 s; the same
#: sha256 in process, the yardstick, 0.35 s; load 8.5); 1 GiB is 1,045,032 bytes of pack and took 1.57 s of CPU (4.7 s
#: wall, load 6.3), on top of the review's own (left92). The bound is on the size git states, whatever made it: a pack's
#: deltas (copies of a base object, not built here) may make more of fewer bytes, up to git's 60 s.
HASHED_BYTES = 512 << 20


def blob_sha256(top: Path, blob: str, timeout: float | None = None) -> str | None:
    """The sha256 (hex) of the content of ``blob`` in the repository at ``top``, streamed from ``git cat-file blob``
    in chunks (a blob past any cap on what is read whole: a registry document of gigabytes); ``None`` when git does
    not give it. Watched as :func:`run_git` watches git, within ``timeout`` seconds (:data:`GIT_TIMEOUT_S` when not
    given): git86, a blob swapped for a FIFO past the look-through (:func:`_config_guard`) held it for ever. Raises
    :class:`InputError` as :func:`run_git` does (git not installed, a config file that blocks) and
    :class:`GitFailed` when git waits on a FIFO or runs past ``timeout``."""
    import hashlib
    import time

    _config_guard(top, False)
    timeout = GIT_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    digest = hashlib.sha256()
    try:
        git = subprocess.Popen(
            ["git", *SETTINGS, "cat-file", "blob", blob], cwd=top, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=git_environment(False), **_OWN_GROUP,
        )  # fmt: skip
    except FileNotFoundError:
        raise InputError("git: not found on PATH; comparing revisions needs git (or give two folders)") from None
    except OSError as e:
        raise GitFailed(not_started(e)) from None
    with git:
        _watched(git, b"", deadline, "cat-file", timeout, digest.update, quiet_bound(top))
    return digest.hexdigest() if git.returncode == 0 else None


class _Quiet(Exception):
    """A git that said nothing for :func:`quiet_bound`'s seconds (:meth:`_Batch.read`)."""


class _Batch:
    """One ``git cat-file --batch`` process in the repository at ``top``, kept open so that every :func:`read_blobs`
    of one command (``diff``: both sides' registry files, code, documents and links, six reads a side) is answered
    by it, not by a process each (issue 16, round 26: ``diff HEAD~200 HEAD`` started 25 git processes, 12 of them
    ``cat-file --batch``). Requests go in runs of at most :data:`_REQUEST_BYTES` bytes, each run's answers read in
    full before the next is written: git has then taken every request written, so a run always fits the pipe (a
    page at least) and neither side waits on the other. git flushes its answer after each object (no
    ``--buffer``). Started at the first read, not before: a command that reads no blob starts no process."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.git: subprocess.Popen[bytes] | None = None
        self.started = False  # the process is started at the first read: a diff of two folders reads no blob

    def _start(self) -> None:
        self.started = True
        try:
            _config_guard(self.top, False)
        except InputError:
            return  # a config file that blocks git: the read runs git the one-shot way, which says so
        try:
            self.git = subprocess.Popen(
                ["git", *SETTINGS, "cat-file", "--batch"], cwd=self.top, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=git_environment(False), **_OWN_GROUP,
            )  # fmt: skip
        except OSError:
            self.git = None  # not started: read_blobs runs git as before, and says why in its words
            return

    def read(self, wanted: list[str], timeout: float | None = None, kind: str = "blob") -> dict[str, bytes] | None:
        """The content of each object of ``wanted`` (ids) git finds of type ``kind``, as :func:`read_blobs` gives it;
        ``None`` when the process has ended or fails, or is seen waiting to open a FIFO (:func:`blocked_open`, looked at
        whenever git has said nothing for :data:`WATCH_S`; the process is then ended, and the caller reads them the
        one-shot way, which raises as git fails and names the FIFO: git86, an object swapped for a FIFO after the
        look-through held this read for ever). Raises :class:`GitFailed` (the process ended) past ``timeout`` seconds
        (:data:`GIT_TIMEOUT_S` when not given), or when git says nothing for :func:`quiet_bound`'s seconds after a run
        of requests was written (left103)."""
        import select
        import time

        if not self.started:
            self._start()
        git = self.git
        if git is None or git.stdin is None or git.stdout is None:
            return None
        timeout = GIT_TIMEOUT_S if timeout is None else timeout
        deadline = time.monotonic() + timeout
        quiet, packed = quiet_bound(self.top)
        heard = [time.monotonic()]  # when git last said something (or was asked)
        out = git.stdout.fileno()
        held = bytearray()  # read from git, not yet taken

        def take(size: int | None) -> bytes:
            """The next ``size`` bytes git says, or its next line (``None``), waiting for them watched."""
            while True:
                end = held.find(b"\n") + 1 if size is None else size if len(held) >= size else 0
                if end:
                    said = bytes(held[:end])
                    del held[:end]
                    return said
                now = time.monotonic()
                if now >= deadline:
                    raise TimeoutError
                if now - heard[0] >= quiet:
                    raise _Quiet
                if not select.select([out], [], [], min(WATCH_S, deadline - now))[0]:
                    if any(blocked_open(pid) is not None for pid in _descendants(git.pid)):
                        raise OSError("git cat-file --batch waits to open a FIFO")
                    continue
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    raise OSError("git cat-file --batch ended")
                heard[0] = time.monotonic()
                held.extend(chunk)

        contents: dict[str, bytes] = {}
        want = kind.encode("ascii")
        try:
            at = 0
            while at < len(wanted):
                run: list[str] = []
                size = 0
                while at < len(wanted) and (not run or size + len(wanted[at]) + 1 <= _REQUEST_BYTES):
                    run.append(wanted[at])
                    size += len(wanted[at]) + 1
                    at += 1
                git.stdin.write("".join(f"{b}\n" for b in run).encode("ascii"))
                git.stdin.flush()
                heard[0] = time.monotonic()
                for blob in run:
                    header = take(None)
                    fields = header[:-1].split(b" ")
                    if len(fields) < 3 or fields[-1] == b"missing":
                        continue
                    body = take(int(fields[2]) + 1)
                    if fields[1] == want:  # a tree or commit named under a file's mode is no file's content
                        contents[blob] = body[:-1]
        except TimeoutError:
            self.close(kill=True)
            raise GitFailed(f"git cat-file: took longer than {timeout} s") from None
        except _Quiet:  # left103: said nothing for the quiet bound
            self.close(kill=True)
            raise GitFailed(quiet_line("cat-file", quiet, packed)) from None
        except (OSError, ValueError):
            self.close(kill=True)
            return None
        return contents

    def close(self, kill: bool = False) -> None:
        """End the process (its input closed: git exits; ``kill``: killed, a git that may be waiting on a FIFO) and
        wait for it."""
        git, self.git = self.git, None
        if git is None:
            return
        if kill:
            _kill(git)
        with contextlib.suppress(OSError):
            if git.stdin is not None:
                git.stdin.close()
        try:
            git.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - git does not exit on its input's end
            git.kill()
            git.wait()
        if git.stdout is not None:
            git.stdout.close()


#: The most bytes of requests :class:`_Batch` writes before reading their answers: within a pipe's least capacity.
_REQUEST_BYTES = 4096

#: The open :class:`_Batch` of each repository top, while :func:`one_batch` holds it.
_BATCHES: dict[Path, _Batch] = {}


@contextlib.contextmanager
def one_batch(top: Path) -> Iterator[None]:
    """While open, :func:`read_blobs` in ``top`` is answered by one ``git cat-file --batch`` process (:class:`_Batch`)
    instead of one a call; the process ends when it closes. Nested use for the same ``top`` keeps the outer one."""
    if top in _BATCHES:
        yield
        return
    batch = _BATCHES[top] = _Batch(top)
    try:
        yield
    finally:
        _BATCHES.pop(top, None)
        batch.close()


def read_blobs(top: Path, sizes: Mapping[str, int], timeout: float | None = None, kind: str = "blob"
               ) -> dict[str, bytes]:
    """The content of each blob of ``sizes`` (its id → its size, known beforehand and within the caller's cap), from
    one ``git cat-file --batch`` (the one :func:`one_batch` holds open for ``top``, if any; else one run within
    ``timeout`` seconds, as :func:`run_git` takes them). A blob git no longer finds is left out, and so is an object
    that is not a blob (not of type ``kind``: ``"tree"`` for a caller listing folders): a tree entry of a file's
    mode may name any object (``git update-index --cacheinfo 100644,TREE,PATH`` commits one), and a tree's bytes
    were read as the file (``diff`` said ``byte 29: not UTF-8 text``; tests/test_attack177.py); its caller says so
    (:func:`not_a_blob`). Raises as :func:`run_git` does."""
    wanted = list(sizes)
    if not wanted:
        return {}
    batch = _BATCHES.get(top)
    if batch is not None:
        found = batch.read(wanted, timeout, kind)
        if found is not None:
            return found
    data = run_git(top, ["cat-file", "--batch"], "".join(f"{b}\n" for b in wanted).encode("ascii"), timeout=timeout)
    contents: dict[str, bytes] = {}
    at = 0
    for blob in wanted:
        eol = data.find(b"\n", at)
        if eol < 0:
            break
        header = data[at:eol].split(b" ")
        at = eol + 1
        if len(header) < 3 or header[-1] == b"missing":
            continue
        size = int(header[2])
        if header[1] == kind.encode("ascii"):
            contents[blob] = data[at : at + size]
        at += size + 1
    return contents


def not_a_blob(top: Path, where: str, obj: str) -> InputError:
    """The refusal of a file ``where`` (``COMMIT:PATH``) whose tree entry names ``obj``, an object :func:`read_blobs`
    and :func:`blob_sizes` do not give as a file's content: missing from the repository (a partial clone's, not
    fetched), or of another type (a tree or commit under a file's mode, which ``git fsck`` reports), asked of the
    repository at ``top`` (``git cat-file -t``). Raises nothing: it returns the error."""
    try:
        kind = run_git(top, ["cat-file", "-t", obj]).decode("ascii", "replace").strip()
    except (subprocess.CalledProcessError, InputError):
        kind = ""
    if not kind or kind == "blob":
        return InputError(f"{where}: object {obj} is missing from the repository")
    return InputError(f"{where}: object {obj} is a {kind}, not a file's content (a tree entry of a file's mode names "
                      "it, which git fsck reports): commit the file itself")


#: Bytes one blob :func:`read_named` reads may have (a source record or document an audit reads as committed, a lock
#: the history search reads): what a passprice file may have, :data:`~passprice.schema.MAX_TOML_BYTES`. Past it the
#: blob is refused (:class:`BlobTooLarge`), not read.
NAMED_BYTES = schema.MAX_TOML_BYTES
#: Bytes the blobs of one :func:`read_named` call may have in all (each within :data:`NAMED_BYTES`): past it they are
#: refused, none read. Attack74: an audit read five committed source records of 60 MiB each (2.6 MB of ``.git``),
#: 415 MB of memory, and a lock citing more sources went on adding 64 MiB a record (and as much for its document).
#: 16 MiB (tests/test_blobcap169.py), where it was 64 MiB; each record is read within its kind's cap and a document past
#: :data:`NAMED_READ_BYTES` is streamed, not read (``read_named``'s ``caps`` and ``hashed``), so this is sixteen
#: documents of 1 MiB (the registry's ``sources/`` holds 173 KB in all at session 50).
NAMED_TOTAL_BYTES = 16 << 20
#: The most bytes of a blob :func:`read_named` reads among its ``hashed`` names (documents, compared by their digest):
#: a larger one is given as :class:`Unread` (its id and size), for :func:`blob_sha256` to stream. As
#: :data:`passprice.review.sides.DOCUMENT_READ_BYTES`.
NAMED_READ_BYTES = 1 << 20


class BlobTooLarge(InputError):
    """A blob :func:`read_named` was asked for holds more than :data:`NAMED_BYTES`; its line names ``COMMIT:PATH``
    and the size git gave (not read)."""


def read_named(top: Path, names: Iterable[str], timeout: float | None = None,
               caps: Mapping[str, tuple[int, str]] | None = None, hashed: Iterable[str] = ()) -> dict[str, bytes]:
    """The content of each blob ``names`` names (``COMMIT:PATH``, PATH relative to ``top``), from one ``git cat-file
    --batch`` whatever their number: what ``git show COMMIT:PATH`` prints of a blob, byte for byte (issue 13: an
    audit of a lock ran one ``git show`` a source it cites). Each is sized first (``git cat-file --batch-check``, one
    process for all), and only then read, by the object id that check gave (so a name whose commit moves between
    the two reads what was sized). Left54: the batch's output was held whole, however large its blobs (a 100 MB
    document committed under a source an audit cites was read into memory before anything looked at its size), as
    :func:`passprice.modelhistory.committed_list` read the list of pricing models before left52. A name git does not
    find, one that is no blob (a folder), or one holding a line break (which the batch cannot carry) is left out.
    ``timeout``: seconds, as :func:`run_git` takes them, for the two git processes together. Raises
    :class:`BlobTooLarge`, one line naming ``COMMIT:PATH`` and its size, when a blob holds more than
    :data:`NAMED_BYTES`, or the largest one when the blobs hold more than :data:`NAMED_TOTAL_BYTES` in all (nothing
    is read then), and :class:`subprocess.CalledProcessError` and :class:`InputError` as
    :func:`run_git` does. ``caps``: a name's own cap in bytes, below :data:`NAMED_BYTES`, with what names it in the
    refusal (a source record's kind cap: such a record was read up to 64 MiB where its reader reads 256 KiB,
    tests/test_blobcap169.py). ``hashed``: names (documents) whose blob past :data:`NAMED_READ_BYTES` is given as
    :class:`Unread`, not read and not counted in the total, for :func:`blob_sha256` to stream (within
    :data:`NAMED_BYTES` too)."""
    import time

    wanted = [n for n in dict.fromkeys(names) if "\n" not in n and "\r" not in n]
    if not wanted:
        return {}
    deadline = None if timeout is None else time.monotonic() + timeout

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.001)

    checked = run_git(top, ["cat-file", "--batch-check"],
                      "".join(f"{n}\n" for n in wanted).encode("utf-8", "surrogateescape"), timeout=left())
    ids: dict[str, str] = {}  # a name -> its blob's id, sized within the cap
    sizes: dict[str, int] = {}  # a blob's id -> its size
    streamed: dict[str, bytes] = {}  # a hashed name past NAMED_READ_BYTES -> Unread
    hashing = set(hashed)
    for name, line in zip(wanted, checked.split(b"\n"), strict=False):
        header = line.split(b" ")
        # a found object: "OID TYPE SIZE"; else "NAME missing" (or "ambiguous"), its name holding any spaces
        if len(header) != 3 or not header[2].isdigit() or header[1] != b"blob":
            continue
        size = int(header[2])
        cap, what = (caps or {}).get(name, (NAMED_BYTES, "gitread.NAMED_BYTES"))
        if cap >= NAMED_BYTES:
            cap, what = NAMED_BYTES, "gitread.NAMED_BYTES"
        if size > cap:
            raise BlobTooLarge(f"{escaped(name)}: {size:,} bytes as committed, past the {cap:,}-byte cap on "
                               f"a file passprice reads from git ({what}; not read)")
        if name in hashing and size > NAMED_READ_BYTES:
            streamed[name] = Unread(header[0].decode("ascii", "replace"), size)
            continue
        ids[name] = header[0].decode("ascii", "replace")
        sizes[ids[name]] = size
    blobs = list(dict.fromkeys(ids.values()))
    if not blobs:
        return streamed
    total = sum(sizes[b] for b in blobs)
    if total > NAMED_TOTAL_BYTES:
        largest = max(ids, key=lambda name: sizes[ids[name]])
        raise BlobTooLarge(
            f"{escaped(largest)}: {total:,} bytes as committed in {len(blobs):,} files read together (this one "
            f"{sizes[ids[largest]]:,}), past the {NAMED_TOTAL_BYTES:,}-byte cap on what passprice reads from git at "
            "once (gitread.NAMED_TOTAL_BYTES; none read)")
    data = run_git(top, ["cat-file", "--batch"], "".join(f"{b}\n" for b in blobs).encode("ascii"), timeout=left())
    found: dict[str, bytes] = {}
    at = 0
    for blob in blobs:
        eol = data.find(b"\n", at)
        if eol < 0:
            break
        header = data[at:eol].split(b" ")
        at = eol + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # "OID missing": gone since it was sized
        size = int(header[2])
        if header[1] == b"blob":
            found[blob] = data[at : at + size]
        at += size + 1
    return {**{name: found[blob] for name, blob in ids.items() if blob in found}, **streamed}


#: The most bytes one blob may have to be searched by :func:`pickaxe` (the largest lock registered holds 170 KB): a
#: larger one is not read, and counts as holding no occurrence. Git79: ``git log -S`` read every version whole, so
#: a 256 MiB lock of zeros changed in 4 commits (a 448 KB ``.git``) held ``reproduce DIGEST``'s search 7.1 s.
PICKAXE_BLOB_BYTES = 4 << 20
#: The most bytes :func:`pickaxe` reads in all (each distinct blob once, the oldest first): this checkout's history
#: of ``locks/`` held 1,193 distinct blobs, 26.8 MB, at session 43. Past it the newer blobs are not read, and the
#: search says so (:meth:`Pickaxe.cut`, git86). Reading costs about 2 ms of CPU a MiB (git's inflating, the pipe)
#: and counting up to 3.5 ms (a blob of the text's last byte repeated, CPython's search skipping least; 0.2 ms for
#: others): 256 MiB took 1.5 s of CPU (``benchmarks/history_pickaxe.py``), so the cap is 128 MiB.
PICKAXE_TOTAL_BYTES = 128 << 20
#: The most bytes of blobs one ``git cat-file --batch`` of :func:`pickaxe` reads (each run's counted, then dropped).
_PICKAXE_RUN_BYTES = 16 << 20


@attrs.frozen
class Pickaxe:
    """What :func:`pickaxe` found and what it could not read. ``found``: the commits, oldest first, that change the
    count of the text, each as its id, its date (YYYY-MM-DD) and the files so changed (path from the repository's
    top, new blob id); ``order``: the id of every commit that changed a file under the folder, oldest first;
    ``searched``: how many of them, from the oldest, had their blobs read within :data:`PICKAXE_TOTAL_BYTES` (the
    rest past it, none of their new blobs read); ``unread``: each blob not read (over :data:`PICKAXE_BLOB_BYTES`, or
    past the total) as the index in ``order`` of the first commit naming it and its size in bytes. Git86: a search
    cut by a cap said "not found" as if it had read everything."""

    found: list[tuple[str, str, list[tuple[str, str]]]]
    order: tuple[str, ...] = ()
    searched: int = 0
    unread: tuple[tuple[int, int], ...] = ()

    def cut(self, upto: str | None = None) -> str | None:
        """One clause saying what the search did not read, or ``None`` when nothing it needed was left unread:
        with ``upto`` (a commit id of ``found``), the blobs of that commit and older ones (an older commit may have
        written the text: the oldest found is then the oldest among those read); without, all of them (the text
        may be in one: "not found" is then "not found in what was read"). Sizes in bytes."""
        last = self.order.index(upto) if upto is not None and upto in self.order else len(self.order)
        missed = [size for at, size in self.unread if at <= last]
        if not missed:
            return None
        caps = (f"past the cap {'was' if len(missed) == 1 else 'were'} not read (gitread.PICKAXE_BLOB_BYTES "
                f"{PICKAXE_BLOB_BYTES:,} bytes a blob, PICKAXE_TOTAL_BYTES {PICKAXE_TOTAL_BYTES:,} in all, oldest "
                "first)")
        blobs = f"{len(missed):,} blob{'s' * (len(missed) != 1)} ({sum(missed):,} bytes)"
        if upto is not None:
            return f"{blobs} of that commit or older ones {caps}: an older commit may have written it"
        if not self.searched:
            return f"not searched: none of the {len(self.order):,} commits read whole; {blobs} {caps}"
        read = (f"the {self.searched:,} oldest of the {len(self.order):,} commits"
                if self.searched < len(self.order) else f"the {len(self.order):,} commits")
        return f"not found in {read} searched; {blobs} {caps}"


def pickaxe(top: Path, text: str, folder: str, timeout: float) -> Pickaxe:
    """What ``git log --reverse -S TEXT -- FOLDER`` finds in the repository at ``top``, with each blob read once and
    within caps (:class:`Pickaxe`): the commits, oldest first, that change the number of times ``text`` (UTF-8)
    occurs in a file under ``folder`` (``locks/``, from ``top``), each as its id, its date (``%cs``, YYYY-MM-DD) and
    the files so changed (their path from the repository's top, as ``git show COMMIT:PATH`` takes it, and new blob
    id, the zero id when the commit removed the file or made the path a gitlink: a gitlink's id is never a file's
    content), and what was not read. The files each commit changes come
    from one ``git log --raw`` (trees only, no blob read); each distinct blob of them, sized in one ``git cat-file
    --batch-check``, is read once (``git cat-file --batch``, :data:`_PICKAXE_RUN_BYTES` a run) and its occurrences
    counted (non-overlapping, as git counts them); one over :data:`PICKAXE_BLOB_BYTES` is not read and holds none,
    and the blobs are read oldest first up to :data:`PICKAXE_TOTAL_BYTES` in all, none past the first that does not
    fit (so what is read is every commit up to :attr:`Pickaxe.searched`: its callers ask for the oldest commit that
    wrote a text, which a newest-first read could answer with a newer one, silently). Merges are passed over, as
    ``git log -S`` passes them; renames are not followed (``--no-renames``: a renamed file is its old path's
    removal and its new path's addition, which adds commits after the one that wrote the text, never before it).
    Git79: ``git log -S`` inflated and searched every version of every file the commit changes, however large or
    many: a 256 MiB blob of zeros changed in 4 commits (448 KB of ``.git``) took 7.1 s; one blob under many names is
    read once here, where ``-S`` read it once a name. ``timeout``: seconds for every git it runs together. Raises as
    :func:`run_git` does (:class:`GitFailed` past ``timeout``)."""
    import time

    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GitFailed(f"git log: the search of {folder} took longer than {timeout} s")
        return remaining

    # NUL-separated (-z): each path as it is; without it git C-quotes a path holding '"', '\\' or a control
    # character ('"locks/a\\"b.lock.toml"'), and that text was handed on as the path (attack87)
    said = run_git(top, ["log", "-z", "--no-renames", "--reverse", "--raw", "--no-abbrev", "--format=commit %H %cs",
                         "--", folder], timeout=left())
    commits: list[tuple[str, str, list[tuple[str, str, str]]]] = []
    fields: list[str] = []  # the last ":OLDMODE NEWMODE OLDID NEWID STATUS", its path the next field
    for field in said.decode("utf-8", "surrogateescape").split("\0"):
        if fields:
            # under folder: git's pathspec keeps no other. A gitlink's id (mode 160000) names a commit of another
            # repository, never this file's content, though git takes any id there: read as the zero id, as a
            # removal or an addition, so a blob named by a gitlink is never credited with writing the text (left182)
            old, new = (fields[2] if fields[0] != ":160000" else "0" * len(fields[2]),
                        fields[3] if fields[1] != "160000" else "0" * len(fields[3]))
            commits[-1][2].append((field, old, new))
            fields = []
            continue
        field = field.lstrip("\n")  # a commit's line ends with a NUL, its files follow a line break
        if field.startswith("commit "):
            commit, _, date = field.removeprefix("commit ").partition(" ")
            commits.append((commit, date, []))
        elif commits and field.startswith(":") and len(field.split()) == 5:
            fields = field.split()
    first: dict[str, int] = {}  # each blob -> the index of the first commit naming it, oldest first
    for at, (_, _, files) in enumerate(commits):
        for _, old, new in files:
            for blob in (old, new):
                if blob.strip("0"):
                    first.setdefault(blob, at)
    counts: dict[str, int] = {}
    unread: list[tuple[int, int]] = []
    searched = len(commits)
    if first:
        checked = run_git(top, ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                          "".join(f"{b}\n" for b in first).encode("ascii", "replace"), timeout=left())
        runs: list[dict[str, int]] = [{}]
        budget = PICKAXE_TOTAL_BYTES
        run_bytes = 0  # of the last run
        for blob, line in zip(first, checked.decode("ascii", "replace").splitlines(), strict=False):
            _, kind, size = ([*line.split(), "", "", ""])[:3]
            if kind != "blob" or not size.isdigit():
                continue
            if int(size) > PICKAXE_BLOB_BYTES or searched < len(commits) or int(size) > budget:
                if int(size) <= PICKAXE_BLOB_BYTES:  # the first past the total: it and every newer blob unread
                    searched = min(searched, first[blob])
                unread.append((first[blob], int(size)))
                continue
            budget -= int(size)
            if run_bytes + int(size) > _PICKAXE_RUN_BYTES:
                runs.append({})
                run_bytes = 0
            runs[-1][blob] = int(size)
            run_bytes += int(size)
        wanted = text.encode("utf-8")
        for run in runs:
            for blob, data in read_blobs(top, run, timeout=left()).items():
                counts[blob] = data.count(wanted)
    found: list[tuple[str, str, list[tuple[str, str]]]] = []
    for commit, date, files in commits[:searched]:
        changed = [(path, new) for path, old, new in files
                   if counts.get(old, 0) != counts.get(new, 0)]
        if changed:
            found.append((commit, date, changed))
    return Pickaxe(found, tuple(c for c, _, _ in commits), searched, tuple(unread))


def is_shallow(top: Path) -> bool:
    """Whether the checkout at ``top`` is a shallow clone (``git rev-parse --is-shallow-repository``)."""
    try:
        return run_git(top, ["rev-parse", "--is-shallow-repository"]).strip() == b"true"
    except subprocess.CalledProcessError:
        return False


#: The most bytes of a commit object :func:`at_shallow_boundary` reads (its header and message): this checkout's
#: largest of 3,662 commits held 3,376 bytes at session 50. A commit of a 60 MB message (584 KB of ``.git``) was
#: read whole to look at its header's ``parent`` lines, 149 MB of memory (tests/test_blobcap169.py).
COMMIT_BYTES = 1 << 20


def at_shallow_boundary(top: Path, commit: str) -> bool:
    """Whether ``commit`` is a boundary of a shallow clone: its object names a parent that git, in this clone, does
    not walk to (``git cat-file commit`` against ``git rev-list --parents``). The object is sized first (``git
    cat-file -s``) and read only within :data:`COMMIT_BYTES`. Raises :class:`InputError`, one line naming the commit,
    its size and the cap, for a commit object past it (not read)."""
    try:
        size = run_git(top, ["cat-file", "-s", commit]).strip()
        if size.isdigit() and int(size) > COMMIT_BYTES:
            raise InputError(f"commit {escaped(commit)[:12]}: {int(size):,} bytes as committed (its message), past "
                             f"the {COMMIT_BYTES:,}-byte cap on a commit passprice reads (gitread.COMMIT_BYTES; "
                             "not read)")
        raw = run_git(top, ["cat-file", "commit", commit])
        walked = run_git(top, ["rev-list", "--parents", "-n", "1", commit]).split()
    except subprocess.CalledProcessError:
        return False
    head = raw.split(b"\n\n", 1)[0]
    return any(line.startswith(b"parent ") for line in head.split(b"\n")) and len(walked) == 1


def shallow_reason(commit: str) -> str:
    """Why a history stops at ``commit`` in a shallow clone, and how to read the rest."""
    return (
        f"a shallow clone: history cut at {commit[:12]}; git fetch --unshallow (or fetch-depth: 0 in "
        "actions/checkout) reads the rest"
    )


def read_sized(path: Path) -> bytes:
    """The bytes of the regular file ``path``, its size looked at (``stat``) before a byte is read. Raises
    :class:`InputError` naming ``path``: past :data:`~passprice.schema.MAX_TOML_BYTES` (with its size), or as
    :func:`passprice.files.read_regular` does."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        found = None  # read_regular names what is wrong
    if found is not None and stat.S_ISREG(found.st_mode) and found.st_size > schema.MAX_TOML_BYTES:
        raise InputError(too_large(str(path), found.st_size))
    return read_regular(path, schema.MAX_TOML_BYTES)


def sized_code(folder: Path | None) -> Path | None:
    """``folder`` (a side's ``src/passprice``, or ``None``), once each module file in it (``*.py``, what the
    pricing-model digest reads) is sized by ``stat`` within the cap. Raises :class:`InputError` naming the file and
    its size."""
    if folder is None:
        return None
    for path in sorted(folder.glob("*.py")):
        try:
            found = os.stat(path)
        except (OSError, ValueError):
            continue  # the digest's own read says what is wrong
        if stat.S_ISREG(found.st_mode) and found.st_size > schema.MAX_TOML_BYTES:
            raise InputError(too_large(str(path), found.st_size))
    return folder


def work_tree_files(folder: Path, tops: Iterable[str],
                    caps: Callable[[str], int | None] | None = None) -> dict[str, bytes]:
    """The files passprice reads (:func:`read_by_passprice`) below ``folder``'s folders ``tops``, by POSIX path
    relative to ``folder``, as ``check`` and ``price`` name them: a hidden file's name too (``locks/.x.lock.toml``
    is a lock to them); hidden folders left out, and every other file left unread.
    Each is sized (``lstat``) before it is read; one past ``caps(rel)`` (the most its reader reads, when given) is
    not read whole but an :class:`Unread` of its git blob id (:func:`file_blob_id`), its reader refusing the file
    itself by its size, as for a revision's blob past the cap (not counted in :data:`MAX_SIDE_BYTES`).

    Raises :class:`InputError`: a file past :data:`~passprice.schema.MAX_TOML_BYTES` (naming it and its size), a
    folder holding its own ``.git`` (a submodule or nested checkout, by name), a symbolic link where passprice reads
    a file (:func:`linked`; one of ``locks/`` to a regular lock file beside it, :func:`lock_alias`, is that lock under
    a second name, as ``check`` reads it: left out), a folder, FIFO, socket or device in place of a lock
    (:func:`not_a_file`; elsewhere one is left out, for the side's ``check`` to fail), the files adding up past
    :data:`MAX_SIDE_BYTES`, more than :func:`side_files_cap`, or more files of ``facts/`` than
    :func:`side_fact_files_cap`."""
    out: dict[str, bytes] = {}
    total = 0
    cap = side_files_cap()
    fact_cap, facts = side_fact_files_cap(), 0
    for top in tops:
        base = folder / top
        if os.path.islink(base) and registry_folder(top):
            raise linked(top)  # read through, its files were compared while `check` judged them (or refused them)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            rel_dir = here.relative_to(folder).as_posix()
            if ".git" in dirnames or ".git" in filenames:
                raise submodule(rel_dir)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for d in dirnames:  # a linked folder is not walked: its cards were shown removed, yet priced
                if registry_folder(f"{rel_dir}/{d}") and os.path.islink(here / d):
                    raise linked(f"{rel_dir}/{d}")
                if rel_dir == "locks" and read_by_passprice(f"{rel_dir}/{d}"):
                    raise not_a_file(f"{rel_dir}/{d}", stat.S_IFDIR)  # see not_a_file
            for name in sorted(filenames):
                rel = f"{rel_dir}/{name}"
                if not read_by_passprice(rel):
                    continue
                path = here / name
                try:
                    found = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISLNK(found.st_mode):
                    try:
                        aliased = lock_alias(rel, os.readlink(path))
                        regular = aliased is not None and stat.S_ISREG(os.lstat(folder / aliased).st_mode)
                    except (OSError, ValueError):
                        regular = False
                    if regular:
                        continue  # a second name of the lock beside it, as check reads it (lock_alias)
                    raise linked(rel)
                if not stat.S_ISREG(found.st_mode):
                    if rel_dir == "locks":
                        raise not_a_file(rel, found.st_mode)  # a FIFO: see not_a_file
                    continue  # the side's `check` reads the folder and fails it, in the review's report
                if len(out) >= cap:
                    raise side_too_many(str(folder), cap)
                if holds_facts(rel):
                    facts += 1
                    if facts > fact_cap:
                        raise side_too_many_facts(str(folder), fact_cap)
                most = caps(rel) if caps is not None else None
                if most is not None and most < found.st_size <= schema.MAX_TOML_BYTES:
                    # Read whole, a 60 MB card of the work tree was held (its reader refuses it by its size anyway)
                    blob = file_blob_id(path)
                    if blob is not None:
                        out[rel] = Unread(blob, found.st_size)
                        continue
                data = read_sized(path)
                total += len(data)
                if total > MAX_SIDE_BYTES:
                    raise side_too_large(str(folder), total)
                out[rel] = data
    return dict(sorted(out.items()))


#: The attributes by which git rewrites a file's bytes between the repository and a checkout: ``working-tree-encoding``
#: (re-encoded: under ISO646-KR the committed ``₩`` is a checkout's backslash), ``filter`` (a smudge command, such as
#: git-lfs, which CI runners configure) and ``ident`` (``$Id$`` expanded). ``eol``/``text`` only change line ends,
#: which TOML reads alike; on a file read byte for byte they are :data:`LINE_ENDS`.
REWRITING = ("working-tree-encoding", "filter", "ident")

#: The attributes by which git writes a file's line ends as CRLF in a checkout: ``eol=crlf``, unless ``text`` is
#: unset (``-text``, ``binary``); ``text=auto`` converts a file git finds to be text, as an excerpt is. Asked of the
#: files read byte for byte, the stored excerpts and documents source records name (their sha256 pinned): a
#: committed ``sources/excerpts/*.txt text eol=crlf`` made every fresh checkout's excerpt differ from its pin, and
#: check's "restore it (git checkout -- …)" wrote the same CRLF bytes again (tests/test_fix146.py). A checkout's
#: line ends set by ``core.autocrlf``/``core.eol`` (config, no rule) are not asked here: the pin's mismatch says
#: so (:func:`passprice.sources.excerpt_digest_problem`).
LINE_ENDS = ("text", "eol")

#: The most bytes a ``.gitattributes`` file read from a revision may hold (a few lines in practice).
MAX_ATTRIBUTES_BYTES = 1 << 20


def rewritten_lines(found: Mapping[str, tuple[str, str, str]], where: str = "") -> list[str]:
    """One line for each attribute, value and rule file of ``found`` (path → the rewriting attribute, its value and
    the file whose rule sets it, from :func:`checked_attributes` and :func:`_rule_sources`), naming the first path it
    applies to and how many more, ``where`` (``at REVISION``, or empty for the work tree). Slip 27: with
    ``facts/cards/h200_sxm_141gb.toml working-tree-encoding=ISO646-KR`` committed, a ``₩`` in a note became a
    checkout's backslash, which escaped the note's closing quotes, so the committed card said ``memory.capacity =
    141 GB`` (what the review read: no lock affected, exit 0) and every checkout 150 GB (what ``check`` and
    ``price`` read: drift, exit 0). The file is named (``.git/info/attributes``, a ``core.attributesFile``): a line
    saying "a .gitattributes rule" of a rule in neither sent the reader to files that do not hold it (attack round
    33)."""
    by_rule: dict[tuple[str, str, str], list[str]] = {}
    for path, setting in sorted(found.items()):
        by_rule.setdefault(setting, []).append(path)
    at = f" {where}" if where else ""
    out = []
    for (attribute, value, source), paths in by_rule.items():
        more = f" and {len(paths) - 1:,} more file{'s' if len(paths) > 2 else ''}" if len(paths) > 1 else ""
        rule = attribute if value == "set" else f"{attribute}={value}"
        if attribute == "eol":  # LINE_ENDS: a file read byte for byte (its sha256 pinned, where its record pins one)
            out.append(
                f"{paths[0]}{more}{at}: git writes {'their' if more else 'its'} line ends as CRLF in a checkout "
                f"({rule}, a rule of {escaped(source)}), so a checkout's bytes are not the committed bytes a "
                "review reads (and `git checkout` writes them so again); remove the rule for "
                "passprice's files (or set -text on them)"
            )
            continue
        out.append(
            f"{paths[0]}{more}{at}: git rewrites {'them' if more else 'it'} in a checkout ({rule}, a rule of "
            f"{escaped(source)}), so what a review reads from git is not what check and price read in a checkout; "
            "remove the rule for passprice's files"
        )
    return out


def _line_end_rule(values: Mapping[str, str]) -> tuple[str, str] | None:
    """``("eol", "crlf")`` when the attribute values ``values`` (attribute → git's value) make git write a file's
    line ends as CRLF in a checkout (:data:`LINE_ENDS`: ``eol=crlf`` and ``text`` not unset), else ``None``."""
    if values.get("eol") == "crlf" and values.get("text") != "unset":
        return ("eol", "crlf")
    return None


#: The attributes that decide whether git's config (``core.autocrlf``, ``core.eol``) converts a file's line ends in
#: a checkout (git's convert.c ``convert_attrs``): ``text`` (``crlf``, its older name, where ``text`` is unspecified)
#: and ``eol``.
CONFIG_LINE_ENDS = ("text", "eol", "crlf")

#: The most bytes of a file read byte for byte that :func:`config_rewrites` reads to guess, as git does, whether it
#: is text (an excerpt is a few KB): a larger one is taken for text.
MAX_GUESSED_BYTES = 1 << 24


@attrs.frozen
class LineEndSetting:
    """A git setting by which a checkout writes line ends as CRLF with no attribute rule asking it: ``name``
    (``core.autocrlf`` or ``core.eol``), ``value`` (as written), ``where`` (the config file setting it, labelled
    relative to the registry's root when inside the work tree, or the environment variable) and ``every``: whether
    it converts a file no ``text`` rule marks (``core.autocrlf`` true does: every file git finds to be text;
    ``core.eol=crlf`` converts only the files a ``text`` or ``text=auto`` rule marks)."""

    name: str
    value: str
    where: str
    every: bool


def _git_bool(value: str) -> bool | None:
    """git's boolean ``value`` (config.c ``git_parse_maybe_bool``: true, yes, on or a non-zero integer; false, no,
    off, empty or zero), ``None`` when git takes it for none (git then refuses to run)."""
    low = value.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off", ""):
        return False
    try:
        return int(low, 0) != 0
    except ValueError:
        return None


def config_line_ends(folder: Path) -> LineEndSetting | None:
    """The setting by which git writes line ends as CRLF in a checkout of the repository ``folder`` lies in (git's
    convert.c ``text_eol_is_crlf``, on a system whose native line end is LF): ``core.autocrlf`` true, else, unless
    it is ``input``, ``core.eol=crlf`` (or ``native`` on Windows); ``None`` when neither is set so, ``folder`` is in
    no repository, or a config file git reads is not git config (:func:`work_tree_rewrites` names it). Read from git's
    config files as git reads them, no git run (:func:`passprice.gitconfig.settings`). Raises nothing."""
    from passprice.gitconfig import ConfigUnread, settings

    top = _git_top(folder)
    if top is None:
        return None
    git_dir, common = _git_dirs(_repository_of(top))
    try:
        found = settings(common, git_dir, top, frozenset({"core.autocrlf", "core.eol"}))
    except ConfigUnread:
        return None

    def where(file: str) -> str:
        return escaped(_label(Path(file), top, folder)) if "/" in file else file

    auto = found.get("core.autocrlf")
    if auto is not None:
        if auto.value.strip().lower() == "input":
            return None
        if _git_bool(auto.value):
            return LineEndSetting("core.autocrlf", auto.value, where(auto.file), True)
    eol = found.get("core.eol")
    if eol is not None and (eol.value.lower() == "crlf" or (eol.value.lower() == "native" and os.name == "nt")):
        return LineEndSetting("core.eol", eol.value, where(eol.file), False)
    return None


def _is_binary(data: bytes) -> bool:
    """git's guess that ``data`` is no text (convert.c ``gather_stats`` and ``convert_is_binary``): a NUL, a lone
    carriage return, or more than one byte in 128 that does not print (a control character other than backspace,
    tab, escape and form feed, or DEL; a final ^Z is passed over)."""
    if b"\0" in data or data.count(b"\r") != data.count(b"\r\n"):
        return True
    body = data[:-1] if data.endswith(b"\x1a") else data
    controls = len(body) - len(body.translate(None, _CONTROLS))
    printable = len(body) - controls - body.count(b"\n") - body.count(b"\r")
    return (printable >> 7) < controls


#: The bytes git's ``gather_stats`` counts as not printing (a NUL is a binary file before this counts).
_CONTROLS = bytes([*range(1, 8), 11, *range(14, 27), *range(28, 32), 127])


def _config_converts(values: Mapping[str, str], data: bytes, setting: LineEndSetting) -> bool:
    """Whether a checkout under ``setting`` writes CRLF line ends into the file of committed bytes ``data`` whose
    attributes are ``values`` (:data:`CONFIG_LINE_ENDS`, git's values; empty: none set), as git's convert.c decides
    (``convert_attrs``, ``output_eol``, ``will_convert_lf_to_crlf``): not where ``text`` is unset (``-text``,
    ``binary``) or ``input``, nor where ``eol`` is set (``eol=crlf`` is :data:`LINE_ENDS`' own refusal; ``eol=lf``
    keeps LF); with ``text`` set, where a line ends in LF alone; with ``text=auto`` (or no ``text`` under
    ``core.autocrlf`` true), where too the bytes are text by git's guess (:func:`_is_binary`) and hold no CRLF."""
    text = values.get("text", "unspecified")
    if text == "unspecified":
        text = values.get("crlf", "unspecified")
    eol = values.get("eol", "unspecified")
    if text in ("unset", "input") or eol in ("lf", "crlf"):
        return False
    if text == "set":
        return data.count(b"\n") > data.count(b"\r\n")
    if text != "auto" and not setting.every:
        return False
    return b"\r\n" not in data and b"\n" in data and not _is_binary(data)


def config_rewrites(paths: Mapping[str, bytes | None], values: Mapping[str, Mapping[str, str]],
                    setting: LineEndSetting, where: str = "", prefix: str = "", top: Path | None = None) -> list[str]:
    """The line refusing the files of ``paths`` (each path → its committed bytes, ``None`` when not read: then taken
    for text with a line end) into which a checkout under ``setting`` (:func:`config_line_ends`) writes CRLF line
    ends (:func:`_config_converts`, ``values`` each path's attributes), naming the first and how many more, and
    ``where`` (``at REVISION``, or empty for the work tree); none when it converts none of them. tests/test_odds150.py:
    ``git config core.autocrlf true`` (no rule) was said only after a checkout's excerpt missed its pin. The advice's
    lines (:func:`_unset_text_lines`) go in the registry's own ``.gitattributes``, their patterns relative to its
    folder: ``prefix`` is that folder from the repository's top (``sub/``, or empty at the top), named so (the lines
    put in the top's file would match no path of ``sub/``, tests/test_eol_rules.py). ``top``: the work tree's top,
    whose repository's own rules (``.git/info/attributes``, over every ``.gitattributes``) and the user's
    (``core.attributesFile``) are looked in for the rule setting ``text`` (:func:`_text_rule_file`): a rule there
    is named with its file, and one in ``.git/info/attributes`` is to be removed there, as a ``-text`` line of
    ``.gitattributes`` does not undo it (the advice named ``.gitattributes`` alone: tests/test_odds172.py)."""
    found = [path for path, data in sorted(paths.items())
             if _config_converts(values.get(path, {}), b"x\n" if data is None else data, setting)]
    if not found:
        return []
    more = len(found) - 1
    named = f"{found[0]} and {more:,} more file{'s' if more > 1 else ''}" if more else found[0]
    at = f" {where}" if where else ""
    fix = "false" if setting.name == "core.autocrlf" else "lf"
    unset = (f"unset it where git is run ({setting.where}: `git -c` or GIT_CONFIG_*)" if "/" not in setting.where
             else f"set `git config {setting.name} {fix}` in this repository")
    ruled = next((r for r in (_text_rule(values.get(path, {})) for path in found) if r), None)
    rule = (f"applied by the .gitattributes rule `{ruled}` on {'them' if more else 'it'}" if ruled
            else "no .gitattributes rule")
    outside = _text_rule_file(top, [f"{prefix}{path}" for path in found]) if ruled and top is not None else None
    if outside is not None:
        rule = f"applied by the rule `{outside[1]}` of {escaped(outside[0].label)} on {'them' if more else 'it'}"
    if outside is not None and outside[0].place == "info":
        # .git/info/attributes is over every .gitattributes: a -text line committed there leaves its rule applied
        return [f"{named}{at}: git writes {'their' if more else 'its'} line ends as CRLF in a checkout "
                f"({setting.name}={setting.value}, a setting of {setting.where}, {rule}), so a checkout's "
                "bytes are not the committed bytes a review reads (and `git checkout` writes them so "
                f"again); {unset}, or remove the rule `{outside[1]}` from {escaped(outside[0].label)}, which is over "
                "every .gitattributes (a -text line of .gitattributes does not undo it), and set -text on passprice's "
                f"files in {_rules_file(prefix)} ({_unset_text_lines(found)}, committed: every machine's checkout "
                "then keeps their bytes)"]
    return [f"{named}{at}: git writes {'their' if more else 'its'} line ends as CRLF in a checkout "
            f"({setting.name}={setting.value}, a setting of {setting.where}, {rule}), so a checkout's "
            "bytes are not the committed bytes a review reads (and `git checkout` writes them so "
            f"again); {unset}, or set -text on passprice's files in {_rules_file(prefix)} ({_unset_text_lines(found)}, "
            f"committed{', after the `' + ruled + '` rule' if ruled else ''}: every machine's checkout then keeps "
            "their bytes)"]


def _text_rule_file(top: Path, paths: list[str]) -> tuple[RuleFile, str] | None:
    """The file of rules outside the ``.gitattributes`` files (:func:`_repository_rules` of the work tree whose top is
    ``top``: ``.git/info/attributes`` first, the one over them all, then the user's and the system's) whose last
    line matching one of ``paths`` (POSIX, from ``top``; :func:`pattern_matches`) sets ``text`` (``text``,
    ``text=auto``, ``crlf``), with that line's pattern and attribute (``*.txt text``); ``None`` when none does, or
    its files do not read. Raises nothing."""
    from passprice.gitconfig import ConfigUnread

    try:
        files = _repository_rules(_repository_of(top), top=top)
    except (ConfigUnread, OSError, ValueError):  # a config that does not read: .gitattributes named, as before
        return None
    for rule_file in reversed(files):
        try:
            text = read_sized(rule_file.path).decode("utf-8")
        except (InputError, OSError, UnicodeDecodeError, ValueError):
            continue
        setting = None
        for raw in text.split("\n"):
            words = raw.strip(" \t\r").split()
            if not words or words[0].startswith("#") or not any(pattern_matches(words[0], p) for p in paths):
                continue
            for word in words[1:]:
                name = word.lstrip("-!").partition("=")[0]
                if name in ("text", "crlf"):
                    setting = f"{words[0]} {word}" if not word.startswith(("-", "!")) else None
        if setting is not None:
            return rule_file, setting
    return None


def _rules_file(prefix: str) -> str:
    """The ``.gitattributes`` the advice of :func:`config_rewrites` names for a registry at ``prefix`` (its folder from
    the repository's top, ``/``-ended; empty at the top): ``.gitattributes`` at the top, else the registry folder's
    own, with the folder its patterns are relative to."""
    if not prefix:
        return ".gitattributes"
    return (f"the registry folder's .gitattributes, {escaped(prefix)}.gitattributes from the repository's top, whose "
            f"patterns are relative to {escaped(prefix)}")


def _text_rule(values: Mapping[str, str]) -> str:
    """The ``text`` attribute ``values`` (git's values) set, as a .gitattributes rule writes it (``text``,
    ``text=auto``; ``crlf``, its older name), or empty when none is set."""
    for name in ("text", "crlf"):
        value = values.get(name, "unspecified")
        if value == "set":
            return name
        if value not in ("unspecified", "unset"):
            return f"{name}={value}"
    return ""


#: The ``.gitattributes`` lines that keep the files passprice reads byte for byte (their sha256 pinned) in every
#: registry from its start byte-exact in a checkout, whatever git's config says (``core.autocrlf`` true, Git for
#: Windows' default): the stored excerpts, the two documents the reference ``kind = "registry"`` sources cite that
#: are no TOML file, and the JSON Schemas ``check`` compares with passprice's own byte for byte
#: (:func:`passprice.registry.schema_copy_drift`: an autocrlf clone warned of all 11, tests/test_fix171.py). The one
#: list: ``init`` writes it (:func:`gitattributes_text`), this repository ships it, and
#: :func:`config_rewrites`' advice names it first (tests/test_eol_rules.py compares the three). Each pattern is
#: relative to the folder of the ``.gitattributes`` holding it: the registry's root.
BYTE_EXACT_RULES = ("facts/cards/README.md -text", "facts/stacks/README.md -text", "schema/*.json -text",
                    "sources/excerpts/*.txt -text")


def gitattributes_text() -> str:
    """The ``.gitattributes`` ``init`` writes into a new registry's root and this repository ships: a comment saying
    why, then :data:`BYTE_EXACT_RULES`, one a line."""
    return ("# passprice reads these files byte for byte (their sha256 pinned): git must never write their line ends\n"
            "# as CRLF in a checkout (core.autocrlf true, Git for Windows' default). Patterns are relative to this\n"
            "# file's folder, the registry's root. Written by passprice init; keep these lines.\n"
            + "".join(f"{rule}\n" for rule in BYTE_EXACT_RULES))


def missing_rules(data: bytes) -> list[str]:
    """The lines of :data:`BYTE_EXACT_RULES` that the ``.gitattributes`` of bytes ``data`` does not hold (as a line
    of its own; blanks between the pattern and ``-text`` may differ), in their order: what to add to a user's file
    ``init`` leaves alone."""
    held = {" ".join(line.split()) for line in data.decode("utf-8", "replace").splitlines()}
    return [rule for rule in BYTE_EXACT_RULES if rule not in held]


#: A line of a file of attribute rules that sets nothing but ``-text`` on the paths its pattern matches (a pattern of
#: letters, digits, ``_.*-`` between slashes, an optional leading one; no ``**``, brackets, ``?``, ``!`` or quotes,
#: whose reading passprice would have to repeat), as :data:`BYTE_EXACT_RULES` are: such a rule never makes git
#: rewrite a file (:data:`REWRITING`) nor write CRLF (:data:`LINE_ENDS`), so no git need be asked of it.
_PLAIN_RULE = re.compile(r"(/?[A-Za-z0-9_.*-]+(?:/[A-Za-z0-9_.*-]+)*)[ \t]+-text")


def plain_rules(data: bytes) -> list[str] | None:
    """The patterns of the file of attribute rules of bytes ``data`` when every line of it is blank, a comment or a
    :data:`_PLAIN_RULE` (``-text`` alone on a simple pattern, ``**`` left out), else ``None`` (git is asked). A
    ``.gitattributes`` holding :data:`BYTE_EXACT_RULES` alone is such a file: ``check`` reads it without running git,
    so its result memo keeps the run (with git run, a warm ``check`` of this repository's registry took 456 ms of CPU
    instead of 25 ms, docs/PERFORMANCE.md)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    patterns = []
    for raw in text.split("\n"):
        line = raw.strip(" \t\r")
        if not line or line.startswith("#"):
            continue
        found = _PLAIN_RULE.fullmatch(line)
        if found is None or "**" in found.group(1):
            return None
        patterns.append(found.group(1))
    return patterns


def pattern_matches(pattern: str, path: str) -> bool:
    """Whether the plain pattern ``pattern`` (:func:`plain_rules`) of a file of rules matches ``path`` (POSIX,
    relative to that file's folder), as git matches it (``gitattributes(5)``, ``gitignore(5)``; case as written):
    a pattern without a slash matches a path's last name at any depth, one with a slash (a leading one dropped) the
    whole path from the file's folder, ``*`` matching within one name only."""
    import fnmatch

    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rpartition("/")[2], pattern)
    parts = pattern.removeprefix("/").split("/")
    names = path.split("/")
    return len(parts) == len(names) and all(fnmatch.fnmatchcase(n, p) for n, p in zip(names, parts, strict=True))


#: The most .gitattributes lines :func:`_unset_text_lines` adds to :data:`BYTE_EXACT_RULES`; past them one line,
#: ``* -text``, covers all.
MOST_TEXT_LINES = 6


def _unset_text_lines(paths: list[str]) -> str:
    """The .gitattributes lines that unset ``text`` on every path of ``paths`` (POSIX, relative to the registry's
    root), as an example to commit in the registry's root: :data:`BYTE_EXACT_RULES` (what ``init`` writes and this
    repository ships), then, for the paths none of them matches (:func:`pattern_matches`: a document a registry's
    own ``kind = "registry"`` source cites), one ``FOLDER/*.EXT -text`` for each folder and extension holding two or
    more, the path itself for one alone (``docs/notes.md -text``), ``* -text`` alone past :data:`MOST_TEXT_LINES`
    of them or where such a path holds a character a pattern would read otherwise (a space, ``*?[\\"#!``), all
    sorted. Before, the example was ``sources/excerpts/*.txt -text`` alone: committed, the documents ``kind =
    "registry"`` sources cite (``facts/cards/README.md``) still failed (tests/test_fix157.py)."""
    rules = [rule.split()[0] for rule in BYTE_EXACT_RULES]
    left = [p for p in paths if not any(pattern_matches(rule, p) for rule in rules)]
    groups: dict[tuple[str, str], list[str]] = {}
    for path in left:
        folder, _, name = path.rpartition("/")
        dot = name.rfind(".")
        groups.setdefault((folder, name[dot:] if dot > 0 else ""), []).append(path)
    lines: list[str] = []
    for (folder, ext), group in groups.items():
        lines += [f"{folder}/*{ext} -text"] if len(group) > 1 and folder and ext else [f"{p} -text" for p in group]
    if len(lines) > MOST_TEXT_LINES or any(re.search(r'[\s*?\[\\"#!]', p) for p in left):
        return "`* -text`"
    return ", ".join(f"`{line}`" for line in sorted({*BYTE_EXACT_RULES, *lines}))


def _committed_bytes(cwd: Path, rels: list[str], commit: str | None = None, prefix: str = "") -> (
        dict[str, bytes | None]):
    """Each path of ``rels`` (relative to ``cwd``; at ``commit`` relative to the root, ``prefix`` its folder from the
    repository's top ``cwd``) with its committed bytes: the index's blob (a work tree), or ``commit``'s; ``None``
    where there is none or it is past :data:`MAX_GUESSED_BYTES`. Raises as :func:`run_git`."""
    if not rels:
        return {}
    if commit is None:
        listing = run_git(cwd, ["--literal-pathspecs", "ls-files", "-z", "-s", "--", *rels])
    else:
        listing = run_git(cwd, ["--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--",
                                *(f"{prefix}{rel}" for rel in rels)])
    blobs: dict[str, str] = {}
    for record in os.fsdecode(listing).split("\0"):
        meta, _, name = record.partition("\t")
        fields = meta.split()
        if len(fields) == 3:
            blob = fields[1] if commit is None else fields[2]
            blobs[name.removeprefix(prefix) if commit is not None else name] = blob
    sizes = blob_sizes(cwd, blobs.values())
    contents = read_blobs(cwd, {b: s for b, s in sizes.items() if s is not None and s <= MAX_GUESSED_BYTES})
    return {rel: contents.get(blobs[rel]) if rel in blobs else None for rel in rels}


def work_tree_config_rewrites(folder: Path, pinned: list[str], rules: bool) -> list[str]:
    """:func:`config_rewrites` of the files ``pinned`` (relative to ``folder``, read byte for byte: stored excerpts,
    documents) in the work tree ``folder`` lies in, under its :func:`config_line_ends` setting, their committed
    bytes the index's (a file not in it: its work tree bytes, CRLF read as LF), their attributes asked of git where
    ``rules`` (a file of attribute rules lies where it could reach them), else none set; none without such a setting,
    or when git fails (:func:`work_tree_rewrites` says why). Raises nothing."""
    setting = config_line_ends(folder) if pinned else None
    if setting is None:
        return []
    try:
        values = _attribute_values(folder, pinned, None, CONFIG_LINE_ENDS) if rules else {}
        data = _committed_bytes(folder, pinned)
    except (InputError, OSError, subprocess.CalledProcessError):
        return []
    for rel, got in data.items():
        if got is None:
            with contextlib.suppress(InputError, OSError, ValueError):
                data[rel] = read_regular(folder / rel, MAX_GUESSED_BYTES).replace(b"\r\n", b"\n")
    top = _git_top(folder)
    prefix = "" if top is None else Path(os.path.relpath(folder, top)).as_posix()
    return config_rewrites(data, values, setting, prefix="" if prefix == "." else f"{prefix}/", top=top)


def index_keeps_bytes(folder: Path, rel: str) -> bool:
    """Whether the index's ``.gitattributes`` rules (``git check-attr --cached``, what a checkout reads) unset
    ``text`` on ``rel`` (relative to ``folder``): a checkout then writes its committed bytes whatever git's config
    says, so a file holding CRLF from an earlier checkout needs restoring alone (tests/test_fix171.py: the advice to
    remove the rule or setting, or set ``-text``, was given with the ``-text`` rule committed). ``False`` when git
    fails or is not installed. Raises nothing."""
    try:
        out = run_git(folder, ["check-attr", "--cached", "-z", "text", "--", rel])
    except (InputError, GitFailed, OSError, subprocess.CalledProcessError):
        return False
    fields = os.fsdecode(out).split("\0")
    return len(fields) >= 3 and fields[2] == "unset"


def checked_attributes(cwd: Path, paths: Iterable[str], scratch: Path | None = None,
                       names: tuple[str, ...] = REWRITING) -> dict[str, tuple[str, str]]:
    """The paths of ``paths`` (relative to ``cwd``, inside a git repository; ``scratch``: one of passprice's own,
    whose only user and system rules are the file ``scratch`` names) that git rewrites in a checkout: each with the
    first attribute of ``names`` (:data:`REWRITING`) set on it and its value (``set`` for one set without a value),
    from one ``git check-attr -z --stdin``; for ``names`` :data:`LINE_ENDS`, the paths whose line ends git writes as
    CRLF (:func:`_line_end_rule`), each with ``("eol", "crlf")``. Raises :class:`subprocess.CalledProcessError` when
    git fails (``cwd`` in no repository) and :class:`InputError` when git is not installed."""
    values = _attribute_values(cwd, paths, scratch, names)
    found: dict[str, tuple[str, str]] = {}
    for path, got in values.items():
        if names == LINE_ENDS:
            rule = _line_end_rule(got)
        else:
            rule = next(((a, got[a]) for a in names if got.get(a, "unset") not in ("unspecified", "unset")), None)
        if rule is not None:
            found[path] = rule
    return found


def _attribute_values(cwd: Path, paths: Iterable[str], scratch: Path | None,
                      names: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Each path of ``paths`` with git's value of each attribute of ``names`` on it (``set``, ``unset``,
    ``unspecified`` or the value), from one ``git check-attr -z --stdin`` run in ``cwd`` (``scratch`` as
    :func:`checked_attributes`'). Raises as :func:`checked_attributes`."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    own = ["-c", f"core.attributesFile={scratch}"] if scratch is not None else []
    out = run_git(cwd, [*own, "check-attr", "-z", "--stdin", *names], "".join(f"{p}\0" for p in wanted).encode(
        "utf-8", "surrogateescape"), scratch=scratch is not None)
    fields = os.fsdecode(out).split("\0")
    values: dict[str, dict[str, str]] = {}
    for at in range(0, len(fields) - 2, 3):
        path, attribute, value = fields[at : at + 3]
        values.setdefault(path, {}).setdefault(attribute, value)
    return values


def _there(path: Path) -> bool:
    """Whether anything (a link too) is at ``path`` (``os.path.lexists``), a place looked at outside the files a
    command reads. When nothing is, an open of it is tried (and fails): the result memo's recorder sees opens, not
    ``lstat`` (:mod:`passprice.memorecord`), and stamps an open that failed as an input, so a replay holds only while
    nothing is there. ``check`` looked for a ``.gitattributes`` in each folder above the registry root by ``lexists``
    alone: after a rule was written in the repository's top folder, the memo replayed "all holds" of a ``check`` a
    fresh run refuses (attack round 31). Something there is not opened (a device, a FIFO): the command then runs git,
    which no memo keeps. Raises nothing."""
    if os.path.lexists(path):
        return True
    with contextlib.suppress(OSError, ValueError):
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)))
    return False


@attrs.frozen
class RuleFile:
    """A file of attribute rules git reads for every path of a repository, besides its ``.gitattributes`` files:
    ``path``, ``label`` (how a line names it: ``.git/info/attributes``, ``/etc/gitattributes``, ``PATH (the
    core.attributesFile of ~/.gitconfig)``) and ``place``: ``info`` (the repository's own, over every
    ``.gitattributes``) or ``global`` (the user's or the system's, under them)."""

    path: Path
    label: str
    place: str


def _label(path: Path, top: Path, base: Path) -> str:
    """``path`` for a line: relative to ``base`` (a registry's root, at or below ``top``) when inside ``top`` (a work
    tree's top: ``../.git/info/attributes``), else as it is."""
    rel = os.path.relpath(path, top)
    return str(path) if rel == ".." or rel.startswith("../") else Path(os.path.relpath(path, base)).as_posix()


def _repository_of(top: Path) -> Path:
    """The repository git reads for the work tree whose top is ``top``: the one ``GIT_DIR`` names when it is set (a
    hook's, a script's; relative to the working folder, as git takes it), else ``top/.git``."""
    named = os.environ.get("GIT_DIR")
    return Path(os.path.abspath(named)) if named else top / ".git"


def _git_dirs(dot_git: Path) -> tuple[Path, Path]:
    """The repository folder and its common folder for ``dot_git`` (a work tree's ``.git``): both ``dot_git`` when
    it is a folder; for a file ``gitdir: PATH`` (``git init --separate-git-dir``, a submodule, ``git worktree add``)
    the folder it names and the one that folder's ``commondir`` names (itself when none). Raises nothing (a file not
    read leaves ``dot_git``)."""
    common = git_dir = dot_git
    if os.path.isfile(dot_git):
        with contextlib.suppress(InputError, OSError, UnicodeDecodeError, ValueError):
            text = read_sized(dot_git).decode("utf-8")
            if text.startswith("gitdir:"):
                git_dir = common = dot_git.parent / text[len("gitdir:"):].strip()
                shared = git_dir / "commondir"
                if os.path.isfile(shared):
                    common = Path(os.path.normpath(git_dir / read_sized(shared).decode("utf-8").strip()))
    return git_dir, common


def _repository_rules(dot_git: Path, base: Path | None = None, top: Path | None = None) -> list[RuleFile]:
    """The files of attribute rules git reads for every path of the repository whose ``.git`` is ``dot_git``, besides
    its ``.gitattributes`` files, the lowest precedence first: the system's (``/etc/gitattributes``, unless
    ``GIT_ATTR_NOSYSTEM``), the user's (the ``core.attributesFile`` its config files set,
    :func:`passprice.gitconfig.attributes_file`, else ``$XDG_CONFIG_HOME/git/attributes`` or
    ``~/.config/git/attributes``) and the repository's own ``info/attributes`` (in the common folder of a work tree
    added by ``git worktree add``, whose ``.git`` is a file naming its folder). ``facts/cards/a40.toml ident`` in
    ``.git/info/attributes`` was applied by git and passed by ``check`` (attack round 31); a rule in the file
    ``core.attributesFile`` names (in ``.git/config`` or ``~/.gitconfig``) was applied by git and passed by
    ``check``, ``diff`` and ``fact show --history`` (attack round 33). Raises
    :class:`passprice.gitconfig.ConfigUnread` naming a config file git reads that is not git config. Each file is
    labelled relative to ``base`` (the work tree's top unless given) when in the work tree (``top``: ``dot_git``'s
    folder unless given; a repository ``GIT_DIR`` names outside it is labelled by its own path, attack round 39)."""
    from passprice.gitconfig import attributes_file

    top = dot_git.parent if top is None else top
    base = top if base is None else base
    git_dir, common = _git_dirs(dot_git)
    places = []
    if os.environ.get("GIT_ATTR_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        places.append(RuleFile(Path("/etc/gitattributes"), "/etc/gitattributes", "global"))
    setting = attributes_file(common, git_dir, top)
    if setting is None:
        config = os.environ.get("XDG_CONFIG_HOME") or ""
        if not os.path.isabs(config):
            config = os.path.join(os.path.expanduser("~"), ".config")
        user = Path(config) / "git" / "attributes"
        places.append(RuleFile(user, str(user), "global"))
    elif setting.value:
        places.append(RuleFile(Path(setting.value), f"{setting.value}, the core.attributesFile of "
                               f"{_label(Path(setting.file), top, base) if '/' in setting.file else setting.file}",
                               "global"))
    info = common / "info" / "attributes"
    places.append(RuleFile(info, _label(info, top, base), "info"))
    return places


def _attribute_files(folder: Path, tops: Iterable[str]) -> bool:
    """Whether a ``.gitattributes`` file lies in ``folder``, a folder above it (up to the one holding ``.git``), or a
    folder of ``tops`` below it or directly in one (``facts/cards``): the files whose rules could apply to a file
    passprice reads; or a file of rules git reads besides them, for every path of the repository
    (:func:`_repository_rules`). Each place is looked at through :func:`_there`, so a replayed ``check`` holds only
    while nothing is there still (the folders above the root are no part of the tree the memo stamps). Raises
    nothing. A repository ``GIT_DIR`` names is git's, not the one found above ``folder``: its config and
    ``info/attributes`` are read too (``GIT_DIR=../other/.git``, whose ``info/attributes`` put ``ident`` on a card,
    made git apply the rule while ``check`` said "all holds", attack round 37)."""
    return bool(_rule_files_found(folder, tops, first=True))


def _rule_files_found(folder: Path, tops: Iterable[str], first: bool = False) -> list[tuple[Path, Path | None]]:
    """The files of attribute rules :func:`_attribute_files` looks for that are there, each with the folder its
    patterns are relative to (a ``.gitattributes``' own; the work tree's top for the repository's and the user's
    files; ``None`` where that cannot be told: a repository ``GIT_DIR`` names); only the first found with ``first``.
    Raises :class:`passprice.gitconfig.ConfigUnread` as :func:`_repository_rules` does."""
    found: list[tuple[Path, Path | None]] = []
    named = os.environ.get("GIT_DIR")
    if named:
        found += [(rules.path, None) for rules in _repository_rules(Path(os.path.abspath(named)))
                  if _there(rules.path)]
        if found and first:
            return found
    here = folder
    while True:
        if _there(here / ".gitattributes"):
            found.append((here / ".gitattributes", here))
            if first:
                return found
        if _there(here / ".git"):
            found += [(rules.path, here) for rules in _repository_rules(here / ".git") if _there(rules.path)]
            break
        if here.parent == here:
            break
        here = here.parent
    if found and first:
        return found
    for top in tops:
        base = folder / top
        if _there(base / ".gitattributes"):
            found.append((base / ".gitattributes", base))
            if first:
                return found
        try:
            inner = [e for e in os.scandir(base) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        found += [(Path(e.path) / ".gitattributes", Path(e.path)) for e in inner
                  if os.path.lexists(Path(e.path) / ".gitattributes")]
        if found and first:
            return found
    return found


def _plain_patterns(found: list[tuple[Path, Path | None]]) -> list[tuple[Path, str]] | None:
    """Each pattern of the files of rules ``found`` (:func:`_rule_files_found`) with the folder it is relative to,
    when every one of those files is plain (:func:`plain_rules`: nothing but ``-text`` rules, so git rewrites no file
    by them), read without running git; ``None`` when one is not (or is not a regular file within
    :data:`MAX_ATTRIBUTES_BYTES`, or its folder cannot be told): git is then asked. Raises nothing."""
    patterns: list[tuple[Path, str]] = []
    for path, base in found:
        data = _rule_text(path) if base is not None else None
        plain = plain_rules(data) if data is not None else None
        if plain is None or base is None:
            return None
        patterns += [(base, pattern) for pattern in plain]
    return patterns


def _covered(patterns: list[tuple[Path, str]], folder: Path, rels: Iterable[str]) -> set[str]:
    """The paths of ``rels`` (relative to ``folder``) that a pattern of ``patterns`` (:func:`_plain_patterns`)
    matches (:func:`pattern_matches`), so git unsets ``text`` on them. A path matched by git alone (under
    ``core.ignoreCase``) is left out: judged as under no rule, at worst refused where git would not convert it."""
    covered = set()
    for rel in rels:
        for base, pattern in patterns:
            inside = Path(os.path.relpath(folder / rel, base)).as_posix()
            if not inside.startswith("../") and inside != ".." and pattern_matches(pattern, inside):
                covered.add(rel)
                break
    return covered


def work_tree_rewrites(folder: Path, tops: Iterable[str],
                       also: Callable[[], Iterable[str]] | None = None) -> list[str]:
    """The lines (:func:`rewritten_lines`) refusing the files passprice reads (:func:`read_by_passprice`) in the
    folders ``tops`` of ``folder`` (a registry's root), and the paths ``also`` gives (relative to ``folder``: the
    stored excerpts and documents source records name, which a review refuses a rewrite rule on as it does a card:
    ``check`` passed a ``working-tree-encoding`` rule on an excerpt, tests/test_left131.py; and, read byte for byte,
    a line-end rule, :data:`LINE_ENDS`, tests/test_fix146.py; asked only when a file of
    rules lies where it could reach them), that git rewrites in a checkout by a rule of a file of
    attribute rules: none when no such file lies where its rules could reach them (:func:`_attribute_files`, so a
    registry with none spawns no git), or ``folder`` is in no git repository (no checkout rewrites anything), or
    git is not installed; one line naming a config file git reads that is not git config (whether it names a file
    of rules cannot be told). Only names are listed; no file passprice reads is read. Raises nothing."""
    from passprice.gitconfig import ConfigUnread

    tops = tuple(tops)
    try:
        found = _rule_files_found(folder, tops)
    except ConfigUnread as e:
        return [str(e)]
    # no rule, or none but -text (the .gitattributes init writes, BYTE_EXACT_RULES): no file is rewritten, and no git
    # is run (a run of git is one the result memo cannot keep); a setting of git's config (core.autocrlf) may still
    # convert the files read byte for byte that no -text rule covers
    patterns = _plain_patterns(found)
    if patterns is not None:
        if also is None or config_line_ends(folder) is None:
            return []
        pinned = [rel for rel in also() if not read_by_passprice(rel)]
        covered = _covered(patterns, folder, pinned)
        return work_tree_config_rewrites(folder, [rel for rel in pinned if rel not in covered], False)
    rels = []
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(folder / top):
            rel_dir = Path(dirpath).relative_to(folder).as_posix()
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and rel_dir.count("/") < 1)
            rels += [f"{rel_dir}/{name}" for name in sorted(filenames) if read_by_passprice(f"{rel_dir}/{name}")]
    named = list(also()) if also is not None else []
    rels += [rel for rel in named if rel not in rels]
    lines = _asked_rewrites(folder, rels)
    # read byte for byte (an excerpt's sha256 pinned): a line-end rule changes them too (LINE_ENDS); a TOML file
    # passprice reads (a card named as a source's document) reads alike with either line ends, as a review asks
    pinned = [rel for rel in named if not read_by_passprice(rel)]
    if pinned:
        lines += [line for line in _asked_rewrites(folder, pinned, LINE_ENDS) if line not in lines]
        lines += work_tree_config_rewrites(folder, pinned, True)
    return lines


def file_rewrites(top: Path, rel: str) -> list[str]:
    """The line (:func:`rewritten_lines`) refusing the one file ``rel`` (relative to ``top``, a git checkout's top)
    when git rewrites it in a checkout by a rule of a file of attribute rules: what ``check`` refuses of the
    registry's files (:func:`work_tree_rewrites`), for the file ``fact show --history`` reads, whose versions in git
    are then not what ``price`` read of it in a checkout (attack round 31: an ``ident`` or ``working-tree-encoding``
    rule on a card was refused by ``check`` and ``diff`` and passed by the history). Empty when no such file lies
    where its rules could reach it (no git spawned); a config file git reads that is not git config is named, as
    :func:`work_tree_rewrites` does. Raises nothing."""
    from passprice.gitconfig import ConfigUnread

    try:
        if _plain_patterns(_rule_files_found((top / rel).parent, ())) is not None:  # none, or -text rules alone
            return []
    except ConfigUnread as e:
        return [str(e)]
    return _asked_rewrites(top, [rel])


def _git_top(folder: Path) -> Path | None:
    """The folder at or above ``folder`` that holds a ``.git`` (the work tree's top), or ``None``."""
    here = folder
    while not os.path.lexists(here / ".git"):
        if here.parent == here:
            return None
        here = here.parent
    return here


def _rule_text(path: Path) -> bytes | None:
    """The bytes of the file of attribute rules at ``path``, or ``None`` when it is not a regular file within
    :data:`MAX_ATTRIBUTES_BYTES` (git then says what it makes of it; the rule is named less exactly)."""
    try:
        return read_regular(path, MAX_ATTRIBUTES_BYTES)
    except (InputError, OSError, ValueError):
        return None


def _work_tree_layers(top: Path, paths: Iterable[str], base: Path) -> list[tuple[str, str, bytes]]:
    """The files of attribute rules git reads for ``paths`` (relative to ``top``, a work tree's top), the lowest
    precedence first, each as its label, its place (``global``, ``info``, or its path from ``top``) and its bytes:
    the system's and user's files, the ``.gitattributes`` files from ``top`` down to each path's folder, the
    repository's ``info/attributes`` (:func:`_repository_rules`), labelled relative to ``base`` (the registry's root)
    when inside ``top``. Raises nothing (a file not read is left out)."""
    from passprice.gitconfig import ConfigUnread

    try:
        rules = _repository_rules(_repository_of(top), base, top)
    except ConfigUnread:
        rules = []
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:n]) for n in range(len(parts) + 1))
    layers = []
    for rule in rules:
        data = _rule_text(rule.path) if rule.place == "global" else None
        if data is not None:
            layers.append((rule.label, "global", data))
    for folder in sorted(folders, key=lambda f: (f.count("/") + bool(f), f)):
        name = f"{folder}/.gitattributes" if folder else ".gitattributes"
        data = _rule_text(top / name)
        if data is not None:
            layers.append((_label(top / name, top, base), name, data))
    for rule in rules:
        data = _rule_text(rule.path) if rule.place == "info" else None
        if data is not None:
            layers.append((rule.label, "info", data))
    return layers


def _rule_sources(layers: list[tuple[str, str, bytes]], paths: Iterable[str], fallback: str = "a file git reads",
                  names: tuple[str, ...] = REWRITING) -> dict[str, tuple[str, str, str]]:
    """The paths of ``paths`` (from a repository's top) that the files of rules ``layers`` (the lowest precedence
    first, as :func:`_work_tree_layers` gives them) make git rewrite in a checkout, each with its attribute, value
    and the label of the file whose rule sets it: asked of ``git check-attr`` in an empty repository of passprice's
    own holding all of them, then (when any path is rewritten) holding one more file at a time, the lowest first,
    the file named being the last one whose rule gave the path its final value (a rule of a later file, git's
    precedence, overrides an earlier one). A path no file's rule explains (a rule git read from its index) is named
    by ``fallback``. Raises :class:`subprocess.CalledProcessError` when git fails and :class:`InputError` when git is
    not installed."""
    import shutil
    import tempfile

    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    with tempfile.TemporaryDirectory(prefix="passprice-attributes-") as scratch:
        place = Path(scratch) / "repository"
        place.mkdir()
        rules = Path(scratch) / "rules"

        def fresh() -> None:
            shutil.rmtree(place)
            place.mkdir()
            run_git(place, ["init", "-q", "--template="], scratch=True)
            rules.write_bytes(b"")

        def add(where: str, data: bytes) -> None:
            if where == "global":
                rules.write_bytes(rules.read_bytes() + data + b"\n")
                return
            target = place / ".git" / "info" / "attributes" if where == "info" else place / where
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

        fresh()
        for _, where, data in layers:
            add(where, data)
        final = checked_attributes(place, wanted, scratch=rules, names=names)
        if not final:
            return {}
        sources = {path: fallback for path in final}
        fresh()
        before: dict[str, tuple[str, str]] = {}
        for label, where, data in layers:
            add(where, data)
            now = checked_attributes(place, list(final), scratch=rules, names=names)
            for path, rule in final.items():
                if now.get(path) == rule and before.get(path) != rule:
                    sources[path] = label
            before = now
    return {path: (*rule, sources[path]) for path, rule in final.items()}


def _asked_rewrites(folder: Path, rels: list[str], names: tuple[str, ...] = REWRITING) -> list[str]:
    """:func:`rewritten_lines` of ``rels`` (relative to ``folder``) asked of ``git check-attr`` for the attributes
    ``names`` (:data:`REWRITING` or :data:`LINE_ENDS`), each rule's file named (:func:`_rule_sources`): none when
    ``folder`` is in no git repository or git is not installed, one line saying so when git will not read the
    checkout. Raises nothing."""
    top = _git_top(folder)
    if top is not None:
        places = [top / ".gitattributes"]
        for rel in rels:
            parts = (Path(os.path.relpath(folder / rel, top)).as_posix()).split("/")[:-1]
            places += [top.joinpath(*parts[:n], ".gitattributes") for n in range(1, len(parts) + 1)]
        from passprice.gitconfig import ConfigUnread

        with contextlib.suppress(ConfigUnread):
            places += [r.path for r in _repository_rules(_repository_of(top), folder, top)]
        line = blocking_file(dict.fromkeys(places), "attribute rules")
        if line is not None:
            return [line]
    try:
        found = checked_attributes(folder, rels, names=names)
    except InputError as e:  # a config file that would block git: said (a git that is not installed: nothing)
        return [str(e)] if "where git reads" in str(e) else []
    except OSError:
        return []
    except subprocess.CalledProcessError as e:
        if b"not a git repository" in (e.stderr or b""):
            return []
        # A checkout git will not read (another user's: a CI job's in a container, or a broken index) was passed as
        # rewriting nothing: `check` said "all holds" of a card an `ident` rule rewrites (attack round 29).
        why = owner_line(folder, e) if refuses_owner(e) else f"{folder}: git check-attr failed ({git_says(e)})"
        return [f"{why}; so whether git rewrites the files passprice reads in a checkout (a file of attribute rules "
                "lies where it could) cannot be told"]
    if not found:
        return []
    named = {path: (*rule, "a file git reads") for path, rule in found.items()}
    if top is not None:
        prefix = Path(os.path.relpath(folder, top)).as_posix()
        prefix = "" if prefix == "." else f"{prefix}/"
        with contextlib.suppress(InputError, OSError, subprocess.CalledProcessError):
            sources = _rule_sources(_work_tree_layers(top, [f"{prefix}{p}" for p in found], folder),
                                    [f"{prefix}{p}" for p in found], names=names)
            for path, rule in found.items():
                source = sources.get(f"{prefix}{path}")
                if source is not None and source[:2] == rule:
                    named[path] = source
    return rewritten_lines(named)


def revision_rewrites(top: Path, prefix: str, commit: str, attributes: Mapping[str, str], rels: Iterable[str],
                      pinned: Iterable[str] = ()) -> list[str]:
    """The lines (:func:`rewritten_lines`) refusing the files ``rels`` that a checkout of ``commit`` rewrites
    (:func:`_revision_rules` of :data:`REWRITING`), and the files ``pinned`` (read byte for byte: stored excerpts,
    documents) whose line ends it writes as CRLF (:data:`LINE_ENDS`). Raises as it does."""
    at = f"at {commit[:12]}"
    lines = rewritten_lines(_revision_rules(top, prefix, commit, attributes, rels, REWRITING), at)
    pinned = list(pinned)
    if pinned:
        lines += rewritten_lines(_revision_rules(top, prefix, commit, attributes, pinned, LINE_ENDS), at)
        setting = config_line_ends(top / prefix)  # a setting of this repository's git, no rule: core.autocrlf
        if setting is not None:
            values = _scratch_values(_revision_layers(top, prefix, commit, attributes),
                                     [f"{prefix}{rel}" for rel in pinned], CONFIG_LINE_ENDS)
            lines += config_rewrites(_committed_bytes(top, pinned, commit, prefix),
                                     {path.removeprefix(prefix): got for path, got in values.items()}, setting, at,
                                     prefix, top)
    return lines


def _revision_rules(top: Path, prefix: str, commit: str, attributes: Mapping[str, str], rels: Iterable[str],
                    names: tuple[str, ...]) -> dict[str, tuple[str, str, str]]:
    """The files of ``rels`` (relative to the root, ``prefix`` its folder in the repository at ``top``) on which one
    of the attributes ``names`` is set at ``commit`` here, each with the attribute, its value and the label of the
    file whose rule sets it: by the rules of its ``.gitattributes``
    files (``attributes``: each one's path from ``top`` → its blob) and of the files git reads for every path of
    this repository (:func:`_repository_rules`: its ``info/attributes``, a ``core.attributesFile`` its config or the
    user's names, the system's). git 2.39 cannot ask for a revision's attributes, so the files are written, as the
    revision holds them, into an empty repository, and ``git check-attr`` asked there (:func:`_rule_sources`).
    Raises :class:`InputError` naming a ``.gitattributes`` past :data:`MAX_ATTRIBUTES_BYTES` or a config file git
    reads that is not git config."""
    layers = _revision_layers(top, prefix, commit, attributes)
    if all(plain_rules(data) is not None for _, _, data in layers):  # none, or -text rules alone: no git asked
        return {}
    found = _rule_sources(layers, [f"{prefix}{rel}" for rel in rels], names=names)
    return {path.removeprefix(prefix): rule for path, rule in found.items()}


def _revision_layers(top: Path, prefix: str, commit: str, attributes: Mapping[str, str]) -> (
        list[tuple[str, str, bytes]]):
    """The files of attribute rules git reads at ``commit`` for the registry at ``prefix`` in the repository at
    ``top``, as :func:`_work_tree_layers` gives a work tree's: the system's and user's, the revision's
    ``.gitattributes`` files (``attributes``: each one's path → its blob), the repository's ``info/attributes``.
    Raises as :func:`_revision_rules`."""
    sizes = blob_sizes(top, attributes.values()) if attributes else {}
    for name, blob in attributes.items():
        size = sizes.get(blob)
        if size is not None and size > MAX_ATTRIBUTES_BYTES:
            raise InputError(f"{commit[:12]}:{name}: {size:,} bytes, past the {MAX_ATTRIBUTES_BYTES:,}-byte cap on a "
                             ".gitattributes file passprice reads (not read)")
    contents = read_blobs(top, {b: s for b, s in sizes.items() if s is not None}) if attributes else {}
    import posixpath

    rules = _repository_rules(_repository_of(top), top / prefix, top)
    here = [(r.label, r.place, data) for r in rules if (data := _rule_text(r.path)) is not None]
    layers = [*(r for r in here if r[1] == "global"),
              *((f"{posixpath.relpath(name, prefix or '.')} at {commit[:12]}", name, contents.get(blob, b""))
                for name, blob in sorted(attributes.items(), key=lambda item: (item[0].count("/"), item[0]))),
              *(r for r in here if r[1] == "info")]
    return layers


def _scratch_values(layers: list[tuple[str, str, bytes]], paths: list[str], names: tuple[str, ...]) -> (
        dict[str, dict[str, str]]):
    """:func:`_attribute_values` of ``paths`` (from a repository's top) under the files of rules ``layers``
    (:func:`_revision_layers`), asked in an empty repository of passprice's own holding them, as
    :func:`_rule_sources` asks. Raises as it does."""
    import tempfile

    if not paths or not layers:
        return {}
    with tempfile.TemporaryDirectory(prefix="passprice-attributes-") as scratch:
        place = Path(scratch) / "repository"
        place.mkdir()
        rules = Path(scratch) / "rules"
        run_git(place, ["init", "-q", "--template="], scratch=True)
        kept = b""
        for _, where, data in layers:
            if where == "global":
                kept += data + b"\n"
                continue
            target = place / ".git" / "info" / "attributes" if where == "info" else place / where
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        rules.write_bytes(kept)
        return _attribute_values(place, paths, rules, names)


#: The attributes by which ``git archive`` changes what it packs of a file: ``export-ignore`` (left out of the
#: archive) and ``export-subst`` (its ``$Format:…$`` placeholders expanded). A checkout is unchanged, so check and the
#: review read the same bytes; a release packed from the revision is not what they read (tests/test_left131.py).
EXPORTING = ("export-ignore", "export-subst")


def revision_exports(top: Path, prefix: str, commit: str, attributes: Mapping[str, str], rels: Iterable[str]) -> (
        dict[str, tuple[str, str, str]]):
    """The files of ``rels`` (relative to the root) that ``git archive`` of ``commit`` leaves out or expands
    (:data:`EXPORTING`), each with the attribute, its value and the label of the file whose rule sets it, read as
    :func:`revision_rewrites` reads a revision's rules. Raises as it does."""
    return _revision_rules(top, prefix, commit, attributes, rels, EXPORTING)
