"""Where people would rather look than read, a command draws what it computed: every picture is drawn from the same
data its table or JSON shows, never from a second computation.

``sweep --plot`` (tokens/s against the batch, one line a serving on a card, each line's best batch marked),
``simulate --plot`` (throughput and end-to-end latency over the trace's time, one colour a policy) and ``audit
--plot`` (each fact's elasticity as a bar, the binding facts and the weakest marked). PNG or SVG by the file's suffix,
written atomically; matplotlib is an optional extra (``pip install 'passprice[plot]'``), as for ``roofline --plot``.
The same data always gives the same bytes (no dates, fixed SVG ids).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passprice.errors import InputError
from passprice.files import write_atomically
from passprice.roofline import literal_texts, log_span, require_matplotlib

if TYPE_CHECKING:
    from passprice.audit import Audit
    from passprice.simulate import Simulation

#: The colours lines cycle through (Okabe–Ito, readable by colour-blind readers).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: The most lines a sweep picture draws (a larger grid is refused: it would be unreadable).
MAX_LINES = 40


def picture_format(path: Path) -> str:
    """``png`` or ``svg`` from ``path``'s suffix (for a link, its target's: :func:`passprice.files.written_suffix`).
    Raises :class:`InputError` for another suffix, or a link whose name's suffix is not its target's."""
    from passprice.files import written_suffix

    fmt = written_suffix(path, "--plot").lstrip(".")
    if fmt not in ("png", "svg"):
        raise InputError(f"--plot {path}: the file must end in .png or .svg")
    return fmt


def _save(fig: Any, plt: Any, fmt: str) -> bytes:
    """The figure as ``fmt`` bytes, without a date and with fixed SVG ids, then closed."""
    buffer = io.BytesIO()
    try:
        literal_texts(fig)  # a name holding "$" is drawn as written, not parsed as mathtext
        fig.tight_layout()
        metadata = {"Date": None} if fmt == "svg" else {"Software": "passprice (matplotlib)"}
        with plt.rc_context({"svg.hashsalt": "passprice"}):
            fig.savefig(buffer, format=fmt, metadata=metadata)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def write_picture(path: Path, data: bytes, force: bool = False) -> None:
    """Write a rendered picture atomically (:func:`passprice.files.write_atomically`)."""
    write_atomically(path, data, force)


# --- sweep -----------------------------------------------------------------------------------------------------------


#: Points a line of a sweep picture is drawn through as they are; a line with more (a sweep of many batches) is
#: thinned to the fastest point of each of :data:`BINS_PER_OCTAVE` log-spaced bins an octave of batches, its best
#: batch always among them.
MAX_POINTS = 4096
#: Bins an octave of batches a thinned line keeps a point of (on the picture's log axis, finer than a pixel).
BINS_PER_OCTAVE = 64


def _thinned(batches: Any, rates: Any) -> tuple[Any, Any]:
    """The fastest point of each log-spaced batch bin (:data:`BINS_PER_OCTAVE` an octave), the smaller batch on a
    tie: the line's best batch (the fastest, the smallest of equals) is always kept."""
    import numpy as np

    bins = np.floor(np.log2(np.maximum(batches, 1)) * BINS_PER_OCTAVE)
    order = np.lexsort((batches, -rates, bins))
    _, first = np.unique(bins[order], return_index=True)
    kept = order[first]
    return batches[kept], rates[kept]


def line_label(key: tuple[Any, Any, Any, Any], vary_position: bool, vary_draft: bool) -> str:
    """A sweep line's label: ``serving on card``, with the position and draft tokens when the grid varies them
    (``key``: serving, card, position, draft tokens)."""
    serving, card, position, tokens = key
    label = f"{serving} on {card}"
    if vary_position:
        label += f", position {float(position):g}"
    if vary_draft:
        label += f", {tokens} drafts"
    return label


def line_labels(keys: Iterable[tuple[Any, Any, Any, Any]]) -> dict[tuple[Any, Any, Any, Any], str]:
    """Each line's :func:`line_label` among ``keys`` (the position and draft tokens named when they vary)."""
    keys = list(keys)
    vary_position = len({k[2] for k in keys}) > 1
    vary_draft = len({k[3] for k in keys}) > 1
    return {k: line_label(k, vary_position, vary_draft) for k in keys}


class SweepLines:
    """The lines of a sweep picture, gathered as the sweep is written, a block of rows at a time, in bounded
    memory: the priced points of each (serving, card, position, draft tokens), a line with more than
    :data:`MAX_POINTS` thinned as it grows (:func:`_thinned`), so a sweep of millions of rows is drawn from at most
    a few thousand points a line."""

    def __init__(self) -> None:
        self._points: dict[tuple[Any, Any, Any, Any], list[tuple[Any, Any]]] = {}
        self._counts: dict[tuple[Any, Any, Any, Any], int] = {}

    def add(self, serving: str, card: str, position: Any, draft_tokens: Any, batches: Any, rates: Any) -> None:
        """The priced points of one block of rows of a line: ``batches`` (ints) and their tokens/s ``rates``."""
        import numpy as np

        if not len(batches):
            return
        key = (serving, card, position, draft_tokens)
        chunks = self._points.setdefault(key, [])
        chunks.append((np.asarray(batches, dtype=np.int64), np.asarray(rates, dtype=float)))
        self._counts[key] = self._counts.get(key, 0) + len(batches)
        if self._counts[key] > 2 * MAX_POINTS:
            merged = _thinned(np.concatenate([b for b, _ in chunks]), np.concatenate([r for _, r in chunks]))
            self._points[key] = [merged]
            self._counts[key] = len(merged[0])

    def add_row(self, row: Mapping[str, Any]) -> None:
        """One row of the sweep (as :meth:`passprice.sweep.Sweeper.rows` gives it, or read back from its CSV); a
        refused row has no price and is left out."""
        if row.get("refusal") or row.get("tokens_per_s") in (None, ""):
            return
        self.add(row["serving"], row["card"], row["position"], row["draft_tokens"], [int(row["batch"])],
                 [float(row["tokens_per_s"])])

    def labels(self) -> dict[tuple[Any, Any, Any, Any], str]:
        """Each line's label by its (serving, card, position, draft tokens) (:func:`line_labels`)."""
        return line_labels(self._points)

    def lines(self) -> dict[str, list[tuple[int, float]]]:
        """A label (``serving on card``, with the position and draft tokens when the grid varies them) → (batch,
        tokens/s) points in batch order. Raises :class:`InputError` when more than :data:`MAX_LINES` lines would be
        drawn."""
        import numpy as np

        labels = self.labels()
        labelled: dict[str, list[tuple[Any, Any]]] = {}
        for key, chunks in self._points.items():
            labelled.setdefault(labels[key], []).extend(chunks)
        if len(labelled) > MAX_LINES:
            raise InputError(
                f"--plot: the grid has {len(labelled):,} lines (servings × cards × positions × draft tokens); a "
                f"picture shows at most {MAX_LINES}: sweep fewer"
            )
        out: dict[str, list[tuple[int, float]]] = {}
        for label, chunks in labelled.items():
            batches = np.concatenate([b for b, _ in chunks])
            rates = np.concatenate([r for _, r in chunks])
            if len(batches) > MAX_POINTS:
                batches, rates = _thinned(batches, rates)
            out[label] = sorted(zip(batches.tolist(), rates.tolist(), strict=True))
        return out


def sweep_lines(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """The sweep's priced rows as lines (:class:`SweepLines`): a label (``serving on card``, with the position and
    draft tokens when the grid varies them) → (batch, tokens/s) points in batch order. Refused rows are left out
    (they have no price). Raises :class:`InputError` when more than :data:`MAX_LINES` lines would be drawn."""
    gathered = SweepLines()
    for row in rows:
        gathered.add_row(row)
    return gathered.lines()


def sweep_picture(rows: Sequence[Mapping[str, Any]], fmt: str, title: str = "") -> bytes:
    """tokens/s against the batch (log axes), one line a serving on a card (and position, draft tokens), each
    line's best batch marked with a dot and its batch (:func:`draw_sweep` of :func:`sweep_lines`). Raises
    :class:`InputError` when nothing was priced, for too many lines, or when matplotlib is missing."""
    return draw_sweep(sweep_lines(rows), fmt, title)


def sweep_label(label: str, points: Sequence[tuple[int, float]]) -> str:
    """The legend entry of one sweep line (``points``: (batch, tokens/s), at least one): its ``label`` and the
    fastest of the batches the grid priced (the smallest of equals), named as such, since ``best`` searches every
    batch and may find one the grid skips (r1-qwen7b-h200's best is 580; a grid of powers of two stops at 512):
    ``"r1-qwen7b-h200 on h200_sxm_141gb (best of the grid's batches: 512, 33,093 tokens/s)"``."""
    batch, rate = max(points, key=lambda p: (p[1], -p[0]))
    return f"{label} (best of the grid's batches: {batch:,}, {rate:,.0f} tokens/s)"


def draw_sweep(
    lines: Mapping[str, Sequence[tuple[int, float]]],
    fmt: str,
    title: str = "",
    capped: Mapping[str, tuple[tuple[int, float] | None, int | None]] | None = None,
    cap: str = "",
) -> bytes:
    """The sweep picture of ``lines`` (:meth:`SweepLines.lines`) as ``fmt`` bytes. With a TPOT cap (``sweep
    --max-tpot``; ``cap`` its text, ``20 ms``), ``capped`` gives each line's best (batch, tokens/s) within it and its
    last batch within it (:meth:`passprice.sweepcap.BestWithin.capped`; ``None``: no batch within): the dot marks
    that best, and the line is dotted past the cap. Raises :class:`InputError` when there is no line (every row
    refused) or matplotlib is missing."""
    if not lines:
        raise InputError("--plot: every row of the sweep is refused; there is nothing to draw")
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(8.0, 5.0), dpi=100)
    for i, (label, points) in enumerate(lines.items()):
        colour = PALETTE[i % len(PALETTE)]
        batches = [b for b, _ in points]
        rates = [t for _, t in points]
        marker = "." if len(points) < 30 else None
        if capped is None:
            best = max(range(len(points)), key=lambda j: (rates[j], -batches[j]))
            ax.plot(batches, rates, color=colour, linewidth=1.5, marker=marker, label=sweep_label(label, points))
            ax.plot([batches[best]], [rates[best]], marker="o", markersize=8, color=colour, markeredgecolor="black")
            continue
        top, last = capped.get(label, (None, None))
        ax.plot(batches, rates, color=colour, linewidth=1.0, linestyle=":", marker=marker)
        inside = [j for j in range(len(points)) if last is not None and batches[j] <= last]
        said = (f"best batch within TPOT ≤ {cap}: {top[0]:,}: {top[1]:,.0f} tokens/s" if top is not None
                else f"no batch within TPOT ≤ {cap}")
        ax.plot([batches[j] for j in inside], [rates[j] for j in inside], color=colour, linewidth=1.5,
                marker=marker, label=f"{label} ({said})")
        if top is not None:
            ax.plot([top[0]], [top[1]], marker="o", markersize=8, color=colour, markeredgecolor="black")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    log_span(ax, [t for points in lines.values() for _, t in points])  # a flat line an ulp apart drew no axis
    ax.grid(True, which="major", alpha=0.3)
    ax.set_xlabel("batch (sequences per pass)")
    ax.set_ylabel("throughput (tokens/s)")
    default = ("passprice sweep: tokens/s by batch (● the best of the grid's batches)" if capped is None else
               f"passprice sweep: tokens/s by batch (● the best batch within TPOT ≤ {cap}; dotted: over it)")
    ax.set_title(title or default, fontsize=10)
    ax.legend(loc="best", fontsize=7)
    return _save(fig, plt, fmt)


# --- simulate --------------------------------------------------------------------------------------------------------


def throughput_series(records: Sequence[Any], bins: int = 60) -> tuple[list[float], list[float]]:
    """Output tokens a second over the run, in ``bins`` equal bins from 0 to the last token: each request's tokens
    after its first are spread evenly from its first token to its last, its first token counted at its first token.
    Returns (bin midpoints in s, tokens/s). Computed over NumPy arrays, :data:`SERIES_BLOCK` records at a time: the
    overlap of each request's span [first, last] with each bin, ``min((b+1)·w, last) − max(b·w, first)`` where
    positive, at ``(output − 1) / (last − first)`` tokens a second."""
    import numpy as np

    end = max((r.finished for r in records), default=0.0)
    if end <= 0.0:
        return [], []
    width = end / bins
    tokens = np.zeros(bins)
    lows = np.arange(bins) * width
    highs = np.arange(1, bins + 1) * width
    for start in range(0, len(records), SERIES_BLOCK):
        block = records[start:start + SERIES_BLOCK]
        first = np.array([r.first_token for r in block], dtype=float)
        finished = np.array([r.finished for r in block], dtype=float)
        rest = np.array([r.request.output - 1 for r in block], dtype=float)
        np.add.at(tokens, np.minimum((first / width).astype(np.int64), bins - 1), 1.0)
        span = finished - first
        spread = rest > 0
        at_once = spread & (span <= 0.0)  # every further token at the last: counted in its bin
        np.add.at(tokens, np.minimum((finished[at_once] / width).astype(np.int64), bins - 1), rest[at_once])
        spread &= span > 0.0
        first, finished, rate = first[spread], finished[spread], rest[spread] / span[spread]
        overlap = np.minimum(highs, finished[:, None]) - np.maximum(lows, first[:, None])
        tokens += (rate[:, None] * np.where(overlap > 0.0, overlap, 0.0)).sum(axis=0)
    return [(b + 0.5) * width for b in range(bins)], (tokens / width).tolist()


#: Records :func:`throughput_series` spreads over the bins at once (a block × bins array of doubles, 4 MB at 60 bins).
SERIES_BLOCK = 8192

#: Cells across each axis of the data's range that :func:`distinct_points` keeps one point of: a simulate picture's
#: latency panel is under 800 pixels wide and 300 tall at its 100 dpi, so a cell is under a pixel each way (a dot is
#: about 3.4 pixels across).
DOT_CELLS = 1024

#: The most dots (all policies together) a simulate SVG writes as vector marks; past it the dots are drawn as one
#: embedded image at the picture's 100 dpi (matplotlib's ``rasterized``), as a PNG draws them: an SVG writes every
#: mark as text, about 20 µs each, and a trace under 1 MB holds up to about 19,000 requests a policy.
MAX_VECTOR_DOTS = 4000


def distinct_points(xs: Any, ys: Any, cells: int = DOT_CELLS) -> tuple[Any, Any, Any]:
    """The points of (``xs``, ``ys``) a scatter of them can show apart, and how many each stands for: the range of
    each axis is cut into ``cells`` equal cells and one point of each occupied cell is kept — the one at an axis's
    minimum or maximum where the cell holds one (so the axes' limits are those of every point), else the first in
    the order given — in the order given. Every point given lies in the cell of a kept point (within a cell of it).
    Returns (x, y, count) as NumPy arrays (doubles, doubles, int64), the counts summing to the points given; the
    inputs arrays of equal length, finite."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if not len(x):
        return x, y, np.zeros(0, dtype=np.int64)

    def cell(v: Any) -> Any:
        low, span = v.min(), v.max() - v.min()
        if not span > 0.0:
            return np.zeros(len(v), dtype=np.int64)
        return np.minimum(((v - low) * (cells / span)).astype(np.int64), cells - 1)

    cells_of = cell(x) * cells + cell(y)
    occupied, first, counts = np.unique(cells_of, return_index=True, return_counts=True)
    for extreme in (x.argmin(), x.argmax(), y.argmin(), y.argmax()):
        first[np.searchsorted(occupied, cells_of[extreme])] = extreme
    order = np.argsort(first)
    kept = first[order]
    return x[kept], y[kept], counts[order]


#: The opacity of one dot of a simulate picture; ``n`` dots drawn on one spot show as 1 − (1 − it)^n.
DOT_ALPHA = 0.6
#: The most dots on one spot a simulate picture's opacity tells apart: 1 − 0.4^7 is within 1/255 of opaque.
STACKED_DOTS = 7


def simulation_picture(sim: Simulation, fmt: str) -> bytes:
    """Two panels over the trace's time: output tokens a second (:func:`throughput_series`), and each request's
    end-to-end latency at the time it finished (in the order they finished), as dots of opacity :data:`DOT_ALPHA`:
    the requests falling within a pixel of each other are drawn as one dot (:func:`distinct_points`) of the opacity
    of them all drawn on one spot, 1 − (1 − alpha)^n, and in an SVG more than :data:`MAX_VECTOR_DOTS` dots are drawn
    as an embedded image; one colour a policy (static, continuous). Raises :class:`InputError` when matplotlib is
    missing."""
    import numpy as np

    plt = require_matplotlib()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8.0, 6.0), dpi=100)
    dots = []
    for outcome in sim.outcomes:
        finished = np.array([r.finished for r in outcome.records], dtype=float)
        e2e = np.array([r.e2e for r in outcome.records], dtype=float)
        order = np.argsort(finished, kind="stable")
        dots.append(distinct_points(finished[order], e2e[order]))
    rasterized = fmt == "svg" and sum(len(x) for x, _, _ in dots) > MAX_VECTOR_DOTS
    for i, (outcome, (x, y, counts)) in enumerate(zip(sim.outcomes, dots, strict=True)):
        colour = PALETTE[i % len(PALETTE)]
        name = outcome.policy.value
        xs, ys = throughput_series(outcome.records)
        top.plot(xs, ys, color=colour, linewidth=1.5, label=f"{name} (makespan {outcome.makespan:.3g} s)")
        # A dot a cell, of the opacity of its requests drawn on one spot: one scatter an opacity (a single colour
        # draws as matplotlib's markers, placed on whole pixels as a scatter of one colour always was), and dots of
        # one colour composite to the same whatever their order. Past STACKED_DOTS the opacity is within 1/255 of 1.
        stacked = np.minimum(counts, STACKED_DOTS)
        for n in np.unique(stacked).tolist():
            alpha = 1.0 - (1.0 - DOT_ALPHA) ** n
            bottom.scatter(x[stacked == n], y[stacked == n], s=6, color=colour, alpha=alpha, rasterized=rasterized)
        bottom.scatter([], [], s=6, color=colour, alpha=DOT_ALPHA, label=name)  # the legend's dot: one request's
    top.set_ylabel("throughput (output tokens/s)")
    top.grid(True, alpha=0.3)
    top.legend(loc="best", fontsize=8)
    top.set_title(sim.title, fontsize=9)
    bottom.set_ylabel("end-to-end latency (s)")
    bottom.set_xlabel("time since the first arrival (s)")
    bottom.grid(True, alpha=0.3)
    bottom.legend(loc="best", fontsize=8, markerscale=2)
    return _save(fig, plt, fmt)


# --- audit -----------------------------------------------------------------------------------------------------------


def audit_picture(a: Audit, title: str, fmt: str) -> bytes:
    """Each fact's elasticity (% tokens/s per +1 % of the fact) as a horizontal bar, in ``rests_on`` order: the
    binding facts in colour, the others grey, the weakest hatched, each bar labelled with its value and provenance;
    a fact whose elasticity was not measured (both steps refused) is drawn empty and labelled so. Raises
    :class:`InputError` when matplotlib is missing."""
    plt = require_matplotlib()
    rows = list(a.rows)
    fig, ax = plt.subplots(figsize=(8.0, 0.45 * len(rows) + 1.6), dpi=100)
    ys = list(range(len(rows)))[::-1]
    values = [r.elasticity if r.elasticity is not None and math.isfinite(r.elasticity) else 0.0 for r in rows]
    bars = ax.barh(
        ys,
        values,
        color=["#D55E00" if r.binding else "#999999" for r in rows],
        hatch=None,
        edgecolor="black",
        linewidth=0.6,
    )
    for bar, r in zip(bars, rows, strict=True):
        if r.weakest:
            bar.set_hatch("//")
    span = max((abs(v) for v in values), default=1.0) or 1.0
    for y, r, v in zip(ys, rows, values, strict=True):
        text = "not measured" if r.elasticity is None else f"{r.elasticity:+.3f}"
        ax.text(v + (0.02 * span if v >= 0 else -0.02 * span), y, f"{text} ({r.fact.provenance.value})",
                va="center", ha="left" if v >= 0 else "right", fontsize=8)
    ax.set_yticks(ys, [r.path for r in rows], fontsize=8)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(min(min(values), 0.0) - 0.35 * span, max(max(values), 0.0) + 0.6 * span)
    over = "" if a.step == 0.01 else f", measured over {abs(a.step) * 100:.6g} %"  # audit --step (walkthrough 35)
    ax.set_xlabel(f"elasticity: % change of tokens/s for +1 % of the fact{over}")
    ax.set_title(
        f"{title}\n{a.cost.tokens_per_s:,.1f} tokens/s, binds on {a.cost.binds.value} (orange: binding facts; "
        f"hatched: the weakest, {a.cost.provenance.value})",
        fontsize=9,
    )
    ax.grid(True, axis="x", alpha=0.3)
    return _save(fig, plt, fmt)
