"""Refinement of a given CLRP solution by PyVRP warm-started from it.

PyVRP 0.14 takes a warm start through ``pyvrp.solve(..., initial_solution=...)``: its iterated
local search starts from that solution. The given routes are converted to the one-model encoding
of :mod:`.pyvrp_encoding` (each CLRP route is one trip of its depot's vehicle) and the result is
priced with :meth:`CLRPSolution.cost`; the input is returned whenever it is at least as good.

Modes:
    ``"routes"``: only the routes change; the encoding holds the input's open depots only (a
        depot may still end up unused, which only saves its opening cost).
    ``"full"``: location and routing: the depot-set search of :mod:`.pyvrp_solver` (drop / swap /
        add a depot, candidate sets ranked by a cheap cost estimate) warm-started from the
        input's routes and depot set; the input is kept if nothing beats it.
"""

from __future__ import annotations

from ..data import CLRPInstance, CLRPSolution
from .common import check_solution
from .pyvrp_encoding import encode
from .pyvrp_solver import depot_set_search, run_pyvrp

MODES = ("full", "routes")


def refine_solution(
    instance: CLRPInstance,
    solution: CLRPSolution,
    seconds: float | None = 1.0,
    mode: str = "full",
    seed: int = 0,
    max_iterations: int | None = None,
) -> CLRPSolution:
    """Return a valid solution never costlier than ``solution`` (``solution`` itself if no gain).

    ``solution`` may break a capacity or leave customers unserved: then any valid solution
    PyVRP finds is returned, and ``solution`` itself when PyVRP finds none within the budget.

    Args:
        instance: the CLRP instance.
        solution: the starting solution (routes may be in any order).
        seconds: PyVRP's wall-clock budget (None: iterations only).
        mode: ``"full"`` or ``"routes"``.
        seed: PyVRP seed; with ``seconds=None`` and ``max_iterations`` set the result is
            deterministic.
        max_iterations: PyVRP iterations; 0 returns ``solution`` unchanged.

    Raises:
        ValueError: unknown ``mode``; ``solution`` naming a depot or customer that does not
            exist, holding an empty route or serving a customer twice; or PyVRP's result
            decoding to an invalid solution (a bug in the encoding).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if max_iterations is not None and max_iterations <= 0:
        return solution
    if seconds is not None and seconds <= 0 and max_iterations is None:
        return solution
    try:  # PyVRP takes any start it can encode; capacities and unserved customers it repairs
        solution.check_structure(instance)
    except ValueError as exc:
        raise ValueError(f"instance {instance.name!r}: cannot refine: {exc}") from exc
    if not solution.routes:
        return solution
    try:
        solution.check(instance)
    except ValueError:
        valid_start = None  # capacity broken or customers unserved: any valid result is better
    else:
        valid_start = solution
    if mode == "routes":
        enc = encode(instance, list(solution.open_depots))
        found = run_pyvrp(enc, seconds, max_iterations, seed, initial=solution)
    elif instance.num_depots > 1:
        found = depot_set_search(instance, seconds, max_iterations, seed, initial=valid_start)
    else:
        found = run_pyvrp(encode(instance), seconds, max_iterations, seed, solution)
    if found is None:  # PyVRP found no feasible solution within the budget
        return solution
    check_solution(instance, found, "PyVRP's refinement returned an invalid solution")
    if valid_start is None:
        return found
    base = solution.cost(instance).total
    if found.cost(instance).total < base - 1e-9 * max(1.0, abs(base)):
        return found
    return solution
