"""The instance object and its TensorDict conversions on hand-made inputs: array types and
shape errors, the unit-square scaling, and the round trip of names, rounding and devices."""

import re

import numpy as np
import pytest
import torch

from clrp_rl4co.data import CLRPInstance, instances_to_tensordict, tensordict_to_instances
from clrp_rl4co.data.instance import unit_square_scale


def _toy(**changes):
    args = dict(
        depot_locs=[[0, 0], [10, 0]],
        customer_locs=[[0, 3], [10, 4], [5, 5]],
        depot_capacity=[20, 20],
        opening_cost=[100, 50],
        demand=[4, 5, 6],
        vehicle_capacity=10,
        vehicle_fixed_cost=10,
        name="toy",
    )
    return CLRPInstance(**{**args, **changes})


def test_inputs_become_float64_arrays_and_a_bool_flag():
    inst = _toy(rounded_costs=1)  # lists of ints and an int flag
    for key in ("depot_locs", "customer_locs", "depot_capacity", "opening_cost", "demand"):
        value = getattr(inst, key)
        assert isinstance(value, np.ndarray) and value.dtype == np.float64, key
    assert inst.rounded_costs is True
    assert isinstance(inst.vehicle_capacity, float) and inst.vehicle_capacity == 10.0
    assert inst.total_demand() == 15.0
    assert (inst.num_depots, inst.num_customers) == (2, 3)


@pytest.mark.parametrize(
    "demand, capacity, routes",
    [([4, 5, 6], 10, 2), ([4, 5, 6], 15, 1), ([4, 5, 6], 7.5, 2), ([0.1, 0.2], 0.3, 1)],
)
def test_the_fewest_routes_round_the_demand_over_the_vehicle_capacity_up(demand, capacity, routes):
    """15 / 10 -> 2; 15 / 15 and 15 / 7.5 exactly 1 and 2; (0.1 + 0.2) / 0.3 is
    1.0000000000000002 in floating point, still one route."""
    customers = [[0, 0]] * len(demand)
    inst = _toy(demand=demand, customer_locs=customers, vehicle_capacity=capacity)
    assert inst.min_routes() == routes


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(depot_locs=[[0, 0, 0], [1, 1, 1]]), "toy: depot_locs: expected shape [D>=1, 2], "
         "got (2, 3)"),
        (dict(customer_locs=np.zeros((0, 2))), "toy: customer_locs: expected shape [N>=1, 2], "
         "got (0, 2)"),
        (dict(customer_locs=[1.0, 2.0]), "toy: customer_locs: expected shape [N>=1, 2], got (2,)"),
        (dict(depot_capacity=[20, 20, 20]), "toy: depot_capacity: expected shape (2,), got (3,)"),
        (dict(vehicle_capacity=[10, 10]), "toy: vehicle_capacity: expected shape (), got (2,)"),
        (dict(customer_locs=[[0, 3], [10, np.inf], [5, 5]]), "toy: locs[0, 3, 1] must be finite, "
         "got inf"),
        (dict(customer_locs=[[0, 3], [10, 4], [np.nan, 5]]), "toy: locs[0, 4, 0] must be "
         "finite, got nan"),
        (dict(name="", demand=[4, 5, 60]), "CLRPInstance: demand[0, 2] = 60 exceeds "
         "vehicle_capacity 10"),
    ],
)  # fmt: skip
def test_construction_errors_name_the_instance_and_field(changes, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        _toy(**changes)


def test_unit_square_scale():
    offset, scale = unit_square_scale(np.array([[1.0, 5.0], [5.0, 7.0], [3.0, 6.0]]))
    assert offset.tolist() == [1.0, 5.0] and scale == 4.0  # the wider side (x: 4, y: 2)
    offset, scale = unit_square_scale(np.array([[0.2, 0.1], [0.7, 0.3]]))
    assert offset.tolist() == [0.2, 0.1] and scale == pytest.approx(0.5)
    offset, scale = unit_square_scale(np.array([[2.0, 3.0], [2.0, 3.0]]))  # one point
    assert offset.tolist() == [2.0, 3.0] and scale == 1.0


def test_tensordict_round_trip_keeps_names_rounding_and_raw_coordinates():
    a, b = _toy(name="a", rounded_costs=True), _toy(name="b", vehicle_capacity=12)
    td = instances_to_tensordict([a, b])
    assert td["rounded_costs"].tolist() == [True, False]
    assert td["locs"].min() == 0 and td["locs"].max() == 1
    back = tensordict_to_instances(td, names=["first", "second"])
    assert [i.name for i in back] == ["first", "second"]
    assert [i.rounded_costs for i in back] == [True, False]
    assert [i.vehicle_capacity for i in back] == [10.0, 12.0]
    assert [i.vehicle_fixed_cost for i in back] == [10.0, 10.0]
    np.testing.assert_array_equal(back[0].locs, a.locs)
    assert [i.name for i in tensordict_to_instances(td)] == ["instance_0", "instance_1"]
    # without the flag every instance has real-valued costs
    plain = tensordict_to_instances(td.exclude("rounded_costs"))
    assert [i.rounded_costs for i in plain] == [False, False]


def test_tensordict_batch_rules_and_device():
    with pytest.raises(ValueError, match="^instances: need at least one instance$"):
        instances_to_tensordict([])
    small = CLRPInstance(
        depot_locs=[[0, 0]],
        customer_locs=[[1, 1]],
        depot_capacity=[10],
        opening_cost=[1],
        demand=[1],
        vehicle_capacity=10,
        vehicle_fixed_cost=1,
    )
    with pytest.raises(
        ValueError, match=r"^instances: all must have the same \(depots, customers\), got \{"
    ):
        instances_to_tensordict([_toy(), small])
    td = instances_to_tensordict([small], device="meta")
    assert td.device == torch.device("meta") and td["locs"].is_meta


def _scattered(rng, depots: int, customers: int, side: float, rounded: bool) -> dict:
    """Fields of an instance with points uniform in ``[0, side]^2`` (depots first)."""
    return dict(
        depot_locs=rng.random((depots, 2)) * side,
        customer_locs=rng.random((customers, 2)) * side,
        depot_capacity=np.full(depots, 100.0),
        opening_cost=np.ones(depots),
        demand=np.full(customers, 3.0),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
        rounded_costs=rounded,
    )


@pytest.mark.parametrize("rounded", [False, True])
def test_depot_customer_costs_are_the_cost_matrix_block_bit_for_bit(rounded):
    fields = _scattered(np.random.default_rng(5), 4, 9, 37.0, rounded)
    alone = CLRPInstance(**fields).depot_customer_costs()  # no cost matrix built
    assert alone.shape == (4, 9)
    d = fields["depot_locs"][:, None, :] - fields["customer_locs"][None, :, :]
    euclid = np.sqrt((d**2).sum(-1))
    np.testing.assert_allclose(alone, np.ceil(100 * euclid) if rounded else euclid, rtol=1e-12)
    cached = CLRPInstance(**fields)
    block = cached.cost_matrix()[:4, 4:]
    np.testing.assert_array_equal(alone, block)  # the same numbers, bit for bit
    np.testing.assert_array_equal(cached.depot_customer_costs(), block)


@pytest.mark.parametrize("rounded", [False, True])
def test_arc_costs_are_the_cost_matrix_entries_bit_for_bit(rounded):
    rng = np.random.default_rng(8)
    fields = _scattered(rng, 3, 7, 53.0, rounded)
    tails = rng.integers(0, 10, 200)
    heads = rng.integers(0, 10, 200)
    alone = CLRPInstance(**fields).arc_costs(tails, heads)  # no cost matrix built
    locs = np.concatenate([fields["depot_locs"], fields["customer_locs"]])
    euclid = np.sqrt(((locs[tails] - locs[heads]) ** 2).sum(-1))
    np.testing.assert_allclose(alone, np.ceil(100 * euclid) if rounded else euclid, rtol=1e-12)
    cached = CLRPInstance(**fields)
    entries = cached.cost_matrix()[tails, heads]
    np.testing.assert_array_equal(alone, entries)  # bit for bit, depots and customers alike
    np.testing.assert_array_equal(cached.arc_costs(tails, heads), entries)
    assert cached.arc_costs([], []).shape == (0,)
