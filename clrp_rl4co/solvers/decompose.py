"""Routing a large instance by parts: a depot set and an assignment, then PyVRP per group.

On thousands of customers one PyVRP run over the whole instance cannot keep a budget: its
first local search alone outlasts a minute at 10,000 customers, and its dense distance and
duration matrices need gigabytes. Once the open depots and each customer's depot are fixed,
the routes of distant depots do not interact, so the depots are split into groups of nearby
depots (recursive bisection of their coordinates, at most ``part_customers`` customers per
group) and each group is routed on its own (by the given ``route``, PyVRP's
:func:`.pyvrp_solver.route_on_set`, on the sub-instance of its depots and customers: PyVRP
may still move customers between the depots of a group), each in its share of the time, in
proportion to its customers. Each group starts from routes of its own (the initial solution's,
else :func:`sweep_routes`) and keeps them where PyVRP finds nothing cheaper, so the result is
always complete: once a stop is requested (:mod:`clrp_rl4co.execution.interrupt`, Ctrl-C) no further
group is handed to PyVRP.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from ..data import CLRPInstance, CLRPSolution
from ..data.solution import Route
from ..execution import interrupt

logger = logging.getLogger(__name__)

#: How one group is routed: ``(instance, depots, seconds, iterations, seed, initial, clock=)``
#: to a solution or None.
RouteOnSet = Callable[..., "CLRPSolution | None"]

#: Customers from which the depot-set search routes by parts.
LARGE_INSTANCE = 2000
#: Largest number of customers of one group of depots routed together.
PART_CUSTOMERS = 400


def sub_instance(instance: CLRPInstance, depots, customers, name: str = "") -> CLRPInstance:
    """The instance of the given depots and customers only (their order gives the new
    indices; capacities, costs and the cost convention as in ``instance``)."""
    depots = np.asarray(depots, np.int64)
    customers = np.asarray(customers, np.int64)
    return CLRPInstance(
        depot_locs=instance.depot_locs[depots],
        customer_locs=instance.customer_locs[customers],
        depot_capacity=instance.depot_capacity[depots],
        opening_cost=instance.opening_cost[depots],
        demand=instance.demand[customers],
        vehicle_capacity=instance.vehicle_capacity,
        vehicle_fixed_cost=instance.vehicle_fixed_cost,
        rounded_costs=instance.rounded_costs,
        name=name or instance.name,
    )


def depot_groups(
    instance: CLRPInstance, assignment: np.ndarray, part_customers: int = PART_CUSTOMERS
) -> list[list[int]]:
    """The depots that serve customers in ``assignment`` ([N] depot per customer), split into
    groups of nearby depots with at most ``part_customers`` customers each (a single depot
    with more stays a group of its own): halve the depots at the median of their wider
    coordinate spread, weighted by their customers, until every group fits."""
    counts = np.bincount(assignment, minlength=instance.num_depots)
    used = [int(d) for d in np.flatnonzero(counts)]
    out: list[list[int]] = []
    stack = [used]
    while stack:
        group = stack.pop()
        if len(group) == 1 or counts[group].sum() <= part_customers:
            out.append(sorted(group))
            continue
        xy = instance.depot_locs[group]
        axis = int(np.argmax(xy.max(axis=0) - xy.min(axis=0)))
        order = [group[k] for k in np.argsort(xy[:, axis], kind="stable")]
        cumulative = np.cumsum(counts[order])
        cut = int(np.searchsorted(cumulative, cumulative[-1] / 2.0)) + 1  # half on the left
        cut = min(max(cut, 1), len(order) - 1)
        stack.extend([order[cut:], order[:cut]])
    return out


def route_by_parts(
    instance: CLRPInstance,
    assignment: np.ndarray,
    seconds: float | None,
    route: RouteOnSet,
    max_iterations: int | None = None,
    seed: int = 0,
    initial: CLRPSolution | None = None,
    part_customers: int = PART_CUSTOMERS,
    clock: Callable[[], float] = time.perf_counter,
) -> CLRPSolution:
    """Route every group of :func:`depot_groups` on its own and join the routes.

    Args:
        instance: the instance.
        assignment: [N] the depot of each customer; each depot's load must fit its capacity.
        seconds: the time budget (None: iterations only); a group gets the time left times
            its share of the customers not yet routed.
        route: routes one group, called as ``route(sub_instance, depots, seconds, iterations,
            seed, initial, clock=clock)`` (:func:`.pyvrp_solver.route_on_set`).
        max_iterations: PyVRP iterations, split between the groups by customers.
        seed: PyVRP's seed (group ``g`` runs with ``seed + g``).
        initial: a valid solution whose routes agree with ``assignment``: each group starts
            from its routes and keeps them where PyVRP finds nothing better (without one: from
            its :func:`sweep_routes`, kept likewise).
        part_customers: see :func:`depot_groups`.
        clock: the wall clock.

    Returns:
        The joined solution (valid whenever ``assignment`` fits the depot capacities).
    """
    start = clock()
    assignment = np.asarray(assignment, np.int64)
    groups = depot_groups(instance, assignment, part_customers)
    members = [np.flatnonzero(np.isin(assignment, g)) for g in groups]
    left = instance.num_customers
    routes: list[Route] = []
    for g, (group, customers) in enumerate(zip(groups, members)):
        local_depot = {d: k for k, d in enumerate(group)}
        local_customer = {int(c): k for k, c in enumerate(customers)}
        sub = sub_instance(instance, group, customers, f"{instance.name}[part {g}]")
        if initial is not None:
            warm = CLRPSolution([
                Route(local_depot[r.depot], tuple(local_customer[c] for c in r.customers))
                for r in initial.routes if r.depot in local_depot
            ])  # fmt: skip
        else:  # a sweep start: better than what PyVRP builds in a short share, and complete
            local = assignment[customers]
            warm = CLRPSolution([
                r for k, depot in enumerate(group)
                for r in sweep_routes(sub, k, np.flatnonzero(local == depot))
            ])  # fmt: skip
        found = None
        if interrupt.requested():  # once stopping, no further PyVRP runs
            logger.info("%s: stop requested; part %d keeps its start routes", instance.name, g)
        else:
            share = len(customers) / max(left, 1)
            part_seconds = None
            if seconds is not None:
                part_seconds = max(0.0, (seconds - (clock() - start)) * share)
            iterations = None
            if max_iterations is not None:
                iterations = max(1, int(max_iterations * len(customers) / instance.num_customers))
            found = route(sub, range(len(group)), part_seconds, iterations, seed + g, warm,
                          clock=clock)  # fmt: skip
        if found is None or _total(sub, found) >= _total(sub, warm):
            found = warm
        routes.extend(global_routes(found, group, customers))
        left -= len(customers)
    return CLRPSolution(routes)


def global_routes(solution: CLRPSolution, group, customers) -> list[Route]:
    """The routes of a group's sub-instance solution in the whole instance's indices."""
    return [
        Route(int(group[r.depot]), tuple(int(customers[c]) for c in r.customers))
        for r in solution.routes
    ]


def sweep_routes(instance: CLRPInstance, depot: int, customers) -> list[Route]:
    """Routes from ``depot`` over ``customers`` by a sweep: the customers in increasing polar
    angle around the depot (``arctan2``, from -pi to pi; ties in the order given), cut into
    consecutive routes whose load stays within the vehicle capacity (a new route when the next
    customer would exceed it). Every demand must fit one vehicle
    (:meth:`.CLRPInstance.check`, on construction).

    Args:
        instance: the instance.
        depot: the depot's index.
        customers: [k] the customers' indices (any order; none: no routes).

    Returns:
        The routes in sweep order.
    """
    customers = np.asarray(customers, np.int64)
    offset = instance.customer_locs[customers] - instance.depot_locs[depot]
    order = customers[np.argsort(np.arctan2(offset[:, 1], offset[:, 0]), kind="stable")]
    capacity = instance.vehicle_capacity
    routes: list[Route] = []
    current: list[int] = []
    load = 0.0
    for c in order:
        demand = float(instance.demand[c])
        if current and load + demand > capacity:
            routes.append(Route(int(depot), tuple(current)))
            current, load = [], 0.0
        current.append(int(c))
        load += demand
    if current:
        routes.append(Route(int(depot), tuple(current)))
    return routes


def _total(instance: CLRPInstance, solution: CLRPSolution) -> float:
    return solution.cost(instance).total
