"""Schneider & Löffler's large CLRP set as published (clrp_rl4co.data.schneider): the layout of
its JSON files, its cost convention (ceil(100 d) per arc, opening and vehicle costs as given),
the files themselves, and one clear error per malformed field."""

from __future__ import annotations

import csv
import json
import math
import re

import numpy as np
import pytest
import torch

from clrp_rl4co import CLRPEnv
from clrp_rl4co.data import CLRPSolution, Route, instances_to_tensordict
from clrp_rl4co.data.files import find_instance_files, read_instance
from clrp_rl4co.data.instance import CAPACITY_TOLERANCE
from clrp_rl4co.data.schneider import instance_from_schneider, is_schneider_layout, read_schneider


def tiny() -> dict:
    """2 depots and 3 customers in the set's layout, listed out of ``index`` order."""
    return {
        "customers": [
            {"demand": 15, "index": 4, "x": 10, "y": 1},
            {"demand": 10, "index": 2, "x": 3, "y": 4},
            {"demand": 20, "index": 3, "x": 1, "y": 1},
        ],
        "depots": [
            {"capacity": 30, "costs": 700, "index": 1, "x": 10, "y": 0},
            {"capacity": 50, "costs": 500, "index": 0, "x": 0, "y": 0},
        ],
        "name": "tiny",
        "type": "schneider",
        "vehicle_capacity": 40,
        "vehicle_costs": 1000,
    }


def write(tmp_path, data, name="tiny.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=4))
    return path


def test_nodes_are_ordered_by_index_depots_first(tmp_path):
    inst = read_schneider(write(tmp_path, tiny()))
    assert inst.name == "tiny" and inst.rounded_costs
    assert (inst.num_depots, inst.num_customers) == (2, 3)
    # depots: index 0 then 1; customers: index 2, 3, 4
    np.testing.assert_array_equal(inst.depot_locs, [[0, 0], [10, 0]])
    np.testing.assert_array_equal(inst.depot_capacity, [50, 30])
    np.testing.assert_array_equal(inst.opening_cost, [500, 700])
    np.testing.assert_array_equal(inst.customer_locs, [[3, 4], [1, 1], [10, 1]])
    np.testing.assert_array_equal(inst.demand, [10, 20, 15])
    assert (inst.vehicle_capacity, inst.vehicle_fixed_cost) == (40, 1000)


def test_a_hand_computed_solution_costs_what_the_definition_says(tmp_path):
    # Open both depots; depot index 0 (0,0) serves (3,4) then (1,1); depot index 1 (10,0)
    # serves (10,1). Arcs, ceil(100 x Euclidean distance):
    #   (0,0)->(3,4): 5 -> 500;  (3,4)->(1,1): sqrt(13) = 3.6056 -> 361;
    #   (1,1)->(0,0): sqrt(2) = 1.4142 -> 142 (rounded to nearest it would be 141);
    #   (10,0)->(10,1) and back: 100 + 100.
    # routing 1203, opening 500 + 700, vehicles 2 x 1000: total 4403.
    path = write(tmp_path, tiny())
    for inst in (read_schneider(path), read_instance(path)):
        solution = CLRPSolution([Route(0, (0, 1)), Route(1, (2,))])
        solution.check(inst)
        cost = solution.cost(inst)
        assert (cost.opening, cost.vehicles, cost.routing, cost.total) == (1200, 2000, 1203, 4403)
        # the env, stepping the same routes, agrees
        td = instances_to_tensordict([inst])
        env = CLRPEnv()
        final = env.rollout_actions(td, torch.tensor([solution.to_actions(inst.num_depots)]))
        assert env.cost_parts(final)["total"].item() == 4403


def test_a_file_may_omit_name_and_type(tmp_path):
    data = tiny()
    del data["name"], data["type"]
    path = write(tmp_path, data, "no-name.json")
    assert read_schneider(path).name == "no-name"
    assert read_instance(path).num_customers == 3  # still dispatched by its entries' index


def test_the_layout_predicate():
    assert is_schneider_layout(tiny())
    project = {"vehicle_fixed_cost": 1, "rounding": "none", "depots": [], "customers": []}
    assert not is_schneider_layout(project)
    assert not is_schneider_layout({**project, "type": "schneider"})  # the project's keys win
    assert not is_schneider_layout([tiny()]) and not is_schneider_layout(None)
    bare = {k: v for k, v in tiny().items() if k not in ("vehicle_costs", "type")}
    assert is_schneider_layout(bare)  # entries with an index
    assert not is_schneider_layout({"depots": [{"x": 0}], "customers": []})


def _benchmark_folder(benchmarks_root):
    folder = benchmarks_root / "schneider"
    if not folder.is_dir():
        pytest.skip(f"no schneider/ folder in {benchmarks_root}")
    return folder


def test_100_5_2c_reads_as_its_json_says(benchmarks_root):
    path = _benchmark_folder(benchmarks_root) / "100-5-2c.json"
    raw = json.loads(path.read_text())
    inst = read_instance(path)
    assert (inst.num_customers, inst.num_depots) == (100, 5)
    depots = sorted(raw["depots"], key=lambda d: d["index"])
    customers = sorted(raw["customers"], key=lambda c: c["index"])
    np.testing.assert_array_equal(inst.depot_capacity, [d["capacity"] for d in depots])
    np.testing.assert_array_equal(inst.opening_cost, [d["costs"] for d in depots])
    np.testing.assert_array_equal(inst.demand, [c["demand"] for c in customers])
    np.testing.assert_array_equal(inst.customer_locs, [[c["x"], c["y"]] for c in customers])
    assert (inst.vehicle_capacity, inst.vehicle_fixed_cost) == (70, 1000)
    # an arc from the set's definition: ceil(100 x Euclidean distance)
    d, c = depots[3], customers[57]
    expected = math.ceil(100 * math.hypot(d["x"] - c["x"], d["y"] - c["y"]) - 1e-9)
    assert inst.cost_matrix()[3, 5 + 57] == expected


def test_every_file_reads_and_has_a_best_known_value(benchmarks_root):
    folder = _benchmark_folder(benchmarks_root)
    with open(benchmarks_root / "bks" / "schneider_dev_bks.csv", newline="") as f:
        bks = {row["file"]: float(row["bks"]) for row in csv.DictReader(f)}
    files, errors = find_instance_files([str(folder)])  # readme.txt is not an instance
    assert errors == [] and len(files) == 44 == len(bks)
    for path in files:
        customers, depots = map(int, re.match(r"(\d+)-(\d+)-", path.name).groups())
        inst = read_instance(path)
        assert (inst.num_customers, inst.num_depots) == (customers, depots), path.name
        assert inst.rounded_costs and path.name in bks
        assert inst.total_demand() <= inst.depot_capacity.sum()


def test_pyvrp_solves_a_100_customer_file_near_its_best_known_value(benchmarks_root):
    import clrp_rl4co

    path = _benchmark_folder(benchmarks_root) / "100-5-2e.json"
    result = clrp_rl4co.solve(path, method="pyvrp", seconds=2)
    inst = read_instance(path)
    result.solution.check(inst)
    assert result.objective == result.solution.cost(inst).total
    # a best-known value is the best found by others, an upper bound on the optimum: a
    # feasible solution is within a few percent of it (far off: wrong units or convention)
    gap = 100 * (result.objective - 253888) / 253888
    assert -1 < gap < 15, gap


def _broken(change) -> dict:
    data = tiny()
    change(data)
    return data


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("vehicle_costs"), "instance: missing field(s) ['vehicle_costs']"),
        (lambda d: d.pop("customers"), "instance: missing field(s) ['customers']"),
        (lambda d: d.update(extra=1), "instance: unknown field(s) ['extra']"),
        (lambda d: d.update(name=7), "name: must be a string, got 7"),
        (lambda d: d.update(vehicle_capacity=0), "vehicle_capacity: must be positive, got 0"),
        (lambda d: d.update(vehicle_capacity="70"), "vehicle_capacity: must be a number, got '70'"),
        (lambda d: d.update(vehicle_costs=-1), "vehicle_costs: must be non-negative, got -1"),
        (lambda d: d.update(depots=[]), "depots: must be a non-empty list, got []"),
        (lambda d: d.update(customers=[]), "customers: must be a non-empty list, got []"),
        (lambda d: d["depots"].append(3), "depots[2]: must be an object, got 3"),
        (
            lambda d: d["depots"][1].pop("capacity"),
            "depots[1]: missing field(s) ['capacity'] (expected ['capacity', 'costs', 'index', "
            "'x', 'y']) (depot 2, counting from 1, index 0)",
        ),
        (
            lambda d: d["customers"][0].update(z=1),
            "customers[0]: unknown field(s) ['z']",
        ),
        (
            lambda d: d["depots"][0].update(capacity=0),
            "depots[0].capacity: must be positive, got 0 (depot 1, counting from 1, index 1)",
        ),
        (
            lambda d: d["depots"][1].update(capacity=-5),
            "depots[1].capacity: must be positive, got -5",
        ),
        (
            lambda d: d["depots"][1].update(capacity=None),
            "depots[1].capacity: must be a number, got None",
        ),
        (
            lambda d: d["depots"][0].update(costs=-1),
            "depots[0].costs: must be non-negative, got -1",
        ),
        (
            lambda d: d["customers"][2].update(demand=0),
            "customers[2].demand: must be positive, got 0 (customer 3, counting from 1, index 3)",
        ),
        (
            lambda d: d["customers"][1].update(demand=-3),
            "customers[1].demand: must be positive, got -3",
        ),
        (
            lambda d: d["customers"][1].update(demand="a"),
            "customers[1].demand: must be a number, got 'a'",
        ),
        (
            lambda d: d["customers"][0].update(demand=True),
            "customers[0].demand: must be a number, got True",
        ),
        (
            lambda d: d["customers"][0].update(x=float("nan")),
            "customers[0].x: must be finite, got nan",
        ),
        (lambda d: d["depots"][1].update(y=float("inf")), "depots[1].y: must be finite, got inf"),
        (
            lambda d: d["customers"][0].update(index=1.5),
            "customers[0].index: must be a non-negative integer, got 1.5",
        ),
        (
            lambda d: d["customers"][0].update(index=-1),
            "customers[0].index: must be a non-negative integer, got -1",
        ),
        (
            lambda d: d["customers"][0].update(index="4"),
            "customers[0].index: must be a number, got '4'",
        ),
        (
            lambda d: d["customers"][2].update(index=0),
            "customers[2].index: 0 is also the index of depots[1]",
        ),
        (
            lambda d: d["customers"][1].update(index=4),
            "customers[1].index: 4 is also the index of customers[0]",
        ),
        (
            lambda d: d["customers"][0].update(demand=41),
            "customers[0].demand: 41 exceeds vehicle_capacity 40 (customer 1, counting from 1, "
            "index 4)",
        ),
        (
            lambda d: d["depots"][1].update(capacity=25) or d["customers"][2].update(demand=35),
            "customers[2].demand: 35 exceeds every depot's capacity (the largest: "
            "depots[0].capacity 30, index 1)",
        ),
        (
            lambda d: d["depots"][1].update(capacity=20) or d["depots"][0].update(capacity=20),
            "total demand 45 exceeds the total depot capacity 40",
        ),
    ],
)
def test_malformed_fields_are_named_with_file_and_value(tmp_path, change, message):
    path = write(tmp_path, _broken(change), "bad.json")
    for reader in (read_schneider, read_instance):
        with pytest.raises(ValueError) as info:
            reader(path)
        text = str(info.value)
        start = re.match(rf"{re.escape(str(path))}:(\d+): ", text)
        assert start is not None, text
        assert message in text, text
        assert "\n" not in text and not re.search(r"\w\[0, \d", text)
        field = message.split(":")[0]  # customers[2].demand: the line holds that field
        if "." in field:
            line = path.read_text().splitlines()[int(start.group(1)) - 1]
            assert f'"{field.rsplit(".", 1)[1]}"' in line, (line, text)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{not json", "1: not valid JSON (Expecting property name enclosed in double quotes"),
        (b'{"name":\n "\xff"}', "2: not a text file (invalid start byte 0xff at column 3)"),
        (b"[1, 2]", "1: instance: must be a JSON object, got list"),
    ],
)
def test_a_file_that_is_not_an_object_of_the_set_is_named(tmp_path, content, message):
    path = tmp_path / "garbage.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        read_schneider(path)
    assert str(info.value).startswith(f"{path}:{message}")


# ---------------------------------------------------------------- messages in full, edge values
def _message(data, name: str = "") -> str:
    with pytest.raises(ValueError) as info:
        instance_from_schneider(data, name=name)
    return str(info.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(extra=1), "instance: unknown field(s) ['extra'] (expected "
         "['customers', 'depots', 'name', 'type', 'vehicle_capacity', 'vehicle_costs'])"),
        (lambda d: d.update(vehicle_costs="5"), "vehicle_costs: must be a number, got '5'"),
        # no index known: the entry's number alone
        (lambda d: d["depots"].append(3), "depots[2]: must be an object, got 3 (depot 3, "
         "counting from 1)"),
        (lambda d: d["customers"][1].pop("index"), "customers[1]: missing field(s) ['index'] "
         "(expected ['demand', 'index', 'x', 'y']) (customer 2, counting from 1)"),
        (lambda d: d["customers"][0].update(index=1.5), "customers[0].index: must be a "
         "non-negative integer, got 1.5 (customer 1, counting from 1)"),
        # a value that is not integral is shown as it is
        (lambda d: d["customers"][0].update(demand=40.5), "customers[0].demand: 40.5 exceeds "
         "vehicle_capacity 40 (customer 1, counting from 1, index 4)"),
        # the largest depot listed second
        (lambda d: d["depots"][1].update(capacity=34) or d["customers"][2].update(demand=35),
         "customers[2].demand: 35 exceeds every depot's capacity (the largest: depots[1].capacity "
         "34, index 0) (customer 3, counting from 1, index 3)"),
    ],
)  # fmt: skip
def test_whole_messages_of_malformed_fields(change, message):
    assert _message(_broken(change)) == message


def test_edge_values_that_are_allowed():
    # total demand 45 exactly the total depot capacity; a route fee of 0 (non-negative)
    data = _broken(
        lambda d: d["depots"][0].update(capacity=20) or d["depots"][1].update(capacity=25)
    )
    data["vehicle_costs"] = 0
    inst = instance_from_schneider(data)
    assert inst.depot_capacity.sum() == inst.demand.sum() == 45 and inst.vehicle_fixed_cost == 0
    data["vehicle_costs"] = 0.5
    assert instance_from_schneider(data).vehicle_fixed_cost == 0.5
    # small positive capacities and demands (units are the file's)
    small = {
        "customers": [{"demand": 1, "index": 1, "x": 0, "y": 1},
                      {"demand": 0.5, "index": 2, "x": 1, "y": 1}],
        "depots": [{"capacity": 1.5, "costs": 0, "index": 0, "x": 0, "y": 0}],
        "vehicle_capacity": 1,
        "vehicle_costs": 3,
    }  # fmt: skip
    inst = instance_from_schneider(small)
    assert inst.vehicle_capacity == 1 and list(inst.demand) == [1, 0.5]
    # capacities are compared with the env's tolerance: a total demand of the total capacity
    # plus CAPACITY_TOLERANCE still fits
    edge = {**small, "customers": [{"demand": 1 + CAPACITY_TOLERANCE, "index": 1, "x": 0, "y": 1}]}
    edge["depots"] = [{"capacity": 1, "costs": 0, "index": 0, "x": 0, "y": 0}]
    assert instance_from_schneider(edge).demand[0] == 1 + CAPACITY_TOLERANCE
    small["depots"][0]["capacity"] = 1
    small["customers"][1]["demand"] = 0.001  # over 1 by more than the tolerance
    assert _message(small) == (
        "customers[*].demand: total demand 1.001 exceeds the total depot capacity 1 (the sum "
        "of depots[*].capacity)"
    )


def test_the_name_is_the_file_field_else_the_given_name_else_empty(tmp_path):
    assert instance_from_schneider(tiny(), name="other").name == "tiny"
    data = tiny()
    del data["name"]
    assert instance_from_schneider(data, name="other").name == "other"
    assert instance_from_schneider(data).name == ""
    path = write(tmp_path, tiny(), "100-5-2c.json")  # the field, not the file's stem
    assert read_schneider(path).name == "tiny"


def test_a_rule_of_the_env_on_the_whole_instance_is_its_message_alone(tmp_path):
    """Customers of demand 30 (two, 60 in all) fit only the depot of 50: the env's rule on the
    whole instance, without the env's name or batch prefix."""
    data = {
        "customers": [{"demand": 30, "index": 2, "x": 1, "y": 1},
                      {"demand": 30, "index": 3, "x": 2, "y": 1}],
        "depots": [{"capacity": 10, "costs": 1, "index": 0, "x": 0, "y": 0},
                   {"capacity": 50, "costs": 1, "index": 1, "x": 5, "y": 0}],
        "vehicle_capacity": 40,
        "vehicle_costs": 1,
    }  # fmt: skip
    expected = (
        "customers with demand >= 30 need 60 but the depots that can hold them "
        "(depot_capacity >= 30) have only 50"
    )
    assert _message(data) == expected  # no name: CLRPInstance's prefix is removed
    assert _message(data, name="given") == expected
    assert _message({**data, "name": "named"}) == expected
    path = write(tmp_path, {**data, "name": "named"}, "whole.json")
    with pytest.raises(ValueError) as info:
        read_schneider(path)
    assert str(info.value) == f"{path}:1: {expected}"


def test_the_layout_predicate_looks_at_the_first_entry_of_either_list():
    for key in ("depots", "customers"):
        other = "customers" if key == "depots" else "depots"
        for field in ("index", "costs"):
            data = {key: [{field: 1, "x": 0}], other: [{"x": 0}]}
            assert is_schneider_layout(data), data
            assert is_schneider_layout({key: [{field: 1}]}), data
        assert not is_schneider_layout({key: [{"x": 0}, {"index": 1}], other: []})
        assert not is_schneider_layout({key: [], other: [{"y": 0}]})
        assert not is_schneider_layout({key: [3, {"index": 1}]})
        assert not is_schneider_layout({key: {"index": 1}})
