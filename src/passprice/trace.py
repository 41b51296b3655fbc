"""A request trace is read whole and checked line by line before anything is simulated: every bad line is named by
its number, and a trace that a serving could not hold is refused, not truncated.

A trace is JSON Lines (one object a line, blank lines skipped): ``arrival_s`` (seconds from the trace's start, a
finite number ≥ 0), ``prompt_tokens`` (an integer ≥ 1), ``output_tokens`` (an integer ≥ 1), and optionally
``prefix_id`` (a string naming a prompt prefix requests share, e.g. a system prompt) with ``prefix_tokens`` (an
integer ≥ 1, below ``prompt_tokens``; every request naming a prefix gives it the same length). A request's
``prompt_tokens + output_tokens`` must fit the context limit it is simulated under.

:func:`synthetic` makes a heavy-tailed trace from a seed: Poisson arrivals, lognormal prompts, Pareto outputs — the
shape production traces show (short prompts and answers mostly, a long tail of long ones; e.g. BurstGPT, Wang et al.
2024, arXiv:2401.17644, reports long-tailed request and response lengths). It draws only ``random.Random(seed)
.random()``, whose sequence Python guarantees across versions, and transforms it itself (the module's other
distributions may change between versions), so a seed gives the same trace everywhere.
"""

from __future__ import annotations

import json
import math
import random
import re
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from passprice.errors import InputError
from passprice.files import BOM, open_regular, refuse_bom

#: Keys a trace line may have.
KEYS = ("arrival_s", "prompt_tokens", "output_tokens", "prefix_id", "prefix_tokens")

#: Bad lines listed in one refusal before the rest are counted.
SHOWN = 20

#: Requests a trace may hold (a file's request lines, or ``--synthetic N``): reading and scheduling a hundred
#: thousand takes seconds, and ``--json`` then carries about 130 MB of records (a million: minutes, 1.3 GB and 9 GB
#: of memory); more is refused before the file is read whole or the trace generated.
MAX_REQUESTS = 100_000

#: The latest arrival a trace may have, in seconds (about 31 years): past it a step of a millisecond is lost in the
#: rounding of the clock (a double's spacing at 1e9 s is 1.2e-7 s), and the latencies would be noise.
MAX_ARRIVAL_S = 1e9

#: Bytes a trace line may have (a request is a hundred or so).
MAX_LINE = 1 << 20

#: JSON's names of the types ``json.loads`` gives, for messages.
_JSON_TYPES = {"dict": "object", "list": "array", "str": "string", "int": "number", "float": "number",
               "bool": "boolean", "NoneType": "null"}


@attrs.frozen
class Request:
    """One request: ``index`` (0-based, in trace order), ``line`` (its line in the trace file, ``None`` for a
    synthetic one), ``arrival`` (s), ``prompt`` and ``output`` tokens, and the shared prefix it starts with
    (``prefix_id``, ``prefix`` tokens; ``None`` and 0 for none)."""

    index: int
    line: int | None
    arrival: float
    prompt: int
    output: int
    prefix_id: str | None = None
    prefix: int = 0

    @property
    def length(self) -> int:
        """Positions the request reaches: prompt and output tokens."""
        return self.prompt + self.output


@attrs.frozen
class Trace:
    """Requests in trace order and where they came from (``source``: a file path, or the synthetic parameters)."""

    requests: tuple[Request, ...]
    source: str

    def summary(self) -> dict[str, Any]:
        """Counts for a report: requests, prompt and output tokens, the longest request, the last arrival."""
        reqs = self.requests
        return {
            "source": self.source,
            "requests": len(reqs),
            "prompt_tokens": sum(r.prompt for r in reqs),
            "output_tokens": sum(r.output for r in reqs),
            "longest": max((r.length for r in reqs), default=0),
            "last_arrival_s": max((r.arrival for r in reqs), default=0.0),
            "shared_prefixes": len({r.prefix_id for r in reqs if r.prefix_id is not None}),
        }


class _Overflowed(float):
    """A JSON number past a double's range (``1e400``), which Python reads as an infinity, kept with the text the
    trace wrote: ``arrival_s: 1e400`` was said to be ``Infinity`` (attack round 29), a word the line does not hold."""

    text: str

    def __new__(cls, text: str) -> _Overflowed:
        number = super().__new__(cls, text)
        number.text = text
        return number


class _Underflowed(float):
    """A JSON number written apart from zero that a double holds only as zero (``1e-400``), kept with its text: an
    arrival of ``1e-400`` was taken as 0 s (attack round 33)."""

    text: str

    def __new__(cls, text: str) -> _Underflowed:
        number = super().__new__(cls, text)
        number.text = text
        return number


@attrs.frozen
class _LongInteger:
    """A JSON integer of more digits than Python reads as an ``int`` (past ``sys.get_int_max_str_digits()``, 4,300
    by default: ``int(text)`` raises ``ValueError``), kept as its count of ``digits`` (no sign) and whether it is
    ``negative``: a trace line's ``prompt_tokens`` of 100,001 digits was refused in Python's words, ``not JSON:
    Exceeds the limit (4300 digits) for integer string conversion: value has 100001 digits`` (issue 13); it is now
    named as a shorter integer past :data:`SHOWN_CHARS` digits is (``a 100,001-digit number``), against its key's own
    bound (the context a request must fit, the latest arrival)."""

    digits: int
    negative: bool

    def __str__(self) -> str:
        return f"a {self.digits:,}-digit number"  # as _figure names an integer too long to print


def _int(text: str) -> int | _LongInteger:
    """A JSON integer (``-?(0|[1-9][0-9]*)``, as ``json.loads`` hands it to ``parse_int``) as an ``int``, or, past the
    digits Python reads, as a :class:`_LongInteger`. Raises nothing."""
    try:
        return int(text)
    except ValueError:
        return _LongInteger(len(text.lstrip("-")), text.startswith("-"))


def _float(text: str) -> float:
    """A JSON number with a fraction or an exponent, as ``json.loads`` reads it; one past a double's range as an
    :class:`_Overflowed` infinity that remembers its text, one written apart from zero that reads as zero as an
    :class:`_Underflowed`."""
    number = float(text)
    if number == 0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        return _Underflowed(text)
    return number if math.isfinite(number) else _Overflowed(text)


#: The most characters of a value an error line prints as written (past it, what it is and how long): a
#: ``prompt_tokens`` of 10**400 printed every digit, with separators, a line of about 540 characters
#: (tests/test_fix168.py); a ``prefix_id`` of 1,000,000 characters was printed whole, with ``repr``, where two lines
#: gave it two lengths (tests/test_odds172.py).
SHOWN_CHARS = 40


def _show(value: Any) -> str:
    """A JSON value as the trace writes it (``true``, ``"0"``, ``1.5``, ``1e400``), for messages; one longer than
    :data:`SHOWN_CHARS` characters as what it is (``a 401-digit number``, ``a 500-character number``, ``a
    500-character string``), an integer of at most that many characters as :func:`_figure` writes it. Raises
    nothing."""
    if _integer(value):
        return _figure(value, separated=False)
    if isinstance(value, _LongInteger):
        return str(value)
    if isinstance(value, _Overflowed | _Underflowed):
        text = value.text
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):  # pragma: no cover - json.loads gives only what json.dumps writes
            text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    kind = "number" if isinstance(value, float) else "string" if isinstance(value, str) else "value"
    return f"a {len(text):,}-character {kind}"


def _figure(value: int, separated: bool = True) -> str:
    """An integer for an error line: with thousands separators (``separated``) while its digits are at most
    :data:`SHOWN_CHARS`, else ``a 401-digit number`` (``minus a 401-digit number``). Raises nothing."""
    digits = len(str(abs(value)))
    if digits > SHOWN_CHARS:
        return f"{'minus ' if value < 0 else ''}a {digits:,}-digit number"
    return f"{value:,}" if separated else str(value)


def _positions(count: int) -> str:
    """``count`` positions for an error line: ``40,000 positions``, ``a 401-digit number of positions``."""
    shown = _figure(count)
    return f"{shown} positions" if shown[0].isdigit() or shown[0] == "-" else f"{shown} of positions"


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_line(obj: Any, limit: int, model: int | None) -> list[str]:
    """Every problem of one parsed line (empty when it is a good request)."""
    if not isinstance(obj, dict):
        name = type(obj).__name__
        return [f"not a JSON object but {_JSON_TYPES.get(name, name)}"]
    problems = [f"unknown key {_show(k) if len(k) > SHOWN_CHARS else repr(k)} (keys: {', '.join(KEYS)})"
                for k in obj if k not in KEYS]
    # Every key a request needs that the line lacks, on one line (``{}`` gave three lines, one a key).
    missing = [key for key in ("arrival_s", "prompt_tokens", "output_tokens") if obj.get(key) is None]
    if missing:
        keys = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
        problems.append(f"{keys}: missing")
    arrival = obj.get("arrival_s")
    reach = limit if model is None or limit <= model else model  # the bound a request's lengths must fit
    bound = f"the model's context {model:,}" if reach != limit else f"the serving's context limit {limit:,}"
    if arrival is None:
        pass
    elif isinstance(arrival, _LongInteger):
        past = f"past {MAX_ARRIVAL_S:g} s (about 31 years) after the start"
        problems.append(f"arrival_s: {arrival} is {'negative' if arrival.negative else past}")
    elif (isinstance(arrival, bool) or not isinstance(arrival, int | float)
          or (isinstance(arrival, float) and not math.isfinite(arrival))):
        # An integer is finite: math.isfinite(10**400) raised OverflowError, a traceback (attack round 39).
        problems.append(f"arrival_s: {_show(arrival)} is not a finite number of seconds")
    elif isinstance(arrival, _Underflowed):
        problems.append(f"arrival_s: {_show(arrival)} underflows a float (read as 0: nothing but 0 is nearer zero "
                        "than ±4.9e-324)")
    elif arrival < 0:
        problems.append(f"arrival_s: {_show(arrival)} is negative")
    elif arrival > MAX_ARRIVAL_S:
        problems.append(f"arrival_s: {_show(arrival)} is past {MAX_ARRIVAL_S:g} s (about 31 years) after the start")
    for key in ("prompt_tokens", "output_tokens"):
        value = obj.get(key)
        if value is None:
            continue  # named among the missing keys
        if isinstance(value, _LongInteger):
            problems.append(f"{key}: {value} is negative; it must be at least 1" if value.negative
                            else f"{key}: {value} is past {bound}")
        elif not _integer(value):
            problems.append(f"{key}: {_show(value)} is not an integer")
        elif value < 1:
            problems.append(f"{key}: {_show(value)} is {'negative' if value < 0 else 'zero'}; it must be at least 1")
    prefix_id, prefix = obj.get("prefix_id"), obj.get("prefix_tokens")
    if prefix_id is not None and (not isinstance(prefix_id, str) or not prefix_id):
        problems.append(f"prefix_id: {_show(prefix_id)} is not a non-empty string")
    if (prefix_id is None) != (prefix is None):
        problems.append("prefix_id and prefix_tokens go together: give both or neither")
    elif prefix is not None:
        if isinstance(prefix, _LongInteger):
            problems.append(f"prefix_tokens: {prefix} is negative; it must be >= 1" if prefix.negative
                            else f"prefix_tokens: {prefix} is past {bound}")
        elif not _integer(prefix):
            problems.append(f"prefix_tokens: {_show(prefix)} is not an integer")
        elif prefix < 1:
            problems.append(f"prefix_tokens: {_show(prefix)} is {'negative' if prefix < 0 else 'zero'}; it must be "
                            ">= 1")
        elif _integer(obj.get("prompt_tokens")) and prefix >= obj["prompt_tokens"]:
            problems.append(
                f"prefix_tokens: {_show(prefix)} is not below prompt_tokens {_show(obj['prompt_tokens'])} (a prompt "
                "has at least "
                "one token of its own, whose logits give the first output token)"
            )
    if not problems:
        length = obj["prompt_tokens"] + obj["output_tokens"]
        if model is not None and length > model:
            problems.append(f"the request needs {_positions(length)}, longer than the model's context "
                            f"{model:,}")
        elif length > limit:
            problems.append(
                f"the request needs {_positions(length)}, longer than the serving's context limit {limit:,} "
                "(raise it with --limit)"
            )
    return problems


def _refuse(source: str, bad: list[str]) -> InputError:
    shown = bad[:SHOWN]
    if len(bad) > SHOWN:
        shown.append(f"{source}: … and {len(bad) - SHOWN:,} more problems")
    return InputError.of(shown)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object from its key-value pairs; a key given twice is an error (JSON itself would keep the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {_show(key)} given twice")
        out[key] = value
    return out


#: One decoder for every line (``json.loads`` builds one a call): the same parse, duplicate keys refused.
_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_float=_float, parse_int=_int)


def _loads(text: str) -> Any:
    """``json.loads(text, object_pairs_hook=_object)``, with a decoder made once (the same checks: a byte-order mark
    is an error, as ``json.loads`` makes it)."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


#: A JSON number, as JSON's grammar gives it (RFC 8259 §6).
_NUMBER = r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
_WS = r"[ \t\n\r]*"

#: A line of the common shape (the three keys in this order, numbers, JSON's whitespace): read without the JSON
#: decoder, into the same values it gives (``int`` for a number without fraction or exponent, else ``float``, each
#: from the same text); any other line goes through :func:`_loads`.
_PLAIN = re.compile(
    f'{_WS}\\{{{_WS}"arrival_s"{_WS}:{_WS}{_NUMBER}{_WS},{_WS}"prompt_tokens"{_WS}:{_WS}{_NUMBER}{_WS},{_WS}'
    f'"output_tokens"{_WS}:{_WS}{_NUMBER}{_WS}}}{_WS}'
)


def _number(text: str) -> int | float | _LongInteger:
    """A JSON number's value as :data:`_DECODER` gives it (its scanner's rule: an integer unless a fraction or
    exponent is written)."""
    return _float(text) if "." in text or "e" in text or "E" in text else _int(text)


def parse_trace(lines: Iterable[str], source: str, limit: int, model: int | None = None) -> Trace:
    """The requests of a JSONL trace's ``lines``, each checked against the context ``limit`` (positions a request
    may reach) and the model's context ``model``.

    Raises :class:`InputError` naming every bad line as ``SOURCE:LINE: problem`` (bad JSON, not an object, a
    missing or unknown key, a negative, zero or non-integer length, a bad arrival, a prefix at or past its prompt,
    a prefix id given two lengths, a key given twice, a request longer than the limit or the model's context), for a
    trace of no requests, or at the line past :data:`MAX_REQUESTS`."""
    bad: list[str] = []
    requests: list[Request] = []
    prefixes: dict[str, tuple[int, int]] = {}
    given = 0  # request lines, good or bad
    reach = limit if model is None else min(limit, model)  # positions a request may reach
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        given += 1
        if given > MAX_REQUESTS:
            raise InputError(
                f"{source}:{number}: more than {MAX_REQUESTS:,} requests: a trace this long would run for many "
                "minutes; simulate a part of it"
            )
        try:
            plain = _PLAIN.fullmatch(text)
            if plain is None:
                obj = _loads(text)
            else:
                arrival, prompt, output = _number(plain[1]), _number(plain[2]), _number(plain[3])
                if (type(prompt) is int and type(output) is int and isinstance(arrival, int | float)
                        and prompt >= 1 and output >= 1
                        and 0 <= arrival <= MAX_ARRIVAL_S and prompt + output <= reach
                        and type(arrival) is not _Underflowed):
                    # A good request (every check _check_line makes passes): taken without building its object.
                    requests.append(Request(len(requests), number, float(arrival), prompt, output))
                    continue
                obj = {"arrival_s": arrival, "prompt_tokens": prompt, "output_tokens": output}
        except json.JSONDecodeError as e:
            bad.append(f"{source}:{number}: not JSON: {e.msg} (column {e.colno})")
            continue
        except (ValueError, RecursionError) as e:
            reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).split(";")[0]
            bad.append(f"{source}:{number}: not JSON: {reason}")
            continue
        problems = _check_line(obj, limit, model)
        if not problems and obj.get("prefix_id") is not None:
            seen = prefixes.setdefault(obj["prefix_id"], (obj["prefix_tokens"], number))
            if seen[0] != obj["prefix_tokens"]:
                problems.append(
                    f"prefix_id {_show(obj['prefix_id'])} has {_figure(obj['prefix_tokens'])} tokens here but "
                    f"{_figure(seen[0])} on line "
                    f"{seen[1]}: one id names one prefix"
                )
        if problems:
            bad.extend(f"{source}:{number}: {p}" for p in problems)
            continue
        requests.append(
            Request(
                index=len(requests),
                line=number,
                arrival=float(obj["arrival_s"]),
                prompt=obj["prompt_tokens"],
                output=obj["output_tokens"],
                prefix_id=obj.get("prefix_id"),
                prefix=obj.get("prefix_tokens") or 0,
            )
        )
    if bad:
        raise _refuse(source, bad)
    if not requests:
        raise InputError(f"{source}: no requests (one JSON object a line)")
    return _checked(Trace(tuple(requests), source), reach)


def _lines(path: Path, handle: BinaryIO) -> Iterator[str]:
    """The lines of a trace file as text, one at a time. Raises :class:`InputError` for a file starting with a UTF-8
    byte-order mark (:func:`passprice.files.refuse_bom`, the rule of every text file passprice reads), and at a line
    that is not UTF-8, longer than :data:`MAX_LINE` bytes (binary garbage, not a request) or starting with a
    byte-order mark past the first line (files joined together), naming it."""
    number = 0
    while raw := handle.readline(MAX_LINE + 1):
        number += 1
        if len(raw) > MAX_LINE:
            raise InputError(f"{path}:{number}: longer than {MAX_LINE:,} bytes: not a request (is this a trace?)")
        if number == 1:
            refuse_bom(path, raw)  # one rule for every text file passprice reads (files.refuse_bom)
        elif raw.startswith(BOM):
            raise InputError(
                f"{path}:{number}: starts with a byte-order mark (U+FEFF): files joined together? save each as UTF-8 "
                "without BOM"
            )
        try:
            yield raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}:{number}: not UTF-8 text (byte {e.start + 1} of the line)") from None


def read_trace(path: Path, limit: int, model: int | None = None) -> Trace:
    """The trace at ``path`` (UTF-8 JSON Lines without a byte-order mark), checked by :func:`parse_trace`,
    read a line at a time (a trace past :data:`MAX_REQUESTS` is refused without being read whole). Raises
    :class:`InputError`."""
    try:
        with open_regular(path) as handle:
            return parse_trace(_lines(path, handle), str(path), limit, model)
    except OSError as e:
        raise InputError(f"{path}: cannot read the trace: {e.strerror or e}") from None


@attrs.frozen
class Synthetic:
    """A synthetic trace's parameters: ``requests`` and ``seed``; ``rate`` (requests/s, Poisson arrivals);
    prompts lognormal with median ``prompt_median`` tokens and log-deviation ``prompt_sigma``; outputs Pareto with
    scale ``output_scale`` tokens and tail index ``output_alpha`` (below 2: the variance is infinite, a heavy tail);
    ``prefix`` tokens of one shared prefix every prompt starts with (0: none). Lengths are clipped so a request
    fits ``limit`` positions: a prompt to half of what the prefix leaves, an output to what the prompt leaves (how
    many were cut is said in the trace's ``source``)."""

    requests: int
    seed: int
    rate: float = 50.0
    prompt_median: float = 512.0
    prompt_sigma: float = 1.0
    output_scale: float = 32.0
    output_alpha: float = 1.3
    prefix: int = 0

    def describe(self) -> str:
        """One line for a report."""
        shared = f", every prompt after one shared {self.prefix:,}-token prefix" if self.prefix else ""
        return (
            f"synthetic: {self.requests:,} requests, seed {self.seed}, Poisson arrivals at {self.rate:g}/s, "
            f"lognormal prompts (median {self.prompt_median:g}, sigma {self.prompt_sigma:g}), Pareto outputs "
            f"(scale {self.output_scale:g}, alpha {self.output_alpha:g}){shared}"
        )


def synthetic(params: Synthetic, limit: int) -> Trace:
    """A heavy-tailed trace from ``params`` whose requests fit ``limit`` positions, the same for the same
    parameters on every Python version (see the module's docstring).

    Arrivals: exponential gaps, ``−ln(1 − u) / rate``. Prompts: ``median × exp(sigma × z)``, ``z`` standard normal
    by Box–Muller from two draws, at least 1. Outputs: ``scale × (1 − u)^(−1 / alpha)``, at least 1. Raises
    :class:`InputError` for parameters that leave no room (a prefix of the whole limit, a limit below 2, a rate ≤ 0
    or so low that arrivals pass :data:`MAX_ARRIVAL_S`, no requests or more than :data:`MAX_REQUESTS`)."""
    if params.requests < 1:
        raise InputError("--synthetic: give at least one request")
    if params.requests > MAX_REQUESTS:
        raise InputError(
            f"--synthetic: {params.requests:,} requests is more than {MAX_REQUESTS:,}: a trace this long would run "
            "for many minutes"
        )
    if not (params.rate > 0 and math.isfinite(params.rate)):
        raise InputError(f"--rate: {params.rate!r} requests/s is not a positive rate")
    if limit < 2:
        raise InputError(f"--limit: {limit} position leaves no room for a prompt token and an answer token (give 2+)")
    if params.prefix < 0 or params.prefix + 2 > limit:
        raise InputError(f"--prefix: {params.prefix} tokens leave no room for a prompt and an answer in {limit:,}")
    rng = random.Random(params.seed)
    room = limit - params.prefix
    cut_prompts = cut_outputs = 0
    t = 0.0
    requests = []
    for i in range(params.requests):
        t += -math.log(1.0 - rng.random()) / params.rate
        if t > MAX_ARRIVAL_S:
            raise InputError(
                f"--rate: at {params.rate!r} requests/s request {i + 1:,} arrives {t:.3g} s in, past the "
                f"{MAX_ARRIVAL_S:g} s (about 31 years) a trace may span"
            )
        u1, u2 = 1.0 - rng.random(), rng.random()
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        drawn = int(params.prompt_median * math.exp(params.prompt_sigma * z))
        own = min(max(drawn, 1), max(room // 2, 1))
        cut_prompts += own < drawn
        prompt = params.prefix + own
        drawn = int(params.output_scale * (1.0 - rng.random()) ** (-1.0 / params.output_alpha))
        output = min(max(drawn, 1), limit - prompt)
        cut_outputs += output < drawn
        requests.append(
            Request(
                index=i,
                line=None,
                arrival=t,
                prompt=prompt,
                output=output,
                prefix_id="shared" if params.prefix else None,
                prefix=params.prefix,
            )
        )
    source = params.describe()
    if cut_prompts or cut_outputs:
        # Said where the trace is described (the summary's first lines), so a median the limit cut is not taken for
        # the trace's own.
        # Why that many: a prompt keeps at most half its room, so its output has the rest ("to at most 2,048
        # tokens" under a 4,096 limit read as a figure from nowhere; walkthrough 43).
        half = "half the limit" if not params.prefix else f"half the {room:,} the shared prefix leaves"
        source += (
            f"; cut to fit the limit of {limit:,} positions: {cut_prompts:,} prompts (to at most "
            f"{max(room // 2, 1):,} tokens, {half}, leaving the rest for the output) and {cut_outputs:,} outputs"
        )
    return _checked(Trace(tuple(requests), source), limit)


#: Traces :func:`parse_trace` and :func:`synthetic` made, by ``id``, each with a weak reference to it and the
#: positions every one of its requests fits: :func:`check_trace` passes them without walking a hundred thousand
#: requests again (70 ms). An entry leaves with its trace (the reference's callback), before its id can be reused.
_CHECKED: dict[int, tuple[weakref.ref[Trace], int]] = {}


def _checked(trace: Trace, reach: int) -> Trace:
    """``trace``, remembered as checked to fit ``reach`` positions."""
    key = id(trace)
    _CHECKED[key] = (weakref.ref(trace, lambda _: _CHECKED.pop(key, None)), reach)
    return trace


def _good(trace: Trace, limit: int) -> bool:
    """Whether every request of ``trace`` is one :func:`parse_trace` would give (the common case, checked fast)."""
    lengths: dict[str, int] = {}
    for i, r in enumerate(trace.requests):
        if not (type(r) is Request and r.index == i and type(r.index) is int
                and (r.line is None or (type(r.line) is int and r.line >= 1))
                and type(r.arrival) is float and 0.0 <= r.arrival <= MAX_ARRIVAL_S
                and type(r.prompt) is int and type(r.output) is int and r.prompt >= 1 and r.output >= 1
                and r.prompt + r.output <= limit):
            return False
        if r.prefix_id is None:
            if r.prefix != 0:
                return False
        elif not (type(r.prefix_id) is str and r.prefix_id and type(r.prefix) is int and 1 <= r.prefix < r.prompt
                  and lengths.setdefault(r.prefix_id, r.prefix) == r.prefix):
            return False
    return True


def check_trace(trace: Trace, limit: int) -> None:
    """Check a :class:`Trace` given to the simulator as :func:`parse_trace` checks a file's lines: every request of
    ``trace`` a :class:`Request` at its own place (``index`` 0, 1, …; ``line`` ``None`` or ≥ 1), its arrival a float
    in 0 … :data:`MAX_ARRIVAL_S` s, its prompt and output integers ≥ 1 whose sum fits ``limit`` positions, its prefix
    (``prefix_id`` a non-empty string, ``prefix`` 1 … prompt − 1; none: ``None`` and 0) one length an id; at least one
    request and at most :data:`MAX_REQUESTS`. A trace :func:`parse_trace` or :func:`synthetic` made for ``limit`` or
    fewer positions passes at once.

    Raises :class:`InputError`: one line a problem, ``SOURCE: request N (line L): problem`` in the file's words
    (``arrival_s``, ``prompt_tokens`` …), at most :data:`SHOWN` and a count of the rest. A trace built by hand that
    the command line would refuse ran into ``RuntimeError``, ``IndexError``, ``TypeError`` or, with a NaN arrival, a
    loop without end (attack round 39)."""
    if not isinstance(trace, Trace):
        raise InputError(f"simulate: the trace is a {type(trace).__name__}, not a passprice.trace.Trace")
    source = trace.source if isinstance(trace.source, str) else repr(trace.source)
    requests = trace.requests
    if not isinstance(requests, tuple):
        raise InputError(f"{source}: the trace's requests are a {type(requests).__name__}, not a tuple of Request")
    seen = _CHECKED.get(id(trace))
    if seen is not None and seen[0]() is trace and seen[1] <= limit:
        return
    if not requests:
        raise InputError(f"{source}: no requests")
    if len(requests) > MAX_REQUESTS:
        raise InputError(f"{source}: {len(requests):,} requests, more than {MAX_REQUESTS:,}: a trace this long would "
                         "run for many minutes; simulate a part of it")
    if _good(trace, limit):
        return
    bad: list[str] = []
    prefixes: dict[str, tuple[int, int]] = {}
    for i, r in enumerate(requests):
        where = f"{source}: request {i}"
        if not isinstance(r, Request):
            bad.append(f"{where}: a {type(r).__name__}, not a passprice.trace.Request")
            continue
        if r.line is not None:
            where += f" (line {_show(r.line)})"
        problems = []
        if not _integer(r.index) or r.index != i:
            problems.append(f"index: {_show(r.index)} is not its place in the trace, {i}")
        if r.line is not None and (not _integer(r.line) or r.line < 1):
            problems.append(f"line: {_show(r.line)} is not a line number (an integer >= 1, or None)")
        obj: dict[str, Any] = {"arrival_s": r.arrival, "prompt_tokens": r.prompt, "output_tokens": r.output}
        if r.prefix_id is not None:
            obj.update(prefix_id=r.prefix_id, prefix_tokens=r.prefix)
        elif not _integer(r.prefix) or r.prefix != 0:
            problems.append(f"prefix: {_show(r.prefix)} without a prefix_id (0 when the request names none)")
        problems += _check_line(obj, limit, None)
        if not problems and r.prefix_id is not None:
            length, first = prefixes.setdefault(r.prefix_id, (r.prefix, i))
            if length != r.prefix:
                problems.append(f"prefix_id {_show(r.prefix_id)} has {_figure(r.prefix)} tokens here but "
                                f"{_figure(length)} in request {first}: one id names one prefix")
        bad.extend(f"{where}: {p}" for p in problems)
    if bad:
        raise _refuse(source, bad)


def trace_lines(trace: Trace) -> str:
    """The trace as JSON Lines (one request a line, in order), readable back by :func:`parse_trace`."""
    out = []
    for r in trace.requests:
        obj: dict[str, Any] = {"arrival_s": r.arrival, "prompt_tokens": r.prompt, "output_tokens": r.output}
        if r.prefix_id is not None:
            obj.update(prefix_id=r.prefix_id, prefix_tokens=r.prefix)
        out.append(json.dumps(obj))
    return "\n".join(out) + "\n"
