"""A price run afresh (``PASSPRICE_NO_MEMO=1``, the cache warm) and the shape check of a large file (issue 16).

Every price of ``r1-qwen7b-h200`` reads its serving's three locks, one of them the 171 KB
``locks/r1-qwen7b-h200-llamacpp.lock.toml``, and checks each file's shape before anything is built from it
(:func:`passprice.schema.shape_problem`). That lock's raw dots (13,663: most in its notes and locators) are past the
10,789 its size allows, so its strings and comments were taken out and counted again, and two searches
(:func:`passprice.schema._refused_first`) ran besides: 81.7 M of a price's 494.9 M instructions (callgrind, hash seed
0). Now (docs/PERFORMANCE.md, round afresh125):

- the one-line string pattern takes a string's body possessively (``*+``), the same matches as the alternation it
  replaced, in a third of the instructions (checked here against the old pattern on every shipped TOML file and on
  random texts of quotes, escapes, line ends and dots);
- :func:`~passprice.schema._refused_first` is asked only when the counts without strings are still past a cap (it can
  only turn a refusal into none);
- the five separators are counted in one pass (``bytes.translate``);
- the verdict of a file of :data:`~passprice.schema.SHAPE_KEPT_FROM` bytes or more that is past a raw count is kept in
  the cache, keyed by the kind, the three caps and the bytes, as ``""`` for none: the same verdict, refusal text and
  all, from the entry as from the count.

And a price afresh imports none of NumPy, jsonschema, tomlkit, tomllib or matplotlib (the commands that need them
import them when they run).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from passprice import cache, schema

REPO = Path(__file__).resolve().parent.parent
LLAMACPP_LOCK = REPO / "locks" / "r1-qwen7b-h200-llamacpp.lock.toml"

#: The one-line string pattern before this round: an alternation of a plain byte and an escape, repeated.
OLD_ONE_LINE_STRING = re.compile(rb'"(?:[^"\\\n]|\\[^\n])*\\?(?:"|(?=\n)|\Z)|\'[^\'\n]*(?:\'|(?=\n)|\Z)')


def _old_separators(data: bytes) -> int:
    return data.count(b",") + data.count(b"=") + data.count(b".") + data.count(b"[") + data.count(b"{")


def test_the_possessive_string_pattern_takes_out_what_the_alternation_did() -> None:
    texts = [p.read_bytes() for p in sorted(REPO.glob("**/*.toml")) if ".git" not in p.parts]
    assert len(texts) > 50
    alphabet = [b'"', b"'", b"\\", b"\n", b"a", b".", b"#", b",", b" ", b"\xc3\xa9"]
    chosen = random.Random(125)
    texts += [b"".join(chosen.choice(alphabet) for _ in range(chosen.randrange(60))) for _ in range(5000)]
    # by hand: an escaped quote stays inside, a string left open runs to its line's end, a backslash before the
    # line's end is the string's last byte, a literal string has no escapes
    texts += [b'a = "x\\"y" # c\n', b'a = "open.\nb = 1', b'a = "x\\\nb', b"a = 'x\\' . b"]
    pattern = schema._one_line_string()
    for text in texts:
        assert pattern.sub(b"", text) == OLD_ONE_LINE_STRING.sub(b"", text), text
    assert pattern.sub(b"", b'a = "x\\"y" # c\n') == b"a =  # c\n"
    assert pattern.sub(b"", b'a = "open.\nb = 1') == b"a = \nb = 1"
    assert pattern.sub(b"", b"a = 'x\\' . b") == b"a =  . b"


def test_the_separators_are_the_five_bytes_counted() -> None:
    # two '=', two ',', two '.', one '[' and one '{'
    assert schema._separators(b'a = [1, 2.5, {b = "x.y"}]') == 8
    chosen = random.Random(7)
    for _ in range(200):
        text = bytes(chosen.choice(b",=.[{}] a\n\x00\xff") for _ in range(chosen.randrange(100)))
        assert schema._separators(text) == _old_separators(text)


def test_the_llamacpp_lock_is_past_its_raw_dots_and_fits_once_its_strings_are_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = LLAMACPP_LOCK.read_bytes()
    assert len(data) >= schema.SHAPE_KEPT_FROM
    assert data.count(b".") > schema.MAX_DOTS + len(data) // schema.BYTES_A_DOT  # 13,663 > 10,789: counted again
    bare = schema._comments().sub(b"", schema._one_line_string().sub(b"", data))
    assert bare.count(b".") <= schema.MAX_DOTS + len(data) // schema.BYTES_A_DOT

    def asked(*args: object) -> bool:
        raise AssertionError("_refused_first asked of a file within every cap")

    monkeypatch.setattr(schema, "_refused_first", asked)
    assert schema._shape_counted("lock", data, 1 << 15, 1 << 20, 1 << 20) is None
    cache.configure(False)
    try:
        assert schema.shape_problem("lock", data) is None
    finally:
        cache.configure(True)


def _dense(size: int) -> bytes:
    """A card-kind text of about ``size`` bytes: an array of integers, one separator each two bytes."""
    return b"a = [" + b"1," * (size // 2) + b"1]\n"


def test_a_large_files_verdict_is_kept_and_read_back_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _dense(40_000)
    counted = schema._shape_counted("card", data, schema.kind_separators("card"), schema.MAX_DOTS + len(data) // 5,
                                    schema.MAX_DOTS + len(data) // 16)
    # 20,000 commas, one '=' and one '['
    assert counted == ("20,002 separators (',', '=', '.', '[' and '{' outside strings and comments), past the 4,096 a "
                       "card file may hold (the largest shipped holds 625; PASSPRICE_MAX_FILE_BYTES=BYTES raises it "
                       "with the byte cap): not parsed")
    assert schema.shape_problem("card", data) == counted  # counted, then kept
    lock = LLAMACPP_LOCK.read_bytes()
    assert schema.shape_problem("lock", lock) is None

    def not_counted(*args: object) -> str | None:
        raise AssertionError("counted again")

    monkeypatch.setattr(schema, "_shape_counted", not_counted)
    assert schema.shape_problem("card", data) == counted  # from the entry
    assert schema.shape_problem("lock", lock) is None  # "" kept: none
    # another cap is another key: PASSPRICE_MAX_FILE_BYTES at 1 MiB raises a card's separators to 16,384
    monkeypatch.setenv(schema.FILE_BYTES_VARIABLE, str(1 << 20))
    with pytest.raises(AssertionError, match="counted again"):
        schema.shape_problem("card", data)
    monkeypatch.undo()
    # a file under SHAPE_KEPT_FROM is counted every time, never looked up
    small = _dense(20_000)
    looked: list[object] = []
    monkeypatch.setattr(cache, "kept_object", lambda *a, **k: looked.append(a))
    assert schema.shape_problem("card", small) is not None
    assert looked == []


def test_a_kept_verdict_follows_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # other bytes are another entry: the refusal names their own count (one more '=', '[' and ',')
    data = _dense(40_000)
    first = schema.shape_problem("card", data)
    second = schema.shape_problem("card", data + b"b = [1,2]\n")
    assert first is not None and second is not None
    assert first.startswith("20,002 separators") and second.startswith("20,005 separators")


_RUN = """
import sys
sys.argv = ["passprice", "price", "r1-qwen7b-h200", "--json"]
from passprice import entry
try:
    entry._command_line()
except SystemExit as e:
    assert e.code in (0, None), e.code
heavy = ("numpy", "jsonschema", "jsonschema_rs", "tomlkit", "tomllib", "matplotlib")
print("imported:", ",".join(sorted(n for n in sys.modules if n.split(".")[0] in heavy)) or "-")
"""


def test_a_price_afresh_imports_none_of_the_heavy_libraries(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PASSPRICE_NO_MEMO": "1"}
    lines = []
    for _ in range(2):  # the first run fills the cache (validating and parsing: it may import them)
        done = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, timeout=120, cwd=REPO,
                              env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        lines.append(done.stdout.splitlines()[-1])
    assert lines[1] == "imported: -"
