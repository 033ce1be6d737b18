"""Bad input gets a ValueError that names the field and the value."""

import numpy as np
import pytest

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.envs.clrp import generate_dataset


@pytest.fixture
def td():
    env = CLRPEnv(generator_params={"preset": "clrp10"})
    return generate_dataset(env.generator, 3, seed=0)


@pytest.mark.parametrize(
    "key,index,value,message",
    [
        ("demand", (1, 2), -3.0, r"demand\[1, 2\] must be finite and non-negative, got -3"),
        ("demand", (0, 0), float("nan"), r"demand\[0, 0\] must be finite"),
        ("demand", (0, 1), 0.0, r"demand\[0, 1\] must be positive, got 0"),
        ("demand", (2, 3), 80.0, r"demand\[2, 3\] = 80 exceeds vehicle_capacity 70"),
        ("depot_capacity", (1, 0), float("inf"), r"depot_capacity\[1, 0\] must be finite"),
        ("opening_cost", (0, 4), -1.0, r"opening_cost\[0, 4\] must be finite and non-negative"),
        ("locs", (2, 3, 1), float("nan"), r"locs\[2, 3, 1\] must be finite, got nan"),
        ("vehicle_fixed_cost", (1, 0), -2.0, r"vehicle_fixed_cost\[1, 0\] must be finite and"),
    ],
)
def test_env_reset_rejects_bad_values(td, key, index, value, message):
    td[key][index] = value
    with pytest.raises(ValueError, match=message):
        CLRPEnv().reset(td)


def test_env_reset_rejects_total_demand_above_total_capacity(td):
    td["depot_capacity"][1] = 25.0
    total = td["demand"][1].sum().item()
    assert total > 125
    with pytest.raises(
        ValueError, match=f"instance 1: total demand {total:g} exceeds total depot_capacity 125"
    ):
        CLRPEnv().reset(td)


def test_env_reset_rejects_a_customer_no_depot_can_hold(td):
    td["depot_capacity"][0] = 18.0
    td["demand"][0, 3] = 19.0
    with pytest.raises(ValueError, match=r"demand\[0, 3\] = 19 exceeds every depot_capacity"):
        CLRPEnv().reset(td)


def test_env_reset_rejects_mismatched_shapes(td):
    bad = td.clone()
    bad["opening_cost"] = bad["opening_cost"][:, :4]
    with pytest.raises(ValueError, match=r"opening_cost: expected shape \[B, 5\]"):
        CLRPEnv().reset(bad)
    bad = td.clone()
    bad["locs"] = bad["locs"][:, :-1]
    with pytest.raises(ValueError, match=r"locs: expected shape \[B, 15, 2\]"):
        CLRPEnv().reset(bad)
    bad = td.clone()
    del bad["demand"]
    with pytest.raises(ValueError, match="demand: missing"):
        CLRPEnv().reset(bad)


def _instance(**overrides):
    args = dict(
        depot_locs=np.zeros((2, 2)),
        customer_locs=np.ones((3, 2)),
        depot_capacity=np.array([10.0, 10.0]),
        opening_cost=np.array([1.0, 1.0]),
        demand=np.array([1.0, 2.0, 3.0]),
        vehicle_capacity=5.0,
        vehicle_fixed_cost=1.0,
    )
    args.update(overrides)
    return CLRPInstance(**args)


@pytest.mark.parametrize(
    "overrides,message",
    [
        (dict(demand=np.array([1.0, -2.0, 3.0])), r"demand\[1\] must be positive, got -2"),
        (dict(demand=np.array([1.0, 6.0, 3.0])), r"demand\[1\] = 6.0 exceeds vehicle_capacity"),
        (dict(depot_capacity=np.array([1.0, 2.0])), "total demand = 6.0 exceeds total"),
        (dict(opening_cost=np.array([1.0, np.nan])), r"opening_cost\[1\] must be finite"),
        (dict(customer_locs=np.ones((3, 3))), r"customer_locs: expected shape \[N>=1, 2\]"),
        (dict(demand=np.ones(4)), r"demand: expected shape \(3,\), got \(4,\)"),
        (dict(vehicle_capacity=0.0), "vehicle_capacity.* must be positive"),
        (dict(depot_locs=np.array([[0.0, np.inf], [0, 0]])), r"depot_locs\[0, 1\] must be finite"),
    ],
)
def test_instance_rejects_bad_values(overrides, message):
    with pytest.raises(ValueError, match=message):
        _instance(**overrides)
