"""Leftovers of session 37's helpers (task left42), each with its reproducer built here.

1. ``check`` of a registry in a checkout of passprice whose ``src/passprice`` is not the running package judged that
   checkout's code once a lock (:func:`passprice.pins.checkout_note` → :func:`passprice.pins.checkout_model`), and
   each judgement hashed every module file of the checkout again (about 10 ms a lock, 12 hashings for 10 locks in a
   cold check): now once a snapshot, the lines unchanged.
2. A record that is a folder (HEAD's ``facts/routing/uniform.toml``, reviewed by ``diff``'s "HEAD fails passprice
   check") was two lines for one problem: "is a folder, not a file" (the folder's validation) and "is a folder, not
   a routing record file" (the serving naming it): now the one line, in the words every lookup by name uses.
3. The file status records (``stamps/KEY.stamps``, :mod:`passprice.filestamps`) were read up to 8 MiB whatever their
   number and trimmed to ``MAX_RECORDS`` only when a process learned a record: a file of 100,000 records (5 MB) cost
   every process 90 ms to read. A file larger than ``MAX_RECORDS`` records is not read (records are of one fixed
   size since session 39, attack68: a file holding more than ``MAX_RECORDS`` is larger than that, and not read).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import REPO, copy_root
from passprice import pins
from passprice.cli import cli
from passprice.registry import Root


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout's registry with three locks and a copy of the running package's ``src/passprice`` (the
    same code in another folder, a checkout whose code ``check`` judges: its digest is the running package's, found
    in the cache under the same module bytes, so the test parses no second copy of the code)."""
    root = copy_root(tmp_path_factory.mktemp("left42"))
    for lock in sorted((root / "locks").glob("*.lock.toml"))[3:]:
        lock.unlink()
    shutil.copytree(REPO / "src" / "passprice", root / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
    return root


def test_check_judges_a_checkouts_code_once_not_once_a_lock(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three locks, one hashing of the checkout's modules (was three); each lock's line is as it was: "same", no note
    (or, for a lock of an older pricing model, "changed since the lock")."""
    from passprice import snapshot
    from passprice.check import _judge_lock

    judged: list[Path] = []
    judge = pins._checkout_model

    def counted(root: Path) -> tuple[str, str] | None:
        judged.append(root)
        return judge(root)

    # The judging itself is counted, not the hashing under it: an installed (not editable) package names a checkout
    # holding its own modules' bytes by its build record, hashing no folder (the CI's case), a source tree hashes it.
    monkeypatch.setattr(pins, "_checkout_model", counted)
    root = Root(checkout)
    with snapshot.reading():  # what check() does for each lock, without its review of every registry file
        statuses = [_judge_lock(root, path)[0] for path in sorted((checkout / "locks").glob("*.lock.toml"))]
    assert len(statuses) == 3
    assert len(judged) == 1
    for status in statuses:
        same = status.pricing_model == "same"
        assert same or status.pricing_model.startswith("changed since the lock ("), status.pricing_model
    # Outside a snapshot nothing is kept: each ask judges the files as they are now.
    judged.clear()
    assert pins.checkout_note(checkout) == pins.checkout_note(checkout) == ""
    assert len(judged) == 2


def test_a_record_that_is_a_folder_is_one_line_not_two(tmp_path: Path) -> None:
    """``passprice check`` of an ``init --examples`` registry (without its stacks and measurements) whose routing
    record ``uniform`` (named by servings) and cards ``mi300x`` and ``h200_sxm_141gb`` are folders: one line each,
    naming the record's kind (was also "is a folder, not a file"); on stdout, each said once (left43)."""
    root = tmp_path / "registry"
    assert CliRunner().invoke(cli, ["init", str(root), "--examples"]).exit_code == 0
    for folder in ("facts/stacks", "registry/measurements"):  # not what is checked here: 2/3 of the test's time
        shutil.rmtree(root / folder)
    for record in (root / "facts/routing/uniform.toml", root / "facts/cards/mi300x.toml",
                   root / "facts/cards/h200_sxm_141gb.toml"):
        record.unlink()
        record.mkdir()
    result = CliRunner().invoke(cli, ["--root", str(root), "check"])
    assert result.exit_code == 2, result.output
    folders = [line for line in result.stderr.splitlines() if ": is a folder, not a" in line]
    assert folders == [
        "passprice: error: facts/cards/h200_sxm_141gb.toml: is a folder, not a card file",
        "passprice: error: facts/cards/mi300x.toml: is a folder, not a card file",
        "passprice: error: facts/routing/uniform.toml: is a folder, not a routing record file",
    ]
    # left43: each lock resting on a record that does not read said it on two lines (floors, drift), 10 lines for the
    # H200 card's 5 locks: now once above the locks, with their count, and once on a lone lock's floors line.
    lines = result.stdout.splitlines()
    h200 = "facts/cards/h200_sxm_141gb.toml: is a folder, not a card file"
    # and once more in the recap of problems just before "check FAILED", as each line said on stderr is
    assert [line for line in lines if h200 in line] == [
        "locks not judged: 5 of 10 (qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200, r1-qwen7b-h200-best, "
        f"r1-qwen7b-h200-llamacpp): today's files do not read: {h200}", f"  {h200}"]
    # a lock not judged reads so, not FAILS (tests/test_walk138.py)
    at = lines.index("lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, locks serving r1-qwen7b-h200): not judged")
    assert lines[at + 4:at + 6] == ["  floors: not judged (facts/cards/h200_sxm_141gb.toml does not read, above)",
                                    "  drift: not judged (the same)"]
    assert sum(line == "  drift: not judged (the same)" for line in lines) == 7  # and uniform's and mi300x's lock
    assert [line for line in lines if "facts/cards/mi300x.toml" in line] == [
        "  floors: today's files do not read: facts/cards/mi300x.toml: is a folder, not a card file",
        "  facts/cards/mi300x.toml: is a folder, not a card file"]


def _stamps(folder: Path, count: int) -> Path:
    """A record file of this passprice's in the cache folder ``folder`` holding ``count`` records (device 1, inode
    ``i``), written as :func:`passprice.filestamps.flush` writes one."""
    from passprice import digests, filestamps

    key = filestamps._key()
    records = {(1, i): (4096, i, i, bytes(32)) for i in range(count)}
    body = filestamps._body(key, time.time_ns(), records)
    path = folder / "stamps" / f"{key}.stamps"
    path.parent.mkdir(mode=0o700, parents=True)
    path.write_bytes(digests.blake2b(body).hexdigest().encode("ascii") + b"\n" + body)
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize("count", [8, 9])
def test_a_stamps_file_past_its_bounds_is_not_read(
    count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MAX_RECORDS`` 8 (``MAX_FILE_BYTES`` as it follows from it: 65 + 84 + 8 × 72 bytes): a file of 8 records is
    read whole, in order; one of 9 is not read (no records) and left as it is until a record is learned."""
    from passprice import filestamps

    filestamps.flush()
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(filestamps, "MAX_RECORDS", 8)
    monkeypatch.setattr(filestamps, "MAX_FILE_BYTES", 65 + 84 + 8 * 72)
    path = _stamps(tmp_path, count)
    before = path.read_bytes()
    try:
        records = filestamps._loaded()
        assert records is not None and list(records) == ([(1, i) for i in range(8)] if count == 8 else [])
        assert not filestamps._learned
        filestamps.flush()
        assert path.read_bytes() == before
    finally:
        filestamps.flush()
