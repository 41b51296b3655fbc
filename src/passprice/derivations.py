"""A derived figure is only as good as the inputs it was computed from, so it names them, records the value of each
as used, and states its formula: passprice recomputes it and says which input moved when it no longer follows.

A derivation (a fact's ``derivation`` table) has a ``formula`` over named ``inputs`` and, optionally, ``digits``:
the fact's value is the formula's result rounded to that many significant digits (exact when absent). Each input has
a ``value`` and a ``unit`` and says what it is:

- ``fact = "memory.bandwidth"``: another fact of the same card or drafting method, with the value it had when the
  fact was derived (so a later change of that fact is named, not just noticed);
- ``locator = "…"`` (and ``source = ID``, default the fact's own source): a figure read from a source;
- ``constant = "…"``: a constant, saying what it is (``2 FLOP/MAC``: two operations a multiply-add).

The formula is evaluated by passprice itself, never by Python's ``eval``: a whitelisted grammar over :mod:`ast`
(numbers, input names, ``+ - * /``, unary ``-``, ``min``/``max``), in exact rational arithmetic
(:class:`fractions.Fraction`: ``4.48 / 4.8`` is 14/15, not a double), with units carried through: every input's
unit is parsed into a multiplier and a dimension (``TOPS`` is 10^12 op/s, ``GHz`` 10^9 cycle/s), ``+``, ``-``,
``min`` and ``max`` need equal dimensions, and the result must have the fact's dimension.

A serving stack's fact read off measured runs has a **run derivation** instead (:class:`RunDerivation`: a method, the
figure each run contributed, the runs by id; :mod:`passprice.fits` says what each field means and checks it against
today's runs). Its record lives here, beside a formula's, so a process that only reads a fact so derived (a warm
price under a lock made under a stack, which unpickles the pinned facts) imports neither :mod:`passprice.fits` nor
:mod:`passprice.measurements`.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import attrs

from passprice.errors import InputError

#: The longest formula passprice evaluates (characters), and the most syntax-tree nodes: a formula is a line of
#: arithmetic, and a bound keeps any input from making evaluation slow.
MAX_FORMULA = 400
MAX_NODES = 200
#: The largest binary exponent a number in a derivation may have, either way: every literal, input and intermediate
#: result lies within 2^±1000 (about 10^±301), so it converts to a double (whose range is 10^±308) without overflow
#: or underflow, and no exact number grows without bound. A card figure is at most 10^18 in its unit (the schema's
#: bounds), so a formula that passes this is one no card needs.
MAX_BINARY_EXPONENT = 1000
#: The most bits an exact number's numerator and denominator may hold together (a few thousand decimal digits):
#: within the exponent bound, a fraction can still grow in its digits (1/3 + 1/7 + …); this keeps each step quick.
MAX_BITS = 20000

_DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
#: Base symbols: the dimension each counts and its size in that dimension (a bit is an eighth of a byte).
_SYMBOLS: dict[str, tuple[str, Fraction]] = {
    "cycle": ("cycle", Fraction(1)),
    "FLOP": ("FLOP", Fraction(1)),
    "MAC": ("MAC", Fraction(1)),
    "bit": ("B", Fraction(1, 8)),
    "op": ("op", Fraction(1)),
    "B": ("B", Fraction(1)),
    "s": ("s", Fraction(1)),
    # Counts (where a serving stack's facts hold, issue 14): after "s", which a plural ends with but never prefixes.
    "rows": ("row", Fraction(1)),
    "positions": ("position", Fraction(1)),
}
#: Rates written as one word, with a prefix: ``TFLOPS`` is 10^12 FLOP/s, ``TOPS`` 10^12 op/s, ``GHz`` 10^9 cycle/s.
_RATES = {"FLOPS": "FLOP", "OPS": "op", "Hz": "cycle"}

Dims = tuple[tuple[str, int], ...]


def _dims(counts: Mapping[str, int]) -> Dims:
    return tuple(sorted((k, v) for k, v in counts.items() if v))


#: Seconds below one (a serving stack's fixed costs, issue 14): the only prefixed seconds a unit may have.
_SUBSECOND = {"ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}


def _term(text: str, unit: str) -> tuple[Fraction, dict[str, int]]:
    """One side of a unit (``TB``, ``GHz``, ``MAC``, ``ms``): its multiplier and dimension exponents."""
    if text in _SUBSECOND:
        return _SUBSECOND[text], {"s": 1}
    for word, symbol in _RATES.items():
        if text.endswith(word) and text[: -len(word)] in _DECIMAL:
            return Fraction(_DECIMAL[text[: -len(word)]]), {symbol: 1, "s": -1}
    for symbol, (dimension, size) in _SYMBOLS.items():
        if not text.endswith(symbol):
            continue
        prefix = text[: -len(symbol)]
        if symbol == "s" and prefix:
            continue
        if prefix in _DECIMAL:
            return size * _DECIMAL[prefix], {dimension: 1}
        if prefix in _BINARY and symbol == "B":
            return size * _BINARY[prefix], {dimension: 1}
    raise InputError(f"unit {unit!r}: {text!r} is not a unit passprice knows (B, bit, s, MAC, op, FLOP, cycle with a "
                     "prefix k M G T P E or, for bytes, Ki Mi Gi Ti; ms, us, ns; TOPS, TFLOPS, GHz; '1' for a count "
                     "or a share)")


@attrs.frozen
class Unit:
    """A unit: its ``multiplier`` to base units (exact) and its dimension, ``dims`` (symbol, exponent) pairs;
    ``TB/s`` is 10^12 with ``(("B", 1), ("s", -1))``, ``1`` is 1 with no dimension."""

    text: str
    multiplier: Fraction
    dims: Dims

    @classmethod
    def parse(cls, text: str) -> Unit:
        """The unit ``text`` writes: ``1`` (a count or share), or ``TERM`` or ``TERM/TERM`` where a term is a
        prefixed symbol (``TB``, ``KiB``, ``GMAC``, ``Tcycle``, ``Gbit``, ``op``, ``FLOP``, ``s``) or a rate word
        (``TOPS``, ``PFLOPS``, ``GHz``). Raises :class:`InputError` naming the unit for anything else. A unit is
        parsed once a process (:func:`_unit`: a registry writes a few dozen, thousands of times)."""
        return _unit(text) if cls is Unit else cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> Unit:
        if text == "1":
            return cls(text, Fraction(1), ())
        parts = text.split("/")
        if len(parts) > 2 or not all(parts):
            raise InputError(f"unit {text!r}: write one term or TERM/TERM (TB/s, op/MAC, B/cycle)")
        multiplier, counts = _term(parts[0], text)
        if len(parts) == 2:
            m2, c2 = _term(parts[1], text)
            multiplier /= m2
            for k, v in c2.items():
                counts[k] = counts.get(k, 0) - v
        return cls(text, multiplier, _dims(counts))

    def dimension(self) -> str:
        """The dimension in words: ``B/s``, ``MAC/s``, ``1`` (dimensionless)."""
        return dims_text(self.dims)


@functools.lru_cache(maxsize=1024)
def _unit(text: str) -> Unit:
    """:meth:`Unit.parse` of ``text``, kept (a :class:`Unit` is frozen; a unit that does not parse raises again)."""
    return Unit._parse(text)


def dims_text(dims: Dims) -> str:
    """A dimension as a unit would write it: ``B/s``, ``op/MAC``, ``1`` for none."""
    up = [k if v == 1 else f"{k}^{v}" for k, v in dims if v > 0]
    down = [k if v == -1 else f"{k}^{-v}" for k, v in dims if v < 0]
    text = "·".join(up) or "1"
    return text + ("/" + "·".join(down) if down else "")


def operations_hint(got: Dims, wanted: Dims) -> str:
    """What to write when a formula's dimension ``got`` is the fact's ``wanted`` but for operations (``op``,
    ``FLOP``) where the fact counts multiply-adds (``MAC``), or the reverse: a datasheet's TOPS or TFLOPS count a
    multiply-add as two operations, and a formula has no unit literals, so the 2 op/MAC is an input of its own
    (walkthrough 33: ``tops / 2`` read "its formula gives op/s, but the fact is in TMAC/s (MAC/s)" and no more);
    and when it is the fact's but for ``FLOP`` where ``op`` belongs, or the reverse (a TFLOPS rate over an ``op/MAC``
    input). ``""`` for any other mismatch."""
    ratio = dict(got)
    for k, v in wanted:
        ratio[k] = ratio.get(k, 0) - v
    ratio = {k: v for k, v in ratio.items() if v}
    for word in ("op", "FLOP"):
        if ratio == {word: 1, "MAC": -1}:
            return (f": a multiply-add is two operations; divide by an input ops_per_mac = {{ value = 2, unit = "
                    f"\"{word}/MAC\", constant = \"two operations, a multiply and an add, a multiply-add\" }}")
        if ratio == {word: -1, "MAC": 1}:
            return (f": a multiply-add is two operations; multiply by an input ops_per_mac = {{ value = 2, unit = "
                    f"\"{word}/MAC\", constant = \"two operations, a multiply and an add, a multiply-add\" }}")
    # FLOP and op are two units (walkthrough 37: TFLOPS over an op/MAC input read "its formula gives FLOP·MAC/op·s,
    # but the fact is in TMAC/s (MAC/s)" and no more): the constant's unit names what the rate counts
    if ratio in ({"FLOP": 1, "op": -1}, {"FLOP": -1, "op": 1}):
        return (": FLOP and op are two units (TFLOPS counts FLOP, TOPS counts op): divide a FLOP rate by an input in "
                "FLOP/MAC, an op rate by one in op/MAC")
    return ""


@attrs.frozen
class Quantity:
    """An exact value in base units with its dimension."""

    value: Fraction
    dims: Dims = ()


def quantity(amount: int | float, unit: str) -> Quantity:
    """``amount`` (as written: ``4.48`` is 448/100 exactly) in ``unit``, as a base-unit :class:`Quantity`. Kept
    for the latest few thousand (amount, unit) pairs (a :class:`Quantity` is frozen; equal amounts, such as ``1`` and
    ``1.0``, are the same exact value)."""
    return _quantity(amount, unit)


@functools.lru_cache(maxsize=4096)
def _quantity(amount: int | float, unit: str) -> Quantity:
    parsed = Unit.parse(unit)
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(amount))
    return Quantity(exact * parsed.multiplier, parsed.dims)


class FormulaError(Exception):
    """A formula that cannot be evaluated: bad syntax, a name no input has, a construct outside the grammar,
    mismatched dimensions, a division by zero, a number out of range. ``str()`` says which."""


def bounded(value: Fraction, what: str | Callable[[], str]) -> Fraction:
    """``value`` when it is 0 or its binary exponent is within ±:data:`MAX_BINARY_EXPONENT` and its numerator and
    denominator hold at most :data:`MAX_BITS` bits together. Checked on exact integers' bit lengths, never through a
    float. Raises :class:`FormulaError` naming ``what`` (``the result of dot * 1e200``, ``the input dot``; a
    function giving the text, called only to raise: a formula's text is not unparsed for every step that holds)."""
    if value == 0:
        return value
    numerator, denominator = abs(value.numerator).bit_length(), value.denominator.bit_length()
    if abs(numerator - denominator) > MAX_BINARY_EXPONENT or numerator + denominator > MAX_BITS:
        what = what() if callable(what) else what
    if abs(numerator - denominator) > MAX_BINARY_EXPONENT:
        raise FormulaError(
            f"{what} is {_decimal_e(value)} in base units, out of the range passprice computes with (10^-300 to "
            "10^300)"
        )
    if numerator + denominator > MAX_BITS:
        raise FormulaError(f"{what} needs more than {MAX_BITS:,} bits to hold exactly: simplify the formula")
    return value


def _combine(a: Dims, b: Dims, sign: int) -> Dims:
    counts = dict(a)
    for k, v in b:
        counts[k] = counts.get(k, 0) + sign * v
    return _dims(counts)


def evaluate(formula: str, env: Mapping[str, Quantity]) -> Quantity:
    """The value of ``formula`` with each name bound to ``env``'s quantity, in exact arithmetic with units.

    The grammar: numbers (dimensionless), names, ``a + b``, ``a - b`` (equal dimensions), ``a * b``, ``a / b``,
    ``-a``, ``+a``, parentheses, and ``min(a, b, …)``/``max(a, b, …)`` (equal dimensions). At most
    :data:`MAX_FORMULA` characters and :data:`MAX_NODES` syntax-tree nodes. Raises :class:`FormulaError`."""
    if len(formula) > MAX_FORMULA:
        raise FormulaError(f"longer than {MAX_FORMULA} characters")
    if not formula.isascii():
        # Python folds identifiers to NFKC (a fullwidth ｄｏｔ would be read as dot): the grammar is ASCII.
        first = next(ch for ch in formula if not ch.isascii())
        raise FormulaError(f"{first!r} (U+{ord(first):04X}) is not ASCII: write numbers, input names and operators in "
                           "ASCII")
    tree = _tree(formula.strip())
    try:
        return _eval(tree.body, env)
    except (ArithmeticError, ValueError, MemoryError, RecursionError) as e:  # the last resort: one line, no traceback
        raise FormulaError(f"cannot be evaluated: {type(e).__name__}: {e}") from None


@functools.lru_cache(maxsize=1024)
def _tree(formula: str) -> ast.Expression:
    """The syntax tree of ``formula`` (an ASCII expression of at most :data:`MAX_FORMULA` characters), parsed once a
    process (:func:`_eval` only reads it). Raises :class:`FormulaError` (not kept: raised again on the next call)."""
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as e:
        raise FormulaError(f"not an expression: {e.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise FormulaError("not an expression passprice evaluates") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise FormulaError(f"more than {MAX_NODES} terms")
    return tree


def _eval(node: ast.AST, env: Mapping[str, Quantity]) -> Quantity:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        number = node.value
        if isinstance(number, float) and not math.isfinite(number):
            raise FormulaError(f"{number!r} is not a finite number")
        exact = Fraction(number) if isinstance(number, int) else Fraction(repr(number))
        big = isinstance(number, int) and number > 10**30  # at most 400 digits: the formula's length
        shown = f"an integer of {len(str(number))} digits" if big else repr(number)
        return Quantity(bounded(exact, f"the number {shown}"))
    if isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "none"
            raise FormulaError(f"{node.id!r} is not an input (inputs: {known})")
        given = env[node.id]
        bounded(given.value, f"the input {node.id}")
        return given
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        q = _eval(node.operand, env)
        return Quantity(-q.value, q.dims) if isinstance(node.op, ast.USub) else q
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Add | ast.Sub):
            if a.dims != b.dims:
                op = "+" if isinstance(node.op, ast.Add) else "-"
                raise FormulaError(f"{dims_text(a.dims)} {op} {dims_text(b.dims)}: adds unlike quantities")
            total = a.value + b.value if isinstance(node.op, ast.Add) else a.value - b.value
            return Quantity(bounded(total, lambda: f"the result of {_source(node)}"), a.dims)
        if isinstance(node.op, ast.Mult):
            product = bounded(a.value * b.value, lambda: f"the result of {_source(node)}")
            return Quantity(product, _combine(a.dims, b.dims, 1))
        if b.value == 0:
            raise FormulaError("division by zero")
        quotient = bounded(a.value / b.value, lambda: f"the result of {_source(node)}")
        return Quantity(quotient, _combine(a.dims, b.dims, -1))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("min", "max")
        and not node.keywords
        and len(node.args) >= 2
    ):
        values = [_eval(arg, env) for arg in node.args]
        if len({v.dims for v in values}) != 1:
            raise FormulaError(f"{node.func.id}() of unlike quantities")
        pick = min if node.func.id == "min" else max
        return Quantity(pick(v.value for v in values), values[0].dims)
    shown = type(node).__name__
    if isinstance(node, ast.Call):
        shown = "a call other than min(a, b, …) or max(a, b, …)"
    elif isinstance(node, ast.BinOp | ast.UnaryOp):
        shown = f"the operator {type(node.op).__name__}"
    raise FormulaError(f"{shown} is not allowed (numbers, input names, + - * /, min, max)")


def _powers(node: ast.AST, power: int, out: dict[str, list[int] | None]) -> None:
    """Collect into ``out`` each name's powers in ``node`` taken with ``power`` (+1, or −1 under a division), one a
    time it is named, or ``None`` for a name also met outside a product or quotient (a sum, a ``min``): its
    figure does not cancel by powers."""
    if isinstance(node, ast.Name):
        seen = out.setdefault(node.id, [])
        if seen is not None:
            seen.append(power)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _powers(node.operand, power, out)
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
        _powers(node.left, power, out)
        _powers(node.right, -power if isinstance(node.op, ast.Div) else power, out)
        return
    for child in ast.walk(node):  # a sum, a min or max, anything else: its names do not cancel by powers
        if isinstance(child, ast.Name) and child is not getattr(node, "func", None):
            out[child.id] = None


def _source(node: ast.AST) -> str:
    """The formula text of ``node`` (at most 60 characters), for an error naming the step that failed."""
    text = ast.unparse(node)
    return text if len(text) <= 60 else f"{text[:57]}…"


def _decimal_e(value: Fraction) -> str:
    """``5e-312``: a nonzero exact value in scientific notation to 3 digits, without converting it to a float."""
    if value == 0:
        return "0"
    e = _exponent(abs(value))
    mantissa = abs(value) / Fraction(10) ** e
    digits = format(Decimal(mantissa.numerator) / Decimal(mantissa.denominator), ".3g")
    return f"{'-' if value < 0 else ''}{digits}e{e}"


@attrs.frozen
class Input:
    """One input of a derivation: its ``name`` in the formula, its ``amount`` and ``unit`` as written, and what it
    is: a ``fact`` path of the same record (its value when derived), a figure read at ``locator`` in ``source``
    (``None``: the fact's own source), or a ``constant`` (what it is, in words)."""

    name: str
    amount: int | float
    unit: str
    fact: str | None = None
    source: str | None = None
    locator: str | None = None
    constant: str | None = None

    @property
    def kind(self) -> str:
        """``fact``, ``figure`` or ``constant``."""
        if self.fact is not None:
            return "fact"
        return "constant" if self.constant is not None else "figure"

    def quantity(self) -> Quantity:
        """The input's recorded value in base units. Raises :class:`InputError` for a unit passprice cannot read."""
        return quantity(self.amount, self.unit)

    def shown(self) -> str:
        """``4.48 TB/s``: the amount as written, with its unit (a bare number for ``1``)."""
        from passprice.facts import shown_unit

        return _amount(self.amount) + ("" if self.unit == "1" else f" {shown_unit(self.unit, self.amount)}")

    def to_entry(self) -> dict[str, Any]:
        """The input as its TOML table (the keys it was written with)."""
        entry: dict[str, Any] = {"value": self.amount, "unit": self.unit}
        for key in ("fact", "source", "locator", "constant"):
            if getattr(self, key) is not None:
                entry[key] = getattr(self, key)
        return entry


def _amount(amount: int | float) -> str:
    if isinstance(amount, int):
        return f"{amount}"
    text = f"{amount:g}"
    return text if float(text) == amount else repr(amount)


@attrs.frozen
class Derivation:
    """A fact's derivation: the ``formula``, its ``inputs`` in the order written, and ``digits`` (the value is the
    result rounded to that many significant digits; ``None``: exactly the result)."""

    formula: str
    inputs: tuple[Input, ...]
    digits: int | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Derivation:
        """The derivation a schema-valid ``derivation`` table describes."""
        inputs = tuple(
            Input(
                name=name,
                amount=table["value"],
                unit=table["unit"],
                fact=table.get("fact"),
                source=table.get("source"),
                locator=table.get("locator"),
                constant=table.get("constant"),
            )
            for name, table in entry.get("inputs", {}).items()
        )
        return cls(entry["formula"], inputs, entry.get("digits"))

    def to_entry(self) -> dict[str, Any]:
        """The derivation as its TOML table."""
        out: dict[str, Any] = {"formula": self.formula}
        if self.digits is not None:
            out["digits"] = self.digits
        out["inputs"] = {i.name: i.to_entry() for i in self.inputs}
        return out

    def facts(self) -> tuple[str, ...]:
        """The fact paths it takes as inputs."""
        return tuple(i.fact for i in self.inputs if i.fact is not None)

    def sources(self, own: str | None) -> tuple[str, ...]:
        """The source ids its figures are read from (``own``, the fact's source, for a figure naming none)."""
        out = [i.source or own for i in self.inputs if i.kind == "figure"]
        return tuple(dict.fromkeys(s for s in out if s is not None))

    def result(self, overrides: Mapping[str, Quantity] | None = None) -> Quantity:
        """The formula's value from the recorded inputs, each replaced by ``overrides[name]`` where given.
        Raises :class:`FormulaError` (or :class:`InputError` for an input's unit)."""
        env = {i.name: i.quantity() for i in self.inputs}
        env.update(overrides or {})
        return evaluate(self.formula, env)

    def cancelled(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The inputs whose figure cancels out of the formula: each named more than once, every time as a factor
        (its power in the product, +1 over the line, −1 under it), the powers summing to 0, and the result the same
        with the input doubled (exact arithmetic): ``(("lanes", (1, -1)),)`` of ``lanes * (vector / (lanes *
        lane_rate))``, the H200's ``scale``. Such an input's value moves nothing (16,896 or 20,000 lanes give the same
        33.5 Tcycle/s): a reader of its citation should know. Empty when none does, or the formula does not evaluate.
        Raises nothing."""
        try:
            tree = _tree(self.formula.strip())
        except FormulaError:
            return ()
        powers: dict[str, list[int] | None] = {}
        _powers(tree.body, 1, powers)
        out = []
        for i in self.inputs:
            seen = powers.get(i.name)
            if seen is None or len(seen) < 2 or sum(seen) != 0:
                continue
            try:
                doubled = Quantity(i.quantity().value * 2, i.quantity().dims)
                if self.result({i.name: doubled}).value != self.result().value:
                    continue
            except (FormulaError, InputError):
                continue
            out.append((i.name, tuple(seen)))
        return tuple(out)

    def in_formula_order(self) -> tuple[Input, ...]:
        """The inputs in the order the formula first names them (``lanes * (vector / (lanes * lane_rate))``: lanes,
        vector, lane_rate), any it does not name after, as written: one order whether the derivation is read from a
        card file (its keys as written) or from a lock (its keys sorted). Walkthrough 35: ``audit SERVING`` and
        ``audit LOCK`` listed one derivation's inputs in two orders."""
        first: dict[str, int] = {}
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.formula):
            first.setdefault(name, len(first))
        return tuple(sorted(self.inputs, key=lambda i: first.get(i.name, len(first))))

    def describe(self) -> str:
        """One line: ``dot / bandwidth, to 4 significant digits; dot = 4.48 TB/s (figure: …), bandwidth =
        memory.bandwidth 4.8 TB/s``, the inputs in :meth:`in_formula_order`."""
        rounding = f", to {self.digits} significant digits" if self.digits is not None else ""
        parts = []
        for i in self.in_formula_order():
            if i.kind == "fact":
                what = f"the fact {i.fact}, {i.shown()} when derived"
            elif i.kind == "constant":
                what = f"{i.shown()} ({i.constant})"
            else:
                where = f"{i.source}: " if i.source is not None else ""
                what = f"{i.shown()} ({where}{i.locator})"
            parts.append(f"{i.name} = {what}")
        return f"{self.formula}{rounding}; " + "; ".join(parts)


def _exponent(magnitude: Fraction) -> int:
    """The exponent e with 10^e <= magnitude < 10^(e+1) of a positive ``magnitude``, exactly: estimated from the
    bit lengths of its numerator and denominator (never through a float, which overflows past 10^308 and underflows
    below 10^-323), then corrected by comparing exact powers of ten."""
    scale = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    exponent = math.floor(scale * math.log10(2))
    while Fraction(10) ** exponent > magnitude:
        exponent -= 1
    while Fraction(10) ** (exponent + 1) <= magnitude:
        exponent += 1
    return exponent


def significant(value: Fraction, digits: int) -> Fraction:
    """``value`` rounded to ``digits`` significant digits (half away from zero)."""
    if value == 0:
        return value
    quantum = Fraction(10) ** (_exponent(abs(value)) - digits + 1)
    rounded = math.floor(abs(value) / quantum + Fraction(1, 2)) * quantum
    return rounded if value > 0 else -rounded


def follows(written: Fraction, result: Fraction, digits: int | None) -> bool:
    """Whether a value ``written`` (in the fact's unit) is ``result`` (in the same unit): exactly, or, with
    ``digits``, to within half a unit in the result's last significant digit (either rounding of a tie passes)."""
    if digits is None or result == 0:
        return written == result
    half = Fraction(10) ** (_exponent(abs(result)) - digits + 1) / 2
    return abs(written - result) <= half


def decimal_text(value: Fraction, digits: int | None) -> str:
    """``value`` as a decimal for people: to ``digits`` significant digits, else to 10."""
    rounded = significant(value, digits or 10)
    text = format(Decimal(rounded.numerator) / Decimal(rounded.denominator), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


#: The most significant digits a derivation without ``digits`` is written to (``fact recompute``): a double holds 15
#: decimal digits exactly, so a value of at most 15 reads back as the same decimal.
EXACT_DIGITS = 15


def written_exactly(value: Fraction) -> bool:
    """Whether ``value`` is a decimal of at most :data:`EXACT_DIGITS` significant digits, the only values ``fact
    recompute`` writes for a derivation without ``digits`` (4.48 / 4.8 = 0.9333… is not; 7.35 / 8 = 0.91875 is).
    Raises nothing."""
    rest = value.denominator
    for factor in (2, 5):
        while rest % factor == 0:
            rest //= factor
    if rest != 1:
        return False
    with localcontext() as context:
        context.prec = 400
        text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return len(text.replace("-", "").replace(".", "").strip("0")) <= EXACT_DIGITS


@attrs.frozen
class Changed:
    """A fact input whose fact has moved since the derivation was made: the input's ``name``, the ``path`` of the
    fact, the value ``recorded`` in the derivation and the fact's value ``now`` (as written, with units), or
    ``None`` when the record no longer has that fact."""

    name: str
    path: str
    recorded: str
    now: str | None

    def describe(self) -> str:
        """``bandwidth = memory.bandwidth: 4.8 TB/s when derived, 5.2 TB/s now``."""
        now = self.now if self.now is not None else "gone"
        return f"{self.name} = {self.path}: {self.recorded} when derived, {now} now"


@attrs.frozen
class Finding:
    """What recomputing a derived fact found: ``path`` of the fact; ``kind`` — ``stale`` (a fact input moved),
    ``mismatch`` (the value does not follow from the inputs it records) or ``broken`` (the derivation cannot be
    evaluated); the ``changed`` inputs; the value recomputed from today's inputs (``expected``, as written in the
    fact's unit, or ``None``); and the ``message``, one line naming each."""

    path: str
    kind: str
    message: str
    changed: tuple[Changed, ...] = ()
    expected: str | None = None
    #: A ``stale`` fact whose written value still follows from today's inputs (only the inputs it records moved).
    follows: bool = False
    #: The other facts one finding covers (a serving stack's facts fitted together, whose fit's runs moved: one
    #: line names them all, ``path`` the first).
    also: tuple[str, ...] = ()
    #: A ``mismatch`` of a serving stack fit's recorded ``errors`` (:func:`passprice.calibrate.verify_stack`), not of
    #: the fitted facts' values, which may still follow: ``check`` and the review fail it; a lock resting on the facts
    #: is marked by it only when no fact's value moved (:func:`passprice.review.impacts.stack_refit_findings`; session
    #: 29: it named all eight facts of a fit whose three moved).
    of_errors: bool = False
    #: How far the value moved, as the relative change ``|today / written - 1|`` (``None``: not told), and the move
    #: as a few words (``share.scale 0.002051 → 0.00824``): what a one-line summary of many findings ranks and names
    #: (:meth:`passprice.stale.Stale.summary`). Not in ``--json`` (its ``message`` and ``expected`` say it).
    moved: float | None = None
    move: str | None = None
    #: The command that makes the fact follow again (``passprice calibrate --stack NAME``), ``None`` when none is told.
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding for ``--json``."""
        return {
            "path": self.path,
            "kind": self.kind,
            "changed": [attrs.asdict(c) for c in self.changed],
            "expected": self.expected,
            "message": self.message,
        }


def _written(fact: Any) -> str:
    describe = getattr(fact, "describe", None)
    return str(describe()) if callable(describe) else str(fact)


def recheck(path: str, fact: Any, facts: Mapping[str, Any]) -> Finding | None:
    """Recompute the derivation of ``fact`` (at ``path``) from the other ``facts`` of its record (path → fact, each
    with ``amount``, ``unit``, ``value`` and ``derivation``); ``None`` when it follows and no input moved.

    A fact input whose fact's value (in base units) differs from the value recorded makes the fact ``stale``, named
    with every such input and the value today's inputs give; a value that does not follow from the recorded inputs
    is a ``mismatch``; a derivation that cannot be evaluated (syntax, unknown name, unlike dimensions, a unit
    passprice cannot read, the result's dimension not the fact's) is ``broken``."""
    derivation = fact.derivation
    if not isinstance(derivation, Derivation):
        return None
    try:
        target = Unit.parse(fact.unit)
        changed: list[Changed] = []
        overrides: dict[str, Quantity] = {}
        for i in derivation.inputs:
            if i.fact is None:
                continue
            today = facts.get(i.fact)
            if today is None:
                changed.append(Changed(i.name, i.fact, i.shown(), None))
                continue
            now = quantity(today.amount, today.unit)
            if now != i.quantity():
                changed.append(Changed(i.name, i.fact, i.shown(), _written(today)))
                overrides[i.name] = now
        recorded = derivation.result()
        if recorded.dims != target.dims:
            return Finding(
                path,
                "broken",
                f"{path}.derivation: its formula gives {dims_text(recorded.dims)}, but the fact is in {fact.unit} "
                f"({target.dimension()}){operations_hint(recorded.dims, target.dims)}",
            )
        written = quantity(fact.amount, fact.unit).value / target.multiplier
        if any(c.now is None for c in changed):
            gone = ", ".join(f"{c.name} = {c.path}" for c in changed if c.now is None)
            return Finding(path, "broken", f"{path}: its derivation's input {gone} names no fact of this record",
                           tuple(changed))
        if changed:
            today_value = derivation.result(overrides).value / target.multiplier
            expected = decimal_text(today_value, derivation.digits)
            if follows(written, today_value, derivation.digits):
                # The inputs moved, but not enough to change the value as written: record the new inputs.
                what = "; ".join(c.describe() for c in changed)
                return Finding(
                    path,
                    "stale",
                    f"{path} derives from inputs that changed ({what}); its value {_written(fact)} still follows, "
                    "but the derivation records the old inputs: update them",
                    tuple(changed),
                    expected,
                    follows=True,
                )
            what = "; ".join(c.describe() for c in changed)
            # Walkthrough 28: `fact recompute` refuses a value no short decimal writes when the derivation has no
            # digits (the B200's streams.read, 7.35 TB/s / 7.7 TB/s), which the stale line sent the user to run.
            exact = derivation.digits is not None or written_exactly(today_value)
            undigited = ("" if exact else
                         f"; its derivation has no digits and no decimal of at most {EXACT_DIGITS} digits is that "
                         f"value: add {path}.derivation.digits (the significant digits it is rounded to) before "
                         "`fact recompute` can write it")
            return Finding(
                path,
                "stale",
                f"{path} is stale: its input {what}; recomputed from today's inputs it is {expected}"
                f"{'' if exact else '…'}, not {_written(fact)}{undigited}",
                tuple(changed),
                expected,
            )
        value = recorded.value / target.multiplier
        if not follows(written, value, derivation.digits):
            rounding = f" (to {derivation.digits} significant digits)" if derivation.digits is not None else ""
            return Finding(
                path,
                "mismatch",
                f"{path}: {_written(fact)} does not follow from its derivation: {derivation.formula} gives "
                f"{decimal_text(value, derivation.digits)}{rounding} from the inputs it records",
                (),
                decimal_text(value, derivation.digits),
            )
    except FormulaError as e:
        return Finding(path, "broken", f"{path}.derivation.formula: {e}")
    except InputError as e:
        return Finding(path, "broken", f"{path}.derivation: {e}")
    except (ArithmeticError, ValueError) as e:  # a last resort: any arithmetic failure is one line naming the fact
        return Finding(path, "broken", f"{path}.derivation: cannot be evaluated: {type(e).__name__}: {e}")
    return None


def recheck_all(facts: Mapping[str, Any]) -> list[Finding]:
    """:func:`recheck` of every fact of a record (path → fact) that has a derivation, in path order; a fact that
    derives, through its inputs, from itself is ``broken`` (:func:`cycle_through`), whether or not its value follows:
    a cycle reported as two stale facts sent the user to recompute them, which ``fact recompute`` then refused.

    Inside a snapshot (:mod:`passprice.snapshot`) the same fact objects at the same paths are rechecked once
    (:data:`RECHECKED` counts the records rechecked): a review meets each record's facts several times, and copies of
    one card file share their fact objects (:func:`passprice.cards.document_and_facts`). The key is the objects
    themselves (held by the memo, so no other object takes their place), never an equality that would let ``2`` and
    ``2.0`` answer for each other."""
    from passprice import snapshot

    if not snapshot.active():
        return _recheck_all(facts)
    items = tuple(facts.items())
    _held, found = snapshot.made(
        ("recheck", tuple((path, id(fact)) for path, fact in items)), lambda: (items, tuple(_recheck_all(facts)))
    )
    return list(found)


#: How many records :func:`recheck_all` rechecked in this process (what its tests count).
RECHECKED = 0


def _recheck_all(facts: Mapping[str, Any]) -> list[Finding]:
    global RECHECKED
    RECHECKED += 1
    out = []
    for path, fact in facts.items():
        found = recheck(path, fact, facts)
        if found is None or found.kind == "stale":
            cycle = cycle_through(facts, path)
            if cycle:
                found = Finding(path, "broken", f"{path}.derivation: a cycle of derivations: {' -> '.join(cycle)} "
                                "(a fact cannot derive from itself: derive one of them from its source)")
        if found is not None:
            out.append(found)
    return out


def cycle_through(facts: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """The derivations leading from fact ``path`` back to itself, ``(path, a, …, path)`` where each fact derives
    from the next; empty when there is no such cycle. ``facts`` maps each path of a record to an object with a
    ``derivation`` (a :class:`Derivation`, or anything else for none)."""
    stack: list[tuple[str, tuple[str, ...]]] = [(path, (path,))]
    seen = {path}
    while stack:
        node, trail = stack.pop()
        derivation = getattr(facts.get(node), "derivation", None)
        if not isinstance(derivation, Derivation):
            continue
        for following in derivation.facts():
            if following == path:
                return (*trail, following)
            if following not in seen:
                seen.add(following)
                stack.append((following, (*trail, following)))
    return ()


def dependants(facts: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """The paths of the facts of a record whose derivation takes fact ``path`` as an input (directly)."""
    return tuple(
        p
        for p, f in facts.items()
        if isinstance(f.derivation, Derivation) and path in f.derivation.facts()
    )


#: The methods a run derivation may name, and what each does (in words, for people and for DESIGN.md).
METHODS: dict[str, str] = {
    "nnls-relative-pass-time": (
        "least squares on the relative error of the pass time (NNLS: overheads >= 0, shares <= 1; terms.serial on a "
        "0.05 grid)"
    ),
    "min": "the least of the runs' figures",
    "max": "the largest of the runs' figures",
}

#: The figure of a run a derivation may take, and its unit in words.
FIGURES: dict[str, str] = {
    "tokens_per_s": "tokens/s",
    "rows": "token-rows a pass",
    "first": "positions",
    "last": "positions",
}


@attrs.frozen
class RunInput:
    """One run a derivation rests on: its measurement ``run`` id and the ``value`` of the figure it contributed."""

    run: str
    value: int | float

    def to_entry(self) -> dict[str, Any]:
        """The input as its TOML inline table: ``{ run = ID, value = FIGURE }``."""
        return {"run": self.run, "value": self.value}

    def __reduce__(self) -> tuple[type[RunInput], tuple[str, int | float]]:
        """Pickled as its two values, rebuilt by its constructor: a lock of a measured fact holds over a thousand
        runs, and attrs' state dictionaries made unpickling them most of a warm price under 10,001 such locks
        (session 32)."""
        return RunInput, (self.run, self.value)


@attrs.frozen
class RunDerivation:
    """A fact's derivation from measured runs (module docstring): ``method``, ``figure``, ``runs`` (in the order
    written), and for a fit ``digits``, ``tolerance`` (relative) and ``errors`` (name → relative error, as
    reported)."""

    method: str = attrs.field(validator=attrs.validators.in_(tuple(METHODS)))
    figure: str = attrs.field(validator=attrs.validators.in_(tuple(FIGURES)))
    runs: tuple[RunInput, ...]
    digits: int | None = None
    tolerance: float | None = None
    errors: Mapping[str, float] | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> RunDerivation:
        """The derivation a schema-valid ``derivation`` table with a ``method`` describes."""
        errors = entry.get("errors")
        return cls(
            method=entry["method"],
            figure=entry["figure"],
            runs=tuple(RunInput(r["run"], r["value"]) for r in entry["runs"]),
            digits=entry.get("digits"),
            tolerance=entry.get("tolerance"),
            errors=dict(errors) if errors is not None else None,
        )

    def to_entry(self) -> dict[str, Any]:
        """The derivation as its TOML table (the keys it was written with, in a fixed order)."""
        out: dict[str, Any] = {"method": self.method, "figure": self.figure}
        if self.digits is not None:
            out["digits"] = self.digits
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        if self.errors is not None:
            out["errors"] = dict(self.errors)
        out["runs"] = [r.to_entry() for r in self.runs]
        return out

    def ids(self) -> tuple[str, ...]:
        """The run ids, in order."""
        return tuple(r.run for r in self.runs)

    def describe(self) -> str:
        """One line: the method in words, the figure, how many runs (the first and the last named), and for a fit
        its rounding and tolerance."""
        n = len(self.runs)
        if n == 0:
            named = "no runs"
        elif n == 1:
            named = f"run {self.runs[0].run} ({shown_figure(self.runs[0].value)})"
        else:
            named = (
                f"{n} measured runs ({self.runs[0].run} = {shown_figure(self.runs[0].value)} … {self.runs[-1].run} = "
                f"{shown_figure(self.runs[-1].value)})"
            )
        text = f"{self.method}: {METHODS[self.method]}, of the {FIGURES[self.figure]} of {named}"
        if self.digits is not None:
            text += f", to {self.digits} significant digits"
        if self.tolerance is not None:
            text += f"; passprice check re-fits it within {100 * self.tolerance:g} %"
        return text


def shown_figure(value: float) -> str:
    """A run's figure as a run derivation names it: ``%g`` where that reads back as the same number, else in full
    (``repr``). Raises nothing."""
    return f"{value:g}" if float(f"{value:g}") == value else repr(value)
