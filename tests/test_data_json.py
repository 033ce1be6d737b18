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
            "customers[1].demand: 120.5 exceeds every depot's capacity, the largest being "
            "depots[1].capacity 110",
        ),
        # rules on the whole instance: the env's message, without a batch index
        (
            lambda d: d["depots"][0].update(capacity=40) or d["depots"][1].update(capacity=20),
            "total demand 65 exceeds total depot_capacity 60",
        ),
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_malformed_fields_are_named_with_file_and_value(tmp_path, change, message, indent):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(change), indent=indent))
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    # "path:LINE: " with a 1-based line; a rule on the whole instance names the lists' lines
    whole = message.startswith("total demand")
    assert re.match(re.escape(str(path)) + (": " if whole else r":[1-9]\d*: "), str(info.value))
    if indent is None:  # the whole file on one line
        assert str(info.value).startswith(f"{path}: " if whole else f"{path}:1: ")
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
    [  # every position 1-based: the line after the path, the column in the line
        (
            b"{not json",
            "1: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        ),
        (b'{\n  "a": 1,\n  "b" 2\n}', "3: not valid JSON (Expecting ':' delimiter at column 7)"),
        (
            b"[" * 100_000 + b"]" * 100_000,
            "1: not valid JSON (nested too deeply: 100000 levels of brackets)",
        ),
        (  # the line where the nesting is deepest
            b"[\n" + b"[" * 50_000 + b"\n" + b"[" * 50_000 + b"]" * 100_001,
            "3: not valid JSON (nested too deeply: 100001 levels of brackets)",
        ),
        (b'{"name": ' + b"9" * 5000 + b"}", "1: not valid JSON (Exceeds the limit (4300 digits)"),
        (  # the integer's line, not that of a string of digits before it
            b'{\n  "name": "' + b"9" * 5000 + b'",\n  "x": [\n    ' + b"9" * 5000 + b"]}",
            "4: not valid JSON (Exceeds the limit (4300 digits)",
        ),
        (b'{"name": "\xff"}', "1: not a text file (invalid start byte 0xff at column 11)"),
        (  # the column in characters: "\xc3\xa9" is one
            b'{\n  "name": "\xc3\xa9\xff"}',
            "2: not a text file (invalid start byte 0xff at column 13)",
        ),
        (b"[1, 2]", "1: instance: must be a JSON object, got list"),
        (b"\n\n  [1, 2]", "3: instance: must be a JSON object, got list"),
    ],
)
def test_a_file_that_is_not_an_instance_object_is_named(tmp_path, content, message):
    path = tmp_path / "garbage.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    assert str(info.value).startswith(f"{path}:{message}")
    assert "\n" not in str(info.value)


#: The file json.dumps(example(), indent=2) writes, line by line (TEXT_LINES[k - 1] is line k).
TEXT_LINES = [
    "{", '  "name": "tiny",', '  "vehicle_capacity": 70,', '  "vehicle_fixed_cost": 1000,',
    '  "rounding": "ceil100",', '  "depots": [',
    "    {", '      "x": 0,', '      "y": 0,', '      "capacity": 100,',  # depots[0]: 7-12
    '      "opening_cost": 50', "    },",
    "    {", '      "x": 10,', '      "y": 0,', '      "capacity": 80,',  # depots[1]: 13-18
    '      "opening_cost": 40.5', "    }",
    "  ],", '  "customers": [',
    "    {", '      "x": 1,', '      "y": 1,', '      "demand": 20', "    },",  # 21-25
    "    {", '      "x": 9,', '      "y": 1,', '      "demand": 30', "    },",  # 26-30
    "    {", '      "x": 5,', '      "y": 5,', '      "demand": 15', "    }",  # 31-35
    "  ]", "}",
]  # fmt: skip


def test_the_example_file_layout_is_json_dumps_indent_2():
    assert json.dumps(example(), indent=2).split("\n") == TEXT_LINES


@pytest.mark.parametrize(
    "change, message",
    [  # "LINE: field: problem (entry numbers counting from 1; other values' lines)"
        (
            lambda d: d["customers"][2].update(demand=-5),
            "34: customers[2].demand: must be positive, got -5 (customer 3, counting from 1)",
        ),
        (  # a missing field: the line where its entry starts
            lambda d: d["customers"][1].pop("demand"),
            "26: customers[1]: missing field 'demand' (customer 2, counting from 1)",
        ),
        (
            lambda d: d["depots"][0].update(x="a"),
            "8: depots[0].x: must be a number, got 'a' (depot 1, counting from 1)",
        ),
        (
            lambda d: d["depots"][1].update(opening_cost=-2),
            "17: depots[1].opening_cost: must be non-negative, got -2 (depot 2, counting from 1)",
        ),
        (  # an unknown field: its own line
            lambda d: d["customers"][0].update(z=1),
            "25: customers[0]: unknown field(s) ['z'] (expected ['x', 'y', 'demand']) "
            "(customer 1, counting from 1)",
        ),
        (lambda d: d.update(extra=1), "37: instance: unknown field(s) ['extra'] (expected "),
        (
            lambda d: d["customers"].append(5),
            "36: customers[3]: must be an object, got 5 (customer 4, counting from 1)",
        ),
        (lambda d: d.update(depots=[]), "6: depots: must be a non-empty list, got []"),
        (lambda d: d.update(vehicle_capacity=0), "3: vehicle_capacity: must be positive, got 0"),
        (lambda d: d.update(rounding="floor"), "5: rounding: must be one of ['ceil100', 'none']"),
        (lambda d: d.update(name=7), "2: name: must be a string, got 7"),
        (  # a missing top-level field: the line where the object starts
            lambda d: d.pop("vehicle_fixed_cost"),
            "1: instance: missing field 'vehicle_fixed_cost'",
        ),
        (  # a demand above a limit: the limit's line too
            lambda d: d["customers"][0].update(demand=75),
            "24: customers[0].demand: 75 exceeds vehicle_capacity 70 (customer 1, counting from "
            "1; vehicle_capacity on line 3)",
        ),
        (
            lambda d: (
                d.update(vehicle_capacity=150)
                or d["depots"][1].update(capacity=110)
                or d["customers"][1].update(demand=120.5)
            ),
            "29: customers[1].demand: 120.5 exceeds every depot's capacity, the largest being "
            "depots[1].capacity 110 (customer 2 and depot 2, counting from 1; depots[1].capacity "
            "on line 16)",
        ),
        (  # a rule on the whole instance: the lines of the lists it reads, after "path: "
            lambda d: d["depots"][0].update(capacity=40) or d["depots"][1].update(capacity=20),
            " total demand 65 exceeds total depot_capacity 60 (customers on lines 20-36, depots "
            "on lines 6-19)",
        ),
    ],
)
def test_errors_name_the_1_based_line_and_entry_number(tmp_path, change, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(change), indent=2))
    with pytest.raises(ValueError) as info:
        read_json_instance(path)
    assert str(info.value).startswith(f"{path}:{message}")
    assert "\n" not in str(info.value)


def test_without_a_file_the_message_has_the_entry_number_and_no_line():
    data = _broken(lambda d: d["customers"][2].update(demand=-5))
    with pytest.raises(ValueError) as info:
        instance_from_dict(data)
    assert str(info.value) == (
        "customers[2].demand: must be positive, got -5 (customer 3, counting from 1)"
    )
    data = _broken(lambda d: d["customers"][0].update(demand=75))
    with pytest.raises(ValueError) as info:
        instance_from_dict(data)
    assert str(info.value) == (
        "customers[0].demand: 75 exceeds vehicle_capacity 70 (customer 1, counting from 1)"
    )


def test_a_repeated_key_is_located_at_the_value_json_keeps(tmp_path):
    # json.loads keeps the last of repeated keys: the message points at that one
    path = tmp_path / "twice.json"
    lines = json.dumps(example(), indent=2).split("\n")
    lines.insert(2, '  "vehicle_capacity": 70,')  # line 3; the original moves to line 4
    lines[3] = '  "vehicle_capacity": -1,'
    path.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=re.escape(f"{path}:4: vehicle_capacity: must be pos")):
        read_json_instance(path)


def test_an_unreadable_file_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "missing.json"))):
        read_json_instance(tmp_path / "missing.json")
