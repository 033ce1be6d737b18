"""The JSON instance format: round trip, and one clear error per malformed field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance
from clrp_rl4co.data.json_instance import (
    instance_from_dict,
    instance_to_dict,
    read_json_instance,
    write_json_instance,
)


def example() -> dict:
    return {
        "name": "tiny",
        "vehicle_capacity": 70,
        "vehicle_fixed_cost": 1000,
        "rounding": "ceil100",
        "depots": [
            {"x": 0, "y": 0, "capacity": 100, "opening_cost": 50},
            {"x": 10, "y": 0, "capacity": 80, "opening_cost": 40.5},
        ],
        "customers": [
            {"x": 1, "y": 1, "demand": 20},
            {"x": 9, "y": 1, "demand": 30},
            {"x": 5, "y": 5, "demand": 15},
        ],
    }


def test_fields_map_to_the_instance_in_file_order():
    inst = instance_from_dict(example())
    assert inst.name == "tiny"
    assert inst.num_depots == 2 and inst.num_customers == 3
    np.testing.assert_array_equal(inst.depot_locs, [[0, 0], [10, 0]])
    np.testing.assert_array_equal(inst.customer_locs, [[1, 1], [9, 1], [5, 5]])
    np.testing.assert_array_equal(inst.depot_capacity, [100, 80])
    np.testing.assert_array_equal(inst.opening_cost, [50, 40.5])
    np.testing.assert_array_equal(inst.demand, [20, 30, 15])
    assert inst.vehicle_capacity == 70 and inst.vehicle_fixed_cost == 1000
    assert inst.rounded_costs is True
    # ceil100: the arc depot 0 -> customer 0 has length sqrt(2) and costs ceil(141.42...) = 142
    assert inst.cost_matrix()[0, 2] == 142
    data = example()
    data["rounding"] = "none"
    assert instance_from_dict(data).cost_matrix()[0, 2] == pytest.approx(2**0.5, rel=1e-15)


def test_round_trip_through_a_file(tmp_path):
    rng = np.random.default_rng(3)
    inst = CLRPInstance(
        depot_locs=rng.random((3, 2)),
        customer_locs=rng.random((7, 2)),
        depot_capacity=[200.0, 150.0, 300.0],
        opening_cost=rng.uniform(1, 5, 3),
        demand=rng.integers(10, 20, 7).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="r",
    )
    path = tmp_path / "r.json"
    write_json_instance(inst, path)
    back = read_json_instance(path)
    for key in ("depot_locs", "customer_locs", "depot_capacity", "opening_cost", "demand"):
        np.testing.assert_array_equal(getattr(back, key), getattr(inst, key))
    assert (back.vehicle_capacity, back.vehicle_fixed_cost) == (70.0, 1.0)
    assert back.rounded_costs is False and back.name == "r"
    assert json.loads(path.read_text()) == instance_to_dict(inst)


def test_name_defaults_to_the_file_stem(tmp_path):
    data = example()
    del data["name"]
    path = tmp_path / "my-instance.json"
    path.write_text(json.dumps(data))
    assert read_json_instance(path).name == "my-instance"


def _broken(change) -> dict:
    data = example()
    change(data)
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["customers"][1].pop("demand"), "customers[1]: missing field 'demand'"),
        (
            lambda d: d["customers"][2].update(demand=-5),
            "customers[2].demand: must be positive, got -5",
        ),
        (lambda d: d["customers"][0].update(demand=0), "customers[0].demand: must be positive"),
        (lambda d: d["depots"][0].update(x="a"), "depots[0].x: must be a number, got 'a'"),
        (
            lambda d: d["depots"][1].update(capacity=-1),
            "depots[1].capacity: must be non-negative, got -1",
        ),
        (
            lambda d: d["depots"][1].update(opening_cost=-2),
            "depots[1].opening_cost: must be non-negative, got -2",
        ),
        (lambda d: d.pop("vehicle_capacity"), "instance: missing field 'vehicle_capacity'"),
        (lambda d: d.update(vehicle_capacity=0), "vehicle_capacity: must be positive, got 0"),
        (lambda d: d.update(rounding="floor"), "rounding: must be one of"),
        (lambda d: d.update(depots=[]), "depots: must be a non-empty list"),
        (lambda d: d.update(extra=1), "instance: unknown field(s) ['extra']"),
        (lambda d: d["customers"][0].update(z=1), "customers[0]: unknown field(s) ['z']"),
        (lambda d: d["customers"][0].update(x=float("nan")), "customers[0].x: must be finite"),
        (lambda d: d["customers"][0].update(demand=True), "customers[0].demand: must be a number"),
    ],
)
def test_malformed_fields_are_named_with_file_and_value(tmp_path, change, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(change)))
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_not_json_and_infeasible_instances_are_named(tmp_path):
    path = tmp_path / "garbage.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"garbage.json: not valid JSON"):
        read_json_instance(path)
    # a demand above the vehicle capacity: the env's rule, with the file name in front
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_broken(lambda d: d["customers"][0].update(demand=75))))
    with pytest.raises(ValueError, match=r"big.json: .*demand"):
        read_json_instance(path)
