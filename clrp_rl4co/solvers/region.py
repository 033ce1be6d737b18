"""A depot-set move priced by re-routing only the region it changes.

A drop, swap or add move of the depot-set search (:func:`.set_search.neighbour_sets`) changes
the routes near the depots it closes or opens; far from them the best solution's routes stay
as good as they were. :func:`reroute_region` keeps those routes and routes the region alone: the
depots the move opens and the nearest depots it keeps to each depot it closes or opens
(:func:`region_depots`), with every customer they and the closed depots served
(:func:`.decompose.sub_instance`). A region of a few depots and a hundred-odd customers is
routed far closer to its best in a second than the whole instance, so candidate sets are
compared with the best set's routes at about equal quality, and many more fit in a budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from ..data import CLRPInstance, CLRPSolution
from ..data.solution import Route
from .common import solution_cost
from .decompose import RouteOnSet, global_routes, sub_instance

logger = logging.getLogger(__name__)

#: Nearest kept depots of each closed or opened depot that are routed with it.
NEIGHBOURS = 2


def region_depots(
    instance: CLRPInstance,
    solution: CLRPSolution,
    candidate: tuple[int, ...],
    neighbours: int = NEIGHBOURS,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The depots of ``candidate`` routed again, and those ``solution`` uses that it closes.

    Args:
        instance: the instance.
        solution: the best solution so far (its routes' depots are the ones in use).
        candidate: the candidate set of open depots.
        neighbours: for each depot the move closes (used by ``solution``, not in
            ``candidate``) or opens (in ``candidate``, unused by ``solution``), this many of
            the nearest depots both use (Euclidean distance between depots).

    Returns:
        ``(region, closed)``: the opened depots with the neighbours, sorted, and the closed
        depots, sorted. The region's capacity is not checked here (:func:`reroute_region`
        widens it).
    """
    used = {r.depot for r in solution.routes}
    chosen = set(int(d) for d in candidate)
    closed = sorted(used - chosen)
    opened = sorted(chosen - used)
    kept = np.array(sorted(used & chosen), np.int64)
    region = set(opened)
    if kept.size:
        xy = instance.depot_locs
        for depot in (*closed, *opened):
            dist = ((xy[kept] - xy[depot]) ** 2).sum(axis=1)
            region.update(int(d) for d in kept[np.argsort(dist, kind="stable")[:neighbours]])
    return tuple(sorted(region)), tuple(closed)


def reroute_region(
    instance: CLRPInstance,
    solution: CLRPSolution,
    candidate: tuple[int, ...],
    seconds: float | None,
    max_iterations: int | None,
    seed: int,
    route: RouteOnSet,
    neighbours: int = NEIGHBOURS,
    clock: Callable[[], float] = time.perf_counter,
) -> CLRPSolution | None:
    """``solution`` with the depots of ``candidate`` open: the routes outside the move's region
    kept, the region's customers routed by ``route`` on its depots.

    The region (:func:`region_depots`) grows by one neighbour per changed depot until its
    depots hold the demand of the customers it takes over (those of its depots and of the
    closed ones); when no region does, the whole set. The region's run starts from its own
    routes and the closed depots' routes, each given to the region depot nearest its depot.

    Args:
        instance: the instance.
        solution: a valid solution (the best so far).
        candidate: the set of open depots to price; it must differ from ``solution``'s.
        seconds: the run's time limit (None: iterations only).
        max_iterations: the run's PyVRP iterations (None: time only).
        seed: the run's seed.
        route: routes one set (:func:`.pyvrp_solver.route_on_set`'s signature).
        neighbours: see :func:`region_depots`.
        clock: the wall clock ``seconds`` are measured on.

    Returns:
        The joined solution (its routes use only depots of ``candidate``), or None when the run
        found no feasible routes for the region.
    """
    demand = instance.demand
    capacity = instance.depot_capacity
    while True:
        region, closed = region_depots(instance, solution, candidate, neighbours)
        moved = [r for r in solution.routes if r.depot in set(region) | set(closed)]
        load = float(sum(demand[list(r.customers)].sum() for r in moved))
        kept_count = len({r.depot for r in solution.routes} & set(candidate))
        if float(capacity[list(region)].sum()) >= load or neighbours >= kept_count:
            break
        neighbours += 1
    customers = np.array(sorted(c for r in moved for c in r.customers), np.int64)
    local_customer = {int(c): k for k, c in enumerate(customers)}
    local_depot = {d: k for k, d in enumerate(region)}
    xy = instance.depot_locs
    nearest = {d: int(np.argmin(((xy[list(region)] - xy[d]) ** 2).sum(axis=1))) for d in closed}
    warm = CLRPSolution([
        Route(local_depot[r.depot] if r.depot in local_depot else nearest[r.depot],
              tuple(local_customer[c] for c in r.customers))
        for r in moved
    ])  # fmt: skip
    sub = sub_instance(instance, region, customers, f"{instance.name}[region]")
    found = route(sub, range(len(region)), seconds, max_iterations, seed, warm, 0.0, clock=clock)
    if found is None:
        return None
    outside = [r for r in solution.routes if r.depot not in local_depot and r.depot not in closed]
    joined = CLRPSolution(outside + global_routes(found, region, customers))
    logger.debug(
        "%s: set %s by its region %s (%d customers): %.6g",
        instance.name,
        candidate,
        region,
        len(customers),
        solution_cost(instance, joined),
    )
    return joined


__all__ = ["NEIGHBOURS", "region_depots", "reroute_region"]
