"""Round 27's trial (issue 16): a sweep's JSON text for a group of rows laid out at the byte level with NumPy, kept
here as the measurement's record, not in ``passprice``: it measured slower than the text ``passprice sweep`` makes
(``docs/PERFORMANCE.md``, round 27), so no later round needs to build it again to learn that.

:func:`passprice.sweep._group_text` makes a group's JSON as a list of ``bytes`` pieces, about seven a row, joined once
in C: most of its cost is a Python object a float cell (cut from orjson's text by ``bytes.split``) and a list item a
piece. :func:`json_group_bytes` makes the same bytes without an object a cell: every text the group needs is put once
into one *pool* of bytes (orjson's text of the varying float columns, of the batches, of the host sequences and of
the byte counts, and each fixed text: keys, openings, ends), each row is described as :data:`WIDTH` runs ``(offset
in the pool, length)`` (a fixed key text's run is the same for every row: broadcast; a cell's comes from
``np.flatnonzero`` on the commas of orjson's text), and the group's bytes are one gather from the pool along an index
built by ``cumsum`` of steps (1 inside a run, a jump at each run's first byte) in reused buffers (:class:`Buffers`:
their size is the largest group's text, a few MB, never the grid's). Its cost is a few NumPy passes a byte of
output (the index's fill, its ``cumsum``, the gather: 19 to 24 instructions a byte more than the join on the
bench grid) where the pieces' join copies each piece with ``memcpy``: more than the pieces' whole cost (about 7
instructions a byte).

``python benchmarks/layout27.py`` prices the bench grid once, then makes its JSON text both ways, alternated, and
prints each run's CPU seconds and the text's sha256 (the same bytes, or it exits 1). ``tests/test_perf_27.py`` holds
the bytes equal to ``passprice``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from passprice.floattext import _json

if TYPE_CHECKING:  # pragma: no cover
    from passprice.sweep import Segment, _Texts

_COMMA = ord(",")

#: The gather's index type: ``int32`` (the group's text is a few MB). Round 27's A/B (250,415 rows priced and made
#: JSON in process): the join 3,684 M instructions, this layout 6,696 M with ``int32`` and ``take``'s default mode,
#: 6,127 M with ``int64`` and ``mode="wrap"`` (NumPy's ``cumsum`` of ``int32`` accumulates in ``int64``, casting in
#: and out; ``take`` with ``out=`` buffers its output in the default mode).
INDEX = np.dtype(np.int32)

#: Runs a row is described by: its opening, batch, the host sequences' key and cell, the nine float columns' keys
#: and cells (the bind's key and value before the held bytes' key), its end. A refused row uses three of them.
WIDTH = 23


class Buffers:
    """The reused buffers of a sweep's layout: the gather's index (``int32``) and its output (``uint8``), each grown
    to the largest group's text (bytes) and never shrunk: their memory is bounded by :data:`~passprice.sweep.
    GROUP_ROWS` rows' text, not by the grid. ``nbytes``: both buffers' bytes together."""

    def __init__(self) -> None:
        self.index = np.empty(0, dtype=INDEX)
        self.out = np.empty(0, dtype=np.uint8)

    def take(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Views of ``size`` elements of the index and of the output, growing both (by at least half) when needed."""
        if size > len(self.index):
            grown = max(size, len(self.index) * 3 // 2)
            self.index = np.empty(grown, dtype=INDEX)
            self.out = np.empty(grown, dtype=np.uint8)
        return self.index[:size], self.out[:size]

    @property
    def nbytes(self) -> int:
        """Bytes held by the two buffers."""
        return int(self.index.nbytes + self.out.nbytes)


class _Pool:
    """Texts gathered into one pool: :meth:`add` returns a text's offset."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, text: bytes) -> int:
        offset = self.size
        self.parts.append(text)
        self.size += len(text)
        return offset

    def add_cells(self, text: bytes | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add orjson's text of a 1-D array (``[a,b,…]``); the offsets and lengths of its cells."""
        raw = text.tobytes() if isinstance(text, np.ndarray) else text
        base = self.add(raw)
        view = np.frombuffer(raw, dtype=np.uint8)
        ends = np.flatnonzero(view == _COMMA)
        stops = np.empty(len(ends) + 1, dtype=np.int64)
        stops[:-1] = ends
        stops[-1] = len(raw) - 1
        starts = np.empty_like(stops)
        starts[0] = 1
        starts[1:] = stops[:-1] + 1
        return starts + base, stops - starts


def _ints(values: np.ndarray) -> bytes:
    import orjson

    return orjson.dumps(np.ascontiguousarray(values, dtype=np.int64), option=orjson.OPT_SERIALIZE_NUMPY)  # type: ignore[no-any-return]


def json_group_bytes(segments: Sequence[Segment], kept: _Texts, buffers: Buffers) -> bytes | None:
    """The JSON text of ``segments`` exactly as :func:`passprice.sweep._group_text` makes it (``cap`` ``None``),
    laid out at the byte level (this module's docstring). ``None`` where this layout does not apply and the caller
    makes the text its own way: a row priced alone, a float that is not finite, a byte count that is not a whole
    number below 2^53."""
    from passprice.sweep import (
        _FLOATS,
        _HELD,
        _JSON_BINDS,
        _JSON_KEYS,
        _PRICED,
        _TERM_COLUMNS,
        _chosen,
        whole,
    )

    if any(segment.alone for segment in segments):
        return None
    pool = _Pool()
    floats: list[np.ndarray] = []
    binds: list[np.ndarray] = []
    hosts: list[np.ndarray] = []
    counts = np.array([len(s.status) for s in segments], dtype=np.int64)
    rows = int(counts.sum())
    status = np.concatenate([s.status for s in segments])
    priced = status == _PRICED
    open_off, open_len, end_off, end_len = [], [], [], []
    refused_off: list[int] = []
    refused_len: list[int] = []
    refused_base = []
    for segment in segments:
        start, shown = kept.json_opening(segment)
        open_off.append(pool.add(start))
        open_len.append(len(start))
        for used in (0, 1):
            end = b', "provenance": ' + shown[used] + b', "weakest": ' + shown[2 + used] + b', "refusal": null}'
            end_off.append(pool.add(end))
            end_len.append(len(end))
        refused_base.append(len(refused_off))
        for name in segment.names:
            text = kept.json_refused(name)
            refused_off.append(pool.add(text))
            refused_len.append(len(text))
        p = segment.priced
        mask = segment.status == _PRICED
        count = int(np.count_nonzero(mask))
        if p is None or not count:
            continue
        chosen = _chosen(mask, count)
        floats.append(np.stack([p[key][chosen] for key in _FLOATS], axis=1))
        binds.append(p["binds"][chosen])
        hosts.append(p["host_sequences"][chosen])
    seg = np.repeat(np.arange(len(segments)), counts)
    src = np.zeros((rows, WIDTH), dtype=np.int64)
    length = np.zeros((rows, WIDTH), dtype=np.int64)
    src[:, 0] = np.array(open_off, dtype=np.int64)[seg]
    length[:, 0] = np.array(open_len, dtype=np.int64)[seg]
    src[:, 1], length[:, 1] = pool.add_cells(_ints(np.concatenate([s.batches for s in segments])))
    refused = ~priced
    if refused.any():
        which = np.array(refused_base, dtype=np.int64)[seg[refused]] + status[refused] - 1
        src[refused, 2] = np.array(refused_off, dtype=np.int64)[which]
        length[refused, 2] = np.array(refused_len, dtype=np.int64)[which]
    if floats:
        every = np.concatenate(floats) if len(floats) > 1 else floats[0]
        if not np.isfinite(every).all():
            return None
        bind = np.concatenate(binds).astype(np.int64)
        host = np.concatenate(hosts)
        n = len(every)
        table_src = np.empty((n, WIDTH - 2), dtype=np.int64)
        table_len = np.empty((n, WIDTH - 2), dtype=np.int64)
        key = b', "host_sequences": '
        table_src[:, 0], table_len[:, 0] = pool.add(key), len(key)
        table_src[:, 1], table_len[:, 1] = pool.add_cells(_ints(host))
        same = (every == every[0]).all(axis=0)
        pass_column = _FLOATS.index("pass_s")
        borrow = -1
        if not same[pass_column] and bool((bind == bind[0]).all()):
            term = _TERM_COLUMNS[int(bind[0])]
            if np.array_equal(every[:, term], every[:, pass_column]):
                borrow = term
        counted = [_FLOATS.index(k) for k in ("held_bytes", "capacity_bytes")]
        varying = [j for j in range(len(_FLOATS)) if not same[j] and j != (pass_column if borrow >= 0 else -1)
                   and j not in counted]
        cells: dict[int, tuple[Any, Any]] = {}
        if varying:
            starts, lens = pool.add_cells(_json(np.ascontiguousarray(every[:, varying]).ravel()))
            for k, j in enumerate(varying):
                cells[j] = starts[k :: len(varying)], lens[k :: len(varying)]
        for j in range(len(_FLOATS)):
            if j in counted and not same[j]:
                values = every[:, j]
                if not ((np.abs(values) < 2**53).all() and (values == np.floor(values)).all()):
                    return None
                cells[j] = pool.add_cells(_ints(values.astype(np.int64)))
            elif same[j]:
                v = float(every[0, j])
                text = (str(whole(v)) if j in counted else repr(v)).encode("ascii")
                cells[j] = pool.add(text), len(text)
        if borrow >= 0:
            cells[pass_column] = cells[borrow]
        for j in range(len(_FLOATS)):
            c = 2 + 2 * j
            if j == _HELD:
                texts = [b + _JSON_KEYS[j] for b in _JSON_BINDS]
                offsets = np.array([pool.add(t) for t in texts], dtype=np.int64)
                table_src[:, c] = offsets[bind]
                table_len[:, c] = np.array([len(t) for t in texts], dtype=np.int64)[bind]
            else:
                table_src[:, c], table_len[:, c] = pool.add(_JSON_KEYS[j]), len(_JSON_KEYS[j])
            table_src[:, c + 1], table_len[:, c + 1] = cells[j]
        ends = 2 * seg[priced] + (host > 0)
        table_src[:, -1] = np.array(end_off, dtype=np.int64)[ends]
        table_len[:, -1] = np.array(end_len, dtype=np.int64)[ends]
        src[priced, 2:] = table_src
        length[priced, 2:] = table_len
    return _gather(pool, src.ravel(), length.ravel(), buffers)


def _gather(pool: _Pool, src: np.ndarray, length: np.ndarray, buffers: Buffers) -> bytes:
    """The bytes of the runs ``src`` (offsets in the pool) and ``length``, in order, as one ``bytes``: the index of
    each output byte is a ``cumsum`` of steps (1, and at each non-empty run's first byte the jump from the end of
    the run before), then one gather from the pool."""
    keep = length > 0
    src, length = src[keep], length[keep]
    total = int(length.sum())
    index, out = buffers.take(total)
    index.fill(1)
    starts = np.cumsum(length) - length
    jumps = np.empty(len(src), dtype=np.int64)
    jumps[0] = src[0]
    jumps[1:] = src[1:] - (src[:-1] + length[:-1]) + 1
    index[starts] = jumps
    data = np.frombuffer(b"".join(pool.parts), dtype=np.uint8)
    np.cumsum(index, out=index)
    np.take(data, index, out=out, mode="wrap")  # every index lies in the pool: no bounds check
    return out.tobytes()


def group_text(
    segments: Sequence[Segment], fmt: str, kept: _Texts, cap: float | None = None, apart: bool = False
) -> str | bytes | list[bytes] | None:
    """A stand-in for :func:`passprice.sweep._group_text`: JSON groups without a TPOT cap laid out here
    (:func:`json_group_bytes`, with buffers kept on ``kept``; one text, whatever ``apart``), anything else, or a
    group this layout leaves, made by the original. Put in its place (``monkeypatch``, :func:`main`),
    ``passprice.sweep.text_chunks`` writes the grid through it."""
    from passprice import sweep

    if fmt == "json" and cap is None and sweep.fast():
        buffers = getattr(kept, "layout27", None)
        if buffers is None:
            buffers = Buffers()
            kept.layout27 = buffers  # type: ignore[attr-defined]
        laid = json_group_bytes(segments, kept, buffers)
        if laid is not None:
            return laid
    return _ORIGINAL(segments, fmt, kept, cap, apart)  # type: ignore[no-any-return]


def _original() -> Any:
    from passprice import sweep

    return sweep._group_text


_ORIGINAL = _original()


def main() -> int:
    """Price the bench grid (``benchmarks/bench.py``'s: every registered serving and card, five positions, batches
    to 10^6 points) once, then make its JSON text with the pieces' join and with this layout, alternated for three
    rounds; print each run's CPU seconds and sha256. Exit 1 if the texts differ."""
    import hashlib
    import time
    from pathlib import Path

    from passprice import sweep
    from passprice.registry import find_root

    root = find_root(Path(__file__).resolve().parent.parent)
    servings, cards = root.names(root.servings), root.names(root.cards)
    positions = (256.0, 1024.0, 2048.0, 4096.0, 8192.0)
    batches = -(-(10**6) // (len(servings) * len(cards) * len(positions)))
    grid = sweep.Grid(tuple(servings), tuple(range(1, batches + 1)), tuple(cards), positions)
    with np.errstate(all="ignore"):
        segments = list(sweep.Sweeper(root, max_rows=sweep.MAX_ROWS).segments(grid))
    digests = set()
    for _ in range(3):
        for name, made in (("joined", _ORIGINAL), ("laid out", group_text)):
            sweep._group_text = made
            digest, size = hashlib.sha256(), 0
            started = time.process_time()
            for chunk in sweep.text_chunks(iter(segments), "json", binary=True):
                assert isinstance(chunk, bytes)
                digest.update(chunk)
                size += len(chunk)
            spent = time.process_time() - started
            digests.add(digest.hexdigest())
            print(f"{name:>9}: {spent:.3f} s CPU (text and sha256), {size:,} bytes, sha256 {digest.hexdigest()[:16]}")
    sweep._group_text = _ORIGINAL
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
