"""Budgets and stopping: one :class:`Deadline` per call, :class:`Budget` shares, PyVRP criteria.

A solver call builds its :class:`Deadline` where it starts (``Deadline(seconds, clock)``) and
hands it, or :meth:`Deadline.share` of it, down; every "time left" is :meth:`Deadline.left`.
A :class:`Budget` is an allotment of seconds and PyVRP iterations taken as a share of a whole
budget (:meth:`Budget.part`). :meth:`Deadline.criterion` is the deadline as a PyVRP stopping
criterion (PyVRP's own shape: ``pyvrp.solve(data, stop)``), combined with an iteration budget,
a give-up time and the package's stop request (:mod:`clrp_rl4co.execution.interrupt`, Ctrl-C).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pyvrp.stop import MaxIterations, MultipleCriteria, StoppingCriterion

from ..execution import interrupt

#: PyVRP prices an infeasible solution at a very large number (``CostEvaluator.cost``); a
#: best cost at least this large means no feasible solution was found yet.
INFEASIBLE_COST = 2**62


class Deadline:
    """A point in time on ``clock``, ``seconds`` after the deadline is made.

    Args:
        seconds: the time budget in seconds from now; None: no time limit (then the deadline
            never expires and :meth:`left` is None). A negative budget has expired at once.
        clock: the wall clock, in seconds (``time.perf_counter``; tests pass fake clocks).
    """

    def __init__(
        self, seconds: float | None, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._end = None if seconds is None else clock() + seconds

    @classmethod
    def _from(cls, seconds: float | None, now: float, clock: Callable[[], float]) -> Deadline:
        """The deadline ``seconds`` after ``now`` (read from ``clock`` by the caller)."""
        deadline = cls.__new__(cls)
        deadline.seconds, deadline.clock = seconds, clock
        deadline._end = None if seconds is None else now + seconds
        return deadline

    def left(self) -> float | None:
        """Seconds left until the deadline (0.0 once it has passed; None without a limit)."""
        if self._end is None:
            return None
        return max(0.0, self._end - self.clock())

    def expired(self) -> bool:
        """Whether the clock has passed the deadline (at the deadline itself it has not;
        never without a limit)."""
        return self._end is not None and self.clock() > self._end

    def share(self, fraction: float) -> Deadline:
        """A new deadline, ``fraction`` of the seconds left now from now (without a limit,
        one without a limit too). Reads the clock once."""
        if self._end is None:
            return Deadline._from(None, 0.0, self.clock)
        now = self.clock()
        return Deadline._from(fraction * max(0.0, self._end - now), now, self.clock)

    def criterion(
        self, max_iterations: int | None = None, give_up: float | None = None
    ) -> StoppingCriterion:
        """This deadline as a PyVRP stopping criterion: PyVRP stops at the first of the
        deadline (:class:`DeadlineReached`), ``max_iterations`` iterations (PyVRP's
        ``MaxIterations``; negative: none), ``give_up`` seconds from now without a feasible
        solution (:class:`NoFeasibleBy`) and a requested stop (:class:`StopRequested`), and
        returns its best solution so far.

        Raises:
            ValueError: neither a time limit nor ``max_iterations`` ("give seconds or
                max_iterations"; ``give_up`` alone would never stop a feasible search).
        """
        if max_iterations is None and self._end is None:
            raise ValueError("give seconds or max_iterations")
        criteria: list[StoppingCriterion] = []
        if give_up is not None:
            criteria.append(NoFeasibleBy(Deadline(give_up, self.clock)))
        if max_iterations is not None:
            criteria.append(MaxIterations(max(int(max_iterations), 0)))
        if self._end is not None:
            criteria.append(DeadlineReached(self))
        return MultipleCriteria([*criteria, StopRequested()])


class DeadlineReached:
    """PyVRP stopping criterion: the deadline has passed (:meth:`Deadline.expired`)."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline

    def __call__(self, best_cost: float) -> bool:  # noqa: ARG002 (PyVRP's signature)
        return self.deadline.expired()


class NoFeasibleBy:
    """PyVRP stopping criterion: ``deadline`` has passed and the best solution is still
    infeasible (its cost is at least :data:`INFEASIBLE_COST`)."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline

    def __call__(self, best_cost: float) -> bool:
        return best_cost >= INFEASIBLE_COST and self.deadline.expired()


class StopRequested:
    """PyVRP stopping criterion: a stop was requested (:mod:`clrp_rl4co.execution.interrupt`,
    Ctrl-C); PyVRP then returns its best solution so far."""

    def __call__(self, best_cost: float) -> bool:  # noqa: ARG002 (PyVRP's signature)
        return interrupt.requested()


@dataclass(frozen=True)
class Budget:
    """An allotment of work: seconds and PyVRP iterations.

    Attributes:
        seconds: wall-clock seconds (None: no time limit).
        iterations: PyVRP iterations (None: no iteration limit).
    """

    seconds: float | None
    iterations: int | None

    def part(self, share: float) -> Budget:
        """``share`` of each budget: ``share x seconds`` and ``share x iterations`` rounded
        down but at least one iteration (None stays None)."""
        seconds = None if self.seconds is None else self.seconds * share
        iterations = None
        if self.iterations is not None:
            iterations = max(1, int(self.iterations * share))
        return Budget(seconds, iterations)
