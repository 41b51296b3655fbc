"""A file name is shown, never obeyed: a newline, a line separator, a right-to-left override or a byte that is not
UTF-8 in a name a user gives (or a file holds) is escaped in the error line, so the line stays one line and reads in
order. Before: `header 'new<LF>line.gguf'` printed two `passprice: error:` lines ("new", then "line.gguf: no such
file"), a U+202E reordered the line on a terminal, and the click printer split at U+2028; `init 'nl<LF>dir'` made
the folder and printed `next: cd nl<LF>dir && …` (two lines, neither runs), `init 'my dir'` printed `cd my dir`, and
`init FIFO` said the FIFO "is a file"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.errors import escaped

R1 = "r1-qwen7b-h200"


def _one_error_line(result_stderr: str) -> str:
    """The one ``passprice: error:`` line of ``result_stderr``, split at "\\n" only (as a terminal would)."""
    lines = result_stderr.split("\n")
    assert len(lines) == 2 and lines[1] == "", repr(result_stderr)
    assert lines[0].startswith("passprice: error: ")
    return lines[0].removeprefix("passprice: error: ")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("new\nline.gguf", "new\\nline.gguf"),
        ("sep\u2028arated.gguf", "sep\\u2028arated.gguf"),
        ("txt\u202eflog.gguf", "txt\\u202eflog.gguf"),
        ("esc\x1b[2Jclear.gguf", "esc\\x1b[2Jclear.gguf"),
        ("bad\udcffbyte.gguf", "bad\\udcffbyte.gguf"),  # a byte that is not UTF-8, as Python passes it on
        ("caf\u00e9 \U0001f999.gguf", "caf\u00e9 \U0001f999.gguf"),  # letters and a space print as they are
    ],
    ids=["newline", "U+2028", "U+202E", "ESC", "not-UTF-8", "printing"],
)
def test_a_missing_header_name_is_escaped_on_one_line(name: str, shown: str, tmp_path: Path) -> None:
    result = invoke("header", str(tmp_path / name))
    assert result.exit_code == 2
    assert _one_error_line(result.stderr) == f"{tmp_path}/{shown}: no such file"


def test_a_fifo_with_a_newline_in_its_name_is_named_on_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe\nname.gguf"
    os.mkfifo(fifo)
    for args in (("header", str(fifo)), ("price", R1, "--checkpoint", str(fifo))):
        result = invoke(*args)
        assert result.exit_code == 2
        assert _one_error_line(result.stderr) == (
            f"{tmp_path}/pipe\\nname.gguf: is a FIFO (named pipe), not a regular file: passprice reads regular files "
            "only"
        )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("price", R1, "--card", "cards/h200\n.toml"), "cards/h200\\n.toml: no such card file"),
        (("price", R1, "--card", "h200\u202e"), "card 'h200\\u202e': not found in"),
        (("price", "odd\u2029serving"), "serving 'odd\\u2029serving': not found in"),
        # keys58: "long array" (header --json's long_array, a GGUF alias) is close too: "did you mean array, GGUF?"
        (("explain", "arr\u2028ay"), "explain: 'arr\\u2028ay' is not a term passprice defines; did you mean array"),
    ],
    ids=["card-path-newline", "card-name-bidi", "serving-U+2029", "explain-U+2028"],
)
def test_names_in_lookups_are_escaped(args: tuple[str, ...], says: str) -> None:
    result = invoke(*args, root=REPO)
    assert result.exit_code == 2
    assert says in _one_error_line(result.stderr)


def test_a_root_with_a_newline_is_one_line(tmp_path: Path) -> None:
    result = invoke("cards", root=tmp_path / "r\noot")
    assert result.exit_code == 2
    assert _one_error_line(result.stderr) == (
        f"{tmp_path}/r\\noot: not a passprice root (it needs facts/ and registry/ folders)"
    )


@pytest.mark.parametrize("name", ["nl\ndir", "bidi\u202eidib", "tab\tdir"])
def test_init_refuses_a_folder_name_that_does_not_print(name: str, tmp_path: Path) -> None:
    dest = tmp_path / name
    result = invoke("init", str(dest))
    assert result.exit_code == 2 and result.stdout == ""
    assert _one_error_line(result.stderr) == (
        f"{tmp_path}/{escaped(name)}: the folder name holds a character that does not print (a newline, a tab, U+202E "
        "…); name the registry with printing characters"
    )
    assert list(tmp_path.iterdir()) == []  # nothing made, not even the staging folder


def test_init_names_a_fifo_and_quotes_the_cd_it_suggests(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = invoke("init", str(fifo))
    assert result.exit_code == 2
    assert _one_error_line(result.stderr) == f"{fifo}: is a FIFO (named pipe); give a folder for the new registry"
    spaced = tmp_path / "my registry"
    made = invoke("init", str(spaced))
    assert made.exit_code == 0, made.output
    assert f"\nnext: cd '{spaced}' && git init && pre-commit install; " in made.stdout
    assert (spaced / "facts/cards").is_dir()


def test_escaped_leaves_printing_text_alone() -> None:
    assert escaped("Table 1, row \u201cH200\u201d \u2014 4.8 TB/s 'x' \\ \u00e9") == (
        "Table 1, row \u201cH200\u201d \u2014 4.8 TB/s 'x' \\ \u00e9"
    )
    assert escaped("a\r\nb\x00\x7f\x85\u2066") == "a\\r\\nb\\x00\\x7f\\x85\\u2066"


def test_explain_cuts_a_very_long_term() -> None:
    # A 100,000-character term was echoed whole: one error line of 100 KB.
    result = invoke("explain", "ab" * 50_000)
    assert result.exit_code == 2
    line = _one_error_line(result.stderr)
    shown = ("'" + "ab" * 50)[:100]  # repr cut to 100 characters, the opening quote counted
    assert line == f"explain: {shown}… is not a term passprice defines (passprice explain lists them)"


def test_what_a_command_wrote_is_named_on_one_line(tmp_path: Path) -> None:
    # `import` of a file whose name holds a newline said "imported …/new<LF>line.gguf as …" over two lines.
    import numpy as np
    from gguf import GGUFWriter

    from importable import importable

    source = tmp_path / "new\nline.gguf"
    w = importable(GGUFWriter(source, "llama"))  # import refuses a header check would fail (walk45)
    w.add_tensor("x", np.zeros((4,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    root = tmp_path / "registry"
    assert invoke("init", str(root)).exit_code == 0
    result = invoke("import", str(source), "--name", "odd", root=root)
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.split("\n")[:-1]
    entry = "registry/checkpoints/odd.toml"  # relative to the registry, as lock names a lock (left29b)
    assert line.startswith(f"imported {tmp_path}/new\\nline.gguf as odd: {entry} (1 tensors")


def test_a_newline_in_the_name_of_a_file_that_does_not_read_stays_on_its_line(tmp_path: Path) -> None:
    """Before: a header cut short, a card that is not TOML and a trace line that is not JSON, each in a file whose
    name holds a newline, printed two ``passprice: error:`` lines (``…/bad``, then ``name.gguf: header ends …``):
    the name's newline split the error. An error of one problem is one line whatever its text holds."""
    header = tmp_path / "bad\nname.gguf"
    header.write_bytes(b"GGUF\x03\x00\x00\x00\x01")
    card = tmp_path / "bad\ncard.toml"
    card.write_text("x = [")
    trace = tmp_path / "t\nr.jsonl"
    trace.write_text('{"arrival_s": 0,\n')
    cases = [
        (("header", str(header)), f"{tmp_path}/bad\\nname.gguf: header ends at byte 9 while reading the tensor count"),
        (("price", R1, "--checkpoint", str(header)),
         f"{tmp_path}/bad\\nname.gguf: header ends at byte 9 while reading the tensor count"),
        (("price", R1, "--card", str(card)),  # round 5: a name that does not print is refused before it is read
         f"{tmp_path}/bad\\ncard.toml: the name bad\\ncard holds a character that does not print (a control "
         "character, a bidi control, an invisible, private-use or unassigned character or a byte that is not "
         "UTF-8): it would be shown on every line naming the record; rename the file"),
        (("simulate", R1, "--trace", str(trace)),
         f"{tmp_path}/t\\nr.jsonl:1: not JSON: Expecting property name enclosed in double quotes (column 17)"),
    ]
    for args, line in cases:
        result = invoke(*args)
        assert result.exit_code == 2, args
        assert _one_error_line(result.stderr) == line


def test_an_error_of_several_problems_prints_one_line_each() -> None:
    """``InputError.of`` keeps its problems apart; ``InputError(text)`` is one problem even when ``text`` has a
    newline."""
    from passprice.errors import InputError, problem_lines

    several = InputError.of(["a.toml: x: bad", "b\nc.toml: y: bad"])
    assert several.lines == ("a.toml: x: bad", "b\nc.toml: y: bad")
    assert str(several) == "a.toml: x: bad\nb\nc.toml: y: bad"
    assert InputError("b\nc.toml: y: bad").lines == ("b\nc.toml: y: bad",)
    assert problem_lines(ValueError("one\ntwo")) == ["one", "two"]
