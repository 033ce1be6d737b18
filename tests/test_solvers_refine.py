"""Refinement: valid, never worse than its input; zero iterations is the identity."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from instances import random_instance

from clrp_rl4co.data import (
    CLRPInstance,
    CLRPSolution,
    Route,
    instances_to_tensordict,
    tensordict_to_instances,
)
from clrp_rl4co.solvers import local_search_td, refine_solution


def naive_solution(inst: CLRPInstance, seed: int) -> CLRPSolution:
    """A valid but poor solution: customers in random order, next-fit into routes and depots."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(inst.num_customers)
    depots = rng.permutation(inst.num_depots)
    routes, current, load, k, depot_load = [], [], 0.0, 0, 0.0
    for c in order:
        d = float(inst.demand[c])
        while depot_load + d > inst.depot_capacity[depots[k]]:
            if current:
                routes.append(Route(int(depots[k]), tuple(current)))
            current, load, depot_load, k = [], 0.0, 0.0, k + 1
        if load + d > inst.vehicle_capacity:
            routes.append(Route(int(depots[k]), tuple(current)))
            current, load = [], 0.0
        current.append(int(c))
        load += d
        depot_load += d
    routes.append(Route(int(depots[k]), tuple(current)))
    return CLRPSolution(routes)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_customers=st.integers(2, 12),
    num_depots=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    mode=st.sampled_from(["full", "routes"]),
    rounded=st.booleans(),
)
def test_refine_never_worse(num_customers, num_depots, seed, mode, rounded):
    rng = np.random.default_rng(seed)
    demand = rng.integers(10, 20, num_customers).astype(float)
    inst = CLRPInstance(
        depot_locs=rng.random((num_depots, 2)) * (50 if rounded else 1),
        customer_locs=rng.random((num_customers, 2)) * (50 if rounded else 1),
        depot_capacity=np.maximum(rng.uniform(0.4, 1.2, num_depots) * demand.sum(), 20.0)
        + demand.sum() / num_depots,
        opening_cost=rng.uniform(1, 5, num_depots),
        demand=demand,
        vehicle_capacity=float(rng.choice([20.0, 40.0, 70.0])),
        vehicle_fixed_cost=1.0,
        rounded_costs=rounded,
    )
    start = naive_solution(inst, seed)
    start.check(inst)
    out = refine_solution(inst, start, seconds=None, mode=mode, seed=seed, max_iterations=60)
    out.check(inst)
    assert out.cost(inst).total <= start.cost(inst).total + 1e-9
    if mode == "routes":
        assert set(out.open_depots) <= set(start.open_depots)


def test_zero_iterations_returns_input():
    inst = random_instance(10, 4)
    start = naive_solution(inst, 4)
    assert refine_solution(inst, start, max_iterations=0) is start
    assert refine_solution(inst, start, max_iterations=0, mode="routes") is start


def test_refine_improves_poor_solution_and_keeps_optimum():
    inst = random_instance(10, 0)
    start = naive_solution(inst, 0)
    full = refine_solution(inst, start, seconds=None, max_iterations=2000, mode="full")
    routes = refine_solution(inst, start, seconds=None, max_iterations=2000, mode="routes")
    assert full.cost(inst).total < start.cost(inst).total
    assert routes.cost(inst).total < start.cost(inst).total
    assert set(routes.open_depots) <= set(start.open_depots)
    again = refine_solution(inst, full, seconds=None, max_iterations=500)
    assert again.cost(inst).total <= full.cost(inst).total


def test_local_search_td_never_worse_and_padded():
    td = instances_to_tensordict([random_instance(10, s) for s in range(3)])
    insts = tensordict_to_instances(td)
    sols = [naive_solution(inst, s) for s, inst in enumerate(insts)]
    seqs = [s.to_actions(5) for s in sols]
    length = max(map(len, seqs))
    actions = torch.tensor([s + [s[-1]] * (length - len(s)) for s in seqs])
    out = local_search_td(td, actions, seconds=None, max_iterations=300, mode="routes")
    assert out.dtype == torch.long and out.shape[0] == 3
    for b, inst in enumerate(insts):
        sol = CLRPSolution.from_actions(out[b].tolist(), 5)
        sol.check(inst)
        assert sol.cost(inst).total <= sols[b].cost(inst).total + 1e-9
        assert out[b, -1].item() < 5
    same = local_search_td(td, actions, seconds=None, max_iterations=0)
    assert torch.equal(same, actions)


def test_bad_mode_raises():
    inst = random_instance(10, 1)
    with pytest.raises(ValueError, match="mode"):
        refine_solution(inst, naive_solution(inst, 1), mode="depots")


def test_refine_vs_pyvrp_benchmark_smoke():
    """benchmarks/refine_vs_pyvrp.py runs both methods on the same instances and pairs them."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "refine_vs_pyvrp.py"
    spec = importlib.util.spec_from_file_location("refine_vs_pyvrp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary = module.main(["--preset", "clrp10", "--num", "2", "--seconds", "0.2"])
    assert summary["lower"] + summary["equal"] + summary["higher"] == 2
    assert summary["refine"] - summary["pyvrp"] == pytest.approx(summary["diff"][0])


def _refine_module():
    import importlib

    return importlib.import_module("clrp_rl4co.solvers.refine")


def test_invalid_start_is_refined_into_a_valid_solution():
    # Capacity broken (one route of about 150 > q = 70): PyVRP repairs it; any valid result wins.
    inst = random_instance(10, 2)
    depot = int(np.argmax(inst.depot_capacity))
    assert inst.depot_capacity[depot] >= inst.total_demand()  # "routes" mode can repair it
    start = CLRPSolution([Route(depot, tuple(range(10)))])
    with pytest.raises(ValueError, match="vehicle capacity"):
        start.check(inst)
    for mode in ("full", "routes"):
        out = refine_solution(inst, start, seconds=None, max_iterations=300, mode=mode)
        out.check(inst)


@pytest.mark.parametrize(
    "routes,problem",
    [
        ([Route(0, (0, 1, 10))], "customer 10 is not in 0..9"),
        ([Route(0, (0, 1)), Route(1, (2, 1))], "customer 1 is served more than once"),
        ([Route(0, (0, 1)), Route(1, ())], "empty route at depot 1"),
        ([Route(5, (0, 1))], "depot 5 is not in 0..4"),
    ],
)
@pytest.mark.parametrize("mode", ["full", "routes"])
def test_unencodable_start_raises(routes, problem, mode):
    inst = random_instance(10, 3)
    with pytest.raises(ValueError, match=f"'clrp10_3'.*{problem}"):
        refine_solution(inst, CLRPSolution(routes), seconds=None, max_iterations=50, mode=mode)


def test_no_solution_found_returns_the_input(monkeypatch):
    # The documented outcome when PyVRP finds no feasible solution within the budget.
    inst = random_instance(10, 4)
    start = naive_solution(inst, 4)
    monkeypatch.setattr(_refine_module(), "run_pyvrp", lambda *args, **kw: None)
    assert refine_solution(inst, start, seconds=None, max_iterations=50, mode="routes") is start


def test_invalid_pyvrp_result_raises(monkeypatch):
    # A decoded solution that loses a customer is an encoding bug: it raises, naming the instance.
    inst = random_instance(10, 5)
    start = naive_solution(inst, 5)
    lossy = CLRPSolution([Route(r.depot, r.customers) for r in start.routes[1:]])
    monkeypatch.setattr(_refine_module(), "run_pyvrp", lambda *args, **kw: lossy)
    with pytest.raises(
        ValueError,
        match="^instance 'clrp10_5': PyVRP's refinement returned an invalid solution: .*not served",
    ):
        refine_solution(inst, start, seconds=None, max_iterations=50, mode="routes")


@pytest.mark.parametrize("error", [IndexError, ValueError])
def test_errors_inside_the_search_propagate(monkeypatch, error):
    inst = random_instance(10, 6)
    start = naive_solution(inst, 6)

    def broken(*args, **kw):
        raise error("bug inside the search")

    monkeypatch.setattr(_refine_module(), "depot_set_search", broken)
    with pytest.raises(error, match="bug inside the search"):
        refine_solution(inst, start, seconds=None, max_iterations=50, mode="full")


class _Spy:
    """Stands in for ``run_pyvrp`` / ``depot_set_search``: records each call, returns ``result``."""

    def __init__(self, result=None):
        self.result, self.calls = result, []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.result


class _Priced:
    """A stand-in PyVRP result whose total cost is given."""

    def __init__(self, total: float):
        self.total = total

    def cost(self, instance):
        return self


def _spied(monkeypatch, name, result=None):
    spy = _Spy(result)
    monkeypatch.setattr(_refine_module(), name, spy)
    return spy


def test_documented_defaults(monkeypatch):
    # seconds 1 s, seed 0, mode "full" (here with one depot: one PyVRP run)
    inst = random_instance(10, 12, num_depots=1)
    start = naive_solution(inst, 12)
    run = _spied(monkeypatch, "run_pyvrp")
    _refine_module().refine_solution(inst, start)
    [(args, _)] = run.calls
    assert args[1:4] == (1.0, None, 0)


def test_each_mode_calls_pyvrp_with_budget_seed_and_warm_start(monkeypatch):
    inst = random_instance(10, 7)  # 5 depots
    start = naive_solution(inst, 7)
    # full mode, several depots: the depot-set search warm-started from the (valid) input
    search = _spied(monkeypatch, "depot_set_search")
    assert refine_solution(inst, start, seconds=0.5, max_iterations=40, seed=3) is start
    [(args, kwargs)] = search.calls
    assert args[0] is inst and args[1:] == (0.5, 40, 3) and list(kwargs) == ["initial"]
    assert kwargs["initial"] is start
    # routes mode: one PyVRP run on the open depots, warm-started from the input
    run = _spied(monkeypatch, "run_pyvrp")
    assert (
        refine_solution(inst, start, seconds=0.25, max_iterations=7, seed=5, mode="routes") is start
    )
    [(args, kwargs)] = run.calls
    assert args[0].depots == sorted(start.open_depots) and args[1:] == (0.25, 7, 5)
    assert list(kwargs) == ["initial"] and kwargs["initial"] is start
    # an invalid input (capacity broken) is not a warm start for the search
    broken = CLRPSolution([Route(0, tuple(range(10)))])
    refine_solution(inst, broken, seconds=None, max_iterations=9, seed=1)
    assert search.calls[-1][0][1:] == (None, 9, 1) and search.calls[-1][1]["initial"] is None


@pytest.mark.parametrize("num_depots,searched", [(1, False), (2, True)])
def test_full_mode_searches_depot_sets_only_with_several_depots(monkeypatch, num_depots, searched):
    inst = random_instance(10, 8, num_depots=num_depots)
    start = naive_solution(inst, 8)
    better = refine_solution(inst, start, seconds=None, max_iterations=300, mode="routes")
    assert better.cost(inst).total < start.cost(inst).total  # guard: a real gain to return
    search = _spied(monkeypatch, "depot_set_search", better)
    run = _spied(monkeypatch, "run_pyvrp", better)
    assert refine_solution(inst, start, seconds=0.5, max_iterations=11, seed=2) is better
    assert (len(search.calls), len(run.calls)) == ((1, 0) if searched else (0, 1))
    if not searched:
        [(args, kwargs)] = run.calls
        assert args[0].depots == [0] and args[1:4] == (0.5, 11, 2) and args[4] is start
        assert kwargs == {}


@pytest.mark.parametrize(
    "seconds,max_iterations,runs",
    [(0, None, False), (-1.0, None, False), (0.3, None, True), (None, 1, True), (0, 5, True)],
)
def test_budget_that_skips_pyvrp(monkeypatch, seconds, max_iterations, runs):
    inst = random_instance(10, 9)
    start = naive_solution(inst, 9)
    run = _spied(monkeypatch, "run_pyvrp")
    out = refine_solution(
        inst, start, seconds=seconds, max_iterations=max_iterations, mode="routes"
    )
    assert out is start and len(run.calls) == int(runs)
    if runs:
        assert run.calls[0][0][1:3] == (seconds, max_iterations)


def test_only_a_gain_beyond_the_tolerance_replaces_the_input(monkeypatch):
    # the result replaces a valid input only when cheaper by more than 1e-9 * max(1, |cost|)
    monkeypatch.setattr(_refine_module(), "check_solution", lambda *args: None)
    for scale, seed in ((1.0, 10), (1e-3, 11)):  # totals about 20 and below 1
        inst = random_instance(10, seed)
        inst = CLRPInstance(
            depot_locs=inst.depot_locs * scale,
            customer_locs=inst.customer_locs * scale,
            depot_capacity=inst.depot_capacity,
            opening_cost=inst.opening_cost * scale,
            demand=inst.demand,
            vehicle_capacity=inst.vehicle_capacity,
            vehicle_fixed_cost=inst.vehicle_fixed_cost * scale,
        )
        start = naive_solution(inst, seed)
        base = start.cost(inst).total
        assert (base > 2.0) if scale == 1.0 else (base < 1.0)
        tolerance = 1e-9 * max(1.0, abs(base))
        gains = (
            (0.0, False),
            (0.5 * tolerance, False),
            (tolerance, False),
            (1.5 * tolerance, True),
        )
        for gain, replaced in gains:
            found = _Priced(base - gain)
            _spied(monkeypatch, "run_pyvrp", found)
            out = refine_solution(inst, start, seconds=None, max_iterations=5, mode="routes")
            assert out is (found if replaced else start), (scale, gain)
