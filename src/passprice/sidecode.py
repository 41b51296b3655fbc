"""Each side of a review is priced by its own code: a revision whose pricing model differs from the running one is
priced in another Python process that imports that revision's ``src/passprice``, so a change to a formula shows up
as a moved price, not as two sides priced alike.

A side's code is its own ``src/passprice`` (materialized from git for a revision, as its facts are; read in place for
a folder or the work tree); a side without one (a registry kept apart from the code) is priced with the running
code, and the review says so. When a side's pricing-model digest (:func:`passprice.pins.pricing_model_digest`)
equals the running code's and every module the digest leaves out holds the running code's bytes
(:func:`_unpinned_changes`), it is priced in this process: a figure flows through those too (``schema.toml_loads``).
Otherwise ``python -E -P -B -c DRIVER`` runs with the same interpreter, the side's ``src/passprice`` loaded as the
package ``passprice`` and nothing else of the side on the import path (below), the requests on its standard input
and the results on its standard output as JSON (floats round-trip exactly), and a time limit (:data:`TIMEOUT_S`).
The driver calls the side's :func:`passprice.reproduce.side_json` when it has one, else the library calls every
earlier version has (``load_spec``, ``spec_from_document``, ``resolve``, ``locks.evaluate``, ``report.cost_json``).

Only the side's package is the side's: with ``PYTHONPATH`` at the side's ``src`` and the root as the working folder
(``-c`` puts it first on the path), a work tree's ``src/sitecustomize.py`` ran before any of passprice (``site``
imports it from the path), and a ``json.py`` beside ``src/passprice`` or at the checkout's top was imported for the
driver's ``import json``. A pull request moving a locked fact added one that wrote the card back as BASE had it
before HEAD was priced: the review said the price did not move, ``check`` then read BASE's figure in the checkout,
and the review named only a harmless edit of ``src/passprice`` (slip round 28). ``-E`` ignores the ``PYTHON*``
variables, ``-P`` keeps the working folder off the path, and the driver loads ``passprice`` from the side's folder
by name, so the rest of ``src`` is never imported.

Within a review (:func:`conversations`) a side's process is started once per root and code folder and imports the
package once (issue 16: two to three processes a review, each importing the package, 0.4-0.7 s apiece); each ask is
answered by a process forked for it (:data:`SERVE_DRIVER`, Linux only), which starts from the import's state and ends
through the interpreter's normal exit, as a one-ask process did, within its own time limit and output bound, with the
errors a one-ask process gives. The process that waits for each ask's process and says its exit status is a supervisor
that never imports the side's code (side58): the package is imported by a zygote it forks, used only while the kernel
shows it one thread with no process and no pipe descriptor of its own; otherwise each ask runs in a process of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from passprice.registry import Root

#: Seconds a side's own code may take to price every lock (the registered locks take about a second).
TIMEOUT_S = 300

#: Makes the driver the subreaper of what the side's code starts (``PR_SET_CHILD_SUBREAPER``, Linux; elsewhere
#: nothing): a process that made a session of its own (``setsid``) and whose parent ended is reparented to the
#: driver, not to ``init``, and ``_sweep(KEPT)`` kills and reaps every child the driver has but ``KEPT`` (the
#: children of every thread, read from ``/proc``), until none is left. A daemon the side's code started (fork,
#: ``setsid``, fork) outlived the review and held the answer's pipe until the time limit (attack70).
_REAP = """def _children():
    _pids = set()
    try:
        _tasks = os.listdir("/proc/self/task")
    except OSError:
        return _pids
    for _task in _tasks:
        try:
            with open("/proc/self/task/%s/children" % _task) as _f:
                _pids.update(int(_p) for _p in _f.read().split())
        except (OSError, ValueError):
            pass
    return _pids
def _sweep(_kept):
    for _ in range(1000):
        _left = _children() - _kept
        if not _left:
            return
        for _p in _left:
            try:
                os.kill(_p, 9)
            except OSError:
                pass
        for _p in _left:
            try:
                os.waitpid(_p, 0)
            except OSError:
                pass
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    del ctypes
except Exception:
    pass
"""

#: How a one-ask driver reads its request: ``{"root", "src", …}``, the whole of its standard input; what the side's
#: code leaves behind is killed when it exits (its first ``atexit`` hook, so its last to run; :data:`_REAP`).
_HEAD = """import atexit, importlib.util, json, os, sys
from pathlib import Path
""" + _REAP + """atexit.register(_sweep, set())
request = json.load(sys.stdin)
"""

#: Loads the side's ``src/passprice`` (``request["src"]``) as the package ``passprice``, and nothing else of the side.
_LOAD = r"""
_spec = importlib.util.spec_from_file_location(
    "passprice", str(Path(request["src"]) / "__init__.py"), submodule_search_locations=[request["src"]])
passprice = importlib.util.module_from_spec(_spec)
sys.modules["passprice"] = passprice
_spec.loader.exec_module(passprice)
here = Path(passprice.__file__).resolve().parent
if here != Path(request["src"]).resolve():
    print(json.dumps({"error": "imported passprice from %s, not from %s" % (here, request["src"])}))
    sys.exit(0)
"""

_LOCKS_BODY = r"""
from passprice.registry import Root
root = Root(Path(request["root"]))
try:
    from passprice.reproduce import side_json
except ImportError:
    side_json = None
if side_json is not None:
    print(json.dumps(side_json(root, request["locks"])))
    sys.exit(0)
from passprice.errors import InputError, problem_lines
from passprice.locks import evaluate
from passprice.report import cost_json
from passprice.serving import ServingRefusal
from passprice.servings import load_spec, resolve, spec_from_document, spec_to_document
results = {}
for r in request["locks"]:
    out = {}
    name = r.get("serving")
    out["gone"] = name is not None and not (root.servings / (name + ".toml")).is_file()
    try:
        if name is not None and not out["gone"]:
            spec = load_spec(root, name)
        else:
            spec = spec_from_document(r["spec"], "lock: serving")
        resolved = resolve(root, spec)
    except InputError as e:
        out["error"] = " ".join(problem_lines(e)).replace(str(root.path) + "/", "")
        results[r["key"]] = out
        continue
    out["spec"] = spec_to_document(resolved.spec)
    out["checkpoint"] = None
    out["facts"] = {p: f.provenance.value for p, f in resolved.facts().items()}
    try:
        out["price"] = cost_json(evaluate(r["kind"], resolved.header, resolved.card, resolved.serving))
    except ServingRefusal as e:
        out["refusal"] = e.to_json()
    results[r["key"]] = out
print(json.dumps({"results": results}))
"""

#: The program run with a side's code on the import path: reads ``{"root", "src", "locks"}`` on stdin, writes
#: ``{"results": {...}}`` (or ``{"error": ...}``) on stdout.
DRIVER = _HEAD + _LOAD + _LOCKS_BODY


#: The program that prices lock files from their own pinned inputs with a side's code (slip round 29): reads
#: ``{"root", "src", "pinned"}`` (lock files relative to the root), writes ``{"results": {rel: {"price": …} or
#: {"error": …}}}``. It calls only what ``passprice reproduce`` prices a lock's pins with (``read_lock``,
#: ``find_checkpoint``, ``Lock.pinned_card``, ``pinned_serving``, ``Lock.pinned_stack``, ``priced``: every one in the
#: pricing model's digest); the running code compares the figures with what the lock records.
_PINNED_BODY = r"""
try:
    from passprice.errors import InputError, problem_lines
    from passprice.locks import pinned_serving, priced, read_lock
    from passprice.registry import Root
    from passprice.reproduce import find_checkpoint
    from passprice.serving import ServingRefusal
except ImportError as e:
    print(json.dumps({"error": "its code cannot price a lock from its pins (%s)" % e}))
    sys.exit(0)
root = Root(Path(request["root"]))
results = {}
for rel in request["pinned"]:
    out = {}
    try:
        lock = read_lock(root.path / rel, root.schema)
        header, state = find_checkpoint(root, lock)
        if header is None:
            out["error"] = "its pinned checkpoint content is in no entry"
        else:
            try:
                out["price"] = priced(lock.kind, header, lock.pinned_card(), pinned_serving(lock),
                                      lock.pinned_stack())[0]
            except ServingRefusal as e:
                out["price"] = e.to_json()
    except InputError as e:
        out["error"] = " ".join(problem_lines(e)).replace(str(root.path) + "/", "")
    results[rel] = out
print(json.dumps({"results": results}))
"""

PINNED_DRIVER = _HEAD + _LOAD + _PINNED_BODY


def code_folder(folder: Path) -> Path | None:
    """``folder/src/passprice`` when it holds a package (``__init__.py``), else ``None``."""
    code = folder / "src" / "passprice"
    return code if (code / "__init__.py").is_file() else None


@attrs.frozen
class Code:
    """The code a side is priced with: ``folder`` (its ``src/passprice``; ``None`` for the running code),
    ``model`` (its pricing-model digest), ``own`` (whether it is the side's own code, not the running code by
    default), ``running`` (whether it is priced in this process)."""

    folder: Path | None
    model: str
    own: bool
    running: bool
    #: Why the side's code was not judged (:class:`passprice.pins.CodeNotJudged`: past the tokens passprice parses of
    #: another checkout's code); its locks are then not priced.
    not_judged: str | None = None
    #: The side's own ``src/passprice`` left aside (its pricing-model digest), though it has one: HEAD brings it into
    #: a registry whose BASE has none (:func:`kept_apart`).
    set_aside: str | None = None
    #: The side's module file past :data:`passprice.pins.MODULE_BYTES`, not read (:func:`_oversized_module`'s line):
    #: the side's code is then :attr:`not_judged`, and a review's HEAD does not read (exit 2), as for a record past
    #: its cap.
    oversized: str | None = None

    def describe(self, side: str) -> str:
        """Which code priced ``side`` (``BASE``/``HEAD``), in words."""
        if self.not_judged is not None:
            return f"{side}: its own src/passprice was not judged ({self.not_judged}); its locks are not priced"
        short = _short(self.model)
        if self.set_aside is not None:
            theirs = _short(self.set_aside)
            return (f"{side}: this passprice's code ({short}), not the src/passprice {side} brings ({theirs}), "
                    "which BASE lacks: a registry kept apart from its code is checked with the passprice it "
                    "installs, so its locks are reviewed with that")
        if not self.own:
            return f"{side}: this passprice's code ({short}; {side} has no src/passprice)"
        how = "in this process (same pricing model as the running code)" if self.running else "in its own process"
        return f"{side}: its own src/passprice ({short}), {how}"


def _short(model: str) -> str:
    """A pricing model as :meth:`Code.describe` shows it: a digest's first 12 hex digits and ``…``, another text
    (``unreadable (RecursionError)``) whole (attack87: it was cut to ``unreadable (…``)."""
    return f"{model.removeprefix('sha256:')[:12]}…" if model.startswith("sha256:") else model


def code_of(folder: Path | None) -> Code:
    """The :class:`Code` of a side whose ``src/passprice`` is ``folder`` (``None``: the side has none)."""
    from passprice.pins import CodeNotJudged, pricing_model_digest

    running = pricing_model_digest()
    if folder is None:
        return Code(None, running, False, True)
    past = _oversized_module(folder)
    if past is not None:  # not read: the digest's refusal named the module where it lies (a review's temporary folder)
        return Code(folder, "not judged", True, False, past, oversized=past)
    try:
        model = pricing_model_digest(folder)
    except CodeNotJudged as e:  # not parsed, and not imported by a side's process either
        return Code(folder, "not judged", True, False, str(e))
    except (SyntaxError, ValueError, OSError, RecursionError, MemoryError) as e:
        # RecursionError or MemoryError: a module nested deeper than the parser goes (attack87: 300,000 ``a+`` in a
        # side's locks.py, 600,006 bytes under the token cap, was a traceback out of diff)
        model = f"unreadable ({type(e).__name__})"
    alike = model == running and not _unpinned_changes(folder)
    if not alike:  # priced in its own process, which imports the side's modules, pricing or not
        slow = _slow_coded(folder) or _too_many_tokens(folder)
        if slow is not None:
            return Code(folder, "not judged", True, False, slow)
    return Code(folder, model, True, alike)


def _oversized_module(folder: Path) -> str | None:
    """Why the side's ``folder`` is not read: its first module file (``*.py`` below it, as :func:`_module_files`
    walks it) past :data:`passprice.pins.MODULE_BYTES`, sized by ``lstat``, named as ``src/passprice/REL``; or
    ``None``. A review writes a revision's module past the cap as a sparse file of its size, unread
    (:meth:`passprice.review.sides.Checkout.materialize`): the digest's refusal of it named the review's temporary
    folder and replaced the whole report (tests/test_blobcap162.py). Raises nothing."""
    import stat

    from passprice.pins import MODULE_BYTES

    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = Path(dirpath) / name
            try:
                found = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(found.st_mode) and found.st_size > MODULE_BYTES:
                rel = path.relative_to(folder).as_posix()
                return (f"src/passprice/{rel}: {found.st_size:,} bytes, past the {MODULE_BYTES:,} a module may hold: "
                        "not read")
    return None


def _unpinned_changes(folder: Path) -> tuple[str, ...]:
    """The module files of the side's ``folder`` outside the pricing model's digest (every ``.py`` below it,
    :func:`_module_files`, but the running package's pricing modules, :func:`passprice.pins.pricing_modules`, which
    the side shares when its digest equals the running code's) whose bytes differ from the running package's: added,
    removed, rewritten or not read. A side is priced in this process only when there are none: the digest leaves
    out the modules :data:`passprice.pins.NOT_PRICING` names, and a figure flows through them (``schema.toml_loads``
    reads every number of every fact and lock), and through any module they import, which is every module of the
    package. A pull request whose ``schema.parse_float`` read ``4.8`` as ``4.0`` moved five locked prices (the H200's
    ``memory.bandwidth``) while the review, pricing HEAD with BASE's code, said "no lock affected; 10 locks
    unaffected" (exit 0; tests/test_attack114.py). The side's compiled code (:func:`compiled_files`) counts too,
    whatever its bytes. Never raises: a file that cannot be read counts as changed."""
    from passprice.pins import PACKAGE, pricing_modules

    if folder.resolve() == PACKAGE:
        return ()
    pinned = {f"{name}.py" for name in pricing_modules()}
    theirs, ours = _module_files(folder), _running_module_files()
    changed = [rel for rel in sorted({*theirs, *ours} - pinned)
               if not isinstance(theirs.get(rel), bytes) or theirs.get(rel) != ours.get(rel)]
    return (*changed, *compiled_files(folder), *schema_changes(folder), *data_changes(folder))


#: The folders of a built package's ``_data`` (the registry it embeds: :func:`passprice.registry.embedded_root`)
#: that :func:`data_changes` compares; ``schema`` is :func:`schema_changes`'.
DATA_FOLDERS = ("facts", "registry", "locks", "sources")


def running_data() -> Path:
    """Where the running package's embedded registry lies (:func:`passprice.registry.embedded_root`'s folder): its
    ``_data`` when a built install carries one, else the checkout an editable install lives in. Raises nothing."""
    from passprice.pins import PACKAGE

    data = PACKAGE / "_data"
    return data if data.is_dir() else PACKAGE.parent.parent


def data_changes(folder: Path) -> tuple[str, ...]:
    """The files of the registry a side's code at ``folder`` embeds (``folder/_data``'s :data:`DATA_FOLDERS`, a built
    package's copy of facts, registry, locks and sources, which :func:`passprice.registry.embedded_root` reads:
    the shipped checkpoint entry ``reproduce`` tells a registry lacking one to copy, the shipped card a renamed one
    is found by) whose bytes differ from the running package's (:func:`running_data`): added, removed, rewritten or
    not read, named ``src/passprice/_data/REL``. Only ``_data/schema`` was compared before, so a
    side carrying its own code with an edited ``_data`` was priced in this process with the running package's
    (tests/test_left122.py). A side with no ``_data`` (a checkout: its code's embedded registry is the checkout, the
    side itself) has none to differ. The package's other data files are not read by the pricing:
    ``pricing_models.json`` is read by the review's verdict (:mod:`passprice.modelhistory`, which compares BASE's and
    HEAD's lists itself), ``templates/`` by ``init``. Never raises: a file that cannot be read counts as changed."""
    data = folder / "_data"
    linked = [f"src/passprice/{rel} (a symbolic link: not read, counted as changed)" for rel in
              ("_data", *(f"_data/{sub}" for sub in DATA_FOLDERS)) if os.path.islink(folder / rel)]
    if linked:  # never walked: a link to / would be (os.walk follows the folder it is given)
        return tuple(linked)
    try:
        if not data.is_dir() or data.resolve() == running_data().resolve():
            return ()
    except (OSError, RuntimeError):
        pass
    if not _RUNNING_DATA:
        ours_at = running_data()
        _RUNNING_DATA.append({f"{sub}/{rel}": got for sub in DATA_FOLDERS
                              for rel, got in _module_files(ours_at / sub, suffix="").items()})
    ours = _RUNNING_DATA[0]
    theirs = {f"{sub}/{rel}": got for sub in DATA_FOLDERS for rel, got in _module_files(data / sub, suffix="").items()}
    return tuple(f"src/passprice/_data/{rel}" for rel in sorted({*theirs, *ours})
                 if not isinstance(theirs.get(rel), bytes) or theirs.get(rel) != ours.get(rel))


_RUNNING_DATA: list[dict[str, bytes | str | None]] = []


def schema_folder(folder: Path) -> Path:
    """The JSON Schemas the code at ``folder`` (a side's ``src/passprice``) validates every file against, found as
    :func:`passprice.registry.schema_dir` finds the running package's: ``folder/_data/schema`` when it is a folder
    (a built package's copy), else the ``schema/`` of the checkout ``folder`` lies in (two folders up). Raises
    nothing."""
    data = folder / "_data" / "schema"
    return data if data.is_dir() else folder.parent.parent / "schema"


def schema_changes(folder: Path) -> tuple[str, ...]:
    """The files of the JSON Schemas the side's code at ``folder`` would validate against (:func:`schema_folder`;
    POSIX paths from the folder holding ``src``, ``schema/card.schema.json``) whose bytes differ from the running
    package's (:func:`passprice.registry.schema_dir`): added, removed, rewritten or not read, as
    :func:`_unpinned_changes` counts modules. A root's schemas are always the package's
    (:attr:`passprice.registry.Root.schema`), so a checkout's ``schema/`` is its code's, not its registry's: a pull
    request lowering ``card.name``'s ``maxLength`` to 3 in ``schema/card.schema.json`` made HEAD's own ``check``
    refuse every card and so every locked price, while the review, pricing HEAD in this process against the running
    package's schemas, said "10 locks unaffected" and only warned that the copy differs (exit 0;
    tests/test_attack118.py). A side with no such folder at all (a registry carrying a copy of the code, not the
    checkout's ``schema/``) has none to differ: its own code would stop at every file ("the JSON Schemas are
    missing"), which no price of it can move unseen. Never raises: a file that cannot be read counts as changed."""
    from passprice.errors import InputError
    from passprice.registry import schema_dir

    try:
        ours_at = schema_dir()
    except InputError:  # the running package lacks its schemas: nothing can be judged the same
        return ("schema (the running passprice has none)",)
    theirs_at = schema_folder(folder)
    try:
        if theirs_at.resolve() == ours_at.resolve() or not theirs_at.is_dir():
            return ()
    except (OSError, RuntimeError):
        pass
    if not _RUNNING_SCHEMAS:
        _RUNNING_SCHEMAS.append(_module_files(ours_at, suffix=""))
    theirs, ours = _module_files(theirs_at, suffix=""), _RUNNING_SCHEMAS[0]
    try:
        shown = theirs_at.relative_to(folder.parent.parent).as_posix()
    except ValueError:
        shown = theirs_at.as_posix()
    return tuple(f"{shown}/{rel}" for rel in sorted({*theirs, *ours})
                 if not isinstance(theirs.get(rel), bytes) or theirs.get(rel) != ours.get(rel))


_RUNNING_SCHEMAS: list[dict[str, bytes | str | None]] = []


def compiled_files(folder: Path) -> tuple[str, ...]:
    """The files below a side's ``folder`` (POSIX paths relative to it, sorted; links to folders not followed) that
    Python imports in place of a module's source without checking them against it: an extension module
    (``schema.cpython-311-x86_64-linux-gnu.so``, ``.pyd``: looked for before the source), a sourceless ``.pyc``
    beside the modules, and a ``.pyc`` in ``__pycache__`` whose header says its hash is not checked (PEP 552). No
    digest covers them: a pull request committing ``src/passprice/__pycache__/schema.cpython-311.pyc``, compiled
    unchecked from a ``schema.py`` reading ``4.8`` as ``4.0``, priced the checkout 830.1 tokens/s where its lock
    records 996.1, and the review said "no changes to facts, registry, locks or the pricing model; 10 locks
    unaffected" (exit 0; tests/test_attack114.py). A ``.pyc`` Python checks (against its source's time and size, or
    hash) is a cache of the source and is left out: a work tree's own. Never raises: a ``.pyc`` that cannot be read
    counts."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        cache = Path(dirpath).name == "__pycache__"
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if compiled_name(name) and (not name.endswith(".pyc") or not cache or _unchecked(path)):
                out.append(path.relative_to(folder).as_posix())
    return tuple(out)


def compiled_name(name: str) -> bool:
    """Whether a file named ``name`` may be compiled code Python imports as a module: an extension module's suffix
    (this interpreter's, ``.so``, ``.pyd``) or ``.pyc``. A review materializes such files of a revision's
    ``src/passprice`` with its modules (:func:`passprice.review.sides._read_here`), so :func:`compiled_files` finds
    them."""
    import importlib.machinery

    return name.endswith((*importlib.machinery.EXTENSION_SUFFIXES, ".so", ".pyd", ".pyc"))


def _unchecked(path: Path) -> bool:
    """Whether the ``.pyc`` at ``path`` is one Python imports without checking it against its source: its flags
    (the header's second word, PEP 552) say hash-based and not checked; also when it cannot be read, is no regular
    file, or holds more than :data:`passprice.pins.MODULE_BYTES` (not read: a review writes a revision's ``.pyc``
    past that cap as a sparse file of its size, whose header says nothing; tests/test_blobcap169.py)."""
    import stat

    from passprice.pins import MODULE_BYTES

    try:
        found = os.lstat(path)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MODULE_BYTES:
            return True
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return True
    if len(head) < 8:
        return True
    flags = int.from_bytes(head[4:8], "little")
    return flags & 0b1 == 1 and flags & 0b10 == 0


_RUNNING_FILES: list[dict[str, bytes | str | None]] = []


def _running_module_files() -> dict[str, bytes | str | None]:
    """:func:`_module_files` of the running package, read once a process."""
    from passprice.pins import PACKAGE

    if not _RUNNING_FILES:
        _RUNNING_FILES.append(_module_files(PACKAGE))
    return _RUNNING_FILES[0]


#: The most tokens (:func:`passprice.pins._count_tokens`) the modules of a side's ``src/passprice`` may hold together,
#: pricing or not, for the side to be priced in a process of its own, which imports them (:func:`code_of`): the
#: pricing model's are capped apart (:data:`passprice.pins.MODEL_TOKENS`), the others were not (``schema.py``,
#: ``registry.py``, ``files.py`` …), so a side's ``schema.py`` grown by 1 MB of ``[a,a,…]`` (499,000 names) held a
#: ``diff`` at 6.3-6.5 s of CPU and 585 MB, its process compiling it (``tests/test_bound111.py``). This package's
#: own modules hold 728,283 (76.7 %; a test holds them under 80 %: past it, raise the cap with the measure, about 1.3
#: times the package's own; it was 800,000 until the package's own passed 640,000, 860,000 until they reached
#: 691,339, 80.4 % of it, and 900,000 until they reached 728,283, 80.9 % of it).
SIDE_TOKENS = 950_000


def _too_many_tokens(folder: Path) -> str | None:
    """Why the side's ``folder`` is not imported for its tokens (past :data:`SIDE_TOKENS`), or ``None``. Counted at C
    speed, nothing parsed; a file not read counts nothing (the digest names it). Raises nothing."""
    from passprice.pins import _count_tokens

    total = 0
    for data in _module_files(folder).values():
        if isinstance(data, bytes):
            total += _count_tokens(data)
    if total <= SIDE_TOKENS:
        return None
    return (f"src/passprice: {total:,} tokens in its modules, past the {SIDE_TOKENS:,} a side's code may hold to be "
            "priced in a process of its own, which imports them all (this passprice's own hold about 730,000): "
            "not imported")


def _slow_coded(folder: Path) -> str | None:
    """The first module of the side's ``folder`` (:func:`_module_files`) that declares a codec whose decoding is
    quadratic, said as :func:`passprice.pins.slow_coding_said` says it, or ``None``. Its process would decode it on
    import: left103, a side's ``locks.py`` of 900,000 bytes in punycode (not parsed by the digest, which said it
    unreadable) held a ``diff`` 97 s of CPU, its process importing it (load 9)."""
    from passprice.pins import slow_coding_said

    for rel, data in _module_files(folder).items():
        said = slow_coding_said(rel, data) if isinstance(data, bytes) else None
        if said is not None:
            return said
    return None


def kept_apart(base: Code, head: Code) -> Code:
    """The code HEAD is priced with, given ``base``'s and ``head``'s own: ``head`` itself, unless BASE has no
    ``src/passprice`` (a registry kept apart from its code, checked by the passprice it installs) and HEAD brings one
    that prices otherwise than the running code — then the running code, with HEAD's own digest kept as
    ``set_aside``. A pull request adding ``src/passprice`` to such a registry, its ``side_json`` pricing each lock's
    embedded serving rather than the registered one, moved a locked price while the review said "every locked price
    is re-priced the same" (exit 0), and ``check`` (the installed passprice) only noted the serving's change."""
    if base.own or not head.own or head.running:
        return head
    return attrs.evolve(code_of(None), set_aside=head.model)


def code_changes(base: Code, head: Code) -> tuple[str, ...]:
    """The files of ``src/passprice`` (POSIX paths from the side's root, ``src/passprice/review/verdict.py``, a
    subpackage's too) that differ between ``base``'s and ``head``'s own code: added, removed or rewritten, pricing or
    not. Empty unless both sides bring their own code. The review's verdict is made by the running passprice: a pull
    request that rewrites its exit status (``diff.py``'s then; outside the pricing model's digest, so no price moves)
    while it moves a locked price passed the review run by its own code (exit 0), and no line of the review named
    the change. Named here, a reviewer sees that the code judging the change is itself changed; the CI workflow runs
    the verdict with BASE's passprice, so HEAD's code cannot pass its own change. Never raises: a file that cannot be
    read counts as changed, and so does one that is not read — a ``.py`` past :data:`passprice.pins.MODULE_BYTES`
    (4 MiB, the most a module of the pricing model may hold), a link, a FIFO — named with why (``src/passprice/x.py
    (1,073,741,824 bytes, past the 4,194,304 a module may hold: not read, counted as changed)``): a 1 GiB ``.py`` in a
    hidden folder of a side's code (which the side's own reading passes over) took the review 14 s and 1.1 GB, and a
    FIFO held it for ever. Folders are walked without following links."""
    if base.folder is None or head.folder is None or not base.own or not head.own:
        return ()
    old, new = _module_files(base.folder), _module_files(head.folder)
    out = []
    for rel in sorted({*old, *new}):
        was, now = old.get(rel), new.get(rel)
        if isinstance(was, bytes) and isinstance(now, bytes) and was == now:
            continue
        why = next((w for w in (now, was) if isinstance(w, str)), None)
        out.append(f"src/passprice/{rel}" + (f" ({why}: not read, counted as changed)" if why else ""))
    # what the build reads or installs beside the package (:data:`BUILD_FILES`): a .pth there runs at every start
    old, new = _build_files(base.folder.parent.parent), _build_files(head.folder.parent.parent)
    for rel in sorted({*old, *new}):
        was, now = old.get(rel), new.get(rel)
        if not (isinstance(was, bytes) and isinstance(now, bytes) and was == now):
            out.append(f"{rel} (read by the build, or installed with the package)")
    # the schemas a built copy keeps in the code's folder (:func:`schema_folder`), validated against in place of the
    # checkout's schema/ (which the review names as a file of its own): unnamed, adding them changed nothing said;
    # and the registry it embeds (:func:`data_changes`), every file of it
    old, new = ({} if os.path.islink(side / "_data") else _module_files(side / "_data", suffix="")
                for side in (base.folder, head.folder))
    if os.path.islink(head.folder / "_data"):
        out.append("src/passprice/_data (a symbolic link: not read, counted as changed)")
    for rel in sorted({*old, *new}):
        was, now = old.get(rel), new.get(rel)
        if not (isinstance(was, bytes) and isinstance(now, bytes) and was == now):
            out.append(f"src/passprice/_data/{rel}")
    # the package's data (:func:`package_data`), installed with it and read by its code: unnamed, a pull request
    # rewriting templates/facts.yml, the review workflow `init` writes into every new registry, read "no changes to
    # facts, registry, locks or the pricing model" (exit 0; tests/test_attack121.py)
    old, new = (_package_data(side) for side in (base.folder, head.folder))
    for rel in sorted({*old, *new}):
        was, now = old.get(rel), new.get(rel)
        if not (isinstance(was, bytes) and isinstance(now, bytes) and was == now):
            why = next((w for w in (now, was) if isinstance(w, str)), None)
            out.append(f"src/passprice/{rel} (package data, installed with the code"
                       + (f"; {why}: not read, counted as changed)" if why else ")"))
    # compiled code HEAD carries (:func:`compiled_files`), imported in place of its source: named whatever BASE holds
    out += [f"src/passprice/{rel} (compiled code, imported in place of its source)"
            for rel in compiled_files(head.folder)]
    return tuple(out)


def package_data(rel: str) -> bool:
    """Whether the file at ``rel`` (a POSIX path inside ``src/passprice``) is package data that
    :func:`code_changes` compares: any file the wheel installs with the code (``templates/facts.yml``, which
    ``init`` writes into a registry as its review workflow) but a module (``.py``), compiled code
    (:func:`compiled_name`), a file of ``__pycache__``, the built copy under ``_data/`` and the list of pricing
    models (:data:`passprice.modellist.LISTED`), which each have a rule of their own. Raises nothing."""
    from passprice.modellist import LISTED

    parts = rel.split("/")
    return not (rel.endswith(".py") or compiled_name(parts[-1]) or "__pycache__" in parts[:-1]
                or parts[0] == "_data" or f"src/passprice/{rel}" == LISTED)


def _package_data(folder: Path) -> dict[str, bytes | str | None]:
    """Each file of :func:`package_data` below ``folder`` (a side's ``src/passprice``), as :func:`_module_files`
    gives a module: its bytes, why it is not read, or ``None``. Never raises."""
    return {rel: data for rel, data in _module_files(folder, suffix="").items() if package_data(rel)}


#: The files of a checkout its build reads or installs beside ``src/passprice`` (POSIX paths from the root): the
#: build's configuration and hook (entry points, ``force-include``) and ``src/passprice_sigint.pth``, which the wheel
#: installs into site-packages, where ``site`` runs it at every start of the interpreter. A pull request rewriting that
#: ``.pth`` can patch any module of HEAD once installed, and the review read and named nothing of it, "no changes to
#: facts, registry, locks or the pricing model" (exit 0; tests/test_attack118.py).
BUILD_FILES = ("pyproject.toml", "hatch_build.py", "setup.py", "setup.cfg", "src/passprice_sigint.pth")


def _build_files(root: Path) -> dict[str, bytes | str | None]:
    """Each of :data:`BUILD_FILES` ``root`` holds (and each other ``.pth`` directly in ``root/src``), as
    :func:`_module_files` gives a module: its bytes, why it is not read, or ``None``. Never raises."""
    out: dict[str, bytes | str | None] = {}
    for rel in BUILD_FILES:
        folder, _, name = rel.rpartition("/")
        found = _module_files(root / folder, suffix=name, depth=0)
        if name in found:
            out[rel] = found[name]
    for name, data in _module_files(root / "src", suffix=".pth", depth=0).items():
        out[f"src/{name}"] = data
    return out


def _module_files(folder: Path, suffix: str = ".py", depth: int | None = None) -> dict[str, bytes | str | None]:
    """Each ``.py`` file (each file whose name ends with ``suffix``) below ``folder`` (links to folders not followed,
    ``__pycache__`` left out; ``folder``'s own files alone when ``depth`` is 0) by POSIX path relative to it: its
    bytes; why it is not read (not a regular file, or past :data:`passprice.pins.MODULE_BYTES`); or ``None`` when it
    cannot be read."""
    import stat

    from passprice.errors import InputError
    from passprice.files import read_regular
    from passprice.pins import MODULE_BYTES

    out: dict[str, bytes | str | None] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [] if depth == 0 else sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith(suffix):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            try:
                found = os.lstat(path)
            except OSError:
                out[rel] = None
                continue
            if stat.S_ISLNK(found.st_mode):
                out[rel] = "a symbolic link"
            elif not stat.S_ISREG(found.st_mode):
                out[rel] = "not a regular file"
            elif found.st_size > MODULE_BYTES:
                out[rel] = f"{found.st_size:,} bytes, past the {MODULE_BYTES:,} a module may hold"
            else:
                try:
                    out[rel] = read_regular(path, MODULE_BYTES)
                except InputError:
                    out[rel] = None
    return out


def price_locks(root: Root, code: Code, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Price ``requests`` (see :func:`passprice.reproduce.side_json`) with ``root``'s inputs and ``code``: results
    by key. When the side's own code cannot answer (it fails, or takes longer than :data:`TIMEOUT_S`), every result
    is ``{"error": why}``."""
    if not requests:
        return {}
    if code.not_judged is not None:
        return {str(r["key"]): {"error": f"its own code was not judged: {code.not_judged}"} for r in requests}
    asked, first = _distinct(requests)
    results = _price_distinct(root, code, asked)
    return {key: dict(results[one]) for key, one in first.items() if one in results}


def _distinct(requests: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], dict[str, str]]:
    """The ``requests`` that ask for distinct things (all but the ``key`` alike: a serving, a kind, an embedded
    serving document, a stack), each first one kept, and each request's key → the key of the first one asking the
    same. 1,000 copies of a lock in ``locks/`` were each priced by each side's code (7.7 s of diff's profile, issue
    13, left61); a result depends on the request's content and the side alone. Raises nothing."""
    import json

    asked: list[Mapping[str, Any]] = []
    seen: dict[str, str] = {}
    first: dict[str, str] = {}
    for request in requests:
        key = str(request["key"])
        content = json.dumps({k: v for k, v in request.items() if k != "key"}, sort_keys=True, default=repr)
        if content not in seen:
            seen[content] = key
            asked.append(request)
        first[key] = seen[content]
    return asked, first


def _price_distinct(root: Root, code: Code, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`price_locks` of ``requests`` asking distinct things (:func:`_distinct`): results by key."""
    if code.running or code.folder is None:
        from passprice.reproduce import side_json

        results: dict[str, Any] = side_json(root, list(requests))["results"]
        return results
    answered, why = _ask(root, code.folder, DRIVER, {"locks": list(requests)})
    if answered is None:
        return {str(r["key"]): {"error": f"its own code could not price it: {why}"} for r in requests}
    # As price_pins: the side's code answers as it likes; a result of another shape is one short line, never obeyed
    # ({"price": {"tokens_per_s": "x"}} was a ValueError traceback in the review, attack round 34b's leftover).
    # Only what was asked is read: a lock it gave no result for is its code's failure, not "no such lock on HEAD" (the
    # review's word for a lock the side lacks, which it said of a lock HEAD holds; attack round 37).
    out: dict[str, Any] = {}
    for key in (str(r["key"]) for r in requests):
        if key not in answered:
            out[key] = {"error": "its own code could not price it: it gave no result for it"}
            continue
        result = answered[key]
        problem = answer_problem(result)
        out[key] = result if problem is None else {
            "error": f"its own code could not price it: it answered {shown_answer(result)}: {problem}"}
    return out


#: The figures of a price's ``--json`` object the review reads as numbers, and those it reads as text
#: (:func:`answer_problem`).
PRICE_NUMBERS = frozenset((
    "batch", "host_sequences", "rows_per_sequence", "emitted_per_sequence", "weight_bytes", "sequence_bytes",
    "rewrite_bytes", "array_macs", "vector_macs", "scale_cycles", "memory_s", "host_s", "array_s", "vector_s",
    "scale_s", "pass_s", "held_bytes", "capacity_bytes", "host_held_bytes", "host_capacity_bytes", "on_chip_bytes",
    "on_chip_capacity", "tokens_per_s", "ratio", "fixed_s",
))
PRICE_TEXTS = frozenset(("card", "binds", "provenance", "stack"))
#: The most characters of a name or a fact's path a side's code may answer (a price's ``card``, ``binds``,
#: ``provenance``, ``stack``; its ``checkpoint``; each path of ``rests_on``, ``weakest`` and ``facts``), and the most
#: paths each of those may hold: the registered servings rest on at most 20 facts, of at most 19 characters. Each was
#: shown whole, as often as the review names the lock: a ``binds`` of 1,000,000 characters made the review 14 MB,
#: and a ``rests_on`` of 200,000 assumed facts a review of 10 MB and a refusal line of 6 MB in 8.9 s (attack round 37).
MAX_NAME = 256
MAX_PATHS = 256


def _provenance(value: Any) -> bool:
    """Whether ``value`` is a provenance's name (``published`` … ``assumed``): the review judges a lock's floors on
    them (``Provenance(value)``), and a side's code answering ``"bogus"`` was a ``ValueError`` traceback there
    (attack round 35). Raises nothing."""
    from passprice.facts import Provenance

    return isinstance(value, str) and value in {p.value for p in Provenance}


def _price_problem(price: Any, where: str) -> str | None:
    """What is wrong with ``price`` (a price's ``--json`` object as a side's own code answered it, at ``where``):
    ``None`` when it has the shape the review reads."""
    if not isinstance(price, dict):
        return f"its {where} is not a table"
    # The review's text and comment read a price's pass and bind too: a price of tokens_per_s alone was a KeyError
    # traceback there (its --json passed); a NaN or an infinity (JSON's NaN, Infinity, 1e400) made --json write NaN,
    # which no strict JSON reader takes (attack round 35).
    if "tokens_per_s" not in price:
        return f"its {where} has no tokens_per_s"
    for key, value in price.items():
        if key in PRICE_NUMBERS and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"its {where}.{key} is not a number"
        if key in PRICE_NUMBERS and not (math.isfinite(value) if isinstance(value, float) else
                                         abs(value) <= sys.float_info.max):  # an integer of 400 digits, too
            return f"its {where}.{key} is not a finite number"
        if key in PRICE_TEXTS and not isinstance(value, str):
            return f"its {where}.{key} is not a text"
        if key in PRICE_TEXTS and len(value) > MAX_NAME:
            return f"its {where}.{key} is {len(value):,} characters (at most {MAX_NAME:,} read)"
    for key in () if "." in where else ("pass_s", "binds"):
        if key not in price:
            return f"its {where} has no {key}"
    rests_on = price.get("rests_on", {})
    if not isinstance(rests_on, dict) or not all(_provenance(v) for v in rests_on.values()):
        return f"its {where}.rests_on is not a table of provenances"
    if (problem := _paths_problem(rests_on, f"{where}.rests_on")) is not None:
        return problem
    weakest = price.get("weakest", [])
    if not isinstance(weakest, list) or not all(isinstance(v, str) for v in weakest):
        return f"its {where}.weakest is not a list of paths"
    if (problem := _paths_problem(weakest, f"{where}.weakest")) is not None:
        return problem
    if price.get("expected") is not None:
        return _price_problem(price["expected"], f"{where}.expected")
    return None


def _paths_problem(paths: Any, where: str) -> str | None:
    """What is wrong with ``paths`` (a table keyed by facts' paths, or a list of them; texts already) as a side's own
    code answered it at ``where``: more than :data:`MAX_PATHS` of them, or one longer than :data:`MAX_NAME`
    characters; ``None`` when neither. Raises nothing."""
    if len(paths) > MAX_PATHS:
        return f"its {where} holds {len(paths):,} paths (at most {MAX_PATHS:,} read)"
    longest = max((len(p) for p in paths), default=0)
    if longest > MAX_NAME:
        return f"its {where} holds a path of {longest:,} characters (at most {MAX_NAME:,} read)"
    return None


#: The most characters of a refusal's message, or of an error, a side's code may answer (the shipped refusals' are
#: under 1,000).
MAX_REFUSAL = 4096


def answer_problem(result: Any) -> str | None:
    """What is wrong with ``result``, one lock's result as a side's own code answered it
    (:func:`passprice.reproduce.side_json`'s shape: ``price``, ``refusal``, ``error``, ``spec``, ``checkpoint``,
    ``facts``, ``gone``), in a few words; ``None`` when it has the shape the review reads. Raises nothing."""
    if not isinstance(result, dict):
        return "not a table"
    for key, kind, what in (("refusal", dict, "a table"), ("error", str, "a text"), ("spec", dict, "a table"),
                            ("checkpoint", str, "a text"), ("facts", dict, "a table"), ("gone", bool, "true or false")):
        if result.get(key) is not None and not isinstance(result[key], kind):
            return f"its {key} is not {what}"
    refusal = result.get("refusal")
    if refusal is not None and not all(isinstance(refusal.get(k, ""), str) for k in ("refusal", "message")):
        return "its refusal's name or message is not a text"
    # A refusal's name and message are shown whole in the review and the comment (a name of 1,000,000 characters
    # made both 15 MB), and its spec is read as a serving (one that is none stopped the whole review, exit 2: "HEAD:
    # not a serving", naming no lock; attack round 35).
    if refusal is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", refusal.get("refusal", "X")):
        return "its refusal's name is not a refusal's name (letters, digits and '_', at most 64)"
    if refusal is not None and len(refusal.get("message", "")) > MAX_REFUSAL:
        return f"its refusal's message is {len(refusal['message']):,} characters (at most {MAX_REFUSAL:,} read)"
    # An error is shown whole too, in the review, its floors' line and the comment: one of 1,000,000 characters made
    # each 14 MB (attack round 37).
    if result.get("error") is not None and len(result["error"]) > MAX_REFUSAL:
        return f"its error is {len(result['error']):,} characters (at most {MAX_REFUSAL:,} read)"
    if result.get("checkpoint") is not None and len(result["checkpoint"]) > MAX_NAME:
        return f"its checkpoint is {len(result['checkpoint']):,} characters (at most {MAX_NAME:,} read)"
    if result.get("spec") is not None:
        from passprice.errors import InputError
        from passprice.servings import spec_from_document

        try:
            spec_from_document(result["spec"], "its spec")
        except InputError as e:
            return f"its spec is not a serving ({shown_answer(str(e))})"
    facts = result.get("facts")
    if facts is not None and not all(_provenance(v) for v in facts.values()):
        return "its facts are not a table of provenances"
    if facts is not None and (problem := _paths_problem(facts, "facts")) is not None:
        return problem
    return None if result.get("price") is None else _price_problem(result["price"], "price")


def price_pins(root: Root, code: Code, locks: Sequence[str]) -> dict[str, Any]:
    """Each lock file of ``locks`` (POSIX paths relative to ``root``) priced from its own pinned inputs (its pinned
    facts, embedded serving, pinned checkpoint content; stack) with ``code``, a side's own ``src/passprice`` run in
    its own process (:data:`PINNED_DRIVER`): by path, ``{"price": the --json object, or a refusal's}`` or
    ``{"error": why}`` (the file does not read, its checkpoint content is in no entry, or the code cannot answer:
    an older passprice, a failure, past :data:`TIMEOUT_S`). ``passprice reproduce`` with that code, less the
    comparison, which the caller makes with the running code (:func:`passprice.reproduce.moved`). The running code
    (``code.running``) is :func:`passprice.reproduce.reproduce`'s to use, not this; nothing is priced for it here."""
    if not locks or code.running or code.folder is None:
        return {}
    if code.not_judged is not None:
        return {rel: {"error": f"its own code was not judged: {code.not_judged}"} for rel in locks}
    answered, why = _ask(root, code.folder, PINNED_DRIVER, {"pinned": list(locks)})
    if answered is None:
        return {rel: {"error": f"its own code could not price it: {why}"} for rel in locks}
    # The side's code answers as it likes (its package can write the driver's standard output itself): a result that
    # is no table, a price that is none, an error of a million characters is said in one short line, never obeyed
    # (attack round 34b: {"results": {LOCK: 5}} was a traceback, 'int' object has no attribute 'get').
    out: dict[str, Any] = {}
    for rel in locks:
        answer = answered.get(rel)
        if not isinstance(answer, dict):
            out[rel] = {"error": f"its own code could not price it: it answered {shown_answer(answer)}, not a table"}
        elif answer.get("price") is not None and (problem := _price_problem(answer["price"], "price")) is not None:
            out[rel] = {"error": f"its own code could not price it: it answered {shown_answer(answer)}: {problem}"}
        elif isinstance(answer.get("price"), dict):
            out[rel] = {"price": answer["price"]}
        elif "error" in answer:
            out[rel] = {"error": shown_answer(answer["error"])}
        else:
            out[rel] = {"error": f"its own code could not price it: it answered {shown_answer(answer)}, no price"}
    return out


#: The most characters of what a side's own code answered or wrote that a review line shows (:func:`shown_answer`).
MAX_ANSWER = 300


def shown_answer(value: Any) -> str:
    """What a side's own code answered (a text as it is, anything else as JSON) for one line of a review: at most
    :data:`MAX_ANSWER` characters, cut with its length said (``xxx… (1,000,014 characters)``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= MAX_ANSWER else f"{text[:MAX_ANSWER]}… ({len(text):,} characters)"


#: The side's code folders whose process ran past :data:`TIMEOUT_S` in this process, and why: a review asks a
#: side's code several times (its locks' pins, its locks, its added servings, the unlocked servings), and a HEAD
#: whose code never answered held each ask for the whole limit, three of them 15 minutes (attack round 34b); it is
#: asked once.
_STUCK: dict[str, str] = {}


def _ask(root: Root, folder: Path, driver: str, request: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Run ``driver`` with the side's code at ``folder`` on ``request`` (``root`` and ``src`` added): its results
    (``None`` when it gave none) and why not; a folder whose code ran past :data:`TIMEOUT_S` before is not run
    again (:data:`_STUCK`). While :func:`conversations` is open, the side's process there answers it
    (:class:`_Conversation`), else a process of its own."""
    stuck = _STUCK.get(str(folder))
    if stuck is not None:
        return None, f"{stuck}, asked before: not run again"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    answer: Any = None
    why = ""
    try:
        body = {DRIVER: _LOCKS_BODY, PINNED_DRIVER: _PINNED_BODY}.get(driver)
        if _OPEN and body is not None and _FORKS:
            status, out, err, why = _conversation(root, folder, env).ask(body, request)
        else:
            payload = json.dumps({"root": str(root.path), "src": str(folder), **request})
            status, out, err, why = _run([sys.executable, "-E", "-P", "-B", "-c", driver], payload.encode("utf-8"),
                                         root.path, env)
        if status is None and why.startswith("took longer"):
            _STUCK[str(folder)] = why
        if status == 0:
            answer = json.loads(out.decode("utf-8"))
        if status is not None:
            why = _last_line(err) or f"exit status {status}"
    except (ValueError, OSError, RecursionError) as e:  # RecursionError: a JSON answer nested past the recursion
        why = str(e)
    if isinstance(answer, dict) and "error" in answer:
        why = answer["error"]
    answered = answer.get("results") if isinstance(answer, dict) else None
    return (answered if isinstance(answered, dict) else None), shown_answer(why)


#: The program a side's code answers every ask of one review with (:class:`_Conversation`), run as ``-c SERVE_DRIVER CTL
#: SRC ROOT``: a SUPERVISOR that never imports the side's code (stdlib only) and is the one that waits for each ask's
#: process and says, on the file descriptor ``CTL`` (a pipe to the review that nothing else holds), ``ready`` (or
#: ``alone``), ``child PID``, ``whole`` and ``exit STATUS``, the status as the kernel gave it to the supervisor. It is
#: the subreaper of everything below it (:data:`_REAP`) and forks the ZYGOTE, which closes ``CTL`` and the asks' stream,
#: loads the side's package once (:data:`_LOAD`; ``sys.argv`` is ``["-c"]`` and its standard input ``/dev/null``, as a
#: one-ask driver's) and stops itself (``SIGSTOP``). The supervisor then uses the zygote only if the kernel shows it as
#: one thread (``/proc/PID/task``), with no child, no other process left by the import under the supervisor, in the
#: supervisor's process group (which the review kills at the time limit), and its three pipe ends to the supervisor at
#: their own descriptors and nowhere else (``/proc/PID/fd``); else it kills it and answers every ask from a process of
#: its own (a one-ask driver, :data:`DRIVER`, forked and executed by the supervisor, its output whole: ``alone``). A
#: package whose import patched ``os.waitstatus_to_exitcode`` or kept a copy of the status pipe made the old single
#: process say "exit 0" for a child that exited 7; a thread reaping children failed every ask, one moving the status
#: pipe's descriptor held the review for the time limit; a thread or an at-fork hook carried state from one ask to the
#: next (side58). For each ask (a line ``{"body": …, "request": …}`` on the supervisor's standard input) the zygote
#: forks twice with the C library's ``fork``, not ``os.fork``: no at-fork hook of the import runs, in the zygote or in
#: the ask's process, as none runs in a one-ask process, which forks nothing (and :c:func:`PyOS_AfterFork_Child` is not
#: run: Python 3.13 aborts in it without :c:func:`PyOS_BeforeFork`, which runs the hooks; the zygote forks with one
#: thread, holding no lock but the GIL, which the ask's process holds too). It says the grandchild's pid once the middle
#: process is reaped, when the grandchild is the supervisor's child (the supervisor checks that in ``/proc``: a pid it
#: is not the parent of, or a zygote that ends or says anything else, is killed and the ask answered by a process of its
#: own: ``whole``). The grandchild, in a process group of its own, closes its pipes to the zygote and waits for the
#: supervisor's word that it is the ask's process (a byte on the third pipe, sent once the check passed) before any of
#: the side's code runs in it, then runs that driver's body (:data:`_LOCKS_BODY`, :data:`_PINNED_BODY`) at the top level
#: of the program and ends through the interpreter's normal exit, as a one-ask process did. The supervisor waits for it,
#: kills its process group, reaps it, kills every other process it was left (but the zygote) and says ``exit STATUS``.
#: What a child writes on its standard output is the answer, whole; what the import wrote is part of each answer (the
#: preamble, before ``ready``). The two modules every ask imports (``registry``, ``reproduce``) are imported with the
#: package. ``SIGCHLD`` is the default in the zygote (an import's handler would run there) and as the import left it in
#: each child; the zygote waits for asks with every signal blocked and calls nothing the import made (its
#: ``sys.stdout`` is flushed by each ask's process as it exits, as by a one-ask process), its signal mask the import's
#: again in each ask's process (and its main thread's ``native_id`` its own pid, as in a one-ask process; no fork
#: updates it, ``os.fork``'s neither): a handler of the import's run in the zygote by a signal an ask sent, or a
#: ``sys.stdout`` whose ``flush`` the zygote called before each ask, carried state from one ask to the next (attack72).
#: The zygote is continued (``SIGCONT``) before each ask: an ask that stopped it (``SIGSTOP``) held every later ask of
#: the review to the time limit, and its code was not asked again (attack72).
SERVE_DRIVER = r"""
import json, os, signal, sys
_ctl, _src, _root = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.argv[1:] = []
os.set_inheritable(_ctl, False)
_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
""" + _REAP + r"""_ONE = """ + repr(_HEAD + _LOAD) + r"""
def _tell(_text):
    os.write(_ctl, (_text + "\n").encode("ascii"))
def _kids(_pid):
    _pids = set()
    try:
        _tasks = os.listdir("/proc/%d/task" % _pid)
    except OSError:
        return None
    for _task in _tasks:
        try:
            with open("/proc/%d/task/%s/children" % (_pid, _task)) as _f:
                _pids.update(int(_p) for _p in _f.read().split())
        except (OSError, ValueError):
            return None
    return _pids
def _one_thread(_z):
    try:
        return len(os.listdir("/proc/%d/task" % _z)) == 1 and _kids(_z) == set() and _children() == {_z}
    except OSError:
        return False
def _alone_zygote(_z, _ends):
    try:
        if not _one_thread(_z) or os.getpgid(_z) != os.getpgid(0) or os.getsid(_z) != os.getsid(0):
            return False
        _pipes = {"pipe:[%d]" % os.fstat(_fd).st_ino for _fd in _ends.values()}
        _seen = {}
        for _name in os.listdir("/proc/%d/fd" % _z):
            _link = os.readlink("/proc/%d/fd/%s" % (_z, _name))
            if _link in _pipes:
                _seen[int(_name)] = _link
        return _seen == {_fd: "pipe:[%d]" % os.fstat(_mine).st_ino for _fd, _mine in _ends.items()}
    except (OSError, ValueError):
        return False
def _spawn(_asked):
    _r, _w = os.pipe()
    _pid = os.fork()
    if _pid == 0:
        try:
            os.setsid()
            os.dup2(_r, 0)
            os.execv(sys.executable, [sys.executable, "-E", "-P", "-B", "-c", _ONE + _asked["body"]])
        except BaseException as _e:
            os.write(2, ("cannot start a process of its own: %r\n" % _e).encode("utf-8", "replace"))
        finally:
            os._exit(127)
    os.close(_r)
    return _pid, _w, json.dumps({"root": _root, "src": _src, **_asked["request"]}).encode("utf-8")
def _asked_of_zygote(_z, _line):
    try:
        _data = _line.encode("utf-8")
        while _data:
            _data = _data[os.write(_asks_w, _data):]
        _said = b""
        while not _said.endswith(b"\n"):
            _more = os.read(_said_r, 64)
            if not _more or len(_said) > 64:
                return None
            _said += _more
    except OSError:
        return None
    _word, _, _number = _said.decode("ascii", "replace").strip().partition(" ")
    if _word != "child" or not _number.isdigit() or int(_number) not in (_children() or set()) - {_z}:
        return None
    return int(_number)
def _supervise(_z):
    _r = os.waitid(os.P_PID, _z, os.WEXITED | os.WSTOPPED)
    _usable = _r.si_code == os.CLD_STOPPED and _alone_zygote(_z, {_asks_r: _asks_w, _said_w: _said_r,
                                                                  _go_r: _go_w})
    os.close(_asks_r)
    os.close(_said_w)
    os.close(_go_r)
    if _usable:
        os.kill(_z, signal.SIGCONT)
    else:
        _sweep(set())
    _tell("ready" if _usable else "alone")
    while True:
        _line = _in.readline()
        if not _line:
            _sweep(set())
            os._exit(0)
        _pid = _w = None
        if _usable and _one_thread(_z):
            try:
                os.kill(_z, signal.SIGCONT)
            except OSError:
                pass
            _pid = _asked_of_zygote(_z, _line)
            if _pid is not None:
                try:
                    os.setpgid(_pid, _pid)
                except OSError:
                    pass
                try:
                    os.write(_go_w, b"g")
                except OSError:
                    _pid = None
        if _pid is None:
            if _usable:
                _usable = False
                _sweep(set())
            _pid, _w, _payload = _spawn(json.loads(_line))
            _tell("whole")
        _tell("child %d" % _pid)
        if _w is not None:
            try:
                while _payload:
                    _payload = _payload[os.write(_w, _payload):]
            except OSError:
                pass
            os.close(_w)
        os.waitid(os.P_PID, _pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(_pid, 9)
        except OSError:
            pass
        _status = os.waitstatus_to_exitcode(os.waitpid(_pid, 0)[1])
        _sweep({_z} if _usable else set())
        _tell("exit %d" % _status)
_asks_r, _asks_w = os.pipe()
_said_r, _said_w = os.pipe()
_go_r, _go_w = os.pipe()
for _file in (sys.stdout, sys.stderr):
    _file.flush()
_zygote = os.fork()
if _zygote:
    _supervise(_zygote)
os.close(_ctl)
os.close(_asks_w)
os.close(_said_r)
os.close(_go_w)
_in.close()
import ctypes
_rawfork = ctypes.PyDLL(None).fork
_read, _write, _close, _exit, _pipe, _waitpid, _setpgid, _kill, _getpid, _loads, _signal, _sigmask = (
    os.read, os.write, os.close, os._exit, os.pipe, os.waitpid, os.setpgid, os.kill, os.getpid, json.loads,
    signal.signal, signal.pthread_sigmask)
_block, _setmask, _every = signal.SIG_BLOCK, signal.SIG_SETMASK, signal.valid_signals()
del ctypes, _in, _zygote, _supervise, _asked_of_zygote, _spawn, _alone_zygote, _kids, _tell, _ONE, _one_thread
import importlib.util
from pathlib import Path
request = {"src": _src, "root": _root}
""" + _LOAD + r"""
import importlib
for _name in ("registry", "reproduce"):
    try:
        importlib.import_module("passprice." + _name)
    except Exception:
        pass
_chld = signal.getsignal(signal.SIGCHLD)
_signal(signal.SIGCHLD, signal.SIG_DFL)
_mask = _sigmask(_block, _every)
_kill(_getpid(), signal.SIGSTOP)
_got = b""
while True:
    while b"\n" not in _got:
        _more = _read(_asks_r, 1 << 16)
        if not _more:
            _exit(0)
        _got += _more
    _line, _, _got = _got.partition(b"\n")
    _r, _w = _pipe()
    _pid = _rawfork()
    if _pid == 0:
        _pid = _rawfork()
        if _pid == 0:
            break
        _write(_w, b"%d\n" % _pid)
        _exit(0)
    _close(_w)
    _told = b""
    while _pid > 0 and not _told.endswith(b"\n"):
        _more = _read(_r, 64)
        if not _more:
            break
        _told += _more
    _close(_r)
    if _pid > 0:
        try:
            _waitpid(_pid, 0)
        except ChildProcessError:
            pass
    _write(_said_w, b"child " + (_told.strip() or b"0") + b"\n")
_close(_r)
_close(_w)
_close(_asks_r)
_close(_said_w)
_setpgid(0, 0)
if _read(_go_r, 1) != b"g":
    _exit(70)
_close(_go_r)
_sigmask(_setmask, _mask)
if "threading" in sys.modules:
    try:
        sys.modules["threading"].main_thread()._set_native_id()
    except Exception:
        pass
if _chld is not None:
    _signal(signal.SIGCHLD, _chld)
_asked = _loads(_line)
request = {"root": _root, "src": _src, **_asked["request"]}
for _name in ("_line", "_pid", "_chld", "_got", "_told", "_more", "_r", "_w", "_asks_r",
              "_said_w", "_go_r", "_mask"):
    globals().pop(_name, None)
del _name
exec(_asked.pop("body"))
"""

#: Whether a side's process can answer each ask from a forked child (Linux: ``os.fork``, ``os.waitid``); elsewhere
#: each ask runs in a process of its own (:func:`_run`), as before conversations.
_FORKS = sys.platform == "linux"

#: Whether :func:`conversations` is open (then each side's code answers from one process per root and code folder),
#: and the processes it holds, by (root, code folder).
_OPEN: list[bool] = []
_TALKS: dict[tuple[str, str], _Conversation] = {}


@contextlib.contextmanager
def conversations() -> Iterator[None]:
    """While open, each side's code (a root and its code folder) is started once and answers every ask of the
    review (its locks' pins, its locks, its added and unlocked servings) from a process forked for that ask, so a
    later ask costs two forks and its pricing, not the 0.3-0.6 s of a fresh interpreter importing the side's package
    (issue 16); not on other systems than Linux, where each ask runs in a process of its own, nor where the package's
    import leaves more than one lone thread (:data:`SERVE_DRIVER`: each ask then runs in a process of its own, which
    its supervisor starts). On leaving, every
    such process is stopped with its process group (nothing of a side's code outlives the review); :func:`atexit`
    does the same for one left open. Each ask keeps what a one-ask process promises (:func:`_run`): its time limit,
    its bounds on what it writes, its errors; a process that ends is started afresh for the next ask."""
    _OPEN.append(True)
    try:
        yield
    finally:
        _OPEN.pop()
        if not _OPEN:
            close_conversations()


def close_conversations() -> None:
    """Stop every side's process :func:`conversations` holds (and whatever it started in its group)."""
    while _TALKS:
        _, talk = _TALKS.popitem()
        talk.close()


atexit.register(close_conversations)


def _conversation(root: Root, folder: Path, env: Mapping[str, str]) -> _Conversation:
    """The process answering asks for ``root`` with the code at ``folder``: the one started before, while it runs,
    else a new one. Raises :class:`OSError` when it cannot be started."""
    key = (str(root.path), str(folder))
    talk = _TALKS.get(key)
    if talk is None or talk.proc.poll() is not None:
        if talk is not None:
            talk.close()
        talk = _TALKS[key] = _Conversation.start(root, folder, env)
    return talk


class _Conversation:
    """One side's code answering asks over its pipes (:data:`SERVE_DRIVER`), each ask in a process of its own:
    ``proc`` (the supervisor), ``ctl`` (the read end of the pipe it says ``ready`` or ``alone``, ``whole``, ``child
    PID`` and ``exit STATUS`` on), ``child`` (the pid, and process group, of the process answering now), the bytes
    written before it was ready (``preamble``: the package's import, part of every ask's answer as it was of each
    one-ask process's; none when ``alone``, and none for an ask answered ``whole``) and the standard error written by
    then (``pre_err``)."""

    def __init__(self, proc: subprocess.Popen[bytes], ctl: int) -> None:
        self.proc = proc
        self.ctl = ctl
        self.ready = False
        self.child: int | None = None
        self.preamble = b""
        self.pre_err = b""
        self.said = bytearray()

    @classmethod
    def start(cls, root: Root, folder: Path, env: Mapping[str, str]) -> _Conversation:
        """Start the side's code at ``folder`` in ``root`` (its own session and process group, as :func:`_run`).
        Raises :class:`OSError` when it cannot be started."""
        ctl, told = os.pipe()
        try:
            proc = subprocess.Popen([sys.executable, "-E", "-P", "-B", "-c", SERVE_DRIVER, str(told), str(folder),
                                     str(root.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=root.path, env=dict(env), pass_fds=(told,),
                                    start_new_session=True)
        except BaseException:
            os.close(ctl)
            raise
        finally:
            os.close(told)
        return cls(proc, ctl)

    def ask(self, body: str, request: Mapping[str, Any]) -> tuple[int | None, bytes, bytes, str]:
        """Ask ``body`` of ``request``: what :func:`_run` returns of a one-ask process (the exit status of the child
        that answered; its output, the package's import's before it; its standard error, the import's included),
        within :data:`TIMEOUT_S` and :data:`MAX_STDOUT`. A process that ended, ran past the limit or wrote too much
        is stopped (with its group and its child's) and dropped."""
        import selectors
        import time

        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        payload = (json.dumps({"body": body, "request": dict(request)}) + "\n").encode("utf-8")
        out, err = bytearray(), bytearray()
        whole = False  # answered by a process of its own: no preamble (the supervisor's ``whole``)
        why = ""
        status: int | None = None
        deadline = time.monotonic() + TIMEOUT_S
        sent = 0
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
        with selectors.DefaultSelector() as pipes:
            if self.ready:
                pipes.register(proc.stdin, selectors.EVENT_WRITE)
            pipes.register(proc.stdout, selectors.EVENT_READ)
            pipes.register(proc.stderr, selectors.EVENT_READ)
            pipes.register(self.ctl, selectors.EVENT_READ)
            ended = 0  # rounds since the process was seen ended
            while not why and status is None and pipes.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    why = f"took longer than {TIMEOUT_S} s"
                    break
                if proc.poll() is not None:  # it ended: what it started and left holding the pipes goes with it
                    self._stop()
                    ended += 1
                ready = pipes.select(0 if ended else min(left, _POLL_S))
                if ended and (not ready or ended > _AFTER_END):
                    break  # what it wrote is read; a process of another session holding its pipes is not waited for
                for key, _ in ready:
                    if key.fileobj is proc.stdin:
                        try:
                            sent += os.write(key.fd, payload[sent:sent + (1 << 16)])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # it reads no more: what it answers says why
                            sent = len(payload)
                        if sent >= len(payload):
                            pipes.unregister(proc.stdin)
                        continue
                    if key.fileobj is not self.ctl:
                        took = _take(key.fd, out) if key.fileobj is proc.stdout else _take(key.fd, err, MAX_STDERR)
                        if took == 0:
                            pipes.unregister(key.fileobj)
                        continue
                    data = os.read(self.ctl, 1 << 10)
                    if not data:
                        pipes.unregister(self.ctl)
                    self.said += data
                    while b"\n" in self.said and status is None:
                        line, _, rest = bytes(self.said).partition(b"\n")
                        self.said[:] = rest
                        word, _, number = line.decode("ascii", "replace").partition(" ")
                        # What the child wrote before it ended is in the pipes by now: read it all.
                        while _take(proc.stdout.fileno(), out) and len(out) <= MAX_STDOUT:
                            pass
                        while _take(proc.stderr.fileno(), err, MAX_STDERR):
                            pass
                        if word in ("ready", "alone") and not self.ready:
                            # "alone": the zygote was not used, and what it wrote is no answer's (each ask's own
                            # process writes its import's output itself).
                            kept = word == "ready"
                            self.ready, self.preamble, self.pre_err = True, bytes(out) * kept, bytes(err) * kept
                            out.clear()
                            err.clear()
                            pipes.register(proc.stdin, selectors.EVENT_WRITE)
                        elif word == "whole":
                            whole = True
                        elif word == "child" and number.isdigit():
                            self.child = int(number)
                        elif word == "exit" and number.lstrip("-").isdigit():
                            status, self.child = int(number), None
                    if len(self.preamble) * (not whole) + len(out) > MAX_STDOUT:
                        why = f"wrote more than {MAX_STDOUT:,} bytes of answer"
                if len(self.preamble) * (not whole) + len(out) > MAX_STDOUT:
                    why = f"wrote more than {MAX_STDOUT:,} bytes of answer"
            if ended and pipes.get_map():
                _stop_holders([proc.stdout.fileno(), proc.stderr.fileno(), self.ctl])
            if status is None and not why:
                try:
                    proc.wait(max(deadline - time.monotonic(), 0))
                except subprocess.TimeoutExpired:
                    why = f"took longer than {TIMEOUT_S} s"
        said = (b"" if whole else self.preamble) + bytes(out)
        errs = bytes(err) if whole else (self.pre_err + bytes(err))[-MAX_STDERR:]
        if status is not None and not why:
            if sent < len(payload):  # it answered without reading the whole ask: no later ask could be read
                self.close()
            return status, said, errs, ""
        self.close()
        return (None if why else proc.returncode), said, errs, why

    def _stop(self) -> None:
        """Kill the child answering now, with its process group, and the process's own group."""
        if self.child is not None:
            _stop_group(self.child)
            self.child = None
        _stop_group(self.proc.pid)

    def close(self) -> None:
        """Stop the process, its group and its child's; close its pipes."""
        proc = self.proc
        if self.child is not None:  # the child first, while it is the process's unreaped child (its pid not reused)
            _stop_group(self.child)
            self.child = None
        if self.ready and proc.poll() is None and proc.stdin is not None:
            # The end of its asks: it kills what its asks left that made a session of its own (it is their
            # subreaper) and exits; one that does not within _CLOSE_S is killed with its group. One an ask stopped
            # (SIGSTOP to its parent) is continued first: it waited the whole _CLOSE_S, then was killed, leaving
            # those processes to init (attack72).
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGCONT)
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_CLOSE_S)
        self._stop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        with contextlib.suppress(OSError):
            os.close(self.ctl)


def _take(fd: int, into: bytearray, last: int | None = None) -> int | None:
    """Read what the pipe ``fd`` (non-blocking) holds now, up to 64 KiB, onto ``into``, keeping only its ``last``
    bytes when that is given: how many bytes were read (0 at the pipe's end; ``None`` when it holds none now)."""
    try:
        data = os.read(fd, 1 << 16)
    except BlockingIOError:
        return None
    into += data
    if last is not None:
        del into[:-last]
    return len(data)


#: The most bytes of a side's code's standard output kept (its answer; the registered locks' is some 40 KB): past
#: them the process is stopped and it has no answer. Of its standard error the last :data:`MAX_STDERR` are kept (for
#: its last line). Both were kept whole: HEAD's code writing 400 MB to its standard error before it failed took the
#: review to 1.7 GB (attack round 34b), and it can write gigabytes a second.
MAX_STDOUT = 32 << 20
MAX_STDERR = 64 << 10


def _run(
    args: Sequence[str], payload: bytes, cwd: Path, env: Mapping[str, str]
) -> tuple[int | None, bytes, bytes, str]:
    """Run ``args`` in ``cwd`` with ``env``, ``payload`` on its standard input, for at most :data:`TIMEOUT_S`
    seconds: its exit status, standard output (at most :data:`MAX_STDOUT` bytes) and the end of its standard error
    (:data:`MAX_STDERR` bytes), and why there is no status (``None``: it took too long or wrote too much, and was
    killed). Raises :class:`OSError` when it cannot be started."""
    import selectors
    import time

    # Its own session (and so its own process group): whatever it starts is stopped with it, below (a side's code
    # that forked a child to run on after it answered left that child running past the review: session 18).
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                            env=dict(env), start_new_session=os.name == "posix")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    why = ""
    deadline = time.monotonic() + TIMEOUT_S
    sent = 0
    with selectors.DefaultSelector() as pipes:
        try:
            os.set_blocking(proc.stdin.fileno(), False)
            pipes.register(proc.stdin, selectors.EVENT_WRITE)
            pipes.register(proc.stdout, selectors.EVENT_READ)
            pipes.register(proc.stderr, selectors.EVENT_READ)
            ended = 0  # rounds since the process was seen ended
            while pipes.get_map() and not why:
                left = deadline - time.monotonic()
                if left <= 0:
                    why = f"took longer than {TIMEOUT_S} s"
                    break
                if proc.poll() is not None:  # it ended: what it started and left holding the pipes goes with it
                    _stop_group(proc.pid)
                    ended += 1
                ready = pipes.select(0 if ended else min(left, _POLL_S))
                if ended and (not ready or ended > _AFTER_END):
                    break  # what it wrote is read; a process of another session holding its pipes is not waited for
                for key, _ in ready:
                    pipe = key.fileobj
                    if pipe is proc.stdin:
                        try:
                            sent += os.write(proc.stdin.fileno(), payload[sent:sent + (1 << 16)])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # it reads no more: what it answers says why
                            sent = len(payload)
                        if sent >= len(payload):
                            pipes.unregister(proc.stdin)
                            proc.stdin.close()
                        continue
                    data = os.read(key.fd, 1 << 16)
                    if not data:
                        pipes.unregister(pipe)
                        continue
                    if pipe is proc.stdout:
                        out += data
                        if len(out) > MAX_STDOUT:
                            why = f"wrote more than {MAX_STDOUT:,} bytes of answer"
                            break
                    else:
                        err += data
                        del err[:-MAX_STDERR]
            if ended and pipes.get_map():
                _stop_holders([proc.stdout.fileno(), proc.stderr.fileno()])
            if not why:
                try:
                    proc.wait(max(deadline - time.monotonic(), 0))
                except subprocess.TimeoutExpired:
                    why = f"took longer than {TIMEOUT_S} s"
        finally:
            if proc.poll() is None:
                proc.kill()
            _stop_group(proc.pid)
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                pipe.close()
    return (None if why else proc.returncode), bytes(out), bytes(err), why


#: How often (seconds) :func:`_run` looks whether the side's code has ended while its pipes are still open.
_POLL_S = 0.05
#: The most rounds of reading (each up to 64 KiB a pipe) :func:`_run` and a conversation's ask give the pipes of a
#: side's process once it has ended, what it wrote being in them by then; then the pipes are left, whoever still
#: holds them (a process of its own session that the side's code started, no longer in its group, and whose
#: subreaper, the side's process, the code killed: the ask waited on it up to :data:`TIMEOUT_S`, a 60 s daemon 60 s;
#: attack71), and :func:`_stop_holders` kills it.
_AFTER_END = 1024
#: How long (seconds) a side's process is given to end by itself once its asks' pipe is closed, killing what its
#: asks left behind, before it is killed with its group. Our own driver ends at once (it kills and reaps what is
#: left, then exits); the wait returns when it has, and runs out only for a side's code that keeps it from ending.
#: A process killed first leaves what made a session of its own running (its subreaper gone, ``init`` adopts it):
#: 1 s was short of a driver not run for a second on a busy machine, and the daemon outlived the review.
_CLOSE_S = 10.0


def _stop_group(pgid: int) -> None:
    """Kill (SIGKILL) every process left in the process group ``pgid`` that :func:`_run` started its side's code in,
    so nothing it started runs on past the review. A group already empty, or not ours, is left alone. Only on POSIX
    (elsewhere the side's code is not started in a group of its own). A process that made a session of its own
    (``setsid``) has left the group: the side's process, its subreaper, kills it (:data:`_REAP`; docs/DESIGN.md)."""
    if os.name != "posix":
        return
    import contextlib
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _stop_holders(fds: Sequence[int]) -> None:
    """Kill (SIGKILL) every other process that holds one of the pipes this process reads on ``fds`` (the side's
    standard output and error, a conversation's ``CTL``), found by the pipes' inodes in ``/proc/PID/fd`` (Linux;
    elsewhere nothing): once the side's process has ended, only what its code started holds them, a process of a
    session of its own whose subreaper, the side's process, the code killed (``os.kill(os.getppid(), 9)`` after a
    fork-``setsid``-fork daemon: the daemon ran on after the review, holding the answer's pipe; attack71). One that
    closed them is not found here. Processes of other users, and pipes gone, are passed over. Raises nothing."""
    import signal

    if not sys.platform.startswith("linux"):
        return
    wanted = set()
    for fd in fds:
        with contextlib.suppress(OSError):
            wanted.add(f"pipe:[{os.fstat(fd).st_ino}]")
    me = os.getpid()
    try:
        pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != me]
    except OSError:
        return
    for pid in pids:
        try:
            held = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd_name in held:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd_name}")
            except OSError:
                continue
            if link in wanted:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                break


def _last_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""
