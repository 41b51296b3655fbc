"""A clock of its own for :func:`passprice.edit.locked`'s waits, so that a test of other edits landing while one
edit waits interleaves them the same way on a quiet machine and a busy one: the other editor's steps run when the
waiter's sleeps have moved the clock to their time, in the waiter's thread. An editor thread meant to land an edit
every 0.05 s against a 0.1 s wait missed it when the thread was not run for 0.1 s (the project's CI runs the suite
on two busy cores)."""

from __future__ import annotations

from collections.abc import Callable, Iterable


class EditClock:
    """Stands in for the :mod:`time` module in :mod:`passprice.edit` (its ``monotonic`` and ``sleep``):
    :meth:`monotonic` is the seconds slept so far (0 at the start), and each :meth:`sleep` first moves it on, then
    runs, in order, every step of ``steps`` (seconds from the start, a function of no arguments; in ascending time,
    possibly without end) whose time has come."""

    def __init__(self, steps: Iterable[tuple[float, Callable[[], object]]]) -> None:
        self.now = 0.0
        self._steps = iter(steps)
        self._next = next(self._steps, None)

    def monotonic(self) -> float:
        """The seconds slept so far."""
        return self.now

    def sleep(self, seconds: float) -> None:
        """Move the clock on by ``seconds``, then run the steps whose time has come."""
        self.now += seconds
        while self._next is not None and self._next[0] <= self.now:
            self._next[1]()
            self._next = next(self._steps, None)
