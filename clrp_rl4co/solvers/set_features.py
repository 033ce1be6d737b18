"""Features of a depot set for learning its routed cost, and a continuous approximation of it.

A set's *routed cost* is what its routes cost: ``F`` per route plus the route lengths (the
opening costs, known exactly, are left out). Given an instance, a depot set and an assignment of
the customers to the set's depots (:meth:`.set_estimate.SetEstimate.greedy_assignment`, or the
depots of a routed solution's routes), :func:`depot_features` describes each depot of the set by
one row of :data:`DEPOT_FEATURES` (``[K, P]``), :func:`set_vector` pools the rows of the depots
that serve customers into one fixed-length vector of :data:`SET_FEATURES` (``[V]``: sums, means
and maxima over the depots, DeepSets-style, then a few numbers of the instance), and
:func:`continuous_approximation` prices each depot's routes by Daganzo's formula. Everything is
numpy; :class:`SetFeaturizer` keeps what one instance's sets share.

Units, as the feature names' docs say: *cost* is the instance's arc-cost unit (``ceil(100 d)``
for an instance with ``rounded_costs``, else the Euclidean distance ``d``), so coordinates are
scaled by :func:`coordinate_scale` before a distance between customers enters a feature;
*demand* is the unit of the demands and capacities; *count* a number of customers, depots or
routes; *1* a ratio.

**Continuous approximation** (Daganzo, "The distance traveled to visit N points with a maximum
of C stops per vehicle", Transportation Science 18(4), 1984): ``n`` points in a zone of area
``A`` at mean distance ``r`` from the depot, served by ``m`` routes, need a length of about
``2 r m + k sqrt(n A)`` (line haul to the zone and back, plus the local tour), with ``k`` about
:data:`DAGANZO_K` = 0.57 for Euclidean distances (the value usually quoted from that paper; a
travelling salesman tour alone has 0.7124 by Beardwood, Halton and Hammersley). Here, per depot:
``m = ceil(L / q)``, ``r`` the mean arc cost to the assigned customers, and ``A`` either their
convex hull's area (``area="hull"``, the zone as drawn) or, summed per customer, a local area
``a_j`` from the distance to the ``k``-th nearest customer (``area="local"``: ``k_D sum_j
sqrt(a_j)``, which equals ``k_D sqrt(n A)`` on uniform points and does not count the empty space
between clusters); the routed cost adds ``F m``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..data import CLRPInstance
from .set_estimate import SetEstimate

#: Daganzo's (1984) constant of the local tour for Euclidean distances.
DAGANZO_K = 0.57
#: Neighbours of the local area per customer (:func:`local_areas`).
LOCAL_NEIGHBOURS = 5

#: Columns of :func:`depot_features`, one row per depot of the set, with their units.
DEPOT_FEATURES: tuple[tuple[str, str], ...] = (
    ("customers", "count: customers assigned to the depot, n"),
    ("load", "demand: their total demand, L"),
    ("capacity", "demand: the depot's capacity, Q"),
    ("load_ratio", "1: L / Q"),
    ("routes", "count: ceil(L / q), the fewest routes"),
    ("route_fill", "1: L / (q routes), 0 without customers"),
    ("dist_mean", "cost: mean arc cost depot-customer, r"),
    ("dist_max", "cost: largest arc cost depot-customer"),
    ("dist_std", "cost: standard deviation of the arc costs depot-customer"),
    ("radial", "cost: 2 sum_j c_ij D_j / q (SetEstimate's radial part)"),
    ("spread", "cost: mean distance of the customers to their centroid"),
    ("hull_area", "cost^2: area of the customers' convex hull, A"),
    ("line_haul", "cost: 2 r routes (Daganzo's line haul)"),
    ("hull_tour", "cost: sqrt(n A) (Daganzo's local tour over k)"),
    ("local_tour", "cost: sum_j sqrt(a_j), a_j the local area per customer"),
    ("overload", "demand: max(0, L - Q)"),
    ("opening", "cost: the depot's opening cost"),
)
DEPOT_NAMES: tuple[str, ...] = tuple(name for name, _ in DEPOT_FEATURES)
_COL = {name: k for k, name in enumerate(DEPOT_NAMES)}

#: Numbers of the instance and the set appended to the pooled features.
CONTEXT_FEATURES: tuple[tuple[str, str], ...] = (
    ("num_customers", "count: N"),
    ("vehicle_capacity", "demand: q"),
    ("vehicle_fixed_cost", "cost: F"),
    ("set_size", "count: depots in the set"),
    ("used", "count: depots of the set that serve customers"),
)
#: Names of :func:`set_vector`'s entries: ``sum_``, ``mean_`` and ``max_`` of every column of
#: :data:`DEPOT_FEATURES` over the depots that serve customers, then :data:`CONTEXT_FEATURES`.
SET_FEATURES: tuple[str, ...] = (
    *(f"{pool}_{name}" for pool in ("sum", "mean", "max") for name in DEPOT_NAMES),
    *(name for name, _ in CONTEXT_FEATURES),
)


def coordinate_scale(instance: CLRPInstance) -> float:
    """Cost units per coordinate unit: 100 for an instance whose arcs cost ``ceil(100 d)``,
    else 1 (the rounding up, half a unit per arc on average, is left out)."""
    return 100.0 if instance.rounded_costs else 1.0


def convex_hull_area(points: np.ndarray) -> float:
    """Area of the convex hull of ``points`` ``[n, 2]`` (Andrew's monotone chain); 0 for fewer
    than three points or collinear ones."""
    pts = np.unique(np.asarray(points, np.float64).reshape(-1, 2), axis=0)  # sorted by x, y
    if len(pts) < 3:
        return 0.0

    def half(seq: np.ndarray) -> list[np.ndarray]:
        chain: list[np.ndarray] = []
        for p in seq:
            while len(chain) >= 2:
                a, b = chain[-2], chain[-1]
                if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) > 0:
                    break
                chain.pop()
            chain.append(p)
        return chain

    hull = np.array(half(pts)[:-1] + half(pts[::-1])[:-1])
    if len(hull) < 3:
        return 0.0
    x, y = hull[:, 0], hull[:, 1]
    return float(0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def local_areas(
    instance: CLRPInstance, neighbours: int = LOCAL_NEIGHBOURS, chunk: int = 1024
) -> np.ndarray:
    """``[N]`` the area per customer around each customer, in cost^2: ``pi r^2 / k`` with ``r``
    the distance (cost units) to its ``k``-th nearest other customer, ``k = min(neighbours,
    N - 1)`` (the inverse of the ``k``-nearest-neighbour density); zeros for one customer.
    Computed ``chunk`` rows of the distance matrix at a time."""
    locs = np.asarray(instance.customer_locs, np.float64) * coordinate_scale(instance)
    n = len(locs)
    k = min(int(neighbours), n - 1)
    if k < 1:
        return np.zeros(n)
    out = np.empty(n)
    for start in range(0, n, chunk):
        block = locs[start : start + chunk]
        d2 = ((block[:, None, :] - locs[None, :, :]) ** 2).sum(-1)  # [b, N], self at 0
        out[start : start + chunk] = np.partition(d2, k, axis=1)[:, k]  # k-th other customer
    return math.pi * out / k


def depot_features(
    instance: CLRPInstance,
    depots: Sequence[int],
    assignment: np.ndarray,
    local_area: np.ndarray | None = None,
    dist: np.ndarray | None = None,
) -> np.ndarray:
    """``[K, P]`` float64: one row of :data:`DEPOT_FEATURES` per depot of ``depots`` (in
    increasing index order), ``K = len(depots)``.

    Args:
        instance: the instance.
        depots: the set's depot indices (distinct).
        assignment: ``[N]`` the depot of each customer (each one of ``depots``).
        local_area: ``[N]`` :func:`local_areas` of the instance (computed when None).
        dist: ``[D, N]`` the instance's :meth:`~CLRPInstance.depot_customer_costs` (computed
            when None).

    Raises:
        ValueError: ``assignment`` has the wrong shape or names a depot outside ``depots``.
    """
    idx = np.array(sorted(int(d) for d in depots), np.int64)
    assignment = np.asarray(assignment, np.int64)
    if assignment.shape != (instance.num_customers,):
        raise ValueError(
            f"assignment: expected shape ({instance.num_customers},), got {assignment.shape}"
        )
    if len(idx) == 0 or not np.isin(assignment, idx).all():
        raise ValueError("assignment: every customer must go to a depot of the set")
    if dist is None:
        dist = instance.depot_customer_costs()
    if local_area is None:
        local_area = local_areas(instance)
    locs = np.asarray(instance.customer_locs, np.float64) * coordinate_scale(instance)
    demand = np.asarray(instance.demand, np.float64)
    q = float(instance.vehicle_capacity)
    out = np.zeros((len(idx), len(DEPOT_NAMES)))
    for row, depot in enumerate(idx):
        mine = np.flatnonzero(assignment == depot)
        f = out[row]
        f[_COL["capacity"]] = instance.depot_capacity[depot]
        f[_COL["opening"]] = instance.opening_cost[depot]
        if not len(mine):
            continue
        load = float(demand[mine].sum())
        cost = dist[depot, mine]
        routes = math.ceil(load / q - 1e-9)
        centroid = locs[mine].mean(axis=0)
        area = convex_hull_area(locs[mine])
        f[_COL["customers"]] = len(mine)
        f[_COL["load"]] = load
        f[_COL["load_ratio"]] = load / f[_COL["capacity"]]
        f[_COL["routes"]] = routes
        f[_COL["route_fill"]] = load / (q * routes) if routes else 0.0
        f[_COL["dist_mean"]] = cost.mean()
        f[_COL["dist_max"]] = cost.max()
        f[_COL["dist_std"]] = cost.std()
        f[_COL["radial"]] = 2.0 * float(cost @ demand[mine]) / q
        f[_COL["spread"]] = float(np.linalg.norm(locs[mine] - centroid, axis=1).mean())
        f[_COL["hull_area"]] = area
        f[_COL["line_haul"]] = 2.0 * cost.mean() * routes
        f[_COL["hull_tour"]] = math.sqrt(len(mine) * area)
        f[_COL["local_tour"]] = float(np.sqrt(local_area[mine]).sum())
        f[_COL["overload"]] = max(0.0, load - f[_COL["capacity"]])
    return out


def set_vector(per_depot: np.ndarray, instance: CLRPInstance) -> np.ndarray:
    """``[V]`` float64, :data:`SET_FEATURES`: the sum, mean and maximum of each column of
    ``per_depot`` (:func:`depot_features`, ``[K, P]``) over the depots that serve customers
    (the rows with ``customers > 0``; zeros when none does), then :data:`CONTEXT_FEATURES`."""
    per_depot = np.asarray(per_depot, np.float64)
    used = per_depot[per_depot[:, _COL["customers"]] > 0]
    width = per_depot.shape[1]
    if len(used):
        pooled = [used.sum(axis=0), used.mean(axis=0), used.max(axis=0)]
    else:
        pooled = [np.zeros(width)] * 3
    context = [instance.num_customers, instance.vehicle_capacity, instance.vehicle_fixed_cost,
               len(per_depot), len(used)]  # fmt: skip
    return np.concatenate([*pooled, np.asarray(context, np.float64)])


def continuous_approximation(
    per_depot: np.ndarray,
    vehicle_fixed_cost: float,
    k: float = DAGANZO_K,
    area: str = "hull",
) -> float:
    """The routed cost of a set by Daganzo's formula (module docstring), in cost units: the
    sum over the depots of ``F routes + 2 r routes + k sqrt(n A)`` (``area="hull"``: columns
    ``line_haul`` and ``hull_tour`` of ``per_depot``, :func:`depot_features`) or ``F routes +
    2 r routes + k sum_j sqrt(a_j)`` (``area="local"``: ``local_tour``).

    Raises:
        ValueError: ``area`` is neither ``"hull"`` nor ``"local"``.
    """
    if area not in ("hull", "local"):
        raise ValueError(f"area: expected 'hull' or 'local', got {area!r}")
    per_depot = np.asarray(per_depot, np.float64)
    tour = per_depot[:, _COL["hull_tour" if area == "hull" else "local_tour"]]
    routes = per_depot[:, _COL["routes"]]
    line_haul = per_depot[:, _COL["line_haul"]]
    return float((vehicle_fixed_cost * routes + line_haul + k * tour).sum())


def column(name: str) -> int:
    """The column of :data:`DEPOT_FEATURES` called ``name``.

    Raises:
        KeyError: no such column.
    """
    return _COL[name]


class SetFeaturizer:
    """What the sets of one instance share (arc costs, local areas, the estimate), and the
    features of a set under the estimate's assignment.

    Args:
        instance: the instance.
        estimate: its :class:`.set_estimate.SetEstimate` (a new one when None).
    """

    def __init__(self, instance: CLRPInstance, estimate: SetEstimate | None = None) -> None:
        self.instance = instance
        self.estimate = SetEstimate(instance) if estimate is None else estimate
        self.dist = self.estimate.dist
        self.local_area = local_areas(instance)

    def per_depot(self, depots: Sequence[int], assignment: np.ndarray | None = None) -> np.ndarray:
        """:func:`depot_features` of ``depots`` under ``assignment`` (None: the estimate's,
        :meth:`.set_estimate.SetEstimate.greedy_assignment`)."""
        if assignment is None:
            assignment, _ = self.estimate.greedy_assignment(depots)
        return depot_features(self.instance, depots, assignment, self.local_area, self.dist)

    def vector(self, per_depot: np.ndarray) -> np.ndarray:
        """:func:`set_vector` of ``per_depot`` on this instance."""
        return set_vector(per_depot, self.instance)

    def approximation(self, per_depot: np.ndarray, k: float = DAGANZO_K, area: str = "hull"):
        """:func:`continuous_approximation` of ``per_depot`` on this instance."""
        return continuous_approximation(per_depot, self.instance.vehicle_fixed_cost, k, area)

    def opening(self, per_depot: np.ndarray) -> float:
        """The opening costs of the depots that serve customers in ``per_depot``."""
        used = per_depot[:, _COL["customers"]] > 0
        return float(per_depot[used, _COL["opening"]].sum())
