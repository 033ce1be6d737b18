"""Budgets and stopping: one :class:`Deadline` per call, :class:`Budget` shares, PyVRP criteria.

:func:`clrp_rl4co.solve` builds the :class:`Deadline` where the call starts and hands it to the
solver; a solver called directly with a number of seconds makes its own (:func:`as_deadline`).
Each hands it, :meth:`Deadline.share` or :meth:`Deadline.before` of it, down; every "time left"
is :meth:`Deadline.left`.
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
    """A point in time on ``clock``, ``seconds`` after ``start`` (by default, when it is made).

    Args:
        seconds: the time budget in seconds from ``start``; None: no time limit (then the
            deadline never expires and :meth:`left` is None). A negative budget has expired
            at once.
        clock: the wall clock, in seconds (``time.perf_counter``; tests pass fake clocks).
        start: the reading of ``clock`` the budget counts from (an earlier one: the start of
            the caller's call); None: now.
    """

    def __init__(
        self,
        seconds: float | None,
        clock: Callable[[], float] = time.perf_counter,
        start: float | None = None,
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        if seconds is None:
            self._end = None
        else:
            self._end = (clock() if start is None else start) + seconds

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
            return Deadline(None, self.clock)
        now = self.clock()
        return Deadline(fraction * max(0.0, self._end - now), self.clock, start=now)

    def before(self, margin: float) -> Deadline:
        """A new deadline ``margin`` seconds earlier than this one on the same clock (without
        a limit, one without a limit too); its ``seconds`` are counted from now."""
        if self._end is None:
            return Deadline(None, self.clock)
        now = self.clock()
        return Deadline(self._end - margin - now, self.clock, start=now)

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


def as_deadline(
    budget: float | Deadline | None, clock: Callable[[], float] = time.perf_counter
) -> Deadline:
    """``budget`` as a :class:`Deadline`: a deadline as it is (its own clock kept), a number of
    seconds (or None, no limit) as a deadline that many seconds from now on ``clock``."""
    if isinstance(budget, Deadline):
        return budget
    return Deadline(budget, clock)


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
