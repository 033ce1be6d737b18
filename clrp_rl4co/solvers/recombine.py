"""Route recombination: the cheapest CLRP solution made only of routes seen in other solutions.

The routes of the given solutions (e.g. the best rollouts of a policy's x8 decoding) form a
pool: one route per depot and customer set, in the cheapest order seen. Set partitioning over
that pool, solved by HiGHS within a time limit:

.. code-block:: text

    min  sum_r (F + length_r) x_r + sum_i O_i y_i
    s.t. sum_{r serves j} x_r = 1                every customer j
         sum_{r from i} load_r x_r <= Q_i y_i    every depot i
         x_r <= y_depot(r)                       every route r
         x, y binary

Every given valid solution is a feasible point (its routes are in the pool); the best one is
HiGHS's start, so the result is never worse than the best input. Routes from different
rollouts combine into solutions no single rollout built, e.g. one rollout's routes around one
depot with another's elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..data import CLRPInstance, CLRPSolution, Route
from ..data.solution import route_length
from .common import check_solution
from .highs import INF, load_mip, new_highs, run_highs, start_from

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PoolRoute:
    """One route of the pool.

    Attributes:
        route: the depot and the customers in the cheapest order seen.
        length: its length in the instance's units (the vehicle's fixed cost excluded).
        load: the demand it serves.
    """

    route: Route
    length: float
    load: float


def route_pool(instance: CLRPInstance, solutions: Iterable[CLRPSolution]) -> list[PoolRoute]:
    """The distinct routes of ``solutions``: one per (depot, customer set), the shortest order
    seen kept, in order of first appearance."""
    pool: dict[tuple[int, frozenset[int]], PoolRoute] = {}
    for solution in solutions:
        for route in solution.routes:
            key = (route.depot, frozenset(route.customers))
            length = route_length(instance, route)
            if key not in pool or length < pool[key].length:
                load = float(np.asarray(instance.demand)[list(route.customers)].sum())
                pool[key] = PoolRoute(route, length, load)
    return list(pool.values())


def recombine(
    instance: CLRPInstance,
    solutions: Iterable[CLRPSolution],
    seconds: float,
    threads: int = 1,
) -> CLRPSolution:
    """The best solution made of the routes of ``solutions`` that HiGHS finds in
    ``seconds`` (set partitioning over their route pool; see the module).

    Args:
        instance: the CLRP instance.
        solutions: valid solutions of ``instance`` (at least one).
        seconds: HiGHS's time limit (building the model comes on top).
        threads: HiGHS threads.

    Returns:
        A valid solution never costlier than the best of ``solutions`` (that one itself when
        HiGHS finds nothing better).

    Raises:
        ValueError: no solution is given, or one of them is invalid for ``instance``.
    """
    given = list(solutions)
    if not given:
        raise ValueError("solutions: recombination needs at least one solution")
    for k, solution in enumerate(given):
        check_solution(instance, solution, f"solutions[{k}] is invalid")
    best = min(given, key=lambda s: s.cost(instance).total)
    pool = route_pool(instance, given)
    num_routes, num_depots = len(pool), instance.num_depots
    fixed = instance.vehicle_fixed_cost
    cost = np.array([fixed + p.length for p in pool] + list(instance.opening_cost), float)
    serving: list[list[int]] = [[] for _ in range(instance.num_customers)]
    at_depot: list[list[int]] = [[] for _ in range(num_depots)]
    rows = []
    for r, p in enumerate(pool):
        for customer in p.route.customers:
            serving[customer].append(r)
        at_depot[p.route.depot].append(r)
        rows.append(([r, num_routes + p.route.depot], [1.0, -1.0], -INF, 0.0))
    for routes in serving:
        rows.append((routes, [1.0] * len(routes), 1.0, 1.0))
    for depot, routes in enumerate(at_depot):
        if routes:
            loads = [pool[r].load for r in routes] + [-float(instance.depot_capacity[depot])]
            rows.append((routes + [num_routes + depot], loads, -INF, 0.0))
    columns = num_routes + num_depots
    h = new_highs(threads, verbose=False)
    load_mip(h, cost, np.zeros(columns), np.ones(columns), np.ones(columns, bool), rows)
    index = {(p.route.depot, frozenset(p.route.customers)): r for r, p in enumerate(pool)}
    start = np.zeros(columns)
    for route in best.routes:
        start[index[(route.depot, frozenset(route.customers))]] = 1.0
    start[[num_routes + d for d in best.open_depots]] = 1.0
    start_from(h, start)
    status, objective, bound, values = run_highs(h, seconds)
    logger.debug("%s: recombination of %d routes: %s, %.6g (bound %.6g, start %.6g)",
                 instance.name, num_routes, status, objective, bound,
                 best.cost(instance).total)  # fmt: skip
    if values is None:
        return best
    routes = [pool[r].route for r in range(num_routes) if values[r] > 0.5]
    found = CLRPSolution(routes)
    check_solution(instance, found, "recombination returned an invalid solution")
    return found if found.cost(instance).total < best.cost(instance).total else best
