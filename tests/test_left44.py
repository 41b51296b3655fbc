"""Session 38's left44: small defects, each with the input that showed it. A ``--no-cache`` command run in process
left the cache off for the rest of the process (test_perf_28 failed after test_left39: every later header had no
identity); ``sweep --max-tpot`` said nothing of a line whose every batch is refused; the sweep bound's refusal said
"1 pass shapes"; ``errors.json_escaped`` took one callback a character of non-ASCII JSON (the same bytes now, a run
at a time: speed in ``benchmarks/json_escaped.py``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO
from passprice import cache, errors
from passprice.cli import cli
from passprice.errors import InputError, json_escaped
from passprice.registry import find_root
from passprice.sweep import Grid, Sweeper, check_grid

ROOT = find_root(REPO)
HEADER = "tests/data/qwen35-27b-like.header.gguf"


def test_1_a_no_cache_command_run_in_process_leaves_the_cache_on_after_it() -> None:
    """The group's ``--no-cache`` lasts its command: the library called after it keeps what it builds (the group
    callback runs before the subcommand's refusal, so the cache was off when it ended)."""
    assert cache.enabled()
    result = CliRunner().invoke(cli, ["--no-cache", "price"])
    assert result.exit_code == 2 and "give a SERVING, or both --checkpoint and --card" in result.output
    assert cache.enabled()


def test_2_every_line_of_a_capped_sweep_gets_its_summary_line_one_refused_whole_too(tmp_path: Path) -> None:
    """The H200 holds the 27B checkpoint, the RTX 3080's 10 GB do not: before, only the H200's line was said."""
    result = CliRunner().invoke(cli, [
        "sweep", "--checkpoint", str(REPO / HEADER), "--cards", "h200_sxm_141gb,rtx_3080", "--batches", "1-4",
        "--positions", "512", "--max-tpot", "0.05", "-o", str(tmp_path / "capped.csv")])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "TPOT" in line]
    assert len(said) == 2, said
    assert said[0].startswith(f"passprice: {REPO / HEADER} on h200_sxm_141gb: best batch within TPOT ≤ 50 ms: 4, ")
    assert said[1].startswith(f"passprice: {REPO / HEADER} on rtx_3080: no batch within TPOT ≤ 50 ms: every batch "
                              "is refused: NotResident (4 batches) — at batch 1: the card memory must hold ")


def test_3_the_bounds_refusal_counts_one_in_the_singular() -> None:
    grid = Grid(("r1-qwen7b-h200",), range(1, 2), positions=(512.0,))
    with pytest.raises(InputError) as e:
        Sweeper(ROOT, max_rows=1).check(grid)
    assert str(e.value) == (
        "sweep: 1 row (1 serving × 1 card × 1 draft length × 1 position × 1 batch), and 1 pass shape to read, "
        "counting as 2,000: 2,001 rows in all, is more than the 1 row --max-rows allows (about 2 s of CPU a million "
        "rows); split the grid, use a doubling range of batches (1-4096*2), or raise --max-rows (at most "
        "688,000,000)")
    with pytest.raises(InputError, match=r"^sweep: 1 row \(.*\) under --stack, counting as 20: 20 rows in all, is "):
        check_grid(grid, max_rows=19, stacked=True)


def _one_a_character(text: str) -> str:
    """The escaper before left44 (one callback a character outside ASCII): the reference of the bytes."""
    if text.isascii() and "\x7f" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        c = m.group(0)
        if c.isprintable() or c == " ":
            return c
        code = ord(c)
        if code > 0xFFFF:
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return re.sub("[^\x00-\x7e]", one, text)


#: A sample of every class json_escaped looks at: C0 controls (kept: json.dumps escapes those within strings), DEL
#: and the C1 controls, the bidi embeddings, overrides and isolates, U+2028/9, lone surrogates, other characters that
#: do not print (no-break space, soft hyphen, zero-width space, unassigned, private use past U+FFFF, tags), and
#: printable characters outside ASCII (µ, Cyrillic, CJK, an emoji past U+FFFF), alone, in runs and between spaces.
CLASSES = ("\t\n\r\x00\x1f", "\x7f\x80\x85\x9f", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
           "\u2028\u2029", "\ud800\udbff\udc00\udfff", "\xa0\xad\u200b\u0378\U000f0000\U000e0001",
           "µПривет漢字\U0001f600")


def test_4_json_escaped_writes_the_bytes_it_wrote_a_character_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert json_escaped('"ev\u202eil \U000f0000", "Привет мир"') == '"ev\\u202eil \\udb80\\udc00", "Привет мир"'
    assert json_escaped("µs\n\x7f \u2028") == "µs\n\\u007f \\u2028"
    samples = [*CLASSES, "".join(CLASSES), " ".join(CLASSES), "a".join("".join(CLASSES)),
               "".join(chr(c) for c in range(0x7F, 0x110000, 97))]  # a code point in 97 past ASCII
    doc = json.dumps({"k": samples, "\u202e": "Привет мир\u2028"}, ensure_ascii=False, indent=2)
    monkeypatch.setattr(errors, "_ESCAPES_KEPT", 16)  # its table forgotten many times over
    for text in (*samples, doc):
        assert json_escaped(text) == _one_a_character(text)
    # Read back as itself (a high surrogate escaped just before a low one reads back as their pair, as before: the
    # samples keep them apart here).
    apart = json.dumps([re.sub("([\ud800-\udbff])", "\\1 ", text) for text in samples], ensure_ascii=False)
    assert json.loads(json_escaped(apart)) == json.loads(apart)


def test_5_a_mount_table_of_one_long_line_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One line naming the device every 6 bytes (no kernel writes it; 1 MB took 17 s, each occurrence's line cut
    out again): each line is looked at once, its type said once (it was said once an occurrence)."""
    from passprice import memo

    dev = os.makedev(0, 80)
    monkeypatch.setattr(memo, "_mounts", b"1 1 0:80 / /m rw - tmpfs" + b" 0:80 " * 10_000)
    assert memo._types(dev) == [b"tmpfs"]
    monkeypatch.setattr(memo, "_mounts", b"1 1 0:80 / /m rw - tmpfs 0:80 rw\n2 1 0:80 / /n rw - ext4 x\n3 1 0:8 /")
    assert memo._types(dev) == [b"tmpfs", b"ext4"]
