"""The token count of another checkout's pricing-model code, made cheaper with the same counts (issue 13's 2-second
bound at ``pins.MODEL_TOKENS``; docs/PERFORMANCE.md, "The pricing-model cap's count, cheaper").

``pins._count_tokens`` counted each reading's tokens with ``len(_token().findall(text))``, a ``bytes`` object a
token, and found comments and string literals with a pattern that tried an alternation at every byte of a literal's
body. Now the tokens are counted by one ``translate`` into byte classes and ``bytes.count`` (``pins._tokens_in``),
and a body is matched as runs of plain bytes between escapes. Neither may change a count: the cap's refusals, the
package's own count (``own_tokens``) and the f-string work are what they were, so these tests hold the new forms to
the old ones on every module of this checkout, a slice of the standard library, fuzzed texts, and hand-counted
examples.
"""

from __future__ import annotations

import random
import re
import sysconfig
from pathlib import Path

import pytest

from passprice import pins

REPO = Path(__file__).resolve().parent.parent

#: The literal body's pattern as it was (one alternation a byte), for the comparison.
OLD_BODY = (rb"'''(?:[^'\\]|\\(?:\r\n|.)|'(?!''))*(?:'''|\Z)"
            rb'|"""(?:[^"\\]|\\(?:\r\n|.)|"(?!""))*(?:"""|\Z)'
            rb"|'(?:[^'\\\r\n]|\\(?:\r\n|.))*'?"
            rb'|"(?:[^"\\\r\n]|\\(?:\r\n|.))*"?')


def patterns(body: bytes) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """``pins._unspoken`` and ``pins._literal`` as made from ``body``."""
    fstring = rb"((?<!\w)(?:[fF][rR]?|[rR][fF])(?:" + body + rb"))"
    other = rb"(?:(?<!\w)[rRbBuU]{1,2})?(?=(['\"]))(?:" + body + rb")"
    unspoken = re.compile(pins._STARTS + rb"(?:#[^\r\n]*|" + fstring + rb"|" + other + rb")", re.DOTALL)
    literal = re.compile(pins._STARTS + rb"(?:#[^\r\n]*|" + pins._PREFIX + rb"(" + body + rb"))", re.DOTALL)
    return unspoken, literal


OLD_UNSPOKEN, OLD_LITERAL = patterns(OLD_BODY)


def old_count(data: bytes) -> int:
    """``pins._count_tokens`` as it was: the old patterns, a ``findall`` of tokens."""
    count = 0
    for reading in pins._as_parsed(data):
        text = OLD_UNSPOKEN.sub(rb"\1\2", reading)
        count += len(pins._token().findall(text)) + pins.FIELD_TOKENS * text.count(b"{")
    return count


def old_fstring_work(data: bytes) -> int:
    """``pins._fstring_work`` as it was, with the old literal pattern."""
    return sum(
        sum(body.count(b"{") * len(body) for prefix, body in OLD_LITERAL.findall(text) if prefix in pins._F_PREFIXES)
        for text in pins._as_parsed(data)
    )


def texts() -> list[bytes]:
    """Every module of this checkout (``src``, ``tests``, ``benchmarks``, ``docs``) and the standard library's first
    60 top-level modules by name (``__future__`` to ``genericpath``; the whole standard library, 13,891 modules with
    this checkout's, was compared once: docs/PERFORMANCE.md)."""
    files = sorted(p for folder in ("src", "tests", "benchmarks", "docs") for p in (REPO / folder).rglob("*.py"))
    files += sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:60]
    return [p.read_bytes() for p in files]


def fuzzed(count: int, seed: int) -> list[bytes]:
    """``count`` short texts of the pieces where a literal, a comment, a token or a line break begins or ends."""
    pieces = [b"'", b'"', b"'''", b'"""', b"\\", b"\r\n", b"\r", b"\n", b"a", b"f", b"r", b"b", b"#", b"{", b" ",
              b"\\\r\n", b"\t", b"\x0b", b"\x0c", b"\x80", b"\xff", b"\x00", b"_", b"9", b"=", b"x;"]  # fmt: skip
    rng = random.Random(seed)
    return [b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 16))) for _ in range(count)]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (b"", 0),
        (b"x = [a,a]\n", 8),  # x = [ a , a ] and the line break
        (b"a\r\nb\rc\nd", 7),  # \r\n, \r and \n one line break each
        (b"\xff\xfe a1_b \t\x0b\x0c", 3),  # a byte past ASCII a token each, a word run one, blanks none
        (b"ab", 1),
        (b"  ab", 1),
        (b"\r\r\n\n", 3),
        (b"a.b(c)", 6),
    ],
)
def test_tokens_in_counts_by_hand(text: bytes, tokens: int) -> None:
    assert pins._tokens_in(text) == tokens
    assert len(pins._token().findall(text)) == tokens


def test_count_tokens_by_hand() -> None:
    # x = f'{a}' (f, ', {, a, }, ': the f-string whole) and a line break: 9; the comment no token; y = ' (a plain
    # literal its opening quote) and a line break: 4; the one { counts FIELD_TOKENS (2) more: 15.
    data = b"x = f'{a}' # c\ny = 'abc'\n"
    assert pins._count_tokens(data) == 15 == old_count(data)


def test_the_count_is_the_old_count_on_every_module() -> None:
    for data in texts():
        assert pins._tokens_in(data) == len(pins._token().findall(data))
        assert pins._count_tokens(data) == old_count(data)


def test_the_literal_patterns_match_as_the_old_ones() -> None:
    for data in texts() + fuzzed(10_000, 123):
        assert pins._unspoken().sub(rb"\1\2", data) == OLD_UNSPOKEN.sub(rb"\1\2", data), data[:80]
        assert pins._literal().findall(data) == OLD_LITERAL.findall(data), data[:80]
        assert pins._fstring_work(data) == old_fstring_work(data), data[:80]


def test_the_count_is_the_old_count_on_fuzzed_and_random_bytes() -> None:
    rng = random.Random(5)
    for data in fuzzed(10_000, 9) + [rng.randbytes(rng.randrange(0, 4000)) for _ in range(200)]:
        assert pins._tokens_in(data) == len(pins._token().findall(data)), data
        assert pins._count_tokens(data) == old_count(data), data


def test_the_cap_forms_count_as_before() -> None:
    # benchmarks/digest89.py's forms at the cap: a module of N units counts what the old count says, so the cap
    # admits and refuses the same modules (tests/test_hostile_11.py holds the boundary itself).
    units = [b"a,", b"a\n", b"a;", b"a\r", b"lambda:a,", b"if a:a\n", b"a\x0c\n", b"f'{a}{a}{a}' ", b"# c\n",
             b"'x' 'y'\n", b"b'''\\\r\n'''\n"]  # fmt: skip
    for unit in units:
        data = b"x = [" + unit * 5_000 + b"]\n"
        assert pins._count_tokens(data) == old_count(data), unit


def test_the_same_bytes_are_counted_once_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # A review counts both sides' modules, which share all but the changed ones: the second count is the first's.
    data = b"x = [" + b"a," * 1_000 + b"] # counted once\n"
    cut: list[bytes] = []
    real = pins._parsed_text
    monkeypatch.setattr(pins, "_parsed_text", lambda reading: cut.append(reading) or real(reading))
    assert pins._count_tokens(data) == 2_005 == pins._count_tokens(bytes(data))  # x = [, 1,000 a and ",", ], \n
    assert cut == [data]
    assert pins._count_tokens(data + b"\n") == 2_006
    assert len(cut) == 2
