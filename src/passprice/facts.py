"""A figure is a fact only with its value, its unit, its provenance and its citation; a result is only as strong as
the weakest fact it rests on.

A fact is written as a TOML table (``value``, ``unit``, ``provenance``, ``source`` and ``locator``, and optionally
``note`` and ``derivation``); :class:`Fact` keeps what was written and the value in base units (bytes, B/s, MAC/s,
cycle/s, or a bare share), converted exactly: ``141 GB`` is 141 × 10^9 bytes and ``80 GiB`` is 80 × 2^30 bytes. A
fact pinned in a lock written before facts named their sources carries a free-text ``cite`` instead, read and
reproduced as written.
"""

from __future__ import annotations

import enum
import functools
import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

from passprice.digests import sha256
from passprice.errors import InputError

if TYPE_CHECKING:
    import cattrs

    from passprice.derivations import Derivation, RunDerivation


@functools.total_ordering
@enum.unique
class Provenance(enum.Enum):
    """Where a figure comes from, on a ladder from strongest to weakest (DESIGN.md, Facts).

    ``published`` (a datasheet, whitepaper or peer-reviewed paper says so) > ``measured`` (a public, reproducible
    measurement) > ``derived`` (computed from other facts by a stated formula) > ``estimated`` (an engineering
    estimate, basis stated) > ``assumed`` (a placeholder). Comparison follows the ladder's *weakness*:
    ``Provenance.ASSUMED > Provenance.PUBLISHED``, so ``max`` of a set is its weakest member, as the seed's
    ``Provenance`` ordering does.
    """

    PUBLISHED = "published"
    MEASURED = "measured"
    DERIVED = "derived"
    ESTIMATED = "estimated"
    ASSUMED = "assumed"

    @property
    def rank(self) -> int:
        """0 for ``published`` … 4 for ``assumed``: higher is weaker."""
        return _RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Provenance):
            return NotImplemented
        return self.rank < other.rank

    def weaker_than(self, floor: Provenance) -> bool:
        """Whether this provenance sits below ``floor`` on the ladder (``estimated`` is weaker than ``measured``)."""
        return self.rank > floor.rank

    @classmethod
    def parse(cls, text: str, where: str = "provenance") -> Provenance:
        """The provenance named ``text``; :class:`InputError` naming ``where`` when it is not on the ladder."""
        try:
            return cls(text)
        except ValueError:
            ladder = ", ".join(p.value for p in cls)
            raise InputError(f"{where}: {text!r} is not a provenance (one of {ladder})") from None


_RANK = {p: i for i, p in enumerate(Provenance)}


def weakest(provenances: Iterable[Provenance]) -> Provenance:
    """The weakest of ``provenances`` (``published`` for none: an empty set rests on nothing weaker). Compared by
    rank, not through ``Provenance.__lt__`` (the same order and the same first of equals, without a Python call a
    comparison: a sweep takes this thousands of times)."""
    return max(provenances, key=_RANK.__getitem__, default=Provenance.PUBLISHED)


# Units and their exact multipliers to base units, by dimension. Decimal prefixes are powers of 1000, binary ones
# powers of 1024, as the DESIGN's Units paragraph requires.
_DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def _prefixed(base: str, prefixes: Mapping[str, int]) -> dict[str, Fraction]:
    return {f"{p}{base}": Fraction(m) for p, m in prefixes.items()}


#: Unit → (dimension, multiplier to the base unit). Dimensions: ``bytes``, ``bytes/s``, ``MAC/s``, ``cycle/s``,
#: ``share``, ``seconds``, ``rows``, ``positions``.
UNITS: dict[str, tuple[str, Fraction]] = {}
for _u, _m in {**_prefixed("B", _DECIMAL), **_prefixed("B", _BINARY)}.items():
    UNITS[_u] = ("bytes", _m)
for _u, _m in {**_prefixed("B/s", _DECIMAL), **_prefixed("B/s", _BINARY)}.items():
    UNITS[_u] = ("bytes/s", _m)
for _u, _m in _prefixed("MAC/s", {k: v for k, v in _DECIMAL.items() if k in ("", "G", "T", "P")}).items():
    UNITS[_u] = ("MAC/s", _m)
for _u, _m in _prefixed("Hz", {k: v for k, v in _DECIMAL.items() if k in ("", "k", "M", "G", "T")}).items():
    UNITS[_u] = ("cycle/s", _m)
for _u, _m in _prefixed("cycle/s", {k: v for k, v in _DECIMAL.items() if k in ("", "G", "T")}).items():
    UNITS[_u] = ("cycle/s", _m)
UNITS["1"] = ("share", Fraction(1))
# Seconds (a serving stack's fixed costs, issue 14).
for _u, _m in {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}.items():
    UNITS[_u] = ("seconds", _m)

# Counts (where a serving stack's facts hold, issue 14): token-rows a pass, cached positions.
UNITS["rows"] = ("rows", Fraction(1))
UNITS["positions"] = ("positions", Fraction(1))

#: The base unit each dimension is reported in.
BASE_UNITS = {
    "bytes": "B", "bytes/s": "B/s", "MAC/s": "MAC/s", "cycle/s": "cycle/s", "share": "1", "seconds": "s",
    "rows": "rows", "positions": "positions",
}


def to_base(amount: int | float, unit: str, where: str = "value") -> float:
    """``amount`` in ``unit`` converted exactly to base units (B, B/s, MAC/s, cycle/s or a share), rounded once.

    The written decimal is taken as written (``4.8`` is 48/10, not the nearest binary fraction), multiplied by the
    unit's exact power of 1000 or 1024, and rounded once to the nearest double.

    Raises :class:`InputError` naming ``where`` for an unknown unit or a non-finite amount.
    """
    if unit not in UNITS:
        raise InputError(f"{where}: unknown unit {unit!r} (one of {', '.join(UNITS)})")
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        raise InputError(f"{where}: value must be a number, not {amount!r}")
    if isinstance(amount, float) and not math.isfinite(amount):
        raise InputError(f"{where}: value must be finite, not {amount!r}")
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(amount))
    try:
        return float(exact * UNITS[unit][1])
    except OverflowError:
        shown = format(Decimal(exact.numerator) / Decimal(exact.denominator), ".4g")
        base = BASE_UNITS[UNITS[unit][0]]
        raise InputError(f"{where}: {shown} {unit} is too large (past 1.8e308 {base}, the largest double)") from None


#: The count units (:data:`UNITS`), plural as files write them, and each one's singular.
_SINGULAR = {"rows": "row", "positions": "position"}


def shown_unit(unit: str, amount: float | None = None) -> str:
    """How passprice prints ``unit`` as written in a file: ``us`` (the ASCII spelling files and options use) as
    ``µs``, as every other duration passprice prints (a price's ``256.5 µs``, the README's ``96.63 µs``); a count
    unit after an ``amount`` of exactly 1 in the singular (``1 row``, not ``1 rows``: a stack's ``range.rows.min``
    in ``audit`` and ``diff``, slip52); any other unit as written."""
    return "µs" if unit == "us" else counted_unit(unit, amount)


def counted_unit(unit: str, amount: float | None) -> str:
    """``unit`` as written, but a count unit (``rows``, ``positions``) after an ``amount`` of exactly 1 in the
    singular (``1 row``). Raises nothing."""
    return _SINGULAR[unit] if amount == 1 and unit in _SINGULAR else unit


def dimension(unit: str) -> str:
    """The dimension (``bytes``, ``bytes/s``, ``MAC/s``, ``cycle/s``, ``share`` or ``seconds``) of a known unit."""
    return UNITS[unit][0]


def entry_digest(entry: Mapping[str, Any]) -> str:
    """:meth:`Fact.digest` of the fact whose :meth:`Fact.to_entry` is ``entry``: ``sha256:`` + the hex digest of its
    canonical JSON (sorted keys, ``,``/``:`` separators, shortest round-trip floats, UTF-8). For a caller that holds
    the entry already (``cards --json``, :func:`passprice.report.fact_json`), so the fact is not unstructured twice.
    Raises nothing for an entry made by ``to_entry``."""
    canonical = _canonical().encode(entry)  # json.dumps(entry, sort_keys=True, separators=(",", ":"), …)
    return "sha256:" + sha256(canonical.encode("utf-8")).hexdigest()


@functools.cache
def _canonical() -> json.JSONEncoder:
    """The encoder :func:`entry_digest` writes with, made once (``json.dumps`` with options makes one a call)."""
    return json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@attrs.frozen
class Fact:
    """One cited figure.

    ``value`` is in base units (bytes, B/s, MAC/s, cycle/s, or a share in (0, 1]); ``amount`` and ``unit`` are as
    written in the file. ``provenance`` places it on the ladder; ``source`` is the id of the source record it comes
    from (``sources/ID.toml``) and ``locator`` where in that source (table, row, column, quoted figure); ``note``
    gives the basis of an estimate or what a device reports; ``derivation`` is the
    :class:`~passprice.derivations.Derivation` of a computed fact (a serving stack's fact read off measured runs: a
    :class:`~passprice.derivations.RunDerivation`, issue 14). ``cite`` is the free-text citation of a fact
    pinned in a lock written before sources existed (its derivation then is free text too); a fact has a source or
    such a cite.
    """

    value: float
    amount: int | float
    unit: str
    provenance: Provenance = attrs.field(validator=attrs.validators.instance_of(Provenance))
    cite: str | None = attrs.field(default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str)))
    note: str | None = None
    derivation: str | Derivation | RunDerivation | None = None
    source: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )
    locator: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )

    def __attrs_post_init__(self) -> None:
        if self.source is None and self.cite is None:
            raise ValueError("a fact cites a source (source and locator) or, pinned before sources, a cite")

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any], where: str) -> Fact:
        """The fact a validated TOML table describes (structured by :func:`converter`); ``where`` names it
        (``FILE: memory.bandwidth``) in errors.

        Raises :class:`InputError` for an unknown unit, provenance, or a non-finite value, and for a fact that cites
        nothing. A value of ``-0.0`` (a card fact, a stack's share, a drafting method's acceptance, where a schema's
        ``minimum = 0`` lets it by) is read as ``0.0`` (:func:`passprice.bounds.unsigned_zero`): it was echoed as
        "-0" in drift and stale lines (leftovers 29b)."""
        if isinstance(entry.get("value"), float):
            from passprice.bounds import unsigned_zero

            entry = {**entry, "value": unsigned_zero(entry["value"])}
        base = to_base(entry["value"], entry["unit"], f"{where}.value")
        Provenance.parse(entry["provenance"], f"{where}.provenance")
        if entry.get("source") is None and entry.get("cite") is None:
            raise InputError(f"{where}: cites nothing: give source (a sources/ID) and locator")
        import cattrs

        try:
            fact: Fact = _fact_structure()({**entry, _BASE: base}, cls)
        except (cattrs.BaseValidationError, ValueError, TypeError) as e:
            raise InputError(f"{where}: not a fact: {_cattrs_says(e)}") from None
        return fact

    def to_entry(self) -> dict[str, Any]:
        """The fact as its TOML table (unstructured by :func:`converter`): ``value`` and ``unit`` as written, then
        provenance, source, locator (or the legacy cite), note, derivation; the keys it was written with, so its
        digest is the one it was pinned with."""
        out: dict[str, Any] = converter().unstructure(self)
        return out

    def citation(self) -> str:
        """Where the fact comes from, in one line: ``SOURCE: LOCATOR`` (``nvidia-h200-datasheet: Technical
        Specifications, …``), or the free-text cite of a fact pinned before sources."""
        if self.source is not None:
            return f"{self.source}: {self.locator}" if self.locator else self.source
        return self.cite or ""

    def derivation_text(self) -> str | None:
        """The derivation in one line (:meth:`~passprice.derivations.Derivation.describe`, or the free text of a
        fact pinned before derivations had inputs), ``None`` for none."""
        if self.derivation is None or isinstance(self.derivation, str):
            return self.derivation
        return self.derivation.describe()

    def digest(self) -> str:
        """``sha256:`` + the hex digest of the fact's canonical JSON (sorted keys, shortest round-trip floats):
        any change of value, unit, provenance, source, locator (or cite), note or derivation changes it."""
        return entry_digest(self.to_entry())

    def scaled(self, factor: float) -> Fact:
        """The same fact with its value multiplied by ``factor`` (used to measure elasticities by re-pricing)."""
        return attrs.evolve(self, value=self.value * factor, amount=self.amount * factor)

    def describe(self) -> str:
        """``value unit`` as written, e.g. ``4.8 TB/s`` (``us`` printed ``µs``, :func:`shown_unit`); a share (unit
        ``1``) is its bare value, ``0.9333``. A value
        ``%g`` would round (``1.23456789``) is shown in full."""
        amount = f"{self.amount:g}" if isinstance(self.amount, float) else f"{self.amount}"
        if isinstance(self.amount, float) and float(amount) != self.amount:
            amount = repr(self.amount)
        return amount if self.unit == "1" else f"{amount} {shown_unit(self.unit, self.amount)}"


def _cattrs_says(error: Exception) -> str:
    """What a cattrs (or attrs validator) error says, in one line."""
    import cattrs

    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(str(x) for x in cattrs.transform_error(error))
    return str(error)


@functools.cache
def converter() -> cattrs.Converter:
    """Fact ↔ its TOML table, with cattrs: the file's ``value`` is the amount as written (:attr:`Fact.amount`); the
    base value is derived from it and its unit when read (:func:`to_base`) and never written; a derivation table
    becomes a :class:`~passprice.derivations.Derivation` (a legacy derivation stays text); fields at their default
    (no source, locator, cite, note or derivation) are left out; any other key is refused (the schema refuses it
    first). New optional fields of :class:`Fact` are carried without another line here. Made on first use: a
    process that neither structures nor unstructures a fact (a price from the cache of built objects) does not
    import cattrs."""
    import cattrs

    c = cattrs.Converter(forbid_extra_keys=True)
    c.register_structure_hook(int | float, lambda v, _: v)
    # Registered by predicate: registering by class would resolve Fact's annotations now, before Derivation exists.
    c.register_unstructure_hook_func(lambda t: t is Fact, _unstructure_fact)
    c.register_structure_hook_func(lambda t: t is Fact, lambda entry, cls: Fact.from_entry(entry, "fact"))
    return c


_BASE = "\0base"
#: The order a fact's keys are written in.
_ORDER = ("value", "unit", "provenance", "source", "locator", "cite", "note", "derivation")
_KEY_RANK = {key: rank for rank, key in enumerate(_ORDER)}


@functools.cache
def _derivations() -> tuple[Any, Any]:
    """:class:`~passprice.derivations.Derivation` and :class:`~passprice.derivations.RunDerivation`, with
    :class:`Fact`'s annotations resolved against them (they live in a module that imports this one)."""
    from passprice.derivations import Derivation, RunDerivation

    attrs.resolve_types(Fact, localns={"Derivation": Derivation, "RunDerivation": RunDerivation})
    return Derivation, RunDerivation


@functools.cache
def _fact_unstructure() -> Any:
    """The generated unstructure function of :class:`Fact`, made on first use (a price that writes and digests no
    fact never makes it)."""

    from cattrs.gen import make_dict_unstructure_fn, override

    def unstructure_derivation(d: Any) -> Any:
        return d if d is None or isinstance(d, str) else d.to_entry()

    _derivations()
    return make_dict_unstructure_fn(
        Fact, converter(), _cattrs_omit_if_default=True, value=override(omit=True), amount=override(rename="value"),
        derivation=override(unstruct_hook=unstructure_derivation),
    )


@functools.cache
def _fact_structure() -> Any:
    """The generated structure function of :class:`Fact`, made on first use."""
    from cattrs.gen import make_dict_structure_fn, override

    derivation, run_derivation = _derivations()

    def structure_derivation(v: Any, _: Any) -> Any:
        if not isinstance(v, Mapping):
            return v
        # A table naming a method is read off measured runs (issue 14); one naming a formula computes from inputs.
        return run_derivation.from_entry(v) if "method" in v else derivation.from_entry(v)

    return make_dict_structure_fn(
        Fact, converter(), _cattrs_forbid_extra_keys=True, value=override(rename=_BASE),
        amount=override(rename="value"), derivation=override(struct_hook=structure_derivation),
    )


def _unstructure_fact(fact: Fact) -> dict[str, Any]:
    entry = _fact_unstructure()(fact)
    return {k: entry[k] for k in sorted(entry, key=lambda k: _KEY_RANK.get(k, len(_ORDER)))}

