"""Attack round 56 (issue 13): round one's additions of session 31 attacked on a freshly installed (non-editable)
passprice — :mod:`passprice.plaintoml` (the diff's private copy written without tomlkit), calibrate's in-process
fit memo, ``sweep --json``'s closing error element, and ``audit --step``. Each test builds its reproducer and asserts
the exit status and the exact output or line, or the exact value; a comment says what it did before."""

from __future__ import annotations

import math
import tomllib
from typing import Any

import pytest

from passprice import plaintoml, schema

# --- 1. plaintoml.dumps ---------------------------------------------------------------------------------------------


def test_1_dumps_writes_every_control_character_and_u2028_as_tomllib_reads_them() -> None:
    text = "".join(chr(i) for i in range(0x20)) + '\x7f"\\\u2028\u2029\ufeff'
    document = {text: {text: text, "k": [text, -0.0, 2**64, -(2**63) - 1]}, "tail": 1}
    written = plaintoml.dumps(document)
    assert written is not None
    back = tomllib.loads(written)
    assert back == document and math.copysign(1.0, back[text]["k"][1]) == -1.0
    assert list(back) == [text, "tail"]  # the order kept: the table before a plain value written inline


@pytest.mark.parametrize("value", ["\ud800", "a\udfffb"])
def test_1_a_lone_surrogate_is_left_to_tomlkit(value: str) -> None:
    assert plaintoml.dumps({"a": value}) is None
    assert plaintoml.dumps({value: 1}) is None


def test_1_an_integer_past_python_s_digits_is_left_to_tomlkit() -> None:
    # Before: ValueError "Exceeds the limit (4300 digits) for integer string conversion" out of a function that
    # "raises nothing"; now None (the caller writes with tomlkit).
    assert plaintoml.dumps({"a": 10**5000}) is None
    assert plaintoml.dumps({"t": {"x": [1, {"y": 10**4400}]}}) is None
    assert plaintoml.dumps({"a": 10**4000}) == f'"a" = {10**4000}\n'  # 4,001 digits: written


def test_1_a_number_the_file_wrote_apart_from_its_float_is_left_to_tomlkit() -> None:
    # ``schema.toml_loads`` reads ``1e-400`` as an Underflowed 0.0 and ``1e400`` as an Overflowed inf, each holding
    # the file's text, which the schemas refuse in the file's own words. Before: dumps wrote them "0.0" and "inf",
    # which read back as a plain zero (passed where zero is allowed) and a plain inf; tomlkit's edit keeps the text.
    document = schema.toml_loads("a = 1e-400\nb = 1e400\nc = 1.5\n")
    assert isinstance(document["a"], schema.Underflowed) and isinstance(document["b"], schema.Overflowed)
    assert plaintoml.dumps(document) is None
    assert plaintoml.dumps({"c": document["c"]}) == '"c" = 1.5\n'


def test_1_nan_inf_and_signed_zero_read_back_with_their_bits() -> None:
    document = {"n": math.nan, "p": math.inf, "m": -math.inf, "z": -0.0, "t": 5e-324, "e": 1e16}
    written = plaintoml.dumps(document)
    assert written == '"n" = nan\n"p" = inf\n"m" = -inf\n"z" = -0.0\n"t" = 5e-324\n"e" = 1e+16\n'
    # Before: a NaN with its sign bit set (tomllib's "-nan") was written "nan", read back without it, and passed the
    # check that the text reads back as the document (float.hex writes "nan" for both)
    assert plaintoml.dumps({"n": -math.nan}) == '"n" = -nan\n'
    assert math.copysign(1.0, tomllib.loads('"n" = -nan\n')["n"]) == -1.0


def test_1_tables_ten_thousand_deep_are_left_to_tomlkit() -> None:
    deep: dict[str, Any] = {}
    table = deep
    for _ in range(10_000):
        table["k"] = {}
        table = table["k"]
    assert plaintoml.dumps(deep) is None


def test_1_arrays_of_tables_and_dotted_quoted_keys() -> None:
    document = {"a.b": {'"c"': {"d'e": 1, "x.y": "z"}}, "'": 1, "t": [{"a": 1}, {"b": {"c": [{"d": 2}]}}], "": {"": 1}}
    written = plaintoml.dumps(document)
    assert written is not None and tomllib.loads(written) == document
    assert list(tomllib.loads(written)) == ["a.b", "'", "t", ""]
