"""The closed-form best and largest batch (passprice.batching) equal the seed's scans, field for field.

The seed's scanning algorithms are kept as ``PassShape.best_by_scan`` and ``PassShape.max_batch_by_scan``; this file
prices a matrix of pass shapes and cards — every bind, with and without host memory, with and without drafts, rooms
from 1 to 10^4 — both ways and asserts identical answers (batch, host split, every field, the facts rested on).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passprice import batching
from passprice.facts import Provenance
from passprice.serving import NotResident, OnChipOverflow, PassShape, ServingCost
from synth import card

GB = 1e9


def shape(
    *,
    weights: float = 4 * GB,
    embed: float = 4096,
    read: float = 50e6,
    write: float = 1e5,
    rewrite: float = 0.0,
    array: float = 8e9,
    vector: float = 4e8,
    scale: float = 3e7,
    shared: float = 4.5 * GB,
    per_sequence: float = 100e6,
    on_chip: float = 40_000,
    emitted: float = 1.0,
    rows: int = 1,
) -> PassShape:
    """A pass shape with chosen coefficients (bytes, multiply-adds and cycles per pass or per sequence)."""
    return PassShape(
        rows_per_sequence=rows,
        emitted_per_sequence=emitted,
        weight_bytes=weights,
        embed_bytes=embed,
        read_bytes=read,
        write_bytes=write,
        rewrite_bytes=rewrite,
        array_macs=array,
        vector_macs=vector,
        scale_cycles=scale,
        held_shared=shared,
        held_per_sequence=per_sequence,
        on_chip_per_sequence=on_chip,
        provenance=Provenance.PUBLISHED,
    )


def same(a: ServingCost, b: ServingCost) -> None:
    assert a == b
    assert [p for p, _ in a.rests_on] == [p for p, _ in b.rests_on]


def both(sh: PassShape, c: object, host: bool) -> ServingCost:
    """Price the best batch both ways, assert they agree, return it."""
    fast = sh.best(c, host)  # type: ignore[arg-type]
    scan = sh.best_by_scan(c, host)  # type: ignore[arg-type]
    same(fast, scan)
    assert sh.max_batch(c, host) == sh.max_batch_by_scan(c, host)  # type: ignore[arg-type]
    return fast


# Cards that make each term bind (figures in base units: B, B/s, MAC/s, cycle/s).
# With the default shape the weights take 1.33 ms and a sequence 17 µs of memory; the compute cards give each
# sequence 30 µs of arithmetic, so the pass turns compute-bound near batch 100.
MEMORY = {"memory_bandwidth": 3e12}
ARRAY = {"memory_bandwidth": 3e12, "array": 8e9 / 30e-6}
VECTOR = {"memory_bandwidth": 3e12, "vector": 4e8 / 30e-6}
SCALE = {"memory_bandwidth": 3e12, "scale": 3e7 / 30e-6}


def room_card(room: int, per_sequence: float = 100e6, shared: float = 4.5 * GB, **values: float) -> dict[str, float]:
    """Card figures whose memory holds exactly ``room`` sequences beside ``shared`` bytes."""
    return {"memory_capacity": shared + room * per_sequence + per_sequence / 2, **values}


@pytest.mark.parametrize("room", [1, 2, 3, 7, 10, 100, 1000, 10_000])
@pytest.mark.parametrize("bind", ["memory", "array", "vector", "scale"])
@pytest.mark.parametrize("drafts", [False, True])
def test_best_equals_scan_without_host(room: int, bind: str, drafts: bool) -> None:
    figures = {"memory": MEMORY, "array": ARRAY, "vector": VECTOR, "scale": SCALE}[bind]
    kw = {"emitted": 2.4875, "rows": 4, "array": 32e9, "vector": 1.6e9, "scale": 1.2e8} if drafts else {}
    sh = shape(**kw)  # type: ignore[arg-type]
    c = card(**room_card(room, **figures), on_chip_capacity=1e12)
    best = both(sh, c, False)
    assert 1 <= best.batch <= room
    if best.binds.value == "memory":
        # Memory-bound tokens/s rises with the batch: a memory-bound best is the largest batch that fits.
        assert best.batch == room


@pytest.mark.parametrize(
    ("room", "host_room"),
    [(r, h) for r in (1, 5, 50, 500) for h in (0, 1, 4, 30)] + [(10_000, 0), (10_000, 3)],
)
@pytest.mark.parametrize("link", [1e9, 64e9, 1e12])
def test_best_equals_scan_with_host(room: int, host_room: int, link: float) -> None:
    # (The scan prices every batch with a split search: 10^4 batches only with a small host room, to stay fast.)
    per = 100e6
    sh = shape(per_sequence=per)
    c = card(
        host=True,
        **room_card(room, per_sequence=per, **MEMORY),
        host_capacity=host_room * per + per / 2,
        host_read=link,
        host_write=link,
        on_chip_capacity=1e12,
    )
    best = both(sh, c, True)
    assert best.batch <= room + host_room


@pytest.mark.parametrize("bind", ["array", "vector", "scale"])
def test_compute_bound_plateau_goes_to_the_first_batch_of_the_plateau(bind: str) -> None:
    # Past the crossover every batch gives the same tokens/s (to rounding): the scan keeps the first.
    figures = {"array": ARRAY, "vector": VECTOR, "scale": SCALE}[bind]
    sh = shape()
    c = card(**room_card(5000, **figures), on_chip_capacity=1e12)
    best = both(sh, c, False)
    assert best.binds.value == bind
    # The batch before it is still memory-bound.
    before = sh.cost_split(c, best.batch - 1, False)
    assert before.binds.value == "memory"


def test_on_chip_limit_stops_the_search_where_the_scan_stops() -> None:
    sh = shape(on_chip=1e6)
    c = card(**room_card(10_000, **MEMORY), on_chip_capacity=2.5e9)
    best = both(sh, c, False)
    assert best.batch == 2500
    with pytest.raises(OnChipOverflow):
        sh.cost_split(c, 2501, False)


def test_nothing_fits_raises_batch_ones_refusal_both_ways() -> None:
    sh = shape()
    c = card(memory_capacity=4 * GB)
    with pytest.raises(NotResident):
        sh.best(c, False)
    with pytest.raises(NotResident):
        sh.best_by_scan(c, False)
    with pytest.raises(NotResident):
        sh.max_batch(c, False)


def test_registered_servings_equal_the_scan() -> None:
    # The real checkpoints on real cards, with and without host memory (rooms in the thousands).
    from passprice.cards import load_card
    from passprice.checkpoints import load_checkpoint
    from passprice.registry import find_root
    from passprice.serving import ContextMix, Serving, pass_shape

    root = find_root()
    for card_name, checkpoint, limit, host in itertools.product(
        ["h200_sxm_141gb", "ws1_hypothetical"],
        ["deepseek-r1-distill-qwen-7b-q4_k_m", "gemma3-270m-q4_k_m"],
        [4096, 32768],
        [False, True],
    ):
        if host and (limit == 4096 or checkpoint.startswith("gemma3")):
            continue  # thousands of batches x a split search each: seconds for the scan (the matrix above covers it)
        c = load_card(root, card_name)
        sh = pass_shape(load_checkpoint(root, checkpoint), Serving(contexts=ContextMix.uniform(limit / 2, limit)))
        both(sh, c, host)


@settings(max_examples=60, deadline=None)
@given(
    room=st.integers(1, 300),
    host_room=st.integers(0, 40),
    weights=st.floats(1e6, 1e11),
    per=st.floats(1e3, 1e9),
    read_share=st.floats(0.0, 1.0),
    compute=st.floats(1e6, 1e12),
    emitted=st.floats(1.0, 4.0),
    link=st.floats(1e8, 1e13),
    host=st.booleans(),
)
def test_best_equals_scan_on_random_shapes(
    room: int,
    host_room: int,
    weights: float,
    per: float,
    read_share: float,
    compute: float,
    emitted: float,
    link: float,
    host: bool,
) -> None:
    sh = shape(
        weights=weights,
        read=per * read_share,
        write=per * (1 - read_share) / 100,
        array=compute,
        vector=compute / 10,
        scale=compute / 100,
        shared=weights,
        per_sequence=per,
        emitted=emitted,
    )
    figures = room_card(room, per_sequence=per, shared=weights, memory_bandwidth=2e12)
    if host:
        c = card(host=True, **figures, host_capacity=host_room * per + per / 2, host_read=link, host_write=link)
    else:
        c = card(**figures)
    both(sh, c, host)


def test_the_search_prices_few_batches() -> None:
    # The point of the closed form: on a room of 10^4 it prices a handful of batches, not ten thousand.
    sh = shape()
    c = card(**room_card(10_000, **MEMORY), on_chip_capacity=1e12)
    curve = batching._Curve(sh, c, False)
    top = batching._last_fitting(sh, c, False, sh.most(c, False))
    assert top == 10_000
    assert batching._best_batch(curve, top) == 10_000
    assert len(curve.priced) < 50
