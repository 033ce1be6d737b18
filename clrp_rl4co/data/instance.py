"""A single CLRP instance as plain numpy arrays, with validation and cost conventions.

This is the one instance type shared by the file readers, the solvers and the solution object.
Batches for the environment are :class:`tensordict.TensorDict` objects; see
:func:`instances_to_tensordict` and :func:`tensordict_to_instances`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clrp_rl4co.envs.clrp.validity import CAPACITY_TOLERANCE


def rounded_arc_cost(distance: np.ndarray) -> np.ndarray:
    """The Prodhon integer cost convention (cost-type flag 0): ``ceil(100 * d)``.

    ``1e-9`` is subtracted before rounding up so that a distance that is an exact integer
    multiple of 0.01 in real arithmetic is not pushed up by float64 round-off.
    """
    return np.ceil(100.0 * np.asarray(distance, dtype=np.float64) - 1e-9)


def _check_array(name: str, value, shape: tuple[int, ...] | None, allow_zero: bool = True):
    arr = np.asarray(value, dtype=np.float64)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}{list(idx)} must be finite, got {arr[idx]}")
    neg = arr < 0 if allow_zero else arr <= 0
    if neg.any():
        idx = tuple(int(i) for i in np.argwhere(neg)[0])
        rel = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name}{list(idx)} must be {rel}, got {arr[idx]}")
    return arr


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
        depot_locs = np.asarray(self.depot_locs, dtype=np.float64)
        customer_locs = np.asarray(self.customer_locs, dtype=np.float64)
        if depot_locs.ndim != 2 or depot_locs.shape[-1] != 2 or depot_locs.shape[0] < 1:
            raise ValueError(f"depot_locs: expected shape [D>=1, 2], got {depot_locs.shape}")
        if customer_locs.ndim != 2 or customer_locs.shape[-1] != 2 or customer_locs.shape[0] < 1:
            raise ValueError(f"customer_locs: expected shape [N>=1, 2], got {customer_locs.shape}")
        num_depots, num_customers = depot_locs.shape[0], customer_locs.shape[0]
        for name, arr in (("depot_locs", depot_locs), ("customer_locs", customer_locs)):
            bad = ~np.isfinite(arr)
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise ValueError(f"{name}{list(idx)} must be finite, got {arr[idx]}")
        capacity = _check_array("depot_capacity", self.depot_capacity, (num_depots,))
        opening = _check_array("opening_cost", self.opening_cost, (num_depots,))
        demand = _check_array("demand", self.demand, (num_customers,), allow_zero=False)
        q = float(_check_array("vehicle_capacity", self.vehicle_capacity, (), allow_zero=False))
        fixed = float(_check_array("vehicle_fixed_cost", self.vehicle_fixed_cost, ()))
        too_big = demand > q + CAPACITY_TOLERANCE
        if too_big.any():
            j = int(np.argmax(too_big))
            raise ValueError(f"demand[{j}] = {demand[j]} exceeds vehicle_capacity = {q}")
        if demand.sum() > capacity.sum() + CAPACITY_TOLERANCE:
            raise ValueError(
                f"total demand = {demand.sum()} exceeds total depot_capacity = {capacity.sum()}"
            )
        for key, value in (
            ("depot_locs", depot_locs),
            ("customer_locs", customer_locs),
            ("depot_capacity", capacity),
            ("opening_cost", opening),
            ("demand", demand),
            ("vehicle_capacity", q),
            ("vehicle_fixed_cost", fixed),
            ("rounded_costs", bool(self.rounded_costs)),
        ):
            object.__setattr__(self, key, value)

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
            dist = np.sqrt(((locs[:, None, :] - locs[None, :, :]) ** 2).sum(-1))
            if self.rounded_costs:
                dist = rounded_arc_cost(dist)
            object.__setattr__(self, "_dist", dist)
        return self._dist

    def total_demand(self) -> float:
        return float(self.demand.sum())

    def __repr__(self) -> str:
        return (
            f"CLRPInstance(name={self.name!r}, customers={self.num_customers}, "
            f"depots={self.num_depots}, vehicle_capacity={self.vehicle_capacity:g}, "
            f"vehicle_fixed_cost={self.vehicle_fixed_cost:g}, rounded_costs={self.rounded_costs})"
        )


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
    import torch
    from tensordict import TensorDict

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

    def t(x, dtype=torch.float32):
        return torch.as_tensor(np.asarray(x), dtype=dtype, device=device)

    batch = len(instances)
    return TensorDict(
        {
            "locs": t(net),
            "cost_locs": t(raw, torch.float64),
            "depot_capacity": t(np.stack([i.depot_capacity for i in instances])),
            "opening_cost": t(np.stack([i.opening_cost for i in instances])),
            "demand": t(np.stack([i.demand for i in instances])),
            "vehicle_capacity": t([[i.vehicle_capacity] for i in instances]),
            "vehicle_fixed_cost": t([[i.vehicle_fixed_cost] for i in instances]),
            "rounded_costs": t([i.rounded_costs for i in instances], torch.bool),
        },
        batch_size=[batch],
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
