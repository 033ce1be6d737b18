"""Routing large instances by parts (clrp_rl4co/solvers/decompose.py) and the depot-set search's
large-instance path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from clocks import FakeClock
from instances import random_instance

import clrp_rl4co.solvers.large as large
import clrp_rl4co.solvers.pyvrp_solver as pyvrp_solver
from clrp_rl4co.data import CLRPInstance, CLRPSolution
from clrp_rl4co.data.solution import Route, route_length
from clrp_rl4co.execution import interrupt
from clrp_rl4co.solvers import solve_pyvrp
from clrp_rl4co.solvers.decompose import depot_groups, route_by_parts, sub_instance, sweep_routes
from clrp_rl4co.solvers.pyvrp_solver import route_on_set
from clrp_rl4co.solvers.set_estimate import SetEstimate


def clustered_instance(seed: int = 0, per_cluster: int = 60) -> CLRPInstance:
    """Four far-apart squares of side 1 at the corners of a 100 x 100 square, each with 3
    depots (capacity 1,200, opening cost 2) and ``per_cluster`` customers (demand 10-19);
    q = 70, F = 1."""
    rng = np.random.default_rng(seed)
    corners = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0], [100.0, 100.0]])
    depots = np.concatenate([c + rng.random((3, 2)) for c in corners])
    customers = np.concatenate([c + rng.random((per_cluster, 2)) for c in corners])
    return CLRPInstance(
        depot_locs=depots,
        customer_locs=customers,
        depot_capacity=np.full(12, 1200.0),
        opening_cost=np.full(12, 2.0),
        demand=rng.integers(10, 20, 4 * per_cluster).astype(float),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
        name="clustered",
    )


def nearest_assignment(instance: CLRPInstance) -> np.ndarray:
    cost = instance.cost_matrix()[: instance.num_depots, instance.num_depots :]
    return cost.argmin(axis=0)


def test_a_sub_instance_prices_a_route_as_the_whole_instance_does():
    instance = random_instance(30, seed=3, num_depots=5)
    depots, customers = [4, 1], [7, 2, 29, 11]
    sub = sub_instance(instance, depots, customers)
    assert (sub.num_depots, sub.num_customers) == (2, 4)
    np.testing.assert_array_equal(sub.depot_capacity, instance.depot_capacity[depots])
    np.testing.assert_array_equal(sub.opening_cost, instance.opening_cost[depots])
    np.testing.assert_array_equal(sub.demand, instance.demand[customers])
    local = route_length(sub, Route(0, (2, 0, 3)))  # depot 4: customers 29, 7, 11
    assert local == pytest.approx(route_length(instance, Route(4, (29, 7, 11))), abs=1e-12)


def test_groups_split_far_clusters_and_hold_every_serving_depot_once():
    instance = clustered_instance()
    assignment = nearest_assignment(instance)
    used = sorted(set(assignment.tolist()))
    groups = depot_groups(instance, assignment, part_customers=60)
    assert sorted(d for g in groups for d in g) == used  # every serving depot, once
    counts = np.bincount(assignment, minlength=12)
    for g in groups:
        assert counts[g].sum() <= 60 or len(g) == 1
        corner = {int(d) // 3 for d in g}
        assert len(corner) == 1  # a group never mixes depots of two clusters
    assert len(depot_groups(instance, assignment, part_customers=240)) == 1
    two = depot_groups(instance, assignment, part_customers=120)
    assert len(two) == 2 and all(counts[g].sum() == 120 for g in two)


def test_an_unused_depot_is_in_no_group():
    instance = clustered_instance()
    assignment = nearest_assignment(instance)
    assignment[assignment == 4] = 3  # depot 4 serves no one
    groups = depot_groups(instance, assignment, part_customers=60)
    assert 4 not in {d for g in groups for d in g}


def test_routes_by_parts_are_valid_and_keep_the_assignment():
    instance = clustered_instance()
    assignment = nearest_assignment(instance)
    sol = route_by_parts(instance, assignment, None, route_on_set, max_iterations=200,
                         part_customers=60)  # fmt: skip
    sol.check(instance)
    group_of = {d: k for k, g in enumerate(depot_groups(instance, assignment, 60)) for d in g}
    for r in sol.routes:  # a customer may change depot within its group, not leave it
        assert all(group_of[int(assignment[c])] == group_of[r.depot] for c in r.customers)
    again = route_by_parts(instance, assignment, None, route_on_set, max_iterations=200,
                           part_customers=60)  # fmt: skip
    assert again.cost(instance).total == sol.cost(instance).total  # deterministic


def test_routes_by_parts_never_lose_an_initial_parts_routes():
    instance = clustered_instance()
    assignment = nearest_assignment(instance)
    # one customer per route: valid and poor, so PyVRP improves on every part
    initial = CLRPSolution([Route(int(assignment[c]), (c,)) for c in range(240)])
    initial.check(instance)
    sol = route_by_parts(instance, assignment, None, route_on_set, max_iterations=100,
                         initial=initial, part_customers=60)  # fmt: skip
    sol.check(instance)
    assert sol.cost(instance).total < initial.cost(instance).total
    # a single iteration per part may not improve a part: its routes are then kept
    once = route_by_parts(instance, assignment, None, route_on_set, max_iterations=1,
                          initial=initial, part_customers=60)  # fmt: skip
    once.check(instance)
    assert once.cost(instance).total <= initial.cost(instance).total


def test_the_estimate_assignment_is_nearest_or_none_when_a_depot_overflows():
    instance = clustered_instance()
    est = SetEstimate(instance)
    got = est.assignment((0, 3, 6, 9))
    cost = instance.cost_matrix()[:12, 12:]
    np.testing.assert_array_equal(got, np.array([0, 3, 6, 9])[cost[[0, 3, 6, 9]].argmin(axis=0)])
    capacity = np.full(12, 1200.0)
    capacity[[0, 3]] = 500.0  # cluster 0's customers (at least 600 of demand) overflow depot 0
    small = CLRPInstance(**{**instance.__dict__, "_dist": None, "depot_capacity": capacity})
    assert SetEstimate(small).assignment((0, 3, 6, 9)) is None
    assert SetEstimate(small).assignment((0, 1, 3, 6, 9)) is not None


def test_the_search_routes_a_large_instance_by_parts(monkeypatch):
    # The large-instance path, switched on at 200 customers here: one set and assignment
    # from the ranking, routes by parts; valid, deterministic with iterations.
    monkeypatch.setattr(pyvrp_solver, "LARGE_INSTANCE", 200)
    instance = clustered_instance()
    calls = []
    real = large.route_by_parts
    monkeypatch.setattr(large, "route_by_parts",
                        lambda *a, **k: calls.append(a) or real(*a, **k))  # fmt: skip
    res = solve_pyvrp(instance, seconds=None, max_iterations=200)
    assert calls and res.solution is not None
    res.solution.check(instance)
    assert len(res.solution.open_depots) >= 4  # every cluster has its own depot
    again = solve_pyvrp(instance, seconds=None, max_iterations=200)
    assert again.objective == res.objective


@pytest.mark.parametrize(
    ("customers", "seconds", "expected"),
    [
        (2000, 60.0, 6.0),  # the model needs 3 s: the usual tenth
        (2000, 10.0, 2.5),  # ... at most a quarter of 10 s
        (4000, 60.0, 12.0),  # 3 x (4000 / 2000)^2 = 12 s
        (5000, 60.0, 15.0),  # 18.75 s needed: a quarter
        (10000, 600.0, 75.0),  # 3 x 25 = 75 s, between 60 and 150
    ],
)
def test_the_large_ranking_gets_what_the_model_needs_within_a_tenth_and_a_quarter(
    customers, seconds, expected
):
    instance = CLRPInstance(
        depot_locs=np.zeros((1, 2)),
        customer_locs=np.ones((customers, 2)),
        depot_capacity=np.array([float(customers)]),
        opening_cost=np.ones(1),
        demand=np.ones(customers),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert large.large_ranking_seconds(instance, seconds) == pytest.approx(expected)


def test_the_large_path_ranks_sets_for_its_ranking_seconds(monkeypatch):
    # From LARGE_INSTANCE customers (200 here) the first ranked set is the only one routed:
    # 240 customers need 3 x 1.2^2 = 4.32 s, within 40 s a tenth (4 s) and a quarter (10 s).
    # The threshold switches the path (pyvrp_solver) and scales the ranking (large).
    monkeypatch.setattr(pyvrp_solver, "LARGE_INSTANCE", 200)
    monkeypatch.setattr(large, "LARGE_INSTANCE", 200)
    asked = []
    real = SetEstimate.best_sets

    def spy(self, *args, **kwargs):
        asked.append(kwargs["deadline"].left())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SetEstimate, "best_sets", spy)
    monkeypatch.setattr(large, "route_by_parts", lambda *a, **k: None)
    pyvrp_solver.depot_set_search(clustered_instance(), 40.0, clock=FakeClock())
    assert asked == [pytest.approx(4.32)]


def test_the_cost_matrix_is_the_euclidean_distance_bit_for_bit():
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        instance = CLRPInstance(
            depot_locs=rng.random((3, 2)).astype(dtype) * 50,
            customer_locs=rng.random((40, 2)).astype(dtype) * 50,
            depot_capacity=np.full(3, 500.0),
            opening_cost=np.ones(3),
            demand=np.ones(40),
            vehicle_capacity=70.0,
            vehicle_fixed_cost=1.0,
        )
        locs = instance.locs
        naive = np.sqrt(((locs[:, None, :] - locs[None, :, :]) ** 2).sum(-1))
        np.testing.assert_array_equal(instance.cost_matrix(), naive)


def line_instance(counts, part_name="line") -> CLRPInstance:
    """Depots at x = 0, 10, 20, ... (y = 0), ``counts[i]`` customers of demand 1 next to
    depot i; capacities 1,000, opening cost 1, q = 10, F = 1."""
    depots = np.array([[10.0 * i, 0.0] for i in range(len(counts))])
    customers = np.array([[10.0 * i + 0.1 * (k + 1), 1.0] for i, n in enumerate(counts)
                          for k in range(n)])  # fmt: skip
    return CLRPInstance(
        depot_locs=depots,
        customer_locs=customers,
        depot_capacity=np.full(len(counts), 1000.0),
        opening_cost=np.ones(len(counts)),
        demand=np.ones(len(customers)),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
        name=part_name,
    )


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ([100, 10, 10], [[0], [1, 2]]),  # half (60) is reached at the first depot
        ([10, 10, 100], [[0, 1], [2]]),  # ... only at the last: two depots stay left
        ([30, 30, 30, 30], [[0, 1], [2, 3]]),
        ([40, 40], [[0], [1]]),  # two depots over the limit are split too
    ],
)
def test_the_bisection_cuts_where_half_the_customers_are_on_the_left(counts, expected):
    instance = line_instance(counts)
    assignment = np.repeat(np.arange(len(counts)), counts)
    assert sorted(depot_groups(instance, assignment, part_customers=60)) == expected


class FakeRouter:
    """Records each group's call and spends half its seconds on ``clock``; group ``g`` gets
    ``answers[g]``: "single" (one route per customer), "one route" (all customers on one
    route: cheaper, capacity not checked) or "none" (no routes found)."""

    def __init__(self, clock, answers):
        self.clock, self.answers, self.calls = clock, answers, []

    def __call__(self, sub, depots, seconds, iterations, seed, initial, clock=None):
        g = len(self.calls)
        self.calls.append((sub.name, sub.num_customers, list(depots), seconds, iterations,
                           seed, initial, clock))  # fmt: skip
        if seconds is not None:
            self.clock.now += seconds / 2
        answer = self.answers[g]
        if answer == "none":
            return None
        everyone = tuple(range(sub.num_customers))
        if answer == "one route":  # every customer on one route (q = 10 is not checked here)
            return CLRPSolution([Route(0, everyone)])
        if answer == "reversed":  # the single routes, last customer first: the same cost
            return CLRPSolution([Route(0, (c,)) for c in reversed(everyone)])
        return CLRPSolution([Route(0, (c,)) for c in everyone])  # one route per customer


def test_each_part_gets_its_share_of_the_time_left_its_iterations_and_seed():
    # 4 groups of 30 customers; 100 s: the first gets 100 x 30 / 120 = 25 s and spends
    # half; the next (100 - 12.5) x 30 / 90, and so on.
    clock = FakeClock()
    instance = line_instance([30, 30, 30, 30], "four")
    assignment = np.repeat(np.arange(4), 30)
    router = FakeRouter(clock, ["single"] * 4)
    sol = route_by_parts(instance, assignment, 100.0, router, max_iterations=1000, seed=7,
                         part_customers=30, clock=clock)  # fmt: skip
    spent, left, expected = 0.0, 120, []
    for _ in range(4):
        share = (100.0 - spent) * 30 / left
        expected.append(share)
        spent += share / 2
        left -= 30
    assert [c[3] for c in router.calls] == pytest.approx(expected)
    assert [c[4] for c in router.calls] == [250] * 4
    assert [c[5] for c in router.calls] == [7, 8, 9, 10]
    assert [c[0] for c in router.calls] == [f"four[part {g}]" for g in range(4)]
    assert all(c[1] == 30 and c[2] == [0] and c[7] is clock for c in router.calls)
    for c in router.calls:  # no initial solution: each part starts from its sweep routes
        assert c[6].routes == [Route(0, tuple(range(29 - 10 * k, 19 - 10 * k, -1)))
                               for k in range(3)]  # fmt: skip
    sol.check(instance)  # the groups' routes, mapped back to the instance's indices
    # the router's single routes cost more than the sweep's three routes: the sweep stays
    assert sorted(r.depot for r in sol.routes) == np.repeat(np.arange(4), 3).tolist()
    assert sorted(c for r in sol.routes for c in r.customers) == list(range(120))
    for r in sol.routes:
        assert assignment[r.customers[0]] == r.depot
    few = route_by_parts(instance, assignment, None, FakeRouter(clock, ["single"] * 4),
                         max_iterations=2, part_customers=30, clock=clock)  # fmt: skip
    assert few is not None
    router = FakeRouter(clock, ["single"] * 4)
    route_by_parts(instance, assignment, None, router, max_iterations=2, part_customers=30)
    assert [c[3:5] for c in router.calls] == [(None, 1)] * 4  # at least one iteration
    assert [c[5] for c in router.calls] == [0, 1, 2, 3]  # the default seed is 0
    router = FakeRouter(clock, ["single"] * 4)
    route_by_parts(instance, assignment, 0.4, router, part_customers=30, clock=clock)
    assert router.calls[0][3:5] == (pytest.approx(0.1), None)  # no iteration limit


def test_the_last_part_gets_all_the_time_left():
    clock = FakeClock()
    instance = line_instance([30, 1], "two")
    router = FakeRouter(clock, ["single"] * 2)
    route_by_parts(instance, np.repeat([0, 1], [30, 1]), 62.0, router, part_customers=30,
                   clock=clock)  # fmt: skip
    assert [c[3] for c in router.calls] == pytest.approx([60.0, 62.0 - 30.0])


def test_a_part_keeps_its_warm_routes_unless_the_router_finds_cheaper_ones(caplog):
    # Warm start: one route per customer at each depot (30 routes of 1 customer each). The
    # router answers group 0 with one route of all (cheaper), group 1 with the same single
    # routes in reverse order (equal cost: warm kept), group 2 with nothing (warm kept).
    clock = FakeClock()
    instance = line_instance([30, 30, 30], "three")
    assignment = np.repeat(np.arange(3), 30)
    warm = CLRPSolution([Route(int(assignment[c]), (c,)) for c in range(90)])
    router = FakeRouter(clock, ["one route", "reversed", "none"])
    sol = route_by_parts(instance, assignment, 30.0, router, initial=warm, part_customers=30,
                         clock=clock)  # fmt: skip
    warm_parts = [c[6] for c in router.calls]
    assert all(len(w.routes) == 30 for w in warm_parts)  # each part got its own warm routes
    assert warm_parts[1].routes[0] == Route(0, (0,))  # in the part's own indices
    by_depot = {d: [r for r in sol.routes if r.depot == d] for d in range(3)}
    assert [len(by_depot[d]) for d in range(3)] == [1, 30, 30]
    assert by_depot[0][0].customers == tuple(range(30))
    assert sorted(by_depot[2], key=lambda r: r.customers)[0].customers == (60,)
    assert [r.customers[0] for r in by_depot[1]] == list(range(30, 60))  # warm's order
    # without a warm start, a part the router cannot route keeps its sweep routes
    router = FakeRouter(clock, ["single", "none", "one route"])
    sol = route_by_parts(instance, assignment, 30.0, router, part_customers=30, clock=clock)
    assert len(router.calls) == 3
    sweep_of_part_1 = [Route(1, tuple(range(59 - 10 * k, 49 - 10 * k, -1))) for k in range(3)]
    assert [r for r in sol.routes if r.depot == 1] == sweep_of_part_1
    # a router's answer no cheaper than the sweep is not taken: 30 single routes cost more
    assert len([r for r in sol.routes if r.depot == 0]) == 3
    assert [r for r in sol.routes if r.depot == 2] == [Route(2, tuple(range(60, 90)))]


def test_a_sub_instance_keeps_the_vehicle_and_cost_conventions():
    instance = dataclasses.replace(random_instance(12, seed=1, num_depots=4),
                                   rounded_costs=True, name="whole")  # fmt: skip
    sub = sub_instance(instance, [2, 0], [5, 1, 9])
    assert (sub.vehicle_capacity, sub.vehicle_fixed_cost) == (70.0, 1.0)
    assert sub.rounded_costs and sub.name == "whole"
    assert sub_instance(instance, [2], [5], "part").name == "part"
    np.testing.assert_array_equal(sub.depot_locs, instance.depot_locs[[2, 0]])
    np.testing.assert_array_equal(sub.customer_locs, instance.customer_locs[[5, 1, 9]])
    full = instance.cost_matrix()
    nodes = [2, 0, 4 + 5, 4 + 1, 4 + 9]
    np.testing.assert_array_equal(sub.cost_matrix(), full[np.ix_(nodes, nodes)])


def test_a_sweep_cuts_the_customers_in_angle_order_at_the_vehicle_capacity():
    # Depot at the origin; customers at angles 0, 90, 180 and -90 degrees (indices 0-3) and
    # one more at 45 degrees (index 4); q = 10. Angle order from -pi: 3 (-90), 0 (0), 4 (45),
    # 1 (90), 2 (180). Demands 4, 5, 3, 6, 2: loads 6 + 4 = 10 (full), then 2 + 5 = 7 (+3 would
    # be 10: still fits), so the routes are (3, 0), (4, 1, 2).
    instance = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [50.0, 50.0]]),
        customer_locs=np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [0.0, -1.0], [1.0, 1.0]]),
        depot_capacity=np.full(2, 100.0),
        opening_cost=np.ones(2),
        demand=np.array([4.0, 5.0, 3.0, 6.0, 2.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    assert sweep_routes(instance, 0, [0, 1, 2, 3, 4]) == [Route(0, (3, 0)), Route(0, (4, 1, 2))]
    assert sweep_routes(instance, 0, [4, 2]) == [Route(0, (4, 2))]  # any order given
    assert sweep_routes(instance, 0, []) == []
    # seen from depot 1 at (50, 50): angles -134.42 (0), -136.17 (1), -136.67 (2), -134.43
    # (3), -135.00 (4) degrees, so the order is 2, 1, 4, 3, 0: loads 3 + 5 + 2, then 6 + 4
    assert sweep_routes(instance, 1, range(5)) == [Route(1, (2, 1, 4)), Route(1, (3, 0))]


def test_after_a_stop_request_no_part_is_routed_and_the_solution_is_still_complete(caplog):
    # Three groups of 30 customers (demand 1, q = 10); the stop comes during part 0's run:
    # parts 1 and 2 are not handed to the router. Without a warm start they get sweep
    # routes (3 routes of 10 at each depot); with one they keep its routes.
    clock = FakeClock()
    instance = line_instance([30, 30, 30], "three")
    assignment = np.repeat(np.arange(3), 30)

    class StopDuringFirst(FakeRouter):
        def __call__(self, *args, **kwargs):
            interrupt.request()
            return super().__call__(*args, **kwargs)

    caplog.set_level("INFO", logger="clrp_rl4co.solvers.decompose")
    router = StopDuringFirst(clock, ["one route", "single", "single"])
    try:
        sol = route_by_parts(instance, assignment, 30.0, router, part_customers=30,
                             clock=clock)  # fmt: skip
        assert len(router.calls) == 1
        by_depot = {d: [r for r in sol.routes if r.depot == d] for d in range(3)}
        assert by_depot[0] == [Route(0, tuple(range(30)))]  # part 0: the router's answer
        for d in (1, 2):  # customers of depot d sit left to right, at angles 84 to 45 deg
            assert by_depot[d] == [Route(d, tuple(range(30 * d + 29 - 10 * k, 30 * d + 19 - 10 * k,
                                                        -1))) for k in range(3)]  # fmt: skip
        assert [r.getMessage() for r in caplog.records] == [
            "three: stop requested; part 1 keeps its start routes",
            "three: stop requested; part 2 keeps its start routes",
        ]
        interrupt.clear()
        warm = CLRPSolution([Route(int(assignment[c]), (c,)) for c in range(90)])
        router = StopDuringFirst(clock, ["none", "single", "single"])
        kept = route_by_parts(instance, assignment, 30.0, router, initial=warm,
                              part_customers=30, clock=clock)  # fmt: skip
        assert len(router.calls) == 1
        assert sorted(kept.routes, key=lambda r: r.customers) == warm.routes
        # a stop before anything ran: no router call at all, and a valid solution
        router = FakeRouter(clock, ["single"] * 3)
        assert route_by_parts(instance, assignment, 30.0, router, part_customers=30,
                              clock=clock).cost(instance).total > 0  # fmt: skip
        assert router.calls == []
    finally:
        interrupt.clear()
