"""A serving is named once and priced the same way everywhere: a registry file, a command line, and a lock all
describe it by the same :class:`ServingSpec`, and every default is made explicit before a price or a lock rests on it.

``registry/servings/NAME.toml`` (``schema/serving.schema.json``) names a checkpoint and a card and the serving's
choices (batch, contexts, cache layout, drafts, flush, host memory); :func:`resolve` loads what it names and builds the
seed's :class:`~passprice.serving.Serving` from it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from passprice import schema
from passprice.bounds import position_text
from passprice.cards import Card, load_card
from passprice.errors import InputError, NotFound
from passprice.facts import Fact
from passprice.files import is_there
from passprice.gguf_records import GGUFHeader
from passprice.registry import Root, against_root, below, named_in, not_found, outside, stays_in
from passprice.serving import (
    ActScaling,
    AttentionMath,
    ContextClass,
    ContextMix,
    Draft,
    Serving,
    StateFlush,
)

if TYPE_CHECKING:  # read only when a serving drafts or routes
    import cattrs

    from passprice.drafts import DraftMethod
    from passprice.routing import Routing

T = TypeVar("T")

#: The context limit a serving gets when it names none: min(this, the model's context length) (DESIGN.md).
DEFAULT_LIMIT = 4096


@attrs.frozen
class ContextSpec:
    """One context class: ``share`` of the batch, mean ``position`` reached, ``limit`` allowed (positions);
    ``None`` position or limit are filled in by :func:`complete` (limit / 2, and the default limit)."""

    share: float
    position: float | None = None
    limit: int | None = None


@attrs.frozen
class DraftSpec:
    """Drafting: the ``method`` (a ``facts/drafts`` name), the drafted ``tokens`` per pass, and the vocabulary rows
    the drafting head reads (``head_rows``, ``None`` for the whole head)."""

    method: str
    tokens: int = attrs.field(validator=attrs.validators.ge(1))
    head_rows: int | None = attrs.field(default=None, validator=attrs.validators.optional(attrs.validators.ge(1)))


@attrs.frozen
class ServingSpec:
    """A serving as a person writes it (DESIGN.md, Command line, for the defaults).

    ``checkpoint``: a registry entry name or a ``.gguf`` path; ``card``: a card name or path; ``contexts``: ``None``
    until :func:`complete` fills in one class at limit min(4096, the model's context) and position limit / 2. The
    other fields mirror :class:`~passprice.serving.Serving`: ``attention`` (``vector``/``array``), ``scaling``
    (``per-block``/``sub32``), ``flush`` (``every-pass``/``every:N``/``trailing:N``), ``shared_prefix`` (positions
    every sequence shares, held once with a paged cache) and ``prefix_read_once`` (the prefix read once a pass).
    ``routing``: the routing record (a ``facts/routing`` name or path) a mixture of experts is priced with.
    ``max_tpot``: the TPOT cap (seconds) the best-batch search keeps to (``None``: none). ``memory_use``: the
    fraction of card memory the best- and largest-batch searches may fill (``None``: all of it, the seed's).
    """

    checkpoint: str
    card: str
    batch: int = 1
    contexts: tuple[ContextSpec, ...] | None = None
    kv_page: int | None = None
    attention: str = attrs.field(default="vector", validator=attrs.validators.in_(("vector", "array")))
    kv_bytes: float = 2.0
    state_bytes: float = 4.0
    activation_words: int = 1
    scaling: str = attrs.field(default="per-block", validator=attrs.validators.in_(("per-block", "sub32")))
    kv_rotated: bool = False
    draft: DraftSpec | None = None
    flush: str = attrs.field(default="every-pass", validator=lambda _, __, v: StateFlush.parse(v))
    host_memory: bool = False
    description: str | None = None
    shared_prefix: int = 0
    prefix_read_once: bool = False
    routing: str | None = None
    max_tpot: float | None = None
    memory_use: float | None = None
    #: The file the spec was read from (a serving or a lock), so a name in it that names nothing is reported with
    #: the file and key; not part of the spec's identity or of its document.
    source: str | None = attrs.field(default=None, eq=False, kw_only=True)
    #: The serving file whose context classes the spec holds, kept when a name given on the command line (``--card``,
    #: ``roofline OTHER_CARD SERVING``, ``--draft``, ``--routing``) clears :attr:`source`: a ``contexts.N.limit`` past
    #: the checkpoint's context is still that file's key (:func:`file_limit_problem`); cleared with ``--checkpoint``,
    #: as another model makes the limit the command line's problem. Not part of the spec's identity.
    contexts_source: str | None = attrs.field(default=None, eq=False, kw_only=True)


#: Fields added after locks were first written (issue 8): left out of a document at their default, so a lock of a
#: serving that does not use them keeps its bytes (and its digest) when re-locked.
_OPTIONAL_DEFAULTS: dict[str, Any] = {"shared_prefix": 0, "prefix_read_once": False}



@functools.cache
def _converter() -> cattrs.Converter:
    """The spec's cattrs converter (extra keys refused), made on first use: a process that reads its servings from
    the cache of built objects neither makes it nor imports cattrs."""
    import cattrs

    return cattrs.Converter(forbid_extra_keys=True)


def spec_from_document(document: Mapping[str, Any], source: str) -> ServingSpec:
    """The spec a validated ``serving`` document (or a lock's embedded serving) describes.

    Raises :class:`InputError` naming ``source`` for values the schema lets through but the spec cannot hold."""
    import cattrs

    from passprice.bounds import unsigned_zero

    data = dict(document)
    if "contexts" in data:
        # position = -0.0 (the schema's minimum 0 lets it by) is 0, as --position -0.0 is: shown as "-0" otherwise
        data["contexts"] = tuple(
            {**c, "position": unsigned_zero(c["position"])} if isinstance(c.get("position"), float) else c
            for c in data["contexts"]
        )
    data["source"] = source  # structured with the rest: one object made, not one made and evolved
    try:
        spec = _converter().structure(data, ServingSpec)
        StateFlush.parse(spec.flush)
        AttentionMath(spec.attention)
        ActScaling(spec.scaling)
    except (cattrs.BaseValidationError, ValueError, TypeError) as e:
        if isinstance(e, cattrs.BaseValidationError):
            detail = "; ".join(str(x) for x in cattrs.transform_error(e))
        else:
            detail = str(e)
        raise InputError(f"{source}: not a serving: {detail}") from None
    _check_contexts(spec, source)
    return spec


#: The widest cache element (bytes) attention on the array reads: 8-bit codes and their scales' share (the seed's
#: ``WideCacheOnArray`` bound, :func:`passprice.serving.check_serving`).
_ARRAY_KV_BYTES = 1.25


def no_whole_mean(limit: int, more: str, instead: str) -> str | None:
    """Why a context ``limit`` with no position given leaves nothing to price, or ``None`` when it leaves a whole
    mean position: its default mean position, limit / 2, is 0.5 at ``limit = 1``, and positions are whole tokens (a
    sequence allowed 1 position holds row 0 alone; it priced position 0.5). ``more``: the way to give a longer limit
    (``--limit 2 or more``, ``limit = 2 or more``); ``instead``: the way to price row 0 (``--position 0``,
    ``position = 0``). The one wording of ``--limit 1`` and of a serving file's ``contexts.N.limit = 1``. Raises
    nothing."""
    if limit >= 2:
        return None
    return (
        f"{limit} leaves no whole mean position to price: a sequence allowed {limit} position holds row 0 alone, "
        f"and the default mean position limit / 2 is {limit / 2:g}; give {more}, or {instead}"
    )


def _check_contexts(spec: ServingSpec, source: str) -> None:
    """A serving file's context mix must be one a pass can have (the seed's ``BadContexts`` checks, made where the
    file is read, so a bad file is bad input naming its key, not a refusal): the shares sum to 1 (within 1e-9, the
    seed's tolerance) and every class's position is below its own limit (position ≥ limit leaves no room for the
    row a pass writes).

    A shared prefix likewise (the seed's extension's ``BadPrefix``): it needs the file's paged cache (``kv_page``),
    and no class whose position the file gives may stop short of it. ``new-serving --shared-prefix 4096`` wrote a
    file without ``kv_page`` (exit 0) that ``price`` then refused (``BadPrefix``, exit 1, naming neither file nor
    key) and ``check`` passed. Attention on the array (``attention = "array"``) over a cache wider than 8-bit codes
    (``kv_bytes`` past 1.25) likewise (the seed's ``WideCacheOnArray``, which advised ``--kv-bytes 1 or --attention
    vector``).

    Raises :class:`InputError` naming ``source`` and the key path."""
    classes = spec.contexts or ()
    for i, c in enumerate(classes):
        lone = no_whole_mean(c.limit, "limit = 2 or more", "position = 0") if c.limit is not None else None
        if lone is not None and c.position is None:
            # ``--limit 1`` is refused (the CLI's ``_whole_limit``); a file's ``limit = 1`` priced position 0.5
            raise InputError(f"{source}: contexts.{i}.limit: {lone}")
        if c.position is not None and c.limit is not None and c.position >= c.limit:
            # A pass at a position writes that position's row: a class at its limit has no room for it (DESIGN.md,
            # Contexts; the seed refused only a position past the limit).
            raise InputError(
                f"{source}: contexts.{i}.position: {position_text(c.position)} is not below the class's limit "
                f"{c.limit}: a pass at a position writes that position's row, and a sequence allowed {c.limit} "
                f"positions holds rows 0 to {c.limit - 1}"
            )
    if spec.attention == "array" and spec.kv_bytes > _ARRAY_KV_BYTES:
        # The seed's WideCacheOnArray, made where the file is read: its advice, "use --kv-bytes 1 or --attention
        # vector", named options a file's reader had not given (tests/test_odds172.py).
        raise InputError(
            f"{source}: kv_bytes: attention = \"array\" reads an 8-bit cache (kv_bytes at most {_ARRAY_KV_BYTES:g}: "
            f"8-bit codes and a scale share), not {spec.kv_bytes:g} bytes an element: set kv_bytes = 1, or attention "
            "= \"vector\""
        )
    if spec.shared_prefix > 0:
        if spec.kv_page is None:
            raise InputError(
                f"{source}: shared_prefix: {spec.shared_prefix} positions shared need a paged KV cache (a contiguous "
                "cache shares no page): give kv_page, or remove shared_prefix"
            )
        for i, c in enumerate(classes):
            if c.position is not None and c.position < spec.shared_prefix:
                raise InputError(
                    f"{source}: contexts.{i}.position: {position_text(c.position)} stops short of the shared prefix "
                    f"(shared_prefix {spec.shared_prefix}): every sequence holds the whole prefix"
                )
    if classes:
        shares = sum(c.share for c in classes)  # as the seed sums them
        if abs(shares - 1.0) > 1e-9:
            raise InputError(f"{source}: contexts: the shares sum to {shares:.12g}, not 1")


def spec_to_document(spec: ServingSpec) -> dict[str, Any]:
    """The spec as a TOML-ready table: every field, ``None`` fields left out (TOML has no null), the fields added
    later (``shared_prefix``, ``prefix_read_once``) left out at their defaults, contexts as an array of tables."""
    data: dict[str, Any] = _converter().unstructure(spec)

    def drop_none(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drop_none(v) for k, v in value.items() if v is not None}
        if isinstance(value, list | tuple):
            return [drop_none(v) for v in value]
        return value

    out: dict[str, Any] = drop_none(data)
    out.pop("source", None)
    out.pop("contexts_source", None)  # where the spec was read from, as ``source``: not a figure of the serving
    for key, default in _OPTIONAL_DEFAULTS.items():
        if key in out and out[key] == default and type(out[key]) is type(default):
            del out[key]
    return out


def serving_path(root: Root, ref: str) -> Path:
    """The file of the serving ``ref`` (a registry name or a ``.toml`` path). Raises :class:`InputError` listing the
    registered servings when ``ref`` names none."""
    if ref.endswith(".toml") and is_there(ref):
        return Path(ref)
    beneath = against_root(root, ref, "serving")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    if ("/" in ref or os.sep in ref) and not stays_in(root.servings, ref):  # ../../other/a40: a file of another folder
        raise outside("serving", ref, root.servings, root.names(root.servings), root)
    path = root.servings / f"{ref}.toml"
    if not is_there(path):
        raise not_found("serving", ref, root.servings, root.names(root.servings), root)
    return path


def load_spec(root: Root, ref: str) -> ServingSpec:
    """The serving ``ref`` in ``root``, validated against ``schema/serving.schema.json``; a serving file of the
    registry names files inside it only (:func:`require_inside_root`).

    Inside a snapshot (:mod:`passprice.snapshot`) the spec of one ``ref`` is looked up, read and held to the root
    once (``sweep`` asks for each serving twice: to count its rows, then to price them).

    Raises :class:`InputError` or :class:`passprice.errors.SchemaError`."""
    from passprice import snapshot

    return snapshot.made(("serving-spec", root, ref), lambda: _load_spec(root, ref))


def _load_spec(root: Root, ref: str) -> ServingSpec:
    path = serving_path(root, ref)
    from passprice.registry import entry_name

    entry_name(path)  # a name that does not print is refused, not shown
    spec = spec_of_file(root, path)
    require_inside_root(root, spec)  # on every read: what a path names changes without the file
    return spec


def spec_of_file(root: Root, path: Path) -> ServingSpec:
    """The spec the serving file at ``path`` holds, validated against ``root``'s serving schema (nothing it names is
    looked at): kept in the cache of built objects, a folder of many serving files as one batch
    (:func:`passprice.cache.built`), so ``diff`` reading a file and ``check`` resolving it build it once. Raises
    :class:`InputError` or :class:`passprice.errors.SchemaError`."""
    from passprice import cache

    data = schema.read_bytes(path, "serving")
    schema.require_size(path, "serving", len(data))  # a kept object answers for a file under the cap only (issue 13)
    schema.require_shape(path, "serving", data)  # its separators and dots too (tests/test_bound111.py)

    def build() -> ServingSpec:
        from passprice import snapshot

        # The spec is kept in the cache of built objects: its document need not be kept too. Inside a snapshot the
        # same bytes under another name (a pull request of many serving files alike) are parsed and validated once:
        # a valid document is a function of the bytes and the schema alone (a refusal, which names the file, is
        # never kept); the spec, which records its file, is made for each.
        document = snapshot.made(
            ("serving-document", str(root.schema), data),
            lambda: schema.load(path, "serving", root.schema, data=data, kept=False),
        )
        return spec_from_document(document, str(path))

    source = str(path).encode("utf-8", "surrogateescape")
    return cache.built("serving", below(root.schema, "serving.schema.json"), source + b"\0" + data, build, ServingSpec,
                       batch=os.fspath(path.parent))  # a registry of thousands of serving files: one entry for all


def unsourced(spec: ServingSpec, *, checkpoint: bool = False) -> dict[str, Any]:
    """The fields to evolve ``spec`` with when the command line names what its file named (a card, drafting method or
    routing record; ``checkpoint``: a checkpoint): ``source`` cleared, as a name the command line gave is not the
    file's, and :attr:`ServingSpec.contexts_source` keeping the file whose context classes the spec still holds (none
    once another checkpoint is named). ``price SERVING --card OTHER`` and ``roofline OTHER SERVING`` of a file whose
    ``contexts.1.limit`` was past the checkpoint's context were refused ``ContextBeyondModel: … lower --limit``
    (exit 1), the serving's own card ``FILE: contexts.1.limit: …`` (exit 2): tests/test_odds172.py. Raises nothing."""
    kept = None if checkpoint else (spec.source if spec.source is not None else spec.contexts_source)
    return {"source": None, "contexts_source": kept}


def override(spec: ServingSpec, position: float | None = None, limit: int | None = None, **fields: Any) -> ServingSpec:
    """``spec`` with the given fields replaced (``None`` values ignored).

    ``position`` and ``limit`` replace the context mix by one class: ``limit`` defaults to the spec's longest (or,
    with no contexts, the default limit); ``position`` to the single class's position when the limit is unchanged,
    else to limit / 2."""
    changes = {k: v for k, v in fields.items() if v is not None}
    if {"checkpoint", "card", "draft", "routing"} & changes.keys():
        changes = {**unsourced(spec, checkpoint="checkpoint" in changes), **changes}
    if position is not None or limit is not None:
        current = spec.contexts or ()
        single = current[0] if len(current) == 1 else None
        if limit is None and current:
            limit = max((c.limit for c in current if c.limit is not None), default=None)
        if position is None and single is not None and limit == single.limit:
            position = single.position
        changes["contexts"] = (ContextSpec(1.0, position, limit),)
    return attrs.evolve(spec, **changes)


def complete(spec: ServingSpec, header: GGUFHeader) -> ServingSpec:
    """``spec`` with its defaults made explicit: no contexts become one class at limit = min(4096, the model's
    context length) and position = limit / 2; a class without a limit gets that limit, one without a position
    limit / 2. Raises :class:`InputError` (:func:`passprice.decode.check_header`, every problem of the header) for a
    header whose ``context_length`` is negative."""
    model = header.meta_int("context_length")
    if model is not None and model < 0:
        # The header's fault, said as kv says it (bad input naming the key, :func:`passprice.decode.check_header`):
        # an int32 context_length of -5 made the default limit -5, and price and best refused "BadContexts: a class
        # has position -2.5" (exit 1) for a dense checkpoint (attack65).
        from passprice.decode import check_header

        check_header(header)
    default_limit = min(DEFAULT_LIMIT, model) if model else DEFAULT_LIMIT
    classes = spec.contexts or (ContextSpec(1.0, None, None),)
    filled = []
    for c in classes:
        limit = c.limit if c.limit is not None else default_limit
        filled.append(ContextSpec(c.share, c.position if c.position is not None else limit / 2, limit))
    return attrs.evolve(spec, contexts=tuple(filled))


def to_serving(spec: ServingSpec, acceptance: tuple[Fact, ...] = (), routing: Routing | None = None) -> Serving:
    """The seed's :class:`~passprice.serving.Serving` for a completed ``spec``, its draft resting on ``acceptance``
    (the method's facts for the first ``tokens`` drafts), a mixture of experts on ``routing`` (the record
    ``spec.routing`` names). Raises :class:`InputError` for a spec without contexts."""
    if spec.contexts is None or any(c.position is None or c.limit is None for c in spec.contexts):
        raise InputError("serving has open contexts: complete() it against its checkpoint first")
    draft = None
    if spec.draft is not None:
        draft = Draft(spec.draft.tokens, acceptance, spec.draft.head_rows, spec.draft.method)
    return Serving(
        batch=spec.batch,
        contexts=ContextMix(
            tuple(ContextClass(c.share, float(c.position or 0.0), int(c.limit or 0)) for c in spec.contexts)
        ),
        kv_page=spec.kv_page,
        attention=AttentionMath(spec.attention),
        kv_bytes=spec.kv_bytes,
        state_bytes=spec.state_bytes,
        activation_words=spec.activation_words,
        scaling=ActScaling(spec.scaling),
        kv_rotated=spec.kv_rotated,
        draft=draft,
        flush=StateFlush.parse(spec.flush),
        host_memory=spec.host_memory,
        shared_prefix=spec.shared_prefix,
        prefix_read_once=spec.prefix_read_once,
        routing=routing,
        max_tpot=spec.max_tpot,
        memory_use=spec.memory_use,
    )


@attrs.frozen
class Resolved:
    """A serving with everything it names loaded: the completed ``spec``, the checkpoint ``header``, the ``card``,
    the drafting ``method`` (if any), and the seed's ``serving`` (its ``routing`` the record the spec names)."""

    spec: ServingSpec
    header: GGUFHeader
    card: Card
    method: DraftMethod | None
    serving: Serving

    def facts(self) -> dict[str, Fact]:
        """Every fact this serving could rest on: the card's, the draft's, and (a mixture of experts) the
        routing's, by lock path."""
        out = dict(self.card.facts())
        if self.serving.draft is not None:
            out.update(self.serving.draft.facts())
        if self.serving.routing is not None and (self.header.meta_int("expert_count") or 0) > 0:
            out.update(self.serving.routing.facts())
        return out


def check_head_rows(header: GGUFHeader, head_rows: int | None, source: str | None = None) -> None:
    """Refuse drafting-head rows past the checkpoint's vocabulary (``token_embd.weight``'s rows): the seed caps the
    head's share at 1, so such a figure would be shown as given and priced as the whole head. Raises
    :class:`InputError` naming the option, or the serving file ``source`` and its ``draft.head_rows`` when the figure
    is that file's (a line naming only the option, for a figure no option gave, left the file unnamed: the long
    fuzz, attack round 37)."""
    table = header.tensor("token_embd.weight")
    if head_rows is None or table is None or len(table.dims) < 2:
        return
    vocab = table.dims[1]
    if head_rows > vocab:
        where = "--head-rows (draft.head_rows)" if source is None else f"{source}: draft.head_rows"
        raise InputError(
            f"{where}: {head_rows:,} rows, more than the {vocab:,} rows of the vocabulary "
            f"(token_embd.weight of {header.source or 'the checkpoint'}): give at most {vocab:,}"
        )


def _require_file_limits(root: Root, spec: ServingSpec, header: GGUFHeader) -> None:
    """Raise :class:`InputError` with :func:`file_limit_problem`'s line, if any."""
    line = file_limit_problem(root, spec, header)
    if line is not None:
        raise InputError(line)


def _file_read(root: Root, spec: ServingSpec) -> tuple[str | None, ServingSpec | None]:
    """The serving file ``spec`` was read from (:attr:`ServingSpec.source`, else the
    :attr:`ServingSpec.contexts_source` a name given on the command line left) and its spec as written, ``(None,
    None)`` for none, a lock, or a file that no longer reads. Raises nothing."""
    source = spec.source if spec.source is not None else spec.contexts_source
    if source is None or not source.endswith(".toml") or source.endswith(".lock.toml"):
        return None, None
    try:
        return source, spec_of_file(root, Path(source))
    except (InputError, OSError):  # pragma: no cover - the file read a moment ago
        return None, None


def _names_card(root: Root, named: str, priced: str) -> bool:
    """Whether a serving file's ``card`` (a name or a path to a card file) names the card priced (``priced``: the
    spec's reference): the same file (:func:`passprice.cards.same_card`), not a file of the same stem. Raises
    nothing."""
    from passprice.cards import same_card

    return same_card(root, named, priced)


def _file_draft(spec: ServingSpec, written: ServingSpec) -> bool:
    """Whether ``spec``'s draft (its method and tokens) is the serving file's ``written`` one: the file's keys
    answer for it whatever card the command line names (a draft does not depend on the card), and not where
    ``--draft``/``--draft-tokens`` gave another. Raises nothing."""
    if spec.source is not None:
        return True
    return (spec.draft is not None and written.draft is not None
            and (spec.draft.method, spec.draft.tokens) == (written.draft.method, written.draft.tokens))


def _require_file_choices(
    root: Root, spec: ServingSpec, header: GGUFHeader, card: Card, method: DraftMethod | None,
    card_priced: bool = True,
) -> None:
    """Raise :class:`InputError` naming a serving file and its key for a choice of the file the pricer would refuse
    with an option's advice, whatever the command line adds: ``host_memory = true`` on the file's card with no host
    link (``NoHostLink``: "price it without --host-memory"), ``draft.tokens`` past the acceptance figures its
    ``draft.method`` gives (``BadDraft``: "--draft-tokens N"), and a ``draft.method`` drafting with MTP blocks its
    checkpoint's header does not carry (``NoDrafter``: "price without drafts"). The card and drafting method are the
    file's while ``spec.source`` is (a name the command line gives clears it: :func:`unsourced`); the option
    ``--host-memory`` given on the command line over a file without ``host_memory`` is the option's, and keeps the
    refusal (tests/test_odds172.py). The file's ``host_memory`` is bad input on the file's own card alone (another
    card's is its ``NoHostLink``, a row's refusal in ``compare`` and ``sweep``), and its draft whatever card is priced
    (:func:`_file_draft`: ``--card mi300x`` made ``draft.tokens = 9`` a ``BadDraft`` exit 1, tests/test_fix184.py).
    A lock's serving is no file to correct: left to the pricer. Raises nothing else."""
    source, written = _file_read(root, spec)
    if source is None or written is None:
        return
    where = named_in(root, source)
    # The file's host_memory is bad input on the file's own card alone: on another (compare's, sweep's --cards,
    # --card) it is that card's NoHostLink refusal, as `compare --host-memory` gives (tests/test_fix184.py: `compare`
    # of a file on the SN40L exited 2 naming the A100 PCIe).
    if (card_priced and spec.host_memory and card.host is None and written.host_memory
            and _names_card(root, written.card, spec.card)):
        raise InputError(
            f"{where}: host_memory: card {card.name} has no host link (no host.* facts), so no sequence can be "
            "held in host memory: remove host_memory (or set it false), or name a card with a host link"
        )
    draft = spec.draft
    if draft is None or method is None or not _file_draft(spec, written):
        return
    figures = len(method.acceptance)
    if draft.tokens > figures:
        plural = "s" if figures != 1 else ""
        raise InputError(
            f"{where}: draft.tokens: {draft.tokens:,} drafted tokens, but drafting method {draft.method} gives "
            f"acceptance figures for {figures} draft{plural} (facts/drafts/{draft.method}.toml), so a longer draft "
            f"would be priced on a guess: set draft.tokens to at most {figures}, or add acceptance.{figures + 1} to "
            "that file, cited as every fact is"
        )
    # The pricer's NoDrafter (serving.pass_shape); a header that holds drafting (MTP) tensors but no
    # nextn_predict_layers is its checkpoint entry's fault, refused naming the entry and the tensor where its step is
    # built (tests/test_hostile_18.py), not the serving's draft.
    if (header.meta_int("nextn_predict_layers") or 0) < 1 and not any(".nextn." in t.name for t in header.tensors):
        raise InputError(
            f"{where}: draft.method: drafting method {draft.method} drafts with the checkpoint's MTP blocks, and "
            f"checkpoint {spec.checkpoint} carries none (nextn_predict_layers 0), so its drafted tokens would be "
            "priced as if drafting cost nothing but the head's rows: remove [draft], or name a checkpoint that "
            "carries its drafter"
        )


def file_limit_problem(root: Root, spec: ServingSpec, header: GGUFHeader) -> str | None:
    """The line refusing a serving file's context class whose ``limit`` is past its checkpoint's ``context_length``,
    as bad input naming the file and ``contexts.N.limit`` (:func:`limit_past_model`); ``None`` when the limits fit,
    the header gives no context length, or the spec is not a serving file's (a lock's, one built from options).

    ``spec`` (before :func:`complete`) holds the contexts its file ``spec.source`` gives (or
    ``spec.contexts_source``, when the command line named another card: :func:`unsourced`), or the one class
    :func:`override` made of them: with ``--position`` alone its limit is the file's longest, still the file's
    (``price SERVING --position 100`` was refused ``ContextBeyondModel: … lower --limit``, exit 1, of the file's
    limit: tests/test_fix168.py); with ``--limit`` another figure, the pricer's ``ContextBeyondModel`` refusal,
    which says to lower ``--limit``, is the answer. A ``--limit`` equal to the file's longest cannot be told from
    the file's own, and is named as the file's: that figure in the file is bad input either way. A file of ``limit =
    50000`` for a checkpoint of 40,960 positions was refused ``ContextBeyondModel: … lower --limit`` (exit 1),
    naming neither the file nor the key and advising an option the file has no part in (tests/test_attack163.py).
    ``new-serving NEW OLD`` asks it of OLD's spec, so the line names OLD's file, not ``NEW.toml (not written)``.
    Raises nothing (a file that no longer reads gives ``None``: its reader says why)."""
    source = spec.source if spec.source is not None else spec.contexts_source
    if source is None:
        return None
    line = limit_past_model(spec, header)
    if line is None:
        return None
    path = Path(source)
    if path.suffix != ".toml" or path.name.endswith(".lock.toml"):
        return None
    try:
        written = spec_of_file(root, path)
    except (InputError, OSError):
        return None
    if written.contexts != spec.contexts:
        given = spec.contexts or ()
        longest = max((c.limit for c in written.contexts or () if c.limit is not None), default=None)
        if len(given) != 1 or given[0].limit != longest:
            return None  # the command line's limit, not the file's
        line = limit_past_model(written, header)
        if line is None:  # pragma: no cover - the file's longest limit is the one past the model
            return None
    return f"{named_in(root, source)}: {line}"


def limit_past_model(spec: ServingSpec, header: GGUFHeader) -> str | None:
    """The problem of ``spec``'s first context class whose ``limit`` is past the checkpoint's ``context_length``
    (read from ``header``), from its key on: ``contexts.N.limit: …``; ``None`` when every limit given fits (or the
    header gives no context length). The one wording of a serving file :func:`resolve` reads and of one
    ``new-serving`` would write (:func:`passprice.servingfile.write_serving`). Raises nothing."""
    model = header.meta_int("context_length")
    if model is None or model <= 0:
        return None
    past = [(i, c.limit) for i, c in enumerate(spec.contexts or ()) if c.limit is not None and c.limit > model]
    if not past:
        return None
    i, limit = past[0]
    more = f" (and {len(past) - 1} more classes)" if len(past) > 1 else ""
    return (
        f"contexts.{i}.limit: {limit:,} positions is past the context length of checkpoint {spec.checkpoint}, "
        f"{model:,} positions{more}: a model reads no position past its context; give each class a limit of at "
        f"most {model:,}"
    )


def _named(root: Root, spec: ServingSpec, key: str, load: Callable[[], T]) -> T:
    """``load()`` of what ``spec``'s ``key`` names; a name that names nothing is reported with the file and key that
    gave it (``odd.toml: checkpoint: checkpoint 'x': not found …``) when the spec was read from a file, the file
    named as :func:`passprice.registry.named_in` names a file of ``root`` (leftovers 29b: ``/abs/root/registry/
    servings/x.toml: card: …`` under an absolute ``--root``)."""
    try:
        return load()
    except NotFound as e:
        if spec.source is None:
            raise
        raise InputError(f"{named_in(root, spec.source)}: {key}: {e}") from None


def gathered(*loads: Callable[[], Any]) -> tuple[Any, ...]:
    """Each of ``loads`` called, each tried whatever the others did: when several raise
    :class:`~passprice.errors.InputError`, one error with all their problems' lines (a wrong checkpoint, card and
    routing record are three ``passprice: error:`` lines, not the first alone); when one does, that error as it
    was. Another exception (a refusal) is raised at once."""
    out: list[Any] = []
    errors: list[InputError] = []
    for load in loads:
        try:
            out.append(load())
        except InputError as e:
            errors.append(e)
            out.append(None)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise InputError.of(line for e in errors for line in e.lines)
    return tuple(out)


def named_files(root: Root, spec: ServingSpec, card: bool = True) -> list[tuple[str, Path]]:
    """The files ``spec`` names that a command pricing it reads (its checkpoint, its card unless ``card`` is false —
    a sweep's ``cards`` replace it —, its drafting method and routing record), each labelled by the key naming it
    (``FILE: card`` for a serving file), found as the loaders find them (:func:`passprice.cards.card_path`, …). A
    name that names nothing is left out (the loader reports it). An output is checked against them
    (:func:`passprice.files.require_not_input`): ``sweep --file grid.toml -o c.toml --force``, ``c.toml`` a card the
    grid named, replaced the card with the CSV, exit 0 (attack round 26). Raises nothing."""
    from passprice.cards import card_path
    from passprice.checkpoints import checkpoint_file
    from passprice.drafts import draft_path
    from passprice.routing import routing_path

    where = f"{named_in(root, spec.source)}: " if spec.source is not None else ""
    named: list[tuple[str, Callable[[], Path]]] = [
        ("checkpoint", lambda: checkpoint_file(root, spec.checkpoint)[0]),
    ]
    if card:
        named.append(("card", lambda: card_path(root, spec.card)))
    if spec.draft is not None:
        method = spec.draft.method
        named.append(("draft.method", lambda: draft_path(root, method)))
    if spec.routing is not None:
        routing = spec.routing
        named.append(("routing", lambda: routing_path(root, routing)))
    out = []
    for key, find in named:
        try:
            out.append((f"{where}{key}", find()))
        except InputError:
            continue
    return out


def require_inside_root(root: Root, spec: ServingSpec, as_written: bool = True) -> None:
    """Every name a serving file gives (``checkpoint``, ``card``, ``draft.method``, ``routing``) that is a path lies
    inside the root (:func:`passprice.registry.require_inside`) when the file is the registry's; a spec from the
    command line (no ``source``), or a serving file outside the root that the command line named, is not held to
    it. ``as_written`` (the names as the file gives them, not made absolute by a caller, as
    :func:`require_lockable` makes them): an absolute path is refused too, even one inside the root: it names the
    file of one clone on one machine, so ``check`` in the work tree passed it while ``diff`` of two revisions (each
    side a folder of its own) refused it as outside the registry (cold5, #13). Raises :class:`InputError` naming
    the file and key."""
    from passprice.registry import require_inside, within

    if spec.source is None or not within(root, spec.source):
        return  # a serving file outside the registry, named on the command line, is the user's own

    named = [("checkpoint", spec.checkpoint, root.checkpoints), ("card", spec.card, root.cards)]
    if spec.draft is not None:
        named.append(("draft.method", spec.draft.method, root.drafts))
    if spec.routing is not None:
        named.append(("routing", spec.routing, root.routing))
    file = named_in(root, spec.source)
    for key, ref, folder in named:
        require_inside(root, ref, folder, f"{file}: {key}")  # outside the root: said as such first
        if as_written and ref and os.path.isabs(ref):
            raise InputError(
                f"{file}: {key}: {ref!r} is an absolute path, the file of one clone on one machine (another "
                "checkout, and each side of a review, reads another): a registry's serving file names a registered "
                "record by its name"
            )


def require_lockable(root: Root, spec: ServingSpec, output: Path) -> None:
    """A lock written to ``output`` inside ``root`` is a registry file, held to :func:`require_inside_root` as
    ``check``, ``price`` and ``reproduce`` will read it: a ``--card``, ``--checkpoint``, ``--draft-method`` or
    ``--routing`` path outside the root would pin a file nobody can trace back from the registry (and the lock would
    fail ``check`` once written). A lock written outside the root is the user's own and may name any path. Raises
    :class:`InputError`: one line naming the lock file, the key and what to do."""
    from passprice.registry import within

    if not within(root, output):
        return

    def absolute(ref: str) -> str:
        # A path given on the command line is relative to the working folder; the lock records it relative to the
        # root (locks.portable) and reads it back from there (locks.rooted), so it is judged where it lies.
        bare = "/" not in ref and os.sep not in ref and not ref.endswith((".toml", ".gguf", ".xz", ".gz"))
        return ref if bare or os.path.isabs(ref) or not is_there(Path(ref)) else os.path.abspath(ref)

    try:
        judged = attrs.evolve(spec, source=str(output), checkpoint=absolute(spec.checkpoint), card=absolute(spec.card))
        require_inside_root(root, judged, as_written=False)
    except InputError as e:
        raise InputError(
            f"{e}; a lock written there could not be traced back to the registry: copy the file into the registry "
            "(passprice import, facts/…), or write the lock outside the registry (-o FILE)"
        ) from None


def resolve(
    root: Root, spec: ServingSpec, method_ref: str | None = None, *, method_ref_from_file: bool = False,
    card_priced: bool = True,
) -> Resolved:
    """Load the checkpoint, card and drafting method ``spec`` names from ``root``, complete its defaults, and build
    the seed's serving. ``method_ref`` names a drafting method to load (and hold to its scope) for a spec that does
    not draft, as ``speculate`` prices each draft length itself: it is the resolved ``method``, the serving stays
    undrafted (``method_ref_from_file``: it is the serving file's own ``draft.method``). Every command resolves
    through here, so a record's scope is checked once for all. Raises
    :class:`InputError` for anything it names that is missing or invalid, and
    :class:`~passprice.scopes.OutOfScope` for a drafting method or routing record whose checkpoints do not list the
    one priced. ``card_priced`` false: the spec's card is not priced (``sweep FILE --cards`` naming others, whose
    lock judgement resolves the file on its own card), so its ``host_memory`` is no bad input there
    (:func:`_require_file_choices`; tests/test_fix184.py: it exited 2 naming a card not swept)."""
    from passprice.checkpoints import load_checkpoint

    ref = spec.draft.method if spec.draft is not None else method_ref
    name = spec.routing

    def method_of() -> DraftMethod | None:
        if ref is None:  # drafting methods and routing records are imported only for a serving that names them
            return None
        from passprice.drafts import load_draft_method

        # A method the command line named (speculate --draft) is not the serving file's to answer for.
        named_by = spec if spec.draft is not None or method_ref_from_file else attrs.evolve(spec, source=None)
        return _named(root, named_by, "draft.method", lambda: load_draft_method(root, ref))

    def routing_of() -> Routing | None:
        if name is None:
            return None
        from passprice.routing import load_routing

        return _named(root, spec, "routing", lambda: load_routing(root, name))

    # Every name is looked up whatever the others did (round 18: a wrong checkpoint, card and routing gave two lines)
    header, card, method, routing = gathered(
        lambda: _named(root, spec, "checkpoint", lambda: load_checkpoint(root, spec.checkpoint)),
        lambda: _named(root, spec, "card", lambda: load_card(root, spec.card)),
        method_of,
        routing_of,
    )
    _require_file_limits(root, spec, header)
    spec = complete(spec, header)
    check_head_rows(header, spec.draft.head_rows if spec.draft is not None else None,
                    named_in(root, spec.source) if spec.source is not None else None)
    acceptance = method.first(spec.draft.tokens) if method is not None and spec.draft is not None else ()
    file, written = _file_read(root, spec)
    draft_file = file if file is not None and written is not None and _file_draft(spec, written) else None
    require_scopes(root, spec.checkpoint, header, (ref, method), (name, routing), source=spec.source,
                   method_from_file=spec.draft is not None or method_ref_from_file, draft_source=draft_file)
    _require_file_choices(root, spec, header, card, method, card_priced)
    return Resolved(spec, header, card, method, to_serving(spec, acceptance, routing))


def require_scopes(
    root: Root,
    checkpoint: str,
    header: GGUFHeader,
    method: tuple[str | None, DraftMethod | None] = (None, None),
    routing: tuple[str | None, Routing | None] = (None, None),
    *,
    source: str | None = None,
    method_from_file: bool = True,
    draft_source: str | None = None,
) -> None:
    """The drafting method and routing record a serving prices ``checkpoint`` (read as ``header``) with, each given
    as (the name it was given by, the record), apply to it: :func:`~passprice.scopes.require_in_scope` for each
    (:func:`resolve` and the sweep's loader both call this). Raises :class:`~passprice.scopes.OutOfScope` — or,
    when the serving file ``source`` named the checkpoint and the record together (its ``routing``, its
    ``draft.method`` unless ``method_from_file`` is false: a method the command line gave), :class:`InputError`
    naming the file and key: a file that pairs a model with another model's record is bad input, not a serving
    the model cannot price. ``draft_source``: the serving file whose ``draft.method`` it is where ``source`` is
    cleared by a card named on the command line (a draft does not depend on the card: tests/test_fix184.py). Then
    :func:`~passprice.scopes.require_drafter`: a method in scope that drafts with a separate draft model is refused
    (:class:`~passprice.serving.NoDrafter`)."""
    from passprice.scopes import OutOfScope, require_drafter
    from passprice.serving import NoDrafter

    if source is None and draft_source is not None:
        require_scopes(root, checkpoint, header, method, (None, None), source=draft_source)
        method = (None, None)  # checked: the routing alone is left, the command line's

    try:
        _require_scopes(root, checkpoint, header, method, routing)
    except OutOfScope as e:
        key = "routing" if e.kind == "routing record" else "draft.method"
        if source is None or (key == "draft.method" and not method_from_file):
            raise
        raise InputError(f"{named_in(root, source)}: {key}: {e}") from None
    ref, the_method = method
    if ref is not None and the_method is not None:  # in scope: now, does the header carry what it drafts with?
        try:
            require_drafter(ref, the_method.kind, checkpoint)
        except NoDrafter as e:  # a file's draft.method: its key, not "price without drafts" (tests/test_odds172.py)
            if source is None or not method_from_file or source.endswith(".lock.toml"):
                raise
            raise InputError(
                f"{named_in(root, source)}: draft.method: {e.why}, so its drafted tokens would be priced as if "
                "drafting cost nothing: remove [draft], or name a method that drafts with the checkpoint's MTP blocks"
            ) from None


def _require_scopes(
    root: Root,
    checkpoint: str,
    header: GGUFHeader,
    method: tuple[str | None, DraftMethod | None],
    routing: tuple[str | None, Routing | None],
) -> None:
    ref, the_method = method
    name, the_routing = routing
    if (ref is None or the_method is None) and (name is None or the_routing is None):
        return  # nothing to hold to a scope: a plain serving imports neither drafts, routing nor scopes
    from passprice.drafts import draft_path
    from passprice.routing import routing_path
    from passprice.scopes import require_in_scope

    def shown(file: Path) -> str:
        return str(file.relative_to(root.path)) if file.is_relative_to(root.path) else str(file)

    if ref is not None and the_method is not None:
        file = shown(draft_path(root, ref))
        require_in_scope(root, "drafting method", the_method.name, file, the_method.checkpoints, checkpoint, header)
    if name is not None and the_routing is not None:
        file = shown(routing_path(root, name))
        require_in_scope(root, "routing record", the_routing.name, file, the_routing.checkpoints, checkpoint, header)
