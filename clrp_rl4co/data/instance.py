"""A single CLRP instance as plain numpy arrays; its validation, TensorDict layout and cost
rounding are the env's (``clrp_rl4co/envs/clrp/``).

This is the one instance type shared by the file readers, the solvers and the solution object.
Batches for the environment are :class:`tensordict.TensorDict` objects; see
:func:`instances_to_tensordict` and :func:`tensordict_to_instances`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clrp_rl4co.envs.clrp.costs import round_cost_np
from clrp_rl4co.envs.clrp.instance import instance_tensordict
from clrp_rl4co.envs.clrp.validity import (
    CAPACITY_TOLERANCE,
    check_instance_validity,
)


@dataclass(frozen=True)
class CLRPInstance:
    """One capacitated location-routing instance.

    Node numbering (as in the env): depots ``0..D-1``, then customers ``D..D+N-1``.
    All costs are in the instance's own units.

    Attributes:
        depot_locs: [D, 2] depot coordinates.
        customer_locs: [N, 2] customer coordinates.
        depot_capacity: [D] depot capacities ``Q_i``.
        opening_cost: [D] depot opening costs ``O_i``.
        demand: [N] customer demands ``D_j`` (each at most ``vehicle_capacity``).
        vehicle_capacity: vehicle capacity ``q``.
        vehicle_fixed_cost: fixed cost ``F`` per route (vehicle).
        rounded_costs: if True every arc costs ``ceil(100 * d)`` (Prodhon cost-type flag 0),
            otherwise the Euclidean distance ``d`` itself (flag 1).
        name: free-form label (e.g. the file name).

    The instance is checked once, on construction (:meth:`check`), and its arrays are
    read-only copies of what was given (the cached cost matrix too): a change is a new instance
    (``dataclasses.replace``), checked in its turn, so nothing downstream checks again.
    """

    depot_locs: np.ndarray
    customer_locs: np.ndarray
    depot_capacity: np.ndarray
    opening_cost: np.ndarray
    demand: np.ndarray
    vehicle_capacity: float
    vehicle_fixed_cost: float
    rounded_costs: bool = False
    name: str = ""
    _dist: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        label = self.name or "CLRPInstance"
        depot_locs = _read_only(self.depot_locs)
        customer_locs = _read_only(self.customer_locs)
        for key, arr, size in (
            ("depot_locs", depot_locs, "D"),
            ("customer_locs", customer_locs, "N"),
        ):
            if arr.ndim != 2 or arr.shape[-1] != 2 or arr.shape[0] < 1:
                raise ValueError(f"{label}: {key}: expected shape [{size}>=1, 2], got {arr.shape}")
        num_depots, num_customers = depot_locs.shape[0], customer_locs.shape[0]
        object.__setattr__(self, "depot_locs", depot_locs)
        object.__setattr__(self, "customer_locs", customer_locs)
        for key, shape in (
            ("depot_capacity", (num_depots,)),
            ("opening_cost", (num_depots,)),
            ("demand", (num_customers,)),
            ("vehicle_capacity", ()),
            ("vehicle_fixed_cost", ()),
        ):
            arr = _read_only(getattr(self, key))
            if arr.shape != shape:
                raise ValueError(f"{label}: {key}: expected shape {shape}, got {arr.shape}")
            object.__setattr__(self, key, float(arr) if shape == () else arr)
        object.__setattr__(self, "rounded_costs", bool(self.rounded_costs))
        self.check()

    def check(self) -> None:
        """Raise ``ValueError`` unless the env accepts this instance: the env's rules
        (:func:`clrp_rl4co.envs.clrp.check_instance_validity`) on it as a batch of one, so the
        message indexes fields as ``demand[0, j]``; it starts with the instance's name (else
        ``CLRPInstance``). Runs on construction (the arrays cannot change after it).
        """
        td = instances_to_tensordict([self], normalize_locs=False)
        check_instance_validity(td, names=[self.name or "CLRPInstance"])

    @property
    def num_depots(self) -> int:
        """``D``, the number of candidate depots."""
        return self.depot_locs.shape[0]

    @property
    def num_customers(self) -> int:
        """``N``, the number of customers."""
        return self.customer_locs.shape[0]

    @property
    def locs(self) -> np.ndarray:
        """[D+N, 2] coordinates of all nodes, depots first."""
        return np.concatenate([self.depot_locs, self.customer_locs], axis=0)

    def cost_matrix(self) -> np.ndarray:
        """[D+N, D+N] float64 arc costs in the instance's units (cached)."""
        if self._dist is None:
            locs = self.locs
            dist = self._outer_costs(locs, locs)
            dist.flags.writeable = False
            object.__setattr__(self, "_dist", dist)
        return self._dist

    def arc_costs(self, tails, heads) -> np.ndarray:
        """[k] float64 costs of the arcs ``tails[i] -> heads[i]`` (node indices, depots
        first): the same numbers as ``cost_matrix()[tails, heads]``, from the coordinates
        when the matrix is not cached (pricing a solution needs no (D+N)^2 matrix)."""
        tails, heads = np.asarray(tails, np.int64), np.asarray(heads, np.int64)
        if self._dist is not None:
            return self._dist[tails, heads]
        a, b = self._node_locs(tails), self._node_locs(heads)
        dist = np.square(a[:, 0] - b[:, 0])  # the cost matrix's arithmetic, pair by pair
        dist += np.square(a[:, 1] - b[:, 1])
        np.sqrt(dist, out=dist)
        return round_cost_np(dist) if self.rounded_costs else dist

    def _node_locs(self, nodes: np.ndarray) -> np.ndarray:
        """[k, 2] coordinates of node indices (depots first)."""
        num_depots = self.num_depots
        is_depot = (nodes < num_depots)[:, None]
        depot = self.depot_locs[np.minimum(nodes, num_depots - 1)]
        customer = self.customer_locs[np.maximum(nodes - num_depots, 0)]
        return np.where(is_depot, depot, customer)

    def depot_customer_costs(self) -> np.ndarray:
        """[D, N] float64 arc costs from each depot to each customer, the same numbers as
        ``cost_matrix()[:D, D:]`` (a slice of it when that is cached; else computed alone, D x
        N instead of (D+N)^2 numbers: 6 million instead of 112 million at 600 depots and
        10,000 customers)."""
        if self._dist is not None:
            return self._dist[: self.num_depots, self.num_depots :]
        return self._outer_costs(self.depot_locs, self.customer_locs)

    def _outer_costs(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """[R, C] arc costs from the points ``rows`` [R, 2] to ``cols`` [C, 2]: dx^2 + dy^2 in
        place (two [R, C] arrays at most: 0.9 GB each for 10,600 x 10,600), its square root,
        rounded when the instance rounds its costs."""
        dist = np.subtract.outer(rows[:, 0], cols[:, 0])
        np.square(dist, out=dist)
        dy = np.subtract.outer(rows[:, 1], cols[:, 1])
        np.square(dy, out=dy)
        dist += dy
        del dy
        np.sqrt(dist, out=dist)
        return round_cost_np(dist) if self.rounded_costs else dist

    def total_demand(self) -> float:
        return float(self.demand.sum())

    def min_routes(self) -> int:
        """The fewest routes any solution has: ``ceil(total demand / vehicle capacity)`` (a
        quotient within 1e-9 of an integer counts as that integer)."""
        return math.ceil(self.total_demand() / float(self.vehicle_capacity) - 1e-9)

    def __repr__(self) -> str:
        return (
            f"CLRPInstance(name={self.name!r}, customers={self.num_customers}, "
            f"depots={self.num_depots}, vehicle_capacity={self.vehicle_capacity:g}, "
            f"vehicle_fixed_cost={self.vehicle_fixed_cost:g}, rounded_costs={self.rounded_costs})"
        )


#: The magnitudes the env's float32 arrays hold (every instance field but ``cost_locs``).
FLOAT32_RANGE = f"{np.finfo(np.float32).smallest_subnormal:.2g} to {np.finfo(np.float32).max:.2g}"


def _read_only(values) -> np.ndarray:
    """A read-only float64 copy of ``values`` (the caller's array stays writable)."""
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def outside_float32(value: float) -> bool:
    """True if the env cannot hold ``value``: its float32 arrays would make it ``inf``, or 0
    although it is not, so a file reader can reject it in the file's terms."""
    with np.errstate(over="ignore"):  # no warning: the caller reports it
        stored = np.float32(value)
    return bool(not np.isfinite(stored) or (stored == 0) != (value == 0))


def oversized_demand(
    demand: np.ndarray, vehicle_capacity: float, depot_capacity: np.ndarray
) -> tuple[int, str] | None:
    """The first customer whose demand no route or no depot can hold, by the env's rule
    (:func:`~clrp_rl4co.envs.clrp.check_instance_validity`, :data:`CAPACITY_TOLERANCE` slack),
    so that a file reader can name it in the file's own terms before the env check runs.

    Args:
        demand: [N] customer demands.
        vehicle_capacity: the vehicle capacity.
        depot_capacity: [D] depot capacities.

    Returns:
        ``(j, "vehicle")`` for the first demand above the vehicle capacity, else ``(j,
        "depot")`` for the first one above every depot capacity (``j`` 0-based), else None.
    """
    limits = (("vehicle", vehicle_capacity), ("depot", np.max(depot_capacity)))
    for which, limit in limits:
        over = np.flatnonzero(demand > limit + CAPACITY_TOLERANCE)
        if len(over):
            return int(over[0]), which
    return None


def unit_square_scale(locs: np.ndarray) -> tuple[np.ndarray, float]:
    """Min-max shift and one uniform scale (aspect ratio kept) mapping ``locs`` into [0, 1]^2.

    Returns the offset [2] and the scale; network coordinates are ``(locs - offset) / scale``.
    """
    offset = locs.min(axis=0)
    scale = float((locs.max(axis=0) - offset).max())
    if not math.isfinite(scale) or scale <= 0:
        scale = 1.0
    return offset, scale


def instances_to_tensordict(instances, normalize_locs: bool = True, device="cpu"):
    """Stack instances of equal size into an env input TensorDict (batch of ``len(instances)``).

    ``locs`` are the network coordinates: per instance shifted and divided by one uniform scale
    so that they lie in [0, 1]^2 (``normalize_locs=True``), or the raw coordinates. The raw
    coordinates always go to ``cost_locs`` (float64), which the reward uses.
    """
    instances = list(instances)
    if not instances:
        raise ValueError("instances: need at least one instance")
    sizes = {(inst.num_depots, inst.num_customers) for inst in instances}
    if len(sizes) != 1:
        raise ValueError(f"instances: all must have the same (depots, customers), got {sizes}")
    raw = np.stack([inst.locs for inst in instances])
    if normalize_locs:
        net = []
        for locs in raw:
            offset, scale = unit_square_scale(locs)
            net.append((locs - offset) / scale)
        net = np.stack(net)
    else:
        net = raw
    return instance_tensordict(
        net,
        np.stack([i.depot_capacity for i in instances]),
        np.stack([i.opening_cost for i in instances]),
        np.stack([i.demand for i in instances]),
        [i.vehicle_capacity for i in instances],
        [i.vehicle_fixed_cost for i in instances],
        cost_locs=raw,
        rounded_costs=[i.rounded_costs for i in instances],
        device=device,
    )


def tensordict_to_instances(td, names=None) -> list[CLRPInstance]:
    """Inverse of :func:`instances_to_tensordict` for any env input or state TensorDict.

    Costs come from ``cost_locs`` (the untouched coordinates), never from ``locs``.
    """
    num_depots = td["depot_capacity"].shape[-1]
    cost_locs = td["cost_locs"].detach().cpu().double().numpy()
    cap = td["depot_capacity"].detach().cpu().double().numpy()
    opening = td["opening_cost"].detach().cpu().double().numpy()
    demand = td["demand"].detach().cpu().double().numpy()
    q = td["vehicle_capacity"].detach().cpu().double().numpy().reshape(-1)
    fixed = td["vehicle_fixed_cost"].detach().cpu().double().numpy().reshape(-1)
    if "rounded_costs" in td.keys():
        rounded = td["rounded_costs"].detach().cpu().numpy().reshape(-1)
    else:
        rounded = np.zeros(len(q), dtype=bool)
    out = []
    for b in range(cost_locs.shape[0]):
        out.append(
            CLRPInstance(
                depot_locs=cost_locs[b, :num_depots],
                customer_locs=cost_locs[b, num_depots:],
                depot_capacity=cap[b],
                opening_cost=opening[b],
                demand=demand[b],
                vehicle_capacity=q[b],
                vehicle_fixed_cost=fixed[b],
                rounded_costs=bool(rounded[b]),
                name=names[b] if names is not None else f"instance_{b}",
            )
        )
    return out
