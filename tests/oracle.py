"""An independent CLRP cost oracle: plain numpy, imports nothing from the package.

Given raw instance arrays and an action sequence (node indices, depots first), it walks the
routes and returns the objective parts, raising AssertionError on any infeasibility.
"""

from __future__ import annotations

import math

import numpy as np


def oracle_cost(
    coords: np.ndarray,
    depot_capacity: np.ndarray,
    opening_cost: np.ndarray,
    demand: np.ndarray,
    vehicle_capacity: float,
    fixed_cost: float,
    actions,
    rounded: bool = False,
) -> tuple[float, float, float]:
    """(opening, vehicles, routing) of the solution ``actions``; asserts feasibility.

    Trailing depot indices after every customer is served and the route closed are padding.
    """
    num_depots = len(depot_capacity)
    num_customers = len(demand)

    def arc(a: int, b: int) -> float:
        d = math.hypot(coords[a][0] - coords[b][0], coords[a][1] - coords[b][1])
        return math.ceil(100 * d - 1e-9) if rounded else d

    served = [0] * num_customers
    depot_load = [0.0] * num_depots
    used = set()
    routes = 0
    routing = 0.0
    depot = None
    load = 0.0
    prev = None
    count_in_route = 0
    for a in (int(x) for x in actions):
        if depot is None:
            if sum(served) == num_customers:
                assert a < num_depots, f"customer {a} after completion"
                continue
            assert a < num_depots, f"customer node {a} outside a route"
            depot, prev, load, count_in_route = a, a, 0.0, 0
            used.add(a)
            routes += 1
            continue
        routing += arc(prev, a)
        prev = a
        if a < num_depots:
            assert a == depot, f"route of depot {depot} returns to {a}"
            assert count_in_route > 0, "empty route"
            depot = None
            continue
        j = a - num_depots
        assert served[j] == 0, f"customer {j} served twice"
        served[j] = 1
        load += demand[j]
        depot_load[depot] += demand[j]
        count_in_route += 1
        assert load <= vehicle_capacity + 1e-6, f"route overload {load} > {vehicle_capacity}"
        assert depot_load[depot] <= depot_capacity[depot] + 1e-4, (
            f"depot {depot} overload {depot_load[depot]} > {depot_capacity[depot]}"
        )
    assert depot is None, "last route not closed"
    assert all(served), f"unserved customers {[j for j in range(num_customers) if not served[j]]}"
    opening = float(sum(opening_cost[i] for i in used))
    return opening, routes * float(fixed_cost), routing
