"""Test helper: small random CLRP instances in plain numpy (the clrp10/clrp20 distribution)."""

from __future__ import annotations

import numpy as np

from clrp_rl4co.data import CLRPInstance


def random_instance(num_customers: int, seed: int, num_depots: int = 5) -> CLRPInstance:
    """Coordinates uniform in the unit square, integer demand 10..19, q = 70, F = 1, depot
    capacity U[100, 300), opening cost U[1, 5)."""
    rng = np.random.default_rng(seed)
    return CLRPInstance(
        depot_locs=rng.random((num_depots, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=rng.uniform(100, 300, num_depots),
        opening_cost=rng.uniform(1, 5, num_depots),
        demand=rng.integers(10, 20, num_customers).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name=f"clrp{num_customers}_{seed}",
    )


def large_golden_instance() -> CLRPInstance:
    """The 2,000-customer instance of the golden tests (``decompose.LARGE_INSTANCE``): six
    depots holding about twice the demand, drawn with seed 11."""
    rng = np.random.default_rng(11)
    num_customers, num_depots = 2000, 6
    return CLRPInstance(
        depot_locs=rng.random((num_depots, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=rng.uniform(3000, 6000, num_depots) * 12 / num_depots,
        opening_cost=rng.uniform(50, 100, num_depots),
        demand=rng.integers(10, 20, num_customers).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="large",
    )
