"""What :func:`passprice.schema.toml_loads` reads without ``tomllib``'s parser reads exactly as ``tomllib`` reads it.

A flat file (:func:`passprice.schema._flat_document`: a source record) on every shipped file and on texts generated
by hypothesis, lines of every form a flat file has and of the forms next to them (escapes, signs, dotted and
repeated keys, carriage returns, control characters): the same document or the same refusal, word for word.

A checkpoint entry's tensor table read by one regular expression (:func:`passprice.schema._with_plain_tensors`)
reads exactly as ``tomllib`` reads the whole text: on every shipped entry, and on entries mutated by hand and by
hypothesis (characters inserted, removed or replaced in and around the table; the table moved into a string, another
table, an array; its key written twice), the same document (key order and types included) or the same refusal, word
for word, from :func:`passprice.schema.toml_loads`, and the same error line from a read and validation of the file
as a checkpoint entry."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from any_text import any_text  # st.text()'s alphabet without its per-process codec table
from passprice import schema
from passprice.errors import InputError

REPO = Path(__file__).resolve().parent.parent
ENTRIES = sorted((REPO / "registry" / "checkpoints").glob("*.toml"))
#: The smallest shipped entry (236 rows): mutated below.
GEMMA = (REPO / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml").read_text(encoding="utf-8")


def _outcome(text: str, plain: bool = False) -> tuple[str, str]:
    """What :func:`schema.toml_loads` makes of ``text``: ``("document", repr)`` or ``(error class, message)``;
    ``plain``: with the regular expression's path shut (``tomllib`` reads every row)."""
    with pytest.MonkeyPatch.context() as mp:
        if plain:
            mp.setattr(schema, "_with_plain_tensors", lambda _text: None)
            mp.setattr(schema, "_flat_document", lambda _text: None)
        try:
            return "document", repr(schema.toml_loads(text))
        except (ValueError, RecursionError) as e:
            return type(e).__name__, str(e)


def _verdict(text: str, plain: bool = False) -> str:
    """What reading ``text`` as a checkpoint entry says: its document's repr, or its error lines."""
    with pytest.MonkeyPatch.context() as mp:
        if plain:
            mp.setattr(schema, "_with_plain_tensors", lambda _text: None)
        try:
            document = schema.read_toml(Path("registry/checkpoints/x.toml"), text)
            schema.validate(document, "checkpoint", "registry/checkpoints/x.toml")
        except InputError as e:
            return str(e)
        return repr(document)


@pytest.mark.parametrize("path", ENTRIES, ids=lambda p: p.stem)
def test_each_shipped_entry_takes_the_fast_path_and_reads_as_tomllib_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = schema._with_plain_tensors(text)
    assert fast is not None
    whole = tomllib.loads(text, parse_float=schema.parse_float)
    assert repr(fast) == repr(whole)
    assert [type(v) for row in fast["header"]["tensors"] for v in row.values()] == [
        type(v) for row in whole["header"]["tensors"] for v in row.values()
    ]


def test_a_row_with_an_escape_a_sign_or_another_key_leaves_the_table_to_tomllib() -> None:
    row = '  { name = "blk.0.attn_k.weight", type = "Q5_0", dims = [640, 256], offset = 178260480, shard = 0 },\n'
    assert row in GEMMA
    for odd in (
        row.replace('"blk.0.attn_k.weight"', '"blk.0.attn_k\\u0041.weight"'),  # an escape: tomllib decodes it
        row.replace("offset = 178260480", "offset = +178260480"),
        row.replace("offset = 178260480", "offset = 178_260_480"),
        row.replace("dims = [640, 256]", "dims = [640,256]"),
        row.replace("shard = 0 }", "shard = 0, extra = 1 }"),
        row.replace("dims = [640, 256]", "dims = [640, 2.5e2]"),
    ):
        text = GEMMA.replace(row, odd)
        assert schema._with_plain_tensors(text) is None
        assert _outcome(text) == _outcome(text, plain=True)
    decoded = schema.toml_loads(GEMMA.replace(row, row.replace("attn_k.weight", "attn_k\\u0041.weight")))
    assert decoded["header"]["tensors"][2]["name"] == "blk.0.attn_kA.weight"


def _table(text: str) -> tuple[int, int, str]:
    """Where the tensor table ``tensors = [ … ]`` of the entry ``text`` starts and ends, and its text."""
    start = text.index("tensors = [\n")
    end = text.index("\n]\n", start) + 2
    return start, end, text[start:end]


_BLOCK_START, _BLOCK_END, _BLOCK = _table(GEMMA)


def _moved(where: str, text: str = GEMMA) -> str:
    """``text`` (an entry: GEMMA) with its tensor table written elsewhere (in a string, another table, an array,
    twice …)."""
    _start, _end, block = _table(text)
    without = text[:_start] + text[_end + 1 :]
    if where == "basic string":
        return without.replace("[header]\n", f'[header]\nnote = """\n{block}\n"""\n', 1)
    if where == "literal string":
        return without.replace("[header]\n", f"[header]\nnote = '''\n{block}\n'''\n", 1)
    if where == "string, then the table":
        return text.replace("[header]\n", f'[header]\nnote = """\n{block}\n"""\n', 1)
    if where == "entry table":
        return without.replace("[entry]\n", f"[entry]\n{block}\n", 1)
    if where == "array":
        return without.replace("[header]\n", f"[header]\nx = [\n{block}\n]\n", 1)
    if where == "twice":
        return text.replace(block, f"{block}\n{block}", 1)
    if where == "after an empty table":
        return text.replace(block, f"tensors = []\n{block}", 1)
    if where == "appended to":
        return text + "\n[[header.tensors]]\nname = 'x'\n"
    if where == "a sub-table":
        return text.replace(block, f"[header.sub]\n{block}", 1)
    if where == "crlf":
        return text.replace("\n", "\r\n")
    if where == "first line":
        return block + "\n" + without
    if where == "a stray string":
        return text.replace(block, block + ' "x"', 1)
    raise AssertionError(where)


@pytest.mark.parametrize("where", [
    "basic string", "literal string", "string, then the table", "entry table", "array", "twice",
    "after an empty table", "appended to", "a sub-table", "crlf", "first line", "a stray string",
])
def test_a_table_written_elsewhere_reads_as_tomllib_reads_it(where: str) -> None:
    text = _moved(where)
    assert _outcome(text) == _outcome(text, plain=True)
    assert _verdict(text) == _verdict(text, plain=True)


def test_the_table_inside_a_string_stays_text() -> None:
    document = schema.toml_loads(_moved("basic string"))
    assert document["header"]["note"] == f"{_BLOCK}\n"
    assert "tensors" not in document["header"]


#: Characters whose insertion breaks or changes a row's TOML.
_ALPHABET = [*"\"\\'\n\r\t[]{},=# 0917-_.+aeEtfx", "\x7f", "\x00", "\x1f", "é", "\u2028", '"""', "'''"]
#: GEMMA with its tensor table cut to its first 24 rows (of 236): the reads test's 250 texts start from it. A
#: mutation lands in or within 400 characters of the table, and its rows are read one by one, each alike: 24 rows
#: carry every form a mutation meets (a row, the rows' ends, the table's first and last row, the text around it)
#: with ``tomllib`` parsing 6 KB an example's plain side, not 28 KB (session 37, hypothesis seed 1, load ~6: the
#: test's 250 examples 3.95–4.4 s on GEMMA, 2.2 s on this).
SHORT = GEMMA[:_BLOCK_START] + "".join(_BLOCK.splitlines(keepends=True)[:25]) + GEMMA[_BLOCK_END - 1 :]


@st.composite
def _mutated_text(draw: st.DrawFn, base: str = GEMMA) -> str:
    """``base`` (an entry), its tensor table moved (half the time), then 1 to 3 characters or short strings
    inserted, removed or replaced in or within 400 characters of the table."""
    text = base
    start, end, _block = _table(base)
    span = (max(0, start - 400), min(len(base), end + 400))  # where mutations land: in and around the table
    if draw(st.booleans()):
        text = _moved(draw(st.sampled_from([
            "basic string", "string, then the table", "entry table", "array", "twice", "after an empty table",
            "appended to", "a sub-table", "first line",
        ]), base))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=span[0], max_value=min(span[1], len(text) - 1)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(_ALPHABET) | any_text(max_size=3))
        if action == "insert":
            text = text[:at] + piece + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(min_value=1, max_value=4)) :]
        else:
            text = text[:at] + piece + text[at + 1 :]
    return text


def test_the_short_entry_is_gemma_s_first_24_rows_on_the_fast_path() -> None:
    rows = _rows(schema.toml_loads(SHORT))
    assert rows == _rows(schema.toml_loads(GEMMA))[:24] and schema._with_plain_tensors(SHORT) is not None
    assert SHORT.replace(_table(SHORT)[2], _BLOCK) == GEMMA


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_mutated_text(SHORT))
def test_a_mutated_entry_reads_and_is_refused_as_tomllib_reads_it(text: str) -> None:
    assert _outcome(text) == _outcome(text, plain=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_mutated_text())
def test_a_mutated_entry_gets_the_same_error_line(text: str) -> None:
    assert _verdict(text) == _verdict(text, plain=True)


def _rows(document: dict[str, Any]) -> Any:
    return document["header"]["tensors"]


def test_the_rows_are_read_value_for_value() -> None:
    rows = _rows(schema.toml_loads(GEMMA))
    assert len(rows) == 236
    assert rows[1] == {"name": "token_embd.weight", "type": "Q8_0", "dims": [640, 262144], "offset": 2560, "shard": 0}
    assert list(rows[0]) == ["name", "type", "dims", "offset", "shard"]


def test_every_shipped_flat_file_reads_as_tomllib_reads_it() -> None:
    flat = 0
    for path in sorted(REPO.glob("**/*.toml")):
        text = path.read_text(encoding="utf-8")
        found = schema._flat_document(text)
        if found is not None:
            flat += 1
            assert repr(found) == repr(tomllib.loads(text)), path
    assert flat >= 20  # the source records


def test_a_source_record_reads_flat() -> None:
    # a record without lists (nvidia-a100-datasheet until cite90 removed it; nvidia-ampere-whitepaper until its copy
    # was listed in `copies`, tests/test_walk108.py)
    text = (REPO / "sources" / "amd-rocm-gpu-specs.toml").read_text(encoding="utf-8")
    document = schema._flat_document(text)
    assert document is not None
    assert document["source"]["publisher"] == "AMD"
    assert list(document) == ["source"]


_KEYS = st.sampled_from(["a", "b", "source", "kind", "1", "true", "a-b_c", "a.b", '"a"', "a b", "", "é"])
_FLAT_VALUES = st.sampled_from([
    '"x"', '""', '"a b"', '"tab\tin"', '"esc\\n"', '"q\\""', '"é"', '"\u2028"', '"\x7f"', '"\x00"', "'lit'",
    "0", "7", "01", "-1", "+1", "1_000", "9" * 19, "9" * 20, "1.5", "1e400", "nan", "true", "false", "True", "[1]",
    "{ a = 1 }", '"""x"""', '"open',
]) | any_text(max_size=6)
_FLAT_LINE = st.one_of(
    st.builds(lambda k, v: f"{k} = {v}", _KEYS, _FLAT_VALUES),
    st.builds(lambda k, v: f"{k}={v}", _KEYS, _FLAT_VALUES),
    st.builds(lambda k, v: f"{k} = {v} ", _KEYS, _FLAT_VALUES),
    st.builds(lambda k: f"[{k}]", _KEYS),
    st.builds(lambda k: f"[[{k}]]", _KEYS),
    st.builds(lambda k: f"[ {k} ]", _KEYS),
    st.sampled_from(["", " ", "\t", "# a comment", "#:schema ../schema/source.schema.json", "#\x01", "#\t é",
                     "\r", "x = 1 # c", "\ufeff"]),
    any_text(max_size=8),
)


_PLAIN_LINE = st.one_of(
    st.builds(lambda k, v: f"{k} = {v}", st.sampled_from(["a", "b", "source", "1", "true", "a-b_c"]),
              st.sampled_from(['"x"', '""', '"a b é"', "0", "7", "9" * 19, "true", "false"])),
    st.builds(lambda k: f"[{k}]", st.sampled_from(["a", "b", "source", "c"])),
    st.sampled_from(["", "# a comment", "#:schema ../schema/source.schema.json"]),
)


@st.composite
def _flat_text(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_PLAIN_LINE, max_size=8))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        lines.insert(draw(st.integers(min_value=0, max_value=len(lines))), draw(_FLAT_LINE))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "\r\n", ""]))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_flat_text())
def test_a_flat_text_reads_and_is_refused_as_tomllib_reads_it(text: str) -> None:
    assert _outcome(text) == _outcome(text, plain=True)
