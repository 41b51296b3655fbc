"""A grid of prices is the scalar pricer's arithmetic done on arrays: the same operations in the same order on every
element, so each row equals what ``passprice price`` gives for that point.

``passprice sweep`` prices cards × servings × draft tokens × context positions × batches. For each (card, serving,
draft tokens, position) the pass's shape is read once (:func:`~passprice.serving.pass_shape`); the batch axis is
then priced with NumPy: the seed's ``PassShape::cost`` elementwise, and its host-split search (``cost_split``) run
for every batch at once, a ternary step per iteration. Each row carries its bind, the price's weakest provenance and
the facts carrying it, or the refusal that stops it.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import json
import math
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from passprice import schema
from passprice.batching import use_of
from passprice.bounds import INT_DIGITS, SHOWN_CHARS, long_number, misspelt, shown_part, unsigned_zero
from passprice.cards import Card, card_path, load_card
from passprice.cost import Pricing, pass_seconds, pass_terms
from passprice.drafts import DraftMethod, load_draft_method
from passprice.errors import InputError, NotFound, Unreadable
from passprice.facts import weakest
from passprice.floattext import (
    fast,
    float_reprs,
    float_reprs_bytes,
    float_rows,
    float_rows_bytes,
    float_rows_keyed_bytes,
    int_texts,
    int_texts_bytes,
)
from passprice.registry import Root
from passprice.routing import Routing, load_routing
from passprice.serving import (
    U32_MAX,
    BadContexts,
    BadDraft,
    BadRouting,
    ContextMix,
    Empty,
    NoHostLink,
    NotResident,
    OnChipOverflow,
    PassShape,
    Routed,
    Serving,
    ServingBind,
    ServingRefusal,
    Step,
    fit_shape,
    pass_shape,
    rested_on,
    shape_of,
)
from passprice.servings import (
    DraftSpec,
    ServingSpec,
    complete,
    load_spec,
    override,
    require_scopes,
    serving_path,
    to_serving,
)

#: The columns of a sweep row, in order.
COLUMNS = (
    "card",
    "serving",
    "checkpoint",
    # the routing record a mixture of experts' rows are priced on (empty for a dense checkpoint): the CSV said
    # nothing of it (session 24), though it moves every price as a card fact does
    "routing",
    "draft_tokens",
    "position",
    "limit",
    "batch",
    "host_sequences",
    "tokens_per_s",
    "pass_s",
    "memory_s",
    "host_s",
    "array_s",
    "vector_s",
    "scale_s",
    "binds",
    "held_bytes",
    "capacity_bytes",
    "provenance",
    "weakest",
    "refusal",
)

#: The columns a sweep under a serving stack adds (issue 14): the stack's expected price beside the limit.
STACK_COLUMNS = (
    "stack",
    "expected_tokens_per_s",
    "expected_pass_s",
    "expected_binds",
    "expected_provenance",
    "expected_refusal",
)

_BINDS = [b.value for b in ServingBind]
# Refusal codes of the vectorized cost, in the seed's order of checks.
_OK, _NO_HOST, _CARD_FULL, _HOST_FULL, _ON_CHIP = 0, 1, 2, 3, 4


@attrs.frozen
class Grid:
    """What a sweep prices: ``servings`` (registry names or paths), each on every card of ``cards`` (``None``: the
    serving's own card), with every number of drafted tokens in ``draft_tokens`` (``None``: the serving's own; 0
    means no drafts; a serving without a drafting method takes only 0), at every mean position in ``positions``
    (``None``: the serving's own contexts; a position replaces them by one class at the serving's longest limit),
    and every batch in ``batches``. A serving may be a :class:`~passprice.servings.ServingSpec` in place of a name: a
    checkpoint swept with no registered serving (``sweep --checkpoint C``), its rows' ``serving`` empty (``None``).
    ``checkpoint`` and ``routing`` (``None``: each serving's own) replace every serving's checkpoint and routing
    record, as ``price SERVING --checkpoint C --routing R`` does (:func:`swept_spec`); ``limit`` (``None``: each
    serving's own contexts) replaces every serving's contexts by one class at that limit, as ``price --limit N``
    does (its mean position the limit's half, or each of ``positions``)."""

    servings: tuple[str | ServingSpec, ...]
    batches: Sequence[int]
    cards: tuple[str, ...] | None = None
    positions: tuple[float, ...] | None = None
    draft_tokens: tuple[int, ...] | None = None
    checkpoint: str | None = None
    routing: str | None = None
    #: The context each sequence is allowed (positions), in place of every serving's contexts (``sweep --limit N``,
    #: as ``price --limit N``), or ``None``: each serving's own.
    limit: int | None = None
    #: The sweep file the grid was read from (named in its refusals), or ``None``.
    source: Path | None = attrs.field(default=None, eq=False)

    def size(self) -> int:
        """Points in the grid (rows of the sweep)."""
        return (
            len(self.servings)
            * (len(self.cards) if self.cards else 1)
            * (len(self.draft_tokens) if self.draft_tokens else 1)
            * (len(self.positions) if self.positions else 1)
            * len(self.batches)
        )


#: Pass shapes a sweep reads at most (each takes one to seven milliseconds: this bounds a sweep to about half a
#: minute).
MAX_SHAPES = 4_000

#: Rows a sweep prices at most whatever ``--max-rows`` says, and the values one axis holds at most (rows are
#: streamed, so memory does not grow with them; 4,000,000 rows are about 650 MB of CSV and several seconds).
MAX_ROWS = 4_000_000

#: Rows a sweep prices by default (``--max-rows``; issue 13: no input under 1 MB keeps a command past 2 s). A plain
#: row costs 1 to 2 µs of CPU whole process (priced, formatted, written; measured on this project's loaded 2-core
#: machine with every row priced), so 2^20 rows are about 1 to 2 s; a larger grid is refused before anything is
#: priced, saying how to lift the bound.
DEFAULT_MAX_ROWS = 1 << 20

#: Rows a row under ``--stack`` counts as (each is priced and written a row at a time: about 35 µs, measured the
#: same way).
STACK_ROW_ROWS = 20

#: Rows a row written as JSON counts as (issue 13): its text is about three times a CSV row's (486 MB against 162 MB
#: for the bench grid) and its making and writing about twice the CPU: 897,600 rows took 2.45 s of CPU as JSON (1.52 s
#: making the text, 0.92 s the kernel's write) against 1.06 s as CSV, paired on this project's loaded 2-core machine.
#: So the default bound lets about 524,288 JSON rows through (about 1.2 to 1.4 s) where it lets 2^20 CSV rows.
JSON_ROW_ROWS = 2

#: Rows a pass shape read counts as (one to seven milliseconds each; about 4 ms on the registry's servings).
SHAPE_ROWS = 2_000

#: Rows each position of a (serving, card, draft length) counts as where its positions are priced from one pass shape
#: read and decomposed (more than :data:`EXACT_POSITIONS` positions, no shared prefix): each position is a block of
#: its own, its spec, group and rows made apart, about 80 to 280 µs of CPU whatever its batches (a row is 1 to 2
#: µs). ``sweep --cards all --positions 1-100 --batches 1`` on the registry (28,900 rows, 289 shapes: 606,900
#: counted) took 8.0 s of CPU, and ``--positions 1-1000`` (867,000 counted) about 80 s, under the default bound
#: (attack66).
POSITION_ROWS = 150

#: The most ``--max-rows`` may be raised to: every grid within the absolute limits (:data:`MAX_ROWS` rows, each
#: under a stack and at a position of its own, and :data:`MAX_SHAPES` pass shapes) can be allowed by the user who
#: asks for it — a registry of 2,015 servings swept at one batch counts 4,032,015 and was refused whatever
#: --max-rows said when the ceiling was :data:`MAX_ROWS`.
MAX_COUNTED = MAX_ROWS * (STACK_ROW_ROWS + POSITION_ROWS) + MAX_SHAPES * SHAPE_ROWS


def _spelt_number(part: str, kind: Callable[[str], Any]) -> bool:
    """Whether ``part`` reads as one number of ``kind`` (``1e-5`` for a float: its ``-`` is the exponent's)."""
    try:
        kind(part)
    except ValueError:
        return False
    return True


def parse_numbers(
    text: str, kind: Callable[[str], Any], what: str, least: float = 0, most: float | None = None
) -> tuple[Any, ...]:
    """A list of numbers from the command line: ``1,2,8``, ranges ``1-64`` or ``1..64`` (every integer, as
    ``speculate --tokens`` reads them), doubling ranges ``1-4096*2`` (1, 2, 4 … 4096), or a mix; each a finite
    number from ``least`` to ``most``, each once (:func:`first_repeat`), at most :data:`MAX_ROWS` of them, written
    in digits alone (:func:`passprice.bounds.misspelt`: no space, leading ``+`` or underscore), a range low to high.
    Every part is read and checked before a plain range is written out: its ends are checked, and it is compared
    with the other parts as an interval. Raises :class:`InputError` naming ``what`` and the text for anything else;
    for a value given twice, ``WHAT: VALUE is given more than once: a sweep prices each point once (…)``, the least
    such value (:func:`repeated_values`' line; left50: ``--positions 0-3999999,0-3999999`` wrote out 8,000,000
    floats, 666 ms of parsing and 349 MB, before it was refused)."""
    plain = _plain_list(text, kind, least, most)
    if plain is not None:
        return plain
    pieces: list[tuple[int, int] | list[Any]] = []  # each part: a plain range's ends, or its values
    count = 0
    if not text.isascii():  # int() and float() would read Arabic-Indic and other Unicode digits as numbers
        raise InputError(
            f"{what}: {shown_part(text)} is not ASCII digits (a number, a range A-B, or a doubling range A-B*2)"
        )
    span = f"from {least:,} to {most:,}" if most is not None else f"at least {least:,}"
    # whole numbers said as an integer option says its range (`price --batch 0`: "0 is out of range (a whole
    # number from 1 to 4,294,967,295)", passprice.bounds)
    said = f"a whole number {span}" if kind is int else f"each must be a finite number {span}"
    for part in text.split(","):
        values: list[Any] = []
        ends: tuple[Any, ...] = ()  # a plain range's first and last values: the others lie between them
        shown = shown_part(part)  # a 5,000-digit part was echoed whole (issue 13): named by its length past 40
        problem = misspelt(part)
        if problem is not None:
            raise InputError(
                f"{what}: {shown} {problem}: write numbers in digits alone, comma-separated (1,2,8 or 1-64 or "
                "1-4096*2)"
            )
        if ".." in part:
            part = part.replace("..", "-", 1)
            shown = shown_part(part)  # as read: `64..1*2` runs from high to low as '64-1*2'
        try:
            if "-" in part[1:] and not _spelt_number(part, kind):  # round 18: 1e-5 is a number, not a range 1e…5
                first, _, rest = part.partition("-") if not part.startswith("-") else ("", "", part)
                last, _, factor = rest.partition("*")
                lo, hi = int(first), int(last)
                # `1--5` read "runs from high to low: write -5-1", a range no line may hold (attack69)
                if last.startswith("-"):
                    raise ValueError
                if lo >= 0 and hi < lo:
                    turned = f"{last}-{first}{'*' if factor else ''}{factor}"
                    raise InputError(f"{what}: {shown} runs from high to low: write "
                                     f"{turned if len(turned) <= SHOWN_CHARS else 'its low end first'}")
                if lo < 0:
                    raise ValueError
                if factor:
                    f = int(factor)
                    if f < 2 or lo < 1:
                        raise ValueError
                    v = lo
                    while v <= hi:
                        values.append(kind(str(v)))
                        v *= f
                else:
                    if hi - lo >= MAX_ROWS:
                        raise InputError(
                            f"{what}: {shown} gives {hi - lo + 1:,} values, more than the {MAX_ROWS:,} rows a sweep "
                            "prices"
                        )
                    # each value of a plain range lies between its two ends, so only they are checked below, and
                    # int and float read a whole number as they read its digits: `--positions 0-3999999` took 5.6 s
                    # (and 9 under a profiler) to parse before its grid was refused (attack68); it is written out
                    # only once every part is read and none repeats a value (left50)
                    ends = (kind(str(lo)), kind(str(hi)))
            else:
                digits = part.lstrip("-").lstrip("0")
                if kind is int and long_number(part) and len(digits) > INT_DIGITS:
                    # int() reads 4,300 digits at most: a longer number was refused as "not a number", echoed whole
                    # (issue 13); every bound here has at most 20 digits
                    if most is not None or part.startswith("-"):
                        raise InputError(f"{what}: {shown} is out of range ({said})")
                    raise InputError(f"{what}: {shown} has more than the {INT_DIGITS:,} digits a number is read to")
                values.append(kind(part))
                if isinstance(values[-1], float):  # -0.0 is 0, as a sweep file's and a serving file's are (attack66:
                    values[-1] = unsigned_zero(values[-1])  # `--positions -0.0` read "its rows at position -0")
                if values[-1] == 0 and any(c in "123456789" for c in part.lower().partition("e")[0]):
                    # `--positions 1e-400` priced position 0, a number the line does not hold (round 33)
                    raise InputError(f"{what}: {shown} underflows a float (read as 0: nothing but 0 is nearer zero "
                                     "than ±4.9e-324)")
        except ValueError:
            raise InputError(f"{what}: {shown} is not a number, a range A-B, or a doubling range A-B*2") from None
        bad = [
            v
            for v in (ends if ends else values)
            if not ((isinstance(v, int) or math.isfinite(v)) and v >= least and (most is None or v <= most))
        ]
        if bad:
            if long_number(part):  # its value is as long as the part (or, for a float, inf: a word it does not hold)
                raise InputError(f"{what}: {shown} is out of range ({said})")
            raise InputError(f"{what}: {shown}: {bad[0]!r} is out of range ({said})")
        pieces.append((lo, hi) if ends else values)
        count += hi - lo + 1 if ends else len(values)
    twice = first_repeat(pieces)
    if twice is not None:
        if isinstance(twice, int) and kind is not int:  # a range's end, as the range writes it out
            twice = kind(twice) if kind is float else kind(str(twice))
        raise InputError(f"{what}: {schema.shown_value(twice)} is given more than once: a sweep prices each point "
                         "once (a sweep file is refused the same)")
    if count > MAX_ROWS:
        raise InputError(f"{what}: more than the {MAX_ROWS:,} values a sweep prices")
    if not count:
        raise InputError(f"{what}: no values")
    out: list[Any] = []
    for piece in pieces:
        if isinstance(piece, tuple):
            out.extend(map(kind, range(piece[0], piece[1] + 1)) if kind in (int, float)
                       else (kind(str(v)) for v in range(piece[0], piece[1] + 1)))
        else:
            out.extend(piece)
    return tuple(out)


def _plain_list(text: str, kind: Callable[[str], Any], least: float, most: float | None) -> tuple[Any, ...] | None:
    """``text`` read as :func:`parse_numbers` reads it when it is a plain comma-separated list of numbers (ASCII
    digits, for floats a decimal point), every one in range and none given twice, read at once (one ``map``, one set)
    rather than part by part; ``None`` for any other text, or any doubt, which :func:`parse_numbers` then reads and
    refuses in its own words. Issue 13: ``sweep --positions 1,2,…,1000000`` (6.9 MB) took 2.0 s to parse part by part
    (each part's spelling, range and underflow checked, and each value bisected against no ranges), about 2 µs a
    value; read so, 0.25 s, about 0.25 µs a value. Raises nothing."""
    if kind not in (int, float) or text.count(",") >= MAX_ROWS:
        return None
    digits = text.replace(",", "") if kind is int else text.replace(",", "").replace(".", "")
    if not (digits.isascii() and digits.isdigit()):  # a sign, an exponent, a range, a space: part by part
        return None
    parts = text.split(",")
    if "" in parts:
        return None
    try:  # float() refuses 1.2.3 and a point alone, as the part-by-part reading does
        values = list(map(kind, parts))
    except ValueError:  # an integer past Python's 4,300 digits: the part-by-part reading names it
        return None
    low, high = min(values), max(values)
    if kind is float and not math.isfinite(high):  # 400 digits overflow a float
        return None
    if low < least or (most is not None and high > most) or len(set(values)) != len(values):
        return None
    if kind is float and low == 0 and parts[values.index(0)].strip("0."):  # the one 0 (none is given twice)
        return None  # 0.000…1 past 4.9e-324 underflows to 0
    return tuple(values)


def first_repeat(pieces: Sequence[tuple[int, int] | Sequence[Any]]) -> Any:
    """The least value that two of ``pieces`` hold, or one holds twice, or ``None``: each piece a plain range's ends
    ``(lo, hi)`` (every integer from ``lo`` to ``hi``) or a list of values (a number, a doubling range's). Ranges are
    compared as intervals, never written out: sorted by their low end, one starting at or below the highest end
    before it repeats its low end; a value repeats when it is another value or an integer inside a range (the
    highest end of the ranges starting at or below it, by bisection). ``O(n log n)`` in the parts and values, not in
    what the ranges hold (left50). Raises nothing."""
    import bisect

    ranges = sorted(p for p in pieces if isinstance(p, tuple))
    values = [v for p in pieces if not isinstance(p, tuple) for v in p]
    found: list[Any] = []
    reach = None
    for lo, hi in ranges:
        if reach is not None and lo <= reach:
            found.append(lo)
            break
        reach = hi if reach is None else max(reach, hi)
    seen: set[Any] = set()
    found += [v for v in values if v in seen or seen.add(v)]  # type: ignore[func-returns-value]
    lows, highest = [lo for lo, _ in ranges], list(itertools.accumulate((hi for _, hi in ranges), max))
    for v in values if lows else ():  # no range: nothing to bisect (a million values took 0.5 s of nothing)
        at = bisect.bisect_right(lows, v)
        if at and isinstance(v, int | float) and v == int(v) and v <= highest[at - 1]:
            found.append(v)
    return min(found) if found else None


_PLAIN_RANGE = re.compile(r"([0-9]+)-([0-9]+)")


def parse_batches(text: str, what: str, most: int | None = U32_MAX) -> Sequence[int]:
    """The batches of a sweep from the command line, as :func:`parse_numbers` reads integers from 1 to ``most`` (a
    batch of 0 sequences prices nothing: refused as bad input, exit 2, as ``price --batch 0`` is, in the same words;
    it was a row refused ``Empty``, or with ``--batches 0`` alone exit 1); one plain range ``A-B`` (or ``A..B``)
    kept as a :class:`range`, not a tuple: a sweep's batch axis may hold 4,000,000 batches, which as Python integers
    would take 160 MB. Raises what :func:`parse_numbers` raises."""
    match = _PLAIN_RANGE.fullmatch(text.replace("..", "-", 1))
    # an end past 40 digits is past every bound, and past 4,300 int() raises: `--batches 111…(5,000 digits)-2` was a
    # traceback; parse_numbers names it
    if match is not None and max(len(match[1]), len(match[2])) <= SHOWN_CHARS:
        lo, hi = int(match[1]), int(match[2])
        if 1 <= lo <= hi and (most is None or hi <= most) and hi - lo < MAX_ROWS:
            return range(lo, hi + 1)
    return parse_numbers(text, int, what, least=1, most=most)


def batch_array(batches: Sequence[int]) -> np.ndarray:
    """``batches`` as a NumPy ``int64`` array (a range without a Python integer a batch)."""
    if isinstance(batches, range):
        return np.arange(batches.start, batches.stop, batches.step, dtype=np.int64)
    return np.array(batches, dtype=np.int64)


def check_grid(
    grid: Grid, max_rows: int = DEFAULT_MAX_ROWS, stacked: bool = False, shapes: int = 0, as_json: bool = False,
    positioned: int = 0,
) -> None:
    """Refuse, before anything is priced, a grid with no servings, or one that counts more than ``max_rows`` rows
    (``--max-rows``, :data:`DEFAULT_MAX_ROWS`; at most :data:`MAX_COUNTED`): each of its rows counts as one, as
    :data:`STACK_ROW_ROWS` when ``stacked`` (priced under a serving stack), else as :data:`JSON_ROW_ROWS` when
    written ``as_json``, each of the ``shapes`` pass shapes it reads as :data:`SHAPE_ROWS`, and each of the
    ``positioned`` positions priced from a decomposed shape (past :data:`EXACT_POSITIONS` positions, one a serving,
    card and draft length) as :data:`POSITION_ROWS`. The refusal names the grid's file (``grid.source``) if it has
    one, and says how to lift the bound. Raises :class:`InputError`."""
    if not grid.servings:
        raise InputError("sweep: no servings to price (none registered, and none given)")
    if grid.cards is not None and not grid.cards:
        raise InputError("--cards: no cards (give names, comma-separated, or 'all')")
    if not 1 <= max_rows <= MAX_COUNTED:
        raise InputError(f"--max-rows: {max_rows:,} is out of range (from 1 to {MAX_COUNTED:,})")
    size = grid.size()
    weight = STACK_ROW_ROWS if stacked else JSON_ROW_ROWS if as_json else 1
    counted = size * weight + shapes * SHAPE_ROWS + positioned * POSITION_ROWS
    if counted > max_rows or size > MAX_ROWS:
        def many(n: int, what: str) -> str:  # plural only past 1 (left44: "1 pass shapes")
            return f"{n:,} {what}{'' if n == 1 else 'es' if what.endswith('h') else 's'}"

        def each(n: int) -> str:
            return "each " if n != 1 else ""

        axes = " × ".join([
            many(len(grid.servings), "serving"), many(len(grid.cards) if grid.cards else 1, "card"),
            many(len(grid.draft_tokens) if grid.draft_tokens else 1, "draft length"),
            many(len(grid.positions) if grid.positions else 1, "position"), many(len(grid.batches), "batch"),
        ])
        what = f"{many(size, 'row')} ({axes})"
        if stacked:
            what += f" under --stack, {each(size)}counting as {STACK_ROW_ROWS}"
        elif as_json:
            what += f" as JSON, {each(size)}counting as {JSON_ROW_ROWS}"
        if shapes:
            what += f", and {many(shapes, 'pass shape')} to read, {each(shapes)}counting as {SHAPE_ROWS:,}"
        if positioned:
            what += (f", and {many(positioned, 'position')} priced each from a shape read once (past "
                     f"{EXACT_POSITIONS} positions), {each(positioned)}counting as {POSITION_ROWS}")
        if counted != size:
            what += f": {counted:,} rows in all,"
        where = f"{grid.source}: " if grid.source is not None else ""
        lift = "split the grid, use a doubling range of batches (1-4096*2)"
        if size > MAX_ROWS:
            raise InputError(
                f"{where}sweep: {what} is more than the {MAX_ROWS:,} rows a sweep prices whatever --max-rows says; "
                f"{lift}"
            )
        if counted <= MAX_COUNTED:
            lift += f", or raise --max-rows (at most {MAX_COUNTED:,})"
        else:
            lift += f" (--max-rows goes up to {MAX_COUNTED:,})"
        raise InputError(
            f"{where}sweep: {what} is more than the {many(max_rows, 'row')} --max-rows allows (about 2 s of CPU a "
            f"million rows); {lift}"
        )


def repeated_values(grid: Grid) -> list[str]:
    """A line for each axis of ``grid`` that holds a value twice, naming the option (or the sweep file's key) and the
    value: ``--positions: 512.0 is given more than once: a sweep prices each point once (…)``. The command line
    took ``--positions 1,1,1`` (or ``1-4,2-3``, ``--batches 8,8``, ``--cards a,a``, ``sweep S S``) and wrote each row
    again, exit 0, where a sweep file holding a value twice is refused by its schema (``uniqueItems``; attack69). A
    batch range (a :class:`range`) holds none twice. Linear in the values (one set each); ``[]`` when none repeats.
    Raises nothing."""
    axes: list[tuple[str, str, Sequence[Any] | None]] = [
        ("servings", "SERVINGS", [s for s in grid.servings if isinstance(s, str)]),
        ("cards", "--cards", grid.cards),
        ("batches", "--batches", None if isinstance(grid.batches, range) else grid.batches),
        ("positions", "--positions", grid.positions),
        ("draft_tokens", "--draft-tokens", grid.draft_tokens),
    ]
    out = []
    for key, option, values in axes:
        if not values or len(set(values)) == len(values):
            continue
        seen: set[Any] = set()
        twice = next(v for v in values if v in seen or seen.add(v))  # type: ignore[func-returns-value]
        where = f"{grid.source}: {key}" if grid.source is not None else option
        out.append(f"{where}: {schema.shown_value(twice)} is given more than once: a sweep prices each point once "
                   "(a sweep file is refused the same)")
    return out


def every_registered_problems(root: Root, grid: Grid) -> list[str]:
    """The name problems (:func:`passprice.check.name_problems`: names that differ only by case or Unicode
    normalization, or name a Windows device) of ``root``'s servings when ``grid`` sweeps every registered serving, and
    of its cards when it sweeps every registered card, as the listings say them (rows of two servings that print
    alike, exit 0: attack round 33); the grid is still swept. A grid of servings (or cards) named one by one needs no
    listing: when their folder cannot be listed it is no grid of every one, and nothing is said here (left41: ``sweep
    SERVING`` with a ``registry/servings`` of mode 311 stopped on the folder it never reads). Raises nothing more than
    :meth:`passprice.registry.Root.names` does of a folder that is no folder."""
    from passprice.check import name_problems

    def every(folder: Path, names: Sequence[object]) -> bool:
        # a serving given as a spec (sweep --checkpoint) is no registered name: such a grid is not every one
        try:
            return set(names) == set(root.names(folder))
        except Unreadable:
            return False

    twins = []
    if grid.servings and every(root.servings, grid.servings):
        twins += name_problems(root.servings)
    if grid.cards is not None and every(root.cards, grid.cards):
        twins += name_problems(root.cards)
    return twins


def grid_from_file(path: Path, root: Root) -> Grid:
    """The grid a sweep file describes (``schema/sweep.schema.json``): ``servings``, ``batches``, and optionally
    ``cards``, ``positions``, ``draft_tokens``; each list a TOML array, or for batches a table
    ``{from, to, factor}`` (factor 1: every batch); ``cards = ["all"]`` (or ``servings = ["all"]``) means every
    registered one, as ``--cards all`` does. Raises :class:`InputError` or :class:`~passprice.errors.SchemaError`."""
    document = schema.load(path, "sweep", root.schema)
    raw = document["batches"]
    if isinstance(raw, dict):
        lo, hi, factor = int(raw["from"]), int(raw["to"]), int(raw.get("factor", 1))
        if lo > hi:
            raise InputError(f"{path}: batches: from {lo:,} is past to {hi:,}")
        text = f"{lo}-{hi}" + (f"*{factor}" if factor > 1 else "")
        if factor == 1:
            batches = parse_batches(text, f"{path}: batches", most=None)
        else:
            batches = parse_numbers(text, int, f"{path}: batches")
    else:
        batches = tuple(int(b) for b in raw)

    def opt(key: str, kind: Callable[[Any], Any]) -> tuple[Any, ...] | None:
        return tuple(kind(v) for v in document[key]) if key in document else None

    cards = opt("cards", str)
    if cards == ("all",):
        cards = tuple(root.names(root.cards))
    servings = tuple(document["servings"])
    if servings == ("all",):
        servings = tuple(root.names(root.servings))
    # A name that names nothing is reported with this file and its key (the grid is priced later, from the names);
    # a path a sweep file of the registry gives lies inside it (passprice.registry.require_inside).
    from passprice.registry import require_inside, within

    ours = within(root, path)
    for key, names, lookup in (("servings", servings, serving_path), ("cards", cards or (), card_path)):
        for i, name in enumerate(names):
            if ours:
                require_inside(root, name, root.servings if key == "servings" else root.cards, f"{path}: {key}.{i}")
            try:
                lookup(root, name)
            except NotFound as e:
                raise InputError(f"{path}: {key}.{i}: {e}") from None
    return Grid(
        servings=servings,
        batches=batches,
        cards=cards,
        positions=opt("positions", lambda v: unsigned_zero(float(v))),  # -0.0 is 0, as --positions -0.0 is
        draft_tokens=opt("draft_tokens", int),
        source=path,
    )


def swept_spec(root: Root, grid: Grid, entry: str | ServingSpec) -> ServingSpec:
    """The serving spec a sweep prices for ``entry``, one of ``grid.servings``: the registered serving's (or serving
    file's) spec, or ``entry`` itself for a spec, with ``grid.checkpoint`` and ``grid.routing`` put in place of its
    own (and ``grid.limit`` in place of its contexts) by :func:`~passprice.servings.override`, the function ``price
    SERVING --checkpoint C --routing R --limit N`` applies (so a sweep row names, and is priced on, what that price
    is). Raises what :func:`~passprice.servings.load_spec` raises (:class:`~passprice.errors.NotFound`,
    :class:`InputError`)."""
    spec = entry if isinstance(entry, ServingSpec) else load_spec(root, entry)
    if grid.checkpoint is None and grid.routing is None and grid.limit is None:
        return spec
    return override(spec, checkpoint=grid.checkpoint, routing=grid.routing, limit=grid.limit)


def entry_name(entry: str | ServingSpec) -> str:
    """How a refusal names a grid's serving ``entry``: its reference, or for a spec its checkpoint
    (``checkpoint C``)."""
    return f"checkpoint {entry.checkpoint}" if isinstance(entry, ServingSpec) else entry


class _Batches:
    """The seed's ``PassShape::cost`` and ``cost_split`` for an array of batches: every field an array, computed
    with the scalar code's operations in its order, so each element equals the scalar result exactly."""

    def __init__(self, shape: PassShape | _ShapeByPosition, card: Card, pricing: Pricing | None = None) -> None:
        self.shape = shape
        self.card = card
        self.pricing = pricing if pricing is not None else Pricing.limit(card)

    def cost(
        self, batch: np.ndarray, host_sequences: np.ndarray, search: bool = False, trim: bool = False
    ) -> dict[str, np.ndarray]:
        """Every field of the pass for each (batch, host sequences) pair, and ``refusal``: the code of the first
        capacity check it fails (0 when it fits). ``search``: only what a step of the host-split search reads
        (``memory_s``, ``host_s``, ``refusal``), the same values, without the binding term and the rest.
        ``trim``: the terms of a batch every position refuses (the batches a card cannot hold) are not computed:
        its time fields are NaN, its bind 0 (a caller that reads only the fields of the pairs that fit; every other
        field, and every pair that fits, the same values)."""
        sh, card, pricing = self.shape, self.card, self.pricing
        host_sequences = np.minimum(host_sequences, batch)
        b = batch.astype(float)
        bh = host_sequences.astype(float)
        bd = b - bh
        held_bytes = sh.held_shared + bd * sh.held_per_sequence
        capacity_bytes = pricing.capacity
        host_held_bytes = bh * sh.held_per_sequence
        host_capacity_bytes = pricing.host_capacity
        on_chip_bytes = b * sh.on_chip_per_sequence
        on_chip_capacity = pricing.on_chip
        # The first check a pair fails, in the seed's order (no host link, card memory, host memory, on-chip
        # memory): the later checks' codes written first, an earlier one over them; a check no pair fails (most of
        # them, most of the time) writes nothing.
        refusal = np.zeros(batch.shape, dtype=np.int64)
        for failed, code in (
            (on_chip_bytes > on_chip_capacity, _ON_CHIP),
            (host_held_bytes > host_capacity_bytes, _HOST_FULL),
            (held_bytes > capacity_bytes, _CARD_FULL),
            ((host_sequences > 0) if card.host is None else False, _NO_HOST),
        ):
            if np.any(failed):
                refusal[np.broadcast_to(failed, batch.shape)] = code
        cut: Any = ...
        if trim and not search:
            fits = refusal == _OK
            fitting = fits.any(axis=0) if fits.ndim > 1 else fits
            kept = np.flatnonzero(fitting)
            if 4 * len(kept) <= 3 * len(fitting):  # a quarter of the batches or more refused at every position
                cut = (..., kept)
        bc, bhc, bdc = (b, bh, bd) if cut is ... else (b[cut], bh[cut], bd[cut])
        terms = pass_terms(
            pricing,
            batch=bc,
            card_sequences=bdc,
            host_sequences=bhc,
            shared_bytes=sh.shared_bytes(bc),
            read_bytes=sh.read_bytes,
            write_bytes=sh.write_bytes,
            rewrite_bytes=sh.rewrite_bytes,
            array_macs=sh.array_macs,
            vector_macs=sh.vector_macs,
            scale_cycles=sh.scale_cycles,
            float_macs=sh.float_macs,
        )
        if search:
            return {"memory_s": terms.memory_s, "host_s": terms.host_s, "refusal": refusal}
        stacked = np.stack(np.broadcast_arrays(*terms.as_tuple()))
        memory_s, host_s, array_s, vector_s, scale_s = stacked
        # The last of equal maxima binds, as Rust's max_by does.
        binds, binding_s = _binding(stacked)
        pass_s = pass_seconds(pricing, terms, binding_s)
        timed = {
            "memory_s": memory_s,
            "host_s": host_s,
            "array_s": array_s,
            "vector_s": vector_s,
            "scale_s": scale_s,
            "pass_s": pass_s,
            "binds": binds,
            "tokens_per_s": bc * sh.emitted_per_sequence / pass_s,
        }
        if cut is not ...:
            for key, value in timed.items():
                whole = np.zeros(batch.shape, dtype=value.dtype) if key == "binds" else np.full(batch.shape, np.nan)
                whole[cut] = value
                timed[key] = whole
        return {
            "batch": batch,
            "host_sequences": host_sequences,
            **timed,
            "held_bytes": held_bytes,
            "capacity_bytes": np.full(batch.shape, capacity_bytes),
            "refusal": refusal,
        }

    def cost_split(self, batch: np.ndarray, host_memory: bool) -> dict[str, np.ndarray]:
        """The seed's ``cost_split`` for every batch at once: without host memory the plain cost; with it, the
        ternary search over card-held sequences run on all batches together, then the fastest of the final window
        (ties to fewer held on the card). Batches whose search meets a refusal are marked with it."""
        zero = np.zeros(batch.shape, dtype=np.int64)
        if not host_memory:
            return self.cost(batch, zero, trim=True)
        if self.card.host is None:
            out = self.cost(batch, zero, trim=True)
            out["refusal"] = np.full(batch.shape, _NO_HOST)
            return out
        card_room, host_room = _rooms(self.shape, self.card)
        lo = np.maximum(batch - host_room, 0)
        hi = np.minimum(batch, card_room)
        a, z = lo.copy(), hi.copy()
        trouble = np.zeros(batch.shape, dtype=bool)
        while True:
            active = (z - a > 2) & (lo <= hi)
            if not active.any():
                break
            m1 = a + (z - a) // 3
            m2 = z - (z - a) // 3
            c1 = self.cost(batch, batch - m1, search=True)
            c2 = self.cost(batch, batch - m2, search=True)
            t1 = np.maximum(c1["memory_s"], c1["host_s"])
            t2 = np.maximum(c2["memory_s"], c2["host_s"])
            trouble |= active & ((c1["refusal"] != _OK) | (c2["refusal"] != _OK))
            left = active & (t1 <= t2)
            z = np.where(left, m2, z)
            a = np.where(active & ~left, m1, a)
        # The fastest of the final window [a, z] (at most three), the first on ties.
        best = self.cost(batch, np.where(lo <= hi, batch - a, batch - hi))
        trouble |= (lo <= hi) & (best["refusal"] != _OK)
        for offset in (1, 2):
            held = a + offset
            inside = (lo <= hi) & (held <= z)
            if not inside.any():
                continue
            other = self.cost(batch, batch - np.minimum(held, z))
            trouble |= inside & (other["refusal"] != _OK)
            take = inside & (other["pass_s"] < best["pass_s"])
            if not take.any():
                continue
            for key in best:
                best[key] = np.where(take, other[key], best[key])
        best["trouble"] = trouble
        return best


def _binding(stacked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the five terms stacked along a first axis (memory, host, array, vector, scale): the index of each
    element's binding term and its value, exactly :func:`~passprice.cost.binding_index` and the term it picks (the
    last of equal maxima; a NaN, which ``argmax`` takes for the largest, the last NaN). A chain of elementwise
    comparisons: ``argmax`` along the short first axis of a reversed view loops in C once an element, about ten
    times the cost of these five passes."""
    best = stacked[0]
    index = np.zeros(best.shape, dtype=np.intp)
    for k in range(1, len(stacked)):
        term = stacked[k]
        take = (term >= best) | np.isnan(term)
        best = np.where(take, term, best)
        index[take] = k
    return index, best


def _rooms(shape: Any, card: Card) -> tuple[Any, Any]:
    """The seed's ``card_room`` and ``host_room`` for a shape whose per-sequence bytes may be an array (one value a
    context position): ⌊(capacity − shared) / max(per sequence, 1)⌋ and ⌊host capacity / max(per sequence, 1)⌋, at
    least 0, at most ``u32::MAX``."""
    if isinstance(shape, PassShape):
        return shape.card_room(card), shape.host_room(card)
    per = np.maximum(shape.held_per_sequence, 1.0)
    card_room = np.minimum(np.floor(np.maximum((card.memory.capacity.value - shape.held_shared) / per, 0.0)), U32_MAX)
    host_cap = card.host.capacity.value if card.host is not None else 0.0
    host_room = np.minimum(np.floor(host_cap / per), U32_MAX) if card.host is not None else np.zeros_like(per)
    return card_room.astype(np.int64), host_room.astype(np.int64)


@attrs.frozen
class _ShapeByPosition:
    """A pass's shape at every context position of a sweep at once: :class:`~passprice.serving.PassShape`'s fields,
    those that depend on the position as a column of one value a position (shape ``(P, 1)``; a float where every
    position shares it). Either the exact shapes of each position stacked (:meth:`stack`: every row the scalar
    pricer's bit for bit), or, for many positions, built from the pass at no context plus each attention group's
    cost per position read and held (:meth:`of`, the step pricer's decomposition,
    :func:`passprice.steps.attention_groups`): equal to the seed's pass at each position to rounding (the sums are
    grouped differently; the tests hold it to 1e-12)."""

    rows_per_sequence: int
    emitted_per_sequence: float
    weight_bytes: Any
    embed_bytes: Any
    read_bytes: Any
    write_bytes: Any
    rewrite_bytes: Any
    array_macs: Any
    vector_macs: Any
    scale_cycles: Any
    held_shared: Any
    held_per_sequence: Any
    on_chip_per_sequence: Any
    experts: tuple[Any, ...] = ()
    float_macs: tuple[tuple[str, float], ...] = ()
    _streamed: dict[float, float] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    _last_batches: list[Any] = attrs.field(factory=list, init=False, eq=False, repr=False)

    def expert_bytes(self, batch: Any) -> Any:
        """The routed experts a pass streams (:meth:`~passprice.serving.PassShape.expert_bytes`): they depend on
        the batch, not the position. For an array of batches, each distinct batch is priced by the scalar code on a
        Python float (and kept for the block's next call), because NumPy's vectorized ``power`` may round the
        routing's (1 − p)^tokens one unit in the last place away from the C library's, and every row must be the
        scalar pricer's bit for bit."""
        if not isinstance(batch, np.ndarray):
            return PassShape.expert_bytes(self, batch)  # type: ignore[arg-type]
        # A block's every call (its host-split search) and the serving's other cards price the same batches: the
        # last array's bytes kept with it.
        key = (batch.shape, batch.dtype.str, batch.tobytes())
        last = self._last_batches
        if last and last[0] == key:
            return last[1]
        values, inverse = np.unique(batch, return_inverse=True)
        kept = self._streamed
        for value in values.tolist():
            if value not in kept:
                kept[value] = PassShape.expert_bytes(self, float(value))  # type: ignore[arg-type]
        exact = np.array([kept[value] for value in values.tolist()], dtype=float)
        made = exact[inverse].reshape(batch.shape)
        made.flags.writeable = False
        last[:] = [key, made]
        return made

    def shared_bytes(self, batch: Any) -> Any:
        """Bytes streamed once for the batch (:meth:`~passprice.serving.PassShape.shared_bytes`, the same
        operations)."""
        return PassShape.shared_bytes(self, batch)  # type: ignore[arg-type]

    def take(self, rows: np.ndarray) -> _ShapeByPosition:
        """The shape at the positions ``rows`` (indices into its columns) only: every column cut to those rows, a
        value every position shares kept as it is."""
        cut = {
            name: value[rows] if isinstance(value, np.ndarray) else value
            for name in _SHAPE_COLUMNS
            for value in (getattr(self, name),)
        }
        return attrs.evolve(self, **cut)

    @classmethod
    def stack(cls, shapes: Sequence[PassShape]) -> _ShapeByPosition:
        """The exact shapes of one serving at several positions as columns (every quantity a ``(P, 1)`` array).
        The rows and tokens a sequence emits, and a mixture of experts' routed experts, do not depend on the
        position (they are the draft's and the routing's)."""
        first = shapes[0]
        assert all(
            s.rows_per_sequence == first.rows_per_sequence
            and s.emitted_per_sequence == first.emitted_per_sequence
            and s.experts == first.experts
            and s.float_macs == first.float_macs
            for s in shapes
        )

        def column(name: str) -> np.ndarray:
            return np.array([getattr(s, name) for s in shapes], dtype=float)[:, None]

        return cls(
            rows_per_sequence=first.rows_per_sequence,
            emitted_per_sequence=first.emitted_per_sequence,
            experts=first.experts,
            float_macs=first.float_macs,
            **{name: column(name) for name in _SHAPE_COLUMNS},
        )

    @classmethod
    def of(
        cls, header: Any, serving: Serving, positions: np.ndarray, routing_free: bool = False
    ) -> _ShapeByPosition:
        """The shape of ``serving`` (one context class, its limit) at each of ``positions``; ``routing_free``: the
        routing-free shape (:func:`~passprice.serving.pass_shape`'s: what the card holds and how many sequences fit,
        no experts streamed; attention reads no routing). Raises what :func:`~passprice.serving.pass_shape` raises at
        no context."""
        from passprice.architectures import paged_cap, windowed_held_array, windowed_reads_array
        from passprice.steps import attention_groups

        zero = pass_shape(
            header, attrs.evolve(serving, contexts=ContextMix.uniform(0.0, 0), kv_page=None), routing_free=routing_free
        )
        k = serving.draft.tokens if serving.draft is not None else 0
        limit = float(serving.contexts.longest())
        p = positions.astype(float)[:, None]
        cap = paged_cap(int(limit), serving.kv_page) if serving.kv_page is not None else 0
        read, vector, array, scale, held = (np.zeros_like(p) for _ in range(5))
        for g in attention_groups(header, serving, k):
            # The seed's positions read (the mean position; a windowed layer at most window − 1, its row written
            # besides) and held (the limit, or the position and half a page, at most the pages the limit needs:
            # passprice.architectures.paged_held; a windowed layer at most the window), for one class.
            held_at = limit if serving.kv_page is None else np.minimum(p + serving.kv_page / 2.0, float(cap))
            if g.window is None:
                at, kept = p, held_at
            else:
                at = windowed_reads_array(p, g.window)
                kept = windowed_held_array(np.asarray(held_at, dtype=float), g.window)
            read = read + g.read * at
            vector = vector + g.vector * at
            array = array + g.array * at
            scale = scale + g.scale * at
            held = held + g.held * kept
        return cls(
            rows_per_sequence=zero.rows_per_sequence,
            emitted_per_sequence=zero.emitted_per_sequence,
            weight_bytes=zero.weight_bytes,
            embed_bytes=zero.embed_bytes,
            read_bytes=zero.read_bytes + read,
            write_bytes=zero.write_bytes,
            rewrite_bytes=zero.rewrite_bytes,
            array_macs=zero.array_macs + array,
            vector_macs=zero.vector_macs + vector,
            scale_cycles=zero.scale_cycles + scale,
            held_shared=zero.held_shared,
            held_per_sequence=zero.held_per_sequence + held,
            on_chip_per_sequence=zero.on_chip_per_sequence,
            experts=zero.experts,
            float_macs=zero.float_macs,
        )


#: The fields of a pass shape that may change with the position (every quantity).
_SHAPE_COLUMNS = (
    "weight_bytes",
    "embed_bytes",
    "read_bytes",
    "write_bytes",
    "rewrite_bytes",
    "array_macs",
    "vector_macs",
    "scale_cycles",
    "held_shared",
    "held_per_sequence",
    "on_chip_per_sequence",
)


class StepText(str):
    """A sweep row's refusal cell for a :class:`~passprice.serving.Step` refusal: ``Step: INNER: its message``
    (``Step: UnknownArchitecture: g.gguf: general.architecture 'foo' is no architecture …``), so a CSV row says which
    refusal of the decode step stopped it and why (session 36, arch42: it said ``Step`` alone). ``fields``: what a
    JSON row holds instead, the keys ``price --json`` gives the same refusal (``"refusal": "Step"``, ``"step":
    {"refusal": INNER, …its fields}``, ``"message"``; :func:`json_fields`). A ``str`` (the cell's text), so a
    segment's refusal names compare and count as text."""

    fields: dict[str, Any]

    def __new__(cls, text: str, fields: dict[str, Any]) -> StepText:
        made = super().__new__(cls, text)
        made.fields = fields
        return made

    def __getnewargs__(self) -> tuple[str, dict[str, Any]]:  # type: ignore[override]
        return str(self), self.fields

    @classmethod
    def of(cls, refusal: Step) -> StepText:
        """The cell of ``refusal``; its ``fields`` are ``refusal.to_json()``."""
        return cls(f"{refusal.name}: {refusal.refusal.name}: {refusal.refusal}", refusal.to_json())

    @property
    def json(self) -> str:
        """:attr:`fields` as the text of a JSON object's members (no braces), in their order."""
        return ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in self.fields.items())


def refusal_text(refusal: ServingRefusal) -> str:
    """What a sweep row's ``refusal`` cell says of ``refusal``: its name, or for a refused decode step
    (:class:`~passprice.serving.Step`) a :class:`StepText` naming the inner refusal and its message."""
    return StepText.of(refusal) if isinstance(refusal, Step) else refusal.name


def _json_refusal(name: str) -> str:
    """A refused JSON row's keys from ``refusal`` on (without the closing brace): ``"refusal": NAME``, or a
    :class:`StepText`'s ``json``."""
    return name.json if isinstance(name, StepText) else f'"refusal": {json.dumps(name)}'


def json_fields(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """``row`` as a JSON row holds it: a :class:`StepText` ``refusal`` becomes its ``fields`` (``"refusal": "Step"``,
    ``step``, ``message``) in its place, and a :class:`StepText` ``expected_refusal`` (``--stack``) its name alone."""
    if not any(isinstance(v, StepText) for v in row.values()):
        return row
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, StepText):
            if k == "refusal":
                out.update(v.fields)
            else:
                out[k] = v.fields["refusal"]
        else:
            out[k] = v
    return out


def _row_refusal(code: int) -> str:
    return {_NO_HOST: NoHostLink.name, _CARD_FULL: NotResident.name, _HOST_FULL: NotResident.name}.get(
        code, OnChipOverflow.name
    )


@attrs.frozen
class Tally:
    """What a sweeper counted of the rows it made (:meth:`Sweeper.take_tally`): ``refused`` rows by refusal, in the
    order each was first met, ``first_refused`` (each refusal's first row: its ``common`` and batch), ``priced`` rows
    and whether one had a price (``saw_price``). A worker of ``sweep --jobs N`` sends this process one a block it
    makes, and the blocks' tallies added in grid order (:meth:`Sweeper.add_tally`) are the one-process sweep's."""

    refused: dict[str, int]
    first_refused: dict[str, tuple[dict[str, Any], int]]
    priced: int
    saw_price: bool


class Sweeper:
    """Prices a :class:`Grid` from a root, loading each card, checkpoint and drafting method once; ``as_json``: its
    rows are to be written as JSON, each counted as :data:`JSON_ROW_ROWS` against ``max_rows``."""

    def __init__(
        self,
        root: Root,
        stack: Any = None,
        max_rows: int = DEFAULT_MAX_ROWS,
        as_json: bool = False,
        memory_use: float | None = None,
    ) -> None:
        self.root = root
        self.stack = stack
        #: ``--memory-use``: the headroom every serving of the grid is swept at, in place of its own ``memory_use``
        #: (``None``: each serving's own, if any). A row holding more than that fraction of the card memory the
        #: serving may fill is refused as the card being full, as the best and largest batch's searches exclude it.
        self.memory_use = memory_use
        self.max_rows = max_rows
        self.as_json = as_json
        self._cards: dict[str, Card] = {}
        self._methods: dict[str, DraftMethod] = {}
        self._routings: dict[str, Routing] = {}
        self._labels: dict[str, str] = {}
        self._record_labels: dict[tuple[str, str], str] = {}
        #: Whether a segment this sweeper made had a row with a price (:meth:`Segment.has_price`): a sweep that saw
        #: one needs no :func:`nothing_priced` probe. A worker's (``--jobs N``) are added once the sweep is made
        #: (:meth:`add_tally`, :mod:`passprice.sweepjobs`).
        self.saw_price = False
        #: The rows this sweeper's segments refused, by refusal (a step refusal by its cell's text), with the
        #: ``common`` and batch of each one's first row (:func:`refused_row` says its message), and the rows priced:
        #: what a sweep says on stderr of its refusals (``passprice.cli``; with ``--jobs N`` the whole grid's, each
        #: block's tally added in grid order by :mod:`passprice.sweepjobs`).
        self.refused: dict[str, int] = {}
        self.first_refused: dict[str, tuple[dict[str, Any], int]] = {}
        self.priced_rows = 0
        self._checked: Grid | None = None

    def card(self, name: str) -> Card:
        """The card ``name``, loaded once."""
        if name not in self._cards:
            self._cards[name] = load_card(self.root, name)
        return self._cards[name]

    def method(self, name: str) -> DraftMethod:
        """The drafting method ``name``, loaded once."""
        if name not in self._methods:
            self._methods[name] = load_draft_method(self.root, name)
        return self._methods[name]

    def routing(self, name: str | None) -> Routing | None:
        """The routing record ``name`` (``None`` for none), loaded once."""
        if name is None:
            return None
        if name not in self._routings:
            self._routings[name] = load_routing(self.root, name)
        return self._routings[name]

    def not_found(self, grid: Grid, skip: Iterable[str] = ()) -> list[str]:
        """The lines of :class:`NotFound` of every serving and card ``grid`` names that names nothing (its servings
        first, then its cards, each once; ``skip``: cards already said), as :meth:`check` refuses them; ``[]`` when
        every one is found. Every wrong name said at once (round 18: the first of a serving and a card alone), up to
        :data:`~passprice.registry.MAX_NOT_FOUND` of them, then one line for the rest: each is looked for where it
        might be instead (another kind's folder, the facts passprice ships, the closest names), about half a
        millisecond, so 5,000 names on the command line took 4.6 s (attack round 47). Raises
        :class:`InputError` for a serving or card that is found but does not read."""
        from passprice.registry import MAX_NOT_FOUND

        missing: list[str] = []
        not_looked = 0
        looks: list[tuple[str, Callable[[str], object], str]] = [
            (name, lambda n: load_spec(self.root, n), "")
            for name in dict.fromkeys(grid.servings) if not isinstance(name, ServingSpec)
        ]
        said = set(skip)
        # a card of --cards named by the option, as compare and kv name it (`sweep --cards MI300X` said `card
        # 'MI300X': …` where they say `--cards: card 'MI300X': …`; tests/test_fix184.py); a grid file's cards are
        # refused with its file and key before this
        looks += [(card, self.card, "--cards: ") for card in dict.fromkeys(grid.cards or ()) if card not in said]
        for name, look, key in looks:
            if len(missing) >= MAX_NOT_FOUND:
                not_looked += 1
                continue
            try:
                look(name)
            except NotFound as e:
                missing += [f"{key}{line}" for line in e.lines]
        if not_looked:
            missing.append(f"sweep: {not_looked:,} more serving and card names not looked up after {MAX_NOT_FOUND} "
                           "not found: correct these first")
        return missing

    def check(self, grid: Grid) -> None:
        """Refuse, before anything is priced, a grid :func:`check_grid` refuses (its rows and the pass shapes it
        reads counted against ``max_rows``), one with a value twice on an axis (:func:`repeated_values`), a batch
        outside a u32, or one that reads more than :data:`MAX_SHAPES`
        pass shapes: a shape is read once a (serving, draft tokens, position)
        whatever the card, or, past :data:`EXACT_POSITIONS` positions, once a (serving, card, draft tokens) (but
        still once a position for a serving with a shared prefix: its positions are not decomposed). Raises
        :class:`InputError`, also for a serving, checkpoint, card or drafting method that does not load, and for
        drafts asked of a serving without a drafting method (so nothing fails once a progress bar is shown), and
        :class:`~passprice.scopes.OutOfScope` for a drafting method or routing record out of its scope."""
        from passprice.checkpoints import load_checkpoint

        stacked = self.stack is not None
        check_grid(grid, self.max_rows, stacked, as_json=self.as_json)  # the rows alone, before any file is read
        repeated = repeated_values(grid)
        if repeated:
            raise InputError.of(repeated)
        if grid.batches and (min(grid.batches) < 0 or max(grid.batches) > U32_MAX):
            raise InputError(f"batches: each must be from 0 to {U32_MAX:,} (the seed's batch is a u32)")
        missing = self.not_found(grid)
        if missing:
            raise InputError.of(missing)
        per = (len(grid.cards) if grid.cards else 1) * (len(grid.draft_tokens) if grid.draft_tokens else 1)
        positions = len(grid.positions) if grid.positions else 1
        shapes = positioned = 0
        for entry in grid.servings:
            spec = swept_spec(self.root, grid, entry)
            name = entry_name(entry)
            header = load_checkpoint(self.root, spec.checkpoint)
            if grid.cards is None:
                self.card(spec.card)
            method = self.method(spec.draft.method) if spec.draft is not None else None
            # The drafting method's and routing record's scopes, as every command's resolve checks them.
            require_scopes(
                self.root, spec.checkpoint, header, (spec.draft.method if spec.draft else None, method),
                (spec.routing, self.routing(spec.routing)), source=spec.source,
            )
            for tokens in grid.draft_tokens or ():
                if tokens:
                    self._spec(spec, tokens, None, name)
            alone = positions if spec.shared_prefix else 1
            if positions <= EXACT_POSITIONS or spec.shared_prefix:
                shapes += (len(grid.draft_tokens) if grid.draft_tokens else 1) * positions
            else:
                shapes += per
                positioned += per * positions  # each a block of its own (POSITION_ROWS)
            if shapes > MAX_SHAPES:
                why = ""
                if alone > 1:
                    why = f" ({name} shares a prefix, so each of its {positions:,} positions is read alone)"
                raise InputError(
                    f"sweep: more than {MAX_SHAPES:,} pass shapes to read{why}, milliseconds each; split the grid"
                )
        check_grid(grid, self.max_rows, stacked, shapes, as_json=self.as_json, positioned=positioned)
        self._checked = grid

    def defaulted(self, grid: Grid) -> list[str]:
        """One line for each checkpoint of ``grid`` whose window is priced from llama.cpp's default (a gemma2
        header without its window: :func:`passprice.architectures.defaulted_window`), naming the checkpoint as its
        rows do, then price's ``defaulted`` line (key, value, citation); ``[]`` when none is. What ``sweep`` says
        once a command on stderr: a CSV or JSON row has no place for a note, and a column repeating it on every row
        would change the rows' contract. Raises :class:`InputError` for a checkpoint that does not load (none does
        once :meth:`check` passed)."""
        from passprice.architectures import defaulted_window
        from passprice.checkpoints import load_checkpoint

        lines: dict[str, str] = {}
        for entry in grid.servings:
            checkpoint = swept_spec(self.root, grid, entry).checkpoint
            label = self._record_label("checkpoints", checkpoint)
            if label in lines:
                continue
            d = defaulted_window(load_checkpoint(self.root, checkpoint))
            if d is not None:
                lines[label] = f"{label}: {d.line()}"
        return list(lines.values())

    def rows(self, grid: Grid, progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Every row of the sweep as a dictionary, in grid order (serving, card, draft tokens, position, batch);
        ``progress`` is called with the number of rows done after each block. Raises :class:`InputError` for a
        serving, card or method that does not load, or a grid :meth:`check` refuses. (A program that writes the rows
        uses :meth:`segments` and :func:`write_segments`: columns, not a dictionary a row.)"""
        for segment in self.segments(grid, progress):
            yield from segment.rows()

    def segments(
        self, grid: Grid, progress: Callable[[int], None] | None = None, units: range | None = None
    ) -> Iterator[Segment]:
        """The sweep as :class:`Segment` s, in grid order: one a (serving, card, draft tokens, position), each the
        grid's batches as columns, or, when they are more than :data:`BLOCK_CELLS`, one a run of at most that many of
        them; ``progress`` as for :meth:`rows`. Positions × batches are priced a block of at most
        :data:`BLOCK_CELLS` cells at a time (:func:`blocks`), and only one block's arrays are alive at a time, so a
        sweep long on any axis is priced in bounded memory. ``units``: only the (serving, card) pairs numbered so in
        grid order (serving × the grid's cards + card, :func:`units_of`; ``None``: all), each priced exactly as in the
        whole grid (a part of the sweep another process prices: :mod:`passprice.sweepjobs`)."""
        from passprice.checkpoints import load_checkpoint

        if grid is not self._checked:
            self.check(grid)
        batches = batch_array(grid.batches)
        per_serving = len(grid.cards) if grid.cards else 1
        for index, serving_name in enumerate(grid.servings):
            first = index * per_serving
            if units is not None and (first + per_serving <= units.start or first >= units.stop):
                continue
            base = swept_spec(self.root, grid, serving_name)
            header = load_checkpoint(self.root, base.checkpoint)
            base = complete(base, header)
            if self.memory_use is not None:  # --memory-use: the serving's field, as every command's option sets it
                base = attrs.evolve(base, memory_use=self.memory_use)
            shapes: dict[tuple[int, float | None], PassShape | ServingRefusal] = {}
            stacks: dict[tuple[tuple[int, float | None], ...], _ShapeByPosition] = {}
            made_specs: dict[int, list[ServingSpec]] = {}  # by draft tokens: the same for every card
            for unit, card_name in enumerate(grid.cards or (base.card,), first):
                if units is not None and unit not in units:
                    continue
                card = self.card(card_name)
                for tokens in grid.draft_tokens or ((base.draft.tokens if base.draft else 0),):
                    if tokens not in made_specs:
                        positions = grid.positions or (None,)
                        made_specs[tokens] = [
                            self._spec(base, tokens, p, entry_name(serving_name)) for p in positions
                        ]
                    specs = made_specs[tokens]
                    if len(specs) > EXACT_POSITIONS and not base.shared_prefix:
                        made = self._positions(batches, header, card, serving_name, specs, progress)
                    else:
                        keys = [(tokens, p) for p in grid.positions or (None,)]
                        made = self._exact(
                            batches, header, card, serving_name, specs, keys, shapes, progress, stacks
                        )
                    for segment in made:
                        if not self.saw_price and segment.has_price():
                            self.saw_price = True
                        self._tally(segment)
                        yield self._refused_under_stack(segment)

    def _tally(self, segment: Segment) -> None:
        """Count ``segment``'s refused rows by refusal (:attr:`refused`, :attr:`first_refused`) and its priced
        ones (:attr:`priced_rows`): a row priced alone counts as its own fields say."""
        status = segment.status
        self.priced_rows += int((status == _PRICED).sum())
        codes = status[status > 0]
        if len(codes):
            counts = np.bincount(codes)
            for code in np.flatnonzero(counts).tolist():
                name = str(segment.names[code - 1])
                self.refused[name] = self.refused.get(name, 0) + int(counts[code])
                if name not in self.first_refused:
                    at = int(np.flatnonzero(status == code)[0])
                    self.first_refused[name] = (segment.common, int(segment.batches[at]))
        for j, fields in segment.alone.items():
            refusal = fields.get("refusal")
            if not refusal:
                self.priced_rows += 1
                continue
            name = str(refusal)
            self.refused[name] = self.refused.get(name, 0) + 1
            self.first_refused.setdefault(name, (segment.common, int(segment.batches[j])))

    def take_tally(self) -> Tally:
        """What this sweeper has counted since the last take (:attr:`refused`, :attr:`first_refused`,
        :attr:`priced_rows`, :attr:`saw_price`), those then emptied: one block's tally of ``sweep --jobs N``. Raises
        nothing."""
        tally = Tally(self.refused, self.first_refused, self.priced_rows, self.saw_price)
        self.refused, self.first_refused, self.priced_rows, self.saw_price = {}, {}, 0, False
        return tally

    def add_tally(self, tally: Tally) -> None:
        """Add ``tally`` (the rows after those counted so far, in grid order) to what this sweeper has counted: each
        refusal's rows added, a refusal first met here kept after the others, its first row kept where it has none.
        Raises nothing."""
        for name, n in tally.refused.items():
            self.refused[name] = self.refused.get(name, 0) + n
        for name, first in tally.first_refused.items():
            self.first_refused.setdefault(name, first)
        self.priced_rows += tally.priced
        self.saw_price = self.saw_price or tally.saw_price

    def _refused_under_stack(self, segment: Segment) -> Segment:
        """``segment``, and under a stack with no expected price (the serving itself is refused), its stack columns
        saying the same refusal, so every row of a ``--stack`` sweep carries :data:`STACK_COLUMNS`."""
        if self.stack is None or segment.expected is not None:
            return segment
        none = dict.fromkeys(STACK_COLUMNS[1:])
        cells = {
            j: {"stack": self.stack.name, **none, "expected_refusal": segment.names[code - 1] if code > 0 else None}
            for j, code in enumerate(segment.status.tolist())
        }
        return attrs.evolve(segment, expected=cells)

    def _spec(self, base: ServingSpec, tokens: int, position: float | None, name: str = "serving") -> ServingSpec:
        draft = base.draft
        if tokens == 0:
            draft = None
        elif draft is not None:
            draft = DraftSpec(draft.method, tokens, draft.head_rows)
        else:
            raise InputError(
                f"{name} draws no drafts (no drafting method), so it cannot draft {tokens} tokens: give "
                "--draft-tokens 0"
            )
        spec = attrs.evolve(base, draft=draft)
        if position is not None:
            spec = override(spec, position=position)
        return spec

    def _serving(self, spec: ServingSpec) -> Serving:
        acceptance = self.method(spec.draft.method).first(spec.draft.tokens) if spec.draft else ()
        return to_serving(spec, acceptance, self.routing(spec.routing))

    def _label(self, serving_name: str | ServingSpec) -> str | None:
        """The serving's name in a row (:func:`record_label`), looked up once a serving; ``None`` for a spec (a
        checkpoint swept with no serving: its ``serving`` cell empty, ``null`` in JSON)."""
        if isinstance(serving_name, ServingSpec):
            return None
        found = self._labels.get(serving_name)
        if found is None:
            found = self._labels[serving_name] = record_label(self.root.servings, serving_name)
        return found

    def _record_label(self, kind: str, ref: str) -> str:
        """A checkpoint's or routing record's name in a row (:func:`record_label` in the registry's folder ``kind``,
        ``checkpoints`` or ``routing``), looked up once a sweep: every segment of a serving names the same ones
        (1,616 segments in the bench grid, each finding the folder's path and, for a path, its file again)."""
        found = self._record_labels.get((kind, ref))
        if found is None:
            found = self._record_labels[(kind, ref)] = record_label(getattr(self.root, kind), ref)
        return found

    def _common(self, card: Card, serving_name: str | ServingSpec, spec: ServingSpec) -> dict[str, Any]:
        contexts = spec.contexts or ()
        return {
            "card": card.name,
            "serving": self._label(serving_name),
            "checkpoint": self._record_label("checkpoints", spec.checkpoint),
            "routing": self._record_label("routing", spec.routing) if spec.routing is not None else None,
            "draft_tokens": spec.draft.tokens if spec.draft else 0,
            "position": whole(sum(c.share * (c.position or 0.0) for c in contexts)),
            "limit": max((c.limit or 0 for c in contexts), default=0),
        }

    def _expected(
        self,
        shape: PassShape,
        columns: Any,
        card: Card,
        batches: np.ndarray,
        host_memory: bool,
        memory_use: float | None = None,
    ) -> _Expected:
        """A block priced under the sweep's stack: its pricing from ``shape`` (a position's pass, or the probe at
        position 0: the facts a stack needs do not depend on the position), the arrays of ``columns`` at it; its
        capacity the stack's times ``memory_use`` when given (:func:`passprice.batching.use_of`)."""
        from passprice.stacks import StackLacks, expected_pricing

        try:
            pricing, used = expected_pricing(self.stack, card, shape, host_memory)
        except StackLacks as e:
            return _Expected(None, (), None, e.name)
        fitted = use_of(card, pricing, memory_use) or pricing  # the stack's capacity times the headroom, if any
        return _Expected(fitted, used, _Batches(columns, card, fitted).cost_split(batches, host_memory))

    def _with_stack(
        self,
        segment: Segment,
        expected: _Expected | None,
        index: tuple[int, ...],
        exact: Callable[[], PassShape],
        host_memory: bool,
        card: Card,
    ) -> Segment:
        """``segment`` with the stack's columns (issue 14), or as it is without a stack. A row outside where the
        stack's facts hold (its ``range.*``: token-rows a pass, the position) has no expected price:
        ``BeyondStack``."""
        if self.stack is None or expected is None:
            return segment
        cells = _expected_cells(
            expected, index, segment.batches, segment.provenance, exact, host_memory, card, self.stack.name
        )
        if expected.priced is not None:
            from passprice.stacks import BeyondStack, held

            bounds, _ = held(self.stack, card.name)
            if bounds is not None:
                rows_per_sequence = 1 + int(segment.common["draft_tokens"])
                position = float(segment.common["position"])
                for j, b in enumerate(segment.batches.tolist()):
                    if cells[j]["expected_refusal"] is not None:
                        continue
                    try:
                        bounds.check_position(position)
                        bounds.check_batch(int(b), rows_per_sequence)
                    except BeyondStack as e:
                        cells[j] = {**dict.fromkeys(cells[j]), "stack": self.stack.name, "expected_refusal": e.name}
        return attrs.evolve(segment, expected=cells)

    def _exact(
        self,
        batches: np.ndarray,
        header: Any,
        card: Card,
        serving_name: str | ServingSpec,
        specs: list[ServingSpec],
        keys: list[tuple[int, float | None]],
        shapes: dict[tuple[int, float | None], PassShape | ServingRefusal],
        progress: Callable[[int], None] | None = None,
        stacks: dict[tuple[tuple[int, float | None], ...], _ShapeByPosition] | None = None,
    ) -> Iterator[Segment]:
        """The segments of one (card, serving, draft tokens): each position's exact pass shape (read once a
        serving, draft length and position, whatever the card: ``shapes`` keeps them), stacked as columns and
        priced over positions × batches on arrays, a block (:func:`blocks`) at a time, so every row is the scalar
        pricer's bit for bit. When the batches fit one block, ``stacks`` keeps the stacked shapes for the serving's
        other cards (with the routed experts' bytes of each batch, which do not depend on the card)."""
        missing = {key: self._serving(spec) for spec, key in zip(specs, keys, strict=True) if key not in shapes}
        if missing:
            shapes.update(zip(missing, _read_shapes(header, tuple(missing.values())), strict=True))
        # A stack's pricing comes from the first position's pass that prices (the facts it needs do not depend on
        # the position), the same for every block.
        first = next((s for s in (shapes[k] for k in keys) if isinstance(s, PassShape)), None)
        for rows, cols in blocks(len(specs), len(batches)):
            chunk = batches[cols]
            found: list[tuple[int, PassShape]] = []
            for n in range(rows.start, rows.stop):
                got = shapes[keys[n]]
                if isinstance(got, PassShape):
                    found.append((n, got))
            priced = None
            if found:
                which = tuple(keys[n] for n, _ in found)
                kept = stacks.get(which) if stacks is not None else None
                stacked = kept if kept is not None else _ShapeByPosition.stack([s for _, s in found])
                if stacks is not None and kept is None and len(batches) <= BLOCK_CELLS:
                    stacks[which] = stacked
                grid2d = np.broadcast_to(chunk, (len(found), len(chunk))).copy()
                priced = _Batches(stacked, card, use_of(card, None, specs[0].memory_use)).cost_split(
                    grid2d, specs[0].host_memory
                )
            expected = (
                self._expected(first, stacked, card, grid2d, specs[0].host_memory, specs[0].memory_use)
                if self.stack is not None and found and first is not None
                else None
            )
            row_of = {n: i for i, (n, _) in enumerate(found)}
            for n in range(rows.start, rows.stop):
                spec = specs[n]
                common = self._common(card, serving_name, spec)
                got = shapes[keys[n]]
                if not isinstance(got, PassShape) or priced is None:
                    assert isinstance(got, ServingRefusal)
                    if isinstance(got, Routed):
                        yield _routed(common, chunk, got, header, card, self._serving(spec))
                        continue
                    yield _refused(common, chunk, refusal_text(got))
                    continue
                exact = functools.partial(_itself, got)
                segment = _emit(
                    common, chunk, priced, (row_of[n],), card, got, exact, spec.host_memory, spec.memory_use
                )
                yield self._with_stack(segment, expected, (row_of[n],), exact, spec.host_memory, card)
            if progress is not None:
                progress(len(chunk) * (rows.stop - rows.start))

    def _positions(
        self,
        batches: np.ndarray,
        header: Any,
        card: Card,
        serving_name: str | ServingSpec,
        specs: list[ServingSpec],
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[Segment]:
        """The segments of one (card, serving, draft tokens) at more than :data:`EXACT_POSITIONS` positions: the
        pass's shape as a column of positions decomposed by attention group (:class:`_ShapeByPosition.of`: one
        shape read, not one a position; equal to the scalar pricer to 1e-12, not bit for bit), priced over
        positions × batches on arrays, a block (:func:`blocks`) at a time."""
        positions = np.array([sum(c.share * (c.position or 0.0) for c in s.contexts or ()) for s in specs])
        serving = self._serving(specs[0])
        limit = serving.contexts.longest()
        # A position at its limit leaves no room for the row a pass writes (BadContexts, as price refuses it).
        valid = (positions >= 0.0) & (positions < float(limit))
        probe = attrs.evolve(serving, contexts=ContextMix.uniform(0.0, limit))
        # A mixture of experts without a routing record is priced on the routing-free shape, each row then refused
        # for capacity where no routing makes its batch fit and Routed where one might, as price refuses it
        # (walk48; arch44: every row said Routed past EXACT_POSITIONS positions, gpt-oss-120b on a 10 GB card too).
        routed: Routed | None = None
        try:
            try:
                shape = pass_shape(header, probe)
            except Routed as e:
                routed = e
                shape = pass_shape(header, probe, routing_free=True)
        except ServingRefusal as e:
            # The seed refuses these before it reads the contexts; the others after a bad context mix.
            early = isinstance(e, Empty | Routed | BadDraft)
            for rows, cols in blocks(len(specs), len(batches)):
                for n in range(rows.start, rows.stop):
                    name = refusal_text(e) if early or valid[n] else BadContexts.name
                    yield _refused(self._common(card, serving_name, specs[n]), batches[cols], name)
                if progress is not None:
                    progress(len(batches[cols]) * (rows.stop - rows.start))
            return
        kept = np.nonzero(valid)[0]
        free = routed is not None
        every = _ShapeByPosition.of(header, probe, positions[kept], routing_free=free) if len(kept) else None
        row_of = {int(k): i for i, k in enumerate(kept)}
        for rows, cols in blocks(len(specs), len(batches)):
            chunk = batches[cols]
            inside = [n for n in range(rows.start, rows.stop) if n in row_of]
            priced = columns = None
            if every is not None and inside:
                columns = every.take(np.array([row_of[n] for n in inside]))
                grid2d = np.broadcast_to(chunk, (len(inside), len(chunk))).copy()
                priced = _Batches(columns, card, use_of(card, None, serving.memory_use)).cost_split(
                    grid2d, serving.host_memory
                )
            expected = (
                self._expected(shape, columns, card, grid2d, serving.host_memory, serving.memory_use)
                if self.stack is not None and columns is not None and routed is None
                else None
            )
            row_in_block = {n: i for i, n in enumerate(inside)}
            for n in range(rows.start, rows.stop):
                spec = specs[n]
                common = self._common(card, serving_name, spec)
                if n not in row_in_block or priced is None:
                    yield _refused(common, chunk, BadContexts.name)
                    continue
                exact = functools.partial(pass_shape, header, self._serving(spec), routing_free=free)
                at = (row_in_block[n],)
                segment = _emit(common, chunk, priced, at, card, shape, exact, serving.host_memory, serving.memory_use)
                if routed is not None:
                    yield _fitting_routed(segment, routed.name)
                    continue
                yield self._with_stack(segment, expected, at, exact, serving.host_memory, card)
            if progress is not None:
                progress(len(chunk) * (rows.stop - rows.start))


@attrs.frozen
class _Expected:
    """A block priced under a serving stack (issue 14): its ``pricing``, the stack facts it rests on (``used``),
    and the priced arrays (``priced``; ``None`` when the stack refuses the serving, ``refusal`` names why)."""

    pricing: Any
    used: tuple[tuple[str, Any], ...]
    priced: Mapping[str, np.ndarray] | None
    refusal: str | None = None


def _expected_cells(
    expected: _Expected,
    index: tuple[int, ...],
    batches: np.ndarray,
    limit_provenance: tuple[str, str],
    exact: Callable[[], PassShape],
    host_memory: bool,
    card: Card,
    stack: str,
) -> dict[int, dict[str, Any]]:
    """Each row's :data:`STACK_COLUMNS` (row index → cells): the expected price from ``expected``'s arrays (a batch
    whose host split met a refusal priced alone, as the limit's rows are), its provenance the weakest of the limit's
    and the stack facts'."""
    from passprice.facts import Provenance

    weakest_stack = weakest(f.provenance for _, f in expected.used)
    out: dict[int, dict[str, Any]] = {}
    for j, b in enumerate(batches.tolist()):
        cells: dict[str, Any] = {"stack": stack, **dict.fromkeys(STACK_COLUMNS[1:])}
        out[j] = cells
        if expected.priced is None:
            cells["expected_refusal"] = expected.refusal
            continue
        at = (*index, j)
        p = expected.priced
        trouble = p.get("trouble")
        host_used = False
        if b == 0:
            cells["expected_refusal"] = "Empty"
            continue
        if trouble is not None and trouble[at]:
            try:
                c = exact().cost_split(card, int(b), host_memory, pricing=expected.pricing)
            except ServingRefusal as e:
                cells["expected_refusal"] = e.name
                continue
            cells.update(expected_tokens_per_s=c.tokens_per_s, expected_pass_s=c.pass_s, expected_binds=c.binds.value)
            host_used = c.host_sequences > 0
        elif int(p["refusal"][at]) != _OK:
            cells["expected_refusal"] = _row_refusal(int(p["refusal"][at]))
            continue
        else:
            cells.update(
                expected_tokens_per_s=float(p["tokens_per_s"][at]),
                expected_pass_s=float(p["pass_s"][at]),
                expected_binds=_BINDS[int(p["binds"][at])],
            )
            host_used = bool(p["host_sequences"][at] > 0)
        cells["expected_provenance"] = max(Provenance(limit_provenance[host_used]), weakest_stack).value
    return out


def _itself(shape: PassShape) -> PassShape:
    return shape


def _read_shapes(header: Any, servings: tuple[Serving, ...]) -> list[PassShape | ServingRefusal]:
    """:func:`~passprice.serving.pass_shape` of ``header`` and each of ``servings`` (one serving at each of a
    sweep's positions), or the refusal it raises. For a registry entry's header
    (:func:`passprice.cache.identity`), the shapes are kept in the cache of built objects as one entry, keyed by the
    entry, the pricing model's version and the ``repr`` of every serving (each float's exact text), so the next sweep
    of the same servings and positions reads them (tens of µs each) instead of building each from the tensor table
    (one to seven ms each). A refusal is not kept: it is raised again here (``None`` in the entry)."""
    import passprice
    from passprice import cache

    def build() -> tuple[PassShape | None, ...]:
        made: list[PassShape | None] = []
        for serving in servings:
            try:
                # shape_of: servings that share a checkpoint and a shape (a registry of many) read it once.
                made.append(shape_of(header, serving))
            except ServingRefusal:
                made.append(None)
        return tuple(made)

    origin = cache.identity(header)
    if origin is None:
        kept = build()
    else:
        material = f"{origin}\0{passprice.PRICING_MODEL_VERSION}\0{servings!r}"
        kept = cache.built("sweep-shapes", None, material.encode("utf-8", "surrogateescape"), build, tuple)
    out: list[PassShape | ServingRefusal] = []
    for serving, shape in zip(servings, kept, strict=True):
        if shape is None:
            try:
                shape = shape_of(header, serving)
            except ServingRefusal as e:
                out.append(e)
                continue
        out.append(shape)
    return out


#: Cells (positions × batches) priced at once: a sweep is priced, formatted and written a block of at most this
#: many rows at a time, whichever of its axes is long (a few MB of arrays and text a block).
BLOCK_CELLS = 1 << 14


def blocks(positions: int, batches: int, cells: int | None = None) -> Iterator[tuple[slice, slice]]:
    """The blocks ``positions`` × ``batches`` are priced in, in grid order (position, then batch), each at most
    ``cells`` cells (default :data:`BLOCK_CELLS`): as many whole positions as fit when the batches do, else one
    position at a time, its batches a run of ``cells`` at a time. Each is a (positions, batches) pair of slices."""
    cells = cells or BLOCK_CELLS
    if batches <= cells:
        group = max(1, cells // max(batches, 1))
        for p in range(0, positions, group):
            yield slice(p, min(p + group, positions)), slice(0, batches)
        return
    for p in range(positions):
        for b in range(0, batches, cells):
            yield slice(p, p + 1), slice(b, min(b + cells, batches))


#: Positions a block prices from each position's own pass shape (every row then the scalar pricer's bit for bit);
#: a block of more positions reads one shape and decomposes it by attention group (to 1e-12).
EXACT_POSITIONS = 64

def units_of(grid: Grid) -> int:
    """The (serving, card) pairs of ``grid`` (each serving on its own card when the grid names none): the parts
    :meth:`Sweeper.segments` can price apart, each ``grid.size() / units_of(grid)`` rows."""
    return len(grid.servings) * (len(grid.cards) if grid.cards else 1)


#: A segment's row status: priced on arrays; priced alone by the scalar pricer (its split search met a refusal).
_PRICED, _ALONE = 0, -1


@attrs.frozen(eq=False)
class Segment:
    """The rows of one (serving, card, draft tokens, contexts) of a sweep, one a batch, as columns.

    ``common``: the columns every row shares (card, serving, checkpoint, draft tokens, position, limit);
    ``batches``: the batches (NumPy ``int64``, ``(B,)``); ``status``: per row :data:`_PRICED`, :data:`_ALONE`, or
    ``k ≥ 1`` for the refusal ``names[k − 1]``; ``priced``: the vectorized pass's fields (each ``(B,)``; ``None``
    when every row is refused); ``alone``: row index → the fields of a row priced by the scalar pricer (or its
    refusal); ``provenance`` and ``weakest``: the price's weakest provenance and the facts carrying it, without and
    with sequences in host memory."""

    common: dict[str, Any]
    batches: np.ndarray
    status: np.ndarray
    names: tuple[str, ...]
    priced: dict[str, np.ndarray] | None
    alone: dict[int, dict[str, Any]]
    provenance: tuple[str, str]
    weakest: tuple[str, str]
    expected: dict[int, dict[str, Any]] | None = None
    #: Tokens a sequence emits a pass (the pass's ``emitted_per_sequence``; 1 without drafts): a row's TPOT is its
    #: ``pass_s`` over it (``sweep --max-tpot``, :mod:`passprice.sweepcap`).
    emitted: float = 1.0

    def prices(self) -> tuple[np.ndarray, np.ndarray]:
        """The batches of the rows that have a price (priced on arrays or alone) and their tokens/s, in row order:
        what a picture of the sweep draws, without a dictionary a row."""
        rates = np.full(len(self.batches), np.nan)
        if self.priced is not None:
            ok = self.status == _PRICED
            rates[ok] = self.priced["tokens_per_s"][ok]
        for j, fields in self.alone.items():
            rates[j] = fields["tokens_per_s"]
        has = (self.status == _PRICED) | (self.status == _ALONE)
        return self.batches[has], rates[has]

    def has_price(self) -> bool:
        """Whether any row of the segment has a price (priced on arrays, or priced alone without a refusal): a sweep
        that saw one needs no :func:`nothing_priced` probe afterwards."""
        if self.priced is not None and bool((self.status == _PRICED).any()):
            return True
        return any(not fields.get("refusal") for fields in self.alone.values())

    def rows(self) -> Iterator[dict[str, Any]]:
        """The segment's rows as dictionaries (:data:`COLUMNS`; ``None`` for an empty cell)."""
        status = self.status.tolist()
        for j, b in enumerate(self.batches.tolist()):
            row = {**dict.fromkeys(COLUMNS, None), **self.common, "batch": b}
            code = status[j]
            if code == _ALONE:
                row.update(self.alone[j])
            elif code != _PRICED:
                row["refusal"] = self.names[code - 1]
            else:
                assert self.priced is not None
                p = self.priced
                host_used = bool(p["host_sequences"][j] > 0)
                row.update({key: float(p[key][j]) for key in _FLOATS})
                row["held_bytes"], row["capacity_bytes"] = whole(row["held_bytes"]), whole(row["capacity_bytes"])
                row["host_sequences"] = int(p["host_sequences"][j])
                row["binds"] = _BINDS[int(p["binds"][j])]
                row["provenance"] = self.provenance[host_used]
                row["weakest"] = self.weakest[host_used]
            if self.expected is not None:
                row.update(self.expected[j])
            yield row


#: The float columns of a priced row from ``tokens_per_s`` to ``scale_s``: one run of cells in :data:`COLUMNS`.
_ROW_FLOATS = ("tokens_per_s", "pass_s", "memory_s", "host_s", "array_s", "vector_s", "scale_s")

#: The float columns of a priced row, in :data:`COLUMNS` order.
_FLOATS = (
    "tokens_per_s",
    "pass_s",
    "memory_s",
    "host_s",
    "array_s",
    "vector_s",
    "scale_s",
    "held_bytes",
    "capacity_bytes",
)


def _refused(common: Mapping[str, Any], batches: np.ndarray, name: str) -> Segment:
    """A segment whose every row is refused as ``name`` (batch 0 as ``Empty``: ``price_serving`` refuses an empty
    batch before anything)."""
    status = np.where(batches == 0, 1, 2)
    return Segment(dict(common), batches, status, ("Empty", name), None, {}, ("", ""), ("", ""))


def _routed(
    common: Mapping[str, Any], batches: np.ndarray, refusal: Routed, header: Any, card: Card, serving: Serving
) -> Segment:
    """The rows of a mixture of experts priced without a routing record, as :func:`passprice.serving.price_serving`
    refuses each: a batch the card cannot hold whatever the routing (the routing-free
    :func:`~passprice.serving.fit_shape`'s refusal past its most sequences: ``NotResident``, ``OnChipOverflow``) is
    refused for that, the others ``Routed`` (walk48: every row of gpt-oss-120b on a 10 GB card said ``Routed``), and
    batch 0 ``Empty``; a serving the routing-free shape refuses (a position past its limit: ``BadContexts``) is
    refused for that, as price says it (arch44: the rows said ``Routed``)."""
    try:
        fit = fit_shape(header, serving)
    except ServingRefusal as e:
        return _refused(common, batches, refusal_text(e))
    try:
        most = fit.max_batch(card, serving.host_memory, memory_use=serving.memory_use)
    except ServingRefusal as e:
        most, over = 0, e.name
    else:
        try:
            fit.cost_split(card, most + 1, serving.host_memory, pricing=use_of(card, None, serving.memory_use))
            over = refusal.name  # not refused for capacity past the most (cannot be): say Routed
        except ServingRefusal as e:
            over = e.name
    status = np.where(batches == 0, 1, np.where(batches > most, 3, 2))
    return Segment(dict(common), batches, status, ("Empty", refusal.name, over), None, {}, ("", ""), ("", ""))


def _fitting_routed(segment: Segment, name: str) -> Segment:
    """``segment``, priced on a mixture of experts' routing-free shape, as :func:`~passprice.serving.price_serving`
    says it without a routing record: each row refused for capacity (or Empty) keeps its refusal, and each row that
    fits is refused ``name`` (``Routed``): no price without a routing record."""
    names = segment.names if name in segment.names else (*segment.names, name)
    fits = (segment.status == _PRICED) | (segment.status == _ALONE)
    status = np.where(fits, names.index(name) + 1, segment.status)
    return Segment(dict(segment.common), segment.batches, status, names, None, {}, ("", ""), ("", ""))


#: A segment's refusal names, by status code: 1 Empty (batch 0), then the vectorized cost's refusal codes 1 … 4
#: (:data:`_NO_HOST` …) as 2 … 5; a row priced alone may add its own.
_NAMES = ("Empty", *(_row_refusal(code) for code in (_NO_HOST, _CARD_FULL, _HOST_FULL, _ON_CHIP)))


def _emit(
    common: Mapping[str, Any],
    batches: np.ndarray,
    priced: Mapping[str, np.ndarray],
    index: tuple[int, ...],
    card: Card,
    shape: PassShape,
    exact: Callable[[], PassShape],
    host_memory: bool,
    memory_use: float | None = None,
) -> Segment:
    """The segment of one block row from its priced arrays (``priced[key][index]``: the batches). ``shape`` gives
    the facts the price rests on; ``exact`` the row's exact :class:`PassShape`, for batches whose split search met
    a refusal (the scalar pricer then says what the seed would, at the card's capacity times ``memory_use``)."""
    shown, weakest_paths = _rests(shape, card)
    fields = {key: value[index] for key, value in priced.items()}
    codes = fields.pop("refusal")
    # Refusal codes of the vectorized cost (1 …) become names 2 …; 1 is Empty.
    names = _NAMES
    status = np.where(codes == _OK, _PRICED, codes + 1)
    status = np.where(batches == 0, 1, status)
    alone: dict[int, dict[str, Any]] = {}
    trouble = fields.pop("trouble", None)
    if trouble is not None:
        rows = np.nonzero(trouble & (batches != 0))[0].tolist()
        alone_shape = exact() if rows else None
        alone_basis = alone_shape.basis(card) if alone_shape is not None else None  # gathered once for the block
        for j in rows:
            assert alone_shape is not None
            try:
                c = alone_shape.cost_split(
                    card, int(batches[j]), host_memory, alone_basis, pricing=use_of(card, None, memory_use)
                )
            except ServingRefusal as e:
                if e.name not in names:
                    names = (*names, e.name)
                status[j] = names.index(e.name) + 1
                continue
            status[j] = _ALONE
            alone[j] = _scalar_row(c)
    return Segment(
        dict(common),
        batches,
        status,
        names,
        fields,
        alone,
        shown,
        weakest_paths,
        emitted=shape.emitted_per_sequence,
    )


def _rests(shape: PassShape, card: Card) -> tuple[tuple[str, str], tuple[str, str]]:
    """The weakest provenance of a price of ``shape`` on ``card`` and the facts carrying it (their paths joined by
    ``;``), without and with sequences in host memory: from the facts the price rests on, in the scalar pricer's
    order (:func:`~passprice.serving.rested_on`: the card's, the host link's when the batch uses host memory, the
    drafting figures). Kept for the next shape that rests on the same facts (a sweep's every position on a card),
    by what :func:`~passprice.serving.rested_on` reads of the shape."""
    known = _READS.get(id(shape))
    if known is None or known[0] is not shape:
        reads = (
            shape.weight_bytes + shape.embed_bytes > 0,
            shape.rewrite_bytes > 0,
            shape.read_bytes + shape.write_bytes - shape.rewrite_bytes > 0,
            shape.array_macs > 0,
            shape.vector_macs > 0,
            shape.scale_cycles > 0,
            tuple(ty for ty, _ in shape.float_macs),
            shape.provenance,
            shape.facts,
        )
        if len(_READS) >= 4096:
            _READS.clear()
        known = _READS[id(shape)] = (shape, _KINDS.setdefault(reads, len(_KINDS)))
    key = (id(card), known[1])
    kept = _RESTS.get(key)
    if kept is not None and kept[0] is card:
        return kept[1], kept[2]
    rests = {flag: rested_on(shape, card, flag) for flag in (False, True)}
    provenance = {flag: max(weakest(f.provenance for _, f in rests[flag]), shape.provenance) for flag in rests}
    carriers = {flag: ";".join(p for p, f in rests[flag] if f.provenance is provenance[flag]) for flag in rests}
    made = (provenance[False].value, provenance[True].value), (carriers[False], carriers[True])
    if len(_RESTS) >= 4096:
        _RESTS.clear()
        _KINDS.clear()
        _READS.clear()
    _RESTS[key] = (card, *made)
    return made


#: :func:`_rests` kept, by the card's identity (the card itself kept beside, and checked) and the number
#: :data:`_KINDS` gives what the price reads of the shape.
_RESTS: dict[tuple[int, int], tuple[Card, tuple[str, str], tuple[str, str]]] = {}

#: What a price reads of a shape (whether each kind of traffic and work is there, its float matrices' types, its
#: drafting and routing facts and their weakest provenance), numbered: shapes that read the same share a number.
_KINDS: dict[tuple[Any, ...], int] = {}

#: The :data:`_KINDS` number of a shape, by its identity (the shape kept beside, and checked).
_READS: dict[int, tuple[PassShape, int]] = {}


def _scalar_row(c: Any) -> dict[str, Any]:
    return {
        "host_sequences": c.host_sequences,
        "tokens_per_s": c.tokens_per_s,
        "pass_s": c.pass_s,
        "memory_s": c.memory_s,
        "host_s": c.host_s,
        "array_s": c.array_s,
        "vector_s": c.vector_s,
        "scale_s": c.scale_s,
        "binds": c.binds.value,
        "held_bytes": whole(c.held_bytes),
        "capacity_bytes": whole(c.capacity_bytes),
        "provenance": c.provenance.value,
        "weakest": ";".join(c.weakest),
    }


def _check_finite(row: Mapping[str, Any]) -> None:
    """Raise :class:`InputError` when a priced row holds a number that is not finite (``nan``, ``inf``): a fact or
    element size so far out of range that the pass has no finite price, which neither CSV nor JSON should carry."""
    for key, value in row.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                f"sweep: {row.get('serving')} on {row.get('card')}, batch {row.get('batch')}: {key} is {value!r}: a "
                "fact, element size or option is out of range (the pass has no finite price)"
            )


def write_rows(
    rows: Iterator[Mapping[str, Any]], fmt: str, out: io.TextIOBase | Any, columns: Sequence[str] = COLUMNS
) -> int:
    """Write ``rows`` to ``out`` as CSV (a header line, then one line a row; empty cells for none) or JSON (an
    array of objects, one a line), a row at a time. Returns the number of rows. Raises :class:`InputError` at a row
    holding a number that is not finite. The reference :func:`text_chunks` (columns at a time, what ``passprice
    sweep`` writes) is tested against, byte for byte."""
    n = 0
    if fmt == "csv":
        out.write(_csv_line(columns) + "\n")
        for row in rows:
            _check_finite(row)
            out.write(_csv_line([_cell(row.get(k)) for k in columns]) + "\n")
            n += 1
        return n
    out.write("[")
    for row in rows:
        _check_finite(row)
        out.write(("\n" if n == 0 else ",\n") + json.dumps(json_fields(row), allow_nan=False))
        n += 1
    out.write("\n]\n")
    return n


#: An output file's suffix and the row format it names.
FORMAT_OF_SUFFIX = {".csv": "csv", ".json": "json"}


def output_format(named: str | None, output: Path | None) -> str:
    """The format of a sweep's rows, ``csv`` or ``json``: ``named`` (``--format``, or ``--json``) when given, else
    the one the output file's suffix names (``.json``; any other suffix, and stdout, ``csv``; for a link, the suffix of
    the file it points to: :func:`passprice.files.written_suffix`; a suffix naming another format passprice writes is
    refused by :func:`require_suffix`). Raises :class:`InputError` when ``named`` contradicts the file's suffix
    (attack round 24: ``-o grid.json`` wrote CSV, exit 0), or a link's name its target's."""
    from passprice.files import written_suffix

    said = FORMAT_OF_SUFFIX.get(written_suffix(output, "-o")) if output is not None and str(output) != "-" else None
    if named is None:
        return said or "csv"
    if said is not None and said != named:
        raise InputError(
            f"-o {output}: a .{said} file, but the rows would be {named}: give --format {said}, or name the file "
            f".{named}"
        )
    return named


def require_suffix(output: Path | None, named: str | None = None) -> None:
    """Refuse an output file whose suffix names a format passprice writes other than a sweep's rows
    (:func:`passprice.files.suffix_format`): ``sweep -o rows.csv.gz`` wrote plain CSV under a gzip name, ``-o
    rows.toml`` CSV under a TOML one, exit 0 (attack round 27); and, without ``named`` (``--format`` or ``--json``),
    one whose suffix names no format at all (``-o rows.txt``, ``-o rows``): it wrote CSV silently
    (``tests/test_bound111.py``); with ``--format`` given, the rows are written in it under any such name. Standard
    output (``None``, ``-``) is CSV unless ``named``. Judged after the refusals that say more (a record, an input of
    the sweep). Raises :class:`InputError` naming the file and its suffix."""
    from passprice.files import shown, suffix_format, written_suffix

    if output is None or str(output) == "-":
        return
    if suffix_format(output, "-o", tuple(FORMAT_OF_SUFFIX), "a sweep's rows (CSV or JSON)", ".csv or .json") is None \
            and named is None:
        suffix = written_suffix(output, "-o")
        said = f"its suffix {suffix}" if suffix else "no suffix"
        raise InputError(
            f"{shown(output)}: -o names no format of a sweep's rows ({said}): name it .csv or .json, or give --format "
            "csv (or --format json) to write that format under this name"
        )


def text_chunks(
    segments: Iterable[Segment], fmt: str, opens: bool = True, closes: bool = True, binary: bool = False
) -> Iterator[str | bytes]:
    """The text of a sweep, a group of segments at a time, exactly as :func:`write_rows` writes its rows (``fmt``:
    ``csv`` or ``json``): consecutive segments are gathered until they hold :data:`GROUP_ROWS` rows, each column of
    the group's priced rows is formatted in one call (orjson's texts of ``repr``, :mod:`passprice.floattext`) and
    the group's rows laid out run by run in one list joined in C (:func:`_group_text`), so a million rows do not
    cost a million dictionaries, nor a million lines, nor a thousand calls a column. Raises :class:`InputError` at
    the first row holding a number that is not finite (the chunks before it are already yielded: a caller writing
    a file writes them to a temporary file it then drops).

    ``opens=False``: the segments' text continues one written before it (a later part of the grid): no CSV header,
    no ``[``, the first JSON object after ``,``; ``closes=False``: a later part follows (no closing ``]``). The parts'
    texts joined are the whole grid's.

    Every chunk is a ``str``, except with ``binary``: then every chunk is ``bytes``, made as bytes
    (:func:`_group_text`; what ``passprice sweep`` writes to a file: no 483 MB of JSON text, nor 166 MB of CSV,
    decoded from orjson's bytes and encoded again for the bench grid), JSON's ASCII and CSV's UTF-8; but a CSV group
    holding a name that is not Unicode (a lone surrogate) comes as ``str``, a segment at a time: its encoding, and
    its error, are the writer's. A JSON group comes in several chunks (:func:`_group_text` with ``apart``): each run
    of refused rows one of its own, the priced rows between them joined into the others (sweepjson100: a refused
    run's bytes, most of the bench grid's, copied once, not again into one text a group)."""
    # The header goes out with the first chunk, so a sweep refused at its first row writes nothing.
    head = (None if fmt == "csv" else "[") if opens else ""
    first = opens
    kept = _Texts()
    group: list[Segment] = []
    rows = 0

    def texts(segments: list[Segment]) -> Iterator[str | bytes]:
        if all(s.expected is None for s in segments):
            text = _group_text(segments, fmt, kept, apart=True)
            if isinstance(text, list):
                yield from text
                return
            if text is not None:
                yield text
                return
        for segment in segments:  # a stack's columns, or a row that is not finite: a segment at a time
            if segment.expected is None:
                yield _segment_text(segment, fmt, kept)
            else:
                # A segment with a stack's expected prices (``--stack``) carries :data:`STACK_COLUMNS` too: its lines
                # are written a row at a time, as the row writer writes them.
                lines = _row_lines(segment, fmt, COLUMNS + STACK_COLUMNS)
                yield "".join(line + "\n" for line in lines) if fmt == "csv" else "".join(",\n" + s for s in lines)

    def chunks(segments: list[Segment]) -> Iterator[str | bytes]:
        nonlocal head, first
        for text in texts(segments):
            if head is None:
                columns = COLUMNS + STACK_COLUMNS if segments[0].expected is not None else COLUMNS
                head = ",".join(columns) + "\n"
            if fmt == "json" and first:
                text = text[1:]  # the first object follows "[" on a line of its own: "\n", not ",\n"
            yield _joined(head, text, binary, fmt == "csv")
            head, first = "", False

    for segment in segments:
        stacked = segment.expected is not None
        if group and (stacked or group[0].expected is not None):
            yield from chunks(group)
            group, rows = [], 0
        group.append(segment)
        rows += len(segment.batches)
        if stacked or rows >= GROUP_ROWS:
            yield from chunks(group)
            group, rows = [], 0
    if group:
        yield from chunks(group)
    if not closes:
        return
    if head is None:
        head = ",".join(COLUMNS) + "\n"
    if head or fmt != "csv":
        yield _joined(head, "" if fmt == "csv" else "\n]\n", binary, fmt == "csv")


def _joined(head: str, text: str | bytes, binary: bool, csv_text: bool = False) -> str | bytes:
    """``head`` (a ``str``: the CSV header or JSON's ``[``, or nothing) and ``text`` as one chunk: with ``binary``,
    ``bytes`` text (CSV's UTF-8, JSON's ASCII) as ``bytes``, and ``str`` text encoded as ASCII, except CSV's
    (``csv_text``: a group written a segment at a time, whose names may hold any character), left a ``str`` for its
    writer to encode (and to say which character is not Unicode); without ``binary``, ``str`` (bytes decoded)."""
    if binary and isinstance(text, bytes):
        return head.encode("ascii") + text if head else text
    if binary and not csv_text:
        assert isinstance(text, str)
        return (head + text).encode("ascii")
    made_text = text.decode("utf-8") if isinstance(text, bytes) else text
    return head + made_text if head else made_text


#: Rows :func:`text_chunks` formats together: consecutive segments are gathered until they hold this many (one
#: orjson call a column run for all of them instead of one a segment). About a megabyte of CSV: on this project's
#: machine groups of 2^12 to 2^13 rows made the bench grid's text fastest, 2^14 and more slower again (the group's
#: texts no longer in the processor's cache), and memory stays that of a few groups.
GROUP_ROWS = 1 << 12


def _row_lines(segment: Segment, fmt: str, columns: Sequence[str]) -> list[str]:
    """The lines of one segment a row at a time (``columns``), exactly as :func:`write_rows` writes them."""
    lines = []
    for row in segment.rows():
        _check_finite(row)
        if fmt == "csv":
            lines.append(_csv_line([_cell(row.get(k)) for k in columns]))
        else:
            lines.append(json.dumps(json_fields(row), allow_nan=False))
    return lines


def _csv_line(values: Sequence[Any]) -> str:
    """``values`` as one CSV line without its end, quoted as :class:`csv.writer` quotes them: a cell holding a
    comma, a quote, a carriage return or a new line is quoted (written with ``lineterminator=""``, a cell of a path
    holding a new line was not, and split its row in two: attack64; ``\r\n`` names both characters the quoting
    looks for, and is cut off)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(values)
    return buffer.getvalue()[:-2]


#: The columns before ``batch``, in order.
_BEFORE_BATCH = COLUMNS[: COLUMNS.index("batch")]

#: The columns after ``batch``, in order.
_AFTER_BATCH = COLUMNS[COLUMNS.index("batch") + 1 :]

#: A run of rows as pieces, each a text every row shares or a list of one text a row.
_Pieces = list[str | list[str]]


class _Texts:
    """Texts a sweep's next segments are likely to need again, kept while its text is made: the batches' (a sweep's
    segments mostly share their batches: every card and position of a serving), and the float columns' of the
    last :data:`KEPT_COLUMNS` columns formatted, by their values (a term that does not change with the position, or a
    column two cards share, is formatted once: ``repr`` of a float is most of a row's cost)."""

    def __init__(self) -> None:
        self.batches: np.ndarray | None = None
        self.batch_texts: list[str] = []
        self.then: dict[str, list[str]] = {}
        self.openings: dict[tuple[Any, ...], tuple[str, list[str]]] = {}
        self.refusals: dict[str, str] = {}
        self.shown: dict[tuple[tuple[str, str], tuple[str, str]], list[str]] = {}
        # (A column of counts' texts as bytes too, :meth:`count_bytes`, by its own key.)
        self.columns: OrderedDict[bytes, tuple[Any, str]] = OrderedDict()
        # The same for JSON rows, as ASCII bytes (:func:`_group_text`): the batches' texts, each key and value's
        # text (a row's opening is made of them), the provenances' and the refused rows' ends.
        self.batch_array: np.ndarray | None = None
        self.batch_key = b""
        self.batch_bytes_made: list[bytes] = []
        self.pairs: dict[tuple[str, type, Any], bytes] = {}
        self.shown_bytes: dict[tuple[tuple[str, str], tuple[str, str]], list[bytes]] = {}
        self.refused_bytes: dict[str, bytes] = {}
        # CSV rows as UTF-8 bytes (:func:`_csv_group_text`): the openings' and refused rows' ends, encoded once.
        self.then_bytes: dict[bytes, list[bytes]] = {}
        self.cells: dict[tuple[type, Any], bytes] = {}
        self.shown_csv: dict[tuple[tuple[str, str], tuple[str, str]], list[bytes]] = {}
        self.refused_csv_bytes: dict[str, bytes] = {}

    def of_batches(self, batches: np.ndarray) -> list[str]:
        """``str`` of each of ``batches`` (``(B,)`` integers)."""
        if self.batches is None or not np.array_equal(self.batches, batches):
            self.batches, self.batch_texts = batches, int_texts(batches)
            self.then = {}
        return self.batch_texts

    def opening(self, segment: Segment) -> tuple[str, list[str]]:
        """The text of a CSV row of ``segment`` up to its batch (its cells and the comma), and the cells of its
        weakest provenance and of the facts carrying it, without and with host memory: kept by their values and
        types (a sweep's segments share servings, cards and provenances; ``256.0`` and ``256`` are told apart).
        A JSON row's: :meth:`json_opening`."""
        head = tuple(segment.common[k] for k in COLUMNS[: COLUMNS.index("batch")])
        key = (tuple((type(v), v) for v in head), segment.provenance, segment.weakest)
        made = self.openings.get(key)
        if made is None:
            if len(self.openings) >= 4096:
                self.openings.clear()
            start = _csv_line([_cell(v) for v in head]) + ","
            # A provenance's texts are the same on every card and position: made once a sweep.
            rests = (segment.provenance, segment.weakest)
            shown = self.shown.get(rests)
            if shown is None:
                shown = self.shown[rests] = [_csv_line([v]) for v in (*segment.provenance, *segment.weakest)]
            made = self.openings[key] = (start, shown)
        return made

    def batch_bytes(self, batches: np.ndarray) -> list[bytes]:
        """:meth:`of_batches` as ASCII bytes."""
        same = batches is self.batch_array  # a block's segments share their batches' array
        # Else compared by their bytes (one copy and one memcmp; ``np.array_equal`` took about 5 µs a segment):
        # batches of another integer type are made again, the same texts.
        if not same and (self.batch_array is None or batches.tobytes() != self.batch_key):
            self.batch_array, self.batch_bytes_made = batches, int_texts_bytes(batches)
            self.batch_key = batches.tobytes()
            self.then_bytes = {}
        return self.batch_bytes_made

    def batch_bytes_then(self, batches: np.ndarray, after: bytes) -> list[bytes]:
        """:meth:`of_batches_then` as ASCII bytes."""
        texts = self.batch_bytes(batches)
        made = self.then_bytes.get(after)
        if made is None:
            made = self.then_bytes[after] = [t + after for t in texts]
        return made

    def opening_bytes(self, segment: Segment) -> tuple[bytes, list[bytes]]:
        """:meth:`opening` as UTF-8 bytes (raising :class:`UnicodeEncodeError` for a text that is not Unicode),
        made of each cell's text, kept by its value and type (a segment's opening is new to the sweep: its card,
        serving and position are another's; its cells are not; a CSV writer quotes each cell of a row of several
        alone, so a cell's text is the same in every row)."""
        cells = []
        for k in _BEFORE_BATCH:
            v = segment.common[k]
            key = (type(v), v)
            cell = self.cells.get(key)
            if cell is None:
                if len(self.cells) >= 4096:
                    self.cells.clear()
                # Written in a row of two cells, the second empty (a row of one empty cell is written "").
                cell = self.cells[key] = _csv_line([_cell(v), ""])[:-1].encode("utf-8")
            cells.append(cell)
        rests = (segment.provenance, segment.weakest)
        shown = self.shown_csv.get(rests)
        if shown is None:
            shown = self.shown_csv[rests] = [
                _csv_line([v]).encode("utf-8") for v in (*segment.provenance, *segment.weakest)
            ]
        return b",".join(cells) + b",", shown

    def refused_csv(self, name: str) -> bytes:
        """:meth:`refused` as UTF-8 bytes."""
        made = self.refused_csv_bytes.get(name)
        if made is None:
            made = self.refused_csv_bytes[name] = self.refused(name).encode("utf-8")
        return made

    def count_bytes(self, values: np.ndarray) -> bytes | list[bytes]:
        """:func:`_count_bytes` of ``values`` (``(n,)`` float64 byte counts), kept as :meth:`of_counts` keeps them."""
        if (values == values[0]).all():
            return str(whole(float(values[0]))).encode("ascii")
        key = b"b" + values.tobytes()
        kept = self.columns.get(key)
        if kept is not None:
            self.columns.move_to_end(key)
            texts: bytes | list[bytes] = kept[0]
            return texts
        made = _count_bytes(values)
        self.columns[key] = (made, "")
        if len(self.columns) > KEPT_COLUMNS:
            self.columns.popitem(last=False)
        return made

    def json_opening(self, segment: Segment) -> tuple[bytes, list[bytes]]:
        """:meth:`opening` of a JSON row, as ASCII bytes: ``,``, a new line and the object's keys and values up to
        the batch's key, and the texts of its weakest provenance and of the facts carrying it, without and with host
        memory. Each key and value's text is made once a sweep (a segment's opening is new to the sweep: its card,
        serving and position are another's; its texts are not)."""
        parts = []
        for k in COLUMNS[: COLUMNS.index("batch")]:
            v = segment.common[k]
            pair = self.pairs.get((k, type(v), v))
            if pair is None:
                if len(self.pairs) >= 4096:
                    self.pairs.clear()
                pair = self.pairs[(k, type(v), v)] = f"{json.dumps(k)}: {json.dumps(v)}".encode("ascii")
            parts.append(pair)
        rests = (segment.provenance, segment.weakest)
        shown = self.shown_bytes.get(rests)
        if shown is None:
            shown = self.shown_bytes[rests] = [
                json.dumps(v).encode("ascii") for v in (*segment.provenance, *segment.weakest)
            ]
        return b",\n{" + b", ".join(parts) + b', "batch": ', shown

    def json_refused(self, name: str) -> bytes:
        """:meth:`refused` of a JSON row, as ASCII bytes."""
        made = self.refused_bytes.get(name)
        if made is None:
            made = self.refused_bytes[name] = f"{_JSON_NULLS}, {_json_refusal(name)}}}".encode("ascii")
        return made

    def refused(self, name: str) -> str:
        """A refused CSV row's text after its batch: its empty cells and the refusal's name (a JSON row's:
        :meth:`json_refused`)."""
        made = self.refusals.get(name)
        if made is None:
            made = self.refusals[name] = "," * len(_AFTER_BATCH) + _csv_line([name]) + "\n"
        return made

    def of_batches_then(self, batches: np.ndarray, after: str) -> list[str]:
        """``str`` of each of ``batches`` followed by ``after`` (a CSV row's batch and the cells after it that
        every row of a run shares: one text a row where two items were)."""
        texts = self.of_batches(batches)
        made = self.then.get(after)
        if made is None:
            made = self.then[after] = [t + after for t in texts]
        return made

    def of_floats(self, values: np.ndarray) -> tuple[str | list[str], str]:
        """:func:`_float_texts` of ``values`` (``(n,)`` float64), from the kept columns when the same values were
        formatted lately (a column of one value is not kept: it is one text)."""
        if _same(values):
            return repr(float(values[0])), ""
        key = values.tobytes()
        kept = self.columns.get(key)
        if kept is not None:
            self.columns.move_to_end(key)
            return kept
        made = self.columns[key] = _float_texts(values)
        if len(self.columns) > KEPT_COLUMNS:
            self.columns.popitem(last=False)
        return made

    def of_counts(self, values: np.ndarray) -> tuple[str | list[str], str]:
        """:func:`_count_texts` of ``values`` (``(n,)`` float64 byte counts), kept as :meth:`of_floats` keeps a
        column's texts (a position's held bytes at a batch are the same on every card)."""
        if (values == values[0]).all():
            return _count_texts(values)
        key = b"n" + values.tobytes()
        kept = self.columns.get(key)
        if kept is not None:
            self.columns.move_to_end(key)
            return kept
        made = self.columns[key] = _count_texts(values)
        if len(self.columns) > KEPT_COLUMNS:
            self.columns.popitem(last=False)
        return made


#: Float columns whose texts :class:`_Texts` keeps (each at most :data:`BLOCK_CELLS` texts: a few MB in all).
KEPT_COLUMNS = 32


def _segment_text(segment: Segment, fmt: str, kept: _Texts) -> str:
    """The text of one segment's rows in batch order: for CSV each line followed by ``\\n``, for JSON each object
    preceded by ``,\\n``; ``kept``: the texts of the segments before. The rows fall in runs of one status (the
    batches a card holds, then those it cannot …); each run is written as one block (:func:`_block`): a column is
    formatted once for the segment, and a run's text is its pieces laid out row by row in a list joined in C, never
    a line object a row."""
    status = segment.status
    ok = np.nonzero(status == _PRICED)[0]
    if not _all_finite(segment, ok):
        for row in segment.rows():  # find the first row that is not, and say which column, as the row writer does
            _check_finite(row)
    csv_format = fmt == "csv"
    head = [segment.common[k] for k in COLUMNS[: COLUMNS.index("batch")]]
    if csv_format:
        start, prefix, end = "", _csv_line([_cell(v) for v in head]) + ",", "\n"
    else:
        start, end = ",\n", ""
        prefix = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in zip(COLUMNS, head, strict=False))
        prefix += ', "batch": '
    batches = segment.batches
    batch_text = kept.of_batches(batches)
    priced = _priced_pieces(segment, ok, start + prefix, end, csv_format, kept) if len(ok) else []
    count = len(status)
    cuts = [0, *(np.flatnonzero(status[1:] != status[:-1]) + 1).tolist(), count]
    out: list[str] = []
    done = 0  # priced rows already written: where the next priced run starts in ``ok``
    for a, b in itertools.pairwise(cuts):
        code = int(status[a])
        if code == _PRICED:
            out.append(_block([priced[0], batch_text[a:b], *priced[1:]], done, done + b - a, b - a))
            done += b - a
        elif code == _ALONE:
            for j in range(a, b):
                fields = segment.alone[j]
                row = {**dict.fromkeys(COLUMNS, None), **segment.common, "batch": int(batches[j]), **fields}
                if csv_format:
                    out.append(_csv_line([_cell(row[k]) for k in COLUMNS]) + end)
                else:
                    out.append(start + json.dumps(row, allow_nan=False))
        else:
            name = segment.names[code - 1]
            if csv_format:
                suffix = "," * len(_AFTER_BATCH) + _csv_line([name]) + end
            else:
                nulls = "".join(f", {json.dumps(k)}: null" for k in _AFTER_BATCH[:-1])
                suffix = f"{nulls}, {_json_refusal(name)}}}"
            out.append(_block([start + prefix, batch_text[a:b], suffix], a, b, b - a))
    return "".join(out)


def _block(pieces: _Pieces, start: int, stop: int, rows: int) -> str:
    """The text of ``rows`` rows laid out from ``pieces``: a text every row shares, or a list whose items
    ``start`` … ``stop − 1`` are the rows' own (a list exactly ``rows`` long is taken whole). The list of every
    piece of every row is made by repeating the shared ones and assigning each column to a slice of it, then joined
    once: a few C loops, no object a row."""
    width = len(pieces)
    flat = [p if isinstance(p, str) else "" for p in pieces] * rows
    for j, p in enumerate(pieces):
        if not isinstance(p, str):
            flat[j::width] = p if len(p) == rows else p[start:stop]
    return "".join(flat)


def _group_text(
    segments: Sequence[Segment], fmt: str, kept: _Texts, cap: float | None = None, apart: bool = False
) -> str | bytes | list[bytes] | None:
    """The text of ``segments`` (none under a stack) as :func:`_segment_text` writes each in turn, made for all of
    them at once: their priced rows' floats gathered into one array and formatted in one call, a priced row's run
    of floats one text with its keys in it (:func:`_json_float_rows`; CSV's:
    :func:`~passprice.floattext.float_rows_bytes`), then every run of rows of one status, bind and host use (within
    which every text but the batch's, the host sequences', the floats' and the held bytes' is the same) laid out in
    one list of pieces, joined once; a run of refused rows is one join of its batches' texts. CSV is UTF-8 bytes
    (:func:`_csv_group_text`); JSON, always ASCII, is made as ``bytes`` from orjson's bytes, never decoded nor
    encoded again (issue 16: the bench grid's 483 MB of JSON were made as text, then encoded to be written).
    ``None`` when a float is not finite (the caller then writes a segment at a time, up to the row that stops the
    text) or orjson is not there.

    ``apart`` (JSON): the text as a list of ``bytes`` whose join is the text, each run of refused rows an item of its
    own and the priced rows between two such runs joined into one (what :func:`text_chunks` writes, a chunk each: a
    refused run's bytes, about 470 a row and most of the bench grid's, are then copied once, not again into one
    text for the group).

    ``cap`` (seconds; ``sweep --max-tpot``): each row also carries :data:`passprice.sweepcap.TPOT_COLUMNS` at its
    end, its TPOT (``pass_s`` over the tokens a sequence emits) and whether it is at most ``cap`` (:func:`_tpot_cells`;
    ``None`` for a group holding a row priced alone: the caller writes it a row at a time)."""
    if not fast():
        return None
    if cap is not None and any(segment.alone for segment in segments):
        return None
    if fmt == "csv":
        return _csv_group_text(segments, kept, cap)
    floats: dict[str, list[np.ndarray]] = {key: [] for key in (*_FLOATS, "host_sequences")}
    keys: list[np.ndarray] = []
    for segment in segments:
        status, p = segment.status, segment.priced
        mask = status == _PRICED
        count = int(np.count_nonzero(mask))
        if p is None or not count:
            keys.append(status)
            continue
        chosen = _chosen(mask, count)
        for key, found in floats.items():
            found.append(p[key][chosen])
        # A run is a stretch of rows of one status, and for priced rows one bind and host use (64 + 2 bind + use).
        keys.append(np.where(mask, 64 + 2 * p["binds"] + (p["host_sequences"] > 0), status))
    columns: dict[str, Any] = {
        name: (np.concatenate(found) if len(found) > 1 else found[0]) if found else None
        for name, found in floats.items()
    }
    priced = columns["tokens_per_s"] is not None
    for fields in (f for segment in segments for f in segment.alone.values()):
        if not all(not isinstance(v, float) or math.isfinite(v) for v in fields.values()):
            return None
    host_texts: list[bytes] = []
    lead, float_rows, trail = b"", None, b""
    if priced:
        if not all(np.isfinite(columns[key]).all() for key in _FLOATS):
            return None
        host = columns["host_sequences"]
        assert host is not None
        host_texts = int_texts_bytes(host) if host.any() else []
        lead, float_rows, trail = _json_float_rows([columns[key] for key in _ROW_FLOATS])
        # For each row and count column, how many times the column's value changed up to that row: a run of rows
        # whose count does not change (a card's capacity) takes one text for all of them, merged with the texts
        # around it, one item a row fewer in the list joined.
        changes = np.zeros((len(columns["pass_s"]), len(_COUNTS)), dtype=np.int32)
        for j, key in enumerate(_COUNTS):
            counted = columns[key]
            np.cumsum(counted[1:] != counted[:-1], out=changes[1:, j])
    tpot_texts, ends = _tpot_json(segments, cap, columns["pass_s"] if priced else None)
    parts: list[bytes] = []
    made: list[bytes] = []  # the group's text in pieces, each made by one join
    done = 0  # the group's priced rows already laid out
    for segment, (cuts, codes) in zip(segments, _group_runs(keys), strict=True):
        start, shown = kept.json_opening(segment)
        batches = segment.batches
        batch_text = kept.batch_bytes(batches)
        count = cuts[-1]
        counts: list[bytes | list[bytes]] | None = None  # the segment's held bytes' and capacity's texts
        for (a, b), code in zip(itertools.pairwise(cuts), codes, strict=True):
            rows = batch_text if b - a == count else batch_text[a:b]
            if code >= 64:
                bind, used = divmod(code - 64, 2)
                p0, p1 = done, done + b - a
                done = p1
                prov, weak = shown[used], shown[2 + used]
                if used:
                    pieces: list[Any] = [start, rows, b', "host_sequences": ', host_texts[p0:p1], lead]
                else:
                    # Each batch's text with the text after it up to the row's first float (no sequence in host
                    # memory: ``0``, the same in every row), made once a sweep for its batches: one item a row
                    # fewer in the group's join (sweep126).
                    then = kept.batch_bytes_then(batches, b', "host_sequences": 0' + lead)
                    pieces = [start, then if b - a == count else then[a:b]]
                if float_rows is not None:
                    pieces.append(float_rows[p0:p1])
                pieces.append(trail + _JSON_BINDS[bind])
                still = (changes[p1 - 1] == changes[p0]).tolist()
                if counts is None:
                    # Kept by their values, as CSV's (sweep126): a serving's position holds the same bytes at a
                    # batch on every card (the bench grid's 886 priced segments hold 88 columns of held bytes).
                    p = segment.priced
                    assert p is not None
                    counts = [kept.count_bytes(p[key]) for key in _COUNTS]
                for j, cell in enumerate(counts):
                    pieces += [_JSON_KEYS[len(_ROW_FLOATS) + j],
                               cell if isinstance(cell, bytes) else cell[a] if still[j] else cell[a:b]]
                if cap is None:
                    pieces.append(b', "provenance": ' + prov + b', "weakest": ' + weak + b', "refusal": null}')
                else:
                    pieces += [b', "provenance": ' + prov + b', "weakest": ' + weak + b', "refusal": null, "tpot_s": ',
                               tpot_texts[p0:p1], ends[p0:p1]]
                _lay(parts, pieces, b - a)
            elif code == _ALONE:
                for j in range(a, b):
                    fields = segment.alone[j]
                    row = {**dict.fromkeys(COLUMNS, None), **segment.common, "batch": int(batches[j]), **fields}
                    parts.append(b",\n" + json.dumps(row, allow_nan=False).encode("ascii"))
            else:
                # start b1 end start b2 end …: the batches joined by "end start", in C, no list a row (as CSV's).
                refused = kept.json_refused(segment.names[code - 1])
                if cap is not None:
                    refused = refused[:-1] + b', "tpot_s": null, "within_max_tpot": null}'
                # With ``apart``, the run is a piece of its own, whole (the rows before it joined first): its bytes
                # copied once, not again into the group's.
                if apart:
                    if parts:
                        made.append(b"".join(parts))
                        parts = []
                    ends = [start + rows[0], *rows[1:]] if len(rows) > 1 else [start + rows[0] + refused]
                    if len(rows) > 1:
                        ends[-1] += refused
                    made.append((refused + start).join(ends))
                else:
                    parts += [start, (refused + start).join(rows), refused]
    if parts or not made:
        made.append(b"".join(parts))
    return made if apart else made[0]


def _chosen(mask: np.ndarray, count: int) -> Any:
    """The rows ``mask`` (``(B,)`` bools, ``count`` of them true, at least one) picks, as an index: a slice when they
    are one stretch (the batches a card holds, before those it cannot: a copy of the columns' memory, not a gather
    row by row), else their indices."""
    if count == len(mask):
        return slice(None)
    first = int(mask.argmax())
    if mask[first : first + count].all():
        return slice(first, first + count)
    return np.flatnonzero(mask)


def _tpot_cells(
    segments: Sequence[Segment], cap: float | None, csv_format: bool, pass_s: np.ndarray | None
) -> tuple[list[str], list[str]]:
    """For the priced rows of ``segments`` in order (``pass_s``: their passes, seconds; ``None``: none), the text
    of each row's TPOT (``pass_s`` over its segment's tokens emitted a sequence, :func:`passprice.sweepcap.tpots`'s
    division) and of the flag after it, whether the TPOT is at most ``cap``, with the row's end (CSV: ``,true`` and
    the new line; JSON: ``, "within_max_tpot": true}``). Empty lists when ``cap`` is ``None`` or no row is
    priced."""
    if cap is None or pass_s is None:
        return [], []
    tpot = _tpots(segments, pass_s)
    flags = (",false\n", ",true\n") if csv_format else (', "within_max_tpot": false}', ', "within_max_tpot": true}')
    return float_reprs(tpot), np.array(flags, dtype=object)[(tpot <= cap).view(np.int8)].tolist()


def _tpot_json(
    segments: Sequence[Segment], cap: float | None, pass_s: np.ndarray | None
) -> tuple[list[bytes], list[bytes]]:
    """:func:`_tpot_cells` for JSON rows, as ASCII bytes."""
    if cap is None or pass_s is None:
        return [], []
    tpot = _tpots(segments, pass_s)
    flags = (b', "within_max_tpot": false}', b', "within_max_tpot": true}')
    return float_reprs_bytes(tpot), np.array(flags, dtype=object)[(tpot <= cap).view(np.int8)].tolist()


def _tpots(segments: Sequence[Segment], pass_s: np.ndarray) -> np.ndarray:
    """Each priced row's TPOT (seconds, ``(n,)``): its ``pass_s`` over its segment's tokens emitted a sequence
    (:func:`passprice.sweepcap.tpots`'s division)."""
    counts = [int(np.count_nonzero(s.status == _PRICED)) if s.priced is not None else 0 for s in segments]
    emitted = np.repeat(np.array([s.emitted for s in segments], dtype=np.float64), counts)
    return pass_s / emitted


def _csv_group_text(segments: Sequence[Segment], kept: _Texts, cap: float | None = None) -> bytes | None:
    """:func:`_group_text` for CSV, as its UTF-8 bytes, made as bytes (no text decoded from orjson's bytes, none
    encoded again to be written: issue 16). The priced rows' seven floats from ``tokens_per_s`` to ``scale_s`` are
    one array for the group, written by one orjson call and cut into one text a row
    (:func:`~passprice.floattext.float_rows_bytes`); every other text a priced row has is one every row of its run
    shares or one kept for the batch axis: the batch's (with ``,0,`` after it when no sequence is in host memory)
    and the held bytes' (a serving's position holds the same bytes at a batch on every card: the column's texts are
    kept by its values, :meth:`_Texts.count_bytes`). A run of priced rows is then five items a row in the list joined
    once, one of them made for the row; a run of refused rows is the batches' texts joined by the text between two
    of them (one item a row, none made). ``None`` also when a name's text is not Unicode (a lone surrogate: the
    caller's text, a segment at a time, is encoded where it is written, which says so)."""
    # The priced rows' columns, each gathered for the group (one stack and one check of the whole group's, not one
    # a segment: a NumPy call costs about a microsecond, a segment of the bench grid holds 693 rows).
    found: list[list[np.ndarray]] = [[] for _ in _CSV_FLOATS]
    keys: list[np.ndarray | None] = []
    for segment in segments:
        status, p = segment.status, segment.priced
        if p is None:
            keys.append(None)
            continue
        mask = status == _PRICED
        count = int(np.count_nonzero(mask))
        if not count:
            keys.append(None)
            continue
        chosen = _chosen(mask, count)
        for column, key in zip(found, _CSV_FLOATS, strict=True):
            column.append(p[key][chosen])
        # A run is a stretch of rows of one status, and for priced rows one bind and host use (64 + 2 bind + use).
        keys.append(np.where(mask, 64 + 2 * p["binds"] + (p["host_sequences"] > 0), status))
    for fields in (f for segment in segments for f in segment.alone.values()):
        if not all(not isinstance(v, float) or math.isfinite(v) for v in fields.values()):
            return None
    runs_of_floats: list[bytes] = []
    floats = bool(found[0])
    if floats:
        columns = [np.concatenate(column) if len(column) > 1 else column[0] for column in found]
        every = np.stack(columns[: len(_ROW_FLOATS)], axis=1)
        if not (np.isfinite(every).all() and all(np.isfinite(c).all() for c in columns[len(_ROW_FLOATS) :])):
            return None
        runs_of_floats = float_rows_bytes(every)
    tpot_texts, ends = _tpot_csv(segments, cap, every[:, _ROW_FLOATS.index("pass_s")] if floats else None)
    parts: list[bytes] = []
    done = 0  # the group's priced rows already laid out
    runs_of = _group_runs([segment.status if runs is None else runs for segment, runs in zip(segments, keys,
                                                                                               strict=True)])
    try:
        for segment, (cuts, codes) in zip(segments, runs_of, strict=True):
            start, shown = kept.opening_bytes(segment)
            batches = segment.batches
            batch_text = kept.batch_bytes(batches)
            count = cuts[-1]
            held: bytes | list[bytes] | None = None
            capacity: bytes | list[bytes] | None = None
            for (a, b), code in zip(itertools.pairwise(cuts), codes, strict=True):
                rows = batch_text if b - a == count else batch_text[a:b]
                if code >= 64:
                    p = segment.priced
                    assert p is not None
                    bind, used = divmod(code - 64, 2)
                    if held is None:
                        held = kept.count_bytes(p["held_bytes"])
                        capacity = kept.count_bytes(p["capacity_bytes"])
                    assert capacity is not None
                    held_rows = held if isinstance(held, bytes) or b - a == count else held[a:b]
                    capacity_rows = capacity if isinstance(capacity, bytes) or b - a == count else capacity[a:b]
                    p0, p1 = done, done + b - a
                    done = p1
                    if used:
                        pieces: list[Any] = [start, rows, b",", int_texts_bytes(p["host_sequences"][a:b]), b","]
                    else:
                        zero = kept.batch_bytes_then(batches, b",0,")
                        pieces = [start, zero if b - a == count else zero[a:b]]
                    pieces += [runs_of_floats[p0:p1], _CSV_BINDS[bind], held_rows, b",", capacity_rows]
                    if cap is None:
                        pieces.append(b"," + shown[used] + b"," + shown[2 + used] + b",\n")
                    else:
                        pieces += [b"," + shown[used] + b"," + shown[2 + used] + b",,", tpot_texts[p0:p1],
                                   ends[p0:p1]]
                    _lay(parts, pieces, b - a)
                elif code == _ALONE:
                    for j in range(a, b):
                        fields = segment.alone[j]
                        row = {**dict.fromkeys(COLUMNS, None), **segment.common, "batch": int(batches[j]), **fields}
                        parts.append((_csv_line([_cell(row[k]) for k in COLUMNS]) + "\n").encode("utf-8"))
                else:
                    # start b1 end start b2 end …: the batches joined by "end start", in C, no list a row.
                    end = kept.refused_csv(segment.names[code - 1])
                    if cap is not None:
                        end = end[:-1] + b",,\n"
                    parts += [start, (end + start).join(rows), end]
    except UnicodeEncodeError:
        return None
    return b"".join(parts)


def _group_runs(keys: Sequence[np.ndarray]) -> list[tuple[list[int], list[int]]]:
    """For each of ``keys`` (a segment's rows' run keys, ``(B,)`` integers, at least one row), where its runs of one
    key start and end (``[0, …, B]``) and each run's key, found for all the segments at once: a few NumPy calls a
    group, not a few a segment."""
    every = np.concatenate(keys) if len(keys) > 1 else keys[0]
    changes = (np.flatnonzero(every[1:] != every[:-1]) + 1).tolist()
    starts = [0]
    for key in keys[:-1]:
        starts.append(starts[-1] + len(key))
    bounds = sorted({*changes, *starts})
    codes = every[bounds].tolist()
    out: list[tuple[list[int], list[int]]] = []
    k = 0
    for first, key in zip(starts, keys, strict=True):
        stop = first + len(key)
        cuts, kinds = [], []
        while k < len(bounds) and bounds[k] < stop:
            cuts.append(bounds[k] - first)
            kinds.append(codes[k])
            k += 1
        cuts.append(len(key))
        out.append((cuts, kinds))
    return out


#: The float columns :func:`_csv_group_text` gathers: :data:`_ROW_FLOATS`, then the byte counts (checked finite).
_CSV_FLOATS = (*_ROW_FLOATS, "held_bytes", "capacity_bytes")

#: A priced CSV row's bind cell with the commas around it, by the bind's index.
_CSV_BINDS = tuple(f",{b},".encode("ascii") for b in _BINDS)


def _tpot_csv(
    segments: Sequence[Segment], cap: float | None, pass_s: np.ndarray | None
) -> tuple[list[bytes], list[bytes]]:
    """:func:`_tpot_cells` for CSV rows, as ASCII bytes."""
    if cap is None or pass_s is None:
        return [], []
    tpot = _tpots(segments, pass_s)
    flags = (b",false\n", b",true\n")
    return float_reprs_bytes(tpot), np.array(flags, dtype=object)[(tpot <= cap).view(np.int8)].tolist()


#: The text before each of :data:`_FLOATS` in a priced row's JSON (``, "pass_s": ``), and before the held bytes the
#: bind's key and value, by the bind's index (``, "binds": "memory"``): made once, not once a run of rows.
_JSON_KEYS = tuple(f", {json.dumps(name)}: ".encode("ascii") for name in _FLOATS)
_JSON_BINDS = tuple(f', "binds": {json.dumps(b)}'.encode("ascii") for b in _BINDS)
_HELD = _FLOATS.index("held_bytes")

#: A refused row's JSON after its batch, up to its refusal: every column null.
_JSON_NULLS = "".join(f", {json.dumps(k)}: null" for k in _AFTER_BATCH[:-1])


def _json_float_rows(floats: Sequence[np.ndarray]) -> tuple[bytes, list[bytes] | None, bytes]:
    """The text of the :data:`_ROW_FLOATS` of each row of ``floats`` (its 7 columns, each ``(n,)``, finite) in a
    priced JSON row, each after its key (``, "tokens_per_s": 12.5, "pass_s": …``, ``repr`` of each value):
    ``(lead, rows, trail)``, where ``lead`` is the text every row has before its first column that is not the same
    in every row (the keys and the texts of the columns before it), ``rows`` the text of each row from that column
    to the last such column (:func:`~passprice.floattext.float_rows_keyed_bytes`: one orjson call, the texts
    between the columns put in by one replace a column, one bytes object a row), and ``trail`` the text every row
    has after it. ``rows`` is ``None`` when every column is the same in every row (``lead`` then holds them all).
    Each column's sameness is checked on its own array, and the columns that vary are laid side by side once (a
    column a loop; checking and copying them as an ``(n, 7)`` array's columns looped over a row's 7 values a
    call)."""
    same = [bool(_same(column)) for column in floats]
    varying = [j for j, one in enumerate(same) if not one]
    texts = [_JSON_KEYS[j] + repr(float(floats[j][0])).encode("ascii") if same[j] else b"" for j in range(len(same))]
    if not varying:
        return b"".join(texts), None, b""
    first, last = varying[0], varying[-1]
    lead = b"".join(texts[:first]) + _JSON_KEYS[first]
    between = [b"".join(texts[j + 1 : k]) + _JSON_KEYS[k] for j, k in itertools.pairwise(varying)]
    rows = float_rows_keyed_bytes(np.stack([floats[j] for j in varying], axis=1), between)
    return lead, rows, b"".join(texts[last + 1 :])


#: The columns of :data:`_FLOATS` holding the pass's terms, by the bind's index (:class:`ServingBind`'s order).
_TERM_COLUMNS = tuple(_FLOATS.index(key) for key in ("memory_s", "host_s", "array_s", "vector_s", "scale_s"))


def _lay(parts: list[Any], pieces: list[Any], rows: int) -> None:
    """Add to ``parts`` the pieces of ``rows`` rows, in row order: ``pieces`` holds, in a row's order, texts every
    row shares and lists of one text a row (each exactly ``rows`` long; texts all ``str`` or all ``bytes``);
    adjacent shared texts are merged first, and a row's last shared text with the next row's first (one item, not
    two, between two rows). The list of every
    piece of every row is made by repeating the shared ones and assigning each column to a slice of it: a few C
    loops, no object a row."""
    merged: list[Any] = []
    for piece in pieces:
        if not isinstance(piece, list) and merged and not isinstance(merged[-1], list):
            merged[-1] += piece
        else:
            merged.append(piece)
    first, last = merged[0], merged[-1]
    if len(merged) > 2 and not isinstance(first, list) and not isinstance(last, list):
        # first (A, B, … last+first) × rows, the very last item the row's end alone
        body = merged[1:-1]
        width = len(body) + 1
        flat = [*(None if isinstance(p, list) else p for p in body), last + first] * rows
        for j, p in enumerate(body):
            if isinstance(p, list):
                flat[j::width] = p
        flat[-1] = last
        parts.append(first)
        parts += flat
        return
    width = len(merged)
    flat = [None if isinstance(p, list) else p for p in merged] * rows
    for j, p in enumerate(merged):
        if isinstance(p, list):
            flat[j::width] = p
    parts += flat


def _all_finite(segment: Segment, ok: np.ndarray) -> bool:
    """Whether every float of the segment's priced rows, and of its rows priced alone, is finite."""
    if segment.priced is not None and len(ok):
        for key in _FLOATS:
            if not np.isfinite(segment.priced[key][ok]).all():
                return False
    return all(
        not isinstance(v, float) or math.isfinite(v) for fields in segment.alone.values() for v in fields.values()
    )


def _float_texts(values: np.ndarray) -> tuple[str | list[str], str]:
    """``repr`` of each float of ``values`` (finite, ``(n,)``), as the row writer writes it, and a text to add after
    each: one text when every value is the same (a capacity, a term that is 0 for every batch); for whole numbers
    from 0 to 10^16 (byte counts), the integers' texts and ``".0"`` (``repr`` writes such a float as its integer and
    ``.0``; an integer's text is a few times cheaper than a float's); else every ``repr``."""
    if _same(values):
        return repr(float(values[0])), ""
    if (values >= 0).all() and (values < 1e16).all() and (values == np.floor(values)).all() and not (
        np.signbit(values).any()
    ):
        return int_texts(values.astype(np.int64)), ".0"
    return float_reprs(values), ""


def _same(values: np.ndarray) -> Any:
    """Whether every value of ``values`` (float64; ``(n,)``, or ``(n, k)``: for each column) has the bits of the first
    row's, so the same text (``repr``) in every row: equal values need not (``0.0 == -0.0``, written ``0.0`` and
    ``-0.0``; sweep126 found a column of both written as its first row's). A bool, or ``(k,)`` bools. For
    ``(n, k)``, the comparison's columns are copied to rows first, so each column is checked in one loop over its
    rows (``all(axis=0)`` of an ``(n, k)`` array made one call of a loop over ``k`` values a row: 3 % of the
    instructions of a sweep's JSON text)."""
    bits = values.view(np.int64)
    if bits.ndim == 1:
        return (bits == bits[0]).all()
    return np.ascontiguousarray((bits == bits[0]).T).all(axis=1)


#: The columns of a priced row that count (bytes): written as integers when whole (:func:`whole`).
_COUNTS = ("held_bytes", "capacity_bytes")


def whole(value: float) -> int | float:
    """``value`` as an ``int`` when it is a whole number of magnitude below 2^53 (a float holds every such integer
    exactly), else as it is: a count of bytes or a position is written ``4912001024``, not ``4912001024.0``, in a
    sweep's CSV and JSON (leftovers round 20), and a mean position between two tokens (``512.5``) stays a float.
    The number is unchanged (``whole(v) == v``)."""
    return int(value) if math.isfinite(value) and value.is_integer() and abs(value) < 2**53 else value


def _count_texts(values: np.ndarray) -> tuple[str | list[str], str]:
    """The texts of a column of counts (``(n,)`` float64, finite) as the row writer writes them (``str`` of
    :func:`whole` of each), and ``""`` to add after each: one text when every value is the same (a card's capacity);
    integers' texts when every value is whole (an integer's text is a few times cheaper than a float's)."""
    if (values == values[0]).all():
        return str(whole(float(values[0]))), ""
    if (np.abs(values) < 2**53).all() and (values == np.floor(values)).all():
        return int_texts(values.astype(np.int64)), ""
    return [str(whole(v)) for v in values.tolist()], ""


def _count_bytes(values: np.ndarray) -> bytes | list[bytes]:
    """:func:`_count_texts` of ``values`` as ASCII bytes, without the text after each (always empty): one text when
    every value is the same, else one a value."""
    if (values == values[0]).all():
        return str(whole(float(values[0]))).encode("ascii")
    if (np.abs(values) < 2**53).all() and (values == np.floor(values)).all():
        return int_texts_bytes(values.astype(np.int64))
    return [str(whole(v)).encode("ascii") for v in values.tolist()]


def _priced_pieces(
    segment: Segment, ok: np.ndarray, start: str, end: str, csv_format: bool, kept: _Texts
) -> _Pieces:
    """The pieces of the segment's rows ``ok`` (priced on arrays) after the batch, each column formatted in one
    pass, the texts every row shares merged: ``[start, <the batch goes here>, text or column, …]``; ``start`` opens
    each row (its separator and the columns before the batch), ``end`` closes it."""
    p = segment.priced
    assert p is not None
    count = len(ok)
    binds = p["binds"][ok]
    host = p["host_sequences"][ok]
    one_bind = bool((binds == binds[0]).all())
    texts: dict[str, tuple[str | list[str], str]] = {}
    one_host = bool((host == host[0]).all())
    texts["host_sequences"] = (str(int(host[0])) if one_host else int_texts(host), "")
    labels = [b if csv_format else json.dumps(b) for b in _BINDS]
    texts["binds"] = (labels[int(binds[0])] if one_bind else np.array(labels)[binds].tolist(), "")
    for key, values in (("provenance", segment.provenance), ("weakest", segment.weakest)):
        shown = [_csv_line([v]) if csv_format else json.dumps(v) for v in values]
        used = host > 0
        if used.all() or not used.any():
            texts[key] = (shown[int(used[0])], "")
        else:
            texts[key] = (np.where(used, shown[1], shown[0]).tolist(), "")
    if csv_format and fast():
        # The seven floats from tokens_per_s to scale_s are one run of cells, and the two byte counts another: each
        # written by orjson as one 2-D array (a row's run of texts joined by commas), no column formatted alone.
        run = float_rows(np.stack([p[key][ok] for key in _ROW_FLOATS], axis=1))
        held, capacity = kept.of_counts(p["held_bytes"][ok])[0], kept.of_counts(p["capacity_bytes"][ok])[0]
        pieces: _Pieces = [start, ",", texts["host_sequences"][0], ",", run, ",", texts["binds"][0], ",", held, ",",
                           capacity]
        for key in ("provenance", "weakest"):
            pieces += [",", texts[key][0]]
        return _merged([*pieces, "," + end])
    terms = ("memory_s", "host_s", "array_s", "vector_s", "scale_s")
    texts.update(
        {key: kept.of_floats(p[key][ok]) for key in (*terms, "tokens_per_s")}
        | {key: kept.of_counts(p[key][ok]) for key in ("held_bytes", "capacity_bytes")}
    )
    stacked = np.stack([p[key][ok] for key in terms])
    chosen = np.take_along_axis(stacked, binds[None, :], axis=0)[0]
    one_bind = bool((binds == binds[0]).all())
    if np.array_equal(chosen, p["pass_s"][ok]) and (one_bind or not any(texts[key][1] for key in terms)):
        # The pass takes its binding term (the card's limit): the same double, so the same text.
        if one_bind:
            texts["pass_s"] = texts[terms[int(binds[0])]]
        else:
            table = np.array([_each(texts[key][0], count) for key in terms], dtype=object)
            texts["pass_s"] = (table[binds, np.arange(count)].tolist(), "")
    else:
        texts["pass_s"] = kept.of_floats(p["pass_s"][ok])
    pieces = [start]
    for key in _AFTER_BATCH[:-1]:
        pieces.append("," if csv_format else f", {json.dumps(key)}: ")
        column, after = texts[key]
        pieces.extend((column, after))
    pieces.append(("," if csv_format else ', "refusal": null}') + end)
    return _merged(pieces)


def _merged(pieces: _Pieces) -> _Pieces:
    """``pieces`` with each run of shared texts after the first joined into one (the first stays alone: the batch
    goes after it)."""
    merged: _Pieces = [pieces[0]]
    for piece in pieces[1:]:
        last = merged[-1]
        if isinstance(piece, str) and isinstance(last, str) and len(merged) > 1:
            merged[-1] = last + piece
        else:
            merged.append(piece)
    return merged


def _each(text: str | list[str], count: int) -> list[str]:
    """``text`` for each of ``count`` rows: a column as it is, a shared text repeated."""
    return [text] * count if isinstance(text, str) else text


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return value


#: Refusals of a sweep row that a larger batch can lift: a serving stack's measured batches may start above the
#: smallest swept (``BeyondStack``), and batch 0 is refused as ``Empty``. Every other refusal of a row's limit holds
#: at every larger batch (memory held grows with the batch; a context, a draft, a routing or a type does not move).
BATCH_LIFTED = frozenset({"BeyondStack", "Empty"})


def refused_row(sweeper: Sweeper, grid: Grid, common: Mapping[str, Any], batch: int) -> ServingRefusal | None:
    """The refusal ``price`` raises for the row of ``grid`` at ``batch`` whose shared columns are ``common`` (a
    :class:`Segment`'s: serving, card, draft tokens, position), priced alone as :func:`scalar_rows` prices it with
    :func:`~passprice.serving.price_serving`; ``None`` when no serving and card of the grid are the row's, or the row
    has a price. A sweep's row names its refusal alone (``BadContexts``); a summary on stderr says this one's
    message, what ``price`` says, its advice in the sweep's options' words (``position 8192 is not below its limit 8192
    … raise --limit or lower --positions``: :meth:`~passprice.serving.BadContexts.for_sweep`).
    Raises what :meth:`Sweeper.segments` raises for a serving that does not load (none, for a grid it priced)."""
    from passprice.checkpoints import load_checkpoint
    from passprice.serving import price_serving

    for entry in dict.fromkeys(grid.servings):
        if sweeper._label(entry) != common.get("serving"):
            continue
        base = swept_spec(sweeper.root, grid, entry)
        header = load_checkpoint(sweeper.root, base.checkpoint)
        base = complete(base, header)
        if sweeper.memory_use is not None:
            base = attrs.evolve(base, memory_use=sweeper.memory_use)
        for card_name in grid.cards or (base.card,):
            card = sweeper.card(card_name)
            if card.name != common.get("card"):
                continue
            position = common.get("position") if grid.positions else None
            spec = sweeper._spec(base, int(common.get("draft_tokens") or 0), position, entry_name(entry))
            acceptance = sweeper.method(spec.draft.method).first(spec.draft.tokens) if spec.draft else ()
            try:
                price_serving(header, card,
                              to_serving(attrs.evolve(spec, batch=batch), acceptance, sweeper.routing(spec.routing)))
            except BadContexts as e:  # its advice in the sweep's options' words (--positions)
                return e.for_sweep()
            except ServingRefusal as e:
                return _sweep_words(e)
            return None
    return None


#: The options a refusal's advice names that ``sweep`` lacks, and where a sweep sets the same: the serving's file
#: (a sweep's summary quoted ``price``'s ``NotResident`` advice, "page the KV cache (--kv-page) … (--host-memory)",
#: options ``sweep --help`` does not list; tests/test_fix185.py).
SWEEP_LACKS = {"(--kv-page)": "(kv_page in the serving's file)",
               "(--host-memory)": "(host_memory in the serving's file)",
               "(--host-memory holds": "(host_memory in the serving's file holds"}


def _sweep_words(refusal: ServingRefusal) -> ServingRefusal:
    """``refusal``, its message's advice naming where a sweep sets what ``price``'s options set (:data:`SWEEP_LACKS`)
    where it names an option ``sweep`` lacks: a copy, its ``args`` rewritten. Raises nothing."""
    text = str(refusal)
    said = text
    for option, words in SWEEP_LACKS.items():
        said = said.replace(option, words)
    if said == text:
        return refusal
    out = type(refusal).__new__(type(refusal), said)  # its fields kept, its message the sweep's
    out.__dict__.update(refusal.__dict__)
    out.args = (said,)
    return out


def nothing_priced(
    sweeper: Sweeper, grid: Grid, first: dict[str, tuple[dict[str, Any], int]] | None = None
) -> dict[str, int] | None:
    """When no row of ``grid`` can have a price: each refusal and how many of the grid's lines (serving, card,
    drafted tokens, position) it refuses at their smallest batch; else ``None`` (a row is priced, or a refusal a
    larger batch may lift, :data:`BATCH_LIFTED`, leaves it open). A sweep whose every row was refused wrote its
    rows and exited 0 without a word (newcomer walkthrough 12: ``--positions 8000`` past a 4,096 limit, and
    DeepSeek-V3 on an H200 it does not fit). Prices the grid at its smallest batch alone, stopping at the first
    line priced (one scalar-sized segment on a sweep that prices). ``first``, when given, gets each refusal's first
    row refused so (its segment's ``common`` and batch: :func:`refused_row` says its message). Raises what
    :meth:`Sweeper.segments` raises."""
    # Batch 0 is refused as Empty whatever else holds: the probe prices the smallest batch of sequences (round 19: a
    # grid of batches 0, 1, 2 on a card its weights do not fit said nothing); a grid of batch 0 alone is all Empty.
    sequences = [b for b in grid.batches if b > 0]
    probe = attrs.evolve(grid, batches=(min(sequences or grid.batches),))
    lifted = BATCH_LIFTED if sequences else BATCH_LIFTED - {"Empty"}
    counts: dict[str, int] = {}
    for segment in sweeper.segments(probe):
        for row in segment.rows():
            refusal = row.get("refusal")
            if not refusal or refusal in lifted:
                return None
            counts[refusal] = counts.get(refusal, 0) + 1
            if first is not None:
                first.setdefault(str(refusal), (segment.common, int(row["batch"])))
    return counts or None


#: The refusals whose advice names the routing records that fit (``price``'s line lists them; a sweep's summary too).
ROUTING_REFUSALS = frozenset({Routed.name, BadRouting.name})


def routing_refusal(sweeper: Sweeper, grid: Grid) -> Routed | BadRouting | None:
    """The first :class:`~passprice.serving.Routed` or :class:`~passprice.serving.BadRouting` refusal of ``grid``'s
    servings in grid order, as ``price`` raises it for the serving so priced (its header with it: the records whose
    scope holds the checkpoint are the ones its advice names), else ``None``. A sweep whose every line was refused so
    said the refusal's name alone (``… Routed (1 line)``), where ``price`` said which records fit (sweep51). Which
    experts a pass reads does not depend on the card, batch or position, so each serving is read once, with its own
    drafts. Raises what :meth:`Sweeper.segments` raises for a serving that does not load."""
    from passprice.checkpoints import load_checkpoint

    for entry in dict.fromkeys(grid.servings):
        spec = swept_spec(sweeper.root, grid, entry)
        header = load_checkpoint(sweeper.root, spec.checkpoint)
        try:
            pass_shape(header, sweeper._serving(complete(spec, header)))
        except (Routed, BadRouting) as e:
            return e
        except ServingRefusal:
            continue
    return None


def record_label(folder: Path, ref: str) -> str:
    """The name a row shows for the record ``ref`` (a serving, or a serving's checkpoint) whose registry folder is
    ``folder``: its registry name (``gemma3-270m-h100``) when the file ``ref`` names lies directly in ``folder``,
    however ``ref`` reached it (``../servings/x``, a ``.toml`` path to the registry's file), else ``ref`` as given
    (a file outside the registry is named by its path, a ``.gguf`` by its path). A sweep file outside the registry
    naming ``../servings/x`` showed that text in its serving column, and a serving naming ``checkpoint =
    "../checkpoints/x"`` that text in its checkpoint column (attack round 33). Raises nothing."""
    if "/" not in ref and os.sep not in ref and not ref.endswith(".toml"):
        return ref
    candidates = [Path(ref), folder / ref] if ref.endswith(".toml") else [folder / f"{ref}.toml"]
    for path in candidates:
        try:
            if path.is_file() and Path(os.path.abspath(path)).parent.resolve() == folder.resolve():
                return path.name.removesuffix(".toml")
        except (OSError, RuntimeError, ValueError):
            continue
    return ref


def scalar_rows(root: Root, grid: Grid) -> Iterator[dict[str, Any]]:
    """The same rows as :meth:`Sweeper.rows`, each priced alone with
    :func:`~passprice.serving.price_serving` (the reference the vectorized sweep is tested and benchmarked against)."""
    from passprice.checkpoints import load_checkpoint
    from passprice.serving import price_serving

    sweeper = Sweeper(root)
    for serving_name in grid.servings:
        base = swept_spec(root, grid, serving_name)
        header = load_checkpoint(root, base.checkpoint)
        base = complete(base, header)
        for card_name in grid.cards or (base.card,):
            card = sweeper.card(card_name)
            for tokens in grid.draft_tokens or ((base.draft.tokens if base.draft else 0),):
                for position in grid.positions or (None,):
                    spec = sweeper._spec(base, tokens, position)
                    acceptance = sweeper.method(spec.draft.method).first(spec.draft.tokens) if spec.draft else ()
                    for b in grid.batches:
                        serving = to_serving(attrs.evolve(spec, batch=b), acceptance, sweeper.routing(spec.routing))
                        try:
                            c = price_serving(header, card, serving)
                        except ServingRefusal as e:
                            yield {"batch": b, "refusal": refusal_text(e)}
                            continue
                        yield {"batch": b, "refusal": None, **_scalar_row(c)}
