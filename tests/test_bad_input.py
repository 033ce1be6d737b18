"""Bad input gets a ValueError that names the field and the value."""

import dataclasses
import re
import warnings

import numpy as np
import pytest
import torch

from clrp_rl4co import CLRPEnv, CLRPInstance
from clrp_rl4co.data.instance import FLOAT32_RANGE, outside_float32, oversized_demand
from clrp_rl4co.envs.clrp import generate_dataset, instance_tensordict


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
        ("vehicle_capacity", (2, 0), 0.0, r"vehicle_capacity\[2, 0\] must be positive, got 0"),
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


def test_env_reset_rejects_customers_the_depots_that_can_hold_them_cannot_take(td):
    # total demand 64 <= total capacity 102 and every demand fits the depot of capacity 30,
    # but the three customers of demand 19 (57 in all) fit only into that one depot
    td["depot_capacity"][1] = torch.tensor([30.0, 18.0, 18.0, 18.0, 18.0])
    td["demand"][1] = torch.tensor([19.0, 19.0, 19.0] + [1.0] * 7)
    with pytest.raises(
        ValueError,
        match=r"instance 1: customers with demand >= 19 need 57 but the depots that can hold "
        r"them \(depot_capacity >= 19\) have only 30",
    ):
        CLRPEnv().reset(td)


def test_env_reset_rejects_instances_without_customers(td):
    td = td.clone()
    td["demand"] = td["demand"][:, :0]
    with pytest.raises(ValueError, match=r"demand: need at least one customer, got shape \[3, 0\]"):
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


# clrp10: 5 depots, 10 customers, 15 nodes; each array cut or padded along its node axis
@pytest.mark.parametrize(
    "key,shape",
    [
        ("depot_capacity", [3, 4]),
        ("depot_capacity", [3, 6]),
        ("depot_capacity", [3, 5, 1]),
        ("opening_cost", [3, 4]),
        ("demand", [3, 9]),
        ("demand", [3, 15]),
        ("demand", [3, 10, 1]),
        ("locs", [3, 14, 2]),
        ("locs", [3, 15, 3]),
    ],
)
@pytest.mark.parametrize("with_cost_locs", [True, False])
def test_a_wrong_shape_is_reported_on_its_own_field(td, key, shape, with_cost_locs):
    bad = td.clone() if with_cost_locs else td.exclude("cost_locs")
    bad[key] = torch.ones(shape)
    expected = {
        "depot_capacity": "[B, 5]",
        "opening_cost": "[B, 5]",
        "demand": "[B, 10]",
        "locs": "[B, 15, 2]",
    }[key]
    message = (
        rf"{key}: expected shape {re.escape(expected)} for 5 depots and 10 customers, "
        rf"got {re.escape(str(shape))}"
    )
    # without cost_locs, a well-formed demand or locs that disagrees on the number of
    # customers is one array against the other: the message then names both
    tie = not with_cost_locs and key in ("demand", "locs") and shape[-1] != 1 and shape[-1] != 3
    pattern = f"(^|; or ){message}(; or |$)" if tie else f"^{message}$"
    with pytest.raises(ValueError, match=pattern):
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
        (dict(demand=[1.0, -2.0, 3.0]), r"demand\[0, 1\] must be finite and non-negative, got -2"),
        (dict(demand=[1.0, 6.0, 3.0]), r"demand\[0, 1\] = 6 exceeds vehicle_capacity 5"),
        (dict(depot_capacity=[3.0, 2.0]), "total demand 6 exceeds total depot_capacity 5"),
        (dict(depot_capacity=[2.0, 2.0]), r"demand\[0, 2\] = 3 exceeds every depot_capacity"),
        (
            dict(depot_capacity=[1.5, 4.5], demand=[2.0, 2.0, 2.0]),
            r"customers with demand >= 2 need 6 but .* \(depot_capacity >= 2\) have only 4.5",
        ),
        (dict(opening_cost=[1.0, np.nan]), r"opening_cost\[0, 1\] must be finite"),
        (dict(customer_locs=np.ones((3, 3))), r"customer_locs: expected shape \[N>=1, 2\]"),
        (dict(demand=np.ones(4)), r"demand: expected shape \(3,\), got \(4,\)"),
        (dict(vehicle_capacity=0.0), r"vehicle_capacity\[0, 0\] must be positive, got 0"),
        (dict(depot_locs=[[0.0, np.inf], [0, 0]]), r"locs\[0, 0, 1\] must be finite, got inf"),
    ],
)
def test_instance_rejects_bad_values(overrides, message):
    # messages start with the instance's name (else the class name); a rule on the whole
    # instance names it as instance 0 of a batch of one, like the env's reset
    with pytest.raises(ValueError, match="^CLRPInstance: (instance 0: )?" + message):
        _instance(**overrides)
    with pytest.raises(ValueError, match="^inst7: (instance 0: )?" + message):
        _instance(name="inst7", **overrides)


@pytest.mark.parametrize(
    "overrides",
    [
        dict(depot_capacity=[2.0, 2.0]),
        dict(depot_capacity=[1.5, 4.5], demand=[2.0, 2.0, 2.0]),
        dict(demand=[1.0, 6.0, 3.0]),
    ],
)
def test_instance_and_env_reject_with_the_same_rule(overrides):
    """One rule set: the env's reset rejects the same instance (built from the same arrays
    without the instance class) with the same message."""
    args = dict(
        depot_capacity=[10.0, 10.0],
        demand=[1.0, 2.0, 3.0],
        vehicle_capacity=5.0,
    )
    args.update(overrides)
    td = instance_tensordict(
        torch.zeros(1, 5, 2),
        torch.tensor([args["depot_capacity"]]),
        torch.ones(1, 2),
        torch.tensor([args["demand"]]),
        args["vehicle_capacity"],
        1.0,
    )
    with pytest.raises(ValueError) as from_env:
        CLRPEnv().reset(td)
    with pytest.raises(ValueError) as from_instance:
        _instance(**overrides)
    assert str(from_instance.value) == f"CLRPInstance: {from_env.value}"


def test_an_instance_holds_read_only_copies_of_what_it_was_given():
    """Checked once, on construction: what it holds cannot change afterwards (in place, or
    through the caller's arrays), and the caller's arrays stay the caller's."""
    capacity = np.array([10.0, 10.0])
    inst = _instance(name="inst7", depot_capacity=capacity)
    capacity[:] = [2.0, 2.0]  # the caller's array: writable, and not the instance's
    assert inst.depot_capacity.tolist() == [10.0, 10.0]
    arrays = ("depot_locs", "customer_locs", "depot_capacity", "opening_cost", "demand")
    for name in arrays:
        with pytest.raises(ValueError, match="read-only"):
            getattr(inst, name)[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        inst.cost_matrix()[0, 1] = 0.0  # the cached matrix too
    with pytest.raises(ValueError, match=r"^inst7: demand\[0, 2\] = 3 exceeds every depot_cap"):
        dataclasses.replace(inst, depot_capacity=capacity)  # a changed copy is checked


def test_what_the_float32_arrays_of_the_env_cannot_hold():
    # float32: largest finite 3.4028235e38 (values up to halfway to the next power round down
    # to it), smallest subnormal 1.4e-45 (half of it and less round to 0)
    assert FLOAT32_RANGE == "1.4e-45 to 3.4e+38"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked quietly: the reader reports it
        held = [0.0, -0.0, 0.1, -3.4e38, 3.4028235e38, 1e-40, 1e-45, -1e-45]
        for value in held:
            assert outside_float32(value) is False, value
        for value in [3.5e38, -1e39, 1e-46, -1e-50]:
            assert outside_float32(value) is True, value


def test_the_first_demand_no_route_or_depot_can_hold():
    # the env's rule: above the limit by more than CAPACITY_TOLERANCE (1e-5); the vehicle
    # capacity is checked for every customer before any depot capacity
    capacity = np.array([0.0, 30.0, 20.0])
    assert oversized_demand(np.array([5.0, 12.0, 10.0]), 12.0, capacity) is None
    assert oversized_demand(np.array([5.0, 12.00001]), 12.0, capacity) is None
    assert oversized_demand(np.array([31.0, 5.0, 13.0]), 12.0, capacity) == (0, "vehicle")
    assert oversized_demand(np.array([5.0, 31.0, 40.0]), 40.0, capacity) == (1, "depot")
    assert oversized_demand(np.array([1e-5]), 1.0, np.array([0.0])) is None  # 0 + 1e-5
