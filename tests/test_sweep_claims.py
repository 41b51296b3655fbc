"""A sweep shared among processes (passprice.sweepjobs.write_shared): each process takes the next block no process
has taken whenever it is free, so a process held up (judging the locks, a costly serving) takes fewer, and the text
is still the one-process text byte for byte; a process holds the blocks it made before their turn within one budget
of memory; a text written in chunks starts its way to disk as it is written (passprice.files.start_writeback)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from passprice import files, sweepjobs
from passprice.registry import find_root
from passprice.sweep import Grid, Sweeper, text_chunks

ROOT = find_root(Path(__file__).resolve().parent.parent)
SERVINGS = ("gemma3-270m-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp", "r1-qwen7b-h200")
#: Four servings on two cards: four blocks (a block a serving), 48 rows each.
GRID = Grid(SERVINGS, (0, 1, 5, 300, 301, 5000), ("h200_sxm_141gb", "rtx_3080"), (512.0, 2048.0, 200000.0, 0.0))


def _shared(tmp_path: Path, jobs: int) -> bytes:
    sweeper = Sweeper(ROOT)
    sweeper.check(GRID)
    path = tmp_path / "shared.txt"
    with open(path, "wb") as out, np.errstate(all="ignore"):
        end = sweepjobs.write_shared(sweeper, GRID, "csv", jobs, out.fileno(), 0, None, tmp_path)
    data = path.read_bytes()
    assert end == len(data)
    return data


def test_a_worker_held_up_on_its_first_block_leaves_the_others_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Block by block in turn (the cut before session 38) each process made two of the four blocks; the worker held
    # up on the first block it takes (until this process has made three), this process takes every other block,
    # holding those made before their turn until the worker's is written: the same text.
    assert sweepjobs.blocks_of(GRID, 2) == [range(0, 2), range(2, 4), range(4, 6), range(6, 8)]
    one = "".join(text_chunks(Sweeper(ROOT).segments(GRID), "csv")).encode()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    parent, made, log, taken = os.getpid(), sweepjobs._held_text, tmp_path / "made", tmp_path / "taken"

    def until(done: Any) -> None:
        waited = time.monotonic()
        while not done() and time.monotonic() - waited < 20:
            time.sleep(0.005)

    def noted(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent and not taken.exists():
            taken.touch()  # the worker has taken a block: this process makes the others first
            until(lambda: log.exists() and log.read_text().count("parent") == 3)
        until(taken.exists)
        text = made(*args, **kwargs)
        with open(log, "a") as f:
            f.write(f"{'parent' if os.getpid() == parent else 'worker'} {args[4]}\n")
        return text

    monkeypatch.setattr(sweepjobs, "_held_text", noted)
    assert _shared(tmp_path, 2) == one
    who = [line.split()[0] for line in log.read_text().splitlines()]
    assert who == ["parent", "parent", "parent", "worker"]
    assert sorted(int(line.split()[1]) for line in log.read_text().splitlines()) == [0, 1, 2, 3]


def test_blocks_held_by_one_process_share_one_budget_of_memory(tmp_path: Path) -> None:
    room = [10]
    first, second = sweepjobs._Held(tmp_path, -1, None, room), sweepjobs._Held(tmp_path, -1, None, room)
    first.add(b"123456")
    second.add(b"abcd")
    assert (room, first.spilled, second.spilled) == ([0], None, None)
    second.add(b"e")  # no room left: to an anonymous file
    assert second.spilled is not None and second.chunks == [b"abcd"]
    path = tmp_path / "out"
    with open(path, "wb") as out:
        assert second.write(out.fileno(), 0) == 5
    assert path.read_bytes() == b"abcde" and room == [4]  # written: its memory given back
    first.close()
    assert room == [10]


def test_more_blocks_than_the_most_are_joined_in_order() -> None:
    runs = [range(k, k + 1) for k in range(10)]
    assert sweepjobs._joined_runs(runs, 10) is runs
    assert sweepjobs._joined_runs(runs, 4) == [range(0, 3), range(3, 6), range(6, 9), range(9, 10)]
    claims = sweepjobs._claims(3)
    try:
        assert [sweepjobs._claim(claims) for _ in range(4)] == [0, 1, 2, None]
    finally:
        os.close(claims)


def test_a_text_written_in_chunks_starts_its_way_to_disk_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[int, int]] = []
    monkeypatch.setattr(files, "WRITEBACK_BYTES", 4)
    monkeypatch.setattr(files, "start_writeback", lambda fd, offset, size: started.append((offset, size)))
    files.write_atomically(tmp_path / "x.csv", iter(["abc", b"defg", "h", "ijkl", "m"]))
    assert (tmp_path / "x.csv").read_bytes() == b"abcdefghijklm"
    assert started == [(0, 7), (7, 5)]  # 4 bytes or more at a time; the last one is left to the flush
    monkeypatch.undo()
    files.start_writeback(os.open(tmp_path / "x.csv", os.O_RDONLY), 0, 10)  # a hint: no error, whatever it says
    monkeypatch.setattr(files, "_writeback", [None])  # a system without sync_file_range: nothing done
    files.write_atomically(tmp_path / "y.csv", iter(["abc", b"defg"]))
    assert (tmp_path / "y.csv").read_bytes() == b"abcdefg"
