"""cold124 (issue 16): a cold ``check``'s TOML read by the plain reader, its separators counted once.

- (1) ``schema._plain_document`` now reads dotted keys (``derivation.inputs.l2 = …``), inline tables of plain scalars
  with bare keys (``{ value = 50, unit = "MiB" }``) and arrays written one item a line (a stack's ``runs = [``): every
  shipped card, stack and drafting method is read by it, each exactly as ``tomllib`` reads it (keys' order, types).
- (2) Hand cases where TOML refuses what a line-by-line reader could take (a header naming a table a dotted key made,
  a dotted key adding to an inline table or a value, a key twice in an inline table, an array never closed): the
  plain reader leaves each to ``tomllib`` (``None``), and ``toml_loads`` refuses as ``tomllib`` does.
- (3) Hypothesis: documents of lines drawn from those forms, read as ``tomllib`` reads them or left to it
  (``tests/test_attack97.py``'s ``_agree``: every fast path and ``toml_loads`` against ``tomllib``).
- (4) ``schema._separators``: one pass, the sum of the five counts it replaced, inside a snapshot and out; the
  refusal of a card past its separators unchanged.

No timings here: the instructions and CPU are in docs/PERFORMANCE.md (round cold124).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import REPO
from test_attack97 import _agree

# --- (1) the shipped files ----------------------------------------------------------------------------------------

PLAIN_NOW = sorted([*REPO.glob("facts/cards/*.toml"), *REPO.glob("facts/stacks/*.toml"),
                    *REPO.glob("facts/drafts/*.toml"), *REPO.glob("facts/routing/*.toml")])


def test_1_shipped_cards_stacks_and_drafts_take_the_plain_reader() -> None:
    from passprice import schema

    assert len(PLAIN_NOW) >= 20
    dotted = inline = over_lines = 0
    for path in PLAIN_NOW:
        text = path.read_text(encoding="utf-8")
        assert _agree(text) in ("_plain_document", "_flat_document"), path
        dotted += "\nderivation.formula = " in text
        inline += " = { " in text or " = {" in text
        over_lines += " = [\n" in text
    assert dotted >= 15 and inline >= 15 and over_lines >= 2  # the forms this round reads are there to be read
    # a card's derivation as tomllib reads it: tables made by the dotted keys, its inputs' inline tables
    card = (REPO / "facts/cards/h200_sxm_141gb.toml").read_text(encoding="utf-8")
    got = schema._plain_document(card)
    assert got is not None
    derivation = got["on_chip"]["capacity"]["derivation"]
    assert derivation["formula"] == "l2 + (smem + regs) * sms"
    assert list(derivation["inputs"]) == ["l2", "smem", "regs", "sms"]
    assert derivation["inputs"]["sms"]["value"] == 132 and type(derivation["inputs"]["sms"]["value"]) is int
    assert derivation["inputs"]["l2"]["unit"] == "MiB"


def test_1_a_stacks_runs_over_lines_read_as_tomllib_reads_them() -> None:
    from passprice import schema

    path = REPO / "facts/stacks/llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    want = tomllib.loads(text, parse_float=schema.parse_float)
    got = schema._plain_document(text)
    assert got == want and repr(got) == repr(want)
    runs = [v for v in _values(got) if isinstance(v, list) and v and isinstance(v[0], dict) and "run" in v[0]]
    assert runs and all(type(r["value"]) is float for r in runs[0])
    assert runs[0][0] == {"run": "xd3.h100_pcie_80gb.8b-q4km.tg512", "value": 145.55}


def _values(node: Any) -> list[Any]:
    out = []
    if isinstance(node, dict):
        for value in node.values():
            out.append(value)
            out.extend(_values(value))
    return out


def test_1_check_reads_no_card_or_stack_with_tomllib(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import schema

    asked: list[str] = []
    real = tomllib.loads

    def counted(text: str, **kw: Any) -> dict[str, Any]:
        asked.append(text)
        return real(text, **kw)

    monkeypatch.setattr(tomllib, "loads", counted)
    for path in PLAIN_NOW:
        schema.toml_loads(path.read_text(encoding="utf-8"))
    assert asked == []


# --- (2) hand cases -----------------------------------------------------------------------------------------------

#: (text, tomllib's document, or None where tomllib refuses it), each read by the plain reader or left to tomllib.
CASES: list[tuple[str, dict[str, Any] | None, bool]] = [
    # (text, tomllib's answer, whether the plain reader takes it)
    ('a.b = 1\na.c = "s"\n', {"a": {"b": 1, "c": "s"}}, True),
    ('[x]\nd.e.f = 1.5\nd.e.g = true\nh = 2\n', {"x": {"d": {"e": {"f": 1.5, "g": True}}, "h": 2}}, True),
    ('a."b.c" = 1\n"d.e" = 2\n', {"a": {"b.c": 1}, "d.e": 2}, True),
    ('a = { x = 1, y = "s" }\nb = {x = -0.0}\n', {"a": {"x": 1, "y": "s"}, "b": {"x": -0.0}}, True),
    ('r = [\n    {run = "a", value = 1.0},\n  2,\n"s",\n]\n', {"r": [{"run": "a", "value": 1.0}, 2, "s"]}, True),
    ('a.b = [\n  1,\n]\n', {"a": {"b": [1]}}, True),
    ("r = [\n]\n", {"r": []}, True),
    # TOML refuses these; a line-by-line reader could have taken them
    ('[fruit]\napple.color = "red"\n[fruit.apple]\n', None, False),
    ('[fruit]\napple.taste.sweet = true\n[fruit.apple.taste]\n', None, False),
    ("a = { x = 1 }\na.y = 2\n", None, False),
    ("a = { x = 1 }\n[a.b]\n", None, False),
    ("a = { x = 1 }\n[a]\n", None, False),
    ("a = 1\na.b = 2\n", None, False),
    ("a.b = 1\na = 2\n", None, False),
    ("a.b = 1\na.b = 2\n", None, False),
    ("a.b = 1\na.b.c = 2\n", None, False),
    ("a = { x = 1, x = 2 }\n", None, False),
    ("r = [\n  {x = 1, x = 2},\n]\n", None, False),
    ("r = [\n  1,\n", None, False),
    ("r = [\n  1,\nb = 2\n]\n", None, False),
    ("[a]\nb = 1\n[x]\n[a.b]\n", None, False),
    ("r = [\n  1,\n]\n[[r]]\n", None, False),
    ("r = [\n  1,\n]\n[r.x]\n", None, False),
    # valid TOML the plain reader leaves to tomllib (still read right)
    ("[x]\na.b = 1\n[x.a.c]\n", {"x": {"a": {"b": 1, "c": {}}}}, False),
    ("r = [\n  1,\n  2\n]\n", {"r": [1, 2]}, False),
    ("r = [\n  1,\n\n]\n", {"r": [1]}, False),
    ("a = {}\n", {"a": {}}, False),
    ('a = { "q" = 1 }\n', {"a": {"q": 1}}, False),
    ("a = { b.c = 1 }\n", {"a": {"b": {"c": 1}}}, False),
    ("a = { x = [1] }\n", {"a": {"x": [1]}}, False),
]


@pytest.mark.parametrize(("text", "want", "plain"), CASES)
def test_2_hand_cases(text: str, want: dict[str, Any] | None, plain: bool) -> None:
    from passprice import schema

    if want is None:
        with pytest.raises(tomllib.TOMLDecodeError):
            tomllib.loads(text)
        assert schema._plain_document(text) is None
        with pytest.raises(tomllib.TOMLDecodeError):
            schema.toml_loads(text)
    else:
        assert tomllib.loads(text, parse_float=schema.parse_float) == want
        got = schema._plain_document(text)
        assert (got is not None) == plain
        if got is not None:
            assert repr(got) == repr(want)
        assert repr(schema.toml_loads(text)) == repr(want)
    _agree(text)


def test_2_a_card_with_a_header_over_its_derivation_is_refused_by_name(tmp_path: Path) -> None:
    # a card whose derivation table, made by dotted keys, is then opened as a header: tomllib's refusal, with its line
    from passprice import schema
    from passprice.errors import InputError

    text = (REPO / "facts/cards/h200_sxm_141gb.toml").read_text(encoding="utf-8")
    bad = text.replace("\n[on_chip.bandwidth]\n", "\n[on_chip.capacity.derivation]\n[on_chip.bandwidth]\n", 1)
    assert bad != text
    path = tmp_path / "h200_sxm_141gb.toml"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        schema.read_toml(path)
    assert str(path) in str(raised.value) and "line 37" in str(raised.value)


# --- (3) generated documents --------------------------------------------------------------------------------------

KEY_LINES = ["a", "b", "a.b", "a.c", "b.a", "a.b.c", '"a.b"', 'a."b"', '"a".b', "x", "x.y"]
VALUE_LINES = ["1", "-0.0", "1e5", '"s"', "true", "[1, 2]", "[]", "{ x = 1 }", '{x = 1, y = "s"}', "{ x = 1, x = 2 }",
               "{x = 1 }", "{ x = 12345678901234567890 }", "{}", "{ x = [1] }", "[", "{ a = 1.5e400 }"]
HEADER_LINES = ["[a]", "[b]", "[a.b]", "[a.b.c]", "[x]", "[x.y]", "[[a]]", "[[x]]", "[a.x]", "[b.a]"]
ITEM_LINES = ["  1,", "  {x = 1},", '    { run = "r", value = 2.5 },', "]", "  2", "", "  {x = 1, x = 2},", "  [1],",
              "1,", "\t1,", "  12345678901234567890,"]


@st.composite
def _document(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 9))
        if kind <= 4:
            lines.append(draw(st.sampled_from(KEY_LINES)) + " = " + draw(st.sampled_from(VALUE_LINES)))
        elif kind <= 6:
            lines.append(draw(st.sampled_from(HEADER_LINES)))
        else:
            lines.append(draw(st.sampled_from(ITEM_LINES)))
    return "\n".join(lines) + ("\n" if draw(st.booleans()) else "")


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document())
def test_3_generated_documents_read_as_tomllib_reads_them(text: str) -> None:
    _agree(text)


# --- (4) separators -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b",=.[{", b"a = [1, 2]\n", b"\x00{{{..,,==[[", bytes(range(256)) * 3,
                                  "é = { x = 1 }".encode()])
def test_4_separators_are_the_five_counts(data: bytes) -> None:
    from passprice import schema, snapshot

    want = sum(data.count(c) for c in (b",", b"=", b".", b"[", b"{"))
    assert schema._separators(data) == want
    assert schema._counts(data) == (want, data.count(b"."))
    with snapshot.reading():
        assert schema._separators(data) == want
        assert schema._separators(bytes(data)) == want
        assert schema._counts(data) == (want, data.count(b"."))


def test_4_every_shipped_file_counts_as_before() -> None:
    from passprice import schema

    for path in sorted(REPO.glob("*/**/*.toml")):
        data = path.read_bytes()
        assert schema._separators(data) == sum(data.count(c) for c in (b",", b"=", b".", b"[", b"{")), path


def test_4_a_card_past_its_separators_is_refused_as_before() -> None:
    from passprice import schema

    data = b'[card]\nname = "x"\nnote = [' + b"1," * 5000 + b"]\n"
    # 5,000 commas, the two "=" and the two "[" ([card] and the array's)
    assert schema.shape_problem("card", data) == (
        "5,004 separators (',', '=', '.', '[' and '{' outside strings and comments), past the 4,096 a card file may "
        "hold (the largest shipped holds 625; PASSPRICE_MAX_FILE_BYTES=BYTES raises it with the byte cap): not parsed")


# --- (5) a checkpoint entry's lines around its tensor rows --------------------------------------------------------

ROW = '  { name = "t", type = "F32", dims = [4, 2], offset = 0, shard = 0 },\n'


def test_5_shipped_entries_read_without_tomllib(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import schema

    entries = sorted(REPO.glob("registry/checkpoints/*.toml"))
    texts = [path.read_text(encoding="utf-8") for path in entries]
    wants = [repr(tomllib.loads(text, parse_float=schema.parse_float)) for text in texts]
    asked: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text, **kw: asked.append(text) or real(text, **kw))
    for path, text, want in zip(entries, texts, wants, strict=True):
        assert repr(schema._with_plain_tensors(text)) == want, path
    # the rest of 19 of the 21 shipped entries is plain (two hold metadata the plain reader leaves to tomllib)
    assert len(entries) >= 21 and len(asked) <= len(entries) - 19


@pytest.mark.parametrize("text", [
    # the rows' "]" followed on its line by a key: TOML refuses it (a statement ends its line)
    '[header]\ntensors = [\n' + ROW + '] x = 1\n',
    # the block inside an array left open above it: not a statement of [header]
    '[header]\nz = [\n  1,\ntensors = [\n' + ROW + ']\n]\n',
    # the block inside a multi-line string
    '[header]\nz = """\ntensors = [\n' + ROW + ']\n"""\n',
    # a key written twice, the second after the rows
    '[header]\ntensors = [\n' + ROW + ']\ntensors = 1\n',
    # the block at the top level, and again under [header]
    'tensors = [\n' + ROW + ']\n[header]\ntensors = [\n' + ROW + ']\n',
    # a valid entry's shape: read as tomllib reads it
    '[entry]\nname = "x"\n[header]\n"general.architecture" = { type = "string", value = "llama" }\nshards = [\n'
    '  { file = "x.gguf", header_bytes = 10, data_offset = 32, tensor_count = 1 },\n]\ntensors = [\n' + ROW + ']\n',
])
def test_5_the_tensor_path_reads_as_tomllib_or_leaves_it(text: str) -> None:
    from passprice import schema

    fast = schema._with_plain_tensors(text)
    try:
        want: Any = repr(tomllib.loads(text, parse_float=schema.parse_float))
    except tomllib.TOMLDecodeError:
        want = None
    assert fast is None or repr(fast) == want
    _agree(text)


# --- (6) the one-line format's check ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "holds"), [
    ("Table 1", True), ("", True), ("\x7f", True), ("é 1", True), ("\U0001f600 1", True), ("\U000e0031", False),
    ("Table\U000e0031", False), ("a\U0001bca0", False), ("\U0001d173", False), ("\U000e0fff", False),
    ("\U000e1000", True), (5, True), (None, True),
])
def test_6_one_line(text: object, holds: bool) -> None:
    from passprice import schema

    assert schema.one_line(text) is holds
