"""The depot set a capacitated facility-location model prefers, solved by HiGHS.

The model prices a depot set as :class:`.set_estimate.SetEstimate` does (opening costs, one
vehicle cost per ``q`` of load, and the radial part ``2 c_ij D_j / q`` of each customer's route
length), but it is solved over all sets at once instead of by local moves. This matters when
the depots differ a lot: with capacities spread over a factor of 10 and opening costs growing
with capacity, dropping the dearest (largest) depot first leads a descent into a set of many
small depots, while the best sets hold a few large ones, reachable from there only through
moves that each raise the estimate.

Notation: depots ``i`` (opening cost ``O_i``, capacity ``Q_i``), customers ``j`` (demand
``D_j``), arc costs ``c_ij``, vehicle capacity ``q`` and cost ``F``, total demand ``T``.
Variables: ``y_i`` in {0, 1} (depot open), ``z_ij`` in [0, 1] (the share of ``j`` served
from ``i``, only for the ``nearest`` depots of each customer), ``r_i >= 0`` (routes at ``i``,
continuous). Minimise ``sum O_i y_i + F sum r_i + sum (2 c_ij D_j / q) z_ij`` subject to::

    sum_i z_ij = 1;  z_ij <= y_i;  sum_j D_j z_ij <= Q_i y_i;  sum_j D_j z_ij <= q r_i;
    sum_i Q_i y_i >= T

Customers may be split between depots (the set's estimate, not its assignment, is wanted),
which also keeps the model small: ``D`` integer columns. Above :data:`MAX_GROUPS` customers,
nearby customers are grouped (:func:`customer_groups`) and a group is split between depots as
one customer of the group's demand, whose term at depot ``i`` is the sum of its customers'
(``2 sum_j c_ij D_j / q``): the same model with the shares of a group's customers tied
together, a few times smaller at thousands of customers.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from ..data import CLRPInstance
from .highs import INF, load_sparse_mip, new_highs, run_highs, stop_on_request

#: Fewest depots each customer may be served from in the model (its nearest ones): fewer make
#: the model smaller and faster to solve, more let it pack sets that hold barely the demand.
NEAREST = 10
#: Customer-depot pairs the model may hold: each customer may be served from its
#: ``max(NEAREST, SERVED_PAIRS // N)`` nearest depots (:func:`default_nearest`). With only its
#: ten nearest, a set that holds exactly the demand can leave a customer without room: on
#: Schneider & Löffler's 300-20-2e (20 depots, the three largest holding exactly the demand) the
#: model then kept seven depots open and took 7.4 s of HiGHS; from every depot it opens the
#: three largest in 0.6 s, and PyVRP routes them 2.2% cheaper (15 s each, one thread). Every
#: depot of 30 at 600 customers made the model too slow for the ranking's seconds. On the presets
#: at 10 s, paired against ten depots each (``benchmarks/set_ranking.py --rule served-pairs
#: --candidate 0``): clrp100 equal on 10 of 10, clrp300 +0.02 +- 1.92 (2 lower, 2 higher of 4).
SERVED_PAIRS = 6000
#: Branch-and-bound nodes of a run without a time limit (a deterministic limit).
MAX_NODES = 200
#: HiGHS's time limit of a run without one of its own (a safety net: runs of 600 customers
#: and 30 depots stop at ``MAX_NODES`` within seconds).
NO_DEADLINE_SECONDS = 120.0
#: Most customers (or groups of customers) in the model: above this many customers nearby
#: ones are grouped, which keeps HiGHS within seconds at 10,000 customers.
MAX_GROUPS = 2000


def customer_groups(customer_locs: np.ndarray, max_groups: int = MAX_GROUPS) -> np.ndarray:
    """The group of each customer, ``[N]`` labels in ``0..M-1`` (``M <= max_groups``).

    With at most ``max_groups`` customers every customer is its own group (label = index).
    Otherwise the plane is cut into ``s = floor(sqrt(max_groups))`` strips holding equal
    numbers of customers by ``x``, and each strip into ``s`` cells of equal numbers by ``y``
    (sizes differ by at most one at each cut): ``s^2`` groups of nearby customers, whatever
    their density.
    """
    num_customers = len(customer_locs)
    if num_customers <= max_groups:
        return np.arange(num_customers)
    side = math.isqrt(max_groups)
    labels = np.empty(num_customers, np.int64)
    by_x = np.argsort(customer_locs[:, 0], kind="stable")
    for k, strip in enumerate(np.array_split(by_x, side)):
        by_y = strip[np.argsort(customer_locs[strip, 1], kind="stable")]
        for m, cell in enumerate(np.array_split(by_y, side)):
            labels[cell] = k * side + m
    return labels


def default_nearest(num_customers: int, num_depots: int) -> int:
    """How many depots each customer may be served from by default: its
    ``max(NEAREST, SERVED_PAIRS // num_customers)`` nearest, at most every depot."""
    share = SERVED_PAIRS // max(int(num_customers), 1)
    return min(int(num_depots), max(NEAREST, share))


def candidate_depots(instance: CLRPInstance, nearest: int | None = None) -> np.ndarray:
    """The ``nearest`` cheapest depots of each customer by arc cost, ``[N, min(D, nearest)]``
    (ties by depot index; None: :func:`default_nearest`)."""
    num_depots = instance.num_depots
    if nearest is None:
        nearest = default_nearest(instance.num_customers, num_depots)
    cost = instance.depot_customer_costs()  # [D, N]
    order = np.argsort(cost, axis=0, kind="stable")
    return order[: min(num_depots, int(nearest))].T


def _served_groups(
    instance: CLRPInstance, nearest: int, radial_factor: float, max_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's customers (:func:`customer_groups` above ``max_groups`` customers, else
    each customer): ``(near, demand, radial)``, the ``nearest`` depots each may be served from
    ``[M, K]``, their demands ``[M]`` and the radial term ``2 sum_j c_ij D_j / q`` of serving
    each from each of its depots ``[M, K]``, times ``radial_factor``."""
    num_depots = instance.num_depots
    demand = np.asarray(instance.demand, np.float64)
    q = float(instance.vehicle_capacity)
    arc = instance.depot_customer_costs()  # [D, N]
    if instance.num_customers <= max_groups:  # every customer its own group
        near = candidate_depots(instance, nearest)  # [N, K]
        customers = np.arange(len(demand))[:, None]
        return near, demand, radial_factor * 2.0 * arc[near, customers] * demand[:, None] / q
    labels = customer_groups(np.asarray(instance.customer_locs, np.float64), max_groups)
    onehot = sparse.csr_array((np.ones(len(labels)), (np.arange(len(labels)), labels)))
    weight = np.asarray((onehot.T @ (arc * demand).T).T)  # [D, M] sum_{j in g} c_ij D_j
    demand = np.bincount(labels, weights=demand)  # the groups' demands
    order = np.argsort(weight, axis=0, kind="stable")  # a group's cheapest depots
    near = order[: min(num_depots, int(nearest))].T  # [M, K]
    radial = radial_factor * 2.0 * weight[near, np.arange(len(demand))[:, None]] / q
    return near, demand, radial


def facility_location_set(
    instance: CLRPInstance,
    seconds: float | None,
    nearest: int | None = None,
    radial_factor: float = 1.0,
    max_groups: int = MAX_GROUPS,
) -> tuple[int, ...] | None:
    """The open depots of the best solution HiGHS finds to the module's model.

    Args:
        instance: the instance.
        seconds: HiGHS's time limit; None: at most ``MAX_NODES`` branch-and-bound nodes
            instead (so that the result does not depend on the machine's speed). A stop
            request (Ctrl-C, :mod:`clrp_rl4co.execution.interrupt`) ends it earlier.
        nearest: how many of its cheapest depots a customer may be served from (None:
            :func:`default_nearest`).
        radial_factor: multiplies the radial term (a route is longer than its radial part
            by the travel between its customers).
        max_groups: above this many customers, nearby ones are grouped
            (:func:`customer_groups`) and a group may be served from the ``nearest`` depots
            cheapest for it (by its demand-weighted arc costs).

    Returns:
        The open depots (sorted indices), or None when HiGHS found no solution (no time, or
        no set whose depots can serve every customer from among its nearest ones).
    """
    num_depots = instance.num_depots
    if nearest is None:
        nearest = default_nearest(min(instance.num_customers, max_groups), num_depots)
    q = float(instance.vehicle_capacity)
    near, demand, radial = _served_groups(instance, nearest, radial_factor, max_groups)
    num_customers = len(demand)  # the model's customers (the groups)
    k = near.shape[1]
    y = np.arange(num_depots)
    r = num_depots + y
    z = 2 * num_depots + np.arange(num_customers * k).reshape(num_customers, k)  # z[j, m]
    cols = 2 * num_depots + num_customers * k
    objective = np.zeros(cols)
    objective[y] = instance.opening_cost
    objective[r] = instance.vehicle_fixed_cost
    objective[z] = radial
    lower = np.zeros(cols)
    upper = np.full(cols, INF)
    upper[y] = 1.0
    upper[z.ravel()] = 1.0
    integer = np.zeros(cols, bool)
    integer[y] = True

    # rows, in order: each customer served once [N]; z_jm <= y_near[j, m] [N K]; each depot's
    # capacity [D] and routes [D]; total capacity [1]
    link = num_customers + np.arange(num_customers * k)
    capacity_row = num_customers * (1 + k) + near.ravel()
    route_row = capacity_row + num_depots
    total_row = num_customers * (1 + k) + 2 * num_depots
    flat_z = z.ravel()
    load = np.repeat(demand, k)
    row = np.concatenate([np.repeat(np.arange(num_customers), k), link, link, capacity_row,
                          route_row, total_row - 2 * num_depots + y, total_row - num_depots + y,
                          np.full(num_depots, total_row)])  # fmt: skip
    col = np.concatenate([flat_z, flat_z, near.ravel(), flat_z, flat_z, y, r, y])
    val = np.concatenate([np.ones(num_customers * k), np.ones(num_customers * k),
                          -np.ones(num_customers * k), load, load, -instance.depot_capacity,
                          np.full(num_depots, -q), instance.depot_capacity])  # fmt: skip
    num_rows = total_row + 1
    matrix = sparse.csr_array((val, (row, col)), shape=(num_rows, cols))
    row_lower = np.full(num_rows, -INF)
    row_upper = np.zeros(num_rows)
    row_lower[:num_customers] = row_upper[:num_customers] = 1.0
    row_lower[total_row], row_upper[total_row] = float(demand.sum()), INF

    h = new_highs(threads=1, verbose=False)
    load_sparse_mip(h, objective, lower, upper, integer,
                    (matrix.indptr, matrix.indices, matrix.data), row_lower, row_upper)  # fmt: skip
    stop_on_request(h)
    if seconds is None:
        h.setOptionValue("mip_max_nodes", MAX_NODES)
        seconds = NO_DEADLINE_SECONDS
    _, _, _, values = run_highs(h, seconds)
    if values is None:
        return None
    return tuple(int(i) for i in np.flatnonzero(values[y] > 0.5))
