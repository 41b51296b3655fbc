"""``passprice check``'s look at the serving stacks' fitted facts, with each stack's findings kept across processes.

Re-running a stack's fit (:func:`passprice.calibrate.verify_stack`: every run priced at six probes, then a
non-negative least squares per ``terms.serial`` grid point) was about a sixth of a warm ``check`` and of a warm
``diff`` (round 29, docs/PERFORMANCE.md), the same work every run while nothing it reads had changed, and it is the
only reason those commands imported NumPy. So the findings are kept in the cache of built objects
(:func:`passprice.cache.kept_object`) under a key made of the bytes of everything the fit is a function of
(:func:`fit_inputs`), and a hit neither prices a run nor imports NumPy. This module imports no NumPy; the fit is
imported on a miss.

What the findings are a function of (:func:`passprice.calibrate.verify_stack` and what it calls): the stack's file,
every measured run (``registry/measurements/``, all files: a run may move to another stack or disappear), the cards the
runs name (``facts/cards/NAME.toml``, and the folder's listing, which a "not found" names), every checkpoint entry
(``registry/checkpoints/``: a routing record's scope names checkpoints), the routing records and drafting methods
(``facts/routing/``, ``facts/drafts/``), the other stacks (``facts/stacks/``), the source records every fact cites
(``sources/``), the schemas (``schema/``), passprice's code and the libraries that decide an entry (in every cache key:
:func:`passprice.cache.key`), the pricing model's version (as a kept pass shape's), NumPy's installed files (the least
squares), every bound the environment sets (:data:`passprice.settings.VARIABLES`: ``PASSPRICE_MAX_FIT_RUNS``, and
``PASSPRICE_MAX_FILE_BYTES``, past which a card does not read) and the working folder (a finding's text may name a file
as a path). Nothing is kept (the fit re-run, as before) when a run names a card, checkpoint or routing record by a path
rather than a registry name (a path inside the root passes the measurement file's check, and may lead to a folder no key
lists), when a named card, entry or record is not there, when an entry of those folders is not a regular file or folder
(a FIFO, a dangling link), or when a finding's text names the registry's folder (a path that differs between a side's
temporary copy and the next).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from passprice.derivations import Finding
from passprice.errors import InputError
from passprice.measurements import Run, load_runs
from passprice.registry import Root
from passprice.settings import VARIABLES
from passprice.stacks import Stack, load_stack

#: The method a fitted fact's derivation names (:data:`passprice.derivations.METHODS`).
METHOD = "nnls-relative-pass-time"

#: The kind (and layout version) of a kept stack's findings in the cache of built objects.
KIND = "stack-findings-1"

#: A registry name a run gives for its card or checkpoint that :func:`fit_inputs` keys by the file it names (no
#: folder, no suffix: a path is resolved against the working folder, which no key here follows).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", re.ASCII)


#: How deep :func:`fit_inputs` follows folders inside a registry folder (links followed, so a loop ends here).
_MAX_DEPTH = 4


class _NotKeyable(Exception):
    """An input :func:`fit_inputs` cannot key soundly (a FIFO, a path-named card, a file that does not read)."""


def _add_file(parts: list[bytes], label: str, path: Path) -> None:
    """Append ``label`` and the bytes of the regular file ``path``; raises :class:`_NotKeyable` otherwise."""
    from passprice.files import read_regular
    from passprice.schema import kind_cap

    try:
        # At most what any registry file may hold (a checkpoint entry's cap, the largest kind's): a larger one is
        # refused where it is read, and was read whole here first (a 50 MB entry: check's peak 169 MiB, round 58).
        data = read_regular(path, kind_cap("checkpoint"))
    except InputError:
        raise _NotKeyable(label) from None
    parts.append(f"file\0{label}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
    parts.append(data)


def _add_folder(parts: list[bytes], label: str, folder: Path, depth: int = 0, toml: bool = False) -> None:
    """Append every entry of ``folder`` (sorted by name, folders followed to :data:`_MAX_DEPTH`) with its bytes, or
    that the folder is absent. ``toml``: only its ``*.toml`` entries, none of its folders followed (what the
    registry's loaders read of a registry folder: :func:`_shipped_key`). Raises :class:`_NotKeyable` for an entry
    that is neither a regular file nor a folder, or a folder that cannot be listed."""
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        parts.append(f"absent\0{label}\0".encode("utf-8", "surrogateescape"))
        return
    except OSError:
        raise _NotKeyable(label) from None
    if not stat.S_ISDIR(info.st_mode) or depth > _MAX_DEPTH:
        raise _NotKeyable(label)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        raise _NotKeyable(label) from None
    if toml:
        names = [n for n in names if n.endswith(".toml")]
    parts.append(f"folder\0{label}\0{len(names)}\0".encode("utf-8", "surrogateescape"))
    for name in names:
        path = folder / name
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise _NotKeyable(f"{label}/{name}") from None
        if stat.S_ISDIR(mode) and not toml:
            _add_folder(parts, f"{label}/{name}", path, depth + 1)
        elif stat.S_ISREG(mode):
            _add_file(parts, f"{label}/{name}", path)
        else:
            raise _NotKeyable(f"{label}/{name}")


def _numpy_stamp() -> str:
    """NumPy's installed files as :func:`passprice.cache._libraries_stamp` stamps a library (found, not imported)."""
    from passprice.cache import _libraries_stamp

    return _libraries_stamp(("numpy",))


def _registry_part(root: Root, whole: bool = True) -> bytes | None:
    """The part of :func:`fit_inputs` every stack of ``root`` shares, ``None`` when one cannot be keyed soundly.
    ``whole`` false (:func:`_shipped_key`): the BLAKE2b digest (32 bytes, RFC 7693) of the registry folders'
    ``*.toml`` files alone (a review's side holds the registry's files, the others written empty; its private copy
    no excerpts), each entry named and given whole, with the package's schemas, not NumPy's installed files (its
    distribution is named beside the key instead, :func:`_shipped_solver`). ``whole`` (the cache's key): the digest
    of that part's, NumPy's stamp and every other entry of those folders (their other files and folders, named and
    given whole; each ``*.toml`` file named, its bytes bound by the first digest), so every byte of the folders moves
    it. Both are made from one walk of the folders, each file read and hashed once: before, the two keys each read
    and hashed the shipped registry's 1.6 MB (about 40 M instructions each, twice for HEAD and twice for the private
    copy in a cold one-fact review). Inside a snapshot, made once for all stacks (:func:`passprice.snapshot.made`:
    the registry's files are read once a snapshot), so those bytes are hashed once a snapshot, not once in each
    stack's key (tests/test_cold135.py)."""
    from passprice import snapshot

    parts = snapshot.made(("stack-fit-inputs", os.fspath(root.path)), lambda: _RegistryParts(root))
    return parts.whole() if whole else parts.toml


def _registry_folders(root: Root) -> tuple[tuple[str, Path], ...]:
    """The registry folders :func:`_registry_part` keys, by label, in its order."""
    return (("stacks", root.stacks), ("measurements", root.measurements), ("checkpoints", root.checkpoints),
            ("routing", root.routing), ("drafts", root.drafts), ("sources", root.sources), ("schema", root.schema))


class _RegistryParts:
    """:func:`_registry_part`'s two keys of one root from one walk: ``toml`` (``whole`` false) made at once, the whole
    one when first asked (:meth:`whole`: NumPy's stamp looked up only then)."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.toml: bytes | None = None
        self.rest: list[bytes] | None = None  # the whole key's own parts; None: not keyable from the first digest
        self._whole: list[bytes | None] = []
        self._walk()

    def _walk(self) -> None:
        from passprice.digests import blake2b

        toml: list[bytes] = [f"{KIND}\0\0".encode("utf-8", "surrogateescape")]
        rest: list[bytes] = []
        toml_ok = rest_ok = True
        try:
            for label, folder in _registry_folders(self.root):
                if label == "schema":  # keyed whole in both: in the first digest, named in the second
                    _add_folder(toml, label, folder)
                    rest.append(f"covered-folder\0{label}\0".encode("utf-8", "surrogateescape"))
                    continue
                try:
                    info = os.stat(folder)
                except FileNotFoundError:
                    for into in (toml, rest):
                        into.append(f"absent\0{label}\0".encode("utf-8", "surrogateescape"))
                    continue
                except OSError:
                    raise _NotKeyable(label) from None
                if not stat.S_ISDIR(info.st_mode):
                    raise _NotKeyable(label)
                try:
                    names = sorted(os.listdir(folder))
                except OSError:
                    raise _NotKeyable(label) from None
                tomls = [n for n in names if n.endswith(".toml")]
                toml.append(f"folder\0{label}\0{len(tomls)}\0".encode("utf-8", "surrogateescape"))
                rest.append(f"folder\0{label}\0{len(names)}\0".encode("utf-8", "surrogateescape"))
                for name in names:
                    path, is_toml = folder / name, name.endswith(".toml")
                    try:
                        mode = os.stat(path).st_mode
                    except OSError:
                        toml_ok, rest_ok = toml_ok and not is_toml, False
                        continue
                    if stat.S_ISREG(mode) and is_toml:
                        _add_file(toml, f"{label}/{name}", path)  # unreadable: neither keyable (raises)
                        rest.append(f"covered\0{label}/{name}\0".encode("utf-8", "surrogateescape"))
                    elif is_toml:  # a folder or a FIFO named *.toml: not the first; the second as it was keyed
                        toml_ok = False
                    elif not rest_ok:
                        continue
                    elif stat.S_ISDIR(mode):
                        try:
                            _add_folder(rest, f"{label}/{name}", path, 1)
                        except _NotKeyable:
                            rest_ok = False
                    elif stat.S_ISREG(mode):
                        try:
                            _add_file(rest, f"{label}/{name}", path)
                        except _NotKeyable:
                            rest_ok = False
                    else:
                        rest_ok = False
            listed = sorted(os.listdir(self.root.cards))
        except (_NotKeyable, OSError):
            return
        cards = "cards\0{}\0".format("\0".join(listed)).encode("utf-8", "surrogateescape")
        if not toml_ok:  # the whole key as one walk of everything makes it (None where that cannot be keyed)
            self.rest = None
            self._whole = [_whole_walk(self.root)]
            return
        toml.append(cards)
        digest = blake2b()
        for part in toml:
            digest.update(part)
        self.toml = b"registry-digest\0" + digest.digest()
        if rest_ok:
            rest.append(cards)
            self.rest = rest
        else:
            self._whole = [None]

    def whole(self) -> bytes | None:
        """The whole key (made once)."""
        if not self._whole:
            self._whole = [None if self.rest is None or self.toml is None else _whole_of(self.toml, self.rest)]
        return self._whole[0]


def _whole_of(toml: bytes, rest: list[bytes]) -> bytes:
    """The whole key of :class:`_RegistryParts`: the digest of its header (NumPy's stamp), the first key and the
    other parts."""
    from passprice.digests import blake2b

    digest = blake2b(f"{KIND}\0whole\0{_numpy_stamp()}\0".encode("utf-8", "surrogateescape"))
    digest.update(toml)
    for part in rest:
        digest.update(part)
    return b"registry-digest\0" + digest.digest()


def _whole_walk(root: Root) -> bytes | None:
    """The whole key where the ``*.toml`` files alone cannot be keyed (a folder or FIFO named ``*.toml``): every entry
    of the folders named and given whole, in one digest of its own header, or ``None``."""
    from passprice.digests import blake2b

    parts: list[bytes] = [f"{KIND}\0all\0{_numpy_stamp()}\0".encode("utf-8", "surrogateescape")]
    try:
        for label, folder in _registry_folders(root):
            _add_folder(parts, label, folder)
        listed = sorted(os.listdir(root.cards))
    except (_NotKeyable, OSError):
        return None
    parts.append("cards\0{}\0".format("\0".join(listed)).encode("utf-8", "surrogateescape"))
    digest = blake2b()
    for part in parts:
        digest.update(part)
    return b"registry-digest\0" + digest.digest()


def fit_inputs(root: Root, stack: Stack, runs: Sequence[Run], where: bool = True) -> bytes | None:
    """The bytes :func:`stack_findings` keys stack ``stack``'s findings by: every input the re-fit of ``stack`` on
    ``runs`` (the registry's measured runs) reads, each named and given whole (the module's docstring lists them;
    the folders every stack shares as the digest of those bytes, :func:`_registry_part`),
    or ``None`` when one cannot be keyed soundly (a run naming a card, checkpoint or routing record by a path, or one
    not there; an
    entry of those folders that is neither a regular file nor a folder; a file that does not read). ``where``
    false: without the working folder (:func:`shipped_stack`'s key, of a stack whose fit finds nothing, so no
    finding's text names a path), the registry folders as :func:`_registry_part` keys them when not ``whole``.
    Raises nothing."""
    cards = sorted({r.card for r in runs})
    checkpoints = sorted({r.checkpoint for r in runs})
    # A run's routing record too: a path inside the root passes the measurement file's check
    # (passprice.registry.require_inside), and `routing = "/root/extra/r.toml"`, a file of no folder keyed here, was
    # read by the re-fit but not keyed: with it edited, a warm check said "0 problems" (exit 0), cold 2 (slip 49).
    routings = sorted({r.routing for r in runs if r.routing is not None})
    if not all(_PLAIN_NAME.fullmatch(n) and not n.endswith(".toml") for n in (*cards, *checkpoints, *routings)):
        return None
    if not all(os.path.isfile(root.routing / f"{n}.toml") for n in routings):
        return None  # a record not there: its "not found" lists the folder, which is keyed whole
    shared = _registry_part(root, where)
    if shared is None:
        return None
    # Every bound the environment sets (passprice.settings.VARIABLES), not the fit's run cap alone: a card or
    # routing record past PASSPRICE_MAX_FILE_BYTES makes the fit "broken", and a warm check kept the finding of a
    # run without the bound (slip 49: "2 problems" warm, "3 problems" cold and without the cache).
    bounds = "\0".join(f"{name}={os.environ.get(name)!r}" for name, _ in VARIABLES)
    # The pricing model's version, as every pass shape kept is keyed (passprice.serving._stored_shape): the fit
    # prices every run. The code stamp keys the modules' files only, so a version set in process (a test standing
    # in for new pricing code, with the code's constants patched) was served the findings of the other pricing:
    # tests/test_locks.py's moved-price test failed alone ("re-fitted … 0.04283, not 0.04165") and passed after a
    # test that had kept the right ones (left39).
    import passprice

    parts: list[bytes] = [
        f"{stack.name}\0{os.getcwd() if where else ''}\0{bounds}\0{passprice.PRICING_MODEL_VERSION}\0".encode(
            "utf-8", "surrogateescape"),
        shared,
    ]
    try:
        for name in cards:
            _add_file(parts, f"cards/{name}.toml", root.cards / f"{name}.toml")
    except _NotKeyable:
        return None
    for name in checkpoints:  # named by a run, so there (an entry): a header found another way is not keyed
        if not os.path.isfile(root.checkpoints / f"{name}.toml"):
            return None
    return b"".join(parts)


def _findings(root: Root, stack: Stack, runs: Sequence[Run]) -> tuple[Finding, ...]:
    """:func:`passprice.calibrate.verify_stack`'s findings, kept by :func:`fit_inputs` across processes."""
    from passprice import cache

    inputs = fit_inputs(root, stack, runs) if cache.enabled() else None
    # the inputs' key made once for the lookup and the store (the shared folders' 1.9 MB come as their digest,
    # hashed once a snapshot by _registry_part: tests/test_cold135.py)
    entry_key = cache.object_key(KIND, inputs) if inputs is not None else None
    if inputs is not None:
        kept = cache.kept_object(KIND, inputs, tuple, entry_key)
        if kept is not None and all(isinstance(f, Finding) for f in kept):
            return kept
    # The shipped table with the cache bypassed too (``--no-cache``): it is the package's own bytes, checked here
    # against the digest of every input the fit reads, never the cache folder's (round cheapcheck174). With the cache
    # on, only where the inputs could be keyed, as before.
    if (inputs is not None or not cache.enabled()) and shipped_stack(root, stack, runs):
        return ()
    from passprice.calibrate import verify_stack

    found = tuple(verify_stack(root, stack, runs))
    where = {os.path.abspath(root.path), os.path.realpath(root.path)}
    if inputs is not None and not any(w in f.message for f in found for w in where):
        cache.keep_object(KIND, inputs, found, entry_key)
    return found


#: The stacks of the registry passprice ships whose fit finds nothing and whose re-fit writes their file as it is
#: (:func:`shipped_stack`), beside the modules.
SHIPPED_STACKS = Path(__file__).with_name("shipped_stacks.json")

#: :data:`SHIPPED_STACKS` as read once a process (:func:`_shipped_table`): (pricing-model digest, NumPy's
#: distribution, architecture) and each stack's key by name; empty where it does not read.
_SHIPPED: list[tuple[tuple[str, str, str], dict[str, str]]] = []


def _shipped_solver() -> tuple[str, str, str] | None:
    """What a shipped stack's key holds besides its inputs' bytes: the running package's pricing-model digest
    (:func:`passprice.pins.pricing_model_digest`: the runs' prices, the fit, the checks of :func:`verify_stack`
    are pricing modules), NumPy's installed distribution (its folder's name, ``numpy-2.4.6.dist-info``: the least
    squares) and the machine's architecture; ``None`` when the digest cannot be made. Raises nothing."""
    import platform

    from passprice import pins

    try:
        digest = pins.pricing_model_digest()
    except (InputError, SyntaxError, OSError, RecursionError, MemoryError):
        return None
    return digest, _numpy_stamp().rsplit(":", 1)[-1], platform.machine()


def _shipped_table() -> tuple[tuple[str, str, str], dict[str, str]]:
    """:data:`SHIPPED_STACKS` read once a process: (its solver, its stacks' keys by name); ``(("", "", ""), {})``
    when it is missing or does not read. Raises nothing."""
    if not _SHIPPED:
        import json

        try:
            data = json.loads(SHIPPED_STACKS.read_bytes())
            solver = (str(data["pricing_model"]), str(data["numpy"]), str(data["machine"]))
            keys = {str(k): str(v) for k, v in data["stacks"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            solver, keys = ("", "", ""), {}
        _SHIPPED.append((solver, keys))
    return _SHIPPED[0]


def _fitted_runs(stack: Stack, runs: Sequence[Run]) -> list[Run]:
    """The runs of ``runs`` whose card, checkpoint and routing record ``stack``'s fit and re-fit read: those its
    run-derived facts name (:func:`passprice.calibrate.verify_stack` prices them) and those of the stack
    (:func:`passprice.calibrate.calibrate` fits them). Which runs these are follows from the measurement files and the
    stack's file, both keyed whole."""
    from passprice.derivations import RunDerivation

    named: set[str] = set()
    facts = list(stack.facts.values())
    for own in stack.cards.values():
        facts += list(own.values())
    for fact in facts:
        if isinstance(fact.derivation, RunDerivation):
            named.update(r.run for r in fact.derivation.runs)
    return [r for r in runs if r.stack == stack.name or r.id in named]


def _shipped_key(root: Root, stack: Stack, runs: Sequence[Run]) -> str | None:
    """The hex BLAKE2b (RFC 7693) of :func:`fit_inputs` of ``stack`` without the working folder, the cards keyed
    those of the runs its fit reads (:func:`_fitted_runs`: a card edit no run of the stack's fit prices, the
    one-fact review's, leaves the key as it was), or ``None`` where they cannot be keyed soundly."""
    from passprice.digests import blake2b

    inputs = fit_inputs(root, stack, _fitted_runs(stack, runs), where=False)
    return None if inputs is None else blake2b(inputs).hexdigest()


def shipped_stack(root: Root, stack: Stack, runs: Sequence[Run]) -> bool:
    """Whether ``stack`` (read from ``root``, on ``runs``) is a stack of the registry passprice ships as it was
    shipped (:data:`SHIPPED_STACKS`): every input its fit reads (:func:`fit_inputs`, less the working folder) byte
    for byte the shipped registry's, under the same pricing code, NumPy and architecture (:func:`_shipped_solver`).
    Such a stack's fit was re-run when the table was made (``docs/make.py``'s ``shipped``): verify_stack found
    nothing, and :func:`passprice.calibrate.calibrate` wrote its file as it stands. A cold one-fact review
    re-ran both stacks' fits, and re-fitted one again in its private copy, every run priced and NumPy imported
    (about 0.4 s of its 1.4 s), though no input of theirs had moved (docs/PERFORMANCE.md). Answered with the cache
    bypassed too (``--no-cache``): the table is a file of the package, not of the cache folder, and what it answers
    is a function of the bytes its key is the digest of, checked here each time, so a user's edited input (its key
    another) is fitted afresh as before, and only the shipped registry's stacks as shipped are not; a ``--no-cache
    check`` of a checkout at the token cap spent 0.5 s of its 1.9 s on those two fits and NumPy's import
    (docs/PERFORMANCE.md, round cheapcheck174). Raises nothing."""
    solver, keys = _shipped_table()
    want = keys.get(stack.name)
    if want is None or _shipped_key(root, stack, runs) != want:
        return False
    return _shipped_solver() == solver


def stack_findings(root: Root, stack: Stack, runs: Sequence[Run]) -> tuple[Finding, ...]:
    """:func:`passprice.calibrate.verify_stack` of ``stack`` (read from ``root``) on ``runs`` (every measured run of
    ``root``), made once a snapshot (:func:`passprice.snapshot.made`, keyed by the root and the stack's name: one
    snapshot reads each file once, so the stack and the runs are the same objects' contents for every caller), and
    kept across processes by the bytes of everything it reads (:func:`fit_inputs`; a hit runs no fit and imports no
    NumPy). The review re-ran each fit twice, once for ``check``'s findings on HEAD and once for the stale-stack
    marks on the locks naming it: 50 stacks of 111 runs (leftovers round 21). Raises nothing a fit can raise (those
    are findings)."""
    from passprice import snapshot

    return snapshot.made(("verify-stack", str(root.path), stack.name), lambda: _findings(root, stack, runs))


def fit_ids(stack: Stack) -> frozenset[str]:
    """The ids of the measured runs ``stack``'s fitted facts name (its calibration's runs); empty for a stack with no
    fitted fact. Raises nothing."""
    from passprice.derivations import RunDerivation

    named: set[str] = set()
    for fact in stack.facts.values():
        if isinstance(fact.derivation, RunDerivation) and fact.derivation.method == METHOD:
            named.update(fact.derivation.ids())
    return frozenset(named)


def unfitted_runs(stack: Stack, runs: Sequence[Run]) -> tuple[str, ...]:
    """The ids of ``stack``'s measured runs (of ``runs``) that no fitted fact of the stack names: runs added since
    it was calibrated (:func:`fit_ids`)."""
    named = fit_ids(stack)
    if not named:
        return ()
    return tuple(r.id for r in runs if r.stack == stack.name and r.id not in named)


def review_stacks(root: Root, unreadable: list[str] | None = None) -> tuple[list[str], list[str]]:
    """``passprice check``'s look at the stacks: problems (:func:`stack_findings`, one line each naming the stack's
    file) and warnings (runs of a stack its fit does not name). A stack or measurement file that does not read is
    reported by check's own validation, not here. A fit that is ``broken`` (its runs gone, or a run it names too
    small to divide by) is a bad file, as a broken derivation is in :func:`passprice.lineage.review`: its line is
    appended to ``unreadable`` too (``check`` reports it on stderr, exit 2)."""
    try:
        runs = load_runs(root)
    except InputError:
        return [], []  # a measurement file that does not read: reported by check's validation
    from passprice.registry import did_you_mean

    problems: list[str] = []
    warnings: list[str] = []
    cards: list[str] | None = None
    for name in root.scan(root.stacks):
        path = root.stacks / f"{name}.toml"
        try:
            stack = load_stack(root, str(path))
        except InputError:
            continue  # reported by check's validation
        if stack.cards and cards is None:
            cards = root.scan(root.cards)
        for own in stack.cards:  # a table no card's name reaches is never applied (attack round attack55)
            if own not in (cards or []):
                problems.append(
                    f"{path}: cards.{own}: no card {own!r} in facts/cards, so this per-card table is never applied: "
                    f"name it as a card's file is named, or remove it{did_you_mean(own, cards or [])}"
                )
        for f in stack_findings(root, stack, runs):
            problems.append(f"{path}: {f.message}")
            if f.kind == "broken" and unreadable is not None:
                unreadable.append(problems[-1])
        extra = unfitted_runs(stack, runs)
        if extra:
            shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5:,} more" if len(extra) > 5 else "")
            warnings.append(  # counts with a thousands separator, as every other count ("5000 runs": attack round 37)
                f"{path}: {len(extra):,} measured run{'s' if len(extra) != 1 else ''} of stack {stack.name} "
                f"{'are' if len(extra) != 1 else 'is'} not in its fit ({shown}): run passprice calibrate --stack "
                f"{stack.name}"
            )
    return problems, warnings
