"""CLRP instances and solutions in PyVRP 0.14's terms, and back.

Two encodings of a CLRP instance restricted to a set of candidate depots:

* **trips** (:func:`encode`): exact. One vehicle per depot, starting and ending there and
  allowed to reload at that depot only: each *trip* of the vehicle is one CLRP route, so the
  vehicle capacity ``q`` limits each trip. The depot capacity ``Q_i`` is the vehicle's shift
  duration: every client's service duration is its demand and all travel durations are zero, so
  a vehicle's duration is its depot's load. The fixed cost ``F`` per route is paid as ``F / 2``
  on every depot-customer edge (each trip uses exactly two of them) and the opening cost ``O_i``
  is the vehicle type's fixed cost. Every CLRP solution on the depots maps to a PyVRP solution
  of equal cost and back.
* **fleet** (:func:`encode_fleet`): a multi-depot VRP whose fleet keeps every depot within its
  capacity. Depot ``i`` gets ``floor(Q_i / q)`` vehicles of capacity ``q`` and, when ``Q_i`` is
  not a multiple of ``q``, one more of capacity ``Q_i mod q``; each vehicle is one route and
  costs ``F``. Any PyVRP solution is CLRP-feasible (a depot's load is at most the sum of its
  vehicles' capacities, ``Q_i``), but not every CLRP solution is representable: a depot with
  ``floor(Q_i / q) + 1`` routes needs one of them to carry at most ``Q_i mod q``, and more
  routes than that are not possible. Opening costs are constant for a fixed depot set and left
  out. PyVRP's search works far better with many vehicles than with one vehicle's trips (on the
  Prins instances with 100-200 customers the fleet encoding on the same depot set and time is
  3-8% cheaper), so the solver searches in it and polishes in the trips encoding.

PyVRP needs integers. Arc costs, ``F`` and ``O`` are used as they are when they are all integers
(the Prins instances), else multiplied by ``cost_scale`` (default ``10^4``) and rounded; demands
and capacities are scaled likewise only when not integral, demands rounded up and capacities
down (so a PyVRP-feasible solution is CLRP-feasible). Solutions decoded from PyVRP are priced
again with :meth:`CLRPSolution.cost` on the real instance by their callers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyvrp
from pyvrp import Activity, ActivityType, Client, Depot, Location, ProblemData, VehicleType

from ..data import CLRPInstance, CLRPSolution, Route

#: Default multiplier turning real-valued costs into PyVRP integers.
DEFAULT_COST_SCALE = 10_000
#: Multiplier for non-integral demands and capacities.
DEMAND_SCALE = 1_000
_INT_TOL = 1e-9


def _all_integral(*arrays) -> bool:
    return all(
        np.all(np.abs(np.asarray(a, float) - np.round(np.asarray(a, float))) < _INT_TOL)
        for a in arrays
    )


@dataclass
class Encoding:
    """A CLRP instance (restricted to ``depots``) encoded as PyVRP :class:`ProblemData`.

    Attributes:
        data: the PyVRP problem; PyVRP depot ``k`` is CLRP depot ``depots[k]``; PyVRP client
            ``j`` is CLRP customer ``j``.
        depots: [K] the CLRP depot indices included.
        cost_scale: PyVRP cost units per instance cost unit.
        kind: ``"trips"`` or ``"fleet"`` (see the module docstring).
        vehicle_depots: the PyVRP depot position ``k`` of each vehicle type.
    """

    data: ProblemData
    depots: list[int]
    cost_scale: float
    kind: str = "trips"
    vehicle_depots: list[int] | None = None

    def depot_of(self, vehicle_type: int) -> int:
        """The PyVRP depot position ``k`` of a vehicle type."""
        if self.vehicle_depots is None:
            return vehicle_type
        return self.vehicle_depots[vehicle_type]


@dataclass
class _Scaled:
    """Integer arc costs, fixed costs, demands and capacities of a depot subset."""

    depots: list[int]
    dist: np.ndarray  # [K + N, K + N]
    scale: float
    fixed: int
    opening: np.ndarray  # [K]
    demand: np.ndarray  # [N]
    vehicle_capacity: int
    depot_capacity: np.ndarray  # [K]
    locations: list[Location]


def _scaled(instance: CLRPInstance, depots: list[int] | None, cost_scale: float) -> _Scaled:
    depots = list(range(instance.num_depots)) if depots is None else sorted(int(d) for d in depots)
    if not depots:
        raise ValueError("encode: need at least one depot")
    nodes = depots + [instance.num_depots + j for j in range(instance.num_customers)]
    sub = instance.cost_matrix()[np.ix_(nodes, nodes)]
    opening = instance.opening_cost[depots]
    fixed = instance.vehicle_fixed_cost
    scale = 1.0 if _all_integral(sub, opening, fixed) else float(cost_scale)
    fixed_int = int(round(fixed * scale))
    if fixed_int % 2:  # F/2 per depot edge (trips) must be an integer: double every cost
        scale *= 2
        fixed_int *= 2
    dist = np.round(sub * scale).astype(np.int64)
    demand = instance.demand
    q = instance.vehicle_capacity
    cap = instance.depot_capacity[depots]
    if _all_integral(demand, q, cap):
        dem_int = np.round(demand).astype(np.int64)
        q_int = int(round(q))
        cap_int = np.round(cap).astype(np.int64)
    else:
        dem_int = np.ceil(demand * DEMAND_SCALE - 1e-6).astype(np.int64)
        q_int = int(math.floor(q * DEMAND_SCALE + 1e-6))
        cap_int = np.floor(cap * DEMAND_SCALE + 1e-6).astype(np.int64)
    locations = [Location(x=float(x), y=float(y)) for x, y in instance.locs[nodes]]
    return _Scaled(
        depots=depots,
        dist=dist,
        scale=scale,
        fixed=fixed_int,
        opening=np.round(opening * scale).astype(np.int64),
        demand=dem_int,
        vehicle_capacity=q_int,
        depot_capacity=cap_int,
        locations=locations,
    )


def _problem(
    s: _Scaled, clients: list[Client], vehicle_types: list[VehicleType], dist: np.ndarray
) -> ProblemData:
    """ProblemData with one PyVRP depot per included depot and zero travel durations."""
    depots = [Depot(location=k) for k in range(len(s.depots))]
    return ProblemData(s.locations, clients, depots, vehicle_types, [dist], [np.zeros_like(dist)])


def encode(
    instance: CLRPInstance,
    depots: list[int] | None = None,
    cost_scale: float = DEFAULT_COST_SCALE,
) -> Encoding:
    """The exact trips encoding of ``instance``, optionally on a subset of depots.

    Args:
        instance: the CLRP instance.
        depots: CLRP depot indices to include (None: all).
        cost_scale: multiplier for real-valued costs.
    """
    s = _scaled(instance, depots, cost_scale)
    num_k = len(s.depots)
    dist = s.dist.copy()
    half = s.fixed // 2
    dist[:num_k, num_k:] += half
    dist[num_k:, :num_k] += half
    dist[:num_k, :num_k] = 0  # depot-depot travel never happens (one vehicle per depot)
    np.fill_diagonal(dist, 0)
    clients = [
        Client(location=num_k + j, delivery=[int(d)], service_duration=int(d))
        for j, d in enumerate(s.demand)
    ]
    vehicle_types = [
        VehicleType(
            num_available=1,
            capacity=[s.vehicle_capacity],
            start_depot=k,
            end_depot=k,
            fixed_cost=int(s.opening[k]),
            shift_duration=int(s.depot_capacity[k]),
            reload_depots=[k],
            name=f"depot{s.depots[k]}",
        )
        for k in range(num_k)
    ]
    data = _problem(s, clients, vehicle_types, dist)
    return Encoding(data=data, depots=s.depots, cost_scale=s.scale)


def fleet_sizes(depot_capacity: int, vehicle_capacity: int) -> list[tuple[int, int]]:
    """The fleet of one depot: ``[(capacity, count), ...]``, largest first, capacities summing to
    its own.

    ``floor(Q / q)`` vehicles of capacity ``q`` and one of ``Q mod q`` when that is positive
    (integers in PyVRP units).
    """
    full, rest = divmod(int(depot_capacity), int(vehicle_capacity))
    fleet = [(int(vehicle_capacity), full)] if full else []
    if rest:
        fleet.append((rest, 1))
    return fleet


def encode_fleet(
    instance: CLRPInstance,
    depots: list[int] | None = None,
    cost_scale: float = DEFAULT_COST_SCALE,
) -> Encoding:
    """The fleet encoding of ``instance`` on a depot set (see the module docstring).

    Args:
        instance: the CLRP instance.
        depots: CLRP depot indices to include (None: all).
        cost_scale: multiplier for real-valued costs.
    """
    s = _scaled(instance, depots, cost_scale)
    num_k = len(s.depots)
    dist = s.dist.copy()
    dist[:num_k, :num_k] = 0  # no route goes from depot to depot
    np.fill_diagonal(dist, 0)
    clients = [Client(location=num_k + j, delivery=[int(d)]) for j, d in enumerate(s.demand)]
    vehicle_types, owners = [], []
    for k in range(num_k):
        for capacity, count in fleet_sizes(s.depot_capacity[k], s.vehicle_capacity):
            vehicle_types.append(
                VehicleType(
                    num_available=count,
                    capacity=[capacity],
                    start_depot=k,
                    end_depot=k,
                    fixed_cost=s.fixed,
                    name=f"depot{s.depots[k]}-{capacity}",
                )
            )
            owners.append(k)
    if not vehicle_types:
        raise ValueError("encode_fleet: no depot of the set can hold one unit of demand")
    data = _problem(s, clients, vehicle_types, dist)
    return Encoding(
        data=data, depots=s.depots, cost_scale=s.scale, kind="fleet", vehicle_depots=owners
    )


def decode(enc: Encoding, solution: pyvrp.Solution) -> CLRPSolution:
    """Turn a PyVRP solution of ``enc`` into a CLRP solution (one route per non-empty trip)."""
    routes: list[Route] = []
    for route in solution.routes():
        depot = enc.depots[enc.depot_of(route.vehicle_type())]
        trips: dict[int, list[int]] = {}
        for act in route.schedule():
            if act.is_client():
                trips.setdefault(act.trip, []).append(int(act.idx))
        routes.extend(Route(depot, tuple(c)) for _, c in sorted(trips.items()) if c)
    return CLRPSolution(routes)


def _routes_by_depot(enc: Encoding, solution: CLRPSolution) -> dict[int, list[tuple[int, ...]]]:
    """``solution``'s routes grouped by PyVRP depot position; routes at depots outside the set
    go to the included depot nearest to their customers' centre."""
    inst_locs = np.array([[loc.x, loc.y] for loc in enc.data.locations()])
    depot_xy = inst_locs[: len(enc.depots)]
    index = {d: k for k, d in enumerate(enc.depots)}
    by_k: dict[int, list[tuple[int, ...]]] = {}
    for r in solution.routes:
        k = index.get(r.depot)
        if k is None:
            centre = inst_locs[len(enc.depots) + np.array(r.customers)].mean(axis=0)
            k = int(np.argmin(((depot_xy - centre) ** 2).sum(-1)))
        by_k.setdefault(k, []).append(r.customers)
    return by_k


def to_pyvrp(enc: Encoding, solution: CLRPSolution) -> pyvrp.Solution:
    """The PyVRP solution of ``enc`` holding ``solution``'s routes.

    Routes at depots outside ``enc.depots`` are moved to the nearest included depot. In the
    fleet encoding a depot's routes take its vehicles in decreasing order of load (the largest
    loads on the largest vehicles); routes beyond its vehicles are appended to its last
    vehicle's route. The result may then break a capacity; PyVRP penalises that and repairs it.
    """
    by_k = _routes_by_depot(enc, solution)
    routes = []
    if enc.kind == "trips":
        for k, trips in sorted(by_k.items()):
            acts: list[Activity] = []
            for t, customers in enumerate(trips):
                if t:
                    acts.append(Activity(ActivityType.DEPOT, k))
                acts.extend(Activity(ActivityType.CLIENT, c) for c in customers)
            routes.append(pyvrp.Route(enc.data, acts, k))
        return pyvrp.Solution(enc.data, routes)
    demand = np.array([c.delivery[0] for c in enc.data.clients()])
    types = enc.data.vehicle_types()
    for k, trips in sorted(by_k.items()):
        # encode_fleet lists a depot's vehicle types largest first (fleet_sizes' order)
        slots = [
            t
            for t in range(len(types))
            if enc.depot_of(t) == k
            for _ in range(types[t].num_available)
        ]
        trips = sorted(trips, key=lambda c: -int(demand[list(c)].sum()))
        visits: list[list[int]] = [list(c) for c in trips[: len(slots)]]
        for extra in trips[len(slots) :]:
            visits[-1].extend(extra)
        for slot, customers in zip(slots, visits):
            acts = [Activity(ActivityType.CLIENT, c) for c in customers]
            routes.append(pyvrp.Route(enc.data, acts, slot))
    return pyvrp.Solution(enc.data, routes)
