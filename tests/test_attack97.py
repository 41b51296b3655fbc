"""attack97 (issue 13): passprice's own TOML readers against ``tomllib``, differentially, on hostile text.

``schema.toml_loads`` answers from three fast paths before ``tomllib``: ``_flat_document`` (a source record),
``_plain_document`` (a lock, a card, a serving as passprice writes them: scale88) and ``_with_plain_tensors`` (a
checkpoint entry's tensor rows). A text one of them reads otherwise than ``tomllib`` — or takes where ``tomllib``
refuses — would be a lock or a fact that says one thing to a reviewer (and to any TOML tool) and another to the
pricer. Each must answer exactly ``tomllib.loads(text, parse_float=parse_float)`` (the same keys in the same order,
the same types: ``1``, ``1.0`` and ``true`` apart, ``-0.0`` and ``0.0`` apart) or ``None``; and ``toml_loads`` must
answer that document or raise where ``tomllib`` raises.

- (1) Hypothesis: documents of lines drawn near the plain subset (duplicate keys and tables, quoted keys equal to
  bare ones, escapes, literal strings, ``#`` inside strings, trailing comments, CRLF, lone CR, a BOM, tabs, blanks
  around ``=`` and inside headers, every integer and float form TOML has and some it refuses, dates, arrays over
  lines, inline tables, empty and Unicode keys, control characters and NUL).
- (2) Hypothesis: the shipped locks mutated one character at a time (the hostile characters above), and lines of
  them repeated, dropped or swapped.
- (3) Hand cases, each with the document ``tomllib`` gives or its refusal.
- (4) The tensor-row fast path with a block inside a string, a second block, a table of its own name.

No timings here: the fast paths' share of the shipped files is in docs/PERFORMANCE.md (round attack97).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import REPO

# --- what is compared ---------------------------------------------------------------------------------------------


def _tomllib(text: str) -> tuple[str, Any]:
    """``("doc", repr)`` of ``tomllib``'s document of ``text`` (floats by passprice's ``parse_float``, as every
    reader passes it), or ``("refused", None)``: ``repr`` holds the keys' order and every value's type."""
    from passprice.schema import parse_float

    try:
        return "doc", repr(tomllib.loads(text, parse_float=parse_float))
    except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError; so is an integer of 5,000 digits
        return "refused", None


def _agree(text: str) -> str:
    """Assert every fast path and ``toml_loads`` read ``text`` as ``tomllib`` does; which path took it."""
    from passprice import schema

    want = _tomllib(text)
    took = "tomllib"
    for name in ("_flat_document", "_plain_document", "_with_plain_tensors"):
        fast = getattr(schema, name)(text)
        if fast is not None:
            assert want == ("doc", repr(fast)), (name, text)
            took = name if took == "tomllib" else took
    # the tables read from their own lines (an entry's [entry], a lock's [lock]): where the file parses, as it reads
    if want[0] == "doc" and "\r" not in text:
        whole = tomllib.loads(text)
        from passprice import checkpoints, locks

        entry = checkpoints._entry_table(text)
        assert entry is None or repr(entry) == repr(whole.get("entry")), ("_entry_table", text)
        lock = locks.lock_table_of(text.encode("utf-8", "surrogatepass"))
        assert repr(lock) == repr(whole.get("lock")), ("lock_table_of", text)
    try:
        got = "doc", repr(schema.toml_loads(text))
    except tomllib.TOMLDecodeError:
        got = "refused", None
    assert got == want, text
    return took


# --- (1) generated documents near the plain subset ----------------------------------------------------------------

KEYS = ["a", "b", "x", '"a"', "'a'", '"b"', '""', "''", '"a.b"', "a.b", "a . b", '"ü"', "ü", "1", "-", "_",
        "true", "inf", '"\\u0061"', '"a\\tb"', '"a b"', '"#"', '"="', '"["', "a\tb", '"\u2028"', "é"]
HEADER_PATHS = ["lock", "entry", "a", "b", "a.b", "a.b.c", "b.a", '"a"', '"a".b', 'a."b"', '"a.b"', "a . b",
                " a ", "\ta\t",
                "'a'.b", '""', "a.\"\"", "x", "x.a"]
VALUES = [
    # integers
    "1", "-1", "+1", "0", "-0", "+0", "01", "-01", "00", "1_000", "1__0", "_1", "1_", "0x1F", "0x1f", "0o17",
    "0b101", "0X1", "-0x1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "1234567890123456789", "12345678901234567890", "-1234567890123456789", "-12345678901234567890",
    # floats
    "1.0", "-0.0", "+0.0", "0.0", "1e5", "1E5", "1e05", "1e+5", "1e-5", "1.5e-3", "1.5E+3", ".5", "5.", "1.e5",
    "1e", "1.0e", "-1.5", "1_0.5", "1.5_0", "inf", "-inf", "+inf", "nan", "+nan", "-nan", "1e400", "-1e400",
    "1e-400", "0e0", "0.000", "1.0000000000000000001", "0.1", "3.141592653589793238",
    # booleans and look-alikes
    "true", "false", "True", "FALSE", "tru", "truee",
    # strings
    '"s"', '""', "'lit'", "''", '"a#b"', "'a#b'", '"a # b"', '"\\u00e9"', '"\\U0001F600"', '"\\e"', '"\\x41"',
    '"\\q"', '"\\\\"', '"\\""', '"tab\there"', '"\x00"', '"\x7f"', '"\x1b"', '"\x08"', "'\x00'", "'tab\t'",
    '"""ml\nx"""', '"""\n[lock]\nserving = "x"\n"""', '"""\n[entry]\norigin = "x"\n[z]\n"""',
    '"""\nx"""', "'''ml\n'''", '"é"', '"\u2028"', '"\ufeff"', '"unterminated', "'a'b'", '"a"b"',
    '"1"', '"true"', '"[1, 2]"', '"a, b"', '", "',
    # dates and times
    "1979-05-27", "1979-05-27T07:32:00Z", "1979-05-27 07:32:00", "07:32:00", "1979-05-27T07:32:00.5+01:00",
    "1979-13-27", "1979-05-27T25:00:00",
    # arrays and inline tables
    "[]", "[ ]", "[1, 2]", "[1,2]", "[1 , 2]", "[1, 2,]", "[1, 2, ]", '[1, "a"]', "[1, 1.0]", "[true, 1]",
    "[\n1,\n2,\n]", "[ 1 ]", "[[1], [2]]", "[1, [2]]", '["a, b", "c"]', '["a", "b" ]', "[-0.0, 0.0]",
    "[1e5, 1]", "[12345678901234567890]", "[01]", "{}", "{ x = 1 }", "{x=1, x=2}", "{ x = 1, }", "[{x = 1}]",
    # trailing text
    "1 # c", "1#c", '"s" # c', "1 1", "1,", "1\t", "1 ",
]
SEPARATORS = [" = ", "=", " =", "= ", "\t=\t", "  =  ", " == "]


PLAIN_KEYS = ["serving", "origin", "a", "b", "x", '"a"', '"b"', '""', '"a.b"', '"ü"', "1", "-", "_", "true",
              '"a b"', '"#"']
PLAIN_HEADERS = ["lock", "entry", "a", "b", "a.b", "a.b.c", "b.a", '"a"', '"a".b', 'a."b"', '"a.b"', '""', 'a.""',
                 "x", "x.a"]
PLAIN_VALUES = ["1", "-1", "0", "-0", "1.0", "-0.0", "0.0", "1e5", "1E5", "1e05", "1e+5", "1.5e-3", "1e400",
                "1e-400", "0e0", "1234567890123456789", "12345678901234567890", "-1234567890123456789",
                "-12345678901234567890", "true", "false", '"s"', '""', '"a#b"', '"1"', '"a, b"', '", "', '"é"',
                "[]", "[1, 2]", '[1, "a"]', "[1, 1.0]", "[true, 1]", '["a, b", "c"]', "[-0.0, 0.0]", "[1e5, 1]",
                "[12345678901234567890]"]


@st.composite
def _line(draw: st.DrawFn) -> str:
    """One line: as passprice writes one (most), or anything of the lists above."""
    plain = draw(st.integers(0, 9)) < 8
    kind = draw(st.integers(0, 9))
    if kind <= 4:  # KEY = VALUE
        if plain:
            return draw(st.sampled_from(PLAIN_KEYS)) + " = " + draw(st.sampled_from(PLAIN_VALUES))
        sep = " = " if draw(st.integers(0, 3)) else draw(st.sampled_from(SEPARATORS))
        lead = "" if draw(st.integers(0, 5)) else draw(st.sampled_from([" ", "\t", "\ufeff"]))
        return lead + draw(st.sampled_from(KEYS)) + sep + draw(st.sampled_from(VALUES))
    if kind <= 7:  # a header
        if plain:
            opened = draw(st.sampled_from(["[", "[["]))
            return opened + draw(st.sampled_from(PLAIN_HEADERS)) + opened.replace("[", "]")
        path = draw(st.sampled_from(HEADER_PATHS))
        opened, closed = draw(st.sampled_from([("[", "]"), ("[[", "]]"), ("[", "]]"), ("[[", "]"), ("[ ", " ]"),
                                               ("[[ ", " ]]")]))
        trail = "" if draw(st.integers(0, 4)) else draw(st.sampled_from([" # c", "#c", " ", "\t", " x"]))
        return opened + path + closed + trail
    if kind == 8:
        return draw(st.sampled_from(["# a comment", "#", "# \t tab", "#\x00", "#\x7f", "#\x1b", " # c", "\t",
                                     " ", "# é \u2028", "#\ufeff"]))
    return ""


@st.composite
def _document(draw: st.DrawFn) -> str:
    """Lines of :func:`_line`, joined as a file writes them (sometimes CRLF, a lone CR, a BOM before them)."""
    lines = draw(st.lists(_line(), min_size=0, max_size=12))
    newline = "\n" if draw(st.integers(0, 7)) else draw(st.sampled_from(["\r\n", "\r", "\n\n"]))
    text = newline.join(lines)
    if draw(st.booleans()):
        text += "\n"
    if not draw(st.integers(0, 15)):
        text = "\ufeff" + text
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document())
def test_1_generated_documents_read_as_tomllib_reads_them(text: str) -> None:
    _agree(text)


# --- (2) the shipped locks mutated --------------------------------------------------------------------------------

LOCKS = [p.read_text(encoding="utf-8") for p in sorted((REPO / "locks").glob("*.lock.toml"))]
HOSTILE = [" ", "\t", "\r", "\r\n", '"', "'", "\\", "#", ".", "[", "]", "=", ",", "\x00", "\x7f", "\ufeff", "_",
           "+", "0", "e", "\n", "\\u0061", "é", "{", "}"]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(LOCKS) - 1), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 3),
                                                          st.sampled_from(HOSTILE)), min_size=1, max_size=3))
def test_2_mutated_locks_read_as_tomllib_reads_them(which: int, steps: list[tuple[int, int, str]]) -> None:
    text = LOCKS[which]
    for at, how, piece in steps:
        if how == 3:  # a line repeated (a key or a table written twice)
            lines = text.split("\n")
            i = at % len(lines)
            text = "\n".join(lines[: i + 1] + lines[i:])
            continue
        i = at % (len(text) + 1)
        text = text[:i] + piece + text[i + (how == 1) :] if how < 2 else text[:i] + text[i + 1 :]
    _agree(text)


def test_2_the_shipped_files_take_the_fast_paths_they_did() -> None:
    # every lock is still read by the plain reader (none left to tomllib by the narrowing), each as tomllib reads it
    for text in LOCKS:
        assert _agree(text) == "_plain_document"
    took: dict[str, int] = {}
    for path in sorted(REPO.glob("*/**/*.toml")):
        way = _agree(path.read_text(encoding="utf-8"))
        took[way] = took.get(way, 0) + 1
    assert took.get("_plain_document", 0) >= 40 and took.get("_flat_document", 0) >= 20, took


# --- (3) hand cases -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "document"), [
    # keys and tables written twice, however spelled: refused
    ('a = 1\n"a" = 2\n', None), ("a = 1\n'a' = 2\n", None), ('"a" = 1\na = 2\n', None),
    ('[a]\n["a"]\n', None), ('["a"]\n[a]\n', None), ("[a]\nx = 1\n[b]\n[a]\n", None), ("a = 1\n[a]\n", None),
    ("[a]\nb = 1\n[a.b]\n", None), ("a = [1]\n[[a]]\n", None), ("[[a]]\n[a]\n", None), ("[a]\n[[a]]\n", None),
    ('[a."b"]\n[a.b]\n', None), ('"" = 1\n"" = 2\n', None), ("[x]\n[x]\n", None),
    # the same key spelled bare and quoted is one key
    ('"a" = 1\n', {"a": 1}), ('["a".b]\nc = true\n', {"a": {"b": {"c": True}}}),
    ('"" = 1\n', {"": 1}), ('"ü" = "é"\n', {"ü": "é"}), ('"a b" = 1\n', {"a b": 1}),
    ('["a.b"]\nc = 1\n', {"a.b": {"c": 1}}),
    # TOML's table rules that the plain reader leaves to tomllib, read by it
    ("[a.b]\nx = 1\n[a]\ny = 2\n", {"a": {"b": {"x": 1}, "y": 2}}),
    ("[[a]]\n[a.b]\nx = 1\n[[a]]\n[a.b]\nx = 2\n", {"a": [{"b": {"x": 1}}, {"b": {"x": 2}}]}),
    # the value's type as written
    ("x = 1\n", {"x": 1}), ("x = 1.0\n", {"x": 1.0}), ("x = true\n", {"x": True}), ("x = -0\n", {"x": 0}),
    ("x = 1e5\n", {"x": 100000.0}), ("x = 1e05\n", {"x": 100000.0}), ("x = 0e0\n", {"x": 0.0}),
    ("x = [1, 1.0, true]\n", {"x": [1, 1.0, True]}), ('x = ["a, b", ", "]\n', {"x": ["a, b", ", "]}),
    ("x = 0x1F\n", {"x": 31}), ("x = 0o17\n", {"x": 15}), ("x = 0b101\n", {"x": 5}), ("x = +1\n", {"x": 1}),
    ("x = 1_000\n", {"x": 1000}), ("x = 9223372036854775808\n", {"x": 9223372036854775808}),
    ("x = 12345678901234567890\n", {"x": 12345678901234567890}),
    ('x = "a # b" # c\n', {"x": "a # b"}), ("x = 'a\\tb'\n", {"x": "a\\tb"}), ('x = "\\u0061"\n', {"x": "a"}),
    ("x\t=\t1\n", {"x": 1}), ("[ a . b ]\nx = 1\n", {"a": {"b": {"x": 1}}}), ("x = 1\r\n", {"x": 1}),
    ("x = [\n1,\n2,\n]\n", {"x": [1, 2]}),
    # refused by TOML, so by passprice
    ("x = 01\n", None), ("x = .5\n", None), ("x = 5.\n", None), ("x = 1__0\n", None), ("x = \"\\e\"\n", None),
    ('x = "\\q"\n', None), ('x = "\x00"\n', None), ('x = "\x7f"\n', None), ("x = 1\ry = 2\n", None),
    ("\ufeffx = 1\n", None), ("#\x00\n", None), ("x = True\n", None), ("x = 1 1\n", None), ("[a]]\n", None),
    ("[[a]\n", None), ("x = {x=1, x=2}\n", None), ("x = 1\n\x00", None),
])
def test_3_hand_cases(text: str, document: dict[str, Any] | None) -> None:
    from passprice import schema

    _agree(text)
    if document is None:
        with pytest.raises(tomllib.TOMLDecodeError):
            schema.toml_loads(text)
    else:
        assert repr(schema.toml_loads(text)) == repr(document)


# --- (4) the tensor rows ------------------------------------------------------------------------------------------

R1 = "r1-qwen7b-h200"
ROW = '  { name = "t.weight", type = "F32", dims = [2, 3], offset = 0, shard = 0 },\n'


@pytest.mark.parametrize("text", [
    "[header]\ntensors = [\n" + ROW + "]\n",
    '[header]\nx = """\ntensors = [\n' + ROW + ']\n"""\n',  # a block inside a string: not the table's
    '[header]\nx = """\ntensors = [\n' + ROW + ']\n"""\ntensors = [\n' + ROW + "]\n",  # and one after it
    "[header]\ntensors = [\n" + ROW + "]\ntensors = [\n" + ROW + "]\n",  # the key twice: refused
    "[header]\ntensors = [\n" + ROW + "]\n[header.tensors]\n",  # a table over it: refused
    "[header]\ntensors = [\n" + ROW + ROW + "]\n",  # the same row twice: an array may hold it twice
    "[other]\ntensors = [\n" + ROW + "]\n",
    "tensors = [\n" + ROW + "]\n[header]\n",
    "[header]\ntensors = [\n" + ROW.replace("shard = 0", "shard = 0, shard = 1") + "]\n",
    "[header]\ntensors = [\n" + ROW + "]]\n",
    "[header]\ntensors = [\n" + ROW + "] # c\n",
    "[[header]]\ntensors = [\n" + ROW + "]\n",
])
def test_4_tensor_rows(text: str) -> None:
    _agree(text)


def test_4_a_lock_with_a_key_twice_is_refused_end_to_end(tmp_path: Path) -> None:
    # what a fast path taking a key written twice would let through: a lock saying two things. `check` refuses it,
    # naming the file, exit 2 (the plain reader leaves it to tomllib, which words the refusal)
    from cli_helpers import copy_root, invoke
    from passprice import schema

    root = copy_root(tmp_path)
    path = root / "locks" / f"{R1}.lock.toml"
    text = path.read_text(encoding="utf-8")
    doubled = text.replace(f'serving = "{R1}"\n', f'serving = "{R1}"\nserving = "gemma3-270m-h100"\n')
    assert doubled != text and schema._plain_document(doubled) is None and _tomllib(doubled) == ("refused", None)
    path.write_text(doubled, encoding="utf-8")
    result = invoke("--no-cache", "check", root=root)
    assert result.exit_code == 2, result.output
    assert f"locks/{R1}.lock.toml" in result.output and "not valid TOML" in result.output, result.output


# --- (5) the [entry] table read from its own lines (checkpoints._entry_table) -------------------------------------

ENTRY = "codellama-7b-f16"


def _entry_after_a_string(fake_origin: str) -> str:
    """The shipped entry ``ENTRY`` with its ``[entry]`` table moved to the end and, before it, a metadata string
    (TOML's multi-line basic string: valid, schema-valid) whose lines are ``[entry]``, ``origin = FAKE`` and ``[z]``:
    tomllib reads the entry's own origin, a reader of the lines from the first ``[entry]`` to the next ``[`` the
    string's."""
    lines = (REPO / "registry" / "checkpoints" / f"{ENTRY}.toml").read_text(encoding="utf-8").split("\n")
    start, end = lines.index("[entry]"), lines.index("[header]")
    rest = lines[:start] + lines[end:]
    at = rest.index('"general.name" = { type = "string", value = "codellama-7b-f16" }')
    rest[at] = f'"general.name" = {{ type = "string", value = """\n[entry]\norigin = "{fake_origin}"\n[z]\n""" }}'
    return "\n".join(rest) + "\n" + "\n".join(lines[start:end])


def test_5_an_entry_table_inside_a_string_is_not_the_entry() -> None:
    from passprice import checkpoints

    text = _entry_after_a_string("Downloaded from meta-llama: the official weights")
    origin = tomllib.loads(text)["entry"]["origin"]
    assert origin.startswith("Synthetic, header only: built by passprice synth")
    table = checkpoints._entry_table(text)
    assert table is None or table.get("origin") == origin  # was the string's: "Downloaded from meta-llama: …"


@pytest.mark.parametrize("text", [
    '# c\n[entry]\norigin = "A"\n[header]\nx = 1\n',  # as passprice writes it: read from its lines
    'entry.origin = "B"\n[entry]\norigin = "A"\n[header]\n',  # a table defined twice: refused
    'x = """\n[entry]\norigin = "A"\n"""\n[entry]\norigin = "B"\n',  # the first [entry] is a string's
    '[entry]\norigin = "A"\n[header]\nx = """\n[entry]\norigin = "B"\n"""\n',  # the second is
    "[entry]\norigin = \"A\"\nnote = '''\n[x]\n'''\n",  # a value over the next '[' line
    '#\x00\n[entry]\norigin = "A"\n[header]\n',  # a comment tomllib refuses before it
])
def test_5_the_entry_table_as_tomllib_reads_it(text: str) -> None:
    from passprice import checkpoints

    table = checkpoints._entry_table(text)
    if table is not None:  # where tomllib refuses the file, or reads no [entry] table, so must the fast read
        whole = _tomllib(text)
        assert whole[0] == "doc" and repr(table) == repr(tomllib.loads(text)["entry"]), text


def test_5_checkpoints_says_the_origin_the_entry_holds(tmp_path: Path) -> None:
    # end to end: `checkpoints --json` (its origin and synthetic columns, which audit and a lock's pin read alike)
    import json

    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    (root / "registry" / "checkpoints" / f"{ENTRY}.toml").write_text(
        _entry_after_a_string("Downloaded from meta-llama: the official weights"), encoding="utf-8")
    result = invoke("--no-cache", "checkpoints", "--json", root=root)
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)["checkpoints"]}
    # was "Downloaded from meta-llama: the official weights", synthetic false (the listing's origin column: "file")
    assert rows[ENTRY]["origin"].startswith("Synthetic, header only") and rows[ENTRY]["synthetic"] is True
    listed = invoke("--no-cache", "checkpoints", root=root).output.splitlines()
    assert [line.split()[-2] for line in listed if line.startswith(f"{ENTRY} ")] == ["synthetic"]  # was "file"


# --- (6) the [lock] table read from its own lines (locks.lock_table_of) -------------------------------------------


def test_6_a_blank_line_inside_the_lock_table_keeps_its_serving() -> None:
    from passprice import locks

    text = (REPO / "locks" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    spaced = text.replace(f'name = "{R1}"\n', f'name = "{R1}"\n\n', 1)  # the same document: its digest holds
    assert tomllib.loads(spaced)["lock"]["serving"] == R1
    table = locks.lock_table_of(spaced.encode("utf-8"))
    assert isinstance(table, dict) and table.get("serving") == R1  # was no serving: read alone, the table ended
    assert locks.locked_serving({"lock": table}, R1) == R1


def test_6_a_lock_table_inside_a_string_is_not_the_lock() -> None:
    from passprice import locks

    text = (REPO / "locks" / f"{R1}.lock.toml").read_text(encoding="utf-8")
    at = text.index("[card]\n")
    hostile = text[:at] + 'x = """\n[lock]\nname = "other"\nserving = "gemma3-270m-h100"\nformat = 2\n"""\n' + text[at:]
    assert tomllib.loads(hostile)["lock"]["serving"] == R1
    table = locks.lock_table_of(hostile.encode("utf-8"))
    assert isinstance(table, dict) and table.get("serving") == R1 and table.get("name") == R1  # was gemma's, "other"


def test_6_every_shipped_entry_and_lock_keeps_its_fast_table_read() -> None:
    # the narrowing leaves passprice's own files on the fast read (docs/PERFORMANCE.md, round attack97)
    from passprice import checkpoints, locks

    for path in sorted((REPO / "registry" / "checkpoints").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        assert checkpoints._entry_table(text) == tomllib.loads(text)["entry"], path
    for text in LOCKS:
        section = locks.lock_table_in(text)
        assert section is not None and locks._whole_table(text, section), text[:80]


# --- (7) long dotted runs: a key's are refused, a string's or a comment's read (left103) ----------------------------

DOTS = ".".join(["a"] * 100)  # 100 parts: past schema.MAX_KEY_PARTS (64)


@pytest.mark.parametrize("text", [
    f'note = "{DOTS}"\n',  # was "a dotted key of more than 64 parts (at line 1, column 9)"
    f"note = '{DOTS}'\n",
    f'note = """\n{DOTS}\n"""\n',
    f"note = '''\n{DOTS} = 1\n'''\n",  # a key's look inside a multi-line string
    f"x = 1 # {DOTS}\n",
    f"# {DOTS} = 1\nx = 1\n",
    f'x = ["{DOTS}", "{DOTS}"]\n',
    f'x = {{ n = "{DOTS}" }}\n',
    f'"{DOTS}" = 1\n',  # one quoted key part holding the dots: one part
    f'x = "\\"{DOTS}"\n',  # an escaped quote before them
    f'x = """a""""\ny = "{DOTS}"\n',  # a multi-line string closed by four quotes
    f'[t]\nnote = "{DOTS}"\nmore = "{DOTS}"\n[u]\nnote = "{DOTS}"\n',
])
def test_7_a_string_or_comment_of_many_dotted_parts_reads_as_tomllib_reads_it(text: str) -> None:
    from passprice import schema

    assert schema.deep_key(text) is None
    assert _tomllib(text)[0] == "doc"
    _agree(text)


@pytest.mark.parametrize(("text", "at"), [
    (f"{DOTS} = 1\n", (1, 1)),
    (f"[{DOTS}]\n", (1, 2)),
    (f"[[x.{DOTS}]]\n", (1, 3)),
    ('"a"' + '."a"' * 99 + " = 1\n", (1, 1)),  # quoted parts
    (f'n = "{DOTS}"\n{DOTS} = 1\n', (2, 1)),  # a key after a string of the same dots
    (f'x = {{ n = "q.", {DOTS} = 1 }}\n', (1, 17)),  # an inline table's key after a string ending in a dot
    (f'x = """a""""\n{DOTS} = 1\n', (2, 1)),
    (f"x = 1 # c\n{DOTS} = 1\n", (2, 1)),
])
def test_7_a_key_of_many_dotted_parts_is_still_refused(text: str, at: tuple[int, int]) -> None:
    from passprice import schema

    assert _tomllib(text)[0] == "doc"  # valid TOML, refused for what it would cost tomllib
    assert schema.deep_key(text) == at
    with pytest.raises(tomllib.TOMLDecodeError, match=f"more than 64 parts \\(at line {at[0]}, column {at[1]}\\)"):
        schema.toml_loads(text)


def test_7_a_card_with_a_long_dotted_note_reads_end_to_end(tmp_path: Path) -> None:
    # a card's string of 100 dotted parts (valid TOML) is no dotted key: `facts` no longer refuses the file for it
    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "a100_pcie_80gb.toml"
    card.write_text(card.read_text(encoding="utf-8") + f"# {DOTS}\n", encoding="utf-8")
    result = invoke("--no-cache", "facts", card.stem, root=root)
    assert result.exit_code == 0, result.output
    assert "dotted key" not in result.output
