"""Session 37, suite43: a file read from one of passprice's own temporary folders (``TMPDIR/passprice-*``: the
private copies of BASE and HEAD a review writes and removes) has its status recorded for the rest of the process only,
never written to the record file (:mod:`passprice.filestamps`). Before, each review added about 25 records of files
already removed, so the record file filled to its 16,384 records and every later process read and rewrote 1.4 MB for
records that could never name a file again. No timing: records and hashes are counted."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from passprice import filestamps
from test_racy_42 import CARD, cache_dir, later, run  # noqa: F401  (cache_dir: the fixture)


def records(folder: Path) -> dict[object, object]:
    """The records of the record file in the cache folder ``folder`` (none written: none)."""
    files = list((folder / "stamps").glob("*.stamps"))
    assert len(files) <= 1
    if not files:
        return {}
    kept = filestamps._parsed(files[0].read_bytes(), files[0].name[:64])
    assert kept is not None
    return kept[1]


def test_a_temporary_copy_s_file_is_never_written_to_the_records(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    scratch = tmp_path / "passprice-diff-abc123" / "facts"
    scratch.mkdir(parents=True)
    copy = scratch / "a100.toml"
    shutil.copyfile(CARD, copy)
    assert filestamps._scratch(str(copy)) and not filestamps._scratch(str(tmp_path / "mine" / "a100.toml"))
    later(monkeypatch)
    key = (copy.stat().st_dev, copy.stat().st_ino)
    for _ in range(2):  # each run a process: hashed each time, never written (the schema file read beside it is)
        _, hashed = run(monkeypatch, copy)
        assert hashed == [copy.stat().st_size]
        assert key not in records(cache_dir)
    # A file of the user's beside it is recorded as ever.
    mine = tmp_path / "mine.toml"
    shutil.copyfile(CARD, mine)
    run(monkeypatch, mine)
    assert (mine.stat().st_dev, mine.stat().st_ino) in records(cache_dir) and key not in records(cache_dir)
    _, hashed = run(monkeypatch, mine)
    assert hashed == []


def test_a_temporary_copy_s_record_serves_the_rest_of_its_process(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    scratch = tmp_path / "passprice-recomputed-x"
    scratch.mkdir()
    copy = scratch / "a100.toml"
    shutil.copyfile(CARD, copy)
    later(monkeypatch)
    data = copy.read_bytes()
    st = copy.stat()
    filestamps.seen(st, st, filestamps.clock(), data, str(copy))
    filestamps._learn((st.st_dev, st.st_ino), (st.st_size, st.st_mtime_ns, st.st_ctime_ns), str(copy), b"d" * 32)
    assert filestamps._records is not None and (st.st_dev, st.st_ino) in filestamps._records  # looked up as any
    assert (st.st_dev, st.st_ino) in filestamps._transient
    filestamps.flush()
    assert not (cache_dir / "stamps").exists() and not filestamps._transient
