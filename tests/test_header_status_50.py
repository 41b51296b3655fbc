"""A plain GGUF file's header seen before is served without reading its bytes again once the file's status vouches
for them (``gguf_header._status_stamp``: device, inode, size, modification and change times, trusted only when the
change time is older than ``memo.TRUST_NS`` on a file system that keeps it): the second read hashes the bytes and
vouches for the status, later reads neither open nor hash the file. An edit in place (same size, modification time
put back) moves the change time and is parsed; a reader that needs the long arrays' digests reads the bytes as ever;
`passprice header` imports no ``passprice.check`` for a header with nothing to warn of (issue 16, speed50)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from passprice import gguf_header, memo
from passprice.gguf_header import LongArray, clear_cache, read_header
from test_header_seen_before import Walks, entries, write


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(folder))
    clear_cache()
    return folder


def aged(path: Path) -> Path:
    """``path``, once its change time is older than the memo's trust window (its status then vouches)."""
    st = path.stat()
    if not memo.keeps_ctime(st.st_dev, str(path)):
        pytest.skip("the temporary folder's file system does not keep ctime: no status vouches there")
    time.sleep(memo.TRUST_NS[st.st_ctime_ns % 1_000_000_000 == 0] / 1e9 + 0.02)
    return path


class Opens:
    """Counts the header bytes read and hashed again (``_seen_before``'s ``open_regular``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = gguf_header.open_regular

        def counting(path: Path | str, buffering: int = -1) -> object:
            self.count += buffering == -1  # the parser opens its file unbuffered
            return real(path, buffering)

        monkeypatch.setattr(gguf_header, "open_regular", counting)


def test_a_vouched_status_serves_the_header_unread(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = aged(write(tmp_path / "m.gguf"))
    parsed = read_header(path, cache=False)
    walks, opens = Walks(monkeypatch), Opens(monkeypatch)
    read_header(path, array_digests=False)  # a first read, as `passprice header` makes it: parsed and kept
    assert walks.count == 1 and len(entries(cache_dir)) == 1  # kept in one entry, nothing vouched yet
    clear_cache()
    second = read_header(path, array_digests=False)
    assert (walks.count, opens.count) == (1, 1) and len(entries(cache_dir)) == 2  # read and hashed; vouched
    clear_cache()
    third = read_header(path, array_digests=False)
    assert (walks.count, opens.count) == (1, 1)  # neither walked nor read
    assert third == second == parsed and repr(third) == repr(second)
    assert third.sha256 == parsed.sha256 and third.source == str(path)
    # A reader that needs the long arrays' digests makes them from the bytes: read, hashed, the parse's digests.
    clear_cache()
    full = read_header(path)
    assert opens.count == 2 and walks.count == 1
    assert full.metadata["tokenizer.ggml.tokens"] == parsed.metadata["tokenizer.ggml.tokens"]
    assert isinstance(full.metadata["tokenizer.ggml.tokens"], LongArray)
    assert full.metadata["tokenizer.ggml.tokens"].sha256 == parsed.metadata["tokenizer.ggml.tokens"].sha256


def test_an_edit_in_place_moves_the_status_and_is_parsed(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = aged(write(tmp_path / "m.gguf", after=7))
    for _ in range(2):  # kept, then vouched for
        clear_cache()
        assert read_header(path, array_digests=False).metadata["t.after"] == 7
    st = path.stat()
    edited = write(tmp_path / "other.gguf", after=9).read_bytes()
    assert len(edited) == st.st_size
    path.write_bytes(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same size and modification time
    clear_cache()
    walks = Walks(monkeypatch)
    assert read_header(path, array_digests=False).metadata["t.after"] == 9
    assert walks.count == 1  # the status moved (its change time): the bytes read, the hash missed, parsed


def test_a_stamp_vouches_only_for_the_sha256_it_was_kept_with(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import cache

    path = aged(write(tmp_path / "m.gguf"))
    for _ in range(2):
        clear_cache()
        read_header(path, array_digests=False)
    real, cap = os.path.realpath(path), gguf_header.header_cap()
    stamp = gguf_header._status_stamp(real)
    assert stamp is not None
    kept = cache.kept_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), tuple)
    assert kept is not None
    assert cache.kept_object(gguf_header._STAMP_KIND, gguf_header._stamp_data(real, cap, stamp), str) == kept[8]
    # The header entry replaced by one of another sha256: the stamp does not vouch for it; the bytes are hashed.
    cache.keep_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), (*kept[:8], "0" * 64, kept[9]))
    assert gguf_header._seen_before(real, Path(path), cap, False, stamp) is None
    # A file changed lately vouches for nothing.
    monkeypatch.setattr(memo, "TRUST_NS", (10**18, 10**18))
    assert gguf_header._status_stamp(real) is None


def test_header_imports_no_check_for_a_header_without_problems(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`passprice header` of a header fit to price prints no warning and never imports passprice.check (cards,
    facts, drafts, routing: about a tenth of the command's imports); a header with a problem is warned of as ever."""
    from click.testing import CliRunner

    from passprice.cli import cli

    fit = tmp_path / "fit.gguf"
    fit.write_bytes((Path(__file__).parent / "data" / "qwen35-27b-like.header.gguf").read_bytes())
    unfit = write(tmp_path / "unfit.gguf")  # no embedding_length: warned of
    runner = CliRunner()
    monkeypatch.setitem(sys.modules, "passprice.check", None)  # importing it now raises ImportError
    done = runner.invoke(cli, ["header", str(fit)])
    assert done.exit_code == 0 and "warning" not in done.output, done.output
    monkeypatch.delitem(sys.modules, "passprice.check")
    done = runner.invoke(cli, ["header", str(unfit)])
    assert done.exit_code == 0
    assert "passprice: warning: " in done.output and "(check, checkpoints and every price refuse it)" in done.output
