"""Exact MIP solver: proven optima equal brute-force enumeration; agreement with PyVRP."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from instances import random_instance

from clrp_rl4co.data import CLRPInstance, CLRPSolution, Route
from clrp_rl4co.solvers import solve, solve_exact, solve_pyvrp
from clrp_rl4co.solvers.common import make_result


def tight_instance(num_customers: int, seed: int) -> CLRPInstance:
    """Tiny instance with binding route and depot capacities (2 depots)."""
    rng = np.random.default_rng(1000 + seed)
    demand = rng.integers(10, 20, num_customers).astype(float)
    return CLRPInstance(
        depot_locs=rng.random((2, 2)),
        customer_locs=rng.random((num_customers, 2)),
        depot_capacity=np.array([0.6, 0.6]) * demand.sum() + 1,
        opening_cost=rng.uniform(0.2, 1.0, 2),
        demand=demand,
        vehicle_capacity=35.0,
        vehicle_fixed_cost=0.3,
        rounded_costs=bool(seed % 2),
    )


def _set_partitions(items: list[int]):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for k in range(len(part)):
            yield part[:k] + [[first] + part[k]] + part[k + 1 :]
        yield [[first]] + part


def brute_force(inst: CLRPInstance) -> float:
    """Optimum by enumeration: partitions into routes, best order per route, depot per route."""
    locs = inst.locs
    nd = inst.num_depots

    def arc(a: int, b: int) -> float:
        d = math.dist(locs[a], locs[b])
        return math.ceil(100 * d - 1e-9) if inst.rounded_costs else d

    def route_cost(depot: int, block: list[int]) -> float:
        best = math.inf
        for perm in itertools.permutations(block):
            nodes = [depot] + [nd + c for c in perm] + [depot]
            best = min(best, sum(arc(a, b) for a, b in zip(nodes[:-1], nodes[1:])))
        return best

    best = math.inf
    for part in _set_partitions(list(range(inst.num_customers))):
        loads = [inst.demand[b].sum() for b in part]
        if max(loads) > inst.vehicle_capacity + 1e-9:
            continue
        rc = [[route_cost(i, b) for i in range(nd)] for b in part]
        for assign in itertools.product(range(nd), repeat=len(part)):
            depot_load = np.zeros(nd)
            for k, i in enumerate(assign):
                depot_load[i] += loads[k]
            if (depot_load > inst.depot_capacity + 1e-9).any():
                continue
            cost = sum(rc[k][i] for k, i in enumerate(assign))
            cost += inst.vehicle_fixed_cost * len(part)
            cost += sum(inst.opening_cost[i] for i in set(assign))
            best = min(best, cost)
    return best


def test_hand_checked_two_depots():
    # One depot: 0->1->9->0 = 18 + F 1 + O 5 = 24. Both: 2 + 2 + 2 F + 10 = 16.
    inst = CLRPInstance(
        depot_locs=np.array([[0.0, 0.0], [10.0, 0.0]]),
        customer_locs=np.array([[1.0, 0.0], [9.0, 0.0]]),
        depot_capacity=np.array([10.0, 10.0]),
        opening_cost=np.array([5.0, 5.0]),
        demand=np.array([1.0, 1.0]),
        vehicle_capacity=10.0,
        vehicle_fixed_cost=1.0,
    )
    res = solve_exact(inst, max_runtime=20, warm_start=False)
    assert res.proven_optimal and res.status == "optimal"
    assert res.objective == pytest.approx(16.0)
    assert res.bound <= res.objective + 1e-6
    assert brute_force(inst) == pytest.approx(16.0)


@pytest.mark.parametrize("strategy", ["monolithic", "subsets"])
@pytest.mark.parametrize("num_customers,seed", [(3, 0), (4, 1), (5, 2), (5, 3)])
def test_exact_equals_brute_force(num_customers, seed, strategy):
    inst = tight_instance(num_customers, seed)
    res = solve_exact(inst, max_runtime=30, strategy=strategy, warm_start=seed % 2 == 0)
    assert res.proven_optimal, res.status
    res.solution.check(inst)
    assert res.objective == pytest.approx(brute_force(inst), rel=1e-9, abs=1e-9)
    assert res.objective == pytest.approx(res.solution.cost(inst).total)


@pytest.mark.parametrize("seed", [0, 3])
def test_clrp10_exact_vs_pyvrp(seed):
    inst = random_instance(10, seed)
    exact = solve_exact(inst, max_runtime=60, threads=2)
    heur = solve_pyvrp(inst, max_runtime=None, max_iterations=3000, seed=0)
    assert exact.proven_optimal
    exact.solution.check(inst)
    heur.solution.check(inst)
    assert exact.bound <= exact.objective + 1e-6
    assert exact.objective <= heur.objective + 1e-9
    assert heur.objective == pytest.approx(exact.objective, rel=1e-9)


def test_infeasible_instance_raises():
    # Total capacity suffices but no depot can take the customer of demand 50.
    args = dict(
        depot_locs=np.zeros((2, 2)),
        customer_locs=np.ones((2, 2)),
        depot_capacity=np.array([40.0, 40.0]),
        opening_cost=np.ones(2),
        demand=np.array([50.0, 10.0]),
        vehicle_capacity=70.0,
        vehicle_fixed_cost=1.0,
    )
    with pytest.raises(ValueError, match="exceeds every depot_capacity"):
        CLRPInstance(**args)
    inst = CLRPInstance(**{**args, "demand": np.array([30.0, 10.0])})
    inst.demand[0] = 50.0  # changed in place after construction: the solver checks again
    with pytest.raises(ValueError, match="exceeds every depot_capacity"):
        solve([inst], solver="exact")
    with pytest.raises(ValueError):
        CLRPInstance(
            depot_locs=np.zeros((1, 2)),
            customer_locs=np.ones((2, 2)),
            depot_capacity=np.array([15.0]),
            opening_cost=np.ones(1),
            demand=np.array([10.0, 10.0]),
            vehicle_capacity=70.0,
            vehicle_fixed_cost=1.0,
        )


def test_exact_needs_a_time_limit():
    with pytest.raises(ValueError, match="time limit"):
        solve([random_instance(10, 0)], solver="exact", max_runtime=None)


def test_no_solution_is_not_a_cost():
    inst = random_instance(10, 0)
    res = make_result(inst, None, solver="exact", runtime=0.0, bound=5.0)
    assert res.status == "no solution" and res.objective is None and not res.proven_optimal
    tiny = solve_exact(inst, max_runtime=0.001, warm_start=False)
    assert (tiny.solution is None) == (tiny.objective is None)
    if tiny.solution is None:
        assert tiny.status == "no solution"
    assert not tiny.proven_optimal or tiny.objective == pytest.approx(tiny.bound)


def test_make_result_raises_on_an_invalid_solution():
    inst = random_instance(10, 0)
    unserved = CLRPSolution([Route(0, (c,)) for c in range(9)])  # customer 9 missing
    with pytest.raises(ValueError, match="'clrp10_0'.*'exact'.*customer 9 is not served"):
        make_result(inst, unserved, solver="exact", runtime=0.0)
    with pytest.raises(ValueError, match="'clrp10_0'.*bound -inf"):
        make_result(inst, None, solver="exact", runtime=0.0, bound=-math.inf)


def test_bound_is_none_or_finite_at_a_tiny_time_limit():
    # HiGHS stopped by its time limit before the root LP reports a dual bound of -inf.
    res = solve_exact(random_instance(10, 0), max_runtime=0.001, warm_start=False)
    assert res.bound is None or math.isfinite(res.bound)


def _status_case(monkeypatch, sol, bound, proven):
    import clrp_rl4co.solvers.exact as exact

    monkeypatch.setattr(exact, "_monolithic", lambda *args: (sol, bound, proven))
    return exact.solve_exact(tight_instance(4, 0), max_runtime=5, warm_start=False)


def test_status_follows_highs_and_the_gap(monkeypatch):
    inst = tight_instance(4, 0)
    sol = solve_pyvrp(inst, max_runtime=None, max_iterations=200).solution
    cost = sol.cost(inst).total
    # HiGHS proved optimality and the bound equals the solution's own cost: optimal.
    res = _status_case(monkeypatch, sol, cost * (1 - 1e-9), True)
    assert res.proven_optimal and res.status == "optimal" and res.objective == cost
    # A gap left open (bound 1% below), or HiGHS not reporting Optimal: only feasible.
    for bound, proven in ((0.99 * cost, True), (cost, False)):
        res = _status_case(monkeypatch, sol, bound, proven)
        assert not res.proven_optimal and res.status == "feasible", (bound, proven)
        assert res.bound == bound and res.objective == cost
    # Stopped before any bound or solution: no bound, no solution.
    for bound in (-math.inf, math.inf, None):
        res = _status_case(monkeypatch, None, bound, False)
        assert res.bound is None and res.status == "no solution" and res.objective is None


def test_invalid_warm_start_raises():
    inst = tight_instance(4, 1)
    bad = CLRPSolution([Route(0, (0, 1))])  # customers 2 and 3 missing
    with pytest.raises(ValueError, match="warm-start solution is invalid.*not served"):
        solve_exact(inst, max_runtime=5, warm_start=bad)
