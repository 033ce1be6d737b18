"""The solution object on hand-made inputs: the structure and constraint checks (each message,
the capacity tolerance at its boundary), the JSON layout and the Prodhon ``.sol`` reader and
writer (format as documented in ``CLRPSolution.read_sol``)."""

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.data.instance import CAPACITY_TOLERANCE


@pytest.fixture
def inst():
    # depots 0, 1 (capacity 20 each); customers 0, 1, 2 with demands 4, 5, 6; q = 10
    return CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[0.0, 3.0], [10.0, 4.0], [5.0, 5.0]]),
        depot_capacity=np.array([20.0, 20.0]),
        opening_cost=np.array([100.0, 50.0]),
        demand=np.array([4.0, 5.0, 6.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=10.0,
        name="toy",
    )


def _raises(solution, inst, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        solution.check(inst)


def test_structure_messages_at_the_index_bounds(inst):
    ok = Route(0, (0,))
    _raises(CLRPSolution([ok, Route(2, (1, 2))]), inst, "route 1: depot 2 is not in 0..1")
    _raises(CLRPSolution([ok, Route(1, ())]), inst, "route 1: empty route at depot 1")
    _raises(CLRPSolution([Route(1, (1, 3))]), inst, "route 0: customer 3 is not in 0..2")
    _raises(CLRPSolution([Route(0, (0, 1, 2))], (2,)), inst, "open depot 2 is not in 0..1")
    # customer 0 once, customer 1 twice: the message names customer 1
    twice = CLRPSolution([Route(0, (0, 1)), Route(1, (1, 2))])
    _raises(twice, inst, "customer 1 is served more than once: served 2 times")
    CLRPSolution([Route(1, (2,)), Route(0, (0, 1))]).check(inst)


def test_capacity_messages_and_the_tolerance_boundary(inst):
    _raises(
        CLRPSolution([Route(1, (1, 2))]), inst, "route 0 (depot 1) carries 11 > vehicle capacity 10"
    )
    inst = replace(inst, depot_capacity=np.array([20.0, 10.0]))
    two = CLRPSolution([Route(0, (0,)), Route(1, (1,)), Route(1, (2,))])
    _raises(two, inst, "depot 1 serves 11 > its capacity 10")
    # exactly at capacity, and at capacity + CAPACITY_TOLERANCE: valid
    two.check(replace(inst, depot_capacity=np.array([20.0, 11.0])))
    two.check(replace(inst, depot_capacity=np.array([20.0, 11.0 - CAPACITY_TOLERANCE])))
    demand = inst.demand.copy()
    demand[2] = inst.vehicle_capacity + CAPACITY_TOLERANCE
    capacity = np.array([20.0, 5.0 + demand[2] - CAPACITY_TOLERANCE])
    inst = replace(inst, demand=demand, depot_capacity=capacity)
    two.check(inst)
    _raises(CLRPSolution([Route(0, (0, 1, 2))]), inst, "route 0 (depot 0) carries 19 > vehicle "
            "capacity 10")  # fmt: skip


def test_json_layout(inst, tmp_path):
    sol = CLRPSolution([Route(1, (2, 1)), Route(1, (0,))], open_depots=(0,))
    assert sol.open_depots == (0, 1)
    assert sol.to_dict() == {
        "open_depots": [0, 1],
        "routes": [{"depot": 1, "customers": [2, 1]}, {"depot": 1, "customers": [0]}],
    }
    sol.to_json(tmp_path / "s.json", inst)
    text = (tmp_path / "s.json").read_text()
    assert text.startswith('{\n  "open_depots": [\n    0,\n    1\n  ],\n  "routes"')
    cost = sol.cost(inst)
    assert json.loads(text) == {
        **sol.to_dict(),
        "cost": {
            "opening": cost.opening,
            "vehicles": cost.vehicles,
            "routing": cost.routing,
            "total": cost.total,
        },
        "instance": "toy",
    }
    assert (cost.opening, cost.vehicles) == (150.0, 20.0)
    sol.to_json(tmp_path / "bare.json")
    assert json.loads((tmp_path / "bare.json").read_text()) == sol.to_dict()
    # a declared open depot without routes survives the round trip
    assert CLRPSolution.from_json(tmp_path / "s.json").open_depots == (0, 1)
    routes_only = {"routes": [{"depot": 1, "customers": [0, 1, 2]}]}
    assert CLRPSolution.from_dict(routes_only).open_depots == (1,)
    with pytest.raises(
        ValueError, match=r"^solution JSON: malformed routes \(KeyError\('depot'\)\)"
    ):
        CLRPSolution.from_dict({"routes": [{"customers": [0]}]})


def test_sol_writer_layout(tmp_path):
    sol = CLRPSolution([Route(1, (2, 0)), Route(0, (1,))], open_depots=(0, 1, 2))
    sol.write_sol(tmp_path / "s.sol", 3)
    assert (tmp_path / "s.sol").read_text() == (
        "M Yd1_OmastV 1.0\nM Yd2_OmastV 1.0\nM Yd3_OmastV 1.0\nV 2 0 3 1 4\nV 1 0 2 4\n"
    )
    assert CLRPSolution.read_sol(tmp_path / "s.sol", 3) == sol


def test_sol_reader_depot_lines(tmp_path):
    path = tmp_path / "s.sol"
    lines = [
        "M Yd2_OmastV",  # no value: open
        "",
        "M Yd3_OmastV 0.0",  # closed
        "M Yd1_OmastV 0.5",  # not above 0.5: closed
        "M Yd4_a_b 1.0",  # the index ends at the first underscore
        "V 2 0 1 2 4",
        "V 2 0 4",  # a route line without customers is read as it is
    ]
    path.write_text("\n".join(lines) + "\n")
    sol = CLRPSolution.read_sol(path, 3)
    assert sol.open_depots == (1, 3)
    assert sol.routes == [Route(1, (0, 1)), Route(1, ())]


@pytest.mark.parametrize(
    "lines,message",
    [
        (["M"], "{path}:1: malformed depot line 'M'"),
        (["", "M Xx12_3 1.0"], "{path}:2: malformed depot line 'M Xx12_3 1.0'"),
        (["M YdX_OmastV 1.0"], "{path}:1: malformed depot line 'M YdX_OmastV 1.0'"),
        (["M Yd1_OmastV 1.0", "V 1 0 x 4"], "{path}:2: malformed route line 'V 1 0 x 4'"),
        (["M Yd1_OmastV 1.0", "V 1 5 1 2 4"], "{path}:2: route line must read 'V depot 0 c1 "
         ".. ck 4', got 'V 1 5 1 2 4'"),
        (["M Yd1_OmastV 1.0", "V 1 0 1 2 3"], "{path}:2: route line must read 'V depot 0 c1 "
         ".. ck 4', got 'V 1 0 1 2 3'"),
        (["M Yd1_OmastV 1.0", "V 1 0"], "{path}:2: route line must read 'V depot 0 c1 .. ck 4', "
         "got 'V 1 0'"),
        (["M Yd1_OmastV 1.0", "", "X 1"], "{path}:3: unknown line type 'X'"),
        (["M Yd1_OmastV 1.0", "V 2 0 1 4", "V 3 0 2 4"], "{path}: routes use depots [1, 2] not "
         "declared open"),
    ],
)  # fmt: skip
def test_sol_reader_messages(tmp_path, lines, message):
    path = tmp_path / "bad.sol"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="^" + re.escape(message.format(path=path)) + "$"):
        CLRPSolution.read_sol(path, 3)
