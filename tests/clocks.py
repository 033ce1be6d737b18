"""Clocks for the tests of time-budgeted code (solvers take a ``clock``)."""

from __future__ import annotations


class FakeClock:
    """A wall clock that moves only when told to."""

    def __init__(self, start: float = 1024.0) -> None:
        self.now = start  # away from 0: an elapsed time read as clock() + start shows

    def __call__(self) -> float:
        return self.now


class TickingClock(FakeClock):
    """A clock that moves 1 s forward each time it is read."""

    def __call__(self) -> float:
        self.now += 1.0
        return self.now
