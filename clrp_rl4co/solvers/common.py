"""Shared pieces of the classical solvers: the result record and the input feasibility check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import CAPACITY_TOLERANCE, CLRPInstance, CLRPSolution

#: Status strings used by every solver.
STATUS_OPTIMAL = "optimal"
STATUS_FEASIBLE = "feasible"
STATUS_NO_SOLUTION = "no solution"


@dataclass
class SolverResult:
    """Outcome of one solver run on one instance.

    Attributes:
        solution: the best valid solution found, or None (then ``objective`` is None too).
        objective: ``solution.cost(instance).total`` in the instance's units, or None.
        bound: a proven lower bound on the optimum (exact solver only), else None.
        proven_optimal: True only when an exact solver proved ``objective`` optimal.
        status: ``"optimal"``, ``"feasible"``, ``"no solution"`` or a solver-specific string.
        runtime: wall-clock seconds spent on this instance.
        solver: the solver's name (``"pyvrp"`` or ``"exact"``).
        name: the instance's name.
    """

    solution: CLRPSolution | None
    objective: float | None
    bound: float | None
    proven_optimal: bool
    status: str
    runtime: float
    solver: str
    name: str = ""


def check_instance(instance: CLRPInstance) -> None:
    """Raise ``ValueError`` when ``instance`` is obviously infeasible.

    ``CLRPInstance`` already rejects total demand above total depot capacity and a demand above
    the vehicle capacity. This adds a cheap necessary condition of the depot bin packing: for every
    threshold ``t``, the customers with demand above ``t`` fit only into depots whose capacity is
    above ``t``, so their total demand must not exceed those depots' total capacity.
    """
    demand = np.asarray(instance.demand, dtype=np.float64)
    capacity = np.asarray(instance.depot_capacity, dtype=np.float64)
    tol = CAPACITY_TOLERANCE
    if demand.sum() > capacity.sum() + tol:
        raise ValueError(
            f"{instance.name}: total demand {demand.sum():g} exceeds total depot capacity "
            f"{capacity.sum():g}"
        )
    if demand.max() > capacity.max() + tol:
        raise ValueError(
            f"{instance.name}: demand {demand.max():g} exceeds every depot capacity "
            f"(largest {capacity.max():g})"
        )
    for t in np.unique(demand):
        big = demand[demand >= t].sum()
        room = capacity[capacity >= t - tol].sum()
        if big > room + tol:
            raise ValueError(
                f"{instance.name}: customers with demand >= {t:g} need {big:g} but the depots "
                f"that can hold them have only {room:g}"
            )


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

    An invalid or missing solution becomes status ``"no solution"`` with objective None.
    """
    if solution is not None:
        try:
            solution.check(instance)
        except ValueError:
            solution = None
    if solution is None:
        return SolverResult(
            None, None, bound, False, STATUS_NO_SOLUTION, runtime, solver, instance.name
        )
    objective = solution.cost(instance).total
    if status is None:
        status = STATUS_OPTIMAL if proven_optimal else STATUS_FEASIBLE
    return SolverResult(
        solution, objective, bound, proven_optimal, status, runtime, solver, instance.name
    )
