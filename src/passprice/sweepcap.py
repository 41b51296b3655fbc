"""A TPOT cap on a sweep marks rows, it never moves or drops them: ``passprice sweep --max-tpot SECONDS`` keeps every
row and its price, adds each row's TPOT and whether it is within the cap, and takes each line's best batch (the
picture's dot, the summary on stderr) among the batches within the cap only — the best ``passprice best --max-tpot``
finds for that serving on that card.

A row's TPOT (time per output token, seconds) is its pass over the tokens a sequence emits a pass, ``pass_s /
emitted_per_sequence`` (:func:`passprice.batching._tpot`, the seed's ``best_by_scan`` cap): the same figure for the
same pass. The pass never shrinks as the batch grows, so a line's batches within the cap are a prefix of it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs
import numpy as np

from passprice.sweep import _ALONE, _PRICED, COLUMNS, Segment, _cell, _check_finite, _csv_line, json_fields
from passprice.tables import si

#: The columns a sweep with ``--max-tpot`` adds after :data:`passprice.sweep.COLUMNS` (none without it, so a sweep's
#: bytes are what they were): the row's TPOT (seconds) and whether it is at most the cap (``true``/``false``; empty,
#: or JSON ``null``, for a refused row).
TPOT_COLUMNS = ("tpot_s", "within_max_tpot")

#: The most lines the summary on stderr names one by one (the rest counted in one line).
SUMMARY_LINES = 20


def tpots(segment: Segment) -> tuple[np.ndarray, np.ndarray]:
    """The TPOT (seconds, ``pass_s / emitted``) of each row of ``segment`` that has a price, in row order, and those
    rows' indices (``(n,)`` each): the rows :meth:`~passprice.sweep.Segment.prices` gives."""
    pass_s = np.full(len(segment.batches), np.nan)
    if segment.priced is not None:
        ok = segment.status == _PRICED
        pass_s[ok] = segment.priced["pass_s"][ok]
    for j, fields in segment.alone.items():
        pass_s[j] = fields["pass_s"]
    has = np.nonzero((segment.status == _PRICED) | (segment.status == _ALONE))[0]
    return pass_s[has] / segment.emitted, has


def capped_rows(segment: Segment, max_tpot: float) -> Iterator[dict[str, Any]]:
    """The rows of ``segment`` (:meth:`~passprice.sweep.Segment.rows`) each with :data:`TPOT_COLUMNS`: its TPOT and
    whether it is at most ``max_tpot`` seconds (``None`` for a refused row)."""
    values, rows = tpots(segment)
    by_row = dict(zip(rows.tolist(), values.tolist(), strict=True))
    for j, row in enumerate(segment.rows()):
        tpot = by_row.get(j)
        row["tpot_s"] = tpot
        row["within_max_tpot"] = None if tpot is None else bool(tpot <= max_tpot)
        yield row


def _csv_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _cell(value)


def capped_chunks(
    segments: Iterable[Segment], fmt: str, max_tpot: float, binary: bool = False
) -> Iterator[str | bytes]:
    """The text of a sweep with :data:`TPOT_COLUMNS` (``fmt``: ``csv`` or ``json``), a group of segments at a time
    (:data:`~passprice.sweep.GROUP_ROWS` rows, as the sweep groups them): each group's text made as the sweep makes
    it, columns formatted on arrays and laid out in one list joined once, with the two cells at each row's end
    (CSV: ``,TPOT,true``; JSON: ``"tpot_s"`` and ``"within_max_tpot"`` before the closing brace; the TPOTs written
    by one call, the flags made by one comparison: ``passprice.sweep._group_text`` with its ``cap``); a group that
    text cannot make (a row priced alone, a number that is not finite) is written a row at a time. The same bytes
    :func:`reference_chunks` writes a row at a time (cutting the sweep's text into its rows to add the cells took 1 s
    a million JSON rows). Raises :class:`~passprice.errors.InputError` at a row holding a number that is not finite,
    as the sweep does. ``binary``: JSON's chunks as ASCII bytes, as :func:`~passprice.sweep.text_chunks` makes them
    (CSV's are ``str`` either way)."""
    from passprice.sweep import GROUP_ROWS, _group_text, _joined, _Texts

    csv_format = fmt == "csv"
    binary = binary and not csv_format
    yield _joined(",".join((*COLUMNS, *TPOT_COLUMNS)) + "\n" if csv_format else "[", "", binary)
    first = True
    kept = _Texts()
    group: list[Segment] = []
    rows = 0
    for segment in itertools.chain(segments, [None]):
        if segment is not None:
            group.append(segment)
            rows += len(segment.batches)
            if rows < GROUP_ROWS:
                continue
        if not group:
            break
        text = _group_text(group, fmt, kept, max_tpot)
        assert not isinstance(text, list)  # one text without ``apart``
        made: str | bytes | None = text
        if made is None:
            made = "".join(line for s in group for line in _reference_lines(s, fmt, max_tpot))
        if made and first and not csv_format:
            made = made[1:]  # the first object follows "[" on a line of its own: "\n", not ",\n"
        first = first and not made
        yield _joined("", made, binary)
        group, rows = [], 0
    if not csv_format:
        yield _joined("", "\n]\n", binary)


def _reference_lines(segment: Segment, fmt: str, max_tpot: float) -> Iterator[str]:
    """The lines of ``segment`` with :data:`TPOT_COLUMNS`, a row at a time, as :func:`passprice.sweep.write_rows`
    writes a row (CSV: each line ending ``\\n``; JSON: each object after ``,\\n``)."""
    columns = (*COLUMNS, *TPOT_COLUMNS)
    for row in capped_rows(segment, max_tpot):
        _check_finite(row)
        if fmt == "csv":
            yield _csv_line([_csv_cell(row.get(k)) for k in columns]) + "\n"
        else:
            yield ",\n" + json.dumps(json_fields(row), allow_nan=False)


def reference_chunks(segments: Iterable[Segment], fmt: str, max_tpot: float) -> Iterator[str]:
    """:func:`capped_chunks`'s text made a row at a time (:meth:`~passprice.sweep.Segment.rows` and ``json`` /
    ``csv``), the reference it is tested against."""
    yield ",".join((*COLUMNS, *TPOT_COLUMNS)) + "\n" if fmt == "csv" else "["
    first = True
    for segment in segments:
        made = "".join(_reference_lines(segment, fmt, max_tpot))
        if fmt != "csv" and first and made:
            made = "\n" + made[2:]
            first = False
        yield made
    if fmt != "csv":
        yield "\n]\n"


def _count_refusals(counts: dict[str, int], segment: Segment, first: dict[str, int] | None = None) -> None:
    """Add the refusal of each row of ``segment`` without a price (a status ``k ≥ 1``: ``names[k − 1]``; a row priced
    alone with a ``refusal``) to ``counts`` (refusal name → rows); ``first`` (refusal name → batch), when given, keeps
    the smallest batch each refusal refused."""
    codes, n = np.unique(segment.status[segment.status >= 1], return_counts=True)
    for code, rows in zip(codes.tolist(), n.tolist(), strict=True):
        name = segment.names[code - 1]
        counts[name] = counts.get(name, 0) + rows
        if first is not None:
            at = int(segment.batches[segment.status == code].min())
            first[name] = min(first.get(name, at), at)
    for j, fields in segment.alone.items():
        if fields.get("refusal"):
            name = fields["refusal"]
            counts[name] = counts.get(name, 0) + 1
            if first is not None:
                at = int(segment.batches[j])
                first[str(name)] = min(first.get(str(name), at), at)


@attrs.define
class _Line:
    """One line's bests so far: within the cap (tokens/s, batch, TPOT) and over all; the smallest batch priced (batch,
    TPOT); the largest batch within the cap; the grid's largest batch (refused rows included); the refusal of each row
    without a price (refusal name → rows), what a line with none priced is said with."""

    within: tuple[float, int, float] | None = None
    best: tuple[float, int, float] | None = None
    first: tuple[int, float] | None = None
    last: int | None = None
    largest: int | None = None
    refused: dict[str, int] = attrs.Factory(dict)
    #: The smallest batch each refusal refused (refusal name → batch), and the line's shared columns (a segment's
    #: ``common``): the row whose message the summary says (:func:`passprice.sweep.refused_row`).
    refused_at: dict[str, int] = attrs.Factory(dict)
    common: dict[str, Any] = attrs.Factory(dict)


def _better(a: tuple[float, int, float] | None, b: tuple[float, int, float]) -> tuple[float, int, float]:
    """The faster of two points, the smaller batch of equals (the seed's best)."""
    if a is None or b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


class BestWithin:
    """Each line's best batch within a TPOT cap of ``max_tpot`` seconds, gathered as the sweep's segments go by (a
    line: serving, card, position and draft tokens)."""

    def __init__(self, max_tpot: float) -> None:
        self.max_tpot = max_tpot
        self._lines: dict[tuple[Any, ...], _Line] = {}
        #: Every batch of the grid (each line sweeps the same batches): whether a line's best has a next batch swept.
        self._batches: set[int] = set()

    @property
    def cap(self) -> str:
        """The cap as people read it: ``20 ms``."""
        return si(self.max_tpot, "s")

    def add(self, segment: Segment) -> None:
        """The priced rows of ``segment`` (one block of a line's batches)."""
        values, rows = tpots(segment)
        self._batches.update(segment.batches.tolist())
        c = segment.common
        key = (c["serving"] or c["checkpoint"], c["card"], c["position"], c["draft_tokens"])
        if not len(segment.batches):
            return
        # Every line gets its summary line, one whose every batch is refused too (left44: a card the checkpoint is
        # not resident on said nothing beside the other card's best).
        line = self._lines.setdefault(key, _Line(common=dict(c)))
        _count_refusals(line.refused, segment, line.refused_at)
        if not len(rows):  # a block refused whole still widens the grid
            line.largest = max(line.largest or 0, int(segment.batches.max()))
            return
        batches, rates = segment.prices()
        order = np.lexsort((batches, -rates))  # fastest first, the smaller batch of equals
        top = int(order[0])
        line.best = _better(line.best, (float(rates[top]), int(batches[top]), float(values[top])))
        inside = np.nonzero(values <= self.max_tpot)[0]
        if len(inside):
            k = int(inside[np.lexsort((batches[inside], -rates[inside]))[0]])
            line.within = _better(line.within, (float(rates[k]), int(batches[k]), float(values[k])))
            line.last = max(line.last or 0, int(batches[inside].max()))
        line.largest = max(line.largest or 0, int(segment.batches.max()))  # of the grid, refused rows included
        low = int(np.argmin(batches))
        if line.first is None or int(batches[low]) < line.first[0]:
            line.first = (int(batches[low]), float(values[low]))

    def best(self) -> dict[tuple[Any, ...], tuple[int, float] | None]:
        """Each line's best (batch, tokens/s) within the cap, ``None`` when no batch of it is within, by (serving,
        card, position, draft tokens)."""
        return {k: (v.within[1], v.within[0]) if v.within else None for k, v in self._lines.items()}

    def capped(self) -> dict[str, tuple[tuple[int, float] | None, int | None]]:
        """By the picture's label (:func:`passprice.plots.line_labels`): each line's best within the cap and its
        largest batch within it (:func:`passprice.plots.draw_sweep`'s ``capped``)."""
        from passprice.plots import line_labels

        # The lines the picture draws: those with a priced point (plots.SweepLines), labelled among themselves.
        priced = {k: v for k, v in self._lines.items() if v.first is not None}
        labels = line_labels(priced)
        best = self.best()
        return {labels[k]: (best[k], v.last) for k, v in priced.items()}

    def summary(self, explain: Callable[[Mapping[str, Any], int], Exception | None] | None = None) -> list[str]:
        """A line for each line of the sweep (at most :data:`SUMMARY_LINES`, then a count): its best batch within the
        cap with its tokens/s and TPOT, beside the best without the cap when that is another batch; or that no batch
        is within (the smallest batch's TPOT); or, a line whose every batch is refused, each refusal with its rows,
        and, the first time a refusal's name is said, the message ``price`` says of its smallest batch refused so:
        ``explain(common, batch)`` (:func:`passprice.sweep.refused_row`; ``None``: the names alone)."""
        from passprice.plots import line_labels

        cap = self.cap
        labels = line_labels(self._lines)
        out = []
        explained: set[str] = set()
        for key, line in list(self._lines.items())[:SUMMARY_LINES]:
            label = labels[key]
            if line.first is None:  # no batch of the line priced: why, by refusal (most rows first)
                each = []
                for name, n in sorted(line.refused.items(), key=lambda item: (-item[1], item[0])):
                    text = f"{name} ({n:,} batch{'es' if n != 1 else ''})"
                    name = str(name)
                    if explain is not None and name not in explained and name in line.refused_at:
                        e = explain(line.common, line.refused_at[name])
                        if e is not None:
                            explained.add(name)
                            text += f" — at batch {line.refused_at[name]:,}: {e}"
                    each.append(text)
                out.append(f"{label}: no batch within TPOT ≤ {cap}: every batch is refused: {'; '.join(each)}")
                continue
            if line.within is None:
                out.append(f"{label}: no batch within TPOT ≤ {cap} (batch {line.first[0]:,} takes "
                           f"{si(line.first[1], 's')} a token)")
                continue
            rate, batch, tpot = line.within
            text = f"{label}: best batch within TPOT ≤ {cap}: {batch:,}, {rate:,.1f} tokens/s at {si(tpot, 's')}"
            if line.best is not None and line.best[1] != batch:
                # the grid's edge is no best of the card's (fix181: 512 of 1-512, where max-batch gives 588)
                edge = " (the largest batch swept)" if line.best[1] == line.largest else ""
                text += (f" (without the cap: {line.best[1]:,}{edge}, {line.best[0]:,.1f} tokens/s at "
                         f"{si(line.best[2], 's')})")
            if batch == line.largest:  # walkthrough 11: 100 read as the cap's answer where `best` finds 318
                text += (" — the grid's largest batch: the grid, not the cap, bounds it (`passprice best --max-tpot` "
                         "searches every batch)")
            elif batch + 1 not in self._batches:  # walk48: 256 of 1-4096*2 read as the best, where `best` finds 304
                after = min((b for b in self._batches if b > batch), default=None)
                text += (f" — the best of the batches swept; one between {batch:,} and {after:,} may be faster "
                         "(`passprice best --max-tpot` searches every batch)")
            out.append(text)
        more = len(self._lines) - SUMMARY_LINES
        if more > 0:
            out.append(f"… and {more:,} more lines (see the within_max_tpot column)")
        return out
