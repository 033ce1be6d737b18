"""PyVRP encodings: the fleet keeps depots within capacity, round trips, the trips fallback."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers.pyvrp_encoding import (
    decode,
    encode,
    encode_fleet,
    fleet_sizes,
    to_pyvrp,
)
from clrp_rl4co.solvers.pyvrp_solver import route_on_set, run_pyvrp


def _instance(depot_capacity, demand, vehicle_capacity=70.0, seed=0) -> CLRPInstance:
    rng = np.random.default_rng(seed)
    num_depots = len(depot_capacity)
    return CLRPInstance(
        depot_locs=rng.integers(0, 50, (num_depots, 2)).astype(float),
        customer_locs=rng.integers(0, 50, (len(demand), 2)).astype(float),
        depot_capacity=np.asarray(depot_capacity, float),
        opening_cost=np.full(num_depots, 500.0),
        demand=np.asarray(demand, float),
        vehicle_capacity=vehicle_capacity,
        vehicle_fixed_cost=100.0,
        rounded_costs=True,
    )


def _loads(instance: CLRPInstance, solution: CLRPSolution) -> dict[int, float]:
    loads: dict[int, float] = {}
    for r in solution.routes:
        loads[r.depot] = loads.get(r.depot, 0.0) + float(instance.demand[list(r.customers)].sum())
    return loads


def _route_key(route: Route) -> tuple[int, tuple[int, ...]]:
    return route.depot, route.customers


@pytest.mark.parametrize(
    "depot_capacity,vehicle_capacity,fleet",
    [
        (1190, 150, [(150, 7), (140, 1)]),  # Prins coord200-10-1, depot 0
        (300, 150, [(150, 2)]),
        (100, 150, [(100, 1)]),
        (0, 150, []),
    ],
)
def test_fleet_sizes_split_the_depot_capacity_into_vehicles(
    depot_capacity, vehicle_capacity, fleet
):
    assert fleet_sizes(depot_capacity, vehicle_capacity) == fleet
    assert sum(c * n for c, n in fleet) == depot_capacity


def test_fleet_encoding_vehicles_hold_each_depot_capacity_and_cost_the_route_fee():
    inst = _instance([320, 150, 90], [20] * 12)
    enc = encode_fleet(inst, [0, 2])
    assert enc.depots == [0, 2] and enc.kind == "fleet"
    held = {0: 0, 1: 0}
    for t, vt in enumerate(enc.data.vehicle_types()):
        k = enc.depot_of(t)
        held[k] += vt.capacity[0] * vt.num_available
        assert vt.capacity[0] <= 70 and vt.fixed_cost == 100
        assert (vt.start_depot, vt.end_depot) == (k, k)
    assert held == {0: 320, 1: 90}


def test_fleet_round_trip_keeps_routes_and_prices_routing_and_fees():
    inst = _instance([200, 200], [20, 30, 10, 25, 15, 40])
    sol = CLRPSolution([Route(0, (0, 1)), Route(0, (2,)), Route(1, (3, 4)), Route(1, (5,))])
    sol.check(inst)
    enc = encode_fleet(inst, [0, 1])
    pv = to_pyvrp(enc, sol)
    assert pv.is_feasible() and pv.is_complete()
    back = decode(enc, pv)
    assert sorted(back.routes, key=_route_key) == sorted(sol.routes, key=_route_key)
    cost = sol.cost(inst)
    assert pv.distance_cost() + pv.fixed_vehicle_cost() == pytest.approx(cost.total - cost.opening)


def test_fleet_warm_start_with_more_routes_than_vehicles_keeps_every_customer():
    # Depot 0 holds 100 with q = 70: a 70 and a 30 vehicle; three routes do not fit.
    inst = _instance([100, 300], [20, 20, 20, 10])
    sol = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(0, (2,)), Route(1, (3,))])
    enc = encode_fleet(inst, [0, 1])
    pv = to_pyvrp(enc, sol)
    assert pv.is_complete() and pv.num_routes() == 3
    assert not pv.is_feasible()  # 40 on the 30 vehicle
    assert sorted(c for r in decode(enc, pv).routes for c in r.customers) == [0, 1, 2, 3]


def test_fleet_solutions_never_overload_a_depot():
    # A free central depot that can hold only 90 of the 240 demanded.
    rng = np.random.default_rng(4)
    inst = CLRPInstance(
        depot_locs=np.array([[25.0, 25.0], [0.0, 0.0]]),
        customer_locs=rng.integers(0, 50, (12, 2)).astype(float),
        depot_capacity=np.array([90.0, 400.0]),
        opening_cost=np.zeros(2),
        demand=np.full(12, 20.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=10.0,
        rounded_costs=True,
    )
    found = run_pyvrp(encode_fleet(inst), None, max_iterations=300)
    found.check(inst)
    loads = _loads(inst, found)
    assert loads.get(0, 0.0) <= 90.0 and sum(loads.values()) == 240.0


def test_route_on_set_falls_back_to_trips_when_the_fleet_cannot_hold_the_demand():
    # One depot of 100, q = 70, four customers of 25: the trips 50 + 50 fit the depot, but the
    # fleet (one vehicle of 70, one of 30) carries at most 50 + 25.
    inst = _instance([100], [25, 25, 25, 25])
    assert run_pyvrp(encode_fleet(inst), None, max_iterations=200) is None
    found = route_on_set(inst, [0], None, max_iterations=200)
    found.check(inst)
    assert len(found.routes) == 2 and _loads(inst, found) == {0: 100.0}


def test_route_on_set_polish_is_never_worse_than_the_fleet_alone():
    inst = _instance([300, 300, 300], [12, 18, 9, 22, 15, 30, 11, 7, 25, 14], seed=3)
    fleet_only = route_on_set(inst, [0, 1, 2], None, max_iterations=300, polish_share=0)
    polished = route_on_set(inst, [0, 1, 2], None, max_iterations=300 * 10 // 9)
    for sol in (fleet_only, polished):
        sol.check(inst)
    assert polished.cost(inst).total <= fleet_only.cost(inst).total + 1e-9


def test_trips_encoding_is_unchanged_by_the_fleet():
    inst = _instance([200, 200], [20, 30, 10])
    enc = encode(inst)
    assert enc.kind == "trips" and [enc.depot_of(k) for k in range(2)] == [0, 1]
    types = enc.data.vehicle_types()
    assert [vt.shift_duration for vt in types] == [200, 200]
    assert [vt.fixed_cost for vt in types] == [500, 500]
    assert all(math.isclose(vt.num_available, 1) for vt in types)


def test_routes_at_a_depot_outside_the_set_go_to_the_included_depot_nearest_their_centre():
    inst = CLRPInstance(
        depot_locs=np.array([[0.0, 100.0], [50.0, 50.0], [100.0, 20.0]]),
        customer_locs=np.array([[20.0, 90.0], [20.0, 100.0], [90.0, 30.0], [95.0, 25.0]]),
        depot_capacity=np.full(3, 500.0),
        opening_cost=np.zeros(3),
        demand=np.full(4, 10.0),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=0.0,
        rounded_costs=True,
    )
    sol = CLRPSolution([Route(1, (0, 1)), Route(1, (2, 3))])  # depot 1 is not in the set
    for enc in (encode_fleet(inst, [0, 2]), encode(inst, [0, 2])):
        back = decode(enc, to_pyvrp(enc, sol))
        assert {r.customers: r.depot for r in back.routes} == {(0, 1): 0, (2, 3): 2}


@pytest.mark.parametrize("fixed,scale", [(0.75, 10_000), (0.0003, 20_000)])
def test_real_valued_instances_are_scaled_to_integers_conservatively(fixed, scale):
    # F = 0.0003 is 3 units at 10^4: odd, so every cost doubles (F / 2 on each trips edge).
    rng = np.random.default_rng(11)
    inst = CLRPInstance(
        depot_locs=rng.random((2, 2)),
        customer_locs=rng.random((5, 2)),
        depot_capacity=np.array([40.25, 60.5]),
        opening_cost=np.array([1.5, 2.25]),
        demand=np.array([5.1, 7.0, 3.25, 9.9, 2.0]),
        vehicle_capacity=30.5,
        vehicle_fixed_cost=fixed,
    )
    fleet, trips = encode_fleet(inst), encode(inst)
    assert fleet.cost_scale == trips.cost_scale == scale
    expected = np.round(inst.cost_matrix() * scale).astype(np.int64)
    np.fill_diagonal(expected, 0)
    expected[:2, :2] = 0
    got = np.asarray(fleet.data.distance_matrix(0))
    assert np.array_equal(got, expected)
    fee = round(fixed * scale)
    trips_dist = np.asarray(trips.data.distance_matrix(0))
    assert np.array_equal(trips_dist[:2, 2:], expected[:2, 2:] + fee // 2)
    assert np.array_equal(trips_dist[2:, 2:], expected[2:, 2:])
    assert [c.delivery[0] for c in fleet.data.clients()] == [5100, 7000, 3250, 9900, 2000]
    assert [vt.fixed_cost for vt in fleet.data.vehicle_types()] == [fee] * 4
    # 40.25 -> 40250 = 30500 + 9750; 60.5 -> 60500 = 30500 + 30000
    caps = [(vt.capacity[0], vt.num_available) for vt in fleet.data.vehicle_types()]
    assert caps == [(30500, 1), (9750, 1), (30500, 1), (30000, 1)]
    assert [vt.fixed_cost for vt in trips.data.vehicle_types()] == [
        round(1.5 * scale),
        round(2.25 * scale),
    ]
    assert [vt.shift_duration for vt in trips.data.vehicle_types()] == [40250, 60500]


@pytest.mark.parametrize(
    "opening,fixed,rounded_costs,scale",
    [
        ([500.0, 500.0], 100.0, True, 1.0),  # all integral: PyVRP works in the instance's units
        ([500.5, 500.0], 100.0, True, 10_000),  # only an opening cost is fractional
        ([500.0, 500.0], 100.5, True, 10_000),  # only the vehicle fee is fractional
        ([500.0, 500.0], 100.0, False, 10_000),  # only the (real) distances are fractional
    ],
)
def test_costs_are_scaled_when_any_cost_is_fractional(opening, fixed, rounded_costs, scale):
    inst = dataclasses.replace(
        _instance([100, 100], [10, 20, 30]),
        opening_cost=np.array(opening),
        vehicle_fixed_cost=fixed,
        rounded_costs=rounded_costs,
    )
    assert not rounded_costs or np.all(inst.cost_matrix() == np.round(inst.cost_matrix()))
    for build in (encode, encode_fleet):
        assert build(inst).cost_scale == scale
    assert encode_fleet(inst).data.vehicle_types()[0].fixed_cost == round(fixed * scale)


@pytest.mark.parametrize(
    "demand,vehicle_capacity,depot_capacity,deliveries",
    [
        ([10, 20, 30], 70.0, [100, 100], [10, 20, 30]),
        ([10.5, 20, 30], 70.0, [100, 100], [10_500, 20_000, 30_000]),  # a demand
        ([10, 20, 30], 70.5, [100, 100], [10_000, 20_000, 30_000]),  # the vehicle capacity
        ([10, 20, 30], 70.0, [100.5, 100], [10_000, 20_000, 30_000]),  # a depot capacity
    ],
)
def test_demands_are_scaled_when_any_load_figure_is_fractional(
    demand, vehicle_capacity, depot_capacity, deliveries
):
    inst = _instance(depot_capacity, demand, vehicle_capacity=vehicle_capacity)
    for build in (encode, encode_fleet):
        assert [c.delivery[0] for c in build(inst).data.clients()] == deliveries


def test_an_empty_depot_set_is_refused():
    inst = _instance([100], [10])
    for build in (encode, encode_fleet):
        with pytest.raises(ValueError, match="at least one depot"):
            build(inst, [])


def test_trips_round_trip_keeps_each_route_as_a_trip_and_prices_everything():
    inst = _instance([200, 200], [20, 30, 10, 25, 15, 40])
    sol = CLRPSolution([Route(0, (0, 1)), Route(0, (2,)), Route(1, (3, 4)), Route(1, (5,))])
    enc = encode(inst)
    pv = to_pyvrp(enc, sol)
    assert pv.is_feasible() and pv.num_routes() == 2 and pv.num_trips() == 4
    back = decode(enc, pv)
    assert sorted(back.routes, key=_route_key) == sorted(sol.routes, key=_route_key)
    assert pv.distance_cost() + pv.fixed_vehicle_cost() == pytest.approx(sol.cost(inst).total)


def test_fleet_warm_start_puts_the_largest_loads_on_the_largest_vehicles():
    # Depot 0 holds 100 with q = 70: vehicles of 70 and 30; loads 10 and 40 fit only one way.
    inst = _instance([100, 300], [10, 40, 20])
    sol = CLRPSolution([Route(0, (0,)), Route(0, (1,)), Route(1, (2,))])
    pv = to_pyvrp(encode_fleet(inst, [0, 1]), sol)
    assert pv.is_feasible()


def test_a_depot_set_that_holds_no_demand_is_refused_by_the_fleet():
    inst = _instance([0, 100], [10])
    with pytest.raises(ValueError, match="no depot of the set can hold one unit of demand"):
        encode_fleet(inst, [0])


@pytest.mark.parametrize("build", [encode, encode_fleet])
def test_fractional_loads_round_demands_up_and_capacities_down(build):
    """At 1,000 units per unit of demand: 5.1234 -> 5123.4 and 3.2501 -> 3250.1 round up to
    5124 and 3251; the vehicle's 30.5007 -> 30500.7 and depot 0's 40.2509 -> 40250.9 round
    down to 30500 and 40250; values exact at that scale (7.0, 60.5) stay as they are. So a
    load PyVRP accepts never exceeds a capacity of the instance."""
    inst = _instance([40.2509, 60.5], [5.1234, 7.0, 3.2501], vehicle_capacity=30.5007)
    data = build(inst).data
    assert [c.delivery[0] for c in data.clients()] == [5124, 7000, 3251]
    vehicles = [(vt.capacity[0], vt.num_available) for vt in data.vehicle_types()]
    if build is encode:
        assert vehicles == [(30500, 1), (30500, 1)]
        assert [vt.shift_duration for vt in data.vehicle_types()] == [40250, 60500]
        assert [c.service_duration for c in data.clients()] == [5124, 7000, 3251]
    else:  # 40250 = 30500 + 9750; 60500 = 30500 + 30000
        assert vehicles == [(30500, 1), (9750, 1), (30500, 1), (30000, 1)]
