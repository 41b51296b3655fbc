"""A measured run is a record like a fact: what ran (stack, card, checkpoint, batch, context positions), what was
measured (tokens/s), and where the figure stands, so a price can be held against it and a fit can name it.

``registry/measurements/NAME.toml`` (``schema/measurement.schema.json``) holds the runs of one source: a ``[source]``
table (its name, and the id of its source record in ``sources/``) and one ``[[run]]`` a published figure (its
locator in that source, or its own source record). A run's serving is the default one of its
checkpoint on its card (DESIGN.md, Command line) at its batch, with one context class from its first to its last
position: mean position (first + last) / 2, limit last, contiguous 16-bit KV cache — what a benchmark that decodes
from ``first`` to ``last`` tokens of context holds and reads on average (llama-bench's ``tgN`` decodes from an empty
context: positions 0 to N). A run of a mixture of experts names the routing record it is priced with (``routing``),
as a serving does: without one its price is refused (``Routed``), and the refusal says to add it to the run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.errors import InputError
from passprice.files import is_there
from passprice.registry import Root, entry_name
from passprice.servings import ContextSpec, ServingSpec

if TYPE_CHECKING:
    from passprice.cards import Card
    from passprice.gguf_header import GGUFHeader
    from passprice.serving import Serving


@attrs.frozen
class Run:
    """One measured run: ``id`` (unique across the registry), the ``stack`` that ran it, its ``card`` and
    ``checkpoint`` (registry names), ``batch`` (sequences a pass carries), ``first`` and ``last`` (the cached
    positions its tokens ran from and to), ``tokens_per_s`` (measured, all sequences together), ``source`` (the
    measurement file's stem), ``source_id`` (the source record it comes from: the run's own or its file's,
    ``sources/ID.toml``), ``locator`` (where in the source), ``note``, ``build``, ``date``, ``test`` as
    published, ``routing`` (the routing record a mixture of experts' run is priced with, ``facts/routing/NAME.toml``;
    ``None`` for a dense one) and ``index`` (its place in its file: key ``run.INDEX``)."""

    id: str
    stack: str
    card: str
    checkpoint: str
    batch: int = attrs.field(validator=attrs.validators.ge(1))
    first: int = attrs.field(validator=attrs.validators.ge(0))
    last: int = attrs.field(validator=attrs.validators.ge(1))
    tokens_per_s: float = attrs.field(validator=attrs.validators.gt(0.0))
    source: str = ""
    source_id: str = ""
    locator: str = ""
    note: str | None = None
    build: str | None = None
    date: str | None = None
    test: str | None = None
    index: int = 0
    routing: str | None = None

    @property
    def key(self) -> str:
        """Where the run stands: its file (``registry/measurements/SOURCE.toml``, relative to the root) and its
        key, ``run.INDEX``."""
        return f"registry/measurements/{self.source}.toml: run.{self.index}"

    @property
    def position(self) -> float:
        """The mean cached position its tokens read: (first + last) / 2."""
        return (self.first + self.last) / 2.0

    def spec(self) -> ServingSpec:
        """The serving the run is priced as: its checkpoint and card, its batch, one context class at the mean
        position with limit ``last``; every other choice the default (contiguous 16-bit KV cache, no drafts)."""
        return ServingSpec(
            checkpoint=self.checkpoint,
            card=self.card,
            batch=self.batch,
            contexts=(ContextSpec(1.0, self.position, self.last),),
            routing=self.routing,
        )

    def price_command(self, stack: str) -> str:
        """The ``passprice price`` command of the serving the run is priced as (:meth:`spec`: its checkpoint, card,
        batch, ``--limit`` its last position, ``--position`` the mean of its positions, ``--routing`` its record)
        under the serving stack ``stack``: ``passprice price --checkpoint gpt-oss-20b-mxfp4 --card h100_sxm5_80gb
        --batch 1 --limit 128 --position 64 --routing uniform --stack S``. Each word is quoted for a shell where it
        needs it."""
        import shlex

        options = [("--checkpoint", self.checkpoint), ("--card", self.card), ("--batch", str(self.batch)),
                   ("--limit", str(self.last)), ("--position", f"{self.position:g}")]
        if self.routing is not None:
            options.append(("--routing", self.routing))
        words = " ".join(f"{option} {shlex.quote(value)}" for option, value in options)
        return f"passprice price {words} --stack {stack}"

    def unrouted(self, why: str) -> str:
        """``why`` (a ``Routed`` refusal's words) for this run, ending with what to do: name the routing record in
        the run (its file and key ``run.INDEX.routing``), since a measured run is no serving ``--routing`` reaches."""
        return (
            f"{why.split('; name a routing record', 1)[0]}; the run names none: add `routing = NAME` to it "
            f"({self.key}.routing: a record of facts/routing/, e.g. uniform, an assumption)"
        )


#: The most problem lines of one measurement file's runs ``check`` and ``validate`` list
#: (:func:`first_run_problems`); past it the rest are counted on one more line, as
#: :data:`passprice.decode.MAX_HEADER_PROBLEMS` counts a header's.
MAX_RUN_PROBLEMS = 20


def first_run_problems(by_file: Mapping[str, Sequence[str]], folder: Path | str) -> list[str]:
    """The problem lines of measured runs, ``by_file`` (a measurement file's stem, as :attr:`Run.source`, to its
    runs' lines), each file's first :data:`MAX_RUN_PROBLEMS`, then one line counting the rest (``FOLDER/SOURCE.toml:
    and 880 more problems of its runs, not listed``): 900 runs each naming a card of its own that is not there
    printed 900 lines, 455 KB, in ``check``, and 400 runs 400 lines in ``validate`` (tests/test_attack187.py).
    Raises nothing."""
    out: list[str] = []
    for source, lines in by_file.items():
        more = len(lines) - MAX_RUN_PROBLEMS
        counted = f"{Path(folder) / f'{source}.toml'}: and {more:,} more problems of its runs, not listed"
        out += lines if more <= 0 else [*lines[:MAX_RUN_PROBLEMS], counted]
    return out


def run_inputs(
    root: Root, run: Run, cards: dict[str, Card], headers: dict[str, GGUFHeader]
) -> tuple[Card, GGUFHeader]:
    """The card and the checkpoint's header ``run`` names, each loaded once a name into ``cards`` and ``headers``
    (``calibrate`` and ``validate`` price many runs of one card and model).

    Raises :class:`InputError`: for a name that names nothing (:class:`passprice.errors.NotFound`), its line after
    the run's file and key (``registry/measurements/SOURCE.toml: run.INDEX.card: card 'x': not found in …``), as
    ``check`` says it: ``calibrate`` and ``validate`` said ``run ID (SOURCE): card 'x': not found …``, naming
    neither the file nor the key (attack73); for a file that is there but does not read, its own lines after
    ``run ID (SOURCE): `` (the line names that file)."""
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.errors import NotFound

    key = "card"
    try:
        card = cards.get(run.card) or load_card(root, run.card)
        cards[run.card] = card
        key = "checkpoint"
        header = headers.get(run.checkpoint) or load_checkpoint(root, run.checkpoint)
        headers[run.checkpoint] = header
    except NotFound as e:
        raise InputError.of(f"{run.key}.{key}: {line}" for line in e.lines) from None
    except InputError as e:
        raise InputError.of(f"run {run.id} ({run.source}): {line}" for line in e.lines) from None
    return card, header


def run_serving(root: Root, run: Run, header: GGUFHeader) -> Serving:
    """The seed's serving ``run`` is priced as (:meth:`Run.spec`, its defaults completed from ``header``), on the
    routing record it names (loaded from ``root`` and held to its scope, as a serving's is). Raises
    :class:`InputError` (naming the run's file and key ``run.INDEX.routing`` for a record that does not load or
    does not apply to its checkpoint, or for a record named by a run of a dense checkpoint: the refusal
    ``BadRouting`` said "price it without --routing", an option no run has; attack round 36)."""
    from passprice.scopes import OutOfScope
    from passprice.servings import complete, require_scopes, to_serving

    spec = complete(run.spec(), header)
    if run.routing is None:
        return to_serving(spec)
    experts = header.meta_int("expert_count")
    if experts is None or experts <= 0:
        raise InputError(
            f"{run.key}.routing: checkpoint {run.checkpoint} is dense (no expert_count): a routing record says how a "
            "mixture of experts' tokens route; remove `routing` from the run (or correct its checkpoint)"
        )
    from passprice.routing import load_routing

    try:
        routing = load_routing(root, run.routing)
        require_scopes(root, run.checkpoint, header, routing=(run.routing, routing))
    except (InputError, OutOfScope) as e:
        raise InputError(f"{run.key}.routing: {e}") from None
    return to_serving(spec, (), routing)


def too_small(where: str, index: int, tokens_per_s: float, batch: int) -> str | None:
    """The problem of a run's measured ``tokens_per_s`` too small to divide by (``batch`` / tokens/s, the seconds a
    pass took, overflows to ``inf``: 5e-324 tokens/s is schema-valid, > 0), naming ``where`` (the file) and the key
    ``run.INDEX.tokens_per_s``; ``None`` when it divides."""
    if math.isfinite(batch / tokens_per_s):
        return None
    return (
        f"{where}: run.{index}.tokens_per_s: {tokens_per_s!r} tokens/s is too small to divide by (a pass of "
        f"{batch} sequences would take no finite time)"
    )


def ratio_too_large(folder: Path, run: Run, priced: float | None) -> str | None:
    """The problem of a run whose ``priced`` figure over its measured one overflows (a tokens/s over a measured
    tokens/s, a measured pass's seconds over a priced pass's: a tokens/s of 1e-306 divides, but a price over it
    does not), naming the run's file in ``folder`` and its key ``run.INDEX.tokens_per_s``; ``None`` when the ratio
    is finite (or nothing was priced). ``validate`` leaves such a run out and names it; ``calibrate`` refuses it."""
    if priced is None or math.isfinite(priced / run.tokens_per_s):
        return None
    return (
        f"{folder / f'{run.source}.toml'}: run.{run.index}.tokens_per_s: {run.tokens_per_s!r} tokens/s is too small "
        "to divide by (a price over it overflows)"
    )


def past_context(folder: Path, run: Run, context_length: int | None) -> str | None:
    """The problem of a run whose last position ``run.last`` is past its checkpoint's ``context_length`` (the
    header's ``context_length``; ``None``: the header gives none), naming the run's file in ``folder`` and its key
    ``run.INDEX.positions``; ``None`` when the run fits. A model reads no position past its context, so such a run
    is bad input (its positions or its checkpoint are wrong), not a serving to refuse: ``calibrate`` and ``check``
    said "context limit 9000 is past the checkpoint's context length 8192: lower --limit", naming neither the file
    nor the key, with advice about an option neither command has, and ``validate`` showed the run as a refused row,
    exit 0 (attack round 24)."""
    if context_length is None or run.last <= context_length:
        return None
    return (
        f"{folder / f'{run.source}.toml'}: run.{run.index}.positions: last position {run.last:,} is past the context "
        f"length of checkpoint {run.checkpoint}, {context_length:,} positions (a model reads no position past its "
        "context: correct the run's positions or its checkpoint)"
    )


def run_refusal(run: Run, refusal: Exception) -> tuple[str, str]:
    """What the pricer's ``refusal`` (a :class:`passprice.serving.ServingRefusal`) of ``run`` means for the run's
    file: the key under ``run.INDEX`` it is about (``"batch"``, ``"positions"``, ``"routing"``; ``""`` for the run
    as a whole) and the refusal's words with the advice a run can take, naming what to correct in the file. The
    refusals' own advice names options of ``price`` (``--kv-page``, ``--host-memory``, ``--limit``, ``--position``,
    ``--routing``) that a run has none of: ``validate``'s row said "page the KV cache (--kv-page)" of a batch its
    card cannot hold, and ``calibrate`` said "raise --limit or lower --position" of a run at positions [512, 512]
    (tests/test_fix168.py). A :class:`~passprice.serving.NotResident` says what fits (its
    :attr:`~passprice.serving.NotResident.shortfall`); a ``Routed`` one is :meth:`Run.unrouted`. Raises nothing."""
    from passprice.serving import BadContexts, BadRouting, ContextBeyondModel, NotResident, OnChipOverflow, Routed
    from passprice.tables import byte_figure

    if isinstance(refusal, NotResident):
        if refusal.weights_alone:
            return "card", f"{refusal.shortfall}: {_held_once(refusal)}: correct the run's card or checkpoint"
        return "batch", f"{refusal.shortfall}: correct the run's batch, positions or card"
    if isinstance(refusal, Routed):
        return "routing", run.unrouted(str(refusal))
    if isinstance(refusal, ContextBeyondModel):
        return "positions", (
            f"last position {run.last:,} is past the checkpoint's context length {refusal.model:,}: correct the "
            "run's positions or checkpoint"
        )
    if isinstance(refusal, BadContexts):
        # A run is priced as one class at its mean position with a limit of its last (Run.spec): positions
        # [512, 512] put the pass at its limit, which a pass at a position (writing that row) cannot reach.
        return "positions", (
            f"positions {run.first:,}-{run.last:,} are priced as one context class at their mean, {run.position:g}, "
            f"with a limit of the last, {run.last:,}, and a pass at a position writes that position's row, so the "
            "mean must be below the limit: correct the run's positions (a first position below the last)"
        )
    if isinstance(refusal, OnChipOverflow):
        return "batch", (
            f"the batch's token-rows take {byte_figure(refusal.needed)} bytes on chip but the card holds "
            f"{byte_figure(refusal.capacity)}: correct the run's batch or card"
        )
    if getattr(refusal, "name", "") == "BeyondStack":
        # Its advice, "price at batch 1 (--batch 1, …), price the limit (without --stack)", is price's: a run's limit
        # is priced beside it (validate's row), and a run has its stack named in its file.
        said, _, fix = str(refusal).rpartition("or calibrate the stack on ")
        return "stack", f"{'; '.join(said.split('; ')[:2])}; calibrate the stack on {fix}, or name another stack for it"
    if isinstance(refusal, BadRouting):
        return "routing", f"{refusal}: name a routing record that fits its checkpoint, or correct the checkpoint"
    return "", str(refusal)


def _held_once(refusal: Any) -> str:
    """The words of a :class:`~passprice.serving.NotResident` whose bytes held once (weights, embedding table) alone
    pass the card's capacity: how many bytes, how many times the capacity, and that no batch or positions fit. A run of
    Llama 3 70B (Q4_K_M) on a 24 GB card was told to ``correct the run's batch, positions or card`` though no batch or
    positions fit (tests/test_odds172.py). Raises nothing."""
    from passprice.tables import byte_figure

    return (f"the weights and embedding table alone take {byte_figure(refusal.held_once)} bytes, "
            f"{refusal.held_once / refusal.capacity:.3g} times what it holds, so no batch or positions fit")


def refused_run(run: Run, refusal: Exception) -> str:
    """The line ``calibrate`` (and ``check``, re-running a stack's fit) refuses a run with that the pricer refuses
    (``refusal``, a :class:`passprice.serving.ServingRefusal`): named by its file and key (``run.INDEX.batch`` for a
    batch the card does not hold, :class:`passprice.serving.NotResident`; the key :func:`run_refusal` gives for
    another), the refusal's name, and its words as :func:`run_refusal` gives them, advice naming what to correct in
    the file, never an option of ``price`` a run has none of. They said ``run ID (SOURCE): the card memory must hold
    … page the KV cache (--kv-page), or let sequences use host memory (--host-memory)``, naming neither the file nor
    the key (tests/test_attack163.py), and ``run.0: refused (BadContexts): … raise --limit or lower --position``
    (tests/test_fix168.py). Raises nothing."""
    from passprice.serving import NotResident

    name = getattr(refusal, "name", type(refusal).__name__)
    if isinstance(refusal, NotResident) and refusal.weights_alone:
        return (
            f"{run.key}.card: refused ({name}): checkpoint {run.checkpoint} on card {run.card}: {refusal.shortfall}: "
            f"{_held_once(refusal)}; a fit rests only on runs the model prices: correct the run's card or checkpoint, "
            "or name another stack for it (`stack`)"
        )
    if isinstance(refusal, NotResident):
        sequences = f"{run.batch:,} sequence{'s' if run.batch != 1 else ''}"
        return (
            f"{run.key}.batch: refused ({name}): {sequences} at positions {run.first:,}-{run.last:,} "
            f"on card {run.card}: {refusal.shortfall}; a fit rests only on runs the model prices: correct the run's "
            "batch, positions or card, or name another stack for it (`stack`)"
        )
    key, words = run_refusal(run, refusal)
    return f"{run.key}{'.' + key if key else ''}: refused ({name}): {words}"


def runs_of_document(
    name: str, document: Mapping[str, Any], where: str, problems: list[str] | None = None
) -> list[Run]:
    """The runs of a validated ``measurement`` document named ``name``. Raises :class:`InputError` for a run whose
    first position is not below its last, or whose tokens/s is too small to divide by (:func:`too_small`); with
    ``problems``, a run of the latter kind is left out and its line appended there instead (``validate`` still
    shows the good runs).

    Inside a snapshot (:func:`passprice.snapshot.made`) the runs of one document object are made once for each
    ``name``: ``check``'s validation, its stack fits and a review's lock impacts read the same measurement files of
    one side three or four times (about 24 M instructions each time in a cold one-fact review, which made every
    ``Run`` again). ``where`` only words a refusal, which is never kept, nor is a call that left a run out into
    ``problems``; the key holds the document itself (its ``id``, with the document kept beside the runs, so the id
    cannot name another object while the entry lasts); the validated document a snapshot serves is the same object
    for the same bytes (:func:`passprice.schema.load`) and is not changed by its readers."""
    from passprice import snapshot

    key = ("runs-of-document", name, id(document))
    kept = snapshot.kept(key)
    if kept is not None and kept[0] is document:
        return list(kept[1])
    before = len(problems) if problems is not None else 0
    out = _runs_of_document(name, document, where, problems)
    if snapshot.active() and (problems is None or len(problems) == before):
        snapshot.made(key, lambda: (document, tuple(out)))
    return out


def _runs_of_document(
    name: str, document: Mapping[str, Any], where: str, problems: list[str] | None
) -> list[Run]:
    """:func:`runs_of_document`, made afresh."""
    source = document["source"]
    out = []
    for i, entry in enumerate(document["run"]):
        first, last = entry["positions"]
        if first >= last:
            # [512, 512] too: a run is priced as one context class at its mean position with a limit of its last
            # (Run.spec), and a pass at its limit is refused (BadContexts) whatever the run, so such a run was
            # "0 problems" for check in a stack with no fit and a refused row of validate, exit 0
            # (tests/test_attack177.py).
            said = "is past" if first > last else "is not below"
            raise InputError(f"{where}: run.{i}.positions: first {first} {said} last {last}: a run is priced at the "
                             "mean of its positions with a limit of the last, so the first must be below the last: "
                             "correct the run's positions")
        small = too_small(where, i, float(entry["tokens_per_s"]), entry["batch"])
        if small is not None:
            if problems is None:
                raise InputError(small)
            problems.append(small)
            continue
        out.append(
            Run(
                id=entry["id"],
                stack=entry["stack"],
                card=entry["card"],
                checkpoint=entry["checkpoint"],
                batch=entry["batch"],
                first=first,
                last=last,
                tokens_per_s=float(entry["tokens_per_s"]),
                source=name,
                source_id=entry.get("source", source["source"]),
                locator=entry["locator"],
                note=entry.get("note"),
                build=entry.get("build"),
                date=entry.get("date"),
                test=entry.get("test"),
                index=i,
                routing=entry.get("routing"),
            )
        )
    return out


def load_file(
    path: Path, schema_folder: Path | None = None, sources: Path | None = None, problems: list[str] | None = None
) -> list[Run]:
    """The runs of one measurement file, validated; with ``sources`` (a root's ``sources/`` folder), every source id
    they name must have its record there; ``problems`` as :func:`runs_of_document`'s. Raises :class:`InputError`
    (naming the file and the ids) or :class:`~passprice.errors.SchemaError`."""
    document = schema.load(path, "measurement", schema_folder)
    runs = runs_of_document(entry_name(path), document, str(path), problems)
    if sources is not None:
        # each id looked for once (195 runs cite a few sources: a path made and a stat for every run before)
        missing = sorted(i for i in {r.source_id for r in runs} if not is_there(sources / f"{i}.toml"))
        if missing:
            raise InputError(missing_source_line(str(path), document, runs, missing, str(sources)))
    return runs


def missing_source_line(
    where: str, document: Mapping[str, Any], runs: Iterable[Run], missing: Sequence[str], folder: str
) -> str:
    """The one error line for the source ids ``missing`` (those of ``runs`` no record of ``folder`` holds) of the
    measurement file ``where`` (its ``document``): the file, the key each id is given at (``source.source``, the
    file's, or ``run.N.source``, a run's own), the ids, and what to write (walkthrough 29: the line named the file
    alone, so a reader looked through every run for the source it meant). Raises nothing."""
    file_source = document.get("source", {}).get("source") if isinstance(document.get("source"), Mapping) else None
    keys: list[str] = []
    for run in runs:
        if run.source_id not in missing:
            continue
        entries = document.get("run")
        entry = entries[run.index] if isinstance(entries, list) and run.index < len(entries) else {}
        own = isinstance(entry, Mapping) and "source" in entry
        key = f"run.{run.index}.source" if own or run.source_id != file_source else "source.source"
        if key not in keys:
            keys.append(key)
    shown = ", ".join(repr(m) for m in missing)
    records = ", ".join(f"sources/{m}.toml" for m in missing)
    return (f"{where}: {', '.join(keys)}: no source {shown} ({folder} has no such record): a run cites a source record "
            f"(sources/ID.toml): write {records}, or cite a record `passprice sources` lists")


def require_inside_root(root: Root, runs: list[Run], where: str) -> list[Run]:
    """``runs`` (of the measurement file ``where`` in ``root``), each naming its card, checkpoint and routing record
    by a registry name or a path inside the root (:func:`passprice.registry.require_inside`). Raises
    :class:`InputError` naming the file and key ``run.N.card``, ``run.N.checkpoint`` or ``run.N.routing``. A run's
    ``routing = "/any/file.toml"`` was read and priced with (``check``: "all holds"), where its card was refused
    (attack round 36). A run's ``stack`` is a name, registered or not, never a path: ``stack =
    "../stacks/llamacpp-cuda-2405"`` was priced by ``validate`` under that stack (its file found through the path)
    while ``calibrate`` left the run out of its fit and ``check`` called the stack's facts stale, "now a run of stack
    ../stacks/llamacpp-cuda-2405" (attack round 51); refused naming ``run.N.stack``."""
    from passprice.registry import require_inside

    for run in runs:
        if "/" in run.stack or os.sep in run.stack or run.stack in (".", "..") or run.stack.endswith(".toml"):
            raise InputError(
                f"{where}: run.{run.index}.stack: {run.stack!r} is a path, not a stack's name: a run names its stack "
                "as facts/stacks/NAME.toml is named (NAME, registered or not), without a folder or .toml"
            )
        require_inside(root, run.card, root.cards, f"{where}: run.{run.index}.card")
        require_inside(root, run.checkpoint, root.checkpoints, f"{where}: run.{run.index}.checkpoint")
        if run.routing is not None:
            require_inside(root, run.routing, root.routing, f"{where}: run.{run.index}.routing")
    return runs


def new_ids(runs: list[Run], where: str, seen: Mapping[str, str]) -> dict[str, str]:
    """The ids of ``runs`` (of the measurement file ``where``), each mapped to ``where``, when none is in ``seen``
    (id → the file holding it) nor given twice in the file. Raises :class:`InputError` naming the file, the id and
    the other file holding it: a run id names one run (``load_runs`` and ``check`` judge alike)."""
    mine: dict[str, str] = {}
    for run in runs:
        if run.id in seen or run.id in mine:
            other = seen.get(run.id, mine.get(run.id))
            raise InputError(f"{where}: run {run.id!r} is also in {other}: a run id names one run")
        mine[run.id] = where
    return mine


def load_runs(root: Root, stack: str | None = None, problems: list[str] | None = None) -> list[Run]:
    """Every measured run in ``root`` (``registry/measurements/*.toml``, files by name, runs in file order), or only
    ``stack``'s; ``problems`` as :func:`runs_of_document`'s. Raises :class:`InputError` for a file that does not
    read or an id given twice (naming both files); with ``problems``, such a file is left out whole and its lines
    appended there instead (``validate`` still shows the other files' runs)."""
    out: list[Run] = []
    seen: dict[str, str] = {}
    for name in root.names(root.measurements):
        path = root.measurements / f"{name}.toml"
        try:
            runs = require_inside_root(root, load_file(path, root.schema, root.sources, problems), str(path))
            mine = new_ids(runs, str(path), seen)
        except InputError as e:
            if problems is None:
                raise
            problems.extend(e.lines)
            continue
        seen.update(mine)
        out.extend(runs)
    return [r for r in out if stack is None or r.stack == stack]
