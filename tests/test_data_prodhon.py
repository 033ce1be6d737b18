"""Prodhon instance files, solution files, the solution object and the BKS table."""

import json
import re

import numpy as np
import pytest
import torch

from clrp_rl4co import CLRPEnv, CLRPSolution
from clrp_rl4co.data import (
    CLRPInstance,
    Route,
    instances_to_tensordict,
    prins_bks,
    prins_files,
    read_prodhon,
    tensordict_to_instances,
    write_prodhon,
)


def test_published_solutions_evaluate_to_their_costs(benchmarks_root):
    inst = read_prodhon(benchmarks_root / "prins" / "coord20-5-1.dat")
    assert inst.rounded_costs and inst.num_customers == 20 and inst.num_depots == 5
    expected = {
        "coord20-5-1.sol": (54793, 25549, 5000, 24244),
        "coord20-5-1_0.5.sol": (75154, 43960, 5000, 26194),
    }
    env = CLRPEnv()
    for name, (total, opening, vehicles, routing) in expected.items():
        sol = CLRPSolution.read_sol(benchmarks_root / "prins" / "solutions" / name, 20)
        sol.check(inst)
        cost = sol.cost(inst)
        assert (cost.total, cost.opening, cost.vehicles, cost.routing) == (
            total,
            opening,
            vehicles,
            routing,
        )
        # the env, stepping the same routes, agrees exactly (float64, ceil(100 d))
        td = instances_to_tensordict([inst])
        actions = torch.tensor([sol.to_actions(inst.num_depots)])
        final = env.rollout_actions(td, actions)
        parts = env.cost_parts(final)
        assert parts["total"].item() == total
        assert parts["routing"].item() == routing
        env.check_solution_validity(final, actions)
    assert prins_bks()["coord20-5-1"].current == 54793


def test_all_prins_files_parse_and_match_the_bks_table(benchmarks_root):
    files = prins_files(benchmarks_root)
    bks = prins_bks()
    assert len(files) == 30 and len(bks) == 30
    for path in files:
        inst = read_prodhon(path)
        entry = bks[path.stem]
        assert (inst.num_customers, inst.num_depots) == (entry.num_customers, entry.num_depots)
        assert inst.vehicle_capacity == entry.vehicle_capacity
        assert inst.vehicle_fixed_cost == 1000 and inst.rounded_costs
        assert entry.current <= entry.drlhq
    # paper names (benchmarks README): the "a" variants of 20 customers carry no suffix in the
    # file name, "bis" is spelled "BIS"
    names = {stem: entry.instance for stem, entry in bks.items()}
    assert names["coord20-5-1"] == "20-5-1a" and names["coord20-5-1b"] == "20-5-1b"
    assert names["coord50-5-2BIS"] == "50-5-2bis" and names["coord50-5-2bBIS"] == "50-5-2bbis"
    assert names["coord200-10-3b"] == "200-10-3b"


def test_prins_files_reads_any_prodhon_layout_name_in_a_sensible_order(tmp_path):
    # Prins names first by (customers, depots, name) -- numerically, so 100 after 20 and 10
    # depots after 5 -- then any other coord*.dat by name; other files are not instances
    names = [
        "coordP111112.dat",
        "coord100-10-1.dat",
        "coord20-5-1b.dat",
        "coord100-5-2.dat",
        "coordA.dat",
        "coord20-5-1.dat",
        "coord200-10-3.dat",
    ]
    for name in names + ["notes.txt", "bks.dat"]:
        (tmp_path / name).write_text("")
    expected = [
        "coord20-5-1",
        "coord20-5-1b",
        "coord100-5-2",
        "coord100-10-1",
        "coord200-10-3",
        "coordA",
        "coordP111112",
    ]
    assert [p.stem for p in prins_files(tmp_path)] == expected
    # a benchmarks root with a prins/ folder reads that folder
    (tmp_path / "prins").mkdir()
    write_prodhon(_toy(), tmp_path / "prins" / "coordP111112.dat")
    [path] = prins_files(tmp_path)
    assert path == tmp_path / "prins" / "coordP111112.dat"
    assert read_prodhon(path).name == "coordP111112"
    with pytest.raises(FileNotFoundError, match="no coord"):
        prins_files(tmp_path / "prins" / "solutions_missing_folder")


def test_network_locs_are_scaled_costs_are_not(benchmarks_root):
    inst = read_prodhon(benchmarks_root / "prins" / "coord50-5-1.dat")
    td = instances_to_tensordict([inst])
    assert td["locs"].min() >= 0 and td["locs"].max() == 1
    assert torch.equal(td["cost_locs"][0], torch.from_numpy(inst.locs))
    # one uniform scale: distance ratios are kept
    locs = td["locs"][0].double()
    ratio = (locs[1] - locs[0]).norm() / (td["cost_locs"][0, 1] - td["cost_locs"][0, 0]).norm()
    ratio2 = (locs[7] - locs[3]).norm() / (td["cost_locs"][0, 7] - td["cost_locs"][0, 3]).norm()
    assert ratio.item() == pytest.approx(ratio2.item(), rel=1e-6)
    back = tensordict_to_instances(td)[0]
    np.testing.assert_array_equal(back.locs, inst.locs)


def _toy(rounded=False):
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[0.0, 3.0], [10.0, 4.0], [5.0, 5.5]]),
        depot_capacity=np.array([10.0, 20.0]),
        opening_cost=np.array([100.0, 50.5]),
        demand=np.array([4.0, 5.0, 6.0]),
        vehicle_capacity=12.0,
        vehicle_fixed_cost=10.0,
        rounded_costs=rounded,
        name="toy",
    )


def test_real_cost_flag_1_file_round_trip(tmp_path):
    inst = _toy(rounded=False)
    path = tmp_path / "toy.dat"
    write_prodhon(inst, path)
    assert path.read_text().strip().endswith("1")
    back = read_prodhon(path)
    assert not back.rounded_costs
    sol = CLRPSolution([Route(0, (0,)), Route(1, (1, 2))])
    sol.check(back)
    expected = 100 + 50.5 + 20 + 6 + 4 + np.hypot(5, 1.5) + np.hypot(5, 5.5)
    assert sol.cost(back).total == pytest.approx(expected, rel=1e-12)
    env = CLRPEnv()
    td = instances_to_tensordict([back])
    final = env.rollout_actions(td, torch.tensor([sol.to_actions(2)]))
    assert env.cost_parts(final)["total"].item() == pytest.approx(expected, rel=1e-12)
    rounded = _toy(rounded=True)
    write_prodhon(rounded, tmp_path / "toy0.dat")
    assert read_prodhon(tmp_path / "toy0.dat").rounded_costs
    # ceil(100 d) per arc: 300 + 300, then 400 + ceil(100*5.2202) + ceil(100*7.4330)
    assert sol.cost(rounded).routing == 600 + 400 + 523 + 744


#: The file write_prodhon writes for _toy(), line by line (1-based: TOY_LINES[k - 1] is line k).
TOY_LINES = [
    "3", "2", "",  # customers, depots
    "0\t0", "10\t0", "",  # depots 1-2 (lines 4-5)
    "0\t3", "10\t4", "5\t5.5", "",  # customers 1-3 (lines 7-9)
    "12", "",  # vehicle capacity (line 11)
    "10", "20", "",  # depot capacities (lines 13-14)
    "4", "5", "6", "",  # demands (lines 16-18)
    "100", "50.5", "",  # opening costs (lines 20-21)
    "10", "",  # route fixed cost (line 23)
    "1",  # cost-type flag (line 25)
]  # fmt: skip


def _toy_file(tmp_path, changes=(), newline="\n"):
    """The toy file with ``changes`` ({line number: new text}) applied."""
    lines = list(TOY_LINES)
    for lineno, text in dict(changes).items():
        lines[lineno - 1] = text
    path = tmp_path / "toy.dat"
    path.write_bytes((newline.join(lines) + newline).encode())
    return path


def test_the_toy_file_layout_is_the_writers(tmp_path):
    write_prodhon(_toy(), tmp_path / "written.dat")
    assert (tmp_path / "written.dat").read_text().split("\n")[:-1] == TOY_LINES
    back = read_prodhon(_toy_file(tmp_path))
    np.testing.assert_array_equal(back.customer_locs, _toy().customer_locs)


@pytest.mark.parametrize(
    "changes,message",
    [
        # a token that is not a number: the field with its 1-based depot / customer number
        ({5: "10\tx1"}, "5: depot 2 y must be a finite number, got 'x1'"),
        ({9: "5\tnan"}, "9: customer 3 y must be a finite number, got 'nan'"),
        ({7: "inf\t3"}, "7: customer 1 x must be a finite number, got 'inf'"),
        ({11: "1e400"}, "11: vehicle capacity must be a finite number, got '1e400'"),
        # what the env's float32 arrays cannot hold (above 3.4e38, or nonzero below 1.4e-45)
        (
            {11: "1e39"},
            "11: vehicle capacity must be 0 or of magnitude 1.4e-45 to 3.4e+38, got '1e39'",
        ),
        (
            {7: "-4e38\t3"},
            "7: customer 1 x must be 0 or of magnitude 1.4e-45 to 3.4e+38, got '-4e38'",
        ),
        (
            {17: "1e-50"},
            "17: customer 2 demand must be 0 or of magnitude 1.4e-45 to 3.4e+38, got '1e-50'",
        ),
        # counts
        ({1: "x"}, "1: number of customers must be a positive integer, got 'x'"),
        ({1: "2.5"}, "1: number of customers must be a positive integer, got '2.5'"),
        ({1: "inf"}, "1: number of customers must be a positive integer, got 'inf'"),
        ({2: "0"}, "2: number of depots must be a positive integer, got '0'"),
        ({2: "-2"}, "2: number of depots must be a positive integer, got '-2'"),
        # the sign of each value
        ({11: "0"}, "11: vehicle capacity must be positive, got '0'"),
        ({14: "-1"}, "14: depot 2 capacity must be non-negative, got '-1'"),
        ({16: "0"}, "16: customer 1 demand must be positive, got '0'"),
        ({18: "-6"}, "18: customer 3 demand must be positive, got '-6'"),
        ({21: "-0.5"}, "21: depot 2 opening cost must be non-negative, got '-0.5'"),
        ({23: "-10"}, "23: route fixed cost must be non-negative, got '-10'"),
        # the cost-type flag: the token 0 or 1, nothing else
        ({25: "2"}, "25: cost-type flag must be 0 or 1, got '2'"),
        ({25: "-1"}, "25: cost-type flag must be 0 or 1, got '-1'"),
        ({25: "0.5"}, "25: cost-type flag must be 0 or 1, got '0.5'"),
        ({25: "1.0"}, "25: cost-type flag must be 0 or 1, got '1.0'"),
        ({25: "true"}, "25: cost-type flag must be 0 or 1, got 'true'"),
        # a demand no route or no depot can hold: the customer's line and the limit's
        ({16: "80"}, "16: customer 1 demand 80 exceeds the vehicle capacity 12 (line 11)"),
        ({17: "12.5"}, "17: customer 2 demand 12.5 exceeds the vehicle capacity 12 (line 11)"),
        (  # in full: above the limit by more than the env's tolerance 1e-5
            {17: "12.00002"},
            "17: customer 2 demand 12.00002 exceeds the vehicle capacity 12 (line 11)",
        ),
        (
            {11: "100", 18: "30"},
            "18: customer 3 demand 30 exceeds every depot capacity (the largest: depot 2, 20, "
            "line 14)",
        ),
        # rules on the whole instance: the blocks they read
        (
            {16: "12", 17: "12", 18: "12"},
            " total demand 36 exceeds total depot_capacity 30 (demands on lines 16-18, depot "
            "capacities on lines 13-14)",
        ),
        (
            {16: "11", 17: "11"},
            " customers with demand >= 11 need 22 but the depots that can hold them "
            "(depot_capacity >= 11) have only 20 (demands on lines 16-18, depot capacities on "
            "lines 13-14)",
        ),
        # one token past the flag
        ({25: "1 7"}, "25: unexpected token '7' after the cost-type flag (1 extra tokens)"),
    ],
)
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_bad_values_name_the_file_line_field_and_token(tmp_path, changes, message, newline):
    path = _toy_file(tmp_path, changes, newline)
    # the message starts with the file, then (for one value) its 1-based line: "path:LINE: "
    with pytest.raises(ValueError) as info:
        read_prodhon(path)
    assert str(info.value) == f"{path}:{message}"


def test_a_rule_on_the_whole_file_names_the_lines_of_its_blocks(tmp_path):
    # the whole file on one line: each block is "on line 1"; with an empty name the message
    # carries no instance name after the file
    lines = list(TOY_LINES)
    lines[15:18] = ["12", "12", "12"]  # demands: 36 > 10 + 20
    path = tmp_path / "one-line.dat"
    path.write_text(" ".join(lines))
    message = "total demand 36 exceeds total depot_capacity 30 (demands on line 1, depot "
    for name in ("", None, "mine"):
        with pytest.raises(ValueError) as info:
            read_prodhon(path, name=name)
        assert str(info.value) == f"{path}: {message}capacities on line 1)"


def test_the_cost_type_flag_sets_the_arc_costs(tmp_path):
    # flag 0: ceil(100 d); flag 1: d. Depot 1 (0, 0) to customer 3 (5, 5.5): d = 7.4330...
    d = np.hypot(5, 5.5)
    real = read_prodhon(_toy_file(tmp_path, {25: "1"}))
    assert not real.rounded_costs and real.cost_matrix()[0, 4] == pytest.approx(d, rel=1e-15)
    rounded = read_prodhon(_toy_file(tmp_path, {25: "0"}))
    assert rounded.rounded_costs and rounded.cost_matrix()[0, 4] == 744


def test_an_unreadable_file_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "missing.dat"))):
        read_prodhon(tmp_path / "missing.dat")
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        read_prodhon(tmp_path)


#: Fields of _toy() (3 customers, 2 depots) in file order, one per token.
TOY_FIELDS = (
    ["number of customers", "number of depots"]
    + [f"depot {i} {ax}" for i in (1, 2) for ax in "xy"]
    + [f"customer {j} {ax}" for j in (1, 2, 3) for ax in "xy"]
    + ["vehicle capacity", "depot 1 capacity", "depot 2 capacity"]
    + [f"customer {j} demand" for j in (1, 2, 3)]
    + ["depot 1 opening cost", "depot 2 opening cost", "route fixed cost", "cost-type flag"]
)


def test_truncated_file_names_each_missing_field_and_the_last_value(tmp_path):
    # all on line 1: the message names the field that is missing and the value before it
    path = tmp_path / "toy.dat"
    write_prodhon(_toy(), path)
    tokens = path.read_text().split()
    assert len(tokens) == len(TOY_FIELDS) == 22
    for k, field in enumerate(TOY_FIELDS):
        path.write_text(" ".join(tokens[:k]))
        if k == 0:
            message = f"{path}:1: file ends before {field} (no values in it)"
        else:
            message = (
                f"{path}:1: file ends before {field} (the data ends on line 1 with "
                f"{tokens[k - 1]!r}; truncated file?)"
            )
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            read_prodhon(path)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_truncated_file_names_the_line_where_its_data_ends(tmp_path, newline):
    # the file cut after each of its lines (blank lines then follow the cut, as in a file
    # whose end was lost): the message names the last line that has data, 1-based
    path = tmp_path / "toy.dat"
    for cut in range(1, len(TOY_LINES)):
        kept = TOY_LINES[:cut] + [""] * 3
        path.write_bytes(newline.join(kept).encode())
        last = max(k for k in range(1, cut + 1) if TOY_LINES[k - 1])
        with pytest.raises(ValueError) as info:
            read_prodhon(path)
        value = TOY_LINES[last - 1].split()[-1]
        assert str(info.value).startswith(f"{path}:{last}: file ends before ")
        assert str(info.value).endswith(
            f" (the data ends on line {last} with {value!r}; truncated file?)"
        )
    # cut inside a line: depot 2 has its x (line 5) but not its y
    path.write_bytes(newline.join(TOY_LINES[:4] + ["10"]).encode())
    message = (
        f"{path}:5: file ends before depot 2 y (the data ends on line 5 with '10'; truncated file?)"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        read_prodhon(path)
    # the route fixed cost (line 23) is the last value: the flag (line 25) is missing
    path.write_bytes(newline.join(TOY_LINES[:24]).encode())
    message = (
        f"{path}:23: file ends before cost-type flag (the data ends on line 23 with '10'; "
        "truncated file?)"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        read_prodhon(path)
    # blank lines only: line 1
    path.write_bytes(newline.join(["", " ", "\t", ""]).encode())
    message = f"{path}:1: file ends before number of customers (no values in it)"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        read_prodhon(path)


def test_a_byte_that_is_not_utf8_is_a_bad_token(tmp_path):
    path = _toy_file(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"10\t0", b"10\t\xff"))
    with pytest.raises(ValueError, match=re.escape(f"{path}:5: depot 2 y must be a finite number")):
        read_prodhon(path)


def test_one_depot_one_customer_file_and_names(tmp_path):
    inst = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0]]),
        customer_locs=np.array([[3.0, 4.0]]),
        depot_capacity=np.array([10.0]),
        opening_cost=np.array([2.5]),
        demand=np.array([4.0]),
        vehicle_capacity=5.0,
        vehicle_fixed_cost=1.0,
        rounded_costs=True,
    )
    path = tmp_path / "coord1-1-1.dat"
    write_prodhon(inst, path)
    # integers are written without a decimal point, other values with repr precision
    assert path.read_text().split() == [
        "1", "1", "0", "0", "3", "4", "5", "10", "4", "2.5", "1", "0"
    ]  # fmt: skip
    back = read_prodhon(path)
    assert (back.num_customers, back.num_depots, back.name) == (1, 1, "coord1-1-1")
    assert read_prodhon(path, name="mine").name == "mine"
    np.testing.assert_array_equal(back.locs, inst.locs)
    path.write_text(path.read_text().replace("1\n1\n", "1\n0\n", 1))
    with pytest.raises(ValueError, match="2: number of depots must be a positive integer, got '0'"):
        read_prodhon(path)


def test_benchmarks_dir_and_the_default_prins_folder(tmp_path, monkeypatch):
    from clrp_rl4co.data.prodhon import BENCHMARKS_ENV_VAR, benchmarks_dir

    assert BENCHMARKS_ENV_VAR == "CLRP_BENCHMARKS_DIR"
    monkeypatch.delenv("CLRP_BENCHMARKS_DIR", raising=False)
    assert benchmarks_dir(required=False) is None
    message = "set CLRP_BENCHMARKS_DIR to the folder that holds prins/ (see README.md)"
    with pytest.raises(FileNotFoundError, match="^" + re.escape(message) + "$"):
        benchmarks_dir()
    with pytest.raises(FileNotFoundError, match=re.escape(message)):
        prins_files()
    monkeypatch.setenv("CLRP_BENCHMARKS_DIR", str(tmp_path))
    message = f"CLRP_BENCHMARKS_DIR={tmp_path}: no prins/ folder there"
    with pytest.raises(FileNotFoundError, match="^" + re.escape(message) + "$"):
        benchmarks_dir(required=False)
    (tmp_path / "prins").mkdir()
    write_prodhon(_toy(), tmp_path / "prins" / "coord3-2-1.dat")
    assert benchmarks_dir() == tmp_path
    assert prins_files() == [tmp_path / "prins" / "coord3-2-1.dat"]


def test_solution_json_and_sol_round_trip(tmp_path):
    inst = _toy()
    sol = CLRPSolution([Route(1, (2, 1)), Route(0, (0,))])
    sol.to_json(tmp_path / "s.json", inst)
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["cost"]["total"] == pytest.approx(sol.cost(inst).total)
    assert CLRPSolution.from_json(tmp_path / "s.json") == sol
    sol.write_sol(tmp_path / "s.sol", inst.num_customers)
    assert CLRPSolution.read_sol(tmp_path / "s.sol", inst.num_customers) == sol
    assert sol.open_depots == (0, 1)


def test_solution_actions_round_trip_with_padding():
    sol = CLRPSolution([Route(1, (2, 1)), Route(0, (0,))])
    actions = sol.to_actions(2)
    assert actions == [1, 4, 3, 1, 0, 2, 0]
    assert CLRPSolution.from_actions(actions + [0, 0, 0], 2) == sol
    assert CLRPSolution.from_actions(actions + [0], 2) == sol
    with pytest.raises(ValueError, match="must return to depot 1"):
        CLRPSolution.from_actions([1, 4, 0], 2)
    with pytest.raises(ValueError, match="outside a route"):
        CLRPSolution.from_actions([0, 2, 0, 4, 1], 2)
    # a multistart start action is dropped when it names the first customer served
    assert CLRPSolution.from_actions([4, 1, 4, 3, 1, 0, 2, 0], 2) == sol
    with pytest.raises(ValueError, match="start action 3 is not the first customer"):
        CLRPSolution.from_actions([3, 1, 4, 3, 1, 0, 2, 0], 2)
    with pytest.raises(ValueError, match="empty route"):
        CLRPSolution.from_actions([1, 1, 0, 2, 0], 2)
    with pytest.raises(ValueError, match="not closed"):
        CLRPSolution.from_actions([1, 4, 3], 2)


def test_solution_check_names_the_violation():
    inst = _toy()
    with pytest.raises(ValueError, match="customer 2 is not served"):
        CLRPSolution([Route(0, (0,)), Route(1, (1,))]).check(inst)
    with pytest.raises(ValueError, match="carries 15"):
        CLRPSolution([Route(1, (0, 1, 2))]).check(inst)
    with pytest.raises(ValueError, match="depot 0 serves 15"):
        CLRPSolution([Route(0, (0, 1)), Route(0, (2,))]).check(inst)
    with pytest.raises(ValueError, match="served 2 times"):
        CLRPSolution([Route(0, (0,)), Route(1, (1, 0)), Route(1, (2,))]).check(inst)
