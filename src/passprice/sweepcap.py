"""A TPOT cap on a sweep marks rows, it never moves or drops them: ``passprice sweep --max-tpot SECONDS`` keeps every
row and its price, adds each row's TPOT and whether it is within the cap, and takes each line's best batch (the
picture's dot, the summary on stderr) among the batches within the cap only — the best ``passprice best --max-tpot``
finds for that serving on that card.

A row's TPOT (time per output token, seconds) is its pass over the tokens a sequence emits a pass, ``pass_s /
emitted_per_sequence`` (:func:`passprice.batching._tpot`, the seed's ``best_by_scan`` cap): the same figure for the
same pass. The pass never shrinks as the batch grows, so a line's batches within the cap are a prefix of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import numpy as np

from passprice.sweep import _ALONE, _PRICED, COLUMNS, Segment, _cell, _check_finite, _csv_line
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


def capped_chunks(segments: Iterable[Segment], fmt: str, max_tpot: float) -> Iterator[str]:
    """The text of a sweep with :data:`TPOT_COLUMNS` (``fmt``: ``csv`` or ``json``), a group of segments at a time
    (:data:`~passprice.sweep.GROUP_ROWS` rows, as the sweep groups them): the group's text as the sweep writes it
    (:func:`passprice.sweep.text_chunks`, its columns formatted on arrays) cut into its rows once, and each row laid
    out with the two cells added (CSV: ``,TPOT,true``; JSON: ``"tpot_s"`` and ``"within_max_tpot"`` before the
    closing brace) in one list joined in C (:func:`_capped_text`): the same bytes :func:`reference_chunks` writes a
    row at a time. Raises :class:`~passprice.errors.InputError` at a row holding a number that is not finite, as the
    sweep does."""
    from passprice.sweep import GROUP_ROWS

    csv_format = fmt == "csv"
    yield ",".join((*COLUMNS, *TPOT_COLUMNS)) + "\n" if csv_format else "["
    first = True
    group: list[Segment] = []
    rows = 0
    for segment in segments:
        group.append(segment)
        rows += len(segment.batches)
        if rows >= GROUP_ROWS:
            made = _capped_text(group, fmt, max_tpot, first)
            first = first and not made
            yield made
            group, rows = [], 0
    if group:
        made = _capped_text(group, fmt, max_tpot, first)
        first = first and not made
        yield made
    if not csv_format:
        yield "\n]\n"


#: The cells :func:`_capped_text` adds to a row, by format: its TPOT's key (before the TPOT's text), the TPOT's text
#: of a refused row, and the flag with the row's end for a row over the cap, within it, and refused.
_ADDED = {
    "csv": (",", "", (",false\n", ",true\n", ",\n")),
    "json": (
        ', "tpot_s": ',
        "null",
        (', "within_max_tpot": false},\n', ', "within_max_tpot": true},\n', ', "within_max_tpot": null},\n'),
    ),
}


def _capped_text(group: list[Segment], fmt: str, max_tpot: float, first: bool) -> str:
    """The text of the segments ``group`` with :data:`TPOT_COLUMNS`, as :func:`capped_chunks` gives it (``first``:
    the text opens the sweep's JSON array). The group's TPOTs are written in one call (floattext, ``repr``'s text)
    and flagged by one comparison; the group's text (:func:`passprice.sweep.text_chunks`) is cut at its rows' ends
    (a JSON object's ``},\n``: JSON escapes every newline inside a string; a CSV line's ``\n``) and each row
    followed by its cells: four items a row in one list, joined once (a row at a time, ``repr`` and an f-string cost
    1.1 s a million rows). A group whose text does not cut into one piece a row (a CSV cell holding a new line) is
    written a row at a time."""
    from passprice.floattext import float_reprs
    from passprice.sweep import text_chunks

    csv_format = fmt == "csv"
    text = "".join(text_chunks(group, fmt, opens=False, closes=False))
    count = sum(len(segment.batches) for segment in group)
    if csv_format:
        lines = text.split("\n")
        tail = lines.pop() if lines else None
        fits = tail == ""
    else:
        # ",\n{A},\n{B}": "{A" and "{B", each object less its "}".
        lines = text[2:-1].split("},\n") if text.startswith(",\n{") and text.endswith("}") else []
        fits = True
    if not text or not fits or len(lines) != count:
        made = "".join(line for segment in group for line in _reference_lines(segment, fmt, max_tpot))
        return made[1:] if made and first and not csv_format else made
    key, no_tpot, ends = _ADDED[fmt]
    tpot_texts = np.full(count, no_tpot, dtype=object)
    flags = np.full(count, ends[2], dtype=object)
    offset = 0
    found_values, found_rows = [], []
    for segment in group:
        values, rows = tpots(segment)
        found_values.append(values)
        found_rows.append(rows + offset)
        offset += len(segment.batches)
    values = np.concatenate(found_values)
    if len(values):
        at = np.concatenate(found_rows)
        texts = np.empty(len(values), dtype=object)
        texts[:] = float_reprs(values)
        tpot_texts[at] = texts
        flags[at] = np.array(ends[:2], dtype=object)[(values <= max_tpot).view(np.int8)]
    flat = [key] * (4 * count)
    flat[0::4] = lines
    flat[2::4] = tpot_texts.tolist()
    flat[3::4] = flags.tolist()
    if not csv_format:
        flat[-1] = flat[-1][:-2]  # the group's last object: no ",\n" after it
        flat[0] = ("\n" if first else ",\n") + flat[0]
    return "".join(flat)


def _reference_lines(segment: Segment, fmt: str, max_tpot: float) -> Iterator[str]:
    """The lines of ``segment`` with :data:`TPOT_COLUMNS`, a row at a time, as :func:`passprice.sweep.write_rows`
    writes a row (CSV: each line ending ``\\n``; JSON: each object after ``,\\n``)."""
    columns = (*COLUMNS, *TPOT_COLUMNS)
    for row in capped_rows(segment, max_tpot):
        _check_finite(row)
        if fmt == "csv":
            yield _csv_line([_csv_cell(row.get(k)) for k in columns]) + "\n"
        else:
            yield ",\n" + json.dumps(row, allow_nan=False)


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


@attrs.define
class _Line:
    """One line's bests so far: within the cap (tokens/s, batch, TPOT) and over all; the smallest batch priced (batch,
    TPOT); the largest batch within the cap; the grid's largest batch (refused rows included)."""

    within: tuple[float, int, float] | None = None
    best: tuple[float, int, float] | None = None
    first: tuple[int, float] | None = None
    last: int | None = None
    largest: int | None = None


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

    @property
    def cap(self) -> str:
        """The cap as people read it: ``20 ms``."""
        return si(self.max_tpot, "s")

    def add(self, segment: Segment) -> None:
        """The priced rows of ``segment`` (one block of a line's batches)."""
        values, rows = tpots(segment)
        c = segment.common
        key = (c["serving"], c["card"], c["position"], c["draft_tokens"])
        if not len(rows):
            if key in self._lines and len(segment.batches):  # a block refused whole still widens the grid
                self._lines[key].largest = max(self._lines[key].largest or 0, int(segment.batches.max()))
            return
        line = self._lines.setdefault(key, _Line())
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

        labels = line_labels(self._lines)
        best = self.best()
        return {labels[k]: (best[k], v.last) for k, v in self._lines.items()}

    def summary(self) -> list[str]:
        """A line for each line of the sweep (at most :data:`SUMMARY_LINES`, then a count): its best batch within the
        cap with its tokens/s and TPOT, beside the best without the cap when that is another batch; or that no batch
        is within (the smallest batch's TPOT)."""
        from passprice.plots import line_labels

        cap = self.cap
        labels = line_labels(self._lines)
        out = []
        for key, line in list(self._lines.items())[:SUMMARY_LINES]:
            label = labels[key]
            if line.within is None:
                assert line.first is not None
                out.append(f"{label}: no batch within TPOT ≤ {cap} (batch {line.first[0]:,} takes "
                           f"{si(line.first[1], 's')} a token)")
                continue
            rate, batch, tpot = line.within
            text = f"{label}: best batch within TPOT ≤ {cap}: {batch:,}, {rate:,.1f} tokens/s at {si(tpot, 's')}"
            if line.best is not None and line.best[1] != batch:
                text += (f" (without the cap: {line.best[1]:,}, {line.best[0]:,.1f} tokens/s at "
                         f"{si(line.best[2], 's')})")
            if batch == line.largest:  # walkthrough 11: 100 read as the cap's answer where `best` finds 318
                text += (" — the grid's largest batch: the grid, not the cap, bounds it (`passprice best --max-tpot` "
                         "searches every batch)")
            out.append(text)
        more = len(self._lines) - SUMMARY_LINES
        if more > 0:
            out.append(f"… and {more:,} more lines (see the within_max_tpot column)")
        return out
