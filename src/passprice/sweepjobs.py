"""A sweep shared among processes writes the one-process sweep's text, byte for byte: the grid is cut into blocks of
contiguous (serving, card) pairs (:func:`blocks_of`), each priced and written exactly as in the whole grid, each taken
by whichever process is free first, and the blocks' texts are put together in grid order.

Into a file (:func:`write_shared`) the processes write their blocks straight into it, each at its turn, at the offset
the block before it ended at: nothing is copied. To a stream (:func:`shared_chunks`) this process gives the blocks in
grid order: one whose turn has come as it is made, any other (a worker's, or one this process made ahead of its turn)
copied from the anonymous file it was made into, in the kernel (:func:`passprice.files.append_file`), never read
into this process.

After the grid is checked (every file it reads loaded), the process forks its workers. A worker that fails, for any
reason (a price that is not finite, a full disk, a signal), says nothing: this process makes the blocks it left, so
the error a sweep reports is the one the one-process sweep reports, at the first such row in grid order. A worker
tells this process the rows it has priced (for the progress bar) through a pipe, and each block's tally of refused
and priced rows (:class:`~passprice.sweep.Tally`) once it is made: the tallies, added in grid order, are the
one-process sweep's, so the refusals a sweep counts on stderr are the whole grid's whatever ``--jobs`` says.
Ctrl-C, SIGTERM or any error here kills and reaps every worker before it goes on, and a worker dies with this
process (Linux's parent-death signal), so no process outlives the sweep.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from passprice.files import Appended, start_writeback
from passprice.sweep import Grid, Sweeper, Tally, text_chunks, units_of

#: Rows from which a sweep shares its grid among processes when ``--jobs`` is not given (a fork and the copy of
#: a worker's text cost a few milliseconds: a smaller grid is done before they pay).
PARALLEL_ROWS = 1 << 17

#: Processes a sweep uses at most when ``--jobs`` is not given.
MOST_JOBS = 4

#: Processes ``--jobs`` may ask for (passprice.bounds states the option's bound).
MAX_JOBS = 64


def default_jobs(grid: Grid) -> int:
    """The processes a sweep of ``grid`` uses when ``--jobs`` is not given: for a grid of at least
    :data:`PARALLEL_ROWS` rows, the CPUs this process may run on that the system's load (its one-minute average,
    whole runnable processes) leaves idle, at least 1 and at most :data:`MOST_JOBS`; else 1. A worker only shortens
    the wall-clock time where a CPU is free: on a machine busy with other work it saves nothing and costs its copy
    (the bench, on the project's 2-core machine at load 4 to 6: 0.84 to 1.03 × the wall time of one process, 1.24
    to 1.30 × its CPU)."""
    if grid.size() < PARALLEL_ROWS:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - a system without affinity masks
        cpus = os.cpu_count() or 1
    try:
        busy = int(os.getloadavg()[0])
    except (AttributeError, OSError):  # pragma: no cover - a system without a load average
        busy = 0
    return max(1, min(cpus - busy, MOST_JOBS))


def usable_jobs(jobs: int) -> int:
    """The processes a sweep asked for ``jobs`` uses: at most the CPUs this process may run on, and never fewer
    than 2 when ``jobs`` asks for more (a sweep shared among processes stays one). More processes than CPUs cannot
    shorten the wall time, and each prices the pass shapes of the servings its part holds again: ``--jobs 64`` on
    the 2-CPU machine, a grid of 323 (serving, card) pairs with an empty cache, took 4 to 5 s of wall time and 5.1
    to 5.6 s of CPU where ``--jobs 1`` took 1.1 to 1.6 s."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - a system without affinity masks
        cpus = os.cpu_count() or 1
    return min(jobs, max(cpus, 2))


class _Worker:
    """A forked process pricing and writing the pairs ``units`` of a grid into the anonymous file ``fd``, and
    writing the rows it has priced (decimal, a line at a time) to the pipe it reports through."""

    def __init__(self, pid: int, fd: int, report: int | None) -> None:
        self.pid = pid
        self.fd = fd
        self.report = report
        self.rows = 0  # rows it has said it priced
        self.status: int | None = None  # its exit status, once reaped
        self.tallies: dict[int, Tally] = {}  # the tally of each block it has made (_tally_line)
        self._pending = b""

    def drain(self, progress: Callable[[int], None] | None, wait: bool) -> None:
        """Read what the worker has reported (``wait``: until it closes the pipe, i.e. ends) and pass the rows on
        to ``progress``."""
        if self.report is None:
            return
        os.set_blocking(self.report, wait)
        while True:
            try:
                data = os.read(self.report, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                os.close(self.report)
                self.report = None
                return
            lines = (self._pending + data).split(b"\n")
            self._pending = lines.pop()
            rows = sum(int(line) for line in lines)
            self.rows += rows
            if progress is not None and rows:
                progress(rows)

    def finish(self, progress: Callable[[int], None] | None) -> bool:
        """Wait for the worker to end (its reports passed on to ``progress``): whether it wrote its whole part."""
        self.drain(progress, wait=True)
        if self.status is None:
            self.status = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.status == 0

    def stop(self) -> None:
        """Kill the worker if it still runs, reap it, and close its file and pipe."""
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            while True:
                try:
                    self.status = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
                    break
                except InterruptedError:  # pragma: no cover - Python retries waitpid itself (PEP 475)
                    continue
                except ChildProcessError:  # pragma: no cover - reaped elsewhere
                    self.status = -1
                    break
        for fd in (self.fd, self.report):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd, self.report = -1, None


def _tally_line(block: int, tally: Tally) -> bytes:
    """The line a worker tells this process ``block``'s tally in: ``tBLOCK HEX``, the tally pickled (a forked copy
    of this process's own code reads it back, :func:`_heard_tally`), in hexadecimal, so no byte of it is a line's
    end."""
    import pickle

    return b"t%d %s\n" % (block, pickle.dumps(tally).hex().encode("ascii"))


def _heard_tally(worker: _Worker, line: bytes) -> None:
    """Keep the tally a line of :func:`_tally_line` tells in ``worker.tallies``."""
    import pickle

    block, data = line[1:].split()
    worker.tallies[int(block)] = pickle.loads(bytes.fromhex(data.decode("ascii")))


def _add_tallies(sweeper: Sweeper, own: dict[int, Tally], workers: list[_Worker]) -> None:
    """Add to ``sweeper`` every block's tally in grid order: this process's (``own``; ``-1``: what it had counted
    before the blocks), each worker's of the blocks this process did not make again (after a worker failed); what
    it counted outside a block last. The one-process sweep's counts, the same refusals in the same order with the
    same first rows (the summary ``sweep --jobs N`` writes on stderr: it counted this process's blocks alone)."""
    outside = sweeper.take_tally()
    every: dict[int, Tally] = {}
    for worker in workers:
        every.update(worker.tallies)
    every.update(own)
    for block in sorted(every):
        sweeper.add_tally(every[block])
    sweeper.add_tally(outside)


#: The signals that stop a sweep (Ctrl-C, and those passprice.cli turns into :class:`~passprice.cli.Terminated`):
#: held back while a worker is forked and noted, so none can leave a worker unknown to the sweep.
_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _start_part(
    workers: list[_Worker],
    sweeper: Sweeper,
    grid: Grid,
    fmt: str,
    runs: list[range],
    claims: int,
    folder: Path | None,
) -> _Worker:
    """Fork a worker for :func:`shared_chunks`: it takes blocks of ``runs`` from ``claims`` (:func:`_claim`) until
    none is left, appends each block's text to a new anonymous file in ``folder`` (``None``: the system's temporary
    folder) and reports through a pipe the rows it prices (``N``) and each block made (``wBLOCK START STOP``: where
    its text lies in the file); added to ``workers`` before any signal that stops the sweep is let through."""
    fd = _anonymous(folder)
    read, write = os.pipe()
    parent = os.getpid()
    # The mask to restore asked first: a signal raised as the blocking call returned left the three held for the
    # rest of the sweep, Ctrl-C unheard (passprice.schema.signals_held, session 34)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    pid = -1
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
        pid = os.fork()
        if pid != 0:
            workers.append(worker := _Worker(pid, fd, read))
    finally:
        if pid != 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if pid == 0:  # pragma: no cover - the worker's body runs in the forked process (its text is tested)
        status = 1
        try:
            _die_with(parent)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            os.close(read)

            def report(rows: int) -> None:
                os.write(write, b"%d\n" % rows)

            size = 0
            while (block := _claim(claims)) is not None:
                start = size
                made = text_chunks(
                    sweeper.segments(grid, report, runs[block]), fmt, block == 0, block == len(runs) - 1, binary=True
                )
                for chunk in made:
                    data = _encoded(chunk)
                    _write_all(fd, data)
                    size += len(data)
                _write_all(write, _tally_line(block, sweeper.take_tally()))  # before the block is heard of
                os.write(write, b"w%d %d %d\n" % (block, start, size))
            status = 0
        except BaseException:  # whatever stops the worker, this process makes the blocks it left
            status = 1
        finally:
            os._exit(status)
    os.close(write)
    return worker


def _encoded(chunk: str | bytes) -> bytes:
    """A chunk of a sweep's text as the bytes written: bytes already (:func:`~passprice.sweep.text_chunks` with
    ``binary``: JSON's ASCII, CSV's UTF-8), or CSV text a segment at a time (a name that is not Unicode), encoded as
    UTF-8 (raising :class:`UnicodeEncodeError`, as the file's writer says)."""
    return chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")


def _anonymous(folder: Path | None) -> int:
    """A new file without a name in ``folder`` (``None``: the system's temporary folder), open for reading and
    writing: ``O_TMPFILE`` where the system and the folder's file system have it, as :func:`tempfile.TemporaryFile`
    makes it, without importing :mod:`tempfile` (shutil, random, bz2, lzma: about 6.5 ms before the first fork);
    else :func:`tempfile.TemporaryFile`'s (a named file removed at once). Raises :class:`OSError`."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if folder is not None and tmpfile:
        flags = os.O_RDWR | os.O_EXCL | tmpfile | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(folder, flags, 0o600)
        except OSError:
            pass  # a file system without O_TMPFILE (EOPNOTSUPP, EISDIR on old kernels): tempfile's way below
    import tempfile

    with tempfile.TemporaryFile(dir=folder) as made:
        return os.dup(made.fileno())


def _die_with(parent: int) -> None:  # pragma: no cover - runs in the forked worker
    """Have the kernel kill this process when its parent ends (Linux's ``PR_SET_PDEATHSIG``; elsewhere nothing),
    and end now if the parent already has."""
    prctl = _prctl()
    if prctl is not None:
        with contextlib.suppress(Exception):
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """The C library's ``prctl`` (``None`` where there is none), looked up once in the process that forks the
    workers: imported and looked up in each worker, ``ctypes`` cost each one a few milliseconds of CPU."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


def shared_chunks(
    sweeper: Sweeper,
    grid: Grid,
    fmt: str,
    jobs: int,
    progress: Callable[[int], None] | None = None,
    folder: Path | None = None,
    appended: bool = True,
    ready: Callable[[], None] | None = None,
) -> Iterator[str | bytes | Appended]:
    """The text of the sweep of ``grid`` (checked by ``sweeper``), exactly :func:`~passprice.sweep.text_chunks` of
    :meth:`~passprice.sweep.Sweeper.segments`, made by ``jobs`` processes, in grid order, for a stream (standard
    output): the grid is cut into blocks as :func:`write_shared` cuts it, each process takes the next block no
    process has taken whenever it is free (:func:`_claims`), and the text is given block by block in grid order: a
    block this process takes when every block before it is given, as text chunks as it is made; any other block,
    made ahead of its turn (by a worker, or by this process while a worker makes the block before it), as an
    :class:`~passprice.files.Appended` range of the anonymous file it was written to (``appended``; for
    :func:`~passprice.files.append_to_stream`) or as bytes read from it (a megabyte at a time). ``progress`` gets
    every process's priced rows, each once; ``folder``: where the anonymous files are made; ``ready``: called once
    the workers are forked, before any text is given (``passprice sweep`` judges the grid's servings under their
    locks there, while the workers price; what it raises ends the sweep and its workers). A worker that fails, for
    any reason, says nothing: every worker is stopped and this process makes every block from the first not yet
    given itself, so the error a sweep reports is the one the one-process sweep reports. Raises
    :class:`~passprice.errors.InputError` at the first row in grid order that :func:`~passprice.sweep.text_chunks`
    refuses; when the generator ends, early or not, no worker is left."""
    jobs = usable_jobs(jobs)
    runs = _joined_runs(blocks_of(grid, jobs), MOST_BLOCKS)
    jobs = min(jobs, len(runs))
    if grid.size() // max(units_of(grid), 1) > HELD_ROWS:  # a pair no cut divides, too long to hold
        jobs = 1
    if jobs == 1 or not hasattr(os, "fork"):
        if ready is not None:
            ready()
        # CSV as text, as the command's own one-process path gives it to standard output (click writes it).
        yield from text_chunks(sweeper.segments(grid, progress), fmt, binary=fmt == "json")
        return
    workers: list[_Worker] = []
    files: list[int] = []  # the workers' anonymous files
    own = -1  # this process's anonymous file, for the blocks it makes ahead of their turn
    claims = -1
    # Each block made ahead of its turn: the file it lies in and its range; and the rows each worker reported for
    # the block it has not finished (not counted again when this process makes that block).
    made: dict[int, list[bytes | tuple[int, int, int]]] = {}  # a block's text: held bytes, then a file's range
    room = [HELD_BYTES]  # the bytes this process may still hold
    unfinished: dict[int, int] = {}
    counted = 0
    tallies: dict[int, Tally] = {-1: sweeper.take_tally()}  # this process's tally of each block it made

    def count(rows: int) -> None:
        nonlocal counted
        counted += rows
        if progress is not None:
            progress(rows)

    def hear(worker: _Worker) -> None:
        if worker.report is None:
            return
        os.set_blocking(worker.report, False)
        while True:
            try:
                data = os.read(worker.report, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                os.close(worker.report)
                worker.report = None
                worker.finish(None)
                return
            lines = (worker._pending + data).split(b"\n")
            worker._pending = lines.pop()
            for line in lines:
                if line.startswith(b"t"):
                    _heard_tally(worker, line)
                elif line.startswith(b"w"):
                    block, start, stop = (int(f) for f in line[1:].split())
                    made[block] = [(files[workers.index(worker)], start, stop)]
                    unfinished[worker.pid] = 0
                else:
                    rows = int(line)
                    unfinished[worker.pid] = unfinished.get(worker.pid, 0) + rows
                    count(rows)

    def mine(rows: int) -> None:
        count(rows)
        for worker in workers:
            hear(worker)

    def given(text: list[bytes | tuple[int, int, int]]) -> Iterator[bytes | Appended]:
        for item in text:
            if isinstance(item, bytes):
                room[0] += len(item)
                yield item
                continue
            fd, start, stop = item
            if appended:
                yield Appended(fd, start, stop)
                continue
            while start < stop and (data := os.pread(fd, min(1 << 20, stop - start), start)):
                start += len(data)
                yield data

    turn = 0  # the next block to give
    try:
        claims = _claims(len(runs))
        _prctl()  # looked up once here, not in each worker
        for _ in range(1, jobs):
            try:
                worker = _start_part(workers, sweeper, grid, fmt, runs, claims, folder)
            except OSError:  # no process or file to be had: the blocks are made by the processes there are
                break
            files.append(worker.fd)  # closed at the end, not when the worker is stopped: its blocks are given then
            worker.fd = -1
        if ready is not None:
            ready()
        left = True  # blocks may be left to take
        size = 0  # bytes in this process's own file
        while turn < len(runs):
            for worker in workers:
                hear(worker)
            if turn in made:
                yield from given(made.pop(turn))
                turn += 1
                continue
            block = _claim(claims) if left else None
            if block is None:
                left = False
                _await_block(workers, turn, made, hear)
                continue
            text = text_chunks(
                sweeper.segments(grid, mine, runs[block]), fmt, block == 0,
                block == len(runs) - 1, binary=True,
            )
            if block == turn:  # its turn: given as it is made
                yield from text
                tallies[block] = sweeper.take_tally()
                turn += 1
                continue
            # Ahead of its turn: held in memory (HELD_BYTES for every block held), the rest in this process's
            # anonymous file, copied at its turn.
            held: list[bytes | tuple[int, int, int]] = []
            start = -1
            try:
                for chunk in text:
                    data = _encoded(chunk)
                    if start < 0 and len(data) <= room[0]:
                        held.append(data)
                        room[0] -= len(data)
                        continue
                    if own < 0:
                        own = _anonymous(folder)
                    if start < 0:
                        start = size
                    _write_all(own, data)
                    size += len(data)
            except Exception:
                room[0] += sum(len(item) for item in held if isinstance(item, bytes))
                # A row refused ahead of its turn is the sweep's error only once every block before it is given
                # (an earlier block may fail first, as in one process), and after the rows of its block made
                # before it, which the one-process sweep writes before its error (flaky42: they were dropped, a
                # block of two pairs refused in its second gave its first's row with --jobs 1 only).
                while turn < block:
                    if turn not in made:
                        _await_block(workers, turn, made, hear)
                    yield from given(made.pop(turn))
                    turn += 1
                yield from (item for item in held if isinstance(item, bytes))  # held: bytes only
                if start >= 0:
                    yield from given([(own, start, size)])
                raise
            tallies[block] = sweeper.take_tally()
            made[block] = [*held, (own, start, size)] if start >= 0 else held
        _add_tallies(sweeper, tallies, workers)
    except _Failed:
        # A worker failed: every worker stopped, the blocks not yet given are made here, in grid order (each row
        # counted once: the rows the workers reported of a block they did not finish are not counted again).
        for worker in workers:
            hear(worker)
            worker.stop()
        again = _less(progress, sum(unfinished.values()))
        for block in range(turn, len(runs)):
            if block in made:  # made whole ahead of its turn (its rows counted once already)
                yield from given(made[block])
                continue
            yield from text_chunks(
                sweeper.segments(grid, again, runs[block]), fmt, block == 0, block == len(runs) - 1, binary=True
            )
            tallies[block] = sweeper.take_tally()
        _add_tallies(sweeper, tallies, workers)
    finally:
        for worker in workers:
            worker.stop()
        for fd in (own, claims, *files):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _await_block(
    workers: list[_Worker], block: int, made: dict[int, Any], hear: Callable[[_Worker], None]
) -> None:
    """Wait until a worker of :func:`shared_chunks` has made ``block`` (``made`` holds it), passing on what the
    workers report (``hear``). Raises :class:`_Failed` when a worker ended without making every block it took."""
    import select

    while block not in made:
        for worker in workers:
            if worker.status not in (None, 0):  # ended without making every block it took: it never will
                raise _Failed(f"worker {worker.pid} ended with status {worker.status}")
        watched = [w.report for w in workers if w.report is not None]
        if not watched:
            raise _Failed("a block is not made")
        readable, _, _ = select.select(watched, [], [])
        for worker in workers:
            if worker.report is not None and worker.report in readable:
                hear(worker)


def _less(progress: Callable[[int], None] | None, counted: int) -> Callable[[int], None] | None:
    """``progress`` not told of the first ``counted`` rows (already counted once)."""
    if progress is None:
        return None
    left = counted

    def told(rows: int) -> None:
        nonlocal left
        skip = min(rows, left)
        left -= skip
        if rows > skip:
            assert progress is not None
            progress(rows - skip)

    return told


#: Rows a block of :func:`blocks_of` holds at most when a serving's rows are more (a block is otherwise a whole
#: serving: its pass shapes read by one process only).
BLOCK_ROWS = 1 << 16

#: Bytes of a block's text a process holds while it waits for its turn to write (:class:`_Held`); past them the text
#: goes to an anonymous file, copied in at its turn, so a process never holds more than this whatever the block.
HELD_BYTES = 1 << 26

#: Rows of a (serving, card) pair past which :func:`write_shared` uses one process: a block of such a pair (which no
#: cut divides) waits for its turn mostly in an anonymous file, and the copy costs more than the second
#: process saves (two servings on one card, a million batches each, JSON: 11.2 s of wall time and 4.2 s of system
#: CPU with --jobs 2 against 7.5 s and 2.5 s with one process, on the loaded 2-core machine).
HELD_ROWS = 1 << 17


def blocks_of(grid: Grid, jobs: int) -> list[range]:
    """``grid``'s (serving, card) pairs (:func:`~passprice.sweep.units_of`) cut into contiguous runs written in turn
    by ``jobs`` processes (:func:`write_shared`), in grid order: each serving's pairs one run, a serving of more
    than :data:`BLOCK_ROWS` rows cut into runs of about that many (at least a pair each); then, while there are
    fewer runs than ``jobs`` and a run holds more than one pair, the run of most pairs cut in two. One run when the
    grid has one pair or no rows."""
    count = units_of(grid)
    if not grid.size() or count <= 1:
        return [range(0, count)]
    per = len(grid.cards) if grid.cards else 1
    rows = grid.size() // count  # every pair has as many rows
    step = max(1, BLOCK_ROWS // max(rows, 1))
    runs = [range(a, min(a + step, s + per)) for s in range(0, count, per) for a in range(s, s + per, step)]
    while len(runs) < jobs:
        k = max(range(len(runs)), key=lambda j: len(runs[j]))
        run = runs[k]
        if len(run) < 2:
            break
        middle = run.start + len(run) // 2
        runs[k : k + 1] = [range(run.start, middle), range(middle, run.stop)]
    return runs


class _Held:
    """A block's text (bytes) on its way into the open file ``fd``: written there as it comes once its turn has come
    (``turn()``: the offset to write it at, or ``None`` while the blocks before it are not all written; asked before
    each chunk is kept), until then kept, in memory up to :data:`HELD_BYTES`, the rest in an anonymous file in
    ``folder`` (copied in at its turn)."""

    def __init__(
        self, folder: Path | None, fd: int = -1, turn: Callable[[], int | None] | None = None,
        room: list[int] | None = None,
    ) -> None:
        self.folder = folder
        self.fd = fd
        self.turn = turn
        # The bytes this process may still hold in memory, shared by every block it holds (a process that makes
        # blocks ahead of its turn holds several): :data:`HELD_BYTES` in all.
        self.room = room if room is not None else [HELD_BYTES]
        self.at: int | None = None  # once the turn has come: where the next byte goes
        self.chunks: list[bytes] = []
        self.size = 0
        self.spilled: int | None = None  # the anonymous file, once the text outgrew the memory kept
        self.spilled_size = 0

    def add(self, data: bytes) -> None:
        if self.at is None and self.turn is not None:
            at = self.turn()
            if at is not None:
                self.at = self.write(self.fd, at)
        if self.at is not None:
            _write_at(self.fd, data, self.at)
            start_writeback(self.fd, self.at, len(data))
            self.at += len(data)
            return
        if self.spilled is None and len(data) <= self.room[0]:
            self.chunks.append(data)
            self.size += len(data)
            self.room[0] -= len(data)
            return
        if self.spilled is None:
            self.spilled = _anonymous(self.folder)
        _write_at(self.spilled, data, self.spilled_size)
        self.spilled_size += len(data)

    def finish(self, wait: Callable[[], int]) -> int:
        """Write what is kept at its turn (``wait()``: the offset, once the blocks before are written; not asked when
        the turn has come already); return the offset past the block."""
        if self.at is not None:
            return self.at
        return self.write(self.fd, wait())

    def write(self, fd: int, offset: int) -> int:
        """Write what is kept into ``fd`` from ``offset`` on (its way to disk started: :func:`start_writeback`);
        return the offset past it, and close the anonymous file."""
        start = offset
        for data in self.chunks:
            _write_at(fd, data, offset)
            offset += len(data)
        self._release()
        if self.spilled is not None:
            done = 0
            try:
                while done < self.spilled_size:
                    copied = _copy_at(self.spilled, done, fd, offset + done, self.spilled_size - done)
                    if copied <= 0:
                        raise OSError(errno.EIO, "the anonymous file ended early")
                    done += copied
            finally:
                os.close(self.spilled)
                self.spilled = None
            offset += done
        start_writeback(fd, start, offset - start)
        return offset

    def _release(self) -> None:
        self.chunks = []
        self.room[0] += self.size
        self.size = 0

    def close(self) -> None:
        self._release()
        if self.spilled is not None:
            with contextlib.suppress(OSError):
                os.close(self.spilled)
            self.spilled = None


def _write_at(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` into ``fd`` at ``offset`` (``os.pwrite``, which may write part of it a call)."""
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _copy_at(source: int, at: int, fd: int, offset: int, size: int) -> int:
    """Copy up to ``size`` bytes of ``source`` from ``at`` into ``fd`` at ``offset``, in the kernel where the system
    can (``os.copy_file_range``), else by a read and a write of at most 1 MiB. Returns the bytes copied."""
    if hasattr(os, "copy_file_range"):
        try:
            return os.copy_file_range(source, fd, size, offset_src=at, offset_dst=offset)
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
                raise
    data = os.pread(source, min(size, 1 << 20), at)
    _write_at(fd, data, offset)
    return len(data)


def _held_text(
    sweeper: Sweeper, grid: Grid, fmt: str, runs: list[range], k: int, report: Callable[[int], None] | None,
    folder: Path | None, fd: int = -1, turn: Callable[[], int | None] | None = None, room: list[int] | None = None,
) -> _Held:
    """The text of block ``k`` of ``runs`` (the first opens the sweep's text, the last closes it), on its way into
    ``fd`` (:class:`_Held`, ``turn`` its turn, ``room`` the memory its process may still hold)."""
    held = _Held(folder, fd, turn, room)
    try:
        made = text_chunks(
            sweeper.segments(grid, report, runs[k]), fmt, opens=k == 0, closes=k == len(runs) - 1, binary=True
        )
        for chunk in made:
            held.add(_encoded(chunk))
    except BaseException:
        held.close()
        raise
    return held


class _Failed(Exception):
    """A worker of :func:`write_shared` ended without writing all its blocks."""


#: Blocks :func:`write_shared` cuts a grid into at most (adjacent blocks joined past it): their numbers, 4 bytes each,
#: fit a pipe's buffer at once, and the ends of the blocks others wrote, 16 bytes each, fit every worker's inbox, so
#: no process ever waits to write either (:func:`_claims`).
MOST_BLOCKS = 1024


def _joined_runs(runs: list[range], most: int) -> list[range]:
    """``runs`` (contiguous, in order) joined in groups of adjacent ones into at most ``most`` runs."""
    if len(runs) <= most:
        return runs
    step = -(-len(runs) // most)
    return [range(runs[i].start, runs[min(i + step, len(runs)) - 1].stop) for i in range(0, len(runs), step)]


def _claims(count: int) -> int:
    """A pipe holding the block numbers ``0`` … ``count - 1`` (4 bytes each, little-endian), its writing end closed:
    each process of :func:`write_shared` takes the next block with one read of 4 bytes (:func:`_claim`), which the
    kernel gives whole and to one reader, so the blocks are taken in grid order, each by one process, whichever is
    free first. Returns the reading end."""
    read, write = os.pipe()
    try:
        _write_all(write, b"".join(k.to_bytes(4, "little") for k in range(count)))
    finally:
        os.close(write)
    return read


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _claim(claims: int) -> int | None:
    """The next block no process has taken (:func:`_claims`), or ``None`` when none is left."""
    data = os.read(claims, 4)
    return int.from_bytes(data, "little") if len(data) == 4 else None


def _made(
    sweeper: Sweeper, grid: Grid, fmt: str, runs: list[range], claims: int, fd: int, folder: Path | None,
    report: Callable[[int], None] | None, written: list[int], hear: Callable[[bool], None],
    tell: Callable[[int, int], None], settle: bool, tallied: Callable[[int], None],
) -> None:
    """One process's share of :func:`write_shared`: take the next block not taken (:func:`_claim`) until none is
    left, make its text and write it into ``fd`` at its turn, when every block before it is written (``written``:
    the last block written in grid order, all before it too, and the offset past it; kept up to date by ``hear``,
    which waits for news when given ``True``). A block made before its turn is held (:class:`_Held`, the memory of
    every block held here :data:`HELD_BYTES` in all) and the next one taken meanwhile, so no process waits while a
    block is left; each held block is written as soon as its turn comes (asked between two chunks of text), and
    ``tell`` is told each block written and the offset past it. ``settle``: a row this process refuses is raised
    once every block before its block is written (the sweep's error only then, this process's own held blocks
    written meanwhile); else at once. ``tallied`` is told each block made, before it is written (its tally: the
    sweeper's counts since the block before, :meth:`~passprice.sweep.Sweeper.take_tally`)."""
    held: list[tuple[int, _Held]] = []
    room = [HELD_BYTES]

    def done(block: int, end: int) -> None:
        tell(block, end)
        if written[0] + 1 == block:
            written[:] = [block, end]

    def flush() -> None:
        hear(False)
        while held and written[0] + 1 >= held[0][0]:
            block, text = held.pop(0)
            try:
                end = text.write(fd, written[1])
            finally:
                text.close()
            done(block, end)
            hear(False)

    try:
        while (block := _claim(claims)) is not None:

            def come(block: int = block) -> int | None:  # the offset, once every block before it is written
                flush()
                return written[1] if written[0] + 1 >= block else None

            try:
                text = _held_text(sweeper, grid, fmt, runs, block, report, folder, fd, come, room)
            except Exception:
                while settle and written[0] + 1 < block:
                    flush()
                    if written[0] + 1 < block:
                        hear(True)
                raise
            tallied(block)
            if text.at is not None:  # its turn came while it was made: written in place
                text.close()
                done(block, text.at)
            else:
                held.append((block, text))
            flush()
        while held:
            flush()
            if held:
                hear(True)
    finally:
        for _, text in held:
            text.close()


def _start(
    workers: list[_Worker],
    sweeper: Sweeper,
    grid: Grid,
    fmt: str,
    runs: list[range],
    k: int,
    jobs: int,
    fd: int,
    turns: list[tuple[int, int]],
    folder: Path | None,
    claims: int = -1,
    offset: int = 0,
) -> _Worker:
    """Fork worker ``k`` of ``jobs`` for :func:`write_shared`: it takes blocks of ``runs`` from ``claims`` and
    writes each into ``fd`` at its turn (:func:`_made`), hearing the offset past each block the others write from
    its inbox ``turns[k]`` (16 bytes a block: its number and that offset, little-endian; the first block goes at
    ``offset``), and telling the others' inboxes of each block it writes; it reports to this process the rows it
    prices (``N``) and each block written (``wBLOCK END``) through a pipe. Added to ``workers`` before any signal
    that stops the sweep is let through."""
    read, write = os.pipe()
    parent = os.getpid()
    # The mask to restore asked first: a signal raised as the blocking call returned left the three held for the
    # rest of the sweep, Ctrl-C unheard (passprice.schema.signals_held, session 34)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    pid = -1
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
        pid = os.fork()
        if pid != 0:
            workers.append(worker := _Worker(pid, -1, read))
    finally:
        if pid != 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if pid == 0:  # pragma: no cover - the worker's body runs in the forked process (its text is tested)
        status = 1
        try:
            _die_with(parent)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            os.close(read)
            inbox = turns[k][0]
            written = [-1, offset]
            ends: dict[int, int] = {}
            pending = b""

            def report(rows: int) -> None:
                os.write(write, b"%d\n" % rows)

            def hear(wait: bool) -> None:
                nonlocal pending
                os.set_blocking(inbox, wait)
                try:
                    data = os.read(inbox, 1 << 16)
                except BlockingIOError:
                    return
                finally:
                    os.set_blocking(inbox, True)
                if not data:
                    raise _Failed("no turn")
                data = pending + data
                whole = len(data) - len(data) % 16
                for at in range(0, whole, 16):
                    ends[int.from_bytes(data[at : at + 8], "little")] = int.from_bytes(data[at + 8 : at + 16], "little")
                pending = data[whole:]
                _advance(written, ends)

            def tell(block: int, end: int) -> None:
                ends[block] = end
                os.write(write, b"w%d %d\n" % (block, end))
                news = block.to_bytes(8, "little") + end.to_bytes(8, "little")
                for j in range(1, jobs):
                    if j != k:
                        os.write(turns[j][1], news)  # 16 bytes written at once arrive at once (PIPE_BUF)

            def tallied(block: int) -> None:  # before the block is written, so heard before it is
                _write_all(write, _tally_line(block, sweeper.take_tally()))

            _made(sweeper, grid, fmt, runs, claims, fd, folder, report, written, hear, tell, False, tallied)
            status = 0
        except BaseException:  # whatever stops the worker, this process writes what it left
            status = 1
        finally:
            os._exit(status)
    os.close(write)
    return worker


def write_shared(
    sweeper: Sweeper,
    grid: Grid,
    fmt: str,
    jobs: int,
    fd: int,
    offset: int,
    progress: Callable[[int], None] | None = None,
    folder: Path | None = None,
    ready: Callable[[], None] | None = None,
) -> int:
    """Write the text of the sweep of ``grid`` (checked by ``sweeper``), exactly :func:`~passprice.sweep.text_chunks`
    of :meth:`~passprice.sweep.Sweeper.segments`, into the open file ``fd`` from ``offset`` on, made by ``jobs``
    processes that write straight into it (a :class:`~passprice.files.Placed` chunk of
    :func:`~passprice.files.write_atomically`): the grid is cut into blocks (:func:`blocks_of`, at most
    :data:`MOST_BLOCKS`), each process takes the next block no process has taken whenever it is free
    (:func:`_claims`: the one that judges the locks, or draws the short straw of a costly serving, takes fewer), and
    writes it at its turn, at the offset the block before it ended at, which the process that wrote that block tells
    every other (:func:`_made`); no part is copied from one file into another (the copy of a worker's part, a quarter
    of a gigabyte of the bench's JSON, took 0.1 to 0.8 s of CPU, after both processes had ended). Returns the offset
    past the text.

    A worker that fails, for any reason, says nothing: this process stops every worker and writes every block from
    the first not yet written itself, in grid order, so the error a sweep reports is the one the one-process sweep
    reports; each row is counted once by ``progress``. ``folder``: where a block's text too long to hold waits
    (:class:`_Held`); ``ready``: as for :func:`shared_chunks`. A grid whose pairs hold more than :data:`HELD_ROWS` rows
    each is written by this process alone. Raises :class:`~passprice.errors.InputError` at the
    first row in grid order that :func:`~passprice.sweep.text_chunks` refuses, :class:`OSError` when ``fd`` cannot
    be written; no worker is left when it returns or raises."""
    jobs = usable_jobs(jobs)
    runs = _joined_runs(blocks_of(grid, jobs), MOST_BLOCKS)
    jobs = min(jobs, len(runs))
    if grid.size() // max(units_of(grid), 1) > HELD_ROWS:  # a pair no cut divides, too long to hold
        jobs = 1
    if jobs == 1 or not hasattr(os, "fork"):
        if ready is not None:
            ready()
        return _write_from(sweeper, grid, fmt, runs, 0, fd, offset, progress)
    counted = 0  # rows every process has reported

    def count(rows: int) -> None:
        nonlocal counted
        counted += rows
        if progress is not None:
            progress(rows)

    workers: list[_Worker] = []
    turns: list[tuple[int, int]] = []
    claims = -1
    written = [-1, offset]  # the last block written (all before it written too), and the offset past it
    ends: dict[int, int] = {}  # the offset past each block written
    tallies: dict[int, Tally] = {-1: sweeper.take_tally()}  # this process's tally of each block it made

    def tallied(block: int) -> None:
        tallies[block] = sweeper.take_tally()

    try:
        turns = [os.pipe() for _ in range(jobs)]
        claims = _claims(len(runs))
        _prctl()  # looked up once here, not in each worker
        start_writeback(fd, offset, 0)  # sync_file_range looked up once here too
        for k in range(1, jobs):
            _start(workers, sweeper, grid, fmt, runs, k, jobs, fd, turns, folder, claims, offset)
        if ready is not None:
            ready()

        def hear(wait: bool) -> None:
            if wait:
                _await(workers, written[0] + 2, written, ends, count)
            for worker in workers:
                _heard(worker, count, ends)
            _advance(written, ends)

        def mine(rows: int) -> None:
            count(rows)
            for worker in workers:
                _heard(worker, count, ends)

        def tell(block: int, end: int) -> None:
            ends[block] = end
            news = block.to_bytes(8, "little") + end.to_bytes(8, "little")
            for j in range(1, jobs):
                os.write(turns[j][1], news)

        try:
            _made(sweeper, grid, fmt, runs, claims, fd, folder, mine, written, hear, tell, True, tallied)
            end = _await(workers, len(runs), written, ends, count)
            _add_tallies(sweeper, tallies, workers)
            return end
        except _Failed:
            pass
        # A worker failed: every worker stopped, the blocks not yet written are written here, in grid order.
        for worker in workers:
            _heard(worker, count, ends)
            worker.stop()
        _advance(written, ends)
        done = sum(len(runs[k]) for k in range(written[0] + 1)) * (grid.size() // units_of(grid))
        end = _write_from(sweeper, grid, fmt, runs, written[0] + 1, fd, written[1], _less(progress, counted - done),
                          tallied)
        _add_tallies(sweeper, tallies, workers)
        return end
    finally:
        for worker in workers:
            worker.stop()
        for end_fd in [claims, *(end for pair in turns for end in pair)]:
            if end_fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(end_fd)


def _write_from(
    sweeper: Sweeper, grid: Grid, fmt: str, runs: list[range], first: int, fd: int, offset: int,
    progress: Callable[[int], None] | None, tallied: Callable[[int], None] | None = None,
) -> int:
    """Write blocks ``first`` … of ``runs`` into ``fd`` from ``offset`` on, in this process, as they are made (a
    group of rows at a time: memory stays one group's text), ``tallied`` (if given) told each block written; return
    the offset past them."""
    for block in range(first, len(runs)):
        made = text_chunks(
            sweeper.segments(grid, progress, runs[block]), fmt, block == 0, block == len(runs) - 1, binary=True
        )
        for chunk in made:
            data = _encoded(chunk)
            _write_at(fd, data, offset)
            start_writeback(fd, offset, len(data))
            offset += len(data)
        if tallied is not None:
            tallied(block)
    return offset


def _heard(worker: _Worker, count: Callable[[int], None], ends: dict[int, int]) -> None:
    """Pass on what ``worker`` has reported, without waiting: its rows to ``count``, each block it has written
    (``wBLOCK END``) into ``ends`` (the offset past it). Once the worker has closed its pipe (it ends), closes it
    and reaps the worker (its exit status noted)."""
    if worker.report is None:
        return
    os.set_blocking(worker.report, False)
    while True:
        try:
            data = os.read(worker.report, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            os.close(worker.report)
            worker.report = None
            worker.finish(None)
            return
        lines = (worker._pending + data).split(b"\n")
        worker._pending = lines.pop()
        rows = 0
        for line in lines:
            if line.startswith(b"t"):
                _heard_tally(worker, line)
            elif line.startswith(b"w"):
                block, end = line[1:].split()
                ends[int(block)] = int(end)
            else:
                rows += int(line)
        worker.rows += rows
        if rows:
            count(rows)


def _advance(written: list[int], ends: dict[int, int]) -> None:
    """Move ``written`` (the last block written in order, the offset past it) past the blocks ``ends`` holds."""
    while written[0] + 1 in ends:
        written[0] += 1
        written[1] = ends[written[0]]


def _await(
    workers: list[_Worker], block: int, written: list[int], ends: dict[int, int], count: Callable[[int], None]
) -> int:
    """Wait until every block before ``block`` is written, passing on what the workers report (:func:`_heard`);
    return the offset past them. Raises :class:`_Failed` when a worker ends without writing all its blocks."""
    import select

    while True:
        _advance(written, ends)
        if written[0] + 1 >= block:
            return written[1]
        for worker in workers:
            if worker.status not in (None, 0):  # ended without writing all its blocks: the next turn never comes
                raise _Failed(f"worker {worker.pid} ended with status {worker.status}")
        watched = [w.report for w in workers if w.report is not None]
        if not watched:  # pragma: no cover - every worker ended well, so every block of theirs is written
            raise _Failed("a block is not written")
        readable, _, _ = select.select(watched, [], [])
        for worker in workers:
            if worker.report is not None and worker.report in readable:
                _heard(worker, count, ends)
