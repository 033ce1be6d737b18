"""The JSON instance format: round trip, and one clear error per malformed field."""

from __future__ import annotations

import json
import re

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


def test_the_dict_of_an_instance_is_the_file_it_was_read_from():
    # integers stay integers, other numbers floats, the ceil100 convention its own name
    assert instance_to_dict(instance_from_dict(example())) == example()


def test_boundary_values_are_accepted():
    # zero fixed cost, capacity and opening cost are allowed; fractions below 1 everywhere
    data = example()
    data.update(vehicle_capacity=0.5, vehicle_fixed_cost=0)
    data["depots"][0].update(capacity=0, opening_cost=0)
    data["depots"][1].update(capacity=0.75, opening_cost=0.5)
    for customer in data["customers"]:
        customer["demand"] = 0.25  # 0.75 in all: depot 1 holds it exactly
    inst = instance_from_dict(data)
    assert (inst.vehicle_capacity, inst.vehicle_fixed_cost) == (0.5, 0.0)
    np.testing.assert_array_equal(inst.depot_capacity, [0, 0.75])
    np.testing.assert_array_equal(inst.opening_cost, [0, 0.5])
    np.testing.assert_array_equal(inst.demand, [0.25, 0.25, 0.25])


def test_the_name_field_comes_first_else_the_file_stem(tmp_path):
    # docs/formats.md: "`name` is optional (default: the file's stem)"
    path = tmp_path / "my-instance.json"
    path.write_text(json.dumps(example()))
    assert read_json_instance(path).name == "tiny"
    data = example()
    del data["name"]
    path.write_text(json.dumps(data))
    assert read_json_instance(path).name == "my-instance"
    # without a file, the name is the caller's, else empty
    assert instance_from_dict(data, name="given").name == "given"
    assert instance_from_dict(data).name == ""
    assert instance_from_dict(example(), name="given").name == "tiny"


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
        (lambda d: d.pop("vehicle_fixed_cost"), "instance: missing field 'vehicle_fixed_cost'"),
        (lambda d: d.pop("rounding"), "instance: missing field 'rounding'"),
        (lambda d: d.pop("depots"), "instance: missing field 'depots'"),
        (
            lambda d: d.update(vehicle_fixed_cost="a"),
            "vehicle_fixed_cost: must be a number, got 'a'",
        ),
        (
            lambda d: d.update(vehicle_fixed_cost=-1),
            "vehicle_fixed_cost: must be non-negative, got -1",
        ),
        (lambda d: d["customers"].append(5), "customers[3]: must be an object, got 5"),
        # a value is shown in full up to 60 characters (a string of 58 and its quotes)
        (lambda d: d.update(rounding="a" * 58), "got '" + "a" * 58 + "'"),
        (lambda d: d.update(rounding="a" * 59), "got '" + "a" * 56 + "..."),
        (lambda d: d.update(vehicle_capacity=0), "vehicle_capacity: must be positive, got 0"),
        (lambda d: d.update(rounding="floor"), "rounding: must be one of"),
        (lambda d: d.update(rounding=[]), "rounding: must be one of ['ceil100', 'none'], got []"),
        (lambda d: d.update(depots=[]), "depots: must be a non-empty list"),
        (lambda d: d.update(extra=1), "instance: unknown field(s) ['extra']"),
        (lambda d: d["customers"][0].update(z=1), "customers[0]: unknown field(s) ['z']"),
        (lambda d: d["customers"][0].update(x=float("nan")), "customers[0].x: must be finite"),
        (lambda d: d["customers"][0].update(demand=True), "customers[0].demand: must be a number"),
        (lambda d: d.update(name=7), "name: must be a string, got 7"),
        (  # the env's float32 arrays hold magnitudes up to 3.4e38
            lambda d: d.update(vehicle_capacity=3.5e38),
            "vehicle_capacity: must be 0 or of magnitude 1.4e-45 to 3.4e+38, got 3.5e+38",
        ),
        (lambda d: d["depots"][0].update(y=10**400), "depots[0].y: must be finite, got 1000"),
        (  # a long value is cut to 60 characters
            lambda d: d.update(customers={"a": list(range(40))}),
            "customers: must be a non-empty list, got "
            "{'a': [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, ...",
        ),
        # a demand no route or no depot can hold, named in the file's terms
        (
            lambda d: d["customers"][0].update(demand=75),
            "customers[0].demand: 75 exceeds vehicle_capacity 70",
        ),
        (  # in full: above the limit by more than the env's tolerance 1e-5
            lambda d: d["customers"][2].update(demand=70.00002),
            "customers[2].demand: 70.00002 exceeds vehicle_capacity 70",
        ),
        (
            lambda d: (
                d.update(vehicle_capacity=150)
                or d["depots"][1].update(capacity=110)
                or d["customers"][1].update(demand=120.5)
            ),
            "customers[1].demand: 120.5 exceeds every depot's capacity (the largest: "
            "depots[1].capacity 110)",
        ),
        # rules on the whole instance: the env's message, without a batch index
        (
            lambda d: d["depots"][0].update(capacity=40) or d["depots"][1].update(capacity=20),
            "total demand 65 exceeds total depot_capacity 60",
        ),
    ],
)
def test_malformed_fields_are_named_with_file_and_value(tmp_path, change, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(change)))
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    # the file's terms: no batch index of the env, no second name after the file's
    assert not re.search(r"\w\[0, \d", str(info.value)) and "instance 0" not in str(info.value)
    assert "tiny" not in str(info.value)


def test_a_rule_on_the_whole_instance_is_the_envs_message_alone():
    data = _broken(
        lambda d: d["depots"][0].update(capacity=40) or d["depots"][1].update(capacity=20)
    )
    for name in ("", "tiny", "CLRPInstance"):
        data["name"] = name
        with pytest.raises(ValueError) as info:
            instance_from_dict(data)
        assert str(info.value) == "total demand 65 exceeds total depot_capacity 60"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", "not valid JSON (Expecting property name enclosed in double quotes: "),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
        (b'{"name": ' + b"9" * 5000 + b"}", "not valid JSON (Exceeds the limit (4300 digits)"),
        (b'{"name": "\xff"}', "not a text file (invalid start byte at byte 10)"),
        (b"[1, 2]", "instance: must be a JSON object, got list"),
    ],
)
def test_a_file_that_is_not_an_instance_object_is_named(tmp_path, content, message):
    path = tmp_path / "garbage.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    assert str(info.value).startswith(f"{path}: {message}")
    assert "\n" not in str(info.value)


def test_an_unreadable_file_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "missing.json"))):
        read_json_instance(tmp_path / "missing.json")
