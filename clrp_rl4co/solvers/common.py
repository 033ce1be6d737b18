"""Shared pieces of the classical solvers: the result record and the input feasibility check."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..data import CLRPInstance, CLRPSolution
from ..status import Status


@dataclass
class SolverResult:
    """Outcome of one solver run on one instance.

    Attributes:
        solution: the best valid solution found, or None (then ``objective`` is None too).
        objective: ``solution.cost(instance).total`` in the instance's units, or None.
        bound: a proven lower bound on the optimum (exact solver only), else None.
        proven_optimal: True only when an exact solver proved ``objective`` optimal.
        status: :class:`~clrp_rl4co.status.Status` ``OPTIMAL``, ``FEASIBLE`` or
            ``NO_SOLUTION``.
        runtime: wall-clock seconds spent on this instance.
        solver: the solver's name (``"pyvrp"`` or ``"exact"``).
        name: the instance's name.
    """

    solution: CLRPSolution | None
    objective: float | None
    bound: float | None
    proven_optimal: bool
    status: Status
    runtime: float
    solver: str
    name: str = ""


def check_solution(instance: CLRPInstance, solution: CLRPSolution, problem: str) -> None:
    """:meth:`CLRPSolution.check`; on failure a ``ValueError`` reading ``instance <name>:
    <problem>: <what is wrong>``, e.g. ``problem="solver 'pyvrp' returned an invalid
    solution"`` or ``"the initial solution is invalid"`` (a solver returning an invalid solution
    is a bug in its encoding, never a result)."""
    try:
        solution.check(instance)
    except ValueError as exc:
        raise ValueError(f"instance {instance.name!r}: {problem}: {exc}") from exc


def solution_cost(instance: CLRPInstance, solution: CLRPSolution | None) -> float:
    """The total cost of ``solution`` (:meth:`CLRPSolution.cost`); ``inf`` for None (no
    solution), so that any solution beats none."""
    return math.inf if solution is None else solution.cost(instance).total


def make_result(
    instance: CLRPInstance,
    solution: CLRPSolution | None,
    *,
    solver: str,
    runtime: float,
    bound: float | None = None,
    proven_optimal: bool = False,
    status: str | None = None,
) -> SolverResult:
    """Validate ``solution`` with :meth:`CLRPSolution.check` and price it with its exact cost.

    A missing solution (``None``: the solver found none in its budget) becomes status
    ``"no solution"`` with objective None.

    Raises:
        ValueError: ``solution`` violates a CLRP constraint (a solver returning one is a bug in
            its encoding or decoding), or ``bound`` is not a finite number.
    """
    if bound is not None and not math.isfinite(bound):
        raise ValueError(
            f"instance {instance.name!r}: solver {solver!r} gave bound {bound!r}; pass None "
            "when there is no finite bound"
        )
    if solution is not None:
        check_solution(instance, solution, f"solver {solver!r} returned an invalid solution")
    if solution is None:
        return SolverResult(
            None, None, bound, False, Status.NO_SOLUTION, runtime, solver, instance.name
        )
    objective = solution.cost(instance).total
    if status is None:
        status = Status.OPTIMAL if proven_optimal else Status.FEASIBLE
    return SolverResult(
        solution, objective, bound, proven_optimal, status, runtime, solver, instance.name
    )
