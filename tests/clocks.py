"""A clock for the tests of time-budgeted code (solvers take a ``clock``)."""

from __future__ import annotations


class FakeClock:
    """A wall clock that moves only when told to."""

    def __init__(self, start: float = 1024.0) -> None:
        self.now = start  # away from 0: an elapsed time read as clock() + start shows

    def __call__(self) -> float:
        return self.now
