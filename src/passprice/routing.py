"""How a mixture of experts' tokens route is a figure like any other: cited, with a provenance, or not used.

Which experts a pass reads depends on how its token-rows route: a pass of one sequence reads its k experts, a pass
of many reads nearly all of them. The pricer takes that from a routing record (``facts/routing/NAME.toml``,
``schema/routing.schema.json``): two facts, ``hot_experts`` (the share h of the experts in a hot set) and
``hot_share`` (the share s of the routed token-slots that land in it), each set spread evenly. h = s = 1 is uniform
routing, which ``facts/routing/uniform.toml`` states as an assumption; a measured skew names its measurement. A lock
pins them as ``routing.hot_experts`` and ``routing.hot_share`` and can floor them (``routing.*`` ≥ ``measured``
refuses the assumed uniform routing).

The expected number of distinct experts T token-rows read in one MoE layer (:meth:`Router.distinct`), with E
experts, k routed a token, and expert e among a token's k with probability p_e (Σ p_e = k):

    D(T) = Σ_e 1 − (1 − p_e)^T        uniform (p_e = k / E):  E · (1 − (1 − k / E)^T)

which assumes the T tokens route independently of each other (linearity of expectation makes it exact under that
assumption, whatever the dependence between one token's k choices); under the two-set reading p_e = k·s / (h·E) in
the hot set and k·(1 − s) / ((1 − h)·E) in the rest, so D(T) = h·E·(1 − (1 − p_hot)^T) + (1 − h)·E·(1 − (1 −
p_cold)^T). It is an expectation: the pricer streams D(T) experts' bytes a pass, not the bytes of any one routing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from passprice import schema
from passprice.facts import Fact
from passprice.files import is_there
from passprice.registry import Root, against_root, entry_name, not_found, outside, stays_in

if TYPE_CHECKING:
    from passprice.gguf_header import GGUFHeader

#: The lock paths of a routing record's facts.
ROUTING_PATHS = ("routing.hot_experts", "routing.hot_share")


@attrs.frozen
class Routing:
    """A routing record: its registry ``name``, its ``title``, the ``hot_experts`` and ``hot_share`` facts (shares
    in (0, 1]), and optionally the ``experts`` (E) and ``used`` (k) of the router it describes (a checkpoint with
    another E or k is refused), the ``checkpoints`` it was written for, and a ``note``."""

    name: str
    title: str
    hot_experts: Fact
    hot_share: Fact
    experts: int | None = None
    used: int | None = None
    checkpoints: tuple[str, ...] = ()
    note: str | None = None

    def facts(self) -> dict[str, Fact]:
        """The facts by lock path: ``routing.hot_experts``, ``routing.hot_share``."""
        return dict(zip(ROUTING_PATHS, (self.hot_experts, self.hot_share), strict=True))

    @property
    def uniform(self) -> bool:
        """Whether it is uniform routing (h = s = 1)."""
        return self.hot_experts.value == 1.0 and self.hot_share.value == 1.0

    def describe(self) -> str:
        """One line, with the weakest provenance and the record's name: ``uniform: every expert equally likely,
        assumed (uniform)`` or ``a hot set of 45.31 % of the experts takes 90 % of the routed token-slots, measured
        (qwen3-30b-a3b-measured)``. This is the text a price's ``routing.description`` records (and a lock with
        it), so it stays as it is; people are shown :func:`description` with the experts counted."""
        return description(self.name, self.hot_experts, self.hot_share)


def description(name: str, hot_experts: Fact, hot_share: Fact, experts: int | None = None) -> str:
    """A routing in one line, for people: ``a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed
    token-slots, measured (qwen3-30b-a3b-measured)`` — the hot set counted in experts when ``experts`` (E) is given
    and h × E is a whole number, ``45.31 % of the 128 experts (57.99 of them)`` when it is not, a share alone
    without E (:meth:`Routing.describe`); uniform routing as ``uniform: every expert equally likely``."""
    from passprice.facts import weakest

    prov = weakest(f.provenance for f in (hot_experts, hot_share)).value
    if hot_experts.value == 1.0 and hot_share.value == 1.0:
        return f"uniform: every expert equally likely, {prov} ({name})"
    share = f"{100 * hot_experts.value:.4g} %"
    if experts:
        hot = hot_experts.value * experts
        if abs(hot - round(hot)) < 1e-9 * experts:
            hot_set = f"{round(hot):,} of {experts:,} experts ({share})"
        else:
            hot_set = f"{share} of the {experts:,} experts ({hot:.4g} of them)"
    else:
        hot_set = f"{share} of the experts"
    return f"a hot set of {hot_set} takes {100 * hot_share.value:.4g} % of the routed token-slots, {prov} ({name})"


def routing_from_document(name: str, document: Mapping[str, Any], source: str) -> Routing:
    """The record a validated ``routing`` document describes (read from ``source``)."""
    meta = document["routing"]
    return Routing(
        name=name,
        title=str(meta["name"]),
        hot_experts=Fact.from_entry(document["hot_experts"], f"{source}: hot_experts"),
        hot_share=Fact.from_entry(document["hot_share"], f"{source}: hot_share"),
        experts=meta.get("experts"),
        used=meta.get("used"),
        checkpoints=tuple(meta.get("checkpoints", ())),
        note=meta.get("note"),
    )


def routing_path(root: Root, ref: str) -> Path:
    """The file of the routing record ``ref`` (a registry name or a ``.toml`` path). Raises
    :class:`~passprice.errors.InputError` listing the registered records when ``ref`` names none."""
    candidate = Path(ref)
    if ref.endswith(".toml") and is_there(candidate):
        return candidate
    beneath = against_root(root, ref, "routing record")  # sources/X.toml from a subfolder of the registry
    if beneath is not None:
        return beneath
    if ("/" in ref or os.sep in ref) and not stays_in(root.routing, ref):  # ../../other/a40: a file of another folder
        raise outside("routing record", ref, root.routing, root.names(root.routing), root)
    path = root.routing / f"{ref}.toml"
    if not is_there(path):
        raise not_found("routing record", ref, root.routing, root.names(root.routing), root)
    return path


def router_said(experts: int, header: GGUFHeader | None = None) -> str:
    """A router in the words a refusal offering routing records uses (the glossary's ``routing``: each token routes
    to k of its E experts): ``128 experts, 8 a token``, or ``128 experts`` when ``header`` gives no k
    (:func:`experts_used`). The records offered fit k as well as E (:func:`records_for`), and the line said only
    "registered here for 128 experts" (left39). Raises nothing."""
    used = experts_used(header)
    return f"{experts} experts" if used is None else f"{experts} experts, {used} a token"


def records_for(root: Root, experts: int, header: GGUFHeader | None = None) -> list[str]:
    """The registered routing records that could price a mixture of ``experts`` routed experts, each described for
    a ``Routed`` refusal: ``qwen3-30b-a3b-measured (measured; for qwen3-30b-a3b-q4_k_m)``, ``uniform (assumed; any
    checkpoint)``. A record stating another expert count, or not reading, is left out (``check`` reports the
    latter); given the refused checkpoint's ``header``, so is one that does not fit its router, the experts a token
    (k, ``expert_used_count``) as well as the count (:func:`mismatch`: left38, a record of k = 4 was offered to a
    checkpoint routing 8, which it then refused BadRouting), and one whose ``checkpoints`` scope does not hold it
    (:func:`passprice.scopes.in_scope`: by header sha256 or model content; those are :func:`records_out_of_scope`).
    Walkthrough 27: the refusal of Qwen3-30B-A3B without a record named only ``uniform``, not the measured record
    written for that very checkpoint; session 24: another 128-expert model was offered that record, which then
    refused it OutOfScope. Raises nothing."""
    return _records(root, experts, header)[0]


def records_out_of_scope(root: Root, experts: int, header: GGUFHeader) -> list[str]:
    """The registered routing records that fit the router of ``experts`` experts read as ``header`` (described and
    held to it as :func:`records_for` does) whose ``checkpoints`` scope does not hold that checkpoint: shown apart,
    marked, so a reader sees why the record written for a model of the same size is not offered. Raises nothing."""
    return _records(root, experts, header)[1]


def experts_used(header: GGUFHeader | None) -> int | None:
    """The experts a token (k) of ``header``'s router (``expert_used_count``), or ``None`` when unknown (no header, no
    such key, not a positive integer). Raises nothing."""
    used = None if header is None else header.meta_int("expert_used_count")
    return used if used is not None and used > 0 else None


def _records(root: Root, experts: int, header: GGUFHeader | None) -> tuple[list[str], list[str]]:
    from passprice.errors import InputError
    from passprice.scopes import in_scope, scope_said

    out: list[str] = []
    outside: list[str] = []
    try:
        names = root.names(root.routing)
    except InputError:
        return [], []
    used = experts_used(header)
    for name in names:
        try:
            record = load_routing(root, name)
        except InputError:
            continue
        if record.experts is not None and record.experts != experts:
            continue
        if used is not None and mismatch(record, experts, used) is not None:
            continue  # another k, or shares no router of this size can take: BadRouting if named (left38)
        provenance = max(f.provenance for f in record.facts().values()).value  # max: the weakest
        scope = f"for {scope_said(record.checkpoints)}" if record.checkpoints else "any checkpoint"
        try:
            held = header is None or in_scope(root, record.checkpoints, "", header)
        except InputError:
            held = False
        (out if held else outside).append(f"{name} ({provenance}; {scope})")
    return out, outside


def load_routing(root: Root, ref: str) -> Routing:
    """The routing record ``ref`` in ``root``, validated against ``schema/routing.schema.json``.

    An unchanged file is neither parsed nor structured again: its object is kept by :mod:`passprice.cache`, as a
    card's is (structuring its two facts imports cattrs and builds its converter: tens of ms of a sweep's CPU time).

    Raises :class:`~passprice.errors.InputError` or :class:`~passprice.errors.SchemaError`."""
    from passprice import cache
    from passprice.sources import require_sources

    path = routing_path(root, ref)
    raw = schema.read_bytes(path, "routing")
    schema.require_size(path, "routing", len(raw))  # a kept object answers for a file under the cap only (issue 13)
    schema.require_shape(path, "routing", raw)  # its separators and dots too (tests/test_bound111.py)

    def build() -> Routing:
        return routing_from_document(entry_name(path), schema.load(path, "routing", root.schema, data=raw), str(path))

    source = str(path).encode("utf-8", "surrogateescape")
    routing = cache.built("routing", root.schema / "routing.schema.json", source + b"\0" + raw, build, Routing)
    require_sources(root, {p.split(".", 1)[1]: f for p, f in routing.facts().items()}, str(path))
    return routing


@attrs.frozen
class Router:
    """A checkpoint's router under a routing: ``experts`` E, ``used`` k (from the header), ``hot`` h and ``share``
    s (the routing's facts' values). :meth:`problem` says why the combination cannot be, if it cannot."""

    experts: int
    used: int
    hot: float = 1.0
    share: float = 1.0

    def probabilities(self) -> tuple[tuple[float, float], ...]:
        """(experts in the set, probability one of them is among a token's k) for the hot set and the rest: p_hot =
        k·s / (h·E), p_cold = k·(1 − s) / ((1 − h)·E); one set of E at k / E when h = 1."""
        e, k = float(self.experts), float(self.used)
        if self.hot >= 1.0:
            return ((e, k / e),)
        hot, cold = self.hot * e, (1.0 - self.hot) * e
        return ((hot, k * self.share / hot), (cold, k * (1.0 - self.share) / cold))

    def problem(self) -> str | None:
        """Why this router cannot route so, or ``None``: k above E, a set asked to take more than one choice of
        each token for each of its experts (p > 1: an expert is chosen at most once a token), the whole of the
        experts in the hot set with part of the slots outside it, or a hot set taking less than its experts' share
        of the slots (:func:`colder`)."""
        if self.used > self.experts:
            return f"{self.used} experts a token of {self.experts}"
        if not (0.0 < self.hot <= 1.0 and 0.0 < self.share <= 1.0):
            return f"shares must be in (0, 1]: hot_experts {self.hot:g}, hot_share {self.share:g}"
        if self.hot >= 1.0 and self.share < 1.0:
            return f"every expert is in the hot set (hot_experts 1) but it takes only {self.share:g} of the slots"
        sets = self.probabilities()
        if not all(p <= 1.0 for _, p in sets):
            return self.share_bound(sets)
        return colder(self.hot, self.share)

    def share_bound(self, sets: tuple[tuple[float, float], ...]) -> str:
        """Why ``hot_share`` s cannot be with this hot set, with the bound it must meet (``check``'s wording, which
        a price refused :class:`~passprice.serving.BadRouting` now gives too: walkthrough 19, the refusal named
        neither the share nor its limit): the set chosen with p > 1, and s ≤ h·E / k, s ≥ h (:func:`colder`: a hot
        set takes at least its experts' share, which also keeps the rest's p at most k / E)."""
        e, k, h, s = self.experts, self.used, self.hot, self.share
        high, low = min(1.0, h * e / k), h
        (n_hot, p_hot), (n_cold, p_cold) = sets
        others = "the one other expert" if n_cold == 1.0 else f"each of the other {n_cold:.4g} experts"
        which = (f"each of the hot set's experts would be chosen with probability {p_hot:.4g}" if p_hot > 1.0 else
                 f"{others} would be chosen with probability {p_cold:.4g}")
        return (
            f"hot_share: {s:g} of the routed token-slots cannot land so with a hot set of {n_hot:.4g} of the {e} "
            f"experts (hot_experts {h:g}) at {k} a token: {which}, and an expert is chosen at most once a token; for "
            f"that hot set hot_share must be {f'at least {low:.4g} and ' if s < low else ''}at most {high:.4g}"
        )

    def distinct(self, tokens: Any) -> Any:
        """The expected number of distinct experts ``tokens`` token-rows read in one layer, tokens routing
        independently: Σ over sets of count × (1 − (1 − p)^tokens) (see the module's docstring). ``tokens``: a
        float, or a NumPy array (elementwise).

        One token-row reads exactly its k experts whatever the skew (D(1) = Σ p_e = k): returned as ``used``
        itself, since the sum in floats can miss k by an ulp and so moved a batch-1 price by 2e-14 % when a routing
        fact changed, which the review read as a price moved (moe42)."""
        total: Any = 0.0
        for count, p in self.probabilities():
            total = total + count * (1.0 - (1.0 - p) ** tokens)
        if hasattr(tokens, "shape"):
            import numpy as np

            return np.where(np.asarray(tokens) == 1, float(self.used), total)
        return float(self.used) if tokens == 1 else total


def colder(hot: float, share: float) -> str | None:
    """Why a hot set of the share ``hot`` (h) of the experts cannot take only ``share`` (s) of the routed
    token-slots, or ``None``: a hot set takes at least its experts' share, s ≥ h (s = h spreads the slots evenly,
    uniform routing). A "hot" set below it is colder than the rest, most likely the two figures swapped (walk45: a
    record of ``hot_experts = 0.9``, ``hot_share = 0.45`` priced silently, shown as "a hot set … takes 45 %"); the
    same routing named by its hot set is h' = 1 − h, s' = 1 − s, so refusing it leaves no routing unsayable. Needs
    neither E nor k, so ``check`` applies it to every record."""
    if hot >= 1.0 or share >= hot:
        return None
    return (
        f"hot_share: {share:g} of the routed token-slots is less than the hot set's {hot:g} of the experts "
        f"(hot_experts): a hot set takes at least its experts' share of the slots (equal shares are uniform routing), "
        f"so this set is the colder one (were the two figures swapped?); the same routing named by its hot set is "
        f"hot_experts {1.0 - hot:.4g}, hot_share {1.0 - share:.4g}"
    )


def router(routing: Routing, experts: int, used: int) -> Router:
    """The :class:`Router` of a checkpoint with ``experts`` E and ``used`` k under ``routing``."""
    return Router(experts, used, routing.hot_experts.value, routing.hot_share.value)


def mismatch(routing: Routing, experts: int, used: int) -> str | None:
    """Why ``routing`` does not describe a router of ``experts`` E and ``used`` k, or ``None``: the record names
    another E or k, or the combination cannot be (:meth:`Router.problem`)."""
    if routing.experts is not None and routing.experts != experts:
        return f"{routing.name} describes a router of {routing.experts} experts, the checkpoint has {experts}"
    if routing.used is not None and routing.used != used:
        return f"{routing.name} describes {routing.used} experts a token, the checkpoint routes {used}"
    return router(routing, experts, used).problem()
