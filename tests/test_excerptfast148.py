"""A stored excerpt read by whole-text searches, its lines numbered when shown, its bytes hashed once (issue 13).

A review of a change where 40 records name one rewritten excerpt of 900,000 bytes (tests/test_attack133.py builds
it) took 2.7-3.5 s of CPU: the excerpt's sections, header and numbered lines were read one Python step a line on
each side, each of its 450,000 lines was paired with its number for the comparison, and its bytes were read and
hashed 360 times. Now the sections, the header's declarations, the text and a flat text with no numbered line are
found by searches of the whole text (:func:`passprice.sources._excerpt_lines`), a section's lines carry their
numbers as runs (:class:`passprice.sources.NumberedLines`), and bytes hashed before take their digest
(:func:`passprice.sources.excerpt_sha256`). docs/PERFORMANCE.md has the figures. What each reads must be what the
line-by-line reading gave; these are its edge cases, each value worked by hand.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from passprice import sourcechange, sources

B = "\x01"  # sources._BARRIER


def test_lines_split_at_every_line_break_python_knows() -> None:
    # U+2028, CRLF and a form feed end lines as a newline does; the header declares pages of section a alone
    data = "# Numbers are pages: a\u2028== a p https://x ==\r\n1\tfoo  bar\x0c3\tbaz\n== b ==\n2\tq"
    assert sources._excerpt_lines(data, "a") == ("foo  bar\nbaz", {1: "foo bar", 3: "baz"}, True,
                                                 f"foo bar {B} baz")
    # no section of z: the header's lines that are not '#' and every section's, in the order first headed
    assert sources._excerpt_lines(data, "z") == ("foo  bar\nbaz\nq", {1: "foo bar", 3: "baz", 2: "q"}, False,
                                                 f"foo bar {B} baz {B} q")


def test_a_section_headed_twice_is_one_text_and_a_heading_with_no_lines_none() -> None:
    data = "intro\n== s ==\n1\tx\n== t ==\n== s ==\n2\ty\n"
    assert sources._excerpt_lines(data, "s") == ("x\ny", {1: "x", 2: "y"}, False, "x y")
    assert sources._excerpt_lines(data, "t") == ("", {}, False, "")
    assert sources._excerpt_lines(data, "u") == ("intro\nx\ny", {1: "x", 2: "y"}, False, "intro x y")


@pytest.mark.parametrize(("data", "read"), [
    ("1\n1\n2\n", ("1\n1\n2", {}, False, "1 1 2")),  # no tab: nothing numbered
    (f"a{B}b\n  c  d\n", (f"a{B}b\n  c  d", {}, False, "a b c d")),  # a barrier in the text read as a blank
    ("1234567\tbig\n007\tz\n", ("big\nz", {7: "z"}, False, "1234567 big z")),  # seven digits: no page, cut still
    ("#x\n# Numbers are pages\nkept\n", ("kept", {}, True, "kept")),  # the header's '#' lines are not the text
    ("# numbers are Pages\nkept\n", ("kept", {}, False, "kept")),  # not the declaration as written
])
def test_a_text_with_no_section(data: str, read: tuple[str, dict[int, str], bool, str]) -> None:
    assert sources._excerpt_lines(data, "s") == read


def test_a_section_s_lines_are_numbered_as_the_file_numbers_them() -> None:
    data = b"== s ==\nx\ny\n== t ==\nz\n== s ==\nw\n"
    digest, key, lines = sources.excerpt_raw_section(data, "s")
    assert (digest, key, lines.texts) == (hashlib.sha256(data).hexdigest(), "s", ("x", "y", "w"))
    assert [lines.number(i) for i in range(3)] == [2, 3, 7]
    _, key, whole = sources.excerpt_raw_section(data, "q")  # no section of q: the whole file, headings too
    assert (key, whole.texts[4], [whole.number(i) for i in range(7)]) == (None, "z", [1, 2, 3, 4, 5, 6, 7])
    with pytest.raises(IndexError):
        lines.number(3)


def test_the_changed_lines_of_a_section_headed_twice_are_shown_at_their_numbers(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    for side, last in ((base, "w"), (head, "v")):
        (side / "sources" / "excerpts").mkdir(parents=True)
        (side / "sources" / "excerpts" / "e.txt").write_text(f"== s ==\nx\ny\n== t ==\nz\n== s ==\n{last}\n",
                                                              encoding="utf-8")
    shown = sourcechange._section_changes(SimpleNamespace(path=base), SimpleNamespace(path=head), "s",  # type: ignore[arg-type]
                                          "sources/excerpts/e.txt", "sources/excerpts/e.txt", {},
                                          sourcechange._ExcerptBytes())
    assert shown == ("BASE line 7: w", "HEAD line 7: v")


def test_bytes_alike_at_both_ends_are_hashed_each() -> None:
    # the digests kept are taken by bytes equal throughout, never by length and ends alone
    one = b"a" * 64 + b"1" * 100_000 + b"z" * 64
    two = b"a" * 64 + b"1" * 49_999 + b"2" + b"1" * 50_000 + b"z" * 64
    for data in (one, two, one, two):
        assert sources.excerpt_sha256(data) == hashlib.sha256(data).hexdigest()
