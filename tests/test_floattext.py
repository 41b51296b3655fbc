"""A whole array's float texts are ``repr``'s, character for character: on random bit patterns, at every decade's
edges, below 10^-4 (where ``repr``'s exponent layout differs from orjson's), for integers, and without orjson."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passprice import floattext
from passprice.floattext import (
    float_cells_bytes,
    float_reprs,
    float_reprs_bytes,
    float_rows,
    float_rows_bytes,
    float_rows_keyed_bytes,
    int_texts,
    int_texts_bytes,
)


@pytest.fixture
def without_orjson(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(floattext, "_orjson", None)
    floattext.fast.cache_clear()
    yield
    floattext.fast.cache_clear()


def _edges() -> np.ndarray:
    """Three doubles either side of every power of ten a double holds, both signs, and the extremes."""
    out = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 2.0**53, 2.0**53 + 2, 2.0**63]
    for k in range(-323, 309):
        x = float(f"1e{k}")
        below = above = x
        out.append(x)
        for _ in range(3):
            below, above = float(np.nextafter(below, -np.inf)), float(np.nextafter(above, np.inf))
            out += [below, above]
    values = np.array(out)
    return np.concatenate([values, -values])


def test_random_bit_patterns_are_written_as_repr() -> None:
    rng = np.random.default_rng(16)
    values = rng.integers(0, 2**64, 100_000, dtype=np.uint64).view(np.float64)
    values = values[np.isfinite(values)]
    assert floattext.fast()  # orjson is a dependency: the fast path is what is tested here
    assert float_reprs(values) == list(map(repr, values.tolist()))


def test_values_in_every_decade_a_sweep_writes_are_written_as_repr() -> None:
    # Seconds, rates and byte counts: uniform within decades from 10^-12 to 10^12, where repr's layout changes at
    # 10^-4 (an exponent of two digits) and 10^16 (an exponent).
    rng = np.random.default_rng(17)
    values = rng.random(100_000) * 10.0 ** rng.integers(-12, 18, 100_000)
    texts = float_reprs(values)
    assert texts == list(map(repr, values.tolist()))
    assert {"e-0" in t for t in texts} == {True, False}  # both layouts below 10^-4 and above it were written


def test_every_decades_edges_are_written_as_repr() -> None:
    values = _edges()
    assert float_reprs(values) == list(map(repr, values.tolist()))


def test_small_values_are_repr_with_a_two_digit_exponent() -> None:
    values = np.array([4.4e-05, 1e-05, 9.999999999999999e-05, 1.5e-07, 3e-300, 0.0001, 0.00012345, 1.0, 2.0, 3.0])
    assert float_reprs(values) == [
        "4.4e-05", "1e-05", "9.999999999999999e-05", "1.5e-07", "3e-300", "0.0001", "0.00012345", "1.0", "2.0", "3.0"
    ]


def test_rows_are_their_floats_reprs_joined_by_commas() -> None:
    rng = np.random.default_rng(19)
    values = (rng.random((3_000, 7)) * 10.0 ** rng.integers(-10, 18, (3_000, 7))) * rng.choice([-1.0, 1.0], (3_000, 7))
    values[5] = [0.0, -0.0, 1e-05, 4e-05, 1.5e-07, 1e16, 2607997440.0]  # each layout in one row
    expected = [",".join(map(repr, row)) for row in values.tolist()]
    assert float_rows(values) == expected
    assert float_rows_bytes(values) == [line.encode() for line in expected]  # cut from orjson's bytes (speed54)
    assert float_rows(values[:1, :3]) == [expected[0].rsplit(",", 4)[0]]  # fewer values than FEW: repr's own
    assert float_rows_bytes(values[:1, :3]) == [expected[0].rsplit(",", 4)[0].encode()]
    assert float_rows_bytes(values[:2]) == [line.encode() for line in expected[:2]]  # "[[" and "]]" cut off
    with pytest.raises(ValueError, match=r"float_rows: a 2-D array, not shape \(3,\)"):
        float_rows(np.zeros(3))



def _keyed(rows: np.ndarray, between: list[bytes]) -> list[bytes]:
    """The definition of :func:`float_rows_keyed_bytes`: each row's reprs with ``between`` between them."""
    ends = [*between, b""]
    return [b"".join(repr(v).encode() + sep for v, sep in zip(row, ends, strict=True)) for row in rows.tolist()]


def _keys(k: int) -> list[bytes]:
    return [b', "key_%d": ' % j for j in range(1, k)]


def test_keyed_rows_are_their_floats_reprs_with_the_keys_between() -> None:
    # A sweep's JSON row's run of floats (sweepjson100): each row one text, each float after its key; every layout
    # in one row (0, a negative zero, 10^-5 and 4 × 10^-5 that orjson writes 0.0000D, a one-digit exponent, 10^16).
    rng = np.random.default_rng(23)
    values = (rng.random((3_000, 7)) * 10.0 ** rng.integers(-10, 18, (3_000, 7))) * rng.choice([-1.0, 1.0], (3_000, 7))
    values[5] = [0.0, -0.0, 1e-05, 4e-05, 1.5e-07, 1e16, 2607997440.0]
    between = [b', "pass_s": ', b', "memory_s": ', b', "host_s": 0.0, "array_s": ', b', "vector_s": ', b", ", b":"]
    assert float_rows_keyed_bytes(values, between) == _keyed(values, between)
    assert float_rows_keyed_bytes(values[5:6], between)[0] == (
        b'0.0, "pass_s": -0.0, "memory_s": 1e-05, "host_s": 0.0, "array_s": 4e-05, "vector_s": 1.5e-07, 1e+16:'
        b"2607997440.0"
    )
    positive = np.abs(values)  # no sign bit: the small values written over stand-ins (floattext._json_commas)
    assert float_rows_keyed_bytes(positive, between) == _keyed(positive, between)
    assert float_rows_keyed_bytes(values[:, :1], []) == [repr(v).encode() for v in values[:, 0].tolist()]
    assert float_rows_keyed_bytes(values[:1, :3], between[:2]) == _keyed(values[:1, :3], between[:2])  # fewer than FEW
    assert float_rows_keyed_bytes(np.zeros((0, 3)), between[:2]) == []


def test_one_search_finds_the_commas_and_puts_the_small_values_in_place() -> None:
    # The values below 10^-4 written over their stand-ins at the offsets the commas give: the first value, two in a
    # row and the last one small, each of another layout (0.0000D… in orjson's text, a one-digit exponent, 1e-05).
    values = np.array([4.4e-05, 1.5, 1e-05, 2.5e-07, 1e-06])
    text, commas = floattext._json_commas(values)
    assert bytes(text) == b"[4.4e-05,1.5,1e-05,2.5e-07,1e-06]"
    assert commas.tolist() == [8, 12, 18, 26]  # counted by hand: "[" at 0, "4.4e-05" at 1 to 7, …
    # A sign bit anywhere: no stand-ins (a negative value's text has its own "-"), the same text.
    text, commas = floattext._json_commas(-values)
    assert bytes(text) == b"[-4.4e-05,-1.5,-1e-05,-2.5e-07,-1e-06]"
    assert commas.tolist() == [9, 14, 21, 30]
    rows = values[[0, 2, 3, 4, 1, 0, 3, 4, 2, 4]].reshape(5, 2)  # small at the start and the end of the text
    assert float_rows_keyed_bytes(rows, [b', "k": ']) == _keyed(rows, [b', "k": '])
    assert float_rows_keyed_bytes(rows, [b', "k": '])[0] == b'4.4e-05, "k": 1e-05'


def test_keyed_rows_of_any_width_and_values_are_repr() -> None:
    rng = np.random.default_rng(24)
    for k in range(1, 12):
        bits = rng.integers(0, 2**64, (200, k), dtype=np.uint64).view(np.float64)
        values = np.where(np.isfinite(bits), bits, 1.0)
        assert float_rows_keyed_bytes(values, _keys(k)) == _keyed(values, _keys(k))
        sweepish = rng.random((500, k)) * 10.0 ** rng.integers(-9, 13, (500, k))  # seconds, rates, bytes
        assert float_rows_keyed_bytes(sweepish, _keys(k)) == _keyed(sweepish, _keys(k))


def test_keyed_rows_whose_text_between_holds_a_marker_byte_are_written_by_repr() -> None:
    # The markers are bytes 1 to 31: a text between holding one would be replaced again; such texts take repr's way.
    values = np.arange(1.0, 41.0).reshape(10, 4)
    between = [b"\x01", b"\x02\x03", b"\x1f"]
    assert float_rows_keyed_bytes(values, between) == _keyed(values, between)


def test_keyed_rows_refuse_a_wrong_shape_or_count_of_texts() -> None:
    with pytest.raises(ValueError, match=r"float_rows_keyed_bytes: a 2-D array, not shape \(3,\)"):
        float_rows_keyed_bytes(np.zeros(3), [])
    with pytest.raises(ValueError, match=r"float_rows_keyed_bytes: 2 texts between 3 columns, not 1"):
        float_rows_keyed_bytes(np.zeros((4, 3)), [b", "])


def test_without_orjson_keyed_rows_are_repr(without_orjson: None) -> None:
    values = _edges()[:1_200].reshape(-1, 6)
    assert float_rows_keyed_bytes(values, _keys(6)) == _keyed(values, _keys(6))

#: Finite doubles, most of them below 10^-4 (where repr's layout and orjson's differ and the rows' texts are cut
#: and put back together) and the rest anywhere.
_SMALL_OR_ANY = st.one_of(
    st.floats(min_value=-1e-4, max_value=1e-4, allow_nan=False, allow_infinity=False, allow_subnormal=True),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_SMALL_OR_ANY, min_size=9, max_size=60), st.integers(1, 4))
def test_rows_with_values_below_1e4_are_repr_whatever_the_values(values: list[float], width: int) -> None:
    # float_rows cuts orjson's text of the rows at "],[" and at the nulls put where the small values go; each row's
    # text, with and without a leading comma, is repr's.
    rows = np.array(values[: len(values) // width * width]).reshape(-1, width)
    expected = [",".join(map(repr, row)) for row in rows.tolist()]
    assert float_rows(rows) == expected
    assert float_rows(rows, ",") == ["," + line for line in expected]
    assert float_rows_bytes(rows) == [line.encode() for line in expected]
    assert float_rows_keyed_bytes(rows, _keys(width)) == _keyed(rows, _keys(width))
    assert float_reprs(np.array(values)) == list(map(repr, values))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(min_value=0.0, max_value=1e-4, allow_nan=False, allow_subnormal=True),
            st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
            st.sampled_from([1e-05, 9.999999999999999e-05, 1.5e-07, 5e-324, 1.2345678901234567e-100, 0.0001]),
        ),
        min_size=9,
        max_size=60,
    )
)
def test_positive_rows_with_small_values_are_patched_in_place_as_repr(values: list[float]) -> None:
    # Without a sign bit anywhere, each value below 10^-4 is written as a stand-in of its repr's length (a negative
    # double: the only "-" of orjson's text) and overwritten by its repr in place; the text is repr's.
    rows = np.array(values).reshape(-1, 1)
    small = (np.abs(rows) < floattext.SMALL) & (rows != 0.0)
    stand_ins = floattext._stand_ins()
    assert stand_ins is not None
    if small.any():
        patched = floattext._patched(rows, small, stand_ins)
        assert patched is not None
        assert bytes(patched).decode()[1:-1].replace("[", "").replace("]", "").split(",") == list(map(repr, values))
    assert float_rows(rows) == list(map(repr, values))
    assert float_rows_bytes(rows) == [repr(v).encode() for v in values]
    pairs = np.array(values[: len(values) // 2 * 2]).reshape(-1, 2)
    assert float_rows_keyed_bytes(pairs, _keys(2)) == _keyed(pairs, _keys(2))
    assert float_reprs(np.array(values)) == list(map(repr, values))


def test_stand_ins_are_written_at_their_length() -> None:
    stand_ins = floattext._stand_ins()
    assert stand_ins is not None
    for length in range(5, floattext._LONGEST + 1):
        assert stand_ins[length] < 0
        assert len(repr(float(stand_ins[length]))) == length


def test_without_orjson_rows_are_repr(without_orjson: None) -> None:
    values = _edges()[:1_200].reshape(-1, 6)
    assert float_rows(values) == [",".join(map(repr, row)) for row in values.tolist()]
    assert float_rows_bytes(values) == [",".join(map(repr, row)).encode() for row in values.tolist()]


def test_integers_are_written_as_str() -> None:
    rng = np.random.default_rng(18)
    values = np.concatenate([rng.integers(-(2**63), 2**63 - 1, 10_000), [0, -1, 2**63 - 1, -(2**63)]])
    assert int_texts(values) == list(map(str, values.tolist()))


def test_without_orjson_every_text_is_repr(without_orjson: None) -> None:
    values = _edges()
    assert not floattext.fast()
    assert float_reprs(values) == list(map(repr, values.tolist()))
    assert int_texts(np.arange(-20, 20)) == [str(i) for i in range(-20, 20)]


def test_an_orjson_that_writes_otherwise_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    class Other:
        OPT_SERIALIZE_NUMPY = 0

        @staticmethod
        def dumps(values: Any, option: int = 0) -> bytes:  # writes 1e+16 as 1e16, as some JSON writers do
            return ("[" + ",".join(repr(v).replace("e+", "e") for v in values.tolist()) + "]").encode()

    monkeypatch.setattr(floattext, "_orjson", Other)
    floattext.fast.cache_clear()
    try:
        assert not floattext.fast()
        values = np.array([1e16, 2e16, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5])
        assert float_reprs(values)[:2] == ["1e+16", "2e+16"]
    finally:
        floattext.fast.cache_clear()


def test_an_array_that_is_not_one_dimensional_is_refused() -> None:
    with pytest.raises(ValueError, match=r"float_reprs: a 1-D array, not shape \(2, 2\)"):
        float_reprs(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"int_texts: a 1-D array, not shape \(2, 2\)"):
        int_texts(np.zeros((2, 2), dtype=np.int64))


def test_bytes_texts_are_reprs_encoded() -> None:
    """A sweep's JSON is made as bytes (issue 16): the bytes texts are ``repr``'s and ``str``'s, encoded, on random
    bit patterns, every decade's edges (below 10^-4 too: patched in place when no sign bit is set, cut at nulls
    otherwise), and integers."""
    rng = np.random.default_rng(19)
    values = rng.integers(0, 2**64, 50_000, dtype=np.uint64).view(np.float64)
    values = np.concatenate([values[np.isfinite(values)], _edges()])
    positive = np.abs(values)
    for made in (values, positive):
        expected = [repr(v).encode() for v in made.tolist()]
        assert float_reprs_bytes(made) == expected
        assert float_cells_bytes(made[: len(made) // 4 * 4].reshape(-1, 4)) == expected[: len(made) // 4 * 4]
    assert float_reprs_bytes(np.array([4.4e-05, 1.5e-07, 0.5])) == [b"4.4e-05", b"1.5e-07", b"0.5"]  # fewer than FEW
    assert float_reprs_bytes(np.array([4.4e-05, 1.5e-07, 0.5] * 4))[:3] == [b"4.4e-05", b"1.5e-07", b"0.5"]
    integers = np.concatenate([rng.integers(-(2**63), 2**63 - 1, 10_000), [0, -1, 2**63 - 1, -(2**63)]])
    assert int_texts_bytes(integers) == [str(i).encode() for i in integers.tolist()]


def test_without_orjson_bytes_texts_are_reprs_encoded(without_orjson: None) -> None:
    values = _edges()
    assert not floattext.fast()
    assert float_reprs_bytes(values) == [repr(v).encode() for v in values.tolist()]
    assert float_cells_bytes(values[:1_200].reshape(-1, 6)) == [repr(v).encode() for v in values[:1_200].tolist()]
    assert int_texts_bytes(np.arange(-20, 20)) == [str(i).encode() for i in range(-20, 20)]


def test_bytes_texts_of_arrays_of_another_shape_are_refused() -> None:
    with pytest.raises(ValueError, match=r"float_reprs_bytes: a 1-D array, not shape \(2, 2\)"):
        float_reprs_bytes(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"float_cells_bytes: a 2-D array, not shape \(4,\)"):
        float_cells_bytes(np.zeros(4))
    with pytest.raises(ValueError, match=r"float_rows_bytes: a 2-D array, not shape \(4,\)"):
        float_rows_bytes(np.zeros(4))
    with pytest.raises(ValueError, match=r"int_texts_bytes: a 1-D array, not shape \(2, 2\)"):
        int_texts_bytes(np.zeros((2, 2), dtype=np.int64))


def test_small_values_table_rows_are_repr_and_are_written_over_their_stand_ins() -> None:
    # Every layout below 10^-4 (0.0000D… of 1 to 17 digits, one-, two- and three-digit exponents), rows side by
    # side (4 rounds of writes: a row's 24 bytes reach the next three stand-ins) and the last value small (its
    # 24 bytes past the end of the text: written byte by byte).
    rng = np.random.default_rng(55)
    values = np.concatenate([
        [1e-05, 9.999999999999999e-05, 1.2345678901234567e-05, 1e-06, 1.2345678901234567e-09, 1.5e-10, 5e-324],
        10.0 ** rng.uniform(-323, -4, size=400),
        rng.uniform(1e-5, 1e-4, size=400),
    ])
    table = floattext._small_table(values)
    assert table is not None
    texts, lengths = table
    assert [bytes(texts[i, : lengths[i]]) for i in range(len(values))] == [repr(v).encode() for v in values.tolist()]
    mixed = np.where(rng.random(len(values)) < 0.3, rng.uniform(1, 1e6, size=len(values)), values)
    mixed[-3:] = [2e-05, 3e-07, 1e-05]
    text, commas = floattext._json_commas(mixed)
    assert len(commas) == len(mixed) - 1
    assert bytes(text) == ("[" + ",".join(map(repr, mixed.tolist())) + "]").encode()
