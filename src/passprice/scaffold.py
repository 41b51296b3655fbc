"""A registry of one's own starts as a copy of what the package knows: every folder a :class:`~passprice.registry.Root`
has, the reference facts filled in, the user's own records empty, and the tooling that keeps it honest.

``passprice init DIR`` writes, below ``DIR``:

- every record folder of :class:`~passprice.registry.Root` (read off its properties, so a record kind added there is
  carried without a change here): the reference data (``facts/…``, ``sources/`` — any folder outside ``registry/``
  and ``locks/``, and the measurements the reference stacks are fitted from) copied from the root in effect (the
  embedded default outside a checkout), with the stored excerpt each source record names (``sources/excerpts/``,
  :func:`stored_excerpts`), the user's own records (``registry/…``, ``locks/``) empty, each holding a
  ``.gitkeep`` so git keeps it;
- ``schema/``: a copy of the JSON Schemas the files name on their ``#:schema`` line, so an editor validates them;
  ``passprice`` itself always validates against the package's own (``check`` warns when this copy differs);
- ``.taplo.toml``: the schema of every folder, so taplo (and Even Better TOML) validate a new file before it has its
  ``#:schema`` line;
- ``.pre-commit-config.yaml``: ``passprice check`` as a local hook (``language: system``: the ``passprice`` on PATH,
  the one ``requirements.txt`` installs);
- ``.github/workflows/facts.yml``: the project's own review workflow (``passprice check``; ``passprice diff`` as the
  job summary and a sticky pull-request comment), installing ``requirements.txt``;
- ``.gitattributes``: ``-text`` on the files passprice reads byte for byte (:data:`passprice.gitread.BYTE_EXACT_RULES`:
  the stored excerpts, the documents the reference registry sources cite), so a checkout under ``core.autocrlf``
  true (Git for Windows' default) keeps their pinned bytes and ``check`` and the review pass there; at a repository's
  top a ``.gitattributes`` already there is left alone, ``init`` saying which of the lines it lacks;
- ``requirements.txt``: the passprice the registry is checked with, as this passprice was installed when that can be
  known (PEP 610's ``direct_url.json``: a git URL at the commit installed, an archive's URL, a local file or folder),
  as ``--requirement`` gives it, else a placeholder line that pip refuses until it is filled in (passprice is on no
  package index: ``passprice==VERSION`` would fail); ``README.md``: what is where, and that line's state.

Nothing is half-written: the files are written into a temporary folder beside ``DIR`` and moved into place only when
all of them are, and an existing file is never replaced.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.resources
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

import attrs

from passprice import __version__
from passprice.cachefolder import make_folders
from passprice.errors import InputError
from passprice.files import kind, look, read_regular, require_windows_name, shell_word, shown
from passprice.registry import Root
from passprice.schema import MAX_TOML_BYTES

#: The folders (relative to a root) that hold the user's own records: created empty by ``init``.
OWN = ("registry", "locks")

#: The marker line a ``.gitkeep`` carries.
_KEEP = "# Keeps this folder in git while it is empty (passprice init).\n"


def record_folders(root: Root) -> dict[str, str]:
    """Every record folder :class:`Root` knows, as property name → POSIX path relative to ``root.path``
    (``cards`` → ``facts/cards``), read off the class's properties that name a folder below the root (``schema``,
    which falls back to the package's copy, is not a record folder; nor is a hidden one, such as a cache). Sorted
    by path."""
    out: dict[str, str] = {}
    for name in dir(Root):
        if name.startswith("_") or name == "schema" or not isinstance(getattr(Root, name, None), property):
            continue
        value = getattr(root, name)
        if isinstance(value, Path) and value.is_relative_to(root.path) and value != root.path:
            rel = value.relative_to(root.path)
            if not any(part.startswith(".") for part in rel.parts) and value.suffix == "":
                out[name] = rel.as_posix()
    return dict(sorted(out.items(), key=lambda item: item[1]))


#: Folders below :data:`OWN` that are reference data all the same: the measurements the reference serving stacks
#: (``facts/stacks``) are fitted from. A stack's fit names its runs, and ``check`` re-runs the fit, so a registry
#: holding the stacks without their runs would fail its first check (the checkpoint entries those runs name are
#: carried too: :func:`fit_checkpoints`).
FIT_INPUTS = ("registry/measurements",)


def fit_checkpoints(source: Root) -> list[Path]:
    """The checkpoint entries (``registry/checkpoints/NAME.toml`` of ``source``) that the measured runs of ``source``
    name (each run's ``checkpoint`` key): the re-run of a reference stack's fit prices each run on its checkpoint.
    A measurement file that does not read is skipped here (``check`` reports it); a name with no entry is left out
    (``check`` names it)."""
    import tomllib

    from passprice.schema import toml_loads

    names: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "checkpoint" and isinstance(item, str):
                    names.add(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    if source.measurements.is_dir():
        for path in sorted(source.measurements.glob("*.toml")):
            try:
                walk(toml_loads(read_regular(path, MAX_TOML_BYTES).decode("utf-8")))
            except (InputError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
    return [p for name in sorted(names) if (p := source.checkpoints / f"{name}.toml").is_file()]


def stored_excerpts(source: Root, files: dict[str, bytes]) -> dict[str, bytes]:
    """The stored excerpts (``source.excerpt``: ``sources/excerpts/X.txt``) that the source records among ``files``
    (``sources/ID.toml`` → its bytes, as :func:`plan` copies them) name, each read from ``source`` by its path there.
    A record's excerpt is the text that was read, for reading offline: copied with the record, wherever it lies in
    the registry (walkthrough 106: the records named files ``init`` left behind, and ``audit --source`` sent the
    reader to one not there). A record that does not read, or an excerpt that is no regular file of ``source`` at its
    own plain path (:func:`passprice.sources.excerpt_problem`), is left out here: ``check`` names it. Raises
    :class:`InputError` when a named excerpt that is there cannot be read."""
    import tomllib

    from passprice.registry import document_problem
    from passprice.schema import toml_loads

    out: dict[str, bytes] = {}
    for rel, data in sorted(files.items()):
        if not (rel.startswith("sources/") and rel.endswith(".toml") and rel.count("/") == 1):
            continue
        try:
            table = toml_loads(data.decode("utf-8")).get("source")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        excerpt = table.get("excerpt") if isinstance(table, dict) else None
        if isinstance(excerpt, str) and excerpt not in out and document_problem(
                source, excerpt, "source.excerpt") is None:
            out[excerpt] = read_regular(source.path / excerpt, MAX_TOML_BYTES)
    return out


def is_own(folder: str) -> bool:
    """True for a folder of the user's own records (below ``registry/`` or ``locks/``, except the measurements the
    reference stacks are fitted from, :data:`FIT_INPUTS`), which ``init`` leaves empty; false for reference data it
    copies."""
    return folder.split("/", 1)[0] in OWN and folder not in FIT_INPUTS


def _schema_line(folder: Path) -> str | None:
    """The schema file name the TOML files of ``folder`` name on their ``#:schema`` line (``card.schema.json``), the
    first one found; ``None`` when no file there has one."""
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.toml")):
        with path.open(encoding="utf-8", errors="replace") as f:
            first = f.readline()
        if first.startswith("#:schema "):
            return first.removeprefix("#:schema ").strip().rsplit("/", 1)[-1]
    return None


def _free_name(folder: Path, name: str) -> str:
    """The first of ``NAME.mine``, ``NAME.mine2``, ``NAME.mine3`` … that nothing in ``folder`` holds (a link to
    nothing included): where ``init``'s advice moves ``name`` aside, replacing nothing. Raises nothing."""
    count = 1
    while True:
        free = f"{name}.mine{count if count > 1 else ''}"
        if look(folder / free) is None and not os.path.islink(folder / free):
            return free
        count += 1


def staging_prefix(name: str) -> str:
    """The name's start of the temporary folder ``init`` writes a registry named ``name`` into, beside it
    (``.my-reg.init.``; ``tempfile.mkdtemp`` adds 8 characters): ``name`` cut to at most 200 bytes (whole characters),
    so a registry folder named up to the file system's 255 bytes can be made; ``init`` of a 250-character name said
    "cannot write: File name too long", of the temporary folder it never named (attack round 50). ``.registry.init.``
    for no name. Raises nothing."""
    cut = name or "registry"
    while len(os.fsencode(cut)) > 200:
        cut = cut[:-1]
    return f".{cut}.init."


#: The requirement line written when how passprice was installed is not known: pip refuses it ("Invalid
#: requirement: 'FILL IN: …'", naming the line), so a workflow cannot run on a passprice nobody chose.
PLACEHOLDER = (
    "FILL IN: how this registry installs passprice, e.g. passprice @ git+https://github.com/OWNER/passprice@COMMIT"
)


@attrs.frozen
class Requirement:
    """How a registry installs passprice: ``line``, the requirement ``requirements.txt`` holds, and ``origin``, where
    it was read: ``given`` (``--requirement``), ``vcs`` (a git URL at the commit installed), ``archive`` (a wheel or
    source archive's URL), ``local`` (a file or folder on this machine: CI cannot reach it) or ``unknown`` (no
    ``direct_url.json``: :data:`PLACEHOLDER`, to fill in)."""

    line: str
    origin: str
    #: For a local git clone pinned at its commit (:func:`pinned_clone`): the requirement CI could install the same
    #: commit by, from the clone's ``origin`` remote (``passprice @ git+URL@COMMIT``), or ``None``.
    remote: str | None = None

    @property
    def placeholder(self) -> bool:
        """Whether ``line`` is :data:`PLACEHOLDER`, which pip refuses until a person fills it in."""
        return self.origin == "unknown"

    def advice(self) -> str | None:
        """What the user must do before CI can install passprice (``None`` when nothing): fill in the placeholder, or
        replace a requirement naming a file on this machine."""
        if self.origin == "unknown":
            return (
                "requirements.txt holds a placeholder: passprice is on no package index, and how this one was "
                "installed is not known; write the line CI installs passprice by (passprice @ git+https://…@COMMIT, "
                "a wheel's URL), or run init again with --requirement SPEC"
            )
        if self.origin == "local" and self.remote is not None:
            return (
                f"requirements.txt installs passprice from this machine ({self.line.split(' @ ', 1)[-1]}, the commit "
                f"the clone it was installed from is at): CI cannot reach it; write {self.remote} there (its origin "
                "remote at that commit, once pushed), or run init again with --requirement SPEC"
            )
        if self.origin == "local":
            return (
                f"requirements.txt installs passprice from this machine ({self.line.split(' @ ', 1)[-1]}): CI cannot "
                "reach it; write a git or wheel URL there, or run init again with --requirement SPEC"
            )
        return None


def requirement_from_direct_url(text: str | None) -> Requirement:
    """The requirement that installs the passprice a ``direct_url.json`` (PEP 610; ``text``, ``None`` when the
    distribution has none: installed from an index, or not by pip) says was installed: ``passprice @ git+URL@COMMIT``
    for a VCS checkout (``#subdirectory=`` kept), ``passprice @ URL`` for an archive or a local file or folder
    (``local`` when its URL is ``file:``), else :data:`PLACEHOLDER`. Data: packaging.python.org, "Recording the
    Direct URL Origin of installed distributions"."""
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        data = None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url or any(ord(c) < 0x21 for c in url):
        return Requirement(PLACEHOLDER, "unknown")
    assert isinstance(data, dict)
    sub = data.get("subdirectory")
    fragment = f"#subdirectory={sub}" if isinstance(sub, str) and sub else ""
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        commit = vcs.get("commit_id")
        at = f"@{commit}" if isinstance(commit, str) and commit else ""
        origin = "local" if url.startswith("file:") else "vcs"
        return Requirement(f"passprice @ {vcs['vcs']}+{url}{at}{fragment}", origin)
    return Requirement(f"passprice @ {url}{fragment}", "local" if url.startswith("file:") else "archive")


def installed_requirement() -> Requirement:
    """:func:`requirement_from_direct_url` of the installed ``passprice`` distribution (its ``direct_url.json``), a
    non-editable install of a local git clone pinned at its commit (:func:`pinned_clone`)."""
    import importlib.metadata

    try:
        text = importlib.metadata.distribution("passprice").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        text = None
    if text is None:
        return Requirement(PLACEHOLDER, "unknown")
    return pinned_clone(text, requirement_from_direct_url(text))


def pinned_clone(text: str, found: Requirement) -> Requirement:
    """``found`` (the requirement of the ``direct_url.json`` ``text``), pinned when it names a folder on this machine
    installed not editable (``pip install /path/clone``: ``passprice @ file:///path/clone`` installed whatever the
    folder held at each install, unpinned, ``tests/test_bound111.py``) that is a git work tree at its top, its files
    as committed (``git status --porcelain --untracked-files=no`` says nothing): ``passprice @
    git+file:///path/clone@COMMIT`` (``HEAD``'s commit), its :attr:`Requirement.remote` the same commit from the clone's
    ``origin`` remote when that is not a local path (``git+URL@COMMIT``). Otherwise (an editable install, no clone,
    changes not committed, git failing) ``found`` as it is. Raises nothing."""
    import subprocess
    import urllib.parse
    import urllib.request

    from passprice.gitread import run_git

    try:
        data = json.loads(text)
    except ValueError:
        return found
    info = data.get("dir_info") if isinstance(data, dict) else None
    url = data.get("url") if isinstance(data, dict) else None
    if (found.origin != "local" or not isinstance(info, dict) or info.get("editable") is True
            or not isinstance(url, str) or not url.startswith("file://") or data.get("subdirectory")):
        return found
    folder = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if not (folder / ".git").exists():
        return found
    try:
        top = run_git(folder, ["rev-parse", "--show-toplevel"], timeout=5.0).decode("utf-8").strip()
        if Path(top).resolve() != folder.resolve():
            return found
        commit = run_git(folder, ["rev-parse", "--verify", "HEAD^{commit}"], timeout=5.0).decode("ascii").strip()
        if run_git(folder, ["status", "--porcelain", "--untracked-files=no"], timeout=5.0).strip():
            return found  # the installed code may be neither the commit nor the folder now: left as it is, said local
    except (subprocess.CalledProcessError, InputError, OSError, UnicodeDecodeError):
        return found
    remote: str | None
    try:
        remote = run_git(folder, ["config", "--get", "remote.origin.url"], timeout=5.0).decode("utf-8").strip()
    except (subprocess.CalledProcessError, InputError, OSError, UnicodeDecodeError):
        remote = None  # no origin remote (git config exits 1)
    if len(commit) not in (40, 64) or any(c not in "0123456789abcdef" for c in commit):
        return found
    if remote is not None and (not remote or ":" not in remote or remote.startswith("file:")
                               or any(ord(c) < 0x21 for c in remote)):
        remote = None  # a path on this machine, or no remote: nothing CI could reach
    pinned = f"passprice @ git+{url}@{commit}"
    return Requirement(pinned, "local", None if remote is None else f"passprice @ git+{remote}@{commit}")


#: The longest ``--requirement`` line, in characters: a URL with a commit fits in a few hundred; pip's own
#: requirement files hold one requirement a line, and a 100 KB line is no requirement anyone meant.
MAX_REQUIREMENT = 4096


def given_requirement(spec: str) -> Requirement:
    """``--requirement SPEC`` as the line of ``requirements.txt``. Raises :class:`InputError` for an empty one, one
    longer than :data:`MAX_REQUIREMENT` characters, or one holding a control character (a line break would write
    two lines)."""
    if len(spec) > MAX_REQUIREMENT:
        raise InputError(
            f"--requirement: {len(spec):,} characters: a requirement line is at most {MAX_REQUIREMENT:,} characters"
        )
    if not spec.strip() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in spec):
        raise InputError(
            f"--requirement: {spec!r} is not one requirement line (it is empty or holds a control character: a "
            "newline, a tab …): give one line, e.g. passprice==1.0 or passprice @ git+https://…"
        )
    return Requirement(spec.strip(), "given")


@attrs.frozen
class Plan:
    """What ``init`` writes: ``files`` maps each path relative to the new folder to its bytes; ``folders`` the record
    folders (relative) it creates; ``copied`` the reference folders filled from ``source``; ``requirement`` the line
    that installs passprice (:class:`Requirement`)."""

    source: Root
    folders: tuple[str, ...]
    copied: tuple[str, ...]
    files: dict[str, bytes]
    requirement: Requirement

    def filled(self, folder: str) -> str:
        """What ``init`` puts in record folder ``folder``, for its summary: ``copied from SOURCE`` for a reference
        folder; for one of the user's own, the files it carries all the same (the checkpoint entries the reference
        stacks' measured runs name, :func:`fit_checkpoints`) or ``empty``."""
        source = "the embedded facts" if self.source.embedded else str(self.source.path)
        if folder in self.copied:
            return f"copied from {source}"
        carried = [p for p in self.files if p.startswith(folder + "/") and not p.endswith("/.gitkeep")]
        if carried:
            n = len(carried)
            return (f"{n} entr{'ies' if n > 1 else 'y'} the reference stacks' measured runs name, copied from "
                    f"{source}")
        return "empty"


def taplo_config(schemas: dict[str, str]) -> str:
    """``.taplo.toml`` for a registry: one ``[[rule]]`` a folder, mapping its ``*.toml`` files to
    ``schema/NAME.schema.json`` (``schemas``: folder → schema file name), so taplo validates every file, even one
    without a ``#:schema`` line. Taplo's configuration: https://taplo.tamasfe.dev/configuration/file.html"""
    lines = [
        "# taplo (and the Even Better TOML editor extension) validate each TOML file here against its JSON Schema.",
        "# Written by `passprice init`; a file's own `#:schema` line names the same schema.",
        "",
        'include = ["**/*.toml"]',
    ]
    for folder, name in schemas.items():
        lines += ["", "[[rule]]", f'include = ["{folder}/*.toml"]', "", "[rule.schema]", f'path = "./schema/{name}"']
    return "\n".join(lines) + "\n"


#: When both pre-commit hooks run (the one ``init`` writes and the one this project publishes): on every commit,
#: whatever it changes. A ``files:`` pattern of the folders ``check`` reads (``facts``, ``locks``, ``registry``,
#: ``schema``, ``sources``, any ``.gitattributes``) missed a commit that only removed or moved a registry document a
#: source record names (``source.path`` may be any file of the registry, ``notes/…`` in the README's demo), which
#: ``check`` then fails (slip 29). A commit that changes nothing ``check`` reads costs a memo replay of the last
#: ``check`` (:mod:`passprice.memo`: about 34 ms of CPU, against 20 ms for ``python -c pass``, on this registry).
HOOK_RUNS = "always_run: true"


def published_hooks() -> str:
    """The text of this project's ``.pre-commit-hooks.yaml`` (the hook a registry kept in another repository uses,
    ``language: python``: pre-commit installs passprice from this repository), run on every commit
    (:data:`HOOK_RUNS`).
    ``python docs/make.py`` writes it; a test compares the checked-in file with it. Its example ``rev`` is a commit:
    ``rev: main`` made pre-commit warn that a branch name "is never updated after first install" (walkthrough 34)."""
    return (
        "# pre-commit hooks for a repository of passprice facts (facts/, registry/, locks/, sources/, schema/ at its\n"
        "# top), used the way projects use check-jsonschema. Written by `python docs/make.py` from\n"
        "# passprice.scaffold.published_hooks. It runs on every commit (always_run), as the hook `passprice init`\n"
        "# writes does: a commit removing a document a source record names changes no record folder.\n"
        "#\n"
        "#   repos:\n"
        "#     - repo: https://github.com/OWNER/passprice\n"
        "#       rev: COMMIT   # a commit sha or tag: pre-commit never updates a branch name once installed\n"
        "#       hooks:\n"
        "#         - id: passprice-check\n"
        "- id: passprice-check\n"
        "  name: passprice check\n"
        "  description: Validate every card, drafting method, routing record, stack, source, checkpoint, serving and "
        "lock against its schema, and every lock against today's facts (reproduces, floors held).\n"
        "  entry: passprice check\n"
        "  language: python\n"
        "  pass_filenames: false\n"
        f"  {HOOK_RUNS}\n"
    )


def pre_commit_config() -> str:
    """``.pre-commit-config.yaml`` for a registry: ``passprice check`` as a local hook run on every commit
    (:data:`HOOK_RUNS`). ``language: system`` runs the ``passprice`` on PATH (pre-commit builds no
    environment of its own, so the hook needs no network)."""
    return (
        "# pre-commit runs `passprice check` before each commit (pre-commit install), and on every file\n"
        "# (pre-commit run --all-files): every file valid, every lock holding. Written by `passprice init`.\n"
        "# language: system runs the passprice on PATH: install it first (pip install -r requirements.txt).\n"
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: passprice-check\n"
        "        name: passprice check\n"
        "        entry: passprice check\n"
        "        language: system\n"
        "        pass_filenames: false\n"
        f"        {HOOK_RUNS}\n"
    )


def workflow(install: str) -> str:
    """The review workflow (``.github/workflows/facts.yml``) with its install step running ``install``: the
    project's own (``python -m pip install .``) and every registry ``init`` writes share this one text."""
    text = importlib.resources.files("passprice").joinpath("templates/facts.yml").read_text(encoding="utf-8")
    return text.replace("__INSTALL__", install)


def _what(folder: str, copied: tuple[str, ...]) -> str:
    if folder in copied:
        return f"copied from passprice {__version__}"
    if folder == "registry/checkpoints":
        return "your own (holds the checkpoints the measurements ran)"
    return "your own (empty)"


def _readme(
    plan_folders: tuple[str, ...], copied: tuple[str, ...], source: Root, requirement: Requirement,
    repository: bool = False,
) -> str:
    """The registry's README.md: what each folder holds and the first commands. ``repository``: the registry is
    written at the top of a git repository already (``init .`` in a company's repository), so its first commands
    leave out ``git init``, as the ``next:`` line does (walkthrough 34: the README still said ``git init`` there),
    and it says where pre-commit comes from (walkthrough 34: ``pre-commit install`` in a fresh virtual environment
    read ``command not found``; requirements.txt, which CI installs, names passprice alone). Raises nothing."""
    # the hook installed before the first commit, as the next: line says (it read commit, then install)
    install = "pre-commit install" if repository else "git init && pre-commit install"
    install = f"{install:<40} # passprice check before each commit, the first too"
    commit = 'git add . && git commit -m "A passprice registry"'
    rows = "\n".join(
        f"{folder + '/':<24}{_what(folder, copied)}"
        for folder in plan_folders
    )
    return f"""# A passprice registry

Made by `passprice init`. Every `passprice` command run in this folder (or below it) reads the files here.

```
{rows}
schema/                 the JSON Schemas the files are validated against (copied)
.taplo.toml             editors validate every TOML file against its schema
.pre-commit-config.yaml passprice check before each commit
.github/workflows/      passprice check and a sticky passprice diff comment on every pull request
.gitattributes          -text on the files read byte for byte: core.autocrlf (Windows) keeps them as committed
requirements.txt        the passprice this registry is checked with
```

Start with:
{_first_step(requirement)}
```sh
pip install -r requirements.txt
pip install pre-commit                   # the hook's runner (not in requirements.txt: CI runs no hook)
{install}
{commit}
passprice import MODEL.gguf --name my-model     # registry/checkpoints/my-model.toml
passprice price --checkpoint my-model --card h200_sxm_141gb --batch 8
passprice lock --checkpoint my-model --card h200_sxm_141gb --batch 8 --name my-model-h200
```

The reference facts were copied from {"the facts embedded in passprice" if source.embedded else source.path}.
"""


#: A comment line above the requirement, by its origin.
_REQUIREMENT_NOTES = {
    "vcs": "# Written by `passprice init` from how this passprice was installed.\n",
    "archive": "# Written by `passprice init` from how this passprice was installed.\n",
    "local": "# Written by `passprice init` from how this passprice was installed: a file on this machine, which CI\n"
    "# cannot reach. Replace it with a URL.\n",
    "unknown": "# How this passprice was installed is not known: replace the line below (pip refuses it as it is).\n",
}


def _first_step(requirement: Requirement) -> str:
    advice = requirement.advice()
    if advice is None:
        return ""
    return f"\n**First:** {advice}.\n"


#: The most uncommitted paths :func:`uncommitted_copies` names; the rest are counted.
MAX_UNCOMMITTED_NAMED = 5


def uncommitted_copies(the_plan: Plan) -> list[str]:
    """The files of the folders ``the_plan`` copies from its source (``copied``, and ``sources/excerpts``) that the
    source's git work tree holds changed from its last commit (modified, added, removed or untracked), as paths from
    the source's top folder; empty for the embedded facts, a source outside any git work tree, or when git fails.
    ``init`` run inside a checkout copies the checkout's working tree, not what passprice ships: walkthrough 117 edited
    a card there, and the new registry's tour line ``check  # exit 1`` exited 0 on the edited copy, the output saying
    only "copied from /tmp/x/review". Raises nothing."""
    import subprocess

    from passprice.gitread import run_git

    source = the_plan.source
    folders = [*the_plan.copied, *(("sources/excerpts",) if (source.path / "sources" / "excerpts").is_dir() else ())]
    if source.embedded or not folders:
        return []
    try:
        prefix = run_git(source.path, ["rev-parse", "--show-prefix"], timeout=10).decode("utf-8", "replace").strip()
        out = run_git(source.path, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--",
                                    *(f":(literal){f}" for f in folders)], timeout=10)
    except (InputError, OSError, subprocess.CalledProcessError):
        return []
    paths = []
    for entry in out.decode("utf-8", "replace").split("\0"):
        if len(entry) > 3:
            path = entry[3:]
            paths.append(path[len(prefix):] if prefix and path.startswith(prefix) else path)
    return sorted(dict.fromkeys(paths))


def uncommitted_line(the_plan: Plan, paths: list[str]) -> str | None:
    """The warning ``init`` prints for :func:`uncommitted_copies`' ``paths``: which files were copied with changes
    not committed in the source, named (:data:`MAX_UNCOMMITTED_NAMED`, the rest counted); ``None`` for none."""
    if not paths:
        return None
    named = ", ".join(paths[:MAX_UNCOMMITTED_NAMED])
    more = len(paths) - MAX_UNCOMMITTED_NAMED
    if more > 0:
        named += f" and {more:,} more"
    return (f"the reference files were copied from the working tree of {the_plan.source.path}, a git checkout with "
            f"uncommitted changes to {named}: the new registry holds them as edited there, not as committed (nor as "
            "the package ships them: run init outside the checkout for those)")


def plan(source: Root, requirement: str | None = None, examples: bool = False, repository: bool = False) -> Plan:
    """The files ``init`` writes for a registry seeded from ``source``: the reference folders' files copied (regular
    files only, at the folder's top; a nested folder is its own record folder), a ``.gitkeep`` in every empty one,
    the schemas, and the tooling files. ``requirement`` is the line of ``requirements.txt`` (default: how this
    passprice was installed, :func:`installed_requirement`). With ``examples`` the user's own folders are copied too
    (the source's checkpoints, servings and locks: a registry to try every command in, as the README's tour does).
    ``repository``: the registry goes to the top of a git repository already (:func:`repository_top`), so its
    README's first commands leave out ``git init``.

    Raises :class:`InputError` when ``source`` has no schemas, or ``requirement`` is not one line of text (a newline
    in it would write a second requirement)."""
    install = installed_requirement() if requirement is None else given_requirement(requirement)
    folders = record_folders(Root(Path("/registry")))
    files: dict[str, bytes] = {}
    copied: list[str] = []
    schemas: dict[str, str] = {}
    for name, rel in folders.items():
        here = getattr(source, name)
        name_of_schema = _schema_line(here)
        if name_of_schema is not None:
            schemas[rel] = name_of_schema
        if (examples or not is_own(rel)) and here.is_dir():
            entries = sorted(p for p in here.iterdir() if p.is_file() and not p.name.startswith("."))
            for p in entries:
                files[f"{rel}/{p.name}"] = read_regular(p, MAX_TOML_BYTES)
            if entries:
                copied.append(rel)
        if rel == "registry/checkpoints" and not examples:
            for p in fit_checkpoints(source):
                files[f"{rel}/{p.name}"] = read_regular(p, MAX_TOML_BYTES)
        if not any(k.startswith(f"{rel}/") for k in files):
            files[f"{rel}/.gitkeep"] = _KEEP.encode()
    for rel, data in stored_excerpts(source, files).items():
        files.setdefault(rel, data)
    schema_folder = source.schema
    if not schema_folder.is_dir():
        raise InputError(f"{schema_folder}: the JSON Schemas are missing; reinstall passprice")
    for p in sorted(schema_folder.glob("*.json")):
        files[f"schema/{p.name}"] = read_regular(p, MAX_TOML_BYTES)
    files[".taplo.toml"] = taplo_config(schemas).encode()
    files[".pre-commit-config.yaml"] = pre_commit_config().encode()
    files[".github/workflows/facts.yml"] = workflow("python -m pip install -r requirements.txt").encode()
    from passprice.gitread import gitattributes_text

    files[".gitattributes"] = gitattributes_text().encode()
    files["requirements.txt"] = (
        f"# The passprice this registry is checked with ({__version__}; the CI workflow installs it, and so do you:\n"
        "# pip install -r requirements.txt). passprice is on no package index: name it by a git URL\n"
        "# (passprice @ git+https://…@COMMIT), a wheel's URL or file, or a version your own index has.\n"
        + _REQUIREMENT_NOTES.get(install.origin, "")
        + f"{install.line}\n"
    ).encode()
    files["README.md"] = _readme(tuple(folders.values()), tuple(copied), source, install, repository).encode()
    return Plan(source, tuple(folders.values()), tuple(copied), files, install)


def enclosing_repository(dest: Path) -> Path | None:
    """The top of the git work tree ``dest`` lies inside, when that top is a folder above ``dest`` (a ``.git`` folder
    or file in one of ``dest``'s parents, links resolved); ``None`` when ``dest`` is no such folder's (it is a top
    itself, or outside every repository). Raises nothing: a folder that cannot be looked at ends the search."""
    try:
        here = Path(os.path.realpath(dest))
    except (OSError, ValueError):
        return None
    for folder in (here, *here.parents):
        try:
            if look(folder / ".git") is not None:
                return folder if folder != here else None
        except InputError:
            return None
    return None


#: ``init``'s ``then:`` line, after its ``next:`` one: the first pull request's review runs the base branch's
#: passprice, installed by the base branch's ``requirements.txt``, so a base branch without the registry installs none
#: (``Could not open requirements file``) and that pull request gets no review and a failed job (the README said so;
#: ``init``'s output did not, issue 13).
COMMIT_FIRST = (
    "commit the registry to the default branch before the first pull request: the review runs the base branch's "
    "passprice, installed by its requirements.txt, and a base without one reviews nothing and fails"
)


def repository_top(dest: Path) -> bool:
    """Whether ``dest`` is the top of a git work tree already (it holds ``.git``, a folder or a worktree's file):
    ``init``'s ``next:`` line then leaves out ``git init`` (walkthrough 33: ``init .`` in a fork's fresh repository
    advised ``git init`` there again). Raises nothing: a folder that cannot be looked at is no top."""
    try:
        return look(Path(os.path.realpath(dest)) / ".git") is not None
    except (OSError, ValueError, InputError):
        return False


def nested_caution(dest: Path) -> str | None:
    """The warning for a registry written into ``dest`` below the top of an existing git repository: GitHub runs
    the workflows of the repository's top ``.github/workflows/`` only, and pre-commit reads the top's
    ``.pre-commit-config.yaml`` only, so the review workflow and hook ``init`` writes there never run, and a change
    that moves a locked price is merged unreviewed; and the advice ``git init`` there would make a repository inside
    a repository. ``init sub`` in a checkout said nothing of it (attack round 24). ``None`` when ``dest`` is a
    repository's top or outside every repository."""
    top = enclosing_repository(dest)
    if top is None:
        return None
    rel = os.path.relpath(os.path.realpath(dest), top)
    return (
        f"{shown(dest)} lies inside the git repository at {shown(top)}: GitHub runs only {shown(top)}/.github/"
        f"workflows/ and pre-commit reads only {shown(top)}/.pre-commit-config.yaml, so the workflow and hook "
        f"written in {rel}/ never run; move them there (the workflow's steps in {rel}: working-directory), or run "
        "init at the repository's top"
    )


def _write_failure(error: OSError, parent: Path) -> str:
    """Why a file or folder could not be made below ``parent``, in words: "No such file or directory" for a folder
    that exists (``init /proc/self``: /proc takes no new files) named nothing a person could find missing (attack
    round 26)."""
    if error.errno == errno.ENOENT and look(parent) is not None:
        return (f"the folder {shown(parent)} takes no new files or folders (a file system such as /proc or /sys "
                f"that the kernel makes): give a folder on a disk")
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"the folder {shown(parent)} is not writable ({error.strerror})"
    if error.errno == errno.ENOSPC:
        return f"no space left on the device holding {shown(parent)}"
    return error.strerror or str(error)


#: What a repository's top may hold already that init adds to rather than refuses (session 30, issue 13): the
#: repository's own ``README.md`` and ``.gitattributes`` are left alone (:func:`attributes_advice` says which of the
#: lines init writes the latter lacks), and into its own ``.github/`` folder init adds each file it writes there that
#: is missing (the review workflow), leaving any that exist alone.
KEPT_IN_A_REPOSITORY = ("README.md", ".gitattributes", ".github")


def attributes_advice(dest: Path, kept: Iterable[str]) -> str | None:
    """The warning for a ``.gitattributes`` of the user's that :func:`write` left alone in ``dest`` (``kept``, its
    return) lacking lines of :data:`passprice.gitread.BYTE_EXACT_RULES`: which to add, and why; ``None`` when it holds
    them all, or none was left alone. A file that cannot be read is said to be so."""
    from passprice.gitread import BYTE_EXACT_RULES, MAX_ATTRIBUTES_BYTES, missing_rules

    if ".gitattributes" not in kept:
        return None
    path = dest / ".gitattributes"
    try:
        missing = missing_rules(read_regular(path, MAX_ATTRIBUTES_BYTES))
    except (InputError, OSError, ValueError) as e:
        return f"{shown(path)}: left alone, but not read ({e}); add these lines to it: {', '.join(BYTE_EXACT_RULES)}"
    if not missing:
        return None
    return (f"{shown(path)}: left alone (yours), but it lacks {', '.join(missing)}: add "
            f"{'them' if len(missing) > 1 else 'it'} (init writes them into a new registry), or a checkout under "
            "core.autocrlf true (Git for Windows' default) writes CRLF into the files passprice reads byte for byte, "
            "and check and the review refuse it")



def _require_folders_of(dest: Path, rel: str) -> None:
    """Raise :class:`InputError` unless each folder between ``dest``'s top-level folder and the file ``rel``
    (``/``-separated, relative to ``dest``: ``.github/workflows/facts.yml``) that exists is a folder and none is a
    symbolic link: init adds its file into a folder of the repository's own only, never through a link (attack round
    54: ``.github/workflows`` linked to a folder outside the repository had the review workflow written there, silently;
    linked to nothing, or a file, it said only ``.: cannot write: File exists`` or ``Not a directory``), and the
    deepest of them that exists is writable (a read-only ``.github`` read ``the folder . is not writable``). A folder
    missing is made by :func:`write` (the folders below it are missing too)."""
    parts = rel.split("/")
    last = dest / parts[0]  # the repository's own folder (a folder, no link: the caller looked)
    for depth in range(2, len(parts)):
        folder = dest.joinpath(*parts[:depth])
        aside = f"mv {shell_word(folder)} {shell_word(folder.parent / _free_name(folder.parent, folder.name))}"
        if os.path.islink(folder):
            raise InputError(
                f"{shown(folder)}: is a symbolic link to {shown(os.readlink(folder))}; init adds {rel} to the "
                "repository's own folders only, never through a link: make it a folder of its own, or move it aside "
                f"({aside}), and run init again"
            )
        found = look(folder)
        if found is None:
            break
        if not stat.S_ISDIR(found.st_mode):
            raise InputError(
                f"{shown(folder)}: is {kind(found.st_mode)}, not a folder; init adds {rel} into it: move it aside "
                f"({aside}), and run init again"
            )
        last = folder
    if not os.access(last, os.W_OK | os.X_OK):  # `.: the folder . is not writable` named the wrong one (round 54)
        raise InputError(f"{shown(dest)}: cannot write: the folder {shown(last)} is not writable; init adds {rel} "
                         "there: make it writable, or move it aside, and run init again")


def write(the_plan: Plan, dest: Path) -> tuple[str, ...]:
    """Write ``the_plan`` below ``dest`` (created when missing): every file into a temporary folder beside ``dest``
    first (each flushed to disk), then each top-level entry moved into place; a failure on the way (a full disk)
    removes what was moved and the folders init made (``dest`` and those above it). At the top of a git repository
    (:func:`repository_top`) a ``README.md`` already there is left alone and a ``.github`` folder already there is
    added to, file by file, each of the plan's files it holds already left alone
    (:data:`KEPT_IN_A_REPOSITORY`; ``init .`` in a fork's repository refused with ``mv`` advice, session 29). Returns
    the plan's paths left alone (``/``-separated, relative to ``dest``), sorted.

    Raises :class:`InputError` when ``dest`` (or a folder above it that init creates) is a name no checkout on
    Windows holds (:func:`passprice.files.require_windows_name`; one already there is not judged), holds a character
    that does not print (a newline, a tab, U+202E …: the
    registry's path shows in every error line and in the ``cd`` init suggests), is a file (or a FIFO, a device …)
    or a symbolic link to nothing,
    or any path the plan writes (or its top-level folder) already exists below ``dest`` (nothing is replaced), or a
    file cannot be written."""
    try:  # the name as typed: under an ASCII locale Python holds a UTF-8 name as lone surrogates
        typed = os.fsencode(dest).decode("utf-8")
    except UnicodeDecodeError:
        typed = str(dest)  # bytes that are not UTF-8: refused below, as a character that does not print
    if not typed.isprintable():
        raise InputError(
            f"{shown(dest)}: the folder name holds a character that does not print (a newline, a tab, U+202E …); "
            "name the registry with printing characters"
        )
    # The one rule of a name passprice writes (files.require_windows_name): `init aux`, `init x.` and `init 'a|b'`
    # made a registry whose folder a checkout on Windows cannot hold (issue 13's leftovers, session 28); the folders
    # init creates above it too. A folder already there is the user's, as the folder of an output file is.
    for at in (dest, *dest.parents):  # a name too long is the writer's line: "DEST: cannot write: the name …"
        if look(at, "write") is not None or os.path.islink(at):
            break
        require_windows_name(at)
    found = look(dest)  # the one lookup: a name too long or a loop of links is one error line
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise InputError(f"{shown(dest)}: is {kind(found.st_mode)}; give a folder for the new registry")
    for at in (dest, *dest.parents):  # a dangling link on the way: mkdir would say only "File exists"
        if look(at) is not None:
            break
        if os.path.islink(at):
            raise InputError(
                f"{shown(dest)}: cannot write: {shown(at)} is a symbolic link to {shown(os.readlink(at))}, which "
                "does not exist; init creates no folder through a link: create that folder first, or give another name"
            )
    tops = sorted({rel.split("/", 1)[0] for rel in the_plan.files})
    taken = [t for t in tops if look(dest / t) is not None or (dest / t).is_symlink()]
    kept: list[str] = []
    merged: list[str] = []  # the plan's files moved one by one into a folder of the repository's own
    if taken and repository_top(dest):
        for top in [t for t in taken if t in KEPT_IN_A_REPOSITORY]:
            found = look(dest / top)
            if top in ("README.md", ".gitattributes"):  # the user's own: attributes_advice says what it lacks
                kept.append(top)
            elif found is not None and stat.S_ISDIR(found.st_mode) and not (dest / top).is_symlink():
                for rel in sorted(r for r in the_plan.files if r.startswith(f"{top}/")):
                    there = look(dest / rel) is not None or (dest / rel).is_symlink()
                    if not there:
                        _require_folders_of(dest, rel)
                    (kept if there else merged).append(rel)
            else:
                continue
            taken.remove(top)
    if taken:
        # Walkthrough 33: a fork's repository holding its own README.md read "replaces nothing" and no way on.
        # Each named below dest as the user typed it: `init "my reg"` from its parent advised `mv .github
        # .github.mine`, which moves the working folder's own .github, if any (attack round 50).
        # A name aside that is free (attack round 50: `README.md.mine` kept from a first init was replaced by the
        # advice of a second, and `.github` moved into an existing `.github.mine/`).
        here = str(dest) in ("", ".")
        aside = "; ".join(
            f"mv {shell_word(t if here else dest / t)} {shell_word(free if here else dest / free)}"
            for t in taken
            for free in [_free_name(dest, t)]
        )
        raise InputError(
            f"{shown(dest)}: already holds {', '.join(taken)}; init writes a registry into an empty folder (or one "
            f"without these), and replaces nothing: to add a registry beside them, move them aside ({aside}), run "
            "init again, then merge each back into what init wrote"
        )
    parent = dest.parent if str(dest.parent) else Path(".")
    above = parent
    while (found := look(above)) is None and above != above.parent:
        above = above.parent
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise InputError(f"{shown(dest)}: cannot write: {shown(above)} is {kind(found.st_mode)}, not a folder")
    for folder in (dest, parent, above):  # the first that exists: where the new files would go
        if look(folder) is not None:
            if not os.access(folder, os.W_OK | os.X_OK):
                raise InputError(f"{shown(dest)}: cannot write: the folder {shown(folder)} is not writable")
            break
    # The folders init makes above and at dest, removed on a failure with all else it made (left57: a full disk
    # midway left `init a/b/reg`'s a/ and a/b/ behind, and reg/ itself when a move failed).
    above_made = [f for f in (parent, *parent.parents) if look(f) is None]
    dest_made = look(dest) is None
    try:
        make_folders(parent)
        staging = Path(tempfile.mkdtemp(prefix=staging_prefix(dest.name), dir=parent))
    except OSError as e:
        _remove_folders(above_made)
        raise InputError(f"{shown(dest)}: cannot write: {_write_failure(e, parent)}") from None
    moved: list[Path] = []
    made: list[Path] = []  # folders made inside a folder of the repository's own, to remove on a failure
    whole = [t for t in tops if not any(t == k or k.startswith(f"{t}/") for k in (*kept, *merged))]
    try:
        for rel, data in the_plan.files.items():
            if rel in kept:
                continue
            path = staging / rel
            make_folders(path.parent)
            _write_flushed(path, data)
        dest.mkdir(exist_ok=True)
        for top in whole:
            os.rename(staging / top, dest / top)
            moved.append(dest / top)
        for rel in merged:
            folder = (dest / rel).parent
            missing = [f for f in (folder, *folder.parents) if look(f) is None]
            for f in reversed(missing):
                f.mkdir()
                made.append(f)
            if look(dest / rel) is not None or (dest / rel).is_symlink():  # made since it was looked at
                raise FileExistsError(errno.EEXIST, "File exists", str(dest / rel))
            os.rename(staging / rel, dest / rel)
            moved.append(dest / rel)
    except OSError as e:
        for path in moved:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        _remove_folders(reversed(made))
        shutil.rmtree(staging, ignore_errors=True)
        _remove_folders([dest] if dest_made else [])
        _remove_folders(above_made)
        raise InputError(f"{shown(dest)}: cannot write: {_write_failure(e, parent)}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return tuple(sorted(kept))


def _write_flushed(path: Path, data: bytes) -> None:
    """Write ``data`` to the new file ``path`` (in init's temporary folder) and flush it to disk before it is moved
    into place, as :func:`passprice.files.write_atomically` does: ``path.write_bytes`` left the data to the kernel,
    so a crash after the move could leave a registry file empty (left57). Raises :class:`OSError` (a full disk:
    ``ENOSPC``)."""
    with open(path, "xb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _remove_folders(folders: Iterable[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is empty: what init made before it failed; a folder that
    holds something now (another process's file) is left, as is one that cannot be removed."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
