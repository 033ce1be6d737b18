"""The best solution so far of a solver call that runs several searches within one deadline.

:class:`Incumbent` holds the cheapest solution offered (:meth:`Incumbent.offer`) and times the
runs that may replace it (:meth:`Incumbent.attempt`): each gets at most its seconds and what
the caller's :class:`.stopping.Deadline` leaves less the largest overrun seen, so that a run
returning late shortens the next ones instead of the deadline. :func:`.hybrid.solve_hybrid`
drives its refinements with it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..data import CLRPInstance, CLRPSolution
from .stopping import Deadline


class Incumbent:
    """The cheapest solution of ``instance`` so far and the timing of the runs that may
    replace it.

    Args:
        instance: the instance.
        solution: the first incumbent.
        cost: its cost (:meth:`CLRPSolution.cost`'s total).
        deadline: when every run must have returned.
        overrun: how far past its seconds a run is first assumed to return (then the largest
            overrun seen).
    """

    def __init__(
        self,
        instance: CLRPInstance,
        solution: CLRPSolution,
        cost: float,
        deadline: Deadline,
        overrun: float,
    ) -> None:
        self.instance, self.solution, self.cost = instance, solution, cost
        self.deadline, self.overrun = deadline, overrun

    def offer(self, solution: CLRPSolution | None) -> None:
        """Keep ``solution`` when it is cheaper than the incumbent (an equal cost keeps the
        incumbent; None is no solution)."""
        if solution is None:
            return
        cost = solution.cost(self.instance).total
        if cost < self.cost:
            self.solution, self.cost = solution, cost

    def attempt(self, run: Callable[[float], CLRPSolution | None], seconds: float) -> None:
        """``run(s)`` for ``s``: at most ``seconds`` and what the deadline leaves less the
        largest overrun seen; nothing runs when that is no time. What it finds is offered."""
        seconds = min(seconds, self.deadline.left() - self.overrun)
        if seconds <= 0:
            return
        clock = self.deadline.clock
        began = clock()
        found = run(seconds)
        self.overrun = max(self.overrun, clock() - began - seconds)
        self.offer(found)
