"""A sweep shared among processes (``--jobs N``, passprice.sweepjobs) writes the one-process sweep's text byte for
byte, reports the first row without a finite price in grid order whichever process priced it, counts every row once
on the progress bar, and leaves no file, temporary file or process behind when it fails or is interrupted."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from passprice import sweep, sweepjobs
from passprice.cli import cli
from passprice.registry import find_root
from passprice.sweep import Grid, Sweeper, text_chunks

ROOT = find_root(Path(__file__).resolve().parent.parent)
REPO = Path(__file__).resolve().parent.parent

SERVINGS = ("gemma3-270m-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h200-mtp")
CARDS = ("h200_sxm_141gb", "sn40l", "rtx_3080")
BATCHES = "1,2,7,64,300,581,5000"  # batch 0 is out of range (test_fix181.py)
POSITIONS = "0,511.5,2048,200000"
#: Every serving on three cards at four positions: refusals (Empty, NotResident, BadContexts), a mixture of experts,
#: drafts, floats below 10^-4; 9 (serving, card) pairs, so 2 and 4 jobs cut a serving's cards apart.
ARGS = [*SERVINGS, "--cards", ",".join(CARDS), "--positions", POSITIONS, "--batches", BATCHES]


def run(tmp_path: Path, args: list[str], name: str) -> tuple[int, str, bytes | None]:
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["--root", str(ROOT.path), "sweep", *args, "-o", str(out)])
    return result.exit_code, result.output, out.read_bytes() if out.exists() else None


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_blocks_are_contiguous_runs_of_pairs_in_grid_order() -> None:
    grid = Grid(SERVINGS, (1, 2), CARDS)
    assert sweep.units_of(grid) == 9
    own = Grid(SERVINGS[:1], (1,))  # one serving on its own card: one pair, one block
    assert sweepjobs.blocks_of(own, 4) == [range(0, 1)]
    # The blocks' segments are the whole grid's, in order.
    whole = [(s.common["serving"], s.common["card"], s.common["position"]) for s in Sweeper(ROOT).segments(grid)]
    sweeper = Sweeper(ROOT)
    cut = [(s.common["serving"], s.common["card"], s.common["position"])
           for units in sweepjobs.blocks_of(grid, 4) for s in sweeper.segments(grid, units=units)]
    assert cut == whole


@pytest.mark.parametrize(("cpus", "load", "jobs"), [(2, 0.6, 2), (2, 1.2, 1), (2, 5.0, 1), (8, 2.9, 4), (16, 0.0, 4)])
def test_by_default_a_large_sweep_uses_the_idle_cpus(
    cpus: int, load: float, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    large = Grid(SERVINGS, tuple(range(1, 8000)), CARDS, (512.0, 2048.0))
    assert large.size() >= sweepjobs.PARALLEL_ROWS
    assert sweepjobs.default_jobs(large) == jobs
    assert sweepjobs.default_jobs(Grid(SERVINGS, tuple(range(1, 100)), CARDS)) == 1  # a small grid: one process


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_jobs_write_the_one_process_text_byte_for_byte(fmt: str, tmp_path: Path) -> None:
    status, output, one = run(tmp_path, [*ARGS, "--format", fmt, "--jobs", "1"], f"one.{fmt}")
    assert status == 0, output
    assert one is not None and b"NotResident" in one and b"BadContexts" in one and b"e-0" in one
    for jobs in ("2", "4"):
        status, output, many = run(tmp_path, [*ARGS, "--format", fmt, "--jobs", jobs], f"jobs{jobs}.{fmt}")
        assert status == 0, output
        assert many == one
    assert leftovers(tmp_path) == []  # no temporary file left in the output's folder


def test_jobs_under_a_stack_write_the_same_text(tmp_path: Path) -> None:
    # A stack's rows are written a row at a time, with its columns: a later part carries no header either.
    args = ["gemma3-270m-h100", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb,sn40l,b200", "--positions", "512,4096",
            "--batches", "1,64,5000", "--stack", "llamacpp-cuda-2405"]
    status, output, one = run(tmp_path, [*args, "--jobs", "1"], "one.csv")
    assert status == 0, output
    assert one is not None and one.count(b"expected_tokens_per_s") == 1
    status, output, three = run(tmp_path, [*args, "--jobs", "3"], "three.csv")
    assert (status, three) == (0, one), output


def test_jobs_on_standard_output_write_the_same_text() -> None:
    base = ["--root", str(ROOT.path), "sweep", *ARGS, "--format", "json"]
    one = CliRunner().invoke(cli, [*base, "--jobs", "1"])
    two = CliRunner().invoke(cli, [*base, "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0
    assert two.stdout_bytes == one.stdout_bytes and one.stdout_bytes.startswith(b"[\n{")


def test_every_row_is_counted_once_on_the_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    grid = Grid(SERVINGS, (0, 1, 5, 300), CARDS, (512.0, 2048.0))
    sweeper = Sweeper(ROOT)
    sweeper.check(grid)
    done: list[int] = []
    with np.errstate(all="ignore"):
        chunks = list(sweepjobs.shared_chunks(sweeper, grid, "csv", 3, done.append, appended=False))
    assert sum(done) == grid.size()
    assert b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks).decode() == "".join(
        text_chunks(Sweeper(ROOT).segments(grid), "csv")
    )
    # Workers that fail after they reported every row: their parts are priced again here, not counted twice.
    parent, made = os.getpid(), sweepjobs.text_chunks

    def failing(*args: Any, **kwargs: Any) -> Any:
        yield from made(*args, **kwargs)
        if os.getpid() != parent:
            raise RuntimeError("a worker fails at its end")

    monkeypatch.setattr(sweepjobs, "text_chunks", failing)
    done.clear()
    with np.errstate(all="ignore"):
        again = list(sweepjobs.shared_chunks(sweeper, grid, "csv", 3, done.append, appended=False))
    assert sum(done) == grid.size()
    assert b"".join(c if isinstance(c, bytes) else c.encode() for c in again) == b"".join(
        c if isinstance(c, bytes) else c.encode() for c in chunks
    )


def _poison(monkeypatch: pytest.MonkeyPatch, where: set[tuple[str, str]]) -> None:
    """Give the first segment of each (serving, card) in ``where`` a row whose memory_s is not finite, in every
    process (the forked workers inherit the patch)."""
    made = Sweeper._refused_under_stack

    def poisoned(self: Sweeper, segment: Any) -> Any:
        key = (segment.common["serving"], segment.common["card"])
        rows = np.flatnonzero(segment.status == 0)
        if key in where and segment.priced is not None and len(rows):
            where.discard(key)
            segment.priced["memory_s"][rows[0]] = np.inf
        return made(self, segment)

    monkeypatch.setattr(Sweeper, "_refused_under_stack", poisoned)


@pytest.mark.parametrize(
    "poisoned",
    [
        [("qwen3-30b-a3b-h200", "sn40l"), ("qwen35-27b-h200-mtp", "sn40l")],  # both in workers' parts
        [("qwen35-27b-h200-mtp", "h200_sxm_141gb")],  # the last worker's alone
        [("gemma3-270m-h100", "sn40l"), ("qwen3-30b-a3b-h200", "h200_sxm_141gb")],  # this process's first
    ],
)
def test_the_first_row_without_a_finite_price_in_grid_order_is_the_error(
    poisoned: list[tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        _poison(patch, set(poisoned))
        status, one, _ = run(tmp_path, [*ARGS, "--jobs", "1"], "one.csv")
    assert status == 2
    serving, card = poisoned[0]
    assert f"passprice: error: sweep: {serving} on {card}, batch" in one and "memory_s is inf" in one
    with monkeypatch.context() as patch:
        _poison(patch, set(poisoned))
        status, three, written = run(tmp_path, [*ARGS, "--jobs", "3"], "three.csv")
    assert (status, three, written) == (2, one, None)
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_a_worker_killed_leaves_the_same_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, one = run(tmp_path, [*ARGS, "--jobs", "1"], "one.csv")
    start = sweepjobs._start

    def killed(*args: Any, **kwargs: Any) -> Any:
        worker = start(*args, **kwargs)
        os.kill(worker.pid, signal.SIGKILL)
        return worker

    monkeypatch.setattr(sweepjobs, "_start", killed)
    status, output, two = run(tmp_path, [*ARGS, "--jobs", "2"], "two.csv")
    assert status == 0, output
    assert two == one


#: Run in the sweep's process before passprice starts (a sitecustomize): once the workers are forked, Ctrl-C is
#: pressed (SIGINT to the whole process group, as a terminal sends it) and each worker's pid is noted.
_SITE = """
import os, signal
import passprice.sweepjobs as jobs
start = jobs._start
def pressed(*args, **kwargs):
    worker = start(*args, **kwargs)
    with open(os.environ["WORKERS"], "a") as f:
        f.write(f"{worker.pid}\\n")
    os.killpg(0, signal.SIGINT)
    return worker
jobs._start = pressed
"""


def test_ctrl_c_exits_130_leaving_no_file_and_no_worker(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITE)
    out = tmp_path / "out"
    out.mkdir()
    workers = tmp_path / "workers"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "PYTHONPATH"))}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    env.update(PYTHONPATH=str(site), WORKERS=str(workers), PASSPRICE_NO_MEMO="1")
    code = "from passprice.entry import main; main()"
    args = ["--root", str(ROOT.path), "sweep", *ARGS, "--jobs", "3", "-o", str(out / "grid.csv")]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=REPO, start_new_session=True)  # its own process group: the SIGINT reaches it alone
    assert (done.returncode, done.stderr, done.stdout) == (130, "passprice: interrupted\n", "")
    assert list(out.iterdir()) == []
    pids = [int(line) for line in workers.read_text().split()]
    assert len(pids) >= 1
    for pid in pids:  # reaped by the sweep: no such process any more (not even a zombie)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.parametrize("missing", [(), ("_copy_file_range",), ("_copy_file_range", "_sendfile")])
def test_a_file_is_appended_whole_whichever_copy_the_system_has(
    missing: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import files

    def absent(*args: Any) -> int:
        raise OSError(errno.ENOSYS, "not here")

    for name in missing:
        monkeypatch.setattr(files, name, absent)
    data = bytes(range(256)) * 9000  # 2.3 MB: more than one read of 1 MiB
    source = os.open(tmp_path / "source", os.O_RDWR | os.O_CREAT)
    os.write(source, data)  # its offset left at the end: the copy reads from byte 0 all the same
    with open(tmp_path / "out", "wb") as out:
        out.write(b"head,")
        out.flush()
        assert files.append_file(source, out.fileno()) == len(data)
        out.write(b",tail")
        out.flush()
        # A range of it (a block of a sweep made ahead of its turn): from byte 3 to 1 MiB + 5.
        assert files.append_file(source, out.fileno(), 3, (1 << 20) + 5) == (1 << 20) + 2
    os.close(source)
    assert (tmp_path / "out").read_bytes() == b"head," + data + b",tail" + data[3 : (1 << 20) + 5]


def test_blocks_are_whole_servings_unless_a_serving_is_long_or_the_processes_many() -> None:
    # 3 servings x 3 cards: a block a serving (its pass shapes read by one process).
    grid = Grid(SERVINGS, (1, 2), CARDS, (512.0,))
    assert sweepjobs.blocks_of(grid, 2) == [range(0, 3), range(3, 6), range(6, 9)]
    # More processes than servings: the longest block cut in two until each process has one.
    assert sweepjobs.blocks_of(grid, 4) == [range(0, 1), range(1, 3), range(3, 6), range(6, 9)]
    # A serving's 3 cards of 2^15 rows each: blocks of at most BLOCK_ROWS (2^16) rows, at least a pair.
    long = Grid(SERVINGS[:1], tuple(range(1, 1 + (1 << 15))), CARDS)
    assert sweepjobs.blocks_of(long, 2) == [range(0, 2), range(2, 3)]
    wide = Grid(SERVINGS[:1], tuple(range(1, 1 + (1 << 17))), CARDS)
    assert sweepjobs.blocks_of(wide, 2) == [range(0, 1), range(1, 2), range(2, 3)]
    assert sweepjobs.blocks_of(Grid(SERVINGS[:1], (1,)), 4) == [range(0, 1)]  # one pair: one block


def _written(grid: Grid, tmp_path: Path, jobs: int, progress: Any = None) -> bytes:
    """The text write_shared writes after a head of 5 bytes, read back (its end offset checked)."""
    sweeper = Sweeper(ROOT)
    sweeper.check(grid)
    path = tmp_path / f"shared{jobs}.txt"
    with open(path, "wb") as out:
        out.write(b"head:")
        out.flush()
        with np.errstate(all="ignore"):
            end = sweepjobs.write_shared(sweeper, grid, "json", jobs, out.fileno(), 5, progress, tmp_path)
    data = path.read_bytes()
    assert data[:5] == b"head:" and end == len(data)
    return data[5:]


def test_texts_too_long_to_hold_wait_in_anonymous_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every block's text past 3,000 bytes waits for its turn in an anonymous file (the workers inherit the patch):
    # copied in at its offset, the same bytes, no file left in the folder.
    grid = Grid(SERVINGS, (0, 1, 5, 300, 301, 302), CARDS, (512.0, 2048.0))
    reference = "".join(text_chunks(Sweeper(ROOT).segments(grid), "json")).encode()
    monkeypatch.setattr(sweepjobs, "HELD_BYTES", 3000)
    assert _written(grid, tmp_path, 2) == reference
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared2.txt"]


def test_workers_writing_in_place_that_fail_leave_the_text_and_count_each_row_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = Grid(SERVINGS, (0, 1, 5, 300), CARDS, (512.0, 2048.0))
    reference = "".join(text_chunks(Sweeper(ROOT).segments(grid), "json")).encode()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    done: list[int] = []
    assert _written(grid, tmp_path, 3, done.append) == reference
    assert sum(done) == grid.size()
    # A worker that fails after it priced its block, before it writes: the blocks from its on written here.
    parent, made = os.getpid(), sweepjobs._held_text

    def failing(*args: Any, **kwargs: Any) -> Any:
        text = made(*args, **kwargs)
        if os.getpid() != parent:
            raise RuntimeError("a worker fails before its turn")
        return text

    monkeypatch.setattr(sweepjobs, "_held_text", failing)
    done.clear()
    assert _written(grid, tmp_path, 3, done.append) == reference
    assert sum(done) == grid.size()


def test_a_worker_failing_between_two_others_does_not_leave_the_next_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three processes, a block each (one a serving): the worker of block 1 fails, so the worker of block 2 never
    # gets its turn; this process notices the failure (however it heard the worker end) and writes blocks 1 and 2.
    grid = Grid(SERVINGS, (0, 1, 5, 300), CARDS, (512.0,))
    assert sweepjobs.blocks_of(grid, 3) == [range(0, 3), range(3, 6), range(6, 9)]
    reference = "".join(text_chunks(Sweeper(ROOT).segments(grid), "json")).encode()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    parent, made = os.getpid(), sweepjobs._held_text

    def failing(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != parent and args[4] == 1:
            os._exit(3)
        return made(*args, **kwargs)

    monkeypatch.setattr(sweepjobs, "_held_text", failing)
    done: list[int] = []
    assert _written(grid, tmp_path, 3, done.append) == reference
    assert sum(done) == grid.size()


def test_a_grid_of_pairs_too_long_to_hold_is_written_by_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pairs of 10 rows, more than HELD_ROWS (here lowered to 9): a later block would wait mostly in an anonymous file
    # and be copied in, so no worker is forked; the text is the same.
    grid = Grid(SERVINGS, (0, 1, 5, 300, 301), CARDS, (512.0, 2048.0))
    reference = "".join(text_chunks(Sweeper(ROOT).segments(grid), "json")).encode()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(sweepjobs, "HELD_ROWS", 9)
    started: list[int] = []
    start = sweepjobs._start

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return start(*args, **kwargs)

    monkeypatch.setattr(sweepjobs, "_start", counted)
    assert _written(grid, tmp_path, 2) == reference and started == []
    monkeypatch.setattr(sweepjobs, "HELD_ROWS", 10)  # a pair's 10 rows are held: a worker again
    assert _written(grid, tmp_path, 2) == reference and started == [1]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_jobs_on_standard_output_copy_the_workers_parts_to_a_pipe_a_file_and_an_appended_file(
    fmt: str, tmp_path: Path
) -> None:
    """``--jobs N`` to standard output copies each worker's part from its file in the kernel (sendfile to a pipe,
    copy_file_range to a file; reads and writes onto a file opened to append, which neither call writes to), as ``-o
    FILE`` never reads them into the process either (issue 16): the same bytes as one process, wherever they go."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSPRICE_", "PYTHONPATH"))}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    env["PASSPRICE_NO_MEMO"] = "1"
    code = "from passprice.entry import main; main()"
    args = ["--root", str(ROOT.path), "sweep", *ARGS, "--format", fmt]

    def sweep_to(stdout: Any, jobs: int) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-c", code, *args, "--jobs", str(jobs)], stdout=stdout,
                              stderr=subprocess.PIPE, timeout=120, env=env, cwd=REPO)

    one = sweep_to(subprocess.PIPE, 1)
    piped = sweep_to(subprocess.PIPE, 2)
    assert one.returncode == piped.returncode == 0, piped.stderr
    assert piped.stdout == one.stdout and len(one.stdout) > 10_000
    for mode in ("wb", "ab"):
        target = tmp_path / f"out-{mode}"
        target.write_bytes(b"head\n")
        with open(target, mode) as out:
            done = sweep_to(out, 2)
        assert done.returncode == 0, done.stderr
        assert target.read_bytes() == (b"" if mode == "wb" else b"head\n") + one.stdout


def test_a_file_is_appended_to_a_stream_without_a_descriptor(tmp_path: Path) -> None:
    import io

    from passprice.files import append_to_stream

    data = bytes(range(256)) * 9000  # more than one read of 1 MiB
    source = os.open(tmp_path / "source", os.O_RDWR | os.O_CREAT)
    os.write(source, data)
    captured = io.BytesIO()
    stream = io.TextIOWrapper(captured, encoding="utf-8", write_through=False)
    stream.write("head,")  # written before the copy: flushed first
    assert append_to_stream(source, stream) == len(data)
    os.close(source)
    assert captured.getvalue() == b"head," + data
