"""The validity checks of ``envs/clrp/validity.py`` on hand-made inputs: each rule and message
(the field, index and value it names), the capacity tolerance at its boundary, the start action
and the padding convention. Written from the docstrings; found necessary by mutation testing
(``make mutation MODULE=clrp_rl4co/envs/clrp/validity.py``)."""

import re

import numpy as np
import pytest
import torch
from tensordict import TensorDict

from clrp_rl4co import CLRPEnv
from clrp_rl4co.envs.clrp import instance_tensordict
from clrp_rl4co.envs.clrp.validity import (
    CAPACITY_TOLERANCE,
    PADDING_ACTION,
    check_instance_validity,
    check_solution_validity,
    pad_actions,
    routes_from_actions,
    split_start_action,
)


def _td(batch=2, depots=2, customers=3, q=10.0):
    """Depots 0..D-1 holding 20 each, customers of demand 4, 5, 6, ... (q = 10)."""
    locs = torch.rand(batch, depots + customers, 2, generator=torch.Generator().manual_seed(0))
    demand = (4.0 + torch.arange(customers, dtype=torch.float32)).expand(batch, customers)
    return instance_tensordict(
        locs, torch.full((batch, depots), 20.0), torch.ones(batch, depots), demand, q, 1.0
    )


# ------------------------------------------------------------------ check_instance_validity
def test_cost_locs_may_be_missing_but_nothing_else():
    td = _td()
    check_instance_validity(td.exclude("cost_locs"))
    check_instance_validity(td.exclude("cost_locs", "rounded_costs"))
    assert CLRPEnv().reset(td.exclude("cost_locs"))["cost_locs"].dtype == torch.float64
    for key in ("demand", "vehicle_fixed_cost", "vehicle_capacity", "locs"):
        with pytest.raises(ValueError, match=f"^{key}: missing from the instance TensorDict$"):
            check_instance_validity(td.exclude("cost_locs", key))


def test_batch_and_sizes_are_checked_with_their_shapes():
    td = _td(batch=6)
    with pytest.raises(ValueError, match=r"^batch_size: CLRP instances need a 1-D batch, got "
                       r"\(2, 3\)$"):  # fmt: skip
        check_instance_validity(td.reshape(2, 3))
    no_depot = td.clone()
    no_depot["depot_capacity"] = torch.zeros(6, 0)
    no_depot["opening_cost"] = torch.zeros(6, 0)
    with pytest.raises(ValueError, match=r"^depot_capacity: need at least one depot, got shape "
                       r"\[6, 0\]$"):  # fmt: skip
        check_instance_validity(no_depot)
    wrong = TensorDict(
        {**td.to_dict(), "depot_capacity": td["depot_capacity"][:, None, :]}, batch_size=[6]
    )
    with pytest.raises(ValueError, match=r"^depot_capacity: expected shape \[B, 2\] for 2 "
                       r"depots and 3 customers, got \[6, 1, 2\]$"):  # fmt: skip
        check_instance_validity(wrong)
    wrong = td.clone()
    wrong["cost_locs"] = wrong["cost_locs"][:, :4]
    with pytest.raises(ValueError, match=r"^cost_locs: expected shape \[B, 5, 2\] for 2 depots "
                       r"and 3 customers, got \[6, 4, 2\]$"):  # fmt: skip
        check_instance_validity(wrong)
    wrong = TensorDict({**td.to_dict(), "demand": td["demand"][:, None, :]}, batch_size=[6])
    with pytest.raises(ValueError, match=r"^demand: expected shape \[B, 3\]"):
        check_instance_validity(wrong)
    # one depot or customer too few in depot_capacity or demand: the other arrays (locs,
    # cost_locs, opening_cost) still state 2 depots and 3 customers, so the error is on it
    wrong = td.clone()
    wrong["depot_capacity"] = wrong["depot_capacity"][:, :1]
    with pytest.raises(ValueError, match=r"^depot_capacity: expected shape \[B, 2\] for 2 "
                       r"depots and 3 customers, got \[6, 1\]$"):  # fmt: skip
        check_instance_validity(wrong)
    wrong = td.clone()
    wrong["demand"] = wrong["demand"][:, :2]
    with pytest.raises(ValueError, match=r"^demand: expected shape \[B, 3\] for 2 depots and "
                       r"3 customers, got \[6, 2\]$"):  # fmt: skip
        check_instance_validity(wrong)
    # without cost_locs it is demand against locs: locs' count first, the other one named too
    with pytest.raises(ValueError, match=r"^demand: expected shape \[B, 3\] for 2 depots and "
                       r"3 customers, got \[6, 2\]; or locs: expected shape \[B, 4, 2\] for 2 "
                       r"depots and 2 customers, got \[6, 5, 2\]$"):  # fmt: skip
        check_instance_validity(wrong.exclude("cost_locs"))
    wrong = td.clone()
    wrong["vehicle_capacity"] = torch.full((6, 2), 10.0)
    with pytest.raises(ValueError, match=r"^vehicle_capacity: expected one value per instance, "
                       r"got \[6, 2\]$"):  # fmt: skip
        check_instance_validity(wrong)


@pytest.mark.parametrize(
    "key,index,value,rule",
    [
        ("locs", (1, 3, 0), float("nan"), "finite"),
        ("cost_locs", (1, 2, 1), float("inf"), "finite"),
        ("depot_capacity", (1, 1), -1.0, "finite and non-negative"),
        ("opening_cost", (1, 0), -2.0, "finite and non-negative"),
        ("demand", (1, 2), float("inf"), "finite and non-negative"),
        ("demand", (1, 0), 0.0, "positive"),
        ("vehicle_capacity", (1, 0), 0.0, "positive"),
        ("vehicle_fixed_cost", (1, 0), -1.0, "finite and non-negative"),
        ("vehicle_capacity", (1, 0), -1.0, "finite and non-negative"),
        ("vehicle_capacity", (1, 0), float("nan"), "finite and non-negative"),
    ],
)
def test_each_number_rule_names_field_index_and_value(key, index, value, rule):
    td = _td()
    td[key] = td[key].clone()
    td[key][index] = value
    expected = f"{key}{list(index)} must be {rule}, got {value}"
    with pytest.raises(ValueError, match="^" + re.escape(expected) + "$"):
        check_instance_validity(td)
    with pytest.raises(ValueError, match="^b1: " + re.escape(expected) + "$"):
        check_instance_validity(td, names=["b0", "b1"])


def test_the_rules_after_a_missing_cost_locs_still_run():
    td = _td().exclude("cost_locs")
    td["demand"] = td["demand"].clone()
    td["demand"][1, 2] = 0.0
    with pytest.raises(ValueError, match=r"^demand\[1, 2\] must be positive, got 0.0$"):
        check_instance_validity(td)


def test_infeasible_demand_names_instance_and_limit():
    td = _td()
    td["demand"] = td["demand"].clone()
    td["demand"][1, 1] = 25.0
    td["vehicle_capacity"] = torch.full((2, 1), 30.0)
    with pytest.raises(ValueError, match=r"^demand\[1, 1\] = 25 exceeds every depot_capacity "
                       r"\(largest 20\): instance 1 is infeasible$"):  # fmt: skip
        check_instance_validity(td)


def test_capacity_limits_allow_the_tolerance_at_the_boundary():
    # a demand of exactly limit + CAPACITY_TOLERANCE (computed as the check does, in float32)
    # is valid: against the vehicle capacity, every depot capacity and the total capacity
    at_limit = (torch.tensor([10.0]) + CAPACITY_TOLERANCE).item()
    assert at_limit > 10.0
    vehicle = instance_tensordict(torch.rand(1, 2, 2), [[20.0]], [[1.0]], [[at_limit]], 10.0, 1.0)
    check_instance_validity(vehicle)
    depot = instance_tensordict(torch.rand(1, 2, 2), [[10.0]], [[1.0]], [[at_limit]], 20.0, 1.0)
    check_instance_validity(depot)
    depot["demand"] = torch.tensor([[at_limit + 1e-3]])
    with pytest.raises(ValueError, match="exceeds every depot_capacity"):
        check_instance_validity(depot)


def test_bin_packing_allows_an_exact_fit():
    # customers 19, 19, 10; depots 38 and 12: the two 19s need 38 and only depot 0 holds a 19,
    # with room 38 exactly (need == room is a fit); 10 + 38 <= 50 in total
    td = instance_tensordict(
        torch.rand(1, 5, 2), [[38.0, 12.0]], [[1.0, 1.0]], [[19.0, 19.0, 10.0]], 70.0, 1.0
    )
    check_instance_validity(td)
    td["depot_capacity"] = torch.tensor([[37.0, 13.0]])
    with pytest.raises(ValueError, match=r"customers with demand >= 19 need 38 but the depots "
                       r"that can hold them \(depot_capacity >= 19\) have only 37"):  # fmt: skip
        check_instance_validity(td)


# ------------------------------------------------------------------ actions
def test_pad_actions_is_a_no_op_when_long_enough():
    actions = torch.tensor([[1, 2, 1], [0, 3, 0]])
    assert pad_actions(actions, 3) is actions and pad_actions(actions, 2) is actions
    padded = pad_actions(actions, 5)
    assert padded.tolist() == [[1, 2, 1, PADDING_ACTION, PADDING_ACTION], [0, 3, 0, 0, 0]]


def test_split_start_action():
    actions = torch.tensor([[4, 1, 4, 1], [1, 4, 1, 0]])
    solutions, start = split_start_action(actions, num_depots=2)
    assert solutions.tolist() == [[1, 4, 1, 0], [1, 4, 1, 0]]
    assert start.tolist() == [4, -1]


def test_routes_from_actions_reads_start_actions_and_any_array_shape():
    # customer j is node 2 + j; a start action (node 3) must be the first customer served
    expected = [(1, (1, 0)), (0, (2,))]
    assert routes_from_actions([1, 3, 2, 1, 0, 4, 0, 0], 2) == expected
    assert routes_from_actions([3, 1, 3, 2, 1, 0, 4, 0], 2) == expected
    assert routes_from_actions([2, 1, 2, 1], 2) == [(1, (0,))]  # customer 0 (node 2) starts
    assert routes_from_actions(np.array([[3, 1, 3, 2, 1, 0, 4, 0]]), 2) == expected
    assert routes_from_actions(torch.tensor([[1, 3, 2, 1, 0, 4, 0]]), 2) == expected
    for bad in ([4, 1, 3, 2, 1, 0, 4, 0], [3, 1], [3]):
        with pytest.raises(ValueError, match=f"^start action {bad[0]} is not the first customer "
                           "served$"):  # fmt: skip
            routes_from_actions(bad, 2)
    assert routes_from_actions([], 2) == []


@pytest.mark.parametrize(
    "actions,message",
    [
        ([1, 3, -1, 1], r"actions\[2\] = -1 is negative"),
        ([1, 3, 1, 4, 1], r"actions\[3\] = 4: customer 2 outside a route"),
        ([1, 3, 0], r"actions\[2\] = 0: route from depot 1 must return to depot 1"),
        ([1, 1, 0, 2, 0], r"actions\[1\] = 1: empty route at depot 1"),
        ([1, 3, 2], "route from depot 1 is not closed at the end of actions"),
        ([3, 1, 3], "route from depot 1 is not closed at the end of actions"),
        ([0, 0, 2, 0], r"actions\[1\] = 0: empty route at depot 0"),
    ],
)
def test_routes_from_actions_messages(actions, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        routes_from_actions(actions, 2)


# ------------------------------------------------------------------ check_solution_validity
#: a valid solution of _td(): depot 0 serves customers 0 and 1 (4 + 5 <= 10), depot 1 serves 2
VALID = [0, 2, 3, 0, 1, 4, 1]


def _check(actions, td=None):
    td = _td() if td is None else td
    check_solution_validity(td, torch.tensor(actions).reshape(td.batch_size[0], -1))


def _raises(actions, message, td=None):
    with pytest.raises(ValueError, match="^" + message + "$"):
        _check(actions, td)


def test_valid_solutions_pass_with_padding_and_start_actions():
    _check([VALID, VALID])
    _check([VALID + [0, 0], VALID + [1, 1]])
    _check([[3, 0, 3, 2, 0, 1, 4, 1], [2, 0, 2, 3, 0, 1, 4, 1]])


def test_action_range_names_the_action():
    _raises([VALID, VALID[:-1] + [5]], r"instance 1: actions\[6\] = 5 is not a node index")
    _raises([VALID, [-1] + VALID[1:]], r"instance 1: actions\[0\] = -1 is not a node index")


def test_unserved_and_twice_served_customers_name_customer_and_node():
    td = _td(customers=4)
    full = [0, 2, 3, 0, 1, 4, 1, 1, 5, 1]
    _raises(
        [full, [0, 2, 3, 0, 1, 4, 1, 0, 0, 0]],
        r"instance 1: customer 3 \(node 5\) is not served \(unfinished or dead-ended solution\)",
        td,
    )
    _raises(
        [full, [0, 2, 3, 0, 1, 4, 5, 1, 5, 1]],
        r"instance 1: customer 3 \(node 5\) is served 2 times",
        td,
    )


@pytest.mark.parametrize(
    "row,message",
    [
        ([2, 0, 3, 0, 1, 4, 1], r"start action 2 but the first customer served is node 3"),
        ([0, 2, 0, 3, 1, 4, 1], r"actions\[3\] = customer node 3 is outside a route \(no "
         r"depot opened it\)"),
        ([0, 2, 3, 1, 1, 4, 1], r"route from depot 0 returns to depot 1 \(actions\[3\]\)"),
        ([0, 2, 3, 0, 1, 4, 0], r"route from depot 1 returns to depot 0 \(actions\[6\]\)"),
        ([0, 0, 1, 4, 1, 0, 2, 3], r"the last route is not closed at its depot"),
        ([1, 1, 0, 2, 3, 0, 1, 4, 1], r"empty route at depot 1 \(actions\[1\]\)"),
    ],
)  # fmt: skip
def test_route_rules_name_instance_position_and_depot(row, message):
    length = max(len(row), len(VALID))
    rows = [VALID + [0] * (length - len(VALID)), row + [0] * (length - len(row))]
    _raises(rows, "instance 1: " + message)


def test_start_action_with_a_two_step_horizon():
    # one depot, one customer (node 1): "1, 0" starts with customer 1, then only the depot
    td = _td(batch=1, depots=1, customers=1)
    _raises([1, 0], r"instance 0: start action 1 but the first customer served is node 0", td)
    _raises([0], r"instance 0: customer 0 \(node 1\) is not served \(unfinished or "
            r"dead-ended solution\)", td)  # fmt: skip
    _check([1, 0, 1, 0], td)


def test_capacities_name_route_and_depot():
    td = _td()
    td["vehicle_capacity"] = torch.full((2, 1), 8.0)
    # row 0: three routes of 4, 5, 6; row 1: route 0 carries 6, route 1 carries 4 + 5 = 9
    rows = [[0, 2, 0, 0, 3, 0, 1, 4, 1], [1, 4, 1, 0, 2, 3, 0, 0, 0]]
    _raises(rows, r"instance 1: route 1 carries 9 > vehicle capacity 8", td)
    td = _td()
    td["depot_capacity"] = torch.tensor([[20.0, 20.0], [8.0, 20.0]])
    _raises([VALID, VALID], r"instance 1: depot 0 serves 9 > its capacity 8", td)


def test_capacity_tolerance_at_its_boundary():
    # a load of exactly capacity + CAPACITY_TOLERANCE passes (vehicle and depot), as documented
    td = _td(batch=1, depots=1, customers=1)
    at_limit = (td["vehicle_capacity"][0, 0] + CAPACITY_TOLERANCE).item()  # float32
    assert at_limit > td["vehicle_capacity"].item()
    td["demand"] = torch.tensor([[at_limit]])
    td["depot_capacity"] = td["vehicle_capacity"].clone()
    _check([0, 1, 0], td)
    td["demand"] = torch.tensor([[at_limit + 1e-3]])
    _raises([0, 1, 0], r"instance 0: route 0 carries 10.001 > vehicle capacity 10", td)


def test_float64_instances_are_checked_too():
    td = _td().apply(lambda x: x.double() if x.is_floating_point() else x)
    _check([VALID, VALID], td)
    td["vehicle_capacity"] = torch.full((2, 1), 8.0, dtype=torch.float64)
    _raises([VALID, VALID], r"instance 0: route 0 carries 9 > vehicle capacity 8", td)


def test_a_final_state_flagged_infeasible_fails():
    env = CLRPEnv()
    td = _td()
    final = env.rollout_actions(td, torch.tensor([VALID, VALID]))
    check_solution_validity(final, torch.tensor([VALID, VALID]))
    final["infeasible"] = torch.tensor([False, True])
    _raises([VALID, VALID], r"instance 1: the final state is flagged infeasible \(dead end\)",
            final)  # fmt: skip
