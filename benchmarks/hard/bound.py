"""A cheap valid lower bound on a CLRP instance's optimum: a location-allocation model whose
routing part under-estimates every route's cost, solved by HiGHS with integer depot and route
counts and everything else continuous (its dual bound, valid at any time limit), or as an LP.

On the 30 Prins instances the bound is 7-26% below the best-known values (mean 13.2%; the LP
alone 8-31%, mean 18.2%), within 5 s each: the routing part is what it under-estimates.

Notation: depots ``i`` (opening cost ``O_i``, capacity ``Q_i``), customers ``j`` (demand
``d_j``), arc costs ``c`` (the instance's units: symmetric, and they satisfy the triangle
inequality, also under ``ceil(100 d)``, since ``ceil(a) + ceil(b) >= ceil(a + b)``), vehicle
capacity ``q`` and cost ``F``, total demand ``T``. For customer ``j``, ``a1_j <= a2_j`` are its two
cheapest arcs to two other customers (``a2_j = a1_j`` with two customers, both 0 with one).

Variables (continuous; ``y`` and ``r`` integer with ``integer_depots``): ``y_i in [0, 1]``
depot open; ``z_ij in [0, 1]`` customer ``j`` served from depot ``i``; ``r_i >= 0`` routes at
depot ``i``; ``e_ij in [0, 2]`` arcs between depot ``i`` and customer ``j`` on those routes;
``t_ij >= 0`` half the cost of customer ``j``'s arcs to other customers when served from
``i``; ``L_i >= 0`` the routing cost at depot ``i``.

Minimise ``sum O_i y_i + F sum r_i + sum L_i`` subject to::

    sum_i z_ij = 1;  z_ij <= y_i;  sum_j d_j z_ij <= Q_i y_i;  sum_j d_j z_ij <= q r_i
    sum_j e_ij = 2 r_i;  e_ij <= 2 z_ij
    t_ij >= a1_j (2 z_ij - e_ij) / 2;  t_ij >= (a1_j z_ij + a2_j (z_ij - e_ij)) / 2
    L_i >= sum_j (c_ij e_ij + t_ij);  L_i >= (2 / q) sum_j d_j c_ij z_ij
    sum_i r_i >= ceil(T / q);  r_i >= y_i;  sum_i Q_i y_i >= T
    sum_i e_ij >= 3 - N  (only with N <= 2 customers)

**Why it is a valid bound.** Take an optimal solution in which every open depot has a route
(one exists: closing a depot without routes never raises the cost, as ``O_i >= 0``). Set
``y``, ``z``, ``r`` from it, ``e_ij`` = the number of its arcs between ``i`` and ``j`` (0, 1, or
2 for a customer alone on its route), and ``L_i`` = the cost of the routes at ``i``. Every row
but the ``t`` and ``L`` rows holds by the solution's feasibility (the number of routes is an
integer, so the global count is at least ``ceil(T / q)``; a customer has at most ``N - 1``
arcs to other customers, so at least ``3 - N`` to its depot).

The routes' cost at ``i`` is the sum of their depot arcs, ``sum_j c_ij e_ij``, plus their
customer-to-customer arcs, each split half to each end. Customer ``j`` has ``2 - e_ij`` such
arc ends, to distinct customers, so its half is at least ``(a1_j + a2_j) / 2`` (``e_ij = 0``),
``a1_j / 2`` (``e_ij = 1``) or 0 (``e_ij = 2``): the larger of the two ``t`` rows at these
integers. So ``L_i >= sum_j (c_ij e_ij + t_ij)`` holds with the smallest ``t``.

The radial row: a route from ``i`` through ``j`` is a closed walk, so by the triangle
inequality it costs at least ``2 c_ij`` for each of its customers, hence at least
``2 max_j c_ij >= 2 sum_j d_j c_ij / load >= (2 / q) sum_j d_j c_ij`` over its customers (the
load is at most ``q``); summed over the routes at ``i`` this is the second ``L`` row.

The solution is thus a feasible point of the model whose objective equals its cost, so the
model's optimum (and its LP relaxation's) is at most the CLRP optimum. With
``integer_depots`` the ``y_i`` and ``r_i`` are integers (the same solution stays feasible) and
HiGHS's dual bound, valid wherever it stops, is returned.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.solvers.highs import INF, Row, load_mip, new_highs, run_highs

#: HiGHS's model status of a solved LP or a MIP whose gap is closed.
OPTIMAL = "Optimal"


@dataclass(frozen=True)
class Bound:
    """A lower bound on an instance's optimum.

    Attributes:
        value: the bound, in the instance's units.
        status: HiGHS's model status (``Optimal`` for a solved LP or a closed MIP gap; a MIP
            stopped by its time limit still has a valid dual bound).
        seconds: wall time of building and solving the model.
        integer_depots: whether ``y`` and ``r`` were integers (a MIP) or not (the LP).
    """

    value: float
    status: str
    seconds: float
    integer_depots: bool


def cheapest_customer_arcs(cost: np.ndarray, num_depots: int) -> tuple[np.ndarray, np.ndarray]:
    """The two cheapest arcs from each customer to two other customers.

    Args:
        cost: [D+N, D+N] arc costs, depots first.
        num_depots: ``D``.

    Returns:
        ``(a1, a2)``, each [N]: the cheapest and second-cheapest arc cost to another customer
        (``a2 = a1`` with two customers, both 0 with one).
    """
    block = np.array(cost[num_depots:, num_depots:], dtype=np.float64)
    n = block.shape[0]
    if n == 1:
        return np.zeros(1), np.zeros(1)
    np.fill_diagonal(block, np.inf)
    two = np.sort(block, axis=1)[:, :2]
    a1 = two[:, 0]
    a2 = two[:, 1] if n > 2 else a1.copy()
    return a1, a2


def _model(instance: CLRPInstance, integer_depots: bool):
    """Columns (cost, lower, upper, integer) and rows of the model of the module docstring."""
    nd, nc = instance.num_depots, instance.num_customers
    d = instance.demand
    q = instance.vehicle_capacity
    cost = instance.cost_matrix()
    c = cost[:nd, nd:]  # [D, N] depot-customer arcs
    a1, a2 = cheapest_customer_arcs(cost, nd)

    y = np.arange(nd)
    r = nd + np.arange(nd)
    z = 2 * nd + np.arange(nd * nc).reshape(nd, nc)
    e = z + nd * nc
    t = e + nd * nc
    big_l = 2 * nd + 3 * nd * nc + np.arange(nd)
    ncol = 3 * nd + 3 * nd * nc
    obj = np.zeros(ncol)
    obj[y] = instance.opening_cost
    obj[r] = instance.vehicle_fixed_cost
    obj[big_l] = 1.0
    lower = np.zeros(ncol)
    upper = np.full(ncol, INF)
    upper[y] = 1.0
    upper[z.ravel()] = 1.0
    upper[e.ravel()] = 2.0
    integer = np.zeros(ncol, bool)
    if integer_depots:
        integer[y] = integer[r] = True

    rows: list[Row] = []
    for j in range(nc):
        rows.append((z[:, j], np.ones(nd), 1.0, 1.0))
    for i in range(nd):
        for j in range(nc):
            rows.append(([z[i, j], y[i]], [1.0, -1.0], -INF, 0.0))
            rows.append(([e[i, j], z[i, j]], [1.0, -2.0], -INF, 0.0))
            rows.append(([t[i, j], z[i, j], e[i, j]], [1.0, -a1[j], 0.5 * a1[j]], 0.0, INF))
            rows.append(
                ([t[i, j], z[i, j], e[i, j]], [1.0, -0.5 * (a1[j] + a2[j]), 0.5 * a2[j]], 0.0, INF)
            )
        rows.append(([*z[i], y[i]], [*d, -instance.depot_capacity[i]], -INF, 0.0))
        rows.append(([*z[i], r[i]], [*d, -q], -INF, 0.0))
        rows.append(([*e[i], r[i]], [*np.ones(nc), -2.0], 0.0, 0.0))
        rows.append(([big_l[i], *e[i], *t[i]], [1.0, *-c[i], *-np.ones(nc)], 0.0, INF))
        rows.append(([big_l[i], *z[i]], [1.0, *(-2.0 / q * d * c[i])], 0.0, INF))
        rows.append(([r[i], y[i]], [1.0, -1.0], 0.0, INF))
    total = float(d.sum())
    rows.append((r, np.ones(nd), float(math.ceil(total / q - 1e-9)), INF))
    rows.append((y, instance.depot_capacity, total, INF))
    if nc <= 2:
        for j in range(nc):
            rows.append((e[:, j], np.ones(nd), float(3 - nc), INF))
    return obj, lower, upper, integer, rows


def lower_bound(
    instance: CLRPInstance, seconds: float = 120.0, integer_depots: bool = True
) -> Bound:
    """The bound of the module docstring on ``instance``'s optimum.

    Args:
        instance: the instance.
        seconds: HiGHS's time limit.
        integer_depots: integer ``y`` and ``r`` (a MIP with ``2 D`` integers: its dual bound
            when it stops, proven optimal or at the time limit); False: the LP (it must be
            solved within ``seconds``).

    Raises:
        RuntimeError: no bound within ``seconds`` (an LP not solved to optimality, or a MIP
            without a finite dual bound), naming the instance and HiGHS's status.
    """
    begin = time.perf_counter()
    h = new_highs(threads=1, verbose=False)
    load_mip(h, *_model(instance, integer_depots))
    status, objective, dual_bound, _ = run_highs(h, seconds)
    value = dual_bound if integer_depots else objective
    if (integer_depots and not math.isfinite(value)) or (not integer_depots and status != OPTIMAL):
        raise RuntimeError(
            f"{instance.name or 'instance'}: the bound's {'MIP' if integer_depots else 'LP'} "
            f"ended with status {status!r} and no bound within {seconds:g} s"
        )
    return Bound(float(value), status, time.perf_counter() - begin, integer_depots)
