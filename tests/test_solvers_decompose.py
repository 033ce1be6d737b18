"""Routing large instances by parts (clrp_rl4co/solvers/decompose.py) and the depot-set search's
large-instance path."""

from __future__ import annotations

import numpy as np
import pytest
from instances import random_instance

import clrp_rl4co.solvers.pyvrp_solver as pyvrp_solver
from clrp_rl4co.data import CLRPInstance, CLRPSolution
from clrp_rl4co.data.solution import Route, route_length
from clrp_rl4co.solvers import solve_pyvrp
from clrp_rl4co.solvers.decompose import depot_groups, route_by_parts, sub_instance
from clrp_rl4co.solvers.pyvrp_solver import SetEstimate, route_on_set


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
    real = pyvrp_solver.route_by_parts
    monkeypatch.setattr(pyvrp_solver, "route_by_parts",
                        lambda *a, **k: calls.append(a) or real(*a, **k))  # fmt: skip
    res = solve_pyvrp(instance, seconds=None, max_iterations=200)
    assert calls and res.solution is not None
    res.solution.check(instance)
    assert len(res.solution.open_depots) >= 4  # every cluster has its own depot
    again = solve_pyvrp(instance, seconds=None, max_iterations=200)
    assert again.objective == res.objective


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
