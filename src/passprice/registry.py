"""Which files are the facts: a checkout's own when passprice runs inside one, else the copy embedded in the package.

A *root* is a folder holding ``facts/`` and ``registry/`` (and usually ``schema/`` and ``locks/``). It is named by
``--root``, or found by walking up from the working folder, or, failing both, is the embedded default the package
carries (``passprice/_data``), so ``passprice`` works from any folder.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from pathlib import Path

import attrs

from passprice.errors import InputError, NotFound, Unreadable, escaped
from passprice.files import UNSEARCHABLE, is_folder, is_there, listing_refusal, shell_word, shown, unsearchable_folder
from passprice.snapshot import resolved, resolved_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_PACKAGE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=256)
def below(path: Path, *parts: str) -> Path:
    """``path / part / …`` (a root's folder, a schema file), made once a process for each ``path`` and ``parts``:
    a registry of thousands of servings asks for the same few several times a serving. Raises nothing."""
    return path.joinpath(*parts)


@attrs.frozen
class Root:
    """A folder of passprice files: ``facts/cards``, ``facts/drafts``, ``facts/routing``, ``facts/stacks``,
    ``registry/checkpoints``, ``registry/servings``, ``registry/measurements``, ``locks``, ``sources`` and ``schema``
    below ``path``. ``embedded`` is true for the package's copy. Each folder's path is made once a root (a registry
    of thousands of servings asks for ``cards`` and ``checkpoints`` several times a serving: :func:`below`)."""

    path: Path
    embedded: bool = False

    @property
    def cards(self) -> Path:
        """``facts/cards``: one TOML file a card."""
        return below(self.path, "facts", "cards")

    @property
    def drafts(self) -> Path:
        """``facts/drafts``: one TOML file a drafting method."""
        return below(self.path, "facts", "drafts")

    @property
    def routing(self) -> Path:
        """``facts/routing``: one TOML file a routing record (how a mixture of experts' tokens route)."""
        return below(self.path, "facts", "routing")

    @property
    def stacks(self) -> Path:
        """``facts/stacks``: one TOML file a serving stack (issue 14)."""
        return below(self.path, "facts", "stacks")

    @property
    def measurements(self) -> Path:
        """``registry/measurements``: measured runs, one TOML file a source (issue 14)."""
        return below(self.path, "registry", "measurements")

    @property
    def checkpoints(self) -> Path:
        """``registry/checkpoints``: checkpoint entries imported from GGUF headers."""
        return below(self.path, "registry", "checkpoints")

    @property
    def servings(self) -> Path:
        """``registry/servings``: named serving configurations."""
        return below(self.path, "registry", "servings")

    @property
    def sources(self) -> Path:
        """``sources``: one TOML file a source (a document facts cite), named by its id."""
        return below(self.path, "sources")

    @property
    def locks(self) -> Path:
        """``locks``: lock files."""
        return below(self.path, "locks")

    @property
    def schema(self) -> Path:
        """The JSON Schemas every file of this root is validated against: always the package's (:func:`schema_dir`).
        The code relies on what they state (every bound that keeps a hostile file from running long among it), so a
        root's own ``schema/`` copy — which ``init`` writes for editors — is never read in their place: a registry
        made by an older passprice, or a pull request editing ``schema/``, can neither lift a bound nor feed the
        validator a pattern or reference of its own (:func:`schema_copy_drift` reports a copy that differs)."""
        return schema_dir()

    def names(self, folder: Path, suffix: str = ".toml") -> list[str]:
        """The entry names (file names less ``suffix``) in ``folder``, sorted; none when it does not exist. Every
        entry is named, whatever it is (a folder called ``x.toml``, a FIFO, a broken link), so reading it reports what
        is wrong with it rather than passing over it — except an editor's lock file (:func:`editor_lock`: Emacs's
        ``.#NAME.lock.toml`` link while a buffer is modified), which is no entry: named, it stopped every price.

        Raises :class:`InputError` when ``folder`` cannot be read, or is there as something other than a folder
        (:func:`folder_problem`: a file, a FIFO or a dangling link called ``locks`` is no empty registry folder; read
        as one, every lock was silently off)."""
        problem = folder_problem(folder, self)
        if problem is not None:
            raise InputError(problem)
        if not is_folder(folder):
            return []
        try:
            names = sorted(
                name[: -len(suffix)]
                for name in os.listdir(folder)
                if name.endswith(suffix) and len(name) > len(suffix) and not editor_lock(name)
            )
        except OSError as e:
            raise listing_refusal(e, folder, self.folder_named(folder)) from None
        if names and not os.access(folder, os.X_OK):
            # Listed but not searchable (mode r--): every file in it failed alone, one line each (attack round 61).
            raise Unreadable(f"{self.folder_named(folder)}{UNSEARCHABLE}")
        return names

    def folder_named(self, folder: Path) -> str:
        """How a line of text names ``folder``, one of this root's: ``the built-in registry's registry/servings``
        for the embedded default (:func:`named_in`, as "not found in" names it), else its path, shown
        (:func:`shown`), which the command line writes as the user gave the root (:func:`as_given`: relative to the
        working folder, or below ``--root DIR`` as typed). Outside any registry, :meth:`names` said
        ``/…/site-packages/passprice/…/registry/servings: cannot list`` where every other line said the built-in
        registry's (left39). Raises nothing."""
        return named_in(self, folder) if self.embedded else shown(folder)

    def scan(self, folder: Path, suffix: str = ".toml") -> list[str]:
        """:meth:`names`, for a look over the whole registry that another step has already validated folder by
        folder (``passprice check``'s review, which reports a folder that is not one, :func:`folder_problem`, in one
        line): none when ``folder`` is not a folder, so everything else is still checked and shown. Raises
        :class:`InputError` when a folder cannot be listed."""
        if folder_problem(folder, self) is not None:
            return []
        return self.names(folder, suffix)


#: The suffix of a lock file's name (``locks/NAME.lock.toml``).
LOCK_SUFFIX = ".lock.toml"


def lock_order(ref: str) -> tuple[str, str]:
    """The key every listing of locks is sorted by (``check``, ``diff``'s text, ``--json`` and Markdown, ``audit``,
    ``sources``, a price's lock line): the lock's name — ``ref``'s file name less its folder and
    :data:`LOCK_SUFFIX`, ``ref`` being a name, a file name or a path — then ``ref`` itself. A name comes before the
    names it begins: ``r1-qwen7b-h200``, ``r1-qwen7b-h200-best``, ``r1-qwen7b-h200-llamacpp``. Sorted by file name
    (``diff`` sorted ``locks/NAME.lock.toml`` paths, left53) ``r1-qwen7b-h200`` came last, ``-`` sorting before
    ``.``, where ``check`` listed it first. :meth:`Root.names` of ``locks/`` gives this order (its names sorted).
    Raises nothing."""
    name = ref.replace(os.sep, "/").rsplit("/", 1)[-1]
    return (name.removesuffix(LOCK_SUFFIX), ref)


def editor_lock(name: str) -> bool:
    """Whether the file name ``name`` is an editor's lock file, not a registry file: Emacs makes ``.#FILE`` (a link
    to ``user@host.pid``) beside a file whose buffer is modified. Every reader passes over it alike (the registry's
    listing, :meth:`Root.names`, and the review's, :func:`passprice.gitread.read_by_passprice`)."""
    return name.startswith(".#")


#: A record's name, the stem of its file in a registry folder: letters, digits, ``.``, ``_`` and ``-``, first a letter
#: or digit (no path, no hidden file, nothing a shell or a table would read otherwise).
RECORD_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

#: The longest record name: its file name (``NAME.toml``) must fit the 255 bytes file systems allow.
MAX_RECORD_NAME = 200


def require_record_name(kind: str, name: str) -> None:
    """Refuse ``name`` as the name of a new ``kind`` record (``"checkpoint"``, ``"serving"`` …) unless it matches
    :data:`RECORD_NAME` and has at most :data:`MAX_RECORD_NAME` characters. Raises :class:`InputError`: one line
    naming the kind, the name (escaped) and the rule."""
    import re

    if re.fullmatch(RECORD_NAME, name) is None:
        raise InputError(f"{kind} name {name!r}: use letters, digits, '.', '_' and '-' (first a letter or digit)")
    if name.endswith(".toml"):
        # A name ending in .toml is read as a file's path wherever a record is named (a serving's `checkpoint`, a
        # lock, --checkpoint): `import H --name x.toml` wrote registry/checkpoints/x.toml.toml, which `lock` then
        # refused as "a path relative to the working folder" and `--checkpoint x.toml` read only from the working
        # folder (attack round 31).
        raise InputError(f"{kind} name {name!r}: ends in .toml, which names a file wherever a {kind} is named: give "
                         f"the name without it ({name.removesuffix('.toml')!r} writes {name!r})")
    if name.endswith("."):
        # `import H --name y.` wrote registry/checkpoints/y..toml, a record whose name Windows drops the dot of when
        # it names a file (`y.` and `y` one file there) and every listing shows with a dot nobody reads (session 29).
        raise InputError(f"{kind} name {name!r}: ends in '.', which Windows drops from a file's name: give the name "
                         f"without it ({name.rstrip('.')!r})")
    if len(name) > MAX_RECORD_NAME:
        raise InputError(f"{kind} name {name[:40]!r}…: {len(name):,} characters; at most {MAX_RECORD_NAME}")
    device = windows_device(name)
    if device is not None:
        raise InputError(f"{kind} name {name!r}: {device} names a device on Windows, where no file of that name (with "
                         "any suffix) can be checked out: give another name")


#: The names Windows keeps for devices, in any case and with any suffix (``CON.toml``, ``nul.lock.toml``): no file
#: of such a name can be made there, and Git for Windows refuses to check one out. Microsoft, "Naming Files, Paths,
#: and Namespaces": CON, PRN, AUX, NUL, COM0 to COM9, COM¹, COM², COM³, LPT0 to LPT9, LPT¹, LPT², LPT³ (COM0 and LPT0
#: passed until issue 13's leftovers, session 26), and the console's CONIN$ and CONOUT$.
WINDOWS_DEVICES = frozenset([
    "con", "prn", "aux", "nul", "conin$", "conout$",
    *(f"{port}{i}" for port in ("com", "lpt") for i in (*range(10), "\u00b9", "\u00b2", "\u00b3")),
])  # fmt: skip

#: The characters no file name on Windows may hold (Microsoft, "Naming Files, Paths, and Namespaces"): ``< > : " / \
#: | ? *`` and the control characters U+0000 to U+001F. ``/`` separates a path's parts everywhere, so it is never in a
#: name passprice reads from a folder.
WINDOWS_FORBIDDEN = frozenset('<>:"/\\|?*' + "".join(map(chr, range(32))))


def windows_name_problem(name: str) -> str | None:
    """What makes ``name`` a file or folder name no Windows checkout can hold besides a device's name
    (:func:`windows_device`) and a character Windows forbids (:func:`windows_characters`): a trailing dot or space,
    which Windows drops (``rtx_4090.toml.`` would be ``rtx_4090.toml`` there); ``None`` when there is none. Git for
    Windows refuses to check out such a path (``core.protectNTFS``), and ``check`` passed ``facts/cards/rtx_4090.toml.``
    and ``facts/cards/x.`` (attack round 47). Raises nothing."""
    if name.endswith((".", " ")) and name not in (".", ".."):
        return f"the name {name!r} ends in {'a dot' if name.endswith('.') else 'a space'}, which Windows drops"
    return None


def windows_device(name: str) -> str | None:
    """The Windows device ``name`` would name as a file (``CON`` for ``con``, ``Con.v2``), else ``None``.

    ``import H --name CON``, ``new-serving nul …`` and ``lock --name aux`` wrote ``CON.toml``, ``nul.toml`` and
    ``aux.lock.toml``, records a clone on Windows cannot check out (attack round 45), where a name differing from
    another only by case, one file on Windows, is refused already. Windows reads spaces before the suffix as none and
    a superscript ``¹``, ``²`` or ``³`` as a port's digit: ``lock -o "locks/CON .lock.toml"`` and ``COM¹.lock.toml``
    were written, and ``check`` passed a card file ``lpt³.toml`` (attack round 46)."""
    stem = name.split(".", 1)[0].rstrip(" ").lower()
    return stem.upper() if stem in WINDOWS_DEVICES else None


def windows_characters(name: str) -> list[str]:
    """The characters of ``name`` no file name on Windows may hold (:data:`WINDOWS_FORBIDDEN`), each once, in the
    order they first come, escaped as ``repr`` writes them (``':'``, ``'\\t'``); empty when there are none.

    A registry is reviewed in pull requests on every system, and Git for Windows cannot check out a file named
    ``a:b.toml``, ``q?.toml`` or ``x|y.lock.toml``: ``check`` passed a card file ``h200:b.toml`` and ``lock -o
    'locks/a:b.lock.toml'`` wrote a lock (issue 13's leftovers, session 26), where a name of a Windows device
    (:func:`windows_device`) was refused already. Raises nothing."""
    return [repr(ch) for ch in dict.fromkeys(ch for ch in name if ch in WINDOWS_FORBIDDEN)]


def windows_problem(name: str) -> str | None:
    """What makes ``name`` no file name on Windows, in words (``"CON names a device on Windows"``, ``"':' is a
    character no file name on Windows holds"``), or ``None``: the one rule of a name on every system
    (:func:`windows_device`, then :func:`windows_characters`). Raises nothing."""
    device = windows_device(name)
    if device is not None:
        return f"{device} names a device on Windows"
    found = windows_characters(name)
    if found:
        which = f"{found[0]} is a character" if len(found) == 1 else f"{', '.join(found)} are characters"
        return f"{which} no file name on Windows holds"
    return None


def name_problem(name: str, fix: str = "rename the file", toml_fix: str = "rename the file to end in a single .toml",
                 *, toml: bool = True) -> str | None:
    """What is wrong with ``name`` as the name of a registry record of any kind (a card, a serving, a checkpoint
    entry, a lock …), ending in ``fix`` (``toml_fix`` for a name ending in ``.toml``; ``toml`` false: such a name
    passes); ``None`` when it is a name.
    One rule for every record name (attack round 44: a lock name holding U+00AD, U+00A0 or U+E000 was written and
    read where a card name holding them was refused):

    - every character prints (:meth:`str.isprintable`: no control character, bidi control, format character such as
      U+00AD or U+200B, separator other than the space such as U+00A0, private-use or unassigned code point, or byte
      that is not UTF-8): a card file ``ev\u202eil.toml`` was shown raw in ``facts``, ``price --card``, ``roofline``
      and ``lock`` output, reordering each line it was on, and one named ``nl\nx.toml`` split a row of ``cards``;
    - it does not start with ``-``, which a command line reads as an option (round 17: ``servings`` listed ``-x``,
      and ``price -x`` and every ``lock -x …`` passprice advised said "No such option");
    - it does not end in ``.toml``, which names a file's path wherever a record is named (round 31);
    - it neither starts nor ends with a space: ``lock -o "locks/CON .lock.toml"`` wrote a lock ``CON ``, and
      ``check`` passed a card file ``x .toml`` (shown ``x``; attack round 46)."""
    if not name.isprintable():
        from passprice.errors import escaped

        return (
            f"the name {escaped(name)} holds a character that does not print (a control character, a bidi control, "
            f"an invisible, private-use or unassigned character or a byte that is not UTF-8): it would be shown on "
            f"every line naming the record; {fix}"
        )
    if name != name.strip(" "):
        return f"the name {name!r} starts or ends with a space, which no listing shows; {fix}"
    if name.startswith("-"):
        return (
            f"the name {name} starts with '-', which a command line reads as an option (`passprice price {name}` says "
            f"no such option, as does every command passprice advises with it); {fix}"
        )
    if toml and name.endswith(".toml"):
        return (
            f"the name {name} ends in .toml, which names a file's path wherever a record is named (a serving's card or "
            f"checkpoint, a lock, --card): {toml_fix}"
        )
    return None


def entry_name(path: Path, suffix: str = ".toml") -> str:
    """The registry name of the record file ``path`` (its file name less ``suffix``): the name every table, price and
    refusal line shows for it. Raises :class:`InputError` naming the file when the name is not a record name
    (:func:`name_problem`: a character that does not print, a leading ``-``, a name ending in ``.toml`` for a
    ``.toml`` record)."""
    name = path.name[: -len(suffix)]
    problem = name_problem(name, toml=suffix == ".toml")  # a lock x.toml is lock_name's to refuse
    if problem is not None:
        raise InputError(f"{shown(path)}: {problem}")
    return name


#: The folders of a root passprice reads records from, by the folder above them (``facts/``, ``registry/``).
RECORD_FOLDERS = {"facts": ("cards", "drafts", "routing", "stacks"),
                  "registry": ("checkpoints", "servings", "measurements")}


def stray_folders(root: Root) -> list[tuple[Path, str | None, int]]:
    """The folders below ``facts/`` and ``registry/`` that passprice reads no record from yet hold ``.toml`` files:
    (folder, the record folder its name is closest to, relative to the root (``registry/servings``), or ``None``,
    how many ``.toml`` files it holds). A serving moved to ``registry/serving/`` (singular) was neither checked nor
    priced, and ``check`` said "all holds" and ``price`` "not found … (registered: none)" without a word on it
    (newcomer walkthrough 12). Only the first level is looked at (a link to a folder counts as a folder, unless it
    reaches a folder passprice reads), and only names are read (nothing is opened). Raises nothing: a folder that
    cannot be listed is left out."""
    import difflib

    found: list[tuple[Path, str | None, int]] = []
    reached = set()  # a record folder may be a link to a folder of the root's (facts/cards -> registry/cards-here)
    for top, known in RECORD_FOLDERS.items():
        for name in known:
            try:
                reached.add(os.path.realpath(root.path / top / name))
            except (OSError, ValueError):
                continue
    for top, known in RECORD_FOLDERS.items():
        try:
            entries = sorted(os.scandir(root.path / top), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name in known or entry.name.startswith(".") or not entry.is_dir():
                    continue
                if os.path.realpath(entry.path) in reached:
                    continue
                count = sum(1 for f in os.scandir(entry.path) if f.name.endswith(".toml"))
            except OSError:
                continue
            if count:
                close = difflib.get_close_matches(entry.name, known, n=1, cutoff=0.6)
                found.append((Path(entry.path), f"{top}/{close[0]}" if close else None, count))
    # A folder inside a folder passprice reads (``locks/old/``, ``registry/servings/v2/``): its files are not read
    # either. A lock moved to ``locks/sub/`` in the same commit as its serving's edit read as "removed" (its price,
    # moved, was never compared with the one it records) while the file still stood in the registry as a lock, and
    # ``check`` counted one lock fewer and said "all holds" (slip round 10).
    # A link to a folder is a folder here too (``locks/old -> ../archive`` holding locks was not read, and ``check``
    # said nothing: round 19), unless it reaches a folder passprice reads (``facts/cards/self -> .``).
    inside = ("locks", "sources", *(f"{top}/{name}" for top, names in RECORD_FOLDERS.items() for name in names))
    for rel in ("locks", "sources"):
        try:
            reached.add(os.path.realpath(root.path / rel))
        except (OSError, ValueError):
            continue
    for rel in inside:
        try:
            entries = sorted(os.scandir(root.path / rel), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                if os.path.realpath(entry.path) in reached:
                    continue
                count = sum(1 for f in os.scandir(entry.path) if f.name.endswith(".toml"))
            except OSError:
                continue
            if count:
                found.append((Path(entry.path), rel, count))
    return found


def stray_headers(root: Root) -> list[str]:
    """One line for each GGUF file (``.gguf``, ``.gguf.xz``, ``.gguf.gz``) lying in ``registry/checkpoints/``, where
    passprice reads only ``.toml`` entries: a header copied there was ignored by ``check`` without a word
    (walkthrough 13); ``passprice import FILE --name NAME`` writes its entry. Only names are read. Raises nothing."""
    try:
        suffixes = (".gguf", ".gguf.xz", ".gguf.gz")
        names = sorted(e.name for e in os.scandir(root.checkpoints) if e.name.endswith(suffixes))
    except OSError:
        return []
    return [f"{shown(root.checkpoints / name)}: a GGUF file, not a checkpoint entry: passprice reads the .toml entries "
            "here alone (`passprice import FILE --name NAME` writes one)" for name in names]


#: The name :func:`passprice.files.write_atomically` gives the temporary file it writes ``NAME`` through:
#: ``.NAME.`` then 12 hex digits and ``.tmp`` (the name cut to fit 255 bytes keeps the pattern).
_TEMPORARY = r"\.(?P<target>.+)\.[0-9a-f]{12}\.tmp"


#: The most left temporary files :func:`stale_temporaries` names a line each; the rest are counted in one line (attack
#: round 21: 50,000 of them in locks/ printed 50,050 warning lines, 2.5 s of CPU).
MAX_TEMPORARY_LINES = 20


def stale_temporaries(root: Root) -> list[str]:
    """One line for each file in a record folder of ``root`` (``facts/*``, ``registry/*``, ``locks``, ``sources``)
    named as passprice names a temporary file it writes through (``.NAME.<12 hex digits>.tmp``, a regular file of
    mode ``0o600``, as :func:`passprice.files.write_atomically` makes it): a write that did not finish, its process
    killed (SIGKILL, a power cut) before it removed the file. Reported, never removed: the name and mode make it
    passprice's, but nothing proves that no passprice is writing through it now (its name holds no process, and a
    process id may be another machine's or reused), and a file passprice did not make is never passprice's to
    delete. passprice reads none of them (no record suffix). Only names and ``lstat`` are read. At most
    :data:`MAX_TEMPORARY_LINES` are named; one more line counts the rest and their folders. Raises nothing."""
    import re
    import stat

    out: list[str] = []
    more: dict[Path, int] = {}
    for folder in (root.cards, root.drafts, root.routing, root.stacks, root.checkpoints, root.servings,
                   root.measurements, root.locks, root.sources):
        try:
            names = sorted(e.name for e in os.scandir(folder) if e.name.startswith(".") and e.name.endswith(".tmp"))
        except OSError:
            continue
        for name in names:
            found = re.fullmatch(_TEMPORARY, name, re.DOTALL)
            path = folder / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if found is None or not stat.S_ISREG(info.st_mode) or info.st_mode & 0o7777 != 0o600:
                continue
            if len(out) >= MAX_TEMPORARY_LINES:
                more[folder] = more.get(folder, 0) + 1
                continue
            out.append(
                f"{shown(path)}: a temporary file passprice writes {escaped(found['target'])} through, left by a "
                f"write that did not finish (its process killed?) unless a passprice is writing it now; passprice "
                f"reads nothing from it and removes none it did not make this run: remove it (rm {shell_word(path)})"
            )
    if more:
        n = sum(more.values())
        where = ", ".join(f"{shown(folder)} ({count:,})" for folder, count in more.items())
        out.append(
            f"and {n:,} more temporary file{'s' if n != 1 else ''} passprice writes through, left the same way, in "
            f"{where}: list them with ls -a, and remove those no passprice is writing now"
        )
    return out


def stray_lines(root: Root) -> list[str]:
    """One line for each of :func:`stray_folders`: the folder, that passprice reads nothing from it, how many
    ``.toml`` files that leaves unchecked and unpriced, and the record folder it was likely meant as; then the
    symbolic links among those files, each named as ``check`` names a link in ``locks/`` (``locks/old/x.lock.toml ->
    ../x.lock.toml``) with what it reaches (:func:`_stray_links`)."""
    out = []
    for folder, meant, count in stray_folders(root):
        inside = meant is not None and folder.parent == root.path / meant
        links, said = _stray_links(root, folder, meant if inside else None)
        line = (f"{shown(folder)}: not a folder passprice reads: its {count} .toml file{'s' if count != 1 else ''} "
                f"{'are' if count != 1 else 'is'} neither checked nor priced")
        if meant is not None and inside:
            move = ("" if links >= count else f": move {'them' if not links else 'the files'} to {meant}/")
            line += f" (passprice reads {meant}/ itself, not the folders in it{move})"
        elif meant is not None:
            line += f" (did you mean {meant}?)"
        out.append(line + said)
    return out


#: The most symbolic links of a stray folder :func:`_stray_links` names; the rest are counted.
MAX_STRAY_LINKS = 3


def _stray_links(root: Root, folder: Path, record: str | None) -> tuple[int, str]:
    """The symbolic links among the ``.toml`` files of ``folder`` (a folder :func:`stray_folders` found), as the
    words :func:`stray_lines` ends its line with: each named with its target as written (``locks/old/x.lock.toml ->
    ../r1.lock.toml``) and what it reaches: a file of ``record`` (the record folder ``folder`` lies in) passprice
    reads already, to remove rather than move (moved, it would be a second name of that record); a link to nothing;
    or another file, read by nothing there. ``check`` said only "move them to locks/" of ``locks/old/`` holding a
    link to a lock of ``locks/`` and one to the README (tests/test_odds172.py). At most :data:`MAX_STRAY_LINKS` are
    named, the rest counted. Returns how many links there are and the words (``""`` for none). Only names and links
    are read. Raises nothing."""
    try:
        links = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".toml") and e.is_symlink())
    except OSError:
        return 0, ""
    if not links:
        return 0, ""
    try:
        reads = os.path.realpath(root.path / record) if record is not None else None
    except (OSError, ValueError):
        reads = None
    # every record folder passprice reads, by its real path: a link reaching a file of another (a card, from
    # locks/old/) names a record read already, not one to move into ``record`` (tests/test_fix184.py)
    read_from: dict[str, str] = {}
    for folder_name in ("locks", "sources", *(f"{top}/{name}" for top, names in RECORD_FOLDERS.items()
                                              for name in names)):
        try:
            read_from.setdefault(os.path.realpath(root.path / folder_name), folder_name)
        except (OSError, ValueError):
            continue
    said = []
    for name in links[:MAX_STRAY_LINKS]:
        path = folder / name
        try:
            written = os.readlink(path)
            real = Path(os.path.realpath(path))
        except (OSError, ValueError):
            continue
        try:  # as the root names it, whether the root was given as `.` (check) or a side's tree (the review)
            link = path.relative_to(root.path)
        except ValueError:
            link = _rel(root, path)
        named = f"{shown(link)} -> {escaped(written)}"
        other = read_from.get(str(real.parent))
        if not real.exists():
            said.append(f"{named}, a symbolic link to nothing: remove it")
        elif reads is not None and str(real.parent) == reads:
            said.append(f"{named}, a symbolic link to {shown(_rel(root, real))}, read already from {record}/: remove "
                        f"the link (moved to {record}/, it would be a second name of that file)")
        elif other is not None and real.name.endswith(".toml"):
            kind = f"{record}/ reads no file of {other}/" if record is not None else "it is no file of this folder's"
            said.append(f"{named}, a symbolic link to {shown(_rel(root, real))}, read already from {other}/: remove "
                        f"the link ({kind})")
        else:
            where = f"{record}/" if record is not None else "the record folder it belongs in"
            said.append(f"{named}, a symbolic link to {shown(_rel(root, real))}: move the file it names to {where} if "
                        "passprice should read it, and remove the link")
    more = len(links) - MAX_STRAY_LINKS
    if more > 0:
        said.append(f"and {more:,} more symbolic link{'s' if more != 1 else ''}")
    return len(links), ("; " + "; ".join(said) if said else "")


def _rel(root: Root, path: Path) -> Path:
    """``path`` relative to the root when it lies inside it (the root's own path resolved), else as given."""
    try:
        return path.relative_to(os.path.realpath(root.path))
    except ValueError:
        return path


def folder_problem(folder: Path, root: Root | None = None) -> str | None:
    """What is wrong with ``folder``, a folder of the registry (``locks/``, ``facts/cards/`` …), when something other
    than a folder is there: a regular file, a FIFO, a device, a socket, or a symbolic link to nothing; and, given the
    ``root`` it lies in, a folder that is (or is reached through) a symbolic link to a folder outside that root, whose
    files a registry's files may not be (``facts/cards`` linked to a folder of the CI machine was read and quoted
    where a single linked file was refused: :func:`passprice.schema.require_link_inside`); ``None`` when it is a
    folder or nothing is there (a registry may lack a kind of record). Nothing is opened. Raises
    :class:`InputError` as :func:`passprice.files.look` does (a loop of links, a name too long)."""
    import stat

    from passprice.files import kind, look

    found = look(folder)
    if found is None:
        if os.path.islink(folder):
            return f"{shown(folder)}: a symbolic link to nothing, where the registry keeps a folder"
        return None
    if not stat.S_ISDIR(found.st_mode):
        return (f"{shown(folder)}: is {kind(found.st_mode)}, not a folder: the registry keeps its files of this kind "
                "in one")
    if root is not None and not within(root, folder):
        return (f"{shown(folder)}: a symbolic link (or a folder reached through one) to {shown(_real(folder))}, "
                f"outside the registry ({shown(root.path)}): {LINKED_OUT}")
    if root is not None and os.path.islink(folder):
        return _linked_to_another_kind(folder, root)
    return None


def _linked_to_another_kind(folder: Path, root: Root) -> str | None:
    """What is wrong with ``folder``, a symbolic link, when it reaches another record folder of ``root``
    (``facts/drafts`` -> ``cards``): every card was read as a drafting method and ``check`` gave one line a card,
    17 of them, none naming the link (attack round 28). ``None`` otherwise."""
    try:
        real = os.path.realpath(folder)
        here = os.path.realpath(root.path)
    except (OSError, ValueError):
        return None
    for top, names in (*RECORD_FOLDERS.items(), ("", ("locks", "sources"))):
        for name in names:
            other = root.path / top / name
            if other == folder or os.path.normpath(other) == os.path.normpath(folder):
                continue
            try:
                if os.path.realpath(other) == real:
                    rel = os.path.relpath(os.path.realpath(other), here)
                    return (f"{shown(folder)}: a symbolic link to {shown(rel)}, the registry's folder of another "
                            "kind of record, whose files would be read as this kind: each kind keeps a folder of "
                            "its own (remove the link)")
            except (OSError, ValueError):
                continue
    return None


#: What to do about a registry folder or file that lies outside the registry through a symbolic link.
LINKED_OUT = "a registry's files lie inside it (copy the files in, or link to ones inside)"


#: The folders of a root whose ``.toml`` files are records (or are taken for records misplaced): ``check`` reads
#: every one.
RECORD_TREES = ("facts", "registry", "locks", "sources")


def require_not_record(root: Root, output: Path, option: str = "-o") -> None:
    """Refuse an output that is no record (a sweep's CSV or JSON, a simulation's text, a synthesized header, a
    picture) when it would land on a file passprice reads: a ``.toml`` file inside ``root``'s record folders
    (:data:`RECORD_TREES`; links and ``..`` resolved), where every such file is a record ``check`` reads, or a file
    :func:`read_elsewhere` names (a document a source record cites, passprice's own schemas and code).
    ``sweep R1 -o registry/servings/R1.toml --force`` replaced the serving it had just priced with its CSV, exit 0,
    and every later command on the registry failed ("not valid TOML"); a new name there (``-o
    registry/servings/new.toml``) broke ``check`` the same way (attack round 24). The suffix judged is that of the
    file written: ``-o out.csv`` (or ``--plot p.svg``), a link to ``registry/servings/R1.toml``, replaced the serving
    through the link, exit 0 (attack round 25). The embedded registry is judged as any other: for a checkout
    installed in editable mode it is the checkout, whose serving ``sweep R1 -o CHECKOUT/registry/servings/R1.toml
    --force`` run from another folder replaced (attack round 26). Raises :class:`InputError` naming ``option``, the
    file and the folder, before anything is priced."""
    from passprice.files import target

    end = os.path.normcase(os.path.realpath(target(output)))
    link = f" (a link to {shown(Path(end))})" if os.path.islink(output) else ""
    if end.lower().endswith(".toml"):
        for name in RECORD_TREES:
            folder = os.path.normcase(os.path.realpath(root.path / name))
            if end.startswith(folder + os.sep):
                raise InputError(
                    f"{shown(output)}{link}: {option} would write into {shown(root.path / name)}/, where every .toml "
                    "file is a record passprice reads (this output is none): write it outside the registry's record "
                    "folders, or under another suffix"
                )
    why = read_elsewhere(root, end)
    if why is not None:
        raise InputError(f"{shown(output)}{link}: {option} would {why}: write it elsewhere")


def read_elsewhere(root: Root, end: str) -> str | None:
    """What writing ``end`` (a resolved, normcased path: where a write lands) would do to a file passprice reads,
    outside the record files :func:`require_not_record` judges by their suffix, in words (``write into FOLDER/, …``,
    ``replace PATH, …``); ``None`` when nothing. Two kinds: a file of
    passprice's own package or of the JSON Schemas it validates against (:func:`schema_dir`, and the root's own
    ``schema/`` copy it compares them with), and a document a source record of ``root`` cites (``source.path``, a
    review or a design, any suffix: ``sweep R1 -o facts/stacks/README.md --force`` replaced the calibration document
    ``sources/passprice-stack-calibration.toml`` cites with CSV, exit 0, and ``check`` still said "all holds";
    ``-o CHECKOUT/schema/x.json`` wrote into the schemas every file is validated against: attack round 26). A source
    record that does not read is skipped (``check`` names it). Raises nothing for a hostile name."""
    folders = ((_PACKAGE, "passprice's own package"), (schema_dir(), "the JSON Schemas passprice validates against"),
               (root.path / "schema", "the registry's copy of passprice's JSON Schemas"))
    # The deepest folder first: an installed wheel's schemas lie inside its package (passprice/_data/schema), and
    # are named as the schemas (CI, session 15).
    placed = [(os.path.normcase(os.path.realpath(folder)), folder, what) for folder, what in folders]
    for real, folder, what in sorted(placed, key=lambda p: -len(p[0])):
        if end == real or end.startswith(real + os.sep):
            return f"write into {shown(folder)}/, {what}"
    import tomllib

    from passprice.files import read_regular
    from passprice.schema import MAX_FILE_BYTES, toml_loads

    try:
        with os.scandir(root.sources) as entries:
            records = sorted(e.name for e in entries if e.name.endswith(".toml"))
    except (OSError, ValueError):
        return None
    for name in records:
        try:
            document = toml_loads(read_regular(root.sources / name, MAX_FILE_BYTES).decode("utf-8"))
            cited = document["source"]["path"]
            if not isinstance(cited, str):
                continue
            if os.path.normcase(os.path.realpath(root.path / cited)) == end:
                return f"replace {cited}, the document {shown(root.sources / name)} cites (source.path)"
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, KeyError, TypeError,
                ValueError, OSError):
            continue
    return None


def require_not_other_record(root: Root, path: Path) -> None:
    """Refuse to write the record ``path`` (``registry/servings/NAME.toml``, ``registry/checkpoints/NAME.toml``)
    when it is a symbolic link to a file of another folder of ``root``'s records (:data:`RECORD_TREES`): ``new-serving
    evil R1 --force`` and ``import FILE --name evil --force``, ``evil.toml`` a link to ``facts/cards/a40.toml``,
    replaced the card with the serving (or the checkpoint entry) through the link, exit 0 (attack round 25). A link
    to a file of the same folder (another name of that kind's record) or outside the record folders is written
    through, as before. Raises :class:`InputError` naming the link and its end, before anything is written."""
    if root.embedded or not os.path.islink(path):
        return
    from passprice.files import target

    end = os.path.normcase(os.path.realpath(target(path)))
    if os.path.dirname(end) == os.path.normcase(os.path.realpath(os.path.dirname(os.path.abspath(path)))):
        return
    for name in RECORD_TREES:
        if end.startswith(os.path.normcase(os.path.realpath(root.path / name)) + os.sep):
            raise InputError(
                f"{shown(path)}: a symbolic link to {shown(Path(end))}, a file of another record folder: writing "
                "through it would replace that record: remove the link, or give another name"
            )


def require_no_registry_in_records(root: Root, directory: Path) -> None:
    """Refuse to start a registry in ``directory`` when it lies in (or is) one of ``root``'s record folders
    (:data:`RECORD_TREES`; links and ``..`` resolved): ``init facts/cards/mine`` run in a registry exited 0, and that
    registry's ``check`` then failed ("facts/cards/mine: not a folder passprice reads"), as it did for ``init
    registry/servings/x.toml`` ("is a folder, not a serving file"; attack round 25). The embedded registry has no
    folders of its own here. Raises :class:`InputError` naming the folder and the registry's record folder, before
    anything is written."""
    if root.embedded:
        return
    end = os.path.normcase(os.path.realpath(directory))
    for name in RECORD_TREES:
        folder = os.path.normcase(os.path.realpath(root.path / name))
        if end == folder or end.startswith(folder + os.sep):
            raise InputError(
                f"{shown(directory)}: inside {shown(root.path / name)}/, a record folder of the registry at "
                f"{shown(root.path)}, which reads its own records there and fails its check on a folder of .toml "
                "files it does not read (a new registry is one): start the new registry outside that registry's "
                "facts/, registry/, locks/ and sources/"
            )


def within(root: Root, path: Path | str) -> bool:
    """Whether ``path`` (relative to the working folder, or absolute), every symbolic link and ``..`` resolved, lies
    inside ``root``'s folder (also resolved). Raises :class:`InputError` as :func:`passprice.files.look` does (a
    name too long, a loop of links)."""
    try:
        text = os.fspath(path)
        head, tail = os.path.split(text)
        if os.path.isabs(head) and tail not in ("", ".", "..") and ".." not in head.split(os.sep):
            # A file in a folder already resolved (every serving of a registry's folder): its folder's resolved path
            # once a process, then the name itself, unless it is a link.
            real = os.path.realpath(text) if os.path.islink(text) else os.path.join(_real(head), tail)
        else:
            real = os.path.realpath(text)
        # As Path(real).is_relative_to(the root's), on the two strings (both absolute, resolved and normalised).
        top = os.path.normcase(_real(root.path))
        real = os.path.normcase(real)
        return real == top or real.startswith(top if top.endswith(os.sep) else top + os.sep)
    except (OSError, ValueError, RuntimeError) as e:  # a loop of links; a NUL in a name from a file
        raise InputError(f"{shown(path)}: not a file name ({type(e).__name__})") from None


@functools.lru_cache(maxsize=64)
def _real(folder: Path | str) -> str:
    """``folder`` with every link and ``..`` resolved, once a process (a root is looked up for each file read)."""
    return os.path.realpath(folder)


#: What a name in a registry file may not do, said in every refusal of one naming a file outside the root.
INSIDE = "a registry file names registry entries or files inside the registry"


#: Why a registry file may not name a file by a path relative to the working folder, and how to name it instead.
RELATIVE = (
    "is a path relative to the working folder, which a registry file read from another folder (or by diff, from "
    "another revision) does not find: give its registry name (`passprice import FILE --name NAME` for a checkpoint, "
    "a card's file into facts/cards/)"
)


def require_inside(root: Root, ref: str, folder: Path, where: str) -> None:
    """Refuse ``ref``, a name a registry file gives (``where``: the file and key, ``serving.toml: card``), when it
    is a path — to a file that exists, which the loaders would read — that lies outside ``root`` once every link and
    ``..`` is resolved; a registered entry's name (``folder/REF.toml``) and a path inside the root pass. So a
    serving with ``card = "/any/file.toml"`` cannot make ``check`` (CI) read a file of the machine and quote it in a
    pull-request comment. A path relative to the working folder is refused whatever it names (:data:`RELATIVE`):
    ``check`` run from the root found it, ``diff``'s snapshot of a revision did not. Names given on the command line
    are not held to this. Raises :class:`InputError`: one line naming ``where``, the name, and the root (or what to
    name instead). Inside a snapshot (:mod:`passprice.snapshot`) a name that passed
    is looked up once (a registry of thousands of servings names a few cards and checkpoints)."""
    from passprice import snapshot

    snapshot.made(("inside", root, ref, folder), lambda: _require_inside(root, ref, folder, where))


def _require_inside(root: Root, ref: str, folder: Path, where: str) -> None:
    from passprice.files import look

    bare = os.sep not in ref and "/" not in ref and not ref.endswith(".toml")
    if bare and is_there(folder / f"{ref}.toml"):
        return  # a registry name (also one like x.gguf): its entry is read, whatever the working folder holds
    if not os.path.isabs(ref) and (not bare or ref.endswith((".gguf", ".xz", ".gz"))):
        raise InputError(f"{where}: {ref!r} {RELATIVE}")
    if look(ref) is None or within(root, ref):
        return
    raise InputError(f"{where}: {shown(ref)} lies outside the registry ({shown(root.path)}): {INSIDE}")


def document_problem(root: Root, path: str, key: str = "source.path") -> str | None:
    """What is wrong with ``path`` (relative to ``root``) as *a document of this registry* (a source record's
    ``source.path``, or its ``source.excerpt``: ``key``, the key the advice names): ``None`` when it is a regular file
    inside the root, named by its own plain path (no ``.`` or
    ``..`` part, no symbolic link along it below the root); else the problem in words (not plain, through a link,
    nothing there, outside the registry, a FIFO, a device, a folder, a part no file name on Windows may be:
    :func:`windows_problem`). Nothing is opened: a FIFO or ``/dev/zero`` is
    named by its mode. Raises nothing for a hostile name: a name too long or a loop of links is its problem.

    Plain and link-free because a review reads the document at each revision through git (``passprice diff``), where
    a link is a blob holding its target's name and ``notes/../x.md`` names nothing: ``notes/link.md`` (a link to
    ``notes/real.md``) passed ``check`` while no revision's review could price what cited it ("BASE cannot price",
    locks said "out of date already on BASE"), and a review of an unchanged work tree said the document changed
    (slip round 29)."""
    from passprice.files import kind, look

    full = root.path / path
    try:
        found = look(full)
        if found is None:
            # What to do next (walkthrough 16): the line only said what was wrong.
            return (f"{path} is not a file of this registry: put the document there ({key} is read from the "
                    f"registry's top folder), or correct {key}")
        if not within(root, full):
            return f"{path} lies outside the registry (a document of this registry is a file inside its root)"
    except InputError as e:
        return f"{path}: {e}"
    parts = path.split("/")
    odd = sorted({p for p in parts if p in ("", ".", "..")})
    if odd:
        return (f"{path} is not a plain path (it holds {', '.join(repr(p) for p in odd)}): name the document by its "
                "own path from the registry's top folder, as git lists it (a review reads it at each revision)")
    # git's own folder holds no file git tracks (git refuses a path with a .git part, any case): a record naming
    # .git/config as its excerpt passed check, and init copied the checkout's git configuration (a core.fsmonitor
    # command, a remote's credentials) into the new registry's .git/config, which a later `git init` there kept and
    # ran (tests/test_attack114.py)
    if any(p.lower() == ".git" for p in parts):
        return (f"{path} lies in git's own folder (.git), where git tracks no file (a review reads the document "
                f"through git at each revision): put the document elsewhere in the registry, and name it in {key}")
    for part in parts:
        # The one rule of a name on every system (windows_problem): `notes/nul.md` or `docs/COM0/x.md` passed while
        # a clone on Windows cannot check the document out (issue 13's leftovers, session 26).
        problem = windows_problem(part)
        if problem is not None:
            return (f"{path}: {problem}, where no file of that name can be checked out: rename the document (and "
                    f"{key})")
    here = root.path
    for part in parts:
        here = here / part
        try:
            linked = stat.S_ISLNK(os.lstat(here).st_mode)
        except (OSError, ValueError):
            break  # looked up above: nothing more to say of it here
        if linked:
            at = "/".join(here.relative_to(root.path).parts)
            return (f"{path} passes through a symbolic link ({at}): a document of this registry is a file at its "
                    "own path (a review reads it through git at each revision, where a link holds only its "
                    f"target's name): put the document itself there, or name its own path in {key}")
    if not stat.S_ISREG(found.st_mode):
        return f"{path} is {kind(found.st_mode)}, not a regular file of this registry"
    return None


NO_SUCH_FILE = ": no such file"


def found_elsewhere(line: str, root: Root | None) -> str:
    """``line`` (an error line) with where its file is, when it is ``PATH: no such file`` for a plain relative
    ``PATH`` (every character printing, no component cut: :func:`passprice.files.shown` left it as given) that is not
    in the working folder but is a regular file below ``root`` (the registry the command reads) or below the source
    checkout of an editable install: ``PATH: no such file here (/tmp/x); /…/passprice has one: run there, or give
    /…/passprice/PATH``. Else ``line`` unchanged. Walkthrough 16: the README's tour names ``tests/data/…`` and
    ``examples/…``, the checkout's files, and run from another folder each said only "no such file". A ``PATH``
    whose ``..`` parts lead out of the top folder is none of its files. Raises nothing."""
    if not line.endswith(NO_SUCH_FILE):
        return line
    ref = line[: -len(NO_SUCH_FILE)]
    if not ref or os.path.isabs(ref) or ref != shown(ref):
        return line
    if os.path.normpath(ref).split(os.sep)[0] == os.pardir:
        # A path leading out of the top folder names no file of it: `sweep --file ../../main/examples/grid.toml`
        # run from /tmp/x was told "/…/attack has one … give /…/attack/../../main/examples/grid.toml", another
        # checkout's file (attack round 28).
        return line
    try:
        here = Path.cwd().resolve()
    except OSError:
        return line
    tops = [] if root is None else [root.path]
    source = _PACKAGE.parent.parent
    if source not in tops and _is_root(source):
        tops.append(source)
    for top in tops:
        try:
            found = top / ref
            if top.resolve() != here and found.is_file():
                return (f"{ref}{NO_SUCH_FILE} here ({shown(here)}); {shown(top)} has one: run there, or give "
                        f"{shown(found)}")
        except (OSError, ValueError):
            continue
    return line


def as_given(lines: list[str], root: Root | None, named: str | None = None) -> list[str]:
    """``lines`` (error or refusal lines) with each path below ``root`` written as the user would give it: relative
    to the working folder when the root was found at or above it (``facts/cards/h100.toml`` from the root,
    ``../facts/cards/h100.toml`` from its ``facts``), or below ``named`` as the user named the root (``--root
    ../reg``: ``../reg/facts/…``). A root is held resolved, so every path made from it was absolute: CI output named
    ``/home/runner/work/…/facts/cards/h100.toml`` where the user typed ``price gemma3-270m-h100`` (leftovers round
    21). The embedded facts leave the lines as they are but for a folder that may not be searched, named as
    :meth:`Root.folder_named` names it (:func:`_built_in_folder`, left40); a working folder outside a root found
    around it leaves them as they are. Only a
    whole path start is rewritten (after a blank, a parenthesis, a quote or the line's start).

    One rule for a root named by ``--root DIR``, relative or absolute: below ``DIR`` as typed, never its resolved
    folder (an absolute ``DIR`` was left resolved). Session 30: under ``--root /abs/link`` (a symbolic link to
    ``/abs/real``) ``reproduce zz`` said "not in /abs/real/locks" and ``fact show zz`` "/abs/real/facts/cards/zz.toml"
    where ``price zz`` said "registry/servings" (left31). A registry name relative to the root (:func:`named_in`)
    is left as it is; so is a URL's ``//`` under ``--root /``. Raises nothing."""
    import re

    if root is not None and root.embedded:
        return [_built_in_folder(root, line) for line in lines]
    if root is None or not lines:
        return lines
    try:
        here = Path.cwd().resolve()
    except OSError:
        return lines
    if named is not None:
        base = _spelled(named, root.path)
    elif named is None and (here == root.path or here.is_relative_to(root.path)):
        base = os.path.relpath(root.path, here)
    else:
        return lines
    prefix = os.path.join(str(root.path), "")  # `--root /`: "/", not "//" (which a URL's "https://" holds)
    if not any(prefix in line for line in lines):
        return lines
    to = "" if base == os.curdir else base if base.endswith(os.sep) else base + os.sep  # `--root /`: "/x", not "//x"
    # Not where a separator follows: no path below the root starts so, and under `--root /` "https://…" did (attack
    # round 56: the "//" of a URL was rewritten, "https:/toml.io", or "https:toml.io" run from "/").
    start = re.compile(r"(?<![^\s(\"'=,:\[])" + re.escape(prefix) + f"(?!{re.escape(os.sep)})")
    return [start.sub(lambda _: to, line) for line in lines]


def _built_in_folder(root: Root, line: str) -> str:
    """``line`` with the built-in registry's folder it leads with named as :meth:`Root.folder_named` names it, when
    it is a :data:`passprice.files.UNSEARCHABLE` line of a folder of ``root`` (the embedded default): a card that
    ``price`` and ``kv`` read in such a folder said the package's absolute path (``files.folder_refusal`` knows no
    root) where ``cards`` said ``the built-in registry's facts/cards`` (left40). Any other line is left as it is.
    Raises nothing."""
    folder = unsearchable_folder(line)
    if folder is None or not Path(folder).is_absolute() or not Path(folder).is_relative_to(root.path):
        return line
    return f"{root.folder_named(Path(folder))}{UNSEARCHABLE}"


def _spelled(named: str, path: Path) -> str:
    """The folder name ``named``, relative or absolute (which resolves to ``path``), in its shortest spelling that names
    ``path``: ``os.path.normpath``'s, which drops ``.`` and folds ``a/..``, when that resolves to ``path`` too, else
    ``named`` as given less trailing separators. Folding ``link/..`` is only right when ``link`` is no symbolic link:
    ``--root link/../reg`` with ``link`` a link into another folder named ``reg/facts/…``, a file of the working
    folder's ``reg`` (attack round 44). Raises nothing."""
    short = os.path.normpath(named)
    try:
        if Path(short).resolve() == path:
            return short
    except (OSError, RuntimeError, ValueError):
        pass
    return named.rstrip(os.sep) or named


def _require_folder(given: Path | str) -> None:
    """Refuse ``--root DIR`` when ``DIR`` is no folder to read, in the reader's words (:func:`passprice.files.look`):
    ``DIR: cannot read: the name is longer than the file system allows``, ``DIR: is a regular file, not a folder``,
    ``DIR: is a symbolic link to T, which does not exist``; a folder on the way that may not be searched names that
    folder. click judged the name first and said "Invalid value for '--root': Directory 'DIR' is a file." or "… is
    not readable." (left39). A folder that may be searched but not listed (mode 311) is a root like any other: no
    command lists the root itself, and one found from the working folder was never asked to be readable. Nothing
    there is left to :func:`find_root` ("not a passprice root"). Raises :class:`InputError`."""
    from passprice.files import kind, look

    found = look(given, "read")
    if found is None and os.path.islink(given):
        raise InputError(f"{shown(given)}: is a symbolic link to {shown(os.readlink(given))}, which does not exist")
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise InputError(f"{shown(given)}: is {kind(found.st_mode)}, not a folder: --root names a folder holding "
                         "facts/ and registry/")


def _is_root(path: Path) -> bool:
    return is_folder(path / "facts") and is_folder(path / "registry")


#: What a file of the embedded registry is named with (:func:`in_root`): its path below that registry means nothing in
#: the user's folder, which holds no ``locks/`` of its own (leftovers round 27b).
BUILT_IN = "the built-in registry's "


def in_root(root: Root, path: Path) -> str:
    """How a command names the registry file ``path`` of ``root`` (a lock, a checkpoint entry) in text and in
    ``--json`` alike: relative to the root (``locks/NAME.lock.toml``) when it lies inside it, prefixed
    :data:`BUILT_IN` when ``root`` is the embedded default (a command run outside any registry: ``price`` said
    ``under lock X (locks/X.lock.toml)``, a path not there relative to the user's folder), else as given. Links are
    resolved for the comparison (the root once a snapshot, a file through its folder: :func:`snapshot.resolved`).
    Raises nothing."""
    try:
        shown = str(resolved(path).relative_to(resolved_folder(root.path)))
    except (OSError, ValueError):
        return str(path)
    return f"{BUILT_IN}{shown}" if root.embedded else shown


def named_in(root: Root | None, path: Path | str) -> str:
    """``path`` (a file or folder of ``root``) as text names it: :func:`in_root`'s name, shown (:func:`shown`), or
    ``path`` shown as given without a ``root``. The one helper for a registry file inside a line of text: "not found
    in", "leads out of", a renamed file's hint, a serving file's own name before its problem, "wrote" (leftovers
    29b: each named ``/abs/root/…`` under an absolute ``--root`` where ``check`` said ``registry/…``). The file's
    own name is kept when it is a symbolic link (its folder's links are resolved for the comparison): a card file
    ``aaa.toml`` linking to ``kept.toml`` is the card ``aaa``, and the hint naming it says ``facts/cards/aaa.toml``.
    Raises nothing."""
    if root is None:
        return shown(path)
    given = Path(path)
    try:
        rel = str((given.parent.resolve() / given.name).relative_to(root.path.resolve()))
    except (OSError, ValueError, RuntimeError):
        return shown(given)
    return shown(f"{BUILT_IN}{rel}" if root.embedded else rel)


def registry_named(root: Root) -> str:
    """Which registry ``root`` is, for ``--json`` beside a path relative to it (:func:`in_root` says it in text):
    ``"built-in"`` for the embedded default (a command run outside any registry), else the registry's folder as
    the command found or was given it. Raises nothing."""
    return "built-in" if root.embedded else str(root.path)


def relative_in(root: Root, path: Path) -> str:
    """``path`` relative to ``root`` when it lies inside it (links resolved for the comparison), else as given: the
    machine-usable half of :func:`in_root` (``--json``'s ``path``, with :func:`registry_named`). Raises nothing."""
    try:
        return str(path.resolve().relative_to(root.path.resolve()))
    except (OSError, ValueError):
        return str(path)


def pasted_path(root: Root, path: Path) -> str:
    """The registry file ``path`` as a command to paste names it: relative to the root for a registry of the
    user's (run from its folder, as ``check`` is), absolute for the built-in one (a relative ``-o`` is read from
    the working folder, where the built-in registry's ``locks/`` is not: ``reproduce`` names it so too). Raises
    nothing."""
    if root.embedded:
        try:
            return str(path.resolve())
        except OSError:
            return str(path)
    return relative_in(root, path)


def embedded_root() -> Root:
    """The package's own copy of the files (``passprice/_data``), or, for a source checkout installed in editable
    mode, the checkout the package lives in."""
    data = _PACKAGE / "_data"
    if _is_root(data):
        return Root(data, embedded=True)
    source = _PACKAGE.parent.parent
    if _is_root(source):
        return Root(source, embedded=True)
    raise InputError(
        f"{data}: the embedded facts are missing; reinstall passprice or name a registry: passprice --root DIR COMMAND"
    )


def read_only(root: Root) -> str:
    """What ``root``, the embedded default, is called when a command will not write into it: "the embedded facts
    are read-only", or, for an editable install (the default is passprice's own source checkout, writable), that
    checkout named as such, and how to edit it: from inside it (walkthrough 13: "/…/passprice: the embedded facts are
    read-only" named the user's own writable checkout, run from another folder)."""
    if root.path != _PACKAGE / "_data":
        return (f"{root.path}: the facts passprice ships, read-only from outside (this is the source checkout of an "
                "editable install: run inside it to edit its files)")
    return f"{root.path}: the embedded facts are read-only"


def outside_registry(root: Root, why: str) -> InputError:
    """The one line a command that needs a registry of the user's own gives when ``root`` is the embedded default
    (passprice run outside any registry): ``why`` the facts passprice ships will not serve (they are read-only,
    their history is not the user's), then what to do. Its path may itself be a git checkout (an editable install's
    source), so the line does not say it is none; nor does it open with that path, which read as the folder found
    to be in no registry (walkthrough 15, run from /tmp with an editable install: "/home/you/passprice: not in a
    registry")."""
    return InputError(
        f"no registry here (passprice is reading the facts it ships, {root.path}): {why}; run inside your registry, "
        "start one with `passprice init DIR`, or name one before the command: `passprice --root DIR COMMAND`"
    )


def schema_dir() -> Path:
    """The JSON Schemas the package was built with (the embedded copy, or the source checkout's ``schema/``), found
    once a process (every file read asks for it)."""
    return _schema_dir()


@functools.cache
def _schema_dir() -> Path:
    for candidate in (_PACKAGE / "_data" / "schema", _PACKAGE.parent.parent / "schema"):
        if candidate.is_dir():
            return candidate
    raise InputError(f"{_PACKAGE / '_data' / 'schema'}: the JSON Schemas are missing; reinstall passprice")


def schema_copy_drift(root: Root) -> list[str]:
    """The files of ``root``'s own ``schema/`` copy (the one editors validate against) that differ from the package's
    schemas passprice validates against, one line each (``schema/card.schema.json: differs from …``); empty for a
    root with no copy or an equal one. Never raises: a copy that cannot be read is one line too."""
    from passprice.files import read_regular

    own = root.path / "schema"
    package = schema_dir()
    try:
        if not is_folder(own) or own.resolve() == package.resolve():
            return []
    except (InputError, OSError):
        return []
    lines = []
    for ours in sorted(package.glob("*.schema.json")):
        copy = own / ours.name
        try:
            same = read_regular(copy, 8 << 20) == ours.read_bytes()
        except InputError as e:
            lines.append(f"schema/{ours.name}: {str(e).removeprefix(f'{shown(copy)}: ')}")
            continue
        if not same:
            lines.append(
                f"schema/{ours.name}: differs from this passprice's copy, which it validates against (editors "
                f"validate against this one): copy {shown(ours)} over it"
            )
    return lines


def against_root(root: Root, ref: str, kind: str) -> Path | None:
    """The file a relative ``.toml`` path ``ref`` names (``sources/X.toml``), read as a shell user expects: against
    the working folder first, and where nothing is there but a file is under the registry's root, that file, said
    nothing of (``locks/X.lock.toml`` was read against the root and ``sources/X.toml`` was not: ``audit --source
    sources/X.toml`` from a subfolder said "no such source file", tests/test_fix190.py). ``None`` for any other
    reference (a name, an absolute path, a path there from the working folder, a folder or a link: the caller reads
    or refuses them as before). Raises :class:`~passprice.errors.NotFound` naming both places tried when neither
    holds anything of that path."""
    if not ref.endswith(".toml") or os.path.isabs(ref) or ("/" not in ref and os.sep not in ref):
        return None
    if os.path.lexists(ref):
        return None
    there = root.path / ref
    if is_there(there):
        return there
    if os.path.lexists(there):
        return None
    raise NotFound(f"{shown(ref)}: no such {kind} file (looked for from the working folder and from the registry's "
                   f"root, {shown(root.path.resolve())})")


def stays_in(folder: Path, ref: str) -> bool:
    """Whether ``folder/REF.toml``, a name joined to its kind's folder, is a file of that folder once its ``.`` and
    ``..`` parts are resolved (by the text: links are the file system's): ``./a40`` and ``../cards/a40`` from
    ``facts/cards`` are; ``../drafts/x`` and ``../../../other/facts/cards/a40`` are not, and named a drafting method
    read as a card, or another registry's card that ``fact set`` then edited, exit 0 (attack round 26). Raises
    nothing."""
    joined = os.path.normpath(os.path.join(folder, f"{ref}.toml"))
    return os.path.dirname(joined) == os.path.normpath(folder)


def entry_named(ref: str, folder: Path) -> str | None:
    """The name of the entry of ``folder`` that ``ref`` reads when it is a name with a folder in it that stays in
    ``folder`` (:func:`stays_in`: ``.//m``, ``../checkpoints/m``), as every loader reads it; ``None`` for any other
    reference (a plain name, a path ending in ``.toml`` or a GGUF suffix, a name leading out, an entry not there).
    ``price --checkpoint .//m`` titled its report ".//m on a40" (attack round 29; a lock records the name since round
    28). Raises nothing."""
    if ref.endswith((".toml", ".gguf", ".xz", ".gz", "/")) or ("/" not in ref and os.sep not in ref):
        return None
    if not stays_in(folder, ref):
        return None
    entry = Path(os.path.normpath(os.path.join(folder, f"{ref}.toml")))
    return entry.name[: -len(".toml")] if is_there(entry) else None


def outside(kind: str, ref: str, folder: Path, known: list[str], root: Root | None = None) -> InputError:
    """The error for ``ref``, a ``kind`` name whose ``..`` parts lead out of ``folder`` (:func:`stays_in` false):
    where it leads, and, when a record of another kind of the same root lies there, what that record is: "no such
    stack file" for ``--stack ../cards/h100`` hid that the name reached a card (attack rounds 18, 26). A record
    from elsewhere is read by its path, ending in ``.toml``. An absolute path, or a path to a folder or a file of
    another kind, is told as :func:`not_found` tells it ("is a folder", "not a card file": round 27's `price
    /dev/zero`, or `--card ./mine` of a TOML file without its suffix, said "leads out of it (to /dev/zero.toml)").
    The folder and where the name leads are named as :func:`in_root` names a file of ``root`` (leftovers 29b: "a card
    name is a file of /abs/root/facts/cards" under an absolute ``--root``). Raises nothing."""
    if os.path.isabs(ref) or is_there(ref) or is_folder(ref) or os.path.islink(ref):
        return not_found(kind, ref, folder, known, root)
    bare = ref.rstrip("/")
    if bare != ref:  # `--card a40/` was said to lead out of facts/cards "(to facts/cards/a40/.toml)" (attack round 28)
        entry = Path(os.path.normpath(os.path.join(folder, bare or ".")) + ".toml")
        named = (f"; the registered {kind} is named {entry.stem}"
                 if bare and stays_in(folder, bare) and is_there(entry) else "")
        return NotFound(f"{shown(ref)}: no such {kind} file: a name ending in / names a folder{named}")
    joined = Path(os.path.normpath(os.path.join(folder, f"{ref}.toml")))
    top = folder.parent.parent
    what = ""
    for other, rel in _KINDS.items():
        if joined.parent == Path(os.path.normpath(top / rel)) and is_there(joined):
            what = f", the {other} {joined.stem}" if other != kind else f", a {kind} of another folder"
    if not what and is_there(joined):
        what = ", a file of another folder"
    # `--card sub/a40` (or `\u2066../../facts/cards/a40`, whose first part is a folder name) was said to lead out of
    # facts/cards "(to facts/cards/sub/a40.toml)", a path inside it (attack round 30).
    below = os.path.commonpath([joined, os.path.normpath(folder)]) == os.path.normpath(folder)
    how = "names a file in a folder below it" if below else "leads out of it"
    return NotFound(
        f"{shown(ref)}: no such {kind} file: a {kind} name is a file of {named_in(root, folder)}, and this one {how} "
        f"(to {named_in(root, joined)}{what}); to read a {kind} file from elsewhere give its path, ending in .toml"
    )


def not_found(kind: str, ref: str, folder: Path, known: list[str], root: Root | None = None) -> InputError:
    """The error for ``ref``, a ``kind`` (card, serving, checkpoint …) that names nothing: a folder where a file
    belongs (``ref`` itself, or ``folder/ref.toml``), a file that is not a ``.toml`` one, a path to no file (``ref``
    holds a path separator or ends in ``.toml``), a symbolic link to no file (``ref`` or ``folder/ref.toml``: the
    name is listed as registered, so "not found; did you mean REF?" named the very name), else a name not in
    ``folder``, with the first :data:`MAX_LISTED_NAMES` of the ``known`` names listed and the rest counted.
    ``folder`` is named as :func:`in_root` names a file of ``root`` (``registry/servings``, whatever ``--root``
    was given as; it read ``/abs/root/registry/servings`` under an absolute ``--root``, session 29), or as given
    without a ``root``."""
    if ref and is_folder(ref):
        return Unreadable(f"{shown(ref)}: is a folder, not a {kind} file")
    entry = folder / f"{ref}.toml"
    if ref and "/" not in ref and os.sep not in ref and is_folder(entry):  # registry/servings/x.toml/ for `x`
        return Unreadable(f"{shown(entry)}: is a folder, not a {kind} file")
    if ref and is_there(ref):
        return InputError(f"{shown(ref)}: not a {kind} file (a {kind} file is TOML, named NAME.toml)")
    for link in (entry, ref) if ref and "/" not in ref and os.sep not in ref else (ref,):
        if ref and os.path.islink(link):  # a link to nothing: its name is registered, its file is gone
            return NotFound(
                f"{shown(link)}: a symbolic link to {shown(os.readlink(link))}, which names no file (restore the "
                f"{kind} file it links to, or remove the link)"
            )
    if ref.endswith(("/", os.sep)):
        # `--card ../cards/` (facts/cards/.toml once joined, a name that stays in its folder) said only "no such card
        # file" (attack round 29), where `--card nope/` says why
        named = os.path.normpath(os.path.join(folder, ref))
        which = f"; {shown(ref)} is {shown(folder)}, the folder of {kind} files" if named == os.path.normpath(
            folder) else ""
        return NotFound(f"{shown(ref)}: no such {kind} file: a name ending in / names a folder{which}")
    if ref.endswith(".toml") or "/" in ref or os.sep in ref:
        stem = ref.removesuffix(".toml")
        if "/" not in ref and os.sep not in ref and stem in known:
            return NotFound(f"{shown(ref)}: no such {kind} file; the registered {kind} is named {stem} (no .toml)")
        return NotFound(f"{shown(ref)}: no such {kind} file")
    where = shown(in_root(root, folder)) if root is not None else str(folder)
    listed = ", ".join(known[:MAX_LISTED_NAMES]) or "none"
    if len(known) > MAX_LISTED_NAMES:
        listed += f" … ({len(known):,} in all, each a file of {where})"
    slip = spelled_apart(ref, known)
    if slip is not None:  # H200_SXM_141GB for h200_sxm_141gb: the suggestion alone (walkthrough 117)
        return NotFound(f"{kind} {ref!r}: not found in {where}; did you mean {slip[0]}? ({slip[1]})")
    # a look-alike name (a Cyrillic х in h200_sхm_141gb) is spelled: "card 'h200_sхm_141gb': not found …; did you mean
    # h200_sxm_141gb" named two strings that print alike (attack round 38)
    hint = _hint(kind, ref, folder, known, root)
    named = repr(ref) if repr(ref).isascii() or ascii(ref) in hint else f"{ref!r} (spelled {ref!a})"
    own = _own_card(kind, ref, hint, root)
    return NotFound(f"{kind} {named}: not found in {where}{hint} (registered: {listed}){own}")


#: How the hint a stack name not found ends with begins (:func:`_own_card`): ``calibrate`` says its own instead
#: (:func:`passprice.calibrate.stack_to_fit`).
OWN_STACK = "; a stack not registered is a file of your own"


def _own_card(kind: str, ref: str, hint: str, root: Root | None) -> str:
    """What a card name not found ends with when it is no record of another kind (``hint`` empty, or the closest
    names): how to add a card of one's own, ``; a card not registered is a file of your own: … facts/cards/NAME.toml
    …`` (walkthrough 106: ``price --card rtx5090`` said only "did you mean rtx_4090", and a new
    user took the cards for all there are); for a stack, which file to copy where and that ``calibrate --stack NAME``
    fits it. Outside any registry, where to make one. ``""`` for another kind. Raises nothing."""
    if kind not in ("card", "stack") or not (hint == "" or hint.startswith("; did you mean")):
        return ""
    plain = bool(ref) and ref.isprintable() and windows_problem(ref) is None and not any(c in ref for c in "/\\")
    name = ref if plain else "NAME"
    where = " in a registry of your own (passprice init DIR starts one)" if root is not None and root.embedded else ""
    if kind == "stack":  # `price --stack vllm` named no way to add one (tests/test_fix54w.py)
        return (f"{OWN_STACK}{where}: copy the closest registered stack's file "
                f"to facts/stacks/{name}.toml, add your measured runs of it (registry/measurements/, stack = "
                f"\"{name}\"), and passprice calibrate --stack {name} fits its facts to them (README, 'Serving "
                "stacks')")
    return (f"; a card not registered is a file of your own{where}: copy the closest registered card's file "
            f"to facts/cards/{name}.toml and set its facts (README, 'A card of your own')")


#: The most names a command given many (``sweep``'s servings and cards, ``compare --cards``) says are not found before
#: it stops looking: each is looked for where it might be instead (another kind's folder, the facts passprice ships,
#: the closest names), about half a millisecond a name, so 5,000 unknown ``--cards`` took 4.6 s in a sweep and 12.7 s
#: in ``compare``, each printing 5,000 lines (attack round 47); the rest are counted in one line.
MAX_NOT_FOUND = 20


#: The most registered names a "not found" line lists (the rest counted; a source id not found names only those its
#: "did you mean" offers, :func:`passprice.sources.registered_ids`): 1,000 runs naming cards a registry of 118 does
#: not hold printed 1.99 MB on stderr, each line about 2 KB of names (attack round 38). The nearest names are said
#: first by the hint ("did you mean").
MAX_LISTED_NAMES = 40


#: The record folders, relative to a root, a name given for one kind may be registered in instead.
_KINDS = {"card": "facts/cards", "serving": "registry/servings", "checkpoint": "registry/checkpoints",
          "drafting method": "facts/drafts", "routing record": "facts/routing", "serving stack": "facts/stacks"}


#: The record kinds a user writes by hand under a name another kind's record has (the README's routing record
#: ``my-mixtral`` of the checkpoint ``my-mixtral``), with what the file holds: a name not found of such a kind that
#: is a record of another kind says which file to write (walk95: it said only "my-mixtral is a registered
#: checkpoint, not a routing record").
_WRITTEN = {"routing record": "a [routing] table, schema/routing.schema.json",
            "drafting method": "a [method] table, schema/draft.schema.json"}


def _hint(kind: str, ref: str, folder: Path, known: list[str], root: Root | None = None) -> str:
    """What a name not found is likely meant as: a record of another kind of the same root (a serving given where a
    checkpoint belongs, a card where a serving does), else the registered names closest to it (:func:`_closest`).
    A registered name that is ``ref`` in another Unicode normalization (``e`` + U+0301 typed, ``é`` registered) is
    said first, each name's code points shown: "card 'é40': not found (registered: …, é40)" named two strings that
    print alike (attack round 26)."""
    import unicodedata

    mine = unicodedata.normalize("NFC", ref)
    alike = [k for k in known if k != ref and unicodedata.normalize("NFC", k) == mine]
    if alike:
        return (f"; {ref!a} is the registered {alike[0]!a} in another Unicode normalization (they print "
                "alike): give the name as registered")
    top = folder.parent.parent
    for other, rel in _KINDS.items():
        place = top / rel
        if other != kind and place != folder and is_there(place / f"{ref}.toml"):
            if kind == "serving" and other in ("checkpoint", "card"):
                return f"; {ref} is a registered {other}, not a {kind}{_servings_of(folder, other, ref)}"
            if kind in _WRITTEN:  # walk95: the README's routing demo names the record after its checkpoint
                return (f"; {ref} is a registered {other}, not a {kind}: to add a {kind} of that name, write "
                        f"{_KINDS[kind]}/{ref}.toml ({_WRITTEN[kind]})")
            return f"; {ref} is a registered {other}, not a {kind}{_serving_part(place / f'{ref}.toml', kind)}"
    from passprice import snapshot

    # Listed once a read of the registry: check's 1,000 runs naming 1,000 cards not registered listed the root's
    # folders 1,000 times (1.9 of 4.7 s profiled; attack round 38).
    strays = snapshot.made(("stray-folders", str(top)), lambda: stray_folders(Root(top)))
    for stray, meant, _ in strays if "/" not in ref and os.sep not in ref else ():
        if meant is not None and top / meant == folder and is_there(stray / f"{ref}.toml"):
            return (f"; {named_in(root, stray / f'{ref}.toml')} lies in a folder passprice does not read: move it "
                    f"to {meant}/")
    if kind == "checkpoint" and (renamed := _renamed_entry(ref, folder, top=top)) is not None:
        return (f"; {named_in(root, renamed)} names its entry {ref!r} (its file renamed, its [entry] name not): rename "
                f"the file back to {ref}.toml, or set its [entry] name to {renamed.stem!r} and name the checkpoint so "
                "here")
    if kind == "card" and (card := _renamed_card(ref, folder, top)) is not None:
        copies, title = card
        if len(copies) == 1:
            return (f"; {named_in(root, copies[0])} is {title!r} too, the card passprice ships as {ref} (its file "
                    f"renamed?): rename it back to {ref}.toml, or name the card {copies[0].stem} here")
        files = ", ".join(named_in(root, p) for p in copies[:-1]) + f" and {named_in(root, copies[-1])}"
        names = ", ".join(p.stem for p in copies[:-1]) + f" or {copies[-1].stem}"
        both = "both" if len(copies) == 2 else "all"
        return (f"; {files} are {both} {title!r}, the card passprice ships as {ref} (renamed copies?): rename the "
                f"one meant back to {ref}.toml and remove the others, or name the card {names} here")
    shipped = _shipped_hint(kind, ref, folder, top)
    if kind == "checkpoint" and shipped.startswith("; " + ref) and (same := _same_header_entries(ref, folder, top)):
        # walk138: an entry renamed with `git mv` and its [entry] name set anew was told "copy … into
        # registry/checkpoints", which duplicates the entry that holds it
        names = " or ".join(p.stem for p in same[:3])
        files = ", ".join(named_in(root, p) for p in same[:3])
        return (f"; {ref} is a checkpoint of the facts passprice ships, and this registry holds its header under "
                f"another name: {files} (the same header sha256; renamed?): name {names} here instead (copying "
                f"{ref} in would register the same checkpoint twice)")
    if shipped.startswith("; " + ref):
        return shipped
    return did_you_mean(ref, known) or shipped


def _same_header_entries(ref: str, folder: Path, top: Path) -> list[Path]:
    """The checkpoint entry files of ``folder`` (a registry's ``registry/checkpoints`` at ``top``, not the facts
    passprice ships) whose ``[header] sha256`` is that of the entry passprice ships as ``ref``: the same checkpoint
    under another name (its file renamed and its ``[entry] name`` set anew), each read as :func:`_renamed_entries`
    reads them (the first :data:`RENAMED_HEAD_BYTES` bytes of at most :data:`MAX_RENAMED_SCAN` regular files).
    Empty when none is, or the shipped entry's digest is not read. Never raises."""
    import re

    digest = re.compile(r'\[header\][^\[]*?^sha256 = "([0-9a-f]{64})"$', re.MULTILINE)
    try:
        shipped = embedded_root().path / "registry" / "checkpoints" / f"{ref}.toml"
        with open(shipped, "rb") as handle:
            found = digest.search(handle.read(RENAMED_HEAD_BYTES).decode("utf-8", "replace"))
        files = sorted(p for p in folder.iterdir() if p.suffix == ".toml" and p.stem != ref)
    except (InputError, OSError):
        return []
    if found is None:
        return []
    inside = os.path.realpath(top)
    out = []
    for path in files[:MAX_RENAMED_SCAN]:
        try:
            if os.path.commonpath([os.path.realpath(path), inside]) != inside:
                continue
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                head = os.read(fd, RENAMED_HEAD_BYTES).decode("utf-8", "replace")
            finally:
                os.close(fd)
        except (OSError, ValueError):
            continue
        mine = digest.search(head)
        if mine is not None and mine.group(1) == found.group(1):
            out.append(path)
    return out


def serving_card(path: Path) -> str | None:
    """The card the serving file ``path`` names, when it reads and the name is a plain one; else ``None``. Never
    raises."""
    part = _serving_part(path, "card")
    return part.removeprefix(" (its card is ").removesuffix(": give that)") if part else None


def _serving_part(path: Path, kind: str) -> str:
    """For a serving's name given where a ``kind`` of ``checkpoint`` or ``card`` belongs, the one its file
    ``path`` names, to give instead (``: its checkpoint is deepseek-r1-distill-qwen-7b-q4_k_m: give that``); ``""``
    for another kind, or a file that does not read or names no plain name there. ``passprice kv r1-qwen7b-h200``
    said only "r1-qwen7b-h200 is a registered serving, not a checkpoint", leaving the user to open the serving's
    file to find the name wanted (walkthrough 43). Never raises."""
    if kind not in ("checkpoint", "card"):
        return ""
    import re
    import tomllib

    from passprice.files import read_regular
    from passprice.schema import toml_loads

    try:
        named = toml_loads(read_regular(path, SERVING_SCAN_BYTES).decode("utf-8")).get(kind)
    except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError, OSError):
        return ""
    if not isinstance(named, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", named, flags=re.ASCII):
        return ""
    return f" (its {kind} is {named}: give that)"


#: The most serving files :func:`_servings_of` reads, and the most servings it names.
MAX_SERVINGS_SCAN = 200
MAX_SERVINGS_NAMED = 5


def _servings_of(folder: Path, kind: str, ref: str) -> str:
    """For a checkpoint's or card's name ``ref`` given where a serving belongs, what to give instead: the servings
    of ``folder`` naming it as their ``kind`` (the first :data:`MAX_SERVINGS_NAMED`, in name order, of the first
    :data:`MAX_SERVINGS_SCAN` files, read once a snapshot), and the options that price it without one (``: give a
    serving of it, gemma3-270m-h100, or price it with --checkpoint gemma3-270m-q4_k_m --card CARD``). ``passprice
    audit gemma3-270m-q4_k_m`` said only "gemma3-270m-q4_k_m is a registered checkpoint, not a serving"
    (walkthrough 43). Never raises."""
    from passprice import snapshot

    pairs = snapshot.made(("servings-named", str(folder)), lambda: _servings_named(folder))
    found = [name for name, named in pairs if named.get(kind) == ref][:MAX_SERVINGS_NAMED]
    other = "--card CARD" if kind == "checkpoint" else "--checkpoint CHECKPOINT"
    options = f"--{kind} {ref} {other}"
    if not found:
        return f" (price it with {options})"
    return f" (give a serving of it, {', '.join(found)}, or price it with {options})"


#: The most bytes of a serving file :func:`_servings_named` reads (a registered serving takes under 1 KB).
SERVING_SCAN_BYTES = 16 << 10


def _servings_named(folder: Path) -> list[tuple[str, dict[str, str]]]:
    """Each of the first :data:`MAX_SERVINGS_SCAN` serving files of ``folder`` (in name order) that reads within
    :data:`SERVING_SCAN_BYTES`: its name and the ``checkpoint`` and ``card`` it names. Never raises."""
    import tomllib

    from passprice.files import read_regular
    from passprice.schema import toml_loads

    try:
        with os.scandir(folder) as entries:
            files = sorted(e.name for e in entries if e.name.endswith(".toml"))[:MAX_SERVINGS_SCAN]
    except (OSError, ValueError):
        return []
    out: list[tuple[str, dict[str, str]]] = []
    for name in files:
        try:
            document = toml_loads(read_regular(folder / name, SERVING_SCAN_BYTES).decode("utf-8"))
        except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError, OSError):
            continue
        named = {k: v for k in ("checkpoint", "card") if isinstance(v := document.get(k), str)}
        out.append((name.removesuffix(".toml"), named))
    return out


#: The most checkpoint entry files :func:`_renamed_entry` opens, and the bytes it reads of each (an entry's
#: ``[entry]`` table comes first, as ``import`` writes it).
MAX_RENAMED_SCAN = 1000
RENAMED_HEAD_BYTES = 4096


def _renamed_entries(ref: str, folder: Path, table: str = "entry", top: Path | None = None) -> list[Path]:
    """The checkpoint entry files of ``folder`` whose ``[entry]`` (or ``[table]``) still names ``ref`` under another
    file name (the file renamed by hand, its name not), found in the first :data:`RENAMED_HEAD_BYTES` bytes of at
    most :data:`MAX_RENAMED_SCAN` files, each that does, in sort order (none: empty). A serving naming the entry
    said only that the name was "a checkpoint of the facts passprice ships": copy it in (walkthrough 21). A symbolic
    link leading out of ``top`` (the registry's folder) is passed over unread: a link ``aaa.toml`` to a copy of the
    H200's card outside the registry was named ("name the card aaa here"), which the loader then refused as outside
    (attack round 36).
    Two card files carrying one ``[card] name`` were told apart by sort order alone: the hint named the first
    (slip round 32). Never raises."""
    import re

    wanted = re.compile(r"\[" + re.escape(table) + r'\][^\[]*?^name = "' + re.escape(ref) + r'"$', re.MULTILINE)
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".toml" and p.stem != ref)
    except OSError:
        return []
    found: list[Path] = []
    seen: set[str] = set()
    inside = os.path.realpath(top) if top is not None else None
    for path in files[:MAX_RENAMED_SCAN]:
        try:
            if inside is not None and os.path.islink(path):
                real = os.path.realpath(path)
                if os.path.commonpath([real, inside]) != inside:
                    continue
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                head = os.read(fd, RENAMED_HEAD_BYTES).decode("utf-8", "replace")
            finally:
                os.close(fd)
        except OSError:
            continue
        if wanted.search(head) and (real := os.path.realpath(path)) not in seen:
            seen.add(real)  # a link to a file already named is that file, under another name
            found.append(path)
    return found


def _renamed_entry(ref: str, folder: Path, table: str = "entry", top: Path | None = None) -> Path | None:
    """The first of :func:`_renamed_entries` (``None``: none)."""
    found = _renamed_entries(ref, folder, table, top)
    return found[0] if found else None


def _renamed_card(ref: str, folder: Path, top: Path) -> tuple[list[Path], str] | None:
    """A card file of ``folder`` (a registry's ``facts/cards`` at ``top``, not the facts passprice ships) holding the
    card passprice ships as ``ref`` under another file name — its ``[card] name`` (the name it is sold under, read off
    the shipped file's first :data:`RENAMED_HEAD_BYTES` bytes) the same —, with that name; ``None`` when there is
    none. A card's file renamed in a registry of one's own (``h200_sxm_141gb.toml`` to ``h200.toml``) left every
    serving naming it told "a card of the facts passprice ships: copy it in", over the registry's own edited copy
    (walkthrough 22). Every such file is named (two copies named the first alone, slip round 32). Never raises."""
    import re

    try:
        shipped = embedded_root().path
        if top.resolve() == shipped.resolve() or folder != top / "facts" / "cards":
            return None
        record = shipped / "facts" / "cards" / f"{ref}.toml"
        if "/" in ref or os.sep in ref or not is_there(record):
            return None
        with open(record, "rb") as f:
            head = f.read(RENAMED_HEAD_BYTES).decode("utf-8", "replace")
    except (InputError, OSError):
        return None
    found = re.search(r'^\[card\][^\[]*?^name = "((?:[^"\\]|\\.)*)"$', head, re.MULTILINE)
    if found is None:
        return None
    title = found.group(1)
    renamed = _renamed_entries(title, folder, "card", top)
    return (renamed, title) if renamed else None


def spelled_apart(ref: str, known: list[str]) -> tuple[str, str] | None:
    """The one name of ``known`` that is ``ref`` but for letter case and ``-`` for ``_`` (or ``_`` for ``-``), with
    what differs (``the name differs only in case; names are matched exactly``), or ``None`` when no name, or more
    than one, is. Walkthrough 117: ``--card H200_SXM_141GB`` was answered "did you mean h200_sxm_141gb?" and then
    told to copy the closest card's file to facts/cards/H200_SXM_141GB.toml, a card of its own; a name that differs
    from a registered one only so is a slip, and the suggestion is all that is said. Raises nothing."""

    def key(name: str) -> str:
        return name.lower().replace("_", "-")

    wanted = key(ref)
    found = [name for name in known if name != ref and key(name) == wanted]
    if len(found) != 1:
        return None
    name = found[0]
    parts = []
    if name.replace("_", "-") != ref.replace("_", "-"):
        parts.append("case")
    if name.lower() != ref.lower():
        parts.append("'-' vs '_'")
    return name, f"the name differs only in {' and in '.join(parts)}; names are matched exactly"


def did_you_mean(ref: str, known: list[str]) -> str:
    """``; did you mean A or B?``: the at most three names of ``known`` that hold ``ref`` (case aside: ``h200`` for
    ``h200_sxm_141gb``, ``GEMMA3-270M-H100`` for ``gemma3-270m-h100``), then those closest to it
    (:func:`_closest`); empty when none is."""
    lowered = ref.lower()
    holding = [name for name in known if lowered and lowered in name.lower()]  # `h200` for h200_sxm_141gb
    close = [*holding, *(n for n in _closest(ref, known) if n not in holding)][:3]
    return f"; did you mean {' or '.join(close)}?" if close else ""


def shipped_hint(kind: str, ref: str, folder: Path, top: Path) -> str:
    """:func:`_shipped_hint`, for a lock too (``kind`` ``lock``: ``locks/NAME.lock.toml``, ``ref`` ``NAME`` or
    ``NAME.lock.toml``), which :func:`passprice.locks.lock_path` adds to its "no such lock" line as
    :func:`not_found` does for a card or serving (session 13: ``reproduce NAME`` of a shipped lock under ``--root``
    said nothing of it)."""
    return _shipped_hint(kind, ref, folder, top)


def _shipped_hint(kind: str, ref: str, folder: Path, top: Path) -> str:
    """Where a name not found in the registry at ``top`` is: a record of the facts passprice ships (the embedded
    default, :func:`embedded_root`) while ``top`` is another registry (``--root DIR``, or one of the user's own that
    lacks it: ``passprice init`` copies cards and sources, not servings); or, when ``top`` is that default because
    no registry was found at or above the working folder, a name of the user's own registry, which passprice did not
    look in. Empty when neither applies (and for a name with a path separator, and for a folder passprice made for
    itself, :func:`temporary_root`). Never raises."""
    rel = _KINDS.get(kind, "locks" if kind == "lock" else None)
    suffix = ".lock.toml" if kind == "lock" else ".toml"
    if rel is None or not ref or "/" in ref or os.sep in ref or is_temporary(top):
        return ""
    try:
        shipped = embedded_root().path
        same = top.resolve() == shipped.resolve()
        here = Path.cwd().resolve()
    except (InputError, OSError):
        return ""
    if not same:
        record = shipped / rel / f"{ref.removesuffix(suffix)}{suffix}"
        if folder == top / rel and is_there(record):
            return (f"; {ref} is a {kind} of the facts passprice ships, not of this registry ({top}): copy "
                    f"{shown(record)} into {shown(folder)} to use it here")
        return ""
    if top.resolve() not in _NAMED and not any(_is_root(f) for f in (here, *here.parents)):
        return (f"; no registry was found at or above the working folder, so passprice looked in the facts it ships "
                f"only: for a {kind} of your own registry, run inside it or name it: passprice --root DIR COMMAND")
    return ""


#: The most registered names :func:`_closest` scores in full: difflib's ``ratio`` takes time quadratic in a name's
#: length, so over every name of a large registry it does not stay quick (2,000 servings named by 120 letters took
#: 4.7 s for one mistyped name); the rest are ranked by difflib's linear upper bound (``quick_ratio``) alone.
MAX_HINT_SCORED = 40


def _closest(ref: str, known: list[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The at most ``n`` names of ``known`` closest to ``ref`` with a :class:`difflib.SequenceMatcher` ratio of at
    least ``cutoff``, best first, as :func:`difflib.get_close_matches` gives them, except that only the
    :data:`MAX_HINT_SCORED` names with the highest ``quick_ratio`` (an upper bound of the ratio, linear in the
    names' lengths) are scored in full, so the time is bounded for any registry."""
    import difflib
    import heapq

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(ref)
    rough = []
    for name in known:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= cutoff and (bound := matcher.quick_ratio()) >= cutoff:
            rough.append((bound, _aligned(ref, name), name))
    scored = []
    for _, _, name in heapq.nlargest(MAX_HINT_SCORED, rough):
        matcher.set_seq1(name)
        if (ratio := matcher.ratio()) >= cutoff:
            scored.append((ratio, name))
    # the names sharing the longest prefix of whole words first (nvidia-l4-datasheet before nvidia-l40s-datasheet for
    # nvidia-l4-spec-sheet, which the ratio alone put second: tests/test_fix190.py), then by ratio
    return [name for _, _, name in heapq.nlargest(n, ((_shared_words(ref, name), ratio, name)
                                                      for ratio, name in scored))]


def _shared_words(ref: str, name: str) -> int:
    """How many whole words (split at ``-``, ``_``, ``.`` and ``/``) ``ref`` and ``name`` share from their starts,
    case aside: 2 for ``nvidia-l4-spec-sheet`` and ``nvidia-l4-datasheet``, 1 with ``nvidia-l40s-datasheet``. Raises
    nothing."""
    import re

    shared = 0
    for a, b in zip(re.split(r"[-_./]", ref.lower()), re.split(r"[-_./]", name.lower()), strict=False):
        if a != b:
            break
        shared += 1
    return shared


def _aligned(ref: str, name: str) -> int:
    """The characters ``ref`` and ``name`` share at the same place counted from their starts, plus those counted from
    their ends: linear, and what tells apart the names :func:`_closest`'s upper bound ties (``quick_ratio`` counts
    the characters two names share in any order, so for ``s12345y`` every name of the digits 1 to 5 ties with
    ``s12345x``, and of 50,000 such names the 40 scored in full were the last in sort order: ``did you mean
    s41235x?``)."""
    ahead = sum(a == b for a, b in zip(ref, name, strict=False))
    return ahead + sum(a == b for a, b in zip(reversed(ref), reversed(name), strict=False))


def gone_folder() -> str:
    """The line saying the working folder no longer exists (``os.getcwd`` fails: it was removed)."""
    return ("the working folder no longer exists (it was removed while the shell stood in it): cd to a folder "
            "that exists, or give --root and absolute paths")


#: The folders a command made for itself and removes when it ends (:func:`temporary_root`: a review's copy of a
#: revision, its re-fitted copy of HEAD), each resolved, with a trailing separator.
_MADE_FOLDERS: list[str] = []


@contextlib.contextmanager
def temporary_root(folder: Path) -> Iterator[None]:
    """Until the ``with`` ends, ``folder`` is a registry this process made for itself (a copy of a git revision):
    a name not found in it is not said to be a record to copy into it (:func:`_shipped_hint`). A review of a revision
    that removed card a40 told the user to "copy …/facts/cards/a40.toml into /tmp/passprice-diff-273u_2af/facts/cards
    to use it here", a folder gone when ``diff`` ended, named anew at every run (so the review's text, JSON and
    pull-request comment changed from run to run; attack round 55)."""
    mark = os.path.join(os.path.realpath(folder), "")
    _MADE_FOLDERS.append(mark)
    try:
        yield
    finally:
        _MADE_FOLDERS.remove(mark)


def is_temporary(path: Path) -> bool:
    """Whether ``path`` lies in a folder of :func:`temporary_root`. Raises nothing."""
    if not _MADE_FOLDERS:
        return False
    try:
        where = os.path.join(os.path.realpath(path), "")
    except (OSError, ValueError):
        return False
    return any(where.startswith(mark) for mark in _MADE_FOLDERS)


#: The roots this process was given by name (``--root DIR``), resolved: a name not found in one is not said to have
#: been looked for in the shipped facts for want of a registry at or above the working folder, though DIR is the
#: shipped facts' folder (an editable install's checkout: attack round 31).
_NAMED: set[Path] = set()


def find_root(explicit: Path | str | None = None, start: Path | None = None) -> Root:
    """The root to read: ``explicit`` when given (it must hold ``facts/`` and ``registry/``), else the nearest folder
    at or above ``start`` (default: the working folder) that does, else the embedded default.

    Raises :class:`InputError` when ``explicit`` is not a root, and when the working folder is needed and no longer
    exists (removed while a shell stood in it: ``os.getcwd`` fails, which the command line's last resort reported as
    "standard output: No such file or directory")."""
    if explicit is not None:
        path = Path(explicit)
        _require_folder(explicit)
        if not _is_root(path):  # named as given: `--root ./` was said to be "." (pathlib's spelling; round 29)
            raise InputError(f"{shown(explicit)}: not a passprice root (it needs facts/ and registry/ folders)")
        try:
            found = Root(path.resolve())
        except FileNotFoundError:
            raise InputError(gone_folder()) from None
        _NAMED.clear()  # one command a process (or a test's in-process run): the root it was last given
        _NAMED.add(found.path)
        return found
    _NAMED.clear()
    try:
        here = (start or Path.cwd()).resolve()
    except FileNotFoundError:
        raise InputError(gone_folder()) from None
    for folder in (here, *here.parents):
        if _is_root(folder):
            return Root(folder)
    return embedded_root()
