"""A sweep shared among processes writes the one-process sweep's text, byte for byte: the grid is cut into contiguous
runs of its (serving, card) pairs, each priced and written exactly as in the whole grid, and the runs' texts are put
together in grid order.

After the grid is checked (every file it reads loaded), the process forks one worker a later run of pairs; each
worker prices and writes its run into an anonymous temporary file (in the output's folder, so nothing is left
behind whatever happens to it) while this process does the first run, then this process copies the workers' files
after its own text, in order, in the kernel (:func:`passprice.files.append_file`). A worker that fails, for any
reason (a price that is not finite, a full disk, a signal), says nothing: this process prices its run again itself,
so the error a sweep reports is the one the one-process sweep reports, at the first such row in grid order. A worker
tells this process the rows it has priced (for the progress bar) through a pipe. Ctrl-C, SIGTERM or any error here
kills and reaps every worker before it goes on, and a worker dies with this process (Linux's parent-death signal),
so no process outlives the sweep.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

from passprice.files import Appended
from passprice.sweep import Grid, Sweeper, text_chunks, units_of

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


def parts(grid: Grid, jobs: int) -> list[range]:
    """``grid``'s (serving, card) pairs (:func:`~passprice.sweep.units_of`) cut into at most ``jobs`` contiguous runs
    of nearly equal length, in grid order (one run when ``jobs`` is 1, the grid has one pair or no rows)."""
    count = units_of(grid)
    jobs = max(1, min(jobs, count)) if grid.size() else 1
    cuts = [count * k // jobs for k in range(jobs + 1)]
    return [range(a, b) for a, b in itertools.pairwise(cuts)]


class _Worker:
    """A forked process pricing and writing the pairs ``units`` of a grid into the anonymous file ``fd``, and
    writing the rows it has priced (decimal, a line at a time) to the pipe it reports through."""

    def __init__(self, pid: int, fd: int, report: int | None) -> None:
        self.pid = pid
        self.fd = fd
        self.report = report
        self.rows = 0  # rows it has said it priced
        self.status: int | None = None  # its exit status, once reaped
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


#: The signals that stop a sweep (Ctrl-C, and those passprice.cli turns into :class:`~passprice.cli.Terminated`):
#: held back while a worker is forked and noted, so none can leave a worker unknown to the sweep.
_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _start(
    workers: list[_Worker],
    sweeper: Sweeper,
    grid: Grid,
    fmt: str,
    units: range,
    closes: bool,
    folder: Path | None,
    reports: bool,
) -> _Worker:
    """Fork a worker writing the text of ``grid``'s pairs ``units`` (``closes``: the last part, with the text's
    end) into a new anonymous file in ``folder`` (``None``: the system's temporary folder), and add it to
    ``workers`` before any signal that stops the sweep is let through."""
    fd = _anonymous(folder)
    read, write = os.pipe() if reports else (None, None)
    parent = os.getpid()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    pid = -1
    try:
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
            if read is not None:
                os.close(read)

            def report(rows: int) -> None:
                if write is not None:
                    os.write(write, b"%d\n" % rows)

            for chunk in text_chunks(sweeper.segments(grid, report, units), fmt, opens=False, closes=closes):
                data = memoryview(chunk.encode("utf-8"))
                while data:
                    data = data[os.write(fd, data) :]
            status = 0
        except BaseException:  # whatever stops the worker, this process prices its part again
            status = 1
        finally:
            os._exit(status)
    if write is not None:
        os.close(write)
    return worker


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
    :meth:`~passprice.sweep.Sweeper.segments`, made by ``jobs`` processes (:func:`parts`): this one's part as text
    chunks, then each worker's as an :class:`~passprice.files.Appended` file (``appended``; for
    :func:`~passprice.files.write_atomically`) or as bytes read from it (a megabyte at a time: for a stream).
    ``progress`` gets every process's priced rows; ``folder``: where the workers' anonymous files are made (the
    output's folder); ``ready``: called once the workers are forked, before this process prices its part and
    before any text is given (``passprice sweep`` judges the grid's servings under their locks there, while the
    workers price: about 50 ms of the bench grid's time taken off the wall clock; what it raises ends the sweep and
    its workers). Raises :class:`~passprice.errors.InputError` at the first row in grid order that
    :func:`~passprice.sweep.text_chunks` refuses; when the generator ends, early or not, no worker is left."""
    runs = parts(grid, usable_jobs(jobs))
    if len(runs) == 1 or not hasattr(os, "fork"):  # one part, or a system without fork: one process
        if ready is not None:
            ready()
        yield from text_chunks(sweeper.segments(grid, progress), fmt)
        return
    workers: list[_Worker] = []
    try:
        _prctl()  # looked up once here, not in each worker
        for k, units in enumerate(runs[1:], 2):
            try:
                _start(workers, sweeper, grid, fmt, units, k == len(runs), folder, progress is not None)
            except OSError:  # no process or file to be had: the parts left are priced here, in turn
                break
        if ready is not None:
            ready()

        def mine(rows: int) -> None:
            assert progress is not None
            progress(rows)
            for worker in workers:
                worker.drain(progress, wait=False)

        yield from text_chunks(sweeper.segments(grid, mine if progress else None, runs[0]), fmt, closes=False)
        for k, units in enumerate(runs[1:], 2):
            worker = workers[k - 2] if k - 2 < len(workers) else None
            if worker is not None and worker.finish(progress):
                if appended:
                    yield Appended(worker.fd)
                else:
                    offset = 0
                    while data := os.pread(worker.fd, 1 << 20, offset):
                        offset += len(data)
                        yield data
                continue
            # The worker failed (or none was started): this process prices its part (rows reported not counted twice).
            counted = worker.rows if worker is not None else 0
            again = text_chunks(sweeper.segments(grid, _less(progress, counted), units), fmt, False, k == len(runs))
            yield from again
    finally:
        for worker in workers:
            worker.stop()


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
