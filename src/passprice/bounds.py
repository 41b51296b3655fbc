"""A number given on the command line is bounded where it comes in, by the same bounds a file giving the same
quantity is: the JSON Schemas state each bound once (``schema/*.schema.json``), and the command line reads it from
there; an option no file carries is bounded by the library constant that already limits it.

So ``--batch`` takes what a sweep file's ``batches`` take, ``--limit`` what a serving's ``contexts.limit`` takes,
``--kv-bytes`` what its ``kv_bytes`` takes, and a 310-digit ``--batch`` or a ``--kv-bytes 1e400`` is one error line
(exit 2), never an ``OverflowError`` deep in the pricer.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable

import attrs

from passprice.errors import InputError

#: The largest value a u32 count holds (positions, pages, batches, rows): the bound the schemas give them.
U32 = 4_294_967_295

#: A seed's bound: any 64-bit unsigned whole number (NumPy's and Python's generators take more, but a seed past it is
#: a typo, not a choice).
U64 = 18_446_744_073_709_551_615

#: The most arrivals a second ``simulate --rate`` takes: a nanosecond between requests, far past any serving.
MAX_RATE = 1e9

_DIGITS = re.compile(r"-?[0-9]+")

#: What Python's ``int`` and ``float`` take but a number typed for passprice may not hold: a space (``' 5'``), a
#: ``+`` sign (``+5``, ``1-+64``; an exponent's, ``1e+3``, is a float's own) or an underscore (``1_000``). Each is
#: refused by name rather than read as the number.
_MISSPELT = re.compile(r"\s|_|(?<![eE])\+")


def misspelt(text: str) -> str | None:
    """What is wrong with a number written as ``text`` besides its digits: ``"holds a space"``, ``"holds a '+'
    sign"`` or ``"holds an underscore"``; ``None`` when it has none of them. The one rule for every count and number
    passprice reads from its command line (options, lists and ranges): digits as written, nothing around them."""
    found = _MISSPELT.search(text)
    if found is None:
        return None
    if found[0] == "+":
        return "holds a '+' sign"
    return "holds an underscore" if found[0] == "_" else "holds a space"


#: The most characters of a number typed on the command line an error line echoes as typed: past it, a run of digits
#: is named by its length (``a 5,000-digit number``), as the trace reader names a JSON integer too long to print
#: (``passprice.trace.SHOWN_CHARS``, the same 40): ``sweep --draft-tokens 111…(5,000 digits),2`` echoed every digit.
SHOWN_CHARS = 40

#: Digits Python's ``int`` reads from text (``sys.get_int_max_str_digits()``'s default): past them ``int`` raises
#: ``ValueError``, though the text is a number.
INT_DIGITS = 4_300

_DECIMAL = re.compile(r"-?[0-9]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?")
_LONG_DIGITS = re.compile(rf"[0-9]{{{SHOWN_CHARS + 1},}}")


def long_number(text: str) -> bool:
    """Whether ``text`` is a number written in ASCII digits alone (a ``-`` sign allowed) too long to echo (more than
    :data:`SHOWN_CHARS` characters)."""
    return len(text) > SHOWN_CHARS and _DIGITS.fullmatch(text) is not None


def shown_part(text: str) -> str:
    """A part of a list typed on the command line as an error line shows it: quoted as typed (``'1x1'``) while at most
    :data:`SHOWN_CHARS` characters; a longer run of digits by its length (``a 5,000-digit number``, ``minus a
    5,000-digit number``), inside a longer part too (``'1-[a 5,000-digit number]'``); a longer decimal number by its
    characters (``a 403-character number``, as the trace reader names one); anything else longer by its first
    characters and its length. Raises nothing."""
    if len(text) <= SHOWN_CHARS:
        return repr(text)
    if long_number(text):
        digits = len(text.lstrip("-"))
        return f"{'minus ' if text.startswith('-') else ''}a {digits:,}-digit number"
    if _DECIMAL.fullmatch(text) and any(c.isdigit() for c in text):  # 0.000…1, 1.5e-400: as the trace reader says
        return f"a {len(text):,}-character number"
    named = _LONG_DIGITS.sub(lambda m: f"[a {len(m[0]):,}-digit number]", text)
    if len(named) <= 2 * SHOWN_CHARS:
        return repr(named)
    return f"{text[:30]!r}… ({len(text):,} characters)"


@attrs.frozen
class Bound:
    """The values a number may take: ``minimum`` … ``maximum`` (either ``None``: unbounded on that side; each
    exclusive when its flag says so), whole numbers only when ``integer``; ``where`` says who states it (a schema
    file and key, or a constant)."""

    minimum: float | None
    maximum: float | None
    integer: bool = False
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    where: str = ""

    def describe(self) -> str:
        """The range in words: ``a whole number from 1 to 4,294,967,295``, ``a finite number above 0, at most 8``."""
        kind = "a whole number" if self.integer else "a finite number"
        low = None if self.minimum is None else _shown(self.minimum)
        high = None if self.maximum is None else _shown(self.maximum)
        if low is not None and high is not None and not self.exclusive_minimum and not self.exclusive_maximum:
            return f"{kind} from {low} to {high}"
        parts = []
        if low is not None:
            parts.append(f"above {low}" if self.exclusive_minimum else f"at least {low}")
        if high is not None:
            parts.append(f"below {high}" if self.exclusive_maximum else f"at most {high}")
        return " ".join([kind, " and ".join(parts)]).strip()

    def parse(self, text: str) -> int | float:
        """``text`` as a number within the bound: ASCII digits for an integer (``int`` would take Arabic-Indic digits
        and thousands of them), a finite float otherwise; nothing around them (:func:`misspelt`: ``' 5'``, ``+5`` and
        ``1_000`` are refused, not read as 5 and 1,000). Raises :class:`InputError` with a message that shows a long
        value by its length."""
        problem = misspelt(text)
        if problem is not None:
            raise InputError(f"{_cut(text)!r} {problem}: write the number in digits alone ({self.describe()})")
        if self.integer:
            if not _DIGITS.fullmatch(text):
                suffixed = re.fullmatch(r"([0-9]{1,9})([kKmM])", text)
                hint = ""
                if suffixed:  # `kv --contexts 4k` takes k = 1,024; a count option does not (newcomer walkthrough 12)
                    times = 1024 if suffixed[2] in "kK" else 1024 * 1024
                    hint = f"; write {int(suffixed[1]) * times} for {text} (k = 1,024 is for kv --contexts alone)"
                raise InputError(f"{_cut(text)!r} is not a whole number ({self.describe()}){hint}")
            digits = text.lstrip("+-").lstrip("0")
            if len(digits) > 30:
                sign = "a negative" if text.startswith("-") else "an"
                raise InputError(f"{sign} integer of {len(digits)} digits is out of range ({self.describe()})")
            return self.check(int(text))
        try:
            if not text.isascii():  # float() would read Arabic-Indic and other Unicode digits as a number
                raise ValueError(text)
            number = float(text)
        except ValueError:
            raise InputError(f"{_cut(text)!r} is not a number ({self.describe()})") from None
        if math.isinf(number) and "inf" not in text.lower():  # 1e400 is a finite number a double cannot hold
            raise InputError(f"{_cut(text)!r} overflows a float (at most ±1.8e308) ({self.describe()})")
        if not math.isfinite(number):
            raise InputError(f"{_cut(text)!r} is not a finite number ({self.describe()})")
        if number == 0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
            # `--position 1e-400` was taken as 0 (or "0 is out of range"), a number the line does not hold (round 33)
            raise InputError(f"{_cut(text)!r} underflows a float (read as 0: nothing but 0 is nearer zero than "
                             f"±4.9e-324) ({self.describe()})")
        return self.check(unsigned_zero(number))

    def check(self, value: int | float) -> int | float:
        """``value`` when it lies within the bound; else :class:`InputError` saying which side it passed."""
        low, high = self.minimum, self.maximum
        below = low is not None and (value <= low if self.exclusive_minimum else value < low)
        above = high is not None and (value >= high if self.exclusive_maximum else value > high)
        if below or above:
            raise InputError(f"{_shown(value)} is out of range ({self.describe()})")
        return value


def unsigned_zero(value: float) -> float:
    """``value`` with a negative zero made ``0.0`` (IEEE 754: ``-0.0 + 0.0`` is ``+0.0``; every other value, NaN and
    the infinities included, is returned unchanged): the one rule for every number a user gives that is echoed back.
    ``--position -0.0`` was shown as "mean position -0" (attack round 49), and ``position = -0.0`` in a serving file or
    ``positions = [-0.0]`` in a sweep file, which their schemas' ``minimum = 0`` let by, as "position -0" and
    "position -0.0" (session 29). Equal values either way (``-0.0 == 0.0``), so nothing priced or compared moves."""
    return value + 0.0


def position_text(value: float | int) -> str:
    """A position (or any count a float holds) as a line of text shows it: a whole number as an integer, without
    separators, as a limit is shown beside it (``1000000``, where ``f"{p:g}"`` wrote ``1e+06`` and 123456789
    ``1.23457e+08``, figures nobody gave: issue 13), else Python's shortest text for it (``1500.5``, ``1e+20``).
    Raises nothing."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e16):
        return str(int(value))
    return repr(float(value))


def _shown(value: float | int) -> str:
    """``value`` as an option's error line shows it: an integer with commas, a float in six figures when they are
    the value and no longer than Python's shortest text for it, else that text (``--max-tpot 1e-320`` was
    "9.99989e-321 is out of range", and ``0.0000009999999`` "1e-06 is out of range (from 1e-06 …)": figures
    nobody gave, attack round 27)."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e16):
        return f"{int(value):,}"
    text, written = f"{value:g}", repr(float(value))
    return text if float(text) == value and len(text) <= len(written) else written


def _cut(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:30]}… ({len(text)} characters)"


@functools.cache
def schema_bound(kind: str, pointer: str) -> Bound:
    """The bound ``schema/KIND.schema.json`` (the package's own copy) states at the JSON Pointer ``pointer`` (RFC 6901,
    e.g. ``/properties/kv_page``): its ``type``, ``minimum``/``exclusiveMinimum`` and ``maximum``/
    ``exclusiveMaximum``. Raises :class:`InputError` when the schema is missing or the pointer names no number."""
    from passprice.registry import schema_dir

    path = schema_dir() / f"{kind}.schema.json"
    try:
        node = json.loads(path.read_text(encoding="utf-8"))
        for part in pointer.strip("/").split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part.replace("~1", "/").replace("~0", "~")]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise InputError(f"{path}: {pointer}: no bound there ({e})") from None
    if node.get("type") not in ("integer", "number"):
        raise InputError(f"{path}: {pointer}: not a number's schema")
    low = node.get("exclusiveMinimum", node.get("minimum"))
    high = node.get("exclusiveMaximum", node.get("maximum"))
    return Bound(
        low, high, integer=node["type"] == "integer", exclusive_minimum="exclusiveMinimum" in node,
        exclusive_maximum="exclusiveMaximum" in node, where=f"schema/{kind}.schema.json#{pointer}",
    )


def _trace_requests() -> Bound:
    from passprice.trace import MAX_REQUESTS

    return Bound(1, MAX_REQUESTS, integer=True, where="passprice.trace.MAX_REQUESTS")


def _speculate_passes() -> Bound:
    from passprice.speculate import MAX_PASSES

    return Bound(1, MAX_PASSES, integer=True, where="passprice.speculate.MAX_PASSES")


def _audit_step() -> Bound:
    from passprice.audit import MAX_STEP_PERCENT, MIN_STEP_PERCENT

    return Bound(MIN_STEP_PERCENT, MAX_STEP_PERCENT, where="passprice.audit.MIN_STEP_PERCENT, MAX_STEP_PERCENT")


def _schema(kind: str, pointer: str) -> Callable[[], Bound]:
    return lambda: schema_bound(kind, pointer)


_SERVING = "/properties/"
_CONTEXT = "/properties/contexts/items/properties/"

#: Each numeric option's bound, by the option's name: where it is stated (read when the option is converted, so the
#: command line's start reads no schema).
OPTIONS: dict[str, Callable[[], Bound]] = {
    # A serving's own keys: the serving schema.
    "--position": _schema("serving", _CONTEXT + "position"),
    "--limit": _schema("serving", _CONTEXT + "limit"),
    "--kv-page": _schema("serving", _SERVING + "kv_page"),
    "--kv-bytes": _schema("serving", _SERVING + "kv_bytes"),
    "--state-bytes": _schema("serving", _SERVING + "state_bytes"),
    "--activation-words": _schema("serving", _SERVING + "activation_words"),
    "--head-rows": _schema("serving", _SERVING + "draft/properties/head_rows"),
    "--shared-prefix": _schema("serving", _SERVING + "shared_prefix"),
    "--max-tpot": _schema("serving", _SERVING + "max_tpot"),
    "--memory-use": _schema("serving", _SERVING + "memory_use"),
    # A batch as a serving file's: at least 1 (0 would only ever be refused, as Empty; a sweep's --batches may list 0
    # to show that row's refusal). A draft length as a sweep's grid takes it: 0 is a value to price (no drafts).
    "--batch": _schema("serving", _SERVING + "batch"),
    "--draft-tokens": _schema("sweep", "/properties/draft_tokens/items"),
    # simulate: a synthetic prefix is a shared prefix, a chunk a step's positions, a step's sequences a batch.
    "--prefix": _schema("serving", _SERVING + "shared_prefix"),
    "--chunk": _schema("serving", _CONTEXT + "limit"),
    "--max-batch": _schema("serving", _SERVING + "batch"),
    "--max-steps": lambda: Bound(1, U32, integer=True, where="passprice.bounds.U32"),
    "--max-work": lambda: Bound(1, U32, integer=True, where="passprice.bounds.U32"),
    "--max-rows": lambda: Bound(1, 688_000_000, integer=True, where="passprice.sweep.MAX_COUNTED"),
    "--jobs": lambda: Bound(1, 64, integer=True, where="passprice.sweepjobs.MAX_JOBS"),
    "--synthetic": _trace_requests,
    "--rate": lambda: Bound(0, MAX_RATE, exclusive_minimum=True, where="passprice.bounds.MAX_RATE"),
    "--seed": lambda: Bound(0, U64, integer=True, where="passprice.bounds.U64"),
    # speculate
    "--passes": _speculate_passes,
    # audit: the relative change an elasticity is measured over, in percent (walkthrough 35)
    "--step": _audit_step,
}


def option_bound(option: str) -> Bound:
    """The bound of the numeric command-line option ``option`` (``--batch``). Raises :class:`KeyError` for an option
    without one (a programming error: every numeric option is listed in :data:`OPTIONS`)."""
    return OPTIONS[option]()
