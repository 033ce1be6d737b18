"""The instance TensorDict: the keys and dtypes that the generator returns, the dataset files
hold and the env reads (:data:`INSTANCE_KEYS`, :func:`instance_tensordict`)."""

from __future__ import annotations

import torch
from tensordict import TensorDict

#: Keys of an instance TensorDict (generator output, dataset file, env input).
INSTANCE_KEYS = (
    "locs",
    "cost_locs",
    "depot_capacity",
    "opening_cost",
    "demand",
    "vehicle_capacity",
    "vehicle_fixed_cost",
    "rounded_costs",
)


def instance_tensordict(
    locs,
    depot_capacity,
    opening_cost,
    demand,
    vehicle_capacity,
    vehicle_fixed_cost,
    cost_locs=None,
    rounded_costs=None,
    device=None,
) -> TensorDict:
    """An instance TensorDict (the keys of :data:`INSTANCE_KEYS`), as the generator returns it
    and the env reads it; use it to build batches of instances from any other source.

    Args:
        locs: [..., D+N, 2] coordinates, depots first (the network input).
        depot_capacity, opening_cost: [..., D]; demand: [..., N].
        vehicle_capacity, vehicle_fixed_cost: a number (every instance) or one per instance
            ([...] or [..., 1]).
        cost_locs: [..., D+N, 2] coordinates the cost is computed from (default: ``locs``).
        rounded_costs: bool, or [...] bools (default False): ``ceil(100 d)`` arc costs.
        device: default: ``locs``'s device (CPU for arrays).

    Any array-like is accepted. ``cost_locs`` is float64, ``rounded_costs`` bool and every
    other entry float32; ``vehicle_capacity`` and ``vehicle_fixed_cost`` are [..., 1]. The
    batch shape ``...`` is ``depot_capacity``'s; nothing is validated here (the env's reset
    does it, :func:`check_instance_validity`).
    """
    if device is None:
        device = locs.device if isinstance(locs, torch.Tensor) else "cpu"

    def tensor(value, dtype=torch.float32):
        return torch.as_tensor(value, dtype=dtype, device=device)

    capacity = tensor(depot_capacity)
    batch = capacity.shape[:-1]

    def per_instance(value, dtype=torch.float32):
        """[...] values from a number or one value per instance ([...] or [..., 1])."""
        value = tensor(value, dtype)
        return value.expand(batch).clone() if value.dim() == 0 else value.reshape(batch)

    locs = tensor(locs)
    return TensorDict(
        {
            "locs": locs,
            "cost_locs": locs.double() if cost_locs is None else tensor(cost_locs, torch.float64),
            "depot_capacity": capacity,
            "opening_cost": tensor(opening_cost),
            "demand": tensor(demand),
            "vehicle_capacity": per_instance(vehicle_capacity)[..., None],
            "vehicle_fixed_cost": per_instance(vehicle_fixed_cost)[..., None],
            "rounded_costs": per_instance(
                False if rounded_costs is None else rounded_costs, torch.bool
            ),
        },
        batch_size=batch,
        device=device,
    )
