"""Attack74 (issue 13, against this session's merges): each escape's failing input kept as a test, built here."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root
from test_left52 import _git

_BLOCKS = ("a FIFO (named pipe), where git reads an object of its repository: git would block reading it (or read "
           "without end), so passprice runs no git here; make it a regular file or remove it")


def _two_commits(tmp_path: Path) -> tuple[Path, Path, str]:
    """A copy of the registry in a repository of two commits (the H200 card's capacity 141 -> 140), no locks: its
    root, its object folder and the changed card's blob id."""
    root = copy_root(tmp_path)
    for lock in (root / "locks").glob("*.lock.toml"):
        lock.unlink()
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "one")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("\nvalue = 141\n", "\nvalue = 140\n"), encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "two")
    return root, root / ".git" / "objects", _git(root, "rev-parse", "HEAD:facts/cards/h200_sxm_141gb.toml")


def test_a_fifo_in_a_linked_fan_out_folder_is_named(tmp_path: Path) -> None:
    # Before: objects/aa a link to a folder (git follows it) holding the changed blob as a FIFO: the look through
    # the loose objects passed the link over, and `diff HEAD~1 HEAD` waited in git ls-tree for git's time limit:
    # "git ls-tree: took longer than 60.0 s", exit 2, 60.7 s, naming nothing. Now the FIFO is named before git runs.
    root, objects, blob = _two_commits(tmp_path)
    real = tmp_path / "fan-out"
    (objects / blob[:2]).rename(real)
    (objects / blob[:2]).symlink_to(real)
    (real / blob[2:]).unlink()
    os.mkfifo(real / blob[2:])
    started = time.monotonic()
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {objects / blob[:2] / blob[2:]}: {_BLOCKS}"]
    assert time.monotonic() - started < 20.0


def test_a_fifo_in_an_alternate_object_folder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the blob moved to an alternate object folder (objects/info/alternates naming it) as a FIFO: `diff`
    # waited for git's time limit, "git ls-tree: took longer than 60.0 s", exit 2, 60.9 s. Now named before git runs;
    # as is an alternate named by a relative path, an alternate of an alternate, and GIT_ALTERNATE_OBJECT_DIRECTORIES.
    root, objects, blob = _two_commits(tmp_path)
    (objects / blob[:2] / blob[2:]).unlink()
    alternate = tmp_path / "alt" / "objects"
    (alternate / blob[:2]).mkdir(parents=True)
    fifo = alternate / blob[:2] / blob[2:]
    os.mkfifo(fifo)
    (objects / "info").mkdir(exist_ok=True)
    (objects / "info" / "alternates").write_text(f"# shared\n{alternate}\n", encoding="utf-8")
    started = time.monotonic()
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [f"passprice: error: {fifo}: {_BLOCKS}"]
    assert time.monotonic() - started < 20.0
    # two steps away, by a relative path
    middle = tmp_path / "middle" / "objects"
    (middle / "info").mkdir(parents=True)
    (middle / "info" / "alternates").write_text("../../alt/objects\n", encoding="utf-8")
    (objects / "info" / "alternates").write_text(f"{middle}\n", encoding="utf-8")
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [f"passprice: error: {fifo}: {_BLOCKS}"]
    # the middle one's list itself a FIFO: git would block reading it
    (middle / "info" / "alternates").unlink()
    os.mkfifo(middle / "info" / "alternates")
    (lines,) = [bad("diff", "HEAD~1", "HEAD", root=root)]
    assert lines == [f"passprice: error: {middle / 'info' / 'alternates'}: a FIFO (named pipe), where git reads its "
                     "repository's own files: git would block reading it (or read without end), so passprice runs "
                     "no git here; make it a regular file or remove it"]
    # named by the environment alone
    (objects / "info" / "alternates").unlink()
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", str(alternate))
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [f"passprice: error: {fifo}: {_BLOCKS}"]


def test_a_corrupt_or_cut_xz_stream_is_named_by_its_offset(tmp_path: Path) -> None:
    # Before: a multi-stream .xz (left52) whose second stream's index was flipped read "cannot decompress: Corrupt
    # input data", and one whose second stream was cut short "cannot decompress: Compressed file ended before the
    # end-of-stream marker was reached": no byte offset, no word of which stream. Now the stream's first byte.
    import lzma

    from test_left52 import _tiny_header

    data = _tiny_header(tmp_path / "h.gguf")
    first, second = lzma.compress(data[:100]), bytearray(lzma.compress(data[100:]))
    second[-20] ^= 0xFF  # in the stream's index
    start = len(first) + 4
    corrupt = tmp_path / "c.gguf.xz"
    corrupt.write_bytes(first + b"\0" * 4 + bytes(second))
    assert bad("header", str(corrupt)) == [
        f"passprice: error: {corrupt}: cannot decompress: byte {start:,}: the xz stream starting there: Corrupt "
        f"input data (found within its first {len(second):,} bytes)"]
    cut = tmp_path / "cut.gguf.xz"
    cut.write_bytes(first + b"\0" * 4 + lzma.compress(data[100:])[:-12])
    assert bad("header", str(cut)) == [
        f"passprice: error: {cut}: cannot decompress: byte {start + len(second) - 12:,}: the file ends inside the xz "
        f"stream starting at byte {start:,} (its end-of-stream marker never came)"]


def _cut_keeping_figure_before(text: str, limit: int, figure: float) -> str:
    """textchange.cut_keeping_figure as it was before attack74 (a search back and forth from every number)."""
    from passprice.textchange import _NUMBER, cut_at_word, figure_read

    if len(text) <= limit:
        return text
    for number in _NUMBER.finditer(text):
        if figure_read(number.group()) != figure:
            continue
        spans = [(text.rfind(mark, 0, number.start()), text.find(mark, number.end())) for mark in "'\""]
        spans = [(start, end) for start, end in spans if start >= 0 and end >= 0]
        if not spans:
            continue
        start, end = max(spans)
        head, quote, tail = text[:start], text[start:end + 1], text[end + 1:]
        cut = cut_at_word(head, limit)
        joined = cut + (" " if cut != head and cut.endswith("…") else "") + quote
        return joined + ("…" if tail.strip() else tail)
    return cut_at_word(text, limit)


def test_a_locator_of_many_equal_figures_is_cut_in_one_pass() -> None:
    # Before: cut_keeping_figure searched back to the text's start and on to its end for a quote mark from every
    # number equal to the figure: a 1 MB locator of 250,000 '4.9 ' took 9.6 s of CPU (0.39 s for a card file's
    # 256 KiB, a review cutting one such locator per changed fact); now each mark's offsets are found once, 0.26 s.
    # Here 600 KB: 1.7 s of CPU before, about 0.15 s now.
    import random

    from passprice.textchange import cut_keeping_figure

    text = "4.9 " * 150_000 + "'4.9 TB/s' end"
    assert cut_keeping_figure(text, 100, 4.9) == "4.9 " * 24 + "4.9… '4.9 TB/s'…"
    assert cut_keeping_figure("4.9 " * 150_000, 100, 4.9) == "4.9 " * 24 + "4.9…"
    # the same cuts as before on drawn texts of numbers, quote marks and words
    draw = random.Random(74)
    parts = ["4.9", "1,024", "2e3", "'", '"', " ", "GB", "x", "4.90", ".", "0"]
    for _ in range(3000):
        text = "".join(draw.choice(parts) for _ in range(draw.randrange(1, 40)))
        limit, figure = draw.randrange(1, 30), draw.choice((4.9, 1024.0, 2000.0, 0.0))
        assert cut_keeping_figure(text, limit, figure) == _cut_keeping_figure_before(text, limit, figure), text


def test_blobs_read_together_past_their_total_cap_are_refused_unread(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: read_named capped each blob (64 MiB) but not their sum: `audit` of r1-qwen7b-h200's lock whose cited
    # source records were committed at 60 MiB each (a comment of zeros; 2.6 MB of .git) read them all, exit 0,
    # 1.97 s, 415,616 KB of memory, and each further record cited added 64 MiB. Now past gitread.NAMED_TOTAL_BYTES
    # (64 MiB) in all: exit 2, one line naming the largest COMMIT:PATH, 0.42 s, 47,584 KB. Forced small here.
    from passprice import gitread

    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.toml").write_bytes(b"a = 1\n")
    (tmp_path / "b.toml").write_bytes(b"#" * 60)
    (tmp_path / "c.toml").write_bytes(b"#" * 60)  # the same blob as b.toml: counted once
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "--no-verify", "-m", "one")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    names = [f"{commit}:a.toml", f"{commit}:b.toml", f"{commit}:c.toml"]
    monkeypatch.setattr(gitread, "NAMED_TOTAL_BYTES", 66)
    assert gitread.read_named(tmp_path, names) == {names[0]: b"a = 1\n", names[1]: b"#" * 60, names[2]: b"#" * 60}
    monkeypatch.setattr(gitread, "NAMED_TOTAL_BYTES", 65)
    with pytest.raises(gitread.BlobTooLarge) as refused:
        gitread.read_named(tmp_path, names)
    assert str(refused.value) == (
        f"{commit}:b.toml: 66 bytes as committed in 2 files read together (this one 60), past the 65-byte cap on "
        "what passprice reads from git at once (gitread.NAMED_TOTAL_BYTES; none read)")
    # an audit: exit 2, that one line
    root = copy_root(tmp_path / "r")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a registry")
    monkeypatch.setattr(gitread, "NAMED_TOTAL_BYTES", 100)
    (line,) = bad("audit", str(root / "locks" / "r1-qwen7b-h200.lock.toml"), root=root)
    assert line.startswith("passprice: error: ") and line.endswith(
        "past the 100-byte cap on what passprice reads from git at once (gitread.NAMED_TOTAL_BYTES; none read)")
